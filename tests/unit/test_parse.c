/* Unit tests of the parser (src/parse/parse.c). Expected expressions are built
 * with the constructors and compared by pointer: equal canonical forms are the
 * same node. */
#include "cmocka_all.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shapeguard/parse.h>

/* ---- fixtures and helpers ------------------------------------------------ */

static int setup(void **state)
{
    sg_ctx *ctx = NULL;
    if (sg_ctx_new(&ctx) != SG_OK)
        return -1;
    *state = ctx;
    return 0;
}

static int teardown(void **state)
{
    sg_ctx_free(*state);
    return 0;
}

/* Parse text, which must succeed. */
static const sg_expr *P(sg_ctx *ctx, const char *text)
{
    const sg_expr *e = NULL;
    sg_status st = sg_parse(ctx, &e, text, NULL);
    if (st != SG_OK)
        print_error("parse of \"%s\" failed: %s\n", text, sg_ctx_last_error_msg(ctx));
    assert_int_equal(st, SG_OK);
    assert_non_null(e);
    return e;
}

static const sg_expr *I(sg_ctx *ctx, int64_t v)
{
    const sg_expr *e = NULL;
    assert_int_equal(sg_expr_int(ctx, &e, v), SG_OK);
    return e;
}

static const sg_expr *IS(sg_ctx *ctx, const char *v)
{
    const sg_expr *e = NULL;
    assert_int_equal(sg_expr_int_str(ctx, &e, v), SG_OK);
    return e;
}

static const sg_expr *B(sg_ctx *ctx, int v)
{
    const sg_expr *e = NULL;
    assert_int_equal(sg_expr_bool(ctx, &e, v), SG_OK);
    return e;
}

static const sg_expr *S(sg_ctx *ctx, const char *name)
{
    const sg_expr *e = NULL;
    assert_int_equal(sg_expr_sym(ctx, &e, name), SG_OK);
    return e;
}

typedef sg_status (*bin_fn)(sg_ctx *, const sg_expr **, const sg_expr *, const sg_expr *);

static const sg_expr *BIN(sg_ctx *ctx, bin_fn f, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *e = NULL;
    assert_int_equal(f(ctx, &e, a, b), SG_OK);
    return e;
}

static const sg_expr *NEG(sg_ctx *ctx, const sg_expr *a)
{
    const sg_expr *e = NULL;
    assert_int_equal(sg_expr_neg(ctx, &e, a), SG_OK);
    return e;
}

static const sg_expr *REL(sg_ctx *ctx, sg_rel r, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *e = NULL;
    assert_int_equal(sg_expr_rel(ctx, &e, r, a, b), SG_OK);
    return e;
}

static const sg_expr *AND2(sg_ctx *ctx, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *args[2] = {a, b};
    const sg_expr *e = NULL;
    assert_int_equal(sg_expr_and(ctx, &e, 2, args), SG_OK);
    return e;
}

static const sg_expr *OR2(sg_ctx *ctx, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *args[2] = {a, b};
    const sg_expr *e = NULL;
    assert_int_equal(sg_expr_or(ctx, &e, 2, args), SG_OK);
    return e;
}

static const sg_expr *NOT(sg_ctx *ctx, const sg_expr *a)
{
    const sg_expr *e = NULL;
    assert_int_equal(sg_expr_not(ctx, &e, a), SG_OK);
    return e;
}

/* The context still works after an error. */
static void check_usable(sg_ctx *ctx)
{
    const sg_expr *x = S(ctx, "x");
    assert_ptr_equal(P(ctx, "x + 1"), BIN(ctx, sg_expr_add, x, I(ctx, 1)));
}

/* Parse text, which must fail with st and a message containing where (and
 * what, if not NULL); *out must be NULL. */
static void expect_error_n(sg_ctx *ctx, const char *text, size_t len, sg_status st, const char *where,
                           const char *what)
{
    const sg_expr *e = (const sg_expr *)&e; /* anything but NULL */
    sg_status got = sg_parse_n(ctx, &e, text, len, NULL);
    const char *msg = sg_ctx_last_error_msg(ctx);
    if (got != st || strstr(msg, where) == NULL || (what && strstr(msg, what) == NULL))
        print_error("input \"%.*s\": status %d (%s), message \"%s\"; wanted %d (%s) with \"%s\" and \"%s\"\n",
                    (int)len, text, (int)got, sg_status_kind(got), msg, (int)st, sg_status_kind(st), where,
                    what ? what : "");
    assert_int_equal(got, st);
    assert_null(e);
    assert_int_equal(sg_ctx_last_error(ctx), st);
    assert_non_null(strstr(msg, where));
    if (what)
        assert_non_null(strstr(msg, what));
    check_usable(ctx);
}

static void expect_error(sg_ctx *ctx, const char *text, sg_status st, const char *where, const char *what)
{
    expect_error_n(ctx, text, strlen(text), st, where, what);
}

/* ---- precedence and associativity --------------------------------------------- */

static void test_arith_constants(void **state)
{
    sg_ctx *ctx = *state;
    assert_ptr_equal(P(ctx, "1 + 2 * 3"), I(ctx, 7));
    assert_ptr_equal(P(ctx, "(1 + 2) * 3"), I(ctx, 9));
    assert_ptr_equal(P(ctx, "10 - 3 - 2"), I(ctx, 5));
    assert_ptr_equal(P(ctx, "7 // 2 * 2"), I(ctx, 6));
    assert_ptr_equal(P(ctx, "2 * 7 // 2"), I(ctx, 7));
    assert_ptr_equal(P(ctx, "17 % 5"), I(ctx, 2));
    assert_ptr_equal(P(ctx, "-7 // 2"), I(ctx, -4));
    assert_ptr_equal(P(ctx, "-7 % 3"), I(ctx, 2));
    assert_ptr_equal(P(ctx, "1 << 2 + 1"), I(ctx, 8));
    assert_ptr_equal(P(ctx, "64 >> 1 + 1"), I(ctx, 16));
    assert_ptr_equal(P(ctx, "6 & 3 | 8"), I(ctx, 10));
    assert_ptr_equal(P(ctx, "1 | 2 ^ 3 & 1"), I(ctx, 3));
    assert_ptr_equal(P(ctx, "5 ^ 1 << 1"), I(ctx, 7));
    assert_ptr_equal(P(ctx, "~5"), I(ctx, -6));
    assert_ptr_equal(P(ctx, "~-1"), I(ctx, 0));
    assert_ptr_equal(P(ctx, "- - 3"), I(ctx, 3));
    assert_ptr_equal(P(ctx, "+3"), I(ctx, 3));
    assert_ptr_equal(P(ctx, "-5"), I(ctx, -5));
    assert_ptr_equal(P(ctx, "2 - -5"), I(ctx, 7));
}

static void test_power(void **state)
{
    sg_ctx *ctx = *state;
    const sg_expr *x = S(ctx, "x");
    assert_ptr_equal(P(ctx, "-2**2"), I(ctx, -4));
    assert_ptr_equal(P(ctx, "(-2)**2"), I(ctx, 4));
    assert_ptr_equal(P(ctx, "2**3**2"), I(ctx, 512));
    assert_ptr_equal(P(ctx, "(2**3)**2"), I(ctx, 64));
    assert_ptr_equal(P(ctx, "2 * 3 ** 2"), I(ctx, 18));
    assert_ptr_equal(P(ctx, "-x**2"), NEG(ctx, BIN(ctx, sg_expr_pow, x, I(ctx, 2))));
    assert_ptr_equal(P(ctx, "2**-1"), BIN(ctx, sg_expr_pow, I(ctx, 2), I(ctx, -1)));
    assert_ptr_equal(P(ctx, "2 ** - x"), BIN(ctx, sg_expr_pow, I(ctx, 2), NEG(ctx, x)));
    assert_ptr_equal(P(ctx, "2**-1**2"), BIN(ctx, sg_expr_pow, I(ctx, 2), I(ctx, -1)));
    assert_ptr_equal(P(ctx, "x**2"), BIN(ctx, sg_expr_mul, x, x));
}

static void test_symbolic_structure(void **state)
{
    sg_ctx *ctx = *state;
    const sg_expr *x = S(ctx, "x"), *y = S(ctx, "y"), *z = S(ctx, "z");
    assert_ptr_equal(P(ctx, "x + y * z"), BIN(ctx, sg_expr_add, x, BIN(ctx, sg_expr_mul, y, z)));
    assert_ptr_equal(P(ctx, "(x + y) * z"), BIN(ctx, sg_expr_mul, BIN(ctx, sg_expr_add, x, y), z));
    assert_ptr_equal(P(ctx, "x - y - z"), BIN(ctx, sg_expr_sub, BIN(ctx, sg_expr_sub, x, y), z));
    assert_ptr_equal(P(ctx, "x // y // z"), BIN(ctx, sg_expr_floordiv, BIN(ctx, sg_expr_floordiv, x, y), z));
    assert_ptr_equal(P(ctx, "x % y * z"), BIN(ctx, sg_expr_mul, BIN(ctx, sg_expr_mod, x, y), z));
    assert_ptr_equal(P(ctx, "x << y + 1"), BIN(ctx, sg_expr_shl, x, BIN(ctx, sg_expr_add, y, I(ctx, 1))));
    assert_ptr_equal(P(ctx, "x >> y"), BIN(ctx, sg_expr_shr, x, y));
    assert_ptr_equal(P(ctx, "x | y & z"), BIN(ctx, sg_expr_bor, x, BIN(ctx, sg_expr_band, y, z)));
    assert_ptr_equal(P(ctx, "x ^ y | z"), BIN(ctx, sg_expr_bor, BIN(ctx, sg_expr_bxor, x, y), z));
    assert_ptr_equal(P(ctx, "x & y ^ z"), BIN(ctx, sg_expr_bxor, BIN(ctx, sg_expr_band, x, y), z));
    const sg_expr *bn = NULL;
    assert_int_equal(sg_expr_bnot(ctx, &bn, x), SG_OK);
    assert_ptr_equal(P(ctx, "~x"), bn);
    assert_ptr_equal(P(ctx, "-x * y"), BIN(ctx, sg_expr_mul, NEG(ctx, x), y));
    assert_ptr_equal(P(ctx, "+x"), x);
    assert_ptr_equal(P(ctx, "((x))"), x);
    /* blanks of every kind, and lines */
    assert_ptr_equal(P(ctx, " \t x\r\n+\n\ty  "), BIN(ctx, sg_expr_add, x, y));
}

static void test_comparisons(void **state)
{
    sg_ctx *ctx = *state;
    const sg_expr *x = S(ctx, "x"), *y = S(ctx, "y"), *z = S(ctx, "z");
    const sg_expr *one = I(ctx, 1);
    assert_ptr_equal(P(ctx, "x < y"), REL(ctx, SG_REL_LT, x, y));
    assert_ptr_equal(P(ctx, "x <= y"), REL(ctx, SG_REL_LE, x, y));
    assert_ptr_equal(P(ctx, "x > y"), REL(ctx, SG_REL_GT, x, y));
    assert_ptr_equal(P(ctx, "x >= y"), REL(ctx, SG_REL_GE, x, y));
    assert_ptr_equal(P(ctx, "x == y"), REL(ctx, SG_REL_EQ, x, y));
    assert_ptr_equal(P(ctx, "x != y"), REL(ctx, SG_REL_NE, x, y));
    assert_ptr_equal(P(ctx, "x < y < z"), AND2(ctx, REL(ctx, SG_REL_LT, x, y), REL(ctx, SG_REL_LT, y, z)));
    assert_ptr_equal(P(ctx, "x < y < z"), P(ctx, "x < y and y < z"));
    assert_ptr_equal(P(ctx, "0 <= x < y == z"),
                     AND2(ctx, AND2(ctx, REL(ctx, SG_REL_LE, I(ctx, 0), x), REL(ctx, SG_REL_LT, x, y)),
                          REL(ctx, SG_REL_EQ, y, z)));
    assert_ptr_equal(P(ctx, "x + 1 < y * 2"),
                     REL(ctx, SG_REL_LT, BIN(ctx, sg_expr_add, x, one), BIN(ctx, sg_expr_mul, y, I(ctx, 2))));
    assert_ptr_equal(P(ctx, "x | 1 == y"), REL(ctx, SG_REL_EQ, BIN(ctx, sg_expr_bor, x, one), y));
    assert_ptr_equal(P(ctx, "1 < 2"), B(ctx, 1));
    assert_ptr_equal(P(ctx, "1 < 2 < 2"), B(ctx, 0));
    /* boolean equality */
    assert_ptr_equal(P(ctx, "(x < y) == (y > x)"), B(ctx, 1));
}

static void test_boolean_ops(void **state)
{
    sg_ctx *ctx = *state;
    const sg_expr *x = S(ctx, "x"), *y = S(ctx, "y");
    const sg_expr *one = I(ctx, 1), *two = I(ctx, 2);
    const sg_expr *xe1 = REL(ctx, SG_REL_EQ, x, one), *yg2 = REL(ctx, SG_REL_GT, y, two);
    assert_ptr_equal(P(ctx, "not x == 1"), NOT(ctx, xe1));
    assert_ptr_equal(P(ctx, "not not x == 1"), xe1);
    assert_ptr_equal(P(ctx, "x == 1 and y > 2"), AND2(ctx, xe1, yg2));
    assert_ptr_equal(P(ctx, "x == 1 or y > 2"), OR2(ctx, xe1, yg2));
    assert_ptr_equal(P(ctx, "not x == 1 and y > 2"), AND2(ctx, NOT(ctx, xe1), yg2));
    assert_ptr_equal(P(ctx, "x == 1 and not y > 2"), AND2(ctx, xe1, NOT(ctx, yg2)));
    const sg_expr *x0 = REL(ctx, SG_REL_LT, x, I(ctx, 0));
    assert_ptr_equal(P(ctx, "x < 0 or x == 1 and y > 2"), OR2(ctx, x0, AND2(ctx, xe1, yg2)));
    assert_ptr_equal(P(ctx, "(x < 0 or x == 1) and y > 2"), AND2(ctx, OR2(ctx, x0, xe1), yg2));
    assert_ptr_equal(P(ctx, "true"), B(ctx, 1));
    assert_ptr_equal(P(ctx, "True"), B(ctx, 1));
    assert_ptr_equal(P(ctx, "false"), B(ctx, 0));
    assert_ptr_equal(P(ctx, "False"), B(ctx, 0));
    assert_ptr_equal(P(ctx, "not true"), B(ctx, 0));
    assert_ptr_equal(P(ctx, "true and x == 1"), xe1);
    assert_ptr_equal(P(ctx, "false or x == 1"), xe1);
}

static void test_literals_and_identifiers(void **state)
{
    sg_ctx *ctx = *state;
    const char *big = "340282366920938463463374607431768211456";
    assert_ptr_equal(P(ctx, big), IS(ctx, big));
    assert_ptr_equal(P(ctx, big), P(ctx, "2**128"));
    assert_ptr_equal(P(ctx, "-340282366920938463463374607431768211456"),
                     IS(ctx, "-340282366920938463463374607431768211456"));
    assert_ptr_equal(P(ctx, "-9223372036854775808"), I(ctx, INT64_MIN));
    assert_ptr_equal(P(ctx, "9223372036854775807"), I(ctx, INT64_MAX));
    assert_ptr_equal(P(ctx, "9223372036854775808"), IS(ctx, "9223372036854775808"));
    assert_ptr_equal(P(ctx, "123456789012345678"), IS(ctx, "123456789012345678"));
    assert_ptr_equal(P(ctx, "1234567890123456789"), IS(ctx, "1234567890123456789"));
    assert_ptr_equal(P(ctx, "0"), I(ctx, 0));
    assert_ptr_equal(P(ctx, "000"), I(ctx, 0));
    /* identifiers, including ones that start with a keyword or are a
     * function's name in another case */
    const char *names[] = {"x_1", "_a", "andy", "notx", "order", "trueish", "min", "max", "where", "s0", "u12",
                           "L", "FloorDivX"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        assert_ptr_equal(P(ctx, names[i]), S(ctx, names[i]));
    char longname[200];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_ptr_equal(P(ctx, longname), S(ctx, longname));
}

/* ---- functions ------------------------------------------------------------ */

static void test_functions(void **state)
{
    sg_ctx *ctx = *state;
    const sg_expr *x = S(ctx, "x"), *y = S(ctx, "y");
    const sg_expr *two = I(ctx, 2), *three = I(ctx, 3), *e = NULL;

    assert_ptr_equal(P(ctx, "FloorDiv(x, 2)"), P(ctx, "x // 2"));
    assert_ptr_equal(P(ctx, "FloorDiv(x, 2)"), BIN(ctx, sg_expr_floordiv, x, two));
    assert_ptr_equal(P(ctx, "Mod(x, 3)"), P(ctx, "x % 3"));
    assert_ptr_equal(P(ctx, "Pow(x, 3)"), P(ctx, "x**3"));
    assert_ptr_equal(P(ctx, "Pow(x, y)"), BIN(ctx, sg_expr_pow, x, y));
    assert_ptr_equal(P(ctx, "CeilDiv(x, 2)"), BIN(ctx, sg_expr_ceildiv, x, two));
    assert_ptr_equal(P(ctx, "CleanDiv(x, y)"), BIN(ctx, sg_expr_cleandiv, x, y));
    assert_ptr_equal(P(ctx, "TruncDiv(x, y)"), BIN(ctx, sg_expr_truncdiv, x, y));
    assert_ptr_equal(P(ctx, "TruncMod(x, y)"), BIN(ctx, sg_expr_truncmod, x, y));
    assert_int_equal(sg_expr_modular_indexing(ctx, &e, x, two, three), SG_OK);
    assert_ptr_equal(P(ctx, "ModularIndexing(x, 2, 3)"), e);
    assert_int_equal(sg_expr_abs(ctx, &e, x), SG_OK);
    assert_ptr_equal(P(ctx, "Abs(x)"), e);

    const sg_expr *xyz[3] = {x, y, three};
    assert_int_equal(sg_expr_min(ctx, &e, 1, xyz), SG_OK);
    assert_ptr_equal(P(ctx, "Min(x)"), e);
    assert_int_equal(sg_expr_min(ctx, &e, 3, xyz), SG_OK);
    assert_ptr_equal(P(ctx, "Min(x, y, 3)"), e);
    assert_int_equal(sg_expr_max(ctx, &e, 3, xyz), SG_OK);
    assert_ptr_equal(P(ctx, "Max(x, y, 3)"), e);
    assert_ptr_equal(P(ctx, "Max(x, y, 3,)"), e); /* a trailing comma, as in Python */
    assert_ptr_equal(P(ctx, "Max ( x ,\n y , 3 )"), e);
    assert_ptr_equal(P(ctx, "Max(1, 7, 3)"), I(ctx, 7));

    assert_ptr_equal(P(ctx, "Eq(x, y)"), P(ctx, "x == y"));
    assert_ptr_equal(P(ctx, "Ne(x, y)"), P(ctx, "x != y"));
    assert_ptr_equal(P(ctx, "Lt(x, y)"), P(ctx, "x < y"));
    assert_ptr_equal(P(ctx, "Le(x, y)"), P(ctx, "x <= y"));
    assert_ptr_equal(P(ctx, "Gt(x, y)"), P(ctx, "x > y"));
    assert_ptr_equal(P(ctx, "Ge(x, y)"), P(ctx, "x >= y"));
    assert_ptr_equal(P(ctx, "And(x < y, y < z, z < 3)"), P(ctx, "x < y < z < 3"));
    assert_ptr_equal(P(ctx, "Or(x < y, y < z)"), P(ctx, "x < y or y < z"));
    assert_ptr_equal(P(ctx, "And(x < y)"), P(ctx, "x < y"));
    assert_ptr_equal(P(ctx, "Or(x < y)"), P(ctx, "x < y"));
    assert_ptr_equal(P(ctx, "And()"), B(ctx, 1));
    assert_ptr_equal(P(ctx, "Or()"), B(ctx, 0));
    assert_ptr_equal(P(ctx, "Not(x < y)"), P(ctx, "not x < y"));
    assert_int_equal(sg_expr_where(ctx, &e, REL(ctx, SG_REL_GT, x, I(ctx, 0)), x, I(ctx, 0)), SG_OK);
    assert_ptr_equal(P(ctx, "Where(x > 0, x, 0)"), e);
    assert_ptr_equal(P(ctx, "Where(true, x, y)"), x);
    /* nested calls and calls inside operators */
    assert_ptr_equal(P(ctx, "Max(Min(x, y), 2) + 1"),
                     BIN(ctx, sg_expr_add, P(ctx, "Max(Min(x, y), 2)"), I(ctx, 1)));
    assert_ptr_equal(P(ctx, "-Abs(x)**2"), NEG(ctx, BIN(ctx, sg_expr_pow, P(ctx, "Abs(x)"), two)));
}

/* ---- the resolver ------------------------------------------------------------ */

typedef struct resolver_log {
    int calls;
    int y_calls;
    int sources;
    char last_source[128];
    const sg_expr *a_value;   /* what "a" resolves to */
    const sg_expr *src_value; /* what a source resolves to (NULL: default) */
    int fail_on_b;            /* "b" gives SG_EUNBOUND */
} resolver_log;

static sg_status test_resolver(void *user, sg_ctx *ctx, const char *text, size_t len, int is_source,
                               const sg_expr **out)
{
    resolver_log *log = user;
    log->calls++;
    *out = NULL;
    if (is_source) {
        log->sources++;
        assert_true(len < sizeof log->last_source);
        memcpy(log->last_source, text, len);
        log->last_source[len] = '\0';
        *out = log->src_value;
        return SG_OK;
    }
    if (len == 1 && text[0] == 'a')
        *out = log->a_value;
    if (len == 1 && text[0] == 'y')
        log->y_calls++;
    if (len == 1 && text[0] == 'b' && log->fail_on_b)
        return sg_ctx_set_error(ctx, SG_EUNBOUND, "b is not bound");
    return SG_OK;
}

static sg_status parse_with(sg_ctx *ctx, const char *text, resolver_log *log, const sg_expr **out)
{
    sg_parse_opts opts = {test_resolver, log, 0};
    return sg_parse(ctx, out, text, &opts);
}

static void test_resolver_identifiers(void **state)
{
    sg_ctx *ctx = *state;
    const sg_expr *x = S(ctx, "x"), *y = S(ctx, "y"), *z = S(ctx, "z"), *e = NULL;
    resolver_log log;
    memset(&log, 0, sizeof log);
    log.a_value = BIN(ctx, sg_expr_add, x, I(ctx, 1));
    assert_int_equal(parse_with(ctx, "a * 2", &log, &e), SG_OK);
    assert_ptr_equal(e, BIN(ctx, sg_expr_mul, log.a_value, I(ctx, 2)));
    assert_int_equal(log.calls, 1);
    /* unresolved identifiers fall back to symbols; keywords, literals and
     * function names never reach the resolver */
    log.calls = 0;
    assert_int_equal(parse_with(ctx, "Max(y, 3) + a and true or not False", &log, &e), SG_ETYPE);
    assert_null(e);
    log.calls = 0;
    assert_int_equal(parse_with(ctx, "Max(y, 3) < a", &log, &e), SG_OK);
    assert_int_equal(log.calls, 2);
    /* the middle operand of a chain is built once */
    log.y_calls = 0;
    assert_int_equal(parse_with(ctx, "x < y < z", &log, &e), SG_OK);
    assert_int_equal(log.y_calls, 1);
    assert_ptr_equal(e, AND2(ctx, REL(ctx, SG_REL_LT, x, y), REL(ctx, SG_REL_LT, y, z)));
    /* an error from the resolver is returned, with the position */
    log.fail_on_b = 1;
    e = x;
    assert_int_equal(parse_with(ctx, "x + b", &log, &e), SG_EUNBOUND);
    assert_null(e);
    assert_int_equal(sg_ctx_last_error(ctx), SG_EUNBOUND);
    assert_non_null(strstr(sg_ctx_last_error_msg(ctx), "line 1, column 5"));
    assert_non_null(strstr(sg_ctx_last_error_msg(ctx), "b is not bound"));
    check_usable(ctx);
}

static void test_resolver_sources(void **state)
{
    sg_ctx *ctx = *state;
    const sg_expr *s0 = S(ctx, "s0"), *e = NULL;
    static const char *sources[] = {
        "L['x']",
        "L['x'].size()[0]",
        "L['x'].stride()[1]",
        "L['x'].storage_offset()",
        "L['x'].elem.size()[0]",
        "L['x'].a.b.size()[2]",
        "L[\"y\"].size()[10]",
        "L['self'].layers[3].weight.size()[1]",
        "G['x y']",
    };
    resolver_log log;
    memset(&log, 0, sizeof log);
    log.src_value = s0;
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
        char text[200];
        log.sources = 0;
        snprintf(text, sizeof text, "%s + 1", sources[i]);
        assert_int_equal(parse_with(ctx, text, &log, &e), SG_OK);
        assert_int_equal(log.sources, 1);
        assert_string_equal(log.last_source, sources[i]);
        assert_ptr_equal(e, BIN(ctx, sg_expr_add, s0, I(ctx, 1)));
        /* syntax only: no resolver, still fine */
        sg_parse_opts so = {NULL, NULL, 1};
        e = s0;
        assert_int_equal(sg_parse(ctx, &e, text, &so), SG_OK);
        assert_null(e);
    }
    /* in an operator and a call */
    assert_int_equal(parse_with(ctx, "Max(L['x'].size()[0], 2)*L['x'].size()[1]", &log, &e), SG_OK);
    assert_string_equal(log.last_source, "L['x'].size()[1]");

    /* no resolver, or a resolver that declines: a syntax error at the source */
    expect_error(ctx, "1 + L['x'].size()[0]", SG_ESYNTAX, "line 1, column 5", "shape environment");
    log.src_value = NULL;
    assert_int_equal(parse_with(ctx, "2 * L['x']", &log, &e), SG_ESYNTAX);
    assert_null(e);
    assert_non_null(strstr(sg_ctx_last_error_msg(ctx), "line 1, column 5"));
    assert_non_null(strstr(sg_ctx_last_error_msg(ctx), "L['x']"));
    /* malformed sources */
    expect_error(ctx, "L['x", SG_ESYNTAX, "line 1, column 3", "unterminated");
    expect_error(ctx, "L['x\n']", SG_ESYNTAX, "line 1, column 3", "unterminated");
    expect_error(ctx, "L['x'", SG_ESYNTAX, "line 1, column 6", "expected ']'");
    expect_error(ctx, "L[x]", SG_ESYNTAX, "line 1, column 3", NULL);
    expect_error(ctx, "L['x'.size()", SG_ESYNTAX, "line 1, column 6", NULL);
    expect_error(ctx, "L['x']. size()", SG_ESYNTAX, "line 1, column 8", NULL);
    expect_error(ctx, "L[0", SG_ESYNTAX, "line 1, column 4", NULL);
    expect_error(ctx, "L['']", SG_ESYNTAX, "line 1, column 3", NULL);
}

/* ---- syntax only ------------------------------------------------------------------ */

static sg_status must_not_resolve(void *user, sg_ctx *ctx, const char *text, size_t len, int is_source,
                                  const sg_expr **out)
{
    (void)user;
    (void)text;
    (void)len;
    (void)is_source;
    *out = NULL;
    fail_msg("the resolver was called in syntax-only mode");
    return sg_ctx_set_error(ctx, SG_EINTERNAL, "called");
}

static void test_syntax_only(void **state)
{
    sg_ctx *ctx = *state;
    sg_parse_opts so = {must_not_resolve, NULL, 1};
    const sg_expr *e = NULL;
    static const char *good[] = {
        "1 + 2 * 3", "x < y < z", "1 + true", "not 3", "Where(1, 2, 3)", "L['x'].size()[0] // 2",
        "Min(x, y, z)", "And()", "-2**-x",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        e = (const sg_expr *)&e;
        if (sg_parse(ctx, &e, good[i], &so) != SG_OK)
            print_error("syntax-only \"%s\": %s\n", good[i], sg_ctx_last_error_msg(ctx));
        assert_int_equal(sg_parse(ctx, &e, good[i], &so), SG_OK);
        assert_null(e);
    }
    /* structural errors still show */
    static const struct {
        const char *text;
        const char *where;
    } bad[] = {
        {"Min()", "line 1, column 1"},  {"Where(1,2)", "line 1, column 1"}, {"1 +", "line 1, column 4"},
        {"(x", "line 1, column 3"},     {"x )", "line 1, column 3"},        {"x if_ y", "line 1, column 3"},
        {"", "line 1, column 1"},       {"Abs", "line 1, column 4"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        e = (const sg_expr *)&e;
        assert_int_equal(sg_parse(ctx, &e, bad[i].text, &so), SG_ESYNTAX);
        assert_null(e);
        assert_non_null(strstr(sg_ctx_last_error_msg(ctx), bad[i].where));
    }
    char *deep = malloc(2 * 600 + 2);
    assert_non_null(deep);
    memset(deep, '(', 600);
    deep[600] = '1';
    memset(deep + 601, ')', 600);
    deep[1201] = '\0';
    assert_int_equal(sg_parse(ctx, &e, deep, &so), SG_ELIMIT);
    free(deep);
}

/* ---- errors ------------------------------------------------------------------ */

static void test_syntax_errors(void **state)
{
    sg_ctx *ctx = *state;
    expect_error(ctx, "1 +", SG_ESYNTAX, "line 1, column 4", "end of input");
    expect_error(ctx, "1 + ", SG_ESYNTAX, "line 1, column 5", "end of input");
    expect_error(ctx, "(x", SG_ESYNTAX, "line 1, column 3", "expected ')'");
    expect_error(ctx, "(1, 2)", SG_ESYNTAX, "line 1, column 3", "expected ')'");
    expect_error(ctx, "x )", SG_ESYNTAX, "line 1, column 3", "')'");
    expect_error(ctx, "x y", SG_ESYNTAX, "line 1, column 3", "'y'");
    expect_error(ctx, "()", SG_ESYNTAX, "line 1, column 2", NULL);
    expect_error(ctx, "Min()", SG_ESYNTAX, "line 1, column 1", "Min");
    expect_error(ctx, "Max()", SG_ESYNTAX, "line 1, column 1", "Max");
    expect_error(ctx, "Where(1,2)", SG_ESYNTAX, "line 1, column 1", "Where");
    expect_error(ctx, "Abs(1, 2)", SG_ESYNTAX, "line 1, column 1", "Abs");
    expect_error(ctx, "Not(true, false)", SG_ESYNTAX, "line 1, column 1", "Not");
    expect_error(ctx, "Eq(x)", SG_ESYNTAX, "line 1, column 1", "Eq");
    expect_error(ctx, "1 + ModularIndexing(x, 1)", SG_ESYNTAX, "line 1, column 5", "ModularIndexing");
    expect_error(ctx, "FloorDiv(1, 2, 3)", SG_ESYNTAX, "line 1, column 1", "FloorDiv");
    expect_error(ctx, "Min", SG_ESYNTAX, "line 1, column 4", "Min");
    expect_error(ctx, "Min + 1", SG_ESYNTAX, "line 1, column 5", "Min");
    expect_error(ctx, "Min(x,,y)", SG_ESYNTAX, "line 1, column 7", NULL);
    expect_error(ctx, "Min(x y)", SG_ESYNTAX, "line 1, column 7", "expected ',' or ')'");
    expect_error(ctx, "Min(x", SG_ESYNTAX, "line 1, column 6", NULL);
    expect_error(ctx, "f(x)", SG_ESYNTAX, "line 1, column 2", NULL);
    expect_error(ctx, "1 $ 2", SG_ESYNTAX, "line 1, column 3", "'$'");
    expect_error(ctx, "x = 1", SG_ESYNTAX, "line 1, column 3", NULL);
    expect_error(ctx, "3 / 2", SG_ESYNTAX, "line 1, column 3", NULL);
    expect_error(ctx, "x ! y", SG_ESYNTAX, "line 1, column 3", NULL);
    expect_error(ctx, "1.5", SG_ESYNTAX, "line 1, column 1", NULL);
    expect_error(ctx, "2x", SG_ESYNTAX, "line 1, column 1", NULL);
    expect_error(ctx, "0123", SG_ESYNTAX, "line 1, column 1", NULL);
    expect_error(ctx, "x.size()", SG_ESYNTAX, "line 1, column 2", NULL);
    expect_error(ctx, "not", SG_ESYNTAX, "line 1, column 4", "end of input");
    expect_error(ctx, "x == not y", SG_ESYNTAX, "line 1, column 6", "'not'");
    expect_error(ctx, "-not x", SG_ESYNTAX, "line 1, column 2", "'not'");
    expect_error(ctx, "and", SG_ESYNTAX, "line 1, column 1", "'and'");
    expect_error(ctx, "x and", SG_ESYNTAX, "line 1, column 6", NULL);
    expect_error(ctx, "x < ", SG_ESYNTAX, "line 1, column 5", NULL);
    expect_error(ctx, "2 ** ", SG_ESYNTAX, "line 1, column 6", NULL);
    expect_error(ctx, "x <> y", SG_ESYNTAX, "line 1, column 4", NULL);
    expect_error(ctx, "1 # comment", SG_ESYNTAX, "line 1, column 3", NULL);
    expect_error(ctx, "x\xc3\xa9", SG_ESYNTAX, "line 1, column 2", NULL);
    /* lines and columns */
    expect_error(ctx, "x\n  + )", SG_ESYNTAX, "line 2, column 5", NULL);
    expect_error(ctx, "x +\n\ny $", SG_ESYNTAX, "line 3, column 3", NULL);
    expect_error(ctx, "(x +\n  y", SG_ESYNTAX, "line 2, column 4", "expected ')'");
    /* empty */
    expect_error(ctx, "", SG_ESYNTAX, "line 1, column 1", NULL);
    expect_error(ctx, "   \t", SG_ESYNTAX, "line 1, column 5", NULL);
    expect_error(ctx, " \n ", SG_ESYNTAX, "line 2, column 2", NULL);
    /* sg_parse_n reads only len bytes */
    expect_error_n(ctx, "1 + 2xyz", 3, SG_ESYNTAX, "line 1, column 4", NULL);
    expect_error_n(ctx, "1\0 2", 4, SG_ESYNTAX, "line 1, column 2", NULL);
    const sg_expr *e = NULL;
    assert_int_equal(sg_parse_n(ctx, &e, "1 + 2xyz", 5, NULL), SG_OK);
    assert_ptr_equal(e, I(ctx, 3));
}

static void test_type_errors(void **state)
{
    sg_ctx *ctx = *state;
    expect_error(ctx, "1 + true", SG_ETYPE, "line 1, column 3", NULL);
    expect_error(ctx, "true + 1", SG_ETYPE, "line 1, column 6", NULL);
    expect_error(ctx, "x * (y < 1)", SG_ETYPE, "line 1, column 3", NULL);
    expect_error(ctx, "-true", SG_ETYPE, "line 1, column 1", NULL);
    expect_error(ctx, "+true", SG_ETYPE, "line 1, column 1", NULL);
    expect_error(ctx, "~false", SG_ETYPE, "line 1, column 1", NULL);
    expect_error(ctx, "not 1", SG_ETYPE, "line 1, column 1", NULL);
    expect_error(ctx, "x and y", SG_ETYPE, "line 1, column 3", NULL);
    expect_error(ctx, "x < 1 or 2", SG_ETYPE, "line 1, column 7", NULL);
    expect_error(ctx, "true < false", SG_ETYPE, "line 1, column 6", NULL);
    expect_error(ctx, "1 < 2 < true", SG_ETYPE, "line 1, column 7", NULL);
    expect_error(ctx, "Where(x, 1, 2)", SG_ETYPE, "line 1, column 1", NULL);
    expect_error(ctx, "Where(x > 1, 1, true)", SG_ETYPE, "line 1, column 1", NULL);
    expect_error(ctx, "\n  Max(1, x > 2)", SG_ETYPE, "line 2, column 3", NULL);
    expect_error(ctx, "And(x > 1, 2)", SG_ETYPE, "line 1, column 1", NULL);
    expect_error(ctx, "Abs(true)", SG_ETYPE, "line 1, column 1", NULL);
    expect_error(ctx, "2 ** false", SG_ETYPE, "line 1, column 3", NULL);
}

/* ---- nesting limits ---------------------------------------------------------------- */

/* prefix repeated n times, then middle, then suffix repeated n times */
static char *repeat3(const char *prefix, size_t n, const char *middle, const char *suffix)
{
    size_t lp = strlen(prefix), lm = strlen(middle), ls = strlen(suffix);
    char *s = malloc(n * (lp + ls) + lm + 1);
    char *q = s;
    assert_non_null(s);
    for (size_t i = 0; i < n; i++, q += lp)
        memcpy(q, prefix, lp);
    memcpy(q, middle, lm);
    q += lm;
    for (size_t i = 0; i < n; i++, q += ls)
        memcpy(q, suffix, ls);
    *q = '\0';
    return s;
}

static void expect_limit(sg_ctx *ctx, char *text)
{
    const sg_expr *e = (const sg_expr *)&e;
    assert_int_equal(sg_parse(ctx, &e, text, NULL), SG_ELIMIT);
    assert_null(e);
    assert_non_null(strstr(sg_ctx_last_error_msg(ctx), "line 1, column "));
    free(text);
    check_usable(ctx);
}

static void test_nesting(void **state)
{
    sg_ctx *ctx = *state;
    char *s;
    /* exactly the limit is fine, one more is not */
    s = repeat3("(", SG_PARSE_MAX_NESTING, "1", ")");
    assert_ptr_equal(P(ctx, s), I(ctx, 1));
    free(s);
    s = repeat3("(", SG_PARSE_MAX_NESTING + 1, "1", ")");
    {
        const sg_expr *e = NULL;
        char where[64];
        assert_int_equal(sg_parse(ctx, &e, s, NULL), SG_ELIMIT);
        snprintf(where, sizeof where, "line 1, column %d:", SG_PARSE_MAX_NESTING + 1);
        assert_non_null(strstr(sg_ctx_last_error_msg(ctx), where));
    }
    free(s);
    s = repeat3("-", SG_PARSE_MAX_NESTING, "1", "");
    assert_ptr_equal(P(ctx, s), I(ctx, 1));
    free(s);

    expect_limit(ctx, repeat3("(", 10000, "1", ")"));
    expect_limit(ctx, repeat3("(", 10000, "", ""));
    expect_limit(ctx, repeat3("-", 10000, "1", ""));
    expect_limit(ctx, repeat3("~", 100000, "x", ""));
    expect_limit(ctx, repeat3("not ", 10000, "true", ""));
    expect_limit(ctx, repeat3("Abs(", 10000, "x", ")"));
    expect_limit(ctx, repeat3("Max(1, ", 10000, "x", ")"));
    expect_limit(ctx, repeat3("2**", 10000, "2", ""));
    expect_limit(ctx, repeat3("x + (", 10000, "1", ")"));
    expect_limit(ctx, repeat3("x < (", 10000, "1", ")"));

    /* long flat chains are not nesting */
    s = repeat3("x + ", 20000, "x", "");
    assert_ptr_equal(P(ctx, s), BIN(ctx, sg_expr_mul, I(ctx, 20001), S(ctx, "x")));
    free(s);
}

static void test_invalid_arguments(void **state)
{
    sg_ctx *ctx = *state;
    const sg_expr *e = (const sg_expr *)&e;
    assert_int_equal(sg_parse(NULL, &e, "1", NULL), SG_EINVAL);
    assert_int_equal(sg_parse_n(NULL, &e, "1", 1, NULL), SG_EINVAL);
    assert_int_equal(sg_parse(ctx, NULL, "1", NULL), SG_EINVAL);
    assert_int_equal(sg_ctx_last_error(ctx), SG_EINVAL);
    assert_int_equal(sg_parse(ctx, &e, NULL, NULL), SG_EINVAL);
    assert_null(e);
    e = (const sg_expr *)&e;
    assert_int_equal(sg_parse_n(ctx, &e, NULL, 0, NULL), SG_EINVAL);
    assert_null(e);
    check_usable(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_arith_constants, setup, teardown),
        cmocka_unit_test_setup_teardown(test_power, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symbolic_structure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_comparisons, setup, teardown),
        cmocka_unit_test_setup_teardown(test_boolean_ops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_literals_and_identifiers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_functions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolver_identifiers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolver_sources, setup, teardown),
        cmocka_unit_test_setup_teardown(test_syntax_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_syntax_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_type_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nesting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_arguments, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
