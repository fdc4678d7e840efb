/* Expression building benchmark (issue 2): shapeguard side.
 *
 * Reads a corpus written by tests/bench/corpus.py (the same file the sympy
 * side, bench_expr_sympy.py, reads), builds every expression through the
 * public constructors by running its postfix program, and reports:
 *
 *   cold   a fresh context, each distinct expression built once, in order;
 *   warm   then, in that context, the whole query stream (repeats included);
 *   memory interned nodes, arena and intern-table bytes after the cold pass.
 *
 * Symbols are created before the clock starts (a front end creates a symbol
 * once per input size); integer constants are built inside the timed region,
 * as every operation is. Each pass runs RUNS times (each in a fresh
 * context); the median and the best are printed, with CLOCK_MONOTONIC.
 *
 * Checks (outside the timed regions; any failure makes the exit status 1):
 *   every expression evaluates, at each check point of the corpus, to the
 *   value the generator computed with Python semantics;
 *   building an expression again gives the same pointer, and the warm stream
 *   creates no new node.
 *
 * Output: "key value" lines (read by run.sh), then nothing else on stdout.
 * Usage: bench_expr CORPUS [RUNS]
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shapeguard.h>

#define BENCH_NAME "bench_expr"
#define BENCH_CHECK_REPORT_MAX 10 /* failed checks printed (all are counted) */
#include "bench_util.h"

enum { OP_SYM, OP_INT, OP_ADD, OP_MUL, OP_FLOORDIV, OP_MOD, OP_MAX };

typedef struct {
    int32_t op;
    int32_t arg; /* symbol index, constant, or arity of max */
} insn;

/* Categories for the breakdown: the outermost special operation an
 * expression contains (Max before FloorDiv before Mod), else a plain sum. */
enum { CAT_SUM, CAT_FLOORDIV, CAT_MOD, CAT_MAX, NCAT };
static const char *const cat_name[NCAT] = {"sum", "floordiv", "mod", "max"};

typedef struct {
    size_t start, len; /* slice of the instruction array */
    int64_t *want;     /* value at each check point */
    int cat;
} program;

typedef struct {
    size_t nsyms, npoints, nexpr, nstream;
    int64_t *points; /* npoints * nsyms */
    program *exprs;
    insn *code;
    size_t ncode, capcode;
    uint32_t *stream;
} corpus;

static void push_insn(corpus *c, int op, long arg)
{
    if (c->ncode == c->capcode) {
        c->capcode = c->capcode ? 2 * c->capcode : 4096;
        c->code = realloc(c->code, c->capcode * sizeof *c->code);
        if (!c->code)
            die("out of memory");
    }
    c->code[c->ncode].op = op;
    c->code[c->ncode].arg = (int32_t)arg;
    c->ncode++;
}

static long parse_long(char **p, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(*p, &end, 10);
    if (end == *p || errno)
        die("bad number for %s", what);
    *p = end;
    return v;
}

static char *next_tok(char **p)
{
    char *s = *p;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    if (!*s)
        return NULL;
    char *t = s;
    while (*s && *s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
        s++;
    if (*s)
        *s++ = '\0';
    *p = s;
    return t;
}

static void load(corpus *c, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("cannot open %s", path);
    memset(c, 0, sizeof *c);
    char *line = NULL;
    size_t cap = 0;
    size_t npts = 0, nexp = 0, nstr = 0;
    int in_stream = 0;
    while (getline(&line, &cap, f) > 0) {
        char *p = line;
        if (in_stream) {
            char *t;
            while ((t = next_tok(&p)) != NULL) {
                if (nstr == c->nstream)
                    die("stream longer than announced");
                char *q = t;
                long v = parse_long(&q, "stream");
                if (v < 0 || (size_t)v >= c->nexpr)
                    die("stream index out of range");
                c->stream[nstr++] = (uint32_t)v;
            }
            continue;
        }
        char *kw = next_tok(&p);
        if (!kw || kw[0] == '#')
            continue;
        if (!strcmp(kw, "corpus")) {
            char *t;
            while ((t = next_tok(&p)) != NULL) {
                char *eq = strchr(t, '=');
                if (!eq)
                    continue;
                *eq++ = '\0';
                char *q = eq;
                long v = parse_long(&q, t);
                if (!strcmp(t, "syms"))
                    c->nsyms = (size_t)v;
                else if (!strcmp(t, "distinct"))
                    c->nexpr = (size_t)v;
            }
            if (!c->nsyms || !c->nexpr)
                die("corpus header lacks syms= or distinct=");
            c->exprs = xmalloc(c->nexpr * sizeof *c->exprs);
            c->points = xmalloc(8 * c->nsyms * sizeof *c->points);
        } else if (!strcmp(kw, "point")) {
            if (!c->exprs)
                die("point before the corpus header");
            if (npts == 8)
                die("more than 8 check points");
            parse_long(&p, "point");
            for (size_t i = 0; i < c->nsyms; i++)
                c->points[npts * c->nsyms + i] = parse_long(&p, "point value");
            npts++;
            c->npoints = npts;
        } else if (!strcmp(kw, "expr")) {
            if (!c->exprs || nexp == c->nexpr)
                die("unexpected expr line");
            if ((size_t)parse_long(&p, "expr index") != nexp)
                die("expr lines out of order");
            program *pr = &c->exprs[nexp];
            pr->want = xmalloc(c->npoints * sizeof *pr->want);
            for (size_t j = 0; j < c->npoints; j++)
                pr->want[j] = parse_long(&p, "expected value");
            char *t = next_tok(&p);
            if (!t || strcmp(t, ":"))
                die("expected ':' in an expr line");
            pr->start = c->ncode;
            long depth = 0;
            while ((t = next_tok(&p)) != NULL) {
                if (!strcmp(t, "sym")) {
                    long s = parse_long(&p, "sym");
                    if (s < 0 || (size_t)s >= c->nsyms)
                        die("symbol index out of range");
                    push_insn(c, OP_SYM, s), depth++;
                } else if (!strcmp(t, "int")) {
                    push_insn(c, OP_INT, parse_long(&p, "int")), depth++;
                } else if (!strcmp(t, "add")) {
                    push_insn(c, OP_ADD, 0), depth--;
                } else if (!strcmp(t, "mul")) {
                    push_insn(c, OP_MUL, 0), depth--;
                } else if (!strcmp(t, "floordiv")) {
                    push_insn(c, OP_FLOORDIV, 0), depth--;
                } else if (!strcmp(t, "mod")) {
                    push_insn(c, OP_MOD, 0), depth--;
                } else if (!strcmp(t, "max")) {
                    long n = parse_long(&p, "max");
                    if (n < 1 || n > 64)
                        die("bad arity of max");
                    push_insn(c, OP_MAX, n), depth -= n - 1;
                } else {
                    die("unknown token %s", t);
                }
                if (depth < 1 || depth > 64)
                    die("program under- or overflows the stack");
            }
            if (depth != 1)
                die("program does not leave one value");
            pr->len = c->ncode - pr->start;
            int has[OP_MAX + 1] = {0};
            for (size_t k = pr->start; k < c->ncode; k++)
                has[c->code[k].op] = 1;
            pr->cat = has[OP_MAX] ? CAT_MAX : has[OP_FLOORDIV] ? CAT_FLOORDIV : has[OP_MOD] ? CAT_MOD : CAT_SUM;
            nexp++;
        } else if (!strcmp(kw, "stream")) {
            if (nexp != c->nexpr)
                die("fewer expr lines than announced");
            char *q = p;
            long n = parse_long(&q, "stream length");
            if (n < 0)
                die("bad stream length");
            c->nstream = (size_t)n;
            c->stream = xmalloc(c->nstream * sizeof *c->stream);
            in_stream = 1;
        } else {
            die("unknown record %s", kw);
        }
    }
    free(line);
    fclose(f);
    if (!in_stream || nstr != c->nstream)
        die("missing or short stream");
}

/* ---- building ------------------------------------------------------------ */

static void fail(sg_ctx *ctx, sg_status s, const char *what)
{
    fprintf(stderr, "bench_expr: %s failed: %s (%s)\n", what, sg_status_kind(s), sg_ctx_last_error_msg(ctx));
    exit(1);
}

#define CHECK(call, what)                                                                                    \
    do {                                                                                                     \
        sg_status st_ = (call);                                                                              \
        if (st_ != SG_OK)                                                                                    \
            fail(ctx, st_, what);                                                                            \
    } while (0)

/* Run one postfix program. */
static const sg_expr *build(sg_ctx *ctx, const sg_expr *const *syms, const insn *code, size_t len)
{
    const sg_expr *stack[64];
    size_t sp = 0;
    for (size_t i = 0; i < len; i++) {
        const insn *in = &code[i];
        const sg_expr *r;
        switch (in->op) {
        case OP_SYM:
            stack[sp++] = syms[in->arg];
            continue;
        case OP_INT:
            CHECK(sg_expr_int(ctx, &r, in->arg), "int");
            stack[sp++] = r;
            continue;
        case OP_ADD:
            CHECK(sg_expr_add(ctx, &r, stack[sp - 2], stack[sp - 1]), "add");
            break;
        case OP_MUL:
            CHECK(sg_expr_mul(ctx, &r, stack[sp - 2], stack[sp - 1]), "mul");
            break;
        case OP_FLOORDIV:
            CHECK(sg_expr_floordiv(ctx, &r, stack[sp - 2], stack[sp - 1]), "floordiv");
            break;
        case OP_MOD:
            CHECK(sg_expr_mod(ctx, &r, stack[sp - 2], stack[sp - 1]), "mod");
            break;
        default: /* OP_MAX */
            CHECK(sg_expr_max(ctx, &r, (size_t)in->arg, stack + sp - in->arg), "max");
            sp -= (size_t)in->arg;
            stack[sp++] = r;
            continue;
        }
        sp -= 2;
        stack[sp++] = r;
    }
    return stack[0];
}

static sg_ctx *new_ctx(const corpus *c, const sg_expr **syms)
{
    sg_ctx *ctx;
    if (sg_ctx_new(&ctx) != SG_OK)
        die("sg_ctx_new failed");
    for (size_t i = 0; i < c->nsyms; i++) {
        char name[32];
        snprintf(name, sizeof name, "s%zu", i);
        CHECK(sg_expr_sym(ctx, &syms[i], name), "sym");
    }
    return ctx;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: bench_expr CORPUS [RUNS]\n");
        return 2;
    }
    int runs = argc == 3 ? atoi(argv[2]) : 7;
    if (runs < 1)
        runs = 1;
    corpus c;
    load(&c, argv[1]);

    const sg_expr **syms = xmalloc(c.nsyms * sizeof *syms);
    const sg_expr **first = xmalloc(c.nexpr * sizeof *first);
    const sg_expr **res = xmalloc(c.nstream * sizeof *res);
    double *cold = xmalloc(runs * sizeof *cold), *warm = xmalloc(runs * sizeof *warm);
    double *ctxt = xmalloc(runs * sizeof *ctxt);
    size_t nodes0 = 0, nodes = 0, arena = 0, table = 0, nodes_after = 0, nodes_syms = 0;
    size_t distinct_forms = 0;
    /* breakdown by category: ns per item of each run, and item counts */
    double *catt[2][NCAT];
    size_t catn[2][NCAT] = {{0}};
    for (int w = 0; w < 2; w++)
        for (int k = 0; k < NCAT; k++)
            catt[w][k] = xmalloc(runs * sizeof(double));
    for (size_t i = 0; i < c.nexpr; i++)
        catn[0][c.exprs[i].cat]++;
    for (size_t q = 0; q < c.nstream; q++)
        catn[1][c.exprs[c.stream[q]].cat]++;

    for (int run = 0; run < runs; run++) {
        double t0 = now_ns();
        sg_ctx *ctx = new_ctx(&c, syms);
        double t1 = now_ns();
        ctxt[run] = t1 - t0;
        size_t n_before;
        sg_ctx_stats(ctx, &n_before, NULL, NULL);

        /* cold: each distinct expression once */
        t0 = now_ns();
        for (size_t i = 0; i < c.nexpr; i++)
            first[i] = build(ctx, syms, c.code + c.exprs[i].start, c.exprs[i].len);
        t1 = now_ns();
        cold[run] = (t1 - t0) / (double)c.nexpr;

        size_t n_cold;
        sg_ctx_stats(ctx, &n_cold, NULL, NULL);

        /* warm: the stream, repeats included */
        t0 = now_ns();
        for (size_t q = 0; q < c.nstream; q++) {
            const program *pr = &c.exprs[c.stream[q]];
            res[q] = build(ctx, syms, c.code + pr->start, pr->len);
        }
        t1 = now_ns();
        warm[run] = c.nstream ? (t1 - t0) / (double)c.nstream : 0;

        /* checks, outside the clock */
        for (size_t q = 0; q < c.nstream; q++)
            if (res[q] != first[c.stream[q]])
                check_fail("query %zu (expr %u) gave another pointer", q, (unsigned)c.stream[q]);
        size_t n_warm;
        sg_ctx_stats(ctx, &n_warm, NULL, NULL);
        if (n_warm != n_cold)
            check_fail("the warm stream created new nodes (%zu -> %zu)", n_cold, n_warm);

        if (run == 0) {
            /* memory: a separate fresh context holding exactly the cold pass */
            const sg_expr **s2 = xmalloc(c.nsyms * sizeof *s2);
            sg_ctx *m = new_ctx(&c, s2);
            sg_ctx_stats(m, &nodes0, NULL, NULL);
            nodes_syms = nodes0;
            for (size_t i = 0; i < c.nexpr; i++)
                (void)build(m, s2, c.code + c.exprs[i].start, c.exprs[i].len);
            sg_ctx_stats(m, &nodes, &arena, &table);
            /* again: the same pointers, no new node */
            for (size_t i = 0; i < c.nexpr; i++) {
                const sg_expr *a = build(m, s2, c.code + c.exprs[i].start, c.exprs[i].len);
                const sg_expr *b = build(m, s2, c.code + c.exprs[i].start, c.exprs[i].len);
                if (a != b)
                    check_fail("expr %zu built twice gave two pointers", i);
            }
            sg_ctx_stats(m, &nodes_after, NULL, NULL);
            if (nodes_after != nodes)
                check_fail("rebuilding created new nodes (%zu -> %zu)", nodes, nodes_after);
            sg_ctx_free(m);
            free(s2);

            /* values at the check points */
            const sg_expr **vals = xmalloc(c.nsyms * sizeof *vals);
            for (size_t j = 0; j < c.npoints; j++) {
                for (size_t k = 0; k < c.nsyms; k++)
                    CHECK(sg_expr_int(ctx, &vals[k], c.points[j * c.nsyms + k]), "int");
                for (size_t i = 0; i < c.nexpr; i++) {
                    const sg_expr *v;
                    int64_t got;
                    sg_status st = sg_expr_eval(ctx, &v, first[i], c.nsyms, syms, vals);
                    if (st != SG_OK || !sg_expr_get_si(v, &got))
                        check_fail("expr %zu: evaluation failed at point %zu: %s", i, j, sg_ctx_last_error_msg(ctx));
                    else if (got != c.exprs[i].want[j])
                        check_fail("expr %zu: value %lld, expected %lld", i, (long long)got,
                                   (long long)c.exprs[i].want[j]);
                }
            }
            free(vals);
            /* distinct canonical forms among the distinct programs */
            const sg_expr **sorted = xmalloc(c.nexpr * sizeof *sorted);
            memcpy(sorted, first, c.nexpr * sizeof *sorted);
            for (size_t i = 1; i < c.nexpr; i++) { /* insertion sort by id */
                const sg_expr *x = sorted[i];
                size_t k = i;
                while (k > 0 && sg_expr_id(sorted[k - 1]) > sg_expr_id(x)) {
                    sorted[k] = sorted[k - 1];
                    k--;
                }
                sorted[k] = x;
            }
            for (size_t i = 0; i < c.nexpr; i++)
                distinct_forms += i == 0 || sorted[i] != sorted[i - 1];
            free(sorted);
        }
        sg_ctx_free(ctx);

        /* The breakdown: the same two passes in a fresh context, each item
         * timed alone (reading the clock adds about 20 ns per item). */
        ctx = new_ctx(&c, syms);
        double sum[NCAT] = {0};
        for (size_t i = 0; i < c.nexpr; i++) {
            t0 = now_ns();
            (void)build(ctx, syms, c.code + c.exprs[i].start, c.exprs[i].len);
            sum[c.exprs[i].cat] += now_ns() - t0;
        }
        for (int k = 0; k < NCAT; k++) {
            catt[0][k][run] = catn[0][k] ? sum[k] / (double)catn[0][k] : 0;
            sum[k] = 0;
        }
        for (size_t q = 0; q < c.nstream; q++) {
            const program *pr = &c.exprs[c.stream[q]];
            t0 = now_ns();
            (void)build(ctx, syms, c.code + pr->start, pr->len);
            sum[pr->cat] += now_ns() - t0;
        }
        for (int k = 0; k < NCAT; k++)
            catt[1][k][run] = catn[1][k] ? sum[k] / (double)catn[1][k] : 0;
        sg_ctx_free(ctx);
    }

    double cold_best = cold[0], warm_best = warm[0];
    for (int r = 1; r < runs; r++) {
        if (cold[r] < cold_best)
            cold_best = cold[r];
        if (warm[r] < warm_best)
            warm_best = warm[r];
    }
    size_t built = nodes - nodes_syms;
    printf("engine shapeguard %s\n", SG_VERSION_STRING);
    printf("runs %d\n", runs);
    printf("distinct %zu\n", c.nexpr);
    printf("distinct_forms %zu\n", distinct_forms);
    printf("stream %zu\n", c.nstream);
    printf("ctx_new_us %.1f\n", median(ctxt, (size_t)runs) / 1e3);
    printf("cold_ns_median %.1f\n", median(cold, (size_t)runs));
    printf("cold_ns_best %.1f\n", cold_best);
    printf("warm_ns_median %.1f\n", median(warm, (size_t)runs));
    printf("warm_ns_best %.1f\n", warm_best);
    for (int w = 0; w < 2; w++)
        for (int k = 0; k < NCAT; k++) {
            printf("%s_n_%s %zu\n", w ? "warm" : "cold", cat_name[k], catn[w][k]);
            printf("%s_ns_%s %.1f\n", w ? "warm" : "cold", cat_name[k], median(catt[w][k], (size_t)runs));
            free(catt[w][k]);
        }
    printf("nodes_initial %zu\n", nodes_syms);
    printf("nodes %zu\n", nodes);
    printf("nodes_per_expr %.2f\n", (double)built / (double)c.nexpr);
    printf("arena_bytes %zu\n", arena);
    printf("table_bytes %zu\n", table);
    printf("arena_per_node %.1f\n", (double)arena / (double)nodes);
    printf("total_per_node %.1f\n", (double)(arena + table) / (double)nodes);
    printf("checks %s\n", bench_errors ? "FAILED" : "ok");
    if (bench_errors)
        fprintf(stderr, "bench_expr: %d check(s) failed\n", bench_errors);
    for (size_t i = 0; i < c.nexpr; i++)
        free(c.exprs[i].want);
    free(c.exprs);
    free(c.code);
    free(c.points);
    free(c.stream);
    free(syms);
    free(first);
    free(res);
    free(cold);
    free(warm);
    free(ctxt);
    return bench_errors ? 1 : 0;
}
