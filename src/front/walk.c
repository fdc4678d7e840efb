/* The walker of the program language (spec/program.md): it runs a parsed
 * program with Python's meaning, turning every tensor operation into a call
 * of an aten operator through the tracer (graph.h). Two modes share every
 * line of it:
 *  - trace: the tracer's environment is the case's; sizes are its symbols,
 *    an `if` on sizes asks it (recording a guard), torch._check becomes a
 *    runtime assert;
 *  - eager: the walker owns an environment where every input size is a
 *    constant, and runs each node the tracer records on concrete tensors
 *    (exec.h) right away; the unbacked symbols of data-dependent results
 *    become the constants their node computed, so the rest of the program
 *    sees plain numbers, as PyTorch's eager mode does.
 * Python values are walker values (wv); a tensor is an object (wobj) whose
 * current graph value changes when an in-place operator writes it, so that
 * Python's identity (`y = x.add_(1)` is x) holds. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "expr/expr_private.h"
#include "front/front_private.h"
#include "graph/ops.h"
#include "shapeguard/hop.h"
#include "shapeguard/print.h"

/* ---- values ---- */

typedef enum wkind {
    W_NONE,
    W_BOOL,    /* e: a boolean expression */
    W_INT,     /* e: an integer expression */
    W_FLOAT,   /* f (known), or v: a float value of the graph whose value is not tracked */
    W_TENSOR,  /* t */
    W_TUPLE,   /* seq */
    W_LIST,    /* seq */
    W_FUNC,    /* fn: a def of the program and the frame it closes over */
    W_BUILTIN, /* name: "torch.zeros", "torch.no_grad", "torch" (the module) */
    W_METHOD,  /* method: a tensor and a method name */
    W_DTYPE,   /* dtype */
    W_GRADMODE,/* b: a torch.no_grad() (0) or torch.enable_grad() (1) context */
    W_SLICE,   /* seq: start, stop, step (W_NONE where absent) */
    W_ELLIPSIS
} wkind;

typedef struct wobj {
    sg_value v; /* the tensor's graph value now */
} wobj;

typedef struct frame frame;
typedef struct wv wv;
struct wv {
    uint8_t kind;
    bool known; /* W_FLOAT: f holds the value */
    union {
        const sg_expr *e;
        double f;
        wobj *t;
        struct {
            uint32_t n;
            wv *items;
        } seq;
        struct {
            const sg__py *def;
            frame *env;
        } fn;
        const char *name;
        struct {
            wobj *self;
            const char *name;
        } method;
        sg_dtype dtype;
        bool b;
    } u;
    sg_value fv; /* W_FLOAT not known: its graph value */
};

struct frame {
    frame *up;
    size_t n, cap;
    const char **names;
    wv *vals;
};

typedef struct block {
    struct block *next;
    size_t used, size;
    max_align_t data[];
} block;

struct sg__prog {
    sg_ctx *ctx;
    sg__ast *ast;
    const sg__py *entry;    /* the last top-level def */
    const sg__py **conds;   /* the torch.cond calls, in the order of the text (their numbers) */
    size_t nconds, capconds;
};

struct sg__walk {
    sg_ctx *ctx;
    const sg__prog *prog;
    sg_tracer *t;
    sg__graph *g;
    bool eager;
    sg_env *own_env;     /* eager: the walker's own environment and tracer */
    sg_tracer *own_t;
    sg__xrun *x;         /* eager: the concrete run */
    block *blocks;
    frame *globals;
    frame *entry_frame;  /* the entry function's frame (for shape VALUE) */
    frame *params;       /* the inputs, by parameter name */
    wv result;
    bool ran;
    bool grad;           /* grad mode */
    unsigned depth;
    unsigned line;       /* the line under way */
};

#define MAX_CALL_DEPTH 200

/* ---- memory ---- */

static void *wmem(sg__walk *W, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!W->blocks || W->blocks->size - W->blocks->used < n) {
        size_t size = n > 8192 ? n : 8192;
        block *b = sg__malloc(W->ctx, sizeof *b + size);
        if (!b)
            return NULL;
        b->next = W->blocks;
        b->used = 0;
        b->size = size;
        W->blocks = b;
    }
    void *p = (char *)W->blocks->data + W->blocks->used;
    W->blocks->used += n;
    return memset(p, 0, n);
}

/* ---- errors ---- */

static sg_status werr(sg__walk *W, const sg__py *at, sg_status st, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (at)
        return sg__err(W->ctx, st, "line %u, column %u: %s", (unsigned)at->line, (unsigned)at->col, msg);
    return sg__err(W->ctx, st, "line %u: %s", W->line, msg);
}

/* The context's message of status st, prefixed with the line. */
static sg_status wfail(sg__walk *W, const sg__py *at, sg_status st)
{
    if (st == SG_ENOMEM)
        return st;
    char msg[512];
    snprintf(msg, sizeof msg, "%s", sg_ctx_last_error_msg(W->ctx));
    if (!strncmp(msg, "line ", 5))
        return sg__err(W->ctx, st, "%s", msg);
    return werr(W, at, st, "%s", msg);
}

/* ---- frames ---- */

static frame *frame_new(sg__walk *W, frame *up)
{
    frame *f = wmem(W, sizeof *f);
    if (f)
        f->up = up;
    return f;
}

static wv *frame_find(frame *f, const char *name)
{
    for (size_t i = f->n; i-- > 0;) /* the first letters compared first: most names differ there */
        if (f->names[i][0] == name[0] && !strcmp(f->names[i], name))
            return &f->vals[i];
    return NULL;
}

static sg_status frame_set(sg__walk *W, frame *f, const char *name, wv v)
{
    wv *slot = frame_find(f, name);
    if (slot) {
        *slot = v;
        return SG_OK;
    }
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 8;
        const char **names = wmem(W, cap * sizeof *names);
        wv *vals = wmem(W, cap * sizeof *vals);
        if (!names || !vals)
            return sg__nomem(W->ctx);
        if (f->n) {
            memcpy(names, f->names, f->n * sizeof *names);
            memcpy(vals, f->vals, f->n * sizeof *vals);
        }
        f->names = names;
        f->vals = vals;
        f->cap = cap;
    }
    f->names[f->n] = name;
    f->vals[f->n++] = v;
    return SG_OK;
}

/* ---- the program ---- */

/* Is e a call of torch.cond? */
static bool is_cond_call(const sg__py *e)
{
    if (e->kind != SG_PY_CALL || !e->nkids)
        return false;
    const sg__py *f = e->kids[0];
    return f->kind == SG_PY_ATTR && !strcmp(f->s, "cond") && f->nkids && f->kids[0]->kind == SG_PY_NAME &&
           !strcmp(f->kids[0]->s, "torch");
}

/* The torch.cond calls below e (depth bounded by the parser's limit). */
static sg_status find_conds(sg__prog *p, const sg__py *e)
{
    if (is_cond_call(e)) {
        if (!sg__grow(p->ctx, (void **)&p->conds, &p->capconds, p->nconds + 1, sizeof *p->conds))
            return sg__nomem(p->ctx);
        p->conds[p->nconds++] = e;
    }
    for (uint32_t i = 0; i < e->nkids; i++)
        if (e->kids[i]) {
            sg_status s = find_conds(p, e->kids[i]);
            if (s)
                return s;
        }
    for (uint32_t i = 0; i < e->ndeco; i++) {
        sg_status s = find_conds(p, e->deco[i]);
        if (s)
            return s;
    }
    return SG_OK;
}

static int text_order(const void *pa, const void *pb)
{
    const sg__py *a = *(const sg__py *const *)pa, *b = *(const sg__py *const *)pb;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    return a->col < b->col ? -1 : a->col > b->col;
}

sg_status sg__prog_new(sg_ctx *ctx, sg__prog **out, const char *source, size_t len, uint32_t first_line)
{
    *out = NULL;
    sg__prog *p = sg__calloc(ctx, 1, sizeof *p);
    if (!p)
        return sg__nomem(ctx);
    p->ctx = ctx;
    sg_status s = sg__py_parse_at(ctx, &p->ast, source, len, first_line);
    if (s) {
        sg_free(p);
        return s;
    }
    const sg__py *m = sg__ast_module(p->ast);
    for (uint32_t i = 0; i < m->nkids; i++)
        if (m->kids[i]->kind == SG_PY_DEF)
            p->entry = m->kids[i];
    if (!(s = find_conds(p, m)) && p->nconds)
        qsort(p->conds, p->nconds, sizeof *p->conds, text_order);
    if (s) {
        sg__prog_free(p);
        return s;
    }
    if (!p->entry) {
        sg__prog_free(p);
        return sg__err(ctx, SG_ESYNTAX, "the program defines no function");
    }
    *out = p;
    return SG_OK;
}

void sg__prog_free(sg__prog *p)
{
    if (!p)
        return;
    sg_free(p->conds);
    sg__ast_free(p->ast);
    sg_free(p);
}

size_t sg__prog_nparams(const sg__prog *p)
{
    return p->entry->nnames;
}

const char *sg__prog_param(const sg__prog *p, size_t i)
{
    return p->entry->names[i];
}

/* ---- walks ---- */

static sg_status walk_init(sg__walk *W)
{
    W->grad = true;
    W->globals = frame_new(W, NULL);
    W->params = frame_new(W, NULL);
    if (!W->globals || !W->params)
        return sg__nomem(W->ctx);
    const sg__py *m = sg__ast_module(W->prog->ast);
    for (uint32_t i = 0; i < m->nkids; i++) {
        const sg__py *k = m->kids[i];
        if (k->kind == SG_PY_DEF) {
            wv f = {.kind = W_FUNC, .u.fn = {k, W->globals}};
            CHAIN(frame_set(W, W->globals, k->s, f));
        }
    }
    return SG_OK;
}

sg_status sg__walk_trace(const sg__prog *p, sg_tracer *t, sg__walk **out)
{
    *out = NULL;
    sg__walk *W = sg__calloc(p->ctx, 1, sizeof *W);
    if (!W)
        return sg__nomem(p->ctx);
    W->ctx = p->ctx;
    W->prog = p;
    W->t = t;
    W->g = (sg__graph *)sg__tracer_graph(t);
    sg_status s = walk_init(W);
    if (s) {
        sg__walk_free(W);
        return s;
    }
    *out = W;
    return SG_OK;
}

sg_status sg__walk_eager(const sg__prog *p, sg__walk **out)
{
    *out = NULL;
    sg__walk *W = sg__calloc(p->ctx, 1, sizeof *W);
    if (!W)
        return sg__nomem(p->ctx);
    W->ctx = p->ctx;
    W->prog = p;
    W->eager = true;
    sg_status s = sg_env_new(p->ctx, NULL, &W->own_env);
    if (!s)
        s = sg_tracer_new(W->own_env, &W->own_t);
    if (!s) {
        W->t = W->own_t;
        W->g = (sg__graph *)sg__tracer_graph(W->t);
        s = sg__xrun_new(p->ctx, W->g, &W->x);
    }
    if (!s)
        s = walk_init(W);
    if (s) {
        sg__walk_free(W);
        return s;
    }
    *out = W;
    return SG_OK;
}

void sg__walk_free(sg__walk *W)
{
    if (!W)
        return;
    sg__xrun_free(W->x);
    sg_tracer_free(W->own_t);
    sg_env_free(W->own_env);
    block *b = W->blocks;
    while (b) {
        block *n = b->next;
        sg_free(b);
        b = n;
    }
    sg_free(W);
}

sg_tracer *sg__walk_tracer(const sg__walk *W)
{
    return W->t;
}

sg__xrun *sg__walk_xrun(const sg__walk *W)
{
    return W->x;
}

static sg_status bind_param(sg__walk *W, const char *name, wv v)
{
    bool found = false;
    for (size_t i = 0; i < sg__prog_nparams(W->prog); i++)
        if (!strcmp(sg__prog_param(W->prog, i), name))
            found = true;
    if (!found)
        return sg__err(W->ctx, SG_EINVAL, "the program has no parameter %s", name);
    return frame_set(W, W->params, name, v);
}

static const char *param_name(const sg__walk *W, const char *name)
{
    for (size_t i = 0; i < sg__prog_nparams(W->prog); i++)
        if (!strcmp(sg__prog_param(W->prog, i), name))
            return sg__prog_param(W->prog, i);
    return NULL;
}

sg_status sg__walk_input_value(sg__walk *W, const char *name, sg_value v)
{
    const char *pn = param_name(W, name);
    if (!pn)
        return sg__err(W->ctx, SG_EINVAL, "the program has no parameter %s", name);
    wv x = {0};
    switch (sg_tracer_kind(W->t, v)) {
    case SG_VALUE_TENSOR:
        x.kind = W_TENSOR;
        if (!(x.u.t = wmem(W, sizeof *x.u.t)))
            return sg__nomem(W->ctx);
        x.u.t->v = v;
        break;
    case SG_VALUE_INT:
        x.kind = W_INT;
        x.u.e = sg_tracer_expr(W->t, v);
        break;
    default:
        return sg__err(W->ctx, SG_EINVAL, "input %s: not a tensor or an int", name);
    }
    return bind_param(W, pn, x);
}

sg_status sg__walk_input_same(sg__walk *W, const char *name, const char *as)
{
    const char *pn = param_name(W, name);
    wv *o = frame_find(W->params, as);
    if (!pn || !o)
        return sg__err(W->ctx, SG_EINVAL, "input %s = %s: no such parameter", name, as);
    return bind_param(W, pn, *o);
}

sg_status sg__walk_input_tensor(sg__walk *W, const char *name, sg__xtensor *xt, int requires_grad)
{
    if (!W->eager)
        return sg__err(W->ctx, SG_EINVAL, "a concrete input in a trace");
    const char *pn = param_name(W, name);
    if (!pn)
        return sg__err(W->ctx, SG_EINVAL, "the program has no parameter %s", name);
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS], *off;
    for (uint32_t d = 0; d < xt->ndim; d++) {
        sizes[d] = sg__int_si(W->ctx, xt->sizes[d]);
        strides[d] = sg__int_si(W->ctx, xt->strides[d]);
        if (!sizes[d] || !strides[d])
            return sg_ctx_last_error(W->ctx);
    }
    if (!(off = sg__int_si(W->ctx, xt->offset)))
        return sg_ctx_last_error(W->ctx);
    sg_fake fake = {.ndim = xt->ndim, .sizes = sizes, .strides = strides, .offset = off};
    /* an input viewing the storage of an earlier one aliases it */
    sg_value of = SG_NOVAL;
    for (size_t i = 0; i < W->params->n && of == SG_NOVAL; i++) {
        const wv *p = &W->params->vals[i];
        if (p->kind == W_TENSOR) {
            const sg__xval *xv = sg__xrun_value(W->x, p->u.t->v);
            if (xv->kind == SG_XV_TENSOR && xv->u.t->st == xt->st)
                of = p->u.t->v;
        }
    }
    sg_value v;
    const sg_expr *numel = sg__int_si(W->ctx, xt->st->numel); /* its storage: the concrete one's size */
    if (!numel)
        return sg_ctx_last_error(W->ctx);
    CHAIN(sg_tracer_input_view(W->t, &v, name, &fake, (sg_dtype)xt->dtype, requires_grad, of));
    if (of == SG_NOVAL)
        sg__graph_set_storage_numel(W->g, W->g->vals[v].u.t.storage, numel);
    sg__xval xv = {.kind = SG_XV_TENSOR, .u.t = xt};
    CHAIN(sg__xrun_input(W->x, v, &xv));
    /* the run shares the input's version counter: writes bump the caller's */
    return sg__walk_input_value(W, pn, v);
}

sg_status sg__walk_input_int(sg__walk *W, const char *name, int64_t value)
{
    const char *pn = param_name(W, name);
    if (!pn)
        return sg__err(W->ctx, SG_EINVAL, "the program has no parameter %s", name);
    wv x = {.kind = W_INT, .u.e = sg__int_si(W->ctx, value)};
    if (!x.u.e)
        return sg_ctx_last_error(W->ctx);
    return bind_param(W, pn, x);
}

/* ---- calling operators ---- */

static sg_status eager_catch_up(sg__walk *W, uint32_t first_node, uint32_t first_val)
{
    sg_status s = sg__xrun_rest(W->x);
    if (s)
        return s;
    const sg_expr *syms[16], *vals[16];
    size_t n = 0;
    for (uint32_t i = first_node; i < W->g->nnodes; i++) {
        const sg__gnode *nd = &W->g->nodes[i];
        for (uint32_t k = 0; k < nd->nbinds && n < 16; k++) {
            int64_t v;
            const sg_expr *sym = W->g->exprs[nd->binds + k];
            if (!sg__xrun_sym(W->x, sym, &v))
                return sg__err(W->ctx, SG_EINTERNAL, "eager: %s not bound by its node", sg_expr_sym_name(sym));
            syms[n] = sym;
            if (!(vals[n++] = sg__int_si(W->ctx, v)))
                return sg_ctx_last_error(W->ctx);
        }
    }
    return sg__graph_subst(W->g, first_val, n, syms, vals);
}

static sg_status to_wv(sg__walk *W, sg_value v, wv *out);

static sg_status list_to_wv(sg__walk *W, sg_value v, wv *out)
{
    size_t n = sg_tracer_list_len(W->t, v);
    out->kind = W_LIST;
    out->u.seq.n = (uint32_t)n;
    if (n && !(out->u.seq.items = wmem(W, n * sizeof(wv))))
        return sg__nomem(W->ctx);
    for (size_t i = 0; i < n; i++)
        CHAIN(to_wv(W, sg_tracer_list_get(W->t, v, i), &out->u.seq.items[i]));
    return SG_OK;
}

/* A walker value for graph value v (a new tensor object for a tensor). */
static sg_status to_wv(sg__walk *W, sg_value v, wv *out)
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
            const sg__xval *x = sg__xrun_value(W->x, v);
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

/* Call aten operator op (sch: its schema, found by the caller; NULL: found
 * by name); *out is its result. An in-place operator gives back its self
 * object (now at the new value), out= its out object. flags: the node's. */
static sg_status op_call_schema(sg__walk *W, const sg__py *at, const char *op, const sg__schema *sch,
                                const sg_arg *args, size_t n, wobj *writes, wv *out, uint8_t flags)
{
    uint32_t first_node = (uint32_t)W->g->nnodes, first_val = (uint32_t)W->g->nvals;
    sg_value v;
    sg_status s = sch ? sg__tracer_call_schema(W->t, &v, sch, args, n, W->line)
                      : sg_tracer_call(W->t, &v, op, args, n, W->line);
    if (s)
        return wfail(W, at, s);
    if (flags && W->g->nnodes > first_node) /* before an eager run sees the node */
        W->g->nodes[W->g->nnodes - 1].flags |= flags;
    if (W->eager && (s = eager_catch_up(W, first_node, first_val)))
        return wfail(W, at, s);
    if (writes) {
        writes->v = v;
        out->kind = W_TENSOR;
        out->u.t = writes;
        return SG_OK;
    }
    return to_wv(W, v, out);
}

/* op_call_schema of an operator named op, with node flags. */
static sg_status op_call_flags(sg__walk *W, const sg__py *at, const char *op, const sg_arg *args, size_t n,
                               wobj *writes, wv *out, uint8_t flags)
{
    return op_call_schema(W, at, op, NULL, args, n, writes, out, flags);
}

/* Call aten operator op; *out is its result. An in-place operator gives
 * back its self object (now at the new value), out= its out object. */
static sg_status op_call(sg__walk *W, const sg__py *at, const char *op, const sg_arg *args, size_t n, wobj *writes,
                         wv *out)
{
    return op_call_flags(W, at, op, args, n, writes, out, 0);
}

/* ---- reading values ---- */

static const char *kind_name(const wv *v)
{
    static const char *const names[] = {"None",  "bool",     "int",   "float",  "Tensor", "tuple",    "list",
                                        "function", "builtin", "method", "dtype", "context", "slice", "Ellipsis"};
    return v->kind < sizeof names / sizeof *names ? names[v->kind] : "?";
}

static bool is_number(const wv *v)
{
    return v->kind == W_INT || v->kind == W_FLOAT || v->kind == W_BOOL;
}

/* The truth of a boolean expression: a constant, or asked of the
 * environment (a guard in a trace; data-dependent if it needs an unbacked
 * value). */
static sg_status truth_of(sg__walk *W, const sg__py *at, const sg_expr *e, bool *out)
{
    if (sg_expr_op(e) == SG_OP_TRUE || sg_expr_op(e) == SG_OP_FALSE) {
        *out = sg_expr_op(e) == SG_OP_TRUE;
        return SG_OK;
    }
    int b;
    char prov[32];
    snprintf(prov, sizeof prov, "line %u", W->line);
    sg_status s = sg_env_evaluate(sg__walk_env(W), &b, e, prov);
    if (s == SG_EDATADEP) {
        char *txt = NULL;
        if (sg_print(W->ctx, &txt, e, SG_FMT_PYTHON) != SG_OK)
            txt = NULL;
        s = werr(W, at, SG_EDATADEP, "data-dependent: the branch needs the value of %s", txt ? txt : "?");
        sg_free(txt);
        return s;
    }
    if (s)
        return wfail(W, at, s);
    *out = b != 0;
    return SG_OK;
}

static sg_status eval(sg__walk *W, frame *f, const sg__py *e, wv *out);
static sg_status call_value(sg__walk *W, const sg__py *at, const wv *fn, wv *args, size_t npos, const char **kwn,
                            wv *kwv, size_t nkw, wv *out);

/* Python's bool(v). */
static sg_status truthy(sg__walk *W, const sg__py *at, const wv *v, bool *out)
{
    switch ((wkind)v->kind) {
    case W_NONE:
        *out = false;
        return SG_OK;
    case W_BOOL:
        return truth_of(W, at, v->u.e, out);
    case W_INT: {
        const sg_expr *ne;
        CHAIN(sg_expr_rel(W->ctx, &ne, SG_REL_NE, v->u.e, W->ctx->zero));
        return truth_of(W, at, ne, out);
    }
    case W_FLOAT:
        if (!v->known)
            return werr(W, at, SG_EDATADEP, "data-dependent: the branch needs the value of a float read from a tensor");
        *out = v->u.f != 0;
        return SG_OK;
    case W_TUPLE:
    case W_LIST:
        *out = v->u.seq.n != 0;
        return SG_OK;
    case W_TENSOR: { /* bool(t): its one element */
        wv x;
        sg_arg a = {.kind = SG_ARG_VALUE, .u.v = v->u.t->v};
        CHAIN(op_call(W, at, "_local_scalar_dense", &a, 1, NULL, &x));
        if (x.kind == W_FLOAT)
            return truthy(W, at, &x, out);
        return truthy(W, at, &x, out);
    }
    default:
        *out = true;
        return SG_OK;
    }
}

static sg_status want_int(sg__walk *W, const sg__py *at, const wv *v, const sg_expr **out, const char *what)
{
    if (v->kind == W_INT) {
        *out = v->u.e;
        return SG_OK;
    }
    if (v->kind == W_BOOL && (sg_expr_op(v->u.e) == SG_OP_TRUE || sg_expr_op(v->u.e) == SG_OP_FALSE)) {
        *out = sg_expr_op(v->u.e) == SG_OP_TRUE ? W->ctx->one : W->ctx->zero;
        return SG_OK;
    }
    return werr(W, at, SG_ETYPE, "%s: expected an int, got %s", what, kind_name(v));
}

/* A constant int (a size the environment can decide is guarded to its
 * value, as int(s0) specializes in PyTorch: used for indexes of tuples). */
static sg_status want_const(sg__walk *W, const sg__py *at, const wv *v, int64_t *out, const char *what)
{
    const sg_expr *e;
    CHAIN(want_int(W, at, v, &e, what));
    if (sg_expr_get_si(e, out))
        return SG_OK;
    return werr(W, at, SG_EUNSUPPORTED, "unsupported: %s must be a constant int", what);
}

/* ---- arguments of aten calls ---- */

typedef struct argv {
    sg_arg a[SG_SCHEMA_ARGS + 4];
    size_t n;
    const sg_expr *ints[SG_SCHEMA_ARGS + 4][SG_MAX_DIMS];
    sg_value vals[SG_SCHEMA_ARGS + 4][SG_MAX_DIMS];
} argv;

/* v as an argument of an aten call (name NULL: positional). */
static sg_status arg_of(sg__walk *W, const sg__py *at, argv *A, const wv *v, const char *name)
{
    if (A->n == sizeof A->a / sizeof *A->a)
        return werr(W, at, SG_EINVAL, "too many arguments");
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
            return werr(W, at, SG_EUNSUPPORTED, "unsupported: a symbolic bool as an operator argument");
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
            return werr(W, at, SG_EUNSUPPORTED, "unsupported: a float computed from a float read from a tensor, "
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
            return werr(W, at, SG_ELIMIT, "a list of more than %d entries", SG_MAX_DIMS);
        bool tensors = n > 0 && v->u.seq.items[0].kind == W_TENSOR;
        for (uint32_t i = 0; i < n; i++) {
            const wv *x = &v->u.seq.items[i];
            if (tensors) {
                if (x->kind != W_TENSOR)
                    return werr(W, at, SG_ETYPE, "a list mixing tensors and %s", kind_name(x));
                A->vals[k][i] = x->u.t->v;
            } else {
                CHAIN(want_int(W, at, x, &A->ints[k][i], "a list entry"));
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
        return werr(W, at, SG_ETYPE, "a %s cannot be an operator argument", kind_name(v));
    }
    A->n++;
    return SG_OK;
}

/* ---- tensor methods and torch functions ---- */

/* How a Python name maps to aten overloads: the first whose schema takes
 * the arguments (PyTorch's Python argument parser, for our operators). The
 * spellings are the PY column of the operator table (graph/ops.def), indexed
 * by the registry. */
typedef sg__pyop pyop;

static const sg__opreg *walk_reg(sg__walk *W);

/* The Python spelling name, or NULL. */
static const pyop *pyop_find(sg__walk *W, const char *name)
{
    return sg__opreg_pyop(walk_reg(W), name);
}

/* Does schema argument type ty take value v? */
static bool takes(const sg__sarg *sa, const wv *v, bool wrap)
{
    const sg__sty *ty = &sa->type;
    if (v->kind == W_NONE)
        return ty->optional || sa->has_def;
    if (ty->list) {
        if (v->kind == W_INT && ty->base != SG_TY_TENSOR)
            return true; /* an int where int[1] is wanted */
        if (v->kind != W_TUPLE && v->kind != W_LIST)
            return false;
        for (uint32_t i = 0; i < v->u.seq.n; i++) {
            bool t = v->u.seq.items[i].kind == W_TENSOR;
            if (t != (ty->base == SG_TY_TENSOR))
                return false;
        }
        return true;
    }
    switch ((sg__ty)ty->base) {
    case SG_TY_TENSOR:
        return v->kind == W_TENSOR || (wrap && is_number(v));
    case SG_TY_SCALAR:
        return is_number(v);
    case SG_TY_INT:
    case SG_TY_SYMINT:
        return v->kind == W_INT || v->kind == W_BOOL;
    case SG_TY_FLOAT:
        return v->kind == W_INT || v->kind == W_FLOAT;
    case SG_TY_BOOL:
        return v->kind == W_BOOL;
    case SG_TY_SCALARTYPE:
        return v->kind == W_DTYPE;
    case SG_TY_MEMORYFORMAT:
        return v->kind == W_BUILTIN;
    default:
        return false;
    }
}

/* Does the schema take these arguments (after packing varargs)? */
static bool schema_takes(const sg__schema *s, const wv *pos, size_t npos, const char **kwn, const wv *kwv,
                         size_t nkw, bool wrap)
{
    if (npos > s->nargs)
        return false;
    for (size_t i = 0; i < npos; i++)
        if (s->args[i].kwonly || !takes(&s->args[i], &pos[i], wrap && i > 0))
            return false;
    for (size_t k = 0; k < nkw; k++) {
        int i = sg__schema_arg(s, kwn[k]);
        if (i < 0 || (size_t)i < npos || !takes(&s->args[i], &kwv[k], wrap && i > 0))
            return false;
    }
    for (size_t i = npos; i < s->nargs; i++) { /* every required argument given */
        bool given = false;
        for (size_t k = 0; k < nkw; k++)
            given |= !strcmp(kwn[k], s->args[i].name);
        if (!given && !s->args[i].has_def && !s->args[i].type.optional)
            return false;
    }
    return true;
}

static sg_status pack_varargs(sg__walk *W, const sg__schema *s, wv *pos, size_t *npos)
{
    /* the first int list of the schema, at position p, takes pos[p ..] */
    size_t p = 0;
    while (p < s->nargs && !(s->args[p].type.list && s->args[p].type.base != SG_TY_TENSOR))
        p++;
    if (p >= s->nargs || *npos <= p + 1)
        return SG_OK; /* no list, or at most one argument for it */
    for (size_t i = p; i < *npos; i++)
        if (pos[i].kind != W_INT)
            return SG_OK;
    size_t n = *npos - p;
    wv *items = wmem(W, n * sizeof *items);
    if (!items)
        return sg__nomem(W->ctx);
    if (n) /* args may be NULL when there are none */
        memcpy(items, pos + p, n * sizeof *items);
    pos[p] = (wv){.kind = W_TUPLE, .u.seq = {(uint32_t)n, items}};
    *npos = p + 1;
    return SG_OK;
}

/* Call the Python-level operator py with self (NULL for torch.X) and
 * arguments. */
static sg_status call_pyop(sg__walk *W, const sg__py *at, const pyop *p, wv *pos, size_t npos, const char **kwn,
                           wv *kwv, size_t nkw, wv *out)
{
    wv packed[SG_SCHEMA_ARGS + SG_MAX_DIMS];
    const sg__schema *chosen = NULL;
    size_t nchosen = 0;
    for (int c = 0; c < p->n && !chosen; c++) {
        const sg__schema *s = p->s[c];
        if (npos > sizeof packed / sizeof *packed)
            continue;
        if (npos) /* args may be NULL when there are none */
            memcpy(packed, pos, npos * sizeof *pos);
        size_t n = npos;
        if (p->flags & SG_PYF_VARARGS)
            CHAIN(pack_varargs(W, s, packed, &n));
        if (schema_takes(s, packed, n, kwn, kwv, nkw, (p->flags & SG_PYF_WRAP) != 0)) {
            chosen = s;
            nchosen = n;
        }
    }
    for (size_t k = 0; k < nkw && !chosen; k++)
        if (!strcmp(kwn[k], "out")) {
            if (!p->any_out)
                return werr(W, at, SG_EUNSUPPORTED, "unsupported: %s with out= (not in the operator list)", p->py);
        }
    if (!chosen) {
        char sig[256] = "";
        size_t len = 0;
        for (size_t i = 0; i < npos && len < sizeof sig - 40; i++)
            len += (size_t)snprintf(sig + len, sizeof sig - len, "%s%s", i ? ", " : "", kind_name(&pos[i]));
        for (size_t k = 0; k < nkw && len < sizeof sig - 40; k++)
            len += (size_t)snprintf(sig + len, sizeof sig - len, "%s%s=%s", len ? ", " : "", kwn[k],
                                    kind_name(&kwv[k]));
        return werr(W, at, SG_ETYPE, "%s() received an invalid combination of arguments: (%s)", p->py, sig);
    }
    argv args; /* on the stack: 13 KB that wmem would keep (and zero) for every call */
    argv *A = &args;
    A->n = 0;
    for (size_t i = 0; i < nchosen; i++)
        CHAIN(arg_of(W, at, A, &packed[i], NULL));
    bool has_dtype = false;
    wobj *out_obj = NULL;
    for (size_t k = 0; k < nkw; k++) {
        CHAIN(arg_of(W, at, A, &kwv[k], kwn[k]));
        has_dtype |= !strcmp(kwn[k], "dtype") && kwv[k].kind != W_NONE;
        if (!strcmp(kwn[k], "out") && kwv[k].kind == W_TENSOR)
            out_obj = kwv[k].u.t;
    }
    if ((p->flags & SG_PYF_CREATE) && !has_dtype && strcmp(p->py, "arange")) {
        /* float64 by default; full takes its fill value's type */
        wv d = {.kind = W_DTYPE, .u.dtype = SG_FLOAT64};
        if (!strcmp(p->py, "full") && nchosen > 1)
            d.u.dtype = packed[1].kind == W_INT ? SG_INT64 : packed[1].kind == W_BOOL ? SG_BOOL : SG_FLOAT64;
        CHAIN(arg_of(W, at, A, &d, "dtype"));
    }
    if (!strcmp(p->py, "arange") && !has_dtype) { /* integral ends make int64, else the default dtype */
        bool all_int = true;
        for (size_t i = 0; i < nchosen; i++)
            all_int &= packed[i].kind == W_INT;
        wv d = {.kind = W_DTYPE, .u.dtype = all_int ? SG_INT64 : SG_FLOAT64};
        CHAIN(arg_of(W, at, A, &d, "dtype"));
    }
    wobj *writes = out_obj;
    if (chosen->flags & SG_OPF_INPLACE)
        writes = packed[0].u.t;
    size_t first_val = W->g->nvals;
    CHAIN(op_call_schema(W, at, NULL, chosen, A->a, A->n, writes, out, 0));
    if (out->kind == W_TENSOR && out->u.t->v < first_val) /* an argument given back: its very object */
        for (size_t i = 0; i < nchosen; i++)
            if (packed[i].kind == W_TENSOR && packed[i].u.t->v == out->u.t->v)
                out->u.t = packed[i].u.t;
    return SG_OK;
}

/* ---- subscripts ---- */

static sg_status index_tensor(sg__walk *W, const sg__py *at, wobj *t, const wv *idx, wv *out)
{
    const wv *items = idx;
    uint32_t n = 1;
    if (idx->kind == W_TUPLE) {
        items = idx->u.seq.items;
        n = idx->u.seq.n;
    }
    size_t ndim = sg_tracer_ndim(W->t, t->v);
    uint32_t used = 0; /* dimensions the index consumes */
    for (uint32_t i = 0; i < n; i++)
        if (items[i].kind == W_INT || items[i].kind == W_SLICE)
            used++;
    wv cur = {.kind = W_TENSOR, .u.t = t};
    size_t dim = 0;
    bool seen_ellipsis = false;
    for (uint32_t i = 0; i < n; i++) {
        const wv *x = &items[i];
        wv r;
        if (x->kind == W_ELLIPSIS) {
            if (seen_ellipsis)
                return werr(W, at, SG_ESHAPE, "an index can only have a single ellipsis ('...')");
            seen_ellipsis = true;
            if (ndim >= used)
                dim += ndim - used;
            continue;
        }
        if (x->kind == W_NONE) {
            wv d = {.kind = W_INT, .u.e = sg__int_si(W->ctx, (slong)dim)};
            sg_arg a[2] = {{.kind = SG_ARG_VALUE, .u.v = cur.u.t->v}, {.kind = SG_ARG_INT, .u.e = d.u.e}};
            CHAIN(op_call(W, at, "unsqueeze", a, 2, NULL, &r));
            dim++;
        } else if (x->kind == W_INT || (x->kind == W_BOOL && 0)) {
            if (dim >= sg_tracer_ndim(W->t, cur.u.t->v))
                return werr(W, at, SG_ESHAPE, "too many indices for tensor of dimension %zu", ndim);
            sg_arg a[3] = {{.kind = SG_ARG_VALUE, .u.v = cur.u.t->v},
                           {.kind = SG_ARG_INT, .u.e = sg__int_si(W->ctx, (slong)dim)},
                           {.kind = SG_ARG_INT, .u.e = x->u.e}};
            CHAIN(op_call(W, at, "select.int", a, 3, NULL, &r));
        } else if (x->kind == W_SLICE) {
            if (dim >= sg_tracer_ndim(W->t, cur.u.t->v))
                return werr(W, at, SG_ESHAPE, "too many indices for tensor of dimension %zu", ndim);
            const wv *sl = x->u.seq.items;
            const sg_expr *st = W->ctx->zero, *en = NULL, *step = W->ctx->one;
            if (sl[0].kind != W_NONE)
                CHAIN(want_int(W, at, &sl[0], &st, "a slice start"));
            if (sl[1].kind != W_NONE)
                CHAIN(want_int(W, at, &sl[1], &en, "a slice end"));
            else if (!(en = sg__int_si(W->ctx, INT64_MAX)))
                return sg_ctx_last_error(W->ctx);
            if (sl[2].kind != W_NONE)
                CHAIN(want_int(W, at, &sl[2], &step, "a slice step"));
            sg_arg a[5] = {{.kind = SG_ARG_VALUE, .u.v = cur.u.t->v},
                           {.kind = SG_ARG_INT, .u.e = sg__int_si(W->ctx, (slong)dim)},
                           {.kind = SG_ARG_INT, .u.e = st},
                           {.kind = SG_ARG_INT, .u.e = en},
                           {.kind = SG_ARG_INT, .u.e = step}};
            CHAIN(op_call(W, at, "slice.Tensor", a, step == W->ctx->one ? 4 : 5, NULL, &r));
            dim++;
        } else {
            return werr(W, at, SG_EUNSUPPORTED, "unsupported: indexing a tensor with a %s", kind_name(x));
        }
        cur = r;
    }
    *out = cur;
    return SG_OK;
}

static sg_status index_seq(sg__walk *W, const sg__py *at, const wv *seq, const wv *idx, wv *out)
{
    int64_t n = seq->u.seq.n;
    if (idx->kind == W_SLICE) {
        int64_t lo = 0, hi = n, step = 1;
        const wv *sl = idx->u.seq.items;
        if (sl[2].kind != W_NONE)
            CHAIN(want_const(W, at, &sl[2], &step, "a slice step"));
        if (step != 1)
            return werr(W, at, SG_EUNSUPPORTED, "unsupported: a tuple slice with a step");
        if (sl[0].kind != W_NONE)
            CHAIN(want_const(W, at, &sl[0], &lo, "a slice start"));
        if (sl[1].kind != W_NONE)
            CHAIN(want_const(W, at, &sl[1], &hi, "a slice end"));
        if (lo < 0)
            lo = lo + n < 0 ? 0 : lo + n;
        if (hi < 0)
            hi = hi + n < 0 ? 0 : hi + n;
        if (lo > n)
            lo = n;
        if (hi > n)
            hi = n;
        if (hi < lo)
            hi = lo;
        *out = (wv){.kind = seq->kind, .u.seq = {(uint32_t)(hi - lo), seq->u.seq.items + lo}};
        return SG_OK;
    }
    int64_t i;
    CHAIN(want_const(W, at, idx, &i, "an index"));
    if (i < 0)
        i += n;
    if (i < 0 || i >= n)
        return werr(W, at, SG_ESHAPE, "%s index out of range", kind_name(seq));
    *out = seq->u.seq.items[i];
    return SG_OK;
}

/* ---- arithmetic on Python values ---- */

static sg_status as_float(sg__walk *W, const sg__py *at, const wv *v, double *out)
{
    if (v->kind == W_FLOAT) {
        if (!v->known)
            return werr(W, at, SG_EUNSUPPORTED, "unsupported: arithmetic on a float read from a tensor in a trace");
        *out = v->u.f;
        return SG_OK;
    }
    const sg_expr *e;
    CHAIN(want_int(W, at, v, &e, "a number"));
    int64_t i;
    if (!sg_expr_get_si(e, &i))
        return werr(W, at, SG_EUNSUPPORTED, "unsupported: float arithmetic on a symbolic size");
    *out = (double)i;
    return SG_OK;
}

static sg_status number_binop(sg__walk *W, const sg__py *at, int op, const wv *a, const wv *b, wv *out)
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
                return werr(W, at, SG_EZERODIV, "float division by zero");
            r = x / y;
            break;
        case SG_PYOP_FLOORDIV:
            if (y == 0)
                return werr(W, at, SG_EZERODIV, "float floor division by zero");
            r = floor(x / y);
            break;
        case '%':
            if (y == 0)
                return werr(W, at, SG_EZERODIV, "float modulo");
            r = fmod(x, y);
            if (r != 0 && ((r < 0) != (y < 0)))
                r += y;
            break;
        case SG_PYOP_POW: r = pow(x, y); break;
        default: return werr(W, at, SG_EUNSUPPORTED, "unsupported: operator %c on floats", op);
        }
        *out = (wv){.kind = W_FLOAT, .known = true, .u.f = r};
        return SG_OK;
    }
    const sg_expr *x, *y, *r = NULL;
    CHAIN(want_int(W, at, a, &x, "an operand"));
    CHAIN(want_int(W, at, b, &y, "an operand"));
    sg_status s;
    switch (op) {
    case '+': s = sg_expr_add(W->ctx, &r, x, y); break;
    case '-': s = sg_expr_sub(W->ctx, &r, x, y); break;
    case '*': s = sg_expr_mul(W->ctx, &r, x, y); break;
    case SG_PYOP_FLOORDIV:
        if (y == W->ctx->zero)
            return werr(W, at, SG_EZERODIV, "integer division or modulo by zero");
        s = sg_expr_floordiv(W->ctx, &r, x, y);
        break;
    case '%':
        if (y == W->ctx->zero)
            return werr(W, at, SG_EZERODIV, "integer division or modulo by zero");
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
    default: return werr(W, at, SG_EUNSUPPORTED, "unsupported: operator on ints");
    }
    if (s)
        return wfail(W, at, s);
    *out = (wv){.kind = W_INT, .u.e = r};
    return SG_OK;
}

/* In a subgraph, lift v now (what a branch uses is lifted in the order the
 * program uses it, which the aten call's argument order may not follow: 2
 * * x is mul(x, 2), and a nested cond's predicate comes before its
 * branches). Elsewhere nothing. */
static sg_status prelift(sg__walk *W, const sg__py *at, const wv *v)
{
    if (W->eager || !sg_tracer_scope(W->t))
        return SG_OK;
    sg_status s = SG_OK;
    sg_value local;
    if (v->kind == W_TENSOR)
        s = sg_tracer_scope_input(W->t, &local, NULL, v->u.t->v);
    else if (v->kind == W_INT || v->kind == W_BOOL)
        s = sg_tracer_scope_expr(W->t, v->u.e);
    return s ? wfail(W, at, s) : SG_OK;
}

/* A binary operator where one side is a tensor: the aten operator Python's
 * dunder method calls. */
static sg_status tensor_binop(sg__walk *W, const sg__py *at, int op, wv *a, wv *b, wv *out)
{
    bool ta = a->kind == W_TENSOR;
    if (!ta) { /* reflected (2 - x is rsub(x, 2)): both lifted in the program's order first */
        CHAIN(prelift(W, at, a));
        CHAIN(prelift(W, at, b));
    }
    const char *name;
    switch (op) {
    case '+': name = "add"; break;
    case '-': name = "sub"; break;
    case '*': name = "mul"; break;
    case '/': name = "div"; break;
    case '@': name = "matmul"; break;
    case SG_PYOP_POW: name = "pow"; break;
    default: return werr(W, at, SG_EUNSUPPORTED, "unsupported: operator %s on tensors",
                         op == SG_PYOP_FLOORDIV ? "//" : op == '%' ? "%" : "?");
    }
    if (!ta && op == '-') { /* 2 - x: __rsub__, rsub.Scalar(x, 2) */
        argv *A = wmem(W, sizeof *A);
        if (!A)
            return sg__nomem(W->ctx);
        CHAIN(arg_of(W, at, A, b, NULL));
        CHAIN(arg_of(W, at, A, a, NULL));
        return op_call(W, at, "rsub.Scalar", A->a, A->n, NULL, out);
    }
    if (!ta && op == '/') { /* 2 / x: __rtruediv__, x.reciprocal() * 2 */
        wv r;
        sg_arg x = {.kind = SG_ARG_VALUE, .u.v = b->u.t->v};
        CHAIN(op_call(W, at, "reciprocal", &x, 1, NULL, &r));
        wv pos[2] = {r, *a};
        return call_pyop(W, at, pyop_find(W, "mul"), pos, 2, NULL, NULL, 0, out);
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
        CHAIN(arg_of(W, at, A, &pos[0], NULL));
        CHAIN(arg_of(W, at, A, &pos[1], NULL));
        return op_call(W, at, "pow.Scalar", A->a, A->n, NULL, out);
    }
    return call_pyop(W, at, pyop_find(W, name), pos, 2, NULL, NULL, 0, out);
}

static sg_status compare(sg__walk *W, const sg__py *at, uint8_t op, wv *a, wv *b, wv *out)
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
        return werr(W, at, SG_EUNSUPPORTED, "unsupported: this comparison (is, in)");
    if (a->kind == W_TENSOR || b->kind == W_TENSOR) {
        if (a->kind != W_TENSOR) { /* 2 < x is x > 2 */
            static const char *const flip[] = {"eq", "ne", "gt", "ge", "lt", "le"};
            wv pos[2] = {*b, *a};
            return call_pyop(W, at, pyop_find(W, flip[k]), pos, 2, NULL, NULL, 0, out);
        }
        wv pos[2] = {*a, *b};
        return call_pyop(W, at, pyop_find(W, rels[k].py), pos, 2, NULL, NULL, 0, out);
    }
    if (a->kind == W_FLOAT || b->kind == W_FLOAT) {
        double x, y;
        if ((a->kind == W_FLOAT && !a->known) || (b->kind == W_FLOAT && !b->known))
            return werr(W, at, SG_EDATADEP, "data-dependent: a comparison of a float read from a tensor (an "
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
            return werr(W, at, SG_ETYPE, "comparison of None");
        *out = (wv){.kind = W_BOOL, .u.e = same == (rels[k].rel == SG_REL_EQ) ? W->ctx->t : W->ctx->f};
        return SG_OK;
    }
    const sg_expr *x, *y, *r;
    CHAIN(want_int(W, at, a, &x, "a comparison"));
    CHAIN(want_int(W, at, b, &y, "a comparison"));
    sg_status s = sg_expr_rel(W->ctx, &r, rels[k].rel, x, y);
    if (s)
        return wfail(W, at, s);
    *out = (wv){.kind = W_BOOL, .u.e = r};
    return SG_OK;
}

/* ---- attributes and methods of tensors ---- */

static sg_status size_tuple(sg__walk *W, wobj *t, bool strides, wv *out)
{
    size_t n = sg_tracer_ndim(W->t, t->v);
    wv *items = n ? wmem(W, n * sizeof *items) : NULL;
    if (n && !items)
        return sg__nomem(W->ctx);
    for (size_t d = 0; d < n; d++)
        items[d] = (wv){.kind = W_INT,
                        .u.e = strides ? sg_tracer_stride(W->t, t->v, d) : sg_tracer_size(W->t, t->v, d)};
    *out = (wv){.kind = W_TUPLE, .u.seq = {(uint32_t)n, items}};
    return SG_OK;
}

static sg_status dim_index(sg__walk *W, const sg__py *at, wobj *t, const wv *d, size_t *out)
{
    int64_t i;
    CHAIN(want_const(W, at, d, &i, "a dimension"));
    int64_t n = (int64_t)sg_tracer_ndim(W->t, t->v);
    int64_t m = n ? n : 1;
    if (i < -m || i >= m)
        return werr(W, at, SG_ESHAPE, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                    (long long)-m, (long long)(m - 1), (long long)i);
    *out = (size_t)(i < 0 ? i + m : i);
    return SG_OK;
}

/* x.tolist(): nested lists of the elements, each read by select and
 * _local_scalar_dense (unbacked symbols for ints and bools in a trace). */
static sg_status tolist(sg__walk *W, const sg__py *at, wobj *t, wv *out)
{
    size_t n = sg_tracer_ndim(W->t, t->v);
    sg_arg a = {.kind = SG_ARG_VALUE, .u.v = t->v};
    if (n == 0)
        return op_call(W, at, "_local_scalar_dense", &a, 1, NULL, out);
    int64_t len;
    const sg_expr *sz = sg_tracer_size(W->t, t->v, 0);
    if (!sg_expr_get_si(sz, &len)) { /* specialize the size, as PyTorch's tolist does */
        const sg_expr *hint;
        CHAIN(sg_env_hint(sg__walk_env(W), &hint, sz));
        if (!sg_expr_get_si(hint, &len))
            return werr(W, at, SG_EDATADEP, "data-dependent: tolist of a tensor of unbacked size");
        const sg_expr *eq;
        bool b;
        CHAIN(sg_expr_rel(W->ctx, &eq, SG_REL_EQ, sz, hint));
        CHAIN(truth_of(W, at, eq, &b));
    }
    wv *items = len ? wmem(W, (size_t)len * sizeof *items) : NULL;
    if (len && !items)
        return sg__nomem(W->ctx);
    for (int64_t i = 0; i < len; i++) {
        wv row;
        sg_arg s[3] = {{.kind = SG_ARG_VALUE, .u.v = t->v},
                       {.kind = SG_ARG_INT, .u.e = W->ctx->zero},
                       {.kind = SG_ARG_INT, .u.e = sg__int_si(W->ctx, i)}};
        CHAIN(op_call(W, at, "select.int", s, 3, NULL, &row));
        CHAIN(tolist(W, at, row.u.t, &items[i]));
    }
    *out = (wv){.kind = W_LIST, .u.seq = {(uint32_t)len, items}};
    return SG_OK;
}

static sg_status data_of(sg__walk *W, const sg__py *at, wobj *t, wv *out)
{
    sg_arg a = {.kind = SG_ARG_VALUE, .u.v = t->v};
    return op_call_flags(W, at, "detach", &a, 1, NULL, out, SG_NODE_DATA); /* a version counter of its own */
}

/* A method call on a tensor that is not an aten operator of its own. */
static sg_status tensor_method(sg__walk *W, const sg__py *at, wobj *t, const char *name, wv *args, size_t n,
                               const char **kwn, wv *kwv, size_t nkw, wv *out, bool *handled)
{
    *handled = true;
    if (!strcmp(name, "size") || !strcmp(name, "stride")) {
        bool st = name[1] == 't';
        if (nkw || n > 1)
            return werr(W, at, SG_ETYPE, "%s() takes at most one dimension", name);
        if (n == 0) {
            if (st)
                return size_tuple(W, t, true, out);
            return size_tuple(W, t, false, out);
        }
        size_t d = 0;
        CHAIN(dim_index(W, at, t, &args[0], &d));
        if (sg_tracer_ndim(W->t, t->v) == 0)
            return werr(W, at, SG_ESHAPE, "%s of a 0-d tensor", name);
        *out = (wv){.kind = W_INT, .u.e = st ? sg_tracer_stride(W->t, t->v, d) : sg_tracer_size(W->t, t->v, d)};
        return SG_OK;
    }
    if (!strcmp(name, "dim") || !strcmp(name, "ndimension")) {
        *out = (wv){.kind = W_INT, .u.e = sg__int_si(W->ctx, (slong)sg_tracer_ndim(W->t, t->v))};
        return SG_OK;
    }
    if (!strcmp(name, "numel")) {
        const sg_expr *p = W->ctx->one;
        for (size_t d = 0; d < sg_tracer_ndim(W->t, t->v); d++)
            CHAIN(sg_expr_mul(W->ctx, &p, p, sg_tracer_size(W->t, t->v, d)));
        *out = (wv){.kind = W_INT, .u.e = p};
        return SG_OK;
    }
    if (!strcmp(name, "item")) {
        sg_arg a = {.kind = SG_ARG_VALUE, .u.v = t->v};
        return op_call(W, at, "_local_scalar_dense", &a, 1, NULL, out);
    }
    if (!strcmp(name, "tolist"))
        return tolist(W, at, t, out);
    (void)kwn;
    (void)kwv;
    *handled = false;
    return SG_OK;
}

static sg_status getattr(sg__walk *W, const sg__py *at, const wv *obj, const char *name, wv *out)
{
    if (obj->kind == W_TENSOR) {
        wobj *t = obj->u.t;
        if (!strcmp(name, "shape"))
            return size_tuple(W, t, false, out);
        if (!strcmp(name, "data"))
            return data_of(W, at, t, out);
        if (!strcmp(name, "requires_grad")) {
            const sg__gval *g = &W->g->vals[t->v];
            *out = (wv){.kind = W_BOOL, .u.e = g->u.t.requires_grad ? W->ctx->t : W->ctx->f};
            return SG_OK;
        }
        if (!strcmp(name, "ndim"))
            return werr(W, at, SG_EUNSUPPORTED, "unsupported: attribute ndim (use dim())");
        *out = (wv){.kind = W_METHOD, .u.method = {t, name}};
        return SG_OK;
    }
    if (obj->kind == W_BUILTIN && !strcmp(obj->u.name, "torch")) {
        static const struct {
            const char *name;
            sg_dtype d;
        } dtypes[] = {{"float64", SG_FLOAT64}, {"double", SG_FLOAT64}, {"float32", SG_FLOAT32},
                      {"float", SG_FLOAT32},   {"int64", SG_INT64},    {"long", SG_INT64},
                      {"bool", SG_BOOL}};
        for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
            if (!strcmp(name, dtypes[i].name)) {
                *out = (wv){.kind = W_DTYPE, .u.dtype = dtypes[i].d};
                return SG_OK;
            }
        static const char *const known[] = {"no_grad", "enable_grad", "_check", "cond", "contiguous_format",
                                            "preserve_format", "autograd"};
        for (size_t i = 0; i < sizeof known / sizeof *known; i++)
            if (!strcmp(name, known[i])) {
                *out = (wv){.kind = W_BUILTIN, .u.name = known[i]};
                return SG_OK;
            }
        const pyop *p = pyop_find(W, name);
        if (!p)
            return werr(W, at, SG_EUNSUPPORTED, "unsupported: torch.%s", name);
        *out = (wv){.kind = W_BUILTIN, .u.name = p->py};
        return SG_OK;
    }
    if (obj->kind == W_BUILTIN && !strcmp(obj->u.name, "autograd") && !strcmp(name, "Function"))
        return werr(W, at, SG_EUNSUPPORTED, "unsupported: torch.autograd.Function (custom autograd functions)");
    return werr(W, at, SG_EUNSUPPORTED, "unsupported: attribute %s of a %s", name, kind_name(obj));
}

/* ---- calls ---- */

static sg_status run_block(sg__walk *W, frame *f, const sg__py *block, bool *returned, wv *ret);

static sg_status call_func(sg__walk *W, const sg__py *at, const wv *fn, wv *args, size_t npos, const char **kwn,
                           wv *kwv, size_t nkw, wv *out, frame **frame_out)
{
    const sg__py *def = fn->u.fn.def;
    if (W->depth >= MAX_CALL_DEPTH)
        return werr(W, at, SG_ELIMIT, "calls nest more than %d deep", MAX_CALL_DEPTH);
    if (npos > def->nnames)
        return werr(W, at, SG_ETYPE, "%s() takes %u positional arguments but %zu were given", def->s,
                    (unsigned)def->nnames, npos);
    frame *f = frame_new(W, fn->u.fn.env);
    if (!f)
        return sg__nomem(W->ctx);
    for (size_t i = 0; i < npos; i++)
        CHAIN(frame_set(W, f, def->names[i], args[i]));
    for (size_t k = 0; k < nkw; k++) {
        uint32_t i = 0;
        while (i < def->nnames && strcmp(def->names[i], kwn[k]))
            i++;
        if (i == def->nnames)
            return werr(W, at, SG_ETYPE, "%s() got an unexpected keyword argument '%s'", def->s, kwn[k]);
        if (i < npos || frame_find(f, kwn[k]))
            return werr(W, at, SG_ETYPE, "%s() got multiple values for argument '%s'", def->s, kwn[k]);
        CHAIN(frame_set(W, f, def->names[i], kwv[k]));
    }
    for (uint32_t i = 0; i < def->nnames; i++)
        if (!frame_find(f, def->names[i]))
            return werr(W, at, SG_ETYPE, "%s() missing required argument: '%s'", def->s, def->names[i]);
    if (def->ndeco)
        return werr(W, def->deco[0], SG_EUNSUPPORTED, "unsupported: decorators outside autograd functions");
    W->depth++;
    bool returned = false;
    *out = (wv){.kind = W_NONE};
    unsigned line = W->line;
    sg_status s = run_block(W, f, def->kids[0], &returned, out);
    W->line = line;
    W->depth--;
    if (frame_out)
        *frame_out = f;
    return s;
}

/* torch.cond(pred, true_fn, false_fn, operands). Eagerly, the predicate
 * picks the function to call (as the prelude of 1.13 and eager PyTorch
 * do); a constant predicate is that too in a trace (Dynamo inlines it).
 * Otherwise both functions are traced, each in a subgraph of its own
 * (cond_true_N, cond_false_N, N counting the torch.cond calls in the
 * order of the program text), and joined by a cond node (hop.h). */
static sg_status torch_cond(sg__walk *W, const sg__py *at, wv *args, size_t n, const char **kwn, wv *kwv, size_t nkw,
                            wv *out)
{
    static const char *const names[4] = {"pred", "true_fn", "false_fn", "operands"};
    wv a[4] = {{.kind = W_NONE}, {.kind = W_NONE}, {.kind = W_NONE}, {.kind = W_TUPLE}};
    bool given[4] = {false};
    if (n > 4)
        return werr(W, at, SG_ETYPE, "torch.cond() takes 4 arguments, %zu given", n);
    for (size_t i = 0; i < n; i++)
        a[i] = args[i], given[i] = true;
    for (size_t k = 0; k < nkw; k++) {
        size_t i = 0;
        while (i < 4 && strcmp(kwn[k], names[i]))
            i++;
        if (i == 4 || given[i])
            return werr(W, at, SG_ETYPE, "torch.cond(): an unexpected or repeated argument '%s'", kwn[k]);
        a[i] = kwv[k];
        given[i] = true;
    }
    if (!given[0] || !given[1] || !given[2])
        return werr(W, at, SG_ETYPE, "torch.cond() needs pred, true_fn and false_fn");
    if (a[1].kind != W_FUNC || a[2].kind != W_FUNC)
        return werr(W, at, SG_EUNSUPPORTED, "unsupported: torch.cond branches that are not functions of the program");
    if (a[3].kind != W_TUPLE && a[3].kind != W_LIST)
        return werr(W, at, SG_ETYPE, "torch.cond: operands must be a tuple or a list");
    uint32_t nops = a[3].u.seq.n;
    wv *ops = a[3].u.seq.items;
    for (uint32_t i = 0; i < nops; i++)
        if (ops[i].kind != W_TENSOR && ops[i].kind != W_INT)
            return werr(W, at, SG_EUNSUPPORTED, "unsupported: a torch.cond operand that is a %s",
                        kind_name(&ops[i]));
    const wv *pred = &a[0];
    bool constant = pred->kind == W_BOOL && (sg_expr_op(pred->u.e) == SG_OP_TRUE || sg_expr_op(pred->u.e) == SG_OP_FALSE);
    if (pred->kind != W_TENSOR && pred->kind != W_BOOL)
        return werr(W, at, SG_ETYPE, "torch.cond: the predicate must be a boolean tensor or a bool, got %s",
                    kind_name(pred));
    if (W->eager || constant) {
        bool taken;
        if (pred->kind == W_TENSOR && sg_tracer_dtype(W->t, pred->u.t->v) != SG_BOOL)
            return werr(W, at, SG_ETYPE, "torch.cond: the predicate must be a boolean tensor or a bool");
        CHAIN(truthy(W, at, pred, &taken));
        return call_func(W, at, &a[taken ? 1 : 2], ops, nops, NULL, NULL, 0, out, NULL);
    }
    CHAIN(prelift(W, at, pred)); /* nested: the predicate and operands are used before the branches */
    for (uint32_t i = 0; i < nops; i++)
        CHAIN(prelift(W, at, &ops[i]));
    size_t number = 0;
    while (number < W->prog->nconds && W->prog->conds[number] != at)
        number++;
    sg_arg p = pred->kind == W_TENSOR ? (sg_arg){.kind = SG_ARG_VALUE, .u.v = pred->u.t->v}
                                      : (sg_arg){.kind = SG_ARG_INT, .u.e = pred->u.e};
    uint32_t scope[2];
    bool single = false;
    for (int k = 0; k < 2; k++) {
        char name[48];
        snprintf(name, sizeof name, "cond_%s_%zu", k ? "false" : "true", number);
        sg_status s = sg_tracer_scope_open(W->t, &scope[k], name);
        if (s)
            return wfail(W, at, s);
        const sg__py *def = a[1 + k].u.fn.def;
        wv *local = nops ? wmem(W, nops * sizeof *local) : NULL;
        if (nops && !local)
            return sg__nomem(W->ctx);
        for (uint32_t i = 0; i < nops; i++) { /* an operand: a placeholder named by the parameter */
            local[i] = ops[i];
            if (ops[i].kind == W_INT) {
                if ((s = sg_tracer_scope_expr(W->t, ops[i].u.e)))
                    return wfail(W, at, s);
                continue;
            }
            if (!(local[i].u.t = wmem(W, sizeof *local[i].u.t)))
                return sg__nomem(W->ctx);
            if ((s = sg_tracer_scope_input(W->t, &local[i].u.t->v, i < def->nnames ? def->names[i] : NULL,
                                           ops[i].u.t->v)))
                return wfail(W, at, s);
        }
        wv res;
        CHAIN(call_func(W, at, &a[1 + k], local, nops, NULL, NULL, 0, &res, NULL));
        sg_value outs[64];
        size_t nouts = 0;
        if (res.kind == W_TENSOR) {
            outs[nouts++] = res.u.t->v;
            single = single || !k;
        } else if (res.kind == W_TUPLE || res.kind == W_LIST) {
            for (uint32_t i = 0; i < res.u.seq.n; i++) {
                if (res.u.seq.items[i].kind != W_TENSOR || nouts == 64)
                    return werr(W, at, SG_EUNSUPPORTED, "unsupported: a torch.cond branch returning a %s",
                                nouts == 64 ? "tuple of more than 64 tensors" : kind_name(&res.u.seq.items[i]));
                outs[nouts++] = res.u.seq.items[i].u.t->v;
            }
        } else {
            return werr(W, at, SG_EUNSUPPORTED, "unsupported: a torch.cond branch returning a %s", kind_name(&res));
        }
        if ((s = sg_tracer_scope_close(W->t, outs, nouts)))
            return wfail(W, at, s);
    }
    W->line = at->line;
    sg_value list;
    sg_status s = sg_tracer_cond(W->t, &list, &p, scope[0], scope[1], W->line);
    if (s)
        return wfail(W, at, s);
    wv l;
    CHAIN(to_wv(W, list, &l));
    if (single && l.u.seq.n == 1)
        *out = l.u.seq.items[0];
    else
        *out = (wv){.kind = W_TUPLE, .u.seq = l.u.seq};
    return SG_OK;
}

static sg_status call_builtin(sg__walk *W, const sg__py *at, const char *name, wv *args, size_t n, const char **kwn,
                              wv *kwv, size_t nkw, wv *out)
{
    if (!strcmp(name, "no_grad") || !strcmp(name, "enable_grad")) {
        if (n || nkw)
            return werr(W, at, SG_ETYPE, "torch.%s() takes no arguments", name);
        *out = (wv){.kind = W_GRADMODE, .u.b = name[0] == 'e'};
        return SG_OK;
    }
    if (!strcmp(name, "_check")) {
        if (n < 1 || n > 2 || nkw)
            return werr(W, at, SG_ETYPE, "torch._check(cond) takes a condition");
        const sg_expr *c;
        if (args[0].kind == W_BOOL)
            c = args[0].u.e;
        else if (args[0].kind == W_TENSOR || args[0].kind == W_FLOAT)
            return werr(W, at, SG_ETYPE, "torch._check: the condition must be a bool, got %s",
                        kind_name(&args[0]));
        else {
            bool b;
            CHAIN(truthy(W, at, &args[0], &b));
            c = b ? W->ctx->t : W->ctx->f;
        }
        sg_status s = sg_tracer_check(W->t, c, W->line);
        if (s == SG_EASSERT)
            return werr(W, at, SG_EASSERT, "torch._check failed");
        if (s)
            return wfail(W, at, s);
        *out = (wv){.kind = W_NONE};
        return SG_OK;
    }
    if (!strcmp(name, "cond"))
        return torch_cond(W, at, args, n, kwn, kwv, nkw, out);
    const pyop *p = pyop_find(W, name);
    if (!p)
        return werr(W, at, SG_EUNSUPPORTED, "unsupported: torch.%s", name);
    return call_pyop(W, at, p, args, n, kwn, kwv, nkw, out);
}

static sg_status call_value(sg__walk *W, const sg__py *at, const wv *fn, wv *args, size_t npos, const char **kwn,
                            wv *kwv, size_t nkw, wv *out)
{
    switch ((wkind)fn->kind) {
    case W_FUNC:
        return call_func(W, at, fn, args, npos, kwn, kwv, nkw, out, NULL);
    case W_BUILTIN:
        return call_builtin(W, at, fn->u.name, args, npos, kwn, kwv, nkw, out);
    case W_METHOD: {
        bool handled;
        wobj *t = fn->u.method.self;
        CHAIN(tensor_method(W, at, t, fn->u.method.name, args, npos, kwn, kwv, nkw, out, &handled));
        if (handled)
            return SG_OK;
        const pyop *p = pyop_find(W, fn->u.method.name);
        if (!p || (p->flags & SG_PYF_FUNC))
            return werr(W, at, SG_EUNSUPPORTED, "unsupported: Tensor.%s", fn->u.method.name);
        wv all[SG_SCHEMA_ARGS + SG_MAX_DIMS];
        if (npos + 1 > sizeof all / sizeof *all)
            return werr(W, at, SG_ELIMIT, "too many arguments");
        all[0] = (wv){.kind = W_TENSOR, .u.t = t};
        if (npos) /* args may be NULL when there are none */
            memcpy(all + 1, args, npos * sizeof *args);
        return call_pyop(W, at, p, all, npos + 1, kwn, kwv, nkw, out);
    }
    default:
        return werr(W, at, SG_ETYPE, "'%s' object is not callable", kind_name(fn));
    }
}

/* ---- expressions ---- */

static sg_status lookup(sg__walk *W, frame *f, const sg__py *at, const char *name, wv *out)
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
    return werr(W, at, SG_EUNSUPPORTED, "unsupported: name '%s' is not defined", name);
}

static sg_status eval_seq(sg__walk *W, frame *f, const sg__py *e, wkind kind, wv *out)
{
    wv *items = e->nkids ? wmem(W, e->nkids * sizeof *items) : NULL;
    if (e->nkids && !items)
        return sg__nomem(W->ctx);
    for (uint32_t i = 0; i < e->nkids; i++)
        CHAIN(eval(W, f, e->kids[i], &items[i]));
    *out = (wv){.kind = (uint8_t)kind, .u.seq = {e->nkids, items}};
    return SG_OK;
}

static sg_status eval_call(sg__walk *W, frame *f, const sg__py *e, wv *out)
{
    wv fn;
    CHAIN(eval(W, f, e->kids[0], &fn));
    uint32_t n = e->nkids - 1;
    wv *pos = n ? wmem(W, n * sizeof *pos) : NULL, *kwv = n ? wmem(W, n * sizeof *kwv) : NULL;
    const char **kwn = n ? wmem(W, n * sizeof *kwn) : NULL;
    if (n && (!pos || !kwv || !kwn))
        return sg__nomem(W->ctx);
    size_t np = 0, nk = 0;
    for (uint32_t i = 1; i < e->nkids; i++) {
        const sg__py *a = e->kids[i];
        if (a->kind == SG_PY_KEYWORD) {
            kwn[nk] = a->s;
            CHAIN(eval(W, f, a->kids[0], &kwv[nk++]));
        } else {
            if (nk)
                return werr(W, a, SG_ESYNTAX, "positional argument follows keyword argument");
            CHAIN(eval(W, f, a, &pos[np++]));
        }
    }
    W->line = e->line;
    return call_value(W, e, &fn, pos, np, kwn, kwv, nk, out);
}

static sg_status eval_binop(sg__walk *W, frame *f, const sg__py *e, wv *out)
{
    wv a, b;
    CHAIN(eval(W, f, e->kids[0], &a));
    CHAIN(eval(W, f, e->kids[1], &b));
    W->line = e->line;
    if (a.kind == W_TENSOR || b.kind == W_TENSOR) {
        if (!(a.kind == W_TENSOR || is_number(&a)) || !(b.kind == W_TENSOR || is_number(&b)))
            return werr(W, e, SG_ETYPE, "unsupported operand types: %s and %s", kind_name(&a), kind_name(&b));
        return tensor_binop(W, e, e->op, &a, &b, out);
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
        return werr(W, e, SG_ETYPE, "unsupported operand types: %s and %s", kind_name(&a), kind_name(&b));
    return number_binop(W, e, e->op, &a, &b, out);
}

static sg_status eval(sg__walk *W, frame *f, const sg__py *e, wv *out)
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
    case SG_PY_BINOP:
        return eval_binop(W, f, e, out);
    case SG_PY_UNARY: {
        wv a;
        CHAIN(eval(W, f, e->kids[0], &a));
        W->line = e->line;
        if (e->op == '+')
            *out = a;
        else if (a.kind == W_TENSOR)
            return call_pyop(W, e, pyop_find(W, "neg"), &a, 1, NULL, NULL, 0, out);
        else if (a.kind == W_FLOAT && a.known)
            *out = (wv){.kind = W_FLOAT, .known = true, .u.f = -a.u.f};
        else if (a.kind == W_FLOAT) /* not tracked, nor what is computed from it */
            *out = (wv){.kind = W_FLOAT, .known = false, .fv = SG_NOVAL};
        else {
            const sg_expr *x;
            CHAIN(want_int(W, e, &a, &x, "unary -"));
            out->kind = W_INT;
            CHAIN(sg_expr_neg(W->ctx, &out->u.e, x));
        }
        return SG_OK;
    }
    case SG_PY_NOT: {
        wv a;
        bool b;
        CHAIN(eval(W, f, e->kids[0], &a));
        W->line = e->line;
        CHAIN(truthy(W, e, &a, &b));
        *out = (wv){.kind = W_BOOL, .u.e = b ? W->ctx->f : W->ctx->t};
        return SG_OK;
    }
    case SG_PY_BOOLOP: { /* Python's: the first falsy (and) or truthy (or) operand, else the last */
        for (uint32_t i = 0; i < e->nkids; i++) {
            CHAIN(eval(W, f, e->kids[i], out));
            if (i + 1 == e->nkids)
                break;
            bool b;
            CHAIN(truthy(W, e, out, &b));
            if (b == (e->op == SG_PYOP_OR))
                break;
        }
        return SG_OK;
    }
    case SG_PY_COMPARE: { /* a < b < c is a < b and b < c */
        wv a, b;
        CHAIN(eval(W, f, e->kids[0], &a));
        for (uint32_t i = 0; i + 1 < e->nkids; i++) {
            CHAIN(eval(W, f, e->kids[i + 1], &b));
            W->line = e->line;
            CHAIN(compare(W, e, e->ops[i], &a, &b, out));
            if (i + 2 < e->nkids) {
                bool t;
                CHAIN(truthy(W, e, out, &t));
                if (!t)
                    return SG_OK;
            }
            a = b;
        }
        return SG_OK;
    }
    case SG_PY_CALL:
        return eval_call(W, f, e, out);
    case SG_PY_ATTR: {
        wv obj;
        CHAIN(eval(W, f, e->kids[0], &obj));
        W->line = e->line;
        return getattr(W, e, &obj, e->s, out);
    }
    case SG_PY_SUBSCRIPT: {
        wv obj, idx;
        CHAIN(eval(W, f, e->kids[0], &obj));
        CHAIN(eval(W, f, e->kids[1], &idx));
        W->line = e->line;
        if (obj.kind == W_TENSOR)
            return index_tensor(W, e, obj.u.t, &idx, out);
        if (obj.kind == W_TUPLE || obj.kind == W_LIST)
            return index_seq(W, e, &obj, &idx, out);
        return werr(W, e, SG_ETYPE, "'%s' object is not subscriptable", kind_name(&obj));
    }
    default:
        return werr(W, e, SG_EUNSUPPORTED, "unsupported: this expression");
    }
}

/* ---- statements ---- */

static sg_status assign(sg__walk *W, frame *f, const sg__py *target, wv v)
{
    if (target->kind == SG_PY_NAME) {
        if (v.kind == W_TENSOR && !W->eager) /* the name a subgraph's placeholder lifting it takes */
            CHAIN(sg_tracer_name(W->t, v.u.t->v, target->s));
        return frame_set(W, f, target->s, v);
    }
    if (target->kind == SG_PY_TUPLE || target->kind == SG_PY_LIST) {
        if (v.kind != W_TUPLE && v.kind != W_LIST)
            return werr(W, target, SG_ETYPE, "cannot unpack a %s", kind_name(&v));
        if (v.u.seq.n != target->nkids)
            return werr(W, target, SG_ETYPE, "expected %u values to unpack, got %u", (unsigned)target->nkids,
                        (unsigned)v.u.seq.n);
        for (uint32_t i = 0; i < target->nkids; i++)
            CHAIN(assign(W, f, target->kids[i], v.u.seq.items[i]));
        return SG_OK;
    }
    if (target->kind == SG_PY_ATTR && !strcmp(target->s, "data")) { /* x.data = y */
        wv obj;
        CHAIN(eval(W, f, target->kids[0], &obj));
        if (obj.kind != W_TENSOR || v.kind != W_TENSOR)
            return werr(W, target, SG_ETYPE, ".data assignment takes tensors");
        /* x takes y's storage and metadata, unseen by autograd: set_ under no_grad */
        wv d;
        CHAIN(data_of(W, target, v.u.t, &d));
        sg_arg a[2] = {{.kind = SG_ARG_VALUE, .u.v = obj.u.t->v}, {.kind = SG_ARG_VALUE, .u.v = d.u.t->v}};
        wv r; /* flagged: the version counter stays where it was, as in PyTorch */
        return op_call_flags(W, target, "set_.source_Tensor", a, 2, obj.u.t, &r, SG_NODE_DATA);
    }
    return werr(W, target, SG_EUNSUPPORTED, "unsupported: assignment to this target");
}

static sg_status run_stmt(sg__walk *W, frame *f, const sg__py *st, bool *returned, wv *ret)
{
    W->line = st->line;
    switch ((sg__pyk)st->kind) {
    case SG_PY_ASSIGN: {
        wv v;
        CHAIN(eval(W, f, st->kids[1], &v));
        return assign(W, f, st->kids[0], v);
    }
    case SG_PY_AUGASSIGN: {
        wv a, b, r;
        CHAIN(eval(W, f, st->kids[0], &a));
        CHAIN(eval(W, f, st->kids[1], &b));
        W->line = st->line;
        if (a.kind == W_TENSOR) { /* x += y is x.add_(y) */
            const char *name = st->op == '+' ? "add_" : st->op == '-' ? "sub_" : st->op == '*' ? "mul_"
                             : st->op == '/' ? "div_" : NULL;
            if (!name)
                return werr(W, st, SG_EUNSUPPORTED, "unsupported: this augmented assignment on a tensor");
            wv pos[2] = {a, b};
            CHAIN(call_pyop(W, st, pyop_find(W, name), pos, 2, NULL, NULL, 0, &r));
        } else {
            if (!is_number(&a) || !is_number(&b))
                return werr(W, st, SG_ETYPE, "unsupported operand types: %s and %s", kind_name(&a), kind_name(&b));
            CHAIN(number_binop(W, st, st->op, &a, &b, &r));
        }
        return assign(W, f, st->kids[0], r);
    }
    case SG_PY_EXPR: {
        wv v;
        return eval(W, f, st->kids[0], &v);
    }
    case SG_PY_RETURN:
        *returned = true;
        if (st->nkids)
            return eval(W, f, st->kids[0], ret);
        *ret = (wv){.kind = W_NONE};
        return SG_OK;
    case SG_PY_IF: {
        wv c;
        bool b;
        CHAIN(eval(W, f, st->kids[0], &c));
        W->line = st->line;
        CHAIN(truthy(W, st->kids[0], &c, &b));
        if (b)
            return run_block(W, f, st->kids[1], returned, ret);
        if (st->nkids > 2) {
            const sg__py *alt = st->kids[2];
            if (alt->kind == SG_PY_IF)
                return run_stmt(W, f, alt, returned, ret);
            return run_block(W, f, alt, returned, ret);
        }
        return SG_OK;
    }
    case SG_PY_WITH: {
        bool saved = W->grad;
        for (uint32_t i = 0; i + 1 < st->nkids; i++) {
            wv c;
            CHAIN(eval(W, f, st->kids[i], &c));
            if (c.kind != W_GRADMODE)
                return werr(W, st->kids[i], SG_EUNSUPPORTED,
                            "unsupported: with takes torch.no_grad() or torch.enable_grad()");
            W->grad = c.u.b;
        }
        CHAIN(sg_tracer_set_grad_enabled(W->t, W->grad));
        sg_status s = run_block(W, f, st->kids[st->nkids - 1], returned, ret);
        W->grad = saved;
        sg_status s2 = sg_tracer_set_grad_enabled(W->t, saved);
        return s ? s : s2;
    }
    case SG_PY_DEF: {
        wv fn = {.kind = W_FUNC, .u.fn = {st, f}};
        return frame_set(W, f, st->s, fn);
    }
    case SG_PY_CLASS:
        return werr(W, st, SG_EUNSUPPORTED, "unsupported: class %s (custom autograd functions)", st->s);
    case SG_PY_PASS:
    case SG_PY_IMPORT:
        return SG_OK;
    case SG_PY_BLOCK:
        return run_block(W, f, st, returned, ret);
    default:
        return werr(W, st, SG_EUNSUPPORTED, "unsupported: this statement");
    }
}

static sg_status run_block(sg__walk *W, frame *f, const sg__py *block, bool *returned, wv *ret)
{
    for (uint32_t i = 0; i < block->nkids && !*returned; i++)
        CHAIN(run_stmt(W, f, block->kids[i], returned, ret));
    return SG_OK;
}

/* ---- running the entry point ---- */

sg_status sg__walk_run(sg__walk *W)
{
    if (W->ran)
        return sg__err(W->ctx, SG_EINVAL, "the program already ran");
    const sg__py *def = W->prog->entry;
    wv *args = def->nnames ? wmem(W, def->nnames * sizeof *args) : NULL;
    if (def->nnames && !args)
        return sg__nomem(W->ctx);
    for (uint32_t i = 0; i < def->nnames; i++) {
        wv *v = frame_find(W->params, def->names[i]);
        if (!v)
            return sg__err(W->ctx, SG_EINVAL, "parameter %s has no input of its name", def->names[i]);
        args[i] = *v;
    }
    wv fn = {.kind = W_FUNC, .u.fn = {def, W->globals}};
    W->ran = true;
    return call_func(W, def, &fn, args, def->nnames, NULL, NULL, 0, &W->result, &W->entry_frame);
}

/* The outputs: a returned tuple is its elements, anything else one output. */
static const wv *outputs(const sg__walk *W, size_t *n)
{
    if (W->result.kind == W_TUPLE) {
        *n = W->result.u.seq.n;
        return W->result.u.seq.items;
    }
    *n = 1;
    return &W->result;
}

size_t sg__walk_noutputs(const sg__walk *W)
{
    size_t n;
    outputs(W, &n);
    return n;
}

/* Flatten the tensors and ints of v into vals. */
static sg_status flatten_out(sg__walk *W, const wv *v, sg_value *vals, size_t *n, size_t max)
{
    switch ((wkind)v->kind) {
    case W_TENSOR:
        if (*n == max)
            return sg__err(W->ctx, SG_ELIMIT, "too many outputs");
        vals[(*n)++] = v->u.t->v;
        return SG_OK;
    case W_TUPLE:
    case W_LIST:
        for (uint32_t i = 0; i < v->u.seq.n; i++)
            CHAIN(flatten_out(W, &v->u.seq.items[i], vals, n, max));
        return SG_OK;
    case W_INT:
    case W_BOOL: {
        if (*n == max)
            return sg__err(W->ctx, SG_ELIMIT, "too many outputs");
        /* an int output: the node that gives its expression, when there is one */
        for (size_t i = W->g->nvals; i-- > 0;) {
            const sg__gval *g = &W->g->vals[i];
            if ((g->kind == SG_V_SYMINT || g->kind == SG_V_SYMBOOL) && g->u.e == v->u.e && g->node != SG_NOVAL) {
                vals[(*n)++] = (sg_value)i;
                return SG_OK;
            }
        }
        return SG_OK; /* a constant or an expression of inputs: not a graph output */
    }
    default:
        return SG_OK;
    }
}

sg_status sg__walk_finish(sg__walk *W)
{
    sg_value vals[256];
    size_t n = 0;
    CHAIN(flatten_out(W, &W->result, vals, &n, 256));
    return sg_tracer_output(W->t, vals, n);
}

/* Print v as Python prints it (tensors as tolist()), with the concrete
 * values of run x. Errors: SG_ENOMEM, SG_EINTERNAL (a tensor without a
 * concrete value). */
static sg_status print_wv(sg__walk *W, sg__xrun *x, sg__buf *b, const wv *v)
{
    switch ((wkind)v->kind) {
    case W_NONE:
        sg__buf_puts(b, "None");
        return SG_OK;
    case W_BOOL:
        sg__buf_puts(b, sg_expr_op(v->u.e) == SG_OP_TRUE ? "True" : sg_expr_op(v->u.e) == SG_OP_FALSE ? "False" : "?");
        return SG_OK;
    case W_INT: {
        int64_t i;
        if (x && sg__xrun_eval(x, v->u.e, &i) == SG_OK) {
            sg__buf_printf(b, "%lld", (long long)i);
            return SG_OK;
        }
        char *s = NULL;
        sg_status st = sg_print(W->ctx, &s, v->u.e, SG_FMT_PYTHON);
        if (!st)
            sg__buf_puts(b, s);
        sg_free(s);
        return st;
    }
    case W_FLOAT:
        if (v->known)
            sg__buf_pyfloat(b, v->u.f);
        else
            sg__buf_puts(b, "?");
        return SG_OK;
    case W_TENSOR: {
        const sg__xval *xv = x ? sg__xrun_value(x, v->u.t->v) : NULL;
        if (!xv || xv->kind != SG_XV_TENSOR)
            return sg__err(W->ctx, SG_EINTERNAL, "output: a tensor without a concrete value");
        char *s = NULL;
        sg_status st = sg__xt_print(W->ctx, &s, xv->u.t);
        if (!st)
            sg__buf_puts(b, s);
        sg_free(s);
        return st;
    }
    case W_TUPLE:
    case W_LIST:
        sg__buf_puts(b, v->kind == W_TUPLE ? "(" : "[");
        for (uint32_t i = 0; i < v->u.seq.n; i++) {
            if (i)
                sg__buf_puts(b, ", ");
            CHAIN(print_wv(W, x, b, &v->u.seq.items[i]));
        }
        if (v->kind == W_TUPLE && v->u.seq.n == 1)
            sg__buf_puts(b, ",");
        sg__buf_puts(b, v->kind == W_TUPLE ? ")" : "]");
        return SG_OK;
    default:
        sg__buf_puts(b, "<");
        sg__buf_puts(b, kind_name(v));
        sg__buf_puts(b, ">");
        return SG_OK;
    }
}

sg_status sg__walk_print_output(sg__walk *W, sg__xrun *x, size_t i, char **out)
{
    size_t n;
    const wv *o = outputs(W, &n);
    sg__buf b = {.ctx = W->ctx};
    *out = NULL;
    sg_status st = i < n ? print_wv(W, x ? x : W->x, &b, &o[i]) : SG_OK;
    char *text = sg__buf_take(&b);
    if (!st && !text)
        st = sg__nomem(W->ctx);
    if (st) {
        sg_free(text);
        return st;
    }
    *out = text;
    return SG_OK;
}

/* The tensor object of parameter name, or NULL. */
static wobj *param_obj(const sg__walk *W, const char *name)
{
    wv *v = frame_find(W->params, name);
    return v && v->kind == W_TENSOR ? v->u.t : NULL;
}

int sg__walk_output_is(const sg__walk *W, size_t i, const char *param)
{
    size_t n;
    const wv *o = outputs(W, &n);
    wobj *p = param_obj(W, param);
    return i < n && p && o[i].kind == W_TENSOR && o[i].u.t == p;
}

sg_value sg__walk_output_value(const sg__walk *W, size_t i)
{
    size_t n;
    const wv *o = outputs(W, &n);
    return i < n && o[i].kind == W_TENSOR ? o[i].u.t->v : SG_NOVAL;
}

sg_value sg__walk_param_value(const sg__walk *W, const char *name)
{
    wobj *p = param_obj(W, name);
    return p ? p->v : SG_NOVAL;
}

sg_value sg__walk_local(const sg__walk *W, const char *name)
{
    if (!W->entry_frame)
        return SG_NOVAL;
    wv *v = frame_find(W->entry_frame, name);
    return v && v->kind == W_TENSOR ? v->u.t->v : SG_NOVAL;
}

sg_env *sg__walk_env(const sg__walk *W)
{
    return W->own_env ? W->own_env : W->g->env;
}

static const sg__opreg *walk_reg(sg__walk *W)
{
    return sg__tracer_reg(W->t);
}
