/* shapeguard: running captured graphs on concrete tensors.
 *
 * A concrete tensor (sg_tensor) views a storage (a flat array of elements
 * of one dtype) through sizes, strides and an offset, as a PyTorch tensor
 * does; views share their storage and their version counter (bumped by each
 * write through any of them, as PyTorch's VariableVersion). Tensors are
 * reference counted: a function that gives one (sg_give) gives a reference
 * the caller releases with sg_tensor_unref; a function that keeps one takes
 * a reference of its own.
 *
 * A run (sg_run) executes the graph a tracer recorded (graph.h) on concrete
 * inputs: bind each placeholder of the graph, by name or position, to a
 * tensor or an int; run the nodes; read any value of the graph afterwards
 * (the outputs, and every intermediate value) as a tensor or a number. A
 * node's output layout is its fake tensor's sizes, strides and offset
 * evaluated under the symbols the inputs bound (and those data-dependent
 * nodes bound): the kernels never compute shapes, the shape rules did.
 *
 * Runs chain: a run made after an earlier one (sg_run_new's after) starts
 * with every symbol binding of it, so a second graph over the same
 * environment (a backward after its forward) sees the sizes the first one
 * was run with; tensors carry over by giving the earlier run's tensors (its
 * outputs, its saved values) as inputs of the later one. */
#ifndef SG_EXEC_H
#define SG_EXEC_H

#include <shapeguard/graph.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- concrete tensors ---- */

typedef struct sg_tensor sg_tensor;

/* A new contiguous tensor of the given sizes (ndim at most SG_MAX_DIMS),
 * zero-filled, over a storage of exactly its elements, its version counter
 * at 0, not requiring grad. Errors: SG_EINVAL (NULL, ndim beyond
 * SG_MAX_DIMS, a negative size, an unknown dtype), SG_ELIMIT (more
 * elements than memory sizes hold), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_tensor_new(sg_ctx *ctx, sg_give sg_tensor **out, sg_dtype dtype, size_t ndim,
                                       const int64_t *sizes);
/* A view of base's storage with the layout given, sharing base's version
 * counter and its requires_grad (as base.as_strided(sizes, strides,
 * offset)). Errors: SG_EINVAL (NULL, ndim beyond SG_MAX_DIMS), SG_ESHAPE (a
 * negative size or offset, an element outside the storage), SG_ELIMIT (a
 * layout whose extent overflows int64), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_tensor_view(sg_ctx *ctx, sg_give sg_tensor **out, sg_tensor *base, size_t ndim,
                                        const int64_t *sizes, const int64_t *strides, int64_t offset);
/* Take and release a reference (sg_tensor_unref of NULL does nothing). */
void sg_tensor_ref(sg_tensor *t);
void sg_tensor_unref(sg_take sg_tensor *t);

/* Reading a tensor (these do not fail; d < sg_tensor_ndim). */
sg_dtype sg_tensor_dtype(const sg_tensor *t);
size_t sg_tensor_ndim(const sg_tensor *t);
int64_t sg_tensor_size(const sg_tensor *t, size_t d);
int64_t sg_tensor_stride(const sg_tensor *t, size_t d);
int64_t sg_tensor_offset(const sg_tensor *t);
int64_t sg_tensor_numel(const sg_tensor *t);
/* The elements of its storage (which may be more than it views). */
int64_t sg_tensor_storage_numel(const sg_tensor *t);
/* Its version counter: how many writes went through it or a tensor that
 * shares the counter (views, detach()); .data gets a counter of its own. */
uint64_t sg_tensor_version(const sg_tensor *t);
/* Do a and b view one storage? */
int sg_tensor_same_storage(const sg_tensor *a, const sg_tensor *b);
int sg_tensor_requires_grad(const sg_tensor *t);
void sg_tensor_set_requires_grad(sg_tensor *t, int requires_grad);

/* Element i in row-major order (i < sg_tensor_numel): read as a double
 * (bools 0 or 1), or as an int64 (floats truncated toward zero, as a
 * cast); written converted to the tensor's dtype (exact for int64 from an
 * int64). Writing does not bump the version counter (the caller fills its
 * inputs; a kernel's write does). */
double sg_tensor_get_f(const sg_tensor *t, int64_t i);
int64_t sg_tensor_get_i(const sg_tensor *t, int64_t i);
void sg_tensor_set_f(sg_tensor *t, int64_t i, double v);
void sg_tensor_set_i(sg_tensor *t, int64_t i, int64_t v);

/* The elements as Python prints t.tolist(): nested lists, floats as
 * repr(float) ("0.5", "-2.0", "inf", "nan"), ints, True/False; a 0-d
 * tensor as its one element. *out is freed with sg_free. Errors: SG_EINVAL
 * (NULL), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_tensor_print(sg_ctx *ctx, sg_give char **out, const sg_tensor *t);

/* ---- runs ---- */

typedef struct sg_run sg_run;

/* A run of the graph t recorded (t borrowed: it must outlive the run; the
 * graph may still grow, the run follows it). after (NULL: none) is an
 * earlier run over a graph of the same environment whose symbol bindings
 * the new run starts with (copied: after may be freed first). Errors:
 * SG_EINVAL (NULL t, after over another environment), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_run_new(const sg_tracer *t, const sg_run *after, sg_give sg_run **out);
void sg_run_free(sg_take sg_run *r);

/* The inputs of the graph: the placeholders of its root (not of its
 * subgraphs), in order. sg_run_input gives the i-th one's value (read it
 * with sg_tracer_kind, sg_tracer_expr ... of the tracer); sg_run_input_name
 * its name (a tensor: the program's name of the input; a symbol: "s0").
 * i < sg_run_ninputs. */
size_t sg_run_ninputs(const sg_run *r);
sg_value sg_run_input(const sg_run *r, size_t i);
const char *sg_run_input_name(const sg_run *r, size_t i);

/* Give a placeholder its concrete value. _tensor: the run takes a reference
 * to x (writes of the graph into its input go to x's storage and bump x's
 * version counter); each size, stride and offset of the placeholder that is
 * a bare symbol not bound yet is bound to x's, and every other one must
 * evaluate to x's. _int: a symbol's placeholder (an int input) binds its
 * symbol. _named: the tensor placeholder of the root named name. Symbol
 * placeholders left without a value take their symbol's binding when they
 * run. Errors: SG_EINVAL (not a placeholder of the root, a value of another
 * kind, no placeholder of that name), SG_ESHAPE (x's layout does not fit,
 * naming the placeholder, the dimension and both values), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_run_set_tensor(sg_run *r, sg_value placeholder, sg_tensor *x);
SG_WARN_UNUSED sg_status sg_run_set_int(sg_run *r, sg_value placeholder, int64_t value);
SG_WARN_UNUSED sg_status sg_run_set_named(sg_run *r, const char *name, sg_tensor *x);
/* The hidden base of tensor input placeholder (sg_tracer_input_base: a
 * view whose _base the program does not take) is base, the tensor whose
 * storage the input's tensor views: the symbols of the base's layout are
 * bound to base's sizes, strides and offset, and every other expression of
 * it must evaluate to them (the run keeps no reference to base). An input
 * for which the trace recorded no base: nothing to do. Errors: SG_EINVAL
 * (NULL, no tensor input of the root), SG_ESHAPE (base's layout does not
 * fit, naming the input), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_run_set_base(sg_run *r, sg_value placeholder, const sg_tensor *base);

/* Run every node not run yet, in order: calls execute their kernels,
 * runtime asserts are checked. Errors: SG_EASSERT ("runtime assertion
 * failed: COND"), SG_ESHAPE (a layout outside its storage, an index out of
 * range as PyTorch raises it), SG_EUNSUPPORTED (an operator without a
 * kernel), SG_EUNBOUND (an input without its value), SG_ENOMEM. Once the
 * graph's output is recorded, each intermediate tensor is released after
 * its last use (memory follows the live values, as FX's interpreter
 * does): what stays readable after the run are the outputs, the inputs and
 * every later version of an input that an operator wrote (sg_run_tensor of
 * any other tensor value gives NULL). A graph without its output yet keeps
 * every value. On an error the values the nodes after it need stay. */
SG_WARN_UNUSED sg_status sg_run_execute(sg_run *r);

/* The graph's outputs (what sg_tracer_output recorded; 0 before it). */
size_t sg_run_noutputs(const sg_run *r);
sg_value sg_run_output(const sg_run *r, size_t i);

/* The concrete value of graph value v, once its node ran. _tensor: the
 * tensor (borrowed from the run: sg_tensor_ref it to keep it), NULL when v
 * is no tensor or has no value yet. _int: an int or bool value (bools 0 or
 * 1); _float: a float value. Errors of _int and _float: SG_EINVAL (no value
 * of that kind), SG_EUNBOUND (not run yet). */
sg_tensor *sg_run_tensor(const sg_run *r, sg_value v);
SG_WARN_UNUSED sg_status sg_run_int(const sg_run *r, sg_value v, int64_t *out);
SG_WARN_UNUSED sg_status sg_run_float(const sg_run *r, sg_value v, double *out);

/* An integer or boolean expression of the environment evaluated under the
 * run's bindings (booleans give 0 or 1): the sizes of a value
 * (sg_tracer_size) as this run laid them out. Errors: SG_EUNBOUND (a
 * symbol the run has not bound), SG_EZERODIV, SG_ELIMIT (beyond int64). */
SG_WARN_UNUSED sg_status sg_run_eval(sg_run *r, const sg_expr *e, int64_t *out);
/* The value bound to symbol sym: 1 with *out set, or 0 when unbound. */
int sg_run_symbol(const sg_run *r, const sg_expr *sym, int64_t *out);

#ifdef __cplusplus
}
#endif

#endif /* SG_EXEC_H */
