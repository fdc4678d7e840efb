/* shapeguard, the command-line tool: runs batteries, evaluates, simplifies
 * and prints expressions, and shows a short demo of the engine.
 *
 * Exit status: 0 on success; 1 when an expression is in error or an
 * expectation of a battery fails; 2 for a usage error. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tensor.h"

static const char usage_text[] =
    "usage: shapeguard COMMAND [ARGUMENTS]\n"
    "\n"
    "commands:\n"
    "  run FILE...               run battery files; exit 0 iff every expectation holds\n"
    "  guards FILE               run a battery file, then print the guards of its last\n"
    "                            case in PyTorch's text, one a line\n"
    "  trace FILE [--dot | --aot]\n"
    "                            run a battery file, then trace the program of its last\n"
    "                            case and print its graph as FX-like Python (or DOT, or\n"
    "                            the functional graph of the aot pipeline)\n"
    "  eval EXPR [NAME=INT ...]  evaluate EXPR exactly, the symbols bound to the integers\n"
    "  simplify EXPR [--assume FACT]...\n"
    "                            the canonical form of EXPR (under the facts)\n"
    "  range EXPR [--assume FACT]...\n"
    "                            the bounds of EXPR under the facts: [LO, HI]\n"
    "  known EXPR [--assume FACT]...\n"
    "                            true, false or unknown: is EXPR true under the facts?\n"
    "  print FORMAT EXPR         print the canonical form of EXPR as sg, python or c\n"
    "  demo                      show what the engine answers for a few expressions\n"
    "                            and for tensor inputs traced through a shape environment\n"
    "  --help                    show this text\n"
    "  --version                 show the version\n"
    "\n"
    "EXPR uses the Python-like syntax of the battery format (doc/battery.md).\n"
    "Exit status: 0 on success, 1 for an error in an expression or a failed\n"
    "expectation, 2 for a usage error.\n";

/* The whole usage on stderr, for a command line that names no command.
 * Returns the exit status 2. */
static int usage(void)
{
    fputs(usage_text, stderr);
    return 2;
}

/* A usage error: the message, then a hint. Returns the exit status 2. */
static int usage_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("shapeguard: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n(shapeguard --help shows the usage)\n", stderr);
    return 2;
}

/* Report the error st of ctx on stderr as "error KIND: message"; returns 1. */
static int expr_error(sg_ctx *ctx, sg_status st)
{
    const char *msg = sg_ctx_last_error_msg(ctx);
    if (sg_ctx_last_error(ctx) == st && msg[0])
        fprintf(stderr, "error %s: %s\n", sg_status_kind(st), msg);
    else
        fprintf(stderr, "error %s\n", sg_status_kind(st));
    return 1;
}

static sg_ctx *new_ctx(void)
{
    sg_ctx *ctx = NULL;
    if (sg_ctx_new(&ctx) != SG_OK) {
        fputs("shapeguard: cannot make a context: out of memory\n", stderr);
        exit(1);
    }
    return ctx;
}

/* Append the value of an evaluation: an integer, true or false. */
static void add_value(cli_str *s, sg_ctx *ctx, const sg_expr *v)
{
    if (sg_expr_op(v) == SG_OP_TRUE)
        cli_str_adds(s, "true");
    else if (sg_expr_op(v) == SG_OP_FALSE)
        cli_str_adds(s, "false");
    else
        cli_str_add_expr(s, ctx, v, SG_FMT_SG);
}

static void put_line(cli_str *s)
{
    fputs(cli_str_get(s), stdout);
    fputc('\n', stdout);
    cli_str_clear(s);
}

/* shapeguard eval EXPR [NAME=INT ...] */
static int cmd_eval(int argc, char **argv)
{
    sg_ctx *ctx;
    cli_bindings b = CLI_BINDINGS_INIT;
    cli_str out = CLI_STR_INIT;
    const sg_expr *e = NULL, *v = NULL;
    sg_status st;
    int i, rc = 0;

    if (argc < 1)
        return usage_error("eval: missing EXPR");
    ctx = new_ctx();
    for (i = 1; i < argc; i++) {
        if (cli_bindings_add(&b, ctx, argv[i], strlen(argv[i])) != SG_OK) {
            rc = usage_error("eval: %s", sg_ctx_last_error_msg(ctx));
            goto done;
        }
    }
    st = sg_parse(ctx, &e, argv[0], NULL);
    if (st == SG_OK)
        st = sg_expr_eval(ctx, &v, e, b.n, b.syms, b.vals);
    if (st != SG_OK) {
        printf("error %s\n", sg_status_kind(st));
        rc = expr_error(ctx, st);
        goto done;
    }
    add_value(&out, ctx, v);
    put_line(&out);
done:
    cli_str_free(&out);
    cli_bindings_free(&b);
    sg_ctx_free(ctx);
    return rc;
}

/* Print the canonical form of text in fmt; returns the exit status. */
static int print_expr(const char *text, sg_format fmt)
{
    sg_ctx *ctx = new_ctx();
    const sg_expr *e = NULL;
    char *out = NULL;
    sg_status st = sg_parse(ctx, &e, text, NULL);
    int rc = 0;

    if (st == SG_OK)
        st = sg_print(ctx, &out, e, fmt);
    if (st == SG_OK)
        printf("%s\n", out);
    else
        rc = expr_error(ctx, st);
    sg_free(out);
    sg_ctx_free(ctx);
    return rc;
}

typedef enum query_kind { QUERY_SIMPLIFY, QUERY_RANGE, QUERY_KNOWN } query_kind;

/* Append e printed in the battery syntax; an error (SG_ELIMIT: a text past
 * sg_print's bound) is the command's. */
static sg_status add_printed(cli_str *s, sg_ctx *ctx, const sg_expr *e)
{
    char *text = NULL;
    sg_status st = sg_print(ctx, &text, e, SG_FMT_SG);
    if (st == SG_OK)
        cli_str_adds(s, text);
    sg_free(text);
    return st;
}

/* Print the bound b of a range ("-oo"/"oo" when infinite). */
static sg_status add_bound(cli_str *s, sg_ctx *ctx, const sg_expr *b, int is_hi)
{
    if (!b) {
        cli_str_adds(s, is_hi ? "oo" : "-oo");
        return SG_OK;
    }
    return add_printed(s, ctx, b);
}

/* shapeguard simplify|range|known EXPR [--assume FACT]... */
static int cmd_query(query_kind kind, const char *name, int argc, char **argv)
{
    const char *text = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--assume")) {
            if (++i == argc)
                return usage_error("%s: --assume needs a FACT", name);
        } else if (text) {
            return usage_error("%s: one EXPR only (quote it)", name);
        } else {
            text = argv[i];
        }
    }
    if (!text)
        return usage_error("%s: missing EXPR", name);
    sg_ctx *ctx = new_ctx();
    sg_facts *facts = NULL;
    const sg_expr *e = NULL, *fact;
    cli_str out = CLI_STR_INIT;
    int rc = 0;
    sg_status st = sg_facts_new(ctx, &facts);
    for (int i = 0; i < argc && st == SG_OK; i++)
        if (!strcmp(argv[i], "--assume")) {
            st = sg_parse(ctx, &fact, argv[++i], NULL);
            if (st == SG_OK && (st = sg_facts_assume(facts, fact)) == SG_EASSERT) {
                fprintf(stderr, "shapeguard: the facts contradict each other\n");
                st = SG_OK;
            }
        }
    if (st == SG_OK)
        st = sg_parse(ctx, &e, text, NULL);
    if (st == SG_OK) {
        if (kind == QUERY_SIMPLIFY) {
            const sg_expr *r;
            st = sg_facts_simplify(facts, &r, e);
            if (st == SG_OK)
                st = add_printed(&out, ctx, r);
        } else if (kind == QUERY_RANGE) {
            sg_interval iv;
            st = sg_facts_range(facts, &iv, e);
            if (st == SG_OK) {
                cli_str_adds(&out, "[");
                st = add_bound(&out, ctx, iv.lo, 0);
                cli_str_adds(&out, ", ");
                if (st == SG_OK)
                    st = add_bound(&out, ctx, iv.hi, 1);
                cli_str_adds(&out, "]");
            }
        } else {
            sg_truth t;
            st = sg_facts_known(facts, &t, e);
            if (st == SG_OK)
                cli_str_adds(&out, t == SG_TRUE ? "true" : t == SG_FALSE ? "false" : "unknown");
        }
    }
    if (st == SG_OK)
        put_line(&out);
    else
        rc = expr_error(ctx, st);
    cli_str_free(&out);
    sg_facts_free(facts);
    sg_ctx_free(ctx);
    return rc;
}

static int cmd_simplify(int argc, char **argv)
{
    return cmd_query(QUERY_SIMPLIFY, "simplify", argc, argv);
}

static int cmd_range(int argc, char **argv)
{
    return cmd_query(QUERY_RANGE, "range", argc, argv);
}

static int cmd_known(int argc, char **argv)
{
    return cmd_query(QUERY_KNOWN, "known", argc, argv);
}

/* shapeguard print FORMAT EXPR */
static int cmd_print(int argc, char **argv)
{
    sg_format fmt;
    if (argc != 2)
        return usage_error("print: FORMAT and EXPR expected");
    if (sg_format_from_name(&fmt, argv[0]) != SG_OK)
        return usage_error("print: unknown format '%s' (sg, python or c)", argv[0]);
    return print_expr(argv[1], fmt);
}

/* shapeguard run FILE... */
static int cmd_run(int argc, char **argv)
{
    if (argc < 1)
        return usage_error("run: missing FILE");
    return cli_run_batteries((size_t)argc, argv, stdout);
}

static int cmd_guards(int argc, char **argv)
{
    if (argc != 1)
        return usage_error("guards: expected one FILE");
    return cli_battery_guards(argv[0], stdout, stderr);
}

/* shapeguard trace FILE [--dot | --aot] */
static int cmd_trace(int argc, char **argv)
{
    int dot = 0;
    const char *file = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--dot"))
            dot = 1;
        else if (!strcmp(argv[i], "--aot"))
            dot = 2; /* the functional graph of the aot pipeline (keep_input_mutations=true) */
        else if (!file)
            file = argv[i];
        else
            return usage_error("trace: expected one FILE");
    }
    if (!file)
        return usage_error("trace: expected FILE [--dot | --aot]");
    return cli_battery_trace(file, dot, stdout, stderr);
}

/* ---- demo ---------------------------------------------------------------- */

typedef enum demo_kind {
    DEMO_SIMPLIFY, /* the canonical form of a */
    DEMO_SAME,     /* whether a and b are one node */
    DEMO_EVAL,     /* the value of a */
    DEMO_PRINT     /* a printed in fmt */
} demo_kind;

typedef struct demo_item {
    demo_kind kind;
    const char *a, *b;
    sg_format fmt;
} demo_item;

static const demo_item demo_items[] = {
    { DEMO_SIMPLIFY, "(2*x + 1) // 2", NULL, SG_FMT_SG },
    { DEMO_SIMPLIFY, "(6*x + 5) % 3", NULL, SG_FMT_SG },
    { DEMO_SIMPLIFY, "(x // 2) // 3", NULL, SG_FMT_SG },
    { DEMO_SIMPLIFY, "2*x - x", NULL, SG_FMT_SG },
    { DEMO_SIMPLIFY, "(x + 1)**2", NULL, SG_FMT_SG },
    { DEMO_SIMPLIFY, "Max(x + 1, x + 3, Min(y, 2))", NULL, SG_FMT_SG },
    { DEMO_SAME, "x + 1 > y", "y < x + 1", SG_FMT_SG },
    { DEMO_SIMPLIFY, "2*x <= 5", NULL, SG_FMT_SG },
    { DEMO_SIMPLIFY, "2*x == 3", NULL, SG_FMT_SG },
    { DEMO_SIMPLIFY, "not x < y", NULL, SG_FMT_SG },
    { DEMO_SIMPLIFY, "x > 0 and not x > 0", NULL, SG_FMT_SG },
    { DEMO_SAME, "ModularIndexing(x, 4, 8)", "(x // 4) % 8", SG_FMT_SG },
    { DEMO_EVAL, "-2**63 // -1", NULL, SG_FMT_SG },
    { DEMO_EVAL, "TruncMod(-7, 3) + Mod(-7, 3)", NULL, SG_FMT_SG },
    { DEMO_EVAL, "1 // (x - x)", NULL, SG_FMT_SG },
    { DEMO_PRINT, "CeilDiv(x, 4) + Max(x, y) % 3", NULL, SG_FMT_PYTHON },
    { DEMO_PRINT, "CeilDiv(x, 4) + Max(x, y) % 3", NULL, SG_FMT_C },
};

static const char *format_name(sg_format fmt)
{
    return fmt == SG_FMT_PYTHON ? "python" : fmt == SG_FMT_C ? "c" : "sg";
}

/* Append what the engine answers for one item. */
static void demo_answer(cli_str *s, sg_ctx *ctx, const demo_item *it)
{
    const sg_expr *a = NULL, *b = NULL, *v = NULL;
    sg_status st = sg_parse(ctx, &a, it->a, NULL);

    if (st == SG_OK && it->kind == DEMO_SAME)
        st = sg_parse(ctx, &b, it->b, NULL);
    if (st == SG_OK && it->kind == DEMO_EVAL)
        st = sg_expr_eval(ctx, &v, a, 0, NULL, NULL);
    if (st != SG_OK) {
        cli_str_addf(s, "error %s", sg_status_kind(st));
        return;
    }
    switch (it->kind) {
    case DEMO_SAME:
        if (a == b) {
            cli_str_adds(s, "one node: ");
            cli_str_add_expr(s, ctx, a, SG_FMT_SG);
        } else {
            cli_str_adds(s, "two nodes: ");
            cli_str_add_expr(s, ctx, a, SG_FMT_SG);
            cli_str_adds(s, " and ");
            cli_str_add_expr(s, ctx, b, SG_FMT_SG);
        }
        break;
    case DEMO_EVAL:
        add_value(s, ctx, v);
        break;
    default:
        cli_str_add_expr(s, ctx, a, it->fmt);
        break;
    }
}

static int cmd_demo(int argc, char **argv)
{
    sg_ctx *ctx;
    cli_str line = CLI_STR_INIT;
    size_t i;

    if (argc != 0)
        return usage_error("demo takes no arguments");
    ctx = new_ctx();
    printf("shapeguard %s: what the engine answers (INPUT  ->  OUTPUT)\n\n", SG_VERSION_STRING);
    for (i = 0; i < sizeof demo_items / sizeof demo_items[0]; i++) {
        const demo_item *it = &demo_items[i];
        switch (it->kind) {
        case DEMO_SIMPLIFY:
            cli_str_addf(&line, "simplify %s", it->a);
            break;
        case DEMO_SAME:
            cli_str_addf(&line, "same node? %s  |  %s", it->a, it->b);
            break;
        case DEMO_EVAL:
            cli_str_addf(&line, "eval %s", it->a);
            break;
        case DEMO_PRINT:
            cli_str_addf(&line, "print %s %s", format_name(it->fmt), it->a);
            break;
        }
        cli_str_adds(&line, "  ->  ");
        demo_answer(&line, ctx, it);
        put_line(&line);
    }
    cli_str_free(&line);
    sg_ctx_free(ctx);
    printf("\nthe shape environment: tensor inputs, guards, and guards at call time\n\n");
    int rc = cli_demo_shapes();
    printf("\ngraph capture: f(x) = x.mul(2).view(-1), then .sin() if its size is over 4, x of sizes [5, 3]\n\n");
    return cli_demo_graph() || rc;
}

/* ---- dispatch -------------------------------------------------------------- */

typedef struct subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
} subcommand;

static const subcommand subcommands[] = {
    { "run", cmd_run },
    { "guards", cmd_guards },
    { "trace", cmd_trace },
    { "eval", cmd_eval },
    { "simplify", cmd_simplify },
    { "range", cmd_range },
    { "known", cmd_known },
    { "print", cmd_print },
    { "demo", cmd_demo },
};

/* Run the subcommand of argv[1]; returns the exit status. */
static int dispatch(int argc, char **argv)
{
    size_t i;

    if (argc < 2)
        return usage();
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("shapeguard %s\n", SG_VERSION_STRING);
        return 0;
    }
    for (i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        if (!strcmp(argv[1], subcommands[i].name))
            return subcommands[i].run(argc - 2, argv + 2);
    fprintf(stderr, "shapeguard: unknown command '%s'\n", argv[1]);
    return usage();
}

int main(int argc, char **argv)
{
    int rc = dispatch(argc, argv);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fputs("shapeguard: cannot write the output\n", stderr);
        return rc ? rc : 1;
    }
    return rc;
}
