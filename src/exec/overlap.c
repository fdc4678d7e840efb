/* exec: the memory-overlap checks of a call that writes a tensor, made on
 * the concrete layouts, before its kernel runs, in eager and graph runs
 * alike. PyTorch (at::has_internal_overlap, at::get_overlap_status) decides
 * only what it can see cheaply: a written dimension of stride 0, or two
 * non-overlapping and dense tensors whose ranges meet; anything else is
 * "too hard" and runs, its result then depending on the order its kernel
 * reads and writes in. Our kernels read every input before they write, so
 * where PyTorch's order shows we would silently differ. Here the question
 * is answered exactly (which storage positions each tensor reaches) and
 * every such call is refused, with PyTorch's messages:
 *  - the written tensor reaches a position twice (but for fill_, zero_ and
 *    the creation operators' out=, which write one value everywhere, and
 *    x.copy_(x), which PyTorch returns from before any check);
 *  - an input reaches a position the call writes, other than the very
 *    position written with the element it is read for (an elementwise
 *    operator reading its own output in place: `a.mul_(a)`, a view laid
 *    out as the written tensor); for the operators outside TensorIterator
 *    (sum, mm, cat ... out=) any shared position is refused.
 * Cost: a few comparisons where no input shares the written tensor's
 * storage or their ranges do not meet; otherwise one bitmap over the
 * positions both ranges cover and one walk over each tensor's elements,
 * the order of the kernel's own work. */
#include <stdlib.h>
#include <string.h>

#include "exec/exec_private.h"
#include "graph/meta.h"
#include "graph/ops.h"

static const char partial_msg[] = "unsupported operation: some elements of the input tensor and the written-to "
                                  "tensor refer to a single memory location. Please clone() the tensor before "
                                  "performing the operation.";
static const char internal_msg[] = "unsupported operation: more than one element of the written-to tensor refers "
                                   "to a single memory location. Please clone() the tensor before performing the "
                                   "operation.";

/* A layout over a storage, with the range [lo, hi) of positions it reaches
 * (lo == hi: no elements) once set_extent has run (ext). */
typedef struct layout {
    const sg__xstorage *st;
    size_t ndim;
    int64_t sizes[SG_MAX_DIMS], strides[SG_MAX_DIMS], offset;
    bool ext;
    int64_t lo, hi;
} layout;

static sg_status set_extent(sg_ctx *ctx, layout *l)
{
    if (l->ext)
        return SG_OK;
    CHAIN(sg__xlayout_extent(ctx, l->ndim, l->sizes, l->strides, l->offset, &l->lo, &l->hi));
    l->ext = true;
    return SG_OK;
}

static sg_status of_tensor(sg_ctx *ctx, const sg__xtensor *t, layout *l)
{
    l->st = t->st;
    l->ndim = t->ndim;
    memcpy(l->sizes, t->sizes, t->ndim * sizeof *l->sizes);
    memcpy(l->strides, t->strides, t->ndim * sizeof *l->strides);
    l->offset = t->offset;
    l->ext = false;
    (void)ctx;
    return SG_OK;
}

/* The layout the call writes through argument i: the argument itself for
 * an in-place call; for out=, the node's result (the out tensor after the
 * resize its rule decided), evaluated under the run's bindings. *known is
 * false where that layout depends on what the kernel computes (a node that
 * binds unbacked symbols: nonzero, masked_select). */
static sg_status written_layout(sg__xcall *c, int i, layout *l, bool *known)
{
    const sg__xtensor *t = c->a[i].t;
    *known = true;
    if (!(c->s->flags & SG_OPF_OUT) || c->s->ret_alias[0] != i || c->n->out == SG_NOVAL ||
        c->g->vals[c->n->out].kind != SG_V_TENSOR)
        return of_tensor(c->ctx, t, l);
    if (c->n->nbinds) {
        *known = false;
        l->st = t->st;
        l->ext = false;
        return SG_OK;
    }
    uint32_t v = c->n->out;
    const sg__fake_tensor *f = &c->g->vals[v].u.t;
    sg_status s = SG_OK;
    l->st = t->st;
    l->ext = false;
    l->ndim = f->ndim;
    for (uint32_t d = 0; d < f->ndim && !s; d++)
        s = sg__xrun_eval(c->r, sg__graph_size(c->g, v, d), &l->sizes[d]);
    for (uint32_t d = 0; d < f->ndim && !s; d++)
        s = sg__xrun_eval(c->r, sg__graph_stride(c->g, v, d), &l->strides[d]);
    if (!s)
        s = sg__xrun_eval(c->r, f->offset, &l->offset);
    return s ? s : set_extent(c->ctx, l); /* not a tensor yet: its positions checked here */
}

/* The layout with the dimensions that do not move the position (size 1,
 * stride 0) dropped: the same positions, each once per distinct index
 * left. */
static void squeezed(const layout *l, layout *q)
{
    *q = *l;
    q->ndim = 0;
    for (size_t d = 0; d < l->ndim; d++)
        if (l->sizes[d] != 1 && l->strides[d] != 0) {
            q->sizes[q->ndim] = l->sizes[d];
            q->strides[q->ndim++] = l->strides[d];
        }
}

/* A bitmap over the positions [lo, lo + n). */
typedef struct bitmap {
    int64_t lo, n;
    unsigned char *bits;
} bitmap;

static sg_status bitmap_new(sg_ctx *ctx, bitmap *b, int64_t lo, int64_t hi)
{
    b->lo = lo;
    b->n = hi - lo;
    b->bits = sg__calloc(ctx, (size_t)(b->n / 8) + 1, 1);
    return b->bits ? SG_OK : sg__nomem(ctx);
}

/* Test and set position p (inside the map): was it set before? */
static inline bool test_set(bitmap *b, int64_t p)
{
    int64_t i = p - b->lo;
    unsigned char m = (unsigned char)(1u << (i & 7));
    bool was = (b->bits[i >> 3] & m) != 0;
    b->bits[i >> 3] |= m;
    return was;
}

static inline bool test(const bitmap *b, int64_t p)
{
    int64_t i = p - b->lo;
    return p >= b->lo && i < b->n && (b->bits[i >> 3] >> (i & 7)) & 1u;
}

static int64_t numel(const layout *l)
{
    int64_t n = 1;
    for (size_t d = 0; d < l->ndim; d++)
        n *= l->sizes[d]; /* the tensor exists: its count fits */
    return n;
}

/* Does l reach some position twice? Exact: a tensor whose dimensions,
 * taken by growing stride, each step past everything the smaller ones
 * reach is answered at once; any other one by a bitmap over its range. */
static sg_status internal_overlap(sg_ctx *ctx, layout *l, bool *out)
{
    *out = false;
    for (size_t d = 0; d < l->ndim; d++)
        if (l->sizes[d] == 0)
            return SG_OK;
    size_t idx[SG_MAX_DIMS], n = 0;
    for (size_t d = 0; d < l->ndim; d++) {
        if (l->sizes[d] == 1)
            continue;
        if (l->strides[d] == 0) {
            *out = true; /* PyTorch's own case (MemOverlap::Yes) */
            return SG_OK;
        }
        idx[n++] = d;
    }
    for (size_t i = 1; i < n; i++) /* by |stride|: at most SG_MAX_DIMS */
        for (size_t j = i; j > 0 && llabs(l->strides[idx[j]]) < llabs(l->strides[idx[j - 1]]); j--) {
            size_t t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    int64_t reach = 0; /* the span the smaller dimensions cover */
    bool plain = true;
    for (size_t i = 0; i < n && plain; i++) {
        int64_t st = llabs(l->strides[idx[i]]);
        plain = st > reach;
        if (plain) /* no overflow: the tensor's positions fit int64 (its storage holds them) */
            reach += (l->sizes[idx[i]] - 1) * st;
    }
    if (plain)
        return SG_OK;
    CHAIN(set_extent(ctx, l));
    layout q;
    squeezed(l, &q);
    bitmap b;
    CHAIN(bitmap_new(ctx, &b, l->lo, l->hi));
    sg__xpos it;
    sg__xpos_init(&it, q.ndim, q.sizes, q.strides, q.offset);
    for (int64_t k = numel(&q); k > 0 && !*out; k--, sg__xpos_next(&it))
        *out = test_set(&b, it.pos);
    sg_free(b.bits);
    return SG_OK;
}

/* Does r read, for each element an elementwise call writes into w, the
 * very position written (r broadcast to w's sizes)? */
static bool same_positions(const layout *w, const layout *r)
{
    if (w->offset != r->offset)
        return false;
    size_t lead = r->ndim > w->ndim ? r->ndim - w->ndim : 0;
    for (size_t d = 0; d < lead; d++) /* leading dimensions r broadcasts away */
        if (r->sizes[d] != 1)
            return false;
    for (size_t d = 0; d < w->ndim; d++) {
        int64_t rs = 0; /* r's stride along w's dimension d, aligned from the right (0: broadcast) */
        if (d + r->ndim >= w->ndim) {
            size_t rd = d + r->ndim - w->ndim;
            if (r->sizes[rd] != 1 && r->sizes[rd] != w->sizes[d])
                return false;
            rs = r->sizes[rd] == 1 ? 0 : r->strides[rd];
        }
        if (w->sizes[d] != 1 && rs != w->strides[d])
            return false;
    }
    return true;
}

/* Do w and r reach a common position? Exact: ranges that do not meet
 * answer at once; otherwise w's positions inside the common range are
 * marked and r's looked up. */
static sg_status intersect(sg_ctx *ctx, layout *w, layout *r, bool *out)
{
    *out = false;
    CHAIN(set_extent(ctx, w));
    CHAIN(set_extent(ctx, r));
    int64_t lo = w->lo > r->lo ? w->lo : r->lo, hi = w->hi < r->hi ? w->hi : r->hi;
    if (w->lo == w->hi || r->lo == r->hi || lo >= hi)
        return SG_OK;
    layout qw, qr;
    squeezed(w, &qw);
    squeezed(r, &qr);
    bitmap b;
    CHAIN(bitmap_new(ctx, &b, lo, hi));
    sg__xpos it;
    sg__xpos_init(&it, qw.ndim, qw.sizes, qw.strides, qw.offset);
    for (int64_t k = numel(&qw); k > 0; k--, sg__xpos_next(&it))
        if (it.pos >= lo && it.pos < hi)
            test_set(&b, it.pos);
    sg__xpos_init(&it, qr.ndim, qr.sizes, qr.strides, qr.offset);
    for (int64_t k = numel(&qr); k > 0 && !*out; k--, sg__xpos_next(&it))
        *out = test(&b, it.pos);
    sg_free(b.bits);
    return SG_OK;
}

static sg_status from_public(sg_ctx *ctx, const sg__xlayout *x, layout *l)
{
    if (x->ndim > SG_MAX_DIMS)
        return sg__err(ctx, SG_ELIMIT, "a layout of more than %d dimensions", SG_MAX_DIMS);
    l->st = NULL;
    l->ndim = x->ndim;
    memcpy(l->sizes, x->sizes, x->ndim * sizeof *l->sizes);
    memcpy(l->strides, x->strides, x->ndim * sizeof *l->strides);
    l->offset = x->offset;
    l->ext = false;
    return set_extent(ctx, l);
}

sg_status sg__xlayout_repeats(sg_ctx *ctx, const sg__xlayout *x, bool *out)
{
    layout l;
    *out = false;
    CHAIN(from_public(ctx, x, &l));
    return internal_overlap(ctx, &l, out);
}

sg_status sg__xlayouts_meet(sg_ctx *ctx, const sg__xlayout *a, const sg__xlayout *b, bool *out)
{
    layout la, lb;
    *out = false;
    CHAIN(from_public(ctx, a, &la));
    CHAIN(from_public(ctx, b, &lb));
    return intersect(ctx, &la, &lb, out);
}

/* The input r against the written layout w (known: see written_layout). */
static sg_status check_input(sg_ctx *ctx, const char *op, layout *w, bool known, bool elementwise, layout *r)
{
    if (r->st != w->st)
        return SG_OK;
    CHAIN(set_extent(ctx, r));
    bool hit = r->lo != r->hi;
    if (hit && known) {
        if (elementwise && same_positions(w, r))
            return SG_OK;
        CHAIN(intersect(ctx, w, r, &hit));
    }
    return hit ? sg__err(ctx, SG_EALIASING, "%s: %s", op, partial_msg) : SG_OK;
}

/* The checks of a call of s (named op), its arguments' layouts got by
 * get(ud, i, k, &l) (argument i, element k of a list; SG_OK with l->st
 * NULL: no tensor there), n[i] elements for argument i (1 but for lists,
 * 0: none), the layouts written through written argument i by
 * wget(ud, i, &l, &known). */
typedef struct call_view {
    void *ud;
    sg_status (*get)(void *ud, int i, uint32_t k, layout *l);
    sg_status (*wget)(void *ud, int i, layout *l, bool *known);
    uint32_t (*count)(void *ud, int i);
} call_view;

static sg_status check_call(sg_ctx *ctx, const sg__schema *s, const char *op, const call_view *v)
{
    if (!s->written)
        return SG_OK;
    int kind = sg__xkernel_overlap(s);
    if (kind == SG_XOV_NONE)
        return SG_OK;
    bool elementwise = kind == SG_XOV_ELEMENTWISE;
    for (int i = 0; i < s->nargs; i++) {
        if (!((s->written >> i) & 1u) || !v->count(v->ud, i))
            continue;
        layout w;
        bool known, twice;
        CHAIN(v->wget(v->ud, i, &w, &known));
        if (!w.st)
            continue;
        if (known) {
            CHAIN(internal_overlap(ctx, &w, &twice));
            if (twice)
                return sg__err(ctx, SG_EALIASING, "%s: %s", op, internal_msg);
        }
        for (int j = 0; j < s->nargs; j++) {
            if ((s->written >> j) & 1u)
                continue;
            for (uint32_t k = 0, n = v->count(v->ud, j); k < n; k++) {
                layout r;
                CHAIN(v->get(v->ud, j, k, &r));
                if (r.st)
                    CHAIN(check_input(ctx, op, &w, known, elementwise, &r));
            }
        }
    }
    return SG_OK;
}

/* ---- a call of a run ---- */

static uint32_t xc_count(void *ud, int i)
{
    const sg__xcall *c = ud;
    return c->a[i].kind == SG_XA_TENSOR ? 1 : c->a[i].kind == SG_XA_TENSORS ? c->a[i].n : 0;
}

static sg_status xc_get(void *ud, int i, uint32_t k, layout *l)
{
    const sg__xcall *c = ud;
    return of_tensor(c->ctx, c->a[i].kind == SG_XA_TENSOR ? c->a[i].t : c->a[i].ts[k], l);
}

static sg_status xc_wget(void *ud, int i, layout *l, bool *known)
{
    sg__xcall *c = ud;
    if (c->a[i].kind != SG_XA_TENSOR) {
        l->st = NULL;
        return SG_OK;
    }
    return written_layout(c, i, l, known);
}

sg_status sg__xc_check_overlap(sg__xcall *c)
{
    if (c->s->op == SG_OP_copy_ && c->a[0].kind == SG_XA_TENSOR && c->a[1].kind == SG_XA_TENSOR &&
        c->a[0].t == c->a[1].t)
        return SG_OK; /* x.copy_(x): PyTorch returns before any check (self.is_same(src)) */
    const call_view v = {c, xc_get, xc_wget, xc_count};
    return check_call(c->ctx, c->s, c->op, &v);
}

/* ---- a node of a graph, on the layouts its fake tensors take in a run ---- */

typedef struct gnode_view {
    sg_ctx *ctx;
    const sg__graph *g;
    const sg__gnode *n;
    sg__xrun *r;
    const sg__garg *arg[SG_SCHEMA_ARGS]; /* per schema argument: the node's, or NULL */
} gnode_view;

/* Fake tensor value v laid out under r's bindings; its storage stands for
 * itself by its fake id (never a real storage's address). */
static sg_status of_fake(gnode_view *gv, uint32_t v, layout *l)
{
    const sg__graph *g = gv->g;
    const sg__fake_tensor *f = &g->vals[v].u.t;
    l->st = (const sg__xstorage *)(const void *)((const char *)g->storage_numel + f->storage);
    l->ext = false;
    l->ndim = f->ndim;
    for (uint32_t d = 0; d < f->ndim; d++) {
        CHAIN(sg__xrun_eval(gv->r, sg__graph_size(g, v, d), &l->sizes[d]));
        CHAIN(sg__xrun_eval(gv->r, sg__graph_stride(g, v, d), &l->strides[d]));
    }
    return sg__xrun_eval(gv->r, f->offset, &l->offset);
}

static bool gv_tensor(const gnode_view *gv, uint32_t v)
{
    return v < gv->g->nvals && gv->g->vals[v].kind == SG_V_TENSOR;
}

static uint32_t gv_count(void *ud, int i)
{
    const gnode_view *gv = ud;
    const sg__garg *a = gv->arg[i];
    return !a ? 0 : a->kind == SG_A_VALUE ? gv_tensor(gv, a->u.v) : a->kind == SG_A_VALUES ? a->u.list.n : 0;
}

static sg_status gv_get(void *ud, int i, uint32_t k, layout *l)
{
    gnode_view *gv = ud;
    const sg__garg *a = gv->arg[i];
    uint32_t v = a->kind == SG_A_VALUE ? a->u.v : gv->g->ids[a->u.list.off + k];
    l->st = NULL;
    return gv_tensor(gv, v) ? of_fake(gv, v, l) : SG_OK;
}

static sg_status gv_wget(void *ud, int i, layout *l, bool *known)
{
    gnode_view *gv = ud;
    const sg__garg *a = gv->arg[i];
    *known = true;
    l->st = NULL;
    if (a->kind != SG_A_VALUE || !gv_tensor(gv, a->u.v))
        return SG_OK;
    const sg__schema *s = gv->n->schema;
    if ((s->flags & SG_OPF_OUT) && s->ret_alias[0] == i && gv_tensor(gv, gv->n->out)) {
        if (gv->n->nbinds) { /* laid out by what the kernel computes */
            CHAIN(of_fake(gv, a->u.v, l));
            *known = false;
            return SG_OK;
        }
        CHAIN(of_fake(gv, gv->n->out, l));
        l->st = (const sg__xstorage *)(const void *)((const char *)gv->g->storage_numel +
                                                     gv->g->vals[a->u.v].u.t.storage);
        return SG_OK;
    }
    return of_fake(gv, a->u.v, l);
}

sg_status sg__xnode_check_overlap(sg_ctx *ctx, const sg__graph *g, uint32_t node, sg__xrun *r)
{
    const sg__gnode *n = &g->nodes[node];
    if (n->kind != SG_N_CALL)
        return SG_OK;
    const sg__schema *s = n->schema;
    gnode_view gv = {.ctx = ctx, .g = g, .n = n, .r = r};
    for (uint32_t k = 0; k < n->nargs; k++) { /* positional first, then keyword ones by name */
        const sg__garg *a = &g->args[n->args + k];
        int i = (int)k;
        if (a->kw)
            for (i = 0; i < s->nargs && strcmp(s->args[i].name, a->kw); i++)
                ;
        if (i < s->nargs && i < SG_SCHEMA_ARGS)
            gv.arg[i] = a;
    }
    if (s->op == SG_OP_copy_ && gv.arg[0] && gv.arg[1] && gv.arg[0]->kind == SG_A_VALUE &&
        gv.arg[1]->kind == SG_A_VALUE && gv.arg[0]->u.v == gv.arg[1]->u.v)
        return SG_OK;
    const call_view v = {&gv, gv_get, gv_wget, gv_count};
    char op[2 * SG_SCHEMA_NAME];
    sg__schema_full_name(s, op);
    return check_call(ctx, s, op, &v);
}
