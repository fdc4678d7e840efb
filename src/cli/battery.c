/* shapeguard, the command-line tool: the battery runner (doc/battery.md)
 * and the helpers that main.c shares with it.
 *
 * A battery is read whole, split into lines, and each line is checked
 * (no NUL byte, valid UTF-8), stripped of its comment and split at its arrow
 * into the command text and the expected text. The command word selects an
 * entry of the command table below: a handler with the rule for its arrow.
 * Handlers work on the state of the current case (its context, later its
 * shape environment) and report pass, fail (with the reason) or nothing
 * (lines that state something rather than expect it). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "battery.h"

/* ==== helpers shared with main.c ========================================== */

#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void cli_out_of_memory(void)
{
    fputs("shapeguard: out of memory\n", stderr);
    exit(1);
}

/* Fault simulation, for tests/oom_battery.test: with SG_FAULTSIM=N in the
 * environment, the contexts of a battery run take their memory from an
 * allocator whose call number N (counted over the process from 0) fails,
 * and the tool says so on stderr. The count is the tool's, not the library's. */
static long faultsim_left = -2; /* -2: not read yet; -1: off */

static int faultsim_fails(void)
{
    if (faultsim_left < 0 || faultsim_left-- > 0)
        return 0;
    fputs("shapeguard: faultsim: an allocation failed\n", stderr);
    return 1;
}

static void *faultsim_malloc(void *user, size_t n)
{
    (void)user;
    return faultsim_fails() ? NULL : malloc(n);
}

static void *faultsim_realloc(void *user, void *p, size_t n)
{
    (void)user;
    return faultsim_fails() ? NULL : realloc(p, n);
}

static void faultsim_free(void *user, void *p)
{
    (void)user;
    free(p);
}

static sg_status cli_ctx_new(sg_ctx **out)
{
    if (faultsim_left == -2) {
        const char *n = getenv("SG_FAULTSIM");
        char *end = NULL;
        errno = 0;
        faultsim_left = n && *n ? strtol(n, &end, 10) : -1;
        if (n && *n && (errno || *end || faultsim_left < 0)) { /* not a count: off, and said */
            fprintf(stderr, "shapeguard: SG_FAULTSIM=%s is not a count of allocations; ignored\n", n);
            faultsim_left = -1;
        }
    }
    if (faultsim_left == -1)
        return sg_ctx_new(out);
    sg_allocator a = {faultsim_malloc, faultsim_realloc, faultsim_free, NULL};
    return sg_ctx_new_with_allocator(out, &a);
}

void *cli_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        cli_out_of_memory();
    return p;
}

void *cli_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        cli_out_of_memory();
    return p;
}

void *cli_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        cli_out_of_memory();
    return q;
}

char *cli_xstrndup(const char *s, size_t n)
{
    char *p;
    if (n == SIZE_MAX)
        cli_out_of_memory();
    p = cli_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static void cli_str_reserve(cli_str *s, size_t extra)
{
    size_t need, cap;
    if (extra > SIZE_MAX - s->n - 1)
        cli_out_of_memory();
    need = s->n + extra + 1;
    if (need <= s->cap)
        return;
    cap = s->cap ? s->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    s->p = cli_xrealloc(s->p, cap);
    s->cap = cap;
}

void cli_str_addn(cli_str *s, const char *p, size_t n)
{
    cli_str_reserve(s, n);
    if (n)
        memcpy(s->p + s->n, p, n);
    s->n += n;
    s->p[s->n] = '\0';
}

void cli_str_adds(cli_str *s, const char *p)
{
    cli_str_addn(s, p, strlen(p));
}

void cli_str_addf(cli_str *s, const char *fmt, ...)
{
    va_list ap;
    int len;
    va_start(ap, fmt);
    len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (len <= 0)
        return;
    cli_str_reserve(s, (size_t)len);
    va_start(ap, fmt);
    vsnprintf(s->p + s->n, (size_t)len + 1, fmt, ap);
    va_end(ap);
    s->n += (size_t)len;
}

const char *cli_str_get(const cli_str *s)
{
    return s->p ? s->p : "";
}

void cli_str_clear(cli_str *s)
{
    s->n = 0;
    if (s->p)
        s->p[0] = '\0';
}

void cli_str_free(cli_str *s)
{
    free(s->p);
    s->p = NULL;
    s->n = s->cap = 0;
}

void cli_str_add_error(cli_str *s, sg_ctx *ctx, sg_status st)
{
    const char *msg = ctx ? sg_ctx_last_error_msg(ctx) : "";
    cli_str_addf(s, "error %s", sg_status_kind(st));
    if (ctx && sg_ctx_last_error(ctx) == st && msg[0])
        cli_str_addf(s, " (%s)", msg);
}

void cli_str_add_expr(cli_str *s, sg_ctx *ctx, const sg_expr *e, sg_format fmt)
{
    char *text = NULL;
    sg_status st = sg_print(ctx, &text, e, fmt);
    if (st == SG_OK && text)
        cli_str_adds(s, text);
    else
        cli_str_addf(s, "<cannot print: %s>", sg_status_kind(st));
    sg_free(text);
}

int cli_is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

void cli_trim(const char **p, size_t *n)
{
    while (*n && cli_is_blank(**p)) {
        ++*p;
        --*n;
    }
    while (*n && cli_is_blank((*p)[*n - 1]))
        --*n;
}

int cli_eq(const char *p, size_t n, const char *w)
{
    /* one pass, stopping at the first difference (no strlen of w first) */
    for (size_t i = 0; i < n; i++)
        if (w[i] != p[i] || !w[i])
            return 0;
    return w[n] == '\0';
}

sg_status cli_kind_status(const char *kind, size_t n)
{
    int s;
    for (s = -1; s >= SG_EAUTOGRAD; s--)
        if (cli_eq(kind, n, sg_status_kind((sg_status)s)))
            return (sg_status)s;
    return SG_OK;
}

static int is_ident_start(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static int is_ident_char(char c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9');
}

static int is_ident(const char *p, size_t n)
{
    size_t i;
    if (n == 0 || !is_ident_start(p[0]))
        return 0;
    for (i = 1; i < n; i++)
        if (!is_ident_char(p[i]))
            return 0;
    return 1;
}

sg_status cli_bindings_add(cli_bindings *b, sg_ctx *ctx, const char *text, size_t n)
{
    const char *eq = memchr(text, '=', n);
    const char *name = text, *value;
    size_t nlen, vlen, i;
    const sg_expr *sym = NULL, *val = NULL;
    char *tmp;
    sg_status st;

    if (!eq)
        return sg_ctx_set_error(ctx, SG_ESYNTAX, "binding '%.*s' is not NAME=INT", (int)n, text);
    nlen = (size_t)(eq - text);
    value = eq + 1;
    vlen = n - nlen - 1;
    cli_trim(&name, &nlen);
    cli_trim(&value, &vlen);
    if (!is_ident(name, nlen))
        return sg_ctx_set_error(ctx, SG_ESYNTAX, "binding '%.*s': '%.*s' is not a name", (int)n, text,
                                (int)nlen, name);
    char small[64]; /* short texts are copied here, not to the heap */
    tmp = vlen < sizeof small ? small : cli_xmalloc(vlen + 1);
    memcpy(tmp, value, vlen);
    tmp[vlen] = '\0';
    st = vlen ? sg_expr_int_str(ctx, &val, tmp) : SG_ESYNTAX;
    if (tmp != small)
        free(tmp);
    if (st != SG_OK)
        return sg_ctx_set_error(ctx, st == SG_ENOMEM ? st : SG_ESYNTAX,
                                "binding '%.*s': '%.*s' is not an integer", (int)n, text, (int)vlen, value);
    tmp = nlen < sizeof small ? small : cli_xmalloc(nlen + 1);
    memcpy(tmp, name, nlen);
    tmp[nlen] = '\0';
    st = sg_expr_sym(ctx, &sym, tmp);
    if (tmp != small)
        free(tmp);
    if (st != SG_OK)
        return st;
    for (i = 0; i < b->n; i++)
        if (b->syms[i] == sym)
            return sg_ctx_set_error(ctx, SG_ESYNTAX, "'%.*s' is bound twice", (int)nlen, name);
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 8;
        b->syms = cli_xrealloc(b->syms, b->cap * sizeof *b->syms);
        b->vals = cli_xrealloc(b->vals, b->cap * sizeof *b->vals);
    }
    b->syms[b->n] = sym;
    b->vals[b->n] = val;
    b->n++;
    return SG_OK;
}

void cli_bindings_free(cli_bindings *b)
{
    free(b->syms);
    free(b->vals);
    b->syms = b->vals = NULL;
    b->n = b->cap = 0;
}

/* ==== the state of a case ================================================== */

/* case_state, cmd_line and the handlers of the shape-environment commands
 * are in battery.h. */

void case_init(case_state *cs)
{
    memset(cs, 0, sizeof *cs);
    sg_env_options_default(&cs->opts);
}

void case_end(case_state *cs)
{
    sg_inputs_free(cs->inputs);
    cs->inputs = NULL;
    sg_symcache_free(cs->cache);
    cs->cache = NULL;
    sg_env_free(cs->env);
    cs->env = NULL;
    sg_facts_free(cs->facts);
    cs->facts = NULL;
    for (size_t i = 0; i < cs->nnames; i++)
        free(cs->names[i]);
    free(cs->names);
    free(cs->named);
    cs->names = NULL;
    cs->named = NULL;
    cs->nnames = 0;
    free(cs->assumed);
    cs->assumed = NULL;
    cs->nassumed = 0;
    sg_env_options_default(&cs->opts);
    program_free(cs->program); /* before the context its values live in */
    cs->program = NULL;
    sg_ctx_free(cs->ctx);
    cs->ctx = NULL;
}

sg_facts *case_facts(case_state *cs, cli_str *why)
{
    if (cs->env)
        return sg_env_facts(cs->env);
    if (!cs->facts && sg_facts_new(cs->ctx, &cs->facts) != SG_OK) {
        cs->facts = NULL;
        cli_str_adds(why, "cannot make a fact base: out of memory");
    }
    return cs->facts;
}

/* Identifiers of a case: a bound NAME, then a symbol of the environment. */
static sg_status case_resolve(void *user, sg_ctx *ctx, const char *text, size_t len, int is_source,
                              const sg_expr **out)
{
    case_state *cs = user;
    *out = NULL;
    for (size_t i = 0; i < cs->nnames; i++)
        if (strlen(cs->names[i]) == len && !memcmp(cs->names[i], text, len)) {
            *out = cs->named[i];
            return SG_OK;
        }
    if (cs->env && !is_source && len < 32) {
        char name[32];
        memcpy(name, text, len);
        name[len] = '\0';
        *out = sg_env_symbol(cs->env, name);
    }
    return SG_OK;
}

sg_status case_parse(case_state *cs, const sg_expr **out, const char *text, size_t len)
{
    sg_parse_opts opts = { case_resolve, cs, 0 };
    return sg_parse_n(cs->ctx, out, text, len, &opts);
}

/* ==== commands ============================================================= */


typedef enum arrow_rule {
    ARROW_NEVER,   /* COMMAND ARGS */
    ARROW_ALWAYS   /* COMMAND ARGS => EXPECTED */
} arrow_rule;

/* What an expected side names: a value or canonical form, or an error kind. */
typedef struct expected {
    const sg_expr *e;   /* when kind is SG_OK */
    sg_status kind;     /* the error kind of `error KIND` */
} expected;

/* Read `error KIND` into *x. Returns 1 if text starts with the word error,
 * else 0. An unknown KIND leaves x->kind at SG_OK, with the reason in why. */
static int read_expected_error(const char *text, expected *x, cli_str *why)
{
    size_t n = strlen(text);
    const char *kind;
    size_t klen;
    if (n < 5 || memcmp(text, "error", 5) != 0 || (n > 5 && !cli_is_blank(text[5])))
        return 0;
    kind = text + 5;
    klen = n - 5;
    cli_trim(&kind, &klen);
    x->e = NULL;
    x->kind = cli_kind_status(kind, klen);
    if (x->kind == SG_OK)
        cli_str_addf(why, "bad expected side '%s': '%.*s' is not an error kind", text, (int)klen, kind);
    return 1;
}

/* The outcome of building (and evaluating) an expression: a node, or the
 * error status. Its text, for messages, is appended by add_outcome. */
static void add_outcome(cli_str *s, sg_ctx *ctx, sg_status st, const sg_expr *e)
{
    if (st != SG_OK)
        cli_str_add_error(s, ctx, st);
    else
        cli_str_add_expr(s, ctx, e, SG_FMT_SG);
}

/* Compare an outcome with an expected side; on a mismatch put
 * "expected X, got Y" in why, where X is the expected text as written
 * (expected_text) or, if that is NULL, the printed canonical form. */
static cmd_result compare_outcome(sg_ctx *ctx, const expected *x, const char *expected_text, sg_status st,
                                  const sg_expr *e, cli_str *why)
{
    int holds = x->kind != SG_OK ? st == x->kind : st == SG_OK && e == x->e;
    if (holds)
        return CMD_PASS;
    cli_str_adds(why, "expected ");
    if (expected_text)
        cli_str_adds(why, expected_text);
    else
        add_outcome(why, ctx, x->kind, x->e);
    cli_str_adds(why, ", got ");
    add_outcome(why, ctx, st, e);
    return CMD_FAIL;
}

/* Find the keyword `where`, with blanks on both sides, outside brackets and
 * quotes. Returns its offset or SIZE_MAX. */
static size_t find_where(const char *s)
{
    size_t i, depth = 0;
    char quote = 0;
    for (i = 0; s[i]; i++) {
        char c = s[i];
        if (quote) {
            if (c == '\\' && s[i + 1])
                i++;
            else if (c == quote)
                quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == '(' || c == '[' || c == '{') {
            depth++;
        } else if (c == ')' || c == ']' || c == '}') {
            if (depth)
                depth--;
        } else if (depth == 0 && i > 0 && cli_is_blank(s[i - 1]) && strncmp(s + i, "where", 5) == 0 &&
                   (s[i + 5] == '\0' || cli_is_blank(s[i + 5]))) {
            return i;
        }
    }
    return SIZE_MAX;
}

/* Parse "NAME=INT, NAME=INT, ..." into b. */
static int read_bindings(sg_ctx *ctx, const char *text, cli_bindings *b, cli_str *why)
{
    const char *p = text;
    while (cli_is_blank(*p))
        p++;
    if (!*p) {
        cli_str_adds(why, "missing bindings after 'where'");
        return 0;
    }
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        sg_status st = cli_bindings_add(b, ctx, p, n);
        if (st != SG_OK) {
            cli_str_adds(why, sg_ctx_last_error_msg(ctx));
            return 0;
        }
        if (!comma)
            return 1;
        p = comma + 1;
    }
}

/* Read the expected side of eval: an integer, true, false or error KIND. */
static int read_expected_value(sg_ctx *ctx, const char *text, expected *x, cli_str *why)
{
    x->kind = SG_OK;
    x->e = NULL;
    if (read_expected_error(text, x, why))
        return x->kind != SG_OK;
    if (!strcmp(text, "true") || !strcmp(text, "True") || !strcmp(text, "false") || !strcmp(text, "False")) {
        if (sg_expr_bool(ctx, &x->e, text[0] == 't' || text[0] == 'T') == SG_OK)
            return 1;
    } else if (sg_expr_int_str(ctx, &x->e, text) == SG_OK) {
        return 1;
    }
    cli_str_addf(why, "bad expected value '%s' (an integer, true, false or error KIND)", text);
    return 0;
}

/* eval EXPR [where NAME=INT, ...] => VALUE */
static cmd_result cmd_eval(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    cli_bindings b = CLI_BINDINGS_INIT;
    size_t w = find_where(ln->args);
    const char *exprp = ln->args;
    size_t exprn = w == SIZE_MAX ? strlen(ln->args) : w;
    const sg_expr *e = NULL, *v = NULL;
    expected x;
    sg_status st;
    cmd_result r = CMD_FAIL;

    cli_trim(&exprp, &exprn);
    if (exprn == 0) {
        cli_str_adds(why, "missing expression");
        return CMD_FAIL;
    }
    if (w != SIZE_MAX && !read_bindings(ctx, ln->args + w + 5, &b, why))
        goto done;
    if (!read_expected_value(ctx, ln->expected, &x, why))
        goto done;
    st = case_parse(cs, &e, exprp, exprn);
    if (st == SG_OK)
        st = sg_expr_eval(ctx, &v, e, b.n, b.syms, b.vals);
    r = compare_outcome(ctx, &x, ln->expected, st, v, why);
done:
    cli_bindings_free(&b);
    return r;
}

/* simplify EXPR => EXPR2 | error KIND */
static cmd_result cmd_simplify(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    const sg_expr *e = NULL;
    expected x = { NULL, SG_OK };
    sg_status st;

    if (!ln->args[0]) {
        cli_str_adds(why, "missing expression");
        return CMD_FAIL;
    }
    if (read_expected_error(ln->expected, &x, why)) {
        if (x.kind == SG_OK)
            return CMD_FAIL;
    } else {
        st = case_parse(cs, &x.e, ln->expected, strlen(ln->expected));
        if (st != SG_OK) {
            cli_str_addf(why, "cannot parse the expected side '%s': ", ln->expected);
            cli_str_add_error(why, ctx, st);
            return CMD_FAIL;
        }
    }
    st = case_parse(cs, &e, ln->args, strlen(ln->args));
    /* Both sides under the facts assumed so far (none: the ranges alone), by
     * the one call `shapeguard simplify` makes too. */
    sg_facts *f = case_facts(cs, why);
    if (!f)
        return CMD_FAIL;
    if (st == SG_OK)
        st = sg_facts_simplify(f, &e, e);
    if (x.kind == SG_OK && sg_facts_simplify(f, &x.e, x.e) != SG_OK) {
        cli_str_adds(why, "cannot simplify the expected side: ");
        cli_str_add_error(why, ctx, sg_ctx_last_error(ctx));
        return CMD_FAIL;
    }
    return compare_outcome(ctx, &x, x.kind != SG_OK ? ln->expected : NULL, st, e, why);
}

/* assume BOOLEXPR */
static cmd_result cmd_assume(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    const sg_expr *e;
    sg_facts *f = case_facts(cs, why);
    if (!f)
        return CMD_FAIL;
    sg_status st = case_parse(cs, &e, ln->args, strlen(ln->args));
    if (st == SG_OK)
        st = sg_facts_assume(f, e);
    if ((st == SG_OK || st == SG_EASSERT) && !cs->env) { /* replayed if an environment comes */
        cs->assumed = cli_xrealloc(cs->assumed, (cs->nassumed + 1) * sizeof *cs->assumed);
        cs->assumed[cs->nassumed++] = e;
    }
    /* a fact that contradicts the others is recorded: later questions are
     * vacuously true, as the format asks nothing of assume itself */
    if (st == SG_OK || st == SG_EASSERT)
        return CMD_QUIET;
    cli_str_add_error(why, ctx, st);
    return CMD_FAIL;
}

/* A bound as the format writes it: an integer, -oo, oo, true, false. */
static void add_bound(cli_str *s, sg_ctx *ctx, const sg_expr *b, int is_hi)
{
    if (!b)
        cli_str_adds(s, is_hi ? "oo" : "-oo");
    else
        cli_str_add_expr(s, ctx, b, SG_FMT_SG);
}

/* Read "[LO, HI]" into its two words. Returns 0 on malformed text. */
static int read_interval_text(const char *t, const char **lo, size_t *lon, const char **hi, size_t *hin)
{
    size_t n = strlen(t);
    const char *comma;
    if (n < 2 || t[0] != '[' || t[n - 1] != ']')
        return 0;
    comma = memchr(t, ',', n);
    if (!comma)
        return 0;
    *lo = t + 1;
    *lon = (size_t)(comma - t) - 1;
    *hi = comma + 1;
    *hin = (size_t)(t + n - 1 - *hi);
    cli_trim(lo, lon);
    cli_trim(hi, hin);
    return *lon > 0 && *hin > 0;
}

/* Does the word name the bound b (NULL: infinite)? */
static int bound_matches(sg_ctx *ctx, const char *w, size_t n, const sg_expr *b, int is_hi)
{
    if (!b)
        return cli_eq(w, n, is_hi ? "oo" : "-oo") || (is_hi && cli_eq(w, n, "+oo"));
    if (sg_expr_sort(b) == SG_SORT_BOOL)
        return cli_eq(w, n, sg_expr_op(b) == SG_OP_TRUE ? "true" : "false");
    char *word = cli_xstrndup(w, n);
    const sg_expr *v = NULL;
    int same = sg_expr_int_str(ctx, &v, word) == SG_OK && v == b;
    free(word);
    return same;
}

/* range EXPR => [LO, HI] */
static cmd_result cmd_range(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    const sg_expr *e;
    const char *lo, *hi;
    size_t lon, hin;
    sg_interval iv;
    sg_facts *f = case_facts(cs, why);
    if (!f)
        return CMD_FAIL;
    if (!read_interval_text(ln->expected, &lo, &lon, &hi, &hin)) {
        cli_str_addf(why, "bad expected side '%s' ([LO, HI])", ln->expected);
        return CMD_FAIL;
    }
    sg_status st = case_parse(cs, &e, ln->args, strlen(ln->args));
    if (st == SG_OK)
        st = sg_facts_range(f, &iv, e);
    if (st == SG_OK && bound_matches(ctx, lo, lon, iv.lo, 0) && bound_matches(ctx, hi, hin, iv.hi, 1))
        return CMD_PASS;
    cli_str_addf(why, "expected %s, got ", ln->expected);
    if (st != SG_OK) {
        cli_str_add_error(why, ctx, st);
        return CMD_FAIL;
    }
    cli_str_adds(why, "[");
    add_bound(why, ctx, iv.lo, 0);
    cli_str_adds(why, ", ");
    add_bound(why, ctx, iv.hi, 1);
    cli_str_adds(why, "]");
    return CMD_FAIL;
}

static const char *truth_name(sg_truth t)
{
    return t == SG_TRUE ? "true" : t == SG_FALSE ? "false" : "unknown";
}

/* known BOOLEXPR => true | false | unknown */
static cmd_result cmd_known(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    const sg_expr *e;
    sg_truth t = SG_UNKNOWN;
    sg_facts *f = case_facts(cs, why);
    if (!f)
        return CMD_FAIL;
    if (strcmp(ln->expected, "true") && strcmp(ln->expected, "false") && strcmp(ln->expected, "unknown")) {
        cli_str_addf(why, "bad expected side '%s' (true, false or unknown)", ln->expected);
        return CMD_FAIL;
    }
    sg_status st = case_parse(cs, &e, ln->args, strlen(ln->args));
    if (st == SG_OK)
        st = sg_facts_known(f, &t, e);
    if (st == SG_OK && strcmp(truth_name(t), ln->expected) == 0)
        return CMD_PASS;
    cli_str_addf(why, "expected %s, got ", ln->expected);
    if (st != SG_OK)
        cli_str_add_error(why, ctx, st);
    else
        cli_str_adds(why, truth_name(t));
    return CMD_FAIL;
}

/* parse TEXT => ok | error KIND */
static cmd_result cmd_parse(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    sg_parse_opts opts = { NULL, NULL, 1 };
    const sg_expr *e = NULL;
    expected x = { NULL, SG_OK };
    sg_status st;

    if (read_expected_error(ln->expected, &x, why)) {
        if (x.kind == SG_OK)
            return CMD_FAIL;
    } else if (strcmp(ln->expected, "ok") != 0) {
        cli_str_addf(why, "bad expected side '%s' (ok or error KIND)", ln->expected);
        return CMD_FAIL;
    }
    st = sg_parse(ctx, &e, ln->args, &opts);
    if (st == x.kind)
        return CMD_PASS;
    cli_str_addf(why, "expected %s, got ", ln->expected);
    if (st == SG_OK)
        cli_str_adds(why, "ok");
    else
        cli_str_add_error(why, ctx, st);
    return CMD_FAIL;
}

/* print FORMAT EXPR => TEXT */
static cmd_result cmd_print(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    const char *fmtp = ln->args, *expr;
    size_t fmtn = 0;
    char *fmtname, *text = NULL;
    sg_format fmt;
    const sg_expr *e = NULL;
    sg_status st;
    cli_str got = CLI_STR_INIT;
    cmd_result r;

    while (fmtp[fmtn] && !cli_is_blank(fmtp[fmtn]))
        fmtn++;
    expr = fmtp + fmtn;
    while (cli_is_blank(*expr))
        expr++;
    fmtname = cli_xstrndup(fmtp, fmtn);
    st = sg_format_from_name(&fmt, fmtname);
    free(fmtname);
    if (st != SG_OK) {
        cli_str_addf(why, "unknown format '%.*s' (sg, python or c)", (int)fmtn, fmtp);
        return CMD_FAIL;
    }
    if (!*expr) {
        cli_str_adds(why, "missing expression");
        return CMD_FAIL;
    }
    st = case_parse(cs, &e, expr, strlen(expr));
    if (st == SG_OK)
        st = sg_print(ctx, &text, e, fmt);
    if (st == SG_OK)
        cli_str_adds(&got, text);
    else
        cli_str_addf(&got, "error %s", sg_status_kind(st));
    sg_free(text);
    r = strcmp(cli_str_get(&got), ln->expected) == 0 ? CMD_PASS : CMD_FAIL;
    if (r == CMD_FAIL) {
        cli_str_addf(why, "expected %s, got ", ln->expected);
        if (st == SG_OK)
            cli_str_adds(why, cli_str_get(&got));
        else
            cli_str_add_error(why, ctx, st);
    }
    cli_str_free(&got);
    return r;
}

/* The commands. A NULL handler is a command of the format that this version
 * does not implement yet: each such line fails as "not implemented". */
typedef struct command {
    const char *name;
    arrow_rule arrow;
    cmd_fn run;
} command;

static const command commands[] = {
    { "eval", ARROW_ALWAYS, cmd_eval },
    { "simplify", ARROW_ALWAYS, cmd_simplify },
    { "parse", ARROW_ALWAYS, cmd_parse },
    { "print", ARROW_ALWAYS, cmd_print },
    { "assume", ARROW_NEVER, cmd_assume },
    { "range", ARROW_ALWAYS, cmd_range },
    { "known", ARROW_ALWAYS, cmd_known },
    { "env", ARROW_NEVER, cmd_env },
    { "backed", ARROW_NEVER, cmd_backed },
    { "unbacked", ARROW_NEVER, cmd_unbacked },
    { "value", ARROW_ALWAYS, cmd_value },
    { "evaluate", ARROW_ALWAYS, cmd_evaluate },
    { "guard_or_false", ARROW_ALWAYS, cmd_guard_or_false },
    { "guard_or_true", ARROW_ALWAYS, cmd_guard_or_true },
    { "check", ARROW_ALWAYS, cmd_check },
    { "guards", ARROW_ALWAYS, cmd_guards },
    { "asserts", ARROW_ALWAYS, cmd_asserts },
    { "tensor", ARROW_NEVER, cmd_tensor },
    { "subclass", ARROW_NEVER, cmd_subclass },
    { "refakify", ARROW_ALWAYS, cmd_refakify },
    { "call", ARROW_ALWAYS, cmd_call },
    { "input", ARROW_NEVER, cmd_input },
    { "trace", ARROW_ALWAYS, cmd_trace },
    { "ops", ARROW_ALWAYS, cmd_ops },
    { "placeholders", ARROW_ALWAYS, cmd_placeholders },
    { "shape", ARROW_ALWAYS, cmd_shape },
    { "eager", ARROW_ALWAYS, cmd_eager },
    { "run", ARROW_ALWAYS, cmd_run },
    { "layouts", ARROW_ALWAYS, cmd_layouts },
    { "aot", ARROW_ALWAYS, cmd_aot },
    { "mutations", ARROW_ALWAYS, cmd_mutations },
    { "outputs", ARROW_ALWAYS, cmd_outputs },
    { "mode", ARROW_ALWAYS, cmd_mode },
    { "agree", ARROW_ALWAYS, cmd_agree },
};

static const command *find_command(const char *word, size_t n)
{
    size_t i;
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (cli_eq(word, n, commands[i].name))
            return &commands[i];
    return NULL;
}

/* ==== lines ================================================================ */

/* The offset of the first byte that is not valid UTF-8 (overlong forms,
 * surrogates and code points above U+10FFFF are invalid), or n. */
static size_t utf8_invalid_at(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        unsigned char lo = 0x80, hi = 0xBF;
        size_t k, more;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            more = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            more = 2;
            if (c == 0xE0)
                lo = 0xA0;
            else if (c == 0xED)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            more = 3;
            if (c == 0xF0)
                lo = 0x90;
            else if (c == 0xF4)
                hi = 0x8F;
        } else {
            return i;
        }
        if (n - i <= more)
            return i;
        for (k = 1; k <= more; k++) {
            unsigned char d = s[i + k];
            if (d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xBF))
                return i;
        }
        i += more + 1;
    }
    return n;
}

/* The length of the line without its comment: a `#` outside quotes. */
static size_t strip_comment(const char *s, size_t n)
{
    size_t i;
    char quote = 0;
    const char *hash = memchr(s, '#', n);
    if (!hash)
        return n;
    if (!memchr(s, '\'', (size_t)(hash - s)) && !memchr(s, '"', (size_t)(hash - s)))
        return (size_t)(hash - s); /* no quote before the first '#': it starts the comment */
    for (i = 0; i < n; i++) {
        char c = s[i];
        if (quote) {
            if (c == '\\' && i + 1 < n)
                i++;
            else if (c == quote)
                quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == '#') {
            return i;
        }
    }
    return n;
}

/* The offset of the arrow: the first `=>` outside quotes whose previous
 * character is not one of `<>=!`; n if there is none. */
static size_t find_arrow(const char *s, size_t n)
{
    size_t i;
    char quote = 0;
    if (!memchr(s, '\'', n) && !memchr(s, '"', n)) { /* no quotes: look at each '=' only */
        for (const char *e = memchr(s, '=', n); e && e + 1 < s + n; e = memchr(e + 1, '=', (size_t)(s + n - e - 1)))
            if (e[1] == '>' && (e == s || !strchr("<>=!", e[-1])))
                return (size_t)(e - s);
        return n;
    }
    for (i = 0; i + 1 < n; i++) {
        char c = s[i];
        if (quote) {
            if (c == '\\')
                i++;
            else if (c == quote)
                quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == '=' && s[i + 1] == '>' && (i == 0 || !strchr("<>=!", s[i - 1]))) {
            return i;
        }
    }
    return n;
}

typedef struct runner {
    FILE *out;
    size_t passed, failed;
} runner;

/* Commands longer than this are shortened in failure lines. */
#define REPORT_MAX_COMMAND 200

/* Print a failure line: "FILE:LINE: COMMAND: msg", or "FILE:LINE: msg"
 * without a command. A long command is cut at a UTF-8 character boundary. */
static void report(runner *r, const char *file, size_t lineno, const char *what, size_t whatn, const char *msg)
{
    r->failed++;
    fprintf(r->out, "%s:%zu: ", file, lineno);
    if (what) {
        int cut = whatn > REPORT_MAX_COMMAND;
        if (cut) {
            whatn = REPORT_MAX_COMMAND;
            while (whatn > 0 && (what[whatn] & 0xC0) == 0x80)
                whatn--;
        }
        fwrite(what, 1, whatn, r->out);
        fputs(cut ? "...: " : ": ", r->out);
    }
    fprintf(r->out, "%s\n", msg);
}

/* Before a case ends: a program that no command used is a failure (the
 * battery may have been cut off inside its block). */
static void report_unused_program(runner *r, const case_state *cs, const char *file)
{
    const char *parse_error;
    sg_status parse_status;
    size_t line = program_unused(cs, &parse_status, &parse_error);
    if (!line)
        return;
    cli_str why = CLI_STR_INIT;
    cli_str_adds(&why, "the case ends without a command that uses this program (trace, eager, run, ...): "
                       "is the file cut off?");
    if (parse_error)
        cli_str_addf(&why, " It does not parse: error %s (%s)", sg_status_kind(parse_status), parse_error);
    report(r, file, line, "program", 7, cli_str_get(&why));
    cli_str_free(&why);
}

/* `case NAME`: the end of one case and the start of the next. */
static int is_case_line(const char *s, size_t n)
{
    return n >= 4 && memcmp(s, "case", 4) == 0 && (n == 4 || cli_is_blank(s[4]));
}

/* Run one command line (already trimmed, no comment). */
static void run_command(runner *r, case_state *cs, const char *file, size_t lineno, const char *s, size_t n)
{
    size_t arrow = find_arrow(s, n), wordn = 0;
    const char *cmd = s, *args, *exp = NULL;
    size_t cmdn = arrow, argsn, expn = 0;
    const command *c;
    cli_str why = CLI_STR_INIT;
    cmd_line ln;
    char *argcopy, *expcopy = NULL;
    cmd_result res;

    cli_trim(&cmd, &cmdn);
    if (arrow < n) {
        exp = s + arrow + 2;
        expn = n - arrow - 2;
        cli_trim(&exp, &expn);
    }
    while (wordn < cmdn && !cli_is_blank(cmd[wordn]))
        wordn++;
    args = cmd + wordn;
    argsn = cmdn - wordn;
    cli_trim(&args, &argsn);

    if (cmdn == 0) {
        report(r, file, lineno, NULL, 0, "missing command before '=>'");
        return;
    }
    if (is_case_line(cmd, cmdn)) {
        report_unused_program(r, cs, file);
        case_end(cs);
        if (exp)
            report(r, file, lineno, cmd, cmdn, "'case' takes no '=>'");
        else if (argsn == 0)
            report(r, file, lineno, cmd, cmdn, "missing case name");
        return;
    }
    c = find_command(cmd, wordn);
    if (!c) {
        report(r, file, lineno, cmd, cmdn, "unknown command");
        return;
    }
    if (!c->run) {
        report(r, file, lineno, cmd, cmdn, "not implemented");
        return;
    }
    if (c->arrow == ARROW_ALWAYS && !exp) {
        report(r, file, lineno, cmd, cmdn, "missing '=> EXPECTED'");
        return;
    }
    if (c->arrow == ARROW_ALWAYS && expn == 0) {
        report(r, file, lineno, cmd, cmdn, "nothing expected after '=>'");
        return;
    }
    if (c->arrow == ARROW_NEVER && exp) {
        cli_str_addf(&why, "'%s' takes no '=>'", c->name);
        report(r, file, lineno, cmd, cmdn, cli_str_get(&why));
        cli_str_free(&why);
        return;
    }
    if (!cs->ctx && cli_ctx_new(&cs->ctx) != SG_OK) {
        cs->ctx = NULL;
        report(r, file, lineno, cmd, cmdn, "cannot make a context: out of memory");
        return;
    }
    argcopy = cli_xstrndup(args, argsn);
    if (exp)
        expcopy = cli_xstrndup(exp, expn);
    ln.args = argcopy;
    ln.expected = expcopy;
    sg_ctx_reset_error(cs->ctx);
    res = c->run(cs, cs->ctx, &ln, &why);
    if (res == CMD_PASS)
        r->passed++;
    else if (res == CMD_FAIL)
        report(r, file, lineno, cmd, cmdn, why.n ? cli_str_get(&why) : "failed");
    free(argcopy);
    free(expcopy);
    cli_str_free(&why);
}

/* Check and run one raw line (without its newline) of n bytes, whose first
 * m bytes come before its comment (strip_comment, found once by the caller). */
static void run_line(runner *r, case_state *cs, const char *file, size_t lineno, const char *s, size_t n, size_t m)
{
    const char *nul = memchr(s, '\0', n);
    size_t bad = utf8_invalid_at((const unsigned char *)s, n);
    char msg[96];

    if (nul) {
        snprintf(msg, sizeof msg, "line contains a NUL byte (column %zu)", (size_t)(nul - s) + 1);
        report(r, file, lineno, NULL, 0, msg);
        return;
    }
    if (bad < n) {
        snprintf(msg, sizeof msg, "invalid UTF-8 (byte 0x%02X at column %zu)", (unsigned char)s[bad], bad + 1);
        report(r, file, lineno, NULL, 0, msg);
        return;
    }
    n = m;
    cli_trim(&s, &n);
    if (n)
        run_command(r, cs, file, lineno, s, n);
}

/* Read the whole file. Returns 0, or an errno value. */
static int read_all(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int err = 0;

    *out = NULL;
    *len = 0;
    if (!f)
        return errno ? errno : EIO;
    for (;;) {
        size_t got;
        if (cap - n < 65536) {
            char *nb;
            size_t ncap = cap ? cap * 2 : 65536;
            if (ncap <= cap || !(nb = realloc(buf, ncap))) {
                err = ENOMEM;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                err = errno ? errno : EIO;
            break;
        }
    }
    fclose(f);
    if (err) {
        free(buf);
        return err;
    }
    *out = buf;
    *len = n;
    return 0;
}

/* A line `program` (a comment may follow); n: its length without the comment. */
static int is_program_line(const char *s, size_t n)
{
    cli_trim(&s, &n);
    return cli_eq(s, n, "program");
}

/* The block after a `program` line at line `at`: every following line that
 * is blank or starts with a blank. Its common indentation is removed and it
 * goes to program_block. Returns the offset after the block; *lineno is the
 * block's last line. */
static size_t run_program_block(runner *r, case_state *cs, const char *path, size_t at, const char *buf, size_t len,
                                size_t pos, size_t *lineno)
{
    size_t start = pos, end = pos, indent = SIZE_MAX, nlines = 0;
    if (start > len)
        start = end = pos = len;
    while (pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
        size_t k = 0;
        while (k < n && (buf[pos + k] == ' ' || buf[pos + k] == '\t' || buf[pos + k] == '\r'))
            k++;
        if (n && k == 0)
            break; /* a line starting with anything else ends the block */
        if (k < n && k < indent)
            indent = k;
        nlines++;
        pos += n + 1;
        end = pos < len ? pos : len;
    }
    if (indent == SIZE_MAX)
        indent = 0;
    cli_str src = CLI_STR_INIT, why = CLI_STR_INIT;
    for (size_t p = start; p < end;) {
        const char *nl = memchr(buf + p, '\n', end - p);
        size_t n = nl ? (size_t)(nl - (buf + p)) : end - p;
        if (n > indent)
            cli_str_addn(&src, buf + p + indent, n - indent);
        cli_str_adds(&src, "\n");
        p += n + 1;
    }
    if (memchr(cli_str_get(&src), '\0', src.n))
        report(r, path, at, "program", 7, "the block contains a NUL byte");
    else if (!cs->ctx && cli_ctx_new(&cs->ctx) != SG_OK) {
        cs->ctx = NULL;
        report(r, path, at, "program", 7, "cannot make a context: out of memory");
    } else if (program_block(cs, cli_str_get(&src), at + 1, &why) == CMD_FAIL)
        report(r, path, at, "program", 7, why.n ? cli_str_get(&why) : "failed");
    cli_str_free(&src);
    cli_str_free(&why);
    *lineno = at + nlines;
    return pos;
}

/* Run a file; before its last case ends, at_end (if not NULL) sees it. */
static void run_file(runner *r, const char *path, void (*at_end)(case_state *, void *), void *end_user)
{
    char *buf;
    size_t len, pos = 0, lineno = 0;
    case_state cs;
    int err;

    case_init(&cs);
    errno = 0;
    err = read_all(path, &buf, &len);
    if (err) {
        r->failed++;
        fprintf(r->out, "%s: cannot read: %s\n", path, strerror(err));
        return;
    }
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
        pos = 3;
    while (pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
        size_t m = strip_comment(buf + pos, n);
        ++lineno;
        if (is_program_line(buf + pos, m)) {
            pos = run_program_block(r, &cs, path, lineno, buf, len, pos + n + 1, &lineno);
            continue;
        }
        run_line(r, &cs, path, lineno, buf + pos, n, m);
        pos += n + 1;
    }
    if (at_end)
        at_end(&cs, end_user);
    report_unused_program(r, &cs, path);
    case_end(&cs);
    free(buf);
}

int cli_run_batteries(size_t nfiles, char *const *files, FILE *out)
{
    runner r = { out, 0, 0 };
    size_t i;
    for (i = 0; i < nfiles; i++)
        run_file(&r, files[i], NULL, NULL);
    fprintf(out, "%zu passed, %zu failed\n", r.passed, r.failed);
    fflush(out);
    return r.failed ? 1 : 0;
}

typedef struct guards_job {
    FILE *out, *err;
    int failed;
} guards_job;

static void print_guards_at_end(case_state *cs, void *user)
{
    guards_job *j = user;
    j->failed = case_print_guards(cs, j->out, j->err);
}

int cli_battery_guards(const char *file, FILE *out, FILE *err)
{
    runner r = { err, 0, 0 };
    guards_job j = { out, err, 0 };
    run_file(&r, file, print_guards_at_end, &j);
    return r.failed || j.failed ? 1 : 0;
}

typedef struct trace_job {
    FILE *out, *err;
    int dot, ok;
} trace_job;

static void print_trace_at_end(case_state *cs, void *user)
{
    trace_job *j = user;
    j->ok = program_print_graph(cs, j->dot, j->out, j->err);
}

int cli_battery_trace(const char *file, int dot, FILE *out, FILE *err)
{
    runner r = { err, 0, 0 };
    trace_job j = { out, err, dot, 0 };
    run_file(&r, file, print_trace_at_end, &j);
    return r.failed || !j.ok ? 1 : 0;
}
