/* Passes over graphs (src/graph/record.h, alias.c): the users of values,
 * what nodes write and which values are views or later versions of which,
 * and a pass written as a replay hook (in-place calls made functional with
 * the table's FUNCTIONAL column, then copied back), whose shapes come from
 * the shape rules through the one recording entry. */
#include "cmocka_all.h"

#include <string.h>

#include "graph/graph.h"
#include "graph/record.h"
#include "shapeguard.h"

static sg_ctx *C;

typedef struct fixture {
    sg_env *env;
    sg_inputs *in;
    sg_tracer *t;
    sg_value x, y, a, z, u;
} fixture;

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

static void call(fixture *f, sg_value *out, const char *op, sg_arg *args, size_t n)
{
    if (sg_tracer_call(f->t, out, op, args, n, 1))
        fail_msg("%s: %s", op, sg_ctx_last_error_msg(C));
}

/* def f(x):         # x: f64[s0, s1]
 *     y = x.view(-1)
 *     a = x.add_(1)
 *     z = y.mul(2)
 *     u = x.unbind(1)    # with_unbind only: it guards s1 == 3
 *     return z, a */
static void trace(fixture *f, bool with_unbind)
{
    memset(f, 0, sizeof *f);
    assert_int_equal(sg_env_new(C, NULL, &f->env), SG_OK);
    assert_int_equal(sg_inputs_new(f->env, NULL, &f->in), SG_OK);
    assert_int_equal(sg_tracer_new(f->env, &f->t), SG_OK);
    const sg_source *src;
    const sg_fake *fake;
    int64_t sizes[2] = {5, 3};
    sg_tensor_value example = {.ndim = 2, .sizes = sizes};
    assert_int_equal(sg_source_local(C, &src, "x"), SG_OK);
    assert_int_equal(sg_inputs_tensor(f->in, src, &example, NULL, &fake), SG_OK);
    assert_int_equal(sg_tracer_input_tensor(f->t, &f->x, "x", fake, SG_FLOAT64, 0), SG_OK);
    const sg_expr *one, *two, *minus_one;
    assert_int_equal(sg_expr_int(C, &one, 1) | sg_expr_int(C, &two, 2) | sg_expr_int(C, &minus_one, -1), SG_OK);
    sg_arg v[2] = {{.kind = SG_ARG_VALUE, .u.v = f->x}, {.kind = SG_ARG_INTS, .u.ints = {1, &minus_one}}};
    call(f, &f->y, "view", v, 2);
    sg_arg add[2] = {{.kind = SG_ARG_VALUE, .u.v = f->x}, {.kind = SG_ARG_INT, .u.e = one}};
    call(f, &f->a, "add_.Tensor", add, 2);
    sg_arg mul[2] = {{.kind = SG_ARG_VALUE, .u.v = f->y}, {.kind = SG_ARG_INT, .u.e = two}};
    call(f, &f->z, "mul.Tensor", mul, 2);
    sg_arg ub[2] = {{.kind = SG_ARG_VALUE, .u.v = f->x}, {.kind = SG_ARG_INT, .u.e = one}};
    if (with_unbind)
        call(f, &f->u, "unbind.int", ub, 2);
    sg_value outs[2] = {f->z, f->a};
    assert_int_equal(sg_tracer_output(f->t, outs, 2), SG_OK);
}

static void untrace(fixture *f)
{
    sg_tracer_free(f->t);
    sg_inputs_free(f->in);
    sg_env_free(f->env);
}

/* The node of value v. */
static uint32_t node_of(const sg__graph *g, uint32_t v)
{
    return g->vals[v].node;
}

static void test_uses(void **state)
{
    (void)state;
    fixture f;
    trace(&f, true);
    const sg__graph *g = sg__tracer_graph(f.t);
    sg__uses u;
    assert_int_equal(sg__graph_uses(g, &u), SG_OK);
    size_t n;
    const uint32_t *us = sg__uses_of(&u, f.x, &n);
    /* x is taken by view, add_ and unbind */
    assert_int_equal(n, 3);
    assert_int_equal(us[0], node_of(g, f.y));
    assert_int_equal(us[1], node_of(g, f.a));
    assert_int_equal(us[2], node_of(g, f.u));
    us = sg__uses_of(&u, f.a, &n); /* a: the output only */
    assert_int_equal(n, 1);
    assert_int_equal(g->nodes[us[0]].kind, SG_N_OUTPUT);
    us = sg__uses_of(&u, f.y, &n); /* y: mul */
    assert_int_equal(n, 1);
    assert_int_equal(us[0], node_of(g, f.z));
    assert_null(sg__uses_of(&u, f.u, &n)); /* unbind's list: nobody */
    assert_int_equal(n, 0);
    sg__uses_free(&u);
    untrace(&f);
}

static void test_aliasing(void **state)
{
    (void)state;
    fixture f;
    trace(&f, true);
    const sg__graph *g = sg__tracer_graph(f.t);
    uint32_t w[4];
    assert_int_equal(sg__graph_node_writes(g, node_of(g, f.a), w, 4), 1); /* add_ writes x */
    assert_int_equal(w[0], f.x);
    assert_int_equal(g->vals[w[0]].u.t.storage, g->vals[f.y].u.t.storage); /* which y views */
    assert_int_equal(sg__graph_node_writes(g, node_of(g, f.z), w, 4), 0);
    assert_int_equal(sg__graph_node_writes(g, node_of(g, f.y), w, 4), 0); /* a view writes nothing */
    assert_int_equal(sg__graph_view_of(g, f.y), f.x);
    assert_int_equal(sg__graph_view_of(g, f.z), SG_NOVAL);
    assert_int_equal(sg__graph_view_of(g, f.a), SG_NOVAL); /* not a view: x itself, written */
    assert_int_equal(sg__graph_updates(g, f.a), f.x);
    assert_int_equal(sg__graph_updates(g, f.y), SG_NOVAL);
    assert_int_equal(sg__graph_tensor_of(g, f.a), f.x);
    assert_int_equal(sg__graph_tensor_of(g, f.x), f.x);
    /* each element of unbind's list is a view of x (Tensor(a -> *) self -> Tensor(a)[]) */
    const sg__gval *list = &g->vals[f.u];
    assert_int_equal(list->kind, SG_V_LIST);
    assert_int_equal(list->u.list.n, 3); /* x.size(1), guarded to its hint */
    for (uint32_t k = 0; k < list->u.list.n; k++)
        assert_int_equal(sg__graph_view_of(g, g->ids[list->u.list.off + k]), f.x);
    untrace(&f);
}

/* A pass: every in-place call with a functional variant becomes that
 * variant, written back into self by copy_ (what functionalization
 * starts from). */
static sg_status functional_then_copy(sg__replay *r, void *ud, uint32_t node, const sg__garg *args, size_t nargs)
{
    const sg__opreg *reg = ud;
    const sg__gnode *n = &sg__replay_src(r)->nodes[node];
    const sg__opinfo *o = sg__op_info(n->schema->op);
    uint32_t v;
    if (!(n->schema->flags & SG_OPF_INPLACE) || o->functional == SG_OP_NONE) {
        sg_status s = sg__replay_call(r, n->schema, args, nargs, &v);
        return s ? s : sg__replay_map(r, n->out, v);
    }
    uint32_t f;
    sg_status s = sg__replay_call(r, sg__opreg_op(reg, o->functional), args, nargs, &f);
    if (s)
        return s;
    sg__garg copy[2] = {args[0], {.kind = SG_A_VALUE, .u.v = f}};
    if ((s = sg__replay_call(r, sg__opreg_op(reg, SG_OP_copy_), copy, 2, &v)))
        return s;
    return sg__replay_map(r, n->out, v);
}

static void test_pass(void **state)
{
    (void)state;
    fixture f;
    trace(&f, false);
    const sg__graph *g = sg__tracer_graph(f.t);
    sg__graph *d;
    assert_int_equal(sg__graph_new(f.env, &d), SG_OK);
    if (sg__graph_replay(g, d, functional_then_copy, (void *)sg__tracer_reg(f.t)))
        fail_msg("%s", sg_ctx_last_error_msg(C));
    assert_int_equal(sg__graph_lint(d), SG_OK);
    char *text;
    assert_int_equal(sg__graph_print(d, &text), SG_OK);
    /* the shapes are the rules': add.Tensor of x is f64[s0, s1], copy_ gives x */
    assert_string_equal(text, "def forward(self, s0: \"Sym(s0)\", s1: \"Sym(s1)\", x: \"f64[s0, s1]\"):\n"
                              "    view: \"f64[s0*s1]\" = torch.ops.aten.view.default(x, [-1])\n"
                              "    add: \"f64[s0, s1]\" = torch.ops.aten.add.Tensor(x, 1)\n"
                              "    copy_: \"f64[s0, s1]\" = torch.ops.aten.copy_.default(x, add)\n"
                              "    mul: \"f64[s0*s1]\" = torch.ops.aten.mul.Tensor(view, 2)\n"
                              "    return (mul, copy_)\n");
    sg_free(text);
    /* the copy writes x's storage, the one the view reads */
    uint32_t cp = d->nnodes - 3, w[2];
    while (d->nodes[cp].kind != SG_N_CALL || d->nodes[cp].schema->op != SG_OP_copy_)
        cp--;
    assert_int_equal(sg__graph_node_writes(d, cp, w, 2), 1);
    assert_int_equal(sg__graph_tensor_of(d, d->nodes[cp].out), w[0]);
    sg__graph_free(d);
    untrace(&f);
}

/* The identity replay prints the same, and so does sg_tracer_verify. */
static void test_identity(void **state)
{
    (void)state;
    fixture f;
    trace(&f, false);
    assert_int_equal(sg_tracer_verify(f.t), SG_OK);
    sg__graph *d;
    assert_int_equal(sg__graph_new(f.env, &d), SG_OK);
    assert_int_equal(sg__graph_replay(sg__tracer_graph(f.t), d, NULL, NULL), SG_OK);
    char *a, *b;
    assert_int_equal(sg__graph_print(sg__tracer_graph(f.t), &a), SG_OK);
    assert_int_equal(sg__graph_print(d, &b), SG_OK);
    assert_string_equal(a, b);
    sg_free(a);
    sg_free(b);
    /* bad input: no tracer */
    assert_int_equal(sg_tracer_verify(NULL), SG_EINVAL);
    sg_tracer_lint_sizes(NULL, 1); /* nothing to do, no crash */
    /* a graph that is not empty is refused */
    assert_int_equal(sg__graph_replay(sg__tracer_graph(f.t), d, NULL, NULL), SG_EINVAL);
    sg__graph_free(d);
    untrace(&f);
}

/* A graph with a cond: its branches are replayed as subgraphs (lifted
 * placeholders taking the mapped outer values, the branch calls recorded
 * again), its merged output copied; the replay prints the same.
 *     def f(x):                      # x: f64[s0, s1]
 *         def t(): return (x.sin(),)
 *         def e(): return (x.mul(2),)
 *         return torch.cond(x.shape[0] > 4, t, e, ())[0] */
static void test_replay_cond(void **state)
{
    (void)state;
    fixture f = {0};
    assert_int_equal(sg_env_new(C, NULL, &f.env), SG_OK);
    assert_int_equal(sg_inputs_new(f.env, NULL, &f.in), SG_OK);
    assert_int_equal(sg_tracer_new(f.env, &f.t), SG_OK);
    const sg_source *src;
    const sg_fake *fake;
    int64_t sizes[2] = {5, 3};
    sg_tensor_value example = {.ndim = 2, .sizes = sizes};
    assert_int_equal(sg_source_local(C, &src, "x"), SG_OK);
    assert_int_equal(sg_inputs_tensor(f.in, src, &example, NULL, &fake), SG_OK);
    assert_int_equal(sg_tracer_input_tensor(f.t, &f.x, "x", fake, SG_FLOAT64, 0), SG_OK);
    const sg_expr *two, *four, *pred;
    assert_int_equal(sg_expr_int(C, &two, 2) | sg_expr_int(C, &four, 4), SG_OK);
    assert_int_equal(sg_expr_rel(C, &pred, SG_REL_GT, sg_tracer_size(f.t, f.x, 0), four), SG_OK);
    uint32_t ts, fs;
    sg_value v, lx, out;
    assert_int_equal(sg_tracer_scope_open(f.t, &ts, "cond_true_0"), SG_OK);
    assert_int_equal(sg_tracer_scope_input(f.t, &lx, "x", f.x), SG_OK);
    sg_arg sin[1] = {{.kind = SG_ARG_VALUE, .u.v = lx}};
    call(&f, &v, "sin", sin, 1);
    assert_int_equal(sg_tracer_scope_close(f.t, &v, 1), SG_OK);
    assert_int_equal(sg_tracer_scope_open(f.t, &fs, "cond_false_0"), SG_OK);
    assert_int_equal(sg_tracer_scope_input(f.t, &lx, "x", f.x), SG_OK);
    sg_arg mul[2] = {{.kind = SG_ARG_VALUE, .u.v = lx}, {.kind = SG_ARG_INT, .u.e = two}};
    call(&f, &v, "mul.Tensor", mul, 2);
    assert_int_equal(sg_tracer_scope_close(f.t, &v, 1), SG_OK);
    sg_arg p = {.kind = SG_ARG_INT, .u.e = pred}; /* a boolean expression */
    if (sg_tracer_cond(f.t, &out, &p, ts, fs, 4))
        fail_msg("%s", sg_ctx_last_error_msg(C));
    v = sg_tracer_list_get(f.t, out, 0);
    assert_int_equal(sg_tracer_output(f.t, &v, 1), SG_OK);
    if (sg_tracer_verify(f.t))
        fail_msg("%s", sg_ctx_last_error_msg(C));
    sg__graph *d;
    assert_int_equal(sg__graph_new(f.env, &d), SG_OK);
    if (sg__graph_replay(sg__tracer_graph(f.t), d, NULL, NULL))
        fail_msg("%s", sg_ctx_last_error_msg(C));
    assert_int_equal(sg__graph_lint(d), SG_OK);
    char *a, *b;
    assert_int_equal(sg__graph_print(sg__tracer_graph(f.t), &a), SG_OK);
    assert_int_equal(sg__graph_print(d, &b), SG_OK);
    assert_string_equal(a, b);
    assert_non_null(strstr(b, "class cond_true_0"));
    sg_free(a);
    sg_free(b);
    sg__graph_free(d);
    untrace(&f);
}

/* sg__graph_record refuses what does not bind. */
static void test_record_errors(void **state)
{
    (void)state;
    fixture f;
    trace(&f, false);
    sg__graph *g = (sg__graph *)sg__tracer_graph(f.t);
    const sg__opreg *reg = sg__tracer_reg(f.t);
    uint32_t v, before = (uint32_t)g->nvals;
    sg__garg one = {.kind = SG_A_VALUE, .u.v = f.x};
    sg__garg bad = {.kind = SG_A_VALUE, .u.v = 100000};
    sg__garg alpha = {.kind = SG_A_FLOAT, .kw = "alpah", .u.f = 2};
    const sg__schema *add = sg__opreg_op(reg, SG_OP_add_Tensor);
    assert_int_equal(sg__graph_record(g, add, &one, 1, 0, NULL, &v), SG_EINVAL); /* other missing */
    sg__garg two[2] = {one, bad};
    assert_int_equal(sg__graph_record(g, add, two, 2, 0, NULL, &v), SG_EINVAL); /* not a value of g */
    sg__garg three[3] = {one, one, alpha};
    assert_int_equal(sg__graph_record(g, add, three, 3, 0, NULL, &v), SG_EINVAL); /* no such name */
    assert_int_equal(sg__graph_record(g, sg__opreg_op(reg, SG_OP_reshape), two, 1, 0, NULL, &v), SG_EUNSUPPORTED);
    assert_int_equal(g->nvals, before); /* nothing left behind */
    untrace(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uses),          cmocka_unit_test(test_aliasing), cmocka_unit_test(test_pass),
        cmocka_unit_test(test_identity),      cmocka_unit_test(test_record_errors),
        cmocka_unit_test(test_replay_cond),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
