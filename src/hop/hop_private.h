/* shapeguard: the hop layer's internals, for tests (not installed).
 *
 * The output merge of torch.cond (PyTorch's _merge_output in
 * torch/_higher_order_ops/cond.py) as pure functions over the tracer's shape
 * environment, so that the vectors of PyTorch's test_merge_output
 * (test/functorch/test_control_flow.py) can be checked without tracing
 * two branches. Fresh symbols are unbacked symbols of t's environment, made
 * in the order of the dimensions and bound there (as a cond node binds
 * them); their ranges are the hull of both sides' ranges. */
#ifndef SG_HOP_PRIVATE_H
#define SG_HOP_PRIVATE_H

#include <stddef.h>

#include "shapeguard/hop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The layout of the merged output of two tensors of n dimensions (n at
 * most SG_MAX_DIMS): sizes[d] is asizes[d] where the two sizes are the same
 * expression with no unbacked symbol, else a fresh unbacked symbol; then
 * strides (PyTorch's _bound_stride): both layouts order their dimensions by
 * stride alike (smallest first, ties by descending index), and from the
 * smallest, each stride is 0 in both, 1 in both, or the stride times size
 * of a dimension before it in that order in both, which the merged layout
 * takes over from its merged sizes. Errors: SG_ESHAPE (strides that cannot
 * merge), SG_EDATADEP (a stride order that needs an unbacked value),
 * SG_ELIMIT (more than 64 fresh symbols), SG_EINVAL, SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg__hop_merge_layout(sg_tracer *t, size_t n, const sg_expr *const *asizes,
                                              const sg_expr *const *astrides, const sg_expr *const *bsizes,
                                              const sg_expr *const *bstrides, const sg_expr **sizes,
                                              const sg_expr **strides);

/* Two ints of the branches merged: a where a and b are the same expression
 * with no unbacked symbol, else a fresh unbacked symbol. Errors as above. */
SG_WARN_UNUSED sg_status sg__hop_merge_int(sg_tracer *t, const sg_expr *a, const sg_expr *b, const sg_expr **out);

#ifdef __cplusplus
}
#endif
#endif /* SG_HOP_PRIVATE_H */
