/* Private definitions of the guard layer: the layout of a compiled guard
 * program (guard.h) and what its files share. */
#ifndef SG_GUARD_PRIVATE_H
#define SG_GUARD_PRIVATE_H

#include "expr/expr_private.h"
#include "shapeguard/guard.h"

/* A program is a straight-line sequence of instructions over a register file
 * of int64 words, in guard order:
 *
 *   - batched runs (GP_RUN1, GP_RUN2, GP_RUNL): consecutive guards that are
 *     each a relation p REL 0 with p linear in at most two slots and small
 *     coefficients. A run is checked without branches per guard, in 128-bit
 *     arithmetic where it needs it, so it never overflows; the first failing
 *     guard of a run is found by a second scan.
 *   - register instructions: one per distinct node of the other guards (the
 *     node of a sub-expression shared by guards is computed once), in int64
 *     with every overflow or domain error noted in a flag, then GP_TEST or
 *     GP_TESTREL for the guard. A flagged guard is evaluated again exactly
 *     (sg__eval_fmpz on its expression).
 *   - GP_EXACT: a guard with a constant beyond int64, always exact;
 *     GP_FALSE: a guard that is the constant false.
 *
 * Registers are reused once their node has no later use. A guard that reads a
 * register computed by an earlier guard depends on it (dep1 = 1 + the latest
 * such guard, 0 for none); once a guard took the exact path in a check, its
 * registers may be garbage, so every later guard that depends on it or on a
 * later one is evaluated exactly too.
 *
 * A check first makes a pass that assumes every guard holds (the hot case):
 * all elements of each run kind in one branch-free loop (p->run1 holds the
 * elements of every GP_RUN1 in guard order, and so on), then reg_insns. Only
 * when something fails or raises does it run the ordered program to find the
 * first guard that does not hold; guards have no side effects, so the order
 * of the first pass changes no answer. */

/* Sign codes of a value t: bit 0 t < 0, bit 1 t == 0, bit 2 t > 0. A relation
 * mask is the set of signs for which p REL 0 holds. */
#define GP_LT 1u
#define GP_EQ 2u
#define GP_GT 4u
#define GP_MASK_GE0 (GP_EQ | GP_GT)
#define GP_MASK_EQ0 GP_EQ
#define GP_MASK_NE0 (GP_LT | GP_GT)

typedef enum gp_op {
    GP_RUN1,   /* n guards from b: sign(v[a] - d) in mask (gp_run1 from off) */
    GP_RUN2,   /* n guards from b: sign(v[a] - v[b] + c) in mask (gp_run2 from off) */
    GP_RUNL,   /* n guards from b: sign(k1*v[a] + k2*v[b] + c) in mask (gp_runl from off) */
    GP_LOAD,   /* r[dst] = v[a] */
    GP_CONST,  /* r[dst] = k */
    GP_ADD,    /* r[dst] = k + sum coef[off+j] * r[opnd[off+j]], j < n */
    GP_MUL,    /* r[dst] = prod r[opnd[off+j]] ** coef[off+j] */
    GP_POW,    /* r[dst] = r[a] ** r[b] */
    GP_FLOORDIV, GP_MOD, GP_CLEANDIV, GP_TRUNCDIV, GP_TRUNCMOD, /* r[dst] = r[a] OP r[b] */
    GP_MIN, GP_MAX, GP_BAND, GP_BOR, GP_BXOR, GP_AND, GP_OR, /* over r[opnd[off+j]], j < n */
    GP_ABS,    /* r[dst] = |r[a]| */
    GP_WHERE,  /* r[dst] = r[a] ? r[b] : r[c] */
    GP_REL,    /* r[dst] = sign(r[a]) in mask */
    GP_TEST,   /* guard b holds iff r[a] != 0 */
    GP_TESTREL,/* guard b holds iff sign(r[a]) in mask */
    GP_EXACT,  /* guard b: exact evaluation */
    GP_FALSE   /* guard b is false */
} gp_op;

typedef struct gp_insn {
    uint8_t op;
    uint8_t mask;
    uint32_t dst, a, b, c;
    uint32_t n, off;
    int64_t k;
} gp_insn;

typedef struct gp_run1 {
    int64_t d;
    uint32_t a, mask;
} gp_run1;

typedef struct gp_run2 {
    int64_t c;
    uint32_t a, b, mask;
} gp_run2;

typedef struct gp_runl {
    int64_t c;
    uint32_t a, b;
    int32_t k1, k2;
    uint32_t mask;
} gp_runl;

struct sg_guard_prog {
    sg_ctx *ctx;
    size_t max_bits; /* the context's bit limit at compile time */
    size_t nguards, nslots;
    const sg_expr **guards;
    const sg_expr **slots;
    uint32_t *dep1;   /* per guard: 1 + latest guard whose registers it reads; 0: none */
    sg__idmap slotmap;/* slot symbol id -> slot index */
    gp_insn *insns;
    size_t ninsns;
    gp_insn *reg_insns; /* insns without the runs (the all-runs-first pass) */
    size_t nreg_insns;
    uint32_t *opnd;
    int64_t *coef;
    size_t nopnd;
    gp_run1 *run1;
    gp_run2 *run2;
    gp_runl *runl;
    size_t nrun1, nrun2, nrunl;
    size_t nregs;
    size_t nbatched, nexact;
};

/* A relation p REL 0 (GE0, EQ0, NE0) split into terms: p = c + sum k_i m_i
 * (p itself as one term 1*p when it is not a sum). */
typedef struct gp_lin {
    size_t n;
    const fmpz *k;       /* NULL: the single coefficient 1 */
    const sg_expr *const *m;
    const fmpz *c;       /* NULL: 0 */
    const sg_expr *self; /* storage for the single term */
} gp_lin;
void sg__gp_lin(gp_lin *L, const sg_expr *p);
/* Coefficient i of L (1 when k is NULL). */
static inline const fmpz *sg__gp_lin_k(const gp_lin *L, size_t i)
{
    static const fmpz one = 1;
    return L->k ? L->k + i : &one;
}

/* Nodes with a number beyond int64 (a constant, a coefficient, an exponent),
 * found once per node: a map node id -> 0/1 shared across the guards. */
typedef struct gp_bigscan {
    sg__idmap seen;
} gp_bigscan;
/* 1 if e holds such a number, 0 if not, -1 on allocation failure. */
int sg__gp_has_big(gp_bigscan *S, const sg_expr *e);

/* Exact evaluation of guard g at exact values xv (one per slot): SG_GUARD_PASS,
 * SG_GUARD_FAIL or a negative status. */
int sg__gp_eval_exact(const sg_guard_prog *p, size_t g, const fmpz *xv);

/* Check that ctx is p's context (SG_EINVAL with a message naming fn if not). */
sg_status sg__gp_check_ctx(sg_ctx *ctx, const sg_guard_prog *p, const char *fn);

#endif /* SG_GUARD_PRIVATE_H */
