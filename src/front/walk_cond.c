/* The walker (walk_private.h): torch.cond, run eagerly or traced into
 * two subgraphs joined by a cond node (hop.h). */
#include <stdio.h>

#include "front/walk_private.h"

/* Does a name n (a branch's body, or part of it) reads, not a parameter
 * of def, name a tensor that requires grad in env, the frames def closes
 * over (what Dynamo lifts as an operand)? A local of the branch of the
 * same name counts too: the answer may be yes where the branch reads none. */
static bool closes_over_rg(sg_walk *W, const sg__py *n, const sg__py *def, frame *env)
{
    if (!n)
        return false;
    if (n->kind == SG_PY_NAME && n->s) {
        for (uint32_t i = 0; i < def->nnames; i++)
            if (!strcmp(def->names[i], n->s))
                return false;
        for (frame *f = env; f; f = f->up) {
            wv *v = frame_find(f, n->s);
            if (v)
                return v->kind == W_TENSOR && W->g->vals[v->u.t->v].u.t.requires_grad;
        }
        return false;
    }
    for (uint32_t i = 0; i < n->nkids; i++)
        if (closes_over_rg(W, n->kids[i], def, env))
            return true;
    return false;
}

/* The traced torch.cond of arguments a (checked): each branch in a
 * subgraph, the cond node after them; *out its outputs. */
static sg_status traced(sg_walk *W, const sg__py *at, wv *a, wv *out)
{
    uint32_t nops = a[3].u.seq.n;
    wv *ops = a[3].u.seq.items;
    const wv *pred = &a[0];
    bool two = pred->kind == W_TENSOR && sg__w_twin(W, pred->u.t->v) != SG_NOVAL;
    for (uint32_t i = 0; i < nops; i++)
        two |= ops[i].kind == W_TENSOR && sg__w_twin(W, ops[i].u.t->v) != SG_NOVAL;
    if (two)
        return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: a tensor subclass (TwoTensor) as a traced "
                         "torch.cond's predicate or operand");
    CHAIN(sg__w_prelift(W, at, pred)); /* nested: the predicate and operands are used before the branches */
    for (uint32_t i = 0; i < nops; i++)
        CHAIN(sg__w_prelift(W, at, &ops[i]));
    size_t number = 0;
    while (number < W->prog->nconds && W->prog->conds[number] != at)
        number++;
    char taken[48];
    snprintf(taken, sizeof taken, "cond_true_%zu", number);
    if (sg__graph_scope_find(W->g, taken) != SG_NOVAL) /* this call traced again (a helper called twice) */
        number = W->prog->nconds + W->conds_again++;
    sg_arg p = pred->kind == W_TENSOR ? (sg_arg){.kind = SG_ARG_VALUE, .u.v = pred->u.t->v}
                                      : (sg_arg){.kind = SG_ARG_INT, .u.e = pred->u.e};
    uint32_t scope[2];
    bool single = false;
    for (int k = 0; k < 2; k++) {
        char name[48];
        snprintf(name, sizeof name, "cond_%s_%zu", k ? "false" : "true", number);
        sg_status s = sg_tracer_scope_open(W->t, &scope[k], name);
        if (s)
            return sg__w_fail(W, at, s);
        const sg__py *def = a[1 + k].u.fn.def;
        wv *local = nops ? wmem(W, nops * sizeof *local) : NULL;
        if (nops && !local)
            return sg__nomem(W->ctx);
        for (uint32_t i = 0; i < nops; i++) { /* an operand: a placeholder named by the parameter */
            local[i] = ops[i];
            if (ops[i].kind == W_INT) {
                if ((s = sg_tracer_scope_expr(W->t, ops[i].u.e)))
                    return sg__w_fail(W, at, s);
                continue;
            }
            if (!(local[i].u.t = wmem(W, sizeof *local[i].u.t)))
                return sg__nomem(W->ctx);
            if ((s = sg_tracer_scope_input(W->t, &local[i].u.t->v, i < def->nnames ? def->names[i] : NULL,
                                           ops[i].u.t->v)))
                return sg__w_fail(W, at, s);
        }
        wv res;
        size_t mark = W->njournal;
        W->branches++;
        s = sg__w_call_func(W, at, &a[1 + k], local, nops, NULL, NULL, 0, &res, NULL);
        W->branches--;
        sg_value outs[64];
        size_t nouts = 0;
        if (s) {
        } else if (res.kind == W_TENSOR) { /* what it returns, read before its objects are restored */
            outs[nouts++] = res.u.t->v;
            single = single || !k;
        } else if (res.kind == W_TUPLE || res.kind == W_LIST) {
            for (uint32_t i = 0; i < res.u.seq.n && !s; i++) {
                if (res.u.seq.items[i].kind != W_TENSOR || nouts == 64)
                    s = sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: a torch.cond branch returning a %s",
                                  nouts == 64 ? "tuple of more than 64 tensors" : sg__w_kind_name(&res.u.seq.items[i]));
                else
                    outs[nouts++] = res.u.seq.items[i].u.t->v;
            }
        } else {
            s = sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: a torch.cond branch returning a %s",
                          sg__w_kind_name(&res));
        }
        for (size_t i = 0; i < nouts && !s; i++)
            if (sg__w_twin(W, outs[i]) != SG_NOVAL)
                s = sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: a torch.cond branch returning a tensor "
                              "subclass (TwoTensor)");
        while (W->njournal > mark) { /* the objects as they were before the branch */
            W->njournal--;
            W->journal[W->njournal].o->v = W->journal[W->njournal].v;
        }
        if (s)
            return s;
        if ((s = sg_tracer_scope_close(W->t, outs, nouts)))
            return sg__w_fail(W, at, s);
    }
    W->line = at->line;
    sg_value list;
    sg_status s = sg_tracer_cond(W->t, &list, &p, scope[0], scope[1], W->line);
    if (s)
        return sg__w_fail(W, at, s);
    wv l;
    CHAIN(sg__w_to_wv(W, list, &l));
    if (single && l.u.seq.n == 1)
        *out = l.u.seq.items[0];
    else
        *out = (wv){.kind = W_TUPLE, .u.seq = l.u.seq};
    return SG_OK;
}

/* torch.cond(pred, true_fn, false_fn, operands). Eagerly, the predicate
 * picks the function to call (as the prelude of 1.13 and eager PyTorch
 * do), but for a tensor predicate under grad where an operand or a tensor
 * a branch closes over requires grad: PyTorch's CondAutogradOp, traced as
 * below and its node run by the eager executor; a constant predicate is
 * a call in a trace too (Dynamo inlines it).
 * Otherwise both functions are traced, each in a subgraph of its own
 * (cond_true_N, cond_false_N, N counting the torch.cond calls in the
 * order of the program text; a call traced again, in a helper called
 * twice or a branch two conds take, numbered after them in the order
 * traced), and joined by a cond node (hop.h). */
sg_status sg__w_torch_cond(sg_walk *W, const sg__py *at, wv *args, size_t n, const char **kwn, wv *kwv, size_t nkw,
                           wv *out)
{
    static const char *const names[4] = {"pred", "true_fn", "false_fn", "operands"};
    wv a[4] = {{.kind = W_NONE}, {.kind = W_NONE}, {.kind = W_NONE}, {.kind = W_TUPLE}};
    bool given[4] = {false};
    if (n > 4)
        return sg__w_err(W, at, SG_ETYPE, "torch.cond() takes 4 arguments, %zu given", n);
    for (size_t i = 0; i < n; i++)
        a[i] = args[i], given[i] = true;
    for (size_t k = 0; k < nkw; k++) {
        size_t i = 0;
        while (i < 4 && strcmp(kwn[k], names[i]))
            i++;
        if (i == 4 || given[i])
            return sg__w_err(W, at, SG_ETYPE, "torch.cond(): an unexpected or repeated argument '%s'", kwn[k]);
        a[i] = kwv[k];
        given[i] = true;
    }
    if (!given[0] || !given[1] || !given[2])
        return sg__w_err(W, at, SG_ETYPE, "torch.cond() needs pred, true_fn and false_fn");
    if (a[1].kind != W_FUNC || a[2].kind != W_FUNC)
        return sg__w_err(W, at, SG_EUNSUPPORTED,
                         "unsupported: torch.cond branches that are not functions of the program");
    if (a[3].kind != W_TUPLE && a[3].kind != W_LIST)
        return sg__w_err(W, at, SG_ETYPE, "torch.cond: operands must be a tuple or a list");
    uint32_t nops = a[3].u.seq.n;
    wv *ops = a[3].u.seq.items;
    for (uint32_t i = 0; i < nops; i++)
        if (ops[i].kind != W_TENSOR && ops[i].kind != W_INT)
            return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: a torch.cond operand that is a %s",
                             sg__w_kind_name(&ops[i]));
    const wv *pred = &a[0];
    bool constant =
        pred->kind == W_BOOL && (sg_expr_op(pred->u.e) == SG_OP_TRUE || sg_expr_op(pred->u.e) == SG_OP_FALSE);
    if (pred->kind != W_TENSOR && pred->kind != W_BOOL)
        return sg__w_err(W, at, SG_ETYPE, "torch.cond: the predicate must be a boolean tensor or a bool, got %s",
                         sg__w_kind_name(pred));
    /* eager: the branch called, but for a tensor predicate under grad where an operand or a tensor the
       branches close over requires grad (PyTorch's CondAutogradOp: both branches traced, the cond run) */
    bool traced_eager = W->eager && !constant && pred->kind == W_TENSOR && W->grad;
    if (traced_eager) {
        bool rg = false;
        for (uint32_t i = 0; i < nops; i++)
            rg |= ops[i].kind == W_TENSOR && W->g->vals[ops[i].u.t->v].u.t.requires_grad;
        for (int k = 1; k <= 2 && !rg; k++)
            rg = closes_over_rg(W, a[k].u.fn.def, a[k].u.fn.def, a[k].u.fn.env);
        traced_eager = rg;
    }
    if ((W->eager && !traced_eager) || constant) {
        bool taken;
        if (pred->kind == W_TENSOR && sg_tracer_dtype(W->t, pred->u.t->v) != SG_BOOL)
            return sg__w_err(W, at, SG_ETYPE, "torch.cond: the predicate must be a boolean tensor or a bool");
        CHAIN(sg__w_truthy(W, at, pred, &taken));
        return sg__w_call_func(W, at, &a[taken ? 1 : 2], ops, nops, NULL, NULL, 0, out, NULL);
    }
    if (!traced_eager)
        return traced(W, at, a, out);
    /* (the eager graph records the cond: its branches are recorded, not run; the cond node runs) */
    uint32_t node0 = (uint32_t)W->g->nnodes, val0 = (uint32_t)W->g->nvals;
    W->eager = false;
    sg_status s = traced(W, at, a, out);
    W->eager = true;
    if (!s && (s = sg__xeager_catch_up(W->ex, node0, val0)))
        return sg__w_fail(W, at, s);
    return s;
}
