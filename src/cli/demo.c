/* The shape-environment part of `shapeguard demo`: tensor inputs fakified
 * through one shape environment (duck sizing across inputs, a subclass whose
 * outer size is tied to its inner tensor's), the questions a trace asks and
 * the guards they record, the guard list in PyTorch's text, re-fakification
 * through the source-to-symbol cache, and the guards checked at call time.
 *
 * It runs the battery commands (battery.h) on one case, so every line shows
 * exactly what a battery with the same lines would get. */
#include <stdlib.h>
#include <string.h>

#include "battery.h"
#include "tensor.h"

typedef enum step_kind {
    STEP_TENSOR,   /* tensor ARGS: the symbolic sizes, strides and offset */
    STEP_SUBCLASS, /* subclass ARGS: the same, inner tensors included */
    STEP_EVALUATE, /* evaluate ARGS: the answer, and the guard it recorded */
    STEP_GUARDS,   /* guards: produce_guards in PyTorch's text */
    STEP_REFAKIFY, /* refakify ARGS */
    STEP_CALL      /* call ARGS: the guards checked at call time */
} step_kind;

typedef struct step {
    step_kind kind;
    const char *args;
    const char *note; /* evaluate: where the trace branched (the provenance); else a remark */
} step;

/* Two plain inputs of one shape (duck sizing gives y the symbols of x) and
 * a `double` subclass marked dynamic in dim 0 (PyTorch's
 * test_wrapper_subclass_guards_on_inner_tensor): its outer size is tied to
 * twice the inner one; the trace branches on both. */
static const step steps[] = {
    { STEP_TENSOR, "x sizes=[8, 4]", NULL },
    { STEP_TENSOR, "y sizes=[8, 4]", "duck sizing: the hints of x, so the symbols of x" },
    { STEP_SUBCLASS,
      "z kind=double sizes=[8, 4] dynamic=[dynamic, static] elem={sizes=[4, 4] dynamic=[dynamic, static]}",
      NULL },
    { STEP_EVALUATE, "L['z'].size()[0] < 13", "f: if z.shape[0] < 13" },
    { STEP_EVALUATE, "L['z'].elem.size()[0] > 3", "double.__torch_dispatch__: if elem.shape[0] > 3" },
    { STEP_EVALUATE, "L['z'].size()[0] % 2 == 0", "f: if z.shape[0] % 2 == 0" },
    { STEP_EVALUATE, "L['x'].size()[0] == L['y'].size()[0]", "f: if x.shape[0] == y.shape[0]" },
    { STEP_GUARDS, "", NULL },
    { STEP_REFAKIFY, "x", NULL },
    { STEP_REFAKIFY, "z", NULL },
    { STEP_CALL, "x sizes=[10, 3]; y sizes=[10, 3]; z kind=double sizes=[12, 4] elem={sizes=[6, 4]}", NULL },
    { STEP_CALL, "x sizes=[10, 3]; y sizes=[11, 3]; z kind=double sizes=[12, 4] elem={sizes=[6, 4]}", NULL },
    { STEP_CALL, "x sizes=[10, 3]; y sizes=[10, 3]; z kind=double sizes=[12, 5] elem={sizes=[6, 5]}", NULL },
    { STEP_CALL, "x sizes=[10, 3]; y sizes=[10, 3]; z kind=double sizes=[14, 4] elem={sizes=[7, 4]}", NULL },
    { STEP_CALL, "x sizes=[10, 3]; y sizes=[10, 3]; z kind=two sizes=[12, 4]", NULL },
};

static const char *const step_names[] = { "tensor", "subclass", "evaluate", "guards", "refakify", "call" };

/* "(e0, e1, ...)" */
static void add_tuple(cli_str *s, sg_ctx *ctx, const sg_expr *const *v, size_t n)
{
    cli_str_adds(s, "(");
    for (size_t i = 0; i < n; i++) {
        if (i)
            cli_str_adds(s, ", ");
        cli_str_add_expr(s, ctx, v[i], SG_FMT_SG);
    }
    cli_str_adds(s, n == 1 ? ",)" : ")");
}

/* The symbolic metadata of a fake, inner tensors after it; then the
 * replacements that unflatten recorded for its symbols. */
static void add_fake(cli_str *s, sg_ctx *ctx, const char *name, const sg_fake *f)
{
    cli_str_addf(s, "%s: size ", name);
    add_tuple(s, ctx, f->sizes, f->ndim);
    cli_str_adds(s, " stride ");
    add_tuple(s, ctx, f->strides, f->ndim);
    cli_str_adds(s, " offset ");
    cli_str_add_expr(s, ctx, f->offset, SG_FMT_SG);
    for (size_t i = 0; i < f->ninner; i++) {
        cli_str inner = CLI_STR_INIT;
        cli_str_addf(&inner, "%s.%s", name, f->names[i]);
        cli_str_adds(s, "; ");
        add_fake(s, ctx, cli_str_get(&inner), f->inner[i]);
        cli_str_free(&inner);
    }
}

static void add_replacements(cli_str *s, sg_env *env, const sg_fake *f)
{
    sg_ctx *ctx = sg_env_ctx(env);
    for (size_t i = 0; i < f->ndim; i++) {
        const sg_expr *r;
        if (sg_expr_op(f->sizes[i]) == SG_OP_SYM && sg_env_replace(env, &r, f->sizes[i]) == SG_OK &&
            r != f->sizes[i]) {
            cli_str_adds(s, "; unflatten tied ");
            cli_str_add_expr(s, ctx, f->sizes[i], SG_FMT_SG);
            cli_str_adds(s, " = ");
            cli_str_add_expr(s, ctx, r, SG_FMT_SG);
        }
    }
}

/* evaluate: the answer, then the guard recorded (with its provenance) or
 * why none was. */
static int run_evaluate(case_state *cs, const step *st, cli_str *line, cli_str *why)
{
    const sg_expr *c;
    int v = 0;
    size_t before = sg_env_nguards(cs->env);
    sg_status e = case_parse(cs, &c, st->args, strlen(st->args));
    if (e == SG_OK)
        e = sg_env_evaluate(cs->env, &v, c, st->note);
    if (e != SG_OK) {
        cli_str_add_error(why, cs->ctx, e);
        return 0;
    }
    cli_str_adds(line, v ? "true" : "false");
    if (sg_env_nguards(cs->env) == before) {
        cli_str_adds(line, ", provable: no guard");
        return 1;
    }
    const char *prov;
    const sg_expr *g = sg_env_guard(cs->env, sg_env_nguards(cs->env) - 1, &prov);
    cli_str_adds(line, ", guard ");
    cli_str_add_expr(line, cs->ctx, g, SG_FMT_SG);
    cli_str_addf(line, " (from '%s')", prov);
    return 1;
}

static int run_step(case_state *cs, const step *st, cli_str *line)
{
    cli_str why = CLI_STR_INIT;
    cmd_line ln = { st->args, NULL };
    int ok = 1, pass = 0;
    sg_inputs *in;

    switch (st->kind) {
    case STEP_TENSOR:
    case STEP_SUBCLASS:
        if ((st->kind == STEP_TENSOR ? cmd_tensor : cmd_subclass)(cs, cs->ctx, &ln, &why) == CMD_FAIL) {
            ok = 0;
            break;
        }
        in = cs->inputs;
        add_fake(line, cs->ctx, sg_source_name(sg_inputs_source(in, sg_inputs_count(in) - 1)),
                 sg_inputs_fake(in, sg_inputs_count(in) - 1));
        add_replacements(line, cs->env, sg_inputs_fake(in, sg_inputs_count(in) - 1));
        if (st->note)
            cli_str_addf(line, " (%s)", st->note);
        break;
    case STEP_EVALUATE:
        ok = case_env(cs, &why) && run_evaluate(cs, st, line, &why);
        break;
    case STEP_GUARDS:
        cli_str_adds(line, "produce_guards, in PyTorch's text:");
        break;
    case STEP_REFAKIFY:
        ln.expected = "same";
        if ((ok = cmd_refakify(cs, cs->ctx, &ln, &why) == CMD_PASS))
            cli_str_adds(line, "same symbols, no new guard (from the recorded initial state)");
        break;
    case STEP_CALL:
        if ((ok = case_call(cs, st->args, &pass, line, &why)) != 0) {
            /* the reason is in line already: put the verdict before it */
            cli_str verdict = CLI_STR_INIT;
            cli_str_addf(&verdict, "%s%s%s", pass ? "pass" : "fail", line->n ? ": " : "", cli_str_get(line));
            cli_str_clear(line);
            cli_str_adds(line, cli_str_get(&verdict));
            cli_str_free(&verdict);
        }
        break;
    }
    if (!ok)
        cli_str_addf(line, "error: %s", why.n ? cli_str_get(&why) : "failed");
    cli_str_free(&why);
    return ok;
}

int cli_demo_shapes(void)
{
    case_state cs;
    cli_str out = CLI_STR_INIT, line = CLI_STR_INIT;
    int rc = 0;

    case_init(&cs);
    if (sg_ctx_new(&cs.ctx) != SG_OK) {
        fputs("shapeguard: cannot make a context: out of memory\n", stderr);
        return 1;
    }
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        const step *st = &steps[i];
        sg_ctx_reset_error(cs.ctx);
        if (!run_step(&cs, st, &line))
            rc = 1;
        cli_str_addf(&out, "%s%s%s  ->  %s", step_names[st->kind], st->args[0] ? " " : "", st->args,
                     cli_str_get(&line));
        fputs(cli_str_get(&out), stdout);
        fputc('\n', stdout);
        if (st->kind == STEP_GUARDS && rc == 0)
            (void)case_write_guards(&cs, stdout, stderr, "    ");
        cli_str_clear(&out);
        cli_str_clear(&line);
    }
    cli_str_free(&out);
    cli_str_free(&line);
    case_end(&cs);
    return rc;
}
