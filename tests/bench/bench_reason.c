/* Reasoning benchmark (issue 3): shapeguard side.
 *
 * Reads a corpus written by tests/bench/reason_corpus.py (the file the Z3
 * side, bench_reason_z3, reads too): facts and queries in the battery
 * expression syntax, and a model (a value per symbol) at which every fact
 * holds. Each run, in a fresh context:
 *
 *   parse    the facts (timed as a whole), then the queries (timed as a whole);
 *   setup    sg_facts_new and sg_facts_assume of every fact (timed as a whole);
 *   cold     sg_facts_known of each query in corpus order, the first time it
 *            is asked of this fact base (each call timed alone);
 *   warm     every query asked again (the fact base caches the answers it
 *            proved; "unknown" is not cached and is worked out again);
 *   isolated each query asked of its own fresh copy of the fact base as it
 *            was after the setup, so no answer or range computed for an
 *            earlier query helps (only the known call is timed; the copy,
 *            which derives the facts again, is timed apart).
 *
 * Per pass and run: the median, mean, 90th percentile and maximum of the
 * per-query times, and per answer (true, false, unknown) of the cold pass.
 * Printed: the median over the runs of each. CLOCK_MONOTONIC; reading the
 * clock adds about 20-30 ns to each timed call.
 *
 * Checks (outside the clock; a failure makes the exit status 1): every fact
 * and query parses, every fact is accepted without contradiction, every fact
 * evaluates to true at the model and every query to the value the generator
 * computed; the answers are the same in every run and in the warm pass as in
 * the cold pass. (The isolated pass may answer otherwise only where the
 * cached ranges of earlier questions helped: counted, not a failure.)
 *
 * Output on stdout: "key value" lines, then "answer INDEX true|false|unknown"
 * per query (the cold answers), read by reason_corpus.py --report.
 * Usage: bench_reason CORPUS [RUNS [BUDGET]]   (BUDGET: sg_facts_set_budget; 0, the
 * default, keeps the library's default)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shapeguard.h>

#define BENCH_NAME "bench_reason"
#include "bench_util.h"

typedef struct {
    char *kind;
    char *text; /* battery syntax */
    int model;  /* queries: the value at the model (0 or 1) */
} item;

typedef struct {
    unsigned long seed;
    size_t nsyms, nfacts, nqueries;
    int64_t *model;
    item *facts, *queries;
} corpus;

static void load(corpus *c, const char *path)
{
    corpus_reader r;
    corpus_open(&r, path);
    memset(c, 0, sizeof *c);
    size_t nf = 0, nq = 0;
    int have_model = 0;
    while (corpus_next(&r)) {
        char **f = r.f;
        size_t n = r.n;
        if (!strcmp(f[0], "header")) {
            corpus_header h = parse_header(f, n, 1);
            c->seed = h.seed;
            c->nsyms = h.nsyms, c->nfacts = h.nfacts, c->nqueries = h.nqueries;
            c->model = xmalloc(c->nsyms * sizeof *c->model);
            c->facts = xmalloc(c->nfacts * sizeof *c->facts);
            c->queries = xmalloc(c->nqueries * sizeof *c->queries);
        } else if (!strcmp(f[0], "model")) {
            if (!c->model || n != 2)
                die("bad model line");
            parse_model(f[1], c->model, c->nsyms);
            have_model = 1;
        } else if (!strcmp(f[0], "fact")) {
            if (!c->facts || n != 5 || nf == c->nfacts || strtoul(f[1], NULL, 10) != nf)
                die("bad or unexpected fact line %zu", nf);
            c->facts[nf].kind = xstrdup(f[2]);
            c->facts[nf].text = xstrdup(f[3]);
            c->facts[nf].model = 1;
            nf++;
        } else if (!strcmp(f[0], "query")) {
            if (!c->queries || n != 6 || nq == c->nqueries || strtoul(f[1], NULL, 10) != nq)
                die("bad or unexpected query line %zu", nq);
            c->queries[nq].kind = xstrdup(f[2]);
            c->queries[nq].model = f[3][0] == '1';
            c->queries[nq].text = xstrdup(f[4]);
            nq++;
        } else {
            die("unknown record %s", f[0]);
        }
    }
    corpus_close(&r);
    if (!have_model || nf != c->nfacts || nq != c->nqueries)
        die("incomplete corpus (model, %zu/%zu facts, %zu/%zu queries)", nf, c->nfacts, nq, c->nqueries);
}

static const char *truth_name(sg_truth t)
{
    return t == SG_TRUE ? "true" : t == SG_FALSE ? "false" : "unknown";
}

/* Per-run figures, a median over the runs printed for each. */
enum {
    F_CTX, F_PARSE_FACTS, F_SETUP, F_PARSE_QUERY, F_COPY,
    F_COLD_MED, F_COLD_MEAN, F_COLD_P90, F_COLD_MAX,
    F_WARM_MED, F_WARM_MEAN, F_WARM_P90, F_WARM_MAX,
    F_ISO_MED, F_ISO_MEAN, F_ISO_P90, F_ISO_MAX,
    F_CLS_MED, /* + 3: true, false, unknown */
    F_CLS_MEAN = F_CLS_MED + 3,
    NF = F_CLS_MEAN + 3
};
static const char *const fig_name[NF] = {
    "ctx_ns", "parse_facts_ns", "setup_ns", "parse_query_ns", "copy_ns",
    "cold_ns_median", "cold_ns_mean", "cold_ns_p90", "cold_ns_max",
    "warm_ns_median", "warm_ns_mean", "warm_ns_p90", "warm_ns_max",
    "iso_ns_median", "iso_ns_mean", "iso_ns_p90", "iso_ns_max",
    "cold_ns_median_true", "cold_ns_median_false", "cold_ns_median_unknown",
    "cold_ns_mean_true", "cold_ns_mean_false", "cold_ns_mean_unknown",
};

/* The query of each pass in a function of its own (never inlined), so that
 * callgrind's inclusive counts of cold_known and iso_known are the
 * instructions of the cold and isolated queries alone, a measure the
 * machine's load does not move (bench_reason_z3's z3_query is Z3's). */
#if defined(__GNUC__) && !defined(__clang__)
#define NOINLINE __attribute__((noipa)) /* noinline, and not folded with its twin (GCC's -fipa-icf) */
#elif defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif
static NOINLINE sg_status cold_known(sg_facts *f, sg_truth *t, const sg_expr *q)
{
    return sg_facts_known(f, t, q);
}

static NOINLINE sg_status iso_known(sg_facts *f, sg_truth *t, const sg_expr *q)
{
    return sg_facts_known(f, t, q);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: bench_reason CORPUS [RUNS [BUDGET]]\n");
        return 2;
    }
    int runs = argc >= 3 ? atoi(argv[2]) : 5;
    size_t budget = argc >= 4 ? (size_t)strtoull(argv[3], NULL, 10) : 0;
    if (runs < 1 || runs > 1000)
        die("RUNS must be 1..1000");
    corpus c;
    load(&c, argv[1]);
    size_t nq = c.nqueries, nfa = c.nfacts;

    double *fig[NF];
    for (int k = 0; k < NF; k++)
        fig[k] = xmalloc((size_t)runs * sizeof(double));
    double *tcold = xmalloc(nq * sizeof *tcold), *twarm = xmalloc(nq * sizeof *twarm),
           *tiso = xmalloc(nq * sizeof *tiso), *tcls = xmalloc(nq * sizeof *tcls);
    sg_truth *ans0 = xmalloc(nq * sizeof *ans0), *ans = xmalloc(nq * sizeof *ans),
             *answ = xmalloc(nq * sizeof *answ), *ansi = xmalloc(nq * sizeof *ansi);
    const sg_expr **fe = xmalloc(nfa * sizeof *fe), **qe = xmalloc(nq * sizeof *qe);
    size_t n_cls[3] = {0, 0, 0}, iso_differs = 0, model_mismatch = 0, const_forms = 0, dup_forms = 0, nodes_facts = 0, nodes_all = 0;

    for (int run = 0; run < runs; run++) {
        sg_ctx *ctx;
        sg_facts *f, *pristine;
        double t0 = now_ns();
        if (sg_ctx_new(&ctx) != SG_OK)
            die("sg_ctx_new failed");
        fig[F_CTX][run] = now_ns() - t0;

        t0 = now_ns();
        for (size_t i = 0; i < nfa; i++)
            if (sg_parse(ctx, &fe[i], c.facts[i].text, NULL) != SG_OK)
                die("fact %zu does not parse: %s: %s", i, c.facts[i].text, sg_ctx_last_error_msg(ctx));
        fig[F_PARSE_FACTS][run] = now_ns() - t0;

        t0 = now_ns();
        if (sg_facts_new(ctx, &f) != SG_OK)
            die("sg_facts_new failed");
        sg_facts_set_budget(f, budget);
        for (size_t i = 0; i < nfa; i++) {
            sg_status st = sg_facts_assume(f, fe[i]);
            if (st != SG_OK)
                check_fail("fact %zu (%s): sg_facts_assume: %s: %s", i, c.facts[i].text, sg_status_kind(st),
                           sg_ctx_last_error_msg(ctx));
        }
        fig[F_SETUP][run] = now_ns() - t0;
        if (!sg_facts_consistent(f))
            check_fail("the fact base is inconsistent (the facts hold at the model)");
        if (run == 0)
            sg_ctx_stats(ctx, &nodes_facts, NULL, NULL);

        t0 = now_ns();
        for (size_t i = 0; i < nq; i++)
            if (sg_parse(ctx, &qe[i], c.queries[i].text, NULL) != SG_OK)
                die("query %zu does not parse: %s: %s", i, c.queries[i].text, sg_ctx_last_error_msg(ctx));
        fig[F_PARSE_QUERY][run] = (now_ns() - t0) / (double)nq;

        if (sg_facts_copy(&pristine, f) != SG_OK)
            die("sg_facts_copy failed");

        /* cold */
        for (size_t i = 0; i < nq; i++) {
            t0 = now_ns();
            sg_status st = cold_known(f, &ans[i], qe[i]);
            tcold[i] = now_ns() - t0;
            if (st != SG_OK)
                die("query %zu: sg_facts_known: %s: %s", i, sg_status_kind(st), sg_ctx_last_error_msg(ctx));
        }
        /* warm */
        for (size_t i = 0; i < nq; i++) {
            t0 = now_ns();
            sg_status st = sg_facts_known(f, &answ[i], qe[i]);
            twarm[i] = now_ns() - t0;
            if (st != SG_OK)
                die("query %zu: sg_facts_known (warm): %s", i, sg_status_kind(st));
        }
        /* isolated */
        double copy_sum = 0;
        for (size_t i = 0; i < nq; i++) {
            sg_facts *g;
            t0 = now_ns();
            if (sg_facts_copy(&g, pristine) != SG_OK)
                die("sg_facts_copy failed");
            double t1 = now_ns();
            sg_status st = iso_known(g, &ansi[i], qe[i]);
            tiso[i] = now_ns() - t1;
            copy_sum += t1 - t0;
            if (st != SG_OK)
                die("query %zu: sg_facts_known (isolated): %s", i, sg_status_kind(st));
            sg_facts_free(g);
        }
        fig[F_COPY][run] = copy_sum / (double)nq;

        stats s = stats_of(tcold, nq);
        fig[F_COLD_MED][run] = s.median, fig[F_COLD_MEAN][run] = s.mean;
        fig[F_COLD_P90][run] = s.p90, fig[F_COLD_MAX][run] = s.max;
        s = stats_of(twarm, nq);
        fig[F_WARM_MED][run] = s.median, fig[F_WARM_MEAN][run] = s.mean;
        fig[F_WARM_P90][run] = s.p90, fig[F_WARM_MAX][run] = s.max;
        s = stats_of(tiso, nq);
        fig[F_ISO_MED][run] = s.median, fig[F_ISO_MEAN][run] = s.mean;
        fig[F_ISO_P90][run] = s.p90, fig[F_ISO_MAX][run] = s.max;
        for (int k = 0; k < 3; k++) {
            size_t n = 0;
            for (size_t i = 0; i < nq; i++)
                if ((int)ans[i] == k)
                    tcls[n++] = tcold[i];
            s = stats_of(tcls, n);
            fig[F_CLS_MED + k][run] = s.median;
            fig[F_CLS_MEAN + k][run] = s.mean;
            if (run == 0)
                n_cls[k] = n;
        }

        /* checks, outside the clock */
        for (size_t i = 0; i < nq; i++) {
            if (answ[i] != ans[i])
                check_fail("query %zu: warm answer %s, cold %s", i, truth_name(answ[i]), truth_name(ans[i]));
            if (run == 0) {
                ans0[i] = ans[i];
                iso_differs += ansi[i] != ans[i];
            } else if (ans[i] != ans0[i]) {
                check_fail("query %zu: run %d answers %s, run 0 %s", i, run, truth_name(ans[i]),
                           truth_name(ans0[i]));
            }
        }
        if (run == 0) {
            for (size_t i = 0; i < nq; i++) /* decided by canonicalization alone */
                const_forms += sg_expr_op(qe[i]) == SG_OP_TRUE || sg_expr_op(qe[i]) == SG_OP_FALSE;
            for (size_t i = 0; i < nq; i++) /* canonical forms met before (answered from the cache) */
                for (size_t j = 0; j < i; j++)
                    if (qe[j] == qe[i]) {
                        dup_forms++;
                        break;
                    }
            sg_ctx_stats(ctx, &nodes_all, NULL, NULL);
            const sg_expr **syms = xmalloc(c.nsyms * sizeof *syms), **vals = xmalloc(c.nsyms * sizeof *vals);
            for (size_t k = 0; k < c.nsyms; k++) {
                char name[32];
                snprintf(name, sizeof name, "s%zu", k);
                if (sg_expr_sym(ctx, &syms[k], name) != SG_OK || sg_expr_int(ctx, &vals[k], c.model[k]) != SG_OK)
                    die("cannot build the model");
            }
            for (size_t i = 0; i < nfa + nq; i++) {
                const sg_expr *e = i < nfa ? fe[i] : qe[i - nfa], *v;
                const item *it = i < nfa ? &c.facts[i] : &c.queries[i - nfa];
                sg_status st = sg_expr_eval(ctx, &v, e, c.nsyms, syms, vals);
                if (st != SG_OK || (sg_expr_op(v) != SG_OP_TRUE && sg_expr_op(v) != SG_OP_FALSE))
                    model_mismatch++, check_fail("%s %zu: evaluation at the model failed: %s", i < nfa ? "fact" : "query",
                               i < nfa ? i : i - nfa, sg_ctx_last_error_msg(ctx));
                else if ((sg_expr_op(v) == SG_OP_TRUE) != (it->model != 0))
                    model_mismatch++, check_fail("%s %zu (%s): %s at the model, the generator says %s", i < nfa ? "fact" : "query",
                               i < nfa ? i : i - nfa, it->text, sg_expr_op(v) == SG_OP_TRUE ? "true" : "false",
                               it->model ? "true" : "false");
            }
            free(syms);
            free(vals);
        }
        sg_facts_free(pristine);
        sg_facts_free(f);
        sg_ctx_free(ctx);
    }

    printf("engine shapeguard %s\n", SG_VERSION_STRING);
    printf("corpus_hash %016llx\n", (unsigned long long)file_hash(argv[1]));
    printf("runs %d\n", runs);
    printf("budget %zu\n", budget);
    printf("syms %zu\n", c.nsyms);
    printf("facts %zu\n", nfa);
    printf("queries %zu\n", nq);
    for (int k = 0; k < NF; k++)
        printf("%s %.1f\n", fig_name[k], median(fig[k], (size_t)runs));
    for (int k = 0; k < 3; k++)
        printf("cold_n_%s %zu\n", truth_name((sg_truth)k), n_cls[k]);
    printf("dup_forms %zu\n", dup_forms);
    printf("const_forms %zu\n", const_forms);
    printf("iso_differs %zu\n", iso_differs);
    printf("nodes_after_facts %zu\n", nodes_facts);
    printf("nodes_after_queries %zu\n", nodes_all);
    printf("model_mismatch %zu\n", model_mismatch);
    printf("checks %s\n", bench_errors ? "FAILED" : "ok");
    for (size_t i = 0; i < nq; i++)
        printf("answer %zu %s\n", i, truth_name(ans0[i]));
    if (bench_errors)
        fprintf(stderr, "bench_reason: %d check(s) failed\n", bench_errors);

    for (int k = 0; k < NF; k++)
        free(fig[k]);
    for (size_t i = 0; i < nfa; i++)
        free(c.facts[i].kind), free(c.facts[i].text);
    for (size_t i = 0; i < nq; i++)
        free(c.queries[i].kind), free(c.queries[i].text);
    free(c.facts), free(c.queries), free(c.model);
    free(tcold), free(twarm), free(tiso), free(tcls);
    free(ans0), free(ans), free(answ), free(ansi), free(fe), free(qe);
    return bench_errors ? 1 : 0;
}
