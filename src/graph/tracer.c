/* The tracer: inputs become placeholders (each preceded by its basic
 * symbols), calls are bound to their schema, run through their shape rule
 * (meta*.c) and recorded as nodes. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "graph/derivatives.h"
#include "graph/meta.h"
#include "graph/record.h"
#include "shapeguard/print.h"
#include "graph/tracer_private.h"



sg_status sg_tracer_new(sg_env *env, sg_tracer **out)
{
    if (!out)
        return SG_EINVAL;
    *out = NULL;
    if (!env)
        return SG_EINVAL;
    sg_ctx *ctx = sg_env_ctx(env);
    sg_tracer *t = sg__calloc(ctx, 1, sizeof *t);
    if (!t)
        return sg__nomem(ctx);
    t->ctx = ctx;
    t->env = env;
    sg_status s = sg__opreg_new(ctx, &t->reg);
    if (!s)
        s = sg__graph_new(env, &t->g);
    if (!s)
        t->g->reg = t->reg;
    if (!s && (!sg__idmap_init(ctx, &t->taken, 16) || !sg__idmap_init(ctx, &t->names, 16)))
        s = sg__nomem(ctx);
    if (s) {
        sg_tracer_free(t);
        return s;
    }
    *out = t;
    return SG_OK;
}

void sg_tracer_free(sg_tracer *t)
{
    if (!t)
        return;
    sg__opreg_free(t->reg);
    sg__graph_free(t->g);
    sg__idmap_free(&t->taken);
    sg__idmap_free(&t->names);
    for (size_t i = 0; i < t->npnames; i++)
        sg_free(t->pnames[i]);
    sg_free(t->pnames);
    sg_free(t->opnames);
    for (size_t i = 0; i < t->nsubin; i++)
        sg_free(t->subin[i].name);
    sg_free(t->subin);
    sg_free(t->subout);
    sg_free(t->dups);
    sg_free(t->ver);
    sg_free(t->clast);
    sg_free(t);
}

sg_status sg_tracer_reset(sg_tracer *t)
{
    if (!t)
        return SG_EINVAL;
    sg__graph_reset(t->g);
    sg__idmap_reset(&t->taken);
    sg__idmap_reset(&t->names);
    for (size_t i = 0; i < t->npnames; i++)
        sg_free(t->pnames[i]);
    t->npnames = 0;
    for (size_t i = 0; i < t->nsubin; i++)
        sg_free(t->subin[i].name);
    t->nsubin = t->nsubout = t->ndups = 0;
    t->nver = t->nclast = 0;
    t->called = t->no_grad = t->done = false;
    return SG_OK;
}

/* ---- inputs ---- */

/* Placeholder order of symbols: backed (s) before unbacked (u), then by
 * number, then by name (stable names). */
int sg__sym_order(const void *pa, const void *pb)
{
    const char *a = sg_expr_sym_name(*(const sg_expr *const *)pa);
    const char *b = sg_expr_sym_name(*(const sg_expr *const *)pb);
    if (a[0] != b[0])
        return a[0] == 's' ? -1 : b[0] == 's' ? 1 : strcmp(a, b);
    char *ea, *eb;
    unsigned long na = strtoul(a + 1, &ea, 10), nb = strtoul(b + 1, &eb, 10);
    if (ea != a + 1 && eb != b + 1 && !*ea && !*eb && na != nb)
        return na < nb ? -1 : 1;
    return strcmp(a, b);
}

sg_status sg__tracer_new_symbols(sg_tracer *t, const sg__idmap *known, size_t ignore, const sg_expr *const *e,
                                 size_t n, const sg_expr ***out, size_t *nout)
{
    const sg_expr **all = NULL;
    size_t nall = 0, cap = 0;
    sg_status st = SG_OK;
    for (size_t i = 0; i < n && !st; i++) {
        const sg_expr **syms = NULL;
        size_t k = 0;
        if ((st = sg_expr_free_symbols(t->ctx, &syms, &k, e[i])))
            break;
        for (size_t j = 0; j < k && !st; j++) {
            const size_t *hit = sg__idmap_find(known, syms[j]->id);
            bool dup = hit && !(*hit & ignore);
            for (size_t q = 0; q < nall && !dup; q++)
                dup = all[q] == syms[j];
            if (dup)
                continue;
            if (!sg__grow(t->ctx, (void **)&all, &cap, nall + 1, sizeof *all))
                st = sg__nomem(t->ctx);
            else
                all[nall++] = syms[j];
        }
        sg_free(syms);
    }
    if (st) {
        sg_free(all);
        return st;
    }
    if (nall)
        qsort(all, nall, sizeof *all, sg__sym_order);
    *out = all;
    *nout = nall;
    return SG_OK;
}

/* Placeholders for the symbols of e[0 .. n) not taken yet, sorted. */
static sg_status take_symbols(sg_tracer *t, const sg_expr *const *e, size_t n)
{
    const sg_expr **all = NULL;
    size_t nall = 0;
    sg_status s = sg__tracer_new_symbols(t, &t->taken, 0, e, n, &all, &nall);
    for (size_t i = 0; i < nall && !s; i++) {
        uint32_t v;
        s = sg__graph_value(t->g, &v, SG_V_SYMINT, all[i], 0);
        if (!s)
            s = sg__graph_placeholder(t->g, v, sg_expr_sym_name(all[i]));
        if (!s && (!sg__idmap_put(&t->taken, all[i]->id, 1) || !sg__idmap_put(&t->g->scopes[0].bound, all[i]->id, v + 1)))
            s = sg__nomem(t->ctx);
    }
    sg_free(all);
    return s;
}

static sg_status input_check(sg_tracer *t, sg_value *out)
{
    if (!out)
        return sg__err(t->ctx, SG_EINVAL, "tracer input: out is NULL");
    if (t->called || t->done)
        return sg__err(t->ctx, SG_EINVAL, "tracer input: inputs come before every call");
    return SG_OK;
}

sg_status sg_tracer_input_tensor(sg_tracer *t, sg_value *out, const char *name, const sg_fake *fake, sg_dtype dtype,
                                 int requires_grad)
{
    return sg_tracer_input_view(t, out, name, fake, dtype, requires_grad, SG_NOVAL);
}

sg_status sg_tracer_input_view(sg_tracer *t, sg_value *out, const char *name, const sg_fake *fake, sg_dtype dtype,
                               int requires_grad, sg_value of)
{
    if (!t)
        return SG_EINVAL;
    sg_status s = input_check(t, out);
    if (s)
        return s;
    if (of != SG_NOVAL && (of >= t->g->nvals || t->g->vals[of].kind != SG_V_TENSOR ||
                           t->g->nodes[t->g->vals[of].node].kind != SG_N_PLACEHOLDER))
        return sg__err(t->ctx, SG_EINVAL, "tracer input %s: the input it views is not a tensor input",
                       name ? name : "");
    if (!fake || fake->ndim > SG_MAX_DIMS || (unsigned)dtype >= SG_NDTYPE)
        return sg__err(t->ctx, SG_EINVAL, "tracer input %s: no fake, a bad rank or a bad dtype", name ? name : "");
    if (fake->kind)
        return sg__err(t->ctx, SG_EUNSUPPORTED, "tracer input %s: tensor subclasses are not traced yet",
                       name ? name : "");
    const sg_expr *all[2 * SG_MAX_DIMS + 1];
    for (size_t d = 0; d < fake->ndim; d++) {
        all[d] = fake->sizes[d];
        all[fake->ndim + d] = fake->strides[d];
    }
    all[2 * fake->ndim] = fake->offset;
    /* its storage: what its layout reaches (and, shared, what the others' reach); worked out
       first, so that running out of memory leaves nothing behind */
    const sg_expr *reach = sg__meta_layout_extent(t->ctx, fake->ndim, fake->sizes, fake->strides, fake->offset);
    if (reach && of != SG_NOVAL) {
        const sg_expr *both[2] = {reach, sg__graph_storage_numel(t->g, t->g->vals[of].u.t.storage)};
        reach = sg__minmax(t->ctx, SG_OP_MAX, 2, both);
    }
    if (!reach)
        return sg_ctx_last_error(t->ctx);
    if ((s = take_symbols(t, all, 2 * fake->ndim + 1)))
        return s;
    uint32_t v;
    s = sg__graph_tensor(t->g, &v, dtype, fake->ndim, fake->sizes, fake->strides, fake->offset,
                         of == SG_NOVAL ? SG_NOVAL : t->g->vals[of].u.t.storage);
    if (!s)
        s = sg__graph_placeholder(t->g, v, name);
    if (s)
        return s;
    sg__graph_set_storage_numel(t->g, t->g->vals[v].u.t.storage, reach);
    t->g->vals[v].u.t.requires_grad = requires_grad != 0;
    t->g->vals[v].u.t.leaf = requires_grad != 2;
    *out = v;
    return SG_OK;
}

sg_status sg_tracer_input_base(sg_tracer *t, sg_value v, const sg_fake *base)
{
    if (!t)
        return SG_EINVAL;
    if (t->called || t->done)
        return sg__err(t->ctx, SG_EINVAL, "tracer input base: inputs come before every call");
    if (v >= t->g->nvals || t->g->vals[v].kind != SG_V_TENSOR || t->g->nodes[t->g->vals[v].node].kind != SG_N_PLACEHOLDER)
        return sg__err(t->ctx, SG_EINVAL, "tracer input base: the value is not a tensor input");
    if (!base || base->kind || base->ndim > SG_MAX_DIMS)
        return sg__err(t->ctx, SG_EINVAL, "tracer input base: no base, a subclass base or a bad rank");
    sg__graph *g = t->g;
    if (sg__graph_hidden_base(g, v) != SG_NOVAL)
        return sg__err(t->ctx, SG_EINVAL, "tracer input base: input %s has its base already", g->vals[v].name);
    uint32_t st = g->vals[v].u.t.storage;
    const sg_expr *reach = sg__meta_layout_extent(t->ctx, base->ndim, base->sizes, base->strides, base->offset);
    if (reach) {
        const sg_expr *both[2] = {reach, sg__graph_storage_numel(g, st)};
        reach = sg__minmax(t->ctx, SG_OP_MAX, 2, both);
    }
    if (!reach || !sg__grow(t->ctx, (void **)&g->hbases, &g->caphbases, g->nhbases + 2, sizeof *g->hbases))
        return reach ? sg__nomem(t->ctx) : sg_ctx_last_error(t->ctx);
    const sg_expr *all[2 * SG_MAX_DIMS + 1];
    for (size_t d = 0; d < base->ndim; d++) {
        all[d] = base->sizes[d];
        all[base->ndim + d] = base->strides[d];
    }
    all[2 * base->ndim] = base->offset;
    uint32_t b;
    sg_status s = take_symbols(t, all, 2 * base->ndim + 1);
    if (!s)
        s = sg__graph_tensor(g, &b, (sg_dtype)g->vals[v].u.t.dtype, base->ndim, base->sizes, base->strides,
                             base->offset, st);
    if (s)
        return s;
    g->hbases[g->nhbases++] = v;
    g->hbases[g->nhbases++] = b;
    sg__graph_set_storage_numel(g, st, reach);
    return SG_OK;
}

/* The kinds of tensor subclass a trace takes: their names as the walker
 * knows them (kind two, PyTorch's TwoTensor). */
static const char *traced_kind(const char *name)
{
    return name && !strcmp(name, "two") ? "two" : NULL;
}

static sg_status add_sub(sg_tracer *t, sg__tsub **arr, size_t *n, size_t *cap, sg__tsub sub)
{
    if (!sg__grow(t->ctx, (void **)arr, cap, *n + 1, sizeof **arr))
        return sg__nomem(t->ctx);
    (*arr)[(*n)++] = sub;
    return SG_OK;
}

sg_status sg_tracer_input_subclass(sg_tracer *t, sg_value *inner, size_t max, const char *name, const sg_fake *fake,
                                   sg_dtype dtype, int requires_grad, const sg_value *of)
{
    if (!t)
        return SG_EINVAL;
    sg_status s = input_check(t, inner);
    if (s)
        return s;
    const char *nm = name ? name : "";
    if (!fake || !fake->kind || !fake->ninner || fake->ninner > SG__TSUB_MAX || fake->ninner > max)
        return sg__err(t->ctx, SG_EINVAL, "tracer input %s: no subclass fake, or more inner tensors than %zu", nm,
                       max < SG__TSUB_MAX ? max : (size_t)SG__TSUB_MAX);
    const char *kind = traced_kind(fake->kind->name);
    if (!kind)
        return sg__err(t->ctx, SG_EUNSUPPORTED, "tracer input %s: unsupported: tensor subclasses of kind %s are not "
                       "traced (kind two is)", nm, fake->kind->name ? fake->kind->name : "?");
    if (requires_grad)
        return sg__err(t->ctx, SG_EUNSUPPORTED, "tracer input %s: unsupported: a tensor subclass that requires grad",
                       nm);
    for (size_t j = 0; j < fake->ninner && !s; j++) {
        char iname[256];
        snprintf(iname, sizeof iname, "%s_%s", nm, fake->names[j]);
        s = sg_tracer_input_view(t, &inner[j], iname, fake->inner[j], dtype, 0, of ? of[j] : SG_NOVAL);
    }
    return s ? s : sg__tracer_note_subclass_input(t, nm, kind, inner, fake->ninner);
}

sg_status sg__tracer_note_subclass_input(sg_tracer *t, const char *name, const char *kind, const sg_value *inner,
                                         size_t n)
{
    const char *k = traced_kind(kind);
    if (!k || !n || n > SG__TSUB_MAX)
        return sg__err(t->ctx, SG_EINVAL, "tracer input %s: no kind of subclass, or %zu inner tensors",
                       name ? name : "", n);
    sg__tsub sub = {.n = (uint32_t)n, .kind = k};
    for (size_t j = 0; j < n; j++) {
        if (inner[j] >= t->g->nvals || t->g->vals[inner[j]].node == SG_NOVAL ||
            t->g->nodes[t->g->vals[inner[j]].node].kind != SG_N_PLACEHOLDER)
            return sg__err(t->ctx, SG_EINVAL, "tracer input %s: inner tensor %zu is not an input", name ? name : "",
                           j);
        sub.v[j] = inner[j];
    }
    if (!(sub.name = sg__strdup(t->ctx, name ? name : "")))
        return sg__nomem(t->ctx);
    sg_status s = add_sub(t, &t->subin, &t->nsubin, &t->capsubin, sub);
    if (s)
        sg_free(sub.name);
    return s;
}

sg_status sg_tracer_input_again(sg_tracer *t, sg_value v)
{
    if (!t)
        return SG_EINVAL;
    if (v >= t->g->nvals || t->g->vals[v].node == SG_NOVAL ||
        t->g->nodes[t->g->vals[v].node].kind != SG_N_PLACEHOLDER)
        return sg__err(t->ctx, SG_EINVAL, "tracer input again: not an input");
    if (!sg__grow(t->ctx, (void **)&t->dups, &t->capdups, t->ndups + 1, sizeof *t->dups))
        return sg__nomem(t->ctx);
    t->dups[t->ndups++] = v;
    return SG_OK;
}

sg_status sg_tracer_input_declare_view(sg_tracer *t, sg_value v)
{
    if (!t)
        return SG_EINVAL;
    if (v >= t->g->nvals || t->g->vals[v].kind != SG_V_TENSOR || t->g->vals[v].node == SG_NOVAL ||
        t->g->nodes[t->g->vals[v].node].kind != SG_N_PLACEHOLDER || t->g->nodes[t->g->vals[v].node].scope != 0)
        return sg__err(t->ctx, SG_EINVAL, "tracer input declared a view: not a tensor input");
    if (t->called || t->done)
        return sg__err(t->ctx, SG_EINVAL, "tracer input declared a view: inputs come before every call");
    t->g->vals[v].u.t.declared_view = true;
    return SG_OK;
}

sg_status sg_tracer_input_int(sg_tracer *t, sg_value *out, const char *name, const sg_expr *e)
{
    if (!t)
        return SG_EINVAL;
    sg_status s = input_check(t, out);
    if (s)
        return s;
    if (!e || sg_expr_sort(e) != SG_SORT_INT)
        return sg__err(t->ctx, SG_EINVAL, "tracer input %s: not an integer expression", name ? name : "");
    if (sg_expr_op(e) == SG_OP_SYM && sg__idmap_find(&t->taken, e->id)) {
        *out = SG_NOVAL; /* the symbol's own placeholder stands for it */
        for (uint32_t i = 0; i < t->g->nnodes && *out == SG_NOVAL; i++) {
            const sg__gval *v = &t->g->vals[t->g->nodes[i].out];
            if (v->kind == SG_V_SYMINT && v->u.e == e)
                *out = t->g->nodes[i].out;
        }
        return SG_OK;
    }
    if (sg_expr_op(e) == SG_OP_SYM) { /* the symbol is the input */
        uint32_t v;
        s = sg__graph_value(t->g, &v, SG_V_SYMINT, e, 0);
        if (!s)
            s = sg__graph_placeholder(t->g, v, sg_expr_sym_name(e));
        if (!s && (!sg__idmap_put(&t->taken, e->id, 1) || !sg__idmap_put(&t->g->scopes[0].bound, e->id, v + 1)))
            s = sg__nomem(t->ctx);
        if (!s)
            *out = v;
        return s;
    }
    if ((s = take_symbols(t, &e, 1))) /* a constant or an expression: its symbols */
        return s;
    return sg__graph_value(t->g, out, SG_V_SYMINT, e, 0);
}

/* ---- binding a call to its schema ---- */

static sg_status bind_fail(sg__mcall *m, const char *what, const char *arg)
{
    return sg__err(m->g->ctx, SG_EINVAL, "%s: %s%s%s", m->op, what, arg ? " " : "", arg ? arg : "");
}

static bool is_kind(const sg__graph *g, sg_value v, sg__vkind k)
{
    return v < g->nvals && g->vals[v].kind == k;
}

/* An integer argument from an INT or a symbolic int value. */
static const sg_expr *int_of(const sg__graph *g, const sg_arg *x)
{
    if (x->kind == SG_ARG_INT && x->u.e && sg_expr_sort(x->u.e) == SG_SORT_INT)
        return x->u.e;
    if (x->kind == SG_ARG_VALUE && is_kind(g, x->u.v, SG_V_SYMINT))
        return g->vals[x->u.v].u.e;
    if (x->kind == SG_ARG_BOOL)
        return sg__int_si(g->ctx, x->u.b != 0);
    return NULL;
}

static sg_status bind_int_list(sg__mcall *m, int i, const sg_arg *x)
{
    const sg__sarg *sa = &m->s->args[i];
    sg__garg *a = &m->a[i];
    const sg_expr *buf[SG_MAX_DIMS];
    size_t n = 0;
    const sg_expr *one = int_of(m->g, x);
    if (one) {
        buf[n++] = one; /* an int where int[N] is expected (sum(dim=1)) */
    } else if (x->kind == SG_ARG_INTS || x->kind == SG_ARG_VALUES) {
        n = x->kind == SG_ARG_INTS ? x->u.ints.n : x->u.values.n;
        if (n > SG_MAX_DIMS)
            return bind_fail(m, "too many entries in", sa->name);
        for (size_t k = 0; k < n; k++) {
            sg_arg e = x->kind == SG_ARG_INTS ? (sg_arg){.kind = SG_ARG_INT, .u.e = x->u.ints.e[k]}
                                              : (sg_arg){.kind = SG_ARG_VALUE, .u.v = x->u.values.v[k]};
            if (!(buf[k] = int_of(m->g, &e)))
                return bind_fail(m, "a list entry that is not an int in", sa->name);
        }
    } else {
        return bind_fail(m, "expected a list of ints for", sa->name);
    }
    uint32_t off;
    sg_status s = sg__graph_exprs(m->g, &off, buf, n);
    if (s)
        return s;
    a->kind = SG_A_EXPRS;
    a->u.list.off = off;
    a->u.list.n = (uint32_t)n;
    return SG_OK;
}

static sg_status bind_tensor_list(sg__mcall *m, int i, const sg_arg *x)
{
    if (x->kind != SG_ARG_VALUES)
        return bind_fail(m, "expected a list of tensors for", m->s->args[i].name);
    for (size_t k = 0; k < x->u.values.n; k++)
        if (!is_kind(m->g, x->u.values.v[k], SG_V_TENSOR))
            return bind_fail(m, "a list entry that is not a tensor in", m->s->args[i].name);
    uint32_t off;
    sg_status s = sg__graph_ids(m->g, &off, x->u.values.v, x->u.values.n);
    if (s)
        return s;
    m->a[i].kind = SG_A_VALUES;
    m->a[i].u.list.off = off;
    m->a[i].u.list.n = (uint32_t)x->u.values.n;
    return SG_OK;
}

/* Argument x for schema argument i. */
static sg_status bind_one(sg__mcall *m, int i, const sg_arg *x)
{
    const sg__sarg *sa = &m->s->args[i];
    sg__garg *a = &m->a[i];
    memset(a, 0, sizeof *a);
    if (x->kind == SG_ARG_NONE || (x->kind == SG_ARG_VALUE && is_kind(m->g, x->u.v, SG_V_NONE))) {
        if (!sa->type.optional && !(sa->type.list && sa->type.elem_optional))
            return bind_fail(m, "None given for", sa->name);
        a->kind = SG_A_NONE;
        return SG_OK;
    }
    if (sa->type.list)
        return sa->type.base == SG_TY_TENSOR ? bind_tensor_list(m, i, x) : bind_int_list(m, i, x);
    const sg_expr *e;
    switch ((sg__ty)sa->type.base) {
    case SG_TY_TENSOR:
        if (x->kind == SG_ARG_VALUE && is_kind(m->g, x->u.v, SG_V_TENSOR)) {
            a->kind = SG_A_VALUE;
            a->u.v = x->u.v;
            return SG_OK;
        }
        if (i == 0) /* a number stands for a tensor after the first argument only */
            return bind_fail(m, "expected a tensor for", sa->name);
        /* a wrapped number, as PyTorch passes mul(x, 2): as a Scalar */
        /* fall through */
    case SG_TY_SCALAR:
        if (x->kind == SG_ARG_FLOAT || (x->kind == SG_ARG_VALUE && is_kind(m->g, x->u.v, SG_V_FLOAT))) {
            a->kind = SG_A_FLOAT;
            a->u.f = x->kind == SG_ARG_FLOAT ? x->u.f : m->g->vals[x->u.v].u.f;
            return SG_OK;
        }
        if (x->kind == SG_ARG_BOOL) {
            a->kind = SG_A_BOOL;
            a->u.b = x->u.b != 0;
            return SG_OK;
        }
        if ((e = int_of(m->g, x)) || (x->kind == SG_ARG_VALUE && is_kind(m->g, x->u.v, SG_V_SYMBOOL) &&
                                      (e = m->g->vals[x->u.v].u.e))) {
            a->kind = SG_A_EXPR;
            a->u.e = e;
            return SG_OK;
        }
        return bind_fail(m, "expected a number for", sa->name);
    case SG_TY_INT:
    case SG_TY_SYMINT:
        if (!(e = int_of(m->g, x)))
            return bind_fail(m, "expected an int for", sa->name);
        a->kind = SG_A_EXPR;
        a->u.e = e;
        return SG_OK;
    case SG_TY_FLOAT:
        if (x->kind == SG_ARG_FLOAT) {
            a->kind = SG_A_FLOAT;
            a->u.f = x->u.f;
            return SG_OK;
        }
        if (!(e = int_of(m->g, x)))
            return bind_fail(m, "expected a float for", sa->name);
        a->kind = SG_A_EXPR;
        a->u.e = e;
        return SG_OK;
    case SG_TY_BOOL:
        if (x->kind != SG_ARG_BOOL)
            return bind_fail(m, "expected a bool for", sa->name);
        a->kind = SG_A_BOOL;
        a->u.b = x->u.b != 0;
        return SG_OK;
    case SG_TY_SCALARTYPE:
        if (x->kind != SG_ARG_DTYPE || (unsigned)x->u.dtype >= SG_NDTYPE)
            return bind_fail(m, "expected a dtype for", sa->name);
        a->kind = SG_A_DTYPE;
        a->u.dtype = (uint8_t)x->u.dtype;
        return SG_OK;
    case SG_TY_MEMORYFORMAT:
        if (x->kind != SG_ARG_MEMORY_FORMAT || (unsigned)x->u.memory_format > SG_PRESERVE_FORMAT)
            return bind_fail(m, "expected a memory format for", sa->name);
        a->kind = SG_A_MEMFMT;
        a->u.dtype = (uint8_t)x->u.memory_format;
        return SG_OK;
    default:
        return sg__err(m->g->ctx, SG_EUNSUPPORTED, "%s: unsupported: an argument of type %s (%s)", m->op,
                       sa->type.base == SG_TY_STORAGE ? "Storage" : "layout, device or str", sa->name);
    }
}

static sg_status bind(sg__mcall *m, const sg_arg *args, size_t nargs)
{
    size_t npos = 0;
    while (npos < nargs && !args[npos].name)
        npos++;
    for (size_t k = npos; k < nargs; k++)
        if (!args[k].name)
            return bind_fail(m, "a positional argument after a named one", NULL);
    sg_status s = SG_OK;
    for (int i = 0; i < m->s->nargs && !s; i++) {
        const sg_arg *x = NULL;
        if ((size_t)i < npos) {
            if (m->s->args[i].kwonly)
                return bind_fail(m, "too many positional arguments", NULL);
            x = &args[i];
        }
        for (size_t k = npos; k < nargs; k++)
            if (!strcmp(args[k].name, m->s->args[i].name)) {
                if (x)
                    return bind_fail(m, "an argument given twice:", m->s->args[i].name);
                x = &args[k];
            }
        m->given[i] = x != NULL;
        s = x ? bind_one(m, i, x) : sg__record_default(m, i);
    }
    if (s)
        return s;
    if (npos > m->s->nargs)
        return bind_fail(m, "too many positional arguments", NULL);
    for (size_t k = npos; k < nargs; k++)
        if (sg__schema_arg(m->s, args[k].name) < 0)
            return bind_fail(m, "no argument named", args[k].name);
    return SG_OK;
}

/* ---- composite operators: PyTorch decomposes them into others ---- */

static sg_status tracer_call(sg_tracer *t, sg_value *out, const char *op, const sg__schema *sch, const sg_arg *args,
                             size_t nargs, unsigned line, uint8_t flags);

static sg_status reshape_to_viewed(sg_tracer *t, sg__mcall *m, sg_value self, const sg_expr *const *shape, size_t n,
                                   sg_value *out, bool *viewed, unsigned line)
{
    const sg_expr *sizes[SG_MAX_DIMS];
    bool viewable;
    sg__mcall r = *m; /* the plan is for self */
    r.a[0].kind = SG_A_VALUE;
    r.a[0].u.v = self;
    sg_status s = sg__meta_reshape_plan(&r, shape, n, sizes, &viewable);
    if (s)
        return s;
    sg_arg a[2] = {{.kind = SG_ARG_VALUE, .u.v = self}, {.kind = SG_ARG_INTS, .u.ints = {n, sizes}}};
    *viewed = viewable;
    if (viewable) /* a view of the inferred sizes (the schemas by their rows: no search by name) */
        return tracer_call(t, out, "view", sg__opreg_op(t->reg, SG_OP_view), a, 2, line, 0);
    sg_value copy; /* else a contiguous copy, viewed */
    sg_arg c[2] = {{.kind = SG_ARG_VALUE, .u.v = self},
                   {.kind = SG_ARG_MEMORY_FORMAT, .name = "memory_format", .u.memory_format = SG_CONTIGUOUS_FORMAT}};
    if ((s = tracer_call(t, &copy, "clone", sg__opreg_op(t->reg, SG_OP_clone), c, 2, line, 0)))
        return s;
    a[0].u.v = copy;
    return tracer_call(t, out, "_unsafe_view", sg__opreg_op(t->reg, SG_OP__unsafe_view), a, 2, line, 0);
}

static sg_status reshape_to(sg_tracer *t, sg__mcall *m, sg_value self, const sg_expr *const *shape, size_t n,
                            sg_value *out, unsigned line)
{
    bool viewed;
    return reshape_to_viewed(t, m, self, shape, n, out, &viewed, line);
}

/* reshape: a view where one can have the sizes, else clone + _unsafe_view. */
sg_status sg__composite_reshape(sg_tracer *t, sg__mcall *m, sg_value *out, unsigned line)
{
    return reshape_to(t, m, m->a[0].u.v, t->g->exprs + m->a[1].u.list.off, m->a[1].u.list.n, out, line);
}

/* flatten: self itself for one dimension, else a reshape. */
sg_status sg__composite_flatten(sg_tracer *t, sg__mcall *m, sg_value *out, unsigned line)
{
    sg_value self = m->a[0].u.v;
    size_t n = t->g->vals[self].u.t.ndim, start, end;
    const sg_expr *one = t->ctx->one;
    if (n == 0)
        return reshape_to(t, m, self, &one, 1, out, line);
    sg_status s = sg__meta_dim(m, &start, m->a[1].u.e, n);
    if (!s)
        s = sg__meta_dim(m, &end, m->a[2].u.e, n);
    if (s)
        return s;
    if (start > end)
        return sg__meta_shape_error(m, "flatten() has invalid args: start_dim cannot come after end_dim");
    if (start == end) {
        *out = self;
        return SG_OK;
    }
    const sg_expr *shape[SG_MAX_DIMS], *prod = one;
    size_t k = 0;
    for (size_t d = 0; d < n; d++) {
        const sg_expr *sz = sg__graph_size(t->g, self, d);
        if (d < start || d > end)
            shape[k++] = sz;
        else if (!(prod = sg__mul(t->ctx, prod, sz)))
            return sg_ctx_last_error(t->ctx);
        if (d == end)
            shape[k++] = prod;
    }
    return reshape_to(t, m, self, shape, k, out, line);
}

/* requires_grad of a result as autograd sets it: under grad mode, a
 * differentiable floating result of an input that requires grad requires
 * grad (a written tensor keeps its flag and gains the inputs'); views keep
 * their source's (the view rules set it), except under no_grad. */
static void propagate_grad_flag(sg_tracer *t, const sg__mcall *m, uint32_t v);

static void propagate_grad(void *ud, const sg__mcall *m, uint32_t v)
{
    sg_tracer *t = ud;
    sg__graph *g = t->g;
    if (g->vals[v].kind == SG_V_LIST) {
        for (uint32_t i = 0; i < g->vals[v].u.list.n; i++)
            propagate_grad(t, m, g->ids[g->vals[v].u.list.off + i]);
        return;
    }
    if (g->vals[v].kind != SG_V_TENSOR || m->s->op == SG_OP_requires_grad_)
        return;
    propagate_grad_flag(t, m, v);
    if (m->s->op == SG_OP_set__source_Tensor) /* set_ keeps self's grad_fn */
        return;
    bool hidden = t->no_grad || (m->flags & SG_NODE_DATA);
    if (hidden && (m->s->flags & SG_OPF_VIEW) && !(m->s->flags & (SG_OPF_INPLACE | SG_OPF_OUT))) {
        g->vals[v].u.t.leaf = true; /* a view made in no_grad mode: no grad_fn */
        return;
    }
    for (int i = 0; hidden && (m->s->flags & (SG_OPF_INPLACE | SG_OPF_OUT)) && i < m->s->nargs; i++)
        if (((m->s->written >> i) & 1) && m->a[i].kind == SG_A_VALUE && g->vals[m->a[i].u.v].kind == SG_V_TENSOR) {
            /* a write autograd does not see keeps the tensor's grad_fn, or none: a leaf stays one (not an
               input a write with grad through its views gave a history: written_rg) */
            const sg__fake_tensor *w = &g->vals[m->a[i].u.v].u.t;
            g->vals[v].u.t.leaf = (w->leaf && !(w->written_rg && !w->requires_grad)) || !g->vals[v].u.t.requires_grad;
            return;
        }
    g->vals[v].u.t.leaf = !g->vals[v].u.t.requires_grad;
}

/* ---- views made under no_grad, or of unbind, whose version moved (CreationMeta NO_GRAD_MODE and
   MULTI_OUTPUT_NODE) ---- */

/* Value v's entry, if the tracer noted it (else NULL). */
static const sg__tver *tver(const sg_tracer *t, uint32_t v)
{
    return v < t->nver && t->ver[v].node == t->g->vals[v].node ? &t->ver[v] : NULL;
}

/* The key of the version counter tensor value v counts its writes on: a
 * .data's of its own (2 * v + 1), else its storage's (2 * storage): what
 * the checks after tracing number so (joint.c, counters). */
static uint32_t ctr_key(const sg_tracer *t, uint32_t v)
{
    const sg__tver *e = tver(t, v);
    return e && e->ctr != SG_NOVAL ? e->ctr : 2 * t->g->vals[v].u.t.storage;
}

/* Grow the n used uint32_t-sized fields of *a (each entry elem bytes) to
 * need, the new ones all SG_NOVAL. */
static bool grow_novals(sg_ctx *ctx, void **a, size_t *cap, size_t *n, size_t need, size_t elem)
{
    if (need <= *n)
        return true;
    if (!sg__grow(ctx, a, cap, need, elem))
        return false;
    memset((char *)*a + *n * elem, 0xff, (need - *n) * elem);
    *n = need;
    return true;
}

/* Note tensor value v that call node n of the root scope gave: the counter
 * it counts on (what it views or is a new version of: theirs; a .data: its
 * own) and the view made under no_grad it is (or a version of). */
static sg_status note_value(sg_tracer *t, uint32_t n, uint32_t v)
{
    sg__graph *g = t->g;
    if (g->vals[v].kind != SG_V_TENSOR)
        return SG_OK;
    if (!grow_novals(t->ctx, (void **)&t->ver, &t->capver, &t->nver, (size_t)v + 1, sizeof *t->ver))
        return sg__nomem(t->ctx);
    const sg__gnode *nd = &g->nodes[n];
    uint32_t up = sg__graph_view_of(g, v), old = sg__graph_updates(g, v);
    const sg__tver *o = old != SG_NOVAL ? tver(t, old) : NULL;
    uint8_t dt = g->vals[v].u.t.dtype;
    sg__tver e = {.node = n, .ctr = SG_NOVAL, .ngv = o ? o->ngv : SG_NOVAL};
    if ((nd->flags & SG_NODE_DATA) && nd->schema->op == SG_OP_detach)
        e.ctr = 2 * v + 1;
    else if (up != SG_NOVAL || old != SG_NOVAL)
        e.ctr = ctr_key(t, up != SG_NOVAL ? up : old);
    /* (a view made under no_grad, an element of unbind made with grad (CreationMeta::MULTI_OUTPUT_NODE), or a
       view made with grad of either, which takes its creation meta (propagate_creation_meta); views of other
       dtypes: no view meta) */
    const sg__tver *ue = up != SG_NOVAL ? tver(t, up) : NULL;
    if (up != SG_NOVAL && !(nd->flags & SG_NODE_DATA) && nd->schema->op != SG_OP_detach &&
        (dt == SG_FLOAT64 || dt == SG_FLOAT32) &&
        ((nd->flags & SG_NODE_NO_GRAD) || nd->schema->op == SG_OP_unbind_int || (ue && ue->ngv != SG_NOVAL)))
        e.ngv = v;
    t->ver[v] = e;
    return SG_OK;
}

/* Note call node n of the root scope, just recorded: its values, and the
 * counters its writes move (not through .data). */
static sg_status note_versions(sg_tracer *t, uint32_t n)
{
    sg__graph *g = t->g;
    const sg__gnode *nd = &g->nodes[n];
    if (nd->scope != 0 || nd->kind != SG_N_CALL)
        return SG_OK;
    if (nd->out != SG_NOVAL && g->vals[nd->out].kind == SG_V_LIST) {
        for (uint32_t k = 0; k < g->vals[nd->out].u.list.n; k++)
            CHAIN(note_value(t, n, g->ids[g->vals[nd->out].u.list.off + k]));
    } else if (nd->out != SG_NOVAL) {
        CHAIN(note_value(t, n, nd->out));
    }
    if ((nd->flags & SG_NODE_DATA) || !sg__op_bumps_version(nd->schema))
        return SG_OK;
    uint32_t vals[8];
    size_t nw = sg__graph_node_writes(g, n, vals, 8);
    for (size_t k = 0; k < nw && k < 8; k++) {
        if (g->vals[vals[k]].kind != SG_V_TENSOR)
            continue;
        uint32_t key = ctr_key(t, vals[k]);
        if (!grow_novals(t->ctx, (void **)&t->clast, &t->capclast, &t->nclast, (size_t)key + 1, sizeof *t->clast))
            return sg__nomem(t->ctx);
        t->clast[key] = n;
    }
    return SG_OK;
}

/* Does a call of m ask its tensor arguments for their grad_fn, as
 * PyTorch's VariableType kernels do before the operator's own checks (a
 * derivative of the op, or of its functional form for an in-place call)?
 * The result's dtype plays no part: sum(dtype=torch.int64) asks, so does
 * an in-place call into an int tensor (add_, mul_). out= does not, its
 * own error comes first; nor does copy_ into a tensor that is no float
 * (copy_'s isDifferentiableType(self): no grad_fn, the kernel's own error
 * comes first). */
static bool asks_grad_fn(const sg__mcall *m)
{
    const sg__opinfo *f = sg__op_info(m->s->op);
    if (m->s->flags & SG_OPF_OUT)
        return false;
    if (f && (m->s->flags & SG_OPF_INPLACE) && f->functional != SG_OP_NONE)
        f = sg__op_info(f->functional);
    if (!f || !f->deriv->fn || (f->tags & SG_T_NODIFF) || m->s->op == SG_OP_detach)
        return false;
    if (m->s->op == SG_OP_copy_ && m->s->nargs && m->a[0].kind == SG_A_VALUE) {
        const sg__gval *x = &m->g->vals[m->a[0].u.v];
        if (x->kind == SG_V_TENSOR && x->u.t.dtype != SG_FLOAT64 && x->u.t.dtype != SG_FLOAT32)
            return false;
    }
    return true;
}

/* Tensor value a, an argument of a call with grad of the root scope that
 * asks it for its grad_fn: PyTorch raises there, before the operator's
 * own checks, where a is (a version of) a view made under no_grad whose
 * base requires grad and whose version counter a write moved since
 * (handle_view_on_rebase). The checks after tracing (joint.c,
 * no_grad_views) see the rest (the outputs, a torch.cond's writes). */
static sg_status moved_no_grad_view(const sg_tracer *t, const char *op, uint32_t a)
{
    const sg__graph *g = t->g;
    const sg__tver *e = g->vals[a].kind == SG_V_TENSOR ? tver(t, a) : NULL;
    uint32_t v = e ? e->ngv : SG_NOVAL;
    if (v == SG_NOVAL || !g->vals[v].u.t.requires_grad)
        return SG_OK;
    uint32_t key = ctr_key(t, v), w = key < t->nclast ? t->clast[key] : SG_NOVAL, made = g->vals[v].node;
    if (w == SG_NOVAL || w >= g->nnodes || w <= made)
        return SG_OK;
    bool no_grad = false; /* (else an element of unbind made with grad, or a view of one) */
    for (uint32_t c = v; c != SG_NOVAL && !no_grad; c = sg__graph_view_of(g, c))
        no_grad = g->vals[c].node != SG_NOVAL && (g->nodes[g->vals[c].node].flags & SG_NODE_NO_GRAD);
    return sg__err(t->ctx, SG_EAUTOGRAD, "%s: %s and its base or another view of its base has been modified "
                   "inplace%s (%s, line %u; the view: %s, line %u)", op,
                   no_grad ? "A view was created in no_grad mode" : "Output 0 of a function that returns multiple "
                   "views is a view", no_grad ? " with grad mode enabled" : "", g->nodes[w].schema->name,
                   g->nodes[w].line, g->nodes[made].schema->name, g->nodes[made].line);
}

static sg_status inplace_check(const sg_tracer *t, sg__mcall *m);

/* Is call m a factory's out= (arange, zeros: no tensor argument, nor a
 * list of them, but the one it writes, *out: that one, or SG_NOVAL)? */
static bool factory_call(const sg__graph *g, const sg__mcall *m, uint32_t *out)
{
    *out = SG_NOVAL;
    if (!(m->s->flags & SG_OPF_OUT))
        return false;
    for (int i = 0; i < m->s->nargs; i++) {
        const sg__garg *a = &m->a[i];
        if (a->kind == SG_A_VALUES)
            return false;
        if (a->kind == SG_A_VALUE && g->vals[a->u.v].kind == SG_V_TENSOR) {
            if (!((m->s->written >> i) & 1))
                return false;
            *out = a->u.v;
        }
    }
    return true;
}

static unsigned tags_of(const sg__schema *s);

/* The views made under no_grad whose version moved that call m, recorded
 * by autograd, reads (moved_no_grad_view): asked of every tensor argument
 * as autograd's kernel collects their grad_fn. */
static sg_status moved_no_grad_views(const sg_tracer *t, const sg__mcall *m)
{
    const sg__graph *g = t->g;
    if (!(m->flags & SG_NODE_GRAD) || g->cur != 0 || !asks_grad_fn(m))
        return SG_OK;
    for (int i = 0; i < m->s->nargs; i++) {
        const sg__garg *a = &m->a[i];
        if (a->kind == SG_A_VALUE)
            CHAIN(moved_no_grad_view(t, m->op, a->u.v));
        for (uint32_t k = 0; a->kind == SG_A_VALUES && k < a->u.list.n; k++)
            CHAIN(moved_no_grad_view(t, m->op, g->ids[a->u.list.off + k]));
    }
    return SG_OK;
}

/* What autograd refuses before running an operator under grad mode:
 * inplace_check's, then the views made under no_grad whose version moved
 * that a call it records reads (moved_no_grad_view). A call it records
 * (grad mode on, an argument that requires grad) is marked SG_NODE_GRAD; a
 * factory's out= into a leaf that requires grad (under no_grad) is marked
 * SG_NODE_CUT. */
_Static_assert(SG_SCHEMA_ARGS <= 16, "a node's rg has a bit per argument");

static sg_status autograd_check(void *ud, sg__mcall *m)
{
    const sg_tracer *t = ud;
    const sg__graph *g = t->g;
    if (!t->no_grad && !(m->flags & SG_NODE_DATA)) /* (the arguments' flags now, before a write raises them) */
        for (int i = 0; i < m->s->nargs; i++) {
            const sg__garg *a = &m->a[i];
            bool rg = a->kind == SG_A_VALUE && g->vals[a->u.v].kind == SG_V_TENSOR && sg__graph_rg_now(g, a->u.v);
            if (rg)
                m->rg |= (uint16_t)(1u << i);
            for (uint32_t k = 0; a->kind == SG_A_VALUES && k < a->u.list.n; k++)
                rg |= g->vals[g->ids[a->u.list.off + k]].kind == SG_V_TENSOR &&
                      sg__graph_rg_now(g, g->ids[a->u.list.off + k]);
            if (rg)
                m->flags |= SG_NODE_GRAD;
        }
    uint32_t out;
    bool factory = factory_call(g, m, &out) && out != SG_NOVAL;
    if (factory && m->s->op == SG_OP_empty_out && sg__graph_rg_now(g, out)) /* (1.13's empty.out is a composite:
                                                                                its resize_ is autograd's, which
                                                                                refuses in any grad mode) */
        return sg__err(t->ctx, SG_EAUTOGRAD, "%s: cannot resize variables that require grad", m->op);
    CHAIN(inplace_check(t, m));
    if (factory && g->vals[out].u.t.requires_grad && g->vals[out].u.t.leaf && g->vals[out].u.t.base == SG_NOVAL &&
        !g->vals[out].u.t.written_rg)
        /* 1.13's Python binding sets requires_grad=False (the call's default) on out after the call, which
           a leaf takes (with grad enabled, inplace_check refused one that requires grad; a view keeps its
           grad_fn): its gradient is None from now on, and what reads it requires none */
        m->flags |= SG_NODE_CUT;
    /* (an operator PyTorch implements as a composite checks its arguments first: after the rule, recorded) */
    return tags_of(m->s) & SG_T_IMPLICIT ? SG_OK : moved_no_grad_views(t, m);
}

/* Autograd's check of a write with grad into tensor value v (self of an
 * in-place call, out of a factory's out=): a leaf that requires grad, or
 * a view of one, is refused. */
static sg_status leaf_check(const sg_tracer *t, const sg__mcall *m, uint32_t v)
{
    const sg__graph *g = t->g;
    const sg__fake_tensor *self = &g->vals[v].u.t;
    if ((self->requires_grad && self->leaf) || (self->stale_fn && sg__graph_rg_now(g, v)))
        return sg__err(t->ctx, SG_EAUTOGRAD, "%s: a leaf Variable that requires grad is being used in an in-place "
                                             "operation", m->op);
    bool of_leaf = self->base != SG_NOVAL && g->vals[self->base].u.t.requires_grad && g->vals[self->base].u.t.leaf;
    /* (an input declared as a view of a leaf: the first version of the root of self's views is an
       input on the storage of another, a leaf that requires grad; what a detach gave is no view, nor
       what a set_ moved onto a leaf's storage: the input's own storage decides, not self's now) */
    uint32_t root = self->base != SG_NOVAL ? self->base : v;
    for (uint32_t up = sg__graph_updates(g, root); up != SG_NOVAL && up < root; up = sg__graph_updates(g, root))
        root = up;
    bool input = g->vals[root].node != SG_NOVAL && g->nodes[g->vals[root].node].kind == SG_N_PLACEHOLDER;
    for (uint32_t p = 0; !of_leaf && input && p < g->scopes[0].nphs; p++) {
        uint32_t ph = g->nodes[g->scopes[0].phs[p]].out;
        of_leaf = ph != root && g->vals[ph].kind == SG_V_TENSOR && g->vals[ph].u.t.requires_grad &&
                  g->vals[ph].u.t.leaf && g->vals[ph].u.t.storage == g->vals[root].u.t.storage && !self->leaf;
    }
    if (of_leaf)
        return sg__err(t->ctx, SG_EAUTOGRAD, "%s: a view of a leaf Variable that requires grad is being used in an "
                                             "in-place operation", m->op);
    return SG_OK;
}

/* What autograd refuses of a write under grad mode: an in-place write into
 * a leaf that requires grad or a view of one, and out= with an argument
 * that requires grad. */
static sg_status inplace_check(const sg_tracer *t, sg__mcall *m)
{
    const sg__graph *g = t->g;
    if (t->no_grad || !(m->s->flags & (SG_OPF_INPLACE | SG_OPF_OUT)) || m->s->op == SG_OP_detach_ ||
        m->s->op == SG_OP_requires_grad_ || (m->flags & SG_NODE_DATA)) /* (x.data = y: unseen by autograd) */
        return SG_OK;
    if (m->s->flags & SG_OPF_OUT) {
        uint32_t out;
        if (factory_call(g, m, &out)) /* autograd checks a factory's out as an in-place call's self
                                          (check_inplace: a leaf or a view of one), nothing more */
            return out != SG_NOVAL && g->vals[out].u.t.requires_grad ? leaf_check(t, m, out) : SG_OK;
        const sg__opinfo *f = sg__op_info(m->s->op);
        f = f ? sg__op_info(f->functional) : NULL;
        if (f && ((f->tags & SG_T_NODIFF) || !f->deriv->fn)) /* (nonzero's, ge's out=: no derivative, nothing
                                                                 refused) */
            return SG_OK;
        bool rg = false; /* (a list's tensors count: cat's, stack's) */
        for (int i = 0; i < m->s->nargs; i++) {
            const sg__garg *a = &m->a[i];
            rg |= a->kind == SG_A_VALUE && g->vals[a->u.v].kind == SG_V_TENSOR && g->vals[a->u.v].u.t.requires_grad;
            for (uint32_t k = 0; a->kind == SG_A_VALUES && k < a->u.list.n; k++)
                rg |= g->vals[g->ids[a->u.list.off + k]].kind == SG_V_TENSOR &&
                      g->vals[g->ids[a->u.list.off + k]].u.t.requires_grad;
        }
        if (rg)
            return sg__err(t->ctx, SG_EAUTOGRAD, "%s: functions with out=... arguments don't support automatic "
                                                 "differentiation, but one of the arguments requires grad", m->op);
        return SG_OK;
    }
    const sg__fake_tensor *self = &g->vals[m->a[0].u.v].u.t;
    if (self->custom_view && self->requires_grad)
        return sg__err(t->ctx, SG_EAUTOGRAD, "%s: an output of a custom Function is a view and is being modified "
                       "inplace. This view was created inside a custom Function (or because an input was returned "
                       "as-is) and the autograd logic to handle view+inplace would override the custom backward "
                       "associated with the custom Function, leading to incorrect gradients. This behavior is "
                       "forbidden. You can fix this by cloning the output of the custom Function.", m->op);
    uint32_t first = sg__graph_first_version(g, m->a[0].u.v, false); /* (t3.copy_(t1) after t3.zero_()) */
    bool other_rg = false; /* (the write makes the view require grad: its history rebased, as where its base does) */
    for (int i = 1; i < m->s->nargs; i++)
        other_rg |= m->a[i].kind == SG_A_VALUE && g->vals[m->a[i].u.v].kind == SG_V_TENSOR &&
                    g->vals[m->a[i].u.v].u.t.requires_grad;
    const sg__fake_tensor *fv = &g->vals[first].u.t;
    if (fv->base != SG_NOVAL && (g->vals[fv->base].u.t.requires_grad || other_rg))
        /* (a view made under no_grad, or a view made with grad of one: it takes the creation meta of the view it
           is made of, PyTorch's propagate_creation_meta) */
        for (uint32_t c = first, vn; c != SG_NOVAL && (vn = g->vals[c].node) != SG_NOVAL &&
                                     g->nodes[vn].kind == SG_N_CALL && g->nodes[vn].schema->op != SG_OP_detach &&
                                     !(g->nodes[vn].flags & SG_NODE_DATA);) {
            if ((g->nodes[vn].flags & SG_NODE_NO_GRAD) && (g->nodes[vn].schema->flags & SG_OPF_VIEW))
                return sg__err(t->ctx, SG_EAUTOGRAD, "%s: a view was created in no_grad mode and is being modified "
                                                     "inplace with grad mode enabled", m->op);
            uint32_t up = sg__graph_view_of(g, c);
            c = up != SG_NOVAL ? sg__graph_first_version(g, up, false) : SG_NOVAL;
        }
    if (self->requires_grad || other_rg) /* an output of unbind, or a view of one (CreationMeta::MULTI_OUTPUT_NODE) */
        for (uint32_t v = m->a[0].u.v; v != SG_NOVAL; v = sg__graph_view_of(g, v)) {
            uint32_t n = g->vals[v].node;
            if (n != SG_NOVAL && g->nodes[n].kind == SG_N_CALL &&
                (g->nodes[n].schema->op == SG_OP_detach || (g->nodes[n].flags & SG_NODE_DATA)))
                break; /* (a detach, .data: no differentiable view, whatever it aliases) */
            if (n != SG_NOVAL && g->nodes[n].kind == SG_N_CALL && g->nodes[n].schema->op == SG_OP_unbind_int &&
                !(g->nodes[n].flags & SG_NODE_NO_GRAD) && g->vals[g->nodes[n].out].kind == SG_V_LIST) {
                uint32_t k = 0, l = g->nodes[n].out, sn = g->vals[m->a[0].u.v].node;
                while (k < g->vals[l].u.list.n && g->ids[g->vals[l].u.list.off + k] != v)
                    k++;
                /* (PyTorch names self's own grad_fn: PermuteBackward0 for a permute of the output) */
                const char *fn = v == m->a[0].u.v || sn == SG_NOVAL || g->nodes[sn].kind != SG_N_CALL
                                     ? "unbind" : g->nodes[sn].schema->name;
                return sg__err(t->ctx, SG_EAUTOGRAD, "%s: Output %u of %c%sBackward0 is a view and is being "
                               "modified inplace. This view is the output of a function that returns multiple "
                               "views. Such functions do not allow the output views to be modified inplace.",
                               m->op, v == m->a[0].u.v ? k : 0, toupper((unsigned char)fn[0]), fn + 1);
            }
        }
    return leaf_check(t, m, m->a[0].u.v);
}

/* The TAGS of schema s's row (0 outside the table). */
static unsigned tags_of(const sg__schema *s)
{
    const sg__opinfo *o = sg__op_info(s->op);
    return o ? o->tags : 0;
}

/* Does autograd follow the result r of schema s (asked only where an
 * argument requires grad: most calls have none)? */
static bool differentiable(const sg__fake_tensor *r, const sg__schema *s)
{
    return (r->dtype == SG_FLOAT64 || r->dtype == SG_FLOAT32) && !(tags_of(s) & SG_T_NODIFF);
}

/* A write with grad enabled made the tensor it wrote require grad: PyTorch
 * gives its base a grad_fn (CopySlices) and every view of that base its
 * own again, so they all require grad from now on; so do the values of the
 * graph that stand for them (the base, sg__graph_grad_base's, a detach's result
 * too, and its views; but inputs, whose flag says the caller's tensor
 * requires grad, and another detach's result, a history of its own). */
static void alias_grad(sg_tracer *t, const sg__mcall *m)
{
    sg__graph *g = t->g;
    for (int i = 0; i < m->s->nargs; i++) {
        const sg__garg *a = &m->a[i];
        if (!((m->s->written >> i) & 1) || a->kind != SG_A_VALUE || g->vals[a->u.v].kind != SG_V_TENSOR)
            continue;
        uint32_t b = sg__graph_grad_base(g, a->u.v), st = g->vals[b].u.t.storage;
        /* (inputs on one storage are views of one tensor, the caller's base of them all: a write through
           one gives that base a history, and every input on it, and every view of one, requires grad) */
        bool input = g->vals[b].node != SG_NOVAL && g->nodes[g->vals[b].node].kind == SG_N_PLACEHOLDER;
        for (uint32_t v = input ? 0 : b; v < g->nvals; v++) { /* (a view comes after its base) */
            sg__gval *x = &g->vals[v];
            if (x->kind != SG_V_TENSOR || x->u.t.requires_grad || x->u.t.storage != st || x->node == SG_NOVAL ||
                (x->u.t.dtype != SG_FLOAT64 && x->u.t.dtype != SG_FLOAT32))
                continue;
            uint32_t xb = v == b ? b : sg__graph_grad_base(g, v);
            if (xb != b && !(input && g->vals[xb].node != SG_NOVAL &&
                             g->nodes[g->vals[xb].node].kind == SG_N_PLACEHOLDER && g->nodes[g->vals[xb].node].scope == 0))
                continue;
            if (g->nodes[x->node].kind == SG_N_PLACEHOLDER) { /* an input: requires grad from now on, its
                                                                 flag kept (written_rg); a declared view's
                                                                 grad_fn made when asked */
                x->u.t.written_rg = true;
                x->u.t.stale_fn = x->u.t.declared_view;
                continue;
            }
            if (g->nodes[x->node].kind != SG_N_CALL && g->nodes[x->node].kind != SG_N_COND) /* (a call's result, or
                                                                                                 a torch.cond's) */
                continue;
            x->u.t.requires_grad = true;
            x->u.t.rg_alias = true;
            x->u.t.leaf = false;
            x->u.t.stale_fn = v != b && x->u.t.base != SG_NOVAL; /* (a view: its grad_fn made when asked) */
        }
    }
}

static void propagate_grad_flag(sg_tracer *t, const sg__mcall *m, uint32_t v)
{
    sg__graph *g = t->g;
    if (m->s->op == SG_OP_detach_)
        return;
    sg__fake_tensor *r = &g->vals[v].u.t;
    if (m->flags & SG_NODE_CUT) { /* (autograd_check) */
        r->requires_grad = false;
        return;
    }
    bool any = false, written_rg = false;
    for (int i = 0; i < m->s->nargs; i++) {
        const sg__garg *a = &m->a[i];
        bool written = (m->s->written >> i) & 1;
        if (a->kind == SG_A_VALUE && g->vals[a->u.v].kind == SG_V_TENSOR) {
            bool rg = sg__graph_rg_now(g, a->u.v);
            if (written)
                written_rg = rg;
            else
                any |= rg;
        } else if (a->kind == SG_A_VALUES) {
            for (uint32_t k = 0; k < a->u.list.n; k++)
                any |= sg__graph_rg_now(g, g->ids[a->u.list.off + k]);
        }
    }
    if (m->s->flags & (SG_OPF_INPLACE | SG_OPF_OUT)) {
        if (m->s->op == SG_OP_set__source_Tensor) { /* the set_ rule keeps self's flag; with grad enabled a source
                                                        that requires grad gives self a grad_fn (NotImplemented), as
                                                        does self requiring grad by a write through an alias (an
                                                        input's written_rg, which the rule does not keep) */
            if (!t->no_grad && !(m->flags & SG_NODE_DATA) && (any || written_rg) && !r->requires_grad) {
                r->requires_grad = true;
                r->leaf = false;
                /* (of a view: that grad_fn goes into its base's history, CopySlices, as an in-place call's
                   does; the base and its other views require grad since, theirs made when asked) */
                if (m->a[0].kind == SG_A_VALUE && g->vals[m->a[0].u.v].u.t.base != SG_NOVAL)
                    alias_grad(t, m);
            }
            return;
        }
        if (tags_of(m->s) & SG_T_INPLACE_VIEW)
            return;
        r->requires_grad = written_rg || (!t->no_grad && any && differentiable(r, m->s));
        if (r->requires_grad && !written_rg)
            alias_grad(t, m);
        return;
    }
    if (m->s->flags & SG_OPF_VIEW) { /* a view: its source's flag (under no_grad too: PyTorch's view made in
                                         no_grad mode requires grad where its base does, a leaf without a
                                         grad_fn, CreationMeta::NO_GRAD_MODE) */
        if (m->a[0].kind == SG_A_VALUE && g->vals[m->a[0].u.v].kind == SG_V_TENSOR) /* (views inherit it) */
            r->custom_view = g->vals[m->a[0].u.v].u.t.custom_view;
        return;
    }
    r->requires_grad = !t->no_grad && any && differentiable(r, m->s);
}

sg_status sg__tracer_function_inputs(const sg_tracer *t, const sg_value *ins, size_t nins, const char *name)
{
    bool any = false;
    for (size_t k = 0; k < nins; k++)
        any |= ins[k] < t->g->nvals && t->g->vals[ins[k]].kind == SG_V_TENSOR && sg__graph_rg_now(t->g, ins[k]);
    if (t->no_grad || !any || t->g->cur != 0)
        return SG_OK;
    for (size_t k = 0; k < nins; k++)
        if (ins[k] < t->g->nvals)
            CHAIN(moved_no_grad_view(t, name, ins[k]));
    return SG_OK;
}

sg_status sg__tracer_function(sg_tracer *t, uint32_t bw, const sg_value *outs, size_t nouts, const sg_value *ins,
                              size_t nins, const sg_value *saved, size_t nsaved, const uint32_t *grad_of,
                              size_t ngrad, unsigned line)
{
    sg__graph *g = t->g;
    if (bw >= g->nscopes || bw == 0 || g->scopes[bw].parent != g->cur || !g->scopes[bw].grads ||
        g->scopes[bw].output == SG_NOVAL)
        return sg__err(t->ctx, SG_EINVAL, "sg__tracer_function: no closed custom Function backward of this scope");
    bool any = false;
    for (size_t k = 0; k < nins; k++)
        any |= ins[k] < g->nvals && g->vals[ins[k]].kind == SG_V_TENSOR && sg__graph_rg_now(g, ins[k]);
    for (size_t k = 0; k < nins && any && !t->no_grad; k++) /* (apply asks its inputs for their grad_fn) */
        if (ins[k] < g->nvals && g->vals[ins[k]].kind == SG_V_TENSOR)
            g->vals[ins[k]].u.t.stale_fn = false;
    CHAIN(sg__graph_function(g, bw, outs, nouts, ins, nins, saved, nsaved, grad_of, ngrad, NULL, 0, line));
    for (size_t k = 0; k < nouts; k++) {
        sg__fake_tensor *r = &g->vals[outs[k]].u.t;
        r->requires_grad = !t->no_grad && any && (r->dtype == SG_FLOAT64 || r->dtype == SG_FLOAT32);
        r->leaf = !r->requires_grad;
        r->custom_view = r->requires_grad && r->base != SG_NOVAL;
    }
    return SG_OK;
}

sg_status sg_tracer_set_grad_enabled(sg_tracer *t, int enabled)
{
    if (!t)
        return SG_EINVAL;
    t->no_grad = !enabled;
    return SG_OK;
}

int sg_tracer_grad_enabled(const sg_tracer *t)
{
    return !t->no_grad;
}

const sg__opreg *sg__tracer_reg(const sg_tracer *t)
{
    return t->reg;
}

/* contiguous: self where it is contiguous (no node), else
 * clone(memory_format=torch.contiguous_format), as PyTorch decomposes it. */
sg_status sg__composite_contiguous(sg_tracer *t, sg__mcall *m, sg_value *out, unsigned line)
{
    sg_value self = m->a[0].u.v;
    bool same;
    sg_status s = sg__meta_is_contiguous(m, self, &same);
    if (s || same) {
        *out = self;
        return s;
    }
    sg_arg c[2] = {{.kind = SG_ARG_VALUE, .u.v = self},
                   {.kind = SG_ARG_MEMORY_FORMAT, .name = "memory_format", .u.memory_format = SG_CONTIGUOUS_FORMAT}};
    return sg_tracer_call(t, out, "clone", c, 2, line);
}

/* Calls of the decompositions below. */
static sg_status call_vv(sg_tracer *t, sg_value *out, const char *op, sg_value a, sg_value b, unsigned line)
{
    sg_arg x[2] = {{.kind = SG_ARG_VALUE, .u.v = a}, {.kind = SG_ARG_VALUE, .u.v = b}};
    return sg_tracer_call(t, out, op, x, 2, line);
}

static sg_status call_vi(sg_tracer *t, sg_value *out, const char *op, sg_value a, long i, long j, size_t nints,
                         unsigned line)
{
    sg_arg x[3] = {{.kind = SG_ARG_VALUE, .u.v = a},
                   {.kind = SG_ARG_INT, .u.e = sg__int_si(t->ctx, i)},
                   {.kind = SG_ARG_INT, .u.e = sg__int_si(t->ctx, j)}};
    if (!x[1].u.e || !x[2].u.e)
        return sg_ctx_last_error(t->ctx);
    return sg_tracer_call(t, out, op, x, 1 + nints, line);
}

static sg_status call_sizes(sg_tracer *t, sg_value *out, const char *op, sg_value a, const sg_expr *const *sizes,
                            size_t n, unsigned line)
{
    sg_arg x[2] = {{.kind = SG_ARG_VALUE, .u.v = a}, {.kind = SG_ARG_INTS, .u.ints = {n, sizes}}};
    return sg_tracer_call(t, out, op, x, 2, line);
}

/* The product of e[0 .. n) (NULL when memory runs out). */
static const sg_expr *product(sg_tracer *t, const sg_expr *const *e, size_t n)
{
    const sg_expr *p = t->ctx->one;
    for (size_t i = 0; i < n && p; i++)
        p = sg__mul(t->ctx, p, e[i]);
    return p;
}

/* out= of matmul: at::native::resize_output, o resized to shape[0 .. n)
 * where its sizes are not those (*out: o, or its resized next version). */
static sg_status resize_output(sg_tracer *t, sg__mcall *m, sg_value o, const sg_expr *const *shape, size_t n,
                               sg_value *out, unsigned line)
{
    sg__graph *g = t->g;
    bool same = g->vals[o].u.t.ndim == n;
    for (size_t d = 0; d < n && same; d++)
        if (shape[d] != sg__graph_size(g, o, d))
            CHAIN(sg__meta_eval(m, &same, sg__meta_rel(m, SG_REL_EQ, shape[d], sg__graph_size(g, o, d))));
    if (same) {
        *out = o;
        return SG_OK;
    }
    return call_sizes(t, out, "resize_", o, shape, n, line);
}

/* op(x, y, out=target.reshape(fold[0 .. nf))): written through a view of
 * target where the reshape views it (*out: target), else into a copy that
 * is viewed back and copied in (*out: what copy_ gives). */
static sg_status write_folded(sg_tracer *t, sg__mcall *m, const char *op, sg_value x, sg_value y, sg_value target,
                              const sg_expr *const *fold, size_t nf, sg_value *out, unsigned line)
{
    sg__graph *g = t->g;
    sg_value into, r, back;
    bool viewed;
    CHAIN(reshape_to_viewed(t, m, target, fold, nf, &into, &viewed, line));
    sg_arg a[3] = {{.kind = SG_ARG_VALUE, .u.v = x}, {.kind = SG_ARG_VALUE, .u.v = y},
                   {.kind = SG_ARG_VALUE, .name = "out", .u.v = into}};
    CHAIN(sg_tracer_call(t, &r, op, a, 3, line));
    if (viewed) {
        *out = target;
        return SG_OK;
    }
    const sg_expr *sizes[SG_MAX_DIMS];
    size_t n = g->vals[target].u.t.ndim;
    for (size_t d = 0; d < n; d++)
        sizes[d] = sg__graph_size(g, target, d);
    CHAIN(call_sizes(t, &back, "view", r, sizes, n, line));
    return call_vv(t, out, "copy_", target, back, line);
}

/* matmul as PyTorch 1.13 decomposes it (at::native::_matmul_impl): dot,
 * mv, mm; a batch of the larger operand folded into mm or mv where the other
 * is a vector or a matrix (transposed when the batch is on the right); else
 * both operands expanded to the broadcast batch, reshaped to 3-D, bmm, and
 * viewed back. With out= (o not SG_NOVAL) the last call is the .out
 * overload: dot, mv and mm write o; the folded and batched forms resize o to
 * the result's sizes where they differ (resize_), and write a reshape of o
 * (of its transpose where the batch is on the right), copied back into o
 * where that reshape is a copy. */
static sg_status matmul_impl(sg_tracer *t, sg__mcall *m, sg_value a, sg_value b, sg_value o, sg_value *out,
                             unsigned line)
{
    sg__graph *g = t->g;
    size_t da = g->vals[a].u.t.ndim, db = g->vals[b].u.t.ndim;
    bool has_out = o != SG_NOVAL;
    sg_status s;
    if (da == 0 || db == 0)
        return sg__meta_shape_error(m, "both arguments to matmul need to be at least 1D");
    if (has_out && !t->no_grad) { /* resize_output is below autograd: the kernel's own refusal comes first */
        const char *last = da > 2 && db > 2 ? "bmm" : da == 1 && db == 1 ? "dot" : da == 1 || db == 1 ? "mv" : "mm";
        if (da == 1 && db == 2)
            last = "mm"; /* a.unsqueeze(0) times a matrix */
        sg_value v3[3] = {a, b, o};
        for (int i = 0; i < 3; i++)
            if (g->vals[v3[i]].u.t.requires_grad)
                return sg__err(t->ctx, SG_EAUTOGRAD, "%s.out: functions with out=... arguments don't support automatic "
                                                     "differentiation, but one of the arguments requires grad", last);
    }
    sg_arg x[3] = {{.kind = SG_ARG_VALUE, .u.v = a}, {.kind = SG_ARG_VALUE, .u.v = b},
                   {.kind = SG_ARG_VALUE, .name = "out", .u.v = o}};
    const char *small = da == 1 && db == 1 ? "dot" : da == 2 && db == 1 ? "mv" : da <= 2 && db == 2 ? "mm" : NULL;
    if (small && !(da == 1 && db == 2)) {
        char name[8];
        snprintf(name, sizeof name, "%s%s", small, has_out ? ".out" : "");
        return sg_tracer_call(t, out, name, x, 2 + has_out, line);
    }
    sg_value u, r;
    if (da == 1 && db == 2) { /* a.unsqueeze(0).mm(b).squeeze_(0), the mm writing o with out= */
        if ((s = call_vi(t, &u, "unsqueeze", a, 0, 0, 1, line)))
            return s;
        x[0].u.v = u;
        if ((s = sg_tracer_call(t, &r, has_out ? "mm.out" : "mm", x, 2 + has_out, line)))
            return s;
        return call_vi(t, out, "squeeze_.dim", r, 0, 0, 1, line);
    }
    const sg_expr *shape[SG_MAX_DIMS + 1], *fold[2];
    if (db <= 2 || da <= 2) { /* fold the batch of the larger operand into mm or mv */
        bool transpose = db > da;
        sg_value t1 = a, t2 = b;
        if (transpose) { /* t1 = b.mT, t2 = a.t() (a matrix) or a */
            if ((s = call_vi(t, &t1, "transpose.int", b, -2, -1, 2, line)))
                return s;
            t2 = a;
            if (da == 2 && (s = sg_tracer_call(t, &t2, "t", (sg_arg[]){{.kind = SG_ARG_VALUE, .u.v = a}}, 1, line)))
                return s;
        }
        size_t n1 = g->vals[t1].u.t.ndim, n = 0;
        for (size_t d = 0; d + 1 < n1; d++)
            shape[n++] = sg__graph_size(g, t1, d);
        bool matrix = g->vals[t2].u.t.ndim == 2;
        if (!(fold[0] = product(t, shape, n)))
            return sg_ctx_last_error(t->ctx);
        fold[1] = sg__graph_size(g, t1, n1 - 1);
        if (matrix)
            shape[n++] = sg__graph_size(g, t2, 1);
        sg_value folded, o2;
        if ((s = reshape_to(t, m, t1, fold, 2, &folded, line)))
            return s;
        if (has_out) { /* o resized to the result's sizes; its transpose written where the batch is on the right */
            const sg_expr *want[SG_MAX_DIMS + 1], *fold_out[2] = {fold[0], matrix ? shape[n - 1] : NULL};
            memcpy(want, shape, n * sizeof *want);
            if (transpose && matrix) {
                want[n - 2] = shape[n - 1];
                want[n - 1] = shape[n - 2];
            }
            sg_value target, written;
            if ((s = resize_output(t, m, o, want, n, &o2, line)))
                return s;
            target = o2;
            if (transpose && matrix && (s = call_vi(t, &target, "transpose.int", o2, -2, -1, 2, line)))
                return s;
            if ((s = write_folded(t, m, matrix ? "mm.out" : "mv.out", folded, t2, target, fold_out, 1 + matrix,
                                  &written, line)))
                return s;
            *out = transpose && matrix ? o2 : written;
            return SG_OK;
        }
        sg_value ov;
        if ((s = call_vv(t, &r, matrix ? "mm" : "mv", folded, t2, line)) ||
            (s = call_sizes(t, &ov, "_unsafe_view", r, shape, n, line)))
            return s;
        if (!transpose || !matrix) {
            *out = ov;
            return SG_OK;
        }
        sg_value back; /* output.mT().contiguous() */
        if ((s = call_vi(t, &back, "transpose.int", ov, -2, -1, 2, line)))
            return s;
        return sg_tracer_call(t, out, "contiguous", (sg_arg[]){{.kind = SG_ARG_VALUE, .u.v = back}}, 1, line);
    }
    /* batched: expand both to the broadcast batch, reshape to 3-D, bmm */
    const sg_expr *batch[SG_MAX_DIMS], *ea[SG_MAX_DIMS], *eb[SG_MAX_DIMS], *three[3];
    size_t ba = da - 2, bb = db - 2, nb = ba > bb ? ba : bb;
    for (size_t i = 0; i < nb; i++) {
        const sg_expr *xs = i + ba >= nb ? sg__graph_size(g, a, i + ba - nb) : NULL;
        const sg_expr *ys = i + bb >= nb ? sg__graph_size(g, b, i + bb - nb) : NULL;
        bool xone = !xs, yone = !ys;
        if (xs && ys && xs != ys) {
            if ((s = sg__meta_eval_oblivious(m, &xone, sg__meta_rel(m, SG_REL_EQ, xs, t->ctx->one))))
                return s;
            if (!xone && (s = sg__meta_eval_oblivious(m, &yone, sg__meta_rel(m, SG_REL_EQ, ys, t->ctx->one))))
                return s;
            if (!xone && !yone &&
                (s = sg__meta_check(m, sg__meta_rel(m, SG_REL_EQ, xs, ys), "the batch sizes must broadcast")))
                return s;
        }
        batch[i] = xone ? ys : xs;
    }
    const sg_expr *bprod = product(t, batch, nb);
    if (!bprod)
        return sg_ctx_last_error(t->ctx);
    sg_value xa, xb, va, vb;
    for (int k = 0; k < 2; k++) {
        sg_value v = k ? b : a;
        const sg_expr **e = k ? eb : ea;
        size_t dv = k ? db : da;
        memcpy(e, batch, nb * sizeof *e);
        e[nb] = sg__graph_size(g, v, dv - 2);
        e[nb + 1] = sg__graph_size(g, v, dv - 1);
        three[0] = bprod;
        three[1] = e[nb];
        three[2] = e[nb + 1];
        sg_value *xv = k ? &xb : &xa, *vw = k ? &vb : &va;
        if ((s = call_sizes(t, xv, "expand", v, e, nb + 2, line)) || (s = reshape_to(t, m, *xv, three, 3, vw, line)))
            return s;
    }
    memcpy(shape, batch, nb * sizeof *shape);
    shape[nb] = ea[nb];
    shape[nb + 1] = eb[nb + 1];
    if (has_out) {
        const sg_expr *fold_out[3] = {bprod, ea[nb], eb[nb + 1]};
        sg_value o2;
        if ((s = resize_output(t, m, o, shape, nb + 2, &o2, line)))
            return s;
        return write_folded(t, m, "bmm.out", va, vb, o2, fold_out, 3, out, line);
    }
    if ((s = call_vv(t, &r, "bmm", va, vb, line)))
        return s;
    return call_sizes(t, out, "_unsafe_view", r, shape, nb + 2, line);
}

sg_status sg__composite_matmul(sg_tracer *t, sg__mcall *m, sg_value *out, unsigned line)
{
    return matmul_impl(t, m, m->a[0].u.v, m->a[1].u.v, SG_NOVAL, out, line);
}

sg_status sg__composite_matmul_out(sg_tracer *t, sg__mcall *m, sg_value *out, unsigned line)
{
    return matmul_impl(t, m, m->a[0].u.v, m->a[1].u.v, m->a[2].u.v, out, line);
}

static sg_status call_in_scope(sg_tracer *t, sg_value *out, const char *op, const sg__schema *sch,
                               const sg_arg *args, size_t nargs, unsigned line, uint8_t flags);

/* In a subgraph: the arguments as values of the current scope (what an
 * enclosing scope gives is lifted) and every symbol of their expressions
 * bound in it. local and vals have room for nargs arguments and
 * SG_MAX_DIMS values each. Lifted placeholders stay even if the call
 * then fails (they are inputs of the subgraph, valid on their own). */
static sg_status lift_args(sg_tracer *t, const sg_arg *args, size_t nargs, sg_arg *local, sg_value (*vals)[SG_MAX_DIMS],
                           const sg_expr *(*ints)[SG_MAX_DIMS])
{
    uint32_t s = t->g->cur;
    sg_status st = SG_OK;
    for (size_t i = 0; i < nargs && !st; i++) {
        local[i] = args[i];
        switch (args[i].kind) {
        case SG_ARG_VALUE:
            st = sg__tracer_lift(t, s, args[i].u.v, NULL, &local[i].u.v);
            break;
        case SG_ARG_VALUES:
            if (args[i].u.values.n > SG_MAX_DIMS)
                return sg__err(t->ctx, SG_ELIMIT, "%zu values in one argument", args[i].u.values.n);
            for (size_t k = 0; k < args[i].u.values.n && !st; k++)
                st = sg__tracer_lift(t, s, args[i].u.values.v[k], NULL, &vals[i][k]);
            local[i].u.values.v = vals[i];
            break;
        case SG_ARG_INT: /* replaced as the environment settled it, then lifted */
            st = args[i].u.e ? sg__tracer_lift_expr(t, s, &local[i].u.e) : SG_OK;
            break;
        case SG_ARG_INTS:
            if (args[i].u.ints.n > SG_MAX_DIMS)
                return sg__err(t->ctx, SG_ELIMIT, "%zu ints in one argument", args[i].u.ints.n);
            for (size_t k = 0; k < args[i].u.ints.n && !st; k++) {
                ints[i][k] = args[i].u.ints.e[k];
                st = sg__tracer_lift_expr(t, s, &ints[i][k]);
            }
            local[i].u.ints.e = ints[i];
            break;
        default:
            break;
        }
    }
    return st;
}

/* The operator's name for a message: op, or sch's full name into buf. */
static const char *op_name(const char *op, const sg__schema *sch, char *buf)
{
    if (op)
        return op;
    sg__schema_full_name(sch, buf);
    return buf;
}

/* sg_tracer_call of op, whose schema is sch (NULL: found by name; op may
 * be NULL where sch is given: its full name then, made only for a message). */
static sg_status tracer_call(sg_tracer *t, sg_value *out, const char *op, const sg__schema *sch, const sg_arg *args,
                             size_t nargs, unsigned line, uint8_t flags)
{
    char name[2 * SG_SCHEMA_NAME];
    if (!t)
        return SG_EINVAL;
    if (!out || (!op && !sch) || (nargs && !args))
        return sg__err(t->ctx, SG_EINVAL, "sg_tracer_call: NULL argument");
    *out = SG_NOVAL;
    if (t->done)
        return sg__err(t->ctx, SG_EINVAL, "%s: a call after the output", op_name(op, sch, name));
    if (t->g->cur) { /* a subgraph: lift what the arguments take from outside */
        sg_arg local[SG_SCHEMA_ARGS + 4];
        sg_value vals[SG_SCHEMA_ARGS + 4][SG_MAX_DIMS];
        const sg_expr *ints[SG_SCHEMA_ARGS + 4][SG_MAX_DIMS];
        if (nargs > SG_SCHEMA_ARGS + 4)
            return sg__err(t->ctx, SG_EINVAL, "%s: too many arguments", op_name(op, sch, name));
        sg_status st = lift_args(t, args, nargs, local, vals, ints);
        if (st)
            return st;
        return call_in_scope(t, out, op, sch, local, nargs, line, flags);
    }
    return call_in_scope(t, out, op, sch, args, nargs, line, flags);
}

sg_status sg_tracer_call(sg_tracer *t, sg_value *out, const char *op, const sg_arg *args, size_t nargs, unsigned line)
{
    return tracer_call(t, out, op, NULL, args, nargs, line, 0);
}

sg_status sg__tracer_call_node(sg_tracer *t, sg_value *out, const char *op, const sg__schema *sch, const sg_arg *args,
                               size_t nargs, unsigned line, uint8_t flags)
{
    if (!t)
        return SG_EINVAL;
    if (sch) {
        const sg__schema *first = sg__opreg_at(t->reg, 0);
        if (sch < first || sch >= first + sg__opreg_count(t->reg))
            return sg__err(t->ctx, SG_EINVAL, "sg_tracer_call: a schema not of the tracer's registry");
        op = NULL; /* its name is made where a message needs it */
    }
    return tracer_call(t, out, op, sch, args, nargs, line, flags);
}

/* Does value v (a tensor, or a list of them: unbind's) require grad? */
static bool rg_any(const sg__graph *g, uint32_t v)
{
    if (g->vals[v].kind == SG_V_TENSOR)
        return g->vals[v].u.t.requires_grad;
    for (uint32_t k = 0; g->vals[v].kind == SG_V_LIST && k < g->vals[v].u.list.n; k++)
        if (g->vals[g->ids[g->vals[v].u.list.off + k]].kind == SG_V_TENSOR &&
            g->vals[g->ids[g->vals[v].u.list.off + k]].u.t.requires_grad)
            return true;
    return false;
}

/* A call autograd records (grad enabled, an argument that requires grad)
 * asks each tensor argument for its grad_fn (collect_next_edges): a view's
 * made again there, no longer stale_fn. */
static void ask_grad_fns(sg__graph *g, const sg__mcall *m)
{
    for (int i = 0; i < m->s->nargs; i++) {
        const sg__garg *a = &m->a[i];
        if (a->kind == SG_A_VALUE && g->vals[a->u.v].kind == SG_V_TENSOR)
            g->vals[a->u.v].u.t.stale_fn = false;
        for (uint32_t k = 0; a->kind == SG_A_VALUES && k < a->u.list.n; k++)
            if (g->vals[g->ids[a->u.list.off + k]].kind == SG_V_TENSOR)
                g->vals[g->ids[a->u.list.off + k]].u.t.stale_fn = false;
    }
}

/* A recorded node: its versions noted (note_versions), its unbacked
 * symbols as bound in its scope. */
static sg_status recorded(void *ud, const sg__mcall *m, uint32_t v)
{
    sg_tracer *t = ud;
    if (!t->no_grad && !(m->flags & SG_NODE_DATA) && v < t->g->nvals && rg_any(t->g, v))
        ask_grad_fns(t->g, m);
    if (tags_of(m->s) & SG_T_IMPLICIT) /* (its own checks passed: the rule's) */
        CHAIN(moved_no_grad_views(t, m));
    CHAIN(note_versions(t, (uint32_t)t->g->nnodes - 1));
    return m->nbinds ? sg__tracer_note_binds(ud, v, m->binds, m->nbinds) : SG_OK;
}

/* The full name of schema s ("mul.Tensor") into out, made once per
 * operator row and then copied (every call asks it). */
static void full_name(sg_tracer *t, const sg__schema *s, char *out)
{
    if (s->op < SG_OP_COUNT && !t->opnames)
        t->opnames = sg__calloc(t->ctx, SG_OP_COUNT, sizeof *t->opnames); /* NULL: made each time below */
    if (s->op >= SG_OP_COUNT || !t->opnames) {
        sg__schema_full_name(s, out);
        return;
    }
    char *name = t->opnames[s->op];
    if (!name[0])
        sg__schema_full_name(s, name);
    memcpy(out, name, sizeof *t->opnames);
}

static sg_status call_in_scope(sg_tracer *t, sg_value *out, const char *op, const sg__schema *sch,
                               const sg_arg *args, size_t nargs, unsigned line, uint8_t flags)
{
    if (!sch)
        sch = sg__opreg_find(t->reg, op);
    const sg__opinfo *info = sch ? sg__op_info(sch->op) : NULL;
    sg__composite_fn comp = info ? info->composite : NULL;
    sg__mcall m; /* field by field: clearing its 500 bytes for every call costs more than the rule of an add;
                    bind sets a[i] and given[i] for each of the schema's arguments, the rest is read by count */
    m.g = t->g;
    m.env = t->env;
    m.s = sch;
    m.nbinds = m.nasserts = 0;
    m.rg = 0;
    m.flags = (uint8_t)(flags | (t->no_grad ? SG_NODE_NO_GRAD : 0)); /* a composite's calls get none, but grad mode's */
    if (!info || (!info->rule && !comp))
        return sg__err(t->ctx, SG_EUNSUPPORTED, "unsupported: operator %s", sch ? op_name(op, sch, m.op) : op);
    full_name(t, sch, m.op);
    sg__graph_mark k = sg__graph_mark_take(t->g);
    uint32_t v = SG_NOVAL;
    sg_status s = bind(&m, args, nargs);
    if (comp) { /* its parts are calls of their own: on an error, none stays */
        if (!s)
            s = comp(t, &m, &v, line);
        if (s)
            sg__graph_restore(t->g, k);
    } else if (s) {
        sg__graph_restore(t->g, k);
    } else {
        const sg__record_hooks hooks = {t, autograd_check, propagate_grad, recorded};
        s = sg__record_bound(&m, k, &hooks, line, &v);
    }
    if (s) {
        *out = SG_NOVAL;
        return s;
    }
    t->called = true;
    *out = v;
    return SG_OK;
}

sg_status sg_tracer_check(sg_tracer *t, const sg_expr *cond, unsigned line)
{
    if (!t)
        return SG_EINVAL;
    if (!cond || sg_expr_sort(cond) != SG_SORT_BOOL)
        return sg__err(t->ctx, SG_EINVAL, "torch._check: not a boolean expression");
    if (t->done)
        return sg__err(t->ctx, SG_EINVAL, "torch._check after the output");
    if (t->g->cur) {
        sg_status st = sg__tracer_lift_expr(t, t->g->cur, &cond);
        if (st)
            return st;
    }
    sg_truth known;
    sg_status s = sg_env_known(t->env, &known, cond);
    if (s)
        return s;
    if (known == SG_TRUE)
        return SG_OK;
    size_t nasserts = sg_env_nasserts(t->env);
    if ((s = sg_env_check(t->env, cond, NULL)))
        return s;
    if (sg_env_nasserts(t->env) == nasserts)
        return SG_OK; /* guarded (backed), not a runtime assert */
    sg__graph_mark k = sg__graph_mark_take(t->g);
    if ((s = sg__graph_assert(t->g, cond, line)))
        sg__graph_restore(t->g, k);
    return s;
}

sg_status sg_tracer_output(sg_tracer *t, const sg_value *vals, size_t n)
{
    if (!t)
        return SG_EINVAL;
    if ((n && !vals) || t->done)
        return sg__err(t->ctx, SG_EINVAL, "tracer output: NULL values, or a second output");
    if (t->g->cur)
        return sg__err(t->ctx, SG_EINVAL, "tracer output: a subgraph is still open (%s)",
                       t->g->scopes[t->g->cur].name);
    for (size_t i = 0; i < n; i++)
        if (vals[i] >= t->g->nvals || t->g->vals[vals[i]].node == SG_NOVAL)
            return sg__err(t->ctx, SG_EINVAL, "tracer output: output %zu is not a value of a node", i);
    sg_status s = sg__graph_output(t->g, vals, n);
    if (!s)
        t->done = true;
    return s;
}

sg_status sg_tracer_output_subclass(sg_tracer *t, size_t first, size_t n, const char *kind)
{
    if (!t)
        return SG_EINVAL;
    const char *k = traced_kind(kind);
    size_t nout = t->done ? t->g->nodes[t->g->scopes[0].output].nargs : 0;
    if (!t->done || !k || !n || n > SG__TSUB_MAX || first > nout || n > nout - first)
        return sg__err(t->ctx, SG_EINVAL, "tracer output subclass: no output yet, an unknown kind or outputs "
                       "beyond the %zu recorded", nout);
    sg__tsub sub = {.n = (uint32_t)n, .kind = k};
    for (size_t j = 0; j < n; j++)
        sub.v[j] = (uint32_t)(first + j);
    return add_sub(t, &t->subout, &t->nsubout, &t->capsubout, sub);
}

/* ---- reading values ---- */

sg_value_kind sg_tracer_kind(const sg_tracer *t, sg_value v)
{
    switch ((sg__vkind)t->g->vals[v].kind) {
    case SG_V_TENSOR: return SG_VALUE_TENSOR;
    case SG_V_SYMINT: return SG_VALUE_INT;
    case SG_V_SYMBOOL: return SG_VALUE_BOOL;
    case SG_V_FLOAT: return SG_VALUE_FLOAT;
    case SG_V_NONE: return SG_VALUE_NONE;
    case SG_V_LIST: return SG_VALUE_LIST;
    }
    return SG_VALUE_NONE;
}

size_t sg_tracer_ndim(const sg_tracer *t, sg_value v)
{
    return t->g->vals[v].u.t.ndim;
}

const sg_expr *sg_tracer_size(const sg_tracer *t, sg_value v, size_t d)
{
    return sg__graph_size(t->g, v, d);
}

const sg_expr *sg_tracer_stride(const sg_tracer *t, sg_value v, size_t d)
{
    return sg__graph_stride(t->g, v, d);
}

const sg_expr *sg_tracer_offset(const sg_tracer *t, sg_value v)
{
    return t->g->vals[v].u.t.offset;
}

sg_dtype sg_tracer_dtype(const sg_tracer *t, sg_value v)
{
    return (sg_dtype)t->g->vals[v].u.t.dtype;
}

const sg_expr *sg_tracer_expr(const sg_tracer *t, sg_value v)
{
    return t->g->vals[v].u.e;
}

size_t sg_tracer_list_len(const sg_tracer *t, sg_value v)
{
    return t->g->vals[v].u.list.n;
}

sg_value sg_tracer_list_get(const sg_tracer *t, sg_value v, size_t i)
{
    return t->g->ids[t->g->vals[v].u.list.off + i];
}

int sg_tracer_same_storage(const sg_tracer *t, sg_value a, sg_value b)
{
    return t->g->vals[a].u.t.storage == t->g->vals[b].u.t.storage;
}

sg__tsig sg__tracer_signature(const sg_tracer *t)
{
    return (sg__tsig){t->subin, t->subout, t->nsubin, t->nsubout, t->dups, t->ndups};
}

const sg__graph *sg__tracer_graph(const sg_tracer *t)
{
    return t->g;
}

/* Are a and b the same integer or boolean: as the environment proves, or,
 * where its reasoning cannot (a Max over a fact it keeps in another form),
 * at the hints of their symbols, where the trace was checked? A symbol
 * without a hint (unbacked) must be proved. */
sg_status sg__known_same(sg_env *env, const sg_expr *a, const sg_expr *b, bool *out)
{
    *out = a == b;
    if (*out || !a || !b)
        return SG_OK;
    const sg_expr *eq, *ha, *hb;
    sg_truth t;
    sg_status s = sg_expr_rel(sg_env_ctx(env), &eq, SG_REL_EQ, a, b);
    if (!s)
        s = sg_env_known(env, &t, eq);
    if (s || (*out = t == SG_TRUE))
        return s;
    if ((s = sg_env_hint(env, &ha, a)) || (s = sg_env_hint(env, &hb, b)))
        return s == SG_ENOMEM ? s : SG_OK; /* no hint: not the same */
    *out = ha == hb;
    return SG_OK;
}

/* Value b of the replayed graph is value a of the traced one: same kind,
 * dtype and rank, and sizes, strides and offset the environment proves
 * equal (a rule run again at the end of the trace may fold further with
 * what the later guards taught; it may not give another layout). */
static sg_status same_value(const sg__graph *g, uint32_t a, const sg__graph *h, uint32_t b, uint32_t node)
{
    const sg__gval *x = &g->vals[a], *y = &h->vals[b];
    const char *what = NULL;
    const sg_expr *ex = NULL, *ey = NULL; /* the two forms that differ */
    bool same = x->kind == y->kind;
    sg_status s = SG_OK;
    if (!same)
        what = "kind";
    else if (x->kind == SG_V_TENSOR) {
        same = x->u.t.ndim == y->u.t.ndim && x->u.t.dtype == y->u.t.dtype;
        what = "dtype or rank";
        for (uint32_t k = 0; same && !s && k < 2u * x->u.t.ndim; k++) {
            ex = g->exprs[x->u.t.dims + k];
            ey = h->exprs[y->u.t.dims + k];
            s = sg__known_same(g->env, ex, ey, &same);
            what = k < x->u.t.ndim ? "a size" : "a stride";
        }
        if (same && !s) {
            ex = x->u.t.offset;
            ey = y->u.t.offset;
            s = sg__known_same(g->env, ex, ey, &same);
            what = "the storage offset";
        }
    } else if (x->kind == SG_V_SYMINT || x->kind == SG_V_SYMBOOL) {
        ex = x->u.e;
        ey = y->u.e;
        s = sg__known_same(g->env, ex, ey, &same);
        what = "the value";
    } else if (x->kind == SG_V_LIST) {
        same = x->u.list.n == y->u.list.n;
        what = "the length";
        for (uint32_t k = 0; same && !s && k < x->u.list.n; k++)
            s = same_value(g, g->ids[x->u.list.off + k], h, h->ids[y->u.list.off + k], node);
        return s;
    }
    if (s || same)
        return s;
    char *ta = NULL, *tb = NULL;
    if (ex && ey && (sg_print(g->ctx, &ta, ex, SG_FMT_PYTHON) || sg_print(g->ctx, &tb, ey, SG_FMT_PYTHON))) {
        sg_free(ta);
        return sg_ctx_last_error(g->ctx);
    }
    s = sg__err(g->ctx, SG_EINTERNAL, "verify: node %u (%s) gives another value once replayed: %s differs (%s, then %s)",
                node, g->nodes[node].schema->name, what, ta ? ta : "?", tb ? tb : "?");
    sg_free(ta);
    sg_free(tb);
    return s;
}

static sg_status verify_node(sg__replay *r, void *ud, uint32_t node, const sg__garg *args, size_t nargs)
{
    (void)ud;
    uint32_t v;
    sg_status s = sg__replay_default(r, node, args, nargs, &v);
    uint32_t of = sg__replay_src(r)->nodes[node].out;
    if (s || of == SG_NOVAL)
        return s;
    return same_value(sg__replay_src(r), of, sg__replay_dst(r), v, node);
}

void sg_tracer_lint_sizes(sg_tracer *t, int on)
{
    if (t)
        t->g->lint_sizes = on != 0;
}

sg_status sg_tracer_verify(sg_tracer *t)
{
    if (!t)
        return SG_EINVAL;
    sg_status s = sg__graph_lint(t->g);
    if (s)
        return s;
    sg_env_mark mark;
    sg_env_mark_take(t->env, &mark);
    sg__graph *copy = NULL;
    char why[512];
    s = sg__graph_new(t->env, &copy);
    if (!s && (s = sg__graph_replay(t->g, copy, verify_node, NULL)) && s != SG_EINTERNAL) {
        snprintf(why, sizeof why, "%s", sg_ctx_last_error_msg(t->ctx));
        s = sg__err(t->ctx, SG_EINTERNAL, "verify: the graph does not replay: %s", why);
    }
    if (!s && (s = sg__graph_lint(copy))) {
        snprintf(why, sizeof why, "%s", sg_ctx_last_error_msg(t->ctx));
        s = sg__err(t->ctx, SG_EINTERNAL, "verify: the replayed graph: %s", why);
    }
    sg__graph_free(copy);
    sg_status r = sg_env_mark_restore(t->env, &mark);
    return s ? s : r;
}

sg_status sg_tracer_print(sg_tracer *t, char **out)
{
    if (!t || !out)
        return SG_EINVAL;
    return sg__graph_print(t->g, out);
}

sg_status sg_tracer_print_dot(sg_tracer *t, char **out)
{
    if (!t || !out)
        return SG_EINVAL;
    return sg__graph_dot(t->g, out);
}

sg_status sg_tracer_ops(sg_tracer *t, char **out)
{
    if (!t || !out)
        return SG_EINVAL;
    return sg__graph_ops(t->g, out);
}
