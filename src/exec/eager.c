/* exec: eager execution. The executor records each operator call through a
 * tracer over an environment of its own, where every input size is a
 * constant, and runs what it recorded at once; a data-dependent node's
 * unbacked symbols then become the constants it computed, in every value
 * recorded since, so that the rest of the program sees plain numbers (as
 * PyTorch's eager mode does). */
#include "exec/exec_private.h"
#include "expr/expr_private.h"

struct sg__xeager {
    sg_ctx *ctx;
    sg_env *env;
    sg_tracer *t;
    sg__graph *g;
    sg_run *run;
    sg__xrun *x;
};

sg_status sg__xeager_new(sg_ctx *ctx, sg__xeager **out)
{
    *out = NULL;
    sg__xeager *e = sg__calloc(ctx, 1, sizeof *e);
    if (!e)
        return sg__nomem(ctx);
    e->ctx = ctx;
    sg_status s = sg_env_new(ctx, NULL, &e->env);
    if (!s)
        s = sg_tracer_new(e->env, &e->t);
    if (!s)
        s = sg_run_new(e->t, NULL, &e->run);
    if (s) {
        sg__xeager_free(e);
        return s;
    }
    e->g = (sg__graph *)sg__tracer_graph(e->t);
    e->g->eager = true;
    e->x = sg__run_xrun(e->run);
    *out = e;
    return SG_OK;
}

void sg__xeager_free(sg__xeager *e)
{
    if (!e)
        return;
    sg_run_free(e->run);
    sg_tracer_free(e->t);
    sg_env_free(e->env);
    sg_free(e);
}

sg_env *sg__xeager_env(const sg__xeager *e)
{
    return e->env;
}

sg_tracer *sg__xeager_tracer(const sg__xeager *e)
{
    return e->t;
}

sg_run *sg__xeager_run(const sg__xeager *e)
{
    return e->run;
}

sg_status sg__xeager_input(sg__xeager *e, sg_value *out, const char *name, sg__xtensor *xt, int requires_grad)
{
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS], *off;
    for (uint32_t d = 0; d < xt->ndim; d++) {
        sizes[d] = sg__int_si(e->ctx, xt->sizes[d]);
        strides[d] = sg__int_si(e->ctx, xt->strides[d]);
        if (!sizes[d] || !strides[d])
            return sg_ctx_last_error(e->ctx);
    }
    if (!(off = sg__int_si(e->ctx, xt->offset)))
        return sg_ctx_last_error(e->ctx);
    sg_fake fake = {.ndim = xt->ndim, .sizes = sizes, .strides = strides, .offset = off};
    /* an input viewing the storage of an earlier one aliases it */
    sg_value of = SG_NOVAL;
    const sg__scope *root = &e->g->scopes[0];
    for (size_t i = 0; i < root->nphs && of == SG_NOVAL; i++) {
        uint32_t v = e->g->nodes[root->phs[i]].out;
        const sg__xval *xv = sg__xrun_value(e->x, v);
        if (xv->kind == SG_XV_TENSOR && xv->u.t->st == xt->st)
            of = v;
    }
    const sg_expr *numel = sg__int_si(e->ctx, xt->st->numel); /* its storage: the concrete one's size */
    if (!numel)
        return sg_ctx_last_error(e->ctx);
    sg_value v;
    CHAIN(sg_tracer_input_view(e->t, &v, name, &fake, (sg_dtype)xt->dtype, requires_grad, of));
    if (of == SG_NOVAL)
        sg__graph_set_storage_numel(e->g, e->g->vals[v].u.t.storage, numel);
    sg__xval xv = {.kind = SG_XV_TENSOR, .u.t = xt};
    CHAIN(sg__xrun_input(e->x, v, &xv));
    *out = v;
    return SG_OK;
}

/* Run the nodes from first_node on; then the unbacked symbols they bound
 * are replaced by their values in the values from first_val on. */
static sg_status catch_up(sg__xeager *e, uint32_t first_node, uint32_t first_val)
{
    CHAIN(sg__xrun_rest(e->x));
    const sg_expr *syms[16], *vals[16];
    size_t n = 0;
    for (uint32_t i = first_node; i < e->g->nnodes; i++) {
        const sg__gnode *nd = &e->g->nodes[i];
        for (uint32_t k = 0; k < nd->nbinds && n < 16; k++) {
            int64_t v;
            const sg_expr *sym = e->g->exprs[nd->binds + k];
            if (!sg__xrun_sym(e->x, sym, &v))
                return sg__err(e->ctx, SG_EINTERNAL, "eager: %s not bound by its node", sg_expr_sym_name(sym));
            syms[n] = sym;
            if (!(vals[n++] = sg__int_si(e->ctx, v)))
                return sg_ctx_last_error(e->ctx);
        }
    }
    CHAIN(sg__graph_subst(e->g, first_val, n, syms, vals));
    /* an out= whose kernel chose its layout: the graph takes the one it chose */
    for (uint32_t i = first_node; i < e->g->nnodes; i++) {
        const sg__gnode *nd = &e->g->nodes[i];
        if (!(nd->flags & SG_NODE_OUT_LAYOUT))
            continue;
        const sg__xval *xv = sg__xrun_value(e->x, nd->out);
        sg__fake_tensor *f = &e->g->vals[nd->out].u.t;
        for (uint32_t d = 0; xv->kind == SG_XV_TENSOR && d < f->ndim; d++)
            if (!(e->g->exprs[f->dims + f->ndim + d] = sg__int_si(e->ctx, xv->u.t->strides[d])))
                return sg_ctx_last_error(e->ctx);
    }
    return SG_OK;
}

sg_status sg__xeager_call(sg__xeager *e, sg_value *out, const char *op, const sg__schema *sch, const sg_arg *args,
                          size_t n, unsigned line, uint8_t flags)
{
    uint32_t first_node = (uint32_t)e->g->nnodes, first_val = (uint32_t)e->g->nvals;
    CHAIN(sg__tracer_call_node(e->t, out, op, sch, args, n, line, flags));
    return catch_up(e, first_node, first_val);
}
