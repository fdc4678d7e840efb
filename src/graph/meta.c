/* Shape rules: the helpers every rule uses, and the table from operator
 * names to rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "graph/meta.h"
#include "shapeguard/print.h"
#include "shapeguard/reason.h"

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

/* sg__meta_contiguous over small constant sizes, in int64 (false: a size
 * is no small constant, or a product overflows; nothing written then). */
static bool contiguous_const(sg_ctx *ctx, const sg_expr **strides, const sg_expr *const *sizes, size_t n)
{
    int64_t st[SG_MAX_DIMS], acc = 1;
    if (n > SG_MAX_DIMS)
        return false;
    for (size_t i = n; i-- > 0;) {
        const sg_expr *sz = sizes[i];
        if (sz->op != SG_OP_INT || COEFF_IS_MPZ(sz->u.val))
            return false;
        st[i] = acc;
        if (__builtin_mul_overflow(acc, sz->u.val < 1 ? 1 : (int64_t)sz->u.val, &acc))
            return false;
    }
    for (size_t i = 0; i < n; i++)
        if (!(strides[i] = sg__int_si(ctx, st[i])))
            return false;
    return true;
}

sg_status sg__meta_contiguous(sg__mcall *m, const sg_expr **strides, const sg_expr *const *sizes, size_t n)
{
    sg_ctx *ctx = m->g->ctx;
    if (!m->g->general_rules && contiguous_const(ctx, strides, sizes, n)) /* the same integers, interned */
        return SG_OK;
    const sg_expr *acc = ctx->one;
    for (size_t i = n; i-- > 0;) {
        strides[i] = acc;
        const sg_expr *sz = sizes[i];
        sg_truth pos = SG_UNKNOWN;
        if (sz->op == SG_OP_INT) { /* a constant (eager): max(size, 1) at once */
            if (fmpz_cmp_si(&sz->u.val, 1) < 0)
                sz = ctx->one;
            pos = SG_TRUE;
        } else { /* the remembered constructor: each rule asks this of the same sizes again and again */
            const sg_expr *ge1 = sg__meta_rel(m, SG_REL_GE, sz, ctx->one);
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

/* ---- sizes simplified under the facts ---- */

/* The operations whose value the facts may decide (PyTorch's meta rules
 * compare SymInts in std::max/std::min, and a comparison known statically
 * records no guard; sympy's FloorDiv and Mod fold where their value is
 * plain). Sums, products and powers are left alone: their canonical form
 * is already the simplest. */
static bool foldable(const sg_expr *e)
{
    switch ((sg_op)e->op) {
    case SG_OP_MIN:
    case SG_OP_MAX:
    case SG_OP_FLOORDIV:
    case SG_OP_MOD:
    case SG_OP_CLEANDIV:
    case SG_OP_TRUNCDIV:
    case SG_OP_TRUNCMOD:
    case SG_OP_ABS:
        return true;
    default:
        return false;
    }
}

typedef struct folder {
    sg_ctx *ctx;
    sg_facts *f;
    sg__nodememo memo; /* node -> folded, for this fold */
    sg_status err;
    unsigned depth;    /* (fold_rec) folds of new forms under way */
} folder;

/* Are the free symbols of r among those of e? (A replacement the facts made
 * may bring in a symbol that e did not name: a size keeps the symbols it
 * was made of, the printer shows the replacements.) */
static bool symbols_within(folder *F, const sg_expr *r, const sg_expr *e)
{
    const sg_expr **rs = NULL, **es = NULL;
    size_t nr = 0, ne = 0;
    sg_status s = sg_expr_free_symbols(F->ctx, &rs, &nr, r);
    if (!s)
        s = sg_expr_free_symbols(F->ctx, &es, &ne, e);
    bool ok = !s;
    for (size_t i = 0; i < nr && ok; i++) {
        bool found = false;
        for (size_t j = 0; j < ne && !found; j++)
            found = rs[i] == es[j];
        ok = found;
    }
    sg_free(rs);
    sg_free(es);
    if (s)
        F->err = s;
    return ok;
}

/* Is a >= b known (statically, nothing recorded)? */
static bool known_ge(folder *F, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *q = sg__rel(F->ctx, SG_REL_GE, a, b);
    sg_truth t = SG_UNKNOWN;
    if (!q || (q->op != SG_OP_TRUE && q->op != SG_OP_FALSE && sg_facts_known(F->f, &t, q))) {
        F->err = sg_ctx_last_error(F->ctx) ? sg_ctx_last_error(F->ctx) : SG_ENOMEM;
        return false;
    }
    return q->op == SG_OP_TRUE || t == SG_TRUE;
}

/* Max (Min) without each argument that another one left bounds from above
 * (below): std::max and std::min over SymInts whose order is known. */
static const sg_expr *fold_minmax(folder *F, const sg_expr *e)
{
    const sg_expr *keep[64];
    if (e->nargs > sizeof keep / sizeof *keep)
        return e;
    bool dropped[64] = {false};
    size_t left = 0;
    for (size_t i = 0; i < e->nargs; i++)
        for (size_t j = 0; j < e->nargs && !dropped[i] && !F->err; j++)
            if (j != i && !dropped[j] &&
                (e->op == SG_OP_MAX ? known_ge(F, e->args[j], e->args[i]) : known_ge(F, e->args[i], e->args[j])))
                dropped[i] = true;
    if (F->err)
        return NULL;
    for (size_t i = 0; i < e->nargs; i++)
        if (!dropped[i])
            keep[left++] = e->args[i];
    if (left == e->nargs)
        return e;
    const sg_expr *r = sg__minmax(F->ctx, (sg_op)e->op, left, keep);
    if (!r)
        F->err = sg_ctx_last_error(F->ctx) ? sg_ctx_last_error(F->ctx) : SG_ENOMEM;
    return r;
}

/* One foldable node whose arguments are folded: what the simplifier of the
 * facts makes of it, where that names no other symbols; else Max and Min by
 * the known order of their arguments and the rest by its range (a single
 * value: that value). */
static const sg_expr *fold_node(folder *F, const sg_expr *e)
{
    const sg_expr *r = NULL;
    uint64_t nerr = F->ctx->nerr;
    sg_status s = sg_facts_simplify(F->f, &r, e);
    if (!s && F->ctx->nerr != nerr && F->ctx->err == SG_ENOMEM)
        s = SG_ENOMEM; /* the simplifier answers less when memory runs out: not a fold to keep quiet about */
    if (s == SG_ELIMIT) /* too large to simplify within the context's limits: left as made */
        return e;
    if (s) {
        F->err = s;
        return NULL;
    }
    if (r == e)
        return e;
    if (symbols_within(F, r, e))
        return r;
    if (F->err)
        return NULL;
    if (e->op == SG_OP_MIN || e->op == SG_OP_MAX)
        return fold_minmax(F, e);
    sg_interval iv;
    nerr = F->ctx->nerr;
    if (!(s = sg_facts_range(F->f, &iv, e)) && F->ctx->nerr != nerr && F->ctx->err == SG_ENOMEM)
        s = SG_ENOMEM;
    if (s) {
        F->err = s;
        return NULL;
    }
    if (iv.lo && iv.hi && iv.lo->op == SG_OP_INT && iv.hi->op == SG_OP_INT && fmpz_equal(&iv.lo->u.val, &iv.hi->u.val))
        return iv.lo;
    return e;
}

static const sg_expr *fold_rec(folder *F, const sg_expr *e);

static const sg_expr *fold_arg(void *user, const sg_expr *e)
{
    return fold_rec(user, e);
}

static const sg_expr *fold_rec(folder *F, const sg_expr *e)
{
    if (!e->nargs || e->sort != SG_SORT_INT)
        return e;
    const sg_expr *r = sg__nodememo_get(&F->memo, e);
    if (r)
        return r;
    r = sg__map_args(F->ctx, e, fold_arg, F);
    if (!r) {
        if (!F->err)
            F->err = sg_ctx_last_error(F->ctx) ? sg_ctx_last_error(F->ctx) : SG_ENOMEM;
        return NULL;
    }
    /* an argument folded may make the node another form that holds new nodes to fold (the constructor's
       normal form: s3 // 2 folded in -s3 + (2*s0*(s3 // 2) + 7*s3 + 1) // 8 gives s0 - (4*s0 + s3 + 6) // 8,
       whose FloorDiv the facts decide too): folded again, a few forms deep */
    if (r != e && r->nargs && !foldable(r) && F->depth < 4) {
        F->depth++;
        r = sg__map_args(F->ctx, r, fold_arg, F);
        F->depth--;
        if (!r) {
            if (!F->err)
                F->err = sg_ctx_last_error(F->ctx) ? sg_ctx_last_error(F->ctx) : SG_ENOMEM;
            return NULL;
        }
    }
    /* folding may expose more (Max(Min(a, b), 0) once Min is decided) */
    for (int round = 0; round < 4 && r->nargs && foldable(r); round++) {
        const sg_expr *r2 = fold_node(F, r);
        if (!r2)
            return NULL;
        if (r2 == r)
            break;
        r = r2;
    }
    if (!sg__nodememo_put(F->ctx, &F->memo, e, r)) {
        F->err = sg__nomem(F->ctx);
        return NULL;
    }
    return r;
}

/* Does any of e[0 .. n) have arguments? Constants and symbols (eager
 * calls, most views of inputs) have nothing to decide. */
static bool composite(const sg_expr *const *e, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (e[i]->nargs)
            return true;
    return false;
}

/* Does fold_rec reach a foldable node in e (an integer node with
 * arguments, through such nodes)? Where it does not, it gives e itself.
 * *budget counts the nodes left to look at; past it, the answer is yes. */
static bool reaches_foldable(const sg_expr *e, size_t *budget)
{
    if (!e->nargs || e->sort != SG_SORT_INT)
        return false;
    if (foldable(e) || !*budget)
        return true;
    --*budget;
    for (uint32_t i = 0; i < e->nargs; i++)
        if (reaches_foldable(e->args[i], budget))
            return true;
    return false;
}

/* Fold exprs[0 .. n) in place (nothing to do, and no memo made, where no
 * expression holds a foldable node: s0**2, s0*s1 + 1). */
static sg_status fold_all(sg__mcall *m, const sg_expr **exprs, size_t n)
{
    size_t budget = 64;
    size_t i = 0;
    while (i < n && !reaches_foldable(exprs[i], &budget))
        i++;
    if (i == n)
        return SG_OK;
    folder F = {.ctx = m->g->ctx, .f = sg_env_facts(m->env)};
    if (!F.f)
        return SG_OK;
    for (size_t i = 0; i < n && !F.err; i++) {
        const sg_expr *r = fold_rec(&F, exprs[i]);
        if (r)
            exprs[i] = r;
    }
    sg__nodememo_free(&F.memo);
    return F.err;
}

/* NULL when e is what the facts simplify it to, up to their replacements;
 * else the simplified form (*err set on an error). A form that names a
 * symbol e does not is one the fold leaves to the printer: e is folded
 * then where the fold's other ways (the order of Max's and Min's
 * arguments, a range of one value) decide nothing either. So after
 * s0 -> s1 + 1 and s1 <= 3, s0 // 2 stays: the facts make s1 - 1 of it
 * only through the replacement. */
static const sg_expr *unfolded(sg_env *env, const sg_expr *e, sg_status *err)
{
    const sg_expr *simple = NULL, *replaced = NULL;
    sg_ctx *ctx = sg_env_ctx(env);
    uint64_t nerr = ctx->nerr;
    *err = sg_facts_simplify(sg_env_facts(env), &simple, e);
    if (!*err)
        *err = sg_env_replace(env, &replaced, e);
    if (!*err && ctx->nerr != nerr && ctx->err == SG_ENOMEM)
        *err = SG_ENOMEM; /* a weaker simplification: no verdict */
    if (*err || simple == replaced)
        return NULL;
    folder F = {.ctx = ctx, .f = sg_env_facts(env)};
    const sg_expr *r = fold_node(&F, e);
    sg__nodememo_free(&F.memo);
    if (F.err || !r) {
        *err = F.err ? F.err : SG_ENOMEM;
        return NULL;
    }
    return r == e ? NULL : r;
}

/* The first foldable node of e (innermost first) that is not what the facts
 * simplify it to, up to their replacements, into *at with that form in
 * *simple; *at NULL when there is none. A product or sum the facts would
 * decide (s1*s3 after the guard s1*s3 == 6) is not a decision of a rule:
 * PyTorch keeps it too. */
static sg_status first_unfolded(sg_env *env, const sg_expr *e, const sg_expr **at, const sg_expr **simple)
{
    *at = NULL;
    if (e->sort != SG_SORT_INT)
        return SG_OK;
    for (uint32_t i = 0; i < e->nargs; i++) {
        sg_status s = first_unfolded(env, e->args[i], at, simple);
        if (s || *at)
            return s;
    }
    if (!foldable(e))
        return SG_OK;
    sg_status s;
    if ((*simple = unfolded(env, e, &s)))
        *at = e;
    return s;
}

/* The invariant of folding, checked where the graph asks for it
 * (sg_tracer_lint_sizes; the tool's SG_LINT_SIZES): in each of the
 * expressions of the result (sizes, strides, offset), every Max, Min,
 * FloorDiv, Mod ... is what the facts simplify it to, up to their
 * replacements. SG_EINTERNAL "size lint: ..." naming the first that is
 * not, and both forms. */
static sg_status lint_folded(sg__mcall *m, const sg_expr *const *e, size_t ndim)
{
    if (!m->g->lint_sizes)
        return SG_OK;
    for (size_t k = 0; k <= 2 * ndim; k++) {
        const sg_expr *at, *simple;
        sg_status s = first_unfolded(m->env, e[k], &at, &simple);
        if (s)
            return s;
        if (!at)
            continue;
        char *had = NULL, *want = NULL;
        if (!(s = sg_print(m->g->ctx, &had, at, SG_FMT_PYTHON)) &&
            !(s = sg_print(m->g->ctx, &want, simple, SG_FMT_PYTHON)))
            s = sg__err(m->g->ctx, SG_EINTERNAL, "%s: size lint: %s %zu of the result holds %s, which the facts "
                        "simplify to %s", m->op, k < ndim ? "size" : k < 2 * ndim ? "stride" : "offset",
                        k < ndim ? k : k < 2 * ndim ? k - ndim : 0, had, want);
        sg_free(had);
        sg_free(want);
        return s;
    }
    return SG_OK;
}

sg_status sg__meta_fold(sg__mcall *m, const sg_expr **e)
{
    if (!*e)
        return sg_ctx_last_error(m->g->ctx) ? sg_ctx_last_error(m->g->ctx) : sg__nomem(m->g->ctx);
    return fold_all(m, e, 1);
}

sg_status sg__meta_tensor(sg__mcall *m, uint32_t *out, sg_dtype dtype, size_t ndim, const sg_expr *const *sizes,
                          const sg_expr *const *strides, const sg_expr *offset, uint32_t storage)
{
    if (ndim > SG_MAX_DIMS || !offset)
        return sg__graph_tensor(m->g, out, dtype, ndim, sizes, strides, offset, storage); /* its error */
    if (!composite(sizes, ndim) && !composite(strides, ndim) && !offset->nargs) /* nothing to fold (eager) */
        return sg__graph_tensor(m->g, out, dtype, ndim, sizes, strides, offset, storage);
    const sg_expr *e[2 * SG_MAX_DIMS + 1];
    memcpy(e, sizes, ndim * sizeof *sizes);
    memcpy(e + ndim, strides, ndim * sizeof *strides);
    e[2 * ndim] = offset;
    if (composite(e, 2 * ndim + 1)) {
        CHAIN(fold_all(m, e, 2 * ndim + 1));
        CHAIN(lint_folded(m, e, ndim));
    }
    return sg__graph_tensor(m->g, out, dtype, ndim, e, e + ndim, e[2 * ndim], storage);
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

sg_status sg__meta_grow_storage(sg__mcall *m, uint32_t v)
{
    const sg__fake_tensor *t = sg__mt(m, v);
    const sg_expr *const *e = m->g->exprs + t->dims;
    const sg_expr *reach = sg__meta_layout_extent(m->g->ctx, t->ndim, e, e + t->ndim, t->offset);
    const sg_expr *both[2] = {reach, sg__graph_storage_numel(m->g, t->storage)};
    const sg_expr *grown = reach ? sg__minmax(m->g->ctx, SG_OP_MAX, 2, both) : NULL;
    sg_status s = sg__meta_fold(m, &grown);
    if (!s)
        sg__graph_set_storage_numel(m->g, t->storage, grown);
    return s;
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

