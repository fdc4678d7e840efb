/* graph: operator schemas (parsing, printing back, what the alias
 * annotations say) and the operator registry. The registry's table is
 * compared with the installed PyTorch's schemas by tests/diff/schemas.test. */
#include "cmocka_all.h"

#include <string.h>

#include "graph/graph.h"
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
    assert_int_equal(sg__graph_tensor(F->g, &F->a, SG_F64, 2, sizes, strides, E("0"), SG_NOVAL), SG_OK);
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
    assert_int_equal(sg__graph_tensor(F->g, &v, SG_F64, ndim, sz, st, E("0"), storage), SG_OK);
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
    assert_int_equal(sg__graph_tensor(F.g, &v, SG_F64, 1, s, one, E("0"), SG_NOVAL), SG_OK);
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
}

/* Building refuses what can never be right, and changes nothing then. */
static void test_graph_build_errors(void **state)
{
    (void)state;
    fixture F;
    start(&F);
    size_t nvals = F.g->nvals, nnodes = F.g->nnodes;
    uint32_t v;
    assert_int_equal(sg__graph_tensor(F.g, &v, SG_NDTYPE, 0, NULL, NULL, E("0"), SG_NOVAL), SG_EINVAL);
    assert_int_equal(sg__graph_tensor(F.g, &v, SG_F64, 0, NULL, NULL, E("0"), 99), SG_EINVAL);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_lookup),
        cmocka_unit_test(test_alias_annotations),
        cmocka_unit_test(test_parse_print),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_graph_build_print),
        cmocka_unit_test(test_graph_lint),
        cmocka_unit_test(test_graph_build_errors),
    };
    return cmocka_run_group_tests_name("graph", tests, setup, teardown);
}
