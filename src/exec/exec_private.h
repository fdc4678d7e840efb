/* The exec layer's private parts: element access by storage position, the
 * arguments of a call as the kernels see them, and the services run.c
 * gives the kernels (kernels.c): the output of a node laid out from its
 * fake tensor, the binding of the node's unbacked symbols. */
#ifndef SG_EXEC_PRIVATE_H
#define SG_EXEC_PRIVATE_H

#include "exec/exec.h"
#include "util/util_private.h"

/* ---- elements by storage position ---- */

static inline bool sg__xdt_float(int d)
{
    return d == SG_FLOAT64 || d == SG_FLOAT32;
}

/* A double converted to int64 as x86-64's cvttsd2si does (what a C++
 * static_cast gives there): truncated toward zero, INT64_MIN for NaN and
 * values out of range (the C cast is undefined for those). */
static inline int64_t sg__xf2i(double v)
{
    if (v != v || v >= 9223372036854775808.0 || v < -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

static inline double sg__xst_get_f(const sg__xstorage *s, int64_t p)
{
    switch (s->dtype) {
    case SG_FLOAT64: return ((const double *)s->data)[p];
    case SG_FLOAT32: return ((const float *)s->data)[p];
    case SG_INT64: return (double)((const int64_t *)s->data)[p];
    default: return ((const uint8_t *)s->data)[p];
    }
}

static inline int64_t sg__xst_get_i(const sg__xstorage *s, int64_t p)
{
    switch (s->dtype) {
    case SG_FLOAT64: return sg__xf2i(((const double *)s->data)[p]);
    case SG_FLOAT32: return sg__xf2i(((const float *)s->data)[p]);
    case SG_INT64: return ((const int64_t *)s->data)[p];
    default: return ((const uint8_t *)s->data)[p];
    }
}

static inline void sg__xst_set_f(sg__xstorage *s, int64_t p, double v)
{
    switch (s->dtype) {
    case SG_FLOAT64: ((double *)s->data)[p] = v; break;
    case SG_FLOAT32: ((float *)s->data)[p] = (float)v; break;
    case SG_INT64: ((int64_t *)s->data)[p] = sg__xf2i(v); break;
    default: ((uint8_t *)s->data)[p] = v != 0; break;
    }
}

static inline void sg__xst_set_i(sg__xstorage *s, int64_t p, int64_t v)
{
    switch (s->dtype) {
    case SG_FLOAT64: ((double *)s->data)[p] = (double)v; break;
    case SG_FLOAT32: ((float *)s->data)[p] = (float)v; break;
    case SG_INT64: ((int64_t *)s->data)[p] = v; break;
    default: ((uint8_t *)s->data)[p] = v != 0; break;
    }
}

/* The storage positions of a tensor's elements in row-major order: start
 * with sg__xpos_init, read pos, step with sg__xpos_next. Strides may be
 * replaced (broadcasting: 0 where an operand repeats). */
typedef struct sg__xpos {
    size_t ndim;
    int64_t pos;
    const int64_t *sizes;
    int64_t strides[SG_MAX_DIMS];
    int64_t idx[SG_MAX_DIMS];
} sg__xpos;

void sg__xpos_init(sg__xpos *it, size_t ndim, const int64_t *sizes, const int64_t *strides, int64_t offset);
static inline void sg__xpos_next(sg__xpos *it)
{
    for (size_t d = it->ndim; d-- > 0;) {
        it->pos += it->strides[d];
        if (++it->idx[d] < it->sizes[d])
            return;
        it->pos -= it->strides[d] * it->sizes[d];
        it->idx[d] = 0;
    }
}

/* Grow st to at least numel elements (new ones zero), in place: every
 * tensor viewing it sees the new elements (PyTorch's storage resize).
 * Errors: SG_ELIMIT, SG_ENOMEM (st then unchanged). */
sg_status sg__xst_grow(sg_ctx *ctx, sg__xstorage *st, int64_t numel);
/* The storage range [*lo, *hi) the layout reaches (empty: 0, 0). Errors:
 * SG_ELIMIT when it overflows int64, SG_ESHAPE for a negative size. */
sg_status sg__xlayout_extent(sg_ctx *ctx, size_t ndim, const int64_t *sizes, const int64_t *strides, int64_t offset,
                             int64_t *lo, int64_t *hi);
/* sg__xt_view of a layout whose extent [lo, hi) sg__xlayout_extent gave
 * (not worked out again). */
sg_status sg__xt_view_reaching(sg_ctx *ctx, sg__xtensor **out, sg__xstorage *st, sg__xversion *ver, size_t ndim,
                               const int64_t *sizes, const int64_t *strides, int64_t offset, int64_t lo, int64_t hi);

/* ---- a call, as the kernels see it ---- */

typedef enum {
    SG_XA_NONE,
    SG_XA_TENSOR,
    SG_XA_INT,
    SG_XA_BOOL,
    SG_XA_FLOAT,
    SG_XA_DTYPE,
    SG_XA_INTS,
    SG_XA_TENSORS,
    SG_XA_MEMFMT
} sg__xakind;

typedef struct sg__xarg {
    uint8_t kind;   /* sg__xakind */
    bool given;     /* passed by the node (not a default) */
    int64_t i;      /* INT; DTYPE, MEMFMT */
    double f;       /* FLOAT */
    bool b;         /* BOOL */
    sg__xtensor *t; /* TENSOR: borrowed from the run */
    uint32_t n;     /* INTS, TENSORS: entries */
    int64_t *ints;  /* INTS: n entries (the call's buffer) */
    sg__xtensor **ts; /* TENSORS: n tensors borrowed from the run (the call's array) */
} sg__xarg;

typedef struct sg__xcall {
    sg__xrun *r;
    sg_ctx *ctx;
    const sg__graph *g;
    uint32_t node;
    const sg__gnode *n;
    const sg__schema *s;
    const char *op;              /* "mul.Tensor", for messages (the run's copy, or opbuf) */
    char opbuf[2 * SG_SCHEMA_NAME];
    sg__xarg a[SG_SCHEMA_ARGS];  /* by schema position */
    int64_t ibuf[SG_SCHEMA_ARGS][SG_MAX_DIMS];
    bool lists;                  /* a list argument's array was allocated (run_call frees it) */
} sg__xcall;

/* The index of the schema argument named name, or -1. */
static inline int sg__xc_at(const sg__xcall *c, const char *name)
{
    return sg__schema_arg(c->s, name);
}

/* The concrete output of graph value v (a tensor value of this node's
 * output, or an element of its output list): v's fake layout evaluated
 * under the bindings; the storage of the tensor argument whose fake storage
 * id is v's (grown if that argument is written and the layout needs more),
 * else a new zeroed storage just large enough; the version counter of the
 * written argument (in-place, out=, set_), of the viewed argument (a view
 * sharing its storage, but for a node flagged SG_NODE_DATA: `.data`), else
 * a fresh one. *out is a new reference the
 * caller gives to sg__xc_set or releases. Errors: SG_ESHAPE (a layout
 * outside a storage it may not grow), SG_EUNBOUND, SG_ELIMIT, SG_ENOMEM. */
sg_status sg__xc_output(sg__xcall *c, uint32_t v, sg__xtensor **out);
/* Set the concrete value of graph value v (the run takes x's reference). */
void sg__xc_set(sg__xcall *c, uint32_t v, sg__xval x);
/* Bind the node's i-th unbacked symbol to val. Errors: SG_EINTERNAL (the
 * node binds fewer), SG_ENOMEM. */
sg_status sg__xc_bind(sg__xcall *c, size_t i, int64_t val);
/* Evaluate an expression under the run's bindings (sg__xrun_eval). */
sg_status sg__xc_eval(sg__xcall *c, const sg_expr *e, int64_t *out);

/* The kernel of schema s (its row's KERNEL column in graph/ops.def), or
 * NULL. A kernel reads c->a, makes its outputs
 * (sg__xc_output, then sg__xc_set for each value of the node), writes
 * their elements and bumps the version counters of the tensors it writes;
 * on an error it leaves every earlier value (and storage) as it was. */
typedef sg_status (*sg__xkernel)(sg__xcall *c);
sg__xkernel sg__xkernel_find(const sg__schema *s);

/* What the overlap checks ask of a call that writes a tensor (overlap.c):
 * nothing (metadata changes, and fill_, zero_ and the creation operators'
 * out=, which write one value everywhere); an elementwise call
 * (TensorIterator's operators, copy_), which may read its own output at
 * the very position it writes; or a call that reads its inputs as a whole
 * (sum, mm, cat ... out=), whose out may share no position with them. */
enum { SG_XOV_NONE, SG_XOV_ELEMENTWISE, SG_XOV_WHOLE };
int sg__xkernel_overlap(const sg__schema *s);
/* The memory-overlap checks of the call c, before its kernel runs, on the
 * concrete layouts (overlap.c says what they refuse): SG_OK, or
 * SG_EALIASING with PyTorch's message (the written tensor reaches a
 * position twice; an input shares a position with it other than element
 * for element). Also SG_ENOMEM, and evaluation errors of the out= layout. */
sg_status sg__xc_check_overlap(sg__xcall *c);
/* The same checks for call node node of graph g, on the layouts its fake
 * tensors take under run r's bindings (r: a run over a graph of g's
 * environment that bound every symbol they use), storages told apart by
 * their fake ids: what a compiled program (aot) checks for the in-place
 * calls of the captured graph that functionalization turned into
 * functional ones. Errors: as sg__xc_check_overlap, and SG_EUNBOUND (a
 * symbol not bound yet). */
sg_status sg__xnode_check_overlap(sg_ctx *ctx, const sg__graph *g, uint32_t node, sg__xrun *r);

/* A strided layout: the storage positions offset + sum of i[d] * strides[d]
 * for 0 <= i[d] < sizes[d]. */
typedef struct sg__xlayout {
    size_t ndim;
    int64_t sizes[SG_MAX_DIMS], strides[SG_MAX_DIMS], offset;
} sg__xlayout;
/* Does l reach some storage position twice (*out)? Exact (overlap.c).
 * Errors: SG_ESHAPE (a negative size), SG_ELIMIT (more than SG_MAX_DIMS
 * dimensions, positions beyond int64), SG_ENOMEM. */
sg_status sg__xlayout_repeats(sg_ctx *ctx, const sg__xlayout *l, bool *out);
/* Do a and b (over one storage) reach a common position (*out)? Exact.
 * Errors: as sg__xlayout_repeats. */
sg_status sg__xlayouts_meet(sg_ctx *ctx, const sg__xlayout *a, const sg__xlayout *b, bool *out);

#endif /* SG_EXEC_PRIVATE_H */
