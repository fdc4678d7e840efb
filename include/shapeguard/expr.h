/* shapeguard: the expression core.
 *
 * Expressions are immutable, hash-consed nodes owned by their context. Every
 * constructor returns the canonical form of what it builds, so two
 * expressions that are equal as canonical forms are the same pointer:
 * equality is ==. Nodes are never freed one by one; they live until
 * sg_ctx_free. Two sorts exist, integer and boolean; integers are exact
 * (unbounded) with Python's semantics.
 *
 * Every constructor has the shape
 *     sg_status sg_expr_OP(sg_ctx *ctx, const sg_expr **out, inputs...)
 * and returns SG_OK with *out set, or an error with *out set to NULL and the
 * message in ctx. Common errors: SG_EINVAL (ctx, out or an input is NULL, or an
 * input belongs to another context is not detected: do not mix contexts),
 * SG_ETYPE (an operand of the wrong sort), SG_ELIMIT (a product or power
 * would exceed the context's term limit, or the expression would nest deeper
 * than SG_MAX_DEPTH), SG_ENOMEM.
 *
 * Domain errors (a zero divisor, a negative exponent, an inexact CleanDiv)
 * are never raised by constructors: such a node is kept unevaluated, and
 * evaluating it raises the error. So Where(c, a, 1 // 0) with c true
 * evaluates to a, as in Python. Canonicalization may, as sympy does, remove
 * a sub-expression whose evaluation would fail (x - x is 0 even where x is
 * 1 // y and y is 0); it never changes a value that is defined.
 */
#ifndef SG_EXPR_H
#define SG_EXPR_H

#include <shapeguard/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_expr sg_expr;

/* Deepest nesting an expression may have (SG_ELIMIT beyond it). */
#define SG_MAX_DEPTH 2000

typedef enum sg_sort { SG_SORT_INT = 0, SG_SORT_BOOL = 1 } sg_sort;

/* Node kinds of canonical forms. Constructors for derived operations
 * (Sub, Neg, CeilDiv, ModularIndexing, shifts, ~, Lt/Le/Gt/Ge/Eq/Ne, Not,
 * Where over booleans) produce nodes of these kinds.
 *
 *   SG_OP_INT       integer constant (no arguments)
 *   SG_OP_TRUE/FALSE boolean constants
 *   SG_OP_SYM       integer symbol (a name)
 *   SG_OP_ADD       c + sum(k_i * m_i): n >= 1 terms with nonzero integer
 *                   coefficients k_i over distinct monomials m_i (atoms or
 *                   SG_OP_MUL), not a single term 1*m with c == 0
 *   SG_OP_MUL       monomial prod(a_i ** e_i): atoms a_i, exponents e_i >= 1,
 *                   at least two factors or one with e >= 2
 *   SG_OP_POW       a ** b where b is not a natural constant (kept as an atom)
 *   SG_OP_FLOORDIV, SG_OP_MOD, SG_OP_CLEANDIV, SG_OP_TRUNCDIV, SG_OP_TRUNCMOD
 *                   two arguments (dividend, divisor)
 *   SG_OP_MIN, SG_OP_MAX   n >= 2 arguments
 *   SG_OP_ABS       one argument
 *   SG_OP_WHERE     (cond, a, b), integer arms
 *   SG_OP_BAND, SG_OP_BOR, SG_OP_BXOR   n >= 2 arguments
 *   SG_OP_GE0, SG_OP_EQ0, SG_OP_NE0     one integer argument p: p >= 0,
 *                   p == 0, p != 0 (every relation is normalized to these)
 *   SG_OP_AND, SG_OP_OR    n >= 2 boolean arguments (negation is pushed
 *                   down to relations, so there is no Not node)
 */
typedef enum sg_op {
    SG_OP_INT, SG_OP_TRUE, SG_OP_FALSE, SG_OP_SYM,
    SG_OP_ADD, SG_OP_MUL, SG_OP_POW,
    SG_OP_FLOORDIV, SG_OP_MOD, SG_OP_CLEANDIV, SG_OP_TRUNCDIV, SG_OP_TRUNCMOD,
    SG_OP_MIN, SG_OP_MAX, SG_OP_ABS, SG_OP_WHERE,
    SG_OP_BAND, SG_OP_BOR, SG_OP_BXOR,
    SG_OP_GE0, SG_OP_EQ0, SG_OP_NE0,
    SG_OP_AND, SG_OP_OR,
    SG_OP_COUNT_
} sg_op;

/* ---- leaves ---------------------------------------------------------- */

/* The integer constant v. */
SG_WARN_UNUSED sg_status sg_expr_int(sg_ctx *ctx, const sg_expr **out, int64_t v);
/* The integer constant written in decimal in str (optional leading '-' or '+',
 * digits, nothing else). Errors: SG_ESYNTAX for other text. */
SG_WARN_UNUSED sg_status sg_expr_int_str(sg_ctx *ctx, const sg_expr **out, const char *str);
/* true or false. */
SG_WARN_UNUSED sg_status sg_expr_bool(sg_ctx *ctx, const sg_expr **out, int value);
/* The integer symbol named name ([A-Za-z_][A-Za-z0-9_]* is recommended; any
 * non-empty NUL-terminated text is accepted and copied). The same name gives
 * the same node. Errors: SG_EINVAL for NULL or "". */
SG_WARN_UNUSED sg_status sg_expr_sym(sg_ctx *ctx, const sg_expr **out, const char *name);

/* ---- integer operations (operands of integer sort, else SG_ETYPE) ----- */

SG_WARN_UNUSED sg_status sg_expr_add(sg_ctx *ctx, const sg_expr **out, const sg_expr *a, const sg_expr *b);
SG_WARN_UNUSED sg_status sg_expr_sub(sg_ctx *ctx, const sg_expr **out, const sg_expr *a, const sg_expr *b);
SG_WARN_UNUSED sg_status sg_expr_mul(sg_ctx *ctx, const sg_expr **out, const sg_expr *a, const sg_expr *b);
SG_WARN_UNUSED sg_status sg_expr_neg(sg_ctx *ctx, const sg_expr **out, const sg_expr *a);
/* a ** b. A natural constant b expands polynomially; otherwise a Pow node. */
SG_WARN_UNUSED sg_status sg_expr_pow(sg_ctx *ctx, const sg_expr **out, const sg_expr *a, const sg_expr *b);
/* Python a // b and a % b (the sign of a % b follows b). */
SG_WARN_UNUSED sg_status sg_expr_floordiv(sg_ctx *ctx, const sg_expr **out, const sg_expr *a, const sg_expr *b);
SG_WARN_UNUSED sg_status sg_expr_mod(sg_ctx *ctx, const sg_expr **out, const sg_expr *a, const sg_expr *b);
/* ceil(a / b). */
SG_WARN_UNUSED sg_status sg_expr_ceildiv(sg_ctx *ctx, const sg_expr **out, const sg_expr *a, const sg_expr *b);
/* a / b where b divides a (evaluation raises SG_EINEXACT where it does not). */
SG_WARN_UNUSED sg_status sg_expr_cleandiv(sg_ctx *ctx, const sg_expr **out, const sg_expr *a, const sg_expr *b);
/* C division and remainder: quotient rounded toward zero, remainder's sign follows a. */
SG_WARN_UNUSED sg_status sg_expr_truncdiv(sg_ctx *ctx, const sg_expr **out, const sg_expr *a, const sg_expr *b);
SG_WARN_UNUSED sg_status sg_expr_truncmod(sg_ctx *ctx, const sg_expr **out, const sg_expr *a, const sg_expr *b);
/* (x // d) % m. */
SG_WARN_UNUSED sg_status sg_expr_modular_indexing(sg_ctx *ctx, const sg_expr **out, const sg_expr *x,
                                                  const sg_expr *d, const sg_expr *m);
/* Min/Max of n >= 1 integer expressions. Errors: SG_EINVAL for n == 0. */
SG_WARN_UNUSED sg_status sg_expr_min(sg_ctx *ctx, const sg_expr **out, size_t n, const sg_expr *const *args);
SG_WARN_UNUSED sg_status sg_expr_max(sg_ctx *ctx, const sg_expr **out, size_t n, const sg_expr *const *args);
SG_WARN_UNUSED sg_status sg_expr_abs(sg_ctx *ctx, const sg_expr **out, const sg_expr *a);
/* a << b is a * 2**b, a >> b is a // 2**b. */
SG_WARN_UNUSED sg_status sg_expr_shl(sg_ctx *ctx, const sg_expr **out, const sg_expr *a, const sg_expr *b);
SG_WARN_UNUSED sg_status sg_expr_shr(sg_ctx *ctx, const sg_expr **out, const sg_expr *a, const sg_expr *b);
/* Python's & | ^ ~ on two's-complement integers of unbounded width. */
SG_WARN_UNUSED sg_status sg_expr_band(sg_ctx *ctx, const sg_expr **out, const sg_expr *a, const sg_expr *b);
SG_WARN_UNUSED sg_status sg_expr_bor(sg_ctx *ctx, const sg_expr **out, const sg_expr *a, const sg_expr *b);
SG_WARN_UNUSED sg_status sg_expr_bxor(sg_ctx *ctx, const sg_expr **out, const sg_expr *a, const sg_expr *b);
SG_WARN_UNUSED sg_status sg_expr_bnot(sg_ctx *ctx, const sg_expr **out, const sg_expr *a);

/* Where(c, a, b): a if c else b. c boolean; a and b of one sort (the result's). */
SG_WARN_UNUSED sg_status sg_expr_where(sg_ctx *ctx, const sg_expr **out, const sg_expr *c,
                                       const sg_expr *a, const sg_expr *b);

/* ---- relations and boolean connectives ------------------------------ */

typedef enum sg_rel { SG_REL_EQ, SG_REL_NE, SG_REL_LT, SG_REL_LE, SG_REL_GT, SG_REL_GE } sg_rel;

/* a REL b. Integer operands: any relation. Boolean operands: EQ and NE only
 * (equivalence and exclusive or); other combinations are SG_ETYPE. */
SG_WARN_UNUSED sg_status sg_expr_rel(sg_ctx *ctx, const sg_expr **out, sg_rel rel, const sg_expr *a,
                                     const sg_expr *b);
SG_WARN_UNUSED sg_status sg_expr_and(sg_ctx *ctx, const sg_expr **out, size_t n, const sg_expr *const *args);
SG_WARN_UNUSED sg_status sg_expr_or(sg_ctx *ctx, const sg_expr **out, size_t n, const sg_expr *const *args);
SG_WARN_UNUSED sg_status sg_expr_not(sg_ctx *ctx, const sg_expr **out, const sg_expr *a);

/* ---- inspection (never fail; e must not be NULL) ------------------- */

sg_op sg_expr_op(const sg_expr *e);
sg_sort sg_expr_sort(const sg_expr *e);
/* Number of argument nodes: terms of ADD, factors of MUL, operands otherwise. */
size_t sg_expr_nargs(const sg_expr *e);
const sg_expr *sg_expr_arg(const sg_expr *e, size_t i);
/* A stable id (order of creation in the context) and the structural hash. */
uint64_t sg_expr_id(const sg_expr *e);
uint64_t sg_expr_hash(const sg_expr *e);
/* Nesting depth: 0 for leaves. */
unsigned sg_expr_depth(const sg_expr *e);
/* The name of a symbol; NULL for other nodes. Owned by the context. */
const char *sg_expr_sym_name(const sg_expr *e);
/* 1 if e is an integer constant (or, for the _si form, one that fits in
 * int64_t, stored in *v). */
int sg_expr_is_int(const sg_expr *e);
int sg_expr_get_si(const sg_expr *e, int64_t *v);
/* For ADD, the coefficient of term i; for MUL, the exponent of factor i; for
 * INT the value and for ADD the constant term (i == SIZE_MAX). Fits: 1 and *v
 * set; else 0. The exact value of any of them: sg_expr_num_str. */
int sg_expr_num_si(const sg_expr *e, size_t i, int64_t *v);
/* The same numbers in decimal; the caller frees the string with sg_free.
 * Errors: SG_EINVAL (no such number), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_expr_num_str(sg_ctx *ctx, sg_give char **out, const sg_expr *e, size_t i);

/* ---- substitution, evaluation, symbols ------------------------------ */

/* Replace each symbol syms[i] by vals[i] (any expressions of integer sort)
 * simultaneously, and canonicalize. Errors: SG_EINVAL (a syms[i] that is not a
 * symbol), SG_ETYPE, SG_ELIMIT, SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_expr_subs(sg_ctx *ctx, const sg_expr **out, const sg_expr *e, size_t n,
                                      const sg_expr *const *syms, const sg_expr *const *vals);

/* Evaluate e exactly where each symbol syms[i] has the integer constant
 * vals[i]. *out is an integer constant or true/false. Where evaluates only the
 * arm it takes. Errors: SG_EUNBOUND (a symbol without a value),
 * SG_EZERODIV, SG_ENEGEXP, SG_EINEXACT, SG_ELIMIT (a result above the
 * context's bit limit), SG_EINVAL (a vals[i] that is not an integer constant). */
SG_WARN_UNUSED sg_status sg_expr_eval(sg_ctx *ctx, const sg_expr **out, const sg_expr *e, size_t n,
                                      const sg_expr *const *syms, const sg_expr *const *vals);

/* The symbols of e, without repeats, ordered by id. *out is an array the
 * caller frees with sg_free (NULL when *n is 0). Errors: SG_EINVAL, SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_expr_free_symbols(sg_ctx *ctx, sg_give const sg_expr ***out, size_t *n,
                                              const sg_expr *e);

#ifdef __cplusplus
}
#endif
#endif /* SG_EXPR_H */
