/* Derivative formulas (derivatives.h): one per DERIVATIVE name of ops.def,
 * written as PyTorch's derivatives.yaml writes them and recorded as the
 * calls PyTorch's traced backward makes (sum_to_size as sum.dim_IntList
 * with keepdim then view; reshape as view, or clone then _unsafe_view). A
 * formula sets d->gin[i] for each tensor argument i whose gradient is
 * wanted (d->need[i]); SG_NOVAL there means a zero gradient. Calls go
 * through helpers that do nothing after the first error (d->st), so a
 * formula reads as its mathematics. */
#include "graph/derivatives.h"

#include "expr/expr_private.h"
#include "graph/ops.h"
#include "graph/record.h"

/* ---- recording ---- */

static uint32_t call(sg__dctx *d, unsigned op, const sg__garg *args, size_t n)
{
    if (d->st)
        return SG_NOVAL;
    const sg__schema *s = sg__opreg_op(d->g->reg, op);
    if (!s) {
        d->st = sg__err(d->g->ctx, SG_EINTERNAL, "derivative of %s: no operator %u in the registry", d->s->name, op);
        return SG_NOVAL;
    }
    uint32_t out;
    d->st = sg__graph_record(d->g, s, args, n, d->line, NULL, &out);
    return d->st ? SG_NOVAL : out;
}

#define CALL(d, op, ...) \
    call(d, SG_OP_##op, (sg__garg[]){__VA_ARGS__}, sizeof((sg__garg[]){__VA_ARGS__}) / sizeof(sg__garg))

static sg__garg V(uint32_t v)
{
    return (sg__garg){.kind = SG_A_VALUE, .u.v = v};
}

static sg__garg E(const sg_expr *e)
{
    return (sg__garg){.kind = SG_A_EXPR, .u.e = e};
}

static sg__garg B(bool b)
{
    return (sg__garg){.kind = SG_A_BOOL, .u.b = b};
}

static sg__garg F(double f)
{
    return (sg__garg){.kind = SG_A_FLOAT, .u.f = f};
}

/* The int constant v (NULL after an error). */
static const sg_expr *I(sg__dctx *d, int64_t v)
{
    const sg_expr *e = NULL;
    if (!d->st)
        d->st = sg_expr_int(d->g->ctx, &e, v);
    return e;
}

/* An int-list argument of the n expressions e. */
static sg__garg L(sg__dctx *d, const sg_expr *const *e, size_t n)
{
    uint32_t off = 0;
    if (!d->st)
        d->st = sg__graph_exprs(d->g, &off, e, n);
    return (sg__garg){.kind = SG_A_EXPRS, .u.list = {off, (uint32_t)n}};
}

/* ---- layouts ---- */

static size_t ndim(const sg__dctx *d, uint32_t v)
{
    return d->g->vals[v].u.t.ndim;
}

static const sg_expr *size(const sg__dctx *d, uint32_t v, size_t k)
{
    return sg__graph_size(d->g, v, k);
}

/* v's sizes into out (SG_MAX_DIMS entries); its rank. */
static size_t sizes(const sg__dctx *d, uint32_t v, const sg_expr **out)
{
    size_t n = ndim(d, v);
    for (size_t k = 0; k < n; k++)
        out[k] = size(d, v, k);
    return n;
}

static bool is_one(const sg_expr *e)
{
    int64_t v;
    return sg_expr_get_si(e, &v) && v == 1;
}

/* Schema argument i of the node as a dimension of rank n (negative counts
 * from the end); -1 where it is no constant in range. */
static int64_t dim_of(const sg_expr *e, size_t n)
{
    int64_t v;
    if (!e || !sg_expr_get_si(e, &v))
        return -1;
    if (v < 0)
        v += (int64_t)n;
    return v >= 0 && (v < (int64_t)n || (n == 0 && v == 0)) ? v : -1;
}

static void bad_dim(sg__dctx *d)
{
    if (!d->st)
        d->st = sg__err(d->g->ctx, SG_EUNSUPPORTED, "derivative of %s: a dimension that is no constant in range",
                        d->s->name);
}

/* ---- what formulas share ---- */

/* x summed to the sizes of like (PyTorch's sum_to_size): the leading
 * dimensions x has beyond like's, and those where like has size 1 and x
 * another, summed with keepdim; then viewed as like where there were
 * leading ones. x itself where there is nothing to sum. */
static uint32_t sum_to(sg__dctx *d, uint32_t x, uint32_t like)
{
    if (d->st)
        return SG_NOVAL;
    size_t nx = ndim(d, x), nl = ndim(d, like);
    if (nx < nl) {
        d->st = sg__err(d->g->ctx, SG_EINTERNAL, "derivative of %s: a gradient of rank %zu for a tensor of rank %zu",
                        d->s->name, nx, nl);
        return SG_NOVAL;
    }
    const sg_expr *dims[SG_MAX_DIMS], *shape[SG_MAX_DIMS];
    size_t nd = 0, lead = nx - nl;
    for (size_t k = 0; k < lead; k++)
        dims[nd++] = I(d, (int64_t)k);
    for (size_t k = 0; k < nl; k++) {
        shape[k] = size(d, like, k);
        if (is_one(shape[k]) && !is_one(size(d, x, lead + k)))
            dims[nd++] = I(d, (int64_t)(lead + k));
    }
    if (!nd)
        return x;
    uint32_t r = CALL(d, sum_dim_IntList, V(x), L(d, dims, nd), B(true));
    return lead ? CALL(d, view, V(r), L(d, shape, nl)) : r;
}

/* Is v laid out contiguously (its strides those of its sizes, as
 * expressions)? */
static bool contiguous(sg__dctx *d, uint32_t v)
{
    const sg_expr *acc = d->g->ctx->one;
    for (size_t k = ndim(d, v); k-- > 0;) {
        const sg_expr *z = size(d, v, k);
        if (!is_one(z) && sg__graph_stride(d->g, v, k) != acc)
            return false;
        if (!d->st)
            d->st = sg_expr_mul(d->g->ctx, &acc, acc, z);
    }
    return !d->st;
}

/* x reshaped to the sizes of like (PyTorch's reshape: a view where the
 * layout allows, here where x is contiguous; else clone then _unsafe_view). */
static uint32_t reshape_as(sg__dctx *d, uint32_t x, uint32_t like)
{
    if (d->st)
        return SG_NOVAL;
    const sg_expr *shape[SG_MAX_DIMS];
    size_t n = sizes(d, like, shape);
    if (contiguous(d, x))
        return CALL(d, view, V(x), L(d, shape, n));
    uint32_t c = CALL(d, clone, V(x), (sg__garg){.kind = SG_A_MEMFMT, .kw = "memory_format",
                                                 .u.dtype = SG_CONTIGUOUS_FORMAT});
    return CALL(d, _unsafe_view, V(c), L(d, shape, n));
}

/* x expanded to the sizes of like. */
static uint32_t expand_as(sg__dctx *d, uint32_t x, uint32_t like)
{
    const sg_expr *shape[SG_MAX_DIMS];
    size_t n = sizes(d, like, shape);
    return CALL(d, expand, V(x), L(d, shape, n));
}

/* The gradient of a reduction over dims (mask: bit k reduces dimension k of
 * self; keepdim as the node's): unsqueezed back where the reduction dropped
 * dimensions, then expanded to self's sizes. */
static uint32_t unreduce(sg__dctx *d, uint32_t g, uint32_t self, uint64_t mask, bool keepdim)
{
    size_t n = ndim(d, self);
    for (size_t k = 0; k < n && !keepdim; k++)
        if (mask >> k & 1)
            g = CALL(d, unsqueeze, V(g), E(I(d, (int64_t)k)));
    return expand_as(d, g, self);
}

/* The dimensions a reduction's `dim` argument (an int list, or None: all)
 * names over rank n, as a mask; false where one is no constant in range. */
static bool reduced(sg__dctx *d, const sg__garg *dim, size_t n, uint64_t *mask)
{
    *mask = 0;
    if (dim->kind == SG_A_NONE || (dim->kind == SG_A_EXPRS && dim->u.list.n == 0)) {
        *mask = n ? (n >= 64 ? ~0ull : (1ull << n) - 1) : 0;
        return true;
    }
    if (dim->kind != SG_A_EXPRS)
        return false;
    for (uint32_t k = 0; k < dim->u.list.n; k++) {
        int64_t v = dim_of(d->g->exprs[dim->u.list.off + k], n);
        if (v < 0 || (n == 0 && v != 0))
            return false;
        if (n)
            *mask |= 1ull << v;
    }
    return true;
}

/* The product of self's sizes over mask. */
static const sg_expr *count(sg__dctx *d, uint32_t self, uint64_t mask)
{
    const sg_expr *acc = d->g->ctx->one;
    for (size_t k = 0; k < ndim(d, self) && !d->st; k++)
        if (mask >> k & 1)
            d->st = sg_expr_mul(d->g->ctx, &acc, acc, size(d, self, k));
    return d->st ? NULL : acc;
}

/* Is the Scalar argument a the number 1? */
static bool scalar_one(const sg__garg *a)
{
    int64_t v;
    return (a->kind == SG_A_EXPR && sg_expr_get_si(a->u.e, &v) && v == 1) || (a->kind == SG_A_FLOAT && a->u.f == 1.0);
}

/* The Scalar argument a negated (an int or a float). */
static sg__garg scalar_neg(sg__dctx *d, const sg__garg *a)
{
    if (a->kind == SG_A_FLOAT)
        return F(-a->u.f);
    const sg_expr *e = NULL;
    if (!d->st)
        d->st = sg_expr_neg(d->g->ctx, &e, a->u.e);
    return E(e);
}

/* g times the Scalar argument a (g itself where a is 1). */
static uint32_t times(sg__dctx *d, uint32_t g, sg__garg a)
{
    return scalar_one(&a) ? g : CALL(d, mul_Tensor, V(g), a);
}

/* Is argument i a tensor whose gradient is wanted? */
#define WANT(d, i) ((d)->need[i])

/* ---- the formulas ---- */

#define FORMULA(name, saves)                 \
    static void d_##name(sg__dctx *d);       \
    const sg__deriv sg__d_##name = {d_##name, saves}; \
    static void d_##name(sg__dctx *d)

#define SAVE(i) (1u << (i))

/* add.Tensor(self, other, alpha): self: grad; other: grad * alpha; each
 * summed to its sizes. */
FORMULA(add, 0)
{
    if (WANT(d, 0))
        d->gin[0] = sum_to(d, d->grad, d->a[0].u.v);
    if (WANT(d, 1))
        d->gin[1] = sum_to(d, times(d, d->grad, d->a[2]), d->a[1].u.v);
}

/* add.Scalar, sub.Scalar: self: grad. */
FORMULA(add_scalar, 0)
{
    if (WANT(d, 0))
        d->gin[0] = d->grad;
}

/* sub.Tensor(self, other, alpha): self: grad; other: -grad * alpha. */
FORMULA(sub, 0)
{
    if (WANT(d, 0))
        d->gin[0] = sum_to(d, d->grad, d->a[0].u.v);
    if (WANT(d, 1))
        d->gin[1] = sum_to(d, scalar_one(&d->a[2]) ? CALL(d, neg, V(d->grad))
                                                   : CALL(d, mul_Tensor, V(d->grad), scalar_neg(d, &d->a[2])),
                           d->a[1].u.v);
}

/* rsub.Scalar(self, other, alpha) = other - alpha * self: self: -grad * alpha. */
FORMULA(rsub, 0)
{
    if (WANT(d, 0))
        d->gin[0] = scalar_one(&d->a[2]) ? CALL(d, neg, V(d->grad))
                                         : CALL(d, mul_Tensor, V(d->grad), scalar_neg(d, &d->a[2]));
}

/* mul.Tensor(self, other): self: grad * other; other: grad * self. */
FORMULA(mul, SAVE(0) | SAVE(1))
{
    if (WANT(d, 0))
        d->gin[0] = sum_to(d, CALL(d, mul_Tensor, V(d->grad), d->a[1]), d->a[0].u.v);
    if (WANT(d, 1))
        d->gin[1] = sum_to(d, CALL(d, mul_Tensor, V(d->grad), d->a[0]), d->a[1].u.v);
}

/* mul.Scalar(self, other): self: grad * other. */
FORMULA(mul_scalar, 0)
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, mul_Tensor, V(d->grad), d->a[1]);
}

/* div.Tensor(self, other): self: grad / other; other: -grad * self / (other * other). */
FORMULA(div, SAVE(0) | SAVE(1))
{
    if (WANT(d, 0))
        d->gin[0] = sum_to(d, CALL(d, div_Tensor, V(d->grad), d->a[1]), d->a[0].u.v);
    if (WANT(d, 1)) {
        uint32_t n = CALL(d, mul_Tensor, V(CALL(d, neg, V(d->grad))), d->a[0]);
        uint32_t sq = CALL(d, mul_Tensor, d->a[1], d->a[1]);
        d->gin[1] = sum_to(d, CALL(d, div_Tensor, V(n), V(sq)), d->a[1].u.v);
    }
}

/* div.Scalar(self, other): self: grad / other. */
FORMULA(div_scalar, 0)
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, div_Tensor, V(d->grad), d->a[1]);
}

FORMULA(neg, 0)
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, neg, V(d->grad));
}

/* sin: grad * self.cos(). */
FORMULA(sin, SAVE(0))
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, mul_Tensor, V(d->grad), V(CALL(d, cos, d->a[0])));
}

/* cos: grad * -self.sin(). */
FORMULA(cos, SAVE(0))
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, mul_Tensor, V(d->grad), V(CALL(d, neg, V(CALL(d, sin, d->a[0])))));
}

/* exp: grad * result. */
FORMULA(exp, SG_DSAVE_RESULT)
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, mul_Tensor, V(d->grad), V(d->out));
}

/* log: grad / self. */
FORMULA(log, SAVE(0))
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, div_Tensor, V(d->grad), d->a[0]);
}

/* sum(self): grad expanded to self's sizes. */
FORMULA(sum, 0)
{
    if (WANT(d, 0))
        d->gin[0] = expand_as(d, d->grad, d->a[0].u.v);
}

/* sum.dim_IntList(self, dim, keepdim): grad unsqueezed where the sum
 * dropped dimensions, expanded to self's sizes. */
FORMULA(sum_dim, 0)
{
    uint64_t mask;
    if (!WANT(d, 0))
        return;
    if (!reduced(d, &d->a[1], ndim(d, d->a[0].u.v), &mask))
        bad_dim(d);
    else
        d->gin[0] = unreduce(d, d->grad, d->a[0].u.v, mask, d->a[2].u.b);
}

/* mean(self): grad expanded to self's sizes, divided by self's numel. */
FORMULA(mean, 0)
{
    uint32_t self = d->a[0].u.v;
    if (WANT(d, 0))
        d->gin[0] = CALL(d, div_Tensor, V(expand_as(d, d->grad, self)), E(count(d, self, ~0ull)));
}

/* mean.dim(self, dim, keepdim): as sum.dim_IntList's, divided by the
 * number of elements each mean took. */
FORMULA(mean_dim, 0)
{
    uint64_t mask;
    uint32_t self = d->a[0].u.v;
    if (!WANT(d, 0))
        return;
    if (!reduced(d, &d->a[1], ndim(d, self), &mask))
        bad_dim(d);
    else
        d->gin[0] = CALL(d, div_Tensor, V(unreduce(d, d->grad, self, mask, d->a[2].u.b)), E(count(d, self, mask)));
}

/* view, _unsafe_view: grad reshaped to self's sizes. */
FORMULA(view, 0)
{
    if (WANT(d, 0))
        d->gin[0] = reshape_as(d, d->grad, d->a[0].u.v);
}

/* expand(self, size): grad summed to self's sizes. */
FORMULA(expand, 0)
{
    if (WANT(d, 0))
        d->gin[0] = sum_to(d, d->grad, d->a[0].u.v);
}

/* permute(self, dims): grad permuted by the inverse permutation. */
FORMULA(permute, 0)
{
    if (!WANT(d, 0))
        return;
    size_t n = ndim(d, d->a[0].u.v);
    const sg_expr *inv[SG_MAX_DIMS];
    if (d->a[1].kind != SG_A_EXPRS || d->a[1].u.list.n != n) {
        bad_dim(d);
        return;
    }
    for (size_t k = 0; k < n; k++)
        inv[k] = NULL;
    for (size_t k = 0; k < n; k++) {
        int64_t p = dim_of(d->g->exprs[d->a[1].u.list.off + k], n);
        if (p < 0 || inv[p]) {
            bad_dim(d);
            return;
        }
        inv[p] = I(d, (int64_t)k);
    }
    d->gin[0] = CALL(d, permute, V(d->grad), L(d, inv, n));
}

/* transpose.int(self, dim0, dim1): grad transposed back. */
FORMULA(transpose, 0)
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, transpose_int, V(d->grad), d->a[1], d->a[2]);
}

FORMULA(t, 0)
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, t, V(d->grad));
}

/* unsqueeze(self, dim): grad squeezed at dim. */
FORMULA(unsqueeze, 0)
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, squeeze_dim, V(d->grad), d->a[1]);
}

/* squeeze(self): grad unsqueezed at every dimension of self of size 1
 * (PyTorch's unsqueeze_to). */
FORMULA(squeeze, 0)
{
    uint32_t self = d->a[0].u.v, g = d->grad;
    if (!WANT(d, 0))
        return;
    for (size_t k = 0; k < ndim(d, self); k++)
        if (is_one(size(d, self, k)))
            g = CALL(d, unsqueeze, V(g), E(I(d, (int64_t)k)));
    d->gin[0] = g;
}

/* squeeze.dim(self, dim): grad unsqueezed at dim where self's size there is 1. */
FORMULA(squeeze_dim, 0)
{
    uint32_t self = d->a[0].u.v;
    if (!WANT(d, 0))
        return;
    size_t n = ndim(d, self);
    int64_t k = dim_of(d->a[1].u.e, n);
    if (k < 0 && n) {
        bad_dim(d);
        return;
    }
    d->gin[0] = n && is_one(size(d, self, (size_t)k)) ? CALL(d, unsqueeze, V(d->grad), E(I(d, k))) : d->grad;
}

/* clone, alias, contiguous: grad. */
FORMULA(identity, 0)
{
    if (WANT(d, 0))
        d->gin[0] = d->grad;
}

/* mm(self, mat2): self: grad.mm(mat2.t()); mat2: self.t().mm(grad). */
FORMULA(mm, SAVE(0) | SAVE(1))
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, mm, V(d->grad), V(CALL(d, t, d->a[1])));
    if (WANT(d, 1))
        d->gin[1] = CALL(d, mm, V(CALL(d, t, d->a[0])), V(d->grad));
}
