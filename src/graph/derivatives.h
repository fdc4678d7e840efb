/* Derivative formulas: the DERIVATIVE column of ops.def (PyTorch's
 * derivatives.yaml). A formula is given one node of a graph and the
 * gradient of its result, and records the gradients of the node's tensor
 * arguments as calls into the same graph (sg__graph_record), so that a
 * backward is itself a graph, with symbolic shapes from the same rules as
 * the forward's. autograd.c walks a graph backward through them. */
#ifndef SG_GRAPH_DERIVATIVES_H
#define SG_GRAPH_DERIVATIVES_H

#include "graph/graph.h"
#include "graph/schema.h"

/* What a formula reads and writes. */
typedef struct sg__dctx {
    sg__graph *g;               /* the graph: the node's, and where the backward's calls go */
    uint32_t node;              /* the forward node */
    const sg__schema *s;        /* its operator */
    sg__garg a[SG_SCHEMA_ARGS]; /* its arguments by schema position, defaults filled in */
    uint32_t out;               /* its value */
    uint32_t grad;              /* the gradient of out: a tensor value of g, out's sizes (a list
                                   result: SG_NOVAL, the gradients below) */
    /* a list result (unbind): its values g->ids[res .. res + nres) (read them there: the ids
       move as the graph grows) and their gradients (SG_NOVAL: none reached it) */
    uint32_t res, nres;
    const uint32_t *rgrad;
    bool need[SG_SCHEMA_ARGS];  /* tensor argument i's gradient is wanted */
    uint32_t gin[SG_SCHEMA_ARGS]; /* the formula's answer: argument i's gradient, of its sizes
                                     (SG_NOVAL: none, a zero gradient) */
    /* the node's tensor-list argument (cat, stack), if any: */
    int list;                   /* its schema position, or -1 */
    const uint32_t *lv;         /* its values, nl of them */
    uint32_t nl;
    const bool *lneed;          /* per value: its gradient is wanted */
    uint32_t *lgin;             /* per value: the formula's answer (SG_NOVAL: none) */
    unsigned line;              /* recorded on the backward's nodes */
    sg_status st;               /* the first error of a call: the calls after it record nothing */
} sg__dctx;

/* A row's DERIVATIVE: the formula, and what of the forward it reads
 * (bit i: schema argument i; SG_DSAVE_RESULT: the node's value), which
 * must not have been written in place since the node ran (PyTorch's saved
 * tensors and their version check). */
#define SG_DSAVE_RESULT (1u << 15)
typedef struct sg__deriv {
    void (*fn)(sg__dctx *d);
    uint16_t saves;
    uint16_t own; /* of saves, the arguments whose own gradient reads them (x.sin() reads x for x's;
                     x * y reads y for x's and x for y's, none of them its own): what a value is saved
                     for decides whether it is saved, as PyTorch saves only what the wanted gradients read.
                     An operator of one tensor argument reads it for its own always. */
    uint16_t always; /* of saves, the arguments saved whatever gradients are wanted: those the formulas
                        of more than one argument read, and all of an operator with one differentiable
                        argument (PyTorch's generated code guards a saved tensor by should_compute_output
                        only where one formula of several reads it: div's other, where's condition and
                        masked_select's self and mask are saved unguarded) */
} sg__deriv;

/* x summed to the sizes of like (PyTorch's sum_to: the leading dimensions
 * x has beyond like's, and those where like has size 1 and x another,
 * summed with keepdim, then viewed as like where there were leading ones);
 * x itself where there is nothing to sum. What autograd's engine does to a
 * formula's gradient of other sizes than its argument's (validate_outputs),
 * and formulas that sum explicitly. Errors go to d->st (SG_EINTERNAL: x of
 * a smaller rank; those of the calls); SG_NOVAL after one. */
uint32_t sg__deriv_sum_to(sg__dctx *d, uint32_t x, uint32_t like);

/* x in like's dtype (a copy into zeros of like's sizes and dtype), x itself
 * where the dtypes are one: the engine's validate_outputs casts a
 * formula's gradient to its argument's dtype (a float32 argument of a
 * float64 product takes a float32 gradient). Errors go to d->st; SG_NOVAL
 * after one. */
uint32_t sg__deriv_cast(sg__dctx *d, uint32_t x, uint32_t like);

/* A contiguous copy of x (clone(memory_format=torch.contiguous_format)).
 * Errors go to d->st; SG_NOVAL after one. */
uint32_t sg__deriv_contiguous(sg__dctx *d, uint32_t x);

/* at::zeros of like's sizes and dtype (a custom Function's gradient of an
 * output that none reached, as its materialize_grads gives it). Errors go
 * to d->st; SG_NOVAL after one. */
uint32_t sg__deriv_zeros(sg__dctx *d, uint32_t like);

/* The formulas the table names (sg__d_<DERIVATIVE>). */
#define SG__DERIV(name) extern const sg__deriv sg__d_##name;
#include "graph/derivatives.def"
#undef SG__DERIV

/* The backward of g's root scope (autograd.c), appended to g: reverse-mode
 * from the gradients seeds[k] of values outs[k] to the values ins[k]. A
 * value requires grad as autograd says: an input by its flag; a call's
 * result where a tensor argument does, the operator is differentiable and
 * the result floating, unless grad mode was off for it (SG_NODE_NO_GRAD,
 * .data: SG_NODE_DATA, detach), where a write (SG_NODE_WRITE) keeps its
 * first argument's flag and passes the gradient through unchanged. Each
 * node's gradient goes through its row's formula; gradients that meet are
 * added (add.Tensor). Only what leads to some ins is differentiated. */
typedef struct sg__backward {
    const uint32_t *outs;  /* values of g whose gradients are given */
    const uint32_t *seeds; /* their gradients: tensor values of g, of their sizes */
    size_t nout;
    const uint32_t *ins;   /* the values whose gradients are wanted */
    size_t nin;
    uint32_t *grads;       /* out: per ins[k] its gradient, SG_NOVAL where none reaches it (None) */
    unsigned line;         /* recorded on the backward's nodes */
    size_t nnodes;         /* the nodes differentiated: g's first nnodes (0: all of them; a second
                              backward of the same nodes leaves the first one's out) */
    /* out (owned by the caller: sg_free): what the custom Functions' backwards that ran write of
       what they take (a functional graph's SG_N_FUNCTION writes), nwrites of them, in the order
       they ran; the caller decides what becomes of them */
    struct sg__bwrite *writes;
    size_t nwrites;
} sg__backward;

/* A write of a custom Function's backward (sg__backward.writes): of a
 * tensor it lifts (value: the parent's value; now: its new contents) or
 * of the gradient it takes of an output (value: that gradient, which the
 * backward's nodes first .. end - 1, the Function's own, read; now:
 * SG_NOVAL). */
typedef struct sg__bwrite {
    uint32_t value, now;
    uint32_t first, end;
    uint32_t line;         /* the Function's apply */
} sg__bwrite;

/* A formula's gradient of other sizes than its argument's is summed to them
 * (sg__deriv_sum_to), argument by argument, after the formula, as PyTorch's
 * engine does; a list result's gradients (unbind) go to its formula
 * together, zeros where none reached an element.
 * Errors: SG_EUNSUPPORTED (a gradient reaching a node without a formula,
 * or a cond, naming the operator), SG_EINTERNAL (a formula
 * giving a gradient of other sizes than its argument's), those of the
 * calls recorded (SG_ENOMEM ...). On an error g keeps what was recorded. */
sg_status sg__graph_backward(sg__graph *g, sg__backward *b);

/* The arguments of call node nd of g by schema position, the defaults of
 * those it was not given filled in (a[SG_SCHEMA_ARGS]). Errors: those of
 * sg__record_default (SG_EINTERNAL: a default it cannot read). */
sg_status sg__graph_node_args(sg__graph *g, const sg__gnode *nd, sg__garg *a);

/* Which values of g require grad, by the rules above: *out, one byte per
 * value (1: requires grad), freed by the caller with sg_free. Errors:
 * SG_ENOMEM. */
sg_status sg__graph_requires_grad(sg__graph *g, uint8_t **out);

#endif /* SG_GRAPH_DERIVATIVES_H */
