/* Interval arithmetic of the range layer, one function per operator of the
 * expression core. Internal to src/range (the rest of the library uses
 * sg__range in range_private.h).
 *
 * Conventions: every sg__iv passed in is initialized; r may be the same
 * object as an operand; every result is sound (it contains each value the
 * operation takes, where the operands lie in their intervals and the
 * operation is defined) and every bound is an exact fmpz in canonical form.
 * An operation that is never defined on the operands (a division by [0, 0],
 * a power whose exponent is always negative, a CleanDiv that is never exact)
 * gives [-oo, oo]. `cap` is a number of bits (the range walk passes the
 * context's evaluation limit): a power m ** e that must have more bits
 * ((bits(m) - 1) * e + 1 > cap) is not computed; an upper bound becomes oo,
 * a lower bound 2 ** min(e, cap) (a value that evaluation cannot reach
 * anyway). */
#ifndef SG_RANGE_OPS_H
#define SG_RANGE_OPS_H

#include "range/range_private.h"

/* Swap the contents of a and b. */
void sg__iv_swap(sg__iv *a, sg__iv *b);
/* r = the smallest interval containing r and a (the hull of the union). */
void sg__iv_hull(sg__iv *r, const sg__iv *a);
/* Is every value of r >= 0 (<= 0)? */
bool sg__iv_nonneg(const sg__iv *r);
bool sg__iv_nonpos(const sg__iv *r);

void sg__iv_neg(sg__iv *r, const sg__iv *a);
void sg__iv_add(sg__iv *r, const sg__iv *a, const sg__iv *b);
void sg__iv_scale(sg__iv *r, const sg__iv *a, const fmpz_t k);
void sg__iv_mul(sg__iv *r, const sg__iv *a, const sg__iv *b);
/* a ** e for a natural constant e >= 1 (a factor of a monomial). */
void sg__iv_pow_nat(sg__iv *r, const sg__iv *a, const fmpz_t e, ulong cap);
/* a ** b for an exponent range b (the Pow atom): b < 0 is an error. */
void sg__iv_pow(sg__iv *r, const sg__iv *a, const sg__iv *b, ulong cap);

/* The division family (Python's floor division and modulo, C's truncating
 * division and remainder, exact division). A divisor of 0 is an error. */
void sg__iv_floordiv(sg__iv *r, const sg__iv *a, const sg__iv *b);
void sg__iv_truncdiv(sg__iv *r, const sg__iv *a, const sg__iv *b);
void sg__iv_cleandiv(sg__iv *r, const sg__iv *a, const sg__iv *b);
void sg__iv_mod(sg__iv *r, const sg__iv *a, const sg__iv *b);
void sg__iv_truncmod(sg__iv *r, const sg__iv *a, const sg__iv *b);

void sg__iv_min(sg__iv *r, const sg__iv *a, const sg__iv *b);
void sg__iv_max(sg__iv *r, const sg__iv *a, const sg__iv *b);
void sg__iv_abs(sg__iv *r, const sg__iv *a);

/* Python's & | ^ (two's complement of unbounded width); op is SG_OP_BAND,
 * SG_OP_BOR or SG_OP_BXOR. Exact (the hull of every value) for operands of
 * up to SG_RANGE_BITOP_BITS bits, with infinite ends too; beyond that a
 * coarser sound bound. */
#define SG_RANGE_BITOP_BITS 4096
void sg__iv_bitop(sg__iv *r, sg_op op, const sg__iv *a, const sg__iv *b);

#endif /* SG_RANGE_OPS_H */
