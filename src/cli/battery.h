/* shapeguard tool: the state of a battery case and the command handlers
 * that battery.c and battery_env.c share. */
#ifndef SG_CLI_BATTERY_H
#define SG_CLI_BATTERY_H

#include "cli.h"

/* Everything a case owns. Each `case` line (and each file) starts a new one.
 * The context, the fact base and the environment are made at their first
 * use; case_end releases them. Start from case_init. */
typedef struct case_state {
    sg_ctx *ctx;
    sg_facts *facts;        /* facts of a case without an environment */
    sg_env *env;            /* the shape environment, made at its first use */
    sg_symcache *cache;     /* the source-to-symbol cache of the case */
    sg_inputs *inputs;      /* the inputs given to env (backed, tensor, subclass) */
    sg_env_options opts;    /* set by `env` before the environment is made */
    char **names;           /* NAME -> what it is bound to */
    const sg_expr **named;
    size_t nnames;
    const sg_expr **assumed; /* facts assumed before the environment was made */
    size_t nassumed;
    struct cli_program *program; /* the case's program, its inputs and trace (battery_program.c) */
} case_state;

void case_init(case_state *cs);
/* Release everything the case owns; cs is ready for case_init again. */
void case_end(case_state *cs);

/* The case's fact base (the environment's, when there is one), made if
 * needed; NULL (with why set) if it cannot be. */
sg_facts *case_facts(case_state *cs, cli_str *why);
/* The case's environment, made if needed (facts assumed before it existed
 * are assumed again in it), and its inputs; NULL (why set) if they cannot be
 * made. */
sg_env *case_env(case_state *cs, cli_str *why);
sg_inputs *case_inputs(case_state *cs, cli_str *why);
/* An integer bound written as an integer, -oo or oo (NULL) into *out; 0 if
 * the n bytes at w are neither. */
int cli_read_bound(sg_ctx *ctx, const char *w, size_t n, const sg_expr **out);

/* Bind the source names of a fake's sizes, strides and offset (and of its
 * inner tensors) to their expressions, so that expressions of the case may
 * name them. 0 (why set) on failure. */
int case_bind_fake(case_state *cs, const sg_fake *f);

/* Parse len bytes of text, identifiers resolved as the format says: a bound
 * NAME, a symbol of the environment (s0, u3), else a free symbol. */
sg_status case_parse(case_state *cs, const sg_expr **out, const char *text, size_t len);

/* One command line, split. All strings are NUL-terminated and trimmed. */
typedef struct cmd_line {
    const char *args;     /* the text after the command word */
    const char *expected; /* the text after the arrow; NULL without an arrow */
} cmd_line;

typedef enum cmd_result {
    CMD_PASS,  /* an expectation that holds */
    CMD_FAIL,  /* an expectation that does not hold, or a line in error */
    CMD_QUIET  /* a line that expects nothing and went well */
} cmd_result;

/* A handler runs one line in the case's context ctx. On CMD_FAIL it has put
 * the reason in why ("expected X, got Y", or what was wrong). */
typedef cmd_result (*cmd_fn)(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);

/* The shape-environment commands (battery_env.c). */
cmd_result cmd_env(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_backed(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_unbacked(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_value(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_evaluate(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_guard_or_false(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_guard_or_true(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_check(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_guards(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_asserts(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);

/* Print the case's guards (sg_env_produce_guards) to out in PyTorch's text,
 * one a line (nothing without an environment). 0 on success; 1 when they
 * cannot be produced or printed (a guard past sg_print's bound: the error
 * is printed to err). */
int case_print_guards(case_state *cs, FILE *out, FILE *err);

/* Programs (battery_program.c). program_block takes the block's source
 * (its common indentation removed) starting at line first; program_note_tensor
 * records a `tensor` line's dtype, requires_grad and layout for the values
 * of the program's inputs. */
cmd_result program_block(case_state *cs, const char *src, size_t first, cli_str *why);
struct cli_tval;
void program_note_tensor(case_state *cs, const struct cli_tval *t);
void program_free(struct cli_program *p);
/* The line of the case's `program` when no command used the program (so a
 * battery cut off inside or just after its block does not pass unnoticed),
 * else 0; *parse_status and *parse_error are then the reason the block does
 * not parse (SG_OK and NULL when it does). */
size_t program_unused(const case_state *cs, sg_status *parse_status, const char **parse_error);
/* Trace the case's program (if not done) and print its graph to out as
 * FX-like Python, or as DOT; 1 on success, else 0 with the reason on err. */
int program_print_graph(case_state *cs, int dot, FILE *out, FILE *err);
cmd_result cmd_input(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_trace(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_ops(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_placeholders(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_shape(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_eager(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_run(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_layouts(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_aot(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_mutations(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_outputs(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_mode(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_agree(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);

/* Tensor inputs and guards at call time (battery_tensor.c). */
cmd_result cmd_tensor(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_subclass(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_refakify(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);
cmd_result cmd_call(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why);

#endif /* SG_CLI_BATTERY_H */
