/* front: the parser of the program language and its printer, and the
 * walker's public API (a program run eagerly, traced and run). The printer's
 * text is Python's ast.unparse text (tests/diff/front.test compares the two
 * on random programs); here, cases worked out by hand: precedence, the
 * statements, and every kind of error with its line and column. */
#include "cmocka_all.h"

#include <stdlib.h>
#include <string.h>

#include "front/front_private.h"
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

static void same(const char *src, const char *want)
{
    sg__ast *a;
    char *text;
    if (sg__py_parse(C, &a, src, strlen(src)))
        fail_msg("'%s' does not parse: %s", src, sg_ctx_last_error_msg(C));
    assert_int_equal(sg__py_print(C, &text, sg__ast_module(a)), SG_OK);
    assert_string_equal(text, want);
    sg_free(text);
    sg__ast_free(a);
}

static void bad(const char *src, sg_status want, const char *msg)
{
    sg__ast *a = (sg__ast *)1;
    sg_ctx_reset_error(C);
    assert_int_equal(sg__py_parse(C, &a, src, strlen(src)), want);
    assert_null(a);
    if (!strstr(sg_ctx_last_error_msg(C), msg))
        fail_msg("'%s': message '%s' lacks '%s'", src, sg_ctx_last_error_msg(C), msg);
}

static void test_precedence(void **state)
{
    (void)state;
    same("y = -2**2\n", "y = -2 ** 2\n");        /* ** binds tighter than unary minus */
    same("y = (-2)**2\n", "y = (-2) ** 2\n");
    same("y = 2**3**2\n", "y = 2 ** 3 ** 2\n");  /* right-associative */
    same("y = (2**3)**2\n", "y = (2 ** 3) ** 2\n");
    same("y = a - b - c\n", "y = a - b - c\n");  /* left-associative */
    same("y = a - (b - c)\n", "y = a - (b - c)\n");
    same("y = (a * b) + c // d % e\n", "y = a * b + c // d % e\n");
    same("y = not a == b\n", "y = not a == b\n");
    same("y = (not a) == b\n", "y = (not a) == b\n");
    same("y = a < b < c\n", "y = a < b < c\n");  /* one chain */
    same("y = (a < b) < c\n", "y = (a < b) < c\n");
    same("y = a or b and c\n", "y = a or (b and c)\n"); /* unparse's choice */
    same("y = -x.shape[0]\n", "y = -x.shape[0]\n");
    same("y = (a + b).t()\n", "y = (a + b).t()\n");
}

static void test_statements(void **state)
{
    (void)state;
    same("import torch\n"
         "class F(torch.autograd.Function):\n"
         "    @staticmethod\n"
         "    def forward(ctx, x):\n"
         "        ctx.save_for_backward(x)\n"
         "        return x.mul(2)\n",
         "import torch\n"
         "class F(torch.autograd.Function):\n"
         "    @staticmethod\n"
         "    def forward(ctx, x):\n"
         "        ctx.save_for_backward(x)\n"
         "        return x.mul(2)\n");
    same("def f(x, y):\n"
         "  # a comment\n"
         "  a, b = x.unbind(0)\n"
         "  x.data = y\n"
         "  y += 1\n"
         "  with torch.no_grad():\n"
         "    z = x[..., 1:3, ::2, :]\n"
         "  if x.shape[0] > 2 and \\\n"
         "     x.dim() == 2:\n"
         "    pass\n"
         "  elif (x.size(1) <\n"
         "        4):\n"
         "    return [x, (y,)], ()\n"
         "  else:\n"
         "    return F.apply(x, dim=1, keepdim=True), 1.5, 1e-5, None\n",
         "def f(x, y):\n"
         "    a, b = x.unbind(0)\n"
         "    x.data = y\n"
         "    y += 1\n"
         "    with torch.no_grad():\n"
         "        z = x[..., 1:3, ::2, :]\n"
         "    if x.shape[0] > 2 and x.dim() == 2:\n"
         "        pass\n"
         "    elif x.size(1) < 4:\n"
         "        return ([x, (y,)], ())\n"
         "    else:\n"
         "        return (F.apply(x, dim=1, keepdim=True), 1.5, 1e-05, None)\n");
}

static void test_errors(void **state)
{
    (void)state;
    bad("def f(x):\n  return x +\n", SG_ESYNTAX, "line 2, column 13: expected an expression, found the end of the line");
    bad("while x:\n    pass\n", SG_EUNSUPPORTED, "line 1, column 1: unsupported: while");
    bad("y = 'a'\n", SG_EUNSUPPORTED, "line 1, column 5: unsupported: strings");
    bad("y = [i for i in x]\n", SG_EUNSUPPORTED, "line 1, column 8: unsupported: comprehensions");
    bad("y = a if b else c\n", SG_EUNSUPPORTED, "line 1, column 7: unsupported: conditional expressions");
    bad("x[0] = 1\n", SG_EUNSUPPORTED, "line 1, column 1: unsupported: assignment to a subscript");
    bad("def f(x=1):\n    pass\n", SG_EUNSUPPORTED, "line 1, column 8: unsupported: default values");
    bad("if x:\n    y = 1\n  z = 2\n", SG_ESYNTAX, "line 3, column 3: unindent does not match");
    bad("y = $\n", SG_ESYNTAX, "line 1, column 5: invalid character '$'");
    bad("y = (1, 2\n", SG_ESYNTAX, "a bracket is not closed");
    bad("y = 1)\n", SG_ESYNTAX, "line 1, column 6: unmatched ')'");
    bad("y = 99999999999999999999\n", SG_ELIMIT, "line 1, column 5: the integer 99999999999999999999 does not fit");
    bad("def f(x):\nreturn x\n", SG_ESYNTAX, "line 2, column 1: expected an indented block");
    bad("  y = 1\n", SG_ESYNTAX, "line 1, column 3: expected a statement (unexpected indent)");
}

/* Nesting and size are bounded before they reach the C stack. */
static void test_limits(void **state)
{
    (void)state;
    size_t n = 100000;
    char *deep = malloc(2 * n + 16);
    assert_non_null(deep);
    strcpy(deep, "y = ");
    memset(deep + 4, '(', n);
    deep[4 + n] = '1';
    memset(deep + 5 + n, ')', n);
    strcpy(deep + 5 + 2 * n, "\n");
    bad(deep, SG_ELIMIT, "nested too deeply");
    memset(deep + 4, '-', n); /* unary minus chains recurse too */
    deep[4 + n] = '1';
    deep[5 + n] = '\n';
    deep[6 + n] = '\0';
    bad(deep, SG_ELIMIT, "nested too deeply");
    free(deep);
    char blocks[16384] = "";
    size_t at = 0;
    for (int i = 0; i < 120; i++)
        at += (size_t)snprintf(blocks + at, sizeof blocks - at, "%*sif x:\n", i, "");
    snprintf(blocks + at, sizeof blocks - at, "%*spass\n", 120, "");
    bad(blocks, SG_ELIMIT, "nested too deeply");
    size_t big = SG_PY_MAX_SOURCE + 1;
    char *huge = malloc(big + 1);
    assert_non_null(huge);
    memset(huge, '\n', big);
    huge[big] = '\0';
    bad(huge, SG_ELIMIT, "a program of more than");
    free(huge);
    sg__ast *a;
    assert_int_equal(sg__py_parse(C, &a, "", 0), SG_OK); /* an empty program is one */
    assert_int_equal(sg__ast_module(a)->nkids, 0);
    assert_int_equal(sg__ast_ops(a), 0);
    sg__ast_free(a);
    /* the operations the text writes (the eager run's hint for room reserved ahead): the call x.sin(),
       the binary +, the subscript x[0], the augmented assignment, the unary -, and f(y) */
    const char *src = "def f(x):\n    y = x.sin() + x[0]\n    y += 1\n    return -y\nz = f(2)\n";
    assert_int_equal(sg__py_parse(C, &a, src, strlen(src)), SG_OK);
    assert_int_equal(sg__ast_ops(a), 6);
    sg__ast_free(a);
}

/* ---- the walker's public API (shapeguard/front.h) ---- */

static char *out_text(sg_walk *w, const sg_run *r, size_t i)
{
    char *t = NULL;
    if (sg_walk_print_output(w, r, i, &t))
        fail_msg("output %zu: %s", i, sg_ctx_last_error_msg(C));
    return t;
}

static void expect_out(sg_walk *w, const sg_run *r, size_t i, const char *want)
{
    char *t = out_text(w, r, i);
    if (strcmp(t, want))
        fail_msg("output %zu printed %s, expected %s", i, t, want);
    sg_free(t);
}

/* One program run eagerly, then traced and its graph run through exec.h:
 * x = [0.5, 1.5], n = 3: y = x * n = [1.5, 4.5]; x.add_(1) makes x [1.5,
 * 2.5]; y.sum() = 6.0 (Python: sum of 1.5 and 4.5). */
static void test_walk_api(void **state)
{
    (void)state;
    const char *src = "import torch\n\ndef f(x, n):\n    y = x * n\n    x.add_(1)\n    return y.sum(), x, y\n";
    sg_program *p;
    assert_int_equal(sg_program_new(C, &p, src, strlen(src), 1), SG_OK);
    assert_int_equal(sg_program_nparams(p), 2);
    assert_string_equal(sg_program_param(p, 1), "n");
    int64_t two[1] = {2};
    sg_tensor *x;
    assert_int_equal(sg_tensor_new(C, &x, SG_FLOAT64, 1, two), SG_OK);
    sg_tensor_set_f(x, 0, 0.5);
    sg_tensor_set_f(x, 1, 1.5);
    /* eagerly */
    sg_walk *w;
    assert_int_equal(sg_walk_eager(p, &w), SG_OK);
    assert_int_equal(sg_walk_input_int(w, "m", 3), SG_EINVAL);
    assert_int_equal(sg_walk_input_tensor(w, "x", x, 0), SG_OK);
    assert_int_equal(sg_walk_input_int(w, "n", 3), SG_OK);
    assert_int_equal(sg_walk_run(w), SG_OK);
    assert_int_equal(sg_walk_run(w), SG_EINVAL); /* once */
    assert_int_equal(sg_walk_noutputs(w), 3);
    expect_out(w, NULL, 0, "6.0");
    expect_out(w, NULL, 1, "[1.5, 2.5]");
    expect_out(w, NULL, 2, "[1.5, 4.5]");
    assert_true(sg_walk_output_is(w, 1, "x"));
    assert_false(sg_walk_output_is(w, 2, "x"));
    assert_int_equal(sg_tensor_version(x), 1); /* add_ wrote the caller's tensor */
    assert_int_not_equal(sg_walk_local(w, "y"), UINT32_MAX);
    assert_int_equal(sg_walk_local(w, "n"), UINT32_MAX); /* an int */
    const sg_tensor *y = sg_run_tensor(sg_walk_eager_run(w), sg_walk_output_value(w, 2));
    assert_non_null(y);
    assert_float_equal(sg_tensor_get_f(y, 1), 4.5, 0);
    assert_int_equal(sg_walk_param_value(w, "x"), sg_walk_output_value(w, 1)); /* x's value now */
    sg_walk_free(w);
    /* traced (x dynamic), then the graph run on x = [0.5, 1.5] again */
    sg_tensor_set_f(x, 0, 0.5);
    sg_tensor_set_f(x, 1, 1.5);
    sg_env *env;
    sg_inputs *in;
    sg_tracer *t;
    const sg_source *xs;
    const sg_fake *fake;
    sg_value xv, nv;
    const sg_expr *three;
    assert_int_equal(sg_env_new(C, NULL, &env), SG_OK);
    assert_int_equal(sg_inputs_new(env, NULL, &in), SG_OK);
    assert_int_equal(sg_source_local(C, &xs, "x"), SG_OK);
    sg_tensor_value tv = {.ndim = 1, .sizes = two};
    assert_int_equal(sg_inputs_tensor(in, xs, &tv, NULL, &fake), SG_OK);
    assert_int_equal(sg_tracer_new(env, &t), SG_OK);
    assert_int_equal(sg_tracer_input_tensor(t, &xv, "x", fake, SG_FLOAT64, 0), SG_OK);
    assert_int_equal(sg_parse(C, &three, "3", NULL), SG_OK);
    assert_int_equal(sg_tracer_input_int(t, &nv, "n", three), SG_OK);
    assert_int_equal(sg_walk_trace(p, t, &w), SG_OK);
    assert_ptr_equal(sg_walk_tracer(w), t);
    assert_null(sg_walk_eager_run(w));
    assert_int_equal(sg_walk_input_tensor(w, "x", x, 0), SG_EINVAL); /* a concrete input in a trace */
    assert_int_equal(sg_walk_input_value(w, "x", xv), SG_OK);
    assert_int_equal(sg_walk_input_value(w, "n", nv), SG_OK);
    assert_int_equal(sg_walk_run(w), SG_OK);
    assert_int_equal(sg_walk_finish(w), SG_OK);
    assert_int_equal(sg_tracer_lint(t), SG_OK);
    char *ops;
    assert_int_equal(sg_tracer_graph_ops(t, "", &ops), SG_OK);
    assert_string_equal(ops, "mul.Tensor add_.Tensor sum");
    sg_free(ops);
    assert_int_equal(sg_tracer_graph_ops(t, "cond_true_0", &ops), SG_EINVAL);
    char *text = NULL;
    assert_int_equal(sg_walk_print_output(w, NULL, 1, &text), SG_EINTERNAL); /* no values: no run */
    sg_run *r;
    assert_int_equal(sg_run_new(t, NULL, &r), SG_OK);
    assert_int_equal(sg_run_set_named(r, "x", x), SG_OK);
    assert_int_equal(sg_run_execute(r), SG_OK);
    expect_out(w, r, 0, "6.0");
    expect_out(w, r, 1, "[1.5, 2.5]");
    expect_out(w, r, 2, "[1.5, 4.5]");
    assert_int_equal(sg_tensor_version(x), 2); /* the eager add_, then the run's */
    sg_run_free(r);
    sg_walk_free(w);
    sg_tracer_free(t);
    sg_inputs_free(in);
    sg_env_free(env);
    sg_tensor_unref(x);
    sg_program_free(p);
}

/* y = a OP a OP ... (n links of link text, after a first "a"): parses and
 * prints back to the same text. The parser builds such chains in a loop;
 * the printer printed them recursively and overflowed the C stack at about
 * 100,000 links (issue 19). */
static void chain_roundtrip(const char *link, size_t n)
{
    size_t k = strlen(link);
    char *src = malloc(8 + k * n);
    assert_non_null(src);
    memcpy(src, "y = a", 5);
    size_t at = 5;
    for (size_t i = 0; i < n; i++, at += k)
        memcpy(src + at, link, k);
    strcpy(src + at, "\n");
    same(src, src);
    free(src);
}

static void test_long_chains(void **state)
{
    (void)state;
    /* as long as the parser's 1,000,000 tokens allow */
    chain_roundtrip(" + a", 450000);       /* BINOP */
    chain_roundtrip(".neg()", 240000);     /* ATTR and CALL */
    chain_roundtrip("[0]", 300000);        /* SUBSCRIPT */
    chain_roundtrip(" * a.t()[::2]", 80000);
    same("y = (a + b).neg()[0] * (c - d) ** 2 ** e\n", "y = (a + b).neg()[0] * (c - d) ** 2 ** e\n");
    same("y = -(a - b).t() - (c.d - e)\n", "y = -(a - b).t() - (c.d - e)\n");
    same("y = (a ** b) ** c.d[e]\n", "y = (a ** b) ** c.d[e]\n");
    same("y = 1 .real + (2).x\n", "y = 1 .real + 2 .x\n");
    /* a ** b ** c nests to the right: it counts toward SG_PY_MAX_DEPTH */
    char pow[16 + 5 * (SG_PY_MAX_DEPTH + 2)];
    size_t at = (size_t)snprintf(pow, sizeof pow, "y = a");
    for (int i = 0; i < SG_PY_MAX_DEPTH + 1; i++)
        at += (size_t)snprintf(pow + at, sizeof pow - at, " ** a");
    snprintf(pow + at, sizeof pow - at, "\n");
    bad(pow, SG_ELIMIT, "nested too deeply (the limit: 100 levels)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_statements),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_long_chains),
        cmocka_unit_test(test_walk_api),
    };
    return cmocka_run_group_tests_name("front", tests, setup, teardown);
}
