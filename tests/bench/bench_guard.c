/* Guards at call time (issue 6): a compiled guard program against the same
 * guards as C compiled with cc -O2 (sg_guard_prog_emit_c, loaded as a shared
 * object and called in the same timing loop) and as two Python lambdas timed
 * by python3's timeit on the same input: PyTorch's style, the guards over
 * the sources (sg_guard_prog_emit_python_with: lambda L: ...
 * L['x0'].size()[0] ..., with L a dict of objects whose size() is a C-level
 * builtin returning a tuple: cheaper than torch.Tensor.size(), which builds
 * a torch.Size), the cheaper flat one over a list
 * (sg_guard_prog_emit_python: lambda v: ... v[0] ...), and the flat one
 * with one parameter per size, as sympy's lambdify writes it
 * (sg_guard_prog_emit_python_with: lambda a0, a1, ...: ... a0 ..., called
 * as f(*v)). The last two get the sizes already flattened into one list, as
 * the program gets them in one int64 array: they compare like with like;
 * pt also pays for reading the sizes out of the inputs.
 *
 *   bench_guard [-n N,...] [-s SEED] [-r ROUNDS] [-k WORKDIR] [-p PYTHON3] [-c CC]
 *
 * Guard sets of N guards (default 10, 100, 1000, 4355) over min(N, 1000)
 * sources L['xT'].size()[D], shaped like sg_env_produce_guards output: duck
 * equalities, bounds, and recorded guards (linear relations, modulo, floor
 * division, products, Max). Every guard holds at the input (the hot case: a
 * call that hits the cache entry). Prints one line per size:
 *   N sources compile_us_per_guard prog_ns c_ns hand_ns pt_ns py_ns prog/c prog/h pt/prog py/prog interp_ns
 *   int/c native_B insns regs batched fl_ns fl/prog
 * (c: the emitted C, sg_guard_prog_emit_c, exact: it tests for overflow and
 * returns -1 to say "check exactly"; hand: the guards as a person writes them
 * in C, return (G0) && (G1) && ... in plain int64 arithmetic, no overflow
 * test: the floor; both cc -O2;
 * prog: the program as compiled by default, with native code where the
 * library has a backend, native_B bytes of it; interp: the same compiled
 * with SG_GUARD_INTERPRET, the portable path; pt: the PyTorch-style lambda
 * over L, py: the lambda over v[i], fl: the lambda over a0, a1, ... called
 * as f(*v), the fastest Python form of the flattened sizes).
 * Exit 1 if a check disagrees between the program and the C. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shapeguard.h"

static uint64_t st = 42;
static uint64_t rnd(void)
{
    uint64_t z = (st += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static sg_ctx *C;

static void die(const char *w)
{
    fprintf(stderr, "bench_guard: %s: %s\n", w, C ? sg_ctx_last_error_msg(C) : "");
    exit(2);
}

static const sg_expr *I(int64_t v)
{
    const sg_expr *e;
    if (sg_expr_int(C, &e, v))
        die("int");
    return e;
}

typedef sg_status (*bin_fn)(sg_ctx *, const sg_expr **, const sg_expr *, const sg_expr *);

static const sg_expr *bin(bin_fn f, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *r = NULL;
    if (f(C, &r, a, b))
        die("build");
    return r;
}

static const sg_expr *rel(sg_rel op, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *r = NULL;
    if (sg_expr_rel(C, &r, op, a, b))
        die("rel");
    return r;
}

static sg_status max2(sg_ctx *ctx, const sg_expr **out, const sg_expr *a, const sg_expr *b)
{
    return sg_expr_max(ctx, out, 2, (const sg_expr *[]){a, b});
}

/* A random guard over the sources, true at the values. */
static const sg_expr *guard(const sg_expr **sym, const int64_t *val, size_t ns, const sg_expr *const *vals)
{
    size_t i = rnd() % ns, j = rnd() % ns;
    const sg_expr *a = sym[i], *b = sym[j], *r = NULL;
    unsigned k = (unsigned)(rnd() % 100);
    sg_rel any = (sg_rel)(rnd() % 6);
    if (k < 25) { /* duck equality: with a source of an equal value if there is one */
        for (size_t q = 0; q < 64; q++) {
            size_t jj = rnd() % ns;
            if (jj != i && val[jj] == val[i]) {
                b = sym[jj];
                break;
            }
        }
        r = rel(SG_REL_EQ, a, b);
    } else if (k < 45) {
        r = rel(SG_REL_GE, a, I(2));
    } else if (k < 60) {
        r = rel(SG_REL_LE, a, I(1024 + (int64_t)(rnd() % 4096)));
    } else if (k < 70) {
        r = rel(any, bin(sg_expr_mul, I(2), a), b);
    } else if (k < 78) {
        r = rel(any, bin(sg_expr_add, a, b), I(64));
    } else if (k < 85) {
        r = rel(any == SG_REL_EQ ? SG_REL_EQ : SG_REL_NE, bin(sg_expr_mod, a, I(4)), I(0));
    } else if (k < 91) {
        r = rel(any, bin(sg_expr_floordiv, a, I(2)), bin(sg_expr_sub, b, I(3)));
    } else if (k < 96) {
        r = rel(any, bin(sg_expr_mul, a, b), I(1 << 11));
    } else {
        r = rel(any, bin(max2, a, b), I(32));
    }
    const sg_expr *v = NULL, *t = NULL;
    if (sg_expr_eval(C, &v, r, ns, sym, vals))
        die("eval");
    if (sg_expr_op(v) == SG_OP_FALSE) {
        if (sg_expr_not(C, &t, r))
            die("not");
        r = t;
    }
    return r;
}

/* Slot symbols as v[i] in hand-written C (the callback of sg_print_with). */
typedef struct slot_names {
    const sg_expr **sym;
    size_t ns;
    char buf[32];
} slot_names;

static const char *slot_name(void *user, const sg_expr *e)
{
    slot_names *S = user;
    for (size_t i = 0; i < S->ns; i++)
        if (S->sym[i] == e) {
            snprintf(S->buf, sizeof S->buf, "v[%zu]", i);
            return S->buf;
        }
    return NULL;
}

/* The guards as a person writes them in C: int hand(const int64_t *v)
 * { return (G0) && (G1) && ...; } in plain int64 arithmetic (the C printer's
 * text with Python's // and % as sg_print_c_prelude's inline helpers), with
 * no overflow test: the floor, exact only while nothing overflows. */
static void write_hand(FILE *f, const sg_expr **g, size_t n, const sg_expr **sym, size_t ns)
{
    slot_names S = {sym, ns, {0}};
    fprintf(f, "\n%s\nint hand(const int64_t *v)\n{\n    return 1", sg_print_c_prelude());
    for (size_t k = 0; k < n; k++) {
        char *t = NULL;
        if (sg_print_with(C, &t, g[k], SG_FMT_C, slot_name, &S))
            die("print C");
        fprintf(f, "\n        && (%s)", t);
        sg_free(t);
    }
    fprintf(f, ";\n}\n");
}

static volatile long sink;

static double time_prog(const sg_guard_prog *p, const int64_t *v, size_t ns, long iters)
{
    double t0 = now();
    long acc = 0;
    for (long i = 0; i < iters; i++)
        acc += sg_guard_prog_check(p, v, ns, NULL);
    double t = now() - t0;
    sink += acc;
    return t / iters * 1e9;
}

static double time_c(int (*fn)(const int64_t *), const int64_t *v, long iters)
{
    double t0 = now();
    long acc = 0;
    for (long i = 0; i < iters; i++)
        acc += fn(v);
    double t = now() - t0;
    sink += acc;
    return t / iters * 1e9;
}

int main(int argc, char **argv)
{
    const char *sizes = "10,100,1000,4355", *work = "/tmp", *py = "python3", *cc = "cc";
    int rounds = 7;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-n"))
            sizes = argv[i + 1];
        else if (!strcmp(argv[i], "-s"))
            st = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-r"))
            rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-k"))
            work = argv[i + 1];
        else if (!strcmp(argv[i], "-p"))
            py = argv[i + 1];
        else if (!strcmp(argv[i], "-c"))
            cc = argv[i + 1];
    }
    if (sg_ctx_new(&C))
        return 2;
    int status = 0;
    printf("%6s %7s %9s %8s %8s %8s %9s %9s %6s %6s %7s %7s %9s %6s %8s %6s %5s %7s %9s %7s\n", "guards", "sources",
           "comp_us/g", "prog_ns", "c_ns", "hand_ns", "pt_ns", "py_ns", "prog/c", "prog/h", "pt/prog", "py/prog",
           "interp_ns", "int/c", "native_B", "insns", "regs", "batched", "fl_ns", "fl/prog");
    char *list = strdup(sizes);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        size_t n = (size_t)atol(tok), ns = n < 1000 ? n : 1000;
        const sg_expr **sym = malloc(ns * sizeof *sym), **vals = malloc(ns * sizeof *vals);
        const sg_expr **g = malloc(n * sizeof *g);
        int64_t *val = malloc(ns * sizeof *val);
        for (size_t i = 0; i < ns; i++) {
            char src[64];
            snprintf(src, sizeof src, "L['x%zu'].size()[%zu]", i / 3, i % 3);
            if (sg_expr_sym(C, &sym[i], src))
                die("sym");
            val[i] = 2 + (int64_t)(rnd() % 40);
            vals[i] = I(val[i]);
        }
        for (size_t k = 0; k < n; k++)
            g[k] = guard(sym, val, ns, vals);
        /* compile time: best of rounds */
        sg_guard_prog *p = NULL;
        double comp = 1e30;
        for (int r = 0; r < rounds; r++) {
            double t0 = now();
            if (sg_guard_prog_compile(C, &p, g, n, sym, ns))
                die("compile");
            double t = now() - t0;
            comp = t < comp ? t : comp;
            if (r + 1 < rounds)
                sg_guard_prog_free(p);
        }
        /* the C, compiled -O2 as a shared object */
        char *csrc = NULL, *pysrc = NULL, *ptsrc = NULL, *flsrc = NULL, path[1024], so[1024], cmd[4096];
        /* the flat lambda with a parameter per slot: "a0, a1, ..." */
        char **anames = malloc(ns * sizeof *anames), *params = malloc(ns * 8 + 1);
        if (!anames || !params)
            die("malloc");
        params[0] = 0;
        for (size_t i = 0, at = 0; i < ns; i++) {
            anames[i] = malloc(16);
            if (!anames[i])
                die("malloc");
            snprintf(anames[i], 16, "a%zu", i);
            at += (size_t)sprintf(params + at, "%s%s", i ? ", " : "", anames[i]);
        }
        if (sg_guard_prog_emit_c(C, &csrc, p, "guard") || sg_guard_prog_emit_python(C, &pysrc, p) ||
            sg_guard_prog_emit_python_with(C, &ptsrc, p, "L", NULL) ||
            sg_guard_prog_emit_python_with(C, &flsrc, p, params, (const char *const *)anames))
            die("emit");
        snprintf(path, sizeof path, "%s/bench_guard_%zu.c", work, n);
        snprintf(so, sizeof so, "%s/bench_guard_%zu.so", work, n);
        FILE *f = fopen(path, "w");
        if (!f)
            die("write C");
        fputs(csrc, f);
        write_hand(f, g, n, sym, ns);
        fclose(f);
        snprintf(cmd, sizeof cmd, "%s -O2 -shared -fPIC -o '%s' '%s'", cc, so, path);
        double tcc0 = now();
        if (system(cmd))
            die("cc");
        double tcc = now() - tcc0;
        void *h = dlopen(so, RTLD_NOW);
        int (*fn)(const int64_t *) = h ? (int (*)(const int64_t *))dlsym(h, "guard") : NULL;
        int (*hand)(const int64_t *) = h ? (int (*)(const int64_t *))dlsym(h, "hand") : NULL;
        if (!fn || !hand) {
            fprintf(stderr, "bench_guard: dlopen %s: %s\n", so, dlerror());
            return 2;
        }
        /* the same program interpreted (the portable path) */
        sg_guard_prog *pi = NULL;
        if (sg_guard_prog_compile_flags(C, &pi, g, n, sym, ns, SG_GUARD_INTERPRET))
            die("compile");
        if (fn(val) != 1 || hand(val) != 1 || sg_guard_prog_check(p, val, ns, NULL) != 1 ||
            sg_guard_prog_check(pi, val, ns, NULL) != 1) {
            fprintf(stderr, "bench_guard: the guards do not all hold at the input (C %d)\n", fn(val));
            status = 1;
        }
        long iters = (long)(2e7 / (double)(n + 10));
        double tp = 1e30, tc = 1e30, ti = 1e30, th = 1e30;
        for (int r = 0; r < rounds; r++) {
            double a = time_prog(p, val, ns, iters), b = time_c(fn, val, iters), c = time_prog(pi, val, ns, iters);
            double d = time_c(hand, val, iters);
            tp = a < tp ? a : tp;
            tc = b < tc ? b : tc;
            ti = c < ti ? c : ti;
            th = d < th ? d : th;
        }
        /* the Python lambdas, timeit on the same input: PyTorch's over L, where
         * L['xT'] has size() returning the tuple of its sizes, and the one over v */
        snprintf(path, sizeof path, "%s/bench_guard_%zu.py", work, n);
        f = fopen(path, "w");
        if (!f)
            die("write py");
        fprintf(f, "import itertools, timeit, types\ng = %s\nf = %s\nh = %s\nv = [", ptsrc, pysrc, flsrc);
        for (size_t i = 0; i < ns; i++)
            fprintf(f, "%s%" PRId64, i ? ", " : "", val[i]);
        fprintf(f, "]\nL = {}\n");
        for (size_t i = 0; i < ns; i += 3) {
            fprintf(f, "L['x%zu'] = types.SimpleNamespace(size=itertools.repeat((", i / 3);
            for (size_t d = i; d < ns && d < i + 3; d++)
                fprintf(f, "%" PRId64 ", ", val[d]);
            fprintf(f, ")).__next__)\n");
        }
        fprintf(f, "assert g(L) and f(v) and h(*v)\nnum = max(1, int(%ld / 20))\n"
                   "print(min(timeit.repeat(lambda: g(L), number=num, repeat=%d)) / num * 1e9)\n"
                   "print(min(timeit.repeat(lambda: f(v), number=num, repeat=%d)) / num * 1e9)\n"
                   "print(min(timeit.repeat(lambda: h(*v), number=num, repeat=%d)) / num * 1e9)\n",
                iters, rounds, rounds, rounds);
        fclose(f);
        snprintf(cmd, sizeof cmd, "%s '%s'", py, path);
        FILE *pp = popen(cmd, "r");
        double tpt = -1, tpy = -1, tfl = -1;
        if (!pp || fscanf(pp, "%lf %lf %lf", &tpt, &tpy, &tfl) != 3)
            tpt = tpy = tfl = -1;
        if (pp)
            pclose(pp);
        size_t ninsns = 0, nregs = 0, nb = 0;
        sg_guard_prog_stats(p, &ninsns, &nregs, &nb, NULL);
        printf("%6zu %7zu %9.3f %8.1f %8.1f %8.1f %9.1f %9.1f %6.2f %6.2f %7.1f %7.1f %9.1f %6.2f %8zu %6zu %5zu "
               "%7zu %9.1f %7.1f\n",
               n, ns, comp * 1e6 / (double)n, tp, tc, th, tpt, tpy, tp / tc, tp / th, tpt / tp, tpy / tp, ti, ti / tc,
               sg_guard_prog_native_size(p), ninsns, nregs, nb, tfl, tfl / tp);
        fprintf(stderr, "  (%zu guards: cc -O2 took %.2f s)\n", n, tcc);
        fflush(stdout);
        dlclose(h);
        sg_free(csrc);
        sg_free(pysrc);
        sg_free(ptsrc);
        sg_free(flsrc);
        for (size_t i = 0; i < ns; i++)
            free(anames[i]);
        free(anames);
        free(params);
        sg_guard_prog_free(p);
        sg_guard_prog_free(pi);
        free(sym);
        free(vals);
        free(g);
        free(val);
    }
    free(list);
    sg_ctx_free(C);
    return status;
}
