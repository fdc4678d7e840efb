/* shapeguard, the command-line tool: what main.c and battery.c share.
 * The tool uses the public API only (<shapeguard.h>). */
#ifndef SG_CLI_H
#define SG_CLI_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <shapeguard.h>

/* ---- memory: the tool gives up with a message when memory runs out ---- */

void *cli_xmalloc(size_t n);
void *cli_xcalloc(size_t n, size_t size); /* zeroed */
void *cli_xrealloc(void *p, size_t n);
char *cli_xstrndup(const char *s, size_t n);

/* ---- a growable NUL-terminated string ---------------------------------- */

typedef struct cli_str {
    char *p;
    size_t n, cap;
} cli_str;

#define CLI_STR_INIT { NULL, 0, 0 }

void cli_str_addn(cli_str *s, const char *p, size_t n);
void cli_str_adds(cli_str *s, const char *p);
void cli_str_addf(cli_str *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The text so far ("" when nothing was added). */
const char *cli_str_get(const cli_str *s);
void cli_str_clear(cli_str *s);
void cli_str_free(cli_str *s);

/* Append e printed in format fmt, or "<cannot print: KIND>". */
void cli_str_add_expr(cli_str *s, sg_ctx *ctx, const sg_expr *e, sg_format fmt);
/* Append "error KIND", then " (MESSAGE)" when ctx holds a message for st. */
void cli_str_add_error(cli_str *s, sg_ctx *ctx, sg_status st);

/* ---- text helpers ------------------------------------------------------- */

int cli_is_blank(char c);
/* The next item of *p (blanks skipped): a run of non-blanks in which
 * brackets and braces nest, so "range=[2, 10]" and "data={sizes=[4]}" are
 * one item each; *w and *n are the item, *p moves past it. 0 at the end. */
int cli_next_item(const char **p, const char **w, size_t *n);
/* Trim blanks (space, tab, CR, VT, FF) from both ends of [*p, *p + *n). */
void cli_trim(const char **p, size_t *n);
/* 1 if [p, p + n) is exactly the NUL-terminated word w. */
int cli_eq(const char *p, size_t n, const char *w);
/* The status whose sg_status_kind() is the n bytes at kind; 0 if none is
 * (SG_OK, "ok", is not an error kind and also gives 0). */
sg_status cli_kind_status(const char *kind, size_t n);

/* ---- symbol bindings NAME=INT ------------------------------------------ */

typedef struct cli_bindings {
    const sg_expr **syms, **vals;
    size_t n, cap;
} cli_bindings;

#define CLI_BINDINGS_INIT { NULL, NULL, 0, 0 }

/* Parse one binding NAME=INT from the n bytes at text (blanks around the
 * name and the value are allowed; the value is a decimal integer of any
 * size) and add it. Errors: SG_ESYNTAX (malformed, or NAME bound already),
 * with the message in ctx. */
sg_status cli_bindings_add(cli_bindings *b, sg_ctx *ctx, const char *text, size_t n);
void cli_bindings_free(cli_bindings *b);

/* ---- batteries ------------------------------------------------------------ */

/* Run the battery files in order, print one line per failed expectation and
 * then "N passed, N failed" to out. Returns 0 when every expectation holds,
 * else 1. */
int cli_run_batteries(size_t nfiles, char *const *files, FILE *out);

/* Run one battery file (failed expectations go to err, without the count
 * line), then print the guards of its last case to out in PyTorch's text,
 * one a line. Returns 0 when every expectation held, else 1. */
int cli_battery_guards(const char *file, FILE *out, FILE *err);
/* Run a battery file; then trace the program of its last case and print its
 * graph (FX-like Python, or Graphviz DOT when dot is set) to out. Returns 0,
 * or 1 when an expectation failed or there is no graph to print. */
int cli_battery_trace(const char *file, int dot, FILE *out, FILE *err);

#endif /* SG_CLI_H */
