/* The scatters (select_scatter, slice_scatter, diagonal_scatter,
 * as_strided_scatter): self with src written into one of its views, what
 * functionalization makes of a write through a view (the view's row names
 * its scatter in the INVERSE column). The view is the forward view's rule
 * over self and the scatter's arguments of the same names; src must have
 * its sizes; the result is laid out as self's clone (preserve_format). */
#include <string.h>

#include "expr/expr_private.h"
#include "graph/meta.h"
#include "graph/record.h"

/* The view operator whose INVERSE is op (SG_OP_NONE: none). */
static unsigned view_of(unsigned op)
{
    for (unsigned k = 0; k < SG_OP_COUNT; k++) {
        const sg__opinfo *o = sg__op_info(k);
        if (o && o->inverse == op)
            return k;
    }
    return SG_OP_NONE;
}

sg_status sg__meta_scatter(sg__mcall *m, uint32_t *out)
{
    sg_ctx *ctx = m->g->ctx;
    unsigned vop = view_of(m->s->op);
    const sg__schema *vs = vop != SG_OP_NONE && m->g->reg ? sg__opreg_op(m->g->reg, vop) : NULL;
    const sg__opinfo *vinfo = vs ? sg__op_info(vop) : NULL;
    int si = sg__schema_arg(m->s, "src");
    if (!vinfo || !vinfo->rule || si < 0 || m->a[si].kind != SG_A_VALUE || m->a[0].kind != SG_A_VALUE)
        return sg__err(ctx, SG_EINTERNAL, "%s: a scatter without its view", m->op);
    uint32_t self = m->a[0].u.v, src = m->a[si].u.v;
    /* the view: its arguments by name from the scatter's (src dropped) */
    sg__mcall f;
    sg__graph_mark k = sg__graph_mark_take(m->g);
    uint32_t v;
    sg_status s = sg__record_rebind(m, vs, &f);
    if (!s)
        s = vinfo->rule(&f, &v);
    if (s) {
        sg__graph_restore(m->g, k);
        return s;
    }
    size_t n = sg__mt(m, v)->ndim;
    const sg_expr *want[SG_MAX_DIMS];
    for (size_t d = 0; d < n; d++)
        want[d] = sg__graph_size(m->g, v, d);
    sg__record_adopt(m, &f);
    sg__graph_restore(m->g, k);
    /* src has the view's sizes */
    const sg__fake_tensor *st = sg__mt(m, src);
    bool same = st->ndim == n;
    for (size_t d = 0; d < n && same && !s; d++)
        if (want[d] != sg__graph_size(m->g, src, d))
            s = sg__meta_eval(m, &same, sg__meta_rel(m, SG_REL_EQ, want[d], sg__graph_size(m->g, src, d)));
    if (s)
        return s;
    if (!same)
        return sg__meta_shape_error(m, "expected src to have a size equal to the slice of self");
    /* self's clone */
    const sg__fake_tensor *t = sg__mt(m, self);
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
    for (size_t d = 0; d < t->ndim; d++)
        sizes[d] = sg__graph_size(m->g, self, d);
    CHAIN(sg__meta_like_strides(m, self, strides));
    t = sg__mt(m, self);
    return sg__meta_tensor(m, out, (sg_dtype)t->dtype, t->ndim, sizes, strides, ctx->zero, SG_NOVAL);
}

/* select_backward, slice_backward, diagonal_backward (grad_output,
 * input_sizes, the view's arguments): a new contiguous tensor of
 * input_sizes and grad_output's dtype, zeros but for grad_output written
 * into the view (the kernel's work; PyTorch's meta checks nothing more). */
sg_status sg__meta_view_backward(sg__mcall *m, uint32_t *out)
{
    int si = sg__schema_arg(m->s, "input_sizes");
    size_t n = m->a[si].u.list.n;
    if (n > SG_MAX_DIMS)
        return sg__meta_shape_error(m, "too many dimensions");
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS]; /* copies: making the result may move the graph's expressions */
    memcpy(sizes, m->g->exprs + m->a[si].u.list.off, n * sizeof *sizes);
    CHAIN(sg__meta_contiguous(m, strides, sizes, n));
    return sg__meta_tensor(m, out, (sg_dtype)sg__mt(m, m->a[0].u.v)->dtype, n, sizes, strides, m->g->ctx->zero,
                           SG_NOVAL);
}
