/* reason: the fact base API: assumptions, questions, snapshots, budget, bad
 * input. The questions' answers are checked more broadly by
 * tests/batteries/reason.battery and by the brute-force oracle in tests/diff. */
#include "cmocka_all.h"

#include <string.h>

#include "shapeguard.h"

static sg_ctx *C;

static const sg_expr *P(const char *text)
{
    const sg_expr *e = NULL;
    if (sg_parse(C, &e, text, NULL) != SG_OK)
        fail_msg("cannot parse %s: %s", text, sg_ctx_last_error_msg(C));
    return e;
}

static sg_truth K(sg_facts *f, const char *q)
{
    sg_truth t = SG_UNKNOWN;
    assert_int_equal(sg_facts_known(f, &t, P(q)), SG_OK);
    return t;
}

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

static void test_assume_and_ask(void **state)
{
    (void)state;
    sg_facts *f;
    assert_int_equal(sg_facts_new(C, &f), SG_OK);
    assert_int_equal(sg_facts_count(f), 0);
    assert_int_equal(K(f, "x >= 0"), SG_UNKNOWN);
    assert_int_equal(sg_facts_assume(f, P("x >= 2 and x <= 9")), SG_OK);
    assert_int_equal(sg_facts_count(f), 1);
    assert_int_equal(K(f, "x >= 0"), SG_TRUE);
    assert_int_equal(K(f, "x >= 10"), SG_FALSE);
    sg_interval iv;
    assert_int_equal(sg_facts_range(f, &iv, P("3*x - 1")), SG_OK);
    assert_ptr_equal(iv.lo, P("5"));
    assert_ptr_equal(iv.hi, P("26"));
    const sg_expr *r;
    assert_int_equal(sg_facts_simplify(f, &r, P("x // 10 + Max(x, 1)")), SG_OK);
    assert_ptr_equal(r, P("x"));
    assert_true(sg_facts_consistent(f));
    sg_facts_free(f);
}

static void test_copy_is_independent(void **state)
{
    (void)state;
    sg_facts *f, *g;
    assert_int_equal(sg_facts_new(C, &f), SG_OK);
    assert_int_equal(sg_facts_assume(f, P("y >= 1")), SG_OK);
    assert_int_equal(sg_facts_copy(&g, f), SG_OK);
    assert_int_equal(sg_facts_assume(g, P("y <= 3")), SG_OK);
    assert_int_equal(K(g, "y < 4"), SG_TRUE);
    assert_int_equal(K(f, "y < 4"), SG_UNKNOWN);
    assert_int_equal(K(f, "y > 0"), SG_TRUE);
    assert_int_equal(sg_facts_count(f), 1);
    assert_int_equal(sg_facts_count(g), 2);
    sg_facts_free(f);
    assert_int_equal(K(g, "y > 0"), SG_TRUE);
    sg_facts_free(g);
}

/* x % 8 == 0 replaces x by 8*k for one fresh k: the same after later facts
 * and in copies, so forms simplified in either meet. */
static void test_divisibility_symbol_is_stable(void **state)
{
    (void)state;
    sg_facts *f, *g;
    const sg_expr *a, *b, *c;
    assert_int_equal(sg_facts_new(C, &f), SG_OK);
    assert_int_equal(sg_facts_assume(f, P("w % 8 == 0")), SG_OK);
    assert_int_equal(sg_facts_simplify(f, &a, P("w")), SG_OK);
    assert_int_equal(sg_facts_assume(f, P("v == w + 1")), SG_OK); /* a new replacement: derived again */
    assert_int_equal(sg_facts_simplify(f, &b, P("w")), SG_OK);
    assert_ptr_equal(a, b);
    assert_int_equal(sg_facts_copy(&g, f), SG_OK);
    assert_int_equal(sg_facts_simplify(g, &c, P("w")), SG_OK);
    assert_ptr_equal(a, c);
    assert_int_equal(sg_facts_simplify(g, &c, P("v - w")), SG_OK);
    assert_ptr_equal(c, P("1"));
    sg_facts_free(f);
    sg_facts_free(g);
}

static void test_contradiction(void **state)
{
    (void)state;
    sg_facts *f;
    assert_int_equal(sg_facts_new(C, &f), SG_OK);
    assert_int_equal(sg_facts_assume(f, P("z > 5")), SG_OK);
    assert_int_equal(sg_facts_assume(f, P("z < 3")), SG_EASSERT);
    assert_true(strlen(sg_ctx_last_error_msg(C)) > 0);
    assert_false(sg_facts_consistent(f));
    assert_int_equal(K(f, "z == 100"), SG_TRUE);
    assert_int_equal(sg_facts_assume(f, P("false")), SG_OK); /* already inconsistent */
    sg_facts_free(f);
}

static void test_budget(void **state)
{
    (void)state;
    sg_facts *f;
    assert_int_equal(sg_facts_new(C, &f), SG_OK);
    assert_int_equal(sg_facts_assume(f, P("a <= b and b <= c and c <= d")), SG_OK);
    sg_facts_set_budget(f, 1);
    assert_int_equal(K(f, "a <= d"), SG_UNKNOWN);
    sg_facts_set_budget(f, 0); /* the default again */
    assert_int_equal(K(f, "a <= d"), SG_TRUE);
    sg_facts_free(f);
}

static void test_bad_input(void **state)
{
    (void)state;
    sg_facts *f;
    sg_truth t;
    sg_interval iv;
    const sg_expr *r;
    assert_int_equal(sg_facts_new(NULL, &f), SG_EINVAL);
    assert_int_equal(sg_facts_new(C, NULL), SG_EINVAL);
    assert_int_equal(sg_facts_new(C, &f), SG_OK);
    assert_int_equal(sg_facts_assume(NULL, P("x > 0")), SG_EINVAL);
    assert_int_equal(sg_facts_assume(f, NULL), SG_EINVAL);
    assert_int_equal(sg_facts_assume(f, P("x + 1")), SG_ETYPE);
    assert_int_equal(sg_facts_count(f), 0);
    assert_int_equal(sg_facts_known(f, &t, P("x + 1")), SG_ETYPE);
    assert_int_equal(sg_facts_known(f, NULL, P("x > 1")), SG_EINVAL);
    assert_int_equal(sg_facts_range(f, NULL, P("x")), SG_EINVAL);
    assert_int_equal(sg_facts_range(f, &iv, NULL), SG_EINVAL);
    assert_int_equal(sg_facts_simplify(f, NULL, P("x")), SG_EINVAL);
    assert_int_equal(sg_facts_simplify(NULL, &r, P("x")), SG_EINVAL);
    assert_int_equal(sg_facts_copy(NULL, f), SG_EINVAL);
    assert_true(sg_facts_consistent(f));
    assert_false(sg_facts_consistent(NULL));
    sg_facts_free(f);
    sg_facts_free(NULL);
}

static void test_range_of(void **state)
{
    (void)state;
    const sg_expr *x = P("x"), *y = P("y");
    const sg_expr *syms[2] = {x, y};
    sg_interval rs[2] = {{P("2"), P("10")}, {P("-3"), P("4")}}, out;
    assert_int_equal(sg_range_of(C, &out, P("x*y"), 2, syms, rs), SG_OK);
    assert_ptr_equal(out.lo, P("-30"));
    assert_ptr_equal(out.hi, P("40"));
    sg_interval half[1] = {{P("0"), NULL}};
    assert_int_equal(sg_range_of(C, &out, P("x + 1"), 1, syms, half), SG_OK);
    assert_ptr_equal(out.lo, P("1"));
    assert_null(out.hi);
    sg_interval bad[1] = {{P("5"), P("1")}};
    assert_int_equal(sg_range_of(C, &out, x, 1, syms, bad), SG_EINVAL);
    const sg_expr *notsym[1] = {P("3")};
    assert_int_equal(sg_range_of(C, &out, x, 1, notsym, half), SG_EINVAL);
    assert_int_equal(sg_range_of(C, NULL, x, 0, NULL, NULL), SG_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_assume_and_ask),
        cmocka_unit_test(test_copy_is_independent),
        cmocka_unit_test(test_divisibility_symbol_is_stable),
        cmocka_unit_test(test_contradiction),
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_range_of),
    };
    return cmocka_run_group_tests_name("reason", tests, setup, teardown);
}
