/* The walker (walk_private.h): reading walker values (their truth, ints),
 * turning them into arguments of aten calls, and graph values into walker
 * values. */
#include <stdio.h>

#include "front/walk_private.h"

/* ---- reading values ---- */

const char *sg__w_kind_name(const wv *v)
{
    static const char *const names[] = {"None",  "bool",     "int",   "float",  "Tensor", "tuple",    "list",
                                        "function", "builtin", "method", "dtype", "context", "slice", "Ellipsis",
                                        "type", "function", "FunctionCtx", "method"};
    return v->kind < sizeof names / sizeof *names ? names[v->kind] : "?";
}

/* The truth of a boolean expression: a constant, or asked of the
 * environment (a guard in a trace; data-dependent if it needs an unbacked
 * value). */
sg_status sg__w_truth_of(sg_walk *W, const sg__py *at, const sg_expr *e, bool *out)
{
    if (sg_expr_op(e) == SG_OP_TRUE || sg_expr_op(e) == SG_OP_FALSE) {
        *out = sg_expr_op(e) == SG_OP_TRUE;
        return SG_OK;
    }
    int b;
    char prov[32];
    snprintf(prov, sizeof prov, "line %u", W->line);
    sg_status s = sg_env_evaluate(sg__w_env(W), &b, e, prov);
    if (s == SG_EDATADEP) {
        char *txt = NULL;
        if (sg_print(W->ctx, &txt, e, SG_FMT_PYTHON) != SG_OK)
            txt = NULL;
        s = sg__w_err(W, at, SG_EDATADEP, "data-dependent: the branch needs the value of %s", txt ? txt : "?");
        sg_free(txt);
        return s;
    }
    if (s)
        return sg__w_fail(W, at, s);
    *out = b != 0;
    return SG_OK;
}


/* Python's bool(v). */
sg_status sg__w_truthy(sg_walk *W, const sg__py *at, const wv *v, bool *out)
{
    switch ((wkind)v->kind) {
    case W_NONE:
        *out = false;
        return SG_OK;
    case W_BOOL:
        return sg__w_truth_of(W, at, v->u.e, out);
    case W_INT: {
        const sg_expr *ne;
        CHAIN(sg_expr_rel(W->ctx, &ne, SG_REL_NE, v->u.e, W->ctx->zero));
        return sg__w_truth_of(W, at, ne, out);
    }
    case W_FLOAT:
        if (!v->known)
            return sg__w_err(W, at, SG_EDATADEP,
                             "data-dependent: the branch needs the value of a float read from a tensor");
        *out = v->u.f != 0;
        return SG_OK;
    case W_TUPLE:
    case W_LIST:
        *out = v->u.seq.n != 0;
        return SG_OK;
    case W_TENSOR: { /* bool(t): its one element */
        wv x;
        sg_arg a = {.kind = SG_ARG_VALUE, .u.v = v->u.t->v};
        CHAIN(sg__w_op_call(W, at, "_local_scalar_dense", &a, 1, NULL, &x));
        if (x.kind == W_FLOAT)
            return sg__w_truthy(W, at, &x, out);
        return sg__w_truthy(W, at, &x, out);
    }
    default:
        *out = true;
        return SG_OK;
    }
}

sg_status sg__w_want_int(sg_walk *W, const sg__py *at, const wv *v, const sg_expr **out, const char *what)
{
    if (v->kind == W_INT) {
        *out = v->u.e;
        return SG_OK;
    }
    if (v->kind == W_BOOL && (sg_expr_op(v->u.e) == SG_OP_TRUE || sg_expr_op(v->u.e) == SG_OP_FALSE)) {
        *out = sg_expr_op(v->u.e) == SG_OP_TRUE ? W->ctx->one : W->ctx->zero;
        return SG_OK;
    }
    return sg__w_err(W, at, SG_ETYPE, "%s: expected an int, got %s", what, sg__w_kind_name(v));
}

/* A constant int (a size the environment can decide is guarded to its
 * value, as int(s0) specializes in PyTorch: used for indexes of tuples). */
sg_status sg__w_want_const(sg_walk *W, const sg__py *at, const wv *v, int64_t *out, const char *what)
{
    const sg_expr *e;
    CHAIN(sg__w_want_int(W, at, v, &e, what));
    if (sg_expr_get_si(e, out))
        return SG_OK;
    return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: %s must be a constant int", what);
}
/* ---- arguments of aten calls ---- */

/* v as an argument of an aten call (name NULL: positional). */
sg_status sg__w_arg_of(sg_walk *W, const sg__py *at, argv *A, const wv *v, const char *name)
{
    if (A->n == sizeof A->a / sizeof *A->a)
        return sg__w_err(W, at, SG_EINVAL, "too many arguments");
    size_t k = A->n;
    sg_arg *a = &A->a[k];
    memset(a, 0, sizeof *a);
    a->name = name;
    switch ((wkind)v->kind) {
    case W_NONE:
        a->kind = SG_ARG_NONE;
        break;
    case W_BOOL:
        if (sg_expr_op(v->u.e) != SG_OP_TRUE && sg_expr_op(v->u.e) != SG_OP_FALSE)
            return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: a symbolic bool as an operator argument");
        a->kind = SG_ARG_BOOL;
        a->u.b = sg_expr_op(v->u.e) == SG_OP_TRUE;
        break;
    case W_INT:
        a->kind = SG_ARG_INT;
        a->u.e = v->u.e;
        break;
    case W_FLOAT:
        if (v->known) {
            a->kind = SG_ARG_FLOAT;
            a->u.f = v->u.f;
        } else if (v->fv != SG_NOVAL) {
            a->kind = SG_ARG_VALUE;
            a->u.v = v->fv;
        } else {
            return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: a float computed from a float read from a tensor, "
                                                "as an operator's argument in a trace");
        }
        break;
    case W_TENSOR:
        a->kind = SG_ARG_VALUE;
        a->u.v = v->u.t->v;
        break;
    case W_DTYPE:
        a->kind = SG_ARG_DTYPE;
        a->u.dtype = v->u.dtype;
        break;
    case W_TUPLE:
    case W_LIST: {
        uint32_t n = v->u.seq.n;
        if (n > SG_MAX_DIMS)
            return sg__w_err(W, at, SG_ELIMIT, "a list of more than %d entries", SG_MAX_DIMS);
        bool tensors = n > 0 && v->u.seq.items[0].kind == W_TENSOR;
        for (uint32_t i = 0; i < n; i++) {
            const wv *x = &v->u.seq.items[i];
            if (tensors) {
                if (x->kind != W_TENSOR)
                    return sg__w_err(W, at, SG_ETYPE, "a list mixing tensors and %s", sg__w_kind_name(x));
                A->vals[k][i] = x->u.t->v;
            } else {
                CHAIN(sg__w_want_int(W, at, x, &A->ints[k][i], "a list entry"));
            }
        }
        if (tensors) {
            a->kind = SG_ARG_VALUES;
            a->u.values.n = n;
            a->u.values.v = A->vals[k];
        } else {
            a->kind = SG_ARG_INTS;
            a->u.ints.n = n;
            a->u.ints.e = A->ints[k];
        }
        break;
    }
    default:
        return sg__w_err(W, at, SG_ETYPE, "a %s cannot be an operator argument", sg__w_kind_name(v));
    }
    A->n++;
    return SG_OK;
}

/* ---- graph values as walker values ---- */

static sg_status list_to_wv(sg_walk *W, sg_value v, wv *out)
{
    size_t n = sg_tracer_list_len(W->t, v);
    out->kind = W_LIST;
    out->u.seq.n = (uint32_t)n;
    if (n && !(out->u.seq.items = wmem(W, n * sizeof(wv))))
        return sg__nomem(W->ctx);
    for (size_t i = 0; i < n; i++)
        CHAIN(sg__w_to_wv(W, sg_tracer_list_get(W->t, v, i), &out->u.seq.items[i]));
    return SG_OK;
}

/* A walker value for graph value v (a new tensor object for a tensor). */
sg_status sg__w_to_wv(sg_walk *W, sg_value v, wv *out)
{
    memset(out, 0, sizeof *out);
    switch (sg_tracer_kind(W->t, v)) {
    case SG_VALUE_TENSOR:
        out->kind = W_TENSOR;
        if (!(out->u.t = wmem(W, sizeof *out->u.t)))
            return sg__nomem(W->ctx);
        out->u.t->v = v;
        return SG_OK;
    case SG_VALUE_INT:
        out->kind = W_INT;
        out->u.e = sg_tracer_expr(W->t, v);
        return SG_OK;
    case SG_VALUE_BOOL:
        out->kind = W_BOOL;
        out->u.e = sg_tracer_expr(W->t, v);
        return SG_OK;
    case SG_VALUE_FLOAT:
        out->kind = W_FLOAT;
        out->fv = v;
        if (W->eager) {
            const sg__xval *x = sg__xrun_value(sg__run_xrun(sg__xeager_run(W->ex)), v);
            if (x->kind == SG_XV_FLOAT) {
                out->known = true;
                out->u.f = x->u.f;
            }
        }
        return SG_OK;
    case SG_VALUE_NONE:
        out->kind = W_NONE;
        return SG_OK;
    case SG_VALUE_LIST:
        return list_to_wv(W, v, out);
    }
    return SG_OK;
}
