/* hop: the output merge of torch.cond (src/hop/hop_private.h), PyTorch's
 * _merge_output. The layout vectors are those of test_merge_output in
 * PyTorch's test/functorch/test_control_flow.py: sizes and strides are
 * constants, and the expected merged sizes and strides name the fresh
 * unbacked symbols u0, u1, ... in the order the merge makes them (dimension
 * by dimension). Each vector runs in an environment of its own, so that its
 * fresh symbols start at u0. Expected forms are compared as printed
 * canonical forms (SG_FMT_SG) of the parsed expectation. */
#include "cmocka_all.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hop/hop_private.h"
#include "shapeguard.h"

static sg_ctx *C;

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

typedef struct {
    sg_env *env;
    sg_tracer *t;
} fx;

static void fstart(fx *F)
{
    sg_env_options o;
    sg_env_options_default(&o);
    assert_int_equal(sg_env_new(C, &o, &F->env), SG_OK);
    assert_int_equal(sg_tracer_new(F->env, &F->t), SG_OK);
}

static void ffinish(fx *F)
{
    sg_tracer_free(F->t);
    sg_env_free(F->env);
}

static const sg_expr *E(const char *text)
{
    const sg_expr *e = NULL;
    if (sg_parse(C, &e, text, NULL) != SG_OK)
        fail_msg("cannot parse %s: %s", text, sg_ctx_last_error_msg(C));
    return e;
}

static const sg_expr *I(long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", v);
    return E(buf);
}

static char *P(const sg_expr *e)
{
    char *s = NULL;
    if (sg_print(C, &s, e, SG_FMT_SG) != SG_OK)
        fail_msg("cannot print: %s", sg_ctx_last_error_msg(C));
    return s;
}

/* got and the parsed want print alike (what: for the message). */
static void expect_expr(const sg_expr *got, const char *want, const char *what, size_t d)
{
    assert_non_null(got);
    char *g = P(got), *w = P(E(want));
    if (strcmp(g, w))
        fail_msg("%s %zu: got %s, expected %s", what, d, g, w);
    sg_free(g);
    sg_free(w);
}

/* One vector of C-T23: sizes and strides of both branches (constants);
 * want_sizes / want_strides the merged layout, "," separated, or NULL where
 * the merge must fail with SG_ESHAPE. */
typedef struct {
    size_t n;
    long asz[8], ast[8], bsz[8], bst[8];
    const char *want_sizes[8];
    const char *want_strides[8];
} vec;

static void run_vec(const vec *v, bool valid)
{
    fx F;
    fstart(&F);
    const sg_expr *asz[8], *ast[8], *bsz[8], *bst[8], *sizes[8] = {0}, *strides[8] = {0};
    for (size_t d = 0; d < v->n; d++) {
        asz[d] = I(v->asz[d]);
        ast[d] = I(v->ast[d]);
        bsz[d] = I(v->bsz[d]);
        bst[d] = I(v->bst[d]);
    }
    sg_status s = sg__hop_merge_layout(F.t, v->n, asz, ast, bsz, bst, sizes, strides);
    if (valid) {
        if (s != SG_OK)
            fail_msg("merge failed (%d): %s", (int)s, sg_ctx_last_error_msg(C));
        for (size_t d = 0; d < v->n; d++)
            expect_expr(sizes[d], v->want_sizes[d], "size", d);
        for (size_t d = 0; d < v->n; d++)
            expect_expr(strides[d], v->want_strides[d], "stride", d);
    } else if (s != SG_ESHAPE) {
        fail_msg("expected SG_ESHAPE, got %d%s%s", (int)s, s ? ": " : "", s ? sg_ctx_last_error_msg(C) : "");
    }
    ffinish(&F);
}

/* ---- C-T23, the valid vectors ---- */

static const vec valid_vecs[] = {
    /* (3,)/(1,) + (4,)/(1,) -> (u0,), (1,) */
    {1, {3}, {1}, {4}, {1}, {"u0"}, {"1"}},
    /* (1,3)/(3,1) + (3,2)/(2,1) -> (u0,u1), (u1,1) */
    {2, {1, 3}, {3, 1}, {3, 2}, {2, 1}, {"u0", "u1"}, {"u1", "1"}},
    /* (2,1)/(1,1) + (7,3)/(3,1) -> (u0,u1), (u1,1) */
    {2, {2, 1}, {1, 1}, {7, 3}, {3, 1}, {"u0", "u1"}, {"u1", "1"}},
    /* (5,5)/(1,5) + (4,5)/(1,4) -> (u0,5), (1,u0) */
    {2, {5, 5}, {1, 5}, {4, 5}, {1, 4}, {"u0", "5"}, {"1", "u0"}},
    /* (7,3,1)/(1,7,1) + (4,3,3)/(3,12,1) -> (u0,3,u1), (u1,u0*u1,1) */
    {3, {7, 3, 1}, {1, 7, 1}, {4, 3, 3}, {3, 12, 1}, {"u0", "3", "u1"}, {"u1", "u0*u1", "1"}},
    /* (5,7,4)/(7,1,35) + (7,4,4)/(4,1,28) -> (u0,u1,4), (u1,1,u0*u1) */
    {3, {5, 7, 4}, {7, 1, 35}, {7, 4, 4}, {4, 1, 28}, {"u0", "u1", "4"}, {"u1", "1", "u0*u1"}},
    /* (1,6,3,2)/(36,1,6,18) + (4,2,2,6)/(24,1,2,4) -> (u0,u1,u2,u3), (u1*u2*u3,1,u1,u1*u2) */
    {4,
     {1, 6, 3, 2},
     {36, 1, 6, 18},
     {4, 2, 2, 6},
     {24, 1, 2, 4},
     {"u0", "u1", "u2", "u3"},
     {"u1*u2*u3", "1", "u1", "u1*u2"}},
    /* (6,1,6,3)/(18,1,1,6) + (2,1,3,4)/(12,1,1,3) -> (u0,1,u1,u2), (u1*u2,1,1,u1) */
    {4, {6, 1, 6, 3}, {18, 1, 1, 6}, {2, 1, 3, 4}, {12, 1, 1, 3}, {"u0", "1", "u1", "u2"}, {"u1*u2", "1", "1", "u1"}},
    /* (3,1,2,4,1)/(8,8,4,1,1) + (2,4,1,4,1)/(16,4,4,1,1) -> (u0,u1,u2,4,1), (4*u1*u2,4*u2,4,1,1) */
    {5,
     {3, 1, 2, 4, 1},
     {8, 8, 4, 1, 1},
     {2, 4, 1, 4, 1},
     {16, 4, 4, 1, 1},
     {"u0", "u1", "u2", "4", "1"},
     {"4*u1*u2", "4*u2", "4", "1", "1"}},
};

/* ---- C-T23, the vectors that must raise ---- */

static const vec invalid_vecs[] = {
    /* (1,)/(1,) + (1,)/(0,) */
    {1, {1}, {1}, {1}, {0}, {0}, {0}},
    /* (1,3)/(1,1) + (5,6)/(6,1) */
    {2, {1, 3}, {1, 1}, {5, 6}, {6, 1}, {0}, {0}},
    /* (2,1)/(1,1) + (7,3)/(1,3) */
    {2, {2, 1}, {1, 1}, {7, 3}, {1, 3}, {0}, {0}},
    /* (5,4)/(4,1) + (5,5)/(1,5) */
    {2, {5, 4}, {4, 1}, {5, 5}, {1, 5}, {0}, {0}},
    /* (7,3,1)/(1,7,1) + (4,3,3)/(9,1,3) */
    {3, {7, 3, 1}, {1, 7, 1}, {4, 3, 3}, {9, 1, 3}, {0}, {0}},
    /* (5,7,4)/(7,1,35) + (7,4,4)/(4,28,1) */
    {3, {5, 7, 4}, {7, 1, 35}, {7, 4, 4}, {4, 28, 1}, {0}, {0}},
    /* (1,6,3,2)/(36,1,6,18) + (4,1,1,6)/(1,4,4,4) */
    {4, {1, 6, 3, 2}, {36, 1, 6, 18}, {4, 1, 1, 6}, {1, 4, 4, 4}, {0}, {0}},
    /* (6,1,6,3)/(18,1,1,6) + (1,1,1,1)/(1,1,1,1) */
    {4, {6, 1, 6, 3}, {18, 1, 1, 6}, {1, 1, 1, 1}, {1, 1, 1, 1}, {0}, {0}},
    /* (6,1,1,6,3)/(3,18,18,18,1) + (5,1,2,1,1)/(2,10,1,10,1) */
    {5, {6, 1, 1, 6, 3}, {3, 18, 18, 18, 1}, {5, 1, 2, 1, 1}, {2, 10, 1, 10, 1}, {0}, {0}},
};

#define NVALID (sizeof valid_vecs / sizeof *valid_vecs)
#define NINVALID (sizeof invalid_vecs / sizeof *invalid_vecs)

static void test_valid(void **state)
{
    run_vec(&valid_vecs[(size_t)(uintptr_t)*state], true);
}

static void test_invalid(void **state)
{
    run_vec(&invalid_vecs[(size_t)(uintptr_t)*state], false);
}

/* ---- sizes: ranges of the fresh symbols, backed symbols ---- */

/* C.3.8's example: [s0,4,s0,5,4,5] against [s1,4,s2,8,4,7] is
 * [u0,4,u1,u2,4,u3], u2 in [5, 8] and u3 in [5, 7]; both contiguous, so the
 * strides merge to the contiguous strides of the merged sizes. */
static void test_sizes_backed_and_ranges(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    const sg_expr *s[3];
    for (int k = 0; k < 3; k++) {
        char src[16];
        snprintf(src, sizeof src, "n%d", k);
        assert_int_equal(sg_env_create_backed(F.env, &s[k], src, I(10 + k), SG_DIM_DYNAMIC, SG_INPUT_SIZE, NULL),
                         SG_OK);
    }
    expect_expr(s[0], "s0", "symbol", 0);
    expect_expr(s[2], "s2", "symbol", 2);
    const sg_expr *asz[6] = {s[0], I(4), s[0], I(5), I(4), I(5)};
    const sg_expr *bsz[6] = {s[1], I(4), s[2], I(8), I(4), I(7)};
    const sg_expr *ast[6], *bst[6], *sizes[6], *strides[6];
    ast[5] = bst[5] = I(1);
    for (int d = 4; d >= 0; d--) {
        assert_int_equal(sg_expr_mul(C, &ast[d], ast[d + 1], asz[d + 1]), SG_OK);
        assert_int_equal(sg_expr_mul(C, &bst[d], bst[d + 1], bsz[d + 1]), SG_OK);
    }
    assert_int_equal(sg__hop_merge_layout(F.t, 6, asz, ast, bsz, bst, sizes, strides), SG_OK);
    static const char *const want[6] = {"u0", "4", "u1", "u2", "4", "u3"};
    static const char *const want_st[6] = {"16*u1*u2*u3", "4*u1*u2*u3", "4*u2*u3", "4*u3", "u3", "1"};
    for (size_t d = 0; d < 6; d++) {
        expect_expr(sizes[d], want[d], "size", d);
        expect_expr(strides[d], want_st[d], "stride", d);
    }
    sg_interval r;
    assert_int_equal(sg_facts_range(sg_env_facts(F.env), &r, sizes[3]), SG_OK);
    expect_expr(r.lo, "5", "u2 low", 3);
    expect_expr(r.hi, "8", "u2 high", 3);
    assert_int_equal(sg_facts_range(sg_env_facts(F.env), &r, sizes[5]), SG_OK);
    expect_expr(r.lo, "5", "u3 low", 5);
    expect_expr(r.hi, "7", "u3 high", 5);
    assert_int_equal(sg_facts_range(sg_env_facts(F.env), &r, sizes[0]), SG_OK); /* hull of [2, oo] and [2, oo] */
    expect_expr(r.lo, "2", "u0 low", 0);
    assert_null(r.hi);
    ffinish(&F);
}

/* An equal size that holds an unbacked symbol is fresh all the same (PR
 * #148206); an equal backed one is kept. */
static void test_sizes_unbacked_equal(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    const sg_expr *u0, *s0;
    assert_int_equal(sg_env_create_unbacked(F.env, &u0, NULL, 1, NULL), SG_OK);
    assert_int_equal(sg_env_create_backed(F.env, &s0, "n", I(5), SG_DIM_DYNAMIC, SG_INPUT_SIZE, NULL), SG_OK);
    const sg_expr *sz[2] = {u0, s0}, *st[2] = {s0, I(1)}, *sizes[2], *strides[2];
    assert_int_equal(sg__hop_merge_layout(F.t, 2, sz, st, sz, st, sizes, strides), SG_OK);
    expect_expr(sizes[0], "u1", "size", 0);
    expect_expr(sizes[1], "s0", "size", 1);
    expect_expr(strides[0], "s0", "stride", 0);
    expect_expr(strides[1], "1", "stride", 1);
    ffinish(&F);
}

/* ---- ints ---- */

/* Equal ints are kept; differing ones become a fresh unbacked symbol over
 * the hull of both (PR #152742); an int holding an unbacked symbol is fresh
 * even where both are the same. */
static void test_ints(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    const sg_expr *out = NULL, *u = NULL;
    assert_int_equal(sg__hop_merge_int(F.t, I(3), I(3), &out), SG_OK);
    expect_expr(out, "3", "int", 0);
    assert_int_equal(sg__hop_merge_int(F.t, I(3), I(7), &out), SG_OK);
    expect_expr(out, "u0", "int", 1);
    sg_interval r;
    assert_int_equal(sg_facts_range(sg_env_facts(F.env), &r, out), SG_OK);
    expect_expr(r.lo, "3", "range low", 1);
    expect_expr(r.hi, "7", "range high", 1);
    assert_int_equal(sg__hop_merge_int(F.t, I(-2), I(0), &out), SG_OK);
    expect_expr(out, "u1", "int", 2);
    const sg_expr *s0;
    assert_int_equal(sg_env_create_backed(F.env, &s0, "n", I(4), SG_DIM_DYNAMIC, 0, NULL), SG_OK);
    assert_int_equal(sg__hop_merge_int(F.t, s0, s0, &out), SG_OK); /* a backed int, the same in both: kept */
    expect_expr(out, "s0", "int", 3);
    assert_int_equal(sg_env_create_unbacked(F.env, &u, NULL, 0, NULL), SG_OK); /* u2 */
    assert_int_equal(sg__hop_merge_int(F.t, u, u, &out), SG_OK);
    expect_expr(out, "u3", "int", 4);
    ffinish(&F);
}

/* Arguments: NULL and too many dimensions are SG_EINVAL. */
static void test_args(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    const sg_expr *one = I(1), *a[1] = {one}, *o[1];
    assert_int_equal(sg__hop_merge_layout(NULL, 1, a, a, a, a, o, o), SG_EINVAL);
    assert_int_equal(sg__hop_merge_layout(F.t, 1, NULL, a, a, a, o, o), SG_EINVAL);
    assert_int_equal(sg__hop_merge_layout(F.t, SG_MAX_DIMS + 1, a, a, a, a, o, o), SG_EINVAL);
    assert_int_equal(sg__hop_merge_layout(F.t, 0, NULL, NULL, NULL, NULL, NULL, NULL), SG_OK);
    assert_int_equal(sg__hop_merge_int(F.t, NULL, one, o), SG_EINVAL);
    ffinish(&F);
}

#define V(i) {"C-T23 valid vector " #i, test_valid, NULL, NULL, (void *)(uintptr_t)(i - 1)}
#define X(i) {"C-T23 invalid vector " #i, test_invalid, NULL, NULL, (void *)(uintptr_t)(i - 1)}

int main(void)
{
    const struct CMUnitTest tests[] = {
        V(1), V(2), V(3), V(4), V(5), V(6), V(7), V(8), V(9),
        X(1), X(2), X(3), X(4), X(5), X(6), X(7), X(8), X(9),
        cmocka_unit_test(test_sizes_backed_and_ranges),
        cmocka_unit_test(test_sizes_unbacked_equal),
        cmocka_unit_test(test_ints),
        cmocka_unit_test(test_args),
    };
    _Static_assert(NVALID == 9 && NINVALID == 9, "C-T23 has nine valid and nine invalid vectors");
    return cmocka_run_group_tests(tests, setup, teardown);
}
