/* Ranges of Python's & | ^ (two's complement of unbounded width).
 *
 * Method. Let w be the largest bit length of a finite end of either operand
 * and W = w + 2. Each operand splits into its negative part and its
 * non-negative part; each pair of parts is mapped to W-bit unsigned
 * intervals (x >= 0 as x, x < 0 as 2**W + x, which keeps an interval an
 * interval, and & | ^ of W-bit two's complement words agree with Python's on
 * values of W - 1 bits). An infinite end is cut at the largest (smallest)
 * value of W - 1 bits. On the unsigned intervals the least and greatest
 * results are computed exactly with the bit-by-bit algorithms of Warren,
 * Hacker's Delight (2nd ed., section 4-3). The sign of the result of a pair
 * is fixed (x & y < 0 iff both are; x | y < 0 iff either is; x ^ y < 0 iff
 * exactly one is), so mapping back gives an interval again; the union over
 * the pairs is the answer.
 *
 * Why cutting infinite ends loses nothing. Write ~x = -x - 1. For the
 * non-negative values u, v (a negative operand is ~u' for u' >= 0), the
 * pairs reduce to u & v, u | v, u ^ v and u & ~v: an operand whose range
 * is [u0, oo) cut at 2**(W-1) - 1 still holds every residue modulo
 * 2**(W-2) > the other operand's finite ends, so where the result depends
 * only on those low bits (u & v with v bounded, u & ~v with u bounded) the
 * set of results is unchanged; where it does not, the result grows without
 * bound with the unbounded operand (and its end is set to infinity below)
 * while its other end is reached by small values, which the cut keeps.
 * So the result is the exact hull of the values, infinite ends included.
 *
 * Beyond SG_RANGE_BITOP_BITS bits the exact method (O(W) steps on W-bit
 * numbers) is replaced by a coarse sound bound. */
#include "num/num.h"
#include "range/range_ops.h"

/* t = a with bit i set and the bits below cleared: (a | m) & -m. */
static void up_at(fmpz_t t, const fmpz_t a, ulong i)
{
    fmpz_fdiv_q_2exp(t, a, i);
    if (fmpz_is_even(t))
        fmpz_add_ui(t, t, 1);
    fmpz_mul_2exp(t, t, i);
}

/* t = b (bit i set) with bit i cleared and the bits below set: (b - m) | (m - 1). */
static void down_at(fmpz_t t, const fmpz_t b, ulong i)
{
    fmpz_fdiv_q_2exp(t, b, i);
    fmpz_mul_2exp(t, t, i);
    fmpz_sub_ui(t, t, 1);
}

/* The least and greatest x OP y for x in [a, b], y in [c, d], W-bit
 * unsigned values. */
static void hd_min(fmpz_t r, sg_op op, const fmpz_t a0, const fmpz_t b, const fmpz_t c0, const fmpz_t d,
                   ulong W)
{
    fmpz_t a, c, t;
    fmpz_init_set(a, a0);
    fmpz_init_set(c, c0);
    fmpz_init(t);
    for (ulong k = W; k-- > 0;) {
        int ba = fmpz_tstbit(a, k), bc = fmpz_tstbit(c, k);
        if (op == SG_OP_BAND) {
            /* both have 0 here: setting it in one lets the bits below clear */
            if (!ba && !bc) {
                up_at(t, a, k);
                if (fmpz_cmp(t, b) <= 0) {
                    fmpz_swap(a, t);
                    break;
                }
                up_at(t, c, k);
                if (fmpz_cmp(t, d) <= 0) {
                    fmpz_swap(c, t);
                    break;
                }
            }
        } else {
            /* OR and XOR: one has 1 here: setting it in the other as well
             * costs nothing here and clears its bits below */
            if (!ba && bc) {
                up_at(t, a, k);
                if (fmpz_cmp(t, b) <= 0) {
                    fmpz_swap(a, t);
                    if (op == SG_OP_BOR)
                        break;
                }
            } else if (ba && !bc) {
                up_at(t, c, k);
                if (fmpz_cmp(t, d) <= 0) {
                    fmpz_swap(c, t);
                    if (op == SG_OP_BOR)
                        break;
                }
            }
        }
    }
    if (op == SG_OP_BAND)
        sg__num_and(r, a, c);
    else if (op == SG_OP_BOR)
        sg__num_or(r, a, c);
    else
        sg__num_xor(r, a, c);
    fmpz_clear(a), fmpz_clear(c), fmpz_clear(t);
}

static void hd_max(fmpz_t r, sg_op op, const fmpz_t a, const fmpz_t b0, const fmpz_t c, const fmpz_t d0,
                   ulong W)
{
    fmpz_t b, d, t;
    fmpz_init_set(b, b0);
    fmpz_init_set(d, d0);
    fmpz_init(t);
    for (ulong k = W; k-- > 0;) {
        int bb = fmpz_tstbit(b, k), bd = fmpz_tstbit(d, k);
        if (op == SG_OP_BAND) {
            /* only one has 1 here: clearing it there sets its bits below */
            if (bb && !bd) {
                down_at(t, b, k);
                if (fmpz_cmp(t, a) >= 0) {
                    fmpz_swap(b, t);
                    break;
                }
            } else if (!bb && bd) {
                down_at(t, d, k);
                if (fmpz_cmp(t, c) >= 0) {
                    fmpz_swap(d, t);
                    break;
                }
            }
        } else if (bb && bd) {
            /* OR and XOR: both have 1 here: clearing it in one keeps (OR)
             * or gains (XOR) this bit and sets the bits below */
            down_at(t, b, k);
            if (fmpz_cmp(t, a) >= 0) {
                fmpz_swap(b, t);
                if (op == SG_OP_BOR)
                    break;
            } else {
                down_at(t, d, k);
                if (fmpz_cmp(t, c) >= 0) {
                    fmpz_swap(d, t);
                    if (op == SG_OP_BOR)
                        break;
                }
            }
        }
    }
    if (op == SG_OP_BAND)
        sg__num_and(r, b, d);
    else if (op == SG_OP_BOR)
        sg__num_or(r, b, d);
    else
        sg__num_xor(r, b, d);
    fmpz_clear(b), fmpz_clear(d), fmpz_clear(t);
}

/* One part of an operand: all values of one sign. */
typedef struct part {
    sg__iv iv;
    bool neg;
} part;

/* The negative and non-negative parts of a (1 or 2 of them). */
static int split(part p[2], const sg__iv *a)
{
    int n = 0;
    if (a->lo_inf || fmpz_sgn(&a->lo) < 0) {
        sg__iv_set(&p[n].iv, a);
        if (a->hi_inf || fmpz_sgn(&a->hi) >= 0) {
            fmpz_set_si(&p[n].iv.hi, -1);
            p[n].iv.hi_inf = false;
        }
        p[n++].neg = true;
    }
    if (a->hi_inf || fmpz_sgn(&a->hi) >= 0) {
        sg__iv_set(&p[n].iv, a);
        if (a->lo_inf || fmpz_sgn(&a->lo) < 0) {
            fmpz_zero(&p[n].iv.lo);
            p[n].iv.lo_inf = false;
        }
        p[n++].neg = false;
    }
    return n;
}

/* [lo, hi] = part p as W-bit unsigned values, infinite ends cut. */
static void to_unsigned(fmpz_t lo, fmpz_t hi, const part *p, ulong W)
{
    if (!p->neg) {
        fmpz_set(lo, &p->iv.lo);
        if (p->iv.hi_inf) {
            fmpz_one(hi);
            fmpz_mul_2exp(hi, hi, W - 1);
            fmpz_sub_ui(hi, hi, 1);
        } else {
            fmpz_set(hi, &p->iv.hi);
        }
        return;
    }
    fmpz_t m;
    fmpz_init(m);
    fmpz_one(m);
    fmpz_mul_2exp(m, m, W);
    if (p->iv.lo_inf)
        fmpz_fdiv_q_2exp(lo, m, 1); /* 2**W - 2**(W-1) */
    else
        fmpz_add(lo, m, &p->iv.lo);
    fmpz_add(hi, m, &p->iv.hi);
    fmpz_clear(m);
}

/* The exact range of x OP y for x in part p, y in part q; false if the
 * algorithm's output breaks its invariants (never expected). */
static bool pair(sg__iv *r, sg_op op, const part *p, const part *q, ulong W)
{
    fmpz_t a, b, c, d;
    fmpz_init(a), fmpz_init(b), fmpz_init(c), fmpz_init(d);
    to_unsigned(a, b, p, W);
    to_unsigned(c, d, q, W);
    hd_min(&r->lo, op, a, b, c, d, W);
    hd_max(&r->hi, op, a, b, c, d, W);
    r->lo_inf = r->hi_inf = false;
    bool neg = op == SG_OP_BAND ? p->neg && q->neg : op == SG_OP_BOR ? p->neg || q->neg : p->neg != q->neg;
    /* the results lie in the half of their sign: [2**(W-1), 2**W) for
     * negative ones, [0, 2**(W-1)) for the others */
    bool ok = fmpz_cmp(&r->lo, &r->hi) <= 0 && (neg ? (ulong)fmpz_bits(&r->lo) == W && (ulong)fmpz_bits(&r->hi) == W
                                                    : (ulong)fmpz_bits(&r->hi) < W);
    if (neg) {
        fmpz_one(a);
        fmpz_mul_2exp(a, a, W);
        fmpz_sub(&r->lo, &r->lo, a);
        fmpz_sub(&r->hi, &r->hi, a);
    }
    /* the end that grows without bound with an unbounded operand */
    const part *n = p->neg ? p : q, *o = p->neg ? q : p; /* n negative if either is */
    bool unb;
    if (op == SG_OP_BAND)
        unb = !p->neg && !q->neg ? p->iv.hi_inf && q->iv.hi_inf
              : p->neg && q->neg ? p->iv.lo_inf || q->iv.lo_inf
                                 : o->iv.hi_inf;
    else if (op == SG_OP_BOR)
        unb = !p->neg && !q->neg ? p->iv.hi_inf || q->iv.hi_inf
              : p->neg && q->neg ? p->iv.lo_inf && q->iv.lo_inf
                                 : n->iv.lo_inf;
    else
        unb = !p->neg && !q->neg ? p->iv.hi_inf || q->iv.hi_inf
              : p->neg && q->neg ? p->iv.lo_inf || q->iv.lo_inf
                                 : n->iv.lo_inf || o->iv.hi_inf;
    if (unb) {
        if (neg) {
            r->lo_inf = true;
            fmpz_zero(&r->lo);
        } else {
            r->hi_inf = true;
            fmpz_zero(&r->hi);
        }
    }
    fmpz_clear(a), fmpz_clear(b), fmpz_clear(c), fmpz_clear(d);
    return ok;
}

static ulong end_bits(const sg__iv *a)
{
    ulong w = 0;
    if (!a->lo_inf)
        w = fmpz_bits(&a->lo);
    if (!a->hi_inf && (ulong)fmpz_bits(&a->hi) > w)
        w = fmpz_bits(&a->hi);
    return w;
}

/* A coarse sound bound: values of at most w bits stay within
 * [-2**w, 2**w - 1] under & | ^; x & y lies in [0, x] for x >= 0; and
 * x | y >= max(x, y) for x, y >= 0. */
static void coarse(sg__iv *r, sg_op op, const sg__iv *a, const sg__iv *b, ulong w)
{
    sg__iv t, u;
    sg__iv_init(&t), sg__iv_init(&u);
    if (!a->lo_inf && !a->hi_inf && !b->lo_inf && !b->hi_inf) {
        t.lo_inf = t.hi_inf = false;
        fmpz_one(&t.hi);
        fmpz_mul_2exp(&t.hi, &t.hi, w);
        fmpz_neg(&t.lo, &t.hi);
        fmpz_sub_ui(&t.hi, &t.hi, 1);
    }
    for (int i = 0; i < 2; i++) {
        const sg__iv *x = i ? b : a, *y = i ? a : b;
        if (op == SG_OP_BAND && sg__iv_nonneg(x)) {
            sg__iv_set(&u, x);
            fmpz_zero(&u.lo);
            sg__iv_meet(&t, &u);
        }
        if (op == SG_OP_BOR && sg__iv_nonneg(x) && sg__iv_nonneg(y)) {
            sg__iv_set_full(&u);
            fmpz_set(&u.lo, &x->lo);
            u.lo_inf = false;
            sg__iv_meet(&t, &u);
        }
    }
    sg__iv_swap(r, &t);
    sg__iv_clear(&t), sg__iv_clear(&u);
}

void sg__iv_bitop(sg__iv *r, sg_op op, const sg__iv *a, const sg__iv *b)
{
    if (sg__iv_is_point(a) && sg__iv_is_point(b)) {
        fmpz_t v;
        fmpz_init(v);
        if (op == SG_OP_BAND)
            sg__num_and(v, &a->lo, &b->lo);
        else if (op == SG_OP_BOR)
            sg__num_or(v, &a->lo, &b->lo);
        else
            sg__num_xor(v, &a->lo, &b->lo);
        sg__iv_set_point(r, v);
        fmpz_clear(v);
        return;
    }
    ulong w = end_bits(a), wb = end_bits(b);
    if (wb > w)
        w = wb;
    if (w + 2 > SG_RANGE_BITOP_BITS) {
        coarse(r, op, a, b, w);
        return;
    }
    ulong W = w + 2;
    part pa[2], pb[2];
    for (int i = 0; i < 2; i++)
        sg__iv_init(&pa[i].iv), sg__iv_init(&pb[i].iv);
    int na = split(pa, a), nb = split(pb, b);
    sg__iv res, t;
    sg__iv_init(&res), sg__iv_init(&t);
    bool any = false, ok = true;
    for (int i = 0; i < na && ok; i++)
        for (int j = 0; j < nb && ok; j++) {
            ok = pair(&t, op, &pa[i], &pb[j], W);
            if (!any)
                sg__iv_swap(&res, &t);
            else
                sg__iv_hull(&res, &t);
            any = true;
        }
    if (ok)
        sg__iv_swap(r, &res);
    else
        coarse(r, op, a, b, w);
    for (int i = 0; i < 2; i++)
        sg__iv_clear(&pa[i].iv), sg__iv_clear(&pb[i].iv);
    sg__iv_clear(&res), sg__iv_clear(&t);
}
