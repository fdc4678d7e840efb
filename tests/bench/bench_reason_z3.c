/* Reasoning benchmark (issue 3): the Z3 side, through the C API of libz3.
 *
 * Reads the corpus written by tests/bench/reason_corpus.py (the file
 * bench_reason reads), using the SMT-LIB2 spelling of each fact and query:
 * integer constants s0..s(V-1), div/mod only by positive constants (where
 * Z3's Euclidean division is floor division), Max/Min as ite. Each run, in a
 * fresh context:
 *
 *   parse    all the facts in one Z3_parse_smtlib2_string call (timed), then
 *            each query in its own call (timed as a whole); the negation of
 *            each query is built here too, outside the query clock;
 *   setup    one solver (Z3_mk_solver) with every fact asserted (timed), then
 *            one check of the facts alone (timed apart: it must be sat);
 *   query    for each query, in corpus order, timed as a whole:
 *              push; assert (not q); check; pop     unsat: q is implied (true)
 *              otherwise push; assert q; check; pop  unsat: q is refuted (false)
 *              otherwise: neither (both sat) or undecided (unknown, timeout).
 *
 * Z3 keeps no answers between queries, so there is no warm pass: asking
 * again costs about the same (the solver may keep learned lemmas).
 *
 * Checks (outside the clock; a failure makes the exit status 1): everything
 * parses; every fact is true at the model and every query has the value the
 * generator computed there (by substituting the model and simplifying),
 * which shows that the SMT-LIB2 spelling means what the battery spelling
 * does at that point; the facts are satisfiable.
 *
 * Output on stdout: "key value" lines, then per query
 * "verdict INDEX NOTQ Q" where NOTQ and Q are sat, unsat, unknown or skip
 * (run 0), read by reason_corpus.py --report.
 * Usage: bench_reason_z3 CORPUS [RUNS [TIMEOUT_MS]]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <z3.h>

#define BENCH_NAME "bench_reason_z3"
#include "bench_util.h"

typedef struct {
    char *text; /* SMT-LIB2 */
    int model;  /* value at the model */
} item;

typedef struct {
    size_t nsyms, nfacts, nqueries;
    char *model_line;
    int64_t *model;
    item *facts, *queries;
} corpus;

static void load(corpus *c, const char *path)
{
    corpus_reader r;
    corpus_open(&r, path);
    memset(c, 0, sizeof *c);
    size_t nf = 0, nq = 0;
    while (corpus_next(&r)) {
        char **f = r.f;
        size_t n = r.n;
        if (!strcmp(f[0], "header")) {
            corpus_header h = parse_header(f, n, 0);
            c->nsyms = h.nsyms, c->nfacts = h.nfacts, c->nqueries = h.nqueries;
            c->facts = xmalloc(c->nfacts * sizeof *c->facts);
            c->queries = xmalloc(c->nqueries * sizeof *c->queries);
            c->model = xmalloc(c->nsyms * sizeof *c->model);
        } else if (!strcmp(f[0], "model")) {
            if (!c->model || n != 2)
                die("bad model line");
            parse_model(f[1], c->model, c->nsyms);
            c->model_line = xstrdup(f[1]);
        } else if (!strcmp(f[0], "fact")) {
            if (!c->facts || n != 5 || nf == c->nfacts)
                die("bad or unexpected fact line");
            c->facts[nf].text = xstrdup(f[4]);
            c->facts[nf].model = 1;
            nf++;
        } else if (!strcmp(f[0], "query")) {
            if (!c->queries || n != 6 || nq == c->nqueries)
                die("bad or unexpected query line");
            c->queries[nq].model = f[3][0] == '1';
            c->queries[nq].text = xstrdup(f[5]);
            nq++;
        } else {
            die("unknown record %s", f[0]);
        }
    }
    corpus_close(&r);
    if (!c->model_line || nf != c->nfacts || nq != c->nqueries)
        die("incomplete corpus");
}

/* Errors of the Z3 API land here instead of aborting: the caller checks. */
static Z3_error_code z3_err;
static void on_z3_error(Z3_context z, Z3_error_code e)
{
    (void)z;
    z3_err = e;
}

static const char *lbool_name(Z3_lbool r)
{
    return r == Z3_L_TRUE ? "sat" : r == Z3_L_FALSE ? "unsat" : "unknown";
}

/* The one assertion of an SMT-LIB2 "(assert ...)" text over the symbols. */
static Z3_ast parse_one(Z3_context z, const char *text, size_t nsyms, Z3_symbol *names, Z3_func_decl *decls,
                        char **buf, size_t *cap)
{
    size_t need = strlen(text) + 16;
    if (need > *cap) {
        free(*buf);
        *cap = 2 * need;
        *buf = xmalloc(*cap);
    }
    snprintf(*buf, *cap, "(assert %s)", text);
    z3_err = Z3_OK;
    Z3_ast_vector v = Z3_parse_smtlib2_string(z, *buf, 0, NULL, NULL, (unsigned)nsyms, names, decls);
    if (z3_err != Z3_OK || !v)
        die("Z3 cannot parse %s: %s", text, Z3_get_error_msg(z, z3_err));
    Z3_ast_vector_inc_ref(z, v);
    if (Z3_ast_vector_size(z, v) != 1)
        die("Z3 parsed %u assertions from %s", Z3_ast_vector_size(z, v), text);
    Z3_ast a = Z3_ast_vector_get(z, v, 0);
    Z3_inc_ref(z, a);
    Z3_ast_vector_dec_ref(z, v);
    return a;
}

enum { V_TRUE, V_FALSE, V_NEITHER, V_UNDECIDED, NV };
/* One query: push; assert (not q); check; pop, then, unless that said
 * unsat, the same with q. Its own function (never inlined) so that
 * callgrind's inclusive count of z3_query is the queries' instructions
 * alone, to set beside bench_reason's iso_known (run_reason.sh says how). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void z3_query(Z3_context z, Z3_solver s, Z3_ast notq, Z3_ast q, Z3_lbool *r1, Z3_lbool *r2)
{
    Z3_solver_push(z, s);
    Z3_solver_assert(z, s, notq);
    *r1 = Z3_solver_check(z, s);
    Z3_solver_pop(z, s, 1);
    *r2 = Z3_L_UNDEF;
    if (*r1 != Z3_L_FALSE) {
        Z3_solver_push(z, s);
        Z3_solver_assert(z, s, q);
        *r2 = Z3_solver_check(z, s);
        Z3_solver_pop(z, s, 1);
    }
}

static const char *const verdict_name[NV] = {"true", "false", "neither", "undecided"};

enum {
    F_CTX, F_PARSE_FACTS, F_PARSE_QUERY, F_SETUP, F_FACTS_CHECK,
    F_MED, F_MEAN, F_P90, F_MAX, F_CHECKS,
    F_CLS_MED, F_CLS_MEAN = F_CLS_MED + NV, NF = F_CLS_MEAN + NV
};
static const char *const fig_name[NF] = {
    "ctx_ns", "parse_facts_ns", "parse_query_ns", "setup_ns", "facts_check_ns",
    "query_ns_median", "query_ns_mean", "query_ns_p90", "query_ns_max", "checks_per_query",
    "query_ns_median_true", "query_ns_median_false", "query_ns_median_neither", "query_ns_median_undecided",
    "query_ns_mean_true", "query_ns_mean_false", "query_ns_mean_neither", "query_ns_mean_undecided",
};

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: bench_reason_z3 CORPUS [RUNS [TIMEOUT_MS]]\n");
        return 2;
    }
    int runs = argc >= 3 ? atoi(argv[2]) : 5;
    unsigned timeout_ms = argc >= 4 ? (unsigned)strtoul(argv[3], NULL, 10) : 10000;
    if (runs < 1 || runs > 1000)
        die("RUNS must be 1..1000");
    corpus c;
    load(&c, argv[1]);
    size_t n = c.nsyms, nq = c.nqueries, nfa = c.nfacts;

    double *fig[NF];
    for (int k = 0; k < NF; k++)
        fig[k] = xmalloc((size_t)runs * sizeof(double));
    double *tq = xmalloc(nq * sizeof *tq), *tcls = xmalloc(nq * sizeof *tcls);
    Z3_lbool *r1 = xmalloc(nq * sizeof *r1), *r2 = xmalloc(nq * sizeof *r2);
    int *v0 = xmalloc(nq * sizeof *v0), *v = xmalloc(nq * sizeof *v), *r1_0 = xmalloc(nq * sizeof *r1_0),
        *r2_0 = xmalloc(nq * sizeof *r2_0);
    size_t n_cls[NV] = {0}, verdict_changes = 0, model_mismatch = 0, checks_total = 0;
    Z3_lbool facts_sat = Z3_L_UNDEF;

    /* the whole fact base as one script */
    size_t flen = 1;
    for (size_t i = 0; i < nfa; i++)
        flen += strlen(c.facts[i].text) + 16;
    char *fscript = xmalloc(flen), *p = fscript;
    *p = '\0'; /* no facts: an empty script */
    for (size_t i = 0; i < nfa; i++)
        p += sprintf(p, "(assert %s)\n", c.facts[i].text);

    char *buf = NULL;
    size_t cap = 0;
    Z3_symbol *names = xmalloc(n * sizeof *names);
    Z3_func_decl *decls = xmalloc(n * sizeof *decls);
    Z3_ast *qa = xmalloc(nq * sizeof *qa), *qn = xmalloc(nq * sizeof *qn);
    unsigned maj, min, bld, rev;
    Z3_get_version(&maj, &min, &bld, &rev);

    for (int run = 0; run < runs; run++) {
        double t0 = now_ns();
        Z3_config cfg = Z3_mk_config();
        Z3_context z = Z3_mk_context_rc(cfg);
        Z3_del_config(cfg);
        Z3_set_error_handler(z, on_z3_error);
        Z3_sort isort = Z3_mk_int_sort(z);
        Z3_inc_ref(z, Z3_sort_to_ast(z, isort));
        fig[F_CTX][run] = now_ns() - t0;

        t0 = now_ns();
        for (size_t i = 0; i < n; i++) {
            char name[32];
            snprintf(name, sizeof name, "s%zu", i);
            names[i] = Z3_mk_string_symbol(z, name);
            decls[i] = Z3_mk_func_decl(z, names[i], 0, NULL, isort);
            Z3_inc_ref(z, Z3_func_decl_to_ast(z, decls[i]));
        }
        z3_err = Z3_OK;
        Z3_ast_vector fv = Z3_parse_smtlib2_string(z, fscript, 0, NULL, NULL, (unsigned)n, names, decls);
        if (z3_err != Z3_OK || !fv)
            die("Z3 cannot parse the facts: %s", Z3_get_error_msg(z, z3_err));
        Z3_ast_vector_inc_ref(z, fv);
        fig[F_PARSE_FACTS][run] = now_ns() - t0;
        if (Z3_ast_vector_size(z, fv) != nfa)
            die("Z3 parsed %u facts, expected %zu", Z3_ast_vector_size(z, fv), nfa);

        t0 = now_ns();
        for (size_t i = 0; i < nq; i++)
            qa[i] = parse_one(z, c.queries[i].text, n, names, decls, &buf, &cap);
        fig[F_PARSE_QUERY][run] = (now_ns() - t0) / (double)nq;
        for (size_t i = 0; i < nq; i++) {
            qn[i] = Z3_mk_not(z, qa[i]);
            Z3_inc_ref(z, qn[i]);
        }

        t0 = now_ns();
        Z3_solver s = Z3_mk_solver(z);
        Z3_solver_inc_ref(z, s);
        Z3_params prm = Z3_mk_params(z);
        Z3_params_inc_ref(z, prm);
        Z3_params_set_uint(z, prm, Z3_mk_string_symbol(z, "timeout"), timeout_ms);
        Z3_solver_set_params(z, s, prm);
        for (unsigned i = 0; i < nfa; i++)
            Z3_solver_assert(z, s, Z3_ast_vector_get(z, fv, i));
        fig[F_SETUP][run] = now_ns() - t0;
        t0 = now_ns();
        Z3_lbool fs = Z3_solver_check(z, s);
        fig[F_FACTS_CHECK][run] = now_ns() - t0;
        if (run == 0)
            facts_sat = fs;
        if (fs != Z3_L_TRUE)
            check_fail("run %d: the facts are %s to Z3 (they hold at the model)", run, lbool_name(fs));

        size_t checks = 0;
        for (size_t i = 0; i < nq; i++) {
            t0 = now_ns();
            z3_query(z, s, qn[i], qa[i], &r1[i], &r2[i]);
            tq[i] = now_ns() - t0;
            int skip = r1[i] == Z3_L_FALSE;
            checks += 1 + !skip;
            v[i] = r1[i] == Z3_L_FALSE ? V_TRUE : r2[i] == Z3_L_FALSE ? V_FALSE
                 : (r1[i] == Z3_L_TRUE && r2[i] == Z3_L_TRUE) ? V_NEITHER : V_UNDECIDED;
            if (run == 0) {
                v0[i] = v[i];
                r1_0[i] = r1[i];
                r2_0[i] = skip ? 99 : r2[i];
            } else if (v[i] != v0[i]) {
                verdict_changes++;
            }
        }
        checks_total = checks;
        fig[F_CHECKS][run] = (double)checks / (double)nq;
        stats st = stats_of(tq, nq);
        fig[F_MED][run] = st.median, fig[F_MEAN][run] = st.mean, fig[F_P90][run] = st.p90, fig[F_MAX][run] = st.max;
        for (int k = 0; k < NV; k++) {
            size_t m = 0;
            for (size_t i = 0; i < nq; i++)
                if (v[i] == k)
                    tcls[m++] = tq[i];
            st = stats_of(tcls, m);
            fig[F_CLS_MED + k][run] = m ? st.median : 0;
            fig[F_CLS_MEAN + k][run] = m ? st.mean : 0;
            if (run == 0)
                n_cls[k] = m;
        }

        if (run == 0) {
            /* the model: substitute and simplify each fact and query */
            Z3_ast *from = xmalloc(n * sizeof *from), *to = xmalloc(n * sizeof *to);
            for (size_t k = 0; k < n; k++) {
                from[k] = Z3_mk_app(z, decls[k], 0, NULL);
                Z3_inc_ref(z, from[k]);
                to[k] = Z3_mk_int64(z, c.model[k], isort);
                Z3_inc_ref(z, to[k]);
            }
            for (size_t i = 0; i < nfa + nq; i++) {
                Z3_ast e = i < nfa ? Z3_ast_vector_get(z, fv, (unsigned)i) : qa[i - nfa];
                Z3_ast sub = Z3_substitute(z, e, (unsigned)n, from, to);
                Z3_inc_ref(z, sub);
                Z3_ast val = Z3_simplify(z, sub);
                Z3_inc_ref(z, val);
                Z3_lbool b = Z3_get_bool_value(z, val);
                int want = i < nfa ? 1 : c.queries[i - nfa].model;
                if (b == Z3_L_UNDEF || (b == Z3_L_TRUE) != (want != 0)) {
                    model_mismatch++;
                    check_fail("%s %zu (%s): %s at the model, the generator says %s", i < nfa ? "fact" : "query",
                               i < nfa ? i : i - nfa, i < nfa ? c.facts[i].text : c.queries[i - nfa].text,
                               b == Z3_L_UNDEF ? "undecided" : b == Z3_L_TRUE ? "true" : "false",
                               want ? "true" : "false");
                }
                Z3_dec_ref(z, val);
                Z3_dec_ref(z, sub);
            }
            for (size_t k = 0; k < n; k++)
                Z3_dec_ref(z, from[k]), Z3_dec_ref(z, to[k]);
            free(from);
            free(to);
        }

        for (size_t i = 0; i < nq; i++)
            Z3_dec_ref(z, qa[i]), Z3_dec_ref(z, qn[i]);
        for (size_t i = 0; i < n; i++)
            Z3_dec_ref(z, Z3_func_decl_to_ast(z, decls[i]));
        Z3_ast_vector_dec_ref(z, fv);
        Z3_dec_ref(z, Z3_sort_to_ast(z, isort));
        Z3_params_dec_ref(z, prm);
        Z3_solver_dec_ref(z, s);
        Z3_del_context(z);
    }

    printf("engine Z3 %u.%u.%u\n", maj, min, bld);
    printf("corpus_hash %016llx\n", (unsigned long long)file_hash(argv[1]));
    printf("runs %d\n", runs);
    printf("timeout_ms %u\n", timeout_ms);
    printf("facts %zu\n", nfa);
    printf("queries %zu\n", nq);
    for (int k = 0; k < NF; k++)
        printf("%s %.*f\n", fig_name[k], k == F_CHECKS ? 3 : 1, median(fig[k], (size_t)runs));
    for (int k = 0; k < NV; k++)
        printf("query_n_%s %zu\n", verdict_name[k], n_cls[k]);
    printf("checks_total %zu\n", checks_total);
    printf("facts_check %s\n", lbool_name(facts_sat));
    printf("facts_sat %d\n", facts_sat == Z3_L_TRUE);
    printf("verdict_changes %zu\n", verdict_changes);
    printf("model_mismatch %zu\n", model_mismatch);
    printf("checks %s\n", bench_errors ? "FAILED" : "ok");
    for (size_t i = 0; i < nq; i++)
        printf("verdict %zu %s %s\n", i, lbool_name((Z3_lbool)r1_0[i]),
               r2_0[i] == 99 ? "skip" : lbool_name((Z3_lbool)r2_0[i]));
    if (bench_errors)
        fprintf(stderr, "bench_reason_z3: %d check(s) failed\n", bench_errors);

    for (int k = 0; k < NF; k++)
        free(fig[k]);
    for (size_t i = 0; i < nfa; i++)
        free(c.facts[i].text);
    for (size_t i = 0; i < nq; i++)
        free(c.queries[i].text);
    free(c.facts), free(c.queries), free(c.model), free(c.model_line);
    free(tq), free(tcls), free(r1), free(r2), free(v0), free(v), free(r1_0), free(r2_0);
    free(fscript), free(buf), free(names), free(decls), free(qa), free(qn);
    return bench_errors ? 1 : 0;
}
