/* Derivative formulas (graph/derivatives.c) and the backward of a graph
 * (graph/autograd.c). Each case traces a small forward through the public
 * tracer (inputs x, y that require grad, a seed s of the output's sizes),
 * appends its backward with sg__graph_backward, runs the whole graph on
 * concrete values and compares the gradients of the loss sum(out * s) with
 * central finite differences in float64 (step 1e-6), an oracle independent
 * of the formulas. Other tests: the operators each backward records
 * against PyTorch 1.13's traced backward (test_ops), the shapes of a
 * backward with symbolic sizes, what requires grad (no_grad, detach,
 * ints), gradients that meet, and the errors. */
#include "cmocka_all.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "exec/exec_private.h"
#include "graph/derivatives.h"
#include "graph/graph.h"
#include "graph/tracer_private.h"
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

#define MAXIN 4

/* A forward being built: its inputs (values, concrete tensors) in order. */
typedef struct fx {
    sg_env *env;
    sg_inputs *in;
    sg_tracer *t;
    size_t n;
    sg_value v[MAXIN];
    sg__xtensor *x[MAXIN];
    bool rg[MAXIN];
} fx;

static void fstart(fx *F)
{
    memset(F, 0, sizeof *F);
    assert_int_equal(sg_env_new(C, NULL, &F->env), SG_OK);
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

/* An input of the given sizes (static, or dynamic: duck-sized symbols),
 * requiring grad or not, holding values k of the pattern below (positive
 * ones where pos). */
static sg_value input(fx *F, const char *name, size_t n, const int64_t *sizes, bool rg, bool pos, bool dynamic)
{
    const sg_source *src;
    const sg_fake *fake;
    sg_value v;
    sg_dim_spec spec[4];
    for (int i = 0; i < 4; i++)
        spec[i] = (sg_dim_spec){dynamic ? SG_DIM_DUCK : SG_DIM_STATIC, NULL, NULL};
    sg_tensor_context tc = {.sizes = spec};
    assert_int_equal(sg_source_local(C, &src, name), SG_OK);
    sg_tensor_value tv = {.ndim = n, .sizes = sizes};
    if (sg_inputs_tensor(F->in, src, &tv, &tc, &fake))
        fail_msg("input %s: %s", name, sg_ctx_last_error_msg(C));
    if (sg_tracer_input_tensor(F->t, &v, name, fake, SG_FLOAT64, rg))
        fail_msg("tracer input %s: %s", name, sg_ctx_last_error_msg(C));
    sg__xtensor *x;
    assert_int_equal(sg__xt_new(C, &x, SG_FLOAT64, n, sizes), SG_OK);
    for (int64_t i = 0; i < sg__xt_numel(x); i++) { /* values in [-1.9, 1.9] (pos: [0.3, 2.2]), no two alike */
        double u = (double)((37 * (i + 7 * (int64_t)F->n) + 11) % 41) / 41.0;
        sg__xt_set_f(x, i, pos ? 0.3 + 1.9 * u : 3.8 * u - 1.9 + 0.013 * (double)F->n);
    }
    F->v[F->n] = v;
    F->rg[F->n] = rg;
    F->x[F->n++] = x;
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

static sg_arg AK(const char *name, sg_arg a)
{
    a.name = name;
    return a;
}

/* An int list argument, from "[a, b]" parsed element by element. */
static sg_arg AL(size_t n, const char *const *items)
{
    static const sg_expr *keep[16][8];
    static int next;
    const sg_expr **e = keep[next++ % 16];
    for (size_t k = 0; k < n; k++)
        e[k] = E(items[k]);
    return (sg_arg){.kind = SG_ARG_INTS, .u.ints = {n, e}};
}
#define LIST(...) AL(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *), (const char *[]){__VA_ARGS__})

static sg_value call(fx *F, const char *op, const sg_arg *args, size_t n)
{
    sg_value v;
    if (sg_tracer_call(F->t, &v, op, args, n, 1))
        fail_msg("%s: %s", op, sg_ctx_last_error_msg(C));
    return v;
}

#define CALL(F, op, ...) call(F, op, (sg_arg[]){__VA_ARGS__}, sizeof((sg_arg[]){__VA_ARGS__}) / sizeof(sg_arg))

/* The backward of out seeded with seed, for every input that requires
 * grad: their gradients' values into grads (SG_NOVAL: none). */
static void backward(fx *F, sg_value out, sg_value seed, uint32_t *grads)
{
    uint32_t ins[MAXIN];
    for (size_t i = 0; i < F->n; i++)
        ins[i] = F->v[i];
    sg__backward b = {.outs = &out, .seeds = &seed, .nout = 1, .ins = ins, .nin = F->n, .grads = grads};
    if (sg__graph_backward((sg__graph *)sg__tracer_graph(F->t), &b))
        fail_msg("backward: %s", sg_ctx_last_error_msg(C));
}

static sg__xrun *run(fx *F)
{
    sg__xrun *r;
    assert_int_equal(sg__xrun_new(C, sg__tracer_graph(F->t), &r), SG_OK);
    for (size_t i = 0; i < F->n; i++) {
        sg__xval x = {.kind = SG_XV_TENSOR, .u.t = F->x[i]};
        if (sg__xrun_input(r, F->v[i], &x))
            fail_msg("input %zu: %s", i, sg_ctx_last_error_msg(C));
    }
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

/* Element i (row-major) of a tensor of any layout. */
static double at(const sg__xtensor *t, int64_t i)
{
    int64_t off = t->offset;
    for (uint32_t d = t->ndim; d-- > 0;) {
        off += (i % t->sizes[d]) * t->strides[d];
        i /= t->sizes[d];
    }
    return sg__xt_get_f(&(sg__xtensor){.st = t->st, .dtype = t->dtype, .ndim = 1, .sizes = (int64_t[]){off + 1},
                                         .strides = (int64_t[]){1}, .offset = 0},
                        off);
}

/* sum(out * seed) of a run. */
static double loss(sg__xrun *r, sg_value out, sg_value seed)
{
    const sg__xtensor *o = T(r, out), *s = T(r, seed);
    double acc = 0;
    for (int64_t i = 0; i < sg__xt_numel(o); i++)
        acc += at(o, i) * at(s, i);
    return acc;
}

/* The gradients the backward gives against central differences of the
 * loss, for every input that requires grad (an input without a gradient:
 * every difference 0). */
static void check_fd(fx *F, sg_value out, sg_value seed, const uint32_t *grads, const char *what)
{
    sg__xrun *r = run(F);
    for (size_t k = 0; k < F->n; k++) {
        if (!F->rg[k])
            continue;
        const sg__xtensor *g = grads[k] == SG_NOVAL ? NULL : T(r, grads[k]);
        sg__xtensor *x = F->x[k];
        if (g && sg__xt_numel(g) != sg__xt_numel(x))
            fail_msg("%s: the gradient of input %zu has %lld elements, the input %lld", what, k,
                     (long long)sg__xt_numel(g), (long long)sg__xt_numel(x));
        for (int64_t i = 0; i < sg__xt_numel(x); i++) {
            double x0 = sg__xt_get_f(x, i), h = 1e-6;
            sg__xt_set_f(x, i, x0 + h);
            sg__xrun *rp = run(F);
            double lp = loss(rp, out, seed);
            sg__xrun_free(rp);
            sg__xt_set_f(x, i, x0 - h);
            sg__xrun *rm = run(F);
            double lm = loss(rm, out, seed);
            sg__xrun_free(rm);
            sg__xt_set_f(x, i, x0);
            double fd = (lp - lm) / (2 * h), got = g ? at(g, i) : 0.0;
            if (fabs(fd - got) > 1e-5 * (1 + fabs(fd)))
                fail_msg("%s: d loss / d input %zu [%lld]: backward %.10g, finite differences %.10g", what, k,
                         (long long)i, got, fd);
        }
    }
    sg__xrun_free(r);
}

/* A case: the forward traced by build over inputs x (and y where ny), the
 * seed of the output's sizes declared first (it takes no grad). */
typedef sg_value (*build_fn)(fx *F, sg_value x, sg_value y);

static char *ops_since(const sg__graph *g, size_t before);

/* Trace the forward (seed, x, y), append its backward, then check its
 * gradients against finite differences (ops NULL), or that the backward
 * recorded the operators ops. */
static void run_case(const char *what, const char *ops, size_t nout, const int64_t *osz, size_t nx,
                     const int64_t *xsz, size_t ny, const int64_t *ysz, bool pos, build_fn build)
{
    fx F;
    fstart(&F);
    sg_value seed = input(&F, "s", nout, osz, false, false, false);
    sg_value x = input(&F, "x", nx, xsz, true, pos, false);
    sg_value y = ysz ? input(&F, "y", ny, ysz, true, pos, false) : SG_NOVAL;
    sg_value out = build(&F, x, y);
    size_t before = sg__tracer_graph(F.t)->nnodes;
    uint32_t grads[MAXIN];
    backward(&F, out, seed, grads);
    if (ops)
        assert_string_equal(ops_since(sg__tracer_graph(F.t), before), ops);
    else
        check_fd(&F, out, seed, grads, what);
    ffinish(&F);
}

static void fd_case(const char *what, size_t nout, const int64_t *osz, size_t nx, const int64_t *xsz, size_t ny,
                    const int64_t *ysz, bool pos, build_fn build)
{
    run_case(what, NULL, nout, osz, nx, xsz, ny, ysz, pos, build);
}

/* ---- the cases ---- */

static sg_value b_add(fx *F, sg_value x, sg_value y)
{
    return CALL(F, "add.Tensor", AV(x), AV(y), AK("alpha", AI("2")));
}
static sg_value b_sub(fx *F, sg_value x, sg_value y)
{
    return CALL(F, "sub.Tensor", AV(x), AV(y), AK("alpha", AF(0.5)));
}
static sg_value b_mul(fx *F, sg_value x, sg_value y)
{
    return CALL(F, "mul.Tensor", AV(x), AV(y));
}
static sg_value b_div(fx *F, sg_value x, sg_value y)
{
    return CALL(F, "div.Tensor", AV(x), AV(y));
}
static sg_value b_scalars(fx *F, sg_value x, sg_value y)
{
    (void)y;
    sg_value a = CALL(F, "rsub.Scalar", AV(x), AF(3.0), AI("2"));
    sg_value b = CALL(F, "mul.Scalar", AV(a), AF(2.5));
    sg_value c = CALL(F, "div.Scalar", AV(b), AI("4"));
    sg_value d = CALL(F, "add.Scalar", AV(c), AF(1.5));
    return CALL(F, "sub.Scalar", AV(d), AI("1"));
}
static sg_value b_unary(fx *F, sg_value x, sg_value y)
{
    (void)y;
    sg_value a = CALL(F, "sin", AV(x));
    sg_value b = CALL(F, "cos", AV(a));
    sg_value c = CALL(F, "exp", AV(b));
    return CALL(F, "neg", AV(CALL(F, "log", AV(c))));
}
static sg_value b_log(fx *F, sg_value x, sg_value y)
{
    (void)y;
    return CALL(F, "log", AV(x));
}
static sg_value b_sum(fx *F, sg_value x, sg_value y)
{
    (void)y;
    return CALL(F, "sum", AV(CALL(F, "mul.Tensor", AV(x), AV(x))));
}
static sg_value b_sum_dim(fx *F, sg_value x, sg_value y)
{
    (void)y;
    return CALL(F, "sum.dim_IntList", AV(x), LIST("0", "-1"));
}
static sg_value b_sum_dim_keep(fx *F, sg_value x, sg_value y)
{
    (void)y;
    return CALL(F, "sum.dim_IntList", AV(x), LIST("1"), AB(1));
}
static sg_value b_mean(fx *F, sg_value x, sg_value y)
{
    (void)y;
    return CALL(F, "mean", AV(CALL(F, "sin", AV(x))));
}
static sg_value b_mean_dim(fx *F, sg_value x, sg_value y)
{
    (void)y;
    return CALL(F, "mean.dim", AV(x), LIST("2", "0"), AB(1));
}
static sg_value b_views(fx *F, sg_value x, sg_value y)
{
    (void)y; /* x [2, 6]: view [3, 4], t, unsqueeze, expand, permute */
    sg_value a = CALL(F, "view", AV(x), LIST("3", "4"));
    sg_value b = CALL(F, "t", AV(a));                          /* [4, 3] */
    sg_value c = CALL(F, "unsqueeze", AV(b), AI("0"));         /* [1, 4, 3] */
    sg_value d = CALL(F, "expand", AV(c), LIST("2", "4", "3")); /* [2, 4, 3] */
    sg_value e = CALL(F, "permute", AV(d), LIST("2", "0", "1")); /* [3, 2, 4] */
    return CALL(F, "mul.Tensor", AV(e), AV(e));
}
static sg_value b_view_noncontig(fx *F, sg_value x, sg_value y)
{
    (void)y; /* x [2, 6]: view [3, 4], then t: the gradient reaching the view is not contiguous */
    sg_value a = CALL(F, "view", AV(x), LIST("3", "4"));
    return CALL(F, "sin", AV(CALL(F, "t", AV(a))));
}
static sg_value b_squeezes(fx *F, sg_value x, sg_value y)
{
    (void)y; /* x [2, 1, 3, 1] */
    sg_value a = CALL(F, "squeeze.dim", AV(x), AI("1"));   /* [2, 3, 1] */
    sg_value b = CALL(F, "squeeze.dim", AV(a), AI("0"));   /* [2, 3, 1]: no change */
    sg_value c = CALL(F, "transpose.int", AV(b), AI("0"), AI("2")); /* [1, 3, 2] */
    sg_value d = CALL(F, "squeeze", AV(c));                 /* [3, 2] */
    return CALL(F, "exp", AV(CALL(F, "clone", AV(d))));
}
static sg_value b_mm(fx *F, sg_value x, sg_value y)
{
    return CALL(F, "mm", AV(x), AV(y));
}
static sg_value b_meet(fx *F, sg_value x, sg_value y)
{
    /* x * y + sin(x) * x: x's gradient gathered from three uses */
    sg_value a = CALL(F, "mul.Tensor", AV(x), AV(y));
    sg_value b = CALL(F, "mul.Tensor", AV(CALL(F, "sin", AV(x))), AV(x));
    return CALL(F, "add.Tensor", AV(a), AV(b));
}

static void test_fd(void **state)
{
    (void)state;
    int64_t s23[2] = {2, 3}, s3[1] = {3}, s21[2] = {2, 1}, s2[1] = {2}, s413[3] = {4, 1, 3}, s423[3] = {4, 2, 3},
            s234[3] = {2, 3, 4}, s3x[1] = {3}, s214[3] = {2, 1, 4}, s26[2] = {2, 6}, s324[3] = {3, 2, 4},
            s43[2] = {4, 3}, s2131[4] = {2, 1, 3, 1}, s32[2] = {3, 2}, s34[2] = {3, 4}, s24[2] = {2, 4}, s0[1] = {0};
    (void)s0;
    fd_case("add broadcast", 2, s23, 2, s23, 1, s3, false, b_add);
    fd_case("sub both broadcast", 2, s23, 2, s21, 1, s3, false, b_sub);
    fd_case("mul", 2, s23, 2, s23, 2, s23, false, b_mul);
    fd_case("mul broadcast", 3, s423, 3, s413, 2, s23, false, b_mul);
    fd_case("div", 2, s23, 1, s3, 2, s23, true, b_div);
    fd_case("scalars", 2, s23, 2, s23, 0, NULL, false, b_scalars);
    fd_case("sin cos exp log neg", 2, s23, 2, s23, 0, NULL, false, b_unary);
    fd_case("log", 1, s3, 1, s3, 0, NULL, true, b_log);
    fd_case("sum", 0, NULL, 2, s23, 0, NULL, false, b_sum);
    fd_case("sum.dim_IntList", 1, s3x, 3, s234, 0, NULL, false, b_sum_dim);
    fd_case("sum.dim_IntList keepdim", 3, s214, 3, s234, 0, NULL, false, b_sum_dim_keep);
    fd_case("mean", 0, NULL, 2, s23, 0, NULL, false, b_mean);
    fd_case("mean.dim keepdim", 3, (int64_t[]){1, 3, 1}, 3, s234, 0, NULL, false, b_mean_dim);
    fd_case("views", 3, s324, 2, s26, 0, NULL, false, b_views);
    fd_case("view of a gradient not contiguous", 2, s43, 2, s26, 0, NULL, false, b_view_noncontig);
    fd_case("squeezes, transpose, clone", 2, s32, 4, s2131, 0, NULL, false, b_squeezes);
    fd_case("mm", 2, s24, 2, s23, 2, s34, false, b_mm);
    fd_case("gradients that meet", 2, s23, 2, s23, 2, s23, false, b_meet);
    (void)s2;
}

/* ---- the formulas of the other operators ---- */

#define UNARY(fn, body)                                   \
    static sg_value fn(fx *F, sg_value x, sg_value y)     \
    {                                                     \
        (void)y;                                          \
        return body;                                      \
    }
UNARY(b_abs, CALL(F, "abs", AV(x)))
UNARY(b_reciprocal, CALL(F, "reciprocal", AV(x)))
UNARY(b_tanh, CALL(F, "tanh", AV(x)))
UNARY(b_sigmoid, CALL(F, "sigmoid", AV(x)))
UNARY(b_relu, CALL(F, "relu", AV(x)))
UNARY(b_pow_half, CALL(F, "pow.Tensor_Scalar", AV(x), AF(2.5)))
UNARY(b_pow_int, CALL(F, "pow.Tensor_Scalar", AV(x), AI("3")))
UNARY(b_pow_zero, CALL(F, "pow.Tensor_Scalar", AV(x), AI("0")))
UNARY(b_clamp, CALL(F, "clamp", AV(x), AF(-0.5), AF(0.7)))
UNARY(b_clamp_min, CALL(F, "clamp", AV(x), AF(-0.5)))
UNARY(b_clamp_max, CALL(F, "clamp", AV(x), AK("max", AF(0.7))))
UNARY(b_amax, CALL(F, "amax", AV(x), LIST("1")))
UNARY(b_amin_keep, CALL(F, "amin", AV(x), LIST("0", "-1"), AB(1)))
UNARY(b_amax_all, CALL(F, "amax", AV(x)))
UNARY(b_select, CALL(F, "select.int", AV(x), AI("1"), AI("-1")))
UNARY(b_slice, CALL(F, "slice.Tensor", AV(x), AI("1"), AI("1"), AK("step", AI("2"))))
UNARY(b_slice_start, CALL(F, "slice.Tensor", AV(x), AI("0"), (sg_arg){.kind = SG_ARG_NONE}, AI("-1")))
UNARY(b_narrow, CALL(F, "narrow", AV(x), AI("0"), AI("-3"), AI("2")))
UNARY(b_diagonal, CALL(F, "diagonal", AV(x), AI("1")))
UNARY(b_diagonal_neg, CALL(F, "diagonal", AV(x), AI("-1"), AI("1"), AI("0")))
UNARY(b_as_strided, CALL(F, "as_strided", AV(x), LIST("2", "2"), LIST("1", "2"), AI("1")))
/* a size of 1 squeezed, a stride of 0 summed */
UNARY(b_as_strided_odd, CALL(F, "as_strided", AV(x), LIST("2", "3", "1"), LIST("2", "0", "1"), AI("1")))
/* of a transposed view: the gradient has self's strides */
UNARY(b_as_strided_t, CALL(F, "as_strided", AV(CALL(F, "t", AV(x))), LIST("2", "2"), LIST("4", "1"), AI("1")))
UNARY(b_zero, CALL(F, "add.Tensor", AV(CALL(F, "zero", AV(x))), AV(CALL(F, "sin", AV(x)))))
UNARY(b_fill, CALL(F, "mul.Tensor", AV(CALL(F, "fill.Scalar", AV(x), AF(2.0))), AV(x)))

static sg_value b_pow_tt(fx *F, sg_value x, sg_value y)
{
    return CALL(F, "pow.Tensor_Tensor", AV(x), AV(y));
}
static sg_value b_pow_base(fx *F, sg_value x, sg_value y)
{
    (void)y;
    return CALL(F, "pow.Scalar", AF(2.0), AV(x));
}
static sg_value b_pow_base0(fx *F, sg_value x, sg_value y)
{
    (void)y; /* 0 ** x, x > 0: the where of a base 0 */
    return CALL(F, "pow.Scalar", AF(0.0), AV(x));
}
static sg_value b_clamp_tensor(fx *F, sg_value x, sg_value y)
{
    /* min y, max y + 0.5: y's gradient from both bounds */
    return CALL(F, "clamp.Tensor", AV(x), AV(y), AV(CALL(F, "add.Scalar", AV(y), AF(0.5))));
}
static sg_value b_clamp_tensor_min(fx *F, sg_value x, sg_value y)
{
    return CALL(F, "clamp.Tensor", AV(x), AV(y));
}
static sg_value b_where(fx *F, sg_value x, sg_value y)
{
    return CALL(F, "where.self", AV(CALL(F, "gt.Scalar", AV(x), AI("0"))), AV(x), AV(y));
}
static sg_value b_masked_select(fx *F, sg_value x, sg_value y)
{
    /* x [3] under a mask [2, 3] of y: x's gradient summed over the rows */
    sg_value m = CALL(F, "masked_select", AV(x), AV(CALL(F, "gt.Scalar", AV(y), AI("0"))));
    return CALL(F, "sum", AV(CALL(F, "sin", AV(m))));
}
static sg_value b_bmm(fx *F, sg_value x, sg_value y)
{
    return CALL(F, "bmm", AV(x), AV(y));
}
static sg_value b_mv(fx *F, sg_value x, sg_value y)
{
    return CALL(F, "mv", AV(x), AV(y));
}
static sg_value b_dot(fx *F, sg_value x, sg_value y)
{
    return CALL(F, "dot", AV(x), AV(y));
}
static sg_value b_unbind(fx *F, sg_value x, sg_value y)
{
    (void)y; /* x [2, 3] unbound at 1: parts 0 and 2 used, 1 not */
    sg_value l = CALL(F, "unbind.int", AV(x), AI("1"));
    sg_value a = sg_tracer_list_get(F->t, l, 0), c = sg_tracer_list_get(F->t, l, 2);
    return CALL(F, "add.Tensor", AV(CALL(F, "mul.Tensor", AV(a), AI("2"))), AV(CALL(F, "sin", AV(c))));
}
static sg_value b_cat(fx *F, sg_value x, sg_value y)
{
    sg_value l[3] = {x, y, x};
    return CALL(F, "cat", (sg_arg){.kind = SG_ARG_VALUES, .u.values = {3, l}}, AI("-1"));
}
static sg_value b_stack(fx *F, sg_value x, sg_value y)
{
    sg_value l[2] = {y, x};
    return CALL(F, "stack", (sg_arg){.kind = SG_ARG_VALUES, .u.values = {2, l}}, AI("-1"));
}
static sg_value b_copy(fx *F, sg_value x, sg_value y)
{
    return CALL(F, "copy", AV(x), AV(y));
}
static sg_value b_fill_tensor(fx *F, sg_value x, sg_value y)
{
    return CALL(F, "mul.Tensor", AV(CALL(F, "fill.Tensor", AV(x), AV(y))), AV(x));
}
static sg_value b_select_scatter(fx *F, sg_value x, sg_value y)
{
    return CALL(F, "select_scatter", AV(x), AV(y), AI("1"), AI("-1"));
}
static sg_value b_slice_scatter(fx *F, sg_value x, sg_value y)
{
    return CALL(F, "slice_scatter", AV(x), AV(y), AI("1"), AI("1"), (sg_arg){.kind = SG_ARG_NONE}, AI("2"));
}
static sg_value b_diagonal_scatter(fx *F, sg_value x, sg_value y)
{
    return CALL(F, "diagonal_scatter", AV(x), AV(y), AI("1"));
}
static sg_value b_as_strided_scatter(fx *F, sg_value x, sg_value y)
{
    return CALL(F, "as_strided_scatter", AV(x), AV(y), LIST("2", "2"), LIST("1", "2"), AI("1"));
}

/* A case of the table below: the output's, x's and y's sizes (y where has_y). */
typedef struct fd_row {
    const char *what;
    size_t nout;
    int64_t osz[3];
    size_t nx;
    int64_t xsz[3];
    size_t ny;
    int64_t ysz[3];
    bool has_y, pos;
    build_fn build;
} fd_row;

static void test_fd_more(void **state)
{
    (void)state;
    static const fd_row rows[] = {
        {"abs", 2, {2, 3}, 2, {2, 3}, 0, {0}, false, false, b_abs},
        {"reciprocal", 2, {2, 3}, 2, {2, 3}, 0, {0}, false, true, b_reciprocal},
        {"tanh", 2, {2, 3}, 2, {2, 3}, 0, {0}, false, false, b_tanh},
        {"sigmoid", 2, {2, 3}, 2, {2, 3}, 0, {0}, false, false, b_sigmoid},
        {"relu", 2, {2, 3}, 2, {2, 3}, 0, {0}, false, false, b_relu},
        {"pow.Tensor_Scalar 2.5", 2, {2, 3}, 2, {2, 3}, 0, {0}, false, true, b_pow_half},
        {"pow.Tensor_Scalar 3", 2, {2, 3}, 2, {2, 3}, 0, {0}, false, false, b_pow_int},
        {"pow.Tensor_Scalar 0", 2, {2, 3}, 2, {2, 3}, 0, {0}, false, false, b_pow_zero},
        {"pow.Tensor_Tensor broadcast", 2, {2, 3}, 1, {3}, 2, {2, 3}, true, true, b_pow_tt},
        {"pow.Scalar", 2, {2, 3}, 2, {2, 3}, 0, {0}, false, false, b_pow_base},
        {"pow.Scalar base 0", 2, {2, 3}, 2, {2, 3}, 0, {0}, false, true, b_pow_base0},
        {"clamp", 2, {2, 3}, 2, {2, 3}, 0, {0}, false, false, b_clamp},
        {"clamp min", 2, {2, 3}, 2, {2, 3}, 0, {0}, false, false, b_clamp_min},
        {"clamp max", 2, {2, 3}, 2, {2, 3}, 0, {0}, false, false, b_clamp_max},
        {"clamp.Tensor", 2, {2, 3}, 2, {2, 3}, 2, {2, 3}, true, false, b_clamp_tensor},
        {"clamp.Tensor min broadcast", 2, {2, 3}, 2, {2, 3}, 1, {3}, true, false, b_clamp_tensor_min},
        {"where broadcast", 2, {2, 3}, 2, {2, 3}, 1, {3}, true, false, b_where},
        {"amax", 2, {2, 4}, 3, {2, 3, 4}, 0, {0}, false, false, b_amax},
        {"amin keepdim", 3, {1, 3, 1}, 3, {2, 3, 4}, 0, {0}, false, false, b_amin_keep},
        {"amax of all", 0, {0}, 2, {2, 3}, 0, {0}, false, false, b_amax_all},
        {"masked_select broadcast", 0, {0}, 1, {3}, 2, {2, 3}, true, false, b_masked_select},
        {"bmm", 3, {2, 3, 5}, 3, {2, 3, 4}, 3, {2, 4, 5}, true, false, b_bmm},
        {"mv", 1, {3}, 2, {3, 4}, 1, {4}, true, false, b_mv},
        {"dot", 0, {0}, 1, {4}, 1, {4}, true, false, b_dot},
        {"select", 1, {2}, 2, {2, 3}, 0, {0}, false, false, b_select},
        {"slice step", 2, {2, 2}, 2, {2, 5}, 0, {0}, false, false, b_slice},
        {"slice of None start", 2, {3, 3}, 2, {4, 3}, 0, {0}, false, false, b_slice_start},
        {"narrow", 2, {2, 3}, 2, {4, 3}, 0, {0}, false, false, b_narrow},
        {"diagonal", 1, {3}, 2, {3, 4}, 0, {0}, false, false, b_diagonal},
        {"diagonal negative", 1, {3}, 2, {3, 4}, 0, {0}, false, false, b_diagonal_neg},
        {"as_strided", 2, {2, 2}, 1, {6}, 0, {0}, false, false, b_as_strided},
        {"as_strided size 1, stride 0", 3, {2, 3, 1}, 1, {6}, 0, {0}, false, false, b_as_strided_odd},
        {"as_strided of a transposed view", 2, {2, 2}, 2, {3, 4}, 0, {0}, false, false, b_as_strided_t},
        {"unbind", 1, {2}, 2, {2, 3}, 0, {0}, false, false, b_unbind},
        {"cat", 2, {2, 10}, 2, {2, 3}, 2, {2, 4}, true, false, b_cat},
        {"stack", 3, {2, 3, 2}, 2, {2, 3}, 2, {2, 3}, true, false, b_stack},
        {"copy broadcast", 2, {2, 3}, 2, {2, 3}, 1, {3}, true, false, b_copy},
        {"zero", 2, {2, 3}, 2, {2, 3}, 0, {0}, false, false, b_zero},
        {"fill.Scalar", 2, {2, 3}, 2, {2, 3}, 0, {0}, false, false, b_fill},
        {"fill.Tensor", 2, {2, 3}, 2, {2, 3}, 0, {0}, true, false, b_fill_tensor},
        {"select_scatter", 2, {2, 3}, 2, {2, 3}, 1, {2}, true, false, b_select_scatter},
        {"slice_scatter", 2, {2, 7}, 2, {2, 7}, 2, {2, 3}, true, false, b_slice_scatter},
        {"diagonal_scatter", 2, {3, 4}, 2, {3, 4}, 1, {3}, true, false, b_diagonal_scatter},
        {"as_strided_scatter", 1, {6}, 1, {6}, 2, {2, 2}, true, false, b_as_strided_scatter},
    };
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
        const fd_row *c = &rows[k];
        fd_case(c->what, c->nout, c->osz, c->nx, c->xsz, c->ny, c->has_y ? c->ysz : NULL, c->pos, c->build);
    }
}

/* The operators a backward records after the forward's nodes, as `ops`
 * prints them ("mul.Tensor mm"). */
static char *ops_since(const sg__graph *g, size_t before)
{
    static char buf[1024];
    buf[0] = 0;
    for (size_t i = before; i < g->nnodes; i++) {
        char name[2 * SG_SCHEMA_NAME];
        sg__schema_full_name(g->nodes[i].schema, name);
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", buf[0] ? " " : "", name);
    }
    return buf;
}

/* The operators each backward records, against PyTorch 1.13's traced
 * backward of the same forward (make_fx of torch.autograd.grad, its
 * detach, ones_like and is_same_size dropped; _reshape_alias written
 * view, as reshape records here): the order of the arguments' formulas
 * and the engine's sum_to after them. */
static void ops_case(const char *want, size_t nout, const int64_t *osz, size_t nx, const int64_t *xsz, size_t ny,
                     const int64_t *ysz, bool pos, build_fn build)
{
    run_case(want, want, nout, osz, nx, xsz, ny, ysz, pos, build);
}

static void test_ops(void **state)
{
    (void)state;
    int64_t s21[2] = {2, 1}, s3[1] = {3}, s23[2] = {2, 3}, s6[1] = {6}, s34[2] = {3, 4}, s4[1] = {4}, s24[2] = {2, 4},
            s22[2] = {2, 2}, s2[1] = {2};
    ops_case("mul.Tensor mul.Tensor sum.dim_IntList sum.dim_IntList view", 2, s23, 2, s21, 1, s3, false, b_mul);
    ops_case("mul.Scalar sum.dim_IntList sum.dim_IntList view", 2, s23, 2, s21, 1, s3, false, b_add);
    ops_case("div.Tensor div.Tensor neg mul.Tensor div.Tensor sum.dim_IntList sum.dim_IntList view", 2, s23, 2, s21,
             1, s3, true, b_div);
    ops_case("sgn mul.Tensor", 1, s3, 1, s3, 0, NULL, false, b_abs);
    ops_case("mul.Tensor neg mul.Tensor", 1, s3, 1, s3, 0, NULL, false, b_reciprocal);
    ops_case("threshold_backward", 1, s3, 1, s3, 0, NULL, false, b_relu);
    ops_case("pow.Tensor_Scalar mul.Scalar mul.Tensor", 1, s3, 1, s3, 0, NULL, false, b_pow_int);
    ops_case("zeros_like", 1, s3, 1, s3, 0, NULL, false, b_pow_zero);
    ops_case("ge.Scalar eq.Scalar logical_and log mul.Tensor zeros where.self mul.Tensor sub.Scalar "
             "pow.Tensor_Tensor mul.Tensor mul.Tensor zeros eq.Scalar where.self sum.dim_IntList view",
             2, s23, 1, s3, 2, s23, true, b_pow_tt);
    ops_case("mul.Scalar zeros ge.Scalar where.self mul.Tensor", 1, s3, 1, s3, 0, NULL, true, b_pow_base0);
    ops_case("scalar_tensor ge.Scalar le.Scalar logical_and_ where.self", 1, s3, 1, s3, 0, NULL, false, b_clamp);
    ops_case("scalar_tensor lt.Tensor lt.Tensor logical_and where.self gt.Tensor lt.Tensor logical_or where.self "
             "scalar_tensor ge.Tensor le.Tensor logical_and where.self add.Tensor", 1, s3, 1, s3, 1, s3, false,
             b_clamp_tensor);
    ops_case("scalar_tensor lt.Tensor where.self scalar_tensor ge.Tensor where.self sum.dim_IntList view", 2, s23, 2,
             s23, 1, s3, false, b_clamp_tensor_min);
    ops_case("scalar_tensor where.self scalar_tensor where.self sum.dim_IntList sum.dim_IntList view", 2, s23, 2, s21,
             1, s3, false, b_where);
    ops_case("view eq.Tensor view sum.dim_IntList div.Tensor mul.Tensor", 1, s2, 2, s23, 0, NULL, false, b_amax);
    ops_case("view mul.Tensor t mv", 1, s3, 2, s34, 1, s4, false, b_mv);
    ops_case("select_backward", 1, s2, 2, s23, 0, NULL, false, b_select);
    /* (1.13's eager formula records new_empty zero_ as_strided copy_ as_strided, writing into a view of
       the buffer; ours is functional, as the joint graph is: the write an as_strided_scatter) */
    ops_case("new_empty zero_ as_strided_scatter as_strided", 2, s22, 1, s6, 0, NULL, false, b_as_strided);
    ops_case("cos mul.Tensor mul.Tensor zeros expand stack", 1, s2, 2, s23, 0, NULL, false, b_unbind);
    ops_case("slice.Tensor slice.Tensor slice.Tensor add.Tensor", 2, (int64_t[]){2, 10}, 2, s23, 2, s24, false, b_cat);
    ops_case("zeros select_scatter select.int", 2, s23, 2, s23, 1, s2, false, b_select_scatter);
    ops_case("zeros diagonal_scatter diagonal", 2, s34, 2, s34, 1, s3, false, b_diagonal_scatter);
    ops_case("tanh_backward", 1, s3, 1, s3, 0, NULL, false, b_tanh);
    ops_case("expand cos mul.Tensor expand zeros_like masked_scatter sum.dim_IntList view", 0, NULL, 1, s3, 2, s23,
             false, b_masked_select);
    ops_case("mul.Scalar mul.Tensor", 1, s3, 1, s3, 0, NULL, false, b_pow_base);
    ops_case("eq.Tensor sum.dim_IntList div.Tensor mul.Tensor", 3, (int64_t[]){1, 3, 1}, 3, (int64_t[]){2, 3, 4}, 0,
             NULL, false, b_amin_keep);
    ops_case("transpose.int bmm transpose.int bmm", 3, (int64_t[]){2, 3, 5}, 3, (int64_t[]){2, 3, 4}, 3,
             (int64_t[]){2, 4, 5}, false, b_bmm);
    ops_case("mul.Tensor mul.Tensor", 0, NULL, 1, s4, 1, s4, false, b_dot);
    ops_case("select.int select.int", 3, (int64_t[]){2, 3, 2}, 2, s23, 2, s23, false, b_stack);
    ops_case("zeros_like sum.dim_IntList view", 2, s23, 2, s23, 1, s3, false, b_copy);
    ops_case("mul.Tensor mul.Tensor zeros_like sum add.Tensor", 2, s23, 2, s23, 0, (int64_t[]){0}, false,
             b_fill_tensor);
}

/* What the backward records, with symbolic sizes: add of x [s0, s1] and
 * y [s1] with alpha 2 records for y mul.Tensor then sum.dim_IntList over
 * dimension 0 with keepdim and a view to [s1]; x's gradient is the seed
 * itself (nothing recorded). The ops are PyTorch's sum_to_size
 * decomposition. */
static void test_symbolic(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s43[2] = {4, 3}, s3[1] = {3};
    sg_value seed = input(&F, "s", 2, s43, false, false, true);
    sg_value x = input(&F, "x", 2, s43, true, false, true);
    sg_value y = input(&F, "y", 1, s3, true, false, true);
    sg_value out = b_add(&F, x, y);
    const sg__graph *g = sg__tracer_graph(F.t);
    size_t before = g->nnodes;
    uint32_t grads[MAXIN];
    backward(&F, out, seed, grads);
    assert_int_equal(grads[0], SG_NOVAL); /* the seed takes no grad */
    assert_int_equal(grads[1], seed);
    const char *want[3] = {"mul", "sum", "view"};
    assert_int_equal(g->nnodes - before, 3);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(g->nodes[before + i].schema->name, want[i]);
    assert_int_equal(g->vals[grads[2]].u.t.ndim, 1);
    assert_ptr_equal(sg__graph_size(g, grads[2], 0), sg_tracer_size(F.t, y, 0));
    check_fd(&F, out, seed, grads, "symbolic add");
    ffinish(&F);
}

/* What requires grad: under no_grad nothing (the gradient of x through a
 * no_grad product is none), detach cuts, an input without the flag gets
 * none, and an output nothing reaches gives no gradient. */
static void test_requires_grad(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s3[1] = {3};
    sg_value seed = input(&F, "s", 1, s3, false, false, false);
    sg_value x = input(&F, "x", 1, s3, true, false, false);
    sg_value y = input(&F, "y", 1, s3, false, false, false);
    assert_int_equal(sg_tracer_set_grad_enabled(F.t, 0), SG_OK);
    sg_value a = CALL(&F, "mul.Tensor", AV(x), AV(x));
    assert_int_equal(sg_tracer_set_grad_enabled(F.t, 1), SG_OK);
    sg_value b = CALL(&F, "detach", AV(x));
    sg_value c = CALL(&F, "add.Tensor", AV(a), AV(b));
    sg_value out = CALL(&F, "mul.Tensor", AV(c), AV(y));
    uint32_t grads[MAXIN];
    const sg__graph *g = sg__tracer_graph(F.t);
    size_t before = g->nnodes;
    backward(&F, out, seed, grads);
    assert_int_equal(grads[1], SG_NOVAL);
    assert_int_equal(grads[2], SG_NOVAL);
    assert_int_equal(g->nnodes, before); /* nothing leads to x: nothing recorded */
    ffinish(&F);
}

/* The errors: a gradient reaching an operator without a formula (an
 * in-place one: functionalization leaves none), an as_strided view that overlaps itself (1.13 goes
 * through index_add_, which the table has not), a seed of other sizes,
 * NULL. */
static void test_errors(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s3[1] = {3}, s2[1] = {2}, s22[2] = {2, 2};
    sg_value seed = input(&F, "s", 0, s3, false, false, false);
    sg_value bad = input(&F, "b", 1, s2, false, false, false);
    sg_value seed2 = input(&F, "s2", 2, s22, false, false, false);
    sg_value x = input(&F, "x", 1, s3, true, false, false);
    sg_value out = CALL(&F, "sum", AV(CALL(&F, "sin_", AV(CALL(&F, "clone", AV(x))))));
    sg_value ov = CALL(&F, "as_strided", AV(x), LIST("2", "2"), LIST("1", "1"));
    sg__graph *g = (sg__graph *)sg__tracer_graph(F.t);
    uint32_t ins[1] = {x}, grads[1];
    sg__backward b = {.outs = &out, .seeds = &seed, .nout = 1, .ins = ins, .nin = 1, .grads = grads};
    assert_int_equal(sg__graph_backward(g, &b), SG_EUNSUPPORTED);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "the derivative of sin_"));
    b.outs = &ov;
    b.seeds = &seed2;
    assert_int_equal(sg__graph_backward(g, &b), SG_EUNSUPPORTED);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "derivative of as_strided: a layout that may overlap itself"));
    b.outs = &out;
    b.seeds = &bad;
    assert_int_equal(sg__graph_backward(g, &b), SG_EINVAL);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "seed 0"));
    assert_int_equal(sg__graph_backward(NULL, &b), SG_EINVAL);
    assert_int_equal(sg__graph_backward(g, NULL), SG_EINVAL);
    ffinish(&F);
}

/* Backward formulas over symbolic sizes: x [s0, s1] through select,
 * slice (None end), amax and unbind; the gradient has x's sizes (s0 the
 * same expression; s1 known to be the 3 unbind specialized it to) and
 * agrees with finite differences. */
static void test_symbolic_views(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s4[1] = {4}, s43[2] = {4, 3};
    sg_value seed = input(&F, "s", 1, s4, false, false, true);
    sg_value x = input(&F, "x", 2, s43, true, false, true);
    sg_value a = CALL(&F, "select.int", AV(x), AI("1"), AI("0"));
    sg_value sl = CALL(&F, "slice.Tensor", AV(x), AI("1"), AI("1"));
    sg_value m = CALL(&F, "amax", AV(sl), LIST("1"));
    sg_value u = sg_tracer_list_get(F.t, CALL(&F, "unbind.int", AV(x), AI("1")), 2);
    sg_value out = CALL(&F, "add.Tensor", AV(CALL(&F, "mul.Tensor", AV(a), AV(m))), AV(u));
    uint32_t grads[MAXIN];
    backward(&F, out, seed, grads);
    const sg__graph *g = sg__tracer_graph(F.t);
    for (size_t k = 0; k < 2; k++) { /* (unbind specialized s1 to 3: what the sum of the gradients keeps) */
        bool same;
        assert_int_equal(sg__known_same(F.env, sg__graph_size(g, grads[1], k), sg_tracer_size(F.t, x, k), &same),
                         SG_OK);
        assert_true(same);
    }
    assert_ptr_equal(sg__graph_size(g, grads[1], 0), sg_tracer_size(F.t, x, 0));
    check_fd(&F, out, seed, grads, "symbolic views");
    ffinish(&F);
}

/* as_strided over symbolic sizes: x [s0, s1] read transposed through
 * as_strided([s1, s0], [1, s1]); the backward asks about the layouts
 * (overlap, the storage both need) and its gradient has x's sizes. */
static void test_symbolic_as_strided(void **state)
{
    (void)state;
    fx F;
    fstart(&F);
    int64_t s34[2] = {3, 4}, s43[2] = {4, 3};
    sg_value seed = input(&F, "s", 2, s34, false, false, true);
    sg_value x = input(&F, "x", 2, s43, true, false, true);
    const sg_expr *sz[2] = {sg_tracer_size(F.t, x, 1), sg_tracer_size(F.t, x, 0)};
    const sg_expr *st[2] = {E("1"), sg_tracer_size(F.t, x, 1)};
    sg_value out = CALL(&F, "as_strided", AV(x), (sg_arg){.kind = SG_ARG_INTS, .u.ints = {2, sz}},
                        (sg_arg){.kind = SG_ARG_INTS, .u.ints = {2, st}});
    out = CALL(&F, "sin", AV(out));
    uint32_t grads[MAXIN];
    backward(&F, out, seed, grads);
    const sg__graph *g = sg__tracer_graph(F.t);
    for (size_t k = 0; k < 2; k++)
        assert_ptr_equal(sg__graph_size(g, grads[1], k), sg_tracer_size(F.t, x, k));
    check_fd(&F, out, seed, grads, "symbolic as_strided");
    ffinish(&F);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fd),
        cmocka_unit_test(test_fd_more),
        cmocka_unit_test(test_ops),
        cmocka_unit_test(test_symbolic),
        cmocka_unit_test(test_requires_grad),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_symbolic_views),
        cmocka_unit_test(test_symbolic_as_strided),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
