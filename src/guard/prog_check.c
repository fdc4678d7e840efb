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
#define UNREACHABLE() __builtin_unreachable()
#define HOT_INLINE static inline __attribute__((always_inline))
#else
#define LIKELY(x) (x)
#define UNLIKELY(x) (x)
#define NOINLINE
#define UNREACHABLE() ((void)0)
#define HOT_INLINE static inline
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

/* The atoms: *f from x = v[e->a] and y = v[e->b] (or a constant operand in
 * e->b); true when f overflows int64 (then *f is undefined). Written so
 * that an overflow is a jump (jo) in the loops below, not a flag. */
HOT_INLINE bool f_slot(const gp_elt *e, const int64_t *v, int64_t *f)
{
    *f = v[e->a];
    return false;
}

/* Python's x % 2**s is x & (2**s - 1) in two's complement, for any sign. */
HOT_INLINE bool f_modp2(const gp_elt *e, const int64_t *v, int64_t *f)
{
    *f = v[e->a] & (int64_t)e->b;
    return false;
}

/* m > 0: C's remainder has x's sign; Python's is in [0, m). */
HOT_INLINE bool f_mod(const gp_elt *e, const int64_t *v, int64_t *f)
{
    int64_t m = e->b, r = v[e->a] % m;
    *f = r + (r < 0 ? m : 0);
    return false;
}

/* Python's x // 2**s is the arithmetic shift (>> of a negative int64 is
 * arithmetic in GCC and Clang). */
HOT_INLINE bool f_divp2(const gp_elt *e, const int64_t *v, int64_t *f)
{
    *f = v[e->a] >> e->b;
    return false;
}

/* m > 0: C truncates; the floor is one less when the remainder is negative. */
HOT_INLINE bool f_div(const gp_elt *e, const int64_t *v, int64_t *f)
{
    int64_t m = e->b, x = v[e->a];
    *f = x / m - (x % m < 0);
    return false;
}

HOT_INLINE bool f_max(const gp_elt *e, const int64_t *v, int64_t *f)
{
    int64_t x = v[e->a], y = v[e->b];
    *f = x > y ? x : y;
    return false;
}

HOT_INLINE bool f_min(const gp_elt *e, const int64_t *v, int64_t *f)
{
    int64_t x = v[e->a], y = v[e->b];
    *f = x < y ? x : y;
    return false;
}

HOT_INLINE bool f_mul(const gp_elt *e, const int64_t *v, int64_t *f)
{
    return __builtin_mul_overflow(v[e->a], v[e->b], f);
}

/* x - z wrapped: 0 iff x == z (GP_RUN_SAME, GP_RUN_NSAME). */
HOT_INLINE bool f_same(const gp_elt *e, const int64_t *v, int64_t *f)
{
    *f = (int64_t)((uint64_t)v[e->a] - (uint64_t)v[e->z]);
    return false;
}

HOT_INLINE bool f_diff(const gp_elt *e, const int64_t *v, int64_t *f)
{
    return __builtin_sub_overflow(v[e->a], v[e->z], f);
}

/* The kinds with a z term: f = atom + k*z. k*z overflows for k = -1 only at
 * z = INT64_MIN, where atom - z may not: then f is that (the native pass
 * subtracts z for k = -1, and both passes must decide the same guards). */
#define Z_TERM(F)                                                                                            \
    HOT_INLINE bool F##_z(const gp_elt *e, const int64_t *v, int64_t *f)                                     \
    {                                                                                                        \
        int64_t a, t;                                                                                        \
        if (F(e, v, &a))                                                                                     \
            return true;                                                                                     \
        if (UNLIKELY(__builtin_mul_overflow((int64_t)e->k, v[e->z], &t)))                                    \
            return e->k != -1 || __builtin_sub_overflow(a, v[e->z], f);                                      \
        return __builtin_add_overflow(a, t, f);                                                              \
    }
Z_TERM(f_slot)
Z_TERM(f_modp2)
Z_TERM(f_mod)
Z_TERM(f_divp2)
Z_TERM(f_div)
Z_TERM(f_max)
Z_TERM(f_min)
Z_TERM(f_mul)

/* The tests of f: true when the guard does not hold. */
HOT_INLINE bool out_set(const gp_elt *e, int64_t f)
{
    return (uint64_t)f - e->lo > e->span; /* f is not in the interval modulo 2**64 */
}

HOT_INLINE bool out_eq0(const gp_elt *e, int64_t f)
{
    (void)e;
    return f != 0;
}

HOT_INLINE bool out_ne0(const gp_elt *e, int64_t f)
{
    (void)e;
    return f == 0;
}

/* Every run kind, its f and its test. */
#define GP_RUN_KINDS(X)                                                                                      \
    X(GP_RUN_SLOT, f_slot, out_set)                                                                          \
    X(GP_RUN_MODP2, f_modp2, out_set)                                                                        \
    X(GP_RUN_MOD, f_mod, out_set)                                                                            \
    X(GP_RUN_DIVP2, f_divp2, out_set)                                                                        \
    X(GP_RUN_DIV, f_div, out_set)                                                                            \
    X(GP_RUN_MAX, f_max, out_set)                                                                            \
    X(GP_RUN_MIN, f_min, out_set)                                                                            \
    X(GP_RUN_MUL, f_mul, out_set)                                                                            \
    X(GP_RUN_SAME, f_same, out_eq0)                                                                          \
    X(GP_RUN_NSAME, f_same, out_ne0)                                                                         \
    X(GP_RUN_DIFF, f_diff, out_set)                                                                          \
    X(GP_RUN_LIN, f_slot_z, out_set)                                                                         \
    X(GP_RUN_MODP2_Z, f_modp2_z, out_set)                                                                    \
    X(GP_RUN_MOD_Z, f_mod_z, out_set)                                                                        \
    X(GP_RUN_DIVP2_Z, f_divp2_z, out_set)                                                                    \
    X(GP_RUN_DIV_Z, f_div_z, out_set)                                                                        \
    X(GP_RUN_MAX_Z, f_max_z, out_set)                                                                        \
    X(GP_RUN_MIN_Z, f_min_z, out_set)                                                                        \
    X(GP_RUN_MUL_Z, f_mul_z, out_set)

/* Element e: true when it does not hold or overflows (then *f is undefined). */
#define MISSES(F, T, e, v, f) (F(e, v, f) || T(e, *(f)))

/* Per kind K: scan_K, the first element of e[0 .. n-1] that does not hold or
 * overflows, or n; one_K, element e: 1 if it holds, *bad if it overflows. */
#define RUN_FNS(K, F, T)                                                                                     \
    static inline unsigned one_##K(const gp_elt *e, const int64_t *v, unsigned *bad)                         \
    {                                                                                                        \
        int64_t f;                                                                                           \
        if (F(e, v, &f)) {                                                                                   \
            *bad = 1;                                                                                        \
            return 0;                                                                                        \
        }                                                                                                    \
        return !T(e, f);                                                                                     \
    }                                                                                                        \
    static inline size_t scan_##K(const gp_elt *e, size_t n, const int64_t *v)                               \
    {                                                                                                        \
        for (size_t j = 0; j < n; j++) {                                                                     \
            int64_t f;                                                                                       \
            if (UNLIKELY(MISSES(F, T, e + j, v, &f)))                                                        \
                return j;                                                                                    \
        }                                                                                                    \
        return n;                                                                                            \
    }
GP_RUN_KINDS(RUN_FNS)

static size_t scan_run(gp_op k, const gp_elt *e, size_t n, const int64_t *v)
{
    switch (k) {
#define SCAN_CASE(K, F, T)                                                                                   \
    case K:                                                                                                  \
        return scan_##K(e, n, v);
        GP_RUN_KINDS(SCAN_CASE)
    default:
        return n;
    }
}

static unsigned one_run(gp_op k, const gp_elt *e, const int64_t *v, unsigned *bad)
{
    switch (k) {
#define ONE_CASE(K, F, T)                                                                                    \
    case K:                                                                                                  \
        return one_##K(e, v, bad);
        GP_RUN_KINDS(ONE_CASE)
    default:
        return 0;
    }
}

/* The elements of each kind that has any (p->segs), in one loop per kind
 * over p->fast: one compare and one branch per guard (as the C has), not
 * taken when the guard holds; the first that does not hold or overflows
 * ends the pass (the ordered program then finds the answer). With GCC and
 * Clang the segments are threaded: each segment's loop jumps straight to the
 * next segment's, one indirect jump per kind used; else a switch in a loop.
 * (Unrolling these loops gained nothing measurable: the loads bound them.) */
#define SEG_LOOP(F, T)                                                                                       \
    do {                                                                                                     \
        int64_t f_;                                                                                          \
        if (UNLIKELY(MISSES(F, T, e, v, &f_)))                                                               \
            goto not_all;                                                                                    \
    } while (++e != s->end)

/* The pass that assumes every guard holds, interpreted (gp_pass_fn, as the
 * native pass of prog_native.c): 0 when a batched guard does not hold or
 * overflows, else 1 when the batched guards are the whole program, 2 when
 * reg_insns follow. Not inlined: it holds the address of its labels. */
static NOINLINE int first_pass(const sg_guard_prog *p, const int64_t *v)
{
    const gp_elt *e = p->fast;
    const gp_seg *s = p->segs;
#if defined(__GNUC__)
#define SEG_LABEL(K, F, T) [K] = &&seg_##K,
    static const void *const next[GP_SEG_END + 2] = {
        GP_RUN_KINDS(SEG_LABEL)[GP_SEG_END] = &&segs_pass, [GP_SEG_END + 1] = &&segs_regs};
    goto *next[s->entry];
#define SEG_CODE(K, F, T)                                                                                    \
    seg_##K:                                                                                                 \
    SEG_LOOP(F, T);                                                                                          \
    s++;                                                                                                     \
    goto *next[s->entry];
    GP_RUN_KINDS(SEG_CODE)
segs_pass:
    return 1;
segs_regs:
    return 2;
#else
    for (;; s++) {
        switch ((gp_op)s->entry) {
#define SEG_CASE(K, F, T)                                                                                    \
    case K:                                                                                                  \
        SEG_LOOP(F, T);                                                                                      \
        continue;
            GP_RUN_KINDS(SEG_CASE)
        default:
            break;
        }
        break;
    }
    return s->entry == GP_SEG_END ? 1 : 2;
#endif
not_all:
    return 0;
}

/* What follows a first pass that did not show that every guard holds (pass
 * 0 or 2): the register pass (reg_insns) after runs that hold, then the
 * ordered program. The registers are scratch or, when it is NULL, a file of
 * check_regs_own's. */
static int check_regs(const sg_guard_prog *p, const int64_t *v, size_t *failed, int64_t *r, bool runs_ok);
static NOINLINE int check_regs_own(const sg_guard_prog *p, const int64_t *v, size_t *failed, bool runs_ok);

static NOINLINE int after_pass(const sg_guard_prog *p, const int64_t *v, size_t *failed, int64_t *scratch,
                               int pass)
{
    return scratch ? check_regs(p, v, failed, scratch, pass == 2) : check_regs_own(p, v, failed, pass == 2);
}

/* The first pass, native when p has it. */
HOT_INLINE int any_pass(const sg_guard_prog *p, const int64_t *v)
{
    return p->native ? p->native(p, v) : first_pass(p, v);
}

int sg__gp_first_pass(const sg_guard_prog *p, const int64_t *v)
{
    return any_pass(p, v);
}

/* The first pass, then the rest when needed. */
HOT_INLINE int check(const sg_guard_prog *p, const int64_t *v, size_t *failed, int64_t *scratch)
{
    int pass = any_pass(p, v);
    if (LIKELY(pass == 1))
        return SG_GUARD_PASS;
    return after_pass(p, v, failed, scratch, pass);
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
    sg_ctx *ctx = p->ctx;
    fmpz *xv = sg__malloc(ctx, (p->nslots ? p->nslots : 1) * sizeof *xv);
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
    sg_free(xv);
}

/* Guard g evaluated exactly; the slot values are made exact once, in *xv. */
static int exact_guard(const sg_guard_prog *p, uint32_t g, const int64_t *v, fmpz **xv)
{
    if (!*xv && !(*xv = exact_values(p, v)))
        return SG_ENOMEM;
    return sg__gp_eval_exact(p, g, *xv);
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
        case GP_RUN_MAX: case GP_RUN_MIN: case GP_RUN_MUL: case GP_RUN_SAME: case GP_RUN_NSAME: case GP_RUN_DIFF:
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
                res = exact_guard(p, g, v, &xv);
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
        res = exact_guard(p, g, v, &xv);
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

/* check_regs with a file of SG_GUARD_STACK_REGS registers on the stack. */
static NOINLINE int check_regs_stack(const sg_guard_prog *p, const int64_t *v, size_t *failed, bool runs_ok)
{
    int64_t regs[SG_GUARD_STACK_REGS];
    return check_regs(p, v, failed, regs, runs_ok);
}

/* check_regs with a register file of its own: a small one in this frame
 * (the usual case), a large one on the stack, or one in the heap. Out of
 * line, so that the first pass keeps a small frame. */
static NOINLINE int check_regs_own(const sg_guard_prog *p, const int64_t *v, size_t *failed, bool runs_ok)
{
    sg_ctx *ctx = p->ctx;
    if (p->nregs <= 32) {
        int64_t regs[32];
        return check_regs(p, v, failed, regs, runs_ok);
    }
    if (p->nregs <= SG_GUARD_STACK_REGS)
        return check_regs_stack(p, v, failed, runs_ok);
    int64_t *regs = sg__malloc(ctx, p->nregs * sizeof *regs);
    if (!regs)
        return SG_ENOMEM;
    int res = check_regs(p, v, failed, regs, runs_ok);
    sg_free(regs);
    return res;
}

int sg_guard_prog_check_scratch(const sg_guard_prog *p, const int64_t *v, size_t nv, size_t *failed,
                                int64_t *scratch, size_t nscratch)
{
    if (!p || (p->nslots && !v) || nv < p->nslots || (p->nregs && (!scratch || nscratch < p->nregs)))
        return SG_EINVAL;
    return check(p, v, failed, scratch); /* NULL only when no register is needed */
}

int sg_guard_prog_check(const sg_guard_prog *p, const int64_t *v, size_t nv, size_t *failed)
{
    if (UNLIKELY(!p || nv < p->nslots || (!v && p->nslots)))
        return SG_EINVAL;
    return check(p, v, failed, NULL);
}

int sg_guard_prog_check_exact(const sg_guard_prog *p, const sg_expr *const *vals, size_t nv, size_t *failed)
{
    sg_ctx *ctx = p ? p->ctx : NULL;
    if (!p || (p->nslots && !vals) || nv < p->nslots)
        return SG_EINVAL;
    bool small = true;
    for (size_t i = 0; i < p->nslots; i++) {
        if (!vals[i] || vals[i]->op != SG_OP_INT)
            return SG_EINVAL;
        small = small && fmpz_fits_si(&vals[i]->u.val);
    }
    if (small) {
        int64_t *v = sg__malloc(ctx, (p->nslots ? p->nslots : 1) * sizeof *v);
        if (!v)
            return SG_ENOMEM;
        for (size_t i = 0; i < p->nslots; i++)
            v[i] = fmpz_get_si(&vals[i]->u.val);
        int res = sg_guard_prog_check(p, v, p->nslots, failed);
        sg_free(v);
        return res;
    }
    fmpz *xv = sg__malloc(ctx, p->nslots * sizeof *xv);
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
