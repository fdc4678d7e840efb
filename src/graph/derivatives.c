/* Derivative formulas (derivatives.h): one per DERIVATIVE name of ops.def,
 * written as PyTorch 1.13's derivatives.yaml and FunctionsManual.cpp write
 * them and recorded as the calls its traced backward makes (make_fx of
 * torch.autograd.grad; sum_to_size as sum.dim_IntList with keepdim then
 * view; reshape as view, or clone then _unsafe_view; a Scalar 0 passed for
 * a Tensor as scalar_tensor), in the order its generated code computes
 * the arguments' gradients (often the last argument first: mul, mm, bmm,
 * where, clamp.Tensor). A formula sets d->gin[i] for each tensor argument
 * i whose gradient is wanted (d->need[i]); SG_NOVAL there means a zero
 * gradient. A gradient of a broadcast argument is left at the result's
 * sizes: autograd.c sums it after the formula, as 1.13's engine does
 * (validate_outputs). Calls go through helpers that do nothing after the
 * first error (d->st), so a formula reads as its mathematics. */
#include "graph/derivatives.h"

#include <math.h>
#include <string.h>

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

/* dtype=<v's dtype>, as a formula's grad.options() passes it. */
static sg__garg DT(const sg__dctx *d, uint32_t v)
{
    return (sg__garg){.kind = SG_A_DTYPE, .kw = "dtype", .u.dtype = d->g->vals[v].u.t.dtype};
}

static sg__garg CONTIG(void)
{
    return (sg__garg){.kind = SG_A_MEMFMT, .kw = "memory_format", .u.dtype = SG_CONTIGUOUS_FORMAT};
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

uint32_t sg__deriv_sum_to(sg__dctx *d, uint32_t x, uint32_t like)
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
    for (size_t k = 0; k < nl; k++) { /* (a size the guards made 1, as broadcasting asked: t[4:5] of [s0]) */
        shape[k] = size(d, like, k);
        bool one = is_one(shape[k]), xone = is_one(size(d, x, lead + k));
        if (!one && !d->st)
            d->st = sg__known_same(d->g->env, shape[k], d->g->ctx->one, &one);
        if (one && !xone && size(d, x, lead + k) != shape[k])
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

/* x reshaped to shape (PyTorch's reshape: a view where the layout allows,
 * here where x is contiguous; else clone then _unsafe_view). */
static uint32_t reshape_to(sg__dctx *d, uint32_t x, const sg_expr *const *shape, size_t n)
{
    if (d->st)
        return SG_NOVAL;
    if (contiguous(d, x))
        return CALL(d, view, V(x), L(d, shape, n));
    return CALL(d, _unsafe_view, V(CALL(d, clone, V(x), CONTIG())), L(d, shape, n));
}

/* x reshaped to the sizes of like. */
static uint32_t reshape_as(sg__dctx *d, uint32_t x, uint32_t like)
{
    const sg_expr *shape[SG_MAX_DIMS];
    size_t n = sizes(d, like, shape);
    return reshape_to(d, x, shape, n);
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

/* g times the Scalar argument a (PyTorch's maybe_multiply: g itself where a is 1). */
static uint32_t times(sg__dctx *d, uint32_t g, sg__garg a)
{
    return scalar_one(&a) ? g : CALL(d, mul_Scalar, V(g), a);
}

/* The Scalar argument a as a double (false, an error set, where it is
 * symbolic). */
static bool number(sg__dctx *d, const sg__garg *a, double *out)
{
    int64_t v;
    if (a->kind == SG_A_FLOAT)
        *out = a->u.f;
    else if (a->kind == SG_A_BOOL)
        *out = a->u.b;
    else if (a->kind == SG_A_EXPR && sg_expr_get_si(a->u.e, &v))
        *out = (double)v;
    else {
        if (!d->st)
            d->st = sg__err(d->g->ctx, SG_EUNSUPPORTED, "derivative of %s: a symbolic number", d->s->name);
        return false;
    }
    return true;
}

/* A 0-dim zero of the gradient's dtype: at::scalar_tensor(0., grad.options())
 * (fl), or the Scalar 0 a formula passes for a Tensor (where(c, grad, 0)),
 * which becomes scalar_tensor(0). */
static uint32_t zero_scalar(sg__dctx *d, bool fl)
{
    return CALL(d, scalar_tensor, fl ? F(0.0) : E(I(d, 0)), DT(d, d->grad));
}

/* at::zeros({}, options), options those of tensor value v. */
static uint32_t zeros0(sg__dctx *d, uint32_t v)
{
    const sg_expr *none[1] = {NULL};
    return CALL(d, zeros, L(d, none, 0), DT(d, v));
}

/* at::zeros(sizes of like, grad.options()). */
static uint32_t zeros_as(sg__dctx *d, uint32_t like)
{
    const sg_expr *shape[SG_MAX_DIMS];
    size_t n = sizes(d, like, shape);
    return CALL(d, zeros, L(d, shape, n), DT(d, d->grad));
}

uint32_t sg__deriv_zeros(sg__dctx *d, uint32_t like)
{
    const sg_expr *shape[SG_MAX_DIMS];
    size_t n = sizes(d, like, shape);
    return CALL(d, zeros, L(d, shape, n), DT(d, like));
}

uint32_t sg__deriv_cast(sg__dctx *d, uint32_t x, uint32_t like)
{
    if (d->st || d->g->vals[x].u.t.dtype == d->g->vals[like].u.t.dtype)
        return x;
    return CALL(d, copy, V(sg__deriv_zeros(d, like)), V(x));
}

uint32_t sg__deriv_contiguous(sg__dctx *d, uint32_t x)
{
    sg__garg fmt = {.kind = SG_A_MEMFMT, .kw = "memory_format", .u.dtype = SG_CONTIGUOUS_FORMAT};
    return CALL(d, clone, V(x), fmt);
}

/* A list argument of the values v. */
static sg__garg LV(sg__dctx *d, const uint32_t *v, size_t n)
{
    uint32_t off = 0;
    if (!d->st)
        d->st = sg__graph_ids(d->g, &off, v, n);
    return (sg__garg){.kind = SG_A_VALUES, .u.list = {off, (uint32_t)n}};
}

/* Is argument i a tensor whose gradient is wanted? */
#define WANT(d, i) ((d)->need[i])

/* ---- the formulas ---- */

#define FORMULA_ALL(name, saves, own, always)                 \
    static void d_##name(sg__dctx *d);                         \
    const sg__deriv sg__d_##name = {d_##name, saves, own, always}; \
    static void d_##name(sg__dctx *d)
#define FORMULA_OWN(name, saves, own) FORMULA_ALL(name, saves, own, 0)
#define FORMULA(name, saves) FORMULA_ALL(name, saves, 0, 0)

#define SAVE(i) (1u << (i))

/* add.Tensor(self, other, alpha): other: grad * alpha; self: grad. */
FORMULA(add, 0)
{
    if (WANT(d, 1))
        d->gin[1] = times(d, d->grad, d->a[2]);
    if (WANT(d, 0))
        d->gin[0] = d->grad;
}

/* add.Scalar, sub.Scalar: self: grad. */
FORMULA(add_scalar, 0)
{
    if (WANT(d, 0))
        d->gin[0] = d->grad;
}

/* sub.Tensor(self, other, alpha): other: -grad * alpha; self: grad. */
FORMULA(sub, 0)
{
    if (WANT(d, 1))
        d->gin[1] = times(d, CALL(d, neg, V(d->grad)), d->a[2]);
    if (WANT(d, 0))
        d->gin[0] = d->grad;
}

/* rsub.Scalar(self, other, alpha) = other - alpha * self: self: -grad * alpha. */
FORMULA(rsub, 0)
{
    if (WANT(d, 0))
        d->gin[0] = times(d, CALL(d, neg, V(d->grad)), d->a[2]);
}

/* mul.Tensor(self, other): other: grad * self; self: grad * other. */
FORMULA(mul, SAVE(0) | SAVE(1))
{
    if (WANT(d, 1))
        d->gin[1] = CALL(d, mul_Tensor, V(d->grad), d->a[0]);
    if (WANT(d, 0))
        d->gin[0] = CALL(d, mul_Tensor, V(d->grad), d->a[1]);
}

/* mul.Scalar(self, other): self: grad * other. */
FORMULA(mul_scalar, 0)
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, mul_Tensor, V(d->grad), d->a[1]);
}

/* div.Tensor(self, other): other: -grad * ((self / other) / other); self: grad / other. */
FORMULA_ALL(div, SAVE(0) | SAVE(1), SAVE(1), SAVE(1))
{
    if (WANT(d, 1)) {
        uint32_t q = CALL(d, div_Tensor, V(CALL(d, div_Tensor, d->a[0], d->a[1])), d->a[1]);
        d->gin[1] = CALL(d, mul_Tensor, V(CALL(d, neg, V(d->grad))), V(q));
    }
    if (WANT(d, 0))
        d->gin[0] = CALL(d, div_Tensor, V(d->grad), d->a[1]);
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

/* abs: grad * self.sgn(). */
FORMULA(abs, SAVE(0))
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, mul_Tensor, V(d->grad), V(CALL(d, sgn, d->a[0])));
}

/* reciprocal: -grad * (result * result). */
FORMULA(reciprocal, SG_DSAVE_RESULT)
{
    if (!WANT(d, 0))
        return;
    uint32_t sq = CALL(d, mul_Tensor, V(d->out), V(d->out));
    d->gin[0] = CALL(d, mul_Tensor, V(CALL(d, neg, V(d->grad))), V(sq));
}

/* tanh: tanh_backward(grad, result). */
FORMULA(tanh, SG_DSAVE_RESULT)
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, tanh_backward, V(d->grad), V(d->out));
}

/* sigmoid: sigmoid_backward(grad, result). */
FORMULA(sigmoid, SG_DSAVE_RESULT)
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, sigmoid_backward, V(d->grad), V(d->out));
}

/* relu: threshold_backward(grad, result, 0). */
FORMULA(relu, SG_DSAVE_RESULT)
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, threshold_backward, V(d->grad), V(d->out), E(I(d, 0)));
}

/* pow.Tensor_Scalar(self, exponent): pow_backward: zeros_like(self) for an
 * exponent 0, else grad * (exponent * self.pow(exponent - 1)), the
 * exponent as a double. */
FORMULA(pow_scalar, SAVE(0))
{
    double e;
    if (!WANT(d, 0) || !number(d, &d->a[1], &e))
        return;
    if (e == 0.0) {
        d->gin[0] = CALL(d, zeros_like, d->a[0], CONTIG());
        return;
    }
    uint32_t p = CALL(d, pow_Tensor_Scalar, d->a[0], F(e - 1));
    d->gin[0] = CALL(d, mul_Tensor, V(d->grad), V(CALL(d, mul_Scalar, V(p), F(e))));
}

/* pow.Tensor_Tensor(self, exponent), in 1.13's order:
 * exponent: grad * where(self == 0 and exponent >= 0, 0, result * self.log());
 * self: where(exponent == 0.0, 0, grad * (exponent * self.pow(exponent - 1))). */
FORMULA_ALL(pow_tensor, SAVE(0) | SAVE(1) | SG_DSAVE_RESULT, SAVE(0) | SAVE(1), SAVE(0) | SAVE(1))
{
    sg__garg self = d->a[0], ex = d->a[1];
    if (WANT(d, 1)) {
        uint32_t ge = CALL(d, ge_Scalar, ex, E(I(d, 0)));
        uint32_t c = CALL(d, logical_and, V(CALL(d, eq_Scalar, self, E(I(d, 0)))), V(ge));
        uint32_t m = CALL(d, mul_Tensor, V(d->out), V(CALL(d, log, self)));
        uint32_t w = CALL(d, where_self, V(c), V(zeros0(d, d->grad)), V(m));
        d->gin[1] = CALL(d, mul_Tensor, V(d->grad), V(w));
    }
    if (WANT(d, 0)) {
        uint32_t p = CALL(d, pow_Tensor_Tensor, self, V(CALL(d, sub_Scalar, ex, E(I(d, 1)))));
        uint32_t m = CALL(d, mul_Tensor, V(d->grad), V(CALL(d, mul_Tensor, ex, V(p))));
        uint32_t z = zeros0(d, d->grad);
        d->gin[0] = CALL(d, where_self, V(CALL(d, eq_Scalar, ex, F(0.0))), V(z), V(m));
    }
}

/* pow.Scalar(self, exponent), self a number: exponent: grad * (result *
 * log(self)), where(exponent >= 0, 0, ...) inside for a base 0. */
FORMULA(pow_base, SG_DSAVE_RESULT)
{
    double b;
    if (!WANT(d, 1) || !number(d, &d->a[0], &b))
        return;
    uint32_t m = CALL(d, mul_Scalar, V(d->out), F(log(b)));
    if (b == 0.0) {
        uint32_t z = zeros0(d, d->grad);
        m = CALL(d, where_self, V(CALL(d, ge_Scalar, d->a[1], E(I(d, 0)))), V(z), V(m));
    }
    d->gin[1] = CALL(d, mul_Tensor, V(d->grad), V(m));
}

/* A call of operator op on a and b. */
static uint32_t call2(sg__dctx *d, unsigned op, sg__garg a, sg__garg b)
{
    return call(d, op, (sg__garg[]){a, b}, 2);
}

/* clamp_backward, self's gradient: where(self >= min and self <= max, grad,
 * 0) with the tests ge, le and their conjunction both (the Scalar or the
 * Tensor overloads), either test alone where one bound is given, grad
 * where none is. */
static void clamp_self(sg__dctx *d, bool has_lo, bool has_hi, unsigned ge, unsigned le, unsigned both)
{
    sg__garg self = d->a[0], lo = d->a[1], hi = d->a[2];
    if (!WANT(d, 0))
        return;
    if (!has_lo && !has_hi) {
        d->gin[0] = d->grad;
        return;
    }
    uint32_t z = zero_scalar(d, true), c;
    if (has_lo && has_hi) {
        uint32_t a = call2(d, ge, self, lo); /* (in this order: C leaves an argument list's unspecified) */
        c = call2(d, both, V(a), V(call2(d, le, self, hi)));
    } else
        c = has_lo ? call2(d, ge, self, lo) : call2(d, le, self, hi);
    d->gin[0] = CALL(d, where_self, V(c), V(d->grad), V(z));
}

/* clamp(self, min, max), Scalar bounds: clamp_backward (its conjunction in
 * place: logical_and_). */
FORMULA(clamp, SAVE(0))
{
    clamp_self(d, d->a[1].kind != SG_A_NONE, d->a[2].kind != SG_A_NONE, SG_OP_ge_Scalar, SG_OP_le_Scalar,
               SG_OP_logical_and_);
}

/* clamp.Tensor(self, min, max), in 1.13's order: min and max
 * (clamp_backward_min_max): min where(self < min and min < max, grad, 0),
 * max where(self > max or max < min, grad, 0), the test alone where one
 * bound is given; then self as clamp's, with the Tensor tests (and, the
 * tensors being traced, logical_and out of place). */
FORMULA_ALL(clamp_tensor, SAVE(0) | SAVE(1) | SAVE(2), SAVE(0), SAVE(0) | SAVE(1) | SAVE(2))
{
    sg__garg self = d->a[0], lo = d->a[1], hi = d->a[2];
    bool has_lo = lo.kind == SG_A_VALUE, has_hi = hi.kind == SG_A_VALUE;
    if (WANT(d, 1) || WANT(d, 2)) {
        uint32_t z = zero_scalar(d, true);
        if (has_lo && has_hi) {
            if (WANT(d, 1)) {
                uint32_t a = CALL(d, lt_Tensor, self, lo);
                uint32_t c = CALL(d, logical_and, V(a), V(CALL(d, lt_Tensor, lo, hi)));
                d->gin[1] = CALL(d, where_self, V(c), V(d->grad), V(z));
            }
            if (WANT(d, 2)) {
                uint32_t a = CALL(d, gt_Tensor, self, hi);
                uint32_t c = CALL(d, logical_or, V(a), V(CALL(d, lt_Tensor, hi, lo)));
                d->gin[2] = CALL(d, where_self, V(c), V(d->grad), V(z));
            }
        } else if (has_lo && WANT(d, 1)) {
            d->gin[1] = CALL(d, where_self, V(CALL(d, lt_Tensor, self, lo)), V(d->grad), V(z));
        } else if (has_hi && WANT(d, 2)) {
            d->gin[2] = CALL(d, where_self, V(CALL(d, gt_Tensor, self, hi)), V(d->grad), V(z));
        }
    }
    clamp_self(d, has_lo, has_hi, SG_OP_ge_Tensor, SG_OP_le_Tensor, SG_OP_logical_and);
}

/* where.self(condition, self, other), in 1.13's order: other: where(condition,
 * 0, grad); self: where(condition, grad, 0); condition: none. */
FORMULA_ALL(where, SAVE(0), 0, SAVE(0))
{
    if (WANT(d, 2))
        d->gin[2] = CALL(d, where_self, d->a[0], V(zero_scalar(d, false)), V(d->grad));
    if (WANT(d, 1))
        d->gin[1] = CALL(d, where_self, d->a[0], V(d->grad), V(zero_scalar(d, false)));
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
        d->gin[0] = CALL(d, div_Scalar, V(expand_as(d, d->grad, self)), E(count(d, self, ~0ull)));
}

/* mean.dim(self, dim, keepdim): as sum.dim_IntList's, divided by the
 * number of elements each mean took. PyTorch 1.13's MeanBackward1 saves
 * self (its formula reads self.numel() through _safe_size), so a write of
 * self after the mean is the saved-tensor error there; today's saves only
 * self's sizes and numel. Ours follows 1.13, the oracle. */
FORMULA(mean_dim, SAVE(0))
{
    uint64_t mask;
    uint32_t self = d->a[0].u.v;
    if (!WANT(d, 0))
        return;
    if (!reduced(d, &d->a[1], ndim(d, self), &mask))
        bad_dim(d);
    else
        d->gin[0] = CALL(d, div_Scalar, V(unreduce(d, d->grad, self, mask, d->a[2].u.b)), E(count(d, self, mask)));
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
        d->gin[0] = sg__deriv_sum_to(d, d->grad, d->a[0].u.v);
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
 * (PyTorch's unsqueeze_to; a size the guards made 1 is no constant: one
 * the environment knows is 1). */
FORMULA(squeeze, 0)
{
    uint32_t self = d->a[0].u.v, g = d->grad;
    if (!WANT(d, 0))
        return;
    for (size_t k = 0; k < ndim(d, self); k++) {
        const sg_expr *sz = size(d, self, k);
        bool one = is_one(sz);
        if (!one && !d->st && ndim(d, d->out) < ndim(d, self))
            d->st = sg__known_same(d->g->env, sz, d->g->ctx->one, &one);
        if (one)
            g = CALL(d, unsqueeze, V(g), E(I(d, (int64_t)k)));
    }
    d->gin[0] = g;
}

/* squeeze.dim(self, dim): grad unsqueezed at dim where the forward squeezed
 * it (self's size there 1: a size the guards made 1, or one of unbacked
 * symbols the rule found 1, is no constant). */
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
    /* (squeezed where the forward's rule found the size 1: its result has a dimension less) */
    d->gin[0] = ndim(d, d->out) < n ? CALL(d, unsqueeze, V(d->grad), E(I(d, k))) : d->grad;
}

/* clone, alias, contiguous: grad. */
FORMULA(identity, 0)
{
    if (WANT(d, 0))
        d->gin[0] = d->grad;
}

/* mm(self, mat2), in 1.13's order: mat2: self.t().mm(grad); self: grad.mm(mat2.t()). */
static bool ask(sg__dctx *d, sg_rel rel, const sg_expr *a, const sg_expr *b);

/* Was matrix v laid out column-major when the call ran (strides [1, its
 * rows], 1.13's test: asked, so guarded, as its SymInt compares are)? */
static bool column_major(sg__dctx *d, uint32_t v)
{
    return ask(d, SG_REL_EQ, sg__graph_stride(d->g, v, 0), d->g->ctx->one) &&
           ask(d, SG_REL_EQ, sg__graph_stride(d->g, v, 1), size(d, v, 0));
}

/* mm(self, mat2) (1.13's mm_mat2_backward, then mm_mat1_backward):
 * self.t().mm(grad) and grad.mm(mat2.t()), or where that argument was laid
 * out column-major, the product of the transposes transposed back
 * (grad.t().mm(self).t(), mat2.mm(grad.t()).t(): "return grad as
 * column-order for efficiency"), the form 1.13's graphs have. */
FORMULA(mm, SAVE(0) | SAVE(1))
{
    if (WANT(d, 1))
        d->gin[1] = column_major(d, d->a[1].u.v)
                        ? CALL(d, t, V(CALL(d, mm, V(CALL(d, t, V(d->grad))), d->a[0])))
                        : CALL(d, mm, V(CALL(d, t, d->a[0])), V(d->grad));
    if (WANT(d, 0))
        d->gin[0] = column_major(d, d->a[0].u.v)
                        ? CALL(d, t, V(CALL(d, mm, d->a[1], V(CALL(d, t, V(d->grad))))))
                        : CALL(d, mm, V(d->grad), V(CALL(d, t, d->a[1])));
}

/* amax, amin(self, dim, keepdim) (scale_grad_by_count(restore_reduced_dims(grad),
 * restore_reduced_dims(result) == self, dim)): the gradient shared evenly
 * among the elements equal to the extremum: grad / mask.sum(dim, True) *
 * mask, grad and result reshaped back to self's rank where keepdim is not
 * (a dim of [] reshapes to the result's own sizes, as 1.13 does). */
FORMULA_OWN(amax, SAVE(0) | SG_DSAVE_RESULT, SAVE(0))
{
    uint32_t self = d->a[0].u.v, r = d->out, g = d->grad;
    bool back = !d->a[2].u.b;
    const sg_expr *shape[SG_MAX_DIMS];
    size_t n = sizes(d, r, shape);
    uint64_t mask;
    if (!WANT(d, 0))
        return;
    if (!reduced(d, &d->a[1], ndim(d, self), &mask)) {
        bad_dim(d);
        return;
    }
    if (back && d->a[1].u.list.n) {
        n = sizes(d, self, shape);
        for (size_t k = 0; k < n; k++)
            if (mask >> k & 1)
                shape[k] = d->g->ctx->one;
    }
    if (back)
        r = reshape_to(d, r, shape, n);
    uint32_t eq = CALL(d, eq_Tensor, V(r), V(self));
    if (back)
        g = reshape_to(d, g, shape, n);
    uint32_t c = CALL(d, sum_dim_IntList, V(eq), d->a[1], B(true));
    d->gin[0] = CALL(d, mul_Tensor, V(CALL(d, div_Tensor, V(g), V(c))), V(eq));
}

/* masked_select(self, mask) (masked_select_backward): zeros_like(self
 * expanded to the sizes self and mask broadcast to, preserve_format)
 * .masked_scatter(mask, grad); mask: none. */
FORMULA_ALL(masked_select, SAVE(0) | SAVE(1), SAVE(0), SAVE(0) | SAVE(1))
{
    uint32_t self = d->a[0].u.v, mask = d->a[1].u.v;
    size_t n = ndim(d, self) > ndim(d, mask) ? ndim(d, self) : ndim(d, mask);
    const sg_expr *shape[SG_MAX_DIMS];
    if (!WANT(d, 0))
        return;
    for (size_t k = 0; k < n; k++) { /* (the forward checked that they broadcast) */
        size_t i = n - 1 - k;
        const sg_expr *a = k < ndim(d, self) ? size(d, self, ndim(d, self) - 1 - k) : d->g->ctx->one;
        const sg_expr *b = k < ndim(d, mask) ? size(d, mask, ndim(d, mask) - 1 - k) : d->g->ctx->one;
        shape[i] = is_one(a) ? b : a;
    }
    uint32_t e = CALL(d, expand, V(self), L(d, shape, n));
    uint32_t z = CALL(d, zeros_like, V(e),
                      (sg__garg){.kind = SG_A_MEMFMT, .kw = "memory_format", .u.dtype = SG_PRESERVE_FORMAT});
    d->gin[0] = CALL(d, masked_scatter, V(z), V(mask), V(d->grad));
}

/* bmm(self, mat2), in 1.13's order: mat2: self.transpose(1, 2).bmm(grad);
 * self: grad.bmm(mat2.transpose(1, 2)). */
FORMULA(bmm, SAVE(0) | SAVE(1))
{
    const sg_expr *one = I(d, 1), *two = I(d, 2);
    if (WANT(d, 1))
        d->gin[1] = CALL(d, bmm, V(CALL(d, transpose_int, d->a[0], E(one), E(two))), V(d->grad));
    if (WANT(d, 0))
        d->gin[0] = CALL(d, bmm, V(d->grad), V(CALL(d, transpose_int, d->a[1], E(one), E(two))));
}

/* mv(self, vec): self: grad.ger(vec), ger as outer: grad.reshape([n, 1]) *
 * vec; vec: self.t().mv(grad). */
FORMULA(mv, SAVE(0) | SAVE(1))
{
    if (WANT(d, 0)) {
        const sg_expr *col[2] = {size(d, d->grad, 0), d->g->ctx->one};
        d->gin[0] = CALL(d, mul_Tensor, V(reshape_to(d, d->grad, col, 2)), d->a[1]);
    }
    if (WANT(d, 1))
        d->gin[1] = CALL(d, mv, V(CALL(d, t, d->a[0])), V(d->grad));
}

/* dot(self, tensor): self: grad * tensor; tensor: grad * self. */
FORMULA(dot, SAVE(0) | SAVE(1))
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, mul_Tensor, V(d->grad), d->a[1]);
    if (WANT(d, 1))
        d->gin[1] = CALL(d, mul_Tensor, V(d->grad), d->a[0]);
}

/* select.int(self, dim, index): select_backward(grad, self.sizes(), dim, index). */
FORMULA(select, 0)
{
    const sg_expr *shape[SG_MAX_DIMS];
    if (WANT(d, 0))
        d->gin[0] = CALL(d, select_backward, V(d->grad), L(d, shape, sizes(d, d->a[0].u.v, shape)), d->a[1], d->a[2]);
}

/* slice.Tensor(self, dim, start, end, step): slice_backward(grad,
 * self.sizes(), dim, start, end, step), a start of None as 0 and an end
 * of None as the largest int64. */
FORMULA(slice, 0)
{
    const sg_expr *shape[SG_MAX_DIMS];
    if (!WANT(d, 0))
        return;
    sg__garg start = d->a[2].kind == SG_A_NONE ? E(I(d, 0)) : d->a[2];
    sg__garg end = d->a[3].kind == SG_A_NONE ? E(I(d, INT64_MAX)) : d->a[3];
    d->gin[0] = CALL(d, slice_backward, V(d->grad), L(d, shape, sizes(d, d->a[0].u.v, shape)), d->a[1], start, end,
                     d->a[4]);
}

/* narrow(self, dim, start, length), which PyTorch records as slice: the
 * slice's slice_backward(grad, self.sizes(), dim, start, start + length, 1),
 * a negative start counted from the end. */
FORMULA(narrow, 0)
{
    uint32_t self = d->a[0].u.v;
    const sg_expr *shape[SG_MAX_DIMS], *start = d->a[2].u.e, *end = NULL;
    size_t n = sizes(d, self, shape);
    int64_t k = dim_of(d->a[1].u.e, n), v;
    if (!WANT(d, 0))
        return;
    if (k < 0 || !n) {
        bad_dim(d);
        return;
    }
    if (sg_expr_get_si(start, &v) && v < 0 && !d->st)
        d->st = sg_expr_add(d->g->ctx, &start, start, shape[k]);
    if (!d->st)
        d->st = sg_expr_add(d->g->ctx, &end, start, d->a[3].u.e);
    d->gin[0] = CALL(d, slice_backward, V(d->grad), L(d, shape, n), E(I(d, k)), E(start), E(end), E(I(d, 1)));
}

/* diagonal(self, offset, dim1, dim2): diagonal_backward(grad, self.sizes(), offset, dim1, dim2). */
FORMULA(diagonal, 0)
{
    const sg_expr *shape[SG_MAX_DIMS];
    if (WANT(d, 0))
        d->gin[0] = CALL(d, diagonal_backward, V(d->grad), L(d, shape, sizes(d, d->a[0].u.v, shape)), d->a[1],
                         d->a[2], d->a[3]);
}

/* unbind.int(self, dim) (unbind_backward): the results' gradients stacked
 * at dim, zeros({}).expand(its sizes) for a result without one. */
FORMULA(unbind, 0)
{
    if (!WANT(d, 0))
        return;
    uint32_t *parts = sg__malloc(d->g->ctx, (d->nres ? d->nres : 1) * sizeof *parts);
    if (!parts) {
        d->st = sg__nomem(d->g->ctx);
        return;
    }
    for (uint32_t k = 0; k < d->nres; k++) /* (res may move as the graph grows: read each time) */
        parts[k] = d->rgrad[k] != SG_NOVAL ? d->rgrad[k] : expand_as(d, zeros0(d, d->a[0].u.v), d->g->ids[d->res + k]);
    d->gin[0] = CALL(d, stack, LV(d, parts, d->nres), d->a[1]);
    sg_free(parts);
}

/* cat(tensors, dim) (cat_tensors_backward): each tensor's part of grad,
 * grad.slice(dim, offset, offset + its size) with dim wrapped as cat's
 * legacy rule does (past tensors of shape [0]), zeros([0]) for such a
 * tensor; all of them where any is wanted. */
FORMULA(cat, 0)
{
    bool any = false;
    size_t n = ndim(d, d->grad);
    int64_t k = dim_of(d->a[1].u.e, n);
    const sg_expr *at = d->g->ctx->zero;
    for (uint32_t j = 0; j < d->nl; j++)
        any |= d->lneed[j];
    if (!any)
        return;
    if (k < 0) {
        bad_dim(d);
        return;
    }
    for (uint32_t j = 0; j < d->nl && !d->st; j++) {
        uint32_t x = d->lv[j];
        int64_t z;
        if (ndim(d, x) == 1 && sg_expr_get_si(size(d, x, 0), &z) && z == 0) {
            const sg_expr *zero[1] = {d->g->ctx->zero};
            d->lgin[j] = CALL(d, zeros, L(d, zero, 1), DT(d, d->grad));
            continue;
        }
        const sg_expr *end = NULL;
        d->st = sg_expr_add(d->g->ctx, &end, at, size(d, x, (size_t)k));
        d->lgin[j] = CALL(d, slice_Tensor, V(d->grad), E(I(d, k)), E(at), E(end));
        at = end;
    }
}

/* stack(tensors, dim) (stack_tensors_backward): grad.select(dim, i) for
 * each, dim as given; all of them where any is wanted. */
FORMULA(stack, 0)
{
    bool any = false;
    for (uint32_t j = 0; j < d->nl; j++)
        any |= d->lneed[j];
    for (uint32_t j = 0; any && j < d->nl; j++)
        d->lgin[j] = CALL(d, select_int, V(d->grad), d->a[1], E(I(d, j)));
}

/* copy(self, src), functionalization's copy_ (copy_'s formula): self:
 * zeros_like(grad) (contiguous); src: grad (summed to src's sizes). */
FORMULA(copy, 0)
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, zeros_like, V(d->grad), CONTIG());
    if (WANT(d, 1))
        d->gin[1] = d->grad;
}

/* zero(self), fill.Scalar(self, value): self: zeros_like(grad). */
FORMULA(fill, 0)
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, zeros_like, V(d->grad));
}

/* fill.Tensor(self, value): self: zeros_like(grad); value: grad.sum(). */
FORMULA(fill_tensor, 0)
{
    if (WANT(d, 0))
        d->gin[0] = CALL(d, zeros_like, V(d->grad));
    if (WANT(d, 1))
        d->gin[1] = CALL(d, sum, V(d->grad));
}

/* select_scatter, slice_scatter, diagonal_scatter, as_strided_scatter(self,
 * src, the view's arguments...): self: the scatter of zeros(src's sizes)
 * into grad (grad with the view's part zeroed); src: grad's view (the view
 * operator, its arguments the scatter's past src). */
static void scatter_formula(sg__dctx *d, unsigned view, uint32_t g)
{
    sg__garg va[SG_SCHEMA_ARGS];
    int n = d->s->nargs;
    va[0] = V(g);
    for (int i = 2; i < n; i++)
        va[i - 1] = d->a[i];
    if (WANT(d, 0)) {
        sg__garg sa[SG_SCHEMA_ARGS];
        sa[0] = V(g);
        sa[1] = V(zeros_as(d, d->a[1].u.v));
        for (int i = 2; i < n; i++)
            sa[i] = d->a[i];
        d->gin[0] = call(d, d->s->op, sa, (size_t)n);
    }
    if (WANT(d, 1))
        d->gin[1] = call(d, view, va, (size_t)n - 1);
}

FORMULA(select_scatter, 0)
{
    scatter_formula(d, SG_OP_select_int, d->grad);
}

FORMULA(slice_scatter, 0)
{
    scatter_formula(d, SG_OP_slice_Tensor, d->grad);
}

FORMULA(diagonal_scatter, 0)
{
    scatter_formula(d, SG_OP_diagonal, d->grad);
}

/* as_strided_scatter(self, src, size, stride, storage_offset): as the
 * other scatters over grad.contiguous() (its storage is what size, stride
 * and offset index), with self contiguous, as 1.13 assumes (Note
 * [as_strided_scatter backward support]); else unsupported. 1.13's own
 * formula for self (as_strided_scatter_backward) gives grad's part inside
 * the view and uninitialized memory outside it, the complement of the
 * derivative: written here as the derivative is. */
FORMULA(as_strided_scatter, 0)
{
    uint32_t g = d->grad;
    if (!contiguous(d, d->a[0].u.v)) {
        if (!d->st)
            d->st = sg__err(d->g->ctx, SG_EUNSUPPORTED, "derivative of %s: a self that is not contiguous",
                            d->s->name);
        return;
    }
    if (!contiguous(d, g) || d->g->vals[g].u.t.offset != d->g->ctx->zero)
        g = CALL(d, clone, V(g), CONTIG());
    scatter_formula(d, SG_OP_as_strided, g);
}

/* Does rel(a, b) hold? Asked of the environment as a shape rule asks
 * (guarded, as 1.13's formulas compare SymInts), the node's operator the
 * guard's provenance; false after an error. */
static bool ask(sg__dctx *d, sg_rel rel, const sg_expr *a, const sg_expr *b)
{
    bool r = false;
    if (d->st || !a || !b)
        return false;
    sg__mcall m = {.g = d->g, .env = d->g->env, .s = d->s};
    sg__schema_full_name(d->s, m.op);
    d->st = sg__meta_eval(&m, &r, sg__meta_rel(&m, rel, a, b));
    return r;
}

/* a + b * c (NULL after an error). */
static const sg_expr *muladd(sg__dctx *d, const sg_expr *a, const sg_expr *b, const sg_expr *c)
{
    const sg_expr *p = NULL, *r = NULL;
    if (!d->st)
        d->st = sg_expr_mul(d->g->ctx, &p, b, c);
    if (!d->st)
        d->st = sg_expr_add(d->g->ctx, &r, a, p);
    return d->st ? NULL : r;
}

/* a - b (NULL after an error). */
static const sg_expr *minus(sg__dctx *d, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *r = NULL;
    if (!d->st)
        d->st = sg_expr_sub(d->g->ctx, &r, a, b);
    return r;
}

/* A layout's dimensions of size other than 1. */
typedef struct geom {
    size_t n;
    const sg_expr *size[SG_MAX_DIMS], *stride[SG_MAX_DIMS];
} geom;

/* May the layout reach an element twice (1.13's _maybe_overlapping_memory:
 * by increasing stride, each beyond what the smaller ones reach)? */
static bool may_overlap(sg__dctx *d, const geom *G)
{
    bool used[SG_MAX_DIMS] = {false};
    const sg_expr *reach = d->g->ctx->zero;
    for (size_t k = 0; k < G->n && !d->st; k++) {
        size_t m = SG_MAX_DIMS;
        for (size_t j = 0; j < G->n; j++)
            if (!used[j] && (m == SG_MAX_DIMS || ask(d, SG_REL_LT, G->stride[j], G->stride[m])))
                m = j;
        used[m] = true;
        if (ask(d, SG_REL_LE, G->stride[m], reach))
            return true;
        reach = muladd(d, reach, G->stride[m], minus(d, G->size[m], d->g->ctx->one));
    }
    return false;
}

/* The elements a layout needs from offset: offset + 1 + sum((size - 1) * stride). */
static const sg_expr *min_storage(sg__dctx *d, const geom *G, const sg_expr *offset)
{
    const sg_expr *r = muladd(d, offset, d->g->ctx->one, d->g->ctx->one);
    for (size_t k = 0; k < G->n; k++)
        r = muladd(d, r, minus(d, G->size[k], d->g->ctx->one), G->stride[k]);
    return r;
}

/* as_strided(self, size, stride, storage_offset) (1.13's as_strided_backward,
 * where neither self's layout nor the view may overlap itself; else
 * unsupported: 1.13 then goes through index_add_): grad squeezed at its
 * dimensions of size 1 and summed over those of stride 0, copied into the
 * view of a zeroed storage (new_empty, zero_) that holds both layouts from
 * the smaller offset, which is then read as self's layout; zeros of self's
 * sizes where either has no element. Symbolic sizes are asked (guarded). */
FORMULA(as_strided, 0)
{
    uint32_t self = d->a[0].u.v, g = d->grad;
    const sg_expr *zero = d->g->ctx->zero, *one = d->g->ctx->one, *e[SG_MAX_DIMS], *st[SG_MAX_DIMS];
    const sg_expr *in_off = d->g->vals[self].u.t.offset;
    const sg_expr *out_off = d->a[3].kind == SG_A_NONE ? in_off : d->a[3].u.e;
    geom in = {0}, out = {0};
    size_t n = d->a[1].u.list.n;
    if (!WANT(d, 0))
        return;
    for (size_t k = n; k-- > 0 && !d->st;) { /* from the last dimension, as 1.13 */
        const sg_expr *z = d->g->exprs[d->a[1].u.list.off + k], *w = d->g->exprs[d->a[2].u.list.off + k];
        if (ask(d, SG_REL_EQ, z, zero)) {
            d->gin[0] = zeros_as(d, self);
            return;
        }
        if (ask(d, SG_REL_EQ, z, one))
            g = CALL(d, squeeze_dim, V(g), E(I(d, (int64_t)k)));
        else if (ask(d, SG_REL_EQ, w, zero))
            g = CALL(d, sum_dim_IntList, V(g), L(d, (const sg_expr *[]){I(d, (int64_t)k)}, 1), B(false));
        else {
            memmove(out.size + 1, out.size, out.n * sizeof *out.size);
            memmove(out.stride + 1, out.stride, out.n * sizeof *out.stride);
            out.size[0] = z;
            out.stride[0] = w;
            out.n++;
        }
    }
    for (size_t k = 0; k < ndim(d, self) && !d->st; k++) {
        if (ask(d, SG_REL_EQ, size(d, self, k), zero)) {
            d->gin[0] = zeros_as(d, self);
            return;
        }
        if (!ask(d, SG_REL_EQ, size(d, self, k), one)) {
            in.size[in.n] = size(d, self, k);
            in.stride[in.n++] = sg__graph_stride(d->g, self, k);
        }
    }
    if (may_overlap(d, &in) || may_overlap(d, &out)) {
        if (!d->st)
            d->st = sg__err(d->g->ctx, SG_EUNSUPPORTED, "derivative of %s: a layout that may overlap itself",
                            d->s->name);
        return;
    }
    const sg_expr *shared = ask(d, SG_REL_LE, in_off, out_off) ? in_off : out_off;
    const sg_expr *a = min_storage(d, &in, minus(d, in_off, shared));
    const sg_expr *b = min_storage(d, &out, minus(d, out_off, shared));
    const sg_expr *base[1] = {ask(d, SG_REL_GE, a, b) ? a : b};
    /* (functional: the joint graph is, as PyTorch functionalizes its traced joint; 1.13's eager formula
       writes grad into an as_strided view of the zeroed buffer with copy_) */
    uint32_t buf = CALL(d, zero_, V(CALL(d, new_empty, V(g), L(d, base, 1))));
    sg__garg os = L(d, out.size, out.n), ot = L(d, out.stride, out.n);
    buf = CALL(d, as_strided_scatter, V(buf), V(g), os, ot, E(minus(d, out_off, shared)));
    size_t r = sizes(d, self, e);
    for (size_t k = 0; k < r; k++)
        st[k] = sg__graph_stride(d->g, self, k);
    sg__garg is = L(d, e, r), it = L(d, st, r);
    d->gin[0] = CALL(d, as_strided, V(buf), is, it, E(minus(d, in_off, shared)));
}
