/* Scopes of a tracer: subgraphs nested in the graph (the branches of
 * torch.cond), and the lifting of values and symbols of enclosing scopes
 * into them, as PyTorch's SubgraphTracer does it (torch/_dynamo/output_graph.py): a value of an
 * enclosing scope used in a subgraph is taken by a placeholder, parent
 * first through every scope between; a tensor's basic free symbols (of its
 * sizes, strides and offset) are taken before it, sorted, each once per
 * scope; a compound size is never taken, only its basic symbols; an
 * unbacked symbol is found where it was bound (a node's value that is the
 * symbol, or a sym_size node reading it from the tensor whose size it is). */
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "graph/tracer_private.h"


/* A scope's bound map (graph.h) holds 1 + the value carrying a symbol, or
 * BY_NODE | the node that binds it without giving it alone (nonzero's
 * size), which lifting reads with a sym_size node: no search of the nodes. */
#define BY_NODE (SIZE_MAX ^ (SIZE_MAX >> 1))

sg_status sg__tracer_note_binds(sg_tracer *t, uint32_t out, const sg_expr *const *syms, size_t n)
{
    sg__graph *g = t->g;
    sg__scope *sc = &g->scopes[g->cur];
    size_t node = g->nnodes - 1; /* the node just made */
    for (size_t i = 0; i < n; i++) {
        bool carries = out != SG_NOVAL && g->vals[out].kind == SG_V_SYMINT && g->vals[out].u.e == syms[i];
        if (!sg__idmap_put(&sc->bound, syms[i]->id, carries ? out + 1 : BY_NODE | node))
            return sg__nomem(t->ctx);
    }
    return SG_OK;
}

/* Does node i of scope s bind sym? */
static bool binds(const sg__graph *g, uint32_t s, size_t i, const sg_expr *sym)
{
    if (i >= g->nnodes || g->nodes[i].scope != s)
        return false;
    for (uint32_t k = 0; k < g->nodes[i].nbinds; k++)
        if (g->exprs[g->nodes[i].binds + k] == sym)
            return true;
    return false;
}

/* Make a node of scope s with g->cur switched to it. */
typedef struct {
    sg__graph *g;
    uint32_t saved;
} in_scope;

static in_scope enter(sg__graph *g, uint32_t s)
{
    in_scope k = {g, g->cur};
    g->cur = s;
    return k;
}

static void leave(in_scope k)
{
    k.g->cur = k.saved;
}

/* sym_size.int / sym_stride.int / sym_storage_offset of the tensor that
 * node nd gives, reading sym, in scope s (where nd is). */
static sg_status read_symbol(sg_tracer *t, uint32_t s, uint32_t nd, const sg_expr *sym, uint32_t *out)
{
    sg__graph *g = t->g;
    uint32_t v = g->nodes[nd].out;
    const char *op = NULL;
    long dim = 0;
    if (v != SG_NOVAL && g->vals[v].kind == SG_V_LIST) { /* a cond's outputs: the one carrying sym */
        uint32_t hit = SG_NOVAL;
        for (uint32_t k = 0; k < g->vals[v].u.list.n && hit == SG_NOVAL; k++) {
            uint32_t e = g->ids[g->vals[v].u.list.off + k];
            if (g->vals[e].kind == SG_V_SYMINT && g->vals[e].u.e == sym) {
                if (!sg__idmap_put(&g->scopes[s].bound, sym->id, e + 1))
                    return sg__nomem(t->ctx);
                *out = e;
                return SG_OK;
            }
            if (g->vals[e].kind != SG_V_TENSOR)
                continue;
            for (uint32_t d = 0; d < 2u * g->vals[e].u.t.ndim && hit == SG_NOVAL; d++)
                if (g->exprs[g->vals[e].u.t.dims + d] == sym)
                    hit = e;
            if (g->vals[e].u.t.offset == sym)
                hit = e;
        }
        v = hit;
    }
    if (v != SG_NOVAL && g->vals[v].kind == SG_V_TENSOR) {
        const sg__fake_tensor *ft = &g->vals[v].u.t;
        for (uint32_t d = 0; d < ft->ndim && !op; d++)
            if (sg__graph_size(g, v, d) == sym)
                op = "sym_size.int", dim = d;
        for (uint32_t d = 0; d < ft->ndim && !op; d++)
            if (sg__graph_stride(g, v, d) == sym)
                op = "sym_stride.int", dim = d;
        if (!op && ft->offset == sym)
            op = "sym_storage_offset";
    }
    if (!op)
        return sg__err(t->ctx, SG_EUNSUPPORTED, "unsupported: lifting %s into a subgraph (the node binding it "
                                                "does not give it as a size, stride or offset)",
                       sg_expr_sym_name(sym));
    uint32_t line = g->nodes[nd].line;
    const sg__schema *sch = sg__opreg_find(t->reg, op);
    const sg_expr *d = sg__int_si(t->ctx, dim);
    if (!sch || !d)
        return sch ? sg_ctx_last_error(t->ctx) : sg__err(t->ctx, SG_EINTERNAL, "no operator %s", op);
    sg__garg args[2] = {{.kind = SG_A_VALUE, .u.v = v}, {.kind = SG_A_EXPR, .u.e = d}};
    in_scope k = enter(g, s);
    uint32_t r;
    sg_status st = sg__graph_value(g, &r, SG_V_SYMINT, sym, 0);
    if (!st)
        st = sg__graph_call(g, sch, args, strcmp(op, "sym_storage_offset") ? 2 : 1, r, line);
    leave(k);
    if (!st && !sg__idmap_put(&g->scopes[s].bound, sym->id, r + 1))
        st = sg__nomem(t->ctx);
    if (!st)
        *out = r;
    return st;
}

sg_status sg__tracer_lift_sym(sg_tracer *t, uint32_t s, const sg_expr *sym, uint32_t *out)
{
    sg__graph *g = t->g;
    size_t *hit = sg__idmap_find(&g->scopes[s].bound, sym->id);
    if (hit && !(*hit & BY_NODE)) {
        *out = (uint32_t)(*hit - 1);
        return SG_OK;
    }
    if (hit) { /* bound by a node of s that does not give it alone: read it */
        size_t i = *hit & ~BY_NODE;
        if (binds(g, s, i, sym))
            return read_symbol(t, s, (uint32_t)i, sym, out);
        for (i = g->nnodes; i-- > 0;) /* the node noted was dropped (a call that failed after it) */
            if (binds(g, s, i, sym))
                return read_symbol(t, s, (uint32_t)i, sym, out);
        return sg__err(t->ctx, SG_EINTERNAL, "scope: %s bound by no node", sg_expr_sym_name(sym));
    }
    if (g->scopes[s].parent == SG_NOVAL)
        return sg__err(t->ctx, SG_EINTERNAL, "scope: symbol %s is bound by no input or node of the graph",
                       sg_expr_sym_name(sym));
    uint32_t pv;
    sg_status st = sg__tracer_lift_sym(t, g->scopes[s].parent, sym, &pv);
    if (st)
        return st;
    in_scope k = enter(g, s);
    uint32_t v;
    st = sg__graph_value(g, &v, SG_V_SYMINT, sym, 0);
    if (!st)
        st = sg__graph_placeholder_of(g, v, sg_expr_sym_name(sym), pv);
    leave(k);
    if (!st && !sg__idmap_put(&g->scopes[s].bound, sym->id, v + 1))
        st = sg__nomem(t->ctx);
    if (!st)
        *out = v;
    return st;
}

/* e[0 .. n) with the environment's replacements applied (a size a guard
 * settled, such as tolist's, is that constant: nothing to lift for it). */
static sg_status replaced(sg_tracer *t, const sg_expr **e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sg_status st = sg_env_replace(t->env, &e[i], e[i]);
        if (st)
            return st;
    }
    return SG_OK;
}

static sg_status lift_exprs(sg_tracer *t, uint32_t s, const sg_expr *const *e, size_t n)
{
    const sg_expr **syms = NULL;
    size_t k = 0;
    /* the symbols not bound in s (those a node binds without giving them alone still want their own value) */
    sg_status st = sg__tracer_new_symbols(t, &t->g->scopes[s].bound, BY_NODE, e, n, &syms, &k);
    uint32_t v;
    for (size_t i = 0; i < k && !st; i++)
        st = sg__tracer_lift_sym(t, s, syms[i], &v);
    sg_free(syms);
    return st;
}

sg_status sg__tracer_lift_expr(sg_tracer *t, uint32_t s, const sg_expr **e)
{
    sg_status st = replaced(t, e, 1);
    return st ? st : lift_exprs(t, s, e, 1);
}

/* Is scope a an ancestor of b (or b itself)? */
static bool encloses(const sg__graph *g, uint32_t a, uint32_t b)
{
    for (uint32_t x = b; x != SG_NOVAL; x = g->scopes[x].parent)
        if (x == a)
            return true;
    return false;
}

static const char *program_name(const sg_tracer *t, uint32_t v)
{
    size_t *hit = sg__idmap_find(&t->names, v + 1);
    if (hit)
        return t->pnames[*hit - 1];
    const char *n = t->g->vals[v].name;
    return n && n[0] ? n : NULL;
}

/* sg__tracer_lift of v, a value of scope vs that encloses s (vs != s). */
static sg_status lift_into(sg_tracer *t, uint32_t s, uint32_t v, uint32_t vs, const char *name, uint32_t *out)
{
    sg__graph *g = t->g;
    size_t *hit = sg__idmap_find(&g->scopes[s].lifted, v + 1);
    if (hit) {
        *out = (uint32_t)(*hit - 1);
        return SG_OK;
    }
    uint32_t p = g->scopes[s].parent, pv = v;
    sg_status st = p == vs ? SG_OK : lift_into(t, p, v, vs, name, &pv);
    if (st)
        return st;
    if (!name)
        name = program_name(t, v);
    const sg__gval *x = &g->vals[pv];
    uint32_t local = SG_NOVAL;
    if (x->kind == SG_V_SYMINT && sg_expr_op(x->u.e) == SG_OP_SYM) {
        st = sg__tracer_lift_sym(t, s, x->u.e, &local); /* a size: its symbol, once */
    } else if (x->kind == SG_V_SYMINT || x->kind == SG_V_SYMBOOL) { /* a compound: its symbols, then itself */
        const sg_expr *e = x->u.e;
        sg__vkind kind = (sg__vkind)x->kind;
        if (!(st = sg__tracer_lift_expr(t, s, &e))) {
            in_scope k = enter(g, s);
            if (!(st = sg__graph_value(g, &local, kind, e, 0)))
                st = sg__graph_placeholder_of(g, local, name ? name : "sym", pv);
            leave(k);
        }
    } else if (x->kind == SG_V_TENSOR) {
        const sg__fake_tensor ft = x->u.t;
        const sg_expr *meta[2 * SG_MAX_DIMS + 1];
        for (uint32_t d = 0; d < 2u * ft.ndim; d++)
            meta[d] = g->exprs[ft.dims + d];
        meta[2 * ft.ndim] = ft.offset;
        if (!(st = replaced(t, meta, 2u * ft.ndim + 1)) &&
            !(st = lift_exprs(t, s, meta, 2u * ft.ndim + 1))) { /* its basic symbols first */
            in_scope k = enter(g, s);
            st = sg__graph_tensor(g, &local, (sg_dtype)ft.dtype, ft.ndim, meta, meta + ft.ndim, meta[2 * ft.ndim],
                                  SG_NOVAL);
            if (!st) {
                /* (an input a write with grad through an alias gave a history requires grad from then on:
                   the lifted value, no input of the caller's, says so itself) */
                g->vals[local].u.t.requires_grad = ft.requires_grad || ft.written_rg;
                g->vals[local].u.t.leaf = ft.leaf && !ft.written_rg;
                sg__graph_set_storage_numel(g, g->vals[local].u.t.storage, sg__graph_storage_numel(g, ft.storage));
                st = sg__graph_placeholder_of(g, local, name ? name : "arg", pv);
            }
            leave(k);
        }
    } else {
        return sg__err(t->ctx, SG_EUNSUPPORTED, "unsupported: lifting a %s into a subgraph",
                       x->kind == SG_V_FLOAT ? "float read from a tensor" : "list or None");
    }
    if (!st && !sg__idmap_put(&g->scopes[s].lifted, v + 1, local + 1))
        st = sg__nomem(t->ctx);
    if (!st)
        *out = local;
    return st;
}

sg_status sg__tracer_lift(sg_tracer *t, uint32_t s, uint32_t v, const char *name, uint32_t *out)
{
    sg__graph *g = t->g;
    if (v >= g->nvals || g->vals[v].node == SG_NOVAL)
        return sg__err(t->ctx, SG_EINVAL, "scope: lifting a value that no node gives");
    uint32_t vs = sg__graph_vscope(g, v);
    if (vs == s) {
        *out = v;
        return SG_OK;
    }
    if (!encloses(g, vs, s)) /* once: every scope between is enclosed by vs too */
        return sg__err(t->ctx, SG_EUNSUPPORTED, "unsupported: a value of another subgraph (%s) used in %s",
                       g->scopes[vs].name[0] ? g->scopes[vs].name : "the root", g->scopes[s].name);
    return lift_into(t, s, v, vs, name, out);
}

/* ---- the public scope API ---- */

sg_status sg_tracer_name(sg_tracer *t, sg_value v, const char *name)
{
    if (!t || !name)
        return SG_EINVAL;
    if (v >= t->g->nvals)
        return sg__err(t->ctx, SG_EINVAL, "sg_tracer_name: no such value");
    if (sg__idmap_find(&t->names, v + 1))
        return SG_OK; /* the first name stays */
    if (!sg__grow(t->ctx, (void **)&t->pnames, &t->cappnames, t->npnames + 1, sizeof *t->pnames))
        return sg__nomem(t->ctx);
    char *copy = sg__strdup(t->ctx, name);
    if (!copy)
        return sg__nomem(t->ctx);
    if (!sg__idmap_put(&t->names, v + 1, t->npnames + 1)) {
        sg_free(copy);
        return sg__nomem(t->ctx);
    }
    t->pnames[t->npnames++] = copy;
    return SG_OK;
}

sg_status sg_tracer_scope_open(sg_tracer *t, uint32_t *scope, const char *name)
{
    if (!t || !scope || !name || !name[0])
        return t ? sg__err(t->ctx, SG_EINVAL, "sg_tracer_scope_open: a scope needs a name") : SG_EINVAL;
    if (t->done)
        return sg__err(t->ctx, SG_EINVAL, "sg_tracer_scope_open: after the output");
    if (sg__graph_scope_find(t->g, name) != SG_NOVAL)
        return sg__err(t->ctx, SG_EINVAL, "sg_tracer_scope_open: a subgraph named %s exists already", name);
    return sg__graph_scope_open(t->g, scope, name);
}

sg_status sg_tracer_scope_input(sg_tracer *t, sg_value *local, const char *name, sg_value outer)
{
    if (!t || !local)
        return SG_EINVAL;
    if (!t->g->cur)
        return sg__err(t->ctx, SG_EINVAL, "sg_tracer_scope_input: no subgraph is open");
    return sg__tracer_lift(t, t->g->cur, outer, name, local);
}

sg_status sg__tracer_scope_grad(sg_tracer *t, sg_value *out, const char *name, sg_value like)
{
    sg__graph *g = t->g;
    if (!g->cur)
        return sg__err(t->ctx, SG_EINVAL, "sg__tracer_scope_grad: no subgraph is open");
    if (like >= g->nvals || g->vals[like].kind != SG_V_TENSOR)
        return sg__err(t->ctx, SG_EINVAL, "sg__tracer_scope_grad: no tensor to take the sizes of");
    const sg__fake_tensor ft = g->vals[like].u.t;
    const sg_expr *meta[2 * SG_MAX_DIMS + 1];
    for (uint32_t d = 0; d < ft.ndim; d++)
        meta[d] = g->exprs[ft.dims + d];
    CHAIN(replaced(t, meta, ft.ndim));
    CHAIN(sg__graph_contiguous_strides(t->ctx, ft.ndim, meta, meta + ft.ndim));
    meta[2 * ft.ndim] = t->ctx->zero;
    CHAIN(lift_exprs(t, g->cur, meta, ft.ndim));
    uint32_t v;
    CHAIN(sg__graph_tensor(g, &v, (sg_dtype)ft.dtype, ft.ndim, meta, meta + ft.ndim, meta[2 * ft.ndim], SG_NOVAL));
    CHAIN(sg__graph_placeholder_of(g, v, name ? name : "grad", SG_NOVAL));
    g->scopes[g->cur].grads = true;
    *out = v;
    return SG_OK;
}

sg_status sg_tracer_scope_expr(sg_tracer *t, const sg_expr *e)
{
    if (!t || !e)
        return SG_EINVAL;
    return sg__tracer_lift_expr(t, t->g->cur, &e);
}

sg_status sg_tracer_scope_close(sg_tracer *t, const sg_value *outs, size_t n)
{
    if (!t || (n && !outs))
        return SG_EINVAL;
    sg__graph *g = t->g;
    if (!g->cur)
        return sg__err(t->ctx, SG_EINVAL, "sg_tracer_scope_close: no subgraph is open");
    uint32_t *local = n ? sg__malloc(t->ctx, n * sizeof *local) : NULL;
    if (n && !local)
        return sg__nomem(t->ctx);
    sg_status st = SG_OK;
    for (size_t i = 0; i < n && !st; i++) /* a subgraph may give back what it closes over */
        st = sg__tracer_lift(t, g->cur, outs[i], NULL, &local[i]);
    if (!st)
        st = sg__graph_output(g, local, n);
    sg_free(local);
    if (!st)
        g->cur = g->scopes[g->cur].parent;
    return st;
}

sg_status sg__tracer_scope_fail(sg_tracer *t, uint32_t sc, sg_status st, const char *msg)
{
    sg__graph *g = t->g;
    if (sc == 0 || sc >= g->nscopes || g->cur != sc || g->scopes[sc].output != SG_NOVAL)
        return sg__err(t->ctx, SG_EINVAL, "sg__tracer_scope_fail: no custom Function backward is open");
    CHAIN(sg__graph_scope_fail(g, sc, st, msg));
    g->scopes[sc].grads = true;
    CHAIN(sg__graph_output(g, NULL, 0));
    g->cur = g->scopes[sc].parent;
    return SG_OK;
}

uint32_t sg_tracer_scope(const sg_tracer *t)
{
    return t->g->cur;
}
