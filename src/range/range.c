/* Value ranges of expressions: one walk over the DAG that combines the
 * ranges of the arguments of each node with the interval arithmetic of
 * interval.c and bitwise.c, a cache by node id, and the public entry point
 * sg_range_of.
 *
 * Soundness covers the values an expression takes where it can be
 * evaluated: a node that fails to evaluate (a zero divisor, a negative
 * exponent) has no value, and the operations that may hide a failing
 * operand (a zero factor of a product, a decided And/Or, the arm a Where
 * does not take) are bounded by the ranges of the operands that decide
 * them, so every nonempty range given to a failing operand keeps them
 * sound. */
#include <stdlib.h>

#include "range/range_ops.h"
#include "shapeguard/range.h"

/* ---- the cache: node id -> interval ------------------------------------ */

struct sg__range_cache {
    sg__idmap index; /* node id -> slot in ivs */
    sg__iv *ivs;     /* owned: cleared on clear/free */
    size_t n, cap;
};

sg__range_cache *sg__range_cache_new(sg_ctx *ctx)
{
    sg__range_cache *c = sg__calloc(ctx, 1, sizeof *c);
    if (c && !sg__idmap_init(ctx, &c->index, 16)) {
        sg__idmap_free(&c->index);
        sg_free(c);
        return NULL;
    }
    return c;
}

void sg__range_cache_clear(sg__range_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        sg__iv_clear(&c->ivs[i]);
    c->n = 0;
    sg__idmap_reset(&c->index);
}

void sg__range_cache_free(sg__range_cache *c)
{
    if (!c)
        return;
    sg__range_cache_clear(c);
    sg__idmap_free(&c->index);
    sg_free(c->ivs);
    sg_free(c);
}

static const sg__iv *cache_get(const sg__range_cache *c, const sg_expr *e)
{
    size_t *i = sg__idmap_find(&c->index, e->id);
    return i ? &c->ivs[*i] : NULL;
}

static bool cache_put(sg__range_cache *c, const sg_expr *e, const sg__iv *iv)
{
    if (!sg__grow(c->index.ctx, (void **)&c->ivs, &c->cap, c->n + 1, sizeof *c->ivs))
        return false;
    if (!sg__idmap_put(&c->index, e->id, c->n))
        return false;
    sg__iv_init(&c->ivs[c->n]);
    sg__iv_set(&c->ivs[c->n], iv);
    c->n++;
    return true;
}

/* ---- the walk ------------------------------------------------------------ */

typedef struct walker {
    sg_ctx *ctx;
    sg__atom_range_fn fn;
    void *user;
    sg__range_cache *cache;
    ulong cap; /* bits beyond which powers are not computed */
} walker;

static sg_status walk(walker *W, const sg_expr *e, sg__iv *out);

static bool is_true(const sg__iv *b)
{
    return !b->lo_inf && fmpz_is_one(&b->lo);
}

static bool is_false(const sg__iv *b)
{
    return !b->hi_inf && fmpz_is_zero(&b->hi);
}

/* The structural range of a node with arguments into out. */
static sg_status node_range(walker *W, const sg_expr *e, sg__iv *out)
{
    sg_status s = SG_OK;
    sg__iv a, b;
    sg__iv_init(&a), sg__iv_init(&b);
    switch ((sg_op)e->op) {
    case SG_OP_ADD: {
        /* c + sum k_i * range(m_i): exact for independent monomials */
        const fmpz *k = sg__nums(e);
        sg__iv_set_point(out, &e->u.val);
        for (size_t i = 0; i < e->nargs && !s; i++) {
            if (!(s = walk(W, e->args[i], &a))) {
                sg__iv_scale(&a, &a, k + i);
                sg__iv_add(out, out, &a);
            }
        }
        break;
    }
    case SG_OP_MUL: {
        /* prod range(a_i) ** e_i */
        const fmpz *k = sg__nums(e);
        for (size_t i = 0; i < e->nargs && !s; i++) {
            if (!(s = walk(W, e->args[i], &a))) {
                sg__iv_pow_nat(&a, &a, k + i, W->cap);
                if (i == 0)
                    sg__iv_swap(out, &a);
                else
                    sg__iv_mul(out, out, &a);
            }
        }
        break;
    }
    case SG_OP_POW:
        if (!(s = walk(W, e->args[0], &a)) && !(s = walk(W, e->args[1], &b)))
            sg__iv_pow(out, &a, &b, W->cap);
        break;
    case SG_OP_FLOORDIV:
    case SG_OP_MOD:
    case SG_OP_CLEANDIV:
    case SG_OP_TRUNCDIV:
    case SG_OP_TRUNCMOD:
        if ((s = walk(W, e->args[0], &a)) || (s = walk(W, e->args[1], &b)))
            break;
        switch ((sg_op)e->op) {
        case SG_OP_FLOORDIV: sg__iv_floordiv(out, &a, &b); break;
        case SG_OP_MOD: sg__iv_mod(out, &a, &b); break;
        case SG_OP_CLEANDIV: sg__iv_cleandiv(out, &a, &b); break;
        case SG_OP_TRUNCDIV: sg__iv_truncdiv(out, &a, &b); break;
        default: sg__iv_truncmod(out, &a, &b); break;
        }
        break;
    case SG_OP_MIN:
    case SG_OP_MAX:
    case SG_OP_BAND:
    case SG_OP_BOR:
    case SG_OP_BXOR:
        /* a left fold: each partial result lies in the partial range */
        for (size_t i = 0; i < e->nargs && !s; i++) {
            if ((s = walk(W, e->args[i], &a)))
                break;
            if (i == 0)
                sg__iv_swap(out, &a);
            else if (e->op == SG_OP_MIN)
                sg__iv_min(out, out, &a);
            else if (e->op == SG_OP_MAX)
                sg__iv_max(out, out, &a);
            else
                sg__iv_bitop(out, (sg_op)e->op, out, &a);
        }
        break;
    case SG_OP_ABS:
        if (!(s = walk(W, e->args[0], &a)))
            sg__iv_abs(out, &a);
        break;
    case SG_OP_WHERE:
        /* the arm a decided condition takes, else the union of the arms */
        if ((s = walk(W, e->args[0], &a)))
            break;
        if (is_true(&a)) {
            s = walk(W, e->args[1], out);
        } else if (is_false(&a)) {
            s = walk(W, e->args[2], out);
        } else if (!(s = walk(W, e->args[1], out)) && !(s = walk(W, e->args[2], &b))) {
            sg__iv_hull(out, &b);
        }
        break;
    case SG_OP_GE0:
    case SG_OP_EQ0:
    case SG_OP_NE0: {
        if ((s = walk(W, e->args[0], &a)))
            break;
        bool can_neg = a.lo_inf || fmpz_sgn(&a.lo) < 0, can_pos = a.hi_inf || fmpz_sgn(&a.hi) > 0;
        bool can_zero = (a.lo_inf || fmpz_sgn(&a.lo) <= 0) && (a.hi_inf || fmpz_sgn(&a.hi) >= 0);
        bool can_nonneg = can_pos || can_zero;
        if (e->op == SG_OP_GE0)
            sg__iv_set_bool(out, can_neg, can_nonneg);
        else if (e->op == SG_OP_EQ0)
            sg__iv_set_bool(out, can_neg || can_pos, can_zero);
        else
            sg__iv_set_bool(out, can_zero, can_neg || can_pos);
        break;
    }
    case SG_OP_AND:
    case SG_OP_OR: {
        /* And: true only if every argument can be true, false if any can
         * be false (Or dually); an argument that decides stops the walk */
        bool want = e->op == SG_OP_OR; /* the value that decides */
        bool can_decide = false, all_can_other = true, decided = false;
        for (size_t i = 0; i < e->nargs && !s && !decided; i++) {
            if ((s = walk(W, e->args[i], &a)))
                break;
            bool can_t = a.hi_inf || !fmpz_is_zero(&a.hi), can_f = a.lo_inf || fmpz_is_zero(&a.lo);
            bool can_want = want ? can_t : can_f, can_other = want ? can_f : can_t;
            can_decide = can_decide || can_want;
            all_can_other = all_can_other && can_other;
            decided = !can_other;
        }
        if (!s) {
            if (decided)
                all_can_other = false, can_decide = true;
            if (want)
                sg__iv_set_bool(out, all_can_other, can_decide);
            else
                sg__iv_set_bool(out, can_decide, all_can_other);
        }
        break;
    }
    default:
        s = sg__err(W->ctx, SG_EINTERNAL, "range: unexpected node kind %d", e->op);
    }
    sg__iv_clear(&a), sg__iv_clear(&b);
    return s;
}

/* The range of e into out (initialized). */
static sg_status walk(walker *W, const sg_expr *e, sg__iv *out)
{
    switch ((sg_op)e->op) {
    case SG_OP_INT:
        sg__iv_set_point(out, &e->u.val);
        return SG_OK;
    case SG_OP_TRUE:
    case SG_OP_FALSE:
        sg__iv_set_bool(out, e->op == SG_OP_FALSE, e->op == SG_OP_TRUE);
        return SG_OK;
    default:
        break;
    }
    const sg__iv *c = cache_get(W->cache, e);
    if (c) {
        sg__iv_set(out, c);
        return SG_OK;
    }
    sg_status s = SG_OK;
    if (e->op == SG_OP_SYM)
        sg__iv_set_full(out);
    else if ((s = node_range(W, e, out)))
        return s;
    if (W->fn && sg__is_atom(e)) {
        /* what the caller knows of the atom narrows its structural range;
         * if the two contradict each other (an empty intersection: the
         * caller's facts are inconsistent), the structural range is kept */
        sg__iv k, m;
        sg__iv_init(&k), sg__iv_init(&m);
        if (W->fn(W->user, e, &k)) {
            sg__iv_set(&m, out);
            if (sg__iv_meet(&m, &k))
                sg__iv_swap(out, &m);
        }
        sg__iv_clear(&k), sg__iv_clear(&m);
    }
    if (!cache_put(W->cache, e, out))
        return sg__nomem(W->ctx);
    return SG_OK;
}

sg_status sg__range(sg_ctx *ctx, const sg_expr *e, sg__atom_range_fn fn, void *user, sg__range_cache *cache,
                    sg__iv *out)
{
    sg__range_cache *own = NULL;
    if (!cache && !(cache = own = sg__range_cache_new(ctx)))
        return sg__nomem(ctx);
    walker W = {ctx, fn, user, cache, (ulong)ctx->max_bits};
    sg_status s = walk(&W, e, out);
    sg__range_cache_free(own);
    return s;
}

/* ---- the public entry point ---------------------------------------------- */

typedef struct box {
    sg__idmap index; /* symbol id -> slot in ivs */
    sg__iv *ivs;
} box;

static bool box_range(void *user, const sg_expr *atom, sg__iv *out)
{
    const box *B = user;
    size_t *i = atom->op == SG_OP_SYM ? sg__idmap_find(&B->index, atom->id) : NULL;
    if (i)
        sg__iv_set(out, &B->ivs[*i]);
    return i != NULL;
}

/* Set bound from a constant expression (NULL: infinite). */
static void bound_of(const sg_expr *x, fmpz *v, bool *inf)
{
    *inf = x == NULL;
    if (x)
        fmpz_set(v, &x->u.val);
}

/* Validation, in this order, each an SG_EINVAL with a message naming the
 * argument: ctx NULL (no message: there is no context to hold it); out or
 * e NULL; n > 0 with syms or ranges NULL; syms[i] NULL or not a symbol;
 * ranges[i].lo or .hi neither NULL nor an integer constant; lo > hi; a
 * symbol given twice whose two ranges do not meet (two ranges of one
 * symbol are intersected). On an error *out (if out is not NULL) is
 * {NULL, NULL}. The context's error state is left alone on success. */
sg_status sg_range_of(sg_ctx *ctx, sg_interval *out, const sg_expr *e, size_t n, const sg_expr *const *syms,
                      const sg_interval *ranges)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out)
        return sg__err(ctx, SG_EINVAL, "sg_range_of: out is NULL");
    out->lo = out->hi = NULL;
    if (!e)
        return sg__err(ctx, SG_EINVAL, "sg_range_of: the expression is NULL");
    if (n && (!syms || !ranges))
        return sg__err(ctx, SG_EINVAL, "sg_range_of: syms or ranges is NULL");
    for (size_t i = 0; i < n; i++) {
        if (!syms[i] || syms[i]->op != SG_OP_SYM)
            return sg__err(ctx, SG_EINVAL, "sg_range_of: syms[%zu] is not a symbol", i);
        const sg_expr *lo = ranges[i].lo, *hi = ranges[i].hi;
        if ((lo && lo->op != SG_OP_INT) || (hi && hi->op != SG_OP_INT))
            return sg__err(ctx, SG_EINVAL, "sg_range_of: ranges[%zu] has a bound that is not an integer constant",
                           i);
        if (lo && hi && fmpz_cmp(&lo->u.val, &hi->u.val) > 0)
            return sg__err(ctx, SG_EINVAL, "sg_range_of: ranges[%zu] has lo > hi", i);
    }
    box B = {.ivs = NULL};
    sg__iv r;
    sg__iv_init(&r);
    sg_status s = SG_OK;
    size_t nb = 0;
    if (!sg__idmap_init(ctx, &B.index, n) || (n && !(B.ivs = sg__malloc(ctx, n * sizeof *B.ivs)))) {
        s = sg__nomem(ctx);
        goto done;
    }
    for (size_t i = 0; i < n && !s; i++) {
        size_t *slot = sg__idmap_find(&B.index, syms[i]->id);
        sg__iv *iv = slot ? &B.ivs[*slot] : &B.ivs[nb];
        sg__iv_set_full(&r);
        bound_of(ranges[i].lo, &r.lo, &r.lo_inf);
        bound_of(ranges[i].hi, &r.hi, &r.hi_inf);
        if (slot) {
            if (!sg__iv_meet(iv, &r))
                s = sg__err(ctx, SG_EINVAL, "sg_range_of: the ranges given for symbol '%s' do not meet",
                            syms[i]->u.name);
        } else if (!sg__idmap_put(&B.index, syms[i]->id, nb)) {
            s = sg__nomem(ctx);
        } else {
            sg__iv_init(iv);
            sg__iv_set(iv, &r);
            nb++;
        }
    }
    if (!s)
        s = sg__range(ctx, e, box_range, &B, NULL, &r);
    if (!s) {
        if (e->sort == SG_SORT_BOOL) {
            out->lo = fmpz_is_zero(&r.lo) ? ctx->f : ctx->t;
            out->hi = fmpz_is_zero(&r.hi) ? ctx->f : ctx->t;
        } else {
            const sg_expr *lo = r.lo_inf ? NULL : sg__int_fmpz(ctx, &r.lo);
            const sg_expr *hi = r.hi_inf ? NULL : sg__int_fmpz(ctx, &r.hi);
            if ((!r.lo_inf && !lo) || (!r.hi_inf && !hi))
                s = ctx->err;
            else
                out->lo = lo, out->hi = hi;
        }
    }
done:
    for (size_t i = 0; i < nb; i++)
        sg__iv_clear(&B.ivs[i]);
    sg_free(B.ivs);
    sg__idmap_free(&B.index);
    sg__iv_clear(&r);
    return s;
}
