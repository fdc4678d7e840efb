/* Shape environment benchmark (issue 4): a trace-shaped workload.
 *
 * A seeded, deterministic imitation of what a tracer asks a shape
 * environment, at scale k (run_env.sh runs 1, 2, 4, 8; k = 8 is the full
 * workload of issue 4, k = 1 an eighth of it):
 *
 *   symbols   125*k: 85% tensor sizes (backed, hints 2..4096, 45% of them
 *             from 20 popular sizes, half of the leading dims the batch
 *             size; most under duck sizing, so equal hints share a symbol;
 *             15% of the inputs are DYNAMIC and get a fresh symbol even for a
 *             hint seen before), 5% plain integers (backed, not sizes, hints
 *             -8..100), 10% unbacked symbols (.item(); 80% size-like), each
 *             with a hidden value (its "witness") that every runtime
 *             assertion respects;
 *   questions 840*k distinct boolean conditions (distinct canonical forms):
 *             sizes against constants and against each other, numel bounds,
 *             x*y >= z, x % m == 0, x // 2 + y <= z, Max(...) against sizes
 *             and constants, Max(x, y) == x, sums, plain integers; 5% mention
 *             an unbacked symbol. 20% of the symbol picks are one of 4 hot
 *             sizes (batch, sequence...), 70% are near the current point of
 *             the trace;
 *   stream    12,500*k evaluate calls: question j is asked for the first time
 *             at call j*12500*k/(840*k), and every other call repeats an
 *             earlier question (55% one of the 32 newest, 25% biased to the
 *             oldest, 20% uniform), so most calls are repeats.
 *             sg_env_evaluate for questions over backed symbols,
 *             sg_env_guard_or (fallback false) for those with an unbacked one;
 *   asserts   62*k sg_env_check calls (500 at k = 8) on unbacked symbols,
 *             spread evenly through the stream, in the order of the unbacked
 *             symbols (a few checks after each .item()): u <= s, u >= 1,
 *             u < 2**31, u % 8 == 0, u + v <= s*t, u == s, ..., each true at
 *             the witnesses.
 *
 * At k = 8: 1,000 symbols, 6,720 distinct questions, 100,000 evaluate calls,
 * 500 checks. How many guards are recorded is an outcome, counted and printed
 * (about 5,000 at k = 8 are expected when every backed question can be
 * answered). -a replaces the Max(x, y) == x questions by Max(x, y) >= z
 * (same random draws), for libraries that mishandle that equality.
 *
 * Timed (CLOCK_MONOTONIC): symbol creation ("setup") and the stream (every
 * evaluate and check call, each timed alone too; the stream's process CPU
 * time is printed as well). Building the conditions (expression
 * constructors, benchmarked by bench_expr) is outside the clock. Each run
 * uses a fresh context and environment; the run with the smallest stream
 * time is reported. After the first run, untimed checks:
 *   - every recorded guard is true at the hints (sg_expr_eval; unbacked
 *     symbols at their witnesses, the fresh symbols _kN of divisibility facts
 *     solved from the replacements);
 *   - every runtime assertion is true there too;
 *   - no question over backed symbols fails with SG_EDATADEP, and the facts
 *     never become inconsistent;
 *   - every answer of sg_env_evaluate is the value of the question at the
 *     hints, and a repeated question gets the same answer; guard_or answers
 *     other than the fallback match the witnesses;
 *   - the guard set (sg_env_produce_guards, timed) is true at the inputs;
 *   - replaying the whole evaluate stream once more (the "cached" figure)
 *     records no guard and gives the same answers.
 * Any failure makes the exit status 1; the first few of each kind are
 * described on stderr.
 *
 * Usage: bench_env [-a] [-k SCALE] [-r RUNS] [-s SEED] [-t SECONDS] [-q PER_K] [-V 0|1]
 *   -r: runs (default 3); -s: seed (default 4);
 *   -t: give up a run after this many seconds of stream (default 600; 0:
 *       never); a run that gives up prints how far it got ("timeout 1");
 *   -q: distinct questions per unit of k (default 840);
 *   -V 0: skip the checks (for profiling).
 * Output: "key value" lines on stdout (read by run_env.sh).
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <shapeguard.h>

/* ---- small utilities ---------------------------------------------------- */

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench_env: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        die("out of memory");
    return p;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CPU time of the process: the stream's wall time and CPU time differ when
 * other processes compete for the CPU. */
static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* splitmix64 */
typedef struct {
    uint64_t s;
} rng;

static uint64_t rnext(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* uniform in [0, n) */
static uint32_t below(rng *r, uint32_t n)
{
    return (uint32_t)(((rnext(r) >> 32) * (uint64_t)n) >> 32);
}

static int chance(rng *r, unsigned pct)
{
    return below(r, 100) < pct;
}

static int64_t between(rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)below(r, (uint32_t)(hi - lo + 1));
}

/* id -> int64 map (open addressing; ids of expressions) */
typedef struct {
    uint64_t *keys; /* id + 1; 0: empty */
    int64_t *vals;
    size_t cap, used;
} idmap;

static void map_init(idmap *m, size_t cap)
{
    m->cap = 16;
    while (m->cap < 2 * cap)
        m->cap *= 2;
    m->keys = xcalloc(m->cap, sizeof *m->keys);
    m->vals = xcalloc(m->cap, sizeof *m->vals);
    m->used = 0;
}

static void map_free(idmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static int64_t *map_find(const idmap *m, uint64_t id)
{
    size_t mask = m->cap - 1;
    for (size_t j = (size_t)((id + 1) * 0x9e3779b97f4a7c15ULL >> 17) & mask; m->keys[j]; j = (j + 1) & mask)
        if (m->keys[j] == id + 1)
            return &m->vals[j];
    return NULL;
}

static void map_put(idmap *m, uint64_t id, int64_t v)
{
    int64_t *p = map_find(m, id);
    if (p) {
        *p = v;
        return;
    }
    if (2 * (m->used + 1) > m->cap) {
        idmap n;
        map_init(&n, m->cap);
        for (size_t j = 0; j < m->cap; j++)
            if (m->keys[j])
                map_put(&n, m->keys[j] - 1, m->vals[j]);
        map_free(m);
        *m = n;
    }
    size_t mask = m->cap - 1;
    size_t j = (size_t)((id + 1) * 0x9e3779b97f4a7c15ULL >> 17) & mask;
    while (m->keys[j])
        j = (j + 1) & mask;
    m->keys[j] = id + 1;
    m->vals[j] = v;
    m->used++;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* ---- the workload --------------------------------------------------------- */

enum { SK_SIZE, SK_INT, SK_UNB };

typedef struct {
    const sg_expr *e;
    int64_t val; /* hint, or witness of an unbacked symbol */
    int kind;
    int size_like; /* unbacked: size-like */
    long twin;     /* size: another size symbol with the same hint, or -1 */
} symv;

typedef struct {
    char *source;
    int64_t val;
} inputv;

enum { Q_EVAL, Q_GUARD_OR };

typedef struct {
    const sg_expr *e;
    int kind;
    int truth; /* value at the hints (Q_EVAL), at hints + witnesses (Q_GUARD_OR) */
} question;

typedef struct {
    unsigned k;
    uint64_t seed;
    size_t nsize, nint, nunb;
    size_t nq, nevals, nchecks;
} params;

typedef struct {
    const params *P;
    sg_ctx *ctx;
    sg_env *env;
    rng r;
    symv *syms;
    size_t nsyms;
    size_t *size_ix, *int_ix, *unb_ix;
    size_t nsize, nint, nunb;
    inputv *inputs;
    size_t ninputs, capinputs;
    idmap vals; /* symbol id -> value (hints, witnesses; later _kN) */
    idmap idx;  /* symbol id -> index in syms */
    question *qs;
    size_t nq;
    const sg_expr **asserts;
    const char **assert_msgs;
    size_t nasserts;
} workload;

static sg_ctx *g_ctx; /* for the expression helpers */
static int g_avoid_max_eq; /* -a: no Max(a, b) == a questions */

static void chk(sg_status s, const char *what)
{
    if (s)
        die("%s: %s (%s)", what, sg_status_kind(s), g_ctx ? sg_ctx_last_error_msg(g_ctx) : "");
}

static const sg_expr *I(int64_t v)
{
    const sg_expr *e;
    chk(sg_expr_int(g_ctx, &e, v), "int");
    return e;
}

/* The binary builders, each failing through chk with its name. */
#define BUILD2(NAME, FN, WHAT)                                                                               \
    static const sg_expr *NAME(const sg_expr *a, const sg_expr *b)                                           \
    {                                                                                                        \
        const sg_expr *e;                                                                                    \
        chk(FN(g_ctx, &e, a, b), WHAT);                                                                      \
        return e;                                                                                            \
    }
BUILD2(ADD, sg_expr_add, "add")
BUILD2(SUB, sg_expr_sub, "sub")
BUILD2(MUL, sg_expr_mul, "mul")
BUILD2(FDIV, sg_expr_floordiv, "floordiv")
BUILD2(MOD, sg_expr_mod, "mod")

static const sg_expr *MAXN(size_t n, const sg_expr *const *args)
{
    const sg_expr *e;
    chk(sg_expr_max(g_ctx, &e, n, args), "max");
    return e;
}

static const sg_expr *MAX2(const sg_expr *a, const sg_expr *b)
{
    const sg_expr *v[2] = {a, b};
    return MAXN(2, v);
}

static const sg_expr *REL(sg_rel rel, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *e;
    chk(sg_expr_rel(g_ctx, &e, rel, a, b), "rel");
    return e;
}

/* The value of e where every symbol has its value in W->vals; 0 and *ok = 0
 * when a symbol has none (or evaluation fails). Booleans give 0/1. */
static int64_t value_of(workload *W, const sg_expr *e, int *ok)
{
    const sg_expr **fs, *out;
    size_t n;
    *ok = 0;
    chk(sg_expr_free_symbols(W->ctx, &fs, &n, e), "free_symbols");
    const sg_expr **vals = xcalloc(n, sizeof *vals);
    int bound = 1;
    for (size_t i = 0; i < n && bound; i++) {
        int64_t *v = map_find(&W->vals, sg_expr_id(fs[i]));
        if (!v)
            bound = 0;
        else
            vals[i] = I(*v);
    }
    int64_t res = 0;
    if (bound && sg_expr_eval(W->ctx, &out, e, n, fs, vals) == SG_OK) {
        if (sg_expr_op(out) == SG_OP_TRUE)
            res = 1, *ok = 1;
        else if (sg_expr_op(out) == SG_OP_FALSE)
            res = 0, *ok = 1;
        else if (sg_expr_get_si(out, &res))
            *ok = 1;
    }
    if (!bound || !*ok)
        sg_ctx_reset_error(W->ctx);
    free(vals);
    sg_free(fs);
    return res;
}

static void add_input(workload *W, const char *source, int64_t val)
{
    if (W->ninputs == W->capinputs) {
        W->capinputs = W->capinputs ? 2 * W->capinputs : 256;
        W->inputs = realloc(W->inputs, W->capinputs * sizeof *W->inputs);
        if (!W->inputs)
            die("out of memory");
    }
    size_t n = strlen(source) + 1;
    W->inputs[W->ninputs].source = xcalloc(n, 1);
    memcpy(W->inputs[W->ninputs].source, source, n);
    W->inputs[W->ninputs].val = val;
    W->ninputs++;
}

static long find_sym(const workload *W, const sg_expr *e)
{
    const int64_t *i = map_find(&W->idx, sg_expr_id(e));
    return i ? (long)*i : -1;
}

static void push_sym(workload *W, const sg_expr *e, int64_t val, int kind, int size_like)
{
    symv *s = &W->syms[W->nsyms];
    s->e = e;
    s->val = val;
    s->kind = kind;
    s->size_like = size_like;
    s->twin = -1;
    size_t idx = W->nsyms++;
    if (kind == SK_SIZE)
        W->size_ix[W->nsize++] = idx;
    else if (kind == SK_INT)
        W->int_ix[W->nint++] = idx;
    else
        W->unb_ix[W->nunb++] = idx;
    map_put(&W->vals, sg_expr_id(e), val);
    map_put(&W->idx, sg_expr_id(e), (int64_t)idx);
}

static const int64_t popular[] = {8,   16,  32,  64,   128,  256,  512,  768,  1024, 2048,
                                  3072, 4096, 50, 197, 384, 1536, 1000, 100, 300, 2304};
#define NPOPULAR (sizeof popular / sizeof popular[0])

/* Symbols, as a tracer makes them from the inputs of a model. */
static void make_symbols(workload *W)
{
    const params *P = W->P;
    char src[96];
    size_t tensor = 0;
    /* tensor sizes */
    while (W->nsize < P->nsize) {
        unsigned rank = 1 + below(&W->r, 4);
        for (unsigned d = 0; d < rank && W->nsize < P->nsize; d++) {
            int64_t hint;
            unsigned pick = below(&W->r, 100);
            if (tensor > 0 && d == 0 && pick < 50)
                hint = W->syms[W->size_ix[0]].val; /* the batch size */
            else if (pick < 45)
                hint = popular[below(&W->r, NPOPULAR)];
            else if (pick < 60 && W->nsize > 0)
                hint = W->syms[W->size_ix[below(&W->r, (uint32_t)W->nsize)]].val;
            else
                hint = between(&W->r, 2, 4096);
            sg_dim_dynamic dyn = chance(&W->r, 15) ? SG_DIM_DYNAMIC : SG_DIM_DUCK;
            snprintf(src, sizeof src, "L['x%zu'].size()[%u]", tensor, d);
            const sg_expr *e;
            chk(sg_env_create_backed(W->env, &e, src, I(hint), dyn, 1, NULL), "create_backed");
            add_input(W, src, hint);
            if (sg_expr_op(e) == SG_OP_SYM && find_sym(W, e) < 0)
                push_sym(W, e, hint, SK_SIZE, 1);
        }
        tensor++;
    }
    /* plain integers */
    for (size_t i = 0; i < P->nint; i++) {
        int64_t hint = between(&W->r, -8, 100);
        snprintf(src, sizeof src, "L['n%zu']", i);
        const sg_expr *e;
        chk(sg_env_create_backed(W->env, &e, src, I(hint), SG_DIM_DYNAMIC, 0, NULL), "create_backed int");
        add_input(W, src, hint);
        if (sg_expr_op(e) != SG_OP_SYM || find_sym(W, e) >= 0)
            die("plain integer %s did not become a fresh symbol", src);
        push_sym(W, e, hint, SK_INT, 0);
    }
    /* unbacked symbols (.item(), nonzero()) */
    for (size_t i = 0; i < P->nunb; i++) {
        int size_like = chance(&W->r, 80);
        int64_t w;
        if (size_like) {
            w = chance(&W->r, 35) ? 8 * between(&W->r, 0, 512) : between(&W->r, 0, 4096);
            if (chance(&W->r, 8)) /* equal to a size: checked with u == s below */
                w = W->syms[W->size_ix[below(&W->r, (uint32_t)W->nsize)]].val;
        } else {
            w = between(&W->r, -100, 100);
        }
        snprintf(src, sizeof src, "L['t%zu'].item()", i);
        const sg_expr *e;
        chk(sg_env_create_unbacked(W->env, &e, src, size_like, NULL), "create_unbacked");
        add_input(W, src, w);
        push_sym(W, e, w, SK_UNB, size_like);
    }
}

/* A size symbol: 20% one of the 4 hot ones (batch, sequence, ...), 70% near
 * the current point of the trace, 10% any. */
static const symv *pick_size(workload *W, double pos)
{
    size_t n = W->nsize, i;
    unsigned p = below(&W->r, 100);
    if (p < 20) {
        i = below(&W->r, n < 4 ? (uint32_t)n : 4);
    } else if (p < 90) {
        long c = (long)(pos * (double)n) + (long)below(&W->r, 25) - 12;
        if (c < 0)
            c = -c;
        if (c >= (long)n)
            c = 2 * (long)n - 1 - c;
        i = c < 0 ? 0 : (size_t)c;
    } else {
        i = below(&W->r, (uint32_t)n);
    }
    return &W->syms[W->size_ix[i]];
}

static const symv *pick_unb(workload *W, double pos)
{
    long c = (long)(pos * (double)W->nunb) - (long)below(&W->r, 4);
    if (c < 0)
        c = 0;
    if (c >= (long)W->nunb)
        c = (long)W->nunb - 1;
    return &W->syms[W->unb_ix[c]];
}

static const sg_expr *S(workload *W, double pos)
{
    return pick_size(W, pos)->e;
}

static sg_rel any_order(workload *W)
{
    static const sg_rel r[] = {SG_REL_LT, SG_REL_LE, SG_REL_GT, SG_REL_GE};
    return r[below(&W->r, 4)];
}

static sg_rel any_rel(workload *W)
{
    static const sg_rel r[] = {SG_REL_LT, SG_REL_LE, SG_REL_GT, SG_REL_GE, SG_REL_NE, SG_REL_EQ};
    return r[below(&W->r, 6)];
}

/* One candidate question at position pos in [0, 1) of the trace. Every
 * random draw is its own statement: the order in which C evaluates function
 * arguments is unspecified, and the workload must not depend on it. */
static const sg_expr *gen_question(workload *W, double pos)
{
    rng *r = &W->r;
    unsigned t = below(r, 100);
    if (t < 20) { /* a size against a constant */
        const symv *s = pick_size(W, pos);
        unsigned c = below(r, 100);
        int64_t v;
        if (c < 40)
            v = popular[below(r, NPOPULAR)];
        else if (c < 60)
            v = s->val;
        else if (c < 75)
            v = s->val + between(r, -3, 3);
        else if (c < 90)
            v = between(r, 0, 3);
        else
            v = between(r, 2, 4096);
        if (c >= 75 && c < 90 && v <= 1 && chance(r, 50)) {
            sg_rel rel = chance(r, 50) ? SG_REL_EQ : SG_REL_NE;
            return REL(rel, s->e, I(v)); /* decided by the range [2, oo] */
        }
        if (chance(r, 2))
            return REL(SG_REL_EQ, s->e, I(s->val)); /* specializes the symbol */
        static const sg_rel rr[] = {SG_REL_LT, SG_REL_LE, SG_REL_GT, SG_REL_GE, SG_REL_NE};
        return REL(rr[below(r, 5)], s->e, I(v));
    }
    if (t < 32) { /* a size against a size (broadcasting) */
        const symv *a = pick_size(W, pos);
        if (a->twin >= 0 && chance(r, 30)) {
            sg_rel rel = chance(r, 85) ? SG_REL_EQ : SG_REL_NE;
            return REL(rel, a->e, W->syms[a->twin].e);
        }
        sg_rel rel = any_rel(W);
        const sg_expr *b = S(W, pos);
        return REL(rel, a->e, b);
    }
    if (t < 42) { /* numel */
        const sg_expr *a = S(W, pos), *b = S(W, pos);
        const sg_expr *p = MUL(a, b);
        unsigned c = below(r, 3);
        if (c == 0) {
            sg_rel rel = chance(r, 50) ? SG_REL_LE : SG_REL_LT;
            const sg_expr *z = S(W, pos);
            return REL(rel, MUL(p, z), I(2147483647));
        }
        sg_rel rel = any_rel(W);
        const sg_expr *y = S(W, pos);
        if (c == 1) {
            const sg_expr *z = S(W, pos);
            return REL(rel, p, MUL(y, z));
        }
        return REL(rel, p, y);
    }
    if (t < 52) { /* x*y >= z */
        const sg_expr *a = S(W, pos), *b = S(W, pos), *c = S(W, pos);
        switch (below(r, 3)) {
        case 0:
            return REL(SG_REL_GE, MUL(a, b), c);
        case 1: {
            const sg_expr *d = S(W, pos);
            return REL(SG_REL_GT, MUL(a, b), ADD(c, d));
        }
        default: {
            sg_rel rel = any_order(W);
            int64_t m = between(r, 2, 16);
            return REL(rel, MUL(I(m), a), b);
        }
        }
    }
    if (t < 60) { /* divisibility */
        static const int64_t ms[] = {2, 4, 8, 8, 8, 16, 16, 32, 64, 128};
        const sg_expr *m = I(ms[below(r, 10)]), *x;
        unsigned c = below(r, 10);
        const sg_expr *a = S(W, pos);
        if (c < 6) {
            x = a;
        } else if (c < 8) {
            const sg_expr *b = S(W, pos);
            x = MUL(a, b);
        } else {
            x = ADD(a, I(between(r, -4, 4)));
        }
        sg_rel rel = chance(r, 85) ? SG_REL_EQ : SG_REL_NE;
        return REL(rel, MOD(x, m), I(0));
    }
    if (t < 70) { /* floor division */
        const sg_expr *a = S(W, pos), *b = S(W, pos), *c = S(W, pos);
        unsigned form = below(r, 4);
        sg_rel rel = any_order(W);
        switch (form) {
        case 0:
            return REL(SG_REL_LE, ADD(FDIV(a, I(2)), b), c);
        case 1:
            return REL(rel, FDIV(ADD(a, I(127)), I(128)), b);
        case 2:
            return REL(rel, FDIV(a, b), I(between(r, 1, 8)));
        default:
            return REL(rel, FDIV(MUL(a, b), I(8)), I(between(r, 16, 1 << 20)));
        }
    }
    if (t < 78) { /* Max */
        const sg_expr *a = S(W, pos), *b = S(W, pos), *c = S(W, pos);
        unsigned form = below(r, 4);
        sg_rel rel = any_order(W);
        switch (form) {
        case 0:
            return REL(rel, MAX2(a, b), c);
        case 1:
            if (g_avoid_max_eq) /* same draws, another question */
                return REL(SG_REL_GE, MAX2(a, b), c);
            return REL(SG_REL_EQ, MAX2(a, b), a);
        case 2:
            return REL(SG_REL_GE, MAX2(SUB(a, I(between(r, 1, 64))), I(1)), b);
        default: {
            const sg_expr *v[3] = {a, b, c};
            return REL(rel, MAXN(3, v), I(between(r, 64, 4096)));
        }
        }
    }
    if (t < 90) { /* sums (cat, padding, slicing) */
        const sg_expr *a = S(W, pos), *b = S(W, pos), *c = S(W, pos);
        unsigned form = below(r, 4);
        sg_rel rel = form == 0 ? any_rel(W) : any_order(W);
        switch (form) {
        case 0:
            return REL(rel, ADD(a, b), c);
        case 1:
            return REL(rel, ADD(ADD(a, b), c), I(between(r, 64, 8192)));
        case 2:
            return REL(rel, SUB(MUL(I(2), a), b), I(between(r, -64, 64)));
        default:
            return REL(rel, SUB(a, b), I(0));
        }
    }
    if (t < 95) { /* plain integers */
        const symv *p = &W->syms[W->int_ix[below(r, (uint32_t)W->nint)]];
        const sg_expr *a = S(W, pos), *b = S(W, pos);
        unsigned form = below(r, 4);
        sg_rel rel = form == 0 ? any_rel(W) : any_order(W);
        switch (form) {
        case 0:
            return REL(rel, p->e, I(between(r, -8, 100)));
        case 1:
            return REL(rel, ADD(p->e, a), b);
        case 2:
            return REL(rel, MUL(I(2), p->e), a);
        default:
            return REL(SG_REL_GE, p->e, I(0));
        }
    }
    /* unbacked (asked with guard_or_false) */
    const symv *u = pick_unb(W, pos), *v = pick_unb(W, pos);
    const sg_expr *s = S(W, pos);
    unsigned form = below(r, 7);
    sg_rel rel = form == 1 ? any_rel(W) : any_order(W);
    switch (form) {
    case 0:
        return REL(rel, u->e, s);
    case 1:
        return REL(rel, u->e, I(between(r, 0, 8)));
    case 2:
        return REL(SG_REL_LE, ADD(u->e, v->e), s);
    case 3:
        return REL(SG_REL_GE, u->e, I(0));
    case 4:
        return REL(SG_REL_EQ, u->e, I(0));
    case 5:
        return REL(rel, MAX2(u->e, I(1)), s);
    default:
        return REL(SG_REL_EQ, MOD(u->e, I(8)), I(0));
    }
}

static int has_unbacked(workload *W, const sg_expr *e)
{
    const sg_expr **fs;
    size_t n;
    chk(sg_expr_free_symbols(W->ctx, &fs, &n, e), "free_symbols");
    int found = 0;
    for (size_t i = 0; i < n && !found; i++) {
        long k = find_sym(W, fs[i]);
        found = k >= 0 && W->syms[k].kind == SK_UNB;
    }
    sg_free(fs);
    return found;
}

static void make_questions(workload *W)
{
    const params *P = W->P;
    W->qs = xcalloc(P->nq, sizeof *W->qs);
    idmap seen;
    map_init(&seen, P->nq);
    size_t tries = 0;
    while (W->nq < P->nq) {
        if (++tries > 100 * P->nq + 1000)
            die("could not make %zu distinct questions (%zu made)", P->nq, W->nq);
        const sg_expr *q = gen_question(W, (double)W->nq / (double)P->nq);
        sg_op op = sg_expr_op(q);
        if (op == SG_OP_TRUE || op == SG_OP_FALSE || map_find(&seen, sg_expr_id(q)))
            continue;
        int ok;
        int64_t v = value_of(W, q, &ok);
        if (!ok)
            die("a question does not evaluate at the hints");
        map_put(&seen, sg_expr_id(q), 1);
        question *Q = &W->qs[W->nq++];
        Q->e = q;
        Q->kind = has_unbacked(W, q) ? Q_GUARD_OR : Q_EVAL;
        Q->truth = (int)v;
    }
    map_free(&seen);
}

/* One runtime assertion about unbacked symbol u, true at the witnesses. */
static const sg_expr *gen_assert(workload *W, const symv *u, double pos, const char **msg)
{
    rng *r = &W->r;
    for (int attempt = 0; attempt < 64; attempt++) {
        const sg_expr *c = NULL;
        const symv *s = pick_size(W, pos), *s2 = pick_size(W, pos), *v = pick_unb(W, pos);
        unsigned form = below(r, u->size_like ? 9 : 3);
        int64_t n = between(r, 0, 4096);
        if (u->size_like) {
            switch (form) {
            case 0:
                c = REL(SG_REL_LE, u->e, s->e), *msg = "nonzero count <= size";
                break;
            case 1:
                c = REL(SG_REL_GE, u->e, I(1 + n % 2)), *msg = "size >= 1";
                break;
            case 2:
                c = REL(SG_REL_LT, u->e, I(n % 2 ? 2147483647 : 65536)), *msg = "fits int32";
                break;
            case 3:
                c = REL(SG_REL_EQ, MOD(u->e, I(8)), I(0)), *msg = "aligned";
                break;
            case 4:
                c = REL(SG_REL_LE, ADD(u->e, v->e), MUL(s->e, s2->e)), *msg = "split sizes fit";
                break;
            case 5:
                c = REL(SG_REL_NE, u->e, I(0)), *msg = "non-empty";
                break;
            case 6:
                c = REL(SG_REL_LE, v->e, u->e), *msg = "ordered";
                break;
            case 7:
                /* u == s for the first size whose hint is the witness, if any */
                for (size_t i = 0; i < W->nsize && !c; i++)
                    if (W->syms[W->size_ix[i]].val == u->val)
                        c = REL(SG_REL_EQ, u->e, W->syms[W->size_ix[i]].e), *msg = "matches input size";
                break;
            default:
                c = REL(SG_REL_LE, MUL(I(2), u->e), ADD(s->e, I(n))), *msg = "bounded by a size";
                break;
            }
        } else {
            switch (form) {
            case 0:
                c = REL(SG_REL_GE, u->e, I(-100 - n % 29)), *msg = "lower bound";
                break;
            case 1:
                c = REL(SG_REL_LE, u->e, I(100 + n % 29)), *msg = "upper bound";
                break;
            default:
                c = REL(SG_REL_GE, ADD(MUL(I(2), u->e), s->e), I(0)), *msg = "index in range";
                break;
            }
        }
        if (!c)
            continue;
        sg_op op = sg_expr_op(c);
        if (op == SG_OP_TRUE || op == SG_OP_FALSE)
            continue;
        int ok;
        if (value_of(W, c, &ok) == 1 && ok)
            return c;
    }
    return NULL;
}

static void make_asserts(workload *W)
{
    const params *P = W->P;
    W->asserts = xcalloc(P->nchecks, sizeof *W->asserts);
    W->assert_msgs = xcalloc(P->nchecks, sizeof *W->assert_msgs);
    for (size_t i = 0; i < P->nchecks; i++) {
        double pos = ((double)i + 0.5) / (double)P->nchecks;
        const symv *u = &W->syms[W->unb_ix[(size_t)(pos * (double)W->nunb)]];
        const char *msg = NULL;
        const sg_expr *c = gen_assert(W, u, pos, &msg);
        if (!c)
            die("could not make assertion %zu", i);
        W->asserts[W->nasserts] = c;
        W->assert_msgs[W->nasserts++] = msg;
    }
}

static void setup_twins(workload *W)
{
    for (size_t i = 0; i < W->nsize; i++) {
        symv *a = &W->syms[W->size_ix[i]];
        for (size_t j = 0; j < W->nsize && a->twin < 0; j++)
            if (j != i && W->syms[W->size_ix[j]].val == a->val)
                a->twin = (long)W->size_ix[j];
    }
}

/* ---- the stream ------------------------------------------------------------ */

/* events: >= 0 a question index; < 0 the assertion -e - 1 */
static int32_t *make_stream(const params *P, uint64_t seed, size_t *nev)
{
    rng r = {seed ^ 0x5eed5eed5eedULL};
    size_t n = P->nevals + P->nchecks, e = 0, introduced = 0, next_check = 0;
    int32_t *ev = xcalloc(n, sizeof *ev);
    for (size_t t = 0; t < P->nevals; t++) {
        while (next_check < P->nchecks &&
               (size_t)(((double)next_check + 0.5) * (double)P->nevals / (double)P->nchecks) <= t)
            ev[e++] = -(int32_t)next_check++ - 1;
        if (introduced < P->nq && (size_t)((double)introduced * (double)P->nevals / (double)P->nq) <= t) {
            ev[e++] = (int32_t)introduced++;
            continue;
        }
        unsigned p = below(&r, 100);
        size_t q;
        if (p < 55) {
            size_t w = introduced < 32 ? introduced : 32;
            q = introduced - 1 - below(&r, (uint32_t)w);
        } else if (p < 80) {
            double u = (double)(rnext(&r) >> 11) / 9007199254740992.0;
            q = (size_t)(u * u * u * (double)introduced);
        } else {
            q = below(&r, (uint32_t)introduced);
        }
        ev[e++] = (int32_t)q;
    }
    while (next_check < P->nchecks)
        ev[e++] = -(int32_t)next_check++ - 1;
    *nev = e;
    return ev;
}

/* Details of failures on stderr (the first few of each kind). */
static void report(workload *W, const char *what, const sg_expr *e, const char *fmt, ...)
{
    static int count[16];
    static const char *kinds[16];
    int k = 0;
    while (k < 15 && kinds[k] && strcmp(kinds[k], what))
        k++;
    kinds[k] = what;
    if (count[k]++ >= 5)
        return;
    char *t = NULL;
    if (sg_print(W->ctx, &t, e, SG_FMT_SG) != SG_OK)
        t = NULL;
    fprintf(stderr, "bench_env: %s: %s", what, t ? t : "?");
    sg_free(t);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ---- one run --------------------------------------------------------------- */

/* classes of calls: evaluate (first/repeated, recorded a guard or not),
 * guard_or (answered by a proof, or the fallback), check, SG_EDATADEP */
enum {
    C_COLD_GUARD, C_COLD_STATIC, C_WARM_GUARD, C_WARM_STATIC, C_GOR_PROVED, C_GOR_FALLBACK, C_CHECK, C_ERROR,
    NCLASS
};
#define NDECILE 10

typedef struct {
    int timeout;
    size_t done_evals, done_checks;
    int64_t setup_ns, stream_ns, stream_cpu_ns;
    int64_t cls_ns[NCLASS];
    size_t cls_n[NCLASS];
    int64_t decile_ns[NDECILE];
    size_t decile_n[NDECILE];
    int64_t *cold_t, *warm_t; /* per-call times: first calls that record a guard, repeats */
    size_t ncold, nwarm;
    size_t guards, asserts, guard_or_n, guard_or_fallback;
    size_t answer_mismatch;
    int64_t check_recorded_guards;
    size_t datadep_distinct; /* distinct backed questions answered SG_EDATADEP */
    long inconsistent_at;    /* event after which the facts were inconsistent, or -1 */
    size_t facts, replaced;  /* facts in the base, symbols with a replacement (after the stream) */
} result;

/* The first error message of a backed question answered SG_EDATADEP. */
static char g_datadep_msg[512];

static void workload_free(workload *W)
{
    sg_env_free(W->env);
    sg_ctx_free(W->ctx);
    for (size_t i = 0; i < W->ninputs; i++)
        free(W->inputs[i].source);
    free(W->inputs);
    free(W->syms);
    free(W->size_ix);
    free(W->int_ix);
    free(W->unb_ix);
    free(W->qs);
    free(W->asserts);
    free(W->assert_msgs);
    map_free(&W->vals);
    map_free(&W->idx);
    g_ctx = NULL;
}

static void workload_new(workload *W, const params *P, result *R)
{
    memset(W, 0, sizeof *W);
    W->P = P;
    W->r.s = P->seed;
    chk(sg_ctx_new(&W->ctx), "ctx_new");
    g_ctx = W->ctx;
    size_t ns = P->nsize + P->nint + P->nunb;
    W->syms = xcalloc(ns, sizeof *W->syms);
    W->size_ix = xcalloc(ns, sizeof *W->size_ix);
    W->int_ix = xcalloc(ns, sizeof *W->int_ix);
    W->unb_ix = xcalloc(ns, sizeof *W->unb_ix);
    map_init(&W->vals, 4 * ns);
    map_init(&W->idx, ns);
    chk(sg_env_new(W->ctx, NULL, &W->env), "env_new");
    int64_t t0 = now_ns();
    make_symbols(W);
    R->setup_ns = now_ns() - t0;
    setup_twins(W);
    make_questions(W);
    make_asserts(W);
}

static void run_stream(workload *W, const int32_t *ev, size_t nev, int *answers, result *R, int64_t cap_ns)
{
    const params *P = W->P;
    char *asked = xcalloc(W->nq, 1);
    R->cold_t = xcalloc(W->nq, sizeof *R->cold_t);
    R->warm_t = xcalloc(P->nevals, sizeof *R->warm_t);
    sg_env *env = W->env;
    size_t nevals_done = 0;
    R->inconsistent_at = -1;
    sg_facts *facts = sg_env_facts(env);
    int64_t cpu0 = cpu_ns();
    int64_t start = now_ns(), t0 = start;
    for (size_t i = 0; i < nev; i++) {
        if (R->inconsistent_at < 0 && i > 0 && !sg_facts_consistent(facts)) {
            R->inconsistent_at = (long)i - 1;
            int32_t y = ev[i - 1];
            report(W, "the facts became inconsistent after", y < 0 ? W->asserts[-y - 1] : W->qs[y].e,
                   " (event %zu, %s, %zu guards)", i - 1, y < 0 ? "check" : "evaluate", sg_env_nguards(env));
        }
        int32_t x = ev[i];
        if (cap_ns > 0 && t0 - start > cap_ns) {
            R->timeout = 1;
            break;
        }
        if (x < 0) {
            size_t a = (size_t)(-x - 1);
            size_t g0 = sg_env_nguards(env);
            sg_status s = sg_env_check(env, W->asserts[a], W->assert_msgs[a]);
            int64_t t1 = now_ns();
            if (s)
                die("sg_env_check %zu: %s (%s)", a, sg_status_kind(s), sg_ctx_last_error_msg(W->ctx));
            R->check_recorded_guards += (int64_t)(sg_env_nguards(env) - g0);
            R->cls_ns[C_CHECK] += t1 - t0;
            R->cls_n[C_CHECK]++;
            R->done_checks++;
            t0 = t1;
        } else {
            const question *Q = &W->qs[x];
            size_t g0 = sg_env_nguards(env);
            int ans;
            sg_status s = Q->kind == Q_EVAL ? sg_env_evaluate(env, &ans, Q->e, "bench")
                                            : sg_env_guard_or(env, &ans, Q->e, 0, "bench");
            int64_t t1 = now_ns(), dt = t1 - t0;
            if (s == SG_EDATADEP && Q->kind == Q_EVAL) {
                /* a question over backed symbols must not need an unbacked
                 * value: counted as a failure, and the run goes on */
                if (!g_datadep_msg[0])
                    snprintf(g_datadep_msg, sizeof g_datadep_msg, "%s", sg_ctx_last_error_msg(W->ctx));
                if (!asked[x])
                    report(W, "data-dependent backed question", Q->e, " (event %zu): %s", i,
                           sg_ctx_last_error_msg(W->ctx));
                sg_ctx_reset_error(W->ctx);
                if (!asked[x]) {
                    asked[x] = 1;
                    answers[x] = -1;
                    R->datadep_distinct++;
                }
                R->cls_ns[C_ERROR] += dt;
                R->cls_n[C_ERROR]++;
                size_t d = nevals_done * NDECILE / P->nevals;
                R->decile_ns[d] += dt;
                R->decile_n[d]++;
                nevals_done++;
                R->done_evals++;
                t0 = t1;
                continue;
            }
            if (s)
                die("evaluate of question %d: %s (%s)", x, sg_status_kind(s), sg_ctx_last_error_msg(W->ctx));
            int guarded = sg_env_nguards(env) != g0;
            int cls = C_WARM_STATIC;
            if (Q->kind == Q_GUARD_OR)
                cls = ans ? C_GOR_PROVED : C_GOR_FALLBACK;
            if (!asked[x]) {
                asked[x] = 1;
                answers[x] = ans;
                if (Q->kind == Q_EVAL) {
                    cls = guarded ? C_COLD_GUARD : C_COLD_STATIC;
                    if (guarded)
                        R->cold_t[R->ncold++] = dt;
                }
            } else {
                /* evaluate: the same answer every time. guard_or: the
                 * fallback (false) may become true once something proves
                 * it, never the reverse */
                if (answers[x] < 0 || (Q->kind == Q_GUARD_OR && answers[x] == 0 && ans == 1)) {
                    answers[x] = ans; /* first answer after SG_EDATADEP, or a fallback proved */
                } else if (answers[x] != ans) {
                    R->answer_mismatch++;
                    report(W, "answer changed", Q->e, " (event %zu): %d, before %d, %d at the %s", i, ans,
                           answers[x], Q->truth, Q->kind == Q_EVAL ? "hints" : "witnesses");
                }
                if (Q->kind == Q_EVAL) {
                    cls = guarded ? C_WARM_GUARD : C_WARM_STATIC;
                    R->warm_t[R->nwarm++] = dt;
                }
            }
            if (Q->kind == Q_GUARD_OR) {
                R->guard_or_n++;
                R->guard_or_fallback += ans == 0;
            }
            R->cls_ns[cls] += dt;
            R->cls_n[cls]++;
            size_t d = nevals_done * NDECILE / P->nevals;
            R->decile_ns[d] += dt;
            R->decile_n[d]++;
            nevals_done++;
            R->done_evals++;
            t0 = t1;
        }
    }
    R->stream_ns = t0 - start;
    R->stream_cpu_ns = cpu_ns() - cpu0;
    R->guards = sg_env_nguards(env);
    R->asserts = sg_env_nasserts(env);
    R->facts = sg_facts_count(facts);
    for (size_t j = 0; j < W->nsyms; j++) {
        const sg_expr *r;
        chk(sg_env_replace(env, &r, W->syms[j].e), "replace");
        R->replaced += r != W->syms[j].e;
    }
    free(asked);
}

static int64_t percentile(int64_t *v, size_t n, double p)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, cmp_i64);
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i];
}

/* ---- checks (untimed) ----------------------------------------------------- */

/* Values of the fresh symbols _kN of divisibility facts: for each symbol x
 * replaced by m*_k + c, _k = (value(x) - c) / m. */
static void solve_fresh(workload *W)
{
    for (int round = 0; round < 4; round++) {
        for (size_t i = 0; i < W->nsyms; i++) {
            const sg_expr *r;
            chk(sg_env_replace(W->env, &r, W->syms[i].e), "replace");
            if (r == W->syms[i].e)
                continue;
            const sg_expr **fs;
            size_t n;
            chk(sg_expr_free_symbols(W->ctx, &fs, &n, r), "free_symbols");
            /* the one symbol without a value, if r is linear in it: r = m*k + rest */
            const sg_expr *k = NULL;
            size_t unknown = 0;
            for (size_t j = 0; j < n; j++)
                if (!map_find(&W->vals, sg_expr_id(fs[j])))
                    k = fs[j], unknown++;
            sg_free(fs);
            if (unknown != 1)
                continue;
            const sg_expr *zero = I(0), *one = I(1), *r0, *r1;
            chk(sg_expr_subs(W->ctx, &r0, r, 1, &k, &zero), "subs");
            chk(sg_expr_subs(W->ctx, &r1, r, 1, &k, &one), "subs");
            int ok0, ok1;
            int64_t c = value_of(W, r0, &ok0), m = value_of(W, r1, &ok1) - c;
            if (!ok0 || !ok1 || m == 0 || (W->syms[i].val - c) % m != 0)
                continue;
            map_put(&W->vals, sg_expr_id(k), (W->syms[i].val - c) / m);
            /* verify linearity: r at the solved value is the symbol's value */
            int ok;
            if (value_of(W, r, &ok) != W->syms[i].val || !ok)
                die("replacement of %s is not linear in a fresh symbol", sg_expr_sym_name(W->syms[i].e));
        }
    }
}

typedef struct {
    size_t guards_false, guards_unverified, asserts_false, asserts_unverified;
    size_t answers_wrong, guard_or_wrong, produced, produced_false, produced_unverified;
    size_t replay_new_guards, replay_mismatch, replay_guards_dup;
    int64_t produce_ns, replay_ns, replay_eval_ns, replay_gor_ns, replay_eval_median_ns, replay_eval_p99_ns;
    int64_t replay_gor_median_ns;
    size_t replay_n, replay_eval_n, replay_gor_n;
} checks;

static void verify(workload *W, const int32_t *ev, size_t nev, const int *answers, checks *C)
{
    memset(C, 0, sizeof *C);
    solve_fresh(W);
    int ok;
    for (size_t i = 0; i < sg_env_nguards(W->env); i++) {
        const sg_expr *g = sg_env_guard(W->env, i, NULL);
        int64_t v = value_of(W, g, &ok);
        if (!ok) {
            C->guards_unverified++;
            report(W, "guard not evaluable", g, "");
        } else if (v != 1) {
            C->guards_false++;
            report(W, "guard false at the hints", g, "");
        }
    }
    for (size_t i = 0; i < sg_env_nasserts(W->env); i++) {
        const sg_expr *a = sg_env_assert(W->env, i, NULL);
        int64_t v = value_of(W, a, &ok);
        if (!ok)
            C->asserts_unverified++;
        else if (v != 1)
            C->asserts_false++;
    }
    for (size_t q = 0; q < W->nq; q++) {
        if (answers[q] < 0)
            continue; /* answered SG_EDATADEP: counted already */
        if (W->qs[q].kind == Q_EVAL && answers[q] != W->qs[q].truth) {
            C->answers_wrong++;
            report(W, "wrong first answer", W->qs[q].e, ": %d, %d at the hints", answers[q], W->qs[q].truth);
        }
        if (W->qs[q].kind == Q_GUARD_OR && answers[q] != 0 && answers[q] != W->qs[q].truth) {
            C->guard_or_wrong++;
            report(W, "wrong guard_or answer", W->qs[q].e, ": %d, %d at the witnesses", answers[q],
                   W->qs[q].truth);
        }
    }
    /* guards over sources */
    const sg_expr **gs;
    size_t n;
    int64_t t0 = now_ns();
    chk(sg_env_produce_guards(W->env, &gs, &n), "produce_guards");
    C->produce_ns = now_ns() - t0;
    C->produced = n;
    idmap saved = W->vals;
    map_init(&W->vals, W->ninputs);
    for (size_t i = 0; i < W->ninputs; i++) {
        const sg_expr *s;
        chk(sg_expr_sym(W->ctx, &s, W->inputs[i].source), "sym");
        map_put(&W->vals, sg_expr_id(s), W->inputs[i].val);
    }
    for (size_t i = 0; i < n; i++) {
        int64_t v = value_of(W, gs[i], &ok);
        if (!ok) {
            C->produced_unverified++;
            report(W, "produced guard not evaluable", gs[i], "");
        } else if (v != 1) {
            C->produced_false++;
            report(W, "produced guard false at the inputs", gs[i], "");
        }
    }
    sg_free(gs);
    map_free(&W->vals);
    W->vals = saved;
    /* replay the evaluate stream: everything is known now. Each call is
     * timed alone, and the loop as a whole. Questions that failed with
     * SG_EDATADEP are left out (a tracer stops there). */
    size_t g0 = sg_env_nguards(W->env);
    int64_t *tv = xcalloc(nev, sizeof *tv), *tg = xcalloc(nev, sizeof *tg);
    size_t ntv = 0, ntg = 0;
    t0 = now_ns();
    int64_t tprev = t0;
    for (size_t i = 0; i < nev; i++) {
        if (ev[i] < 0 || answers[ev[i]] < 0)
            continue;
        const question *Q = &W->qs[ev[i]];
        int ans;
        sg_status s = Q->kind == Q_EVAL ? sg_env_evaluate(W->env, &ans, Q->e, "replay")
                                        : sg_env_guard_or(W->env, &ans, Q->e, 0, "replay");
        int64_t t1 = now_ns();
        if (s == SG_EDATADEP) { /* answered in the trace, not any more */
            C->replay_mismatch++;
            report(W, "replay data-dependent", Q->e, ": %s", sg_ctx_last_error_msg(W->ctx));
            sg_ctx_reset_error(W->ctx);
            tprev = now_ns();
            continue;
        }
        if (s)
            die("replay: %s (%s)", sg_status_kind(s), sg_ctx_last_error_msg(W->ctx));
        if (Q->kind == Q_GUARD_OR && answers[ev[i]] == 0 && ans == 1) {
            /* the fallback proved by an assertion made after the question's last call */
        } else if (ans != answers[ev[i]]) {
            C->replay_mismatch++;
            report(W, "replay answer changed", Q->e, ": %d, in the trace %d", ans, answers[ev[i]]);
        }
        if (Q->kind == Q_EVAL) {
            C->replay_eval_n++;
            C->replay_eval_ns += t1 - tprev;
            tv[ntv++] = t1 - tprev;
        } else {
            C->replay_gor_n++;
            C->replay_gor_ns += t1 - tprev;
            tg[ntg++] = t1 - tprev;
        }
        tprev = t1;
    }
    C->replay_ns = tprev - t0;
    C->replay_eval_median_ns = percentile(tv, ntv, 0.5);
    C->replay_eval_p99_ns = percentile(tv, ntv, 0.99);
    C->replay_gor_median_ns = percentile(tg, ntg, 0.5);
    free(tv);
    free(tg);
    C->replay_n = C->replay_eval_n + C->replay_gor_n;
    C->replay_new_guards = sg_env_nguards(W->env) - g0;
    /* guards recorded twice (the same condition) */
    idmap seen;
    map_init(&seen, g0);
    for (size_t i = 0; i < g0; i++) {
        uint64_t id = sg_expr_id(sg_env_guard(W->env, i, NULL));
        if (map_find(&seen, id))
            C->replay_guards_dup++;
        else
            map_put(&seen, id, 1);
    }
    map_free(&seen);
}

/* ---- main ------------------------------------------------------------------ */

static int64_t clock_overhead(void)
{
    int64_t best = INT64_MAX;
    for (int rep = 0; rep < 5; rep++) {
        int64_t t0 = now_ns();
        for (int i = 0; i < 100000; i++)
            (void)now_ns();
        int64_t d = (now_ns() - t0) / 100000;
        if (d < best)
            best = d;
    }
    return best;
}

int main(int argc, char **argv)
{
    unsigned k = 1, runs = 3, perk = 840;
    int do_verify = 1;
    uint64_t seed = 4;
    double cap_s = 600;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-a")) {
            g_avoid_max_eq = 1;
            continue;
        }
        if (i + 1 >= argc)
            die("usage: bench_env [-a] [-k SCALE] [-r RUNS] [-s SEED] [-t SECONDS] [-q PER_K] [-V 0|1]");
        const char *v = argv[++i];
        if (!strcmp(a, "-k"))
            k = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "-r"))
            runs = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "-s"))
            seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "-t"))
            cap_s = strtod(v, NULL);
        else if (!strcmp(a, "-V"))
            do_verify = atoi(v);
        else if (!strcmp(a, "-q"))
            perk = (unsigned)strtoul(v, NULL, 10);
        else
            die("unknown option %s", a);
    }
    if (k < 1 || k > 64 || runs < 1 || perk < 1)
        die("bad arguments");
    params P = {.k = k, .seed = seed};
    size_t nsymbols = 125 * (size_t)k;
    P.nunb = nsymbols / 10;
    P.nint = nsymbols / 20;
    P.nsize = nsymbols - P.nunb - P.nint;
    P.nq = (size_t)perk * k;
    P.nevals = 12500 * (size_t)k;
    P.nchecks = 500 * (size_t)k / 8;
    if (P.nq > P.nevals)
        die("more distinct questions than calls");

    size_t nev;
    int32_t *ev = make_stream(&P, seed, &nev);
    int *answers = xcalloc(P.nq, sizeof *answers);
    result best;
    memset(&best, 0, sizeof best);
    int have_best = 0, status = 0;
    checks C;
    memset(&C, 0, sizeof C);
    size_t nq_eval = 0, nq_gor = 0, ninputs = 0, nsyms[3] = {0, 0, 0};
    int64_t cap_ns = cap_s > 0 ? (int64_t)(cap_s * 1e9) : 0;
    unsigned done_runs = 0;
    for (unsigned run = 0; run < runs; run++) {
        workload W;
        result R;
        memset(&R, 0, sizeof R);
        workload_new(&W, &P, &R);
        if (run == 0) {
            for (size_t q = 0; q < W.nq; q++)
                *(W.qs[q].kind == Q_EVAL ? &nq_eval : &nq_gor) += 1;
            ninputs = W.ninputs;
            nsyms[0] = W.nsize, nsyms[1] = W.nint, nsyms[2] = W.nunb;
        }
        run_stream(&W, ev, nev, answers, &R, cap_ns);
        done_runs++;
        if (run == 0 && !R.timeout && do_verify)
            verify(&W, ev, nev, answers, &C);
        workload_free(&W);
        if (!have_best || (R.timeout ? 0 : (best.timeout || R.stream_ns < best.stream_ns))) {
            if (have_best) {
                free(best.cold_t);
                free(best.warm_t);
            }
            best = R;
            have_best = 1;
        } else {
            free(R.cold_t);
            free(R.warm_t);
        }
        if (R.timeout)
            break; /* no point in running it again */
    }

    result *R = &best;
    printf("engine shapeguard %s\n", SG_VERSION_STRING);
    printf("scale %u\nseed %" PRIu64 "\nruns %u\navoid_max_eq %d\n", k, seed, done_runs, g_avoid_max_eq);
    printf("symbols %zu\nsymbols_size %zu\nsymbols_int %zu\nsymbols_unbacked %zu\ninputs %zu\n",
           nsyms[0] + nsyms[1] + nsyms[2], nsyms[0], nsyms[1], nsyms[2], ninputs);
    printf("distinct %zu\ndistinct_evaluate %zu\ndistinct_guard_or %zu\n", P.nq, nq_eval, nq_gor);
    printf("evals %zu\ncheck_calls %zu\n", P.nevals, P.nchecks);
    printf("timeout %d\ntimeout_s %.0f\ndone_evals %zu\ndone_checks %zu\n", R->timeout, cap_s, R->done_evals,
           R->done_checks);
    printf("setup_ns %" PRId64 "\nstream_ns %" PRId64 "\ntotal_ns %" PRId64 "\nstream_cpu_ns %" PRId64 "\n",
           R->setup_ns, R->stream_ns, R->setup_ns + R->stream_ns, R->stream_cpu_ns);
    static const char *const cname[NCLASS] = {"cold_guard", "cold_static", "warm_guard",   "warm_static",
                                              "gor_proved", "gor_fallback", "check", "datadep"};
    for (int c = 0; c < NCLASS; c++)
        printf("%s_n %zu\n%s_ns %" PRId64 "\n", cname[c], R->cls_n[c], cname[c], R->cls_ns[c]);
    printf("static_evals %zu\n", R->cls_n[C_COLD_STATIC] + R->cls_n[C_WARM_STATIC]);
    printf("guards %zu\nasserts %zu\ncheck_recorded_guards %" PRId64 "\n", R->guards, R->asserts,
           R->check_recorded_guards);
    printf("guard_or_calls %zu\nguard_or_fallback %zu\n", R->guard_or_n, R->guard_or_fallback);
    printf("facts %zu\nreplaced_symbols %zu\n", R->facts, R->replaced);
    printf("cold_guard_median_ns %" PRId64 "\ncold_guard_p99_ns %" PRId64 "\n", percentile(R->cold_t, R->ncold, 0.5),
           percentile(R->cold_t, R->ncold, 0.99));
    printf("warm_median_ns %" PRId64 "\nwarm_p99_ns %" PRId64 "\n", percentile(R->warm_t, R->nwarm, 0.5),
           percentile(R->warm_t, R->nwarm, 0.99));
    for (int d = 0; d < NDECILE; d++)
        printf("decile%d_n %zu\ndecile%d_ns %" PRId64 "\n", d, R->decile_n[d], d, R->decile_ns[d]);
    printf("clock_ns %" PRId64 "\n", clock_overhead());
    if (!R->timeout && C.replay_n) {
        printf("replay_n %zu\nreplay_ns %" PRId64 "\nreplay_new_guards %zu\n", C.replay_n, C.replay_ns,
               C.replay_new_guards);
        printf("replay_eval_n %zu\nreplay_eval_ns %" PRId64 "\nreplay_eval_median_ns %" PRId64
               "\nreplay_eval_p99_ns %" PRId64 "\n",
               C.replay_eval_n, C.replay_eval_ns, C.replay_eval_median_ns, C.replay_eval_p99_ns);
        printf("replay_gor_n %zu\nreplay_gor_ns %" PRId64 "\nreplay_gor_median_ns %" PRId64 "\n", C.replay_gor_n,
               C.replay_gor_ns, C.replay_gor_median_ns);
        printf("produce_ns %" PRId64 "\nproduced %zu\nduplicate_guards %zu\n", C.produce_ns, C.produced,
               C.replay_guards_dup);
        printf("guards_false %zu\nguards_unverified %zu\nasserts_false %zu\nasserts_unverified %zu\n",
               C.guards_false, C.guards_unverified, C.asserts_false, C.asserts_unverified);
        printf("answers_wrong %zu\nguard_or_wrong %zu\nproduced_false %zu\nproduced_unverified %zu\n",
               C.answers_wrong, C.guard_or_wrong, C.produced_false, C.produced_unverified);
        printf("answer_mismatch %zu\nreplay_mismatch %zu\n", R->answer_mismatch, C.replay_mismatch);
        printf("datadep_distinct %zu\ninconsistent_at %ld\n", R->datadep_distinct, R->inconsistent_at);
        if (g_datadep_msg[0])
            printf("datadep_first %s\n", g_datadep_msg);
        int bad = R->datadep_distinct || R->inconsistent_at >= 0 || C.guards_false || C.asserts_false || C.answers_wrong || C.guard_or_wrong || C.produced_false ||
                  R->answer_mismatch || C.replay_mismatch || C.replay_new_guards;
        if (bad) {
            printf("checks FAILED\n");
            status = 1;
        } else {
            printf("checks ok%s\n", C.guards_unverified || C.asserts_unverified || C.produced_unverified
                                        ? " (some items could not be evaluated: see *_unverified)"
                                        : "");
        }
    } else {
        printf("checks skipped (%s)\n", R->timeout ? "the run timed out" : "-V 0");
    }
    free(best.cold_t);
    free(best.warm_t);
    free(ev);
    free(answers);
    return status;
}
