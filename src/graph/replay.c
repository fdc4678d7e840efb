/* The replay of a graph through a per-node hook (record.h): the form of a
 * pass. Values of src are mapped to values of dst as the nodes are replayed
 * in order; what a call node becomes is the hook's (by default, the same
 * call recorded again through sg__graph_record, so its shape rule runs in
 * dst and the result is checked, not copied). */
#include <string.h>

#include "expr/expr_private.h"
#include "graph/record.h"

struct sg__replay {
    const sg__graph *src;
    sg__graph *dst;
    uint32_t *map;       /* src value -> dst value, or SG_NOVAL */
    uint32_t *storages;  /* src storage -> dst storage, or SG_NOVAL */
    uint32_t node;       /* the src node being replayed */
    size_t since;        /* the first dst node recorded for the last src call */
    bool renamed;        /* its unbacked symbols were given to a dst node */
    const sg__replay_cbs *cbs; /* the pass's callbacks (never NULL) */
    const uint32_t *lead; /* dst values the output gives before src's (sg__replay_lead) */
    uint32_t nlead;
};

const sg__graph *sg__replay_src(const sg__replay *r)
{
    return r->src;
}

sg__graph *sg__replay_dst(sg__replay *r)
{
    return r->dst;
}

sg_status sg__replay_map(sg__replay *r, uint32_t of, uint32_t v)
{
    const sg__graph *s = r->src, *d = r->dst;
    if (of >= s->nvals || v >= d->nvals)
        return sg__err(d->ctx, SG_EINVAL, "replay: a value out of range");
    if (s->vals[of].kind == SG_V_LIST) {
        if (d->vals[v].kind != SG_V_LIST || d->vals[v].u.list.n != s->vals[of].u.list.n)
            return sg__err(d->ctx, SG_EINVAL, "replay: a list mapped to a value that is not a list of its length");
        for (uint32_t k = 0; k < s->vals[of].u.list.n; k++)
            r->map[s->ids[s->vals[of].u.list.off + k]] = d->ids[d->vals[v].u.list.off + k];
    }
    r->map[of] = v;
    return SG_OK;
}

/* The dst node just recorded binds fresh unbacked symbols where src's node
 * bound others: the fresh ones are renamed to the old (PyTorch's unbacked
 * renaming when it traces again), in the environment and in dst. */
static sg_status rename_binds(sg__replay *r, uint32_t node, uint32_t first_val)
{
    const sg__gnode *sn = &r->src->nodes[r->node];
    sg__graph *d = r->dst;
    sg__gnode *dn = &d->nodes[node];
    if (r->renamed || !sn->nbinds || dn->nbinds != sn->nbinds)
        return SG_OK;
    r->renamed = true;
    const sg_expr *from[64], *to[64], *b[64];
    if (sn->nbinds > 64)
        return sg__err(d->ctx, SG_ELIMIT, "replay: a node binding %u symbols", sn->nbinds);
    size_t n = 0;
    for (uint32_t i = 0; i < sn->nbinds; i++) {
        const sg_expr *o = r->src->exprs[sn->binds + i], *f = d->exprs[dn->binds + i];
        if (o == f)
            continue;
        sg_status s = sg_env_rename_unbacked(d->env, f, o);
        if (s)
            return s;
        from[n] = f;
        to[n++] = o;
    }
    if (!n)
        return SG_OK;
    uint32_t binds;
    for (uint32_t i = 0; i < dn->nbinds; i++)
        b[i] = r->src->exprs[sn->binds + i];
    sg_status s = sg__graph_exprs(d, &binds, b, dn->nbinds);
    if (s)
        return s;
    d->nodes[node].binds = binds;
    for (size_t k = node + 1; k < d->nnodes && !s; k++) /* the rule's runtime asserts */
        if (d->nodes[k].kind == SG_N_ASSERT)
            s = sg_expr_subs(d->ctx, &d->nodes[k].cond, d->nodes[k].cond, n, from, to);
    return s ? s : sg__graph_subst(d, first_val, n, from, to);
}

sg_status sg__replay_call(sg__replay *r, const sg__schema *s, const sg__garg *args, size_t nargs, uint32_t *out)
{
    sg__graph *d = r->dst;
    size_t nodes = d->nnodes, vals = d->nvals;
    sg_status st = sg__graph_record(d, s, args, nargs, r->src->nodes[r->node].line, NULL, out);
    if (!st && d->nnodes > nodes && d->nodes[nodes].nbinds)
        st = rename_binds(r, (uint32_t)nodes, (uint32_t)vals);
    return st;
}

/* The dst values of n src values (ids[k], or the values args[k] are), into
 * a block the caller frees. what: for the message of one not mapped. */
static sg_status mapped(sg__replay *r, const uint32_t *ids, const sg__garg *args, size_t n, const char *what,
                        uint32_t **out)
{
    sg__graph *d = r->dst;
    if (!(*out = sg__malloc(d->ctx, (n ? n : 1) * sizeof **out)))
        return sg__nomem(d->ctx);
    for (size_t k = 0; k < n; k++) {
        uint32_t v = ids ? ids[k] : args[k].kind == SG_A_VALUE ? args[k].u.v : SG_NOVAL;
        if (v == SG_NOVAL || ((*out)[k] = r->map[v]) == SG_NOVAL) {
            sg_free(*out);
            *out = NULL;
            return sg__err(d->ctx, SG_EINVAL, "replay: node %u takes %s the hook did not map", r->node, what);
        }
    }
    return SG_OK;
}

/* Argument a of src as an argument of dst. */
static sg_status map_arg(sg__replay *r, const sg__garg *a, sg__garg *out)
{
    const sg__graph *s = r->src;
    sg__graph *d = r->dst;
    *out = *a;
    switch ((sg__akind)a->kind) {
    case SG_A_VALUE:
        if (r->map[a->u.v] == SG_NOVAL)
            return sg__err(d->ctx, SG_EINVAL, "replay: node %u takes a value the hook did not map", r->node);
        out->u.v = r->map[a->u.v];
        return SG_OK;
    case SG_A_VALUES: { /* (torch.cat of any number of tensors) */
        uint32_t *ids;
        sg_status st = mapped(r, s->ids + a->u.list.off, NULL, a->u.list.n, "a value", &ids);
        if (!st)
            st = sg__graph_ids(d, &out->u.list.off, ids, a->u.list.n);
        sg_free(ids);
        return st;
    }
    case SG_A_EXPRS:
        return sg__graph_exprs(d, &out->u.list.off, s->exprs + a->u.list.off, a->u.list.n);
    case SG_A_SCOPE:
        return sg__err(d->ctx, SG_EINTERNAL, "replay: a call that takes a subgraph");
    default:
        return SG_OK;
    }
}

sg_status sg__graph_value_like(sg__graph *d, const sg__graph *s, uint32_t of, uint32_t *storages, uint32_t *out)
{
    /* copies: s may be d, whose arrays the new value may move */
    const sg__gval xv = s->vals[of], *x = &xv;
    sg_status st;
    uint32_t v;
    if (x->kind == SG_V_TENSOR) {
        const sg__fake_tensor *t = &x->u.t;
        uint32_t *sto = &storages[t->storage];
        const sg_expr *e[2 * SG_MAX_DIMS];
        memcpy(e, s->exprs + t->dims, 2 * (size_t)t->ndim * sizeof *e);
        if ((st = sg__graph_tensor(d, &v, (sg_dtype)t->dtype, t->ndim, e, e + t->ndim, t->offset, *sto)))
            return st;
        if (*sto == SG_NOVAL) {
            *sto = d->vals[v].u.t.storage;
            sg__graph_set_storage_numel(d, *sto, sg__graph_storage_numel(s, t->storage));
        }
        sg__fake_tensor *dt = &d->vals[v].u.t;
        dt->requires_grad = t->requires_grad;
        dt->leaf = t->leaf;
        dt->base = SG_NOVAL;
    } else if (x->kind == SG_V_LIST) {
        return sg__err(d->ctx, SG_EUNSUPPORTED, "replay: a placeholder that is a list");
    } else if ((st = sg__graph_value(d, &v, (sg__vkind)x->kind, x->u.e, x->u.f))) {
        return st;
    }
    *out = v;
    return SG_OK;
}

static sg_status placeholder(sg__replay *r, uint32_t node)
{
    const sg__graph *s = r->src;
    sg__graph *d = r->dst;
    uint32_t of = s->nodes[node].out, v;
    const sg__gval *x = &s->vals[of];
    sg_status st;
    if ((st = sg__graph_value_like(d, s, of, r->storages, &v)))
        return st;
    if (x->kind == SG_V_TENSOR && x->u.t.base != SG_NOVAL)
        d->vals[v].u.t.base = r->map[x->u.t.base];
    /* in a subgraph, the enclosing scope's value it takes (lifted) */
    uint32_t outer = SG_NOVAL;
    const sg__scope *sc = &s->scopes[s->nodes[node].scope];
    for (uint32_t i = 0; i < sc->nphs; i++)
        if (sc->phs[i] == node && sc->outer[i] != SG_NOVAL && (outer = r->map[sc->outer[i]]) == SG_NOVAL)
            return sg__err(d->ctx, SG_EINVAL, "replay: a subgraph takes a value the hook did not map");
    if ((st = sg__graph_placeholder_of(d, v, x->name, outer)))
        return st;
    r->map[of] = v;
    return SG_OK;
}

static sg_status replay_node(sg__replay *r, sg__replay_fn hook, void *ud);

/* Subgraph s of src replayed as a new scope of dst, nested in the current
 * one (its placeholders first, in the order the scope takes them, which
 * may not be the order they were made in; then its other nodes and its
 * output; a failed one, sg__scope.failed, its placeholders and its error);
 * *out: the new scope. */
static sg_status replay_scope(sg__replay *r, sg__replay_fn hook, void *ud, uint32_t s, uint32_t *out)
{
    const sg__graph *src = r->src;
    sg__graph *d = r->dst;
    uint32_t parent = d->cur, node = r->node;
    sg_status st = sg__graph_scope_open(d, out, src->scopes[s].name);
    const sg__scope *sc = &src->scopes[s];
    for (uint32_t i = 0; i < sc->nphs && !st; i++) { /* its signature, in the order it takes them */
        r->node = sc->phs[i];
        st = placeholder(r, sc->phs[i]);
    }
    if (sc->failed) { /* (a custom Function's backward whose tracing failed: its signature and its error) */
        if (!st)
            st = sg__graph_output(d, NULL, 0);
        if (!st)
            st = sg__graph_scope_fail(d, *out, sc->failed, sc->failed_msg);
        r->node = node;
        d->cur = parent;
        return st;
    }
    for (uint32_t i = 0; i < src->nnodes && !st; i++)
        if (src->nodes[i].scope == s && src->nodes[i].kind != SG_N_PLACEHOLDER) {
            r->node = i;
            if (r->cbs->cond && src->nodes[i].kind == SG_N_COND)
                st = r->cbs->cond(r, ud, i);
            if (r->cbs->function && src->nodes[i].kind == SG_N_FUNCTION)
                st = r->cbs->function(r, ud, i);
            if (!st)
                st = replay_node(r, hook, ud);
        }
    r->node = node;
    d->cur = parent;
    return st;
}

/* A fresh value of dst laid out as src's value of (a cond's merged output:
 * made by the cond, not by a rule). */
static sg_status copy_value(sg__replay *r, uint32_t of, uint32_t *out)
{
    const sg__graph *s = r->src;
    sg__graph *d = r->dst;
    const sg__gval *x = &s->vals[of];
    if (x->kind == SG_V_LIST) {
        uint32_t *ids = sg__malloc(d->ctx, (x->u.list.n ? x->u.list.n : 1) * sizeof *ids);
        sg_status st = ids ? SG_OK : sg__nomem(d->ctx);
        for (uint32_t k = 0; k < x->u.list.n && !st; k++)
            st = copy_value(r, s->ids[x->u.list.off + k], &ids[k]);
        if (!st)
            st = sg__graph_list(d, out, ids, x->u.list.n);
        sg_free(ids);
        return st;
    }
    if (x->kind != SG_V_TENSOR)
        return sg__graph_value(d, out, (sg__vkind)x->kind, x->u.e, x->u.f);
    const sg__fake_tensor *t = &x->u.t;
    const sg_expr *const *e = s->exprs + t->dims;
    sg_status st = sg__graph_tensor(d, out, (sg_dtype)t->dtype, t->ndim, e, e + t->ndim, t->offset, SG_NOVAL);
    if (!st) {
        d->vals[*out].u.t.requires_grad = t->requires_grad;
        d->vals[*out].u.t.leaf = t->leaf;
    }
    return st;
}

/* A cond node: its branches replayed as subgraphs of dst, its operands
 * and predicate mapped, its merged outputs copied (the cond made them, with
 * the fresh unbacked symbols it binds: kept as they are). */
static sg_status replay_cond(sg__replay *r, sg__replay_fn hook, void *ud)
{
    const sg__graph *s = r->src;
    sg__graph *d = r->dst;
    const sg__gnode *n = &s->nodes[r->node];
    const sg__garg *a = &s->args[n->args];
    sg__garg pred = a[0];
    if (pred.kind == SG_A_VALUE && (pred.u.v = r->map[a[0].u.v]) == SG_NOVAL)
        return sg__err(d->ctx, SG_EINVAL, "replay: a cond's predicate the hook did not map");
    uint32_t ts, fs, *ops, v;
    sg_status st = mapped(r, s->ids + a[3].u.list.off, NULL, a[3].u.list.n, "an operand", &ops);
    if (st)
        return st;
    st = replay_scope(r, hook, ud, a[1].u.v, &ts);
    if (!st)
        st = replay_scope(r, hook, ud, a[2].u.v, &fs);
    const sg__gval *ol = &s->vals[n->out];
    uint32_t nsrc = ol->kind == SG_V_LIST ? ol->u.list.n : 1;
    const sg__gnode *to = st ? NULL : &d->nodes[d->scopes[ts].output];
    uint32_t nextra = to && to->nargs > nsrc ? to->nargs - nsrc : 0;
    if (!st && !nextra) {
        st = copy_value(r, n->out, &v);
    } else if (!st) { /* src's outputs, then the values the branches gave after them (branch_end) */
        uint32_t *ids = sg__malloc(d->ctx, ((size_t)nsrc + nextra) * sizeof *ids);
        uint32_t *sto = sg__malloc(d->ctx, ((size_t)d->nstorages + 1) * sizeof *sto);
        st = ids && sto && ol->kind == SG_V_LIST ? SG_OK : ids && sto ? SG_EINTERNAL : sg__nomem(d->ctx);
        if (sto)
            memset(sto, 0xff, ((size_t)d->nstorages + 1) * sizeof *sto);
        for (uint32_t k = 0; k < nsrc && !st; k++)
            st = copy_value(r, s->ids[ol->u.list.off + k], &ids[k]);
        for (uint32_t k = 0; k < nextra && !st; k++)
            st = sg__graph_value_like(d, d, d->args[to->args + nsrc + k].u.v, sto, &ids[nsrc + k]);
        if (!st)
            st = sg__graph_list(d, &v, ids, nsrc + nextra);
        for (uint32_t k = 0; k < nsrc && !st; k++)
            st = sg__replay_map(r, s->ids[ol->u.list.off + k], ids[k]);
        sg_free(ids);
        sg_free(sto);
    }
    if (!st && !(st = sg__graph_cond(d, &pred, ts, fs, ops, a[3].u.list.n, v, n->line)))
        d->nodes[d->nnodes - 1].flags = n->flags; /* (made under no_grad) */
    sg_free(ops);
    if (!st && n->nbinds)
        st = sg__graph_bind(d, (uint32_t)d->nnodes - 1, s->exprs + n->binds, n->nbinds);
    if (!st && !nextra)
        st = sg__replay_map(r, n->out, v);
    else if (!st)
        r->map[n->out] = v;
    if (!st && r->cbs->cond_done)
        st = r->cbs->cond_done(r, ud, r->node, v);
    return st;
}

/* A custom Function's node: its backward replayed as a subgraph of dst,
 * its lists mapped. */
static sg_status replay_function(sg__replay *r, sg__replay_fn hook, void *ud)
{
    const sg__graph *s = r->src;
    sg__graph *d = r->dst;
    const sg__gnode *n = &s->nodes[r->node];
    const sg__garg *a = &s->args[n->args];
    uint32_t *lists[3] = {NULL, NULL, NULL}, bw;
    sg_status st = SG_OK;
    for (int k = 0; k < 3 && !st; k++)
        st = mapped(r, s->ids + a[1 + k].u.list.off, NULL, a[1 + k].u.list.n, "a custom Function's tensor", &lists[k]);
    if (!st)
        st = replay_scope(r, hook, ud, a[0].u.v, &bw);
    /* the placeholders it writes: the pass's (functionalization's), else src's */
    const uint32_t *wr = NULL;
    uint32_t nw = 0, ng = a[4].u.list.n, *ints = NULL;
    if (!st && r->cbs->function_written)
        st = r->cbs->function_written(r, ud, r->node, &wr, &nw);
    else
        nw = a[5].u.list.n;
    if (!st && !(ints = sg__malloc(d->ctx, ((size_t)ng + nw + 1) * sizeof *ints)))
        st = sg__nomem(d->ctx);
    for (uint32_t k = 0; k < ng + (wr ? 0 : nw) && !st; k++) {
        int64_t i = 0;
        (void)sg_expr_get_si(s->exprs[k < ng ? a[4].u.list.off + k : a[5].u.list.off + (k - ng)], &i);
        ints[k] = (uint32_t)i;
    }
    if (!st && wr && nw)
        memcpy(ints + ng, wr, nw * sizeof *ints);
    if (!st) {
        d->scopes[bw].grads = true;
        st = sg__graph_function(d, bw, lists[0], a[1].u.list.n, lists[1], a[2].u.list.n, lists[2], a[3].u.list.n,
                                ints, ng, ints + ng, nw, n->line);
    }
    sg_free(ints);
    for (int k = 0; k < 3; k++)
        sg_free(lists[k]);
    return st;
}

static sg_status replay_node(sg__replay *r, sg__replay_fn hook, void *ud)
{
    const sg__graph *s = r->src;
    sg__graph *d = r->dst;
    const sg__gnode *n = &s->nodes[r->node];
    switch ((sg__nkind)n->kind) {
    case SG_N_PLACEHOLDER:
        return placeholder(r, r->node);
    case SG_N_ASSERT:
        /* the rule of the call before, run again in dst, may have made it */
        for (size_t k = r->since; k < d->nnodes; k++)
            if (d->nodes[k].kind == SG_N_ASSERT && d->nodes[k].cond == n->cond)
                return SG_OK;
        return sg__graph_assert(d, n->cond, n->line);
    case SG_N_COND:
        return replay_cond(r, hook, ud);
    case SG_N_FUNCTION:
        return replay_function(r, hook, ud);
    case SG_N_OUTPUT: {
        uint32_t *vals, *all = NULL;
        const uint32_t *extra = NULL;
        uint32_t nextra = 0;
        sg_status st = mapped(r, NULL, s->args + n->args, n->nargs, "an output", &vals);
        if (!st && n->scope != 0 && r->cbs->branch_end)
            st = r->cbs->branch_end(r, ud, n->scope, &extra, &nextra);
        uint32_t nlead = n->scope == 0 ? r->nlead : 0, total = nlead + n->nargs + nextra;
        if (!st && total != n->nargs) { /* the root's lead values first, a branch's extra ones after */
            if (!(all = sg__malloc(d->ctx, (size_t)total * sizeof *all)))
                st = sg__nomem(d->ctx);
            else {
                if (nlead)
                    memcpy(all, r->lead, nlead * sizeof *all);
                if (n->nargs)
                    memcpy(all + nlead, vals, n->nargs * sizeof *all);
                if (nextra)
                    memcpy(all + nlead + n->nargs, extra, nextra * sizeof *all);
            }
        }
        if (!st)
            st = all ? sg__graph_output(d, all, total) : sg__graph_output(d, vals, n->nargs);
        sg_free(vals);
        sg_free(all);
        return st;
    }
    case SG_N_CALL:
        break;
    }
    sg__garg args[SG_SCHEMA_ARGS];
    if (n->nargs > SG_SCHEMA_ARGS)
        return sg__err(d->ctx, SG_EINTERNAL, "replay: a node with %u arguments", n->nargs);
    sg_status st = SG_OK;
    for (uint32_t i = 0; i < n->nargs && !st; i++)
        st = map_arg(r, &s->args[n->args + i], &args[i]);
    if (st)
        return st;
    r->renamed = false;
    r->since = d->nnodes;
    if (hook)
        return hook(r, ud, r->node, args, n->nargs);
    uint32_t v;
    return sg__replay_default(r, r->node, args, n->nargs, &v);
}

sg_status sg__replay_default(sg__replay *r, uint32_t node, const sg__garg *args, size_t nargs, uint32_t *out)
{
    const sg__gnode *n = &r->src->nodes[node];
    sg__graph *d = r->dst;
    size_t before = d->nnodes;
    sg_status st = sg__replay_call(r, n->schema, args, nargs, out);
    if (st)
        return st;
    if (d->nnodes > before && d->nodes[before].kind == SG_N_CALL)
        d->nodes[before].flags = n->flags; /* .data's detach stays one */
    return n->out == SG_NOVAL ? SG_OK : sg__replay_map(r, n->out, *out);
}

void sg__replay_lead(sg__replay *r, const uint32_t *vals, uint32_t n)
{
    r->lead = vals;
    r->nlead = n;
}

uint32_t sg__replay_mapped(const sg__replay *r, uint32_t of)
{
    return of < r->src->nvals ? r->map[of] : SG_NOVAL;
}

sg_status sg__graph_replay(const sg__graph *src, sg__graph *dst, sg__replay_fn hook, void *ud)
{
    const sg__replay_cbs cbs = {.call = hook};
    return sg__graph_replay_cbs(src, dst, &cbs, ud);
}

sg_status sg__graph_replay_cbs(const sg__graph *src, sg__graph *dst, const sg__replay_cbs *cbs, void *ud)
{
    if (!src || !dst || !cbs)
        return SG_EINVAL;
    if (dst->nnodes || dst->env != src->env || dst->cur)
        return sg__err(dst->ctx, SG_EINVAL, "replay: into an empty graph over the same environment");
    sg__replay r = {.src = src, .dst = dst, .cbs = cbs};
    sg__replay_fn hook = cbs->call;
    if (!dst->reg)
        dst->reg = src->reg;
    r.map = sg__malloc(dst->ctx, (src->nvals ? src->nvals : 1) * sizeof *r.map);
    r.storages = sg__malloc(dst->ctx, (src->nstorages ? src->nstorages : 1) * sizeof *r.storages);
    sg_status st = r.map && r.storages ? SG_OK : sg__nomem(dst->ctx);
    if (!st) {
        memset(r.map, 0xff, src->nvals * sizeof *r.map); /* SG_NOVAL */
        memset(r.storages, 0xff, src->nstorages * sizeof *r.storages);
    }
    for (r.node = 0; r.node < src->nnodes && !st; r.node++)
        if (src->nodes[r.node].scope == 0) {
            if (cbs->end && src->nodes[r.node].kind == SG_N_OUTPUT)
                st = cbs->end(&r, ud);
            if (!st && cbs->cond && src->nodes[r.node].kind == SG_N_COND)
                st = cbs->cond(&r, ud, r.node);
            if (!st && cbs->function && src->nodes[r.node].kind == SG_N_FUNCTION)
                st = cbs->function(&r, ud, r.node);
            if (!st)
                st = replay_node(&r, hook, ud);
        }
    sg_free(r.map);
    sg_free(r.storages);
    return st;
}
