/* A front end capturing a graph (doc/embedding.md, "Capturing a graph"):
 * the program
 *
 *     def f(x):            # x: a float64 tensor of example sizes [5, 3]
 *         y = x.mul(2).view(-1)
 *         if y.size(0) > 4:
 *             y = y.sin()
 *         return y
 *
 * traced op by op through the public API. make check builds and runs it:
 * it prints the graph and the guards, and exits 1 if they are not the
 * ones written below (the guard in its canonical form: s0*s1 >= 5). */
#include <stdio.h>
#include <string.h>

#include <shapeguard.h>

static const char *const want_graph =
    "def forward(self, s0: \"Sym(s0)\", s1: \"Sym(s1)\", x: \"f64[s0, s1]\"):\n"
    "    mul: \"f64[s0, s1]\" = torch.ops.aten.mul.Tensor(x, 2)\n"
    "    view: \"f64[s0*s1]\" = torch.ops.aten.view.default(mul, [-1])\n"
    "    sin: \"f64[s0*s1]\" = torch.ops.aten.sin.default(view)\n"
    "    return (sin,)\n";

static int fail(sg_ctx *ctx, const char *what)
{
    fprintf(stderr, "trace example: %s: %s\n", what, sg_ctx_last_error_msg(ctx));
    return 1;
}

int main(void)
{
    sg_ctx *ctx;
    sg_env *env;
    sg_inputs *in;
    sg_tracer *t;
    if (sg_ctx_new(&ctx) != SG_OK)
        return 1;
    if (sg_env_new(ctx, NULL, &env) || sg_inputs_new(env, NULL, &in) || sg_tracer_new(env, &t))
        return fail(ctx, "setup");

    /* the input: fakified from its example, then a placeholder */
    const sg_source *src;
    const sg_fake *fake;
    sg_value x, y, two_y, n;
    int64_t sizes[2] = {5, 3};
    sg_tensor_value example = {.ndim = 2, .sizes = sizes};
    if (sg_source_local(ctx, &src, "x") || sg_inputs_tensor(in, src, &example, NULL, &fake) ||
        sg_tracer_input_tensor(t, &x, "x", fake, SG_FLOAT64, 0))
        return fail(ctx, "input");

    /* y = x.mul(2).view(-1) */
    const sg_expr *two, *minus_one;
    if (sg_expr_int(ctx, &two, 2) || sg_expr_int(ctx, &minus_one, -1))
        return fail(ctx, "constants");
    sg_arg mul[2] = {{.kind = SG_ARG_VALUE, .u.v = x}, {.kind = SG_ARG_INT, .u.e = two}};
    if (sg_tracer_call(t, &two_y, "mul.Tensor", mul, 2, 2))
        return fail(ctx, "mul");
    sg_arg view[2] = {{.kind = SG_ARG_VALUE, .u.v = two_y}, {.kind = SG_ARG_INTS, .u.ints = {1, &minus_one}}};
    if (sg_tracer_call(t, &y, "view", view, 2, 2))
        return fail(ctx, "view");

    /* if y.size(0) > 4: a question to the environment, which guards it */
    const sg_expr *four, *cond;
    int taken;
    if (sg_expr_int(ctx, &four, 4) || sg_expr_rel(ctx, &cond, SG_REL_GT, sg_tracer_size(t, y, 0), four) ||
        sg_env_evaluate(env, &taken, cond, "line 3"))
        return fail(ctx, "if");
    if (taken) {
        sg_arg sin[1] = {{.kind = SG_ARG_VALUE, .u.v = y}};
        if (sg_tracer_call(t, &y, "sin", sin, 1, 4))
            return fail(ctx, "sin");
    }
    n = y;
    if (sg_tracer_output(t, &n, 1))
        return fail(ctx, "output");

    char *graph, *guard;
    if (sg_tracer_print(t, &graph))
        return fail(ctx, "print");
    printf("%s", graph);
    int bad = strcmp(graph, want_graph) != 0;
    sg_free(graph);
    for (size_t i = 0; i < sg_env_nguards(env); i++) {
        if (sg_print(ctx, &guard, sg_env_guard(env, i, NULL), SG_FMT_PYTHON))
            return fail(ctx, "guard");
        printf("guard: %s\n", guard);
        bad |= i > 0 || strcmp(guard, "s0*s1 >= 5") != 0;
        sg_free(guard);
    }
    bad |= sg_env_nguards(env) != 1;
    sg_tracer_free(t);
    sg_inputs_free(in);
    sg_env_free(env);
    sg_ctx_free(ctx);
    if (bad)
        fprintf(stderr, "trace example: not the graph or the guards expected\n");
    return bad;
}
