/* graph: operator schemas (parsing, printing back, what the alias
 * annotations say) and the operator registry. The registry's table is
 * compared with the installed PyTorch's schemas by tests/diff/schemas.test. */
#include "cmocka_all.h"

#include <string.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_lookup),
        cmocka_unit_test(test_alias_annotations),
        cmocka_unit_test(test_parse_print),
        cmocka_unit_test(test_parse_errors),
    };
    return cmocka_run_group_tests_name("graph", tests, setup, teardown);
}
