/* Scaffolding shared by the benchmark programs bench_expr, bench_reason and
 * bench_reason_z3 (tests/bench): error reporting, allocation, the clock,
 * statistics over timings and the pieces of the reasoning corpus reader
 * (tests/bench/reason_corpus.py's tab-separated records) that both
 * reasoning sides use. Plain C (gnu11) and the C library only: it includes
 * no shapeguard header, so that bench_reason_z3, which links libz3 alone,
 * can use it too.
 *
 * Each program includes it once, after
 *
 *     #define _POSIX_C_SOURCE 200809L     (getline, clock_gettime)
 *     #define BENCH_NAME "bench_xxx"      (the prefix of the messages)
 *
 * and may define BENCH_CHECK_REPORT_MAX N to print only the first N failed
 * checks (all are counted). Everything here is static: each program gets
 * its own copy of what it uses.
 */
#ifndef SG_BENCH_UTIL_H
#define SG_BENCH_UTIL_H

#ifndef BENCH_NAME
#error "define BENCH_NAME (the program name for messages) before including bench_util.h"
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- errors ---------------------------------------------------------------- */

/* Failed checks so far (check_fail); the exit status is 1 when nonzero. */
static int bench_errors;

/* "BENCH_NAME: " what, the message and a newline, on stderr. */
static inline void bench_vreport(const char *what, const char *fmt, va_list ap)
{
    fprintf(stderr, BENCH_NAME ": %s", what);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

/* "BENCH_NAME: message" on stderr, then exit status 2. */
static inline _Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline _Noreturn void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bench_vreport("", fmt, ap);
    va_end(ap);
    exit(2);
}

/* "BENCH_NAME: check failed: message" on stderr; counts it in bench_errors
 * (past BENCH_CHECK_REPORT_MAX failures, if defined, only counts it). */
static inline void check_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void check_fail(const char *fmt, ...)
{
#ifdef BENCH_CHECK_REPORT_MAX
    if (bench_errors++ >= BENCH_CHECK_REPORT_MAX)
        return;
#else
    bench_errors++;
#endif
    va_list ap;
    va_start(ap, fmt);
    bench_vreport("check failed: ", fmt, ap);
    va_end(ap);
}

/* ---- memory ---------------------------------------------------------------- */

static inline void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory");
    return p;
}

static inline char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

/* ---- the clock and statistics ---------------------------------------------- */

/* CLOCK_MONOTONIC in nanoseconds. */
static inline double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n), n > 0 (sorts v in place; the mean of the two middle
 * values when n is even). */
static inline double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Order statistics of v[0..n) (sorts a copy); all 0 when n is 0. p90 is the
 * element at index floor((n - 1) * 0.9) of the sorted values. */
typedef struct {
    double median, mean, p90, max;
    size_t n;
} stats;

static inline stats stats_of(const double *v, size_t n)
{
    stats s = {0, 0, 0, 0, n};
    if (!n)
        return s;
    double *t = xmalloc(n * sizeof *t);
    memcpy(t, v, n * sizeof *t);
    qsort(t, n, sizeof *t, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += t[i];
    s.median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
    s.mean = sum / (double)n;
    s.p90 = t[(size_t)((double)(n - 1) * 0.9)];
    s.max = t[n - 1];
    free(t);
    return s;
}

/* ---- the reasoning corpus (tests/bench/reason_corpus.py) ------------------- */

/* Split line (modified in place, the line end dropped) at tabs into at most
 * max fields; returns how many. */
static inline size_t split_tabs(char *line, char **f, size_t max)
{
    size_t n = 0;
    char *p = line;
    size_t len = strlen(p);
    while (len && (p[len - 1] == '\n' || p[len - 1] == '\r'))
        p[--len] = '\0';
    while (n < max) {
        f[n++] = p;
        char *t = strchr(p, '\t');
        if (!t)
            break;
        *t = '\0';
        p = t + 1;
    }
    return n;
}

/* The value of a header field "key=N". strict: N must be a whole unsigned
 * number (else die); otherwise whatever strtoul makes of it. */
static inline size_t header_field(const char *s, const char *key, int strict)
{
    size_t k = strlen(key);
    if (strncmp(s, key, k) || s[k] != '=')
        die("bad header field %s (expected %s=)", s, key);
    if (!strict)
        return (size_t)strtoul(s + k + 1, NULL, 10);
    char *end;
    errno = 0;
    unsigned long v = strtoul(s + k + 1, &end, 10);
    if (errno || *end)
        die("bad header field %s", s);
    return (size_t)v;
}

/* The fields of a header record "header seed=S syms=V facts=F queries=Q"
 * (n fields in f). strict: every number checked (header_field), the seed
 * too; otherwise the seed is not read (left 0). */
typedef struct {
    size_t seed, nsyms, nfacts, nqueries;
} corpus_header;

static inline corpus_header parse_header(char **f, size_t n, int strict)
{
    corpus_header h = {0, 0, 0, 0};
    if (n != 5)
        die("bad header line");
    if (strict)
        h.seed = header_field(f[1], "seed", strict);
    h.nsyms = header_field(f[2], "syms", strict);
    h.nfacts = header_field(f[3], "facts", strict);
    h.nqueries = header_field(f[4], "queries", strict);
    return h;
}

/* The values of a model record: n integers separated by spaces. */
static inline void parse_model(const char *text, int64_t *model, size_t n)
{
    const char *p = text;
    for (size_t i = 0; i < n; i++) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno)
            die("bad model value %zu", i);
        model[i] = v;
        p = end;
    }
}

/* The records of a corpus file, one at a time: comment ('#') and empty
 * lines skipped, the others split at tabs into f[0..n). */
typedef struct {
    FILE *fp;
    char *line;
    size_t cap;
    char *f[8];
    size_t n;
} corpus_reader;

static inline void corpus_open(corpus_reader *r, const char *path)
{
    r->fp = fopen(path, "r");
    if (!r->fp)
        die("cannot open %s", path);
    r->line = NULL;
    r->cap = 0;
    r->n = 0;
}

/* The next record into r->f and r->n; 0 at the end of the file. */
static inline int corpus_next(corpus_reader *r)
{
    while (getline(&r->line, &r->cap, r->fp) > 0) {
        if (r->line[0] == '#' || r->line[0] == '\n')
            continue;
        r->n = split_tabs(r->line, r->f, 8);
        return 1;
    }
    return 0;
}

static inline void corpus_close(corpus_reader *r)
{
    free(r->line);
    fclose(r->fp);
}

/* FNV-1a (64 bits) of the corpus file, so that the report can tell that
 * both sides read the corpus it reads. */
static inline uint64_t file_hash(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        die("cannot open %s", path);
    uint64_t h = 14695981039346656037ull;
    int ch;
    while ((ch = getc(fp)) != EOF)
        h = (h ^ (uint64_t)(unsigned char)ch) * 1099511628211ull;
    fclose(fp);
    return h;
}

#endif
