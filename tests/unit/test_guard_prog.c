/* guard programs (guard.h): compile, check (int64 fast path, batched runs,
 * the exact path past int64), explain, serialize, emit. Expected values are
 * worked out by hand; tests/diff/guard.test checks the same against sg_eval,
 * compiled C and Python on random guard sets. */
#include "cmocka_all.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shapeguard.h"
#include "shapeguard/flint.h" /* flint_cleanup: a thread's FLINT caches */
#include "guard/guard_private.h" /* sg__gp_first_pass: the native and the interpreted pass agree */

static sg_ctx *C;

/* ---- helpers ------------------------------------------------------------ */

/* Sources (L['x'].size()[0]) parse as the symbol of that name. */
static sg_status resolve_source(void *user, sg_ctx *ctx, const char *text, size_t len, int is_source,
                                const sg_expr **out)
{
    (void)user;
    *out = NULL;
    if (!is_source)
        return SG_OK;
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)len, text);
    return sg_expr_sym(ctx, out, buf);
}

static const sg_expr *P(const char *text)
{
    const sg_expr *e = NULL;
    sg_parse_opts o = {.resolve = resolve_source};
    if (sg_parse(C, &e, text, &o) != SG_OK)
        fail_msg("cannot parse %s: %s", text, sg_ctx_last_error_msg(C));
    return e;
}

static const sg_expr *S(const char *name)
{
    const sg_expr *e = NULL;
    assert_int_equal(sg_expr_sym(C, &e, name), SG_OK);
    return e;
}

#define X "L['x'].size()[0]"
#define Y "L['y'].size()[0]"
#define Z "L['z'].size()[1]"

static sg_guard_prog *compile_list_flags(const char *const *texts, size_t n, const char *const *slots, size_t ns,
                                        unsigned flags)
{
    const sg_expr *g[64], *s[16];
    for (size_t i = 0; i < n; i++)
        g[i] = P(texts[i]);
    for (size_t i = 0; i < ns; i++)
        s[i] = S(slots[i]);
    sg_guard_prog *p = NULL;
    sg_status st = sg_guard_prog_compile_flags(C, &p, g, n, s, ns, flags);
    if (st != SG_OK)
        fail_msg("compile: %s", sg_ctx_last_error_msg(C));
    return p;
}

static sg_guard_prog *compile_list(const char *const *texts, size_t n, const char *const *slots, size_t ns)
{
    return compile_list_flags(texts, n, slots, ns, 0);
}

static const char *const XYZ[] = {X, Y, Z};

static int setup(void **state)
{
    (void)state;
    return sg_ctx_new(&C) == SG_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    sg_ctx_free(C);
    return 0;
}

/* ---- checks ------------------------------------------------------------- */

static void test_check_basic(void **state)
{
    (void)state;
    static const char *const g[] = {X " == " Y, X " >= 2", X " <= 100", "2*" Y " == " Z, Z " % 4 == 0"};
    sg_guard_prog *p = compile_list(g, 5, XYZ, 3);
    size_t failed = 99;
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){8, 8, 16}, 3, &failed), SG_GUARD_PASS);
    assert_int_equal(failed, 99);
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){8, 9, 16}, 3, &failed), SG_GUARD_FAIL);
    assert_int_equal(failed, 0);
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){1, 1, 2}, 3, &failed), SG_GUARD_FAIL);
    assert_int_equal(failed, 1);
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){101, 101, 202}, 3, &failed), SG_GUARD_FAIL);
    assert_int_equal(failed, 2);
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){8, 8, 17}, 3, &failed), SG_GUARD_FAIL);
    assert_int_equal(failed, 3);
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){9, 9, 18}, 3, &failed), SG_GUARD_FAIL);
    assert_int_equal(failed, 4);
    /* extra values are ignored; failed may be NULL */
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){8, 8, 16, -5}, 4, NULL), SG_GUARD_PASS);
    size_t nb = 0, ne = 9;
    sg_guard_prog_stats(p, NULL, NULL, &nb, &ne);
    assert_int_equal(nb, 5); /* all five are batched (the % one as x & 3) */
    assert_int_equal(ne, 0);
    sg_guard_prog_free(p);
}

static void test_check_order(void **state)
{
    (void)state;
    /* both guards 1 and 3 fail at x = 50: the first in order is reported */
    static const char *const g[] = {X " >= 2", X " // 7 == 2", Y " >= 0", X " < 10"};
    sg_guard_prog *p = compile_list(g, 4, XYZ, 3);
    size_t failed = 0;
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){50, 0, 0}, 3, &failed), SG_GUARD_FAIL);
    assert_int_equal(failed, 1);
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){14, 0, 0}, 3, &failed), SG_GUARD_FAIL);
    assert_int_equal(failed, 3);
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){14, -1, 0}, 3, &failed), SG_GUARD_FAIL);
    assert_int_equal(failed, 2);
    sg_guard_prog_free(p);
}

static void test_check_python_semantics(void **state)
{
    (void)state;
    /* -7 // 2 == -4, -7 % 2 == 1, 7 % -2 == -1, TruncDiv(-7, 2) == -3,
     * Max(x, y, 3) and Min, Where, bitwise ops, shifts and powers */
    static const char *const g[] = {
        X " // 2 == -4",       X " % 2 == 1",        "7 % " Y " == -1",         "TruncDiv(" X ", 2) == -3",
        "Max(" X ", " Y ", 3) == 3", "Min(" X ", " Y ") == -7", "Where(" X " < 0, 1, 2) == 1",
        "(" X " & 6) == 0",    "(" X " | 1) == -7",  "(" X " ^ " Y ") == 7",    X " >> 1 == -4",
        "2**(" Z ") == 8",     "Abs(" X ") == 7",    "TruncMod(" X ", 3) == -1", "CleanDiv(" X " - 1, 2) == -4",
    };
    sg_guard_prog *p = compile_list(g, sizeof g / sizeof *g, XYZ, 3);
    size_t failed = 99;
    int r = sg_guard_prog_check(p, (int64_t[]){-7, -2, 3}, 3, &failed);
    if (r != SG_GUARD_PASS)
        fail_msg("result %d, failed guard %zu", r, failed);
    /* the same guards one by one against sg_expr_eval at other values */
    for (int64_t xv = -9; xv <= 9; xv += 3)
        for (int64_t yv = -4; yv <= 4; yv += 4) {
            int64_t v[3] = {xv, yv, 2};
            const sg_expr *vals[3], *syms[3] = {S(X), S(Y), S(Z)};
            for (int i = 0; i < 3; i++)
                assert_int_equal(sg_expr_int(C, &vals[i], v[i]), SG_OK);
            size_t want_failed = SIZE_MAX;
            sg_status want = SG_OK;
            for (size_t i = 0; i < sizeof g / sizeof *g && want_failed == SIZE_MAX; i++) {
                const sg_expr *out = NULL;
                sg_status s = sg_expr_eval(C, &out, P(g[i]), 3, syms, vals);
                if (s || sg_expr_op(out) == SG_OP_FALSE) {
                    want_failed = i;
                    want = s;
                }
            }
            failed = SIZE_MAX;
            r = sg_guard_prog_check(p, v, 3, &failed);
            if (want_failed == SIZE_MAX)
                assert_int_equal(r, SG_GUARD_PASS);
            else {
                assert_int_equal(r, want ? (int)want : SG_GUARD_FAIL);
                assert_int_equal(failed, want_failed);
            }
        }
    sg_guard_prog_free(p);
}

static void test_check_overflow(void **state)
{
    (void)state;
    /* s0*s1 >= 2**62: at s0 = 2**40, s1 = 2**23 the product is 2**63, beyond
     * int64: checked exactly, never wrapped */
    static const char *const g[] = {X "*" Y " >= 2**62"};
    sg_guard_prog *p = compile_list(g, 1, XYZ, 3);
    size_t failed = 99;
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){(int64_t)1 << 40, (int64_t)1 << 23, 0}, 3, &failed),
                     SG_GUARD_PASS);
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){(int64_t)1 << 40, (int64_t)1 << 21, 0}, 3, &failed),
                     SG_GUARD_FAIL);
    assert_int_equal(failed, 0);
    /* a wrapped product would be negative: 2**40 * 2**24 = 2**64 wraps to 0 */
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){(int64_t)1 << 40, (int64_t)1 << 24, 0}, 3, &failed),
                     SG_GUARD_PASS);
    sg_guard_prog_free(p);

    /* near INT64_MAX: sums beyond int64 in batched runs (128-bit) and in
     * register code (exact fallback) */
    static const char *const h[] = {X " + " Y " > 0", X " - " Y " + 5 >= 0", "3*" X " - 2*" Y " > 0",
                                    X " + " Y " + " Z " > 0", X "*" X " > " Y};
    p = compile_list(h, 5, XYZ, 3);
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){INT64_MAX, INT64_MAX, INT64_MAX}, 3, &failed),
                     SG_GUARD_PASS);
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){INT64_MAX, INT64_MIN, 1}, 3, &failed), SG_GUARD_FAIL);
    assert_int_equal(failed, 0); /* INT64_MAX + INT64_MIN == -1 */
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){INT64_MAX, 1, INT64_MIN}, 3, &failed), SG_GUARD_FAIL);
    assert_int_equal(failed, 3); /* 2**63 - 1 + 1 - 2**63 == 0 */
    sg_guard_prog_free(p);
}

static void test_check_shared_after_overflow(void **state)
{
    (void)state;
    /* guards 0 and 1 share x*y // 3; at x = y = 2**32 it overflows in guard 0,
     * which is then evaluated exactly; guard 1 must not use the garbage
     * register but its exact value ((2**64) // 3 == 6148914691236517205) */
    static const char *const g[] = {"(" X "*" Y ") // 3 >= 0", "(" X "*" Y ") // 3 == 6148914691236517205",
                                    "(" X "*" Y ") // 3 + " Z " != 0"};
    sg_guard_prog *p = compile_list(g, 3, XYZ, 3);
    size_t failed = 99;
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){(int64_t)1 << 32, (int64_t)1 << 32, 0}, 3, &failed),
                     SG_GUARD_PASS);
    assert_int_equal(
        sg_guard_prog_check(p, (int64_t[]){(int64_t)1 << 32, (int64_t)1 << 32, -6148914691236517205}, 3, &failed),
        SG_GUARD_FAIL);
    assert_int_equal(failed, 2);
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){3, 3, 0}, 3, &failed), SG_GUARD_FAIL);
    assert_int_equal(failed, 1);
    size_t ninsns = 0, nregs = 0;
    sg_guard_prog_stats(p, &ninsns, &nregs, NULL, NULL);
    /* x*y // 3 computed once: 3 loads, mul, const, floordiv, 2 adds, 3 tests */
    assert_int_equal(ninsns, 11);
    assert_true(nregs <= 5);
    sg_guard_prog_free(p);
}

static void test_check_errors(void **state)
{
    (void)state;
    static const char *const g[] = {X " >= 0", "100 // " Y " >= 1", "2**" Z " >= 1", "CleanDiv(" X ", 3) >= 0"};
    sg_guard_prog *p = compile_list(g, 4, XYZ, 3);
    size_t failed = 99;
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){3, 0, 1}, 3, &failed), SG_EZERODIV);
    assert_int_equal(failed, 1);
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){-1, 0, 1}, 3, &failed), SG_GUARD_FAIL);
    assert_int_equal(failed, 0); /* an earlier false guard wins */
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){3, 5, -1}, 3, &failed), SG_ENEGEXP);
    assert_int_equal(failed, 2);
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){4, 5, 1}, 3, &failed), SG_EINEXACT);
    assert_int_equal(failed, 3);
    /* Where evaluates the arm it takes; or is decided by any true argument */
    static const char *const h[] = {"Where(" Y " == 0, 0, 100 // " Y ") >= 0", Y " == 0 or 100 // " Y " >= 0"};
    sg_guard_prog_free(p);
    p = compile_list(h, 2, XYZ, 3);
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){0, 0, 0}, 3, &failed), SG_GUARD_PASS);
    sg_guard_prog_free(p);
}

static void test_check_exact_values(void **state)
{
    (void)state;
    static const char *const g[] = {X " == " Y, X " >= 2**64", X " - " Y " + " Z " <= 3"};
    sg_guard_prog *p = compile_list(g, 3, XYZ, 3);
    size_t ne = 0;
    sg_guard_prog_stats(p, NULL, NULL, NULL, &ne);
    assert_int_equal(ne, 1); /* 2**64 does not fit int64 */
    const sg_expr *v[3];
    assert_int_equal(sg_expr_int_str(C, &v[0], "100000000000000000000000"), SG_OK);
    assert_int_equal(sg_expr_int_str(C, &v[1], "100000000000000000000000"), SG_OK);
    assert_int_equal(sg_expr_int_str(C, &v[2], "3"), SG_OK);
    size_t failed = 99;
    assert_int_equal(sg_guard_prog_check_exact(p, v, 3, &failed), SG_GUARD_PASS);
    assert_int_equal(sg_expr_int_str(C, &v[2], "4"), SG_OK);
    assert_int_equal(sg_guard_prog_check_exact(p, v, 3, &failed), SG_GUARD_FAIL);
    assert_int_equal(failed, 2);
    assert_int_equal(sg_expr_int_str(C, &v[1], "100000000000000000000001"), SG_OK);
    assert_int_equal(sg_guard_prog_check_exact(p, v, 3, &failed), SG_GUARD_FAIL);
    assert_int_equal(failed, 0);
    /* small values take the fast path; the exact-only guard still works */
    assert_int_equal(sg_expr_int_str(C, &v[0], "5"), SG_OK);
    assert_int_equal(sg_expr_int_str(C, &v[1], "5"), SG_OK);
    assert_int_equal(sg_guard_prog_check_exact(p, v, 3, &failed), SG_GUARD_FAIL);
    assert_int_equal(failed, 1);
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){INT64_MAX, INT64_MAX, 0}, 3, &failed), SG_GUARD_FAIL);
    assert_int_equal(failed, 1);
    /* bad values */
    v[2] = P("true");
    assert_int_equal(sg_guard_prog_check_exact(p, v, 3, &failed), SG_EINVAL);
    assert_int_equal(sg_guard_prog_check_exact(p, v, 2, &failed), SG_EINVAL);
    sg_guard_prog_free(p);
}

/* ---- run kinds against exact evaluation ---------------------------------- */

/* The first pass of p (native code where the library has a backend) and of
 * pi (the same guards, interpreted) give the same verdict at v: 0 when a
 * batched guard does not hold or overflows, else 1 or 2. (A check's answer
 * alone would not show a native pass that misses too often: the ordered
 * program then answers right, only slowly.) */
static char text_buf[512];
static const char *text_of(const sg_expr *e)
{
    char *t = NULL;
    if (sg_print(C, &t, e, SG_FMT_SG) == SG_OK)
        snprintf(text_buf, sizeof text_buf, "%s", t);
    sg_free(t);
    return text_buf;
}

static void same_pass(const sg_guard_prog *p, const sg_guard_prog *pi, const int64_t *v)
{
    int a = sg__gp_first_pass(p, v), b = sg__gp_first_pass(pi, v);
    if (a != b)
        fail_msg("first pass %d, interpreted %d at (%lld, %lld, %lld); guard 0: %s", a, b, (long long)v[0],
                 (long long)v[1], (long long)v[2], sg_guard_prog_nguards(p) ? text_of(sg_guard_prog_guard(p, 0)) : "-");
}

/* Guards of every run kind (guard_private.h), with and without a z term, each
 * relation, constants and coefficients that the compiler folds into the
 * element's set, and a few shapes that are not batched (an empty set). */
static const char *const kind_guards[] = {
    X " >= 2", X " <= 1024", X " == 5", X " != 5", X " > 9223372036854775806", X " < -9223372036854775807",
    "3*" X " >= 7", "-3*" X " >= 7", "3*" X " != 6", "5*" X " <= -9223372036854775807", "3*" X " == 7",
    X " % 4 == 0", X " % 4 != 0", X " % 3 == 1", X " % 8 >= 5", X " % 7 < 3", "2*(" X " % 5) <= 3",
    X " // 2 < " Y " - 3", X " // 3 >= " Y, X " // 4 == 7", X " // 5 != -2", "-(" X " // 8) >= -1",
    X " // 2 + 3*" Y " >= 10", X " // 6 - " Z " != 9223372036854775807",
    X "*" Y " <= 2048", X "*" Y " > 2048", X "*" X " <= 7", X "*" Y " + " Z " >= 0", "2*" Z " - " X "*" Y " == 4",
    "-3*" X "*" Y " < 9", X "*" Y " == 0",
    "Max(" X ", " Y ") <= 32", "Min(" X ", " Y ") == 3", "Max(" X ", " Y ") - " Z " >= 0",
    "Min(" X ", " Y ") + 2*" Z " != 1", "-7*Max(" X ", " Y ") >= -9223372036854775807",
    X " == " Y, X " != " Y, X " - " Y " >= 5", X " + " Y " <= 64", "2*" X " < " Y, X " - 7*" Y " == 3",
    X " + " Y " > -9223372036854775807", Y " - " X " != -9223372036854775807 - 1",
    X " % 6 + " Y " <= 4", X " % 16 - " Z " == 1", "Max(" X ", " Z ") + 5*" Y " < 0",
};
#define NKIND (sizeof kind_guards / sizeof *kind_guards)

static const int64_t edge_values[] = {
    0, 1, -1, 2, 3, 4, 5, 6, 7, 8, -8, -5, 31, 32, 33, 1000, -1000, 2048, (int64_t)1 << 31, -((int64_t)1 << 31),
    ((int64_t)1 << 32) + 1, (int64_t)1 << 62, -((int64_t)1 << 62), 3037000499, 3037000500, -3037000500,
    INT64_MAX, INT64_MAX - 1, INT64_MIN, INT64_MIN + 1, INT64_MAX / 2, INT64_MIN / 2,
};
#define NEDGE (sizeof edge_values / sizeof *edge_values)

/* SG_GUARD_PASS or SG_GUARD_FAIL: guard t at x, y, z by sg_expr_eval. */
static int eval_guard(const sg_expr *t, const int64_t *xyz)
{
    const sg_expr *syms[3], *vals[3], *r = NULL;
    for (int i = 0; i < 3; i++) {
        syms[i] = S(XYZ[i]);
        assert_int_equal(sg_expr_int(C, &vals[i], xyz[i]), SG_OK);
    }
    assert_int_equal(sg_expr_eval(C, &r, t, 3, syms, vals), SG_OK);
    return sg_expr_op(r) == SG_OP_TRUE ? SG_GUARD_PASS : SG_GUARD_FAIL;
}

static void test_check_run_kinds(void **state)
{
    (void)state;
    /* each program twice: as compiled by default (native code where the
     * library has a backend) and interpreted */
    sg_guard_prog *all = compile_list(kind_guards, NKIND, XYZ, 3), *one[NKIND], *onei[NKIND];
    sg_guard_prog *alli = compile_list_flags(kind_guards, NKIND, XYZ, 3, SG_GUARD_INTERPRET);
    size_t nbatched = 0;
    for (size_t i = 0; i < NKIND; i++) {
        one[i] = compile_list(kind_guards + i, 1, XYZ, 3);
        onei[i] = compile_list_flags(kind_guards + i, 1, XYZ, 3, SG_GUARD_INTERPRET);
        size_t nb = 0;
        sg_guard_prog_stats(one[i], NULL, NULL, &nb, NULL);
        nbatched += nb;
    }
    assert_true(nbatched >= NKIND - 3); /* all but the empty set and the 2*(x % 5) shapes */
    uint64_t st = 12345;
    for (int iter = 0; iter < 3000; iter++) {
        int64_t xyz[3];
        for (int i = 0; i < 3; i++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            unsigned r = (unsigned)(st >> 33);
            xyz[i] = r % 4 ? edge_values[r / 4 % NEDGE] : (int64_t)(r / 4 % 200) - 100;
        }
        size_t first = NKIND, failed = 99;
        for (size_t i = 0; i < NKIND; i++) {
            int want = eval_guard(sg_guard_prog_guard(all, i), xyz);
            int got = sg_guard_prog_check(one[i], xyz, 3, &failed), goti = sg_guard_prog_check(onei[i], xyz, 3, &failed);
            same_pass(one[i], onei[i], xyz);
            if (got != want || goti != want)
                fail_msg("%s at (%lld, %lld, %lld): check %d, interpreted %d, exact %d", kind_guards[i],
                         (long long)xyz[0], (long long)xyz[1], (long long)xyz[2], got, goti, want);
            if (want == SG_GUARD_FAIL && first == NKIND)
                first = i;
        }
        same_pass(all, alli, xyz);
        for (int b = 0; b < 2; b++) {
            int got = sg_guard_prog_check(b ? alli : all, xyz, 3, &failed);
            assert_int_equal(got, first == NKIND ? SG_GUARD_PASS : SG_GUARD_FAIL);
            if (first < NKIND)
                assert_int_equal(failed, first);
        }
    }
    for (size_t i = 0; i < NKIND; i++) {
        sg_guard_prog_free(one[i]);
        sg_guard_prog_free(onei[i]);
    }
    sg_guard_prog_free(all);
    sg_guard_prog_free(alli);
}

/* Bounds, equalities and linear relations against constants at and just
 * beyond the int32 and int64 limits, many guards of each shape in one
 * program and each alone, at values near those limits: the program's answer
 * and first failure must be those of exact evaluation. */
static void test_check_boundary_constants(void **state)
{
    (void)state;
    static const char *const shapes[] = {
        X " >= %s", X " <= %s", X " == %s", X " != %s", X " + 3*" Y " >= %s", X " - " Y " <= %s",
        "2*" Y " + " X " == %s", X " - " Z " != %s", X " - 70000*" Z " >= %s", "-" X " + " Y " <= %s",
    };
    static const char *const consts[] = {
        "-2147483649", "-2147483648", "-2147483647", "-5", "0", "2", "5", "2147483646", "2147483647", "2147483648",
        "9223372036854775807", "-9223372036854775808",
    };
    enum { NSH = sizeof shapes / sizeof *shapes, NC = sizeof consts / sizeof *consts, NG = NSH * NC + 20 };
    static const int64_t vals[] = {
        0, 2, 5, -5, 2147483646, 2147483647, 2147483648, -2147483647, -2147483648, -2147483649,
        4294967296, INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, 3, 7, 100,
    };
    const sg_expr *g[NG], *slots[3];
    size_t n = 0;
    for (size_t i = 0; i < NSH; i++)
        for (size_t j = 0; j < NC; j++) {
            char text[256];
            snprintf(text, sizeof text, shapes[i], consts[j]);
            g[n++] = P(text);
        }
    for (size_t i = 0; i < 10; i++) { /* x == z and x != y, ten of each */
        g[n++] = P(X " == " Z);
        g[n++] = P(X " != " Y);
    }
    for (int i = 0; i < 3; i++)
        slots[i] = S(XYZ[i]);
    sg_guard_prog *p = NULL, *pi = NULL;
    assert_int_equal(sg_guard_prog_compile(C, &p, g, n, slots, 3), SG_OK);
    assert_int_equal(sg_guard_prog_compile_flags(C, &pi, g, n, slots, 3, SG_GUARD_INTERPRET), SG_OK);
    uint64_t st = 777;
    for (int iter = 0; iter < 1500; iter++) {
        int64_t xyz[3];
        for (int i = 0; i < 3; i++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            xyz[i] = vals[(st >> 33) % (sizeof vals / sizeof *vals)];
        }
        if (iter % 3 == 0) /* often every shape's equalities can hold */
            xyz[2] = xyz[0];
        size_t first = n, failed = 99;
        for (size_t i = 0; i < n && first == n; i++)
            if (eval_guard(g[i], xyz) == SG_GUARD_FAIL)
                first = i;
        same_pass(p, pi, xyz);
        for (int b = 0; b < 2; b++) {
            int got = sg_guard_prog_check(b ? pi : p, xyz, 3, &failed);
            if (got != (first == n ? SG_GUARD_PASS : SG_GUARD_FAIL) || (first < n && failed != first))
                fail_msg("at (%lld, %lld, %lld): %s check %d (guard %zu), exact: first failure %zu",
                         (long long)xyz[0], (long long)xyz[1], (long long)xyz[2], b ? "interpreted" : "default",
                         got, failed, first);
        }
    }
    /* every guard alone */
    for (size_t i = 0; i < n; i++) {
        sg_guard_prog *one = NULL;
        assert_int_equal(sg_guard_prog_compile(C, &one, g + i, 1, slots, 3), SG_OK);
        for (size_t a = 0; a < sizeof vals / sizeof *vals; a++) {
            int64_t xyz[3] = {vals[a], vals[(a * 7 + i) % (sizeof vals / sizeof *vals)], vals[a]};
            if (i % 2)
                xyz[2] = vals[(a + i) % (sizeof vals / sizeof *vals)];
            int got = sg_guard_prog_check(one, xyz, 3, NULL), want = eval_guard(g[i], xyz);
            if (got != want)
                fail_msg("guard %zu at (%lld, %lld, %lld): check %d, exact %d", i, (long long)xyz[0],
                         (long long)xyz[1], (long long)xyz[2], got, want);
        }
        sg_guard_prog_free(one);
    }
    sg_guard_prog_free(p);
    sg_guard_prog_free(pi);
}

/* ---- native code --------------------------------------------------------- */

/* Whether this build on this system writes native code: a backend for the
 * machine, not disabled (sg__gp_native_supported), and a system that grants
 * pages that were writable the right to execute (an SELinux or PaX policy
 * may refuse: the library then interprets, silently). */
static bool native_expected(void)
{
    if (!sg__gp_native_supported())
        return false;
    long page = sysconf(_SC_PAGESIZE);
    size_t len = page > 0 ? (size_t)page : 4096;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return false;
    bool ok = mprotect(m, len, PROT_READ | PROT_EXEC) == 0;
    munmap(m, len);
    return ok;
}

/* Where the library writes guard programs out as machine code (guard.h),
 * that it does; never with SG_GUARD_INTERPRET; unknown flags are refused. */
static void test_native_flags(void **state)
{
    (void)state;
    static const char *const g[] = {X " >= 2", X " == " Y, "2*" X " <= " Z " + 7"};
    sg_guard_prog *p = compile_list(g, 3, XYZ, 3), *pi = compile_list_flags(g, 3, XYZ, 3, SG_GUARD_INTERPRET);
    if (native_expected())
        assert_true(sg_guard_prog_native_size(p) > 0);
    else
        assert_int_equal(sg_guard_prog_native_size(p), 0);
    assert_int_equal(sg_guard_prog_native_size(pi), 0);
    for (int b = 0; b < 2; b++) {
        size_t failed = 9;
        assert_int_equal(sg_guard_prog_check(b ? pi : p, (int64_t[]){3, 3, 0}, 3, NULL), SG_GUARD_PASS);
        assert_int_equal(sg_guard_prog_check(b ? pi : p, (int64_t[]){3, 3, -2}, 3, &failed), SG_GUARD_FAIL);
        assert_int_equal(failed, 2);
    }
    /* no batched guard: nothing to write out */
    static const char *const h[] = {X " ** 2 >= " Y " ** 3"};
    sg_guard_prog *q = compile_list(h, 1, XYZ, 3);
    assert_int_equal(sg_guard_prog_native_size(q), 0);
    const sg_expr *e = P(X " >= 2"), *sl = S(X);
    sg_guard_prog *r = (sg_guard_prog *)&r;
    assert_int_equal(sg_guard_prog_compile_flags(C, &r, &e, 1, &sl, 1, 2), SG_EINVAL);
    assert_null(r);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "unknown flags 0x2"));
    sg_guard_prog_free(p);
    sg_guard_prog_free(pi);
    sg_guard_prog_free(q);
}

/* Many slots (offsets beyond a byte in the machine code) and every batched
 * shape over random pairs of them, each guard true at a base point; at the
 * base point with one value changed, the default program (native code where
 * there is a backend), the interpreted one and exact evaluation must give
 * the same answer and the same first failing guard. */
#define NWIDE 40
#define NWG 300
static void test_native_wide(void **state)
{
    (void)state;
    static const char *const shapes[] = {
        "%s >= %d", "%s <= %d", "%s == %d", "%s != %d", "%s == %s", "%s != %s", "%s %% 4 == %d", "%s %% 3 != %d",
        "%s // 2 < %s - %d", "%s // 5 >= %s - %d", "%s * %s <= %d", "Max(%s, %s) <= %d", "Min(%s, %s) >= %d",
        "%s - %s >= %d", "%s + %s <= %d", "2*%s < %s + %d", "%s %% 6 + 7*%s <= %d", "%s*%s - 3*%s >= %d",
        "%s + 4000000000 >= %s*%d",
    };
    enum { NSHAPE = sizeof shapes / sizeof *shapes };
    char names[NWIDE][32];
    const sg_expr *slots[NWIDE], *g[NWG], *base_vals[NWIDE], *vals[NWIDE];
    int64_t base[NWIDE], v[NWIDE];
    uint64_t st = 4242;
#define RND() (st = st * 6364136223846793005ull + 1442695040888963407ull, (unsigned)(st >> 33))
    for (size_t i = 0; i < NWIDE; i++) {
        snprintf(names[i], sizeof names[i], "L['t%zu'].size()[0]", i);
        slots[i] = S(names[i]);
        base[i] = 2 + RND() % 9;
        assert_int_equal(sg_expr_int(C, &base_vals[i], base[i]), SG_OK);
    }
    for (size_t k = 0; k < NWG; k++) {
        const char *a = names[RND() % NWIDE], *b = names[RND() % NWIDE];
        int c = (int)(RND() % 40) - 10;
        char text[256];
        const char *sh = shapes[RND() % NSHAPE];
        /* the shapes take (a, c), (a, b) or (a, b, c) and three names for the last but one */
        if (strstr(sh, "*%s - 3*"))
            snprintf(text, sizeof text, sh, a, b, names[RND() % NWIDE], c);
        else if (!strstr(sh + 2, "%s"))
            snprintf(text, sizeof text, sh, a, c);
        else if (!strstr(sh, "%d"))
            snprintf(text, sizeof text, sh, a, b);
        else
            snprintf(text, sizeof text, sh, a, b, c);
        const sg_expr *t = P(text), *r = NULL;
        assert_int_equal(sg_expr_eval(C, &r, t, NWIDE, slots, base_vals), SG_OK);
        if (sg_expr_op(r) == SG_OP_FALSE)
            assert_int_equal(sg_expr_not(C, &t, t), SG_OK);
        g[k] = t;
    }
    sg_guard_prog *p = NULL, *pi = NULL;
    assert_int_equal(sg_guard_prog_compile(C, &p, g, NWG, slots, NWIDE), SG_OK);
    assert_int_equal(sg_guard_prog_compile_flags(C, &pi, g, NWG, slots, NWIDE, SG_GUARD_INTERPRET), SG_OK);
    size_t nb = 0;
    sg_guard_prog_stats(p, NULL, NULL, &nb, NULL);
    assert_true(nb >= NWG * 9 / 10);
    static const int64_t far[] = {INT64_MAX, INT64_MIN, INT64_MAX / 3, -4000000000, 4000000000, 0, 1, -1};
    for (int iter = 0; iter < 2000; iter++) {
        memcpy(v, base, sizeof v);
        size_t i = RND() % NWIDE;
        if (iter % 5 == 0)
            ; /* the base point: every guard holds */
        else if (iter % 5 == 1)
            v[i] = far[RND() % (sizeof far / sizeof *far)];
        else
            v[i] += (int64_t)(RND() % 21) - 10;
        for (size_t j = 0; j < NWIDE; j++)
            assert_int_equal(sg_expr_int(C, &vals[j], v[j]), SG_OK);
        size_t first = NWG;
        for (size_t k = 0; k < NWG && first == NWG; k++) {
            const sg_expr *r = NULL;
            assert_int_equal(sg_expr_eval(C, &r, g[k], NWIDE, slots, vals), SG_OK);
            if (sg_expr_op(r) == SG_OP_FALSE)
                first = k;
        }
        if (iter % 5 == 0) {
            assert_int_equal(first, NWG);
            assert_int_not_equal(sg__gp_first_pass(p, v), 0); /* every batched guard holds */
        }
        same_pass(p, pi, v);
        for (int b = 0; b < 2; b++) {
            size_t failed = SIZE_MAX;
            int got = sg_guard_prog_check(b ? pi : p, v, NWIDE, &failed);
            if (got != (first == NWG ? SG_GUARD_PASS : SG_GUARD_FAIL) || (first < NWG && failed != first))
                fail_msg("iteration %d, slot %zu = %lld: %s check %d (guard %zu), exact: first failure %zu", iter, i,
                         (long long)v[i], b ? "interpreted" : "default", got, failed, first);
        }
    }
#undef RND
    sg_guard_prog_free(p);
    sg_guard_prog_free(pi);
}

/* ---- threads ------------------------------------------------------------- */

/* One compiled program checked by several threads at once (guard.h: a
 * program is immutable after compile), each with its own inputs and its own
 * scratch; the answers must be those of a single-threaded check. */
#define NTHREADS 4
#define NINPUTS 64

typedef struct thread_job {
    const sg_guard_prog *p;
    int64_t (*in)[3];
    const int *want;
    const size_t *want_failed;
    int errors;
} thread_job;

static void *check_thread(void *arg)
{
    thread_job *J = arg;
    size_t ns = sg_guard_prog_nscratch(J->p);
    int64_t *scratch = malloc((ns ? ns : 1) * sizeof *scratch);
    if (!scratch) {
        J->errors++;
        return NULL;
    }
    for (int round = 0; round < 200; round++)
        for (int i = 0; i < NINPUTS; i++) {
            size_t f1 = SIZE_MAX, f2 = SIZE_MAX;
            int r1 = sg_guard_prog_check(J->p, J->in[i], 3, &f1);
            int r2 = sg_guard_prog_check_scratch(J->p, J->in[i], 3, &f2, scratch, ns);
            if (r1 != J->want[i] || r2 != J->want[i] ||
                (r1 != SG_GUARD_PASS && (f1 != J->want_failed[i] || f2 != J->want_failed[i])))
                J->errors++;
        }
    free(scratch);
    flint_cleanup(); /* the exact path's integer caches of this thread */
    return NULL;
}

static void test_check_threads(void **state)
{
    (void)state;
    /* batched runs, register guards (shared sub-expressions, overflow to the
     * exact path), an exact-only guard and a guard that raises */
    static const char *const g[] = {X " >= 1", X " == " Y, "(" X "*" Y ") // 3 >= 0", Z " % 4 == 0",
                                    "(" X "*" Y ") // 3 + " Z " != 5", X " < 2**64", "100 // (" Z " - 8) >= -100",
                                    "Max(" X ", " Z ") <= 9223372036854775806"};
    sg_guard_prog *p = compile_list(g, 8, XYZ, 3);
    int64_t in[NTHREADS][NINPUTS][3];
    int want[NTHREADS][NINPUTS];
    size_t want_failed[NTHREADS][NINPUTS];
    uint64_t st = 777;
    for (int t = 0; t < NTHREADS; t++)
        for (int i = 0; i < NINPUTS; i++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            unsigned r = (unsigned)(st >> 33);
            int64_t x = r % 3 ? (int64_t)(r % 40) + 1 : (int64_t)1 << 32;
            in[t][i][0] = x;
            in[t][i][1] = r % 5 ? x : x + 1;
            in[t][i][2] = r % 7 == 0 ? 8 : 4 * (int64_t)(r % 11);
            want_failed[t][i] = SIZE_MAX;
            want[t][i] = sg_guard_prog_check(p, in[t][i], 3, &want_failed[t][i]);
        }
    pthread_t th[NTHREADS];
    thread_job jobs[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        jobs[t] = (thread_job){.p = p, .in = in[t], .want = want[t], .want_failed = want_failed[t]};
        assert_int_equal(pthread_create(&th[t], NULL, check_thread, &jobs[t]), 0);
    }
    for (int t = 0; t < NTHREADS; t++) {
        assert_int_equal(pthread_join(th[t], NULL), 0);
        assert_int_equal(jobs[t].errors, 0);
    }
    /* the inputs did reach every kind of answer */
    bool seen_pass = false, seen_fail = false, seen_raise = false;
    for (int t = 0; t < NTHREADS; t++)
        for (int i = 0; i < NINPUTS; i++) {
            seen_pass |= want[t][i] == SG_GUARD_PASS;
            seen_fail |= want[t][i] == SG_GUARD_FAIL;
            seen_raise |= want[t][i] == SG_EZERODIV;
        }
    assert_true(seen_pass && seen_fail && seen_raise);
    sg_guard_prog_free(p);
}

static void test_check_bad_input(void **state)
{
    (void)state;
    static const char *const g[] = {X " >= 2", "(" X "*" Y ") // 3 >= 1"};
    sg_guard_prog *p = compile_list(g, 2, XYZ, 3);
    size_t failed = 77;
    assert_int_equal(sg_guard_prog_check(NULL, (int64_t[]){1, 2, 3}, 3, &failed), SG_EINVAL);
    assert_int_equal(sg_guard_prog_check(p, NULL, 3, &failed), SG_EINVAL);
    assert_int_equal(sg_guard_prog_check(p, (int64_t[]){1, 2}, 2, &failed), SG_EINVAL);
    assert_int_equal(failed, 77);
    size_t ns = sg_guard_prog_nscratch(p);
    assert_true(ns >= 1);
    int64_t scratch[16];
    assert_int_equal(sg_guard_prog_check_scratch(p, (int64_t[]){2, 2, 3}, 3, &failed, scratch, ns - 1), SG_EINVAL);
    assert_int_equal(sg_guard_prog_check_scratch(p, (int64_t[]){2, 2, 3}, 3, &failed, scratch, 16), SG_GUARD_PASS);
    assert_int_equal(sg_guard_prog_check_scratch(p, (int64_t[]){2, 1, 3}, 3, &failed, scratch, 16), SG_GUARD_FAIL);
    assert_int_equal(failed, 1);
    sg_guard_prog_free(p);
    sg_guard_prog_free(NULL);
}

static void test_compile_errors(void **state)
{
    (void)state;
    sg_guard_prog *p = (sg_guard_prog *)&p;
    const sg_expr *slots[3] = {S(X), S(Y), S(Z)};
    const sg_expr *g[2] = {P(X " >= 2"), P(X " + 1")};
    assert_int_equal(sg_guard_prog_compile(C, &p, g, 2, slots, 3), SG_EINVAL);
    assert_null(p);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "guard 1 is an integer expression"));
    g[1] = P("L['w'].size()[0] >= 2");
    assert_int_equal(sg_guard_prog_compile(C, &p, g, 2, slots, 3), SG_EINVAL);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "symbol 'L['w'].size()[0]' is not a slot"));
    g[1] = NULL;
    assert_int_equal(sg_guard_prog_compile(C, &p, g, 2, slots, 3), SG_EINVAL);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "guard 1 is NULL"));
    const sg_expr *dup[2] = {S(X), S(X)};
    assert_int_equal(sg_guard_prog_compile(C, &p, g, 1, dup, 2), SG_EINVAL);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "repeats"));
    const sg_expr *notsym[1] = {P("3")};
    assert_int_equal(sg_guard_prog_compile(C, &p, g, 1, notsym, 1), SG_EINVAL);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "not a symbol"));
    assert_int_equal(sg_guard_prog_compile(C, NULL, g, 1, slots, 3), SG_EINVAL);
    assert_int_equal(sg_guard_prog_compile(C, &p, NULL, 1, slots, 3), SG_EINVAL);
    assert_int_equal(sg_guard_prog_compile(NULL, &p, g, 1, slots, 3), SG_EINVAL);
    /* no guards: always passes */
    assert_int_equal(sg_guard_prog_compile(C, &p, NULL, 0, NULL, 0), SG_OK);
    assert_int_equal(sg_guard_prog_check(p, NULL, 0, NULL), SG_GUARD_PASS);
    sg_guard_prog_free(p);
    /* constants true and false */
    const sg_expr *tf[2] = {P("true"), P("false")};
    assert_int_equal(sg_guard_prog_compile(C, &p, tf, 2, NULL, 0), SG_OK);
    size_t failed = 9;
    assert_int_equal(sg_guard_prog_check(p, NULL, 0, &failed), SG_GUARD_FAIL);
    assert_int_equal(failed, 1);
    sg_guard_prog_free(p);
}

/* ---- explain -------------------------------------------------------------- */

static void expect_explain(sg_guard_prog *p, const int64_t *v, const char *want, size_t want_failed)
{
    char *s = NULL;
    size_t failed = 99;
    assert_int_equal(sg_guard_prog_explain(C, &s, &failed, p, v, 3), SG_OK);
    if (strcmp(s, want))
        fail_msg("explain:\n  got  %s\n  want %s", s, want);
    assert_int_equal(failed, want_failed);
    sg_free(s);
}

static void test_explain(void **state)
{
    (void)state;
    static const char *const g[] = {X " == " Y,          X " >= 2",
                                    "2*" X " >= " Y " + 1", "Eq(" X ", 2) or " X " >= 8",
                                    "100 // " Z " >= 1",   X " <= 1000",
                                    Y " - " X " != 0"};
    sg_guard_prog *p = compile_list(g, 7, XYZ, 3);
    expect_explain(p, (int64_t[]){5, 6, 1}, "L['x'].size()[0] == L['y'].size()[0] (5 != 6)", 0);
    expect_explain(p, (int64_t[]){1, 1, 1}, "L['x'].size()[0] >= 2 (1 < 2)", 1);
    expect_explain(p, (int64_t[]){4, 4, 1}, "L['x'].size()[0] >= 8 or L['x'].size()[0] == 2 "
                                            "(values: L['x'].size()[0] = 4)", 3);
    expect_explain(p, (int64_t[]){8, 8, 0}, "100 // L['z'].size()[1] >= 1 (raises zero-division; "
                                            "values: L['z'].size()[1] = 0)", 4);
    expect_explain(p, (int64_t[]){8, 8, 200}, "100 // L['z'].size()[1] >= 1 (0 < 1; L['z'].size()[1] = 200)", 4);
    expect_explain(p, (int64_t[]){1001, 1001, 1}, "L['x'].size()[0] <= 1000 (1001 > 1000)", 5);
    expect_explain(p, (int64_t[]){8, 8, 1}, "L['x'].size()[0] != L['y'].size()[0] (8 == 8)", 6);
    sg_guard_prog_free(p);
    static const char *const h[] = {"2*" X " >= " Y " + 1"};
    p = compile_list(h, 1, XYZ, 3);
    expect_explain(p, (int64_t[]){4, 9, 1},
                   "2*L['x'].size()[0] >= L['y'].size()[0] + 1 (8 < 10; L['x'].size()[0] = 4, L['y'].size()[0] = 9)",
                   0);
    expect_explain(p, (int64_t[]){5, 9, 1}, "all 1 guards pass", 1);
    /* bad input */
    char *s = (char *)&s;
    assert_int_equal(sg_guard_prog_explain(C, &s, NULL, p, (int64_t[]){1, 2}, 2), SG_EINVAL);
    assert_null(s);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "2 values for 3 slots"));
    assert_int_equal(sg_guard_prog_explain(C, &s, NULL, NULL, (int64_t[]){1, 2, 3}, 3), SG_EINVAL);
    sg_ctx *other = NULL;
    assert_int_equal(sg_ctx_new(&other), SG_OK);
    assert_int_equal(sg_guard_prog_explain(other, &s, NULL, p, (int64_t[]){1, 2, 3}, 3), SG_EINVAL);
    assert_non_null(strstr(sg_ctx_last_error_msg(other), "another context"));
    sg_ctx_free(other);
    /* exact values */
    const sg_expr *v[3];
    assert_int_equal(sg_expr_int_str(C, &v[0], "10000000000000000000"), SG_OK);
    assert_int_equal(sg_expr_int_str(C, &v[1], "20000000000000000000"), SG_OK);
    v[2] = P("1");
    assert_int_equal(sg_guard_prog_explain_exact(C, &s, NULL, p, v, 3), SG_OK);
    assert_string_equal(s, "2*L['x'].size()[0] >= L['y'].size()[0] + 1 (20000000000000000000 < 20000000000000000001; "
                           "L['x'].size()[0] = 10000000000000000000, L['y'].size()[0] = 20000000000000000000)");
    sg_free(s);
    sg_guard_prog_free(p);
}

/* ---- serialize ---------------------------------------------------------------- */

static void same_answers(sg_guard_prog *a, sg_guard_prog *b, sg_ctx *cb)
{
    static const int64_t vals[][3] = {{8, 8, 16}, {8, 9, 16}, {1, 1, 2}, {4, 4, 0}, {7, 7, 3},
                                      {INT64_MAX, INT64_MAX, 4}, {-5, -5, 1}, {1 << 20, 1 << 20, 1 << 21}};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        size_t fa = 99, fb = 99;
        assert_int_equal(sg_guard_prog_check(a, vals[i], 3, &fa), sg_guard_prog_check(b, vals[i], 3, &fb));
        assert_int_equal(fa, fb);
        char *ea = NULL, *eb = NULL;
        assert_int_equal(sg_guard_prog_explain(C, &ea, NULL, a, vals[i], 3), SG_OK);
        assert_int_equal(sg_guard_prog_explain(cb, &eb, NULL, b, vals[i], 3), SG_OK);
        assert_string_equal(ea, eb);
        sg_free(ea);
        sg_free(eb);
    }
}

static const char *const SER[] = {X " == " Y,         X " >= 2",          "2*" Y " <= " Z " + 7",
                                  Z " % 4 == 0",      "Max(" X ", 3) * " Y "**2 >= 9*" Z,
                                  "Where(" X " > 4, " Y " // 2, -" Z ") != 3 or (" X " ^ " Z ") < 5",
                                  X " < 2**70",       "TruncDiv(" X ", -3) + Abs(" Y " - 9) >= -10"};
#define NSER (sizeof SER / sizeof *SER)

static void test_serialize_roundtrip(void **state)
{
    (void)state;
    sg_guard_prog *p = compile_list(SER, NSER, XYZ, 3), *q = NULL;
    uint8_t *blob = NULL;
    size_t len = 0;
    assert_int_equal(sg_guard_prog_serialize(C, &blob, &len, p), SG_OK);
    assert_true(len > 36);
    assert_memory_equal(blob, "SGGP", 4);
    /* the same context: the very same guards */
    assert_int_equal(sg_guard_prog_deserialize(C, &q, blob, len), SG_OK);
    for (size_t i = 0; i < NSER; i++)
        assert_ptr_equal(sg_guard_prog_guard(p, i), sg_guard_prog_guard(q, i));
    same_answers(p, q, C);
    sg_guard_prog_free(q);
    /* another context: the same answers and the same explanations */
    sg_ctx *other = NULL;
    assert_int_equal(sg_ctx_new(&other), SG_OK);
    assert_int_equal(sg_guard_prog_deserialize(other, &q, blob, len), SG_OK);
    same_answers(p, q, other);
    uint8_t *blob2 = NULL;
    size_t len2 = 0;
    assert_int_equal(sg_guard_prog_serialize(other, &blob2, &len2, q), SG_OK);
    assert_int_equal(len, len2);
    sg_free(blob2);
    sg_guard_prog_free(q);
    sg_ctx_free(other);
    sg_free(blob);
    sg_guard_prog_free(p);
}

/* A factor whose exponent is beyond int64 (the core keeps x**(20**20) as a
 * factor of a product): the blob reads back (fuzz_guard found it refused as
 * a "bad exponent"), to the same guard, with the same answers where the
 * value is small enough to compute. */
static void test_serialize_big_exponent(void **state)
{
    (void)state;
    static const char *const g[] = {X " ** 20 ** 20 * " Z " >= " Y, "-" X " ** (2**64 + 3) <= " Y};
    sg_guard_prog *p = compile_list(g, 2, XYZ, 3), *q = NULL;
    uint8_t *blob = NULL;
    size_t len = 0;
    assert_int_equal(sg_guard_prog_serialize(C, &blob, &len, p), SG_OK);
    assert_int_equal(sg_guard_prog_deserialize(C, &q, blob, len), SG_OK);
    for (size_t i = 0; i < 2; i++)
        assert_ptr_equal(sg_guard_prog_guard(p, i), sg_guard_prog_guard(q, i));
    /* x = 1: 1**k * z >= y and -(1**k) <= y; x = -1: (-1)**(20**20) = 1, (-1)**(2**64 + 3) = -1 */
    static const int64_t v[][3] = {{1, 5, 5}, {1, 6, 5}, {-1, 3, 3}, {-1, 4, 3}, {1, -2, 0}, {-1, 0, 0}};
    static const int want[] = {SG_GUARD_PASS, SG_GUARD_FAIL, SG_GUARD_PASS, SG_GUARD_FAIL, SG_GUARD_FAIL,
                               SG_GUARD_FAIL};
    static const size_t want_failed[] = {0, 0, 0, 0, 1, 1};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        for (int b = 0; b < 2; b++) {
            size_t f = 99;
            assert_int_equal(sg_guard_prog_check(b ? q : p, v[i], 3, &f), want[i]);
            if (want[i] == SG_GUARD_FAIL)
                assert_int_equal(f, want_failed[i]);
        }
    sg_free(blob);
    sg_guard_prog_free(p);
    sg_guard_prog_free(q);
}

static void test_serialize_corrupt(void **state)
{
    (void)state;
    sg_guard_prog *p = compile_list(SER, NSER, XYZ, 3), *q = (sg_guard_prog *)&q;
    uint8_t *blob = NULL;
    size_t len = 0;
    assert_int_equal(sg_guard_prog_serialize(C, &blob, &len, p), SG_OK);
    uint8_t *copy = malloc(len + 1);
    assert_non_null(copy);
    /* flip every bit pattern of every byte in turn */
    for (size_t i = 0; i < len; i++) {
        for (unsigned x = 1; x < 256; x = x * 3 + 1) {
            memcpy(copy, blob, len);
            copy[i] ^= (uint8_t)x;
            assert_int_equal(sg_guard_prog_deserialize(C, &q, copy, len), SG_EINVAL);
            assert_null(q);
            assert_true(sg_ctx_last_error_msg(C)[0] != '\0');
        }
    }
    /* truncate at every length (a separate buffer of exactly that size, so
     * ASan sees any read beyond it) */
    for (size_t n = 0; n < len; n++) {
        uint8_t *t = malloc(n ? n : 1);
        memcpy(t, blob, n);
        assert_int_equal(sg_guard_prog_deserialize(C, &q, t, n), SG_EINVAL);
        free(t);
    }
    /* a padded blob, another version, another magic */
    memcpy(copy, blob, len);
    copy[len] = 0;
    assert_int_equal(sg_guard_prog_deserialize(C, &q, copy, len + 1), SG_EINVAL);
    memcpy(copy, blob, len);
    copy[4] = 2;
    assert_int_equal(sg_guard_prog_deserialize(C, &q, copy, len), SG_EINVAL);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "format version 2, expected 1"));
    memcpy(copy, blob, len);
    copy[0] = 'X';
    assert_int_equal(sg_guard_prog_deserialize(C, &q, copy, len), SG_EINVAL);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "bad magic"));
    assert_int_equal(sg_guard_prog_deserialize(C, &q, NULL, len), SG_EINVAL);
    free(copy);
    sg_free(blob);
    sg_guard_prog_free(p);
}

/* A blob with a valid checksum over a malformed body must be rejected too
 * (a writer with a bug, not a flipped bit): random bodies, resealed. */
static uint64_t fnv(const uint8_t *p, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

static void reseal(uint8_t *b, size_t len)
{
    for (int i = 0; i < 8; i++)
        b[8 + i] = (uint8_t)((uint64_t)len >> (8 * i));
    uint64_t h = fnv(b, len - 8);
    for (int i = 0; i < 8; i++)
        b[len - 8 + i] = (uint8_t)(h >> (8 * i));
}

static void test_serialize_resealed_garbage(void **state)
{
    (void)state;
    sg_guard_prog *p = compile_list(SER, NSER, XYZ, 3), *q = NULL;
    uint8_t *blob = NULL;
    size_t len = 0;
    assert_int_equal(sg_guard_prog_serialize(C, &blob, &len, p), SG_OK);
    uint8_t *copy = malloc(len);
    unsigned seed = 12345;
    size_t accepted = 0;
    for (size_t i = 16; i + 8 < len; i++)
        for (int rep = 0; rep < 4; rep++) {
            memcpy(copy, blob, len);
            seed = seed * 1103515245u + 12345u;
            copy[i] = (uint8_t)(seed >> 16);
            reseal(copy, len);
            sg_status s = sg_guard_prog_deserialize(C, &q, copy, len);
            assert_true(s == SG_OK || s == SG_EINVAL || s == SG_ELIMIT);
            if (s == SG_OK) { /* a change that still encodes valid guards */
                accepted++;
                size_t f = 0;
                int r = sg_guard_prog_check(q, (int64_t[]){8, 8, 16}, 3, &f);
                assert_true(r >= SG_EINVAL || r == SG_EZERODIV || r == SG_ENEGEXP || r == SG_EINEXACT);
                sg_guard_prog_free(q);
            }
        }
    /* truncated body with a resealed length */
    for (size_t n = 36; n < len; n++) {
        memcpy(copy, blob, n);
        reseal(copy, n);
        assert_int_equal(sg_guard_prog_deserialize(C, &q, copy, n), SG_EINVAL);
    }
    (void)accepted;
    free(copy);
    sg_free(blob);
    sg_guard_prog_free(p);
}

/* ---- emit ------------------------------------------------------------------ */

static void test_emit_python(void **state)
{
    (void)state;
    static const char *const g[] = {X " == " Y, X " >= 2", "TruncDiv(" X ", 2) == " Z};
    sg_guard_prog *p = compile_list(g, 3, XYZ, 3);
    char *s = NULL;
    assert_int_equal(sg_guard_prog_emit_python(C, &s, p), SG_OK);
    assert_string_equal(s, "lambda v: (v[0] == v[1]) and (v[0] >= 2) and "
                           "(v[2] == (v[0] // 2 if v[0] >= 0 else -(-v[0] // 2)))");
    sg_free(s);
    sg_guard_prog_free(p);
    assert_int_equal(sg_guard_prog_compile(C, &p, NULL, 0, NULL, 0), SG_OK);
    assert_int_equal(sg_guard_prog_emit_python(C, &s, p), SG_OK);
    assert_string_equal(s, "lambda v: True");
    sg_free(s);
    assert_int_equal(sg_guard_prog_emit_python(C, NULL, p), SG_EINVAL);
    sg_guard_prog_free(p);
}

/* PyTorch's guard lambda: the slots as their sources, over L. */
static void test_emit_python_with(void **state)
{
    (void)state;
    static const char *const g[] = {X " == " Y, X " >= 2", "-" X " + 3*" Z "**2 <= 100"};
    sg_guard_prog *p = compile_list(g, 3, XYZ, 3);
    char *s = NULL;
    assert_int_equal(sg_guard_prog_emit_python_with(C, &s, p, NULL, NULL), SG_OK);
    assert_string_equal(s, "lambda L: (L['x'].size()[0] == L['y'].size()[0]) and (L['x'].size()[0] >= 2) and "
                           "(L['x'].size()[0] >= 3*L['z'].size()[1]**2 - 100)");
    sg_free(s);
    static const char *const names[] = {"x.shape[0]", "y.shape[0]", "z.shape[1]"};
    assert_int_equal(sg_guard_prog_emit_python_with(C, &s, p, "x, y, z", names), SG_OK);
    assert_string_equal(s, "lambda x, y, z: (x.shape[0] == y.shape[0]) and (x.shape[0] >= 2) and "
                           "(x.shape[0] >= 3*z.shape[1]**2 - 100)");
    sg_free(s);
    /* bad names, NULL arguments, another context: nothing is emitted */
    s = (char *)"untouched";
    static const char *const empty[] = {"a", "", "c"}, *const null[] = {"a", "b", NULL};
    assert_int_equal(sg_guard_prog_emit_python_with(C, &s, p, "L", empty), SG_EINVAL);
    assert_null(s);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "slot 1 is empty"));
    assert_int_equal(sg_guard_prog_emit_python_with(C, &s, p, "L", null), SG_EINVAL);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "slot 2 is NULL"));
    assert_int_equal(sg_guard_prog_emit_python_with(C, NULL, p, NULL, NULL), SG_EINVAL);
    assert_int_equal(sg_guard_prog_emit_python_with(C, &s, NULL, NULL, NULL), SG_EINVAL);
    assert_int_equal(sg_guard_prog_emit_python_with(NULL, &s, p, NULL, NULL), SG_EINVAL);
    sg_ctx *other = NULL;
    assert_int_equal(sg_ctx_new(&other), SG_OK);
    assert_int_equal(sg_guard_prog_emit_python_with(other, &s, p, NULL, NULL), SG_EINVAL);
    sg_ctx_free(other);
    sg_guard_prog_free(p);
    /* no guards */
    assert_int_equal(sg_guard_prog_compile(C, &p, NULL, 0, NULL, 0), SG_OK);
    assert_int_equal(sg_guard_prog_emit_python_with(C, &s, p, NULL, NULL), SG_OK);
    assert_string_equal(s, "lambda L: True");
    sg_free(s);
    sg_guard_prog_free(p);
}

static void test_emit_c(void **state)
{
    (void)state;
    static const char *const g[] = {X " == " Y, X " >= 2", "2*" X " + 3 <= " Y " + " Z, X " // 4 >= 1",
                                    X " < 2**64", X " >= 5"};
    sg_guard_prog *p = compile_list(g, 6, XYZ, 3);
    char *s = NULL;
    assert_int_equal(sg_guard_prog_emit_c(C, &s, p, "guard_xyz"), SG_OK);
    assert_non_null(strstr(s, "int guard_xyz(const int64_t *v)\n"));
    assert_non_null(strstr(s, "const int64_t L_x_size_0_ = v[0]; /* L['x'].size()[0] */"));
    assert_true(strstr(s, "if (!(L_x_size_0_ == L_y_size_0_))\n        return 0;") ||
                strstr(s, "if (!(L_y_size_0_ == L_x_size_0_))\n        return 0;"));
    assert_non_null(strstr(s, "if (!(L_x_size_0_ >= 2LL))\n        return 0;"));
    assert_non_null(strstr(s, "sgg_floordiv(&sgt"));
    assert_non_null(strstr(s, "return -1; /* a number beyond int64"));
    assert_null(strstr(strstr(s, "int guard_xyz"), "return 1;")); /* unreachable after the exact-only guard */
    sg_free(s);
    assert_int_equal(sg_guard_prog_emit_c(C, &s, p, "not an identifier"), SG_EINVAL);
    assert_null(s);
    assert_int_equal(sg_guard_prog_emit_c(C, &s, p, NULL), SG_OK);
    assert_non_null(strstr(s, "int sg_guard(const int64_t *v)\n"));
    sg_free(s);
    sg_guard_prog_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_basic),
        cmocka_unit_test(test_check_order),
        cmocka_unit_test(test_check_python_semantics),
        cmocka_unit_test(test_check_overflow),
        cmocka_unit_test(test_check_shared_after_overflow),
        cmocka_unit_test(test_check_errors),
        cmocka_unit_test(test_check_exact_values),
        cmocka_unit_test(test_check_run_kinds),
        cmocka_unit_test(test_check_boundary_constants),
        cmocka_unit_test(test_native_flags),
        cmocka_unit_test(test_native_wide),
        cmocka_unit_test(test_check_threads),
        cmocka_unit_test(test_check_bad_input),
        cmocka_unit_test(test_compile_errors),
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_serialize_roundtrip),
        cmocka_unit_test(test_serialize_big_exponent),
        cmocka_unit_test(test_serialize_corrupt),
        cmocka_unit_test(test_serialize_resealed_garbage),
        cmocka_unit_test(test_emit_python),
        cmocka_unit_test(test_emit_python_with),
        cmocka_unit_test(test_emit_c),
    };
    return cmocka_run_group_tests_name("guard_prog", tests, setup, teardown);
}
