/* Eager execution benchmark (issue 13): one long straight-line program of
 * small tensors, run eagerly through the walker as `shapeguard` runs a
 * battery's `eager` command (sg_program_new, sg_walk_eager, the inputs,
 * sg_walk_run), against the kernels' work alone.
 *
 *     def f(x, y):                 # x: f64[8, 4], y: f64[4]
 *         t = x
 *         t = t.add(y)             # 8 ops a block, OPS / 8 blocks
 *         t.mul_(0.5)
 *         v = t.reshape(-1)        # a view, or a copy when t is not contiguous
 *         v.add_(1.0)
 *         u = v.view(4, 8)
 *         u = u.transpose(0, 1)
 *         t = u.sin()              # strided input; the result keeps its strides
 *         t = t.mul(y)
 *         ...
 *         return t
 *
 * Every other block starts from a transposed t, so reshape copies there.
 * Timed, median of RUNS after one warm-up run, each in a fresh context:
 *  - eager: sg_walk_eager, the inputs and sg_walk_run (the walker, the
 *    tracer's shape rules and questions over constant sizes, the graph, the
 *    run's per-node work and the kernels); parsing the source is not timed
 *    (Python compiles its source before running it too);
 *  - rerun: a fresh sg_run over the graph the eager run made, the same
 *    inputs, sg_run_execute: the kernels plus the exec layer's per-node work
 *    (argument loading, output layout evaluation, allocation), without the
 *    walker and tracer: an upper bound of the kernels' work;
 *  - loops: the same arithmetic as plain C loops over the same 32-element
 *    arrays (adds, multiplies, sin, the copies that reshape makes, nothing
 *    for views): a lower bound of the kernels' work.
 * So the overhead of eager execution per op lies between
 * (eager - rerun) / OPS and (eager - loops) / OPS.
 *
 *     bench_eager OPS [RUNS]     prints "key value" lines
 *     bench_eager --source OPS   prints the program (bench_eager.py runs it in torch)
 *
 * The checksum (sum of the result's elements) is printed for comparison
 * with PyTorch's; the rerun must give the same result bit for bit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/graph.h" /* the graph's node counts */
#include "shapeguard.h"

#define ROWS 8
#define COLS 4
#define N (ROWS * COLS)
#define BLOCK 8

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(sg_ctx *ctx, const char *what)
{
    fprintf(stderr, "bench_eager: %s: %s\n", what, ctx ? sg_ctx_last_error_msg(ctx) : "");
    exit(1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static const char *const block_lines[BLOCK] = {
    "    t = t.add(y)\n",   "    t.mul_(0.5)\n",           "    v = t.reshape(-1)\n", "    v.add_(1.0)\n",
    "    u = v.view(4, 8)\n", "    u = u.transpose(0, 1)\n", "    t = u.sin()\n",       "    t = t.mul(y)\n",
};

/* The program of ops ops (a multiple of BLOCK); *len its length. */
static char *program(long ops, size_t *len)
{
    size_t cap = 64 + (size_t)ops * 32, n = 0;
    char *s = malloc(cap);
    if (!s)
        die(NULL, "out of memory");
    n += (size_t)sprintf(s + n, "def f(x, y):\n    t = x\n");
    for (long i = 0; i < ops; i++)
        n += (size_t)sprintf(s + n, "%s", block_lines[i % BLOCK]);
    n += (size_t)sprintf(s + n, "    return t\n");
    *len = n;
    return s;
}

/* The inputs: x[i][j] = (4 i + j) / 32 - 0.5, y[j] = 0.25 j - 0.3 (bench_eager.py too). */
static double x_at(int i, int j)
{
    return (double)(COLS * i + j) / 32.0 - 0.5;
}
static double y_at(int j)
{
    return 0.25 * j - 0.3;
}

static void inputs(sg_ctx *ctx, sg_tensor **x, sg_tensor **y)
{
    int64_t xs[2] = {ROWS, COLS}, ys[1] = {COLS};
    if (sg_tensor_new(ctx, x, SG_FLOAT64, 2, xs) || sg_tensor_new(ctx, y, SG_FLOAT64, 1, ys))
        die(ctx, "inputs");
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            sg_tensor_set_f(*x, COLS * i + j, x_at(i, j));
    for (int j = 0; j < COLS; j++)
        sg_tensor_set_f(*y, j, y_at(j));
}

static double checksum(const sg_tensor *t)
{
    double s = 0;
    for (int64_t i = 0; i < sg_tensor_numel(t); i++)
        s += sg_tensor_get_f(t, i);
    return s;
}

typedef struct {
    double eager_ns, rerun_ns, sum, rerun_sum;
    size_t nodes, calls;
} one_run;

static void run_once(const char *src, size_t len, one_run *o)
{
    sg_ctx *ctx;
    sg_program *p;
    if (sg_ctx_new(&ctx) || sg_program_new(ctx, &p, src, len, 1))
        die(NULL, "parse");
    sg_tensor *x, *y;
    inputs(ctx, &x, &y);
    sg_walk *w = NULL;
    double t0 = now_ns();
    if (sg_walk_eager(p, &w) || sg_walk_input_tensor(w, "x", x, 0) || sg_walk_input_tensor(w, "y", y, 0) ||
        sg_walk_run(w))
        die(ctx, "eager run");
    o->eager_ns = now_ns() - t0;
    if (sg_walk_noutputs(w) != 1)
        die(ctx, "outputs");
    const sg_tensor *r = sg_run_tensor(sg_walk_eager_run(w), sg_walk_output_value(w, 0));
    if (!r)
        die(ctx, "the result");
    o->sum = checksum(r);

    /* the same graph again on fresh inputs: the exec layer alone */
    const sg__graph *g = sg__tracer_graph(sg_walk_tracer(w));
    sg_tensor *x2, *y2;
    inputs(ctx, &x2, &y2);
    sg_run *xr;
    if (sg_run_new(sg_walk_tracer(w), NULL, &xr))
        die(ctx, "rerun");
    o->nodes = g->nnodes;
    o->calls = 0;
    for (size_t i = 0; i < g->nnodes; i++)
        o->calls += g->nodes[i].kind == SG_N_CALL;
    if (sg_run_set_named(xr, "x", x2) || sg_run_set_named(xr, "y", y2))
        die(ctx, "rerun inputs");
    t0 = now_ns();
    if (sg_run_execute(xr))
        die(ctx, "rerun");
    o->rerun_ns = now_ns() - t0;
    const sg_tensor *r2 = sg_run_tensor(xr, sg_walk_output_value(w, 0));
    if (!r2)
        die(ctx, "the rerun's result");
    o->rerun_sum = checksum(r2);
    sg_run_free(xr);
    sg_tensor_unref(x);
    sg_tensor_unref(y);
    sg_tensor_unref(x2);
    sg_tensor_unref(y2);
    sg_walk_free(w);
    sg_program_free(p);
    sg_ctx_free(ctx);
}

/* The kernels' arithmetic as plain loops: t is [ROWS, COLS] (row-major when
 * !tr, else the transpose of a row-major [COLS, ROWS]); returns the checksum. */
static double loops_once(long ops, double *ns)
{
    static double x[N], y[COLS], t[N], v[N];
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            x[COLS * i + j] = x_at(i, j);
    for (int j = 0; j < COLS; j++)
        y[j] = y_at(j);
    double t0 = now_ns();
    bool tr = false; /* t's element (i, j) at t[j * ROWS + i] */
    memcpy(t, x, sizeof t);
    for (long k = 0; k < ops; k++) {
        switch (k % BLOCK) {
        case 0: /* t = t.add(y): a new tensor with t's strides */
            for (int i = 0; i < ROWS; i++)
                for (int j = 0; j < COLS; j++) {
                    int at = tr ? j * ROWS + i : COLS * i + j;
                    v[at] = t[at] + y[j];
                }
            memcpy(t, v, sizeof t);
            break;
        case 1: /* t.mul_(0.5) */
            for (int e = 0; e < N; e++)
                t[e] *= 0.5;
            break;
        case 2: /* v = t.reshape(-1): a copy in row-major order when transposed */
            if (tr) {
                for (int i = 0; i < ROWS; i++)
                    for (int j = 0; j < COLS; j++)
                        v[COLS * i + j] = t[j * ROWS + i];
                memcpy(t, v, sizeof t);
                tr = false;
            }
            break;
        case 3: /* v.add_(1.0) */
            for (int e = 0; e < N; e++)
                t[e] += 1.0;
            break;
        case 4: /* u = v.view(4, 8): nothing */
            break;
        case 5: /* u = u.transpose(0, 1): nothing but the layout */
            tr = true;
            break;
        case 6: /* t = u.sin(): same strides */
            for (int e = 0; e < N; e++)
                v[e] = sin(t[e]);
            memcpy(t, v, sizeof t);
            break;
        default: /* t = t.mul(y) */
            for (int i = 0; i < ROWS; i++)
                for (int j = 0; j < COLS; j++) {
                    int at = tr ? j * ROWS + i : COLS * i + j;
                    v[at] = t[at] * y[j];
                }
            memcpy(t, v, sizeof t);
            break;
        }
        __asm__ __volatile__("" : : "r"(t) : "memory"); /* keep each op's work */
    }
    *ns = now_ns() - t0;
    double s = 0;
    for (int e = 0; e < N; e++)
        s += t[e];
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--source")) {
        long ops = strtol(argv[2], NULL, 10);
        if (ops < BLOCK || ops % BLOCK)
            return 2;
        size_t len;
        char *s = program(ops, &len);
        fwrite(s, 1, len, stdout);
        free(s);
        return 0;
    }
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: bench_eager OPS [RUNS] | bench_eager --source OPS\n");
        return 2;
    }
    long ops = strtol(argv[1], NULL, 10), runs = argc > 2 ? strtol(argv[2], NULL, 10) : 5;
    if (ops < BLOCK || ops % BLOCK || runs < 1 || runs > 1000) {
        fprintf(stderr, "bench_eager: OPS a multiple of %d, 1 <= RUNS <= 1000\n", BLOCK);
        return 2;
    }
    size_t len;
    char *src = program(ops, &len);
    double *te = malloc((size_t)runs * sizeof *te), *tr = malloc((size_t)runs * sizeof *tr),
           *tl = malloc((size_t)runs * sizeof *tl);
    if (!te || !tr || !tl)
        return 2;
    one_run o;
    double lsum = 0;
    run_once(src, len, &o); /* warm-up */
    for (long r = 0; r < runs; r++) {
        run_once(src, len, &o);
        if (o.rerun_sum != o.sum) {
            fprintf(stderr, "bench_eager: the rerun gives %.17g, the eager run %.17g\n", o.rerun_sum, o.sum);
            return 1;
        }
        te[r] = o.eager_ns;
        tr[r] = o.rerun_ns;
        lsum = loops_once(ops, &tl[r]);
    }
    qsort(te, (size_t)runs, sizeof *te, cmp_double);
    qsort(tr, (size_t)runs, sizeof *tr, cmp_double);
    qsort(tl, (size_t)runs, sizeof *tl, cmp_double);
    double e = te[runs / 2] / (double)ops, k = tr[runs / 2] / (double)ops, l = tl[runs / 2] / (double)ops;
    printf("ops %ld\nruns %ld\nnodes %zu\ncalls %zu\n", ops, runs, o.nodes, o.calls);
    printf("eager_ns_per_op_median %.1f\nrerun_ns_per_op_median %.1f\nloops_ns_per_op_median %.1f\n", e, k, l);
    printf("overhead_ns_per_op_vs_rerun %.1f\noverhead_ns_per_op_vs_loops %.1f\n", e - k, e - l);
    printf("checksum %.17g\nloops_checksum %.17g\n", o.sum, lsum);
    free(te);
    free(tr);
    free(tl);
    free(src);
    return 0;
}
