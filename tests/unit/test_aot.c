/* The view inverses of functionalization (src/aot/view_inverse.c): for each
 * view v of an input x, the new contents m = v * 2 written back into x by
 * sg__aot_view_inverse, run on concrete values and compared with a brute
 * force: every storage position the concrete view reaches doubled, the
 * others as they were (what torch gives for x.clone() with v's view
 * copy_'d from m). */
#include "cmocka_all.h"

#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "aot/aot_private.h"
#include "exec/exec.h"
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

/* A tracer over a new environment with one input x: f64[rows, cols]
 * (backed symbols). */
typedef struct traced {
    sg_env *env;
    sg_inputs *in;
    sg_tracer *t;
    sg_value x;
} traced;

static void trace_open_rg(traced *f, int64_t rows, int64_t cols, int requires_grad);

static void trace_open(traced *f, int64_t rows, int64_t cols)
{
    trace_open_rg(f, rows, cols, 0);
}

/* trace_open with x requiring grad as sg_tracer_input_tensor takes it. */
static void trace_open_rg(traced *f, int64_t rows, int64_t cols, int requires_grad)
{
    assert_int_equal(sg_env_new(C, NULL, &f->env), SG_OK);
    assert_int_equal(sg_inputs_new(f->env, NULL, &f->in), SG_OK);
    assert_int_equal(sg_tracer_new(f->env, &f->t), SG_OK);
    const sg_source *src;
    const sg_fake *fake;
    int64_t sizes[2] = {rows, cols};
    sg_tensor_value example = {.ndim = 2, .sizes = sizes};
    assert_int_equal(sg_source_local(C, &src, "x"), SG_OK);
    assert_int_equal(sg_inputs_tensor(f->in, src, &example, NULL, &fake), SG_OK);
    assert_int_equal(sg_tracer_input_tensor(f->t, &f->x, "x", fake, SG_FLOAT64, requires_grad), SG_OK);
}

/* The index of compiled program a's input name (one there is). */
static size_t input_named(const sg_aot *a, const char *name)
{
    size_t k = SIZE_MAX;
    for (size_t i = 0; i < sg_aot_ninputs(a); i++)
        if (!strcmp(sg_aot_input_name(a, i), name))
            k = i;
    assert_true(k != SIZE_MAX);
    return k;
}

static void trace_close(traced *f)
{
    sg_tracer_free(f->t);
    sg_inputs_free(f->in);
    sg_env_free(f->env);
}

typedef struct vcase {
    const char *op;
    int nints;         /* int arguments after self */
    int64_t ints[4];
    int nlist;         /* an int list argument (view, permute) */
    int64_t list[4];
    int nlist2;        /* a second list (as_strided's strides) then an int offset in ints[0] */
    int64_t list2[4];
} vcase;

/* Run r of graph g takes xt as its input x, and, where g has a synthetic
 * base (a placeholder named "base"), xt's storage as one dimension. */
static void bind_x(sg__xrun *r, const sg__graph *g, uint32_t x, sg_tensor *xt)
{
    sg__xval xv = {.kind = SG_XV_TENSOR, .u.t = xt};
    assert_int_equal(sg__xrun_input(r, x, &xv), SG_OK);
    sg__xtensor *bt = NULL;
    for (uint32_t i = 0; i < g->scopes[0].nphs; i++) { /* a synthetic base: x's storage as one dimension */
        uint32_t b = g->nodes[g->scopes[0].phs[i]].out;
        if (strcmp(g->vals[b].name, "base"))
            continue;
        int64_t n = sg_tensor_storage_numel(xt), one = 1;
        assert_int_equal(sg__xt_view(C, &bt, xt->st, xt->ver, 1, &n, &one, 0), SG_OK);
        sg__xval bv = {.kind = SG_XV_TENSOR, .u.t = bt};
        assert_int_equal(sg__xrun_input(r, b, &bv), SG_OK);
    }
    sg__xt_unref(bt);
}

/* x: f64[3, 4] (backed symbols), v = op(x, ...), m = v * 2; the new base
 * by the inverse; run with x[i] = i - 5; compare. */
static void check_case(const vcase *c)
{
    traced f;
    trace_open(&f, 3, 4);
    sg_tracer *t = f.t;
    sg_value x = f.x, v, m, two_v;
    int64_t sizes[2] = {3, 4};
    sg_arg a[6] = {{.kind = SG_ARG_VALUE, .u.v = x}};
    size_t n = 1;
    const sg_expr *l1[4], *l2[4];
    if (c->nlist) {
        for (int i = 0; i < c->nlist; i++)
            assert_int_equal(sg_expr_int(C, &l1[i], c->list[i]), SG_OK);
        a[n++] = (sg_arg){.kind = SG_ARG_INTS, .u.ints = {(size_t)c->nlist, l1}};
    }
    if (c->nlist2) {
        for (int i = 0; i < c->nlist2; i++)
            assert_int_equal(sg_expr_int(C, &l2[i], c->list2[i]), SG_OK);
        a[n++] = (sg_arg){.kind = SG_ARG_INTS, .u.ints = {(size_t)c->nlist2, l2}};
    }
    for (int i = 0; i < c->nints; i++) {
        const sg_expr *e;
        assert_int_equal(sg_expr_int(C, &e, c->ints[i]), SG_OK);
        a[n++] = (sg_arg){.kind = SG_ARG_INT, .u.e = e};
    }
    if (sg_tracer_call(t, &v, c->op, a, n, 1))
        fail_msg("%s: %s", c->op, sg_ctx_last_error_msg(C));
    const sg_expr *two;
    assert_int_equal(sg_expr_int(C, &two, 2), SG_OK);
    sg_arg mul[2] = {{.kind = SG_ARG_VALUE, .u.v = v}, {.kind = SG_ARG_INT, .u.e = two}};
    assert_int_equal(sg_tracer_call(t, &m, "mul.Tensor", mul, 2, 1), SG_OK);
    sg__graph *g = (sg__graph *)sg__tracer_graph(t);
    uint32_t node = 0;
    while (node < g->nnodes && !(g->nodes[node].kind == SG_N_CALL && g->nodes[node].out == v))
        node++;
    assert_true(node < g->nnodes);
    if (sg__aot_view_inverse(g, g, node, x, m, &two_v))
        fail_msg("%s: %s", c->op, sg_ctx_last_error_msg(C));
    uint32_t outs[2] = {two_v, v};
    assert_int_equal(sg__graph_output(g, outs, 2), SG_OK);
    if (sg__graph_lint(g))
        fail_msg("%s: lint: %s", c->op, sg_ctx_last_error_msg(C));
    /* the new base has the base's sizes */
    assert_int_equal(g->vals[two_v].u.t.ndim, 2);
    /* run on x[i] = i - 5 */
    sg_tensor *xt;
    assert_int_equal(sg_tensor_new(C, &xt, SG_FLOAT64, 2, sizes), SG_OK);
    for (int64_t i = 0; i < 12; i++)
        sg_tensor_set_f(xt, i, (double)(i - 5));
    sg__xrun *r;
    assert_int_equal(sg__xrun_new(C, g, &r), SG_OK);
    bind_x(r, g, x, xt);
    if (sg__xrun_rest(r))
        fail_msg("%s: run: %s", c->op, sg_ctx_last_error_msg(C));
    /* brute force: the positions the concrete view reaches, doubled */
    const sg__xtensor *vt = sg__xrun_value(r, v)->u.t, *nb = sg__xrun_value(r, two_v)->u.t;
    double want[12];
    for (int64_t i = 0; i < 12; i++)
        want[i] = (double)(i - 5);
    int64_t idx[SG_MAX_DIMS] = {0}, total = 1;
    for (uint32_t d = 0; d < vt->ndim; d++)
        total *= vt->sizes[d];
    for (int64_t k = 0; k < total; k++) {
        int64_t p = vt->offset;
        for (uint32_t d = 0; d < vt->ndim; d++)
            p += idx[d] * vt->strides[d];
        want[p] = 2.0 * (double)(p - 5);
        for (uint32_t d = vt->ndim; d-- > 0;) {
            if (++idx[d] < vt->sizes[d])
                break;
            idx[d] = 0;
        }
    }
    assert_int_equal(nb->sizes[0], 3);
    assert_int_equal(nb->sizes[1], 4);
    for (int64_t i = 0; i < 3; i++)
        for (int64_t j = 0; j < 4; j++) {
            double got = sg_tensor_get_f(nb, i * 4 + j); /* row-major */
            if (got != want[i * 4 + j])
                fail_msg("%s: new base [%lld, %lld] = %g, want %g", c->op, (long long)i, (long long)j, got,
                         want[i * 4 + j]);
        }
    /* x itself unchanged: the inverse is functional */
    for (int64_t i = 0; i < 12; i++)
        assert_true(sg_tensor_get_f(xt, i) == (double)(i - 5));
    sg__xrun_free(r);
    sg_tensor_unref(xt);
    trace_close(&f);
}

static void test_view_inverses(void **state)
{
    (void)state;
    static const vcase cases[] = {
        {.op = "t"},
        {.op = "transpose.int", .nints = 2, .ints = {0, 1}},
        {.op = "permute", .nlist = 2, .list = {1, 0}},
        {.op = "select.int", .nints = 2, .ints = {0, 1}},
        {.op = "select.int", .nints = 2, .ints = {1, -1}},
        {.op = "slice.Tensor", .nints = 3, .ints = {1, 1, 4}},
        {.op = "slice.Tensor", .nints = 4, .ints = {1, 0, 4, 2}},
        {.op = "slice.Tensor", .nints = 4, .ints = {0, -2, 3, 1}},
        {.op = "narrow", .nints = 3, .ints = {0, 1, 2}},
        {.op = "diagonal"},
        {.op = "diagonal", .nints = 1, .ints = {1}},
        {.op = "diagonal", .nints = 3, .ints = {-1, 1, 0}},
        {.op = "as_strided", .nlist = 2, .list = {2, 2}, .nlist2 = 2, .list2 = {4, 1}, .nints = 1, .ints = {1}},
        {.op = "unsqueeze", .nints = 1, .ints = {1}},
        {.op = "view", .nlist = 1, .list = {12}},
        {.op = "view", .nlist = 2, .list = {2, 6}},
        {.op = "squeeze"},
        {.op = "detach"},
        {.op = "alias"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_case(&cases[i]);
}

/* expand: several elements of the view read one of the base; a write the
 * overlap check lets through gives each repeat one value, so the inverse
 * takes the first repeat: here x is 1x4 and the view 3x4, so one
 * slice.Tensor of dimension 0 from 0 to 1 (the base's size), of x's sizes. */
static void test_expand_inverse(void **state)
{
    (void)state;
    traced f;
    trace_open(&f, 1, 4);
    sg_tracer *t = f.t;
    sg_value x = f.x, v, out;
    const sg_expr *three, *m1;
    assert_int_equal(sg_expr_int(C, &three, 3) | sg_expr_int(C, &m1, -1), SG_OK);
    const sg_expr *sz[2] = {three, m1};
    sg_arg a[2] = {{.kind = SG_ARG_VALUE, .u.v = x}, {.kind = SG_ARG_INTS, .u.ints = {2, sz}}};
    assert_int_equal(sg_tracer_call(t, &v, "expand", a, 2, 1), SG_OK);
    sg__graph *g = (sg__graph *)sg__tracer_graph(t);
    uint32_t node = g->nnodes - 1;
    assert_int_equal(g->nodes[node].out, v);
    assert_int_equal(sg__aot_view_inverse(g, g, node, x, v, &out), SG_OK);
    assert_int_equal(g->nodes[g->nnodes - 1].schema->op, SG_OP_slice_Tensor);
    assert_int_equal(g->nodes[g->nnodes - 1].out, out);
    assert_int_equal(g->nodes[g->nnodes - 2].out, v); /* one node recorded */
    assert_int_equal(g->vals[out].u.t.ndim, 2);
    int64_t rows;
    assert_true(sg_expr_get_si(sg__graph_size(g, out, 0), &rows) && rows == 1);
    assert_ptr_equal(sg__graph_size(g, out, 1), sg__graph_size(g, x, 1));
    /* bad input: a node that is no view call */
    assert_int_equal(sg__aot_view_inverse(g, g, 0, x, v, &out), SG_EINVAL);
    trace_close(&f);
}

/* Functionalization against the graph it came from: both run by exec on
 * the same input values; the outputs and the input after the call must
 * agree, and the functional graph may write nothing but its epilogue's
 * copy_ into the input. */
static void run_graph(const sg__graph *g, uint32_t x, sg_tensor *xt, double *outs, size_t *nout)
{
    sg__xrun *r;
    assert_int_equal(sg__xrun_new(C, g, &r), SG_OK);
    bind_x(r, g, x, xt);
    if (sg__xrun_rest(r))
        fail_msg("run: %s", sg_ctx_last_error_msg(C));
    const sg__gnode *o = &g->nodes[g->nnodes - 1];
    assert_int_equal(o->kind, SG_N_OUTPUT);
    *nout = 0;
    for (uint32_t i = 0; i < o->nargs; i++) { /* every element of every tensor output, row-major */
        const sg__xtensor *t = sg__xrun_value(r, g->args[o->args + i].u.v)->u.t;
        for (int64_t k = 0; k < sg_tensor_numel(t); k++)
            outs[(*nout)++] = sg_tensor_get_f(t, k);
    }
    sg__xrun_free(r);
}

static void check_functional(const char *program, int want_copy)
{
    traced f;
    trace_open(&f, 3, 4);
    sg_tracer *t = f.t;
    sg_value x = f.x;
    int64_t sizes[2] = {3, 4};
    sg_program *p;
    sg_walk *w;
    assert_int_equal(sg_program_new(C, &p, program, strlen(program), 1), SG_OK);
    assert_int_equal(sg_walk_trace(p, t, &w), SG_OK);
    assert_int_equal(sg_walk_input_value(w, "x", x), SG_OK);
    if (sg_walk_run(w) || sg_walk_finish(w))
        fail_msg("trace: %s", sg_ctx_last_error_msg(C));
    const sg__graph *g = sg__tracer_graph(t);
    sg__graph *d;
    assert_int_equal(sg__graph_new(f.env, &d), SG_OK);
    if (sg__aot_functionalize(g, d))
        fail_msg("functionalize: %s\n%s", sg_ctx_last_error_msg(C), program);
    if (sg__graph_lint(d))
        fail_msg("lint: %s", sg_ctx_last_error_msg(C));
    if (getenv("SG_SHOW")) {
        char *text = NULL;
        if (!sg__graph_print(d, &text))
            printf("%s\n", text);
        sg_free(text);
    }
    /* no write but the epilogue's copy_ into x, at the end */
    int copies = 0;
    for (size_t i = 0; i < d->nnodes; i++) {
        const sg__gnode *n = &d->nodes[i];
        if (n->kind != SG_N_CALL || !(n->schema->flags & SG_OPF_MUTATES))
            continue;
        assert_int_equal(n->schema->op, SG_OP_copy_);
        copies++;
    }
    assert_int_equal(copies, want_copy);
    double a[256], b[256];
    size_t na, nb;
    sg_tensor *x1, *x2;
    assert_int_equal(sg_tensor_new(C, &x1, SG_FLOAT64, 2, sizes) | sg_tensor_new(C, &x2, SG_FLOAT64, 2, sizes), SG_OK);
    for (int64_t i = 0; i < 12; i++) {
        sg_tensor_set_f(x1, i, (double)(3 * i % 7) - 2.5);
        sg_tensor_set_f(x2, i, (double)(3 * i % 7) - 2.5);
    }
    run_graph(g, x, x1, a, &na);
    uint32_t dx = d->nodes[0].out; /* the replayed placeholder of x */
    while (d->nodes[dx].kind != SG_N_PLACEHOLDER || d->vals[d->nodes[dx].out].kind != SG_V_TENSOR)
        dx++;
    run_graph(d, d->nodes[dx].out, x2, b, &nb);
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++)
        if (a[i] != b[i])
        {
            char *pa = NULL, *pb = NULL;
            (void)sg__graph_print(g, &pa);
            (void)sg__graph_print(d, &pb);
            fail_msg("output element %zu: %g captured, %g functional\n%s\n%s\n%s", i, a[i], b[i], program, pa, pb);
        }
    for (int64_t i = 0; i < 12; i++)
        if (sg_tensor_get_f(x1, i) != sg_tensor_get_f(x2, i))
            fail_msg("x[%lld] after the call: %g captured, %g functional\n%s", (long long)i, sg_tensor_get_f(x1, i),
                     sg_tensor_get_f(x2, i), program);
    sg_tensor_unref(x1);
    sg_tensor_unref(x2);
    sg__graph_free(d);
    sg_walk_free(w);
    sg_program_free(p);
    trace_close(&f);
}

static void test_functionalize(void **state)
{
    (void)state;
    check_functional("def f(x):\n    y = x.view(-1)\n    x.add_(1)\n    return y * 2, x\n", 1);
    check_functional("def f(x):\n    r = x[1]\n    r.mul_(3)\n    return x.sum(), r\n", 1);
    check_functional("def f(x):\n    t = x.t()\n    d = t.diagonal()\n    d.add_(10)\n    return x, t, d\n", 1);
    check_functional("def f(x):\n    a = x[:, 1:3]\n    b = a[0]\n    b.sub_(5)\n    c = x.clone()\n"
                     "    c.mul_(2)\n    return c, a, x\n", 1);
    check_functional("def f(x):\n    x.add_(1)\n    x.mul_(2)\n    return x\n", 1);
    check_functional("def f(x):\n    u = x.unsqueeze(0)\n    u.add_(1)\n    p = x.permute(1, 0)\n"
                     "    p.mul_(2)\n    q = p[::2]\n    q.mul_(-1)\n    return x, u, p.sum()\n", 1);
    check_functional("def f(x):\n    c = x.clone()\n    v = c.view(2, 6)\n    v[1].add_(x.view(2, 6)[0])\n"
                     "    return c, v\n", 0);
    check_functional("def f(x):\n    y = x * 2\n    return y.sin(), x\n", 0);
    /* interleaved writes through two views, each read after the other's */
    check_functional("def f(x):\n    a = x[0]\n    b = x[1]\n    a.add_(b)\n    b.mul_(a)\n    return a, b, x\n", 1);
    /* a view made before a write of its base, then written through */
    check_functional("def f(x):\n    d = x.diagonal()\n    x.mul_(2)\n    d.add_(1)\n    return d, x\n", 1);
    check_functional("def f(x):\n    v = x.view(12)\n    w = v[2:8]\n    w2 = w.view(2, 3)\n    w2.add_(1)\n"
                     "    return x, v, w, w2\n", 1);
    check_functional("def f(x):\n    y = x.detach()\n    y.add_(1)\n    return x\n", 1);
    check_functional("def f(x):\n    s = x.as_strided([2, 2], [4, 1], 1)\n    s.mul_(3)\n    return x, s\n", 1);
    check_functional("def f(x):\n    n = x.narrow(1, 1, 2)\n    n.sub_(1)\n    e = x.expand(2, 3, 4)\n"
                     "    return e.sum(), n\n", 1);
    check_functional("def f(x):\n    c = x.clone()\n    c.t().mul_(2)\n    c[0].mul_(0)\n    return c, x.add(c)\n", 0);
}


/* program traced over f's x: *p and *w, the trace run and finished. */
static void walk_program(traced *f, const char *program, sg_program **p, sg_walk **w)
{
    assert_int_equal(sg_program_new(C, p, program, strlen(program), 1), SG_OK);
    assert_int_equal(sg_walk_trace(*p, f->t, w), SG_OK);
    assert_int_equal(sg_walk_input_value(*w, "x", f->x), SG_OK);
    if (sg_walk_run(*w) || sg_walk_finish(*w))
        fail_msg("trace: %s", sg_ctx_last_error_msg(C));
}

/* The public API (aot.h) on x.t_(); x.mul_(2); return x, x[0] + 1 over a
 * 3x4 x: the analysis (data and metadata, epilogue for the metadata; is_input
 * and non_alias), the call (the caller's tensor transposed, doubled, its
 * version bumped twice as eager does, output 0 that very tensor), and the
 * errors: a run of another tracer, NULL. Values by hand: x[i][j] = 4i + j. */
static void test_api(void **state)
{
    (void)state;
    traced f, g;
    trace_open(&f, 3, 4);
    const char *program = "def f(x):\n    x.t_()\n    x.mul_(2)\n    return x, x[0] + 1\n";
    sg_program *p;
    sg_walk *w;
    walk_program(&f, program, &p, &w);
    sg_aot *a = NULL;
    assert_int_equal(sg_aot_compile(NULL, 1, &a), SG_EINVAL);
    assert_int_equal(sg_aot_compile(f.t, 1, NULL), SG_EINVAL);
    assert_int_equal(sg_aot_compile(f.t, 1, &a), SG_OK);
    assert_int_equal(sg_aot_get_mode(a), SG_AOT_INFERENCE);
    size_t xi = input_named(a, "x");
    /* data and metadata: the rule keeps a data mutation with a metadata one out of the graph */
    assert_int_equal(sg_aot_input_mutation(a, xi), SG_AOT_DATA | SG_AOT_METADATA | SG_AOT_EPILOGUE);
    assert_int_equal(sg_aot_noutputs(a), 2);
    size_t base;
    assert_int_equal(sg_aot_output(a, 0, &base), SG_AOT_IS_INPUT);
    assert_int_equal(base, xi);
    assert_int_equal(sg_aot_output(a, 1, &base), SG_AOT_NON_ALIAS);
    assert_int_equal(base, SIZE_MAX);
    assert_string_equal(sg_aot_output_kind_name(SG_AOT_ALIAS_OF_INPUT), "alias_of_input");
    /* the call */
    int64_t sizes[2] = {3, 4};
    sg_tensor *x;
    assert_int_equal(sg_tensor_new(C, &x, SG_FLOAT64, 2, sizes), SG_OK);
    for (int64_t i = 0; i < 12; i++)
        sg_tensor_set_f(x, i, (double)i);
    sg_run *r;
    assert_int_equal(sg_run_new(f.t, NULL, &r), SG_OK);
    assert_int_equal(sg_run_set_tensor(r, f.x, x), SG_OK);
    assert_int_equal(sg_aot_call(a, r), SG_OK);
    assert_int_equal(sg_tensor_ndim(x), 2); /* transposed in place: 4x3, strides (1, 4) */
    assert_int_equal(sg_tensor_size(x, 0), 4);
    assert_int_equal(sg_tensor_size(x, 1), 3);
    assert_int_equal(sg_tensor_stride(x, 0), 1);
    assert_int_equal(sg_tensor_stride(x, 1), 4);
    for (int64_t i = 0; i < 4; i++) /* x[i][j] (row-major of the transposed view) = 2 * (4j + i) */
        for (int64_t j = 0; j < 3; j++)
            assert_true(sg_tensor_get_f(x, 3 * i + j) == 2.0 * (double)(4 * j + i));
    assert_int_equal(sg_tensor_version(x), 2); /* t_ and mul_, as eager bumps it */
    assert_ptr_equal(sg_run_tensor(r, sg_run_output(r, 0)), x);
    const sg_tensor *o1 = sg_run_tensor(r, sg_run_output(r, 1)); /* x[0] + 1 = [1, 9, 17] */
    assert_non_null(o1);
    assert_int_equal(sg_tensor_numel(o1), 3);
    for (int64_t j = 0; j < 3; j++)
        assert_true(sg_tensor_get_f(o1, j) == 8.0 * (double)j + 1.0);
    sg_run_free(r);
    /* a run of another tracer */
    trace_open(&g, 3, 4);
    assert_int_equal(sg_run_new(g.t, NULL, &r), SG_OK);
    assert_int_equal(sg_aot_call(a, r), SG_EINVAL);
    assert_int_equal(sg_aot_call(NULL, r), SG_EINVAL);
    assert_int_equal(sg_aot_call(a, NULL), SG_EINVAL);
    sg_run_free(r);
    trace_close(&g);
    sg_tensor_unref(x);
    sg_aot_free(a);
    sg_aot_free(NULL);
    sg_walk_free(w);
    sg_program_free(p);
    trace_close(&f);
}


/* Compiled program a of f (its x: 3x4, a leaf that requires grad) called
 * on x[i] = i / 8 - 0.7 and its backward run: x's gradient is
 * expect(x[i]) elementwise (a gradient count other than the inputs' is
 * SG_EINVAL). */
static void check_grad(traced *f, sg_aot *a, double (*expect)(double))
{
    int64_t sizes[2] = {3, 4};
    sg_tensor *x, *grads[4] = {NULL};
    assert_int_equal(sg_tensor_new(C, &x, SG_FLOAT64, 2, sizes), SG_OK);
    for (int64_t i = 0; i < 12; i++)
        sg_tensor_set_f(x, i, (double)i / 8 - 0.7);
    sg_tensor_set_requires_grad(x, 1);
    sg_run *r;
    assert_int_equal(sg_run_new(f->t, NULL, &r), SG_OK);
    assert_int_equal(sg_run_set_tensor(r, f->x, x), SG_OK);
    size_t ni = sg_aot_ninputs(a), xi = input_named(a, "x");
    assert_true(ni <= 4);
    assert_int_equal(sg_aot_call_backward(a, r, grads, ni + 1), SG_EINVAL);
    assert_int_equal(sg_aot_call_backward(a, r, grads, ni), SG_OK);
    assert_non_null(grads[xi]);
    for (int64_t i = 0; i < 12; i++)
        assert_float_equal(sg_tensor_get_f(grads[xi], i), expect((double)i / 8 - 0.7), 1e-12);
    for (size_t i = 0; i < ni; i++)
        sg_tensor_unref(grads[i]);
    sg_run_free(r);
    sg_tensor_unref(x);
}

static double grad_sin_exp(double v)
{
    return 2 * cos(v) + exp(v);
}

static double grad_twice_sin(double v)
{
    return cos(2 * v) * cos(v);
}

/* The training half through the API: x (3x4, a leaf that requires grad),
 * f(x) = ((x.sin() * 2).sum(0), x.exp()). torch 1.13's aot_function with
 * min_cut_rematerialization_partition saves primals_1 alone (96 bytes) and
 * its backward is (its detach nodes left out) exp mul.Tensor unsqueeze
 * expand mul.Tensor cos mul.Tensor add.Tensor; with default_partition it
 * saves primals_1 and exp, its backward without the exp. The gradient of
 * the summed outputs is 2 cos(x) + exp(x) elementwise. */
static void test_backward(void **state)
{
    (void)state;
    traced f;
    trace_open_rg(&f, 3, 4, 1);
    const char *program = "def f(x):\n    return (x.sin() * 2).sum(0), x.exp()\n";
    sg_program *p;
    sg_walk *w;
    walk_program(&f, program, &p, &w);
    sg_aot *a = NULL;
    sg_aot_options o = {.keep_input_mutations = 1, .partition = SG_AOT_DEFAULT_PARTITION};
    assert_int_equal(sg_aot_compile_with(f.t, &o, &a), SG_OK);
    char *ops = NULL;
    assert_int_equal(sg_aot_backward_ops(a, &ops), SG_OK);
    assert_string_equal(ops, "mul.Tensor unsqueeze expand mul.Tensor cos mul.Tensor add.Tensor");
    sg_free(ops);
    size_t n;
    int64_t bytes;
    assert_int_equal(sg_aot_saved(a, &n, &bytes), SG_OK);
    assert_int_equal(n, 2); /* x and exp(x), 12 doubles each */
    assert_int_equal(bytes, 2 * 12 * 8);
    sg_aot_free(a);
    a = NULL;
    o.partition = (sg_aot_partition)7;
    assert_int_equal(sg_aot_compile_with(f.t, &o, &a), SG_EINVAL);
    assert_int_equal(sg_aot_compile_with(f.t, NULL, &a), SG_EINVAL);
    assert_null(a);
    assert_int_equal(sg_aot_compile(f.t, 1, &a), SG_OK); /* the min-cut */
    assert_int_equal(sg_aot_get_mode(a), SG_AOT_TRAIN);
    assert_int_equal(sg_aot_backward_ops(a, &ops), SG_OK);
    assert_string_equal(ops, "exp mul.Tensor unsqueeze expand mul.Tensor cos mul.Tensor add.Tensor");
    sg_free(ops);
    assert_int_equal(sg_aot_saved(a, &n, &bytes), SG_OK);
    assert_int_equal(n, 1); /* x alone: exp recomputed */
    assert_int_equal(bytes, 12 * 8);
    assert_int_equal(sg_aot_saved(NULL, &n, &bytes), SG_EINVAL);
    assert_int_equal(sg_aot_has_loss(a), 1);
    assert_int_equal(sg_aot_has_loss(NULL), 0);
    check_grad(&f, a, grad_sin_exp);
    sg_aot_free(a);
    sg_walk_free(w);
    sg_program_free(p);
    trace_close(&f);

    /* no output requires grad: the loss is empty, though x (no leaf) does and its storage is set to another's */
    trace_open_rg(&f, 3, 4, 2);
    walk_program(&f, "def f(x):\n    with torch.no_grad():\n        y = x * 2\n    x.set_(y)\n    return y\n",
                 &p, &w);
    assert_int_equal(sg_aot_compile(f.t, 1, &a), SG_OK);
    assert_int_equal(sg_aot_has_loss(a), 0);
    assert_int_equal(sg_aot_backward_ops(a, &ops), SG_OK); /* (not refused: no backward runs) */
    assert_string_equal(ops, "");
    sg_free(ops);
    sg_aot_free(a);
    sg_walk_free(w);
    sg_program_free(p);
    trace_close(&f);
}

static double grad_cos_squared(double v)
{
    return -2 * sin(v) * cos(v);
}

/* The partitioned forward's form (sg_aot_ops in training mode): f(x) =
 * x.cos() * x.cos(), with x.exp().sum() computed and unused. torch 1.13's
 * aot_function lists cos mul.Tensor with min_cut_rematerialization_partition
 * (fx_graph_cse merges the two cos, the sum is dead code) and cos cos
 * mul.Tensor with default_partition (dead code dropped, nothing merged); the
 * gradient, -2 sin(x) cos(x), is the same under both. */
static void test_forward_form(void **state)
{
    (void)state;
    traced f;
    trace_open_rg(&f, 3, 4, 1);
    const char *program = "def f(x):\n    unused = x.exp().sum()\n    return x.cos() * x.cos()\n";
    sg_program *p;
    sg_walk *w;
    walk_program(&f, program, &p, &w);
    static const struct {
        sg_aot_partition partition;
        const char *fw, *bw;
    } want[] = {{SG_AOT_MIN_CUT, "cos mul.Tensor", "cos mul.Tensor sin neg mul.Tensor add.Tensor"},
                {SG_AOT_DEFAULT_PARTITION, "cos cos mul.Tensor",
                 "mul.Tensor mul.Tensor sin neg mul.Tensor sin neg mul.Tensor add.Tensor"}};
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        sg_aot_options o = {.keep_input_mutations = 1, .partition = want[k].partition};
        sg_aot *a = NULL;
        assert_int_equal(sg_aot_compile_with(f.t, &o, &a), SG_OK);
        char *ops = NULL;
        assert_int_equal(sg_aot_ops(a, &ops), SG_OK);
        assert_string_equal(ops, want[k].fw);
        sg_free(ops);
        assert_int_equal(sg_aot_backward_ops(a, &ops), SG_OK);
        assert_string_equal(ops, want[k].bw);
        sg_free(ops);
        check_grad(&f, a, grad_cos_squared);
        sg_aot_free(a);
    }
    sg_walk_free(w);
    sg_program_free(p);
    trace_close(&f);
}

/* A custom autograd Function through the API: Twice.forward saves x and
 * gives x * 2, its backward g * x.cos() (not the derivative: what the user
 * wrote), f(x) = Twice.apply(x).sin(). The traced graph names the Function
 * after its forward's calls; torch 1.13's aot_function (min-cut) records
 * the backward mul.Tensor cos mul.Tensor cos mul.Tensor (sin's derivative
 * recomputing y = x * 2, then the Function's); the gradient is
 * cos(2x) cos(x). */
static void test_custom_function(void **state)
{
    (void)state;
    traced f;
    trace_open_rg(&f, 3, 4, 1);
    const char *program = "class Twice(torch.autograd.Function):\n"
                          "    @staticmethod\n"
                          "    def forward(ctx, x):\n"
                          "        ctx.save_for_backward(x)\n"
                          "        return x * 2\n"
                          "    @staticmethod\n"
                          "    def backward(ctx, g):\n"
                          "        x, = ctx.saved_tensors\n"
                          "        return g * x.cos()\n"
                          "def f(x):\n"
                          "    return Twice.apply(x).sin()\n";
    sg_program *p;
    sg_walk *w;
    walk_program(&f, program, &p, &w);
    assert_int_equal(sg_tracer_verify(f.t), SG_OK); /* every graph of it replayed and linted */
    char *text = NULL;
    assert_int_equal(sg_tracer_print(f.t, &text), SG_OK);
    if (!strstr(text, "autograd_function(self.Twice_backward_0, outputs=(mul,), inputs=(x,), saved=(x,), "
                      "gradients_of=(0,))") ||
        !strstr(text, "class Twice_backward_0(torch.nn.Module):"))
        fail_msg("printed: %s", text);
    sg_free(text);
    sg_aot *a = NULL;
    assert_int_equal(sg_aot_compile(f.t, 1, &a), SG_OK);
    assert_int_equal(sg_aot_get_mode(a), SG_AOT_TRAIN);
    char *ops = NULL;
    assert_int_equal(sg_aot_backward_ops(a, &ops), SG_OK);
    assert_string_equal(ops, "mul.Tensor cos mul.Tensor cos mul.Tensor");
    sg_free(ops);
    check_grad(&f, a, grad_twice_sin);
    sg_aot_free(a);
    sg_walk_free(w);
    sg_program_free(p);
    trace_close(&f);
}

/* A custom Function's backward that writes the input it saved (issue 21's
 * mutations in the backward): f(x) = Thrice.apply(x).sin(), whose backward
 * halves x in place under no_grad and gives g * 3. By hand: the gradient
 * is 3 cos(3 x) (sin's backward reads 3 x as the forward made it, before
 * the write); x is as given after the forward alone, halved after the
 * backward; the write is a copy_ at the backward graph's end, none in the
 * forward, under either partition. */
static void test_backward_mutation(void **state)
{
    (void)state;
    traced f;
    trace_open_rg(&f, 3, 4, 1);
    const char *program = "class Thrice(torch.autograd.Function):\n"
                          "    @staticmethod\n"
                          "    def forward(ctx, x):\n"
                          "        ctx.save_for_backward(x)\n"
                          "        return x * 3\n"
                          "    @staticmethod\n"
                          "    def backward(ctx, g):\n"
                          "        x, = ctx.saved_tensors\n"
                          "        with torch.no_grad():\n"
                          "            x.mul_(0.5)\n"
                          "        return g * 3\n"
                          "def f(x):\n"
                          "    return Thrice.apply(x).sin()\n";
    sg_program *p;
    sg_walk *w;
    walk_program(&f, program, &p, &w);
    assert_int_equal(sg_tracer_verify(f.t), SG_OK);
    for (int part = 0; part < 2; part++) {
        const sg_aot_options o = {.keep_input_mutations = 1, .partition = part ? SG_AOT_DEFAULT_PARTITION : SG_AOT_MIN_CUT};
        sg_aot *a = NULL;
        assert_int_equal(sg_aot_compile_with(f.t, &o, &a), SG_OK);
        size_t ni = sg_aot_ninputs(a), xi = input_named(a, "x");
        assert_true(ni <= 4);
        assert_int_equal(sg_aot_input_mutation(a, xi), SG_AOT_DATA | SG_AOT_BACKWARD);
        char *ops = NULL;
        assert_int_equal(sg_aot_print(a, &ops), SG_OK); /* the functional backward gives x's new contents */
        if (!strstr(ops, "gradients_of=(0,), writes=(3,))")) /* (its placeholders: s0, s1, g, then x lifted) */
            fail_msg("printed: %s", ops);
        sg_free(ops);
        assert_int_equal(sg_aot_ops(a, &ops), SG_OK);
        assert_null(strstr(ops, "copy_"));
        sg_free(ops);
        assert_int_equal(sg_aot_backward_ops(a, &ops), SG_OK);
        size_t n = strlen(ops);
        if (n < 5 || strcmp(ops + n - 5, "copy_"))
            fail_msg("backward ops: %s", ops);
        sg_free(ops);
        int64_t sizes[2] = {3, 4};
        sg_tensor *x, *grads[4] = {NULL};
        assert_int_equal(sg_tensor_new(C, &x, SG_FLOAT64, 2, sizes), SG_OK);
        for (int64_t i = 0; i < 12; i++)
            sg_tensor_set_f(x, i, (double)i / 8 - 0.7);
        sg_tensor_set_requires_grad(x, 1);
        sg_run *r;
        assert_int_equal(sg_run_new(f.t, NULL, &r), SG_OK);
        assert_int_equal(sg_run_set_tensor(r, f.x, x), SG_OK);
        assert_int_equal(sg_aot_call(a, r), SG_OK); /* the forward alone writes nothing */
        for (int64_t i = 0; i < 12; i++)
            assert_float_equal(sg_tensor_get_f(x, i), (double)i / 8 - 0.7, 0);
        sg_run_free(r);
        assert_int_equal(sg_run_new(f.t, NULL, &r), SG_OK);
        assert_int_equal(sg_run_set_tensor(r, f.x, x), SG_OK);
        assert_int_equal(sg_aot_call_backward(a, r, grads, ni), SG_OK);
        for (int64_t i = 0; i < 12; i++) {
            double v = (double)i / 8 - 0.7;
            assert_float_equal(sg_tensor_get_f(grads[xi], i), 3 * cos(3 * v), 1e-12);
            assert_float_equal(sg_tensor_get_f(x, i), v / 2, 0);
        }
        for (size_t i = 0; i < ni; i++)
            sg_tensor_unref(grads[i]);
        sg_run_free(r);
        sg_tensor_unref(x);
        sg_aot_free(a);
    }
    sg_walk_free(w);
    sg_program_free(p);
    trace_close(&f);
}

/* Gradients on a synthetic base (aot.h, sg_aot_input_synthetic): x, a
 * 3x4 non-leaf that requires grad, and d = x.t() (a view of its storage)
 * are passed to f(x, d): d.mul_(2); return d * 2, x.sin(). The program
 * writes the storage both view, so both are on a synthetic base (an int
 * input is not), and each one's gradient is the storage's gathered by its
 * layout. By hand, x's new values are 2x: the loss sums 4x and sin(2x),
 * so x's gradient is 4 + 2 cos(2x), and d's the same, transposed. The
 * eager run (its tape compiled) is checked, and a run of fresh inputs. */
static void test_synthetic_grad(void **state)
{
    (void)state;
    const char *program = "def f(x, d):\n    d.mul_(2)\n    return d * 2, x.sin()\n";
    sg_program *p;
    assert_int_equal(sg_program_new(C, &p, program, strlen(program), 1), SG_OK);
    int64_t sizes[2] = {3, 4}, tsizes[2] = {4, 3}, tstrides[2] = {1, 4};
    sg_tensor *x, *d;
    assert_int_equal(sg_tensor_new(C, &x, SG_FLOAT64, 2, sizes), SG_OK);
    for (int64_t i = 0; i < 12; i++)
        sg_tensor_set_f(x, i, (double)i / 8 - 0.7);
    assert_int_equal(sg_tensor_view(C, &d, x, 2, tsizes, tstrides, 0), SG_OK);
    sg_walk *w;
    assert_int_equal(sg_walk_eager(p, &w), SG_OK);
    assert_int_equal(sg_walk_input_tensor(w, "x", x, 2), SG_OK);
    assert_int_equal(sg_walk_input_tensor(w, "d", d, 2), SG_OK);
    if (sg_walk_run(w) || sg_walk_finish(w))
        fail_msg("eager: %s", sg_ctx_last_error_msg(C));
    for (int64_t i = 0; i < 12; i++) /* (the eager run doubled x through d) */
        assert_float_equal(sg_tensor_get_f(x, i), 2 * ((double)i / 8 - 0.7), 1e-12);
    const sg_aot_options o = {.keep_input_mutations = 1, .partition = SG_AOT_DEFAULT_PARTITION};
    sg_aot *a = NULL;
    assert_int_equal(sg_aot_compile_with(sg_walk_tracer(w), &o, &a), SG_OK);
    size_t ni = sg_aot_ninputs(a), xi = SIZE_MAX, di = SIZE_MAX;
    assert_true(ni <= 8);
    for (size_t i = 0; i < ni; i++) {
        if (!strcmp(sg_aot_input_name(a, i), "x"))
            xi = i;
        else if (!strcmp(sg_aot_input_name(a, i), "d"))
            di = i;
        else
            assert_int_equal(sg_aot_input_synthetic(a, i), 0);
    }
    assert_true(xi != SIZE_MAX && di != SIZE_MAX);
    assert_int_equal(sg_aot_input_synthetic(a, xi), 1);
    assert_int_equal(sg_aot_input_synthetic(a, di), 1);
    assert_int_equal(sg_aot_input_synthetic(a, sg_aot_ninputs(a)), 0); /* (bad input: no answer, no crash) */
    assert_int_equal(sg_aot_input_synthetic(NULL, 0), 0);
    /* the other accessors likewise: a NULL handle has none, an index past the end no answer */
    size_t base = 0;
    assert_int_equal(sg_aot_input_mutation(a, sg_aot_ninputs(a)), 0);
    assert_null(sg_aot_input_name(a, sg_aot_ninputs(a)));
    assert_int_equal(sg_aot_output(a, sg_aot_noutputs(a), &base), SG_AOT_NON_ALIAS);
    assert_int_equal(base, SIZE_MAX);
    assert_int_equal(sg_aot_ninputs(NULL), 0);
    assert_int_equal(sg_aot_noutputs(NULL), 0);
    assert_int_equal(sg_aot_input_mutation(NULL, 0), 0);
    assert_null(sg_aot_input_name(NULL, 0));
    assert_int_equal(sg_aot_get_mode(NULL), SG_AOT_INFERENCE);
    sg_tensor *x2, *d2, *grads[8] = {NULL};
    assert_int_equal(sg_tensor_new(C, &x2, SG_FLOAT64, 2, sizes), SG_OK);
    for (int64_t i = 0; i < 12; i++)
        sg_tensor_set_f(x2, i, (double)i / 8 - 0.7);
    sg_tensor_set_requires_grad(x2, 1);
    assert_int_equal(sg_tensor_view(C, &d2, x2, 2, tsizes, tstrides, 0), SG_OK);
    sg_run *r;
    assert_int_equal(sg_run_new(sg_walk_tracer(w), NULL, &r), SG_OK);
    for (size_t i = 0; i < sg_run_ninputs(r); i++) {
        const char *nm = sg_run_input_name(r, i);
        if (!strcmp(nm, "x") || !strcmp(nm, "d"))
            assert_int_equal(sg_run_set_tensor(r, sg_run_input(r, i), !strcmp(nm, "x") ? x2 : d2), SG_OK);
    }
    assert_int_equal(sg_aot_call_backward(a, r, grads, ni), SG_OK);
    assert_non_null(grads[xi]);
    assert_non_null(grads[di]);
    for (int64_t i = 0; i < 3; i++)
        for (int64_t j = 0; j < 4; j++) {
            double v = (double)(4 * i + j) / 8 - 0.7, want = 4 + 2 * cos(2 * v);
            assert_float_equal(sg_tensor_get_f(grads[xi], 4 * i + j), want, 1e-12);
            assert_float_equal(sg_tensor_get_f(grads[di], 3 * j + i), want, 1e-12);
        }
    for (int64_t i = 0; i < 12; i++) /* (the caller's x written as eager writes it) */
        assert_float_equal(sg_tensor_get_f(x2, i), 2 * ((double)i / 8 - 0.7), 1e-12);
    for (size_t i = 0; i < ni; i++)
        sg_tensor_unref(grads[i]);
    sg_run_free(r);
    sg_tensor_unref(d2);
    sg_tensor_unref(x2);
    sg_aot_free(a);
    sg_walk_free(w);
    sg_tensor_unref(d);
    sg_tensor_unref(x);
    sg_program_free(p);
}

/* torch.cond under grad (PyTorch's CondAutogradOp): f(x) = cond(x.sum() <
 * 0, sin, a * 2, (x,)) * 3, whose backward is a cond of the branches'
 * backwards (autograd.c cond_backward); the functional, joint-made
 * backward and forward graphs lint (each cond's branches closed), the
 * backward's op is that cond, and the gradient by hand: x = i / 8 - 0.7
 * sums to -0.15, so the true branch runs: 3 cos(x). */
static double grad_3cos(double v)
{
    return 3 * cos(v);
}

static void test_cond_backward(void **state)
{
    (void)state;
    traced f;
    trace_open_rg(&f, 3, 4, 1);
    const char *program = "def f(x):\n"
                          "    def tb(a):\n"
                          "        return a.sin()\n"
                          "    def fb(a):\n"
                          "        return a * 2\n"
                          "    return torch.cond(x.sum() < 0, tb, fb, (x,)) * 3\n";
    sg_program *p;
    sg_walk *w;
    walk_program(&f, program, &p, &w);
    const sg__graph *src = sg__tracer_graph(f.t);
    for (int part = 0; part < 2; part++) {
        sg__graph *fw;
        sg__aot_meta m;
        sg__aot_train *t = NULL;
        assert_int_equal(sg__graph_new(src->env, &fw), SG_OK);
        fw->reg = src->reg;
        assert_int_equal(sg__aot_functionalize_meta(src, fw, true, false, &m), SG_OK);
        if (sg__aot_train_build(fw, &m, part == 0, &t))
            fail_msg("train: %s", sg_ctx_last_error_msg(C));
        if (sg__graph_lint(fw) || sg__graph_lint(sg__aot_train_bw(t)))
            fail_msg("lint: %s", sg_ctx_last_error_msg(C));
        sg__aot_train_free(t);
        sg__aot_meta_free(&m);
        sg__graph_free(fw);
    }
    sg_aot *a = NULL;
    assert_int_equal(sg_aot_compile(f.t, 1, &a), SG_OK);
    char *ops = NULL;
    assert_int_equal(sg_aot_backward_ops(a, &ops), SG_OK);
    assert_string_equal(ops, "mul.Tensor cond");
    sg_free(ops);
    check_grad(&f, a, grad_3cos);
    sg_aot_free(a);
    sg_walk_free(w);
    sg_program_free(p);
    trace_close(&f);
}

/* ---- tensor-subclass inputs (kind two, PyTorch's TwoTensor) ---- */

typedef struct twoobj {
    sg_tensor_value inner[2];
} twoobj;

static sg_status two_flatten(void *user, const void *obj, sg_flat *out)
{
    static const char *const names[2] = {"a", "b"};
    const twoobj *o = obj;
    (void)user;
    *out = (sg_flat){2, names, o->inner, NULL, 0};
    return SG_OK;
}

static sg_status two_unflatten(void *user, sg_ctx *ctx, const sg_fake *const *inner, size_t ninner, const void *meta,
                               size_t metalen, const sg_fake *outer, size_t *ndim, const sg_expr **sizes,
                               const sg_expr **strides)
{
    (void)user, (void)ctx, (void)ninner, (void)meta, (void)metalen, (void)outer;
    *ndim = inner[0]->ndim;
    memcpy(sizes, inner[0]->sizes, inner[0]->ndim * sizeof *sizes);
    memcpy(strides, inner[0]->strides, inner[0]->ndim * sizeof *strides);
    return SG_OK;
}

static sg_subclass_kind two_kind = {"two", two_flatten, two_unflatten, NULL, NULL};
static sg_subclass_kind double_kind = {"double", two_flatten, two_unflatten, NULL, NULL};

/* program traced over a TwoTensor input x: f64[2, 3] of kind k; *xv its
 * inner tensors' values; the compile's status. */
static sg_status compile_two(traced *f, sg_subclass_kind *k, const char *program, sg_value xv[2], sg_program **p,
                             sg_walk **w, sg_aot **a)
{
    assert_int_equal(sg_env_new(C, NULL, &f->env), SG_OK);
    assert_int_equal(sg_inputs_new(f->env, NULL, &f->in), SG_OK);
    assert_int_equal(sg_tracer_new(f->env, &f->t), SG_OK);
    int64_t sizes[2] = {2, 3};
    twoobj o = {{{.ndim = 2, .sizes = sizes}, {.ndim = 2, .sizes = sizes}}};
    sg_tensor_value example = {.ndim = 2, .sizes = sizes, .kind = k, .obj = &o};
    const sg_source *src;
    const sg_fake *fake;
    assert_int_equal(sg_source_local(C, &src, "x"), SG_OK);
    assert_int_equal(sg_inputs_tensor(f->in, src, &example, NULL, &fake), SG_OK);
    assert_int_equal(sg_tracer_input_subclass(f->t, xv, 1, "x", fake, SG_FLOAT64, 0, NULL), SG_EINVAL);
    assert_int_equal(sg_tracer_input_subclass(f->t, xv, 2, "x", fake, SG_FLOAT64, 1, NULL), SG_EUNSUPPORTED);
    sg_status s = sg_tracer_input_subclass(f->t, xv, 2, "x", fake, SG_FLOAT64, 0, NULL);
    if (s)
        return s;
    assert_int_equal(sg_program_new(C, p, program, strlen(program), 1), SG_OK);
    assert_int_equal(sg_walk_trace(*p, f->t, w), SG_OK);
    assert_int_equal(sg_walk_input_subclass(*w, "x", "three", xv, 2), SG_EUNSUPPORTED);
    assert_int_equal(sg_walk_input_subclass(*w, "x", "two", xv, 1), SG_EINVAL);
    assert_int_equal(sg_walk_input_subclass(*w, "x", "two", xv, 2), SG_OK);
    /* the signature's bad input: no output yet, a value that is no input */
    assert_int_equal(sg_tracer_output_subclass(f->t, 0, 2, "two"), SG_EINVAL);
    assert_int_equal(sg_tracer_input_again(f->t, UINT32_MAX), SG_EINVAL);
    /* a declared view: a tensor input of the tracer, before any call; a tensor parameter given */
    assert_int_equal(sg_tracer_input_declare_view(NULL, xv[0]), SG_EINVAL);
    assert_int_equal(sg_tracer_input_declare_view(f->t, UINT32_MAX), SG_EINVAL);
    assert_int_equal(sg_walk_input_declare_view(NULL, "x"), SG_EINVAL);
    assert_int_equal(sg_walk_input_declare_view(*w, "nope"), SG_EINVAL);
    assert_int_equal(sg_walk_input_declare_view(*w, NULL), SG_EINVAL);
    if (sg_walk_run(*w) || sg_walk_finish(*w))
        fail_msg("trace: %s", sg_ctx_last_error_msg(C));
    assert_int_equal(sg_tracer_input_declare_view(f->t, xv[0]), SG_EINVAL); /* (calls made) */
    /* after it: outputs beyond those recorded, an unknown kind, none */
    assert_int_equal(sg_tracer_output_subclass(f->t, 1, 4, "two"), SG_EINVAL);
    assert_int_equal(sg_tracer_output_subclass(f->t, 0, 2, "three"), SG_EINVAL);
    assert_int_equal(sg_tracer_output_subclass(f->t, 0, 0, "two"), SG_EINVAL);
    assert_int_equal(sg_walk_inner(*w, UINT32_MAX, 0), UINT32_MAX);
    return sg_aot_compile(f->t, 1, a);
}

/* Run r's TwoTensor input (its inner tensors' values xv): new f64[2, 3]
 * inner tensors x[j], x[j][i] = i + 10 j (the caller drops them). */
static void set_two(sg_run *r, const sg_value xv[2], sg_tensor *x[2])
{
    int64_t sizes[2] = {2, 3};
    for (int j = 0; j < 2; j++) {
        assert_int_equal(sg_tensor_new(C, &x[j], SG_FLOAT64, 2, sizes), SG_OK);
        for (int64_t i = 0; i < 6; i++)
            sg_tensor_set_f(x[j], i, (double)(i + 10 * j));
        assert_int_equal(sg_run_set_tensor(r, xv[j], x[j]), SG_OK);
    }
}

static void test_subclass(void **state)
{
    (void)state;
    traced f;
    sg_value xv[2];
    sg_program *p;
    sg_walk *w;
    sg_aot *a = NULL;
    /* x.mul_(2) reaches both inner tensors; the outputs x + 1 (new) and x (the input) */
    assert_int_equal(compile_two(&f, &two_kind, "def f(x):\n    x.mul_(2)\n    return x + 1, x\n", xv, &p, &w, &a),
                     SG_OK);
    size_t xi = SIZE_MAX, nx = 0;
    for (size_t i = 0; i < sg_aot_ninputs(a); i++) { /* one input x (and the size symbols), no x_a or x_b */
        nx += !strncmp(sg_aot_input_name(a, i), "x", 1);
        if (!strcmp(sg_aot_input_name(a, i), "x"))
            xi = i;
    }
    assert_int_equal(nx, 1);
    assert_true(xi != SIZE_MAX);
    assert_int_equal(sg_aot_input_mutation(a, xi), SG_AOT_DATA | SG_AOT_IN_GRAPH);
    assert_int_equal(sg_aot_noutputs(a), 2);
    size_t base;
    assert_int_equal(sg_aot_output(a, 0, &base), SG_AOT_NON_ALIAS);
    assert_int_equal(sg_aot_output(a, 1, &base), SG_AOT_IS_INPUT);
    assert_int_equal(base, xi);
    /* the call: each inner tensor doubled in place, its version bumped once;
       the graph's outputs are the inner tensors (o0.a, o0.b, o1.a, o1.b) */
    sg_tensor *x[2];
    sg_run *r;
    assert_int_equal(sg_run_new(f.t, NULL, &r), SG_OK);
    set_two(r, xv, x);
    assert_int_equal(sg_aot_call(a, r), SG_OK);
    for (int j = 0; j < 2; j++) {
        assert_int_equal(sg_tensor_version(x[j]), 1);
        const sg_tensor *o0 = sg_run_tensor(r, sg_run_output(r, (size_t)j));
        assert_non_null(o0);
        for (int64_t i = 0; i < 6; i++) {
            assert_true(sg_tensor_get_f(x[j], i) == 2.0 * (double)(i + 10 * j));
            assert_true(sg_tensor_get_f(o0, i) == 2.0 * (double)(i + 10 * j) + 1.0);
        }
        assert_ptr_equal(sg_run_tensor(r, sg_run_output(r, 2 + (size_t)j)), x[j]);
    }
    /* the walk's output 1 is the object x (its values now: mul_'s, a then b) */
    sg_value xnow = sg_walk_param_value(w, "x");
    assert_int_equal(sg_walk_output_value(w, 1), xnow);
    assert_true(xnow != xv[0]);
    assert_true(sg_walk_inner(w, xnow, 1) != UINT32_MAX && sg_walk_inner(w, xnow, 1) != xv[1]);
    assert_int_equal(sg_walk_inner(w, xv[0], 1), xv[1]);
    assert_int_equal(sg_walk_inner(w, sg_walk_output_value(w, 1), 2), UINT32_MAX);
    sg_run_free(r);
    sg_tensor_unref(x[0]);
    sg_tensor_unref(x[1]);
    sg_aot_free(a);
    sg_walk_free(w);
    sg_program_free(p);
    trace_close(&f);
    /* a metadata mutation of a subclass input: refused as PyTorch refuses it */
    a = NULL;
    assert_int_equal(compile_two(&f, &two_kind, "def f(x):\n    x.t_()\n    return x + 1\n", xv, &p, &w, &a),
                     SG_EALIASING);
    assert_null(a);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "Metadata mutations are currently not allowed on tensor subclasses"));
    /* compiled as an eager run's record (sg_aot_options.eager), for eager's gradients: PyTorch's AOT
       refusal is not made */
    const sg_aot_options eo = {.keep_input_mutations = 1, .eager = 1};
    assert_int_equal(sg_aot_compile_with(f.t, &eo, &a), SG_OK);
    sg_aot_free(a);
    sg_walk_free(w);
    sg_program_free(p);
    trace_close(&f);
    /* another kind: not traced */
    assert_int_equal(compile_two(&f, &double_kind, "def f(x):\n    return x\n", xv, &p, &w, &a), SG_EUNSUPPORTED);
    trace_close(&f);
}

/* Gradients with a TwoTensor input (issue 21): x a TwoTensor (inner a and
 * b, f64[2, 3]: a[i] = i, b[i] = 10 + i), y f64[2, 3] (y[i] = i / 4) a leaf
 * that requires grad. f(x, y) = (x * y, y * 2): the loss is a TwoTensor,
 * and so is y's gradient, its inner tensors x.a + 2 and x.b + 2 (torch
 * 1.13 through the oracle's TwoTensor: grad y=two(a=..., b=...)), which
 * sg_aot_call_backward refuses (SG_EUNSUPPORTED) and
 * sg_aot_call_backward_two gives. g(x, y) = (x + 1, y * 3): no output that
 * requires grad is a TwoTensor, y's gradient 3 is plain (grads_b NULL). */
static void test_subclass_backward(void **state)
{
    (void)state;
    static const char *const programs[2] = {"def f(x, y):\n    return x * y, y * 2\n",
                                            "def f(x, y):\n    return x + 1, y * 3\n"};
    for (int k = 0; k < 2; k++) {
        traced f;
        sg_value xv[2], y;
        assert_int_equal(sg_env_new(C, NULL, &f.env), SG_OK);
        assert_int_equal(sg_inputs_new(f.env, NULL, &f.in), SG_OK);
        assert_int_equal(sg_tracer_new(f.env, &f.t), SG_OK);
        int64_t sizes[2] = {2, 3};
        twoobj o = {{{.ndim = 2, .sizes = sizes}, {.ndim = 2, .sizes = sizes}}};
        sg_tensor_value ex = {.ndim = 2, .sizes = sizes, .kind = &two_kind, .obj = &o}, ey = {.ndim = 2, .sizes = sizes};
        const sg_source *sx, *sy;
        const sg_fake *fx, *fy;
        assert_int_equal(sg_source_local(C, &sx, "x"), SG_OK);
        assert_int_equal(sg_source_local(C, &sy, "y"), SG_OK);
        assert_int_equal(sg_inputs_tensor(f.in, sx, &ex, NULL, &fx), SG_OK);
        assert_int_equal(sg_inputs_tensor(f.in, sy, &ey, NULL, &fy), SG_OK);
        assert_int_equal(sg_tracer_input_subclass(f.t, xv, 2, "x", fx, SG_FLOAT64, 0, NULL), SG_OK);
        assert_int_equal(sg_tracer_input_tensor(f.t, &y, "y", fy, SG_FLOAT64, 1), SG_OK);
        sg_program *p;
        sg_walk *w;
        assert_int_equal(sg_program_new(C, &p, programs[k], strlen(programs[k]), 1), SG_OK);
        assert_int_equal(sg_walk_trace(p, f.t, &w), SG_OK);
        assert_int_equal(sg_walk_input_subclass(w, "x", "two", xv, 2), SG_OK);
        assert_int_equal(sg_walk_input_value(w, "y", y), SG_OK);
        if (sg_walk_run(w) || sg_walk_finish(w))
            fail_msg("trace: %s", sg_ctx_last_error_msg(C));
        sg_aot *a = NULL;
        assert_int_equal(sg_aot_compile(f.t, 1, &a), SG_OK);
        sg_tensor *xt[2], *yt, *grads[4] = {NULL}, *gb[4] = {NULL};
        sg_run *r;
        assert_int_equal(sg_run_new(f.t, NULL, &r), SG_OK);
        set_two(r, xv, xt);
        assert_int_equal(sg_tensor_new(C, &yt, SG_FLOAT64, 2, sizes), SG_OK);
        for (int64_t i = 0; i < 6; i++)
            sg_tensor_set_f(yt, i, (double)i / 4);
        sg_tensor_set_requires_grad(yt, 1);
        assert_int_equal(sg_run_set_tensor(r, y, yt), SG_OK);
        size_t ni = sg_aot_ninputs(a), yi = input_named(a, "y");
        assert_true(ni <= 4);
        if (k == 0) /* (refused before anything runs: r is still unrun) */
            assert_int_equal(sg_aot_call_backward(a, r, grads, ni), SG_EUNSUPPORTED);
        assert_int_equal(sg_aot_call_backward_two(a, r, grads, gb, ni), SG_OK);
        assert_non_null(grads[yi]);
        if (k == 0)
            assert_non_null(gb[yi]);
        else
            assert_null(gb[yi]);
        for (int64_t i = 0; i < 6; i++) {
            assert_float_equal(sg_tensor_get_f(grads[yi], i), k == 0 ? (double)i + 2 : 3.0, 1e-12);
            if (k == 0)
                assert_float_equal(sg_tensor_get_f(gb[yi], i), (double)i + 12, 1e-12);
        }
        for (size_t i = 0; i < ni; i++) {
            sg_tensor_unref(grads[i]);
            sg_tensor_unref(gb[i]);
        }
        sg_run_free(r);
        sg_tensor_unref(xt[0]);
        sg_tensor_unref(xt[1]);
        sg_tensor_unref(yt);
        sg_aot_free(a);
        sg_walk_free(w);
        sg_program_free(p);
        trace_close(&f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_view_inverses),
        cmocka_unit_test(test_expand_inverse),
        cmocka_unit_test(test_functionalize),
        cmocka_unit_test(test_api),
        cmocka_unit_test(test_backward),
        cmocka_unit_test(test_forward_form),
        cmocka_unit_test(test_custom_function),
        cmocka_unit_test(test_backward_mutation),
        cmocka_unit_test(test_cond_backward),
        cmocka_unit_test(test_synthetic_grad),
        cmocka_unit_test(test_subclass),
        cmocka_unit_test(test_subclass_backward),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
