/* Polynomial normal form: an integer expression is c + sum k_i * m_i over
 * monomials m_i (atoms or MUL nodes), with terms sorted by monomial id and
 * nonzero coefficients. Addition, multiplication and natural powers work on
 * the scratch form sg__poly and intern the result. */
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "num/num.h"

void sg__poly_init(sg__poly *p)
{
    p->t = NULL;
    p->n = p->cap = 0;
    fmpz_init(&p->c);
}

void sg__poly_clear(sg__poly *p)
{
    for (size_t i = 0; i < p->n; i++)
        fmpz_clear(&p->t[i].k);
    sg_free(p->t);
    fmpz_clear(&p->c);
    p->t = NULL;
    p->n = p->cap = 0;
}

static void poly_reset(sg__poly *p)
{
    for (size_t i = 0; i < p->n; i++)
        fmpz_clear(&p->t[i].k);
    p->n = 0;
    fmpz_zero(&p->c);
}

bool sg__poly_push(sg_ctx *ctx, sg__poly *p, const fmpz_t k, const sg_expr *m)
{
    if (fmpz_is_zero(k))
        return true;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        if (cap > ctx->max_terms * 2 + 16) {
            sg__err(ctx, SG_ELIMIT, "polynomial with more than %zu terms", ctx->max_terms);
            return false;
        }
        sg__term *t = sg__realloc(ctx, p->t, cap * sizeof *t);
        if (!t) {
            sg__nomem(ctx);
            return false;
        }
        p->t = t;
        p->cap = cap;
    }
    fmpz_init_set(&p->t[p->n].k, k);
    p->t[p->n].m = m;
    p->n++;
    return true;
}

bool sg__poly_addmul_expr(sg_ctx *ctx, sg__poly *p, const fmpz_t k, const sg_expr *e)
{
    if (e->op == SG_OP_INT) {
        fmpz_addmul(&p->c, k, &e->u.val);
        return true;
    }
    if (e->op == SG_OP_ADD) {
        fmpz_addmul(&p->c, k, &e->u.val);
        const fmpz *nums = sg__nums(e);
        fmpz_t t;
        fmpz_init(t);
        for (size_t i = 0; i < e->nargs; i++) {
            fmpz_mul(t, k, nums + i);
            if (!sg__poly_push(ctx, p, t, e->args[i])) {
                fmpz_clear(t);
                return false;
            }
        }
        fmpz_clear(t);
        return true;
    }
    return sg__poly_push(ctx, p, k, e);
}

bool sg__poly_set(sg_ctx *ctx, sg__poly *p, const sg_expr *e)
{
    fmpz_t one;
    fmpz_init_set_ui(one, 1);
    poly_reset(p);
    bool ok = sg__poly_addmul_expr(ctx, p, one, e);
    fmpz_clear(one);
    return ok;
}

static int cmp_term(const void *a, const void *b)
{
    uint32_t x = ((const sg__term *)a)->m->id, y = ((const sg__term *)b)->m->id;
    return (x > y) - (x < y);
}

void sg__poly_normalize(sg__poly *p)
{
    if (p->n > 1) {
        bool sorted = true;
        for (size_t i = 1; i < p->n && sorted; i++)
            sorted = p->t[i - 1].m->id < p->t[i].m->id;
        if (!sorted)
            qsort(p->t, p->n, sizeof *p->t, cmp_term);
    }
    size_t w = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (w > 0 && p->t[w - 1].m == p->t[i].m) {
            fmpz_add(&p->t[w - 1].k, &p->t[w - 1].k, &p->t[i].k);
            fmpz_clear(&p->t[i].k);
            continue;
        }
        if (w > 0 && fmpz_is_zero(&p->t[w - 1].k)) {
            fmpz_clear(&p->t[w - 1].k);
            w--;
        }
        if (w != i)
            p->t[w] = p->t[i];
        w++;
    }
    if (w > 0 && fmpz_is_zero(&p->t[w - 1].k)) {
        fmpz_clear(&p->t[w - 1].k);
        w--;
    }
    p->n = w;
}

void sg__poly_content(fmpz_t g, const sg__poly *p)
{
    fmpz_zero(g);
    for (size_t i = 0; i < p->n && !fmpz_is_one(g); i++)
        fmpz_gcd(g, g, &p->t[i].k);
}

static bool mono_before(const sg_expr *a, const sg_expr *b)
{
    return a->hash != b->hash ? a->hash < b->hash : a->id < b->id;
}

int sg__poly_lead_sign(const sg__poly *p)
{
    size_t best = 0;
    for (size_t i = 1; i < p->n; i++)
        if (mono_before(p->t[i].m, p->t[best].m))
            best = i;
    return p->n ? fmpz_sgn(&p->t[best].k) : 0;
}

int sg__lead_sign(const sg_expr *e)
{
    if (e->op == SG_OP_INT)
        return fmpz_sgn(&e->u.val);
    if (e->op != SG_OP_ADD)
        return 1;
    size_t best = 0;
    for (size_t i = 1; i < e->nargs; i++)
        if (mono_before(e->args[i], e->args[best]))
            best = i;
    return fmpz_sgn(sg__nums(e) + best);
}

const sg_expr *sg__split_const(sg_ctx *ctx, const sg_expr *e, fmpz_t c)
{
    if (e->op == SG_OP_INT) {
        fmpz_set(c, &e->u.val);
        return ctx->zero;
    }
    if (e->op != SG_OP_ADD || fmpz_is_zero(&e->u.val)) {
        fmpz_zero(c);
        return e;
    }
    fmpz_set(c, &e->u.val);
    fmpz_t m;
    fmpz_init(m);
    fmpz_neg(m, c);
    const sg_expr *k = sg__int_fmpz(ctx, m);
    fmpz_clear(m);
    return k ? sg__add(ctx, e, k) : NULL;
}

#define SG_SMALL 16

/* c*Max(a, b) + c*Min(a, b) is c*(a + b): of two values one is the larger,
 * the other the smaller. */
static bool combine_minmax(sg_ctx *ctx, sg__poly *p, bool *changed)
{
    for (size_t i = 0; i < p->n; i++) {
        const sg_expr *m = p->t[i].m;
        if (m->op != SG_OP_MAX || m->nargs != 2 || fmpz_is_zero(&p->t[i].k))
            continue;
        const sg_expr *mn = sg__intern(ctx, SG_OP_MIN, SG_SORT_INT, 2, m->args, NULL, NULL, NULL, 0);
        if (!mn)
            return false;
        for (size_t j = 0; j < p->n; j++) {
            if (p->t[j].m != mn || !fmpz_equal(&p->t[j].k, &p->t[i].k))
                continue;
            fmpz_t c;
            fmpz_init_set(c, &p->t[i].k);
            fmpz_zero(&p->t[i].k);
            fmpz_zero(&p->t[j].k);
            bool ok = sg__poly_addmul_expr(ctx, p, c, m->args[0]) && sg__poly_addmul_expr(ctx, p, c, m->args[1]);
            fmpz_clear(c);
            if (!ok)
                return false;
            *changed = true;
            break;
        }
    }
    return true;
}

/* c*(a % d) + c*d*(a // d) is c*a for a constant d != 0: Python defines
 * a % d as a - d*(a // d). Applied to every pair of such terms in p, and
 * likewise Max and Min (combine_minmax). */
static bool combine_pairs(sg_ctx *ctx, sg__poly *p)
{
    bool changed = false;
    if (!combine_minmax(ctx, p, &changed))
        return false;
    fmpz_t cd;
    fmpz_init(cd);
    for (size_t i = 0; i < p->n; i++) {
        const sg_expr *m = p->t[i].m;
        if (m->op != SG_OP_MOD || m->args[1]->op != SG_OP_INT || fmpz_is_zero(&p->t[i].k))
            continue;
        const sg_expr *fd_args[2] = {m->args[0], m->args[1]};
        const sg_expr *fd = sg__intern(ctx, SG_OP_FLOORDIV, SG_SORT_INT, 2, fd_args, NULL, NULL, NULL, 0);
        if (!fd) {
            fmpz_clear(cd);
            return false;
        }
        fmpz_mul(cd, &p->t[i].k, &m->args[1]->u.val);
        for (size_t j = 0; j < p->n; j++) {
            if (p->t[j].m != fd || !fmpz_equal(&p->t[j].k, cd))
                continue;
            fmpz_t c;
            fmpz_init_set(c, &p->t[i].k);
            fmpz_zero(&p->t[i].k);
            fmpz_zero(&p->t[j].k);
            bool ok = sg__poly_addmul_expr(ctx, p, c, m->args[0]);
            fmpz_clear(c);
            if (!ok) {
                fmpz_clear(cd);
                return false;
            }
            changed = true;
            break;
        }
    }
    fmpz_clear(cd);
    if (changed)
        sg__poly_normalize(p);
    return true;
}

const sg_expr *sg__poly_get(sg_ctx *ctx, sg__poly *p)
{
    sg__poly_normalize(p);
    /* the bit limit bounds the numbers of a polynomial together, as it bounds
     * a power: products of sums with large constants would otherwise build
     * many large coefficients a step (found by fuzz_guard: 300 bytes of
     * guard text took 1.4 GB) */
    size_t bits = fmpz_bits(&p->c);
    for (size_t i = 0; i < p->n && bits <= ctx->max_bits; i++)
        bits += fmpz_bits(&p->t[i].k);
    if (bits > ctx->max_bits)
        return sg__err(ctx, SG_ELIMIT, "a polynomial whose coefficients have more than %zu bits", ctx->max_bits),
               NULL;
    if (p->n > 1 && !combine_pairs(ctx, p))
        return NULL;
    if (p->n == 0)
        return sg__int_fmpz(ctx, &p->c);
    if (p->n == 1 && fmpz_is_one(&p->t[0].k) && fmpz_is_zero(&p->c))
        return p->t[0].m;
    const sg_expr *sargs[SG_SMALL];
    fmpz snums[SG_SMALL];
    const sg_expr **args = sargs;
    fmpz *nums = snums;
    if (p->n > SG_SMALL) {
        args = sg__malloc(ctx, p->n * sizeof *args);
        nums = sg__malloc(ctx, p->n * sizeof *nums);
        if (!args || !nums) {
            sg_free(args);
            sg_free(nums);
            return sg__nomem(ctx), NULL;
        }
    }
    for (size_t i = 0; i < p->n; i++) {
        args[i] = p->t[i].m;
        nums[i] = p->t[i].k; /* shallow copy: intern copies the values */
    }
    const sg_expr *e = sg__intern(ctx, SG_OP_ADD, SG_SORT_INT, p->n, args, nums, &p->c, NULL, 0);
    if (args != sargs) {
        sg_free(args);
        sg_free(nums);
    }
    return e;
}

/* ---- monomials ---- */

typedef struct {
    const sg_expr *const *atoms;
    const fmpz *exps;
    size_t n;
    fmpz one;
} mono_view;

static void mono_view_of(mono_view *v, const sg_expr *m)
{
    if (m->op == SG_OP_MUL) {
        v->atoms = m->args;
        v->exps = sg__nums(m);
        v->n = m->nargs;
    } else {
        v->one = 1;
        v->atoms = NULL;
        v->exps = &v->one;
        v->n = 1;
    }
}

static const sg_expr *mv_atom(const mono_view *v, const sg_expr *m, size_t i)
{
    return v->atoms ? v->atoms[i] : m;
}

/* Room for the factors of a monomial: on the stack when few. */
typedef struct {
    const sg_expr **atoms;
    fmpz *exps;
    const sg_expr *satoms[SG_SMALL];
    fmpz sexps[SG_SMALL];
} mono_buf;

static bool mono_buf_init(sg_ctx *ctx, mono_buf *b, size_t cap)
{
    b->atoms = b->satoms;
    b->exps = b->sexps;
    if (cap <= SG_SMALL)
        return true;
    b->atoms = sg__malloc(ctx, cap * sizeof *b->atoms);
    b->exps = sg__malloc(ctx, cap * sizeof *b->exps);
    if (b->atoms && b->exps)
        return true;
    sg_free(b->atoms);
    sg_free(b->exps);
    sg__nomem(ctx);
    return false;
}

/* Clear the first n exponents and release the room. */
static void mono_buf_free(mono_buf *b, size_t n)
{
    for (size_t k = 0; k < n; k++)
        fmpz_clear(b->exps + k);
    if (b->atoms != b->satoms) {
        sg_free(b->atoms);
        sg_free(b->exps);
    }
}

/* Build the monomial prod atoms[i] ** exps[i] (atoms sorted by id, distinct,
 * exps >= 1). */
static const sg_expr *mono_make(sg_ctx *ctx, size_t n, const sg_expr **atoms, fmpz *exps)
{
    if (n == 0)
        return ctx->one;
    if (n == 1 && fmpz_is_one(exps))
        return atoms[0];
    return sg__intern(ctx, SG_OP_MUL, SG_SORT_INT, n, atoms, exps, NULL, NULL, 0);
}

/* m1 * m2 (or m1 / m2 when sign is -1: every factor of m2 must divide m1). */
static const sg_expr *mono_combine(sg_ctx *ctx, const sg_expr *m1, const sg_expr *m2, int sign)
{
    mono_view a, b;
    mono_view_of(&a, m1);
    mono_view_of(&b, m2);
    size_t cap = a.n + b.n;
    mono_buf buf;
    if (!mono_buf_init(ctx, &buf, cap))
        return NULL;
    const sg_expr **atoms = buf.atoms;
    fmpz *exps = buf.exps;
    size_t i = 0, j = 0, n = 0;
    while (i < a.n || j < b.n) {
        const sg_expr *x = i < a.n ? mv_atom(&a, m1, i) : NULL;
        const sg_expr *y = j < b.n ? mv_atom(&b, m2, j) : NULL;
        if (x && (!y || x->id < y->id)) {
            atoms[n] = x;
            fmpz_init_set(exps + n, a.exps + i);
            n++, i++;
        } else if (y && (!x || y->id < x->id)) {
            atoms[n] = y;
            fmpz_init(exps + n);
            if (sign > 0)
                fmpz_set(exps + n, b.exps + j);
            else
                fmpz_neg(exps + n, b.exps + j);
            n++, j++;
        } else {
            atoms[n] = x;
            fmpz_init(exps + n);
            if (sign > 0)
                fmpz_add(exps + n, a.exps + i, b.exps + j);
            else
                fmpz_sub(exps + n, a.exps + i, b.exps + j);
            if (fmpz_is_zero(exps + n))
                fmpz_clear(exps + n);
            else
                n++;
            i++, j++;
        }
    }
    const sg_expr *r = mono_make(ctx, n, atoms, exps);
    mono_buf_free(&buf, n);
    return r;
}

const sg_expr *sg__mono_mul(sg_ctx *ctx, const sg_expr *m1, const sg_expr *m2)
{
    return mono_combine(ctx, m1, m2, 1);
}

const sg_expr *sg__mono_div(sg_ctx *ctx, const sg_expr *m1, const sg_expr *m2)
{
    return mono_combine(ctx, m1, m2, -1);
}

/* m ** e for a monomial m and e >= 1. */
static const sg_expr *mono_pow(sg_ctx *ctx, const sg_expr *m, const fmpz_t e)
{
    mono_view v;
    mono_view_of(&v, m);
    mono_buf buf;
    if (!mono_buf_init(ctx, &buf, v.n))
        return NULL;
    const sg_expr **atoms = buf.atoms;
    fmpz *exps = buf.exps;
    for (size_t i = 0; i < v.n; i++) {
        atoms[i] = mv_atom(&v, m, i);
        fmpz_init(exps + i);
        fmpz_mul(exps + i, v.exps + i, e);
    }
    const sg_expr *r = mono_make(ctx, v.n, atoms, exps);
    mono_buf_free(&buf, v.n);
    return r;
}

/* ---- arithmetic ---- */

const sg_expr *sg__add(sg_ctx *ctx, const sg_expr *a, const sg_expr *b)
{
    if (a->op == SG_OP_INT && b->op == SG_OP_INT) {
        fmpz_t s;
        fmpz_init(s);
        fmpz_add(s, &a->u.val, &b->u.val);
        const sg_expr *r = sg__int_fmpz(ctx, s);
        fmpz_clear(s);
        return r;
    }
    if (a == ctx->zero)
        return b;
    if (b == ctx->zero)
        return a;
    sg__poly p;
    sg__poly_init(&p);
    fmpz_t one;
    fmpz_init_set_ui(one, 1);
    const sg_expr *r = NULL;
    if (sg__poly_addmul_expr(ctx, &p, one, a) && sg__poly_addmul_expr(ctx, &p, one, b))
        r = sg__poly_get(ctx, &p);
    fmpz_clear(one);
    sg__poly_clear(&p);
    return r;
}

const sg_expr *sg__scale(sg_ctx *ctx, const sg_expr *a, const fmpz_t k)
{
    if (fmpz_is_one(k))
        return a;
    if (fmpz_is_zero(k))
        return ctx->zero;
    if (a->op == SG_OP_INT) { /* a constant: its product, without a polynomial (eager sizes and strides) */
        fmpz_t v;
        fmpz_init(v);
        fmpz_mul(v, &a->u.val, k);
        const sg_expr *r = sg__int_fmpz(ctx, v);
        fmpz_clear(v);
        return r;
    }
    sg__poly p;
    sg__poly_init(&p);
    const sg_expr *r = NULL;
    if (sg__poly_addmul_expr(ctx, &p, k, a))
        r = sg__poly_get(ctx, &p);
    sg__poly_clear(&p);
    return r;
}

const sg_expr *sg__neg(sg_ctx *ctx, const sg_expr *a)
{
    fmpz_t m;
    fmpz_init_set_si(m, -1);
    const sg_expr *r = sg__scale(ctx, a, m);
    fmpz_clear(m);
    return r;
}

const sg_expr *sg__sub(sg_ctx *ctx, const sg_expr *a, const sg_expr *b)
{
    if (b == ctx->zero)
        return a;
    sg__poly p;
    sg__poly_init(&p);
    fmpz_t one, m;
    fmpz_init_set_ui(one, 1);
    fmpz_init_set_si(m, -1);
    const sg_expr *r = NULL;
    if (sg__poly_addmul_expr(ctx, &p, one, a) && sg__poly_addmul_expr(ctx, &p, m, b))
        r = sg__poly_get(ctx, &p);
    fmpz_clear(one);
    fmpz_clear(m);
    sg__poly_clear(&p);
    return r;
}

/* r += p * q (both normalized or not). */
static bool poly_mul_into(sg_ctx *ctx, sg__poly *r, const sg__poly *p, const sg__poly *q)
{
    size_t np = p->n + 1, nq = q->n + 1;
    if (np > ctx->max_terms / nq + 1) {
        sg__err(ctx, SG_ELIMIT, "product of polynomials with %zu and %zu terms is too large", p->n, q->n);
        return false;
    }
    fmpz_t k;
    fmpz_init(k);
    bool ok = true;
    for (size_t i = 0; i < p->n && ok; i++) {
        for (size_t j = 0; j < q->n && ok; j++) {
            const sg_expr *m = sg__mono_mul(ctx, p->t[i].m, q->t[j].m);
            fmpz_mul(k, &p->t[i].k, &q->t[j].k);
            ok = m && sg__poly_push(ctx, r, k, m);
        }
        if (ok) {
            fmpz_mul(k, &p->t[i].k, &q->c);
            ok = sg__poly_push(ctx, r, k, p->t[i].m);
        }
    }
    for (size_t j = 0; j < q->n && ok; j++) {
        fmpz_mul(k, &q->t[j].k, &p->c);
        ok = sg__poly_push(ctx, r, k, q->t[j].m);
    }
    fmpz_addmul(&r->c, &p->c, &q->c);
    fmpz_clear(k);
    if (ok)
        sg__poly_normalize(r);
    return ok;
}

static const sg_expr *mul_new(sg_ctx *ctx, const sg_expr *a, const sg_expr *b)
{
    if (a->op != SG_OP_ADD && b->op != SG_OP_ADD)
        return sg__mono_mul(ctx, a, b);
    /* (k*m) * (j*n) = (k*j) * (m*n) for single terms without a constant */
    bool ta = a->op != SG_OP_ADD || (a->nargs == 1 && fmpz_is_zero(&a->u.val));
    bool tb = b->op != SG_OP_ADD || (b->nargs == 1 && fmpz_is_zero(&b->u.val));
    if (ta && tb) {
        const sg_expr *m = sg__mono_mul(ctx, a->op == SG_OP_ADD ? a->args[0] : a, b->op == SG_OP_ADD ? b->args[0] : b);
        if (!m)
            return NULL;
        fmpz_t k;
        fmpz_init_set_ui(k, 1);
        if (a->op == SG_OP_ADD)
            fmpz_mul(k, k, sg__nums(a));
        if (b->op == SG_OP_ADD)
            fmpz_mul(k, k, sg__nums(b));
        const sg_expr *r = sg__scale(ctx, m, k);
        fmpz_clear(k);
        return r;
    }
    sg__poly p, q, r;
    sg__poly_init(&p);
    sg__poly_init(&q);
    sg__poly_init(&r);
    const sg_expr *res = NULL;
    if (sg__poly_set(ctx, &p, a) && sg__poly_set(ctx, &q, b) && poly_mul_into(ctx, &r, &p, &q))
        res = sg__poly_get(ctx, &r);
    sg__poly_clear(&p);
    sg__poly_clear(&q);
    sg__poly_clear(&r);
    return res;
}

/* A product by a constant at once; another remembered (the public
 * constructor's memo: shape rules and the graph multiply the same sizes
 * again and again, for strides and numbers of elements). */
const sg_expr *sg__mul(sg_ctx *ctx, const sg_expr *a, const sg_expr *b)
{
    if (a->op == SG_OP_INT)
        return sg__scale(ctx, b, &a->u.val);
    if (b->op == SG_OP_INT)
        return sg__scale(ctx, a, &b->u.val);
    const sg_expr *r = sg__memo_get(ctx, SG_MEMO_MUL, a, b);
    if (r)
        return r;
    if ((r = mul_new(ctx, a, b)))
        sg__memo_put(ctx, SG_MEMO_MUL, a, b, r);
    return r;
}

/* Number of terms of a polynomial with n terms (constant included) raised to
 * e: at most C(e + n - 1, n - 1); saturates at limit + 1. */
static size_t pow_terms_bound(size_t n, double e, size_t limit)
{
    double c = 1;
    for (size_t i = 1; i < n; i++) {
        c = c * (e + (double)i) / (double)i;
        if (c > (double)limit)
            return limit + 1;
    }
    return (size_t)c;
}

/* Distinct atoms of an ADD's monomials, and their highest total degree:
 * a power e of it has at most C(v + e*D, v) monomials. */
static void atoms_and_degree(const sg_expr *a, size_t *v, double *D)
{
    const sg_expr *seen[64];
    size_t nseen = 0;
    bool overflow = false;
    *D = 0;
    for (size_t i = 0; i < a->nargs; i++) {
        mono_view w;
        mono_view_of(&w, a->args[i]);
        double deg = 0;
        for (size_t k = 0; k < w.n; k++) {
            const sg_expr *x = mv_atom(&w, a->args[i], k);
            deg += fmpz_get_d(w.exps + k);
            size_t j = 0;
            while (j < nseen && seen[j] != x)
                j++;
            if (j == nseen) {
                if (nseen < 64)
                    seen[nseen++] = x;
                else
                    overflow = true;
            }
        }
        if (deg > *D)
            *D = deg;
    }
    *v = overflow ? SIZE_MAX : nseen;
}

static const sg_expr *poly_pow(sg_ctx *ctx, const sg_expr *a, const fmpz_t e)
{
    if (a->op == SG_OP_INT) {
        if (sg__num_pow_bits(&a->u.val, e) > ctx->max_bits)
            return sg__err(ctx, SG_ELIMIT, "power with more than %zu bits", ctx->max_bits), NULL;
        fmpz_t r;
        fmpz_init(r);
        sg__num_pow(r, &a->u.val, fmpz_get_ui(e));
        const sg_expr *res = sg__int_fmpz(ctx, r);
        fmpz_clear(r);
        return res;
    }
    if (fmpz_is_zero(e))
        return ctx->one;
    if (fmpz_is_one(e))
        return a;
    if (a->op != SG_OP_ADD)
        return mono_pow(ctx, a, e);
    if (a->nargs == 1 && fmpz_is_zero(&a->u.val)) {
        /* k * m: k ** e * m ** e */
        if (sg__num_pow_bits(sg__nums(a), e) > ctx->max_bits)
            return sg__err(ctx, SG_ELIMIT, "power with more than %zu bits", ctx->max_bits), NULL;
        const sg_expr *m = mono_pow(ctx, a->args[0], e);
        if (!m)
            return NULL;
        fmpz_t k;
        fmpz_init(k);
        sg__num_pow(k, sg__nums(a), fmpz_get_ui(e));
        const sg_expr *res = sg__scale(ctx, m, k);
        fmpz_clear(k);
        return res;
    }
    size_t nterms = a->nargs + (fmpz_is_zero(&a->u.val) ? 0 : 1);
    /* squaring a polynomial of B terms costs B * B products: bound both */
    size_t bound = ctx->max_terms + 1, v;
    if (fmpz_cmp_ui(e, 1u << 20) <= 0) {
        double D, ed = (double)fmpz_get_ui(e);
        atoms_and_degree(a, &v, &D);
        bound = pow_terms_bound(nterms, ed, ctx->max_terms);
        if (v != SIZE_MAX) {
            size_t by_degree = pow_terms_bound(v + 1, ed * D, ctx->max_terms);
            if (by_degree < bound)
                bound = by_degree;
        }
    }
    if (bound > ctx->max_terms || (uint64_t)bound * bound > (uint64_t)ctx->max_terms * 64)
        return sg__err(ctx, SG_ELIMIT, "expanding a power of a sum of %zu terms gives more than %zu terms",
                       nterms, ctx->max_terms), NULL;
    ulong n = fmpz_get_ui(e);
    sg__poly base, acc, tmp;
    sg__poly_init(&base);
    sg__poly_init(&acc);
    sg__poly_init(&tmp);
    const sg_expr *res = NULL;
    bool ok = sg__poly_set(ctx, &base, a);
    fmpz_one(&acc.c);
    /* left-to-right binary powering */
    int top = 63;
    while (top > 0 && !((n >> top) & 1))
        top--;
    for (int bit = top; bit >= 0 && ok; bit--) {
        poly_reset(&tmp);
        ok = poly_mul_into(ctx, &tmp, &acc, &acc);
        if (!ok)
            break;
        sg__poly sw = acc;
        acc = tmp;
        tmp = sw;
        if ((n >> bit) & 1) {
            poly_reset(&tmp);
            ok = poly_mul_into(ctx, &tmp, &acc, &base);
            sw = acc;
            acc = tmp;
            tmp = sw;
        }
    }
    if (ok)
        res = sg__poly_get(ctx, &acc);
    sg__poly_clear(&base);
    sg__poly_clear(&acc);
    sg__poly_clear(&tmp);
    return res;
}

const sg_expr *sg__pow(sg_ctx *ctx, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *args[2] = {a, b};
    if (b->op == SG_OP_INT && fmpz_sgn(&b->u.val) >= 0) {
        if (a->op == SG_OP_INT) {
            /* 0, 1 and -1 to any power fold; a constant power too large to
             * compute stays a Pow atom: evaluation decides (x >> 2**70 is 0
             * or -1 without computing 2**(2**70)). */
            if (fmpz_is_zero(&b->u.val))
                return ctx->one; /* 0 ** 0 is 1 too */
            if (fmpz_is_zero(&a->u.val) || fmpz_is_one(&a->u.val))
                return a;
            if (fmpz_equal_si(&a->u.val, -1))
                return fmpz_is_even(&b->u.val) ? ctx->one : ctx->minus_one;
            if (sg__num_pow_bits(&a->u.val, &b->u.val) > ctx->max_bits)
                return sg__intern(ctx, SG_OP_POW, SG_SORT_INT, 2, args, NULL, NULL, NULL, 0);
            return poly_pow(ctx, a, &b->u.val);
        }
        if (!fmpz_fits_si(&b->u.val)) {
            if (a->op == SG_OP_ADD)
                return sg__err(ctx, SG_ELIMIT, "exponent too large"), NULL;
            return mono_pow(ctx, a, &b->u.val);
        }
        return poly_pow(ctx, a, &b->u.val);
    }
    /* symbolic or negative exponent: kept as an atom (evaluation decides) */
    if (b->op != SG_OP_INT && a == ctx->one)
        return ctx->one;
    return sg__intern(ctx, SG_OP_POW, SG_SORT_INT, 2, args, NULL, NULL, NULL, 0);
}

/* The greatest monomial dividing every term of p and q (1 when either has a
 * nonzero constant term or no terms). */
const sg_expr *sg__poly_mono_gcd(sg_ctx *ctx, const sg__poly *p, const sg__poly *q)
{
    if (!fmpz_is_zero(&p->c) || !fmpz_is_zero(&q->c) || p->n == 0 || q->n == 0)
        return ctx->one;
    mono_view v;
    mono_view_of(&v, q->t[0].m);
    mono_buf buf;
    if (!mono_buf_init(ctx, &buf, v.n))
        return NULL;
    const sg_expr **atoms = buf.atoms;
    fmpz *exps = buf.exps;
    size_t n = 0;
    for (size_t i = 0; i < v.n; i++) {
        const sg_expr *x = mv_atom(&v, q->t[0].m, i);
        fmpz_init_set(exps + n, v.exps + i);
        for (int which = 0; which < 2 && !fmpz_is_zero(exps + n); which++) {
            const sg__poly *r = which ? q : p;
            for (size_t t = 0; t < r->n && !fmpz_is_zero(exps + n); t++) {
                mono_view w;
                mono_view_of(&w, r->t[t].m);
                const fmpz *found = NULL;
                for (size_t k = 0; k < w.n; k++)
                    if (mv_atom(&w, r->t[t].m, k) == x)
                        found = w.exps + k;
                if (!found)
                    fmpz_zero(exps + n);
                else if (fmpz_cmp(found, exps + n) < 0)
                    fmpz_set(exps + n, found);
            }
        }
        if (fmpz_is_zero(exps + n)) {
            fmpz_clear(exps + n);
        } else {
            atoms[n++] = x;
        }
    }
    const sg_expr *r = mono_make(ctx, n, atoms, exps);
    mono_buf_free(&buf, n);
    return r;
}
