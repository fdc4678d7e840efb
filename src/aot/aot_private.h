/* The ahead-of-time pipeline's own pieces (functionalization, then autograd:
 * issues 20 and 21). This layer sits above exec and hop and below the front
 * end (tests/layers.test): it reads graphs and writes graphs through the
 * graph layer's one recording entry, and runs them through exec. */
#ifndef SG_AOT_PRIVATE_H
#define SG_AOT_PRIVATE_H

#include "graph/record.h"
#include "shapeguard/aot.h"

/* Argument a of graph src as an argument of dst: a list of expressions
 * copied into dst, other constants as they are. Errors: SG_EINVAL (a value
 * or a scope: they belong to src), SG_ENOMEM. */
sg_status sg__aot_arg(sg__graph *dst, const sg__graph *src, const sg__garg *a, sg__garg *out);

/* Do values v and w of g have one layout (sizes, strides, offset: the
 * interned expressions equal)? */
static inline bool sg__aot_same_layout(const sg__graph *g, uint32_t v, uint32_t w)
{
    const sg__fake_tensor *a = &g->vals[v].u.t, *b = &g->vals[w].u.t;
    if (a->ndim != b->ndim || a->offset != b->offset)
        return false;
    for (uint32_t d = 0; d < a->ndim; d++)
        if (sg__graph_size(g, v, d) != sg__graph_size(g, w, d) || sg__graph_stride(g, v, d) != sg__graph_stride(g, w, d))
            return false;
    return true;
}

/* Is node i of joint graph g (its backward part from node first on) a
 * custom Function's backward write of a program input: copy_(primal, new)
 * (joint.c; PyTorch's must_be_in_backward)? Its primal is no value the
 * backward reads: what it writes, at the backward graph's end. */
static inline bool sg__aot_bw_copy(const sg__graph *g, uint32_t first, uint32_t i)
{
    const sg__gnode *nd = &g->nodes[i];
    if (i < first || nd->kind != SG_N_CALL || nd->schema->op != SG_OP_copy_ || !nd->nargs ||
        g->args[nd->args].kind != SG_A_VALUE)
        return false;
    uint32_t p = g->vals[g->args[nd->args].u.v].node;
    return p != SG_NOVAL && p < first && g->nodes[p].kind == SG_N_PLACEHOLDER;
}

/* The arguments of as_strided(self, v's sizes, strides, offset) in dst, v a
 * tensor value of src: a[0] self, a[1] and a[2] the lists (copied into
 * dst), a[3] the offset. Errors: SG_ENOMEM. */
sg_status sg__aot_layout_args(sg__graph *dst, const sg__graph *src, uint32_t v, uint32_t self, sg__garg *a);

/* Do tensor values v and w of g have the same sizes, the same expressions
 * (no proof asked)? */
bool sg__aot_same_sizes(const sg__graph *g, uint32_t v, uint32_t w);
/* Are expressions a and b the same, as src's environment proves (a graph's
 * forms folded under later guards)? *out. Errors: SG_ENOMEM. */
sg_status sg__aot_proved_same(const sg__graph *src, const sg_expr *a, const sg_expr *b, bool *out);
/* Does dst value d have src value v's rank and strides, every dimension's
 * (sg__aot_proved_same; a view of d is one where the traced view of v
 * is)? *out. Errors: SG_ENOMEM. */
sg_status sg__aot_same_strides(const sg__graph *dst, uint32_t d, const sg__graph *src, uint32_t v, bool *out);
/* Dst value self's values in the sizes of src value v, as reshape gives
 * them where a view cannot: a contiguous clone, _unsafe_view'd (a view
 * traced of a value whose functional counterpart is laid out otherwise). */
sg_status sg__aot_reshape_as(sg__graph *dst, const sg__graph *src, uint32_t v, uint32_t self, unsigned line,
                             uint32_t *out);
/* View call node of src recorded again into dst over self (a value of dst),
 * its other arguments copied (sg__aot_arg); an in-place view (t_,
 * as_strided_ ...) as the view it applies (t, as_strided), detach_ as
 * detach. *out: the view. Errors: those of sg__aot_arg and sg__graph_record. */
sg_status sg__aot_view_again(sg__graph *dst, const sg__graph *src, uint32_t node, uint32_t self, uint32_t *out);

/* A write through a view, carried back to its base: node is a view call of
 * graph src (its value views its first argument), base the value of dst
 * that stands for that argument, mutated the value of dst holding the
 * view's new contents (its sizes are the view's). Records into dst what
 * functionalization records (PyTorch's view inverses): for select.int,
 * slice.Tensor, narrow, diagonal and as_strided, the row's scatter of
 * mutated into base (narrow as the slice it is); for the views that cover
 * their base (t, transpose.int, permute, unsqueeze, squeeze, squeeze.dim,
 * view), the inverse view of mutated, base's shape again; for detach and
 * alias, mutated itself; for expand (written only where all repeats of
 * an element take one value: the memory-overlap check refuses the rest
 * first) the first of each repeated element (select and slice); in-place views as the views they apply. *out: the
 * value of dst that stands for the new base. Errors: SG_EUNSUPPORTED
 * (unbind and the other views: not yet), SG_EINVAL (node not a view call, arguments of the
 * wrong kind), and those of sg__graph_record. */
sg_status sg__aot_view_inverse(sg__graph *dst, const sg__graph *src, uint32_t node, uint32_t base, uint32_t mutated,
                               uint32_t *out);

/* Element elem of unbind node node (of src) made again into dst over self,
 * as the select it is; and a write of it carried back (select_scatter of
 * mutated into base). Errors: SG_EINVAL (elem no element of node), those of
 * sg__graph_record. */
sg_status sg__aot_unbind_element(sg__graph *dst, const sg__graph *src, uint32_t node, uint32_t elem, uint32_t self,
                                 uint32_t *out);
sg_status sg__aot_unbind_inverse(sg__graph *dst, const sg__graph *src, uint32_t node, uint32_t elem, uint32_t base,
                                 uint32_t mutated, uint32_t *out);

/* Functionalization (first stage): src replayed into dst (an empty graph
 * over src's environment) with no write left but the input mutations at
 * its end. A view is replayed on its base's current value; an in-place
 * call becomes its FUNCTIONAL row over the current value of self, carried
 * back to self's base through each view of the chain
 * (sg__aot_view_inverse); a value read after its storage was written is
 * made again from the base (its views replayed: PyTorch's lazy
 * regeneration); before the output, each mutated input gets
 * copy_(input, its final value) (in input order, keep_input_mutations),
 * and an output that is a mutated input is that copy_ (metadata and
 * storage mutations, out=, set_, synthetic bases and cond branches that
 * write what they take: see functionalize.c and sg__aot_functionalize_meta).
 * Errors: SG_EUNSUPPORTED (writes through unbind's elements, a cond nested
 * in a branch that writes what it takes), and those of sg__graph_replay
 * and sg__aot_view_inverse. */
sg_status sg__aot_functionalize(const sg__graph *src, sg__graph *dst);

/* Where an input's mutation is applied (PyTorch's MutationType). */
enum { SG__AOT_NOT_MUTATED, SG__AOT_IN_GRAPH, SG__AOT_OUT_GRAPH };

/* What functionalization finds of one input of the root graph (PyTorch's
 * InputAliasInfo). */
typedef struct sg__aot_input {
    uint32_t ph;         /* the src placeholder */
    uint32_t dph;        /* the dst placeholder standing for it */
    uint32_t final;      /* the src value the input object is at the end (its last in-place version) */
    uint32_t updated;    /* OUT_GRAPH: the dst value the graph gives for it (a leading output); storage:
                            the value of the set_ that ends the graph (its storage and layout) */
    uint32_t onto;       /* storage: the input whose storage it ends on (SG_NOVAL: one the program made) */
    uint32_t bumps;      /* how often eager execution bumps its version counter (writes through it and
                            its views, in place or out=, and their in-place view calls; not .data's) */
    bool tensor;
    uint32_t base;       /* the synthetic base its storage has (index into meta bases), or SG_NOVAL */
    bool data;           /* written (through it or its views; a storage without a synthetic base: by anyone) */
    bool stale;          /* its storage written (views of it must be made again after the call) */
    bool metadata;       /* sizes, strides or offset changed in place (t_, as_strided_ ...) */
    bool relaid;         /* an in-place view call (t_, as_strided_ ...) gave it another layout at some point,
                            whether or not its layout at the end differs (t_ twice) */
    bool storage;        /* set_ to another storage */
    bool no_grad;        /* every data mutation under no_grad */
    bool hidden;         /* every data mutation through .data (not seen by autograd) */
    bool requires_grad;  /* after the call */
    bool written_rg;     /* after the call, a write with grad through an alias gave it a history the graph's
                            value does not show (an empty view written: sg__gval's written_rg) */
    bool leaf;           /* as given */
    bool shared;         /* another input is on its storage (the caller's views of one tensor) */
    bool cleared;        /* a leaf that required grad and requires none after the call (a factory's out=,
                            requires_grad_(False)): its gradient is None, as AccumulateGrad checks the flag
                            when the backward runs, and the graph's copy into it has no history */
    bool moved;          /* a leaf that required grad, cleared, then given a history (an in-place call with
                            grad): a gradient that reaches it raises (AccumulateGrad) */
    uint8_t where;       /* SG__AOT_NOT_MUTATED, _IN_GRAPH, _OUT_GRAPH */
} sg__aot_input;

/* One user output: its alias kind (sg_aot_output_kind) and base (the input
 * index for is_input and alias_of_input, the user output for
 * alias_of_intermediate_base_is_user_output, the intermediate base (its
 * index among the functional graph's) for alias_of_intermediate and
 * alias_of_intermediate_save_as_output, else SG_NOVAL); chain: the
 * src value whose view chain regenerates it from its input after the call
 * (alias_of_input of a data-mutated input), else SG_NOVAL. */
typedef struct sg__aot_output {
    uint8_t kind;
    uint32_t base;
    uint32_t src;        /* the src output value */
    uint32_t layout;     /* where the graph gives a mutated input's copy_ for it whose sizes are not the
                            output's (a metadata change under no_grad or through .data after the write):
                            the dst value standing for it as laid out, where eager's gradient enters
                            (joint.c); else SG_NOVAL */
} sg__aot_output;

/* A synthetic base (PyTorch's, 1.9): a storage that several inputs view,
 * or that an as_strided of an input reaches beyond it, written by the
 * program: the functional graph takes it as one more input (a dst
 * placeholder, one dimension over numel elements: the runtime views the
 * storage of input member so) and views each input on it (as_strided). */
typedef struct sg__aot_base {
    uint32_t dph;        /* its dst placeholder */
    uint32_t member;     /* the first input on it */
    const sg_expr *numel;
    uint32_t lead;       /* OUT_GRAPH: its leading output */
    uint8_t where;       /* SG__AOT_IN_GRAPH or _OUT_GRAPH */
    bool hidden;         /* every write through .data */
    bool detached;       /* a write autograd records through a detach (or .data) of it: the detach's */
} sg__aot_base;

/* A root cond whose branches write an operand that shares input's
 * version counter: eager bumps it bumps[0] times where the true branch
 * runs, bumps[1] where the false one does (the wrapper asks the run which). */
typedef struct sg__aot_cond {
    uint32_t node;       /* the cond node of dst */
    uint32_t input;
    uint32_t bumps[2];
} sg__aot_cond;

/* A custom Function's backward that writes a program input (issue 21's
 * mutations in the backward): the dst value its backward lifts for it (the
 * input's value at the Function's end) and the input's src placeholder. */
typedef struct sg__aot_bwrite {
    uint32_t value;
    uint32_t ph;
} sg__aot_bwrite;

/* The analysis of a functionalization (PyTorch's ViewAndMutationMeta): its
 * blocks owned (sg__aot_meta_free). */
typedef struct sg__aot_meta {
    bool keep;           /* keep_input_mutations */
    bool train;          /* a training graph (1.4); else inference */
    bool out_rg;         /* a user output requires grad by the trace's flags (eager's loss is not empty) */
    sg__aot_input *in;   /* the root's placeholders, in order */
    uint32_t nin;
    sg__aot_output *out; /* the user outputs, in order */
    uint32_t nout;
    uint32_t nlead;      /* the graph's leading outputs: the OUT_GRAPH bases' and inputs' updated values */
    sg__aot_base *bases; /* the synthetic bases, in the order of their first input */
    uint32_t nbases;
    sg__aot_cond *conds; /* version bumps that depend on the branch a cond takes */
    uint32_t nconds;
    uint32_t (*disjoint)[2]; /* inputs on one storage taken as disjoint (false aliasing, by the hints):
                                pairs of input indices the runtime checks do not overlap at each call */
    uint32_t ndisjoint;
    sg__aot_bwrite *bwrites; /* the program inputs the custom Functions' backwards write, in order */
    uint32_t nbwrites;
    /* the tensor subclasses of the program's signature (aot.c, from the tracer's): per input (in_inner)
       and per user output (out_inner) 0 for a plain tensor, j + 1 for inner tensor j of a subclass;
       NULL where the signature has none */
    uint8_t *in_inner, *out_inner;
} sg__aot_meta;

/* sg__aot_functionalize that also analyses: keep says whether mutations
 * that may stay in the graph do (copy_ at its end) or all go to the
 * runtime epilogue (the graph gives their updated values first); subclass,
 * whether the program's signature has a tensor subclass (inputs on one
 * storage that the hints tell apart then stay apart: PyTorch refuses a
 * synthetic base beside a subclass); *meta
 * filled (freed by the caller with sg__aot_meta_free, even on an error).
 * Errors: those of sg__aot_functionalize, and SG_EALIASING where PyTorch
 * refuses a mutation (a set_ that cannot stay in the graph). */
sg_status sg__aot_functionalize_meta(const sg__graph *src, sg__graph *dst, bool keep, bool subclass,
                                     sg__aot_meta *meta);
void sg__aot_meta_free(sg__aot_meta *meta);

/* ---- training (joint.c) ---- */

/* The joint graph of a training program's functional forward fw and its
 * backward, and the backward graph partitioned from it. */
typedef struct sg__aot_train sg__aot_train;
struct sg__xrun;
struct sg_tensor;
/* Build it (*out, freed with sg__aot_train_free): a tangent per user
 * output that requires grad, the backward of fw's nodes to every input
 * that requires grad (graph/derivatives.h), and the partition: the forward
 * as fw is (it runs so; the partitioned forward's form is listed apart:
 * sg__aot_train_fw_ops), the backward over the values the forward saves,
 * which are min_cut's (partition.c; the backward recomputes cheap forward
 * ops from them) or else the default partition's (every forward value the
 * backward reads).
 * Errors: SG_EUNSUPPORTED (an input that requires grad mutated, a node
 * without a derivative formula on the way), those of the backward and of
 * recording. */
sg_status sg__aot_train_build(const sg__graph *fw, const sg__aot_meta *m, bool min_cut, sg__aot_train **out);
void sg__aot_train_free(sg__aot_train *t);
/* The backward graph. */
const sg__graph *sg__aot_train_bw(const sg__aot_train *t);
/* Does a custom Function's backward write input i (of the meta): a copy_
 * into it at the backward graph's end? */
bool sg__aot_train_bw_writes(const sg__aot_train *t, uint32_t i);
/* The operators of the partitioned forward (*out, freed with sg_free), as
 * sg__graph_ops lists them: PyTorch's forward module, extracted from the
 * joint over the primals for the forward's outputs and the saved values
 * (its merged subexpressions, the tail, no dead code). Errors: SG_ENOMEM. */
sg_status sg__aot_train_fw_ops(const sg__aot_train *t, char **out);
/* How many values the forward saves for the backward (*n), and their bytes
 * at the environment's hints (*bytes; PyTorch's _size_of). Errors:
 * SG_EUNBOUND (a size without a hint: an unbacked one). */
sg_status sg__aot_train_saved(const sg__aot_train *t, size_t *n, int64_t *bytes);
/* Keep what the backward reads alive in the forward's run fx (before it runs). */
sg_status sg__aot_train_pin(const sg__aot_train *t, struct sg__xrun *fx);
/* How many tensors a gradient of the backward is at most: 1, or the
 * inner tensors of a tensor subclass (the loss is a TwoTensor: 2). */
uint32_t sg__aot_train_inner(const sg__aot_train *t);
/* How many tangents the backward takes: the user outputs that require
 * grad by the functional graph's flow (0: no backward runs). */
uint32_t sg__aot_train_ntangents(const sg__aot_train *t);
/* The backward after forward run fx (fw_outs: the forward's output values),
 * the tangents ones (the loss of program.md: every output summed): grads[i]
 * per input of the meta (nin of them) its gradient, a reference the caller
 * drops, or NULL (none); where it is a tensor subclass, grads[i] its inner
 * tensor 0 and grads[j * nin + i] its inner tensor j (grads holds nin *
 * ninner entries, ninner at least sg__aot_train_inner); and bgrads[b] per
 * synthetic base of the meta (nbases) the gradient of its storage's
 * positions likewise, always plain (the joint differentiates with respect
 * to the base, of which the graph views each input on it; an input on it
 * read before the storage took its base has a gradient of its own too;
 * where the loss is a tensor subclass, the joint refuses a base's
 * gradient). Errors: those of the run. */
sg_status sg__aot_train_run(const sg__aot_train *t, struct sg__xrun *fx, const uint32_t *fw_outs,
                            struct sg_tensor **grads, uint32_t nin, uint32_t ninner, struct sg_tensor **bgrads,
                            uint32_t nbases);

/* PyTorch's saved-tensor check, before the backward runs: a node the
 * backward of src's loss (its outputs that require grad) runs whose
 * formula reads a value (graph/derivatives.h's saves) that a later call
 * wrote through the same version counter is SG_EAUTOGRAD ("one of the
 * variables needed for gradient computation has been modified by an
 * inplace operation"), as eager's backward() raises, and so is a set_ it
 * runs through ("derivative for set_ is not implemented"); one written through
 * .data (no version bump) is SG_EUNSUPPORTED: PyTorch's backward reads the
 * written values, the functional graph the saved ones. Errors: those,
 * SG_ENOMEM. */
sg_status sg__aot_saved_check(const sg__graph *src);

/* ---- the min-cut partition (partition.c) ---- */

/* Does node nd have an effect no partition drops (a write, an assert, a
 * cond), whatever reads its value? (Asked of every node, several times:
 * inline.) */
static inline bool sg__aot_effect(const sg__gnode *nd)
{
    return nd->kind == SG_N_ASSERT || nd->kind == SG_N_COND ||
           (nd->kind == SG_N_CALL && (nd->schema->flags & (SG_OPF_MUTATES | SG_OPF_INPLACE | SG_OPF_OUT)));
}

/* Partition joint graph g (its backward part from node first on; its
 * output ngrad gradients, then the forward's outputs) as PyTorch 1.13's
 * min_cut_rematerialization_partition: rep[v] (per value) the value v
 * stands for once common subexpressions are merged, saved[v] (per value,
 * zeroed here) the values the backward is given (a cond of the forward,
 * which runs under no_grad, is one node never recomputed). Errors:
 * SG_ELIMIT (every cut infinite), SG_ENOMEM. */
sg_status sg__aot_min_cut(const sg__graph *g, uint32_t first, uint32_t ngrad, uint32_t *rep, uint8_t *saved);

/* ---- the minimum s-t cut (mincut.c), for the partitioner ---- */

/* A flow network: nodes 0 .. n-1, directed edges with capacities in
 * 0 .. SG__FLOW_INF (SG__FLOW_INF: an edge no cut may take). */
typedef struct sg__flow sg__flow;
#define SG__FLOW_INF (INT64_MAX / 4)
/* A network of nnodes nodes, no edge. Errors: SG_ELIMIT (more than
 * 2^31 nodes), SG_ENOMEM. */
sg_status sg__flow_new(sg_ctx *ctx, uint32_t nnodes, sg__flow **out);
void sg__flow_free(sg__flow *f);
/* An edge u -> v of capacity cap (edges may repeat). Errors: SG_EINVAL
 * (a node out of range, a capacity outside 0 .. SG__FLOW_INF), SG_ELIMIT,
 * SG_ENOMEM. */
sg_status sg__flow_edge(sg__flow *f, uint32_t u, uint32_t v, int64_t cap);
/* Room for about edges more edges, so that adding them copies nothing.
 * Best effort: where memory runs out nothing is reserved (sg__flow_edge
 * grows as it goes). */
void sg__flow_reserve(sg__flow *f, size_t edges);
/* The maximum flow from s to t, which is the capacity of a minimum cut
 * (*value), and that cut's source side (source_side[v] 0 for the nodes
 * that reach t in the residual network, 1 for the others, as networkx's
 * minimum_cut partitions: of the minimum cuts, the one whose source side
 * is largest; may be NULL). Once per network (the flow stays in it). Errors: SG_EINVAL
 * (s or t out of range, s == t), SG_ELIMIT (every cut takes an infinite
 * edge: unbounded; a capacity past int64), SG_ENOMEM. */
sg_status sg__flow_mincut(sg__flow *f, uint32_t s, uint32_t t, int64_t *value, uint8_t *source_side);

#endif /* SG_AOT_PRIVATE_H */
