/* Pointwise operators: broadcasting, type promotion and the strides of the
 * result, as PyTorch computes them (torch/_refs' _broadcast_shapes,
 * c10's ResultTypeState, and TensorIterator's dimension order, which
 * torch/_prims_common's compute_elementwise_output_logical_to_physical_perm
 * restates), for functional, in-place (self keeps its sizes, strides and
 * dtype) and out= forms. */
#include <string.h>

#include "expr/expr_private.h"
#include "graph/meta.h"

/* ---- type promotion ---- */

/* bool < int64 < float32 < float64: with these four dtypes, promoting two is
 * taking the larger. */
static int rank(sg_dtype d)
{
    static const int r[SG_NDTYPE] = {[SG_BOOL] = 0, [SG_INT64] = 1, [SG_FLOAT32] = 2, [SG_FLOAT64] = 3};
    return r[d];
}

static sg_dtype promote(int a, sg_dtype b)
{
    return a < 0 || rank(b) > rank((sg_dtype)a) ? b : (sg_dtype)a;
}

sg_dtype sg__meta_promote(sg_dtype a, sg_dtype b)
{
    return promote(a, b);
}

#define is_float sg__dtype_is_float

/* c10's combine_categories: the higher-priority result wins unless it is
 * bool or integral and the lower one is floating (or it is bool). -1: none. */
static int combine(int higher, int lower)
{
    if (higher < 0)
        return lower;
    if (lower < 0 || is_float((sg_dtype)higher))
        return higher;
    if (higher == SG_BOOL || is_float((sg_dtype)lower))
        return promote(higher, (sg_dtype)lower);
    return higher;
}

typedef struct {
    int dim, zero, wrapped; /* result per category, -1 for none */
} result_state;

static void update_tensor(result_state *r, sg_dtype d, size_t ndim)
{
    int *c = ndim ? &r->dim : &r->zero;
    *c = promote(*c, d);
}

/* A Python number passed for a Tensor or Scalar parameter (PyTorch's
 * wrapped number: an int is int64, a float the default dtype, float64). */
static void update_number(result_state *r, const sg__garg *a)
{
    sg_dtype d = a->kind == SG_A_FLOAT ? SG_FLOAT64
               : a->kind == SG_A_BOOL || (a->kind == SG_A_EXPR && sg_expr_sort(a->u.e) == SG_SORT_BOOL) ? SG_BOOL
               : SG_INT64;
    r->wrapped = promote(r->wrapped, d);
}

/* ---- the operator's kind ---- */

/* What the operator computes: the VARIANT column of its row (SG_PW_*,
 * graph/ops.h); a schema outside the table computes by type promotion. */
static unsigned kind_of(const sg__schema *s)
{
    const sg__opinfo *o = sg__op_info(s->op);
    return o ? o->variant : SG_PW_ARITH;
}

/* ---- operands ---- */

#define MAX_OPS 4

typedef struct {
    uint32_t t[MAX_OPS]; /* the tensor operands */
    size_t n;
    int out;             /* the schema position of out=, or -1 */
    const sg_expr *const *st[MAX_OPS]; /* strides TensorIterator sees (NULL: the operand's own) */
    const sg_expr *copy[MAX_OPS][SG_MAX_DIMS]; /* those of converted copies */
    bool scalar;         /* a number that TensorIterator takes as a 0-dim operand */
    int cond;            /* the index of where's condition among t, or -1 */
    bool any_bool;       /* some operand (tensor or number) is a bool */
    result_state rs;
} operands;

/* name == lit, the first letters compared first (most names differ there). */
static inline bool named(const char *name, const char *lit)
{
    return name[0] == lit[0] && !strcmp(name, lit);
}

static sg_status collect(sg__mcall *m, operands *o)
{
    o->n = 0;
    o->out = (m->s->flags & SG_OPF_OUT) ? sg__schema_arg(m->s, "out") : -1;
    o->rs = (result_state){-1, -1, -1};
    o->scalar = false;
    o->any_bool = false;
    for (size_t k = 0; k < MAX_OPS; k++)
        o->st[k] = NULL;
    o->cond = -1;
    for (int i = 0; i < m->s->nargs; i++) {
        const sg__sty *ty = &m->s->args[i].type;
        const sg__garg *a = &m->a[i];
        if (i == o->out || ty->list || named(m->s->args[i].name, "alpha"))
            continue;
        if (ty->base == SG_TY_TENSOR && a->kind == SG_A_VALUE) {
            if (o->n == MAX_OPS)
                return sg__err(m->g->ctx, SG_EINTERNAL, "%s: too many operands", m->op);
            bool cond = named(m->s->args[i].name, "condition");
            const sg__fake_tensor *t = sg__mt(m, a->u.v);
            if (cond)
                o->cond = (int)o->n;
            o->t[o->n++] = a->u.v;
            o->any_bool |= t->dtype == SG_BOOL && !cond;
            if (!cond) /* where's condition takes no part in the type */
                update_tensor(&o->rs, (sg_dtype)t->dtype, t->ndim);
            else if (t->dtype != SG_BOOL)
                return sg__err(m->g->ctx, SG_ETYPE, "%s: the condition must be a bool tensor", m->op);
        } else if ((ty->base == SG_TY_TENSOR || ty->base == SG_TY_SCALAR) &&
                   (a->kind == SG_A_EXPR || a->kind == SG_A_FLOAT || a->kind == SG_A_BOOL)) {
            update_number(&o->rs, a);
            o->any_bool |= a->kind == SG_A_BOOL;
            /* a number for a Tensor, for the other operand of a binary
             * op's Scalar overload or for pow.Scalar's base is wrapped
             * into a 0-dim tensor operand (min, max, exponent are not) */
            const char *nm = m->s->args[i].name;
            o->scalar |= ty->base == SG_TY_TENSOR || named(nm, "other") || named(nm, "self");
        }
    }
    if (!o->n)
        return sg__err(m->g->ctx, SG_EINVAL, "%s: no tensor operand", m->op);
    return SG_OK;
}

/* ---- questions ---- */

/* a == b: at once where they are one expression, else asked (guarded as
 * PyTorch's size-oblivious questions are: every branch eager execution
 * takes on a value is guarded, so the trace stays right). */
static sg_status same(sg__mcall *m, const sg_expr *a, const sg_expr *b, bool *out)
{
    if (a == b) {
        *out = true;
        return SG_OK;
    }
    return sg__meta_eval_oblivious(m, out, sg__meta_rel(m, SG_REL_EQ, a, b));
}

/* ---- broadcasting ---- */

/* broadcast, asked of the environment. */
static sg_status broadcast_asked(sg__mcall *m, const operands *o, const sg_expr **out, size_t *ndim)
{
    sg_ctx *ctx = m->g->ctx;
    size_t n = 0;
    for (size_t k = 0; k < o->n; k++)
        n = sg__mt(m, o->t[k])->ndim > n ? sg__mt(m, o->t[k])->ndim : n;
    for (size_t i = 0; i < n; i++)
        out[i] = ctx->one;
    for (size_t k = 0; k < o->n; k++) {
        const sg__fake_tensor *t = sg__mt(m, o->t[k]);
        for (size_t j = 0; j < t->ndim; j++) {
            size_t at = n - t->ndim + j;
            const sg_expr *sz = sg__graph_size(m->g, o->t[k], j);
            bool one;
            sg_status s = sg__meta_eval_oblivious(m, &one, sg__meta_rel(m, SG_REL_EQ, out[at], ctx->one));
            if (s)
                return s;
            if (one) {
                out[at] = sz;
                continue;
            }
            bool not_one;
            if ((s = sg__meta_eval_oblivious(m, &not_one, sg__meta_rel(m, SG_REL_NE, sz, ctx->one))))
                return s;
            if (not_one && (s = sg__meta_check(m, sg__meta_rel(m, SG_REL_EQ, out[at], sz),
                                               "the sizes of the operands do not broadcast")))
                return s;
        }
    }
    *ndim = n;
    return SG_OK;
}

/* The strides of operand v expanded to sizes (rank n): 0 where it has no
 * dimension or a size stretched to another size. */
static sg_status expanded_strides(sg__mcall *m, uint32_t v, const sg_expr *const *st, const sg_expr *const *sizes, size_t n,
                                  const sg_expr **out)
{
    const sg__fake_tensor *t = sg__mt(m, v);
    sg_ctx *ctx = m->g->ctx;
    for (size_t i = 0; i < n; i++) {
        if (i < n - t->ndim) {
            out[i] = ctx->zero;
            continue;
        }
        size_t j = i - (n - t->ndim);
        bool kept;
        sg_status s = same(m, sg__graph_size(m->g, v, j), sizes[i], &kept);
        if (s)
            return s;
        out[i] = kept ? (st ? st[j] : sg__graph_stride(m->g, v, j)) : ctx->zero;
    }
    return SG_OK;
}

/* ---- the result's strides ---- */

/* Is v contiguous (as is_contiguous says: every tensor without elements is),
 * by what the environment knows? */
static sg_status known_contiguous(sg__mcall *m, uint32_t v, const sg_expr *const *st, bool *out)
{
    const sg__fake_tensor *t = sg__mt(m, v);
    const sg_expr *want[SG_MAX_DIMS], *sizes[SG_MAX_DIMS];
    for (uint32_t d = 0; d < t->ndim; d++)
        sizes[d] = sg__graph_size(m->g, v, d);
    *out = true;
    for (uint32_t d = 0; d < t->ndim; d++) {
        bool zero;
        sg_status s = same(m, sizes[d], m->g->ctx->zero, &zero);
        if (s || zero)
            return s;
    }
    sg_status s = sg__meta_contiguous(m, want, sizes, t->ndim);
    for (uint32_t d = 0; d < t->ndim && !s && *out; d++) {
        bool one;
        if (!(s = same(m, sizes[d], m->g->ctx->one, &one)) && !one)
            s = same(m, want[d], (st ? st[d] : sg__graph_stride(m->g, v, d)), out);
    }
    return s;
}

typedef struct {
    sg__mcall *m;
    const sg_expr *const *sizes;
    const sg_expr *strides[MAX_OPS][SG_MAX_DIMS]; /* each operand's, expanded */
    size_t n;
} order;

/* TensorIterator's should_swap: 1 if dimension a goes after b (is faster),
 * -1 if before, 0 if undecided. */
static sg_status should_swap(order *O, size_t a, size_t b, int *out)
{
    sg__mcall *m = O->m;
    sg_ctx *ctx = m->g->ctx;
    *out = 0;
    for (size_t k = 0; k < O->n; k++) {
        const sg_expr *sa = O->strides[k][a], *sb = O->strides[k][b];
        bool z, lt, gt, bigger;
        sg_status s = sg__meta_eval_oblivious(m, &z, sg__meta_rel(m, SG_REL_EQ, sa, ctx->zero));
        if (!s && !z)
            s = sg__meta_eval_oblivious(m, &z, sg__meta_rel(m, SG_REL_EQ, sb, ctx->zero));
        if (s || z) {
            if (s)
                return s;
            continue;
        }
        if ((s = sg__meta_eval_oblivious(m, &lt, sg__meta_rel(m, SG_REL_LT, sa, sb))))
            return s;
        if (lt) {
            *out = -1;
            return SG_OK;
        }
        if ((s = sg__meta_eval_oblivious(m, &gt, sg__meta_rel(m, SG_REL_GT, sa, sb))))
            return s;
        if (gt) {
            *out = 1;
            return SG_OK;
        }
        if ((s = sg__meta_eval_oblivious(m, &bigger, sg__meta_rel(m, SG_REL_GT, O->sizes[a], O->sizes[b]))))
            return s;
        if (bigger) {
            *out = 1;
            return SG_OK;
        }
    }
    return SG_OK;
}

/* Is v channels-last contiguous (4-d, dimensions 1, 3, 2, 0 from fastest
 * to slowest, sizes of 1 skipped), asked of the environment? */
static sg_status channels_last(sg__mcall *m, uint32_t v, const sg_expr *const *st, bool *out)
{
    static const int order[4] = {1, 3, 2, 0};
    *out = sg__mt(m, v)->ndim == 4;
    const sg_expr *expected = m->g->ctx->one;
    for (int i = 0; i < 4 && *out; i++) {
        int d = order[i];
        bool one;
        sg_status s = same(m, sg__graph_size(m->g, v, d), m->g->ctx->one, &one);
        if (!s && !one)
            s = same(m, (st ? st[d] : sg__graph_stride(m->g, v, d)), expected, out);
        if (s)
            return s;
        if (!one && !(expected = sg__mul(m->g->ctx, expected, sg__graph_size(m->g, v, d))))
            return sg_ctx_last_error(m->g->ctx);
    }
    return SG_OK;
}

/* The strides of a channels-last tensor of 4 sizes (no max(size, 1), as
 * c10's get_channels_last_strides_2d). */
static sg_status channels_last_strides(sg__mcall *m, const sg_expr *const *sizes, const sg_expr **strides)
{
    sg_ctx *ctx = m->g->ctx;
    strides[1] = ctx->one;
    strides[3] = sizes[1];
    strides[2] = sg__mul(ctx, strides[3], sizes[3]);
    strides[0] = strides[2] ? sg__mul(ctx, strides[2], sizes[2]) : NULL;
    return strides[0] ? SG_OK : sg_ctx_last_error(ctx);
}

/* Do all the operands have the result's shape? */
static sg_status same_shapes(sg__mcall *m, const operands *o, const sg_expr *const *sizes, size_t n, bool *out)
{
    *out = !o->scalar || n == 0;
    for (size_t k = 0; k < o->n && *out; k++) {
        const sg__fake_tensor *t = sg__mt(m, o->t[k]);
        *out = t->ndim == n;
        for (size_t d = 0; d < n && *out; d++) {
            sg_status s = same(m, sg__graph_size(m->g, o->t[k], d), sizes[d], out);
            if (s)
                return s;
        }
    }
    return SG_OK;
}

static sg_status layout_strides(sg__mcall *m, const operands *o, const sg_expr *const *sizes, size_t n,
                                const sg_expr **strides);

static const sg_expr *ostride(sg__mcall *m, const operands *o, size_t k, size_t d)
{
    return o->st[k] ? o->st[k][d] : sg__graph_stride(m->g, o->t[k], d);
}

/* TensorIterator's other fast setup: operands of one shape and the same
 * strides, non-overlapping and dense, give a result with those strides
 * (strides[0] is left NULL where this does not apply). */
static sg_status same_layout(sg__mcall *m, const operands *o, const sg_expr *const *sizes, size_t n,
                             const sg_expr **strides)
{
    bool all;
    strides[0] = NULL;
    sg_status s = same_shapes(m, o, sizes, n, &all);
    for (size_t k = 1; k < o->n && all && !s; k++)
        for (size_t d = 0; d < n && all && !s; d++)
            s = same(m, ostride(m, o, 0, d), ostride(m, o, k, d), &all);
    if (s || !all)
        return s;
    operands one = *o; /* dense: its own layout agrees with its strides where sizes are not 1 */
    one.n = 1;
    const sg_expr *lay[SG_MAX_DIMS];
    if ((s = layout_strides(m, &one, sizes, n, lay)))
        return s;
    for (size_t d = 0; d < n; d++) {
        bool one, eq;
        if ((s = same(m, sizes[d], m->g->ctx->one, &one)) || (!one && (s = same(m, ostride(m, o, 0, d),
                                                                                lay[d], &eq))))
            return s;
        if (!one && !eq)
            return SG_OK;
    }
    for (size_t d = 0; d < n; d++)
        strides[d] = ostride(m, o, 0, d);
    return SG_OK;
}

/* The result's strides: contiguous in the order TensorIterator gives the
 * dimensions (the operands' own order where they agree). Its fast setup
 * comes first: operands of one shape (a wrapped number is a 0-dim one), all
 * contiguous, give a contiguous result. */
static sg_status result_strides_asked(sg__mcall *m, const operands *o, const sg_expr *const *sizes, size_t n,
                                      const sg_expr **strides)
{
    bool all;
    sg_status s0 = same_shapes(m, o, sizes, n, &all);
    for (size_t k = 0; k < o->n && all && !s0; k++)
        s0 = known_contiguous(m, o->t[k], o->st[k], &all);
    if (s0)
        return s0;
    if (n <= 1 || all)
        return sg__meta_contiguous(m, strides, sizes, n);
    bool cl;
    s0 = same_shapes(m, o, sizes, n, &cl);
    for (size_t k = 0; k < o->n && cl && !s0; k++)
        s0 = channels_last(m, o->t[k], o->st[k], &cl);
    if (s0 || cl)
        return s0 ? s0 : channels_last_strides(m, sizes, strides);
    if ((s0 = same_layout(m, o, sizes, n, strides)) || strides[0])
        return s0;
    return layout_strides(m, o, sizes, n, strides);
}

/* ---- answers remembered ----
 *
 * A trace, and each pass that records a graph again (functionalization, the
 * joint's forward, the backward's calls), runs the rule over operands of the
 * same few layouts many times (every pointwise call of a program over one
 * shape), and broadcast and result_strides_asked ask the environment the
 * same questions each time. What they give is a function of the operands'
 * sizes (and, for the strides, the strides TensorIterator sees, whether a
 * number takes part and the broadcast sizes) and of what the environment
 * knows. So it is remembered per graph with the environment's mark
 * (sg_env_mark_take), and used again only while the mark is the same (no
 * guard, assertion, fact, symbol or rollback since: the questions would get
 * the same answers and record nothing); an answer whose questions changed
 * the environment (a guard, a runtime assert) is not kept. Layouts of rank
 * up to MEMO_DIMS; a table of MEMO_SLOTS, two places a key (the second
 * taken when the first holds another). */

#define MEMO_DIMS 4
#define MEMO_SLOTS 128
#define MEMO_KEY (MAX_OPS * 2 * MEMO_DIMS + MEMO_DIMS)

enum { MEMO_BROADCAST = 1, MEMO_STRIDES };

typedef struct {
    uint64_t hash;              /* 0: empty */
    sg_env_mark mark;
    uint8_t kind, nops, n, scalar, nkey, nval;
    uint8_t ndim[MAX_OPS];
    const sg_expr *key[MEMO_KEY]; /* each operand's sizes (and strides), then the result's sizes */
    const sg_expr *val[MEMO_DIMS]; /* the broadcast sizes, or the result's strides */
} memo_ent;

struct sg__pw_memo {
    memo_ent e[MEMO_SLOTS];
    bool second; /* where both places of a key hold others: the second is taken next */
};

/* The key of a question of kind about o (MEMO_STRIDES: of the result of
 * sizes[0 .. n)); false where a rank is above MEMO_DIMS (not remembered). */
static bool memo_key(sg__mcall *m, const operands *o, int kind, const sg_expr *const *sizes, size_t n, memo_ent *k)
{
    if (n > MEMO_DIMS)
        return false;
    k->kind = (uint8_t)kind;
    k->nops = (uint8_t)o->n;
    k->n = (uint8_t)n;
    k->scalar = kind == MEMO_STRIDES && o->scalar;
    k->nkey = 0;
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)kind << 16 | o->n << 8 | n << 1 | k->scalar);
    for (size_t j = 0; j < o->n; j++) {
        uint32_t nd = sg__mt(m, o->t[j])->ndim;
        if (nd > MEMO_DIMS)
            return false;
        k->ndim[j] = (uint8_t)nd;
        h = (h ^ nd) * 0x100000001b3ULL;
        for (uint32_t d = 0; d < nd; d++)
            k->key[k->nkey++] = sg__graph_size(m->g, o->t[j], d);
        for (uint32_t d = 0; d < nd && kind == MEMO_STRIDES; d++)
            k->key[k->nkey++] = ostride(m, o, j, d);
    }
    for (size_t d = 0; d < n; d++)
        k->key[k->nkey++] = sizes[d];
    for (size_t i = 0; i < k->nkey; i++)
        h = (h ^ (uintptr_t)k->key[i]) * 0x100000001b3ULL;
    k->hash = h | 1;
    sg_env_mark_take(m->env, &k->mark);
    return true;
}

/* The first of k's two places (the hash's top bits, which every bit of the key reaches). */
static size_t memo_at(const memo_ent *k)
{
    return (size_t)(k->hash >> 57) % MEMO_SLOTS;
}

static bool memo_is(const memo_ent *e, const memo_ent *k)
{
    return e->hash == k->hash && e->kind == k->kind && e->nops == k->nops && e->n == k->n && e->scalar == k->scalar &&
           e->nkey == k->nkey && !memcmp(e->ndim, k->ndim, k->nops) && !memcmp(e->key, k->key, k->nkey * sizeof *k->key);
}

/* The entry that answers k, or NULL. */
static const memo_ent *memo_find(sg__mcall *m, const memo_ent *k)
{
    if (!m->g->pw_memo)
        return NULL;
    size_t i = memo_at(k);
    for (size_t j = 0; j < 2; j++) {
        const memo_ent *e = &m->g->pw_memo->e[(i + j) % MEMO_SLOTS];
        if (memo_is(e, k))
            return sg_env_mark_same(&e->mark, &k->mark) ? e : NULL;
    }
    return NULL;
}

/* Remember val[0 .. nval) for k, asked just now, if the asking changed
 * nothing in the environment. */
static void memo_keep(sg__mcall *m, const memo_ent *k, const sg_expr *const *val, size_t nval)
{
    sg__graph *g = m->g;
    sg_env_mark now;
    sg_env_mark_take(m->env, &now);
    if (!sg_env_mark_same(&now, &k->mark))
        return;
    if (!g->pw_memo) { /* its places emptied (a hash of 0), not its 57 KB cleared */
        if (!(g->pw_memo = sg__malloc(g->ctx, sizeof *g->pw_memo)))
            return; /* a cache: without room, asked each time */
        for (size_t j = 0; j < MEMO_SLOTS; j++)
            g->pw_memo->e[j].hash = 0;
        g->pw_memo->second = false;
    }
    struct sg__pw_memo *t = g->pw_memo;
    size_t i = memo_at(k);
    memo_ent *e = &t->e[i], *f = &t->e[(i + 1) % MEMO_SLOTS];
    if (e->hash && !memo_is(e, k)) { /* the first place holds another key */
        if (f->hash && !memo_is(f, k)) { /* and the second: each in turn */
            e = t->second ? f : e;
            t->second = !t->second;
        } else {
            e = f;
        }
    }
    *e = *k;
    e->nval = (uint8_t)nval;
    memcpy(e->val, val, nval * sizeof *val);
}

static sg_status result_strides(sg__mcall *m, const operands *o, const sg_expr *const *sizes, size_t n,
                                const sg_expr **strides)
{
    memo_ent k;
    if (!memo_key(m, o, MEMO_STRIDES, sizes, n, &k))
        return result_strides_asked(m, o, sizes, n, strides);
    const memo_ent *e = memo_find(m, &k);
    if (e) {
        memcpy(strides, e->val, n * sizeof *strides);
        return SG_OK;
    }
    sg_status s = result_strides_asked(m, o, sizes, n, strides);
    if (!s)
        memo_keep(m, &k, strides, n);
    return s;
}

/* PyTorch's _broadcast_shapes over the operands: out has *ndim sizes. */
static sg_status broadcast(sg__mcall *m, const operands *o, const sg_expr **out, size_t *ndim)
{
    memo_ent k;
    if (!memo_key(m, o, MEMO_BROADCAST, NULL, 0, &k))
        return broadcast_asked(m, o, out, ndim);
    const memo_ent *e = memo_find(m, &k);
    if (e) {
        memcpy(out, e->val, e->nval * sizeof *out);
        *ndim = e->nval;
        return SG_OK;
    }
    sg_status s = broadcast_asked(m, o, out, ndim);
    if (!s)
        memo_keep(m, &k, out, *ndim);
    return s;
}

/* TensorIterator's order of the dimensions (reorder_dimensions), and the
 * strides of a tensor laid out in that order. */
static sg_status layout_strides(sg__mcall *m, const operands *o, const sg_expr *const *sizes, size_t n,
                                const sg_expr **strides)
{
    if (n <= 1)
        return sg__meta_contiguous(m, strides, sizes, n);
    order O; /* set field by field: a designated initializer would clear its 2 KB of strides each call */
    O.m = m;
    O.sizes = sizes;
    O.n = o->n;
    for (size_t k = 0; k < o->n; k++) {
        sg_status s = expanded_strides(m, o->t[k], o->st[k], sizes, n, O.strides[k]);
        if (s)
            return s;
    }
    size_t perm[SG_MAX_DIMS];
    for (size_t i = 0; i < n; i++)
        perm[i] = n - 1 - i;
    for (size_t i = 1; i < n; i++) { /* insertion sort that stops at an undecided pair */
        size_t d1 = i;
        for (size_t d0 = i; d0-- > 0;) {
            int c;
            sg_status s = should_swap(&O, perm[d0], perm[d1], &c);
            if (s)
                return s;
            if (c > 0) {
                size_t x = perm[d0];
                perm[d0] = perm[d1];
                perm[d1] = x;
                d1 = d0;
            } else if (c < 0) {
                break;
            }
        }
    }
    bool inverted = true; /* the logical order: a contiguous result */
    for (size_t i = 0; i < n; i++)
        inverted &= perm[i] == n - 1 - i;
    if (inverted)
        return sg__meta_contiguous(m, strides, sizes, n);
    const sg_expr *next = m->g->ctx->one; /* TensorIterator's compatible_stride: products of sizes */
    for (size_t i = 0; i < n; i++) {
        strides[perm[i]] = next;
        if (!(next = sg__mul(m->g->ctx, next, sizes[perm[i]])))
            return sg_ctx_last_error(m->g->ctx);
    }
    return SG_OK;
}

sg_status sg__meta_broadcast_shape(sg__mcall *m, const sg_expr **sizes, size_t *n)
{
    operands o;
    sg_status s = collect(m, &o);
    return s ? s : broadcast(m, &o, sizes, n);
}

/* empty_like's preserve_format: a non-overlapping and dense tensor's own
 * strides (known so where TensorIterator's layout of it agrees with them
 * on every dimension of size other than 1), else that layout. */
static const sg_expr *numel_of(sg__mcall *m, uint32_t v)
{
    const sg_expr *p = m->g->ctx->one;
    for (uint32_t d = 0; d < sg__mt(m, v)->ndim && p; d++)
        p = sg__mul(m->g->ctx, p, sg__graph_size(m->g, v, d));
    return p;
}

/* Does v have no elements? */
static sg_status empty(sg__mcall *m, uint32_t v, bool *out)
{
    const sg_expr *n = numel_of(m, v);
    return n ? same(m, n, m->g->ctx->zero, out) : sg_ctx_last_error(m->g->ctx);
}

static sg_status dense_layout(sg__mcall *m, uint32_t v, const sg_expr **strides, bool *dense)
{
    operands o = {.n = 1, .out = -1, .scalar = false, .st = {NULL}};
    o.t[0] = v;
    const sg_expr *sizes[SG_MAX_DIMS];
    const sg__fake_tensor *t = sg__mt(m, v);
    for (uint32_t d = 0; d < t->ndim; d++)
        sizes[d] = sg__graph_size(m->g, v, d);
    sg_status s = result_strides(m, &o, sizes, t->ndim, strides);
    bool none;
    if (!s && !(s = empty(m, v, &none)) && none) { /* no elements: contiguous, so dense (c10) */
        *dense = true;
        return SG_OK;
    }
    *dense = true; /* c10's rule: dimensions of size 0 or 1 do not count */
    for (uint32_t d = 0; d < t->ndim && *dense && !s; d++) {
        bool small;
        if (!(s = sg__meta_eval_oblivious(m, &small, sg__meta_rel(m, SG_REL_LT, sizes[d], sg__int_si(m->g->ctx, 2)))) && !small)
            s = same(m, sg__graph_stride(m->g, v, d), strides[d], dense);
    }
    return s;
}

sg_status sg__meta_like_strides(sg__mcall *m, uint32_t v, const sg_expr **strides)
{
    bool dense;
    sg_status s = dense_layout(m, v, strides, &dense);
    for (uint32_t d = 0; d < sg__mt(m, v)->ndim && dense && !s; d++)
        strides[d] = sg__graph_stride(m->g, v, d);
    return s;
}

sg_status sg__meta_is_contiguous(sg__mcall *m, uint32_t v, bool *out)
{
    return known_contiguous(m, v, NULL, out);
}

/* ---- the rule ---- */


static sg_status result_dtype(sg__mcall *m, const operands *o, sg_dtype *out)
{
    int t = combine(o->rs.dim, combine(o->rs.zero, o->rs.wrapped));
    sg_dtype d = (sg_dtype)t;
    switch (kind_of(m->s)) {
    case SG_PW_COMPARE:
        *out = SG_BOOL;
        return SG_OK;
    case SG_PW_DIV:
    case SG_PW_FLOAT:
        *out = is_float(d) ? d : SG_FLOAT64;
        return SG_OK;
    case SG_PW_SAME: /* neg abs relu */
        if (d == SG_BOOL)
            return sg__err(m->g->ctx, SG_ETYPE, "%s: not supported for a bool tensor", m->op);
        break;
    case SG_PW_FILL:
        if (!strcmp(m->s->name, "fill_") && m->s->args[1].type.base == SG_TY_TENSOR && o->n > 1 &&
            sg__mt(m, o->t[1])->ndim != 0)
            return sg__err(m->g->ctx, SG_ESHAPE, "%s: fill_ only supports a 0-dimension value tensor", m->op);
        break;
    case SG_PW_ARITH:
        if (o->any_bool && (!strncmp(m->s->name, "sub", 3) || named(m->s->name, "rsub")))
            return sg__err(m->g->ctx, SG_ETYPE, "%s: subtraction with a bool tensor is not supported", m->op);
        if (d == SG_BOOL && !strncmp(m->s->name, "pow", 3))
            return sg__err(m->g->ctx, SG_ETYPE, "%s: pow is not implemented for bool", m->op);
        break;
    }
    *out = d;
    return SG_OK;
}

/* Does v have a dimension of size other than 1 with stride 0 (PyTorch's
 * internal overlap, which it refuses to write into)? Not where it has no
 * elements, nor where it is non-overlapping and dense. */
static sg_status overlaps(sg__mcall *m, uint32_t v, bool *out)
{
    *out = false;
    bool none;
    sg_status s = empty(m, v, &none);
    if (s || none)
        return s;
    for (uint32_t d = 0; d < sg__mt(m, v)->ndim && !*out; d++) {
        if (sg__graph_stride(m->g, v, d) != m->g->ctx->zero)
            continue;
        bool one;
        sg_status s = sg__meta_eval_oblivious(m, &one, sg__meta_rel(m, SG_REL_EQ, sg__graph_size(m->g, v, d),
                                                                    m->g->ctx->one));
        if (s)
            return s;
        *out = !one;
    }
    return SG_OK;
}

/* PyTorch's get_overlap_status of the written tensor w and an input x
 * that views the same storage: a partial overlap (the same range with other
 * strides, or ranges that meet) is refused; the same tensor, an input
 * without elements, or one that is not dense (too hard to tell) is not. */
static sg_status partial_overlap(sg__mcall *m, uint32_t w, uint32_t x, bool *out)
{
    *out = false;
    if (w == x || sg__mt(m, w)->storage != sg__mt(m, x)->storage)
        return SG_OK;
    bool ew, ex, dw, dx;
    const sg_expr *lay[SG_MAX_DIMS];
    sg_status s = empty(m, w, &ew);
    if (!s && !ew)
        s = empty(m, x, &ex);
    if (s || ew || ex)
        return s;
    if ((s = dense_layout(m, w, lay, &dw)) || !dw || (s = dense_layout(m, x, lay, &dx)) || !dx)
        return s;
    sg_ctx *ctx = m->g->ctx;
    const sg_expr *wb = sg__mt(m, w)->offset, *xb = sg__mt(m, x)->offset;
    const sg_expr *nw = numel_of(m, w), *nx = numel_of(m, x);
    const sg_expr *we = nw ? sg__add(ctx, wb, nw) : NULL, *xe = nx ? sg__add(ctx, xb, nx) : NULL;
    if (!we || !xe)
        return sg_ctx_last_error(ctx);
    bool sb, se;
    if ((s = same(m, wb, xb, &sb)) || (sb && (s = same(m, we, xe, &se))))
        return s;
    if (sb && se) { /* the same range: full where the strides are the same */
        bool eq = sg__mt(m, w)->ndim == sg__mt(m, x)->ndim;
        for (uint32_t d = 0; d < sg__mt(m, w)->ndim && eq && !s; d++)
            s = same(m, sg__graph_stride(m->g, w, d), sg__graph_stride(m->g, x, d), &eq);
        *out = !eq;
        return s;
    }
    bool a, b;
    if ((s = sg__meta_eval_oblivious(m, &a, sg__meta_rel(m, SG_REL_LT, wb, xe))) || !a)
        return s;
    if ((s = sg__meta_eval_oblivious(m, &b, sg__meta_rel(m, SG_REL_LT, xb, we))))
        return s;
    *out = b;
    return SG_OK;
}

/* Where the result must go (in-place: self; out=: out), checked. */
static sg_dtype common_dtype(sg__mcall *m, const operands *o);
static sg_status convert_inputs(sg__mcall *m, operands *o, sg_dtype common);

/* TensorIterator's memory-overlap checks of the tensor written, dst, which
 * come before its shapes: no internal overlap, no partial overlap with an
 * input (fill_ and zero_ check neither; x.copy_(x) returns at once), as
 * PyTorch decides them, with its messages. What PyTorch finds too hard to
 * tell (a tensor that is not dense) exec's run-time check
 * (src/exec/overlap.c) decides exactly before the kernel runs. */
static sg_status check_overlaps(sg__mcall *m, const operands *o, uint32_t dst)
{
    bool overlap = false;
    bool fill = strcmp(m->s->name, "fill_") == 0 || strcmp(m->s->name, "zero_") == 0;
    bool itself = !strcmp(m->s->name, "copy_") && m->a[1].kind == SG_A_VALUE && m->a[1].u.v == dst;
    if (fill || itself)
        return SG_OK;
    sg_status s0 = overlaps(m, dst, &overlap);
    if (s0)
        return s0;
    if (overlap)
        return sg__err(m->g->ctx, SG_EALIASING, "%s: unsupported operation: more than one element of the written-to "
                                                "tensor refers to a single memory location. Please clone() the "
                                                "tensor before performing the operation.", m->op);
    for (size_t k = 0; k < o->n; k++) {
        if ((s0 = partial_overlap(m, dst, o->t[k], &overlap)))
            return s0;
        if (overlap)
            return sg__err(m->g->ctx, SG_EALIASING, "%s: unsupported operation: some elements of the input tensor "
                                                    "and the written-to tensor refer to a single memory location. "
                                                    "Please clone() the tensor before performing the operation.",
                           m->op);
    }
    return SG_OK;
}

static sg_status into(sg__mcall *m, const operands *o, uint32_t dst, const char *what, sg_dtype d,
                      const sg_expr *const *sizes, size_t n, uint32_t *out)
{
    const sg__fake_tensor *t = sg__mt(m, dst);
    bool same = t->ndim == n;
    for (size_t i = 0; i < n && same; i++) {
        if (sizes[i] == sg__graph_size(m->g, dst, i))
            continue;
        sg_status s = sg__meta_eval(m, &same, sg__meta_rel(m, SG_REL_EQ, sizes[i], sg__graph_size(m->g, dst, i)));
        if (s)
            return s;
    }
    bool read_write = false; /* the out tensor is an input too: TensorIterator does not resize it */
    for (size_t k = 0; k < o->n; k++)
        read_write |= o->t[k] == dst;
    if (!same && (!strcmp(what, "self") || read_write)) /* TensorIterator's shape comes before its types */
        return sg__meta_shape_error(m, !strcmp(what, "self") ? "the broadcast shape does not match the shape of self"
                                                             : "the broadcast shape does not match the shape of "
                                                               "out, which is an input too");
    t = sg__mt(m, dst);
    if (kind_of(m->s) != SG_PW_FILL && !sg__dtype_can_cast(d, (sg_dtype)t->dtype))
        return sg__err(m->g->ctx, SG_ETYPE, "%s: result type %s can't be cast to the desired output type %s", m->op,
                       sg__dtype_name(d), sg__dtype_name((sg_dtype)t->dtype));
    const sg_expr *strides[SG_MAX_DIMS];
    uint32_t base = t->base; /* the tensor written stays a view of what it viewed */
    sg_status s;
    if (same) { /* the tensor itself, with a new number */
        for (size_t i = 0; i < n; i++)
            strides[i] = sg__graph_stride(m->g, dst, i);
        s = sg__meta_tensor(m, out, (sg_dtype)t->dtype, n, sizes, strides, t->offset, t->storage);
    } else { /* out= resized: laid out as the functional result (TensorIterator restrides it) */
        operands c = *o;
        uint32_t storage = t->storage;
        const sg_expr *offset = t->offset;
        s = convert_inputs(m, &c, common_dtype(m, &c));
        if (!s)
            s = result_strides(m, &c, sizes, n, strides);
        if (!s)
            s = sg__meta_tensor(m, out, (sg_dtype)sg__mt(m, dst)->dtype, n, sizes, strides, offset, storage);
        if (!s)
            s = sg__meta_grow_storage(m, *out);
    }
    if (!s)
        m->g->vals[*out].u.t.base = base; /* t may have moved: the values grew */
    return s;
}

/* The dtype TensorIterator computes in: the promoted type, made float for
 * the operators that promote integers to float. */
static sg_dtype common_dtype(sg__mcall *m, const operands *o)
{
    sg_dtype d = (sg_dtype)combine(o->rs.dim, combine(o->rs.zero, o->rs.wrapped));
    unsigned k = kind_of(m->s);
    return (k == SG_PW_FLOAT || k == SG_PW_DIV) && !is_float(d) ? SG_FLOAT64 : d;
}

/* Inputs of another dtype than the common one take part as converted
 * copies (Tensor.to: a non-overlapping and dense tensor keeps its strides,
 * another one is laid out densely in its own order of dimensions). */
static sg_status convert_inputs(sg__mcall *m, operands *o, sg_dtype common)
{
    for (size_t k = 0; k < o->n; k++) {
        const sg__fake_tensor *t = sg__mt(m, o->t[k]);
        if ((int)k == o->cond || t->dtype == common || t->ndim == 0)
            continue;
        sg_status s = sg__meta_like_strides(m, o->t[k], o->copy[k]);
        if (s)
            return s;
        o->st[k] = o->copy[k];
    }
    return SG_OK;
}

/* ---- constant layouts: the same rule in int64 ----
 *
 * Where every size and stride of the operands is a constant (eager
 * execution, static shapes), the rule above asks nothing of the environment:
 * each question is a comparison of two integers. The functions below take
 * the same decisions in the same order over int64 values, and make the
 * result's expressions once at the end (integers are interned: the same
 * value is the same node, so the result is the very one the general path
 * makes; test_graph compares the two on many layouts). Anything else (an
 * error to report, an out= argument, converted inputs, a partial overlap,
 * an overflow) is left to the general path, which decides it as before. */

/* The value of a constant that fits an fmpz's small form (|v| < 2**62). */
static inline bool small_const(const sg_expr *e, int64_t *v)
{
    if (e->op != SG_OP_INT || COEFF_IS_MPZ(e->u.val))
        return false;
    *v = (int64_t)e->u.val;
    return true;
}

typedef struct {
    size_t ndim[MAX_OPS];
    int64_t size[MAX_OPS][SG_MAX_DIMS], stride[MAX_OPS][SG_MAX_DIMS];
} clayout;

/* Each operand's sizes and strides as int64 (false: one is no small constant). */
static bool load_const(sg__mcall *m, const operands *o, clayout *L)
{
    for (size_t k = 0; k < o->n; k++) {
        const sg__fake_tensor *t = sg__mt(m, o->t[k]);
        const sg_expr *const *e = m->g->exprs + t->dims;
        if (o->st[k])
            return false;
        L->ndim[k] = t->ndim;
        for (uint32_t d = 0; d < t->ndim; d++)
            if (!small_const(e[d], &L->size[k][d]) || !small_const(e[t->ndim + d], &L->stride[k][d]))
                return false;
    }
    return true;
}

static bool numel_const(const int64_t *sizes, size_t n, int64_t *out)
{
    int64_t p = 1;
    for (size_t d = 0; d < n; d++)
        if (__builtin_mul_overflow(p, sizes[d], &p))
            return false;
    *out = p;
    return true;
}

/* check_overlaps of dst (operand kd) where it finds nothing: true; false
 * where it may refuse or must look further (the general path decides). */
static bool no_overlap_const(sg__mcall *m, const operands *o, const clayout *L, size_t kd)
{
    uint32_t dst = o->t[kd];
    if (named(m->s->name, "fill_") || named(m->s->name, "zero_") ||
        (named(m->s->name, "copy_") && m->a[1].kind == SG_A_VALUE && m->a[1].u.v == dst))
        return true;
    int64_t numel;
    if (!numel_const(L->size[kd], L->ndim[kd], &numel))
        return false;
    for (size_t d = 0; d < L->ndim[kd] && numel; d++)
        if (L->stride[kd][d] == 0 && L->size[kd][d] != 1)
            return false; /* an internal overlap: refused */
    for (size_t k = 0; k < o->n; k++)
        if (o->t[k] != dst && sg__mt(m, o->t[k])->storage == sg__mt(m, dst)->storage)
            return false; /* another view of the written storage: partial_overlap */
    return true;
}

/* broadcast over constants: sizes as values (and as the operands'
 * expressions, which the result takes); false where they do not broadcast. */
static bool broadcast_const(sg__mcall *m, const operands *o, const clayout *L, int64_t *sz, const sg_expr **out,
                            size_t *ndim)
{
    size_t n = 0;
    for (size_t k = 0; k < o->n; k++)
        n = L->ndim[k] > n ? L->ndim[k] : n;
    for (size_t i = 0; i < n; i++) {
        sz[i] = 1;
        out[i] = m->g->ctx->one;
    }
    for (size_t k = 0; k < o->n; k++)
        for (size_t j = 0; j < L->ndim[k]; j++) {
            size_t at = n - L->ndim[k] + j;
            int64_t s = L->size[k][j];
            if (sz[at] == 1) {
                sz[at] = s;
                out[at] = sg__graph_size(m->g, o->t[k], j);
            } else if (s != 1 && s != sz[at]) {
                return false;
            }
        }
    *ndim = n;
    return true;
}

/* Contiguous strides (max(size, 1) as sg__meta_contiguous); false on overflow. */
static bool contiguous_const(const int64_t *sizes, size_t n, int64_t *st)
{
    int64_t acc = 1;
    for (size_t i = n; i-- > 0;) {
        st[i] = acc;
        if (__builtin_mul_overflow(acc, sizes[i] < 1 ? 1 : sizes[i], &acc))
            return false;
    }
    return true;
}

static bool same_shapes_const(const operands *o, const clayout *L, const int64_t *sz, size_t n)
{
    if (o->scalar && n != 0)
        return false;
    for (size_t k = 0; k < o->n; k++) {
        if (L->ndim[k] != n)
            return false;
        for (size_t d = 0; d < n; d++)
            if (L->size[k][d] != sz[d])
                return false;
    }
    return true;
}

/* known_contiguous of operand k. */
static bool contiguous_operand(const clayout *L, size_t k, bool *out)
{
    size_t n = L->ndim[k];
    int64_t want[SG_MAX_DIMS];
    *out = true;
    for (size_t d = 0; d < n; d++)
        if (L->size[k][d] == 0)
            return true;
    if (!contiguous_const(L->size[k], n, want))
        return false;
    for (size_t d = 0; d < n && *out; d++)
        if (L->size[k][d] != 1)
            *out = want[d] == L->stride[k][d];
    return true;
}

/* channels_last of operand k. */
static bool channels_last_operand(const clayout *L, size_t k, bool *out)
{
    static const int order[4] = {1, 3, 2, 0};
    *out = L->ndim[k] == 4;
    int64_t expected = 1;
    for (int i = 0; i < 4 && *out; i++) {
        int d = order[i];
        if (L->size[k][d] == 1)
            continue;
        *out = L->stride[k][d] == expected;
        if (__builtin_mul_overflow(expected, L->size[k][d], &expected))
            return false;
    }
    return true;
}

/* should_swap over the expanded strides ex of the operands. */
static int should_swap_const(int64_t (*ex)[SG_MAX_DIMS], size_t nops, const int64_t *sz, size_t a, size_t b)
{
    for (size_t k = 0; k < nops; k++) {
        int64_t sa = ex[k][a], sb = ex[k][b];
        if (sa == 0 || sb == 0)
            continue;
        if (sa < sb)
            return -1;
        if (sa > sb)
            return 1;
        if (sz[a] > sz[b])
            return 1;
    }
    return 0;
}

/* layout_strides over the first nops operands. */
static bool layout_const(const clayout *L, size_t nops, const int64_t *sz, size_t n, int64_t *st)
{
    if (n <= 1)
        return contiguous_const(sz, n, st);
    int64_t ex[MAX_OPS][SG_MAX_DIMS];
    for (size_t k = 0; k < nops; k++)
        for (size_t i = 0; i < n; i++) {
            size_t lead = n - L->ndim[k];
            ex[k][i] = i < lead || L->size[k][i - lead] != sz[i] ? 0 : L->stride[k][i - lead];
        }
    size_t perm[SG_MAX_DIMS];
    for (size_t i = 0; i < n; i++)
        perm[i] = n - 1 - i;
    for (size_t i = 1; i < n; i++) {
        size_t d1 = i;
        for (size_t d0 = i; d0-- > 0;) {
            int c = should_swap_const(ex, nops, sz, perm[d0], perm[d1]);
            if (c > 0) {
                size_t x = perm[d0];
                perm[d0] = perm[d1];
                perm[d1] = x;
                d1 = d0;
            } else if (c < 0) {
                break;
            }
        }
    }
    bool inverted = true;
    for (size_t i = 0; i < n; i++)
        inverted &= perm[i] == n - 1 - i;
    if (inverted)
        return contiguous_const(sz, n, st);
    int64_t next = 1;
    for (size_t i = 0; i < n; i++) {
        st[perm[i]] = next;
        if (__builtin_mul_overflow(next, sz[perm[i]], &next))
            return false;
    }
    return true;
}

/* result_strides over constants; *own: the result takes operand 0's
 * strides (same_layout). False on overflow. */
static bool result_strides_const(const operands *o, const clayout *L, const int64_t *sz, size_t n, int64_t *st,
                                 bool *own)
{
    *own = false;
    bool shapes = same_shapes_const(o, L, sz, n), all = shapes;
    for (size_t k = 0; k < o->n && all; k++)
        if (!contiguous_operand(L, k, &all))
            return false;
    if (n <= 1 || all)
        return contiguous_const(sz, n, st);
    bool cl = shapes;
    for (size_t k = 0; k < o->n && cl; k++)
        if (!channels_last_operand(L, k, &cl))
            return false;
    if (cl) {
        st[1] = 1;
        st[3] = sz[1];
        return !__builtin_mul_overflow(st[3], sz[3], &st[2]) && !__builtin_mul_overflow(st[2], sz[2], &st[0]);
    }
    bool same = shapes; /* same_layout */
    for (size_t k = 1; k < o->n && same; k++)
        for (size_t d = 0; d < n && same; d++)
            same = L->stride[0][d] == L->stride[k][d];
    if (same) {
        int64_t lay[SG_MAX_DIMS];
        if (!layout_const(L, 1, sz, n, lay))
            return false;
        for (size_t d = 0; d < n && same; d++)
            same = sz[d] == 1 || L->stride[0][d] == lay[d];
        if (same) {
            *own = true;
            return true;
        }
    }
    return layout_const(L, o->n, sz, n, st);
}

/* The rule over constant layouts; *done false where the general path must
 * decide (nothing made then). */
static sg_status pointwise_const(sg__mcall *m, operands *o, uint32_t *out, bool *done)
{
    *done = false;
    if (o->out >= 0 || m->g->general_rules)
        return SG_OK;
    clayout L;
    if (!load_const(m, o, &L))
        return SG_OK;
    bool inplace = (m->s->flags & SG_OPF_INPLACE) != 0;
    if (inplace) {
        size_t kd = 0;
        while (kd < o->n && o->t[kd] != m->a[0].u.v)
            kd++;
        if (kd == o->n || !no_overlap_const(m, o, &L, kd))
            return SG_OK;
    }
    int64_t sz[SG_MAX_DIMS];
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
    size_t n;
    if (!broadcast_const(m, o, &L, sz, sizes, &n))
        return SG_OK;
    sg_dtype d = SG_FLOAT64;
    sg_status s = result_dtype(m, o, &d);
    if (s) {
        *done = true;
        return s;
    }
    if (inplace) {
        *done = true;
        return into(m, o, m->a[0].u.v, "self", d, sizes, n, out);
    }
    sg_dtype common = common_dtype(m, o);
    for (size_t k = 0; k < o->n; k++)
        if ((int)k != o->cond && sg__mt(m, o->t[k])->dtype != common && L.ndim[k] != 0)
            return SG_OK; /* converted copies */
    int64_t st[SG_MAX_DIMS];
    bool own;
    if (!result_strides_const(o, &L, sz, n, st, &own))
        return SG_OK;
    for (size_t i = 0; i < n; i++)
        if (!(strides[i] = own ? sg__graph_stride(m->g, o->t[0], i) : sg__int_si(m->g->ctx, st[i])))
            return sg_ctx_last_error(m->g->ctx);
    *done = true;
    return sg__meta_tensor(m, out, d, n, sizes, strides, m->g->ctx->zero, SG_NOVAL);
}

sg_status sg__meta_pointwise(sg__mcall *m, uint32_t *out)
{
    operands o;
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
    size_t n;
    sg_dtype d = SG_FLOAT64;
    sg_status s = collect(m, &o);
    if (!s) {
        bool done;
        s = pointwise_const(m, &o, out, &done);
        if (s || done)
            return s;
    }
    if (!s && (m->s->flags & SG_OPF_INPLACE))
        s = check_overlaps(m, &o, m->a[0].u.v);
    else if (!s && o.out >= 0)
        s = check_overlaps(m, &o, m->a[o.out].u.v);
    if (!s)
        s = broadcast(m, &o, sizes, &n);
    if (!s)
        s = result_dtype(m, &o, &d);
    if (s)
        return s;
    if (m->s->flags & SG_OPF_INPLACE)
        return into(m, &o, m->a[0].u.v, "self", d, sizes, n, out);
    if (o.out >= 0)
        return into(m, &o, m->a[o.out].u.v, "out", d, sizes, n, out);
    if ((s = convert_inputs(m, &o, common_dtype(m, &o))) || (s = result_strides(m, &o, sizes, n, strides)))
        return s;
    return sg__meta_tensor(m, out, d, n, sizes, strides, m->g->ctx->zero, SG_NOVAL);
}
