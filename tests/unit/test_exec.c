/* exec: concrete tensors and graph execution. Graphs are traced through the
 * public tracer API (or built by hand for the operators only passes make),
 * run on concrete inputs, and their values compared with values worked out
 * by hand. Where a comment says "torch 1.13", the expected text was also
 * checked against python3-torch 1.13 (torch.set_default_dtype(float64))
 * while writing the test. */
#include "cmocka_all.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "exec/exec_private.h"
#include "graph/graph.h"
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

static const sg_expr *E(const char *text)
{
    const sg_expr *e = NULL;
    if (sg_parse(C, &e, text, NULL) != SG_OK)
        fail_msg("cannot parse %s: %s", text, sg_ctx_last_error_msg(C));
    return e;
}

/* A new contiguous tensor holding vals (row-major). */
static sg__xtensor *xt(sg_dtype dt, size_t n, const int64_t *sizes, const double *vals)
{
    sg__xtensor *t;
    assert_int_equal(sg__xt_new(C, &t, dt, n, sizes), SG_OK);
    for (int64_t i = 0; vals && i < sg__xt_numel(t); i++)
        sg__xt_set_f(t, i, vals[i]);
    return t;
}

static void expect_print(const sg__xtensor *t, const char *want)
{
    char *s;
    assert_int_equal(sg__xt_print(C, &s, t), SG_OK);
    if (strcmp(s, want))
        fail_msg("printed %s, expected %s", s, want);
    sg_free(s);
}

/* ---- concrete tensors ---- */

/* Python's repr of floats (torch 1.13's tolist() printed the same). */
static void test_print(void **state)
{
    (void)state;
    int64_t n5[1] = {5}, n4[1] = {4}, n3[1] = {3}, n2[1] = {2}, n22[2] = {2, 2}, n20[2] = {2, 0}, n0[1] = {0};
    sg__xtensor *t = xt(SG_FLOAT64, 1, n5, (double[]){0.5, -2.0, 1e16, 1e-5, 0.0001});
    expect_print(t, "[0.5, -2.0, 1e+16, 1e-05, 0.0001]");
    sg__xt_unref(t);
    t = xt(SG_FLOAT64, 1, n4, (double[]){1e15, 123456789.125, -0.0, 1.0 / 3});
    expect_print(t, "[1000000000000000.0, 123456789.125, -0.0, 0.3333333333333333]");
    sg__xt_unref(t);
    t = xt(SG_FLOAT64, 1, n4, (double[]){1e22, 5e-324, 1.5e300, 100.0});
    expect_print(t, "[1e+22, 5e-324, 1.5e+300, 100.0]");
    sg__xt_unref(t);
    t = xt(SG_FLOAT64, 1, n3, (double[]){INFINITY, -INFINITY, NAN});
    expect_print(t, "[inf, -inf, nan]");
    sg__xt_unref(t);
    t = xt(SG_FLOAT32, 1, n2, (double[]){0.1, 1e20}); /* the float32 values, printed as doubles */
    expect_print(t, "[0.10000000149011612, 1.0000000200408773e+20]");
    sg__xt_unref(t);
    t = xt(SG_BOOL, 2, n22, (double[]){1, 0, 0, 2});
    expect_print(t, "[[True, False], [False, True]]");
    sg__xt_unref(t);
    t = xt(SG_INT64, 1, n3, NULL);
    sg__xt_set_i(t, 0, INT64_MIN);
    sg__xt_set_i(t, 1, -7);
    sg__xt_set_i(t, 2, INT64_MAX);
    expect_print(t, "[-9223372036854775808, -7, 9223372036854775807]");
    assert_int_equal(sg__xt_get_i(t, 2), INT64_MAX);
    sg__xt_unref(t);
    t = xt(SG_INT64, 2, n20, NULL);
    expect_print(t, "[[], []]");
    sg__xt_unref(t);
    t = xt(SG_FLOAT64, 1, n0, NULL);
    expect_print(t, "[]");
    sg__xt_unref(t);
    t = xt(SG_FLOAT64, 0, NULL, (double[]){2.5});
    expect_print(t, "2.5");
    sg__xt_unref(t);
}

/* Views through strides, storage bounds, reference counts. */
static void test_views(void **state)
{
    (void)state;
    int64_t n6[1] = {6};
    sg__xtensor *t = xt(SG_INT64, 1, n6, (double[]){0, 1, 2, 3, 4, 5}), *v;
    int64_t sz[2] = {3, 2}, st[2] = {1, 3}; /* the transpose of [2, 3] */
    assert_int_equal(sg__xt_view(C, &v, t->st, t->ver, 2, sz, st, 0), SG_OK);
    expect_print(v, "[[0, 3], [1, 4], [2, 5]]");
    assert_ptr_equal(v->ver, t->ver);
    assert_int_equal(t->ver->refs, 2);
    sg__xt_set_f(v, 1, 30); /* element [0, 1]: storage 3 */
    expect_print(t, "[0, 1, 2, 30, 4, 5]");
    sg__xt_unref(v);
    int64_t big[1] = {7}, one[1] = {1};
    assert_int_equal(sg__xt_view(C, &v, t->st, NULL, 1, big, one, 0), SG_ESHAPE);
    assert_int_equal(sg__xt_view(C, &v, t->st, NULL, 1, n6, one, 1), SG_ESHAPE);
    int64_t zero[1] = {0};
    assert_int_equal(sg__xt_view(C, &v, t->st, NULL, 1, zero, one, 6), SG_OK); /* no elements: anywhere */
    assert_int_not_equal(v->ver, t->ver);
    assert_int_equal(v->ver->n, 0);
    sg__xt_unref(v);
    assert_int_equal(t->st->refs, 1);
    sg__xt_unref(t);
}

/* ---- traced graphs ---- */

typedef struct {
    sg_env *env;
    sg_inputs *in;
    sg_tracer *t;
    sg_value v[8];
    sg__xtensor *x[8];
    size_t n;
} fx;

static void fstart(fx *F)
{
    memset(F, 0, sizeof *F);
    sg_env_options o;
    sg_env_options_default(&o);
    assert_int_equal(sg_env_new(C, &o, &F->env), SG_OK);
    assert_int_equal(sg_inputs_new(F->env, NULL, &F->in), SG_OK);
    assert_int_equal(sg_tracer_new(F->env, &F->t), SG_OK);
}

static void ffinish(fx *F)
{
    for (size_t i = 0; i < F->n; i++)
        sg__xt_unref(F->x[i]);
    sg_tracer_free(F->t);
    sg_inputs_free(F->in);
    sg_env_free(F->env);
}

/* An input of the given sizes, contiguous, holding vals; every size
 * static (a constant in the graph) or dynamic (a symbol). */
static sg_value input(fx *F, const char *name, sg_dtype dt, size_t n, const int64_t *sizes, const double *vals,
                      bool dynamic)
{
    const sg_source *src;
    const sg_fake *fake;
    sg_value v;
    sg_dim_spec spec[4];
    for (int i = 0; i < 4; i++)
        spec[i] = (sg_dim_spec){dynamic ? SG_DIM_DUCK : SG_DIM_STATIC, NULL, NULL};
    sg_tensor_context ctx = {.sizes = spec};
    assert_int_equal(sg_source_local(C, &src, name), SG_OK);
    sg_tensor_value tv = {.ndim = n, .sizes = sizes};
    if (sg_inputs_tensor(F->in, src, &tv, &ctx, &fake))
        fail_msg("input %s: %s", name, sg_ctx_last_error_msg(C));
    if (sg_tracer_input_tensor(F->t, &v, name, fake, dt, 0))
        fail_msg("tracer input %s: %s", name, sg_ctx_last_error_msg(C));
    F->v[F->n] = v;
    F->x[F->n++] = xt(dt, n, sizes, vals);
    return v;
}

static sg_arg AV(sg_value v)
{
    return (sg_arg){.kind = SG_ARG_VALUE, .u.v = v};
}

static sg_arg AI(const char *e)
{
    return (sg_arg){.kind = SG_ARG_INT, .u.e = E(e)};
}

static sg_arg AF(double f)
{
    return (sg_arg){.kind = SG_ARG_FLOAT, .u.f = f};
}

static sg_arg AB(int b)
{
    return (sg_arg){.kind = SG_ARG_BOOL, .u.b = b};
}

static sg_value call(fx *F, const char *op, const sg_arg *args, size_t n)
{
    sg_value v;
    if (sg_tracer_call(F->t, &v, op, args, n, 1))
        fail_msg("%s: %s", op, sg_ctx_last_error_msg(C));
    return v;
}

#define CALL(F, op, ...) call(F, op, (sg_arg[]){__VA_ARGS__}, sizeof((sg_arg[]){__VA_ARGS__}) / sizeof(sg_arg))

/* A run with the inputs given. */
static sg__xrun *start_run(fx *F)
{
    sg__xrun *r;
    assert_int_equal(sg__xrun_new(C, sg__tracer_graph(F->t), &r), SG_OK);
    for (size_t i = 0; i < F->n; i++) {
        sg__xval x = {.kind = SG_XV_TENSOR, .u.t = F->x[i]};
        if (sg__xrun_input(r, F->v[i], &x))
            fail_msg("input %zu: %s", i, sg_ctx_last_error_msg(C));
    }
    return r;
}

static sg__xrun *run_all(fx *F)
{
    sg__xrun *r = start_run(F);
    if (sg__xrun_rest(r))
        fail_msg("run: %s", sg_ctx_last_error_msg(C));
    return r;
}

static const sg__xtensor *T(sg__xrun *r, sg_value v)
{
    const sg__xval *x = sg__xrun_value(r, v);
    if (x->kind != SG_XV_TENSOR)
        fail_msg("value %u is not a tensor (kind %d)", v, x->kind);
    return x->u.t;
}

static void expect(sg__xrun *r, sg_value v, const char *want)
{
    expect_print(T(r, v), want);
}

static void expect_err(sg_status got, sg_status want, const char *msg)
{
    assert_int_equal(got, want);
    if (!strstr(sg_ctx_last_error_msg(C), msg))
        fail_msg("message '%s' lacks '%s'", sg_ctx_last_error_msg(C), msg);
}

static const double I6[6] = {0, 1, 2, 3, 4, 5};
static const double H6[6] = {0, 0.5, 1, 1.5, 2, 2.5};

/* Broadcasting and type promotion (results checked with torch 1.13). */
static void test_pointwise(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s23[2] = {2, 3}, s3[1] = {3}, s2[1] = {2}, s1[1] = {1};
    sg_value a = input(&F, "a", SG_FLOAT64, 2, s23, H6, false);
    sg_value b = input(&F, "b", SG_INT64, 1, s3, (double[]){1, -2, 3}, false);
    sg_value c = input(&F, "c", SG_FLOAT32, 1, s2, (double[]){0.1, 3}, false);
    sg_value d = input(&F, "d", SG_INT64, 1, s1, NULL, false);
    sg__xt_set_i(F.x[3], 0, INT64_MAX);
    sg_arg alpha = AI("2");
    alpha.name = "alpha";
    sg_value add = CALL(&F, "add.Tensor", AV(a), AV(b), alpha);       /* [2, 3] + 2 * [3] */
    sg_value mulf = CALL(&F, "mul.Tensor", AV(b), AF(2.5));           /* int64 * 2.5: float64 */
    sg_value mul32 = CALL(&F, "mul.Tensor", AV(c), AF(2.5));          /* float32 * 2.5 stays float32 */
    sg_value div = CALL(&F, "div.Tensor", AV(b), AI("2"));            /* int / int: float64 */
    sg_value div32 = CALL(&F, "div.Tensor", AV(c), AI("3"));          /* float32 */
    sg_value gt = CALL(&F, "gt.Scalar", AV(a), AI("1"));              /* bool */
    sg_value eq32 = CALL(&F, "eq.Scalar", AV(c), AF(0.1));            /* 0.1 rounded to float32: equal */
    sg_value wrap = CALL(&F, "add.Tensor", AV(d), AI("1"));           /* int64 wraps */
    sg_value pw = CALL(&F, "pow.Tensor_Scalar", AV(b), AI("2"));
    sg_value pws = CALL(&F, "pow.Scalar", AI("2"), AV(b));            /* 2 ** [1, -2, 3]: 2 ** -2 is 0 */
    sg_value sq = CALL(&F, "pow.Tensor_Scalar", AV(c), AF(0.5));
    sg_value wh = CALL(&F, "where.self", AV(gt), AV(a), AF(0.5));
    sg_arg lo = AF(0.7), hi = AF(2.0);
    lo.name = "min";
    hi.name = "max";
    sg_value cl = CALL(&F, "clamp", AV(a), lo, hi);
    sg_value ex = CALL(&F, "exp", AV(a));
    sg_value sg = CALL(&F, "sigmoid", AV(c));
    sg_value ng = CALL(&F, "neg", AV(b));
    sg_value rl = CALL(&F, "relu", AV(b));
    sg_value bad = CALL(&F, "pow.Tensor_Scalar", AV(b), AI("-1"));
    sg__xrun *r = start_run(&F);
    const sg__graph *g = sg__tracer_graph(F.t);
    sg_status s = SG_OK;
    uint32_t badnode = g->vals[bad].node;
    for (uint32_t n = 0; n < badnode && !s; n++)
        s = sg__xrun_node(r, n);
    assert_int_equal(s, SG_OK);
    expect(r, add, "[[2.0, -3.5, 7.0], [3.5, -2.0, 8.5]]");
    assert_int_equal(T(r, add)->dtype, SG_FLOAT64);
    expect(r, mulf, "[2.5, -5.0, 7.5]");
    assert_int_equal(T(r, mulf)->dtype, SG_FLOAT64);
    expect(r, mul32, "[0.25, 7.5]"); /* 0.1f * 2.5 rounds to 0.25 in float32 (torch 1.13) */
    assert_int_equal(T(r, mul32)->dtype, SG_FLOAT32);
    expect(r, div, "[0.5, -1.0, 1.5]");
    expect(r, div32, "[0.03333333507180214, 1.0]"); /* torch 1.13 */
    expect(r, gt, "[[False, False, False], [True, True, True]]");
    expect(r, eq32, "[True, False]");
    expect(r, wrap, "[-9223372036854775808]");
    expect(r, pw, "[1, 4, 9]");
    expect(r, pws, "[2, 0, 8]");
    expect(r, sq, "[0.3162277638912201, 1.7320507764816284]"); /* torch 1.13 */
    expect(r, wh, "[[0.5, 0.5, 0.5], [1.5, 2.0, 2.5]]");
    expect(r, cl, "[[0.7, 0.7, 1.0], [1.5, 2.0, 2.0]]");
    expect(r, ex, "[[1.0, 1.6487212707001282, 2.718281828459045], [4.4816890703380645, 7.38905609893065, "
                  "12.182493960703473]]"); /* torch 1.13 */
    expect(r, sg, "[0.5249791741371155, 0.9525741338729858]"); /* torch 1.13 */
    expect(r, ng, "[-1, 2, -3]");
    expect(r, rl, "[1, 0, 3]");
    /* torch: "Integers to negative integer powers are not allowed." */
    expect_err(sg__xrun_node(r, badnode), SG_EINVAL, "negative integer powers");
    assert_int_equal(sg__xrun_value(r, bad)->kind, SG_XV_UNSET);
    expect(r, rl, "[1, 0, 3]"); /* earlier values intact */
    sg__xrun_free(r);
    ffinish(&F);
}

/* In place through a view: the base sees it, and every view shares the
 * version counter; detach shares it too, clone has its own (torch 1.13:
 * t_ bumps _version, requires_grad_ does not). */
static void test_inplace_views(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s23[2] = {2, 3};
    sg_value a = input(&F, "a", SG_FLOAT64, 2, s23, I6, false);
    const sg_expr *shape[2] = {E("3"), E("2")};
    sg_value v = CALL(&F, "view", AV(a), (sg_arg){.kind = SG_ARG_INTS, .u.ints = {2, shape}});
    sg_value sel = CALL(&F, "select.int", AV(v), AI("0"), AI("1")); /* v[1]: elements 2, 3 */
    sg_value mul = CALL(&F, "mul_.Scalar", AV(sel), AI("10"));
    sg_value det = CALL(&F, "detach", AV(a));
    sg_value cl = CALL(&F, "clone", AV(a));
    sg_value tt = CALL(&F, "t_", AV(cl));
    sg_value rg = CALL(&F, "requires_grad_", AV(tt));
    sg_value ub = CALL(&F, "unbind.int", AV(a), AI("0"));
    sg_value tr = CALL(&F, "transpose.int", AV(a), AI("0"), AI("1"));
    sg_value sl = CALL(&F, "slice.Tensor", AV(tr), AI("0"), AI("1"), AI("3"), AI("1")); /* a.t()[1:3] */
    sg_value ex = CALL(&F, "expand", AV(sel), (sg_arg){.kind = SG_ARG_INTS, .u.ints = {2, (const sg_expr *[]){E("2"), E("-1")}}});
    sg_value sn = CALL(&F, "sin_", AV(det));
    (void)sn;
    sg__xrun *r = run_all(&F);
    const sg__xtensor *xa = T(r, a);
    assert_ptr_equal(xa, F.x[0]); /* the input itself */
    /* a after mul_ through the view ([[0, 1, 20], [30, 4, 5]]) and sin_ through detach */
    expect_print(F.x[0], "[[0.0, 0.8414709848078965, 0.9129452507276277], "
                         "[-0.9880316240928618, -0.7568024953079282, -0.9589242746631385]]");
    expect(r, mul, "[0.9129452507276277, -0.9880316240928618]"); /* the same storage, after sin_ too */
    assert_ptr_equal(T(r, mul)->st, xa->st);
    assert_ptr_equal(T(r, v)->ver, xa->ver);
    assert_ptr_equal(T(r, sel)->ver, xa->ver);
    assert_ptr_equal(T(r, det)->ver, xa->ver);
    assert_int_equal(xa->ver->n, 2); /* mul_ and sin_ */
    assert_ptr_not_equal(T(r, cl)->st, xa->st);
    assert_ptr_not_equal(T(r, cl)->ver, xa->ver);
    assert_ptr_equal(T(r, tt)->ver, T(r, cl)->ver);
    assert_ptr_equal(T(r, rg)->ver, T(r, cl)->ver);
    assert_int_equal(T(r, cl)->ver->n, 1); /* t_ bumps, requires_grad_ does not */
    expect(r, cl, "[[0.0, 1.0, 20.0], [30.0, 4.0, 5.0]]"); /* cloned before sin_ */
    expect(r, tt, "[[0.0, 30.0], [1.0, 4.0], [20.0, 5.0]]");
    assert_true(T(r, rg)->requires_grad);
    const sg__xval *lv = sg__xrun_value(r, ub);
    assert_int_equal(lv->kind, SG_XV_LIST);
    expect(r, sg_tracer_list_get(F.t, ub, 1), "[-0.9880316240928618, -0.7568024953079282, -0.9589242746631385]");
    expect(r, sl, "[[0.8414709848078965, -0.7568024953079282], [0.9129452507276277, -0.9589242746631385]]");
    expect(r, ex, "[[0.9129452507276277, -0.9880316240928618], [0.9129452507276277, -0.9880316240928618]]");
    assert_int_equal(T(r, ex)->strides[0], 0);
    sg__xrun_free(r);
    ffinish(&F);
}

/* out= (its storage grown when resized: torch 1.13 resizes out) and set_
 * (self takes the source's storage, keeps its own version counter, and
 * only self's is bumped: torch 1.13). */
static void test_out_set(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s3[1] = {3}, s1[1] = {1}, s2[1] = {2};
    sg_value a = input(&F, "a", SG_FLOAT64, 1, s3, (double[]){1, 2, 3}, false);
    sg_value o = input(&F, "o", SG_FLOAT64, 1, s3, NULL, false);
    sg_value o2 = input(&F, "o2", SG_FLOAT64, 1, s1, NULL, false);
    sg_value b = input(&F, "b", SG_FLOAT64, 1, s2, (double[]){7, 8}, false);
    sg_arg out = AV(o), out2 = AV(o2);
    out.name = out2.name = "out";
    sg_value r1 = CALL(&F, "add.out", AV(a), AV(a), out);
    sg_value r2 = CALL(&F, "mul.out", AV(a), AV(a), out2);
    sg_value st = CALL(&F, "set_.source_Tensor", AV(a), AV(b));
    sg_value ad = CALL(&F, "add_.Scalar", AV(st), AI("1"));
    sg__xrun *r = run_all(&F);
    expect(r, r1, "[2.0, 4.0, 6.0]");
    expect_print(F.x[1], "[2.0, 4.0, 6.0]");
    assert_ptr_equal(T(r, r1)->ver, F.x[1]->ver);
    assert_int_equal(F.x[1]->ver->n, 1);
    expect(r, r2, "[1.0, 4.0, 9.0]");
    assert_ptr_equal(T(r, r2)->st, F.x[2]->st);
    assert_int_equal(F.x[2]->st->numel, 3); /* grown in place */
    expect(r, st, "[8.0, 9.0]"); /* b's storage: [7, 8], then the add_ below */
    assert_ptr_equal(T(r, st)->st, F.x[3]->st);
    assert_ptr_equal(T(r, st)->ver, F.x[0]->ver);
    expect(r, ad, "[8.0, 9.0]");
    expect_print(F.x[3], "[8.0, 9.0]"); /* b sees it */
    assert_int_equal(F.x[0]->ver->n, 2); /* set_ and add_ */
    assert_int_equal(F.x[3]->ver->n, 0);
    expect_print(F.x[0], "[1.0, 2.0, 3.0]"); /* a's own tensor object still views the old storage */
    sg__xrun_free(r);
    ffinish(&F);
}

/* copy_ with broadcasting and dtype conversion, fill_, zero_, clamp_. */
static void test_copy_fill(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s23[2] = {2, 3}, s3[1] = {3}, s2[1] = {2};
    sg_value a = input(&F, "a", SG_FLOAT64, 2, s23, H6, false);
    sg_value b = input(&F, "b", SG_INT64, 1, s3, (double[]){1, -2, 3}, false);
    sg_value i = input(&F, "i", SG_INT64, 1, s2, NULL, false);
    sg_value f = input(&F, "f", SG_FLOAT64, 1, s2, (double[]){2.7, -2.7}, false);
    sg_value c1 = CALL(&F, "clone", AV(a));
    sg_value cp = CALL(&F, "copy_", AV(c1), AV(b));
    sg_value ci = CALL(&F, "copy_", AV(i), AV(f)); /* float into int64: truncated (torch 1.13) */
    sg_value c2 = CALL(&F, "clone", AV(a));
    sg_value fl = CALL(&F, "fill_.Scalar", AV(c2), AF(0.25));
    sg_value c3 = CALL(&F, "clone", AV(a));
    sg_arg lo = AF(0.6), hi = AF(1.6);
    lo.name = "min";
    hi.name = "max";
    sg_value cm = CALL(&F, "clamp_", AV(c3), lo, hi);
    sg_value z = CALL(&F, "zero_", AV(c2));
    sg_value s0 = CALL(&F, "select.int", AV(f), AI("0"), AI("1"));
    sg_value c4 = CALL(&F, "clone", AV(a));
    sg_value ft = CALL(&F, "fill_.Tensor", AV(c4), AV(s0));
    sg__xrun *r = run_all(&F);
    expect(r, cp, "[[1.0, -2.0, 3.0], [1.0, -2.0, 3.0]]");
    expect(r, ci, "[2, -2]");
    expect(r, fl, "[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]"); /* filled with 0.25, then zero_ of the same tensor */
    expect(r, z, "[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]");
    assert_int_equal(T(r, z)->ver->n, 2);
    expect(r, cm, "[[0.6, 0.6, 1.0], [1.5, 1.6, 1.6]]");
    expect(r, ft, "[[-2.7, -2.7, -2.7], [-2.7, -2.7, -2.7]]");
    sg__xrun_free(r);
    ffinish(&F);
}

/* nonzero binds its unbacked size, the runtime assert after it fails with
 * SG_EASSERT; masked_select and item bind theirs. */
static void test_data_dependent(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s23[2] = {2, 3};
    sg_value x = input(&F, "x", SG_INT64, 2, s23, (double[]){1, 0, 2, 0, 0, 3}, false);
    sg_value nz = CALL(&F, "nonzero", AV(x));
    const sg_expr *u0 = sg_tracer_size(F.t, nz, 0), *cond;
    assert_int_equal(sg_expr_rel(C, &cond, SG_REL_GE, u0, E("3")), SG_OK);
    assert_int_equal(sg_tracer_check(F.t, cond, 2), SG_OK);
    sg_value pos = CALL(&F, "gt.Scalar", AV(x), AI("0"));
    sg_value ms = CALL(&F, "masked_select", AV(x), AV(pos));
    sg_value sm = CALL(&F, "sum", AV(x));
    sg_value it = CALL(&F, "item", AV(sm));
    sg_value any = CALL(&F, "amax", AV(pos));
    sg_value bi = CALL(&F, "item", AV(any));
    sg__xrun *r = run_all(&F);
    expect(r, nz, "[[0, 0], [0, 2], [1, 2]]");
    assert_int_equal(T(r, nz)->strides[0], 1); /* laid out (1, u0), as torch 1.13's eager nonzero */
    int64_t u;
    assert_true(sg__xrun_sym(r, u0, &u));
    assert_int_equal(u, 3);
    expect(r, ms, "[1, 2, 3]");
    assert_true(sg__xrun_sym(r, sg_tracer_size(F.t, ms, 0), &u));
    assert_int_equal(u, 3);
    assert_int_equal(sg__xrun_value(r, it)->kind, SG_XV_INT);
    assert_int_equal(sg__xrun_value(r, it)->u.i, 6);
    assert_int_equal(sg__xrun_value(r, bi)->kind, SG_XV_BOOL);
    assert_true(sg__xrun_value(r, bi)->u.b);
    sg__xrun_free(r);
    /* two nonzero elements: the assert u0 >= 3 fails after the node ran */
    sg__xt_set_f(F.x[0], 2, 0);
    r = start_run(&F);
    expect_err(sg__xrun_rest(r), SG_EASSERT, "runtime assertion failed: u0 >= 3");
    expect(r, nz, "[[0, 0], [1, 2]]");
    assert_int_equal(sg__xrun_value(r, ms)->kind, SG_XV_UNSET);
    sg__xrun_free(r);
    ffinish(&F);
}

/* sum mean amax amin, with dims and keepdim. */
static void test_reductions(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s23[2] = {2, 3}, s3[1] = {3};
    sg_value a = input(&F, "a", SG_FLOAT64, 2, s23, H6, false);
    sg_value b = input(&F, "b", SG_INT64, 1, s3, (double[]){1, -2, 3}, false);
    sg_value c = input(&F, "c", SG_BOOL, 1, s3, (double[]){1, 0, 1}, false);
    sg_value f = input(&F, "f", SG_FLOAT32, 1, s3, (double[]){0.1, 0.2, 0.3}, false);
    const sg_expr *d1[1] = {E("1")}, *d0[1] = {E("0")}, *dm[1] = {E("-1")};
    sg_value all = CALL(&F, "sum", AV(a));
    sg_arg keep = AB(1);
    sg_value s1 = CALL(&F, "sum.dim_IntList", AV(a), (sg_arg){.kind = SG_ARG_INTS, .u.ints = {1, d1}}, keep);
    sg_value m0 = CALL(&F, "mean.dim", AV(a), (sg_arg){.kind = SG_ARG_INTS, .u.ints = {1, d0}});
    sg_value mx = CALL(&F, "amax", AV(a), (sg_arg){.kind = SG_ARG_INTS, .u.ints = {1, dm}});
    sg_value mn = CALL(&F, "amin", AV(a));
    sg_value si = CALL(&F, "sum", AV(b));
    sg_value sb = CALL(&F, "sum", AV(c));
    sg_value mf = CALL(&F, "mean", AV(f));
    sg_value ma = CALL(&F, "mean", AV(a));
    sg__xrun *r = run_all(&F);
    expect(r, all, "7.5");
    expect(r, s1, "[[1.5], [6.0]]");
    expect(r, m0, "[0.75, 1.25, 1.75]");
    expect(r, mx, "[1.0, 2.5]");
    expect(r, mn, "0.0");
    expect(r, si, "2");
    assert_int_equal(T(r, si)->dtype, SG_INT64);
    expect(r, sb, "2");
    assert_int_equal(T(r, sb)->dtype, SG_INT64);
    expect(r, mf, "0.20000000298023224"); /* torch 1.13: float32 mean of 0.1, 0.2, 0.3 */
    expect(r, ma, "1.25");
    sg__xrun_free(r);
    sg_value v;
    expect_err(sg_tracer_call(F.t, &v, "mean", (sg_arg[]){AV(b)}, 1, 3), SG_ETYPE, "floating point");
    ffinish(&F);
}

/* mm, bmm, matmul of ranks 1 and 2, a transposed operand; cat with dtype
 * promotion and stack. */
static void test_matmul_cat(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s3[1] = {3}, s21[2] = {2, 1}, s212[3] = {2, 1, 2}, s221[3] = {2, 2, 1};
    sg_value a = input(&F, "a", SG_FLOAT64, 2, s23, I6, false);
    sg_value b = input(&F, "b", SG_FLOAT64, 2, s32, I6, false);
    sg_value v = input(&F, "v", SG_FLOAT64, 1, s3, (double[]){1, 1, 1}, false);
    sg_value c = input(&F, "c", SG_INT64, 2, s21, (double[]){7, 8}, false);
    sg_value x = input(&F, "x", SG_FLOAT64, 3, s212, I6, false);
    sg_value y = input(&F, "y", SG_FLOAT64, 3, s221, I6, false);
    sg_value mm = CALL(&F, "mm", AV(a), AV(b));
    sg_value mv = CALL(&F, "matmul", AV(a), AV(v));
    sg_value vm = CALL(&F, "matmul", AV(v), AV(b));
    sg_value dot = CALL(&F, "matmul", AV(v), AV(v));
    sg_value at = CALL(&F, "t", AV(a));
    sg_value ata = CALL(&F, "mm", AV(at), AV(a));
    sg_value bmm = CALL(&F, "bmm", AV(x), AV(y));
    sg_value aa[2] = {a, a}, ac[2] = {a, c};
    sg_value cat0 = CALL(&F, "cat", (sg_arg){.kind = SG_ARG_VALUES, .u.values = {2, aa}});
    sg_value cat1 = CALL(&F, "cat", (sg_arg){.kind = SG_ARG_VALUES, .u.values = {2, ac}}, AI("-1"));
    sg_value r0 = CALL(&F, "select.int", AV(a), AI("0"), AI("0")), r1 = CALL(&F, "select.int", AV(a), AI("0"), AI("1"));
    sg_value rows[2] = {r0, r1};
    sg_value st = CALL(&F, "stack", (sg_arg){.kind = SG_ARG_VALUES, .u.values = {2, rows}}, AI("1"));
    sg__xrun *r = run_all(&F);
    expect(r, mm, "[[10.0, 13.0], [28.0, 40.0]]");
    expect(r, mv, "[3.0, 12.0]");
    expect(r, vm, "[6.0, 9.0]");
    expect(r, dot, "3.0");
    expect(r, ata, "[[9.0, 12.0, 15.0], [12.0, 17.0, 22.0], [15.0, 22.0, 29.0]]");
    expect(r, bmm, "[[[1.0]], [[13.0]]]");
    expect(r, cat0, "[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]");
    expect(r, cat1, "[[0.0, 1.0, 2.0, 7.0], [3.0, 4.0, 5.0, 8.0]]");
    assert_int_equal(T(r, cat1)->dtype, SG_FLOAT64);
    expect(r, st, "[[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]");
    sg__xrun_free(r);
    ffinish(&F);
}

/* Creation: arange, full (int64 from an int), ones with a dtype, *_like. */
static void test_creation(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s23[2] = {2, 3};
    sg_value a = input(&F, "a", SG_FLOAT64, 2, s23, H6, false);
    const sg_expr *two[1] = {E("2")};
    sg_arg dt = {.kind = SG_ARG_DTYPE, .name = "dtype", .u.dtype = SG_FLOAT32};
    sg_value ar = CALL(&F, "arange", AI("5"));
    sg_value ar3 = CALL(&F, "arange.start_step", AI("1"), AI("10"), AI("3"));
    sg_value fu = CALL(&F, "full", (sg_arg){.kind = SG_ARG_INTS, .u.ints = {1, two}}, AI("3"));
    sg_value on = CALL(&F, "ones", (sg_arg){.kind = SG_ARG_INTS, .u.ints = {1, two}}, dt);
    sg_value zl = CALL(&F, "zeros_like", AV(a));
    sg_value ol = CALL(&F, "ones_like", AV(a));
    sg_value el = CALL(&F, "empty.memory_format", (sg_arg){.kind = SG_ARG_INTS, .u.ints = {1, two}});
    sg__xrun *r = run_all(&F);
    expect(r, ar, "[0, 1, 2, 3, 4]");
    expect(r, ar3, "[1, 4, 7]");
    expect(r, fu, "[3, 3]");
    expect(r, on, "[1.0, 1.0]");
    assert_int_equal(T(r, on)->dtype, SG_FLOAT32);
    expect(r, zl, "[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]");
    expect(r, ol, "[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]");
    assert_int_equal(T(r, el)->ndim, 1);
    sg__xrun_free(r);
    ffinish(&F);
}

/* An input that does not fit its placeholder: SG_ESHAPE, and the symbols
 * it bound are unbound again; a dynamic input binds its size symbol. */
static void test_input_mismatch(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s43[2] = {4, 3}, s4[1] = {4};
    sg_value a = input(&F, "a", SG_FLOAT64, 2, s43, NULL, true);
    sg_value b = input(&F, "b", SG_FLOAT64, 1, s4, NULL, true); /* duck sized: s0 too */
    sg_value m = CALL(&F, "mul.Tensor", AV(a), AV(a));
    const sg_expr *s0 = sg_tracer_size(F.t, a, 0);
    sg__xrun *r;
    assert_int_equal(sg__xrun_new(C, sg__tracer_graph(F.t), &r), SG_OK);
    int64_t s34[2] = {3, 4}, tst[2] = {1, 4}, good[2] = {5, 3}, five[1] = {5};
    sg__xtensor *x34 = xt(SG_FLOAT64, 2, s34, NULL), *xb; /* a transposed [4, 3]: strides (1, 4) */
    assert_int_equal(sg__xt_view(C, &xb, x34->st, NULL, 2, s43, tst, 0), SG_OK);
    sg__xt_unref(x34);
    double i15[15];
    for (int i = 0; i < 15; i++)
        i15[i] = i;
    sg__xtensor *xg = xt(SG_FLOAT64, 2, good, i15), *x5 = xt(SG_FLOAT64, 1, five, NULL);
    sg__xval v = {.kind = SG_XV_TENSOR, .u.t = xb};
    expect_err(sg__xrun_input(r, a, &v), SG_ESHAPE, "input a: the stride of dimension 0 is 1, but the graph expects 3 (s1)");
    int64_t u;
    assert_false(sg__xrun_sym(r, s0, &u)); /* undone */
    v.u.t = F.x[1];                          /* b of 4 elements binds s0 = 4 */
    assert_int_equal(sg__xrun_input(r, b, &v), SG_OK);
    v.u.t = xg;
    expect_err(sg__xrun_input(r, a, &v), SG_ESHAPE, "the size of dimension 0 is 5, but the graph expects 4 (s0)");
    sg__xrun_free(r);
    assert_int_equal(sg__xrun_new(C, sg__tracer_graph(F.t), &r), SG_OK);
    v.u.t = xg;
    assert_int_equal(sg__xrun_input(r, a, &v), SG_OK);
    assert_true(sg__xrun_sym(r, s0, &u));
    assert_int_equal(u, 5);
    v.u.t = x5;
    assert_int_equal(sg__xrun_input(r, b, &v), SG_OK);
    v = (sg__xval){.kind = SG_XV_INT, .u.i = 3};
    assert_int_equal(sg__xrun_input(r, m, &v), SG_EINVAL); /* not a placeholder */
    assert_int_equal(sg__xrun_rest(r), SG_OK);
    assert_int_equal(T(r, m)->sizes[0], 5);
    assert_float_equal(sg__xt_get_f(T(r, m), 14), 196.0, 0); /* element 14 of 0..14 squared */
    int64_t val;
    assert_int_equal(sg__xrun_eval(r, E("s0 * 2 + 1"), &val), SG_OK);
    assert_int_equal(val, 11);
    expect_err(sg__xrun_eval(r, E("s0 // (s0 - 5)"), &val), SG_EZERODIV, "division by zero");
    expect_err(sg__xrun_eval(r, E("s0 * u77"), &val), SG_EUNBOUND, "u77");
    expect_err(sg__xrun_eval(r, E("s0 * 2**62"), &val), SG_ELIMIT, "int64");
    sg__xrun_free(r);
    sg__xt_unref(xb);
    sg__xt_unref(xg);
    sg__xt_unref(x5);
    ffinish(&F);
}

/* ---- the public API (shapeguard/exec.h) ---- */

static void expect_tprint(const sg_tensor *t, const char *want)
{
    char *s;
    assert_int_equal(sg_tensor_print(C, &s, t), SG_OK);
    if (strcmp(s, want))
        fail_msg("printed %s, expected %s", s, want);
    sg_free(s);
}

/* Tensors: made, filled, viewed; what views share; bad arguments. */
static void test_public_tensors(void **state)
{
    (void)state;
    int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, st13[2] = {1, 3}, neg[1] = {-1}, seven[1] = {7}, one[1] = {1};
    sg_tensor *t, *v;
    assert_int_equal(sg_tensor_new(C, &t, SG_FLOAT64, 2, s23), SG_OK);
    expect_tprint(t, "[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]");
    assert_int_equal(sg_tensor_numel(t), 6);
    assert_int_equal(sg_tensor_storage_numel(t), 6);
    assert_int_equal(sg_tensor_stride(t, 0), 3);
    assert_int_equal(sg_tensor_version(t), 0);
    for (int64_t i = 0; i < 6; i++)
        sg_tensor_set_f(t, i, (double)i / 2);
    sg_tensor_set_requires_grad(t, 1);
    assert_int_equal(sg_tensor_view(C, &v, t, 2, s32, st13, 0), SG_OK); /* t.t() */
    expect_tprint(v, "[[0.0, 1.5], [0.5, 2.0], [1.0, 2.5]]");
    assert_true(sg_tensor_same_storage(t, v));
    assert_true(sg_tensor_requires_grad(v));
    assert_int_equal(sg_tensor_ndim(v), 2);
    assert_int_equal(sg_tensor_size(v, 0), 3);
    assert_int_equal(sg_tensor_stride(v, 1), 3);
    assert_int_equal(sg_tensor_offset(v), 0);
    assert_int_equal(sg_tensor_get_i(v, 5), 2);               /* 2.5 truncated */
    sg_tensor_set_f(v, 1, -4);                                /* v[0, 1] is t[1, 0] */
    assert_float_equal(sg_tensor_get_f(t, 3), -4.0, 0);
    sg_tensor_unref(t); /* the view keeps the storage */
    expect_tprint(v, "[[0.0, -4.0], [0.5, 2.0], [1.0, 2.5]]");
    /* bad arguments: errors, no tensor */
    sg_tensor *bad = v;
    expect_err(sg_tensor_view(C, &bad, v, 1, seven, one, 0), SG_ESHAPE, "storage of 6 elements");
    assert_null(bad);
    expect_err(sg_tensor_view(C, &bad, v, 1, one, one, -1), SG_ESHAPE, "offset -1");
    expect_err(sg_tensor_new(C, &bad, SG_INT64, 1, neg), SG_EINVAL, "size -1");
    expect_err(sg_tensor_new(C, &bad, SG_INT64, SG_MAX_DIMS + 1, s23), SG_EINVAL, "dimensions");
    expect_err(sg_tensor_new(C, &bad, (sg_dtype)9, 1, one), SG_EINVAL, "dtype");
    assert_int_equal(sg_tensor_new(C, NULL, SG_INT64, 1, one), SG_EINVAL);
    assert_int_equal(sg_tensor_new(NULL, &bad, SG_INT64, 1, one), SG_EINVAL);
    assert_int_equal(sg_tensor_print(C, NULL, v), SG_EINVAL);
    sg_tensor_unref(v);
    sg_tensor_unref(NULL);
}

/* A run through the public API: inputs by name and by position, outputs,
 * values read back, the symbols the inputs bound. The graph: a of [s0, s1]
 * (traced at [4, 3]), y = a * a, a.mul_(2) (a written in place), s =
 * y.sum(), k = s.item(); run on a [2, 3] tensor. */
static void test_public_run(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s43[2] = {4, 3}, s23[2] = {2, 3};
    sg_value a = input(&F, "a", SG_FLOAT64, 2, s43, NULL, true);
    sg_value y = CALL(&F, "mul.Tensor", AV(a), AV(a));
    sg_value a2 = CALL(&F, "mul_.Scalar", AV(a), AI("2"));
    sg_value s = CALL(&F, "sum", AV(y));
    sg_value k = CALL(&F, "item", AV(s));
    sg_value outs[3] = {y, a2, s};
    assert_int_equal(sg_tracer_output(F.t, outs, 3), SG_OK);
    sg_run *r;
    assert_int_equal(sg_run_new(F.t, NULL, &r), SG_OK);
    /* the root's placeholders: the symbols of a's sizes, sorted, then a */
    assert_int_equal(sg_run_ninputs(r), 3);
    assert_string_equal(sg_run_input_name(r, 0), "s0");
    assert_string_equal(sg_run_input_name(r, 1), "s1");
    assert_string_equal(sg_run_input_name(r, 2), "a");
    assert_int_equal(sg_run_input(r, 2), a);
    assert_int_equal(sg_tracer_kind(F.t, sg_run_input(r, 0)), SG_VALUE_INT);
    sg_tensor *x;
    assert_int_equal(sg_tensor_new(C, &x, SG_FLOAT64, 2, s23), SG_OK);
    for (int64_t i = 0; i < 6; i++)
        sg_tensor_set_f(x, i, (double)i);
    expect_err(sg_run_set_named(r, "b", x), SG_EINVAL, "no tensor input b");
    expect_err(sg_run_set_tensor(r, y, x), SG_EINVAL, "not an input");
    expect_err(sg_run_set_int(r, a, 3), SG_EINVAL, "another kind");
    assert_int_equal(sg_run_set_named(r, "a", x), SG_OK);
    assert_null(sg_run_tensor(r, y)); /* not run yet */
    int64_t i;
    expect_err(sg_run_int(r, k, &i), SG_EUNBOUND, "no value yet");
    assert_int_equal(sg_run_execute(r), SG_OK);
    assert_int_equal(sg_run_noutputs(r), 3);
    assert_int_equal(sg_run_output(r, 0), y);
    expect_tprint(sg_run_tensor(r, y), "[[0.0, 1.0, 4.0], [9.0, 16.0, 25.0]]");
    expect_tprint(sg_run_tensor(r, sg_run_output(r, 1)), "[[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]");
    expect_tprint(x, "[[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]"); /* mul_ wrote the caller's tensor */
    assert_int_equal(sg_tensor_version(x), 1);
    assert_true(sg_tensor_same_storage(sg_run_tensor(r, a2), x)); /* in place: x's storage */
    expect_tprint(sg_run_tensor(r, s), "55.0");
    double f;
    assert_int_equal(sg_run_float(r, k, &f), SG_OK);
    assert_float_equal(f, 55.0, 0);
    expect_err(sg_run_int(r, k, &i), SG_EINVAL, "not an int");
    expect_err(sg_run_float(r, y, &f), SG_EINVAL, "not a float");
    int64_t n;
    assert_int_equal(sg_run_eval(r, sg_tracer_size(F.t, y, 0), &n), SG_OK);
    assert_int_equal(n, 2);
    assert_int_equal(sg_run_eval(r, E("s0 * s1 + 1"), &n), SG_OK);
    assert_int_equal(n, 7);
    assert_true(sg_run_symbol(r, E("s1"), &n));
    assert_int_equal(n, 3);
    assert_false(sg_run_symbol(r, E("s9"), &n));
    /* the run holds its own reference to x, and a tensor read from it can be kept past it */
    sg_tensor *kept = sg_run_tensor(r, y);
    sg_tensor_ref(kept);
    sg_tensor_unref(x);
    sg_run_free(r);
    expect_tprint(kept, "[[0.0, 1.0, 4.0], [9.0, 16.0, 25.0]]");
    sg_tensor_unref(kept);
    ffinish(&F);
}

/* A view input whose base the program does not take (`input d = w[0]`, w
 * of [5, 4] no parameter): sg_tracer_input_base gives d's storage what the
 * base's fake reaches, so d.as_strided([2], [1], 6), past d's own 4
 * elements, traces (it is out of bounds without the base, as the first
 * tracer shows); the run binds the base's symbols with sg_run_set_base and
 * checks its layout. */
static void test_hidden_base(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s4[1] = {4}, s54[2] = {5, 4}, s53[2] = {5, 3}, st1[1] = {1};
    sg_value d = input(&F, "d", SG_FLOAT64, 1, s4, NULL, true); /* [s0] */
    const sg_expr *two[1] = {E("2")}, *one[1] = {E("1")};
    sg_arg args[4] = {AV(d), {.kind = SG_ARG_INTS, .u.ints = {1, two}}, {.kind = SG_ARG_INTS, .u.ints = {1, one}},
                      AI("6")};
    sg_value y;
    expect_err(sg_tracer_call(F.t, &y, "as_strided", args, 4, 0), SG_ESHAPE, "out of bounds");
    const sg_source *src, *bsrc;
    const sg_fake *bf;
    sg_tensor_value tv = {.ndim = 2, .sizes = s54};
    assert_int_equal(sg_source_local(C, &src, "d"), SG_OK);
    assert_int_equal(sg_source_attr(C, &bsrc, src, "_base"), SG_OK);
    assert_int_equal(sg_inputs_tensor(F.in, bsrc, &tv, NULL, &bf), SG_OK); /* [s1, s0] by duck sizing */
    expect_err(sg_tracer_input_base(F.t, d, NULL), SG_EINVAL, "no base");
    expect_err(sg_tracer_input_base(F.t, 999, bf), SG_EINVAL, "not a tensor input");
    assert_int_equal(sg_tracer_input_base(NULL, d, bf), SG_EINVAL);
    /* a new tracer: the first one's refused call leaves its graph as it was, but it made a call */
    sg_tracer_free(F.t);
    assert_int_equal(sg_tracer_new(F.env, &F.t), SG_OK);
    long di = sg_inputs_find(F.in, sg_source_name(src));
    assert_true(di >= 0);
    const sg_fake *df = sg_inputs_fake(F.in, (size_t)di);
    assert_int_equal(sg_tracer_input_tensor(F.t, &d, "d", df, SG_FLOAT64, 0), SG_OK);
    assert_int_equal(sg_tracer_input_base(F.t, d, bf), SG_OK);
    expect_err(sg_tracer_input_base(F.t, d, bf), SG_EINVAL, "has its base already");
    args[0] = AV(d);
    assert_int_equal(sg_tracer_call(F.t, &y, "as_strided", args, 4, 0), SG_OK);
    sg_value z = CALL(&F, "mul.Tensor", AV(y), AI("1"));
    expect_err(sg_tracer_input_base(F.t, d, bf), SG_EINVAL, "before every call");
    assert_int_equal(sg_tracer_output(F.t, &z, 1), SG_OK);
    /* w of [5, 4] holding 0 .. 19; d = w[0] */
    sg_tensor *w, *w53, *dx;
    assert_int_equal(sg_tensor_new(C, &w, SG_FLOAT64, 2, s54), SG_OK);
    assert_int_equal(sg_tensor_new(C, &w53, SG_FLOAT64, 2, s53), SG_OK);
    for (int64_t i = 0; i < 20; i++)
        sg_tensor_set_f(w, i, (double)i);
    assert_int_equal(sg_tensor_view(C, &dx, w, 1, s4, st1, 0), SG_OK);
    sg_run *r;
    assert_int_equal(sg_run_new(F.t, NULL, &r), SG_OK);
    assert_int_equal(sg_run_set_named(r, "d", dx), SG_OK);
    expect_err(sg_run_set_base(r, d, w53), SG_ESHAPE,
               "input d (its hidden base): the size of dimension 1 is 3, but the graph expects 4 (s0)");
    expect_err(sg_run_set_base(r, d, NULL), SG_EINVAL, "NULL");
    expect_err(sg_run_set_base(r, y, w), SG_EINVAL, "not a tensor input");
    assert_int_equal(sg_run_set_base(r, d, w), SG_OK);
    int64_t n;
    assert_true(sg_run_symbol(r, E("s1"), &n)); /* the base's own symbol: bound from w */
    assert_int_equal(n, 5);
    assert_int_equal(sg_run_execute(r), SG_OK);
    expect_tprint(sg_run_tensor(r, z), "[6.0, 7.0]");
    sg_run_free(r);
    sg_tensor_unref(dx);
    sg_tensor_unref(w);
    sg_tensor_unref(w53);
    ffinish(&F);
}

/* Two graphs of one environment, the second run after the first (a
 * backward after its forward): the second starts with the first's symbol
 * bindings, and takes a tensor of the first as its input. Forward: y = a *
 * 2 for a of [s0, s1]. Second graph: g of [s1] (y's first row), z =
 * zeros([s0, 1]) + g, w = z.view(s0 * s1): s0 reaches it only through the
 * first run. */
static void test_run_chain(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s43[2] = {4, 3}, s23[2] = {2, 3};
    sg_value a = input(&F, "a", SG_FLOAT64, 2, s43, NULL, true);
    sg_value y = CALL(&F, "mul.Tensor", AV(a), AI("2"));
    assert_int_equal(sg_tracer_output(F.t, &y, 1), SG_OK);
    /* the second graph: its input is a row of y */
    sg_tracer *t2;
    assert_int_equal(sg_tracer_new(F.env, &t2), SG_OK);
    const sg_expr *sz[1] = {sg_tracer_size(F.t, y, 1)}, *st[1] = {E("1")};
    sg_fake gf = {.ndim = 1, .sizes = sz, .strides = st, .offset = E("0")};
    sg_value g, z, w;
    assert_int_equal(sg_tracer_input_tensor(t2, &g, "g", &gf, SG_FLOAT64, 0), SG_OK);
    const sg_expr *zs[2] = {E("s0"), E("1")};
    sg_arg za[2] = {{.kind = SG_ARG_INTS, .u.ints = {2, zs}},
                    {.kind = SG_ARG_DTYPE, .name = "dtype", .u.dtype = SG_FLOAT64}};
    sg_value zeros;
    assert_int_equal(sg_tracer_call(t2, &zeros, "zeros", za, 2, 1), SG_OK);
    sg_arg aa[2] = {AV(zeros), AV(g)};
    assert_int_equal(sg_tracer_call(t2, &z, "add.Tensor", aa, 2, 1), SG_OK);
    const sg_expr *ws[1] = {E("s0 * s1")};
    sg_arg va[2] = {AV(z), {.kind = SG_ARG_INTS, .u.ints = {1, ws}}};
    assert_int_equal(sg_tracer_call(t2, &w, "view", va, 2, 1), SG_OK);
    assert_int_equal(sg_tracer_output(t2, &w, 1), SG_OK);
    /* run the forward on a [2, 3] input */
    sg_run *r1, *r2;
    sg_tensor *x;
    assert_int_equal(sg_tensor_new(C, &x, SG_FLOAT64, 2, s23), SG_OK);
    for (int64_t i = 0; i < 6; i++)
        sg_tensor_set_f(x, i, (double)i);
    assert_int_equal(sg_run_new(F.t, NULL, &r1), SG_OK);
    assert_int_equal(sg_run_set_named(r1, "a", x), SG_OK);
    assert_int_equal(sg_run_execute(r1), SG_OK);
    sg_tensor *yt = sg_run_tensor(r1, sg_run_output(r1, 0));
    expect_tprint(yt, "[[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]");
    int64_t s3[1] = {3}, u1[1] = {1};
    sg_tensor *row;
    assert_int_equal(sg_tensor_view(C, &row, yt, 1, s3, u1, 0), SG_OK); /* y[0] */
    /* then the second graph after it: s0 = 2 from the forward, s1 = 3 from the row */
    assert_int_equal(sg_run_new(t2, r1, &r2), SG_OK);
    assert_int_equal(sg_run_set_named(r2, "g", row), SG_OK);
    assert_int_equal(sg_run_execute(r2), SG_OK);
    expect_tprint(sg_run_tensor(r2, sg_run_output(r2, 0)), "[0.0, 2.0, 4.0, 0.0, 2.0, 4.0]");
    sg_run_free(r2);
    /* a run of the second graph of its own knows s1 from its input, not s0 */
    assert_int_equal(sg_run_new(t2, NULL, &r2), SG_OK);
    assert_int_equal(sg_run_set_named(r2, "g", row), SG_OK);
    int64_t n;
    assert_true(sg_run_symbol(r2, E("s1"), &n));
    assert_int_equal(n, 3);
    assert_false(sg_run_symbol(r2, E("s0"), &n));
    expect_err(sg_run_execute(r2), SG_EUNBOUND, "s0");
    sg_run_free(r2);
    sg_tensor_unref(row);
    /* an earlier run over another environment does not chain */
    fx G;
    fstart(&G);
    expect_err(sg_run_new(G.t, r1, &r2), SG_EINVAL, "another environment");
    assert_null(r2);
    ffinish(&G);
    sg_run_free(r1);
    sg_tensor_unref(x);
    sg_tracer_free(t2);
    ffinish(&F);
}

/* ---- graphs built by hand: the operators only passes make ---- */

static void test_scatters(void **state)
{
    (void)state;
    sg_env *env;
    sg__graph *g;
    sg__opreg *reg;
    assert_int_equal(sg_env_new(C, NULL, &env), SG_OK);
    assert_int_equal(sg__graph_new(env, &g), SG_OK);
    assert_int_equal(sg__opreg_new(C, &reg), SG_OK);
    const sg_expr *one = E("1"), *zero = E("0");
    const sg_expr *s4[1] = {E("4")}, *s2[1] = {E("2")}, *s22[2] = {E("2"), E("2")}, *st22[2] = {E("2"), one};
    uint32_t self, src, src2, self2, out1, out2, out3;
    assert_int_equal(sg__graph_tensor(g, &self, SG_FLOAT64, 1, s4, &one, zero, SG_NOVAL), SG_OK);
    assert_int_equal(sg__graph_placeholder(g, self, "self"), SG_OK);
    assert_int_equal(sg__graph_tensor(g, &src, SG_INT64, 1, s2, &one, zero, SG_NOVAL), SG_OK);
    assert_int_equal(sg__graph_placeholder(g, src, "src"), SG_OK);
    assert_int_equal(sg__graph_tensor(g, &self2, SG_FLOAT64, 2, s22, st22, zero, SG_NOVAL), SG_OK);
    assert_int_equal(sg__graph_placeholder(g, self2, "self2"), SG_OK);
    src2 = src;
    uint32_t off;
    /* slice_scatter(self, src, 0, 1, None, 2): positions 1 and 3 */
    assert_int_equal(sg__graph_tensor(g, &out1, SG_FLOAT64, 1, s4, &one, zero, SG_NOVAL), SG_OK);
    sg__garg a1[6] = {{.kind = SG_A_VALUE, .u.v = self}, {.kind = SG_A_VALUE, .u.v = src}, {.kind = SG_A_EXPR, .u.e = zero},
                      {.kind = SG_A_EXPR, .u.e = one}, {.kind = SG_A_NONE}, {.kind = SG_A_EXPR, .u.e = E("2")}};
    assert_int_equal(sg__graph_call(g, sg__opreg_find(reg, "slice_scatter"), a1, 6, out1, 0), SG_OK);
    /* select_scatter(self2, src, 0, -1) */
    assert_int_equal(sg__graph_tensor(g, &out2, SG_FLOAT64, 2, s22, st22, zero, SG_NOVAL), SG_OK);
    sg__garg a2[4] = {{.kind = SG_A_VALUE, .u.v = self2}, {.kind = SG_A_VALUE, .u.v = src2},
                      {.kind = SG_A_EXPR, .u.e = zero}, {.kind = SG_A_EXPR, .u.e = E("-1")}};
    assert_int_equal(sg__graph_call(g, sg__opreg_find(reg, "select_scatter"), a2, 4, out2, 0), SG_OK);
    /* as_strided_scatter(self, src, [2], [3], 0): positions 0 and 3 */
    assert_int_equal(sg__graph_tensor(g, &out3, SG_FLOAT64, 1, s4, &one, zero, SG_NOVAL), SG_OK);
    const sg_expr *three = E("3");
    sg__garg a3[5] = {{.kind = SG_A_VALUE, .u.v = self}, {.kind = SG_A_VALUE, .u.v = src}, {.kind = SG_A_EXPRS},
                      {.kind = SG_A_EXPRS}, {.kind = SG_A_EXPR, .u.e = zero}};
    assert_int_equal(sg__graph_exprs(g, &off, s2, 1), SG_OK);
    a3[2].u.list.off = off;
    a3[2].u.list.n = 1;
    assert_int_equal(sg__graph_exprs(g, &off, &three, 1), SG_OK);
    a3[3].u.list.off = off;
    a3[3].u.list.n = 1;
    assert_int_equal(sg__graph_call(g, sg__opreg_find(reg, "as_strided_scatter"), a3, 5, out3, 0), SG_OK);
    sg__xrun *r;
    assert_int_equal(sg__xrun_new(C, g, &r), SG_OK);
    int64_t n4[1] = {4}, n2[1] = {2}, n22[2] = {2, 2};
    sg__xtensor *xs = xt(SG_FLOAT64, 1, n4, (double[]){0, 1, 2, 3}), *xsrc = xt(SG_INT64, 1, n2, (double[]){7, 8});
    sg__xtensor *xs2 = xt(SG_FLOAT64, 2, n22, (double[]){0, 1, 2, 3});
    sg__xval v = {.kind = SG_XV_TENSOR, .u.t = xs};
    assert_int_equal(sg__xrun_input(r, self, &v), SG_OK);
    v.u.t = xsrc;
    assert_int_equal(sg__xrun_input(r, src, &v), SG_OK);
    v.u.t = xs2;
    assert_int_equal(sg__xrun_input(r, self2, &v), SG_OK);
    if (sg__xrun_rest(r))
        fail_msg("%s", sg_ctx_last_error_msg(C));
    expect_print(sg__xrun_value(r, out1)->u.t, "[0.0, 7.0, 2.0, 8.0]");
    expect_print(sg__xrun_value(r, out2)->u.t, "[[0.0, 1.0], [7.0, 8.0]]");
    expect_print(sg__xrun_value(r, out3)->u.t, "[7.0, 1.0, 2.0, 8.0]");
    expect_print(xs, "[0.0, 1.0, 2.0, 3.0]"); /* self untouched */
    /* a kernel the table lacks is refused by name, not run */
    sg__xrun_free(r);
    sg__xt_unref(xs);
    sg__xt_unref(xsrc);
    sg__xt_unref(xs2);
    sg__opreg_free(reg);
    sg__graph_free(g);
    sg_env_free(env);
}

/* More promotion and broadcasting cases, each read from torch 1.13:
 * clamp with a tensor bound and None, int + True, bool * 2, an int tensor
 * to a float tensor's power, sub with alpha, full of a bool, sum over
 * dim=[] (every dimension); .data's fresh version counter. */
static void test_more_pointwise(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s3[1] = {3}, s2[1] = {2}, s1[1] = {1}, s12[2] = {1, 2};
    sg_value x = input(&F, "x", SG_INT64, 1, s3, (double[]){1, 5, 9}, false);
    sg_value lo = input(&F, "lo", SG_INT64, 1, s3, (double[]){2, 2, 2}, false);
    sg_value bb = input(&F, "bb", SG_BOOL, 1, s2, (double[]){1, 0}, false);
    sg_value e = input(&F, "e", SG_FLOAT64, 1, s1, (double[]){2.5}, false);
    sg_value r12 = input(&F, "r12", SG_FLOAT64, 2, s12, (double[]){1, 2}, false);
    sg_arg mn = AV(lo), mx = {.kind = SG_ARG_NONE, .name = "max"};
    mn.name = "min";
    sg_value cl = CALL(&F, "clamp.Tensor", AV(x), mn, mx);
    sg_value at = CALL(&F, "add.Tensor", AV(x), AB(1));
    sg_value bm = CALL(&F, "mul.Tensor", AV(bb), AI("2"));
    sg_value sl = CALL(&F, "slice.Tensor", AV(x), AI("0"), AI("1"), AI("2"));
    sg_value pw = CALL(&F, "pow.Tensor_Tensor", AV(sl), AV(e)); /* 5 ** 2.5 */
    sg_arg al = AI("3");
    al.name = "alpha";
    sg_value sb = CALL(&F, "sub.Tensor", AV(e), AF(1.0), al);
    const sg_expr *two[1] = {E("2")};
    sg_value fb = CALL(&F, "full", (sg_arg){.kind = SG_ARG_INTS, .u.ints = {1, two}}, AB(1));
    sg_value se = CALL(&F, "sum.dim_IntList", AV(r12), (sg_arg){.kind = SG_ARG_INTS, .u.ints = {0, NULL}});
    sg_value ab = CALL(&F, "abs", AV(CALL(&F, "neg", AV(x))));
    sg__xrun *r = run_all(&F);
    expect(r, cl, "[2, 5, 9]");
    expect(r, at, "[2, 6, 10]");
    expect(r, bm, "[2, 0]");
    assert_int_equal(T(r, bm)->dtype, SG_INT64);
    expect(r, pw, "[55.90169943749474]");
    expect(r, sb, "[-0.5]");
    expect(r, fb, "[True, True]");
    expect(r, se, "3.0");
    expect(r, ab, "[1, 5, 9]");
    /* .data: a fresh counter, the same storage */
    const sg__xtensor *before = T(r, at);
    sg__xstorage *st = before->st;
    assert_int_equal(sg__xrun_fresh_version(r, at), SG_OK);
    assert_ptr_equal(T(r, at)->st, st);
    assert_int_equal(T(r, at)->ver->refs, 1);
    assert_int_equal(sg__xrun_fresh_version(r, x), SG_OK); /* an input: the caller's tensor is left alone */
    assert_ptr_not_equal(T(r, x)->ver, F.x[0]->ver);
    assert_int_equal(sg__xrun_fresh_version(r, 999), SG_EINVAL);
    sg__xrun_free(r);
    ffinish(&F);
}

/* Nodes flagged SG_NODE_DATA (what `.data` makes): a detach with a version
 * counter of its own, a write (set_ of `x.data = y`) that bumps nothing;
 * torch 1.13: a.data.mul_(2) and a.data = y leave a._version as it was. */
static void test_data_flag(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s2[1] = {2};
    sg_value a = input(&F, "a", SG_FLOAT64, 1, s2, (double[]){1, 2}, false);
    sg_value y = input(&F, "y", SG_FLOAT64, 1, s2, (double[]){5, 6}, false);
    sg_value d = CALL(&F, "detach", AV(a));
    sg__graph *g = (sg__graph *)sg__tracer_graph(F.t);
    g->nodes[g->nnodes - 1].flags |= SG_NODE_DATA;
    sg_value m = CALL(&F, "mul_.Scalar", AV(d), AI("2"));
    sg_value st = CALL(&F, "set_.source_Tensor", AV(a), AV(y));
    g->nodes[g->nnodes - 1].flags |= SG_NODE_DATA;
    sg__xrun *r = run_all(&F);
    expect_print(F.x[0], "[2.0, 4.0]");          /* the write went through */
    assert_int_equal(F.x[0]->ver->n, 0);         /* but a's counter did not move */
    assert_int_equal(T(r, m)->ver->n, 1);        /* .data's own did */
    assert_ptr_equal(T(r, st)->ver, F.x[0]->ver); /* a keeps its counter, unbumped */
    assert_int_equal(F.x[0]->ver->n, 0);
    expect(r, st, "[5.0, 6.0]");
    sg__xrun_free(r);
    ffinish(&F);
}

/* A call the table has no kernel for (reshape: the tracer decomposes it,
 * so only a graph built by hand holds one) is refused by name. */
static void test_no_kernel(void **state)
{
    (void)state;
    sg_env *env;
    sg__graph *g;
    sg__opreg *reg;
    assert_int_equal(sg_env_new(C, NULL, &env), SG_OK);
    assert_int_equal(sg__graph_new(env, &g), SG_OK);
    assert_int_equal(sg__opreg_new(C, &reg), SG_OK);
    const sg_expr *one = E("1"), *zero = E("0"), *s2[1] = {E("2")};
    uint32_t a, out, off;
    assert_int_equal(sg__graph_tensor(g, &a, SG_FLOAT64, 1, s2, &one, zero, SG_NOVAL), SG_OK);
    assert_int_equal(sg__graph_placeholder(g, a, "a"), SG_OK);
    assert_int_equal(sg__graph_tensor(g, &out, SG_FLOAT64, 1, s2, &one, zero, 0), SG_OK);
    assert_int_equal(sg__graph_exprs(g, &off, s2, 1), SG_OK);
    sg__garg args[2] = {{.kind = SG_A_VALUE, .u.v = a}, {.kind = SG_A_EXPRS, .u.list = {off, 1}}};
    assert_int_equal(sg__graph_call(g, sg__opreg_find(reg, "reshape"), args, 2, out, 0), SG_OK);
    sg__xrun *r;
    assert_int_equal(sg__xrun_new(C, g, &r), SG_OK);
    expect_err(sg__xrun_node(r, 0), SG_EUNBOUND, "input a has no value");
    int64_t n2[1] = {2};
    sg__xtensor *x = xt(SG_FLOAT64, 1, n2, NULL);
    sg__xval v = {.kind = SG_XV_TENSOR, .u.t = x};
    assert_int_equal(sg__xrun_input(r, a, &v), SG_OK);
    sg__xt_unref(x); /* the run holds its own reference */
    expect_err(sg__xrun_rest(r), SG_EUNSUPPORTED, "no kernel for operator reshape");
    assert_int_equal(T(r, a)->refs, 1);
    sg__xrun_free(r);
    sg__opreg_free(reg);
    sg__graph_free(g);
    sg_env_free(env);
}

/* ---- running out of memory ---- */

/* An allocator whose call number fail_at fails (0: none), counting the
 * blocks given out and not given back. */
typedef struct {
    long calls, fail_at, live;
} hook;

static void *h_malloc(void *u, size_t n)
{
    hook *h = u;
    if (++h->calls == h->fail_at)
        return NULL;
    void *p = malloc(n);
    h->live += p != NULL;
    return p;
}

static void *h_realloc(void *u, void *p, size_t n)
{
    hook *h = u;
    if (++h->calls == h->fail_at)
        return NULL;
    void *q = realloc(p, n);
    h->live += q && !p;
    return q;
}

static void h_free(void *u, void *p)
{
    hook *h = u;
    h->live -= p != NULL;
    free(p);
}

/* The values of the workload below, printed. */
static void oom_values(sg__xrun *r, const sg_value *vals, size_t n, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const sg__xval *x = sg__xrun_value(r, vals[i]);
        char *t = NULL;
        if (x->kind == SG_XV_TENSOR)
            assert_int_equal(sg__xt_print(C, &t, x->u.t), SG_OK);
        at += (size_t)snprintf(out + at, cap - at, "%s; ", t ? t : x->kind == SG_XV_INT ? "int" : "?");
        sg_free(t);
    }
}

/* Every allocation of a run fails in turn: the step that needed it gives
 * SG_ENOMEM with "out of memory" and leaves the values before it as they
 * were, so the run then resumes (with memory) to the values of a clean
 * run; nothing leaks. */
static void test_oom(void **state)
{
    (void)state;
    hook h = {0};
    sg_allocator al = {h_malloc, h_realloc, h_free, &h};
    sg_ctx *saved = C;
    assert_int_equal(sg_ctx_new_with_allocator(&C, &al), SG_OK);
    fx F;
    fstart(&F);
    int64_t s23[2] = {2, 3}, s3[1] = {3}, s32[2] = {3, 2};
    sg_value a = input(&F, "a", SG_FLOAT64, 2, s23, H6, false);
    sg_value b = input(&F, "b", SG_INT64, 1, s3, (double[]){1, 0, 3}, false);
    sg_value o = input(&F, "o", SG_FLOAT64, 1, s3, NULL, false);
    const sg_expr *shape[2] = {E("3"), E("2")}, *d1[1] = {E("1")};
    sg_value v = CALL(&F, "view", AV(a), (sg_arg){.kind = SG_ARG_INTS, .u.ints = {2, shape}});
    sg_value mu = CALL(&F, "mul_.Scalar", AV(v), AF(2.0));
    sg_value ad = CALL(&F, "add.Tensor", AV(a), AV(b));
    sg_value sm = CALL(&F, "sum.dim_IntList", AV(ad), (sg_arg){.kind = SG_ARG_INTS, .u.ints = {1, d1}});
    sg_value mm = CALL(&F, "mm", AV(a), AV(mu));
    sg_value ab[2] = {a, a};
    sg_value ct = CALL(&F, "cat", (sg_arg){.kind = SG_ARG_VALUES, .u.values = {2, ab}}, AI("1"));
    sg_value nz = CALL(&F, "nonzero", AV(b));
    const sg_expr *cond;
    assert_int_equal(sg_expr_rel(C, &cond, SG_REL_GE, sg_tracer_size(F.t, nz, 0), E("1")), SG_OK);
    assert_int_equal(sg_tracer_check(F.t, cond, 2), SG_OK);
    sg_value it = CALL(&F, "item", AV(CALL(&F, "sum", AV(b))));
    sg_arg out = AV(o);
    out.name = "out";
    sg_value ou = CALL(&F, "add.out", AV(b), AV(b), out);
    sg_value st = CALL(&F, "stack", (sg_arg){.kind = SG_ARG_VALUES, .u.values = {2, ab}});
    sg_value un = sg_tracer_list_get(F.t, CALL(&F, "unbind.int", AV(st)), 1);
    sg_value vals[] = {v, mu, ad, sm, mm, ct, nz, it, ou, un};
    size_t nv = sizeof vals / sizeof *vals;
    (void)s32;
    /* the inputs' first values, to start each attempt from */
    double init[3][6];
    for (size_t i = 0; i < 3; i++)
        for (int64_t k = 0; k < sg__xt_numel(F.x[i]); k++)
            init[i][k] = sg__xt_get_f(F.x[i], k);
    char want[2048], got[2048];
    sg__xrun *r = run_all(&F);
    oom_values(r, vals, nv, want, sizeof want);
    sg__xrun_free(r);
    long failures = 0;
    for (long n = 1;; n++) {
        for (size_t i = 0; i < 3; i++) { /* fresh inputs */
            sg__xtensor *t = xt((sg_dtype)F.x[i]->dtype, F.x[i]->ndim, F.x[i]->sizes, init[i]);
            sg__xt_unref(F.x[i]);
            F.x[i] = t;
        }
        long live = h.live;
        h.fail_at = h.calls + n;
        r = NULL;
        sg_status s = sg__xrun_new(C, sg__tracer_graph(F.t), &r);
        size_t in = 0;
        for (; in < F.n && !s; in++) {
            sg__xval x = {.kind = SG_XV_TENSOR, .u.t = F.x[in]};
            s = sg__xrun_input(r, F.v[in], &x);
        }
        if (!s)
            s = sg__xrun_rest(r);
        bool hit = h.calls >= h.fail_at;
        h.fail_at = 0;
        if (s) {
            if (s != SG_ENOMEM || !strstr(sg_ctx_last_error_msg(C), "out of memory"))
                fail_msg("failure %ld: status %d, '%s'", n, s, sg_ctx_last_error_msg(C));
            failures++;
            if (!r)
                assert_int_equal(sg__xrun_new(C, sg__tracer_graph(F.t), &r), SG_OK);
            for (in = in ? in - 1 : 0; in < F.n; in++) { /* the input that failed, and the rest */
                sg__xval x = {.kind = SG_XV_TENSOR, .u.t = F.x[in]};
                assert_int_equal(sg__xrun_input(r, F.v[in], &x), SG_OK);
            }
            if (sg__xrun_rest(r))
                fail_msg("resuming after failure %ld: %s", n, sg_ctx_last_error_msg(C));
        }
        oom_values(r, vals, nv, got, sizeof got);
        if (strcmp(got, want))
            fail_msg("failure %ld: %s\nexpected %s", n, got, want);
        sg__xrun_free(r);
        assert_int_equal(h.live, live);
        if (!hit)
            break;
    }
    assert_true(failures > 30);
    ffinish(&F);
    sg_ctx_free(C);
    C = saved;
    assert_int_equal(h.live, 0);
}

/* The block cache (util/ctx.c) that storages and tensor headers come from:
 * a block given back is given out again for its size class without the
 * allocator; a block beyond the classes, or beyond the cache's bytes, goes
 * back to the allocator at once; the context's release gives back every
 * block kept; a context with the caller's allocator keeps nothing (every
 * call reaches the allocator, as test_oom needs). */
static void test_block_cache(void **state)
{
    (void)state;
    hook h = {0};
    sg_allocator al = {h_malloc, h_realloc, h_free, &h};
    sg_ctx *ctx;
    assert_int_equal(sg_ctx_new_with_allocator(&ctx, &al), SG_OK);
    long live = h.live, calls = h.calls;
    /* off: each block is the allocator's, given back at once */
    void *p = sg__malloc_cached(ctx, 100);
    assert_non_null(p);
    assert_int_equal(h.calls, calls + 1);
    sg__free_cached(ctx, p);
    assert_int_equal(h.live, live);
    /* on: kept, and given out again for its class (97 .. 128 bytes) */
    sg__cache_enable(ctx, true);
    p = sg__malloc_cached(ctx, 100);
    memset(p, 7, 100);
    calls = h.calls;
    sg__free_cached(ctx, p);
    assert_int_equal(h.live, live + 1);
    void *q = sg__malloc_cached(ctx, 128);
    assert_ptr_equal(q, p);
    assert_int_equal(h.calls, calls);
    memset(q, 1, 128); /* the whole class is there */
    void *r = sg__malloc_cached(ctx, 97); /* the class is empty now: a new block */
    assert_ptr_not_equal(r, q);
    assert_int_equal(h.calls, calls + 1);
    sg__free_cached(ctx, q);
    sg__free_cached(ctx, r);
    sg__free_cached(ctx, NULL);
    assert_int_equal(h.live, live + 2);
    void *s = sg__malloc_cached(ctx, 96); /* another class: not those */
    assert_ptr_not_equal(s, q);
    assert_ptr_not_equal(s, r);
    sg_free(s); /* a cached block may go to sg_free too */
    /* beyond the classes: the allocator's at once */
    void *big = sg__malloc_cached(ctx, SG_CACHE_CLASSES * SG_CACHE_STEP + 1);
    assert_int_equal(h.live, live + 3);
    sg__free_cached(ctx, big);
    assert_int_equal(h.live, live + 2);
    /* a block of sg__malloc (no class) and one that realloc moved to another size go back at once */
    void *m = sg__malloc(ctx, 64);
    sg__free_cached(ctx, m);
    void *g = sg__malloc_cached(ctx, 64);
    g = sg__realloc(ctx, g, 4096);
    sg__free_cached(ctx, g);
    assert_int_equal(h.live, live + 2);
    /* at most SG_CACHE_BYTES kept (from empty) */
    sg__cache_enable(ctx, false);
    assert_int_equal(h.live, live);
    sg__cache_enable(ctx, true);
    enum { N = SG_CACHE_BYTES / (SG_CACHE_CLASSES * SG_CACHE_STEP) + 20 };
    void *blocks[N];
    for (int i = 0; i < N; i++)
        blocks[i] = sg__malloc_cached(ctx, SG_CACHE_CLASSES * SG_CACHE_STEP);
    for (int i = 0; i < N; i++)
        sg__free_cached(ctx, blocks[i]);
    assert_true(ctx->cache_bytes <= SG_CACHE_BYTES);
    assert_int_equal(h.live, live + (long)(SG_CACHE_BYTES / (SG_CACHE_CLASSES * SG_CACHE_STEP)));
    /* tensors: a second one of the same layout takes the first one's blocks */
    sg__cache_enable(ctx, false);
    sg__cache_enable(ctx, true);
    sg__xtensor *t;
    int64_t sz[2] = {8, 4};
    assert_int_equal(sg__xt_new(ctx, &t, SG_FLOAT64, 2, sz), SG_OK);
    sg__xt_unref(t);
    calls = h.calls;
    assert_int_equal(sg__xt_new(ctx, &t, SG_FLOAT64, 2, sz), SG_OK);
    assert_int_equal(h.calls, calls);
    assert_true(sg__xt_get_f(t, 31) == 0); /* zero-filled, as a new storage is */
    sg__xt_unref(t);
    /* turned off: what it kept goes back */
    sg__cache_enable(ctx, false);
    assert_int_equal(h.live, live);
    assert_int_equal(ctx->cache_bytes, 0);
    sg__cache_enable(ctx, true);
    sg__free_cached(ctx, sg__malloc_cached(ctx, 40));
    sg_ctx_free(ctx);
    assert_int_equal(h.live, 0);
}

/* The overlap checks' two questions (src/exec/overlap.c) against brute
 * force: every position of random layouts marked in an array. Layouts of
 * up to 3 dimensions, sizes 0..4, strides 0..6, offsets 0..8 (positions
 * below 64), so repeats, interleavings and disjoint ranges all occur. */
static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005u + 1442695040888963407u;
    return *x >> 33;
}

static void random_layout(uint64_t *x, sg__xlayout *l)
{
    l->ndim = lcg(x) % 4;
    for (size_t d = 0; d < l->ndim; d++) {
        l->sizes[d] = (int64_t)(lcg(x) % 5);
        l->strides[d] = (int64_t)(lcg(x) % 7);
    }
    l->offset = (int64_t)(lcg(x) % 9);
}

/* The number of times l reaches each position, into hits[64]; returns
 * whether some position is reached twice. */
static bool brute_positions(const sg__xlayout *l, int hits[64])
{
    memset(hits, 0, 64 * sizeof *hits);
    int64_t n = 1;
    for (size_t d = 0; d < l->ndim; d++)
        n *= l->sizes[d];
    bool twice = false;
    for (int64_t k = 0; k < n; k++) {
        int64_t r = k, p = l->offset;
        for (size_t d = l->ndim; d-- > 0;) {
            p += (r % l->sizes[d]) * l->strides[d];
            r /= l->sizes[d];
        }
        assert_true(p >= 0 && p < 64);
        twice |= hits[p]++ > 0;
    }
    return twice;
}

static void test_overlap_exact(void **state)
{
    (void)state;
    uint64_t x = 19;
    int met = 0, repeated = 0;
    for (int i = 0; i < 20000; i++) {
        sg__xlayout a, b;
        random_layout(&x, &a);
        random_layout(&x, &b);
        int ha[64], hb[64];
        bool twice = brute_positions(&a, ha), common = false;
        brute_positions(&b, hb);
        for (int p = 0; p < 64; p++)
            common |= ha[p] && hb[p];
        bool got;
        assert_int_equal(sg__xlayout_repeats(C, &a, &got), SG_OK);
        assert_int_equal(got, twice);
        assert_int_equal(sg__xlayouts_meet(C, &a, &b, &got), SG_OK);
        assert_int_equal(got, common);
        assert_int_equal(sg__xlayouts_meet(C, &b, &a, &got), SG_OK);
        assert_int_equal(got, common);
        met += common;
        repeated += twice;
    }
    assert_true(met > 2000 && met < 18000); /* both answers well represented */
    assert_true(repeated > 2000 && repeated < 18000);
    /* large layouts: the answer comes from the bitmap, linear in the elements */
    sg__xlayout even = {.ndim = 2, .sizes = {1000, 1000}, .strides = {2000, 2}, .offset = 0};
    sg__xlayout odd = even, third = {.ndim = 1, .sizes = {700000}, .strides = {3}, .offset = 0};
    odd.offset = 1;
    bool got = true;
    assert_int_equal(sg__xlayouts_meet(C, &even, &odd, &got), SG_OK);
    assert_false(got);
    assert_int_equal(sg__xlayouts_meet(C, &even, &third, &got), SG_OK);
    assert_true(got); /* position 0 */
    third.offset = 1;
    assert_int_equal(sg__xlayouts_meet(C, &even, &third, &got), SG_OK);
    assert_true(got); /* 4 = 1 + 3 */
    sg__xlayout skew = {.ndim = 2, .sizes = {3, 2}, .strides = {2, 3}, .offset = 0}; /* 0 2 4 3 5 7 */
    assert_int_equal(sg__xlayout_repeats(C, &skew, &got), SG_OK);
    assert_false(got);
    skew.sizes[0] = 4; /* 0 2 4 6 3 5 7 9: still none */
    assert_int_equal(sg__xlayout_repeats(C, &skew, &got), SG_OK);
    assert_false(got);
    skew.sizes[1] = 3; /* 6 = 0 + 2*3 = 3*2 */
    assert_int_equal(sg__xlayout_repeats(C, &skew, &got), SG_OK);
    assert_true(got);
}

/* Kernels write a result straight into its output where that gives what a
 * buffer gives (issue 19, item 8): a new result costs at most its tensor,
 * version counter and storage (2 blocks now: the counter in the tensor's,
 * the elements in the storage's), a view or an in-place result its tensor
 * alone; an operand on the written storage at other positions
 * (a[0].add_(a[1])) still goes through a buffer. Values and strides from
 * torch 1.13. */
static void test_direct_writes(void **state)
{
    (void)state;
    hook h = {0};
    sg_allocator al = {h_malloc, h_realloc, h_free, &h};
    sg_ctx *saved = C;
    assert_int_equal(sg_ctx_new_with_allocator(&C, &al), SG_OK);
    fx F;
    fstart(&F);
    int64_t s23[2] = {2, 3}, s3[1] = {3};
    sg_value a = input(&F, "a", SG_FLOAT64, 2, s23, I6, false);
    sg_value b = input(&F, "b", SG_FLOAT64, 1, s3, (double[]){1, 0, 3}, false);
    sg_value ad = CALL(&F, "add.Tensor", AV(a), AV(b));  /* new: 3 blocks */
    sg_value mu = CALL(&F, "mul_.Scalar", AV(ad), AF(0.5)); /* in place: 1 */
    CALL(&F, "add_.Tensor", AV(mu), AV(mu));                /* in place, reading itself: 1 */
    sg_value tr = CALL(&F, "transpose.int", AV(a), AI("0"), AI("1")); /* a view: 1 */
    sg_value sn = CALL(&F, "mul.Tensor", AV(tr), AV(tr));   /* new, transposed layout: 3 */
    sg_value cl = CALL(&F, "clone", AV(tr));                /* new: 3 */
    sg_value r0 = CALL(&F, "select.int", AV(a), AI("0"), AI("0")); /* views: 1 + 1 */
    sg_value r1 = CALL(&F, "select.int", AV(a), AI("0"), AI("1"));
    CALL(&F, "add_.Tensor", AV(r0), AV(r1)); /* in place, reading other positions: 1 and a buffer */
    sg__xrun *r = start_run(&F);
    long before = h.calls;
    if (sg__xrun_rest(r))
        fail_msg("run: %s", sg_ctx_last_error_msg(C));
    long calls = h.calls - before;
    if (calls > 16) /* 3 + 1 + 1 + 1 + 3 + 3 + 1 + 1 + 2; 24 with a buffer per result and the elements apart */
        fail_msg("the run made %ld allocations, expected at most 16", calls);
    expect(r, ad, "[[1.0, 1.0, 5.0], [4.0, 4.0, 8.0]]");
    expect(r, sn, "[[0.0, 9.0], [1.0, 16.0], [4.0, 25.0]]");
    expect(r, cl, "[[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]");
    expect(r, a, "[[3.0, 5.0, 7.0], [3.0, 4.0, 5.0]]");
    expect(r, tr, "[[3.0, 3.0], [5.0, 4.0], [7.0, 5.0]]");
    assert_int_equal(T(r, sn)->strides[0], 1);
    assert_int_equal(T(r, sn)->strides[1], 3);
    assert_int_equal(T(r, cl)->strides[0], 1);
    assert_int_equal(T(r, cl)->strides[1], 3);
    sg__xrun_free(r);
    /* a transposed matrix made contiguous (float64 and int64: the copy's two loops without a call per row),
       and a copy into a column of a wider matrix (strided rows on both sides); torch 1.13:
       a.t().clone(memory_format=torch.contiguous_format) with a = arange(6.).view(2, 3) gives
       [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]], strides (2, 1) */
    ffinish(&F);
    fstart(&F);
    sg_arg cf = {.kind = SG_ARG_MEMORY_FORMAT, .u.memory_format = SG_CONTIGUOUS_FORMAT, .name = "memory_format"};
    a = input(&F, "a", SG_FLOAT64, 2, s23, I6, false);
    sg_value ai = input(&F, "ai", SG_INT64, 2, s23, I6, false);
    int64_t s34[2] = {3, 4};
    sg_value w = input(&F, "w", SG_FLOAT64, 2, s34, NULL, false);
    sg_value b3 = input(&F, "b3", SG_FLOAT64, 1, s3, (double[]){1, 2, 4}, false);
    /* float64 results of two dimensions (the binary operators' two loops): an operand broadcast along
       rows, and a number with a strided slice; alpha 2 goes through the rows */
    sg_value sub = CALL(&F, "sub.Tensor", AV(a), AV(b3));
    sg_value dv = CALL(&F, "div.Tensor", AV(a), AV(b3));
    sg_value mb = CALL(&F, "mul.Tensor", AV(a), AV(b3));
    sg_arg two = AF(2.0);
    two.name = "alpha";
    sg_value a2 = CALL(&F, "add.Tensor", AV(a), AV(b3), two);
    sg_value sl = CALL(&F, "mul.Tensor", AV(CALL(&F, "slice.Tensor", AV(a), AI("1"), AI("0"), AI("2"))), AF(2.0));
    sg_value ct = CALL(&F, "clone", AV(CALL(&F, "transpose.int", AV(a), AI("0"), AI("1"))), cf);
    sg_value cti = CALL(&F, "clone", AV(CALL(&F, "transpose.int", AV(ai), AI("0"), AI("1"))), cf);
    sg_value col = CALL(&F, "slice.Tensor", AV(w), AI("1"), AI("1"), AI("3"));
    CALL(&F, "copy_", AV(col), AV(CALL(&F, "transpose.int", AV(a), AI("0"), AI("1"))));
    r = start_run(&F);
    if (sg__xrun_rest(r))
        fail_msg("run: %s", sg_ctx_last_error_msg(C));
    expect(r, ct, "[[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]");
    expect(r, cti, "[[0, 3], [1, 4], [2, 5]]");
    expect(r, w, "[[0.0, 0.0, 3.0, 0.0], [0.0, 1.0, 4.0, 0.0], [0.0, 2.0, 5.0, 0.0]]");
    assert_int_equal(T(r, ct)->strides[0], 2);
    assert_int_equal(T(r, ct)->strides[1], 1);
    expect(r, sub, "[[-1.0, -1.0, -2.0], [2.0, 2.0, 1.0]]");
    expect(r, dv, "[[0.0, 0.5, 0.5], [3.0, 2.0, 1.25]]");
    expect(r, mb, "[[0.0, 2.0, 8.0], [3.0, 8.0, 20.0]]");
    expect(r, a2, "[[2.0, 5.0, 10.0], [5.0, 8.0, 13.0]]");
    expect(r, sl, "[[0.0, 2.0], [6.0, 8.0]]");
    sg__xrun_free(r);
    ffinish(&F);
    sg_ctx_free(C);
    C = saved;
    assert_int_equal(h.live, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_print),
        cmocka_unit_test(test_views),
        cmocka_unit_test(test_pointwise),
        cmocka_unit_test(test_inplace_views),
        cmocka_unit_test(test_out_set),
        cmocka_unit_test(test_copy_fill),
        cmocka_unit_test(test_data_dependent),
        cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_matmul_cat),
        cmocka_unit_test(test_creation),
        cmocka_unit_test(test_input_mismatch),
        cmocka_unit_test(test_public_tensors),
        cmocka_unit_test(test_public_run),
        cmocka_unit_test(test_hidden_base),
        cmocka_unit_test(test_run_chain),
        cmocka_unit_test(test_scatters),
        cmocka_unit_test(test_more_pointwise),
        cmocka_unit_test(test_data_flag),
        cmocka_unit_test(test_no_kernel),
        cmocka_unit_test(test_oom),
        cmocka_unit_test(test_block_cache),
        cmocka_unit_test(test_overlap_exact),
        cmocka_unit_test(test_direct_writes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
