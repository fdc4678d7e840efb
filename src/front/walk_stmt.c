/* The walker (walk_private.h): statements. */
#include "front/walk_private.h"

static sg_status assign(sg_walk *W, frame *f, const sg__py *target, wv v)
{
    if (target->kind == SG_PY_NAME) {
        if (v.kind == W_TENSOR && !W->eager) /* the name a subgraph's placeholder lifting it takes */
            CHAIN(sg_tracer_name(W->t, v.u.t->v, target->s));
        return sg__w_frame_set(W, f, target->s, v);
    }
    if (target->kind == SG_PY_TUPLE || target->kind == SG_PY_LIST) {
        if (v.kind != W_TUPLE && v.kind != W_LIST)
            return sg__w_err(W, target, SG_ETYPE, "cannot unpack a %s", sg__w_kind_name(&v));
        if (v.u.seq.n != target->nkids)
            return sg__w_err(W, target, SG_ETYPE, "expected %u values to unpack, got %u", (unsigned)target->nkids,
                             (unsigned)v.u.seq.n);
        for (uint32_t i = 0; i < target->nkids; i++)
            CHAIN(assign(W, f, target->kids[i], v.u.seq.items[i]));
        return SG_OK;
    }
    if (target->kind == SG_PY_ATTR && !strcmp(target->s, "data")) { /* x.data = y */
        wv obj;
        CHAIN(sg__w_eval(W, f, target->kids[0], &obj));
        if (obj.kind != W_TENSOR || v.kind != W_TENSOR)
            return sg__w_err(W, target, SG_ETYPE, ".data assignment takes tensors");
        if (sg__w_twin(W, obj.u.t->v) != SG_NOVAL || sg__w_twin(W, v.u.t->v) != SG_NOVAL)
            return sg__w_err(W, target, SG_EUNSUPPORTED, "unsupported: .data assignment with a tensor subclass "
                             "(TwoTensor)");
        /* x takes y's storage and metadata, unseen by autograd: set_ under no_grad */
        wv d;
        CHAIN(sg__w_data_of(W, target, v.u.t, &d));
        sg_arg a[2] = {{.kind = SG_ARG_VALUE, .u.v = obj.u.t->v}, {.kind = SG_ARG_VALUE, .u.v = d.u.t->v}};
        wv r; /* flagged: the version counter stays where it was, as in PyTorch */
        return sg__w_op_call_flags(W, target, "set_.source_Tensor", a, 2, obj.u.t, &r, SG_NODE_DATA);
    }
    if (target->kind == SG_PY_ATTR) { /* ctx.NAME = v */
        wv obj;
        CHAIN(sg__w_eval(W, f, target->kids[0], &obj));
        if (obj.kind == W_CTX)
            return sg__w_ctx_setattr(W, target, obj.u.ctx.c, target->s, &v);
        return sg__w_err(W, target, SG_EUNSUPPORTED, "unsupported: assignment to attribute %s of a %s", target->s,
                         sg__w_kind_name(&obj));
    }
    return sg__w_err(W, target, SG_EUNSUPPORTED, "unsupported: assignment to this target");
}

static sg_status run_stmt(sg_walk *W, frame *f, const sg__py *st, bool *returned, wv *ret)
{
    W->line = st->line;
    if (W->eager) /* dead values go before the statement makes more */
        CHAIN(sg__w_gc_point(W));
    switch ((sg__pyk)st->kind) {
    case SG_PY_ASSIGN: {
        wv v;
        CHAIN(sg__w_eval(W, f, st->kids[1], &v));
        return assign(W, f, st->kids[0], v);
    }
    case SG_PY_AUGASSIGN: {
        wv a, b, r;
        CHAIN(sg__w_eval(W, f, st->kids[0], &a));
        CHAIN(sg__w_eval(W, f, st->kids[1], &b));
        W->line = st->line;
        if (a.kind == W_TENSOR) { /* x += y is x.add_(y) */
            const char *name = st->op == '+' ? "add_" : st->op == '-' ? "sub_" : st->op == '*' ? "mul_"
                             : st->op == '/' ? "div_" : NULL;
            if (!name)
                return sg__w_err(W, st, SG_EUNSUPPORTED, "unsupported: this augmented assignment on a tensor");
            wv pos[2] = {a, b};
            CHAIN(sg__w_call_pyop(W, st, pyop_find(W, name), pos, 2, NULL, NULL, 0, &r));
        } else {
            if (!is_number(&a) || !is_number(&b))
                return sg__w_err(W, st, SG_ETYPE, "unsupported operand types: %s and %s", sg__w_kind_name(&a),
                                 sg__w_kind_name(&b));
            CHAIN(sg__w_number_binop(W, st, st->op, &a, &b, &r));
        }
        return assign(W, f, st->kids[0], r);
    }
    case SG_PY_EXPR: {
        wv v;
        return sg__w_eval(W, f, st->kids[0], &v);
    }
    case SG_PY_RETURN:
        *returned = true;
        if (st->nkids)
            return sg__w_eval(W, f, st->kids[0], ret);
        *ret = (wv){.kind = W_NONE};
        return SG_OK;
    case SG_PY_IF: {
        wv c;
        bool b;
        CHAIN(sg__w_eval(W, f, st->kids[0], &c));
        W->line = st->line;
        CHAIN(sg__w_truthy(W, st->kids[0], &c, &b));
        if (b)
            return sg__w_run_block(W, f, st->kids[1], returned, ret);
        if (st->nkids > 2) {
            const sg__py *alt = st->kids[2];
            if (alt->kind == SG_PY_IF)
                return run_stmt(W, f, alt, returned, ret);
            return sg__w_run_block(W, f, alt, returned, ret);
        }
        return SG_OK;
    }
    case SG_PY_WITH: {
        bool saved = W->grad;
        for (uint32_t i = 0; i + 1 < st->nkids; i++) {
            wv c;
            CHAIN(sg__w_eval(W, f, st->kids[i], &c));
            if (c.kind != W_GRADMODE)
                return sg__w_err(W, st->kids[i], SG_EUNSUPPORTED,
                                 "unsupported: with takes torch.no_grad() or torch.enable_grad()");
            W->grad = c.u.b;
        }
        CHAIN(sg_tracer_set_grad_enabled(W->t, W->grad));
        sg_status s = sg__w_run_block(W, f, st->kids[st->nkids - 1], returned, ret);
        W->grad = saved;
        sg_status s2 = sg_tracer_set_grad_enabled(W->t, saved);
        return s ? s : s2;
    }
    case SG_PY_DEF: {
        wv fn = {.kind = W_FUNC, .u.fn = {st, f}};
        return sg__w_frame_set(W, f, st->s, fn);
    }
    case SG_PY_CLASS: {
        wv base;
        CHAIN(sg__w_eval(W, f, st->kids[0], &base));
        return sg__w_function_class(W, f, st, &base);
    }
    case SG_PY_PASS:
    case SG_PY_IMPORT:
        return SG_OK;
    case SG_PY_BLOCK:
        return sg__w_run_block(W, f, st, returned, ret);
    default:
        return sg__w_err(W, st, SG_EUNSUPPORTED, "unsupported: this statement");
    }
}

sg_status sg__w_run_block(sg_walk *W, frame *f, const sg__py *block, bool *returned, wv *ret)
{
    sg_status s = sg__w_nest(W, block);
    if (s)
        return s;
    for (uint32_t i = 0; !s && i < block->nkids && !*returned; i++)
        s = run_stmt(W, f, block->kids[i], returned, ret);
    sg__w_nest_leave(W);
    return s;
}
