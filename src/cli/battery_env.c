/* Battery commands of the shape environment: env, backed, unbacked, value,
 * evaluate, guard_or_false, guard_or_true, check, guards, asserts. */
#include <stdlib.h>
#include <string.h>

#include "battery.h"
#include "tensor.h"

/* The case's environment, made at its first use; facts assumed before it
 * existed are assumed again in it. NULL (why set) if it cannot be made. */
sg_env *case_env(case_state *cs, cli_str *why)
{
    if (cs->env)
        return cs->env;
    if (sg_env_new(cs->ctx, &cs->opts, &cs->env) != SG_OK || sg_symcache_new(cs->ctx, &cs->cache) != SG_OK ||
        sg_inputs_new(cs->env, cs->cache, &cs->inputs) != SG_OK) {
        sg_inputs_free(cs->inputs);
        sg_symcache_free(cs->cache);
        sg_env_free(cs->env);
        cs->inputs = NULL;
        cs->cache = NULL;
        cs->env = NULL;
        cli_str_adds(why, "cannot make a shape environment: out of memory");
        return NULL;
    }
    for (size_t i = 0; i < cs->nassumed; i++) {
        sg_status st = sg_facts_assume(sg_env_facts(cs->env), cs->assumed[i]);
        if (st != SG_OK && st != SG_EASSERT) {
            cli_str_add_error(why, cs->ctx, st);
            return NULL;
        }
    }
    sg_facts_free(cs->facts);
    cs->facts = NULL;
    return cs->env;
}

sg_inputs *case_inputs(case_state *cs, cli_str *why)
{
    return case_env(cs, why) ? cs->inputs : NULL;
}

static void bind_name(case_state *cs, const char *name, size_t n, const sg_expr *e)
{
    for (size_t i = 0; i < cs->nnames; i++)
        if (strlen(cs->names[i]) == n && !memcmp(cs->names[i], name, n)) {
            cs->named[i] = e;
            return;
        }
    cs->names = cli_xrealloc(cs->names, (cs->nnames + 1) * sizeof *cs->names);
    cs->named = cli_xrealloc(cs->named, (cs->nnames + 1) * sizeof *cs->named);
    cs->names[cs->nnames] = cli_xstrndup(name, n);
    cs->named[cs->nnames++] = e;
}

static int is_name_char(char c, int first)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
}

/* cli.h */
int cli_next_item(const char **p, const char **w, size_t *n)
{
    const char *s = *p;
    while (cli_is_blank(*s))
        s++;
    if (!*s)
        return 0;
    const char *e = s;
    int depth = 0;
    while (*e && (depth > 0 || !cli_is_blank(*e))) {
        if (*e == '[' || *e == '{')
            depth++;
        else if ((*e == ']' || *e == '}') && depth > 0)
            depth--;
        e++;
    }
    *w = s;
    *n = (size_t)(e - s);
    *p = e;
    return 1;
}

static int word_is(const char *w, size_t n, const char *lit)
{
    return strlen(lit) == n && !memcmp(w, lit, n);
}

/* An integer bound, -oo/oo (NULL), into *out. */
int cli_read_bound(sg_ctx *ctx, const char *w, size_t n, const sg_expr **out)
{
    cli_trim(&w, &n);
    if (word_is(w, n, "-oo") || word_is(w, n, "oo") || word_is(w, n, "+oo")) {
        *out = NULL;
        return 1;
    }
    char *t = cli_xstrndup(w, n);
    int ok = sg_expr_int_str(ctx, out, t) == SG_OK;
    free(t);
    return ok;
}

/* range=[LO, HI] into *r. */
static int read_range(sg_ctx *ctx, const char *w, size_t n, sg_interval *r, cli_str *why)
{
    const char *lo = w + 7, *comma = memchr(w, ',', n);
    if (n < 10 || w[n - 1] != ']' || !comma || !cli_read_bound(ctx, lo, (size_t)(comma - lo), &r->lo) ||
        !cli_read_bound(ctx, comma + 1, (size_t)(w + n - 1 - comma - 1), &r->hi)) {
        cli_str_addf(why, "bad range '%.*s' (range=[LO, HI])", (int)n, w);
        return 0;
    }
    return 1;
}

static int bind_source(case_state *cs, const sg_source *base, sg_source_kind kind, size_t i, const sg_expr *e)
{
    const sg_source *s;
    if (sg_source_property(cs->ctx, &s, base, kind, i) != SG_OK)
        return 0;
    bind_name(cs, sg_source_name(s), strlen(sg_source_name(s)), e);
    return 1;
}

static int bind_fake_at(case_state *cs, const sg_source *src, const sg_fake *f)
{
    for (size_t i = 0; i < f->ndim; i++)
        if (!bind_source(cs, src, SG_SOURCE_SIZE, i, f->sizes[i]) ||
            !bind_source(cs, src, SG_SOURCE_STRIDE, i, f->strides[i]))
            return 0;
    if (!bind_source(cs, src, SG_SOURCE_OFFSET, 0, f->offset))
        return 0;
    for (size_t i = 0; i < f->ninner; i++) {
        const sg_source *s;
        if (sg_source_attr(cs->ctx, &s, src, f->names[i]) != SG_OK || !bind_fake_at(cs, s, f->inner[i]))
            return 0;
    }
    return 1;
}

int case_bind_fake(case_state *cs, const sg_fake *f)
{
    const sg_source *src = sg_inputs_source(cs->inputs, sg_inputs_count(cs->inputs) - 1);
    return src && bind_fake_at(cs, src, f);
}

/* NAME at the start of *p (advanced past it). */
static int read_name(const char **p, const char **name, size_t *n, cli_str *why)
{
    const char *s = *p;
    while (cli_is_blank(*s))
        s++;
    const char *e = s;
    while (is_name_char(*e, e == s))
        e++;
    if (e == s) {
        cli_str_adds(why, "missing NAME");
        return 0;
    }
    *name = s;
    *n = (size_t)(e - s);
    *p = e;
    return 1;
}

/* env OPTION=VALUE ... */
cmd_result cmd_env(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    const char *p = ln->args, *w;
    size_t n;
    if (cs->env) {
        cli_str_adds(why, "'env' must come before the environment is used");
        return CMD_FAIL;
    }
    while (cli_next_item(&p, &w, &n)) {
        const char *eq = memchr(w, '=', n);
        if (!eq) {
            cli_str_addf(why, "'%.*s' is not OPTION=VALUE", (int)n, w);
            return CMD_FAIL;
        }
        size_t kn = (size_t)(eq - w), vn = n - kn - 1;
        const char *v = eq + 1;
        int *flag = word_is(w, kn, "duck_shape")                ? &cs->opts.duck_shape
                    : word_is(w, kn, "specialize_zero_one")     ? &cs->opts.specialize_zero_one
                    : word_is(w, kn, "assume_static_by_default") ? &cs->opts.assume_static_by_default
                    : word_is(w, kn, "prefer_runtime_asserts")  ? &cs->opts.prefer_runtime_asserts
                    : word_is(w, kn, "stable_names")            ? &cs->opts.stable_names
                                                                : NULL;
        if (flag && (word_is(v, vn, "true") || word_is(v, vn, "false"))) {
            *flag = word_is(v, vn, "true");
        } else if (word_is(w, kn, "guard_limit") && vn > 0 && vn < 10 && strspn(v, "0123456789") >= vn) {
            cs->opts.guard_limit = (unsigned)strtoul(v, NULL, 10);
        } else if (word_is(w, kn, "freeze") && (word_is(v, vn, "error") || word_is(v, vn, "ignore"))) {
            cs->opts.freeze_mode = word_is(v, vn, "error") ? SG_FREEZE_ERROR : SG_FREEZE_IGNORE;
        } else {
            cli_str_addf(why, "unknown option or value '%.*s'", (int)n, w);
            return CMD_FAIL;
        }
    }
    (void)ctx;
    return CMD_QUIET;
}

/* backed NAME = HINT [dynamic|duck|static] [size] [range=[LO, HI]] */
cmd_result cmd_backed(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    const char *p = ln->args, *name, *w;
    size_t nn, n;
    sg_env *env = case_env(cs, why);
    if (!env || !read_name(&p, &name, &nn, why))
        return CMD_FAIL;
    while (cli_is_blank(*p))
        p++;
    if (*p != '=') {
        cli_str_adds(why, "expected 'NAME = HINT'");
        return CMD_FAIL;
    }
    p++;
    const sg_expr *hint = NULL, *e;
    if (!cli_next_item(&p, &w, &n) || !cli_read_bound(ctx, w, n, &hint) || !hint) {
        cli_str_adds(why, "the hint must be an integer");
        return CMD_FAIL;
    }
    sg_dim_dynamic dyn = SG_DIM_DUCK;
    int size = 0, ranged = 0;
    sg_interval r = { NULL, NULL };
    while (cli_next_item(&p, &w, &n)) {
        if (word_is(w, n, "dynamic"))
            dyn = SG_DIM_DYNAMIC;
        else if (word_is(w, n, "duck"))
            dyn = SG_DIM_DUCK;
        else if (word_is(w, n, "static"))
            dyn = SG_DIM_STATIC;
        else if (word_is(w, n, "size"))
            size = 1;
        else if (n >= 7 && !strncmp(w, "range=[", 7)) {
            if (!read_range(ctx, w, n, &r, why))
                return CMD_FAIL;
            ranged = 1;
        } else {
            cli_str_addf(why, "unknown word '%.*s'", (int)n, w);
            return CMD_FAIL;
        }
    }
    char *source = cli_xstrndup(name, nn);
    const sg_source *src;
    sg_status st = sg_source_local(ctx, &src, source);
    if (st == SG_OK && sg_inputs_find(cs->inputs, sg_source_name(src)) >= 0) {
        cli_str_addf(why, "'%s' is a tensor input already", source);
        free(source);
        return CMD_FAIL;
    }
    sg_ctx_reset_error(ctx);
    st = sg_source_named(ctx, &src, source);
    if (st == SG_OK)
        st = sg_inputs_int(cs->inputs, src, hint, dyn, size ? SG_INPUT_SIZE : 0, ranged ? &r : NULL, &e);
    free(source);
    if (st != SG_OK) {
        cli_str_add_error(why, ctx, st);
        return CMD_FAIL;
    }
    bind_name(cs, name, nn, e);
    return CMD_QUIET;
}

/* unbacked NAME [size] [range=[LO, HI]] */
cmd_result cmd_unbacked(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    const char *p = ln->args, *name, *w;
    size_t nn, n;
    sg_env *env = case_env(cs, why);
    if (!env || !read_name(&p, &name, &nn, why))
        return CMD_FAIL;
    int size = 0, ranged = 0;
    sg_interval r = { NULL, NULL };
    while (cli_next_item(&p, &w, &n)) {
        if (word_is(w, n, "size")) {
            size = 1;
        } else if (n >= 7 && !strncmp(w, "range=[", 7)) {
            if (!read_range(ctx, w, n, &r, why))
                return CMD_FAIL;
            ranged = 1;
        } else {
            cli_str_addf(why, "unknown word '%.*s'", (int)n, w);
            return CMD_FAIL;
        }
    }
    const sg_expr *e;
    sg_status st = sg_env_create_unbacked(env, &e, NULL, size, ranged ? &r : NULL);
    if (st != SG_OK) {
        cli_str_add_error(why, ctx, st);
        return CMD_FAIL;
    }
    bind_name(cs, name, nn, e);
    return CMD_QUIET;
}

/* Compare an answer with the expected text: the word `answer` when st is
 * SG_OK, else `error KIND`. On a mismatch why says what was found. */
static cmd_result compare_word(sg_ctx *ctx, const char *expected, sg_status st, const char *answer, cli_str *why)
{
    cli_str got = CLI_STR_INIT;
    if (st == SG_OK)
        cli_str_adds(&got, answer);
    else
        cli_str_addf(&got, "error %s", sg_status_kind(st));
    cmd_result r = strcmp(cli_str_get(&got), expected) ? CMD_FAIL : CMD_PASS;
    if (r == CMD_FAIL) {
        cli_str_addf(why, "expected %s, got ", expected);
        if (st == SG_OK)
            cli_str_adds(why, answer);
        else
            cli_str_add_error(why, ctx, st);
    }
    cli_str_free(&got);
    return r;
}

/* Parse text in the case, or report why not. */
static int parse_in(case_state *cs, const char *what, const char *text, const sg_expr **out, cli_str *why)
{
    sg_status st = case_parse(cs, out, text, strlen(text));
    if (st == SG_OK)
        return 1;
    cli_str_addf(why, "cannot parse %s '%s': ", what, text);
    cli_str_add_error(why, cs->ctx, st);
    return 0;
}

/* value EXPR => EXPR2 */
cmd_result cmd_value(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    const sg_expr *a, *b;
    sg_env *env = case_env(cs, why);
    if (!env || !parse_in(cs, "the expected side", ln->expected, &b, why) ||
        !parse_in(cs, "the expression", ln->args, &a, why))
        return CMD_FAIL;
    sg_status st = sg_env_replace(env, &a, a);
    if (st == SG_OK)
        st = sg_env_replace(env, &b, b);
    if (st == SG_OK && a == b)
        return CMD_PASS;
    cli_str_adds(why, "expected ");
    cli_str_add_expr(why, ctx, b, SG_FMT_SG);
    cli_str_adds(why, ", got ");
    if (st != SG_OK)
        cli_str_add_error(why, ctx, st);
    else
        cli_str_add_expr(why, ctx, a, SG_FMT_SG);
    return CMD_FAIL;
}

typedef enum { ASK_EVALUATE, ASK_OR_FALSE, ASK_OR_TRUE } ask_kind;

static cmd_result ask(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why, ask_kind kind)
{
    const sg_expr *c;
    int v = 0;
    sg_env *env = case_env(cs, why);
    int wants_error = !strncmp(ln->expected, "error", 5);
    if (!env)
        return CMD_FAIL;
    if (strcmp(ln->expected, "true") && strcmp(ln->expected, "false") && !wants_error) {
        cli_str_addf(why, "bad expected side '%s' (true, false or error KIND)", ln->expected);
        return CMD_FAIL;
    }
    sg_status st = case_parse(cs, &c, ln->args, strlen(ln->args));
    if (st == SG_OK) {
        if (kind == ASK_EVALUATE)
            st = sg_env_evaluate(env, &v, c, ln->args);
        else
            st = sg_env_guard_or(env, &v, c, kind == ASK_OR_TRUE, ln->args);
    }
    return compare_word(ctx, ln->expected, st, v ? "true" : "false", why);
}

cmd_result cmd_evaluate(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    return ask(cs, ctx, ln, why, ASK_EVALUATE);
}

cmd_result cmd_guard_or_false(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    return ask(cs, ctx, ln, why, ASK_OR_FALSE);
}

cmd_result cmd_guard_or_true(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    return ask(cs, ctx, ln, why, ASK_OR_TRUE);
}

/* check BOOLEXPR => ok | error KIND */
cmd_result cmd_check(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    const sg_expr *c;
    sg_env *env = case_env(cs, why);
    if (!env)
        return CMD_FAIL;
    if (strcmp(ln->expected, "ok") && strncmp(ln->expected, "error", 5)) {
        cli_str_addf(why, "bad expected side '%s' (ok or error KIND)", ln->expected);
        return CMD_FAIL;
    }
    sg_status st = case_parse(cs, &c, ln->args, strlen(ln->args));
    if (st == SG_OK)
        st = sg_env_check(env, c, ln->args);
    return compare_word(ctx, ln->expected, st, "ok", why);
}

/* A set of boolean items, conjunctions split. */
typedef struct item_set {
    const sg_expr **v;
    size_t n;
} item_set;

static void set_add(item_set *s, const sg_expr *e)
{
    if (sg_expr_op(e) == SG_OP_AND) {
        for (size_t i = 0; i < sg_expr_nargs(e); i++)
            set_add(s, sg_expr_arg(e, i));
        return;
    }
    if (sg_expr_op(e) == SG_OP_TRUE)
        return;
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == e)
            return;
    s->v = cli_xrealloc(s->v, (s->n + 1) * sizeof *s->v);
    s->v[s->n++] = e;
}

static int set_equal(const item_set *a, const item_set *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++) {
        size_t j = 0;
        while (j < b->n && b->v[j] != a->v[i])
            j++;
        if (j == b->n)
            return 0;
    }
    return 1;
}

static int cmp_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The items printed, sorted, joined by "; " ("none" when empty). */
static void add_set(cli_str *s, sg_ctx *ctx, const item_set *set)
{
    if (!set->n) {
        cli_str_adds(s, "none");
        return;
    }
    char **t = cli_xmalloc(set->n * sizeof *t);
    for (size_t i = 0; i < set->n; i++) {
        cli_str one = CLI_STR_INIT;
        cli_str_add_expr(&one, ctx, set->v[i], SG_FMT_SG);
        t[i] = cli_xstrndup(cli_str_get(&one), strlen(cli_str_get(&one)));
        cli_str_free(&one);
    }
    qsort(t, set->n, sizeof *t, cmp_text);
    for (size_t i = 0; i < set->n; i++) {
        cli_str_addf(s, "%s%s", i ? "; " : "", t[i]);
        free(t[i]);
    }
    free(t);
}

/* Sources in the expected side of guards: the symbols of their names. */
static sg_status source_as_symbol(void *user, sg_ctx *ctx, const char *text, size_t len, int is_source,
                                  const sg_expr **out)
{
    (void)user;
    *out = NULL;
    if (!is_source)
        return SG_OK;
    char *name = cli_xstrndup(text, len);
    sg_status st = sg_expr_sym(ctx, out, name);
    free(name);
    return st;
}

/* Read "G1; G2; ..." or "none". resolve: identifiers as in the case (asserts)
 * or left as they are (guards: source names). */
static int read_set(case_state *cs, const char *text, int resolve, item_set *out, cli_str *why)
{
    if (!strcmp(text, "none"))
        return 1;
    const char *p = text;
    for (;;) {
        const char *semi = strchr(p, ';');
        size_t n = semi ? (size_t)(semi - p) : strlen(p);
        const char *q = p;
        cli_trim(&q, &n);
        const sg_expr *e;
        sg_parse_opts sources = { source_as_symbol, NULL, 0 };
        sg_status st = resolve ? case_parse(cs, &e, q, n) : sg_parse_n(cs->ctx, &e, q, n, &sources);
        if (st != SG_OK) {
            cli_str_addf(why, "cannot parse the expected item '%.*s': ", (int)n, q);
            cli_str_add_error(why, cs->ctx, st);
            return 0;
        }
        set_add(out, e);
        if (!semi)
            return 1;
        p = semi + 1;
    }
}

static cmd_result compare_sets(sg_ctx *ctx, const char *expected, item_set *want, item_set *got, cli_str *why)
{
    cmd_result r = set_equal(want, got) ? CMD_PASS : CMD_FAIL;
    if (r == CMD_FAIL) {
        cli_str_addf(why, "expected %s, got ", expected);
        add_set(why, ctx, got);
    }
    free(want->v);
    free(got->v);
    return r;
}

/* guards [all] => G1; G2; ... | none */
cmd_result cmd_guards(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    item_set want = { NULL, 0 }, got = { NULL, 0 };
    sg_env *env = case_env(cs, why);
    const sg_expr **items;
    size_t n;
    if (!env)
        return CMD_FAIL;
    if (ln->args[0] && strcmp(ln->args, "all")) {
        cli_str_adds(why, "'guards' takes no argument but 'all'");
        return CMD_FAIL;
    }
    if (!read_set(cs, ln->expected, 0, &want, why)) {
        free(want.v);
        return CMD_FAIL;
    }
    sg_status st = sg_env_produce_guards_flags(env, ln->args[0] ? SG_GUARDS_STATIC : 0, &items, &n);
    if (st != SG_OK) {
        free(want.v);
        cli_str_add_error(why, ctx, st);
        return CMD_FAIL;
    }
    for (size_t i = 0; i < n; i++)
        set_add(&got, items[i]);
    sg_free(items);
    return compare_sets(ctx, ln->expected, &want, &got, why);
}

/* asserts => A1; A2; ... | none */
cmd_result cmd_asserts(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    item_set want = { NULL, 0 }, got = { NULL, 0 };
    sg_env *env = case_env(cs, why);
    if (!env)
        return CMD_FAIL;
    if (ln->args[0]) {
        cli_str_adds(why, "'asserts' takes no argument");
        return CMD_FAIL;
    }
    if (!read_set(cs, ln->expected, 1, &want, why)) {
        free(want.v);
        return CMD_FAIL;
    }
    for (size_t i = 0; i < sg_env_nasserts(env); i++)
        set_add(&got, sg_env_assert(env, i, NULL));
    return compare_sets(ctx, ln->expected, &want, &got, why);
}

int case_print_guards(case_state *cs, FILE *out, FILE *err)
{
    return case_write_guards(cs, out, err, "");
}

int case_write_guards(case_state *cs, FILE *out, FILE *err, const char *indent)
{
    const sg_expr **items;
    char **texts;
    size_t n;
    if (!cs->env)
        return 0;
    sg_status st = sg_env_produce_guards_text(cs->env, 0, &items, &texts, NULL, &n);
    if (st != SG_OK) {
        sg_ctx *ctx = sg_env_ctx(cs->env);
        const char *msg = ctx && sg_ctx_last_error(ctx) == st ? sg_ctx_last_error_msg(ctx) : "";
        fprintf(err, "error %s%s%s\n", sg_status_kind(st), msg[0] ? ": " : "", msg);
        return 1;
    }
    for (size_t i = 0; i < n; i++) /* the two bounds of a range share their line */
        if (!i || strcmp(texts[i], texts[i - 1]))
            fprintf(out, "%s%s\n", indent, texts[i]);
    sg_env_free_guard_texts(texts, n);
    sg_free(items);
    return 0;
}
