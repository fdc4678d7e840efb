/* The walker (walk_private.h): calls of the program's functions, of builtins (torch._check,
 * torch.no_grad ...) and of tensor methods. */
#include <stdio.h>

#include "front/walk_private.h"

static sg_status call_def(sg_walk *W, const sg__py *at, const wv *fn, wv *args, size_t npos, const char **kwn,
                          wv *kwv, size_t nkw, wv *out, frame **frame_out, bool method);

sg_status sg__w_call_func(sg_walk *W, const sg__py *at, const wv *fn, wv *args, size_t npos, const char **kwn,
                          wv *kwv, size_t nkw, wv *out, frame **frame_out)
{
    return call_def(W, at, fn, args, npos, kwn, kwv, nkw, out, frame_out, false);
}

sg_status sg__w_call_static(sg_walk *W, const sg__py *at, const wv *fn, wv *args, size_t npos, wv *out)
{
    return call_def(W, at, fn, args, npos, NULL, NULL, 0, out, NULL, true);
}

static sg_status call_def(sg_walk *W, const sg__py *at, const wv *fn, wv *args, size_t npos, const char **kwn,
                          wv *kwv, size_t nkw, wv *out, frame **frame_out, bool method)
{
    const sg__py *def = fn->u.fn.def;
    if (W->depth >= MAX_CALL_DEPTH)
        return sg__w_err(W, at, SG_ELIMIT, "calls nest more than %d deep", MAX_CALL_DEPTH);
    if (npos > def->nnames)
        return sg__w_err(W, at, SG_ETYPE, "%s() takes %u positional arguments but %zu were given", def->s,
                         (unsigned)def->nnames, npos);
    frame *f = sg__w_frame_new(W, fn->u.fn.env);
    if (!f)
        return sg__nomem(W->ctx);
    for (size_t i = 0; i < npos; i++)
        CHAIN(sg__w_frame_set(W, f, def->names[i], args[i]));
    for (size_t k = 0; k < nkw; k++) {
        uint32_t i = 0;
        while (i < def->nnames && strcmp(def->names[i], kwn[k]))
            i++;
        if (i == def->nnames)
            return sg__w_err(W, at, SG_ETYPE, "%s() got an unexpected keyword argument '%s'", def->s, kwn[k]);
        if (i < npos || frame_find(f, kwn[k]))
            return sg__w_err(W, at, SG_ETYPE, "%s() got multiple values for argument '%s'", def->s, kwn[k]);
        CHAIN(sg__w_frame_set(W, f, def->names[i], kwv[k]));
    }
    for (uint32_t i = 0; i < def->nnames; i++)
        if (!frame_find(f, def->names[i]))
            return sg__w_err(W, at, SG_ETYPE, "%s() missing required argument: '%s'", def->s, def->names[i]);
    if (def->ndeco && !method)
        return sg__w_err(W, def->deco[0], SG_EUNSUPPORTED, "unsupported: decorators outside autograd functions");
    /* a collection in the callee keeps f and what the caller's statement made so far */
    W->calls[W->depth].f = f;
    W->calls[W->depth].lo = W->stmt_mark;
    W->calls[W->depth].hi = (uint32_t)W->g->nvals;
    W->depth++;
    bool returned = false;
    *out = (wv){.kind = W_NONE};
    unsigned line = W->line;
    sg_status s = sg__w_run_block(W, f, def->kids[0], &returned, out);
    W->line = line;
    W->depth--;
    W->stmt_mark = W->calls[W->depth].lo; /* the caller's statement goes on */
    if (frame_out)
        *frame_out = f;
    return s;
}

static sg_status call_builtin(sg_walk *W, const sg__py *at, const char *name, wv *args, size_t n, const char **kwn,
                              wv *kwv, size_t nkw, wv *out)
{
    if (!strcmp(name, "no_grad") || !strcmp(name, "enable_grad")) {
        if (n || nkw)
            return sg__w_err(W, at, SG_ETYPE, "torch.%s() takes no arguments", name);
        *out = (wv){.kind = W_GRADMODE, .u.b = name[0] == 'e'};
        return SG_OK;
    }
    if (!strcmp(name, "_check")) {
        if (n < 1 || n > 2 || nkw)
            return sg__w_err(W, at, SG_ETYPE, "torch._check(cond) takes a condition");
        const sg_expr *c;
        if (args[0].kind == W_BOOL)
            c = args[0].u.e;
        else if (args[0].kind == W_TENSOR || args[0].kind == W_FLOAT)
            return sg__w_err(W, at, SG_ETYPE, "torch._check: the condition must be a bool, got %s",
                             sg__w_kind_name(&args[0]));
        else {
            bool b;
            CHAIN(sg__w_truthy(W, at, &args[0], &b));
            c = b ? W->ctx->t : W->ctx->f;
        }
        sg_status s = sg_tracer_check(W->t, c, W->line);
        if (s == SG_EASSERT)
            return sg__w_err(W, at, SG_EASSERT, "torch._check failed");
        if (s)
            return sg__w_fail(W, at, s);
        *out = (wv){.kind = W_NONE};
        return SG_OK;
    }
    if (!strcmp(name, "cond"))
        return sg__w_torch_cond(W, at, args, n, kwn, kwv, nkw, out);
    const pyop *p = pyop_find(W, name);
    if (!p)
        return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: torch.%s", name);
    return sg__w_call_pyop(W, at, p, args, n, kwn, kwv, nkw, out);
}

sg_status sg__w_call_value(sg_walk *W, const sg__py *at, const wv *fn, wv *args, size_t npos, const char **kwn,
                           wv *kwv, size_t nkw, wv *out)
{
    switch ((wkind)fn->kind) {
    case W_FUNC:
        return sg__w_call_func(W, at, fn, args, npos, kwn, kwv, nkw, out, NULL);
    case W_BUILTIN:
        return call_builtin(W, at, fn->u.name, args, npos, kwn, kwv, nkw, out);
    case W_METHOD: {
        bool handled;
        wobj *t = fn->u.method.self;
        CHAIN(sg__w_tensor_method(W, at, t, fn->u.method.name, args, npos, kwn, kwv, nkw, out, &handled));
        if (handled)
            return SG_OK;
        const pyop *p = pyop_find(W, fn->u.method.name);
        if (!p || (p->flags & SG_PYF_FUNC))
            return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: Tensor.%s", fn->u.method.name);
        wv all[SG_SCHEMA_ARGS + SG_MAX_DIMS];
        if (npos + 1 > sizeof all / sizeof *all)
            return sg__w_err(W, at, SG_ELIMIT, "too many arguments");
        all[0] = (wv){.kind = W_TENSOR, .u.t = t};
        if (npos) /* args may be NULL when there are none */
            memcpy(all + 1, args, npos * sizeof *args);
        return sg__w_call_pyop(W, at, p, all, npos + 1, kwn, kwv, nkw, out);
    }
    case W_APPLY:
        return sg__w_function_apply(W, at, fn, args, npos, kwn, kwv, nkw, out);
    case W_CTXFN:
        return sg__w_ctx_call(W, at, fn, args, npos, nkw, out);
    case W_CLASS:
        return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: instantiating a custom Function (call %s.apply)",
                         fn->u.fn.def->s);
    default:
        return sg__w_err(W, at, SG_ETYPE, "'%s' object is not callable", sg__w_kind_name(fn));
    }
}
