/* Autograd benchmark (issue 21): one long training program traced with
 * symbolic sizes and compiled by sg_aot_compile, which, its inputs
 * requiring grad, builds the functional forward, the joint graph with the
 * backward and its partition (PyTorch 1.13's min-cut, sg_aot_compile's
 * default); and what
 * the forward saves for the backward, here and over the training programs
 * of the batteries (run_autograd.sh gives each to --saved).
 *
 * The program (x, y: f64[s0, s0] leaves that require grad, backed sizes
 * with hint 6; `bench_autograd --source OPS` prints it, bench_autograd.py
 * runs the same text in PyTorch 1.13):
 *
 *     def f(x, y):
 *         t = x.mul(y)
 *         <block> repeated OPS / 19 times
 *         return t, m
 *
 * with the block (one op a line, the ops that have a derivative formula:
 * mul, mm, t, exp, mean, sub, unsqueeze, sum.dim_IntList, permute, view,
 * cos, sin, add, log, neg, div), made so that the values stay in a few
 * units and each block shrinks the gradient that crosses it (it adds its
 * own through x and y), so that thousands of blocks stay finite:
 *
 *     a = t.sin(); b = a.mm(x); c = b.t(); d = c.mul(y); e = d.exp()
 *     m = e.mean(); g = e.sub(m); u = g.unsqueeze(0); v = u.sum(0)
 *     h = v.view(-1); k = h.cos(); l = k.view(x.shape[0], x.shape[1])
 *     w = l.permute(1, 0); n = w.add(2.0); o = n.log()
 *     p = o.neg(); q = p.div(2.0); r = y.t(); t = q.add(r)
 *
 *     bench_autograd OPS [RUNS]       the long program
 *     bench_autograd --source OPS     prints it
 *     bench_autograd --hidden OPS [RUNS], --source --hidden OPS
 *                                     the same with the --hidden program
 *     bench_autograd --saved FILE DECL...   what a program saves
 *
 * The --hidden program (issue 21: a chain of layout changes under no_grad
 * that autograd walks back): t = x.mul(y); m = t.sum(), then OPS / 5
 * times
 *
 *     with torch.no_grad(): t.unsqueeze_(0)
 *     a = t.mul(2.0); b = a.sum(); m = m.add(b)
 *     with torch.no_grad(): t.squeeze_(0)
 *
 * each block's gradient passing to t's first version through the hidden
 * writes before it: its compile grows linearly where each such gradient
 * walks the chain once (remembered), quadratically where it walks it again.
 *
 * The long program, RUNS times (default 5), each in a fresh context (the
 * source parsed and the inputs' fakes made untimed), timed apart:
 *  - trace: the tracer's inputs, sg_walk_trace, sg_walk_run and
 *    sg_walk_finish;
 *  - compile: sg_aot_compile(tracer, 1): functionalization, the joint
 *    graph (forward and backward) and its partition.
 * It prints "key value" lines: the program ops, the forward's and the
 * backward's nodes (sg_aot_ops, sg_aot_backward_ops; their sum is the
 * joint graph's nodes, the count PyTorch's side takes of its two graphs),
 * the medians per program op and per joint node, what the forward saves
 * (sg_aot_saved). Then (untimed, the first run) sg_aot_call_backward on
 * x, y (the tangents are ones: the loss is t.sum() + m): the checksums
 * (sum over the row-major elements of (k + 1) * element k) of the outputs
 * and of the two gradients, for run_autograd.sh to compare with PyTorch's
 * eager ones; exit status 1 when a gradient is missing or not finite.
 * valgrind --tool=callgrind --toggle-collect=compile_body counts the
 * compile's instructions alone.
 *
 * --saved FILE DECL...: FILE holds a program (its last def the entry
 * point); DECL, one per tensor parameter, NAME:DTYPE:GRAD:SIZES[:STRIDES
 * [:OFFSET]] with DTYPE float64, float32, int64 or bool, GRAD none, leaf
 * or clone (a battery's requires_grad=leaf and requires_grad), SIZES and
 * STRIDES comma-separated (empty for a 0-d tensor). The program is traced
 * and compiled as above; it prints "saved_values N" and "saved_bytes B"
 * (sg_aot_saved; none and "mode inference" where the program compiled
 * for inference: no output needs a backward, as where an output aliases an
 * input that requires grad), "refused MESSAGE" where the pipeline does not build the
 * backward, "error MESSAGE" where the trace or the compile fails (a
 * program the battery expects to fail): exit status 0 all three; 1 when
 * FILE cannot be read, 2 on a bad DECL. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_NAME "bench_autograd"
#include "bench_util.h"
#include "shapeguard.h"

#define SIDE 6
#define MAXDIM 8

/* The context's error for what failed, and exit 1. */
static _Noreturn void die_ctx(sg_ctx *ctx, const char *what)
{
    die("%s: %s", what, ctx ? sg_ctx_last_error_msg(ctx) : "");
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

/* ---- the program ---- */

static const char *const block[] = {
    "a = t.sin()",     "b = a.mm(x)",    "c = b.t()",        "d = c.mul(y)",
    "e = d.exp()",     "m = e.mean()",   "g = e.sub(m)",     "u = g.unsqueeze(0)",
    "v = u.sum(0)",    "h = v.view(-1)", "k = h.cos()",     "l = k.view(x.shape[0], x.shape[1])",
    "w = l.permute(1, 0)", "n = w.add(2.0)", "o = n.log()",  "p = o.neg()",
    "q = p.div(2.0)",  "r = y.t()",      "t = q.add(r)",
};
#define NBLOCK (sizeof block / sizeof *block)

/* The --hidden program's block: t laid out anew under no_grad and back,
 * read with grad between (by ops that save nothing of it, or the squeeze_
 * would move a saved version), so every block's gradient passes through
 * t's chain of hidden writes, as long as the program. */
static const char *const hidden_block[] = {
    "with torch.no_grad():\n        t.unsqueeze_(0)", "a = t.mul(2.0)", "b = a.sum()", "m = m.add(b)",
    "with torch.no_grad():\n        t.squeeze_(0)",
};
#define NHIDDEN (sizeof hidden_block / sizeof *hidden_block)

/* The program (hidden: the --hidden one) with ops / (its block's ops)
 * blocks (at least one); *nops its ops (the blocks' and the first mul, and
 * the --hidden program's first sum), *len its length. */
static char *program(long ops, bool hidden, long *nops, size_t *len)
{
    const char *const *blk = hidden ? hidden_block : block;
    long nb = hidden ? (long)NHIDDEN : (long)NBLOCK, blocks = ops / nb > 0 ? ops / nb : 1;
    size_t cap = 80, n = 0;
    for (long k = 0; k < nb; k++)
        cap += (strlen(blk[k]) + 5) * (size_t)blocks;
    char *s = malloc(cap);
    if (!s)
        die_ctx(NULL, "out of memory");
    n += (size_t)sprintf(s + n, "def f(x, y):\n    t = x.mul(y)\n%s", hidden ? "    m = t.sum()\n" : "");
    for (long i = 0; i < blocks; i++)
        for (long k = 0; k < nb; k++)
            n += (size_t)sprintf(s + n, "    %s\n", blk[k]);
    n += (size_t)sprintf(s + n, "    return t, m\n");
    *nops = 1 + (hidden ? 1 : 0) + blocks * nb;
    *len = n;
    return s;
}

/* The inputs, leaves that require grad: x[i][j] = (6 i + j) / 36 - 0.5,
 * y[i][j] = 0.3 - (6 i + j) / 60 (bench_autograd.py too). */
static void inputs(sg_ctx *ctx, sg_tensor **x, sg_tensor **y)
{
    int64_t s[2] = {SIDE, SIDE};
    if (sg_tensor_new(ctx, x, SG_FLOAT64, 2, s) || sg_tensor_new(ctx, y, SG_FLOAT64, 2, s))
        die_ctx(ctx, "inputs");
    for (int i = 0; i < SIDE * SIDE; i++) {
        sg_tensor_set_f(*x, i, (double)i / 36.0 - 0.5);
        sg_tensor_set_f(*y, i, 0.3 - (double)i / 60.0);
    }
    sg_tensor_set_requires_grad(*x, 1);
    sg_tensor_set_requires_grad(*y, 1);
}

/* sum over the row-major elements of (k + 1) * element k */
static double checksum(const sg_tensor *t)
{
    double s = 0;
    for (int64_t i = 0; i < sg_tensor_numel(t); i++)
        s += (double)(i + 1) * sg_tensor_get_f(t, i);
    return s;
}

/* ---- tracing and compiling ---- */

/* A traced program: its context, parsed source, environment, inputs'
   fakes (fake[k] of the tensor parameter named name[k]), tracer and walk. */
typedef struct traced {
    sg_ctx *ctx;
    sg_program *p;
    sg_env *env;
    sg_inputs *in;
    sg_tracer *t;
    sg_walk *w;
} traced;

/* A tensor parameter as the tracer takes it. */
typedef struct decl {
    const char *name;
    sg_dtype dtype;
    int grad; /* 0, 1 (a leaf), 2 (a clone of a leaf) */
    size_t ndim;
    int64_t sizes[MAXDIM], strides[MAXDIM], offset;
    bool has_strides;
    const sg_fake *fake;
} decl;

/* Parse src and make the fakes of the n parameters d. */
static void traced_new(traced *b, const char *src, size_t len, decl *d, size_t n)
{
    memset(b, 0, sizeof *b);
    if (sg_ctx_new(&b->ctx) || sg_program_new(b->ctx, &b->p, src, len, 1))
        die_ctx(b->ctx, "parse");
    if (sg_env_new(b->ctx, NULL, &b->env) || sg_inputs_new(b->env, NULL, &b->in) || sg_tracer_new(b->env, &b->t))
        die_ctx(b->ctx, "setup");
    for (size_t k = 0; k < n; k++) {
        const sg_source *s;
        sg_tensor_value v = {.ndim = d[k].ndim,
                             .sizes = d[k].sizes,
                             .strides = d[k].has_strides ? d[k].strides : NULL,
                             .offset = d[k].offset};
        if (sg_source_local(b->ctx, &s, d[k].name) || sg_inputs_tensor(b->in, s, &v, NULL, &d[k].fake))
            die_ctx(b->ctx, "fakes");
    }
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
   tracer's inputs, the walk, its run and its outputs. 0 or the error. */
static __attribute__((noinline)) sg_status trace_body(traced *b, const decl *d, size_t n)
{
    sg_value v[16];
    sg_status s = SG_OK;
    for (size_t k = 0; k < n && !s; k++)
        s = sg_tracer_input_tensor(b->t, &v[k], d[k].name, d[k].fake, d[k].dtype, d[k].grad);
    if (!s)
        s = sg_walk_trace(b->p, b->t, &b->w);
    for (size_t k = 0; k < n && !s; k++)
        s = sg_walk_input_value(b->w, d[k].name, v[k]);
    if (!s)
        s = sg_walk_run(b->w);
    if (!s)
        s = sg_walk_finish(b->w);
    return s;
}

/* The compile (timed; --toggle-collect=compile_body counts it). */
static __attribute__((noinline)) sg_aot *compile_body(traced *b)
{
    sg_aot *a;
    if (sg_aot_compile(b->t, 1, &a))
        die_ctx(b->ctx, "sg_aot_compile");
    return a;
}

/* The two parameters of the long program. */
static void long_decls(decl d[2])
{
    for (int k = 0; k < 2; k++)
        d[k] = (decl){.name = k ? "y" : "x", .dtype = SG_FLOAT64, .grad = 1, .ndim = 2, .sizes = {SIDE, SIDE}};
}

/* The check: sg_aot_call_backward on x, y; prints the checksums of the
   outputs and of the gradients; 0 when both gradients are there and
   finite. */
static int check(traced *b, sg_aot *a)
{
    sg_ctx *ctx = b->ctx;
    sg_tensor *x, *y, *grads[8] = {NULL};
    inputs(ctx, &x, &y);
    sg_run *r;
    if (sg_run_new(b->t, NULL, &r) || sg_run_set_named(r, "x", x) || sg_run_set_named(r, "y", y))
        die_ctx(ctx, "the run's inputs");
    size_t ni = sg_aot_ninputs(a);
    if (ni > 8)
        die_ctx(NULL, "more than 8 inputs");
    if (sg_aot_call_backward(a, r, grads, ni))
        die_ctx(ctx, "sg_aot_call_backward");
    int bad = 0;
    for (size_t i = 0; i < sg_run_noutputs(r) && i < 2; i++) {
        const sg_tensor *o = sg_run_tensor(r, sg_run_output(r, i));
        if (o)
            printf("checksum_o%zu %.17g\n", i, checksum(o));
    }
    const char *names[2] = {"x", "y"};
    for (int k = 0; k < 2; k++) {
        const sg_tensor *g = NULL;
        for (size_t i = 0; i < ni; i++)
            if (!strcmp(sg_aot_input_name(a, i), names[k]))
                g = grads[i];
        double c = g ? checksum(g) : NAN;
        if (!isfinite(c)) {
            fprintf(stderr, "bench_autograd: the gradient of %s is %s\n", names[k], g ? "not finite" : "missing");
            bad = 1;
        }
        printf("checksum_grad_%s %.17g\n", names[k], c);
    }
    for (size_t i = 0; i < ni; i++)
        sg_tensor_unref(grads[i]);
    sg_run_free(r);
    sg_tensor_unref(x);
    sg_tensor_unref(y);
    return bad;
}

static int long_program(long ops, bool hidden, long runs)
{
    long nops;
    size_t len;
    char *src = program(ops, hidden, &nops, &len);
    double *tt = malloc((size_t)runs * sizeof *tt), *tc = malloc((size_t)runs * sizeof *tc);
    if (!tt || !tc)
        die_ctx(NULL, "out of memory");
    size_t fwnodes = 0, bwnodes = 0;
    int bad = 0;
    printf("ops %ld\nruns %ld\n", nops, runs);
    fflush(stdout);
    for (long k = 0; k < runs; k++) {
        traced b;
        decl d[2];
        long_decls(d);
        traced_new(&b, src, len, d, 2);
        double t0 = now_ns();
        if (trace_body(&b, d, 2))
            die_ctx(b.ctx, "trace");
        double t1 = now_ns();
        sg_aot *a = compile_body(&b);
        double t2 = now_ns();
        tt[k] = t1 - t0;
        tc[k] = t2 - t1;
        if (!k) {
            char *s;
            if (sg_aot_get_mode(a) != SG_AOT_TRAIN)
                die_ctx(NULL, "the program compiled for inference");
            if (sg_aot_ops(a, &s))
                die_ctx(b.ctx, "sg_aot_ops");
            fwnodes = count_words(s);
            sg_free(s);
            if (sg_aot_backward_ops(a, &s))
                die_ctx(b.ctx, "sg_aot_backward_ops");
            bwnodes = count_words(s);
            sg_free(s);
            size_t nsaved;
            int64_t bytes;
            if (sg_aot_saved(a, &nsaved, &bytes))
                die_ctx(b.ctx, "sg_aot_saved");
            printf("forward_nodes %zu\nbackward_nodes %zu\njoint_nodes %zu\n", fwnodes, bwnodes, fwnodes + bwnodes);
            printf("saved_values %zu\nsaved_bytes %lld\n", nsaved, (long long)bytes);
            bad = check(&b, a);
        }
        sg_aot_free(a);
        traced_free(&b);
    }
    double mt = median(tt, (size_t)runs), mc = median(tc, (size_t)runs), nj = (double)(fwnodes + bwnodes);
    printf("trace_ns_per_op_median %.1f\n", mt / (double)nops);
    printf("compile_ns_per_op_median %.1f\n", mc / (double)nops);
    printf("trace_compile_ns_per_op_median %.1f\n", (mt + mc) / (double)nops);
    printf("compile_ns_per_joint_node_median %.1f\n", mc / nj);
    printf("trace_compile_ns_per_joint_node_median %.1f\n", (mt + mc) / nj);
    printf("compile_ms_median %.3f\ntrace_ms_median %.3f\n", mc / 1e6, mt / 1e6);
    free(tt);
    free(tc);
    free(src);
    return bad;
}

/* ---- what a battery program saves ---- */

/* A comma-separated list of at most MAXDIM integers into v; its length,
   or -1 when it is not one. */
static long int_list(const char *s, const char *end, int64_t *v)
{
    long n = 0;
    while (s < end) {
        char *e;
        long long x = strtoll(s, &e, 10);
        if (e == s || e > end || n == MAXDIM || (e < end && *e != ','))
            return -1;
        v[n++] = x;
        s = e < end ? e + 1 : e;
    }
    return n;
}

/* NAME:DTYPE:GRAD:SIZES[:STRIDES[:OFFSET]] into d (d->name points into s,
   its colon replaced); false when it is not one. */
static bool parse_decl(char *s, decl *d)
{
    char *f[6] = {s};
    int nf = 1;
    for (char *p = s; *p && nf < 6; p++)
        if (*p == ':') {
            *p = 0;
            f[nf++] = p + 1;
        }
    if (nf < 4)
        return false;
    memset(d, 0, sizeof *d);
    d->name = f[0];
    static const char *const dt[] = {"float64", "float32", "int64", "bool"};
    static const sg_dtype dv[] = {SG_FLOAT64, SG_FLOAT32, SG_INT64, SG_BOOL};
    int k = 0;
    while (k < 4 && strcmp(f[1], dt[k]))
        k++;
    if (k == 4)
        return false;
    d->dtype = dv[k];
    d->grad = !strcmp(f[2], "leaf") ? 1 : !strcmp(f[2], "clone") ? 2 : 0;
    if (!d->grad && strcmp(f[2], "none"))
        return false;
    long n = int_list(f[3], f[3] + strlen(f[3]), d->sizes);
    if (n < 0)
        return false;
    d->ndim = (size_t)n;
    if (nf > 4 && *f[4]) {
        if (int_list(f[4], f[4] + strlen(f[4]), d->strides) != n)
            return false;
        d->has_strides = true;
    }
    if (nf > 5)
        d->offset = strtoll(f[5], NULL, 10);
    return true;
}

static int saved(const char *path, char **args, int nargs)
{
    FILE *fh = fopen(path, "rb");
    if (!fh) {
        perror(path);
        return 1;
    }
    static char src[1 << 16];
    size_t len = fread(src, 1, sizeof src - 1, fh);
    fclose(fh);
    if (len == sizeof src - 1) {
        fprintf(stderr, "bench_autograd: %s: longer than %zu bytes\n", path, sizeof src - 2);
        return 1;
    }
    src[len] = 0;
    decl d[16];
    if (nargs > 16) {
        fprintf(stderr, "bench_autograd: at most 16 tensor parameters\n");
        return 2;
    }
    for (int k = 0; k < nargs; k++)
        if (!parse_decl(args[k], &d[k])) {
            fprintf(stderr, "bench_autograd: bad DECL '%s' (NAME:DTYPE:GRAD:SIZES[:STRIDES[:OFFSET]])\n", args[k]);
            return 2;
        }
    traced b;
    traced_new(&b, src, len, d, (size_t)nargs);
    sg_aot *a = NULL;
    size_t n;
    int64_t bytes;
    if (trace_body(&b, d, (size_t)nargs) || sg_aot_compile(b.t, 1, &a)) {
        printf("error %s\n", sg_ctx_last_error_msg(b.ctx));
    } else if (sg_aot_get_mode(a) != SG_AOT_TRAIN) {
        printf("saved_values 0\nsaved_bytes 0\nmode inference\n");
    } else if (sg_aot_saved(a, &n, &bytes)) {
        printf("refused %s\n", sg_ctx_last_error_msg(b.ctx));
    } else {
        printf("saved_values %zu\nsaved_bytes %lld\n", n, (long long)bytes);
    }
    sg_aot_free(a);
    traced_free(&b);
    return 0;
}

int main(int argc, char **argv)
{
    bool hidden = argc > 2 && !strcmp(argv[1], "--hidden");
    if (hidden) { /* (--hidden OPS [RUNS]) */
        argv++;
        argc--;
    }
    if (argc >= 3 && argc <= 4 && !strcmp(argv[1], "--source")) {
        bool h = argc == 4 && !strcmp(argv[2], "--hidden");
        long ops = strtol(argv[argc - 1], NULL, 10), nops;
        size_t len;
        if (ops < 1 || (argc == 4 && !h) || hidden)
            return 2;
        char *s = program(ops, h, &nops, &len);
        fwrite(s, 1, len, stdout);
        free(s);
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "--saved") && !hidden)
        return saved(argv[2], argv + 3, argc - 3);
    if (argc < 2 || argc > 3 || argv[1][0] == '-') {
        fprintf(stderr, "usage: bench_autograd [--hidden] OPS [RUNS] | bench_autograd --source [--hidden] OPS | "
                        "bench_autograd --saved FILE NAME:DTYPE:GRAD:SIZES[:STRIDES[:OFFSET]]...\n");
        return 2;
    }
    long ops = strtol(argv[1], NULL, 10), runs = argc > 2 ? strtol(argv[2], NULL, 10) : 5;
    if (ops < 1 || runs < 1 || runs > 1000) {
        fprintf(stderr, "bench_autograd: OPS >= 1, 1 <= RUNS <= 1000\n");
        return 2;
    }
    return long_program(ops, hidden, runs);
}
