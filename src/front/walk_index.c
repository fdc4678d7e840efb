/* The walker (walk_private.h): subscripts: x[i, j:k, None, ...] of a
 * tensor (select, slice, unsqueeze) and of a tuple or list. */

#include "front/walk_private.h"

/* x[i] of an int i: Python's indexing checks i against the size first
 * (PyTorch 1.13's applySelect: an IndexError, before select asks a view
 * made under no_grad for its grad_fn, as x.select(0, i) does first), asked
 * of the environment (guards where the size is a symbol's). */
static sg_status index_in_range(sg_walk *W, const sg__py *at, sg_value v, size_t dim, const sg_expr *index)
{
    const sg_expr *size = sg_tracer_size(W->t, v, dim), *neg = size ? sg__neg(W->ctx, size) : NULL, *e;
    bool above = false, below = false;
    if (!neg)
        return sg_ctx_last_error(W->ctx);
    CHAIN(sg_expr_rel(W->ctx, &e, SG_REL_LT, index, neg)); /* (in the order select's rule asks them) */
    CHAIN(sg__w_truth_of(W, at, e, &below));
    if (!below) {
        CHAIN(sg_expr_rel(W->ctx, &e, SG_REL_GE, index, size));
        CHAIN(sg__w_truth_of(W, at, e, &above));
    }
    if (!above && !below)
        return SG_OK;
    int64_t i, n;
    if (sg_expr_get_si(index, &i) && sg_expr_get_si(size, &n))
        return sg__w_err(W, at, SG_ESHAPE, "index %lld is out of bounds for dimension %zu with size %lld",
                         (long long)i, dim, (long long)n);
    return sg__w_err(W, at, SG_ESHAPE, "index out of bounds for dimension %zu", dim);
}

sg_status sg__w_index_tensor(sg_walk *W, const sg__py *at, wobj *t, const wv *idx, wv *out)
{
    const wv *items = idx;
    uint32_t n = 1;
    if (idx->kind == W_TUPLE) {
        items = idx->u.seq.items;
        n = idx->u.seq.n;
    }
    size_t ndim = sg_tracer_ndim(W->t, t->v);
    uint32_t used = 0; /* dimensions the index consumes */
    for (uint32_t i = 0; i < n; i++)
        if (items[i].kind == W_INT || items[i].kind == W_SLICE)
            used++;
    wv cur = {.kind = W_TENSOR, .u.t = t};
    size_t dim = 0;
    bool seen_ellipsis = false;
    for (uint32_t i = 0; i < n; i++) {
        const wv *x = &items[i];
        wv r;
        if (x->kind == W_ELLIPSIS) {
            if (seen_ellipsis)
                return sg__w_err(W, at, SG_ESHAPE, "an index can only have a single ellipsis ('...')");
            seen_ellipsis = true;
            if (ndim >= used)
                dim += ndim - used;
            continue;
        }
        if (x->kind == W_NONE) {
            wv d = {.kind = W_INT, .u.e = sg__int_si(W->ctx, (slong)dim)};
            sg_arg a[2] = {{.kind = SG_ARG_VALUE, .u.v = cur.u.t->v}, {.kind = SG_ARG_INT, .u.e = d.u.e}};
            CHAIN(sg__w_op_call(W, at, "unsqueeze", a, 2, NULL, &r));
            dim++;
        } else if (x->kind == W_INT || (x->kind == W_BOOL && 0)) {
            if (dim >= sg_tracer_ndim(W->t, cur.u.t->v))
                return sg__w_err(W, at, SG_ESHAPE, "too many indices for tensor of dimension %zu", ndim);
            CHAIN(index_in_range(W, at, cur.u.t->v, dim, x->u.e));
            sg_arg a[3] = {{.kind = SG_ARG_VALUE, .u.v = cur.u.t->v},
                           {.kind = SG_ARG_INT, .u.e = sg__int_si(W->ctx, (slong)dim)},
                           {.kind = SG_ARG_INT, .u.e = x->u.e}};
            CHAIN(sg__w_op_call(W, at, "select.int", a, 3, NULL, &r));
        } else if (x->kind == W_SLICE) {
            if (dim >= sg_tracer_ndim(W->t, cur.u.t->v))
                return sg__w_err(W, at, SG_ESHAPE, "too many indices for tensor of dimension %zu", ndim);
            const wv *sl = x->u.seq.items;
            const sg_expr *st = W->ctx->zero, *en = NULL, *step = W->ctx->one;
            if (sl[0].kind != W_NONE)
                CHAIN(sg__w_want_int(W, at, &sl[0], &st, "a slice start"));
            if (sl[1].kind != W_NONE)
                CHAIN(sg__w_want_int(W, at, &sl[1], &en, "a slice end"));
            else if (!(en = sg__int_si(W->ctx, INT64_MAX)))
                return sg_ctx_last_error(W->ctx);
            if (sl[2].kind != W_NONE)
                CHAIN(sg__w_want_int(W, at, &sl[2], &step, "a slice step"));
            sg_arg a[5] = {{.kind = SG_ARG_VALUE, .u.v = cur.u.t->v},
                           {.kind = SG_ARG_INT, .u.e = sg__int_si(W->ctx, (slong)dim)},
                           {.kind = SG_ARG_INT, .u.e = st},
                           {.kind = SG_ARG_INT, .u.e = en},
                           {.kind = SG_ARG_INT, .u.e = step}};
            CHAIN(sg__w_op_call(W, at, "slice.Tensor", a, step == W->ctx->one ? 4 : 5, NULL, &r));
            dim++;
        } else {
            return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: indexing a tensor with a %s", sg__w_kind_name(x));
        }
        cur = r;
    }
    *out = cur;
    return SG_OK;
}

sg_status sg__w_index_seq(sg_walk *W, const sg__py *at, const wv *seq, const wv *idx, wv *out)
{
    int64_t n = seq->u.seq.n;
    if (idx->kind == W_SLICE) {
        int64_t lo = 0, hi = n, step = 1;
        const wv *sl = idx->u.seq.items;
        if (sl[2].kind != W_NONE)
            CHAIN(sg__w_want_const(W, at, &sl[2], &step, "a slice step"));
        if (step != 1)
            return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: a tuple slice with a step");
        if (sl[0].kind != W_NONE)
            CHAIN(sg__w_want_const(W, at, &sl[0], &lo, "a slice start"));
        if (sl[1].kind != W_NONE)
            CHAIN(sg__w_want_const(W, at, &sl[1], &hi, "a slice end"));
        if (lo < 0)
            lo = lo + n < 0 ? 0 : lo + n;
        if (hi < 0)
            hi = hi + n < 0 ? 0 : hi + n;
        if (lo > n)
            lo = n;
        if (hi > n)
            hi = n;
        if (hi < lo)
            hi = lo;
        *out = (wv){.kind = seq->kind, .u.seq = {(uint32_t)(hi - lo), seq->u.seq.items + lo}};
        return SG_OK;
    }
    int64_t i;
    CHAIN(sg__w_want_const(W, at, idx, &i, "an index"));
    if (i < 0)
        i += n;
    if (i < 0 || i >= n)
        return sg__w_err(W, at, SG_ESHAPE, "%s index out of range", sg__w_kind_name(seq));
    *out = seq->u.seq.items[i];
    return SG_OK;
}
