/* Battery commands over programs (doc/program.md): program blocks,
 * `input NAME = EXPR`, trace, ops, placeholders, shape, eager and run. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "battery.h"
#include "tensor.h"

/* No graph value (what front.h's sg_walk_local and the like give where
 * there is no tensor; sg_tracer_input_view's `of` for none). */
#define NOVAL ((sg_value)UINT32_MAX)

/* A `tensor` line as the program's values need it. */
typedef struct pdecl {
    char *name;
    int dtype;
    int requires_grad; /* as the tracer takes it: 0, 1 (requires_grad=leaf), 2 (requires_grad: a clone) */
    size_t ndim;
    int64_t sizes[SG_MAX_DIMS], strides[SG_MAX_DIMS], offset;
    int has_strides; /* strides= given (else contiguous) */
    int has_base;     /* a clone (requires_grad): the base's layout as written, its values' positions */
    int64_t base_strides[SG_MAX_DIMS], base_offset;
    const char *kind; /* a `subclass` input: its kind's name ("two"); NULL: a plain tensor */
    int inner_given;  /* a subclass line gave inner tensors of its own (ATTR={...}) */
} pdecl;

typedef struct alias_decl {
    char *name, *expr;
} alias_decl;

struct cli_program {
    sg_program *prog;
    pdecl *decls;
    size_t ndecls;
    alias_decl *aliases;
    size_t naliases;
    sg_tracer *tracer;  /* after trace */
    sg_walk *walk;      /* the trace's walk */
    sg_status traced;   /* the trace's outcome (SG_OK when it worked) */
    int has_trace;
    char *trace_msg;
    size_t line;        /* the `program` line of the block (0: none yet) */
    int used;           /* a command used the program */
    long *same_as;      /* after trace, per parameter: the one whose very object it is, or -1 */
    sg_value *valsb;    /* after trace, per parameter: a TwoTensor's inner b placeholder, or NOVAL */
    sg_aot *aot;        /* the compiled program (after aot, or the first command that needs it) */
    int has_aot;
    sg_aot_options aot_opts; /* what it was compiled with */
    sg_status aot_st;   /* the compilation's outcome */
    char *aot_msg;
};

static struct cli_program *program_of(case_state *cs)
{
    if (!cs->program) {
        cs->program = cli_xmalloc(sizeof *cs->program);
        memset(cs->program, 0, sizeof *cs->program);
    }
    return cs->program;
}

void program_free(struct cli_program *p)
{
    if (!p)
        return;
    sg_aot_free(p->aot);
    free(p->aot_msg);
    free(p->same_as);
    free(p->valsb);
    sg_walk_free(p->walk);
    sg_tracer_free(p->tracer);
    sg_program_free(p->prog);
    for (size_t i = 0; i < p->ndecls; i++)
        free(p->decls[i].name);
    free(p->decls);
    for (size_t i = 0; i < p->naliases; i++) {
        free(p->aliases[i].name);
        free(p->aliases[i].expr);
    }
    free(p->aliases);
    free(p->trace_msg);
    free(p);
}

void program_note_tensor(case_state *cs, const cli_tval *t)
{
    struct cli_program *p = program_of(cs);
    p->decls = cli_xrealloc(p->decls, (p->ndecls + 1) * sizeof *p->decls);
    pdecl *d = &p->decls[p->ndecls++];
    memset(d, 0, sizeof *d);
    d->name = cli_xstrndup(t->name, strlen(t->name));
    d->dtype = t->dtype;
    d->requires_grad = t->requires_grad == 2 ? 1 : t->requires_grad == 1 ? 2 : 0;
    d->ndim = t->ndim;
    memcpy(d->sizes, t->sizes, t->ndim * sizeof *t->sizes);
    d->has_strides = t->has_strides;
    if (t->has_strides)
        memcpy(d->strides, t->strides, t->ndim * sizeof *t->strides);
    d->offset = t->offset;
    d->has_base = t->has_base;
    if (t->has_base) {
        memcpy(d->base_strides, t->base_strides, t->ndim * sizeof *t->base_strides);
        d->base_offset = t->base_offset;
    }
    d->kind = t->kind ? t->kind->name : NULL;
    d->inner_given = t->nattrs > 0;
}

static const pdecl *find_decl(const struct cli_program *p, const char *name)
{
    for (size_t i = 0; i < p->ndecls; i++)
        if (!strcmp(p->decls[i].name, name))
            return &p->decls[i];
    return NULL;
}

/* Is name a parameter of p's program (*k: its index, k may be NULL)? */
static int param_index(const struct cli_program *p, const char *name, size_t *k)
{
    for (size_t i = 0; i < sg_program_nparams(p->prog); i++)
        if (!strcmp(sg_program_param(p->prog, i), name)) {
            if (k)
                *k = i;
            return 1;
        }
    return 0;
}

static const alias_decl *find_alias(const struct cli_program *p, const char *name)
{
    for (size_t i = 0; i < p->naliases; i++)
        if (!strcmp(p->aliases[i].name, name))
            return &p->aliases[i];
    return NULL;
}

cmd_result program_block(case_state *cs, const char *src, size_t first, cli_str *why)
{
    struct cli_program *p = program_of(cs);
    if (p->prog || p->has_trace) {
        cli_str_adds(why, "a case has at most one program");
        return CMD_FAIL;
    }
    p->line = first ? first - 1 : 0;
    /* lines of the battery file in errors and on graph nodes */
    sg_status st = sg_program_new(cs->ctx, &p->prog, src, strlen(src), first > UINT32_MAX ? 1 : (uint32_t)first);
    if (st) { /* kept as the outcome of trace, eager and run */
        const char *m = sg_ctx_last_error_msg(cs->ctx);
        p->prog = NULL;
        p->has_trace = 1;
        p->traced = st;
        p->trace_msg = cli_xstrndup(m, strlen(m));
    }
    return CMD_QUIET;
}

/* input NAME = EXPR */
cmd_result cmd_input(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    (void)ctx;
    const char *eq = strchr(ln->args, '=');
    if (!eq) {
        cli_str_adds(why, "expected input NAME = EXPR");
        return CMD_FAIL;
    }
    const char *name = ln->args, *expr = eq + 1;
    size_t nn = (size_t)(eq - name), en = strlen(expr);
    cli_trim(&name, &nn);
    cli_trim(&expr, &en);
    if (!nn || !en || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") < nn) {
        cli_str_adds(why, "expected input NAME = EXPR");
        return CMD_FAIL;
    }
    struct cli_program *p = program_of(cs);
    p->aliases = cli_xrealloc(p->aliases, (p->naliases + 1) * sizeof *p->aliases);
    p->aliases[p->naliases].name = cli_xstrndup(name, nn);
    p->aliases[p->naliases++].expr = cli_xstrndup(expr, en);
    return CMD_QUIET;
}

/* The case's program (parsed or not), or NULL (why set). */
static struct cli_program *need_program(case_state *cs, cli_str *why)
{
    if (!cs->program || (!cs->program->prog && !cs->program->has_trace)) {
        cli_str_adds(why, "no program in this case");
        return NULL;
    }
    cs->program->used = 1;
    return cs->program;
}

size_t program_unused(const case_state *cs, sg_status *parse_status, const char **parse_error)
{
    const struct cli_program *p = cs->program;
    *parse_status = SG_OK;
    *parse_error = NULL;
    if (!p || p->used || !p->line || (!p->prog && !p->has_trace))
        return 0;
    if (!p->prog && p->traced) {
        *parse_status = p->traced;
        *parse_error = p->trace_msg ? p->trace_msg : "";
    }
    return p->line;
}

/* The int expression of the `backed` input named name (its source is
 * name, or L['name']), or NULL. */
static sg_status find_input(case_state *cs, const char *name, long *index)
{
    sg_inputs *in = cs->inputs;
    *index = -1;
    if (!in)
        return SG_OK;
    long i = sg_inputs_find(in, name);
    const sg_source *s;
    if (i < 0) {
        sg_status st = sg_source_local(cs->ctx, &s, name);
        if (st)
            return st;
        i = sg_inputs_find(in, sg_source_name(s));
    }
    *index = i;
    return SG_OK;
}

/* The int expression of the `backed` input named name, or NULL (none, or
 * memory ran out: the context says which). */
static const sg_expr *int_input(case_state *cs, const char *name)
{
    long i;
    if (find_input(cs, name, &i) || i < 0)
        return NULL;
    return sg_inputs_int_value(cs->inputs, (size_t)i);
}

/* ---- concrete inputs ---- */

/* What a run line says of one input: `NAME=INT`, or `NAME` with any of
 * sizes=[...], strides=[...] and offset=K (an override describes the
 * tensor afresh: strides contiguous and offset 0 unless given). */
typedef struct override {
    const char *name;
    size_t nlen;
    int is_int; /* NAME=INT */
    int64_t value;
    int has_sizes, has_strides, has_offset;
    size_t ndim, nstrides;
    int64_t sizes[SG_MAX_DIMS], strides[SG_MAX_DIMS], offset;
} override;

/* The arguments of an eager or run line: [S] then the overrides. */
typedef struct run_args {
    int64_t seed;
    override *ov;
    size_t nov;
    cli_str limit; /* the first integer beyond int64 (what the run gives as error limit) */
} run_args;

static void run_args_free(run_args *a)
{
    free(a->ov);
    cli_str_free(&a->limit);
    memset(a, 0, sizeof *a);
}

typedef struct concrete {
    size_t n;                 /* parameters (entries after them: the declared tensors no parameter takes) */
    size_t nall;              /* parameters and those tensors */
    const char **names;       /* every entry's name */
    sg_tensor **t;            /* a tensor per parameter, or NULL (a TwoTensor: its inner a) */
    sg_tensor **tb;           /* a TwoTensor's inner b, or NULL */
    int64_t *ints;            /* an int parameter's value */
    int *is_int;
    long *same_as;            /* the parameter whose very object it is, or -1 */
    int *rg;                  /* requires_grad as the tracer takes it */
    uint64_t *version;        /* version counters at the start */
} concrete;

static void concrete_free(concrete *c)
{
    for (size_t i = 0; i < c->nall; i++) {
        sg_tensor_unref(c->t[i]);
        sg_tensor_unref(c->tb[i]);
    }
    free(c->names);
    free(c->t);
    free(c->tb);
    free(c->ints);
    free(c->is_int);
    free(c->same_as);
    free(c->rg);
    free(c->version);
    memset(c, 0, sizeof *c);
}

/* The value formula of doc/program.md: element at storage index i of input
 * k with seed S is m = (7 * (i + 101 * S) + 13 * k) mod 17 (mod 3 for bool),
 * computed exactly for every i, k and S (each product reduced first, so
 * nothing overflows int64); inner tensor j of a subclass input adds 29 * j
 * to 13 * k. */
static double formula(int dtype, int64_t i, size_t k, size_t j, int64_t seed)
{
    int64_t q = dtype == SG_BOOL ? 3 : 17;
    int64_t si = i % q, ss = seed % q, sk = (int64_t)(k % (size_t)q), sj = (int64_t)(j % (size_t)q);
    if (si < 0)
        si += q;
    if (ss < 0)
        ss += q;
    int64_t m = (7 * si + 7 * ((101 * ss) % q) + 13 * sk + 29 * sj) % q;
    if (dtype == SG_BOOL)
        return m == 0;
    return dtype == SG_INT64 ? (double)(m - 8) : (double)(m - 8) / 4;
}

/* Fail with status s, the message naming input `name`, followed by the
 * context's own message when it has one for s. Returns s. */
static sg_status input_error(sg_ctx *ctx, sg_status s, const char *name)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s", sg_ctx_last_error(ctx) == s ? sg_ctx_last_error_msg(ctx) : "");
    return sg_ctx_set_error(ctx, s, "input %s: %s", name, msg[0] ? msg : sg_status_kind(s));
}

/* "sizes=[2, 3] strides=[3, 1] offset=0" (strides NULL: left out), for messages. */
static void add_layout(cli_str *s, size_t ndim, const int64_t *sizes, const int64_t *strides, int64_t offset)
{
    for (int part = 0; part < 2; part++) {
        const int64_t *v = part ? strides : sizes;
        if (!v)
            continue;
        cli_str_adds(s, part ? " strides=[" : "sizes=[");
        for (size_t i = 0; i < ndim; i++)
            cli_str_addf(s, "%s%lld", i ? ", " : "", (long long)v[i]);
        cli_str_adds(s, "]");
    }
    if (strides)
        cli_str_addf(s, " offset=%lld", (long long)offset);
}

/* Fail with SG_ELIMIT: input name's layout (what) passes int64. */
static sg_status layout_limit(sg_ctx *ctx, const char *name, const char *what, size_t ndim, const int64_t *sizes,
                              const int64_t *strides, int64_t offset)
{
    cli_str s = CLI_STR_INIT;
    add_layout(&s, ndim, sizes, strides, offset);
    sg_status st = sg_ctx_set_error(ctx, SG_ELIMIT, "input %s: %s: %s beyond int64", name, cli_str_get(&s), what);
    cli_str_free(&s);
    return st;
}


/* *t (a base as written) replaced by its clone laid out as d says (the
 * clone's layout, offset 0, a storage of its own elements). */
static sg_status clone_into(sg_ctx *ctx, const pdecl *d, sg_tensor **t)
{
    int64_t numel = sg_tensor_numel(*t), strides[SG_MAX_DIMS], acc = 1;
    for (size_t i = d->ndim; i-- > 0;) { /* d's strides, or contiguous (products of max(size, 1)) */
        strides[i] = d->has_strides ? d->strides[i] : acc;
        acc *= d->sizes[i] > 1 ? d->sizes[i] : 1;
    }
    sg_tensor *flat, *c;
    sg_status st = sg_tensor_new(ctx, &flat, (sg_dtype)d->dtype, 1, &numel);
    if (!st) {
        st = sg_tensor_view(ctx, &c, flat, d->ndim, d->sizes, strides, 0);
        sg_tensor_unref(flat);
    }
    if (st)
        return st;
    for (int64_t i = 0; i < numel; i++) /* element i (row-major) of the base */
        sg_tensor_set_f(c, i, sg_tensor_get_f(*t, i));
    sg_tensor_unref(*t);
    *t = c;
    return SG_OK;
}

/* Build a declared tensor input (parameter k; j: the inner tensor of a
 * subclass input, else 0) at seed S: a storage just large enough, filled
 * from the formula, and the input's view of it. Every
 * size, stride and offset is checked before it is used: SG_EINVAL (a
 * negative one, strides of another rank), SG_ELIMIT (a layout whose
 * positions or element count pass int64, more elements than memory holds),
 * SG_ENOMEM (memory that cannot be had); each message names the input. */
static sg_status make_tensor(sg_ctx *ctx, const pdecl *d, const override *ov, size_t k, size_t j, int64_t seed,
                             sg_tensor **out)
{
    const char *name = d->name;
    size_t ndim = d->ndim, nstrides = d->has_strides ? d->ndim : 0;
    const int64_t *sizes = d->sizes, *given = d->strides;
    int64_t strides[SG_MAX_DIMS], offset = d->offset;
    int has_strides = d->has_strides;
    bool clone = d->has_base && !ov; /* the base as written, then its clone in d's layout */
    if (clone) {
        nstrides = ndim;
        given = d->base_strides;
        offset = d->base_offset;
        has_strides = 1;
    }
    if (ov) { /* described afresh */
        if (ov->has_sizes) {
            ndim = ov->ndim;
            sizes = ov->sizes;
        }
        has_strides = ov->has_strides;
        nstrides = ov->nstrides;
        given = ov->strides;
        offset = ov->has_offset ? ov->offset : 0;
    }
    if (has_strides && nstrides != ndim)
        return sg_ctx_set_error(ctx, SG_EINVAL, "input %s: %zu sizes but %zu strides", name, ndim, nstrides);
    for (size_t i = 0; i < ndim; i++) {
        if (sizes[i] < 0)
            return sg_ctx_set_error(ctx, SG_EINVAL, "input %s: size %zu is negative (%lld)", name, i,
                                    (long long)sizes[i]);
        if (has_strides && given[i] < 0)
            return sg_ctx_set_error(ctx, SG_EINVAL, "input %s: stride %zu is negative (%lld)", name, i,
                                    (long long)given[i]);
    }
    if (offset < 0)
        return sg_ctx_set_error(ctx, SG_EINVAL, "input %s: the storage offset is negative (%lld)", name,
                                (long long)offset);
    bool empty = false;
    for (size_t i = 0; i < ndim; i++)
        empty |= sizes[i] == 0;
    if (has_strides) {
        memcpy(strides, given, ndim * sizeof *strides);
    } else { /* contiguous: PyTorch's strides, products of max(size, 1) */
        int64_t st = 1;
        for (size_t i = ndim; i-- > 0;) {
            strides[i] = st;
            if (i && __builtin_mul_overflow(st, sizes[i] > 1 ? sizes[i] : 1, &st))
                return layout_limit(ctx, name, "its contiguous strides are", ndim, sizes, NULL, 0);
        }
        if (!empty && ndim && __builtin_mul_overflow(strides[0], sizes[0], &st))
            return layout_limit(ctx, name, "its element count is", ndim, sizes, NULL, 0);
    }
    /* the storage: up to the last position the view reaches (the offset
     * alone for an empty view, as PyTorch sizes it) */
    int64_t numel = offset;
    if (!empty) {
        int64_t last = offset, span;
        bool over = false;
        for (size_t i = 0; i < ndim && !over; i++)
            over = __builtin_mul_overflow(sizes[i] - 1, strides[i], &span) || __builtin_add_overflow(last, span, &last);
        if (over || __builtin_add_overflow(last, 1, &numel))
            return layout_limit(ctx, name, "its storage reaches positions", ndim, sizes, strides, offset);
    }
    sg_tensor *flat, *t; /* the storage's every element from the formula, then the input's view of it */
    sg_status st = sg_tensor_new(ctx, &flat, (sg_dtype)d->dtype, 1, &numel);
    if (st == SG_ENOMEM) /* an allocation that fails is said, never fatal */
        return sg_ctx_set_error(ctx, SG_ENOMEM, "input %s: out of memory for a storage of %lld elements", name,
                                (long long)numel);
    if (st)
        return input_error(ctx, st, name);
    for (int64_t i = 0; i < numel; i++)
        sg_tensor_set_f(flat, i, formula(d->dtype, i, k, j, seed));
    st = sg_tensor_view(ctx, &t, flat, ndim, sizes, strides, offset);
    sg_tensor_unref(flat);
    if (!st && clone)
        st = clone_into(ctx, d, &t);
    if (st)
        return input_error(ctx, st, name);
    sg_tensor_set_requires_grad(t, d->requires_grad != 0);
    *out = t;
    return SG_OK;
}

/* Build declared input k into c (a `subclass` of kind two: both inner
 * tensors, each laid out as the outer one). Errors: those of make_tensor,
 * SG_EUNSUPPORTED (another kind, inner tensors of their own). */
static sg_status make_decl(sg_ctx *ctx, const pdecl *d, const override *ov, size_t k, int64_t seed, concrete *c)
{
    c->rg[k] = d->requires_grad;
    if (d->kind && (strcmp(d->kind, "two") || d->inner_given))
        return sg_ctx_set_error(ctx, SG_EUNSUPPORTED, "input %s: unsupported in a program: %s", d->name,
                                d->inner_given ? "inner tensors of their own (ATTR={...})" : "a subclass kind other than two");
    sg_status st = make_tensor(ctx, d, ov, k, 0, seed, &c->t[k]);
    if (!st && d->kind)
        st = make_tensor(ctx, d, ov, k, 1, seed, &c->tb[k]);
    return st;
}

/* Give the walk w input name: c's entry k (an int, a tensor, a TwoTensor). */
static sg_status walk_input(sg_walk *w, const char *name, const concrete *c, size_t k)
{
    if (c->is_int[k])
        return sg_walk_input_int(w, name, c->ints[k]);
    if (c->tb[k]) {
        sg_tensor *inner[2] = {c->t[k], c->tb[k]};
        return sg_walk_input_subclass_tensors(w, name, "two", inner, 2);
    }
    return sg_walk_input_tensor(w, name, c->t[k], c->rg[k]); /* the run takes its own reference */
}

/* Run `return EXPR` eagerly over the inputs built so far (*ip, *w: the
 * program and its walk, freed by the caller, even on an error). */
static sg_status walk_expr(sg_ctx *ctx, struct cli_program *p, const char *expr, const concrete *c, sg_program **ip,
                           sg_walk **w)
{
    cli_str src = CLI_STR_INIT; /* def _input_(<the inputs built>): return EXPR */
    size_t nbuilt = 0;
    cli_str_adds(&src, "def _input_(");
    for (size_t j = 0; j < c->nall; j++)
        if (c->t[j] || c->is_int[j] || c->same_as[j] >= 0)
            cli_str_addf(&src, "%s%s", nbuilt++ ? ", " : "", c->names[j]);
    cli_str_addf(&src, "):\n    return %s\n", expr);
    *ip = NULL;
    *w = NULL;
    sg_status st = sg_program_new(ctx, ip, cli_str_get(&src), src.n, 1);
    cli_str_free(&src);
    if (!st)
        st = sg_walk_eager(*ip, w);
    for (size_t j = 0; j < c->nall && !st; j++)
        if (c->is_int[j] || c->t[j])
            st = walk_input(*w, c->names[j], c, j);
    for (size_t j = 0; j < c->n && !st; j++)
        if (c->same_as[j] >= 0)
            st = sg_walk_input_same(*w, sg_program_param(p->prog, j), sg_program_param(p->prog, (size_t)c->same_as[j]));
    return st ? st : sg_walk_run(*w);
}

/* Evaluate `input NAME = EXPR` (parameter k) eagerly over the inputs
 * built so far: its tensor, or the parameter whose very object it is. */
static sg_status eval_alias(sg_ctx *ctx, struct cli_program *p, const alias_decl *a, size_t k, concrete *c,
                            cli_str *why)
{
    sg_program *ip = NULL;
    sg_walk *w = NULL;
    sg_status st = walk_expr(ctx, p, a->expr, c, &ip, &w);
    for (size_t j = 0; j < c->n && !st && c->same_as[k] < 0; j++)
        if (j != k && sg_walk_output_is(w, 0, sg_program_param(p->prog, j)))
            c->same_as[k] = c->same_as[j] >= 0 ? c->same_as[j] : (long)j;
    if (!st && c->same_as[k] < 0) {
        uint32_t v = sg_walk_output_value(w, 0), vb = v == NOVAL ? NOVAL : sg_walk_inner(w, v, 1);
        sg_tensor *x = v == NOVAL ? NULL : sg_run_tensor(sg_walk_eager_run(w), v);
        if (!x)
            st = sg_ctx_set_error(ctx, SG_ETYPE, "input %s = %s: not a tensor", a->name, a->expr);
        else {
            c->t[k] = x;
            sg_tensor_ref(x);
            if (vb != NOVAL && (c->tb[k] = sg_run_tensor(sg_walk_eager_run(w), vb))) /* a TwoTensor */
                sg_tensor_ref(c->tb[k]);
            c->rg[k] = sg_tensor_requires_grad(x) ? 2 : 0; /* what requires grad here is a view: no leaf */
        }
    }
    if (st)
        cli_str_addf(why, "input %s = %s: ", a->name, a->expr);
    sg_walk_free(w);
    sg_program_free(ip);
    return st;
}

/* The input objects of a run: declared tensors from the formulas and
 * backed ints from their hints (k counting the parameters), each as the
 * overrides ov[0 .. nov) describe it, then the `input` ones in the order
 * they are declared, evaluated eagerly. 0 with why set on failure; where an
 * input cannot be built (a layout beyond int64 or memory, a hint beyond
 * int64, an `input` expression that fails), *run_err (if not NULL) is its
 * status: the run's outcome, its message naming the input. */
static int build_inputs(case_state *cs, struct cli_program *p, int64_t seed, const override *ov, size_t nov,
                        concrete *c, sg_status *run_err, cli_str *why)
{
    sg_ctx *ctx = cs->ctx;
    size_t n = sg_program_nparams(p->prog), all = n;
    for (size_t i = 0; i < p->ndecls; i++) /* declared tensors no parameter takes: bases of `input` views */
        all += !param_index(p, p->decls[i].name, NULL);
    memset(c, 0, sizeof *c);
    c->n = n;
    c->nall = all;
    c->names = cli_xmalloc((all + 1) * sizeof *c->names);
    c->t = cli_xmalloc((all + 1) * sizeof *c->t);
    c->tb = cli_xmalloc((all + 1) * sizeof *c->tb);
    c->ints = cli_xmalloc((all + 1) * sizeof *c->ints);
    c->is_int = cli_xmalloc((all + 1) * sizeof *c->is_int);
    c->same_as = cli_xmalloc((all + 1) * sizeof *c->same_as);
    c->version = cli_xmalloc((all + 1) * sizeof *c->version);
    c->rg = cli_xmalloc((all + 1) * sizeof *c->rg);
    for (size_t k = 0; k < all; k++) {
        c->t[k] = c->tb[k] = NULL;
        c->is_int[k] = 0;
        c->same_as[k] = -1;
        c->rg[k] = 0;
        c->names[k] = k < n ? sg_program_param(p->prog, k) : NULL;
    }
    for (size_t i = 0, x = n; i < p->ndecls; i++)
        if (!param_index(p, p->decls[i].name, NULL))
            c->names[x++] = p->decls[i].name;
    sg_status st = SG_OK;
    /* those tensors first, numbered after the parameters (their k in the value formula) */
    for (size_t k = n; k < all && !st; k++) {
        const pdecl *d = find_decl(p, c->names[k]);
        const override *o = NULL;
        for (size_t i = 0; i < nov; i++)
            if (cli_eq(ov[i].name, ov[i].nlen, d->name))
                o = &ov[i];
        st = make_decl(ctx, d, o, k, seed, c);
    }
    for (size_t k = 0; k < n && !st; k++) {
        const char *name = sg_program_param(p->prog, k);
        const pdecl *d = find_decl(p, name);
        const override *o = NULL;
        for (size_t i = 0; i < nov; i++)
            if (cli_eq(ov[i].name, ov[i].nlen, name))
                o = &ov[i];
        if (d) {
            st = make_decl(ctx, d, o, k, seed, c);
        } else if (!find_alias(p, name)) {
            const sg_expr *e = int_input(cs, name), *hint = NULL;
            int64_t v = 0;
            if (!e || sg_env_hint(case_env(cs, why), &hint, e)) {
                cli_str_addf(why, "parameter %s has no input (tensor, backed or input)", name);
                concrete_free(c);
                return 0;
            }
            if (o) {
                v = o->value;
            } else if (!sg_expr_get_si(hint, &v)) { /* a run's ints are int64 */
                char *h = NULL;
                sg_status ps = sg_print(ctx, &h, hint, SG_FMT_SG);
                st = sg_ctx_set_error(ctx, SG_ELIMIT, "input %s: its hint %s is beyond int64 (n=INT on the line "
                                                      "gives another value)", name, ps ? "" : h);
                sg_free(h);
            }
            c->is_int[k] = 1;
            c->ints[k] = v;
        }
    }
    for (size_t i = 0; i < p->naliases && !st; i++) {
        size_t k = 0;
        while (k < n && strcmp(sg_program_param(p->prog, k), p->aliases[i].name))
            k++;
        if (k < n) /* an input no parameter takes is not built */
            st = eval_alias(ctx, p, &p->aliases[i], k, c, why);
    }
    if (st) { /* the run's own outcome (an input it cannot build) */
        cli_str_add_error(why, ctx, st);
        if (run_err)
            *run_err = st;
        concrete_free(c);
        return 0;
    }
    for (size_t k = 0; k < n; k++)
        c->version[k] = c->t[k] ? sg_tensor_version(c->t[k]) : 0;
    return 1;
}

/* An integer written in the n bytes at s (an optional sign, then decimal
 * digits): 1 with *out set; 0 when the text is no integer; -1 when it is an
 * integer beyond int64, which a run cannot take. */
static int read_int_word(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (n && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == n)
        return 0;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    int big = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        unsigned dig = (unsigned)(s[i] - '0');
        if (big || v > (lim - dig) / 10)
            big = 1;
        else
            v = v * 10 + dig;
    }
    if (big)
        return -1;
    *out = !neg ? (int64_t)v : v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    return 1;
}

/* Is the n bytes at s an identifier? */
static int is_name(const char *s, size_t n)
{
    if (!n || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") >= n;
}

/* The list [N, ...] in the n bytes at w (at most SG_MAX_DIMS items) into
 * out. 0 with why set when it is malformed; an item beyond int64 is noted
 * in a->limit (the first one only) and read as 0. */
static int read_run_list(run_args *a, const char *w, size_t n, const char *key, const override *o, int64_t *out,
                         size_t *count, cli_str *why)
{
    *count = 0;
    if (n < 2 || w[0] != '[' || w[n - 1] != ']') {
        cli_str_addf(why, "bad %s=%.*s for %.*s (a list [N, ...] of integers)", key, (int)n, w, (int)o->nlen, o->name);
        return 0;
    }
    const char *s = w + 1, *end = w + n - 1;
    while (s < end && cli_is_blank(*s))
        s++;
    if (s == end)
        return 1; /* [] */
    for (;;) {
        const char *c = memchr(s, ',', (size_t)(end - s));
        const char *stop = c ? c : end, *it = s;
        size_t len = (size_t)(stop - s);
        cli_trim(&it, &len);
        if (*count == SG_MAX_DIMS) {
            cli_str_addf(why, "%s= of %.*s: more than %d items", key, (int)o->nlen, o->name, SG_MAX_DIMS);
            return 0;
        }
        int r = read_int_word(it, len, &out[*count]);
        if (!r) {
            cli_str_addf(why, "bad integer '%.*s' in %s= of %.*s", (int)len, it, key, (int)o->nlen, o->name);
            return 0;
        }
        if (r < 0) {
            out[*count] = 0;
            if (!a->limit.n)
                cli_str_addf(&a->limit, "input %.*s: %s item %zu (%.*s) is beyond int64", (int)o->nlen, o->name, key,
                             *count, (int)len, it);
        }
        ++*count;
        if (!c)
            return 1;
        s = c + 1;
    }
}

/* [S] [NAME=INT | NAME [sizes=[...]] [strides=[...]] [offset=K]] ...: the
 * words are split at blanks outside brackets. 0 with why set on a line that
 * cannot be read: a word that is none of these, a key without a NAME
 * before it or given twice, a NAME with no key, a NAME given twice, an item
 * that is no integer. Integers beyond int64 are noted in a->limit. */
static int read_run_args(const char *args, run_args *a, cli_str *why)
{
    const char *p = args;
    override *cur = NULL;
    int first = 1;
    memset(a, 0, sizeof *a);
    for (;;) {
        while (cli_is_blank(*p))
            p++;
        if (!*p)
            break;
        const char *w = p;
        int depth = 0;
        while (*p && (depth || !cli_is_blank(*p))) {
            depth += (*p == '[') - (*p == ']' && depth);
            p++;
        }
        size_t n = (size_t)(p - w);
        const char *eq = memchr(w, '=', n);
        size_t kn = eq ? (size_t)(eq - w) : n;
        if (first && strspn(w, "0123456789") >= n) { /* the seed */
            if (read_int_word(w, n, &a->seed) < 0) {
                a->seed = 0;
                if (!a->limit.n)
                    cli_str_addf(&a->limit, "the seed %.*s is beyond int64", (int)n, w);
            }
            first = 0;
            continue;
        }
        first = 0;
        int is_key = eq && (cli_eq(w, kn, "sizes") || cli_eq(w, kn, "strides") || cli_eq(w, kn, "offset"));
        if (!is_name(w, kn)) {
            cli_str_addf(why, "cannot read '%.*s' (the words are [S], NAME=INT, and NAME followed by sizes=[...], "
                              "strides=[...] or offset=K)",
                         (int)n, w);
            return 0;
        }
        if (is_key) {
            if (!cur) {
                cli_str_addf(why, "%.*s= without an input NAME before it", (int)kn, w);
                return 0;
            }
            const char *v = eq + 1;
            size_t vn = n - kn - 1;
            int *has = w[0] == 's' && w[1] == 'i' ? &cur->has_sizes : w[0] == 's' ? &cur->has_strides : &cur->has_offset;
            if (*has) {
                cli_str_addf(why, "%.*s= given twice for %.*s", (int)kn, w, (int)cur->nlen, cur->name);
                return 0;
            }
            *has = 1;
            if (has == &cur->has_offset) {
                int r = read_int_word(v, vn, &cur->offset);
                if (!r) {
                    cli_str_addf(why, "bad offset=%.*s for %.*s (an integer)", (int)vn, v, (int)cur->nlen, cur->name);
                    return 0;
                }
                if (r < 0 && !a->limit.n)
                    cli_str_addf(&a->limit, "input %.*s: offset %.*s is beyond int64", (int)cur->nlen, cur->name,
                                 (int)vn, v);
            } else if (!read_run_list(a, v, vn, has == &cur->has_sizes ? "sizes" : "strides", cur,
                                      has == &cur->has_sizes ? cur->sizes : cur->strides,
                                      has == &cur->has_sizes ? &cur->ndim : &cur->nstrides, why)) {
                return 0;
            }
            continue;
        }
        if (cur && !cur->has_sizes && !cur->has_strides && !cur->has_offset) {
            cli_str_addf(why, "expected sizes=[...], strides=[...] or offset=K after '%.*s'", (int)cur->nlen, cur->name);
            return 0;
        }
        for (size_t i = 0; i < a->nov; i++)
            if (a->ov[i].nlen == kn && !memcmp(a->ov[i].name, w, kn)) {
                cli_str_addf(why, "input '%.*s' given twice", (int)kn, w);
                return 0;
            }
        a->ov = cli_xrealloc(a->ov, (a->nov + 1) * sizeof *a->ov);
        cur = &a->ov[a->nov++];
        memset(cur, 0, sizeof *cur);
        cur->name = w;
        cur->nlen = kn;
        if (eq) { /* NAME=INT */
            int r = read_int_word(eq + 1, n - kn - 1, &cur->value);
            if (!r) {
                cli_str_addf(why, "bad value '%.*s' for %.*s (NAME=INT)", (int)(n - kn - 1), eq + 1, (int)kn, w);
                return 0;
            }
            if (r < 0 && !a->limit.n)
                cli_str_addf(&a->limit, "input %.*s: %.*s is beyond int64", (int)kn, w, (int)(n - kn - 1), eq + 1);
            cur->is_int = 1;
            cur = NULL;
        }
    }
    if (cur && !cur->has_sizes && !cur->has_strides && !cur->has_offset) {
        cli_str_addf(why, "expected sizes=[...], strides=[...] or offset=K after '%.*s'", (int)cur->nlen, cur->name);
        return 0;
    }
    return 1;
}

/* ---- trace ---- */

/* The input before parameter k whose concrete tensor shares k's storage
 * (its graph value), or NOVAL. */
/* The graph input of an earlier parameter (before k) whose storage tensor
 * x (of parameter k) views: a plain one's (vals), or a TwoTensor's inner
 * a (vals) or b (valsb); NOVAL: none. */
static sg_value shared_storage_of(const concrete *c, const sg_value *vals, const sg_value *valsb, size_t k,
                                  const sg_tensor *x)
{
    for (size_t j = 0; j < k; j++) {
        if (c->same_as[j] >= 0)
            continue;
        if (c->t[j] && vals[j] != NOVAL && sg_tensor_same_storage(c->t[j], x))
            return vals[j];
        if (c->tb[j] && valsb[j] != NOVAL && sg_tensor_same_storage(c->tb[j], x))
            return valsb[j];
    }
    return NOVAL;
}

/* Is `input` parameter k (not the very object of another) a view of
 * another tensor: on a storage another parameter is on, or on a declared
 * tensor no parameter takes (its hidden base)? A TwoTensor's inner tensors
 * are then views of that tensor's. */
static bool declared_view(const concrete *c, size_t k)
{
    const sg_tensor *x = c->t[k];
    if (!x || c->same_as[k] >= 0)
        return false;
    for (size_t j = 0; j < c->nall; j++)
        if (j != k && (j >= c->n || c->same_as[j] < 0) &&
            ((c->t[j] && sg_tensor_same_storage(c->t[j], x)) || (c->tb[j] && sg_tensor_same_storage(c->tb[j], x))))
            return true;
    return false;
}

/* The declared tensor no parameter takes (an index of c from c->n) whose
 * storage `input` parameter k views, when no earlier parameter views that
 * storage (and, with beyond, k's elements are not all of it): its hidden
 * base, as PyTorch fakes it (source L['name']._base); or -1. A trace fakes
 * the base where it reaches beyond k's elements; the guards take the
 * base's value wherever it has one. */
static long hidden_base(const concrete *c, size_t k, int beyond)
{
    const sg_tensor *x = c->t[k];
    if (!x || c->tb[k] || c->same_as[k] >= 0)
        return -1;
    for (size_t j = 0; j < k; j++)
        if (c->same_as[j] < 0 && ((c->t[j] && sg_tensor_same_storage(c->t[j], x)) ||
                                  (c->tb[j] && sg_tensor_same_storage(c->tb[j], x))))
            return -1;
    int64_t reach = sg_tensor_offset(x) + 1;
    for (size_t d = 0; d < sg_tensor_ndim(x) && beyond; d++) {
        if (sg_tensor_size(x, d) == 0) { /* an empty view reaches nothing of its storage */
            reach = 0;
            break;
        }
        reach += (sg_tensor_size(x, d) - 1) * sg_tensor_stride(x, d);
    }
    if (beyond && reach >= sg_tensor_storage_numel(x))
        return -1;
    for (size_t j = c->n; j < c->nall; j++)
        if (c->t[j] && sg_tensor_same_storage(c->t[j], x))
            return (long)j;
    return -1;
}

/* The source L['name']._base. */
static sg_status base_source(sg_ctx *ctx, const char *name, const sg_source **out)
{
    const sg_source *src;
    sg_status st = sg_source_local(ctx, &src, name);
    return st ? st : sg_source_attr(ctx, out, src, "_base");
}

/* The layout of t into *tv, its sizes and strides kept at lay (2 *
 * SG_MAX_DIMS entries). */
static void layout_of(const sg_tensor *t, int64_t *lay, sg_tensor_value *tv)
{
    size_t nd = sg_tensor_ndim(t);
    for (size_t d = 0; d < nd; d++) {
        lay[d] = sg_tensor_size(t, d);
        lay[SG_MAX_DIMS + d] = sg_tensor_stride(t, d);
    }
    *tv = (sg_tensor_value){.ndim = nd, .sizes = lay, .strides = lay + SG_MAX_DIMS, .offset = sg_tensor_offset(t)};
}

/* The fake of concrete tensor x as the input of source src (fakified by
 * the case's inputs, its symbols bound for the case). */
static sg_status tensor_fake(case_state *cs, sg_inputs *in, const sg_source *src, const sg_tensor *x,
                             const sg_fake **out)
{
    int64_t lay[2 * SG_MAX_DIMS];
    sg_tensor_value tv;
    layout_of(x, lay, &tv);
    sg_status st = sg_inputs_tensor(in, src, &tv, NULL, out);
    if (!st && !case_bind_fake(cs, *out))
        st = sg_ctx_last_error(cs->ctx);
    return st;
}

/* The fakes of the inner tensors of TwoTensor parameter k (an `input`
 * one, source src), sources L['name'].a and .b, made from c's tensors, and
 * the subclass fake over them (*sub, pointing into inner). */
static sg_status two_fake(case_state *cs, sg_inputs *in, const sg_source *src, const concrete *c, size_t k,
                          const sg_fake *inner[2], sg_fake *sub)
{
    static const char *const names[2] = {"a", "b"};
    for (size_t j = 0; j < 2; j++) {
        const sg_source *is;
        sg_status st = sg_source_attr(cs->ctx, &is, src, names[j]);
        if (!st)
            st = tensor_fake(cs, in, is, j ? c->tb[k] : c->t[k], &inner[j]);
        if (st)
            return st;
    }
    *sub = (sg_fake){.ndim = inner[0]->ndim, .sizes = inner[0]->sizes, .strides = inner[0]->strides,
                     .offset = inner[0]->offset, .kind = cli_subclass_kind("two", 3), .ninner = 2, .names = names,
                     .inner = inner};
    return SG_OK;
}

static int do_trace(case_state *cs, struct cli_program *p, cli_str *why)
{
    if (p->has_trace) /* done, or the program did not parse */
        return 1;
    p->has_trace = 1;
    sg_ctx *ctx = cs->ctx;
    sg_env *env = case_env(cs, why);
    sg_inputs *in = env ? case_inputs(cs, why) : NULL;
    if (!in)
        return 0;
    concrete c;
    sg_status run_err = SG_OK;
    if (p->naliases && !build_inputs(cs, p, 0, NULL, 0, &c, &run_err, why)) {
        /* the inputs cannot be built: that is the trace's outcome too */
        p->traced = run_err ? run_err : sg_ctx_last_error(ctx) ? sg_ctx_last_error(ctx) : SG_EINVAL;
        p->trace_msg = cli_xstrndup(cli_str_get(why), why->n);
        return 0;
    }
    sg_status st = sg_tracer_new(env, &p->tracer);
    const char *lint = getenv("SG_LINT_SIZES"); /* the rules' folding checked (the random program tests) */
    if (!st && lint && *lint && strcmp(lint, "0"))
        sg_tracer_lint_sizes(p->tracer, 1);
    size_t n = sg_program_nparams(p->prog);
    sg_value *vals = cli_xmalloc((n + 1) * sizeof *vals), *valsb = cli_xmalloc((n + 1) * sizeof *valsb);
    for (size_t k = 0; k < n && !st; k++) {
        const char *name = sg_program_param(p->prog, k);
        const pdecl *d = find_decl(p, name);
        const alias_decl *a = find_alias(p, name);
        const sg_source *src;
        vals[k] = valsb[k] = NOVAL;
        if ((st = sg_source_local(ctx, &src, name)))
            break;
        if (d && d->kind) { /* a TwoTensor: its inner tensors are the graph's inputs */
            long i = sg_inputs_find(in, sg_source_name(src));
            const sg_fake *f = i >= 0 ? sg_inputs_fake(in, (size_t)i) : NULL;
            sg_value inner[2], of[2] = {NOVAL, NOVAL};
            for (size_t j = 0; j < 2 && p->naliases && c.t[k]; j++)
                of[j] = shared_storage_of(&c, vals, valsb, k, j ? c.tb[k] : c.t[k]);
            if (!f)
                st = sg_ctx_set_error(ctx, SG_EINVAL, "no tensor input %s", name);
            else
                st = sg_tracer_input_subclass(p->tracer, inner, 2, name, f, (sg_dtype)d->dtype, d->requires_grad, of);
            if (!st) {
                vals[k] = inner[0];
                valsb[k] = inner[1];
            }
        } else if (a && c.same_as[k] < 0 && c.tb[k]) { /* an `input` that is a TwoTensor */
            const sg_fake *inner_f[2];
            sg_fake sub;
            sg_value inner[2], of[2];
            for (size_t j = 0; j < 2; j++)
                of[j] = shared_storage_of(&c, vals, valsb, k, j ? c.tb[k] : c.t[k]);
            if (!(st = two_fake(cs, in, src, &c, k, inner_f, &sub)))
                st = sg_tracer_input_subclass(p->tracer, inner, 2, name, &sub, sg_tensor_dtype(c.t[k]), c.rg[k], of);
            if (!st) {
                vals[k] = inner[0];
                valsb[k] = inner[1];
            }
            for (size_t j = 0; j < 2 && !st && declared_view(&c, k); j++) /* (as a plain input's, below) */
                st = sg_tracer_input_declare_view(p->tracer, inner[j]);
        } else if (d) {
            long i = sg_inputs_find(in, sg_source_name(src));
            const sg_fake *f = i >= 0 ? sg_inputs_fake(in, (size_t)i) : NULL;
            if (!f) {
                st = sg_ctx_set_error(ctx, SG_EINVAL, "no tensor input %s", name);
                break;
            }
            st = sg_tracer_input_view(p->tracer, &vals[k], name, f, (sg_dtype)d->dtype, d->requires_grad,
                                      p->naliases ? shared_storage_of(&c, vals, valsb, k, c.t[k]) : NOVAL);
        } else if (a) {
            if (c.same_as[k] >= 0)
                continue; /* the very object of another parameter: its value, below */
            sg_tensor *x = c.t[k];
            const sg_fake *f;
            if (!(st = tensor_fake(cs, in, src, x, &f)))
                st = sg_tracer_input_view(p->tracer, &vals[k], name, f, sg_tensor_dtype(x), c.rg[k],
                                          shared_storage_of(&c, vals, valsb, k, x));
            long b = st ? -1 : hidden_base(&c, k, 1);
            const sg_source *bs;
            const sg_fake *bf;
            if (b >= 0 && !(st = base_source(ctx, name, &bs)) && !(st = tensor_fake(cs, in, bs, c.t[b], &bf)))
                st = sg_tracer_input_base(p->tracer, vals[k], bf);
            if (!st && declared_view(&c, k)) /* (which input views which, in whatever order they come) */
                st = sg_tracer_input_declare_view(p->tracer, vals[k]);
        } else {
            const sg_expr *e = int_input(cs, name);
            if (!e) {
                st = sg_ctx_set_error(ctx, SG_EINVAL, "parameter %s has no input (tensor, backed or input)", name);
                break;
            }
            st = sg_tracer_input_int(p->tracer, &vals[k], name, e);
        }
    }
    for (size_t k = 0; k < n && !st; k++)
        if (p->naliases && c.same_as[k] >= 0)
            vals[k] = vals[c.same_as[k]];
    if (!st)
        st = sg_walk_trace(p->prog, p->tracer, &p->walk);
    for (size_t k = 0; k < n && !st; k++) {
        if (p->naliases && c.same_as[k] >= 0)
            continue;
        if (valsb[k] != NOVAL) {
            sg_value inner[2] = {vals[k], valsb[k]};
            st = sg_walk_input_subclass(p->walk, sg_program_param(p->prog, k), "two", inner, 2);
        } else {
            st = sg_walk_input_value(p->walk, sg_program_param(p->prog, k), vals[k]);
        }
    }
    if (!st) /* the inner tensors' placeholders, for run_program */
        p->valsb = valsb;
    else
        free(valsb);
    for (size_t k = 0; k < n && !st; k++)
        if (p->naliases && c.same_as[k] >= 0)
            st = sg_walk_input_same(p->walk, sg_program_param(p->prog, k),
                                    sg_program_param(p->prog, (size_t)c.same_as[k]));
    free(vals);
    p->same_as = cli_xmalloc((n + 1) * sizeof *p->same_as);
    for (size_t k = 0; k < n; k++)
        p->same_as[k] = p->naliases ? c.same_as[k] : -1;
    if (p->naliases)
        concrete_free(&c);
    if (!st)
        st = sg_walk_run(p->walk);
    if (!st)
        st = sg_walk_finish(p->walk);
    if (!st)
        st = sg_tracer_verify(p->tracer);
    p->traced = st;
    if (st) {
        const char *m = sg_ctx_last_error_msg(ctx);
        p->trace_msg = cli_xstrndup(m, strlen(m));
    }
    return 1;
}

static void add_trace_error(cli_str *why, const struct cli_program *p)
{
    cli_str_addf(why, "error %s: %s", sg_status_kind(p->traced), p->trace_msg ? p->trace_msg : "");
}

/* A traced program, or NULL (why set). */
static struct cli_program *traced(case_state *cs, cli_str *why)
{
    struct cli_program *p = need_program(cs, why);
    if (!p || !do_trace(cs, p, why))
        return NULL;
    if (p->traced) {
        cli_str_adds(why, "the trace failed: ");
        add_trace_error(why, p);
        return NULL;
    }
    return p;
}

static int error_fits(const char *want, sg_status st, const char *msg);
static cmd_result check_error_msg(sg_status st, const char *msg, const char *expected, cli_str *why);

/* trace => ok | error KIND | error KIND: TEXT */
cmd_result cmd_trace(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    (void)ctx;
    if (ln->args[0]) {
        cli_str_addf(why, "trace takes no arguments (got '%s')", ln->args);
        return CMD_FAIL;
    }
    struct cli_program *p = need_program(cs, why);
    if (!p || !do_trace(cs, p, why))
        return CMD_FAIL;
    const char *want = ln->expected;
    if (!strcmp(want, "ok")) {
        if (!p->traced)
            return CMD_PASS;
        cli_str_adds(why, "expected ok, got ");
        add_trace_error(why, p);
        return CMD_FAIL;
    }
    if (!strncmp(want, "error ", 6)) {
        int fits = error_fits(want, p->traced, p->trace_msg);
        if (fits < 0) {
            cli_str_addf(why, "bad expected side '%s'", want);
            return CMD_FAIL;
        }
        if (fits)
            return CMD_PASS;
        cli_str_addf(why, "expected %s, got ", want);
        if (p->traced)
            add_trace_error(why, p);
        else
            cli_str_adds(why, "ok");
        return CMD_FAIL;
    }
    cli_str_addf(why, "bad expected side '%s' (ok or error KIND)", want);
    return CMD_FAIL;
}

/* Compare two texts with runs of blanks equal. */
static int same_words(const char *a, const char *b)
{
    for (;;) {
        while (cli_is_blank(*a))
            a++;
        while (cli_is_blank(*b))
            b++;
        if (!*a || !*b)
            return !*a && !*b;
        const char *ea = a, *eb = b;
        while (*ea && !cli_is_blank(*ea))
            ea++;
        while (*eb && !cli_is_blank(*eb))
            eb++;
        if (ea - a != eb - b || memcmp(a, b, (size_t)(ea - a)))
            return 0;
        a = ea;
        b = eb;
    }
}

/* Are a and b the same text, blanks aside? */
static int same_text(const char *a, const char *b)
{
    for (;;) {
        while (cli_is_blank(*a))
            a++;
        while (cli_is_blank(*b))
            b++;
        if (*a != *b)
            return 0;
        if (!*a)
            return 1;
        a++;
        b++;
    }
}

/* A listing of the graph named by the command's argument (the traced
 * graph: no name; a subgraph: cond_true_N ...; list: sg_tracer_graph_ops
 * or _placeholders) against the expected text (compare: same_words or
 * same_text). */
static cmd_result graph_listing(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why,
                                sg_status (*list)(const sg_tracer *, const char *, char **),
                                int (*compare)(const char *, const char *))
{
    struct cli_program *p = traced(cs, why);
    if (!p)
        return CMD_FAIL;
    char *got = NULL;
    sg_status st = list(p->tracer, ln->args, &got);
    if (st == SG_EINVAL) {
        cli_str_addf(why, "no graph '%s' (the traced graph has no name; its subgraphs are cond_true_N and "
                          "cond_false_N; the aot graphs come with the aot pipeline)",
                     ln->args);
        return CMD_FAIL;
    }
    if (st) {
        cli_str_add_error(why, ctx, st);
        return CMD_FAIL;
    }
    cmd_result r = compare(got, ln->expected) ? CMD_PASS : CMD_FAIL;
    if (r == CMD_FAIL)
        cli_str_addf(why, "expected %s, got %s", ln->expected, *got ? got : "(none)");
    sg_free(got);
    return r;
}

/* The compiled program of the traced one, compiled with the options o
 * unless it already is: the outcome of the last compilation (NULL with
 * why set when it failed). */
static sg_aot *compile(case_state *cs, struct cli_program *p, const sg_aot_options *o, cli_str *why)
{
    if (!p->has_aot || p->aot_opts.keep_input_mutations != o->keep_input_mutations ||
        p->aot_opts.partition != o->partition) {
        sg_aot_free(p->aot);
        p->aot = NULL;
        free(p->aot_msg);
        p->aot_st = sg_aot_compile_with(p->tracer, o, &p->aot);
        const char *msg = p->aot_st ? sg_ctx_last_error_msg(cs->ctx) : "";
        p->aot_msg = cli_xstrndup(msg, strlen(msg));
        p->has_aot = 1;
        p->aot_opts = *o;
    }
    if (p->aot_st)
        cli_str_addf(why, "the aot pipeline failed: error %s (%s)", sg_status_kind(p->aot_st), p->aot_msg);
    return p->aot;
}

/* p's compiled program as the case asks for it: with the last `aot` line's
 * options, else the defaults (keep_input_mutations=true, partition=min_cut). */
static sg_aot *compile_as_set(case_state *cs, struct cli_program *p, cli_str *why)
{
    const sg_aot_options dflt = {.keep_input_mutations = 1, .partition = SG_AOT_MIN_CUT};
    return compile(cs, p, p->has_aot ? &p->aot_opts : &dflt, why);
}

/* The compiled program for a command that reads it (compile_as_set), the
 * program traced first. */
static sg_aot *compiled(case_state *cs, cli_str *why)
{
    struct cli_program *p = traced(cs, why);
    return p ? compile_as_set(cs, p, why) : NULL;
}

/* ops [GRAPH] => OP OP ...: the traced graph, a subgraph, or the aot graph
 * (inference, or forward in training mode: the functional graph). */
cmd_result cmd_ops(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    const char *g = ln->args;
    if (strcmp(g, "inference") && strcmp(g, "forward") && strcmp(g, "backward"))
        return graph_listing(cs, ctx, ln, why, sg_tracer_graph_ops, same_words);
    sg_aot *a = compiled(cs, why);
    if (!a)
        return CMD_FAIL;
    bool train = sg_aot_get_mode(a) == SG_AOT_TRAIN;
    if (train != (strcmp(g, "inference") != 0)) {
        cli_str_addf(why, "no graph '%s': the pipeline built %s", g,
                     train ? "a training graph (forward, backward)" : "an inference graph (inference)");
        return CMD_FAIL;
    }
    char *got = NULL;
    sg_status st = !strcmp(g, "backward") ? sg_aot_backward_ops(a, &got) : sg_aot_ops(a, &got);
    if (st) {
        cli_str_add_error(why, ctx, st);
        return CMD_FAIL;
    }
    cmd_result r = same_words(got, ln->expected) ? CMD_PASS : CMD_FAIL;
    if (r == CMD_FAIL)
        cli_str_addf(why, "expected %s, got %s", ln->expected, *got ? got : "(none)");
    sg_free(got);
    return r;
}

/* aot [keep_input_mutations=true|false] [partition=min_cut|default] =>
 * ok | error KIND */
cmd_result cmd_aot(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    (void)ctx;
    struct cli_program *p = need_program(cs, why);
    if (!p)
        return CMD_FAIL;
    sg_aot_options o = {.keep_input_mutations = 1, .partition = SG_AOT_MIN_CUT};
    for (const char *w = ln->args; *w;) {
        size_t n = strcspn(w, " \t");
        if (n == 26 && !strncmp(w, "keep_input_mutations=false", n))
            o.keep_input_mutations = 0;
        else if (n == 25 && !strncmp(w, "keep_input_mutations=true", n))
            o.keep_input_mutations = 1;
        else if (n == 17 && !strncmp(w, "partition=min_cut", n))
            o.partition = SG_AOT_MIN_CUT;
        else if (n == 17 && !strncmp(w, "partition=default", n))
            o.partition = SG_AOT_DEFAULT_PARTITION;
        else {
            cli_str_addf(why, "aot takes keep_input_mutations=true|false and partition=min_cut|default (got '%.*s')",
                         (int)n, w);
            return CMD_FAIL;
        }
        w += n;
        w += strspn(w, " \t");
    }
    if (!do_trace(cs, p, why))
        return CMD_FAIL;
    if (p->traced) {
        if (!strncmp(ln->expected, "error ", 6))
            return check_error_msg(p->traced, p->trace_msg, ln->expected, why);
        cli_str_adds(why, "the trace failed: ");
        add_trace_error(why, p);
        return CMD_FAIL;
    }
    cli_str err = CLI_STR_INIT;
    sg_aot *a = compile(cs, p, &o, &err);
    cli_str_free(&err);
    if (!a)
        return check_error_msg(p->aot_st, p->aot_msg, ln->expected, why);
    if (strcmp(ln->expected, "ok")) {
        cli_str_addf(why, "expected %s, got ok", ln->expected);
        return CMD_FAIL;
    }
    return CMD_PASS;
}

/* Compare a listing made by what (into got) with the expected text. */
static cmd_result compare_listing(const cmd_line *ln, cli_str *got, cli_str *why)
{
    const char *g = got->n ? cli_str_get(got) : "none";
    cmd_result r = same_text(g, ln->expected) ? CMD_PASS : CMD_FAIL;
    if (r == CMD_FAIL)
        cli_str_addf(why, "expected %s, got %s", ln->expected, g);
    cli_str_free(got);
    return r;
}

/* mutations => NAME: WHAT; ... | none */
cmd_result cmd_mutations(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    (void)ctx;
    sg_aot *a = compiled(cs, why);
    if (!a)
        return CMD_FAIL;
    struct cli_program *p = cs->program;
    cli_str got = CLI_STR_INIT;
    for (size_t k = 0; k < sg_program_nparams(p->prog); k++) { /* each parameter, by its graph input */
        const char *ph = sg_program_param(p->prog, p->same_as && p->same_as[k] >= 0 ? (size_t)p->same_as[k] : k);
        unsigned f = 0;
        for (size_t i = 0; i < sg_aot_ninputs(a); i++)
            if (!strcmp(sg_aot_input_name(a, i), ph))
                f |= sg_aot_input_mutation(a, i); /* (a symbol of that name is never mutated) */
        if (!f)
            continue;
        const char *fwd = f & SG_AOT_IN_GRAPH ? " in-graph" : f & SG_AOT_EPILOGUE ? " epilogue" : "";
        cli_str_addf(&got, "%s%s:%s%s%s%s%s", got.n ? "; " : "", sg_program_param(p->prog, k),
                     f & SG_AOT_DATA ? " data" : "", f & SG_AOT_METADATA ? " metadata" : "",
                     f & SG_AOT_STORAGE ? " storage" : "", fwd, f & SG_AOT_BACKWARD ? " backward" : "");
    }
    return compare_listing(ln, &got, why);
}

/* outputs => KIND; KIND; ... */
cmd_result cmd_outputs(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    (void)ctx;
    sg_aot *a = compiled(cs, why);
    if (!a)
        return CMD_FAIL;
    cli_str got = CLI_STR_INIT;
    for (size_t k = 0; k < sg_aot_noutputs(a); k++) {
        size_t base;
        sg_aot_output_kind kind = sg_aot_output(a, k, &base);
        cli_str_addf(&got, "%s%s", k ? "; " : "", sg_aot_output_kind_name(kind));
        if (kind == SG_AOT_IS_INPUT || kind == SG_AOT_ALIAS_OF_INPUT)
            cli_str_addf(&got, "(%s)", sg_aot_input_name(a, base));
    }
    return compare_listing(ln, &got, why);
}

/* mode => train | inference */
cmd_result cmd_mode(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    (void)ctx;
    sg_aot *a = compiled(cs, why);
    if (!a)
        return CMD_FAIL;
    cli_str got = CLI_STR_INIT;
    cli_str_adds(&got, sg_aot_get_mode(a) == SG_AOT_TRAIN ? "train" : "inference");
    return compare_listing(ln, &got, why);
}

/* placeholders [GRAPH] => P, P, ... */
cmd_result cmd_placeholders(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    return graph_listing(cs, ctx, ln, why, sg_tracer_graph_placeholders, same_text);
}

/* shape VALUE => [E, E, ...] */
cmd_result cmd_shape(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    struct cli_program *p = traced(cs, why);
    if (!p)
        return CMD_FAIL;
    uint32_t v = sg_walk_local(p->walk, ln->args);
    if (v == NOVAL) {
        cli_str_addf(why, "no tensor named %s in the entry function", ln->args);
        return CMD_FAIL;
    }
    const char *e = ln->expected;
    size_t en = strlen(e);
    cli_trim(&e, &en);
    if (en < 2 || e[0] != '[' || e[en - 1] != ']') {
        cli_str_addf(why, "bad expected side '%s' ([E, E, ...])", ln->expected);
        return CMD_FAIL;
    }
    /* the sizes with the replacements the guards made, as the graph prints them */
    size_t nd = sg_tracer_ndim(p->tracer, v), k = 0;
    const sg_expr *size[SG_MAX_DIMS];
    nd = nd < SG_MAX_DIMS ? nd : SG_MAX_DIMS; /* a tensor has at most SG_MAX_DIMS */
    for (size_t d = 0; d < nd; d++)
        if (sg_env_replace(cs->env, &size[d], sg_tracer_size(p->tracer, v, d)))
            size[d] = sg_tracer_size(p->tracer, v, d);
    const char *s = e + 1, *end = e + en - 1;
    int ok = 1;
    while (ok) {
        const char *c = s;
        int depth = 0;
        while (c < end && (depth || *c != ',')) {
            depth += (*c == '(' || *c == '[') - (*c == ')' || *c == ']');
            c++;
        }
        const char *it = s;
        size_t n = (size_t)(c - s);
        cli_trim(&it, &n);
        if (!n && c == end && k == 0)
            break; /* [] */
        const sg_expr *want;
        if (k >= nd || case_parse(cs, &want, it, n) != SG_OK || want != size[k])
            ok = 0;
        k++;
        if (c >= end)
            break;
        s = c + 1;
    }
    if (ok && k == nd)
        return CMD_PASS;
    cli_str_addf(why, "expected %s, got [", ln->expected);
    for (size_t d = 0; d < nd; d++) {
        if (d)
            cli_str_adds(why, ", ");
        cli_str_add_expr(why, ctx, size[d], SG_FMT_SG);
    }
    cli_str_adds(why, "]");
    return CMD_FAIL;
}

/* ---- results: reading Python values and comparing them ---- */

typedef struct pyval {
    char kind; /* 'i' int, 'f' float, 'b' bool, 'n' None, 'l' list or tuple, 'T' two(a=..., b=...) */
    double f;
    long long i;
    size_t n;
    struct pyval *items;
} pyval;

static void pyval_free(pyval *v)
{
    for (size_t i = 0; i < v->n; i++)
        pyval_free(&v->items[i]);
    free(v->items);
    v->items = NULL;
    v->n = 0;
}

static int pyval_read(const char **p, pyval *v, int depth)
{
    while (cli_is_blank(**p))
        (*p)++;
    memset(v, 0, sizeof *v);
    const char *s = *p;
    if (depth > 64)
        return 0;
    int two = !strncmp(s, "two(", 4); /* a TwoTensor: two(a=VALUE, b=VALUE), its items named */
    if (*s == '[' || *s == '(' || two) {
        char close = *s == '[' ? ']' : ')';
        *p += two ? 4 : 1;
        v->kind = two ? 'T' : 'l';
        for (;;) {
            while (cli_is_blank(**p))
                (*p)++;
            if (**p == close) {
                (*p)++;
                return 1;
            }
            if (two) { /* NAME= */
                size_t nl = strspn(*p, "abcdefghijklmnopqrstuvwxyz_");
                if (!nl || (*p)[nl] != '=')
                    return 0;
                *p += nl + 1;
            }
            v->items = cli_xrealloc(v->items, (v->n + 1) * sizeof *v->items);
            if (!pyval_read(p, &v->items[v->n++], depth + 1))
                return 0;
            while (cli_is_blank(**p))
                (*p)++;
            if (**p == ',')
                (*p)++;
            else if (**p != close)
                return 0;
        }
    }
    static const struct {
        const char *w;
        char kind;
        double f;
    } words[] = {{"True", 'b', 1}, {"False", 'b', 0}, {"None", 'n', 0}, {"nan", 'f', NAN},
                 {"inf", 'f', INFINITY}, {"-inf", 'f', -INFINITY}};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        size_t n = strlen(words[i].w);
        if (!strncmp(s, words[i].w, n) && !((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z'))) {
            v->kind = words[i].kind;
            v->f = words[i].f;
            v->i = (long long)(words[i].kind == 'b' ? words[i].f : 0);
            *p += n;
            return 1;
        }
    }
    char *end;
    size_t len = strspn(s, "+-0123456789.eE");
    if (!len)
        return 0;
    int is_float = memchr(s, '.', len) || memchr(s, 'e', len) || memchr(s, 'E', len);
    if (is_float) {
        v->kind = 'f';
        v->f = strtod(s, &end);
    } else { /* an int past int64 is no value a run gives (strtoll would cap it to one) */
        v->kind = 'i';
        errno = 0;
        v->i = strtoll(s, &end, 10);
        if (errno == ERANGE)
            return 0;
    }
    if (end == s)
        return 0;
    *p = end;
    return 1;
}

static int pyval_close(const pyval *a, const pyval *b)
{
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case 'l':
    case 'T':
        if (a->n != b->n)
            return 0;
        for (size_t i = 0; i < a->n; i++)
            if (!pyval_close(&a->items[i], &b->items[i]))
                return 0;
        return 1;
    case 'f': {
        if (isnan(a->f) || isnan(b->f))
            return isnan(a->f) && isnan(b->f);
        if (a->f == b->f)
            return 1;
        double d = fabs(a->f - b->f), m = fmax(fabs(a->f), fabs(b->f));
        return d <= 1e-9 * m || d <= 1e-12;
    }
    case 'i':
    case 'b':
        return a->i == b->i;
    default:
        return 1;
    }
}

/* Does the printed text got match the expected text want? */
static int values_match(const char *got, const char *want)
{
    pyval a = {0}, b = {0};
    const char *pa = got, *pb = want;
    int ok = pyval_read(&pa, &a, 0) && pyval_read(&pb, &b, 0);
    while (ok && cli_is_blank(*pb))
        pb++;
    ok = ok && !*pb && pyval_close(&a, &b);
    pyval_free(&a);
    pyval_free(&b);
    return ok;
}

/* What a finished run shows: its outputs and inputs. */
typedef struct outcome {
    sg_walk *w;       /* the walk (its objects and outputs) */
    sg_run *x;       /* the concrete values */
    struct cli_program *p;
    concrete *c;
    int compiled;     /* x is a compiled run: identities are the tensors' own */
    const sg_aot *aot; /* the compiled program (compiled runs) */
    sg_tensor **grads; /* per input of aot, its gradient or NULL (None), then per input the inner tensor b
                          of a gradient that is a TwoTensor (grads_new); NULL: no backward ran */
    const concrete *bwc; /* the inputs of the run whose backward ran, after it (bw items) */
} outcome;

/* The gradients of compiled program a's inputs (sg_aot_call_backward_two): n
 * = sg_aot_ninputs(a) entries, each input's gradient or its inner tensor a,
 * then n entries, the inner tensors b of those that are TwoTensors. */
static sg_tensor **grads_new(const sg_aot *a)
{
    return cli_xcalloc(2 * sg_aot_ninputs(a) + 1, sizeof(sg_tensor *));
}

static void grads_free(const sg_aot *a, sg_tensor **grads)
{
    for (size_t i = 0; grads && i < 2 * sg_aot_ninputs(a); i++)
        sg_tensor_unref(grads[i]);
    free(grads);
}

/* Tensor x as the oracle prints it, or where b is given, the TwoTensor of
 * inner tensors x and b: two(a=VALUE, b=VALUE); no x: None. */
static void print_two(sg_ctx *ctx, const sg_tensor *x, const sg_tensor *b, cli_str *out)
{
    if (!x) {
        cli_str_adds(out, "None");
        return;
    }
    for (int j = 0; j < 1 + (b != NULL); j++) {
        char *t = NULL;
        sg_status st = sg_tensor_print(ctx, &t, j ? b : x);
        if (b)
            cli_str_adds(out, j ? ", b=" : "two(a=");
        if (st)
            cli_str_add_error(out, ctx, st);
        else
            cli_str_adds(out, t);
        sg_free(t);
    }
    if (b)
        cli_str_adds(out, ")");
}

/* The value of the tensor the walk gives as v (a TwoTensor: two(a=..., b=...)). */
static void print_value(sg_ctx *ctx, const outcome *o, uint32_t v, cli_str *out)
{
    sg_value b = sg_walk_inner(o->w, v, 1);
    const sg_tensor *x = sg_run_tensor(o->x, v), *xb = b != NOVAL ? sg_run_tensor(o->x, b) : NULL;
    if (!x || (b != NOVAL && !xb))
        cli_str_add_error(out, ctx, SG_EINTERNAL);
    else
        print_two(ctx, x, xb, out);
}

/* "oK" in the n bytes at s: 1 with *k set (a K past SIZE_MAX is SIZE_MAX,
 * which is no output), else 0. */
static int output_index(const char *s, size_t n, size_t *k)
{
    if (n < 2 || s[0] != 'o' || strspn(s + 1, "0123456789") < n - 1)
        return 0;
    size_t v = 0;
    for (size_t i = 1; i < n; i++) {
        size_t dig = (size_t)(s[i] - '0');
        v = v > (SIZE_MAX - dig) / 10 ? SIZE_MAX : v * 10 + dig;
    }
    *k = v;
    return 1;
}

/* Check one item of an expected RESULT. Names are read whole, of any
 * length; an index oK of any size. */
static int check_item(sg_ctx *ctx, const outcome *o, const char *item, size_t n, cli_str *why)
{
    char *it = cli_xstrndup(item, n);
    int ok = 0;
    cli_str got = CLI_STR_INIT;
    const char *eq = strchr(it, '=');
    size_t k, w0 = strcspn(it, " \t");
    const char *is = it + w0;
    while (cli_is_blank(*is))
        is++;
    if (!eq && output_index(it, w0, &k) && !strncmp(is, "is", 2) && cli_is_blank(is[2])) {
        const char *nm = is + 3;
        size_t nn = strlen(nm);
        cli_trim(&nm, &nn);
        char *name = cli_xstrndup(nm, nn);
        if (o->compiled) { /* the very tensor passed as that parameter */
            const sg_tensor *t = NULL;
            sg_value ov = sg_walk_output_value(o->w, k);
            for (size_t i = 0; i < o->c->n; i++)
                if (!strcmp(sg_program_param(o->p->prog, i), name))
                    t = o->c->t[o->c->same_as[i] >= 0 ? (size_t)o->c->same_as[i] : i];
            ok = t && ov != NOVAL && sg_run_tensor(o->x, ov) == t;
        } else {
            ok = sg_walk_output_is(o->w, k, name);
        }
        cli_str_addf(&got, "%.*s is %s", (int)w0, it, ok ? name : "not");
        free(name);
    } else if (!strncmp(it, "version ", 8) && eq) {
        const char *nm = it + 8;
        size_t nn = (size_t)(eq - nm);
        cli_trim(&nm, &nn);
        char *name = cli_xstrndup(nm, nn);
        uint32_t v = sg_walk_param_value(o->w, name);
        long idx = -1;
        for (size_t i = 0; i < o->c->n; i++)
            if (!strcmp(sg_program_param(o->p->prog, i), name))
                idx = (long)i;
        const sg_tensor *x = v == NOVAL ? NULL : sg_run_tensor(o->x, v);
        if (idx < 0 || !x) {
            cli_str_addf(&got, "no tensor input %s", name);
        } else {
            long root = o->c->same_as[idx] >= 0 ? o->c->same_as[idx] : idx;
            const char *moved = sg_tensor_version(x) != o->c->version[root] ? "bumped" : "same";
            const char *want = eq + 1;
            while (cli_is_blank(*want))
                want++;
            ok = !strcmp(want, moved);
            cli_str_addf(&got, "version %s=%s", name, moved);
        }
        free(name);
    } else if (!strncmp(it, "grad ", 5) && eq && o->grads) { /* the compiled backward's gradient */
        const char *nm = it + 5;
        size_t nn = (size_t)(eq - nm);
        cli_trim(&nm, &nn);
        long idx = -1;
        for (size_t i = 0; i < sg_aot_ninputs(o->aot); i++)
            if (strlen(sg_aot_input_name(o->aot, i)) == nn && !strncmp(sg_aot_input_name(o->aot, i), nm, nn))
                idx = (long)i;
        cli_str val = CLI_STR_INIT;
        if (idx < 0)
            cli_str_addf(&val, "(no input %.*s)", (int)nn, nm);
        else
            print_two(ctx, o->grads[idx], o->grads[sg_aot_ninputs(o->aot) + (size_t)idx], &val);
        ok = values_match(cli_str_get(&val), eq + 1);
        cli_str_addf(&got, "grad %.*s=%s", (int)nn, nm, cli_str_get(&val));
        cli_str_free(&val);
    } else if (!strncmp(it, "bw ", 3) && eq && o->grads && o->bwc) { /* an input after the backward */
        const char *nm = it + 3;
        size_t nn = (size_t)(eq - nm);
        cli_trim(&nm, &nn);
        const sg_tensor *x = NULL, *xb = NULL; /* (a TwoTensor's inner tensors) */
        for (size_t i = 0; i < o->bwc->n; i++)
            if (strlen(sg_program_param(o->p->prog, i)) == nn && !strncmp(sg_program_param(o->p->prog, i), nm, nn)) {
                size_t root = o->bwc->same_as[i] >= 0 ? (size_t)o->bwc->same_as[i] : i;
                x = o->bwc->t[root];
                xb = o->bwc->tb[root];
            }
        cli_str val = CLI_STR_INIT;
        if (!x)
            cli_str_addf(&val, "(no tensor input %.*s)", (int)nn, nm);
        else
            print_two(ctx, x, xb, &val);
        ok = x && values_match(cli_str_get(&val), eq + 1);
        cli_str_addf(&got, "bw %.*s=%s", (int)nn, nm, cli_str_get(&val));
        cli_str_free(&val);
    } else if (!strncmp(it, "grad ", 5) || !strncmp(it, "bw ", 3)) {
        cli_str_addf(&got, "%.*s: no backward ran (no input requires grad)", (int)strcspn(it, "="), it);
    } else if (eq) {
        const char *nm = it;
        size_t nn = (size_t)(eq - it);
        cli_trim(&nm, &nn);
        char *name = cli_xstrndup(nm, nn);
        cli_str val = CLI_STR_INIT;
        if (output_index(name, nn, &k)) {
            if (k >= sg_walk_noutputs(o->w)) {
                cli_str_addf(&val, "(no output %s)", name + 1);
            } else {
                char *s = NULL;
                sg_status st = sg_walk_print_output(o->w, o->x, k, &s);
                if (st)
                    cli_str_add_error(&val, ctx, st);
                else
                    cli_str_adds(&val, s);
                sg_free(s);
            }
        } else {
            uint32_t v = sg_walk_param_value(o->w, name);
            if (v == NOVAL)
                cli_str_addf(&val, "(no tensor input %s)", name);
            else
                print_value(ctx, o, v, &val);
        }
        ok = values_match(cli_str_get(&val), eq + 1);
        cli_str_addf(&got, "%s=%s", name, cli_str_get(&val));
        cli_str_free(&val);
        free(name);
    } else {
        cli_str_addf(&got, "an item that is not oK=VALUE, NAME=VALUE, oK is NAME or version NAME=...");
    }
    if (!ok)
        cli_str_addf(why, "%sexpected %s, got %s", why->n ? "; " : "", it, cli_str_get(&got));
    cli_str_free(&got);
    free(it);
    return ok;
}

static cmd_result check_result(sg_ctx *ctx, const outcome *o, const char *expected, cli_str *why)
{
    if (!strncmp(expected, "error ", 6) || !strncmp(expected, "fail", 4)) {
        cli_str_addf(why, "expected %s, got a run that went well", expected);
        return CMD_FAIL;
    }
    const char *p = expected;
    int ok = 1;
    while (*p) {
        const char *e = p;
        int depth = 0;
        while (*e && (depth || *e != ';')) {
            depth += (*e == '[' || *e == '(') - ((*e == ']' || *e == ')') && depth);
            e++;
        }
        const char *item = p;
        size_t n = (size_t)(e - p);
        cli_trim(&item, &n);
        if (n && !check_item(ctx, o, item, n, why))
            ok = 0;
        p = *e ? e + 1 : e;
    }
    return ok ? CMD_PASS : CMD_FAIL;
}

/* Does the error st (its message msg) fit `error KIND` or `error KIND:
 * TEXT` (the message contains TEXT, blanks around it trimmed) in want,
 * which starts with "error "? -1: KIND is no error kind. */
static int error_fits(const char *want, sg_status st, const char *msg)
{
    const char *kind = want + 6, *colon = strchr(kind, ':');
    size_t n = colon ? (size_t)(colon - kind) : strlen(kind);
    cli_trim(&kind, &n);
    sg_status k = cli_kind_status(kind, n);
    if (k == SG_OK)
        return -1;
    if (k != st)
        return 0;
    if (!colon)
        return 1;
    const char *text = colon + 1;
    size_t tn = strlen(text);
    cli_trim(&text, &tn);
    for (const char *m = msg ? msg : ""; *m; m++)
        if (!strncmp(m, text, tn))
            return 1;
    return tn == 0;
}

/* An error outcome (its message msg) against the expected side. */
static cmd_result check_error_msg(sg_status st, const char *msg, const char *expected, cli_str *why)
{
    if (!strncmp(expected, "error ", 6) && error_fits(expected, st, msg) == 1)
        return CMD_PASS;
    cli_str_addf(why, "expected %s, got error %s (%s)", expected, sg_status_kind(st), msg ? msg : "");
    return CMD_FAIL;
}

static cmd_result check_error(sg_ctx *ctx, sg_status st, const char *expected, cli_str *why)
{
    return check_error_msg(st, sg_ctx_last_error(ctx) == st ? sg_ctx_last_error_msg(ctx) : "", expected, why);
}

/* Each input a run line describes is a parameter of the program of that
 * kind: a tensor declared by `tensor` (NAME sizes=[...] ...) or an int
 * (NAME=INT); not one made by `input NAME = EXPR`. 1, or 0 with why set. */
static int check_overrides(const struct cli_program *p, const run_args *a, cli_str *why)
{
    size_t n = sg_program_nparams(p->prog);
    for (size_t i = 0; i < a->nov; i++) {
        const override *o = &a->ov[i];
        size_t k = 0;
        while (k < n && !cli_eq(o->name, o->nlen, sg_program_param(p->prog, k)))
            k++;
        if (k == n) {
            cli_str_addf(why, "no input '%.*s' (the program's parameters: ", (int)o->nlen, o->name);
            for (size_t j = 0; j < n; j++)
                cli_str_addf(why, "%s%s", j ? ", " : "", sg_program_param(p->prog, j));
            cli_str_adds(why, n ? ")" : "none)");
            return 0;
        }
        const char *name = sg_program_param(p->prog, k);
        const alias_decl *al = find_alias(p, name);
        if (find_decl(p, name)) {
            if (o->is_int) {
                cli_str_addf(why, "input '%s' is a tensor: %s sizes=[...] [strides=[...]] [offset=K], not %s=INT",
                             name, name, name);
                return 0;
            }
        } else if (al) {
            cli_str_addf(why, "input '%s' is made by `input %s = %s`: it follows the inputs it is made of", name, name,
                         al->expr);
            return 0;
        } else if (!o->is_int) {
            cli_str_addf(why, "input '%s' is an integer: %s=INT", name, name);
            return 0;
        }
    }
    return 1;
}

/* The inputs of an eager or run line ([S] [NAME sizes=[...]] ...) into *c
 * (freed with concrete_free). false: none made, *early is the line's result
 * (an input that cannot be built, such as a size beyond int64, is the run's
 * outcome: it passes where that `error KIND` was expected). */
static bool call_inputs(case_state *cs, sg_ctx *ctx, struct cli_program *p, const cmd_line *ln, concrete *c,
                        cmd_result *early, cli_str *why)
{
    run_args a;
    sg_status run_err = SG_OK;
    bool ok = false;
    *early = CMD_FAIL;
    if (!read_run_args(ln->args, &a, why) || !check_overrides(p, &a, why)) {
        run_args_free(&a);
        return false;
    }
    if (a.limit.n) {
        run_err = sg_ctx_set_error(ctx, SG_ELIMIT, "%s", cli_str_get(&a.limit));
        cli_str_add_error(why, ctx, run_err);
    } else {
        ok = build_inputs(cs, p, a.seed, a.ov, a.nov, c, &run_err, why);
    }
    if (!ok && run_err && !strncmp(ln->expected, "error ", 6)) {
        cli_str_clear(why);
        *early = check_error(ctx, run_err, ln->expected, why);
    } else if (!ok && run_err) {
        char *got = cli_xstrndup(cli_str_get(why), why->n);
        cli_str_clear(why);
        cli_str_addf(why, "expected %s, got %s", ln->expected, got);
        free(got);
    }
    run_args_free(&a);
    return ok;
}

/* The program run eagerly on the inputs c: *w is the walk (freed by the
 * caller, even on an error). */
static sg_status run_eager(struct cli_program *p, const concrete *c, sg_walk **w)
{
    sg_status st = sg_walk_eager(p->prog, w);
    for (size_t k = 0; k < c->n && !st; k++) { /* the objects, then the parameters that are one of them */
        const char *name = sg_program_param(p->prog, k);
        if (c->same_as[k] < 0)
            st = walk_input(*w, name, c, k);
        if (!st && find_alias(p, name) && declared_view(c, k))
            st = sg_walk_input_declare_view(*w, name);
    }
    for (size_t k = 0; k < c->n && !st; k++)
        if (c->same_as[k] >= 0)
            st = sg_walk_input_same(*w, sg_program_param(p->prog, k), sg_program_param(p->prog, (size_t)c->same_as[k]));
    if (!st)
        st = sg_walk_run(*w);
    return st;
}

/* Does an expected RESULT ask for the backward: grad or bw items, or an error
 * (which the backward may raise, as the oracle runs it after the call)? */
static int wants_backward(const char *want)
{
    return strstr(want, "grad ") != NULL || strstr(want, "bw ") != NULL || !strncmp(want, "error ", 6);
}

/* The storage position of element i (row-major) of t. */
static int64_t position(const sg_tensor *t, int64_t i)
{
    int64_t pos = sg_tensor_offset(t);
    for (size_t d = sg_tensor_ndim(t); d-- > 0;) {
        int64_t n = sg_tensor_size(t, d);
        pos += (i % n) * sg_tensor_stride(t, d);
        i /= n;
    }
    return pos;
}

/* hit[q] for each storage position q below span that t reaches (*twice:
 * some position more than once); positions from span on are not marked. */
static void mark_positions(const sg_tensor *t, uint8_t *hit, int64_t span, bool *twice)
{
    for (int64_t e = 0; e < sg_tensor_numel(t); e++) {
        int64_t q = position(t, e);
        if (q < span) {
            *twice |= hit[q] != 0;
            hit[q] = 1;
        }
    }
}

/* within[q] cleared for each storage position q below span that the view
 * as_strided is called on in input view name's expression ex (its first
 * len characters, a view of parameter tj made there, evaluated over the
 * inputs c) does not reach: PyTorch's as_strided_backward scatters the
 * gradient into that view's geometry, whose other positions it drops.
 * SG_EUNSUPPORTED where that view reaches a position twice (the backward
 * divides by the count there) or is no view of tj's storage. */
static sg_status receiver_positions(sg_ctx *ctx, struct cli_program *p, const concrete *c, const char *ex, size_t len,
                                    const sg_tensor *tj, int64_t span, uint8_t *within, uint8_t *hit, const char *name)
{
    char *prefix = cli_xstrndup(ex, len);
    sg_program *ip = NULL;
    sg_walk *w = NULL;
    sg_status st = walk_expr(ctx, p, prefix, c, &ip, &w);
    uint32_t v = st ? NOVAL : sg_walk_output_value(w, 0);
    const sg_tensor *r = v == NOVAL ? NULL : sg_run_tensor(sg_walk_eager_run(w), v);
    bool again = false, on = !st && r && sg_tensor_same_storage(r, tj);
    if (on) {
        memset(hit, 0, (size_t)span + 1);
        mark_positions(r, hit, span, &again);
        for (int64_t q = 0; q < span; q++)
            within[q] &= hit[q];
    }
    if (!on || again)
        st = sg_ctx_set_error(ctx, SG_EUNSUPPORTED, "unsupported: gradients through input view %s, an as_strided of "
                              "%s, %s", name, prefix, again ? "which reaches a position twice" : "no view of the input");
    sg_walk_free(w);
    sg_program_free(ip);
    free(prefix);
    return st;
}

/* within[q] cleared for each storage position q below span that PyTorch's
 * gradient through input view k does not carry back to parameter tj
 * (named pj): k's expression, then that of the input view it starts from,
 * and so on, each as_strided's receiver's positions (receiver_positions:
 * views made after an as_strided pick elements of its result, whose
 * positions their gradient reaches). SG_EUNSUPPORTED as receiver_positions,
 * and for an expression that calls as_strided twice or as a function. */
static sg_status chain_within(sg_ctx *ctx, struct cli_program *p, const concrete *c, size_t k, const sg_tensor *tj,
                              int64_t span, uint8_t *within, uint8_t *hit, const char *pj)
{
    const char *nk = sg_program_param(p->prog, k);
    for (size_t x = k, hops = 0; hops <= c->n; hops++) {
        const char *ex = find_alias(p, sg_program_param(p->prog, x))->expr, *as = strstr(ex, ".as_strided(");
        if (strstr(ex, "as_strided") && (!as || strstr(as + strlen(".as_strided("), "as_strided")))
            return sg_ctx_set_error(ctx, SG_EUNSUPPORTED, "unsupported: gradients of %s through %s, a view of it "
                                    "made by as_strided of an as_strided", pj, nk);
        sg_status st = as ? receiver_positions(ctx, p, c, ex, (size_t)(as - ex), tj, span, within, hit, nk) : SG_OK;
        if (st)
            return st;
        size_t len = 0, m; /* the name the expression starts from: an input view, or the end of the chain */
        while (isalnum((unsigned char)ex[len]) || ex[len] == '_')
            len++;
        char *name = cli_xstrndup(ex, len);
        bool on = param_index(p, name, &m) && m != x && find_alias(p, name) && c->t[m] && c->same_as[m] < 0;
        free(name);
        if (!on)
            return SG_OK;
        x = m;
    }
    return SG_OK;
}

/* The gradients of the declared tensors, as the oracle reports them: an
 * `input` that views a parameter that requires grad (`input e = a[1::3]`)
 * is a view of it for autograd too, so its gradient (grads, per input of
 * a as grads_new holds them, in place) is added into the parameter's at
 * the positions it views, as the view's backward scatters it (inner tensor
 * by inner tensor where either is a TwoTensor). On a synthetic base (the program
 * writes their storage: sg_aot_input_synthetic) the parameter's gradient
 * is the storage's already, the view's part in it. SG_EUNSUPPORTED where
 * either is mutated but no synthetic base joins them (an empty one
 * excepted: it adds nothing), where the parameter reaches a position
 * twice, and for an as_strided view that reaches past the view it was
 * called on (where written, or made with another view in one expression). */
static sg_status alias_grads(sg_ctx *ctx, struct cli_program *p, const concrete *c, const sg_aot *a,
                             sg_tensor **grads)
{
    size_t n = sg_aot_ninputs(a);
    if (!sg_aot_has_loss(a)) /* (no backward ran: every gradient None, a parameter's as its view's) */
        return SG_OK;
    for (size_t j = 0; j < c->n; j++) { /* a parameter on a synthetic base: its elements must be positions */
        const char *nj = sg_program_param(p->prog, j);
        if (!find_decl(p, nj) || !c->t[j] || !c->rg[j] || c->same_as[j] >= 0)
            continue;
        for (size_t i = 0; i < n; i++)
            if (!strcmp(sg_aot_input_name(a, i), nj) && sg_aot_input_synthetic(a, i) && grads[i]) {
                int64_t span = sg_tensor_offset(c->t[j]) + 1;
                for (size_t d = 0; d < sg_tensor_ndim(c->t[j]); d++)
                    span += sg_tensor_size(c->t[j], d) > 0 ? (sg_tensor_size(c->t[j], d) - 1) * sg_tensor_stride(c->t[j], d) : 0;
                uint8_t *hit = cli_xmalloc((size_t)span + 1);
                memset(hit, 0, (size_t)span + 1);
                bool twice = false;
                mark_positions(c->t[j], hit, span + 1, &twice);
                free(hit);
                if (twice) /* (autograd's gradient of each of its elements is that element's own, the
                              library's the position's: sg_aot_call_backward) */
                    return sg_ctx_set_error(ctx, SG_EUNSUPPORTED, "unsupported: gradients of %s, which reaches a "
                                            "storage position twice, on a synthetic base", nj);
            }
    }
    for (size_t k = 0; k < c->n; k++) {
        long ik = -1, ij = -1;
        const char *nk = sg_program_param(p->prog, k);
        for (size_t i = 0; i < n; i++)
            if (!strcmp(sg_aot_input_name(a, i), nk))
                ik = (long)i;
        if (!find_alias(p, nk) || ik < 0 || c->same_as[k] >= 0 || !c->t[k])
            continue;
        size_t j = 0; /* the declared parameter that requires grad and whose storage it views */
        while (j < c->n && !(j != k && find_decl(p, sg_program_param(p->prog, j)) && c->t[j] && c->rg[j] &&
                             sg_tensor_same_storage(c->t[j], c->t[k])))
            j++;
        if (j == c->n)
            continue;
        for (size_t i = 0; i < n; i++)
            if (!strcmp(sg_aot_input_name(a, i), sg_program_param(p->prog, j)))
                ij = (long)i;
        if (ij < 0)
            continue;
        /* (on a synthetic base, the program writing their storage: the library's gradient of the
           parameter is already the storage's, the view's part in it) */
        bool synth = sg_aot_input_synthetic(a, (size_t)ik) && sg_aot_input_synthetic(a, (size_t)ij);
        /* (an empty view adds nothing, nor to an empty parameter: no synthetic base joins them; not one the
           program made empty, its layout or storage changed: c's tensors are as the call left them) */
        unsigned relaid = (sg_aot_input_mutation(a, (size_t)ik) | sg_aot_input_mutation(a, (size_t)ij)) &
                          (SG_AOT_METADATA | SG_AOT_STORAGE);
        bool empty = !relaid && (!sg_tensor_numel(c->t[k]) || !sg_tensor_numel(c->t[j]));
        if (!synth && !empty && (sg_aot_input_mutation(a, (size_t)ik) || sg_aot_input_mutation(a, (size_t)ij)))
            return sg_ctx_set_error(ctx, SG_EUNSUPPORTED, "unsupported: gradients of %s through %s, a view of it, "
                                    "where either is written", sg_program_param(p->prog, j), nk);
        if (relaid && (grads[ij] || grads[ik])) /* (c's tensors are laid out as the call left them, not as given) */
            return sg_ctx_set_error(ctx, SG_EUNSUPPORTED, "unsupported: gradients of %s through %s, a view of it, "
                                    "where the program changes the layout or storage of either",
                                    sg_program_param(p->prog, j), nk);
        if (synth ? !grads[ij] : !grads[ik]) /* the view takes no gradient: the parameter's is its own */
            continue;
        if (!sg_tensor_numel(c->t[j]) && grads[n + ik] && !grads[n + ij])
            /* (the view's backward makes the empty parameter's gradient: as_strided_backward's zeros of the
               gradient's options, a plain tensor; slice_backward's new_zeros, the subclass) */
            return sg_ctx_set_error(ctx, SG_EUNSUPPORTED, "unsupported: the gradient of the empty %s through its "
                                    "view %s, a tensor subclass's (plain or a subclass as that view's backward "
                                    "makes it)", sg_program_param(p->prog, j), nk);
        const sg_tensor *tj = c->t[j], *tk = c->t[k];
        int64_t nj = sg_tensor_numel(tj), span = 0;
        for (int64_t e = 0; e < nj; e++)
            span = position(tj, e) + 1 > span ? position(tj, e) + 1 : span;
        int64_t *at = cli_xmalloc((size_t)(span + 1) * sizeof *at); /* position -> element of the parameter */
        for (int64_t q = 0; q <= span; q++)
            at[q] = -1;
        bool twice = false;
        for (int64_t e = 0; e < nj && !twice; e++) {
            twice = at[position(tj, e)] >= 0;
            at[position(tj, e)] = e;
        }
        sg_status st = twice ? sg_ctx_set_error(ctx, SG_EUNSUPPORTED, "unsupported: gradients of %s, which reaches "
                                                "a position twice, through its view %s", sg_program_param(p->prog, j), nk)
                             : SG_OK;
        /* (within: the positions of every view an as_strided of the chain was called on, where the
           view's gradient goes; where such a view reaches a position twice, as_strided_backward divides
           by the count there: refused) */
        uint8_t *within = cli_xmalloc((size_t)span + 1), *hit = cli_xmalloc((size_t)span + 1);
        memset(within, 1, (size_t)span + 1);
        if (!st)
            st = chain_within(ctx, p, c, k, tj, span, within, hit, sg_program_param(p->prog, j));
        free(hit);
        /* (a view whose version counter the program moved has its grad_fn made again from its base when next
           used with grad: an as_strided of the base, every position it reaches; where the chain restricts them,
           which one eager's gradient took is the order's) */
        bool moved = sg_tensor_version(tk) != c->version[k] || sg_tensor_version(tj) != c->version[j];
        for (int64_t e = 0; !st && moved && e < sg_tensor_numel(tk); e++) {
            int64_t q = position(tk, e);
            if (q < span && at[q] >= 0 && !within[q])
                st = sg_ctx_set_error(ctx, SG_EUNSUPPORTED, "unsupported: gradients of %s through %s, an as_strided "
                                      "reaching beyond the view it was called on, whose version the program moves "
                                      "(its grad_fn made again from the base)", sg_program_param(p->prog, j), nk);
        }
        for (int64_t e = 0; !st && synth && e < sg_tensor_numel(tk); e++) {
            /* (the storage's gradient has the view's at every position it reaches: refused where
               autograd's stops at the geometry its as_strided was called on) */
            int64_t q = position(tk, e);
            if (q < span && at[q] >= 0 && !within[q])
                st = sg_ctx_set_error(ctx, SG_EUNSUPPORTED, "unsupported: gradients of %s through %s, an "
                                      "as_strided reaching beyond the view it was called on, where the program "
                                      "writes their storage", sg_program_param(p->prog, j), nk);
        }
        /* the sum, a TwoTensor's inner tensors one by one where either is one (a plain one added to each;
           never on a synthetic base: PyTorch refuses aliased inputs mutated with a subclass) */
        sg_tensor *g[2] = {NULL, NULL};
        int parts = grads[n + ij] || grads[n + ik] ? 2 : 1;
        size_t nd = sg_tensor_ndim(tj);
        int64_t sz[SG_MAX_DIMS];
        for (size_t d = 0; d < nd; d++)
            sz[d] = sg_tensor_size(tj, d);
        for (int q = 0; q < parts && !st; q++) {
            const sg_tensor *own = q && grads[n + ij] ? grads[n + ij] : grads[ij];
            const sg_tensor *view = q && grads[n + ik] ? grads[n + ik] : grads[ik];
            st = sg_tensor_new(ctx, &g[q], SG_FLOAT64, nd, sz);
            for (int64_t e = 0; !st && own && e < nj; e++) /* its own gradient */
                sg_tensor_set_f(g[q], e, sg_tensor_get_f(own, e));
            for (int64_t e = 0; !st && !synth && view && e < sg_tensor_numel(tk); e++) { /* and the view's, where it reaches */
                int64_t x = position(tk, e);
                if (x < span && at[x] >= 0 && within[x])
                    sg_tensor_set_f(g[q], at[x], sg_tensor_get_f(g[q], at[x]) + sg_tensor_get_f(view, e));
            }
        }
        free(within);
        free(at);
        if (st) {
            sg_tensor_unref(g[0]);
            sg_tensor_unref(g[1]);
            return st;
        }
        sg_tensor_unref(grads[ij]);
        sg_tensor_unref(grads[n + ij]);
        grads[ij] = g[0];
        grads[n + ij] = g[1];
    }
    return SG_OK;
}

/* Is st how the pipeline refuses a backward it cannot give yet (as PyTorch
 * refuses, or unsupported: named, counted by kind in programs.test)? */
static int refused_backward(sg_status st)
{
    return st == SG_EUNSUPPORTED || st == SG_EALIASING;
}

/* A backward the pipeline refused (st) against expected RESULT want: the
 * error expected passes; anything else fails as a named refusal, "the aot
 * pipeline refused: error KIND (what ...)", which programs.test counts by
 * kind. */
static cmd_result refusal(sg_ctx *ctx, sg_status st, const char *want, const char *what, cli_str *why)
{
    if (!strncmp(want, "error ", 6) && check_error(ctx, st, want, why) == CMD_PASS)
        return CMD_PASS;
    cli_str_clear(why);
    cli_str_addf(why, "expected %s, the aot pipeline refused: error %s (%s%s)", want, sg_status_kind(st), what,
                 sg_ctx_last_error_msg(ctx));
    return CMD_FAIL;
}

/* Has compiled program a a backward (an input that requires grad; one the
 * pipeline refused counts: calling it gives that error)? */
static int has_backward(const sg_aot *a)
{
    char *ops = NULL;
    sg_status st = sg_aot_backward_ops(a, &ops);
    sg_free(ops);
    return st != SG_EINVAL;
}

/* The program run through graph t of its tracer (run_program: the trace's). */
static sg_status run_graph(case_state *cs, struct cli_program *p, const sg_tracer *t, const concrete *c,
                           const sg_aot *aot, sg_tensor **grads, sg_run **out);

/* The gradients of an eager run w (the loss of program.md) by our own
 * autograd: the graph the eager walk recorded (its tape, every size a
 * constant) compiled by the aot pipeline, its backward run from the
 * inputs c, built afresh (the eager run mutated its own). *a and *grads
 * (grads_new's, NULL: None) are the caller's to free, even on an
 * error; the error of the backward (SG_EAUTOGRAD: a saved value written
 * in place) or of its making. */
/* (the default partition: eager's gradients do not depend on the min-cut) */
static const sg_aot_options eager_opts = {.keep_input_mutations = 1, .partition = SG_AOT_DEFAULT_PARTITION,
                                          .eager = 1};

static sg_status eager_gradients(case_state *cs, struct cli_program *p, const concrete *c, sg_walk *w, sg_aot **a,
                                 sg_tensor ***grads)
{
    sg_run *x = NULL;
    sg_status st = sg_walk_finish(w);
    if (!st)
        st = sg_aot_compile_with(sg_walk_tracer(w), &eager_opts, a);
    if (st || !has_backward(*a)) /* (no input requires grad: no gradients, *grads stays NULL) */
        return st;
    *grads = grads_new(*a);
    st = run_graph(cs, p, sg_walk_tracer(w), c, *a, *grads, &x);
    sg_run_free(x);
    return st ? st : alias_grads(cs->ctx, p, c, *a, *grads);
}

/* eager [S] [NAME sizes=[...]] ... => RESULT */
cmd_result cmd_eager(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    struct cli_program *p = need_program(cs, why);
    if (!p)
        return CMD_FAIL;
    if (!p->prog) /* it did not parse */
        return check_error_msg(p->traced, p->trace_msg, ln->expected, why);
    concrete c;
    cmd_result early;
    if (!call_inputs(cs, ctx, p, ln, &c, &early, why))
        return early;
    sg_walk *w = NULL;
    sg_aot *a = NULL;
    sg_tensor **grads = NULL;
    sg_status st = run_eager(p, &c, &w);
    int from_bw = !st && wants_backward(ln->expected);
    concrete fresh; /* the backward's run: its inputs, after it (bw items) */
    if (from_bw) { /* the backward, as the oracle runs it after the call */
        cmd_result early;
        if (!call_inputs(cs, ctx, p, ln, &fresh, &early, why)) {
            sg_walk_free(w);
            concrete_free(&c);
            return early;
        }
        st = eager_gradients(cs, p, &fresh, w, &a, &grads);
    }
    cmd_result r;
    if (st && from_bw && refused_backward(st)) {
        r = refusal(ctx, st, ln->expected, "our eager gradients: ", why);
    } else if (st) {
        r = check_error(ctx, st, ln->expected, why);
    } else {
        outcome o = {w, sg_walk_eager_run(w), p, &c, 0, a, grads, from_bw ? &fresh : NULL};
        r = check_result(ctx, &o, ln->expected, why);
    }
    grads_free(a, grads);
    sg_aot_free(a);
    sg_walk_free(w);
    concrete_free(&c);
    if (from_bw)
        concrete_free(&fresh);
    return r;
}

/* A TwoTensor of inner tensors a and b as the guards take it (the demo
 * kind's flatten reads a cli_tval; the outer layout is a's, kept at lay),
 * freed with free(): b's layout is kept inside it. */
static cli_tval *two_value(const sg_tensor *a, const sg_tensor *b, int64_t *lay)
{
    struct two {
        cli_tval tv;
        int64_t lay[2 * SG_MAX_DIMS];
    } *t = cli_xmalloc(sizeof *t);
    memset(t, 0, sizeof *t);
    layout_of(a, lay, &t->tv.tv);
    t->tv.kind = cli_subclass_kind("two", 3);
    t->tv.tv.kind = t->tv.kind;
    t->tv.tv.obj = &t->tv;
    t->tv.nflat = 2;
    t->tv.flat_names[0] = "a";
    t->tv.flat_names[1] = "b";
    t->tv.flat_inner[0] = t->tv.tv;
    t->tv.flat_inner[0].kind = NULL;
    t->tv.flat_inner[0].obj = NULL;
    layout_of(b, t->lay, &t->tv.flat_inner[1]);
    return &t->tv;
}

/* Check the case's guards, compiled for call time, against the concrete
 * inputs c (what `call` does from its text, without the text): each input
 * of the environment takes its parameter's tensor layout or int. Returns 1
 * with *pass set (and the reason of a failure appended to reason), or 0
 * with why set (an input without a value; "error KIND" when the check
 * itself failed); *st is an error finding the inputs (then 0, why unset). */
static int check_guards(case_state *cs, struct cli_program *p, const concrete *c, int *pass, cli_str *reason,
                        sg_status *st, cli_str *why)
{
    sg_ctx *ctx = cs->ctx;
    sg_inputs *in = case_inputs(cs, why);
    *st = SG_OK;
    if (!in)
        return 0;
    size_t ni = sg_inputs_count(in);
    sg_input_value *vals = cli_xmalloc((ni + 1) * sizeof *vals);
    sg_tensor_value *tvs = cli_xmalloc((ni + 1) * sizeof *tvs);
    cli_tval **tvals = cli_xmalloc((c->nall + 1) * sizeof *tvals); /* the TwoTensors' values */
    size_t ntvals = 0;
    int64_t *lay = cli_xmalloc((ni + 1) * 2 * SG_MAX_DIMS * sizeof *lay);
    int *given = cli_xmalloc((ni + 1) * sizeof *given);
    for (size_t i = 0; i < ni; i++)
        given[i] = 0;
    int ok = 1;
    for (size_t k = 0; k < c->nall && ok; k++) { /* the parameters, then the tensors they view */
        long i;
        if ((*st = find_input(cs, c->names[k], &i)))
            ok = 0;
        else if (i >= 0 && c->is_int[k] != (sg_inputs_fake(in, (size_t)i) == NULL)) {
            cli_str_addf(why, "input '%s' is %s", c->names[k],
                         c->is_int[k] ? "an integer, not a tensor" : "a tensor, not an integer");
            ok = 0;
        } else if (i >= 0 && c->is_int[k]) {
            vals[i] = (sg_input_value){NULL, c->ints[k]};
            given[i] = 1;
        } else if (i >= 0 && sg_inputs_fake(in, (size_t)i)->kind) { /* a TwoTensor declared by `subclass` */
            size_t r = c->same_as[k] >= 0 ? (size_t)c->same_as[k] : k;
            cli_tval *tv = two_value(c->t[r], c->tb[r], lay + 2 * SG_MAX_DIMS * (size_t)i);
            tvals[ntvals++] = tv;
            vals[i] = (sg_input_value){&tv->tv, 0};
            given[i] = 1;
        } else if (i >= 0) {
            layout_of(c->t[c->same_as[k] >= 0 ? (size_t)c->same_as[k] : k], lay + 2 * SG_MAX_DIMS * (size_t)i,
                      &tvs[i]);
            vals[i] = (sg_input_value){&tvs[i], 0};
            given[i] = 1;
        } else if (c->tb[k] && c->same_as[k] < 0) { /* an `input` TwoTensor: its inner tensors' own inputs */
            const sg_source *src, *is;
            for (size_t j = 0; j < 2 && ok; j++) {
                long ij = -1;
                if ((*st = sg_source_local(ctx, &src, c->names[k])) ||
                    (*st = sg_source_attr(ctx, &is, src, j ? "b" : "a")))
                    ok = 0;
                else if ((ij = sg_inputs_find(in, sg_source_name(is))) >= 0) {
                    layout_of(j ? c->tb[k] : c->t[k], lay + 2 * SG_MAX_DIMS * (size_t)ij, &tvs[ij]);
                    vals[ij] = (sg_input_value){&tvs[ij], 0};
                    given[ij] = 1;
                }
            }
        }
        long b = ok && k < c->n ? hidden_base(c, k, 0) : -1, ib;
        const sg_source *bs;
        if (b >= 0 && (*st = base_source(ctx, c->names[k], &bs)))
            ok = 0;
        else if (b >= 0 && (ib = sg_inputs_find(in, sg_source_name(bs))) >= 0) { /* its hidden base */
            layout_of(c->t[b], lay + 2 * SG_MAX_DIMS * (size_t)ib, &tvs[ib]);
            vals[ib] = (sg_input_value){&tvs[ib], 0};
            given[ib] = 1;
        }
    }
    for (size_t i = 0; i < ni && ok; i++)
        if (!given[i]) {
            cli_str_addf(why, "no value for input %s", sg_source_name(sg_inputs_source(in, i)));
            ok = 0;
        }
    if (ok)
        ok = cli_check_guards(ctx, in, vals, ni, pass, reason, why);
    free(vals);
    free(tvs);
    for (size_t j = 0; j < ntvals; j++)
        free(tvals[j]);
    free(tvals);
    free(lay);
    free(given);
    return ok;
}

/* Run the traced graph on the concrete inputs c: its tensor inputs get
 * the tensors of the parameters of their names, its int inputs (symbols)
 * the ints of the parameters whose expression they are; then every node
 * runs. *out is the run (freed by the caller, even on an error). */
static sg_status run_program(case_state *cs, struct cli_program *p, const concrete *c, const sg_aot *aot,
                             sg_tensor **grads, sg_run **out)
{
    return run_graph(cs, p, p->tracer, c, aot, grads, out);
}

static sg_status run_graph(case_state *cs, struct cli_program *p, const sg_tracer *t, const concrete *c,
                           const sg_aot *aot, sg_tensor **grads, sg_run **out)
{
    sg_status st = sg_run_new(t, NULL, out);
    sg_run *x = *out;
    size_t n = st ? 0 : sg_run_ninputs(x);
    for (size_t i = 0; i < n && !st; i++) {
        sg_value v = sg_run_input(x, i);
        if (sg_tracer_kind(t, v) != SG_VALUE_TENSOR)
            continue;
        const char *in = sg_run_input_name(x, i);
        for (size_t k = 0; k < c->n; k++) {
            const char *pk = sg_program_param(p->prog, k);
            size_t len = strlen(pk);
            if (!strcmp(pk, in)) {
                st = sg_run_set_tensor(x, v, c->t[k]); /* the run takes its own reference */
                long b = st ? -1 : hidden_base(c, k, 0);
                if (b >= 0)
                    st = sg_run_set_base(x, v, c->t[b]);
                break;
            }
            if (c->tb[k] && !strncmp(pk, in, len) && in[len] == '_' && (in[len + 1] == 'a' || in[len + 1] == 'b') &&
                !in[len + 2]) { /* a TwoTensor's inner tensor (NAME_a, NAME_b) */
                st = sg_run_set_tensor(x, v, in[len + 1] == 'a' ? c->t[k] : c->tb[k]);
                break;
            }
        }
    }
    for (size_t k = 0; k < c->n && !st; k++) { /* int inputs: the placeholder of their symbol */
        const sg_expr *e;
        if (!c->is_int[k] || !(e = int_input(cs, sg_program_param(p->prog, k))) || sg_expr_op(e) != SG_OP_SYM)
            continue;
        for (size_t i = 0; i < n; i++) {
            sg_value v = sg_run_input(x, i);
            if (sg_tracer_kind(t, v) == SG_VALUE_INT && sg_tracer_expr(t, v) == e) {
                st = sg_run_set_int(x, v, c->ints[k]);
                break;
            }
        }
    }
    if (!st)
        st = !aot     ? sg_run_execute(x)
             : grads ? sg_aot_call_backward_two(aot, x, grads, grads + sg_aot_ninputs(aot), sg_aot_ninputs(aot))
                     : sg_aot_call(aot, x);
    return st;
}

/* The traced graph as captured (no pipeline): what layouts reads. */
static sg_status run_traced(case_state *cs, struct cli_program *p, const concrete *c, sg_run **out)
{
    return run_program(cs, p, c, NULL, NULL, out);
}

/* run [S] [NAME sizes=[...]] ... => RESULT | fail | fail: TEXT */
cmd_result cmd_run(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    struct cli_program *p = need_program(cs, why);
    if (!p || !do_trace(cs, p, why))
        return CMD_FAIL;
    if (p->traced) {
        if (!strncmp(ln->expected, "error ", 6)) /* the trace's error, with its message */
            return check_error_msg(p->traced, p->trace_msg, ln->expected, why);
        cli_str_adds(why, "the trace failed: ");
        add_trace_error(why, p);
        return CMD_FAIL;
    }
    concrete c;
    cmd_result early;
    if (!call_inputs(cs, ctx, p, ln, &c, &early, why))
        return early;
    /* the guards first */
    const char *want = ln->expected;
    cli_str reason = CLI_STR_INIT;
    sg_status st;
    int pass = 1;
    cmd_result r = CMD_FAIL;
    if (!check_guards(cs, p, &c, &pass, &reason, &st, why)) {
        cli_str_free(&reason);
        concrete_free(&c);
        return st ? check_error(ctx, st, want, why) : CMD_FAIL;
    }
    if (!pass) {
        if (!strcmp(want, "fail"))
            r = CMD_PASS;
        else if (!strncmp(want, "fail:", 5)) {
            const char *t = want + 5;
            while (cli_is_blank(*t))
                t++;
            r = !strncmp(cli_str_get(&reason), t, strlen(t)) ? CMD_PASS : CMD_FAIL;
            if (r == CMD_FAIL)
                cli_str_addf(why, "expected %s, got fail: %s", want, cli_str_get(&reason));
        } else {
            cli_str_addf(why, "expected %s, got fail: %s", want, cli_str_get(&reason));
        }
        cli_str_free(&reason);
        concrete_free(&c);
        return r;
    }
    cli_str_free(&reason);
    if (!strncmp(want, "fail", 4)) {
        cli_str_addf(why, "expected %s, but the guards pass", want);
        concrete_free(&c);
        return CMD_FAIL;
    }
    /* then the compiled program: the aot graphs and their runtime wrapper */
    sg_run *x = NULL;
    cli_str err = CLI_STR_INIT;
    sg_aot *a = compile_as_set(cs, p, &err);
    cli_str_free(&err);
    /* a backward where the result asks for gradients; where it writes inputs, on inputs of its own (the
       call's items read them after the forward, bw items after the backward) */
    sg_tensor **grads =
        a && wants_backward(want) && has_backward(a) ? grads_new(a) : NULL;
    bool apart = false;
    for (size_t i = 0; grads && i < sg_aot_ninputs(a); i++)
        apart |= (sg_aot_input_mutation(a, i) & SG_AOT_BACKWARD) != 0;
    concrete fresh;
    if (apart && !call_inputs(cs, ctx, p, ln, &fresh, &early, why)) {
        free(grads);
        concrete_free(&c);
        return early;
    }
    st = a ? run_program(cs, p, &c, a, apart ? NULL : grads, &x) : p->aot_st;
    if (apart && !st) {
        sg_run *bx = NULL;
        st = run_program(cs, p, &fresh, a, grads, &bx);
        sg_run_free(bx);
    }
    if (a && !st && grads)
        st = alias_grads(ctx, p, apart ? &fresh : &c, a, grads);
    if (!a && strncmp(want, "error ", 6)) { /* told apart: a refusal, not a wrong result */
        cli_str_addf(why, "expected %s, the aot pipeline refused: error %s (%s)", want, sg_status_kind(st), p->aot_msg);
        r = CMD_FAIL;
    } else if (!a) {
        r = check_error_msg(st, p->aot_msg, want, why);
        if (r == CMD_FAIL && refused_backward(st)) { /* (another error expected: still a refusal by name) */
            cli_str_clear(why);
            cli_str_addf(why, "expected %s, the aot pipeline refused: error %s (%s)", want, sg_status_kind(st),
                         p->aot_msg);
        }
    } else if (st && grads && refused_backward(st)) {
        r = refusal(ctx, st, want, "", why);
    } else if (st) {
        r = check_error(ctx, st, want, why);
    } else {
        outcome o = {p->walk, x, p, &c, 1, a, grads, apart ? &fresh : &c};
        r = check_result(ctx, &o, want, why);
    }
    grads_free(a, grads);
    sg_run_free(x);
    concrete_free(&c);
    if (apart)
        concrete_free(&fresh);
    return r;
}

int program_print_graph(case_state *cs, int dot, FILE *out, FILE *err)
{
    cli_str why = CLI_STR_INIT;
    struct cli_program *p = cs->ctx ? traced(cs, &why) : NULL;
    if (!p) {
        fprintf(err, "shapeguard: trace: %s\n", why.n ? cli_str_get(&why) : "no program in the last case");
        cli_str_free(&why);
        return 0;
    }
    char *text = NULL;
    sg_aot *a = dot == 2 ? compile_as_set(cs, p, &why) : NULL;
    if (dot == 2 && !a) {
        fprintf(err, "shapeguard: trace: %s\n", cli_str_get(&why));
        cli_str_free(&why);
        return 0;
    }
    sg_status st = a ? sg_aot_print(a, &text) : dot ? sg_tracer_print_dot(p->tracer, &text) : sg_tracer_print(p->tracer, &text);
    if (st) {
        fprintf(err, "shapeguard: trace: %s\n", sg_ctx_last_error_msg(cs->ctx));
        return 0;
    }
    fputs(text, out);
    sg_free(text);
    return 1;
}

/* layouts => NAME=[SIZES]/[STRIDES]/OFFSET; ...: the meta-rule check. The
 * traced graph runs on the inputs of seed 0; each named tensor of the entry
 * function has the sizes, strides and storage offset of its fake tensor,
 * evaluated under that run's bindings (unbacked symbols included), and
 * they must be those written (PyTorch's, in the differential test). */
cmd_result cmd_layouts(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    if (ln->args[0]) {
        cli_str_addf(why, "layouts takes no arguments: it runs on the inputs of seed 0 (got '%s')", ln->args);
        return CMD_FAIL;
    }
    struct cli_program *p = traced(cs, why);
    if (!p)
        return CMD_FAIL;
    concrete c;
    if (!build_inputs(cs, p, 0, NULL, 0, &c, NULL, why))
        return CMD_FAIL;
    sg_run *x = NULL;
    sg_status st = run_traced(cs, p, &c, &x);
    cmd_result r = CMD_PASS;
    if (st) {
        cli_str_adds(why, "the traced graph does not run: ");
        cli_str_add_error(why, ctx, st);
        r = CMD_FAIL;
    }
    for (const char *q = ln->expected; *q && r == CMD_PASS;) {
        const char *e = strchr(q, ';');
        size_t n = e ? (size_t)(e - q) : strlen(q);
        char *item = cli_xstrndup(q, n);
        q = e ? e + 1 : q + n;
        const char *eq = strchr(item, '=');
        const char *nm = item;
        size_t nn = eq ? (size_t)(eq - item) : 0;
        cli_trim(&nm, &nn);
        char *name = cli_xstrndup(nm, nn);
        uint32_t v = eq ? sg_walk_local(p->walk, name) : NOVAL;
        cli_str got = CLI_STR_INIT;
        if (v == NOVAL) {
            cli_str_addf(&got, "no tensor named '%s' in the entry function", name);
        } else {
            size_t nd = sg_tracer_ndim(p->tracer, v);
            for (int part = 0; part < 2 && !st; part++) {
                cli_str_adds(&got, part ? "/[" : "[");
                for (size_t d = 0; d < nd && !st; d++) {
                    int64_t k;
                    st = sg_run_eval(x, part ? sg_tracer_stride(p->tracer, v, d) : sg_tracer_size(p->tracer, v, d),
                                       &k);
                    cli_str_addf(&got, "%s%lld", d ? ", " : "", (long long)k);
                }
                cli_str_adds(&got, "]");
            }
            int64_t off = 0;
            if (!st)
                st = sg_run_eval(x, sg_tracer_offset(p->tracer, v), &off);
            cli_str_addf(&got, "/%lld", (long long)off);
        }
        const char *want = eq ? eq + 1 : "";
        if (st || v == NOVAL || !same_text(cli_str_get(&got), want)) {
            cli_str_addf(why, "%sexpected %s=%s, got %s", why->n ? "; " : "", name, want,
                         st ? "an error" : cli_str_get(&got));
            r = CMD_FAIL;
        }
        cli_str_free(&got);
        free(name);
        free(item);
    }
    sg_run_free(x);
    concrete_free(&c);
    return r;
}

/* A printed value (s, freed here) or the error st that stopped it, and a newline. */
static void add_printed(sg_ctx *ctx, cli_str *out, sg_status st, char *s)
{
    if (st)
        cli_str_add_error(out, ctx, st);
    else
        cli_str_adds(out, s);
    cli_str_adds(out, "\n");
    sg_free(s);
}

/* What a run shows, as items "KEY=VALUE" in a fixed order: each output,
 * each tensor parameter after the call and whether its version counter
 * moved, and for each output and tensor parameter whether the output is
 * that very object or views its storage. */
static void describe(sg_ctx *ctx, const outcome *o, cli_str *out)
{
    size_t no = sg_walk_noutputs(o->w), np = sg_program_nparams(o->p->prog);
    for (size_t k = 0; k < no; k++) {
        char *v = NULL;
        sg_status st = sg_walk_print_output(o->w, o->x, k, &v);
        cli_str_addf(out, "o%zu=", k);
        add_printed(ctx, out, st, v);
    }
    for (size_t i = 0; i < np; i++) {
        const char *name = sg_program_param(o->p->prog, i);
        uint32_t pv = sg_walk_param_value(o->w, name);
        const sg_tensor *t = pv == NOVAL ? NULL : sg_run_tensor(o->x, pv);
        if (!t)
            continue;
        cli_str_addf(out, "%s=", name);
        print_value(ctx, o, pv, out);
        cli_str_adds(out, "\n");
        size_t root = o->c->same_as[i] >= 0 ? (size_t)o->c->same_as[i] : i;
        cli_str_addf(out, "version %s=%s\n", name, sg_tensor_version(t) != o->c->version[root] ? "bumped" : "same");
        for (size_t k = 0; k < no; k++) {
            sg_value ov = sg_walk_output_value(o->w, k);
            const sg_tensor *x = ov == NOVAL ? NULL : sg_run_tensor(o->x, ov);
            if (!x)
                continue;
            int is = o->compiled ? x == o->c->t[root] : sg_walk_output_is(o->w, k, name);
            cli_str_addf(out, "o%zu is %s=%s\n", k, name, is ? "yes" : "no");
            cli_str_addf(out, "o%zu views %s=%s\n", k, name, sg_tensor_same_storage(x, t) ? "yes" : "no");
        }
    }
    for (size_t i = 0; o->grads && i < sg_aot_ninputs(o->aot); i++) { /* the gradients of the parameters */
        const char *name = sg_aot_input_name(o->aot, i);
        size_t k = 0;
        while (k < np && strcmp(sg_program_param(o->p->prog, k), name))
            k++;
        if (k == np)
            continue;
        cli_str_addf(out, "grad %s=", name);
        print_two(ctx, o->grads[i], o->grads[sg_aot_ninputs(o->aot) + i], out);
        cli_str_adds(out, "\n");
    }
    for (size_t i = 0; o->grads && o->bwc && i < np; i++) { /* the parameters after the backward */
        size_t root = o->bwc->same_as[i] >= 0 ? (size_t)o->bwc->same_as[i] : i;
        if (!o->bwc->t[root])
            continue;
        cli_str_addf(out, "bw %s=", sg_program_param(o->p->prog, i));
        print_two(ctx, o->bwc->t[root], o->bwc->tb[root], out);
        cli_str_adds(out, "\n");
    }
}

/* Do two descriptions (describe) agree, item for item (values within the
 * expected values' tolerance)? The first difference into why. */
static int same_description(const char *a, const char *b, cli_str *why)
{
    while (*a || *b) {
        size_t na = strcspn(a, "\n"), nb = strcspn(b, "\n");
        const char *ea = memchr(a, '=', na), *eb = memchr(b, '=', nb);
        char *va = cli_xstrndup(a, na), *vb = cli_xstrndup(b, nb);
        int ok = ea && eb && ea - a == eb - b && !strncmp(a, b, (size_t)(ea - a)) &&
                 (!strcmp(va, vb) || values_match(va + (ea - a) + 1, vb + (eb - b) + 1));
        if (!ok)
            cli_str_addf(why, "eager gives %s, the compiled program %s", *va ? va : "(nothing)", *vb ? vb : "(nothing)");
        free(va);
        free(vb);
        if (!ok)
            return 0;
        a += na + (a[na] == '\n');
        b += nb + (b[nb] == '\n');
    }
    return 1;
}

/* agree [N] => ok: for seeds 0 .. N-1 (default 10), the compiled program
 * and the eager run give the same outputs, inputs after the call, version
 * moves, and the same aliasing between outputs and inputs; or fail alike
 * (the same error kind). */
cmd_result cmd_agree(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    struct cli_program *p = need_program(cs, why);
    if (!p)
        return CMD_FAIL;
    int64_t n = 10;
    if (ln->args[0] && (read_int_word(ln->args, strlen(ln->args), &n) != 1 || n < 0)) {
        cli_str_addf(why, "agree takes a count of seeds (got '%s')", ln->args);
        return CMD_FAIL;
    }
    if (strcmp(ln->expected, "ok")) {
        cli_str_addf(why, "agree expects ok (got '%s')", ln->expected);
        return CMD_FAIL;
    }
    if (!do_trace(cs, p, why))
        return CMD_FAIL;
    if (p->traced) {
        cli_str_adds(why, "the trace failed: ");
        add_trace_error(why, p);
        return CMD_FAIL;
    }
    sg_aot *a = compile_as_set(cs, p, why);
    if (!a)
        return CMD_FAIL;
    /* gradients too, where the program has a backward (none where no input requires grad, or
       where the pipeline refuses it as unsupported yet: the rest is compared) */
    char *bops = NULL;
    bool grads = sg_aot_backward_ops(a, &bops) == SG_OK; /* (not has_backward: a refused one is left out) */
    sg_free(bops);
    bool apart = false; /* a backward that writes inputs: run on inputs of its own, as cmd_run does */
    for (size_t i = 0; grads && i < sg_aot_ninputs(a); i++)
        apart |= (sg_aot_input_mutation(a, i) & SG_AOT_BACKWARD) != 0;
    for (int64_t seed = 0; seed < n; seed++) {
        concrete ce, cc, cb, fresh; /* eager's, compiled; the compiled backward's and eager's (grads) */
        bool have_cb = false, have_fresh = false;
        if (!build_inputs(cs, p, seed, NULL, 0, &ce, NULL, why))
            return CMD_FAIL;
        if (!build_inputs(cs, p, seed, NULL, 0, &cc, NULL, why)) {
            concrete_free(&ce);
            return CMD_FAIL;
        }
        sg_walk *w = NULL;
        sg_run *x = NULL;
        sg_aot *ae = NULL;
        sg_tensor **gc = NULL, **ge = NULL; /* compiled and eager gradients */
        cli_str de = CLI_STR_INIT, dc = CLI_STR_INIT, reason = CLI_STR_INIT;
        sg_status se = run_eager(p, &ce, &w), sc = SG_OK;
        int pass = 1, ok = 1;
        if (!check_guards(cs, p, &cc, &pass, &reason, &sc, why)) {
            ok = 0;
        } else if (!pass) {
            cli_str_addf(why, "seed %lld: the guards fail: %s", (long long)seed, cli_str_get(&reason));
            ok = 0;
        } else {
            if (grads)
                gc = grads_new(a);
            sc = run_program(cs, p, &cc, a, apart ? NULL : gc, &x);
            if (!sc && apart && !(have_cb = build_inputs(cs, p, seed, NULL, 0, &cb, NULL, why))) {
                ok = 0;
            } else if (!sc && apart) {
                sg_run *bx = NULL;
                sc = run_program(cs, p, &cb, a, gc, &bx);
                sg_run_free(bx);
            }
            if (ok && !sc && gc)
                sc = alias_grads(ctx, p, apart ? &cb : &cc, a, gc);
        }
        if (ok && !se && !sc && grads) { /* eager gradients, from inputs built afresh */
            if (!(have_fresh = build_inputs(cs, p, seed, NULL, 0, &fresh, NULL, why)))
                ok = 0;
            else
                se = eager_gradients(cs, p, &fresh, w, &ae, &ge);
        }
        if (ok && (se || sc)) {
            if (sg_status_kind(se) != sg_status_kind(sc) || !se || !sc) {
                cli_str_addf(why, "seed %lld: eager gives %s%s, the compiled program %s%s", (long long)seed,
                             se ? "error " : "values", se ? sg_status_kind(se) : "", sc ? "error " : "values",
                             sc ? sg_status_kind(sc) : "");
                ok = 0;
            }
        } else if (ok) {
            outcome oe = {w, sg_walk_eager_run(w), p, &ce, 0, ae, ge, have_fresh ? &fresh : NULL},
                    oc = {p->walk, x, p, &cc, 1, a, gc, apart ? &cb : &cc};
            describe(ctx, &oe, &de);
            describe(ctx, &oc, &dc);
            cli_str d = CLI_STR_INIT;
            if (!same_description(cli_str_get(&de), cli_str_get(&dc), &d)) {
                cli_str_addf(why, "seed %lld: %s", (long long)seed, cli_str_get(&d));
                ok = 0;
            }
            cli_str_free(&d);
        }
        grads_free(a, gc);
        grads_free(ae, ge);
        sg_aot_free(ae);
        cli_str_free(&de);
        cli_str_free(&dc);
        cli_str_free(&reason);
        sg_run_free(x);
        sg_walk_free(w);
        concrete_free(&ce);
        concrete_free(&cc);
        if (have_cb)
            concrete_free(&cb);
        if (have_fresh)
            concrete_free(&fresh);
        if (!ok)
            return CMD_FAIL;
    }
    return CMD_PASS;
}
