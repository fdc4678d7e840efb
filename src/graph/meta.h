/* Shape rules (meta*.c): one per operator family, called by the tracer
 * (tracer.c) with the call's arguments bound to the operator's schema. A
 * rule asks the environment every question it needs through the helpers
 * below (each records its guard with the operator's name as provenance),
 * and makes the result values in the graph; the tracer then records the
 * node, or, when the rule fails, drops whatever it made. */
#ifndef SG_GRAPH_META_H
#define SG_GRAPH_META_H

#include "graph/graph.h"
#include "graph/ops.h"

/* A call under way: the schema's arguments, each given or defaulted. */
typedef struct sg__mcall {
    sg__graph *g;
    sg_env *env;
    const sg__schema *s;
    char op[2 * SG_SCHEMA_NAME]; /* "mul.Tensor": the provenance of its guards */
    sg__garg a[SG_SCHEMA_ARGS];  /* by schema position; SG_A_NONE where absent and None */
    bool given[SG_SCHEMA_ARGS];
    const sg_expr *binds[8];     /* unbacked symbols the node binds */
    size_t nbinds;
    const sg_expr *asserts[8];   /* runtime asserts due after the node */
    size_t nasserts;
    uint8_t flags;               /* SG_NODE_* the node gets (what the caller knows: `.data`) */
    uint16_t rg;                 /* the node's rg (the tracer's: which arguments required grad) */
} sg__mcall;

/* The rules the operator table names (its RULE column: sg__meta_<RULE>). */
sg_status sg__meta_pointwise(sg__mcall *m, uint32_t *out);
sg_status sg__meta_view(sg__mcall *m, uint32_t *out);
sg_status sg__meta_reduce(sg__mcall *m, uint32_t *out);
sg_status sg__meta_fill(sg__mcall *m, uint32_t *out);
sg_status sg__meta_copy(sg__mcall *m, uint32_t *out);
sg_status sg__meta_like(sg__mcall *m, uint32_t *out);
sg_status sg__meta_arange(sg__mcall *m, uint32_t *out);
sg_status sg__meta_cat(sg__mcall *m, uint32_t *out);
sg_status sg__meta_matmul(sg__mcall *m, uint32_t *out);
sg_status sg__meta_nonzero(sg__mcall *m, uint32_t *out);
sg_status sg__meta_masked_select(sg__mcall *m, uint32_t *out);
sg_status sg__meta_item(sg__mcall *m, uint32_t *out);
sg_status sg__meta_sym(sg__mcall *m, uint32_t *out);
sg_status sg__meta_set(sg__mcall *m, uint32_t *out);
sg_status sg__meta_requires_grad(sg__mcall *m, uint32_t *out);
sg_status sg__meta_unsafe_view(sg__mcall *m, uint32_t *out);
sg_status sg__meta_out(sg__mcall *m, uint32_t *out);
sg_status sg__meta_scatter(sg__mcall *m, uint32_t *out);
sg_status sg__meta_view_backward(sg__mcall *m, uint32_t *out);
sg_status sg__meta_scalar_tensor(sg__mcall *m, uint32_t *out);
sg_status sg__meta_new_empty(sg__mcall *m, uint32_t *out);
sg_status sg__meta_masked_scatter(sg__mcall *m, uint32_t *out);

/* ---- helpers for rules (CHAIN, in util_private.h, returns an error) ---- */

/* The integer argument named name (NULL when absent or None). */
const sg_expr *sg__meta_arg_expr(const sg__mcall *m, const char *name);

/* Floating dtypes, and PyTorch's canCast (no float into an integral type,
 * nothing but bool into bool). */
static inline bool sg__dtype_is_float(sg_dtype d)
{
    return d == SG_FLOAT64 || d == SG_FLOAT32;
}
static inline bool sg__dtype_can_cast(sg_dtype from, sg_dtype to)
{
    return !(sg__dtype_is_float(from) && !sg__dtype_is_float(to)) && !(from != SG_BOOL && to == SG_BOOL);
}

/* The fake tensor of value v. */
static inline const sg__fake_tensor *sg__mt(const sg__mcall *m, uint32_t v)
{
    return &m->g->vals[v].u.t;
}
/* Ask the environment: evaluate (guarding), guard_size_oblivious. */
sg_status sg__meta_eval(sg__mcall *m, bool *out, const sg_expr *cond);
sg_status sg__meta_eval_oblivious(sg__mcall *m, bool *out, const sg_expr *cond);
/* a == b, a >= b ... built in the context (NULL when memory runs out: the
 * helpers above then fail with SG_ENOMEM). */
const sg_expr *sg__meta_rel(sg__mcall *m, sg_rel rel, const sg_expr *a, const sg_expr *b);
/* torch._check(cond) with the message: guard, runtime assert or SG_ESHAPE. */
sg_status sg__meta_check(sg__mcall *m, const sg_expr *cond, const char *what);
/* SG_ESHAPE with "OP: what" and the sizes of the tensor arguments. */
sg_status sg__meta_shape_error(sg__mcall *m, const char *what);
/* *e with every Max, Min, FloorDiv, Mod (and Abs, CleanDiv, TruncDiv,
 * TruncMod) whose value the facts decide folded, asking nothing that records
 * a guard (as std::max/std::min over SymInts whose order is known
 * statically): what sg_facts_simplify makes of each such node, where that
 * names no symbol the node does not (replacements stay the printer's).
 * Every rule's result goes through it (sg__meta_tensor); a rule that asks
 * about a size before making its result folds it first. *e NULL: the
 * context's error (a failed constructor). Errors: SG_ENOMEM, SG_ELIMIT. */
sg_status sg__meta_fold(sg__mcall *m, const sg_expr **e);
/* Contiguous strides of sizes (PyTorch's: stride[i] = stride[i+1] * max(size[i+1], 1)). */
sg_status sg__meta_contiguous(sg__mcall *m, const sg_expr **strides, const sg_expr *const *sizes, size_t n);
/* A new tensor value; storage SG_NOVAL for a new storage. Its sizes,
 * strides and offset are folded (sg__meta_fold) first; where the graph
 * asks for it (lint_sizes: sg_tracer_lint_sizes), each must then be what sg_facts_simplify makes of it up to the
 * replacements (sg_env_replace), else SG_EINTERNAL "OP: size lint: ...". */
sg_status sg__meta_tensor(sg__mcall *m, uint32_t *out, sg_dtype dtype, size_t ndim, const sg_expr *const *sizes,
                          const sg_expr *const *strides, const sg_expr *offset, uint32_t storage);
/* The broadcast shape of the call's tensor operands (sizes has room for
 * SG_MAX_DIMS), with the checks and guards of broadcasting. */
sg_status sg__meta_broadcast_shape(sg__mcall *m, const sg_expr **sizes, size_t *n);
/* The strides of a new tensor laid out like v (empty_like and clone with
 * preserve_format): v's order of dimensions as TensorIterator gives it. */
sg_status sg__meta_like_strides(sg__mcall *m, uint32_t v, const sg_expr **strides);
/* Is v contiguous (is_contiguous: sizes of 1 skipped, no elements: yes)? Asked. */
sg_status sg__meta_is_contiguous(sg__mcall *m, uint32_t v, bool *out);
/* reshape's plan for self = m->a[0] and the new shape: the sizes with -1
 * worked out (SG_ESHAPE when the shape cannot be), and whether a view can
 * have them (else reshape copies). */
sg_status sg__meta_reshape_plan(sg__mcall *m, const sg_expr *const *shape, size_t n, const sg_expr **sizes,
                                bool *viewable);
/* PyTorch's computeStride: the strides (into out) of a view of shape
 * shape[0 .. n) of a tensor with sizes and strides of rank ndim; *ok false
 * where no view can have that shape. */
sg_status sg__meta_view_strides(sg__mcall *m, size_t ndim, const sg_expr *const *sizes, const sg_expr *const *strides,
                                const sg_expr *const *shape, size_t n, const sg_expr **out, bool *ok);
/* What a layout reaches in its storage: offset + 1 + sum((size - 1) *
 * stride), or offset where a size is the constant 0 (PyTorch's
 * computeStorageNbytes, in elements). NULL when memory runs out. */
/* resize_: the storage of tensor value v grows to what v's layout reaches
 * (it never shrinks; the Max decided where the facts order the two).
 * Errors: SG_ENOMEM. */
sg_status sg__meta_grow_storage(sg__mcall *m, uint32_t v);
const sg_expr *sg__meta_layout_extent(sg_ctx *ctx, size_t n, const sg_expr *const *sizes,
                                      const sg_expr *const *strides, const sg_expr *offset);
/* The dtype promotion of two dtypes (bool < int64 < float32 < float64). */
sg_dtype sg__meta_promote(sg_dtype a, sg_dtype b);
/* A dimension argument normalized against ndim (negative counts from the
 * end; a rank-0 tensor takes -1 and 0): SG_ESHAPE when out of range. */
sg_status sg__meta_dim(sg__mcall *m, size_t *out, const sg_expr *dim, size_t ndim);

#endif /* SG_GRAPH_META_H */
