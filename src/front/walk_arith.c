/* The walker (walk_private.h): arithmetic and comparisons on Python values: numbers (ints as
 * expressions of the environment, floats known or not) and tensors (the
 * aten operator of Python's dunder method). */
#include <math.h>
#include <stdio.h>

#include "front/walk_private.h"

static sg_status as_float(sg_walk *W, const sg__py *at, const wv *v, double *out)
{
    if (v->kind == W_FLOAT) {
        if (!v->known)
            return sg__w_err(W, at, SG_EUNSUPPORTED,
                             "unsupported: arithmetic on a float read from a tensor in a trace");
        *out = v->u.f;
        return SG_OK;
    }
    const sg_expr *e;
    CHAIN(sg__w_want_int(W, at, v, &e, "a number"));
    int64_t i;
    if (!sg_expr_get_si(e, &i))
        return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: float arithmetic on a symbolic size");
    *out = (double)i;
    return SG_OK;
}

sg_status sg__w_number_binop(sg_walk *W, const sg__py *at, int op, const wv *a, const wv *b, wv *out)
{
    if ((a->kind == W_FLOAT && !a->known) || (b->kind == W_FLOAT && !b->known)) {
        /* a float read from a tensor in a trace: its value is not tracked, nor what is computed from it */
        *out = (wv){.kind = W_FLOAT, .known = false, .fv = SG_NOVAL};
        return SG_OK;
    }
    if (a->kind == W_FLOAT || b->kind == W_FLOAT || op == '/') {
        double x, y, r;
        CHAIN(as_float(W, at, a, &x));
        CHAIN(as_float(W, at, b, &y));
        switch (op) {
        case '+': r = x + y; break;
        case '-': r = x - y; break;
        case '*': r = x * y; break;
        case '/':
            if (y == 0)
                return sg__w_err(W, at, SG_EZERODIV, "float division by zero");
            r = x / y;
            break;
        case SG_PYOP_FLOORDIV:
            if (y == 0)
                return sg__w_err(W, at, SG_EZERODIV, "float floor division by zero");
            r = floor(x / y);
            break;
        case '%':
            if (y == 0)
                return sg__w_err(W, at, SG_EZERODIV, "float modulo");
            r = fmod(x, y);
            if (r != 0 && ((r < 0) != (y < 0)))
                r += y;
            break;
        case SG_PYOP_POW: r = pow(x, y); break;
        default: return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: operator %c on floats", op);
        }
        *out = (wv){.kind = W_FLOAT, .known = true, .u.f = r};
        return SG_OK;
    }
    const sg_expr *x, *y, *r = NULL;
    CHAIN(sg__w_want_int(W, at, a, &x, "an operand"));
    CHAIN(sg__w_want_int(W, at, b, &y, "an operand"));
    sg_status s;
    switch (op) {
    case '+': s = sg_expr_add(W->ctx, &r, x, y); break;
    case '-': s = sg_expr_sub(W->ctx, &r, x, y); break;
    case '*': s = sg_expr_mul(W->ctx, &r, x, y); break;
    case SG_PYOP_FLOORDIV:
        if (y == W->ctx->zero)
            return sg__w_err(W, at, SG_EZERODIV, "integer division or modulo by zero");
        s = sg_expr_floordiv(W->ctx, &r, x, y);
        break;
    case '%':
        if (y == W->ctx->zero)
            return sg__w_err(W, at, SG_EZERODIV, "integer division or modulo by zero");
        s = sg_expr_mod(W->ctx, &r, x, y);
        break;
    case SG_PYOP_POW: {
        int64_t e;
        if (sg_expr_get_si(y, &e) && e < 0) { /* Python: a float */
            double fx;
            CHAIN(as_float(W, at, a, &fx));
            *out = (wv){.kind = W_FLOAT, .known = true, .u.f = pow(fx, (double)e)};
            return SG_OK;
        }
        s = sg_expr_pow(W->ctx, &r, x, y);
        break;
    }
    default: return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: operator on ints");
    }
    if (s)
        return sg__w_fail(W, at, s);
    *out = (wv){.kind = W_INT, .u.e = r};
    return SG_OK;
}

/* In a subgraph, lift v now (what a branch uses is lifted in the order the
 * program uses it, which the aten call's argument order may not follow: 2
 * * x is mul(x, 2), and a nested cond's predicate comes before its
 * branches). Elsewhere nothing. */
sg_status sg__w_prelift(sg_walk *W, const sg__py *at, const wv *v)
{
    if (W->eager || !sg_tracer_scope(W->t))
        return SG_OK;
    sg_status s = SG_OK;
    sg_value local;
    if (v->kind == W_TENSOR)
        s = sg_tracer_scope_input(W->t, &local, NULL, v->u.t->v);
    else if (v->kind == W_INT || v->kind == W_BOOL)
        s = sg_tracer_scope_expr(W->t, v->u.e);
    return s ? sg__w_fail(W, at, s) : SG_OK;
}

/* A binary operator where one side is a tensor: the aten operator Python's
 * dunder method calls. */
sg_status sg__w_tensor_binop(sg_walk *W, const sg__py *at, int op, wv *a, wv *b, wv *out)
{
    bool ta = a->kind == W_TENSOR;
    if (!ta) { /* reflected (2 - x is rsub(x, 2)): both lifted in the program's order first */
        CHAIN(sg__w_prelift(W, at, a));
        CHAIN(sg__w_prelift(W, at, b));
    }
    const char *name;
    switch (op) {
    case '+': name = "add"; break;
    case '-': name = "sub"; break;
    case '*': name = "mul"; break;
    case '/': name = "div"; break;
    case '@': name = "matmul"; break;
    case SG_PYOP_POW: name = "pow"; break;
    default: return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: operator %s on tensors",
                              op == SG_PYOP_FLOORDIV ? "//" : op == '%' ? "%" : "?");
    }
    if (!ta && op == '-') { /* 2 - x: __rsub__, rsub.Scalar(x, 2) */
        argv *A = wmem(W, sizeof *A);
        if (!A)
            return sg__nomem(W->ctx);
        CHAIN(sg__w_arg_of(W, at, A, b, NULL));
        CHAIN(sg__w_arg_of(W, at, A, a, NULL));
        return sg__w_op_call(W, at, "rsub.Scalar", A->a, A->n, NULL, out);
    }
    if (!ta && op == '/') { /* 2 / x: __rtruediv__, x.reciprocal() * 2 */
        wv r;
        sg_arg x = {.kind = SG_ARG_VALUE, .u.v = b->u.t->v};
        CHAIN(sg__w_op_call(W, at, "reciprocal", &x, 1, NULL, &r));
        wv pos[2] = {r, *a};
        return sg__w_call_pyop(W, at, pyop_find(W, "mul"), pos, 2, NULL, NULL, 0, out);
    }
    wv pos[2];
    if (ta || op == SG_PYOP_POW) {
        pos[0] = *a;
        pos[1] = *b;
    } else { /* 2 + x, 2 * x: __radd__, __rmul__ */
        pos[0] = *b;
        pos[1] = *a;
    }
    if (op == SG_PYOP_POW && !ta) { /* 2 ** x (1.13 records lift_fresh_copy and pow.Tensor_Tensor) */
        argv *A = wmem(W, sizeof *A);
        if (!A)
            return sg__nomem(W->ctx);
        CHAIN(sg__w_arg_of(W, at, A, &pos[0], NULL));
        CHAIN(sg__w_arg_of(W, at, A, &pos[1], NULL));
        return sg__w_op_call(W, at, "pow.Scalar", A->a, A->n, NULL, out);
    }
    return sg__w_call_pyop(W, at, pyop_find(W, name), pos, 2, NULL, NULL, 0, out);
}

sg_status sg__w_compare(sg_walk *W, const sg__py *at, uint8_t op, wv *a, wv *b, wv *out)
{
    static const struct {
        uint8_t op;
        sg_rel rel;
        const char *py;
    } rels[] = {{SG_PYOP_EQ, SG_REL_EQ, "eq"}, {SG_PYOP_NE, SG_REL_NE, "ne"}, {SG_PYOP_LT, SG_REL_LT, "lt"},
                {SG_PYOP_LE, SG_REL_LE, "le"}, {SG_PYOP_GT, SG_REL_GT, "gt"}, {SG_PYOP_GE, SG_REL_GE, "ge"}};
    size_t k = 0;
    while (k < 6 && rels[k].op != op)
        k++;
    if (k == 6)
        return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: this comparison (is, in)");
    if (a->kind == W_TENSOR || b->kind == W_TENSOR) {
        /* 2 < x is x > 2; and x >= y of a plain x and a TwoTensor y is y <= x: Python tries the
           reflected comparison of a right operand whose type subclasses the left one's first (the
           result's layout follows y then, TensorIterator following its first operand) */
        bool sub = a->kind == W_TENSOR && b->kind == W_TENSOR && sg__w_twin(W, b->u.t->v) != SG_NOVAL &&
                   sg__w_twin(W, a->u.t->v) == SG_NOVAL;
        if (a->kind != W_TENSOR || sub) {
            static const char *const flip[] = {"eq", "ne", "gt", "ge", "lt", "le"};
            wv pos[2] = {*b, *a};
            return sg__w_call_pyop(W, at, pyop_find(W, flip[k]), pos, 2, NULL, NULL, 0, out);
        }
        wv pos[2] = {*a, *b};
        return sg__w_call_pyop(W, at, pyop_find(W, rels[k].py), pos, 2, NULL, NULL, 0, out);
    }
    if (a->kind == W_FLOAT || b->kind == W_FLOAT) {
        double x, y;
        if ((a->kind == W_FLOAT && !a->known) || (b->kind == W_FLOAT && !b->known))
            return sg__w_err(W, at, SG_EDATADEP, "data-dependent: a comparison of a float read from a tensor (an "
                                             "unbacked value)");
        CHAIN(as_float(W, at, a, &x));
        CHAIN(as_float(W, at, b, &y));
        bool r = rels[k].rel == SG_REL_EQ ? x == y : rels[k].rel == SG_REL_NE ? x != y
               : rels[k].rel == SG_REL_LT ? x < y  : rels[k].rel == SG_REL_LE ? x <= y
               : rels[k].rel == SG_REL_GT ? x > y  : x >= y;
        *out = (wv){.kind = W_BOOL, .u.e = r ? W->ctx->t : W->ctx->f};
        return SG_OK;
    }
    if (a->kind == W_NONE || b->kind == W_NONE) {
        bool same = a->kind == b->kind;
        if (rels[k].rel != SG_REL_EQ && rels[k].rel != SG_REL_NE)
            return sg__w_err(W, at, SG_ETYPE, "comparison of None");
        *out = (wv){.kind = W_BOOL, .u.e = same == (rels[k].rel == SG_REL_EQ) ? W->ctx->t : W->ctx->f};
        return SG_OK;
    }
    const sg_expr *x, *y, *r;
    CHAIN(sg__w_want_int(W, at, a, &x, "a comparison"));
    CHAIN(sg__w_want_int(W, at, b, &y, "a comparison"));
    sg_status s = sg_expr_rel(W->ctx, &r, rels[k].rel, x, y);
    if (s)
        return sg__w_fail(W, at, s);
    *out = (wv){.kind = W_BOOL, .u.e = r};
    return SG_OK;
}
