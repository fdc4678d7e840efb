/* Intervals of integers with infinite ends, and their arithmetic: one
 * function per operator of the expression core (bitwise operators are in
 * bitwise.c). Every result is sound and, for a single operation on
 * independent operands, as tight as the reasoning below allows; each
 * function says where it is exact (the hull of every value the operation
 * takes) and where it is not. */
#include "num/num.h"
#include "range/range_ops.h"

/* ---- basics ------------------------------------------------------------ */

void sg__iv_init(sg__iv *r)
{
    fmpz_init(&r->lo);
    fmpz_init(&r->hi);
    r->lo_inf = r->hi_inf = true;
}

void sg__iv_clear(sg__iv *r)
{
    fmpz_clear(&r->lo);
    fmpz_clear(&r->hi);
}

void sg__iv_set(sg__iv *r, const sg__iv *a)
{
    if (r == a)
        return;
    fmpz_set(&r->lo, &a->lo);
    fmpz_set(&r->hi, &a->hi);
    r->lo_inf = a->lo_inf;
    r->hi_inf = a->hi_inf;
}

void sg__iv_swap(sg__iv *a, sg__iv *b)
{
    sg__iv t = *a;
    *a = *b;
    *b = t;
}

void sg__iv_set_full(sg__iv *r)
{
    fmpz_zero(&r->lo);
    fmpz_zero(&r->hi);
    r->lo_inf = r->hi_inf = true;
}

void sg__iv_set_bool(sg__iv *r, bool can_false, bool can_true)
{
    if (!can_false && !can_true) /* nothing possible: any range is sound */
        can_false = can_true = true;
    fmpz_set_ui(&r->lo, can_false ? 0 : 1);
    fmpz_set_ui(&r->hi, can_true ? 1 : 0);
    r->lo_inf = r->hi_inf = false;
}

void sg__iv_set_point(sg__iv *r, const fmpz_t v)
{
    fmpz_set(&r->lo, v);
    fmpz_set(&r->hi, v);
    r->lo_inf = r->hi_inf = false;
}

void sg__iv_set_si(sg__iv *r, bool lo_inf, slong lo, bool hi_inf, slong hi)
{
    fmpz_set_si(&r->lo, lo_inf ? 0 : lo);
    fmpz_set_si(&r->hi, hi_inf ? 0 : hi);
    r->lo_inf = lo_inf;
    r->hi_inf = hi_inf;
}

bool sg__iv_meet(sg__iv *r, const sg__iv *a)
{
    if (!a->lo_inf && (r->lo_inf || fmpz_cmp(&a->lo, &r->lo) > 0)) {
        fmpz_set(&r->lo, &a->lo);
        r->lo_inf = false;
    }
    if (!a->hi_inf && (r->hi_inf || fmpz_cmp(&a->hi, &r->hi) < 0)) {
        fmpz_set(&r->hi, &a->hi);
        r->hi_inf = false;
    }
    return r->lo_inf || r->hi_inf || fmpz_cmp(&r->lo, &r->hi) <= 0;
}

void sg__iv_hull(sg__iv *r, const sg__iv *a)
{
    if (r == a)
        return;
    if (a->lo_inf) {
        r->lo_inf = true;
        fmpz_zero(&r->lo);
    } else if (!r->lo_inf && fmpz_cmp(&a->lo, &r->lo) < 0) {
        fmpz_set(&r->lo, &a->lo);
    }
    if (a->hi_inf) {
        r->hi_inf = true;
        fmpz_zero(&r->hi);
    } else if (!r->hi_inf && fmpz_cmp(&a->hi, &r->hi) > 0) {
        fmpz_set(&r->hi, &a->hi);
    }
}

bool sg__iv_is_point(const sg__iv *r)
{
    return !r->lo_inf && !r->hi_inf && fmpz_equal(&r->lo, &r->hi);
}

bool sg__iv_contains(const sg__iv *r, const fmpz_t v)
{
    return (r->lo_inf || fmpz_cmp(&r->lo, v) <= 0) && (r->hi_inf || fmpz_cmp(v, &r->hi) <= 0);
}

bool sg__iv_equal(const sg__iv *a, const sg__iv *b)
{
    return a->lo_inf == b->lo_inf && a->hi_inf == b->hi_inf && (a->lo_inf || fmpz_equal(&a->lo, &b->lo)) &&
           (a->hi_inf || fmpz_equal(&a->hi, &b->hi));
}

bool sg__iv_nonneg(const sg__iv *r)
{
    return !r->lo_inf && fmpz_sgn(&r->lo) >= 0;
}

bool sg__iv_nonpos(const sg__iv *r)
{
    return !r->hi_inf && fmpz_sgn(&r->hi) <= 0;
}

/* ---- extended integers: a finite value or -oo/oo ---------------------- */

typedef struct xn {
    fmpz v;  /* the value when inf == 0 */
    int inf; /* -1: -oo, 1: oo, 0: finite */
} xn;

static void xn_init(xn *x)
{
    fmpz_init(&x->v);
    x->inf = 0;
}

static void xn_clear(xn *x)
{
    fmpz_clear(&x->v);
}

static void xn_set(xn *r, const xn *a)
{
    fmpz_set(&r->v, &a->v);
    r->inf = a->inf;
}

static void xn_set_inf(xn *r, int s)
{
    fmpz_zero(&r->v);
    r->inf = s;
}

static void xn_lo(xn *r, const sg__iv *a)
{
    if (a->lo_inf)
        xn_set_inf(r, -1);
    else
        fmpz_set(&r->v, &a->lo), r->inf = 0;
}

static void xn_hi(xn *r, const sg__iv *a)
{
    if (a->hi_inf)
        xn_set_inf(r, 1);
    else
        fmpz_set(&r->v, &a->hi), r->inf = 0;
}

static int xn_sgn(const xn *a)
{
    return a->inf ? a->inf : fmpz_sgn(&a->v);
}

static int xn_cmp(const xn *a, const xn *b)
{
    if (a->inf || b->inf)
        return (a->inf > b->inf) - (a->inf < b->inf);
    return fmpz_cmp(&a->v, &b->v);
}

/* r = [lo, hi]. A lower end of oo or an upper end of -oo (an empty result,
 * which the callers never produce) widens to infinity: always sound. */
static void iv_from(sg__iv *r, const xn *lo, const xn *hi)
{
    r->lo_inf = lo->inf != 0;
    r->hi_inf = hi->inf != 0;
    if (r->lo_inf)
        fmpz_zero(&r->lo);
    else
        fmpz_set(&r->lo, &lo->v);
    if (r->hi_inf)
        fmpz_zero(&r->hi);
    else
        fmpz_set(&r->hi, &hi->v);
}

/* r = a * b. Values are integers, so an infinite end stands for values
 * without bound and 0 times it is 0. */
static void xn_mul(xn *r, const xn *a, const xn *b)
{
    int sa = xn_sgn(a), sb = xn_sgn(b);
    if (sa == 0 || sb == 0)
        xn_set_inf(r, 0);
    else if (a->inf || b->inf)
        xn_set_inf(r, sa * sb);
    else
        fmpz_mul(&r->v, &a->v, &b->v), r->inf = 0;
}

typedef enum { RND_FLOOR, RND_CEIL, RND_TRUNC } rnd_mode;

/* r = the rounding of a / b (b != 0). With an infinite b and a finite a it
 * is the limit of the rounded quotient as b grows without bound (floor: 0
 * or -1, ceil: 1 or 0, trunc: 0), which quotients by large finite divisors
 * reach; an infinite a gives an infinite quotient of the sign of a / b. */
static void xn_div(xn *r, const xn *a, const xn *b, rnd_mode m)
{
    int sa = xn_sgn(a), sb = xn_sgn(b), s = sa * sb;
    if (sa == 0) {
        xn_set_inf(r, 0);
    } else if (a->inf) {
        xn_set_inf(r, s);
    } else if (b->inf) {
        xn_set_inf(r, 0);
        if (m == RND_FLOOR && s < 0)
            fmpz_set_si(&r->v, -1);
        else if (m == RND_CEIL && s > 0)
            fmpz_one(&r->v);
    } else {
        r->inf = 0;
        if (m == RND_FLOOR)
            fmpz_fdiv_q(&r->v, &a->v, &b->v);
        else if (m == RND_CEIL)
            fmpz_cdiv_q(&r->v, &a->v, &b->v);
        else
            fmpz_tdiv_q(&r->v, &a->v, &b->v);
    }
}

/* ---- negation, sums, products ----------------------------------------- */

void sg__iv_neg(sg__iv *r, const sg__iv *a)
{
    sg__iv t;
    sg__iv_init(&t);
    t.lo_inf = a->hi_inf;
    t.hi_inf = a->lo_inf;
    if (!t.lo_inf)
        fmpz_neg(&t.lo, &a->hi);
    if (!t.hi_inf)
        fmpz_neg(&t.hi, &a->lo);
    sg__iv_swap(r, &t);
    sg__iv_clear(&t);
}

void sg__iv_add(sg__iv *r, const sg__iv *a, const sg__iv *b)
{
    /* exact */
    sg__iv t;
    sg__iv_init(&t);
    t.lo_inf = a->lo_inf || b->lo_inf;
    t.hi_inf = a->hi_inf || b->hi_inf;
    if (!t.lo_inf)
        fmpz_add(&t.lo, &a->lo, &b->lo);
    if (!t.hi_inf)
        fmpz_add(&t.hi, &a->hi, &b->hi);
    sg__iv_swap(r, &t);
    sg__iv_clear(&t);
}

void sg__iv_scale(sg__iv *r, const sg__iv *a, const fmpz_t k)
{
    /* exact: k * [lo, hi] is [k*lo, k*hi], ends swapped for k < 0 */
    int s = fmpz_sgn(k);
    if (s == 0) {
        fmpz_zero(&r->lo);
        fmpz_zero(&r->hi);
        r->lo_inf = r->hi_inf = false;
        return;
    }
    if (s < 0)
        sg__iv_neg(r, a);
    else
        sg__iv_set(r, a);
    if (!r->lo_inf)
        fmpz_mul(&r->lo, &r->lo, k);
    if (!r->hi_inf)
        fmpz_mul(&r->hi, &r->hi, k);
    if (s < 0) {
        if (!r->lo_inf)
            fmpz_neg(&r->lo, &r->lo);
        if (!r->hi_inf)
            fmpz_neg(&r->hi, &r->hi);
    }
}

void sg__iv_mul(sg__iv *r, const sg__iv *a, const sg__iv *b)
{
    /* exact for independent operands: the product is bilinear, so its
     * extremes over the box are among the four corner products */
    xn x[2], y[2], p, lo, hi;
    for (int i = 0; i < 2; i++)
        xn_init(&x[i]), xn_init(&y[i]);
    xn_init(&p), xn_init(&lo), xn_init(&hi);
    xn_lo(&x[0], a), xn_hi(&x[1], a), xn_lo(&y[0], b), xn_hi(&y[1], b);
    for (int i = 0; i < 4; i++) {
        xn_mul(&p, &x[i >> 1], &y[i & 1]);
        if (i == 0 || xn_cmp(&p, &lo) < 0)
            xn_set(&lo, &p);
        if (i == 0 || xn_cmp(&p, &hi) > 0)
            xn_set(&hi, &p);
    }
    iv_from(r, &lo, &hi);
    for (int i = 0; i < 2; i++)
        xn_clear(&x[i]), xn_clear(&y[i]);
    xn_clear(&p), xn_clear(&lo), xn_clear(&hi);
}

/* ---- powers -------------------------------------------------------------- */

/* Whether m ** e (|m| >= 2, e >= 1) is computed: when its least possible
 * bit length (bits(m) - 1) * e + 1 is at most cap. (The result may then
 * have up to bits(m) * e bits, at most twice the cap; it is exact.) */
static bool pow_computed(const fmpz_t m, const fmpz_t e, ulong cap)
{
    ulong b = fmpz_bits(m) - 1;
    return cap >= 1 && fmpz_cmp_ui(e, (cap - 1) / b) <= 0;
}

/* r = 2 ** min(e, cap): a lower bound of m ** e for m >= 2. */
static void pow2_floor(fmpz_t r, const fmpz_t e, ulong cap)
{
    ulong k = fmpz_cmp_ui(e, cap) > 0 ? cap : fmpz_get_ui(e);
    fmpz_one(r);
    fmpz_mul_2exp(r, r, k);
}

/* r = x ** e for a natural e >= 1, rounded in direction dir (-1: a value
 * <= the power, 1: a value >= it) when the power has more than cap bits. */
static void xn_pow(xn *r, const xn *x, const fmpz_t e, ulong cap, int dir)
{
    bool odd = fmpz_is_odd(e);
    if (x->inf) {
        xn_set_inf(r, odd ? x->inf : 1);
        return;
    }
    r->inf = 0;
    if (fmpz_is_zero(&x->v) || fmpz_is_one(&x->v)) {
        fmpz_set(&r->v, &x->v);
        return;
    }
    if (fmpz_equal_si(&x->v, -1)) {
        fmpz_set_si(&r->v, odd ? -1 : 1);
        return;
    }
    if (!pow_computed(&x->v, e, cap)) {
        bool negative = odd && fmpz_sgn(&x->v) < 0;
        if (negative ? dir < 0 : dir > 0) {
            xn_set_inf(r, negative ? -1 : 1);
        } else {
            pow2_floor(&r->v, e, cap);
            if (negative)
                fmpz_neg(&r->v, &r->v);
        }
        return;
    }
    fmpz_pow_ui(&r->v, &x->v, fmpz_get_ui(e));
}

void sg__iv_pow_nat(sg__iv *r, const sg__iv *a, const fmpz_t e, ulong cap)
{
    /* exact (below the cap): odd powers are increasing; even powers
     * decrease on the negatives and increase on the non-negatives */
    if (fmpz_is_one(e)) {
        sg__iv_set(r, a);
        return;
    }
    xn lo, hi, plo, phi;
    xn_init(&lo), xn_init(&hi), xn_init(&plo), xn_init(&phi);
    xn_lo(&lo, a), xn_hi(&hi, a);
    if (fmpz_is_odd(e) || sg__iv_nonneg(a)) {
        xn_pow(&plo, &lo, e, cap, -1);
        xn_pow(&phi, &hi, e, cap, 1);
    } else if (sg__iv_nonpos(a)) {
        xn_pow(&plo, &hi, e, cap, -1);
        xn_pow(&phi, &lo, e, cap, 1);
    } else {
        xn_pow(&plo, &lo, e, cap, 1);
        xn_pow(&phi, &hi, e, cap, 1);
        if (xn_cmp(&plo, &phi) > 0)
            xn_set(&phi, &plo);
        xn_set_inf(&plo, 0);
    }
    iv_from(r, &plo, &phi);
    xn_clear(&lo), xn_clear(&hi), xn_clear(&plo), xn_clear(&phi);
}

/* r = m ** e for finite m >= 2 and e >= 0, rounded in direction dir when
 * the power has more than cap bits. */
static void mag_pow(xn *r, const fmpz_t m, const fmpz_t e, ulong cap, int dir)
{
    r->inf = 0;
    if (fmpz_is_zero(e)) {
        fmpz_one(&r->v);
    } else if (!pow_computed(m, e, cap)) {
        if (dir > 0)
            xn_set_inf(r, 1);
        else
            pow2_floor(&r->v, e, cap);
    } else {
        fmpz_pow_ui(&r->v, m, fmpz_get_ui(e));
    }
}

/* r = the range of m ** e for m in [m0, m1] (m0 >= 0; m1 may be oo) and e
 * in [e0, e1] (0 <= e0 <= e1; e1 may be oo). m ** e is increasing in m
 * and, for m >= 1, in e; 0 ** 0 = 1, 0 ** e = 0 for e >= 1, 1 ** e = 1.
 * Exact (below the cap). */
static void pow_mag(sg__iv *r, const fmpz_t m0, const fmpz_t m1, bool m1_inf, const fmpz_t e0, const fmpz_t e1,
                    bool e1_inf, ulong cap)
{
    bool e1_pos = e1_inf || fmpz_sgn(e1) > 0; /* some e >= 1 */
    xn lo, hi;
    xn_init(&lo), xn_init(&hi);
    if (fmpz_is_zero(m0))
        fmpz_set_ui(&lo.v, e1_pos ? 0 : 1);
    else if (fmpz_is_one(m0))
        fmpz_one(&lo.v);
    else
        mag_pow(&lo, m0, e0, cap, -1);
    if (!e1_pos)
        fmpz_one(&hi.v); /* e = 0 only */
    else if (m1_inf || (e1_inf && fmpz_cmp_ui(m1, 2) >= 0))
        xn_set_inf(&hi, 1);
    else if (fmpz_is_zero(m1))
        fmpz_set_ui(&hi.v, fmpz_is_zero(e0) ? 1 : 0);
    else if (fmpz_is_one(m1))
        fmpz_one(&hi.v);
    else
        mag_pow(&hi, m1, e1, cap, 1);
    iv_from(r, &lo, &hi);
    xn_clear(&lo), xn_clear(&hi);
}

/* acc = acc united with part (part is consumed); *any says whether acc
 * holds anything yet. */
static void join(sg__iv *acc, sg__iv *part, bool *any)
{
    if (*any)
        sg__iv_hull(acc, part);
    else
        sg__iv_swap(acc, part);
    *any = true;
}

void sg__iv_pow(sg__iv *r, const sg__iv *a, const sg__iv *b, ulong cap)
{
    /* Where it is defined the exponent is e >= 0, so only [max(lo, 0), hi]
     * counts; an exponent that is always negative always fails. The base
     * splits into its values >= 0 and its values <= -1; for the latter
     * a ** e is |a| ** e for even e and -(|a| ** e) for odd e, and with
     * |a| >= 1 both are monotone in e over the even (odd) exponents. The
     * union of the three parts is exact (below the cap). */
    if (!b->hi_inf && fmpz_sgn(&b->hi) < 0) {
        sg__iv_set_full(r);
        return;
    }
    fmpz_t e0, e1, m0, m1, p0, p1;
    fmpz_init(e0), fmpz_init(e1), fmpz_init(m0), fmpz_init(m1), fmpz_init(p0), fmpz_init(p1);
    bool e1_inf = b->hi_inf, any = false;
    if (!b->lo_inf && fmpz_sgn(&b->lo) > 0)
        fmpz_set(e0, &b->lo);
    if (!e1_inf)
        fmpz_set(e1, &b->hi);
    sg__iv res, t;
    sg__iv_init(&res), sg__iv_init(&t);
    if (a->hi_inf || fmpz_sgn(&a->hi) >= 0) {
        /* the base's values >= 0 */
        if (!a->lo_inf && fmpz_sgn(&a->lo) > 0)
            fmpz_set(m0, &a->lo);
        if (!a->hi_inf)
            fmpz_set(m1, &a->hi);
        pow_mag(&res, m0, m1, a->hi_inf, e0, e1, e1_inf, cap);
        any = true;
    }
    if (a->lo_inf || fmpz_sgn(&a->lo) < 0) {
        /* the base's values <= -1: |a| in [m0, m1] */
        if (a->hi_inf || fmpz_sgn(&a->hi) >= 0)
            fmpz_one(m0);
        else
            fmpz_neg(m0, &a->hi);
        if (!a->lo_inf)
            fmpz_neg(m1, &a->lo);
        for (int odd = 0; odd < 2; odd++) {
            /* the exponents of one parity: [p0, p1] */
            fmpz_set(p0, e0);
            if (fmpz_is_odd(p0) != odd)
                fmpz_add_ui(p0, p0, 1);
            if (!e1_inf) {
                fmpz_set(p1, e1);
                if (fmpz_is_odd(p1) != odd)
                    fmpz_sub_ui(p1, p1, 1);
                if (fmpz_cmp(p0, p1) > 0)
                    continue;
            }
            pow_mag(&t, m0, m1, a->lo_inf, p0, p1, e1_inf, cap);
            if (odd)
                sg__iv_neg(&t, &t);
            join(&res, &t, &any);
        }
    }
    sg__iv_swap(r, &res);
    sg__iv_clear(&res), sg__iv_clear(&t);
    fmpz_clear(e0), fmpz_clear(e1), fmpz_clear(m0), fmpz_clear(m1), fmpz_clear(p0), fmpz_clear(p1);
}

/* ---- the division family ---------------------------------------------- */

/* The part of b that is >= 1 (pos) or <= -1 (neg); false if none. */
static bool pos_part(sg__iv *p, const sg__iv *b)
{
    if (!b->hi_inf && fmpz_sgn(&b->hi) < 1)
        return false;
    sg__iv_set(p, b);
    if (p->lo_inf || fmpz_sgn(&p->lo) < 1) {
        fmpz_one(&p->lo);
        p->lo_inf = false;
    }
    return true;
}

static bool neg_part(sg__iv *n, const sg__iv *b)
{
    if (!b->lo_inf && fmpz_sgn(&b->lo) > -1)
        return false;
    sg__iv_set(n, b);
    if (n->hi_inf || fmpz_sgn(&n->hi) > -1) {
        fmpz_set_si(&n->hi, -1);
        n->hi_inf = false;
    }
    return true;
}

/* The quotients of a by a divisor in p (p.lo >= 1, finite): the lower end
 * is the least corner quotient rounded by mlo, the upper the greatest
 * rounded by mhi. floor, ceil and trunc of x / y are monotone in x for
 * fixed y > 0 and, for fixed x, in y, so the extremes are at corners and
 * are attained (exact). False if the result is empty (mlo = ceil, mhi =
 * floor: no exact quotient). */
static bool div_pos(sg__iv *r, const sg__iv *a, const sg__iv *p, rnd_mode mlo, rnd_mode mhi)
{
    xn x[2], y[2], q, lo, hi;
    for (int i = 0; i < 2; i++)
        xn_init(&x[i]), xn_init(&y[i]);
    xn_init(&q), xn_init(&lo), xn_init(&hi);
    xn_lo(&x[0], a), xn_hi(&x[1], a), xn_lo(&y[0], p), xn_hi(&y[1], p);
    for (int i = 0; i < 4; i++) {
        xn_div(&q, &x[i >> 1], &y[i & 1], mlo);
        if (i == 0 || xn_cmp(&q, &lo) < 0)
            xn_set(&lo, &q);
        xn_div(&q, &x[i >> 1], &y[i & 1], mhi);
        if (i == 0 || xn_cmp(&q, &hi) > 0)
            xn_set(&hi, &q);
    }
    bool ok = xn_cmp(&lo, &hi) <= 0;
    if (ok)
        iv_from(r, &lo, &hi);
    for (int i = 0; i < 2; i++)
        xn_clear(&x[i]), xn_clear(&y[i]);
    xn_clear(&q), xn_clear(&lo), xn_clear(&hi);
    return ok;
}

/* Quotients by the nonzero divisors of b: the union of those by its
 * positive part and by its negative part (x / y = (-x) / (-y), the same
 * rational number, so the same rounding). A divisor that can only be 0
 * always fails: [-oo, oo]. */
static void div_any(sg__iv *r, const sg__iv *a, const sg__iv *b, rnd_mode mlo, rnd_mode mhi)
{
    sg__iv part, t, na, res;
    sg__iv_init(&part), sg__iv_init(&t), sg__iv_init(&na), sg__iv_init(&res);
    bool any = false;
    if (pos_part(&part, b) && div_pos(&t, a, &part, mlo, mhi)) {
        sg__iv_swap(&res, &t);
        any = true;
    }
    if (neg_part(&part, b)) {
        sg__iv_neg(&part, &part);
        sg__iv_neg(&na, a);
        if (div_pos(&t, &na, &part, mlo, mhi)) {
            join(&res, &t, &any);
        }
    }
    if (!any)
        sg__iv_set_full(&res);
    sg__iv_swap(r, &res);
    sg__iv_clear(&part), sg__iv_clear(&t), sg__iv_clear(&na), sg__iv_clear(&res);
}

void sg__iv_floordiv(sg__iv *r, const sg__iv *a, const sg__iv *b)
{
    div_any(r, a, b, RND_FLOOR, RND_FLOOR);
}

void sg__iv_truncdiv(sg__iv *r, const sg__iv *a, const sg__iv *b)
{
    div_any(r, a, b, RND_TRUNC, RND_TRUNC);
}

void sg__iv_cleandiv(sg__iv *r, const sg__iv *a, const sg__iv *b)
{
    /* an exact quotient q = x / y is both ceil(x / y) and floor(x / y) */
    div_any(r, a, b, RND_CEIL, RND_FLOOR);
}

/* x % y for y in p = [d1, d2] (d1 >= 1 finite), Python's: x - y*q with
 * q = x // y, in [0, y - 1]. If q is the same q0 over the whole box (a
 * within [0, d1 - 1]: the identity; a constant divisor and a within one
 * block [k*d, k*d + d - 1]; a within [-d1, -1]: x + y), the values are
 * x - q0*y, linear, whose range is exact. Otherwise [0, d2 - 1], at most
 * hi when a >= 0 (x % y <= x there) and at least lo + d1 when a <= -1
 * (q <= -1 there, so x % y >= x + y). */
static void mod_pos(sg__iv *r, const sg__iv *a, const sg__iv *p)
{
    sg__iv q, t, res;
    sg__iv_init(&q), sg__iv_init(&t), sg__iv_init(&res);
    res.lo_inf = false;
    fmpz_zero(&res.lo);
    res.hi_inf = p->hi_inf;
    if (!p->hi_inf)
        fmpz_sub_ui(&res.hi, &p->hi, 1);
    div_pos(&q, a, p, RND_FLOOR, RND_FLOOR);
    if (sg__iv_is_point(&q)) {
        sg__iv_scale(&t, p, &q.lo);
        sg__iv_neg(&t, &t);
        sg__iv_add(&t, a, &t);
    } else {
        sg__iv_set_full(&t);
        if (sg__iv_nonneg(a) && !a->hi_inf) {
            fmpz_set(&t.hi, &a->hi);
            t.hi_inf = false;
        } else if (!a->lo_inf && !a->hi_inf && fmpz_sgn(&a->hi) < 0) {
            fmpz_add(&t.lo, &a->lo, &p->lo);
            t.lo_inf = false;
        }
    }
    sg__iv_set(&q, &res);
    if (sg__iv_meet(&res, &t))
        sg__iv_swap(r, &res);
    else
        sg__iv_swap(r, &q); /* not expected: keep [0, d2 - 1] */
    sg__iv_clear(&q), sg__iv_clear(&t), sg__iv_clear(&res);
}

void sg__iv_mod(sg__iv *r, const sg__iv *a, const sg__iv *b)
{
    /* the union over the positive and the negative divisors; for y < 0,
     * x % y = -((-x) % (-y)) */
    sg__iv part, t, na, res;
    sg__iv_init(&part), sg__iv_init(&t), sg__iv_init(&na), sg__iv_init(&res);
    bool any = false;
    if (pos_part(&part, b)) {
        mod_pos(&res, a, &part);
        any = true;
    }
    if (neg_part(&part, b)) {
        sg__iv_neg(&part, &part);
        sg__iv_neg(&na, a);
        mod_pos(&t, &na, &part);
        sg__iv_neg(&t, &t);
        join(&res, &t, &any);
    }
    if (!any)
        sg__iv_set_full(&res);
    sg__iv_swap(r, &res);
    sg__iv_clear(&part), sg__iv_clear(&t), sg__iv_clear(&na), sg__iv_clear(&res);
}

void sg__iv_truncmod(sg__iv *r, const sg__iv *a, const sg__iv *b)
{
    /* C's remainder does not depend on the sign of the divisor, and for
     * y > 0 it is x % y when x >= 0 and -((-x) % y) when x < 0: so the
     * dividend is split by sign and the divisor replaced by the range of
     * |y| over its nonzero values */
    sg__iv part, absb, t, res;
    sg__iv_init(&part), sg__iv_init(&absb), sg__iv_init(&t), sg__iv_init(&res);
    bool anyb = false, any = false;
    if (pos_part(&part, b)) {
        sg__iv_swap(&absb, &part);
        anyb = true;
    }
    if (neg_part(&part, b)) {
        sg__iv_neg(&part, &part);
        join(&absb, &part, &anyb);
    }
    if (anyb) {
        /* the dividend's values >= 0 */
        if (a->hi_inf || fmpz_sgn(&a->hi) >= 0) {
            sg__iv_set(&part, a);
            if (part.lo_inf || fmpz_sgn(&part.lo) < 0) {
                fmpz_zero(&part.lo);
                part.lo_inf = false;
            }
            mod_pos(&res, &part, &absb);
            any = true;
        }
        if (neg_part(&part, a)) {
            sg__iv_neg(&part, &part);
            mod_pos(&t, &part, &absb);
            sg__iv_neg(&t, &t);
            join(&res, &t, &any);
        }
    }
    if (!any)
        sg__iv_set_full(&res);
    sg__iv_swap(r, &res);
    sg__iv_clear(&part), sg__iv_clear(&absb), sg__iv_clear(&t), sg__iv_clear(&res);
}

/* ---- Min, Max, Abs (exact) ----------------------------------------------- */

void sg__iv_min(sg__iv *r, const sg__iv *a, const sg__iv *b)
{
    xn alo, ahi, blo, bhi;
    xn_init(&alo), xn_init(&ahi), xn_init(&blo), xn_init(&bhi);
    xn_lo(&alo, a), xn_hi(&ahi, a), xn_lo(&blo, b), xn_hi(&bhi, b);
    iv_from(r, xn_cmp(&alo, &blo) <= 0 ? &alo : &blo, xn_cmp(&ahi, &bhi) <= 0 ? &ahi : &bhi);
    xn_clear(&alo), xn_clear(&ahi), xn_clear(&blo), xn_clear(&bhi);
}

void sg__iv_max(sg__iv *r, const sg__iv *a, const sg__iv *b)
{
    xn alo, ahi, blo, bhi;
    xn_init(&alo), xn_init(&ahi), xn_init(&blo), xn_init(&bhi);
    xn_lo(&alo, a), xn_hi(&ahi, a), xn_lo(&blo, b), xn_hi(&bhi, b);
    iv_from(r, xn_cmp(&alo, &blo) >= 0 ? &alo : &blo, xn_cmp(&ahi, &bhi) >= 0 ? &ahi : &bhi);
    xn_clear(&alo), xn_clear(&ahi), xn_clear(&blo), xn_clear(&bhi);
}

void sg__iv_abs(sg__iv *r, const sg__iv *a)
{
    if (sg__iv_nonneg(a)) {
        sg__iv_set(r, a);
    } else if (sg__iv_nonpos(a)) {
        sg__iv_neg(r, a);
    } else {
        /* 0 and the larger of -lo and hi */
        sg__iv t;
        sg__iv_init(&t);
        t.lo_inf = false;
        t.hi_inf = a->lo_inf || a->hi_inf;
        if (!t.hi_inf) {
            fmpz_neg(&t.hi, &a->lo);
            if (fmpz_cmp(&a->hi, &t.hi) > 0)
                fmpz_set(&t.hi, &a->hi);
        }
        sg__iv_swap(r, &t);
        sg__iv_clear(&t);
    }
}
