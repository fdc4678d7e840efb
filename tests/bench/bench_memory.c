/* Memory benchmark (issue 19, item 6): the most tensor bytes live at once
 * while a long straight-line program of 64x64 float32 tensors runs, eagerly
 * (the walker and exec's eager executor, as `shapeguard` runs a battery's
 * `eager` command) and compiled (traced with static sizes, then the graph
 * run with sg_run_execute), against the program's length. The program is
 * bench_eager's, at 64x64 float32:
 *
 *     def f(x, y):                 # x: f32[64, 64], y: f32[64]
 *         t = x
 *         t = t.add(y)             # 8 ops a block, OPS / 8 blocks
 *         t.mul_(0.5)
 *         v = t.reshape(-1)        # a view, or a copy when t is transposed
 *         v.add_(1.0)
 *         u = v.view(64, 64)
 *         u = u.transpose(0, 1)
 *         t = u.sin()
 *         t = t.mul(y)
 *         ...
 *         return t
 *
 * Bytes are exec's own count (sg__xmem: every storage's header and
 * elements, every tensor's header), beyond the inputs, from the start of
 * the run to its end. With --keep, values are kept to the end of the run
 * (no collection in eager mode, no release plan in the graph run): what
 * the runs held before issue 19.
 *
 *     bench_memory OPS [--keep]   prints "key value" lines
 *     bench_memory --source OPS   prints the program (bench_memory.py runs it in torch) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "front/walk_private.h"
#include "shapeguard.h"

#define R 64
#define BLOCK 8

static void die(sg_ctx *ctx, const char *what)
{
    fprintf(stderr, "bench_memory: %s: %s\n", what, ctx ? sg_ctx_last_error_msg(ctx) : "");
    exit(1);
}

static const char *const block_lines[BLOCK] = {
    "    t = t.add(y)\n",     "    t.mul_(0.5)\n",           "    v = t.reshape(-1)\n", "    v.add_(1.0)\n",
    "    u = v.view(64, 64)\n", "    u = u.transpose(0, 1)\n", "    t = u.sin()\n",       "    t = t.mul(y)\n",
};

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

/* x[i][j] = ((64 i + j) % 97) / 97 - 0.5, y[j] = 0.01 j - 0.3 (bench_memory.py too). */
static void inputs(sg_ctx *ctx, sg_tensor **x, sg_tensor **y)
{
    int64_t xs[2] = {R, R}, ys[1] = {R};
    if (sg_tensor_new(ctx, x, SG_FLOAT32, 2, xs) || sg_tensor_new(ctx, y, SG_FLOAT32, 1, ys))
        die(ctx, "inputs");
    for (int i = 0; i < R * R; i++)
        sg_tensor_set_f(*x, i, (double)(i % 97) / 97.0 - 0.5);
    for (int j = 0; j < R; j++)
        sg_tensor_set_f(*y, j, 0.01 * j - 0.3);
}

static double checksum(const sg_tensor *t)
{
    double s = 0;
    for (int64_t i = 0; i < sg_tensor_numel(t); i++)
        s += sg_tensor_get_f(t, i);
    return s;
}

/* The peak bytes beyond those live at its start of an eager run (or, with
 * compiled, of the traced graph's run); *sum the result's checksum. */
static size_t one(const char *src, size_t len, int compiled, int keep, double *sum)
{
    sg_ctx *ctx;
    sg_program *p;
    if (sg_ctx_new(&ctx) || sg_program_new(ctx, &p, src, len, 1))
        die(NULL, "parse");
    sg_tensor *x, *y;
    inputs(ctx, &x, &y);
    sg_walk *w;
    size_t base, peak;
    const sg_tensor *r;
    sg_env *env = NULL;
    sg_tracer *t = NULL;
    sg_run *run = NULL;
    if (!compiled) {
        if (sg_walk_eager(p, &w))
            die(ctx, "eager");
        if (keep)
            sg__xeager_gc_threshold(w->ex, SIZE_MAX);
        if (sg_walk_input_tensor(w, "x", x, 0) || sg_walk_input_tensor(w, "y", y, 0))
            die(ctx, "eager inputs");
        sg__xmem(ctx, &base, NULL);
        sg__xmem_reset_peak(ctx);
        if (sg_walk_run(w))
            die(ctx, "eager run");
        r = sg_run_tensor(sg_walk_eager_run(w), sg_walk_output_value(w, 0));
    } else {
        const sg_expr *c0, *c1, *c64;
        if (sg_env_new(ctx, NULL, &env) || sg_tracer_new(env, &t) || sg_parse(ctx, &c0, "0", NULL) ||
            sg_parse(ctx, &c1, "1", NULL) || sg_parse(ctx, &c64, "64", NULL))
            die(ctx, "tracer");
        const sg_expr *xsz[2] = {c64, c64}, *xst[2] = {c64, c1}, *ysz[1] = {c64}, *yst[1] = {c1};
        sg_fake fx = {.ndim = 2, .sizes = xsz, .strides = xst, .offset = c0};
        sg_fake fy = {.ndim = 1, .sizes = ysz, .strides = yst, .offset = c0};
        sg_value xv, yv;
        if (sg_tracer_input_tensor(t, &xv, "x", &fx, SG_FLOAT32, 0) ||
            sg_tracer_input_tensor(t, &yv, "y", &fy, SG_FLOAT32, 0) || sg_walk_trace(p, t, &w) ||
            sg_walk_input_value(w, "x", xv) || sg_walk_input_value(w, "y", yv) || sg_walk_run(w) ||
            sg_walk_finish(w))
            die(ctx, "trace");
        if (sg_run_new(t, NULL, &run) || sg_run_set_named(run, "x", x) || sg_run_set_named(run, "y", y))
            die(ctx, "run");
        sg__xmem(ctx, &base, NULL);
        sg__xmem_reset_peak(ctx);
        /* --keep: every node run without the release plan */
        if (keep ? sg__xrun_rest(sg__run_xrun(run)) : sg_run_execute(run))
            die(ctx, "graph run");
        r = sg_run_tensor(run, sg_run_output(run, 0));
    }
    sg__xmem(ctx, NULL, &peak);
    if (!r)
        die(ctx, "the result");
    *sum = checksum(r);
    sg_run_free(run);
    sg_walk_free(w);
    sg_tracer_free(t);
    sg_env_free(env);
    sg_tensor_unref(x);
    sg_tensor_unref(y);
    sg_program_free(p);
    sg_ctx_free(ctx);
    return peak - base;
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
    int keep = argc == 3 && !strcmp(argv[2], "--keep");
    if (argc < 2 || argc > 3 || (argc == 3 && !keep)) {
        fprintf(stderr, "usage: bench_memory OPS [--keep] | bench_memory --source OPS\n");
        return 2;
    }
    long ops = strtol(argv[1], NULL, 10);
    if (ops < BLOCK || ops % BLOCK) {
        fprintf(stderr, "bench_memory: OPS a multiple of %d\n", BLOCK);
        return 2;
    }
    size_t len;
    char *src = program(ops, &len);
    double se, sc;
    size_t pe = one(src, len, 0, keep, &se), pc = one(src, len, 1, keep, &sc);
    if (se != sc) {
        fprintf(stderr, "bench_memory: eager gives %.17g, the compiled run %.17g\n", se, sc);
        return 1;
    }
    printf("ops %ld\nkeep %d\neager_peak_bytes %zu\ncompiled_peak_bytes %zu\nchecksum %.17g\n", ops, keep, pe, pc, se);
    free(src);
    return 0;
}
