/* The exec layer (doc/design.md, "The pipeline"): concrete
 * strided tensors and the execution of graph nodes on them.
 *
 * A concrete tensor (sg__xtensor) views a storage (sg__xstorage: a flat
 * array of elements of one dtype) through sizes, strides and an offset, as
 * a PyTorch tensor does; views share their storage, and a tensor shares its
 * version counter (sg__xversion) with its views and with detach() of it
 * (not with .data, which gets a fresh one), as PyTorch's VariableVersion.
 * All three are reference counted.
 *
 * A run (sg__xrun) executes the nodes of a graph (graph/graph.h) one at a
 * time, in order, holding a concrete value for each value of the graph and
 * the values of the symbols bound so far. A node's output layout is its fake
 * tensor's sizes, strides and offset evaluated under those bindings: the
 * kernels never compute shapes, the shape rules did. An output whose fake
 * storage id is that of a tensor argument shares that argument's concrete
 * storage (views, in-place and out= forms, set_); any other output gets a
 * new storage. Data-dependent nodes (nonzero, masked_select, item) compute
 * their values first and bind the unbacked symbols the node binds (the
 * node's binds, in order), then lay out their output.
 *
 * The graph may grow while a run holds it (eager execution runs each node as
 * the tracer records it): the run grows its tables as needed. */
#ifndef SG_EXEC_EXEC_H
#define SG_EXEC_EXEC_H

#include "graph/graph.h"
#include "shapeguard/exec.h"

typedef struct sg__xstorage {
    uint32_t refs;
    sg_ctx *ctx;    /* whose tensor bytes it counts in (sg__xmem) */
    uint8_t dtype;  /* sg_dtype */
    int64_t numel;  /* elements */
    void *data;     /* double (f64), float (f32), int64_t (i64), uint8_t 0/1 (b8) */
} sg__xstorage;

typedef struct sg__xversion {
    uint32_t refs;
    uint64_t n;  /* bumped by each write through a tensor that shares it */
    void *block; /* the block it lives in when it was made with a tensor (freed with its last
                    reference, the tensor's own included), else NULL: a block of its own */
} sg__xversion;

/* The public sg_tensor (shapeguard/exec.h). */
typedef struct sg_tensor {
    uint32_t refs;
    sg__xstorage *st;   /* one reference */
    sg__xversion *ver;  /* one reference */
    uint8_t dtype;      /* the storage's */
    bool requires_grad;
    uint32_t ndim;
    uint32_t capdims;   /* how many dimensions dims has room for (sg__xt_set_layout may move them out) */
    int64_t offset;
    int64_t *sizes;     /* ndim entries, in this tensor's own block (dims) */
    int64_t *strides;   /* ndim entries, after the sizes */
    int64_t dims[];     /* the sizes, then the strides: a block of the tensor's size */
} sg__xtensor;

/* The bytes of tensor memory live in ctx now (every storage's header and
 * elements, every tensor's header; version counters are not counted) and
 * the most that were live at once since ctx was made or since the last
 * sg__xmem_reset_peak. Either pointer may be NULL. */
void sg__xmem(const sg_ctx *ctx, size_t *live, size_t *peak);
/* Start the peak over from the bytes live now. */
void sg__xmem_reset_peak(sg_ctx *ctx);

/* A new contiguous tensor of the given sizes (a storage of exactly its
 * elements, zero-filled, a fresh version counter at 0), one reference.
 * Errors: SG_ELIMIT (more elements than fit in memory sizes), SG_ENOMEM. */
sg_status sg__xt_new(sg_ctx *ctx, sg__xtensor **out, sg_dtype dtype, size_t ndim, const int64_t *sizes);
/* A tensor viewing st (which it takes a reference to) with the layout given
 * and version counter ver (a reference taken; NULL: a fresh one). Errors:
 * SG_ESHAPE (an element outside the storage), SG_ENOMEM. */
sg_status sg__xt_view(sg_ctx *ctx, sg__xtensor **out, sg__xstorage *st, sg__xversion *ver, size_t ndim,
                      const int64_t *sizes, const int64_t *strides, int64_t offset);
/* A new storage of numel zeroed elements. Errors: SG_ELIMIT, SG_ENOMEM. */
sg_status sg__xst_new(sg_ctx *ctx, sg__xstorage **out, sg_dtype dtype, int64_t numel);
/* A fresh version counter at 0, one reference. NULL when memory runs out
 * (the context's error then SG_ENOMEM). */
sg__xversion *sg__xver_new(sg_ctx *ctx);
/* t itself laid out anew (what as_strided_ and the other in-place view
 * operators do to a tensor object): ndim sizes and strides and an offset
 * within its storage (the caller checked the extent). Its version counter
 * is not moved. Errors: SG_ELIMIT (more than SG_MAX_DIMS), SG_ENOMEM (t
 * then unchanged). */
sg_status sg__xt_set_layout(sg_ctx *ctx, sg__xtensor *t, size_t ndim, const int64_t *sizes, const int64_t *strides,
                            int64_t offset);
/* t views st from now on (what set_ does to a tensor object; its layout is
 * the caller's to set, and its dtype must be st's). */
void sg__xt_set_storage(sg__xtensor *t, sg__xstorage *st);
void sg__xt_ref(sg__xtensor *t);
void sg__xt_unref(sg__xtensor *t);  /* NULL is fine */
void sg__xst_unref(sg__xstorage *s);
void sg__xver_unref(sg__xversion *v);
int64_t sg__xt_numel(const sg__xtensor *t);
/* Element at flat row-major index i of t, read as a double (bools 0/1) or
 * as an int64 (floats truncated toward zero, as a cast). */
double sg__xt_get_f(const sg__xtensor *t, int64_t i);
int64_t sg__xt_get_i(const sg__xtensor *t, int64_t i);
/* Write element i (row-major) of t, converted to t's dtype. */
void sg__xt_set_f(sg__xtensor *t, int64_t i, double v);
/* The same from an int64 (exact for int64 tensors beyond 2**53). */
void sg__xt_set_i(sg__xtensor *t, int64_t i, int64_t v);
/* The storage index of element i (row-major) of t. */
int64_t sg__xt_pos(const sg__xtensor *t, int64_t i);
/* The elements of t as Python prints t.tolist(): nested lists, floats as
 * repr(float) ("0.5", "-2.0", "inf", "nan"), ints, True/False; a 0-d tensor
 * as its one element. *out is freed with sg_free. Errors: SG_ENOMEM. */
sg_status sg__xt_print(sg_ctx *ctx, char **out, const sg__xtensor *t);

/* A concrete value of a graph value. SG_XV_LIST has no payload: its
 * elements are the concrete values of the graph's list entries. */
typedef enum sg__xvkind { SG_XV_UNSET, SG_XV_TENSOR, SG_XV_INT, SG_XV_BOOL, SG_XV_FLOAT, SG_XV_NONE, SG_XV_LIST } sg__xvkind;
typedef struct sg__xval {
    uint8_t kind; /* sg__xvkind */
    union {
        sg__xtensor *t; /* a reference owned by the run */
        int64_t i;
        bool b;
        double f;
    } u;
} sg__xval;

typedef struct sg__xrun sg__xrun;

/* A run over graph g (borrowed: it must outlive the run; it may grow).
 * Errors: SG_ENOMEM. */
sg_status sg__xrun_new(sg_ctx *ctx, const sg__graph *g, sg__xrun **out);
void sg__xrun_free(sg__xrun *r);
/* Room for vals values in the run's table (best effort, as sg__graph_reserve). */
void sg__xrun_reserve(sg__xrun *r, size_t vals);

/* Give placeholder value v its concrete value (a tensor: the run takes a
 * reference). For a tensor, each size, stride and offset of v's fake that
 * is a bare symbol not bound yet is bound to the concrete one; then every
 * one of them must evaluate to the concrete one (else SG_ESHAPE naming the
 * placeholder, the dimension and both values). For an int, a bare symbol is
 * bound likewise. Symbol placeholders need no value: they take their
 * symbol's binding when their node runs (SG_EUNBOUND if there is none).
 * Errors: SG_EINVAL (v not a placeholder, or a value of another kind),
 * SG_ESHAPE, SG_ENOMEM. */
sg_status sg__xrun_input(sg__xrun *r, uint32_t v, const sg__xval *x);
/* The same without the binding and the checks: for a value whose layout
 * r's bindings already fit (r took them, sg__xrun_bind_all, from a run that
 * checked it: the aot wrapper passes its caller's inputs on). Errors:
 * SG_EINVAL (not a placeholder, a tensor for a number or the reverse),
 * SG_ENOMEM. */
sg_status sg__xrun_input_bound(sg__xrun *r, uint32_t v, const sg__xval *x);
/* The hidden base of tensor input v (sg_tracer_input_base) takes base's
 * layout: its bare symbols bound, its expressions checked (SG_ESHAPE, as an
 * input's). An input without a hidden base: nothing to do. */
sg_status sg__xrun_input_base(sg__xrun *r, uint32_t v, const sg__xtensor *base);

/* Run node n: a call executes its kernel, an assert evaluates its condition
 * (SG_EASSERT "runtime assertion failed: COND" when false), a placeholder
 * checks it has its value, the output does nothing. Errors: SG_EASSERT,
 * SG_ESHAPE (a layout outside its storage, an index out of range at run
 * time as PyTorch raises it), SG_EUNSUPPORTED (an operator without a
 * kernel), SG_EUNBOUND, SG_ENOMEM. On an error the values of earlier nodes
 * stay as they were. */
sg_status sg__xrun_node(sg__xrun *r, uint32_t n);
/* Run every node not run yet, in order (the next after the last run). */
sg_status sg__xrun_rest(sg__xrun *r);

/* The concrete value of graph value v (SG_XV_UNSET before its node ran). */
const sg__xval *sg__xrun_value(const sg__xrun *r, uint32_t v);
/* The value bound to symbol sym; 0 when it is not bound. */
int sg__xrun_sym(const sg__xrun *r, const sg_expr *sym, int64_t *out);
/* Evaluate an integer or boolean expression under the bindings (booleans
 * give 0/1). Errors: SG_EUNBOUND, SG_EZERODIV, SG_ELIMIT (beyond int64). */
sg_status sg__xrun_eval(sg__xrun *r, const sg_expr *e, int64_t *out);
/* Bind every symbol from binds (a run over a graph of the same
 * environment) as it does. Errors: SG_ENOMEM. */
sg_status sg__xrun_bind_all(sg__xrun *r, const sg__xrun *from);
/* Give tensor value v (already run) a fresh version counter at 0, not
 * shared with anything (what .data gives). Errors: SG_EINVAL, SG_ENOMEM. */
sg_status sg__xrun_fresh_version(sg__xrun *r, uint32_t v);

/* Plan the release of dead values, once the graph is complete (its root
 * output recorded; before that, nothing is done): from then on, each node
 * that runs releases the run's reference to every tensor value whose last
 * use it is (the last node of its scope taking it as an argument or in a
 * list; what a branch returns dies at its cond node; a value no node takes
 * dies at its own node), as FX's interpreter frees its environment. Never
 * released: the root's outputs, its inputs and every later version of an
 * input tensor (an in-place or out= write of it), which the caller reads
 * after the run. A storage lives while a tensor viewing it does (it is
 * reference counted), so releasing a dead value never frees what a live
 * view sees. The graph must not grow after. Errors: SG_ENOMEM (no plan:
 * the run keeps every value, as before). */
sg_status sg__xrun_plan(sg__xrun *r);
/* Before the plan: value v is never released (the caller reads it after
 * the run). Errors: SG_ENOMEM. */
sg_status sg__xrun_pin(sg__xrun *r, uint32_t v);
/* Give value v of r's graph the value x (a tensor: a reference taken),
 * whatever node gives it: what a caller that ran the program another way
 * (the aot layer's compiled program) reports through r. Errors: SG_EINVAL
 * (no such value), SG_ENOMEM. */
sg_status sg__xrun_set(sg__xrun *r, uint32_t v, const sg__xval *x);
/* Release the run's reference to the value of v (its slot unset). */
void sg__xrun_release(sg__xrun *r, uint32_t v);

/* ---- runs as the public API gives them (session.c) ----
 * An sg_run is an sg__xrun with the tracer whose graph it runs. */
/* The run behind r. */
sg__xrun *sg__run_xrun(const sg_run *r);
/* The tracer whose graph r runs. */
const sg_tracer *sg__run_tracer(const sg_run *r);

/* ---- eager execution (eager.c) ----
 * An eager executor owns an environment of its own (every input size a
 * constant), a tracer over it and a run of its graph: each operator call
 * is recorded, then run at once on concrete tensors; the unbacked symbols
 * of a data-dependent result become the constants their node computed, so
 * that what follows sees plain numbers, as PyTorch's eager mode does. This
 * is the walker's eager mode (front): it asks the executor to record and
 * run a call; it never writes into the graph itself. */
typedef struct sg__xeager sg__xeager;

/* Errors: SG_ENOMEM. */
sg_status sg__xeager_new(sg_ctx *ctx, sg__xeager **out);
void sg__xeager_free(sg__xeager *e);
/* Room reserved ahead for about ops operator calls (at most 2**15 counted):
 * the graph's and the run's tables then grow without copying until they
 * pass it. Best effort: when memory runs out nothing is reserved and
 * nothing is reported (they grow as they go). */
void sg__xeager_reserve(sg__xeager *e, size_t ops);
sg_env *sg__xeager_env(const sg__xeager *e);
sg_tracer *sg__xeager_tracer(const sg__xeager *e);
sg_run *sg__xeager_run(const sg__xeager *e);
/* A tensor input named name: x's layout as constants, x as its concrete
 * value (the run takes a reference; writes bump x's version counter). An
 * input viewing the storage of an earlier input aliases it in the graph
 * (sg_tracer_input_view); any other has a storage of x's storage's size.
 * requires_grad as for sg_tracer_input_tensor. *out is its graph value.
 * Errors: those of sg_tracer_input_view and sg__xrun_input, SG_ENOMEM. */
sg_status sg__xeager_input(sg__xeager *e, sg_value *out, const char *name, sg__xtensor *x, int requires_grad);
/* Record a call of schema sch (NULL: of the operator named op) through the
 * tracer, with node flags (SG_NODE_*: set on the node it records before it
 * runs), and run every node it recorded; then replace the unbacked symbols
 * those nodes bound by their values in the values recorded since. *out is
 * the result (sg_tracer_call's). Errors: those of sg_tracer_call (the graph
 * unchanged) and of sg__xrun_node (the nodes recorded stay, unrun). */
sg_status sg__xeager_call(sg__xeager *e, sg_value *out, const char *op, const sg__schema *sch, const sg_arg *args,
                          size_t n, unsigned line, uint8_t flags);
/* Run what the walker recorded through the tracer itself since node
 * first_node and value first_val (a torch.cond its eager mode traces:
 * branches as subgraphs, then the cond node, which this runs), as
 * sg__xeager_call runs what it records. Errors: those of sg__xrun_node. */
sg_status sg__xeager_catch_up(sg__xeager *e, uint32_t first_node, uint32_t first_val);

/* Freeing dead values. Eager values live while the program refers to them
 * (a name, a tuple or list, a closure, a temporary of an expression under
 * way): only the walker knows which, so it tells a collection. When
 * sg__xeager_gc_due says so (the tensor bytes live grew by half what the
 * last collection left, and by at least a threshold, 16 KB; and at least
 * a quarter as many values were made as the last collection's work, so its
 * cost is amortized O(1) per value), the walker calls sg__xeager_gc_begin, then
 * sg__xeager_gc_keep for every value it refers to (and _keep_range for the
 * values made while an expression under way was being evaluated), then
 * sg__xeager_gc_sweep, which releases the run's reference to every other
 * tensor value (inputs are never released). A storage lives while a tensor
 * viewing it lives (reference counts), so a live view keeps its base's
 * elements. Peak memory then stays within about one and a half times the
 * live tensors plus the threshold and a statement's own, whatever the
 * program's length. Errors of _begin and
 * _sweep: SG_ENOMEM (nothing released). work: the walker's own share of
 * the collection's work (roots it looked at). */
bool sg__xeager_gc_due(const sg__xeager *e);
sg_status sg__xeager_gc_begin(sg__xeager *e);
void sg__xeager_gc_keep(sg__xeager *e, sg_value v);
void sg__xeager_gc_keep_range(sg__xeager *e, sg_value lo, sg_value hi);
sg_status sg__xeager_gc_sweep(sg__xeager *e, size_t work);
/* Set the growth threshold (0: a collection at every point the walker
 * offers one, for tests). */
void sg__xeager_gc_threshold(sg__xeager *e, size_t min_bytes);
/* The number of values of the executor's graph (what _keep_range counts in). */
size_t sg__xeager_nvals(const sg__xeager *e);

#endif /* SG_EXEC_EXEC_H */
