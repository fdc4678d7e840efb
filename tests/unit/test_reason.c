/* reason: the fact base API: assumptions, questions, snapshots, budget, bad
 * input. The questions' answers are checked more broadly by
 * tests/batteries/reason.battery and by the brute-force oracle in tests/diff. */
#include "cmocka_all.h"

#include <stdio.h>
#include <string.h>

#include "shapeguard.h"
#include "reason/reason_private.h" /* lower_looks: the work counter of the lower-bound index */

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
    assert_int_equal(sg_facts_assume(f, P("v == w + 1")), SG_OK); /* a new replacement */
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

/* Base over the facts in the order given by idx (n of them). */
static sg_facts *base_in_order(const char *const *facts, const int *idx, size_t n)
{
    sg_facts *f;
    assert_int_equal(sg_facts_new(C, &f), SG_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(sg_facts_assume(f, P(facts[idx[i]])), SG_OK);
    return f;
}

typedef struct {
    const char *q;
    sg_truth want;
} question;

/* Every question gets its answer from f and from a copy of f (which derives
 * everything from scratch). */
static void ask_all(sg_facts *f, const question *qs, size_t n)
{
    sg_facts *g;
    assert_int_equal(sg_facts_copy(&g, f), SG_OK);
    for (size_t i = 0; i < n; i++) {
        if (K(f, qs[i].q) != qs[i].want || K(g, qs[i].q) != qs[i].want)
            fail_msg("%s: %d (copy: %d), expected %d", qs[i].q, K(f, qs[i].q), K(g, qs[i].q), qs[i].want);
    }
    sg_facts_free(g);
}

/* Replacements processed as they come (only the facts that mention the
 * replaced symbol again) answer as the facts in any order do. With
 * 3 <= ra <= 10, rb = ra + 1 and rc = 2*rb: rc = 2*ra + 2 is even and in
 * [8, 22], and rc == 9 or rc >= 9 each hold at some points only. */
static void test_replacements_in_any_order(void **state)
{
    (void)state;
    static const char *const facts[] = {"ra >= 3", "rb == ra + 1", "rc == 2*rb", "ra <= 10"};
    static const int orders[][4] = {{0, 1, 2, 3}, {2, 1, 0, 3}, {3, 2, 0, 1}, {1, 2, 3, 0}, {2, 3, 1, 0}};
    static const question qs[] = {
        {"rc >= 8", SG_TRUE},      {"rc <= 22", SG_TRUE},     {"rc == 2*ra + 2", SG_TRUE},
        {"rc % 2 == 0", SG_TRUE},  {"rb > 11", SG_FALSE},     {"rc == 9", SG_FALSE},
        {"rc >= 9", SG_UNKNOWN},   {"rb - ra == 1", SG_TRUE}, {"rc < 2*rb", SG_FALSE},
    };
    for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
        sg_facts *f = base_in_order(facts, orders[o], 4);
        ask_all(f, qs, sizeof qs / sizeof qs[0]);
        sg_interval iv;
        assert_int_equal(sg_facts_range(f, &iv, P("rc")), SG_OK);
        assert_ptr_equal(iv.lo, P("8"));
        assert_ptr_equal(iv.hi, P("22"));
        sg_facts_free(f);
    }
}

/* A linear fact learned before a replacement is rewritten by it: from
 * sa + sb >= 10 and 0 <= sa <= 5, then sb == 2*st + 1 (only sb has a unit
 * coefficient, so sb is replaced), comes 2*st + sa >= 9, so st >= 2 and
 * sb >= 5; st == 2 with sa == 5 is a point, and so is st == 3. */
static void test_fact_before_replacement_is_rewritten(void **state)
{
    (void)state;
    static const char *const facts[] = {"sa >= 0 and sa <= 5", "sa + sb >= 10", "sb == 2*st + 1"};
    static const int orders[][3] = {{0, 1, 2}, {2, 0, 1}, {1, 2, 0}};
    static const question qs[] = {
        {"st >= 2", SG_TRUE},     {"sb >= 5", SG_TRUE},  {"sb % 2 == 1", SG_TRUE},
        {"st >= 3", SG_UNKNOWN},  {"st < 2", SG_FALSE},  {"sb == 2*st + 1", SG_TRUE},
    };
    for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
        sg_facts *f = base_in_order(facts, orders[o], 3);
        ask_all(f, qs, sizeof qs / sizeof qs[0]);
        sg_interval iv;
        assert_int_equal(sg_facts_range(f, &iv, P("st")), SG_OK);
        assert_ptr_equal(iv.lo, P("2"));
        assert_null(iv.hi);
        const sg_expr *r;
        assert_int_equal(sg_facts_simplify(f, &r, P("sb")), SG_OK);
        assert_ptr_equal(r, P("2*st + 1"));
        sg_facts_free(f);
    }
}

/* A replacement that makes an earlier fact solvable: after dk % 4 == 0
 * (dk = 4*k) and dk == dl + 1, dl = 4*k - 1 whichever comes first. */
static void test_replacement_cascade(void **state)
{
    (void)state;
    static const char *const facts[] = {"dk % 4 == 0", "dk == dl + 1", "dl >= 2"};
    static const int orders[][3] = {{0, 1, 2}, {1, 0, 2}, {2, 1, 0}};
    static const question qs[] = {
        {"dl % 4 == 3", SG_TRUE},        {"dk - dl == 1", SG_TRUE}, {"dl % 2 == 0", SG_FALSE},
        {"(dl + 1) % 8 == 0", SG_UNKNOWN}, {"dl >= 3", SG_TRUE},      {"dk >= 4", SG_TRUE},
    };
    for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
        sg_facts *f = base_in_order(facts, orders[o], 3);
        ask_all(f, qs, sizeof qs / sizeof qs[0]);
        sg_facts_free(f);
    }
}

/* An undecided answer is remembered, but a fact that connects to what its
 * proof attempt used settles it: ea <= ec is open under ea <= eb and
 * ed <= ec (and under the unrelated ez >= 5), and true once eb <= ed. */
static void test_undecided_answer_settled_later(void **state)
{
    (void)state;
    sg_facts *f;
    assert_int_equal(sg_facts_new(C, &f), SG_OK);
    assert_int_equal(sg_facts_assume(f, P("ea <= eb")), SG_OK);
    assert_int_equal(sg_facts_assume(f, P("ed <= ec")), SG_OK);
    assert_int_equal(K(f, "ea <= ec"), SG_UNKNOWN);
    assert_int_equal(K(f, "ea <= ec"), SG_UNKNOWN);
    assert_int_equal(sg_facts_assume(f, P("ez >= 5")), SG_OK);
    assert_int_equal(K(f, "ea <= ec"), SG_UNKNOWN);
    assert_int_equal(sg_facts_assume(f, P("eb <= ed")), SG_OK);
    assert_int_equal(K(f, "ea <= ec"), SG_TRUE);
    /* the same through a bound: eu <= 3 and ev >= 4 order them */
    assert_int_equal(K(f, "eu < ev"), SG_UNKNOWN);
    assert_int_equal(sg_facts_assume(f, P("eu <= 3")), SG_OK);
    assert_int_equal(K(f, "eu < ev"), SG_UNKNOWN);
    assert_int_equal(sg_facts_assume(f, P("ev >= 4")), SG_OK);
    assert_int_equal(K(f, "eu < ev"), SG_TRUE);
    /* and through a replacement of a symbol of the question */
    assert_int_equal(K(f, "ew >= 1"), SG_UNKNOWN);
    assert_int_equal(sg_facts_assume(f, P("ew == ea + ez")), SG_OK);
    assert_int_equal(K(f, "ew >= 1"), SG_UNKNOWN); /* ea is not bounded below */
    assert_int_equal(sg_facts_assume(f, P("ea >= -4")), SG_OK);
    assert_int_equal(K(f, "ew >= 1"), SG_TRUE);
    /* and by the question itself becoming a fact */
    assert_int_equal(K(f, "ex != ey"), SG_UNKNOWN);
    assert_int_equal(sg_facts_assume(f, P("ex != ey")), SG_OK);
    assert_int_equal(K(f, "ex != ey"), SG_TRUE);
    assert_int_equal(K(f, "ex == ey"), SG_FALSE);
    sg_facts_free(f);
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

/* The lower bounds as assumed (what the shifted-positivity step reads for
 * each symbol of a question with a product) are an index, not a scan of the
 * facts (issue 19, item 7): the entries examined per question stay the same
 * as unrelated facts grow from 10 to 400. x*y >= 4 and x*y - 2*x - 2*y + 4 >= 0
 * hold for x, y >= 2 (x*y - 4 = X*Y + 2*X + 2*Y for x = X + 2, y = Y + 2;
 * (x - 2)*(y - 2) >= 0), and x*y >= 5 is not implied (x = y = 2). */
static size_t looks_per_question(size_t nfacts)
{
    sg_facts *f;
    assert_int_equal(sg_facts_new(C, &f), SG_OK);
    char t[64];
    for (size_t i = 0; i < nfacts; i++) {
        snprintf(t, sizeof t, "a%zu >= %zu", i, i + 2);
        assert_int_equal(sg_facts_assume(f, P(t)), SG_OK);
    }
    assert_int_equal(sg_facts_assume(f, P("x >= 2")), SG_OK);
    assert_int_equal(sg_facts_assume(f, P("y >= 2")), SG_OK);
    size_t before = f->lower_looks;
    assert_int_equal(K(f, "x*y >= 4"), SG_TRUE);
    assert_int_equal(K(f, "x*y - 2*x - 2*y + 4 >= 0"), SG_TRUE);
    assert_int_equal(K(f, "x*y >= 5"), SG_UNKNOWN);
    size_t looks = f->lower_looks - before;
    sg_facts_free(f);
    return looks;
}

static void test_assumed_lower_is_indexed(void **state)
{
    (void)state;
    size_t small = looks_per_question(10), big = looks_per_question(400);
    assert_true(small > 0);     /* the step ran: one look per symbol and question */
    assert_true(small <= 3 * 2 * 4); /* three questions, two symbols, a few passes each */
    assert_int_equal(big, small); /* not a scan of the 400 facts */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_assume_and_ask),
        cmocka_unit_test(test_copy_is_independent),
        cmocka_unit_test(test_divisibility_symbol_is_stable),
        cmocka_unit_test(test_replacements_in_any_order),
        cmocka_unit_test(test_fact_before_replacement_is_rewritten),
        cmocka_unit_test(test_replacement_cascade),
        cmocka_unit_test(test_undecided_answer_settled_later),
        cmocka_unit_test(test_contradiction),
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_range_of),
        cmocka_unit_test(test_assumed_lower_is_indexed),
    };
    return cmocka_run_group_tests_name("reason", tests, setup, teardown);
}
