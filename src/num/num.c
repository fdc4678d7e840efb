/* Exact integer operations with Python's (and C's) semantics on fmpz. */
#include "num/num.h"

void sg__num_floordiv(fmpz_t q, const fmpz_t a, const fmpz_t b)
{
    fmpz_fdiv_q(q, a, b);
}

void sg__num_mod(fmpz_t r, const fmpz_t a, const fmpz_t b)
{
    fmpz_t q;
    fmpz_init(q);
    fmpz_fdiv_qr(q, r, a, b);
    fmpz_clear(q);
}

void sg__num_ceildiv(fmpz_t q, const fmpz_t a, const fmpz_t b)
{
    fmpz_cdiv_q(q, a, b);
}

void sg__num_truncdiv(fmpz_t q, const fmpz_t a, const fmpz_t b)
{
    fmpz_tdiv_q(q, a, b);
}

void sg__num_truncmod(fmpz_t r, const fmpz_t a, const fmpz_t b)
{
    fmpz_t q;
    fmpz_init(q);
    fmpz_tdiv_qr(q, r, a, b);
    fmpz_clear(q);
}

uint64_t sg__num_pow_bits(const fmpz_t base, const fmpz_t exp)
{
    if (fmpz_is_zero(exp) || fmpz_is_zero(base) || fmpz_is_pm1(base))
        return 1;
    if (!fmpz_fits_si(exp) || fmpz_sgn(exp) < 0)
        return UINT64_MAX;
    uint64_t e = (uint64_t)fmpz_get_si(exp);
    uint64_t b = fmpz_bits(base);
    if (b != 0 && e > UINT64_MAX / b)
        return UINT64_MAX;
    return b * e;
}

void sg__num_pow(fmpz_t r, const fmpz_t base, ulong exp)
{
    fmpz_pow_ui(r, base, exp);
}

void sg__num_and(fmpz_t r, const fmpz_t a, const fmpz_t b)
{
    fmpz_and(r, a, b);
    sg__fmpz_canon(r);
}

void sg__num_or(fmpz_t r, const fmpz_t a, const fmpz_t b)
{
    fmpz_or(r, a, b);
    sg__fmpz_canon(r);
}

void sg__num_xor(fmpz_t r, const fmpz_t a, const fmpz_t b)
{
    fmpz_xor(r, a, b);
    sg__fmpz_canon(r);
}
