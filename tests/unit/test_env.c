/* env: the shape environment API (env.h), one test per behaviour, with
 * expectations worked out by hand (PyTorch's ShapeEnv where it applies:
 * torch/fx/experimental/symbolic_shapes.py). Broader
 * soundness checking is tests/unit/test_env_fuzz.c. */
#include "cmocka_all.h"

#include <stdio.h>
#include <string.h>

#include "shapeguard.h"

static sg_ctx *C;

/* ---- helpers ------------------------------------------------------------ */

static const sg_expr *P(const char *text)
{
    const sg_expr *e = NULL;
    if (sg_parse(C, &e, text, NULL) != SG_OK)
        fail_msg("cannot parse %s: %s", text, sg_ctx_last_error_msg(C));
    return e;
}

static const sg_expr *I(int64_t v)
{
    const sg_expr *e = NULL;
    assert_int_equal(sg_expr_int(C, &e, v), SG_OK);
    return e;
}

static const char *T(const sg_expr *e)
{
    static char ring[4][512];
    static int k;
    char *s = NULL;
    if (!e)
        return "(null)";
    if (sg_print(C, &s, e, SG_FMT_SG) != SG_OK)
        return "(unprintable)";
    k = (k + 1) % 4;
    snprintf(ring[k], sizeof ring[k], "%s", s);
    sg_free(s);
    return ring[k];
}

static sg_env *new_env(const sg_env_options *o)
{
    sg_env *env = NULL;
    assert_int_equal(sg_env_new(C, o, &env), SG_OK);
    assert_non_null(env);
    return env;
}

static sg_env_options opts(void)
{
    sg_env_options o;
    sg_env_options_default(&o);
    return o;
}

static const sg_expr *backed(sg_env *env, const char *src, int64_t hint, sg_dim_dynamic dyn, int is_size,
                             const sg_interval *range)
{
    const sg_expr *e = NULL;
    sg_status s = sg_env_create_backed(env, &e, src, I(hint), dyn, is_size, range);
    if (s != SG_OK)
        fail_msg("create_backed %s: %s", src, sg_ctx_last_error_msg(C));
    assert_non_null(e);
    return e;
}

static const sg_expr *size(sg_env *env, const char *src, int64_t hint)
{
    return backed(env, src, hint, SG_DIM_DUCK, 1, NULL);
}

static const sg_expr *unbacked(sg_env *env, const char *src, int size_like, const sg_interval *range)
{
    const sg_expr *e = NULL;
    sg_status s = sg_env_create_unbacked(env, &e, src, size_like, range);
    if (s != SG_OK)
        fail_msg("create_unbacked: %s", sg_ctx_last_error_msg(C));
    assert_non_null(e);
    return e;
}

static int EV(sg_env *env, const char *cond)
{
    int out = -1;
    sg_status s = sg_env_evaluate(env, &out, P(cond), NULL);
    if (s != SG_OK)
        fail_msg("evaluate %s: %s", cond, sg_ctx_last_error_msg(C));
    return out;
}

static sg_truth KN(sg_env *env, const char *cond)
{
    sg_truth t = SG_UNKNOWN;
    assert_int_equal(sg_env_known(env, &t, P(cond)), SG_OK);
    return t;
}

static const sg_expr *REPL(sg_env *env, const char *e)
{
    const sg_expr *r = NULL;
    assert_int_equal(sg_env_replace(env, &r, P(e)), SG_OK);
    return r;
}

static void expect_range(sg_env *env, const sg_expr *e, const char *lo, const char *hi)
{
    sg_interval iv;
    assert_int_equal(sg_facts_range(sg_env_facts(env), &iv, e), SG_OK);
    if ((lo ? iv.lo != P(lo) : iv.lo != NULL) || (hi ? iv.hi != P(hi) : iv.hi != NULL))
        fail_msg("range of %s is [%s, %s], expected [%s, %s]", T(e), iv.lo ? T(iv.lo) : "-oo",
                 iv.hi ? T(iv.hi) : "oo", lo ? lo : "-oo", hi ? hi : "oo");
}

/* sg_env_produce_guards equals the set of items (texts over source names). */
static void expect_guards(sg_env *env, const char *const *want, size_t nwant)
{
    const sg_expr **items = NULL;
    size_t n = 0;
    assert_int_equal(sg_env_produce_guards(env, &items, &n), SG_OK);
    char got[2048] = "";
    for (size_t i = 0; i < n; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? "; " : "", T(items[i]));
    int ok = 1;
    for (size_t i = 0; i < nwant && ok; i++) {
        const sg_expr *w = P(want[i]);
        int found = 0;
        for (size_t k = 0; k < n; k++)
            found |= items[k] == w;
        ok = found;
    }
    for (size_t k = 0; k < n && ok; k++) {
        int found = 0;
        for (size_t i = 0; i < nwant; i++)
            found |= items[k] == P(want[i]);
        ok = found;
    }
    sg_free(items);
    if (!ok) {
        char exp[2048] = "";
        for (size_t i = 0; i < nwant; i++)
            snprintf(exp + strlen(exp), sizeof exp - strlen(exp), "%s%s", i ? "; " : "", T(P(want[i])));
        fail_msg("guard set is {%s}, expected {%s}", got, exp);
    }
}
#define GUARDS(env, ...)                                                                \
    do {                                                                                \
        static const char *const want_[] = {__VA_ARGS__};                               \
        expect_guards(env, want_, sizeof want_ / sizeof want_[0]);                      \
    } while (0)

/* The conjunction of the guard set at the given source values: 1, 0, or -1
 * when an item cannot be evaluated (a symbol that is no source, say). */
static int guards_hold(sg_env *env, size_t n, const char *const *names, const int64_t *vals)
{
    const sg_expr **items = NULL, *syms[8], *vs[8];
    size_t ni = 0;
    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(sg_expr_sym(C, &syms[i], names[i]), SG_OK);
        vs[i] = I(vals[i]);
    }
    assert_int_equal(sg_env_produce_guards(env, &items, &ni), SG_OK);
    int r = 1;
    for (size_t i = 0; i < ni && r == 1; i++) {
        const sg_expr *v = NULL;
        if (sg_expr_eval(C, &v, items[i], n, syms, vs) != SG_OK)
            r = -1;
        else if (sg_expr_op(v) != SG_OP_TRUE)
            r = 0;
    }
    sg_free(items);
    return r;
}

/* The state a failed call must leave alone. */
typedef struct env_state {
    size_t nguards, nasserts, npending, nfacts, ignored;
} env_state;

static env_state get_state(sg_env *env)
{
    env_state s = {sg_env_nguards(env), sg_env_nasserts(env), sg_env_npending(env),
               sg_facts_count(sg_env_facts(env)), sg_env_ignored_guards(env)};
    return s;
}

static void expect_state(sg_env *env, env_state before)
{
    env_state now = get_state(env);
    assert_int_equal(now.nguards, before.nguards);
    assert_int_equal(now.nasserts, before.nasserts);
    assert_int_equal(now.npending, before.npending);
    assert_int_equal(now.nfacts, before.nfacts);
    assert_int_equal(now.ignored, before.ignored);
}

/* A failed call: the code, a message, and nothing changed (next_s and next_u,
 * the names the next symbols would get, still unused). */
#define EXPECT_ERR(env, code, call, next_s, next_u)                                     \
    do {                                                                                \
        env_state st_ = get_state(env);                                                     \
        sg_ctx_reset_error(C);                                                          \
        assert_int_equal((call), (code));                                               \
        assert_true(strlen(sg_ctx_last_error_msg(C)) > 0);                              \
        expect_state(env, st_);                                                         \
        assert_null(sg_env_symbol(env, next_s));                                        \
        assert_null(sg_env_symbol(env, next_u));                                        \
    } while (0)

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

/* For tests that depend on the order in which the context made its nodes: a
 * context of their own (put back even when the test fails). */
static sg_ctx *group_ctx;

static int fresh_ctx(void **state)
{
    (void)state;
    group_ctx = C;
    return sg_ctx_new(&C) == SG_OK ? 0 : -1;
}

static int group_ctx_back(void **state)
{
    (void)state;
    sg_ctx_free(C);
    C = group_ctx;
    return 0;
}

/* ---- options and symbols ------------------------------------------------ */

static void test_options_default(void **state)
{
    (void)state;
    sg_env_options o;
    memset(&o, 0x5a, sizeof o);
    sg_env_options_default(&o);
    assert_int_equal(o.duck_shape, 1);
    assert_int_equal(o.specialize_zero_one, 1);
    assert_int_equal(o.assume_static_by_default, 0);
    assert_int_equal(o.prefer_runtime_asserts, 0);
    assert_int_equal(o.guard_limit, 0);
    assert_int_equal(o.freeze_mode, SG_FREEZE_ERROR);
    sg_env_options_default(NULL); /* harmless */
    /* NULL options are the defaults: duck sizing and 0/1 specialization on */
    sg_env *env = new_env(NULL);
    assert_ptr_equal(size(env, "a", 5), size(env, "b", 5));
    assert_ptr_equal(size(env, "c", 1), I(1));
    assert_int_equal(sg_env_nguards(env), 0);
    assert_int_equal(sg_env_nasserts(env), 0);
    assert_int_equal(sg_env_npending(env), 0);
    assert_int_equal(sg_env_ignored_guards(env), 0);
    assert_non_null(sg_env_facts(env));
    sg_env_free(env);
}

static void test_backed_symbols_are_numbered(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    const sg_expr *a = backed(env, "a", 5, SG_DIM_DYNAMIC, 1, NULL);
    const sg_expr *b = backed(env, "b", 6, SG_DIM_DYNAMIC, 1, NULL);
    const sg_expr *c = backed(env, "c", -4, SG_DIM_DYNAMIC, 0, NULL);
    assert_ptr_equal(a, P("s0"));
    assert_ptr_equal(b, P("s1"));
    assert_ptr_equal(c, P("s2"));
    assert_ptr_equal(sg_env_symbol(env, "s0"), a);
    assert_ptr_equal(sg_env_symbol(env, "s2"), c);
    assert_null(sg_env_symbol(env, "s3"));
    assert_null(sg_env_symbol(env, "u0"));
    assert_null(sg_env_symbol(env, "a")); /* sources are not symbol names */
    /* an input that becomes a constant takes no number */
    assert_ptr_equal(backed(env, "d", 9, SG_DIM_STATIC, 1, NULL), I(9));
    assert_ptr_equal(size(env, "e", 1), I(1));
    assert_ptr_equal(backed(env, "f", 8, SG_DIM_DYNAMIC, 1, NULL), P("s3"));
    /* nor does an unbacked one take an s-number */
    assert_ptr_equal(unbacked(env, NULL, 0, NULL), P("u0"));
    assert_ptr_equal(unbacked(env, NULL, 1, NULL), P("u1"));
    assert_ptr_equal(backed(env, "g", 10, SG_DIM_DYNAMIC, 1, NULL), P("s4"));
    assert_int_equal(sg_env_nguards(env), 0);
    sg_env_free(env);
}

static void test_duck_sizing(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    const sg_expr *x = size(env, "x", 5), *y = size(env, "y", 5), *z = size(env, "z", 6);
    assert_ptr_equal(x, y); /* equal hints share a symbol */
    assert_ptr_not_equal(x, z);
    assert_int_equal(EV(env, "s0 == s0"), 1);
    assert_int_equal(sg_env_nguards(env), 0);
    /* DYNAMIC never reuses, even with duck sizing on */
    assert_ptr_equal(backed(env, "w", 5, SG_DIM_DYNAMIC, 1, NULL), P("s2"));
    GUARDS(env, "y == x", "x >= 2", "z >= 2", "w >= 2");
    sg_env_free(env);
}

/* Only symbols made by duck sizing are reused (PyTorch registers a symbol in
 * val_to_var only "if duck"; a range constraint makes an input DYNAMIC): a
 * DYNAMIC or ranged input keeps its symbol to itself. */
static void test_duck_sizing_reuses_duck_symbols_only(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    assert_ptr_equal(backed(env, "x", 5, SG_DIM_DYNAMIC, 1, NULL), P("s0"));
    assert_ptr_equal(size(env, "y", 5), P("s1"));
    sg_interval r = {I(2), I(6)};
    assert_ptr_equal(backed(env, "z", 6, SG_DIM_DUCK, 1, &r), P("s2"));
    assert_ptr_equal(size(env, "w", 6), P("s3"));
    assert_ptr_equal(size(env, "v", 5), P("s1")); /* the duck symbol of 5 */
    GUARDS(env, "x >= 2", "y >= 2", "v == y", "z >= 2", "z <= 6", "w >= 2");
    sg_env_free(env);
}

static void test_duck_sizing_off(void **state)
{
    (void)state;
    sg_env_options o = opts();
    o.duck_shape = 0;
    sg_env *env = new_env(&o);
    const sg_expr *x = size(env, "x", 5), *y = size(env, "y", 5);
    assert_ptr_equal(x, P("s0"));
    assert_ptr_equal(y, P("s1"));
    /* x == y then needs a guard (PyTorch: 1 guard with duck_shape=False) */
    assert_int_equal(EV(env, "s0 == s1"), 1);
    assert_int_equal(sg_env_nguards(env), 1);
    assert_int_equal(KN(env, "s0 == s1"), SG_TRUE);
    GUARDS(env, "x == y", "x >= 2");
    sg_env_free(env);
}

static void test_zero_one_specialization(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    assert_ptr_equal(size(env, "z", 1), I(1));
    assert_ptr_equal(backed(env, "w", 0, SG_DIM_DYNAMIC, 1, NULL), I(0));
    /* plain integers are not specialized */
    const sg_expr *k = backed(env, "k", 1, SG_DIM_DYNAMIC, 0, NULL);
    assert_ptr_equal(k, P("s0"));
    expect_range(env, k, NULL, NULL);
    /* sizes start at 2, so a != 1 and a > 0 need no guard */
    const sg_expr *a = size(env, "a", 5);
    expect_range(env, a, "2", NULL);
    assert_int_equal(EV(env, "s1 != 1"), 1);
    assert_int_equal(EV(env, "s1 > 0"), 1);
    assert_int_equal(EV(env, "s1 != 0"), 1);
    assert_int_equal(sg_env_nguards(env), 0);
    GUARDS(env, "z == 1", "w == 0", "a >= 2");
    sg_env_free(env);
}

static void test_zero_one_specialization_off(void **state)
{
    (void)state;
    sg_env_options o = opts();
    o.specialize_zero_one = 0;
    sg_env *env = new_env(&o);
    const sg_expr *z = size(env, "z", 1);
    assert_ptr_equal(z, P("s0"));
    expect_range(env, z, "0", NULL);
    const sg_expr *a = size(env, "a", 5);
    expect_range(env, a, "0", NULL);
    /* a != 1 is no longer implied: one guard (PyTorch test 45) */
    assert_int_equal(EV(env, "s1 != 1"), 1);
    assert_int_equal(sg_env_nguards(env), 1);
    assert_int_equal(EV(env, "s0 != 1"), 0);
    assert_int_equal(sg_env_nguards(env), 2);
    assert_ptr_equal(REPL(env, "s0"), I(1));
    sg_env_free(env);
}

static void test_static(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    assert_ptr_equal(backed(env, "n", 7, SG_DIM_STATIC, 1, NULL), I(7));
    assert_ptr_equal(backed(env, "k", -3, SG_DIM_STATIC, 0, NULL), I(-3));
    assert_null(sg_env_symbol(env, "s0"));
    assert_int_equal(sg_env_nguards(env), 0);
    GUARDS(env, "n == 7", "k == -3");
    sg_env_free(env);
}

static void test_assume_static_by_default(void **state)
{
    (void)state;
    sg_env_options o = opts();
    o.assume_static_by_default = 1;
    sg_env *env = new_env(&o);
    assert_ptr_equal(size(env, "x", 7), I(7));          /* DUCK: a constant */
    assert_ptr_equal(backed(env, "y", 7, SG_DIM_DYNAMIC, 1, NULL), P("s0")); /* DYNAMIC: still a symbol */
    GUARDS(env, "x == 7", "y >= 2");
    sg_env_free(env);
}

static void test_unbacked_inputs(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    const sg_expr *a = backed(env, "a", 5, SG_DIM_SIZE_LIKE_UNBACKED, 1, NULL);
    const sg_expr *b = backed(env, "b", 1, SG_DIM_OBLIVIOUS_SIZE, 1, NULL);
    assert_ptr_equal(a, P("u0"));
    assert_ptr_equal(b, P("u1")); /* not 0/1-specialized */
    assert_null(sg_env_symbol(env, "s0"));
    assert_int_equal(sg_env_npending(env), 0); /* bound by their sources */
    assert_int_equal(sg_env_check_pending(env), SG_OK);
    expect_range(env, a, "0", NULL);
    expect_range(env, b, "0", NULL);
    const sg_expr *h = NULL;
    assert_int_equal(sg_env_hint(env, &h, a), SG_EDATADEP);
    assert_int_equal(sg_env_hint(env, &h, b), SG_EDATADEP);
    assert_int_equal(EV(env, "u0 >= 0"), 1); /* size-like */
    int out = -1;
    assert_int_equal(sg_env_evaluate(env, &out, P("u0 == 5"), NULL), SG_EDATADEP);
    assert_int_equal(sg_env_nguards(env), 0);
    GUARDS(env, "a >= 0", "b >= 0");
    sg_env_free(env);
}

/* OBLIVIOUS_SIZE inputs: a question they alone leave undecided is answered
 * at their hints when raising each hint to at least 2 gives the same answer
 * (PyTorch's counterfactual), and the answer is guarded; otherwise it is
 * data-dependent. Values by hand: a = 5, b = 1 (b counts as 2). */
static void test_oblivious_counterfactual(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    const sg_expr *a = backed(env, "a", 5, SG_DIM_OBLIVIOUS_SIZE, 1, NULL);
    const sg_expr *b = backed(env, "b", 1, SG_DIM_OBLIVIOUS_SIZE, 1, NULL);
    const sg_expr *n = size(env, "n", 7);
    assert_ptr_equal(a, P("u0"));
    assert_ptr_equal(b, P("u1"));
    assert_ptr_equal(n, P("s0"));
    int out = -1;
    /* a > 3: 5 > 3 and max(2, 5) > 3: true, guarded */
    assert_int_equal(EV(env, "u0 > 3"), 1);
    assert_int_equal(sg_env_nguards(env), 1);
    /* a + n == 12 (backed n at its hint 7): true */
    assert_int_equal(EV(env, "u0 + s0 == 12"), 1);
    /* b >= 3: 1 >= 3 and 2 >= 3 are both false: false, guarded as b <= 2 */
    assert_int_equal(EV(env, "u1 >= 3"), 0);
    assert_int_equal(sg_env_nguards(env), 3);
    /* b == 1: true at 1, false at 2: data-dependent, nothing recorded */
    assert_int_equal(sg_env_evaluate(env, &out, P("u1 == 1"), NULL), SG_EDATADEP);
    assert_int_equal(sg_env_nguards(env), 3);
    /* the same for integers and hints: 2*b + a is 7 at 1 but 9 at 2 */
    const sg_expr *v = NULL;
    assert_int_equal(sg_env_evaluate_int(env, &v, P("2*u1 + u0"), NULL), SG_EDATADEP);
    assert_int_equal(sg_env_hint(env, &v, P("2*u1 + u0")), SG_EDATADEP);
    assert_int_equal(sg_env_hint(env, &v, P("u0*s0")), SG_OK);
    assert_ptr_equal(v, I(35));
    assert_int_equal(sg_env_evaluate_int(env, &v, P("u0 + 1"), NULL), SG_OK);
    assert_ptr_equal(v, I(6)); /* and a is now 5: the guard u0 + 1 == 6 */
    assert_int_equal(KN(env, "u0 == 5"), SG_TRUE);
    /* guard_or keeps its fallback and records nothing */
    assert_int_equal(sg_env_guard_or(env, &out, P("u1 <= 1"), 0, NULL), SG_OK);
    assert_int_equal(out, 0);
    /* a plain SIZE_LIKE_UNBACKED input has no counterfactual */
    backed(env, "c", 5, SG_DIM_SIZE_LIKE_UNBACKED, 1, NULL);
    assert_int_equal(sg_env_evaluate(env, &out, P("u2 > 3"), NULL), SG_EDATADEP);
    /* a + n == 12 replaced a by 12 - n, so a + 1 == 6 made n 7 and a 5: the
     * input equalities say so, and they imply a >= 4 and n >= 2 */
    GUARDS(env, "a == 5", "n == 7", "b <= 2", "b >= 0", "c >= 0");
    sg_env_free(env);
}

/* stable_names: symbols of inputs named after their sources, whatever the
 * order of creation. */
static void test_stable_names(void **state)
{
    (void)state;
    sg_env_options o = opts();
    o.stable_names = 1;
    sg_env *env = new_env(&o);
    assert_ptr_equal(size(env, "L['x'].size()[0]", 8), P("s_L_x_size_0"));
    assert_ptr_equal(size(env, "L['x'].size()[1]", 8), P("s_L_x_size_0")); /* duck sizing */
    assert_ptr_equal(backed(env, "n", 3, SG_DIM_DYNAMIC, 0, NULL), P("s_n"));
    assert_ptr_equal(backed(env, "n!", 4, SG_DIM_DYNAMIC, 0, NULL), P("s_n_2")); /* s_n is taken */
    assert_ptr_equal(unbacked(env, "L['y'].item()", 1, NULL), P("u_L_y_item"));
    assert_ptr_equal(unbacked(env, NULL, 0, NULL), P("u1")); /* no source: numbered */
    assert_ptr_equal(backed(env, "w", 6, SG_DIM_OBLIVIOUS_SIZE, 1, NULL), P("u_w"));
    assert_ptr_equal(sg_env_symbol(env, "s_n_2"), P("s_n_2"));
    assert_int_equal(EV(env, "s_L_x_size_0 == s_n + 5"), 1);
    sg_env_free(env);
    /* the other order gives the same names */
    env = new_env(&o);
    assert_ptr_equal(backed(env, "n", 3, SG_DIM_DYNAMIC, 0, NULL), P("s_n"));
    assert_ptr_equal(size(env, "L['x'].size()[0]", 8), P("s_L_x_size_0"));
    sg_env_free(env);
}

static void test_user_ranges(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    sg_interval r1 = {I(2), I(64)}, r2 = {I(-10), I(10)}, r3 = {I(0), I(8)}, r4 = {NULL, I(100)};
    const sg_expr *x = backed(env, "x", 5, SG_DIM_DYNAMIC, 1, &r1);
    const sg_expr *y = backed(env, "y", 9, SG_DIM_DYNAMIC, 0, &r2);
    const sg_expr *z = backed(env, "z", 5, SG_DIM_DYNAMIC, 1, &r3);
    const sg_expr *w = backed(env, "w", -50, SG_DIM_DYNAMIC, 0, &r4);
    expect_range(env, x, "2", "64");
    expect_range(env, y, "-10", "10");
    expect_range(env, z, "2", "8"); /* the size range [2, oo] narrowed */
    expect_range(env, w, NULL, "100");
    assert_int_equal(KN(env, "s1 <= 10"), SG_TRUE);
    assert_int_equal(KN(env, "s2 >= 9"), SG_FALSE);
    /* the hint itself may be a bound */
    sg_interval r5 = {I(3), I(3)};
    assert_ptr_equal(backed(env, "v", 3, SG_DIM_DYNAMIC, 0, &r5), P("s4"));
    /* unbacked symbols take ranges too */
    sg_interval r6 = {I(3), I(9)};
    const sg_expr *u = unbacked(env, NULL, 0, &r6);
    expect_range(env, u, "3", "9");
    assert_int_equal(KN(env, "u0 != 2"), SG_TRUE);
    assert_int_equal(KN(env, "u0 > 5"), SG_UNKNOWN);
    sg_interval r7 = {I(-5), I(5)};
    expect_range(env, unbacked(env, NULL, 1, &r7), "0", "5");
    assert_int_equal(sg_env_nguards(env), 0);
    GUARDS(env, "x >= 2", "x <= 64", "y >= -10", "y <= 10", "z >= 2", "z <= 8", "w <= 100", "v >= 3", "v <= 3");
    sg_env_free(env);
}

/* ---- questions -------------------------------------------------------- */

static void test_evaluate_records_guards(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "x", 10);
    int out = -1;
    const char *prov = NULL;
    assert_int_equal(sg_env_evaluate(env, &out, P("s0 > 4"), "line 1"), SG_OK);
    assert_int_equal(out, 1);
    assert_int_equal(sg_env_nguards(env), 1);
    assert_ptr_equal(sg_env_guard(env, 0, &prov), P("s0 >= 5"));
    assert_string_equal(prov, "line 1");
    /* implied by s0 >= 5: no guard */
    assert_int_equal(sg_env_evaluate(env, &out, P("s0 != 3"), "line 2"), SG_OK);
    assert_int_equal(out, 1);
    assert_int_equal(sg_env_nguards(env), 1);
    /* false at the hint: the negation is the guard */
    assert_int_equal(sg_env_evaluate(env, &out, P("s0 > 12"), "line 3"), SG_OK);
    assert_int_equal(out, 0);
    assert_int_equal(sg_env_nguards(env), 2);
    assert_ptr_equal(sg_env_guard(env, 1, &prov), P("s0 <= 12"));
    assert_string_equal(prov, "line 3");
    /* no provenance: "" */
    assert_int_equal(sg_env_evaluate(env, &out, P("s0 == 10"), NULL), SG_OK);
    assert_int_equal(out, 1);
    assert_int_equal(sg_env_nguards(env), 3);
    assert_non_null(sg_env_guard(env, 2, &prov));
    assert_string_equal(prov, "");
    assert_null(sg_env_guard(env, 3, &prov));
    assert_non_null(sg_env_guard(env, 0, NULL)); /* provenance pointer optional */
    /* now everything about s0 is settled */
    assert_int_equal(EV(env, "s0 * 2 == 20"), 1);
    assert_int_equal(sg_env_nguards(env), 3);
    sg_env_free(env);
}

static void test_evaluate_int(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "x", 4);
    const sg_expr *v = NULL;
    /* provable: Min(s0, 1) is 1 for s0 >= 2, no guard */
    assert_int_equal(sg_env_evaluate_int(env, &v, P("Min(s0, 1)"), NULL), SG_OK);
    assert_ptr_equal(v, I(1));
    assert_int_equal(sg_env_evaluate_int(env, &v, P("s0 - s0 + 3"), NULL), SG_OK);
    assert_ptr_equal(v, I(3));
    assert_int_equal(sg_env_nguards(env), 0);
    /* hinted: the value with the guard e == v */
    assert_int_equal(sg_env_evaluate_int(env, &v, P("2*s0 + 1"), "int"), SG_OK);
    assert_ptr_equal(v, I(9));
    assert_int_equal(sg_env_nguards(env), 1);
    const char *prov = NULL;
    assert_ptr_equal(sg_env_guard(env, 0, &prov), P("2*s0 + 1 == 9"));
    assert_string_equal(prov, "int");
    /* which pins s0 */
    assert_ptr_equal(REPL(env, "s0"), I(4));
    assert_int_equal(sg_env_evaluate_int(env, &v, P("s0 * s0"), NULL), SG_OK);
    assert_ptr_equal(v, I(16));
    assert_int_equal(sg_env_nguards(env), 1);
    /* PyTorch test 26: int(s) on a hint-2 symbol records Eq(s, 2) */
    sg_env *e2 = new_env(NULL);
    size(e2, "t", 2);
    assert_int_equal(sg_env_evaluate_int(e2, &v, P("s0"), NULL), SG_OK);
    assert_ptr_equal(v, I(2));
    assert_int_equal(sg_env_nguards(e2), 1);
    assert_ptr_equal(sg_env_guard(e2, 0, NULL), P("s0 == 2"));
    sg_env_free(e2);
    sg_env_free(env);
}

static void test_evaluate_int_data_dependent(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    unbacked(env, NULL, 0, NULL);
    const sg_expr *v = NULL;
    EXPECT_ERR(env, SG_EDATADEP, sg_env_evaluate_int(env, &v, P("u0 + 1"), NULL), "s0", "u1");
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "u0"));
    sg_env_free(env);
}

static void test_guard_or(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "x", 7);
    unbacked(env, NULL, 0, NULL);
    int out = -1;
    /* unbacked: the fallback, nothing recorded */
    assert_int_equal(sg_env_guard_or(env, &out, P("u0 == 0"), 0, NULL), SG_OK);
    assert_int_equal(out, 0);
    assert_int_equal(sg_env_guard_or(env, &out, P("u0 == 0"), 1, NULL), SG_OK);
    assert_int_equal(out, 1);
    assert_int_equal(sg_env_guard_or(env, &out, P("u0 != 0"), 0, NULL), SG_OK);
    assert_int_equal(out, 0);
    assert_int_equal(sg_env_nguards(env), 0);
    assert_int_equal(sg_env_nasserts(env), 0);
    /* backed: guards as evaluate does, whatever the fallback */
    assert_int_equal(sg_env_guard_or(env, &out, P("s0 > 3"), 0, "g1"), SG_OK);
    assert_int_equal(out, 1);
    assert_int_equal(sg_env_guard_or(env, &out, P("s0 > 9"), 1, "g2"), SG_OK);
    assert_int_equal(out, 0);
    assert_int_equal(sg_env_nguards(env), 2);
    const char *prov = NULL;
    assert_ptr_equal(sg_env_guard(env, 0, &prov), P("s0 >= 4"));
    assert_string_equal(prov, "g1");
    assert_ptr_equal(sg_env_guard(env, 1, &prov), P("s0 <= 9"));
    assert_string_equal(prov, "g2");
    /* provable beats the fallback */
    assert_int_equal(sg_env_check(env, P("u0 >= 3"), NULL), SG_OK);
    assert_int_equal(sg_env_guard_or(env, &out, P("u0 > 0"), 0, NULL), SG_OK);
    assert_int_equal(out, 1);
    assert_int_equal(sg_env_guard_or(env, &out, P("u0 < 0"), 1, NULL), SG_OK);
    assert_int_equal(out, 0);
    assert_int_equal(sg_env_nguards(env), 2);
    /* any nonzero fallback is guard_or_true */
    assert_int_equal(sg_env_guard_or(env, &out, P("u0 == 5"), 7, NULL), SG_OK);
    assert_int_equal(out, 1);
    sg_env_free(env);
}

static void test_guard_size_oblivious(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    const sg_expr *u = unbacked(env, NULL, 1, NULL);
    unbacked(env, NULL, 0, NULL);
    int out = -1;
    /* a size-like u counts as >= 2 for the proof */
    assert_int_equal(sg_env_guard_size_oblivious(env, &out, P("u0 != 1"), NULL), SG_OK);
    assert_int_equal(out, 1);
    assert_int_equal(sg_env_guard_size_oblivious(env, &out, P("u0 > 0"), NULL), SG_OK);
    assert_int_equal(out, 1);
    assert_int_equal(sg_env_guard_size_oblivious(env, &out, P("u0 == 0"), NULL), SG_OK);
    assert_int_equal(out, 0);
    assert_int_equal(sg_env_nguards(env), 0);
    assert_int_equal(sg_env_nasserts(env), 0);
    /* ... only for that question: u is still in [0, oo] */
    expect_range(env, u, "0", NULL);
    assert_int_equal(KN(env, "u0 != 1"), SG_UNKNOWN);
    EXPECT_ERR(env, SG_EDATADEP, sg_env_evaluate(env, &out, P("u0 != 1"), NULL), "s0", "u2");
    EXPECT_ERR(env, SG_EDATADEP, sg_env_evaluate(env, &out, P("u0 > 0"), NULL), "s0", "u2");
    /* not for symbols that are not size-like */
    EXPECT_ERR(env, SG_EDATADEP, sg_env_guard_size_oblivious(env, &out, P("u1 != 1"), NULL), "s0", "u2");
    /* and it does not settle what u >= 2 leaves open */
    EXPECT_ERR(env, SG_EDATADEP, sg_env_guard_size_oblivious(env, &out, P("u0 != 5"), NULL), "s0", "u2");
    /* on backed symbols it guards as evaluate does */
    size(env, "x", 6);
    assert_int_equal(sg_env_guard_size_oblivious(env, &out, P("s0 > 4"), "so"), SG_OK);
    assert_int_equal(out, 1);
    assert_int_equal(sg_env_nguards(env), 1);
    assert_ptr_equal(sg_env_guard(env, 0, NULL), P("s0 >= 5"));
    sg_env_free(env);
}

/* Where the facts already say u <= 1, assuming u >= 2 for the proof is a
 * contradiction, from which anything follows: the two answers below must not
 * both be "true". */
static void test_size_oblivious_never_contradicts(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    unbacked(env, NULL, 1, NULL);
    assert_int_equal(sg_env_check(env, P("u0 <= 1"), NULL), SG_OK);
    int a = -1, b = -1;
    sg_status sa = sg_env_guard_size_oblivious(env, &a, P("u0 == 0"), NULL);
    sg_status sb = sg_env_guard_size_oblivious(env, &b, P("u0 != 0"), NULL);
    if (sa == SG_OK && sb == SG_OK && a == b)
        fail_msg("guard_size_oblivious answers %d to both u0 == 0 and u0 != 0", a);
    sg_env_free(env);
}

static void test_known_records_nothing(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "x", 10);
    unbacked(env, NULL, 0, NULL);
    env_state before = get_state(env);
    assert_int_equal(KN(env, "s0 >= 2"), SG_TRUE);
    assert_int_equal(KN(env, "s0 < 0"), SG_FALSE);
    assert_int_equal(KN(env, "s0 > 5"), SG_UNKNOWN);
    assert_int_equal(KN(env, "u0 == 0"), SG_UNKNOWN);
    assert_int_equal(KN(env, "true"), SG_TRUE);
    assert_int_equal(KN(env, "false"), SG_FALSE);
    expect_state(env, before);
    /* a question asked later still needs its guard */
    assert_int_equal(EV(env, "s0 > 5"), 1);
    assert_int_equal(sg_env_nguards(env), 1);
    /* PyTorch test 41: sym(2), sym(3), sym(4): static answers, no guards
     * (PyTorch also proves s1*s2 > s2; this engine answers unknown there) */
    sg_env *e = new_env(NULL);
    size(e, "a", 2);
    size(e, "b", 3);
    size(e, "c", 4);
    assert_int_equal(KN(e, "(s1 + s1) % 2 == 0"), SG_TRUE);
    assert_int_equal(KN(e, "(s1 + s1) % 2 == 1"), SG_FALSE);
    assert_int_equal(KN(e, "s1*s2 >= 4"), SG_TRUE);
    assert_int_equal(KN(e, "s0 == s1"), SG_UNKNOWN);
    assert_int_equal(KN(e, "s0 + s0 == s2"), SG_UNKNOWN);
    assert_int_equal(sg_env_nguards(e), 0);
    sg_env_free(e);
    sg_env_free(env);
}

/* ---- checks ----------------------------------------------------------- */

static void test_check_provably_false(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "x", 10);
    EXPECT_ERR(env, SG_EASSERT, sg_env_check(env, P("s0 < 0"), "x must be negative"), "s1", "u0");
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "x must be negative"));
    unbacked(env, NULL, 0, NULL);
    assert_int_equal(sg_env_check(env, P("u0 > 4"), NULL), SG_OK);
    EXPECT_ERR(env, SG_EASSERT, sg_env_check(env, P("u0 < 2"), NULL), "s1", "u1");
    /* provably true: nothing */
    env_state before = get_state(env);
    assert_int_equal(sg_env_check(env, P("u0 >= 5"), NULL), SG_OK);
    assert_int_equal(sg_env_check(env, P("s0 >= 2"), NULL), SG_OK);
    expect_state(env, before);
    sg_env_free(env);
}

static void test_check_backed(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "x", 10);
    /* false at the hint: an assertion error, nothing recorded */
    EXPECT_ERR(env, SG_EASSERT, sg_env_check(env, P("s0 > 100"), "too small"), "s1", "u0");
    EXPECT_ERR(env, SG_EASSERT, sg_env_check(env, P("s0 < 3 or s0 > 50"), NULL), "s1", "u0");
    /* true at the hint: a guard, with the message as provenance */
    assert_int_equal(sg_env_check(env, P("s0 > 5"), "big enough"), SG_OK);
    assert_int_equal(sg_env_nguards(env), 1);
    assert_int_equal(sg_env_nasserts(env), 0);
    const char *prov = NULL;
    assert_ptr_equal(sg_env_guard(env, 0, &prov), P("s0 >= 6"));
    assert_string_equal(prov, "big enough");
    /* an equality ties inputs (PyTorch: expect(a == 2*b)) */
    sg_env *e = new_env(NULL);
    size(e, "a", 16);
    size(e, "b", 8);
    assert_int_equal(sg_env_check(e, P("s0 == 2*s1"), NULL), SG_OK);
    assert_ptr_equal(REPL(e, "s0"), P("2*s1"));
    GUARDS(e, "a == 2*b", "b >= 2");
    sg_env_free(e);
    sg_env_free(env);
}

static void test_check_unbacked_is_a_runtime_assertion(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "s", 5);
    unbacked(env, NULL, 0, NULL);
    assert_int_equal(sg_env_check(env, P("u0 < s0"), "u below s"), SG_OK);
    assert_int_equal(sg_env_nguards(env), 0);
    assert_int_equal(sg_env_nasserts(env), 1);
    const char *msg = NULL;
    assert_ptr_equal(sg_env_assert(env, 0, &msg), P("u0 < s0"));
    assert_string_equal(msg, "u below s");
    assert_null(sg_env_assert(env, 1, &msg));
    /* used for later questions (PyTorch test 35), without guards */
    assert_int_equal(EV(env, "u0 < s0"), 1);
    assert_int_equal(EV(env, "u0 != s0"), 1);
    assert_int_equal(EV(env, "u0 > s0"), 0);
    assert_int_equal(EV(env, "u0 >= s0"), 0);
    assert_int_equal(sg_env_nguards(env), 0);
    /* NULL message: "" */
    assert_int_equal(sg_env_check(env, P("u0 != -7"), NULL), SG_OK);
    assert_non_null(sg_env_assert(env, 1, &msg));
    assert_string_equal(msg, "");
    /* an equality settles the symbol (PyTorch test 34) */
    unbacked(env, NULL, 0, NULL);
    assert_int_equal(sg_env_check(env, P("u1 == 0"), NULL), SG_OK);
    assert_ptr_equal(REPL(env, "u1"), I(0));
    assert_int_equal(EV(env, "u1 == 0"), 1);
    /* over two unbacked symbols (PyTorch test 36) */
    unbacked(env, NULL, 0, NULL);
    unbacked(env, NULL, 0, NULL);
    assert_int_equal(sg_env_check(env, P("u2 + u3 == 10"), NULL), SG_OK);
    assert_int_equal(EV(env, "u2 + u3 == 10"), 1);
    assert_int_equal(sg_env_nguards(env), 0);
    assert_int_equal(sg_env_nasserts(env), 4);
    sg_env_free(env);
}

static void test_prefer_runtime_asserts(void **state)
{
    (void)state;
    sg_env_options o = opts();
    o.prefer_runtime_asserts = 1;
    sg_env *env = new_env(&o);
    size(env, "x", 2);
    /* PyTorch test 27: expect(s == 2) is a runtime assertion, no guard */
    assert_int_equal(sg_env_check(env, P("s0 == 2"), "two"), SG_OK);
    assert_int_equal(sg_env_nguards(env), 0);
    assert_int_equal(sg_env_nasserts(env), 1);
    const char *msg = NULL;
    assert_ptr_equal(sg_env_assert(env, 0, &msg), P("s0 == 2"));
    assert_string_equal(msg, "two");
    assert_int_equal(EV(env, "s0 == 2"), 1);
    assert_int_equal(sg_env_nguards(env), 0);
    /* evaluate still guards (guard_int still records Eq(s, 2)) */
    sg_env *e = new_env(&o);
    size(e, "y", 2);
    const sg_expr *v = NULL;
    assert_int_equal(sg_env_evaluate_int(e, &v, P("s0"), NULL), SG_OK);
    assert_ptr_equal(v, I(2));
    assert_int_equal(sg_env_nguards(e), 1);
    assert_int_equal(sg_env_nasserts(e), 0);
    /* provably false is still refused */
    EXPECT_ERR(e, SG_EASSERT, sg_env_check(e, P("s0 == 3"), NULL), "s1", "u0");
    sg_env_free(e);
    sg_env_free(env);
}

/* ---- freezing and the guard limit --------------------------------------- */

static void test_freeze_error(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "x", 10);
    assert_int_equal(EV(env, "s0 > 3"), 1);
    sg_env_freeze(env);
    int out = -1;
    const sg_expr *v = NULL;
    EXPECT_ERR(env, SG_EASSERT, sg_env_evaluate(env, &out, P("s0 > 5"), NULL), "s1", "u0");
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "frozen"));
    EXPECT_ERR(env, SG_EASSERT, sg_env_evaluate_int(env, &v, P("s0"), NULL), "s1", "u0");
    EXPECT_ERR(env, SG_EASSERT, sg_env_guard_or(env, &out, P("s0 < 50"), 0, NULL), "s1", "u0");
    EXPECT_ERR(env, SG_EASSERT, sg_env_check(env, P("s0 < 50"), NULL), "s1", "u0");
    /* what needs no guard is still answered */
    assert_int_equal(EV(env, "s0 > 1"), 1);
    assert_int_equal(EV(env, "s0 > 2"), 1);
    assert_int_equal(sg_env_nguards(env), 1);
    assert_int_equal(sg_env_ignored_guards(env), 0);
    sg_env_free(env);
}

static void test_freeze_ignore(void **state)
{
    (void)state;
    sg_env_options o = opts();
    o.freeze_mode = SG_FREEZE_IGNORE;
    sg_env *env = new_env(&o);
    size(env, "x", 10);
    sg_env_freeze(env);
    const sg_expr *v = NULL;
    assert_int_equal(EV(env, "s0 > 3"), 1);
    assert_int_equal(sg_env_ignored_guards(env), 1);
    assert_int_equal(EV(env, "s0 > 4"), 1); /* s0 >= 4 was not learned */
    assert_int_equal(sg_env_ignored_guards(env), 2);
    assert_int_equal(sg_env_evaluate_int(env, &v, P("s0"), NULL), SG_OK);
    assert_ptr_equal(v, I(10));
    assert_int_equal(sg_env_ignored_guards(env), 3);
    assert_int_equal(sg_env_check(env, P("s0 < 50"), NULL), SG_OK);
    assert_int_equal(sg_env_ignored_guards(env), 4);
    assert_int_equal(EV(env, "s0 > 1"), 1); /* provable: nothing to ignore */
    assert_int_equal(sg_env_ignored_guards(env), 4);
    assert_int_equal(sg_env_nguards(env), 0);
    assert_int_equal(KN(env, "s0 > 3"), SG_UNKNOWN);
    sg_env_free(env);
}

static void test_guard_limit_specializes(void **state)
{
    (void)state;
    sg_env_options o = opts();
    o.guard_limit = 2;
    sg_env *env = new_env(&o);
    size(env, "x", 10);
    size(env, "y", 7);
    assert_int_equal(EV(env, "s0 > 3"), 1);
    assert_int_equal(EV(env, "s0 < 50"), 1);
    assert_ptr_equal(REPL(env, "s0"), P("s0")); /* two guards: at the limit */
    assert_int_equal(EV(env, "s0 != 7"), 1);  /* a third: past it */
    assert_int_equal(sg_env_nguards(env), 4);
    assert_ptr_equal(sg_env_guard(env, 3, NULL), P("s0 == 10"));
    assert_ptr_equal(REPL(env, "s0"), I(10));
    assert_ptr_equal(REPL(env, "s1"), P("s1")); /* the other symbol is untouched */
    GUARDS(env, "x == 10", "y >= 2");
    sg_env_free(env);
}

/* ---- unbacked bookkeeping ---------------------------------------------- */

static void test_pending_unbacked(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    const sg_expr *x = size(env, "x", 4);
    assert_int_equal(sg_env_check_pending(env), SG_OK);
    const sg_expr *u0 = unbacked(env, NULL, 0, NULL), *u1 = unbacked(env, "out", 1, NULL);
    assert_int_equal(sg_env_npending(env), 2);
    assert_ptr_equal(sg_env_pending(env, 0), u0);
    assert_ptr_equal(sg_env_pending(env, 1), u1);
    assert_null(sg_env_pending(env, 2));
    EXPECT_ERR(env, SG_EINVAL, sg_env_check_pending(env), "s1", "u2");
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "u0"));
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "u1"));
    assert_int_equal(sg_env_bind_unbacked(env, u0, ".size()[0]"), SG_OK);
    assert_int_equal(sg_env_npending(env), 1);
    assert_ptr_equal(sg_env_pending(env, 0), u1);
    EXPECT_ERR(env, SG_EINVAL, sg_env_check_pending(env), "s1", "u2");
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "u1"));
    assert_null(strstr(sg_ctx_last_error_msg(C), "u0"));
    /* only a pending unbacked symbol can be bound */
    EXPECT_ERR(env, SG_EINVAL, sg_env_bind_unbacked(env, u0, ".size()[1]"), "s1", "u2");
    EXPECT_ERR(env, SG_EINVAL, sg_env_bind_unbacked(env, x, ".size()[1]"), "s1", "u2");
    EXPECT_ERR(env, SG_EINVAL, sg_env_bind_unbacked(env, I(3), ".size()[1]"), "s1", "u2");
    EXPECT_ERR(env, SG_EINVAL, sg_env_bind_unbacked(env, P("foreign"), ".size()[1]"), "s1", "u2");
    assert_int_equal(sg_env_bind_unbacked(env, u1, ".item()"), SG_OK);
    assert_int_equal(sg_env_npending(env), 0);
    assert_null(sg_env_pending(env, 0));
    assert_int_equal(sg_env_check_pending(env), SG_OK);
    sg_env_free(env);
}

static void test_rename_unbacked(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    const sg_expr *u0 = unbacked(env, NULL, 1, NULL);
    assert_int_equal(sg_env_bind_unbacked(env, u0, ".size()[0]"), SG_OK);
    assert_int_equal(sg_env_check(env, P("u0 >= 3"), NULL), SG_OK);
    /* the op traced again yields u1 for the same value: u1 := u0 */
    const sg_expr *u1 = unbacked(env, NULL, 1, NULL);
    assert_int_equal(KN(env, "u1 >= 3"), SG_UNKNOWN);
    assert_int_equal(sg_env_rename_unbacked(env, u1, u0), SG_OK);
    assert_ptr_equal(REPL(env, "u1"), u0);
    assert_ptr_equal(REPL(env, "u0"), u0);
    assert_int_equal(KN(env, "u0 == u1"), SG_TRUE);
    assert_int_equal(KN(env, "u1 >= 3"), SG_TRUE); /* what was known of u0 */
    assert_int_equal(sg_env_nguards(env), 0);
    /* not two distinct unbacked symbols */
    const sg_expr *x = size(env, "x", 5);
    EXPECT_ERR(env, SG_EINVAL, sg_env_rename_unbacked(env, u0, u0), "s1", "u2");
    EXPECT_ERR(env, SG_EINVAL, sg_env_rename_unbacked(env, x, u0), "s1", "u2");
    EXPECT_ERR(env, SG_EINVAL, sg_env_rename_unbacked(env, u0, x), "s1", "u2");
    EXPECT_ERR(env, SG_EINVAL, sg_env_rename_unbacked(env, P("foreign"), u0), "s1", "u2");
    /* values that cannot be equal */
    const sg_expr *a = unbacked(env, NULL, 0, NULL), *b = unbacked(env, NULL, 0, NULL);
    assert_int_equal(sg_env_check(env, P("u2 == 1"), NULL), SG_OK);
    assert_int_equal(sg_env_check(env, P("u3 == 2"), NULL), SG_OK);
    EXPECT_ERR(env, SG_EINVAL, sg_env_rename_unbacked(env, b, a), "s1", "u4");
    assert_int_equal(KN(env, "u2 == 1"), SG_TRUE);
    sg_env_free(env);
}

/* An unbacked symbol the trace made is never replaced by an expression of
 * another one, made before or after it (PyTorch's _maybe_guard_rel: only
 * unbacked inputs may stand in an unbacked symbol's value, the time-travel
 * hazard; test_dynamic_shapes' u0 == u1*4 keeps u0). Here the node u1 also
 * exists before the environment makes u0, so that neither the order of the
 * nodes nor that of creation decides. The equality is still known. */
static void test_unbacked_order_is_creation_order(void **state)
{
    (void)state; /* runs in a fresh context */
    P("u1 + 1"); /* a caller's expression mentioning u1, made first */
    sg_env *env = new_env(NULL);
    const sg_expr *u0 = unbacked(env, NULL, 0, NULL);
    const sg_expr *u1 = unbacked(env, NULL, 0, NULL);
    assert_int_equal(sg_env_check(env, P("u0 == u1 + 1"), NULL), SG_OK);
    assert_ptr_equal(REPL(env, "u0"), u0);
    assert_ptr_equal(REPL(env, "u1"), u1);
    assert_int_equal(KN(env, "u1 == u0 - 1"), SG_TRUE);
    assert_int_equal(sg_env_check(env, P("u1 == u0"), NULL), SG_EASSERT); /* u0 == u1 + 1 says otherwise */
    sg_env_free(env);
}

/* Which symbol an equality replaces (PyTorch's _maybe_guard_rel, worked out
 * by hand from symbolic_shapes.py; issue 18 item 6). A runtime assertion
 * between an unbacked symbol the trace made and an expression of backed
 * symbols replaces the unbacked one, whichever side it is written on
 * (trivial_lhs / trivial_rhs), and the assertion stays. */
static void test_assert_replaces_unbacked_by_backed(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    const sg_expr *x = size(env, "x", 5), *y = size(env, "y", 3);
    const sg_expr *u0 = unbacked(env, NULL, 0, NULL), *u1 = unbacked(env, NULL, 0, NULL);
    assert_int_equal(sg_env_check(env, P("s0 == u0"), "m"), SG_OK);
    assert_ptr_equal(REPL(env, "u0"), x);
    assert_ptr_equal(REPL(env, "s0"), x);
    /* u1 + 1 == s0 + s1 is solved for u1 (sorted first: it has no hint) */
    assert_int_equal(sg_env_check(env, P("u1 + 1 == s0 + s1"), "m"), SG_OK);
    assert_ptr_equal(REPL(env, "u1"), P("s0 + s1 - 1"));
    assert_ptr_equal(REPL(env, "s1"), y);
    assert_int_equal(sg_env_nasserts(env), 2);
    assert_ptr_equal(sg_env_assert(env, 0, NULL), P("s0 == u0"));
    assert_int_equal(sg_env_nguards(env), 0);
    sg_env_free(env);
}

/* No replacement from an equality with a floor division (PyTorch raises
 * NotImplementedError inside _maybe_guard_rel and skips it), nor of an
 * unbacked symbol by an expression of another one the trace made; the
 * fact is known all the same. An unbacked input may stand in. */
static void test_assert_replacements_refused(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "x", 12);
    const sg_expr *u0 = unbacked(env, NULL, 0, NULL), *u1 = unbacked(env, NULL, 0, NULL);
    const sg_expr *u2 = unbacked(env, NULL, 0, NULL);
    assert_int_equal(sg_env_check(env, P("u0 == s0 // 2"), "m"), SG_OK);
    assert_ptr_equal(REPL(env, "u0"), u0);
    assert_int_equal(KN(env, "u0 >= 1"), SG_TRUE);
    assert_int_equal(sg_env_check(env, P("u1 == u2"), "m"), SG_OK);
    assert_ptr_equal(REPL(env, "u1"), u1);
    assert_ptr_equal(REPL(env, "u2"), u2);
    assert_int_equal(KN(env, "u2 - u1 == 0"), SG_TRUE);
    /* an unbacked input (mark_unbacked): a later trace-made symbol is replaced by it */
    const sg_expr *in = unbacked(env, "L['n']", 1, NULL), *u4 = unbacked(env, NULL, 0, NULL);
    assert_int_equal(sg_env_check(env, P("u3 == u4"), "m"), SG_OK);
    assert_ptr_equal(REPL(env, "u4"), in);
    assert_ptr_equal(REPL(env, "u3"), in);
    (void)u4;
    sg_env_free(env);
}

/* _maybe_guard_rel leaves an equality of more than 5 free symbols alone. */
static void test_no_replacement_past_five_symbols(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "a", 2);
    size(env, "b", 3);
    size(env, "c", 4);
    size(env, "d", 5);
    size(env, "e", 6);
    const sg_expr *u0 = unbacked(env, NULL, 0, NULL), *u1 = unbacked(env, NULL, 0, NULL);
    assert_int_equal(sg_env_check(env, P("u0 == s0 + s1 + s2 + s3 + s4"), "m"), SG_OK); /* 6 symbols */
    assert_ptr_equal(REPL(env, "u0"), u0);
    assert_int_equal(KN(env, "u0 >= 10"), SG_TRUE);
    assert_int_equal(sg_env_check(env, P("u1 == s0 + s1 + s2 + s3"), "m"), SG_OK); /* 5 symbols */
    assert_ptr_equal(REPL(env, "u1"), P("s0 + s1 + s2 + s3"));
    (void)u1;
    sg_env_free(env);
}

/* Between backed symbols PyTorch solves for the first of
 * sorted(free, key=(hint, name), reverse=True) alone: the larger hint, then
 * the name later in string order (s9 before s10); when that one cannot be
 * isolated, nothing is replaced. */
static void test_guard_replaces_first_in_pytorch_order(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    const sg_expr *x = size(env, "x", 5), *y = size(env, "y", 4);
    (void)x;
    assert_int_equal(EV(env, "s0 - 1 == s1"), 1); /* x[1:] + y: s0 has the larger hint */
    assert_ptr_equal(REPL(env, "s0"), P("s1 + 1"));
    assert_ptr_equal(REPL(env, "s1"), y);
    sg_env_free(env);

    env = new_env(NULL);
    size(env, "x", 4);
    y = size(env, "y", 8);
    assert_int_equal(EV(env, "2*s0 == s1"), 1); /* s1 first: s1 := 2*s0 */
    assert_ptr_equal(REPL(env, "s1"), P("2*s0"));
    sg_env_free(env);

    env = new_env(NULL);
    size(env, "x", 6);
    size(env, "y", 4);
    assert_int_equal(EV(env, "2*s0 == 3*s1"), 1); /* s0 first, s0 = 3*s1/2 is no integer: none */
    assert_ptr_equal(REPL(env, "s0"), P("s0"));
    assert_ptr_equal(REPL(env, "s1"), P("s1"));
    assert_int_equal(KN(env, "2*s0 == 3*s1"), SG_TRUE);
    sg_env_free(env);

    /* equal hints (no duck sizing): by name, and s9 comes after s10 */
    sg_env_options o = opts();
    o.duck_shape = 0;
    env = new_env(&o);
    char src[16];
    for (int i = 0; i < 11; i++) {
        snprintf(src, sizeof src, "t%d", i);
        size(env, src, i == 9 || i == 10 ? 50 : 100 + i);
    }
    assert_int_equal(EV(env, "s9 == s10"), 1);
    assert_ptr_equal(REPL(env, "s9"), P("s10"));
    assert_ptr_equal(REPL(env, "s10"), P("s10"));
    assert_int_equal(EV(env, "s1 == s2 - 1"), 1); /* hints 101, 102: s2 := s1 + 1 */
    assert_ptr_equal(REPL(env, "s2"), P("s1 + 1"));
    sg_env_free(env);
}

/* After the guard s0 % 2 == 0 (hint 4), s0*s1 == 2*(s0 // 2)*s1 is known
 * without a guard (issue 18 item 7: the view x.view(2, s0 // 2, s1) asks
 * it; PyTorch's simplify writes s0 // 2 as an exact division where
 * Mod(s0, 2) is in its divisible set). Only for that divisor, and only for
 * a remainder 0 (PyTorch's _maybe_guard_rel adds Mod(x, d) to divisible
 * only when it is 0): there PyTorch records the guard, and so do we. */
static void test_divisibility_proves_products(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "x", 4);
    size(env, "y", 3);
    assert_int_equal(EV(env, "s0 % 2 == 0"), 1);
    assert_int_equal(sg_env_nguards(env), 1);
    assert_int_equal(KN(env, "s0*s1 == 2*(s0 // 2)*s1"), SG_TRUE);
    assert_int_equal(EV(env, "s0*s1 == 2*(s0 // 2)*s1"), 1);
    assert_int_equal(KN(env, "s0*s1*s1 != 2*(s0 // 2)*s1*s1"), SG_FALSE);
    assert_int_equal(KN(env, "s0*s1 == 4*(s0 // 4)*s1"), SG_UNKNOWN); /* 4 need not divide s0 */
    assert_int_equal(sg_env_nguards(env), 1);
    sg_env_free(env);

    env = new_env(NULL); /* 4 divides s0: s0 // 2 is exact, but PyTorch knows Mod(s0, 4) only */
    size(env, "x", 8);
    size(env, "y", 3);
    assert_int_equal(EV(env, "s0 % 4 == 0"), 1);
    assert_int_equal(KN(env, "s0*s1 == 4*(s0 // 4)*s1"), SG_TRUE);
    assert_int_equal(KN(env, "s0*s1 == 2*(s0 // 2)*s1"), SG_UNKNOWN);
    sg_env_free(env);

    env = new_env(NULL); /* a remainder other than 0: no divisibility fact */
    size(env, "x", 7);
    size(env, "y", 3);
    assert_int_equal(EV(env, "s0 % 3 == 1"), 1);
    assert_int_equal(KN(env, "s0*s1 == 3*s1*(s0 // 3) + s1"), SG_UNKNOWN);
    assert_int_equal(EV(env, "s0*s1 == 3*s1*(s0 // 3) + s1"), 1);
    assert_int_equal(sg_env_nguards(env), 2);
    sg_env_free(env);
}

/* produce_guards' text, the one both a listing of the guards and a guard
 * set's failure message use: an input equality with its source first, a
 * range of one symbol on one line (its two items share it), and the sides
 * as the text writes them. */
static void test_produce_guards_text(void **state)
{
    (void)state;
    sg_interval r = {I(2), I(6)};
    sg_env *env = new_env(NULL);
    size(env, "L['x'].size()[0]", 4);
    size(env, "L['y'].size()[0]", 4); /* duck sizing: y is s0 */
    backed(env, "L['z'].size()[0]", 5, SG_DIM_DUCK, 1, &r);
    assert_int_equal(EV(env, "s1 * s0 >= 10"), 1);
    const sg_expr **items, **sides;
    char **texts;
    size_t n;
    assert_int_equal(sg_env_produce_guards_text(env, 0, &items, &texts, &sides, &n), SG_OK);
    static const char *const want[] = {
        "L['y'].size()[0] == L['x'].size()[0]",
        "L['x'].size()[0]*L['z'].size()[0] >= 10",
        "2 <= L['x'].size()[0]",
        "2 <= L['z'].size()[0] and L['z'].size()[0] <= 6",
        "2 <= L['z'].size()[0] and L['z'].size()[0] <= 6",
    };
    assert_int_equal(n, 5);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(texts[i], want[i]);
    const sg_expr *sx, *sy, *sz; /* the sources' symbols */
    assert_int_equal(sg_expr_sym(C, &sx, "L['x'].size()[0]"), SG_OK);
    assert_int_equal(sg_expr_sym(C, &sy, "L['y'].size()[0]"), SG_OK);
    assert_int_equal(sg_expr_sym(C, &sz, "L['z'].size()[0]"), SG_OK);
    assert_ptr_equal(sides[0], sy);
    assert_ptr_equal(sides[1], sx);
    assert_null(sides[2]);
    assert_null(sides[3]);
    assert_ptr_equal(sides[4], I(2));
    assert_ptr_equal(sides[5], sx);
    assert_ptr_equal(sides[6], I(2));
    assert_ptr_equal(sides[7], sz);
    assert_ptr_equal(sides[8], sz);
    assert_ptr_equal(sides[9], I(6));
    sg_env_free_guard_texts(texts, n);
    sg_free(items);
    sg_free(sides);
    /* sides not wanted; bad arguments */
    assert_int_equal(sg_env_produce_guards_text(env, 0, &items, &texts, NULL, &n), SG_OK);
    assert_int_equal(n, 5);
    sg_env_free_guard_texts(texts, n);
    sg_free(items);
    assert_int_equal(sg_env_produce_guards_text(env, 0, NULL, &texts, NULL, &n), SG_EINVAL);
    assert_int_equal(sg_env_produce_guards_text(NULL, 0, &items, &texts, NULL, &n), SG_EINVAL);
    sg_env_free_guard_texts(NULL, 3);
    sg_env_free(env);
}

/* ---- marks and copies -------------------------------------------------- */

static void test_marks(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "x", 10);
    const sg_expr *p = unbacked(env, NULL, 0, NULL); /* pending at the mark */
    assert_int_equal(EV(env, "s0 > 3"), 1);
    sg_env_mark m;
    sg_env_mark_take(env, &m);
    env_state at_mark = get_state(env);
    assert_int_equal(at_mark.npending, 1);
    /* symbols, guards, assertions, a binding, made after the mark */
    assert_ptr_equal(size(env, "y", 7), P("s1"));
    assert_ptr_equal(unbacked(env, "z", 0, NULL), P("u1"));
    assert_int_equal(EV(env, "s0 > 5"), 1);
    assert_int_equal(EV(env, "s1 < s0"), 1);
    assert_int_equal(sg_env_check(env, P("u1 > 2"), NULL), SG_OK);
    assert_int_equal(sg_env_bind_unbacked(env, p, ".item()"), SG_OK);
    assert_int_equal(KN(env, "s0 > 5"), SG_TRUE);
    assert_int_equal(sg_env_nguards(env), 3);
    assert_int_equal(sg_env_nasserts(env), 1);
    sg_env_mark later, again;
    sg_env_mark_take(env, &later);
    sg_env_mark_take(env, &again);
    assert_int_equal(sg_env_mark_same(&later, &again), 1); /* nothing learned between them */
    assert_int_equal(sg_env_mark_same(&m, &later), 0);
    assert_int_equal(sg_env_mark_same(NULL, &later), 0);
    assert_int_equal(sg_env_mark_same(&later, NULL), 0);

    assert_int_equal(sg_env_mark_restore(env, &m), SG_OK);
    sg_env_mark back;
    sg_env_mark_take(env, &back); /* the state at m again, but after a restore: not m's */
    assert_int_equal(sg_env_mark_same(&m, &back), 0);
    expect_state(env, at_mark);
    assert_ptr_equal(sg_env_pending(env, 0), p); /* unbound again */
    assert_null(sg_env_symbol(env, "s1"));
    assert_null(sg_env_symbol(env, "u1"));
    /* questions answered as before the mark */
    assert_int_equal(KN(env, "s0 > 3"), SG_TRUE);
    assert_int_equal(KN(env, "s0 > 5"), SG_UNKNOWN);
    GUARDS(env, "x >= 4");
    /* the names are used again, and the sources are free again */
    assert_ptr_equal(size(env, "y", 8), P("s1"));
    assert_ptr_equal(unbacked(env, "z", 0, NULL), P("u1"));
    const sg_expr *h = NULL;
    assert_int_equal(sg_env_hint(env, &h, P("s1")), SG_OK);
    assert_ptr_equal(h, I(8)); /* the new s1, not the forgotten one */
    /* a mark taken after the one restored is no longer valid */
    EXPECT_ERR(env, SG_EINVAL, sg_env_mark_restore(env, &later), "s2", "u2");
    /* restoring the same mark again is fine */
    assert_int_equal(sg_env_mark_restore(env, &m), SG_OK);
    expect_state(env, at_mark);
    assert_null(sg_env_symbol(env, "s1"));
    sg_env_free(env);
}

static void test_mark_restores_freezing(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "x", 10);
    sg_env_mark m;
    sg_env_mark_take(env, &m);
    sg_env_freeze(env);
    int out = -1;
    assert_int_equal(sg_env_evaluate(env, &out, P("s0 > 4"), NULL), SG_EASSERT);
    assert_int_equal(sg_env_mark_restore(env, &m), SG_OK);
    assert_int_equal(EV(env, "s0 > 4"), 1); /* not frozen any more */
    assert_int_equal(sg_env_nguards(env), 1);
    sg_env_free(env);
}

/* A rename made after a mark is forgotten with it, pending state included. */
static void test_mark_restores_pending_after_rename(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    const sg_expr *u0 = unbacked(env, NULL, 0, NULL), *u1 = unbacked(env, NULL, 0, NULL);
    assert_int_equal(sg_env_bind_unbacked(env, u0, ".item()"), SG_OK);
    assert_int_equal(sg_env_npending(env), 1);
    sg_env_mark m;
    sg_env_mark_take(env, &m);
    assert_int_equal(sg_env_rename_unbacked(env, u0, u1), SG_OK);
    assert_int_equal(sg_env_mark_restore(env, &m), SG_OK);
    assert_int_equal(KN(env, "u0 == u1"), SG_UNKNOWN);
    assert_int_equal(sg_env_npending(env), 1);
    assert_ptr_equal(sg_env_pending(env, 0), u1);
    sg_env_free(env);
}

static void test_copy_is_independent(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "x", 10);
    unbacked(env, NULL, 0, NULL);
    assert_int_equal(EV(env, "s0 > 3"), 1);
    assert_int_equal(sg_env_check(env, P("u0 > 1"), "m"), SG_OK);
    sg_env *c = NULL;
    assert_int_equal(sg_env_copy(&c, env), SG_OK);
    assert_non_null(c);
    /* the same records (PyTorch test 48: the copy has the guard) */
    assert_int_equal(sg_env_nguards(c), 1);
    assert_ptr_equal(sg_env_guard(c, 0, NULL), sg_env_guard(env, 0, NULL));
    assert_int_equal(sg_env_nasserts(c), 1);
    assert_int_equal(sg_env_npending(c), 1);
    assert_ptr_equal(sg_env_symbol(c, "s0"), P("s0"));
    assert_int_equal(KN(c, "s0 > 3"), SG_TRUE);
    /* a guard in the copy does not reach the original ... */
    assert_int_equal(EV(c, "s0 < 20"), 1);
    assert_int_equal(sg_env_nguards(c), 2);
    assert_int_equal(sg_env_nguards(env), 1);
    assert_int_equal(KN(env, "s0 < 20"), SG_UNKNOWN);
    /* ... nor the reverse */
    assert_int_equal(EV(env, "s0 != 15"), 1);
    assert_int_equal(sg_env_nguards(env), 2);
    assert_int_equal(sg_env_nguards(c), 2);
    assert_int_equal(KN(c, "s0 != 15"), SG_UNKNOWN);
    /* symbols, bindings, options */
    assert_ptr_equal(size(c, "y", 4), P("s1"));
    assert_null(sg_env_symbol(env, "s1"));
    assert_int_equal(sg_env_bind_unbacked(c, P("u0"), ".item()"), SG_OK);
    assert_int_equal(sg_env_npending(c), 0);
    assert_int_equal(sg_env_npending(env), 1);
    /* the source y is free in the original */
    assert_ptr_equal(size(env, "y", 6), P("s1"));
    /* the copy outlives the original */
    sg_env_free(env);
    assert_int_equal(EV(c, "s0 < 20"), 1);
    assert_int_equal(sg_env_nguards(c), 2);
    GUARDS(c, "x >= 4", "x <= 19", "y >= 2");
    sg_env_free(c);
}

static void test_copy_keeps_options_and_freezing(void **state)
{
    (void)state;
    sg_env_options o = opts();
    o.freeze_mode = SG_FREEZE_IGNORE;
    o.duck_shape = 0;
    sg_env *env = new_env(&o);
    size(env, "x", 10);
    sg_env_freeze(env);
    assert_int_equal(EV(env, "s0 > 3"), 1);
    sg_env *c = NULL;
    assert_int_equal(sg_env_copy(&c, env), SG_OK);
    assert_int_equal(sg_env_ignored_guards(c), 1);
    assert_int_equal(EV(c, "s0 > 3"), 1);
    assert_int_equal(sg_env_ignored_guards(c), 2);
    assert_int_equal(sg_env_ignored_guards(env), 1);
    assert_int_equal(sg_env_nguards(c), 0);
    assert_ptr_equal(size(c, "y", 10), P("s1")); /* duck_shape = 0 carried over */
    sg_env_free(c);
    sg_env_free(env);
}

/* What the environment knows does not depend on how it got there: a copy,
 * or a restore of a mark taken after the facts, answers as the original did.
 * (Here an integer argument: 2*u0 == 3*u1 - 10 with u0, u1 >= 2 and u0 <= 4
 * leaves only u0 = 4, u1 = 6.) */
static sg_env *two_unbacked_pinned(void)
{
    sg_env *env = new_env(NULL);
    sg_interval r = {I(2), NULL};
    unbacked(env, NULL, 0, &r);
    unbacked(env, NULL, 0, &r);
    assert_int_equal(sg_env_check(env, P("2*u0 - 3*u1 == -10"), NULL), SG_OK);
    assert_int_equal(sg_env_check(env, P("u0 <= 4"), NULL), SG_OK);
    return env;
}

static void test_copy_answers_as_the_original(void **state)
{
    (void)state;
    sg_env *env = two_unbacked_pinned();
    sg_truth a = SG_UNKNOWN, b = SG_UNKNOWN;
    assert_int_equal(sg_env_known(env, &a, P("u0 <= 3")), SG_OK);
    sg_env *c = NULL;
    assert_int_equal(sg_env_copy(&c, env), SG_OK);
    assert_int_equal(sg_env_known(c, &b, P("u0 <= 3")), SG_OK);
    assert_int_equal(b, a);
    int x = -1, y = -1;
    sg_status sx = sg_env_evaluate(env, &x, P("u1 == 6"), NULL), sy = sg_env_evaluate(c, &y, P("u1 == 6"), NULL);
    assert_int_equal(sy, sx);
    assert_int_equal(y, x);
    sg_env_free(c);
    sg_env_free(env);
}

static void test_mark_restore_keeps_earlier_knowledge(void **state)
{
    (void)state;
    sg_env *env = two_unbacked_pinned();
    int before = -1, after = -1;
    sg_status sb = sg_env_evaluate(env, &before, P("u0 <= 3"), NULL);
    sg_env_mark m;
    sg_env_mark_take(env, &m);
    size(env, "z", 5); /* any fact after the mark (z >= 2) */
    assert_int_equal(sg_env_mark_restore(env, &m), SG_OK);
    sg_status sa = sg_env_evaluate(env, &after, P("u0 <= 3"), NULL);
    assert_int_equal(sa, sb);
    assert_int_equal(after, before);
    sg_env_free(env);
}

/* ---- the guard set ------------------------------------------------------ */

static void test_produce_guards(void **state)
{
    (void)state;
    /* empty */
    sg_env *env = new_env(NULL);
    const sg_expr **items = NULL;
    size_t n = 99;
    assert_int_equal(sg_env_produce_guards(env, &items, &n), SG_OK);
    assert_int_equal(n, 0);
    sg_free(items);
    sg_env_free(env);

    /* static inputs and plain integers */
    env = new_env(NULL);
    backed(env, "n", 7, SG_DIM_STATIC, 1, NULL);
    backed(env, "k", -3, SG_DIM_DUCK, 0, NULL);
    assert_int_equal(EV(env, "s0 < 0"), 1);
    GUARDS(env, "n == 7", "k <= -1");
    sg_env_free(env);

    /* multivariate refinement (PyTorch test_multivariate_refine_upper) */
    env = new_env(NULL);
    size(env, "a0", 15);
    size(env, "a1", 20);
    assert_int_equal(EV(env, "s0 > 5 and s0 > 12"), 1);
    assert_int_equal(EV(env, "s1 > 5 and s1 > s0"), 1);
    GUARDS(env, "a1 > a0", "a0 >= 13", "a1 >= 14");
    sg_env_free(env);

    /* PyTorch test 50: s0 = 6 with s0 > 5 and s0 < 7; only 6 passes */
    env = new_env(NULL);
    size(env, "t", 6);
    size(env, "u", 7);
    size(env, "v", 5);
    assert_int_equal(EV(env, "s0 > 5"), 1);
    assert_int_equal(EV(env, "s0 < 7"), 1);
    static const char *const t[] = {"t", "u", "v"};
    assert_int_equal(guards_hold(env, 3, t, (const int64_t[]){6, 7, 5}), 1);
    assert_int_equal(guards_hold(env, 3, t, (const int64_t[]){7, 7, 5}), 0);
    assert_int_equal(guards_hold(env, 3, t, (const int64_t[]){5, 7, 5}), 0);
    assert_int_equal(guards_hold(env, 3, t, (const int64_t[]){6, 100, 2}), 1);
    assert_int_equal(guards_hold(env, 3, t, (const int64_t[]){6, 1, 5}), 0);
    sg_env_free(env);

    /* a duck-sized input is its equality, even after guards on the symbol */
    env = new_env(NULL);
    size(env, "x", 3);
    size(env, "y", 3);
    assert_int_equal(EV(env, "s0 < 10"), 1);
    GUARDS(env, "y == x", "x >= 2", "x <= 9");
    sg_env_free(env);
}

/* A guard that teaches divisibility must leave backed questions answerable
 * by their hints, and the guard set over sources only. */
static void test_divisibility_guard_on_backed_symbol(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "x", 16);
    assert_int_equal(EV(env, "s0 % 8 == 0"), 1);
    assert_int_equal(KN(env, "s0 % 4 == 0"), SG_TRUE);
    int out = -1;
    assert_int_equal(sg_env_evaluate(env, &out, P("s0 > 20"), NULL), SG_OK);
    assert_int_equal(out, 0);
    const sg_expr *v = NULL;
    assert_int_equal(sg_env_evaluate_int(env, &v, P("s0"), NULL), SG_OK);
    assert_ptr_equal(v, I(16));
    sg_env_free(env);

    env = new_env(NULL);
    size(env, "x", 16);
    assert_int_equal(EV(env, "s0 % 8 == 0"), 1);
    static const char *const x[] = {"x"};
    assert_int_equal(guards_hold(env, 1, x, (const int64_t[]){16}), 1);
    assert_int_equal(guards_hold(env, 1, x, (const int64_t[]){24}), 1);
    assert_int_equal(guards_hold(env, 1, x, (const int64_t[]){12}), 0);
    sg_env_free(env);
}

/* A guard over a symbol that also occurs inside Min/Max, a product or a
 * floor division must not be "solved" as if it occurred only once. */
static void test_guards_with_nonlinear_occurrences(void **state)
{
    (void)state;
    /* hint 3: x != Min(x, 10) is false, the guard x == Min(x, 10) (x <= 10) */
    sg_env *env = new_env(NULL);
    size(env, "x", 3);
    assert_int_equal(EV(env, "s0 != Min(s0, 10)"), 0);
    assert_true(sg_facts_consistent(sg_env_facts(env)));
    assert_int_equal(KN(env, "s0 <= 10"), SG_TRUE);
    assert_int_equal(KN(env, "false"), SG_FALSE);
    assert_int_equal(EV(env, "s0 == 3"), 1);
    static const char *const x[] = {"x"};
    assert_int_equal(guards_hold(env, 1, x, (const int64_t[]){3}), 1);
    sg_env_free(env);

    /* x = 4, y = 5: x*y + x == 24 does not make x 24 */
    env = new_env(NULL);
    backed(env, "x", 4, SG_DIM_DYNAMIC, 1, NULL);
    backed(env, "y", 5, SG_DIM_DYNAMIC, 1, NULL);
    const sg_expr *v = NULL;
    assert_int_equal(sg_env_evaluate_int(env, &v, P("s0*s1 + s0"), NULL), SG_OK);
    assert_ptr_equal(v, I(24));
    assert_int_equal(sg_env_evaluate_int(env, &v, P("s0"), NULL), SG_OK);
    assert_ptr_equal(v, I(4));
    static const char *const xy[] = {"x", "y"};
    assert_int_equal(guards_hold(env, 2, xy, (const int64_t[]){4, 5}), 1);
    sg_env_free(env);

    /* y = 2: y == y // 2 + 1 holds for y = 1 and y = 2; y is not 1 */
    env = new_env(NULL);
    backed(env, "y", 2, SG_DIM_DYNAMIC, 0, NULL);
    assert_int_equal(EV(env, "s0 == s0 // 2 + 1"), 1);
    assert_int_equal(KN(env, "s0 == 1"), SG_UNKNOWN);
    assert_int_equal(EV(env, "s0 == 2"), 1);
    sg_env_free(env);
}

/* The guard set names input sources only: an unbacked input is not replaced
 * by an unbacked symbol that is no input. */
static void test_guard_set_mentions_sources_only(void **state)
{
    (void)state; /* runs in a fresh context: node ids in creation order */
    sg_env *env = new_env(NULL);
    unbacked(env, NULL, 1, NULL);                                  /* u0: an op's output */
    backed(env, "y", 5, SG_DIM_SIZE_LIKE_UNBACKED, 1, NULL);        /* u1: an input */
    assert_int_equal(sg_env_check(env, P("u1 == u0"), NULL), SG_OK);
    assert_int_equal(KN(env, "u0 == u1"), SG_TRUE);
    static const char *const y[] = {"y"};
    assert_int_equal(guards_hold(env, 1, y, (const int64_t[]){5}), 1);
    sg_env_free(env);
}

/* ---- hints and messages -------------------------------------------------- */

static void test_hint(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "x", 5);
    backed(env, "y", -7, SG_DIM_DYNAMIC, 0, NULL);
    const sg_expr *h = NULL;
    assert_int_equal(sg_env_hint(env, &h, P("s0*s1 + 1")), SG_OK);
    assert_ptr_equal(h, I(-34));
    assert_int_equal(sg_env_hint(env, &h, P("s0 // 2 + s1 % 3")), SG_OK);
    assert_ptr_equal(h, I(4)); /* 2 + 2 */
    assert_int_equal(sg_env_hint(env, &h, P("s0 > s1")), SG_OK);
    assert_ptr_equal(h, P("true"));
    assert_int_equal(sg_env_hint(env, &h, P("42")), SG_OK);
    assert_ptr_equal(h, I(42));
    unbacked(env, NULL, 0, NULL);
    EXPECT_ERR(env, SG_EDATADEP, sg_env_hint(env, &h, P("s0 + u0")), "s2", "u1");
    /* an OBLIVIOUS_SIZE input has a hint only where raising it to 2 changes
     * nothing (the counterfactual): 9 is one, 1 is none */
    backed(env, "z", 9, SG_DIM_OBLIVIOUS_SIZE, 1, NULL);
    assert_int_equal(sg_env_hint(env, &h, P("u1")), SG_OK);
    assert_ptr_equal(h, I(9));
    backed(env, "z1", 1, SG_DIM_OBLIVIOUS_SIZE, 1, NULL);
    EXPECT_ERR(env, SG_EDATADEP, sg_env_hint(env, &h, P("u2")), "s2", "u3");
    assert_int_equal(sg_env_hint(env, &h, P("u2 >= 0")), SG_OK); /* true at 1 and at 2 */
    assert_ptr_equal(h, P("true"));
    assert_int_equal(sg_env_nguards(env), 0);
    sg_env_free(env);
}

static void test_data_dependent_message(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "x", 10);
    unbacked(env, NULL, 0, NULL);
    unbacked(env, NULL, 0, NULL);
    const sg_expr *cond = P("u0 + u1 > s0");
    char *text = NULL;
    assert_int_equal(sg_print(C, &text, cond, SG_FMT_SG), SG_OK);
    int out = -1;
    EXPECT_ERR(env, SG_EDATADEP, sg_env_evaluate(env, &out, cond, NULL), "s1", "u2");
    const char *msg = sg_ctx_last_error_msg(C);
    assert_non_null(strstr(msg, text));
    assert_non_null(strstr(msg, "u0"));
    assert_non_null(strstr(msg, "u1"));
    assert_non_null(strstr(msg, "check"));
    sg_free(text);
    sg_env_free(env);
}

/* ---- bad input ------------------------------------------------------------ */

static void test_bad_input_new_copy(void **state)
{
    (void)state;
    sg_env *env = NULL, *c = NULL;
    assert_int_equal(sg_env_new(NULL, NULL, &env), SG_EINVAL);
    sg_ctx_reset_error(C);
    assert_int_equal(sg_env_new(C, NULL, NULL), SG_EINVAL);
    assert_true(strlen(sg_ctx_last_error_msg(C)) > 0);
    env = new_env(NULL);
    assert_int_equal(sg_env_copy(&c, NULL), SG_EINVAL);
    EXPECT_ERR(env, SG_EINVAL, sg_env_copy(NULL, env), "s0", "u0");
    sg_env_free(env);
    sg_env_free(NULL);
}

static void test_bad_input_new_options(void **state)
{
    (void)state;
    sg_env_options o = opts();
    o.freeze_mode = (sg_freeze_mode)7;
    sg_env *env = NULL;
    sg_ctx_reset_error(C);
    assert_int_equal(sg_env_new(C, &o, &env), SG_EINVAL);
    assert_true(strlen(sg_ctx_last_error_msg(C)) > 0);
    sg_env_free(env);
}

static void test_bad_input_create_backed(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    const sg_expr *e = NULL;
    size(env, "x", 5);
    unbacked(env, "out", 0, NULL);
    sg_interval empty = {I(5), I(3)}, notconst = {P("x"), NULL}, r = {I(2), I(4)};
    assert_int_equal(sg_env_create_backed(NULL, &e, "a", I(3), SG_DIM_DUCK, 1, NULL), SG_EINVAL);
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, NULL, "a", I(3), SG_DIM_DUCK, 1, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, &e, NULL, I(3), SG_DIM_DUCK, 1, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, &e, "a", NULL, SG_DIM_DUCK, 1, NULL), "s1", "u1");
    /* a hint that is not an integer constant */
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, &e, "a", P("s0"), SG_DIM_DUCK, 1, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, &e, "a", P("true"), SG_DIM_DUCK, 0, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, &e, "a", P("y + 1"), SG_DIM_DYNAMIC, 0, NULL), "s1", "u1");
    /* a negative size */
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, &e, "a", I(-1), SG_DIM_DUCK, 1, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, &e, "a", I(-1), SG_DIM_STATIC, 1, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, &e, "a", I(-2), SG_DIM_SIZE_LIKE_UNBACKED, 1, NULL), "s1",
               "u1");
    /* the hint outside the range; an empty range; a bound not a constant */
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, &e, "a", I(5), SG_DIM_DYNAMIC, 1, &r), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, &e, "a", I(1), SG_DIM_DYNAMIC, 0, &r), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, &e, "a", I(4), SG_DIM_DYNAMIC, 0, &empty), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, &e, "a", I(4), SG_DIM_DYNAMIC, 0, &notconst), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, &e, "a", I(5), SG_DIM_SIZE_LIKE_UNBACKED, 1, &r), "s1",
               "u1");
    /* a source given twice (by a backed or an unbacked input) */
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, &e, "x", I(6), SG_DIM_DYNAMIC, 1, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, &e, "x", I(5), SG_DIM_DUCK, 1, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, &e, "out", I(6), SG_DIM_DYNAMIC, 1, NULL), "s1", "u1");
    /* an unknown policy */
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, &e, "a", I(6), (sg_dim_dynamic)5, 1, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_backed(env, &e, "a", I(6), (sg_dim_dynamic)-1, 1, NULL), "s1", "u1");
    /* nothing was taken: the next input gets s1, and the source a is free */
    GUARDS(env, "x >= 2");
    assert_ptr_equal(backed(env, "a", 6, SG_DIM_DYNAMIC, 1, NULL), P("s1"));
    assert_ptr_equal(unbacked(env, NULL, 0, NULL), P("u1"));
    sg_env_free(env);
}

static void test_bad_input_create_unbacked(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    const sg_expr *e = NULL;
    size(env, "x", 5);
    sg_interval empty = {I(5), I(3)}, notconst = {NULL, P("x")}, negative = {I(-5), I(-1)};
    assert_int_equal(sg_env_create_unbacked(NULL, &e, NULL, 0, NULL), SG_EINVAL);
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_unbacked(env, NULL, NULL, 0, NULL), "s1", "u0");
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_unbacked(env, &e, NULL, 0, &empty), "s1", "u0");
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_unbacked(env, &e, NULL, 0, &notconst), "s1", "u0");
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_unbacked(env, &e, NULL, 1, &negative), "s1", "u0"); /* size-like */
    EXPECT_ERR(env, SG_EINVAL, sg_env_create_unbacked(env, &e, "x", 0, NULL), "s1", "u0");
    assert_ptr_equal(unbacked(env, NULL, 0, &negative), P("u0")); /* fine when not size-like */
    GUARDS(env, "x >= 2");
    sg_env_free(env);
}

static void test_bad_input_questions(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "x", 5);
    unbacked(env, NULL, 0, NULL);
    int out = -1;
    sg_truth t;
    const sg_expr *v = NULL, *cond = P("s0 > 3"), *num = P("s0 + 1");
    /* evaluate */
    assert_int_equal(sg_env_evaluate(NULL, &out, cond, NULL), SG_EINVAL);
    EXPECT_ERR(env, SG_EINVAL, sg_env_evaluate(env, NULL, cond, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_evaluate(env, &out, NULL, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_ETYPE, sg_env_evaluate(env, &out, num, NULL), "s1", "u1");
    /* guard_or */
    assert_int_equal(sg_env_guard_or(NULL, &out, cond, 0, NULL), SG_EINVAL);
    EXPECT_ERR(env, SG_EINVAL, sg_env_guard_or(env, NULL, cond, 0, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_guard_or(env, &out, NULL, 1, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_ETYPE, sg_env_guard_or(env, &out, num, 1, NULL), "s1", "u1");
    /* guard_size_oblivious */
    assert_int_equal(sg_env_guard_size_oblivious(NULL, &out, cond, NULL), SG_EINVAL);
    EXPECT_ERR(env, SG_EINVAL, sg_env_guard_size_oblivious(env, NULL, cond, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_guard_size_oblivious(env, &out, NULL, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_ETYPE, sg_env_guard_size_oblivious(env, &out, num, NULL), "s1", "u1");
    /* evaluate_int: an integer expression is needed */
    assert_int_equal(sg_env_evaluate_int(NULL, &v, num, NULL), SG_EINVAL);
    EXPECT_ERR(env, SG_EINVAL, sg_env_evaluate_int(env, NULL, num, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_evaluate_int(env, &v, NULL, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_ETYPE, sg_env_evaluate_int(env, &v, cond, NULL), "s1", "u1");
    /* known */
    assert_int_equal(sg_env_known(NULL, &t, cond), SG_EINVAL);
    EXPECT_ERR(env, SG_EINVAL, sg_env_known(env, NULL, cond), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_known(env, &t, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_ETYPE, sg_env_known(env, &t, num), "s1", "u1");
    /* check */
    assert_int_equal(sg_env_check(NULL, cond, NULL), SG_EINVAL);
    EXPECT_ERR(env, SG_EINVAL, sg_env_check(env, NULL, NULL), "s1", "u1");
    EXPECT_ERR(env, SG_ETYPE, sg_env_check(env, num, "m"), "s1", "u1");
    EXPECT_ERR(env, SG_ETYPE, sg_env_check(env, P("u0"), "m"), "s1", "u1");
    /* hint, replace */
    assert_int_equal(sg_env_hint(NULL, &v, num), SG_EINVAL);
    EXPECT_ERR(env, SG_EINVAL, sg_env_hint(env, NULL, num), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_hint(env, &v, NULL), "s1", "u1");
    assert_int_equal(sg_env_replace(NULL, &v, num), SG_EINVAL);
    EXPECT_ERR(env, SG_EINVAL, sg_env_replace(env, NULL, num), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_replace(env, &v, NULL), "s1", "u1");
    assert_int_equal(sg_env_nguards(env), 0);
    sg_env_free(env);
}

static void test_bad_input_bookkeeping(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    size(env, "x", 5);
    const sg_expr *u = unbacked(env, NULL, 0, NULL), **items = NULL;
    size_t n = 0;
    sg_env_mark m;
    /* bind, check_pending, rename */
    assert_int_equal(sg_env_bind_unbacked(NULL, u, "p"), SG_EINVAL);
    EXPECT_ERR(env, SG_EINVAL, sg_env_bind_unbacked(env, NULL, "p"), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_bind_unbacked(env, u, NULL), "s1", "u1");
    assert_int_equal(sg_env_check_pending(NULL), SG_EINVAL);
    assert_int_equal(sg_env_rename_unbacked(NULL, u, u), SG_EINVAL);
    EXPECT_ERR(env, SG_EINVAL, sg_env_rename_unbacked(env, NULL, u), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_rename_unbacked(env, u, NULL), "s1", "u1");
    /* marks */
    sg_env_mark_take(env, &m);
    assert_int_equal(sg_env_mark_restore(NULL, &m), SG_EINVAL);
    EXPECT_ERR(env, SG_EINVAL, sg_env_mark_restore(env, NULL), "s1", "u1");
    sg_env_mark_take(NULL, &m); /* harmless */
    sg_env_mark_take(env, NULL);
    /* produce_guards */
    assert_int_equal(sg_env_produce_guards(NULL, &items, &n), SG_EINVAL);
    EXPECT_ERR(env, SG_EINVAL, sg_env_produce_guards(env, NULL, &n), "s1", "u1");
    EXPECT_ERR(env, SG_EINVAL, sg_env_produce_guards(env, &items, NULL), "s1", "u1");
    /* accessors are total */
    assert_int_equal(sg_env_nguards(NULL), 0);
    assert_int_equal(sg_env_nasserts(NULL), 0);
    assert_int_equal(sg_env_npending(NULL), 0);
    assert_int_equal(sg_env_ignored_guards(NULL), 0);
    assert_null(sg_env_guard(NULL, 0, NULL));
    assert_null(sg_env_guard(env, 0, NULL));
    assert_null(sg_env_assert(NULL, 0, NULL));
    assert_null(sg_env_assert(env, 0, NULL));
    assert_null(sg_env_pending(NULL, 0));
    assert_null(sg_env_pending(env, 1));
    assert_null(sg_env_symbol(NULL, "s0"));
    assert_null(sg_env_symbol(env, NULL));
    assert_null(sg_env_symbol(env, "x"));
    assert_null(sg_env_facts(NULL));
    sg_env_freeze(NULL);
    assert_int_equal(sg_env_npending(env), 1);
    sg_env_free(env);
}

/* An assertion is kept under its unbacked symbol made last. */
static void test_assert_key(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    const sg_expr *u0 = NULL, *u1 = NULL;
    assert_int_equal(sg_env_create_unbacked(env, &u0, NULL, 0, NULL), SG_OK);
    assert_int_equal(sg_env_create_unbacked(env, &u1, NULL, 0, NULL), SG_OK);
    assert_int_equal(sg_env_check(env, P("u0 + u1 == 10"), "sum"), SG_OK);
    assert_int_equal(sg_env_check(env, P("u0 >= 3"), NULL), SG_OK);
    assert_int_equal(sg_env_nasserts(env), 2);
    assert_ptr_equal(sg_env_assert_key(env, 0), u1);
    assert_ptr_equal(sg_env_assert_key(env, 1), u0);
    assert_null(sg_env_assert_key(env, 2));
    assert_null(sg_env_assert_key(NULL, 0));
    sg_env_free(env);
}

/* Inputs are found by source, and duck sizing finds the symbol of an equal
 * hint, through indexes (issue 19, item 7): a mark restore that drops
 * inputs and symbols frees their sources, and a later equal hint never gets
 * a symbol the restore dropped; the inputs kept stay taken. */
static void test_lookups_after_restore(void **state)
{
    (void)state;
    sg_env *env = new_env(NULL);
    const sg_expr *a = size(env, "a", 5), *e = NULL;
    sg_env_mark m;
    sg_env_mark_take(env, &m);
    const sg_expr *b = size(env, "b", 7);
    assert_ptr_equal(size(env, "c", 5), a); /* duck sizing: the hint of a */
    assert_ptr_not_equal(b, a);
    assert_int_equal(sg_env_mark_restore(env, &m), SG_OK);
    const sg_expr *b2 = size(env, "b", 9); /* "b" is free again */
    assert_int_equal(sg_env_create_backed(env, &e, "a", I(3), SG_DIM_DUCK, 1, NULL), SG_EINVAL); /* kept */
    assert_int_equal(sg_env_create_backed(env, &e, "b", I(3), SG_DIM_DUCK, 1, NULL), SG_EINVAL);
    const sg_expr *d = size(env, "d", 7); /* not the dropped symbol of hint 7 */
    assert_ptr_not_equal(d, a);
    assert_ptr_not_equal(d, b2);
    assert_ptr_equal(size(env, "e", 7), d);
    assert_ptr_equal(size(env, "f", 9), b2);
    assert_ptr_equal(size(env, "g", 5), a);
    /* many inputs: each source once, each distinct hint its own symbol */
    char src[32];
    for (int i = 0; i < 500; i++) {
        snprintf(src, sizeof src, "L['x%d'].size()[0]", i);
        const sg_expr *x = size(env, src, 100 + i);
        snprintf(src, sizeof src, "L['y%d'].size()[0]", i);
        assert_ptr_equal(size(env, src, 100 + i), x);
    }
    for (int i = 0; i < 500; i += 97) {
        snprintf(src, sizeof src, "L['x%d'].size()[0]", i);
        assert_int_equal(sg_env_create_backed(env, &e, src, I(3), SG_DIM_DUCK, 1, NULL), SG_EINVAL);
    }
    sg_env_free(env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_assert_key),
        cmocka_unit_test(test_options_default),
        cmocka_unit_test(test_backed_symbols_are_numbered),
        cmocka_unit_test(test_duck_sizing),
        cmocka_unit_test(test_duck_sizing_reuses_duck_symbols_only),
        cmocka_unit_test(test_duck_sizing_off),
        cmocka_unit_test(test_zero_one_specialization),
        cmocka_unit_test(test_zero_one_specialization_off),
        cmocka_unit_test(test_static),
        cmocka_unit_test(test_assume_static_by_default),
        cmocka_unit_test(test_unbacked_inputs),
        cmocka_unit_test(test_user_ranges),
        cmocka_unit_test(test_evaluate_records_guards),
        cmocka_unit_test(test_evaluate_int),
        cmocka_unit_test(test_evaluate_int_data_dependent),
        cmocka_unit_test(test_guard_or),
        cmocka_unit_test(test_guard_size_oblivious),
        cmocka_unit_test(test_size_oblivious_never_contradicts),
        cmocka_unit_test(test_known_records_nothing),
        cmocka_unit_test(test_check_provably_false),
        cmocka_unit_test(test_check_backed),
        cmocka_unit_test(test_check_unbacked_is_a_runtime_assertion),
        cmocka_unit_test(test_prefer_runtime_asserts),
        cmocka_unit_test(test_freeze_error),
        cmocka_unit_test(test_freeze_ignore),
        cmocka_unit_test(test_guard_limit_specializes),
        cmocka_unit_test(test_pending_unbacked),
        cmocka_unit_test(test_rename_unbacked),
        cmocka_unit_test_setup_teardown(test_unbacked_order_is_creation_order, fresh_ctx, group_ctx_back),
        cmocka_unit_test(test_marks),
        cmocka_unit_test(test_mark_restores_freezing),
        cmocka_unit_test(test_mark_restores_pending_after_rename),
        cmocka_unit_test(test_copy_is_independent),
        cmocka_unit_test(test_copy_keeps_options_and_freezing),
        cmocka_unit_test(test_copy_answers_as_the_original),
        cmocka_unit_test(test_mark_restore_keeps_earlier_knowledge),
        cmocka_unit_test(test_produce_guards),
        cmocka_unit_test(test_divisibility_guard_on_backed_symbol),
        cmocka_unit_test(test_assert_replaces_unbacked_by_backed),
        cmocka_unit_test(test_assert_replacements_refused),
        cmocka_unit_test(test_guard_replaces_first_in_pytorch_order),
        cmocka_unit_test(test_no_replacement_past_five_symbols),
        cmocka_unit_test(test_divisibility_proves_products),
        cmocka_unit_test(test_produce_guards_text),
        cmocka_unit_test(test_guards_with_nonlinear_occurrences),
        cmocka_unit_test_setup_teardown(test_guard_set_mentions_sources_only, fresh_ctx, group_ctx_back),
        cmocka_unit_test(test_hint),
        cmocka_unit_test(test_data_dependent_message),
        cmocka_unit_test(test_bad_input_new_copy),
        cmocka_unit_test(test_oblivious_counterfactual),
        cmocka_unit_test(test_stable_names),
        cmocka_unit_test(test_bad_input_new_options),
        cmocka_unit_test(test_bad_input_create_backed),
        cmocka_unit_test(test_bad_input_create_unbacked),
        cmocka_unit_test(test_bad_input_questions),
        cmocka_unit_test(test_bad_input_bookkeeping),
        cmocka_unit_test(test_lookups_after_restore),
    };
    return cmocka_run_group_tests_name("env", tests, setup, teardown);
}
