/* shapeguard tool: tensor inputs of batteries (tensor, subclass, call) and
 * the demo subclass kinds. */
#ifndef SG_CLI_TENSOR_H
#define SG_CLI_TENSOR_H

#include "cli.h"

#define CLI_MAX_ATTRS 8

/* A tensor, subclass or integer written in a battery line:
 *   NAME sizes=[...] [strides=[...]] [offset=K] [dynamic=P|[P0, ...]]
 *        [rangeI=[LO, HI]] [kind=K] [ctx=INT] [ATTR={...}]...
 * or NAME=INT. It is also the object behind a demo subclass value. */
typedef struct cli_tval {
    char *name;
    int is_int;
    int64_t ival;
    const sg_subclass_kind *kind;
    size_t ndim;
    int64_t sizes[SG_MAX_DIMS];
    int has_strides;
    int64_t strides[SG_MAX_DIMS];
    int64_t offset;
    int has_ctx;
    int64_t ctxv;
    int has_policy; /* dynamic= or a range was given */
    int dtype;         /* dtype= of a program input (sg_dtype; float64 by default) */
    int requires_grad; /* 0, 1 (requires_grad: a non-leaf), 2 (requires_grad=leaf) */
    /* requires_grad (a non-leaf): the program takes base.clone(), laid out as
       clone lays it out (strides, offset above); the base's layout as written
       (its values' positions) */
    int has_base;
    int64_t base_strides[SG_MAX_DIMS], base_offset;
    sg_dim_spec specs[SG_MAX_DIMS];
    size_t nattrs; /* as written */
    struct cli_tval *attrs[CLI_MAX_ATTRS];
    /* built by cli_tval_finish: the value, its flattened inner tensors (kind
     * order, required ones derived from the outer when absent) and its context */
    sg_tensor_value tv;
    size_t nflat;
    const char *flat_names[CLI_MAX_ATTRS];
    sg_tensor_value flat_inner[CLI_MAX_ATTRS];
    struct cli_tval *flat[CLI_MAX_ATTRS];
    sg_tensor_context tc;
    size_t nctx;
    const char *ctx_names[CLI_MAX_ATTRS];
    const sg_tensor_context *ctx_inner[CLI_MAX_ATTRS];
} cli_tval;

/* Parse one value from the n bytes at text; kinds_allowed: kind= is
 * accepted. NULL (why set) on a malformed text. Free with cli_tval_free. */
cli_tval *cli_tval_parse(sg_ctx *ctx, const char *text, size_t n, int kinds_allowed, cli_str *why);
void cli_tval_free(cli_tval *t);

/* The demo kinds (demo_subclass.c). */
const sg_subclass_kind *cli_subclass_kind(const char *name, size_t n);
/* The attributes of kind k in flatten order (the first *nrequired are
 * required; a required one that a value does not give is derived from the
 * outer tensor). Returns their number. */
size_t cli_subclass_attrs(const sg_subclass_kind *k, const char *const **names, size_t *nrequired);
int cli_subclass_has_ctx(const sg_subclass_kind *k);

/* ---- what the demo (demo.c) shares with the battery commands ---- */

struct case_state; /* battery.h */

/* Check the guards of the case, compiled for call time, against the
 * concrete inputs args ("INPUT; INPUT; ...", as for `call`). Returns 1 with
 * *pass set (and, when reason is not NULL, the reason of a failure appended
 * to it: the first failing check in Dynamo's words), or 0 with why set (bad
 * input; "error KIND ..." when the check itself failed). */
int case_call(struct case_state *cs, const char *args, int *pass, cli_str *reason, cli_str *why);
/* Check the guard set of in against vals[0 .. ni): 1 with *pass set (and,
 * when it fails and reason is not NULL, the failing guard's text in
 * reason), or 0 with why set (a guard set that does not build, an input
 * that cannot be checked). */
int cli_check_guards(sg_ctx *ctx, sg_inputs *in, const sg_input_value *vals, size_t ni, int *pass,
                     cli_str *reason, cli_str *why);

/* As case_print_guards (battery.h), each line prefixed with indent. */
int case_write_guards(struct case_state *cs, FILE *out, FILE *err, const char *indent);

/* The shape-environment part of `shapeguard demo`: prints its lines to
 * stdout; returns 0, or 1 if a step went wrong (the line says why). */
int cli_demo_shapes(void);
/* The demo's last part: a program captured into a graph (demo_graph.c). */
int cli_demo_graph(void);

#endif /* SG_CLI_TENSOR_H */
