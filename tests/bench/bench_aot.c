/* AOT pipeline benchmark (issue 20): one long straight-line program with
 * views and in-place ops through aliases, traced with symbolic sizes and
 * compiled by sg_aot_compile (functionalization and the analysis), and
 * the runtime wrapper's cost per call on a small program.
 *
 * The program (x: f64[s0, s0], y: f64[s0], backed sizes with hint 6;
 * `bench_aot --source OPS KIND` prints it, tests/bench/bench_aot.py runs
 * the same text in PyTorch 1.13):
 *
 *     def f(x, y):
 *         t = x.sin()
 *         <block> repeated OPS / len(block) times
 *         return t, x, b            # b = x.transpose(0, 1): an alias of x
 *
 * KIND full (24 ops a block): views of the intermediate t and of the input
 * x (t, transpose, narrow, slice, diagonal, select, unsqueeze, view,
 * reshape), in-place ops through them (mul_, add_, copy_, zero_, sub_),
 * a metadata mutation of an intermediate (t_), reads of the mutated input:
 *
 *     a = t.t(); a.mul_(0.5); b = x.transpose(0, 1); b.add_(a); b.mul_(0.5)
 *     c = x.narrow(0, 1, 2); m = t[0:2]; c.copy_(m); d = x.diagonal(); d.mul_(-1.0)
 *     e = t[1]; e.zero_(); u = t.unsqueeze(0); u.add_(y); r = t.view(-1); r.sub_(0.125)
 *     q = x.sin(); q.t_(); s = t.mul(q); v = s.reshape(-1); v.mul_(2.0); w = v.sin()
 *     t = w.view(x.shape[0], x.shape[1]); t.add_(y)
 *
 * KIND common (16 ops a block): the part PyTorch 1.13's
 * make_fx(functionalize(f), tracing_mode="symbolic") also traces (its
 * symbolic mode refuses slice, narrow, select, diagonal, copy_, zero_ and
 * t_ with "Cannot call sizes() on tensor with symbolic sizes/strides" or
 * "couldn't find symbolic meta function"): the full block without the
 * narrow ... zero_ run and q, with `p = x.permute(1, 0); s = t.mul(p)`.
 *
 *     bench_aot OPS [RUNS [KIND]]     the long program (KIND: full)
 *     bench_aot --source OPS [KIND]   prints it
 *     bench_aot --wrapper [CALLS [keep0|keep1|pure]]  the runtime wrapper per call
 *
 * The long program, RUNS times (default 5), each in a fresh context (the
 * source parsed and the inputs' fakes made untimed), timed apart:
 *  - trace: the tracer's inputs, sg_walk_trace, sg_walk_run and
 *    sg_walk_finish (the walker and the tracer with its shape rules);
 *  - compile: sg_aot_compile(tracer, keep_input_mutations=1)
 *    (functionalization, analysis, the epilogue graph, the overlap plan),
 *    as torch.compile keeps input mutations in the graph; and
 *    compile_keep0 with keep_input_mutations=0.
 * It prints "key value" lines: the program ops, the traced graph's call
 * nodes, the functional graph's nodes (sg_aot_ops), the medians per
 * program op and per node. Then (untimed, the first run) the check: the
 * compiled program run by sg_aot_call on x, y and our eager run
 * (sg_walk_eager) on copies of them must give the same outputs and the
 * same x afterwards, bit for bit, output 1 the caller's x itself, output
 * 2 a view of x's storage, and x's version counter moved as eager moves
 * it; otherwise a message and exit status 1. The checksums (sum over the
 * row-major elements of (k + 1) * element k) of the outputs and of x are
 * printed for run_aot.sh to compare with PyTorch's eager results.
 * valgrind --tool=callgrind --toggle-collect=compile_body counts the
 * compile's instructions alone (keep_input_mutations=1; compile_keep0_body
 * the other, trace_body the trace's).
 *
 * --wrapper: the small program
 *     def f(x, y):
 *         x.mul_(-1.0)
 *         return x.add(y), x.t()
 * compiled with keep_input_mutations=0 (the update of x copied in by the
 * epilogue, x.t() made again after it) and =1 (copied in the graph), each
 * call sg_run_new, the inputs, sg_aot_call, the outputs read, sg_run_free;
 * against the same kernels without the wrapper: the traced graph of
 *     def f(x, y):
 *         m = x.mul(-1.0)
 *         o = m.add(y)
 *         x.copy_(m)
 *         return o, x.t()
 * run by sg_run_execute the same way (its copy_ is the epilogue's copy).
 * And a program with no mutation (return x.add(y), x.t()) compiled
 * against its own traced graph. Median over 15 rounds of CALLS calls
 * (default 2000) each, the sides alternating; overhead = the difference
 * of the medians per call. The results of both sides are compared first. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/graph.h" /* the traced graph's node count */
#include "shapeguard.h"

#define SIDE 6

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(sg_ctx *ctx, const char *what)
{
    fprintf(stderr, "bench_aot: %s: %s\n", what, ctx ? sg_ctx_last_error_msg(ctx) : "");
    exit(1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, long n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- the program ---- */

static const char *const full_block[] = {
    "a = t.t()", "a.mul_(0.5)", "b = x.transpose(0, 1)", "b.add_(a)", "b.mul_(0.5)",
    "c = x.narrow(0, 1, 2)", "m = t[0:2]", "c.copy_(m)", "d = x.diagonal()", "d.mul_(-1.0)",
    "e = t[1]", "e.zero_()", "u = t.unsqueeze(0)", "u.add_(y)", "r = t.view(-1)", "r.sub_(0.125)",
    "q = x.sin()", "q.t_()", "s = t.mul(q)", "v = s.reshape(-1)", "v.mul_(2.0)", "w = v.sin()",
    "t = w.view(x.shape[0], x.shape[1])", "t.add_(y)",
};
static const char *const common_block[] = {
    "a = t.t()", "a.mul_(0.5)", "b = x.transpose(0, 1)", "b.add_(a)", "b.mul_(0.5)",
    "u = t.unsqueeze(0)", "u.add_(y)", "r = t.view(-1)", "r.sub_(0.125)",
    "p = x.permute(1, 0)", "s = t.mul(p)", "v = s.reshape(-1)", "v.mul_(2.0)", "w = v.sin()",
    "t = w.view(x.shape[0], x.shape[1])", "t.add_(y)",
};
#define NFULL (sizeof full_block / sizeof *full_block)
#define NCOMMON (sizeof common_block / sizeof *common_block)

/* The program of kind full (else common) with ops / block-length blocks
 * (at least one); *nops its ops (the blocks' and the first sin), *len its
 * length. */
static char *program(long ops, bool full, long *nops, size_t *len)
{
    const char *const *blk = full ? full_block : common_block;
    long nb = (long)(full ? NFULL : NCOMMON), blocks = ops / nb > 0 ? ops / nb : 1;
    size_t cap = 64, n = 0;
    for (long k = 0; k < nb; k++)
        cap += (strlen(blk[k]) + 5) * (size_t)blocks;
    char *s = malloc(cap);
    if (!s)
        die(NULL, "out of memory");
    n += (size_t)sprintf(s + n, "def f(x, y):\n    t = x.sin()\n");
    for (long i = 0; i < blocks; i++)
        for (long k = 0; k < nb; k++)
            n += (size_t)sprintf(s + n, "    %s\n", blk[k]);
    n += (size_t)sprintf(s + n, "    return t, x, b\n");
    *nops = 1 + blocks * nb;
    *len = n;
    return s;
}

/* The inputs: x[i][j] = (6 i + j) / 36 - 0.5, y[j] = 0.25 j - 0.3 (bench_aot.py too). */
static void inputs(sg_ctx *ctx, sg_tensor **x, sg_tensor **y)
{
    int64_t xs[2] = {SIDE, SIDE}, ys[1] = {SIDE};
    if (sg_tensor_new(ctx, x, SG_FLOAT64, 2, xs) || sg_tensor_new(ctx, y, SG_FLOAT64, 1, ys))
        die(ctx, "inputs");
    for (int i = 0; i < SIDE; i++)
        for (int j = 0; j < SIDE; j++)
            sg_tensor_set_f(*x, SIDE * i + j, (double)(SIDE * i + j) / 36.0 - 0.5);
    for (int j = 0; j < SIDE; j++)
        sg_tensor_set_f(*y, j, 0.25 * j - 0.3);
}

/* sum over the row-major elements of (k + 1) * element k */
static double checksum(const sg_tensor *t)
{
    double s = 0;
    for (int64_t i = 0; i < sg_tensor_numel(t); i++)
        s += (double)(i + 1) * sg_tensor_get_f(t, i);
    return s;
}

/* Do a and b have the same sizes and the same elements, bit for bit? */
static bool same_tensor(const sg_tensor *a, const sg_tensor *b)
{
    if (!a || !b || sg_tensor_ndim(a) != sg_tensor_ndim(b))
        return false;
    for (size_t d = 0; d < sg_tensor_ndim(a); d++)
        if (sg_tensor_size(a, d) != sg_tensor_size(b, d))
            return false;
    for (int64_t i = 0; i < sg_tensor_numel(a); i++) {
        double u = sg_tensor_get_f(a, i), v = sg_tensor_get_f(b, i);
        if (memcmp(&u, &v, sizeof u))
            return false;
    }
    return true;
}

/* ---- tracing and compiling ---- */

/* A traced program: its context, parsed source, environment, inputs'
   fakes, tracer and walk. */
typedef struct traced {
    sg_ctx *ctx;
    sg_program *p;
    sg_env *env;
    sg_inputs *in;
    sg_tracer *t;
    sg_walk *w;
    const sg_fake *fx, *fy;
} traced;

/* Parse src and make the inputs' fakes (x [6, 6], y [6], backed sizes). */
static void traced_new(traced *b, const char *src, size_t len)
{
    const sg_source *sx, *sy;
    int64_t xs[2] = {SIDE, SIDE}, ys[1] = {SIDE};
    sg_tensor_value vx = {.ndim = 2, .sizes = xs}, vy = {.ndim = 1, .sizes = ys};
    memset(b, 0, sizeof *b);
    if (sg_ctx_new(&b->ctx) || sg_program_new(b->ctx, &b->p, src, len, 1))
        die(b->ctx, "parse");
    if (sg_env_new(b->ctx, NULL, &b->env) || sg_inputs_new(b->env, NULL, &b->in) || sg_tracer_new(b->env, &b->t))
        die(b->ctx, "setup");
    if (sg_source_local(b->ctx, &sx, "x") || sg_inputs_tensor(b->in, sx, &vx, NULL, &b->fx) ||
        sg_source_local(b->ctx, &sy, "y") || sg_inputs_tensor(b->in, sy, &vy, NULL, &b->fy))
        die(b->ctx, "fakes");
}

static void traced_free(traced *b)
{
    sg_walk_free(b->w);
    sg_tracer_free(b->t);
    sg_inputs_free(b->in);
    sg_env_free(b->env);
    sg_program_free(b->p);
    sg_ctx_free(b->ctx);
}

/* The trace (timed; callgrind's --toggle-collect=trace_body): the
   tracer's inputs, the walk, its run and its outputs. */
static __attribute__((noinline)) void trace_body(traced *b)
{
    sg_value x, y;
    if (sg_tracer_input_tensor(b->t, &x, "x", b->fx, SG_FLOAT64, 0) ||
        sg_tracer_input_tensor(b->t, &y, "y", b->fy, SG_FLOAT64, 0) || sg_walk_trace(b->p, b->t, &b->w) ||
        sg_walk_input_value(b->w, "x", x) || sg_walk_input_value(b->w, "y", y) || sg_walk_run(b->w) ||
        sg_walk_finish(b->w))
        die(b->ctx, "trace");
}

/* The compile (timed; --toggle-collect=compile_body counts it with
   keep_input_mutations=1, compile_keep0_body with 0). */
static sg_aot *compile_with(traced *b, int keep)
{
    sg_aot *a;
    if (sg_aot_compile(b->t, keep, &a))
        die(b->ctx, "sg_aot_compile");
    return a;
}
static __attribute__((noinline)) sg_aot *compile_body(traced *b)
{
    return compile_with(b, 1);
}
static __attribute__((noinline)) sg_aot *compile_keep0_body(traced *b)
{
    return compile_with(b, 0);
}

static size_t count_words(const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        n++;
        while (*p && *p != ' ')
            p++;
    }
    return n;
}

/* The check: the compiled program on (x, y) against our eager run on
   copies; prints the checksums; 0 when they agree in every way checked. */
static int check(traced *b, sg_aot *a, const char *src, size_t len)
{
    sg_ctx *ctx = b->ctx;
    sg_tensor *x, *y, *ex, *ey;
    inputs(ctx, &x, &y);
    inputs(ctx, &ex, &ey);
    sg_run *r;
    if (sg_run_new(b->t, NULL, &r) || sg_run_set_named(r, "x", x) || sg_run_set_named(r, "y", y))
        die(ctx, "the compiled run's inputs");
    uint64_t v0 = sg_tensor_version(x);
    if (sg_aot_call(a, r))
        die(ctx, "sg_aot_call");
    sg_program *p;
    sg_walk *w;
    if (sg_program_new(ctx, &p, src, len, 1) || sg_walk_eager(p, &w) || sg_walk_input_tensor(w, "x", ex, 0) ||
        sg_walk_input_tensor(w, "y", ey, 0) || sg_walk_run(w))
        die(ctx, "the eager run");
    int bad = 0;
    size_t n = sg_run_noutputs(r);
    if (n != 3 || sg_walk_noutputs(w) != 3) {
        fprintf(stderr, "bench_aot: %zu outputs compiled, %zu eager (3 expected)\n", n, sg_walk_noutputs(w));
        bad = 1;
    }
    const char *names[3] = {"t", "x", "b"};
    for (size_t i = 0; i < n && i < 3; i++) {
        const sg_tensor *c = sg_run_tensor(r, sg_run_output(r, i)),
                        *e = sg_run_tensor(sg_walk_eager_run(w), sg_walk_output_value(w, i));
        if (!same_tensor(c, e)) {
            fprintf(stderr, "bench_aot: output %zu (%s) differs: compiled %.17g, eager %.17g\n", i, names[i],
                    c ? checksum(c) : 0.0, e ? checksum(e) : 0.0);
            bad = 1;
        }
        if (c)
            printf("checksum_o%zu %.17g\n", i, checksum(c));
    }
    if (!same_tensor(x, ex)) {
        fprintf(stderr, "bench_aot: x after the call differs: compiled %.17g, eager %.17g\n", checksum(x), checksum(ex));
        bad = 1;
    }
    printf("checksum_x %.17g\n", checksum(x));
    if (n >= 3 && sg_run_tensor(r, sg_run_output(r, 1)) != x) {
        fprintf(stderr, "bench_aot: output 1 is not the caller's x\n");
        bad = 1;
    }
    if (n >= 3 && !sg_tensor_same_storage(sg_run_tensor(r, sg_run_output(r, 2)), x)) {
        fprintf(stderr, "bench_aot: output 2 is not a view of x\n");
        bad = 1;
    }
    if (sg_tensor_version(x) - v0 != sg_tensor_version(ex)) {
        fprintf(stderr, "bench_aot: x's version moved by %llu compiled, %llu eager\n",
                (unsigned long long)(sg_tensor_version(x) - v0), (unsigned long long)sg_tensor_version(ex));
        bad = 1;
    }
    printf("x_version_bumps %llu\n", (unsigned long long)sg_tensor_version(ex));
    printf("check %s\n", bad ? "DIFFERENT" : "same");
    sg_walk_free(w);
    sg_program_free(p);
    sg_run_free(r);
    sg_tensor_unref(x);
    sg_tensor_unref(y);
    sg_tensor_unref(ex);
    sg_tensor_unref(ey);
    return bad;
}

static int long_program(long ops, long runs, bool full)
{
    long nops;
    size_t len;
    char *src = program(ops, full, &nops, &len);
    double *tt = malloc((size_t)runs * sizeof *tt), *tc = malloc((size_t)runs * sizeof *tc),
           *tk = malloc((size_t)runs * sizeof *tk);
    if (!tt || !tc || !tk)
        die(NULL, "out of memory");
    size_t calls = 0, fwnodes = 0;
    int bad = 0;
    printf("kind %s\nops %ld\nruns %ld\n", full ? "full" : "common", nops, runs);
    fflush(stdout);
    for (long k = 0; k < runs; k++) {
        traced b;
        traced_new(&b, src, len);
        double t0 = now_ns();
        trace_body(&b);
        double t1 = now_ns();
        sg_aot *a = compile_body(&b);
        double t2 = now_ns();
        sg_aot *a0 = compile_keep0_body(&b);
        double t3 = now_ns();
        tt[k] = t1 - t0;
        tc[k] = t2 - t1;
        tk[k] = t3 - t2;
        if (!k) {
            const sg__graph *g = sg__tracer_graph(b.t);
            for (size_t i = 0; i < g->nnodes; i++)
                calls += g->nodes[i].kind == SG_N_CALL;
            char *fw;
            if (sg_aot_ops(a, &fw))
                die(b.ctx, "sg_aot_ops");
            fwnodes = count_words(fw);
            sg_free(fw);
            printf("traced_nodes %zu\nfunctional_nodes %zu\n", calls, fwnodes);
            if (sg_tracer_graph_placeholders(b.t, "", &fw))
                die(b.ctx, "placeholders");
            printf("placeholders %s\n", fw);
            sg_free(fw);
            bad = check(&b, a, src, len);
        }
        sg_aot_free(a0);
        sg_aot_free(a);
        traced_free(&b);
    }
    double mt = median(tt, runs), mc = median(tc, runs), mk = median(tk, runs);
    printf("trace_ns_per_op_median %.1f\n", mt / (double)nops);
    printf("compile_ns_per_op_median %.1f\n", mc / (double)nops);
    printf("compile_ns_per_traced_node_median %.1f\n", mc / (double)calls);
    printf("compile_ns_per_functional_node_median %.1f\n", mc / (double)fwnodes);
    printf("trace_compile_ns_per_functional_node_median %.1f\n", (mt + mc) / (double)fwnodes);
    printf("compile_keep0_ns_per_op_median %.1f\n", mk / (double)nops);
    printf("compile_ms_median %.3f\ntrace_ms_median %.3f\n", mc / 1e6, mt / 1e6);
    free(tt);
    free(tc);
    free(tk);
    free(src);
    return bad;
}

/* ---- the runtime wrapper ---- */

typedef struct small {
    traced b;
    sg_aot *a; /* NULL: the traced graph run by sg_run_execute */
} small;

static void small_new(small *s, const char *src, int keep)
{
    traced_new(&s->b, src, strlen(src));
    trace_body(&s->b);
    s->a = keep >= 0 ? compile_with(&s->b, keep) : NULL;
}

static void small_free(small *s)
{
    sg_aot_free(s->a);
    traced_free(&s->b);
}

/* The calls themselves (callgrind: --toggle-collect=call_aot, call_traced). */
static __attribute__((noinline)) sg_status call_aot(const sg_aot *a, sg_run *r)
{
    return sg_aot_call(a, r);
}
static __attribute__((noinline)) sg_status call_traced(sg_run *r)
{
    return sg_run_execute(r);
}

/* One call on x, y (kept by the caller): a run, the inputs, the call, the
   outputs read (their checksums added to *sum), the run freed. */
static void small_call(const small *s, sg_tensor *x, sg_tensor *y, double *sum)
{
    sg_run *r;
    if (sg_run_new(s->b.t, NULL, &r) || sg_run_set_named(r, "x", x) || sg_run_set_named(r, "y", y))
        die(s->b.ctx, "run");
    if (s->a ? call_aot(s->a, r) : call_traced(r))
        die(s->b.ctx, "call");
    for (size_t i = 0; i < sg_run_noutputs(r); i++) {
        const sg_tensor *o = sg_run_tensor(r, sg_run_output(r, i));
        if (!o)
            die(s->b.ctx, "an output");
        if (sum)
            *sum += checksum(o);
        else
            (void)sg_tensor_get_f(o, 0);
    }
    sg_run_free(r);
}

/* The results of one call of each side on fresh inputs: the outputs and x
   afterwards the same? */
static bool small_agree(const small *u, const small *v)
{
    sg_tensor *x1, *y1, *x2, *y2;
    inputs(u->b.ctx, &x1, &y1);
    inputs(v->b.ctx, &x2, &y2);
    double s1 = 0, s2 = 0;
    small_call(u, x1, y1, &s1);
    small_call(v, x2, y2, &s2);
    bool same = s1 == s2 && same_tensor(x1, x2) && sg_tensor_version(x1) == sg_tensor_version(x2);
    if (!same)
        fprintf(stderr, "bench_aot: the wrapper's results differ: outputs %.17g and %.17g, x %.17g and %.17g\n", s1, s2,
                checksum(x1), checksum(x2));
    sg_tensor_unref(x1);
    sg_tensor_unref(y1);
    sg_tensor_unref(x2);
    sg_tensor_unref(y2);
    return same;
}

#define ROUNDS 15

/* Median ns per call of u and of v over ROUNDS rounds of calls each,
   alternating. */
static void small_time(const small *u, const small *v, long calls, double *mu, double *mv)
{
    double tu[ROUNDS], tv[ROUNDS];
    sg_tensor *x1, *y1, *x2, *y2;
    inputs(u->b.ctx, &x1, &y1);
    inputs(v->b.ctx, &x2, &y2);
    for (int k = 0; k < ROUNDS; k++) {
        double t0 = now_ns();
        for (long i = 0; i < calls; i++)
            small_call(u, x1, y1, NULL);
        double t1 = now_ns();
        for (long i = 0; i < calls; i++)
            small_call(v, x2, y2, NULL);
        double t2 = now_ns();
        tu[k] = (t1 - t0) / (double)calls;
        tv[k] = (t2 - t1) / (double)calls;
    }
    *mu = median(tu, ROUNDS);
    *mv = median(tv, ROUNDS);
    sg_tensor_unref(x1);
    sg_tensor_unref(y1);
    sg_tensor_unref(x2);
    sg_tensor_unref(y2);
}

static int wrapper(long calls, const char *only)
{
    static const char mutating[] = "def f(x, y):\n    x.mul_(-1.0)\n    return x.add(y), x.t()\n";
    static const char by_hand[] = "def f(x, y):\n    m = x.mul(-1.0)\n    o = m.add(y)\n    x.copy_(m)\n"
                                  "    return o, x.t()\n";
    static const char pure[] = "def f(x, y):\n    return x.add(y), x.t()\n";
    small epi, ing, hand, pc, pt;
    small_new(&epi, mutating, 0);
    small_new(&ing, mutating, 1);
    small_new(&hand, by_hand, -1);
    small_new(&pc, pure, 1);
    small_new(&pt, pure, -1);
    char *ops;
    if (sg_aot_ops(epi.a, &ops))
        die(epi.b.ctx, "ops");
    printf("wrapper_calls %ld\nwrapper_rounds %d\n", calls, ROUNDS);
    /* each side's calls: the rounds', and one of each program in the checks below */
    printf("wrapper_calls_each_side %ld\n", ROUNDS * calls + 3);
    printf("wrapper_graph_keep0 %s\n", ops);
    sg_free(ops);
    if (sg_aot_ops(ing.a, &ops))
        die(ing.b.ctx, "ops");
    printf("wrapper_graph_keep1 %s\n", ops);
    sg_free(ops);
    if (sg_tracer_graph_ops(hand.b.t, "", &ops))
        die(hand.b.ctx, "ops");
    printf("wrapper_graph_by_hand %s\n", ops);
    sg_free(ops);
    if (!small_agree(&epi, &hand) || !small_agree(&ing, &hand) || !small_agree(&pc, &pt))
        return 1;
    double a, b;
    if (!*only || !strcmp(only, "keep0")) {
        small_time(&epi, &hand, calls, &a, &b);
        printf("wrapper_keep0_ns_per_call %.1f\nby_hand_ns_per_call %.1f\nwrapper_keep0_overhead_ns %.1f\n", a, b,
               a - b);
    }
    if (!*only || !strcmp(only, "keep1")) {
        small_time(&ing, &hand, calls, &a, &b);
        printf("wrapper_keep1_ns_per_call %.1f\nby_hand_again_ns_per_call %.1f\nwrapper_keep1_overhead_ns %.1f\n", a,
               b, a - b);
    }
    if (!*only || !strcmp(only, "pure")) {
        small_time(&pc, &pt, calls, &a, &b);
        printf("wrapper_pure_ns_per_call %.1f\ntraced_pure_ns_per_call %.1f\nwrapper_pure_overhead_ns %.1f\n", a, b,
               a - b);
    }
    small_free(&epi);
    small_free(&ing);
    small_free(&hand);
    small_free(&pc);
    small_free(&pt);
    return 0;
}

static bool kind_full(const char *k)
{
    if (!strcmp(k, "full"))
        return true;
    if (!strcmp(k, "common"))
        return false;
    fprintf(stderr, "bench_aot: KIND is full or common\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc >= 3 && argc <= 4 && !strcmp(argv[1], "--source")) {
        long ops = strtol(argv[2], NULL, 10), nops;
        size_t len;
        if (ops < 1)
            return 2;
        char *s = program(ops, argc < 4 || kind_full(argv[3]), &nops, &len);
        fwrite(s, 1, len, stdout);
        free(s);
        return 0;
    }
    if (argc >= 2 && argc <= 4 && !strcmp(argv[1], "--wrapper")) {
        long calls = argc > 2 ? strtol(argv[2], NULL, 10) : 2000;
        const char *only = argc > 3 ? argv[3] : "";
        if (calls < 1 || (*only && strcmp(only, "keep0") && strcmp(only, "keep1") && strcmp(only, "pure"))) {
            fprintf(stderr, "bench_aot: --wrapper [CALLS [keep0|keep1|pure]], CALLS >= 1\n");
            return 2;
        }
        return wrapper(calls, only);
    }
    if (argc < 2 || argc > 4 || argv[1][0] == '-') {
        fprintf(stderr, "usage: bench_aot OPS [RUNS [full|common]] | bench_aot --source OPS [full|common] | "
                        "bench_aot --wrapper [CALLS [keep0|keep1|pure]]\n");
        return 2;
    }
    long ops = strtol(argv[1], NULL, 10), runs = argc > 2 ? strtol(argv[2], NULL, 10) : 5;
    if (ops < 1 || runs < 1 || runs > 1000) {
        fprintf(stderr, "bench_aot: OPS >= 1, 1 <= RUNS <= 1000\n");
        return 2;
    }
    return long_program(ops, runs, argc < 4 || kind_full(argv[3]));
}
