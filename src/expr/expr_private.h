/* Private definitions of the expression core: the node layout, interning,
 * and the functions that cross files inside the library (prefix sg__). The
 * context itself is the util layer's (util/util_private.h). */
#ifndef SG_EXPR_PRIVATE_H
#define SG_EXPR_PRIVATE_H

#include <flint/fmpz.h>
#include <stdarg.h>
#include <stdbool.h>

#include "shapeguard/common.h"
#include "shapeguard/expr.h"
#include "util/util_private.h"

/* A node. 24 bytes of header, then nargs argument pointers, then (ADD and
 * MUL only) nargs fmpz numbers: coefficients of ADD terms, exponents of MUL
 * factors. u.val holds the value of INT and the constant term of ADD;
 * u.name the name of SYM. Everything lives in the context's arena. */
struct sg_expr {
    uint8_t op;
    uint8_t sort;
    uint16_t depth;
    uint32_t nargs;
    uint32_t id;
    uint32_t hash;
    union {
        fmpz val;
        const char *name;
    } u;
    const sg_expr *args[];
};

static inline fmpz *sg__nums(const sg_expr *e)
{
    return (fmpz *)(e->args + e->nargs);
}

/* The operations whose arguments are kept in the order of their ids (sums,
 * products, Min/Max, bitwise operations, And/Or): the interner sorts them,
 * the printer chooses their display order. */
static inline bool sg__op_args_by_id(sg_op op)
{
    switch (op) {
    case SG_OP_ADD:
    case SG_OP_MUL:
    case SG_OP_MIN:
    case SG_OP_MAX:
    case SG_OP_BAND:
    case SG_OP_BOR:
    case SG_OP_BXOR:
    case SG_OP_AND:
    case SG_OP_OR:
        return true;
    default:
        return false;
    }
}

static inline int sg__is_atom(const sg_expr *e)
{
    return e->sort == SG_SORT_INT && e->op != SG_OP_INT && e->op != SG_OP_ADD && e->op != SG_OP_MUL;
}

/* A remembered constructor call: (operation, operand ids) -> result. */
typedef struct sg__memo_ent {
    uint32_t tag, a, b;
    const sg_expr *r;
} sg__memo_ent;

#define SG_MEMO_SIZE 4096 /* entries, a power of two */

/* Memo tags: one per remembered operation (the public constructors', and
 * sg__mul's, which they share). */
enum {
    SG_MEMO_ADD = 1, SG_MEMO_SUB, SG_MEMO_MUL, SG_MEMO_POW, SG_MEMO_FLOORDIV, SG_MEMO_MOD, SG_MEMO_CEILDIV,
    SG_MEMO_CLEANDIV, SG_MEMO_TRUNCDIV, SG_MEMO_TRUNCMOD, SG_MEMO_BAND, SG_MEMO_BOR, SG_MEMO_BXOR, SG_MEMO_SHL,
    SG_MEMO_SHR, SG_MEMO_MIN, SG_MEMO_MAX, SG_MEMO_AND, SG_MEMO_OR,
    SG_MEMO_REL /* + sg_rel */
};

/* Look up or remember the result of a constructor call. */
const sg_expr *sg__memo_get(sg_ctx *ctx, uint32_t tag, const sg_expr *a, const sg_expr *b);
void sg__memo_put(sg_ctx *ctx, uint32_t tag, const sg_expr *a, const sg_expr *b, const sg_expr *r);


/* ---- interning ---- */

/* Intern a node: op, sort, nargs args, optional nums (ADD/MUL: nargs numbers),
 * optional val (INT value or ADD constant), optional name (SYM). Returns the
 * unique node, or NULL with the error set (SG_ENOMEM, SG_ELIMIT). */
const sg_expr *sg__intern(sg_ctx *ctx, sg_op op, sg_sort sort, size_t nargs, const sg_expr *const *args,
                          const fmpz *nums, const fmpz *val, const char *name, size_t namelen);
const sg_expr *sg__int_fmpz(sg_ctx *ctx, const fmpz_t v);
const sg_expr *sg__int_si(sg_ctx *ctx, slong v);
const sg_expr *sg__bool(sg_ctx *ctx, bool v);

/* Sort expression pointers by id (ascending). */
void sg__sort_by_id(const sg_expr **a, size_t n);

/* ---- polynomials: a scratch representation c + sum k_i m_i ---- */
typedef struct sg__term {
    fmpz k;
    const sg_expr *m; /* a monomial: an atom or a MUL node */
} sg__term;

typedef struct sg__poly {
    sg__term *t;
    size_t n, cap;
    fmpz c;
} sg__poly;

void sg__poly_init(sg__poly *p);
void sg__poly_clear(sg__poly *p);
/* p = e (e of integer sort). */
bool sg__poly_set(sg_ctx *ctx, sg__poly *p, const sg_expr *e);
/* p += k * e. */
bool sg__poly_addmul_expr(sg_ctx *ctx, sg__poly *p, const fmpz_t k, const sg_expr *e);
bool sg__poly_push(sg_ctx *ctx, sg__poly *p, const fmpz_t k, const sg_expr *m);
/* Canonicalize in place: sort by monomial id, combine, drop zeros. */
void sg__poly_normalize(sg__poly *p);
/* The canonical expression of a normalized or unnormalized p. */
const sg_expr *sg__poly_get(sg_ctx *ctx, sg__poly *p);
/* The content: gcd of the coefficients of the terms (0 if none). */
void sg__poly_content(fmpz_t g, const sg__poly *p);

/* The sign of the leading term of a polynomial: the term whose monomial has
 * the smallest structural hash (ties, which need a hash collision, by id).
 * The choice does not depend on the order in which nodes were created, so
 * canonical signs are the same in every context. 0 for no terms. */
int sg__poly_lead_sign(const sg__poly *p);
/* The same for an expression: the leading term of an ADD, the sign of an
 * INT, 1 for anything else. */
int sg__lead_sign(const sg_expr *e);

/* e = base + c where c is e's constant term: returns base, sets c. */
const sg_expr *sg__split_const(sg_ctx *ctx, const sg_expr *e, fmpz_t c);

/* Monomials: product, exact quotient, greatest common monomial of p and q. */
const sg_expr *sg__mono_mul(sg_ctx *ctx, const sg_expr *m1, const sg_expr *m2);
const sg_expr *sg__mono_div(sg_ctx *ctx, const sg_expr *m1, const sg_expr *m2);
const sg_expr *sg__poly_mono_gcd(sg_ctx *ctx, const sg__poly *p, const sg__poly *q);

/* Core constructors that return NULL with the error set (internal chaining). */
const sg_expr *sg__add(sg_ctx *ctx, const sg_expr *a, const sg_expr *b);
const sg_expr *sg__sub(sg_ctx *ctx, const sg_expr *a, const sg_expr *b);
const sg_expr *sg__mul(sg_ctx *ctx, const sg_expr *a, const sg_expr *b);
const sg_expr *sg__scale(sg_ctx *ctx, const sg_expr *a, const fmpz_t k);
const sg_expr *sg__neg(sg_ctx *ctx, const sg_expr *a);
const sg_expr *sg__pow(sg_ctx *ctx, const sg_expr *a, const sg_expr *b);
const sg_expr *sg__floordiv(sg_ctx *ctx, const sg_expr *a, const sg_expr *b);
const sg_expr *sg__mod(sg_ctx *ctx, const sg_expr *a, const sg_expr *b);
const sg_expr *sg__ceildiv(sg_ctx *ctx, const sg_expr *a, const sg_expr *b);
const sg_expr *sg__cleandiv(sg_ctx *ctx, const sg_expr *a, const sg_expr *b);
const sg_expr *sg__truncdiv(sg_ctx *ctx, const sg_expr *a, const sg_expr *b);
const sg_expr *sg__truncmod(sg_ctx *ctx, const sg_expr *a, const sg_expr *b);
const sg_expr *sg__minmax(sg_ctx *ctx, sg_op op, size_t n, const sg_expr *const *args);
const sg_expr *sg__abs(sg_ctx *ctx, const sg_expr *a);
const sg_expr *sg__where(sg_ctx *ctx, const sg_expr *c, const sg_expr *a, const sg_expr *b);
const sg_expr *sg__bitop(sg_ctx *ctx, sg_op op, const sg_expr *a, const sg_expr *b);
const sg_expr *sg__rel(sg_ctx *ctx, sg_rel rel, const sg_expr *a, const sg_expr *b);
/* p >= 0, p == 0, p != 0 for an integer expression p. */
const sg_expr *sg__rel0(sg_ctx *ctx, sg_op op, const sg_expr *p);
const sg_expr *sg__andor(sg_ctx *ctx, sg_op op, size_t n, const sg_expr *const *args);
const sg_expr *sg__not(sg_ctx *ctx, const sg_expr *a);
/* Rebuild a node of op from new arguments through the constructors (used by
 * substitution): for ADD/MUL the numbers of proto are reused. */
const sg_expr *sg__rebuild(sg_ctx *ctx, const sg_expr *proto, const sg_expr *const *args);

/* A memo of rewritten nodes (node id -> result). Zero-initialized is empty. */
typedef struct sg__nodememo {
    sg__idmap idx;
    const sg_expr **v;
    size_t n, cap;
} sg__nodememo;
const sg_expr *sg__nodememo_get(const sg__nodememo *m, const sg_expr *e);
bool sg__nodememo_put(sg_ctx *ctx, sg__nodememo *m, const sg_expr *e, const sg_expr *r);
void sg__nodememo_reset(sg__nodememo *m);
void sg__nodememo_free(sg__nodememo *m);

/* e rebuilt through the constructors with each argument mapped by fn (which
 * returns NULL, the error set, on failure); e itself when no argument
 * changed. The shared step of every rewriting walk. */
typedef const sg_expr *(*sg__map_fn)(void *user, const sg_expr *arg);
const sg_expr *sg__map_args(sg_ctx *ctx, const sg_expr *e, sg__map_fn fn, void *user);

/* Substitute symbols by id through a prebuilt map (symbol id -> index into
 * vals); the map is only read. */
sg_status sg__subs_map(sg_ctx *ctx, const sg_expr **out, const sg_expr *e, const sg__idmap *from,
                       const sg_expr *const *vals);

/* Exact evaluation into an fmpz or a truth value. */
sg_status sg__eval(sg_ctx *ctx, const sg_expr *e, size_t n, const sg_expr *const *syms,
                   const sg_expr *const *vals, const sg_expr **out);
/* The same without a context, so it may run in any thread while nodes are
 * read only: out = the value of e (0/1 for a boolean) where the symbol with
 * id k has the value vals[*sg__idmap_find(syms, k)] (syms is only read).
 * Errors as sg__eval (SG_EUNBOUND, SG_EZERODIV, SG_ENEGEXP, SG_EINEXACT,
 * SG_ELIMIT beyond max_bits, SG_ENOMEM), with no message. */
sg_status sg__eval_fmpz(fmpz_t out, const sg_expr *e, const sg__idmap *syms, const fmpz *vals, size_t max_bits);

#endif /* SG_EXPR_PRIVATE_H */
