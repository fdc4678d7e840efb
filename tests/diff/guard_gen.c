/* Differential test generator for guard programs (tests/diff/guard.test).
 *
 *   guard_gen SEED OUTDIR [NSETS]
 *
 * Builds NSETS random guard sets, half from random traces through sg_env
 * (backed sizes with random hints, random relations evaluated so guards are
 * recorded, then sg_env_produce_guards: guards over symbols named by their
 * sources), half from random boolean expressions (division, modulo, powers,
 * shifts, Where, Min/Max, bitwise, and/or). For each set and random inputs
 * (near the hints, small, near the int64 limits, beyond int64) it checks
 * here, against direct exact evaluation of each guard with sg_expr_eval:
 *   - sg_guard_prog_check (int64 inputs) and sg_guard_prog_check_exact (all),
 *   - the same program compiled with SG_GUARD_INTERPRET (the default one has
 *     native code on x86-64: both must agree with exact evaluation),
 *   - the program rebuilt by serialize/deserialize into another context,
 *   - sg_guard_prog_explain (names the same guard).
 * It writes OUTDIR/guards_c.c (the emitted C of every set, a driver and the
 * expected answers) and OUTDIR/guards_py.py (the Python lambdas, per-guard
 * texts, the PyTorch-style lambda over L and the slots' sources, inputs and
 * expected per-guard values), which guard.test runs.
 * Prints counts; exit 1 on a mismatch, 2 on a usage or setup error. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shapeguard.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int64_t range(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

static sg_ctx *C;
static long mismatches, compared, errors_seen, exact_big, explained, roundtrips, native_sets;

#define MAXS 8
#define MAXG 96
#define NIN 48

static void die(const char *what)
{
    fprintf(stderr, "guard_gen: %s: %s\n", what, sg_ctx_last_error_msg(C));
    exit(2);
}

static const sg_expr *I(int64_t v)
{
    const sg_expr *e;
    if (sg_expr_int(C, &e, v))
        die("int");
    return e;
}

/* ---- random expressions ---- */

static const sg_expr *rexpr(const sg_expr *const *syms, size_t ns, int depth);

static const sg_expr *rleaf(const sg_expr *const *syms, size_t ns)
{
    uint64_t r = rnd() % 10;
    if (r < 6)
        return syms[rnd() % ns];
    if (r < 9)
        return I(range(-5, 12));
    static const char *const big[] = {"1099511627776", "4611686018427387904", "9223372036854775807",
                                      "1180591620717411303424", "-9223372036854775808"};
    const sg_expr *e;
    if (sg_expr_int_str(C, &e, big[rnd() % 5]))
        die("int_str");
    return e;
}

static const sg_expr *rexpr(const sg_expr *const *syms, size_t ns, int depth)
{
    if (depth <= 0 || rnd() % 4 == 0)
        return rleaf(syms, ns);
    const sg_expr *a = rexpr(syms, ns, depth - 1), *b = rexpr(syms, ns, depth - 1), *r = NULL;
    sg_status s = SG_OK;
    switch (rnd() % 19) {
    case 0: case 1: s = sg_expr_add(C, &r, a, b); break;
    case 2: s = sg_expr_sub(C, &r, a, b); break;
    case 3: case 4: s = sg_expr_mul(C, &r, a, b); break;
    case 5: s = sg_expr_floordiv(C, &r, a, rnd() % 2 ? I(range(-4, 9)) : b); break;
    case 6: s = sg_expr_mod(C, &r, a, rnd() % 2 ? I(range(-4, 9)) : b); break;
    case 7: s = sg_expr_truncdiv(C, &r, a, b); break;
    case 8: s = sg_expr_truncmod(C, &r, a, b); break;
    case 9: s = sg_expr_cleandiv(C, &r, a, rnd() % 2 ? I(range(1, 4)) : b); break;
    case 10: s = sg_expr_pow(C, &r, a, I(range(0, 3))); break;
    case 11: { /* 2 ** (b % 8) and a >> (b % 70), bounded exponents */
        const sg_expr *m = NULL;
        s = sg_expr_mod(C, &m, b, I(rnd() % 2 ? 8 : 70));
        if (!s)
            s = rnd() % 2 ? sg_expr_pow(C, &r, I(2), m) : sg_expr_shr(C, &r, a, m);
        break;
    }
    case 12: s = sg_expr_min(C, &r, 2, (const sg_expr *[]){a, b}); break;
    case 13: s = sg_expr_max(C, &r, 2, (const sg_expr *[]){a, b}); break;
    case 14: s = sg_expr_abs(C, &r, a); break;
    case 15: {
        const sg_expr *c = NULL;
        s = sg_expr_rel(C, &c, (sg_rel)(rnd() % 6), a, rleaf(syms, ns));
        if (!s)
            s = sg_expr_where(C, &r, c, a, b);
        break;
    }
    case 16: s = sg_expr_band(C, &r, a, b); break;
    case 17: s = sg_expr_bor(C, &r, a, b); break;
    default: s = sg_expr_bxor(C, &r, a, b); break;
    }
    if (s == SG_ELIMIT)
        return a;
    if (s)
        die("build");
    return r;
}

static const sg_expr *rbool(const sg_expr *const *syms, size_t ns, int depth)
{
    const sg_expr *r = NULL;
    sg_status s;
    if (depth > 0 && rnd() % 4 == 0) {
        const sg_expr *a = rbool(syms, ns, depth - 1), *b = rbool(syms, ns, depth - 1);
        s = rnd() % 2 ? sg_expr_and(C, &r, 2, (const sg_expr *[]){a, b}) : sg_expr_or(C, &r, 2, (const sg_expr *[]){a, b});
    } else {
        s = sg_expr_rel(C, &r, (sg_rel)(rnd() % 6), rexpr(syms, ns, depth), rexpr(syms, ns, depth - 1));
    }
    if (s)
        die("bool");
    return r;
}

/* ---- one guard set ---- */

typedef struct gset {
    size_t ns, ng;
    const sg_expr *slots[MAXS];
    const sg_expr *guards[MAXG];
    int64_t hints[MAXS];
} gset;

static void make_env_set(gset *S)
{
    sg_env *env = NULL;
    if (sg_env_new(C, NULL, &env))
        die("env");
    S->ns = (size_t)range(2, 6);
    const sg_expr *vals[MAXS];
    for (size_t i = 0; i < S->ns; i++) {
        char src[64];
        snprintf(src, sizeof src, "L['x%zu'].size()[%zu]", i / 2, i % 2);
        S->hints[i] = rnd() % 3 == 0 ? S->hints[rnd() % (i + 1)] : range(2, 24);
        if (i == 0)
            S->hints[0] = range(2, 24);
        if (sg_env_create_backed(env, &vals[i], src, I(S->hints[i]), rnd() % 3 ? SG_DIM_DUCK : SG_DIM_DYNAMIC, 1,
                                 NULL))
            die("create_backed");
        if (sg_expr_sym(C, &S->slots[i], src))
            die("sym");
    }
    size_t nq = (size_t)range(2, 10);
    for (size_t q = 0; q < nq; q++) {
        const sg_expr *cond = rbool(vals, S->ns, 2);
        int out;
        sg_status s = sg_env_evaluate(env, &out, cond, NULL);
        if (s && s != SG_EZERODIV && s != SG_ENEGEXP && s != SG_EINEXACT && s != SG_ELIMIT && s != SG_EDATADEP)
            die("evaluate");
    }
    const sg_expr **g = NULL;
    size_t n = 0;
    if (sg_env_produce_guards(env, &g, &n))
        die("produce_guards");
    S->ng = n < MAXG ? n : MAXG;
    memcpy(S->guards, g, S->ng * sizeof *g);
    sg_free(g);
    sg_env_free(env);
}

static void make_expr_set(gset *S)
{
    S->ns = (size_t)range(1, 5);
    for (size_t i = 0; i < S->ns; i++) {
        char src[64];
        snprintf(src, sizeof src, "L['a'].size()[%zu]", i);
        if (sg_expr_sym(C, &S->slots[i], src))
            die("sym");
        S->hints[i] = range(-3, 20);
    }
    S->ng = (size_t)range(1, 8);
    for (size_t g = 0; g < S->ng; g++)
        S->guards[g] = rbool(S->slots, S->ns, 3);
}

/* ---- inputs ---- */

typedef struct input {
    int big;              /* some value beyond int64 */
    int64_t v[MAXS];
    char text[MAXS][64];  /* decimal */
} input;

static void make_input(const gset *S, input *in, int k)
{
    static const int64_t edge[] = {INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, (int64_t)1 << 62,
                                   -((int64_t)1 << 62), (int64_t)1 << 32, 3037000499, 3037000500, -1, 0, 1};
    in->big = 0;
    for (size_t i = 0; i < S->ns; i++) {
        int64_t x;
        switch (k % 6) {
        case 0: x = S->hints[i]; break;
        case 1: x = rnd() % 3 ? S->hints[i] : S->hints[i] + range(-2, 2); break;
        case 2: x = range(-3, 40); break;
        case 3: x = rnd() % 2 ? edge[rnd() % 12] : S->hints[i]; break;
        case 4: x = rnd() % 2 ? (int64_t)(rnd() >> range(1, 40)) * (rnd() % 2 ? 1 : -1) : S->hints[i]; break;
        default: x = S->hints[i] * (rnd() % 2 ? 1 : (int64_t)1 << range(20, 40)); break;
        }
        in->v[i] = x;
        snprintf(in->text[i], sizeof in->text[i], "%" PRId64, x);
    }
    if (k % 8 == 7) { /* beyond int64 */
        size_t i = (size_t)(rnd() % S->ns);
        snprintf(in->text[i], sizeof in->text[i], "%s%" PRIu64 "%06u", rnd() % 2 ? "-" : "",
                 (uint64_t)rnd() >> 1, (unsigned)(rnd() % 1000000));
        in->big = 1;
    }
}

/* Per guard: 1 true, 0 false, -1 an evaluation error (its status in err). */
static void reference(const gset *S, const input *in, int *per, sg_status *err)
{
    const sg_expr *vals[MAXS];
    for (size_t i = 0; i < S->ns; i++)
        if (sg_expr_int_str(C, &vals[i], in->text[i]))
            die("int_str");
    for (size_t g = 0; g < S->ng; g++) {
        const sg_expr *out = NULL;
        sg_status s = sg_expr_eval(C, &out, S->guards[g], S->ns, S->slots, vals);
        if (s == SG_ENOMEM || s == SG_EINVAL || s == SG_EUNBOUND || s == SG_EINTERNAL)
            die("eval");
        per[g] = s ? -1 : sg_expr_op(out) == SG_OP_TRUE;
        err[g] = s;
    }
}

/* The expected check result from per-guard values: (result, failed). */
static int expected(const gset *S, const int *per, const sg_status *err, size_t *failed)
{
    for (size_t g = 0; g < S->ng; g++)
        if (per[g] != 1) {
            *failed = g;
            return per[g] == 0 ? SG_GUARD_FAIL : (int)err[g];
        }
    return SG_GUARD_PASS;
}

static void report(long set, const gset *S, const input *in, const char *what, int got, size_t gf, int want,
                   size_t wf)
{
    mismatches++;
    if (mismatches > 20)
        return;
    fprintf(stderr, "MISMATCH set %ld (%s): got %d at %zu, want %d at %zu; values:", set, what, got, gf, want, wf);
    for (size_t i = 0; i < S->ns; i++)
        fprintf(stderr, " %s", in->text[i]);
    fprintf(stderr, "\n");
    if (want != SG_GUARD_PASS || got != SG_GUARD_PASS) {
        size_t g = want != SG_GUARD_PASS ? wf : gf;
        char *t = NULL;
        if (g < S->ng && sg_print(C, &t, S->guards[g], SG_FMT_SG) == SG_OK)
            fprintf(stderr, "  guard %zu: %s\n", g, t);
        sg_free(t);
    }
}

static void check_one(long set, const gset *S, sg_guard_prog *p, sg_guard_prog *pi, sg_guard_prog *q, sg_ctx *cq,
                      const input *in, int want, size_t wf)
{
    size_t gf = SIZE_MAX;
    int got;
    compared++;
    if (!in->big) {
        got = sg_guard_prog_check(p, in->v, S->ns, &gf);
        if (got != want || (want != SG_GUARD_PASS && gf != wf))
            report(set, S, in, "check", got, gf, want, wf);
        gf = SIZE_MAX;
        got = sg_guard_prog_check(pi, in->v, S->ns, &gf);
        if (got != want || (want != SG_GUARD_PASS && gf != wf))
            report(set, S, in, "interpreted check", got, gf, want, wf);
        gf = SIZE_MAX;
        got = sg_guard_prog_check(q, in->v, S->ns, &gf);
        roundtrips++;
        if (got != want || (want != SG_GUARD_PASS && gf != wf))
            report(set, S, in, "deserialized check", got, gf, want, wf);
    } else {
        exact_big++;
    }
    const sg_expr *vals[MAXS];
    for (size_t i = 0; i < S->ns; i++)
        if (sg_expr_int_str(C, &vals[i], in->text[i]))
            die("int_str");
    gf = SIZE_MAX;
    got = sg_guard_prog_check_exact(p, vals, S->ns, &gf);
    if (got != want || (want != SG_GUARD_PASS && gf != wf))
        report(set, S, in, "check_exact", got, gf, want, wf);
    char *text = NULL;
    size_t ef = SIZE_MAX;
    sg_status s = sg_guard_prog_explain_exact(C, &text, &ef, p, vals, S->ns);
    if (s == SG_OK) {
        explained++;
        size_t expect_ef = want == SG_GUARD_PASS ? S->ng : wf;
        if (ef != expect_ef)
            report(set, S, in, "explain", (int)ef, ef, want, wf);
    } else if (s != SG_ELIMIT) {
        report(set, S, in, "explain status", (int)s, 0, want, wf);
    }
    sg_free(text);
    (void)cq;
}

static void py_str(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\\' || *s == '\'')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: guard_gen SEED OUTDIR [NSETS]\n");
        return 2;
    }
    rng_state = strtoull(argv[1], NULL, 10);
    long nsets = argc > 3 ? atol(argv[3]) : 200;
    char path[4096];
    snprintf(path, sizeof path, "%s/guards_c.c", argv[2]);
    FILE *fc = fopen(path, "w");
    snprintf(path, sizeof path, "%s/guards_py.py", argv[2]);
    FILE *fp = fopen(path, "w");
    if (!fc || !fp || sg_ctx_new(&C)) {
        fprintf(stderr, "guard_gen: cannot open the output files\n");
        return 2;
    }
    sg_ctx *cq = NULL;
    if (sg_ctx_new(&cq))
        return 2;
    fprintf(fp, "SETS = []\n");
    long ntests_c = 0, total_guards = 0;
    /* C: expected answers */
    sg_ctx_reset_error(C);
    for (long k = 0; k < nsets; k++) {
        gset S;
        memset(&S, 0, sizeof S);
        if (k % 2 == 0)
            make_env_set(&S);
        else
            make_expr_set(&S);
        total_guards += (long)S.ng;
        sg_guard_prog *p = NULL, *pi = NULL, *q = NULL;
        if (sg_guard_prog_compile(C, &p, S.guards, S.ng, S.slots, S.ns) ||
            sg_guard_prog_compile_flags(C, &pi, S.guards, S.ng, S.slots, S.ns, SG_GUARD_INTERPRET))
            die("compile");
        if (sg_guard_prog_native_size(pi))
            die("native code despite SG_GUARD_INTERPRET");
        native_sets += sg_guard_prog_native_size(p) > 0;
        uint8_t *blob = NULL;
        size_t len = 0;
        if (sg_guard_prog_serialize(C, &blob, &len, p))
            die("serialize");
        if (sg_guard_prog_deserialize(cq, &q, blob, len)) {
            fprintf(stderr, "guard_gen: deserialize: %s\n", sg_ctx_last_error_msg(cq));
            for (size_t g = 0; g < S.ng; g++) {
                char *t = NULL;
                if (sg_print(C, &t, S.guards[g], SG_FMT_SG) == SG_OK)
                    fprintf(stderr, "  guard %zu: %s\n", g, t);
                sg_free(t);
            }
            return 2;
        }
        sg_free(blob);
        char *csrc = NULL, *py = NULL, fname[32];
        snprintf(fname, sizeof fname, "g%ld", k);
        if (sg_guard_prog_emit_c(C, &csrc, p, fname) || sg_guard_prog_emit_python(C, &py, p))
            die("emit");
        fprintf(fc, "%s\n", csrc);
        fprintf(fp, "SETS.append((%s, [", py);
        for (size_t g = 0; g < S.ng; g++) {
            char *t = NULL;
            char *one = NULL;
            sg_guard_prog *pg = NULL;
            if (sg_guard_prog_compile(C, &pg, &S.guards[g], 1, S.slots, S.ns) || sg_guard_prog_emit_python(C, &one, pg))
                die("emit one");
            fprintf(fp, "%s%s", g ? ", " : "", one);
            sg_free(one);
            sg_free(t);
            sg_guard_prog_free(pg);
        }
        fprintf(fp, "], [\n");
        fprintf(fc, "static const int64_t in%ld[][%zu] = {\n", k, S.ns ? S.ns : 1);
        int wants[NIN];
        long nc = 0;
        for (int t = 0; t < NIN; t++) {
            input in;
            make_input(&S, &in, t);
            int per[MAXG];
            sg_status err[MAXG];
            reference(&S, &in, per, err);
            size_t wf = SIZE_MAX;
            int want = expected(&S, per, err, &wf);
            for (size_t g = 0; g < S.ng; g++)
                errors_seen += per[g] < 0;
            check_one(k, &S, p, pi, q, cq, &in, want, wf);
            fprintf(fp, "  ([");
            for (size_t i = 0; i < S.ns; i++)
                fprintf(fp, "%s%s", i ? ", " : "", in.text[i]);
            fprintf(fp, "], [");
            for (size_t g = 0; g < S.ng; g++)
                fprintf(fp, "%s%d", g ? ", " : "", per[g]);
            fprintf(fp, "]),\n");
            if (!in.big) {
                fprintf(fc, "  {");
                for (size_t i = 0; i < S.ns; i++)
                    fprintf(fc, "%s%s", i ? ", " : "", in.v[i] == INT64_MIN ? "INT64_MIN" : in.text[i]);
                fprintf(fc, "%s},\n", S.ns ? "" : "0");
                wants[nc++] = want == SG_GUARD_PASS ? 1 : want == SG_GUARD_FAIL ? 0 : -2;
            }
        }
        /* the PyTorch-style lambda over L and the slots' sources */
        char *pyl = NULL;
        if (sg_guard_prog_emit_python_with(C, &pyl, p, NULL, NULL))
            die("emit_python_with");
        fprintf(fp, "], %s, [", pyl);
        for (size_t i = 0; i < S.ns; i++) {
            fprintf(fp, "%s", i ? ", " : "");
            py_str(fp, sg_expr_sym_name(S.slots[i]));
        }
        fprintf(fp, "]))\n");
        sg_free(pyl);
        fprintf(fc, "};\nstatic const int want%ld[] = {", k);
        for (long t = 0; t < nc; t++)
            fprintf(fc, "%s%d", t ? ", " : "", wants[t]);
        fprintf(fc, "%s};\n", nc ? "" : "0");
        fprintf(fc, "static const char src%ld[] = ", k);
        {
            char *t0 = NULL;
            if (S.ng && sg_print(C, &t0, S.guards[0], SG_FMT_SG) == SG_OK) {
                fputc('"', fc);
                for (const char *c = t0; *c; c++) {
                    if (*c == '"' || *c == '\\')
                        fputc('\\', fc);
                    fputc(*c, fc);
                }
                fputc('"', fc);
            } else {
                fprintf(fc, "\"\"");
            }
            sg_free(t0);
        }
        fprintf(fc, ";\n");
        fprintf(fc, "#define SET%ld {g%ld, &in%ld[0][0], %zu, %ld, want%ld, src%ld}\n", k, k, k, S.ns ? S.ns : 1,
                nc, k, k);
        ntests_c += nc;
        sg_free(csrc);
        sg_free(py);
        sg_guard_prog_free(p);
        sg_guard_prog_free(pi);
        sg_guard_prog_free(q);
    }
    /* the C driver */
    fprintf(fc, "#include <stdio.h>\n"
                "typedef struct { int (*fn)(const int64_t *); const int64_t *in; int ns, n; const int *want; "
                "const char *first; } cset;\n"
                "static const cset sets[] = {\n");
    for (long k = 0; k < nsets; k++)
        fprintf(fc, "  SET%ld,\n", k);
    fprintf(fc, "};\n"
                "int main(void)\n{\n"
                "    long n = 0, decided = 0, undecided = 0, bad = 0;\n"
                "    for (size_t s = 0; s < sizeof sets / sizeof *sets; s++)\n"
                "        for (int t = 0; t < sets[s].n; t++) {\n"
                "            int r = sets[s].fn(sets[s].in + (size_t)t * sets[s].ns), w = sets[s].want[t];\n"
                "            n++;\n"
                "            if (r == -1 && w != -2)\n"
                "                undecided++;\n"
                "            else if (r == w || (r == -1 && w == -2))\n"
                "                decided += r != -1;\n"
                "            else if (bad++ < 20)\n"
                "                fprintf(stderr, \"C MISMATCH set %%zu input %%d: got %%d want %%d (first guard %%s)\\n\",\n"
                "                        s, t, r, w, sets[s].first);\n"
                "        }\n"
                "    printf(\"emitted C: %%ld inputs, %%ld decided in int64, %%ld answered -1 (check exactly), "
                "%%ld mismatches\\n\", n, decided, undecided, bad);\n"
                "    return bad || decided * 2 < n ? 1 : 0;\n"
                "}\n");
    /* the Python checker */
    fprintf(fp, "%s",
            "import re, sys, types\n"
            "def frame(srcs, v):\n"
            "    sizes = {}\n"
            "    for s, x in zip(srcs, v):\n"
            "        key, d = re.fullmatch(r\"L\\['(\\w+)'\\]\\.size\\(\\)\\[(\\d+)\\]\", s).groups()\n"
            "        sizes.setdefault(key, {})[int(d)] = x\n"
            "    return {k: types.SimpleNamespace(size=(lambda t: lambda: t)(tuple(ds.get(i, 1) for i in range(max(ds) + 1))))\n"
            "            for k, ds in sizes.items()}\n"
            "n = agree = skipped = bad = lam_checked = 0\n"
            "for si, (lam, per_guard, inputs, lam_l, srcs) in enumerate(SETS):\n"
            "    for v, want in inputs:\n"
            "        got = []\n"
            "        for g in per_guard:\n"
            "            try:\n"
            "                got.append(1 if g(v) else 0)\n"
            "            except (ZeroDivisionError, ValueError, OverflowError, TypeError):\n"
            "                got.append(-1)\n"
            "        for gi, (a, b) in enumerate(zip(got, want)):\n"
            "            n += 1\n"
            "            if a == -1 or b == -1:\n"
            "                skipped += 1\n"
            "            elif a == b:\n"
            "                agree += 1\n"
            "            else:\n"
            "                bad += 1\n"
            "                if bad <= 20:\n"
            "                    print('PY MISMATCH set %d guard %d values %r: python %d, shapeguard %d' % (si, gi, v, a, b), file=sys.stderr)\n"
            "        if -1 not in got and -1 not in want:\n"
            "            lam_checked += 1\n"
            "            if bool(lam(v)) != all(w == 1 for w in want):\n"
            "                bad += 1\n"
            "                print('PY MISMATCH set %d lambda values %r' % (si, v), file=sys.stderr)\n"
            "            if bool(lam_l(frame(srcs, v))) != all(w == 1 for w in want):\n"
            "                bad += 1\n"
            "                print('PY MISMATCH set %d PyTorch-style lambda values %r' % (si, v), file=sys.stderr)\n"
            "print('python: %d guard evaluations, %d agree, %d skipped (python or shapeguard raised), %d whole lambdas (each as v[i] and over L), %d mismatches' % (n, agree, skipped, lam_checked, bad))\n"
            "sys.exit(1 if bad or agree * 2 < n else 0)\n");
    fclose(fc);
    fclose(fp);
    printf("guard_gen: seed %s, %ld sets (%ld with native code), %ld guards, %ld inputs compared (%ld beyond "
           "int64), %ld round trips, %ld explained, %ld guard evaluations raising, %ld C inputs, %ld mismatches\n",
           argv[1], nsets, native_sets, total_guards, compared, exact_big, roundtrips, explained, errors_seen,
           ntests_c, mismatches);
    sg_ctx_free(cq);
    sg_ctx_free(C);
    return mismatches ? 1 : 0;
}
