/* front: the parser of the program language and its printer. The printer's
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
    sg__ast_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_statements),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests_name("front", tests, setup, teardown);
}
