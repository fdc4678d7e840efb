/* Adding an operator is one row of the operator table (src/graph/ops.def)
 * and the functions it names. This test is built with the table's and the
 * kernels' sources compiled again with SG_OPS_EXTRA = test_oprow.def, which
 * appends two made-up operators (sg_minus and its in-place sg_minus_); the
 * rest of the library is the one every other test links. Nothing else is
 * written for them: the registry, the shape rule, the tracer, the printer,
 * the Python spelling of the walker and exec's kernel all take them from
 * their rows. */
#include "cmocka_all.h"

#include <stdio.h>
#include <string.h>

#include "exec/exec_private.h"
#include "front/front_private.h"
#include "graph/ops.h"
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

/* The rows are in the registry, after the table's own, with their columns. */
static void test_rows_registered(void **state)
{
    (void)state;
    sg__opreg *r;
    assert_int_equal(sg__opreg_new(C, &r), SG_OK);
    assert_int_equal(sg__opreg_count(r), SG_OP_COUNT);
    const sg__schema *f = sg__opreg_find(r, "sg_minus"), *i = sg__opreg_find(r, "sg_minus_");
    assert_non_null(f);
    assert_non_null(i);
    assert_int_equal(f->op, SG_OP_sg_minus);
    assert_int_equal(i->op, SG_OP_sg_minus_);
    assert_int_equal(i->flags, SG_OPF_MUTATES | SG_OPF_INPLACE); /* from its alias annotations */
    assert_int_equal(sg__op_info(i->op)->functional, SG_OP_sg_minus);
    assert_ptr_equal(sg__op_info(f->op)->rule, sg__meta_pointwise);
    assert_non_null(sg__xkernel_find(f));
    const sg__pyop *p = sg__opreg_pyop(r, "sg_minus");
    assert_non_null(p);
    assert_int_equal(p->n, 1);
    assert_ptr_equal(p->s[0], f);
    sg__opreg_free(r);
}

/* Traced through the public tracer API: the pointwise rule gives the
 * shapes, the printer the node names (FX's: the operator's name). */
static void test_traced(void **state)
{
    (void)state;
    sg_env *env;
    sg_inputs *in;
    sg_tracer *t;
    assert_int_equal(sg_env_new(C, NULL, &env), SG_OK);
    assert_int_equal(sg_inputs_new(env, NULL, &in), SG_OK);
    assert_int_equal(sg_tracer_new(env, &t), SG_OK);
    const sg_source *src;
    const sg_fake *fake;
    int64_t sizes[2] = {5, 3};
    sg_tensor_value example = {.ndim = 2, .sizes = sizes};
    sg_value x, y, z;
    assert_int_equal(sg_source_local(C, &src, "x"), SG_OK);
    assert_int_equal(sg_inputs_tensor(in, src, &example, NULL, &fake), SG_OK);
    assert_int_equal(sg_tracer_input_tensor(t, &x, "x", fake, SG_FLOAT64, 0), SG_OK);
    const sg_expr *one, *two;
    assert_int_equal(sg_expr_int(C, &one, 1), SG_OK);
    assert_int_equal(sg_expr_int(C, &two, 2), SG_OK);
    sg_arg a[2] = {{.kind = SG_ARG_VALUE, .u.v = x}, {.kind = SG_ARG_INT, .u.e = one}};
    assert_int_equal(sg_tracer_call(t, &y, "sg_minus", a, 2, 2), SG_OK);
    a[1].u.e = two;
    assert_int_equal(sg_tracer_call(t, &z, "sg_minus_", a, 2, 3), SG_OK);
    assert_true(sg_tracer_same_storage(t, z, x));
    assert_int_equal(sg_tracer_output(t, &y, 1), SG_OK);
    char *g;
    assert_int_equal(sg_tracer_print(t, &g), SG_OK);
    assert_string_equal(g, "def forward(self, s0: \"Sym(s0)\", s1: \"Sym(s1)\", x: \"f64[s0, s1]\"):\n"
                           "    sg_minus: \"f64[s0, s1]\" = torch.ops.aten.sg_minus.default(x, 1)\n"
                           "    sg_minus_: \"f64[s0, s1]\" = torch.ops.aten.sg_minus_.default(x, 2)\n"
                           "    return (sg_minus,)\n");
    sg_free(g);
    sg_tracer_free(t);
    sg_inputs_free(in);
    sg_env_free(env);
}

/* Run eagerly from Python source: torch.X and Tensor.X_ spellings, the
 * kernel of the row (sub), and the in-place write seen through x. */
static void test_eager(void **state)
{
    (void)state;
    static const char src[] = "def f():\n"
                              "    x = torch.arange(4).mul(1.5)\n"
                              "    y = torch.sg_minus(x, 1)\n"
                              "    x.sg_minus_(y)\n"
                              "    return x, y\n";
    sg_program *p;
    sg_walk *w;
    assert_int_equal(sg_program_new(C, &p, src, strlen(src), 1), SG_OK);
    assert_int_equal(sg_walk_eager(p, &w), SG_OK);
    if (sg_walk_run(w))
        fail_msg("%s", sg_ctx_last_error_msg(C));
    char *s;
    /* x = [0, 1.5, 3, 4.5]; y = x - 1 = [-1, 0.5, 2, 3.5]; x - y = [1, 1, 1, 1] */
    assert_int_equal(sg_walk_print_output(w, NULL, 0, &s), SG_OK);
    assert_string_equal(s, "[1.0, 1.0, 1.0, 1.0]");
    sg_free(s);
    assert_int_equal(sg_walk_print_output(w, NULL, 1, &s), SG_OK);
    assert_string_equal(s, "[-1.0, 0.5, 2.0, 3.5]");
    sg_free(s);
    sg_walk_free(w);
    sg_program_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_registered),
        cmocka_unit_test(test_traced),
        cmocka_unit_test(test_eager),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
