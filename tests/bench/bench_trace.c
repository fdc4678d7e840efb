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
 *     bench_trace OPS [RUNS]
 *
 * Prints "key value" lines: the program ops traced, the median time per op
 * over RUNS (default 5) fresh traces, the graph's bytes per op (every block
 * it owns: its arrays as allocated, capacity, in graph_bytes_per_op, and as
 * used in graph_used_bytes_per_op), the context arena's bytes per op, and
 * the number of entries of each array with the size of one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* One trace of ops program ops; returns the time in ns, and the bytes. */
static double trace_once(long ops, size_t *graph_bytes, size_t *used_bytes, size_t *arena_bytes,
                         size_t counts[5])
{
    sg_ctx *ctx;
    sg_env *env;
    sg_inputs *in;
    sg_tracer *t;
    if (sg_ctx_new(&ctx) || sg_env_new(ctx, NULL, &env) || sg_inputs_new(env, NULL, &in) || sg_tracer_new(env, &t))
        die(NULL, "setup");
    size_t arena0;
    sg_ctx_stats(ctx, NULL, &arena0, NULL);
    const sg_source *sx, *sy;
    const sg_fake *fx, *fy;
    int64_t xs[2] = {5, 3}, ys[1] = {3};
    sg_tensor_value vx = {.ndim = 2, .sizes = xs}, vy = {.ndim = 1, .sizes = ys};
    sg_value x, y, v;
    const sg_expr *two, *one, *minus_one;
    if (sg_expr_int(ctx, &two, 2) || sg_expr_int(ctx, &one, 1) || sg_expr_int(ctx, &minus_one, -1))
        die(ctx, "constants");
    double t0 = now_ns();
    if (sg_source_local(ctx, &sx, "x") || sg_inputs_tensor(in, sx, &vx, NULL, &fx) ||
        sg_source_local(ctx, &sy, "y") || sg_inputs_tensor(in, sy, &vy, NULL, &fy) ||
        sg_tracer_input_tensor(t, &x, "x", fx, SG_FLOAT64, 0) || sg_tracer_input_tensor(t, &y, "y", fy, SG_FLOAT64, 0))
        die(ctx, "inputs");
    const sg_expr *shape[2] = {sg_tracer_size(t, x, 0), sg_tracer_size(t, x, 1)};
    v = x;
    for (long i = 0; i < ops; i++) {
        sg_arg a[2] = {{.kind = SG_ARG_VALUE, .u.v = v}};
        const char *op;
        size_t n = 2;
        switch (i % 6) {
        case 0: op = "add.Tensor"; a[1] = (sg_arg){.kind = SG_ARG_VALUE, .u.v = y}; break;
        case 1: op = "mul.Tensor"; a[1] = (sg_arg){.kind = SG_ARG_INT, .u.e = two}; break;
        case 2: op = "view"; a[1] = (sg_arg){.kind = SG_ARG_INTS, .u.ints = {1, &minus_one}}; break;
        case 3: op = "view"; a[1] = (sg_arg){.kind = SG_ARG_INTS, .u.ints = {2, shape}}; break;
        case 4: op = "add_.Tensor"; a[1] = (sg_arg){.kind = SG_ARG_INT, .u.e = one}; break;
        default: op = "sin"; n = 1; break;
        }
        if (sg_tracer_call(t, &v, op, a, n, (unsigned)(i + 1)))
            die(ctx, op);
    }
    if (sg_tracer_output(t, &v, 1))
        die(ctx, "output");
    double dt = now_ns() - t0;
    const sg__graph *g = sg__tracer_graph(t);
    /* every block the graph owns: its struct, its five arrays (as allocated,
       and as used) and the placeholders' names */
    *graph_bytes = sizeof *g + g->capvals * sizeof *g->vals + g->capnodes * sizeof *g->nodes +
                   g->capargs * sizeof *g->args + g->capexprs * sizeof *g->exprs + g->capids * sizeof *g->ids +
                   g->name_bytes;
    *used_bytes = sizeof *g + g->nvals * sizeof *g->vals + g->nnodes * sizeof *g->nodes +
                  g->nargs * sizeof *g->args + g->nexprs * sizeof *g->exprs + g->nids * sizeof *g->ids +
                  g->name_bytes;
    counts[0] = g->nvals, counts[1] = g->nnodes, counts[2] = g->nargs, counts[3] = g->nexprs, counts[4] = g->nids;
    size_t arena1;
    sg_ctx_stats(ctx, NULL, &arena1, NULL);
    *arena_bytes = arena1 - arena0;
    if (g->nnodes < (size_t)ops || sg__graph_lint(g))
        die(ctx, "the graph");
    sg_tracer_free(t);
    sg_inputs_free(in);
    sg_env_free(env);
    sg_ctx_free(ctx);
    return dt;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: bench_trace OPS [RUNS]\n");
        return 2;
    }
    long ops = strtol(argv[1], NULL, 10), runs = argc > 2 ? strtol(argv[2], NULL, 10) : 5;
    if (ops < 6 || runs < 1 || runs > 1000) {
        fprintf(stderr, "bench_trace: OPS >= 6, 1 <= RUNS <= 1000\n");
        return 2;
    }
    double *t = malloc((size_t)runs * sizeof *t);
    size_t gb = 0, ub = 0, ab = 0, counts[5] = {0};
    if (!t)
        return 2;
    for (long r = 0; r < runs; r++)
        t[r] = trace_once(ops, &gb, &ub, &ab, counts);
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    printf("ops %ld\nruns %ld\ntrace_ns_per_op_median %.1f\ngraph_bytes_per_op %.1f\ngraph_used_bytes_per_op %.1f\n"
           "arena_bytes_per_op %.1f\n",
           ops, runs, t[runs / 2] / (double)ops, (double)gb / (double)ops, (double)ub / (double)ops,
           (double)ab / (double)ops);
    printf("graph_entries vals %zu (%zu B) nodes %zu (%zu B) args %zu (%zu B) exprs %zu (%zu B) ids %zu (%zu B)\n",
           counts[0], sizeof(sg__gval), counts[1], sizeof(sg__gnode), counts[2], sizeof(sg__garg), counts[3],
           sizeof(const sg_expr *), counts[4], sizeof(uint32_t));
    free(t);
    return 0;
}
