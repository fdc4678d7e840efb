/* The shape environment: symbols with hints and sources, questions that
 * record guards, runtime assertions, unbacked bookkeeping, marks. Every piece
 * of knowledge is a fact of the environment's fact base; the lists below are
 * logs that only grow, so a mark is a set of lengths. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reason/reason_private.h"
#include "shapeguard/env.h"
#include "shapeguard/print.h"

typedef struct symrec {
    const sg_expr *sym;
    const sg_expr *hint; /* an INT node; NULL for unbacked */
    const sg_expr *ohint; /* SG_DIM_OBLIVIOUS_SIZE: the input's value (for the counterfactual) */
    char *source;        /* the first source (binding site), or NULL */
    char *binding;       /* unbacked: the output path that binds it, or NULL */
    bool backed, size_like, pending;
    bool duckable; /* made by duck sizing: an equal hint may reuse it */
    unsigned nguards;
    const sg_expr *renamed; /* sg_env_rename_unbacked: the symbol it stands for, or NULL */
    size_t renamed_fact;    /* the index of the fact that says so */
} symrec;

typedef struct input {
    char *source;
    const sg_expr *key;  /* the source interned as a symbol name (its id keys inidx), or NULL */
    const sg_expr *expr; /* what the input became: a symbol, a constant, an expression */
    unsigned flags;      /* SG_INPUT_* */
} input;

typedef struct logged {
    const sg_expr *e;
    char *text;         /* provenance of a guard, message of an assertion */
    const sg_expr *key; /* an assertion's newest unbacked symbol (NULL if none) */
} logged;

struct sg_env {
    sg_ctx *ctx;
    uint64_t serial;
    sg_env_options opt;
    sg_facts *facts;
    symrec *syms;
    size_t nsyms, capsyms;
    sg__idmap symidx; /* symbol id -> index in syms */
    input *inputs;
    size_t ninputs, capinputs;
    logged *guards, *asserts;
    size_t nguards, capguards, nasserts, capasserts;
    sg__nodememo hints; /* expression -> its value at the hints (symbols' hints never change) */
    size_t *bindings; /* indexes of symbols bound, in order (undone by marks) */
    size_t nbindings, capbindings;
    uint32_t nbacked, nunbacked;
    bool frozen;
    size_t ignored;
    uint64_t restores; /* rollbacks (marks: a state seen again after one is another) */
    /* final answers of evaluate by condition id (answer + 1): knowledge only
     * grows, so an answer once given stays right; cleared by a mark restore */
    sg__idmap answers;
    /* Lookups by key instead of scans (the source-to-symbol cache's way: a
     * source interned as a symbol name has an id). inidx: the key of a
     * source -> its index in inputs; duckidx[size_like]: the id of a hint ->
     * the index in syms of the first duckable symbol with that hint. An entry
     * is used only if it still names what it was put for (i < n and the
     * record matches), so a rollback that truncates the logs leaves nothing
     * to clean; a put that fails (out of memory) sets unindexed, and the
     * lookups scan from then on. */
    sg__idmap inidx, duckidx[2];
    bool unindexed;
};

#define GROW(ptr, n, cap) sg__grow(ctx, (void **)&(ptr), &(cap), (n) + 1, sizeof *(ptr))

void sg_env_options_default(sg_env_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->duck_shape = 1;
    o->specialize_zero_one = 1;
    o->freeze_mode = SG_FREEZE_ERROR;
}

static symrec *rec_of(const sg_env *env, const sg_expr *sym)
{
    size_t *i = sg__idmap_find(&env->symidx, sym->id);
    return i ? &env->syms[*i] : NULL;
}

/* Does e hold a floor division (by anything but 1) or a modulo? *budget
 * counts the nodes left to look at; past it, e counts as holding one. */
static bool has_division(const sg_expr *e, size_t *budget)
{
    if (e->nargs == 0)
        return false;
    if (*budget == 0)
        return true;
    --*budget;
    if (e->op == SG_OP_MOD)
        return true;
    if ((e->op == SG_OP_FLOORDIV || e->op == SG_OP_CLEANDIV) &&
        !(e->args[1]->op == SG_OP_INT && fmpz_is_one(&e->args[1]->u.val)))
        return true;
    for (size_t i = 0; i < e->nargs; i++)
        if (has_division(e->args[i], budget))
            return true;
    return false;
}

/* PyTorch's order of the symbols to solve for (_smart_symbol_sort, taken
 * in reverse): is backed symbol a before backed symbol b? The larger hint
 * first, then the name later in string order (s9 before s10). */
static bool solved_before(const symrec *a, const symrec *b)
{
    int c = fmpz_cmp(&a->hint->u.val, &b->hint->u.val);
    return c ? c > 0 : strcmp(a->sym->u.name, b->sym->u.name) > 0;
}

/* The replacement policy: may the equality sym == value, solved from one
 * that holds, replace sym? PyTorch's _maybe_guard_rel and _set_replacement:
 *  - no replacement from an equality that holds a floor division or a
 *    modulo (value holds one; a modulo gives a divisibility fact instead);
 *  - an unbacked symbol (PyTorch's trivial solution, which prefers the
 *    backed side) by an expression without unbacked symbols other than
 *    inputs (the time-travel hazard: an unbacked symbol made by the trace
 *    never stands for another one);
 *  - a backed symbol only by an expression of backed symbols, and only when
 *    it comes first in PyTorch's order of the equality's symbols (the
 *    largest hint, then the last name): PyTorch solves for that one alone;
 *  - an input (a symbol with a source) only by an expression of inputs;
 *  - nothing from an equality of more than 5 symbols ("in case of really
 *    gnarly expression, we don't blow up").
 * Symbols the environment did not make (free symbols of a battery, the
 * fresh symbols of divisibility) may replace only unbacked non-inputs, and
 * may be replaced freely. (PyTorch also skips a replacement whose value's
 * range is not within the symbol's; the facts keep both ranges here.) */
static bool may_replace(void *user, const sg_expr *sym, const sg_expr *value)
{
    sg_env *env = user;
    size_t *ri = sg__idmap_find(&env->symidx, sym->id);
    if (!ri)
        return true;
    const symrec *r = &env->syms[*ri];
    if (r->renamed && r->renamed == value) /* PyTorch's _rename_unbacked_to: asked for */
        return true;
    size_t budget = 256;
    if (has_division(value, &budget))
        return false;
    const sg_expr **fs;
    size_t n;
    if (sg_expr_free_symbols(env->ctx, &fs, &n, value) != SG_OK)
        return false;
    bool ok = n + 1 <= 5; /* PyTorch leaves equalities of more than 5 symbols alone */
    for (size_t i = 0; i < n && ok; i++) {
        size_t *qi = sg__idmap_find(&env->symidx, fs[i]->id);
        if (!qi) {
            ok = !r->backed && !r->source;
            continue;
        }
        const symrec *q = &env->syms[*qi];
        if (r->backed)
            ok = q->backed && solved_before(r, q);
        else if (r->source)
            ok = q->source != NULL;
        else
            ok = q->backed || q->source;
    }
    sg_free(fs);
    return ok;
}

sg_status sg_env_new(sg_ctx *ctx, const sg_env_options *opts, sg_env **out)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out)
        return sg__err(ctx, SG_EINVAL, "sg_env_new: out is NULL");
    *out = NULL;
    sg_env *env = sg__calloc(ctx, 1, sizeof *env);
    if (!env)
        return sg__nomem(ctx);
    env->ctx = ctx;
    env->serial = ++ctx->envs;
    if (opts)
        env->opt = *opts;
    else
        sg_env_options_default(&env->opt);
    if ((unsigned)env->opt.freeze_mode > SG_FREEZE_IGNORE) {
        int mode = (int)env->opt.freeze_mode;
        sg_free(env);
        return sg__err(ctx, SG_EINVAL, "sg_env_new: unknown freeze mode %d", mode);
    }
    sg_status s = sg_facts_new(ctx, &env->facts);
    if (s || !sg__idmap_init(ctx, &env->symidx, 16) || !sg__idmap_init(ctx, &env->answers, 64) ||
        !sg__idmap_init(ctx, &env->inidx, 16) || !sg__idmap_init(ctx, &env->duckidx[0], 16) ||
        !sg__idmap_init(ctx, &env->duckidx[1], 16)) {
        sg_env_free(env);
        return s ? s : sg__nomem(ctx);
    }
    sg__facts_set_policy(env->facts, may_replace, env);
    *out = env;
    return SG_OK;
}

static void free_logged(logged *l, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        sg_free(l[i].text);
}

void sg_env_free(sg_env *env)
{
    if (!env)
        return;
    for (size_t i = 0; i < env->nsyms; i++) {
        sg_free(env->syms[i].source);
        sg_free(env->syms[i].binding);
    }
    for (size_t i = 0; i < env->ninputs; i++)
        sg_free(env->inputs[i].source);
    free_logged(env->guards, 0, env->nguards);
    free_logged(env->asserts, 0, env->nasserts);
    sg__nodememo_free(&env->hints);
    sg_free(env->syms);
    sg_free(env->inputs);
    sg_free(env->guards);
    sg_free(env->asserts);
    sg_free(env->bindings);
    sg__idmap_free(&env->symidx);
    sg__idmap_free(&env->answers);
    sg__idmap_free(&env->inidx);
    sg__idmap_free(&env->duckidx[0]);
    sg__idmap_free(&env->duckidx[1]);
    sg_facts_free(env->facts);
    sg_free(env);
}

sg_facts *sg_env_facts(sg_env *env)
{
    return env ? env->facts : NULL;
}

/* ---- symbols ------------------------------------------------------------ */

/* The index of the first duckable symbol with hint and size_like is_size
 * that duckidx names, or SIZE_MAX. */
static size_t duck_index(const sg_env *env, const sg_expr *hint, bool is_size)
{
    size_t *i = sg__idmap_find(&env->duckidx[is_size], hint->id);
    if (!i || *i >= env->nsyms)
        return SIZE_MAX;
    const symrec *r = &env->syms[*i];
    return r->duckable && r->hint == hint && r->size_like == is_size ? *i : SIZE_MAX;
}

static sg_status add_symrec(sg_env *env, const symrec *r)
{
    sg_ctx *ctx = env->ctx;
    if (!GROW(env->syms, env->nsyms, env->capsyms) || !sg__idmap_put(&env->symidx, r->sym->id, env->nsyms))
        return sg__nomem(env->ctx);
    if (r->duckable && r->hint && duck_index(env, r->hint, r->size_like) == SIZE_MAX &&
        !sg__idmap_put(&env->duckidx[r->size_like], r->hint->id, env->nsyms))
        env->unindexed = true; /* out of memory: duck_symbol scans */
    env->syms[env->nsyms++] = *r;
    return SG_OK;
}

/* The key of source in inidx (an interned symbol of that name), or NULL
 * (an empty name, or out of memory: the caller scans). */
static const sg_expr *source_key(const sg_env *env, const char *source)
{
    const sg_expr *k;
    return *source && sg_expr_sym(env->ctx, &k, source) == SG_OK ? k : NULL;
}

static sg_status add_input(sg_env *env, const char *source, const sg_expr *e, unsigned flags)
{
    sg_ctx *ctx = env->ctx;
    char *s = sg__strdup(ctx, source);
    if (!s || !GROW(env->inputs, env->ninputs, env->capinputs)) {
        sg_free(s);
        return sg__nomem(env->ctx);
    }
    const sg_expr *key = source_key(env, source);
    if (!key || !sg__idmap_put(&env->inidx, key->id, env->ninputs))
        env->unindexed = true; /* source_taken scans */
    env->inputs[env->ninputs].source = s;
    env->inputs[env->ninputs].key = key;
    env->inputs[env->ninputs].expr = e;
    env->inputs[env->ninputs].flags = flags;
    env->ninputs++;
    return SG_OK;
}

/* Is source an input already? A hash lookup (a scan when unindexed). */
static bool source_taken(const sg_env *env, const char *source)
{
    if (!env->unindexed) {
        const sg_expr *key = source_key(env, source);
        if (key) {
            size_t *i = sg__idmap_find(&env->inidx, key->id);
            return i && *i < env->ninputs && env->inputs[*i].key == key;
        }
    }
    for (size_t i = 0; i < env->ninputs; i++)
        if (!strcmp(env->inputs[i].source, source))
            return true;
    return false;
}

/* lo <= sym <= hi as facts (NULL: no bound). */
static sg_status assume_range(sg_env *env, const sg_expr *sym, const sg_expr *lo, const sg_expr *hi)
{
    const sg_expr *c;
    sg_status s = SG_OK;
    if (lo && !(s = sg_expr_rel(env->ctx, &c, SG_REL_GE, sym, lo)))
        s = sg_facts_assume(env->facts, c);
    if (!s && hi && !(s = sg_expr_rel(env->ctx, &c, SG_REL_LE, sym, hi)))
        s = sg_facts_assume(env->facts, c);
    return s;
}

static bool in_range(const sg_expr *v, const sg_interval *r)
{
    if (!r)
        return true;
    if (r->lo && fmpz_cmp(&v->u.val, &r->lo->u.val) < 0)
        return false;
    if (r->hi && fmpz_cmp(&v->u.val, &r->hi->u.val) > 0)
        return false;
    return true;
}

static sg_status check_range_arg(sg_env *env, const char *fn, const sg_interval *r)
{
    if (!r)
        return SG_OK;
    if ((r->lo && r->lo->op != SG_OP_INT) || (r->hi && r->hi->op != SG_OP_INT))
        return sg__err(env->ctx, SG_EINVAL, "%s: a range bound is not an integer constant", fn);
    if (r->lo && r->hi && fmpz_cmp(&r->lo->u.val, &r->hi->u.val) > 0)
        return sg__err(env->ctx, SG_EINVAL, "%s: empty range", fn);
    return SG_OK;
}

/* A new symbol: s<N> or u<N>; under the option stable_names, for an input
 * with a source, s_ or u_ and the source, every run of characters other
 * than letters, digits and _ made one _ and trailing ones dropped
 * (L['x'].size()[0] gives s_L_x_size_0); a name the environment has
 * already gets _2, _3, ... The counters advance either way. */
static sg_status new_symbol(sg_env *env, const sg_expr **out, bool backed, const char *source)
{
    sg_ctx *ctx = env->ctx;
    char num[32], *name = num;
    snprintf(num, sizeof num, "%c%u", backed ? 's' : 'u', backed ? env->nbacked : env->nunbacked);
    size_t len = 0;
    if (env->opt.stable_names && source) {
        if (!(name = sg__malloc(ctx, strlen(source) + 32)))
            return sg__nomem(env->ctx);
        name[len++] = backed ? 's' : 'u';
        name[len++] = '_';
        for (const char *c = source; *c; c++) {
            bool word = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_';
            if (word)
                name[len++] = *c;
            else if (name[len - 1] != '_')
                name[len++] = '_';
        }
        while (len > 2 && name[len - 1] == '_')
            len--;
        name[len] = 0;
    }
    sg_status s = sg_expr_sym(env->ctx, out, name);
    for (unsigned k = 2; !s && name != num && rec_of(env, *out); k++) {
        snprintf(name + len, 32, "_%u", k);
        s = sg_expr_sym(env->ctx, out, name);
    }
    if (name != num)
        sg_free(name);
    if (!s) {
        if (backed)
            env->nbacked++;
        else
            env->nunbacked++;
    }
    return s;
}

/* Undo a half-made input: facts, records and counters back to the mark. */
static void rollback(sg_env *env, const sg_env_mark *m);

static sg_status make_unbacked(sg_env *env, const sg_expr **out, const char *source, int size_like,
                               const sg_interval *user_range)
{
    sg_ctx *ctx = env->ctx;
    const sg_expr *sym;
    sg_status s = new_symbol(env, &sym, false, source);
    if (s)
        return s;
    symrec r = {.sym = sym, .size_like = size_like != 0, .pending = true};
    if (source && !(r.source = sg__strdup(ctx, source)))
        return sg__nomem(env->ctx);
    if ((s = add_symrec(env, &r))) {
        sg_free(r.source);
        return s;
    }
    if (size_like && (s = assume_range(env, sym, env->ctx->zero, NULL)))
        return s;
    if (user_range && (s = assume_range(env, sym, user_range->lo, user_range->hi)))
        return s;
    *out = sym;
    return SG_OK;
}

sg_status sg_env_create_unbacked(sg_env *env, const sg_expr **out, const char *source, int size_like,
                                 const sg_interval *user_range)
{
    if (!env)
        return SG_EINVAL;
    if (!out)
        return sg__err(env->ctx, SG_EINVAL, "sg_env_create_unbacked: out is NULL");
    *out = NULL;
    sg_status s = check_range_arg(env, "sg_env_create_unbacked", user_range);
    if (s)
        return s;
    if (source && source_taken(env, source))
        return sg__err(env->ctx, SG_EINVAL, "sg_env_create_unbacked: source '%s' is already an input", source);
    sg_env_mark m;
    sg_env_mark_take(env, &m);
    s = make_unbacked(env, out, source, size_like, user_range);
    if (!s && source)
        s = add_input(env, source, *out, 0);
    if (s) {
        rollback(env, &m);
        *out = NULL;
        return s == SG_EASSERT ? sg__err(env->ctx, SG_EINVAL, "sg_env_create_unbacked: the range contradicts what is known") : s;
    }
    return SG_OK;
}

/* The symbol of an equal hint made under duck sizing, or NULL. */
static const sg_expr *duck_symbol(const sg_env *env, const sg_expr *hint, bool is_size)
{
    if (!env->unindexed) {
        size_t i = duck_index(env, hint, is_size);
        return i == SIZE_MAX ? NULL : env->syms[i].sym;
    }
    for (size_t i = 0; i < env->nsyms; i++) {
        const symrec *r = &env->syms[i];
        if (r->duckable && r->hint == hint && r->size_like == is_size)
            return r->sym;
    }
    return NULL;
}

sg_status sg_env_create_backed(sg_env *env, const sg_expr **out, const char *source, const sg_expr *hint,
                               sg_dim_dynamic dyn, unsigned flags, const sg_interval *user_range)
{
    bool is_size = flags & SG_INPUT_SIZE;
    if (!env)
        return SG_EINVAL;
    sg_ctx *ctx = env->ctx;
    if (!out || !source || !hint)
        return sg__err(ctx, SG_EINVAL, "sg_env_create_backed: NULL argument");
    *out = NULL;
    if (hint->op != SG_OP_INT)
        return sg__err(ctx, SG_EINVAL, "sg_env_create_backed: the hint of %s is not an integer constant", source);
    if ((unsigned)dyn > SG_DIM_OBLIVIOUS_SIZE)
        return sg__err(ctx, SG_EINVAL, "sg_env_create_backed: unknown policy %d", (int)dyn);
    sg_status s = check_range_arg(env, "sg_env_create_backed", user_range);
    if (s)
        return s;
    if (source_taken(env, source))
        return sg__err(ctx, SG_EINVAL, "sg_env_create_backed: source '%s' is already an input", source);
    if (is_size && fmpz_sgn(&hint->u.val) < 0)
        return sg__err(ctx, SG_EINVAL, "sg_env_create_backed: %s is a size, but its hint is negative", source);
    if (!in_range(hint, user_range)) {
        char *h = NULL;
        if (sg_expr_num_str(ctx, &h, hint, SIZE_MAX) != SG_OK)
            h = NULL;
        s = sg__err(ctx, SG_EINVAL, "sg_env_create_backed: the hint %s of %s is not in the range given", h ? h : "?",
                    source);
        sg_free(h);
        return s;
    }
    sg_env_mark m;
    sg_env_mark_take(env, &m);
    const sg_expr *e = NULL;
    bool zero_one = is_size && env->opt.specialize_zero_one && (hint == ctx->zero || hint == ctx->one);
    if (dyn == SG_DIM_SIZE_LIKE_UNBACKED || dyn == SG_DIM_OBLIVIOUS_SIZE) {
        s = make_unbacked(env, &e, source, 1, user_range);
        if (!s) { /* an input: bound by its source, not pending */
            symrec *r = rec_of(env, e);
            r->pending = false;
            if (dyn == SG_DIM_OBLIVIOUS_SIZE)
                r->ohint = hint;
        }
    } else if (dyn == SG_DIM_STATIC || (dyn == SG_DIM_DUCK && env->opt.assume_static_by_default) || zero_one) {
        e = hint;
    } else if (dyn == SG_DIM_DUCK && env->opt.duck_shape && !user_range && (e = duck_symbol(env, hint, is_size))) {
        /* duck sizing: the symbol of the equal hint */
    } else {
        s = new_symbol(env, &e, true, source);
        symrec r = {.sym = e, .hint = hint, .backed = true, .size_like = is_size,
                    .duckable = dyn == SG_DIM_DUCK && !user_range};
        if (!s && !(r.source = sg__strdup(ctx, source)))
            s = sg__nomem(ctx);
        if (!s && (s = add_symrec(env, &r)))
            sg_free(r.source);
        if (!s && is_size) {
            const sg_expr *lo = env->opt.specialize_zero_one ? sg__int_si(ctx, 2) : ctx->zero;
            s = lo ? assume_range(env, e, lo, NULL) : ctx->err;
        }
        if (!s && user_range)
            s = assume_range(env, e, user_range->lo, user_range->hi);
    }
    if (!s)
        s = add_input(env, source, e, flags);
    if (s) {
        rollback(env, &m);
        return s == SG_EASSERT ? sg__err(ctx, SG_EINVAL, "sg_env_create_backed: the range of %s is empty", source) : s;
    }
    *out = e;
    return SG_OK;
}

sg_status sg_env_add_input(sg_env *env, const char *source, const sg_expr *e, unsigned flags)
{
    if (!env)
        return SG_EINVAL;
    if (!source || !e)
        return sg__err(env->ctx, SG_EINVAL, "sg_env_add_input: NULL argument");
    if (e->sort != SG_SORT_INT)
        return sg__err(env->ctx, SG_EINVAL, "sg_env_add_input: the value of %s is not an integer", source);
    if (source_taken(env, source))
        return sg__err(env->ctx, SG_EINVAL, "sg_env_add_input: source '%s' is already an input", source);
    const sg_expr **fs;
    size_t nfs;
    sg_status s = sg_expr_free_symbols(env->ctx, &fs, &nfs, e);
    if (s)
        return s;
    for (size_t i = 0; i < nfs && !s; i++)
        if (!rec_of(env, fs[i]))
            s = sg__err(env->ctx, SG_EINVAL, "sg_env_add_input: the value of %s holds %s, not a symbol of the environment",
                        source, sg_expr_sym_name(fs[i]));
    sg_free(fs);
    return s ? s : add_input(env, source, e, flags & ~SG_INPUT_SIZE);
}

uint64_t sg_env_serial(const sg_env *env)
{
    return env ? env->serial : 0;
}

sg_ctx *sg_env_ctx(const sg_env *env)
{
    return env ? env->ctx : NULL;
}

const sg_expr *sg_env_symbol(const sg_env *env, const char *name)
{
    if (!env || !name)
        return NULL;
    const sg_expr *s; /* symbols are interned by name: the node of that name, if it is one of env's */
    if (*name && sg_expr_sym(env->ctx, &s, name) == SG_OK)
        return rec_of(env, s) ? s : NULL;
    for (size_t i = 0; i < env->nsyms; i++) /* an empty name, or out of memory */
        if (!strcmp(env->syms[i].sym->u.name, name))
            return env->syms[i].sym;
    return NULL;
}

sg_status sg_env_replace(sg_env *env, const sg_expr **out, const sg_expr *e)
{
    if (!env)
        return SG_EINVAL;
    if (!out || !e)
        return sg__err(env->ctx, SG_EINVAL, "sg_env_replace: NULL argument");
    *out = sg__facts_replace(env->facts, e);
    return *out ? SG_OK : env->ctx->err;
}

/* ---- hints ---------------------------------------------------------------- */

/* Which values hint_value gives the symbols of SG_DIM_OBLIVIOUS_SIZE inputs. */
typedef enum { OBL_NONE, OBL_REAL, OBL_AT_LEAST_2 } obl_mode;

/* The value of e at the hints (and, by mode, at the values of the oblivious
 * inputs). SG_EDATADEP (message set by the caller) when a symbol has none. */
static sg_status hint_value_mode(sg_env *env, const sg_expr *e, const sg_expr **out, obl_mode mode)
{
    sg_ctx *ctx = env->ctx;
    const sg_expr **fs;
    size_t n;
    sg_status s = sg_expr_free_symbols(env->ctx, &fs, &n, e);
    if (s)
        return s;
    const sg_expr **vals = sg__malloc(ctx, (n ? n : 1) * sizeof *vals);
    if (!vals) {
        sg_free(fs);
        return sg__nomem(env->ctx);
    }
    for (size_t i = 0; i < n && !s; i++) {
        symrec *r = rec_of(env, fs[i]);
        vals[i] = !r ? NULL : r->hint ? r->hint : mode == OBL_NONE ? NULL : r->ohint;
        if (!vals[i])
            s = SG_EDATADEP;
        else if (!r->hint && mode == OBL_AT_LEAST_2 && fmpz_cmp_si(&vals[i]->u.val, 2) < 0 &&
                 !(vals[i] = sg__int_si(env->ctx, 2)))
            s = SG_ENOMEM;
    }
    if (!s)
        s = sg_expr_eval(env->ctx, out, e, n, fs, vals);
    sg_free(vals);
    sg_free(fs);
    return s;
}

/* Remembered per expression: a trace asks of the same sizes again and again.
 * A leaf is answered at once: a constant is its own value, an integer
 * symbol with a hint has that hint (an interned constant, what evaluating
 * it gives); the others (no hint: SG_EDATADEP) take the general path. */
static sg_status hint_value(sg_env *env, const sg_expr *e, const sg_expr **out)
{
    const sg_expr *v = NULL;
    if (e->op == SG_OP_INT || e->op == SG_OP_TRUE || e->op == SG_OP_FALSE) {
        v = e;
    } else if (e->op == SG_OP_SYM && e->sort == SG_SORT_INT) {
        const symrec *r = rec_of(env, e);
        v = r ? r->hint : NULL;
    } else if (e->nargs) {
        v = sg__nodememo_get(&env->hints, e);
    }
    if (v) {
        *out = v;
        return SG_OK;
    }
    sg_status s = hint_value_mode(env, e, out, OBL_NONE);
    if (!s && e->nargs)
        sg__nodememo_put(env->ctx, &env->hints, e, *out); /* a cache: out of memory only costs the next lookup */
    return s;
}

/* PyTorch's counterfactual for SG_DIM_OBLIVIOUS_SIZE inputs: e's value when
 * those inputs take their values, if it is the same when each takes
 * max(2, value) instead (so the answer does not hang on a 0 or 1 that
 * size-oblivious reasoning rules out). Every other symbol of e must have a
 * hint (PyTorch asks that e have no other symbol at all; a backed symbol's
 * hint is as good). SG_EDATADEP if there is no such value. */
static sg_status counterfactual_value(sg_env *env, const sg_expr *e, const sg_expr **out)
{
    const sg_expr *real, *cf;
    sg_status s = hint_value_mode(env, e, &real, OBL_REAL);
    if (!s)
        s = hint_value_mode(env, e, &cf, OBL_AT_LEAST_2);
    if (!s && real != cf)
        s = SG_EDATADEP;
    if (!s)
        *out = real;
    return s;
}

sg_status sg_env_hint(sg_env *env, const sg_expr **out, const sg_expr *e)
{
    if (!env)
        return SG_EINVAL;
    if (!out || !e)
        return sg__err(env->ctx, SG_EINVAL, "sg_env_hint: NULL argument");
    *out = NULL;
    sg_status s = hint_value(env, e, out);
    if (s == SG_EDATADEP)
        s = counterfactual_value(env, e, out);
    if (s == SG_EDATADEP)
        return sg__err(env->ctx, s, "the expression has a symbol without a hint");
    return s;
}

/* ---- guards ------------------------------------------------------------- */

static sg_status print_to(sg_env *env, char **out, const sg_expr *e)
{
    return sg_print(env->ctx, out, e, SG_FMT_SG);
}

/* The data-dependent error for cond: the expression, its unbacked symbols,
 * and the two checks that would settle it. */
static sg_status data_dependent(sg_env *env, const sg_expr *cond, bool is_int)
{
    char *text = NULL, *neg = NULL;
    const sg_expr **fs;
    size_t n;
    char syms[512] = "";
    if (sg_expr_free_symbols(env->ctx, &fs, &n, cond) == SG_OK) {
        size_t used = 0;
        for (size_t i = 0; i < n && used + 40 < sizeof syms; i++) {
            symrec *r = rec_of(env, fs[i]);
            if (r && r->backed)
                continue;
            used += (size_t)snprintf(syms + used, sizeof syms - used, "%s%s", used ? ", " : "", fs[i]->u.name);
        }
        sg_free(fs);
    }
    const sg_expr *nc = cond->sort == SG_SORT_BOOL ? sg__not(env->ctx, cond) : NULL;
    if (print_to(env, &text, cond) != SG_OK)
        text = NULL;
    if (nc && print_to(env, &neg, nc) != SG_OK)
        neg = NULL;
    sg_status s;
    if (is_int)
        s = sg__err(env->ctx, SG_EDATADEP,
                    "could not find the value of the data-dependent expression %s (unbacked symbols: %s)",
                    text ? text : "?", syms[0] ? syms : "none");
    else
        s = sg__err(env->ctx, SG_EDATADEP,
                    "could not guard on the data-dependent expression %s (unbacked symbols: %s); to settle it, "
                    "check one of: 1. %s  2. %s",
                    text ? text : "?", syms[0] ? syms : "none", text ? text : "?", neg ? neg : "?");
    sg_free(text);
    sg_free(neg);
    return s;
}

static sg_status specialize(sg_env *env, symrec *r);

/* The symbols fs[0 .. n) of a fact just assumed whose range the facts
 * have narrowed to one value become that value (PyTorch's
 * range_refined_to_singleton): the fact sym == value, implied by what is
 * known, so no guard of its own; the guards then state sym == value
 * through the replacement. Errors: SG_ENOMEM (the caller undoes the fact). */
static sg_status refine_singletons(sg_env *env, const sg_expr *const *fs, size_t n)
{
    sg_status s = SG_OK;
    for (size_t i = 0; i < n && !s; i++) {
        sg_interval iv;
        const sg_expr *now = sg__facts_replace(env->facts, fs[i]), *eq;
        if (!now)
            s = SG_ENOMEM;
        else if (now == fs[i] && !(s = sg_facts_range(env->facts, &iv, fs[i])) && iv.lo && iv.lo == iv.hi &&
                 !(s = sg_expr_rel(env->ctx, &eq, SG_REL_EQ, fs[i], iv.lo)))
            s = sg_facts_assume(env->facts, eq);
    }
    return s;
}

/* Record the guard g (true at the hints). */
static sg_status record_guard(sg_env *env, const sg_expr *g, const char *provenance)
{
    sg_ctx *ctx = env->ctx;
    if (g->op == SG_OP_TRUE)
        return SG_OK;
    if (env->frozen) {
        if (env->opt.freeze_mode == SG_FREEZE_IGNORE) {
            env->ignored++;
            return SG_OK;
        }
        char *t = NULL;
        if (print_to(env, &t, g) != SG_OK)
            t = NULL;
        sg_status s = sg__err(env->ctx, SG_EASSERT, "the environment is frozen: guard %s refused", t ? t : "?");
        sg_free(t);
        return s;
    }
    const sg_expr **fs = NULL;
    size_t n;
    char *prov = sg__strdup(ctx, provenance);
    if (!prov || !GROW(env->guards, env->nguards, env->capguards) ||
        sg_expr_free_symbols(env->ctx, &fs, &n, g) != SG_OK) {
        sg_free(prov);
        return sg__nomem(env->ctx);
    }
    size_t nfacts = sg_facts_count(env->facts);
    sg_status s = sg_facts_assume(env->facts, g);
    if (!s && (s = refine_singletons(env, fs, n)) == SG_ENOMEM)
        s = sg__nomem(env->ctx);
    if (s) {
        /* a guard true at the hints cannot contradict sound knowledge */
        sg_free(prov);
        sg_free(fs);
        sg__facts_truncate(env->facts, nfacts);
        return s == SG_EASSERT ? sg__err(env->ctx, SG_EINTERNAL, "a guard contradicts what is known") : s;
    }
    env->guards[env->nguards].e = g;
    env->guards[env->nguards].text = prov;
    env->guards[env->nguards].key = NULL;
    env->nguards++;
    /* count guards per symbol; past the limit, specialize */
    for (size_t i = 0; i < n; i++) {
        symrec *r = rec_of(env, fs[i]);
        if (r && r->backed && ++r->nguards > env->opt.guard_limit && env->opt.guard_limit &&
            r->nguards == env->opt.guard_limit + 1)
            specialize(env, r);
    }
    sg_free(fs);
    return SG_OK;
}

/* Past the guard limit a symbol becomes its hint: the guard sym == hint. */
static sg_status specialize(sg_env *env, symrec *r)
{
    const sg_expr *eq;
    sg_status s = sg_expr_rel(env->ctx, &eq, SG_REL_EQ, r->sym, r->hint);
    return s ? s : record_guard(env, eq, "specialized: too many guards on this symbol");
}

static sg_status check_cond(sg_env *env, const char *fn, const sg_expr *cond, bool want_bool)
{
    if (!cond)
        return sg__err(env->ctx, SG_EINVAL, "%s: NULL argument", fn);
    if ((cond->sort == SG_SORT_BOOL) != want_bool)
        return sg__err(env->ctx, SG_ETYPE, "%s: expected %s expression", fn, want_bool ? "a boolean" : "an integer");
    return SG_OK;
}

/* The core of evaluate, guard_or_*, guard_size_oblivious. fallback: -1 for
 * none, else the answer for a data-dependent question. */
static sg_status evaluate_uncached(sg_env *env, int *out, const sg_expr *cond, const char *provenance,
                                   int fallback, bool oblivious, bool *final);

static sg_status evaluate(sg_env *env, int *out, const sg_expr *cond, const char *provenance, int fallback,
                          bool oblivious)
{
    /* size-oblivious answers may prove more: they are not remembered */
    size_t *known = oblivious ? NULL : sg__idmap_find(&env->answers, cond->id);
    if (known) {
        *out = (int)*known - 1;
        return SG_OK;
    }
    bool final = false;
    sg_status s = evaluate_uncached(env, out, cond, provenance, fallback, oblivious, &final);
    if (!s && final && !oblivious && !sg__idmap_put(&env->answers, cond->id, (size_t)*out + 1))
        sg__idmap_reset(&env->answers); /* out of memory: forget, stay right */
    return s;
}

static sg_status evaluate_uncached(sg_env *env, int *out, const sg_expr *cond, const char *provenance,
                                   int fallback, bool oblivious, bool *final)
{
    sg_truth t;
    /* Every guard holds at the hints, so a condition can only be proved
     * what it is at the hints: try that proof alone when the hints give it.
     * (Questions do not change the replacements: r and v stay valid.) */
    const sg_expr *r = sg__facts_replace(env->facts, cond), *v = NULL;
    if (!r)
        return env->ctx->err;
    sg_status hinted = hint_value(env, r, &v);
    if (hinted && hinted != SG_EDATADEP)
        return hinted;
    sg_status s = SG_OK;
    if (!hinted) {
        uint64_t nerr = env->ctx->nerr;
        t = sg__facts_known_want(env->facts, cond, v->op == SG_OP_TRUE);
        if (env->ctx->nerr != nerr && env->ctx->err == SG_ENOMEM)
            return SG_ENOMEM;
    } else if ((s = sg_facts_known(env->facts, &t, cond))) {
        return s;
    }
    if (t == SG_UNKNOWN && oblivious) {
        /* size-like symbols count as >= 2 for the proof */
        sg_facts *g;
        if (!(s = sg__facts_copy_policy(&g, env->facts, may_replace, env))) {
            for (size_t i = 0; i < env->nsyms && !s; i++) {
                const sg_expr *c, *two = sg__int_si(env->ctx, 2);
                sg_truth ct;
                if (!env->syms[i].size_like || env->syms[i].backed || !two)
                    continue;
                /* an assumption the facts refute would prove everything: skipped */
                if (!(s = sg_expr_rel(env->ctx, &c, SG_REL_GE, env->syms[i].sym, two)) &&
                    !(s = sg_facts_known(g, &ct, c)) && ct != SG_FALSE) {
                    size_t nf = sg_facts_count(g);
                    s = sg_facts_assume(g, c);
                    if (s == SG_EASSERT) {
                        sg__facts_truncate(g, nf);
                        s = SG_OK;
                    }
                }
            }
            if (!s)
                s = sg_facts_known(g, &t, cond);
            sg_facts_free(g);
        }
        if (s)
            return s;
    }
    if (t != SG_UNKNOWN) {
        *out = t == SG_TRUE;
        *final = true;
        return SG_OK;
    }
    if (hinted == SG_EDATADEP) {
        if (fallback >= 0) {
            *out = fallback;
            return SG_OK;
        }
        if ((s = counterfactual_value(env, r, &v)) == SG_EDATADEP)
            return data_dependent(env, r, false);
        if (s)
            return s;
    }
    bool val = v->op == SG_OP_TRUE;
    const sg_expr *g = val ? r : sg__not(env->ctx, r);
    if (!g)
        return env->ctx->err;
    if ((s = record_guard(env, g, provenance)))
        return s;
    *out = val;
    *final = true;
    return SG_OK;
}

sg_status sg_env_evaluate(sg_env *env, int *out, const sg_expr *cond, const char *provenance)
{
    if (!env)
        return SG_EINVAL;
    sg_status s = check_cond(env, "sg_env_evaluate", cond, true);
    if (s)
        return s;
    if (!out)
        return sg__err(env->ctx, SG_EINVAL, "sg_env_evaluate: out is NULL");
    return evaluate(env, out, cond, provenance, -1, false);
}

sg_status sg_env_guard_or(sg_env *env, int *out, const sg_expr *cond, int fallback, const char *provenance)
{
    if (!env)
        return SG_EINVAL;
    sg_status s = check_cond(env, "sg_env_guard_or", cond, true);
    if (s)
        return s;
    if (!out)
        return sg__err(env->ctx, SG_EINVAL, "sg_env_guard_or: out is NULL");
    return evaluate(env, out, cond, provenance, fallback != 0, false);
}

sg_status sg_env_guard_size_oblivious(sg_env *env, int *out, const sg_expr *cond, const char *provenance)
{
    if (!env)
        return SG_EINVAL;
    sg_status s = check_cond(env, "sg_env_guard_size_oblivious", cond, true);
    if (s)
        return s;
    if (!out)
        return sg__err(env->ctx, SG_EINVAL, "sg_env_guard_size_oblivious: out is NULL");
    return evaluate(env, out, cond, provenance, -1, true);
}

sg_status sg_env_evaluate_int(sg_env *env, const sg_expr **out, const sg_expr *e, const char *provenance)
{
    if (!env)
        return SG_EINVAL;
    sg_status s = check_cond(env, "sg_env_evaluate_int", e, false);
    if (s)
        return s;
    if (!out)
        return sg__err(env->ctx, SG_EINVAL, "sg_env_evaluate_int: out is NULL");
    *out = NULL;
    sg_interval iv;
    if ((s = sg_facts_range(env->facts, &iv, e)))
        return s;
    if (iv.lo && iv.lo == iv.hi) {
        *out = iv.lo;
        return SG_OK;
    }
    const sg_expr *r = sg__facts_replace(env->facts, e), *v, *eq;
    if (!r)
        return env->ctx->err;
    s = hint_value(env, r, &v);
    if (s == SG_EDATADEP && (s = counterfactual_value(env, r, &v)) == SG_EDATADEP)
        return data_dependent(env, r, true);
    if (s)
        return s;
    if ((s = sg_expr_rel(env->ctx, &eq, SG_REL_EQ, r, v)) || (s = record_guard(env, eq, provenance)))
        return s;
    *out = v;
    return SG_OK;
}

sg_status sg_env_known(sg_env *env, sg_truth *out, const sg_expr *cond)
{
    if (!env)
        return SG_EINVAL;
    sg_status s = check_cond(env, "sg_env_known", cond, true);
    if (s)
        return s;
    if (!out)
        return sg__err(env->ctx, SG_EINVAL, "sg_env_known: out is NULL");
    return sg_facts_known(env->facts, out, cond);
}

/* The unbacked symbol of e made last by env, or NULL. */
static const sg_expr *newest_unbacked(sg_env *env, const sg_expr *e)
{
    const sg_expr **fs;
    size_t n, best = SIZE_MAX;
    if (sg_expr_free_symbols(env->ctx, &fs, &n, e) != SG_OK)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t *k = sg__idmap_find(&env->symidx, fs[i]->id);
        if (k && !env->syms[*k].backed && (best == SIZE_MAX || *k > best))
            best = *k;
    }
    sg_free(fs);
    return best == SIZE_MAX ? NULL : env->syms[best].sym;
}

sg_status sg_env_check(sg_env *env, const sg_expr *cond, const char *msg)
{
    sg_ctx *ctx = env ? env->ctx : NULL;
    if (!env)
        return SG_EINVAL;
    sg_status s = check_cond(env, "sg_env_check", cond, true);
    if (s)
        return s;
    sg_truth t;
    if ((s = sg_facts_known(env->facts, &t, cond)))
        return s;
    char *text = NULL;
    if (t == SG_FALSE) {
        if (print_to(env, &text, cond) != SG_OK)
            text = NULL;
        s = sg__err(env->ctx, SG_EASSERT, "check failed: %s is false%s%s", text ? text : "?", msg ? ": " : "",
                    msg ? msg : "");
        sg_free(text);
        return s;
    }
    if (t == SG_TRUE)
        return SG_OK;
    const sg_expr *r = sg__facts_replace(env->facts, cond), *v;
    if (!r)
        return env->ctx->err;
    s = hint_value(env, r, &v);
    if (s && s != SG_EDATADEP)
        return s;
    if (!s && !env->opt.prefer_runtime_asserts) {
        if (v->op != SG_OP_TRUE) {
            if (print_to(env, &text, cond) != SG_OK)
                text = NULL;
            s = sg__err(env->ctx, SG_EASSERT, "check failed: %s is false at the hints%s%s", text ? text : "?",
                        msg ? ": " : "", msg ? msg : "");
            sg_free(text);
            return s;
        }
        return record_guard(env, r, msg);
    }
    /* a runtime assertion, used for reasoning from now on */
    char *m = sg__strdup(ctx, msg);
    if (!m || !GROW(env->asserts, env->nasserts, env->capasserts)) {
        sg_free(m);
        return sg__nomem(env->ctx);
    }
    size_t nfacts = sg_facts_count(env->facts);
    const sg_expr **fs = NULL;
    size_t nfs;
    if (sg_expr_free_symbols(env->ctx, &fs, &nfs, cond) != SG_OK) {
        sg_free(m);
        return sg__nomem(env->ctx);
    }
    s = sg_facts_assume(env->facts, cond);
    if (!s && (s = refine_singletons(env, fs, nfs)) == SG_ENOMEM)
        s = sg__nomem(env->ctx);
    sg_free(fs);
    if (s) {
        sg_free(m);
        sg__facts_truncate(env->facts, nfacts);
        if (s == SG_EASSERT) {
            if (print_to(env, &text, cond) != SG_OK)
                text = NULL;
            s = sg__err(env->ctx, SG_EASSERT, "check failed: %s contradicts what is known", text ? text : "?");
            sg_free(text);
        }
        return s;
    }
    env->asserts[env->nasserts].e = cond;
    env->asserts[env->nasserts].text = m;
    env->asserts[env->nasserts].key = newest_unbacked(env, cond);
    env->nasserts++;
    return SG_OK;
}

void sg_env_freeze(sg_env *env)
{
    if (env)
        env->frozen = true;
}

size_t sg_env_ignored_guards(const sg_env *env)
{
    return env ? env->ignored : 0;
}

/* ---- unbacked bookkeeping ---------------------------------------------- */

size_t sg_env_npending(const sg_env *env)
{
    size_t n = 0;
    for (size_t i = 0; env && i < env->nsyms; i++)
        n += env->syms[i].pending;
    return n;
}

const sg_expr *sg_env_pending(const sg_env *env, size_t k)
{
    for (size_t i = 0; env && i < env->nsyms; i++)
        if (env->syms[i].pending && k-- == 0)
            return env->syms[i].sym;
    return NULL;
}

sg_status sg_env_bind_unbacked(sg_env *env, const sg_expr *sym, const char *path)
{
    sg_ctx *ctx = env ? env->ctx : NULL;
    if (!env)
        return SG_EINVAL;
    if (!sym || !path)
        return sg__err(env->ctx, SG_EINVAL, "sg_env_bind_unbacked: NULL argument");
    symrec *r = rec_of(env, sym);
    if (!r || !r->pending)
        return sg__err(env->ctx, SG_EINVAL, "sg_env_bind_unbacked: %s is not a pending unbacked symbol",
                       sym->op == SG_OP_SYM ? sym->u.name : "the expression");
    char *p = sg__strdup(ctx, path);
    if (!p || !GROW(env->bindings, env->nbindings, env->capbindings)) {
        sg_free(p);
        return sg__nomem(env->ctx);
    }
    r->binding = p;
    r->pending = false;
    env->bindings[env->nbindings++] = (size_t)(r - env->syms);
    return SG_OK;
}

sg_status sg_env_check_pending(sg_env *env)
{
    if (!env)
        return SG_EINVAL;
    char names[512] = "";
    size_t used = 0, n = 0;
    for (size_t i = 0; i < env->nsyms; i++)
        if (env->syms[i].pending) {
            n++;
            if (used + 40 < sizeof names)
                used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "",
                                         env->syms[i].sym->u.name);
        }
    if (!n)
        return SG_OK;
    return sg__err(env->ctx, SG_EINVAL,
                   "pending unbacked symbols not bound to any output: %s (was an unbacked value made more times "
                   "than the op returns?)",
                   names);
}

sg_status sg_env_rename_unbacked(sg_env *env, const sg_expr *from, const sg_expr *to)
{
    if (!env)
        return SG_EINVAL;
    sg_ctx *ctx = env->ctx;
    if (!from || !to)
        return sg__err(env->ctx, SG_EINVAL, "sg_env_rename_unbacked: NULL argument");
    symrec *a = rec_of(env, from), *b = rec_of(env, to);
    if (!a || !b || a->backed || b->backed || a == b)
        return sg__err(env->ctx, SG_EINVAL, "sg_env_rename_unbacked: two distinct unbacked symbols expected");
    const sg_expr *eq;
    size_t nfacts = sg_facts_count(env->facts);
    sg_status s = sg_expr_rel(env->ctx, &eq, SG_REL_EQ, from, to);
    const sg_expr *was = a->renamed;
    size_t was_fact = a->renamed_fact;
    a->renamed = to; /* the policy lets this one replacement of an unbacked symbol by another through */
    a->renamed_fact = nfacts;
    if (!s)
        s = sg_facts_assume(env->facts, eq);
    if (s) {
        a->renamed = was;
        a->renamed_fact = was_fact;
        sg__facts_truncate(env->facts, nfacts);
        return s == SG_EASSERT ? sg__err(env->ctx, SG_EINVAL, "sg_env_rename_unbacked: the two cannot be equal") : s;
    }
    /* from (made again by a re-trace) is produced where to is: no longer
     * pending; logged so that a mark restore makes it pending again */
    if (a->pending) {
        if (!GROW(env->bindings, env->nbindings, env->capbindings))
            return sg__nomem(env->ctx);
        a->pending = false;
        env->bindings[env->nbindings++] = (size_t)(a - env->syms);
    }
    return SG_OK;
}

/* ---- marks ------------------------------------------------------------- */

void sg_env_mark_take(const sg_env *env, sg_env_mark *m)
{
    if (!env || !m)
        return;
    m->nsyms = env->nsyms;
    m->ninputs = env->ninputs;
    m->nguards = env->nguards;
    m->nasserts = env->nasserts;
    m->nfacts = sg_facts_count(env->facts);
    m->nbindings = env->nbindings;
    m->nbacked = env->nbacked;
    m->nunbacked = env->nunbacked;
    m->ignored = env->ignored;
    m->frozen = env->frozen;
    m->restores = env->restores;
}

int sg_env_mark_same(const sg_env_mark *a, const sg_env_mark *b)
{
    if (!a || !b)
        return 0;
    return a->nsyms == b->nsyms && a->ninputs == b->ninputs && a->nguards == b->nguards &&
           a->nasserts == b->nasserts && a->nfacts == b->nfacts && a->nbindings == b->nbindings &&
           a->nbacked == b->nbacked && a->nunbacked == b->nunbacked && a->ignored == b->ignored &&
           a->frozen == b->frozen && a->restores == b->restores;
}

static void rollback(sg_env *env, const sg_env_mark *m)
{
    while (env->nbindings > m->nbindings) {
        symrec *r = &env->syms[env->bindings[--env->nbindings]];
        sg_free(r->binding);
        r->binding = NULL;
        r->pending = true;
    }
    for (size_t i = m->nsyms; i < env->nsyms; i++) {
        sg_free(env->syms[i].source);
        sg_free(env->syms[i].binding);
    }
    for (size_t i = 0; i < m->nsyms && i < env->nsyms; i++)
        if (env->syms[i].renamed && env->syms[i].renamed_fact >= m->nfacts) /* renamed after the mark */
            env->syms[i].renamed = NULL;
    if (env->nsyms > m->nsyms) {
        env->nsyms = m->nsyms;
        sg__idmap_reset(&env->symidx);
        for (size_t i = 0; i < env->nsyms; i++)
            sg__idmap_put(&env->symidx, env->syms[i].sym->id, i); /* cannot grow: fewer entries */
    }
    for (size_t i = m->ninputs; i < env->ninputs; i++)
        sg_free(env->inputs[i].source);
    env->ninputs = m->ninputs < env->ninputs ? m->ninputs : env->ninputs;
    free_logged(env->guards, m->nguards, env->nguards);
    env->nguards = m->nguards < env->nguards ? m->nguards : env->nguards;
    free_logged(env->asserts, m->nasserts, env->nasserts);
    env->nasserts = m->nasserts < env->nasserts ? m->nasserts : env->nasserts;
    env->nbacked = m->nbacked;
    env->nunbacked = m->nunbacked;
    env->ignored = m->ignored;
    env->frozen = m->frozen;
    /* guard counts of the remaining symbols: recount */
    for (size_t i = 0; i < env->nsyms; i++)
        env->syms[i].nguards = 0;
    for (size_t g = 0; g < env->nguards; g++) {
        const sg_expr **fs;
        size_t n;
        if (sg_expr_free_symbols(env->ctx, &fs, &n, env->guards[g].e) != SG_OK)
            continue;
        for (size_t i = 0; i < n; i++) {
            symrec *r = rec_of(env, fs[i]);
            if (r)
                r->nguards++;
        }
        sg_free(fs);
    }
    sg__facts_truncate(env->facts, m->nfacts);
    sg__idmap_reset(&env->answers);
    env->restores++;
}

sg_status sg_env_mark_restore(sg_env *env, const sg_env_mark *m)
{
    if (!env)
        return SG_EINVAL;
    if (!m || m->nsyms > env->nsyms || m->nguards > env->nguards || m->nasserts > env->nasserts ||
        m->nfacts > sg_facts_count(env->facts) || m->ninputs > env->ninputs || m->nbindings > env->nbindings)
        return sg__err(env->ctx, SG_EINVAL, "sg_env_mark_restore: the mark is not of this state");
    rollback(env, m);
    return SG_OK;
}

/* ---- copies ------------------------------------------------------------ */

sg_status sg_env_copy(sg_env **out, const sg_env *env)
{
    sg_ctx *ctx = env ? env->ctx : NULL;
    if (!env)
        return SG_EINVAL;
    if (!out)
        return sg__err(env->ctx, SG_EINVAL, "sg_env_copy: out is NULL");
    *out = NULL;
    sg_env *c;
    sg_status s = sg_env_new(env->ctx, &env->opt, &c);
    if (s)
        return s;
    bool ok = true;
    for (size_t i = 0; i < env->nsyms && ok; i++) {
        symrec r = env->syms[i];
        r.source = r.source ? sg__strdup(ctx, r.source) : NULL;
        r.binding = r.binding ? sg__strdup(ctx, r.binding) : NULL;
        ok = (!env->syms[i].source || r.source) && (!env->syms[i].binding || r.binding) && !add_symrec(c, &r);
    }
    for (size_t i = 0; i < env->ninputs && ok; i++)
        ok = !add_input(c, env->inputs[i].source, env->inputs[i].expr, env->inputs[i].flags);
    for (size_t i = 0; i < env->nguards && ok; i++) {
        char *t = sg__strdup(ctx, env->guards[i].text);
        ok = t && GROW(c->guards, c->nguards, c->capguards);
        if (ok)
            c->guards[c->nguards++] = (logged){env->guards[i].e, t, NULL};
        else
            sg_free(t);
    }
    for (size_t i = 0; i < env->nasserts && ok; i++) {
        char *t = sg__strdup(ctx, env->asserts[i].text);
        ok = t && GROW(c->asserts, c->nasserts, c->capasserts);
        if (ok)
            c->asserts[c->nasserts++] = (logged){env->asserts[i].e, t, env->asserts[i].key};
        else
            sg_free(t);
    }
    for (size_t i = 0; i < env->nbindings && ok; i++) {
        ok = GROW(c->bindings, c->nbindings, c->capbindings);
        if (ok)
            c->bindings[c->nbindings++] = env->bindings[i];
    }
    sg_facts *f = NULL;
    if (ok && (s = sg__facts_copy_policy(&f, env->facts, may_replace, c)) == SG_OK) {
        sg_facts_free(c->facts);
        c->facts = f;
    }
    if (!ok || s) {
        sg_env_free(c);
        return s ? s : sg__nomem(env->ctx);
    }
    c->nbacked = env->nbacked;
    c->nunbacked = env->nunbacked;
    c->frozen = env->frozen;
    c->ignored = env->ignored;
    *out = c;
    return SG_OK;
}

/* ---- what was recorded -------------------------------------------------- */

size_t sg_env_nguards(const sg_env *env)
{
    return env ? env->nguards : 0;
}

const sg_expr *sg_env_guard(const sg_env *env, size_t i, const char **provenance)
{
    if (!env || i >= env->nguards)
        return NULL;
    if (provenance)
        *provenance = env->guards[i].text;
    return env->guards[i].e;
}

size_t sg_env_nasserts(const sg_env *env)
{
    return env ? env->nasserts : 0;
}

const sg_expr *sg_env_assert(const sg_env *env, size_t i, const char **msg)
{
    if (!env || i >= env->nasserts)
        return NULL;
    if (msg)
        *msg = env->asserts[i].text;
    return env->asserts[i].e;
}

const sg_expr *sg_env_assert_key(const sg_env *env, size_t i)
{
    return env && i < env->nasserts ? env->asserts[i].key : NULL;
}

/* ---- the guard set over sources ----------------------------------------- */

typedef struct {
    sg__list items;
    sg__list lhs, rhs; /* per item: the sides of an input equality, else NULL */
    const sg_expr **from, **to; /* symbols -> source symbols */
    size_t n;
} guardset;

static sg_status to_sources(sg_env *env, guardset *G, const sg_expr *e, const sg_expr **out)
{
    return sg_expr_subs(env->ctx, out, e, G->n, G->from, G->to);
}

/* Add e (over symbols) to the items; lhs == rhs (over sources) when it is
 * an input equality. */
static sg_status push_item(sg_env *env, guardset *G, const sg_expr *e, const sg_expr *lhs, const sg_expr *rhs)
{
    sg_ctx *ctx = env->ctx;
    const sg_expr *r;
    sg_status s = to_sources(env, G, e, &r);
    if (s)
        return s;
    if (r->op == SG_OP_TRUE)
        return SG_OK;
    for (size_t i = 0; i < G->items.n; i++)
        if (G->items.v[i] == r)
            return SG_OK;
    return sg__list_push(ctx, &G->items, r) && sg__list_push(ctx, &G->lhs, lhs) && sg__list_push(ctx, &G->rhs, rhs)
               ? SG_OK
               : sg__nomem(env->ctx);
}

/* The facts' bounds of symbols only (a range callback). */
static bool symbol_bounds(void *user, const sg_expr *atom, sg__iv *out)
{
    return atom->op == SG_OP_SYM && sg__facts_atom_range(user, atom, out);
}

/* A bound of a single symbol (shown through the symbol's range instead). */
static bool is_single_bound(const sg_expr *g)
{
    if (g->op != SG_OP_GE0 && g->op != SG_OP_EQ0)
        return false;
    const sg_expr *p = g->args[0];
    if (p->op == SG_OP_SYM)
        return true;
    return p->op == SG_OP_ADD && p->nargs == 1 && p->args[0]->op == SG_OP_SYM && fmpz_is_pm1(sg__nums(p));
}

sg_status sg_env_produce_guards(sg_env *env, const sg_expr ***out, size_t *n)
{
    return sg_env_produce_guards_flags(env, 0, out, n);
}

sg_status sg_env_produce_guards_flags(sg_env *env, unsigned flags, const sg_expr ***out, size_t *n)
{
    return sg_env_produce_guards_sides(env, flags, out, NULL, NULL, n);
}

sg_status sg_env_produce_guards_sides(sg_env *env, unsigned flags, const sg_expr ***out, const sg_expr ***lhs,
                                      const sg_expr ***rhs, size_t *n)
{
    if (!env)
        return SG_EINVAL;
    if (!out || !n)
        return sg__err(env->ctx, SG_EINVAL, "sg_env_produce_guards: NULL argument");
    *out = NULL;
    if (lhs)
        *lhs = NULL;
    if (rhs)
        *rhs = NULL;
    *n = 0;
    sg_ctx *ctx = env->ctx;
    guardset G = {{0}, {0}, {0}, NULL, NULL, 0};
    G.from = sg__malloc(ctx, (env->nsyms ? env->nsyms : 1) * sizeof *G.from);
    G.to = sg__malloc(ctx, (env->nsyms ? env->nsyms : 1) * sizeof *G.to);
    sg_status s = G.from && G.to ? SG_OK : sg__nomem(ctx);
    for (size_t i = 0; i < env->nsyms && !s; i++)
        if (env->syms[i].source) {
            G.from[G.n] = env->syms[i].sym;
            s = sg_expr_sym(ctx, &G.to[G.n], env->syms[i].source);
            G.n++;
        }
    /* 1. each input: what it is after replacements, unless it is its symbol's binding site */
    for (size_t i = 0; i < env->ninputs && !s; i++) {
        const input *in = &env->inputs[i];
        const sg_expr *e = sg__facts_replace(env->facts, in->expr), *src, *eq;
        if (!e) {
            s = ctx->err;
            break;
        }
        symrec *r = in->expr->op == SG_OP_SYM ? rec_of(env, in->expr) : NULL;
        if (e == in->expr && r && r->source && !strcmp(r->source, in->source))
            continue;
        /* a tensor property that was a constant from the start is checked per tensor */
        if ((in->flags & SG_INPUT_PROPERTY) && in->expr->op == SG_OP_INT && !(flags & SG_GUARDS_STATIC))
            continue;
        if (!(s = sg_expr_sym(ctx, &src, in->source)) && !(s = to_sources(env, &G, e, &e)) &&
            !(s = sg_expr_rel(ctx, &eq, SG_REL_EQ, src, e)))
            s = push_item(env, &G, eq, src, e);
    }
    /* 2. recorded guards (each conjunct) that the symbols' ranges do not
     *    imply (a bound on a compound atom such as x % 8 came from a guard
     *    and does not count) */
    for (size_t i = 0; i < env->nguards && !s; i++) {
        const sg_expr *g = sg__facts_replace(env->facts, env->guards[i].e);
        if (!g) {
            s = ctx->err;
            break;
        }
        size_t nc = g->op == SG_OP_AND ? g->nargs : 1;
        for (size_t k = 0; k < nc && !s; k++) {
            const sg_expr *c = g->op == SG_OP_AND ? g->args[k] : g;
            if (c->op == SG_OP_TRUE || is_single_bound(c))
                continue;
            sg__iv iv;
            sg__iv_init(&iv);
            s = sg__range(ctx, c, symbol_bounds, env->facts, NULL, &iv);
            if (!s && !(sg__iv_is_point(&iv) && fmpz_is_one(&iv.lo)))
                s = push_item(env, &G, c, NULL, NULL);
            sg__iv_clear(&iv);
        }
    }
    /* 3. the finite bounds of every input symbol still standing */
    for (size_t i = 0; i < env->nsyms && !s; i++) {
        const symrec *r = &env->syms[i];
        if (!r->source)
            continue;
        const sg_expr *e = sg__facts_replace(env->facts, r->sym), *c;
        if (!e) {
            s = ctx->err;
            break;
        }
        if (e != r->sym)
            continue;
        sg_interval iv;
        if ((s = sg_facts_range(env->facts, &iv, r->sym)))
            break;
        if (iv.lo && !(s = sg_expr_rel(ctx, &c, SG_REL_GE, r->sym, iv.lo)))
            s = push_item(env, &G, c, NULL, NULL);
        if (!s && iv.hi && !(s = sg_expr_rel(ctx, &c, SG_REL_LE, r->sym, iv.hi)))
            s = push_item(env, &G, c, NULL, NULL);
    }
    sg_free(G.from);
    sg_free(G.to);
    if (s) {
        sg__list_free(&G.items);
        sg__list_free(&G.lhs);
        sg__list_free(&G.rhs);
        return s;
    }
    *out = G.items.v;
    *n = G.items.n;
    if (lhs)
        *lhs = G.lhs.v;
    else
        sg__list_free(&G.lhs);
    if (rhs)
        *rhs = G.rhs.v;
    else
        sg__list_free(&G.rhs);
    return SG_OK;
}

/* ---- the guard set in PyTorch's text ---------------------------------------- */

/* If item g is a bound of one symbol (s + k >= 0 or k - s >= 0, over
 * sources): the symbol, the bound, and which side (*upper). */
static const sg_expr *bound_of(sg_ctx *ctx, const sg_expr *g, const sg_expr **c, bool *upper)
{
    if (g->op != SG_OP_GE0)
        return NULL;
    const sg_expr *p = g->args[0];
    if (p->op == SG_OP_SYM) { /* s >= 0 */
        *upper = false;
        *c = ctx->zero;
        return p;
    }
    if (p->op != SG_OP_ADD || p->nargs != 1 || p->args[0]->op != SG_OP_SYM || !fmpz_is_pm1(sg__nums(p)))
        return NULL;
    *upper = fmpz_sgn(sg__nums(p)) < 0;
    fmpz_t k;
    fmpz_init_set(k, &p->u.val);
    if (!*upper)
        fmpz_neg(k, k); /* s + k >= 0 is -k <= s; k - s >= 0 is s <= k */
    *c = sg__int_fmpz(ctx, k);
    fmpz_clear(k);
    return *c ? p->args[0] : NULL;
}

/* "A OP B" with both sides printed by the python printer. */
static sg_status put_rel(sg_ctx *ctx, sg__buf *b, const sg_expr *a, const char *op, const sg_expr *c)
{
    char *ta = NULL, *tc = NULL;
    sg_status s = sg_print(ctx, &ta, a, SG_FMT_PYTHON);
    if (!s)
        s = sg_print(ctx, &tc, c, SG_FMT_PYTHON);
    if (!s)
        sg__buf_printf(b, "%s %s %s", ta, op, tc);
    sg_free(ta);
    sg_free(tc);
    return s;
}

void sg_env_free_guard_texts(char **texts, size_t n)
{
    for (size_t i = 0; texts && i < n; i++)
        sg_free(texts[i]);
    sg_free(texts);
}

sg_status sg_env_produce_guards_text(sg_env *env, unsigned flags, const sg_expr ***out, char ***texts,
                                     const sg_expr ***sides, size_t *n)
{
    if (!env)
        return SG_EINVAL;
    sg_ctx *ctx = env->ctx;
    if (!out || !texts || !n)
        return sg__err(ctx, SG_EINVAL, "sg_env_produce_guards_text: NULL argument");
    *texts = NULL;
    if (sides)
        *sides = NULL;
    const sg_expr **items, **lhs, **rhs;
    size_t m;
    sg_status s = sg_env_produce_guards_sides(env, flags, &items, &lhs, &rhs, &m);
    if (s) {
        *out = NULL;
        *n = 0;
        return s;
    }
    char **t = sg__calloc(ctx, m ? m : 1, sizeof *t);
    const sg_expr **sd = sides ? sg__calloc(ctx, 2 * (m ? m : 1), sizeof *sd) : NULL;
    if (!t || (sides && !sd))
        s = sg__nomem(ctx);
    for (size_t i = 0; i < m && !s; i++) {
        sg__buf b = {.ctx = ctx};
        const sg_expr *c, *c2, *x, *x2 = NULL;
        bool up = false, up2 = false;
        if (lhs[i]) { /* an input equality: the source first */
            s = put_rel(ctx, &b, lhs[i], "==", rhs[i]);
            if (sd) {
                sd[2 * i] = lhs[i];
                sd[2 * i + 1] = rhs[i];
            }
        } else if ((x = bound_of(ctx, items[i], &c, &up)) != NULL) {
            /* a lower bound followed by the upper bound of the same symbol: one line (PyTorch's And) */
            bool pair = !up && i + 1 < m && !lhs[i + 1] && (x2 = bound_of(ctx, items[i + 1], &c2, &up2)) == x && up2;
            s = up ? put_rel(ctx, &b, x, "<=", c) : put_rel(ctx, &b, c, "<=", x);
            if (!s && pair) {
                sg__buf_puts(&b, " and ");
                s = put_rel(ctx, &b, x, "<=", c2);
            }
            if (sd) {
                sd[2 * i] = up ? x : c;
                sd[2 * i + 1] = up ? c : x;
            }
            if (!s && pair) {
                char *line = sg__buf_take(&b);
                t[i] = line;
                t[i + 1] = line ? sg__strdup(ctx, line) : NULL;
                if (!t[i] || !t[i + 1])
                    s = sg__nomem(ctx);
                if (sd) {
                    sd[2 * i + 2] = x;
                    sd[2 * i + 3] = c2;
                }
                i++;
                continue;
            }
        } else {
            char *text = NULL;
            if (!(s = sg_print(ctx, &text, items[i], SG_FMT_PYTHON)))
                sg__buf_puts(&b, text);
            sg_free(text);
        }
        if (s) {
            sg__buf_free(&b);
            break;
        }
        if (!(t[i] = sg__buf_take(&b)))
            s = sg__nomem(ctx);
    }
    sg_free(lhs);
    sg_free(rhs);
    if (s) {
        sg_env_free_guard_texts(t, m);
        sg_free(sd);
        sg_free(items);
        *out = NULL;
        *n = 0;
        return s;
    }
    *out = items;
    *texts = t;
    if (sides)
        *sides = sd;
    *n = m;
    return SG_OK;
}
