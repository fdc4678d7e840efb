/* env soundness fuzz: random sequences of symbol creations, questions,
 * checks, marks, copies and renames on random hints. Each run keeps its own
 * "world": the hint of every backed symbol and a secret value of every
 * unbacked one (the value it has at run time). Every check the fuzz makes
 * holds in that world, so a sound environment
 *   (a) records only guards (and assertions) that hold in the world,
 *   (b) answers backed-only questions (evaluate, guard_or, evaluate_int,
 *       guard_size_oblivious, hint) with their value at the hints,
 *   (c) answers every other question it settles (known TRUE/FALSE, a provable
 *       answer about unbacked symbols) with its value in the world,
 *   (d) produces a guard set that holds when each source is given its input's
 *       value,
 *   (e) changes nothing when a call fails, and restores marks exactly
 *       (counts, names, pending symbols),
 *   (f) knows in a copy what the original knows, and after a restore what a
 *       copy taken at the mark knows (and at least what it knew then),
 * and neither crashes nor leaks (run it under an --enable-asan build). Each
 * generated expression is also checked to parse back to the node the
 * constructors built.
 *
 * SG_TEST_SEED=N fixes the seed (default below); SG_TEST_RUNS=N the number of
 * runs; SG_TEST_OPS=N up to N operations per run (default 40);
 * SG_TEST_RUN=K replays run K alone and prints its trace as it goes;
 * SG_TEST_SUMMARY=1 prints one line per failed run. On a failure the seed, the
 * run and the trace of that run are printed. */
#define _GNU_SOURCE
#include "cmocka_all.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shapeguard.h"

#define DEFAULT_SEED 20250607ULL
#define DEFAULT_RUNS 3000
#define MAXSYMS 96
#define MAXSRCS 96
#define MAX_REPORTED 3

static sg_ctx *C;

/* ---- random numbers ------------------------------------------------------ */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* ---- one run ------------------------------------------------------------ */

typedef struct wsym {
    const sg_expr *sym; /* an environment symbol (s<N>, u<N>) */
    const sg_expr *val; /* its hint (backed) or secret (unbacked) */
    int backed, size_like;
    int oblivious; /* an SG_DIM_OBLIVIOUS_SIZE input: val is its hint */
} wsym;

typedef struct wsrc {
    const sg_expr *sym; /* the source symbol (named by the source) */
    const sg_expr *val; /* the input's value */
} wsrc;

typedef struct saved {
    sg_env_mark mark;
    size_t nsyms, nsrcs, npending, nguards, nasserts;
    unsigned nbacked, nunbacked;
    int frozen;
    const sg_expr *q[4];
    sg_truth a[4];
    sg_env *snapshot; /* a copy taken at the mark: its facts derived afresh */
} saved;

typedef struct run {
    uint64_t rng;
    sg_env *env;
    sg_env_options opt;
    wsym syms[MAXSYMS];
    size_t nsyms;
    wsrc srcs[MAXSRCS];
    size_t nsrcs;
    wsym fresh[MAXSYMS]; /* the environment's fresh symbols (_k<N>) */
    size_t nfresh;
    unsigned nbacked, nunbacked; /* symbols made so far: the next names */
    unsigned ninputs;            /* source names made so far (never reused) */
    int frozen;
    int have_mark;
    saved mk;
    int verbose;
    unsigned maxops; /* SG_TEST_OPS: more operations per run than 40 */
    int failed;
    char why[2048];
    char *trace;
    size_t tlen, tcap;
} run;

static unsigned rnd(run *R, unsigned n)
{
    return n ? (unsigned)(splitmix(&R->rng) % n) : 0;
}

static int rint_in(run *R, int lo, int hi)
{
    return lo + (int)rnd(R, (unsigned)(hi - lo + 1));
}

static void tracef(run *R, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = strlen(buf);
    if (R->verbose)
        fprintf(stderr, "    %s\n", buf);
    if (R->tlen + len + 2 > R->tcap) {
        size_t cap = (R->tcap ? R->tcap * 2 : 4096) + len;
        char *t = realloc(R->trace, cap);
        if (!t)
            return;
        R->trace = t;
        R->tcap = cap;
    }
    memcpy(R->trace + R->tlen, buf, len);
    R->tlen += len;
    R->trace[R->tlen++] = '\n';
    R->trace[R->tlen] = 0;
}

static void failf(run *R, const char *fmt, ...)
{
    if (R->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(R->why, sizeof R->why, fmt, ap);
    va_end(ap);
    R->failed = 1;
    tracef(R, "^^^ FAILED: %s", R->why);
}

/* Printed text of e in a ring of buffers (for traces and messages). */
static const char *T(const sg_expr *e)
{
    static char ring[8][768];
    static int k;
    if (!e)
        return "(null)";
    char *s = NULL;
    if (sg_print(C, &s, e, SG_FMT_SG) != SG_OK)
        return "(unprintable)";
    k = (k + 1) % 8;
    snprintf(ring[k], sizeof ring[k], "%s", s);
    sg_free(s);
    return ring[k];
}

static const char *truth_name(sg_truth t)
{
    return t == SG_TRUE ? "true" : t == SG_FALSE ? "false" : "unknown";
}

static const sg_expr *I(int64_t v)
{
    const sg_expr *e = NULL;
    if (sg_expr_int(C, &e, v) != SG_OK)
        fail_msg("sg_expr_int(%" PRId64 ") failed", v);
    return e;
}

static wsym *find_sym(run *R, const sg_expr *s)
{
    for (size_t i = 0; i < R->nsyms; i++)
        if (R->syms[i].sym == s)
            return &R->syms[i];
    return NULL;
}

static sg_status eval_known(run *R, const sg_expr *e, const sg_expr **v)
{
    const sg_expr *syms[2 * MAXSYMS], *vals[2 * MAXSYMS];
    size_t n = 0;
    for (size_t i = 0; i < R->nsyms; i++, n++) {
        syms[n] = R->syms[i].sym;
        vals[n] = R->syms[i].val;
    }
    for (size_t i = 0; i < R->nfresh; i++, n++) {
        syms[n] = R->fresh[i].sym;
        vals[n] = R->fresh[i].val;
    }
    return sg_expr_eval(C, v, e, n, syms, vals);
}

/* The world value of the environment's own fresh symbols: a divisibility
 * fact x % m == r makes x = m*_k + r for a fresh _k, so _k's value follows
 * from x's. Learned from the replacements of the world's symbols, which are
 * linear in one unknown fresh symbol (repeated: a fresh symbol may itself
 * be replaced by another). */
static void learn_fresh(run *R)
{
    for (int progress = 1; progress;) {
        progress = 0;
        for (size_t i = 0; i < R->nsyms && R->nfresh < MAXSYMS; i++) {
            const sg_expr *out = NULL, **fs = NULL, *unknown = NULL;
            size_t n = 0, nunknown = 0;
            if (sg_env_replace(R->env, &out, R->syms[i].sym) != SG_OK ||
                sg_expr_free_symbols(C, &fs, &n, out) != SG_OK) {
                sg_ctx_reset_error(C);
                continue;
            }
            for (size_t j = 0; j < n; j++) {
                const sg_expr *v;
                if (eval_known(R, fs[j], &v) != SG_OK) {
                    sg_ctx_reset_error(C);
                    unknown = fs[j];
                    nunknown++;
                }
            }
            sg_free(fs);
            if (nunknown != 1 || strncmp(sg_expr_sym_name(unknown), "_k", 2))
                continue;
            /* out = a*k + b: b at k = 0, a + b at k = 1, checked at k = 2 */
            int64_t at[3], want;
            int ok = sg_expr_get_si(R->syms[i].val, &want);
            for (int k = 0; k < 3 && ok; k++) {
                const sg_expr *syms[1] = {unknown}, *kv = I(k), *sub = NULL, *v = NULL;
                ok = sg_expr_subs(C, &sub, out, 1, syms, &kv) == SG_OK && eval_known(R, sub, &v) == SG_OK &&
                     sg_expr_get_si(v, &at[k]);
            }
            sg_ctx_reset_error(C);
            int64_t a = ok ? at[1] - at[0] : 0;
            if (!ok || !a || at[2] - at[1] != a || (want - at[0]) % a)
                continue;
            R->fresh[R->nfresh++] = (wsym){unknown, I((want - at[0]) / a), 0, 0, 0};
            progress = 1;
        }
    }
}

/* e's value where every symbol of the world has its value. */
static sg_status world_eval(run *R, const sg_expr *e, const sg_expr **v)
{
    sg_status s = eval_known(R, e, v);
    if (s == SG_OK)
        return s;
    sg_ctx_reset_error(C);
    learn_fresh(R);
    return eval_known(R, e, v);
}

/* 1 if every symbol of e is a backed symbol of the world, 0 if one is
 * unbacked, -1 if one is unknown to the world (a bug of the generator). */
static int backed_only(run *R, const sg_expr *e)
{
    const sg_expr **fs = NULL;
    size_t n = 0;
    if (sg_expr_free_symbols(C, &fs, &n, e) != SG_OK)
        fail_msg("sg_expr_free_symbols failed");
    int r = 1;
    for (size_t i = 0; i < n; i++) {
        wsym *w = find_sym(R, fs[i]);
        if (!w) {
            r = -1;
            break;
        }
        if (!w->backed)
            r = 0;
    }
    sg_free(fs);
    return r;
}

/* PyTorch's counterfactual for oblivious inputs: every symbol of e that is
 * not backed is an oblivious input, and e's value in the world (want) is
 * also its value when each oblivious input takes max(2, value). */
static int counterfactual_holds(run *R, const sg_expr *e, const sg_expr *want)
{
    const sg_expr **fs = NULL, *syms[MAXSYMS], *vals[MAXSYMS], *v = NULL;
    size_t n = 0;
    if (sg_expr_free_symbols(C, &fs, &n, e) != SG_OK)
        fail_msg("sg_expr_free_symbols failed");
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++) {
        wsym *w = find_sym(R, fs[i]);
        int64_t x;
        ok = w && (w->backed || w->oblivious) && sg_expr_get_si(w->val, &x);
        if (ok) {
            syms[i] = fs[i];
            vals[i] = w->oblivious && x < 2 ? I(2) : w->val;
        }
    }
    ok = ok && sg_expr_eval(C, &v, e, n, syms, vals) == SG_OK && v == want;
    sg_ctx_reset_error(C);
    sg_free(fs);
    return ok;
}

/* The size-oblivious assumption (size-like unbacked symbols are >= 2) holds
 * in the world. */
static int oblivious_holds(run *R)
{
    for (size_t i = 0; i < R->nsyms; i++) {
        int64_t v;
        if (!R->syms[i].backed && R->syms[i].size_like && sg_expr_get_si(R->syms[i].val, &v) && v < 2)
            return 0;
    }
    return 1;
}

typedef struct snap {
    size_t nguards, nasserts, nfacts, npending;
} snap;

static snap take_snap(run *R)
{
    snap s = {sg_env_nguards(R->env), sg_env_nasserts(R->env), sg_facts_count(sg_env_facts(R->env)),
              sg_env_npending(R->env)};
    return s;
}

/* (e): a failed call changes nothing. */
static void unchanged(run *R, const snap *b, const char *what, sg_status s)
{
    snap a = take_snap(R);
    if (a.nguards != b->nguards || a.nasserts != b->nasserts || a.nfacts != b->nfacts || a.npending != b->npending)
        failf(R,
              "%s failed (%s) but changed the environment: guards %zu -> %zu, asserts %zu -> %zu, facts %zu -> %zu, "
              "pending %zu -> %zu",
              what, sg_status_kind(s), b->nguards, a.nguards, b->nasserts, a.nasserts, b->nfacts, a.nfacts,
              b->npending, a.npending);
    if (!sg_ctx_last_error_msg(C)[0])
        failf(R, "%s failed (%s) with an empty message", what, sg_status_kind(s));
}

/* A refusal because the environment is frozen (SG_FREEZE_ERROR). */
static int frozen_refusal(run *R, sg_status s)
{
    return s == SG_EASSERT && R->frozen && R->opt.freeze_mode == SG_FREEZE_ERROR &&
           strstr(sg_ctx_last_error_msg(C), "frozen");
}

/* ---- expressions ------------------------------------------------------- */

/* Each generated expression is built twice, with the constructors and as
 * text for sg_parse; both must give the same canonical node. */
typedef struct gx {
    const sg_expr *e;
    char *t;
} gx;

static int gx_ok(const gx *g)
{
    return g->e && g->t;
}

static void gx_free(gx *g)
{
    free(g->t);
    g->t = NULL;
}

static gx mk(const sg_expr *e, char *t)
{
    gx g = {e, t};
    return g;
}

static gx gx_const(int64_t v)
{
    char *t = NULL;
    if (asprintf(&t, v < 0 ? "(%" PRId64 ")" : "%" PRId64, v) < 0)
        t = NULL;
    return mk(I(v), t);
}

static gx gen_atom(run *R)
{
    if (R->nsyms && rnd(R, 10) < 7) {
        const sg_expr *s = R->syms[rnd(R, (unsigned)R->nsyms)].sym;
        return mk(s, strdup(sg_expr_sym_name(s)));
    }
    return gx_const(rint_in(R, -3, 12));
}

typedef sg_status (*binop)(sg_ctx *, const sg_expr **, const sg_expr *, const sg_expr *);

static gx gx_bin(binop f, const char *op, gx a, gx b)
{
    gx r = {NULL, NULL};
    if (gx_ok(&a) && gx_ok(&b) && f(C, &r.e, a.e, b.e) == SG_OK && asprintf(&r.t, "(%s %s %s)", a.t, op, b.t) < 0)
        r.t = NULL;
    gx_free(&a);
    gx_free(&b);
    if (!r.t)
        r.e = NULL;
    return r;
}

static gx gx_minmax(int is_max, gx a, gx b)
{
    gx r = {NULL, NULL};
    const sg_expr *args[2] = {a.e, b.e};
    if (gx_ok(&a) && gx_ok(&b) && (is_max ? sg_expr_max : sg_expr_min)(C, &r.e, 2, args) == SG_OK &&
        asprintf(&r.t, "%s(%s, %s)", is_max ? "Max" : "Min", a.t, b.t) < 0)
        r.t = NULL;
    gx_free(&a);
    gx_free(&b);
    if (!r.t)
        r.e = NULL;
    return r;
}

static gx gen_int(run *R, int depth);

/* A divisor: mostly a positive constant, sometimes an expression (which may
 * be 0 in the world: such questions are skipped). */
static gx gen_divisor(run *R, int depth)
{
    unsigned k = rnd(R, 10);
    if (k < 7 || !R->nsyms)
        return gx_const(rint_in(R, 1, 6));
    if (k < 9)
        return gx_minmax(1, gen_atom(R), gx_const(1));
    return gen_int(R, depth - 1);
}

static gx gen_int(run *R, int depth)
{
    if (depth <= 0 || rnd(R, 4) == 0)
        return gen_atom(R);
    switch (rnd(R, 8)) {
    case 0: /* k1*a + k2*b + c */
    case 1: {
        int k1 = rint_in(R, -3, 3), k2 = rint_in(R, -3, 3);
        gx a = gx_bin(sg_expr_mul, "*", gx_const(k1 ? k1 : 1), gen_int(R, depth - 1));
        gx b = gx_bin(sg_expr_mul, "*", gx_const(k2), gen_int(R, depth - 1));
        return gx_bin(sg_expr_add, "+", gx_bin(sg_expr_add, "+", a, b), gx_const(rint_in(R, -5, 5)));
    }
    case 2:
        return gx_bin(sg_expr_floordiv, "//", gen_int(R, depth - 1), gen_divisor(R, depth));
    case 3:
        return gx_bin(sg_expr_mod, "%", gen_int(R, depth - 1), gen_divisor(R, depth));
    case 4:
        return gx_minmax(1, gen_int(R, depth - 1), gen_int(R, depth - 1));
    case 5:
        return gx_minmax(0, gen_int(R, depth - 1), gen_int(R, depth - 1));
    case 6:
        return gx_bin(sg_expr_mul, "*", gen_atom(R), gen_int(R, depth - 1));
    default:
        return gx_bin(sg_expr_sub, "-", gen_int(R, depth - 1), gen_int(R, depth - 1));
    }
}

static gx gx_rel(sg_rel rel, gx a, gx b)
{
    static const char *ops[] = {"==", "!=", "<", "<=", ">", ">="};
    gx r = {NULL, NULL};
    if (gx_ok(&a) && gx_ok(&b) && sg_expr_rel(C, &r.e, rel, a.e, b.e) == SG_OK &&
        asprintf(&r.t, "(%s %s %s)", a.t, ops[rel], b.t) < 0)
        r.t = NULL;
    gx_free(&a);
    gx_free(&b);
    if (!r.t)
        r.e = NULL;
    return r;
}

static gx gen_bool(run *R, int depth)
{
    unsigned k = rnd(R, 10);
    if (depth <= 0 || k < 7) {
        sg_rel rel = (sg_rel)rnd(R, 6);
        gx a = gen_int(R, depth);
        /* mostly against a constant near the values of the world */
        gx b = rnd(R, 2) ? gx_const(rint_in(R, -2, 22)) : gen_int(R, depth - 1);
        return gx_rel(rel, a, b);
    }
    if (k < 9) {
        gx a = gen_bool(R, depth - 1), b = gen_bool(R, depth - 1), r = {NULL, NULL};
        const sg_expr *args[2] = {a.e, b.e};
        int is_and = k == 7;
        if (gx_ok(&a) && gx_ok(&b) && (is_and ? sg_expr_and : sg_expr_or)(C, &r.e, 2, args) == SG_OK &&
            asprintf(&r.t, "(%s %s %s)", a.t, is_and ? "and" : "or", b.t) < 0)
            r.t = NULL;
        gx_free(&a);
        gx_free(&b);
        if (!r.t)
            r.e = NULL;
        return r;
    }
    gx a = gen_bool(R, depth - 1), r = {NULL, NULL};
    if (gx_ok(&a) && sg_expr_not(C, &r.e, a.e) == SG_OK && asprintf(&r.t, "(not %s)", a.t) < 0)
        r.t = NULL;
    gx_free(&a);
    if (!r.t)
        r.e = NULL;
    return r;
}

/* Finish a generated expression: compare with its parse, return the node. */
static const sg_expr *finish(run *R, gx g)
{
    if (!gx_ok(&g)) {
        gx_free(&g);
        sg_ctx_reset_error(C);
        return NULL; /* a construction limit: skip */
    }
    const sg_expr *p = NULL;
    sg_status s = sg_parse(C, &p, g.t, NULL);
    if (s != SG_OK)
        failf(R, "sg_parse(%s) failed: %s", g.t, sg_ctx_last_error_msg(C));
    else if (p != g.e)
        failf(R, "sg_parse(%s) gives %s, the constructors %s", g.t, T(p), T(g.e));
    const sg_expr *e = rnd(R, 2) ? g.e : p;
    gx_free(&g);
    return e;
}

static const sg_expr *rand_bool(run *R)
{
    return finish(R, gen_bool(R, (int)rnd(R, 3)));
}

static const sg_expr *rand_int(run *R)
{
    return finish(R, gen_int(R, 1 + (int)rnd(R, 2)));
}

/* ---- world bookkeeping --------------------------------------------------- */

/* A new symbol of the environment, made for source (NULL: none): named s<N>
 * or u<N>, or s_<source> or u_<source> under stable_names (the fuzz's
 * sources are identifiers, in<N>, never reused). */
static void add_world_sym(run *R, const sg_expr *sym, const sg_expr *val, int backed, int size_like,
                          const char *source)
{
    char want[64];
    if (R->opt.stable_names && source)
        snprintf(want, sizeof want, "%c_%s", backed ? 's' : 'u', source);
    else
        snprintf(want, sizeof want, "%c%u", backed ? 's' : 'u', backed ? R->nbacked : R->nunbacked);
    if (strcmp(sg_expr_sym_name(sym), want))
        failf(R, "a new %s symbol is named %s, expected %s", backed ? "backed" : "unbacked", sg_expr_sym_name(sym),
              want);
    if (sg_env_symbol(R->env, want) != sym)
        failf(R, "sg_env_symbol(%s) does not give the new symbol", want);
    if (backed)
        R->nbacked++;
    else
        R->nunbacked++;
    if (R->nsyms < MAXSYMS)
        R->syms[R->nsyms++] = (wsym){sym, val, backed, size_like, 0};
}

static void add_world_src(run *R, const char *name, const sg_expr *val)
{
    const sg_expr *s = NULL;
    if (sg_expr_sym(C, &s, name) != SG_OK)
        fail_msg("sg_expr_sym failed");
    if (R->nsrcs < MAXSRCS)
        R->srcs[R->nsrcs++] = (wsrc){s, val};
}

static const char *dyn_name(sg_dim_dynamic d)
{
    static const char *n[] = {"duck", "dynamic", "static", "size_like_unbacked", "oblivious_size"};
    return n[d];
}

/* A random range around v (either end may be open), or none. */
static const sg_interval *rand_range(run *R, sg_interval *iv, int v, char *text, size_t cap)
{
    if (rnd(R, 4)) {
        snprintf(text, cap, "%s", "");
        return NULL;
    }
    iv->lo = rnd(R, 4) ? I(v - rint_in(R, 0, 6)) : NULL;
    iv->hi = rnd(R, 4) ? I(v + rint_in(R, 0, 6)) : NULL;
    snprintf(text, cap, " range=[%s, %s]", iv->lo ? T(iv->lo) : "-oo", iv->hi ? T(iv->hi) : "oo");
    return iv;
}

static void op_backed(run *R)
{
    if (R->nsyms >= MAXSYMS - 2 || R->nsrcs >= MAXSRCS - 2)
        return;
    char name[32], rtext[96];
    snprintf(name, sizeof name, "in%u", R->ninputs++);
    int is_size = rnd(R, 3) != 0;
    int hint = is_size ? rint_in(R, 0, 20) : rint_in(R, -6, 20);
    unsigned k = rnd(R, 20);
    sg_dim_dynamic dyn = k < 8 ? SG_DIM_DUCK : k < 15 ? SG_DIM_DYNAMIC : k < 18 ? SG_DIM_STATIC : k < 19 ? SG_DIM_SIZE_LIKE_UNBACKED : SG_DIM_OBLIVIOUS_SIZE;
    if (!is_size && dyn >= SG_DIM_SIZE_LIKE_UNBACKED)
        dyn = SG_DIM_DYNAMIC;
    sg_interval iv;
    const sg_interval *range = rand_range(R, &iv, hint, rtext, sizeof rtext);
    const sg_expr *out = NULL;
    snap b = take_snap(R);
    sg_status s = sg_env_create_backed(R->env, &out, name, I(hint), dyn, is_size, range);
    tracef(R, "backed %s = %d %s%s%s -> %s", name, hint, dyn_name(dyn), is_size ? " size" : "", rtext,
           s ? sg_status_kind(s) : T(out));
    if (s != SG_OK) {
        failf(R, "sg_env_create_backed failed: %s", sg_ctx_last_error_msg(C));
        return;
    }
    add_world_src(R, name, I(hint));
    int zero_one = is_size && R->opt.specialize_zero_one && (hint == 0 || hint == 1);
    if (dyn == SG_DIM_SIZE_LIKE_UNBACKED || dyn == SG_DIM_OBLIVIOUS_SIZE) {
        if (sg_expr_op(out) != SG_OP_SYM || find_sym(R, out))
            failf(R, "an unbacked input did not get a fresh symbol");
        else
            add_world_sym(R, out, I(hint), 0, 1, name);
        if (dyn == SG_DIM_OBLIVIOUS_SIZE && R->nsyms && R->syms[R->nsyms - 1].sym == out)
            R->syms[R->nsyms - 1].oblivious = 1;
        if (sg_env_npending(R->env) != b.npending)
            failf(R, "an unbacked input is pending");
        return;
    }
    if (sg_expr_op(out) != SG_OP_SYM) {
        int64_t v;
        if (!sg_expr_get_si(out, &v) || v != hint)
            failf(R, "input %s with hint %d became the constant %s", name, hint, T(out));
        if (dyn != SG_DIM_STATIC && !zero_one && !(dyn == SG_DIM_DUCK && R->opt.assume_static_by_default))
            failf(R, "input %s became a constant", name);
        return;
    }
    if (dyn == SG_DIM_STATIC || zero_one)
        failf(R, "input %s (%s, hint %d) became the symbol %s", name, dyn_name(dyn), hint, T(out));
    wsym *w = find_sym(R, out);
    if (w) {
        int64_t v;
        if (!w->backed || !sg_expr_get_si(w->val, &v) || v != hint)
            failf(R, "input %s with hint %d reuses %s, whose value is %s", name, hint, T(out), T(w->val));
        if (dyn != SG_DIM_DUCK || !R->opt.duck_shape || range)
            failf(R, "input %s reuses %s without duck sizing", name, T(out));
        return;
    }
    add_world_sym(R, out, I(hint), 1, is_size, name);
}

static void op_unbacked(run *R)
{
    if (R->nsyms >= MAXSYMS - 2 || R->nsrcs >= MAXSRCS - 2)
        return;
    int size_like = rnd(R, 2);
    int secret = size_like ? rint_in(R, 0, 20) : rint_in(R, -10, 20);
    char name[32], rtext[96];
    const char *source = NULL;
    if (rnd(R, 5) == 0) {
        snprintf(name, sizeof name, "in%u", R->ninputs++);
        source = name;
    }
    sg_interval iv;
    const sg_interval *range = rand_range(R, &iv, secret, rtext, sizeof rtext);
    const sg_expr *out = NULL;
    snap b = take_snap(R);
    sg_status s = sg_env_create_unbacked(R->env, &out, source, size_like, range);
    tracef(R, "unbacked %s%s%s (secret %d) -> %s", source ? source : "-", size_like ? " size" : "", rtext, secret,
           s ? sg_status_kind(s) : T(out));
    if (s != SG_OK) {
        failf(R, "sg_env_create_unbacked failed: %s", sg_ctx_last_error_msg(C));
        return;
    }
    if (sg_expr_op(out) != SG_OP_SYM || find_sym(R, out)) {
        failf(R, "sg_env_create_unbacked did not give a fresh symbol");
        return;
    }
    add_world_sym(R, out, I(secret), 0, size_like, source);
    if (source)
        add_world_src(R, source, I(secret));
    if (sg_env_npending(R->env) != b.npending + 1 || sg_env_pending(R->env, b.npending) != out)
        failf(R, "the new unbacked symbol is not the last pending one");
    if (rnd(R, 2)) {
        s = sg_env_bind_unbacked(R->env, out, ".size()[0]");
        tracef(R, "bind %s -> %s", T(out), sg_status_kind(s));
        if (s != SG_OK || sg_env_npending(R->env) != b.npending)
            failf(R, "binding a pending symbol: %s, %zu pending", sg_status_kind(s), sg_env_npending(R->env));
    }
}

/* An unbacked symbol made again for the value of an older one (a re-trace),
 * renamed to it. */
static void op_rename(run *R)
{
    size_t cand[MAXSYMS], nc = 0;
    for (size_t i = 0; i < R->nsyms; i++)
        if (!R->syms[i].backed)
            cand[nc++] = i;
    if (!nc || R->nsyms >= MAXSYMS - 2)
        return;
    wsym old = R->syms[cand[rnd(R, (unsigned)nc)]];
    const sg_expr *nu = NULL;
    sg_status s = sg_env_create_unbacked(R->env, &nu, NULL, old.size_like, NULL);
    if (s != SG_OK) {
        failf(R, "sg_env_create_unbacked failed: %s", sg_ctx_last_error_msg(C));
        return;
    }
    add_world_sym(R, nu, old.val, 0, old.size_like, NULL);
    s = sg_env_rename_unbacked(R->env, nu, old.sym);
    tracef(R, "unbacked%s -> %s; rename %s := %s -> %s", old.size_like ? " size" : "", T(nu), T(nu), T(old.sym),
           sg_status_kind(s));
    if (s != SG_OK)
        failf(R, "renaming %s to %s (equal in the world) failed: %s", T(nu), T(old.sym), sg_ctx_last_error_msg(C));
    sg_truth t = SG_UNKNOWN;
    const sg_expr *eq = NULL;
    if (!R->failed && (sg_expr_rel(C, &eq, SG_REL_EQ, nu, old.sym) != SG_OK || sg_env_known(R->env, &t, eq) != SG_OK ||
                       t != SG_TRUE))
        failf(R, "after renaming, %s == %s is %s", T(nu), T(old.sym), truth_name(t));
}

/* The value of a question in the world; 0 when it cannot be evaluated
 * (a zero divisor...): the question is then not checked. */
static int world_truth(run *R, const sg_expr *e, int *val)
{
    const sg_expr *v = NULL;
    if (world_eval(R, e, &v) != SG_OK) {
        sg_ctx_reset_error(C);
        return 0;
    }
    *val = sg_expr_op(v) == SG_OP_TRUE;
    return 1;
}

enum { Q_EVALUATE, Q_GUARD_OR, Q_OBLIVIOUS };

static void op_question(run *R, int kind)
{
    const sg_expr *c = rand_bool(R);
    if (!c || R->failed)
        return;
    int want;
    if (!world_truth(R, c, &want))
        return;
    int bo = backed_only(R, c), fb = (int)rnd(R, 2), out = -1;
    if (bo < 0) {
        failf(R, "the generator used a symbol unknown to the world");
        return;
    }
    snap b = take_snap(R);
    sg_status s;
    const char *what;
    if (kind == Q_EVALUATE) {
        what = "evaluate";
        s = sg_env_evaluate(R->env, &out, c, "fuzz");
    } else if (kind == Q_GUARD_OR) {
        what = fb ? "guard_or_true" : "guard_or_false";
        s = sg_env_guard_or(R->env, &out, c, fb, "fuzz");
    } else {
        what = "guard_size_oblivious";
        s = sg_env_guard_size_oblivious(R->env, &out, c, "fuzz");
    }
    tracef(R, "%s %s -> %s (world %s; guards %zu -> %zu)", what, T(c),
           s ? sg_status_kind(s) : out ? "true" : "false", want ? "true" : "false", b.nguards, sg_env_nguards(R->env));
    if (s != SG_OK) {
        unchanged(R, &b, what, s);
        if (frozen_refusal(R, s))
            return;
        if (s == SG_EDATADEP && !bo) {
            if (!strstr(sg_ctx_last_error_msg(C), "check"))
                failf(R, "the data-dependent message does not suggest a check: %s", sg_ctx_last_error_msg(C));
            return;
        }
        failf(R, "%s(%s) failed with %s: %s", what, T(c), sg_status_kind(s), sg_ctx_last_error_msg(C));
        return;
    }
    if (out != 0 && out != 1) {
        failf(R, "%s answered %d", what, out);
        return;
    }
    if (kind == Q_OBLIVIOUS && !oblivious_holds(R))
        return; /* size-oblivious answers assume what the world does not */
    if (kind == Q_GUARD_OR && !bo && out == fb)
        return; /* the fallback, or a proof: not distinguishable */
    if (out != want)
        failf(R, "%s(%s) answered %s; in the world it is %s%s", what, T(c), out ? "true" : "false",
              want ? "true" : "false", bo ? " (backed only)" : "");
}

static void op_known(run *R)
{
    const sg_expr *c = rand_bool(R);
    if (!c || R->failed)
        return;
    int want;
    if (!world_truth(R, c, &want))
        return;
    snap b = take_snap(R);
    sg_truth t = SG_UNKNOWN;
    sg_status s = sg_env_known(R->env, &t, c);
    tracef(R, "known %s -> %s (world %s)", T(c), s ? sg_status_kind(s) : truth_name(t), want ? "true" : "false");
    if (s != SG_OK) {
        failf(R, "sg_env_known(%s) failed: %s", T(c), sg_ctx_last_error_msg(C));
        return;
    }
    snap a = take_snap(R);
    if (a.nguards != b.nguards || a.nasserts != b.nasserts || a.nfacts != b.nfacts)
        failf(R, "sg_env_known recorded something");
    if (t != SG_UNKNOWN && t != (want ? SG_TRUE : SG_FALSE))
        failf(R, "known(%s) is %s; in the world it is %s", T(c), truth_name(t), want ? "true" : "false");
}

static void op_evaluate_int(run *R)
{
    const sg_expr *e = rand_int(R), *want = NULL, *out = NULL;
    if (!e || R->failed)
        return;
    if (world_eval(R, e, &want) != SG_OK) {
        sg_ctx_reset_error(C);
        return;
    }
    int bo = backed_only(R, e);
    snap b = take_snap(R);
    sg_status s = sg_env_evaluate_int(R->env, &out, e, "fuzz");
    tracef(R, "evaluate_int %s -> %s (world %s)", T(e), s ? sg_status_kind(s) : T(out), T(want));
    if (s != SG_OK) {
        unchanged(R, &b, "evaluate_int", s);
        if (frozen_refusal(R, s) || (s == SG_EDATADEP && !bo))
            return;
        failf(R, "evaluate_int(%s) failed with %s: %s", T(e), sg_status_kind(s), sg_ctx_last_error_msg(C));
        return;
    }
    if (out != want)
        failf(R, "evaluate_int(%s) is %s; in the world it is %s", T(e), T(out), T(want));
}

static void op_hint(run *R)
{
    const sg_expr *e = rnd(R, 2) ? rand_int(R) : rand_bool(R), *want = NULL, *out = NULL;
    if (!e || R->failed)
        return;
    if (world_eval(R, e, &want) != SG_OK) {
        sg_ctx_reset_error(C);
        return;
    }
    int bo = backed_only(R, e) || counterfactual_holds(R, e, want);
    sg_status s = sg_env_hint(R->env, &out, e);
    tracef(R, "hint %s -> %s", T(e), s ? sg_status_kind(s) : T(out));
    if (bo ? (s != SG_OK || out != want) : s != SG_EDATADEP)
        failf(R, "hint(%s) gives %s %s; expected %s", T(e), sg_status_kind(s), T(out), bo ? T(want) : "data-dependent");
}

/* Replacements hold in the world: replace(e) has e's value. */
static void op_replace(run *R)
{
    const sg_expr *e = rand_int(R), *want = NULL, *out = NULL, *got = NULL;
    if (!e || R->failed)
        return;
    if (world_eval(R, e, &want) != SG_OK) {
        sg_ctx_reset_error(C);
        return;
    }
    sg_status s = sg_env_replace(R->env, &out, e);
    tracef(R, "replace %s -> %s", T(e), s ? sg_status_kind(s) : T(out));
    if (s != SG_OK) {
        failf(R, "replace(%s) failed: %s", T(e), sg_ctx_last_error_msg(C));
        return;
    }
    s = world_eval(R, out, &got);
    if (s != SG_OK || got != want)
        failf(R, "replace(%s) = %s is %s in the world (%s), not %s", T(e), T(out), s ? sg_status_kind(s) : T(got),
              s ? sg_ctx_last_error_msg(C) : "", T(want));
}

static void op_check(run *R)
{
    const sg_expr *c = rand_bool(R);
    if (!c || R->failed)
        return;
    int val;
    if (!world_truth(R, c, &val))
        return;
    int bo = backed_only(R, c);
    /* A check false in the world is only made where it must be refused: on
     * backed symbols without prefer_runtime_asserts. */
    if (!val && (!bo || R->opt.prefer_runtime_asserts || rnd(R, 2))) {
        const sg_expr *n = NULL;
        if (sg_expr_not(C, &n, c) != SG_OK)
            return;
        c = n;
        val = 1;
    }
    snap b = take_snap(R);
    sg_status s = sg_env_check(R->env, c, "fuzz check");
    tracef(R, "check %s -> %s (world %s; guards %zu -> %zu, asserts %zu -> %zu)", T(c), sg_status_kind(s),
           val ? "true" : "false", b.nguards, sg_env_nguards(R->env), b.nasserts, sg_env_nasserts(R->env));
    if (s != SG_OK)
        unchanged(R, &b, "check", s);
    if (!val) {
        if (s != SG_EASSERT)
            failf(R, "check(%s), false at the hints, gives %s", T(c), sg_status_kind(s));
        return;
    }
    if (frozen_refusal(R, s))
        return;
    if (s != SG_OK)
        failf(R, "check(%s), true in the world, gives %s: %s", T(c), sg_status_kind(s), sg_ctx_last_error_msg(C));
}

static const sg_expr *src_value(run *R, const sg_expr *sym)
{
    for (size_t i = 0; i < R->nsrcs; i++)
        if (R->srcs[i].sym == sym)
            return R->srcs[i].val;
    return NULL;
}

/* (a) and (d), and the facts stay consistent (they all hold in the world). */
static void verify_records(run *R, int with_guard_set)
{
    if (R->failed)
        return;
    if (!sg_facts_consistent(sg_env_facts(R->env)))
        failf(R, "the environment's facts contradict each other (yet all hold in the world)");
    for (size_t i = 0; i < sg_env_nguards(R->env) && !R->failed; i++) {
        const char *prov = NULL;
        const sg_expr *g = sg_env_guard(R->env, i, &prov), *v = NULL;
        sg_status s = world_eval(R, g, &v);
        if (s != SG_OK || sg_expr_op(v) != SG_OP_TRUE)
            failf(R, "guard %zu (%s, from '%s') is %s at the hints%s%s", i, T(g), prov ? prov : "(null)",
                  s ? sg_status_kind(s) : T(v), s ? ": " : "", s ? sg_ctx_last_error_msg(C) : "");
        if (!prov)
            failf(R, "guard %zu has no provenance", i);
    }
    for (size_t i = 0; i < sg_env_nasserts(R->env) && !R->failed; i++) {
        const char *msg = NULL;
        const sg_expr *a = sg_env_assert(R->env, i, &msg), *v = NULL;
        sg_status s = world_eval(R, a, &v);
        if (s != SG_OK || sg_expr_op(v) != SG_OP_TRUE)
            failf(R, "runtime assertion %zu (%s) is %s in the world", i, T(a), s ? sg_status_kind(s) : T(v));
    }
    if (!with_guard_set || R->failed)
        return;
    const sg_expr **items = NULL;
    size_t n = 0;
    sg_status s = sg_env_produce_guards(R->env, &items, &n);
    if (s != SG_OK) {
        failf(R, "sg_env_produce_guards failed: %s", sg_ctx_last_error_msg(C));
        return;
    }
    const sg_expr *syms[MAXSRCS], *vals[MAXSRCS];
    for (size_t i = 0; i < R->nsrcs; i++) {
        syms[i] = R->srcs[i].sym;
        vals[i] = R->srcs[i].val;
    }
    for (size_t i = 0; i < n && !R->failed; i++) {
        const sg_expr **fs = NULL, *v = NULL;
        size_t nf = 0;
        if (sg_expr_free_symbols(C, &fs, &nf, items[i]) != SG_OK)
            fail_msg("sg_expr_free_symbols failed");
        for (size_t k = 0; k < nf; k++)
            if (!src_value(R, fs[k]))
                failf(R, "guard set item %s mentions %s, which is no input source", T(items[i]), T(fs[k]));
        sg_free(fs);
        if (sg_expr_sort(items[i]) != SG_SORT_BOOL) {
            failf(R, "guard set item %s is not boolean", T(items[i]));
            break;
        }
        if (R->failed)
            break;
        s = sg_expr_eval(C, &v, items[i], R->nsrcs, syms, vals);
        if (s != SG_OK || sg_expr_op(v) != SG_OP_TRUE)
            failf(R, "guard set item %s is %s at the inputs' values", T(items[i]), s ? sg_status_kind(s) : T(v));
    }
    if (R->failed) {
        tracef(R, "guard set:");
        for (size_t i = 0; i < n; i++)
            tracef(R, "  %s", T(items[i]));
    }
    sg_free(items);
}

static void op_mark(run *R)
{
    if (!R->have_mark) {
        saved *m = &R->mk;
        sg_env_mark_take(R->env, &m->mark);
        m->nsyms = R->nsyms;
        m->nsrcs = R->nsrcs;
        m->npending = sg_env_npending(R->env);
        m->nguards = sg_env_nguards(R->env);
        m->nasserts = sg_env_nasserts(R->env);
        m->nbacked = R->nbacked;
        m->nunbacked = R->nunbacked;
        m->frozen = R->frozen;
        for (int i = 0; i < 4; i++) {
            m->q[i] = rand_bool(R);
            m->a[i] = SG_UNKNOWN;
            if (m->q[i] && sg_env_known(R->env, &m->a[i], m->q[i]) != SG_OK)
                failf(R, "sg_env_known failed: %s", sg_ctx_last_error_msg(C));
        }
        if (sg_env_copy(&m->snapshot, R->env) != SG_OK)
            failf(R, "sg_env_copy failed: %s", sg_ctx_last_error_msg(C));
        R->have_mark = 1;
        tracef(R, "mark (guards %zu, asserts %zu, pending %zu)", m->nguards, m->nasserts, m->npending);
        return;
    }
    verify_records(R, 1); /* what is about to be forgotten was sound too */
    if (R->failed)
        return;
    saved *m = &R->mk;
    sg_status s = sg_env_mark_restore(R->env, &m->mark);
    tracef(R, "restore -> %s (guards %zu, asserts %zu, pending %zu)", sg_status_kind(s), sg_env_nguards(R->env),
           sg_env_nasserts(R->env), sg_env_npending(R->env));
    R->have_mark = 0;
    if (s != SG_OK) {
        failf(R, "sg_env_mark_restore failed: %s", sg_ctx_last_error_msg(C));
        return;
    }
    R->nsyms = m->nsyms;
    R->nsrcs = m->nsrcs;
    R->nbacked = m->nbacked;
    R->nunbacked = m->nunbacked;
    R->frozen = m->frozen;
    if (sg_env_nguards(R->env) != m->nguards || sg_env_nasserts(R->env) != m->nasserts ||
        sg_env_npending(R->env) != m->npending)
        failf(R, "after restore: guards %zu (want %zu), asserts %zu (want %zu), pending %zu (want %zu)",
              sg_env_nguards(R->env), m->nguards, sg_env_nasserts(R->env), m->nasserts, sg_env_npending(R->env),
              m->npending);
    /* Questions are answered as at the mark. Restoring derives the facts
     * afresh, which may settle more than the facts learned one by one did:
     * the answers are those of a copy taken at the mark, and never weaker
     * than at the mark. */
    for (int i = 0; i < 4 && !R->failed; i++) {
        sg_truth t = SG_UNKNOWN, c = SG_UNKNOWN;
        if (!m->q[i])
            continue;
        if (sg_env_known(R->env, &t, m->q[i]) != SG_OK || sg_env_known(m->snapshot, &c, m->q[i]) != SG_OK)
            failf(R, "sg_env_known failed: %s", sg_ctx_last_error_msg(C));
        else if (t != c || (m->a[i] != SG_UNKNOWN && t != m->a[i]))
            failf(R, "after restore, known(%s) is %s; at the mark it was %s, in a copy taken then %s", T(m->q[i]),
                  truth_name(t), truth_name(m->a[i]), truth_name(c));
    }
    sg_env_free(m->snapshot);
    m->snapshot = NULL;
    char nb[32], nu[32];
    snprintf(nb, sizeof nb, "s%u", R->nbacked);
    snprintf(nu, sizeof nu, "u%u", R->nunbacked);
    if (sg_env_symbol(R->env, nb) || sg_env_symbol(R->env, nu))
        failf(R, "after restore, %s or %s still exists", nb, nu);
}

static void op_copy(run *R)
{
    sg_env *c = NULL;
    sg_status s = sg_env_copy(&c, R->env);
    tracef(R, "copy -> %s", sg_status_kind(s));
    if (s != SG_OK) {
        failf(R, "sg_env_copy failed: %s", sg_ctx_last_error_msg(C));
        return;
    }
    if (sg_env_nguards(c) != sg_env_nguards(R->env) || sg_env_nasserts(c) != sg_env_nasserts(R->env) ||
        sg_env_npending(c) != sg_env_npending(R->env) || sg_env_ignored_guards(c) != sg_env_ignored_guards(R->env))
        failf(R, "the copy differs from the original");
    for (size_t i = 0; i < sg_env_nguards(c) && !R->failed; i++)
        if (sg_env_guard(c, i, NULL) != sg_env_guard(R->env, i, NULL))
            failf(R, "guard %zu of the copy differs", i);
    for (int i = 0; i < 3 && !R->failed; i++) { /* the copy knows what the original knows */
        const sg_expr *q = rand_bool(R);
        sg_truth a = SG_UNKNOWN, b = SG_UNKNOWN;
        if (q && (sg_env_known(R->env, &a, q) != SG_OK || sg_env_known(c, &b, q) != SG_OK || a != b))
            failf(R, "known(%s) is %s in the original, %s in its copy", T(q), truth_name(a), truth_name(b));
    }
    if (R->have_mark) {
        /* a mark belongs to its environment's history: keep the original */
        sg_env_free(c);
        return;
    }
    if (rnd(R, 2)) { /* go on with the copy */
        sg_env_free(R->env);
        R->env = c;
        tracef(R, "(continuing with the copy)");
        return;
    }
    /* a guard recorded in the copy does not reach the original */
    size_t ng = sg_env_nguards(R->env), nf = sg_facts_count(sg_env_facts(R->env));
    sg_env *orig = R->env;
    R->env = c;
    tracef(R, "(questions to the copy:)");
    op_question(R, Q_EVALUATE);
    op_check(R);
    verify_records(R, 0);
    R->env = orig;
    sg_env_free(c);
    tracef(R, "(back to the original)");
    if (sg_env_nguards(orig) != ng || sg_facts_count(sg_env_facts(orig)) != nf)
        failf(R, "questions to a copy changed the original");
}

static void op_freeze(run *R)
{
    if (R->frozen || R->have_mark)
        return;
    sg_env_freeze(R->env);
    R->frozen = 1;
    tracef(R, "freeze");
}

static void one_run(run *R)
{
    sg_env_options_default(&R->opt);
    R->opt.duck_shape = rnd(R, 5) != 0;
    R->opt.specialize_zero_one = rnd(R, 5) != 0;
    R->opt.assume_static_by_default = rnd(R, 10) == 0;
    R->opt.prefer_runtime_asserts = rnd(R, 5) == 0;
    R->opt.guard_limit = rnd(R, 6) == 0 ? 1 + rnd(R, 4) : 0;
    R->opt.freeze_mode = rnd(R, 2) ? SG_FREEZE_ERROR : SG_FREEZE_IGNORE;
    R->opt.stable_names = rnd(R, 4) == 0;
    tracef(R, "env duck_shape=%d specialize_zero_one=%d assume_static_by_default=%d prefer_runtime_asserts=%d "
              "guard_limit=%u freeze=%s stable_names=%d",
           R->opt.duck_shape, R->opt.specialize_zero_one, R->opt.assume_static_by_default,
           R->opt.prefer_runtime_asserts, R->opt.guard_limit, R->opt.freeze_mode ? "ignore" : "error",
           R->opt.stable_names);
    if (sg_env_new(C, &R->opt, &R->env) != SG_OK)
        fail_msg("sg_env_new failed: %s", sg_ctx_last_error_msg(C));
    unsigned nb = 2 + rnd(R, 5), nu = rnd(R, 4);
    for (unsigned i = 0; i < nb && !R->failed; i++)
        op_backed(R);
    for (unsigned i = 0; i < nu && !R->failed; i++)
        op_unbacked(R);
    unsigned nops = R->maxops > 40 ? 10 + rnd(R, R->maxops - 9) : 10 + rnd(R, 31);
    for (unsigned i = 0; i < nops && !R->failed; i++) {
        unsigned k = rnd(R, 100);
        if (k < 24)
            op_question(R, Q_EVALUATE);
        else if (k < 34)
            op_question(R, Q_GUARD_OR);
        else if (k < 40)
            op_question(R, Q_OBLIVIOUS);
        else if (k < 50)
            op_evaluate_int(R);
        else if (k < 66)
            op_check(R);
        else if (k < 76)
            op_known(R);
        else if (k < 79)
            op_hint(R);
        else if (k < 83)
            op_replace(R);
        else if (k < 87)
            op_backed(R);
        else if (k < 90)
            op_unbacked(R);
        else if (k < 92)
            op_rename(R);
        else if (k < 96)
            op_mark(R);
        else if (k < 98)
            op_copy(R);
        else
            op_freeze(R);
        verify_records(R, (i % 5) == 4);
    }
    verify_records(R, 1);
    sg_env_free(R->mk.snapshot);
    R->mk.snapshot = NULL;
    sg_env_free(R->env);
    R->env = NULL;
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *s = getenv(name);
    return s && *s ? strtoull(s, NULL, 0) : dflt;
}

static void test_soundness_fuzz(void **state)
{
    (void)state;
    uint64_t seed = env_u64("SG_TEST_SEED", DEFAULT_SEED);
    uint64_t runs = env_u64("SG_TEST_RUNS", DEFAULT_RUNS);
    const char *only = getenv("SG_TEST_RUN");
    uint64_t first = 0, last = runs;
    if (only && *only) {
        first = strtoull(only, NULL, 0);
        last = first + 1;
    }
    unsigned failures = 0;
    int summary = getenv("SG_TEST_SUMMARY") != NULL; /* one line per failed run */
    uint64_t maxops = env_u64("SG_TEST_OPS", 40);
    for (uint64_t k = first; k < last; k++) {
        run *R = calloc(1, sizeof *R);
        assert_non_null(R);
        /* a context per run: a run replays alone exactly as in the sequence */
        assert_int_equal(sg_ctx_new(&C), SG_OK);
        uint64_t s = seed ^ (k * 0xd1b54a32d192ed03ULL);
        R->rng = splitmix(&s);
        R->verbose = only && *only;
        R->maxops = (unsigned)maxops;
        one_run(R);
        if (R->failed) {
            if (summary)
                fprintf(stderr, "run %" PRIu64 ": %s\n", k, R->why);
            else if (failures < MAX_REPORTED)
                fprintf(stderr,
                        "env fuzz: run %" PRIu64 " failed (SG_TEST_SEED=%" PRIu64 " SG_TEST_RUN=%" PRIu64 "):\n  %s\n"
                        "trace:\n%s\n",
                        k, seed, k, R->why, R->trace ? R->trace : "");
            failures++;
        }
        free(R->trace);
        free(R);
        sg_ctx_free(C);
        C = NULL;
    }
    if (failures)
        fail_msg("env fuzz: %u of %" PRIu64 " runs failed (SG_TEST_SEED=%" PRIu64 ")", failures, last - first, seed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_soundness_fuzz),
    };
    return cmocka_run_group_tests_name("env_fuzz", tests, NULL, NULL);
}
