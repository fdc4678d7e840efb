/* Exact integers: Python's semantics on FLINT fmpz, and checked int64 fast
 * paths that say when they cannot give the exact answer. Internal to the
 * library (the tests include it too). */
#ifndef SG_NUM_H
#define SG_NUM_H

#include <flint/fmpz.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- int64 fast paths: return false when the exact result does not fit
 * (or the operation is undefined: a zero divisor); *r is then unspecified. */
static inline bool sg__i64_add(int64_t *r, int64_t a, int64_t b) { return !__builtin_add_overflow(a, b, r); }
static inline bool sg__i64_sub(int64_t *r, int64_t a, int64_t b) { return !__builtin_sub_overflow(a, b, r); }
static inline bool sg__i64_mul(int64_t *r, int64_t a, int64_t b) { return !__builtin_mul_overflow(a, b, r); }
static inline bool sg__i64_neg(int64_t *r, int64_t a) { return !__builtin_sub_overflow((int64_t)0, a, r); }

/* Python a // b. */
static inline bool sg__i64_floordiv(int64_t *r, int64_t a, int64_t b)
{
    if (b == 0 || (a == INT64_MIN && b == -1))
        return false;
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    *r = q;
    return true;
}

/* Python a % b (sign of b). */
static inline bool sg__i64_mod(int64_t *r, int64_t a, int64_t b)
{
    if (b == 0)
        return false;
    if (b == -1) {
        *r = 0;
        return true;
    }
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0)))
        m += b;
    *r = m;
    return true;
}

/* C a / b and a % b. */
static inline bool sg__i64_truncdiv(int64_t *r, int64_t a, int64_t b)
{
    if (b == 0 || (a == INT64_MIN && b == -1))
        return false;
    *r = a / b;
    return true;
}

static inline bool sg__i64_truncmod(int64_t *r, int64_t a, int64_t b)
{
    if (b == 0)
        return false;
    *r = b == -1 ? 0 : a % b;
    return true;
}

/* Put v in FLINT's canonical representation: a value that fits a small fmpz
 * is stored inline. FLINT 2.9's fmpz_and/or/xor can leave small results in
 * mpz form, which would break hashing and equality by representation. */
static inline bool sg__fmpz_is_uncanon(const fmpz_t v)
{
    return COEFF_IS_MPZ(*v) && fmpz_bits(v) <= FLINT_BITS - 2;
}

static inline void sg__fmpz_canon(fmpz_t v)
{
    if (COEFF_IS_MPZ(*v))
        _fmpz_demote_val(v);
}

/* ---- exact operations on fmpz. Divisors must be nonzero (callers check). */
void sg__num_floordiv(fmpz_t q, const fmpz_t a, const fmpz_t b);
void sg__num_mod(fmpz_t r, const fmpz_t a, const fmpz_t b);
void sg__num_ceildiv(fmpz_t q, const fmpz_t a, const fmpz_t b);
void sg__num_truncdiv(fmpz_t q, const fmpz_t a, const fmpz_t b);
void sg__num_truncmod(fmpz_t r, const fmpz_t a, const fmpz_t b);
/* Number of bits of |base ** exp| at most (an upper bound), saturating. */
uint64_t sg__num_pow_bits(const fmpz_t base, const fmpz_t exp);
/* r = base ** exp for exp >= 0 that fits in ulong (callers check size). */
void sg__num_pow(fmpz_t r, const fmpz_t base, ulong exp);
/* r = a & b, a | b, a ^ b (Python's semantics), in canonical form. */
void sg__num_and(fmpz_t r, const fmpz_t a, const fmpz_t b);
void sg__num_or(fmpz_t r, const fmpz_t a, const fmpz_t b);
void sg__num_xor(fmpz_t r, const fmpz_t a, const fmpz_t b);

#endif /* SG_NUM_H */
