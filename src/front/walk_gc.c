/* The walker (walk_private.h): freeing the eager values the program no
 * longer refers to. A Python tensor lives while a name, a container, a
 * closure or an expression under way refers to it; the walker's values
 * are plain structs in its arena, so instead of counting references it
 * marks, from time to time (when exec's executor says a collection is
 * due), what it refers to, and exec releases the rest. The points are the
 * starts of statements, where the statement's own frame holds no
 * temporary; a caller's statement under way may (`y = x.neg() + f(x)`
 * holds x.neg() while f runs): the values it made before its call are
 * kept whole. */
#include "front/walk_private.h"

typedef struct range {
    const wv *items;
    uint32_t n;
} range;

struct gcst {
    sg_walk *W;
    range *todo; /* sequences of values to mark */
    size_t ntodo, captodo;
    frame **frames; /* frames to mark */
    size_t nframes, capframes;
    const void **seen; /* the sequences marked (open addressing, a power of two) */
    size_t capseen, nseen;
    size_t work;
    bool oom;
};

static void push_range(gcst *g, const wv *items, uint32_t n)
{
    if (!n || g->oom)
        return;
    if (!sg__grow(g->W->ctx, (void **)&g->todo, &g->captodo, g->ntodo + 1, sizeof *g->todo)) {
        g->oom = true;
        return;
    }
    g->todo[g->ntodo++] = (range){items, n};
}

static void push_frame(gcst *g, frame *f)
{
    if (!f || f->gc == g->W->gc_epoch || g->oom)
        return;
    f->gc = g->W->gc_epoch;
    if (!sg__grow(g->W->ctx, (void **)&g->frames, &g->capframes, g->nframes + 1, sizeof *g->frames)) {
        g->oom = true;
        return;
    }
    g->frames[g->nframes++] = f;
}

static size_t hash_ptr(const void *p, size_t cap)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & (cap - 1);
}

/* Is the sequence at items new to this collection (then noted)? A program
 * may share one sequence many times over (`a = (a, a)`): each is marked
 * once. */
static bool first_visit(gcst *g, const void *items)
{
    if (2 * (g->nseen + 1) > g->capseen) {
        size_t cap = g->capseen ? 2 * g->capseen : 64;
        const void **s = sg__calloc(g->W->ctx, cap, sizeof *s);
        if (!s) {
            g->oom = true;
            return false;
        }
        for (size_t i = 0; i < g->capseen; i++)
            if (g->seen[i]) {
                size_t k = hash_ptr(g->seen[i], cap);
                while (s[k])
                    k = (k + 1) & (cap - 1);
                s[k] = g->seen[i];
            }
        sg_free(g->seen);
        g->seen = s;
        g->capseen = cap;
    }
    size_t k = hash_ptr(items, g->capseen);
    while (g->seen[k]) {
        if (g->seen[k] == items)
            return false;
        k = (k + 1) & (g->capseen - 1);
    }
    g->seen[k] = items;
    g->nseen++;
    return true;
}

static void mark_value(gcst *g, const wv *v)
{
    g->work++;
    switch ((wkind)v->kind) {
    case W_TENSOR:
    case W_METHOD: {
        sg_value a = v->kind == W_TENSOR ? v->u.t->v : v->u.method.self->v, b = sg__w_twin(g->W, a);
        sg__xeager_gc_keep(g->W->ex, a);
        if (b != SG_NOVAL) /* a TwoTensor's inner b */
            sg__xeager_gc_keep(g->W->ex, b);
        break;
    }
    case W_TUPLE:
    case W_LIST:
    case W_SLICE:
        if (v->u.seq.n && first_visit(g, v->u.seq.items))
            push_range(g, v->u.seq.items, v->u.seq.n);
        break;
    case W_FUNC:
    case W_CLASS:
    case W_APPLY:
        push_frame(g, v->u.fn.env);
        break;
    case W_CTX:
    case W_CTXFN: /* its attributes and what it saved */
        push_frame(g, v->u.ctx.c->attrs);
        if (v->u.ctx.c->nsaved && first_visit(g, v->u.ctx.c->saved))
            push_range(g, v->u.ctx.c->saved, v->u.ctx.c->nsaved);
        break;
    default:
        break;
    }
}

/* Mark everything reachable from what was pushed. */
static void drain(gcst *g)
{
    while ((g->ntodo || g->nframes) && !g->oom) {
        if (g->nframes) {
            frame *f = g->frames[--g->nframes];
            push_range(g, f->vals, (uint32_t)f->n);
            push_frame(g, f->up);
            continue;
        }
        range r = g->todo[--g->ntodo];
        for (uint32_t i = 0; i < r.n; i++)
            mark_value(g, &r.items[i]);
    }
}

sg_status sg__w_gc_point(sg_walk *W)
{
    sg__xeager *ex = W->ex;
    if (!ex)
        return SG_OK;
    if (sg__xeager_gc_due(ex)) {
        CHAIN(sg__xeager_gc_begin(ex));
        if (++W->gc_epoch == 0) { /* frames marked before the wrap must not look marked */
            W->gc_epoch = 1;
            for (unsigned i = 0; i < W->depth; i++)
                for (frame *f = W->calls[i].f; f; f = f->up)
                    f->gc = 0;
        }
        gcst *g = W->gcs; /* its arrays are kept from one collection to the next */
        if (!g && !(g = W->gcs = sg__calloc(W->ctx, 1, sizeof *g)))
            return sg__nomem(W->ctx);
        g->W = W;
        g->ntodo = g->nframes = 0;
        g->work = 0;
        if (g->nseen) {
            memset(g->seen, 0, g->capseen * sizeof *g->seen);
            g->nseen = 0;
            g->work += g->capseen / 4;
        }
        push_frame(g, W->globals);
        push_frame(g, W->params);
        for (unsigned i = 0; i < W->depth; i++) {
            push_frame(g, W->calls[i].f);
            sg__xeager_gc_keep_range(ex, W->calls[i].lo, W->calls[i].hi);
        }
        mark_value(g, &W->result);
        drain(g);
        if (g->oom) {
            g->oom = false;
            return sg__nomem(W->ctx);
        }
        CHAIN(sg__xeager_gc_sweep(ex, g->work));
    }
    W->stmt_mark = (uint32_t)sg__xeager_nvals(ex);
    return SG_OK;
}

void sg__w_gc_free(sg_walk *W)
{
    gcst *g = W->gcs;
    if (!g)
        return;
    sg_free(g->todo);
    sg_free(g->frames);
    sg_free(g->seen);
    sg_free(g);
    W->gcs = NULL;
}
