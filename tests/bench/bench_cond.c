/* Lifting benchmark (issue 14): the cost of lifting closed-over tensors and
 * their symbols into the branches of torch.cond, through the public tracer
 * API (graph.h: sg_tracer_scope_open/_input/_close; hop.h: sg_tracer_cond).
 *
 *     bench_cond closures N [RUNS]   N tensor inputs x_i [a_i, b_i] (2N distinct
 *                                    symbols); one cond whose true branch and
 *                                    false branch each take all N (3N lifts each:
 *                                    a tensor and its two symbols)
 *     bench_cond shared N [RUNS]     the same with every x_i [s0, s1]: the
 *                                    symbols are lifted once per branch
 *     bench_cond unbacked N [RUNS]   N nonzero results n_i [u_i, 2] of one input,
 *                                    taken by one branch (each u_i read in the
 *                                    root by a sym_size node, then lifted)
 *     bench_cond depth D [K] [RUNS]  K tensor inputs (default 10) used at depth
 *                                    D: D conds nested, each in the true branch
 *                                    of the one before; the innermost true branch
 *                                    takes all K, parent first through every level;
 *                                    then every level is closed, given a false
 *                                    branch (taking x_0) and joined by its cond
 *
 * Each run is a fresh context; the inputs (and nonzero calls) are made
 * before the clock starts. Prints "key value" lines: medians over RUNS
 * (default 5) of the time per lift (a tensor taken by a scope, with the
 * symbols it brings), per cond input, per level, and the printing of the
 * graph (sg_tracer_print) per scope. Each run's graph is linted
 * (sg__graph_lint: closed subgraphs, symbols bound before use) and its
 * placeholders counted; a wrong count or a failed call exits with status 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/graph.h"
#include "shapeguard.h"
#include "shapeguard/hop.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(sg_ctx *ctx, const char *what)
{
    fprintf(stderr, "bench_cond: %s: %s\n", what, ctx ? sg_ctx_last_error_msg(ctx) : "");
    exit(1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    sg_ctx *ctx;
    sg_env *env;
    sg_inputs *in;
    sg_tracer *t;
    sg_value *x; /* the tensor inputs (or nonzero results) */
    long n;
} world;

/* n tensor inputs x0.. of rank 2: sizes [2i+2, 2i+3] (distinct symbols) or
 * all [5, 3] (shared: duck sizing gives every one s0, s1). */
static void setup(world *w, long n, int shared)
{
    memset(w, 0, sizeof *w);
    if (sg_ctx_new(&w->ctx) || sg_env_new(w->ctx, NULL, &w->env) || sg_inputs_new(w->env, NULL, &w->in) ||
        sg_tracer_new(w->env, &w->t))
        die(NULL, "setup");
    w->n = n;
    w->x = malloc((size_t)n * sizeof *w->x);
    if (!w->x)
        die(NULL, "out of memory");
    for (long i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "x%ld", i);
        int64_t sz[2] = {shared ? 5 : 2 * i + 2, shared ? 3 : 2 * i + 3};
        sg_tensor_value tv = {.ndim = 2, .sizes = sz};
        const sg_source *src;
        const sg_fake *fk;
        if (sg_source_local(w->ctx, &src, name) || sg_inputs_tensor(w->in, src, &tv, NULL, &fk) ||
            sg_tracer_input_tensor(w->t, &w->x[i], name, fk, SG_FLOAT64, 0))
            die(w->ctx, "inputs");
    }
}

static void teardown(world *w)
{
    const sg__graph *g = sg__tracer_graph(w->t);
    if (sg__graph_lint(g))
        die(w->ctx, "lint");
    sg_tracer_free(w->t);
    sg_inputs_free(w->in);
    sg_env_free(w->env);
    sg_ctx_free(w->ctx);
    free(w->x);
}

static uint32_t nphs(const world *w, uint32_t scope)
{
    return sg__tracer_graph(w->t)->scopes[scope].nphs;
}

static void expect_phs(const world *w, uint32_t scope, long want, const char *what)
{
    if ((long)nphs(w, scope) != want) {
        fprintf(stderr, "bench_cond: %s: %u placeholders, expected %ld\n", what, nphs(w, scope), want);
        exit(1);
    }
}

static sg_value call1(world *w, const char *op, sg_value a)
{
    sg_arg arg = {.kind = SG_ARG_VALUE, .u.v = a};
    sg_value r;
    if (sg_tracer_call(w->t, &r, op, &arg, 1, 0))
        die(w->ctx, op);
    return r;
}

/* A branch named name taking x[0 .. n) (timed: *lift_ns), giving sin of
 * outer (a value of the root, taken too). */
static uint32_t branch(world *w, const char *name, long n, sg_value outer, double *lift_ns)
{
    uint32_t sc;
    sg_value local;
    if (sg_tracer_scope_open(w->t, &sc, name))
        die(w->ctx, "scope_open");
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        if (sg_tracer_scope_input(w->t, &local, NULL, w->x[i]))
            die(w->ctx, "scope_input");
    }
    *lift_ns = now_ns() - t0;
    if (sg_tracer_scope_input(w->t, &local, NULL, outer))
        die(w->ctx, "scope_input");
    sg_value o = call1(w, "sin", local);
    if (sg_tracer_scope_close(w->t, &o, 1))
        die(w->ctx, "scope_close");
    return sc;
}

static sg_arg size_pred(world *w, sg_value x)
{
    const sg_expr *two, *q;
    if (sg_expr_int(w->ctx, &two, 2) || sg_expr_rel(w->ctx, &q, SG_REL_GT, sg_tracer_size(w->t, x, 0), two))
        die(w->ctx, "predicate");
    return (sg_arg){.kind = SG_ARG_INT, .u.e = q};
}

/* (a), (c): figures per run: [0] true-branch lift, [1] false-branch lift
 * (ns per tensor), [2] cond (ns per input), [3] print (ns per input). */
static void closures_once(long n, int shared, double f[4])
{
    world w;
    setup(&w, n, shared);
    double lt, lf;
    uint32_t tb = branch(&w, "cond_true_0", n, w.x[0], &lt);
    uint32_t fb = branch(&w, "cond_false_0", n, w.x[0], &lf);
    long want = shared ? n + 2 : 3 * n;
    expect_phs(&w, tb, want, "true branch");
    expect_phs(&w, fb, want, "false branch");
    sg_arg p = size_pred(&w, w.x[0]);
    sg_value out;
    double t0 = now_ns();
    if (sg_tracer_cond(w.t, &out, &p, tb, fb, 1))
        die(w.ctx, "cond");
    double tc = now_ns() - t0;
    expect_phs(&w, tb, want, "true branch after the cond");
    sg_value o = sg_tracer_list_get(w.t, out, 0);
    if (sg_tracer_output(w.t, &o, 1))
        die(w.ctx, "output");
    char *text = NULL;
    t0 = now_ns();
    if (sg_tracer_print(w.t, &text))
        die(w.ctx, "print");
    double tp = now_ns() - t0;
    sg_free(text);
    teardown(&w);
    f[0] = lt / (double)n, f[1] = lf / (double)n, f[2] = tc / (double)n, f[3] = tp / (double)n;
}

/* (a'): n nonzero results of one input, taken by one branch; [0] ns per lift. */
static void unbacked_once(long n, double f[4])
{
    world w;
    setup(&w, 1, 0);
    sg_value x0 = w.x[0];
    free(w.x);
    w.x = malloc((size_t)n * sizeof *w.x);
    if (!w.x)
        die(NULL, "out of memory");
    for (long i = 0; i < n; i++)
        w.x[i] = call1(&w, "nonzero", x0);
    double lt, lf;
    uint32_t tb = branch(&w, "cond_true_0", n, x0, &lt); /* the output over backed sizes: no unbacked merge */
    uint32_t fb = branch(&w, "cond_false_0", 0, x0, &lf);
    expect_phs(&w, tb, 2 * n + 3, "true branch"); /* u_i and n_i ([u_i, 2]: strides (1, u_i)); x0, s0, s1 */
    sg_arg p = size_pred(&w, x0);
    sg_value out;
    double t0 = now_ns();
    if (sg_tracer_cond(w.t, &out, &p, tb, fb, 1))
        die(w.ctx, "cond");
    double tc = now_ns() - t0;
    sg_value o = sg_tracer_list_get(w.t, out, 0);
    if (sg_tracer_output(w.t, &o, 1))
        die(w.ctx, "output");
    teardown(&w);
    f[0] = lt / (double)n, f[1] = 0, f[2] = tc / (double)n, f[3] = 0;
}

/* (b): [0] lifting the k closures at depth d (ns per lift and level), [1]
 * closing every level with its false branch and cond (ns per level), [2]
 * the whole build (ns per level), [3] print (ns per level). */
static void depth_once(long d, long k, double f[4])
{
    world w;
    setup(&w, k, 0);
    uint32_t *tb = malloc((size_t)(d + 1) * sizeof *tb);
    if (!tb)
        die(NULL, "out of memory");
    char name[48];
    double t0 = now_ns();
    for (long l = 1; l <= d; l++) { /* cond_true_l nested in cond_true_(l-1) */
        snprintf(name, sizeof name, "cond_true_%ld", l);
        if (sg_tracer_scope_open(w.t, &tb[l], name))
            die(w.ctx, "scope_open");
    }
    double t1 = now_ns();
    sg_value first = 0, local;
    for (long i = 0; i < k; i++) {
        if (sg_tracer_scope_input(w.t, &local, NULL, w.x[i]))
            die(w.ctx, "scope_input");
        if (!i)
            first = local;
    }
    double t2 = now_ns();
    sg_value o = call1(&w, "sin", first);
    for (long l = d; l >= 1; l--) {
        if (sg_tracer_scope_close(w.t, &o, 1))
            die(w.ctx, "scope_close");
        uint32_t fb;
        snprintf(name, sizeof name, "cond_false_%ld", l);
        if (sg_tracer_scope_open(w.t, &fb, name) || sg_tracer_scope_input(w.t, &local, NULL, w.x[0]))
            die(w.ctx, "false branch");
        sg_value fo = call1(&w, "sin", local);
        if (sg_tracer_scope_close(w.t, &fo, 1))
            die(w.ctx, "scope_close");
        sg_arg p = size_pred(&w, w.x[0]);
        sg_value out;
        if (sg_tracer_cond(w.t, &out, &p, tb[l], fb, (unsigned)l))
            die(w.ctx, "cond");
        o = sg_tracer_list_get(w.t, out, 0);
    }
    double t3 = now_ns();
    if (sg_tracer_output(w.t, &o, 1))
        die(w.ctx, "output");
    for (long l = 1; l <= d; l++) /* every level took the k tensors and their symbols, parent first */
        expect_phs(&w, tb[l], 3 * k, "a nested true branch");
    char *text = NULL;
    double t4 = now_ns();
    if (sg_tracer_print(w.t, &text))
        die(w.ctx, "print");
    double tp = now_ns() - t4;
    sg_free(text);
    teardown(&w);
    free(tb);
    f[0] = (t2 - t1) / (double)(k * d), f[1] = (t3 - t2) / (double)d, f[2] = (t3 - t0) / (double)d,
    f[3] = tp / (double)d;
}

static long arg(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < 1)
        return -1;
    return v;
}

int main(int argc, char **argv)
{
    const char *usage = "usage: bench_cond closures|shared|unbacked N [RUNS] | bench_cond depth D [K] [RUNS]\n";
    if (argc < 3 || argc > 5) {
        fputs(usage, stderr);
        return 2;
    }
    const char *mode = argv[1];
    int depth = !strcmp(mode, "depth");
    long n = arg(argv[2]), k = 10, runs = 5;
    if (depth && argc > 3)
        k = arg(argv[3]);
    if (argc > 3 + depth)
        runs = arg(argv[3 + depth]);
    if (argc > 4 + depth || n < 1 || k < 1 || runs < 1 || runs > 1000 || n > 1000000 ||
        (!depth && strcmp(mode, "closures") && strcmp(mode, "shared") && strcmp(mode, "unbacked")) ||
        (depth && n > 30000)) {
        fputs(usage, stderr);
        return 2;
    }
    double *f[4];
    for (int j = 0; j < 4; j++)
        if (!(f[j] = malloc((size_t)runs * sizeof *f[j])))
            return 2;
    for (long r = 0; r < runs; r++) {
        double x[4];
        if (depth)
            depth_once(n, k, x);
        else if (!strcmp(mode, "unbacked"))
            unbacked_once(n, x);
        else
            closures_once(n, !strcmp(mode, "shared"), x);
        for (int j = 0; j < 4; j++)
            f[j][r] = x[j];
    }
    for (int j = 0; j < 4; j++)
        qsort(f[j], (size_t)runs, sizeof *f[j], cmp_double);
    long m = runs / 2;
    printf("mode %s\nruns %ld\n", mode, runs);
    if (depth) {
        printf("depth %ld\nclosures %ld\nlift_ns_per_lift_level_median %.1f\nunwind_ns_per_level_median %.1f\n"
               "build_ns_per_level_median %.1f\nprint_ns_per_level_median %.1f\n",
               n, k, f[0][m], f[1][m], f[2][m], f[3][m]);
    } else if (!strcmp(mode, "unbacked")) {
        printf("closures %ld\nlift_ns_per_lift_median %.1f\ncond_ns_per_input_median %.1f\n", n, f[0][m], f[2][m]);
    } else {
        printf("closures %ld\nlift_true_ns_per_lift_median %.1f\nlift_false_ns_per_lift_median %.1f\n"
               "cond_ns_per_input_median %.1f\nprint_ns_per_input_median %.1f\n",
               n, f[0][m], f[1][m], f[2][m], f[3][m]);
    }
    for (int j = 0; j < 4; j++)
        free(f[j]);
    return 0;
}
