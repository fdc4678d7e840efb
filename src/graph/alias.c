/* Reading a graph: the users of each value (computed on demand), and what
 * each node writes and aliases, read from its operator's schema (the
 * annotations (a!) and (a) of ops.def), never written per node. */
#include <string.h>

#include "graph/graph.h"
#include "graph/ops.h"

/* Calls f(u, v, node) for every value v that node takes. */
static void each_use(const sg__graph *g, uint32_t node, void (*f)(void *, uint32_t, uint32_t), void *u)
{
    const sg__gnode *n = &g->nodes[node];
    if (n->kind == SG_N_PLACEHOLDER || n->kind == SG_N_ASSERT)
        return;
    for (uint32_t i = 0; i < n->nargs; i++) {
        const sg__garg *a = &g->args[n->args + i];
        if (a->kind == SG_A_VALUE)
            f(u, a->u.v, node);
        else if (a->kind == SG_A_VALUES)
            for (uint32_t k = 0; k < a->u.list.n; k++)
                f(u, g->ids[a->u.list.off + k], node);
    }
}

static void count_use(void *u, uint32_t v, uint32_t node)
{
    (void)node;
    ((sg__uses *)u)->off[v + 1]++;
}

static void put_use(void *u, uint32_t v, uint32_t node)
{
    sg__uses *x = u;
    uint32_t *at = &x->fill[v];
    if (*at && x->nodes[x->off[v] + *at - 1] == node)
        return; /* a node that takes v twice is one user */
    x->nodes[x->off[v] + (*at)++] = node;
}

sg_status sg__graph_uses(const sg__graph *g, sg__uses *u)
{
    memset(u, 0, sizeof *u);
    u->nvals = g->nvals;
    u->off = sg__calloc(g->ctx, g->nvals + 1, sizeof *u->off);
    u->fill = sg__calloc(g->ctx, g->nvals + 1, sizeof *u->fill);
    if (!u->off || !u->fill) {
        sg__uses_free(u);
        return sg__nomem(g->ctx);
    }
    for (uint32_t n = 0; n < g->nnodes; n++)
        each_use(g, n, count_use, u);
    for (size_t v = 0; v < g->nvals; v++)
        u->off[v + 1] += u->off[v];
    u->nodes = sg__malloc(g->ctx, (u->off[g->nvals] ? u->off[g->nvals] : 1) * sizeof *u->nodes);
    if (!u->nodes) {
        sg__uses_free(u);
        return sg__nomem(g->ctx);
    }
    for (uint32_t n = 0; n < g->nnodes; n++)
        each_use(g, n, put_use, u);
    return SG_OK;
}

void sg__uses_free(sg__uses *u)
{
    sg_free(u->off);
    sg_free(u->fill);
    sg_free(u->nodes);
    memset(u, 0, sizeof *u);
}

const uint32_t *sg__uses_of(const sg__uses *u, uint32_t v, size_t *n)
{
    *n = v < u->nvals ? u->fill[v] : 0;
    return *n ? u->nodes + u->off[v] : NULL;
}

/* The argument value at schema position i of call node n (positional, or
 * keyword by name), or SG_NOVAL. */
static uint32_t arg_value(const sg__graph *g, const sg__gnode *n, int i)
{
    const sg__schema *s = n->schema;
    const char *name = s->args[i].name;
    for (uint32_t k = 0; k < n->nargs; k++) {
        const sg__garg *a = &g->args[n->args + k];
        bool match = a->kw ? !strcmp(a->kw, name) : (int)k == i;
        if (match)
            return a->kind == SG_A_VALUE ? a->u.v : SG_NOVAL;
    }
    return SG_NOVAL;
}

size_t sg__graph_node_writes(const sg__graph *g, uint32_t node, uint32_t *vals, size_t max)
{
    if (node >= g->nnodes || g->nodes[node].kind != SG_N_CALL)
        return 0;
    const sg__gnode *n = &g->nodes[node];
    size_t k = 0;
    for (int i = 0; i < n->schema->nargs; i++)
        if ((n->schema->written >> i) & 1) {
            uint32_t v = arg_value(g, n, i);
            if (v != SG_NOVAL && k < max)
                vals[k] = v;
            k += v != SG_NOVAL;
        }
    return k;
}

/* The schema argument that value v of call node n aliases (its return's
 * annotation), or -1. */
static int aliased_arg(const sg__graph *g, uint32_t v, const sg__gnode **node)
{
    if (v >= g->nvals || g->vals[v].node == SG_NOVAL)
        return -1;
    const sg__gnode *n = &g->nodes[g->vals[v].node];
    *node = n;
    if (n->kind != SG_N_CALL || n->out == SG_NOVAL)
        return -1;
    /* v is the node's value, or an element of its list (unbind: Tensor(a)[]) */
    if (n->out != v && g->vals[n->out].kind != SG_V_LIST)
        return -1;
    return n->schema->nrets ? n->schema->ret_alias[0] : -1;
}

uint32_t sg__graph_grad_base(const sg__graph *g, uint32_t v)
{
    for (;;) {
        uint32_t n = g->vals[v].node, up;
        if (n != SG_NOVAL && g->nodes[n].kind == SG_N_PLACEHOLDER && g->vals[v].kind == SG_V_TENSOR &&
            g->vals[v].u.t.declared_view && g->nodes[n].scope == 0) {
            /* an input the caller declared a view of another input: its _base, the input on its storage
               declared no view */
            const sg__scope *root = &g->scopes[0];
            uint32_t b = SG_NOVAL;
            for (uint32_t p = 0; p < root->nphs && b == SG_NOVAL; p++) {
                uint32_t w = g->nodes[root->phs[p]].out;
                if (w != SG_NOVAL && g->vals[w].kind == SG_V_TENSOR && !g->vals[w].u.t.declared_view &&
                    g->vals[w].u.t.storage == g->vals[v].u.t.storage)
                    b = w;
            }
            return b != SG_NOVAL ? b : v;
        }
        if (n == SG_NOVAL || g->nodes[n].kind != SG_N_CALL || g->nodes[n].schema->op == SG_OP_detach)
            return v;
        if ((up = sg__graph_view_of(g, v)) == SG_NOVAL) {
            /* an in-place or out= result: the tensor it wrote, whose base autograd keeps with the object
               (a view written in place, t0.mul_(t0), is still its base's view; its views too). Back to
               its first version, past no set_ (ours keeps what it puts on a view apart: set_view) */
            uint32_t first = sg__graph_first_version(g, v, false);
            if (first != v && g->vals[first].node != SG_NOVAL &&
                g->nodes[g->vals[first].node].kind == SG_N_PLACEHOLDER && g->vals[first].u.t.declared_view) {
                v = first; /* (a version of an input declared a view: that input's base, above) */
                continue;
            }
            if (first == v || g->vals[first].node == SG_NOVAL || g->nodes[g->vals[first].node].kind != SG_N_CALL ||
                g->nodes[g->vals[first].node].schema->op == SG_OP_detach ||
                (up = sg__graph_view_of(g, first)) == SG_NOVAL)
                return v;
        }
        v = up;
    }
}

uint32_t sg__graph_view_of(const sg__graph *g, uint32_t v)
{
    const sg__gnode *n = NULL;
    int i = aliased_arg(g, v, &n);
    if (i < 0 || ((n->schema->written >> i) & 1))
        return SG_NOVAL;
    return arg_value(g, n, i);
}

uint32_t sg__graph_updates(const sg__graph *g, uint32_t v)
{
    const sg__gnode *n = NULL;
    int i = aliased_arg(g, v, &n);
    if (i < 0 || !((n->schema->written >> i) & 1))
        return SG_NOVAL;
    return arg_value(g, n, i);
}

uint32_t sg__graph_tensor_of(const sg__graph *g, uint32_t v)
{
    for (uint32_t w; v != SG_NOVAL && (w = sg__graph_updates(g, v)) != SG_NOVAL;)
        v = w;
    return v;
}

uint32_t sg__graph_first_version(const sg__graph *g, uint32_t v, bool past_data_set)
{
    for (uint32_t u; v != SG_NOVAL && g->vals[v].node != SG_NOVAL && g->nodes[g->vals[v].node].kind == SG_N_CALL &&
                     (g->nodes[g->vals[v].node].schema->op != SG_OP_set__source_Tensor ||
                      (past_data_set && (g->nodes[g->vals[v].node].flags & SG_NODE_DATA))) &&
                     (u = sg__graph_updates(g, v)) != SG_NOVAL;)
        v = u;
    return v;
}
