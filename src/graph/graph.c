/* The graph IR: building a graph and checking its invariants. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "graph/graph.h"

static const char *const dtype_short[SG_NDTYPE] = {"f64", "f32", "i64", "b8"};
static const char *const dtype_name[SG_NDTYPE] = {"torch.float64", "torch.float32", "torch.int64", "torch.bool"};

const char *sg__dtype_short(sg_dtype d)
{
    return d < SG_NDTYPE ? dtype_short[d] : "?";
}

const char *sg__dtype_name(sg_dtype d)
{
    return d < SG_NDTYPE ? dtype_name[d] : "?";
}

/* The name of the values that have none (every value but named placeholders). */
static const char no_name[1] = "";

#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(sg__gval) == 40 && sizeof(sg__gnode) == 40 && sizeof(sg__garg) == 24,
               "graph.h: the records grew (see tests/bench/bench_trace.c, bytes per op)");
#endif

sg_status sg__graph_new(sg_env *env, sg__graph **out)
{
    sg_ctx *ctx = sg_env_ctx(env);
    *out = NULL;
    sg__graph *g = sg__calloc(ctx, 1, sizeof *g);
    if (!g)
        return sg__nomem(ctx);
    g->ctx = ctx;
    g->env = env;
    uint32_t root;
    sg_status s = sg__graph_scope_open(g, &root, "");
    if (s) {
        sg__graph_free(g);
        return s;
    }
    *out = g;
    return SG_OK;
}

/* The blocks scope sc owns. */
static void scope_free(sg__scope *sc)
{
    if (sc->name != no_name)
        sg_free((char *)sc->name);
    sg_free(sc->phs);
    sg_free(sc->outer);
    sg_free(sc->writes);
    sg_free(sc->failed_msg);
    sg__idmap_free(&sc->bound);
    sg__idmap_free(&sc->lifted);
}

/* The placeholders' names (the only values that own a block). */
static void free_names(sg__graph *g)
{
    for (size_t i = 0; i < g->nvals; i++)
        if (g->vals[i].name != no_name)
            sg_free((char *)g->vals[i].name);
    g->name_bytes = 0;
}

void sg__graph_free(sg__graph *g)
{
    if (!g)
        return;
    for (uint32_t i = 0; i < g->nscopes; i++)
        scope_free(&g->scopes[i]);
    sg_free(g->scopes);
    sg_free(g->storage_numel);
    sg_free(g->hbases);
    sg_free(g->pw_memo);
    sg__rmemo_free(g->rule_memo);
    free_names(g);
    sg_free(g->vals);
    sg_free(g->nodes);
    sg_free(g->args);
    sg_free(g->exprs);
    sg_free(g->ids);
    sg_free(g);
}

void sg__graph_reset(sg__graph *g)
{
    free_names(g);
    for (uint32_t i = 1; i < g->nscopes; i++)
        scope_free(&g->scopes[i]);
    g->nscopes = 1; /* the root stays (sg__graph_new opened it), empty */
    g->cur = 0;
    sg__scope *root = &g->scopes[0];
    root->nphs = 0;
    root->nwrites = 0;
    root->output = SG_NOVAL;
    sg__idmap_reset(&root->bound);
    sg__idmap_reset(&root->lifted);
    g->nvals = g->nnodes = g->nargs = g->nexprs = g->nids = 0;
    g->nstorages = 0;
    g->nhbases = 0;
    g->nrecent = g->recent_next = g->nlrecent = g->lrecent_next = 0;
}

void sg__graph_reserve(sg__graph *g, size_t nodes)
{
    if (nodes > UINT32_MAX / 4)
        return;
    (void)sg__grow(g->ctx, (void **)&g->vals, &g->capvals, g->nvals + nodes, sizeof *g->vals);
    (void)sg__grow(g->ctx, (void **)&g->nodes, &g->capnodes, g->nnodes + nodes, sizeof *g->nodes);
    (void)sg__grow(g->ctx, (void **)&g->args, &g->capargs, g->nargs + 2 * nodes, sizeof *g->args);
}

/* Room for n more entries of the array *a (count *used, capacity *cap). */
static sg_status room(sg__graph *g, void **a, size_t *cap, size_t used, size_t n, size_t elem)
{
    sg_ctx *ctx = g->ctx;
    if (used + n > UINT32_MAX - 1)
        return sg__err(g->ctx, SG_ELIMIT, "graph: more than 2**32 entries");
    if (used + n <= *cap) /* the common case (room reserved or grown before): no call */
        return SG_OK;
    return sg__grow(ctx, a, cap, used + n, elem) ? SG_OK : sg__nomem(g->ctx);
}

/* Append n expressions to exprs (never shared). */
static sg_status push_exprs(sg__graph *g, uint32_t *off, const sg_expr *const *e, size_t n)
{
    sg_status s = room(g, (void **)&g->exprs, &g->capexprs, g->nexprs, n, sizeof *g->exprs);
    if (s)
        return s;
    *off = (uint32_t)g->nexprs;
    if (n)
        memcpy(g->exprs + g->nexprs, e, n * sizeof *e);
    g->nexprs += n;
    return SG_OK;
}

/* Lists (of a call's arguments, of the symbols a node binds) are never
 * rewritten, so an equal list among the last few made is shared. */
sg_status sg__graph_exprs(sg__graph *g, uint32_t *off, const sg_expr *const *e, size_t n)
{
    for (unsigned i = 0; i < g->nlrecent && n; i++)
        if (g->lrecent_n[i] == n && g->lrecent[i] + n <= g->nexprs && /* still there (tracer.c truncates) */
            !memcmp(g->exprs + g->lrecent[i], e, n * sizeof *e)) {
            *off = g->lrecent[i];
            return SG_OK;
        }
    sg_status s = push_exprs(g, off, e, n);
    if (s || !n)
        return s;
    g->lrecent[g->lrecent_next] = *off;
    g->lrecent_n[g->lrecent_next] = (uint32_t)n;
    g->lrecent_next = (uint8_t)((g->lrecent_next + 1) % SG_GRAPH_RECENT);
    if (g->nlrecent < SG_GRAPH_RECENT)
        g->nlrecent++;
    return SG_OK;
}

sg_status sg__graph_ids(sg__graph *g, uint32_t *off, const uint32_t *ids, size_t n)
{
    sg_status s = room(g, (void **)&g->ids, &g->capids, g->nids, n, sizeof *g->ids);
    if (s)
        return s;
    *off = (uint32_t)g->nids;
    if (n)
        memcpy(g->ids + g->nids, ids, n * sizeof *ids);
    g->nids += n;
    return SG_OK;
}

static sg_status new_value(sg__graph *g, uint32_t *out, sg__vkind kind)
{
    sg_status s = room(g, (void **)&g->vals, &g->capvals, g->nvals, 1, sizeof *g->vals);
    if (s)
        return s;
    sg__gval *v = &g->vals[g->nvals];
    memset(v, 0, sizeof *v);
    v->name = no_name;
    v->kind = (uint8_t)kind;
    v->node = SG_NOVAL;
    *out = (uint32_t)g->nvals++;
    return SG_OK;
}

sg_status sg__graph_contiguous_strides(sg_ctx *ctx, size_t n, const sg_expr *const *sizes, const sg_expr **strides)
{
    const sg_expr *acc = ctx->one;
    for (size_t d = n; d-- > 0;) {
        int64_t z;
        strides[d] = acc;
        if (!(sg_expr_get_si(sizes[d], &z) && z == 0))
            CHAIN(sg_expr_mul(ctx, &acc, acc, sizes[d]));
    }
    return SG_OK;
}

sg_status sg__graph_tensor(sg__graph *g, uint32_t *out, sg_dtype dtype, size_t ndim, const sg_expr *const *sizes,
                           const sg_expr *const *strides, const sg_expr *offset, uint32_t storage)
{
    return sg__graph_tensor_numel(g, out, dtype, ndim, sizes, strides, offset, storage, NULL, NULL);
}

/* Does the run of exprs at off (2 ndim of them, within g's) hold sizes then strides? */
static bool run_is(const sg__graph *g, uint32_t off, size_t ndim, const sg_expr *const *sizes,
                   const sg_expr *const *strides)
{
    if (off == SG_NOVAL || off + 2 * ndim > g->nexprs)
        return false;
    const sg_expr *const *run = g->exprs + off;
    size_t d = 0;
    while (d < ndim && run[d] == sizes[d] && run[ndim + d] == strides[d])
        d++;
    return d == ndim;
}

/* The fields of tensor value t of g, made just now: its layout the run dims, on storage (SG_NOVAL: a
 * new one of numel elements, room made for it). */
static inline void fill_tensor(sg__graph *g, sg__fake_tensor *t, sg_dtype dtype, size_t ndim, uint32_t dims,
                               const sg_expr *offset, uint32_t storage, const sg_expr *numel)
{
    t->dtype = (uint8_t)dtype;
    t->ndim = (uint8_t)ndim;
    t->dims = dims;
    t->offset = offset;
    if (storage == SG_NOVAL)
        g->storage_numel[g->nstorages] = numel;
    t->storage = storage != SG_NOVAL ? storage : g->nstorages++;
    t->base = SG_NOVAL;
    t->leaf = true;
}

sg_status sg__graph_tensor_numel(sg__graph *g, uint32_t *out, sg_dtype dtype, size_t ndim,
                                 const sg_expr *const *sizes, const sg_expr *const *strides, const sg_expr *offset,
                                 uint32_t storage, const sg_expr *numel, uint32_t *run)
{
    if (dtype >= SG_NDTYPE || ndim > SG_MAX_DIMS || (storage != SG_NOVAL && storage >= g->nstorages) || !offset)
        return sg__err(g->ctx, SG_EINVAL, "graph: bad tensor value");
    if (run && g->nvals < g->capvals && g->nvals + 1 <= UINT32_MAX - 1 &&
        (storage != SG_NOVAL || (numel && g->nstorages < g->capstorage)) && run_is(g, *run, ndim, sizes, strides)) {
        /* the common case of a remembered result (its run there, room made before): no search, no call */
        sg__gval *v = &g->vals[g->nvals];
        memset(v, 0, sizeof *v);
        v->name = no_name;
        v->kind = SG_V_TENSOR;
        v->node = SG_NOVAL;
        fill_tensor(g, &v->u.t, dtype, ndim, *run, offset, storage, numel);
        *out = (uint32_t)g->nvals++;
        return SG_OK;
    }
    if (storage == SG_NOVAL && numel) {
        if (g->nstorages + (size_t)1 > g->capstorage && /* (the common case, room: no call) */
            !sg__grow(g->ctx, (void **)&g->storage_numel, &g->capstorage, g->nstorages + 1, sizeof *g->storage_numel))
            return sg__nomem(g->ctx);
    } else if (storage == SG_NOVAL) { /* a storage of its own: of its number of elements */
        numel = g->ctx->one;
        /* sizes that are small constants (every eager tensor): their product in int64, interned (the very
           expression sg__mul makes of them) */
        int64_t k = 1;
        size_t d = 0;
        for (; d < ndim; d++)
            if (sizes[d]->op != SG_OP_INT || COEFF_IS_MPZ(sizes[d]->u.val) ||
                __builtin_mul_overflow(k, (int64_t)sizes[d]->u.val, &k))
                break;
        if (d == ndim)
            numel = sg__int_si(g->ctx, k);
        else
            for (d = 0; d < ndim && numel; d++)
                numel = sg__mul(g->ctx, numel, sizes[d]);
        if (!numel)
            return sg_ctx_last_error(g->ctx);
        if (!sg__grow(g->ctx, (void **)&g->storage_numel, &g->capstorage, g->nstorages + 1, sizeof *g->storage_numel))
            return sg__nomem(g->ctx);
    }
    size_t mark = g->nexprs;
    uint32_t dims = SG_NOVAL, tail;
    sg_status s = SG_OK;
    if (run && run_is(g, *run, ndim, sizes, strides)) /* the run the caller knows, still there */
        dims = *run;
    /* a recent layout, if equal and still there (the tracer truncates the arrays when a call fails);
       compared pointer by pointer (a few dimensions: a call of memcmp costs more), the latest first */
    for (unsigned j = 0, i; j < g->nrecent && dims == SG_NOVAL; j++) {
        i = (g->recent_next + SG_GRAPH_RECENT - 1 - j) % SG_GRAPH_RECENT;
        if (g->recent_ndim[i] == ndim && run_is(g, g->recent[i], ndim, sizes, strides))
            dims = g->recent[i];
    }
    if (dims == SG_NOVAL) {
        s = push_exprs(g, &dims, sizes, ndim);
        if (!s)
            s = push_exprs(g, &tail, strides, ndim);
    }
    if (!s)
        s = new_value(g, out, SG_V_TENSOR);
    if (s) {
        g->nexprs = mark;
        return s;
    }
    if (g->nexprs != mark) { /* a new layout: remember it */
        g->recent[g->recent_next] = dims;
        g->recent_ndim[g->recent_next] = (uint8_t)ndim;
        g->recent_next = (uint8_t)((g->recent_next + 1) % SG_GRAPH_RECENT);
        if (g->nrecent < SG_GRAPH_RECENT)
            g->nrecent++;
    }
    fill_tensor(g, &g->vals[*out].u.t, dtype, ndim, dims, offset, storage, numel);
    if (run)
        *run = dims;
    return SG_OK;
}

uint32_t sg__graph_hidden_base(const sg__graph *g, uint32_t v)
{
    for (size_t i = 0; i < g->nhbases; i += 2)
        if (g->hbases[i] == v)
            return g->hbases[i + 1];
    return SG_NOVAL;
}

void sg__graph_set_storage_numel(sg__graph *g, uint32_t storage, const sg_expr *numel)
{
    if (storage < g->nstorages && numel)
        g->storage_numel[storage] = numel;
}

sg_status sg__graph_value(sg__graph *g, uint32_t *out, sg__vkind kind, const sg_expr *e, double f)
{
    bool needs_expr = kind == SG_V_SYMINT || kind == SG_V_SYMBOOL;
    if ((kind != SG_V_SYMINT && kind != SG_V_SYMBOOL && kind != SG_V_FLOAT && kind != SG_V_NONE) ||
        needs_expr != (e != NULL))
        return sg__err(g->ctx, SG_EINVAL, "graph: bad value");
    sg_status s = new_value(g, out, kind);
    if (s)
        return s;
    if (needs_expr)
        g->vals[*out].u.e = e;
    else
        g->vals[*out].u.f = f;
    return SG_OK;
}

sg_status sg__graph_list(sg__graph *g, uint32_t *out, const uint32_t *vals, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (vals[i] >= g->nvals)
            return sg__err(g->ctx, SG_EINVAL, "graph: a list of unknown values");
    size_t mark = g->nids;
    uint32_t off;
    sg_status s = sg__graph_ids(g, &off, vals, n);
    if (!s)
        s = new_value(g, out, SG_V_LIST);
    if (s) {
        g->nids = mark;
        return s;
    }
    g->vals[*out].u.list.off = off;
    g->vals[*out].u.list.n = (uint32_t)n;
    return SG_OK;
}

/* A new node of kind that gives out (SG_NOVAL: nothing). */
static sg_status new_node(sg__graph *g, sg__gnode **out, sg__nkind kind, uint32_t val)
{
    if (val != SG_NOVAL && (val >= g->nvals || g->vals[val].node != SG_NOVAL))
        return sg__err(g->ctx, SG_EINVAL, "graph: a node's value is unknown or given already");
    if (g->scopes[g->cur].output != SG_NOVAL && !(kind == SG_N_PLACEHOLDER && g->cur))
        return sg__err(g->ctx, SG_EINVAL, "graph: a node after the output"); /* but a subgraph's inputs */
    sg_status s = room(g, (void **)&g->nodes, &g->capnodes, g->nnodes, 1, sizeof *g->nodes);
    if (s)
        return s;
    sg__gnode *n = &g->nodes[g->nnodes];
    memset(n, 0, sizeof *n);
    n->kind = (uint8_t)kind;
    n->out = val;
    n->scope = g->cur;
    *out = n;
    return SG_OK;
}

/* A copy of name in a block of the graph's (counted in name_bytes), or NULL. */
static const char *copy_name(sg__graph *g, const char *name)
{
    size_t len = strlen(name) + 1;
    char *copy = sg__malloc(g->ctx, len);
    if (copy) {
        memcpy(copy, name, len);
        g->name_bytes += len;
    }
    return copy;
}

/* ---- scopes ---- */

sg_status sg__graph_scope_open(sg__graph *g, uint32_t *out, const char *name)
{
    if (g->nscopes >= UINT16_MAX)
        return sg__err(g->ctx, SG_ELIMIT, "graph: more than %u subgraphs", (unsigned)UINT16_MAX);
    if (g->nscopes == g->capscopes) {
        size_t cap = g->capscopes;
        if (!sg__grow(g->ctx, (void **)&g->scopes, &cap, g->nscopes + 1, sizeof *g->scopes))
            return sg__nomem(g->ctx);
        g->capscopes = (uint32_t)cap;
    }
    sg__scope *sc = &g->scopes[g->nscopes];
    memset(sc, 0, sizeof *sc);
    sc->name = no_name;
    if (name && name[0] && !(sc->name = copy_name(g, name)))
        return sg__nomem(g->ctx);
    if (!sg__idmap_init(g->ctx, &sc->bound, 8) || !sg__idmap_init(g->ctx, &sc->lifted, 8)) {
        sg__idmap_free(&sc->bound);
        if (sc->name != no_name)
            sg_free((char *)sc->name);
        return sg__nomem(g->ctx);
    }
    sc->parent = g->nscopes ? g->cur : SG_NOVAL;
    sc->output = SG_NOVAL;
    *out = g->cur = g->nscopes++;
    return SG_OK;
}

sg_status sg__graph_scope_fail(sg__graph *g, uint32_t sc, sg_status st, const char *msg)
{
    size_t n = strlen(msg ? msg : "") + 1;
    char *copy = sg__malloc(g->ctx, n);
    if (!copy)
        return sg__nomem(g->ctx);
    memcpy(copy, msg ? msg : "", n);
    sg_free(g->scopes[sc].failed_msg);
    g->scopes[sc].failed_msg = copy;
    g->scopes[sc].failed = st;
    return SG_OK;
}

uint32_t sg__graph_scope_find(const sg__graph *g, const char *name)
{
    for (uint32_t i = 0; i < g->nscopes; i++)
        if (!strcmp(g->scopes[i].name, name))
            return i;
    return SG_NOVAL;
}

/* A list value's elements belong to the node that gives the list. */
static void give(sg__graph *g, uint32_t val, uint32_t node)
{
    if (val == SG_NOVAL)
        return;
    g->vals[val].node = node;
    if (g->vals[val].kind == SG_V_LIST)
        for (uint32_t i = 0; i < g->vals[val].u.list.n; i++)
            give(g, g->ids[g->vals[val].u.list.off + i], node);
}

sg_status sg__graph_placeholder(sg__graph *g, uint32_t out, const char *name)
{
    return sg__graph_placeholder_of(g, out, name, SG_NOVAL);
}

sg_status sg__graph_placeholder_of(sg__graph *g, uint32_t out, const char *name, uint32_t outer)
{
    sg__gnode *n;
    if (out == SG_NOVAL)
        return sg__err(g->ctx, SG_EINVAL, "graph: a placeholder gives a value");
    sg__scope *sc = &g->scopes[g->cur];
    if (sc->nphs == sc->capphs) { /* room in the signature first: nothing to undo after */
        size_t cap = sc->capphs, cap2 = sc->capphs;
        if (!sg__grow(g->ctx, (void **)&sc->phs, &cap, sc->nphs + 1, sizeof *sc->phs) ||
            !sg__grow(g->ctx, (void **)&sc->outer, &cap2, sc->nphs + 1, sizeof *sc->outer))
            return sg__nomem(g->ctx);
        sc->capphs = (uint32_t)(cap < cap2 ? cap : cap2);
    }
    sg_status s = new_node(g, &n, SG_N_PLACEHOLDER, out);
    if (s)
        return s;
    if (name && name[0]) {
        const char *copy = copy_name(g, name);
        if (!copy)
            return sg__nomem(g->ctx);
        if (g->vals[out].name != no_name)
            sg_free((char *)g->vals[out].name);
        g->vals[out].name = copy;
    }
    sc->phs[sc->nphs] = (uint32_t)g->nnodes;
    sc->outer[sc->nphs++] = outer;
    give(g, out, (uint32_t)g->nnodes++);
    return SG_OK;
}

static sg_status push_args(sg__graph *g, uint32_t *off, const sg__garg *args, size_t n)
{
    sg_status s = room(g, (void **)&g->args, &g->capargs, g->nargs, n, sizeof *g->args);
    if (s)
        return s;
    *off = (uint32_t)g->nargs;
    if (n)
        memcpy(g->args + g->nargs, args, n * sizeof *args);
    g->nargs += n;
    return SG_OK;
}

sg_status sg__graph_call(sg__graph *g, const sg__schema *sch, const sg__garg *args, size_t nargs, uint32_t out,
                         uint32_t line)
{
    if (!sch)
        return sg__err(g->ctx, SG_EINVAL, "graph: a call without a schema");
    sg__gnode *n;
    uint32_t off;
    sg_status s;
    if (g->nnodes < g->capnodes && g->nargs + nargs <= g->capargs && g->nargs + nargs <= UINT32_MAX - 1 &&
        g->nnodes + 1 <= UINT32_MAX - 1 && out < g->nvals &&
        g->vals[out].node == SG_NOVAL && g->scopes[g->cur].output == SG_NOVAL) {
        /* the common case (a value made for it, room reserved or grown before): new_node and push_args
           without their calls */
        n = &g->nodes[g->nnodes];
        memset(n, 0, sizeof *n);
        n->kind = SG_N_CALL;
        n->out = out;
        n->scope = g->cur;
        off = (uint32_t)g->nargs;
        for (size_t k = 0; k < nargs; k++)
            g->args[off + k] = args[k];
        g->nargs += nargs;
        s = SG_OK;
    } else {
        s = new_node(g, &n, SG_N_CALL, out);
        if (!s)
            s = push_args(g, &off, args, nargs);
    }
    sg__scope *sc = &g->scopes[g->cur];
    if (!s && sch->written && g->cur) {
        size_t cap = sc->capwrites;
        if (!sg__grow(g->ctx, (void **)&sc->writes, &cap, sc->nwrites + (size_t)1, sizeof *sc->writes))
            s = sg__nomem(g->ctx);
        else
            sc->capwrites = (uint32_t)cap;
    }
    if (s)
        return s;
    if (sch->written && g->cur)
        sc->writes[sc->nwrites++] = (uint32_t)g->nnodes;
    n->schema = sch;
    n->args = off;
    n->nargs = (uint32_t)nargs;
    n->line = line;
    if (out != SG_NOVAL && g->vals[out].kind != SG_V_LIST) /* (give's common case) */
        g->vals[out].node = (uint32_t)g->nnodes++;
    else
        give(g, out, (uint32_t)g->nnodes++);
    return SG_OK;
}

sg_status sg__graph_assert(sg__graph *g, const sg_expr *cond, uint32_t line)
{
    sg__gnode *n;
    if (!cond || sg_expr_sort(cond) != SG_SORT_BOOL)
        return sg__err(g->ctx, SG_EINVAL, "graph: an assert needs a boolean expression");
    sg_status s = new_node(g, &n, SG_N_ASSERT, SG_NOVAL);
    if (s)
        return s;
    n->cond = cond;
    n->line = line;
    g->nnodes++;
    return SG_OK;
}

sg_status sg__graph_output(sg__graph *g, const uint32_t *vals, size_t n)
{
    sg_ctx *ctx = g->ctx;
    sg__garg *a = n ? sg__malloc(ctx, n * sizeof *a) : NULL;
    if (n && !a)
        return sg__nomem(g->ctx);
    for (size_t i = 0; i < n; i++)
        a[i] = (sg__garg){.kind = SG_A_VALUE, .u.v = vals[i]};
    sg__gnode *node;
    uint32_t off = 0;
    sg_status s = new_node(g, &node, SG_N_OUTPUT, SG_NOVAL);
    if (!s)
        s = push_args(g, &off, a, n);
    sg_free(a);
    if (s)
        return s;
    node->args = off;
    node->nargs = (uint32_t)n;
    g->scopes[g->cur].output = (uint32_t)g->nnodes++;
    return SG_OK;
}

sg_status sg__graph_cond(sg__graph *g, const sg__garg *pred, uint32_t tscope, uint32_t fscope, const uint32_t *ops,
                         size_t nops, uint32_t out, uint32_t line)
{
    sg__garg a[4] = {*pred, {.kind = SG_A_SCOPE, .u.v = tscope}, {.kind = SG_A_SCOPE, .u.v = fscope},
                     {.kind = SG_A_VALUES}};
    uint32_t off;
    sg_status s = sg__graph_ids(g, &off, ops, nops);
    if (s)
        return s;
    a[3].u.list.off = off;
    a[3].u.list.n = (uint32_t)nops;
    sg__gnode *n;
    if ((s = new_node(g, &n, SG_N_COND, out)) || (s = push_args(g, &off, a, 4)))
        return s;
    n = &g->nodes[g->nnodes];
    n->args = off;
    n->nargs = 4;
    n->line = line;
    give(g, out, (uint32_t)g->nnodes++);
    return SG_OK;
}

sg_status sg__graph_function(sg__graph *g, uint32_t bw, const uint32_t *outs, size_t nouts, const uint32_t *ins,
                             size_t nins, const uint32_t *saved, size_t nsaved, const uint32_t *grad_of,
                             size_t ngrad, const uint32_t *written, size_t nwritten, uint32_t line)
{
    sg__garg a[6] = {{.kind = SG_A_SCOPE, .u.v = bw}, {.kind = SG_A_VALUES}, {.kind = SG_A_VALUES},
                     {.kind = SG_A_VALUES}, {.kind = SG_A_EXPRS}, {.kind = SG_A_EXPRS}};
    const uint32_t *lists[3] = {outs, ins, saved};
    size_t lens[3] = {nouts, nins, nsaved};
    uint32_t off;
    sg_status s = SG_OK;
    for (int k = 0; k < 3 && !s; k++)
        if (!(s = sg__graph_ids(g, &off, lists[k], lens[k]))) {
            a[1 + k].u.list.off = off;
            a[1 + k].u.list.n = (uint32_t)lens[k];
        }
    const uint32_t *ints[2] = {grad_of, written};
    size_t nints[2] = {ngrad, nwritten};
    for (int k = 0; k < 2 && !s; k++) {
        const sg_expr **idx = sg__malloc(g->ctx, (nints[k] ? nints[k] : 1) * sizeof *idx);
        if (!idx)
            s = sg__nomem(g->ctx);
        for (size_t j = 0; j < nints[k] && !s; j++)
            if (!(idx[j] = sg__int_si(g->ctx, ints[k][j])))
                s = sg_ctx_last_error(g->ctx);
        if (!s && !(s = sg__graph_exprs(g, &off, idx, nints[k]))) {
            a[4 + k].u.list.off = off;
            a[4 + k].u.list.n = (uint32_t)nints[k];
        }
        sg_free(idx);
    }
    sg__gnode *n;
    if (s || (s = new_node(g, &n, SG_N_FUNCTION, SG_NOVAL)) || (s = push_args(g, &off, a, 6)))
        return s;
    n = &g->nodes[g->nnodes++];
    n->args = off;
    n->nargs = 6;
    n->line = line;
    return SG_OK;
}

sg_status sg__graph_bind(sg__graph *g, uint32_t node, const sg_expr *const *syms, size_t n)
{
    if (node >= g->nnodes)
        return sg__err(g->ctx, SG_EINVAL, "graph: bind on an unknown node");
    if (n > UINT16_MAX)
        return sg__err(g->ctx, SG_ELIMIT, "graph: a node binds more than %u symbols", (unsigned)UINT16_MAX);
    uint32_t off;
    sg_status s = sg__graph_exprs(g, &off, syms, n);
    if (s)
        return s;
    g->nodes[node].binds = off;
    g->nodes[node].nbinds = (uint16_t)n;
    return SG_OK;
}

/* ---- lint ---- */

typedef struct {
    const sg__graph *g;
    sg__idmap bound; /* symbol id -> 1: bound so far in the scope */
    uint32_t node;   /* the node being checked */
    uint32_t scope;  /* the scope being checked */
} linter;

static sg_status lint_fail(linter *L, const char *what, const char *detail)
{
    return sg__err(L->g->ctx, SG_EINTERNAL, "graph lint: %s%snode %u: %s%s%s", L->g->scopes[L->scope].name,
                   L->scope ? ": " : "", (unsigned)L->node, what, detail ? ": " : "", detail ? detail : "");
}

/* Every free symbol of e is an environment input or bound earlier. */
static sg_status lint_expr(linter *L, const sg_expr *e)
{
    const sg_expr **syms = NULL;
    size_t n = 0;
    sg_status s = sg_expr_free_symbols(L->g->ctx, &syms, &n, e);
    if (s)
        return s;
    for (size_t i = 0; i < n && !s; i++) {
        const char *name = sg_expr_sym_name(syms[i]);
        if (L->scope && !sg__idmap_find(&L->bound, syms[i]->id)) /* a subgraph is closed */
            s = lint_fail(L, "a symbol not bound in the subgraph", name);
        else if (!sg__idmap_find(&L->bound, syms[i]->id) && sg_env_symbol(L->g->env, name) != syms[i])
            s = lint_fail(L, "a symbol neither an input of the environment nor bound before", name);
        else if (!sg__idmap_find(&L->bound, syms[i]->id) && name[0] == 'u') /* unbacked: u0, u_... (env.h) */
            s = lint_fail(L, "an unbacked symbol used before the node that binds it", name);
    }
    sg_free(syms);
    return s;
}

static sg_status lint_value_exprs(linter *L, uint32_t v)
{
    const sg__gval *val = &L->g->vals[v];
    sg_status s = SG_OK;
    if (val->kind == SG_V_TENSOR) {
        for (uint32_t d = 0; d < 2 * val->u.t.ndim && !s; d++)
            s = lint_expr(L, L->g->exprs[val->u.t.dims + d]);
        if (!s)
            s = lint_expr(L, val->u.t.offset);
    } else if (val->kind == SG_V_SYMINT || val->kind == SG_V_SYMBOOL) {
        s = lint_expr(L, val->u.e);
    }
    return s;
}

/* Value v is given by a node before the one being checked. */
static sg_status lint_use(linter *L, uint32_t v)
{
    if (v >= L->g->nvals)
        return lint_fail(L, "an argument that is no value", NULL);
    if (L->g->vals[v].node >= L->node)
        return lint_fail(L, "an argument used before the node that gives it", NULL);
    if (L->g->nodes[L->g->vals[v].node].scope != L->scope)
        return lint_fail(L, "an argument of another graph (not lifted)", NULL);
    return SG_OK;
}

static sg_status lint_args(linter *L, const sg__gnode *n)
{
    const sg__graph *g = L->g;
    sg_status s = SG_OK;
    for (uint32_t i = 0; i < n->nargs && !s; i++) {
        const sg__garg *a = &g->args[n->args + i];
        switch ((sg__akind)a->kind) {
        case SG_A_VALUE:
            s = lint_use(L, a->u.v);
            break;
        case SG_A_EXPR:
            s = lint_expr(L, a->u.e);
            break;
        case SG_A_EXPRS:
            for (uint32_t k = 0; k < a->u.list.n && !s; k++)
                s = lint_expr(L, g->exprs[a->u.list.off + k]);
            break;
        case SG_A_VALUES:
            for (uint32_t k = 0; k < a->u.list.n && !s; k++)
                s = lint_use(L, g->ids[a->u.list.off + k]);
            break;
        default:
            break;
        }
    }
    return s;
}

/* A call has at least the schema's arguments without defaults, at most all. */
static sg_status lint_arity(linter *L, const sg__gnode *n)
{
    size_t need = 0;
    for (size_t i = 0; i < n->schema->nargs; i++)
        need += !n->schema->args[i].has_def && !n->schema->args[i].type.optional;
    if (n->nargs < need || n->nargs > n->schema->nargs)
        return lint_fail(L, "the number of arguments does not fit the schema", n->schema->name);
    return SG_OK;
}

/* The symbols a node makes known: a placeholder's symbol, a node's binds. */
static sg_status lint_bind(linter *L, const sg__gnode *n)
{
    const sg__graph *g = L->g;
    if (n->kind == SG_N_PLACEHOLDER && g->vals[n->out].kind == SG_V_SYMINT &&
        sg_expr_op(g->vals[n->out].u.e) == SG_OP_SYM &&
        !sg__idmap_put(&L->bound, g->vals[n->out].u.e->id, 1))
        return sg__nomem(g->ctx);
    for (uint32_t i = 0; i < n->nbinds; i++)
        if (!sg__idmap_put(&L->bound, g->exprs[n->binds + i]->id, 1))
            return sg__nomem(g->ctx);
    return SG_OK;
}

/* A cond node: a predicate, two branches nested here, closed, taking as
 * many placeholders as it passes operands. */
static sg_status lint_cond(linter *L, const sg__gnode *n)
{
    const sg__graph *g = L->g;
    const sg__garg *a = &g->args[n->args];
    if (n->nargs != 4 || a[1].kind != SG_A_SCOPE || a[2].kind != SG_A_SCOPE || a[3].kind != SG_A_VALUES ||
        (a[0].kind != SG_A_VALUE && a[0].kind != SG_A_EXPR))
        return lint_fail(L, "a cond's arguments are not a predicate, two branches and operands", NULL);
    for (int k = 1; k <= 2; k++) {
        uint32_t b = a[k].u.v;
        if (b >= g->nscopes || g->scopes[b].parent != L->scope)
            return lint_fail(L, "a cond's branch is not a subgraph of its graph", NULL);
        if (g->scopes[b].output == SG_NOVAL)
            return lint_fail(L, "a cond's branch has no output", g->scopes[b].name);
        if (g->scopes[b].nphs != a[3].u.list.n)
            return lint_fail(L, "a cond's branch takes another number of inputs than it is given",
                             g->scopes[b].name);
    }
    return SG_OK;
}

static sg_status lint_function(linter *L, const sg__gnode *n)
{
    const sg__graph *g = L->g;
    const sg__garg *a = &g->args[n->args];
    if (n->nargs != 6 || a[0].kind != SG_A_SCOPE || a[1].kind != SG_A_VALUES || a[2].kind != SG_A_VALUES ||
        a[3].kind != SG_A_VALUES || a[4].kind != SG_A_EXPRS || a[5].kind != SG_A_EXPRS)
        return lint_fail(L, "a custom Function's arguments are not a backward, outputs, inputs, saved tensors, "
                         "the gradients' inputs and the placeholders written", NULL);
    uint32_t b = a[0].u.v;
    if (b >= g->nscopes || g->scopes[b].parent != L->scope || !g->scopes[b].grads)
        return lint_fail(L, "a custom Function's backward is not a subgraph of its graph", NULL);
    if (g->scopes[b].output == SG_NOVAL)
        return lint_fail(L, "a custom Function's backward has no output", g->scopes[b].name);
    if (g->nodes[g->scopes[b].output].nargs != a[4].u.list.n + a[5].u.list.n)
        return lint_fail(L, "a custom Function's backward gives another number of values than it names",
                         g->scopes[b].name);
    for (uint32_t k = 0; k < a[5].u.list.n; k++) {
        int64_t p;
        if (!sg_expr_get_si(g->exprs[a[5].u.list.off + k], &p) || p < 0 || p >= (int64_t)g->scopes[b].nphs)
            return lint_fail(L, "a custom Function's backward writes no placeholder of its own", g->scopes[b].name);
    }
    for (uint32_t k = 0; k < a[4].u.list.n; k++) {
        int64_t i;
        if (!sg_expr_get_si(g->exprs[a[4].u.list.off + k], &i) || i < 0 || i >= (int64_t)a[2].u.list.n)
            return lint_fail(L, "a custom Function's gradient of no input", g->scopes[b].name);
    }
    uint32_t free_phs = 0;
    for (uint32_t k = 0; k < g->scopes[b].nphs; k++)
        free_phs += g->scopes[b].outer[k] == SG_NOVAL;
    if (free_phs != a[1].u.list.n)
        return lint_fail(L, "a custom Function's backward takes another number of gradients than it has outputs",
                         g->scopes[b].name);
    return SG_OK;
}

/* One scope's nodes. */
static sg_status lint_scope(linter *L)
{
    const sg__graph *g = L->g;
    const sg__scope *sc = &g->scopes[L->scope];
    sg_status s = SG_OK;
    bool others = false;
    if (sc->output == SG_NOVAL) {
        L->node = (uint32_t)g->nnodes;
        return lint_fail(L, "the graph does not end in its output", NULL);
    }
    /* a subgraph's signature binds its symbols at once: a placeholder's
     * sizes may name a symbol the signature takes after it (a replay makes
     * them in the signature's order, and folds a size by a replacement the
     * guards made into the symbols another placeholder lifted) */
    for (uint32_t k = 0; L->scope && k < sc->nphs && !s; k++)
        if (sc->phs[k] < g->nnodes && g->nodes[sc->phs[k]].kind == SG_N_PLACEHOLDER &&
            g->nodes[sc->phs[k]].scope == L->scope)
            s = lint_bind(L, &g->nodes[sc->phs[k]]);
    for (uint32_t i = 0; i < g->nnodes && !s; i++) {
        const sg__gnode *n = &g->nodes[i];
        if (n->scope != L->scope)
            continue;
        L->node = i;
        if (i > sc->output && !(n->kind == SG_N_PLACEHOLDER && L->scope)) /* a branch merged: inputs after */
            s = lint_fail(L, "a node after the output", NULL);
        /* the root takes its inputs first; a subgraph lifts at first use */
        if (!s && n->kind == SG_N_PLACEHOLDER && others && !L->scope)
            s = lint_fail(L, "a placeholder after another node", NULL);
        others |= n->kind != SG_N_PLACEHOLDER;
        if (!s && n->kind == SG_N_CALL)
            s = lint_arity(L, n);
        if (!s && n->kind == SG_N_COND)
            s = lint_cond(L, n);
        if (!s && n->kind == SG_N_FUNCTION)
            s = lint_function(L, n);
        if (!s)
            s = lint_args(L, n);
        if (!s && n->kind == SG_N_ASSERT)
            s = lint_expr(L, n->cond);
        if (!s)
            s = lint_bind(L, n);
        if (!s && n->out != SG_NOVAL && g->vals[n->out].node != i)
            s = lint_fail(L, "its value is given by another node", NULL);
        if (!s && n->out != SG_NOVAL)
            s = lint_value_exprs(L, n->out);
    }
    for (uint32_t k = 0; k < sc->nphs && !s; k++) {
        L->node = sc->phs[k];
        if (sc->phs[k] >= g->nnodes || g->nodes[sc->phs[k]].kind != SG_N_PLACEHOLDER ||
            g->nodes[sc->phs[k]].scope != L->scope)
            s = lint_fail(L, "the signature names a node that is not a placeholder of the graph", NULL);
        else if (L->scope && !(sc->grads && sc->outer[k] == SG_NOVAL) && (sc->outer[k] >= g->nvals || g->vals[sc->outer[k]].node == SG_NOVAL ||
                              g->nodes[g->vals[sc->outer[k]].node].scope != sc->parent))
            s = lint_fail(L, "a placeholder takes no value of the enclosing graph", NULL);
    }
    return s;
}

sg_status sg__graph_lint(const sg__graph *g)
{
    sg_status s = SG_OK;
    for (uint32_t sc = 0; sc < g->nscopes && !s; sc++) {
        linter L = {.g = g, .scope = sc};
        if (!sg__idmap_init(g->ctx, &L.bound, 16))
            return sg__nomem(g->ctx);
        s = lint_scope(&L);
        sg__idmap_free(&L.bound);
    }
    return s;
}

sg_status sg__graph_subst(sg__graph *g, uint32_t first, size_t n, const sg_expr *const *syms,
                          const sg_expr *const *vals)
{
    if (!n)
        return SG_OK;
    for (size_t v = first; v < g->nvals; v++) {
        sg__gval *x = &g->vals[v];
        sg_status s = SG_OK;
        if (x->kind == SG_V_TENSOR) {
            /* copy on write: the run may be shared with other values */
            const sg_expr *run[2 * SG_MAX_DIMS];
            bool changed = false;
            uint32_t nd = x->u.t.ndim, dims;
            for (uint32_t k = 0; k < 2 * nd && !s; k++) {
                s = sg_expr_subs(g->ctx, &run[k], g->exprs[x->u.t.dims + k], n, syms, vals);
                changed |= !s && run[k] != g->exprs[x->u.t.dims + k];
            }
            if (!s && changed && !(s = push_exprs(g, &dims, run, 2 * nd)))
                x->u.t.dims = dims;
            if (!s)
                s = sg_expr_subs(g->ctx, &x->u.t.offset, x->u.t.offset, n, syms, vals);
        } else if (x->kind == SG_V_SYMINT || x->kind == SG_V_SYMBOOL) {
            s = sg_expr_subs(g->ctx, &x->u.e, x->u.e, n, syms, vals);
        }
        if (s)
            return s;
    }
    return SG_OK;
}
