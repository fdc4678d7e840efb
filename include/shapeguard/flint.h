/* shapeguard: exact access to integer constants through FLINT's fmpz.
 * The only public header that includes a FLINT header. */
#ifndef SG_FLINT_H
#define SG_FLINT_H

#include <flint/fmpz.h>
#include <shapeguard/expr.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The integer constant v (copied). */
SG_WARN_UNUSED sg_status sg_expr_int_fmpz(sg_ctx *ctx, const sg_expr **out, const fmpz_t v);
/* Set v to the number sg_expr_num_si would give for (e, i). Returns 1, or 0
 * (v unchanged) if there is no such number. v must be initialized. */
int sg_expr_get_fmpz(fmpz_t v, const sg_expr *e, size_t i);

#ifdef __cplusplus
}
#endif
#endif /* SG_FLINT_H */
