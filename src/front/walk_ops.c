/* The walker (walk_private.h): calling aten operators (through the tracer,
 * or exec's eager executor), and resolving a Python-level operator
 * (x.add(y), torch.zeros(2, 3)) to the first of its overloads whose schema
 * takes the arguments, as PyTorch's Python argument parser does. */
#include <stdio.h>

#include "front/walk_private.h"

/* a == lit, the first letters compared first (most names differ there). */
static inline bool is(const char *a, const char *lit)
{
    return a[0] == lit[0] && !strcmp(a, lit);
}

/* ---- calling operators ---- */

/* ---- tensor subclasses ---- */

sg_status sg__w_set_twin(sg_walk *W, sg_value a, sg_value b)
{
    if (!W->twin.ctx && !sg__idmap_init(W->ctx, &W->twin, 64))
        return sg__nomem(W->ctx);
    if (!sg__idmap_put(&W->twin, a + 1, (size_t)b + 1))
        return sg__nomem(W->ctx);
    W->subclass = true;
    return SG_OK;
}

/* One call recorded (a trace) or recorded and run (eager): *v its value. */
static sg_status record_call(sg_walk *W, const char *op, const sg__schema *sch, const sg_arg *args, size_t n,
                             uint8_t flags, sg_value *v)
{
    if (W->eager) /* exec records the call and runs it */
        return sg__xeager_call(W->ex, v, op, sch, args, n, W->line, flags);
    return sg__tracer_call_node(W->t, v, op, sch, args, n, W->line, flags);
}

/* The arguments of the call on the b inner tensors: each TwoTensor's b
 * where args has its a, everything else as it is (PyTorch's TwoTensor
 * dispatch: the same call on each inner tensor). *any: some argument is a
 * TwoTensor. Lists of values are copied into the walk's arena. */
static sg_status b_args(sg_walk *W, const sg_arg *args, size_t n, sg_arg *out, bool *any)
{
    *any = false;
    for (size_t i = 0; i < n; i++) {
        out[i] = args[i];
        sg_value b;
        if (args[i].kind == SG_ARG_VALUE && (b = sg__w_twin(W, args[i].u.v)) != SG_NOVAL) {
            out[i].u.v = b;
            *any = true;
        } else if (args[i].kind == SG_ARG_VALUES) {
            sg_value *vals = NULL;
            for (size_t j = 0; j < args[i].u.values.n; j++) {
                if ((b = sg__w_twin(W, args[i].u.values.v[j])) == SG_NOVAL)
                    continue;
                if (!vals) {
                    if (!(vals = wmem(W, args[i].u.values.n * sizeof *vals)))
                        return sg__nomem(W->ctx);
                    memcpy(vals, args[i].u.values.v, args[i].u.values.n * sizeof *vals);
                }
                vals[j] = b;
                *any = true;
            }
            if (vals)
                out[i].u.values.v = vals;
        }
    }
    return SG_OK;
}

/* The results a and b of one call on the two inner sides, paired: a tensor
 * a TwoTensor, the tensors of a list element by element (a value that is
 * no tensor is a's, as TwoTensor gives it). */
static sg_status pair_results(sg_walk *W, sg_value a, sg_value b)
{
    sg_value_kind k = sg_tracer_kind(W->t, a);
    if (k == SG_VALUE_TENSOR) { /* one outer tensor: its inner tensors have its sizes (nonzero's may differ) */
        bool same = sg_tracer_kind(W->t, b) == SG_VALUE_TENSOR && sg_tracer_ndim(W->t, a) == sg_tracer_ndim(W->t, b);
        for (size_t d = 0; same && d < sg_tracer_ndim(W->t, a); d++)
            CHAIN(sg__known_same(sg__w_env(W), sg_tracer_size(W->t, a, d), sg_tracer_size(W->t, b, d), &same));
        if (!same)
            return sg__err(W->ctx, SG_EUNSUPPORTED, "unsupported: a TwoTensor result whose inner tensors differ in "
                           "sizes (a data-dependent size)");
        return sg__w_set_twin(W, a, b);
    }
    if (k == SG_VALUE_LIST && sg_tracer_kind(W->t, b) == SG_VALUE_LIST) {
        size_t n = sg_tracer_list_len(W->t, a);
        for (size_t i = 0; i < n && i < sg_tracer_list_len(W->t, b); i++)
            CHAIN(pair_results(W, sg_tracer_list_get(W->t, a, i), sg_tracer_list_get(W->t, b, i)));
    }
    return SG_OK;
}

/* Call aten operator op (sch: its schema, found by the caller; NULL: found
 * by name); *out is its result. An in-place operator gives back its self
 * object (now at the new value), out= its out object. flags: the node's. A
 * call with a TwoTensor argument runs on the a, then on the b inner
 * tensors. */
sg_status sg__w_op_call_schema(sg_walk *W, const sg__py *at, const char *op, const sg__schema *sch,
                               const sg_arg *args, size_t n, wobj *writes, wv *out, uint8_t flags)
{
    sg_value v, vb = SG_NOVAL;
    sg_arg bargs[SG_SCHEMA_ARGS + 4];
    bool two = false;
    if (W->subclass) {
        if (n > sizeof bargs / sizeof *bargs)
            return sg__w_err(W, at, SG_ELIMIT, "%s: more than %zu arguments", op, sizeof bargs / sizeof *bargs);
        CHAIN(b_args(W, args, n, bargs, &two));
        if (two && writes && sg__w_twin(W, writes->v) == SG_NOVAL)
            return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: %s writes a plain tensor from a tensor subclass "
                             "(TwoTensor) argument", sch ? sch->name : op);
    }
    sg_status s = record_call(W, op, sch, args, n, flags, &v);
    if (!s && two && !(s = record_call(W, op, sch, bargs, n, flags, &vb)))
        s = pair_results(W, v, vb);
    if (s)
        return sg__w_fail(W, at, s);
    if (writes) {
        if (W->branches) { /* restored after the branch (walk_cond.c) */
            if (W->njournal == W->capjournal) {
                size_t cap = W->capjournal ? 2 * W->capjournal : 16;
                struct wjournal *grown = sg__realloc(W->ctx, W->journal, cap * sizeof *grown);
                if (!grown)
                    return sg__nomem(W->ctx);
                W->journal = grown;
                W->capjournal = cap;
            }
            W->journal[W->njournal++] = (struct wjournal){writes, writes->v};
        }
        writes->v = v;
        out->kind = W_TENSOR;
        out->u.t = writes;
        return SG_OK;
    }
    return sg__w_to_wv(W, v, out);
}

/* op_call_schema of an operator named op, with node flags. */
sg_status sg__w_op_call_flags(sg_walk *W, const sg__py *at, const char *op, const sg_arg *args, size_t n,
                              wobj *writes, wv *out, uint8_t flags)
{
    return sg__w_op_call_schema(W, at, op, NULL, args, n, writes, out, flags);
}

/* Call aten operator op; *out is its result. An in-place operator gives
 * back its self object (now at the new value), out= its out object. */
sg_status sg__w_op_call(sg_walk *W, const sg__py *at, const char *op, const sg_arg *args, size_t n, wobj *writes,
                        wv *out)
{
    return sg__w_op_call_flags(W, at, op, args, n, writes, out, 0);
}

/* ---- Python-level operators ---- */

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
            given |= is(kwn[k], s->args[i].name);
        if (!given && !s->args[i].has_def && !s->args[i].type.optional)
            return false;
    }
    return true;
}

static sg_status pack_varargs(sg_walk *W, const sg__schema *s, wv *pos, size_t *npos)
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

const pyop *pyop_find(sg_walk *W, const char *name)
{
    uint32_t h = 2166136261u; /* FNV-1a of the name: a program asks the same few names again and again */
    for (const char *c = name; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    size_t at = (h ^ (h >> 16)) % (sizeof W->pyops / sizeof *W->pyops);
    const pyop *p = W->pyops[at];
    if (p && p->py[0] == name[0] && !strcmp(p->py, name))
        return p;
    if ((p = sg__opreg_pyop(sg__w_reg(W), name)))
        W->pyops[at] = p;
    return p;
}

/* Call the Python-level operator py with self (NULL for torch.X) and
 * arguments. */
sg_status sg__w_call_pyop(sg_walk *W, const sg__py *at, const pyop *p, wv *pos, size_t npos, const char **kwn,
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
        if (is(kwn[k], "out")) {
            if (!p->any_out)
                return sg__w_err(W, at, SG_EUNSUPPORTED, "unsupported: %s with out= (not in the operator list)", p->py);
        }
    if (!chosen) {
        char sig[256] = "";
        size_t len = 0;
        for (size_t i = 0; i < npos && len < sizeof sig - 40; i++)
            len += (size_t)snprintf(sig + len, sizeof sig - len, "%s%s", i ? ", " : "", sg__w_kind_name(&pos[i]));
        for (size_t k = 0; k < nkw && len < sizeof sig - 40; k++)
            len += (size_t)snprintf(sig + len, sizeof sig - len, "%s%s=%s", len ? ", " : "", kwn[k],
                                    sg__w_kind_name(&kwv[k]));
        return sg__w_err(W, at, SG_ETYPE, "%s() received an invalid combination of arguments: (%s)", p->py, sig);
    }
    argv args; /* on the stack: 13 KB that wmem would keep (and zero) for every call */
    argv *A = &args;
    A->n = 0;
    for (size_t i = 0; i < nchosen; i++)
        CHAIN(sg__w_arg_of(W, at, A, &packed[i], NULL));
    bool has_dtype = false;
    wobj *out_obj = NULL;
    for (size_t k = 0; k < nkw; k++) {
        CHAIN(sg__w_arg_of(W, at, A, &kwv[k], kwn[k]));
        has_dtype |= is(kwn[k], "dtype") && kwv[k].kind != W_NONE;
        if (is(kwn[k], "out") && kwv[k].kind == W_TENSOR)
            out_obj = kwv[k].u.t;
    }
    bool arange = is(p->py, "arange");
    bool takes_dtype = ((p->flags & SG_PYF_CREATE) || arange) && !has_dtype &&
                       sg__schema_arg(chosen, "dtype") >= 0; /* zeros.out: out's dtype */
    if ((p->flags & SG_PYF_CREATE) && !has_dtype && takes_dtype && !arange) {
        /* float64 by default; full takes its fill value's type */
        wv d = {.kind = W_DTYPE, .u.dtype = SG_FLOAT64};
        if (is(p->py, "full") && nchosen > 1)
            d.u.dtype = packed[1].kind == W_INT ? SG_INT64 : packed[1].kind == W_BOOL ? SG_BOOL : SG_FLOAT64;
        CHAIN(sg__w_arg_of(W, at, A, &d, "dtype"));
    }
    if (arange && !has_dtype && takes_dtype) { /* integral ends make int64, else the default dtype */
        bool all_int = true;
        for (size_t i = 0; i < nchosen; i++)
            all_int &= packed[i].kind == W_INT;
        wv d = {.kind = W_DTYPE, .u.dtype = all_int ? SG_INT64 : SG_FLOAT64};
        CHAIN(sg__w_arg_of(W, at, A, &d, "dtype"));
    }
    wobj *writes = out_obj;
    if (chosen->flags & SG_OPF_INPLACE)
        writes = packed[0].u.t;
    size_t first_val = W->g->nvals;
    CHAIN(sg__w_op_call_schema(W, at, NULL, chosen, A->a, A->n, writes, out, 0));
    if (out->kind == W_TENSOR && out->u.t->v < first_val) /* an argument given back: its very object */
        for (size_t i = 0; i < nchosen; i++)
            if (packed[i].kind == W_TENSOR && packed[i].u.t->v == out->u.t->v)
                out->u.t = packed[i].u.t;
    return SG_OK;
}
