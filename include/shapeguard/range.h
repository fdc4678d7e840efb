/* shapeguard: value ranges of expressions (interval analysis).
 *
 * A range is a pair of bounds given as expressions: integer constants, or
 * NULL for an infinite end (-oo for lo, oo for hi). For a boolean expression
 * the bounds are the constants false/true: [false, false], [true, true] or
 * [false, true]. Bounds are owned by the context, like every expression.
 * Ranges are sound: every value the expression takes, where the symbols lie
 * in their ranges, lies within the bounds. */
#ifndef SG_RANGE_H
#define SG_RANGE_H

#include <shapeguard/expr.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_interval {
    const sg_expr *lo; /* NULL: -oo */
    const sg_expr *hi; /* NULL: oo */
} sg_interval;

/* The range of e where each symbol syms[i] lies in ranges[i] and every other
 * symbol is unbounded. Errors: SG_EINVAL (NULL; syms[i] not a symbol; a bound
 * that is not an integer constant; lo > hi), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_range_of(sg_ctx *ctx, sg_interval *out, const sg_expr *e, size_t n,
                                     const sg_expr *const *syms, const sg_interval *ranges);

#ifdef __cplusplus
}
#endif
#endif /* SG_RANGE_H */
