/* The minimum s-t cut of the partitioner (src/aot/mincut.c), against an
 * independent oracle: on random networks of up to 9 nodes, the capacity
 * of every cut (each set of nodes with s and without t) is summed by brute
 * force, and the least must be the flow Dinic's algorithm finds (the
 * max-flow min-cut theorem); the source side returned must be a cut of
 * that capacity. Then networks worked out by hand (PyTorch's partitioner
 * shape: nodes split in two, infinite edges), an unbounded cut, bad
 * arguments, and a chain of a million nodes (no recursion). */
#include "cmocka_all.h"

#include <stdlib.h>
#include <string.h>

#include "aot/aot_private.h"
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

typedef struct edge {
    uint32_t u, v;
    int64_t cap;
} edge;

/* The capacity of the cut whose source side is side (SG__FLOW_INF if it
 * takes an infinite edge). */
static int64_t cut_of(const edge *e, size_t m, const uint8_t *side)
{
    int64_t c = 0;
    for (size_t i = 0; i < m; i++)
        if (side[e[i].u] && !side[e[i].v]) {
            if (e[i].cap == SG__FLOW_INF)
                return SG__FLOW_INF;
            c += e[i].cap;
        }
    return c;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void test_random_against_brute_force(void **state)
{
    (void)state;
    for (int trial = 0; trial < 3000; trial++) {
        uint32_t n = 2 + (uint32_t)(next() % 8), s = 0, t = n - 1;
        size_t m = next() % (3 * n);
        edge e[32];
        for (size_t i = 0; i < m; i++) {
            e[i].u = (uint32_t)(next() % n);
            e[i].v = (uint32_t)(next() % n);
            e[i].cap = next() % 10 == 0 ? SG__FLOW_INF : (int64_t)(next() % 21);
        }
        int64_t best = SG__FLOW_INF;
        uint8_t side[16];
        for (uint32_t mask = 0; mask < (1u << (n - 2)); mask++) { /* the nodes between s and t */
            side[s] = 1;
            side[t] = 0;
            for (uint32_t v = 1; v + 1 < n; v++)
                side[v] = (mask >> (v - 1)) & 1;
            int64_t c = cut_of(e, m, side);
            best = c < best ? c : best;
        }
        sg__flow *f;
        assert_int_equal(sg__flow_new(C, n, &f), SG_OK);
        for (size_t i = 0; i < m; i++)
            assert_int_equal(sg__flow_edge(f, e[i].u, e[i].v, e[i].cap), SG_OK);
        int64_t value = -1;
        uint8_t got[16];
        sg_status st = sg__flow_mincut(f, s, t, &value, got);
        if (best == SG__FLOW_INF) {
            assert_int_equal(st, SG_ELIMIT);
        } else {
            assert_int_equal(st, SG_OK);
            assert_int_equal(value, best);
            assert_int_equal(got[s], 1);
            assert_int_equal(got[t], 0);
            assert_int_equal(cut_of(e, m, got), best);
        }
        sg__flow_free(f);
    }
}

/* PyTorch's partitioner's shape: each value v split in v_in -> v_out of
 * capacity its weight; source -> the inputs, the outputs needed by the
 * backward -> sink, infinite; a -> b (uses), infinite. Values: x (input,
 * weight 8), y = f(x) (weight 2), z = g(y) (weight 6) needed by the
 * backward. The cheapest cut saves y (2): the source side is x_in,
 * x_out, y_in. */
static void test_partitioner_shape(void **state)
{
    (void)state;
    enum { SRC, X_IN, X_OUT, Y_IN, Y_OUT, Z_IN, Z_OUT, SINK, N };
    const edge e[] = {{SRC, X_IN, SG__FLOW_INF}, {X_IN, X_OUT, 8}, {X_OUT, Y_IN, SG__FLOW_INF}, {Y_IN, Y_OUT, 2},
                      {Y_OUT, Z_IN, SG__FLOW_INF}, {Z_IN, Z_OUT, 6}, {Z_OUT, SINK, SG__FLOW_INF}};
    sg__flow *f;
    assert_int_equal(sg__flow_new(C, N, &f), SG_OK);
    for (size_t i = 0; i < sizeof e / sizeof *e; i++)
        assert_int_equal(sg__flow_edge(f, e[i].u, e[i].v, e[i].cap), SG_OK);
    int64_t value;
    uint8_t side[N];
    assert_int_equal(sg__flow_mincut(f, SRC, SINK, &value, side), SG_OK);
    assert_int_equal(value, 2);
    const uint8_t want[N] = {1, 1, 1, 1, 0, 0, 0, 0};
    assert_memory_equal(side, want, N);
    sg__flow_free(f);
}

/* Two paths of 3 + 4 with a cross edge: flow 7 (the classic example:
 * s->a 3, s->b 4, a->b 2, a->t 2, b->t 5 gives min(3 + 4, 2 + 5) = 7). */
static void test_by_hand(void **state)
{
    (void)state;
    enum { S, A, B, T };
    sg__flow *f;
    assert_int_equal(sg__flow_new(C, 4, &f), SG_OK);
    assert_int_equal(sg__flow_edge(f, S, A, 3), SG_OK);
    assert_int_equal(sg__flow_edge(f, S, B, 4), SG_OK);
    assert_int_equal(sg__flow_edge(f, A, B, 2), SG_OK);
    assert_int_equal(sg__flow_edge(f, A, T, 2), SG_OK);
    assert_int_equal(sg__flow_edge(f, B, T, 5), SG_OK);
    int64_t value;
    uint8_t side[4];
    assert_int_equal(sg__flow_mincut(f, S, T, &value, side), SG_OK);
    assert_int_equal(value, 7); /* two cuts of 7: {s} | {a, b, t} (3 + 4) and {s, a, b} | {t} (2 + 5) */
    /* networkx's minimum_cut (3.6): the sink's side is what reaches t in the residual network, {t}
       here (a -> t and b -> t are full; a, b and s reach t only through them) */
    const uint8_t want[4] = {1, 1, 1, 0};
    assert_memory_equal(side, want, 4);
    sg__flow_free(f);
    /* no path: flow 0, the source alone */
    assert_int_equal(sg__flow_new(C, 3, &f), SG_OK);
    assert_int_equal(sg__flow_edge(f, 1, 2, 5), SG_OK);
    assert_int_equal(sg__flow_mincut(f, 0, 2, &value, side), SG_OK);
    assert_int_equal(value, 0);
    assert_int_equal(side[0], 1);
    assert_int_equal(side[1], 0);
    sg__flow_free(f);
}

static void test_errors(void **state)
{
    (void)state;
    sg__flow *f;
    int64_t value;
    assert_int_equal(sg__flow_new(C, 3, &f), SG_OK);
    assert_int_equal(sg__flow_edge(f, 0, 3, 1), SG_EINVAL);
    assert_int_equal(sg__flow_edge(f, 0, 1, -1), SG_EINVAL);
    assert_int_equal(sg__flow_edge(f, 0, 1, SG__FLOW_INF + 1), SG_EINVAL);
    assert_int_equal(sg__flow_mincut(f, 0, 0, &value, NULL), SG_EINVAL);
    assert_int_equal(sg__flow_mincut(f, 0, 5, &value, NULL), SG_EINVAL);
    /* a path of infinite edges: unbounded */
    assert_int_equal(sg__flow_edge(f, 0, 1, SG__FLOW_INF), SG_OK);
    assert_int_equal(sg__flow_edge(f, 1, 2, SG__FLOW_INF), SG_OK);
    assert_int_equal(sg__flow_mincut(f, 0, 2, &value, NULL), SG_ELIMIT);
    sg__flow_free(f);
    sg__flow_free(NULL);
}

/* A chain of a million nodes of capacity 1000 - (i mod 997): the flow is
 * the least of them, 4 (at i = 996, 1993 ...); found without recursion. */
static void test_long_chain(void **state)
{
    (void)state;
    const uint32_t n = 1000000;
    sg__flow *f;
    assert_int_equal(sg__flow_new(C, n, &f), SG_OK);
    for (uint32_t i = 0; i + 1 < n; i++)
        assert_int_equal(sg__flow_edge(f, i, i + 1, 1000 - (int64_t)(i % 997)), SG_OK);
    int64_t value;
    uint8_t *side = malloc(n);
    assert_non_null(side);
    assert_int_equal(sg__flow_mincut(f, 0, n - 1, &value, side), SG_OK);
    assert_int_equal(value, 4);
    /* the last edge of capacity 4 is the one cut (i = 997 * 1002 + 996), as networkx cuts a chain
       (checked with a chain of 3,000: it cuts at i = 2990) */
    assert_int_equal(side[999990], 1);
    assert_int_equal(side[999991], 0);
    assert_int_equal(side[996], 1);
    free(side);
    sg__flow_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_against_brute_force),
        cmocka_unit_test(test_partitioner_shape),
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_long_chain),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
