/* range: value ranges (interval analysis). Hand-checked tight ranges for
 * every operator, infinite ends, boolean ranges, big bounds, bad input of
 * sg_range_of, the cache and atom callbacks, the interval primitives
 * against brute force, and a randomized soundness property (every value an
 * expression takes on a box lies in its range) that also reports how often
 * the range is exactly the hull of the values. */
#include "cmocka_all.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "range/range_ops.h"
#include "shapeguard.h"
#include "shapeguard/range.h"

static sg_ctx *C;
static const sg_expr *X, *Y, *Z;

static void ok(sg_status s)
{
    if (s != SG_OK)
        fail_msg("unexpected error %s: %s", sg_status_kind(s), sg_ctx_last_error_msg(C));
}

static const sg_expr *P(const char *text)
{
    const sg_expr *e;
    sg_status s = sg_parse(C, &e, text, NULL);
    if (s != SG_OK)
        fail_msg("cannot parse %s: %s", text, sg_ctx_last_error_msg(C));
    return e;
}

static const sg_expr *I(int64_t v)
{
    const sg_expr *e;
    ok(sg_expr_int(C, &e, v));
    return e;
}

/* A bound as text: "-oo", "oo", or a decimal integer. */
static const sg_expr *bound(const char *t)
{
    if (!strcmp(t, "oo") || !strcmp(t, "-oo"))
        return NULL;
    const sg_expr *e;
    ok(sg_expr_int_str(C, &e, t));
    return e;
}

/* Parse a box "x=2:10 y=-3:4 z=0:oo" into syms/ranges (at most 8). */
static size_t parse_box(const char *box, const sg_expr **syms, sg_interval *ranges)
{
    size_t n = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", box);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '='), *colon = eq ? strchr(eq + 1, ':') : NULL;
        assert_non_null(colon);
        *eq = *colon = '\0';
        ok(sg_expr_sym(C, &syms[n], tok));
        ranges[n].lo = bound(eq + 1);
        ranges[n].hi = bound(colon + 1);
        n++;
    }
    return n;
}

static char *end_text(const sg_expr *e, const char *inf)
{
    char *s = NULL;
    if (!e)
        return strdup(inf);
    if (sg_expr_op(e) == SG_OP_TRUE || sg_expr_op(e) == SG_OP_FALSE)
        return strdup(sg_expr_op(e) == SG_OP_TRUE ? "true" : "false");
    ok(sg_expr_num_str(C, &s, e, SIZE_MAX));
    char *d = strdup(s);
    sg_free(s);
    return d;
}

static char *range_text(sg_interval r)
{
    char *lo = end_text(r.lo, "-oo"), *hi = end_text(r.hi, "oo");
    char *t = malloc(strlen(lo) + strlen(hi) + 5);
    sprintf(t, "[%s, %s]", lo, hi);
    free(lo);
    free(hi);
    return t;
}

/* The range of text on box, as "[lo, hi]". */
static void expect_range_at(const char *file, int line, const char *text, const char *box, const char *want)
{
    const sg_expr *syms[8];
    sg_interval ranges[8], r;
    size_t n = parse_box(box, syms, ranges);
    const sg_expr *e = P(text);
    ok(sg_range_of(C, &r, e, n, syms, ranges));
    char *got = range_text(r);
    if (strcmp(got, want) != 0)
        fail_msg("%s:%d: range of %s on {%s}: expected %s, got %s", file, line, text, box, want, got);
    free(got);
}
#define expect_range(t, b, w) expect_range_at(__FILE__, __LINE__, t, b, w)

static int setup(void **state)
{
    (void)state;
    if (sg_ctx_new(&C) != SG_OK)
        return -1;
    X = P("x"), Y = P("y"), Z = P("z");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sg_ctx_free(C);
    return 0;
}

/* ---- hand-checked ranges, one or more per operator ---- */

static void test_tight_ranges(void **state)
{
    (void)state;
    const char *B = "x=2:10 y=-3:4";
    /* sums, products, powers */
    expect_range("x*y", B, "[-30, 40]");
    expect_range("2*x - y", B, "[0, 23]");
    expect_range("x + y + 7", B, "[6, 21]");
    expect_range("-3*x", B, "[-30, -6]");
    expect_range("y**2", B, "[0, 16]");
    expect_range("y**3", B, "[-27, 64]");
    expect_range("x**2*y", B, "[-300, 400]");
    expect_range("x*y + 3", B, "[-27, 43]");
    expect_range("0*x + y", B, "[-3, 4]");
    /* division family */
    expect_range("x // 3", B, "[0, 3]");
    expect_range("x // -3", B, "[-4, -1]");
    expect_range("y // 2", B, "[-2, 2]");
    expect_range("x // y", B, "[-10, 10]");
    expect_range("y // x", B, "[-2, 2]");
    expect_range("x % 4", B, "[0, 3]");
    expect_range("(x + 4) % 20", B, "[6, 14]");
    expect_range("x % 20", B, "[2, 10]");
    expect_range("(x + 7) % 10", B, "[0, 9]");
    expect_range("(x + 8) % 10", B, "[0, 8]"); /* [10, 18]: one block */
    expect_range("(x + 10) % 10", B, "[0, 9]"); /* canonical: x % 10, two blocks */
    expect_range("x % -4", B, "[-3, 0]");
    expect_range("(x + 28) % -10", "x=2:10", "[-9, 0]");
    expect_range("y % x", B, "[0, 9]");
    expect_range("x % y", B, "[-2, 3]");
    expect_range("x % (y + 14)", B, "[2, 10]"); /* divisor in [11, 18] > x: identity */
    expect_range("x % (y + 12)", B, "[0, 10]"); /* 9 % 9 */
    expect_range("TruncDiv(y, 2)", B, "[-1, 2]");
    expect_range("TruncDiv(x, y)", B, "[-10, 10]");
    expect_range("TruncMod(y, 3)", B, "[-2, 2]");
    expect_range("TruncMod(y, x)", B, "[-3, 4]");
    expect_range("TruncMod(x, y)", B, "[0, 3]");
    expect_range("CleanDiv(x, 2)", B, "[1, 5]");
    expect_range("CleanDiv(x, 4)", B, "[1, 2]");
    expect_range("CeilDiv(x, 4)", B, "[1, 3]");
    expect_range("ModularIndexing(x, 2, 3)", B, "[0, 2]");
    expect_range("ModularIndexing(x + 1, 4, 8)", B, "[0, 2]");
    expect_range("x >> 1", B, "[1, 5]");
    /* Min, Max, Abs, Where */
    expect_range("Max(x, y)", B, "[2, 10]");
    expect_range("Min(x, y)", B, "[-3, 4]");
    expect_range("Max(y, 0)", B, "[0, 4]");
    expect_range("Min(x, y, 1)", B, "[-3, 1]");
    expect_range("Abs(y)", B, "[0, 4]");
    expect_range("Abs(y - 5)", B, "[1, 8]");
    expect_range("Abs(x)", B, "[2, 10]");
    expect_range("Where(x > 5, x, y)", B, "[-3, 10]");
    expect_range("Where(x >= 2, x, y)", B, "[2, 10]");
    expect_range("Where(x > 10, x, y)", B, "[-3, 4]");
    /* bitwise */
    expect_range("x & 7", B, "[0, 7]");
    expect_range("x & 3", B, "[0, 3]");
    expect_range("x | 1", B, "[3, 11]");
    expect_range("x ^ 1", B, "[2, 11]");
    expect_range("x & -4", B, "[0, 8]");
    expect_range("x & y", B, "[0, 10]");
    expect_range("x | y", B, "[-3, 14]");
    expect_range("x ^ y", B, "[-12, 14]");
    expect_range("~y", B, "[-5, 2]");
    expect_range("x << 2", B, "[8, 40]");
    /* symbolic powers */
    expect_range("2**x", B, "[4, 1024]");
    expect_range("y**x", B, "[-19683, 1048576]");
    expect_range("x**(y + 3)", B, "[1, 10000000]");
    expect_range("(y - 4)**x", B, "[-40353607, 282475249]");
    expect_range("0**(y + 3)", B, "[0, 1]");
}

/* ---- infinite ends ---- */

static void test_infinite_ends(void **state)
{
    (void)state;
    expect_range("x", "", "[-oo, oo]");
    expect_range("x + 1", "", "[-oo, oo]");
    expect_range("x**2", "", "[0, oo]");
    expect_range("x**2 + 1", "", "[1, oo]");
    expect_range("x**3", "", "[-oo, oo]");
    expect_range("Abs(x)", "", "[0, oo]");
    expect_range("x % 5", "", "[0, 4]");
    expect_range("x % -5", "", "[-4, 0]");
    expect_range("x & 7", "", "[0, 7]");
    expect_range("x & -8", "", "[-oo, oo]");
    expect_range("x | 7", "", "[-oo, oo]");
    expect_range("x // 2", "", "[-oo, oo]");
    expect_range("x * 0 + 3", "", "[3, 3]");
    expect_range("x*y", "", "[-oo, oo]");
    const char *H = "x=0:oo y=-oo:-1";
    expect_range("x", H, "[0, oo]");
    expect_range("-x", H, "[-oo, 0]");
    expect_range("x // 2", H, "[0, oo]");
    expect_range("x % 7", H, "[0, 6]");
    expect_range("y % 7", H, "[0, 6]");
    expect_range("x*y", H, "[-oo, 0]");
    expect_range("x + y", H, "[-oo, oo]");
    expect_range("x - y", H, "[1, oo]");
    expect_range("Max(x, 3)", H, "[3, oo]");
    expect_range("Min(x, 3)", H, "[0, 3]");
    expect_range("Max(y, -5)", H, "[-5, -1]");
    expect_range("Abs(y)", H, "[1, oo]");
    expect_range("x & 12", H, "[0, 12]");
    expect_range("x | 12", H, "[12, oo]");
    expect_range("x ^ 12", H, "[0, oo]");
    expect_range("y & 12", H, "[0, 12]");
    expect_range("y | 12", H, "[-oo, -1]");
    expect_range("y & x", H, "[0, oo]");
    expect_range("y ^ x", H, "[-oo, -1]");
    expect_range("y & -16", H, "[-oo, -16]");
    expect_range("2**x", H, "[1, oo]");
    expect_range("x**y", H, "[-oo, oo]"); /* always a negative exponent */
    expect_range("x // y", H, "[-oo, 0]");
    expect_range("7 // y", H, "[-7, -1]");
    expect_range("7 // (x + 1)", H, "[0, 7]");
    expect_range("-7 // (x + 1)", H, "[-7, -1]");
    expect_range("TruncDiv(-7, x + 1)", H, "[-7, 0]");
    expect_range("7 % (x + 1)", H, "[0, 7]");
    expect_range("x % (x + 1)", H, "[0, oo]");
    expect_range("TruncMod(y, 10)", H, "[-9, 0]");
    expect_range("x // 0", H, "[-oo, oo]"); /* always fails */
    expect_range("Where(y < 0, x, y)", H, "[0, oo]");
    expect_range("x*x*y", H, "[-oo, 0]");
    const char *K = "x=-oo:5 y=3:oo";
    expect_range("x // y", K, "[-oo, 1]");
    expect_range("y // x", K, "[-oo, oo]");
    expect_range("x % y", K, "[0, oo]");
    expect_range("y**2", K, "[9, oo]");
    expect_range("Min(x, y)", K, "[-oo, 5]");
}

/* ---- boolean ranges ---- */

static void test_bool_ranges(void **state)
{
    (void)state;
    const char *B = "x=2:10 y=-3:4";
    expect_range("x >= 2", B, "[true, true]");
    expect_range("x > 10", B, "[false, false]");
    expect_range("x > 5", B, "[false, true]");
    expect_range("y == 0", B, "[false, true]");
    expect_range("x == 0", B, "[false, false]");
    expect_range("x != 1", B, "[true, true]");
    expect_range("x != y", B, "[false, true]");
    expect_range("x*y >= -30", B, "[true, true]");
    expect_range("x - y > 0", B, "[false, true]");
    expect_range("x - y >= -2", B, "[true, true]");
    expect_range("x > 1 and y < 5", B, "[true, true]");
    expect_range("x > 1 and y < 0", B, "[false, true]");
    expect_range("x > 10 and y < 0", B, "[false, false]");
    expect_range("x > 10 or y > 4", B, "[false, false]");
    expect_range("x > 5 or y > 4", B, "[false, true]");
    expect_range("x > 5 or y < 5", B, "[true, true]");
    expect_range("not (x > 5)", B, "[false, true]");
    expect_range("true", "", "[true, true]");
    expect_range("false", "", "[false, false]");
    expect_range("x % 3 < 3", "", "[true, true]");
    expect_range("Abs(x) >= 0", "", "[true, true]");
    expect_range("x**2 + 1 == 0", "", "[false, false]");
    expect_range("x == 1", "", "[false, true]");
    expect_range("Where(x > 5, y > 0, y < 10)", B, "[false, true]");
    /* a boolean Where is (c and a) or (not c and b), correlated:
     * (x > 5 and x > 0) or (x <= 5 and y < 10) is always true,
     * which ranges of independent parts cannot see */
    expect_range("Where(x > 5, x > 0, y < 10)", B, "[false, true]");
}

/* ---- big bounds ---- */

static void test_big_values(void **state)
{
    (void)state;
    /* 2**64 = 18446744073709551616 */
    const char *B = "x=18446744073709551616:18446744073709551626 y=-18446744073709551616:3";
    expect_range("x", B, "[18446744073709551616, 18446744073709551626]");
    expect_range("x*x", B, "[340282366920938463463374607431768211456, 340282366920938463832309488905959243876]");
    expect_range("x*y", B, "[-340282366920938463647842048168863727616, 55340232221128654878]");
    expect_range("-x + 1", B, "[-18446744073709551625, -18446744073709551615]");
    expect_range("x // 3", B, "[6148914691236517205, 6148914691236517208]");
    expect_range("x % 7", B, "[0, 6]");       /* 11 values: every residue */
        expect_range("x % 1000000", B, "[551616, 551626]"); /* one block */
    expect_range("x & 18446744073709551615", B, "[0, 10]");
    expect_range("x ^ 18446744073709551616", B, "[0, 10]");
    expect_range("x | 1", B, "[18446744073709551617, 18446744073709551627]");
    expect_range("x & y", B, "[0, 18446744073709551626]"); /* y = -1 keeps x */
    expect_range("Abs(y)", B, "[0, 18446744073709551616]");
    expect_range("x // y", B, "[-18446744073709551626, 18446744073709551626]");
    expect_range("y // x", B, "[-1, 0]");
    expect_range("x**2 >= 340282366920938463463374607431768211456", B, "[true, true]");
    expect_range("2**(x - 18446744073709551556)", B, "[1152921504606846976, 1180591620717411303424]");
    /* beyond the bit limit: powers are not computed */
    sg_ctx_set_limits(C, 0, 4096);
    const sg_expr *syms[1] = {X}, *pw = P("2**(2**70)"), *e;
    sg_interval ranges[1] = {{I(-5), I(5)}}, r;
    ok(sg_range_of(C, &r, pw, 0, NULL, NULL));
    assert_null(r.hi);
    assert_non_null(r.lo);
    assert_int_equal(fmpz_bits(&r.lo->u.val), 4097); /* 2**4096 <= the power */
    ok(sg_expr_shr(C, &e, X, P("2**70")));
    ok(sg_range_of(C, &r, e, 1, syms, ranges));
    char *t = range_text(r);
    assert_string_equal(t, "[-1, 0]");
    free(t);
    ranges[0].lo = I(2), ranges[0].hi = I(3);
    ok(sg_range_of(C, &r, P("x**(2**70)"), 1, syms, ranges));
    assert_null(r.hi);
    assert_non_null(r.lo);
    assert_true(fmpz_bits(&r.lo->u.val) >= 4097);
    ok(sg_range_of(C, &r, P("Min(x, -x)**(2**70 + 1)"), 1, syms, ranges));
    assert_null(r.lo);
    assert_non_null(r.hi);
    assert_true(fmpz_sgn(&r.hi->u.val) < 0);
    ok(sg_range_of(C, &r, P("(2**4000)*x"), 1, syms, ranges));
    assert_non_null(r.lo);
    assert_non_null(r.hi);
    sg_ctx_set_limits(C, 0, 0);
    /* bitwise beyond the exact width: a coarse bound */
    const sg_expr *p5000, *two = I(2), *s2[2] = {X, Y};
    ok(sg_expr_pow(C, &p5000, two, I(5000)));
    sg_interval r2[2] = {{I(0), p5000}, {I(-7), I(7)}};
    ok(sg_range_of(C, &r, P("x & y"), 2, s2, r2));
    assert_ptr_equal(r.lo, I(0));
    assert_ptr_equal(r.hi, p5000);
    ok(sg_range_of(C, &r, P("x | y"), 2, s2, r2));
    assert_non_null(r.lo);
    assert_non_null(r.hi);
    assert_true(fmpz_cmp(&r.lo->u.val, &p5000->u.val) < 0 && fmpz_sgn(&r.lo->u.val) < 0);
    assert_true(fmpz_cmp(&r.hi->u.val, &p5000->u.val) > 0);
}

/* ---- bad input ---- */

static void test_bad_input(void **state)
{
    (void)state;
    sg_interval r = {X, X}, ranges[2] = {{I(0), I(5)}, {NULL, NULL}};
    const sg_expr *syms[2] = {X, Y}, *e = P("x + y");
    assert_int_equal(sg_range_of(NULL, &r, e, 0, NULL, NULL), SG_EINVAL);
    assert_int_equal(sg_range_of(C, NULL, e, 0, NULL, NULL), SG_EINVAL);
    assert_true(strstr(sg_ctx_last_error_msg(C), "out") != NULL);
    assert_int_equal(sg_range_of(C, &r, NULL, 0, NULL, NULL), SG_EINVAL);
    assert_null(r.lo);
    assert_null(r.hi);
    assert_true(strlen(sg_ctx_last_error_msg(C)) > 0);
    assert_int_equal(sg_range_of(C, &r, e, 2, NULL, ranges), SG_EINVAL);
    assert_int_equal(sg_range_of(C, &r, e, 2, syms, NULL), SG_EINVAL);
    assert_true(strstr(sg_ctx_last_error_msg(C), "NULL") != NULL);
    /* not a symbol */
    const sg_expr *bad[2] = {X, P("x + 1")};
    assert_int_equal(sg_range_of(C, &r, e, 2, bad, ranges), SG_EINVAL);
    assert_true(strstr(sg_ctx_last_error_msg(C), "syms[1]") != NULL);
    bad[1] = NULL;
    assert_int_equal(sg_range_of(C, &r, e, 2, bad, ranges), SG_EINVAL);
    bad[1] = I(3);
    assert_int_equal(sg_range_of(C, &r, e, 2, bad, ranges), SG_EINVAL);
    /* a bound that is not an integer constant */
    sg_interval rb[2] = {{I(0), Y}, {NULL, NULL}};
    assert_int_equal(sg_range_of(C, &r, e, 2, syms, rb), SG_EINVAL);
    assert_true(strstr(sg_ctx_last_error_msg(C), "ranges[0]") != NULL);
    rb[0].hi = P("true");
    assert_int_equal(sg_range_of(C, &r, e, 2, syms, rb), SG_EINVAL);
    /* lo > hi */
    rb[0].lo = I(6), rb[0].hi = I(5);
    assert_int_equal(sg_range_of(C, &r, e, 2, syms, rb), SG_EINVAL);
    assert_true(strstr(sg_ctx_last_error_msg(C), "lo > hi") != NULL);
    /* a symbol twice: the ranges meet, or it is an error */
    const sg_expr *twice[2] = {X, X};
    sg_interval rt[2] = {{I(0), I(5)}, {I(3), NULL}};
    ok(sg_range_of(C, &r, X, 2, twice, rt));
    char *t = range_text(r);
    assert_string_equal(t, "[3, 5]");
    free(t);
    rt[1].lo = I(6);
    assert_int_equal(sg_range_of(C, &r, X, 2, twice, rt), SG_EINVAL);
    assert_true(strstr(sg_ctx_last_error_msg(C), "'x'") != NULL);
    /* a success leaves the last error alone */
    sg_ctx_reset_error(C);
    ok(sg_range_of(C, &r, e, 2, syms, ranges));
    assert_int_equal(sg_ctx_last_error(C), SG_OK);
    assert_null(r.lo);
    assert_null(r.hi);
    ok(sg_range_of(C, &r, e, 0, NULL, NULL));
}

/* ---- the cache and atom callbacks ---- */

typedef struct {
    const sg_expr *atom[4];
    slong lo[4], hi[4];
    int n, calls;
} known;

static bool known_range(void *user, const sg_expr *atom, sg__iv *out)
{
    known *k = user;
    k->calls++;
    for (int i = 0; i < k->n; i++)
        if (k->atom[i] == atom) {
            sg__iv_set_si(out, false, k->lo[i], false, k->hi[i]);
            return true;
        }
    return false;
}

static void check_iv(const sg__iv *r, bool lo_inf, slong lo, bool hi_inf, slong hi)
{
    sg__iv w;
    sg__iv_init(&w);
    sg__iv_set_si(&w, lo_inf, lo, hi_inf, hi);
    if (!sg__iv_equal(r, &w)) {
        char *a = fmpz_get_str(NULL, 10, &r->lo), *b = fmpz_get_str(NULL, 10, &r->hi);
        fail_msg("got [%s%s, %s%s], expected [%s%ld, %s%ld]", r->lo_inf ? "inf " : "", a, r->hi_inf ? "inf " : "", b,
                 lo_inf ? "inf " : "", (long)lo, hi_inf ? "inf " : "", (long)hi);
    }
    sg__iv_clear(&w);
}

static void test_cache_and_callbacks(void **state)
{
    (void)state;
    sg__range_cache *cache = sg__range_cache_new(C);
    assert_non_null(cache);
    sg__iv r;
    sg__iv_init(&r);
    const sg_expr *fd = P("x // 2"), *e = P("x // 2 + 1");
    known k = {.atom = {fd}, .lo = {0}, .hi = {3}, .n = 1};
    /* a bound on a non-symbol atom */
    ok(sg__range(C, e, known_range, &k, cache, &r));
    check_iv(&r, false, 1, false, 4);
    /* cached: the callback is not asked again */
    int calls = k.calls;
    ok(sg__range(C, e, known_range, &k, cache, &r));
    check_iv(&r, false, 1, false, 4);
    assert_int_equal(k.calls, calls);
    /* a new state: the owner clears the cache */
    k.atom[0] = X, k.lo[0] = 0, k.hi[0] = 9;
    sg__range_cache_clear(cache);
    ok(sg__range(C, e, known_range, &k, cache, &r));
    check_iv(&r, false, 1, false, 5);
    /* contradictory information (x // 2 in [100, 200] while x <= 9): the
     * structural range is kept */
    k.atom[1] = fd, k.lo[1] = 100, k.hi[1] = 200, k.n = 2;
    sg__range_cache_clear(cache);
    ok(sg__range(C, fd, known_range, &k, cache, &r));
    check_iv(&r, false, 0, false, 4);
    /* a narrower bound on the atom wins over the structure */
    k.lo[1] = 1, k.hi[1] = 2;
    sg__range_cache_clear(cache);
    ok(sg__range(C, fd, known_range, &k, cache, &r));
    check_iv(&r, false, 1, false, 2);
    /* no callback, no cache */
    ok(sg__range(C, P("x % 8"), NULL, NULL, NULL, &r));
    check_iv(&r, false, 0, false, 7);
    ok(sg__range(C, P("x >= 0"), NULL, NULL, NULL, &r));
    check_iv(&r, false, 0, false, 1);
    /* a DAG of 400 levels, each using the one below twice: linear with the
     * cache, 2**400 paths without */
    const sg_expr *d = X, *v[2];
    for (int i = 0; i < 400; i++) {
        v[0] = d;
        ok(sg_expr_abs(C, &v[1], d));
        ok(sg_expr_add(C, &v[0], v[0], v[1]));
        ok(sg_expr_mod(C, &d, v[0], I(97 + (i & 1))));
    }
    k.atom[0] = X, k.n = 1;
    sg__range_cache_clear(cache);
    ok(sg__range(C, d, known_range, &k, cache, &r));
    check_iv(&r, false, 0, false, 97);
    ok(sg__range(C, d, NULL, NULL, NULL, &r));
    check_iv(&r, false, 0, false, 97);
    /* deep nesting (close to SG_MAX_DEPTH) */
    d = X;
    for (int i = 0; d && sg_expr_depth(d) < SG_MAX_DEPTH - 10; i++) {
        ok(sg_expr_add(C, &d, d, I(1)));
        ok(sg_expr_mod(C, &d, d, I(i & 1 ? 7 : 11)));
    }
    ok(sg__range(C, d, NULL, NULL, cache, &r));
    assert_false(r.lo_inf || r.hi_inf);
    sg__range_cache_free(cache);
    sg__range_cache_free(NULL);
    sg__range_cache_clear(NULL);
    sg__iv_clear(&r);
}

/* ---- the interval primitives against brute force ---- */

enum { OP_MUL, OP_FDIV, OP_TDIV, OP_CDIV, OP_MOD, OP_TMOD, OP_POW, OP_AND, OP_OR, OP_XOR, OP_MIN, OP_MAX, OP_N };
static const char *const op_names[] = {"mul", "floordiv", "truncdiv", "cleandiv", "mod",
                                       "truncmod", "pow", "and", "or", "xor", "min", "max"};
/* Where the primitive must give the exact hull on every finite box. */
static const bool op_exact[] = {1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1};

static bool brute(int op, long x, long y, long *r)
{
    switch (op) {
    case OP_MUL: *r = x * y; return true;
    case OP_FDIV:
    case OP_MOD: {
        if (!y)
            return false;
        long q = x / y, m = x % y;
        if (m && ((m < 0) != (y < 0)))
            q--, m += y;
        *r = op == OP_FDIV ? q : m;
        return true;
    }
    case OP_TDIV: return y ? (*r = x / y, true) : false;
    case OP_CDIV: return y && x % y == 0 ? (*r = x / y, true) : false;
    case OP_TMOD: return y ? (*r = x % y, true) : false;
    case OP_POW: {
        if (y < 0)
            return false;
        long p = 1;
        for (long i = 0; i < y; i++)
            p *= x;
        *r = p;
        return true;
    }
    case OP_AND: *r = x & y; return true;
    case OP_OR: *r = x | y; return true;
    case OP_XOR: *r = x ^ y; return true;
    case OP_MIN: *r = x < y ? x : y; return true;
    default: *r = x > y ? x : y; return true;
    }
}

static void prim(int op, sg__iv *r, const sg__iv *a, const sg__iv *b)
{
    switch (op) {
    case OP_MUL: sg__iv_mul(r, a, b); break;
    case OP_FDIV: sg__iv_floordiv(r, a, b); break;
    case OP_TDIV: sg__iv_truncdiv(r, a, b); break;
    case OP_CDIV: sg__iv_cleandiv(r, a, b); break;
    case OP_MOD: sg__iv_mod(r, a, b); break;
    case OP_TMOD: sg__iv_truncmod(r, a, b); break;
    case OP_POW: sg__iv_pow(r, a, b, 4096); break;
    case OP_AND: sg__iv_bitop(r, SG_OP_BAND, a, b); break;
    case OP_OR: sg__iv_bitop(r, SG_OP_BOR, a, b); break;
    case OP_XOR: sg__iv_bitop(r, SG_OP_BXOR, a, b); break;
    case OP_MIN: sg__iv_min(r, a, b); break;
    default: sg__iv_max(r, a, b); break;
    }
}

static void test_primitives_exhaustive(void **state)
{
    (void)state;
    sg__iv a, b, r;
    sg__iv_init(&a), sg__iv_init(&b), sg__iv_init(&r);
    fmpz_t v;
    fmpz_init(v);
    for (int op = 0; op < OP_N; op++) {
        long R = op == OP_POW ? 5 : 6, total = 0, exact = 0;
        for (long a0 = -R; a0 <= R; a0++)
            for (long a1 = a0; a1 <= R; a1++)
                for (long b0 = -R; b0 <= R; b0++)
                    for (long b1 = b0; b1 <= R; b1++) {
                        sg__iv_set_si(&a, false, a0, false, a1);
                        sg__iv_set_si(&b, false, b0, false, b1);
                        prim(op, &r, &a, &b);
                        long lo = 0, hi = 0, w;
                        bool any = false;
                        for (long x = a0; x <= a1; x++)
                            for (long y = b0; y <= b1; y++) {
                                if (!brute(op, x, y, &w))
                                    continue;
                                fmpz_set_si(v, w);
                                if (!sg__iv_contains(&r, v))
                                    fail_msg("%s of [%ld, %ld] and [%ld, %ld]: %ld (x=%ld, y=%ld) is outside",
                                             op_names[op], a0, a1, b0, b1, w, x, y);
                                lo = !any || w < lo ? w : lo;
                                hi = !any || w > hi ? w : hi;
                                any = true;
                            }
                        if (!any)
                            continue;
                        total++;
                        bool ex = !r.lo_inf && !r.hi_inf && fmpz_equal_si(&r.lo, lo) && fmpz_equal_si(&r.hi, hi);
                        exact += ex;
                        if (!ex && op_exact[op])
                            fail_msg("%s of [%ld, %ld] and [%ld, %ld]: not the hull [%ld, %ld]", op_names[op], a0, a1,
                                     b0, b1, lo, hi);
                    }
        print_message("primitive %-9s %6ld boxes, exact hull in %5.1f%%\n", op_names[op], total,
                      100.0 * (double)exact / (double)total);
    }
    /* bitwise with an infinite end: the values over a window that holds
     * every residue give the finite ends; the infinite end must be the
     * right one */
    for (int op = OP_AND; op <= OP_XOR; op++)
        for (long a0 = -6; a0 <= 6; a0++)
            for (int side = 0; side < 2; side++)
                for (long b0 = -6; b0 <= 6; b0++)
                    for (long b1 = b0; b1 <= 6; b1++) {
                        /* a = [a0, oo) or (-oo, a0] */
                        sg__iv_set_si(&a, side == 1, a0, side == 0, a0);
                        sg__iv_set_si(&b, false, b0, false, b1);
                        prim(op, &r, &a, &b);
                        long lo = 0, hi = 0, w;
                        bool any = false;
                        for (long k = 0; k < 256; k++) {
                            long x = side == 0 ? a0 + k : a0 - k;
                            for (long y = b0; y <= b1; y++) {
                                brute(op, x, y, &w);
                                fmpz_set_si(v, w);
                                if (!sg__iv_contains(&r, v))
                                    fail_msg("%s: %ld (x=%ld, y=%ld) is outside", op_names[op], w, x, y);
                                lo = !any || w < lo ? w : lo;
                                hi = !any || w > hi ? w : hi;
                                any = true;
                            }
                        }
                        /* a result that reaches beyond +-200 is unbounded there */
                        bool lo_unb = lo < -200, hi_unb = hi > 200;
                        bool ok_lo = lo_unb ? r.lo_inf : !r.lo_inf && fmpz_equal_si(&r.lo, lo);
                        bool ok_hi = hi_unb ? r.hi_inf : !r.hi_inf && fmpz_equal_si(&r.hi, hi);
                        if (!ok_lo || !ok_hi)
                            fail_msg("%s of %s%ld%s and [%ld, %ld]: not the hull", op_names[op], side ? "(-oo, " : "[",
                                     a0, side ? "]" : ", oo)", b0, b1);
                    }
    fmpz_clear(v);
    sg__iv_clear(&a), sg__iv_clear(&b), sg__iv_clear(&r);
}

/* ---- randomized soundness ---- */

static unsigned long long rng;
static unsigned rnd(unsigned n)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((rng >> 33) % n);
}

/* Constructors that give up (return a) on a construction error. */
typedef sg_status (*bin_fn)(sg_ctx *, const sg_expr **, const sg_expr *, const sg_expr *);
static const sg_expr *bin(bin_fn f, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *e;
    return f(C, &e, a, b) == SG_OK ? e : a;
}

static const sg_expr *nary(sg_op op, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *e, *v[2] = {a, b};
    sg_status s = op == SG_OP_MIN   ? sg_expr_min(C, &e, 2, v)
                  : op == SG_OP_MAX ? sg_expr_max(C, &e, 2, v)
                  : op == SG_OP_AND ? sg_expr_and(C, &e, 2, v)
                                    : sg_expr_or(C, &e, 2, v);
    return s == SG_OK ? e : a;
}

static const sg_expr *rand_int(int depth);
static const sg_expr *rand_bool(int depth)
{
    const sg_expr *e;
    if (depth <= 0 || rnd(4) == 0)
        return sg_expr_rel(C, &e, (sg_rel)rnd(6), rand_int(1), rand_int(0)) == SG_OK ? e : C->t;
    switch (rnd(4)) {
    case 0: return nary(SG_OP_AND, rand_bool(depth - 1), rand_bool(depth - 1));
    case 1: return nary(SG_OP_OR, rand_bool(depth - 1), rand_bool(depth - 1));
    case 2: return sg_expr_not(C, &e, rand_bool(depth - 1)) == SG_OK ? e : C->f;
    default: return sg_expr_rel(C, &e, (sg_rel)rnd(6), rand_int(depth - 1), rand_int(depth - 1)) == SG_OK ? e : C->t;
    }
}

static const sg_expr *rand_leaf(void)
{
    static const int64_t consts[] = {0, 1, -1, 2, 3, -4, 5, 8, -7, 16};
    switch (rnd(6)) {
    case 0: return X;
    case 1: return Y;
    case 2: return Z;
    case 3: return rnd(2) ? X : Y;
    default: return I(consts[rnd(10)]);
    }
}

static const sg_expr *rand_int(int depth)
{
    if (depth <= 0 || rnd(6) == 0)
        return rand_leaf();
    const sg_expr *a = rand_int(depth - 1), *b = rnd(2) ? rand_int(depth - 1) : rand_leaf(), *e;
    switch (rnd(26)) {
    case 0: return bin(sg_expr_add, a, b);
    case 1: return bin(sg_expr_sub, a, b);
    case 2: return bin(sg_expr_mul, a, b);
    case 3: return bin(sg_expr_floordiv, a, b);
    case 4: return bin(sg_expr_mod, a, b);
    case 5: return bin(sg_expr_ceildiv, a, b);
    case 6: return bin(sg_expr_cleandiv, a, b);
    case 7: return bin(sg_expr_truncdiv, a, b);
    case 8: return bin(sg_expr_truncmod, a, b);
    case 9: return nary(SG_OP_MAX, a, b);
    case 10: return nary(SG_OP_MIN, a, b);
    case 11: return sg_expr_abs(C, &e, a) == SG_OK ? e : a;
    case 12: return sg_expr_where(C, &e, rand_bool(depth - 1), a, b) == SG_OK ? e : a;
    case 13: return bin(sg_expr_band, a, b);
    case 14: return bin(sg_expr_bor, a, b);
    case 15: return bin(sg_expr_bxor, a, b);
    case 16: return sg_expr_bnot(C, &e, a) == SG_OK ? e : a;
    case 17: return bin(sg_expr_pow, a, I(rnd(4)));
    case 18: return bin(sg_expr_pow, rnd(2) ? a : rand_leaf(), rand_leaf()); /* symbolic or negative exponent */
    case 19: return bin(sg_expr_shl, a, rand_leaf());
    case 20: return bin(sg_expr_shr, a, rand_leaf());
    case 21: return sg_expr_modular_indexing(C, &e, a, rand_leaf(), rand_leaf()) == SG_OK ? e : a;
    case 22: return bin(sg_expr_mod, a, I(rnd(2) ? 4 : -3));
    case 23: return bin(sg_expr_floordiv, a, I(rnd(2) ? 3 : -2));
    case 24: return sg_expr_neg(C, &e, a) == SG_OK ? e : a;
    default: return bin(sg_expr_mul, a, I((int64_t)rnd(7) - 3));
    }
}

static char *show(const sg_expr *e)
{
    char *t = NULL;
    return sg_print(C, &t, e, SG_FMT_SG) == SG_OK ? t : NULL;
}

static void test_random_soundness(void **state)
{
    (void)state;
    const char *seed = getenv("SG_TEST_SEED");
    rng = seed ? strtoull(seed, NULL, 10) : 20261121ULL;
    unsigned long long start = rng;
    const int N = 20000;
    long cases = 0, exact = 0, int_cases = 0, int_exact = 0, bool_cases = 0, bool_exact = 0, undefined = 0,
         inf_cases = 0, points = 0;
    sg__range_cache *cache = sg__range_cache_new(C);
    assert_non_null(cache);
    fmpz_t v;
    fmpz_init(v);
    for (int k = 0; k < N; k++) {
        const sg_expr *e = rnd(4) ? rand_int(4) : rand_bool(3);
        /* a random box within [-8, 8]; sometimes one infinite end, which is
         * then sampled over a window */
        const sg_expr *syms[3] = {X, Y, Z};
        sg_interval ranges[3];
        long lo[3], hi[3];
        bool infinite = false;
        for (int i = 0; i < 3; i++) {
            long p = (long)rnd(17) - 8, q = (long)rnd(17) - 8;
            lo[i] = p < q ? p : q, hi[i] = p < q ? q : p;
            ranges[i].lo = I(lo[i]), ranges[i].hi = I(hi[i]);
            if (rnd(12) == 0) {
                infinite = true;
                if (rnd(2))
                    ranges[i].hi = NULL, hi[i] = lo[i] + 12;
                else
                    ranges[i].lo = NULL, lo[i] = hi[i] - 12;
            }
        }
        sg_interval r;
        sg_status s = sg_range_of(C, &r, e, 3, syms, ranges);
        if (s != SG_OK) {
            char *t = show(e);
            fail_msg("seed %llu case %d: %s: range fails with %s: %s", start, k, t ? t : "?", sg_status_kind(s),
                     sg_ctx_last_error_msg(C));
        }
        /* the internal entry point with a shared cache gives the same */
        {
            sg__iv a, b;
            sg__iv_init(&a), sg__iv_init(&b);
            ok(sg__range(C, e, NULL, NULL, cache, &a));
            ok(sg__range(C, e, NULL, NULL, NULL, &b));
            assert_true(sg__iv_equal(&a, &b));
            sg__iv_clear(&a), sg__iv_clear(&b);
        }
        /* enumerate the free symbols only */
        const sg_expr **fs;
        size_t nfs;
        ok(sg_expr_free_symbols(C, &fs, &nfs, e));
        int idx[3];
        for (size_t i = 0; i < nfs; i++)
            idx[i] = fs[i] == X ? 0 : fs[i] == Y ? 1 : 2;
        long val[3] = {0, 0, 0}, vlo = 0, vhi = 0;
        bool any = false;
        for (size_t i = 0; i < nfs; i++)
            val[i] = lo[idx[i]];
        for (;;) {
            const sg_expr *vals[3], *out;
            for (size_t i = 0; i < nfs; i++)
                vals[i] = I(val[i]);
            if (sg_expr_eval(C, &out, e, nfs, fs, vals) == SG_OK) {
                points++;
                long w;
                if (sg_expr_sort(e) == SG_SORT_BOOL) {
                    w = sg_expr_op(out) == SG_OP_TRUE;
                    fmpz_set_si(v, w);
                } else {
                    fmpz_set(v, &out->u.val);
                    w = fmpz_fits_si(v) ? fmpz_get_si(v) : 0;
                }
                bool inside = (!r.lo || (sg_expr_sort(e) == SG_SORT_BOOL
                                             ? (sg_expr_op(r.lo) == SG_OP_FALSE || w == 1)
                                             : fmpz_cmp(&r.lo->u.val, v) <= 0)) &&
                              (!r.hi || (sg_expr_sort(e) == SG_SORT_BOOL ? (sg_expr_op(r.hi) == SG_OP_TRUE || w == 0)
                                                                         : fmpz_cmp(v, &r.hi->u.val) <= 0));
                if (!inside) {
                    char *t = show(e), *rt = range_text(r), *vt = fmpz_get_str(NULL, 10, v);
                    fail_msg("seed %llu case %d: %s = %s at x=%ld y=%ld z=%ld (free symbols only), outside %s", start, k,
                             t ? t : "?", vt, nfs > 0 ? val[0] : 0, nfs > 1 ? val[1] : 0, nfs > 2 ? val[2] : 0, rt);
                }
                if (!fmpz_fits_si(v))
                    w = fmpz_sgn(v) < 0 ? -(1L << 62) : (1L << 62);
                vlo = !any || w < vlo ? w : vlo;
                vhi = !any || w > vhi ? w : vhi;
                any = true;
            }
            size_t i = 0;
            while (i < nfs && val[i] == hi[idx[i]])
                val[i] = lo[idx[i]], i++;
            if (i == nfs)
                break;
            val[i]++;
        }
        sg_free(fs);
        if (!any) {
            undefined++;
            continue;
        }
        bool is_inf = false;
        for (size_t i = 0; i < nfs; i++)
            is_inf = is_inf || !ranges[idx[i]].lo || !ranges[idx[i]].hi;
        if (is_inf) {
            inf_cases++;
            continue;
        }
        (void)infinite;
        /* exactness: the range is the hull of the values */
        bool ex;
        if (sg_expr_sort(e) == SG_SORT_BOOL) {
            ex = (sg_expr_op(r.lo) == SG_OP_TRUE) == (vlo == 1) && (sg_expr_op(r.hi) == SG_OP_TRUE) == (vhi == 1);
            bool_cases++, bool_exact += ex;
        } else {
            ex = r.lo && r.hi && fmpz_equal_si(&r.lo->u.val, vlo) && fmpz_equal_si(&r.hi->u.val, vhi);
            int_cases++, int_exact += ex;
        }
        cases++, exact += ex;
        if (getenv("SG_RANGE_SHOW_INEXACT") && !ex) {
            char *t = show(e), *rt = range_text(r);
            print_message("inexact: %s on x=[%ld,%ld] y=[%ld,%ld] z=[%ld,%ld]: %s, values [%ld, %ld]\n", t ? t : "?",
                          lo[0], hi[0], lo[1], hi[1], lo[2], hi[2], rt, vlo, vhi);
            sg_free(t);
            free(rt);
        }
    }
    sg__range_cache_free(cache);
    fmpz_clear(v);
    print_message("seed %llu: %d random expressions, %ld points evaluated, no value outside its range\n", start, N,
                  points);
    print_message("exact hull on finite boxes: %.1f%% of %ld (integer %.1f%% of %ld, boolean %.1f%% of %ld); "
                  "%ld with an infinite end (soundness only), %ld never defined\n",
                  100.0 * (double)exact / (double)cases, cases, 100.0 * (double)int_exact / (double)int_cases,
                  int_cases, 100.0 * (double)bool_exact / (double)bool_cases, bool_cases, inf_cases, undefined);
}

/* Big boxes (ends up to about 2**80, some infinite): points sampled at the
 * ends, next to them, at 0 and at random must lie in the range. */
static void random_point(fmpz_t v, const fmpz_t lo, bool lo_inf, const fmpz_t hi, bool hi_inf)
{
    fmpz_t w;
    fmpz_init(w);
    unsigned pick = rnd(6);
    if (lo_inf && hi_inf) {
        fmpz_set_si(v, (long)rnd(1u << 30) - (1L << 29));
        fmpz_mul_2exp(v, v, rnd(60));
    } else if (lo_inf || hi_inf) {
        fmpz_set_ui(v, rnd(1u << 30));
        fmpz_mul_2exp(v, v, rnd(60));
        if (lo_inf)
            fmpz_sub(v, hi, v);
        else
            fmpz_add(v, lo, v);
    } else if (pick == 0) {
        fmpz_set(v, lo);
    } else if (pick == 1) {
        fmpz_set(v, hi);
    } else if (pick == 2 && fmpz_sgn(lo) <= 0 && fmpz_sgn(hi) >= 0) {
        fmpz_zero(v);
    } else {
        /* lo + random % (hi - lo + 1) */
        fmpz_sub(w, hi, lo);
        fmpz_add_ui(w, w, 1);
        fmpz_set_ui(v, rnd(1u << 30));
        fmpz_mul_2exp(v, v, 30);
        fmpz_add_ui(v, v, rnd(1u << 30));
        fmpz_mul_2exp(v, v, 30);
        fmpz_add_ui(v, v, rnd(1u << 30));
        fmpz_mod(v, v, w);
        fmpz_add(v, v, lo);
        if (pick == 3 && fmpz_cmp(v, hi) < 0 && fmpz_cmp(v, lo) > 0)
            fmpz_add_ui(v, lo, 1);
    }
    fmpz_clear(w);
}

static void test_random_big(void **state)
{
    (void)state;
    const char *seed = getenv("SG_TEST_SEED");
    unsigned long long start = seed ? strtoull(seed, NULL, 10) : 20261121ULL;
    rng = start ^ 0x5eedULL;
    const int N = 3000, M = 24;
    long points = 0;
    fmpz_t lo[3], hi[3], v;
    for (int i = 0; i < 3; i++)
        fmpz_init(lo[i]), fmpz_init(hi[i]);
    fmpz_init(v);
    for (int k = 0; k < N; k++) {
        const sg_expr *e = rnd(4) ? rand_int(3) : rand_bool(2);
        const sg_expr *syms[3] = {X, Y, Z}, *vals[3], *out;
        sg_interval ranges[3];
        bool lo_inf[3], hi_inf[3];
        for (int i = 0; i < 3; i++) {
            fmpz_set_si(lo[i], (long)rnd(1u << 20) - (1L << 19));
            fmpz_mul_2exp(lo[i], lo[i], rnd(62));
            fmpz_set_ui(hi[i], rnd(1u << 20));
            fmpz_mul_2exp(hi[i], hi[i], rnd(62));
            fmpz_add(hi[i], hi[i], lo[i]);
            lo_inf[i] = rnd(8) == 0, hi_inf[i] = rnd(8) == 0;
            ranges[i].lo = lo_inf[i] ? NULL : sg__int_fmpz(C, lo[i]);
            ranges[i].hi = hi_inf[i] ? NULL : sg__int_fmpz(C, hi[i]);
        }
        sg_interval r;
        ok(sg_range_of(C, &r, e, 3, syms, ranges));
        for (int m = 0; m < M; m++) {
            for (int i = 0; i < 3; i++) {
                random_point(v, lo[i], lo_inf[i], hi[i], hi_inf[i]);
                vals[i] = sg__int_fmpz(C, v);
            }
            if (sg_expr_eval(C, &out, e, 3, syms, vals) != SG_OK)
                continue;
            points++;
            bool inside;
            if (sg_expr_sort(e) == SG_SORT_BOOL)
                inside = (out != C->t || r.hi == C->t) && (out != C->f || r.lo == C->f);
            else
                inside = (!r.lo || fmpz_cmp(&r.lo->u.val, &out->u.val) <= 0) &&
                         (!r.hi || fmpz_cmp(&out->u.val, &r.hi->u.val) <= 0);
            if (!inside) {
                char *t = show(e), *rt = range_text(r), *p[3];
                for (int i = 0; i < 3; i++)
                    p[i] = fmpz_get_str(NULL, 10, &vals[i]->u.val);
                char *ot = sg_expr_sort(e) == SG_SORT_BOOL ? strdup(out == C->t ? "true" : "false")
                                                           : fmpz_get_str(NULL, 10, &out->u.val);
                fail_msg("seed %llu case %d: %s = %s at x=%s y=%s z=%s, outside %s", start, k, t ? t : "?", ot, p[0],
                         p[1], p[2], rt);
            }
        }
    }
    print_message("seed %llu: %d random expressions on big boxes, %ld sampled points, none outside its range\n",
                  start, N, points);
    for (int i = 0; i < 3; i++)
        fmpz_clear(lo[i]), fmpz_clear(hi[i]);
    fmpz_clear(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tight_ranges),
        cmocka_unit_test(test_infinite_ends),
        cmocka_unit_test(test_bool_ranges),
        cmocka_unit_test(test_big_values),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_cache_and_callbacks),
        cmocka_unit_test(test_primitives_exhaustive),
        cmocka_unit_test(test_random_soundness),
        cmocka_unit_test(test_random_big),
    };
    return cmocka_run_group_tests_name("range", tests, setup, teardown);
}
