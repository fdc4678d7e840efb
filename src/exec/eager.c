/* exec: eager execution. The executor records each operator call through a
 * tracer over an environment of its own, where every input size is a
 * constant, and runs what it recorded at once; a data-dependent node's
 * unbacked symbols then become the constants it computed, in every value
 * recorded since, so that the rest of the program sees plain numbers (as
 * PyTorch's eager mode does). */
#include <string.h>

#include "exec/exec_private.h"
#include "expr/expr_private.h"

struct sg__xeager {
    sg_ctx *ctx;
    sg_env *env;
    sg_tracer *t;
    sg__graph *g;
    sg_run *run;
    sg__xrun *x;
    /* freeing dead values: a collection marks what the walker still
       refers to (sg__xeager_gc_keep) and releases the other tensor values */
    uint32_t *marks; /* per graph value: the epoch of the collection that kept it */
    size_t capmarks;
    uint32_t epoch;
    uint32_t *held; /* the tensor values the last collection kept */
    size_t nheld, capheld;
    size_t seen;       /* values below it were looked at by a collection */
    size_t live_after; /* tensor bytes live after the last collection */
    size_t work;       /* the last collection's work: values marked and looked at */
    size_t min_bytes;  /* the least growth that starts one */
};

/* Growth of the tensor bytes (beyond those left by the last collection:
 * half of those, and at least this) that makes a collection due. */
#define GC_MIN_BYTES ((size_t)16 * 1024)

sg_status sg__xeager_new(sg_ctx *ctx, sg__xeager **out)
{
    *out = NULL;
    sg__xeager *e = sg__calloc(ctx, 1, sizeof *e);
    if (!e)
        return sg__nomem(ctx);
    e->ctx = ctx;
    e->min_bytes = GC_MIN_BYTES;
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
    sg_free(e->marks);
    sg_free(e->held);
    sg_free(e);
}

/* The most operator calls sg__xeager_reserve counts: a text of many calls
 * that one run may not make reserves no more than a few MB. */
#define RESERVE_MAX ((size_t)1 << 15)

void sg__xeager_reserve(sg__xeager *e, size_t ops)
{
    if (ops > RESERVE_MAX)
        ops = RESERVE_MAX;
    size_t n = ops + ops / 4 + 16; /* a call may record more than one node (reshape's copy: clone, view) */
    sg__graph_reserve(e->g, n);
    sg__xrun_reserve(e->x, e->g->nvals + n);
    size_t m = e->g->nvals + n;
    if (m > e->capmarks) {
        uint32_t *marks = sg__realloc(e->ctx, e->marks, m * sizeof *marks);
        if (marks) {
            memset(marks + e->capmarks, 0, (m - e->capmarks) * sizeof *marks);
            e->marks = marks;
            e->capmarks = m;
        }
    }
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
    /* (the concrete storage's size, also where a view of it the tracer saw reaches further: an empty
       one at an offset past its end, a.unsqueeze(-3)[:, 1:] of an empty a) */
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
    bool out_layout = false;
    for (uint32_t i = first_node; i < e->g->nnodes; i++) {
        const sg__gnode *nd = &e->g->nodes[i];
        out_layout |= (nd->flags & SG_NODE_OUT_LAYOUT) != 0;
        for (uint32_t k = 0; k < nd->nbinds && n < 16; k++) {
            int64_t v;
            const sg_expr *sym = e->g->exprs[nd->binds + k];
            if (!sg__xrun_sym(e->x, sym, &v) && nd->scope) /* (in a branch the run did not take: its
                                                              torch.cond's sizes stay unbacked there) */
                continue;
            if (!sg__xrun_sym(e->x, sym, &v))
                return sg__err(e->ctx, SG_EINTERNAL, "eager: %s not bound by its node", sg_expr_sym_name(sym));
            syms[n] = sym;
            if (!(vals[n] = sg__int_si(e->ctx, v)))
                return sg_ctx_last_error(e->ctx);
            /* the environment knows it too: a pass that replays the node (the aot pipeline over the
               eager run's graph, for its gradients) makes the symbol again and meets the value */
            const sg_expr *eq;
            CHAIN(sg_expr_rel(e->ctx, &eq, SG_REL_EQ, sym, vals[n++]));
            CHAIN(sg_env_check(e->env, eq, "eager: the value an operator computed"));
        }
    }
    if (n)
        CHAIN(sg__graph_subst(e->g, first_val, n, syms, vals));
    /* an out= whose kernel chose its layout: the graph takes the one it chose */
    for (uint32_t i = first_node; i < e->g->nnodes && out_layout; i++) {
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

sg_status sg__xeager_catch_up(sg__xeager *e, uint32_t first_node, uint32_t first_val)
{
    return catch_up(e, first_node, first_val);
}

sg_status sg__xeager_call(sg__xeager *e, sg_value *out, const char *op, const sg__schema *sch, const sg_arg *args,
                          size_t n, unsigned line, uint8_t flags)
{
    uint32_t first_node = (uint32_t)e->g->nnodes, first_val = (uint32_t)e->g->nvals;
    CHAIN(sg__tracer_call_node(e->t, out, op, sch, args, n, line, flags));
    return catch_up(e, first_node, first_val);
}

/* ---- freeing dead values ---- */

void sg__xeager_gc_threshold(sg__xeager *e, size_t min_bytes)
{
    e->min_bytes = min_bytes;
}

bool sg__xeager_gc_due(const sg__xeager *e)
{
    if (!e->min_bytes)
        return true;
    size_t live, need = e->live_after / 2 > e->min_bytes ? e->live_after / 2 : e->min_bytes;
    sg__xmem(e->ctx, &live, NULL);
    /* memory grew by half what the last left (and the threshold), and enough new values to pay for the last
       one's work (4 units a value): amortized O(1) per value */
    return live >= e->live_after && live - e->live_after >= need && 4 * (e->g->nvals - e->seen) >= e->work;
}

sg_status sg__xeager_gc_begin(sg__xeager *e)
{
    size_t n = e->g->nvals;
    if (n > e->capmarks) {
        size_t cap = e->capmarks * 2 > n ? e->capmarks * 2 : n;
        uint32_t *m = sg__realloc(e->ctx, e->marks, cap * sizeof *m);
        if (!m)
            return sg__nomem(e->ctx);
        memset(m + e->capmarks, 0, (cap - e->capmarks) * sizeof *m);
        e->marks = m;
        e->capmarks = cap;
    }
    if (++e->epoch == 0) { /* wrapped: no old mark may look new */
        memset(e->marks, 0, e->capmarks * sizeof *e->marks);
        e->epoch = 1;
    }
    e->work = 0;
    return SG_OK;
}

void sg__xeager_gc_keep(sg__xeager *e, sg_value v)
{
    e->work++;
    if (v < e->capmarks)
        e->marks[v] = e->epoch;
}

void sg__xeager_gc_keep_range(sg__xeager *e, sg_value lo, sg_value hi)
{
    for (sg_value v = lo; v < hi && v < e->capmarks; v++)
        e->marks[v] = e->epoch;
    e->work += hi > lo ? hi - lo : 0;
}

/* Keep v if it is still a tensor the walker refers to, else release it. */
static void sweep_one(sg__xeager *e, uint32_t v, size_t *kept)
{
    const sg__xval *x = sg__xrun_value(e->x, v);
    if (x->kind != SG_XV_TENSOR)
        return;
    uint32_t n = e->g->vals[v].node;
    if (n != SG_NOVAL && e->g->nodes[n].kind == SG_N_PLACEHOLDER)
        return; /* an input: the run keeps it */
    if (v < e->capmarks && e->marks[v] == e->epoch)
        e->held[(*kept)++] = v;
    else
        sg__xrun_release(e->x, v);
}

sg_status sg__xeager_gc_sweep(sg__xeager *e, size_t work)
{
    size_t n = e->g->nvals, most = e->nheld + (n > e->seen ? n - e->seen : 0);
    if (!sg__grow(e->ctx, (void **)&e->held, &e->capheld, most, sizeof *e->held))
        return sg__nomem(e->ctx);
    size_t kept = 0;
    e->work += work + e->nheld; /* the roots and the survivors: the new values pay for themselves */
    for (size_t i = 0; i < e->nheld; i++) /* kept in place: kept <= i */
        sweep_one(e, e->held[i], &kept);
    for (size_t v = e->seen; v < n; v++)
        sweep_one(e, (uint32_t)v, &kept);
    e->nheld = kept;
    e->seen = n;
    sg__xmem(e->ctx, &e->live_after, NULL);
    return SG_OK;
}

size_t sg__xeager_nvals(const sg__xeager *e)
{
    return e->g->nvals;
}
