/* exec: running a graph. A run holds a concrete value per graph value and
 * the values of the symbols bound so far (by inputs, and by the
 * data-dependent nodes); it runs a node by evaluating its arguments,
 * calling its kernel (kernels.c) and keeping what the kernel gives. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec_private.h"
#include "expr/expr_private.h"
#include "graph/ops.h"
#include "shapeguard/print.h"

struct sg__xrun {
    sg_ctx *ctx;
    const sg__graph *g;
    sg__xval *vals; /* per graph value */
    size_t nvals, capvals;
    /* bindings: symbol id -> index into bvals (and bsyms) */
    sg__idmap bmap;
    fmpz *bvals;
    const sg_expr **bsyms;
    size_t nb, capb;
    size_t next; /* the node after the last one run */
    /* the release plan (sg__xrun_plan): after node n < nplan runs, the
       tensor values dead[dstart[n] .. dstart[n + 1]) are released */
    uint32_t *dstart, *dead;
    size_t nplan;
    uint32_t *pins, npins; /* values the plan never releases (sg__xrun_pin) */
    char (*opnames)[2 * SG_SCHEMA_NAME]; /* each operator row's full name once made ("" before; NULL: none yet) */
};

static const sg__xval unset = {.kind = SG_XV_UNSET};

sg_status sg__xrun_new(sg_ctx *ctx, const sg__graph *g, sg__xrun **out)
{
    *out = NULL;
    sg__xrun *r = sg__calloc(ctx, 1, sizeof *r);
    if (!r)
        return sg__nomem(ctx);
    r->ctx = ctx;
    r->g = g;
    if (!sg__idmap_init(ctx, &r->bmap, 16)) {
        sg_free(r);
        return sg__nomem(ctx);
    }
    *out = r;
    return SG_OK;
}

static void release(sg__xval *x)
{
    if (x->kind == SG_XV_TENSOR)
        sg__xt_unref(x->u.t);
    x->kind = SG_XV_UNSET;
}

void sg__xrun_free(sg__xrun *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nvals; i++)
        release(&r->vals[i]);
    sg_free(r->vals);
    for (size_t i = 0; i < r->nb; i++)
        fmpz_clear(r->bvals + i);
    sg_free(r->bvals);
    sg_free(r->bsyms);
    sg__idmap_free(&r->bmap);
    sg_free(r->dstart);
    sg_free(r->dead);
    sg_free(r->pins);
    sg_free(r->opnames);
    sg_free(r);
}

void sg__xrun_reserve(sg__xrun *r, size_t vals)
{
    (void)sg__grow(r->ctx, (void **)&r->vals, &r->capvals, vals, sizeof *r->vals);
}

void sg__xrun_release(sg__xrun *r, uint32_t v)
{
    if (v < r->nvals)
        release(&r->vals[v]);
}

/* ---- the release plan ---- */

/* v (and, for a list, each of its elements) is used by node n. */
static void use_at(const sg__graph *g, uint32_t *last, uint32_t v, uint32_t n)
{
    if (v >= g->nvals)
        return;
    if (last[v] == SG_NOVAL || last[v] < n)
        last[v] = n;
    if (g->vals[v].kind == SG_V_LIST)
        for (uint32_t i = 0; i < g->vals[v].u.list.n; i++) {
            uint32_t e = g->ids[g->vals[v].u.list.off + i];
            if (e < g->nvals && (last[e] == SG_NOVAL || last[e] < n))
                last[e] = n; /* lists hold tensors, not lists */
        }
}

/* v (and a list's elements) is used by node n from now on: n is its last use. */
static void use_last(const sg__graph *g, uint32_t *last, uint32_t v, uint32_t n)
{
    if (v >= g->nvals)
        return;
    last[v] = n;
    if (g->vals[v].kind == SG_V_LIST)
        for (uint32_t i = 0; i < g->vals[v].u.list.n; i++) {
            uint32_t e = g->ids[g->vals[v].u.list.off + i];
            if (e < g->nvals)
                last[e] = n;
        }
}

sg_status sg__xrun_pin(sg__xrun *r, uint32_t v)
{
    uint32_t *grown = sg__realloc(r->ctx, r->pins, ((size_t)r->npins + 1) * sizeof *grown);
    if (!grown)
        return sg__nomem(r->ctx);
    r->pins = grown;
    r->pins[r->npins++] = v;
    return SG_OK;
}

sg_status sg__xrun_plan(sg__xrun *r)
{
    const sg__graph *g = r->g;
    if (r->nplan || !g->nscopes || g->scopes[0].output == SG_NOVAL || !g->nnodes)
        return SG_OK;
    size_t nv = g->nvals, nn = g->nnodes;
    uint32_t *last = sg__malloc(r->ctx, (nv ? nv : 1) * sizeof *last);
    uint32_t *owner = sg__malloc(r->ctx, (g->nscopes ? g->nscopes : 1) * sizeof *owner); /* scope -> its cond */
    uint32_t *dstart = sg__calloc(r->ctx, nn + 1, sizeof *dstart);
    if (!last || !owner || !dstart) {
        sg_free(last);
        sg_free(owner);
        sg_free(dstart);
        return sg__nomem(r->ctx);
    }
    /* the last use of every value: its own node, then each node that takes it */
    for (size_t v = 0; v < nv; v++)
        last[v] = g->vals[v].node;
    for (size_t s = 0; s < g->nscopes; s++)
        owner[s] = SG_NOVAL;
    for (uint32_t n = 0; n < nn; n++) {
        const sg__gnode *nd = &g->nodes[n];
        for (uint32_t k = 0; k < nd->nargs; k++) {
            const sg__garg *ga = &g->args[nd->args + k];
            if (ga->kind == SG_A_VALUE)
                use_at(g, last, ga->u.v, n);
            else if (ga->kind == SG_A_VALUES)
                for (uint32_t j = 0; j < ga->u.list.n; j++)
                    use_at(g, last, g->ids[ga->u.list.off + j], n);
            else if (ga->kind == SG_A_SCOPE && nd->kind == SG_N_COND && ga->u.v < g->nscopes)
                owner[ga->u.v] = n;
        }
    }
    /* what a branch returns is read by its cond once the branch ran: it dies there */
    for (uint32_t s = 1; s < g->nscopes; s++) {
        uint32_t o = g->scopes[s].output;
        if (o == SG_NOVAL || owner[s] == SG_NOVAL)
            continue;
        for (uint32_t k = 0; k < g->nodes[o].nargs; k++)
            if (g->args[g->nodes[o].args + k].kind == SG_A_VALUE)
                use_last(g, last, g->args[g->nodes[o].args + k].u.v, owner[s]);
    }
    for (uint32_t i = 0; i < r->npins; i++) /* what the caller reads after the run */
        if (r->pins[i] < nv)
            use_last(g, last, r->pins[i], SG_NOVAL);
    /* never released: what the run gives back (the root's outputs, its
       inputs, and every later version of an input tensor, which is what
       the caller reads of an input an operator wrote) */
    const sg__gnode *out = &g->nodes[g->scopes[0].output];
    for (uint32_t k = 0; k < out->nargs; k++)
        if (g->args[out->args + k].kind == SG_A_VALUE)
            use_last(g, last, g->args[out->args + k].u.v, SG_NOVAL);
    uint8_t *input = sg__calloc(r->ctx, nv ? nv : 1, 1); /* an input tensor, or a later version of one */
    if (!input) {
        sg_free(last);
        sg_free(owner);
        sg_free(dstart);
        return sg__nomem(r->ctx);
    }
    for (uint32_t i = 0; i < g->scopes[0].nphs; i++) {
        uint32_t v = g->nodes[g->scopes[0].phs[i]].out;
        use_last(g, last, v, SG_NOVAL);
        if (v < nv)
            input[v] = 1;
    }
    for (uint32_t v = 0; v < nv; v++) {
        if (g->vals[v].kind != SG_V_TENSOR || input[v])
            continue;
        uint32_t u = sg__graph_updates(g, v);
        if (u < v && input[u]) { /* u < v: the write came after */
            input[v] = 1;
            last[v] = SG_NOVAL;
        }
    }
    sg_free(input);
    /* the dead lists, by node */
    size_t ndead = 0;
    for (size_t v = 0; v < nv; v++)
        if (g->vals[v].kind == SG_V_TENSOR && last[v] != SG_NOVAL && last[v] < nn) {
            dstart[last[v] + 1]++;
            ndead++;
        }
    for (size_t n = 0; n < nn; n++)
        dstart[n + 1] += dstart[n];
    uint32_t *dead = sg__malloc(r->ctx, (ndead ? ndead : 1) * sizeof *dead);
    if (!dead) {
        sg_free(last);
        sg_free(owner);
        sg_free(dstart);
        return sg__nomem(r->ctx);
    }
    uint32_t *at = sg__malloc(r->ctx, (nn ? nn : 1) * sizeof *at);
    if (!at) {
        sg_free(last);
        sg_free(owner);
        sg_free(dstart);
        sg_free(dead);
        return sg__nomem(r->ctx);
    }
    memcpy(at, dstart, nn * sizeof *at);
    for (uint32_t v = 0; v < nv; v++)
        if (g->vals[v].kind == SG_V_TENSOR && last[v] != SG_NOVAL && last[v] < nn)
            dead[at[last[v]]++] = v;
    sg_free(at);
    sg_free(last);
    sg_free(owner);
    r->dstart = dstart;
    r->dead = dead;
    r->nplan = nn;
    return SG_OK;
}

/* Release the values that die at node n (the plan's). */
static void release_dead(sg__xrun *r, uint32_t n)
{
    for (uint32_t i = r->dstart[n]; i < r->dstart[n + 1]; i++)
        if (r->dead[i] < r->nvals)
            release(&r->vals[r->dead[i]]);
}

/* Room in the value table for every value of the graph (it may have grown). */
static sg_status grow_vals(sg__xrun *r)
{
    size_t n = r->g->nvals;
    if (n <= r->nvals)
        return SG_OK;
    /* doubling: an eager run grows the graph a value at a time */
    if (n > r->capvals && !sg__grow(r->ctx, (void **)&r->vals, &r->capvals, n, sizeof *r->vals))
        return sg__nomem(r->ctx);
    for (size_t i = r->nvals; i < n; i++)
        r->vals[i].kind = SG_XV_UNSET; /* the kind alone: what every reader looks at first */
    r->nvals = n;
    return SG_OK;
}

const sg__xval *sg__xrun_value(const sg__xrun *r, uint32_t v)
{
    return v < r->nvals ? &r->vals[v] : &unset;
}

/* ---- bindings and evaluation ---- */

int sg__xrun_sym(const sg__xrun *r, const sg_expr *sym, int64_t *out)
{
    size_t *i = sg__idmap_find(&r->bmap, sym->id);
    if (!i)
        return 0;
    *out = fmpz_get_si(r->bvals + *i); /* bound values are int64 */
    return 1;
}

/* Bind sym to val (a new binding, or a new value for it). Errors: SG_ENOMEM. */
static sg_status bind(sg__xrun *r, const sg_expr *sym, int64_t val)
{
    size_t *i = sg__idmap_find(&r->bmap, sym->id);
    if (i) {
        fmpz_set_si(r->bvals + *i, val);
        return SG_OK;
    }
    if (r->nb == r->capb) {
        size_t cap = r->capb ? 2 * r->capb : 16;
        fmpz *v = sg__realloc(r->ctx, r->bvals, cap * sizeof *v);
        if (!v)
            return sg__nomem(r->ctx);
        r->bvals = v;
        const sg_expr **s = sg__realloc(r->ctx, r->bsyms, cap * sizeof *s);
        if (!s)
            return sg__nomem(r->ctx);
        r->bsyms = s;
        r->capb = cap;
    }
    if (!sg__idmap_put(&r->bmap, sym->id, r->nb))
        return sg__nomem(r->ctx);
    fmpz_init_set_si(r->bvals + r->nb, val);
    r->bsyms[r->nb++] = sym;
    return SG_OK;
}

sg_status sg__xrun_bind_all(sg__xrun *r, const sg__xrun *from)
{
    for (size_t i = 0; i < from->nb; i++)
        CHAIN(bind(r, from->bsyms[i], fmpz_get_si(from->bvals + i)));
    return SG_OK;
}

/* Drop the bindings made after the first mark of them (an input that did
 * not fit). The map is rebuilt in place: it never needs to grow. */
static void unbind_after(sg__xrun *r, size_t mark)
{
    if (r->nb == mark)
        return;
    for (size_t i = mark; i < r->nb; i++)
        fmpz_clear(r->bvals + i);
    r->nb = mark;
    sg__idmap_reset(&r->bmap);
    for (size_t i = 0; i < r->nb; i++)
        sg__idmap_put(&r->bmap, r->bsyms[i]->id, i);
}

/* An expression printed for a message ("?" when memory runs out). */
static char *show(sg_ctx *ctx, const sg_expr *e)
{
    char *t = NULL;
    if (sg_print(ctx, &t, e, SG_FMT_SG) != SG_OK)
        t = NULL;
    return t;
}

sg_status sg__xrun_eval(sg__xrun *r, const sg_expr *e, int64_t *out)
{
    sg_ctx *ctx = r->ctx;
    if (e->op == SG_OP_INT && !COEFF_IS_MPZ(e->u.val)) { /* a small constant (every size of an eager run): as it is */
        *out = e->u.val;
        return SG_OK;
    }
    if (e->op == SG_OP_INT && fmpz_fits_si(&e->u.val)) {
        *out = fmpz_get_si(&e->u.val);
        return SG_OK;
    }
    if (e->op == SG_OP_TRUE || e->op == SG_OP_FALSE) {
        *out = e->op == SG_OP_TRUE;
        return SG_OK;
    }
    if (e->op == SG_OP_SYM && sg__xrun_sym(r, e, out))
        return SG_OK;
    fmpz_t v;
    fmpz_init(v);
    sg_status s = sg__eval_fmpz(v, e, &r->bmap, r->bvals, 256);
    if (!s && !fmpz_fits_si(v))
        s = SG_ELIMIT;
    if (!s)
        *out = fmpz_get_si(v);
    fmpz_clear(v);
    if (!s)
        return SG_OK;
    if (s == SG_ENOMEM)
        return sg__nomem(ctx);
    char *text = show(ctx, e);
    const char *why = s == SG_EZERODIV   ? "a division by zero"
                    : s == SG_ELIMIT     ? "a value beyond int64"
                    : s == SG_ENEGEXP    ? "a negative exponent"
                    : s == SG_EINEXACT   ? "an inexact division"
                    : s == SG_EUNBOUND   ? "a symbol without a value"
                                         : "an error";
    if (s == SG_EUNBOUND) { /* name the symbol */
        const sg_expr **syms = NULL;
        size_t n = 0;
        if (sg_expr_free_symbols(ctx, &syms, &n, e) == SG_OK)
            for (size_t i = 0; i < n; i++)
                if (!sg__idmap_find(&r->bmap, syms[i]->id)) {
                    sg__err(ctx, s, "cannot evaluate %s: symbol %s has no value", text ? text : "?",
                            sg_expr_sym_name(syms[i]));
                    sg_free(syms);
                    sg_free(text);
                    return s;
                }
        sg_free(syms);
    }
    sg__err(ctx, s, "cannot evaluate %s: %s", text ? text : "?", why);
    sg_free(text);
    return s;
}

/* ---- inputs ---- */

static const char *vname(const sg__graph *g, uint32_t v)
{
    return g->vals[v].name[0] ? g->vals[v].name : "?";
}

/* Bind e to val where e is a bare symbol without a value. */
static sg_status bind_bare(sg__xrun *r, const sg_expr *e, int64_t val)
{
    int64_t old;
    if (e->op != SG_OP_SYM || sg__xrun_sym(r, e, &old))
        return SG_OK;
    return bind(r, e, val);
}

/* e must evaluate to val: SG_ESHAPE otherwise, naming what (part: 0 a
 * size, 1 a stride, of dimension d; 2 the storage offset; 3 an int's
 * value; plus EXPECT_BASE: of the hidden base of input v), the text made
 * only then. */
#define EXPECT_BASE 8
static sg_status expect(sg__xrun *r, uint32_t v, const sg_expr *e, int64_t val, int part, uint32_t d)
{
    int64_t got;
    sg_status s = sg__xrun_eval(r, e, &got);
    if (s || got == val)
        return s;
    const char *of = part & EXPECT_BASE ? " (its hidden base)" : "";
    part &= ~EXPECT_BASE;
    char what[64];
    if (part < 2)
        snprintf(what, sizeof what, "the %s of dimension %u", part ? "stride" : "size", d);
    else
        snprintf(what, sizeof what, "%s", part == 2 ? "the storage offset" : "the value");
    char *text = show(r->ctx, e);
    sg__err(r->ctx, SG_ESHAPE, "input %s%s: %s is %lld, but the graph expects %lld (%s)", vname(r->g, v), of, what,
            (long long)val, (long long)got, text ? text : "?");
    sg_free(text);
    return SG_ESHAPE;
}

/* The layout of tensor value lv (input v's, or its hidden base's: base
 * EXPECT_BASE, else 0) takes t's: bare symbols bound, every expression
 * checked. */
static sg_status input_layout(sg__xrun *r, uint32_t v, uint32_t lv, const sg__xtensor *t, int base)
{
    const sg__graph *g = r->g;
    const sg__fake_tensor *f = &g->vals[lv].u.t;
    const char *of = base ? " (its hidden base)" : "";
    if (t->ndim != f->ndim)
        return sg__err(r->ctx, SG_ESHAPE, "input %s%s: %u dimensions, but the graph expects %u", vname(g, v), of,
                       t->ndim, f->ndim);
    if (t->dtype != f->dtype)
        return sg__err(r->ctx, SG_EINVAL, "input %s%s: dtype %s, but the graph expects %s", vname(g, v), of,
                       sg__dtype_name((sg_dtype)t->dtype), sg__dtype_name((sg_dtype)f->dtype));
    sg_status s = SG_OK;
    for (uint32_t d = 0; d < f->ndim && !s; d++)
        s = bind_bare(r, sg__graph_size(g, lv, d), t->sizes[d]);
    for (uint32_t d = 0; d < f->ndim && !s; d++)
        s = bind_bare(r, sg__graph_stride(g, lv, d), t->strides[d]);
    if (!s)
        s = bind_bare(r, f->offset, t->offset);
    bool empty = false;
    for (uint32_t d = 0; d < f->ndim && !s; d++) {
        s = expect(r, v, sg__graph_size(g, lv, d), t->sizes[d], base | 0, d);
        empty |= t->sizes[d] == 0;
    }
    if (empty) /* (a tensor of no element addresses nothing: kernels lay such results out as they will, a
                  saved one of the forward's run included, whose strides the graph's rules may not say) */
        return s;
    for (uint32_t d = 0; d < f->ndim && !s; d++)
        s = expect(r, v, sg__graph_stride(g, lv, d), t->strides[d], base | 1, d);
    if (!s)
        s = expect(r, v, f->offset, t->offset, base | 2, 0);
    return s;
}

static sg_status input_tensor(sg__xrun *r, uint32_t v, sg__xtensor *t)
{
    return input_layout(r, v, v, t, 0);
}

sg_status sg__xrun_input_base(sg__xrun *r, uint32_t v, const sg__xtensor *base)
{
    uint32_t b = v < r->g->nvals ? sg__graph_hidden_base(r->g, v) : SG_NOVAL;
    if (b == SG_NOVAL)
        return SG_OK;
    size_t mark = r->nb;
    sg_status s = input_layout(r, v, b, base, EXPECT_BASE);
    if (s)
        unbind_after(r, mark);
    return s;
}

/* sg__xrun_input, checked (check) or not. */
static sg_status input(sg__xrun *r, uint32_t v, const sg__xval *x, bool check)
{
    const sg__graph *g = r->g;
    if (!x || v >= g->nvals || g->vals[v].node == SG_NOVAL || g->nodes[g->vals[v].node].kind != SG_N_PLACEHOLDER)
        return sg__err(r->ctx, SG_EINVAL, "run input: value %u is not a placeholder", v);
    sg_status s = grow_vals(r);
    if (s)
        return s;
    const sg__gval *gv = &g->vals[v];
    size_t mark = r->nb;
    if (!check) {
        if ((gv->kind == SG_V_TENSOR) != (x->kind == SG_XV_TENSOR))
            return sg__err(r->ctx, SG_EINVAL, "run input %s: a value of another kind than the placeholder's",
                           vname(g, v));
    } else if (gv->kind == SG_V_TENSOR && x->kind == SG_XV_TENSOR) {
        s = input_tensor(r, v, x->u.t);
    } else if (gv->kind == SG_V_SYMINT && x->kind == SG_XV_INT) {
        s = bind_bare(r, gv->u.e, x->u.i);
        if (!s)
            s = expect(r, v, gv->u.e, x->u.i, 3, 0);
    } else if (gv->kind == SG_V_SYMBOOL && x->kind == SG_XV_BOOL) {
        s = expect(r, v, gv->u.e, x->u.b, 3, 0);
    } else if ((gv->kind == SG_V_FLOAT && x->kind == SG_XV_FLOAT) || (gv->kind == SG_V_NONE && x->kind == SG_XV_NONE)) {
        s = SG_OK;
    } else {
        return sg__err(r->ctx, SG_EINVAL, "run input %s: a value of another kind than the placeholder's",
                       vname(g, v));
    }
    if (s) {
        unbind_after(r, mark);
        return s;
    }
    if (x->kind == SG_XV_TENSOR) /* before the old value goes: it may be the same tensor */
        sg__xt_ref(x->u.t);
    release(&r->vals[v]);
    r->vals[v] = *x;
    return SG_OK;
}

sg_status sg__xrun_input(sg__xrun *r, uint32_t v, const sg__xval *x)
{
    return input(r, v, x, true);
}

sg_status sg__xrun_input_bound(sg__xrun *r, uint32_t v, const sg__xval *x)
{
    return input(r, v, x, false);
}

sg_status sg__xrun_fresh_version(sg__xrun *r, uint32_t v)
{
    if (v >= r->nvals || r->vals[v].kind != SG_XV_TENSOR)
        return sg__err(r->ctx, SG_EINVAL, "fresh version: value %u is not a tensor that ran", v);
    sg__xtensor *t = r->vals[v].u.t, *n;
    sg_status s = sg__xt_view(r->ctx, &n, t->st, NULL, t->ndim, t->sizes, t->strides, t->offset);
    if (s)
        return s;
    n->requires_grad = t->requires_grad;
    sg__xt_unref(t);
    r->vals[v].u.t = n;
    return SG_OK;
}

/* ---- the services of exec_private.h ---- */

sg_status sg__xc_eval(sg__xcall *c, const sg_expr *e, int64_t *out)
{
    return sg__xrun_eval(c->r, e, out);
}

void sg__xc_set(sg__xcall *c, uint32_t v, sg__xval x)
{
    release(&c->r->vals[v]);
    c->r->vals[v] = x;
}

sg_status sg__xc_bind(sg__xcall *c, size_t i, int64_t val)
{
    if (i >= c->n->nbinds)
        return sg__err(c->ctx, SG_EINTERNAL, "%s: the node binds %u symbols, not %zu", c->op, c->n->nbinds, i + 1);
    return bind(c->r, c->g->exprs[c->n->binds + i], val);
}

/* The error s of laying out or allocating a result of c, its message
 * prefixed with the operator ("zeros: a layout whose positions overflow
 * int64"); SG_ENOMEM is left as it is. */
static sg_status output_error(sg__xcall *c, sg_status s)
{
    if (s == SG_ENOMEM || c->ctx->err != s)
        return s;
    char msg[sizeof c->ctx->msg];
    memcpy(msg, c->ctx->msg, sizeof msg);
    return sg__err(c->ctx, s, "%s: %s", c->op, msg);
}

/* sg__xrun_eval, a small constant (every size of an eager run) read in place. */
static inline sg_status eval_quick(sg__xrun *r, const sg_expr *e, int64_t *out)
{
    if (e->op == SG_OP_INT && !COEFF_IS_MPZ(e->u.val)) {
        *out = e->u.val;
        return SG_OK;
    }
    return sg__xrun_eval(r, e, out);
}

sg_status sg__xc_output(sg__xcall *c, uint32_t v, sg__xtensor **out)
{
    *out = NULL;
    const sg__graph *g = c->g;
    const sg__fake_tensor *f = &g->vals[v].u.t;
    int64_t sizes[SG_MAX_DIMS], strides[SG_MAX_DIMS], offset;
    sg_status s = SG_OK;
    const sg_expr *const *e = g->exprs + f->dims;
    uint32_t nd = f->ndim;
    for (uint32_t d = 0; d < nd && !s; d++)
        s = eval_quick(c->r, e[d], &sizes[d]);
    for (uint32_t d = 0; d < nd && !s; d++)
        s = eval_quick(c->r, e[nd + d], &strides[d]);
    if (!s)
        s = eval_quick(c->r, f->offset, &offset);
    if (s)
        return output_error(c, s);
    if (c->n->flags & SG_NODE_OUT_LAYOUT) /* resize_output at run time: an out of the result's sizes keeps its layout */
        for (int i = 0; i < c->s->nargs; i++) {
            const sg__xtensor *o = c->a[i].t;
            if (c->a[i].kind != SG_XA_TENSOR || !((c->s->written >> i) & 1u) || o->ndim != f->ndim)
                continue;
            bool same = true;
            for (uint32_t d = 0; d < f->ndim; d++)
                same &= o->sizes[d] == sizes[d];
            if (same)
                memcpy(strides, o->strides, f->ndim * sizeof *strides);
        }
    int64_t lo, hi;
    if ((s = sg__xlayout_extent(c->ctx, f->ndim, sizes, strides, offset, &lo, &hi)))
        return output_error(c, s);
    if (lo < 0 || offset < 0)
        return sg__err(c->ctx, SG_ESHAPE, "%s: a result laid out before the start of its storage", c->op);
    int64_t numel = 1; /* kernels count elements in int64 */
    for (uint32_t d = 0; d < f->ndim; d++)
        if (__builtin_mul_overflow(numel, sizes[d], &numel))
            return sg__err(c->ctx, SG_ELIMIT, "%s: a result of more elements than int64 counts", c->op);
    /* the argument whose version counter it shares: the written one it returns (in-place, out=, set_) */
    sg__xtensor *from = NULL, *ver = NULL;
    bool grow = false;
    for (int i = 0; i < c->s->nargs && !ver && c->s->written; i++)
        if (c->a[i].kind == SG_XA_TENSOR && ((c->s->written >> i) & 1u) && c->s->ret_alias[0] == i)
            ver = c->a[i].t;
    /* find by fake storage id, over the node's arguments as the graph has them */
    const sg__gnode *n = c->n;
    for (uint32_t k = 0; k < n->nargs && !from; k++) {
        const sg__garg *ga = &g->args[n->args + k];
        if (ga->kind == SG_A_VALUE && ga->u.v < g->nvals && g->vals[ga->u.v].kind == SG_V_TENSOR &&
            g->vals[ga->u.v].u.t.storage == f->storage && c->r->vals[ga->u.v].kind == SG_XV_TENSOR) {
            from = c->r->vals[ga->u.v].u.t;
            grow = ver && ver->st == from->st;
        }
        for (uint32_t j = 0; ga->kind == SG_A_VALUES && j < ga->u.list.n && !from; j++) {
            uint32_t x = g->ids[ga->u.list.off + j];
            if (g->vals[x].kind == SG_V_TENSOR && g->vals[x].u.t.storage == f->storage &&
                c->r->vals[x].kind == SG_XV_TENSOR)
                from = c->r->vals[x].u.t;
        }
    }
    sg__xstorage *st;
    if (from) {
        st = from->st;
        if (hi > st->numel) {
            if (!grow)
                return sg__err(c->ctx, SG_ESHAPE,
                               "%s: the result reaches element %lld of a storage of %lld elements", c->op,
                               (long long)hi - 1, (long long)st->numel);
            if ((s = sg__xst_grow(c->ctx, st, hi)))
                return s;
        }
        if (!ver && (c->s->flags & SG_OPF_VIEW) && !(c->n->flags & SG_NODE_DATA))
            ver = from; /* a view shares its source's counter; `.data` (a flagged detach) has its own */
        st->refs++;
    } else {
        if ((s = sg__xst_new(c->ctx, &st, (sg_dtype)f->dtype, hi)))
            return output_error(c, s);
        ver = NULL; /* a new storage: a fresh counter, even for a written argument's result */
    }
    if (st->dtype != f->dtype) {
        sg__xst_unref(st);
        return sg__err(c->ctx, SG_EINTERNAL, "%s: a result of dtype %s on a storage of %s", c->op,
                       sg__dtype_name((sg_dtype)f->dtype), sg__dtype_name((sg_dtype)st->dtype));
    }
    s = sg__xt_view_reaching(c->ctx, out, st, ver ? ver->ver : NULL, f->ndim, sizes, strides, offset, lo, hi);
    sg__xst_unref(st);
    if (!s)
        (*out)->requires_grad = f->requires_grad;
    return s;
}

/* ---- running a node ---- */

/* The concrete value of graph value v used as an argument: its run value,
 * or, for a value no node gives (a constant int made by the tracer), its
 * own. */
static sg_status arg_value(sg__xrun *r, uint32_t v, sg__xval *out)
{
    const sg__graph *g = r->g;
    if (v >= g->nvals)
        return sg__err(r->ctx, SG_EINTERNAL, "run: an argument of unknown value %u", v);
    if (v < r->nvals && r->vals[v].kind != SG_XV_UNSET) {
        *out = r->vals[v];
        return SG_OK;
    }
    const sg__gval *gv = &g->vals[v];
    switch ((sg__vkind)gv->kind) {
    case SG_V_SYMINT:
    case SG_V_SYMBOOL: {
        int64_t x;
        sg_status s = sg__xrun_eval(r, gv->u.e, &x);
        if (s)
            return s;
        if (gv->kind == SG_V_SYMINT)
            *out = (sg__xval){.kind = SG_XV_INT, .u.i = x};
        else
            *out = (sg__xval){.kind = SG_XV_BOOL, .u.b = x != 0};
        return SG_OK;
    }
    case SG_V_FLOAT: *out = (sg__xval){.kind = SG_XV_FLOAT, .u.f = gv->u.f}; return SG_OK;
    case SG_V_NONE: *out = (sg__xval){.kind = SG_XV_NONE}; return SG_OK;
    default:
        return sg__err(r->ctx, SG_EUNBOUND, "run: value %s has no concrete value (its node did not run)",
                       vname(g, v));
    }
}

/* A schema default as written ("None", "True", "[]", "1", "0.5"). */
static sg_status default_arg(sg__xcall *c, int i)
{
    const sg__sarg *sa = &c->s->args[i];
    sg__xarg *a = &c->a[i];
    memset(a, 0, sizeof *a);
    if (!sa->has_def) {
        if (sa->type.optional)
            return SG_OK;
        return sg__err(c->ctx, SG_EINTERNAL, "%s: argument %s missing from the node", c->op, sa->name);
    }
    const char *d = sa->def;
    if (sa->type.base != SG_TY_FLOAT && sa->type.base != SG_TY_MEMORYFORMAT && d[0] >= '0' && d[0] <= '9' &&
        !d[1]) { /* one digit ("1": add's alpha): no strtoll */
        a->kind = SG_XA_INT;
        a->i = d[0] - '0';
        return SG_OK;
    }
    if (d[0] == 'N' && !strcmp(d, "None"))
        return SG_OK;
    if ((d[0] == 'T' && !strcmp(d, "True")) || (d[0] == 'F' && !strcmp(d, "False"))) {
        a->kind = SG_XA_BOOL;
        a->b = d[0] == 'T';
        return SG_OK;
    }
    if (!strcmp(d, "[]")) {
        a->kind = SG_XA_INTS;
        a->ints = c->ibuf[i];
        return SG_OK;
    }
    char *end;
    if (sa->type.base == SG_TY_FLOAT) {
        a->kind = SG_XA_FLOAT;
        a->f = strtod(d, &end);
    } else {
        a->kind = sa->type.base == SG_TY_MEMORYFORMAT ? SG_XA_MEMFMT : SG_XA_INT;
        a->i = strtoll(d, &end, 10);
    }
    if (*end)
        return sg__err(c->ctx, SG_EINTERNAL, "%s: a default the run cannot read: %s", c->op, d);
    return SG_OK;
}

static sg_status load_arg(sg__xcall *c, int i, const sg__garg *ga, sg__xtensor ***lists)
{
    sg__xrun *r = c->r;
    const sg__graph *g = c->g;
    sg__xarg *a = &c->a[i];
    memset(a, 0, sizeof *a);
    a->given = true;
    sg_status s = SG_OK;
    switch ((sg__akind)ga->kind) {
    case SG_A_VALUE: {
        sg__xval x;
        if ((s = arg_value(r, ga->u.v, &x)))
            return s;
        switch ((sg__xvkind)x.kind) {
        case SG_XV_TENSOR: a->kind = SG_XA_TENSOR; a->t = x.u.t; break;
        case SG_XV_INT: a->kind = SG_XA_INT; a->i = x.u.i; break;
        case SG_XV_BOOL: a->kind = SG_XA_BOOL; a->b = x.u.b; break;
        case SG_XV_FLOAT: a->kind = SG_XA_FLOAT; a->f = x.u.f; break;
        case SG_XV_NONE: a->kind = SG_XA_NONE; break;
        default: return sg__err(c->ctx, SG_EINTERNAL, "%s: a list where an argument is expected", c->op);
        }
        return SG_OK;
    }
    case SG_A_EXPR: {
        int64_t x;
        if ((s = sg__xrun_eval(r, ga->u.e, &x)))
            return s;
        if (sg_expr_sort(ga->u.e) == SG_SORT_BOOL) {
            a->kind = SG_XA_BOOL;
            a->b = x != 0;
        } else {
            a->kind = SG_XA_INT;
            a->i = x;
        }
        return SG_OK;
    }
    case SG_A_SCOPE: return sg__err(c->ctx, SG_EINTERNAL, "%s: a subgraph where a call's argument is expected", c->op);
    case SG_A_FLOAT: a->kind = SG_XA_FLOAT; a->f = ga->u.f; return SG_OK;
    case SG_A_BOOL: a->kind = SG_XA_BOOL; a->b = ga->u.b; return SG_OK;
    case SG_A_NONE: a->kind = SG_XA_NONE; return SG_OK;
    case SG_A_DTYPE: a->kind = SG_XA_DTYPE; a->i = ga->u.dtype; return SG_OK;
    case SG_A_MEMFMT: a->kind = SG_XA_MEMFMT; a->i = ga->u.dtype; return SG_OK;
    case SG_A_EXPRS:
        if (ga->u.list.n > SG_MAX_DIMS)
            return sg__err(c->ctx, SG_ELIMIT, "%s: a list of more than %d ints", c->op, SG_MAX_DIMS);
        a->kind = SG_XA_INTS;
        a->n = ga->u.list.n;
        a->ints = c->ibuf[i];
        for (uint32_t k = 0; k < a->n && !s; k++)
            s = sg__xrun_eval(r, g->exprs[ga->u.list.off + k], &a->ints[k]);
        return s;
    case SG_A_VALUES: {
        a->kind = SG_XA_TENSORS;
        a->n = ga->u.list.n;
        if (!c->lists) {
            memset(lists, 0, SG_SCHEMA_ARGS * sizeof *lists);
            c->lists = true;
        }
        a->ts = sg__malloc(c->ctx, (a->n ? a->n : 1) * sizeof *a->ts);
        if (!a->ts)
            return sg__nomem(c->ctx);
        lists[i] = a->ts;
        for (uint32_t k = 0; k < a->n; k++) {
            sg__xval x;
            if ((s = arg_value(r, g->ids[ga->u.list.off + k], &x)))
                return s;
            if (x.kind != SG_XV_TENSOR)
                return sg__err(c->ctx, SG_EINTERNAL, "%s: a list entry that is not a tensor", c->op);
            a->ts[k] = x.u.t;
        }
        return SG_OK;
    }
    }
    return sg__err(c->ctx, SG_EINTERNAL, "%s: an argument of unknown kind", c->op);
}

/* Every value the node gives: its output and, for a list, the list's elements. */
static void unset_outputs(sg__xrun *r, uint32_t v)
{
    if (v == SG_NOVAL || v >= r->nvals)
        return;
    release(&r->vals[v]);
    const sg__gval *gv = &r->g->vals[v];
    if (gv->kind == SG_V_LIST)
        for (uint32_t i = 0; i < gv->u.list.n; i++)
            unset_outputs(r, r->g->ids[gv->u.list.off + i]);
}

/* The full name of schema s ("mul.Tensor"), made once per operator row
 * (every node of a run asks it) and kept by the run; made into buf where
 * that is not possible. */
static const char *op_name(sg__xrun *r, const sg__schema *s, char *buf)
{
    if (s->op < SG_OP_COUNT && !r->opnames)
        r->opnames = sg__calloc(r->ctx, SG_OP_COUNT, sizeof *r->opnames); /* NULL: made each time below */
    if (s->op >= SG_OP_COUNT || !r->opnames) {
        sg__schema_full_name(s, buf);
        return buf;
    }
    char *name = r->opnames[s->op];
    if (!name[0])
        sg__schema_full_name(s, name);
    return name;
}

static sg_status run_call(sg__xrun *r, uint32_t node)
{
    const sg__gnode *n = &r->g->nodes[node];
    sg__xcall call, *c = &call; /* about 7 KB: on the stack, not allocated per node */
    c->r = r;
    c->ctx = r->ctx;
    c->g = r->g;
    c->node = node;
    c->n = n;
    c->s = n->schema;
    c->op = op_name(r, c->s, c->opbuf);
    c->lists = false;
    sg__xtensor **lists[SG_SCHEMA_ARGS]; /* cleared by the first list loaded (c->lists) */
    sg_status s = SG_OK;
    sg__xkernel k = sg__xkernel_find(c->s);
    if (!k)
        s = sg__err(r->ctx, SG_EUNSUPPORTED, "unsupported: no kernel for operator %s", c->op);
    /* positional arguments first, in schema order, then keyword-only ones by name */
    bool have[SG_SCHEMA_ARGS] = {false};
    int pos = 0;
    bool kw = false;
    for (uint32_t k2 = 0; k2 < n->nargs && !s; k2++) {
        const sg__garg *ga = &r->g->args[n->args + k2];
        kw |= ga->kw != NULL;
        int i = ga->kw ? sg__schema_arg(c->s, ga->kw) : pos++;
        if (i < 0 || i >= c->s->nargs || have[i])
            s = sg__err(r->ctx, SG_EINTERNAL, "%s: argument %u does not fit the schema", c->op, k2);
        else if (!(s = load_arg(c, i, ga, lists)))
            have[i] = true;
    }
    for (int i = kw ? 0 : pos; i < c->s->nargs && !s; i++) /* without keywords, the first pos are given */
        if (!have[i])
            s = default_arg(c, i);
    if (!s)
        s = sg__xc_check_overlap(c);
    if (!s)
        s = k(c);
    if (s)
        unset_outputs(r, n->out);
    for (int i = 0; i < c->s->nargs && c->lists; i++) /* lists are loaded at schema positions only */
        sg_free(lists[i]);
    return s;
}

static sg_status run_scope(sg__xrun *r, uint32_t scope);

/* Give value v the concrete value x (a tensor: a reference taken). */
static void set_value(sg__xrun *r, uint32_t v, sg__xval x)
{
    if (x.kind == SG_XV_TENSOR)
        sg__xt_ref(x.u.t);
    release(&r->vals[v]);
    r->vals[v] = x;
}

sg_status sg__xrun_set(sg__xrun *r, uint32_t v, const sg__xval *x)
{
    CHAIN(grow_vals(r));
    if (v >= r->g->nvals)
        return sg__err(r->ctx, SG_EINVAL, "run: no value %u", v);
    set_value(r, v, *x);
    return SG_OK;
}

/* A cond node: the predicate picks a branch, whose placeholders take the
 * operands; its outputs become the node's, and the fresh unbacked symbols
 * the node binds take the sizes (and ints) the branch gave. */
static sg_status run_cond(sg__xrun *r, uint32_t n)
{
    const sg__graph *g = r->g;
    const sg__gnode *node = &g->nodes[n];
    const sg__garg *a = &g->args[node->args];
    int64_t taken;
    sg_status s;
    if (a[0].kind == SG_A_EXPR) {
        s = sg__xrun_eval(r, a[0].u.e, &taken);
    } else {
        sg__xval p;
        if (!(s = arg_value(r, a[0].u.v, &p)) && (p.kind != SG_XV_TENSOR || sg__xt_numel(p.u.t) != 1))
            s = sg__err(r->ctx, SG_ESHAPE, "cond: the predicate is not a tensor of one element");
        if (!s)
            taken = sg__xt_get_i(p.u.t, 0) != 0;
    }
    if (s)
        return s;
    uint32_t b = taken ? a[1].u.v : a[2].u.v;
    const sg__scope *sc = &g->scopes[b];
    for (uint32_t i = 0; i < sc->nphs && !s; i++) { /* the branch's inputs: the operands */
        uint32_t ph = g->nodes[sc->phs[i]].out;
        sg__xval x;
        if (g->vals[ph].kind != SG_V_TENSOR)
            continue; /* a symbol: bound already, its node evaluates it */
        if (!(s = arg_value(r, g->ids[a[3].u.list.off + i], &x)))
            set_value(r, ph, x);
    }
    if (!s)
        s = run_scope(r, b);
    if (s)
        return s;
    const sg__gnode *o = &g->nodes[sc->output];
    uint32_t list = node->out;
    for (uint32_t i = 0; i < o->nargs && !s; i++) {
        uint32_t e = g->ids[g->vals[list].u.list.off + i];
        sg__xval x;
        if ((s = arg_value(r, g->args[o->args + i].u.v, &x)))
            break;
        set_value(r, e, x);
        const sg__gval *ge = &g->vals[e];
        if (ge->kind == SG_V_SYMINT && x.kind == SG_XV_INT) { /* a merged int */
            s = bind_bare(r, ge->u.e, x.u.i);
        } else if (ge->kind == SG_V_TENSOR && x.kind == SG_XV_TENSOR) { /* merged sizes */
            for (uint32_t d = 0; d < ge->u.t.ndim && !s; d++)
                s = bind_bare(r, sg__graph_size(g, e, d), x.u.t->sizes[d]);
        }
    }
    return s;
}

/* Every node of a subgraph, in order (its placeholders have their values). */
static sg_status run_scope(sg__xrun *r, uint32_t scope)
{
    const sg__graph *g = r->g;
    size_t saved = r->next;
    sg_status s = SG_OK;
    for (uint32_t i = 0; i < g->nnodes && !s; i++)
        if (g->nodes[i].scope == scope)
            s = sg__xrun_node(r, i);
    r->next = saved;
    return s;
}

sg_status sg__xrun_node(sg__xrun *r, uint32_t n)
{
    const sg__graph *g = r->g;
    if (n >= g->nnodes)
        return sg__err(r->ctx, SG_EINVAL, "run: no node %u", n);
    sg_status s = grow_vals(r);
    if (s)
        return s;
    const sg__gnode *node = &g->nodes[n];
    switch ((sg__nkind)node->kind) {
    case SG_N_PLACEHOLDER: {
        uint32_t v = node->out;
        const sg__gval *gv = &g->vals[v];
        if (gv->kind == SG_V_SYMINT || gv->kind == SG_V_SYMBOOL) {
            int64_t x;
            if ((s = sg__xrun_eval(r, gv->u.e, &x)))
                return s;
            release(&r->vals[v]);
            r->vals[v] = gv->kind == SG_V_SYMINT ? (sg__xval){.kind = SG_XV_INT, .u.i = x}
                                                 : (sg__xval){.kind = SG_XV_BOOL, .u.b = x != 0};
        } else if (r->vals[v].kind == SG_XV_UNSET) {
            return sg__err(r->ctx, SG_EUNBOUND, "run: input %s has no value", vname(g, v));
        }
        break;
    }
    case SG_N_ASSERT: {
        int64_t x;
        if ((s = sg__xrun_eval(r, node->cond, &x)))
            return s;
        if (!x) {
            char *text = show(r->ctx, node->cond);
            sg__err(r->ctx, SG_EASSERT, "runtime assertion failed: %s", text ? text : "?");
            sg_free(text);
            return SG_EASSERT;
        }
        break;
    }
    case SG_N_CALL:
        if ((s = run_call(r, n)))
            return s;
        break;
    case SG_N_OUTPUT:
    case SG_N_FUNCTION: /* (a custom Function's end: its forward ran before it, its backward is the joint's) */
        break;
    case SG_N_COND:
        if ((s = run_cond(r, n)))
            return s;
        break;
    }
    if (n < r->nplan)
        release_dead(r, n);
    r->next = (size_t)n + 1;
    return SG_OK;
}

sg_status sg__xrun_rest(sg__xrun *r)
{
    while (r->next < r->g->nnodes) {
        uint32_t n = (uint32_t)r->next;
        if (r->g->nodes[n].scope) { /* a subgraph's: run by its cond */
            r->next++;
            continue;
        }
        sg_status s = sg__xrun_node(r, n);
        if (s)
            return s;
    }
    return SG_OK;
}
