/* Graph capture benchmark (issue 13): one long program traced op by op
 * through the tracer, with dynamic sizes:
 *
 *     def f(x, y):            # x [s0, s1], y [s1]
 *         t = x
 *         for i in range(N // 6):
 *             t = t.add(y); t = t.mul(2); t = t.view(-1)
 *             t = t.view(x.shape[0], x.shape[1]); t.add_(1); t = t.sin()
 *         return t
 *
 * tests/bench/bench_trace.py traces the same program with PyTorch 1.13's
 * make_fx(f, tracing_mode="symbolic"); tests/bench/run_trace.sh prints both.
 *
 *     bench_trace OPS [RUNS [reused|fresh]]
 *
 * RUNS (default 5) traces by one tracer, reset between traces with
 * sg_tracer_reset (it keeps its blocks: what a front end tracing program
 * after program does), then RUNS traces each by a tracer of its own (a
 * new context, environment, inputs and tracer each, freed after it); the
 * third argument keeps one of the two. What is timed is the same in both:
 * the tracer's two inputs, the OPS program ops and the output (setup and
 * freeing are not). Prints "key value" lines: the program ops traced; of
 * the reused tracer, the median time per op (trace_ns_per_op_median, the
 * figure run_trace.sh compares with make_fx) and the median minor page
 * faults per graph node of the traced part (getrusage's ru_minflt before
 * and after it; trace_minflt_per_node), the graph's bytes per op (every
 * block it owns: its arrays as allocated, capacity, in graph_bytes_per_op,
 * and as used in graph_used_bytes_per_op), the context arena's bytes per
 * op (growth during the trace), and the number of entries of each array
 * with the size of one; of the fresh tracers, the same two medians,
 * prefixed fresh_ (with "fresh" alone, the bytes too).
 * valgrind --tool=callgrind --toggle-collect=trace_body counts the
 * instructions of the traced parts alone. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "graph/graph.h"
#include "shapeguard.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(sg_ctx *ctx, const char *what)
{
    fprintf(stderr, "bench_trace: %s: %s\n", what, ctx ? sg_ctx_last_error_msg(ctx) : "");
    exit(1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static long minflt(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) ? 0 : ru.ru_minflt;
}

/* What a trace needs made before it: the context, environment, inputs
   and tracer, the two inputs' fakes and the constants the program uses. */
typedef struct setup {
    sg_ctx *ctx;
    sg_env *env;
    sg_inputs *in;
    sg_tracer *t;
    const sg_fake *fx, *fy;
    const sg_expr *two, *one, *minus_one;
} setup;

static void setup_new(setup *b)
{
    const sg_source *sx, *sy;
    int64_t xs[2] = {5, 3}, ys[1] = {3};
    sg_tensor_value vx = {.ndim = 2, .sizes = xs}, vy = {.ndim = 1, .sizes = ys};
    if (sg_ctx_new(&b->ctx) || sg_env_new(b->ctx, NULL, &b->env) || sg_inputs_new(b->env, NULL, &b->in) ||
        sg_tracer_new(b->env, &b->t))
        die(NULL, "setup");
    if (sg_expr_int(b->ctx, &b->two, 2) || sg_expr_int(b->ctx, &b->one, 1) || sg_expr_int(b->ctx, &b->minus_one, -1))
        die(b->ctx, "constants");
    if (sg_source_local(b->ctx, &sx, "x") || sg_inputs_tensor(b->in, sx, &vx, NULL, &b->fx) ||
        sg_source_local(b->ctx, &sy, "y") || sg_inputs_tensor(b->in, sy, &vy, NULL, &b->fy))
        die(b->ctx, "inputs");
}

static void setup_free(setup *b)
{
    sg_tracer_free(b->t);
    sg_inputs_free(b->in);
    sg_env_free(b->env);
    sg_ctx_free(b->ctx);
}

/* The traced part (what is timed, and what callgrind's
   --toggle-collect=trace_body counts): the tracer's two inputs, ops
   program ops and the output. */
static __attribute__((noinline)) void trace_body(const setup *b, long ops)
{
    sg_tracer *t = b->t;
    sg_value x, y, v;
    if (sg_tracer_input_tensor(t, &x, "x", b->fx, SG_FLOAT64, 0) ||
        sg_tracer_input_tensor(t, &y, "y", b->fy, SG_FLOAT64, 0))
        die(b->ctx, "inputs");
    const sg_expr *shape[2] = {sg_tracer_size(t, x, 0), sg_tracer_size(t, x, 1)};
    v = x;
    for (long i = 0; i < ops; i++) {
        sg_arg a[2] = {{.kind = SG_ARG_VALUE, .u.v = v}};
        const char *op;
        size_t n = 2;
        switch (i % 6) {
        case 0: op = "add.Tensor"; a[1] = (sg_arg){.kind = SG_ARG_VALUE, .u.v = y}; break;
        case 1: op = "mul.Tensor"; a[1] = (sg_arg){.kind = SG_ARG_INT, .u.e = b->two}; break;
        case 2: op = "view"; a[1] = (sg_arg){.kind = SG_ARG_INTS, .u.ints = {1, &b->minus_one}}; break;
        case 3: op = "view"; a[1] = (sg_arg){.kind = SG_ARG_INTS, .u.ints = {2, shape}}; break;
        case 4: op = "add_.Tensor"; a[1] = (sg_arg){.kind = SG_ARG_INT, .u.e = b->one}; break;
        default: op = "sin"; n = 1; break;
        }
        if (sg_tracer_call(t, &v, op, a, n, (unsigned)(i + 1)))
            die(b->ctx, op);
    }
    if (sg_tracer_output(t, &v, 1))
        die(b->ctx, "output");
}

/* What one trace measured. */
typedef struct measure {
    double ns;            /* the traced part's time */
    long faults;          /* its minor page faults */
    size_t graph_bytes, used_bytes, arena_bytes;
    size_t counts[5];     /* the entries of the graph's five arrays */
} measure;

/* One trace of ops program ops by b's tracer, measured into *m. */
static void trace_once(const setup *b, long ops, measure *m)
{
    size_t arena0, arena1;
    sg_ctx_stats(b->ctx, NULL, &arena0, NULL);
    long f0 = minflt();
    double t0 = now_ns();
    trace_body(b, ops);
    m->ns = now_ns() - t0;
    m->faults = minflt() - f0;
    const sg__graph *g = sg__tracer_graph(b->t);
    /* every block the graph owns: its struct, its five arrays (as allocated,
       and as used) and the placeholders' names */
    m->graph_bytes = sizeof *g + g->capvals * sizeof *g->vals + g->capnodes * sizeof *g->nodes +
                     g->capargs * sizeof *g->args + g->capexprs * sizeof *g->exprs + g->capids * sizeof *g->ids +
                     g->name_bytes;
    m->used_bytes = sizeof *g + g->nvals * sizeof *g->vals + g->nnodes * sizeof *g->nodes +
                    g->nargs * sizeof *g->args + g->nexprs * sizeof *g->exprs + g->nids * sizeof *g->ids +
                    g->name_bytes;
    m->counts[0] = g->nvals, m->counts[1] = g->nnodes, m->counts[2] = g->nargs, m->counts[3] = g->nexprs,
    m->counts[4] = g->nids;
    sg_ctx_stats(b->ctx, NULL, &arena1, NULL);
    m->arena_bytes = arena1 - arena0;
    if (g->nnodes < (size_t)ops || sg__graph_lint(g))
        die(b->ctx, "the graph");
}

static double median(double *x, long n)
{
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return x[n / 2];
}

/* runs traces: with reuse, by one tracer (made before the first, reset
   with sg_tracer_reset before each other: it keeps its blocks), else each
   by a tracer of its own (its context, environment, inputs and tracer made
   before it and freed after it); neither outside the timed part. Prints
   the medians of the time per op and of the faults per node, each key
   after prefix, and (all) the graph's bytes and entries. */
static void series(long ops, long runs, bool reuse, const char *prefix, bool all)
{
    double *t = malloc((size_t)runs * sizeof *t), *f = malloc((size_t)runs * sizeof *f);
    measure m = {0}, first = {0}; /* the bytes are the first trace's (growing all there is) */
    setup b;
    if (!t || !f)
        die(NULL, "out of memory");
    if (reuse)
        setup_new(&b);
    for (long r = 0; r < runs; r++) {
        if (!reuse)
            setup_new(&b);
        else if (r && sg_tracer_reset(b.t))
            die(b.ctx, "reset");
        trace_once(&b, ops, &m);
        if (!r)
            first = m;
        if (!reuse)
            setup_free(&b);
        t[r] = m.ns;
        f[r] = (double)m.faults;
    }
    if (reuse)
        setup_free(&b);
    printf("%strace_ns_per_op_median %.1f\n", prefix, median(t, runs) / (double)ops);
    printf("%strace_minflt_per_node %.4f\n", prefix, median(f, runs) / (double)m.counts[1]);
    m = first;
    if (all) {
        printf("graph_bytes_per_op %.1f\ngraph_used_bytes_per_op %.1f\narena_bytes_per_op %.1f\n",
               (double)m.graph_bytes / (double)ops, (double)m.used_bytes / (double)ops,
               (double)m.arena_bytes / (double)ops);
        printf("graph_entries vals %zu (%zu B) nodes %zu (%zu B) args %zu (%zu B) exprs %zu (%zu B) ids %zu (%zu B)\n",
               m.counts[0], sizeof(sg__gval), m.counts[1], sizeof(sg__gnode), m.counts[2], sizeof(sg__garg),
               m.counts[3], sizeof(const sg_expr *), m.counts[4], sizeof(uint32_t));
    }
    free(t);
    free(f);
}

int main(int argc, char **argv)
{
    const char *only = argc > 3 ? argv[3] : "";
    if (argc < 2 || argc > 4 || (argc > 3 && strcmp(only, "reused") && strcmp(only, "fresh"))) {
        fprintf(stderr, "usage: bench_trace OPS [RUNS [reused|fresh]]\n");
        return 2;
    }
    long ops = strtol(argv[1], NULL, 10), runs = argc > 2 ? strtol(argv[2], NULL, 10) : 5;
    if (ops < 6 || runs < 1 || runs > 1000) {
        fprintf(stderr, "bench_trace: OPS >= 6, 1 <= RUNS <= 1000\n");
        return 2;
    }
    printf("ops %ld\nruns %ld\n", ops, runs);
    if (strcmp(only, "fresh"))
        series(ops, runs, true, "", true);
    if (strcmp(only, "reused"))
        series(ops, runs, false, "fresh_", !strcmp(only, "fresh"));
    return 0;
}
