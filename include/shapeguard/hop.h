/* shapeguard: higher-order operators over subgraphs (torch.cond).
 *
 * A front end traces each branch of a cond in a scope of its own
 * (graph.h: sg_tracer_scope_open, _input for each operand, the branch's
 * calls, _close with its outputs), then joins them with sg_tracer_cond. */
#ifndef SG_HOP_H
#define SG_HOP_H

#include <shapeguard/graph.h>

#ifdef __cplusplus
extern "C" {
#endif

/* torch.cond(pred, true_fn, false_fn, operands) in the current scope, over
 * the closed scopes tbranch and fbranch nested in it (traced from the same
 * operands). pred: a value of a one-element bool tensor (SG_ARG_VALUE), or a
 * boolean expression over sizes (SG_ARG_INT holding a boolean expression, or
 * SG_ARG_BOOL): it stays symbolic, and no guard is recorded for it.
 *
 * The branches come to take the same inputs: the true branch's, then those
 * only the false branch takes (each given placeholders for what only the
 * other takes; a shared input keeps the true branch's name). Outputs are
 * merged as PyTorch's _merge_output does: a size that is the same
 * expression in both branches and has no unbacked symbol stays; any other
 * becomes a fresh unbacked symbol (its range the hull of both) that the cond
 * node binds; strides follow the sizes (stride order and products of sizes
 * the same in both branches). *out is a list value of the merged outputs.
 *
 * Errors: SG_ESHAPE (branches giving different numbers of outputs, or
 * tensors of another dtype, rank or offset, or strides that cannot merge),
 * SG_EALIASING (a branch writes into one of its inputs or returns an alias
 * of one, while grad is enabled; under no_grad a write is accepted, as
 * PyTorch accepts it), SG_EUNSUPPORTED (a branch returning an alias of an
 * input under no_grad; outputs other than tensors and ints), SG_ETYPE (a predicate that is no
 * bool), SG_EINVAL (branches that are no closed subgraphs of the current
 * scope, or already joined), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_tracer_cond(sg_tracer *t, sg_value *out, const sg_arg *pred, uint32_t tbranch,
                                        uint32_t fbranch, unsigned line);

#ifdef __cplusplus
}
#endif
#endif /* SG_HOP_H */
