/* expr: canonical forms, interning, evaluation, substitution, bad input,
 * limits, and randomized properties of the canonicalizer. */
#include "cmocka_all.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "shapeguard.h"

static sg_ctx *C;
static const sg_expr *X, *Y, *Z;

static void ok(sg_status s)
{
    if (s != SG_OK)
        fail_msg("unexpected error %s: %s", sg_status_kind(s), sg_ctx_last_error_msg(C));
}

static const sg_expr *I(int64_t v)
{
    const sg_expr *e;
    ok(sg_expr_int(C, &e, v));
    return e;
}
static const sg_expr *S(const char *n)
{
    const sg_expr *e;
    ok(sg_expr_sym(C, &e, n));
    return e;
}
static const sg_expr *big(const char *s)
{
    const sg_expr *e;
    ok(sg_expr_int_str(C, &e, s));
    return e;
}
#define BIN(F)                                                   \
    static const sg_expr *F##_(const sg_expr *a, const sg_expr *b) \
    {                                                            \
        const sg_expr *e;                                        \
        ok(sg_expr_##F(C, &e, a, b));                            \
        return e;                                                \
    }
BIN(add)
BIN(sub)
BIN(mul)
BIN(pow)
BIN(floordiv)
BIN(mod)
BIN(ceildiv)
BIN(cleandiv)
BIN(truncdiv)
BIN(truncmod)
BIN(band)
BIN(bor)
BIN(bxor)
BIN(shl)
BIN(shr)
#define add add_
#define sub sub_
#define mul mul_
#define pow pow_
#define floordiv floordiv_
#define mod mod_
#define ceildiv ceildiv_
#define cleandiv cleandiv_
#define truncdiv truncdiv_
#define truncmod truncmod_
#define band band_
#define bor bor_
#define bxor bxor_
#define shl shl_
#define shr shr_
static const sg_expr *rel(sg_rel r, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *e;
    ok(sg_expr_rel(C, &e, r, a, b));
    return e;
}
static const sg_expr *max2(const sg_expr *a, const sg_expr *b)
{
    const sg_expr *e, *v[2] = {a, b};
    ok(sg_expr_max(C, &e, 2, v));
    return e;
}
static const sg_expr *min2(const sg_expr *a, const sg_expr *b)
{
    const sg_expr *e, *v[2] = {a, b};
    ok(sg_expr_min(C, &e, 2, v));
    return e;
}
static const sg_expr *and2(const sg_expr *a, const sg_expr *b)
{
    const sg_expr *e, *v[2] = {a, b};
    ok(sg_expr_and(C, &e, 2, v));
    return e;
}
static const sg_expr *or2(const sg_expr *a, const sg_expr *b)
{
    const sg_expr *e, *v[2] = {a, b};
    ok(sg_expr_or(C, &e, 2, v));
    return e;
}
static const sg_expr *not1(const sg_expr *a)
{
    const sg_expr *e;
    ok(sg_expr_not(C, &e, a));
    return e;
}
static const sg_expr *neg(const sg_expr *a)
{
    const sg_expr *e;
    ok(sg_expr_neg(C, &e, a));
    return e;
}
static const sg_expr *absx(const sg_expr *a)
{
    const sg_expr *e;
    ok(sg_expr_abs(C, &e, a));
    return e;
}
static const sg_expr *where(const sg_expr *c, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *e;
    ok(sg_expr_where(C, &e, c, a, b));
    return e;
}

/* eval e at x=a, y=b, z=c; returns the status, the value in *v */
static sg_status eval3(const sg_expr *e, int64_t a, int64_t b, int64_t c, const sg_expr **v)
{
    const sg_expr *syms[3] = {X, Y, Z}, *vals[3] = {I(a), I(b), I(c)};
    return sg_expr_eval(C, v, e, 3, syms, vals);
}

static int setup(void **state)
{
    (void)state;
    if (sg_ctx_new(&C))
        return -1;
    X = S("x");
    Y = S("y");
    Z = S("z");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sg_ctx_free(C);
    return 0;
}

static void test_interning(void **state)
{
    (void)state;
    assert_ptr_equal(S("x"), X);
    assert_ptr_equal(add(X, Y), add(Y, X));
    assert_ptr_equal(mul(add(X, I(1)), Y), add(mul(X, Y), Y));
    assert_ptr_equal(big("340282366920938463463374607431768211456"), pow(I(2), I(128)));
    assert_ptr_not_equal(X, Y);
    assert_true(sg_expr_id(X) < sg_expr_id(Y));
    /* a second context is independent */
    sg_ctx *d;
    assert_int_equal(sg_ctx_new(&d), SG_OK);
    const sg_expr *x2;
    assert_int_equal(sg_expr_sym(d, &x2, "x"), SG_OK);
    assert_ptr_not_equal(x2, X);
    sg_ctx_free(d);
}

static void test_polynomial(void **state)
{
    (void)state;
    assert_ptr_equal(sub(mul(I(2), X), X), X);
    assert_ptr_equal(sub(X, X), I(0));
    /* (x + 1)**2 = x**2 + 2*x + 1 */
    assert_ptr_equal(pow(add(X, I(1)), I(2)), add(add(mul(X, X), mul(I(2), X)), I(1)));
    /* x*(y + 1) - x*y = x */
    assert_ptr_equal(sub(mul(X, add(Y, I(1))), mul(X, Y)), X);
    assert_int_equal(sg_expr_op(mul(X, Y)), SG_OP_MUL);
    assert_int_equal(sg_expr_op(mul(I(3), X)), SG_OP_ADD);
    assert_ptr_equal(pow(X, I(0)), I(1));
    assert_ptr_equal(pow(X, I(1)), X);
    assert_ptr_equal(mul(pow(X, I(2)), pow(X, I(3))), pow(X, I(5)));
    /* (x - y)(x + y) = x**2 - y**2 */
    assert_ptr_equal(mul(sub(X, Y), add(X, Y)), sub(pow(X, I(2)), pow(Y, I(2))));
    /* a symbolic exponent stays a Pow atom */
    assert_int_equal(sg_expr_op(pow(X, Y)), SG_OP_POW);
    assert_ptr_equal(shl(X, I(3)), mul(I(8), X));
    assert_ptr_equal(shr(X, I(3)), floordiv(X, I(8)));
    /* ~x = -x - 1 */
    const sg_expr *e;
    assert_int_equal(sg_expr_bnot(C, &e, X), SG_OK);
    assert_ptr_equal(e, sub(neg(X), I(1)));
}

static void test_floordiv_mod_rules(void **state)
{
    (void)state;
    assert_ptr_equal(floordiv(add(mul(I(2), X), I(1)), I(2)), X);
    assert_ptr_equal(mod(add(mul(I(6), X), I(5)), I(3)), I(2));
    assert_ptr_equal(floordiv(floordiv(X, I(2)), I(3)), floordiv(X, I(6)));
    assert_ptr_equal(mod(mod(X, I(3)), I(3)), mod(X, I(3)));
    assert_ptr_equal(mod(mod(X, I(6)), I(3)), mod(X, I(3)));
    assert_ptr_equal(mod(mod(X, I(3)), I(6)), mod(X, I(3)));
    /* the terms a replaced remainder brings in, and the smaller divisor after the gcd */
    assert_ptr_equal(mod(mod(add(mod(X, I(8)), Y), I(6)), I(2)), mod(add(X, Y), I(2)));
    assert_ptr_equal(mod(add(mul(I(2), mod(X, I(2))), I(2)), I(4)), mul(I(2), mod(add(X, I(1)), I(2))));
    const sg_expr *mi;
    assert_int_equal(sg_expr_modular_indexing(C, &mi, X, I(4), I(8)), SG_OK);
    assert_ptr_equal(mi, mod(floordiv(X, I(4)), I(8)));
    /* (x + 4) // 2 = x // 2 + 2 and (x + 5) // 2 = (x + 1) // 2 + 2 */
    assert_ptr_equal(floordiv(add(X, I(4)), I(2)), add(floordiv(X, I(2)), I(2)));
    assert_ptr_equal(floordiv(add(X, I(5)), I(2)), add(floordiv(add(X, I(1)), I(2)), I(2)));
    /* negative divisors: x // -2 = (-x) // 2; x % -3 = -((-x) % 3) */
    assert_ptr_equal(floordiv(X, I(-2)), floordiv(neg(X), I(2)));
    assert_ptr_equal(mod(X, I(-3)), neg(mod(neg(X), I(3))));
    /* (2*x) % 4 = 2*(x % 2) and (2*x + 1) // 4 = x // 2 */
    assert_ptr_equal(mod(mul(I(2), X), I(4)), mul(I(2), mod(X, I(2))));
    assert_ptr_equal(floordiv(add(mul(I(2), X), I(1)), I(4)), floordiv(X, I(2)));
    /* symbolic divisors: common factors cancel */
    assert_ptr_equal(floordiv(mul(X, Y), X), Y);
    assert_ptr_equal(floordiv(X, X), I(1));
    /* a term equal to the common factor becomes a constant, divided once */
    assert_ptr_equal(floordiv(add(mul(I(2), mul(X, Y)), mul(I(2), X)), mul(I(2), X)), add(Y, I(1)));
    assert_ptr_equal(floordiv(add(mul(I(6), mul(X, Y)), mul(I(3), X)), mul(I(-3), X)), floordiv(add(mul(I(2), Y), I(1)), I(-1)));
    assert_ptr_equal(mod(mul(I(2), X), mul(I(2), Y)), mul(I(2), mod(X, Y)));
    assert_ptr_equal(mod(X, X), I(0));
    /* mirror: R // d = sum m_i - R' // d; the smaller coefficient vector wins */
    assert_ptr_equal(ceildiv(X, I(4)), floordiv(add(X, I(3)), I(4)));
    assert_ptr_equal(neg(floordiv(neg(X), I(4))), floordiv(add(X, I(3)), I(4)));
    assert_ptr_equal(floordiv(add(X, I(1)), I(2)), sub(X, floordiv(X, I(2))));
    assert_ptr_equal(floordiv(mul(I(3), X), I(4)), sub(X, floordiv(add(X, I(3)), I(4))));
    assert_int_equal(sg_expr_op(floordiv(add(X, I(2)), I(3))), SG_OP_FLOORDIV);
    /* d*(a // d) + a % d is a (Python's definition of %) */
    assert_ptr_equal(add(mul(I(8), floordiv(X, I(8))), mod(X, I(8))), X);
    assert_ptr_equal(add(mul(I(6), floordiv(add(X, Y), I(2))), mul(I(3), mod(add(X, Y), I(2)))),
                     mul(I(3), add(X, Y)));
    assert_ptr_equal(add(add(mul(I(8), floordiv(X, I(8))), mod(X, I(8))), Z), add(X, Z));
    assert_ptr_not_equal(add(mul(I(4), floordiv(X, I(8))), mod(X, I(8))), X); /* not the identity */
    /* Max(a, b) + Min(a, b) is a + b */
    assert_ptr_equal(add(max2(X, Y), min2(Y, X)), add(X, Y));
    assert_ptr_equal(sub(mul(I(2), max2(X, I(3))), mul(I(-2), min2(X, I(3)))), add(mul(I(2), X), I(6)));
    assert_ptr_not_equal(add(max2(X, Y), mul(I(2), min2(X, Y))), add(X, Y));
    /* CeilDiv */
    assert_ptr_equal(ceildiv(X, I(2)), floordiv(add(X, I(1)), I(2)));
    assert_ptr_equal(ceildiv(I(-7), I(2)), I(-3));
    /* CleanDiv: exact division folds, inexact stays */
    assert_ptr_equal(cleandiv(mul(I(6), X), I(3)), mul(I(2), X));
    assert_int_equal(sg_expr_op(cleandiv(X, I(2))), SG_OP_CLEANDIV);
    assert_ptr_not_equal(cleandiv(X, I(2)), floordiv(X, I(2)));
    /* TruncDiv / TruncMod: signs come out */
    assert_ptr_equal(truncdiv(neg(X), I(3)), neg(truncdiv(X, I(3))));
    assert_ptr_equal(truncdiv(X, I(-3)), neg(truncdiv(X, I(3))));
    assert_ptr_equal(truncmod(X, I(-3)), truncmod(X, I(3)));
    assert_ptr_equal(truncmod(neg(X), I(3)), neg(truncmod(X, I(3))));
    assert_ptr_equal(truncdiv(I(-7), I(2)), I(-3));
    assert_ptr_equal(truncmod(I(-7), I(2)), I(-1));
    /* a zero divisor is kept, not folded */
    assert_int_equal(sg_expr_op(floordiv(I(1), I(0))), SG_OP_FLOORDIV);
    assert_int_equal(sg_expr_op(mod(X, I(0))), SG_OP_MOD);
}

/* Nested quotients by positive constants become one quotient
 * (FloorDiv(FloorDiv(a, b), c) = FloorDiv(a, b*c)); doc/canonical.md. */
static void test_floordiv_nested(void **state)
{
    (void)state;
    /* ((x - 1) // 2) // 3 = (x - 1) // 6 (issue 18: it had 4 quotients) */
    assert_ptr_equal(floordiv(floordiv(sub(X, I(1)), I(2)), I(3)), floordiv(sub(X, I(1)), I(6)));
    assert_ptr_equal(floordiv(sub(X, I(1)), I(6)), sub(floordiv(add(X, I(5)), I(6)), I(1)));
    /* x[::2][::3]: ceil(ceil(x / 2) / 3) = ceil(x / 6) = (x + 5) // 6 */
    assert_ptr_equal(ceildiv(ceildiv(X, I(2)), I(3)), floordiv(add(X, I(5)), I(6)));
    /* a whole P: (x // 2 + y) // 3 = (x + 2*y) // 6 */
    assert_ptr_equal(floordiv(add(floordiv(X, I(2)), Y), I(3)), floordiv(add(X, mul(I(2), Y)), I(6)));
    /* -F: -(x // 2) = (-x + 1) // 2, so (-(x // 2) + 1) // 3 = (-x + 3) // 6 */
    assert_ptr_equal(floordiv(add(neg(floordiv(X, I(2))), I(1)), I(3)), floordiv(add(neg(X), I(3)), I(6)));
    /* d = 2, -F: (-(x // 3)) // 2 = (-x + 2) // 6 = -((x + 3) // 6), not
     * -(x // 3) + (x // 3) // 2 */
    assert_ptr_equal(floordiv(neg(floordiv(X, I(3))), I(2)), neg(floordiv(add(X, I(3)), I(6))));
    /* the merged dividend is canonicalized again: (x // 2 + x) // 3 = (3*x) // 6 */
    assert_ptr_equal(floordiv(add(floordiv(X, I(2)), X), I(3)), floordiv(X, I(2)));
    /* 3*(x // 2) over 4 with no -F outside is kept (and not mirrored) */
    const sg_expr *k = floordiv(add(mul(I(3), floordiv(X, I(2))), Y), I(4));
    assert_int_equal(sg_expr_op(k), SG_OP_FLOORDIV);
    assert_ptr_equal(k->args[0], add(mul(I(3), floordiv(X, I(2))), Y));
}

static void test_lattice(void **state)
{
    (void)state;
    assert_ptr_equal(max2(add(X, I(1)), add(X, I(3))), add(X, I(3)));
    assert_ptr_equal(min2(add(X, I(1)), add(X, I(3))), add(X, I(1)));
    assert_ptr_equal(max2(max2(X, Y), X), max2(X, Y));
    assert_ptr_equal(max2(max2(X, I(3)), I(5)), max2(X, I(5)));
    assert_ptr_equal(max2(I(2), I(7)), I(7));
    assert_ptr_equal(min2(X, max2(X, Y)), X);
    assert_ptr_equal(max2(Y, X), max2(X, Y));
    assert_ptr_equal(absx(neg(X)), absx(X));
    assert_ptr_equal(absx(mul(I(-3), X)), mul(I(3), absx(X)));
    assert_ptr_equal(absx(absx(X)), absx(X));
    assert_ptr_equal(absx(I(-5)), I(5));
    const sg_expr *c = rel(SG_REL_GT, X, I(0));
    assert_ptr_equal(where(c, Y, Y), Y);
    assert_ptr_equal(where(rel(SG_REL_EQ, I(1), I(1)), X, Y), X);
    assert_ptr_equal(where(rel(SG_REL_NE, X, I(0)), X, Y), where(rel(SG_REL_EQ, X, I(0)), Y, X));
    assert_ptr_equal(band(X, X), X);
    assert_ptr_equal(bxor(X, X), I(0));
    assert_ptr_equal(band(X, I(0)), I(0));
    assert_ptr_equal(bor(X, I(0)), X);
    assert_ptr_equal(bor(X, I(-1)), I(-1));
    assert_ptr_equal(band(X, I(-1)), X);
    assert_ptr_equal(band(band(X, I(12)), I(10)), band(X, I(8)));
    assert_ptr_equal(bxor(X, I(-1)), sub(neg(X), I(1)));
    assert_ptr_equal(band(I(-6), I(13)), I(8)); /* Python: -6 & 13 == 8 */
    /* small results of big operands are interned as the small constant (Python values) */
    assert_ptr_equal(bor(big("22418786645441909612557"), I(-5)), I(-1));
    assert_ptr_equal(band(big("22418786645441909612557"), big("-22418786645441909612557")), I(1));
    assert_ptr_equal(bxor(big("1180591620717411303427"), big("1180591620717411303425")), I(2)); /* 2**70+3, 2**70+1 */
    assert_ptr_equal(floordiv(X, bxor(big("1180591620717411303427"), big("1180591620717411303425"))), floordiv(X, I(2)));
    assert_ptr_equal(bxor(I(-6), I(13)), I(-9)); /* Python: -6 ^ 13 == -9 */
}

static void test_relations(void **state)
{
    (void)state;
    const sg_expr *x1 = add(X, I(1));
    assert_ptr_equal(rel(SG_REL_GT, x1, Y), rel(SG_REL_LT, Y, x1));
    assert_ptr_equal(rel(SG_REL_GE, X, Y), rel(SG_REL_LE, Y, X));
    assert_ptr_equal(rel(SG_REL_GT, x1, Y), rel(SG_REL_GE, X, Y));
    assert_ptr_equal(rel(SG_REL_LE, mul(I(2), X), I(5)), rel(SG_REL_LE, X, I(2)));
    assert_ptr_equal(rel(SG_REL_GE, mul(I(2), X), I(5)), rel(SG_REL_GE, X, I(3)));
    assert_ptr_equal(rel(SG_REL_GE, mul(I(-2), X), I(5)), rel(SG_REL_LE, X, I(-3)));
    assert_ptr_equal(rel(SG_REL_EQ, mul(I(2), X), I(3)), sg__bool(C, false));
    assert_ptr_equal(rel(SG_REL_NE, mul(I(2), X), I(3)), sg__bool(C, true));
    assert_ptr_equal(rel(SG_REL_EQ, mul(I(2), X), I(4)), rel(SG_REL_EQ, X, I(2)));
    assert_ptr_equal(rel(SG_REL_EQ, X, Y), rel(SG_REL_EQ, Y, X));
    assert_ptr_equal(rel(SG_REL_EQ, sub(X, Y), I(0)), rel(SG_REL_EQ, sub(Y, X), I(0)));
    assert_ptr_equal(rel(SG_REL_LT, I(1), I(2)), sg__bool(C, true));
    /* negation */
    assert_ptr_equal(not1(rel(SG_REL_LT, X, Y)), rel(SG_REL_GE, X, Y));
    assert_ptr_equal(not1(not1(rel(SG_REL_LT, X, Y))), rel(SG_REL_LT, X, Y));
    assert_ptr_equal(not1(rel(SG_REL_EQ, X, Y)), rel(SG_REL_NE, X, Y));
}

static void test_logic(void **state)
{
    (void)state;
    const sg_expr *a = rel(SG_REL_GT, X, I(0)), *b = rel(SG_REL_LT, Y, I(5));
    const sg_expr *T = sg__bool(C, true), *F = sg__bool(C, false);
    assert_ptr_equal(and2(a, a), a);
    assert_ptr_equal(or2(a, a), a);
    assert_ptr_equal(and2(a, not1(a)), F);
    assert_ptr_equal(or2(a, not1(a)), T);
    assert_ptr_equal(and2(a, T), a);
    assert_ptr_equal(and2(a, F), F);
    assert_ptr_equal(or2(a, T), T);
    assert_ptr_equal(or2(a, F), a);
    assert_ptr_equal(and2(a, b), and2(b, a));
    assert_ptr_equal(and2(a, or2(a, b)), a);
    assert_ptr_equal(or2(a, and2(a, b)), a);
    assert_ptr_equal(not1(and2(a, b)), or2(not1(a), not1(b)));
    /* bounds on one linear form */
    assert_ptr_equal(and2(rel(SG_REL_GE, X, I(3)), rel(SG_REL_GE, X, I(5))), rel(SG_REL_GE, X, I(5)));
    assert_ptr_equal(or2(rel(SG_REL_GE, X, I(3)), rel(SG_REL_GE, X, I(5))), rel(SG_REL_GE, X, I(3)));
    assert_ptr_equal(and2(rel(SG_REL_GE, X, I(3)), rel(SG_REL_LE, X, I(2))), F);
    assert_ptr_equal(and2(rel(SG_REL_GE, X, I(3)), rel(SG_REL_LE, X, I(3))), rel(SG_REL_EQ, X, I(3)));
    assert_ptr_equal(or2(rel(SG_REL_GE, X, I(3)), rel(SG_REL_LE, X, I(2))), T);
    /* boolean equality and Where over booleans */
    const sg_expr *e;
    assert_int_equal(sg_expr_rel(C, &e, SG_REL_EQ, a, a), SG_OK);
    assert_ptr_equal(e, T);
    assert_int_equal(sg_expr_rel(C, &e, SG_REL_NE, a, a), SG_OK);
    assert_ptr_equal(e, F);
    assert_ptr_equal(where(a, T, F), a);
}

static void expect_eval(const sg_expr *e, int64_t a, int64_t b, int64_t c, const char *want)
{
    const sg_expr *v;
    sg_status s = eval3(e, a, b, c, &v);
    char got[256];
    if (s) {
        snprintf(got, sizeof got, "error %s", sg_status_kind(s));
    } else if (sg_expr_sort(v) == SG_SORT_BOOL) {
        snprintf(got, sizeof got, "%s", sg_expr_op(v) == SG_OP_TRUE ? "true" : "false");
    } else {
        char *str;
        assert_int_equal(sg_expr_num_str(C, &str, v, SIZE_MAX), SG_OK);
        snprintf(got, sizeof got, "%s", str);
        sg_free(str);
    }
    assert_string_equal(got, want);
}

static void test_eval(void **state)
{
    (void)state;
    expect_eval(floordiv(X, Y), 7, 2, 0, "3");
    expect_eval(floordiv(X, Y), -7, 2, 0, "-4");
    expect_eval(floordiv(X, Y), 7, -2, 0, "-4");
    expect_eval(floordiv(X, Y), -7, -2, 0, "3");
    expect_eval(mod(X, Y), -7, 2, 0, "1");
    expect_eval(mod(X, Y), 7, -2, 0, "-1");
    expect_eval(truncdiv(X, Y), -7, 2, 0, "-3");
    expect_eval(truncmod(X, Y), -7, 2, 0, "-1");
    expect_eval(ceildiv(X, Y), -7, 2, 0, "-3");
    expect_eval(floordiv(X, Y), INT64_MIN, -1, 0, "9223372036854775808");
    expect_eval(mul(X, Y), INT64_MAX, INT64_MAX, 0, "85070591730234615847396907784232501249"); /* Python: (2**63-1)**2 */
    expect_eval(add(X, Y), INT64_MAX, 1, 0, "9223372036854775808");
    expect_eval(floordiv(X, Y), 1, 0, 0, "error zero-division");
    expect_eval(mod(X, Y), 1, 0, 0, "error zero-division");
    expect_eval(pow(X, Y), 2, -1, 0, "error negative-exponent");
    expect_eval(pow(X, Y), 0, 0, 0, "1");
    expect_eval(shl(X, Y), 1, -1, 0, "error negative-exponent");
    expect_eval(shr(X, Y), -5, 1, 0, "-3");
    expect_eval(cleandiv(X, Y), 7, 2, 0, "error inexact");
    expect_eval(cleandiv(X, Y), 8, 2, 0, "4");
    expect_eval(add(X, S("unbound_symbol")), 1, 0, 0, "error unbound");
    /* Where evaluates only the arm it takes */
    expect_eval(where(rel(SG_REL_GT, X, I(0)), floordiv(I(10), X), I(0)), 0, 0, 0, "0");
    expect_eval(where(rel(SG_REL_GT, X, I(0)), floordiv(I(10), X), I(0)), 3, 0, 0, "3");
    expect_eval(where(sg__bool(C, true), I(1), floordiv(I(1), I(0))), 0, 0, 0, "1");
    /* and/or decided by a defined argument */
    expect_eval(and2(rel(SG_REL_NE, X, I(0)), rel(SG_REL_GT, floordiv(I(10), X), I(1))), 0, 0, 0, "false");
    expect_eval(band(X, Y), -6, 13, 0, "8");
    expect_eval(bor(X, Y), -6, 13, 0, "-1");
    expect_eval(rel(SG_REL_LT, X, Y), 1, 2, 0, "true");
    /* an unevaluated division by a constant zero raises when evaluated */
    expect_eval(floordiv(I(1), I(0)), 0, 0, 0, "error zero-division");
}

static void test_subs_and_symbols(void **state)
{
    (void)state;
    const sg_expr *e = add(mul(X, Y), floordiv(Z, I(4))), *r;
    const sg_expr *syms[1] = {Y}, *vals[1] = {add(X, I(1))};
    assert_int_equal(sg_expr_subs(C, &r, e, 1, syms, vals), SG_OK);
    assert_ptr_equal(r, add(add(mul(X, X), X), floordiv(Z, I(4))));
    const sg_expr **fs;
    size_t n;
    assert_int_equal(sg_expr_free_symbols(C, &fs, &n, e), SG_OK);
    assert_int_equal(n, 3);
    assert_ptr_equal(fs[0], X);
    assert_ptr_equal(fs[1], Y);
    assert_ptr_equal(fs[2], Z);
    sg_free(fs);
    assert_int_equal(sg_expr_free_symbols(C, &fs, &n, I(3)), SG_OK);
    assert_int_equal(n, 0);
    sg_free(fs);
    /* substituting a constant folds */
    const sg_expr *v7[1] = {I(7)}, *sx[1] = {X};
    assert_int_equal(sg_expr_subs(C, &r, floordiv(X, I(2)), 1, sx, v7), SG_OK);
    assert_ptr_equal(r, I(3));
}

static void expect_error(sg_status got, sg_status want)
{
    assert_int_equal(got, want);
    assert_int_equal(sg_ctx_last_error(C), want);
    assert_true(strlen(sg_ctx_last_error_msg(C)) > 0);
    sg_ctx_reset_error(C);
}

static void test_bad_input(void **state)
{
    (void)state;
    const sg_expr *e = X, *T = sg__bool(C, true);
    assert_int_equal(sg_expr_add(NULL, &e, X, Y), SG_EINVAL);
    assert_int_equal(sg_ctx_new(NULL), SG_EINVAL);
    expect_error(sg_expr_add(C, NULL, X, Y), SG_EINVAL);
    expect_error(sg_expr_add(C, &e, NULL, Y), SG_EINVAL);
    assert_null(e);
    expect_error(sg_expr_add(C, &e, X, T), SG_ETYPE);
    expect_error(sg_expr_floordiv(C, &e, T, X), SG_ETYPE);
    expect_error(sg_expr_not(C, &e, X), SG_ETYPE);
    const sg_expr *args[2] = {X, T};
    expect_error(sg_expr_and(C, &e, 2, args), SG_ETYPE);
    expect_error(sg_expr_max(C, &e, 2, args), SG_ETYPE);
    expect_error(sg_expr_max(C, &e, 0, args), SG_EINVAL);
    expect_error(sg_expr_rel(C, &e, SG_REL_LT, X, T), SG_ETYPE);
    expect_error(sg_expr_rel(C, &e, SG_REL_LT, T, T), SG_ETYPE);
    expect_error(sg_expr_rel(C, &e, (sg_rel)99, X, X), SG_EINVAL);
    expect_error(sg_expr_where(C, &e, X, X, Y), SG_ETYPE);
    expect_error(sg_expr_where(C, &e, T, X, T), SG_ETYPE);
    expect_error(sg_expr_sym(C, &e, ""), SG_EINVAL);
    expect_error(sg_expr_sym(C, &e, NULL), SG_EINVAL);
    expect_error(sg_expr_int_str(C, &e, "12a"), SG_ESYNTAX);
    expect_error(sg_expr_int_str(C, &e, "-"), SG_ESYNTAX);
    const sg_expr *syms[1] = {I(1)}, *vals[1] = {I(1)};
    expect_error(sg_expr_eval(C, &e, X, 1, syms, vals), SG_EINVAL);
    expect_error(sg_expr_subs(C, &e, X, 1, syms, vals), SG_EINVAL);
    const sg_expr *s2[1] = {X}, *v2[1] = {Y};
    expect_error(sg_expr_eval(C, &e, X, 1, s2, v2), SG_EINVAL);
    char *str;
    expect_error(sg_expr_num_str(C, &str, X, 0), SG_EINVAL);
    /* the context stays usable */
    assert_ptr_equal(add(X, I(0)), X);
}

/* Every binary integer constructor: NULL context, NULL output, NULL
 * operands and booleans where integers belong are errors with a message. */
typedef sg_status (*binary_fn)(sg_ctx *, const sg_expr **, const sg_expr *, const sg_expr *);

static void test_bad_input_every_binary(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        binary_fn fn;
    } fns[] = {
        {"add", sg_expr_add}, {"sub", sg_expr_sub}, {"mul", sg_expr_mul}, {"pow", sg_expr_pow},
        {"floordiv", sg_expr_floordiv}, {"mod", sg_expr_mod}, {"ceildiv", sg_expr_ceildiv},
        {"cleandiv", sg_expr_cleandiv}, {"truncdiv", sg_expr_truncdiv}, {"truncmod", sg_expr_truncmod},
        {"shl", sg_expr_shl}, {"shr", sg_expr_shr}, {"band", sg_expr_band}, {"bor", sg_expr_bor},
        {"bxor", sg_expr_bxor},
    };
    const sg_expr *T = sg__bool(C, true), *e;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        assert_int_equal(fns[i].fn(NULL, &e, X, Y), SG_EINVAL);
        expect_error(fns[i].fn(C, NULL, X, Y), SG_EINVAL);
        e = X;
        expect_error(fns[i].fn(C, &e, NULL, Y), SG_EINVAL);
        assert_null(e);
        expect_error(fns[i].fn(C, &e, X, NULL), SG_EINVAL);
        expect_error(fns[i].fn(C, &e, T, Y), SG_ETYPE);
        expect_error(fns[i].fn(C, &e, X, T), SG_ETYPE);
        if (fns[i].fn(C, &e, X, Y) != SG_OK)
            fail_msg("%s: %s", fns[i].name, sg_ctx_last_error_msg(C));
    }
    /* unary and n-ary ones */
    assert_int_equal(sg_expr_neg(NULL, &e, X), SG_EINVAL);
    expect_error(sg_expr_neg(C, &e, T), SG_ETYPE);
    expect_error(sg_expr_abs(C, &e, NULL), SG_EINVAL);
    expect_error(sg_expr_bnot(C, &e, T), SG_ETYPE);
    expect_error(sg_expr_modular_indexing(C, &e, X, NULL, Y), SG_EINVAL);
    expect_error(sg_expr_modular_indexing(C, &e, X, T, Y), SG_ETYPE);
    expect_error(sg_expr_min(C, &e, 2, NULL), SG_EINVAL);
    expect_error(sg_expr_or(C, &e, 1, (const sg_expr *[]){NULL}), SG_EINVAL);
    expect_error(sg_expr_not(C, NULL, T), SG_EINVAL);
    expect_error(sg_expr_where(C, &e, T, NULL, X), SG_EINVAL);
    expect_error(sg_expr_int(C, NULL, 1), SG_EINVAL);
    expect_error(sg_expr_bool(C, NULL, 1), SG_EINVAL);
    expect_error(sg_expr_int_str(C, &e, NULL), SG_EINVAL);
    expect_error(sg_expr_free_symbols(C, NULL, NULL, X), SG_EINVAL);
    expect_error(sg_expr_subs(C, &e, NULL, 0, NULL, NULL), SG_EINVAL);
    expect_error(sg_expr_eval(C, &e, NULL, 0, NULL, NULL), SG_EINVAL);
    assert_int_equal(sg_expr_eval(NULL, &e, X, 0, NULL, NULL), SG_EINVAL);
    assert_string_equal(sg_status_kind(SG_EZERODIV), "zero-division");
    assert_string_equal(sg_status_kind(SG_ESHAPE), "shape");
    assert_string_equal(sg_status_kind(SG_EALIASING), "aliasing");
    assert_string_equal(sg_status_kind(SG_EAUTOGRAD), "autograd");
    assert_string_equal(sg_status_kind((sg_status)-99), "unknown");
    assert_int_equal(sg_ctx_last_error(NULL), SG_EINVAL);
    assert_true(strlen(sg_ctx_last_error_msg(NULL)) > 0);
    sg_ctx_free(NULL);
    sg_free(NULL);
}

static void test_limits(void **state)
{
    (void)state;
    const sg_expr *e;
    expect_error(sg_expr_pow(C, &e, add(add(X, Y), I(1)), I(100000)), SG_ELIMIT);
    /* a constant power too large to compute is kept; evaluating it is a limit error */
    const sg_expr *huge = pow(I(3), big("100000000000000")), *hv;
    assert_int_equal(sg_expr_op(huge), SG_OP_POW);
    expect_error(sg_expr_eval(C, &hv, huge, 0, NULL, NULL), SG_ELIMIT);
    expect_error(sg_expr_eval(C, &hv, pow(I(3), I(1 << 26)), 0, NULL, NULL), SG_ELIMIT);
    /* ... but a shift by it is decided without computing it (Python: 0 and -1) */
    expect_eval(shr(X, big("1180591620717411303424")), 5, 0, 0, "0");
    expect_eval(shr(X, big("1180591620717411303424")), -5, 0, 0, "-1");
    expect_eval(shl(X, Y), 0, 4611686018427387904LL, 0, "0");
    expect_error(eval3(shl(X, Y), 1, 4611686018427387904LL, 0, &hv), SG_ELIMIT);
    /* a successful evaluation leaves the last error as it was */
    expect_eval(shl(X, Y), 0, 4611686018427387904LL, 0, "0");
    assert_int_equal(sg_ctx_last_error(C), SG_OK);
    /* powers of expanded sums are bounded by their real size (found by tests/diff) */
    assert_ptr_equal(pow(pow(add(X, Y), I(8)), I(8)), pow(add(X, Y), I(64)));
    assert_int_equal(sg_expr_pow(C, &e, pow(add(add(add(X, Y), Z), I(1)), I(4)), I(4)), SG_OK);
    /* huge exponents of a monomial are fine; of +-1 and 0 too */
    assert_int_equal(sg_expr_pow(C, &e, X, big("100000000000000000000")), SG_OK);
    assert_ptr_equal(pow(I(-1), big("100000000000000000001")), I(-1));
    /* evaluation beyond the bit limit */
    const sg_expr *v;
    expect_error(eval3(pow(X, Y), 3, 1 << 26, 0, &v), SG_ELIMIT);
    /* nesting depth */
    const sg_expr *d = X;
    sg_status s = SG_OK;
    for (int i = 0; i < SG_MAX_DEPTH + 5 && s == SG_OK; i++) {
        const sg_expr *args[2] = {d, Y};
        s = sg_expr_max(C, &e, 2, args);
        if (s == SG_OK)
            s = sg_expr_abs(C, &d, e);
    }
    expect_error(s, SG_ELIMIT);
    assert_ptr_equal(add(X, I(0)), X);
    /* the numbers of one polynomial together stay within the bit limit
     * (found by fuzz_guard: a chain of products of sums with large constants
     * took 1.4 GB): 2**400 has 401 bits; (x + 1)*2**400 has two such
     * coefficients (802 bits), times (y + 1) four (1604 bits) */
    const sg_expr *p400 = pow(I(2), I(400)), *p999 = pow(I(2), I(999)), *p1000 = pow(I(2), I(1000)), *xy1;
    sg_ctx_set_limits(C, 0, 1000);
    assert_int_equal(sg_expr_mul(C, &e, add(X, I(1)), p400), SG_OK);
    expect_error(sg_expr_mul(C, &xy1, e, add(Y, I(1))), SG_ELIMIT);
    assert_int_equal(sg_expr_mul(C, &e, X, p999), SG_OK); /* 1000 bits */
    expect_error(sg_expr_mul(C, &e, X, p1000), SG_ELIMIT);
    e = add(X, I(1));
    assert_int_equal(sg_expr_mul(C, &e, e, p400), SG_OK);
    sg_ctx_set_limits(C, 0, 0);
    assert_int_equal(sg_expr_mul(C, &xy1, e, add(Y, I(1))), SG_OK);
}

/* ---- randomized properties ---- */

static unsigned long long rng;
static unsigned rnd(unsigned n)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((rng >> 33) % n);
}

static const sg_expr *rand_int(int depth);
static const sg_expr *rand_bool(int depth)
{
    if (depth <= 0 || rnd(4) == 0)
        return rel((sg_rel)rnd(6), rand_int(0), rand_int(1));
    switch (rnd(4)) {
    case 0: return and2(rand_bool(depth - 1), rand_bool(depth - 1));
    case 1: return or2(rand_bool(depth - 1), rand_bool(depth - 1));
    case 2: return not1(rand_bool(depth - 1));
    default: return rel((sg_rel)rnd(6), rand_int(depth - 1), rand_int(depth - 1));
    }
}

static const sg_expr *rand_leaf(void)
{
    static const int64_t consts[] = {0, 1, -1, 2, 3, -4, 6, 8, 12, 16};
    switch (rnd(5)) {
    case 0: return X;
    case 1: return Y;
    case 2: return Z;
    default: return I(consts[rnd(10)]);
    }
}

static const sg_expr *rand_int(int depth)
{
    if (depth <= 0 || rnd(5) == 0)
        return rand_leaf();
    const sg_expr *a = rand_int(depth - 1), *b = rnd(2) ? rand_int(depth - 1) : rand_leaf();
    switch (rnd(17)) {
    case 0: return add(a, b);
    case 1: return sub(a, b);
    case 2: return mul(a, b);
    case 3: return floordiv(a, b);
    case 4: return mod(a, b);
    case 5: return ceildiv(a, b);
    case 6: return cleandiv(a, b);
    case 7: return truncdiv(a, b);
    case 8: return truncmod(a, b);
    case 9: return max2(a, b);
    case 10: return min2(a, b);
    case 11: return absx(a);
    case 12: return where(rand_bool(depth - 1), a, b);
    case 13: return band(a, b);
    case 14: return bor(a, b);
    case 15: return bxor(a, b);
    default: return pow(a, I(rnd(3)));
    }
}

/* Every node rebuilt from its own arguments is itself: canonical forms are
 * fixed points of the constructors. */
static void check_fixpoint(const sg_expr *e)
{
    for (size_t i = 0; i < e->nargs; i++)
        check_fixpoint(e->args[i]);
    if (e->nargs == 0)
        return;
    const sg_expr *r = sg__rebuild(C, e, e->args);
    if (r != e) {
        char *a = NULL, *b = NULL;
        if (sg_print(C, &a, e, SG_FMT_SG) == SG_OK && r && sg_print(C, &b, r, SG_FMT_SG) == SG_OK)
            fail_msg("not a fixed point: %s rebuilds as %s", a, b);
        fail_msg("not a fixed point (op %d)", e->op);
    }
}

static void test_random_properties(void **state)
{
    (void)state;
    const char *seed = getenv("SG_TEST_SEED");
    rng = seed ? strtoull(seed, NULL, 10) : 20261121ULL;
    unsigned long long start = rng;
    const int N = 4000;
    for (int k = 0; k < N; k++) {
        const sg_expr *e = rnd(4) ? rand_int(4) : rand_bool(3);
        check_fixpoint(e);
        /* substitute constants, then compare with evaluation */
        int64_t a = (int64_t)rnd(21) - 10, b = (int64_t)rnd(21) - 10, c = (int64_t)rnd(21) - 10;
        const sg_expr *syms[3] = {X, Y, Z}, *vals[3] = {I(a), I(b), I(c)}, *folded, *v1, *v2;
        sg_status s1 = sg_expr_eval(C, &v1, e, 3, syms, vals);
        sg_status sf = sg_expr_subs(C, &folded, e, 3, syms, vals);
        if (sf == SG_ELIMIT || s1 == SG_ELIMIT)
            continue;
        assert_int_equal(sf, SG_OK);
        sg_status s2 = sg_expr_eval(C, &v2, folded, 0, NULL, NULL);
        /* Where several operands fail, which error surfaces depends on the
         * order of evaluation, so only failure itself must agree. */
        if (s1 == SG_OK && (s2 != SG_OK || v1 != v2)) {
            char *txt = NULL;
            if (sg_print(C, &txt, e, SG_FMT_SG) != SG_OK)
                txt = NULL;
            fail_msg("seed %llu case %d: %s at x=%lld, y=%lld, z=%lld: eval %s, substitution %s", start, k,
                     txt ? txt : "?", (long long)a, (long long)b, (long long)c, sg_status_kind(s1),
                     sg_status_kind(s2));
        }
        /* identities: (e + x) - x == e, e * 1 == e */
        const sg_expr *lhs[4], *rhs[4];
        size_t nid = 0;
        if (sg_expr_sort(e) == SG_SORT_INT) {
            lhs[nid] = sub(add(e, X), X), rhs[nid++] = e;
            lhs[nid] = mul(e, I(1)), rhs[nid++] = e;
            lhs[nid] = neg(neg(e)), rhs[nid++] = e;
        } else {
            lhs[nid] = not1(not1(e)), rhs[nid++] = e;
        }
        for (size_t i = 0; i < nid; i++) {
            if (lhs[i] == rhs[i])
                continue;
            char *a = NULL, *b = NULL;
            if (sg_print(C, &a, lhs[i], SG_FMT_SG) || sg_print(C, &b, rhs[i], SG_FMT_SG))
                a = b = NULL;
            fail_msg("seed %llu case %d identity %zu: %s is not %s", start, k, i, a ? a : "?", b ? b : "?");
        }
    }
}

/* Random chains of size formulas e -> (e + c) // s + 1, ceil(e / s),
 * -e + c, 60 deep: each prints in length linear in its depth, is a fixed
 * point of the constructors, and has the value of the chain computed
 * directly. */
static void test_floordiv_chains(void **state)
{
    (void)state;
    rng = 424242ULL;
    for (int n = 0; n < 100; n++) {
        int ops[60], cs[60], ss[60];
        const sg_expr *e = X;
        for (int k = 0; k < 60; k++) {
            ops[k] = (int)rnd(4);
            cs[k] = (int)rnd(15) - 7;
            ss[k] = 2 + (int)rnd(6);
            if (ops[k] == 0)
                e = add(floordiv(add(e, I(cs[k])), I(ss[k])), I(1));
            else if (ops[k] == 1)
                e = ceildiv(add(e, I(cs[k])), I(ss[k]));
            else if (ops[k] == 2)
                e = add(neg(e), I(cs[k]));
            else
                e = floordiv(sub(I(cs[k]), e), I(ss[k]));
            char *txt = NULL;
            assert_int_equal(sg_print(C, &txt, e, SG_FMT_SG), SG_OK);
            /* each level adds at most the digits of one step (< 1) to two
             * numbers and a constant term */
            if (strlen(txt) > 40 + 4 * (size_t)k)
                fail_msg("chain %d, level %d: %zu characters: %s", n, k, strlen(txt), txt);
            sg_free(txt);
        }
        check_fixpoint(e);
        for (int64_t x = -60; x <= 60; x += 7) {
            int64_t v = x;
            for (int k = 0; k < 60; k++) {
                int64_t c = cs[k], s = ss[k], t;
                switch (ops[k]) {
                case 0: t = v + c; v = (t >= 0 ? t / s : -((-t + s - 1) / s)) + 1; break;
                case 1: t = v + c; v = t >= 0 ? (t + s - 1) / s : -((-t) / s); break;
                case 2: v = -v + c; break;
                default: t = c - v; v = t >= 0 ? t / s : -((-t + s - 1) / s); break;
                }
            }
            const sg_expr *got;
            assert_int_equal(eval3(e, x, 0, 0, &got), SG_OK);
            if (got != I(v))
                fail_msg("chain %d at x=%lld: %lld expected", n, (long long)x, (long long)v);
        }
    }
}

/* The same expressions built in a context whose symbols were created in the
 * opposite order print the same: canonical forms do not depend on history. */
static void test_history_independence(void **state)
{
    (void)state;
    sg_ctx *saved = C, *other;
    const sg_expr *sx = X, *sy = Y, *sz = Z;
    assert_int_equal(sg_ctx_new(&other), SG_OK);
    unsigned long long seed = 777;
    for (int k = 0; k < 2000; k++) {
        char *text[2] = {NULL, NULL};
        uint32_t hash[2] = {0, 0};
        for (int w = 0; w < 2; w++) {
            C = w ? other : saved;
            if (w) {
                Z = S("z"), Y = S("y"), X = S("x");
            } else {
                X = sx, Y = sy, Z = sz;
            }
            rng = seed + (unsigned long long)k;
            const sg_expr *e = rnd(4) ? rand_int(3) : rand_bool(3);
            assert_int_equal(sg_print(C, &text[w], e, SG_FMT_SG), SG_OK);
            hash[w] = e->hash;
        }
        if (strcmp(text[0], text[1]) != 0)
            fail_msg("case %d prints as %s and as %s", k, text[0], text[1]);
        /* the structural hash, which picks leading terms, too (a sum's
         * arguments are in the order of creation: it hashed them in that
         * order, and (x + 3*y) % 6 led in one context and not in another) */
        if (hash[0] != hash[1])
            fail_msg("case %d (%s) hashes as %u and as %u", k, text[0], hash[0], hash[1]);
        sg_free(text[0]);
        sg_free(text[1]);
    }
    C = saved, X = sx, Y = sy, Z = sz;
    sg_ctx_free(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interning),
        cmocka_unit_test(test_polynomial),
        cmocka_unit_test(test_floordiv_mod_rules),
        cmocka_unit_test(test_floordiv_nested),
        cmocka_unit_test(test_lattice),
        cmocka_unit_test(test_relations),
        cmocka_unit_test(test_logic),
        cmocka_unit_test(test_eval),
        cmocka_unit_test(test_subs_and_symbols),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_bad_input_every_binary),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_random_properties),
        cmocka_unit_test(test_floordiv_chains),
        cmocka_unit_test(test_history_independence),
    };
    return cmocka_run_group_tests_name("expr", tests, setup, teardown);
}
