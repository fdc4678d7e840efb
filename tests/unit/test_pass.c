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
    /* (a positional argument after a named one: empty_like's rule is remembered, its keyword-only ones looked
       up before binding) */
    sg__garg named[3] = {one, {.kind = SG_A_DTYPE, .kw = "dtype", .u.dtype = SG_FLOAT64}, one};
    assert_int_equal(sg__graph_record(g, sg__opreg_op(reg, SG_OP_empty_like), named, 3, 0, NULL, &v), SG_EINVAL);
    assert_int_equal(sg__graph_record(g, sg__opreg_op(reg, SG_OP_reshape), two, 1, 0, NULL, &v), SG_EUNSUPPORTED);
    assert_int_equal(g->nvals, before); /* nothing left behind */
    untrace(&f);
}

/* ---- the rules' results remembered (rule_memo.c) ---- */

/* A tensor placeholder of g: f64, sizes sz, strides st, offset 0, on a new
 * storage (storage SG_NOVAL) or on storage. */
static uint32_t memo_input(sg__graph *g, const sg_expr *const *sz, const sg_expr *const *st, uint32_t storage,
                           const char *name)
{
    uint32_t v;
    const sg_expr *zero;
    assert_int_equal(sg_expr_int(C, &zero, 0), SG_OK);
    assert_int_equal(sg__graph_tensor(g, &v, SG_FLOAT64, 2, sz, st, zero, storage), SG_OK);
    assert_int_equal(sg__graph_placeholder(g, v, name), SG_OK);
    return v;
}

/* Value a of g and value b of h: the same layout, dtype and flags, b on
 * h's storage hs (SG_NOVAL: a new one, of a's storage's size), b's _base
 * hb. */
static void same_value(const sg__graph *g, uint32_t a, const sg__graph *h, uint32_t b, uint32_t hs, uint32_t hb)
{
    const sg__fake_tensor *x = &g->vals[a].u.t, *y = &h->vals[b].u.t;
    assert_int_equal(x->dtype, y->dtype);
    assert_int_equal(x->ndim, y->ndim);
    for (uint32_t d = 0; d < x->ndim; d++) {
        assert_ptr_equal(sg__graph_size(g, a, d), sg__graph_size(h, b, d));
        assert_ptr_equal(sg__graph_stride(g, a, d), sg__graph_stride(h, b, d));
    }
    assert_ptr_equal(x->offset, y->offset);
    assert_int_equal(x->requires_grad, y->requires_grad);
    assert_int_equal(x->leaf, y->leaf);
    if (hs == SG_NOVAL) {
        assert_int_equal(y->storage, h->nstorages - 1);
        assert_ptr_equal(sg__graph_storage_numel(g, x->storage), sg__graph_storage_numel(h, y->storage));
    } else {
        assert_int_equal(y->storage, hs);
    }
    assert_int_equal(y->base, hb);
}

/* A call of op with args (by schema position) into g: whether the memo
 * answers it now. */
static bool memo_has(sg__graph *g, const sg__schema *op, const sg__garg *args, size_t n)
{
    sg__rmemo_key k;
    uint32_t v;
    if (!sg__rmemo_key_of(g, op, 0, 0, args, NULL, n, &k))
        return false;
    size_t before = g->nvals;
    assert_int_equal(sg__rmemo_use(g, &k, args, &v), SG_OK);
    g->nvals = before; /* (a value of no node: dropped) */
    return v != SG_NOVAL;
}

/* A result the memo gives is the one the rule gives: for another input of
 * the same layout (its storage, its _base), in the same graph and against
 * a fresh graph that runs the rule; after the environment learns something
 * the memo answers nothing, and the rule's new answer (a stride folded by
 * the new fact) is the one recorded. */
static void test_rule_memo(void **state)
{
    (void)state;
    fixture f;
    trace(&f, false);
    const sg__opreg *reg = sg__tracer_reg(f.t);
    const sg__schema *mul = sg__opreg_op(reg, SG_OP_mul_Tensor), *tr = sg__opreg_op(reg, SG_OP_t);
    const sg__schema *add_ = sg__opreg_op(reg, SG_OP_add__Tensor);
    const sg_expr *u0, *u1, *mx, *one, *two, *ge;
    assert_int_equal(sg_env_create_unbacked(f.env, &u0, NULL, 1, NULL), SG_OK);
    assert_int_equal(sg_env_create_unbacked(f.env, &u1, NULL, 1, NULL), SG_OK);
    assert_int_equal(sg_expr_int(C, &one, 1) | sg_expr_int(C, &two, 2), SG_OK);
    const sg_expr *m_args[2] = {u1, one};
    assert_int_equal(sg_expr_max(C, &mx, 2, m_args), SG_OK);
    const sg_expr *sz[2] = {u0, u1}, *st[2] = {mx, one};
    sg__graph *g, *h;
    assert_int_equal(sg__graph_new(f.env, &g), SG_OK);
    assert_int_equal(sg__graph_new(f.env, &h), SG_OK);
    g->reg = h->reg = reg;
    uint32_t x = memo_input(g, sz, st, SG_NOVAL, "x"), y = memo_input(g, sz, st, SG_NOVAL, "y");
    uint32_t hx = memo_input(h, sz, st, SG_NOVAL, "x");
    sg__garg ax[2] = {{.kind = SG_A_VALUE, .u.v = x}, {.kind = SG_A_EXPR, .u.e = two}}, ay[2] = {ax[0], ax[1]};
    ay[0].u.v = y;
    sg__garg ahx[2] = {{.kind = SG_A_VALUE, .u.v = hx}, ax[1]};
    /* mul(x, 2): the rule runs, and its result is kept; mul(y, 2) is answered, as the rule in h answers */
    uint32_t m1, m2, hm;
    assert_false(memo_has(g, mul, ax, 2));
    assert_int_equal(sg__graph_record(g, mul, ax, 2, 0, NULL, &m1), SG_OK);
    assert_true(memo_has(g, mul, ay, 2));
    assert_int_equal(sg__graph_record(g, mul, ay, 2, 0, NULL, &m2), SG_OK);
    assert_int_equal(sg__graph_record(h, mul, ahx, 2, 0, NULL, &hm), SG_OK);
    same_value(h, hm, g, m2, SG_NOVAL, SG_NOVAL);
    assert_int_equal(g->nodes[g->vals[m2].node].nargs, 2);
    assert_int_equal(g->nodes[g->vals[m2].node].flags, 0);
    /* a view: on its argument's storage, with it as its _base; a view of that view: the same _base */
    uint32_t t1, t2, ht, tt, htt;
    sg__garg tx = {.kind = SG_A_VALUE, .u.v = x}, ty = {.kind = SG_A_VALUE, .u.v = y};
    sg__garg thx = {.kind = SG_A_VALUE, .u.v = hx};
    assert_int_equal(sg__graph_record(g, tr, &tx, 1, 0, NULL, &t1), SG_OK);
    assert_true(memo_has(g, tr, &ty, 1));
    assert_int_equal(sg__graph_record(g, tr, &ty, 1, 0, NULL, &t2), SG_OK);
    assert_int_equal(sg__graph_record(h, tr, &thx, 1, 0, NULL, &ht), SG_OK);
    same_value(h, ht, g, t2, g->vals[y].u.t.storage, y);
    sg__garg at1 = {.kind = SG_A_VALUE, .u.v = t1}, at2 = {.kind = SG_A_VALUE, .u.v = t2};
    sg__garg aht = {.kind = SG_A_VALUE, .u.v = ht};
    assert_false(memo_has(g, tr, &at2, 1)); /* t of a view: another key (its argument has a _base) */
    assert_int_equal(sg__graph_record(g, tr, &at1, 1, 0, NULL, &tt), SG_OK);
    assert_int_equal(g->vals[tt].u.t.base, x);
    assert_true(memo_has(g, tr, &at2, 1));
    assert_int_equal(sg__graph_record(g, tr, &at2, 1, 0, NULL, &tt), SG_OK);
    assert_int_equal(sg__graph_record(h, tr, &aht, 1, 0, NULL, &htt), SG_OK);
    same_value(h, htt, g, tt, g->vals[y].u.t.storage, y);
    /* two arguments on one storage are another key: mul(x, x) is not mul(x, y) */
    sg__garg axx[2] = {ax[0], ax[0]}, axy[2] = {ax[0], ay[0]};
    uint32_t v;
    assert_int_equal(sg__graph_record(g, mul, axy, 2, 0, NULL, &v), SG_OK);
    assert_true(memo_has(g, mul, axy, 2));
    assert_false(memo_has(g, mul, axx, 2));
    /* a call that writes an argument is never remembered */
    sg__rmemo_key k;
    assert_false(sg__rmemo_key_of(g, add_, 0, 0, axy, NULL, 2, &k));
    /* a keyword-only argument (named by a string of the caller's, as the formulas name it): answered the
       second time, the node holding it as binding records it (named by the schema's own string) */
    const sg__schema *clone = sg__opreg_op(reg, SG_OP_clone);
    char kw[] = "memory_format";
    sg__garg cx[2] = {tx, {.kind = SG_A_MEMFMT, .kw = kw, .u.dtype = SG_CONTIGUOUS_FORMAT}}, cy[2] = {ty, cx[1]};
    uint32_t c1, c2;
    assert_int_equal(sg__graph_record(g, clone, cx, 2, 0, NULL, &c1), SG_OK);
    assert_true(memo_has(g, clone, cy, 2));
    size_t before = g->nvals;
    assert_int_equal(sg__graph_record(g, clone, cy, 2, 0, NULL, &c2), SG_OK);
    assert_int_equal(g->nvals, before + 1);
    same_value(g, c1, g, c2, SG_NOVAL, SG_NOVAL);
    const sg__gnode *n1 = &g->nodes[g->vals[c1].node], *n2 = &g->nodes[g->vals[c2].node];
    assert_int_equal(n1->nargs, 2);
    assert_int_equal(n2->nargs, 2);
    assert_ptr_equal(g->args[n1->args + 1].kw, clone->args[1].name);
    assert_ptr_equal(g->args[n2->args + 1].kw, clone->args[1].name);
    assert_int_equal(g->args[n2->args + 1].kind, SG_A_MEMFMT);
    /* the environment learns u1 >= 1: nothing is answered; the rule folds the stride Max(1, u1) to u1 */
    assert_int_equal(sg_expr_rel(C, &ge, SG_REL_GE, u1, one), SG_OK);
    assert_int_equal(sg_env_check(f.env, ge, NULL), SG_OK);
    assert_false(memo_has(g, mul, ay, 2));
    uint32_t m3, hm3;
    assert_int_equal(sg__graph_record(g, mul, ay, 2, 0, NULL, &m3), SG_OK);
    assert_ptr_equal(sg__graph_stride(g, m3, 0), u1);
    assert_ptr_equal(sg__graph_stride(g, m2, 0), mx);
    sg__graph *h2;
    assert_int_equal(sg__graph_new(f.env, &h2), SG_OK);
    h2->reg = reg;
    ahx[0].u.v = memo_input(h2, sz, st, SG_NOVAL, "x");
    assert_int_equal(sg__graph_record(h2, mul, ahx, 2, 0, NULL, &hm3), SG_OK);
    same_value(h2, hm3, g, m3, SG_NOVAL, SG_NOVAL);
    sg__graph_free(h2);
    sg__graph_free(g);
    sg__graph_free(h);
    untrace(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uses),          cmocka_unit_test(test_aliasing), cmocka_unit_test(test_pass),
        cmocka_unit_test(test_identity),      cmocka_unit_test(test_record_errors),
        cmocka_unit_test(test_replay_cond),   cmocka_unit_test(test_rule_memo),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
