/* The ahead-of-time pipeline's own pieces (functionalization, then autograd:
 * issues 20 and 21). This layer sits above exec and hop and below the front
 * end (tests/layers.test): it reads graphs and writes graphs through the
 * graph layer's one recording entry, and runs them through exec. */
#ifndef SG_AOT_PRIVATE_H
#define SG_AOT_PRIVATE_H

#include "graph/record.h"

/* A write through a view, carried back to its base: node is a view call of
 * graph src (its value views its first argument), base the value of dst
 * that stands for that argument, mutated the value of dst holding the
 * view's new contents (its sizes are the view's). Records into dst what
 * functionalization records (PyTorch's view inverses): for select.int,
 * slice.Tensor, narrow, diagonal and as_strided, the row's scatter of
 * mutated into base (narrow as the slice it is); for the views that cover
 * their base (t, transpose.int, permute, unsqueeze, squeeze, squeeze.dim,
 * view), the inverse view of mutated, base's shape again; for detach and
 * alias, mutated itself. *out: the value of dst that stands for the new
 * base. Errors: SG_EUNSUPPORTED (expand: several elements of the view read
 * one of the base, so no write through it is defined; unbind and the
 * other views: not yet), SG_EINVAL (node not a view call, arguments of the
 * wrong kind), and those of sg__graph_record. */
sg_status sg__aot_view_inverse(sg__graph *dst, const sg__graph *src, uint32_t node, uint32_t base, uint32_t mutated,
                               uint32_t *out);

/* Functionalization (first stage): src replayed into dst (an empty graph
 * over src's environment) with no write left but the input mutations at
 * its end. A view is replayed on its base's current value; an in-place
 * call becomes its FUNCTIONAL row over the current value of self, carried
 * back to self's base through each view of the chain
 * (sg__aot_view_inverse); a value read after its storage was written is
 * made again from the base (its views replayed: PyTorch's lazy
 * regeneration); before the output, each mutated input gets
 * copy_(input, its final value) (in input order, keep_input_mutations),
 * and an output that is a mutated input is that copy_. Errors:
 * SG_EUNSUPPORTED (not yet: metadata mutations, set_, resize_, out=,
 * copy_, detach_, requires_grad_, writes through unbind's elements or
 * expand, a write that changes dtype, a mutated storage that two inputs
 * share, cond), and those of sg__graph_replay and sg__aot_view_inverse. */
sg_status sg__aot_functionalize(const sg__graph *src, sg__graph *dst);

#endif /* SG_AOT_PRIVATE_H */
