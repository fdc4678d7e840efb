/* graph: operator schemas (parsing, printing back, what the alias
 * annotations say) and the operator registry. The registry's table is
 * compared with the installed PyTorch's schemas by tests/diff/schemas.test. */
#include "cmocka_all.h"

#include <stdio.h>
#include <string.h>

#include "graph/graph.h"
#include "graph/meta.h"
#include "graph/ops.h"
#include "graph/schema.h"
#include "shapeguard.h"

static sg_ctx *C;
static sg__opreg *R;

static int setup(void **state)
{
    (void)state;
    if (sg_ctx_new(&C) != SG_OK)
        return -1;
    return sg__opreg_new(C, &R) == SG_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    sg__opreg_free(R);
    sg_ctx_free(C);
    return 0;
}

static const sg__schema *op(const char *name)
{
    const sg__schema *s = sg__opreg_find(R, name);
    if (!s)
        fail_msg("no operator %s", name);
    return s;
}

static void test_registry_lookup(void **state)
{
    (void)state;
    assert_true(sg__opreg_count(R) >= 100);
    assert_string_equal(op("mul_.Tensor")->name, "mul_");
    assert_string_equal(op("mul_.Tensor")->overload, "Tensor");
    assert_string_equal(op("view")->overload, "");
    assert_null(sg__opreg_find(R, "mul_"));       /* the overload is part of the name */
    assert_null(sg__opreg_find(R, "mul.Tensorx"));
    assert_null(sg__opreg_find(R, ""));
    for (size_t i = 0; i < sg__opreg_count(R); i++) { /* every entry is found by its name */
        char name[2 * SG_SCHEMA_NAME];
        sg__schema_full_name(sg__opreg_at(R, i), name);
        assert_ptr_equal(sg__opreg_find(R, name), sg__opreg_at(R, i));
    }
    assert_null(sg__opreg_at(R, sg__opreg_count(R)));
}

/* Every row of the operator table has a shape rule or a composite (the
 * rows only the passes record too: copy, zero, fill); a row whose rule is
 * missing fails here. Each row's schema, as the registry parsed it, prints
 * back as the table's text (sg__opreg_new no longer checks it each time). */
static void test_every_operator_has_a_rule(void **state)
{
    (void)state;
    for (size_t i = 0; i < sg__opreg_count(R); i++) {
        const sg__schema *s = sg__opreg_at(R, i);
        const sg__opinfo *o = sg__op_info(s->op);
        assert_int_equal(s->op, i);
        assert_non_null(o);
        char back[1024];
        assert_true(sg__schema_print(s, back, sizeof back) < sizeof back);
        assert_string_equal(back, o->schema);
        if (!o->rule && !o->composite)
            fail_msg("operator %s has no shape rule", s->name);
        if (o->rule && o->composite)
            fail_msg("operator %s has both a rule and a composite", s->name);
    }
    assert_null(sg__op_info(SG_OP_NONE));
    assert_null(sg__op_info(SG_OP_COUNT));
}

/* The columns that name other rows: a functional variant writes nothing and
 * has the in-place overload's name without its '_' (or the out= overload's
 * name); a view's inverse is the scatter of that view, writing nothing. */
static void test_operator_table_links(void **state)
{
    (void)state;
    size_t functional = 0, inverse = 0;
    for (size_t i = 0; i < sg__opreg_count(R); i++) {
        const sg__schema *s = sg__opreg_at(R, i);
        const sg__opinfo *o = sg__op_info(s->op);
        if (o->functional != SG_OP_NONE) {
            const sg__schema *f = sg__opreg_op(R, o->functional);
            assert_non_null(f);
            assert_true(s->flags & (SG_OPF_INPLACE | SG_OPF_OUT));
            assert_int_equal(f->flags & SG_OPF_MUTATES, 0);
            size_t n = strlen(s->name) - ((s->flags & SG_OPF_INPLACE) ? 1 : 0);
            assert_int_equal(strlen(f->name), n);
            assert_memory_equal(f->name, s->name, n);
            functional++;
        } else {
            /* every out= overload and every in-place arithmetic op has one */
            assert_false(s->flags & SG_OPF_OUT);
        }
        if (o->inverse != SG_OP_NONE) {
            const sg__schema *v = sg__opreg_op(R, o->inverse);
            char want[2 * SG_SCHEMA_NAME];
            snprintf(want, sizeof want, "%s_scatter", s->name);
            assert_string_equal(v->name, want);
            assert_true(s->flags & SG_OPF_VIEW);
            assert_int_equal(v->flags & SG_OPF_MUTATES, 0);
            inverse++;
        }
    }
    /* worked out from ops.def by hand: 8 in-place arithmetic (add_ sub_ mul_ div_, two overloads each),
     * copy_ clamp_ sin_ zero_, fill_ x2, 6 in-place views (t_ transpose_ unsqueeze_ squeeze_ x2 as_strided_), detach_,
     * 30 out= overloads (add sub mul div neg abs exp log sin cos tanh sigmoid, pow x3, clamp x2, where,
     * and two for each of the six comparisons), 14 more outside TensorIterator (sum mean amax amin mm bmm
     * cat stack zeros ones full empty, arange x2, matmul mv dot, nonzero masked_select), logical_and_
     * (which clamp's backward records); resize_ has none; the views slice, select, diagonal and as_strided
     * have scatters */
    assert_int_equal(functional, 8 + 6 + 6 + 1 + 30 + 19 + 1);
    assert_int_equal(inverse, 4);
    assert_int_equal(sg__op_info(SG_OP_add__Tensor)->functional, SG_OP_add_Tensor);
    assert_int_equal(sg__op_info(SG_OP_neg_out)->functional, SG_OP_neg);
    assert_int_equal(sg__op_info(SG_OP_slice_Tensor)->inverse, SG_OP_slice_scatter);
}

/* The Python spellings: each found by name with its overloads in the
 * table's order; names not spelled are not found. */
static void test_python_spellings(void **state)
{
    (void)state;
    const sg__pyop *p = sg__opreg_pyop(R, "add");
    assert_non_null(p);
    assert_int_equal(p->n, 2);
    assert_string_equal(p->s[0]->overload, "Tensor");
    assert_string_equal(p->s[1]->overload, "out");
    assert_true(p->any_out);
    assert_int_equal(p->flags, SG_PYF_WRAP);
    p = sg__opreg_pyop(R, "arange"); /* arange, .start, .start_step, .out, .start_out */
    assert_non_null(p);
    assert_int_equal(p->n, 5);
    assert_int_equal(p->flags, SG_PYF_FUNC | SG_PYF_CREATE);
    assert_true(p->any_out);
    assert_string_equal(p->s[4]->overload, "start_out");
    p = sg__opreg_pyop(R, "view");
    assert_non_null(p);
    assert_int_equal(p->n, 1);
    assert_false(p->any_out);
    assert_null(sg__opreg_pyop(R, "_unsafe_view")); /* made by passes, not spelled in Python */
    assert_null(sg__opreg_pyop(R, "add.Tensor"));
    assert_null(sg__opreg_pyop(R, ""));
    for (size_t i = 0; i < sg__opreg_count(R); i++) {
        const sg__opinfo *o = sg__op_info((unsigned)i);
        if (!o->py)
            continue;
        p = sg__opreg_pyop(R, o->py);
        assert_non_null(p);
        bool found = false;
        for (int k = 0; k < p->n; k++)
            found |= p->s[k] == sg__opreg_at(R, i);
        assert_true(found);
    }
}

/* The flags, worked out from the annotations written in each schema. */
static void test_alias_annotations(void **state)
{
    (void)state;
    const sg__schema *s = op("mul_.Tensor"); /* Tensor(a!) self ... -> Tensor(a!) */
    assert_int_equal(s->flags, SG_OPF_MUTATES | SG_OPF_INPLACE);
    assert_int_equal(s->written, 1);
    assert_int_equal(s->ret_alias[0], 0);

    s = op("mul.Tensor"); /* nothing annotated */
    assert_int_equal(s->flags, 0);
    assert_int_equal(s->written, 0);
    assert_int_equal(s->ret_alias[0], -1);

    s = op("view"); /* Tensor(a) self -> Tensor(a) */
    assert_int_equal(s->flags, SG_OPF_VIEW);
    assert_int_equal(s->ret_alias[0], 0);

    s = op("add.out"); /* self, other, *, alpha, Tensor(a!) out -> Tensor(a!) */
    assert_int_equal(s->flags, SG_OPF_MUTATES | SG_OPF_OUT);
    assert_int_equal(s->written, 1u << 3);
    assert_int_equal(s->ret_alias[0], 3);
    assert_true(s->args[3].kwonly && s->args[2].kwonly && !s->args[1].kwonly);
    assert_int_equal(sg__schema_arg(s, "out"), 3);
    assert_int_equal(sg__schema_arg(s, "alpha"), 2);
    assert_int_equal(sg__schema_arg(s, "nope"), -1);

    s = op("unbind.int"); /* Tensor(a -> *) self -> Tensor(a)[] */
    assert_int_equal(s->flags, SG_OPF_VIEW);
    assert_int_equal(s->args[0].type.alias_after, '*');
    assert_true(s->rets[0].type.list);

    s = op("set_.source_Tensor"); /* writes self only; source is read */
    assert_int_equal(s->flags, SG_OPF_MUTATES | SG_OPF_INPLACE);
    assert_int_equal(s->written, 1);

    s = op("t_"); /* an in-place view op: its annotations say in-place */
    assert_int_equal(s->flags, SG_OPF_MUTATES | SG_OPF_INPLACE);

    s = op("sum.dim_IntList"); /* int[1]? dim */
    assert_true(s->args[1].type.list && s->args[1].type.optional && s->args[1].type.list_n == 1);
    assert_true(s->args[2].has_def && !strcmp(s->args[2].def, "False"));
}

static void roundtrip(const char *text)
{
    sg__schema s;
    char back[1024];
    assert_int_equal(sg__schema_parse(C, &s, text), SG_OK);
    assert_true(sg__schema_print(&s, back, sizeof back) < sizeof back);
    assert_string_equal(back, text);
}

static void test_parse_print(void **state)
{
    (void)state;
    roundtrip("foo(Tensor?[] a, int[1]? b=None, Tensor(a!)? c=None) -> (Tensor x, Tensor y)");
    roundtrip("bar() -> ()");
    roundtrip("baz.over(Scalar s, *, ScalarType? dtype=None, int[] d=[0, 1]) -> Tensor(b)");
    roundtrip("q(Tensor(a!)[] outs, str mode=\"mean\") -> Tensor(a!)[]");
    /* "aten::" is dropped */
    sg__schema s;
    char back[1024];
    assert_int_equal(sg__schema_parse(C, &s, "aten::neg(Tensor self) -> Tensor"), SG_OK);
    sg__schema_print(&s, back, sizeof back);
    assert_string_equal(back, "neg(Tensor self) -> Tensor");
    /* a short buffer: the length needed, the text cut */
    char small[8];
    assert_int_equal(sg__schema_print(&s, small, sizeof small), strlen("neg(Tensor self) -> Tensor"));
    assert_string_equal(small, "neg(Ten");
}

static void bad(const char *text, sg_status want, const char *msg)
{
    sg__schema s;
    sg_ctx_reset_error(C);
    assert_int_equal(sg__schema_parse(C, &s, text), want);
    if (!strstr(sg_ctx_last_error_msg(C), msg))
        fail_msg("'%s': message '%s' lacks '%s'", text, sg_ctx_last_error_msg(C), msg);
}

static void test_parse_errors(void **state)
{
    (void)state;
    bad("mul(Tensor self", SG_ESYNTAX, "column 16: expected ',' or ')'");
    bad("mul(Tensr self) -> Tensor", SG_ESYNTAX, "column 5: unknown type");
    bad("mul(Tensor self) Tensor", SG_ESYNTAX, "column 17: expected ' -> '");
    bad("mul(Tensor self) -> Tensor x y", SG_ESYNTAX, "column 29: text after the returns");
    bad("mul(Tensor(A) self) -> Tensor", SG_ESYNTAX, "column 12: expected an alias set");
    bad("mul(Tensor(a self) -> Tensor", SG_ESYNTAX, "column 13: expected ')'");
    bad("mul(Tensor self=) -> Tensor", SG_ESYNTAX, "column 17: expected a default value");
    bad("mul(*, *, Tensor x) -> Tensor", SG_ESYNTAX, "a second '*'");
    bad("1mul(Tensor x) -> Tensor", SG_ESYNTAX, "column 1: expected the operator's name");
    bad("", SG_ESYNTAX, "column 1");
    bad("averyveryveryveryverylongoperatorname(Tensor x) -> Tensor", SG_ELIMIT, "name too long");
    bad("f(Tensor a, Tensor b, Tensor c, Tensor d, Tensor e, Tensor f, Tensor g, Tensor h, Tensor i, Tensor j, "
        "Tensor k, Tensor l, Tensor m) -> Tensor",
        SG_ELIMIT, "too many arguments");
    bad("f(int[100] x) -> Tensor", SG_ELIMIT, "list size too large");
}

/* ---- the IR ---- */

static const sg_expr *E(const char *text)
{
    const sg_expr *e = NULL;
    if (sg_parse(C, &e, text, NULL) != SG_OK)
        fail_msg("cannot parse %s: %s", text, sg_ctx_last_error_msg(C));
    return e;
}

typedef struct {
    sg_env *env;
    sg__graph *g;
    const sg_expr *s0;
    uint32_t a, sym; /* the tensor placeholder and the symbol's */
} fixture;

/* def forward(self, s0, a: f64[s0, 3]) with a contiguous (strides 3, 1). */
static void start(fixture *F)
{
    const sg_expr *hint = E("5");
    assert_int_equal(sg_env_new(C, NULL, &F->env), SG_OK);
    assert_int_equal(sg_env_create_backed(F->env, &F->s0, "L['a'].size()[0]", hint, SG_DIM_DYNAMIC, SG_INPUT_SIZE,
                                          NULL),
                     SG_OK);
    assert_int_equal(sg__graph_new(F->env, &F->g), SG_OK);
    const sg_expr *sizes[2] = {F->s0, E("3")}, *strides[2] = {E("3"), E("1")};
    assert_int_equal(sg__graph_value(F->g, &F->sym, SG_V_SYMINT, F->s0, 0), SG_OK);
    assert_int_equal(sg__graph_placeholder(F->g, F->sym, NULL), SG_OK);
    assert_int_equal(sg__graph_tensor(F->g, &F->a, SG_FLOAT64, 2, sizes, strides, E("0"), SG_NOVAL), SG_OK);
    assert_int_equal(sg__graph_placeholder(F->g, F->a, "a"), SG_OK);
}

static void finish(fixture *F)
{
    sg__graph_free(F->g);
    sg_env_free(F->env);
}

/* out = op(args) giving a tensor of sizes (contiguous strides given) on storage. */
static uint32_t call(fixture *F, const char *name, const sg__garg *args, size_t n, const char *const *sizes,
                     const char *const *strides, size_t ndim, uint32_t storage)
{
    const sg_expr *sz[4], *st[4];
    for (size_t i = 0; i < ndim; i++) {
        sz[i] = E(sizes[i]);
        st[i] = E(strides[i]);
    }
    uint32_t v;
    assert_int_equal(sg__graph_tensor(F->g, &v, SG_FLOAT64, ndim, sz, st, E("0"), storage), SG_OK);
    assert_int_equal(sg__graph_call(F->g, op(name), args, n, v, 7), SG_OK);
    return v;
}

static void test_graph_build_print(void **state)
{
    (void)state;
    fixture F;
    start(&F);
    sg__garg mul_args[2] = {{.kind = SG_A_VALUE, .u.v = F.a}, {.kind = SG_A_EXPR, .u.e = E("2")}};
    const char *sz2[2] = {"s0", "3"}, *st2[2] = {"3", "1"};
    uint32_t mul = call(&F, "mul.Tensor", mul_args, 2, sz2, st2, 2, SG_NOVAL);
    uint32_t off;
    const sg_expr *shape[1] = {E("3*s0")};
    assert_int_equal(sg__graph_exprs(F.g, &off, shape, 1), SG_OK);
    sg__garg view_args[2] = {{.kind = SG_A_VALUE, .u.v = mul}, {.kind = SG_A_EXPRS, .u.list = {off, 1}}};
    const char *sz1[1] = {"3*s0"}, *st1[1] = {"1"};
    uint32_t view = call(&F, "view", view_args, 2, sz1, st1, 1, F.g->vals[mul].u.t.storage);
    sg__garg mul2_args[2] = {{.kind = SG_A_VALUE, .u.v = view}, {.kind = SG_A_VALUE, .u.v = view}};
    uint32_t mul_ = call(&F, "mul_.Tensor", mul2_args, 2, sz1, st1, 1, F.g->vals[view].u.t.storage);
    sg__garg sum_args[3] = {{.kind = SG_A_VALUE, .u.v = mul_},
                            {.kind = SG_A_EXPRS, .u.list = {off, 1}},
                            {.kind = SG_A_BOOL, .kw = "keepdim", .u.b = true}};
    const sg_expr *zero[1] = {E("0")};
    assert_int_equal(sg__graph_exprs(F.g, &off, zero, 1), SG_OK);
    sum_args[1].u.list.off = off;
    const char *szk[1] = {"1"};
    uint32_t mul3 = call(&F, "sum.dim_IntList", sum_args, 3, szk, st1, 1, SG_NOVAL);
    assert_int_equal(sg__graph_assert(F.g, E("s0 <= 100"), 9), SG_OK);
    uint32_t outs[2] = {view, mul3};
    assert_int_equal(sg__graph_output(F.g, outs, 2), SG_OK);
    assert_int_equal(sg__graph_lint(F.g), SG_OK);

    char *text = NULL;
    assert_int_equal(sg__graph_print(F.g, &text), SG_OK);
    assert_string_equal(text, "def forward(self, s0: \"Sym(s0)\", a: \"f64[s0, 3]\"):\n"
                              "    mul: \"f64[s0, 3]\" = torch.ops.aten.mul.Tensor(a, 2)\n"
                              "    view: \"f64[3*s0]\" = torch.ops.aten.view.default(mul, [3*s0])\n"
                              "    mul_: \"f64[3*s0]\" = torch.ops.aten.mul_.Tensor(view, view)\n"
                              "    sum_1: \"f64[1]\" = torch.ops.aten.sum.dim_IntList(mul_, [0], keepdim = True)\n"
                              "    torch._check(s0 <= 100)\n"
                              "    return (view, sum_1)\n");
    sg_free(text);
    assert_int_equal(sg__graph_ops(F.g, &text), SG_OK);
    assert_string_equal(text, "mul.Tensor view mul_.Tensor sum.dim_IntList");
    sg_free(text);
    assert_int_equal(sg__graph_dot(F.g, &text), SG_OK);
    assert_string_equal(text, "digraph G {\n  node [shape=box, fontname=monospace];\n"
                              "  n0 [label=\"s0: Sym(s0)\", shape=ellipse];\n"
                              "  n1 [label=\"a: f64[s0, 3]\", shape=ellipse];\n"
                              "  n2 [label=\"mul.Tensor\\nmul: f64[s0, 3]\"];\n"
                              "  n1 -> n2;\n"
                              "  n3 [label=\"view\\nview: f64[3*s0]\"];\n"
                              "  n2 -> n3;\n"
                              "  n4 [label=\"mul_.Tensor\\nmul_: f64[3*s0]\"];\n"
                              "  n3 -> n4;\n"
                              "  n3 -> n4;\n"
                              "  n5 [label=\"sum.dim_IntList\\nsum_1: f64[1]\"];\n"
                              "  n4 -> n5;\n"
                              "  n6 [label=\"torch._check(s0 <= 100)\", shape=diamond];\n"
                              "  n7 [label=\"output\", shape=ellipse];\n"
                              "  n3 -> n7;\n"
                              "  n5 -> n7;\n"
                              "}\n");
    sg_free(text);
    /* views share their base's storage; a new result has its own */
    assert_int_equal(F.g->vals[view].u.t.storage, F.g->vals[mul].u.t.storage);
    assert_int_not_equal(F.g->vals[mul].u.t.storage, F.g->vals[F.a].u.t.storage);
    finish(&F);
}

static void lint_fails(fixture *F, const char *msg)
{
    sg_ctx_reset_error(C);
    assert_int_equal(sg__graph_lint(F->g), SG_EINTERNAL);
    if (!strstr(sg_ctx_last_error_msg(C), msg))
        fail_msg("lint message '%s' lacks '%s'", sg_ctx_last_error_msg(C), msg);
    finish(F);
}

static void test_graph_lint(void **state)
{
    (void)state;
    fixture F;
    const char *sz[1] = {"s0"}, *st[1] = {"1"};

    start(&F); /* no output */
    lint_fails(&F, "does not end in its output");

    start(&F); /* an argument used before the node that gives it: its own value */
    uint32_t v;
    const sg_expr *s[1] = {F.s0}, *one[1] = {E("1")};
    assert_int_equal(sg__graph_tensor(F.g, &v, SG_FLOAT64, 1, s, one, E("0"), SG_NOVAL), SG_OK);
    sg__garg self[1] = {{.kind = SG_A_VALUE, .u.v = v}};
    assert_int_equal(sg__graph_call(F.g, op("neg"), self, 1, v, 1), SG_OK);
    assert_int_equal(sg__graph_output(F.g, &v, 1), SG_OK);
    lint_fails(&F, "node 2: an argument used before the node that gives it");

    start(&F); /* too few arguments for the schema */
    sg__garg a[1] = {{.kind = SG_A_VALUE, .u.v = F.a}};
    v = call(&F, "mul.Tensor", a, 1, sz, st, 1, SG_NOVAL);
    assert_int_equal(sg__graph_output(F.g, &v, 1), SG_OK);
    lint_fails(&F, "does not fit the schema: mul");

    start(&F); /* a symbol the environment does not know */
    sg__garg x[1] = {{.kind = SG_A_VALUE, .u.v = F.a}};
    const char *szx[1] = {"x7"};
    v = call(&F, "neg", x, 1, szx, st, 1, SG_NOVAL);
    assert_int_equal(sg__graph_output(F.g, &v, 1), SG_OK);
    lint_fails(&F, "neither an input of the environment nor bound before: x7");

    start(&F); /* an unbacked symbol used before it is bound, then bound: fine */
    const sg_expr *u0;
    assert_int_equal(sg_env_create_unbacked(F.env, &u0, NULL, 1, NULL), SG_OK);
    uint32_t item;
    assert_int_equal(sg__graph_value(F.g, &item, SG_V_SYMINT, u0, 0), SG_OK);
    assert_int_equal(sg__graph_call(F.g, op("_local_scalar_dense"), x, 1, item, 3), SG_OK);
    assert_int_equal(sg__graph_assert(F.g, E("u0 >= 0"), 3), SG_OK);
    assert_int_equal(sg__graph_output(F.g, &item, 1), SG_OK);
    lint_fails(&F, "node 2: an unbacked symbol used before the node that binds it: u0");

    start(&F);
    assert_int_equal(sg_env_create_unbacked(F.env, &u0, NULL, 1, NULL), SG_OK);
    assert_int_equal(sg__graph_value(F.g, &item, SG_V_SYMINT, u0, 0), SG_OK);
    assert_int_equal(sg__graph_call(F.g, op("_local_scalar_dense"), x, 1, item, 3), SG_OK);
    assert_int_equal(sg__graph_bind(F.g, 2, &u0, 1), SG_OK);
    assert_int_equal(sg__graph_assert(F.g, E("u0 >= 0"), 3), SG_OK);
    assert_int_equal(sg__graph_output(F.g, &item, 1), SG_OK);
    assert_int_equal(sg__graph_lint(F.g), SG_OK);
    finish(&F);

    /* a subgraph's signature binds its symbols at once: a tensor placeholder
     * sized s0 may come before the placeholder lifting s0 (a replay folds a
     * lifted size by a replacement into symbols lifted later, as
     * prog_45010_993 of the eighth run found); without that placeholder,
     * s0 is not bound in the subgraph */
    for (int lifted = 1; lifted >= 0; lifted--) {
        start(&F);
        uint32_t sub, in, sym, out;
        const sg_expr *sz3[2] = {F.s0, E("3")}, *st3[2] = {E("3"), E("1")};
        assert_int_equal(sg__graph_scope_open(F.g, &sub, "cond_true_0"), SG_OK);
        assert_int_equal(sg__graph_tensor(F.g, &in, SG_FLOAT64, 2, sz3, st3, E("0"), SG_NOVAL), SG_OK);
        assert_int_equal(sg__graph_placeholder_of(F.g, in, "x", F.a), SG_OK);
        if (lifted) {
            assert_int_equal(sg__graph_value(F.g, &sym, SG_V_SYMINT, F.s0, 0), SG_OK);
            assert_int_equal(sg__graph_placeholder_of(F.g, sym, "s0", F.sym), SG_OK);
        }
        sg__garg y[1] = {{.kind = SG_A_VALUE, .u.v = in}};
        const char *sz2[2] = {"s0", "3"}, *st2[2] = {"3", "1"};
        out = call(&F, "neg", y, 1, sz2, st2, 2, SG_NOVAL);
        assert_int_equal(sg__graph_output(F.g, &out, 1), SG_OK);
        F.g->cur = 0; /* (back in the root, as a cond's tracing leaves it) */
        assert_int_equal(sg__graph_output(F.g, &F.a, 1), SG_OK);
        if (lifted) {
            assert_int_equal(sg__graph_lint(F.g), SG_OK);
            finish(&F);
        } else {
            lint_fails(&F, "cond_true_0: node 2: a symbol not bound in the subgraph: s0");
        }
    }
}

/* Building refuses what can never be right, and changes nothing then. */
/* Equal layouts and lists share their exprs run; sg__graph_subst does not
 * write through a shared run; a placeholder keeps its whole name. */
static void test_graph_shared_runs(void **state)
{
    (void)state;
    fixture F;
    start(&F);
    const sg__graph *g = F.g;
    sg__garg args[2] = {{.kind = SG_A_VALUE, .u.v = F.a}, {.kind = SG_A_EXPR, .u.e = E("2")}};
    const char *sz[2] = {"s0", "3"}, *st[2] = {"3", "1"};
    uint32_t b = call(&F, "mul.Tensor", args, 2, sz, st, 2, SG_NOVAL);
    assert_int_equal(g->vals[b].u.t.dims, g->vals[F.a].u.t.dims);
    uint32_t o1, o2;
    const sg_expr *list[2] = {F.s0, E("3")};
    assert_int_equal(sg__graph_exprs(F.g, &o1, list, 2), SG_OK);
    assert_int_equal(sg__graph_exprs(F.g, &o2, list, 2), SG_OK);
    assert_int_equal(o1, o2);
    const sg_expr *seven = E("7");
    assert_int_equal(sg__graph_subst(F.g, b, 1, &F.s0, &seven), SG_OK);
    assert_ptr_equal(sg__graph_size(g, b, 0), seven);
    assert_ptr_equal(sg__graph_size(g, F.a, 0), F.s0);
    assert_ptr_equal(g->exprs[o1], F.s0);
    finish(&F);

    sg__graph *h;
    uint32_t v;
    const char *name = "a_placeholder_name_longer_than_24_bytes";
    assert_int_equal(sg_env_new(C, NULL, &F.env), SG_OK);
    assert_int_equal(sg__graph_new(F.env, &h), SG_OK);
    assert_int_equal(sg__graph_value(h, &v, SG_V_FLOAT, NULL, 0.5), SG_OK);
    assert_string_equal(h->vals[v].name, "");
    assert_int_equal(sg__graph_placeholder(h, v, name), SG_OK);
    assert_string_equal(h->vals[v].name, name);
    /* a new storage's element count: the product of the sizes, the same interned expression whether
       the sizes are small constants (int64 product), symbols, or constants whose product passes int64
       (checked against sg_expr_mul) */
    const sg_expr *c3 = E("3"), *c4 = E("4"), *one = E("1"), *big = E("4294967296"), *s = E("s7");
    const sg_expr *sz34[2] = {c3, c4}, *st34[2] = {c4, one}, *szs[2] = {s, c3}, *sts[2] = {c3, one};
    const sg_expr *szb[3] = {big, big, c3}, *stb[3] = {one, one, one};
    uint32_t t1, t2, t3, t4, t5;
    assert_int_equal(sg__graph_tensor(h, &t1, SG_FLOAT64, 2, sz34, st34, E("0"), SG_NOVAL), SG_OK);
    assert_ptr_equal(sg__graph_storage_numel(h, h->vals[t1].u.t.storage), E("12"));
    assert_int_equal(sg__graph_tensor(h, &t2, SG_FLOAT64, 2, szs, sts, E("0"), SG_NOVAL), SG_OK);
    assert_ptr_equal(sg__graph_storage_numel(h, h->vals[t2].u.t.storage), E("3*s7"));
    assert_int_equal(sg__graph_tensor(h, &t3, SG_FLOAT64, 3, szb, stb, E("0"), SG_NOVAL), SG_OK);
    assert_ptr_equal(sg__graph_storage_numel(h, h->vals[t3].u.t.storage), E("55340232221128654848"));
    assert_int_equal(sg__graph_tensor(h, &t4, SG_FLOAT64, 0, NULL, NULL, E("0"), SG_NOVAL), SG_OK);
    assert_ptr_equal(sg__graph_storage_numel(h, h->vals[t4].u.t.storage), one);
    /* an equal layout shares the run of a recent one; a layout equal in its sizes only does not */
    assert_int_equal(sg__graph_tensor(h, &t5, SG_FLOAT64, 2, sz34, st34, E("0"), SG_NOVAL), SG_OK);
    assert_int_equal(h->vals[t5].u.t.dims, h->vals[t1].u.t.dims);
    const sg_expr *st34t[2] = {one, c3};
    assert_int_equal(sg__graph_tensor(h, &t5, SG_FLOAT64, 2, sz34, st34t, E("0"), SG_NOVAL), SG_OK);
    assert_int_not_equal(h->vals[t5].u.t.dims, h->vals[t1].u.t.dims);
    assert_ptr_equal(sg__graph_stride(h, t5, 0), one);
    assert_ptr_equal(sg__graph_stride(h, t1, 0), c4);
    /* room reserved ahead: the tables do not move while they fill it */
    sg__graph_reserve(h, 100);
    assert_true(h->capvals >= h->nvals + 100 && h->capnodes >= h->nnodes + 100 && h->capargs >= h->nargs + 200);
    const sg__gval *vals = h->vals;
    for (int i = 0; i < 100; i++)
        assert_int_equal(sg__graph_tensor(h, &t5, SG_FLOAT64, 2, sz34, st34, E("0"), SG_NOVAL), SG_OK);
    assert_ptr_equal(h->vals, vals);
    sg__graph_reserve(h, (size_t)UINT32_MAX); /* beyond what a graph counts: nothing reserved */
    assert_ptr_equal(h->vals, vals);
    sg__graph_free(h);
    sg_env_free(F.env);
}

static void test_graph_build_errors(void **state)
{
    (void)state;
    fixture F;
    start(&F);
    size_t nvals = F.g->nvals, nnodes = F.g->nnodes;
    uint32_t v;
    assert_int_equal(sg__graph_tensor(F.g, &v, SG_NDTYPE, 0, NULL, NULL, E("0"), SG_NOVAL), SG_EINVAL);
    assert_int_equal(sg__graph_tensor(F.g, &v, SG_FLOAT64, 0, NULL, NULL, E("0"), 99), SG_EINVAL);
    assert_int_equal(sg__graph_value(F.g, &v, SG_V_SYMINT, NULL, 0), SG_EINVAL);
    assert_int_equal(sg__graph_value(F.g, &v, SG_V_TENSOR, NULL, 0), SG_EINVAL);
    uint32_t bad = 12345;
    assert_int_equal(sg__graph_list(F.g, &v, &bad, 1), SG_EINVAL);
    assert_int_equal(sg__graph_placeholder(F.g, F.a, "again"), SG_EINVAL); /* given already */
    assert_int_equal(sg__graph_call(F.g, NULL, NULL, 0, SG_NOVAL, 0), SG_EINVAL);
    assert_int_equal(sg__graph_assert(F.g, E("s0 + 1"), 0), SG_EINVAL); /* not a boolean */
    assert_int_equal(sg__graph_bind(F.g, 99, NULL, 0), SG_EINVAL);
    assert_int_equal(F.g->nvals, nvals);
    assert_int_equal(F.g->nnodes, nnodes);
    assert_int_equal(sg__graph_output(F.g, &F.a, 1), SG_OK);
    assert_int_equal(sg__graph_assert(F.g, E("s0 > 0"), 0), SG_EINVAL); /* after the output */
    finish(&F);
}

/* ---- the tracer ---- */

typedef struct {
    sg_env *env;
    sg_inputs *in;
    sg_tracer *t;
} tfix;

static void tstart(tfix *T, int duck)
{
    sg_env_options o;
    sg_env_options_default(&o);
    o.duck_shape = duck;
    assert_int_equal(sg_env_new(C, &o, &T->env), SG_OK);
    assert_int_equal(sg_inputs_new(T->env, NULL, &T->in), SG_OK);
    assert_int_equal(sg_tracer_new(T->env, &T->t), SG_OK);
}

static void tfinish(tfix *T)
{
    sg_tracer_free(T->t);
    sg_inputs_free(T->in);
    sg_env_free(T->env);
}

/* A contiguous input named name with the given hints (or strides); every
 * size but the first is static (a constant, as after mark_dynamic(x, 0)). */
static sg_value tinput_dyn(tfix *T, const char *name, size_t n, const int64_t *sizes, const int64_t *strides,
                          sg_dim_dynamic first)
{
    const sg_source *src;
    const sg_fake *fake;
    sg_value v;
    sg_dim_spec spec[4] = {{first, NULL, NULL}, {SG_DIM_STATIC, NULL, NULL}, {SG_DIM_STATIC, NULL, NULL},
                           {SG_DIM_STATIC, NULL, NULL}};
    sg_tensor_context ctx = {.sizes = spec};
    assert_int_equal(sg_source_local(C, &src, name), SG_OK);
    sg_tensor_value tv = {.ndim = n, .sizes = sizes, .strides = strides};
    if (sg_inputs_tensor(T->in, src, &tv, &ctx, &fake))
        fail_msg("input %s: %s", name, sg_ctx_last_error_msg(C));
    if (sg_tracer_input_tensor(T->t, &v, name, fake, SG_FLOAT64, 0))
        fail_msg("tracer input %s: %s", name, sg_ctx_last_error_msg(C));
    return v;
}

static sg_value tinput(tfix *T, const char *name, size_t n, const int64_t *sizes, const int64_t *strides)
{
    return tinput_dyn(T, name, n, sizes, strides, SG_DIM_DUCK);
}

/* "[s0, 3] [3, 1]": the sizes and strides of v, printed. */
static void expect_meta(tfix *T, sg_value v, const char *want)
{
    char got[256] = "";
    size_t at = 0;
    for (int part = 0; part < 2; part++) {
        at += (size_t)snprintf(got + at, sizeof got - at, "%s[", part ? " " : "");
        for (size_t d = 0; d < sg_tracer_ndim(T->t, v); d++) {
            char *text;
            const sg_expr *e = part ? sg_tracer_stride(T->t, v, d) : sg_tracer_size(T->t, v, d);
            assert_int_equal(sg_print(C, &text, e, SG_FMT_SG), SG_OK);
            at += (size_t)snprintf(got + at, sizeof got - at, "%s%s", d ? ", " : "", text);
            sg_free(text);
        }
        at += (size_t)snprintf(got + at, sizeof got - at, "]");
    }
    assert_string_equal(got, want);
}

static sg_arg AV(sg_value v)
{
    return (sg_arg){.kind = SG_ARG_VALUE, .u.v = v};
}

static sg_arg AI(const char *e)
{
    return (sg_arg){.kind = SG_ARG_INT, .u.e = E(e)};
}

static sg_value tcall(tfix *T, const char *op, const sg_arg *args, size_t n)
{
    sg_value v;
    sg_status s = sg_tracer_call(T->t, &v, op, args, n, 1);
    if (s)
        fail_msg("%s: %s", op, sg_ctx_last_error_msg(C));
    return v;
}

static void test_tracer_pointwise_views(void **state)
{
    (void)state;
    tfix T;
    tstart(&T, 1);
    int64_t sa[2] = {5, 3}, sb[1] = {3};
    sg_value a = tinput(&T, "a", 2, sa, NULL), b = tinput_dyn(&T, "b", 1, sb, NULL, SG_DIM_STATIC);
    expect_meta(&T, a, "[s0, 3] [3, 1]");
    sg_arg ab[2] = {AV(a), AV(b)};
    sg_value add = tcall(&T, "add.Tensor", ab, 2); /* broadcast [s0, 3] + [3] */
    expect_meta(&T, add, "[s0, 3] [3, 1]");
    sg_arg ta[1] = {AV(a)};
    sg_value t = tcall(&T, "t", ta, 1);
    expect_meta(&T, t, "[3, s0] [1, 3]");
    sg_arg ts[1] = {AV(t)};
    sg_value sn = tcall(&T, "sin", ts, 1); /* keeps the transposed layout, as TensorIterator does */
    expect_meta(&T, sn, "[3, s0] [1, 3]");
    sg_arg tb[2] = {AV(t), (sg_arg){.kind = SG_ARG_FLOAT, .u.f = 2.0}};
    sg_value mul = tcall(&T, "mul.Tensor", tb, 2);
    expect_meta(&T, mul, "[3, s0] [1, 3]");
    const sg_expr *minus1[1] = {E("-1")};
    sg_arg va[2] = {AV(a), {.kind = SG_ARG_INTS, .u.ints = {1, minus1}}};
    sg_value flat = tcall(&T, "view", va, 2);
    expect_meta(&T, flat, "[3*s0] [1]");
    assert_true(sg_tracer_same_storage(T.t, flat, a));
    assert_false(sg_tracer_same_storage(T.t, add, a));
    sg_arg sl[5] = {AV(a), AI("0"), AI("1"), AI("-1"), AI("2")}; /* a[1:-1:2] */
    sg_value s = tcall(&T, "slice.Tensor", sl, 5);
    expect_meta(&T, s, "[s0 - s0 // 2 - 1, 3] [6, 1]"); /* (s0 - 1)//2 rows, from row 1 */
    assert_ptr_equal(sg_tracer_offset(T.t, s), E("3"));
    sg_arg se[3] = {AV(a), AI("1"), AI("-1")}; /* a[:, -1] */
    sg_value sel = tcall(&T, "select.int", se, 3);
    expect_meta(&T, sel, "[s0] [3]");
    assert_ptr_equal(sg_tracer_offset(T.t, sel), E("2"));
    const sg_expr *big[3] = {E("4"), E("-1"), E("3")};
    sg_arg ex[2] = {AV(a), {.kind = SG_ARG_INTS, .u.ints = {3, big}}};
    sg_value x = tcall(&T, "expand", ex, 2);
    expect_meta(&T, x, "[4, s0, 3] [0, 3, 1]");
    sg_arg un[2] = {AV(b), AI("0")};
    sg_value u = tcall(&T, "unsqueeze", un, 2);
    expect_meta(&T, u, "[1, 3] [3, 1]");
    assert_int_equal(sg_env_nguards(T.env), 0); /* nothing here needed a guard */
    assert_int_equal(sg_tracer_output(T.t, &add, 1), SG_OK);
    char *ops;
    assert_int_equal(sg_tracer_ops(T.t, &ops), SG_OK);
    assert_string_equal(ops, "add.Tensor t sin mul.Tensor view slice.Tensor select.int expand unsqueeze");
    sg_free(ops);
    tfinish(&T);
}

/* What torch 1.13 does (checked by hand with python3-torch): a view written
 * in place, or set_ to itself, is still a view, so detach_ refuses it; cat of
 * two channels-last tensors is channels-last ([4, 3, 4, 5] strides
 * (60, 1, 15, 3)), of a channels-last and a contiguous one contiguous. */
static void test_tracer_inplace_views_cat(void **state)
{
    (void)state;
    tfix T;
    tstart(&T, 1);
    int64_t sa[2] = {3, 3};
    sg_value a = tinput_dyn(&T, "a", 2, sa, NULL, SG_DIM_STATIC);
    int64_t s4[4] = {2, 3, 4, 5}, cl[4] = {60, 1, 15, 3};
    sg_value x = tinput_dyn(&T, "x", 4, s4, cl, SG_DIM_STATIC), y = tinput_dyn(&T, "y", 4, s4, cl, SG_DIM_STATIC);
    sg_value c = tinput_dyn(&T, "c", 4, s4, NULL, SG_DIM_STATIC);
    const sg_expr *shape[2] = {E("-1"), E("3")};
    sg_arg va[2] = {AV(a), {.kind = SG_ARG_INTS, .u.ints = {2, shape}}};
    sg_value v = tcall(&T, "view", va, 2);
    sg_arg vv[1] = {AV(v)};
    sg_value z = tcall(&T, "zero_", vv, 1);
    sg_arg zz[1] = {AV(z)}, vv2[2] = {AV(v), AV(v)};
    sg_value r;
    assert_int_equal(sg_tracer_call(T.t, &r, "detach_", zz, 1, 2), SG_EAUTOGRAD);
    sg_value st = tcall(&T, "set_.source_Tensor", vv2, 2);
    sg_arg ss[1] = {AV(st)};
    assert_int_equal(sg_tracer_call(T.t, &r, "detach_", ss, 1, 3), SG_EAUTOGRAD);
    sg_arg aa[1] = {AV(a)};
    sg_value d = tcall(&T, "detach_", aa, 1); /* not a view: allowed */
    (void)d;
    sg_value xy[2] = {x, y}, xc[2] = {x, c};
    sg_arg cat1[2] = {{.kind = SG_ARG_VALUES, .u.values = {2, xy}}, AI("0")};
    expect_meta(&T, tcall(&T, "cat", cat1, 2), "[4, 3, 4, 5] [60, 1, 15, 3]");
    sg_arg cat2[2] = {{.kind = SG_ARG_VALUES, .u.values = {2, xc}}, AI("1")};
    expect_meta(&T, tcall(&T, "cat", cat2, 2), "[2, 6, 4, 5] [120, 20, 5, 1]");
    tfinish(&T);
}

/* Two sizes with the same hint but distinct symbols (no duck sizing):
 * broadcasting them guards them equal; sizes that cannot broadcast are an
 * error naming the operator and the sizes; a view of 7 elements of 15 too. */
static void test_tracer_guards_and_errors(void **state)
{
    (void)state;
    tfix T;
    tstart(&T, 0);
    int64_t sa[1] = {5}, sb[1] = {5}, sc[2] = {5, 3};
    sg_value a = tinput(&T, "a", 1, sa, NULL), b = tinput(&T, "b", 1, sb, NULL);
    sg_value c = tinput(&T, "c", 2, sc, NULL);
    sg_arg ab[2] = {AV(a), AV(b)};
    sg_value add = tcall(&T, "add.Tensor", ab, 2);
    expect_meta(&T, add, "[s0] [1]");
    assert_int_equal(sg_env_nguards(T.env), 1);
    char *g;
    assert_int_equal(sg_print(C, &g, sg_env_guard(T.env, 0, NULL), SG_FMT_SG), SG_OK);
    assert_string_equal(g, "s0 == s1");
    sg_free(g);
    size_t nvals = T.t ? 0 : 0;
    (void)nvals;
    sg_arg ac[2] = {AV(a), AV(c)}; /* [s0] + [s2, 3]: s0 against 3 */
    sg_value v;
    sg_ctx_reset_error(C);
    assert_int_equal(sg_tracer_call(T.t, &v, "mul.Tensor", ac, 2, 4), SG_ESHAPE);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "mul.Tensor: the sizes of the operands do not broadcast"));
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "[s0], [s2, 3]"));
    const sg_expr *seven[1] = {E("7")};
    sg_arg vw[2] = {AV(c), {.kind = SG_ARG_INTS, .u.ints = {1, seven}}};
    assert_int_equal(sg_tracer_call(T.t, &v, "view", vw, 2, 5), SG_ESHAPE);
    assert_int_equal(sg_tracer_call(T.t, &v, "nosuchop", vw, 2, 5), SG_EUNSUPPORTED);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "unsupported: operator nosuchop"));
    sg_arg bad[1] = {AI("3")};
    assert_int_equal(sg_tracer_call(T.t, &v, "neg", bad, 1, 5), SG_EINVAL);
    sg_arg named[2] = {AV(c), {.kind = SG_ARG_INT, .name = "nodim", .u.e = E("0")}};
    assert_int_equal(sg_tracer_call(T.t, &v, "t", named, 2, 5), SG_EINVAL);
    assert_non_null(strstr(sg_ctx_last_error_msg(C), "no argument named nodim"));
    sg_arg inplace[2] = {AV(a), AV(c)}; /* a.add_(c): the result would be [s2, 3], not a's shape */
    assert_int_equal(sg_tracer_call(T.t, &v, "add_.Tensor", inplace, 2, 6), SG_ESHAPE);
    /* the failed calls left nothing in the graph: the ops are the one add */
    assert_int_equal(sg_tracer_output(T.t, &add, 1), SG_OK);
    char *text;
    assert_int_equal(sg_tracer_print(T.t, &text), SG_OK);
    /* b's size prints with the replacement the add's guard s0 == s1 made, as FX
       prints a SymInt's expression at print time */
    assert_string_equal(text, "def forward(self, s0: \"Sym(s0)\", a: \"f64[s0]\", s1: \"Sym(s1)\", b: \"f64[s0]\", "
                              "s2: \"Sym(s2)\", c: \"f64[s2, 3]\"):\n"
                              "    add: \"f64[s0]\" = torch.ops.aten.add.Tensor(a, b)\n"
                              "    return (add,)\n");
    sg_free(text);
    tfinish(&T);
}

/* The program of test_tracer_reset, traced by t over the inputs a [s0, s1]
 * and b [s1], printed:
 *     def f(a, b):
 *         t = a.add(b); t = t.mul(2); v = t.view(-1); v.add_(1); return (t.sin(),)
 * Freed with sg_free. */
static char *trace_small(sg_tracer *t, const sg_fake *fa, const sg_fake *fb)
{
    sg_value a, b, out;
    assert_int_equal(sg_tracer_input_tensor(t, &a, "a", fa, SG_FLOAT64, 0), SG_OK);
    assert_int_equal(sg_tracer_input_tensor(t, &b, "b", fb, SG_FLOAT64, 0), SG_OK);
    sg_value add, mul, view, add_;
    sg_arg ab[2] = {AV(a), AV(b)};
    assert_int_equal(sg_tracer_call(t, &add, "add.Tensor", ab, 2, 1), SG_OK);
    sg_arg m2[2] = {AV(add), AI("2")};
    assert_int_equal(sg_tracer_call(t, &mul, "mul.Tensor", m2, 2, 1), SG_OK);
    const sg_expr *minus1[1] = {E("-1")};
    sg_arg vw[2] = {AV(mul), {.kind = SG_ARG_INTS, .u.ints = {1, minus1}}};
    assert_int_equal(sg_tracer_call(t, &view, "view", vw, 2, 1), SG_OK);
    sg_arg a1[2] = {AV(view), AI("1")};
    assert_int_equal(sg_tracer_call(t, &add_, "add_.Tensor", a1, 2, 1), SG_OK);
    sg_arg sn[1] = {AV(mul)};
    assert_int_equal(sg_tracer_call(t, &out, "sin", sn, 1, 1), SG_OK);
    assert_int_equal(sg_tracer_output(t, &out, 1), SG_OK);
    char *text;
    assert_int_equal(sg_tracer_print(t, &text), SG_OK);
    return text;
}

/* Two fakes of in: a [5, 3] and b [3], every size dynamic (a [s0, s1], b [s1]). */
static void small_fakes(sg_inputs *in, const sg_fake **fa, const sg_fake **fb)
{
    const sg_source *sa, *sb;
    int64_t za[2] = {5, 3}, zb[1] = {3};
    sg_tensor_value va = {.ndim = 2, .sizes = za}, vb = {.ndim = 1, .sizes = zb};
    assert_int_equal(sg_source_local(C, &sa, "a"), SG_OK);
    assert_int_equal(sg_source_local(C, &sb, "b"), SG_OK);
    assert_int_equal(sg_inputs_tensor(in, sa, &va, NULL, fa), SG_OK);
    assert_int_equal(sg_inputs_tensor(in, sb, &vb, NULL, fb), SG_OK);
}

/* sg_tracer_reset: a tracer reset after a trace left half done (grad mode
 * off, a subgraph open, a named value, a failed call), then reset and
 * reused, traces the same graph as a new tracer on a new environment; it
 * traces it again into the same blocks (nothing regrown); the subgraph's
 * name is free again. The expected text: the node names, targets,
 * arguments and sizes of PyTorch 1.13's make_fx(f, tracing_mode="symbolic")
 * of the same program (add, mul, view.default(mul, [-1]), add_, sin;
 * [s0, s1] and [s0*s1]), with the symbol placeholders first as the tracer
 * orders them. */
static void test_tracer_reset(void **state)
{
    (void)state;
    static const char want[] =
        "def forward(self, s0: \"Sym(s0)\", s1: \"Sym(s1)\", a: \"f64[s0, s1]\", b: \"f64[s1]\"):\n"
        "    add: \"f64[s0, s1]\" = torch.ops.aten.add.Tensor(a, b)\n"
        "    mul: \"f64[s0, s1]\" = torch.ops.aten.mul.Tensor(add, 2)\n"
        "    view: \"f64[s0*s1]\" = torch.ops.aten.view.default(mul, [-1])\n"
        "    add_: \"f64[s0*s1]\" = torch.ops.aten.add_.Tensor(view, 1)\n"
        "    sin: \"f64[s0, s1]\" = torch.ops.aten.sin.default(mul)\n"
        "    return (sin,)\n";
    tfix T, F;
    const sg_fake *fa, *fb, *ga, *gb;
    tstart(&T, 1);
    small_fakes(T.in, &fa, &fb);
    /* a first trace, left half done */
    sg_value a, s, la, r;
    assert_int_equal(sg_tracer_input_tensor(T.t, &a, "a", fa, SG_FLOAT64, 0), SG_OK);
    assert_int_equal(sg_tracer_name(T.t, a, "x"), SG_OK);
    assert_int_equal(sg_tracer_set_grad_enabled(T.t, 0), SG_OK);
    sg_arg sa[1] = {AV(a)};
    assert_int_equal(sg_tracer_call(T.t, &s, "sin", sa, 1, 1), SG_OK);
    uint32_t scope;
    assert_int_equal(sg_tracer_scope_open(T.t, &scope, "cond_true_0"), SG_OK);
    assert_int_equal(sg_tracer_scope_input(T.t, &la, NULL, s), SG_OK);
    assert_int_equal(sg_tracer_call(T.t, &r, "nosuchop", sa, 1, 2), SG_EUNSUPPORTED);
    assert_int_equal(sg_tracer_reset(T.t), SG_OK);
    assert_int_equal(sg_tracer_scope(T.t), 0);
    assert_true(sg_tracer_grad_enabled(T.t));
    char *text = trace_small(T.t, fa, fb);
    assert_string_equal(text, want);
    sg_free(text);
    /* again: the same graph, in the blocks the last trace grew */
    const sg__graph *g = sg__tracer_graph(T.t);
    const void *vals = g->vals, *nodes = g->nodes, *args = g->args;
    size_t capvals = g->capvals, capnodes = g->capnodes, capargs = g->capargs, nvals = g->nvals;
    assert_int_equal(sg_tracer_reset(T.t), SG_OK);
    assert_int_equal(g->nvals, 0);
    assert_int_equal(g->nnodes, 0);
    text = trace_small(T.t, fa, fb);
    assert_string_equal(text, want);
    sg_free(text);
    assert_ptr_equal(g->vals, vals);
    assert_ptr_equal(g->nodes, nodes);
    assert_ptr_equal(g->args, args);
    assert_int_equal(g->capvals, capvals);
    assert_int_equal(g->capnodes, capnodes);
    assert_int_equal(g->capargs, capargs);
    assert_int_equal(g->nvals, nvals);
    assert_int_equal(sg_tracer_lint(T.t), SG_OK);
    /* a new tracer on a new environment: the same graph */
    tstart(&F, 1);
    small_fakes(F.in, &ga, &gb);
    text = trace_small(F.t, ga, gb);
    assert_string_equal(text, want);
    sg_free(text);
    tfinish(&F);
    /* the subgraph of the first trace is gone with its name */
    assert_int_equal(sg_tracer_reset(T.t), SG_OK);
    assert_int_equal(sg_tracer_input_tensor(T.t, &a, "a", fa, SG_FLOAT64, 0), SG_OK);
    assert_int_equal(sg_tracer_scope_open(T.t, &scope, "cond_true_0"), SG_OK);
    assert_int_equal(scope, 1);
    assert_int_equal(sg_tracer_reset(NULL), SG_EINVAL);
    tfinish(&T);
}


/* ---- the shape rules over constant layouts ---- */

/* One side of test_constant_rules_agree: a tracer over an environment of
 * its own. */
typedef struct {
    sg_env *env;
    sg_tracer *t;
} cside;

static uint64_t crand(uint64_t *r)
{
    *r ^= *r << 13;
    *r ^= *r >> 7;
    *r ^= *r << 17;
    return *r;
}

/* Random strides for n sizes: contiguous, dense in a random order of
 * dimensions, that with some dimensions expanded (stride 0), or any strides. */
static void crandom_strides(uint64_t *r, size_t n, const int64_t *sizes, int64_t *strides)
{
    size_t perm[4] = {0, 1, 2, 3};
    unsigned mode = (unsigned)(crand(r) % 4);
    for (size_t i = n; i > 1 && mode; i--) {
        size_t j = (size_t)(crand(r) % i), x = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = x;
    }
    int64_t acc = 1;
    for (size_t i = n; i-- > 0;) {
        strides[perm[i]] = acc;
        acc *= sizes[perm[i]] > 1 ? sizes[perm[i]] : 1;
    }
    for (size_t d = 0; d < n && mode >= 2; d++)
        if (mode == 3)
            strides[d] = (int64_t)(crand(r) % 13);
        else if (crand(r) % 3 == 0)
            strides[d] = 0;
}

/* Sizes that broadcast with the n sizes of from (a suffix, some set to 1),
 * now and then sizes that do not. */
static size_t cbroadcast_sizes(uint64_t *r, const int64_t *from, size_t n, int64_t *sizes)
{
    size_t m = (size_t)(crand(r) % (n + 1));
    for (size_t d = 0; d < m; d++) {
        sizes[d] = crand(r) % 3 == 0 ? 1 : from[n - m + d];
        if (crand(r) % 17 == 0)
            sizes[d] = 1 + (int64_t)(crand(r) % 5);
    }
    return m;
}

static sg_value cinput(cside *S, const char *name, size_t n, const int64_t *sizes, const int64_t *strides,
                       sg_dtype dtype)
{
    const sg_expr *sz[4], *st[4], *off;
    for (size_t d = 0; d < n; d++) {
        assert_int_equal(sg_expr_int(C, &sz[d], sizes[d]), SG_OK);
        assert_int_equal(sg_expr_int(C, &st[d], strides[d]), SG_OK);
    }
    assert_int_equal(sg_expr_int(C, &off, 0), SG_OK);
    sg_fake fake = {.ndim = n, .sizes = sz, .strides = st, .offset = off};
    sg_value v;
    if (sg_tracer_input_tensor(S->t, &v, name, &fake, dtype, 0))
        fail_msg("input %s: %s", name, sg_ctx_last_error_msg(C));
    return v;
}

/* The same call on both sides: the same status and message, and for a
 * result the same metadata (expressions compared as interned nodes). */
static sg_value ccall(cside *S, const char *op, const sg_arg *args, size_t n, size_t *ok)
{
    sg_value v[2];
    sg_status st[2];
    char msg[2][512];
    for (int k = 0; k < 2; k++) {
        st[k] = sg_tracer_call(S[k].t, &v[k], op, args, n, 1);
        snprintf(msg[k], sizeof msg[k], "%s", st[k] ? sg_ctx_last_error_msg(C) : "");
    }
    if (st[0] != st[1] || strcmp(msg[0], msg[1]))
        fail_msg("%s: general path %d '%s', constant path %d '%s'", op, st[0], msg[0], st[1], msg[1]);
    if (st[0])
        return SG_NOVAL;
    assert_int_equal(v[0], v[1]);
    const sg__graph *g0 = sg__tracer_graph(S[0].t), *g1 = sg__tracer_graph(S[1].t);
    assert_int_equal(g0->nvals, g1->nvals);
    assert_int_equal(g0->nnodes, g1->nnodes);
    const sg__gval *a = &g0->vals[v[0]], *b = &g1->vals[v[1]];
    assert_int_equal(a->kind, b->kind);
    if (a->kind == SG_V_TENSOR) {
        assert_int_equal(a->u.t.ndim, b->u.t.ndim);
        assert_int_equal(a->u.t.dtype, b->u.t.dtype);
        assert_int_equal(a->u.t.storage, b->u.t.storage);
        assert_int_equal(a->u.t.base, b->u.t.base);
        assert_int_equal(a->u.t.requires_grad, b->u.t.requires_grad);
        assert_ptr_equal(a->u.t.offset, b->u.t.offset);
        for (size_t d = 0; d < a->u.t.ndim; d++) {
            if (sg__graph_size(g0, v[0], d) != sg__graph_size(g1, v[1], d) ||
                sg__graph_stride(g0, v[0], d) != sg__graph_stride(g1, v[1], d))
                fail_msg("%s: dimension %zu differs", op, d);
        }
    }
    ++*ok;
    return v[0];
}

/* The shape rules' int64 path over constant layouts (pointwise and view
 * rules) against their general path (the graph's general_rules), on random
 * layouts (dense in any order, expanded, any strides, sizes 0 to 4, ranks 0
 * to 4), dtypes and operators: functional, wrapped numbers, where,
 * comparisons, in-place (through views of one storage too), out=, view and
 * reshape with -1, sizes that do not broadcast or do not fit. Both sides give
 * the same statuses and messages, the same values (sizes, strides and
 * offsets the same interned expressions) and no guard. */
static void test_constant_rules_agree(void **state)
{
    (void)state;
    cside S[2];
    for (int k = 0; k < 2; k++) {
        assert_int_equal(sg_env_new(C, NULL, &S[k].env), SG_OK);
        assert_int_equal(sg_tracer_new(S[k].env, &S[k].t), SG_OK);
    }
    ((sg__graph *)sg__tracer_graph(S[0].t))->general_rules = true;
    static const char *const binary[] = {"add.Tensor", "mul.Tensor", "sub.Tensor", "div.Tensor", "eq.Tensor",
                                         "lt.Tensor", "pow.Tensor_Tensor", "add_.Tensor", "mul_.Tensor",
                                         "sub_.Tensor", "copy_"};
    static const char *const unary[] = {"sin", "neg", "abs", "zero_", "clone"};
    static const sg_dtype dtypes[] = {SG_FLOAT64, SG_FLOAT64, SG_FLOAT64, SG_FLOAT32, SG_INT64, SG_BOOL};
    uint64_t r = 0x9e3779b97f4a7c15u;
    size_t ok = 0, calls = 0;
    for (int round = 0; round < 3000; round++) {
        for (int k = 0; k < 2; k++)
            assert_int_equal(sg_tracer_reset(S[k].t), SG_OK);
        int64_t sa[4], ta[4], sb[4], tb[4], sc[4], tc[4];
        size_t na = (size_t)(crand(&r) % 5);
        for (size_t d = 0; d < na; d++)
            sa[d] = crand(&r) % 11 == 0 ? 0 : 1 + (int64_t)(crand(&r) % 4);
        crandom_strides(&r, na, sa, ta);
        size_t nb = cbroadcast_sizes(&r, sa, na, sb);
        crandom_strides(&r, nb, sb, tb);
        size_t nc = cbroadcast_sizes(&r, sa, na, sc);
        crandom_strides(&r, nc, sc, tc);
        sg_dtype da = dtypes[crand(&r) % 6], db = dtypes[crand(&r) % 6];
        sg_value a = SG_NOVAL, b = SG_NOVAL, c = SG_NOVAL;
        for (int k = 0; k < 2; k++) {
            a = cinput(&S[k], "a", na, sa, ta, da);
            b = cinput(&S[k], "b", nb, sb, tb, db);
            c = cinput(&S[k], "c", nc, sc, tc, SG_BOOL);
        }
        sg_value cur = a;
        for (int step = 0; step < 4; step++) {
            sg_value other = crand(&r) % 4 == 0 ? cur : crand(&r) % 3 == 0 ? a : b;
            unsigned pick = (unsigned)(crand(&r) % 8);
            sg_value v = SG_NOVAL;
            calls++;
            if (pick <= 2) {
                sg_arg args[2] = {AV(cur), AV(other)};
                v = ccall(S, binary[crand(&r) % (sizeof binary / sizeof *binary)], args, 2, &ok);
            } else if (pick == 3) {
                sg_arg args[2] = {AV(cur), crand(&r) % 2 ? (sg_arg){.kind = SG_ARG_FLOAT, .u.f = 0.5} : AI("2")};
                v = ccall(S, crand(&r) % 2 ? "mul.Tensor" : "add_.Tensor", args, 2, &ok);
            } else if (pick == 4) {
                sg_arg args[3] = {AV(c), AV(cur), AV(other)};
                v = ccall(S, "where.self", args, 3, &ok);
            } else if (pick == 5) {
                sg_arg args[1] = {AV(cur)};
                v = ccall(S, unary[crand(&r) % (sizeof unary / sizeof *unary)], args, 1, &ok);
            } else if (pick == 6) { /* a view of cur: later in-place calls meet two views of one storage */
                sg_arg args[3] = {AV(cur), AI("0"), AI("-1")};
                v = ccall(S, crand(&r) % 2 ? "transpose.int" : "t", args, crand(&r) % 2 ? 3 : 1, &ok);
            } else {
                size_t nd = sg_tracer_ndim(S[0].t, cur), n = 1 + (size_t)(crand(&r) % 3);
                int64_t numel = 1, x;
                for (size_t d = 0; d < nd; d++)
                    numel *= sg_expr_get_si(sg_tracer_size(S[0].t, cur, d), &x) ? x : 1;
                const sg_expr *shape[3];
                for (size_t i = 0; i < n; i++) {
                    x = i == 0 ? numel : 1;
                    if (n > 1 && i == 0 && numel % 2 == 0 && crand(&r) % 2)
                        x = numel / 2;
                    if (n > 1 && i == 1 && x == 1 && crand(&r) % 2)
                        x = numel % 2 == 0 && crand(&r) % 2 ? 2 : 1;
                    if (crand(&r) % 4 == 0)
                        x = -1;
                    if (crand(&r) % 23 == 0)
                        x = 3;
                    assert_int_equal(sg_expr_int(C, &shape[i], x), SG_OK);
                }
                sg_arg args[2] = {AV(cur), {.kind = SG_ARG_INTS, .u.ints = {n, shape}}};
                v = ccall(S, crand(&r) % 2 ? "view" : "reshape", args, 2, &ok);
            }
            if (v != SG_NOVAL && sg__tracer_graph(S[0].t)->vals[v].kind == SG_V_TENSOR)
                cur = v;
        }
        sg_arg oargs[3] = {AV(a), AV(b), {.kind = SG_ARG_VALUE, .name = "out", .u.v = cur}};
        calls++;
        ccall(S, "add.out", oargs, 3, &ok);
    }
    for (int k = 0; k < 2; k++) {
        assert_int_equal(sg_env_nguards(S[k].env), 0);
        sg_tracer_free(S[k].t);
        sg_env_free(S[k].env);
    }
    /* enough of them went through, and enough failed, to mean something */
    assert_true(ok > calls / 2);
    assert_true(calls - ok > calls / 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_lookup),
        cmocka_unit_test(test_every_operator_has_a_rule),
        cmocka_unit_test(test_operator_table_links),
        cmocka_unit_test(test_python_spellings),
        cmocka_unit_test(test_alias_annotations),
        cmocka_unit_test(test_parse_print),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_graph_build_print),
        cmocka_unit_test(test_graph_lint),
        cmocka_unit_test(test_graph_build_errors),
        cmocka_unit_test(test_graph_shared_runs),
        cmocka_unit_test(test_tracer_pointwise_views),
        cmocka_unit_test(test_tracer_guards_and_errors),
        cmocka_unit_test(test_tracer_inplace_views_cat),
        cmocka_unit_test(test_tracer_reset),
        cmocka_unit_test(test_constant_rules_agree),
    };
    return cmocka_run_group_tests_name("graph", tests, setup, teardown);
}
