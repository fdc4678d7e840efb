/* Min, Max, Abs, Where and the bitwise operators. */
#include <stdlib.h>

#include "expr/expr_private.h"
#include "num/num.h"

typedef struct {
    const sg_expr *base;
    fmpz off;
} based;

static int cmp_based(const void *a, const void *b)
{
    uint32_t x = ((const based *)a)->base->id, y = ((const based *)b)->base->id;
    return (x > y) - (x < y);
}

static bool contains(const sg_expr *outer, const sg_expr *x)
{
    for (size_t i = 0; i < outer->nargs; i++)
        if (outer->args[i] == x)
            return true;
    return false;
}

/* Flatten args of the same op into a malloc'd list. */
static const sg_expr **flatten(sg_ctx *ctx, sg_op op, size_t n, const sg_expr *const *args, size_t *count)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += args[i]->op == op ? args[i]->nargs : 1;
    const sg_expr **list = sg__malloc(ctx, (total ? total : 1) * sizeof *list);
    if (!list) {
        sg__nomem(ctx);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (args[i]->op == op)
            for (size_t j = 0; j < args[i]->nargs; j++)
                list[k++] = args[i]->args[j];
        else
            list[k++] = args[i];
    }
    *count = k;
    return list;
}

/* Sort by id and remove repeats. */
static size_t sort_unique(const sg_expr **a, size_t n)
{
    sg__sort_by_id(a, n);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || a[k - 1] != a[i])
            a[k++] = a[i];
    return k;
}

const sg_expr *sg__minmax(sg_ctx *ctx, sg_op op, size_t n, const sg_expr *const *args)
{
    size_t cnt;
    const sg_expr **list = flatten(ctx, op, n, args, &cnt);
    if (!list)
        return NULL;
    const sg_expr *res = NULL;
    based *b = sg__malloc(ctx, cnt * sizeof *b);
    if (!b) {
        sg_free(list);
        return sg__nomem(ctx), NULL;
    }
    /* Arguments that differ by a constant are decided: keep the larger
     * (Max) or smaller (Min) of each group with the same base. Constants
     * form one group (base 0). */
    size_t nb = 0;
    bool ok = true;
    for (size_t i = 0; i < cnt && ok; i++) {
        fmpz_init(&b[nb].off);
        b[nb].base = sg__split_const(ctx, list[i], &b[nb].off);
        ok = b[nb].base != NULL;
        nb++;
    }
    if (ok) {
        qsort(b, nb, sizeof *b, cmp_based);
        size_t k = 0;
        for (size_t i = 0; i < nb && ok; i++) {
            if (k > 0 && b[k - 1].base == b[i].base) {
                int c = fmpz_cmp(&b[i].off, &b[k - 1].off);
                if ((op == SG_OP_MAX && c > 0) || (op == SG_OP_MIN && c < 0))
                    fmpz_set(&b[k - 1].off, &b[i].off);
                continue;
            }
            if (k != i) {
                b[k].base = b[i].base;
                fmpz_set(&b[k].off, &b[i].off);
            }
            k++;
        }
        cnt = 0;
        for (size_t i = 0; i < k && ok; i++) {
            const sg_expr *off = sg__int_fmpz(ctx, &b[i].off);
            list[cnt] = off ? sg__add(ctx, b[i].base, off) : NULL;
            ok = list[cnt++] != NULL;
        }
    }
    for (size_t i = 0; i < nb; i++)
        fmpz_clear(&b[i].off);
    sg_free(b);
    if (ok) {
        /* Absorption: Min(x, Max(x, y)) = x and Max(x, Min(x, y)) = x. */
        sg_op dual = op == SG_OP_MAX ? SG_OP_MIN : SG_OP_MAX;
        size_t k = 0;
        for (size_t i = 0; i < cnt; i++) {
            bool absorbed = false;
            if (list[i]->op == dual)
                for (size_t j = 0; j < cnt && !absorbed; j++)
                    absorbed = j != i && contains(list[i], list[j]);
            if (!absorbed)
                list[k++] = list[i];
        }
        cnt = sort_unique(list, k);
        res = cnt == 1 ? list[0] : sg__intern(ctx, op, SG_SORT_INT, cnt, list, NULL, NULL, NULL, 0);
    }
    sg_free(list);
    return res;
}

const sg_expr *sg__abs(sg_ctx *ctx, const sg_expr *a)
{
    if (a->op == SG_OP_INT) {
        if (fmpz_sgn(&a->u.val) >= 0)
            return a;
        return sg__neg(ctx, a);
    }
    if (a->op == SG_OP_ABS)
        return a;
    /* Abs(g*A) = |g| * Abs(A), with A's leading coefficient positive. */
    sg__poly p;
    sg__poly_init(&p);
    const sg_expr *res = NULL;
    if (sg__poly_set(ctx, &p, a)) {
        sg__poly_normalize(&p);
        fmpz_t g;
        fmpz_init(g);
        sg__poly_content(g, &p);
        fmpz_gcd(g, g, &p.c);
        if (sg__poly_lead_sign(&p) < 0)
            fmpz_neg(g, g);
        for (size_t i = 0; i < p.n; i++)
            fmpz_divexact(&p.t[i].k, &p.t[i].k, g);
        fmpz_divexact(&p.c, &p.c, g);
        const sg_expr *A = sg__poly_get(ctx, &p);
        fmpz_abs(g, g);
        if (A) {
            const sg_expr *args[1] = {A};
            const sg_expr *node = A->op == SG_OP_ABS ? A : sg__intern(ctx, SG_OP_ABS, SG_SORT_INT, 1, args, NULL, NULL, NULL, 0);
            res = node ? sg__scale(ctx, node, g) : NULL;
        }
        fmpz_clear(g);
    }
    sg__poly_clear(&p);
    return res;
}

const sg_expr *sg__where(sg_ctx *ctx, const sg_expr *c, const sg_expr *a, const sg_expr *b)
{
    if (c == ctx->t)
        return a;
    if (c == ctx->f)
        return b;
    if (a == b)
        return a;
    if (a->sort == SG_SORT_BOOL) {
        /* (c and a) or (not c and b) */
        const sg_expr *nc = sg__not(ctx, c);
        const sg_expr *l[2] = {c, a}, *r[2] = {nc, b};
        const sg_expr *x = nc ? sg__andor(ctx, SG_OP_AND, 2, l) : NULL;
        const sg_expr *y = x ? sg__andor(ctx, SG_OP_AND, 2, r) : NULL;
        const sg_expr *o[2] = {x, y};
        return y ? sg__andor(ctx, SG_OP_OR, 2, o) : NULL;
    }
    if (c->op == SG_OP_NE0) { /* prefer the condition p == 0 */
        const sg_expr *nc = sg__not(ctx, c);
        return nc ? sg__where(ctx, nc, b, a) : NULL;
    }
    const sg_expr *args[3] = {c, a, b};
    return sg__intern(ctx, SG_OP_WHERE, SG_SORT_INT, 3, args, NULL, NULL, NULL, 0);
}

static void fold_bits(sg_op op, fmpz_t acc, const fmpz_t v)
{
    if (op == SG_OP_BAND)
        sg__num_and(acc, acc, v);
    else if (op == SG_OP_BOR)
        sg__num_or(acc, acc, v);
    else
        sg__num_xor(acc, acc, v);
}

const sg_expr *sg__bitop(sg_ctx *ctx, sg_op op, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *in[2] = {a, b};
    size_t cnt;
    const sg_expr **list = flatten(ctx, op, 2, in, &cnt);
    if (!list)
        return NULL;
    fmpz_t acc;
    fmpz_init(acc);
    if (op == SG_OP_BAND)
        fmpz_set_si(acc, -1); /* the identity of & */
    size_t k = 0;
    for (size_t i = 0; i < cnt; i++) {
        if (list[i]->op == SG_OP_INT)
            fold_bits(op, acc, &list[i]->u.val);
        else
            list[k++] = list[i];
    }
    sg__sort_by_id(list, k);
    /* x & x = x | x = x; x ^ x = 0 */
    size_t w = 0;
    for (size_t i = 0; i < k; i++) {
        if (w > 0 && list[w - 1] == list[i]) {
            if (op == SG_OP_BXOR)
                w--;
            continue;
        }
        list[w++] = list[i];
    }
    const sg_expr *res = NULL;
    bool absorbing = (op == SG_OP_BAND && fmpz_is_zero(acc)) || (op == SG_OP_BOR && fmpz_equal_si(acc, -1));
    bool identity = (op == SG_OP_BAND && fmpz_equal_si(acc, -1)) || (op != SG_OP_BAND && fmpz_is_zero(acc));
    bool xor_flip = op == SG_OP_BXOR && fmpz_equal_si(acc, -1); /* y ^ -1 = ~y = -y - 1 */
    if (absorbing || w == 0) {
        res = sg__int_fmpz(ctx, acc);
    } else {
        if (!identity && !xor_flip) {
            const sg_expr *k = sg__int_fmpz(ctx, acc);
            if (!k)
                goto done;
            list[w++] = k;
            sg__sort_by_id(list, w);
        }
        res = w == 1 ? list[0] : sg__intern(ctx, op, SG_SORT_INT, w, list, NULL, NULL, NULL, 0);
        if (res && xor_flip) {
            const sg_expr *n = sg__neg(ctx, res);
            res = n ? sg__add(ctx, n, ctx->minus_one) : NULL;
        }
    }
done:
    fmpz_clear(acc);
    sg_free(list);
    return res;
}
