/* Checking a guard program at call time (guard.h): the int64 interpreter with
 * overflow flags, the batched runs, and the exact path. */
#include <stdlib.h>
#include <string.h>

#include "guard/guard_private.h"
#include "num/num.h"

#if defined(__GNUC__)
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define NOINLINE __attribute__((noinline))
#else
#define LIKELY(x) (x)
#define UNLIKELY(x) (x)
#define NOINLINE
#endif
/* Unroll the loops over the elements of a run kind (-O2 does not). */
#if defined(__clang__)
#define UNROLL4 _Pragma("unroll 4")
#elif defined(__GNUC__)
#define UNROLL4 _Pragma("GCC unroll 4")
#else
#define UNROLL4
#endif

/* 1 if sign(t) is in mask. */
static inline unsigned in_mask(uint32_t mask, int s)
{
    return (mask >> (s + 1)) & 1u;
}

static inline int sgn64(int64_t t)
{
    return (t > 0) - (t < 0);
}

/* ---- run kinds (guard_private.h gives each one's f and why it is exact) --- */

/* The atoms: f from x = v[e->a] and y = v[e->b] (or a constant operand in
 * e->b); *bad set when f overflows int64. */
static inline int64_t f_slot(const gp_elt *e, const int64_t *v, unsigned *bad)
{
    (void)bad;
    return v[e->a];
}

/* Python's x % 2**s is x & (2**s - 1) in two's complement, for any sign. */
static inline int64_t f_modp2(const gp_elt *e, const int64_t *v, unsigned *bad)
{
    (void)bad;
    return v[e->a] & (int64_t)e->b;
}

/* m > 0: C's remainder has x's sign; Python's is in [0, m). */
static inline int64_t f_mod(const gp_elt *e, const int64_t *v, unsigned *bad)
{
    (void)bad;
    int64_t m = e->b, r = v[e->a] % m;
    return r + (r < 0 ? m : 0);
}

/* Python's x // 2**s is the arithmetic shift (>> of a negative int64 is
 * arithmetic in GCC and Clang). */
static inline int64_t f_divp2(const gp_elt *e, const int64_t *v, unsigned *bad)
{
    (void)bad;
    return v[e->a] >> e->b;
}

/* m > 0: C truncates; the floor is one less when the remainder is negative. */
static inline int64_t f_div(const gp_elt *e, const int64_t *v, unsigned *bad)
{
    (void)bad;
    int64_t m = e->b, x = v[e->a];
    return x / m - (x % m < 0);
}

static inline int64_t f_max(const gp_elt *e, const int64_t *v, unsigned *bad)
{
    (void)bad;
    int64_t x = v[e->a], y = v[e->b];
    return x > y ? x : y;
}

static inline int64_t f_min(const gp_elt *e, const int64_t *v, unsigned *bad)
{
    (void)bad;
    int64_t x = v[e->a], y = v[e->b];
    return x < y ? x : y;
}

static inline int64_t f_mul(const gp_elt *e, const int64_t *v, unsigned *bad)
{
    int64_t f;
    *bad |= __builtin_mul_overflow(v[e->a], v[e->b], &f);
    return f;
}

/* x - z wrapped: only tested against {0} or not {0}, where it is exact. */
static inline int64_t f_same(const gp_elt *e, const int64_t *v, unsigned *bad)
{
    (void)bad;
    return (int64_t)((uint64_t)v[e->a] - (uint64_t)v[e->z]);
}

static inline int64_t f_diff(const gp_elt *e, const int64_t *v, unsigned *bad)
{
    int64_t f;
    *bad |= __builtin_sub_overflow(v[e->a], v[e->z], &f);
    return f;
}

/* The kinds with a z term: f = atom + k*z. */
#define Z_TERM(F)                                                                                            \
    static inline int64_t F##_z(const gp_elt *e, const int64_t *v, unsigned *bad)                            \
    {                                                                                                        \
        int64_t t, f;                                                                                        \
        *bad |= __builtin_mul_overflow((int64_t)e->k, v[e->z], &t);                                          \
        *bad |= __builtin_add_overflow(F(e, v, bad), t, &f);                                                 \
        return f;                                                                                            \
    }
Z_TERM(f_slot)
Z_TERM(f_modp2)
Z_TERM(f_mod)
Z_TERM(f_divp2)
Z_TERM(f_div)
Z_TERM(f_max)
Z_TERM(f_min)
Z_TERM(f_mul)

/* Every run kind and its f. */
#define GP_RUN_KINDS(X)                                                                                      \
    X(GP_RUN_SLOT, f_slot)                                                                                   \
    X(GP_RUN_MODP2, f_modp2)                                                                                 \
    X(GP_RUN_MOD, f_mod)                                                                                     \
    X(GP_RUN_DIVP2, f_divp2)                                                                                 \
    X(GP_RUN_DIV, f_div)                                                                                     \
    X(GP_RUN_MAX, f_max)                                                                                     \
    X(GP_RUN_MIN, f_min)                                                                                     \
    X(GP_RUN_MUL, f_mul)                                                                                     \
    X(GP_RUN_SAME, f_same)                                                                                   \
    X(GP_RUN_DIFF, f_diff)                                                                                   \
    X(GP_RUN_LIN, f_slot_z)                                                                                  \
    X(GP_RUN_MODP2_Z, f_modp2_z)                                                                             \
    X(GP_RUN_MOD_Z, f_mod_z)                                                                                 \
    X(GP_RUN_DIVP2_Z, f_divp2_z)                                                                             \
    X(GP_RUN_DIV_Z, f_div_z)                                                                                 \
    X(GP_RUN_MAX_Z, f_max_z)                                                                                 \
    X(GP_RUN_MIN_Z, f_min_z)                                                                                 \
    X(GP_RUN_MUL_Z, f_mul_z)

/* 1 if f is in e's set (an interval modulo 2**64). */
static inline unsigned in_set(const gp_elt *e, int64_t f)
{
    return (uint64_t)f - e->lo <= e->span;
}

/* Per kind F: all_F, 1 if every element of e[0 .. n-1] holds and none
 * overflows (no branch per element); scan_F, the first element that does
 * not hold or overflows, or n (blocks of 16 without branches, then a scan of
 * the block that failed); one_F, element e: 1 if it holds, *bad if it
 * overflows. */
#define RUN_FNS(K, F)                                                                                        \
    static inline unsigned all_##F(const gp_elt *e, size_t n, const int64_t *v)                             \
    {                                                                                                        \
        unsigned ok = 1, bad = 0;                                                                            \
        UNROLL4                                                                                              \
        for (size_t j = 0; j < n; j++)                                                                       \
            ok &= in_set(e + j, F(e + j, v, &bad));                                                          \
        return ok & !bad;                                                                                    \
    }                                                                                                        \
    static inline unsigned one_##F(const gp_elt *e, const int64_t *v, unsigned *bad)                        \
    {                                                                                                        \
        return in_set(e, F(e, v, bad));                                                                      \
    }                                                                                                        \
    static inline size_t scan_##F(const gp_elt *e, size_t n, const int64_t *v)                              \
    {                                                                                                        \
        for (size_t j0 = 0; j0 < n; j0 += 16) {                                                              \
            size_t j1 = n - j0 > 16 ? j0 + 16 : n;                                                           \
            if (UNLIKELY(!all_##F(e + j0, j1 - j0, v)))                                                      \
                for (size_t j = j0;; j++) {                                                                  \
                    unsigned bad = 0;                                                                        \
                    if (!one_##F(e + j, v, &bad) || bad)                                                     \
                        return j;                                                                            \
                }                                                                                            \
        }                                                                                                    \
        return n;                                                                                            \
    }
GP_RUN_KINDS(RUN_FNS)

static size_t scan_run(gp_op k, const gp_elt *e, size_t n, const int64_t *v)
{
    switch (k) {
#define SCAN_CASE(K, F)                                                                                      \
    case K:                                                                                                  \
        return scan_##F(e, n, v);
        GP_RUN_KINDS(SCAN_CASE)
    default:
        return n;
    }
}

static unsigned one_run(gp_op k, const gp_elt *e, const int64_t *v, unsigned *bad)
{
    switch (k) {
#define ONE_CASE(K, F)                                                                                       \
    case K:                                                                                                  \
        return one_##F(e, v, bad);
        GP_RUN_KINDS(ONE_CASE)
    default:
        return 0;
    }
}

/* Every batched guard holds and none overflows (all the elements of each
 * kind that has any, in one loop per kind): the first half of the pass that
 * assumes every guard holds. */
static inline bool runs_hold(const sg_guard_prog *p, const int64_t *v)
{
    unsigned ok = 1;
    for (size_t i = 0; i < p->nused; i++) {
        gp_op k = (gp_op)p->used[i];
        switch (k) {
#define ALL_CASE(K, F)                                                                                       \
    case K:                                                                                                  \
        ok &= all_##F(p->elts[K], p->nelts[K], v);                                                           \
        break;
            GP_RUN_KINDS(ALL_CASE)
        default:
            break;
        }
    }
    return ok;
}

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
    const uint32_t *op = p->opnd;
    const int64_t *cf = p->coef;
    uint32_t first_bail = UINT32_MAX;
    bool bad = false;
    fmpz *xv = NULL;
    int res = SG_GUARD_PASS;
    uint32_t g = 0;
    for (; I < end; I++) {
        switch ((gp_op)I->op) {
        case GP_RUN_SLOT: case GP_RUN_MODP2: case GP_RUN_MOD: case GP_RUN_DIVP2: case GP_RUN_DIV:
        case GP_RUN_MAX: case GP_RUN_MIN: case GP_RUN_MUL: case GP_RUN_SAME: case GP_RUN_DIFF:
        case GP_RUN_LIN:
        case GP_RUN_MODP2_Z: case GP_RUN_MOD_Z: case GP_RUN_DIVP2_Z: case GP_RUN_DIV_Z:
        case GP_RUN_MAX_Z: case GP_RUN_MIN_Z: case GP_RUN_MUL_Z: {
            /* a run: an element that overflows is evaluated exactly (it
             * reads no register, so later guards need not know) */
            const gp_elt *e = p->elts[I->op] + I->off;
            for (uint32_t j = 0; j < I->n; j++) {
                j += (uint32_t)scan_run((gp_op)I->op, e + j, I->n - j, v);
                if (j == I->n)
                    break;
                unsigned bad = 0;
                one_run((gp_op)I->op, e + j, v, &bad);
                g = I->b + j;
                if (!bad) {
                    res = SG_GUARD_FAIL;
                    goto done;
                }
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
        case GP_NOPS:
            break;
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

/* The rest of a check once the runs are done (runs_ok: they all hold): the
 * register pass that assumes every guard holds, then, when a guard does not
 * hold or raises, the ordered program. */
static int check_regs(const sg_guard_prog *p, const int64_t *v, size_t *failed, int64_t *r, bool runs_ok)
{
    int res = runs_ok ? run(p, v, failed, r, true) : RETRY;
    return res == RETRY ? run(p, v, failed, r, false) : res;
}

/* check_regs with a register file on the stack or in the heap: out of line,
 * so that the entry of a check whose guards are all batched keeps a small
 * frame. */
static NOINLINE int check_regs_own(const sg_guard_prog *p, const int64_t *v, size_t *failed, bool runs_ok)
{
    if (p->nregs <= SG_GUARD_STACK_REGS) {
        int64_t regs[SG_GUARD_STACK_REGS];
        return check_regs(p, v, failed, regs, runs_ok);
    }
    int64_t *regs = malloc(p->nregs * sizeof *regs);
    if (!regs)
        return SG_ENOMEM;
    int res = check_regs(p, v, failed, regs, runs_ok);
    free(regs);
    return res;
}

int sg_guard_prog_check_scratch(const sg_guard_prog *p, const int64_t *v, size_t nv, size_t *failed,
                                int64_t *scratch, size_t nscratch)
{
    if (!p || (p->nslots && !v) || nv < p->nslots || (p->nregs && (!scratch || nscratch < p->nregs)))
        return SG_EINVAL;
    bool runs_ok = runs_hold(p, v);
    if (LIKELY(runs_ok) && !p->nreg_insns)
        return SG_GUARD_PASS;
    return check_regs(p, v, failed, scratch, runs_ok);
}

int sg_guard_prog_check(const sg_guard_prog *p, const int64_t *v, size_t nv, size_t *failed)
{
    if (UNLIKELY(!p || (p->nslots && !v) || nv < p->nslots))
        return SG_EINVAL;
    bool runs_ok = runs_hold(p, v);
    if (LIKELY(runs_ok) && !p->nreg_insns)
        return SG_GUARD_PASS;
    return check_regs_own(p, v, failed, runs_ok);
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
