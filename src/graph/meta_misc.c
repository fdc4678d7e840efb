/* Shape rules of the operators that are neither pointwise nor views:
 * reductions, creation and copies, joins, matrix products, and the
 * data-dependent operators, whose sizes or values become unbacked symbols
 * bound by their node (with the runtime asserts PyTorch inserts after it). */
#include <string.h>

#include "expr/expr_private.h"
#include "graph/meta.h"
#include "shapeguard/print.h"

static int arg_at(const sg__mcall *m, const char *name)
{
    return sg__schema_arg(m->s, name);
}

/* A dtype argument, or -1 for None or absent. */
static int arg_dtype(const sg__mcall *m)
{
    int i = arg_at(m, "dtype");
    return i >= 0 && m->a[i].kind == SG_A_DTYPE ? m->a[i].u.dtype : -1;
}

static void sizes_of(const sg__mcall *m, uint32_t v, const sg_expr **sizes)
{
    for (uint32_t d = 0; d < sg__mt(m, v)->ndim; d++)
        sizes[d] = sg__graph_size(m->g, v, d);
}

#define is_float(d) sg__dtype_is_float((sg_dtype)(d))

static sg_status new_contiguous(sg__mcall *m, uint32_t *out, sg_dtype d, const sg_expr *const *sizes, size_t n)
{
    const sg_expr *strides[SG_MAX_DIMS];
    CHAIN(sg__meta_contiguous(m, strides, sizes, n));
    return sg__meta_tensor(m, out, d, n, sizes, strides, m->g->ctx->zero, SG_NOVAL);
}

/* ---- reductions: sum mean amax amin ---- */

sg_status sg__meta_reduce(sg__mcall *m, uint32_t *out)
{
    uint32_t self = m->a[0].u.v;
    const sg__fake_tensor *t = sg__mt(m, self);
    bool reduce[SG_MAX_DIMS] = {false};
    int di = arg_at(m, "dim");
    bool all = di < 0 || m->a[di].kind != SG_A_EXPRS || m->a[di].u.list.n == 0;
    for (uint32_t k = 0; !all && k < m->a[di].u.list.n; k++) {
        size_t d;
        CHAIN(sg__meta_dim(m, &d, m->g->exprs[m->a[di].u.list.off + k], t->ndim));
        if (t->ndim && reduce[d])
            return sg__meta_shape_error(m, "a dimension appears twice in the list of dims");
        reduce[d] = true;
    }
    for (uint32_t d = 0; all && d < t->ndim; d++)
        reduce[d] = true;
    bool keep = false;
    int ki = arg_at(m, "keepdim");
    if (ki >= 0 && m->a[ki].kind == SG_A_BOOL)
        keep = m->a[ki].u.b;
    bool minmax = m->s->name[0] == 'a'; /* amax, amin */
    const sg_expr *sizes[SG_MAX_DIMS];
    size_t n = 0;
    for (uint32_t d = 0; d < t->ndim; d++) {
        const sg_expr *sz = sg__graph_size(m->g, self, d);
        if (reduce[d] && minmax) { /* amax of nothing is an error, as in PyTorch */
            bool empty;
            CHAIN(sg__meta_eval(m, &empty, sg__meta_rel(m, SG_REL_EQ, sz, m->g->ctx->zero)));
            if (empty)
                return sg__meta_shape_error(m, "expected a reduction dim to have non-zero size");
        }
        if (!reduce[d])
            sizes[n++] = sz;
        else if (keep)
            sizes[n++] = m->g->ctx->one;
    }
    int want = arg_dtype(m);
    sg_dtype d = (sg_dtype)t->dtype;
    if (want >= 0)
        d = (sg_dtype)want;
    else if (!minmax && !is_float(d))
        d = SG_INT64;
    if (!strcmp(m->s->name, "mean") && !is_float(d))
        return sg__err(m->g->ctx, SG_ETYPE, "%s: could not infer the output dtype: the input must be floating "
                                            "point (or give dtype=)", m->op);
    return new_contiguous(m, out, d, sizes, n);
}

/* ---- creation and copies ---- */

/* zeros ones full empty: a size list, a dtype (full: from its value). */
sg_status sg__meta_fill(sg__mcall *m, uint32_t *out)
{
    int si = arg_at(m, "size");
    int want = arg_dtype(m);
    sg_dtype d = want >= 0 ? (sg_dtype)want : SG_FLOAT64;
    int fi = arg_at(m, "fill_value");
    if (want < 0 && fi >= 0) /* full: the value's type (an int gives int64, a bool bool) */
        d = m->a[fi].kind == SG_A_BOOL ? SG_BOOL : m->a[fi].kind == SG_A_EXPR ? SG_INT64 : SG_FLOAT64;
    size_t n = m->a[si].u.list.n;
    if (n > SG_MAX_DIMS)
        return sg__meta_shape_error(m, "too many dimensions");
    const sg_expr *sizes[SG_MAX_DIMS]; /* a copy: making the result may move the graph's expressions */
    memcpy(sizes, m->g->exprs + m->a[si].u.list.off, n * sizeof *sizes);
    for (size_t i = 0; i < n; i++) {
        bool neg;
        CHAIN(sg__meta_eval(m, &neg, sg__meta_rel(m, SG_REL_LT, sizes[i], m->g->ctx->zero)));
        if (neg) { /* PyTorch's check_size_nonnegative, its words */
            sg_ctx *ctx = m->g->ctx;
            sg__buf b = {.ctx = ctx};
            char *dim = NULL;
            for (size_t j = 0; j < n; j++) {
                char *text = NULL;
                if (sg_print(ctx, &text, sizes[j], SG_FMT_PYTHON) == SG_OK)
                    sg__buf_printf(&b, "%s%s", j ? ", " : "", text);
                if (j == i)
                    dim = text;
                else
                    sg_free(text);
            }
            char *list = sg__buf_take(&b);
            sg__err(ctx, SG_ESHAPE, "%s: Trying to create tensor with negative dimension %s: [%s]", m->op,
                    dim ? dim : "?", list ? list : "?");
            sg_free(dim);
            sg_free(list);
            return SG_ESHAPE;
        }
    }
    return new_contiguous(m, out, d, sizes, n);
}

/* zeros_like ones_like empty_like clone: self's sizes, laid out like self. */
sg_status sg__meta_like(sg__mcall *m, uint32_t *out)
{
    uint32_t self = m->a[0].u.v;
    const sg__fake_tensor *t = sg__mt(m, self);
    int want = arg_dtype(m);
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
    sizes_of(m, self, sizes);
    int fi = arg_at(m, "memory_format");
    if (fi >= 0 && m->a[fi].kind == SG_A_MEMFMT && m->a[fi].u.dtype == SG_CONTIGUOUS_FORMAT)
        CHAIN(sg__meta_contiguous(m, strides, sizes, t->ndim));
    else
        CHAIN(sg__meta_like_strides(m, self, strides));
    return sg__meta_tensor(m, out, want >= 0 ? (sg_dtype)want : (sg_dtype)t->dtype, t->ndim, sizes, strides,
                           m->g->ctx->zero, SG_NOVAL);
}

/* copy(self, src): self's sizes and dtype, laid out like self (as
 * empty_like: the written tensor's layout where it is dense, as the copy_ it
 * stands for leaves it; 1.13's kernel would make it contiguous, but only
 * functionalization records this operator, and what follows reads it as
 * the tensor copy_ wrote); src broadcasts to them (the copy_'s rule checked
 * that). */
sg_status sg__meta_copy(sg__mcall *m, uint32_t *out)
{
    uint32_t self = m->a[0].u.v;
    const sg__fake_tensor *t = sg__mt(m, self);
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
    sizes_of(m, self, sizes);
    CHAIN(sg__meta_like_strides(m, self, strides));
    return sg__meta_tensor(m, out, (sg_dtype)t->dtype, t->ndim, sizes, strides, m->g->ctx->zero, SG_NOVAL);
}

/* scalar_tensor(s): a 0-dim tensor of the dtype given, else float64 (the
 * program language's default; PyTorch's backward formulas always give
 * their gradient's). */
sg_status sg__meta_scalar_tensor(sg__mcall *m, uint32_t *out)
{
    int want = arg_dtype(m);
    return new_contiguous(m, out, want >= 0 ? (sg_dtype)want : SG_FLOAT64, NULL, 0);
}

/* new_empty(self, size), new_empty_strided(self, size, stride): a new
 * tensor of those sizes (contiguous, or of the strides given), of the dtype
 * given, else self's. */
sg_status sg__meta_new_empty(sg__mcall *m, uint32_t *out)
{
    int si = arg_at(m, "size"), ti = arg_at(m, "stride"), want = arg_dtype(m);
    sg_dtype d = want >= 0 ? (sg_dtype)want : (sg_dtype)sg__mt(m, m->a[0].u.v)->dtype;
    size_t n = m->a[si].u.list.n;
    if (n > SG_MAX_DIMS || (ti >= 0 && m->a[ti].u.list.n != n))
        return sg__meta_shape_error(m, n > SG_MAX_DIMS ? "too many dimensions" : "mismatch in length of strides and shape");
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS]; /* copies: making the result may move the graph's expressions */
    memcpy(sizes, m->g->exprs + m->a[si].u.list.off, n * sizeof *sizes);
    if (ti < 0)
        return new_contiguous(m, out, d, sizes, n);
    memcpy(strides, m->g->exprs + m->a[ti].u.list.off, n * sizeof *strides);
    return sg__meta_tensor(m, out, d, n, sizes, strides, m->g->ctx->zero, SG_NOVAL);
}

/* arange(end), arange(start, end), arange(start, end, step) over ints. */
sg_status sg__meta_arange(sg__mcall *m, uint32_t *out)
{
    sg_ctx *ctx = m->g->ctx;
    const sg_expr *start = sg__meta_arg_expr(m, "start"), *end = sg__meta_arg_expr(m, "end"), *step = sg__meta_arg_expr(m, "step");
    if (!start)
        start = ctx->zero;
    if (!step)
        step = ctx->one;
    int si = arg_at(m, "step");
    if (!end || (arg_at(m, "start") >= 0 && !sg__meta_arg_expr(m, "start")) || (si >= 0 && !sg__meta_arg_expr(m, "step")))
        return sg__err(ctx, SG_EUNSUPPORTED, "%s: unsupported: arange over floats", m->op);
    bool pos;
    CHAIN(sg__meta_eval(m, &pos, sg__meta_rel(m, SG_REL_GT, step, ctx->zero)));
    if (!pos)
        return sg__err(ctx, SG_EUNSUPPORTED, "%s: unsupported: arange with a step that is not positive", m->op);
    const sg_expr *len = sg__sub(ctx, end, start), *n = len ? sg__ceildiv(ctx, len, step) : NULL;
    CHAIN(sg__meta_fold(m, &n)); /* asked below in its folded form */
    bool neg;
    CHAIN(sg__meta_eval(m, &neg, sg__meta_rel(m, SG_REL_LT, n, ctx->zero)));
    if (neg)
        return sg__meta_shape_error(m, "upper bound and larger bound inconsistent with step sign");
    int want = arg_dtype(m);
    return new_contiguous(m, out, want >= 0 ? (sg_dtype)want : SG_INT64, &n, 1);
}

/* ---- joins ---- */

/* cat's legacy rule: a 1-d tensor without elements is skipped. */
static sg_status skipped(sg__mcall *m, uint32_t v, bool *out)
{
    *out = false;
    if (sg__mt(m, v)->ndim != 1)
        return SG_OK;
    return sg__meta_eval_oblivious(m, out, sg__meta_rel(m, SG_REL_EQ, sg__graph_size(m->g, v, 0), m->g->ctx->zero));
}

/* A layout: sizes and strides (a tensor of the graph, or one a rule
 * works out on the way, such as stack's unsqueezed inputs). */
typedef struct layout {
    size_t n;
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
} layout;

static void layout_of(sg__mcall *m, uint32_t v, layout *L)
{
    L->n = sg__mt(m, v)->ndim;
    for (size_t d = 0; d < L->n; d++) {
        L->sizes[d] = sg__graph_size(m->g, v, d);
        L->strides[d] = sg__graph_stride(m->g, v, d);
    }
}

/* c10's is_channels_last_strides_2d / _3d (the heuristic behind
 * suggest_memory_format): do L's strides look channels-last, for a 4-d
 * (5-d) tensor? Dimensions from fastest to slowest 1, 3, 2, 0 (1, 4, 3, 2, 0),
 * strides non-decreasing, no size 0, a channel stride not 0, and the
 * ambiguous N111 case read as contiguous. Each comparison is asked. */
static sg_status strides_like_channels_last(sg__mcall *m, const layout *L, bool *out)
{
    static const int order4[4] = {1, 3, 2, 0}, order5[5] = {1, 4, 3, 2, 0};
    sg_ctx *ctx = m->g->ctx;
    size_t n = L->n;
    const int *order = n == 4 ? order4 : order5;
    *out = false;
    if (n != 4 && n != 5)
        return SG_OK;
    bool b;
    const sg_expr *c_stride = L->strides[1];
    CHAIN(sg__meta_eval(m, &b, sg__meta_rel(m, SG_REL_EQ, c_stride, ctx->zero)));
    if (b)
        return SG_OK;
    const sg_expr *min = ctx->zero;
    for (size_t i = 0; i < n; i++) {
        int d = order[i];
        const sg_expr *size = L->sizes[d], *stride = L->strides[d];
        CHAIN(sg__meta_eval(m, &b, sg__meta_rel(m, SG_REL_EQ, size, ctx->zero)));
        if (b)
            return SG_OK;
        CHAIN(sg__meta_eval(m, &b, sg__meta_rel(m, SG_REL_LT, stride, min)));
        if (b)
            return SG_OK;
        if (d == 0) {
            CHAIN(sg__meta_eval(m, &b, sg__meta_rel(m, SG_REL_EQ, min, c_stride)));
            if (b)
                return SG_OK;
        }
        min = stride;
        CHAIN(sg__meta_eval(m, &b, sg__meta_rel(m, SG_REL_GT, size, ctx->one)));
        if (b && !(min = sg__mul(ctx, min, size)))
            return sg_ctx_last_error(ctx);
    }
    *out = true;
    return SG_OK;
}

/* The strides of cat's result (sizes, of rank rank) from its inputs'
 * layouts: channels-last (3d) when every input suggests that format
 * (cat_compute_output_memory_format: the legacy skipped inputs count too),
 * contiguous otherwise. */
static sg_status cat_strides(sg__mcall *m, const layout *ins, size_t nins, const sg_expr *const *sizes, size_t rank,
                             const sg_expr **strides)
{
    sg_ctx *ctx = m->g->ctx;
    bool cl = true;
    for (size_t k = 0; k < nins && cl; k++) {
        /* the same format for all: channels-last suggested by a tensor of the result's rank */
        cl = ins[k].n == rank;
        if (cl)
            CHAIN(strides_like_channels_last(m, &ins[k], &cl));
    }
    if (!cl)
        return sg__meta_contiguous(m, strides, sizes, rank);
    /* c10's get_channels_last_strides_2d / _3d: channels fastest, then the
     * last dimension back to the second, then the batch */
    strides[1] = ctx->one;
    const sg_expr *acc = sizes[1];
    for (size_t d = rank - 1; d >= 2; d--) {
        strides[d] = acc;
        if (!(acc = sg__mul(ctx, acc, sizes[d])))
            return sg_ctx_last_error(ctx);
    }
    strides[0] = acc;
    return SG_OK;
}

/* The layout of stack's result, as PyTorch 1.13's stack makes it: for a
 * dimension inside the inputs' rank, cat along it viewed with the stacked
 * sizes; for the last, cat of the inputs unsqueezed there. */
static sg_status stack_strides(sg__mcall *m, const layout *ins, size_t nins, const sg_expr *const *sizes, size_t rank,
                               size_t d, const sg_expr **strides)
{
    if (d + 1 == rank) { /* cat of unsqueeze(x, rank - 1): the new stride 1 */
        for (size_t k = 0; k < nins; k++) {
            layout *L = (layout *)&ins[k];
            L->sizes[L->n] = m->g->ctx->one;
            L->strides[L->n++] = m->g->ctx->one;
        }
        return cat_strides(m, ins, nins, sizes, rank, strides);
    }
    layout cat = {.n = rank - 1};
    for (size_t i = 0, j = 0; i < rank; i++) {
        if (i == d)
            continue;
        cat.sizes[j++] = sizes[i];
    }
    if (!(cat.sizes[d] = sg__mul(m->g->ctx, sizes[d], sizes[d + 1])))
        return sg_ctx_last_error(m->g->ctx);
    CHAIN(cat_strides(m, ins, nins, cat.sizes, cat.n, cat.strides));
    bool ok;
    CHAIN(sg__meta_view_strides(m, cat.n, cat.sizes, cat.strides, sizes, rank, strides, &ok));
    if (!ok) /* splitting one dimension is always a view */
        return sg__err(m->g->ctx, SG_EINTERNAL, "%s: stack's view of cat is not a view", m->op);
    return SG_OK;
}

sg_status sg__meta_cat(sg__mcall *m, uint32_t *out)
{
    sg_ctx *ctx = m->g->ctx;
    const sg__garg *list = &m->a[0];
    bool stack = !strcmp(m->s->name, "stack");
    if (list->u.list.n == 0)
        return sg__meta_shape_error(m, "expected a non-empty list of tensors");
    bool skip[64] = {false};
    if (list->u.list.n > 64)
        return sg__err(ctx, SG_EUNSUPPORTED, "%s: unsupported: more than 64 tensors", m->op);
    uint32_t first = m->g->ids[list->u.list.off];
    sg_dtype dt = (sg_dtype)sg__mt(m, first)->dtype;
    size_t kept = list->u.list.n;
    for (uint32_t k = 0; k < list->u.list.n && !stack; k++) {
        uint32_t v = m->g->ids[list->u.list.off + k];
        dt = sg__meta_promote(dt, (sg_dtype)sg__mt(m, v)->dtype);
        CHAIN(skipped(m, v, &skip[k]));
        kept -= skip[k];
    }
    uint32_t k0 = 0; /* the first tensor not skipped (the first, when all are) */
    while (k0 + 1 < list->u.list.n && kept && skip[k0])
        k0++;
    first = m->g->ids[list->u.list.off + k0];
    size_t rank = sg__mt(m, first)->ndim;
    size_t d = 0;
    if (stack || kept) /* (every tensor skipped: the legacy rule reads no dim, torch.cat([e, e], dim=5) of
                          1-d empty tensors is e's copy) */
        CHAIN(sg__meta_dim(m, &d, sg__meta_arg_expr(m, "dim"), rank + (stack ? 1 : 0)));
    if (!stack && rank == 0)
        return sg__meta_shape_error(m, "zero-dimensional tensors cannot be concatenated");
    const sg_expr *sizes[SG_MAX_DIMS];
    sizes_of(m, first, sizes);
    const sg_expr *along = stack ? sg__int_si(ctx, (slong)list->u.list.n) : sizes[d];
    for (uint32_t k = 0; k < list->u.list.n; k++) {
        uint32_t v = m->g->ids[list->u.list.off + k];
        if (k == k0 || skip[k])
            continue;
        if (sg__mt(m, v)->ndim != rank)
            return sg__meta_shape_error(m, "tensors must have the same number of dimensions");
        dt = sg__meta_promote(dt, (sg_dtype)sg__mt(m, v)->dtype);
        for (size_t i = 0; i < rank; i++) {
            const sg_expr *sz = sg__graph_size(m->g, v, i);
            if (!stack && i == d) {
                if (!(along = sg__add(ctx, along, sz)))
                    return sg_ctx_last_error(ctx);
            } else if (sz != sizes[i]) {
                CHAIN(sg__meta_check(m, sg__meta_rel(m, SG_REL_EQ, sz, sizes[i]),
                                     "sizes of tensors must match except in the dimension concatenated"));
            }
        }
    }
    if (!along)
        return sg_ctx_last_error(ctx);
    if (stack) {
        memmove(sizes + d + 1, sizes + d, (rank - d) * sizeof *sizes);
        rank++;
    }
    sizes[d] = along;
    const sg_expr *strides[SG_MAX_DIMS];
    layout *ins = sg__malloc(ctx, list->u.list.n * sizeof *ins);
    if (!ins)
        return sg__nomem(ctx);
    for (uint32_t k = 0; k < list->u.list.n; k++)
        layout_of(m, m->g->ids[list->u.list.off + k], &ins[k]);
    sg_status st = stack ? stack_strides(m, ins, list->u.list.n, sizes, rank, d, strides)
                         : cat_strides(m, ins, list->u.list.n, sizes, rank, strides);
    sg_free(ins);
    CHAIN(st);
    return sg__meta_tensor(m, out, dt, rank, sizes, strides, ctx->zero, SG_NOVAL);
}

/* ---- matrix products ---- */

static sg_status same_dtype(sg__mcall *m, uint32_t a, uint32_t b)
{
    if (sg__mt(m, a)->dtype != sg__mt(m, b)->dtype)
        return sg__err(m->g->ctx, SG_ETYPE, "%s: expected both operands to have the same dtype, got %s and %s",
                       m->op, sg__dtype_name((sg_dtype)sg__mt(m, a)->dtype),
                       sg__dtype_name((sg_dtype)sg__mt(m, b)->dtype));
    return SG_OK;
}

static sg_status inner(sg__mcall *m, const sg_expr *a, const sg_expr *b)
{
    return a == b ? SG_OK : sg__meta_check(m, sg__meta_rel(m, SG_REL_EQ, a, b), "the inner sizes must match");
}

/* mm ([n, k] @ [k, m]), bmm ([b, n, k] @ [b, k, m]), mv ([n, k] @ [k]) and
 * dot ([k] . [k]); the sizes checked before the dtypes, as PyTorch does.
 * matmul is not a rule of its own: the tracer decomposes it into these
 * (tracer.c), as PyTorch 1.13 does. */
sg_status sg__meta_matmul(sg__mcall *m, uint32_t *out)
{
    uint32_t a = m->a[0].u.v, b = m->a[1].u.v;
    size_t ra = sg__mt(m, a)->ndim, rb = sg__mt(m, b)->ndim;
    const sg_expr *sa[SG_MAX_DIMS], *sb[SG_MAX_DIMS], *sizes[3];
    sizes_of(m, a, sa);
    sizes_of(m, b, sb);
    const char *name = m->s->name;
    size_t want_a = !strcmp(name, "bmm") ? 3 : !strcmp(name, "dot") ? 1 : 2;
    size_t want_b = !strcmp(name, "bmm") ? 3 : !strcmp(name, "mm") ? 2 : 1;
    if (ra != want_a || rb != want_b)
        return sg__meta_shape_error(m, want_a == 3 ? "both operands must be 3-D"
                                       : want_b == 2 ? "both operands must be matrices"
                                       : want_a == 2 ? "a matrix and a vector expected"
                                                     : "1D tensors expected");
    CHAIN(inner(m, sa[ra - 1], sb[rb >= 2 ? rb - 2 : 0]));
    size_t n = 0;
    if (want_a == 3) { /* no broadcasting: the batch sizes are equal */
        if (sa[0] != sb[0])
            CHAIN(sg__meta_check(m, sg__meta_rel(m, SG_REL_EQ, sa[0], sb[0]), "the batch sizes must be equal"));
        sizes[n++] = sa[0];
    }
    CHAIN(same_dtype(m, a, b));
    /* bool: PyTorch's kernels compute nothing where the result is empty or
       the inner size 0 (False everywhere), and refuse the rest (exec's
       kernel decides, as the sizes may be symbolic here); dot always */
    if (sg__mt(m, a)->dtype == SG_BOOL && want_a == 1)
        return sg__err(m->g->ctx, SG_ETYPE, "%s: \"dot\" not implemented for 'Bool'", m->op);
    if (ra >= 2)
        sizes[n++] = sa[ra - 2];
    if (rb >= 2)
        sizes[n++] = sb[rb - 1];
    return new_contiguous(m, out, (sg_dtype)sg__mt(m, a)->dtype, sizes, n);
}

/* ---- data-dependent operators ---- */

/* A fresh unbacked symbol bound by the node being traced. */
static sg_status unbacked(sg__mcall *m, const sg_expr **u, int size_like, const char *path)
{
    if (m->nbinds == sizeof m->binds / sizeof *m->binds)
        return sg__err(m->g->ctx, SG_ELIMIT, "%s: too many unbacked symbols for one node", m->op);
    CHAIN(sg_env_create_unbacked(m->env, u, NULL, size_like, NULL));
    CHAIN(sg_env_bind_unbacked(m->env, *u, path));
    m->binds[m->nbinds++] = *u;
    return SG_OK;
}

static const sg_expr *numel(sg__mcall *m, const sg_expr *const *sizes, size_t n)
{
    const sg_expr *p = m->g->ctx->one;
    for (size_t i = 0; i < n && p; i++)
        p = sg__mul(m->g->ctx, p, sizes[i]);
    return p;
}

/* nonzero: [u, ndim] of int64, laid out (1, u) as PyTorch's meta makes it;
 * u is size-like and at most self's number of elements. */
sg_status sg__meta_nonzero(sg__mcall *m, uint32_t *out)
{
    uint32_t self = m->a[0].u.v;
    const sg__fake_tensor *t = sg__mt(m, self);
    const sg_expr *sizes[SG_MAX_DIMS], *u;
    sizes_of(m, self, sizes);
    const sg_expr *total = numel(m, sizes, t->ndim);
    if (!total)
        return sg_ctx_last_error(m->g->ctx);
    CHAIN(unbacked(m, &u, 1, ".size()[0]"));
    CHAIN(sg__meta_check(m, sg__meta_rel(m, SG_REL_LE, u, total), "nonzero: more rows than elements"));
    const sg_expr *osz[2] = {u, sg__int_si(m->g->ctx, (slong)t->ndim)}, *ost[2] = {m->g->ctx->one, u};
    if (!osz[1])
        return sg_ctx_last_error(m->g->ctx);
    return sg__meta_tensor(m, out, SG_INT64, 2, osz, ost, m->g->ctx->zero, SG_NOVAL);
}

/* masked_select: [u] of self's dtype, u at most the broadcast numel. */
sg_status sg__meta_masked_select(sg__mcall *m, uint32_t *out)
{
    uint32_t self = m->a[0].u.v, mask = m->a[1].u.v;
    if (sg__mt(m, mask)->dtype != SG_BOOL)
        return sg__err(m->g->ctx, SG_ETYPE, "%s: the mask must be a bool tensor", m->op);
    const sg_expr *sizes[SG_MAX_DIMS], *u;
    size_t n;
    CHAIN(sg__meta_broadcast_shape(m, sizes, &n));
    const sg_expr *total = numel(m, sizes, n);
    if (!total)
        return sg_ctx_last_error(m->g->ctx);
    CHAIN(unbacked(m, &u, 1, ".size()[0]"));
    CHAIN(sg__meta_check(m, sg__meta_rel(m, SG_REL_LE, u, total), "masked_select: more elements than selected"));
    return new_contiguous(m, out, (sg_dtype)sg__mt(m, self)->dtype, &u, 1);
}

/* masked_scatter(self, mask, source): self's sizes, dtype and layout (its
 * clone, then masked_scatter_); the mask a bool tensor that broadcasts to
 * self (masked_select's backward makes self of the broadcast sizes), the
 * source of self's dtype. */
sg_status sg__meta_masked_scatter(sg__mcall *m, uint32_t *out)
{
    uint32_t self = m->a[0].u.v, mask = m->a[1].u.v, src = m->a[2].u.v;
    const sg__fake_tensor *t = sg__mt(m, self);
    if (sg__mt(m, mask)->dtype != SG_BOOL)
        return sg__err(m->g->ctx, SG_ETYPE, "%s: the mask must be a bool tensor", m->op);
    if (sg__mt(m, src)->dtype != t->dtype)
        return sg__err(m->g->ctx, SG_ETYPE, "%s: expected source to have self's dtype", m->op);
    if (sg__mt(m, mask)->ndim > t->ndim)
        return sg__meta_shape_error(m, "the mask does not broadcast to self");
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
    sizes_of(m, self, sizes);
    CHAIN(sg__meta_like_strides(m, self, strides));
    t = sg__mt(m, self);
    return sg__meta_tensor(m, out, (sg_dtype)t->dtype, t->ndim, sizes, strides, m->g->ctx->zero, SG_NOVAL);
}

/* item, _local_scalar_dense: an unbacked int (or bool) for an integral
 * tensor of one element; a float's value is not tracked. */
sg_status sg__meta_item(sg__mcall *m, uint32_t *out)
{
    uint32_t self = m->a[0].u.v;
    const sg__fake_tensor *t = sg__mt(m, self);
    const sg_expr *sizes[SG_MAX_DIMS];
    sizes_of(m, self, sizes);
    const sg_expr *total = numel(m, sizes, t->ndim);
    bool one;
    CHAIN(sg__meta_eval(m, &one, total ? sg__meta_rel(m, SG_REL_EQ, total, m->g->ctx->one) : NULL));
    if (!one)
        return sg__meta_shape_error(m, "a Tensor with more or less than one element cannot be converted to a Scalar");
    if (is_float(t->dtype))
        return sg__graph_value(m->g, out, SG_V_FLOAT, NULL, 0);
    const sg_expr *u;
    CHAIN(unbacked(m, &u, 0, ""));
    if (t->dtype == SG_BOOL) { /* an unbacked 0/1, as a boolean */
        CHAIN(sg__meta_check(m, sg__meta_rel(m, SG_REL_GE, u, m->g->ctx->zero), "item of a bool"));
        CHAIN(sg__meta_check(m, sg__meta_rel(m, SG_REL_LE, u, m->g->ctx->one), "item of a bool"));
        const sg_expr *b = sg__meta_rel(m, SG_REL_EQ, u, m->g->ctx->one);
        return b ? sg__graph_value(m->g, out, SG_V_SYMBOOL, b, 0) : sg_ctx_last_error(m->g->ctx);
    }
    return sg__graph_value(m->g, out, SG_V_SYMINT, u, 0);
}

/* sym_size.int, sym_stride.int, sym_storage_offset: a size, stride or
 * offset of a tensor as a SymInt value (how a graph reads an unbacked
 * symbol that a subgraph needs). */
sg_status sg__meta_sym(sg__mcall *m, uint32_t *out)
{
    uint32_t self = m->a[0].u.v;
    const sg__fake_tensor *t = sg__mt(m, self);
    const sg_expr *e = t->offset;
    if (strcmp(m->s->name, "sym_storage_offset")) {
        size_t d;
        CHAIN(sg__meta_dim(m, &d, sg__meta_arg_expr(m, "dim"), t->ndim));
        e = m->s->name[4] == 's' && m->s->name[5] == 'i' ? sg__graph_size(m->g, self, d)
                                                          : sg__graph_stride(m->g, self, d);
    }
    return sg__graph_value(m->g, out, SG_V_SYMINT, e, 0);
}

/* ---- metadata ---- */

/* set_(self, source): self takes source's storage, sizes, strides and
 * offset (same dtype required). */
sg_status sg__meta_set(sg__mcall *m, uint32_t *out)
{
    uint32_t self = m->a[0].u.v, src = m->a[1].u.v;
    const sg__fake_tensor *t = sg__mt(m, src);
    if (sg__mt(m, self)->dtype != t->dtype) /* PyTorch then reads the other's bytes as its own type */
        return sg__err(m->g->ctx, SG_EUNSUPPORTED, "%s: unsupported: set_ to a tensor of another dtype (%s, %s)",
                       m->op, sg__dtype_name((sg_dtype)sg__mt(m, self)->dtype), sg__dtype_name((sg_dtype)t->dtype));
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
    sizes_of(m, src, sizes);
    for (uint32_t d = 0; d < t->ndim; d++)
        strides[d] = sg__graph_stride(m->g, src, d);
    uint32_t base = sg__mt(m, self)->base; /* self stays the view it was, for autograd */
    bool rg = sg__mt(m, self)->requires_grad, leaf = sg__mt(m, self)->leaf; /* self's autograd meta stays */
    CHAIN(sg__meta_tensor(m, out, (sg_dtype)t->dtype, t->ndim, sizes, strides, t->offset, t->storage));
    m->g->vals[*out].u.t.requires_grad = rg;
    m->g->vals[*out].u.t.leaf = leaf;
    m->g->vals[*out].u.t.base = base;
    return SG_OK;
}

/* requires_grad_(self, flag): self with the flag. */
sg_status sg__meta_requires_grad(sg__mcall *m, uint32_t *out)
{
    uint32_t self = m->a[0].u.v;
    const sg__fake_tensor *t = sg__mt(m, self);
    bool flag = m->a[1].kind != SG_A_BOOL || m->a[1].u.b;
    if (flag && !is_float(t->dtype))
        return sg__err(m->g->ctx, SG_ETYPE, "%s: only tensors of floating point dtype can require gradients", m->op);
    if (!flag && !t->leaf)
        return sg__err(m->g->ctx, SG_EAUTOGRAD, "%s: you can only change requires_grad flags of leaf variables",
                       m->op);
    bool leaf = t->leaf;
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
    sizes_of(m, self, sizes);
    for (uint32_t d = 0; d < t->ndim; d++)
        strides[d] = sg__graph_stride(m->g, self, d);
    uint32_t base = t->base; /* read before the values grow */
    CHAIN(sg__meta_tensor(m, out, (sg_dtype)t->dtype, t->ndim, sizes, strides, t->offset, t->storage));
    m->g->vals[*out].u.t.requires_grad = flag;
    m->g->vals[*out].u.t.leaf = leaf;
    m->g->vals[*out].u.t.base = base;
    return SG_OK;
}

/* _unsafe_view(self, size): a view of a contiguous self that owns its
 * result (no alias annotation: functionalization treats it as new). */
sg_status sg__meta_unsafe_view(sg__mcall *m, uint32_t *out)
{
    uint32_t self = m->a[0].u.v;
    const sg__garg *sz = &m->a[1];
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
    if (sz->u.list.n > SG_MAX_DIMS)
        return sg__meta_shape_error(m, "too many dimensions");
    memcpy(sizes, m->g->exprs + sz->u.list.off, sz->u.list.n * sizeof *sizes);
    CHAIN(sg__meta_contiguous(m, strides, sizes, sz->u.list.n));
    return sg__meta_tensor(m, out, (sg_dtype)sg__mt(m, self)->dtype, sz->u.list.n, sizes, strides,
                           sg__mt(m, self)->offset, sg__mt(m, self)->storage);
}
