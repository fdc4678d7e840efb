/* shapeguard: graph capture.
 *
 * A tracer records a tensor program op by op into a graph whose every size,
 * stride and storage offset is an expression of a shape environment. The
 * front end hands it the inputs (fakified through sg_inputs, so that their
 * symbols and guards are the environment's), then calls operators by their
 * aten overload name ("mul.Tensor", "view", "add_.Tensor"); each call runs
 * the operator's shape rule, which asks the environment every question it
 * needs (recording guards as sg_env_evaluate does, or failing with
 * SG_EDATADEP where the answer depends on an unbacked value), and gives the
 * fake result. Data-dependent operators (nonzero, item, masked_select) make
 * unbacked symbols, bound by their node, with the runtime asserts PyTorch
 * inserts after it.
 *
 * Values are numbered (sg_value) per tracer. Operators, their schemas and
 * alias annotations are PyTorch's (the registry holds every operator of
 * the program language, doc/program.md). */
#ifndef SG_GRAPH_H
#define SG_GRAPH_H

#include <shapeguard/env.h>
#include <shapeguard/source.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types, PyTorch's (short names f64, f32, i64, b8). */
typedef enum sg_dtype { SG_FLOAT64 = 0, SG_FLOAT32 = 1, SG_INT64 = 2, SG_BOOL = 3 } sg_dtype;

/* A value of a tracer: a tensor, a symbolic int or bool, a float, None, or a
 * list of values. */
typedef uint32_t sg_value;

typedef enum sg_value_kind {
    SG_VALUE_TENSOR = 0,
    SG_VALUE_INT = 1,   /* an integer expression (constant or symbolic) */
    SG_VALUE_BOOL = 2,  /* a boolean expression */
    SG_VALUE_FLOAT = 3, /* a float (its value is not tracked) */
    SG_VALUE_NONE = 4,
    SG_VALUE_LIST = 5
} sg_value_kind;

/* An argument of an operator call. name: NULL for a positional argument,
 * else the schema's name of the argument ("dim", "keepdim", "out"). */
typedef enum sg_arg_kind {
    SG_ARG_VALUE = 0, /* u.v */
    SG_ARG_INT = 1,   /* u.e: an integer expression of the environment */
    SG_ARG_FLOAT = 2, /* u.f */
    SG_ARG_BOOL = 3,  /* u.b */
    SG_ARG_NONE = 4,
    SG_ARG_DTYPE = 5, /* u.dtype */
    SG_ARG_INTS = 6,  /* u.ints: a list of integer expressions */
    SG_ARG_VALUES = 7, /* u.values: a list of values */
    SG_ARG_MEMORY_FORMAT = 8 /* u.memory_format */
} sg_arg_kind;

/* torch.contiguous_format and torch.preserve_format. */
typedef enum sg_memory_format { SG_CONTIGUOUS_FORMAT = 0, SG_PRESERVE_FORMAT = 1 } sg_memory_format;

typedef struct sg_arg {
    sg_arg_kind kind;
    const char *name;
    union {
        sg_value v;
        const sg_expr *e;
        double f;
        int b;
        sg_dtype dtype;
        sg_memory_format memory_format;
        struct {
            size_t n;
            const sg_expr *const *e;
        } ints;
        struct {
            size_t n;
            const sg_value *v;
        } values;
    } u;
} sg_arg;

typedef struct sg_tracer sg_tracer;

/* A tracer over env (borrowed: it must outlive the tracer). Errors:
 * SG_EINVAL (NULL), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_tracer_new(sg_env *env, sg_give sg_tracer **out);
void sg_tracer_free(sg_take sg_tracer *t);
/* Make t as sg_tracer_new(env) would on its environment as it is now, to
 * trace another program: the graph, its inputs, names and subgraphs are
 * dropped, grad mode is on again (sg_tracer_lint_sizes stays as set), and
 * every sg_value and scope number t gave before is stale. The tracer keeps
 * its blocks (the graph's arrays at their capacity, the operator registry),
 * so that tracing again grows nothing the last trace already grew: no new
 * memory, no page faults. What the traces taught the environment (its
 * guards, facts and unbacked symbols) stays in it, as with a new tracer on
 * the same environment. Nothing to free; the tracer is still freed once,
 * with sg_tracer_free. Errors: SG_EINVAL (NULL). */
SG_WARN_UNUSED sg_status sg_tracer_reset(sg_tracer *t);

/* Inputs, in order, before any call. requires_grad: 0 (no), 1 (a leaf
 * that requires grad: a parameter), 2 (a tensor that requires grad and is
 * no leaf: the result of an operation, such as base.clone()); autograd's
 * refusals (an in-place write into a leaf that requires grad) follow it.
 * A tensor input is preceded in the
 * graph by the basic symbols of its sizes, strides and offset that no
 * earlier input took, sorted (backed before unbacked, then by number);
 * an int input by its symbols likewise (a constant takes none). name (the
 * program's name of the input) is copied. Errors: SG_EINVAL (NULL, a rank
 * above SG_MAX_DIMS, an input after a call), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_tracer_input_tensor(sg_tracer *t, sg_value *out, const char *name, const sg_fake *fake,
                                                sg_dtype dtype, int requires_grad);
/* A tensor input that views the storage of the earlier tensor input of
 * (an aliased input: `input b = a[0]`); otherwise as sg_tracer_input_tensor,
 * which is this with of = UINT32_MAX. Errors: those of
 * sg_tracer_input_tensor, and SG_EINVAL where of is not a tensor input. */
SG_WARN_UNUSED sg_status sg_tracer_input_view(sg_tracer *t, sg_value *out, const char *name, const sg_fake *fake,
                                              sg_dtype dtype, int requires_grad, sg_value of);
SG_WARN_UNUSED sg_status sg_tracer_input_int(sg_tracer *t, sg_value *out, const char *name, const sg_expr *e);
/* A tensor-subclass input (fake->kind set, sg_inputs_tensor's fake of a
 * subclass): its inner tensors become inputs of the graph, in flatten
 * order, each as sg_tracer_input_view makes it (named NAME_ATTR, `x_a`),
 * their values written into inner[0 .. fake->ninner); of: per inner
 * tensor, the earlier input whose storage it views (NULL: none). The
 * program sees one tensor (the front end dispatches its operations to the
 * inner ones); the aot pipeline (aot.h) reads the grouping. The kinds a
 * trace takes: two (PyTorch's TwoTensor). Errors: SG_EINVAL (no subclass
 * fake, more inner tensors than max or than 4), SG_EUNSUPPORTED (another
 * kind; requires_grad), those of sg_tracer_input_view. */
SG_WARN_UNUSED sg_status sg_tracer_input_subclass(sg_tracer *t, sg_value *inner, size_t max, const char *name,
                                                  const sg_fake *fake, sg_dtype dtype, int requires_grad,
                                                  const sg_value *of);
/* Tensor input v views a base that no input of the graph is (a view
 * whose _base the caller does not pass, `input d = w[0]` with w no
 * parameter): as PyTorch fakes such a view from its fakified base, v's
 * storage holds what base (the base's fake, made from its own source,
 * `L['d']._base`) reaches, so that an as_strided of v may reach all of it.
 * The storage's size becomes the larger of the two. The base's symbols are
 * no inputs of the graph: the caller checks its guards with the base's
 * value. Errors: SG_EINVAL (NULL, v no tensor input, a call made, a
 * subclass base, a rank above SG_MAX_DIMS), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_tracer_input_base(sg_tracer *t, sg_value v, const sg_fake *base);
/* Input v (a placeholder) is passed again as another parameter (a
 * duplicate input, `input b = a`): the aot pipeline refuses some mutations
 * of duplicates (aot.h). Errors: SG_EINVAL (v no input), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_tracer_input_again(sg_tracer *t, sg_value v);
/* Tensor input v is a view of another input on its storage: the caller's
 * tensor has a _base (`input d = a.t()`), whichever order the two come in
 * among the inputs. Of the inputs on one storage, the declared ones are the
 * views; where none is declared, an input is taken for a view of the
 * earlier input whose storage it shares (sg_tracer_input_view's of). What
 * autograd decides by it: a set_ of v with grad enabled (a view's base
 * takes its grad_fn), and whether v, once a write with grad through
 * another view gave its base a history, is a leaf to an in-place call
 * until a call with grad asks for its grad_fn. Errors: SG_EINVAL (NULL, v
 * no tensor input of t, a call made). */
SG_WARN_UNUSED sg_status sg_tracer_input_declare_view(sg_tracer *t, sg_value v);

/* Call operator op ("mul.Tensor", "view": the aten overload name, ".default"
 * left out) with args: positional ones first, in the schema's order, then
 * named ones. *out is the result (a list for several results); line is the
 * program line recorded on the node (0: none). Where PyTorch returns the
 * argument itself (contiguous of a contiguous tensor), *out is that value
 * and no node is recorded, as none appears in PyTorch's graph. Errors: SG_EUNSUPPORTED (an
 * operator not in the registry), SG_EINVAL (arguments that do not fit the
 * schema), SG_ESHAPE (sizes that do not fit the operator, naming it and the
 * sizes), SG_ETYPE (a result type that cannot be cast to an in-place or out=
 * argument), SG_EDATADEP (a size question that needs an unbacked value),
 * SG_ENOMEM. On an error the graph is unchanged (guards recorded by the
 * questions asked before the error stay in the environment, as in PyTorch). */
/* (sg_tracer_call:) SG_EAUTOGRAD: under grad mode, an in-place write into a
 * leaf that requires grad or into a view of one, out= with an argument
 * that requires grad, requires_grad_(False) of a tensor that is no leaf. */
SG_WARN_UNUSED sg_status sg_tracer_call(sg_tracer *t, sg_value *out, const char *op, const sg_arg *args,
                                        size_t nargs, unsigned line);

/* torch._check(cond): a condition the environment cannot decide becomes a
 * runtime assert (an assert node, and the environment's sg_env_check); a
 * provably false one is SG_EASSERT. */
SG_WARN_UNUSED sg_status sg_tracer_check(sg_tracer *t, const sg_expr *cond, unsigned line);

/* Grad mode (torch.no_grad / torch.enable_grad; on at first): under it, a
 * differentiable result of a tensor that requires grad requires grad;
 * without it, results and views do not. Errors: SG_EINVAL (NULL). */
SG_WARN_UNUSED sg_status sg_tracer_set_grad_enabled(sg_tracer *t, int enabled);
int sg_tracer_grad_enabled(const sg_tracer *t);

/* ---- subgraphs (the branches of torch.cond, hop.h) ----
 * A scope is a subgraph nested in the current one; while it is open, calls
 * go to it. A value of an enclosing scope that a call uses is lifted: a
 * placeholder of the subgraph takes it, parent first through every scope
 * between, its basic symbols (of a tensor's sizes, strides, offset) taken
 * before it, sorted, each once per scope; a compound size is never taken,
 * only its symbols; unbacked symbols are found where their node bound them.
 * Lifted placeholders stay even if the call that lifted them fails.
 *
 * sg_tracer_scope_open: a new scope named name (unique: "cond_true_0"),
 *   nested in the current one, which it becomes; *scope is its number.
 * sg_tracer_scope_input: an input of the open scope taking outer (a value
 *   of an enclosing scope), named name (NULL: the program name the value was
 *   given with sg_tracer_name, else the enclosing placeholder's); its
 *   symbols are taken first. An outer value taken before gives the same.
 * sg_tracer_scope_expr: every symbol of e taken by the open scope (an int
 *   operand, which stays an expression).
 * sg_tracer_scope_close: its outputs (values of it or of enclosing scopes,
 *   lifted), and back to its parent.
 * sg_tracer_name: the program name of a value (the first given stays),
 *   which a placeholder lifting it takes.
 * Errors: SG_EINVAL (no scope open, a name taken, NULL), SG_EUNSUPPORTED
 * (a value of a sibling subgraph, a float read from a tensor), SG_ELIMIT
 * (65,535 scopes), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_tracer_scope_open(sg_tracer *t, uint32_t *scope, const char *name);
SG_WARN_UNUSED sg_status sg_tracer_scope_input(sg_tracer *t, sg_value *local, const char *name, sg_value outer);
SG_WARN_UNUSED sg_status sg_tracer_scope_expr(sg_tracer *t, const sg_expr *e);
SG_WARN_UNUSED sg_status sg_tracer_scope_close(sg_tracer *t, const sg_value *outs, size_t n);
SG_WARN_UNUSED sg_status sg_tracer_name(sg_tracer *t, sg_value v, const char *name);
/* The current scope (0: the root graph). */
uint32_t sg_tracer_scope(const sg_tracer *t);

/* The outputs, once; no call after. Errors: SG_EINVAL, SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_tracer_output(sg_tracer *t, const sg_value *vals, size_t n);
/* After sg_tracer_output: outputs first .. first + n - 1 are the inner
 * tensors, in flatten order, of one tensor-subclass output of kind kind
 * ("two"). Errors: SG_EINVAL (before the output, outputs beyond it, an
 * unknown kind, n 0 or above 4), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_tracer_output_subclass(sg_tracer *t, size_t first, size_t n, const char *kind);

/* Reading a value (v must be a value of t; these do not fail). */
sg_value_kind sg_tracer_kind(const sg_tracer *t, sg_value v);
size_t sg_tracer_ndim(const sg_tracer *t, sg_value v);
const sg_expr *sg_tracer_size(const sg_tracer *t, sg_value v, size_t d);
const sg_expr *sg_tracer_stride(const sg_tracer *t, sg_value v, size_t d);
const sg_expr *sg_tracer_offset(const sg_tracer *t, sg_value v);
sg_dtype sg_tracer_dtype(const sg_tracer *t, sg_value v);
/* The expression of an int or bool value. */
const sg_expr *sg_tracer_expr(const sg_tracer *t, sg_value v);
/* The elements of a list value. */
size_t sg_tracer_list_len(const sg_tracer *t, sg_value v);
sg_value sg_tracer_list_get(const sg_tracer *t, sg_value v, size_t i);
/* Do two tensor values view the same storage? */
int sg_tracer_same_storage(const sg_tracer *t, sg_value a, sg_value b);

/* With on set, every shape rule of the tracer checks that each Max, Min,
 * FloorDiv and Mod in the sizes, strides and offset it makes is already
 * what the environment's facts simplify it to (up to its replacements),
 * and fails the call with SG_EINTERNAL
 * ("size lint: ...") where it is not: the invariant of the rules' folding,
 * for tests (the tool turns it on where SG_LINT_SIZES is set). */
void sg_tracer_lint_sizes(sg_tracer *t, int on);

/* Check the traced graph: its invariants (sg_tracer_lint), and that it
 * replays (subgraphs too): recorded again node by node
 * through the entry every pass uses (each shape rule runs again, with what
 * the whole trace taught the environment), every node gives a value of the
 * same kind, dtype and rank whose sizes, strides and offset the environment
 * proves equal to the traced ones (where its reasoning cannot, equal at
 * the hints, where the trace was checked; a symbol without a hint must be
 * proved). The environment is left as it was. For
 * tests, and for front ends under development.
 * Errors: SG_EINTERNAL naming the first problem, SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_tracer_verify(sg_tracer *t);

/* The graph as FX-like Python source, and the names of its operators in
 * order separated by spaces ("view mul.Tensor copy_"); *out is freed with
 * sg_free. Errors: SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_tracer_print(sg_tracer *t, sg_give char **out);
/* The graph in Graphviz's DOT language (`dot -Tsvg`): a box per call, an
 * ellipse per placeholder and for the output, a diamond per runtime assert,
 * edges from each argument's producer. Errors: SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_tracer_print_dot(sg_tracer *t, sg_give char **out);
SG_WARN_UNUSED sg_status sg_tracer_ops(sg_tracer *t, sg_give char **out);
/* The same of the graph named graph: "" or NULL for the traced graph, or
 * one of its subgraphs ("cond_true_0"): the operator names of its calls
 * (as sg_tracer_ops), or the names of its placeholders separated by ", "
 * (as the printed graph names them). *out is freed with sg_free. Errors:
 * SG_EINVAL (NULL, no graph of that name), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_tracer_graph_ops(const sg_tracer *t, const char *graph, sg_give char **out);
SG_WARN_UNUSED sg_status sg_tracer_graph_placeholders(const sg_tracer *t, const char *graph, sg_give char **out);
/* Check the graph's invariants (one output node, last; every argument
 * given by an earlier node; every symbol of every expression an input of
 * the environment or bound earlier in the graph ...): SG_OK, or
 * SG_EINTERNAL naming the first problem and its node; SG_EINVAL (NULL). */
SG_WARN_UNUSED sg_status sg_tracer_lint(const sg_tracer *t);

#ifdef __cplusplus
}
#endif
#endif /* SG_GRAPH_H */
