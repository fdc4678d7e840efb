/* The min-cut partition of a joint graph (aot_private.h): PyTorch 1.13's
 * min_cut_rematerialization_partition (functorch/_src/partitioners.py) with
 * its default compiler ("nvfuser"), over our joint graph. In order:
 *
 * - common subexpressions merged (its fx_graph_cse): a call whose operator
 *   and arguments (values as merged) equal an earlier call's stands for it;
 * - dead code dropped: what neither the joint's output nor an effect needs;
 * - the nodes classified: required in the backward (a tangent and every
 *   node that reads one, transitively), required in the forward (what the
 *   forward's outputs need, from the primals), the rest unclaimed;
 * - a network: source -> a primal's in; source -> the in of a forward node
 *   whose recomputation is banned (an operator off 1.13's recomputable list,
 *   or one whose result is 4x smaller than its tensor arguments); a node's
 *   in -> its out, weighted by its bytes at the hints times 1.1^d (d its
 *   distance from the backward, 1 to 100), twice that where every user can
 *   be fused into it (not materialized); out -> each user's in; the in of a
 *   node required in the backward -> sink. Infinite edges are SG__FLOW_INF;
 * - the saved values: the nodes whose in the minimum cut's source side
 *   holds and whose out it does not (mincut.c gives the side networkx
 *   gives: the nodes that do not reach the sink in the residual network).
 *
 * Writes (1.13's joint has none; ours has the forward's input mutations
 * kept in the graph and the backward's writes into buffers it made): a
 * tensor of a written storage is never saved (the backward would read it
 * written) and a forward node that reads one is computed in the forward,
 * as PyTorch 2's MUST_SAVE of a mutated input's readers; no node that
 * reads or gives one is merged.
 *
 * Where ours differs from 1.13's graph, and why:
 * - 1.13's joint reads a result its derivative saves (exp's, tanh's)
 *   through detach nodes, which make that result materialized; ours has no
 *   detach, so such a node counts as materialized where the backward part
 *   reads it (result_saved);
 * - 1.13 has no symbolic ints in its joint: an int or float value here
 *   weighs 8 bytes (PyTorch 2's sym_node_size), so no cut is unbounded;
 * - a call that gives a list (split, unbind) is one node whose weight is
 *   its tensors' (1.13 cuts its getitem nodes one by one);
 * - our runtime runs the functional forward as it is: an unclaimed node of
 *   the backward part that the cut saves (1.13 computes it in its forward
 *   graph, amax's eq mask) is computed by a tail run right after the
 *   forward (joint.c), from the forward's values. */
#include <math.h>
#include <string.h>

#include "aot/aot_private.h"
#include "graph/derivatives.h"
#include "graph/ops.h"

/* 1.13's recomputable_ops (its default compiler's), by overload packet, in
 * strcmp order (listed searches by halves). */
static const char *const recomputable[] = {
    "__and__", "__lshift__", "__or__", "__rshift__", "__xor__", "_grad_sum_to_size", "_softmax",
    "_softmax_backward_data", "abs", "acos", "add", "addcmul", "alias", "amax", "asin", "atan", "atan2", "atanh",
    "bitwise_not", "ceil", "clamp", "cos", "cosh", "div", "eq", "erf", "erfc", "exp", "expm1", "floor", "fmod",
    "frac", "ge", "gelu", "gelu_backward", "gt", "le", "lerp", "lgamma", "log", "log10", "log1p", "log2", "lt",
    "max", "mean", "min", "mul", "ne", "neg", "pow", "reciprocal", "relu", "remainder", "round", "rsqrt", "sigmoid",
    "silu", "sin", "sinh", "softmax", "softplus", "sqrt", "squeeze", "sub", "sum", "sum_to_size", "tan", "tanh",
    "threshold", "threshold_backward", "to", "trunc", "type_as", "unsqueeze", "where"};
/* 1.13's random_ops, fusible too (none of them is in the operator table
 * today), in strcmp order. */
static const char *const random_ops[] = {"native_dropout", "rand_like", "randn_like"};

/* Is name in list (n names in strcmp order)? By halves: classify asks it
 * of every call of the joint. */
static bool listed(const char *name, const char *const *list, size_t n)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, list[mid]);
        if (!c)
            return true;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return false;
}

typedef struct part {
    const sg__graph *g;
    uint32_t first;      /* the first node of the backward part */
    uint32_t ngrad;      /* the joint's output: ngrad gradients, then the forward's outputs */
    uint32_t *rep;       /* per value: the value it stands for after merging (itself if none) */
    uint8_t *live;       /* per node */
    uint8_t *rbw, *rfw;  /* per node: required in the backward, in the forward */
    uint8_t *recomp;     /* per node: its operator is recomputable (1), fusible (2) */
    uint32_t *dist;      /* per node: its distance from the backward */
    uint32_t *ustart;    /* per node: its users, users[ustart[i] .. ustart[i + 1]) */
    uint32_t *users;
    uint32_t *pbeg, *pcnt; /* per live node: the nodes that give what it reads (a value, each of a list's; as
                              merged), prods[pbeg[i] .. pbeg[i] + pcnt[i]) */
    uint32_t *prods;
    uint8_t *is_out;     /* per node: the joint's output reads it (1.13's output node is a user) */
    uint8_t *written;    /* per storage: a call writes it (the forward's input mutations, the
                            backward's writes into buffers it made) */
    bool any_written;    /* some storage is */
    uint8_t *bwc;        /* per node: a backward's write of an input (sg__aot_bw_copy) */
    bool any_bwc;        /* some node is */
    double *bytes;       /* per value: its tensor's bytes at the hints once asked (tensor_bytes), or -1 */
    uint8_t *ops;        /* per operator (SG_OP_*): 1 + its lists (OP_*) once asked (op_lists), or 0 */
    struct {             /* the last sizes whose hints were asked (tensor_bytes), by the expression's address */
        const sg_expr *e;
        int64_t x;
    } hints[64];
    double grow[101];    /* 1.1^d once asked (weight), or 0 */
} part;

enum { OP_RECOMPUTABLE = 1, OP_RANDOM = 2 };

/* Which of 1.13's lists operator s's overload packet is on (OP_*): asked
 * of every call, searched once per operator. */
static inline unsigned op_lists(part *P, const sg__schema *s)
{
    if (P->ops && s->op < SG_OP_COUNT && P->ops[s->op])
        return P->ops[s->op] - 1u;
    unsigned l = (listed(s->name, recomputable, sizeof recomputable / sizeof *recomputable) ? OP_RECOMPUTABLE : 0) |
                 (listed(s->name, random_ops, sizeof random_ops / sizeof *random_ops) ? OP_RANDOM : 0);
    if (P->ops && s->op < SG_OP_COUNT)
        P->ops[s->op] = (uint8_t)(1 + l);
    return l;
}

static uint32_t producer(const part *P, uint32_t v)
{
    return P->g->vals[P->rep[v]].node;
}

/* Calls f on every value node nd reads (a value, or each of a list's). */
#define FOR_ARG_VALUES(P, nd, v, body)                                                                            \
    for (uint32_t k_ = 0; k_ < (nd)->nargs; k_++) {                                                               \
        const sg__garg *a_ = &(P)->g->args[(nd)->args + k_];                                                       \
        uint32_t n_ = a_->kind == SG_A_VALUE ? 1 : a_->kind == SG_A_VALUES ? a_->u.list.n : 0;                    \
        for (uint32_t j_ = 0; j_ < n_; j_++) {                                                                    \
            uint32_t v = (P)->rep[a_->kind == SG_A_VALUE ? a_->u.v : (P)->g->ids[a_->u.list.off + j_]];             \
            body                                                                                                  \
        }                                                                                                         \
    }

static bool tensor_in_written(const part *P, uint32_t v)
{
    if (!P->any_written)
        return false;
    const sg__gval *x = &P->g->vals[v];
    return x->kind == SG_V_TENSOR && x->u.t.storage < P->g->nstorages && P->written[x->u.t.storage];
}

/* Does node nd read or give a tensor of a storage that a call writes? */
static bool touches_written(const part *P, const sg__gnode *nd)
{
    if (!P->any_written)
        return false;
    if (nd->out != SG_NOVAL && tensor_in_written(P, nd->out))
        return true;
    FOR_ARG_VALUES(P, nd, v, {
        if (tensor_in_written(P, v))
            return true;
    })
    return false;
}

/* written: the storages of the arguments the calls write; bwc: the
 * backward's writes of inputs. */
static void find_written(part *P)
{
    const sg__graph *g = P->g;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const sg__gnode *nd = &g->nodes[i];
        if (!sg__aot_effect(nd) || nd->kind != SG_N_CALL)
            continue;
        if (sg__aot_bw_copy(g, P->first, i)) { /* (it comes after every read of what it writes) */
            P->bwc[i] = 1, P->any_bwc = true;
            continue;
        }
        for (uint32_t k = 0; k < nd->nargs && k < 32; k++) {
            const sg__garg *a = &g->args[nd->args + k];
            if (a->kind == SG_A_VALUE && g->vals[a->u.v].kind == SG_V_TENSOR &&
                g->vals[a->u.v].u.t.storage < g->nstorages &&
                ((nd->schema->written >> k) & 1 || (nd->schema->flags & SG_OPF_OUT && a->kw)))
                P->written[g->vals[a->u.v].u.t.storage] = 1, P->any_written = true;
        }
    }
}

/* ---- common subexpressions ---- */

/* A call that may stand for an equal later one: no effect, no unbacked
 * symbol bound, nothing random, and no tensor that a write may change
 * between the two (a buffer the backward fills in place). */
static bool cse_candidate(part *P, const sg__gnode *nd)
{
    return nd->kind == SG_N_CALL && nd->out != SG_NOVAL && !sg__aot_effect(nd) && !(nd->flags & SG_NODE_WRITE) &&
           !nd->nbinds && !(op_lists(P, nd->schema) & OP_RANDOM) && !touches_written(P, nd);
}

static uint64_t mix(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

static uint64_t node_hash(const part *P, const sg__gnode *nd)
{
    const sg__graph *g = P->g;
    uint64_t h = mix(0, (uintptr_t)nd->schema);
    for (uint32_t k = 0; k < nd->nargs; k++) {
        const sg__garg *a = &g->args[nd->args + k];
        h = mix(h, a->kind);
        switch (a->kind) {
        case SG_A_VALUE:
            h = mix(h, P->rep[a->u.v]);
            break;
        case SG_A_EXPR:
            h = mix(h, (uintptr_t)a->u.e);
            break;
        case SG_A_EXPRS:
        case SG_A_VALUES:
            h = mix(h, a->u.list.n);
            for (uint32_t j = 0; j < a->u.list.n; j++)
                h = mix(h, a->kind == SG_A_EXPRS ? (uintptr_t)g->exprs[a->u.list.off + j]
                                                 : P->rep[g->ids[a->u.list.off + j]]);
            break;
        default: /* floats, bools, dtypes: compared in full by same_call */
            break;
        }
    }
    return h;
}

static bool same_kw(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* Do calls x and y compute the same (1.13 compares target, args and kwargs)? */
static bool same_call(const part *P, const sg__gnode *x, const sg__gnode *y)
{
    const sg__graph *g = P->g;
    if (x->schema != y->schema || x->nargs != y->nargs)
        return false;
    for (uint32_t k = 0; k < x->nargs; k++) {
        const sg__garg *a = &g->args[x->args + k], *b = &g->args[y->args + k];
        if (a->kind != b->kind || !same_kw(a->kw, b->kw))
            return false;
        switch (a->kind) {
        case SG_A_VALUE:
            if (P->rep[a->u.v] != P->rep[b->u.v])
                return false;
            break;
        case SG_A_EXPR:
            if (a->u.e != b->u.e)
                return false;
            break;
        case SG_A_FLOAT:
            if (!(a->u.f == b->u.f))
                return false;
            break;
        case SG_A_BOOL:
            if (a->u.b != b->u.b)
                return false;
            break;
        case SG_A_DTYPE:
        case SG_A_MEMFMT:
            if (a->u.dtype != b->u.dtype)
                return false;
            break;
        case SG_A_EXPRS:
        case SG_A_VALUES:
            if (a->u.list.n != b->u.list.n)
                return false;
            for (uint32_t j = 0; j < a->u.list.n; j++) {
                uint32_t p = a->u.list.off + j, q = b->u.list.off + j;
                if (a->kind == SG_A_EXPRS ? g->exprs[p] != g->exprs[q] : P->rep[g->ids[p]] != P->rep[g->ids[q]])
                    return false;
            }
            break;
        case SG_A_NONE:
            break;
        default: /* a scope: never merged */
            return false;
        }
    }
    return true;
}

/* rep: each value of a call that an earlier call computes stands for that
 * call's (its list's elements for its elements). An open-addressed table of
 * node indices, twice the nodes. */
static sg_status merge_common(part *P)
{
    const sg__graph *g = P->g;
    sg_ctx *ctx = g->ctx;
    for (size_t v = 0; v < g->nvals; v++)
        P->rep[v] = (uint32_t)v;
    size_t cap = 16;
    while (cap < 2 * g->nnodes)
        cap *= 2;
    uint32_t *tab = sg__malloc(ctx, cap * sizeof *tab);
    if (!tab)
        return sg__nomem(ctx);
    for (size_t i = 0; i < cap; i++)
        tab[i] = SG_NOVAL;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const sg__gnode *nd = &g->nodes[i];
        if (nd->scope != 0 || !cse_candidate(P, nd)) /* (a cond's branches: their own graphs) */
            continue;
        size_t h = (size_t)node_hash(P, nd) & (cap - 1);
        while (tab[h] != SG_NOVAL && !same_call(P, &g->nodes[tab[h]], nd))
            h = (h + 1) & (cap - 1);
        if (tab[h] == SG_NOVAL) {
            tab[h] = i;
            continue;
        }
        const sg__gval *mine = &g->vals[nd->out], *theirs = &g->vals[g->nodes[tab[h]].out];
        P->rep[nd->out] = g->nodes[tab[h]].out;
        if (mine->kind == SG_V_LIST && theirs->kind == SG_V_LIST && mine->u.list.n == theirs->u.list.n)
            for (uint32_t j = 0; j < mine->u.list.n; j++)
                P->rep[g->ids[mine->u.list.off + j]] = g->ids[theirs->u.list.off + j];
    }
    sg_free(tab);
    return SG_OK;
}

/* ---- classification ---- */

/* live: the output's values and the effects, and what they read; users. */
static sg_status liveness(part *P)
{
    const sg__graph *g = P->g;
    sg_ctx *ctx = g->ctx;
    const sg__gnode *on = &g->nodes[g->scopes[0].output];
    for (uint32_t k = 0; k < on->nargs; k++)
        if (g->args[on->args + k].kind == SG_A_VALUE)
            P->live[producer(P, g->args[on->args + k].u.v)] = P->is_out[producer(P, g->args[on->args + k].u.v)] = 1;
    /* room for every value a node reads: each node's arguments are a run of args of its own (a list of
       values among them counting its elements, which another list may share) */
    size_t nuse = 0, cap = 1;
    for (size_t k = 0; k < g->nargs; k++)
        cap += g->args[k].kind == SG_A_VALUE ? 1 : g->args[k].kind == SG_A_VALUES ? g->args[k].u.list.n : 0;
    if (!(P->prods = sg__malloc(ctx, cap * sizeof *P->prods)))
        return sg__nomem(ctx);
    memset(P->pcnt, 0, g->nnodes * sizeof *P->pcnt);
    for (uint32_t i = (uint32_t)g->nnodes; i-- > 0;) {
        const sg__gnode *nd = &g->nodes[i];
        if (nd->kind == SG_N_OUTPUT || nd->scope != 0 || (nd->out != SG_NOVAL && P->rep[nd->out] != nd->out))
            continue; /* (a merged call: its users read the one it stands for; a cond's branch: the cond
                         node stands for it, a forward node never recomputed) */
        if (sg__aot_effect(nd))
            P->live[i] = 1;
        if (!P->live[i])
            continue; /* (its users all came before: live as it will stay) */
        P->pbeg[i] = (uint32_t)nuse;
        FOR_ARG_VALUES(P, nd, v, {
            uint32_t p = producer(P, v);
            P->live[p] = 1;
            P->prods[nuse++] = p;
        })
        P->pcnt[i] = (uint32_t)nuse - P->pbeg[i];
    }
    P->users = sg__malloc(ctx, (nuse ? nuse : 1) * sizeof *P->users);
    if (!P->users)
        return sg__nomem(ctx);
    memset(P->ustart, 0, (g->nnodes + 1) * sizeof *P->ustart);
    for (uint32_t i = 0; i < g->nnodes; i++)
        for (uint32_t k = 0; k < P->pcnt[i]; k++)
            P->ustart[P->prods[P->pbeg[i] + k] + 1]++;
    for (uint32_t i = 0; i < g->nnodes; i++)
        P->ustart[i + 1] += P->ustart[i];
    uint32_t *fill = sg__malloc(ctx, (g->nnodes ? g->nnodes : 1) * sizeof *fill);
    if (!fill)
        return sg__nomem(ctx);
    memcpy(fill, P->ustart, g->nnodes * sizeof *fill);
    for (uint32_t i = 0; i < g->nnodes; i++)
        for (uint32_t k = 0; k < P->pcnt[i]; k++)
            P->users[fill[P->prods[P->pbeg[i] + k]]++] = i;
    sg_free(fill);
    return SG_OK;
}

/* rbw, rfw, dist, recomp. */
static void classify(part *P)
{
    const sg__graph *g = P->g;
    const sg__gnode *on = &g->nodes[g->scopes[0].output];
    for (uint32_t k = 0; k < P->ngrad && k < on->nargs; k++) { /* the gradients: the backward graph's outputs,
                                                                   even one no tangent reaches (of an empty
                                                                   tensor: zeros) */
        uint32_t p = g->args[on->args + k].kind == SG_A_VALUE ? producer(P, g->args[on->args + k].u.v) : SG_NOVAL;
        if (p != SG_NOVAL && p >= P->first && P->live[p])
            P->rbw[p] = 1;
    }
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const sg__gnode *nd = &g->nodes[i];
        if (!P->live[i] || nd->kind == SG_N_OUTPUT)
            continue;
        if ((nd->kind == SG_N_PLACEHOLDER && i >= P->first) || P->bwc[i] || (nd->kind == SG_N_COND && i >= P->first))
            P->rbw[i] = 1; /* a tangent, a backward's write of an input (must_be_in_backward); a cond of the
                              backward part (one no tangent reaches: an empty view's zeros its gradient): the
                              tail that runs after the forward records calls only */
        for (uint32_t k = 0; k < P->pcnt[i] && !P->rbw[i]; k++)
            P->rbw[i] = P->rbw[P->prods[P->pbeg[i] + k]];
        if (nd->kind == SG_N_CALL) {
            unsigned l = op_lists(P, nd->schema);
            P->recomp[i] = l & OP_RECOMPUTABLE ? 3 : l & OP_RANDOM ? 2 : 0;
        }
    }
    /* required in the forward: the primals, what the forward's outputs and effects read */
    for (uint32_t k = P->ngrad; k < on->nargs; k++)
        if (g->args[on->args + k].kind == SG_A_VALUE)
            P->rfw[producer(P, g->args[on->args + k].u.v)] = 1;
    for (uint32_t i = P->first; i-- > 0;) {
        const sg__gnode *nd = &g->nodes[i];
        if (!P->live[i] || nd->kind == SG_N_OUTPUT)
            continue;
        if (nd->kind == SG_N_PLACEHOLDER || sg__aot_effect(nd))
            P->rfw[i] = 1;
        for (uint32_t k = 0; P->rfw[i] && k < P->pcnt[i]; k++)
            P->rfw[P->prods[P->pbeg[i] + k]] = 1;
    }
    for (uint32_t i = (uint32_t)g->nnodes; i-- > 0;) {
        P->dist[i] = 0;
        if (!P->live[i] || !P->rfw[i])
            continue;
        uint32_t d = P->is_out[i] ? 1 : 1000000000u; /* (1.13's output node: a user at distance 0) */
        for (uint32_t u = P->ustart[i]; u < P->ustart[i + 1]; u++)
            if (P->dist[P->users[u]] + 1 < d)
                d = P->dist[P->users[u]] + 1;
        P->dist[i] = d;
    }
}

/* ---- weights ---- */

/* A tensor value's bytes at the hints (1.13's _size_of); an unhinted size
 * counts as 8192 (PyTorch 2's size-hint fallback). */
static double tensor_bytes(part *P, uint32_t v)
{
    const sg__graph *g = P->g;
    if (P->bytes[v] >= 0)
        return P->bytes[v];
    const sg__fake_tensor *t = &g->vals[v].u.t;
    double n = 1;
    for (uint32_t d = 0; d < t->ndim; d++) {
        const sg_expr *h, *e = sg__graph_size(g, v, d);
        size_t c = ((uintptr_t)e >> 4) % (sizeof P->hints / sizeof *P->hints);
        int64_t x;
        if (P->hints[c].e == e) { /* (the environment does not change during the partition) */
            x = P->hints[c].x;
        } else if (sg_env_hint(g->env, &h, e) || !sg_expr_get_si(h, &x)) {
            x = 8192;
        } else {
            P->hints[c].e = e;
            P->hints[c].x = x;
        }
        n *= (double)x;
    }
    return P->bytes[v] = n * (t->dtype == SG_FLOAT32 ? 4 : t->dtype == SG_BOOL ? 1 : 8);
}

/* The bytes of what node i gives (tensors; a list's tensors; 8 for a
 * scalar), or -1 for nothing to save. */
static double node_bytes(part *P, uint32_t i)
{
    const sg__graph *g = P->g;
    uint32_t v = g->nodes[i].out;
    if (v == SG_NOVAL)
        return -1;
    const sg__gval *x = &g->vals[v];
    if (x->kind == SG_V_TENSOR)
        return tensor_bytes(P, v);
    if (x->kind == SG_V_LIST) {
        double b = 0;
        for (uint32_t j = 0; j < x->u.list.n; j++) {
            uint32_t e = g->ids[x->u.list.off + j];
            b += g->vals[e].kind == SG_V_TENSOR ? tensor_bytes(P, e) : 8;
        }
        return b;
    }
    return x->kind == SG_V_NONE ? -1 : 8;
}

/* 1.13's ban_recomputation, asked of a node required in the forward. */
static bool banned(part *P, uint32_t i)
{
    const sg__graph *g = P->g;
    const sg__gnode *nd = &g->nodes[i];
    if (nd->kind != SG_N_CALL)
        return nd->kind != SG_N_PLACEHOLDER; /* (a cond, an assert: never recomputed) */
    if (!(P->recomp[i] & 1))
        return true;
    if (g->vals[nd->out].kind != SG_V_TENSOR)
        return false;
    double in = 0; /* the tensors passed as arguments themselves (not in lists), as node.args has them */
    for (uint32_t k = 0; k < nd->nargs; k++) {
        const sg__garg *a = &g->args[nd->args + k];
        if (a->kind == SG_A_VALUE && g->vals[P->rep[a->u.v]].kind == SG_V_TENSOR)
            in += tensor_bytes(P, P->rep[a->u.v]);
    }
    return tensor_bytes(P, nd->out) * 4 < in;
}

/* 1.13's joint reads a result its derivative saves through a detach (the
 * saved variable unpacked), a user no op fuses into: the node is
 * materialized. Ours reads it directly, from the backward part. */
static bool result_saved(const part *P, uint32_t i)
{
    const sg__gnode *nd = &P->g->nodes[i];
    const sg__opinfo *info = nd->kind == SG_N_CALL ? sg__op_info(nd->schema->op) : NULL;
    if (!info || !info->deriv || !(info->deriv->saves & SG_DSAVE_RESULT))
        return false;
    for (uint32_t u = P->ustart[i]; u < P->ustart[i + 1]; u++)
        if (P->users[u] >= P->first)
            return true;
    return false;
}

static bool materialized(const part *P, uint32_t i)
{
    if (P->g->nodes[i].kind == SG_N_PLACEHOLDER || P->is_out[i] || result_saved(P, i))
        return true;
    for (uint32_t u = P->ustart[i]; u < P->ustart[i + 1]; u++)
        if (!(P->recomp[i] & 2) || !(P->recomp[P->users[u]] & 2))
            return true;
    return false;
}

static int64_t weight(part *P, uint32_t i)
{
    uint32_t v = P->g->nodes[i].out;
    if (v != SG_NOVAL && tensor_in_written(P, v))
        return SG__FLOW_INF;
    double b = node_bytes(P, i);
    if (b < 0)
        return SG__FLOW_INF;
    uint32_t d = P->dist[i] > 100 ? 100 : P->dist[i] < 1 ? 1 : P->dist[i];
    if (!P->grow[d])
        P->grow[d] = pow(1.1, (double)d);
    double w = floor(b * P->grow[d]); /* int() of 1.13's float */
    if (!materialized(P, i))
        w *= 2;
    return w >= (double)SG__FLOW_INF ? SG__FLOW_INF - 1 : (int64_t)w;
}

/* ---- the cut ---- */

/* Is user u of node i a backward's write of an input (sg__aot_bw_copy)
 * into i's value, which it reads for no value? */
static bool bw_copy_target(const part *P, uint32_t i, uint32_t u)
{
    const sg__graph *g = P->g;
    return P->bwc[u] && P->rep[g->args[g->nodes[u].args].u.v] == P->rep[g->nodes[i].out] &&
           g->nodes[i].kind == SG_N_PLACEHOLDER;
}

/* The network, its minimum cut, and the values it saves. */
static sg_status cut(part *P, uint8_t *saved)
{
    const sg__graph *g = P->g;
    sg_ctx *ctx = g->ctx;
    uint32_t n = (uint32_t)g->nnodes, m = 0;
    /* A node required in the backward is the sink's side of every finite cut (its in -> sink is
       infinite): it is the sink itself here, its users' edges going there, which leaves the finite cuts,
       their capacities and the sides of the other nodes as they are, and the network smaller. The
       others, in order, are numbered 0 .. m - 1 (id): in 2 id, out 2 id + 1. */
    uint32_t *id = sg__malloc(ctx, (n ? n : 1) * sizeof *id);
    if (!id)
        return sg__nomem(ctx);
    for (uint32_t i = 0; i < n; i++)
        id[i] = !P->live[i] || g->nodes[i].kind == SG_N_OUTPUT || P->rbw[i] ? SG_NOVAL : m++;
    uint32_t src = 2 * m, sink = 2 * m + 1;
    sg__flow *f;
    sg_status s = sg__flow_new(ctx, 2 * m + 2, &f);
    if (s) {
        sg_free(id);
        return s;
    }
    sg__flow_reserve(f, 3 * (size_t)m + P->ustart[n]); /* (per node: at most 3 edges and one per user) */
    uint8_t *side = NULL;
    for (uint32_t i = 0; i < n && !s; i++) {
        const sg__gnode *nd = &g->nodes[i];
        uint32_t in = 2 * id[i];
        if (id[i] == SG_NOVAL)
            continue;
        if (nd->kind == SG_N_PLACEHOLDER && i < P->first)
            s = sg__flow_edge(f, src, in, SG__FLOW_INF);
        if (!s && P->rfw[i] && (banned(P, i) || (i < P->first && touches_written(P, nd))))
            s = sg__flow_edge(f, src, in, SG__FLOW_INF);
        if (!s)
            s = sg__flow_edge(f, in, in + 1, weight(P, i));
        bool to_sink = false; /* (one infinite edge to the sink is as many) */
        for (uint32_t u = P->ustart[i]; u < P->ustart[i + 1] && !s; u++) {
            uint32_t w = P->users[u];
            if (bw_copy_target(P, i, w) && tensor_in_written(P, nd->out))
                continue;
            if (!bw_copy_target(P, i, w) && !P->rbw[w])
                s = sg__flow_edge(f, in + 1, 2 * id[w], SG__FLOW_INF);
            else if (!to_sink) /* (a backward's write of it: saved whatever the cut, the backward may read it too) */
                s = sg__flow_edge(f, in + 1, sink, SG__FLOW_INF), to_sink = true;
        }
    }
    int64_t value;
    if (!s && !(side = sg__malloc(ctx, 2 * (size_t)m + 2)))
        s = sg__nomem(ctx);
    if (!s)
        s = sg__flow_mincut(f, src, sink, &value, side);
    for (uint32_t i = 0; i < n && !s; i++) {
        if (id[i] == SG_NOVAL || !side[2 * id[i]] || side[2 * id[i] + 1])
            continue;
        const sg__gval *x = &g->vals[g->nodes[i].out];
        if (x->kind == SG_V_LIST)
            for (uint32_t j = 0; j < x->u.list.n; j++)
                saved[g->ids[x->u.list.off + j]] = 1;
        else
            saved[g->nodes[i].out] = 1;
    }
    for (uint32_t i = 0; i < n && !s && P->any_bwc; i++) /* what a backward's write writes: given to the backward
                                                              as it is */
        for (uint32_t u = P->ustart[i]; P->live[i] && u < P->ustart[i + 1]; u++)
            if (bw_copy_target(P, i, P->users[u]))
                saved[g->nodes[i].out] = 1;
    sg_free(side);
    sg_free(id);
    sg__flow_free(f);
    return s;
}

sg_status sg__aot_min_cut(const sg__graph *g, uint32_t first, uint32_t ngrad, uint32_t *rep, uint8_t *saved)
{
    sg_ctx *ctx = g->ctx;
    size_t n = g->nnodes ? g->nnodes : 1;
    part P = {.g = g, .first = first, .ngrad = ngrad, .rep = rep};
    P.live = sg__calloc(ctx, n, 1);
    P.rbw = sg__calloc(ctx, n, 1);
    P.rfw = sg__calloc(ctx, n, 1);
    P.recomp = sg__calloc(ctx, n, 1);
    P.is_out = sg__calloc(ctx, n, 1);
    P.bwc = sg__calloc(ctx, n, 1);
    P.written = sg__calloc(ctx, g->nstorages ? g->nstorages : 1, 1);
    P.bytes = sg__malloc(ctx, (g->nvals ? g->nvals : 1) * sizeof *P.bytes);
    for (size_t v = 0; P.bytes && v < g->nvals; v++)
        P.bytes[v] = -1;
    P.dist = sg__malloc(ctx, n * sizeof *P.dist);
    P.ops = sg__calloc(ctx, SG_OP_COUNT, 1); /* (a cache: NULL, asked each time) */
    P.ustart = sg__malloc(ctx, (n + 1) * sizeof *P.ustart);
    P.pbeg = sg__malloc(ctx, n * sizeof *P.pbeg);
    P.pcnt = sg__malloc(ctx, n * sizeof *P.pcnt);
    sg_status s = P.live && P.rbw && P.rfw && P.recomp && P.is_out && P.bwc && P.written && P.bytes && P.dist &&
                          P.ustart && P.pbeg && P.pcnt ? SG_OK : sg__nomem(ctx);
    if (!s) {
        find_written(&P);
        s = merge_common(&P);
    }
    if (!s)
        s = liveness(&P);
    if (!s)
        classify(&P);
    if (!s) {
        memset(saved, 0, g->nvals);
        s = cut(&P, saved);
    }
    sg_free(P.live);
    sg_free(P.rbw);
    sg_free(P.rfw);
    sg_free(P.recomp);
    sg_free(P.is_out);
    sg_free(P.bwc);
    sg_free(P.written);
    sg_free(P.bytes);
    sg_free(P.dist);
    sg_free(P.ustart);
    sg_free(P.users);
    sg_free(P.pbeg);
    sg_free(P.pcnt);
    sg_free(P.prods);
    sg_free(P.ops);
    return s;
}
