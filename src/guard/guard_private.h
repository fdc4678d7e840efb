/* Private definitions of the guard layer: the layout of a compiled guard
 * program (guard.h) and what its files share. */
#ifndef SG_GUARD_PRIVATE_H
#define SG_GUARD_PRIVATE_H

#include "expr/expr_private.h"
#include "shapeguard/guard.h"

/* A program is a straight-line sequence of instructions over a register file
 * of int64 words, in guard order:
 *
 *   - batched runs (GP_RUN_SLOT .. GP_RUN_MUL_Z, the run kinds): consecutive
 *     guards of one common shape, each a relation that reads at most three
 *     slots directly (no loads, no registers) and whose constants sit in
 *     the element (below). Every kind is evaluated in int64 with one
 *     compare and one branch per guard, as hand-written C has (a jump, not
 *     taken while guards hold); a kind whose value can overflow detects it
 *     (a jo), and that guard is then evaluated exactly.
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
 * the elements of each run kind that has any in one loop (p->fast holds
 * them grouped by kind, each kind's in guard order, p->segs lists the
 * kinds; the loops are threaded, so the pass costs one indirect jump per
 * kind used, not one per kind), stopping at the first element that does not
 * hold or overflows, then reg_insns (none when every guard is batched: then
 * the pass needs no register file at all). Only when something fails or
 * raises does it run the ordered program to find the first guard that does
 * not hold; guards have no side effects, so the order of the first pass
 * changes no answer. (The ordered program reaches a run's elements through
 * p->elts[k], which points into p->fast.) */

/* Sign codes of a value t: bit 0 t < 0, bit 1 t == 0, bit 2 t > 0. A relation
 * mask is the set of signs for which p REL 0 holds. */
#define GP_LT 1u
#define GP_EQ 2u
#define GP_GT 4u
#define GP_MASK_GE0 (GP_EQ | GP_GT)
#define GP_MASK_EQ0 GP_EQ
#define GP_MASK_NE0 (GP_LT | GP_GT)

/* The run kinds come first (their op is their kind, an index of p->elts).
 * Element e of a run computes an int64 value f from x = v[e->a], y = v[e->b]
 * and z = v[e->z], and its guard holds iff f is in the set of e, stored as
 * an interval modulo 2**64: (uint64_t)f - e->lo <= e->span. The compiler
 * folds the relation, its constant and the atom's coefficient into that set
 * with exact arithmetic (guard t = k*f + c REL 0 becomes f in {f : k*f + c
 * REL 0}, which within int64 is an interval or the complement of one point,
 * never empty for a batched guard), so a check does no arithmetic on c.
 *   without a z term (f is the atom; its coefficient is folded):
 *     GP_RUN_SLOT    f = x
 *     GP_RUN_MODP2   f = x % 2**s  (e->b = 2**s - 1: x & e->b, Python's for any sign)
 *     GP_RUN_MOD     f = x % m     (m = e->b > 0; C's remainder + m when negative)
 *     GP_RUN_DIVP2   f = x // 2**s (e->b = s < 64: the arithmetic shift x >> s)
 *     GP_RUN_DIV     f = x // m    (m = e->b > 0; C's quotient - 1 when the remainder is negative)
 *     GP_RUN_MAX     f = Max(x, y)
 *     GP_RUN_MIN     f = Min(x, y)
 *     GP_RUN_MUL     f = x*y       (may overflow)
 *   with a z term (the atom's coefficient is +-1 and folded into k = e->k):
 *     GP_RUN_SAME    x == z (the set {0} of f = x - z; lo and span unused)
 *     GP_RUN_NSAME   x != z (all but 0; lo and span unused)
 *     GP_RUN_DIFF    f = x - z     (may overflow)
 *     GP_RUN_LIN     f = x + k*z   (may overflow)
 *     GP_RUN_MODP2_Z .. GP_RUN_MUL_Z: f = atom + k*z (may overflow)
 * (// and % are Python's.) No other value is computed. Only the ones marked
 * may overflow int64, and they detect it (__builtin_*_overflow): then the
 * run cannot decide and that guard is evaluated exactly, as a flagged
 * register guard is. Every other f is exact by construction: x % m is in
 * [0, m), x // m and x >> s lie between x and 0, Max and Min are x or y. */
typedef enum gp_op {
    GP_RUN_SLOT, GP_RUN_MODP2, GP_RUN_MOD, GP_RUN_DIVP2, GP_RUN_DIV, GP_RUN_MAX, GP_RUN_MIN, GP_RUN_MUL,
    GP_RUN_SAME, GP_RUN_NSAME, GP_RUN_DIFF, GP_RUN_LIN, GP_RUN_MODP2_Z, GP_RUN_MOD_Z, GP_RUN_DIVP2_Z, GP_RUN_DIV_Z, GP_RUN_MAX_Z,
    GP_RUN_MIN_Z, GP_RUN_MUL_Z, /* in the order of the atoms: atom kind + GP_RUN_Z */
    GP_NRUNKINDS, /* the number of run kinds, not an instruction */
    /* a run: n guards from guard b, elements elts[op][off ..] */
    GP_LOAD = GP_NRUNKINDS, /* r[dst] = v[a] */
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
    GP_FALSE,  /* guard b is false */
    GP_NOPS
} gp_op;
#define GP_RUN_Z (GP_RUN_MODP2_Z - GP_RUN_MODP2)

typedef struct gp_insn {
    uint8_t op;
    uint8_t mask;
    uint32_t dst, a, b, c;
    uint32_t n, off;
    int64_t k;
} gp_insn;

/* One guard of a run (32 bytes); the fields as the kinds above use them. */
typedef struct gp_elt {
    uint64_t lo, span;
    uint32_t a, b, z;
    int32_t k;
} gp_elt;

/* The elements of one run kind in p->fast: those before end, after the
 * segments before (at least one); entry is the kind. The list ends with a
 * segment whose entry is GP_SEG_END (every guard is batched: the first pass
 * is the check) or GP_SEG_END + 1 (reg_insns follow). */
#define GP_SEG_END GP_NRUNKINDS
typedef struct gp_seg {
    const struct gp_elt *end;
    uint32_t entry;
} gp_seg;

/* The first pass (every batched guard holds?) as a function: 0 when a batched
 * guard does not hold or overflows, else 1 when the batched guards are the
 * whole program, 2 when reg_insns follow. Interpreted by prog_check.c, or
 * native code (prog_native.c). */
typedef int (*gp_pass_fn)(const struct sg_guard_prog *p, const int64_t *v);

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
    gp_elt *elts[GP_NRUNKINDS]; /* per run kind: the elements of its runs, in guard order
                                 * (once compiled: pointers into fast) */
    size_t nelts[GP_NRUNKINDS];
    gp_elt *fast;     /* every element, grouped by kind in kind order (the first pass) */
    gp_seg *segs;     /* the kinds that have elements, in that order, then the end mark */
    size_t nsegs;     /* without the end mark */
    size_t nregs;
    size_t nbatched, nexact;
    gp_pass_fn native;  /* the native first pass, or NULL (interpreted) */
    void *native_mem;   /* its pages (native_len bytes; native_size of code) */
    size_t native_len, native_size;
};

/* Build p's native first pass when want is true and the machine has a
 * backend (prog_native.c says when); p->fast and p->segs are final. Leaves
 * p->native NULL when there is none, which is not an error; false only when
 * memory runs out. */
bool sg__gp_native_build(sg_guard_prog *p, bool want);
void sg__gp_native_free(sg_guard_prog *p);
/* Whether this build has a backend for the machine (not whether the system
 * will grant executable pages). */
bool sg__gp_native_supported(void);

/* p's first pass at v (gp_pass_fn), native when p has it: for tests, which
 * check that the native and the interpreted pass agree. */
int sg__gp_first_pass(const sg_guard_prog *p, const int64_t *v);

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

/* How a guard of a program is stated (a guard set's texts, from
 * sg_env_produce_guards_text): its text, and the sides of an equality
 * (le false) or a bound (le true) as the text writes them (NULL: the sides
 * are found from the text). */
typedef struct sg__gp_said {
    const char *text;
    const sg_expr *lhs, *rhs;
    bool le;
} sg__gp_said;

/* sg_guard_prog_explain with guard g stated as said[g] says (said NULL, or a
 * NULL text: the python printer's text). */
sg_status sg__gp_explain_said(sg_ctx *ctx, char **out, size_t *failed, const sg_guard_prog *p, const int64_t *v,
                              size_t nv, const sg__gp_said *said);

/* Check that ctx is p's context (SG_EINVAL with a message naming fn if not). */
sg_status sg__gp_check_ctx(sg_ctx *ctx, const sg_guard_prog *p, const char *fn);

#endif /* SG_GUARD_PRIVATE_H */
