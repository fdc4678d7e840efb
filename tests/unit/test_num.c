/* num: the int64 fast paths agree with exact fmpz arithmetic wherever they
 * answer, answer wherever the exact result fits (except the documented
 * undefined cases), and the fmpz operations follow Python's semantics. */
#include "cmocka_all.h"

#include <stdio.h>
#include <stdlib.h>

#include "num/num.h"

static const int64_t edge[] = {
    INT64_MIN, INT64_MIN + 1, INT64_MIN + 2, -4611686018427387905LL, -4611686018427387904LL,
    -3037000500LL, -3037000499LL, -4294967296LL, -65536, -7, -3, -2, -1, 0, 1, 2, 3, 7, 65536,
    4294967296LL, 3037000499LL, 3037000500LL, 4611686018427387903LL, 4611686018427387904LL,
    INT64_MAX - 2, INT64_MAX - 1, INT64_MAX,
};
#define NEDGE (sizeof edge / sizeof edge[0])

typedef bool (*fast_fn)(int64_t *, int64_t, int64_t);
typedef void (*exact_fn)(fmpz_t, const fmpz_t, const fmpz_t);

static void exact_add(fmpz_t r, const fmpz_t a, const fmpz_t b) { fmpz_add(r, a, b); }
static void exact_sub(fmpz_t r, const fmpz_t a, const fmpz_t b) { fmpz_sub(r, a, b); }
static void exact_mul(fmpz_t r, const fmpz_t a, const fmpz_t b) { fmpz_mul(r, a, b); }

/* Compare a fast path with its exact counterpart on (a, b). */
static void agree(fast_fn fast, exact_fn exact, int64_t a, int64_t b, bool divides)
{
    fmpz_t A, B, R;
    fmpz_init_set_si(A, a);
    fmpz_init_set_si(B, b);
    fmpz_init(R);
    int64_t r = 0;
    bool ok = fast(&r, a, b);
    if (divides && b == 0) {
        assert_false(ok);
    } else {
        exact(R, A, B);
        bool fits = fmpz_fits_si(R);
        if (ok) {
            if (!fmpz_equal_si(R, r))
                fail_msg("fast path wrong for (%lld, %lld): %lld", (long long)a, (long long)b, (long long)r);
        } else if (fits) {
            fail_msg("fast path refused (%lld, %lld) whose result fits", (long long)a, (long long)b);
        }
    }
    fmpz_clear(A);
    fmpz_clear(B);
    fmpz_clear(R);
}

static void each_pair(fast_fn fast, exact_fn exact, bool divides)
{
    for (size_t i = 0; i < NEDGE; i++)
        for (size_t j = 0; j < NEDGE; j++)
            agree(fast, exact, edge[i], edge[j], divides);
    unsigned seed = getenv("SG_TEST_SEED") ? (unsigned)strtoul(getenv("SG_TEST_SEED"), NULL, 10) : 1234u;
    srand(seed);
    for (int k = 0; k < 20000; k++) {
        int64_t a = (int64_t)(((uint64_t)rand() << 40) ^ ((uint64_t)rand() << 20) ^ (uint64_t)rand());
        int64_t b = (k & 1) ? (rand() % 200) - 100 : (int64_t)(((uint64_t)rand() << 33) ^ (uint64_t)rand());
        if (k & 2)
            a = -a;
        agree(fast, exact, a, b, divides);
    }
}

static void test_add_sub_mul(void **state)
{
    (void)state;
    each_pair(sg__i64_add, exact_add, false);
    each_pair(sg__i64_sub, exact_sub, false);
    each_pair(sg__i64_mul, exact_mul, false);
}

static void test_floordiv_mod(void **state)
{
    (void)state;
    each_pair(sg__i64_floordiv, sg__num_floordiv, true);
    each_pair(sg__i64_mod, sg__num_mod, true);
}

static void test_trunc(void **state)
{
    (void)state;
    each_pair(sg__i64_truncdiv, sg__num_truncdiv, true);
    each_pair(sg__i64_truncmod, sg__num_truncmod, true);
}

/* Python: 7 // 2 == 3, -7 // 2 == -4, 7 // -2 == -4, -7 // -2 == 3;
 * 7 % 2 == 1, -7 % 2 == 1, 7 % -2 == -1, -7 % -2 == -1.
 * C: -7 / 2 == -3, -7 % 2 == -1, 7 % -2 == 1. */
static void test_python_semantics(void **state)
{
    (void)state;
    static const int64_t cases[][6] = {
        /* a, b, a//b, a%b, trunc, tmod */
        {7, 2, 3, 1, 3, 1},
        {-7, 2, -4, 1, -3, -1},
        {7, -2, -4, -1, -3, 1},
        {-7, -2, 3, -1, 3, -1},
        {6, 3, 2, 0, 2, 0},
        {-6, 3, -2, 0, -2, 0},
        {0, -5, 0, 0, 0, 0},
        {INT64_MIN, 1, INT64_MIN, 0, INT64_MIN, 0},
        {INT64_MAX, -1, -INT64_MAX, 0, -INT64_MAX, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t q, r, tq, tr;
        assert_true(sg__i64_floordiv(&q, cases[i][0], cases[i][1]));
        assert_true(sg__i64_mod(&r, cases[i][0], cases[i][1]));
        assert_true(sg__i64_truncdiv(&tq, cases[i][0], cases[i][1]));
        assert_true(sg__i64_truncmod(&tr, cases[i][0], cases[i][1]));
        assert_int_equal(q, cases[i][2]);
        assert_int_equal(r, cases[i][3]);
        assert_int_equal(tq, cases[i][4]);
        assert_int_equal(tr, cases[i][5]);
    }
    /* -2**63 // -1 == 2**63 does not fit: the fast path refuses, fmpz answers */
    int64_t q;
    assert_false(sg__i64_floordiv(&q, INT64_MIN, -1));
    assert_false(sg__i64_truncdiv(&q, INT64_MIN, -1));
    assert_true(sg__i64_mod(&q, INT64_MIN, -1));
    assert_int_equal(q, 0);
    fmpz_t a, b, r;
    fmpz_init_set_si(a, INT64_MIN);
    fmpz_init_set_si(b, -1);
    fmpz_init(r);
    sg__num_floordiv(r, a, b);
    char *s = fmpz_get_str(NULL, 10, r);
    assert_string_equal(s, "9223372036854775808");
    flint_free(s);
    /* CeilDiv: ceil(-7 / 2) == -3, ceil(7 / 2) == 4, ceil(7 / -2) == -3 */
    fmpz_set_si(a, -7);
    fmpz_set_si(b, 2);
    sg__num_ceildiv(r, a, b);
    assert_true(fmpz_equal_si(r, -3));
    fmpz_set_si(a, 7);
    sg__num_ceildiv(r, a, b);
    assert_true(fmpz_equal_si(r, 4));
    fmpz_set_si(b, -2);
    sg__num_ceildiv(r, a, b);
    assert_true(fmpz_equal_si(r, -3));
    fmpz_clear(a);
    fmpz_clear(b);
    fmpz_clear(r);
}

static void test_pow_bits(void **state)
{
    (void)state;
    fmpz_t b, e, r;
    fmpz_init_set_ui(b, 2);
    fmpz_init_set_ui(e, 64);
    fmpz_init(r);
    assert_true(sg__num_pow_bits(b, e) >= 65);
    sg__num_pow(r, b, 64);
    char *s = fmpz_get_str(NULL, 10, r);
    assert_string_equal(s, "18446744073709551616");
    flint_free(s);
    fmpz_set_ui(b, 1);
    fmpz_set_str(e, "100000000000000000000000", 10);
    assert_int_equal(sg__num_pow_bits(b, e), 1);
    fmpz_set_ui(b, 3);
    assert_int_equal(sg__num_pow_bits(b, e), UINT64_MAX);
    fmpz_clear(b);
    fmpz_clear(e);
    fmpz_clear(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_sub_mul),
        cmocka_unit_test(test_floordiv_mod),
        cmocka_unit_test(test_trunc),
        cmocka_unit_test(test_python_semantics),
        cmocka_unit_test(test_pow_bits),
    };
    return cmocka_run_group_tests_name("num", tests, NULL, NULL);
}
