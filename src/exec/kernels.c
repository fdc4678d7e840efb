/* exec: one kernel per operator, PyTorch 1.13's eager semantics on CPU.
 *
 * A kernel takes its output's layout from the node's fake tensor
 * (sg__xc_output): the shape rules computed every size, so kernels only
 * move and compute elements. Pointwise kernels broadcast each tensor
 * operand against the output's sizes, compute in the common dtype that
 * PyTorch's type promotion gives (wrapped numbers do not raise the
 * category; div and the float functions make integers float64, the
 * program language's default dtype), round float32 results to float32, wrap
 * integer arithmetic as two's complement, and cast into the output's dtype.
 * The float functions (exp log sin cos tanh pow) are the C library's in
 * double, rounded for float32: PyTorch's vectorized SLEEF approximations
 * differ from them by an ulp now and then.
 * Every kernel reads all its inputs before it writes anything (results go
 * through a buffer), so an output sharing memory with an input sees the
 * inputs as they were, and an error leaves every tensor as it was. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec_private.h"
#include "graph/meta.h"
#include "graph/ops.h"

#define MAXOP 3 /* the operands of a pointwise operator, at most */

/* An element on its way: a double (float dtypes) or an int64 (int64, bool). */
typedef union xv {
    double f;
    int64_t i;
} xv;

static bool is_float(int d)
{
    return sg__xdt_float(d);
}

static int64_t numel_of(size_t n, const int64_t *sizes)
{
    int64_t k = 1;
    for (size_t d = 0; d < n; d++)
        k *= sizes[d];
    return k;
}

/* A buffer of n elements. Errors: SG_ENOMEM. */
static sg_status buf_new(sg__xcall *c, xv **out, int64_t n)
{
    *out = sg__calloc(c->ctx, n > 0 ? (size_t)n : 1, sizeof **out);
    return *out ? SG_OK : sg__nomem(c->ctx);
}

/* Element p of storage s read in the compute kind: as a double rounded to
 * float32 (f32), as a double (f64), else as an int64. */
static inline double rd_f(const sg__xstorage *s, int64_t p, bool f32)
{
    if (!f32)
        return sg__xst_get_f(s, p);
    if (s->dtype == SG_INT64)
        return (float)((const int64_t *)s->data)[p];
    return (float)sg__xst_get_f(s, p);
}

/* The strides that read t broadcast to sizes (n dimensions): 0 where t has
 * no such dimension or a size 1 stretched. Errors: SG_ESHAPE. */
static sg_status bstrides(sg__xcall *c, const sg__xtensor *t, size_t n, const int64_t *sizes, int64_t *st)
{
    if (t->ndim > n)
        return sg__err(c->ctx, SG_ESHAPE, "%s: an operand of %u dimensions for a result of %zu", c->op, t->ndim, n);
    for (size_t d = 0; d < n; d++) {
        if (d < n - t->ndim) {
            st[d] = 0;
            continue;
        }
        size_t j = d - (n - t->ndim);
        if (t->sizes[j] == sizes[d])
            st[d] = sizes[d] == 1 ? 0 : t->strides[j];
        else if (t->sizes[j] == 1)
            st[d] = 0;
        else
            return sg__err(c->ctx, SG_ESHAPE, "%s: size %lld of an operand does not broadcast to %lld", c->op,
                           (long long)t->sizes[j], (long long)sizes[d]);
    }
    return SG_OK;
}

/* Write the n elements of buf (doubles if isf, else int64s) into the
 * layout, row-major, converted to st's dtype. */
static void put_all(sg__xstorage *st, size_t ndim, const int64_t *sizes, const int64_t *strides, int64_t offset,
                    const xv *buf, bool isf)
{
    int64_t n = numel_of(ndim, sizes);
    sg__xpos it;
    sg__xpos_init(&it, ndim, sizes, strides, offset);
    for (int64_t k = 0; k < n; k++, sg__xpos_next(&it)) {
        if (isf)
            sg__xst_set_f(st, it.pos, buf[k].f);
        else
            sg__xst_set_i(st, it.pos, buf[k].i);
    }
}

static void put_tensor(sg__xtensor *t, const xv *buf, bool isf)
{
    put_all(t->st, t->ndim, t->sizes, t->strides, t->offset, buf, isf);
}

/* src broadcast to sizes read into buf, each element as it is (doubles
 * for float dtypes, int64s else: *isf says which). Errors: SG_ESHAPE. */
static sg_status get_all(sg__xcall *c, const sg__xtensor *src, size_t ndim, const int64_t *sizes, xv *buf, bool *isf)
{
    int64_t st[SG_MAX_DIMS];
    CHAIN(bstrides(c, src, ndim, sizes, st));
    *isf = is_float(src->dtype);
    int64_t n = numel_of(ndim, sizes);
    sg__xpos it;
    sg__xpos_init(&it, ndim, sizes, st, src->offset);
    for (int64_t k = 0; k < n; k++, sg__xpos_next(&it)) {
        if (*isf)
            buf[k].f = sg__xst_get_f(src->st, it.pos);
        else
            buf[k].i = sg__xst_get_i(src->st, it.pos);
    }
    return SG_OK;
}

/* ---- loops in memory order, without a buffer ----
 *
 * A result may go straight into its output, without the buffer, where that
 * gives what the buffer gives: the output's layout reaches distinct
 * positions (each written once, so the order of the writes does not
 * matter), and every operand on the output's storage reads, for each
 * element, the very position that element writes (so no element reads what
 * another one wrote). The loop then visits the elements in the output's
 * memory order, its dimensions of size 1 dropped and the ones that follow
 * each other in every operand merged into one (as TensorIterator does):
 * a contiguous output and operands of its layout make one flat loop. */

#define LMAX (MAXOP + 1) /* the output and up to MAXOP operands */

typedef struct {
    int nd;                        /* dimensions, outermost first (at least 1) */
    int na;                        /* arrays: [0] the output, then the operands */
    int64_t size[SG_MAX_DIMS];
    int64_t st[LMAX][SG_MAX_DIMS]; /* per array, in elements (0: repeated) */
} lplan;

/* Whether the layout reaches each position at most once: its dimensions of
 * size above 1 sorted by stride, each stride is beyond the span of the
 * smaller ones (sufficient, and what every tensor made by a shape rule
 * satisfies unless it is expanded). */
static bool distinct_positions(size_t ndim, const int64_t *sizes, const int64_t *strides)
{
    int ord[SG_MAX_DIMS], n = 0;
    for (size_t d = 0; d < ndim; d++) {
        if (sizes[d] == 0)
            return true;
        if (sizes[d] == 1)
            continue;
        if (strides[d] <= 0)
            return false;
        int i = n++;
        for (; i > 0 && strides[ord[i - 1]] > strides[d]; i--)
            ord[i] = ord[i - 1];
        ord[i] = (int)d;
    }
    int64_t span = 0; /* the largest position the smaller dimensions reach */
    for (int i = 0; i < n; i++) {
        int d = ord[i];
        if (strides[d] <= span)
            return false;
        span += (sizes[d] - 1) * strides[d]; /* no overflow: the layout's extent fits int64 */
    }
    return true;
}

/* The plan over sizes (ndim dimensions) of na arrays whose strides are
 * st[a] (st[0] the output's): false when the output may reach a position
 * twice. Dimensions go outermost first by the output's strides. */
static bool plan_loop(lplan *L, size_t ndim, const int64_t *sizes, int na, const int64_t *const *st)
{
    if (!distinct_positions(ndim, sizes, st[0]))
        return false;
    L->na = na;
    L->nd = 1;
    for (size_t d = 0; d < ndim; d++)
        if (sizes[d] == 0) { /* no element: one empty row */
            L->size[0] = 0;
            for (int a = 0; a < na; a++)
                L->st[a][0] = 0;
            return true;
        }
    int ord[SG_MAX_DIMS], n = 0;
    for (size_t d = 0; d < ndim; d++) { /* by the output's stride, largest first */
        if (sizes[d] == 1)
            continue;
        int i = n++;
        for (; i > 0 && st[0][ord[i - 1]] < st[0][d]; i--)
            ord[i] = ord[i - 1];
        ord[i] = (int)d;
    }
    L->nd = 0;
    for (int i = 0; i < n; i++) {
        int d = ord[i], m = L->nd;
        bool merge = m > 0;
        for (int a = 0; a < na && merge; a++)
            merge = L->st[a][m - 1] == st[a][d] * sizes[d];
        if (merge) {
            L->size[m - 1] *= sizes[d];
            for (int a = 0; a < na; a++)
                L->st[a][m - 1] = st[a][d];
            continue;
        }
        L->size[m] = sizes[d];
        for (int a = 0; a < na; a++)
            L->st[a][m] = st[a][d];
        L->nd++;
    }
    if (!L->nd) { /* one element */
        L->nd = 1;
        L->size[0] = 1;
        for (int a = 0; a < na; a++)
            L->st[a][0] = 0;
    }
    return true;
}

/* The rows of the plan: row(arg, n, p, s) for each run of its innermost
 * dimension, p[a] the address of the row's first element in array a (of
 * element size es[a] bytes), s the arrays' innermost strides. */
typedef void (*row_fn)(const void *arg, int64_t n, char *const *p, const int64_t *s);

static void run_plan(const lplan *L, char *const *base, const size_t *es, row_fn row, const void *arg)
{
    if (L->nd == 1) { /* one row: every flat result */
        int64_t in1[LMAX];
        for (int a = 0; a < L->na; a++)
            in1[a] = L->st[a][0];
        row(arg, L->size[0], base, in1);
        return;
    }
    int64_t idx[SG_MAX_DIMS], off[LMAX] = {0}, in[LMAX];
    char *p[LMAX];
    int outer = L->nd - 1;
    for (int a = 0; a < L->na; a++)
        in[a] = L->st[a][outer];
    for (int d = 0; d < outer; d++)
        idx[d] = 0;
    for (;;) {
        for (int a = 0; a < L->na; a++)
            p[a] = base[a] + off[a] * (int64_t)es[a];
        row(arg, L->size[outer], p, in);
        int d = outer - 1;
        for (; d >= 0; d--) {
            for (int a = 0; a < L->na; a++)
                off[a] += L->st[a][d];
            if (++idx[d] < L->size[d])
                break;
            for (int a = 0; a < L->na; a++)
                off[a] -= L->st[a][d] * L->size[d];
            idx[d] = 0;
        }
        if (d < 0)
            return;
    }
}

/* Whether an operand at offset off read through strides st (broadcast to
 * the output's sizes) may share the output's storage with a direct write:
 * another storage, or the output's own positions. */
static bool reads_own(const sg__xstorage *ost, int64_t ooff, const int64_t *ost_strides, size_t ndim,
                      const int64_t *sizes, const sg__xstorage *st, int64_t off, const int64_t *strides)
{
    if (st != ost)
        return true;
    if (off != ooff)
        return false;
    for (size_t d = 0; d < ndim; d++)
        if (sizes[d] > 1 && strides[d] != ost_strides[d])
            return false;
    return true;
}

static size_t elem_bytes(int dtype)
{
    return dtype == SG_FLOAT64 || dtype == SG_INT64 ? 8 : dtype == SG_FLOAT32 ? 4 : 1;
}

/* A row of a copy between arrays of one dtype (an element of es bytes). */
static void copy_row(const void *arg, int64_t n, char *const *p, const int64_t *s)
{
    size_t es = *(const size_t *)arg;
    if (s[0] == 1 && s[1] == 1) {
        memmove(p[0], p[1], (size_t)n * es);
        return;
    }
    switch (es) {
    case 8:
        for (int64_t i = 0; i < n; i++)
            ((uint64_t *)(void *)p[0])[i * s[0]] = ((const uint64_t *)(const void *)p[1])[i * s[1]];
        break;
    case 4:
        for (int64_t i = 0; i < n; i++)
            ((uint32_t *)(void *)p[0])[i * s[0]] = ((const uint32_t *)(const void *)p[1])[i * s[1]];
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            ((uint8_t *)p[0])[i * s[0]] = ((const uint8_t *)p[1])[i * s[1]];
        break;
    }
}

/* copy_into without a buffer, where the plan allows it and src has st's
 * dtype, float64 or int64 (whose elements the buffer carries bit for bit;
 * float32 and bool go through its conversions): true when done. */
static bool copy_direct(sg__xstorage *st, size_t ndim, const int64_t *sizes, const int64_t *strides, int64_t offset,
                        const sg__xtensor *src, const int64_t *sst)
{
    if (src->dtype != st->dtype || (st->dtype != SG_FLOAT64 && st->dtype != SG_INT64) ||
        !reads_own(st, offset, strides, ndim, sizes, src->st, src->offset, sst))
        return false;
    lplan L;
    const int64_t *sts[2] = {strides, sst};
    if (!plan_loop(&L, ndim, sizes, 2, sts))
        return false;
    size_t es = elem_bytes(st->dtype), ess[2] = {es, es};
    char *base[2] = {(char *)st->data + offset * (int64_t)es, (char *)src->st->data + src->offset * (int64_t)es};
    if (L.nd == 2 && es == 8) { /* two loops here (a transposed matrix made contiguous), no call per row */
        uint64_t *o = (uint64_t *)(void *)base[0];
        const uint64_t *s = (const uint64_t *)(const void *)base[1];
        int64_t o0 = L.st[0][0], o1 = L.st[0][1], s0 = L.st[1][0], s1 = L.st[1][1];
        for (int64_t i = 0; i < L.size[0]; i++)
            for (int64_t j = 0; j < L.size[1]; j++)
                o[i * o0 + j * o1] = s[i * s0 + j * s1];
        return true;
    }
    run_plan(&L, base, ess, copy_row, &es);
    return true;
}

/* Copy src, broadcast, into the layout (converted to its dtype): directly
 * where copy_direct may, else through a buffer (src may share memory with
 * it). Errors: SG_ESHAPE, SG_ENOMEM. */
static sg_status copy_into(sg__xcall *c, sg__xstorage *st, size_t ndim, const int64_t *sizes, const int64_t *strides,
                           int64_t offset, const sg__xtensor *src)
{
    int64_t sst[SG_MAX_DIMS];
    CHAIN(bstrides(c, src, ndim, sizes, sst));
    if (copy_direct(st, ndim, sizes, strides, offset, src, sst))
        return SG_OK;
    xv *buf;
    bool isf;
    CHAIN(buf_new(c, &buf, numel_of(ndim, sizes)));
    sg_status s = get_all(c, src, ndim, sizes, buf, &isf);
    if (!s)
        put_all(st, ndim, sizes, strides, offset, buf, isf);
    sg_free(buf);
    return s;
}

/* The node's output tensor (its one tensor value), made and kept. */
static sg_status out_tensor(sg__xcall *c, sg__xtensor **out)
{
    uint32_t v = c->n->out;
    if (v == SG_NOVAL || c->g->vals[v].kind != SG_V_TENSOR)
        return sg__err(c->ctx, SG_EINTERNAL, "%s: the node gives no tensor", c->op);
    return sg__xc_output(c, v, out);
}

/* Keep t as the node's output value (the run takes the reference); bump
 * its version counter if the operator writes (in place or out=), unless
 * the node is flagged SG_NODE_DATA (`x.data = y`, `x.data.mul_(2)`: what
 * autograd does not see). */
static sg_status finish(sg__xcall *c, sg__xtensor *t, bool bump)
{
    bump |= (c->s->flags & SG_OPF_OUT) != 0; /* out= writes (the kernels of mm, cat ... serve their out= too) */
    if (bump && !(c->n->flags & SG_NODE_DATA)) /* a write flagged as through `.data` is not seen */
        t->ver->n++;
    sg__xc_set(c, c->n->out, (sg__xval){.kind = SG_XV_TENSOR, .u.t = t});
    return SG_OK;
}

static const sg__xarg *arg(const sg__xcall *c, const char *name)
{
    int i = sg__xc_at(c, name);
    static const sg__xarg none = {.kind = SG_XA_NONE};
    return i >= 0 ? &c->a[i] : &none;
}

static sg__xtensor *targ(const sg__xcall *c, const char *name)
{
    const sg__xarg *a = arg(c, name);
    return a->kind == SG_XA_TENSOR ? a->t : NULL;
}

static sg_status need_tensor(sg__xcall *c, const char *name, sg__xtensor **t)
{
    if (!(*t = targ(c, name)))
        return sg__err(c->ctx, SG_EINTERNAL, "%s: argument %s is not a tensor", c->op, name);
    return SG_OK;
}

/* A dimension normalized against ndim (a rank-0 tensor takes -1 and 0). */
static sg_status norm_dim(sg__xcall *c, int64_t d, size_t ndim, size_t *out)
{
    int64_t n = ndim ? (int64_t)ndim : 1;
    if (d < -n || d >= n)
        return sg__err(c->ctx, SG_ESHAPE, "%s: dimension %lld out of range [%lld, %lld]", c->op, (long long)d,
                       (long long)-n, (long long)n - 1);
    *out = (size_t)(d < 0 ? d + n : d);
    return SG_OK;
}

/* ---- type promotion (c10's ResultTypeState, as meta_pointwise.c) ---- */

static int rank_of(int d)
{
    return d == SG_BOOL ? 0 : d == SG_INT64 ? 1 : d == SG_FLOAT32 ? 2 : 3;
}

static int promote(int a, int b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    return rank_of(b) > rank_of(a) ? b : a;
}

static int combine(int higher, int lower)
{
    if (higher < 0)
        return lower;
    if (lower < 0 || is_float(higher))
        return higher;
    if (higher == SG_BOOL || is_float(lower))
        return promote(higher, lower);
    return higher;
}

/* ---- pointwise ---- */

typedef enum {
    P_ADD, P_SUB, P_MUL, P_DIV, P_POW,
    P_EQ, P_NE, P_LT, P_LE, P_GT, P_GE, P_AND, P_OR, /* bool results: is_compare */
    P_WHERE, P_CLAMP,
    P_NEG, P_ABS, P_EXP, P_LOG, P_SIN, P_COS, P_TANH, P_RELU, P_SIGMOID,
    P_RSUB, P_RECIP, /* rsub: other - alpha * self; reciprocal: 1 / self */
    P_SGN, P_TANH_BW, P_SIGMOID_BW, P_THRESHOLD_BW /* the backward formulas' kernels */
} pop;

typedef struct {
    int n;
    uint8_t kind[MAXOP]; /* SG_XA_TENSOR, SG_XA_INT, SG_XA_FLOAT, SG_XA_BOOL, SG_XA_NONE */
    const sg__xarg *a[MAXOP];
    int cond;            /* where's condition, or -1 */
} operands;

/* name == lit (lit at least one letter), the first two letters compared
 * first (most names differ there: "other" and "out" in the second). */
static inline bool named(const char *name, const char *lit)
{
    return name[0] == lit[0] && name[1] == lit[1] && !strcmp(name, lit);
}

static sg_status collect(sg__xcall *c, operands *o)
{
    o->n = 0;
    o->cond = -1;
    for (int i = 0; i < c->s->nargs; i++) {
        const sg__sarg *sa = &c->s->args[i];
        if (sa->type.list || (sa->type.base != SG_TY_TENSOR && sa->type.base != SG_TY_SCALAR) ||
            named(sa->name, "alpha") || named(sa->name, "out"))
            continue;
        if (o->n == MAXOP)
            return sg__err(c->ctx, SG_EINTERNAL, "%s: too many operands", c->op);
        if (named(sa->name, "condition"))
            o->cond = o->n;
        o->kind[o->n] = c->a[i].kind;
        o->a[o->n++] = &c->a[i];
    }
    return SG_OK;
}

/* The dtype the operands compute in (before div and float functions make
 * integers float). */
static int common_dtype(const operands *o)
{
    int dim = -1, zero = -1, wrapped = -1;
    for (int k = 0; k < o->n; k++) {
        const sg__xarg *a = o->a[k];
        if (k == o->cond)
            continue;
        switch (a->kind) {
        case SG_XA_TENSOR:
            if (a->t->ndim)
                dim = promote(dim, a->t->dtype);
            else
                zero = promote(zero, a->t->dtype);
            break;
        case SG_XA_FLOAT: wrapped = promote(wrapped, SG_FLOAT64); break;
        case SG_XA_INT: wrapped = promote(wrapped, SG_INT64); break;
        case SG_XA_BOOL: wrapped = promote(wrapped, SG_BOOL); break;
        default: break;
        }
    }
    int d = combine(dim, combine(zero, wrapped));
    return d < 0 ? SG_FLOAT64 : d;
}

/* A number converted to the compute kind. */
static xv scalar_in(const sg__xarg *a, bool isf, bool f32)
{
    xv v;
    if (isf) {
        double f = a->kind == SG_XA_FLOAT ? a->f : a->kind == SG_XA_INT ? (double)a->i : (double)a->b;
        if (f32)
            f = a->kind == SG_XA_INT ? (double)(float)a->i : (double)(float)f;
        v.f = f;
    } else {
        v.i = a->kind == SG_XA_INT ? a->i : a->kind == SG_XA_BOOL ? a->b : sg__xf2i(a->f);
    }
    return v;
}

static inline double r32(double x, bool f32)
{
    return f32 ? (double)(float)x : x;
}

/* Float pow with a Tensor exponent (float32: the double result rounded,
 * which agrees with PyTorch's more often than powf). */
static double fpow(double a, double b, bool f32)
{
    return r32(pow(a, b), f32);
}

/* Float pow with a number exponent, as pow_tensor_scalar_optimized_kernel
 * special-cases it (for float32 the exponent is a float32 too). */
static double fpow_scalar(double a, double e, bool f32)
{
    if (e == 0.5)
        return r32(sqrt(a), f32);
    if (e == 2.0)
        return r32(a * a, f32);
    if (e == 3.0)
        return r32(r32(a * a, f32) * a, f32);
    if (e == -0.5)
        return r32(1.0 / r32(sqrt(a), f32), f32);
    if (e == -1.0)
        return r32(1.0 / a, f32);
    if (e == -2.0)
        return r32(1.0 / r32(a * a, f32), f32);
    if (e == 0.0)
        return 1.0;
    if (e == 1.0)
        return a;
    return r32(pow(a, e), f32);
}

/* Integer pow (c10's powi): wraps; a negative exponent gives 1 for a base
 * of 1, +-1 for -1, 0 otherwise. */
static int64_t ipow(int64_t a, int64_t b)
{
    if (b < 0) {
        if (a == 1)
            return 1;
        if (a == -1)
            return (-(b % 2)) ? -1 : 1;
        return 0;
    }
    uint64_t r = 1, x = (uint64_t)a;
    uint64_t e = (uint64_t)b;
    while (e) {
        if (e & 1)
            r *= x;
        x *= x;
        e >>= 1;
    }
    return (int64_t)r;
}

/* NaN-propagating max and min (vec::maximum / minimum). */
static double fmaxp(double a, double b)
{
    return a != a ? a : b != b ? b : a > b ? a : b;
}

static double fminp(double a, double b)
{
    return a != a ? a : b != b ? b : a < b ? a : b;
}

typedef struct {
    pop op;
    bool isf, f32;     /* the compute kind */
    bool scalar_exp;   /* pow with a number exponent */
    double alpha_f;
    int64_t alpha_i;
    bool has[MAXOP];   /* clamp: the bound is given */
} pctx;

/* One element: operands x[0..n) in the compute kind. Compare results are 0/1 in .i. */
static xv compute(const pctx *P, const xv *x)
{
    xv r = {0}; /* every op sets it; zero for the compiler, which cannot see that */
    bool f32 = P->f32;
    if (P->isf) {
        double a = x[0].f, b = x[1].f;
        switch (P->op) {
        case P_ADD: r.f = P->alpha_f == 1 ? r32(a + b, f32) : f32 ? fmaf((float)b, (float)P->alpha_f, (float)a)
                                                                  : fma(b, P->alpha_f, a); break;
        case P_SUB: r.f = P->alpha_f == 1 ? r32(a - b, f32) : f32 ? fmaf((float)b, (float)-P->alpha_f, (float)a)
                                                                  : fma(b, -P->alpha_f, a); break;
        case P_RSUB: r.f = P->alpha_f == 1 ? r32(b - a, f32) : f32 ? fmaf((float)a, (float)-P->alpha_f, (float)b)
                                                                   : fma(a, -P->alpha_f, b); break;
        case P_RECIP: r.f = r32(1.0 / a, f32); break;
        case P_MUL: r.f = r32(a * b, f32); break;
        case P_DIV: r.f = r32(a / b, f32); break;
        case P_POW: r.f = P->scalar_exp ? fpow_scalar(a, b, f32) : fpow(a, b, f32); break;
        case P_EQ: r.i = a == b; break;
        case P_NE: r.i = a != b; break;
        case P_LT: r.i = a < b; break;
        case P_LE: r.i = a <= b; break;
        case P_GT: r.i = a > b; break;
        case P_GE: r.i = a >= b; break;
        case P_AND: r.i = a != 0 && b != 0; break;
        case P_OR: r.i = a != 0 || b != 0; break;
        case P_WHERE: r.f = x[0].i ? x[1].f : x[2].f; break;
        case P_CLAMP:
            r.f = a;
            if (P->has[1])
                r.f = fmaxp(r.f, x[1].f);
            if (P->has[2])
                r.f = fminp(r.f, x[2].f);
            break;
        case P_NEG: r.f = -a; break;
        case P_ABS: r.f = fabs(a); break;
        case P_EXP: r.f = r32(exp(a), f32); break;
        case P_LOG: r.f = r32(log(a), f32); break;
        case P_SIN: r.f = r32(sin(a), f32); break;
        case P_COS: r.f = r32(cos(a), f32); break;
        case P_TANH: r.f = r32(tanh(a), f32); break;
        case P_RELU: r.f = a != a || a >= 0 ? a : 0.0; break; /* clamp_min(a, 0): NaN and -0.0 stay */
        case P_SIGMOID:
            r.f = f32 ? (double)(1.0f / (1.0f + expf(-(float)a))) : 1.0 / (1.0 + exp(-a));
            break;
        case P_SGN: r.f = (double)((0 < a) - (a < 0)); break; /* c10's sgn of a real: NaN gives 0 */
        case P_TANH_BW: r.f = r32(a * r32(1 - r32(b * b, f32), f32), f32); break; /* grad * (1 - y * y) */
        case P_SIGMOID_BW: r.f = r32(r32(a * r32(1 - b, f32), f32) * b, f32); break; /* grad * (1 - y) * y */
        case P_THRESHOLD_BW: r.f = b <= x[2].f ? 0.0 : a; break; /* self <= threshold ? 0 : grad */
        }
        return r;
    }
    uint64_t a = (uint64_t)x[0].i, b = (uint64_t)x[1].i;
    int64_t sa = x[0].i, sb = x[1].i;
    switch (P->op) {
    case P_ADD: r.i = (int64_t)(a + (uint64_t)P->alpha_i * b); break;
    case P_SUB: r.i = (int64_t)(a - (uint64_t)P->alpha_i * b); break;
    case P_RSUB: r.i = (int64_t)(b - (uint64_t)P->alpha_i * a); break;
    case P_MUL: r.i = (int64_t)(a * b); break;
    case P_DIV: r.i = sb ? sa / sb : 0; break; /* not reached: div computes in float */
    case P_POW: r.i = ipow(sa, sb); break;
    case P_EQ: r.i = sa == sb; break;
    case P_NE: r.i = sa != sb; break;
    case P_LT: r.i = sa < sb; break;
    case P_LE: r.i = sa <= sb; break;
    case P_GT: r.i = sa > sb; break;
    case P_GE: r.i = sa >= sb; break;
    case P_AND: r.i = sa != 0 && sb != 0; break;
    case P_OR: r.i = sa != 0 || sb != 0; break;
    case P_WHERE: r.i = x[0].i ? x[1].i : x[2].i; break;
    case P_CLAMP:
        r.i = sa;
        if (P->has[1] && r.i < x[1].i)
            r.i = x[1].i;
        if (P->has[2] && r.i > x[2].i)
            r.i = x[2].i;
        break;
    case P_NEG: r.i = (int64_t)(0 - a); break;
    case P_ABS: r.i = sa < 0 ? (int64_t)(0 - a) : sa; break;
    case P_RELU: r.i = sa > 0 ? sa : 0; break;
    case P_SGN: r.i = (0 < sa) - (sa < 0); break;
    case P_TANH_BW: r.i = (int64_t)(a * (1 - b * b)); break;
    case P_SIGMOID_BW: r.i = (int64_t)(a * (1 - b) * b); break;
    case P_THRESHOLD_BW: r.i = sb <= x[2].i ? 0 : sa; break;
    default: r.i = 0; break; /* float functions compute in float */
    }
    return r;
}

static bool is_compare(pop op)
{
    return op >= P_EQ && op <= P_OR;
}

/* The rows of a float64 pointwise result (every array float64): the
 * common operators as plain loops, the others through compute. */
typedef struct {
    const pctx *P;
    int n; /* operands */
} pw_rows;

static void pw_row_f64(const void *arg, int64_t n, char *const *p, const int64_t *s)
{
    const pw_rows *R = arg;
    const pctx *P = R->P;
    double *o = (double *)(void *)p[0];
    const double *a = (const double *)(const void *)p[1];
    const double *b = R->n > 1 ? (const double *)(const void *)p[2] : a;
    int64_t so = s[0], sa = s[1], sb = R->n > 1 ? s[2] : 0;
    switch (P->op) {
#define ROW(expr)                                                                                                  \
    do {                                                                                                           \
        for (int64_t i = 0; i < n; i++) {                                                                          \
            double x0 = a[i * sa], x1 = b[i * sb];                                                                 \
            (void)x1;                                                                                              \
            o[i * so] = (expr);                                                                                    \
        }                                                                                                          \
        return;                                                                                                    \
    } while (0)
    case P_ADD:
        if (P->alpha_f == 1)
            ROW(x0 + x1);
        break;
    case P_SUB:
        if (P->alpha_f == 1)
            ROW(x0 - x1);
        break;
    case P_RSUB:
        if (P->alpha_f == 1)
            ROW(x1 - x0);
        break;
    case P_MUL: ROW(x0 * x1);
    case P_DIV: ROW(x0 / x1);
    case P_NEG: ROW(-x0);
    case P_SIN: ROW(sin(x0));
    case P_COS: ROW(cos(x0));
    case P_EXP: ROW(exp(x0));
    case P_LOG: ROW(log(x0));
    case P_TANH: ROW(tanh(x0));
    default: break;
#undef ROW
    }
    xv x[MAXOP] = {{0}};
    for (int64_t i = 0; i < n; i++) {
        for (int k = 0; k < R->n; k++)
            x[k].f = ((const double *)(const void *)p[k + 1])[i * s[k + 1]];
        o[i * so] = compute(P, x).f;
    }
}

/* A float64 result of two dimensions (an operand broadcast along one: rows
 * of a matrix) for the common binary operators, both loops here, without a
 * call of pw_row_f64 per row; the same expressions as pw_row_f64 (so the
 * same bits). False for the other operators (run_plan then). */
static bool pw_2d_f64(const pctx *P, int n, const lplan *L, char *const *base)
{
    if (L->nd != 2 || n != 2)
        return false;
    double *o = (double *)(void *)base[0];
    const double *a = (const double *)(const void *)base[1], *b = (const double *)(const void *)base[2];
    int64_t n0 = L->size[0], n1 = L->size[1];
    int64_t o0 = L->st[0][0], o1 = L->st[0][1], a0 = L->st[1][0], a1 = L->st[1][1], b0 = L->st[2][0],
            b1 = L->st[2][1];
#define LOOP2(expr)                                                                                                \
    do {                                                                                                           \
        for (int64_t i = 0; i < n0; i++)                                                                           \
            for (int64_t j = 0; j < n1; j++) {                                                                     \
                double x0 = a[i * a0 + j * a1], x1 = b[i * b0 + j * b1];                                           \
                o[i * o0 + j * o1] = (expr);                                                                       \
            }                                                                                                      \
        return true;                                                                                               \
    } while (0)
    switch (P->op) {
    case P_ADD:
        if (P->alpha_f == 1)
            LOOP2(x0 + x1);
        break;
    case P_SUB:
        if (P->alpha_f == 1)
            LOOP2(x0 - x1);
        break;
    case P_MUL: LOOP2(x0 * x1);
    case P_DIV: LOOP2(x0 / x1);
    default: break;
#undef LOOP2
    }
    return false;
}

/* The result written straight into out where the plan allows it (see
 * "loops in memory order"): float64 operands and result, no condition;
 * bst the tensor operands' broadcast strides, x the numbers. True when
 * done. */
static bool pointwise_direct(const pctx *P, const operands *o, sg__xtensor *out, int64_t (*bst)[SG_MAX_DIMS],
                             xv *x)
{
    static const int64_t repeat[SG_MAX_DIMS]; /* a number: the same element everywhere */
    if (!P->isf || P->f32 || is_compare(P->op) || o->cond >= 0 || out->dtype != SG_FLOAT64)
        return false;
    const int64_t *sts[LMAX] = {out->strides};
    char *base[LMAX] = {(char *)out->st->data + out->offset * (int64_t)sizeof(double)};
    size_t es[LMAX] = {sizeof(double)};
    for (int k = 0; k < o->n; k++) {
        if (o->kind[k] == SG_XA_TENSOR) {
            const sg__xtensor *t = o->a[k]->t;
            if (t->dtype != SG_FLOAT64 ||
                !reads_own(out->st, out->offset, out->strides, out->ndim, out->sizes, t->st, t->offset, bst[k]))
                return false;
            sts[k + 1] = bst[k];
            base[k + 1] = (char *)t->st->data + t->offset * (int64_t)sizeof(double);
        } else {
            sts[k + 1] = repeat;
            base[k + 1] = (char *)&x[k].f;
        }
        es[k + 1] = sizeof(double);
    }
    lplan L;
    if (!plan_loop(&L, out->ndim, out->sizes, o->n + 1, sts))
        return false;
    if (pw_2d_f64(P, o->n, &L, base))
        return true;
    pw_rows R = {.P = P, .n = o->n};
    run_plan(&L, base, es, pw_row_f64, &R);
    return true;
}

/* The result computed into a buffer in row-major order, then written into
 * out. Errors: SG_ENOMEM. */
static sg_status pointwise_buffered(sg__xcall *c, const pctx *P, const operands *o, sg__xtensor *out,
                                    int64_t (*bst)[SG_MAX_DIMS], xv *x)
{
    int64_t n = sg__xt_numel(out);
    xv *res;
    CHAIN(buf_new(c, &res, n));
    sg__xpos it[MAXOP];
    for (int k = 0; k < o->n; k++)
        if (o->kind[k] == SG_XA_TENSOR)
            sg__xpos_init(&it[k], out->ndim, out->sizes, bst[k], o->a[k]->t->offset);
    for (int64_t e = 0; e < n; e++) {
        for (int k = 0; k < o->n; k++) {
            if (o->kind[k] != SG_XA_TENSOR)
                continue;
            const sg__xstorage *st = o->a[k]->t->st;
            if (k == o->cond)
                x[k].i = sg__xst_get_i(st, it[k].pos) != 0;
            else if (P->isf)
                x[k].f = rd_f(st, it[k].pos, P->f32);
            else
                x[k].i = sg__xst_get_i(st, it[k].pos);
            sg__xpos_next(&it[k]);
        }
        res[e] = compute(P, x);
    }
    put_tensor(out, res, P->isf && !is_compare(P->op));
    sg_free(res);
    return SG_OK;
}

static sg_status pointwise(sg__xcall *c, pop op)
{
    operands o;
    CHAIN(collect(c, &o));
    int cd = common_dtype(&o);
    bool float_op = op == P_DIV || op == P_EXP || op == P_LOG || op == P_SIN || op == P_COS || op == P_TANH ||
                    op == P_SIGMOID || op == P_RECIP;
    if (float_op && !is_float(cd))
        cd = SG_FLOAT64;
    pctx P = {.op = op, .isf = is_float(cd), .f32 = cd == SG_FLOAT32, .alpha_f = 1, .alpha_i = 1};
    if (op == P_NEG && cd == SG_BOOL)
        return sg__err(c->ctx, SG_ETYPE, "%s: negation, the `-` operator, on a bool tensor is not supported", c->op);
    if ((op == P_SUB || op == P_RSUB) && cd == SG_BOOL)
        return sg__err(c->ctx, SG_ETYPE, "%s: subtraction, the `-` operator, with two bool tensors is not supported",
                       c->op);
    if (op == P_ABS && cd == SG_BOOL)
        return sg__err(c->ctx, SG_ETYPE, "%s: \"abs_cpu\" not implemented for 'Bool'", c->op);
    const sg__xarg *alpha = arg(c, "alpha");
    if (alpha->kind != SG_XA_NONE) {
        if (alpha->kind == SG_XA_FLOAT && !P.isf)
            return sg__err(c->ctx, SG_ETYPE, "%s: for integral input tensors, argument alpha must not be a floating "
                                             "point number", c->op);
        if (alpha->kind == SG_XA_BOOL && cd != SG_BOOL)
            return sg__err(c->ctx, SG_ETYPE, "%s: boolean alpha only supported for boolean results", c->op);
        xv av = scalar_in(alpha, P.isf, P.f32);
        P.alpha_f = av.f;
        P.alpha_i = av.i;
        if (!P.isf)
            P.alpha_i = av.i;
    }
    if (op == P_CLAMP) {
        for (int k = 1; k < o.n; k++)
            P.has[k] = o.kind[k] != SG_XA_NONE;
        if (!P.has[1] && !P.has[2])
            return sg__err(c->ctx, SG_EINVAL, "%s: at least one of 'min' or 'max' must not be None", c->op);
    }
    if (op == P_POW && o.kind[1] != SG_XA_TENSOR) {
        P.scalar_exp = true;
        if (!P.isf && scalar_in(o.a[1], false, false).i < 0)
            return sg__err(c->ctx, SG_EINVAL, "%s: integers to negative integer powers are not allowed", c->op);
    }
    sg__xtensor *out;
    CHAIN(out_tensor(c, &out));
    int64_t bst[MAXOP][SG_MAX_DIMS]; /* the tensor operands' strides, broadcast */
    xv x[MAXOP] = {{0}};
    sg_status s = SG_OK;
    for (int k = 0; k < o.n && !s; k++) {
        if (o.kind[k] == SG_XA_TENSOR)
            s = bstrides(c, o.a[k]->t, out->ndim, out->sizes, bst[k]);
        else if (o.kind[k] != SG_XA_NONE)
            x[k] = scalar_in(o.a[k], P.isf, P.f32);
    }
    if (!s && !pointwise_direct(&P, &o, out, bst, x))
        s = pointwise_buffered(c, &P, &o, out, bst, x);
    if (s) {
        sg__xt_unref(out);
        return s;
    }
    return finish(c, out, (c->s->flags & SG_OPF_MUTATES) != 0);
}

#define POINTWISE(name, op)                                                                                        \
    static sg_status name(sg__xcall *c)                                                                            \
    {                                                                                                              \
        return pointwise(c, op);                                                                                   \
    }
POINTWISE(k_add, P_ADD)
POINTWISE(k_sub, P_SUB)
POINTWISE(k_rsub, P_RSUB)
POINTWISE(k_reciprocal, P_RECIP)
POINTWISE(k_mul, P_MUL)
POINTWISE(k_div, P_DIV)
POINTWISE(k_pow, P_POW)
POINTWISE(k_eq, P_EQ)
POINTWISE(k_ne, P_NE)
POINTWISE(k_lt, P_LT)
POINTWISE(k_le, P_LE)
POINTWISE(k_gt, P_GT)
POINTWISE(k_ge, P_GE)
POINTWISE(k_where, P_WHERE)
POINTWISE(k_clamp, P_CLAMP)
POINTWISE(k_neg, P_NEG)
POINTWISE(k_abs, P_ABS)
POINTWISE(k_exp, P_EXP)
POINTWISE(k_log, P_LOG)
POINTWISE(k_sin, P_SIN)
POINTWISE(k_cos, P_COS)
POINTWISE(k_tanh, P_TANH)
POINTWISE(k_relu, P_RELU)
POINTWISE(k_sigmoid, P_SIGMOID)
POINTWISE(k_sgn, P_SGN)
POINTWISE(k_tanh_backward, P_TANH_BW)
POINTWISE(k_sigmoid_backward, P_SIGMOID_BW)
POINTWISE(k_threshold_backward, P_THRESHOLD_BW)
POINTWISE(k_logical_and, P_AND)
POINTWISE(k_logical_or, P_OR)

/* ---- copies and fills ---- */

/* The argument `from` broadcast into the output tensor (self, or a new one of
 * self's sizes), converted to its dtype; bump: a write into an existing tensor. */
static sg_status copy_kernel(sg__xcall *c, const char *from, bool bump)
{
    sg__xtensor *src, *out;
    CHAIN(need_tensor(c, from, &src));
    CHAIN(out_tensor(c, &out));
    sg_status s = copy_into(c, out->st, out->ndim, out->sizes, out->strides, out->offset, src);
    if (s) {
        sg__xt_unref(out);
        return s;
    }
    return finish(c, out, bump);
}

/* copy_(self, src): src written into self. */
static sg_status k_copy_(sg__xcall *c)
{
    return copy_kernel(c, "src", true);
}

/* copy(self, src): a new tensor of self's sizes and dtype holding src. */
static sg_status k_copy(sg__xcall *c)
{
    return copy_kernel(c, "src", false);
}

/* Every element of t set to the number a (cast to t's dtype). */
static void fill_number(sg__xtensor *t, const sg__xarg *a)
{
    int64_t n = sg__xt_numel(t);
    sg__xpos it;
    sg__xpos_init(&it, t->ndim, t->sizes, t->strides, t->offset);
    for (int64_t k = 0; k < n; k++, sg__xpos_next(&it)) {
        if (a->kind == SG_XA_FLOAT)
            sg__xst_set_f(t->st, it.pos, a->f);
        else
            sg__xst_set_i(t->st, it.pos, a->kind == SG_XA_INT ? a->i : a->b);
    }
}

/* fill_.Scalar, fill_.Tensor (a 0-dim value), zero_. */
static sg_status k_fill_(sg__xcall *c)
{
    sg__xarg v = {.kind = SG_XA_INT, .i = 0};
    const sg__xarg *a = arg(c, "value");
    if (a->kind == SG_XA_TENSOR) {
        if (a->t->ndim != 0)
            return sg__err(c->ctx, SG_ESHAPE, "%s: fill_ only supports a 0-dimension value tensor, but got one of "
                                              "%u dimensions", c->op, a->t->ndim);
        if (is_float(a->t->dtype))
            v = (sg__xarg){.kind = SG_XA_FLOAT, .f = sg__xst_get_f(a->t->st, a->t->offset)};
        else
            v = (sg__xarg){.kind = SG_XA_INT, .i = sg__xst_get_i(a->t->st, a->t->offset)};
    } else if (a->kind != SG_XA_NONE) {
        v = *a;
    }
    sg__xtensor *out;
    CHAIN(out_tensor(c, &out));
    fill_number(out, &v);
    return finish(c, out, true);
}

/* clone, contiguous: self's elements in a new tensor. */
static sg_status k_clone(sg__xcall *c)
{
    return copy_kernel(c, "self", false);
}

/* ---- creation ---- */

/* zeros ones full empty, zeros_like ones_like empty_like, new_empty
 * new_empty_strided (empty: zeros), scalar_tensor. */
static sg_status k_create(sg__xcall *c)
{
    const char *name = c->s->name;
    sg__xarg v = {.kind = SG_XA_INT, .i = 0};
    if (!strncmp(name, "ones", 4))
        v.i = 1;
    else if (!strcmp(name, "full"))
        v = *arg(c, "fill_value");
    else if (c->s->op == SG_OP_scalar_tensor)
        v = *arg(c, "s");
    sg__xtensor *out;
    CHAIN(out_tensor(c, &out));
    fill_number(out, &v);
    return finish(c, out, false);
}

/* arange: start + i * step in the output dtype's accumulate type (int64
 * for int64, double for the float dtypes); the length is the output's. */
static sg_status k_arange(sg__xcall *c)
{
    const sg__xarg *start = arg(c, "start"), *end = arg(c, "end"), *step = arg(c, "step");
    (void)end;
    sg__xtensor *out;
    CHAIN(out_tensor(c, &out));
    bool fl = is_float(out->dtype) || start->kind == SG_XA_FLOAT || step->kind == SG_XA_FLOAT;
    double f0 = start->kind == SG_XA_FLOAT ? start->f : start->kind == SG_XA_INT ? (double)start->i : 0;
    double fs = step->kind == SG_XA_FLOAT ? step->f : step->kind == SG_XA_INT ? (double)step->i : 1;
    int64_t i0 = start->kind == SG_XA_INT ? start->i : 0, is = step->kind == SG_XA_INT ? step->i : 1;
    int64_t n = sg__xt_numel(out);
    for (int64_t k = 0; k < n; k++) {
        int64_t p = sg__xt_pos(out, k);
        if (fl)
            sg__xst_set_f(out->st, p, f0 + fs * (double)k);
        else
            sg__xst_set_i(out->st, p, (int64_t)((uint64_t)i0 + (uint64_t)is * (uint64_t)k));
    }
    return finish(c, out, false);
}

/* ---- views and metadata ---- */

/* Views, the in-place metadata operators, detach, alias, _unsafe_view:
 * no data moves, the layout is the output's. t_, transpose_, unsqueeze_,
 * squeeze_, as_strided_ and set_ bump self's version counter as PyTorch
 * 1.13 does; detach_, requires_grad_ and resize_ do not (resize_'s storage
 * grows in sg__xc_output, where the layout asks for more). */
static sg_status k_view(sg__xcall *c)
{
    uint32_t v = c->n->out;
    const sg__gval *gv = &c->g->vals[v];
    sg_status s = SG_OK;
    if (gv->kind == SG_V_LIST) { /* unbind: each element a view */
        for (uint32_t i = 0; i < gv->u.list.n && !s; i++) {
            uint32_t e = c->g->ids[gv->u.list.off + i];
            sg__xtensor *t;
            if (!(s = sg__xc_output(c, e, &t)))
                sg__xc_set(c, e, (sg__xval){.kind = SG_XV_TENSOR, .u.t = t});
        }
        if (!s)
            sg__xc_set(c, v, (sg__xval){.kind = SG_XV_LIST});
        return s;
    }
    sg__xtensor *out;
    CHAIN(out_tensor(c, &out));
    return finish(c, out, sg__op_bumps_version(c->s));
}

/* ---- reductions ---- */

/* sum mean amax amin: over the dims given (none or []: all), keepdim. */
static sg_status k_reduce(sg__xcall *c)
{
    sg__xtensor *self, *out;
    CHAIN(need_tensor(c, "self", &self));
    const char *name = c->s->name;
    bool mean = !strcmp(name, "mean"), isamax = !strcmp(name, "amax"), minmax = name[0] == 'a';
    bool red[SG_MAX_DIMS] = {false};
    const sg__xarg *dims = arg(c, "dim");
    bool all = dims->kind != SG_XA_INTS || dims->n == 0;
    for (uint32_t k = 0; !all && k < dims->n; k++) {
        size_t d = 0;
        CHAIN(norm_dim(c, dims->ints[k], self->ndim, &d));
        if (self->ndim)
            red[d] = true;
    }
    for (uint32_t d = 0; all && d < self->ndim; d++)
        red[d] = true;
    /* the output index of each input element: row-major over the kept dims */
    int64_t ost[SG_MAX_DIMS], acc = 1, count = 1;
    for (uint32_t d = self->ndim; d-- > 0;) {
        if (red[d]) {
            ost[d] = 0;
            count *= self->sizes[d];
        } else {
            ost[d] = acc;
            acc *= self->sizes[d];
        }
    }
    CHAIN(out_tensor(c, &out));
    int64_t m = sg__xt_numel(out), n = sg__xt_numel(self);
    if (m != acc) {
        sg__xt_unref(out);
        return sg__err(c->ctx, SG_EINTERNAL, "%s: an output of %lld elements for %lld", c->op, (long long)m,
                       (long long)acc);
    }
    if (minmax && count == 0 && m > 0) {
        sg__xt_unref(out);
        return sg__err(c->ctx, SG_ESHAPE, "%s: expected a reduction dim to have non-zero size", c->op);
    }
    int od = out->dtype;
    bool isf = is_float(od), f32 = od == SG_FLOAT32;
    xv *res;
    bool *seen = NULL;
    sg_status s = buf_new(c, &res, m);
    if (!s && minmax && !(seen = sg__calloc(c->ctx, m ? (size_t)m : 1, sizeof *seen)))
        s = sg__nomem(c->ctx);
    if (s) {
        sg_free(res);
        sg__xt_unref(out);
        return s;
    }
    sg__xpos in, at;
    sg__xpos_init(&in, self->ndim, self->sizes, self->strides, self->offset);
    sg__xpos_init(&at, self->ndim, self->sizes, ost, 0);
    for (int64_t k = 0; k < n; k++, sg__xpos_next(&in), sg__xpos_next(&at)) {
        xv *r = &res[at.pos];
        if (isf) {
            double x = rd_f(self->st, in.pos, f32);
            if (!minmax)
                r->f += x;
            else if (!seen[at.pos])
                r->f = x;
            else
                r->f = isamax ? fmaxp(r->f, x) : fminp(r->f, x);
        } else {
            int64_t x = sg__xst_get_i(self->st, in.pos);
            if (od == SG_BOOL && !minmax)
                x = x != 0;
            if (!minmax)
                r->i = (int64_t)((uint64_t)r->i + (uint64_t)x);
            else if (!seen[at.pos])
                r->i = x;
            else
                r->i = isamax ? (x > r->i ? x : r->i) : (x < r->i ? x : r->i);
        }
        if (minmax)
            seen[at.pos] = true;
    }
    if (mean)
        for (int64_t k = 0; k < m; k++)
            res[k].f = r32(r32(res[k].f, f32) / (double)count, f32);
    put_tensor(out, res, isf);
    sg_free(res);
    sg_free(seen);
    return finish(c, out, false);
}

/* ---- matrix products ---- */

/* mm, bmm, matmul (ranks up to 2 for matmul: dot, mv, vm, mm). */
static sg_status k_matmul(sg__xcall *c)
{
    sg__xtensor *a, *b, *out;
    CHAIN(need_tensor(c, "self", &a));
    if (!(b = targ(c, "mat2")) && !(b = targ(c, "vec"))) /* mm and bmm, mv, dot */
        CHAIN(need_tensor(c, "tensor", &b));
    if (a->ndim == 0 || b->ndim == 0 || a->ndim > 3 || b->ndim > 3 || (a->ndim == 3) != (b->ndim == 3))
        return sg__err(c->ctx, SG_EUNSUPPORTED, "%s: unsupported: operands of %u and %u dimensions", c->op, a->ndim,
                       b->ndim);
    /* a as [B, n, k] and b as [B, k, m] with strides (0 for a missing dimension) */
    int64_t B = 1, nn = 1, kk, mm = 1, sab = 0, san = 0, sak, sbb = 0, sbk, sbm = 0;
    if (a->ndim == 1) {
        kk = a->sizes[0];
        sak = a->strides[0];
    } else {
        size_t o = a->ndim - 2;
        nn = a->sizes[o];
        san = a->strides[o];
        kk = a->sizes[o + 1];
        sak = a->strides[o + 1];
        if (o) {
            B = a->sizes[0];
            sab = a->strides[0];
        }
    }
    if (b->ndim == 1) {
        if (b->sizes[0] != kk)
            return sg__err(c->ctx, SG_ESHAPE, "%s: inner sizes %lld and %lld differ", c->op, (long long)kk,
                           (long long)b->sizes[0]);
        sbk = b->strides[0];
    } else {
        size_t o = b->ndim - 2;
        if (b->sizes[o] != kk)
            return sg__err(c->ctx, SG_ESHAPE, "%s: inner sizes %lld and %lld differ", c->op, (long long)kk,
                           (long long)b->sizes[o]);
        sbk = b->strides[o];
        mm = b->sizes[o + 1];
        sbm = b->strides[o + 1];
        if (o) {
            if (b->sizes[0] != B)
                return sg__err(c->ctx, SG_ESHAPE, "%s: batch sizes %lld and %lld differ", c->op, (long long)B,
                               (long long)b->sizes[0]);
            sbb = b->strides[0];
        }
    }
    if (a->dtype == SG_BOOL && (a->ndim == 1 || (B * nn * mm > 0 && kk > 0))) /* as PyTorch's CPU kernels */
        return sg__err(c->ctx, SG_ETYPE, "%s: \"%s\" not implemented for 'Bool'", c->op,
                       a->ndim == 3 ? "bmm" : a->ndim == 1 ? "dot" : b->ndim == 1 ? "addmv_impl_cpu" : "addmm_impl_cpu_");
    CHAIN(out_tensor(c, &out));
    if (sg__xt_numel(out) != B * nn * mm) {
        sg__xt_unref(out);
        return sg__err(c->ctx, SG_EINTERNAL, "%s: an output of the wrong size", c->op);
    }
    xv *res;
    sg_status s = buf_new(c, &res, B * nn * mm);
    if (s) {
        sg__xt_unref(out);
        return s;
    }
    bool isf = is_float(out->dtype), f32 = out->dtype == SG_FLOAT32;
    for (int64_t q = 0; q < B; q++)
        for (int64_t i = 0; i < nn; i++)
            for (int64_t j = 0; j < mm; j++) {
                int64_t pa = a->offset + q * sab + i * san, pb = b->offset + q * sbb + j * sbm;
                xv acc = {0};
                for (int64_t p = 0; p < kk; p++, pa += sak, pb += sbk) {
                    if (isf)
                        acc.f += sg__xst_get_f(a->st, pa) * sg__xst_get_f(b->st, pb);
                    else
                        acc.i = (int64_t)((uint64_t)acc.i +
                                          (uint64_t)sg__xst_get_i(a->st, pa) * (uint64_t)sg__xst_get_i(b->st, pb));
                }
                if (isf)
                    acc.f = r32(acc.f, f32);
                res[(q * nn + i) * mm + j] = acc;
            }
    put_tensor(out, res, isf);
    sg_free(res);
    return finish(c, out, false);
}

/* ---- joins ---- */

/* cat, stack: each input copied (converted) into its part of the output.
 * cat skips inputs without elements (the legacy rule for 1-d empty ones). */
static sg_status k_cat(sg__xcall *c)
{
    const sg__xarg *list = arg(c, "tensors");
    bool stack = !strcmp(c->s->name, "stack");
    if (list->kind != SG_XA_TENSORS || list->n == 0)
        return sg__err(c->ctx, SG_ESHAPE, "%s: expected a non-empty list of tensors", c->op);
    sg__xtensor *out;
    CHAIN(out_tensor(c, &out));
    size_t d = 0;
    bool none = !stack; /* nothing to copy (the shape rule took the dim, or no dim where every input was skipped) */
    for (uint32_t k = 0; k < list->n && none; k++)
        none = sg__xt_numel(list->ts[k]) == 0;
    sg_status s = none ? SG_OK : norm_dim(c, arg(c, "dim")->i, out->ndim, &d);
    if (!s && !stack && out->ndim == 0)
        s = sg__err(c->ctx, SG_ESHAPE, "%s: zero-dimensional tensors cannot be concatenated", c->op);
    int64_t along = 0;
    for (uint32_t k = 0; k < list->n && !s; k++) {
        const sg__xtensor *t = list->ts[k];
        if (!stack && sg__xt_numel(t) == 0)
            continue;
        int64_t strides[SG_MAX_DIMS], off = out->offset;
        size_t r = 0;
        if ((stack ? t->ndim + 1 : t->ndim) != out->ndim) {
            s = sg__err(c->ctx, SG_ESHAPE, "%s: tensors must have the same number of dimensions", c->op);
            break;
        }
        for (size_t q = 0; q < out->ndim; q++) {
            if (q == d && stack) {
                off += (int64_t)k * out->strides[q];
                continue;
            }
            if (q == d)
                off += along * out->strides[q];
            strides[r++] = out->strides[q];
        }
        for (size_t q = 0; q < t->ndim && !s; q++) {
            int64_t want = out->sizes[stack && q >= d ? q + 1 : q];
            if (q != d || stack) {
                if (t->sizes[q] != want)
                    s = sg__err(c->ctx, SG_ESHAPE, "%s: sizes of tensors must match except in the dimension "
                                                   "concatenated", c->op);
            } else if (along + t->sizes[q] > want) {
                s = sg__err(c->ctx, SG_EINTERNAL, "%s: more than the output holds", c->op);
            }
        }
        if (!s)
            s = copy_into(c, out->st, t->ndim, t->sizes, strides, off, t);
        if (!stack)
            along += t->sizes[d];
    }
    if (s) {
        sg__xt_unref(out);
        return s;
    }
    return finish(c, out, false);
}

/* ---- data-dependent ---- */

/* nonzero: the indices of the nonzero elements (NaN counts), row-major, as
 * an int64 [n, ndim]; binds n. */
static sg_status k_nonzero(sg__xcall *c)
{
    sg__xtensor *self, *out;
    CHAIN(need_tensor(c, "self", &self));
    int64_t n = sg__xt_numel(self), count = 0;
    sg__xpos it;
    sg__xpos_init(&it, self->ndim, self->sizes, self->strides, self->offset);
    for (int64_t k = 0; k < n; k++, sg__xpos_next(&it))
        count += is_float(self->dtype) ? sg__xst_get_f(self->st, it.pos) != 0 : sg__xst_get_i(self->st, it.pos) != 0;
    if (c->n->nbinds)
        CHAIN(sg__xc_bind(c, 0, count));
    CHAIN(out_tensor(c, &out));
    if (out->ndim != 2 || out->sizes[0] != count || out->sizes[1] != (int64_t)self->ndim) {
        sg__xt_unref(out);
        return sg__err(c->ctx, SG_EINTERNAL, "%s: the output's layout does not hold %lld rows", c->op,
                       (long long)count);
    }
    int64_t row = 0;
    sg__xpos_init(&it, self->ndim, self->sizes, self->strides, self->offset);
    for (int64_t k = 0; k < n; k++, sg__xpos_next(&it)) {
        bool nz = is_float(self->dtype) ? sg__xst_get_f(self->st, it.pos) != 0 : sg__xst_get_i(self->st, it.pos) != 0;
        if (!nz)
            continue;
        for (uint32_t d = 0; d < self->ndim; d++)
            sg__xst_set_i(out->st, out->offset + row * out->strides[0] + (int64_t)d * out->strides[1], it.idx[d]);
        row++;
    }
    return finish(c, out, false);
}

/* masked_select: self's elements where mask (both broadcast) holds; binds n. */
static sg_status k_masked_select(sg__xcall *c)
{
    sg__xtensor *self, *mask, *out;
    CHAIN(need_tensor(c, "self", &self));
    CHAIN(need_tensor(c, "mask", &mask));
    size_t nd = self->ndim > mask->ndim ? self->ndim : mask->ndim;
    int64_t sizes[SG_MAX_DIMS], ss[SG_MAX_DIMS], ms[SG_MAX_DIMS];
    for (size_t d = 0; d < nd; d++) {
        int64_t a = d + self->ndim >= nd ? self->sizes[d + self->ndim - nd] : 1;
        int64_t b = d + mask->ndim >= nd ? mask->sizes[d + mask->ndim - nd] : 1;
        if (a != b && a != 1 && b != 1)
            return sg__err(c->ctx, SG_ESHAPE, "%s: the sizes of self and mask do not broadcast", c->op);
        sizes[d] = a == 1 ? b : a;
    }
    CHAIN(bstrides(c, self, nd, sizes, ss));
    CHAIN(bstrides(c, mask, nd, sizes, ms));
    int64_t n = numel_of(nd, sizes), count = 0;
    sg__xpos im;
    sg__xpos_init(&im, nd, sizes, ms, mask->offset);
    for (int64_t k = 0; k < n; k++, sg__xpos_next(&im))
        count += sg__xst_get_i(mask->st, im.pos) != 0;
    if (c->n->nbinds)
        CHAIN(sg__xc_bind(c, 0, count));
    CHAIN(out_tensor(c, &out));
    if (sg__xt_numel(out) != count) {
        sg__xt_unref(out);
        return sg__err(c->ctx, SG_EINTERNAL, "%s: the output's layout does not hold %lld elements", c->op,
                       (long long)count);
    }
    xv *res;
    sg_status s = buf_new(c, &res, count);
    if (s) {
        sg__xt_unref(out);
        return s;
    }
    bool isf = is_float(self->dtype);
    sg__xpos is;
    sg__xpos_init(&is, nd, sizes, ss, self->offset);
    sg__xpos_init(&im, nd, sizes, ms, mask->offset);
    int64_t j = 0;
    for (int64_t k = 0; k < n; k++, sg__xpos_next(&is), sg__xpos_next(&im)) {
        if (!sg__xst_get_i(mask->st, im.pos))
            continue;
        if (isf)
            res[j++].f = sg__xst_get_f(self->st, is.pos);
        else
            res[j++].i = sg__xst_get_i(self->st, is.pos);
    }
    put_tensor(out, res, isf);
    sg_free(res);
    return finish(c, out, false);
}

/* masked_scatter: self's values, and where mask (broadcast) holds, the
 * source's elements in row-major order, one after another. */
static sg_status k_masked_scatter(sg__xcall *c)
{
    sg__xtensor *self, *mask, *src, *out;
    CHAIN(need_tensor(c, "self", &self));
    CHAIN(need_tensor(c, "mask", &mask));
    CHAIN(need_tensor(c, "source", &src));
    CHAIN(out_tensor(c, &out));
    int64_t ms[SG_MAX_DIMS], n = sg__xt_numel(out), j = 0;
    sg_status s = copy_into(c, out->st, out->ndim, out->sizes, out->strides, out->offset, self);
    if (!s)
        s = bstrides(c, mask, out->ndim, out->sizes, ms);
    sg__xpos im, io;
    sg__xpos_init(&im, out->ndim, out->sizes, ms, mask->offset);
    sg__xpos_init(&io, out->ndim, out->sizes, out->strides, out->offset);
    for (int64_t k = 0; k < n && !s; k++, sg__xpos_next(&im), sg__xpos_next(&io)) {
        if (!sg__xst_get_i(mask->st, im.pos))
            continue;
        if (j == sg__xt_numel(src)) {
            s = sg__err(c->ctx, SG_ESHAPE, "%s: expected source to have at least as many elements as ones in mask",
                        c->op);
            break;
        }
        int64_t p = sg__xt_pos(src, j++);
        if (is_float(out->dtype))
            sg__xst_set_f(out->st, io.pos, sg__xst_get_f(src->st, p));
        else
            sg__xst_set_i(out->st, io.pos, sg__xst_get_i(src->st, p));
    }
    if (s) {
        sg__xt_unref(out);
        return s;
    }
    return finish(c, out, false);
}

/* item, _local_scalar_dense: the one element; an int or bool binds the
 * node's unbacked symbol (a bool as 0/1) and gives its expression's
 * value, a float gives the element. */
static sg_status k_item(sg__xcall *c)
{
    sg__xtensor *self;
    CHAIN(need_tensor(c, "self", &self));
    if (sg__xt_numel(self) != 1)
        return sg__err(c->ctx, SG_ESHAPE, "%s: a Tensor with %lld elements cannot be converted to Scalar", c->op,
                       (long long)sg__xt_numel(self));
    uint32_t v = c->n->out;
    const sg__gval *gv = &c->g->vals[v];
    int64_t p = self->offset; /* one element: every index 0 */
    if (is_float(self->dtype)) {
        sg__xc_set(c, v, (sg__xval){.kind = SG_XV_FLOAT, .u.f = sg__xst_get_f(self->st, p)});
        return SG_OK;
    }
    int64_t x = sg__xst_get_i(self->st, p);
    if (c->n->nbinds)
        CHAIN(sg__xc_bind(c, 0, x));
    if (gv->kind == SG_V_SYMINT || gv->kind == SG_V_SYMBOOL) {
        int64_t y;
        CHAIN(sg__xc_eval(c, gv->u.e, &y));
        if (gv->kind == SG_V_SYMINT)
            sg__xc_set(c, v, (sg__xval){.kind = SG_XV_INT, .u.i = y});
        else
            sg__xc_set(c, v, (sg__xval){.kind = SG_XV_BOOL, .u.b = y != 0});
    } else if (self->dtype == SG_BOOL) {
        sg__xc_set(c, v, (sg__xval){.kind = SG_XV_BOOL, .u.b = x != 0});
    } else {
        sg__xc_set(c, v, (sg__xval){.kind = SG_XV_INT, .u.i = x});
    }
    return SG_OK;
}

/* ---- scatters (what functionalization makes of a write into a view) ---- */

/* The output: self's values (zeros where self is NULL), then src copied
 * into the part (ndim, sizes, strides, offset relative to the output's
 * storage) that must have src's sizes. */
static sg_status scatter_into(sg__xcall *c, sg__xtensor *out, const sg__xtensor *self, const sg__xtensor *src,
                              size_t ndim, const int64_t *sizes, const int64_t *strides, int64_t offset)
{
    if (self)
        CHAIN(copy_into(c, out->st, out->ndim, out->sizes, out->strides, out->offset, self));
    else
        fill_number(out, &(sg__xarg){.kind = SG_XA_INT, .i = 0});
    if (src->ndim != ndim)
        return sg__err(c->ctx, SG_ESHAPE, "%s: expected src to have %zu dimensions, not %u", c->op, ndim, src->ndim);
    for (size_t d = 0; d < ndim; d++)
        if (src->sizes[d] != sizes[d])
            return sg__err(c->ctx, SG_ESHAPE, "%s: expected src to have a size of %lld in dimension %zu, not %lld",
                           c->op, (long long)sizes[d], d, (long long)src->sizes[d]);
    int64_t lo, hi;
    CHAIN(sg__xlayout_extent(c->ctx, ndim, sizes, strides, offset, &lo, &hi));
    if (hi > lo && (lo < 0 || hi > out->st->numel))
        return sg__err(c->ctx, SG_ESHAPE, "%s: the part written is outside the output's storage", c->op);
    return copy_into(c, out->st, ndim, sizes, strides, offset, src);
}

/* The scatters, and the backward of their views (select_backward,
 * slice_backward, diagonal_backward: grad_output written into zeros of
 * input_sizes, which the output has). */
static sg_status k_scatter(sg__xcall *c)
{
    sg__xtensor *self = NULL, *src, *out;
    unsigned op = c->s->op;
    bool bw = op == SG_OP_select_backward || op == SG_OP_slice_backward || op == SG_OP_diagonal_backward;
    if (!bw)
        CHAIN(need_tensor(c, "self", &self));
    CHAIN(need_tensor(c, bw ? "grad_output" : "src", &src));
    CHAIN(out_tensor(c, &out));
    int64_t sizes[SG_MAX_DIMS], strides[SG_MAX_DIMS], offset = out->offset;
    size_t n = out->ndim;
    memcpy(sizes, out->sizes, n * sizeof *sizes);
    memcpy(strides, out->strides, n * sizeof *strides);
    sg_status s = SG_OK;
    if (op == SG_OP_as_strided_scatter) {
        const sg__xarg *sz = arg(c, "size"), *st = arg(c, "stride"), *off = arg(c, "storage_offset");
        if (sz->n != st->n)
            s = sg__err(c->ctx, SG_ESHAPE, "%s: mismatch in length of strides and shape", c->op);
        n = sz->n;
        memcpy(sizes, sz->ints, n * sizeof *sizes);
        memcpy(strides, st->ints, n * sizeof *strides);
        if (off->kind == SG_XA_INT)
            offset = off->i;
    } else if (op == SG_OP_diagonal_scatter || op == SG_OP_diagonal_backward) { /* dim1 and dim2 make one last dimension */
        size_t d1 = 0, d2 = 0;
        int64_t off = arg(c, "offset")->i;
        s = norm_dim(c, arg(c, "dim1")->i, n, &d1);
        if (!s)
            s = norm_dim(c, arg(c, "dim2")->i, n, &d2);
        if (!s && d1 == d2)
            s = sg__err(c->ctx, SG_ESHAPE, "%s: diagonal dimensions cannot be identical %zu, %zu", c->op, d1, d2);
        if (!s) {
            int64_t len = off >= 0 ? sizes[d1] < sizes[d2] - off ? sizes[d1] : sizes[d2] - off
                                   : sizes[d1] + off < sizes[d2] ? sizes[d1] + off : sizes[d2];
            int64_t step = strides[d1] + strides[d2];
            if (len <= 0)
                len = 0;
            else
                offset += off >= 0 ? off * strides[d2] : -off * strides[d1];
            size_t k = 0;
            for (size_t d = 0; d < n; d++)
                if (d != d1 && d != d2) {
                    sizes[k] = sizes[d];
                    strides[k++] = strides[d];
                }
            sizes[k] = len;
            strides[k] = step;
            n = k + 1;
        }
    } else {
        size_t d = 0;
        s = n ? norm_dim(c, arg(c, "dim")->i, n, &d)
              : sg__err(c->ctx, SG_ESHAPE, "%s: cannot be applied to a 0-dim tensor", c->op);
        if (!s && (op == SG_OP_select_scatter || op == SG_OP_select_backward)) {
            int64_t i = arg(c, "index")->i, size = sizes[d];
            if (i < -size || i >= size)
                s = sg__err(c->ctx, SG_ESHAPE, "%s: index %lld out of range for a dimension of size %lld", c->op,
                            (long long)i, (long long)size);
            if (i < 0)
                i += size;
            offset += i * strides[d];
            memmove(sizes + d, sizes + d + 1, (n - d - 1) * sizeof *sizes);
            memmove(strides + d, strides + d + 1, (n - d - 1) * sizeof *strides);
            n--;
        } else if (!s) { /* slice_scatter: slice's clamping */
            const sg__xarg *a0 = arg(c, "start"), *a1 = arg(c, "end"), *st = arg(c, "step");
            int64_t size = sizes[d], step = st->kind == SG_XA_INT ? st->i : 1;
            int64_t b = a0->kind == SG_XA_INT ? a0->i : 0, e = a1->kind == SG_XA_INT ? a1->i : size;
            if (step <= 0)
                s = sg__err(c->ctx, SG_ESHAPE, "%s: slice step must be positive", c->op);
            if (b < 0)
                b += size;
            if (e < 0)
                e += size;
            b = b < 0 ? 0 : b > size ? size : b;
            e = e < 0 ? 0 : e > size ? size : e;
            if (e < b)
                e = b;
            if (!s) {
                offset += b * strides[d];
                sizes[d] = (e - b + step - 1) / step;
                strides[d] *= step;
            }
        }
    }
    if (!s)
        s = scatter_into(c, out, self, src, n, sizes, strides, offset);
    if (s) {
        sg__xt_unref(out);
        return s;
    }
    return finish(c, out, false);
}

/* sym_size.int, sym_stride.int, sym_storage_offset: an int of the layout. */
static sg_status k_sym(sg__xcall *c)
{
    sg__xtensor *self;
    CHAIN(need_tensor(c, "self", &self));
    int64_t x = self->offset;
    if (strcmp(c->s->name, "sym_storage_offset")) {
        const sg__xarg *d = arg(c, "dim");
        int64_t n = self->ndim, k = d->kind == SG_XA_INT ? d->i : 0;
        if (k < -n || k >= n)
            return sg__err(c->ctx, SG_ESHAPE, "%s: dimension %lld out of range", c->op, (long long)k);
        k = k < 0 ? k + n : k;
        x = !strcmp(c->s->name, "sym_size") ? self->sizes[k] : self->strides[k];
    }
    sg__xc_set(c, c->n->out, (sg__xval){.kind = SG_XV_INT, .u.i = x});
    return SG_OK;
}

/* ---- the table ---- */

/* The KERNEL column of the operator table, by row (NULL: none). */
#define k_none NULL
static const sg__xkernel kernels[] = {
#define OP(id, schema, rule, variant, kernel, ...) [SG_OP_##id] = k_##kernel,
#include "graph/ops.def"
#undef OP
};
_Static_assert(sizeof kernels / sizeof *kernels == SG_OP_COUNT, "a kernel slot per row");

sg__xkernel sg__xkernel_find(const sg__schema *s)
{
    return s->op < SG_OP_COUNT ? kernels[s->op] : NULL;
}

int sg__xkernel_overlap(const sg__schema *s)
{
    sg__xkernel k = sg__xkernel_find(s);
    if (!s->written || !k || k == k_view || k == k_fill_ || k == k_create)
        return SG_XOV_NONE;
    const sg__opinfo *info = sg__op_info(s->op);
    return info && info->rule == sg__meta_pointwise ? SG_XOV_ELEMENTWISE : SG_XOV_WHOLE;
}
