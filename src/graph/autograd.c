/* Reverse-mode differentiation of a graph's root scope (derivatives.h):
 * which values require grad and lead to a wanted one, then the nodes in
 * reverse order, each through its row's formula, the gradients that meet
 * added. The backward is recorded into the same graph, after its nodes. */
#include <string.h>

#include "graph/derivatives.h"
#include "graph/ops.h"
#include "graph/record.h"

typedef struct bw {
    sg__graph *g;
    uint8_t *rg;    /* per value: requires grad */
    uint8_t *reach; /* per value: requires grad and leads to a wanted value */
    uint32_t *gv;   /* per value: its gradient so far, or SG_NOVAL */
    uint32_t nvals; /* the values the forward had */
    unsigned line;
    sg__backward *spec; /* (its writes) */
    uint32_t scope;     /* the scope differentiated (the root, or a cond branch's copy: cond_backward) */
    uint32_t from;      /* its first node */
    bool rg_only;       /* forward_flags sets rg alone (reach unused: sg__graph_requires_grad) */
    uint32_t *first;    /* per value below nmemo: hidden_first's answer, SG_NOVAL not known yet (made on first use;
                           NULL: walked each time, as where it could not be made) */
    int8_t *checked;    /* per value below nmemo: hidden_checked's answer, 2 not known yet */
    uint32_t nmemo;
} bw;

/* A custom Function's backward write, noted in b->spec. */
static sg_status note_write(bw *b, sg__bwrite w)
{
    sg__backward *sp = b->spec;
    sg__bwrite *grown = sg__realloc(b->g->ctx, sp->writes, (sp->nwrites + 1) * sizeof *grown);
    if (!grown)
        return sg__nomem(b->g->ctx);
    sp->writes = grown;
    sp->writes[sp->nwrites++] = w;
    return SG_OK;
}

static bool is_tensor(const sg__graph *g, uint32_t v)
{
    return v < g->nvals && g->vals[v].kind == SG_V_TENSOR;
}

static bool floating(const sg__graph *g, uint32_t v)
{
    return g->vals[v].u.t.dtype == SG_FLOAT64 || g->vals[v].u.t.dtype == SG_FLOAT32;
}

/* Does some tensor argument of node nd have flag f set (f: rg or reach)? */
static bool any_arg(const bw *b, const sg__gnode *nd, const uint8_t *f)
{
    const sg__graph *g = b->g;
    for (uint32_t k = 0; k < nd->nargs; k++) {
        const sg__garg *a = &g->args[nd->args + k];
        if (a->kind == SG_A_VALUE && is_tensor(g, a->u.v) && f[a->u.v])
            return true;
        if (a->kind == SG_A_VALUES)
            for (uint32_t j = 0; j < a->u.list.n; j++)
                if (f[g->ids[a->u.list.off + j]])
                    return true;
    }
    return false;
}

/* The first argument of nd, a tensor value, or SG_NOVAL. */
static uint32_t first_tensor(const sg__graph *g, const sg__gnode *nd)
{
    const sg__garg *a = nd->nargs ? &g->args[nd->args] : NULL;
    return a && a->kind == SG_A_VALUE && is_tensor(g, a->u.v) ? a->u.v : SG_NOVAL;
}

/* Mark the values nd gives (its value, or a list's elements) with flag f = on. */
static void mark_out(bw *b, const sg__gnode *nd, uint8_t *f, bool on)
{
    const sg__graph *g = b->g;
    uint32_t o = nd->out;
    if (o == SG_NOVAL || o >= b->nvals)
        return;
    if (g->vals[o].kind == SG_V_LIST) {
        for (uint32_t j = 0; j < g->vals[o].u.list.n; j++) {
            uint32_t e = g->ids[g->vals[o].u.list.off + j];
            f[e] = on && is_tensor(g, e) && floating(g, e);
        }
        return;
    }
    f[o] = on && is_tensor(g, o) && floating(g, o);
}

/* The forward flags: requires grad (rg), and leads to a wanted value (reach). */
static void forward_flags(bw *b, const sg__backward *spec, size_t nnodes)
{
    sg__graph *g = b->g;
    for (size_t k = 0; k < spec->nin; k++)
        if (spec->ins[k] < b->nvals)
            b->reach[spec->ins[k]] = 1;
    for (size_t i = b->from; i < nnodes; i++) {
        const sg__gnode *nd = &g->nodes[i];
        if (nd->scope != b->scope || (nd->out == SG_NOVAL && nd->kind != SG_N_FUNCTION))
            continue;
        if (nd->kind == SG_N_PLACEHOLDER) {
            if (is_tensor(g, nd->out))
                b->rg[nd->out] = g->vals[nd->out].u.t.requires_grad;
            b->reach[nd->out] &= b->rg[nd->out];
            continue;
        }
        if (nd->kind == SG_N_COND) { /* (PyTorch's CondAutogradOp: every floating output, where an operand
                                        requires grad; a bool predicate: eager's call of the branch, the
                                        outputs the trace flagged; none made under no_grad) */
            bool on = !(nd->flags & SG_NODE_NO_GRAD), rg = on && any_arg(b, nd, b->rg);
            bool reach = on && any_arg(b, nd, b->reach);
            mark_out(b, nd, b->rg, rg);
            mark_out(b, nd, b->reach, reach);
            const sg__gval *l = &g->vals[nd->out];
            for (uint32_t j = 0; g->args[nd->args].kind == SG_A_EXPR && l->kind == SG_V_LIST && j < l->u.list.n; j++) {
                uint32_t e = g->ids[l->u.list.off + j];
                if (e < b->nvals && is_tensor(g, e) && !g->vals[e].u.t.requires_grad)
                    b->rg[e] = b->reach[e] = 0;
            }
            continue;
        }
        if (nd->kind == SG_N_FUNCTION) { /* its outputs take their grad_fn: they require grad where an input does */
            const sg__garg *a = &g->args[nd->args];
            bool rg = false, reach = false;
            for (uint32_t j = 0; j < a[2].u.list.n; j++) {
                rg |= b->rg[g->ids[a[2].u.list.off + j]] != 0;
                reach |= b->reach[g->ids[a[2].u.list.off + j]] != 0;
            }
            /* A backward that writes is wanted itself: the engine's backward() runs every node the
               loss reaches (no input list to prune by), so it runs where no gradient it gives is
               wanted, and its writes happen (the gradients it returns go no further: reach stays
               the inputs'). */
            reach |= a[5].u.list.n > 0;
            for (uint32_t j = 0; j < a[1].u.list.n; j++) {
                uint32_t o = g->ids[a[1].u.list.off + j];
                b->rg[o] = rg && is_tensor(g, o) && floating(g, o);
                b->reach[o] = reach && b->rg[o];
            }
            continue;
        }
        if (nd->kind != SG_N_CALL)
            continue;
        if (nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)) { /* hidden from autograd: a write keeps self's history */
            uint32_t self = first_tensor(g, nd);
            bool w = (nd->flags & SG_NODE_WRITE) && self != SG_NOVAL;
            /* a view made under no_grad of what requires grad requires grad itself, a leaf without a
               grad_fn (CreationMeta::NO_GRAD_MODE; not .data's, nor a detach): what is computed from it
               requires grad, its gradient going nowhere (reach stays off) */
            bool leaf_view = !w && self != SG_NOVAL && b->rg[self] && !(nd->flags & SG_NODE_DATA) &&
                             (nd->schema->flags & SG_OPF_VIEW) && nd->schema->op != SG_OP_detach;
            mark_out(b, nd, b->rg, (w || leaf_view) && b->rg[self]);
            mark_out(b, nd, b->reach, w && b->reach[self]);
            continue;
        }
        const sg__opinfo *info = sg__op_info(nd->schema->op);
        bool diff = nd->schema->op != SG_OP_detach && !(info && (info->tags & SG_T_NODIFF));
        mark_out(b, nd, b->rg, diff && any_arg(b, nd, b->rg));
        if (!b->rg_only)
            mark_out(b, nd, b->reach, diff && any_arg(b, nd, b->reach));
    }
}

/* v's gradient gains x. */
static sg_status accumulate(bw *b, uint32_t v, uint32_t x)
{
    if (b->gv[v] == SG_NOVAL) {
        b->gv[v] = x;
        return SG_OK;
    }
    const sg__schema *add = sg__opreg_op(b->g->reg, SG_OP_add_Tensor);
    sg__garg a[2] = {{.kind = SG_A_VALUE, .u.v = b->gv[v]}, {.kind = SG_A_VALUE, .u.v = x}};
    return sg__graph_record(b->g, add, a, 2, b->line, NULL, &b->gv[v]);
}

sg_status sg__graph_node_args(sg__graph *g, const sg__gnode *nd, sg__garg *a)
{
    const sg__schema *s = nd->schema;
    uint32_t npos = 0;
    while (npos < nd->nargs && !g->args[nd->args + npos].kw)
        npos++;
    sg__mcall m; /* what sg__record_default reads (clearing the whole call, its arguments' room, cost more
                    than the rest: the saved-value check reads every node's arguments) */
    m.g = g;
    m.env = g->env;
    m.s = s;
    m.op[0] = '\0';
    for (int i = 0; i < s->nargs; i++) {
        const sg__garg *x = (uint32_t)i < npos ? &g->args[nd->args + i] : NULL;
        for (uint32_t j = npos; j < nd->nargs && !x; j++)
            if (!strcmp(g->args[nd->args + j].kw, s->args[i].name))
                x = &g->args[nd->args + j];
        if (x) {
            a[i] = *x;
            a[i].kw = NULL;
        } else {
            CHAIN(sg__record_default(&m, i));
            a[i] = m.a[i];
        }
    }
    return SG_OK;
}

/* Do value v and gradient x have the same sizes (one expression, or known
 * the same by the environment: unbind's results stacked have the constant
 * the trace specialized a symbolic size to)? */
static bool same_sizes(const sg__graph *g, uint32_t v, uint32_t x)
{
    if (!is_tensor(g, x) || g->vals[x].u.t.ndim != g->vals[v].u.t.ndim)
        return false;
    for (size_t k = 0; k < g->vals[v].u.t.ndim; k++) {
        const sg_expr *a = sg__graph_size(g, v, k), *b = sg__graph_size(g, x, k);
        bool same = a == b;
        if (!same && sg__known_same(g->env, a, b, &same) != SG_OK)
            return false;
        if (!same)
            return false;
    }
    return true;
}

static sg_status wrong_grad(const sg__graph *g, const sg__schema *s, uint32_t v)
{
    return sg__err(g->ctx, SG_EINTERNAL, "backward of %s: a gradient of other sizes than its argument's (rank %u)",
                   s->name, (unsigned)g->vals[v].u.t.ndim);
}

/* May a tensor of v's sizes expand to x's (the engine's is_expandable_to)? */
static bool expandable(const sg__graph *g, uint32_t v, uint32_t x)
{
    uint32_t n = g->vals[v].u.t.ndim, m = g->vals[x].u.t.ndim;
    if (n > m)
        return false;
    for (uint32_t k = 1; k <= n; k++) {
        const sg_expr *a = sg__graph_size(g, v, n - k), *c = sg__graph_size(g, x, m - k);
        bool same = a == c;
        if (!same && sg__known_same(g->env, a, c, &same) != SG_OK)
            return false;
        if (!same && a != g->ctx->one)
            return false;
    }
    return true;
}

/* What a hidden write made v of (its self: under no_grad or through .data,
 * where the backward reaches it), SG_NOVAL where none made it. */
static uint32_t hidden_step(const bw *b, uint32_t v)
{
    const sg__graph *g = b->g;
    uint32_t n = g->vals[v].node;
    if (n == SG_NOVAL || g->nodes[n].kind != SG_N_CALL || g->nodes[n].out != v ||
        !(g->nodes[n].flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)) || !(g->nodes[n].flags & SG_NODE_WRITE))
        return SG_NOVAL;
    uint32_t self = first_tensor(g, &g->nodes[n]);
    return self != SG_NOVAL && b->reach[self] ? self : SG_NOVAL;
}

/* The memos of hidden_first and hidden_checked, made on first use for the
 * values the graph has then; false where they could not be (each answer
 * is then worked out again: slower, the same). */
static bool memos(bw *b)
{
    if (b->first)
        return true;
    uint32_t n = (uint32_t)b->g->nvals;
    b->first = sg__malloc(b->g->ctx, (n ? n : 1) * sizeof *b->first);
    b->checked = sg__malloc(b->g->ctx, n ? n : 1);
    if (!b->first || !b->checked) {
        sg_free(b->first), sg_free(b->checked);
        b->first = NULL, b->checked = NULL;
        return false;
    }
    memset(b->first, 0xff, n * sizeof *b->first);
    memset(b->checked, 2, n);
    b->nmemo = n;
    return true;
}

/* The first version of v's hidden writes (walked back through the hidden
 * writes that made it, under no_grad or through .data, while the backward
 * reaches their self): v where none made it. Remembered for every version
 * walked, so a chain of a thousand writes under no_grad is walked once. */
static uint32_t hidden_first(bw *b, uint32_t v)
{
    bool memo = memos(b) && v < b->nmemo;
    uint32_t u = v, r = SG_NOVAL;
    for (;;) {
        if (memo && u < b->nmemo && b->first[u] != SG_NOVAL) {
            r = b->first[u];
            break;
        }
        uint32_t next = hidden_step(b, u);
        if (next == SG_NOVAL) {
            r = u;
            break;
        }
        u = next;
    }
    for (uint32_t w = v; memo && w != SG_NOVAL && w < b->nmemo && b->first[w] == SG_NOVAL; w = hidden_step(b, w))
        b->first[w] = r;
    return r;
}

/* Whose sizes autograd checks a gradient of a version of r (hidden_first's)
 * against: 1 where r's (r has a grad_fn: a call or cond autograd recorded
 * made it, or a custom Function applied with grad returned it,
 * or an input given as a non-leaf; or r is a leaf whose AccumulateGrad was
 * made while it had r's sizes: the first call autograd recorded of any
 * version of r read one of r's sizes), 0 where r's grad_fn keeps none
 * (what no call autograd recorded made, no input), -1 where r is a leaf
 * whose AccumulateGrad was made after a version of other sizes. */
static int hidden_checked_walk(bw *b, uint32_t r);

static int hidden_checked(bw *b, uint32_t r)
{
    if (!memos(b) || r >= b->nmemo)
        return hidden_checked_walk(b, r);
    if (b->checked[r] == 2)
        b->checked[r] = (int8_t)hidden_checked_walk(b, r);
    return b->checked[r];
}

/* May the graph of call node j, which read a leaf, be freed before a later
 * call reads the leaf (its AccumulateGrad, held by that graph alone, made
 * anew then, with the leaf's sizes at that time)? Where its result is no
 * output and no later call takes it as a tensor: a temporary such as
 * `a.sum().item()`'s, or a local no one reads again, whose life the graph
 * does not tell. Counted as freed: sound, as where the sizes differ the
 * gradient is refused (leaf_sizes_unknown) rather than checked against
 * sizes it may not have. */
static bool may_die(const bw *b, uint32_t j)
{
    const sg__graph *g = b->g;
    uint32_t o = g->nodes[j].out;
    if (o == SG_NOVAL || !is_tensor(g, o))
        return false;
    for (size_t k = 0; b->spec && k < b->spec->nout; k++)
        if (b->spec->outs[k] == o)
            return false;
    for (uint32_t i = j + 1; i < g->nnodes; i++) {
        const sg__gnode *nd = &g->nodes[i];
        if (nd->kind == SG_N_PLACEHOLDER || nd->kind == SG_N_ASSERT || !sg__graph_node_reads(g, nd, o))
            continue;
        if (nd->kind == SG_N_OUTPUT || nd->out == SG_NOVAL || g->vals[nd->out].kind == SG_V_TENSOR ||
            g->vals[nd->out].kind == SG_V_LIST) /* (not a number: item, a size) */
            return false;
    }
    return true;
}

static int hidden_checked_walk(bw *b, uint32_t r)
{
    const sg__graph *g = b->g;
    uint32_t n = g->vals[r].node;
    if (n == SG_NOVAL)
        return 0;
    bool hid = (g->nodes[n].flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)) != 0;
    if ((g->nodes[n].kind == SG_N_CALL || g->nodes[n].kind == SG_N_COND) && !hid)
        return 1; /* (recorded: no custom Function's output, whose forward runs under no_grad) */
    for (uint32_t j = n + 1; j < g->nnodes; j++) { /* an output of a custom Function: its grad_fn the Function's */
        const sg__gnode *f = &g->nodes[j];
        if (f->kind != SG_N_FUNCTION || (f->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)))
            continue;
        const sg__garg *o = &g->args[f->args + 1];
        for (uint32_t k = 0; o->kind == SG_A_VALUES && k < o->u.list.n; k++)
            if (g->ids[o->u.list.off + k] == r)
                return 1;
    }
    if (g->nodes[n].kind == SG_N_CALL || g->nodes[n].kind == SG_N_COND)
        return 0;
    if (g->nodes[n].kind != SG_N_PLACEHOLDER || !g->vals[r].u.t.requires_grad)
        return 0;
    if (!g->vals[r].u.t.leaf)
        return 1;
    for (uint32_t j = n + 1; j < g->nnodes; j++) { /* the first call autograd recorded of a version of r */
        const sg__gnode *nd = &g->nodes[j];
        bool fn = nd->kind == SG_N_FUNCTION; /* (a custom Function applied with grad: its inputs, args[2]) */
        const sg__opinfo *oi = nd->kind == SG_N_CALL ? sg__op_info(nd->schema->op) : NULL;
        if ((nd->kind != SG_N_CALL && nd->kind != SG_N_COND && !fn) || (nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)) ||
            nd->scope != g->nodes[n].scope || (!fn && nd->out != SG_NOVAL && g->vals[nd->out].kind == SG_V_TENSOR &&
                                               !floating(g, nd->out)) || /* (no grad_fn: gt, nonzero) */
            (oi && (oi->tags & SG_T_NODIFF))) /* (nor ones_like's, zeros_like's of it) */
            continue;
        for (uint32_t k = fn ? 2 : 0; k < (fn ? 3u : nd->nargs); k++) {
            const sg__garg *a = &g->args[nd->args + k];
            uint32_t m = a->kind == SG_A_VALUE ? 1 : a->kind == SG_A_VALUES ? a->u.list.n : 0;
            for (uint32_t e = 0; e < m; e++) {
                uint32_t x = a->kind == SG_A_VALUE ? a->u.v : g->ids[a->u.list.off + e];
                if (is_tensor(g, x) && hidden_first(b, x) == r && !(!fn && may_die(b, (uint32_t)j)))
                    return same_sizes(g, x, r) ? 1 : -1;
            }
        }
    }
    for (size_t k = 0; b->spec && k < b->spec->nout; k++) /* else the loss's sum of the first output of them */
        if (hidden_first(b, b->spec->outs[k]) == r)
            return same_sizes(g, b->spec->outs[k], r) ? 1 : -1;
    return 1;
}

static sg_status leaf_sizes_unknown(const sg__graph *g, uint32_t r)
{
    return sg__err(g->ctx, SG_EUNSUPPORTED, "unsupported: the gradient of a leaf whose sizes changed under no_grad "
                   "before autograd recorded a call of it (%s: its AccumulateGrad checks gradients against the "
                   "sizes it had then)", g->vals[r].name && g->vals[r].name[0] ? g->vals[r].name : "a leaf");
}

/* The gradient grad of a hidden write's new version (node i, SG_NODE_WRITE)
 * passed to self, its old version: autograd keeps the history of the
 * first version r (hidden_first), so the engine hands grad to r's grad_fn
 * as its validate_outputs does: as it is where of self's sizes or of r's,
 * summed to r's where those expand to grad's (x.unsqueeze_(0) under
 * no_grad), else SG_EAUTOGRAD, as it raises (x.squeeze_() of a [1, 3]). */
static sg_status pass_hidden(bw *b, uint32_t i, uint32_t self, uint32_t grad)
{
    sg__graph *g = b->g;
    if (same_sizes(g, self, grad))
        return accumulate(b, self, grad);
    uint32_t r = hidden_first(b, self);
    int checked = hidden_checked(b, r);
    if (checked < 0)
        return leaf_sizes_unknown(g, r);
    if (!checked)
        r = self;
    if (same_sizes(g, r, grad))
        return accumulate(b, r, grad);
    if (!expandable(g, r, grad))
        return sg__err(g->ctx, SG_EAUTOGRAD, "invalid gradient at index 0 - got a gradient of the sizes after %s_ "
                       "under no_grad, not compatible with the tensor's before it (PyTorch's validate_outputs)",
                       g->nodes[i].schema->name);
    sg__dctx d = {.g = g, .node = i, .s = g->nodes[i].schema, .out = g->nodes[i].out, .grad = grad, .list = -1,
                  .line = b->line};
    uint32_t x = sg__deriv_sum_to(&d, grad, r);
    return d.st ? d.st : accumulate(b, r, x);
}

/* The value whose sizes autograd's grad_fn recorded for v: v, or where v is
 * the new version of hidden writes (under no_grad, through .data: a
 * metadata change such as transpose_ keeps the grad_fn, and its input
 * metadata, of the tensor before it), their first version, when autograd
 * checks against its sizes (hidden_checked); SG_NOVAL for a leaf whose
 * AccumulateGrad took other sizes. */
static uint32_t hidden_root(bw *b, uint32_t v)
{
    uint32_t r = hidden_first(b, v);
    if (r == v)
        return v;
    int checked = hidden_checked(b, r);
    return checked > 0 ? r : checked < 0 ? SG_NOVAL : v;
}

/* The engine's validate_outputs of gradient *x given to argument v by who
 * (an operator's, a custom Function's backward): against the sizes of the
 * grad_fn's input metadata (hidden_root's), so where v's sizes changed
 * under no_grad and *x is not of them, *x is summed to (or refused by) the
 * sizes before: *v becomes that version. */
static void validate_hidden(bw *b, sg__dctx *d, const char *who, uint32_t *v, uint32_t *x)
{
    sg__graph *g = b->g;
    uint32_t r = hidden_root(b, *v);
    if (r == SG_NOVAL && !d->st && !same_sizes(g, *v, hidden_first(b, *v)))
        d->st = leaf_sizes_unknown(g, hidden_first(b, *v));
    if (r == SG_NOVAL || r == *v || d->st || same_sizes(g, *v, *x) || same_sizes(g, *v, r))
        return;
    if (!same_sizes(g, r, *x) && !expandable(g, r, *x)) {
        d->st = sg__err(g->ctx, SG_EAUTOGRAD, "invalid gradient at index 0 - got a gradient of sizes not "
                        "compatible with the tensor's before a metadata change under no_grad (%s's argument; "
                        "PyTorch's validate_outputs)", who);
        return;
    }
    if (!same_sizes(g, r, *x))
        *x = sg__deriv_sum_to(d, *x, r);
    *v = r;
}

/* The backward of call node i: its formula, the gradients it gives added in. */
static sg_status node_backward(bw *b, uint32_t i)
{
    sg__graph *g = b->g;
    const sg__gnode *nd = &g->nodes[i];
    const sg__opinfo *info = sg__op_info(nd->schema->op);
    if (!info || !info->deriv->fn)
        return sg__err(g->ctx, SG_EUNSUPPORTED, "unsupported: the derivative of %s", nd->schema->name);
    sg__dctx d = {.g = g, .node = i, .s = nd->schema, .out = nd->out, .grad = b->gv[nd->out], .list = -1,
                  .line = b->line};
    CHAIN(sg__graph_node_args(g, nd, d.a));
    /* (the formula records calls: g's arrays may move, so nothing here points into them after it) */
    uint32_t *lgin = NULL, *rgrad = NULL, *lv = NULL;
    bool *lneed = NULL;
    if (g->vals[nd->out].kind == SG_V_LIST) { /* unbind: each result's gradient, or none */
        d.res = g->vals[nd->out].u.list.off;
        d.nres = g->vals[nd->out].u.list.n;
        if (!(rgrad = sg__malloc(g->ctx, (d.nres ? d.nres : 1) * sizeof *rgrad)))
            return sg__nomem(g->ctx);
        for (uint32_t j = 0; j < d.nres; j++)
            rgrad[j] = b->gv[g->ids[d.res + j]];
        d.rgrad = rgrad;
    }
    for (int k = 0; k < d.s->nargs; k++) {
        d.gin[k] = SG_NOVAL;
        const sg__garg *a = &d.a[k];
        d.need[k] = a->kind == SG_A_VALUE && is_tensor(g, a->u.v) && b->reach[a->u.v];
        if (a->kind == SG_A_VALUES && d.list < 0) {
            d.list = k;
            d.nl = a->u.list.n;
        }
    }
    if (d.list >= 0) {
        lgin = sg__malloc(g->ctx, (d.nl ? d.nl : 1) * sizeof *lgin);
        lneed = sg__malloc(g->ctx, (d.nl ? d.nl : 1) * sizeof *lneed);
        lv = sg__malloc(g->ctx, (d.nl ? d.nl : 1) * sizeof *lv);
        if (!lgin || !lneed || !lv) {
            sg_free(lgin);
            sg_free(lneed);
            sg_free(lv);
            sg_free(rgrad);
            return sg__nomem(g->ctx);
        }
        for (uint32_t j = 0; j < d.nl; j++) { /* the list's values, copied */
            lv[j] = g->ids[d.a[d.list].u.list.off + j];
            lgin[j] = SG_NOVAL;
            lneed[j] = b->reach[lv[j]];
        }
        d.lv = lv;
        d.lgin = lgin;
        d.lneed = lneed;
    }
    /* a view with no element whose grad_fn PyTorch made again (SG_NODE_REGEN): its gradient what
       as_strided_backward gives it, a factory's zeros */
    if ((nd->flags & SG_NODE_REGEN) && (nd->schema->flags & SG_OPF_VIEW) && is_tensor(g, nd->out) &&
        sg__graph_empty(g, nd->out))
        d.grad = sg__deriv_zeros(&d, nd->out);
    if (!d.st)
        info->deriv->fn(&d);
    /* the engine's validate_outputs: each gradient summed to its argument's sizes, in order */
    for (int k = 0; k < d.s->nargs && !d.st; k++) {
        if (d.need[k] && d.gin[k] != SG_NOVAL)
            validate_hidden(b, &d, d.s->name, &d.a[k].u.v, &d.gin[k]);
        if (d.need[k] && d.gin[k] != SG_NOVAL && !d.st && !same_sizes(g, d.a[k].u.v, d.gin[k]))
            d.gin[k] = sg__deriv_sum_to(&d, d.gin[k], d.a[k].u.v);
        if (d.need[k] && d.gin[k] != SG_NOVAL && !d.st && floating(g, d.a[k].u.v) && floating(g, d.gin[k]))
            d.gin[k] = sg__deriv_cast(&d, d.gin[k], d.a[k].u.v); /* (in the argument's dtype: float32's) */
    }
    for (uint32_t j = 0; d.list >= 0 && j < d.nl && !d.st; j++) {
        if (lneed[j] && lgin[j] != SG_NOVAL)
            validate_hidden(b, &d, d.s->name, &lv[j], &lgin[j]);
        if (lneed[j] && lgin[j] != SG_NOVAL && !d.st && !same_sizes(g, lv[j], lgin[j]))
            lgin[j] = sg__deriv_sum_to(&d, lgin[j], lv[j]);
        if (lneed[j] && lgin[j] != SG_NOVAL && !d.st && floating(g, lv[j]) && floating(g, lgin[j]))
            lgin[j] = sg__deriv_cast(&d, lgin[j], lv[j]);
    }
    sg_status s = d.st;
    for (int k = 0; k < d.s->nargs && !s; k++)
        if (d.need[k] && d.gin[k] != SG_NOVAL)
            s = same_sizes(g, d.a[k].u.v, d.gin[k]) ? accumulate(b, d.a[k].u.v, d.gin[k]) : wrong_grad(g, d.s, d.a[k].u.v);
    for (uint32_t j = 0; d.list >= 0 && j < d.nl && !s; j++)
        if (lneed[j] && lgin[j] != SG_NOVAL)
            s = same_sizes(g, lv[j], lgin[j]) ? accumulate(b, lv[j], lgin[j]) : wrong_grad(g, d.s, lv[j]);
    sg_free(lgin);
    sg_free(lneed);
    sg_free(lv);
    sg_free(rgrad);
    return s;
}

/* Call node n of g (a subgraph's) recorded again in g's current scope, its
 * values through map (map[its value, a list's elements] the new ones);
 * flags: its node flags too. */
static sg_status record_mapped(sg__graph *g, uint32_t n, uint32_t *map, bool flags)
{
    sg_ctx *ctx = g->ctx;
    const sg__gnode *nd = &g->nodes[n];
    sg__garg args[SG_SCHEMA_ARGS] = {{0}};
    uint32_t *lists[SG_SCHEMA_ARGS] = {NULL};
    sg_status s = SG_OK;
    for (uint32_t k = 0; k < nd->nargs && !s; k++) {
        args[k] = g->args[nd->args + k];
        if (args[k].kind == SG_A_VALUE && (args[k].u.v = map[args[k].u.v]) == SG_NOVAL)
            s = sg__err(ctx, SG_EINTERNAL, "backward of %s: a value of no node", g->scopes[nd->scope].name);
        if (args[k].kind == SG_A_VALUES && !s) {
            uint32_t m = args[k].u.list.n, off;
            if (!(lists[k] = sg__malloc(ctx, (m ? m : 1) * sizeof *lists[k]))) {
                s = sg__nomem(ctx);
                break;
            }
            for (uint32_t j = 0; j < m; j++)
                lists[k][j] = map[g->ids[args[k].u.list.off + j]];
            if (!(s = sg__graph_ids(g, &off, lists[k], m)))
                args[k].u.list.off = off;
        }
    }
    /* (recording moves g's arrays: what is read of the node is copied first) */
    uint32_t v, out = nd->out, line = nd->line, nargs = nd->nargs;
    uint8_t fl = flags ? nd->flags : 0;
    const sg__schema *sch = nd->schema;
    if (!s)
        s = sg__graph_record(g, sch, args, nargs, line, NULL, &v);
    for (uint32_t k = 0; k < nargs; k++)
        sg_free(lists[k]);
    if (s || out == SG_NOVAL)
        return s;
    g->nodes[g->vals[v].node].flags |= fl;
    map[out] = v;
    if (g->vals[out].kind == SG_V_LIST && g->vals[v].kind == SG_V_LIST) /* unbind's elements */
        for (uint32_t j = 0; j < g->vals[out].u.list.n && j < g->vals[v].u.list.n; j++)
            map[g->ids[g->vals[out].u.list.off + j]] = g->ids[g->vals[v].u.list.off + j];
    return SG_OK;
}

/* The backward of custom Function node i (SG_N_FUNCTION): its backward
 * scope's calls recorded again in the root, its placeholders taking the
 * outputs' gradients (zeros where none reached one: materialize_grads)
 * and what they lift; the gradients it returns checked and summed as the
 * engine's validate_outputs does, and added to the inputs'; what it
 * writes of what it takes (the values its scope gives after the
 * gradients) noted in the spec. */
static sg_status function_backward(bw *b, uint32_t i)
{
    sg__graph *g = b->g;
    sg_ctx *ctx = g->ctx;
    /* (the calls below move g's arrays: what is read of the node is copied first) */
    const sg__garg *a = &g->args[g->nodes[i].args];
    uint32_t sc = a[0].u.v, nouts = a[1].u.list.n, nins = a[2].u.list.n, ng = a[4].u.list.n, nw = a[5].u.list.n;
    uint32_t outs_off = a[1].u.list.off, ins_off = a[2].u.list.off, of_off = a[4].u.list.off, w_off = a[5].u.list.off;
    uint32_t fline = g->nodes[i].line;
    if (g->scopes[sc].failed) /* (its tracing failed: eager raises that error as the backward runs it) */
        return sg__err(ctx, g->scopes[sc].failed, "%s", g->scopes[sc].failed_msg);
    uint32_t nvals = (uint32_t)g->nvals, nnodes = (uint32_t)g->nnodes;
    uint32_t *map = sg__malloc(ctx, (size_t)(nvals ? nvals : 1) * sizeof *map);
    uint32_t *grads = sg__malloc(ctx, (size_t)(nouts ? nouts : 1) * sizeof *grads);
    uint32_t *ret = NULL;
    uint32_t nret = 0;
    if (!map || !grads) {
        sg_free(map);
        sg_free(grads);
        return sg__nomem(ctx);
    }
    memset(map, 0xff, (size_t)nvals * sizeof *map);
    sg__dctx d = {.g = g, .node = i, .list = -1, .line = b->line};
    for (uint32_t j = 0; j < nouts && !d.st; j++) {
        uint32_t o = g->ids[outs_off + j];
        grads[j] = b->gv[o] != SG_NOVAL ? b->gv[o] : sg__deriv_zeros(&d, o);
    }
    sg_status s = d.st;
    uint32_t kfree = 0, first = 0, start = (uint32_t)g->nnodes;
    if (g->scopes[sc].nphs) { /* (the scope's nodes come after its first placeholder and before node i) */
        first = UINT32_MAX;
        for (uint32_t k = 0; k < g->scopes[sc].nphs; k++)
            first = g->scopes[sc].phs[k] < first ? g->scopes[sc].phs[k] : first;
    }
    for (uint32_t n = first; n < i && n < nnodes && !s; n++) {
        const sg__gnode *nd = &g->nodes[n];
        if (nd->scope != sc)
            continue;
        if (nd->kind == SG_N_PLACEHOLDER) {
            const sg__scope *bs = &g->scopes[sc];
            uint32_t outer = SG_NOVAL;
            for (uint32_t k = 0; k < bs->nphs; k++)
                if (bs->phs[k] == n)
                    outer = bs->outer[k];
            if (outer == SG_NOVAL && kfree >= nouts)
                s = sg__err(ctx, SG_EINTERNAL, "backward of %s: more gradients taken than it has outputs",
                            bs->name);
            else
                map[nd->out] = outer == SG_NOVAL ? grads[kfree++] : outer;
            continue;
        }
        if (nd->kind == SG_N_ASSERT) {
            s = sg__graph_assert(g, nd->cond, nd->line);
            continue;
        }
        if (nd->kind == SG_N_OUTPUT) {
            nret = nd->nargs;
            if (!(ret = sg__malloc(ctx, (nret ? nret : 1) * sizeof *ret)))
                s = sg__nomem(ctx);
            for (uint32_t k = 0; k < nret && !s; k++)
                ret[k] = map[g->args[nd->args + k].u.v];
            continue;
        }
        if (nd->kind != SG_N_CALL) {
            s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: a torch.cond or custom Function in the backward of %s",
                        g->scopes[sc].name);
            continue;
        }
        s = record_mapped(g, n, map, false);
    }
    /* what it writes of what it takes: a lifted tensor's new contents, a gradient it was given */
    for (uint32_t k = 0; k < nw && ng + k < nret && !s; k++) {
        int64_t p = 0;
        (void)sg_expr_get_si(g->exprs[w_off + k], &p);
        const sg__scope *bs = &g->scopes[sc];
        uint32_t outer = bs->outer[p], j = 0;
        if (outer != SG_NOVAL) {
            s = note_write(b, (sg__bwrite){outer, ret[ng + k], start, (uint32_t)g->nnodes, fline});
            continue;
        }
        for (uint32_t q = 0; q < (uint32_t)p; q++) /* (the gradients: its placeholders that lift nothing, in order) */
            j += bs->outer[q] == SG_NOVAL;
        s = note_write(b, (sg__bwrite){grads[j], SG_NOVAL, start, (uint32_t)g->nnodes, fline});
    }
    /* the engine's validate_outputs, then the inputs' gradients */
    for (uint32_t k = 0; k < nret && k < ng && !s; k++) {
        int64_t idx = 0;
        (void)sg_expr_get_si(g->exprs[of_off + k], &idx);
        if (idx < 0 || idx >= nins)
            continue;
        uint32_t in = g->ids[ins_off + (uint32_t)idx], x = ret[k];
        if (!b->reach[in] || x == SG_NOVAL)
            continue;
        if (is_tensor(g, x)) { /* (against the history's sizes where in's changed under no_grad) */
            d.st = SG_OK;
            validate_hidden(b, &d, g->scopes[sc].name, &in, &x);
            if ((s = d.st))
                break;
        }
        if (!same_sizes(g, in, x)) {
            if (!is_tensor(g, x) || !expandable(g, in, x)) {
                s = sg__err(ctx, SG_EAUTOGRAD, "Function %s returned an invalid gradient at index %lld - got a "
                            "gradient of other sizes than the input's", g->scopes[sc].name, (long long)idx);
                break;
            }
            d.st = SG_OK;
            x = sg__deriv_sum_to(&d, x, in);
            if ((s = d.st))
                break;
        }
        s = accumulate(b, in, x);
    }
    sg_free(map);
    sg_free(grads);
    sg_free(ret);
    return s;
}

static sg_status backward_in(sg__graph *g, sg__backward *spec, uint32_t scope, uint32_t from);

/* A value of g laid out as of (a tensor: its sizes, strides, offset and
 * dtype on a storage of its own; an int or bool: its expression), not
 * given by a node yet. */
static sg_status value_as(sg__graph *g, uint32_t of, uint32_t *out)
{
    const sg__gval *x = &g->vals[of];
    if (x->kind != SG_V_TENSOR)
        return sg__graph_value(g, out, (sg__vkind)x->kind, x->u.e, 0);
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
    for (uint32_t d = 0; d < x->u.t.ndim; d++) {
        sizes[d] = sg__graph_size(g, of, d);
        strides[d] = sg__graph_stride(g, of, d);
    }
    return sg__graph_tensor(g, out, (sg_dtype)x->u.t.dtype, x->u.t.ndim, sizes, strides, x->u.t.offset, SG_NOVAL);
}

/* A value laid out as gradient like of a cond's output e (list element;
 * the cond binds nbinds symbols at g->exprs[binds], line its line), but
 * with each unbacked size the cond binds that e's sizes take replaced by
 * branch br's output bo's size there: the gradient as the
 * branch that runs has it (where e's sizes are not bo's then, the branch
 * is never taken: contiguous of bo's sizes). SG_EUNSUPPORTED where bo is
 * no tensor of e's rank. */
static sg_status branch_sized(sg__graph *g, uint32_t binds, uint32_t nbinds, uint32_t line, uint32_t br, uint32_t bo,
                              uint32_t e, uint32_t like, uint32_t *out)
{
    const sg_expr *from[SG_MAX_DIMS], *to[SG_MAX_DIMS];
    size_t n = 0;
    uint32_t nd_e = g->vals[e].u.t.ndim;
    if (!is_tensor(g, bo) || g->vals[bo].u.t.ndim != nd_e || g->vals[like].u.t.ndim != nd_e)
        return sg__err(g->ctx, SG_EUNSUPPORTED, "unsupported: the derivative of a torch.cond output whose branch "
                       "gives no tensor of its rank (line %u)", line);
    for (uint32_t d = 0; d < nd_e; d++) { /* (its sizes: of symbols the branch takes, none it binds itself) */
        const sg_expr **syms = NULL;
        size_t ns = 0;
        CHAIN(sg_expr_free_symbols(g->ctx, &syms, &ns, sg__graph_size(g, bo, d)));
        bool taken = true;
        for (size_t q = 0; q < ns && taken; q++) {
            taken = false;
            for (uint32_t k = 0; k < g->scopes[br].nphs && !taken; k++)
                taken = g->vals[g->nodes[g->scopes[br].phs[k]].out].kind == SG_V_SYMINT &&
                        g->vals[g->nodes[g->scopes[br].phs[k]].out].u.e == syms[q];
        }
        sg_free(syms);
        if (!taken)
            return sg__err(g->ctx, SG_EUNSUPPORTED, "unsupported: the derivative of a torch.cond whose branch gives an "
                           "output of a size it computes (line %u)", line);
    }
    for (uint32_t d = 0; d < nd_e; d++)
        for (uint32_t k = 0; k < nbinds; k++)
            if (sg__graph_size(g, e, d) == g->exprs[binds + k]) {
                from[n] = g->exprs[binds + k];
                to[n++] = sg__graph_size(g, bo, d);
            }
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS], *off = g->vals[like].u.t.offset;
    bool same = true;
    for (uint32_t d = 0; d < nd_e; d++) {
        CHAIN(sg_expr_subs(g->ctx, &sizes[d], sg__graph_size(g, like, d), n, from, to));
        CHAIN(sg_expr_subs(g->ctx, &strides[d], sg__graph_stride(g, like, d), n, from, to));
        same &= sizes[d] == sg__graph_size(g, bo, d);
    }
    CHAIN(sg_expr_subs(g->ctx, &off, off, n, from, to));
    if (!same) { /* (e's size a constant the branch does not give, as in an eager run's record: the branch that
                    is not taken; contiguous, its backward never runs) */
        for (uint32_t d = 0; d < nd_e; d++)
            sizes[d] = sg__graph_size(g, bo, d);
        CHAIN(sg__graph_contiguous_strides(g->ctx, nd_e, sizes, strides));
        off = g->ctx->zero;
    }
    return sg__graph_tensor(g, out, (sg_dtype)g->vals[like].u.t.dtype, nd_e, sizes, strides, off, SG_NOVAL);
}

/* Which operands of cond node i (its branch br) lead to the outputs whose
 * gradient the backward gives (seed[j]): reach[k] per operand, through the
 * calls autograd differentiates (not past a write hidden from it but to
 * its first argument, not a detach or an operator without derivative).
 * What PyTorch's eager torch.cond (the branch called) would differentiate. */
static sg_status branch_reaches(const sg__graph *g, uint32_t br, const uint8_t *seed, uint8_t *reach)
{
    const sg__scope *sc = &g->scopes[br];
    uint8_t *m = sg__calloc(g->ctx, g->nvals ? g->nvals : 1, 1);
    if (!m)
        return sg__nomem(g->ctx);
    const sg__gnode *o = &g->nodes[sc->output];
    for (uint32_t j = 0; j < o->nargs; j++)
        if (seed[j] && g->args[o->args + j].kind == SG_A_VALUE)
            m[g->args[o->args + j].u.v] = 1;
    for (uint32_t i = sc->output; i-- > 0;) {
        const sg__gnode *nd = &g->nodes[i];
        if (nd->scope != br || (nd->kind != SG_N_CALL && nd->kind != SG_N_COND) || nd->out == SG_NOVAL)
            continue;
        bool on = m[nd->out];
        for (uint32_t j = 0; g->vals[nd->out].kind == SG_V_LIST && j < g->vals[nd->out].u.list.n; j++)
            on |= m[g->ids[g->vals[nd->out].u.list.off + j]] != 0;
        if (nd->kind == SG_N_COND) { /* a nested cond: every floating operand (its own backward says which) */
            const sg__garg *ops = &g->args[nd->args + 3];
            for (uint32_t j = 0; on && !(nd->flags & SG_NODE_NO_GRAD) && j < ops->u.list.n; j++) {
                uint32_t x = g->ids[ops->u.list.off + j];
                if (is_tensor(g, x) && floating(g, x))
                    m[x] = 1;
            }
            continue;
        }
        const sg__opinfo *info = sg__op_info(nd->schema->op);
        if (!on || nd->schema->op == SG_OP_detach || (info && (info->tags & SG_T_NODIFF)))
            continue;
        bool hidden = nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA);
        for (uint32_t k = 0; k < nd->nargs && !(hidden && k); k++) {
            const sg__garg *a = &g->args[nd->args + k];
            if (hidden && !(nd->flags & SG_NODE_WRITE))
                break;
            if (a->kind == SG_A_VALUE && is_tensor(g, a->u.v) && floating(g, a->u.v))
                m[a->u.v] = 1;
            for (uint32_t j = 0; a->kind == SG_A_VALUES && j < a->u.list.n; j++)
                m[g->ids[a->u.list.off + j]] = 1;
        }
    }
    for (uint32_t k = 0; k < sc->nphs; k++)
        reach[k] = m[g->nodes[sc->phs[k]].out];
    sg_free(m);
    return SG_OK;
}

/* Cond node n (nested in a branch cond_backward records again) recorded
 * again in the current scope over the same branches, its predicate and
 * operands through map; map[its list and elements] the new ones. Refused:
 * one binding unbacked sizes of its own (its copy would bind others). */
static sg_status cond_mapped(sg__graph *g, uint32_t n, uint32_t *map)
{
    sg_ctx *ctx = g->ctx;
    if (g->nodes[n].nbinds)
        return sg__err(ctx, SG_EUNSUPPORTED, "unsupported: the derivative of a torch.cond nested in a branch whose "
                                             "outputs have sizes of their own (line %u)", g->nodes[n].line);
    const sg__garg *a = &g->args[g->nodes[n].args];
    sg__garg pred = a[0];
    uint32_t tb = a[1].u.v, fb = a[2].u.v, nops = a[3].u.list.n, off = a[3].u.list.off, line = g->nodes[n].line;
    uint32_t list = g->nodes[n].out, nel = g->vals[list].u.list.n;
    uint8_t fl = g->nodes[n].flags;
    uint32_t *ops = sg__malloc(ctx, ((size_t)nops + nel + 1) * sizeof *ops), *els = ops ? ops + nops : NULL;
    sg_status s = ops ? SG_OK : sg__nomem(ctx);
    if (!s && pred.kind == SG_A_VALUE && (pred.u.v = map[pred.u.v]) == SG_NOVAL)
        s = sg__err(ctx, SG_EINTERNAL, "backward of a nested cond: its predicate is of no node");
    for (uint32_t k = 0; k < nops && !s; k++)
        if ((ops[k] = map[g->ids[off + k]]) == SG_NOVAL)
            s = sg__err(ctx, SG_EINTERNAL, "backward of a nested cond: an operand of no node");
    for (uint32_t k = 0; k < nel && !s; k++) {
        uint32_t e = g->ids[g->vals[list].u.list.off + k];
        if (!(s = value_as(g, e, &els[k])) && g->vals[e].kind == SG_V_TENSOR)
            g->vals[els[k]].u.t.requires_grad = g->vals[e].u.t.requires_grad;
    }
    uint32_t l = SG_NOVAL;
    if (!s)
        s = sg__graph_list(g, &l, els, nel);
    if (!s)
        s = sg__graph_cond(g, &pred, tb, fb, ops, nops, l, line);
    if (!s) {
        g->nodes[g->nnodes - 1].flags |= fl;
        map[list] = l;
        for (uint32_t k = 0; k < nel; k++)
            map[g->ids[g->vals[list].u.list.off + k]] = els[k];
    }
    sg_free(ops);
    return s;
}

/* The backward of torch.cond node i (SG_N_COND, made with grad enabled):
 * a cond over the same predicate whose branches are the backwards of the
 * forward's (PyTorch's CondAutogradOp, its create_bw_fn), each a subgraph
 * taking the operands and the gradients of the outputs the backward
 * reached, giving a gradient per operand that needs one; that cond's
 * results are added to the operands'. Which operands take one: with a
 * tensor predicate (CondAutogradOp) every one that requires grad, zeros
 * where the branch that runs reaches none; with a bool over sizes,
 * PyTorch's eager torch.cond calls the branch itself, whose gradient of an
 * operand it does not reach is None: those both branches reach, where
 * one branch alone does the answer is the predicate's (refused). Refused
 * too: a cond binding unbacked sizes. A cond nested in a branch is
 * recorded again in that branch's backward (cond_mapped), whose own
 * backward then makes it one of its own. */
static sg_status cond_backward(bw *b, uint32_t i)
{
    sg__graph *g = b->g;
    sg_ctx *ctx = g->ctx;
    const sg__gnode *nd = &g->nodes[i];
    const sg__garg *a = &g->args[nd->args];
    sg__garg pred = a[0];
    uint32_t br[2] = {a[1].u.v, a[2].u.v}, nops = a[3].u.list.n, ops_off = a[3].u.list.off, line = nd->line;
    uint32_t list = nd->out, nout = g->vals[list].u.list.n, parent = nd->scope;
    bool autograd_op = pred.kind == SG_A_VALUE;
    uint32_t nbinds = nd->nbinds, binds = nd->binds; /* (nd, a: not read once nodes are added) */
    uint32_t *ops = sg__malloc(ctx, ((size_t)nops + nout + 1) * sizeof *ops);
    uint8_t *seed = sg__calloc(ctx, (size_t)nout + 1, 1), *need = sg__calloc(ctx, (size_t)nops + 1, 1);
    uint8_t *reach[2] = {sg__calloc(ctx, (size_t)nops + 1, 1), sg__calloc(ctx, (size_t)nops + 1, 1)};
    uint32_t *outs = sg__malloc(ctx, ((size_t)nops + 1) * sizeof *outs), *elems = NULL, *phs = NULL;
    sg_status s = ops && seed && need && reach[0] && reach[1] && outs ? SG_OK : sg__nomem(ctx);
    uint32_t nin = 0, ng = 0, nneed = 0;
    for (uint32_t k = 0; k < nops && !s; k++) { /* the operands; which need a gradient */
        ops[nin++] = g->ids[ops_off + k];
        need[k] = b->reach[ops[k]] && is_tensor(g, ops[k]) && floating(g, ops[k]);
    }
    for (uint32_t j = 0; j < nout && !s; j++) { /* the gradients of the outputs reached */
        uint32_t e = g->ids[g->vals[list].u.list.off + j];
        if (is_tensor(g, e) && b->gv[e] != SG_NOVAL) {
            seed[j] = 1;
            ops[nin + ng++] = b->gv[e];
        }
    }
    for (int k = 0; k < 2 && !s; k++)
        s = branch_reaches(g, br[k], seed, reach[k]);
    sg_truth taken = SG_UNKNOWN; /* (a bool over sizes the guards decide: the branch every call takes) */
    if (!s && !autograd_op && pred.kind == SG_A_EXPR)
        s = sg_env_known(g->env, &taken, pred.u.e);
    for (uint32_t k = 0; k < nops && !s; k++) {
        if (!need[k])
            continue;
        if (!autograd_op && reach[0][k] != reach[1][k] && taken == SG_UNKNOWN)
            s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: the gradient of torch.cond operand %u (line %u), which "
                        "one branch reaches and the other does not: eager's (the branch called) is None or a "
                        "tensor as the predicate says", k, line);
        /* (where the guards decide the predicate, the branch taken says: its gradient, zeros from the other
           branch, which never runs; None where it does not reach the operand) */
        need[k] = autograd_op || (taken == SG_TRUE ? reach[0][k] : taken == SG_FALSE ? reach[1][k] : reach[0][k]);
        nneed += need[k];
    }
    if (s || !nneed || !ng) {
        sg_free(ops), sg_free(seed), sg_free(need), sg_free(reach[0]), sg_free(reach[1]), sg_free(outs);
        return s;
    }
    uint32_t scope[2];
    if (!(elems = sg__malloc(ctx, (size_t)nneed * sizeof *elems)) ||
        !(phs = sg__malloc(ctx, ((size_t)nops + ng) * sizeof *phs)))
        s = sg__nomem(ctx);
    for (int k = 0; k < 2 && !s; k++) {
        char name[80];
        snprintf(name, sizeof name, "%.60s_backward", g->scopes[br[k]].name);
        uint32_t first = (uint32_t)g->nnodes, nvals = (uint32_t)g->nvals;
        if ((s = sg__graph_scope_open(g, &scope[k], name)))
            break;
        const sg__scope *sc = &g->scopes[br[k]]; /* (after the open, which may move the scopes; no scope is opened
                                                    while it is read below: a nested cond's come with backward_in) */
        uint32_t *map = sg__malloc(ctx, (size_t)nvals * sizeof *map);
        if (!map) {
            s = sg__nomem(ctx);
            break;
        }
        memset(map, 0xff, (size_t)nvals * sizeof *map);
        /* its inputs: the operands as the branch takes them, then the gradients (where the cond binds sizes,
           its outputs' unbacked ones, in the sizes of the branch's outputs: its own, as the branch runs) */
        for (uint32_t p = 0, j = 0; p < nops + ng && !s; p++) {
            uint32_t like = p < nops ? g->nodes[g->scopes[br[k]].phs[p]].out : ops[p];
            const char *nm = p < nops ? g->vals[like].name : "grad";
            while (p >= nops && !seed[j])
                j++;
            if (p >= nops && nbinds)
                s = branch_sized(g, binds, nbinds, line, br[k], g->args[g->nodes[sc->output].args + j].u.v,
                                 g->ids[g->vals[list].u.list.off + j], like, &phs[p]);
            else
                s = value_as(g, like, &phs[p]);
            j += p >= nops;
            if (!s && !(s = sg__graph_placeholder_of(g, phs[p], nm, ops[p]))) {
                if (is_tensor(g, phs[p]))
                    g->vals[phs[p]].u.t.requires_grad = p < nops && need[p];
                if (p < nops)
                    map[like] = phs[p];
            }
        }
        /* the branch's calls again */
        for (uint32_t n = 0; n < sc->output && !s; n++) {
            const sg__gnode *c = &g->nodes[n];
            if (c->scope != br[k] || c->kind == SG_N_PLACEHOLDER)
                continue;
            if (c->kind == SG_N_ASSERT) {
                s = sg__graph_assert(g, c->cond, c->line);
                continue;
            }
            if (c->kind == SG_N_COND) { /* a cond nested in the branch: its backward is this one's part */
                s = cond_mapped(g, n, map);
                continue;
            }
            s = record_mapped(g, n, map, true); /* (no_grad, .data, hidden writes: as the branch had them) */
        }
        /* its backward: from the reached outputs, with their gradients, to the operands that need one */
        uint32_t bo[64], bs[64], wanted[64], got[64], nbo = 0, nw = 0;
        const sg__gnode *o = &g->nodes[sc->output];
        if (!s && (ng > 64 || nops > 64))
            s = sg__err(ctx, SG_ELIMIT, "the derivative of a torch.cond of more than 64 operands or outputs");
        for (uint32_t j = 0, q = 0; j < nout && !s; j++)
            if (seed[j]) {
                uint32_t v = map[g->args[o->args + j].u.v];
                if (is_tensor(g, v)) {
                    bo[nbo] = v;
                    bs[nbo++] = phs[nops + q];
                }
                q++;
            }
        for (uint32_t p = 0; p < nops && !s; p++)
            if (need[p])
                wanted[nw++] = phs[p];
        if (!s) {
            sg__backward sp = {.outs = bo, .seeds = bs, .nout = nbo, .ins = wanted, .nin = nw, .grads = got,
                               .line = b->line};
            s = backward_in(g, &sp, scope[k], first);
            sg_free(sp.writes);
        }
        /* a gradient per operand that needs one (zeros where none reached it), contiguous */
        sg__dctx d = {.g = g, .node = i, .s = sg__opreg_op(g->reg, SG_OP_clone), .list = -1, .line = b->line};
        for (uint32_t p = 0, q = 0; p < nw && !s; p++) {
            while (!need[q])
                q++;
            uint32_t x = got[p] != SG_NOVAL ? got[p] : sg__deriv_zeros(&d, phs[q]);
            if (!autograd_op && (got[p] != SG_NOVAL) != (reach[k][q] != 0) && !d.st)
                d.st = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: the gradient of torch.cond operand %u (line %u): "
                               "its branches' derivative formulas reach it otherwise than their flow says", q, line);
            outs[p] = d.st ? SG_NOVAL : sg__deriv_contiguous(&d, x);
            s = d.st;
            q++;
        }
        if (!s)
            s = sg__graph_output(g, outs, nw);
        g->cur = parent;
        sg_free(map);
        if (!s && k == 0) /* the cond's results: as the true branch's gradients are laid out */
            for (uint32_t p = 0; p < nw && !s; p++)
                s = value_as(g, outs[p], &elems[p]);
    }
    uint32_t glist = SG_NOVAL;
    if (!s)
        s = sg__graph_list(g, &glist, elems, nneed);
    if (!s)
        s = sg__graph_cond(g, &pred, scope[0], scope[1], ops, nops + ng, glist, line);
    for (uint32_t p = 0, q = 0; p < nneed && !s; p++, q++) {
        while (!need[q])
            q++;
        s = accumulate(b, ops[q], elems[p]);
    }
    sg_free(ops), sg_free(seed), sg_free(need), sg_free(reach[0]), sg_free(reach[1]), sg_free(outs);
    sg_free(elems), sg_free(phs);
    return s;
}

sg_status sg__graph_requires_grad(sg__graph *g, uint8_t **out)
{
    *out = NULL;
    size_t n = g->nvals ? g->nvals : 1;
    bw b = {.g = g, .nvals = (uint32_t)g->nvals, .rg_only = true};
    b.rg = sg__calloc(g->ctx, n, 1);
    b.reach = sg__calloc(g->ctx, n, 1);
    if (!b.rg || !b.reach) {
        sg_free(b.rg);
        sg_free(b.reach);
        return sg__nomem(g->ctx);
    }
    sg__backward none = {0};
    forward_flags(&b, &none, g->nnodes);
    sg_free(b.reach);
    *out = b.rg;
    return SG_OK;
}

/* The backward of the nodes of scope (from node from on): sg__graph_backward's. */
static sg_status backward_in(sg__graph *g, sg__backward *spec, uint32_t scope, uint32_t from)
{
    spec->writes = NULL;
    spec->nwrites = 0;
    bw b = {.g = g, .nvals = (uint32_t)g->nvals, .line = spec->line, .spec = spec, .scope = scope, .from = from};
    size_t nnodes = spec->nnodes && spec->nnodes < g->nnodes ? spec->nnodes : g->nnodes, n = b.nvals ? b.nvals : 1;
    b.rg = sg__calloc(g->ctx, n, 1);
    b.reach = sg__calloc(g->ctx, n, 1);
    b.gv = sg__malloc(g->ctx, n * sizeof *b.gv);
    sg_status s = b.rg && b.reach && b.gv ? SG_OK : sg__nomem(g->ctx);
    for (size_t k = 0; k < spec->nout && !s; k++)
        if (spec->outs[k] >= b.nvals || !is_tensor(g, spec->seeds[k]) || !same_sizes(g, spec->outs[k], spec->seeds[k]))
            s = sg__err(g->ctx, SG_EINVAL, "backward: seed %zu is no tensor of its output's sizes", k);
    for (size_t k = 0; k < spec->nin && !s; k++)
        if (spec->ins[k] >= b.nvals)
            s = sg__err(g->ctx, SG_EINVAL, "backward: wanted value %zu is not of the graph", k);
    if (!s) {
        for (uint32_t v = 0; v < b.nvals; v++)
            b.gv[v] = SG_NOVAL;
        forward_flags(&b, spec, nnodes);
    }
    for (size_t k = 0; k < spec->nout && !s; k++)
        if (b.reach[spec->outs[k]])
            s = accumulate(&b, spec->outs[k], spec->seeds[k]);
    for (size_t i = nnodes; i-- > from && !s;) {
        const sg__gnode *nd = &g->nodes[i];
        if (nd->scope == scope && nd->kind == SG_N_FUNCTION) {
            const sg__garg *a = &g->args[nd->args];
            bool reached = false;
            for (uint32_t j = 0; j < a[1].u.list.n; j++)
                reached |= b.gv[g->ids[a[1].u.list.off + j]] != SG_NOVAL;
            if (reached)
                s = function_backward(&b, (uint32_t)i);
            continue;
        }
        if (nd->scope != scope || (nd->kind != SG_N_CALL && nd->kind != SG_N_COND) || nd->out == SG_NOVAL)
            continue;
        uint32_t o = nd->out;
        bool reached = b.gv[o] != SG_NOVAL;
        for (uint32_t j = 0; g->vals[o].kind == SG_V_LIST && j < g->vals[o].u.list.n; j++) /* unbind, a cond's */
            reached |= b.gv[g->ids[g->vals[o].u.list.off + j]] != SG_NOVAL;
        if (!reached)
            continue;
        if (nd->kind == SG_N_COND) {
            s = (nd->flags & SG_NODE_NO_GRAD) ? SG_OK : cond_backward(&b, (uint32_t)i);
        } else if (nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)) { /* a hidden write: the gradient passes through */
            uint32_t self = first_tensor(g, nd);
            if ((nd->flags & SG_NODE_WRITE) && self != SG_NOVAL && b.reach[self] && b.gv[o] != SG_NOVAL)
                s = pass_hidden(&b, (uint32_t)i, self, b.gv[o]);
        } else if (any_arg(&b, nd, b.reach) && (nd->flags & SG_NODE_STRIDED_BASE)) {
            s = sg__err(g->ctx, SG_EUNSUPPORTED, "unsupported: the gradient of as_strided of a view (line %u): "
                        "PyTorch's goes through the view's own history (its elements only, a custom Function "
                        "between it and its base)", nd->line);
        } else if (any_arg(&b, nd, b.reach)) {
            s = node_backward(&b, (uint32_t)i);
        }
    }
    for (size_t k = 0; k < spec->nin && !s; k++)
        spec->grads[k] = b.gv[spec->ins[k]];
    if (s) {
        sg_free(spec->writes);
        spec->writes = NULL;
        spec->nwrites = 0;
    }
    sg_free(b.rg);
    sg_free(b.reach);
    sg_free(b.gv);
    sg_free(b.first);
    sg_free(b.checked);
    return s;
}

sg_status sg__graph_backward(sg__graph *g, sg__backward *spec)
{
    if (!g || !spec || (spec->nout && (!spec->outs || !spec->seeds)) || (spec->nin && (!spec->ins || !spec->grads)))
        return g ? sg__err(g->ctx, SG_EINVAL, "backward: NULL argument") : SG_EINVAL;
    if (!g->reg)
        return sg__err(g->ctx, SG_EINVAL, "backward: a graph without its registry");
    return backward_in(g, spec, 0, 0);
}
