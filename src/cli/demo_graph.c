/* shapeguard demo, last part: a program captured into a graph through the
 * tracer (graph.h), op by op as a front end drives it:
 *
 *     def f(x):               # x of sizes [5, 3], both dynamic
 *         y = x.mul(2).view(-1)
 *         if y.size(0) > 4:   # a question to the environment: a guard
 *             y = y.sin()
 *         return y
 */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/tensor.h"

static int fail(sg_ctx *ctx, const char *what)
{
    fprintf(stderr, "shapeguard: demo: %s: %s\n", what, sg_ctx_last_error_msg(ctx));
    return 1;
}

static int trace(sg_ctx *ctx, sg_env *env, sg_inputs *in, sg_tracer *t)
{
    const sg_source *src;
    const sg_fake *fake;
    sg_value x, y;
    int64_t sizes[2] = {5, 3};
    sg_tensor_value example = {.ndim = 2, .sizes = sizes};
    if (sg_source_local(ctx, &src, "x") || sg_inputs_tensor(in, src, &example, NULL, &fake) ||
        sg_tracer_input_tensor(t, &x, "x", fake, SG_FLOAT64, 0))
        return fail(ctx, "input");
    const sg_expr *two, *minus_one, *four, *cond;
    int taken;
    if (sg_expr_int(ctx, &two, 2) || sg_expr_int(ctx, &minus_one, -1) || sg_expr_int(ctx, &four, 4))
        return fail(ctx, "constants");
    sg_arg mul[2] = {{.kind = SG_ARG_VALUE, .u.v = x}, {.kind = SG_ARG_INT, .u.e = two}};
    if (sg_tracer_call(t, &y, "mul.Tensor", mul, 2, 2))
        return fail(ctx, "mul");
    sg_arg view[2] = {{.kind = SG_ARG_VALUE, .u.v = y}, {.kind = SG_ARG_INTS, .u.ints = {1, &minus_one}}};
    if (sg_tracer_call(t, &y, "view", view, 2, 2))
        return fail(ctx, "view");
    if (sg_expr_rel(ctx, &cond, SG_REL_GT, sg_tracer_size(t, y, 0), four) ||
        sg_env_evaluate(env, &taken, cond, "line 3"))
        return fail(ctx, "if");
    sg_arg sin[1] = {{.kind = SG_ARG_VALUE, .u.v = y}};
    if (taken && sg_tracer_call(t, &y, "sin", sin, 1, 4))
        return fail(ctx, "sin");
    if (sg_tracer_output(t, &y, 1))
        return fail(ctx, "output");
    char *text;
    if (sg_tracer_print(t, &text))
        return fail(ctx, "print");
    fputs(text, stdout);
    sg_free(text);
    for (size_t i = 0; i < sg_env_nguards(env); i++) {
        if (sg_print(ctx, &text, sg_env_guard(env, i, NULL), SG_FMT_PYTHON))
            return fail(ctx, "guard");
        printf("guard: %s\n", text);
        sg_free(text);
    }
    return 0;
}

int cli_demo_graph(void)
{
    sg_ctx *ctx;
    sg_env *env = NULL;
    sg_inputs *in = NULL;
    sg_tracer *t = NULL;
    if (sg_ctx_new(&ctx) != SG_OK) {
        fputs("shapeguard: cannot make a context: out of memory\n", stderr);
        return 1;
    }
    int rc = sg_env_new(ctx, NULL, &env) || sg_inputs_new(env, NULL, &in) || sg_tracer_new(env, &t)
                 ? fail(ctx, "setup")
                 : trace(ctx, env, in, t);
    sg_tracer_free(t);
    sg_inputs_free(in);
    sg_env_free(env);
    sg_ctx_free(ctx);
    return rc;
}
