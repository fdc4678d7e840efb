/* Checking a guard program at call time (guard.h): the int64 interpreter with
 * overflow flags, the batched runs, and the exact path. */
#include <stdlib.h>
#include <string.h>

#include "guard/guard_private.h"
#include "num/num.h"

#if defined(__GNUC__)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define UNLIKELY(x) (x)
#endif

typedef __int128 i128;

/* 1 if sign(t) is in mask. */
static inline unsigned in_mask(uint32_t mask, int s)
{
    return (mask >> (s + 1)) & 1u;
}

static inline int sgn64(int64_t t)
{
    return (t > 0) - (t < 0);
}

static inline unsigned run1_ok(const gp_run1 *e, const int64_t *v)
{
    int64_t x = v[e->a];
    return in_mask(e->mask, (x > e->d) - (x < e->d));
}

static inline unsigned run2_ok(const gp_run2 *e, const int64_t *v)
{
    i128 t = (i128)v[e->a] - v[e->b] + e->c;
    return in_mask(e->mask, (t > 0) - (t < 0));
}

static inline unsigned runl_ok(const gp_runl *e, const int64_t *v)
{
    i128 t = (i128)e->k1 * v[e->a] + (i128)e->k2 * v[e->b] + e->c;
    return in_mask(e->mask, (t > 0) - (t < 0));
}

/* The index of the first element of a run that fails, or n: blocks of 16
 * without branches, then a scan of the block that failed. */
#define RUN_SCAN(NAME, TYPE, OK)                                                                      \
    static size_t NAME(const TYPE *e, size_t n, const int64_t *v)                                     \
    {                                                                                                 \
        for (size_t j0 = 0; j0 < n; j0 += 16) {                                                       \
            size_t j1 = n - j0 > 16 ? j0 + 16 : n;                                                    \
            unsigned ok = 1;                                                                          \
            for (size_t j = j0; j < j1; j++)                                                          \
                ok &= OK(e + j, v);                                                                   \
            if (UNLIKELY(!ok))                                                                        \
                for (size_t j = j0;; j++)                                                             \
                    if (!OK(e + j, v))                                                                \
                        return j;                                                                     \
        }                                                                                             \
        return n;                                                                                     \
    }
RUN_SCAN(scan1, gp_run1, run1_ok)
RUN_SCAN(scan2, gp_run2, run2_ok)
RUN_SCAN(scanl, gp_runl, runl_ok)

/* b ** e for e >= 0 in int64: false on overflow. */
static bool ipow(int64_t *r, int64_t b, int64_t e)
{
    if (b == 0 || b == 1) {
        *r = e == 0 ? 1 : b;
        return true;
    }
    if (b == -1) {
        *r = (e & 1) ? -1 : 1;
        return true;
    }
    if (e >= 64)
        return false;
    int64_t acc = 1;
    while (e) {
        if ((e & 1) && __builtin_mul_overflow(acc, b, &acc))
            return false;
        e >>= 1;
        if (e && __builtin_mul_overflow(b, b, &b))
            return false;
    }
    *r = acc;
    return true;
}

/* ---- the exact path ------------------------------------------------------- */

int sg__gp_eval_exact(const sg_guard_prog *p, size_t g, const fmpz *xv)
{
    fmpz_t r;
    fmpz_init(r);
    sg_status s = sg__eval_fmpz(r, p->guards[g], &p->slotmap, xv, p->max_bits);
    int res = s ? (int)s : fmpz_is_zero(r) ? SG_GUARD_FAIL : SG_GUARD_PASS;
    fmpz_clear(r);
    return res;
}

static fmpz *exact_values(const sg_guard_prog *p, const int64_t *v)
{
    fmpz *xv = malloc((p->nslots ? p->nslots : 1) * sizeof *xv);
    if (xv)
        for (size_t i = 0; i < p->nslots; i++) {
            fmpz_init(xv + i);
            fmpz_set_si(xv + i, v[i]);
        }
    return xv;
}

static void free_values(fmpz *xv, size_t n)
{
    if (!xv)
        return;
    for (size_t i = 0; i < n; i++)
        fmpz_clear(xv + i);
    free(xv);
}

/* ---- the interpreter ------------------------------------------------------- */

/* The ordered program (insns) or, with fast, the pass that assumes every guard
 * holds (reg_insns after the runs): RETRY there when something does not. */
#define RETRY 2

static int run(const sg_guard_prog *p, const int64_t *v, size_t *failed, int64_t *r, bool fast)
{
    const gp_insn *I = fast ? p->reg_insns : p->insns, *end = fast ? I + p->nreg_insns : I + p->ninsns;
    if (fast && (scan1(p->run1, p->nrun1, v) < p->nrun1 || scan2(p->run2, p->nrun2, v) < p->nrun2 ||
                 scanl(p->runl, p->nrunl, v) < p->nrunl))
        return RETRY;
    const uint32_t *op = p->opnd;
    const int64_t *cf = p->coef;
    uint32_t first_bail = UINT32_MAX;
    bool bad = false;
    fmpz *xv = NULL;
    int res = SG_GUARD_PASS;
    uint32_t g = 0;
    for (; I < end; I++) {
        switch ((gp_op)I->op) {
        case GP_RUN1: {
            size_t j = scan1(p->run1 + I->off, I->n, v);
            if (UNLIKELY(j < I->n)) {
                g = I->b + (uint32_t)j;
                res = SG_GUARD_FAIL;
                goto done;
            }
            break;
        }
        case GP_RUN2: {
            size_t j = scan2(p->run2 + I->off, I->n, v);
            if (UNLIKELY(j < I->n)) {
                g = I->b + (uint32_t)j;
                res = SG_GUARD_FAIL;
                goto done;
            }
            break;
        }
        case GP_RUNL: {
            size_t j = scanl(p->runl + I->off, I->n, v);
            if (UNLIKELY(j < I->n)) {
                g = I->b + (uint32_t)j;
                res = SG_GUARD_FAIL;
                goto done;
            }
            break;
        }
        case GP_LOAD:
            r[I->dst] = v[I->a];
            break;
        case GP_CONST:
            r[I->dst] = I->k;
            break;
        case GP_ADD: {
            int64_t acc = I->k, t;
            for (uint32_t j = I->off, e = I->off + I->n; j < e; j++) {
                bad |= __builtin_mul_overflow(cf[j], r[op[j]], &t);
                bad |= __builtin_add_overflow(acc, t, &acc);
            }
            r[I->dst] = acc;
            break;
        }
        case GP_MUL: {
            int64_t acc = 1, t = 0;
            for (uint32_t j = I->off, e = I->off + I->n; j < e; j++) {
                bad |= !ipow(&t, r[op[j]], cf[j]);
                bad |= __builtin_mul_overflow(acc, t, &acc);
            }
            r[I->dst] = acc;
            break;
        }
        case GP_POW: {
            int64_t t = 0;
            bad |= r[I->b] < 0 || !ipow(&t, r[I->a], r[I->b]);
            r[I->dst] = t;
            break;
        }
        case GP_FLOORDIV: {
            int64_t t = 0;
            bad |= !sg__i64_floordiv(&t, r[I->a], r[I->b]);
            r[I->dst] = t;
            break;
        }
        case GP_MOD: {
            int64_t t = 0;
            bad |= !sg__i64_mod(&t, r[I->a], r[I->b]);
            r[I->dst] = t;
            break;
        }
        case GP_CLEANDIV: {
            int64_t t = 0, m = 1;
            bad |= !sg__i64_truncmod(&m, r[I->a], r[I->b]) || m != 0 || !sg__i64_truncdiv(&t, r[I->a], r[I->b]);
            r[I->dst] = t;
            break;
        }
        case GP_TRUNCDIV: {
            int64_t t = 0;
            bad |= !sg__i64_truncdiv(&t, r[I->a], r[I->b]);
            r[I->dst] = t;
            break;
        }
        case GP_TRUNCMOD: {
            int64_t t = 0;
            bad |= !sg__i64_truncmod(&t, r[I->a], r[I->b]);
            r[I->dst] = t;
            break;
        }
        case GP_MIN:
        case GP_MAX: {
            int64_t acc = r[op[I->off]];
            for (uint32_t j = I->off + 1, e = I->off + I->n; j < e; j++) {
                int64_t x = r[op[j]];
                acc = (I->op == GP_MIN) == (x < acc) ? x : acc;
            }
            r[I->dst] = acc;
            break;
        }
        case GP_BAND:
        case GP_BOR:
        case GP_BXOR: {
            int64_t acc = r[op[I->off]];
            for (uint32_t j = I->off + 1, e = I->off + I->n; j < e; j++)
                acc = I->op == GP_BAND ? acc & r[op[j]] : I->op == GP_BOR ? acc | r[op[j]] : acc ^ r[op[j]];
            r[I->dst] = acc;
            break;
        }
        case GP_AND:
        case GP_OR: {
            bool want = I->op == GP_OR, got = !want;
            for (uint32_t j = I->off, e = I->off + I->n; j < e; j++)
                if ((r[op[j]] != 0) == want)
                    got = want;
            r[I->dst] = got;
            break;
        }
        case GP_ABS: {
            int64_t x = r[I->a];
            bad |= x == INT64_MIN;
            r[I->dst] = x < 0 ? -(x + (x == INT64_MIN)) : x;
            break;
        }
        case GP_WHERE:
            r[I->dst] = r[I->a] ? r[I->b] : r[I->c];
            break;
        case GP_REL:
            r[I->dst] = in_mask(I->mask, sgn64(r[I->a]));
            break;
        case GP_TEST:
        case GP_TESTREL: {
            g = I->b;
            if (UNLIKELY(bad || p->dep1[g] > first_bail))
                goto slow;
            if (UNLIKELY(I->op == GP_TEST ? r[I->a] == 0 : !in_mask(I->mask, sgn64(r[I->a])))) {
                res = SG_GUARD_FAIL;
                goto done;
            }
            break;
        }
        case GP_EXACT:
            g = I->b;
            goto slow;
        case GP_FALSE:
            g = I->b;
            res = SG_GUARD_FAIL;
            goto done;
        }
        continue;
    slow:
        bad = false;
        if (first_bail == UINT32_MAX)
            first_bail = g;
        if (!xv && !(xv = exact_values(p, v))) {
            res = SG_ENOMEM;
            goto out;
        }
        res = sg__gp_eval_exact(p, g, xv);
        if (res != SG_GUARD_PASS) {
            if (res == SG_ENOMEM)
                goto out;
            goto done;
        }
    }
    res = SG_GUARD_PASS;
    goto out;
done:
    if (fast && res != SG_ENOMEM) {
        res = RETRY;
        goto out;
    }
    if (failed)
        *failed = g;
out:
    free_values(xv, p->nslots);
    return res;
}

/* ---- public API -------------------------------------------------------------- */

int sg_guard_prog_check_scratch(const sg_guard_prog *p, const int64_t *v, size_t nv, size_t *failed,
                                int64_t *scratch, size_t nscratch)
{
    if (!p || (p->nslots && !v) || nv < p->nslots || (p->nregs && (!scratch || nscratch < p->nregs)))
        return SG_EINVAL;
    int res = run(p, v, failed, scratch, true);
    return res == RETRY ? run(p, v, failed, scratch, false) : res;
}

int sg_guard_prog_check(const sg_guard_prog *p, const int64_t *v, size_t nv, size_t *failed)
{
    if (!p || (p->nslots && !v) || nv < p->nslots)
        return SG_EINVAL;
    if (p->nregs <= SG_GUARD_STACK_REGS) {
        int64_t regs[SG_GUARD_STACK_REGS];
        int res = run(p, v, failed, regs, true);
        return res == RETRY ? run(p, v, failed, regs, false) : res;
    }
    int64_t *regs = malloc(p->nregs * sizeof *regs);
    if (!regs)
        return SG_ENOMEM;
    int res = run(p, v, failed, regs, true);
    if (res == RETRY)
        res = run(p, v, failed, regs, false);
    free(regs);
    return res;
}

int sg_guard_prog_check_exact(const sg_guard_prog *p, const sg_expr *const *vals, size_t nv, size_t *failed)
{
    if (!p || (p->nslots && !vals) || nv < p->nslots)
        return SG_EINVAL;
    bool small = true;
    for (size_t i = 0; i < p->nslots; i++) {
        if (!vals[i] || vals[i]->op != SG_OP_INT)
            return SG_EINVAL;
        small = small && fmpz_fits_si(&vals[i]->u.val);
    }
    if (small) {
        int64_t *v = malloc((p->nslots ? p->nslots : 1) * sizeof *v);
        if (!v)
            return SG_ENOMEM;
        for (size_t i = 0; i < p->nslots; i++)
            v[i] = fmpz_get_si(&vals[i]->u.val);
        int res = sg_guard_prog_check(p, v, p->nslots, failed);
        free(v);
        return res;
    }
    fmpz *xv = malloc(p->nslots * sizeof *xv);
    if (!xv)
        return SG_ENOMEM;
    for (size_t i = 0; i < p->nslots; i++)
        fmpz_init_set(xv + i, &vals[i]->u.val);
    int res = SG_GUARD_PASS;
    for (size_t g = 0; g < p->nguards && res == SG_GUARD_PASS; g++) {
        res = sg__gp_eval_exact(p, g, xv);
        if (res != SG_GUARD_PASS && res != SG_ENOMEM && failed)
            *failed = g;
    }
    free_values(xv, p->nslots);
    return res;
}
