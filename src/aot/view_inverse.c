/* Writes through views carried back to their bases (aot_private.h): the
 * view inverses functionalization records, as PyTorch's FunctionalInverses
 * define them. */
#include <string.h>

#include "aot/aot_private.h"
#include "expr/expr_private.h"
#include "graph/ops.h"

/* Record op (a row of the table) over args into dst. */
static sg_status call(sg__graph *dst, unsigned op, const sg__garg *args, size_t n, unsigned line, uint32_t *out)
{
    const sg__schema *s = dst->reg ? sg__opreg_op(dst->reg, op) : NULL;
    if (!s)
        return sg__err(dst->ctx, SG_EINTERNAL, "view inverse: no schema for operator %u", op);
    return sg__graph_record(dst, s, args, n, line, NULL, out);
}

/* The integer argument i of src node nd as a constant (dimensions are
 * ints, never symbolic); *ok false where it is not one. */
static int64_t int_arg(const sg__graph *src, const sg__gnode *nd, uint32_t i, bool *ok)
{
    const sg__garg *a = i < nd->nargs ? &src->args[nd->args + i] : NULL;
    if (!a || a->kind != SG_A_EXPR || a->u.e->op != SG_OP_INT || !fmpz_fits_si(&a->u.e->u.val)) {
        *ok = false;
        return 0;
    }
    return fmpz_get_si(&a->u.e->u.val);
}

static sg__garg value(uint32_t v)
{
    return (sg__garg){.kind = SG_A_VALUE, .u.v = v};
}

static sg_status int_garg(sg__graph *g, int64_t x, sg__garg *out)
{
    const sg_expr *e = sg__int_si(g->ctx, x);
    if (!e)
        return sg_ctx_last_error(g->ctx);
    *out = (sg__garg){.kind = SG_A_EXPR, .u.e = e};
    return SG_OK;
}

/* Base as it was, for a write of no element through a view of it: base +
 * 0 * sum(mutated), so that the values written (none) still reach the
 * new version, as PyTorch's CopySlices gives what they depend on a zero
 * gradient, not None. */
static sg_status unchanged(sg__graph *dst, uint32_t base, uint32_t mutated, unsigned line, uint32_t *out)
{
    uint8_t dt = dst->vals[base].u.t.dtype;
    if (dt != SG_FLOAT64 && dt != SG_FLOAT32) { /* (no gradient; a sum would promote the dtype) */
        *out = base;
        return SG_OK;
    }
    sg__garg a[2] = {value(mutated)};
    uint32_t s;
    CHAIN(call(dst, SG_OP_sum, a, 1, line, &s));
    a[0] = value(s);
    CHAIN(int_garg(dst, 0, &a[1]));
    CHAIN(call(dst, SG_OP_mul_Scalar, a, 2, line, &s));
    a[0] = value(base);
    a[1] = value(s);
    return call(dst, SG_OP_add_Tensor, a, 2, line, out);
}

/* Dst value self's values in sizes (an SG_A_EXPRS argument) as reshape
 * gives them where a view cannot: a contiguous clone, _unsafe_view'd. */
static sg_status clone_viewed(sg__graph *dst, uint32_t self, sg__garg sizes, unsigned line, uint32_t *out)
{
    sg__garg c[2] = {value(self), {.kind = SG_A_MEMFMT, .kw = "memory_format", .u.dtype = SG_CONTIGUOUS_FORMAT}};
    sg__garg a[2] = {{.kind = SG_A_VALUE}, sizes};
    CHAIN(call(dst, SG_OP_clone, c, 2, line, &a[0].u.v));
    return call(dst, SG_OP__unsafe_view, a, 2, line, out);
}

/* view(mutated, base's sizes); where mutated's layout allows no view of
 * them (the first elements an expand's inverse picks, viewed back), its
 * values in them as reshape gives them (clone_viewed). */
static sg_status view_back(sg__graph *dst, uint32_t base, uint32_t mutated, unsigned line, uint32_t *out)
{
    const sg__fake_tensor *b = &dst->vals[base].u.t;
    const sg_expr *sizes[SG_MAX_DIMS];
    for (uint32_t d = 0; d < b->ndim; d++)
        sizes[d] = sg__graph_size(dst, base, d);
    uint32_t off;
    CHAIN(sg__graph_exprs(dst, &off, sizes, b->ndim));
    sg__garg a[2] = {value(mutated), {.kind = SG_A_EXPRS, .u.list = {off, b->ndim}}};
    sg_status s = call(dst, SG_OP_view, a, 2, line, out);
    if (s != SG_ESHAPE) /* (a refused record changes nothing) */
        return s;
    sg_ctx_reset_error(dst->ctx);
    return clone_viewed(dst, mutated, a[1], line, out);
}

sg_status sg__aot_layout_args(sg__graph *dst, const sg__graph *src, uint32_t v, uint32_t self, sg__garg *a)
{
    const sg__fake_tensor *t = &src->vals[v].u.t;
    a[0] = value(self);
    a[1] = (sg__garg){.kind = SG_A_EXPRS, .u.list.n = t->ndim};
    a[2] = (sg__garg){.kind = SG_A_EXPRS, .u.list.n = t->ndim};
    a[3] = (sg__garg){.kind = SG_A_EXPR, .u.e = t->offset};
    CHAIN(sg__graph_exprs(dst, &a[1].u.list.off, src->exprs + t->dims, t->ndim));
    return sg__graph_exprs(dst, &a[2].u.list.off, src->exprs + t->dims + t->ndim, t->ndim);
}

sg_status sg__aot_arg(sg__graph *dst, const sg__graph *src, const sg__garg *a, sg__garg *out)
{
    *out = *a;
    if (a->kind == SG_A_EXPRS)
        return sg__graph_exprs(dst, &out->u.list.off, src->exprs + a->u.list.off, a->u.list.n);
    if (a->kind == SG_A_VALUE || a->kind == SG_A_VALUES || a->kind == SG_A_SCOPE)
        return sg__err(dst->ctx, SG_EINVAL, "aot: an argument that is a value of another graph");
    return SG_OK;
}

/* The view operator node of src stands for: its own, or for an in-place
 * view (t_, as_strided_ ...) the view it applies (its FUNCTIONAL row). */
static unsigned view_op(const sg__gnode *nd)
{
    const sg__opinfo *info = sg__op_info(nd->schema->op);
    if (info && (info->tags & SG_T_INPLACE_VIEW) && info->functional != SG_OP_NONE)
        return info->functional;
    if (nd->schema->op == SG_OP_detach_)
        return SG_OP_detach;
    return nd->schema->op;
}

sg_status sg__aot_reshape_as(sg__graph *dst, const sg__graph *src, uint32_t v, uint32_t self, unsigned line,
                             uint32_t *out)
{
    sg__garg a[4];
    CHAIN(sg__aot_layout_args(dst, src, v, self, a)); /* (a[1]: v's sizes, -1 worked out) */
    return clone_viewed(dst, self, a[1], line, out);
}

bool sg__aot_same_sizes(const sg__graph *g, uint32_t v, uint32_t w)
{
    if (g->vals[v].u.t.ndim != g->vals[w].u.t.ndim)
        return false;
    for (uint32_t d = 0; d < g->vals[v].u.t.ndim; d++)
        if (sg__graph_size(g, v, d) != sg__graph_size(g, w, d))
            return false;
    return true;
}

sg_status sg__aot_proved_same(const sg__graph *src, const sg_expr *a, const sg_expr *b, bool *out)
{
    *out = a == b;
    if (*out)
        return SG_OK;
    const sg_expr *eq;
    sg_truth k = SG_UNKNOWN;
    CHAIN(sg_expr_rel(src->ctx, &eq, SG_REL_EQ, a, b));
    CHAIN(sg_env_known(src->env, &k, eq));
    *out = k == SG_TRUE;
    return SG_OK;
}

sg_status sg__aot_same_strides(const sg__graph *dst, uint32_t d, const sg__graph *src, uint32_t v, bool *out)
{
    *out = dst->vals[d].kind == SG_V_TENSOR && src->vals[v].kind == SG_V_TENSOR &&
           dst->vals[d].u.t.ndim == src->vals[v].u.t.ndim;
    for (uint32_t k = 0; *out && k < src->vals[v].u.t.ndim; k++)
        CHAIN(sg__aot_proved_same(src, sg__graph_stride(dst, d, k), sg__graph_stride(src, v, k), out));
    return SG_OK;
}

sg_status sg__aot_view_again(sg__graph *dst, const sg__graph *src, uint32_t node, uint32_t self, uint32_t *out)
{
    const sg__gnode *nd = &src->nodes[node];
    sg__garg args[SG_SCHEMA_ARGS];
    if (nd->nargs > SG_SCHEMA_ARGS || !nd->nargs)
        return sg__err(dst->ctx, SG_EINVAL, "aot: a view call without its arguments");
    args[0] = value(self);
    for (uint32_t i = 1; i < nd->nargs; i++)
        CHAIN(sg__aot_arg(dst, src, &src->args[nd->args + i], &args[i]));
    uint32_t n = nd->nargs, op = view_op(nd);
    if (op == SG_OP_as_strided && n == 3 && src->args[nd->args].kind == SG_A_VALUE) {
        /* no storage_offset: the one of what it was called on, said (self may be another view of the storage) */
        args[n++] = (sg__garg){.kind = SG_A_EXPR, .u.e = src->vals[src->args[nd->args].u.v].u.t.offset};
    }
    bool same = true;
    if (op == SG_OP_view && src->args[nd->args].kind == SG_A_VALUE)
        CHAIN(sg__aot_same_strides(dst, self, src, src->args[nd->args].u.v, &same));
    if (!same)
        return sg__aot_reshape_as(dst, src, nd->out, self, nd->line, out);
    return call(dst, op, args, n, nd->line, out);
}

/* The select an element of unbind node is: dim (the node's, 0 by default)
 * and the element's index into a (a[1], a[2]). */
static sg_status unbind_index(sg__graph *dst, const sg__graph *src, uint32_t node, uint32_t elem, sg__garg *a)
{
    const sg__gnode *nd = &src->nodes[node];
    const sg__gval *l = &src->vals[nd->out];
    uint32_t k = 0;
    while (k < l->u.list.n && src->ids[l->u.list.off + k] != elem)
        k++;
    if (l->kind != SG_V_LIST || k == l->u.list.n)
        return sg__err(dst->ctx, SG_EINVAL, "aot: value %u is no element of unbind node %u", elem, node);
    if (nd->nargs > 1)
        CHAIN(sg__aot_arg(dst, src, &src->args[nd->args + 1], &a[1]));
    else
        CHAIN(int_garg(dst, 0, &a[1]));
    a[1].kw = NULL; /* positional in the select */
    return int_garg(dst, k, &a[2]);
}

sg_status sg__aot_unbind_element(sg__graph *dst, const sg__graph *src, uint32_t node, uint32_t elem, uint32_t self,
                                 uint32_t *out)
{
    sg__garg a[3];
    a[0] = value(self);
    CHAIN(unbind_index(dst, src, node, elem, a));
    return call(dst, SG_OP_select_int, a, 3, src->nodes[node].line, out);
}

sg_status sg__aot_unbind_inverse(sg__graph *dst, const sg__graph *src, uint32_t node, uint32_t elem, uint32_t base,
                                 uint32_t mutated, uint32_t *out)
{
    sg__garg a[4];
    CHAIN(unbind_index(dst, src, node, elem, a + 1)); /* a[2] the dim, a[3] the index */
    a[0] = value(base);
    a[1] = value(mutated);
    return call(dst, SG_OP_select_scatter, a, 4, src->nodes[node].line, out);
}

sg_status sg__aot_view_inverse(sg__graph *dst, const sg__graph *src, uint32_t node, uint32_t base, uint32_t mutated,
                               uint32_t *out)
{
    sg_ctx *ctx = dst->ctx;
    if (node >= src->nnodes || src->nodes[node].kind != SG_N_CALL ||
        (!(src->nodes[node].schema->flags & SG_OPF_VIEW) && view_op(&src->nodes[node]) == src->nodes[node].schema->op &&
         src->nodes[node].schema->op != SG_OP__unsafe_view) ||
        base >= dst->nvals || mutated >= dst->nvals || dst->vals[base].kind != SG_V_TENSOR ||
        dst->vals[mutated].kind != SG_V_TENSOR)
        return sg__err(ctx, SG_EINVAL, "view inverse: not a view call, or not tensors");
    const sg__gnode *nd = &src->nodes[node];
    unsigned op = view_op(nd), line = nd->line;
    const sg__opinfo *info = sg__op_info(op);
    bool ok = true;
    if (info && info->inverse != SG_OP_NONE) { /* the scatter: self, src, then the view's own arguments */
        sg__garg a[SG_SCHEMA_ARGS];
        if (nd->nargs + 1 > SG_SCHEMA_ARGS)
            return sg__err(ctx, SG_ELIMIT, "view inverse: %s has too many arguments", nd->schema->name);
        a[0] = value(base);
        a[1] = value(mutated);
        for (uint32_t i = 1; i < nd->nargs; i++)
            CHAIN(sg__aot_arg(dst, src, &src->args[nd->args + i], &a[i + 1]));
        uint32_t n = nd->nargs + 1;
        if (op == SG_OP_as_strided && nd->nargs == 3 && src->args[nd->args].kind == SG_A_VALUE) /* as sg__aot_view_again */
            a[n++] = (sg__garg){.kind = SG_A_EXPR, .u.e = src->vals[src->args[nd->args].u.v].u.t.offset};
        return call(dst, info->inverse, a, n, line, out);
    }
    sg__garg a[6];
    if (dst->vals[mutated].u.t.ndim < dst->vals[base].u.t.ndim && op == SG_OP_expand)
        return sg__err(ctx, SG_EINVAL, "view inverse: an expand with fewer dimensions than its base");
    switch (op) {
    case SG_OP_detach:
    case SG_OP_alias:
        *out = mutated;
        return SG_OK;
    case SG_OP_t:
        a[0] = value(mutated);
        return call(dst, SG_OP_t, a, 1, line, out);
    case SG_OP_transpose_int:
        a[0] = value(mutated);
        CHAIN(sg__aot_arg(dst, src, &src->args[nd->args + 1], &a[1]));
        CHAIN(sg__aot_arg(dst, src, &src->args[nd->args + 2], &a[2]));
        return call(dst, SG_OP_transpose_int, a, 3, line, out);
    case SG_OP_permute: { /* the inverse permutation */
        const sg__garg *d = &src->args[nd->args + 1];
        size_t n = dst->vals[base].u.t.ndim;
        if (d->kind != SG_A_EXPRS || d->u.list.n != n)
            return sg__err(ctx, SG_EINVAL, "view inverse: permute without its dims");
        const sg_expr *inv[SG_MAX_DIMS];
        for (size_t i = 0; i < n; i++) {
            const sg_expr *e = src->exprs[d->u.list.off + i];
            if (e->op != SG_OP_INT || !fmpz_fits_si(&e->u.val))
                return sg__err(ctx, SG_EINVAL, "view inverse: permute by a dimension that is no int");
            int64_t k = fmpz_get_si(&e->u.val);
            k = k < 0 ? k + (int64_t)n : k;
            if (k < 0 || k >= (int64_t)n)
                return sg__err(ctx, SG_EINVAL, "view inverse: permute by dimension %lld of %zu", (long long)k, n);
            if (!(inv[k] = sg__int_si(ctx, (slong)i)))
                return sg_ctx_last_error(ctx);
        }
        uint32_t off;
        CHAIN(sg__graph_exprs(dst, &off, inv, n));
        a[0] = value(mutated);
        a[1] = (sg__garg){.kind = SG_A_EXPRS, .u.list = {off, (uint32_t)n}};
        return call(dst, SG_OP_permute, a, 2, line, out);
    }
    case SG_OP_narrow: { /* slice_scatter(base, mutated, dim, start, start + length) */
        int64_t dim = int_arg(src, nd, 1, &ok), start = int_arg(src, nd, 2, &ok), len = int_arg(src, nd, 3, &ok);
        if (!ok)
            return sg__err(ctx, SG_EUNSUPPORTED, "view inverse: unsupported: narrow with symbolic arguments");
        a[0] = value(base);
        a[1] = value(mutated);
        CHAIN(int_garg(dst, dim, &a[2]));
        CHAIN(int_garg(dst, start, &a[3]));
        CHAIN(int_garg(dst, start + len, &a[4]));
        CHAIN(int_garg(dst, 1, &a[5]));
        return call(dst, SG_OP_slice_scatter, a, 6, line, out);
    }
    case SG_OP_unsqueeze: /* squeeze.dim(mutated, dim) */
        a[0] = value(mutated);
        CHAIN(sg__aot_arg(dst, src, &src->args[nd->args + 1], &a[1]));
        return call(dst, SG_OP_squeeze_dim, a, 2, line, out);
    case SG_OP_squeeze:
    case SG_OP_squeeze_dim:
    case SG_OP_view:
    case SG_OP__unsafe_view: /* (a link for functionalization: it shares its contiguous self's storage) */
        return view_back(dst, base, mutated, line, out);
    case SG_OP_expand: { /* the first of each repeated element: the memory-overlap check refuses, before,
                            every write that would give repeats different values */
        const sg__fake_tensor *b = &dst->vals[base].u.t;
        uint32_t val = mutated, lead = dst->vals[mutated].u.t.ndim - b->ndim;
        for (uint32_t d = 0; d < dst->vals[mutated].u.t.ndim; d++)
            if (sg__graph_size(dst, mutated, d) == ctx->zero) /* (no element: nothing written, and a leading
                                                                  dimension of size 0 has no first index) */
                return unchanged(dst, base, mutated, line, out);
        for (uint32_t k = 0; k < lead; k++) { /* the new leading dimensions: their first index */
            a[0] = value(val);
            CHAIN(int_garg(dst, 0, &a[1]));
            CHAIN(int_garg(dst, 0, &a[2]));
            CHAIN(call(dst, SG_OP_select_int, a, 3, line, &val));
        }
        for (uint32_t d = 0; d < b->ndim; d++) { /* a dimension expanded from 1: its first (base's sizes) */
            if (sg__graph_size(dst, val, d) == sg__graph_size(dst, base, d))
                continue;
            a[0] = value(val);
            CHAIN(int_garg(dst, d, &a[1]));
            CHAIN(int_garg(dst, 0, &a[2]));
            a[3] = (sg__garg){.kind = SG_A_EXPR, .u.e = sg__graph_size(dst, base, d)};
            CHAIN(int_garg(dst, 1, &a[4]));
            CHAIN(call(dst, SG_OP_slice_Tensor, a, 5, line, &val));
        }
        *out = val;
        return SG_OK;
    }
    default:
        return sg__err(ctx, SG_EUNSUPPORTED, "view inverse: unsupported: a write through %s", nd->schema->name);
    }
}
