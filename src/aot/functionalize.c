/* Functionalization (aot_private.h): a replay of the captured graph over
 * functional values. Each tensor value of src knows its storage, the value
 * it views and the view call that made it (its chain up to the storage's
 * root), and the dst value that stands for it as of a generation of its
 * storage; each storage knows its base's current dst value and its
 * generation, bumped by every write. */
#include <string.h>

#include "aot/aot_private.h"
#include "graph/ops.h"

typedef struct fval {
    uint32_t parent; /* the src value it views (SG_NOVAL: a storage's root) */
    uint32_t vnode;  /* the view call that made it from parent */
    uint32_t cur;    /* the dst value standing for it at generation gen */
    uint32_t gen;
} fval;

typedef struct fstore {
    uint32_t base;   /* the dst value holding the storage's contents now */
    uint32_t gen;
    uint32_t input;  /* the src placeholder whose storage it is (SG_NOVAL: none) */
    uint32_t inputs; /* how many placeholders share it */
    bool mutated;
} fstore;

typedef struct fz {
    const sg__graph *src;
    sg__graph *dst;
    fval *v;      /* by src value */
    fstore *st;   /* by src storage */
} fz;

static sg_status unsupported(fz *z, const char *what, const char *op)
{
    return sg__err(z->dst->ctx, SG_EUNSUPPORTED, "functionalize: unsupported: %s%s%s", what, op ? ": " : "",
                   op ? op : "");
}

static bool is_tensor(const sg__graph *g, uint32_t v)
{
    return v < g->nvals && g->vals[v].kind == SG_V_TENSOR;
}

static fstore *store_of(fz *z, uint32_t v)
{
    return &z->st[z->src->vals[v].u.t.storage];
}

/* View call node of src made again in dst over p (its self). */
static sg_status replay_view(fz *z, sg__replay *r, uint32_t node, uint32_t p, uint32_t *out)
{
    const sg__gnode *nd = &z->src->nodes[node];
    sg__garg args[SG_SCHEMA_ARGS];
    args[0] = (sg__garg){.kind = SG_A_VALUE, .u.v = p};
    for (uint32_t i = 1; i < nd->nargs; i++) { /* the view's other arguments: ints and lists of them */
        args[i] = z->src->args[nd->args + i];
        if (args[i].kind == SG_A_EXPRS)
            CHAIN(sg__graph_exprs(z->dst, &args[i].u.list.off, z->src->exprs + args[i].u.list.off, args[i].u.list.n));
        else if (args[i].kind == SG_A_VALUE || args[i].kind == SG_A_VALUES)
            return unsupported(z, "a view taking values", nd->schema->name);
    }
    return sg__replay_call(r, nd->schema, args, nd->nargs, out);
}

/* The dst value standing for src tensor value v now: made again from its
 * base where its storage was written since (its view replayed on its
 * parent's current value). */
static sg_status current(fz *z, sg__replay *r, uint32_t v, uint32_t *out)
{
    fval *f = &z->v[v];
    fstore *s = store_of(z, v);
    if (f->parent == SG_NOVAL) { /* a root: the base once written, else itself as the replay made it */
        *out = s->gen ? s->base : f->cur != SG_NOVAL ? f->cur : sg__replay_mapped(r, v);
        if (*out == SG_NOVAL)
            return sg__err(z->dst->ctx, SG_EINTERNAL, "functionalize: value %u has no counterpart", v);
        if (s->base == SG_NOVAL)
            s->base = *out;
        return SG_OK;
    }
    if (f->gen == s->gen && f->cur != SG_NOVAL) {
        *out = f->cur;
        return SG_OK;
    }
    const sg__gnode *nd = &z->src->nodes[f->vnode];
    if (z->src->vals[nd->out].kind != SG_V_TENSOR)
        return unsupported(z, "a view of a written storage read again through", nd->schema->name);
    uint32_t p;
    CHAIN(current(z, r, f->parent, &p));
    CHAIN(replay_view(z, r, f->vnode, p, out));
    f->cur = *out;
    f->gen = s->gen;
    return SG_OK;
}

/* The arguments of src node nd as dst values: mapped as the replay maps
 * them, every tensor by its current value. */
static sg_status current_args(fz *z, sg__replay *r, const sg__gnode *nd, const sg__garg *mapped, sg__garg *out)
{
    for (uint32_t i = 0; i < nd->nargs; i++) {
        const sg__garg *a = &z->src->args[nd->args + i];
        out[i] = mapped[i];
        if (a->kind == SG_A_VALUE && is_tensor(z->src, a->u.v)) {
            CHAIN(current(z, r, a->u.v, &out[i].u.v));
        } else if (a->kind == SG_A_VALUES) {
            uint32_t ids[64];
            if (a->u.list.n > 64)
                return unsupported(z, "a list of more than 64 tensors", nd->schema->name);
            for (uint32_t k = 0; k < a->u.list.n; k++) {
                uint32_t e = z->src->ids[a->u.list.off + k];
                if (is_tensor(z->src, e))
                    CHAIN(current(z, r, e, &ids[k]));
                else
                    ids[k] = sg__replay_mapped(r, e);
            }
            CHAIN(sg__graph_ids(z->dst, &out[i].u.list.off, ids, a->u.list.n));
        }
    }
    return SG_OK;
}

/* A new value of src made by a call: the root of its storage, or (a view)
 * a link of its parent's chain. */
static void made(fz *z, uint32_t v, uint32_t parent, uint32_t vnode, uint32_t cur)
{
    if (!is_tensor(z->src, v))
        return;
    fstore *s = store_of(z, v);
    if (parent == SG_NOVAL && s->base == SG_NOVAL)
        s->base = cur;
    z->v[v] = (fval){.parent = parent, .vnode = vnode, .cur = cur, .gen = s->gen};
}

/* An in-place call of nd on self (src): its functional row over the current
 * values, carried back to the base through self's chain. */
static sg_status write(fz *z, sg__replay *r, uint32_t node, const sg__gnode *nd, const sg__garg *args)
{
    const sg__opinfo *info = sg__op_info(nd->schema->op);
    const sg__schema *fs = info && info->functional != SG_OP_NONE ? sg__opreg_op(z->dst->reg, info->functional) : NULL;
    if (!fs)
        return unsupported(z, "an in-place call without a functional variant", nd->schema->name);
    uint32_t self = z->src->args[nd->args].u.v, f;
    fstore *s = store_of(z, self);
    if (s->inputs > 1)
        return unsupported(z, "a write into a storage that two inputs share", nd->schema->name);
    sg__garg cur[SG_SCHEMA_ARGS];
    CHAIN(current_args(z, r, nd, args, cur));
    CHAIN(sg__replay_call(r, fs, cur, nd->nargs, &f));
    if (z->dst->vals[f].u.t.dtype != z->src->vals[self].u.t.dtype)
        return unsupported(z, "an in-place call whose functional result has another dtype", nd->schema->name);
    /* the chain from the base down to self (PyTorch's apply_update): each
       view made again from the base's current value, then each written
       back into the one it views, from self up */
    uint32_t chain[256], tmp[257], n = 0;
    for (uint32_t c = self; z->v[c].parent != SG_NOVAL; c = z->v[c].parent) {
        if (n == 256)
            return unsupported(z, "a chain of more than 256 views", nd->schema->name);
        if (z->src->vals[z->src->nodes[z->v[c].vnode].out].kind != SG_V_TENSOR)
            return unsupported(z, "a write through an element of", z->src->nodes[z->v[c].vnode].schema->name);
        chain[n++] = c;
    }
    uint32_t root = n ? z->v[chain[n - 1]].parent : self;
    CHAIN(current(z, r, root, &tmp[n]));
    for (uint32_t i = n; i-- > 1;) /* tmp[i]: the value chain[i] views, made again */
        CHAIN(replay_view(z, r, z->v[chain[i]].vnode, tmp[i + 1], &tmp[i]));
    uint32_t val = f;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t np;
        CHAIN(sg__aot_view_inverse(z->dst, z->src, z->v[chain[i]].vnode, tmp[i + 1], val, &np));
        z->v[chain[i]].cur = val; /* current once the generation moves, below */
        val = np;
    }
    s->base = val;
    s->gen++;
    s->mutated = true;
    for (uint32_t i = 0; i < n; i++) /* the values written along the chain are current */
        z->v[chain[i]].gen = s->gen;
    /* the call's value: self's next version, the same link of the chain */
    fval *sf = &z->v[self];
    uint32_t out = z->src->nodes[node].out;
    z->v[out] = (fval){.parent = sf->parent, .vnode = sf->vnode, .cur = f, .gen = s->gen};
    return sg__replay_map(r, out, f);
}

static sg_status hook(sg__replay *r, void *ud, uint32_t node, const sg__garg *args, size_t nargs)
{
    fz *z = ud;
    const sg__gnode *nd = &z->src->nodes[node];
    const sg__schema *sch = nd->schema;
    const sg__opinfo *info = sg__op_info(sch->op);
    (void)nargs;
    if (nd->scope != 0)
        return unsupported(z, "a cond", NULL);
    if (sch->flags & SG_OPF_OUT)
        return unsupported(z, "out=", sch->name);
    if (sch->flags & SG_OPF_INPLACE) {
        unsigned op = sch->op;
        if ((info && (info->tags & SG_T_INPLACE_VIEW)) || op == SG_OP_set__source_Tensor || op == SG_OP_resize_ ||
            op == SG_OP_copy_ || op == SG_OP_detach_ || op == SG_OP_requires_grad_)
            return unsupported(z, "a metadata or storage mutation, or", sch->name);
        return write(z, r, node, nd, args);
    }
    sg__garg cur[SG_SCHEMA_ARGS];
    CHAIN(current_args(z, r, nd, args, cur));
    uint32_t v;
    CHAIN(sg__replay_default(r, node, cur, nd->nargs, &v));
    if (nd->out == SG_NOVAL)
        return SG_OK;
    bool view = (sch->flags & SG_OPF_VIEW) && nd->nargs && z->src->args[nd->args].kind == SG_A_VALUE;
    uint32_t parent = view ? z->src->args[nd->args].u.v : SG_NOVAL;
    const sg__gval *ov = &z->src->vals[nd->out];
    if (ov->kind == SG_V_LIST) /* unbind: each element a view, made again only through the list */
        for (uint32_t k = 0; k < ov->u.list.n; k++) {
            uint32_t e = z->src->ids[ov->u.list.off + k];
            made(z, e, parent, node, z->dst->ids[z->dst->vals[v].u.list.off + k]);
        }
    else
        made(z, nd->out, parent, node, v);
    return SG_OK;
}

/* Before the output: copy_ into each mutated input, in input order; the
 * output's values mapped to their current ones (a mutated input given
 * back: its copy_). */
static sg_status end(sg__replay *r, void *ud)
{
    fz *z = ud;
    const sg__graph *src = z->src;
    const sg__scope *root = &src->scopes[0];
    const sg__schema *copy = sg__opreg_op(z->dst->reg, SG_OP_copy_);
    uint32_t *copied = sg__calloc(z->dst->ctx, src->nstorages ? src->nstorages : 1, sizeof *copied);
    if (!copied || !copy) {
        sg_free(copied);
        return copy ? sg__nomem(z->dst->ctx) : sg__err(z->dst->ctx, SG_EINTERNAL, "functionalize: no copy_");
    }
    sg_status s = SG_OK;
    for (uint32_t i = 0; i < root->nphs && !s; i++) {
        uint32_t ph = src->nodes[root->phs[i]].out;
        if (!is_tensor(src, ph))
            continue;
        fstore *st = store_of(z, ph);
        if (!st->mutated || st->input != ph)
            continue;
        sg__garg a[2] = {{.kind = SG_A_VALUE, .u.v = sg__replay_mapped(r, ph)}, {.kind = SG_A_VALUE, .u.v = st->base}};
        uint32_t c;
        if (!(s = sg__replay_call(r, copy, a, 2, &c)))
            copied[src->vals[ph].u.t.storage] = c + 1;
    }
    const sg__gnode *out = NULL;
    for (uint32_t i = src->nnodes; i-- > 0 && !out;)
        if (src->nodes[i].kind == SG_N_OUTPUT && src->nodes[i].scope == 0)
            out = &src->nodes[i];
    for (uint32_t i = 0; out && i < out->nargs && !s; i++) {
        const sg__garg *a = &src->args[out->args + i];
        if (a->kind != SG_A_VALUE || !is_tensor(src, a->u.v))
            continue;
        uint32_t v = a->u.v, c = copied[src->vals[v].u.t.storage], now;
        if (c && z->v[v].parent == SG_NOVAL)
            s = sg__replay_map(r, v, c - 1);
        else if (!(s = current(z, r, v, &now)))
            s = sg__replay_map(r, v, now);
    }
    sg_free(copied);
    return s;
}

sg_status sg__aot_functionalize(const sg__graph *src, sg__graph *dst)
{
    if (!src || !dst)
        return SG_EINVAL;
    sg_ctx *ctx = dst->ctx;
    fz z = {.src = src, .dst = dst};
    z.v = sg__malloc(ctx, (src->nvals ? src->nvals : 1) * sizeof *z.v);
    z.st = sg__malloc(ctx, (src->nstorages ? src->nstorages : 1) * sizeof *z.st);
    sg_status s = z.v && z.st ? SG_OK : sg__nomem(ctx);
    if (!s) {
        for (size_t i = 0; i < src->nvals; i++)
            z.v[i] = (fval){.parent = SG_NOVAL, .vnode = SG_NOVAL, .cur = SG_NOVAL};
        for (size_t i = 0; i < src->nstorages; i++)
            z.st[i] = (fstore){.base = SG_NOVAL, .input = SG_NOVAL};
        /* the inputs: each the root of its storage (its dst value, the
           replay's placeholder, is taken by the first current() of it) */
        const sg__scope *root = &src->scopes[0];
        for (uint32_t i = 0; i < root->nphs; i++) {
            uint32_t ph = src->nodes[root->phs[i]].out;
            if (!is_tensor(src, ph))
                continue;
            fstore *st = &z.st[src->vals[ph].u.t.storage];
            st->inputs++;
            if (st->input == SG_NOVAL)
                st->input = ph;
        }
    }
    if (!s)
        s = sg__graph_replay_end(src, dst, hook, end, &z);
    sg_free(z.v);
    sg_free(z.st);
    return s;
}
