/* The minimum s-t cut under the partitioner (aot_private.h; issue 21's
 * min-cut rematerialization, PyTorch's partitioners.py, which asks
 * networkx.minimum_cut): Dinic's maximum flow over int64 capacities, with
 * SG__FLOW_INF for the edges a cut may not take.
 *
 * Ours rather than a library's: the partitioner's graphs are small to
 * medium (a node per graph value, split in two), its capacities integers
 * (bytes), and what it needs of the answer (the source side as the
 * residual graph leaves it, an unbounded cut told apart) is a few lines
 * over Dinic's; Debian's libigraph would bring a large dependency with
 * its own error handling (a global handler that aborts by default) for
 * one function. Each phase is a breadth-first search for the levels and
 * a blocking flow found by a depth-first search without recursion (a
 * chain of a million nodes is a path of a million edges): O(V^2 E) at
 * worst, far less on the partitioner's near-acyclic graphs. */
#include <string.h>

#include "aot/aot_private.h"

struct sg__flow {
    sg_ctx *ctx;
    uint32_t n;
    uint32_t *to;    /* per edge: its head; edges come in pairs, e and e ^ 1 (its residual) */
    int64_t *cap;    /* per edge: what is left of its capacity */
    size_t m, capm;  /* edges (twice the edges added) */
};

sg_status sg__flow_new(sg_ctx *ctx, uint32_t nnodes, sg__flow **out)
{
    *out = NULL;
    if (nnodes > UINT32_MAX / 2)
        return sg__err(ctx, SG_ELIMIT, "flow: %u nodes", nnodes);
    sg__flow *f = sg__calloc(ctx, 1, sizeof *f);
    if (!f)
        return sg__nomem(ctx);
    f->ctx = ctx;
    f->n = nnodes;
    *out = f;
    return SG_OK;
}

void sg__flow_free(sg__flow *f)
{
    if (!f)
        return;
    sg_free(f->to);
    sg_free(f->cap);
    sg_free(f);
}

void sg__flow_reserve(sg__flow *f, size_t edges)
{
    if (edges > (size_t)UINT32_MAX / 2)
        return;
    size_t cap2 = f->capm;
    if (sg__grow(f->ctx, (void **)&f->to, &f->capm, f->m + 2 * edges, sizeof *f->to))
        (void)sg__grow(f->ctx, (void **)&f->cap, &cap2, f->m + 2 * edges, sizeof *f->cap);
    f->capm = f->capm < cap2 ? f->capm : cap2;
}

sg_status sg__flow_edge(sg__flow *f, uint32_t u, uint32_t v, int64_t cap)
{
    if (u >= f->n || v >= f->n || cap < 0 || cap > SG__FLOW_INF)
        return sg__err(f->ctx, SG_EINVAL, "flow: an edge %u -> %u of capacity %lld (nodes 0 to %u, capacities 0 "
                       "to SG__FLOW_INF)", u, v, (long long)cap, f->n ? f->n - 1 : 0);
    if (f->m >= (size_t)UINT32_MAX - 2)
        return sg__err(f->ctx, SG_ELIMIT, "flow: more than %u edges", UINT32_MAX / 2 - 1);
    if (f->m + 2 > f->capm) { /* (room reserved: no call) */
        size_t cap2 = f->capm;
        if (!sg__grow(f->ctx, (void **)&f->to, &f->capm, f->m + 2, sizeof *f->to) ||
            !sg__grow(f->ctx, (void **)&f->cap, &cap2, f->m + 2, sizeof *f->cap))
            return sg__nomem(f->ctx);
        f->capm = f->capm < cap2 ? f->capm : cap2;
    }
    f->to[f->m] = v;
    f->cap[f->m++] = cap;
    f->to[f->m] = u; /* the residual edge: none to begin with */
    f->cap[f->m++] = 0;
    return SG_OK;
}

/* The levels of the residual graph from s by breadth (UINT32_MAX: not
 * reached); does it reach t? */
static bool levels(const sg__flow *f, const uint32_t *start, const uint32_t *adj, uint32_t s, uint32_t t,
                   uint32_t *level, uint32_t *queue)
{
    for (uint32_t v = 0; v < f->n; v++)
        level[v] = UINT32_MAX;
    uint32_t head = 0, tail = 0;
    level[s] = 0;
    queue[tail++] = s;
    while (head < tail) {
        uint32_t v = queue[head++];
        for (uint32_t k = start[v]; k < start[v + 1]; k++) {
            uint32_t e = adj[k], w = f->to[e];
            if (f->cap[e] > 0 && level[w] == UINT32_MAX) {
                level[w] = level[v] + 1;
                queue[tail++] = w;
            }
        }
    }
    return level[t] != UINT32_MAX;
}

sg_status sg__flow_mincut(sg__flow *f, uint32_t s, uint32_t t, int64_t *value, uint8_t *source_side)
{
    sg_ctx *ctx = f->ctx;
    *value = 0;
    if (s >= f->n || t >= f->n || s == t)
        return sg__err(ctx, SG_EINVAL, "flow: source %u and sink %u (nodes 0 to %u, two of them)", s, t,
                       f->n ? f->n - 1 : 0);
    size_t n = f->n;
    uint32_t *start = sg__calloc(ctx, n + 2, sizeof *start), *adj = sg__malloc(ctx, (f->m + 1) * sizeof *adj);
    uint32_t *level = sg__malloc(ctx, (n + 1) * sizeof *level), *queue = sg__malloc(ctx, (n + 1) * sizeof *queue);
    uint32_t *it = sg__malloc(ctx, (n + 1) * sizeof *it), *path = sg__malloc(ctx, (n + 1) * sizeof *path);
    sg_status st = start && adj && level && queue && it && path ? SG_OK : sg__nomem(ctx);
    if (!st) { /* the edges by their tail, as one array (counted, then placed) */
        for (size_t e = 0; e < f->m; e++)
            start[f->to[e ^ 1] + 2]++;
        for (size_t v = 2; v < n + 2; v++)
            start[v] += start[v - 1];
        for (size_t e = 0; e < f->m; e++)
            adj[start[f->to[e ^ 1] + 1]++] = (uint32_t)e;
    }
    int64_t total = 0;
    while (!st && levels(f, start, adj, s, t, level, queue)) {
        for (size_t v = 0; v < n; v++)
            it[v] = start[v];
        /* a blocking flow: paths along rising levels, each edge's pointer
           past the edges that lead nowhere (path holds the edges from s) */
        uint32_t depth = 0, v = s;
        for (;;) {
            if (v == t) { /* augment by the path's bottleneck, then back to its first saturated edge */
                int64_t b = SG__FLOW_INF;
                for (uint32_t i = 0; i < depth; i++)
                    b = f->cap[path[i]] < b ? f->cap[path[i]] : b;
                if (b >= SG__FLOW_INF) {
                    st = sg__err(ctx, SG_ELIMIT, "flow: the cut is unbounded (a path of infinite capacity from "
                                 "the source to the sink)");
                    break;
                }
                if (__builtin_add_overflow(total, b, &total)) {
                    st = sg__err(ctx, SG_ELIMIT, "flow: the cut's capacity passes int64");
                    break;
                }
                uint32_t first = depth;
                for (uint32_t i = 0; i < depth; i++) {
                    uint32_t e = path[i];
                    if (f->cap[e] < SG__FLOW_INF)
                        f->cap[e] -= b;
                    if (f->cap[e ^ 1] < SG__FLOW_INF) /* (finite stays finite) */
                        f->cap[e ^ 1] = f->cap[e ^ 1] < SG__FLOW_INF - b ? f->cap[e ^ 1] + b : SG__FLOW_INF - 1;
                    if (!f->cap[e] && first == depth)
                        first = i;
                }
                depth = first;
                v = depth ? f->to[path[depth - 1]] : s;
                continue;
            }
            while (it[v] < start[v + 1]) {
                uint32_t e = adj[it[v]];
                if (f->cap[e] > 0 && level[f->to[e]] == level[v] + 1)
                    break;
                it[v]++;
            }
            if (it[v] < start[v + 1]) { /* forward */
                uint32_t e = adj[it[v]];
                path[depth++] = e;
                v = f->to[e];
                continue;
            }
            if (v == s)
                break;
            level[v] = UINT32_MAX; /* a dead end: back one edge, past it */
            v = f->to[path[--depth] ^ 1];
            it[v]++;
        }
    }
    if (!st && source_side) { /* the sink's side: what reaches t in the residual network (a search
                                     backward from t, over edges with capacity left), as networkx's
                                     minimum_cut takes it; the source's side is the rest (the largest
                                     of the minimum cuts' source sides) */
        for (size_t v = 0; v < n; v++)
            level[v] = 0;
        uint32_t head = 0, tail = 0;
        level[t] = 1;
        queue[tail++] = t;
        while (head < tail) {
            uint32_t v = queue[head++];
            for (uint32_t i = start[v]; i < start[v + 1]; i++) {
                uint32_t e = adj[i], u = f->to[e]; /* e: v -> u; e ^ 1: u -> v, with what it has left */
                if (!level[u] && f->cap[e ^ 1] > 0) {
                    level[u] = 1;
                    queue[tail++] = u;
                }
            }
        }
        for (size_t v = 0; v < n; v++)
            source_side[v] = !level[v];
    }
    if (!st)
        *value = total;
    sg_free(start);
    sg_free(adj);
    sg_free(level);
    sg_free(queue);
    sg_free(it);
    sg_free(path);
    return st;
}
