/* Shape rules: the helpers every rule uses, and the table from operator
 * names to rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "graph/meta.h"
#include "shapeguard/print.h"

const sg_expr *sg__meta_arg_expr(const sg__mcall *m, const char *name)
{
    int i = sg__schema_arg(m->s, name);
    return i >= 0 && m->a[i].kind == SG_A_EXPR ? m->a[i].u.e : NULL;
}

const sg_expr *sg__meta_rel(sg__mcall *m, sg_rel rel, const sg_expr *a, const sg_expr *b)
{
    sg_ctx *ctx = m->g->ctx;
    if (a && b && a->op == SG_OP_INT && b->op == SG_OP_INT) { /* constants (eager): the answer, nothing made */
        int c = fmpz_cmp(&a->u.val, &b->u.val);
        bool v = rel == SG_REL_EQ ? c == 0 : rel == SG_REL_NE ? c != 0 : rel == SG_REL_LT ? c < 0
               : rel == SG_REL_LE ? c <= 0 : rel == SG_REL_GT ? c > 0 : c >= 0;
        return v ? ctx->t : ctx->f;
    }
    const sg_expr *r; /* the public constructor: its calls are remembered, and a trace asks alike */
    return sg_expr_rel(ctx, &r, rel, a, b) == SG_OK ? r : NULL;
}

static sg_status eval_with(sg__mcall *m, bool *out, const sg_expr *cond, bool oblivious)
{
    if (!cond)
        return sg_ctx_last_error(m->g->ctx) ? sg_ctx_last_error(m->g->ctx) : sg__nomem(m->g->ctx);
    if (cond->op == SG_OP_TRUE || cond->op == SG_OP_FALSE) { /* constant sizes (eager): nothing to ask */
        *out = cond->op == SG_OP_TRUE;
        return SG_OK;
    }
    int r = 0;
    sg_status s = oblivious ? sg_env_guard_size_oblivious(m->env, &r, cond, m->op)
                            : sg_env_evaluate(m->env, &r, cond, m->op);
    *out = r != 0;
    return s;
}

sg_status sg__meta_eval(sg__mcall *m, bool *out, const sg_expr *cond)
{
    return eval_with(m, out, cond, false);
}

sg_status sg__meta_eval_oblivious(sg__mcall *m, bool *out, const sg_expr *cond)
{
    return eval_with(m, out, cond, true);
}

/* "[s0, 3], [3]": the sizes of the tensor arguments, for messages. */
static void put_sizes(sg__mcall *m, sg__buf *b)
{
    bool first = true;
    for (int i = 0; i < m->s->nargs; i++) {
        if (m->a[i].kind != SG_A_VALUE || m->g->vals[m->a[i].u.v].kind != SG_V_TENSOR)
            continue;
        const sg__fake_tensor *t = sg__mt(m, m->a[i].u.v);
        sg__buf_puts(b, first ? "" : ", ");
        sg__buf_puts(b, "[");
        for (uint32_t d = 0; d < t->ndim; d++) {
            char *text = NULL;
            if (sg_print(m->g->ctx, &text, sg__graph_size(m->g, m->a[i].u.v, d), SG_FMT_PYTHON) == SG_OK)
                sg__buf_printf(b, "%s%s", d ? ", " : "", text);
            sg_free(text);
        }
        sg__buf_puts(b, "]");
        first = false;
    }
}

sg_status sg__meta_shape_error(sg__mcall *m, const char *what)
{
    sg__buf b = {.ctx = m->g->ctx};
    put_sizes(m, &b);
    char *sizes = sg__buf_take(&b);
    sg__err(m->g->ctx, SG_ESHAPE, "%s: %s (sizes %s)", m->op, what, sizes ? sizes : "?");
    sg_free(sizes);
    return SG_ESHAPE;
}

sg_status sg__meta_check(sg__mcall *m, const sg_expr *cond, const char *what)
{
    if (!cond)
        return sg__nomem(m->g->ctx);
    sg_truth known;
    sg_status s = sg_env_known(m->env, &known, cond);
    if (s || known == SG_TRUE)
        return s;
    if (known == SG_FALSE)
        return sg__meta_shape_error(m, what);
    size_t nasserts = sg_env_nasserts(m->env);
    s = sg_env_check(m->env, cond, what);
    if (s == SG_EASSERT)
        return sg__meta_shape_error(m, what);
    if (s || sg_env_nasserts(m->env) == nasserts)
        return s;
    if (m->nasserts == sizeof m->asserts / sizeof *m->asserts)
        return sg__err(m->g->ctx, SG_ELIMIT, "%s: too many runtime asserts for one node", m->op);
    m->asserts[m->nasserts++] = cond;
    return SG_OK;
}

sg_status sg__meta_contiguous(sg__mcall *m, const sg_expr **strides, const sg_expr *const *sizes, size_t n)
{
    sg_ctx *ctx = m->g->ctx;
    const sg_expr *acc = ctx->one;
    for (size_t i = n; i-- > 0;) {
        strides[i] = acc;
        const sg_expr *sz = sizes[i];
        sg_truth pos = SG_UNKNOWN;
        if (sz->op == SG_OP_INT) { /* a constant (eager): max(size, 1) at once */
            if (fmpz_cmp_si(&sz->u.val, 1) < 0)
                sz = ctx->one;
            pos = SG_TRUE;
        } else {
            const sg_expr *ge1 = sg__rel(ctx, SG_REL_GE, sz, ctx->one);
            if (!ge1 || sg_env_known(m->env, &pos, ge1))
                return sg_ctx_last_error(ctx);
        }
        if (pos != SG_TRUE) { /* max(size, 1) */
            const sg_expr *both[2] = {sz, ctx->one};
            sz = sg__minmax(ctx, SG_OP_MAX, 2, both);
        }
        acc = sz ? sg__mul(ctx, acc, sz) : NULL;
        if (!acc)
            return sg_ctx_last_error(ctx);
    }
    return SG_OK;
}

sg_status sg__meta_tensor(sg__mcall *m, uint32_t *out, sg_dtype dtype, size_t ndim, const sg_expr *const *sizes,
                          const sg_expr *const *strides, const sg_expr *offset, uint32_t storage)
{
    return sg__graph_tensor(m->g, out, dtype, ndim, sizes, strides, offset, storage);
}

sg_status sg__meta_dim(sg__mcall *m, size_t *out, const sg_expr *dim, size_t ndim)
{
    slong d;
    if (!dim || dim->op != SG_OP_INT || !fmpz_fits_si(&dim->u.val))
        return sg__err(m->g->ctx, SG_EINVAL, "%s: a dimension must be a constant int", m->op);
    d = fmpz_get_si(&dim->u.val);
    slong n = ndim ? (slong)ndim : 1; /* a rank-0 tensor takes -1 and 0 */
    if (d < -n || d >= n) {
        char what[96];
        snprintf(what, sizeof what, "dimension %ld out of range [%ld, %ld]", (long)d, (long)-n, (long)n - 1);
        return sg__meta_shape_error(m, what);
    }
    *out = (size_t)(d < 0 ? d + n : d);
    return SG_OK;
}

const sg_expr *sg__meta_layout_extent(sg_ctx *ctx, size_t n, const sg_expr *const *sizes,
                                      const sg_expr *const *strides, const sg_expr *offset)
{
    const sg_expr *e = sg__add(ctx, offset, ctx->one);
    for (size_t d = 0; d < n && e; d++) {
        if (sizes[d] == ctx->zero)
            return offset;
        const sg_expr *less = sg__sub(ctx, sizes[d], ctx->one);
        const sg_expr *span = less ? sg__mul(ctx, less, strides[d]) : NULL;
        e = span ? sg__add(ctx, e, span) : NULL;
    }
    return e;
}
