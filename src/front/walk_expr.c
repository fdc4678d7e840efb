/* The walker (walk_private.h): expressions. */
#include <stdio.h>

#include "front/walk_private.h"

static sg_status lookup(sg_walk *W, frame *f, const sg__py *at, const char *name, wv *out)
{
    for (frame *x = f; x; x = x->up) {
        wv *v = frame_find(x, name);
        if (v) {
            *out = *v;
            return SG_OK;
        }
    }
    wv *v = frame_find(W->globals, name);
    if (v) {
        *out = *v;
        return SG_OK;
    }
    if (!strcmp(name, "torch")) {
        *out = (wv){.kind = W_BUILTIN, .u.name = "torch"};
        return SG_OK;
    }
    return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: name '%s' is not defined", name);
}

static sg_status eval_seq(sg_walk *W, frame *f, const sg__py *e, wkind kind, wv *out)
{
    wv *items = e->nkids ? wmem(W, e->nkids * sizeof *items) : NULL;
    if (e->nkids && !items)
        return sg__nomem(W->ctx);
    for (uint32_t i = 0; i < e->nkids; i++)
        CHAIN(sg__w_eval(W, f, e->kids[i], &items[i]));
    *out = (wv){.kind = (uint8_t)kind, .u.seq = {e->nkids, items}};
    return SG_OK;
}

/* The call e of fn (e->kids[0], evaluated). */
static sg_status eval_call(sg_walk *W, frame *f, const sg__py *e, wv fn, wv *out)
{
    uint32_t n = e->nkids - 1;
    wv *pos = n ? wmem(W, n * (2 * sizeof *pos + sizeof(const char *))) : NULL; /* one block: pos, kwv, kwn */
    if (n && !pos)
        return sg__nomem(W->ctx);
    wv *kwv = n ? pos + n : NULL;
    const char **kwn = n ? (const char **)(void *)(kwv + n) : NULL;
    size_t np = 0, nk = 0;
    for (uint32_t i = 1; i < e->nkids; i++) {
        const sg__py *a = e->kids[i];
        if (a->kind == SG_PY_KEYWORD) {
            kwn[nk] = a->s;
            CHAIN(sg__w_eval(W, f, a->kids[0], &kwv[nk++]));
        } else {
            if (nk)
                return sg__w_err(W, a, SG_ESYNTAX, "positional argument follows keyword argument");
            CHAIN(sg__w_eval(W, f, a, &pos[np++]));
        }
    }
    W->line = e->line;
    return sg__w_call_value(W, e, &fn, pos, np, kwn, kwv, nk, out);
}

/* The binary operation e, its left operand a (e->kids[0], evaluated). */
static sg_status eval_binop(sg_walk *W, frame *f, const sg__py *e, wv a, wv *out)
{
    wv b;
    CHAIN(sg__w_eval(W, f, e->kids[1], &b));
    W->line = e->line;
    if (a.kind == W_TENSOR || b.kind == W_TENSOR) {
        if (!(a.kind == W_TENSOR || is_number(&a)) || !(b.kind == W_TENSOR || is_number(&b)))
            return sg__w_err(W, e, SG_ETYPE, "unsupported operand types: %s and %s", sg__w_kind_name(&a),
                             sg__w_kind_name(&b));
        return sg__w_tensor_binop(W, e, e->op, &a, &b, out);
    }
    if ((a.kind == W_TUPLE || a.kind == W_LIST) && a.kind == b.kind && e->op == '+') {
        uint32_t n = a.u.seq.n + b.u.seq.n;
        wv *items = n ? wmem(W, n * sizeof *items) : NULL;
        if (n && !items)
            return sg__nomem(W->ctx);
        if (a.u.seq.n)
            memcpy(items, a.u.seq.items, a.u.seq.n * sizeof *items);
        if (b.u.seq.n)
            memcpy(items + a.u.seq.n, b.u.seq.items, b.u.seq.n * sizeof *items);
        *out = (wv){.kind = a.kind, .u.seq = {n, items}};
        return SG_OK;
    }
    if (!is_number(&a) || !is_number(&b))
        return sg__w_err(W, e, SG_ETYPE, "unsupported operand types: %s and %s", sg__w_kind_name(&a),
                         sg__w_kind_name(&b));
    return sg__w_number_binop(W, e, e->op, &a, &b, out);
}

/* The links of chains: expressions whose first child (kids[0]) is
 * evaluated first, then what the link does to its value: a + b + c,
 * x.neg().neg(), x[0][0], f()(). The parser builds chains in a loop, as
 * long as the source, so the walker evaluates a chain in a loop too
 * (eval_chain); every other child is nested in the text (bounded by
 * SG_PY_MAX_DEPTH) and recursed into, each level counted (sg__w_nest). */
static bool is_link(const sg__py *e)
{
    return e->kind == SG_PY_BINOP || e->kind == SG_PY_CALL || e->kind == SG_PY_ATTR ||
           e->kind == SG_PY_SUBSCRIPT;
}

/* Link e applied to its first child's value v. */
static sg_status eval_link(sg_walk *W, frame *f, const sg__py *e, wv v, wv *out)
{
    memset(out, 0, sizeof *out);
    switch ((sg__pyk)e->kind) {
    case SG_PY_BINOP:
        return eval_binop(W, f, e, v, out);
    case SG_PY_CALL:
        return eval_call(W, f, e, v, out);
    case SG_PY_ATTR:
        W->line = e->line;
        return sg__w_getattr(W, e, &v, e->s, out);
    case SG_PY_SUBSCRIPT: {
        wv idx;
        CHAIN(sg__w_eval(W, f, e->kids[1], &idx));
        W->line = e->line;
        if (v.kind == W_TENSOR)
            return sg__w_index_tensor(W, e, v.u.t, &idx, out);
        if (v.kind == W_TUPLE || v.kind == W_LIST)
            return sg__w_index_seq(W, e, &v, &idx, out);
        return sg__w_err(W, e, SG_ETYPE, "'%s' object is not subscriptable", sg__w_kind_name(&v));
    }
    default:
        return sg__w_err(W, e, SG_EINTERNAL, "eval_link: not a link");
    }
}

static sg_status eval_node(sg_walk *W, frame *f, const sg__py *e, wv *out);

/* The links of a chain held on the stack; a longer chain's are allocated. */
#define CHAIN_ON_STACK 16

static sg_status eval_chain(sg_walk *W, frame *f, const sg__py *e, wv *out);

sg_status sg__w_eval(sg_walk *W, frame *f, const sg__py *e, wv *out)
{
    sg_status s = sg__w_nest(W, e);
    if (s) {
        memset(out, 0, sizeof *out);
        return s;
    }
    s = is_link(e) ? eval_chain(W, f, e, out) : eval_node(W, f, e, out);
    sg__w_nest_leave(W);
    return s;
}

/* e, a link: its chain in a loop. */
static sg_status eval_chain(sg_walk *W, frame *f, const sg__py *e, wv *out)
{
    size_t n = 0;
    const sg__py *x = e;
    for (; is_link(x); x = x->kids[0])
        n++;
    const sg__py *small[CHAIN_ON_STACK], **links = small;
    if (n > CHAIN_ON_STACK && !(links = sg__malloc(W->ctx, n * sizeof *links)))
        return sg__nomem(W->ctx);
    x = e;
    for (size_t i = n; i-- > 0; x = x->kids[0])
        links[i] = x; /* links[0]: the innermost */
    wv v;
    sg_status s = eval_node(W, f, x, &v);
    for (size_t i = 0; i < n && !s; i++)
        s = eval_link(W, f, links[i], v, &v);
    if (links != small)
        sg_free(links);
    if (!s)
        *out = v;
    else
        memset(out, 0, sizeof *out);
    return s;
}

/* e, not a link. */
static sg_status eval_node(sg_walk *W, frame *f, const sg__py *e, wv *out)
{
    memset(out, 0, sizeof *out);
    switch ((sg__pyk)e->kind) {
    case SG_PY_NAME:
        return lookup(W, f, e, e->s, out);
    case SG_PY_INT:
        out->kind = W_INT;
        out->u.e = sg__int_si(W->ctx, e->i);
        return out->u.e ? SG_OK : sg_ctx_last_error(W->ctx);
    case SG_PY_FLOAT:
        *out = (wv){.kind = W_FLOAT, .known = true, .u.f = e->f};
        return SG_OK;
    case SG_PY_TRUE:
    case SG_PY_FALSE:
        *out = (wv){.kind = W_BOOL, .u.e = e->kind == SG_PY_TRUE ? W->ctx->t : W->ctx->f};
        return SG_OK;
    case SG_PY_NONE:
        out->kind = W_NONE;
        return SG_OK;
    case SG_PY_ELLIPSIS:
        out->kind = W_ELLIPSIS;
        return SG_OK;
    case SG_PY_TUPLE:
        return eval_seq(W, f, e, W_TUPLE, out);
    case SG_PY_LIST:
        return eval_seq(W, f, e, W_LIST, out);
    case SG_PY_SLICE:
        return eval_seq(W, f, e, W_SLICE, out);
    case SG_PY_UNARY: {
        wv a;
        CHAIN(sg__w_eval(W, f, e->kids[0], &a));
        W->line = e->line;
        if (e->op == '+')
            *out = a;
        else if (a.kind == W_TENSOR)
            return sg__w_call_pyop(W, e, pyop_find(W, "neg"), &a, 1, NULL, NULL, 0, out);
        else if (a.kind == W_FLOAT && a.known)
            *out = (wv){.kind = W_FLOAT, .known = true, .u.f = -a.u.f};
        else if (a.kind == W_FLOAT) /* not tracked, nor what is computed from it */
            *out = (wv){.kind = W_FLOAT, .known = false, .fv = SG_NOVAL};
        else {
            const sg_expr *x;
            CHAIN(sg__w_want_int(W, e, &a, &x, "unary -"));
            out->kind = W_INT;
            CHAIN(sg_expr_neg(W->ctx, &out->u.e, x));
        }
        return SG_OK;
    }
    case SG_PY_NOT: {
        wv a;
        bool b;
        CHAIN(sg__w_eval(W, f, e->kids[0], &a));
        W->line = e->line;
        CHAIN(sg__w_truthy(W, e, &a, &b));
        *out = (wv){.kind = W_BOOL, .u.e = b ? W->ctx->f : W->ctx->t};
        return SG_OK;
    }
    case SG_PY_BOOLOP: { /* Python's: the first falsy (and) or truthy (or) operand, else the last */
        for (uint32_t i = 0; i < e->nkids; i++) {
            CHAIN(sg__w_eval(W, f, e->kids[i], out));
            if (i + 1 == e->nkids)
                break;
            bool b;
            CHAIN(sg__w_truthy(W, e, out, &b));
            if (b == (e->op == SG_PYOP_OR))
                break;
        }
        return SG_OK;
    }
    case SG_PY_COMPARE: { /* a < b < c is a < b and b < c */
        wv a, b;
        CHAIN(sg__w_eval(W, f, e->kids[0], &a));
        for (uint32_t i = 0; i + 1 < e->nkids; i++) {
            CHAIN(sg__w_eval(W, f, e->kids[i + 1], &b));
            W->line = e->line;
            CHAIN(sg__w_compare(W, e, e->ops[i], &a, &b, out));
            if (i + 2 < e->nkids) {
                bool t;
                CHAIN(sg__w_truthy(W, e, out, &t));
                if (!t)
                    return SG_OK;
            }
            a = b;
        }
        return SG_OK;
    }
    default:
        return sg__w_err(W, e, SG_EUNSUPPORTED, "unsupported: this expression");
    }
}
