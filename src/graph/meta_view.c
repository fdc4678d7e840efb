/* View operators: the result views the storage of self with new sizes,
 * strides and offset, worked out as PyTorch does (computeStride for view,
 * infer_expand_geometry for expand, the clamping of slice). The in-place
 * forms (t_, transpose_, unsqueeze_, squeeze_, as_strided_, detach_,
 * resize_) give self with the new metadata; resize_ grows self's storage. */
#include <stdio.h>
#include <string.h>

#include "expr/expr_private.h"
#include "graph/meta.h"

/* a == lit, the first letters compared first (most names differ there). */
static inline bool is(const char *a, const char *lit)
{
    return a[0] == lit[0] && !strcmp(a, lit);
}

typedef struct {
    sg__mcall *m;
    uint32_t self;
    size_t n;                   /* result rank */
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
    const sg_expr *offset;
} view;

static void view_init(view *V, sg__mcall *m)
{
    V->m = m;
    V->self = m->a[0].u.v;
    const sg__fake_tensor *t = sg__mt(m, V->self);
    V->n = t->ndim;
    for (size_t d = 0; d < V->n; d++) {
        V->sizes[d] = sg__graph_size(m->g, V->self, d);
        V->strides[d] = sg__graph_stride(m->g, V->self, d);
    }
    V->offset = t->offset;
}

/* The result: a view of self (its _base the root of self's chain of views),
 * or, for the in-place forms, self itself with new metadata; detach shares
 * the storage without being a view. */
static sg_status view_make(view *V, uint32_t *out)
{
    const sg__fake_tensor *t = sg__mt(V->m, V->self);
    uint32_t base = t->base == SG_NOVAL ? V->self : t->base;
    const char *name = V->m->s->name;
    if (is(name, "detach"))
        base = SG_NOVAL;
    else if (V->m->s->flags & SG_OPF_INPLACE)
        base = t->base;
    bool rg = t->requires_grad || t->written_rg; /* t points into the values, which the new one may move */
    sg_status s = sg__meta_tensor(V->m, out, (sg_dtype)t->dtype, V->n, V->sizes, V->strides, V->offset, t->storage);
    if (!s) {
        V->m->g->vals[*out].u.t.base = base;
        V->m->g->vals[*out].u.t.requires_grad = rg && !is(name, "detach") && !is(name, "detach_");
    }
    return s;
}

static const sg_expr *const *arg_list(const sg__mcall *m, const char *name, size_t *n)
{
    int i = sg__schema_arg(m->s, name);
    if (i < 0 || m->a[i].kind != SG_A_EXPRS) {
        *n = 0;
        return NULL;
    }
    *n = m->a[i].u.list.n;
    return m->g->exprs + m->a[i].u.list.off;
}

static bool is_const(const sg_expr *e, slong v)
{
    return e && e->op == SG_OP_INT && fmpz_equal_si(&e->u.val, v);
}

/* ---- view ---- */

static const sg_expr *numel(sg__mcall *m, const sg_expr *const *sizes, size_t n)
{
    const sg_expr *p = m->g->ctx->one;
    for (size_t i = 0; i < n && p; i++)
        p = sg__mul(m->g->ctx, p, sizes[i]);
    return p;
}

/* PyTorch's infer_size: the new shape with its -1 worked out. */
static sg_status infer_size(view *V, const sg_expr *const *shape, size_t n, const sg_expr **out)
{
    sg__mcall *m = V->m;
    sg_ctx *ctx = m->g->ctx;
    const sg_expr *total = numel(m, V->sizes, V->n), *known = ctx->one;
    int infer = -1;
    for (size_t i = 0; i < n; i++) {
        out[i] = shape[i];
        if (is_const(shape[i], -1)) {
            if (infer >= 0)
                return sg__meta_shape_error(m, "only one dimension can be inferred");
            infer = (int)i;
            continue;
        }
        if (shape[i]->op == SG_OP_INT && fmpz_sgn(&shape[i]->u.val) < 0)
            return sg__meta_shape_error(m, "invalid shape dimension");
        if (!(known = sg__mul(ctx, known, shape[i])))
            return sg_ctx_last_error(ctx);
    }
    if (!total)
        return sg_ctx_last_error(ctx);
    if (infer < 0) { /* no -1: the numbers of elements are equal (with -1, c10 asks only what follows) */
        bool ok;
        CHAIN(sg__meta_eval(m, &ok, sg__meta_rel(m, SG_REL_EQ, total, known)));
        return ok ? SG_OK : sg__meta_shape_error(m, "shape is invalid for the input's number of elements");
    }
    bool pos, divides = false;
    CHAIN(sg__meta_eval(m, &pos, sg__meta_rel(m, SG_REL_GT, known, ctx->zero)));
    if (pos) {
        const sg_expr *r = sg__mod(ctx, total, known);
        CHAIN(sg__meta_eval(m, &divides, r ? sg__meta_rel(m, SG_REL_EQ, r, ctx->zero) : NULL));
    }
    if (!divides)
        return sg__meta_shape_error(m, pos ? "shape is invalid for the input's number of elements"
                                           : "cannot infer -1 from a shape of 0 elements");
    if (!(out[infer] = sg__floordiv(ctx, total, known)))
        return sg_ctx_last_error(ctx);
    return SG_OK;
}

/* PyTorch's computeStride: the strides of the new shape, if a view can
 * have it (*ok false otherwise). */
static sg_status compute_stride(view *V, const sg_expr *const *shape, size_t n, const sg_expr **strides, bool *ok)
{
    sg__mcall *m = V->m;
    sg_ctx *ctx = m->g->ctx;
    *ok = false;
    if (V->n == 0) { /* a rank-0 tensor: every stride 1 */
        for (size_t i = 0; i < n; i++)
            strides[i] = ctx->one;
        *ok = true;
        return SG_OK;
    }
    const sg_expr *total = numel(m, V->sizes, V->n);
    bool empty;
    CHAIN(sg__meta_eval_oblivious(m, &empty, total ? sg__meta_rel(m, SG_REL_EQ, total, ctx->zero) : NULL));
    if (empty) { /* no elements: the old strides for the same shape, else contiguous ones */
        bool same = n == V->n;
        for (size_t i = 0; i < n && same; i++)
            if (shape[i] != V->sizes[i]) /* asked: equal sizes may be written differently */
                CHAIN(sg__meta_eval_oblivious(m, &same, sg__meta_rel(m, SG_REL_EQ, shape[i], V->sizes[i])));
        if (same)
            memcpy(strides, V->strides, n * sizeof *strides);
        else
            CHAIN(sg__meta_contiguous(m, strides, shape, n));
        *ok = true;
        return SG_OK;
    }
    long view_d = (long)n - 1;
    const sg_expr *chunk = V->strides[V->n - 1], *tnumel = ctx->one, *vnumel = ctx->one;
    for (long td = (long)V->n - 1; td >= 0; td--) {
        if (!(tnumel = sg__mul(ctx, tnumel, V->sizes[td])))
            return sg_ctx_last_error(ctx);
        bool end = td == 0;
        if (!end) {
            bool ne1, gap = false;
            CHAIN(sg__meta_eval_oblivious(m, &ne1, sg__meta_rel(m, SG_REL_NE, V->sizes[td - 1], ctx->one)));
            const sg_expr *want = sg__mul(ctx, tnumel, chunk);
            if (ne1)
                CHAIN(sg__meta_eval_oblivious(m, &gap, want ? sg__meta_rel(m, SG_REL_NE, V->strides[td - 1], want)
                                                            : NULL));
            end = ne1 && gap;
        }
        if (!end)
            continue;
        while (view_d >= 0) {
            bool less, one;
            CHAIN(sg__meta_eval_oblivious(m, &less, sg__meta_rel(m, SG_REL_LT, vnumel, tnumel)));
            if (!less)
                CHAIN(sg__meta_eval_oblivious(m, &one, sg__meta_rel(m, SG_REL_EQ, shape[view_d], ctx->one)));
            if (!less && !one)
                break;
            if (!(strides[view_d] = sg__mul(ctx, vnumel, chunk)) || !(vnumel = sg__mul(ctx, vnumel, shape[view_d])))
                return sg_ctx_last_error(ctx);
            view_d--;
        }
        bool differ;
        CHAIN(sg__meta_eval_oblivious(m, &differ, sg__meta_rel(m, SG_REL_NE, vnumel, tnumel)));
        if (differ)
            return SG_OK;
        if (td > 0) {
            chunk = V->strides[td - 1];
            tnumel = vnumel = ctx->one;
        }
    }
    *ok = view_d == -1;
    return SG_OK;
}

sg_status sg__meta_view_strides(sg__mcall *m, size_t ndim, const sg_expr *const *sizes, const sg_expr *const *strides,
                                const sg_expr *const *shape, size_t n, const sg_expr **out, bool *ok)
{
    view V = {.m = m, .self = SG_NOVAL, .n = ndim, .offset = m->g->ctx->zero};
    memcpy(V.sizes, sizes, ndim * sizeof *sizes);
    memcpy(V.strides, strides, ndim * sizeof *strides);
    return compute_stride(&V, shape, n, out, ok);
}

/* ---- view over constants: infer_size and computeStride in int64 ----
 *
 * Where self's sizes and strides and the new shape are constants (eager
 * execution, static shapes), infer_size and compute_stride above ask
 * nothing: each question compares two integers. view_const takes the same
 * steps over int64 values and makes the expressions at the end (integers are
 * interned: the same nodes the general path makes; test_graph compares the
 * two). It leaves to the general path (*handled false) every error, a
 * tensor without elements and an overflow. */

static inline bool small_const(const sg_expr *e, int64_t *v)
{
    if (e->op != SG_OP_INT || COEFF_IS_MPZ(e->u.val))
        return false;
    *v = (int64_t)e->u.val;
    return true;
}

static sg_status view_const(view *V, const sg_expr *const *shape, size_t n, const sg_expr **sizes,
                            const sg_expr **strides, bool *ok, bool *handled)
{
    sg__mcall *m = V->m;
    sg_ctx *ctx = m->g->ctx;
    int64_t sz[SG_MAX_DIMS], st[SG_MAX_DIMS], want[SG_MAX_DIMS], total = 1, known = 1;
    *handled = false;
    if (m->g->general_rules || n > SG_MAX_DIMS || V->n == 0)
        return SG_OK;
    for (size_t d = 0; d < V->n; d++)
        if (!small_const(V->sizes[d], &sz[d]) || !small_const(V->strides[d], &st[d]) ||
            __builtin_mul_overflow(total, sz[d], &total))
            return SG_OK;
    if (total == 0)
        return SG_OK; /* compute_stride's case of no elements */
    int infer = -1;
    for (size_t i = 0; i < n; i++) {
        if (!small_const(shape[i], &want[i]))
            return SG_OK;
        if (want[i] == -1 && infer < 0)
            infer = (int)i;
        else if (want[i] < 0 || __builtin_mul_overflow(known, want[i], &known))
            return SG_OK; /* a second -1, a negative size: the general path's error */
    }
    if (infer < 0 ? total != known : known <= 0 || total % known)
        return SG_OK;
    if (infer >= 0)
        want[infer] = total / known;
    /* compute_stride */
    long view_d = (long)n - 1;
    int64_t chunk = st[V->n - 1], tnumel = 1, vnumel = 1, out[SG_MAX_DIMS];
    bool fits = true;
    for (long td = (long)V->n - 1; td >= 0 && fits; td--) {
        int64_t want_st;
        if (__builtin_mul_overflow(tnumel, sz[td], &tnumel))
            return SG_OK;
        if (td > 0 && (sz[td - 1] == 1 || (!__builtin_mul_overflow(tnumel, chunk, &want_st) && st[td - 1] == want_st)))
            continue;
        if (td > 0 && sz[td - 1] != 1 && __builtin_mul_overflow(tnumel, chunk, &want_st))
            return SG_OK;
        while (view_d >= 0 && (vnumel < tnumel || want[view_d] == 1)) {
            if (__builtin_mul_overflow(vnumel, chunk, &out[view_d]) ||
                __builtin_mul_overflow(vnumel, want[view_d], &vnumel))
                return SG_OK;
            view_d--;
        }
        if (vnumel != tnumel)
            fits = false;
        else if (td > 0) {
            chunk = st[td - 1];
            tnumel = vnumel = 1;
        }
    }
    *ok = fits && view_d == -1;
    for (size_t i = 0; i < n; i++) {
        sizes[i] = (int)i == infer ? sg__int_si(ctx, want[i]) : shape[i];
        strides[i] = *ok ? sg__int_si(ctx, out[i]) : ctx->one;
        if (!sizes[i] || !strides[i])
            return sg_ctx_last_error(ctx);
    }
    *handled = true;
    return SG_OK;
}

static sg_status rule_view(view *V)
{
    size_t n;
    const sg_expr *const *shape = arg_list(V->m, "size", &n);
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
    bool ok, handled;
    CHAIN(view_const(V, shape, n, sizes, strides, &ok, &handled));
    if (!handled) {
        CHAIN(infer_size(V, shape, n, sizes));
        CHAIN(compute_stride(V, sizes, n, strides, &ok));
    }
    if (!ok)
        return sg__meta_shape_error(V->m, "view size is not compatible with the input's size and stride (at least "
                                          "one dimension spans across two contiguous subspaces); use reshape");
    V->n = n;
    memcpy(V->sizes, sizes, n * sizeof *sizes);
    memcpy(V->strides, strides, n * sizeof *strides);
    return SG_OK;
}

sg_status sg__meta_reshape_plan(sg__mcall *m, const sg_expr *const *shape, size_t n, const sg_expr **sizes,
                                bool *viewable)
{
    view V;
    view_init(&V, m);
    const sg_expr *strides[SG_MAX_DIMS];
    bool handled;
    CHAIN(view_const(&V, shape, n, sizes, strides, viewable, &handled));
    if (handled)
        return SG_OK;
    CHAIN(infer_size(&V, shape, n, sizes));
    return compute_stride(&V, sizes, n, strides, viewable);
}

/* ---- expand ---- */

static sg_status rule_expand(view *V)
{
    sg__mcall *m = V->m;
    sg_ctx *ctx = m->g->ctx;
    size_t n;
    const sg_expr *const *want = arg_list(m, "size", &n);
    if (n < V->n)
        return sg__meta_shape_error(m, "the number of sizes provided must be greater or equal to the number of "
                                       "dimensions in the tensor");
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
    if (V->n == 0) { /* a 0-dim tensor: every stride 0 */
        for (size_t i = 0; i < n; i++) {
            if (is_const(want[i], -1))
                return sg__meta_shape_error(m, "the expanded size -1 isn't allowed in a leading, non-existing "
                                               "dimension");
            V->sizes[i] = want[i];
            V->strides[i] = ctx->zero;
        }
        V->n = n;
        return SG_OK;
    }
    for (long i = (long)n - 1; i >= 0; i--) {
        long dim = (long)V->n - ((long)n - i);
        const sg_expr *size = dim >= 0 ? V->sizes[dim] : ctx->one;
        const sg_expr *stride = dim >= 0 ? V->strides[dim] : (size_t)i + 1 < n ? sg__mul(ctx, sizes[i + 1], strides[i + 1])
                                                                              : ctx->one;
        const sg_expr *target = want[i];
        if (!stride)
            return sg_ctx_last_error(ctx);
        if (is_const(target, -1)) {
            if (dim < 0)
                return sg__meta_shape_error(m, "the expanded size -1 isn't allowed in a leading, non-existing "
                                               "dimension");
            target = size;
        }
        if (size != target) {
            bool same;
            CHAIN(sg__meta_eval_oblivious(m, &same, sg__meta_rel(m, SG_REL_EQ, size, target)));
            if (!same) {
                bool one;
                CHAIN(sg__meta_eval_oblivious(m, &one, sg__meta_rel(m, SG_REL_EQ, size, ctx->one)));
                if (!one)
                    return sg__meta_shape_error(m, "the expanded size must match the existing size at a "
                                                   "non-singleton dimension");
                stride = ctx->zero;
            }
            size = target;
        }
        sizes[i] = size;
        strides[i] = stride;
    }
    V->n = n;
    memcpy(V->sizes, sizes, n * sizeof *sizes);
    memcpy(V->strides, strides, n * sizeof *strides);
    return SG_OK;
}

/* ---- permutations ---- */

static sg_status rule_permute(view *V)
{
    size_t n;
    const sg_expr *const *dims = arg_list(V->m, "dims", &n);
    if (n != V->n)
        return sg__meta_shape_error(V->m, "the number of dims does not match the rank of the input");
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
    bool seen[SG_MAX_DIMS] = {false};
    for (size_t i = 0; i < n; i++) {
        size_t d;
        CHAIN(sg__meta_dim(V->m, &d, dims[i], V->n));
        if (seen[d])
            return sg__meta_shape_error(V->m, "repeated dim in permute");
        seen[d] = true;
        sizes[i] = V->sizes[d];
        strides[i] = V->strides[d];
    }
    memcpy(V->sizes, sizes, n * sizeof *sizes);
    memcpy(V->strides, strides, n * sizeof *strides);
    return SG_OK;
}

static void swap_dims(view *V, size_t a, size_t b)
{
    const sg_expr *x = V->sizes[a], *y = V->strides[a];
    V->sizes[a] = V->sizes[b];
    V->strides[a] = V->strides[b];
    V->sizes[b] = x;
    V->strides[b] = y;
}

static sg_status rule_transpose(view *V)
{
    size_t a, b;
    CHAIN(sg__meta_dim(V->m, &a, sg__meta_arg_expr(V->m, "dim0"), V->n));
    CHAIN(sg__meta_dim(V->m, &b, sg__meta_arg_expr(V->m, "dim1"), V->n));
    if (V->n)
        swap_dims(V, a, b);
    return SG_OK;
}

static sg_status rule_t(view *V)
{
    if (V->n > 2)
        return sg__meta_shape_error(V->m, "t() expects a tensor with <= 2 dimensions");
    if (V->n == 2)
        swap_dims(V, 0, 1);
    return SG_OK;
}

/* ---- inserting and removing dimensions ---- */

static sg_status rule_unsqueeze(view *V)
{
    size_t d;
    sg_ctx *ctx = V->m->g->ctx;
    CHAIN(sg__meta_dim(V->m, &d, sg__meta_arg_expr(V->m, "dim"), V->n + 1));
    if (V->n == SG_MAX_DIMS)
        return sg__meta_shape_error(V->m, "too many dimensions");
    const sg_expr *stride = d >= V->n ? ctx->one : sg__mul(ctx, V->sizes[d], V->strides[d]);
    if (!stride)
        return sg_ctx_last_error(ctx);
    memmove(V->sizes + d + 1, V->sizes + d, (V->n - d) * sizeof *V->sizes);
    memmove(V->strides + d + 1, V->strides + d, (V->n - d) * sizeof *V->strides);
    V->sizes[d] = ctx->one;
    V->strides[d] = stride;
    V->n++;
    return SG_OK;
}

static void drop_dim(view *V, size_t d)
{
    memmove(V->sizes + d, V->sizes + d + 1, (V->n - d - 1) * sizeof *V->sizes);
    memmove(V->strides + d, V->strides + d + 1, (V->n - d - 1) * sizeof *V->strides);
    V->n--;
}

static sg_status rule_squeeze(view *V)
{
    sg__mcall *m = V->m;
    const sg_expr *dim = sg__meta_arg_expr(m, "dim");
    size_t only = SIZE_MAX;
    if (dim)
        CHAIN(sg__meta_dim(m, &only, dim, V->n));
    for (size_t d = V->n; d-- > 0;) {
        if (only != SIZE_MAX && d != only)
            continue;
        bool one;
        CHAIN(sg__meta_eval_oblivious(m, &one, sg__meta_rel(m, SG_REL_EQ, V->sizes[d], m->g->ctx->one)));
        if (one)
            drop_dim(V, d);
    }
    return SG_OK;
}

/* ---- indexing ---- */

/* The dimension argument "dim" of an indexing op (select, slice, narrow),
 * which a 0-dim tensor does not have. */
static sg_status index_dim(view *V, size_t *d, const char *op)
{
    if (V->n == 0) {
        char what[64];
        snprintf(what, sizeof what, "%s() cannot be applied to a 0-dim tensor", op);
        return sg__meta_shape_error(V->m, what);
    }
    return sg__meta_dim(V->m, d, sg__meta_arg_expr(V->m, "dim"), V->n);
}

static sg_status rule_select(view *V)
{
    sg__mcall *m = V->m;
    sg_ctx *ctx = m->g->ctx;
    size_t d;
    CHAIN(index_dim(V, &d, "select"));
    const sg_expr *index = sg__meta_arg_expr(m, "index"), *size = V->sizes[d];
    const sg_expr *neg = sg__neg(ctx, size);
    bool below, above;
    CHAIN(sg__meta_eval(m, &below, neg ? sg__meta_rel(m, SG_REL_LT, index, neg) : NULL));
    CHAIN(sg__meta_eval(m, &above, sg__meta_rel(m, SG_REL_GE, index, size)));
    if (below || above)
        return sg__meta_shape_error(m, "select(): index out of range");
    if (index->op == SG_OP_INT && fmpz_sgn(&index->u.val) < 0 && !(index = sg__add(ctx, index, size)))
        return sg_ctx_last_error(ctx);
    const sg_expr *shift = sg__mul(ctx, index, V->strides[d]);
    if (!shift || !(V->offset = sg__add(ctx, V->offset, shift)))
        return sg_ctx_last_error(ctx);
    drop_dim(V, d);
    return SG_OK;
}

/* x clamped into [0, size] as slice does, asking where it falls. */
static sg_status clamp_bound(view *V, const sg_expr **x, const sg_expr *size)
{
    sg__mcall *m = V->m;
    sg_ctx *ctx = m->g->ctx;
    bool neg, big;
    CHAIN(sg__meta_eval(m, &neg, sg__meta_rel(m, SG_REL_LT, *x, ctx->zero)));
    if (neg && !(*x = sg__add(ctx, *x, size)))
        return sg_ctx_last_error(ctx);
    CHAIN(sg__meta_eval(m, &neg, sg__meta_rel(m, SG_REL_LT, *x, ctx->zero)));
    if (neg) {
        *x = ctx->zero;
        return SG_OK;
    }
    CHAIN(sg__meta_eval(m, &big, sg__meta_rel(m, SG_REL_GE, *x, size)));
    if (big)
        *x = size;
    return SG_OK;
}

static sg_status slice_dim(view *V, size_t d, const sg_expr *start, const sg_expr *end, const sg_expr *step)
{
    sg__mcall *m = V->m;
    sg_ctx *ctx = m->g->ctx;
    bool pos, before;
    CHAIN(sg__meta_eval(m, &pos, sg__meta_rel(m, SG_REL_GT, step, ctx->zero)));
    if (!pos)
        return sg__meta_shape_error(m, "slice step must be positive");
    const sg_expr *size = V->sizes[d];
    CHAIN(clamp_bound(V, &start, size));
    CHAIN(clamp_bound(V, &end, size));
    CHAIN(sg__meta_eval(m, &before, sg__meta_rel(m, SG_REL_LT, end, start)));
    if (before)
        end = start;
    const sg_expr *len = sg__sub(ctx, end, start);
    const sg_expr *num = len ? sg__add(ctx, len, sg__sub(ctx, step, ctx->one)) : NULL;
    const sg_expr *n = num ? sg__floordiv(ctx, num, step) : NULL;
    const sg_expr *shift = sg__mul(ctx, start, V->strides[d]);
    const sg_expr *stride = sg__mul(ctx, V->strides[d], step);
    if (!n || !shift || !stride || !(V->offset = sg__add(ctx, V->offset, shift)))
        return sg_ctx_last_error(ctx);
    V->sizes[d] = n;
    V->strides[d] = stride;
    return SG_OK;
}

static sg_status rule_slice(view *V)
{
    sg__mcall *m = V->m;
    size_t d;
    CHAIN(index_dim(V, &d, "slice"));
    const sg_expr *start = sg__meta_arg_expr(m, "start"), *end = sg__meta_arg_expr(m, "end");
    return slice_dim(V, d, start ? start : m->g->ctx->zero, end ? end : V->sizes[d], sg__meta_arg_expr(m, "step"));
}

static sg_status rule_narrow(view *V)
{
    sg__mcall *m = V->m;
    sg_ctx *ctx = m->g->ctx;
    size_t d;
    CHAIN(index_dim(V, &d, "narrow"));
    const sg_expr *start = sg__meta_arg_expr(m, "start"), *length = sg__meta_arg_expr(m, "length"), *size = V->sizes[d];
    bool neg, bad;
    CHAIN(sg__meta_eval(m, &neg, sg__meta_rel(m, SG_REL_LT, start, ctx->zero)));
    if (neg && !(start = sg__add(ctx, start, size)))
        return sg_ctx_last_error(ctx);
    const sg_expr *end = sg__add(ctx, start, length);
    CHAIN(sg__meta_eval(m, &bad, sg__meta_rel(m, SG_REL_LT, start, ctx->zero)));
    if (!bad)
        CHAIN(sg__meta_eval(m, &bad, sg__meta_rel(m, SG_REL_LT, length, ctx->zero)));
    if (!bad)
        CHAIN(sg__meta_eval(m, &bad, end ? sg__meta_rel(m, SG_REL_GT, end, size) : NULL));
    if (bad)
        return sg__meta_shape_error(m, "narrow(): start and length out of range");
    return slice_dim(V, d, start, end, ctx->one);
}

/* diagonal(self, offset, dim1, dim2): the two dimensions dropped, the
 * diagonal appended (stride the sum). Its size is PyTorch's
 * std::max(std::min(a, b), 0) over SymInts, each comparison decided where
 * the facts know it (no guard: a square (s0, s0) input gives s0, offset 1
 * gives s0 - 1) and kept as Min/Max where they do not (PyTorch would guard
 * there; we record nothing). */
static sg_status rule_diagonal(view *V)
{
    sg__mcall *m = V->m;
    sg_ctx *ctx = m->g->ctx;
    size_t d1, d2;
    CHAIN(sg__meta_dim(m, &d1, sg__meta_arg_expr(m, "dim1"), V->n));
    CHAIN(sg__meta_dim(m, &d2, sg__meta_arg_expr(m, "dim2"), V->n));
    if (d1 == d2)
        return sg__meta_shape_error(m, "diagonal dimensions cannot be identical");
    const sg_expr *off = sg__meta_arg_expr(m, "offset"), *s1 = V->sizes[d1], *s2 = V->sizes[d2];
    bool pos;
    CHAIN(sg__meta_eval(m, &pos, sg__meta_rel(m, SG_REL_GE, off, ctx->zero)));
    const sg_expr *a = pos ? s1 : sg__add(ctx, s1, off), *b = pos ? sg__sub(ctx, s2, off) : s2;
    const sg_expr *ab[2] = {a, b};
    const sg_expr *mn = a && b ? sg__minmax(ctx, SG_OP_MIN, 2, ab) : NULL;
    const sg_expr *mz[2] = {mn, ctx->zero};
    const sg_expr *size = mn ? sg__minmax(ctx, SG_OP_MAX, 2, mz) : NULL;
    CHAIN(sg__meta_fold(m, &size)); /* asked below in its folded form */
    bool empty;
    CHAIN(sg__meta_eval(m, &empty, sg__meta_rel(m, SG_REL_EQ, size, ctx->zero)));
    if (!empty) {
        const sg_expr *shift = pos ? sg__mul(ctx, off, V->strides[d2]) : sg__mul(ctx, sg__neg(ctx, off), V->strides[d1]);
        if (!shift || !(V->offset = sg__add(ctx, V->offset, shift)))
            return sg_ctx_last_error(ctx);
    }
    const sg_expr *stride = sg__add(ctx, V->strides[d1], V->strides[d2]);
    if (!stride)
        return sg_ctx_last_error(ctx);
    drop_dim(V, d1 > d2 ? d1 : d2);
    drop_dim(V, d1 > d2 ? d2 : d1);
    V->sizes[V->n] = size;
    V->strides[V->n] = stride;
    V->n++;
    return SG_OK;
}

/* unbind(self, dim): a list of selects, one per index; the size is made a
 * constant (guarded), as PyTorch specializes it. */
static sg_status rule_unbind(sg__mcall *m, uint32_t *out)
{
    view V;
    view_init(&V, m);
    size_t d;
    if (V.n == 0)
        return sg__meta_shape_error(m, "unbind() cannot be applied to a 0-dim tensor");
    CHAIN(sg__meta_dim(m, &d, sg__meta_arg_expr(m, "dim"), V.n));
    const sg_expr *n;
    CHAIN(sg_env_evaluate_int(m->env, &n, V.sizes[d], m->op));
    if (!fmpz_fits_si(&n->u.val) || fmpz_cmp_si(&n->u.val, SG_MAX_DIMS * 1024) > 0)
        return sg__err(m->g->ctx, SG_ELIMIT, "%s: unbind into more than %d tensors", m->op, SG_MAX_DIMS * 1024);
    slong count = fmpz_get_si(&n->u.val);
    uint32_t items[SG_MAX_DIMS * 16];
    if (count > (slong)(sizeof items / sizeof *items))
        return sg__err(m->g->ctx, SG_ELIMIT, "%s: unbind into more than %zu tensors", m->op,
                       sizeof items / sizeof *items);
    for (slong i = 0; i < count; i++) {
        view E = V;
        const sg_expr *shift = sg__mul(m->g->ctx, sg__int_si(m->g->ctx, i), V.strides[d]);
        if (!shift || !(E.offset = sg__add(m->g->ctx, V.offset, shift)))
            return sg_ctx_last_error(m->g->ctx);
        drop_dim(&E, d);
        CHAIN(view_make(&E, &items[i]));
    }
    return sg__graph_list(m->g, out, items, (size_t)count);
}

/* ---- explicit metadata ---- */

static sg_status rule_as_strided(view *V)
{
    size_t n, ns;
    const sg_expr *const *size = arg_list(V->m, "size", &n), *const *stride = arg_list(V->m, "stride", &ns);
    if (n != ns)
        return sg__meta_shape_error(V->m, "mismatch in length of strides and shape");
    const sg_expr *off = sg__meta_arg_expr(V->m, "storage_offset");
    V->n = n;
    memcpy(V->sizes, size, n * sizeof *size);
    memcpy(V->strides, stride, n * sizeof *stride);
    if (off)
        V->offset = off;
    /* checkInBoundsForStorage: a layout with elements lies in the storage */
    sg_ctx *ctx = V->m->g->ctx;
    for (size_t d = 0; d < n; d++) {
        bool zero;
        CHAIN(sg__meta_eval_oblivious(V->m, &zero, sg__meta_rel(V->m, SG_REL_EQ, size[d], ctx->zero)));
        if (zero)
            return SG_OK;
    }
    const sg_expr *reach = sg__meta_layout_extent(ctx, n, size, stride, V->offset);
    const sg_expr *have = sg__graph_storage_numel(V->m->g, sg__mt(V->m, V->self)->storage);
    return sg__meta_check(V->m, reach ? sg__meta_rel(V->m, SG_REL_LE, reach, have) : NULL,
                          "setStorage: the sizes, strides and storage offset are out of bounds for the storage");
}

/* resize_: the sizes given, laid out contiguously at self's offset; the
 * storage grows to what they reach (sg__meta_view). */
static sg_status rule_resize(view *V)
{
    sg__mcall *m = V->m;
    size_t n;
    const sg_expr *const *size = arg_list(m, "size", &n);
    if (n > SG_MAX_DIMS)
        return sg__meta_shape_error(m, "too many dimensions");
    if (sg__mt(m, V->self)->requires_grad)
        return sg__err(m->g->ctx, SG_EAUTOGRAD, "%s: cannot resize variables that require grad", m->op);
    int f = sg__schema_arg(m->s, "memory_format");
    if (f >= 0 && m->a[f].kind == SG_A_MEMFMT && m->a[f].u.dtype != SG_CONTIGUOUS_FORMAT)
        return sg__err(m->g->ctx, SG_EUNSUPPORTED, "%s: unsupported: a memory format other than contiguous", m->op);
    memcpy(V->sizes, size, n * sizeof *size);
    V->n = n;
    for (size_t i = 0; i < n; i++) {
        bool neg;
        CHAIN(sg__meta_eval(m, &neg, sg__meta_rel(m, SG_REL_LT, V->sizes[i], m->g->ctx->zero)));
        if (neg)
            return sg__meta_shape_error(m, "negative size");
    }
    return sg__meta_contiguous(m, V->strides, V->sizes, n);
}

static sg_status rule_same(view *V)
{
    (void)V;
    return SG_OK;
}

/* ---- dispatch ---- */

typedef sg_status (*view_fn)(view *V);

static const struct {
    const char *name;
    view_fn fn;
} view_rules[] = {
    {"alias", rule_same},         {"as_strided", rule_as_strided}, {"detach", rule_same},
    {"diagonal", rule_diagonal},
    {"expand", rule_expand},      {"narrow", rule_narrow},         {"permute", rule_permute},
    {"resize", rule_resize},      {"select", rule_select},      {"slice", rule_slice},           {"squeeze", rule_squeeze},
    {"t", rule_t},                {"transpose", rule_transpose},   {"unsqueeze", rule_unsqueeze},
    {"view", rule_view},
};

sg_status sg__meta_view(sg__mcall *m, uint32_t *out)
{
    char base[SG_SCHEMA_NAME];
    size_t len = strlen(m->s->name);
    memcpy(base, m->s->name, len + 1);
    if (len && base[len - 1] == '_') /* the in-place forms */
        base[len - 1] = '\0';
    if (is(base, "unbind"))
        return rule_unbind(m, out);
    if (is(m->s->name, "detach_") && sg__mt(m, m->a[0].u.v)->base != SG_NOVAL)
        return sg__err(m->g->ctx, SG_EAUTOGRAD, "%s: can't detach views in-place; use detach() instead", m->op);
    for (size_t i = 0; i < sizeof view_rules / sizeof *view_rules; i++)
        if (view_rules[i].name[0] == base[0] && !strcmp(view_rules[i].name, base)) {
            view V;
            view_init(&V, m);
            CHAIN(view_rules[i].fn(&V));
            CHAIN(view_make(&V, out));
            return m->s->op == SG_OP_resize_ ? sg__meta_grow_storage(m, *out) : SG_OK;
        }
    return sg__err(m->g->ctx, SG_EINTERNAL, "%s: no view rule", m->op);
}
