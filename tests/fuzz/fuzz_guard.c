/* Fuzz target for guard programs (guard.h): the input is text, a first line
 * of up to three integers (the values of x, y and z; missing ones are 0,
 * out-of-range ones clamp to the int64 limits) and then guards over x, y
 * and z, one a line (lines that do not parse as a boolean expression are
 * skipped; at most 24 guards). The guards are compiled twice, as by default
 * (native code where the library has a backend) and with
 * SG_GUARD_INTERPRET, and serialized and deserialized; each program is
 * checked at the values and at values derived from them (neighbours, x
 * repeated, the int64 limits), and each answer (pass, the first failing
 * guard, or the status of the first guard that raises) must be the one
 * that exact evaluation of the guards in order gives (sg_expr_eval), and
 * the first pass (every batched guard holds?) must give the same verdict
 * native and interpreted (a white-box check: it links the library's
 * internals). A difference aborts; any input must give an answer, never a
 * crash or a leak.
 *
 * With -fsanitize=fuzzer this is a libFuzzer target; otherwise the main()
 * of replay_main.c replays the files named on the command line (make check
 * replays tests/fuzz/corpus_guard). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard/guard_private.h" /* sg__gp_first_pass */
#include "shapeguard.h"

#define MAXG 24

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The answer of exact evaluation: SG_GUARD_PASS, or SG_GUARD_FAIL or an
 * evaluation error of the first guard that is not true (*failed). 1 is
 * returned in *ok unless the evaluation itself could not run. */
static int exact_answer(sg_ctx *ctx, const sg_expr *const *g, size_t n, const sg_expr *const *syms,
                        const int64_t *v, size_t *failed, int *ok)
{
    const sg_expr *vals[3];
    *ok = 1;
    for (int i = 0; i < 3; i++)
        if (sg_expr_int(ctx, &vals[i], v[i]) != SG_OK)
            return *ok = 0;
    for (size_t k = 0; k < n; k++) {
        const sg_expr *out = NULL;
        sg_status s = sg_expr_eval(ctx, &out, g[k], 3, syms, vals);
        if (s == SG_ENOMEM || s == SG_EINVAL || s == SG_EUNBOUND || s == SG_EINTERNAL || s == SG_ELIMIT)
            return *ok = 0;
        if (s != SG_OK || sg_expr_op(out) != SG_OP_TRUE) {
            *failed = k;
            return s != SG_OK ? (int)s : SG_GUARD_FAIL;
        }
    }
    return SG_GUARD_PASS;
}

static void compare(const char *what, int got, size_t gf, int want, size_t wf, const int64_t *v)
{
    if (got == SG_ELIMIT || got == SG_ENOMEM)
        return; /* a bound of the context or memory: not an answer to compare */
    if (got != want || (want != SG_GUARD_PASS && gf != wf)) {
        fprintf(stderr, "fuzz_guard: %s: got %d at %zu, exact %d at %zu, values %" PRId64 " %" PRId64 " %" PRId64 "\n",
                what, got, gf, want, wf, v[0], v[1], v[2]);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    sg_ctx *ctx = NULL, *cq = NULL;
    if (!text || sg_ctx_new(&ctx) != SG_OK || sg_ctx_new(&cq) != SG_OK) {
        free(text);
        sg_ctx_free(ctx);
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    const sg_expr *syms[3], *g[MAXG];
    size_t n = 0;
    int64_t base[3] = {0, 0, 0};
    char *save = NULL, *line = strtok_r(text, "\n", &save);
    if (line) { /* the values */
        char *p = line;
        for (int i = 0; i < 3; i++) {
            char *end;
            errno = 0;
            long long x = strtoll(p, &end, 10);
            if (end == p)
                break;
            base[i] = (int64_t)x;
            p = end;
        }
        line = strtok_r(NULL, "\n", &save);
    }
    if (sg_expr_sym(ctx, &syms[0], "x") || sg_expr_sym(ctx, &syms[1], "y") || sg_expr_sym(ctx, &syms[2], "z"))
        goto out;
    for (; line && n < MAXG; line = strtok_r(NULL, "\n", &save)) {
        const sg_expr *e;
        if (sg_parse(ctx, &e, line, NULL) == SG_OK && sg_expr_sort(e) == SG_SORT_BOOL) {
            const sg_expr **fs = NULL;
            size_t nf = 0;
            int only_xyz = sg_expr_free_symbols(ctx, &fs, &nf, e) == SG_OK;
            for (size_t i = 0; only_xyz && i < nf; i++)
                only_xyz = fs[i] == syms[0] || fs[i] == syms[1] || fs[i] == syms[2];
            sg_free(fs);
            if (only_xyz)
                g[n++] = e;
        }
    }
    sg_ctx_reset_error(ctx);
    sg_guard_prog *p = NULL, *pi = NULL, *q = NULL;
    uint8_t *blob = NULL;
    size_t len = 0;
    if (sg_guard_prog_compile(ctx, &p, g, n, syms, 3) != SG_OK ||
        sg_guard_prog_compile_flags(ctx, &pi, g, n, syms, 3, SG_GUARD_INTERPRET) != SG_OK ||
        sg_guard_prog_serialize(ctx, &blob, &len, p) != SG_OK)
        goto done;
    if (sg_guard_prog_deserialize(cq, &q, blob, len) != SG_OK) {
        fprintf(stderr, "fuzz_guard: a serialized program does not deserialize: %s\n", sg_ctx_last_error_msg(cq));
        abort();
    }
    /* the values, their neighbours, x repeated, the limits */
    for (int k = 0; k < 12; k++) {
        int64_t v[3];
        memcpy(v, base, sizeof v);
        if (k >= 1 && k <= 6) /* v[i] +- 1, wrapping at the limits */
            v[(k - 1) / 2] = (int64_t)((uint64_t)v[(k - 1) / 2] + ((k & 1) ? 1u : UINT64_MAX));
        else if (k == 7)
            v[1] = v[2] = v[0];
        else if (k == 8)
            v[0] = INT64_MAX, v[1] = INT64_MIN;
        else if (k == 9)
            v[2] = INT64_MIN, v[0] = -1;
        else if (k == 10)
            v[1] = v[0] / 2;
        else if (k == 11)
            v[0] = v[1] = v[2] = 0;
        size_t wf = SIZE_MAX;
        int ok, want = exact_answer(ctx, g, n, syms, v, &wf, &ok);
        if (!ok)
            continue;
        size_t gf = SIZE_MAX;
        int got = sg_guard_prog_check(p, v, 3, &gf);
        compare("check", got, gf, want, wf, v);
        gf = SIZE_MAX;
        got = sg_guard_prog_check(pi, v, 3, &gf);
        compare("interpreted check", got, gf, want, wf, v);
        gf = SIZE_MAX;
        got = sg_guard_prog_check(q, v, 3, &gf);
        compare("deserialized check", got, gf, want, wf, v);
        /* the first passes must agree too: a native pass that misses a guard
         * that holds would only be slow, and one that passes a guard that
         * fails is wrong only when no later guard fails */
        int a = sg__gp_first_pass(p, v), b = sg__gp_first_pass(pi, v);
        if (a != b) {
            fprintf(stderr, "fuzz_guard: first pass %d, interpreted %d, values %" PRId64 " %" PRId64 " %" PRId64 "\n", a,
                    b, v[0], v[1], v[2]);
            abort();
        }
    }
done:
    sg_free(blob);
    sg_guard_prog_free(p);
    sg_guard_prog_free(pi);
    sg_guard_prog_free(q);
out:
    sg_ctx_free(cq);
    sg_ctx_free(ctx);
    free(text);
    return 0;
}
