/* out= of the operators outside TensorIterator (mm, amax, cat, nonzero ...),
 * one rule for all: the functional overload's rule (the row's FUNCTIONAL
 * column) gives the result; the out tensor must take its dtype (VARIANT:
 * the same, one it casts to, or the result is computed in out's dtype:
 * sum and the creation operators), keeps its layout where the sizes are
 * already the result's, and is resized to the result's layout otherwise
 * (at::native::resize_output: the result's strides as the operator's meta
 * function sets them, its storage grown to what they reach; stack's
 * contiguous, as 1.13's stack_out resizes with resize_). The node's
 * value is the out tensor's next version. */
#include <string.h>

#include "expr/expr_private.h"
#include "graph/meta.h"
#include "graph/record.h"

sg_status sg__meta_out(sg__mcall *m, uint32_t *out)
{
    sg_ctx *ctx = m->g->ctx;
    const sg__opinfo *info = sg__op_info(m->s->op);
    const sg__schema *fs = info && m->g->reg ? sg__opreg_op(m->g->reg, info->functional) : NULL;
    const sg__opinfo *finfo = fs ? sg__op_info(fs->op) : NULL;
    int o = sg__schema_arg(m->s, "out");
    if (!finfo || !finfo->rule || o < 0 || m->a[o].kind != SG_A_VALUE)
        return sg__err(ctx, SG_EINTERNAL, "%s: out= without a functional overload", m->op);
    uint32_t dst = m->a[o].u.v;
    /* these kernels read their inputs in their own order while they write:
       an out that shares a position with an input is refused when the call
       runs, where the positions are known (exec's overlap check, overlap.c;
       torch 1.13's cat refuses it, its mm gives what its order gives), not
       here: an out viewing another part of an input's storage runs */
    /* the functional call: its arguments by name (out dropped, the ones the
       out= overload lacks defaulted); SG_OUT_INTO computes in out's dtype */
    sg__mcall f;
    sg__graph_mark k = sg__graph_mark_take(m->g);
    sg_status s = sg__record_rebind(m, fs, &f);
    int di = sg__schema_arg(fs, "dtype");
    if (!s && info->variant == SG_OUT_INTO && di >= 0 && f.a[di].kind == SG_A_NONE)
        f.a[di] = (sg__garg){.kind = SG_A_DTYPE, .u.dtype = sg__mt(m, dst)->dtype};
    uint32_t r;
    if (!s)
        s = finfo->rule(&f, &r);
    if (s) {
        sg__graph_restore(m->g, k);
        return s;
    }
    const sg__fake_tensor *rt = sg__mt(m, r);
    size_t n = rt->ndim;
    sg_dtype rd = (sg_dtype)rt->dtype;
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
    for (size_t d = 0; d < n; d++) {
        sizes[d] = sg__graph_size(m->g, r, d);
        strides[d] = sg__graph_stride(m->g, r, d);
    }
    /* the result is made again below, as the out tensor's next version */
    sg__record_adopt(m, &f);
    sg__graph_restore(m->g, k);
    const sg__fake_tensor *t = sg__mt(m, dst);
    sg_dtype od = (sg_dtype)t->dtype;
    if ((info->variant == SG_OUT_SAME || info->variant == SG_OUT_INTO) && od != rd)
        return sg__err(ctx, SG_ETYPE, "%s: expected out tensor to have dtype %s, but got %s instead", m->op,
                       sg__dtype_name(rd), sg__dtype_name(od));
    if (info->variant == SG_OUT_CAST && !sg__dtype_can_cast(rd, od))
        return sg__err(ctx, SG_ETYPE, "%s: result type %s can't be cast to the desired output type %s", m->op,
                       sg__dtype_name(rd), sg__dtype_name(od));
    bool same = t->ndim == n;
    if ((m->s->op == SG_OP_arange_out || m->s->op == SG_OP_arange_start_out) && n == 1) {
        /* arange resizes its out only where the element count differs (1.13's arange_out): of the
           result's count, out keeps its own sizes and strides */
        const sg_expr *numel = ctx->one;
        for (uint32_t d = 0; d < t->ndim && numel; d++)
            numel = sg__mul(ctx, numel, sg__graph_size(m->g, dst, d));
        if (!numel)
            return sg_ctx_last_error(ctx);
        bool keep;
        if ((s = sg__meta_eval(m, &keep, sg__meta_rel(m, SG_REL_EQ, numel, sizes[0]))))
            return s;
        if (keep) {
            n = t->ndim;
            for (size_t d = 0; d < n; d++) {
                sizes[d] = sg__graph_size(m->g, dst, d);
                strides[d] = sg__graph_stride(m->g, dst, d);
            }
            same = true;
        } else {
            same = false;
        }
    }
    for (size_t d = 0; d < n && same && !s; d++)
        if (sizes[d] != sg__graph_size(m->g, dst, d))
            s = sg__meta_eval(m, &same, sg__meta_rel(m, SG_REL_EQ, sizes[d], sg__graph_size(m->g, dst, d)));
    if (s == SG_EDATADEP) {
        /* sizes of unbacked symbols (nonzero, masked_select), not known before
           the kernel runs: where out's strides are the result's either way,
           kept or resized lay it out alike; else the question stands, but
           in eager mode, where the kernel decides (SG_NODE_OUT_LAYOUT) */
        bool alike = true;
        for (size_t d = 0; d < n && alike && s == SG_EDATADEP; d++) {
            sg_truth k;
            const sg_expr *eq = sg__meta_rel(m, SG_REL_EQ, strides[d], sg__graph_stride(m->g, dst, d));
            if (!eq)
                return sg__nomem(ctx);
            sg_status e = sg_env_known(m->env, &k, eq);
            if (e)
                return e;
            alike = k == SG_TRUE;
        }
        if (alike) {
            s = SG_OK;
            same = false;
        } else if (m->g->eager) { /* the kernel keeps or resizes out; eager then knows the layout */
            s = SG_OK;
            same = false;
            m->flags |= SG_NODE_OUT_LAYOUT;
        }
    }
    if (s)
        return s;
    t = sg__mt(m, dst);
    uint32_t storage = t->storage, base = t->base;
    const sg_expr *offset = t->offset;
    if (same) /* the out tensor as it is laid out */
        for (size_t d = 0; d < n; d++)
            strides[d] = sg__graph_stride(m->g, dst, d);
    else if (m->s->op == SG_OP_stack_out && (s = sg__meta_contiguous(m, strides, sizes, n)))
        return s; /* (1.13's stack_out resizes its out with resize_: contiguous, whatever format the functional
                     stack's cat gives, channels-last for one) */
    if ((s = sg__meta_tensor(m, out, od, n, sizes, strides, offset, storage)))
        return s;
    if (!same && (s = sg__meta_grow_storage(m, *out)))
        return s;
    m->g->vals[*out].u.t.base = base; /* the tensor written stays a view of what it viewed */
    return SG_OK;
}
