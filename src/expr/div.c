/* Canonical forms of the division family: FloorDiv, Mod, CeilDiv, CleanDiv,
 * TruncDiv, TruncMod, ModularIndexing. Every rule below holds for all
 * integers (negative operands included); the proof of each is in its comment.
 * A constant zero divisor is kept unevaluated: evaluation raises the error. */
#include <stdlib.h>

#include "expr/expr_private.h"
#include "num/num.h"

static const sg_expr *node2(sg_ctx *ctx, sg_op op, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *args[2] = {a, b};
    return sg__intern(ctx, op, SG_SORT_INT, 2, args, NULL, NULL, NULL, 0);
}

typedef void (*num_op)(fmpz_t, const fmpz_t, const fmpz_t);

/* The constant op(a, b) of two constants (b nonzero). */
static const sg_expr *fold(sg_ctx *ctx, num_op op, const sg_expr *a, const sg_expr *b)
{
    fmpz_t r;
    fmpz_init(r);
    op(r, &a->u.val, &b->u.val);
    const sg_expr *res = sg__int_fmpz(ctx, r);
    fmpz_clear(r);
    return res;
}

/* Write a = g*M*a2 and b = g*M*b2 (b symbolic or a constant) where g is the integer
 * content of both (signed so that b2's leading coefficient is positive) and M
 * the greatest common monomial. (g*M*a2) / (g*M*b2) = a2 / b2 wherever g*M is
 * not zero, so quotients keep their value; remainders scale by g*M. */
typedef struct {
    const sg_expr *a, *b, *gm;
} split;

static bool split_content(sg_ctx *ctx, const sg_expr *a, const sg_expr *b, split *s)
{
    sg__poly pa, pb;
    sg__poly_init(&pa);
    sg__poly_init(&pb);
    bool ok = sg__poly_set(ctx, &pa, a) && sg__poly_set(ctx, &pb, b);
    fmpz_t g, t;
    fmpz_init(g);
    fmpz_init(t);
    const sg_expr *M = NULL;
    if (ok) {
        sg__poly_normalize(&pa);
        sg__poly_normalize(&pb);
        sg__poly_content(g, &pa);
        sg__poly_content(t, &pb);
        fmpz_gcd(g, g, t);
        fmpz_gcd(g, g, &pa.c);
        fmpz_gcd(g, g, &pb.c);
        M = sg__poly_mono_gcd(ctx, &pa, &pb);
        ok = M != NULL;
    }
    for (int w = 0; w < 2 && ok; w++) {
        sg__poly *p = w ? &pb : &pa;
        fmpz_divexact(&p->c, &p->c, g);
        for (size_t i = 0; i < p->n && ok; i++) {
            fmpz_divexact(&p->t[i].k, &p->t[i].k, g);
            if (M != ctx->one) {
                p->t[i].m = sg__mono_div(ctx, p->t[i].m, M);
                ok = p->t[i].m != NULL;
                if (ok && p->t[i].m->op == SG_OP_INT) {
                    /* the whole monomial divided out: a constant term */
                    fmpz_add(&p->c, &p->c, &p->t[i].k);
                    fmpz_zero(&p->t[i].k);
                    p->t[i].m = ctx->one;
                }
            }
        }
    }
    if (ok) {
        /* drop the placeholder terms on ctx->one (coefficient zero) */
        for (int w = 0; w < 2; w++) {
            sg__poly *p = w ? &pb : &pa;
            size_t k = 0;
            for (size_t i = 0; i < p->n; i++) {
                if (p->t[i].m == ctx->one) {
                    fmpz_clear(&p->t[i].k);
                    continue;
                }
                p->t[k++] = p->t[i];
            }
            p->n = k;
        }
        s->a = sg__poly_get(ctx, &pa);
        s->b = s->a ? sg__poly_get(ctx, &pb) : NULL;
        if (s->b && sg__lead_sign(s->b) < 0) { /* the sign goes with g */
            s->a = sg__neg(ctx, s->a);
            s->b = s->a ? sg__neg(ctx, s->b) : NULL;
            fmpz_neg(g, g);
        }
        s->gm = s->b ? sg__scale(ctx, M, g) : NULL;
        ok = s->gm != NULL;
    }
    fmpz_clear(g);
    fmpz_clear(t);
    sg__poly_clear(&pa);
    sg__poly_clear(&pb);
    return ok;
}

/* Split p (a polynomial) by the positive constant d: p = d*Q + R where every
 * coefficient and the constant of R lie in [0, d). Q is built, R is left in r. */
static const sg_expr *divmod_terms(sg_ctx *ctx, const sg_expr *a, const fmpz_t d, sg__poly *r)
{
    sg__poly q;
    sg__poly_init(&q);
    const sg_expr *Q = NULL;
    if (!sg__poly_set(ctx, r, a))
        goto done;
    sg__poly_normalize(r);
    fmpz_t qk;
    fmpz_init(qk);
    bool ok = true;
    for (size_t i = 0; i < r->n && ok; i++) {
        fmpz_fdiv_qr(qk, &r->t[i].k, &r->t[i].k, d);
        ok = sg__poly_push(ctx, &q, qk, r->t[i].m);
    }
    fmpz_fdiv_qr(&q.c, &r->c, &r->c, d);
    fmpz_clear(qk);
    if (ok) {
        sg__poly_normalize(r); /* drops the terms whose coefficient became 0 */
        Q = sg__poly_get(ctx, &q);
    }
done:
    sg__poly_clear(&q);
    return Q;
}

/* The mirror of R = sum r_i m_i + r0 (0 < r_i < d, 0 <= r0 < d) is
 * R' = sum (d - r_i) m_i + (d - 1 - r0), and
 *     R // d = sum m_i - R' // d,
 * because R // d = -((-R + d - 1) // d) (ceil(t) = -floor(-t), and
 * ceil(R / d) = (R + d - 1) // d), and -R + d - 1 = d*(-sum m_i) + R'.
 * The mirror of R' is R. Of the two, the canonical one has the smaller
 * vector of coefficients (terms in leading order, then the constant); the
 * vectors always differ (equal would need 2*r_i = d and 2*r0 = d - 1). */
static bool term_before(const sg__term *a, const sg__term *b)
{
    return a->m->hash != b->m->hash ? a->m->hash < b->m->hash : a->m->id < b->m->id;
}

static bool mirror_is_smaller(const sg__poly *r, const fmpz_t d)
{
    fmpz_t y;
    fmpz_init(y);
    int c = 0;
    const sg__term *last = NULL; /* the terms in leading order, each found after the last: no memory needed */
    for (size_t k = 0; k < r->n && c == 0; k++) {
        const sg__term *best = NULL;
        for (size_t i = 0; i < r->n; i++)
            if ((!last || term_before(last, &r->t[i])) && (!best || term_before(&r->t[i], best)))
                best = &r->t[i];
        last = best;
        fmpz_sub(y, d, &best->k);
        c = fmpz_cmp(y, &best->k);
    }
    if (c == 0) {
        fmpz_sub(y, d, &r->c);
        fmpz_sub_ui(y, y, 1);
        c = fmpz_cmp(y, &r->c);
    }
    fmpz_clear(y);
    return c < 0;
}

/* Turn r into its mirror; return sum m_i (or NULL with the error set). */
static const sg_expr *mirror(sg_ctx *ctx, sg__poly *r, const fmpz_t d)
{
    sg__poly s;
    sg__poly_init(&s);
    fmpz_t one;
    fmpz_init_set_ui(one, 1);
    bool ok = true;
    for (size_t i = 0; i < r->n && ok; i++) {
        ok = sg__poly_push(ctx, &s, one, r->t[i].m);
        fmpz_sub(&r->t[i].k, d, &r->t[i].k);
    }
    fmpz_sub(&r->c, d, &r->c);
    fmpz_sub_ui(&r->c, &r->c, 1);
    const sg_expr *S = ok ? sg__poly_get(ctx, &s) : NULL;
    fmpz_clear(one);
    sg__poly_clear(&s);
    return S;
}

/* The coefficient of the monomial m in the polynomial e (0 if absent). */
static void coeff_in(fmpz_t q, const sg_expr *e, const sg_expr *m)
{
    fmpz_zero(q);
    if (e == m)
        fmpz_one(q);
    else if (e->op == SG_OP_ADD)
        for (size_t i = 0; i < e->nargs; i++)
            if (e->args[i] == m)
                fmpz_set(q, sg__nums(e) + i);
}

/* A quotient F = A // c by a constant c > 0 among the terms of R (in r, with
 * coefficients k in (0, d)) that can merge with the outer division (see
 * collapse), as a // d = Q + R // d leaves it:
 * - k = 1: a // d = q*F + (F + P) // d, q being F's coefficient in Q;
 * - k = d - 1 and q = -1: a // d = (-F + P) // d, F gone;
 * - d = 2 (k = 1 = d - 1): both; the form with the smaller multiple of F
 *   outside (q or q + 1) is taken, so that (-F) // 2 meets -((F + 1) // 2).
 * Of several, the one with the smallest multiple of F left outside, then the
 * first in leading order. Returns its index (SIZE_MAX if none), sets *minus
 * for the second form and *any if R has a quotient by a positive constant
 * among its terms at all (see the mirror in floordiv_const). */
static size_t nested_quotient(const sg__poly *r, const fmpz_t d, const sg_expr *Q, bool *minus, bool *any)
{
    size_t best = SIZE_MAX;
    fmpz_t q, j, bestj, t;
    fmpz_init(q);
    fmpz_init(j);
    fmpz_init(bestj);
    fmpz_init(t);
    fmpz_sub_ui(t, d, 1);
    *any = false;
    for (size_t i = 0; i < r->n; i++) {
        const sg_expr *m = r->t[i].m;
        if (m->op != SG_OP_FLOORDIV || m->args[1]->op != SG_OP_INT || fmpz_sgn(&m->args[1]->u.val) <= 0)
            continue;
        const fmpz *k = &r->t[i].k;
        bool one = fmpz_is_one(k), last = fmpz_equal(k, t);
        *any = true;
        if (!one && !last)
            continue;
        coeff_in(q, Q, m);
        bool neg = last && (!one || fmpz_sgn(q) < 0); /* the second form: q + 1 outside */
        if (neg && !one && !fmpz_equal_si(q, -1))
            continue;
        if (neg)
            fmpz_add_ui(j, q, 1);
        else
            fmpz_set(j, q);
        int c = best == SIZE_MAX ? -1 : fmpz_cmpabs(j, bestj);
        if (c < 0 || (c == 0 && term_before(&r->t[i], &r->t[best]))) {
            best = i;
            *minus = neg;
            fmpz_set(bestj, j);
        }
    }
    fmpz_clear(q);
    fmpz_clear(j);
    fmpz_clear(bestj);
    fmpz_clear(t);
    return best;
}

/* R // d for R = k*F + P in r, F = A // c the term i, k = 1 or d - 1.
 * For an integer P, F + P = (A + c*P) // c (P is a whole number of c's), so
 *     (F + P) // d = ((A + c*P) // c) // d = (A + c*P) // (c*d)
 * by floor(floor(t / c) / d) = floor(t / (c*d)) (c, d > 0). With k = d - 1,
 * R = d*F + (P - F) and -F = (-A + c - 1) // c (ceil(t) = -floor(-t)), so
 *     R // d = F + (-A + c - 1 + c*P) // (c*d).
 * r is consumed (left scaled). */
static const sg_expr *collapse(sg_ctx *ctx, sg__poly *r, size_t i, const fmpz_t d, bool minus)
{
    const sg_expr *F = r->t[i].m, *A = F->args[0];
    const fmpz *c = &F->args[1]->u.val;
    fmpz_zero(&r->t[i].k); /* r is now P */
    for (size_t j = 0; j < r->n; j++)
        fmpz_mul(&r->t[j].k, &r->t[j].k, c);
    fmpz_mul(&r->c, &r->c, c);
    fmpz_t s, cd;
    fmpz_init_set_si(s, minus ? -1 : 1);
    fmpz_init(cd);
    fmpz_mul(cd, c, d);
    if (minus)
        fmpz_add(&r->c, &r->c, c), fmpz_sub_ui(&r->c, &r->c, 1);
    const sg_expr *res = NULL;
    if (sg__poly_addmul_expr(ctx, r, s, A)) {
        const sg_expr *num = sg__poly_get(ctx, r), *den = num ? sg__int_fmpz(ctx, cd) : NULL;
        res = den ? sg__floordiv(ctx, num, den) : NULL;
        if (res && minus)
            res = sg__add(ctx, F, res);
    }
    fmpz_clear(s);
    fmpz_clear(cd);
    return res;
}

/* FloorDiv(a, d) for a constant d > 1 and a non-constant a. */
static const sg_expr *floordiv_const(sg_ctx *ctx, const sg_expr *a, const fmpz_t d)
{
    /* a = d*Q + R  =>  a // d = Q + R // d  (Q is an integer). */
    sg__poly r;
    sg__poly_init(&r);
    const sg_expr *res = NULL, *Q = divmod_terms(ctx, a, d, &r);
    if (!Q)
        goto done;
    if (r.n == 0) { /* R is a constant in [0, d) */
        res = Q;
        goto done;
    }
    /* g = gcd(coefficients of R, d): (g*y + c) // (g*e) = (y + c // g) // e
     * because floor(floor(x / g) / e) = floor(x / (g*e)). */
    fmpz_t g, d2;
    fmpz_init(g);
    fmpz_init_set(d2, d);
    sg__poly_content(g, &r);
    fmpz_gcd(g, g, d);
    if (!fmpz_is_one(g)) {
        for (size_t i = 0; i < r.n; i++)
            fmpz_divexact(&r.t[i].k, &r.t[i].k, g);
        fmpz_fdiv_q(&r.c, &r.c, g);
        fmpz_divexact(d2, d, g);
    }
    const sg_expr *inner = NULL;
    bool minus = false, nested = false;
    size_t ni = fmpz_is_one(d2) ? SIZE_MAX : nested_quotient(&r, d2, Q, &minus, &nested);
    if (ni != SIZE_MAX) {
        inner = collapse(ctx, &r, ni, d2, minus); /* a quotient of a quotient: one quotient */
    } else {
        /* Choose between R and its mirror (see mirror_is_smaller), so that
         * equal quotients such as -((-x) // 4) and (x + 3) // 4 meet; but
         * not where R has a quotient among its terms: the mirror writes every
         * term of R twice (sum m_i - R' // d), and a chain of quotients
         * mirrored at each level would double at each level. */
        const sg_expr *S = ctx->zero;
        bool flip = !fmpz_is_one(d2) && !nested && mirror_is_smaller(&r, d2);
        if (flip) {
            S = mirror(ctx, &r, d2);
            if (!S)
                goto fail;
        }
        const sg_expr *R = sg__poly_get(ctx, &r);
        if (R && R->op == SG_OP_INT) {
            inner = ctx->zero; /* 0 <= R < d2 */
        } else if (R && fmpz_is_one(d2)) {
            inner = R;
        } else if (R) {
            const sg_expr *den = sg__int_fmpz(ctx, d2);
            inner = den ? node2(ctx, SG_OP_FLOORDIV, R, den) : NULL;
        }
        if (inner && flip)
            inner = sg__sub(ctx, S, inner);
    }
    res = inner ? sg__add(ctx, Q, inner) : NULL;
fail:
    fmpz_clear(g);
    fmpz_clear(d2);
done:
    sg__poly_clear(&r);
    return res;
}

const sg_expr *sg__floordiv(sg_ctx *ctx, const sg_expr *a, const sg_expr *b)
{
    if (b->op == SG_OP_INT) {
        const fmpz *d = &b->u.val;
        if (fmpz_is_zero(d))
            return node2(ctx, SG_OP_FLOORDIV, a, b);
        if (a->op == SG_OP_INT)
            return fold(ctx, sg__num_floordiv, a, b);
        if (fmpz_sgn(d) < 0) { /* a // d = (-a) // (-d): the same rational */
            const sg_expr *na = sg__neg(ctx, a), *nb = na ? sg__neg(ctx, b) : NULL;
            return nb ? sg__floordiv(ctx, na, nb) : NULL;
        }
        if (fmpz_is_one(d))
            return a;
        return floordiv_const(ctx, a, d);
    }
    if (a == ctx->zero)
        return a;
    split s;
    if (!split_content(ctx, a, b, &s))
        return NULL;
    if (s.b->op == SG_OP_INT)
        return sg__floordiv(ctx, s.a, s.b);
    if (s.a == s.b)
        return ctx->one;
    return node2(ctx, SG_OP_FLOORDIV, s.a, s.b);
}

/* Mod(a, d) for a constant d > 1 and a non-constant a. */
static const sg_expr *mod_const(sg_ctx *ctx, const sg_expr *a, const fmpz_t d)
{
    /* Mod(A, m) with d | m can stand for A: A - Mod(A, m) is a multiple of m,
     * hence of d. Replace such atoms first. */
    const sg_expr *src = a;
    if (a->op == SG_OP_ADD || a->op == SG_OP_MOD) {
        sg__poly p;
        sg__poly_init(&p);
        bool ok = sg__poly_set(ctx, &p, a), changed = false;
        for (size_t i = 0; i < p.n && ok; i++) { /* the terms A brings in too */
            const sg_expr *m = p.t[i].m;
            if (m->op == SG_OP_MOD && m->args[1]->op == SG_OP_INT && fmpz_sgn(&m->args[1]->u.val) > 0 &&
                fmpz_divisible(&m->args[1]->u.val, d)) {
                fmpz_t k;
                fmpz_init_set(k, &p.t[i].k);
                fmpz_zero(&p.t[i].k);
                ok = sg__poly_addmul_expr(ctx, &p, k, m->args[0]);
                fmpz_clear(k);
                changed = true;
            }
        }
        src = !ok ? NULL : changed ? sg__poly_get(ctx, &p) : a;
        sg__poly_clear(&p);
        if (!src)
            return NULL;
        if (src->op == SG_OP_INT) {
            const sg_expr *den = sg__int_fmpz(ctx, d);
            return den ? fold(ctx, sg__num_mod, src, den) : NULL;
        }
    }
    /* Reduce every coefficient and the constant mod d: a = d*Q + R. */
    sg__poly r;
    sg__poly_init(&r);
    const sg_expr *res = NULL;
    if (!divmod_terms(ctx, src, d, &r))
        goto done;
    if (r.n == 0) {
        res = sg__int_fmpz(ctx, &r.c);
        goto done;
    }
    /* g = gcd(coefficients of R, d), c = g*q + s with 0 <= s < g:
     * Mod(g*y + c, g*e) = g*Mod(y + q, e) + s. */
    fmpz_t g, d2, q, s;
    fmpz_init(g);
    fmpz_init_set(d2, d);
    fmpz_init(q);
    fmpz_init(s);
    sg__poly_content(g, &r);
    fmpz_gcd(g, g, d);
    if (!fmpz_is_one(g)) {
        for (size_t i = 0; i < r.n; i++)
            fmpz_divexact(&r.t[i].k, &r.t[i].k, g);
        fmpz_fdiv_qr(q, s, &r.c, g);
        fmpz_set(&r.c, q);
        fmpz_divexact(d2, d, g);
    }
    const sg_expr *R = sg__poly_get(ctx, &r), *inner = NULL;
    if (R && fmpz_is_one(d2)) {
        inner = ctx->zero;
    } else if (R && !fmpz_is_one(g)) {
        /* Mod(y + q, e) is canonicalized anew: with the smaller divisor e an
         * atom Mod(A, m) with e | m may now stand for A (step 2), as in
         * Mod(2*(x % 2) + 2, 4) = 2*Mod(x % 2 + 1, 2) = 2*Mod(x + 1, 2). */
        inner = mod_const(ctx, R, d2);
    } else if (R && R->op == SG_OP_MOD && R->args[1]->op == SG_OP_INT && fmpz_sgn(&R->args[1]->u.val) > 0 &&
               fmpz_cmp(&R->args[1]->u.val, d2) <= 0) {
        inner = R; /* Mod(Mod(x, m), e) = Mod(x, m) when 0 <= Mod(x, m) < m <= e */
    } else if (R) {
        const sg_expr *den = sg__int_fmpz(ctx, d2);
        inner = den ? node2(ctx, SG_OP_MOD, R, den) : NULL;
    }
    if (inner) {
        const sg_expr *gi = sg__scale(ctx, inner, g), *se = gi ? sg__int_fmpz(ctx, s) : NULL;
        res = se ? sg__add(ctx, gi, se) : NULL;
    }
    fmpz_clear(g);
    fmpz_clear(d2);
    fmpz_clear(q);
    fmpz_clear(s);
done:
    sg__poly_clear(&r);
    return res;
}

const sg_expr *sg__mod(sg_ctx *ctx, const sg_expr *a, const sg_expr *b)
{
    if (b->op == SG_OP_INT) {
        const fmpz *d = &b->u.val;
        if (fmpz_is_zero(d))
            return node2(ctx, SG_OP_MOD, a, b);
        if (a->op == SG_OP_INT)
            return fold(ctx, sg__num_mod, a, b);
        if (fmpz_is_pm1(d))
            return ctx->zero;
        if (fmpz_sgn(d) < 0) { /* a % d = -((-a) % (-d)) */
            const sg_expr *na = sg__neg(ctx, a), *nb = na ? sg__neg(ctx, b) : NULL;
            const sg_expr *m = nb ? sg__mod(ctx, na, nb) : NULL;
            return m ? sg__neg(ctx, m) : NULL;
        }
        return mod_const(ctx, a, d);
    }
    if (a == ctx->zero)
        return a;
    split s;
    if (!split_content(ctx, a, b, &s))
        return NULL;
    const sg_expr *m;
    if (s.b->op == SG_OP_INT)
        m = sg__mod(ctx, s.a, s.b);
    else if (s.a == s.b)
        m = ctx->zero;
    else
        m = node2(ctx, SG_OP_MOD, s.a, s.b);
    return m ? sg__mul(ctx, s.gm, m) : NULL;
}

const sg_expr *sg__ceildiv(sg_ctx *ctx, const sg_expr *a, const sg_expr *b)
{
    /* ceil(a / b) = -floor(-a / b); for a constant d > 0 also
     * floor((a + d - 1) / d), which keeps the dividend's sign pattern. */
    if (b->op == SG_OP_INT && fmpz_sgn(&b->u.val) > 0 && a->op != SG_OP_INT) {
        const sg_expr *dm1 = sg__add(ctx, b, ctx->minus_one);
        const sg_expr *num = dm1 ? sg__add(ctx, a, dm1) : NULL;
        return num ? sg__floordiv(ctx, num, b) : NULL;
    }
    if (b->op == SG_OP_INT && fmpz_sgn(&b->u.val) < 0 && a->op != SG_OP_INT) {
        const sg_expr *na = sg__neg(ctx, a), *nb = na ? sg__neg(ctx, b) : NULL;
        return nb ? sg__ceildiv(ctx, na, nb) : NULL;
    }
    const sg_expr *na = sg__neg(ctx, a), *q = na ? sg__floordiv(ctx, na, b) : NULL;
    return q ? sg__neg(ctx, q) : NULL;
}

const sg_expr *sg__cleandiv(sg_ctx *ctx, const sg_expr *a, const sg_expr *b)
{
    if (b->op == SG_OP_INT) {
        const fmpz *d = &b->u.val;
        if (fmpz_is_zero(d))
            return node2(ctx, SG_OP_CLEANDIV, a, b);
        if (fmpz_sgn(d) < 0) { /* (-a) / (-d): the same rational */
            const sg_expr *na = sg__neg(ctx, a), *nb = na ? sg__neg(ctx, b) : NULL;
            return nb ? sg__cleandiv(ctx, na, nb) : NULL;
        }
        /* g = gcd(every coefficient, d): (g*A) / (g*e) is exact iff A / e is. */
        sg__poly p;
        sg__poly_init(&p);
        const sg_expr *res = NULL;
        if (sg__poly_set(ctx, &p, a)) {
            fmpz_t g;
            fmpz_init(g);
            sg__poly_normalize(&p);
            sg__poly_content(g, &p);
            fmpz_gcd(g, g, &p.c);
            fmpz_gcd(g, g, d);
            for (size_t i = 0; i < p.n; i++)
                fmpz_divexact(&p.t[i].k, &p.t[i].k, g);
            fmpz_divexact(&p.c, &p.c, g);
            const sg_expr *A = sg__poly_get(ctx, &p);
            if (A && fmpz_equal(g, d)) {
                res = A;
            } else if (A) {
                fmpz_divexact(g, d, g);
                const sg_expr *den = sg__int_fmpz(ctx, g);
                res = den ? node2(ctx, SG_OP_CLEANDIV, A, den) : NULL;
            }
            fmpz_clear(g);
        }
        sg__poly_clear(&p);
        return res;
    }
    if (a == ctx->zero)
        return a;
    split s;
    if (!split_content(ctx, a, b, &s))
        return NULL;
    if (s.b->op == SG_OP_INT)
        return sg__cleandiv(ctx, s.a, s.b);
    if (s.a == s.b)
        return ctx->one;
    return node2(ctx, SG_OP_CLEANDIV, s.a, s.b);
}

/* TruncDiv and TruncMod: trunc(a / b) is odd in a and in b, so signs come
 * out: TruncDiv(-a, b) = TruncDiv(a, -b) = -TruncDiv(a, b); TruncMod(a, -b) =
 * TruncMod(a, b) and TruncMod(-a, b) = -TruncMod(a, b). A common factor g
 * cancels in the quotient and scales the remainder. */
static const sg_expr *trunc_op(sg_ctx *ctx, sg_op op, const sg_expr *a, const sg_expr *b)
{
    if (b->op == SG_OP_INT && fmpz_is_zero(&b->u.val))
        return node2(ctx, op, a, b);
    if (a->op == SG_OP_INT && b->op == SG_OP_INT)
        return fold(ctx, op == SG_OP_TRUNCDIV ? sg__num_truncdiv : sg__num_truncmod, a, b);
    if (a == ctx->zero)
        return a;
    split sp; /* a = gm*A, b = gm*B with B's leading coefficient positive */
    if (!split_content(ctx, a, b, &sp))
        return NULL;
    const sg_expr *A = sp.a, *B = sp.b, *gm = sp.gm;
    bool negate = false;
    if (sg__lead_sign(A) < 0) {
        A = sg__neg(ctx, A);
        negate = true;
        if (!A)
            return NULL;
    }
    const sg_expr *core;
    if (B == ctx->one)
        core = op == SG_OP_TRUNCDIV ? A : ctx->zero;
    else if (A == B)
        core = op == SG_OP_TRUNCDIV ? ctx->one : ctx->zero;
    else if (A->op == SG_OP_INT && B->op == SG_OP_INT)
        core = trunc_op(ctx, op, A, B);
    else
        core = node2(ctx, op, A, B);
    if (!core)
        return NULL;
    if (op == SG_OP_TRUNCMOD)
        core = sg__mul(ctx, gm, core);
    return core && negate ? sg__neg(ctx, core) : core;
}

const sg_expr *sg__truncdiv(sg_ctx *ctx, const sg_expr *a, const sg_expr *b)
{
    return trunc_op(ctx, SG_OP_TRUNCDIV, a, b);
}

const sg_expr *sg__truncmod(sg_ctx *ctx, const sg_expr *a, const sg_expr *b)
{
    return trunc_op(ctx, SG_OP_TRUNCMOD, a, b);
}
