/* The walker of the program language (doc/program.md), split by what each
 * part does (front.h says what a walk is):
 *  - walk.c: programs, walks, their inputs and outputs, frames, errors;
 *  - walk_value.c: reading walker values (truth, ints) and turning them
 *    into operator arguments, and graph values into walker values;
 *  - walk_ops.c: calling aten operators, and resolving a Python-level
 *    operator (x.add(y), torch.zeros) to the overload whose schema takes
 *    its arguments (the Python spellings: the operator table's PY column);
 *  - walk_index.c: subscripts; walk_arith.c: arithmetic and comparisons;
 *  - walk_attr.c: attributes and methods of tensors;
 *  - walk_call.c: calls of functions, builtins and methods; walk_cond.c:
 *    torch.cond;
 *  - walk_expr.c: expressions; walk_stmt.c: statements;
 *  - walk_print.c: printing values as Python prints them.
 * Two modes share every line: a trace records through the caller's tracer;
 * an eager walk asks exec's eager executor (exec/exec.h, sg__xeager) to
 * record and run each call. Python values are walker values (wv); a tensor
 * is an object (wobj) whose current graph value changes when an in-place
 * operator writes it, so that Python's identity (`y = x.add_(1)` is x)
 * holds. Memory of a walk comes from its arena (wmem), freed with it. */
#ifndef SG_FRONT_WALK_PRIVATE_H
#define SG_FRONT_WALK_PRIVATE_H

#include <stddef.h>
#include <string.h>

#include "exec/exec.h"
#include "expr/expr_private.h"
#include "front/front_private.h"
#include "graph/ops.h"
#include "shapeguard/front.h"
#include "shapeguard/hop.h"
#include "shapeguard/print.h"

/* ---- values ---- */

typedef enum wkind {
    W_NONE,
    W_BOOL,    /* e: a boolean expression */
    W_INT,     /* e: an integer expression */
    W_FLOAT,   /* f (known), or v: a float value of the graph whose value is not tracked */
    W_TENSOR,  /* t */
    W_TUPLE,   /* seq */
    W_LIST,    /* seq */
    W_FUNC,    /* fn: a def of the program and the frame it closes over */
    W_BUILTIN, /* name: "torch.zeros", "torch.no_grad", "torch" (the module) */
    W_METHOD,  /* method: a tensor and a method name */
    W_DTYPE,   /* dtype */
    W_GRADMODE,/* b: a torch.no_grad() (0) or torch.enable_grad() (1) context */
    W_SLICE,   /* seq: start, stop, step (W_NONE where absent) */
    W_ELLIPSIS,
    W_CLASS,   /* fn: a custom autograd Function (a class of the program) and the frame it was made in */
    W_APPLY,   /* fn: its apply */
    W_CTX,     /* ctx.c: a custom Function's ctx */
    W_CTXFN    /* ctx: a method of a ctx (ctx.c, ctx.name: save_for_backward) */
} wkind;

/* The ctx a custom Function's forward and backward take (walk_function.c). */
typedef struct wctx {
    struct frame *attrs; /* ctx.NAME = ... */
    struct wv *saved;    /* save_for_backward's tensors (wobj: read at the forward's end), or NULL */
    uint32_t nsaved;
    struct wv *needs;    /* needs_input_grad: a bool per argument of apply */
    uint32_t nneeds;
    bool backward;       /* the backward is under way: saved_tensors reads what the forward saved */
} wctx;

typedef struct wobj {
    sg_value v; /* the tensor's graph value now */
} wobj;

typedef struct frame frame;
typedef struct gcst gcst;
#define MAX_CALL_DEPTH 200
typedef struct wv wv;
struct wv {
    uint8_t kind;
    bool known; /* W_FLOAT: f holds the value */
    union {
        const sg_expr *e;
        double f;
        wobj *t;
        struct {
            uint32_t n;
            wv *items;
        } seq;
        struct {
            const sg__py *def;
            frame *env;
        } fn;
        const char *name;
        struct {
            wobj *self;
            const char *name;
        } method;
        sg_dtype dtype;
        bool b;
        struct {
            wctx *c;
            const char *name;
        } ctx;
    } u;
    sg_value fv; /* W_FLOAT not known: its graph value */
};

struct frame {
    frame *up;
    uint32_t gc; /* the last collection that marked it (walk_gc.c) */
    size_t n, cap;
    const char **names;
    wv *vals;
};


typedef struct block {
    struct block *next;
    size_t used, size;
    max_align_t data[];
} block;

struct sg_program {
    sg_ctx *ctx;
    sg__ast *ast;
    const sg__py *entry;    /* the last top-level def */
    const sg__py **conds;   /* the torch.cond calls, in the order of the text (their numbers) */
    size_t nconds, capconds;
};

struct sg_walk {
    sg_ctx *ctx;
    const sg_program *prog;
    sg_tracer *t;
    sg__graph *g;        /* t's graph: read, never written (exec's eager executor runs calls) */
    bool eager;
    sg__xeager *ex;      /* eager: the executor (its environment, tracer and run) */
    block *blocks;
    frame *globals;
    frame *entry_frame;  /* the entry function's frame (for shape VALUE) */
    frame *params;       /* the inputs, by parameter name */
    wv result;
    bool ran;
    bool grad;           /* grad mode */
    unsigned depth;
    unsigned nest;       /* the walker's recursion now: expressions nested in others, blocks (sg__w_nest) */
    unsigned line;       /* the line under way */
    /* while a cond branch is traced: each object an in-place call moved and
       its value before, restored after the branch (as Dynamo restores its
       state between branches: the other branch, and what follows the cond,
       see the object as it was; the cond node carries the write) */
    struct wjournal {
        wobj *o;
        sg_value v;
    } *journal;
    size_t njournal, capjournal;
    unsigned branches;   /* cond branches being traced, nested */
    size_t conds_again;  /* torch.cond calls traced again (a helper called twice): numbered after the text's */
    /* tensor subclasses (kind two, PyTorch's TwoTensor): a TwoTensor is an
       object whose value v is its inner tensor a; twin maps 1 + a's value to
       1 + b's. Every operator call with a TwoTensor argument runs twice, on
       the a then on the b inner tensors, and its tensor results are
       TwoTensors again (walk_ops.c). subclass: some input is one. */
    sg__idmap twin;
    bool subclass;
    uint32_t *twoouts;   /* sg_walk_finish: the outputs that begin a TwoTensor's inner tensors */
    size_t ntwoouts, captwoouts;
    /* eager: what the walker refers to, for freeing dead values (walk_gc.c) */
    uint32_t stmt_mark;  /* the graph's values when the statement under way began */
    uint32_t gc_epoch;   /* collections so far */
    gcst *gcs;           /* a collection's work lists, kept for the next */
    struct {
        frame *f;        /* a function's frame under way */
        uint32_t lo, hi; /* the values its caller's statement made before the call: in flight */
    } calls[MAX_CALL_DEPTH + 1];
    const sg__pyop *pyops[64]; /* what pyop_find found, by a hash of the name */
    unsigned functions;  /* custom Function backwards traced (their scopes' numbers) */
};


/* The walker recurses on what the text nests: an expression inside
 * another (parentheses, arguments, operands; not the links of a chain such
 * as a + b + c or x.neg().neg(), which are evaluated in a loop), a block
 * inside a statement, a call's body inside the call. The parser bounds
 * each by SG_PY_MAX_DEPTH, but a program's calls nest them further: the
 * walker counts every level and refuses (SG_ELIMIT) more than MAX_NEST,
 * which keeps its C stack within a few megabytes, also under
 * AddressSanitizer. */
#define MAX_NEST 2000


/* ---- memory (walk.c) ---- */

/* wmem's slow path: a new block of the arena, its first n bytes given
 * zeroed (NULL when memory runs out, the context's error then SG_ENOMEM). */
void *sg__w_mem_slow(sg_walk *W, size_t n);

/* n zeroed bytes from the walk's arena, or NULL when memory runs out. */
static inline void *wmem(sg_walk *W, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!W->blocks || W->blocks->size - W->blocks->used < n)
        return sg__w_mem_slow(W, n);
    void *p = (char *)W->blocks->data + W->blocks->used;
    W->blocks->used += n;
    return memset(p, 0, n);
}

/* ---- errors (walk.c) ---- */

/* An error of kind st at node at (NULL: the line under way), the message
 * formatted from fmt: "line L, column C: MESSAGE". Returns st. */
sg_status sg__w_err(sg_walk *W, const sg__py *at, sg_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* The context's message of status st, prefixed with the line. */
sg_status sg__w_fail(sg_walk *W, const sg__py *at, sg_status st);

/* One more level of recursion at node at (sg__w_nest_leave undoes it):
 * SG_ELIMIT past MAX_NEST. */
static inline sg_status sg__w_nest(sg_walk *W, const sg__py *at)
{
    if (W->nest >= MAX_NEST)
        return sg__w_err(W, at, SG_ELIMIT,
                         "expressions, blocks and calls nest more than %d deep (counting through calls)",
                         MAX_NEST);
    W->nest++;
    return SG_OK;
}

static inline void sg__w_nest_leave(sg_walk *W)
{
    W->nest--;
}

/* ---- frames (walk.c) ---- */

frame *sg__w_frame_new(sg_walk *W, frame *up);
sg_status sg__w_frame_set(sg_walk *W, frame *f, const char *name, wv v);

static inline wv *frame_find(frame *f, const char *name)
{
    for (size_t i = f->n; i-- > 0;) /* the first letters compared first: most names differ there */
        if (f->names[i][0] == name[0] && !strcmp(f->names[i], name))
            return &f->vals[i];
    return NULL;
}

/* The environment of the walk's sizes (the tracer's, or the eager one's). */
sg_env *sg__w_env(const sg_walk *W);
/* The tracer's operator registry. */
const sg__opreg *sg__w_reg(sg_walk *W);

/* ---- values (walk_value.c) ---- */

static inline bool is_number(const wv *v)
{
    return v->kind == W_INT || v->kind == W_FLOAT || v->kind == W_BOOL;
}

/* Python's name of v's type ("int", "Tensor"). */
const char *sg__w_kind_name(const wv *v);
/* The truth of a boolean expression: a constant, or asked of the
 * environment (a guard in a trace; data-dependent if it needs an unbacked
 * value). */
sg_status sg__w_truth_of(sg_walk *W, const sg__py *at, const sg_expr *e, bool *out);
/* Python's bool(v). */
sg_status sg__w_truthy(sg_walk *W, const sg__py *at, const wv *v, bool *out);
/* v as an int expression (a constant bool as 0/1): SG_ETYPE otherwise,
 * naming what. */
sg_status sg__w_want_int(sg_walk *W, const sg__py *at, const wv *v, const sg_expr **out, const char *what);
/* A constant int (SG_EUNSUPPORTED for a symbolic one). */
sg_status sg__w_want_const(sg_walk *W, const sg__py *at, const wv *v, int64_t *out, const char *what);
/* A walker value for graph value v (a new tensor object for a tensor). */
sg_status sg__w_to_wv(sg_walk *W, sg_value v, wv *out);

/* The arguments of an aten call being built. */
typedef struct argv {
    sg_arg a[SG_SCHEMA_ARGS + 4];
    size_t n;
    const sg_expr *ints[SG_SCHEMA_ARGS + 4][SG_MAX_DIMS];
    sg_value vals[SG_SCHEMA_ARGS + 4][SG_MAX_DIMS];
} argv;

/* Append v as an argument of an aten call (name NULL: positional). */
sg_status sg__w_arg_of(sg_walk *W, const sg__py *at, argv *A, const wv *v, const char *name);

/* ---- tensor subclasses (walk_ops.c) ---- */

/* The inner tensor b of the TwoTensor whose inner a is value v, or
 * SG_NOVAL (v a plain tensor, or no tensor). */
static inline sg_value sg__w_twin(const sg_walk *W, sg_value v)
{
    if (!W->subclass)
        return SG_NOVAL;
    size_t *p = sg__idmap_find(&W->twin, v + 1);
    return p ? (sg_value)(*p - 1) : SG_NOVAL;
}

/* Make value a (a tensor) the inner a of a TwoTensor whose inner b is
 * value b. Errors: SG_ENOMEM. */
sg_status sg__w_set_twin(sg_walk *W, sg_value a, sg_value b);

/* ---- operators (walk_ops.c) ---- */

/* How a Python name maps to aten overloads: the first whose schema takes
 * the arguments (PyTorch's Python argument parser, for our operators). The
 * spellings are the PY column of the operator table (graph/ops.def),
 * indexed by the registry. */
typedef sg__pyop pyop;

/* The Python spelling name, or NULL. */
const pyop *pyop_find(sg_walk *W, const char *name);

/* Call aten operator op (sch: its schema, found by the caller; NULL: found
 * by name); *out is its result. An in-place operator gives back its self
 * object (now at the new value), out= its out object. flags: the node's
 * (SG_NODE_*). */
sg_status sg__w_op_call_schema(sg_walk *W, const sg__py *at, const char *op, const sg__schema *sch,
                               const sg_arg *args, size_t n, wobj *writes, wv *out, uint8_t flags);
/* The same by name, with flags; and without. */
sg_status sg__w_op_call_flags(sg_walk *W, const sg__py *at, const char *op, const sg_arg *args, size_t n,
                              wobj *writes, wv *out, uint8_t flags);
sg_status sg__w_op_call(sg_walk *W, const sg__py *at, const char *op, const sg_arg *args, size_t n, wobj *writes,
                        wv *out);
/* Call the Python-level operator p with self (NULL for torch.X) and
 * arguments. */
sg_status sg__w_call_pyop(sg_walk *W, const sg__py *at, const pyop *p, wv *pos, size_t npos, const char **kwn,
                          wv *kwv, size_t nkw, wv *out);

/* ---- subscripts (walk_index.c) ---- */

sg_status sg__w_index_tensor(sg_walk *W, const sg__py *at, wobj *t, const wv *idx, wv *out);
sg_status sg__w_index_seq(sg_walk *W, const sg__py *at, const wv *seq, const wv *idx, wv *out);

/* ---- arithmetic (walk_arith.c) ---- */

/* a OP b on numbers (ints symbolic, floats known or not). */
sg_status sg__w_number_binop(sg_walk *W, const sg__py *at, int op, const wv *a, const wv *b, wv *out);
/* a OP b where one side is a tensor: the aten operator Python's dunder
 * method calls. */
sg_status sg__w_tensor_binop(sg_walk *W, const sg__py *at, int op, wv *a, wv *b, wv *out);
/* a OP b for a comparison operator op. */
sg_status sg__w_compare(sg_walk *W, const sg__py *at, uint8_t op, wv *a, wv *b, wv *out);
/* In a subgraph, lift v now; elsewhere nothing. */
sg_status sg__w_prelift(sg_walk *W, const sg__py *at, const wv *v);

/* ---- attributes (walk_attr.c) ---- */

/* t.data: a detach with a version counter of its own. */
sg_status sg__w_data_of(sg_walk *W, const sg__py *at, wobj *t, wv *out);
/* A method call on a tensor that is not an aten operator of its own
 * (*handled false: it is one). */
sg_status sg__w_tensor_method(sg_walk *W, const sg__py *at, wobj *t, const char *name, wv *args, size_t n,
                              const char **kwn, wv *kwv, size_t nkw, wv *out, bool *handled);
/* obj.name. */
sg_status sg__w_getattr(sg_walk *W, const sg__py *at, const wv *obj, const char *name, wv *out);

/* ---- calls (walk_call.c, walk_cond.c) ---- */

/* Call function fn of the program; *frame_out (if not NULL): its frame. */
sg_status sg__w_call_func(sg_walk *W, const sg__py *at, const wv *fn, wv *args, size_t npos, const char **kwn,
                          wv *kwv, size_t nkw, wv *out, frame **frame_out);
/* The same for a @staticmethod of a custom Function (its decorator read by
 * the caller). */
sg_status sg__w_call_static(sg_walk *W, const sg__py *at, const wv *fn, wv *args, size_t npos, wv *out);
/* Call fn, whatever it is. */
sg_status sg__w_call_value(sg_walk *W, const sg__py *at, const wv *fn, wv *args, size_t npos, const char **kwn,
                           wv *kwv, size_t nkw, wv *out);
/* torch.cond(pred, true_fn, false_fn, operands). */
sg_status sg__w_torch_cond(sg_walk *W, const sg__py *at, wv *args, size_t n, const char **kwn, wv *kwv, size_t nkw,
                           wv *out);

/* ---- custom autograd Functions (walk_function.c) ---- */

/* `class NAME(torch.autograd.Function):` run: the class (base: the value
 * of its base expression). */
sg_status sg__w_function_class(sg_walk *W, frame *f, const sg__py *st, const wv *base);
/* cls.apply(args): the forward under no_grad, then (where an input
 * requires grad) the backward traced into a subgraph and a custom Function
 * node (graph.h SG_N_FUNCTION). */
sg_status sg__w_function_apply(sg_walk *W, const sg__py *at, const wv *cls, wv *args, size_t n, const char **kwn,
                               wv *kwv, size_t nkw, wv *out);
/* ctx.name (a ctx's attribute or method). */
sg_status sg__w_ctx_getattr(sg_walk *W, const sg__py *at, wctx *c, const char *name, wv *out);
/* ctx.name = v. */
sg_status sg__w_ctx_setattr(sg_walk *W, const sg__py *at, wctx *c, const char *name, const wv *v);
/* ctx.name(args): save_for_backward. */
sg_status sg__w_ctx_call(sg_walk *W, const sg__py *at, const wv *m, wv *args, size_t n, size_t nkw, wv *out);

/* ---- expressions and statements (walk_expr.c, walk_stmt.c) ---- */

sg_status sg__w_eval(sg_walk *W, frame *f, const sg__py *e, wv *out);
/* Run the statements of block; *returned and *ret: a return ran. */
sg_status sg__w_run_block(sg_walk *W, frame *f, const sg__py *block, bool *returned, wv *ret);

/* ---- freeing dead values (walk_gc.c) ---- */

/* A statement begins (eager walks only): when exec's executor says a
 * collection is due, mark every value the walk refers to (the frames of
 * the calls under way, the closures and sequences reachable from them,
 * the inputs, the result, and the values each caller's statement made
 * before its call, which its expression may still hold) and let the
 * executor release the others. Then the statement's start is noted.
 * Errors: SG_ENOMEM. */
sg_status sg__w_gc_point(sg_walk *W);
/* Free what collections kept (sg_walk_free). */
void sg__w_gc_free(sg_walk *W);

/* ---- printing (walk_print.c) ---- */

/* Append v as Python prints it (tensors as tolist()), with the concrete
 * values of run x (NULL: none). Errors: SG_ENOMEM, SG_EINTERNAL (a tensor
 * without a concrete value). */
sg_status sg__w_print(sg_walk *W, const sg_run *x, sg__buf *b, const wv *v);

#endif /* SG_FRONT_WALK_PRIVATE_H */
