/* The graph IR (graph.c, graph_print.c): a graph of nodes over values, the
 * form every pass of the pipeline takes and gives (doc/design.md, "The pipeline
 * above the guards").
 *
 * Values and nodes are numbered, not pointed to (QBE's Ref): a graph is a
 * few growable arrays, and an index stays valid while the graph grows.
 * The records are kept small (on LP64: a value 40 bytes, a node 32, an
 * argument 24, an expression slot 8; tests/bench/bench_trace.c measures
 * the bytes per traced op): only placeholders carry a name (a pointer into
 * a block of the graph's; other values are named when printed), a node's
 * schema and an assert's condition share their slot, a tensor whose sizes
 * and strides equal those of a recent tensor shares its exprs run, and a
 * list of expressions equal to a recent one shares it. Runs of exprs are
 * therefore never written through an offset (sg__graph_subst gives a tensor
 * whose sizes or strides change a run of its own).
 *  - A value is what a node gives: a fake tensor (sizes, strides and
 *    storage offset as expressions of the shape environment, dtype,
 *    requires_grad, and the storage it views, so aliasing is known), a
 *    symbolic int or bool (an expression), a float, None, or a list of
 *    values (unbind, tolist, the outputs of a node with several).
 *  - A node is a placeholder (an input of the graph), a call of an operator
 *    of the registry with its arguments, a runtime assert (an expression
 *    that must hold, due after the node before it), or the output.
 *  - Arguments refer to values of the same graph (a graph is closed), or are
 *    constants: expressions (ints and SymInts, constant or not), floats,
 *    bools, None, dtypes, lists of expressions and lists of values.
 * A node records the program line it comes from and the unbacked symbols it
 * binds (item, nonzero). Every free symbol of every expression is an input
 * symbol of the environment, or bound by an earlier node or placeholder of
 * the graph (sg__graph_lint checks all of this). */
#ifndef SG_GRAPH_GRAPH_H
#define SG_GRAPH_GRAPH_H

#include "graph/schema.h"
#include "shapeguard/graph.h"
#include "util/util_private.h"

#define SG_NDTYPE 4
const char *sg__dtype_short(sg_dtype d); /* "f64", "f32", "i64", "b8" */
const char *sg__dtype_name(sg_dtype d);  /* "torch.float64", ... */

#define SG_NOVAL UINT32_MAX

typedef enum sg__vkind {
    SG_V_TENSOR,
    SG_V_SYMINT,  /* an integer expression */
    SG_V_SYMBOOL, /* a boolean expression */
    SG_V_FLOAT,
    SG_V_NONE,
    SG_V_LIST,    /* values ids[off .. off + n) */
} sg__vkind;

typedef struct sg__fake_tensor {
    const sg_expr *offset; /* storage offset */
    uint32_t dims;         /* exprs[dims .. dims + ndim): sizes; then ndim strides (a run of
                              exprs that equal values may share: never write into it) */
    uint32_t storage;      /* which storage it views: equal ids alias */
    uint32_t base;         /* the value it is a view of (PyTorch's _base: the root of a chain
                              of views), or SG_NOVAL */
    uint8_t ndim;          /* at most SG_MAX_DIMS */
    uint8_t dtype;         /* sg_dtype */
    bool requires_grad : 1;
    bool leaf : 1;         /* autograd's is_leaf: no grad_fn (inputs given as leaves, results that do
                              not require grad, detach) */
    bool custom_view : 1;  /* a view a custom Function returned, or a view of one (PyTorch's
                              CreationMeta::IN_CUSTOM_FUNCTION): no in-place write with grad */
    bool written_rg : 1;   /* an input (whose requires_grad says the caller's tensor's) that a write with
                              grad through an alias gave a history while tracing (CopySlices): it requires
                              grad from then on, as the tracer and the walker ask (sg__graph_rg_now) */
    bool declared_view : 1; /* an input the caller declared a view of another input on its storage
                               (sg_tracer_input_declare_view; its _base set, whichever order they come in) */
    bool stale_fn : 1;     /* a view made without a grad_fn whose base took a history since (a write with
                              grad through another view): PyTorch makes its grad_fn when a call with grad
                              asks for it; until then its is_leaf (the field, as check_inplace reads it)
                              says a leaf, and an in-place call with grad on it raises */
    bool rg_alias : 1;     /* requires_grad raised after it was made, by a write with grad through an alias
                              (the tracer's alias_grad): it required none before that write */
} sg__fake_tensor;

typedef struct sg__gval {
    const char *name; /* a placeholder's program name (owned by the graph), else "" */
    uint32_t node;    /* the node that gives it */
    uint8_t kind;     /* sg__vkind */
    union {
        sg__fake_tensor t;
        const sg_expr *e; /* SYMINT, SYMBOOL */
        double f;
        struct {
            uint32_t off, n;
        } list;
    } u;
} sg__gval;

typedef enum sg__akind {
    SG_A_VALUE, /* a value of the graph */
    SG_A_EXPR,  /* an int, SymInt or symbolic bool */
    SG_A_FLOAT,
    SG_A_BOOL,
    SG_A_NONE,
    SG_A_DTYPE,
    SG_A_EXPRS, /* a list of expressions: exprs[off .. off + n) */
    SG_A_VALUES, /* a list of values: ids[off .. off + n) */
    SG_A_MEMFMT, /* a memory format (u.dtype holds the sg_memory_format) */
    SG_A_SCOPE   /* a subgraph: the scope u.v (a branch of a cond) */
} sg__akind;

typedef struct sg__garg {
    uint8_t kind; /* sg__akind */
    const char *kw; /* NULL, or the keyword it was passed by (a schema name) */
    union {
        uint32_t v;
        const sg_expr *e;
        double f;
        bool b;
        uint8_t dtype;
        struct {
            uint32_t off, n;
        } list;
    } u;
} sg__garg;

/* SG_N_COND: torch.cond; its arguments are the predicate (a value: a
 * one-element bool tensor, or an expression: a symbolic bool), the true and
 * the false branch (SG_A_SCOPE), and the operands (SG_A_VALUES: one per
 * placeholder of the branches, which take the same); it gives a list of
 * the merged outputs and binds the fresh unbacked symbols of their sizes. */
/* SG_N_FUNCTION: the end of a custom autograd Function's forward (PyTorch's
 * Function.apply, `class F(torch.autograd.Function)`); it computes nothing
 * and gives no value (its forward's calls come before it, made under
 * no_grad). Its arguments: the backward (SG_A_SCOPE: the traced body of
 * F.backward, whose placeholders that take nothing of the parent are the
 * gradients of the outputs, in order; the others lift what it reads), the
 * outputs (SG_A_VALUES: the tensors F.apply returns, which require grad
 * where an input does and whose gradients the backward takes), the inputs
 * (SG_A_VALUES: the tensor arguments of F.apply), the saved tensors
 * (SG_A_VALUES: ctx.save_for_backward's, which autograd's version check
 * reads), per gradient the backward scope gives, the input it is the
 * gradient of (SG_A_EXPRS: constant indices into the inputs), and per
 * placeholder the backward writes (SG_A_EXPRS: indices into its scope's
 * placeholders; empty but in a functional graph), whose new contents its
 * output gives after the gradients (functionalization's: a saved input, a
 * tensor on ctx, a gradient written in place, issue 21's mutations in the
 * backward). */
typedef enum sg__nkind { SG_N_PLACEHOLDER, SG_N_CALL, SG_N_ASSERT, SG_N_OUTPUT, SG_N_COND, SG_N_FUNCTION } sg__nkind;

typedef struct sg__gnode {
    union {
        const sg__schema *schema; /* SG_N_CALL */
        const sg_expr *cond;      /* SG_N_ASSERT: what must hold */
    };
    uint32_t args, nargs;      /* args[args .. args + nargs) (OUTPUT: the values returned) */
    uint32_t out;              /* the value it gives, or SG_NOVAL */
    uint32_t binds;            /* exprs[binds .. binds + nbinds): unbacked symbols it binds */
    uint32_t line;             /* program line, 0 if none */
    uint16_t nbinds;           /* at most UINT16_MAX (sg__graph_bind) */
    uint8_t kind;              /* sg__nkind */
    uint8_t flags;             /* SG_NODE_* */
    uint32_t scope;            /* the scope (graph) it belongs to: 0 is the root */
    uint16_t rg;               /* SG_N_CALL the tracer recorded: bit k, schema argument k (k < 16) a tensor
                                  that required grad when the call ran (a write with grad raises its
                                  aliases' flags since: SG_NODE_GRAD) */
} sg__gnode;

/* A scope: the root graph (0) or a subgraph (the branch of a cond), nested
 * in its parent. Its nodes are the graph's nodes whose scope it is, in
 * order; its placeholders are phs, in the order it takes them (placeholders
 * lifted at first use are created between other nodes, but come first in
 * the scope's signature). A subgraph is closed: every node's arguments are
 * values of its own scope, and every symbol its expressions use is bound in
 * it (by a placeholder, or a node's binds); a value of an enclosing scope is
 * lifted: a placeholder takes it (outer[i] is the parent's value that
 * placeholder phs[i] takes). */
typedef struct sg__scope {
    const char *name;   /* "" for the root, else "cond_true_0" ... (owned by the graph) */
    uint32_t parent;    /* the enclosing scope, or SG_NOVAL for the root */
    uint32_t *phs;      /* placeholder nodes, in order */
    uint32_t *outer;    /* what each takes from the parent (SG_NOVAL in the root) */
    uint32_t nphs, capphs;
    uint32_t output;    /* its output node, or SG_NOVAL while it is open */
    sg__idmap bound;    /* symbol id -> 1 + the value of this scope that carries it
                           (a SymInt placeholder or node value), or the top bit | the node
                           that binds it without its value carrying it alone (nonzero's
                           size; scope.c BY_NODE) */
    sg__idmap lifted;   /* 1 + a value of an enclosing scope (idmap ids start at 1) -> 1 + the
                           placeholder value taking it */
    uint32_t *writes;   /* its call nodes whose schema writes an argument, in order (a
                           subgraph's only: what torch.cond's aliasing check reads) */
    uint32_t nwrites, capwrites;
    bool grads;         /* a custom Function's backward (SG_N_FUNCTION): its placeholders that
                           take nothing of the parent (outer SG_NOVAL) are its outputs' gradients */
    sg_status failed;   /* a custom Function's backward whose tracing failed (SG_OK if not): the
                           error, raised where autograd reaches the Function (as eager raises it
                           when its backward runs, never if none does); its scope gives no values */
    char *failed_msg;   /* that error's message (owned), or NULL */
} sg__scope;

/* A detach that stands for `.data`: its result has a version counter of
 * its own (writes through it are not seen as writes of its source). */
#define SG_NODE_DATA 1u
/* An out= whose layout its kernel decides (eager mode only: whether out
 * keeps its layout asks about sizes the kernel computes; resize_output is
 * then done at run time, and the eager executor writes the layout back). */
#define SG_NODE_OUT_LAYOUT 2u
/* Recorded while grad mode was off (torch.no_grad): what autograd does not
 * see of a write (functionalization's mutations under no_grad). */
#define SG_NODE_NO_GRAD 4u
/* The node gives a new version of its first argument (the functional form
 * of a write into it: the op of an in-place call, a scatter into a base):
 * where autograd does not see the write (SG_NODE_NO_GRAD, SG_NODE_DATA),
 * the new version's gradient is the old one's, as PyTorch's autograd keeps
 * the history of a tensor written under no_grad or through .data. */
#define SG_NODE_WRITE 8u
/* An as_strided made over its storage's base in place of the view it was
 * called on (functionalization): PyTorch's gradient goes to that view's
 * elements only, the base's would reach others; autograd refuses it. */
#define SG_NODE_STRIDED_BASE 16u
/* Recorded by autograd (the tracer's): grad mode on and a tensor argument
 * required grad when the call ran, so PyTorch gave it a grad_fn, which
 * saved what its formula reads. The trace's requires_grad flags say what
 * requires grad at the end (a write with grad later raises its aliases'),
 * not whether this call's result got a history (nor which arguments
 * required grad then: the node's rg). */
#define SG_NODE_GRAD 32u
/* A factory's out= (arange, zeros) into a leaf that required grad (no
 * view): 1.13's Python binding then sets requires_grad=False on out, so
 * its new version is a leaf that requires none, its history cut (not kept
 * as a write under no_grad keeps it). */
#define SG_NODE_CUT 64u
/* A view's value whose grad_fn PyTorch made again as an as_strided of its
 * base (AsStridedBackward0): the view made again from what it views after
 * a write moved its storage's version since it was made, or the view's new
 * contents where an in-place call wrote it (functionalization's). Where the
 * view is empty, that backward (as_strided_backward) gives a factory's
 * zeros of the base's sizes (a plain tensor where the gradient is a
 * TwoTensor): autograd.c gives a view node's formula zeros as its
 * gradient; a write's value is also carried back to the base, whose
 * gradient reaches it otherwise (joint.c refuses an empty one under a
 * TwoTensor loss). */
#define SG_NODE_REGEN 128u

typedef struct sg__graph {
    sg_ctx *ctx;
    sg_env *env;
    sg__gval *vals;
    size_t nvals, capvals;
    sg__gnode *nodes;
    size_t nnodes, capnodes;
    sg__garg *args;
    size_t nargs, capargs;
    const sg_expr **exprs;
    size_t nexprs, capexprs;
    uint32_t *ids;
    size_t nids, capids;
    uint32_t nstorages;
    const sg_expr **storage_numel; /* per storage: its number of elements (what as_strided may reach) */
    size_t capstorage;
    size_t name_bytes;   /* the placeholders' names (each its own block) */
    /* the last few tensor layouts made (exprs runs of sizes then strides),
       which a new tensor with the same layout shares */
#define SG_GRAPH_RECENT 8
    uint32_t recent[SG_GRAPH_RECENT];
    uint8_t recent_ndim[SG_GRAPH_RECENT];
    uint8_t nrecent, recent_next;
    /* the same for the last few lists of expressions (sg__graph_exprs) */
    uint32_t lrecent[SG_GRAPH_RECENT], lrecent_n[SG_GRAPH_RECENT];
    uint8_t nlrecent, lrecent_next;
    sg__scope *scopes;   /* scopes[0] is the root */
    uint32_t nscopes, capscopes;
    uint32_t cur;        /* the scope new nodes go to */
    bool lint_sizes;     /* shape rules check that their sizes are folded (sg_tracer_lint_sizes) */
    bool eager;          /* recorded by the eager executor, which runs each node at once
                            (a rule may leave to the kernel what only the data decides) */
    bool general_rules;  /* shape rules take their general (expression) path even where every
                            size and stride is a constant (tests compare it with the int64 one) */
    uint32_t *hbases;    /* pairs: a tensor input, then the tensor value (of no node) of its
                            hidden base (sg_tracer_input_base), whose layout the caller binds */
    size_t nhbases, caphbases;
    const sg__opreg *reg; /* the registry of its schemas (set by its maker; NULL: none), where a
                             rule finds another operator's schema (out='s functional one) */
    struct sg__pw_memo *pw_memo; /* the pointwise rule's remembered broadcasts and result
                                    strides (meta_pointwise.c; made at its first use, one block) */
    struct sg__rule_memo *rule_memo; /* the rules' results remembered (rule_memo.c; made at its first
                                        use, one block) */
} sg__graph;

/* The rules' memo's blocks (rule_memo.c), freed with its graph. */
void sg__rmemo_free(struct sg__rule_memo *m);

/* An empty graph over env (borrowed: it must outlive the graph). Errors: SG_ENOMEM. */
sg_status sg__graph_new(sg_env *env, sg__graph **out);
void sg__graph_free(sg__graph *g);
/* g emptied back to what sg__graph_new gives (the root scope open, no
 * value, node or storage; lint_sizes, general_rules and reg stay), keeping its arrays'
 * blocks and their capacity for the next graph (the subgraphs' and the
 * placeholders' names are freed). Every index into g is stale after. */
void sg__graph_reset(sg__graph *g);
/* Room reserved in g's tables for about nodes more nodes and their values
 * and arguments (two a node), so that they grow without copying until
 * then. Best effort: where memory runs out a table keeps its room, and no
 * error is set (it grows as it goes). */
void sg__graph_reserve(sg__graph *g, size_t nodes);

/* Building. Each returns SG_OK or SG_ENOMEM (the graph then unchanged, but
 * for unused room), and gives the index of what it made. sg__graph_exprs
 * may give the offset of an equal run made before (read-only). */
sg_status sg__graph_exprs(sg__graph *g, uint32_t *off, const sg_expr *const *e, size_t n);
sg_status sg__graph_ids(sg__graph *g, uint32_t *off, const uint32_t *ids, size_t n);
/* The contiguous strides of sizes (n of them) into strides (a size 0
 * counts as 1, as PyTorch's contiguous strides have it). Errors:
 * SG_ENOMEM. */
sg_status sg__graph_contiguous_strides(sg_ctx *ctx, size_t n, const sg_expr *const *sizes, const sg_expr **strides);
/* A tensor value of a new node or placeholder; sizes and strides have ndim
 * entries; storage is an existing storage id, or SG_NOVAL for a new one. */
sg_status sg__graph_tensor(sg__graph *g, uint32_t *out, sg_dtype dtype, size_t ndim, const sg_expr *const *sizes,
                           const sg_expr *const *strides, const sg_expr *offset, uint32_t storage);
/* The same, a new storage (storage SG_NOVAL) of numel elements as given
 * (NULL: its number of elements, as sg__graph_tensor computes it); run
 * (NULL: none) the offset of a run of g's exprs that may hold the sizes
 * and strides already (SG_NOVAL: none), shared where it does, and set to
 * the run the new value reads. */
sg_status sg__graph_tensor_numel(sg__graph *g, uint32_t *out, sg_dtype dtype, size_t ndim,
                                 const sg_expr *const *sizes, const sg_expr *const *strides, const sg_expr *offset,
                                 uint32_t storage, const sg_expr *numel, uint32_t *run);
/* The number of elements of storage id (made with a tensor of it: that
 * tensor's numel; an input's: what its layout reaches; set_storage_numel
 * changes it, as an out= resize grows it). */
static inline const sg_expr *sg__graph_storage_numel(const sg__graph *g, uint32_t storage)
{
    return g->storage_numel[storage];
}
void sg__graph_set_storage_numel(sg__graph *g, uint32_t storage, const sg_expr *numel);
/* The hidden base recorded for tensor input v (a tensor value of no node),
 * or SG_NOVAL. */
uint32_t sg__graph_hidden_base(const sg__graph *g, uint32_t v);
/* A value of another kind (not a tensor, nor a list). */
sg_status sg__graph_value(sg__graph *g, uint32_t *out, sg__vkind kind, const sg_expr *e, double f);
sg_status sg__graph_list(sg__graph *g, uint32_t *out, const uint32_t *vals, size_t n);
/* Nodes: the value out (made above, not given by another node) becomes
 * theirs. Nodes go to the current scope (g->cur). A placeholder is appended
 * to its scope's signature, taking the parent's value outer (SG_NOVAL in the
 * root). */
sg_status sg__graph_placeholder(sg__graph *g, uint32_t out, const char *name);
sg_status sg__graph_placeholder_of(sg__graph *g, uint32_t out, const char *name, uint32_t outer);
sg_status sg__graph_call(sg__graph *g, const sg__schema *s, const sg__garg *args, size_t nargs, uint32_t out,
                         uint32_t line);
sg_status sg__graph_assert(sg__graph *g, const sg_expr *cond, uint32_t line);
/* The output of the current scope, which it closes. */
sg_status sg__graph_output(sg__graph *g, const uint32_t *vals, size_t n);
/* A cond node in the current scope (see SG_N_COND); out is a list value. */
sg_status sg__graph_cond(sg__graph *g, const sg__garg *pred, uint32_t tscope, uint32_t fscope, const uint32_t *ops,
                         size_t nops, uint32_t out, uint32_t line);
/* A custom Function's end in the current scope (see SG_N_FUNCTION): its
 * backward scope bw, outputs, inputs, saved tensors, per gradient bw gives
 * the input it is the gradient of (grad_of, ngrad of them), and the
 * placeholders of bw whose new contents bw's output gives after them
 * (written, nwritten of them). Errors: SG_ENOMEM. */
sg_status sg__graph_function(sg__graph *g, uint32_t bw, const uint32_t *outs, size_t nouts, const uint32_t *ins,
                             size_t nins, const uint32_t *saved, size_t nsaved, const uint32_t *grad_of,
                             size_t ngrad, const uint32_t *written, size_t nwritten, uint32_t line);
/* Scope sc (a custom Function's backward) failed with error st and
 * message msg (copied): see sg__scope.failed. Errors: SG_ENOMEM. */
sg_status sg__graph_scope_fail(sg__graph *g, uint32_t sc, sg_status st, const char *msg);
/* A new scope nested in the current one, named name; it becomes current.
 * Errors: SG_ELIMIT (more than 2**16 scopes), SG_ENOMEM. */
sg_status sg__graph_scope_open(sg__graph *g, uint32_t *out, const char *name);
/* The scope of value v (the scope of the node that gives it). */
static inline uint32_t sg__graph_vscope(const sg__graph *g, uint32_t v);
/* The scope named name ("" for the root), or SG_NOVAL. */
uint32_t sg__graph_scope_find(const sg__graph *g, const char *name);
/* The unbacked symbols that node n binds. */
sg_status sg__graph_bind(sg__graph *g, uint32_t node, const sg_expr *const *syms, size_t n);

static inline uint32_t sg__graph_vscope(const sg__graph *g, uint32_t v)
{
    return g->vals[v].node == SG_NOVAL ? g->cur : g->nodes[g->vals[v].node].scope;
}

/* Whether node nd reads value v: as one of its value arguments or in one of
 * its lists of values. */
static inline bool sg__graph_node_reads(const sg__graph *g, const sg__gnode *nd, uint32_t v)
{
    for (uint32_t k = 0; k < nd->nargs; k++) {
        const sg__garg *a = &g->args[nd->args + k];
        if (a->kind == SG_A_VALUE && a->u.v == v)
            return true;
        for (uint32_t j = 0; a->kind == SG_A_VALUES && j < a->u.list.n; j++)
            if (g->ids[a->u.list.off + j] == v)
                return true;
    }
    return false;
}

/* Does tensor value v require grad at this point of the trace (its flag, or
 * an input's that a write with grad through an alias gave a history)? */
static inline bool sg__graph_rg_now(const sg__graph *g, uint32_t v)
{
    return g->vals[v].u.t.requires_grad || g->vals[v].u.t.written_rg;
}

static inline const sg_expr *sg__graph_size(const sg__graph *g, uint32_t v, size_t d)
{
    return g->exprs[g->vals[v].u.t.dims + d];
}
static inline const sg_expr *sg__graph_stride(const sg__graph *g, uint32_t v, size_t d)
{
    return g->exprs[g->vals[v].u.t.dims + g->vals[v].u.t.ndim + d];
}
/* Has tensor value v no element (a size that is the constant 0)? */
static inline bool sg__graph_empty(const sg__graph *g, uint32_t v)
{
    for (uint32_t d = 0; d < g->vals[v].u.t.ndim; d++)
        if (sg__graph_size(g, v, d) == g->ctx->zero)
            return true;
    return false;
}

/* Replace, in the values from first on (their sizes, strides, offsets and
 * expressions; the values of lists are the values they hold), each symbol
 * syms[i] by the constant vals[i]: eager execution makes the unbacked
 * symbols of data-dependent results concrete once their node ran.
 * Errors: SG_ENOMEM (values then partly replaced). */
sg_status sg__graph_subst(sg__graph *g, uint32_t first, size_t n, const sg_expr *const *syms,
                          const sg_expr *const *vals);

/* Check the graph's invariants: one output node, last; every argument a
 * value given by an earlier node; values given once; calls match their
 * schema's arity; every free symbol of every expression of the graph is an
 * input of the environment or bound earlier in the graph (by a placeholder
 * that is a symbol, or a node's binds). SG_OK, or SG_EINTERNAL naming the
 * first problem and its node. */
sg_status sg__graph_lint(const sg__graph *g);

/* The graph as FX-like Python source (graph_print.c): the root's forward,
 * then each subgraph as a class of its own ("class cond_true_0(torch.nn.Module):"):
 *   def forward(self, s0: "Sym(s0)", a: "f64[s0, 3]"):
 *       mul: "f64[s0, 3]" = torch.ops.aten.mul.Tensor(a, 2)
 *       return (mul,)
 * *out is freed with sg_free. Errors: SG_ENOMEM. */
sg_status sg__graph_print(const sg__graph *g, char **out);
/* The graph in Graphviz's DOT language: a box per call (operator, name and
 * type), an ellipse per placeholder and for the output, a diamond per
 * runtime assert, an edge from the node that gives each argument.
 * Errors: SG_ENOMEM. */
sg_status sg__graph_dot(const sg__graph *g, char **out);
/* The operator names of the calls, in order, separated by spaces
 * ("view mul.Tensor copy_"; a cond node is "cond"). Errors: SG_ENOMEM. */
sg_status sg__graph_ops(const sg__graph *g, char **out);
/* The same, of the calls i of the root scope whose keep[i] (per node) is set. */
sg_status sg__graph_ops_kept(const sg__graph *g, const uint8_t *keep, char **out);
/* The same, and the names of the placeholders separated by ", ", of one scope. */
sg_status sg__graph_scope_ops(const sg__graph *g, uint32_t scope, char **out);
sg_status sg__graph_scope_placeholders(const sg__graph *g, uint32_t scope, char **out);

/* ---- reading a graph (alias.c) ---- */

/* The users of every value: the nodes that take it as an argument, in a
 * list of values, or as an output (each node once, in order), computed in
 * one pass when asked; stale once the graph grows. */
typedef struct sg__uses {
    uint32_t *off;   /* nodes[off[v] .. off[v] + fill[v]): the users of v */
    uint32_t *fill;
    uint32_t *nodes;
    size_t nvals;
} sg__uses;
/* Errors: SG_ENOMEM (u then empty). Free with sg__uses_free. */
sg_status sg__graph_uses(const sg__graph *g, sg__uses *u);
void sg__uses_free(sg__uses *u);
/* The users of v (NULL and 0 for none, or a value made after the uses). */
const uint32_t *sg__uses_of(const sg__uses *u, uint32_t v, size_t *n);

/* Mutation and aliasing, read from the schemas' annotations. A value is one
 * version of a tensor: an in-place or out= call gives a new value, the same
 * tensor as the argument it writes and returns (x.add_(1): Tensor(a!)). */
/* The values call node node writes (its (a!) arguments), at most max into
 * vals; their count. Their storages are vals[i]'s u.t.storage. */
size_t sg__graph_node_writes(const sg__graph *g, uint32_t node, uint32_t *vals, size_t max);
/* The value v is a view of (its node returns an alias of that argument
 * without writing it: view, t, select, an element of unbind), or SG_NOVAL. */
uint32_t sg__graph_view_of(const sg__graph *g, uint32_t v);
/* The tensor autograd takes v for a view of: v's view chain (view_of)
 * followed up to a detach's result, which starts a history of its own, or
 * a value no call made a view (PyTorch's base of a differentiable view),
 * or v itself. A version an in-place call made of a view (no set_ on the
 * way) is still that view: the chain goes on from its first version. An
 * input the caller declared a view of another input (and a version of
 * one) has that input for its base: the one on its storage declared no
 * view. */
uint32_t sg__graph_grad_base(const sg__graph *g, uint32_t v);
/* The value whose tensor v is a later version of (v is an in-place or out=
 * result: the argument written and returned), or SG_NOVAL. */
uint32_t sg__graph_updates(const sg__graph *g, uint32_t v);
/* The first value of the tensor v is a version of (v itself if none). */
uint32_t sg__graph_tensor_of(const sg__graph *g, uint32_t v);
/* The version of tensor value v that its chain of in-place calls starts
 * from, not past a set_ (whose result has another object's view chain),
 * but for the set_ of x.data = y where past_data_set (x keeps its autograd
 * meta): the view autograd sees in a version of a view. */
uint32_t sg__graph_first_version(const sg__graph *g, uint32_t v, bool past_data_set);

/* A tensor-subclass input or output of a traced program: its inner
 * tensors in flatten order, as placeholders (an input's values) or output
 * indices (an output's). */
#define SG__TSUB_MAX 4
typedef struct sg__tsub {
    uint32_t v[SG__TSUB_MAX];
    uint32_t n;
    const char *kind; /* the kind's name ("two"), static */
    char *name;       /* an input's program name (the tracer's), NULL for an output */
} sg__tsub;

/* A traced program's signature where it is not the graph's
 * (sg_tracer_input_subclass, sg_tracer_output_subclass,
 * sg_tracer_input_again): its subclass inputs and outputs, and the
 * placeholders passed as more than one parameter (borrowed from t). */
typedef struct sg__tsig {
    const sg__tsub *in, *out;
    size_t nin, nout;
    const uint32_t *dups;
    size_t ndups;
} sg__tsig;
sg__tsig sg__tracer_signature(const sg_tracer *t);
/* Note inputs inner[0 .. n) of t (placeholders made already: an eager
 * run's concrete inner tensors) as the inner tensors of subclass input
 * name of kind kind ("two"), as sg_tracer_input_subclass notes those it
 * makes. Errors: SG_EINVAL (an unknown kind, n out of 1 ..
 * SG__TSUB_MAX, a value that is no input), SG_ENOMEM. */
sg_status sg__tracer_note_subclass_input(sg_tracer *t, const char *name, const char *kind, const sg_value *inner,
                                         size_t n);


/* Are a and b the same integer or boolean (*out): one expression, proved
 * equal by env, or (where its reasoning cannot prove it) equal at the hints
 * of their symbols, where the trace was checked; a symbol without a hint
 * (unbacked) must be proved. Errors: SG_ENOMEM and the environment's. */
sg_status sg__known_same(sg_env *env, const sg_expr *a, const sg_expr *b, bool *out);

/* The graph a tracer builds (tests and benchmarks look inside it). */
const sg__graph *sg__tracer_graph(const sg_tracer *t);
/* The tracer's operator registry. */
const sg__opreg *sg__tracer_reg(const sg_tracer *t);
/* sg_tracer_call of the operator whose schema sch of the tracer's registry
 * the caller found already (no search by name; NULL: op, found by name),
 * its node given flags (SG_NODE_*: what the front end knows of the call
 * that the schema does not say, `.data`); errors as sg_tracer_call, and
 * SG_EINVAL for a schema not of the tracer's registry. */
sg_status sg__tracer_call_node(sg_tracer *t, sg_value *out, const char *op, const sg__schema *sch, const sg_arg *args,
                               size_t nargs, unsigned line, uint8_t flags);

/* An input of the open subgraph that takes nothing of its parent: a
 * contiguous tensor of like's sizes and dtype named name (the gradient of a
 * custom Function's output like, which the backward scope takes; the scope
 * becomes one: sg__scope.grads). Errors: SG_EINVAL (no subgraph open, like
 * no tensor), SG_ENOMEM, and lifting's. */
sg_status sg__tracer_scope_grad(sg_tracer *t, sg_value *out, const char *name, sg_value like);
/* The current scope, a custom Function's backward (sg__tracer_scope_grad)
 * whose tracing failed with error st and message msg, closed with no
 * values and marked failed (sg__scope.failed): autograd raises the error
 * where it reaches the Function. Errors: SG_EINVAL (sc is not the current
 * scope, an open backward), SG_ENOMEM. */
sg_status sg__tracer_scope_fail(sg_tracer *t, uint32_t sc, sg_status st, const char *msg);
/* Before a custom Function's forward runs, its tensor arguments ins as
 * autograd takes them where grad mode is on and one requires grad
 * (collect_next_edges asks each for its grad_fn): SG_EAUTOGRAD where one
 * is a view made under no_grad whose version a write moved since, as
 * PyTorch raises there (name: the Function's, for the message). */
sg_status sg__tracer_function_inputs(const sg_tracer *t, const sg_value *ins, size_t nins, const char *name);
/* A custom Function's node (SG_N_FUNCTION) in the current scope, its
 * backward the closed scope bw (sg__graph_function's arguments); under
 * grad mode, where an input requires grad, each floating output does, as
 * no leaf. Errors: SG_EINVAL (bw no custom Function's backward of the
 * current scope), SG_ENOMEM. */
sg_status sg__tracer_function(sg_tracer *t, uint32_t bw, const sg_value *outs, size_t nouts, const sg_value *ins,
                              size_t nins, const sg_value *saved, size_t nsaved, const uint32_t *grad_of,
                              size_t ngrad, unsigned line);

#endif /* SG_GRAPH_GRAPH_H */
