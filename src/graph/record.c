/* Recording a call into a graph: binding graph arguments to a schema, the
 * shape rule, the node with its bindings and runtime asserts (record.h). The
 * tracer binds the public arguments (sg_arg) itself and comes in at
 * sg__record_bound; a pass comes in at sg__graph_record. */
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "graph/record.h"

static sg_status bind_fail(sg__mcall *m, const char *what, const char *arg)
{
    return sg__err(m->g->ctx, SG_EINVAL, "%s: %s%s%s", m->op, what, arg ? " " : "", arg ? arg : "");
}

sg_status sg__record_rebind(const sg__mcall *m, const sg__schema *s, sg__mcall *f)
{
    *f = *m;
    f->s = s;
    sg_status st = SG_OK;
    for (int i = 0; i < s->nargs && !st; i++) {
        int j = sg__schema_arg(m->s, s->args[i].name);
        f->given[i] = j >= 0 && m->given[j];
        if (j >= 0)
            f->a[i] = m->a[j];
        else
            st = sg__record_default(f, i);
    }
    return st;
}

void sg__record_adopt(sg__mcall *m, const sg__mcall *f)
{
    memcpy(m->binds, f->binds, sizeof m->binds);
    m->nbinds = f->nbinds;
    memcpy(m->asserts, f->asserts, sizeof m->asserts);
    m->nasserts = f->nasserts;
}

/* A default of one or two decimal digits, optionally negative ("1", "-1",
 * "0"): its integer in *out (true); false for any other text. */
static bool small_default(const char *d, const sg_expr **out, sg_ctx *ctx)
{
    bool neg = d[0] == '-';
    const char *p = d + neg;
    if (p[0] < '0' || p[0] > '9' || (p[1] && (p[1] < '0' || p[1] > '9' || p[2])))
        return false;
    long v = p[0] - '0';
    if (p[1])
        v = 10 * v + (p[1] - '0');
    *out = sg__int_si(ctx, neg ? -v : v); /* NULL when memory runs out: the general path then reports it */
    return *out != NULL;
}

sg_status sg__record_default(sg__mcall *m, int i)
{
    const sg__sarg *sa = &m->s->args[i];
    sg__garg *a = &m->a[i];
    memset(a, 0, sizeof *a);
    if (!sa->has_def) {
        if (sa->type.optional) {
            a->kind = SG_A_NONE;
            return SG_OK;
        }
        return bind_fail(m, "missing argument", sa->name);
    }
    const char *d = sa->def;
    if (sa->type.base != SG_TY_FLOAT && !sa->type.list && small_default(d, &a->u.e, m->g->ctx)) { /* "1", "0", "-1" */
        a->kind = SG_A_EXPR;
    } else if (d[0] == 'N' && !strcmp(d, "None")) {
        a->kind = SG_A_NONE;
    } else if ((d[0] == 'T' && !strcmp(d, "True")) || (d[0] == 'F' && !strcmp(d, "False"))) {
        a->kind = SG_A_BOOL;
        a->u.b = d[0] == 'T';
    } else if (d[0] == '[' && !strcmp(d, "[]")) {
        a->kind = SG_A_EXPRS;
        a->u.list.off = (uint32_t)m->g->nexprs;
        a->u.list.n = 0;
    } else if (sa->type.base == SG_TY_FLOAT) {
        a->kind = SG_A_FLOAT;
        a->u.f = strtod(d, NULL);
    } else {
        char *end;
        long v = strtol(d, &end, 10);
        if (*end)
            return sg__err(m->g->ctx, SG_EINTERNAL, "%s: a default the tracer cannot read: %s", m->op, d);
        a->kind = SG_A_EXPR;
        a->u.e = sg__int_si(m->g->ctx, v);
        if (!a->u.e)
            return sg_ctx_last_error(m->g->ctx);
    }
    return SG_OK;
}

/* The node's arguments: the positional ones up to the last given (defaults
 * filled in between), then the keyword-only ones given, by name; their
 * count, and in *use where they are (out, or m->a itself where no
 * keyword-only one is given). */
static size_t node_args(const sg__mcall *m, sg__garg *out, const sg__garg **use)
{
    int last = -1;
    bool kw = false;
    for (int i = 0; i < m->s->nargs; i++) {
        if (!m->s->args[i].kwonly && m->given[i])
            last = i;
        kw |= m->s->args[i].kwonly && m->given[i];
    }
    *use = out;
    if (!kw) { /* the positional ones only: a prefix of m->a, as it is */
        *use = m->a;
        return (size_t)(last + 1);
    }
    size_t n = 0;
    for (int i = 0; i <= last; i++)
        out[n++] = m->a[i];
    for (int i = 0; i < m->s->nargs; i++)
        if (m->s->args[i].kwonly && m->given[i]) {
            out[n] = m->a[i];
            out[n++].kw = m->s->args[i].name;
        }
    return n;
}

static sg_status record_node(sg__mcall *m, const sg__record_hooks *h, uint32_t out, unsigned line)
{
    sg__graph *g = m->g;
    sg__garg args[SG_SCHEMA_ARGS];
    const sg__garg *use;
    size_t n = node_args(m, args, &use);
    sg_status s = sg__graph_call(g, m->s, use, n, out, line);
    if (!s)
        g->nodes[g->nnodes - 1].flags = m->flags, g->nodes[g->nnodes - 1].rg = m->rg;
    if (!s && m->nbinds)
        s = sg__graph_bind(g, (uint32_t)g->nnodes - 1, m->binds, m->nbinds);
    if (!s && h && h->recorded)
        s = h->recorded(h->ud, m, out);
    for (size_t i = 0; i < m->nasserts && !s; i++)
        s = sg__graph_assert(g, m->asserts[i], line);
    return s;
}

sg_status sg__record_bound(sg__mcall *m, sg__graph_mark k, const sg__record_hooks *h, unsigned line, uint32_t *out)
{
    const sg__opinfo *info = sg__op_info(m->s->op);
    *out = SG_NOVAL;
    if (!info || !info->rule) {
        sg__graph_restore(m->g, k);
        return sg__err(m->g->ctx, SG_EUNSUPPORTED, "unsupported: operator %s%s", m->op,
                       info && info->composite ? " (a composite: record the calls it makes)" : "");
    }
    uint32_t v = SG_NOVAL;
    sg_status s = h && h->before ? h->before(h->ud, m) : SG_OK;
    sg__rmemo_key key;
    bool keyed = !s && sg__rmemo_key_of(m->g, m->s, m->flags, m->rg, m->a, m->given, 0, &key);
    if (keyed) /* the rule's result remembered (rule_memo.c) */
        s = sg__rmemo_use(m->g, &key, m->a, &v);
    if (!s && v == SG_NOVAL) {
        sg__graph_mark before = sg__graph_mark_take(m->g);
        uint8_t flags = m->flags;
        s = info->rule(m, &v);
        if (!s && keyed && v != SG_NOVAL && !m->nbinds && !m->nasserts && m->flags == flags)
            sg__rmemo_keep(m->g, &key, m->a, &before, v);
    }
    if (!s && v != SG_NOVAL && h && h->made)
        h->made(h->ud, m, v);
    bool itself = !s && v != SG_NOVAL && m->g->vals[v].node != SG_NOVAL; /* the rule gave an argument back */
    if (!s && !itself)
        s = record_node(m, h, v, line);
    else if (itself) /* nothing recorded; what binding added is dropped */
        sg__graph_restore(m->g, k);
    if (s) {
        sg__graph_restore(m->g, k);
        return s;
    }
    *out = v;
    return SG_OK;
}

/* Is graph argument a made of values of g? */
static bool arg_in(const sg__graph *g, const sg__garg *a)
{
    switch ((sg__akind)a->kind) {
    case SG_A_VALUE:
        return a->u.v < g->nvals && g->vals[a->u.v].node != SG_NOVAL;
    case SG_A_VALUES:
        if ((size_t)a->u.list.off + a->u.list.n > g->nids)
            return false;
        for (uint32_t k = 0; k < a->u.list.n; k++)
            if (g->ids[a->u.list.off + k] >= g->nvals)
                return false;
        return true;
    case SG_A_EXPRS:
        return (size_t)a->u.list.off + a->u.list.n <= g->nexprs;
    case SG_A_EXPR:
        return a->u.e != NULL;
    case SG_A_SCOPE:
        return false; /* only cond nodes take scopes */
    default:
        return true;
    }
}

/* A call of s with arguments in a node's order (args: positional ones, none
 * of them keyword-only, then keyword-only ones in the schema's order) whose
 * rule's result the graph's memo has (rule_memo.c): the value made and the
 * node recorded as binding and sg__record_bound would (node_args gives such
 * arguments back as they are, each keyword the schema's own name; no flags,
 * no binds, no asserts, which a remembered result never has); true. false:
 * nothing done (not in that form, not remembered, or memory ran out: the
 * caller records it in full, and meets the error again). */
static bool remembered(sg__graph *g, const sg__schema *s, const sg__garg *args, size_t nargs, unsigned line,
                       uint32_t *out)
{
    if (!s->memo || nargs > (size_t)s->nargs)
        return false;
    size_t npos = 0;
    while (npos < nargs && !args[npos].kw) {
        if (s->args[npos].kwonly)
            return false;
        npos++;
    }
    const sg__garg *a = args; /* by schema position (the key checks that each is of g: arg_in) */
    sg__garg byname[SG_SCHEMA_ARGS], node[SG_SCHEMA_ARGS];
    bool given[SG_SCHEMA_ARGS];
    if (npos < nargs) { /* keyword-only ones: each at its position, named as node_args names it */
        size_t at = npos;
        for (size_t i = 0; i < (size_t)s->nargs; i++)
            given[i] = i < npos;
        memcpy(byname, args, npos * sizeof *args);
        memcpy(node, args, nargs * sizeof *args);
        for (size_t k = npos; k < nargs; k++, at++) {
            const char *kw = args[k].kw;
            if (!kw) /* (a positional one after a named one: binding's error) */
                return false;
            while (at < (size_t)s->nargs && s->args[at].name != kw &&
                   (s->args[at].name[0] != kw[0] || strcmp(s->args[at].name, kw)))
                at++;
            if (at == (size_t)s->nargs || !s->args[at].kwonly)
                return false;
            byname[at] = args[k];
            given[at] = true;
            node[k].kw = s->args[at].name;
        }
        a = byname;
        args = node;
    }
    sg__rmemo_key key;
    uint32_t v;
    if (!sg__rmemo_key_of(g, s, 0, 0, a, npos < nargs ? given : NULL, nargs, &key))
        return false;
    sg__graph_mark k = sg__graph_mark_take(g);
    if (sg__rmemo_use(g, &key, a, &v) || v == SG_NOVAL)
        return false;
    if (sg__graph_call(g, s, args, nargs, v, line)) {
        sg__graph_restore(g, k);
        return false;
    }
    g->nodes[g->nnodes - 1].flags = 0;
    g->nodes[g->nnodes - 1].rg = 0;
    *out = v;
    return true;
}

sg_status sg__graph_record(sg__graph *g, const sg__schema *s, const sg__garg *args, size_t nargs, unsigned line,
                           const sg__record_hooks *h, uint32_t *out)
{
    if (!out)
        return SG_EINVAL;
    *out = SG_NOVAL;
    if (!g || !s || (nargs && !args))
        return g ? sg__err(g->ctx, SG_EINVAL, "sg__graph_record: NULL argument") : SG_EINVAL;
    if (!h && remembered(g, s, args, nargs, line, out)) /* the rule's result remembered */
        return SG_OK;
    sg__mcall m = {.g = g, .env = g->env, .s = s};
    sg__schema_full_name(s, m.op);
    const sg__opinfo *info = sg__op_info(s->op);
    if (!info || !info->rule)
        return sg__err(g->ctx, SG_EUNSUPPORTED, "unsupported: operator %s%s", m.op,
                       info && info->composite ? " (a composite: record the calls it makes)" : "");
    size_t npos = 0;
    while (npos < nargs && !args[npos].kw)
        npos++;
    for (size_t k = 0; k < nargs; k++) {
        if (k >= npos && !args[k].kw)
            return bind_fail(&m, "a positional argument after a named one", NULL);
        if (!arg_in(g, &args[k]))
            return bind_fail(&m, "an argument that is not of the graph:", args[k].kw ? args[k].kw : "positional");
        if (args[k].kw && sg__schema_arg(s, args[k].kw) < 0)
            return bind_fail(&m, "no argument named", args[k].kw);
    }
    if (npos > s->nargs)
        return bind_fail(&m, "too many positional arguments", NULL);
    sg__graph_mark k = sg__graph_mark_take(g);
    sg_status st = SG_OK;
    for (int i = 0; i < s->nargs && !st; i++) {
        const sg__garg *x = NULL;
        if ((size_t)i < npos) {
            if (s->args[i].kwonly)
                return bind_fail(&m, "too many positional arguments", NULL);
            x = &args[i];
        }
        for (size_t j = npos; j < nargs; j++)
            if (!strcmp(args[j].kw, s->args[i].name)) {
                if (x)
                    return bind_fail(&m, "an argument given twice:", s->args[i].name);
                x = &args[j];
            }
        m.given[i] = x != NULL;
        if (x) {
            m.a[i] = *x;
            m.a[i].kw = NULL;
        } else {
            st = sg__record_default(&m, i);
        }
    }
    if (st) {
        sg__graph_restore(g, k);
        return st;
    }
    return sg__record_bound(&m, k, h, line, out);
}
