/* The walker (walk_private.h): custom autograd Functions, as PyTorch's
 * Function.apply runs them (torch/autograd/function.py,
 * torch/csrc/autograd/python_function.cpp and custom_function.cpp):
 * forward(ctx, *args) under no_grad; its outputs, where an input requires
 * grad, take the Function as their grad_fn, an input returned as it is
 * becomes a view of itself (view_as), and each output that is a view is
 * one no in-place write may touch with grad (CreationMeta
 * IN_CUSTOM_FUNCTION). backward(ctx, *grads) is traced at once into a
 * subgraph whose placeholders are the outputs' gradients (contiguous, as
 * the engine's zeros of an output no gradient reached are), closing over
 * what ctx holds (where that fails as the program's backward would, the
 * error is kept for autograd to raise where it reaches the Function:
 * trace_backward); the graph's custom Function node (graph.h,
 * SG_N_FUNCTION) names it, and autograd (graph/autograd.c) records it
 * again where the backward reaches the outputs; what the backward writes
 * of what it takes (PyTorch 2's input mutations in the backward) the aot
 * pipeline carries out of it (functionalize.c, joint.c). Refused as
 * unsupported: writes of what the forward did not make (ctx.mark_dirty),
 * outputs that are no tensors, and a Function in a torch.cond branch. */
#include <stdio.h>

#include "front/walk_private.h"

static inline bool is(const char *a, const char *lit)
{
    return a[0] == lit[0] && !strcmp(a, lit);
}

sg_status sg__w_function_class(sg_walk *W, frame *f, const sg__py *st, const wv *base)
{
    if (base->kind != W_BUILTIN || !is(base->u.name, "autograd.Function"))
        return sg__w_err(W, st, SG_EUNSUPPORTED, "unsupported: class %s: only custom autograd Functions "
                         "(class %s(torch.autograd.Function))", st->s, st->s);
    const sg__py *body = st->kids[1];
    for (uint32_t i = 0; i < body->nkids; i++) {
        const sg__py *k = body->kids[i];
        if (k->kind == SG_PY_PASS)
            continue;
        if (k->kind != SG_PY_DEF)
            return sg__w_err(W, k, SG_EUNSUPPORTED, "unsupported: a custom Function's body holds its "
                             "@staticmethod forward and backward only");
        if (!is(k->s, "forward") && !is(k->s, "backward"))
            return sg__w_err(W, k, SG_EUNSUPPORTED, "unsupported: method %s of a custom Function", k->s);
        if (k->ndeco != 1 || k->deco[0]->kind != SG_PY_NAME || !is(k->deco[0]->s, "staticmethod"))
            return sg__w_err(W, k, SG_EUNSUPPORTED, "unsupported: %s.%s must be a @staticmethod", st->s, k->s);
        if (!k->nnames)
            return sg__w_err(W, k, SG_ETYPE, "%s.%s takes ctx first", st->s, k->s);
    }
    wv cls = {.kind = W_CLASS, .u.fn = {st, f}};
    return sg__w_frame_set(W, f, st->s, cls);
}

/* The def named name in class cls's body, or NULL. */
static const sg__py *method_of(const sg__py *cls, const char *name)
{
    const sg__py *body = cls->kids[1];
    for (uint32_t i = 0; i < body->nkids; i++)
        if (body->kids[i]->kind == SG_PY_DEF && is(body->kids[i]->s, name))
            return body->kids[i];
    return NULL;
}

/* ---- ctx ---- */

sg_status sg__w_ctx_getattr(sg_walk *W, const sg__py *at, wctx *c, const char *name, wv *out)
{
    if (is(name, "save_for_backward") || is(name, "mark_dirty") || is(name, "mark_non_differentiable") ||
        is(name, "set_materialize_grads")) {
        *out = (wv){.kind = W_CTXFN, .u.ctx = {c, name}};
        return SG_OK;
    }
    if (is(name, "saved_tensors")) {
        if (!c->backward)
            return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: ctx.saved_tensors in the forward");
        uint32_t n = c->saved ? c->nsaved : 0;
        wv *items = n ? wmem(W, n * sizeof *items) : NULL;
        if (n && !items)
            return sg__nomem(W->ctx);
        for (uint32_t i = 0; i < n; i++) {
            items[i] = c->saved[i];
            if (items[i].kind != W_TENSOR)
                continue;
            wobj *o = wmem(W, sizeof *o); /* (the value the forward's end saw: its own object) */
            if (!o)
                return sg__nomem(W->ctx);
            o->v = c->saved[i].u.t->v;
            items[i].u.t = o;
        }
        *out = (wv){.kind = W_TUPLE, .u.seq = {n, items}};
        return SG_OK;
    }
    if (is(name, "needs_input_grad")) {
        *out = (wv){.kind = W_TUPLE, .u.seq = {c->nneeds, c->needs}};
        return SG_OK;
    }
    wv *v = frame_find(c->attrs, name);
    if (!v)
        return sg__w_err(W, at, SG_ETYPE, "'FunctionCtx' object has no attribute '%s'", name);
    *out = *v;
    return SG_OK;
}

sg_status sg__w_ctx_setattr(sg_walk *W, const sg__py *at, wctx *c, const char *name, const wv *v)
{
    if (is(name, "saved_tensors") || is(name, "needs_input_grad") || is(name, "save_for_backward") ||
        is(name, "mark_dirty") || is(name, "mark_non_differentiable") || is(name, "set_materialize_grads"))
        return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: assigning ctx.%s", name);
    return sg__w_frame_set(W, c->attrs, name, *v);
}

sg_status sg__w_ctx_call(sg_walk *W, const sg__py *at, const wv *m, wv *args, size_t n, size_t nkw, wv *out)
{
    wctx *c = m->u.ctx.c;
    if (!is(m->u.ctx.name, "save_for_backward"))
        return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: ctx.%s", m->u.ctx.name);
    if (nkw)
        return sg__w_err(W, at, SG_ETYPE, "save_for_backward() takes no keyword arguments");
    if (c->backward)
        return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: ctx.save_for_backward in the backward");
    for (size_t i = 0; i < n; i++)
        if (args[i].kind != W_TENSOR && args[i].kind != W_NONE)
            return sg__w_err(W, at, SG_ETYPE, "save_for_backward can only save variables, but argument %zu is of "
                             "type %s", i, sg__w_kind_name(&args[i]));
    wv *saved = n ? wmem(W, n * sizeof *saved) : NULL;
    if (n && !saved)
        return sg__nomem(W->ctx);
    if (n)
        memcpy(saved, args, n * sizeof *saved);
    c->saved = saved;
    c->nsaved = (uint32_t)n;
    *out = (wv){.kind = W_NONE};
    return SG_OK;
}

/* ---- apply ---- */

/* The tensors of v (a tensor, or a tuple or list of them) into outs (at
 * most max); *single: v is one tensor. */
static sg_status tensors_of(sg_walk *W, const sg__py *at, const wv *v, wv *outs, uint32_t max, uint32_t *n,
                            bool *single, const char *what)
{
    *single = v->kind == W_TENSOR;
    if (*single) {
        outs[0] = *v;
        *n = 1;
        return SG_OK;
    }
    if (v->kind != W_TUPLE && v->kind != W_LIST)
        return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: %s returning a %s", what, sg__w_kind_name(v));
    if (v->u.seq.n > max)
        return sg__w_err(W, at, SG_ELIMIT, "%s returning more than %u values", what, (unsigned)max);
    for (uint32_t i = 0; i < v->u.seq.n; i++)
        outs[i] = v->u.seq.items[i];
    *n = v->u.seq.n;
    return SG_OK;
}

/* A custom Function's forward may not write what it did not make (the
 * nodes from node on, the storages from storage on are its own). */
static sg_status forward_writes(sg_walk *W, const sg__py *at, const char *cls, uint32_t node, uint32_t storage)
{
    const sg__graph *g = W->g;
    for (uint32_t i = node; i < g->nnodes; i++) {
        const sg__gnode *nd = &g->nodes[i];
        if (nd->kind != SG_N_CALL || !nd->schema->written)
            continue;
        uint32_t vals[8];
        size_t nw = sg__graph_node_writes(g, i, vals, 8);
        for (size_t k = 0; k < nw; k++)
            if (g->vals[vals[k]].kind == SG_V_TENSOR && g->vals[vals[k]].u.t.storage < storage)
                return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: %s.forward writes a tensor it did not make "
                                 "(%s, line %u): ctx.mark_dirty and input mutations in a custom Function",
                                 cls, nd->schema->name, nd->line);
    }
    return SG_OK;
}

#define MAX_FN_VALUES 64

/* backward(ctx, *grads) traced into a new subgraph sc of the outputs'
 * gradients; *nbw tensors it returns (bw) and the index among the inputs'
 * tensors (tin) each is the gradient of (of). */
static sg_status trace_backward_body(sg_walk *W, const sg__py *at, const wv *cls, wctx *c, const wv *outs,
                                     uint32_t nouts, const wv *args, size_t n, uint32_t *sc, sg_value *bw,
                                     uint32_t *of, uint32_t *nbw)
{
    const char *name = cls->u.fn.def->s;
    const sg__py *def = method_of(cls->u.fn.def, "backward");
    if (!def)
        return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: %s has no backward", name);
    char scope[96];
    snprintf(scope, sizeof scope, "%.60s_backward_%u", name, W->functions++);
    sg_status s = sg_tracer_scope_open(W->t, sc, scope);
    if (s)
        return sg__w_fail(W, at, s);
    wv *gargs = wmem(W, (nouts + 1) * sizeof *gargs);
    if (!gargs)
        return sg__nomem(W->ctx);
    gargs[0] = (wv){.kind = W_CTX, .u.ctx = {c, NULL}};
    for (uint32_t j = 0; j < nouts; j++) {
        wobj *o = wmem(W, sizeof *o);
        if (!o)
            return sg__nomem(W->ctx);
        const char *pn = 1 + j < def->nnames ? def->names[1 + j] : "grad";
        if ((s = sg__tracer_scope_grad(W->t, &o->v, pn, outs[j].u.t->v)))
            return sg__w_fail(W, at, s);
        gargs[1 + j] = (wv){.kind = W_TENSOR, .u.t = o};
    }
    c->backward = true;
    bool grad = W->grad;
    W->grad = false; /* (create_graph=False: the backward runs without grad) */
    if ((s = sg_tracer_set_grad_enabled(W->t, 0)))
        return sg__w_fail(W, at, s);
    size_t mark = W->njournal;
    W->branches++; /* (an object the backward writes is restored after it) */
    wv fn = {.kind = W_FUNC, .u.fn = {def, cls->u.fn.env}}, res;
    s = sg__w_call_static(W, at, &fn, gargs, nouts + 1, &res);
    W->branches--;
    while (W->njournal > mark) {
        W->njournal--;
        W->journal[W->njournal].o->v = W->journal[W->njournal].v;
    }
    W->grad = grad;
    sg_status s2 = sg_tracer_set_grad_enabled(W->t, grad);
    if (s || s2)
        return s ? s : sg__w_fail(W, at, s2);
    W->line = at->line;
    /* what it returns: a gradient (or None) per argument of apply */
    wv got[MAX_FN_VALUES];
    uint32_t ngot;
    bool single;
    if (res.kind == W_NONE) {
        got[0] = res;
        ngot = 1;
    } else {
        CHAIN(tensors_of(W, at, &res, got, MAX_FN_VALUES, &ngot, &single, "a custom Function's backward"));
    }
    bool extra = false;
    for (uint32_t i = (uint32_t)n; i < ngot; i++)
        extra |= got[i].kind != W_NONE;
    if (ngot < n || extra)
        return sg__w_err(W, at, SG_EAUTOGRAD, "function %sBackward returned an incorrect number of gradients "
                         "(expected %zu, got %u)", name, n, (unsigned)ngot);
    *nbw = 0;
    uint32_t tin = 0;
    for (uint32_t i = 0; i < n; i++) {
        bool tensor = args[i].kind == W_TENSOR;
        if (got[i].kind != W_NONE && !tensor)
            return sg__w_err(W, at, SG_EAUTOGRAD, "function %sBackward returned a gradient different than None at "
                             "position %u, but the corresponding forward input was not a Variable", name, i + 1);
        if (got[i].kind != W_NONE && got[i].kind != W_TENSOR)
            return sg__w_err(W, at, SG_ETYPE, "function %sBackward returned a %s as gradient %u", name,
                             sg__w_kind_name(&got[i]), i);
        if (got[i].kind == W_TENSOR) {
            if (sg__w_twin(W, got[i].u.t->v) != SG_NOVAL)
                return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: a tensor subclass (TwoTensor) as the "
                                 "gradient of a custom Function");
            bw[*nbw] = got[i].u.t->v;
            of[(*nbw)++] = tin;
        }
        tin += tensor;
    }
    if ((s = sg_tracer_scope_close(W->t, bw, *nbw)))
        return sg__w_fail(W, at, s);
    return SG_OK;
}

/* Is error st one eager raises only as the backward runs (what the
 * program asks for, not what the walker or memory fails at)? */
static bool at_backward(sg_status st)
{
    return st == SG_ETYPE || st == SG_EZERODIV || st == SG_ENEGEXP || st == SG_EINEXACT || st == SG_EDATADEP ||
           st == SG_EASSERT || st == SG_EUNSUPPORTED || st == SG_ESHAPE || st == SG_EALIASING ||
           st == SG_EAUTOGRAD;
}

/* trace_backward_body; where the backward fails as eager's would as it
 * runs, its subgraph is closed failed (sg__tracer_scope_fail: no
 * gradients, *nbw 0) and autograd raises the error where it reaches the
 * Function: eager raises none where no backward reaches it. */
static sg_status trace_backward(sg_walk *W, const sg__py *at, const wv *cls, wctx *c, const wv *outs,
                                uint32_t nouts, const wv *args, size_t n, uint32_t *sc, sg_value *bw, uint32_t *of,
                                uint32_t *nbw)
{
    *sc = SG_NOVAL;
    uint32_t scope = sg_tracer_scope(W->t);
    sg_status s = trace_backward_body(W, at, cls, c, outs, nouts, args, n, sc, bw, of, nbw);
    if (!s || !at_backward(s) || *sc == SG_NOVAL || sg_tracer_scope(W->t) != *sc)
        return s;
    W->line = at->line;
    *nbw = 0;
    char msg[512];
    snprintf(msg, sizeof msg, "%s", sg_ctx_last_error_msg(W->ctx));
    s = sg__tracer_scope_fail(W->t, *sc, s, msg);
    if (!s && sg_tracer_scope(W->t) != scope)
        s = sg__w_err(W, at, SG_EINTERNAL, "a failed custom Function backward left another subgraph open");
    return s ? sg__w_fail(W, at, s) : SG_OK;
}

sg_status sg__w_function_apply(sg_walk *W, const sg__py *at, const wv *cls, wv *args, size_t n, const char **kwn,
                               wv *kwv, size_t nkw, wv *out)
{
    (void)kwn;
    (void)kwv;
    const char *name = cls->u.fn.def->s;
    if (nkw)
        return sg__w_err(W, at, SG_ETYPE, "%s.apply() takes no keyword arguments", name);
    if (W->branches)
        return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: a custom Function in a torch.cond branch or a "
                         "custom Function's backward");
    if (n + 1 > MAX_FN_VALUES)
        return sg__w_err(W, at, SG_ELIMIT, "%s.apply() of more than %d arguments", name, MAX_FN_VALUES - 1);
    const sg__py *fdef = method_of(cls->u.fn.def, "forward");
    if (!fdef)
        return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: %s has no forward", name);
    wctx *c = wmem(W, sizeof *c);
    wv *fargs = wmem(W, (n + 1) * sizeof *fargs);
    if (!c || !fargs || !(c->attrs = sg__w_frame_new(W, NULL)) || (n && !(c->needs = wmem(W, n * sizeof *c->needs))))
        return sg__nomem(W->ctx);
    c->nneeds = (uint32_t)n;
    sg_value ins[MAX_FN_VALUES];
    uint32_t nins = 0;
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        bool rg = false;
        if (args[i].kind == W_TENSOR) {
            if (sg__w_twin(W, args[i].u.t->v) != SG_NOVAL)
                return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: a tensor subclass (TwoTensor) argument of a "
                                 "custom Function");
            ins[nins++] = args[i].u.t->v;
            rg = W->grad && sg__graph_rg_now(W->g, args[i].u.t->v);
        }
        any |= rg;
        c->needs[i] = (wv){.kind = W_BOOL, .u.e = rg ? W->ctx->t : W->ctx->f};
    }
    fargs[0] = (wv){.kind = W_CTX, .u.ctx = {c, NULL}};
    if (n)
        memcpy(fargs + 1, args, n * sizeof *args);
    sg_status s0 = W->grad ? sg__tracer_function_inputs(W->t, ins, nins, name) : SG_OK;
    if (s0)
        return sg__w_fail(W, at, s0);
    /* the forward, under no_grad */
    uint32_t node0 = (uint32_t)W->g->nnodes, storage0 = W->g->nstorages, val0 = (uint32_t)W->g->nvals;
    bool grad = W->grad;
    W->grad = false;
    sg_status s = sg_tracer_set_grad_enabled(W->t, 0);
    wv fn = {.kind = W_FUNC, .u.fn = {fdef, cls->u.fn.env}}, res;
    if (!s)
        s = sg__w_call_static(W, at, &fn, fargs, n + 1, &res);
    W->line = at->line;
    if (!s)
        s = forward_writes(W, at, name, node0, storage0);
    /* the outputs: an input returned as it is becomes a view of itself (view_as, under no_grad) */
    wv outs[MAX_FN_VALUES];
    uint32_t nouts = 0;
    bool single = false;
    if (!s)
        s = tensors_of(W, at, &res, outs, MAX_FN_VALUES, &nouts, &single, "a custom Function's forward");
    for (uint32_t j = 0; j < nouts && !s; j++) {
        if (outs[j].kind != W_TENSOR) {
            s = sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: %s.forward returning a %s", name,
                          sg__w_kind_name(&outs[j]));
            break;
        }
        sg_value v = outs[j].u.t->v;
        if (sg__w_twin(W, v) != SG_NOVAL) {
            s = sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: %s.forward returning a tensor subclass (TwoTensor)",
                          name);
            break;
        }
        for (uint32_t k = 0; k < j && !s; k++)
            if (outs[k].u.t->v == v)
                s = sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: %s.forward returning one tensor twice", name);
        if (s || v >= val0)
            continue;
        bool input = false;
        for (uint32_t k = 0; k < nins; k++)
            input |= ins[k] == v;
        if (!input) {
            s = sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: %s.forward returning a tensor it neither made nor "
                          "took", name);
            break;
        }
        if (!grad && sg__graph_rg_now(W->g, v)) { /* (applied under no_grad, an input that requires grad:
                                                            PyTorch returns a detach of it, its layout kept) */
            sg_arg d = {.kind = SG_ARG_VALUE, .u.v = v};
            s = sg__w_op_call(W, at, "detach", &d, 1, NULL, &outs[j]);
            continue;
        }
        size_t nd = sg_tracer_ndim(W->t, v);
        const sg_expr *sizes[SG_MAX_DIMS];
        for (size_t d = 0; d < nd; d++)
            sizes[d] = sg_tracer_size(W->t, v, d);
        sg_arg a[2] = {{.kind = SG_ARG_VALUE, .u.v = v}, {.kind = SG_ARG_INTS, .u.ints = {nd, sizes}}};
        /* (PyTorch's _view_as_self_with_no_grad: view_as under no_grad, a view made in no_grad mode whose
           base is the input, applied under no_grad or not) */
        s = sg__w_op_call(W, at, "view", a, 2, NULL, &outs[j]);
    }
    W->grad = grad;
    sg_status s2 = sg_tracer_set_grad_enabled(W->t, grad);
    if (s || s2)
        return s ? s : sg__w_fail(W, at, s2);
    if (any) {
        /* the saved tensors as the forward's end has them */
        sg_value saved[MAX_FN_VALUES], bw[MAX_FN_VALUES];
        uint32_t nsaved = 0, of[MAX_FN_VALUES], nbw = 0, sc;
        for (uint32_t i = 0; c->saved && i < c->nsaved; i++)
            if (c->saved[i].kind == W_TENSOR && nsaved < MAX_FN_VALUES)
                saved[nsaved++] = c->saved[i].u.t->v;
        bool eager = W->eager;
        W->eager = false; /* (the backward is recorded, not run) */
        s = trace_backward(W, at, cls, c, outs, nouts, args, n, &sc, bw, of, &nbw);
        W->eager = eager;
        if (s)
            return s;
        sg_value ov[MAX_FN_VALUES];
        for (uint32_t j = 0; j < nouts; j++)
            ov[j] = outs[j].u.t->v;
        if ((s = sg__tracer_function(W->t, sc, ov, nouts, ins, nins, saved, nsaved, of, nbw, at->line)))
            return sg__w_fail(W, at, s);
    }
    if (single) {
        *out = outs[0];
        return SG_OK;
    }
    wv *items = nouts ? wmem(W, nouts * sizeof *items) : NULL;
    if (nouts && !items)
        return sg__nomem(W->ctx);
    if (nouts)
        memcpy(items, outs, nouts * sizeof *items);
    *out = (wv){.kind = W_TUPLE, .u.seq = {nouts, items}};
    return SG_OK;
}
