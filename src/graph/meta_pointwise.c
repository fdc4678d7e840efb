/* Pointwise operators: broadcasting, type promotion and the strides of the
 * result, as PyTorch computes them (torch/_refs' _broadcast_shapes,
 * c10's ResultTypeState, and TensorIterator's dimension order, which
 * torch/_prims_common's compute_elementwise_output_logical_to_physical_perm
 * restates), for functional, in-place (self keeps its sizes, strides and
 * dtype) and out= forms. */
#include <string.h>

#include "expr/expr_private.h"
#include "graph/meta.h"

/* ---- type promotion ---- */

/* bool < int64 < float32 < float64: with these four dtypes, promoting two is
 * taking the larger. */
static int rank(sg_dtype d)
{
    static const int r[SG_NDTYPE] = {[SG_BOOL] = 0, [SG_INT64] = 1, [SG_FLOAT32] = 2, [SG_FLOAT64] = 3};
    return r[d];
}

static sg_dtype promote(int a, sg_dtype b)
{
    return a < 0 || rank(b) > rank((sg_dtype)a) ? b : (sg_dtype)a;
}

static bool is_float(sg_dtype d)
{
    return d == SG_FLOAT32 || d == SG_FLOAT64;
}

/* c10's combine_categories: the higher-priority result wins unless it is
 * bool or integral and the lower one is floating (or it is bool). -1: none. */
static int combine(int higher, int lower)
{
    if (higher < 0)
        return lower;
    if (lower < 0 || is_float((sg_dtype)higher))
        return higher;
    if (higher == SG_BOOL || is_float((sg_dtype)lower))
        return promote(higher, (sg_dtype)lower);
    return higher;
}

typedef struct {
    int dim, zero, wrapped; /* result per category, -1 for none */
} result_state;

static void update_tensor(result_state *r, sg_dtype d, size_t ndim)
{
    int *c = ndim ? &r->dim : &r->zero;
    *c = promote(*c, d);
}

/* A Python number passed for a Tensor or Scalar parameter (PyTorch's
 * wrapped number: an int is int64, a float the default dtype, float64). */
static void update_number(result_state *r, const sg__garg *a)
{
    sg_dtype d = a->kind == SG_A_FLOAT ? SG_FLOAT64
               : a->kind == SG_A_BOOL || (a->kind == SG_A_EXPR && sg_expr_sort(a->u.e) == SG_SORT_BOOL) ? SG_BOOL
               : SG_INT64;
    r->wrapped = promote(r->wrapped, d);
}

/* ---- the operator's kind ---- */

typedef enum {
    K_ARITH,   /* add sub mul pow where clamp: the promoted type */
    K_DIV,     /* true division: integral results become float64 */
    K_COMPARE, /* eq ne lt le gt ge: bool */
    K_FLOAT,   /* exp log sin cos tanh sigmoid: integral inputs give float64 */
    K_SAME     /* neg abs relu: the input's type (neg of bool refused) */
} kind;

static kind kind_of(const char *name)
{
    static const char *const cmp[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    static const char *const flt[] = {"exp", "log", "sin", "cos", "tanh", "sigmoid"};
    char base[SG_SCHEMA_NAME];
    size_t n = strlen(name);
    memcpy(base, name, n + 1);
    if (n && base[n - 1] == '_')
        base[n - 1] = '\0';
    for (size_t i = 0; i < 6; i++) {
        if (!strcmp(base, cmp[i]))
            return K_COMPARE;
        if (!strcmp(base, flt[i]))
            return K_FLOAT;
    }
    if (!strcmp(base, "div"))
        return K_DIV;
    if (!strcmp(base, "neg") || !strcmp(base, "abs") || !strcmp(base, "relu"))
        return K_SAME;
    return K_ARITH;
}

/* ---- operands ---- */

#define MAX_OPS 4

typedef struct {
    uint32_t t[MAX_OPS]; /* the tensor operands */
    size_t n;
    int out;             /* the schema position of out=, or -1 */
    result_state rs;
} operands;

static sg_status collect(sg__mcall *m, operands *o)
{
    o->n = 0;
    o->out = (m->s->flags & SG_OPF_OUT) ? sg__schema_arg(m->s, "out") : -1;
    o->rs = (result_state){-1, -1, -1};
    for (int i = 0; i < m->s->nargs; i++) {
        const sg__sty *ty = &m->s->args[i].type;
        const sg__garg *a = &m->a[i];
        if (i == o->out || ty->list || !strcmp(m->s->args[i].name, "alpha"))
            continue;
        if (ty->base == SG_TY_TENSOR && a->kind == SG_A_VALUE) {
            if (o->n == MAX_OPS)
                return sg__err(m->g->ctx, SG_EINTERNAL, "%s: too many operands", m->op);
            o->t[o->n++] = a->u.v;
            if (strcmp(m->s->args[i].name, "condition")) /* where's condition takes no part in the type */
                update_tensor(&o->rs, (sg_dtype)sg__mt(m, a->u.v)->dtype, sg__mt(m, a->u.v)->ndim);
            else if (sg__mt(m, a->u.v)->dtype != SG_BOOL)
                return sg__err(m->g->ctx, SG_ETYPE, "%s: the condition must be a bool tensor", m->op);
        } else if ((ty->base == SG_TY_TENSOR || ty->base == SG_TY_SCALAR) &&
                   (a->kind == SG_A_EXPR || a->kind == SG_A_FLOAT || a->kind == SG_A_BOOL)) {
            update_number(&o->rs, a);
        }
    }
    if (!o->n)
        return sg__err(m->g->ctx, SG_EINVAL, "%s: no tensor operand", m->op);
    return SG_OK;
}

/* ---- broadcasting ---- */

/* PyTorch's _broadcast_shapes over the operands: out has *ndim sizes. */
static sg_status broadcast(sg__mcall *m, const operands *o, const sg_expr **out, size_t *ndim)
{
    sg_ctx *ctx = m->g->ctx;
    size_t n = 0;
    for (size_t k = 0; k < o->n; k++)
        n = sg__mt(m, o->t[k])->ndim > n ? sg__mt(m, o->t[k])->ndim : n;
    for (size_t i = 0; i < n; i++)
        out[i] = ctx->one;
    for (size_t k = 0; k < o->n; k++) {
        const sg__fake_tensor *t = sg__mt(m, o->t[k]);
        for (size_t j = 0; j < t->ndim; j++) {
            size_t at = n - t->ndim + j;
            const sg_expr *sz = sg__graph_size(m->g, o->t[k], j);
            bool one;
            sg_status s = sg__meta_eval_oblivious(m, &one, sg__meta_rel(m, SG_REL_EQ, out[at], ctx->one));
            if (s)
                return s;
            if (one) {
                out[at] = sz;
                continue;
            }
            bool not_one;
            if ((s = sg__meta_eval_oblivious(m, &not_one, sg__meta_rel(m, SG_REL_NE, sz, ctx->one))))
                return s;
            if (not_one && (s = sg__meta_check(m, sg__meta_rel(m, SG_REL_EQ, out[at], sz),
                                               "the sizes of the operands do not broadcast")))
                return s;
        }
    }
    *ndim = n;
    return SG_OK;
}

/* The strides of operand v expanded to sizes (rank n): 0 where it has no
 * dimension or a size 1 stretched to another size. */
static void expanded_strides(sg__mcall *m, uint32_t v, const sg_expr *const *sizes, size_t n, const sg_expr **out)
{
    const sg__fake_tensor *t = sg__mt(m, v);
    sg_ctx *ctx = m->g->ctx;
    for (size_t i = 0; i < n; i++) {
        if (i < n - t->ndim) {
            out[i] = ctx->zero;
            continue;
        }
        size_t j = i - (n - t->ndim);
        const sg_expr *sz = sg__graph_size(m->g, v, j);
        out[i] = sz == ctx->one && sizes[i] != ctx->one ? ctx->zero : sg__graph_stride(m->g, v, j);
    }
}

/* ---- the result's strides ---- */

static sg_status known_contiguous(sg__mcall *m, uint32_t v, bool *out)
{
    const sg__fake_tensor *t = sg__mt(m, v);
    const sg_expr *want[SG_MAX_DIMS], *sizes[SG_MAX_DIMS];
    for (uint32_t d = 0; d < t->ndim; d++)
        sizes[d] = sg__graph_size(m->g, v, d);
    sg_status s = sg__meta_contiguous(m, want, sizes, t->ndim);
    *out = true;
    for (uint32_t d = 0; d < t->ndim && !s && *out; d++) {
        if (sizes[d] == m->g->ctx->one || want[d] == sg__graph_stride(m->g, v, d))
            continue;
        sg_truth k;
        s = sg_env_known(m->env, &k, sg__meta_rel(m, SG_REL_EQ, want[d], sg__graph_stride(m->g, v, d)));
        *out = k == SG_TRUE;
    }
    return s;
}

typedef struct {
    sg__mcall *m;
    const sg_expr *const *sizes;
    const sg_expr *strides[MAX_OPS][SG_MAX_DIMS]; /* each operand's, expanded */
    size_t n;
} order;

/* TensorIterator's should_swap: 1 if dimension a goes after b (is faster),
 * -1 if before, 0 if undecided. */
static sg_status should_swap(order *O, size_t a, size_t b, int *out)
{
    sg__mcall *m = O->m;
    sg_ctx *ctx = m->g->ctx;
    *out = 0;
    for (size_t k = 0; k < O->n; k++) {
        const sg_expr *sa = O->strides[k][a], *sb = O->strides[k][b];
        bool z, lt, gt, bigger;
        sg_status s = sg__meta_eval_oblivious(m, &z, sg__meta_rel(m, SG_REL_EQ, sa, ctx->zero));
        if (!s && !z)
            s = sg__meta_eval_oblivious(m, &z, sg__meta_rel(m, SG_REL_EQ, sb, ctx->zero));
        if (s || z) {
            if (s)
                return s;
            continue;
        }
        if ((s = sg__meta_eval_oblivious(m, &lt, sg__meta_rel(m, SG_REL_LT, sa, sb))))
            return s;
        if (lt) {
            *out = -1;
            return SG_OK;
        }
        if ((s = sg__meta_eval_oblivious(m, &gt, sg__meta_rel(m, SG_REL_GT, sa, sb))))
            return s;
        if (gt) {
            *out = 1;
            return SG_OK;
        }
        if ((s = sg__meta_eval_oblivious(m, &bigger, sg__meta_rel(m, SG_REL_GT, O->sizes[a], O->sizes[b]))))
            return s;
        if (bigger) {
            *out = 1;
            return SG_OK;
        }
    }
    return SG_OK;
}

/* The result's strides: contiguous in the order TensorIterator gives the
 * dimensions (the operands' own order where they agree). */
static sg_status result_strides(sg__mcall *m, const operands *o, const sg_expr *const *sizes, size_t n,
                                const sg_expr **strides)
{
    bool all = true;
    for (size_t k = 0; k < o->n && all; k++) {
        sg_status s = known_contiguous(m, o->t[k], &all);
        if (s)
            return s;
    }
    if (n <= 1 || all)
        return sg__meta_contiguous(m, strides, sizes, n);
    order O = {.m = m, .sizes = sizes, .n = o->n};
    for (size_t k = 0; k < o->n; k++)
        expanded_strides(m, o->t[k], sizes, n, O.strides[k]);
    size_t perm[SG_MAX_DIMS];
    for (size_t i = 0; i < n; i++)
        perm[i] = n - 1 - i;
    for (size_t i = 1; i < n; i++) { /* insertion sort that stops at an undecided pair */
        size_t d1 = i;
        for (size_t d0 = i; d0-- > 0;) {
            int c;
            sg_status s = should_swap(&O, perm[d0], perm[d1], &c);
            if (s)
                return s;
            if (c > 0) {
                size_t x = perm[d0];
                perm[d0] = perm[d1];
                perm[d1] = x;
                d1 = d0;
            } else if (c < 0) {
                break;
            }
        }
    }
    const sg_expr *psizes[SG_MAX_DIMS], *pstrides[SG_MAX_DIMS];
    for (size_t i = 0; i < n; i++) /* outermost first: perm reversed */
        psizes[i] = sizes[perm[n - 1 - i]];
    sg_status s = sg__meta_contiguous(m, pstrides, psizes, n);
    for (size_t i = 0; i < n && !s; i++)
        strides[perm[n - 1 - i]] = pstrides[i];
    return s;
}

/* ---- the rule ---- */

/* May a value of type from be written into a tensor of type to? */
static bool can_cast(sg_dtype from, sg_dtype to)
{
    if (is_float(from) && !is_float(to))
        return false;
    return !(from != SG_BOOL && to == SG_BOOL);
}

static sg_status result_dtype(sg__mcall *m, const operands *o, sg_dtype *out)
{
    int t = combine(o->rs.dim, combine(o->rs.zero, o->rs.wrapped));
    sg_dtype d = (sg_dtype)t;
    switch (kind_of(m->s->name)) {
    case K_COMPARE:
        *out = SG_BOOL;
        return SG_OK;
    case K_DIV:
    case K_FLOAT:
        *out = is_float(d) ? d : SG_FLOAT64;
        return SG_OK;
    case K_SAME:
        if (d == SG_BOOL && !strncmp(m->s->name, "neg", 3))
            return sg__err(m->g->ctx, SG_ETYPE, "%s: negation of a bool tensor is not supported", m->op);
        break;
    case K_ARITH:
        if (!strncmp(m->s->name, "sub", 3) && d == SG_BOOL)
            return sg__err(m->g->ctx, SG_ETYPE, "%s: subtraction of bool tensors is not supported", m->op);
        break;
    }
    *out = d;
    return SG_OK;
}

/* Where the result must go (in-place: self; out=: out), checked. */
static sg_status into(sg__mcall *m, uint32_t dst, const char *what, sg_dtype d, const sg_expr *const *sizes, size_t n,
                      uint32_t *out)
{
    const sg__fake_tensor *t = sg__mt(m, dst);
    if (!can_cast(d, (sg_dtype)t->dtype))
        return sg__err(m->g->ctx, SG_ETYPE, "%s: result type %s can't be cast to the desired output type %s", m->op,
                       sg__dtype_name(d), sg__dtype_name((sg_dtype)t->dtype));
    bool same = t->ndim == n;
    for (size_t i = 0; i < n && same; i++) {
        if (sizes[i] == sg__graph_size(m->g, dst, i))
            continue;
        sg_status s = sg__meta_eval(m, &same, sg__meta_rel(m, SG_REL_EQ, sizes[i], sg__graph_size(m->g, dst, i)));
        if (s)
            return s;
    }
    if (!same && !strcmp(what, "self"))
        return sg__meta_shape_error(m, "the broadcast shape does not match the shape of self");
    const sg_expr *strides[SG_MAX_DIMS];
    if (same) { /* the tensor itself, with a new number */
        for (size_t i = 0; i < n; i++)
            strides[i] = sg__graph_stride(m->g, dst, i);
        return sg__meta_tensor(m, out, (sg_dtype)t->dtype, n, sizes, strides, t->offset, t->storage);
    }
    sg_status s = sg__meta_contiguous(m, strides, sizes, n); /* out= resized */
    return s ? s : sg__meta_tensor(m, out, (sg_dtype)t->dtype, n, sizes, strides, t->offset, t->storage);
}

sg_status sg__meta_pointwise(sg__mcall *m, uint32_t *out)
{
    operands o;
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
    size_t n;
    sg_dtype d = SG_FLOAT64;
    sg_status s = collect(m, &o);
    if (!s)
        s = broadcast(m, &o, sizes, &n);
    if (!s)
        s = result_dtype(m, &o, &d);
    if (s)
        return s;
    if (m->s->flags & SG_OPF_INPLACE)
        return into(m, m->a[0].u.v, "self", d, sizes, n, out);
    if (o.out >= 0)
        return into(m, m->a[o.out].u.v, "out", d, sizes, n, out);
    if ((s = result_strides(m, &o, sizes, n, strides)))
        return s;
    return sg__meta_tensor(m, out, d, n, sizes, strides, m->g->ctx->zero, SG_NOVAL);
}
