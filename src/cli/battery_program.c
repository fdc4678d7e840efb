/* Battery commands over programs (doc/program.md): program blocks,
 * `input NAME = EXPR`, trace, ops, placeholders, shape, eager and run. */
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
    int has_layout; /* strides= or offset= given */
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
    d->has_layout = t->has_strides || t->offset;
    if (t->has_strides)
        memcpy(d->strides, t->strides, t->ndim * sizeof *t->strides);
    d->offset = t->offset;
}

static const pdecl *find_decl(const struct cli_program *p, const char *name)
{
    for (size_t i = 0; i < p->ndecls; i++)
        if (!strcmp(p->decls[i].name, name))
            return &p->decls[i];
    return NULL;
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
    return cs->program;
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

typedef struct override {
    const char *name;
    size_t nlen;
    size_t ndim;
    int64_t sizes[SG_MAX_DIMS];
} override;

typedef struct concrete {
    size_t n;                 /* parameters */
    sg_tensor **t;            /* a tensor per parameter, or NULL */
    int64_t *ints;            /* an int parameter's value */
    int *is_int;
    long *same_as;            /* the parameter whose very object it is, or -1 */
    int *rg;                  /* requires_grad as the tracer takes it */
    uint64_t *version;        /* version counters at the start */
} concrete;

static void concrete_free(concrete *c)
{
    for (size_t i = 0; i < c->n; i++)
        sg_tensor_unref(c->t[i]);
    free(c->t);
    free(c->ints);
    free(c->is_int);
    free(c->same_as);
    free(c->rg);
    free(c->version);
    memset(c, 0, sizeof *c);
}

/* The value formula of doc/program.md, element at storage index i of
 * input k with seed S. */
static double formula(int dtype, int64_t i, size_t k, int64_t seed)
{
    int64_t j = i + 101 * seed;
    int64_t m;
    if (dtype == SG_BOOL) {
        m = (7 * j + 13 * (int64_t)k) % 3;
        if (m < 0)
            m += 3;
        return m == 0;
    }
    m = (7 * j + 13 * (int64_t)k) % 17;
    if (m < 0)
        m += 17;
    return dtype == SG_INT64 ? (double)(m - 8) : (double)(m - 8) / 4;
}

/* Build a declared tensor input. */
static sg_status make_tensor(sg_ctx *ctx, const pdecl *d, const override *ov, size_t k, int64_t seed,
                             sg_tensor **out)
{
    size_t ndim = ov ? ov->ndim : d->ndim;
    const int64_t *sizes = ov ? ov->sizes : d->sizes;
    int64_t strides[SG_MAX_DIMS], offset = 0, numel = 1;
    if (d->has_layout && !ov) {
        memcpy(strides, d->strides, ndim * sizeof *strides);
        if (!d->strides[0] && ndim && !memcmp(d->strides, (int64_t[SG_MAX_DIMS]){0}, ndim * sizeof *strides)) {
            int64_t st = 1; /* offset= alone: contiguous strides */
            for (size_t i = ndim; i-- > 0;) {
                strides[i] = st;
                st *= sizes[i] > 1 ? sizes[i] : 1;
            }
        }
        offset = d->offset;
        int64_t last = offset;
        bool empty = false;
        for (size_t i = 0; i < ndim; i++) {
            empty |= sizes[i] == 0;
            last += (sizes[i] - 1) * strides[i];
        }
        numel = empty ? offset : last + 1;
    } else {
        int64_t st = 1;
        for (size_t i = ndim; i-- > 0;) {
            strides[i] = st;
            st *= sizes[i] > 1 ? sizes[i] : 1;
        }
        for (size_t i = 0; i < ndim; i++)
            numel *= sizes[i];
    }
    sg_tensor *flat, *t; /* the storage's every element from the formula, then the input's view of it */
    sg_status st = sg_tensor_new(ctx, &flat, (sg_dtype)d->dtype, 1, &numel);
    if (st)
        return st;
    for (int64_t i = 0; i < numel; i++)
        sg_tensor_set_f(flat, i, formula(d->dtype, i, k, seed));
    st = sg_tensor_view(ctx, &t, flat, ndim, sizes, strides, offset);
    sg_tensor_unref(flat);
    if (st)
        return st;
    sg_tensor_set_requires_grad(t, d->requires_grad != 0);
    *out = t;
    return SG_OK;
}

/* Evaluate `input NAME = EXPR` (parameter k) eagerly over the inputs
 * built so far: its tensor, or the parameter whose very object it is. */
static sg_status eval_alias(sg_ctx *ctx, struct cli_program *p, const alias_decl *a, size_t k, concrete *c,
                            cli_str *why)
{
    cli_str src = CLI_STR_INIT; /* def _input_(<the inputs built>): return EXPR */
    size_t nbuilt = 0;
    cli_str_adds(&src, "def _input_(");
    for (size_t j = 0; j < c->n; j++)
        if (c->t[j] || c->is_int[j] || c->same_as[j] >= 0)
            cli_str_addf(&src, "%s%s", nbuilt++ ? ", " : "", sg_program_param(p->prog, j));
    cli_str_addf(&src, "):\n    return %s\n", a->expr);
    sg_program *ip = NULL;
    sg_walk *w = NULL;
    sg_status st = sg_program_new(ctx, &ip, cli_str_get(&src), src.n, 1);
    cli_str_free(&src);
    if (!st)
        st = sg_walk_eager(ip, &w);
    for (size_t j = 0; j < c->n && !st; j++) {
        const char *pj = sg_program_param(p->prog, j);
        if (c->is_int[j])
            st = sg_walk_input_int(w, pj, c->ints[j]);
        else if (c->t[j]) /* the run takes its own reference */
            st = sg_walk_input_tensor(w, pj, c->t[j], c->rg[j]);
    }
    for (size_t j = 0; j < c->n && !st; j++)
        if (c->same_as[j] >= 0)
            st = sg_walk_input_same(w, sg_program_param(p->prog, j), sg_program_param(p->prog, (size_t)c->same_as[j]));
    if (!st)
        st = sg_walk_run(w);
    for (size_t j = 0; j < c->n && !st && c->same_as[k] < 0; j++)
        if (j != k && sg_walk_output_is(w, 0, sg_program_param(p->prog, j)))
            c->same_as[k] = c->same_as[j] >= 0 ? c->same_as[j] : (long)j;
    if (!st && c->same_as[k] < 0) {
        uint32_t v = sg_walk_output_value(w, 0);
        sg_tensor *x = v == NOVAL ? NULL : sg_run_tensor(sg_walk_eager_run(w), v);
        if (!x)
            st = sg_ctx_set_error(ctx, SG_ETYPE, "input %s = %s: not a tensor", a->name, a->expr);
        else {
            c->t[k] = x;
            sg_tensor_ref(x);
            for (size_t j = 0; j < c->n; j++) /* a view of a tensor that requires grad: no leaf */
                if (j != k && c->t[j] && sg_tensor_same_storage(c->t[j], x) && c->rg[j])
                    c->rg[k] = 2;
        }
    }
    if (st)
        cli_str_addf(why, "input %s = %s: ", a->name, a->expr);
    sg_walk_free(w);
    sg_program_free(ip);
    return st;
}

/* The input objects of a run: declared tensors from the formulas and
 * backed ints from their hints (k counting the parameters), then the
 * `input` ones in the order they are declared, evaluated eagerly. 0 with
 * why set on failure; where an `input` expression failed, *run_err (if not
 * NULL) is its status: the run's outcome. */
static int build_inputs(case_state *cs, struct cli_program *p, int64_t seed, const override *ov, size_t nov,
                        concrete *c, sg_status *run_err, cli_str *why)
{
    sg_ctx *ctx = cs->ctx;
    size_t n = sg_program_nparams(p->prog);
    memset(c, 0, sizeof *c);
    c->n = n;
    c->t = cli_xmalloc((n + 1) * sizeof *c->t);
    c->ints = cli_xmalloc((n + 1) * sizeof *c->ints);
    c->is_int = cli_xmalloc((n + 1) * sizeof *c->is_int);
    c->same_as = cli_xmalloc((n + 1) * sizeof *c->same_as);
    c->version = cli_xmalloc((n + 1) * sizeof *c->version);
    c->rg = cli_xmalloc((n + 1) * sizeof *c->rg);
    for (size_t k = 0; k < n; k++) {
        c->t[k] = NULL;
        c->is_int[k] = 0;
        c->same_as[k] = -1;
        c->rg[k] = 0;
    }
    sg_status st = SG_OK;
    for (size_t k = 0; k < n && !st; k++) {
        const char *name = sg_program_param(p->prog, k);
        const pdecl *d = find_decl(p, name);
        const override *o = NULL;
        for (size_t i = 0; i < nov; i++)
            if (cli_eq(ov[i].name, ov[i].nlen, name))
                o = &ov[i];
        if (d) {
            st = make_tensor(ctx, d, o, k, seed, &c->t[k]);
            c->rg[k] = d->requires_grad;
        } else if (!find_alias(p, name)) {
            const sg_expr *e = int_input(cs, name), *hint = NULL;
            int64_t v;
            if (!e || sg_env_hint(case_env(cs, why), &hint, e) || !sg_expr_get_si(hint, &v)) {
                cli_str_addf(why, "parameter %s has no input (tensor, backed or input)", name);
                concrete_free(c);
                return 0;
            }
            if (o && o->ndim == 1)
                v = o->sizes[0];
            c->is_int[k] = 1;
            c->ints[k] = v;
        }
    }
    if (st) {
        cli_str_add_error(why, ctx, st);
        concrete_free(c);
        return 0;
    }
    for (size_t i = 0; i < p->naliases && !st; i++) {
        size_t k = 0;
        while (k < n && strcmp(sg_program_param(p->prog, k), p->aliases[i].name))
            k++;
        if (k < n) /* an input no parameter takes is not built */
            st = eval_alias(ctx, p, &p->aliases[i], k, c, why);
    }
    if (st) { /* the run's own outcome (an input torch cannot build either) */
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

/* [S] [NAME sizes=[...] | NAME=INT] ... */
static int read_run_args(const char *args, int64_t *seed, override *ov, size_t *nov, size_t max, cli_str *why)
{
    const char *p = args;
    *seed = 0;
    *nov = 0;
    while (*p) {
        while (cli_is_blank(*p))
            p++;
        if (!*p)
            break;
        if ((*p >= '0' && *p <= '9') && p == args + strspn(args, " \t")) {
            char *end;
            *seed = strtoll(p, &end, 10);
            p = end;
            continue;
        }
        const char *name = p;
        while (*p && !cli_is_blank(*p) && *p != '=')
            p++;
        size_t nlen = (size_t)(p - name);
        while (cli_is_blank(*p))
            p++;
        if (*nov == max) {
            cli_str_adds(why, "too many size overrides");
            return 0;
        }
        override *o = &ov[(*nov)++];
        o->name = name;
        o->nlen = nlen;
        if (*p == '=') { /* NAME=INT: an int input */
            char *end;
            o->ndim = 1;
            o->sizes[0] = strtoll(p + 1, &end, 10);
            p = end;
            continue;
        }
        if (strncmp(p, "sizes=[", 7)) {
            cli_str_addf(why, "expected NAME sizes=[...] after '%.*s'", (int)nlen, name);
            return 0;
        }
        p += 7;
        o->ndim = 0;
        while (*p && *p != ']') {
            char *end;
            if (o->ndim == SG_MAX_DIMS) {
                cli_str_adds(why, "too many sizes");
                return 0;
            }
            o->sizes[o->ndim++] = strtoll(p, &end, 10);
            if (end == p) {
                cli_str_addf(why, "bad sizes for %.*s", (int)nlen, name);
                return 0;
            }
            p = end;
            while (cli_is_blank(*p) || *p == ',')
                p++;
        }
        if (*p == ']')
            p++;
    }
    return 1;
}

/* ---- trace ---- */

/* The input before parameter k whose concrete tensor shares k's storage
 * (its graph value), or NOVAL. */
static sg_value shared_storage(const concrete *c, const sg_value *vals, size_t k)
{
    for (size_t j = 0; j < k; j++)
        if (c->t[j] && c->t[k] && sg_tensor_same_storage(c->t[j], c->t[k]) && vals[j] != NOVAL && c->same_as[j] < 0)
            return vals[j];
    return NOVAL;
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
    sg_value *vals = cli_xmalloc((n + 1) * sizeof *vals);
    for (size_t k = 0; k < n && !st; k++) {
        const char *name = sg_program_param(p->prog, k);
        const pdecl *d = find_decl(p, name);
        const alias_decl *a = find_alias(p, name);
        const sg_source *src;
        vals[k] = NOVAL;
        if ((st = sg_source_local(ctx, &src, name)))
            break;
        if (d) {
            long i = sg_inputs_find(in, sg_source_name(src));
            const sg_fake *f = i >= 0 ? sg_inputs_fake(in, (size_t)i) : NULL;
            if (!f) {
                st = sg_ctx_set_error(ctx, SG_EINVAL, "no tensor input %s", name);
                break;
            }
            st = sg_tracer_input_view(p->tracer, &vals[k], name, f, (sg_dtype)d->dtype, d->requires_grad,
                                      p->naliases ? shared_storage(&c, vals, k) : NOVAL);
        } else if (a) {
            if (c.same_as[k] >= 0)
                continue; /* the very object of another parameter: its value, below */
            sg_tensor *x = c.t[k];
            sg_value of = shared_storage(&c, vals, k);
            int64_t xsizes[SG_MAX_DIMS], xstrides[SG_MAX_DIMS];
            size_t xn = sg_tensor_ndim(x);
            for (size_t d = 0; d < xn; d++) {
                xsizes[d] = sg_tensor_size(x, d);
                xstrides[d] = sg_tensor_stride(x, d);
            }
            sg_tensor_value tv = {.ndim = xn, .sizes = xsizes, .strides = xstrides, .offset = sg_tensor_offset(x)};
            const sg_fake *f;
            if ((st = sg_inputs_tensor(in, src, &tv, NULL, &f)))
                break;
            if (!case_bind_fake(cs, f)) {
                st = sg_ctx_last_error(ctx);
                break;
            }
            st = sg_tracer_input_view(p->tracer, &vals[k], name, f, sg_tensor_dtype(x), c.rg[k], of);
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
    for (size_t k = 0; k < n && !st; k++)
        if (!p->naliases || c.same_as[k] < 0)
            st = sg_walk_input_value(p->walk, sg_program_param(p->prog, k), vals[k]);
    for (size_t k = 0; k < n && !st; k++)
        if (p->naliases && c.same_as[k] >= 0)
            st = sg_walk_input_same(p->walk, sg_program_param(p->prog, k),
                                    sg_program_param(p->prog, (size_t)c.same_as[k]));
    free(vals);
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

/* trace => ok | error KIND | error KIND: TEXT */
cmd_result cmd_trace(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    (void)ctx;
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

/* ops [GRAPH] => OP OP ... */
cmd_result cmd_ops(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    return graph_listing(cs, ctx, ln, why, sg_tracer_graph_ops, same_words);
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
    char kind; /* 'i' int, 'f' float, 'b' bool, 'n' None, 'l' list or tuple */
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
    if (*s == '[' || *s == '(') {
        char close = *s == '[' ? ']' : ')';
        (*p)++;
        v->kind = 'l';
        for (;;) {
            while (cli_is_blank(**p))
                (*p)++;
            if (**p == close) {
                (*p)++;
                return 1;
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
    } else {
        v->kind = 'i';
        v->i = strtoll(s, &end, 10);
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
} outcome;

static void print_value(sg_ctx *ctx, const outcome *o, uint32_t v, cli_str *out)
{
    const sg_tensor *x = sg_run_tensor(o->x, v);
    char *s = NULL;
    sg_status st = x ? sg_tensor_print(ctx, &s, x) : SG_EINTERNAL;
    if (st)
        cli_str_add_error(out, ctx, st);
    else
        cli_str_adds(out, s);
    sg_free(s);
}

/* Check one item of an expected RESULT. */
static int check_item(sg_ctx *ctx, const outcome *o, const char *item, size_t n, cli_str *why)
{
    char *it = cli_xstrndup(item, n);
    int ok = 0;
    cli_str got = CLI_STR_INIT;
    const char *eq = strchr(it, '=');
    char name[64] = "";
    size_t k;
    if (sscanf(it, "o%zu is %63s", &k, name) == 2) {
        ok = sg_walk_output_is(o->w, k, name);
        cli_str_addf(&got, "o%zu is %s", k, ok ? name : "not");
    } else if (!strncmp(it, "version ", 8) && eq) {
        snprintf(name, sizeof name, "%.*s", (int)(eq - it - 8), it + 8);
        char *nm = name;
        size_t nn = strlen(nm);
        cli_trim((const char **)&nm, &nn);
        nm[nn] = '\0';
        uint32_t v = sg_walk_param_value(o->w, nm);
        long idx = -1;
        for (size_t i = 0; i < o->c->n; i++)
            if (!strcmp(sg_program_param(o->p->prog, i), nm))
                idx = (long)i;
        const sg_tensor *x = v == NOVAL ? NULL : sg_run_tensor(o->x, v);
        if (idx < 0 || !x) {
            cli_str_addf(&got, "no tensor input %s", nm);
        } else {
            long root = o->c->same_as[idx] >= 0 ? o->c->same_as[idx] : idx;
            const char *moved = sg_tensor_version(x) != o->c->version[root] ? "bumped" : "same";
            const char *want = eq + 1;
            while (cli_is_blank(*want))
                want++;
            ok = !strcmp(want, moved);
            cli_str_addf(&got, "version %s=%s", nm, moved);
        }
    } else if (!strncmp(it, "grad ", 5) || !strncmp(it, "bw ", 3)) {
        cli_str_addf(&got, "%.*s: not implemented yet (autograd comes with the aot pipeline)",
                     (int)strcspn(it, "="), it);
    } else if (eq) {
        snprintf(name, sizeof name, "%.*s", (int)(eq - it), it);
        size_t nn = strlen(name);
        while (nn && cli_is_blank(name[nn - 1]))
            name[--nn] = '\0';
        cli_str val = CLI_STR_INIT;
        if (name[0] == 'o' && sscanf(name + 1, "%zu", &k) == 1 && strspn(name + 1, "0123456789") == nn - 1) {
            if (k >= sg_walk_noutputs(o->w)) {
                cli_str_addf(&val, "(no output %zu)", k);
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

/* The inputs of an eager or run line ([S] [NAME sizes=[...]] ...) into *c
 * (freed with concrete_free). false: none made, *early is the line's result
 * (an input that fails to build passes where `error KIND` was expected). */
static bool call_inputs(case_state *cs, sg_ctx *ctx, struct cli_program *p, const cmd_line *ln, concrete *c,
                        cmd_result *early, cli_str *why)
{
    override ov[16];
    size_t nov;
    int64_t seed;
    sg_status run_err = SG_OK;
    *early = CMD_FAIL;
    if (!read_run_args(ln->args, &seed, ov, &nov, 16, why))
        return false;
    if (build_inputs(cs, p, seed, ov, nov, c, &run_err, why))
        return true;
    if (run_err && !strncmp(ln->expected, "error ", 6)) {
        cli_str_clear(why);
        *early = check_error(ctx, run_err, ln->expected, why);
    }
    return false;
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
    sg_status st = sg_walk_eager(p->prog, &w);
    for (size_t k = 0; k < c.n && !st; k++) { /* the objects, then the parameters that are one of them */
        const char *name = sg_program_param(p->prog, k);
        if (c.same_as[k] >= 0)
            continue;
        if (c.is_int[k])
            st = sg_walk_input_int(w, name, c.ints[k]);
        else /* the run takes its own reference */
            st = sg_walk_input_tensor(w, name, c.t[k], c.rg[k]);
    }
    for (size_t k = 0; k < c.n && !st; k++)
        if (c.same_as[k] >= 0)
            st = sg_walk_input_same(w, sg_program_param(p->prog, k), sg_program_param(p->prog, (size_t)c.same_as[k]));
    if (!st)
        st = sg_walk_run(w);
    cmd_result r;
    if (st) {
        r = check_error(ctx, st, ln->expected, why);
    } else {
        outcome o = {w, sg_walk_eager_run(w), p, &c};
        r = check_result(ctx, &o, ln->expected, why);
    }
    sg_walk_free(w);
    concrete_free(&c);
    return r;
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
    int64_t *lay = cli_xmalloc((ni + 1) * 2 * SG_MAX_DIMS * sizeof *lay);
    int *given = cli_xmalloc((ni + 1) * sizeof *given);
    for (size_t i = 0; i < ni; i++)
        given[i] = 0;
    int ok = 1;
    for (size_t k = 0; k < c->n && ok; k++) {
        long i;
        if ((*st = find_input(cs, sg_program_param(p->prog, k), &i)))
            ok = 0;
        else if (i >= 0 && c->is_int[k] != (sg_inputs_fake(in, (size_t)i) == NULL)) {
            cli_str_addf(why, "input '%s' is %s", sg_program_param(p->prog, k),
                         c->is_int[k] ? "an integer, not a tensor" : "a tensor, not an integer");
            ok = 0;
        } else if (i >= 0 && c->is_int[k]) {
            vals[i] = (sg_input_value){NULL, c->ints[k]};
            given[i] = 1;
        } else if (i >= 0) {
            const sg_tensor *t = c->t[c->same_as[k] >= 0 ? (size_t)c->same_as[k] : k];
            int64_t *sz = lay + 2 * SG_MAX_DIMS * (size_t)i, *sd = sz + SG_MAX_DIMS;
            size_t nd = sg_tensor_ndim(t);
            for (size_t d = 0; d < nd; d++) {
                sz[d] = sg_tensor_size(t, d);
                sd[d] = sg_tensor_stride(t, d);
            }
            tvs[i] = (sg_tensor_value){.ndim = nd, .sizes = sz, .strides = sd, .offset = sg_tensor_offset(t)};
            vals[i] = (sg_input_value){&tvs[i], 0};
            given[i] = 1;
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
    free(lay);
    free(given);
    return ok;
}

/* Run the traced graph on the concrete inputs c: its tensor inputs get
 * the tensors of the parameters of their names, its int inputs (symbols)
 * the ints of the parameters whose expression they are; then every node
 * runs. *out is the run (freed by the caller, even on an error). */
static sg_status run_traced(case_state *cs, struct cli_program *p, const concrete *c, sg_run **out)
{
    sg_status st = sg_run_new(p->tracer, NULL, out);
    sg_run *x = *out;
    size_t n = st ? 0 : sg_run_ninputs(x);
    for (size_t i = 0; i < n && !st; i++) {
        sg_value v = sg_run_input(x, i);
        if (sg_tracer_kind(p->tracer, v) != SG_VALUE_TENSOR)
            continue;
        for (size_t k = 0; k < c->n; k++)
            if (!strcmp(sg_program_param(p->prog, k), sg_run_input_name(x, i))) {
                st = sg_run_set_tensor(x, v, c->t[k]); /* the run takes its own reference */
                break;
            }
    }
    for (size_t k = 0; k < c->n && !st; k++) { /* int inputs: the placeholder of their symbol */
        const sg_expr *e;
        if (!c->is_int[k] || !(e = int_input(cs, sg_program_param(p->prog, k))) || sg_expr_op(e) != SG_OP_SYM)
            continue;
        for (size_t i = 0; i < n; i++) {
            sg_value v = sg_run_input(x, i);
            if (sg_tracer_kind(p->tracer, v) == SG_VALUE_INT && sg_tracer_expr(p->tracer, v) == e) {
                st = sg_run_set_int(x, v, c->ints[k]);
                break;
            }
        }
    }
    if (!st)
        st = sg_run_execute(x);
    return st;
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
    /* then the traced graph, as captured */
    sg_run *x = NULL;
    st = run_traced(cs, p, &c, &x);
    if (st) {
        r = check_error(ctx, st, want, why);
    } else {
        outcome o = {p->walk, x, p, &c};
        r = check_result(ctx, &o, want, why);
    }
    sg_run_free(x);
    concrete_free(&c);
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
    sg_status st = dot ? sg_tracer_print_dot(p->tracer, &text) : sg_tracer_print(p->tracer, &text);
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
