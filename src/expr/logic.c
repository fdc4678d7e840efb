/* Relations and boolean connectives. Every integer relation becomes one of
 * p >= 0, p == 0, p != 0 with p a canonical polynomial divided by the gcd of
 * its non-constant coefficients (rounded correctly); negation is pushed down
 * to relations, so formulas are in negation normal form. */
#include <stdlib.h>

#include "expr/expr_private.h"

static const sg_expr *node1(sg_ctx *ctx, sg_op op, const sg_expr *p)
{
    const sg_expr *args[1] = {p};
    return sg__intern(ctx, op, SG_SORT_BOOL, 1, args, NULL, NULL, NULL, 0);
}

const sg_expr *sg__rel0(sg_ctx *ctx, sg_op op, const sg_expr *p)
{
    if (p->op == SG_OP_INT) {
        int s = fmpz_sgn(&p->u.val);
        return sg__bool(ctx, op == SG_OP_GE0 ? s >= 0 : op == SG_OP_EQ0 ? s == 0 : s != 0);
    }
    sg__poly q;
    sg__poly_init(&q);
    const sg_expr *res = NULL;
    if (!sg__poly_set(ctx, &q, p))
        goto done;
    sg__poly_normalize(&q);
    fmpz_t g;
    fmpz_init(g);
    sg__poly_content(g, &q);
    if (op == SG_OP_GE0) {
        /* g*y + c >= 0  <=>  y >= -c/g  <=>  y >= ceil(-c/g)  <=>  y + floor(c/g) >= 0 */
        fmpz_fdiv_q(&q.c, &q.c, g);
    } else {
        /* g*y + c == 0 needs g | c; sign chosen so the leading coefficient is positive */
        if (!fmpz_divisible(&q.c, g)) {
            res = sg__bool(ctx, op == SG_OP_NE0);
            fmpz_clear(g);
            goto done;
        }
        if (sg__poly_lead_sign(&q) < 0)
            fmpz_neg(g, g);
        fmpz_divexact(&q.c, &q.c, g);
    }
    for (size_t i = 0; i < q.n; i++)
        fmpz_divexact(&q.t[i].k, &q.t[i].k, g);
    fmpz_clear(g);
    const sg_expr *np = sg__poly_get(ctx, &q);
    res = np ? node1(ctx, op, np) : NULL;
done:
    sg__poly_clear(&q);
    return res;
}

static const sg_expr *bool_iff(sg_ctx *ctx, const sg_expr *a, const sg_expr *b, bool equal)
{
    /* a == b: (a and b) or (not a and not b); a != b: (a and not b) or (not a and b) */
    const sg_expr *na = sg__not(ctx, a), *nb = na ? sg__not(ctx, b) : NULL;
    if (!nb)
        return NULL;
    const sg_expr *l[2] = {a, equal ? b : nb}, *r[2] = {na, equal ? nb : b};
    const sg_expr *x = sg__andor(ctx, SG_OP_AND, 2, l), *y = x ? sg__andor(ctx, SG_OP_AND, 2, r) : NULL;
    const sg_expr *o[2] = {x, y};
    return y ? sg__andor(ctx, SG_OP_OR, 2, o) : NULL;
}

const sg_expr *sg__rel(sg_ctx *ctx, sg_rel rel, const sg_expr *a, const sg_expr *b)
{
    if (a->sort == SG_SORT_BOOL)
        return bool_iff(ctx, a, b, rel == SG_REL_EQ);
    const sg_expr *d;
    switch (rel) {
    case SG_REL_EQ:
    case SG_REL_NE:
        d = sg__sub(ctx, a, b);
        return d ? sg__rel0(ctx, rel == SG_REL_EQ ? SG_OP_EQ0 : SG_OP_NE0, d) : NULL;
    case SG_REL_GE:
        d = sg__sub(ctx, a, b);
        break;
    case SG_REL_LE:
        d = sg__sub(ctx, b, a);
        break;
    case SG_REL_GT: /* a > b <=> a - b - 1 >= 0 over the integers */
        d = sg__sub(ctx, a, b);
        d = d ? sg__add(ctx, d, ctx->minus_one) : NULL;
        break;
    default: /* SG_REL_LT */
        d = sg__sub(ctx, b, a);
        d = d ? sg__add(ctx, d, ctx->minus_one) : NULL;
        break;
    }
    return d ? sg__rel0(ctx, SG_OP_GE0, d) : NULL;
}

const sg_expr *sg__not(sg_ctx *ctx, const sg_expr *a)
{
    switch ((sg_op)a->op) {
    case SG_OP_TRUE:
        return ctx->f;
    case SG_OP_FALSE:
        return ctx->t;
    case SG_OP_EQ0:
        return node1(ctx, SG_OP_NE0, a->args[0]);
    case SG_OP_NE0:
        return node1(ctx, SG_OP_EQ0, a->args[0]);
    case SG_OP_GE0: { /* not (p >= 0) <=> -p - 1 >= 0 */
        const sg_expr *n = sg__neg(ctx, a->args[0]);
        n = n ? sg__add(ctx, n, ctx->minus_one) : NULL;
        return n ? node1(ctx, SG_OP_GE0, n) : NULL;
    }
    case SG_OP_AND:
    case SG_OP_OR: {
        const sg_expr **neg = sg__malloc(ctx, a->nargs * sizeof *neg);
        if (!neg)
            return sg__nomem(ctx), NULL;
        const sg_expr *res = NULL;
        size_t i;
        for (i = 0; i < a->nargs; i++)
            if (!(neg[i] = sg__not(ctx, a->args[i])))
                break;
        if (i == a->nargs)
            res = sg__andor(ctx, a->op == SG_OP_AND ? SG_OP_OR : SG_OP_AND, a->nargs, neg);
        sg_free(neg);
        return res;
    }
    default:
        return sg__err(ctx, SG_EINTERNAL, "not: unexpected node"), NULL;
    }
}

static bool has(const sg_expr *const *list, size_t n, const sg_expr *x)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == x)
            return true;
    return false;
}

/* Among p + a >= 0 and p + b >= 0 keep one: the stronger (And, smaller
 * offset) or the weaker (Or, larger). For p + a >= 0 and -p + b >= 0: And is
 * false when a + b < 0 and p + a == 0 when a + b == 0; Or is true when
 * a + b >= -1 and p + a + 1 != 0 when a + b == -2. Entries replaced are set
 * to NULL; *decided is set when the whole connective is decided. Quadratic,
 * so only for short lists. */
#define SG_MERGE_MAX 64
static bool merge_bounds(sg_ctx *ctx, sg_op op, const sg_expr **list, size_t n, const sg_expr **decided)
{
    const sg_expr *base[SG_MERGE_MAX], *nbase[SG_MERGE_MAX];
    fmpz off[SG_MERGE_MAX];
    if (n > SG_MERGE_MAX)
        return true;
    bool ok = true;
    size_t i, j;
    for (i = 0; i < n; i++)
        fmpz_init(off + i);
    for (i = 0; i < n && ok; i++) {
        base[i] = nbase[i] = NULL;
        if (list[i]->op != SG_OP_GE0)
            continue;
        base[i] = sg__split_const(ctx, list[i]->args[0], off + i); /* p + c >= 0 */
        nbase[i] = base[i] ? sg__neg(ctx, base[i]) : NULL;
        ok = nbase[i] != NULL;
    }
    fmpz_t s;
    fmpz_init(s);
    for (i = 0; i < n && ok && !*decided; i++) {
        for (j = i + 1; j < n && ok && base[i] && !*decided; j++) {
            if (!base[j])
                continue;
            if (base[j] == base[i]) {
                int c = fmpz_cmp(off + j, off + i);
                if (op == SG_OP_AND ? c < 0 : c > 0) {
                    list[i] = list[j];
                    fmpz_set(off + i, off + j);
                }
                list[j] = NULL;
                base[j] = NULL;
                continue;
            }
            if (base[j] != nbase[i])
                continue;
            fmpz_add(s, off + i, off + j);
            if (op == SG_OP_AND && fmpz_sgn(s) < 0) {
                *decided = ctx->f;
            } else if (op == SG_OP_OR && fmpz_cmp_si(s, -1) >= 0) {
                *decided = ctx->t;
            } else if ((op == SG_OP_AND && fmpz_is_zero(s)) || (op == SG_OP_OR && fmpz_cmp_si(s, -2) == 0)) {
                /* And: p + a == 0. Or: only p + a == -1 is left out, so p + a + 1 != 0. */
                const sg_expr *q = list[i]->args[0];
                if (op == SG_OP_OR)
                    q = sg__add(ctx, q, ctx->one);
                list[i] = q ? sg__rel0(ctx, op == SG_OP_AND ? SG_OP_EQ0 : SG_OP_NE0, q) : NULL;
                ok = list[i] != NULL;
                list[j] = NULL;
                base[i] = base[j] = NULL;
            }
        }
    }
    fmpz_clear(s);
    for (i = 0; i < n; i++)
        fmpz_clear(off + i);
    return ok;
}

const sg_expr *sg__andor(sg_ctx *ctx, sg_op op, size_t n, const sg_expr *const *args)
{
    const sg_expr *absorb = op == SG_OP_AND ? ctx->f : ctx->t;
    const sg_expr *ident = op == SG_OP_AND ? ctx->t : ctx->f;
    sg_op dual = op == SG_OP_AND ? SG_OP_OR : SG_OP_AND;
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += args[i]->op == op ? args[i]->nargs : 1;
    const sg_expr **list = sg__malloc(ctx, (total ? total : 1) * sizeof *list);
    if (!list)
        return sg__nomem(ctx), NULL;
    size_t k = 0;
    const sg_expr *res = NULL, *decided = NULL;
    for (size_t i = 0; i < n && !decided; i++) {
        if (args[i] == absorb)
            decided = absorb;
        else if (args[i]->op == op)
            for (size_t j = 0; j < args[i]->nargs; j++)
                list[k++] = args[i]->args[j];
        else if (args[i] != ident)
            list[k++] = args[i];
    }
    if (!decided && !merge_bounds(ctx, op, list, k, &decided))
        goto done;
    if (!decided) {
        size_t w = 0;
        for (size_t i = 0; i < k; i++)
            if (list[i])
                list[w++] = list[i];
        sg__sort_by_id(list, w);
        k = 0;
        for (size_t i = 0; i < w; i++)
            if (k == 0 || list[k - 1] != list[i])
                list[k++] = list[i];
        /* complements: x and not x is false; x or not x is true */
        for (size_t i = 0; i < k && !decided; i++) {
            const sg_expr *nx = sg__not(ctx, list[i]);
            if (!nx)
                goto done;
            if (has(list, k, nx))
                decided = absorb;
        }
    }
    if (decided) {
        res = decided;
        goto done;
    }
    /* absorption: x and (x or y) is x; x or (x and y) is x */
    size_t w = 0;
    for (size_t i = 0; i < k; i++) {
        bool absorbed = false;
        if (list[i]->op == dual)
            for (size_t j = 0; j < list[i]->nargs && !absorbed; j++)
                absorbed = has(list, k, list[i]->args[j]);
        if (!absorbed)
            list[w++] = list[i];
    }
    k = w;
    if (k == 0)
        res = ident;
    else if (k == 1)
        res = list[0];
    else
        res = sg__intern(ctx, op, SG_SORT_BOOL, k, list, NULL, NULL, NULL, 0);
done:
    sg_free(list);
    return res;
}
