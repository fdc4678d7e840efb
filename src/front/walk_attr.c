/* The walker (walk_private.h): attributes and methods of tensors that are no aten operator of
 * their own (shape, size(), dim(), numel(), item(), tolist(), .data,
 * requires_grad), and the names of the torch module. */
#include <stdio.h>

#include "front/walk_private.h"

/* a == lit (not empty), the first two letters compared first (most names differ there). */
static inline bool is(const char *a, const char *lit)
{
    return a[0] == lit[0] && a[1] == lit[1] && (!a[1] || !strcmp(a + 2, lit + 2));
}

/* Is name one of the tensor methods sg__w_tensor_method answers itself? */
static bool own_method(const char *name)
{
    switch (name[0]) {
    case 's': return is(name, "size") || is(name, "stride");
    case 'd': return is(name, "dim");
    case 'n': return is(name, "ndimension") || is(name, "numel");
    case 'i': return is(name, "item");
    case 't': return is(name, "tolist");
    default: return false;
    }
}

/* Is name one of the tensor attributes sg__w_getattr reads itself? */
static bool own_attribute(const char *name)
{
    switch (name[0]) {
    case 's': return is(name, "shape");
    case 'd': return is(name, "data");
    case 'r': return is(name, "requires_grad");
    case 'n': return is(name, "ndim");
    default: return false;
    }
}

static sg_status size_tuple(sg_walk *W, wobj *t, bool strides, wv *out)
{
    size_t n = sg_tracer_ndim(W->t, t->v);
    wv *items = n ? wmem(W, n * sizeof *items) : NULL;
    if (n && !items)
        return sg__nomem(W->ctx);
    for (size_t d = 0; d < n; d++)
        items[d] = (wv){.kind = W_INT,
                        .u.e = strides ? sg_tracer_stride(W->t, t->v, d) : sg_tracer_size(W->t, t->v, d)};
    *out = (wv){.kind = W_TUPLE, .u.seq = {(uint32_t)n, items}};
    return SG_OK;
}

static sg_status dim_index(sg_walk *W, const sg__py *at, wobj *t, const wv *d, size_t *out)
{
    int64_t i;
    CHAIN(sg__w_want_const(W, at, d, &i, "a dimension"));
    int64_t n = (int64_t)sg_tracer_ndim(W->t, t->v);
    int64_t m = n ? n : 1;
    if (i < -m || i >= m)
        return sg__w_err(W, at, SG_ESHAPE,
                         "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                         (long long)-m, (long long)(m - 1), (long long)i);
    *out = (size_t)(i < 0 ? i + m : i);
    return SG_OK;
}

/* The rows of x.tolist() (below), read by select and _local_scalar_dense. */
static sg_status tolist_rows(sg_walk *W, const sg__py *at, wobj *t, wv *out)
{
    size_t n = sg_tracer_ndim(W->t, t->v);
    sg_arg a = {.kind = SG_ARG_VALUE, .u.v = t->v};
    if (n == 0)
        return sg__w_op_call(W, at, "_local_scalar_dense", &a, 1, NULL, out);
    int64_t len;
    const sg_expr *sz = sg_tracer_size(W->t, t->v, 0);
    if (!sg_expr_get_si(sz, &len)) { /* specialize the size, as PyTorch's tolist does */
        const sg_expr *hint;
        CHAIN(sg_env_hint(sg__w_env(W), &hint, sz));
        if (!sg_expr_get_si(hint, &len))
            return sg__w_err(W, at, SG_EDATADEP, "data-dependent: tolist of a tensor of unbacked size");
        const sg_expr *eq;
        bool b;
        CHAIN(sg_expr_rel(W->ctx, &eq, SG_REL_EQ, sz, hint));
        CHAIN(sg__w_truth_of(W, at, eq, &b));
    }
    wv *items = len ? wmem(W, (size_t)len * sizeof *items) : NULL;
    if (len && !items)
        return sg__nomem(W->ctx);
    for (int64_t i = 0; i < len; i++) {
        wv row;
        sg_arg s[3] = {{.kind = SG_ARG_VALUE, .u.v = t->v},
                       {.kind = SG_ARG_INT, .u.e = W->ctx->zero},
                       {.kind = SG_ARG_INT, .u.e = sg__int_si(W->ctx, i)}};
        CHAIN(sg__w_op_call(W, at, "select.int", s, 3, NULL, &row));
        CHAIN(tolist_rows(W, at, row.u.t, &items[i]));
    }
    *out = (wv){.kind = W_LIST, .u.seq = {(uint32_t)len, items}};
    return SG_OK;
}

/* x.tolist(): nested lists of the elements, each read by select and
 * _local_scalar_dense (unbacked symbols for ints and bools in a trace),
 * under no_grad: PyTorch's tolist reads the data, its selects are no
 * autograd calls (a view made under no_grad whose base was written since
 * raises nothing there). */
static sg_status tolist(sg_walk *W, const sg__py *at, wobj *t, wv *out)
{
    int grad = sg_tracer_grad_enabled(W->t);
    CHAIN(sg_tracer_set_grad_enabled(W->t, 0));
    sg_status s = tolist_rows(W, at, t, out);
    sg_status s2 = sg_tracer_set_grad_enabled(W->t, grad);
    return s ? s : s2;
}

sg_status sg__w_data_of(sg_walk *W, const sg__py *at, wobj *t, wv *out)
{
    sg_arg a = {.kind = SG_ARG_VALUE, .u.v = t->v};
    return sg__w_op_call_flags(W, at, "detach", &a, 1, NULL, out, SG_NODE_DATA); /* a version counter of its own */
}

/* A method call on a tensor that is not an aten operator of its own. */
sg_status sg__w_tensor_method(sg_walk *W, const sg__py *at, wobj *t, const char *name, wv *args, size_t n,
                              const char **kwn, wv *kwv, size_t nkw, wv *out, bool *handled)
{
    *handled = true;
    if (!own_method(name)) { /* none of the names below: the operators' methods, at once */
        *handled = false;
        return SG_OK;
    }
    if (is(name, "size") || is(name, "stride")) {
        bool st = name[1] == 't';
        if (nkw || n > 1)
            return sg__w_err(W, at, SG_ETYPE, "%s() takes at most one dimension", name);
        if (n == 0) {
            if (st)
                return size_tuple(W, t, true, out);
            return size_tuple(W, t, false, out);
        }
        size_t d = 0;
        CHAIN(dim_index(W, at, t, &args[0], &d));
        if (sg_tracer_ndim(W->t, t->v) == 0)
            return sg__w_err(W, at, SG_ESHAPE, "%s of a 0-d tensor", name);
        *out = (wv){.kind = W_INT, .u.e = st ? sg_tracer_stride(W->t, t->v, d) : sg_tracer_size(W->t, t->v, d)};
        return SG_OK;
    }
    if (is(name, "dim") || is(name, "ndimension")) {
        *out = (wv){.kind = W_INT, .u.e = sg__int_si(W->ctx, (slong)sg_tracer_ndim(W->t, t->v))};
        return SG_OK;
    }
    if (is(name, "numel")) {
        const sg_expr *p = W->ctx->one;
        for (size_t d = 0; d < sg_tracer_ndim(W->t, t->v); d++)
            CHAIN(sg_expr_mul(W->ctx, &p, p, sg_tracer_size(W->t, t->v, d)));
        *out = (wv){.kind = W_INT, .u.e = p};
        return SG_OK;
    }
    if (is(name, "item")) {
        sg_arg a = {.kind = SG_ARG_VALUE, .u.v = t->v};
        return sg__w_op_call(W, at, "_local_scalar_dense", &a, 1, NULL, out);
    }
    if (is(name, "tolist"))
        return tolist(W, at, t, out);
    (void)kwn;
    (void)kwv;
    *handled = false;
    return SG_OK;
}

sg_status sg__w_getattr(sg_walk *W, const sg__py *at, const wv *obj, const char *name, wv *out)
{
    if (obj->kind == W_TENSOR) {
        wobj *t = obj->u.t;
        if (!own_attribute(name)) { /* none of the names below: a method, or no attribute the language has */
            const pyop *p = own_method(name) ? NULL : pyop_find(W, name);
            if (!own_method(name) && (!p || (p->flags & SG_PYF_FUNC)))
                return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: Tensor.%s", name);
            *out = (wv){.kind = W_METHOD, .u.method = {t, name}};
            return SG_OK;
        }
        if (is(name, "shape"))
            return size_tuple(W, t, false, out);
        if (is(name, "data"))
            return sg__w_data_of(W, at, t, out);
        if (is(name, "requires_grad")) {
            const sg__gval *g = &W->g->vals[t->v];
            *out = (wv){.kind = W_BOOL, .u.e = (g->u.t.requires_grad || g->u.t.written_rg) ? W->ctx->t : W->ctx->f};
            return SG_OK;
        }
        if (is(name, "ndim"))
            return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: attribute ndim (use dim())");
        *out = (wv){.kind = W_METHOD, .u.method = {t, name}};
        return SG_OK;
    }
    if (obj->kind == W_BUILTIN && is(obj->u.name, "torch")) {
        static const struct {
            const char *name;
            sg_dtype d;
        } dtypes[] = {{"float64", SG_FLOAT64}, {"double", SG_FLOAT64}, {"float32", SG_FLOAT32},
                      {"float", SG_FLOAT32},   {"int64", SG_INT64},    {"long", SG_INT64},
                      {"bool", SG_BOOL}};
        for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
            if (is(name, dtypes[i].name)) {
                *out = (wv){.kind = W_DTYPE, .u.dtype = dtypes[i].d};
                return SG_OK;
            }
        static const char *const known[] = {"no_grad", "enable_grad", "_check", "cond", "contiguous_format",
                                            "preserve_format", "autograd"};
        for (size_t i = 0; i < sizeof known / sizeof *known; i++)
            if (is(name, known[i])) {
                *out = (wv){.kind = W_BUILTIN, .u.name = known[i]};
                return SG_OK;
            }
        const pyop *p = pyop_find(W, name);
        if (!p)
            return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: torch.%s", name);
        *out = (wv){.kind = W_BUILTIN, .u.name = p->py};
        return SG_OK;
    }
    if (obj->kind == W_BUILTIN && is(obj->u.name, "autograd") && is(name, "Function")) {
        *out = (wv){.kind = W_BUILTIN, .u.name = "autograd.Function"};
        return SG_OK;
    }
    if (obj->kind == W_CLASS && is(name, "apply")) {
        *out = *obj;
        out->kind = W_APPLY;
        return SG_OK;
    }
    if (obj->kind == W_CTX)
        return sg__w_ctx_getattr(W, at, obj->u.ctx.c, name, out);
    return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: attribute %s of a %s", name, sg__w_kind_name(obj));
}
