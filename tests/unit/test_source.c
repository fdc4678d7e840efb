/* source: sources, fakification, subclasses, re-fakification, violations
 * (source.h) and guard sets (guard.h, sg_guard_set_*). Expectations worked
 * out by hand from PyTorch's rules (ShapeEnv.create_symbolic_sizes_strides_storage_offset
 * in torch/fx/experimental/symbolic_shapes.py; the subclass protocol of
 * __tensor_flatten__/__tensor_unflatten__ in torch/_subclasses/meta_utils.py). */
#include "cmocka_all.h"

#include <string.h>

#include "shapeguard.h"

static sg_ctx *C;
static sg_env *E;
static sg_symcache *K;
static sg_inputs *IN;

static int setup(void **state)
{
    (void)state;
    if (sg_ctx_new(&C) || sg_env_new(C, NULL, &E) || sg_symcache_new(C, &K) || sg_inputs_new(E, K, &IN))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sg_inputs_free(IN);
    sg_symcache_free(K);
    sg_env_free(E);
    sg_ctx_free(C);
    return 0;
}

static const sg_expr *P(const char *text)
{
    const sg_expr *e = NULL;
    assert_int_equal(sg_parse(C, &e, text, NULL), SG_OK);
    return e;
}

static const sg_source *local(const char *name)
{
    const sg_source *s = NULL;
    assert_int_equal(sg_source_local(C, &s, name), SG_OK);
    return s;
}

static void test_source_names(void **state)
{
    (void)state;
    const sg_source *x = local("x"), *e, *p;
    assert_string_equal(sg_source_name(x), "L['x']");
    assert_int_equal(sg_source_attr(C, &e, x, "elem"), SG_OK);
    assert_string_equal(sg_source_name(e), "L['x'].elem");
    assert_int_equal(sg_source_property(C, &p, e, SG_SOURCE_SIZE, 1), SG_OK);
    assert_string_equal(sg_source_name(p), "L['x'].elem.size()[1]");
    assert_int_equal(sg_source_property(C, &p, x, SG_SOURCE_STRIDE, 0), SG_OK);
    assert_string_equal(sg_source_name(p), "L['x'].stride()[0]");
    assert_int_equal(sg_source_property(C, &p, x, SG_SOURCE_OFFSET, 7), SG_OK);
    assert_string_equal(sg_source_name(p), "L['x'].storage_offset()");
    assert_true(sg_source_base(p) == x);
    /* bad input */
    assert_int_equal(sg_source_local(C, &p, "1x"), SG_EINVAL);
    assert_int_equal(sg_source_local(C, &p, ""), SG_EINVAL);
    assert_int_equal(sg_source_attr(C, &p, x, "a.b"), SG_EINVAL);
    assert_int_equal(sg_source_property(C, &e, x, SG_SOURCE_SIZE, 0), SG_OK);
    assert_int_equal(sg_source_property(C, &p, e, SG_SOURCE_SIZE, 0), SG_EINVAL);
    assert_int_equal(sg_source_attr(C, &p, e, "a"), SG_EINVAL);
    assert_int_equal(sg_source_property(C, &p, x, SG_SOURCE_LOCAL, 0), SG_EINVAL);
}

static void test_fakify_contiguous(void **state)
{
    (void)state;
    int64_t sizes[] = {5, 8};
    sg_tensor_value v = {2, sizes, NULL, 0, NULL, NULL};
    const sg_fake *f;
    assert_int_equal(sg_inputs_tensor(IN, local("x"), &v, NULL, &f), SG_OK);
    assert_true(f->sizes[0] == P("s0") && f->sizes[1] == P("s1"));
    assert_true(f->strides[0] == P("s1")); /* inferred: size 1 times stride 1 */
    assert_true(f->strides[1] == P("1") && f->offset == P("0"));
    assert_int_equal(sg_inputs_count(IN), 1);
    assert_true(sg_symcache_get(K, E, "L['x'].size()[1]") == P("s1"));
    /* the same source again is refused, nothing recorded */
    assert_int_equal(sg_inputs_tensor(IN, local("x"), &v, NULL, &f), SG_EINVAL);
    assert_int_equal(sg_inputs_count(IN), 1);
}

static sg_status flatten_one(void *user, const void *obj, sg_flat *out)
{
    static const char *names[] = {"elem"};
    (void)user;
    out->n = 1;
    out->names = names;
    out->inner = obj;
    out->meta = NULL;
    out->metalen = 0;
    return SG_OK;
}

static sg_status unflatten_fails(void *user, sg_ctx *ctx, const sg_fake *const *inner, size_t ninner,
                                 const void *meta, size_t metalen, const sg_fake *outer, size_t *ndim,
                                 const sg_expr **sizes, const sg_expr **strides)
{
    (void)user, (void)inner, (void)ninner, (void)meta, (void)metalen, (void)outer, (void)ndim, (void)sizes,
        (void)strides;
    return sg_ctx_set_error(ctx, SG_EINVAL, "no can do");
}

static sg_status unflatten_rank1(void *user, sg_ctx *ctx, const sg_fake *const *inner, size_t ninner,
                                 const void *meta, size_t metalen, const sg_fake *outer, size_t *ndim,
                                 const sg_expr **sizes, const sg_expr **strides)
{
    (void)user, (void)ctx, (void)ninner, (void)meta, (void)metalen, (void)outer;
    *ndim = 1;
    sizes[0] = inner[0]->sizes[0];
    strides[0] = inner[0]->strides[0];
    return SG_OK;
}

/* A failing or mismatching unflatten records nothing: no symbol, no guard,
 * no input, no cache entry. */
static void test_unflatten_errors(void **state)
{
    (void)state;
    int64_t sizes[] = {6, 4}, isizes[] = {3, 4};
    sg_tensor_value inner = {2, isizes, NULL, 0, NULL, NULL};
    sg_subclass_kind bad = {"bad", flatten_one, unflatten_fails, NULL, NULL};
    sg_subclass_kind rank = {"rank", flatten_one, unflatten_rank1, NULL, NULL};
    sg_tensor_value v = {2, sizes, NULL, 0, &bad, &inner};
    const sg_fake *f;
    assert_int_equal(sg_inputs_tensor(IN, local("x"), &v, NULL, &f), SG_EINVAL);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "no can do"));
    v.kind = &rank;
    assert_int_equal(sg_inputs_tensor(IN, local("x"), &v, NULL, &f), SG_EINVAL);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "gave rank 1"));
    assert_null(sg_env_symbol(E, "s0"));
    assert_int_equal(sg_env_nguards(E), 0);
    assert_int_equal(sg_inputs_count(IN), 0);
    assert_int_equal(sg_symcache_size(K), 0);
    /* negative size of an inner tensor */
    isizes[0] = -3;
    assert_int_equal(sg_inputs_tensor(IN, local("x"), &v, NULL, &f), SG_EINVAL);
    assert_null(sg_env_symbol(E, "s0"));
}

/* Re-fakification reads the recorded initial state, not the caller's
 * (since mutated) arrays. */
static void test_refakify_after_mutation(void **state)
{
    (void)state;
    int64_t sizes[] = {6, 3};
    sg_tensor_value v = {2, sizes, NULL, 0, NULL, NULL};
    const sg_fake *f, *g;
    int same = 0;
    assert_int_equal(sg_inputs_tensor(IN, local("x"), &v, NULL, &f), SG_OK);
    sizes[0] = 40; /* a .data or set_ mutation changed the tensor */
    assert_int_equal(sg_inputs_refakify(IN, 0, &g, &same), SG_OK);
    assert_true(same);
    assert_true(g->sizes[0] == f->sizes[0] && g->strides[0] == f->strides[0]);
    assert_int_equal(sg_inputs_refakify(IN, 1, &g, &same), SG_EINVAL);
}

static void test_violation(void **state)
{
    (void)state;
    int64_t sizes[] = {5};
    sg_dim_spec dyn = {SG_DIM_DYNAMIC, NULL, NULL};
    sg_tensor_context c = {&dyn, NULL, 0, NULL, NULL};
    sg_tensor_value v = {1, sizes, NULL, 0, NULL, NULL};
    const sg_fake *f;
    char *report = NULL;
    int holds;
    assert_int_equal(sg_inputs_tensor(IN, local("x"), &v, &c, &f), SG_OK);
    assert_int_equal(sg_inputs_violations(IN, &report), SG_OK);
    assert_null(report);
    assert_int_equal(sg_env_evaluate(E, &holds, P("s0 == 5"), "x.size(0) == 5"), SG_OK);
    assert_true(holds);
    assert_int_equal(sg_inputs_violations(IN, &report), SG_OK);
    assert_non_null(report);
    assert_non_null(strstr(report, "L['x'].size()[0]: marked dynamic, but the trace specialized it to the constant 5"));
    assert_non_null(strstr(report, "from 'x.size(0) == 5'"));
    sg_free(report);
}

static void test_guard_set(void **state)
{
    (void)state;
    int64_t a[] = {16}, b[] = {8};
    sg_tensor_value va = {1, a, NULL, 0, NULL, NULL}, vb = {1, b, NULL, 0, NULL, NULL};
    const sg_fake *fa, *fb;
    int holds;
    assert_int_equal(sg_inputs_tensor(IN, local("a"), &va, NULL, &fa), SG_OK);
    assert_int_equal(sg_inputs_tensor(IN, local("b"), &vb, NULL, &fb), SG_OK);
    assert_int_equal(sg_env_evaluate(E, &holds, P("s0 == 2*s1"), NULL), SG_OK);
    sg_guard_set *g;
    assert_int_equal(sg_guard_set_build(IN, 0, &g), SG_OK);
    int64_t ca[] = {20}, cb[] = {10}, ca2[] = {20, 1};
    sg_tensor_value xa = {1, ca, NULL, 0, NULL, NULL}, xb = {1, cb, NULL, 0, NULL, NULL};
    sg_input_value vals[2] = {{&xa, 0}, {&xb, 0}};
    assert_int_equal(sg_guard_set_check(g, vals, 2), SG_GUARD_PASS);
    char *why = NULL;
    assert_int_equal(sg_guard_set_explain(g, vals, 2, &why), SG_OK);
    assert_null(why);
    cb[0] = 11;
    assert_int_equal(sg_guard_set_check(g, vals, 2), SG_GUARD_FAIL);
    assert_int_equal(sg_guard_set_explain(g, vals, 2, &why), SG_OK);
    /* named by the text produce_guards gives it: the source first (s0 := 2*s1) */
    assert_string_equal(why, "L['a'].size()[0] == 2*L['b'].size()[0] (20 != 22; L['a'].size()[0] = 20, "
                             "L['b'].size()[0] = 11)");
    sg_free(why);
    ca[0] = 2; /* a bound, in its text: 2 <= L['b'].size()[0] */
    cb[0] = 1;
    assert_int_equal(sg_guard_set_check(g, vals, 2), SG_GUARD_FAIL);
    assert_int_equal(sg_guard_set_explain(g, vals, 2, &why), SG_OK);
    assert_string_equal(why, "2 <= L['b'].size()[0] (2 > 1)");
    sg_free(why);
    ca[0] = 20;
    cb[0] = 10;
    xa = (sg_tensor_value){2, ca2, NULL, 0, NULL, NULL};
    assert_int_equal(sg_guard_set_check(g, vals, 2), SG_GUARD_FAIL);
    assert_int_equal(sg_guard_set_explain(g, vals, 2, &why), SG_OK);
    assert_string_equal(why, "tensor 'a' rank mismatch. expected 1, actual 2");
    sg_free(why);
    vals[0] = (sg_input_value){NULL, 20};
    assert_int_equal(sg_guard_set_check(g, vals, 2), SG_GUARD_FAIL);
    assert_int_equal(sg_guard_set_check(g, vals, 1), SG_EINVAL);
    assert_int_equal(sg_guard_set_explain(g, vals, 1, &why), SG_EINVAL);
    sg_guard_set_free(g);
}

static void test_add_input_errors(void **state)
{
    (void)state;
    const sg_expr *x;
    assert_int_equal(sg_env_create_backed(E, &x, "n", P("4"), SG_DIM_DUCK, 0, NULL), SG_OK);
    assert_true(x == P("s0"));
    assert_int_equal(sg_env_add_input(E, "m", P("s0 + 1"), 0), SG_OK);
    assert_int_equal(sg_env_add_input(E, "m", P("s0"), 0), SG_EINVAL);     /* source given twice */
    assert_int_equal(sg_env_add_input(E, "k", P("n"), 0), SG_EINVAL);      /* not a symbol of E */
    assert_int_equal(sg_env_add_input(E, "k", P("s0 > 1"), 0), SG_EINVAL); /* a boolean */
    assert_int_equal(sg_env_create_backed(E, &x, "q", P("4"), SG_DIM_INFER_STRIDE, 0, NULL), SG_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_source_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fakify_contiguous, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unflatten_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refakify_after_mutation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_violation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_guard_set, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_input_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
