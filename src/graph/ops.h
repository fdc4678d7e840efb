/* The operator table (ops.def) as the graph layer reads it: an identifier
 * per overload, and the columns of the graph layer's concern. exec reads its
 * own column (the kernel) from ops.def itself. */
#ifndef SG_GRAPH_OPS_H
#define SG_GRAPH_OPS_H

#include <stdint.h>

#include "graph/schema.h"

/* One identifier per row of ops.def, in the table's order. */
typedef enum sg__op {
#define OP(id, ...) SG_OP_##id,
#include "graph/ops.def"
#undef OP
    SG_OP_COUNT
} sg__op;

/* No operator: a schema parsed outside the table, or an absent column. */
#define SG_OP_NONE UINT16_MAX
#define SG_OP_none SG_OP_NONE

/* VARIANT of the pointwise rule: how the result's dtype follows the operands'. */
enum {
    SG_PW_ARITH,   /* type promotion (add, mul, where ...) */
    SG_PW_FLOAT,   /* promoted, then a float dtype (sin, exp ...) */
    SG_PW_DIV,     /* true division: a float dtype */
    SG_PW_COMPARE, /* bool (eq, lt ...) */
    SG_PW_SAME,    /* the operand's, never bool (neg, abs, relu) */
    SG_PW_FILL,    /* writes self's dtype (copy_, fill_, zero_) */
};

/* VARIANT of the out= rule (sg__meta_out): the dtype the out tensor may
 * have, as the operator's out= kernel checks it. */
enum {
    SG_OUT_SAME, /* the result's (mm, amax, masked_select, nonzero) */
    SG_OUT_CAST, /* one the result's casts to (cat, stack, mean) */
    SG_OUT_INTO, /* any: the result is computed in it (sum, zeros, ones, full, empty) */
};

/* PYFLAGS: how Python's arguments bind to the overloads. */
enum {
    SG_PYF_VARARGS = 1, /* f(2, 3) packs its ints into the first int list */
    SG_PYF_WRAP = 2,    /* a number may stand for the Tensor `other` (wrapped) */
    SG_PYF_FUNC = 4,    /* torch.X only (no Tensor method) */
    SG_PYF_CREATE = 8,  /* creation: tensors default to float64 */
};

/* TAGS. */
enum {
    SG_T_NODIFF = 1,       /* the outputs never require grad (nonzero, zeros_like, fill_ ...) */
    SG_T_INPLACE_VIEW = 2, /* an in-place op that changes self's view (t_, squeeze_ ...) */
    SG_T_IMPLICIT = 4,     /* PyTorch 1.13's is a CompositeImplicitAutograd kernel that makes checks of its own
                              before it calls the operator autograd records (narrow: slice), so those come
                              before autograd's (a grad_fn asked of its arguments) */
};

struct sg__mcall;
struct sg_tracer;
typedef sg_status (*sg__meta_fn)(struct sg__mcall *m, uint32_t *out);
typedef sg_status (*sg__composite_fn)(struct sg_tracer *t, struct sg__mcall *m, uint32_t *out, unsigned line);

/* What the graph layer knows of an operator: one row of ops.def. */
typedef struct sg__opinfo {
    const char *schema;         /* the schema text */
    sg__meta_fn rule;           /* the shape rule, or NULL */
    uint8_t variant;            /* what the rule is told (SG_PW_* ...) */
    sg__composite_fn composite; /* traced as the calls it makes, or NULL */
    const char *py;             /* the Python spelling, or NULL */
    uint8_t pyflags;            /* SG_PYF_* */
    uint8_t tags;               /* SG_T_* */
    uint16_t functional;        /* the functional variant, or SG_OP_NONE */
    uint16_t inverse;           /* the view's scatter, or SG_OP_NONE */
    const struct sg__deriv *deriv; /* the derivative formula (graph/derivatives.h); fn NULL: none */
} sg__opinfo;

/* The row of op (SG_OP_*), or NULL for SG_OP_NONE and out of range. */
const sg__opinfo *sg__op_info(unsigned op);

/* Does a call of s bump the version counter of what it writes, as PyTorch
 * 1.13 does? Every operator that writes (in place, out=, the in-place views
 * and set_) but detach_, requires_grad_ and resize_. (A node flagged
 * SG_NODE_DATA, a write through .data, bumps none either: the caller's to
 * check.) */
bool sg__op_bumps_version(const sg__schema *s);

/* A Python spelling with the overloads it may call, in the table's order. */
#define SG_PYOP_OVERLOADS 8
typedef struct sg__pyop {
    const char *py;
    uint8_t flags;   /* SG_PYF_* */
    uint8_t n;       /* overloads */
    bool any_out;    /* one of them takes out= */
    const sg__schema *s[SG_PYOP_OVERLOADS];
} sg__pyop;

/* The Python spelling name of registry r, or NULL. */
const sg__pyop *sg__opreg_pyop(const sg__opreg *r, const char *name);
/* The schema of op in registry r (NULL for SG_OP_NONE). */
const sg__schema *sg__opreg_op(const sg__opreg *r, unsigned op);

#endif /* SG_GRAPH_OPS_H */
