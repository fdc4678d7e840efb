/* exec: the public API (shapeguard/exec.h). Concrete tensors are the
 * layer's own (sg_tensor is sg__xtensor); a run is an sg__xrun with the
 * tracer whose graph it runs, whose root placeholders it binds by name or
 * position and whose values it gives back as tensors and numbers. */
#include <string.h>

#include "exec/exec_private.h"

struct sg_run {
    sg_ctx *ctx;
    const sg_tracer *t;
    const sg__graph *g;
    sg__xrun *x;
};

/* ---- tensors ---- */

sg_status sg_tensor_new(sg_ctx *ctx, sg_tensor **out, sg_dtype dtype, size_t ndim, const int64_t *sizes)
{
    if (!ctx || !out || (ndim && !sizes))
        return ctx ? sg__err(ctx, SG_EINVAL, "sg_tensor_new: NULL") : SG_EINVAL;
    *out = NULL;
    if ((unsigned)dtype > SG_BOOL)
        return sg__err(ctx, SG_EINVAL, "sg_tensor_new: dtype %d", (int)dtype);
    if (ndim > SG_MAX_DIMS)
        return sg__err(ctx, SG_EINVAL, "sg_tensor_new: %zu dimensions (at most %d)", ndim, SG_MAX_DIMS);
    for (size_t d = 0; d < ndim; d++)
        if (sizes[d] < 0)
            return sg__err(ctx, SG_EINVAL, "sg_tensor_new: size %lld", (long long)sizes[d]);
    return sg__xt_new(ctx, out, dtype, ndim, sizes);
}

sg_status sg_tensor_view(sg_ctx *ctx, sg_tensor **out, sg_tensor *base, size_t ndim, const int64_t *sizes,
                         const int64_t *strides, int64_t offset)
{
    if (!ctx || !out || !base || (ndim && (!sizes || !strides)))
        return ctx ? sg__err(ctx, SG_EINVAL, "sg_tensor_view: NULL") : SG_EINVAL;
    *out = NULL;
    if (ndim > SG_MAX_DIMS)
        return sg__err(ctx, SG_EINVAL, "sg_tensor_view: %zu dimensions (at most %d)", ndim, SG_MAX_DIMS);
    CHAIN(sg__xt_view(ctx, out, base->st, base->ver, ndim, sizes, strides, offset));
    (*out)->requires_grad = base->requires_grad;
    return SG_OK;
}

void sg_tensor_ref(sg_tensor *t)
{
    if (t)
        sg__xt_ref(t);
}

void sg_tensor_unref(sg_tensor *t)
{
    sg__xt_unref(t);
}

sg_dtype sg_tensor_dtype(const sg_tensor *t)
{
    return (sg_dtype)t->dtype;
}

size_t sg_tensor_ndim(const sg_tensor *t)
{
    return t->ndim;
}

int64_t sg_tensor_size(const sg_tensor *t, size_t d)
{
    return t->sizes[d];
}

int64_t sg_tensor_stride(const sg_tensor *t, size_t d)
{
    return t->strides[d];
}

int64_t sg_tensor_offset(const sg_tensor *t)
{
    return t->offset;
}

int64_t sg_tensor_numel(const sg_tensor *t)
{
    return sg__xt_numel(t);
}

int64_t sg_tensor_storage_numel(const sg_tensor *t)
{
    return t->st->numel;
}

uint64_t sg_tensor_version(const sg_tensor *t)
{
    return t->ver->n;
}

int sg_tensor_same_storage(const sg_tensor *a, const sg_tensor *b)
{
    return a->st == b->st;
}

int sg_tensor_requires_grad(const sg_tensor *t)
{
    return t->requires_grad;
}

void sg_tensor_set_requires_grad(sg_tensor *t, int requires_grad)
{
    t->requires_grad = requires_grad != 0;
}

double sg_tensor_get_f(const sg_tensor *t, int64_t i)
{
    return sg__xt_get_f(t, i);
}

int64_t sg_tensor_get_i(const sg_tensor *t, int64_t i)
{
    return sg__xt_get_i(t, i);
}

void sg_tensor_set_f(sg_tensor *t, int64_t i, double v)
{
    sg__xt_set_f(t, i, v);
}

void sg_tensor_set_i(sg_tensor *t, int64_t i, int64_t v)
{
    sg__xt_set_i(t, i, v);
}

sg_status sg_tensor_print(sg_ctx *ctx, char **out, const sg_tensor *t)
{
    if (!ctx || !out || !t)
        return ctx ? sg__err(ctx, SG_EINVAL, "sg_tensor_print: NULL") : SG_EINVAL;
    return sg__xt_print(ctx, out, t);
}

/* ---- runs ---- */

sg_status sg_run_new(const sg_tracer *t, const sg_run *after, sg_run **out)
{
    if (!out)
        return SG_EINVAL;
    *out = NULL;
    if (!t)
        return SG_EINVAL;
    const sg__graph *g = sg__tracer_graph(t);
    sg_ctx *ctx = g->ctx;
    if (after && after->g->env != g->env)
        return sg__err(ctx, SG_EINVAL, "sg_run_new: the earlier run is over another environment");
    sg_run *r = sg__calloc(ctx, 1, sizeof *r);
    if (!r)
        return sg__nomem(ctx);
    r->ctx = ctx;
    r->t = t;
    r->g = g;
    sg_status s = sg__xrun_new(ctx, g, &r->x);
    if (!s && after)
        s = sg__xrun_bind_all(r->x, after->x);
    if (s) {
        sg_run_free(r);
        return s;
    }
    *out = r;
    return SG_OK;
}

void sg_run_free(sg_run *r)
{
    if (!r)
        return;
    sg__xrun_free(r->x);
    sg_free(r);
}

const sg_tracer *sg__run_tracer(const sg_run *r)
{
    return r->t;
}

sg__xrun *sg__run_xrun(const sg_run *r)
{
    return r->x;
}

size_t sg_run_ninputs(const sg_run *r)
{
    return r->g->scopes[0].nphs;
}

sg_value sg_run_input(const sg_run *r, size_t i)
{
    return r->g->nodes[r->g->scopes[0].phs[i]].out;
}

const char *sg_run_input_name(const sg_run *r, size_t i)
{
    return r->g->vals[sg_run_input(r, i)].name;
}

/* Is v a placeholder of the root graph? */
static bool root_input(const sg_run *r, sg_value v)
{
    const sg__graph *g = r->g;
    if (v >= g->nvals || g->vals[v].node == SG_NOVAL)
        return false;
    const sg__gnode *n = &g->nodes[g->vals[v].node];
    return n->kind == SG_N_PLACEHOLDER && n->scope == 0;
}

sg_status sg_run_set_tensor(sg_run *r, sg_value placeholder, sg_tensor *x)
{
    if (!r)
        return SG_EINVAL;
    if (!x)
        return sg__err(r->ctx, SG_EINVAL, "sg_run_set_tensor: NULL");
    if (!root_input(r, placeholder))
        return sg__err(r->ctx, SG_EINVAL, "run input: value %u is not an input of the graph", placeholder);
    sg__xval xv = {.kind = SG_XV_TENSOR, .u.t = x}; /* the run takes its own reference */
    return sg__xrun_input(r->x, placeholder, &xv);
}

sg_status sg_run_set_int(sg_run *r, sg_value placeholder, int64_t value)
{
    if (!r)
        return SG_EINVAL;
    if (!root_input(r, placeholder))
        return sg__err(r->ctx, SG_EINVAL, "run input: value %u is not an input of the graph", placeholder);
    sg__xval xv = {.kind = SG_XV_INT, .u.i = value};
    return sg__xrun_input(r->x, placeholder, &xv);
}

sg_status sg_run_set_base(sg_run *r, sg_value placeholder, const sg_tensor *base)
{
    if (!r)
        return SG_EINVAL;
    if (!base)
        return sg__err(r->ctx, SG_EINVAL, "sg_run_set_base: NULL");
    if (!root_input(r, placeholder) || r->g->vals[placeholder].kind != SG_V_TENSOR)
        return sg__err(r->ctx, SG_EINVAL, "run input: value %u is not a tensor input of the graph", placeholder);
    return sg__xrun_input_base(r->x, placeholder, base);
}

sg_status sg_run_set_named(sg_run *r, const char *name, sg_tensor *x)
{
    if (!r)
        return SG_EINVAL;
    if (!name)
        return sg__err(r->ctx, SG_EINVAL, "sg_run_set_named: NULL");
    for (size_t i = 0; i < sg_run_ninputs(r); i++) {
        sg_value v = sg_run_input(r, i);
        if (r->g->vals[v].kind == SG_V_TENSOR && !strcmp(r->g->vals[v].name, name))
            return sg_run_set_tensor(r, v, x);
    }
    return sg__err(r->ctx, SG_EINVAL, "run input: the graph has no tensor input %s", name);
}

sg_status sg_run_execute(sg_run *r)
{
    if (!r)
        return SG_EINVAL;
    CHAIN(sg__xrun_plan(r->x)); /* values die after their last use */
    return sg__xrun_rest(r->x);
}

/* The root's output node, or NULL before it is recorded. */
static const sg__gnode *output_node(const sg_run *r)
{
    uint32_t n = r->g->nscopes ? r->g->scopes[0].output : SG_NOVAL;
    return n == SG_NOVAL ? NULL : &r->g->nodes[n];
}

size_t sg_run_noutputs(const sg_run *r)
{
    const sg__gnode *n = output_node(r);
    return n ? n->nargs : 0;
}

sg_value sg_run_output(const sg_run *r, size_t i)
{
    const sg__gnode *n = output_node(r);
    return r->g->args[n->args + i].u.v;
}

sg_tensor *sg_run_tensor(const sg_run *r, sg_value v)
{
    const sg__xval *x = sg__xrun_value(r->x, v);
    return x->kind == SG_XV_TENSOR ? x->u.t : NULL;
}

sg_status sg_run_int(const sg_run *r, sg_value v, int64_t *out)
{
    if (!r || !out)
        return r ? sg__err(r->ctx, SG_EINVAL, "sg_run_int: NULL") : SG_EINVAL;
    const sg__xval *x = sg__xrun_value(r->x, v);
    switch (x->kind) {
    case SG_XV_INT:
        *out = x->u.i;
        return SG_OK;
    case SG_XV_BOOL:
        *out = x->u.b;
        return SG_OK;
    case SG_XV_UNSET:
        return sg__err(r->ctx, SG_EUNBOUND, "run: value %u has no value yet", v);
    default:
        return sg__err(r->ctx, SG_EINVAL, "run: value %u is not an int", v);
    }
}

sg_status sg_run_float(const sg_run *r, sg_value v, double *out)
{
    if (!r || !out)
        return r ? sg__err(r->ctx, SG_EINVAL, "sg_run_float: NULL") : SG_EINVAL;
    const sg__xval *x = sg__xrun_value(r->x, v);
    if (x->kind == SG_XV_FLOAT) {
        *out = x->u.f;
        return SG_OK;
    }
    if (x->kind == SG_XV_UNSET)
        return sg__err(r->ctx, SG_EUNBOUND, "run: value %u has no value yet", v);
    return sg__err(r->ctx, SG_EINVAL, "run: value %u is not a float", v);
}

sg_status sg_run_eval(sg_run *r, const sg_expr *e, int64_t *out)
{
    if (!r)
        return SG_EINVAL;
    if (!e || !out)
        return sg__err(r->ctx, SG_EINVAL, "sg_run_eval: NULL");
    return sg__xrun_eval(r->x, e, out);
}

int sg_run_symbol(const sg_run *r, const sg_expr *sym, int64_t *out)
{
    return sym && sg__xrun_sym(r->x, sym, out);
}
