/* The walker of the program language (front.h, walk_private.h): programs,
 * walks and their inputs, the walk's arena and frames, errors, running the
 * entry point and reading its outputs. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "front/walk_private.h"

/* ---- memory ---- */

void *sg__w_mem_slow(sg_walk *W, size_t n)
{
    size_t size = n > 8192 ? n : 8192;
    block *b = sg__malloc(W->ctx, sizeof *b + size);
    if (!b)
        return NULL;
    b->next = W->blocks;
    b->used = n;
    b->size = size;
    W->blocks = b;
    return memset(b->data, 0, n);
}

/* ---- errors ---- */

sg_status sg__w_err(sg_walk *W, const sg__py *at, sg_status st, const char *fmt, ...)
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
sg_status sg__w_fail(sg_walk *W, const sg__py *at, sg_status st)
{
    if (st == SG_ENOMEM)
        return st;
    char msg[512];
    snprintf(msg, sizeof msg, "%s", sg_ctx_last_error_msg(W->ctx));
    if (!strncmp(msg, "line ", 5))
        return sg__err(W->ctx, st, "%s", msg);
    return sg__w_err(W, at, st, "%s", msg);
}

/* ---- frames ---- */

frame *sg__w_frame_new(sg_walk *W, frame *up)
{
    frame *f = wmem(W, sizeof *f);
    if (f)
        f->up = up;
    return f;
}

sg_status sg__w_frame_set(sg_walk *W, frame *f, const char *name, wv v)
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

/* The torch.cond calls below e, in any order (the caller sorts them). A
 * loop over a stack of nodes to visit: a chain of calls or operators is as
 * deep as the source is long (the parser builds it in a loop). */
static sg_status find_conds(sg_program *p, const sg__py *e)
{
    const sg__py **todo = NULL;
    size_t n = 0, cap = 0;
    sg_status s = SG_OK;
    if (!sg__grow(p->ctx, (void **)&todo, &cap, 1, sizeof *todo))
        return sg__nomem(p->ctx);
    todo[n++] = e;
    while (n && !s) {
        e = todo[--n];
        if (is_cond_call(e)) {
            if (!sg__grow(p->ctx, (void **)&p->conds, &p->capconds, p->nconds + 1, sizeof *p->conds)) {
                s = sg__nomem(p->ctx);
                break;
            }
            p->conds[p->nconds++] = e;
        }
        if (!sg__grow(p->ctx, (void **)&todo, &cap, n + e->nkids + e->ndeco, sizeof *todo)) {
            s = sg__nomem(p->ctx);
            break;
        }
        for (uint32_t i = 0; i < e->nkids; i++)
            if (e->kids[i])
                todo[n++] = e->kids[i];
        for (uint32_t i = 0; i < e->ndeco; i++)
            todo[n++] = e->deco[i];
    }
    sg_free(todo);
    return s;
}

static int text_order(const void *pa, const void *pb)
{
    const sg__py *a = *(const sg__py *const *)pa, *b = *(const sg__py *const *)pb;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    return a->col < b->col ? -1 : a->col > b->col;
}

sg_status sg_program_new(sg_ctx *ctx, sg_program **out, const char *source, size_t len, uint32_t first_line)
{
    if (!ctx || !out || (!source && len))
        return ctx ? sg__err(ctx, SG_EINVAL, "sg_program_new: NULL") : SG_EINVAL;
    *out = NULL;
    sg_program *p = sg__calloc(ctx, 1, sizeof *p);
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
        sg_program_free(p);
        return s;
    }
    if (!p->entry) {
        sg_program_free(p);
        return sg__err(ctx, SG_ESYNTAX, "the program defines no function");
    }
    *out = p;
    return SG_OK;
}

void sg_program_free(sg_program *p)
{
    if (!p)
        return;
    sg_free(p->conds);
    sg__ast_free(p->ast);
    sg_free(p);
}

size_t sg_program_nparams(const sg_program *p)
{
    return p->entry->nnames;
}

const char *sg_program_param(const sg_program *p, size_t i)
{
    return p->entry->names[i];
}
/* ---- walks ---- */

static sg_status walk_init(sg_walk *W)
{
    W->grad = true;
    W->globals = sg__w_frame_new(W, NULL);
    W->params = sg__w_frame_new(W, NULL);
    if (!W->globals || !W->params)
        return sg__nomem(W->ctx);
    const sg__py *m = sg__ast_module(W->prog->ast);
    for (uint32_t i = 0; i < m->nkids; i++) {
        const sg__py *k = m->kids[i];
        if (k->kind == SG_PY_DEF) {
            wv f = {.kind = W_FUNC, .u.fn = {k, W->globals}};
            CHAIN(sg__w_frame_set(W, W->globals, k->s, f));
        }
        if (k->kind == SG_PY_CLASS) { /* a custom autograd Function */
            wv base;
            CHAIN(sg__w_eval(W, W->globals, k->kids[0], &base));
            CHAIN(sg__w_function_class(W, W->globals, k, &base));
        }
    }
    return SG_OK;
}

sg_status sg_walk_trace(const sg_program *p, sg_tracer *t, sg_walk **out)
{
    if (!p || !t || !out)
        return p ? sg__err(p->ctx, SG_EINVAL, "sg_walk_trace: NULL") : SG_EINVAL;
    *out = NULL;
    sg_walk *W = sg__calloc(p->ctx, 1, sizeof *W);
    if (!W)
        return sg__nomem(p->ctx);
    W->ctx = p->ctx;
    W->prog = p;
    W->t = t;
    W->g = (sg__graph *)sg__tracer_graph(t);
    sg_status s = walk_init(W);
    if (s) {
        sg_walk_free(W);
        return s;
    }
    *out = W;
    return SG_OK;
}

sg_status sg_walk_eager(const sg_program *p, sg_walk **out)
{
    if (!p || !out)
        return p ? sg__err(p->ctx, SG_EINVAL, "sg_walk_eager: NULL") : SG_EINVAL;
    *out = NULL;
    sg_walk *W = sg__calloc(p->ctx, 1, sizeof *W);
    if (!W)
        return sg__nomem(p->ctx);
    W->ctx = p->ctx;
    W->prog = p;
    W->eager = true;
    sg_status s = sg__xeager_new(p->ctx, &W->ex);
    if (!s) {
        sg__xeager_reserve(W->ex, sg__ast_ops(p->ast));
        W->t = sg__xeager_tracer(W->ex);
        W->g = (sg__graph *)sg__tracer_graph(W->t);
    }
    if (!s)
        s = walk_init(W);
    if (s) {
        sg_walk_free(W);
        return s;
    }
    *out = W;
    return SG_OK;
}

void sg_walk_free(sg_walk *W)
{
    if (!W)
        return;
    sg__xeager_free(W->ex);
    sg__w_gc_free(W);
    sg__idmap_free(&W->twin);
    sg_free(W->journal);
    sg_free(W->twoouts);
    block *b = W->blocks;
    while (b) {
        block *n = b->next;
        sg_free(b);
        b = n;
    }
    sg_free(W);
}

sg_tracer *sg_walk_tracer(const sg_walk *W)
{
    return W->t;
}

sg_run *sg_walk_eager_run(const sg_walk *W)
{
    return W->ex ? sg__xeager_run(W->ex) : NULL;
}

static sg_status bind_param(sg_walk *W, const char *name, wv v)
{
    bool found = false;
    for (size_t i = 0; i < sg_program_nparams(W->prog); i++)
        if (!strcmp(sg_program_param(W->prog, i), name))
            found = true;
    if (!found)
        return sg__err(W->ctx, SG_EINVAL, "the program has no parameter %s", name ? name : "(NULL)");
    return sg__w_frame_set(W, W->params, name, v);
}

static const char *param_name(const sg_walk *W, const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < sg_program_nparams(W->prog); i++)
        if (!strcmp(sg_program_param(W->prog, i), name))
            return sg_program_param(W->prog, i);
    return NULL;
}

sg_status sg_walk_input_value(sg_walk *W, const char *name, sg_value v)
{
    const char *pn = param_name(W, name);
    if (!pn)
        return sg__err(W->ctx, SG_EINVAL, "the program has no parameter %s", name ? name : "(NULL)");
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

sg_status sg_walk_input_same(sg_walk *W, const char *name, const char *as)
{
    const char *pn = param_name(W, name);
    wv *o = as ? frame_find(W->params, as) : NULL;
    if (!pn || !o)
        return sg__err(W->ctx, SG_EINVAL, "input %s = %s: no such parameter", name, as);
    if (!W->eager && o->kind == W_TENSOR) { /* a duplicate input: the tracer notes it (aot.h) */
        CHAIN(sg_tracer_input_again(W->t, o->u.t->v));
        sg_value b = sg__w_twin(W, o->u.t->v);
        if (b != SG_NOVAL)
            CHAIN(sg_tracer_input_again(W->t, b));
    }
    return bind_param(W, pn, *o);
}

/* The kinds of tensor subclass the walker dispatches (kind two: PyTorch's
 * TwoTensor, every operator on both inner tensors). */
static sg_status check_kind(sg_walk *W, const char *name, const char *kind, size_t n)
{
    if (!kind || strcmp(kind, "two"))
        return sg__err(W->ctx, SG_EUNSUPPORTED, "input %s: unsupported: tensor subclasses of kind %s (kind two is "
                       "supported)", name ? name : "?", kind ? kind : "(NULL)");
    if (n != 2)
        return sg__err(W->ctx, SG_EINVAL, "input %s: kind two has 2 inner tensors, not %zu", name ? name : "?", n);
    return SG_OK;
}

sg_status sg_walk_input_subclass(sg_walk *W, const char *name, const char *kind, const sg_value *inner, size_t n)
{
    CHAIN(check_kind(W, name, kind, n));
    if (!inner)
        return sg__err(W->ctx, SG_EINVAL, "input %s: NULL", name ? name : "?");
    for (size_t j = 0; j < n; j++)
        if (inner[j] >= W->g->nvals || sg_tracer_kind(W->t, inner[j]) != SG_VALUE_TENSOR)
            return sg__err(W->ctx, SG_EINVAL, "input %s: inner tensor %zu is no tensor value", name ? name : "?", j);
    CHAIN(sg_walk_input_value(W, name, inner[0]));
    return sg__w_set_twin(W, inner[0], inner[1]);
}

sg_status sg_walk_input_subclass_tensors(sg_walk *W, const char *name, const char *kind, sg_tensor *const *inner,
                                         size_t n)
{
    CHAIN(check_kind(W, name, kind, n));
    if (!W->eager)
        return sg__err(W->ctx, SG_EINVAL, "a concrete input in a trace");
    if (!inner || !inner[0] || !inner[1])
        return sg__err(W->ctx, SG_EINVAL, "input %s: NULL", name ? name : "?");
    if (!param_name(W, name))
        return sg__err(W->ctx, SG_EINVAL, "the program has no parameter %s", name ? name : "(NULL)");
    sg_value v[2];
    for (size_t j = 0; j < 2; j++) {
        char iname[256];
        snprintf(iname, sizeof iname, "%s_%s", name, j ? "b" : "a");
        CHAIN(sg__xeager_input(W->ex, &v[j], iname, inner[j], 0));
    }
    /* (the record's signature takes them as one input, as a trace's: its gradients read it) */
    CHAIN(sg__tracer_note_subclass_input(W->t, name, kind, v, 2));
    return sg_walk_input_subclass(W, name, kind, v, 2);
}

sg_status sg_walk_input_tensor(sg_walk *W, const char *name, sg_tensor *xt, int requires_grad)
{
    if (!xt)
        return sg__err(W->ctx, SG_EINVAL, "input %s: NULL", name ? name : "?");
    if (!W->eager)
        return sg__err(W->ctx, SG_EINVAL, "a concrete input in a trace");
    const char *pn = param_name(W, name);
    if (!pn)
        return sg__err(W->ctx, SG_EINVAL, "the program has no parameter %s", name ? name : "(NULL)");
    sg_value v;
    CHAIN(sg__xeager_input(W->ex, &v, name, xt, requires_grad));
    /* the run shares the input's version counter: writes bump the caller's */
    return sg_walk_input_value(W, pn, v);
}

sg_status sg_walk_input_declare_view(sg_walk *W, const char *name)
{
    if (!W)
        return SG_EINVAL;
    wv *o = name ? frame_find(W->params, name) : NULL;
    if (!o || o->kind != W_TENSOR)
        return sg__err(W->ctx, SG_EINVAL, "input %s declared a view: no tensor parameter given so",
                       name ? name : "(NULL)");
    CHAIN(sg_tracer_input_declare_view(W->t, o->u.t->v));
    sg_value b = sg__w_twin(W, o->u.t->v); /* (a TwoTensor's inner b views its base's inner b) */
    return b != SG_NOVAL ? sg_tracer_input_declare_view(W->t, b) : SG_OK;
}

sg_status sg_walk_input_int(sg_walk *W, const char *name, int64_t value)
{
    const char *pn = param_name(W, name);
    if (!pn)
        return sg__err(W->ctx, SG_EINVAL, "the program has no parameter %s", name ? name : "(NULL)");
    wv x = {.kind = W_INT, .u.e = sg__int_si(W->ctx, value)};
    if (!x.u.e)
        return sg_ctx_last_error(W->ctx);
    return bind_param(W, pn, x);
}

/* ---- running the entry point ---- */

sg_status sg_walk_run(sg_walk *W)
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
    return sg__w_call_func(W, def, &fn, args, def->nnames, NULL, NULL, 0, &W->result, &W->entry_frame);
}

/* The outputs: a returned tuple is its elements, anything else one output. */
static const wv *outputs(const sg_walk *W, size_t *n)
{
    if (W->result.kind == W_TUPLE) {
        *n = W->result.u.seq.n;
        return W->result.u.seq.items;
    }
    *n = 1;
    return &W->result;
}

size_t sg_walk_noutputs(const sg_walk *W)
{
    size_t n;
    outputs(W, &n);
    return n;
}

/* Flatten the tensors and ints of v into vals; *items counts the values
 * visited (lists and tuples can share items: x = (x, x) doubles them),
 * bounded as printing bounds them, and depth the nesting. */
static sg_status flatten_out(sg_walk *W, const wv *v, sg_value *vals, size_t *n, size_t max, unsigned depth,
                             size_t *items)
{
    if (++*items > ((size_t)1 << 20) || depth > MAX_NEST)
        return sg__err(W->ctx, SG_ELIMIT,
                       "the result holds more than %zu values or nests lists and tuples more than %d deep",
                       (size_t)1 << 20, MAX_NEST);
    switch ((wkind)v->kind) {
    case W_TENSOR: {
        sg_value b = sg__w_twin(W, v->u.t->v);
        if (*n + (b != SG_NOVAL) >= max)
            return sg__err(W->ctx, SG_ELIMIT, "too many outputs");
        if (b != SG_NOVAL && !sg__grow(W->ctx, (void **)&W->twoouts, &W->captwoouts, W->ntwoouts + 1,
                                       sizeof *W->twoouts))
            return sg__nomem(W->ctx);
        if (b != SG_NOVAL) /* a TwoTensor: its inner tensors, a then b */
            W->twoouts[W->ntwoouts++] = (uint32_t)*n;
        vals[(*n)++] = v->u.t->v;
        if (b != SG_NOVAL)
            vals[(*n)++] = b;
        return SG_OK;
    }
    case W_TUPLE:
    case W_LIST:
        for (uint32_t i = 0; i < v->u.seq.n; i++)
            CHAIN(flatten_out(W, &v->u.seq.items[i], vals, n, max, depth + 1, items));
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

sg_status sg_walk_finish(sg_walk *W)
{
    sg_value vals[256];
    size_t n = 0;
    size_t items = 0;
    W->ntwoouts = 0;
    CHAIN(flatten_out(W, &W->result, vals, &n, 256, 0, &items));
    CHAIN(sg_tracer_output(W->t, vals, n));
    for (size_t i = 0; i < W->ntwoouts; i++)
        CHAIN(sg_tracer_output_subclass(W->t, W->twoouts[i], 2, "two"));
    return SG_OK;
}

sg_status sg_walk_print_output(sg_walk *W, const sg_run *r, size_t i, char **out)
{
    if (!out)
        return sg__err(W->ctx, SG_EINVAL, "sg_walk_print_output: NULL");
    size_t n;
    const wv *o = outputs(W, &n);
    sg__buf b = {.ctx = W->ctx};
    *out = NULL;
    sg_status st = i < n ? sg__w_print(W, r ? r : sg_walk_eager_run(W), &b, &o[i]) : SG_OK;
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
static wobj *param_obj(const sg_walk *W, const char *name)
{
    wv *v = frame_find(W->params, name);
    return v && v->kind == W_TENSOR ? v->u.t : NULL;
}

int sg_walk_output_is(const sg_walk *W, size_t i, const char *param)
{
    size_t n;
    const wv *o = outputs(W, &n);
    wobj *p = param_obj(W, param);
    return i < n && p && o[i].kind == W_TENSOR && o[i].u.t == p;
}

sg_value sg_walk_output_value(const sg_walk *W, size_t i)
{
    size_t n;
    const wv *o = outputs(W, &n);
    return i < n && o[i].kind == W_TENSOR ? o[i].u.t->v : SG_NOVAL;
}

sg_value sg_walk_param_value(const sg_walk *W, const char *name)
{
    wobj *p = param_obj(W, name);
    return p ? p->v : SG_NOVAL;
}

sg_value sg_walk_inner(const sg_walk *W, sg_value v, size_t j)
{
    if (v >= W->g->nvals || sg_tracer_kind(W->t, v) != SG_VALUE_TENSOR)
        return SG_NOVAL;
    sg_value b = sg__w_twin(W, v);
    return j == 0 ? v : j == 1 ? b : SG_NOVAL;
}

sg_value sg_walk_local(const sg_walk *W, const char *name)
{
    if (!W->entry_frame)
        return SG_NOVAL;
    wv *v = frame_find(W->entry_frame, name);
    return v && v->kind == W_TENSOR ? v->u.t->v : SG_NOVAL;
}

sg_env *sg__w_env(const sg_walk *W)
{
    return W->ex ? sg__xeager_env(W->ex) : W->g->env;
}

const sg__opreg *sg__w_reg(sg_walk *W)
{
    return sg__tracer_reg(W->t);
}
