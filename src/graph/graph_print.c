/* Printing a graph as FX-like Python source, and its operator names. Nodes
 * are named as FX names them: a placeholder by the program name it carries
 * (a symbol by its own name), a call by its operator's name ("mul",
 * "mul_1", "add_"), made unique with a suffix "_N". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "graph/graph.h"
#include "shapeguard/print.h"

#define NAME_LEN 40

/* The names given so far: an open-addressing set of strings, each with the
 * count of suffixes tried for it as a base. */
typedef struct {
    char (*name)[NAME_LEN]; /* per value */
    uint32_t *slot;         /* 1 + value index, 0 free */
    uint32_t *tries;        /* per slot: next suffix for that base */
    size_t cap;
    uint32_t *used;         /* the slots taken, for namer_reset */
    size_t nused, nvals;
} namer;

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

/* The slot of name: where it is, or the free slot where it would go. */
static size_t find(const namer *N, const char *name)
{
    size_t at = hash_str(name) & (N->cap - 1);
    while (N->slot[at] && strcmp(N->name[N->slot[at] - 1], name))
        at = (at + 1) & (N->cap - 1);
    return at;
}

/* Python's keywords and the builtins an operator may be named after: FX
 * never uses them as names ("sum" becomes "sum_1"). They are entered in the
 * set first, as if taken. */
static const char *const reserved_names[] = {
    "False", "None", "True", "abs", "all", "and", "any", "as", "assert", "bool", "break", "class", "continue",
    "def", "del", "dict", "elif", "else", "except", "filter", "finally", "float", "for", "from", "global", "hash",
    "id", "if", "import", "in", "input", "int", "is", "iter", "lambda", "len", "list", "map", "max", "min",
    "next", "nonlocal", "not", "object", "or", "pass", "pow", "print", "raise", "range", "return", "round",
    "self", "set", "slice", "sorted", "str", "sum", "super", "try", "tuple", "type", "while", "with", "yield",
    "zip"};

/* Name value v after base, unique: base, then base_1, base_2, ... */
static void name_value(namer *N, uint32_t v, const char *base)
{
    size_t b = find(N, base);
    uint32_t k = N->slot[b] ? N->tries[b] : 0;
    char cand[NAME_LEN];
    for (;; k++) {
        if (k)
            snprintf(cand, sizeof cand, "%.28s_%u", base, (unsigned)k);
        else
            snprintf(cand, sizeof cand, "%.39s", base);
        if (!N->slot[find(N, cand)])
            break;
    }
    memcpy(N->name[v], cand, NAME_LEN);
    size_t at = find(N, cand);
    N->slot[at] = v + 1;
    N->used[N->nused++] = (uint32_t)at;
    N->tries[at] = 1;
    b = find(N, base); /* the base's slot: count the suffix used */
    if (N->slot[b])
        N->tries[b] = k + 1;
}

#define NRESERVED (sizeof reserved_names / sizeof *reserved_names)

static void enter_reserved(namer *N)
{
    for (size_t i = 0; i < NRESERVED; i++) { /* entries nvals.. of name[] */
        size_t at = find(N, reserved_names[i]);
        N->slot[at] = (uint32_t)(N->nvals + i + 1);
        N->tries[at] = 1;
        N->used[N->nused++] = (uint32_t)at;
    }
}

/* A namer for the values of g (each value is named at most once between resets). */
static bool namer_init(sg_ctx *ctx, namer *N, size_t nvals)
{
    size_t n = nvals + NRESERVED;
    N->cap = 16;
    while (N->cap < 4 * n)
        N->cap *= 2;
    N->nvals = nvals;
    N->name = sg__calloc(ctx, n, sizeof *N->name);
    N->slot = sg__calloc(ctx, N->cap, sizeof *N->slot);
    N->tries = sg__calloc(ctx, N->cap, sizeof *N->tries);
    N->used = sg__malloc(ctx, N->cap * sizeof *N->used); /* a slot is taken at most once between resets */
    if (!N->name || !N->slot || !N->tries || !N->used)
        return false;
    for (size_t i = 0; i < NRESERVED; i++)
        snprintf(N->name[nvals + i], NAME_LEN, "%s", reserved_names[i]);
    enter_reserved(N);
    return true;
}

/* Forget the names given (another scope: FX names each graph on its own),
 * in time proportional to their number, not to the graph's. */
static void namer_reset(namer *N)
{
    for (size_t i = 0; i < N->nused; i++)
        N->slot[N->used[i]] = N->tries[N->used[i]] = 0;
    N->nused = 0;
    enter_reserved(N);
}

static void namer_free(namer *N)
{
    sg_free(N->name);
    sg_free(N->slot);
    sg_free(N->tries);
    sg_free(N->used);
}

/* The nodes of each scope in order: nodes[start[s] .. start[s + 1]) (one
 * pass over the graph, not one per scope). */
typedef struct {
    uint32_t *nodes, *start;
} by_scope;

static bool by_scope_init(const sg__graph *g, by_scope *B)
{
    B->nodes = sg__malloc(g->ctx, (g->nnodes + 1) * sizeof *B->nodes);
    B->start = sg__calloc(g->ctx, (size_t)g->nscopes + 1, sizeof *B->start);
    uint32_t *at = sg__calloc(g->ctx, (size_t)g->nscopes + 1, sizeof *at);
    bool ok = B->nodes && B->start && at;
    for (uint32_t i = 0; ok && i < g->nnodes; i++)
        B->start[g->nodes[i].scope + 1]++;
    for (uint32_t s = 0; ok && s < g->nscopes; s++)
        at[s + 1] = B->start[s + 1] += B->start[s];
    for (uint32_t i = 0; ok && i < g->nnodes; i++)
        B->nodes[at[g->nodes[i].scope]++] = i;
    sg_free(at);
    return ok;
}

static void by_scope_free(by_scope *B)
{
    sg_free(B->nodes);
    sg_free(B->start);
}

/* A namer and the nodes by scope for one print of g; on failure (SG_ENOMEM
 * said) both are empty again. */
static bool naming_init(const sg__graph *g, namer *N, by_scope *B)
{
    if (namer_init(g->ctx, N, g->nvals) && by_scope_init(g, B))
        return true;
    namer_free(N);
    by_scope_free(B);
    *N = (namer){0}; /* the callers' frees find nothing */
    *B = (by_scope){0};
    sg__nomem(g->ctx);
    return false;
}

/* The base of a node's name: a placeholder's own, a call's operator name. */
static const char *base_name(const sg__graph *g, const sg__gnode *n)
{
    const sg__gval *v = &g->vals[n->out];
    if (n->kind == SG_N_PLACEHOLDER && v->name[0])
        return v->name;
    if (n->kind == SG_N_PLACEHOLDER && (v->kind == SG_V_SYMINT || v->kind == SG_V_SYMBOOL) &&
        sg_expr_op(v->u.e) == SG_OP_SYM)
        return sg_expr_sym_name(v->u.e);
    return n->kind == SG_N_CALL ? n->schema->name : "arg";
}

/* e as Python, with the replacements the guards made by now (FX prints a
 * SymInt's expression when it prints, not when the value was made: a size a
 * guard in one cond branch pinned prints the same in both branches, and a
 * runtime assert names the symbols the types name). raw: as made (the
 * annotation of a symbol's own placeholder). */
static bool put_expr_as(const sg__graph *g, sg__buf *b, const sg_expr *e, bool raw)
{
    if (!raw && sg_env_replace(g->env, &e, e))
        return false;
    char *text = NULL;
    if (sg_print(g->ctx, &text, e, SG_FMT_PYTHON) != SG_OK)
        return false;
    sg__buf_puts(b, text);
    sg_free(text);
    return true;
}

/* A runtime assert's condition: with the replacements, unless they decide
 * it (the assert that made the replacement, u0 == s0, would print True:
 * PyTorch's assert keeps the expression it was made from). */
static bool put_cond(const sg__graph *g, sg__buf *b, const sg_expr *cond)
{
    const sg_expr *e = cond;
    if (sg_env_replace(g->env, &e, cond))
        return false;
    return put_expr_as(g, b, sg_expr_op(e) == SG_OP_TRUE || sg_expr_op(e) == SG_OP_FALSE ? cond : e, true);
}

static bool put_expr(const sg__graph *g, sg__buf *b, const sg_expr *e)
{
    return put_expr_as(g, b, e, false);
}

/* ", NAME=(i, j, ...)": a list of constant indices (a custom Function's). */
static void put_indices(const sg__graph *g, sg__buf *b, const char *name, const sg__garg *a)
{
    sg__buf_printf(b, ", %s=(", name);
    for (uint32_t j = 0; j < a->u.list.n; j++) {
        int64_t i = 0;
        (void)sg_expr_get_si(g->exprs[a->u.list.off + j], &i);
        sg__buf_printf(b, "%s%lld", j ? ", " : "", (long long)i);
    }
    sg__buf_puts(b, a->u.list.n == 1 ? ",)" : ")");
}

/* The annotation of a value: "f64[s0, 3]", "Sym(s0)", "f64[2]" ... */
static bool put_type(const sg__graph *g, sg__buf *b, uint32_t v)
{
    const sg__gval *val = &g->vals[v];
    switch ((sg__vkind)val->kind) {
    case SG_V_TENSOR:
        sg__buf_printf(b, "%s[", sg__dtype_short((sg_dtype)val->u.t.dtype));
        for (uint32_t d = 0; d < val->u.t.ndim; d++) {
            if (d)
                sg__buf_puts(b, ", ");
            if (!put_expr(g, b, sg__graph_size(g, v, d)))
                return false;
        }
        sg__buf_puts(b, "]");
        return true;
    case SG_V_SYMINT:
    case SG_V_SYMBOOL:
        sg__buf_puts(b, "Sym(");
        if (!put_expr_as(g, b, val->u.e,
                         val->node != SG_NOVAL && g->nodes[val->node].kind == SG_N_PLACEHOLDER))
            return false;
        sg__buf_puts(b, ")");
        return true;
    case SG_V_FLOAT:
        sg__buf_puts(b, "float");
        return true;
    case SG_V_NONE:
        sg__buf_puts(b, "None");
        return true;
    case SG_V_LIST:
        sg__buf_puts(b, "List");
        return true;
    }
    return true;
}

static bool put_arg(const sg__graph *g, const namer *N, sg__buf *b, const sg__garg *a)
{
    if (a->kw)
        sg__buf_printf(b, "%s = ", a->kw);
    switch ((sg__akind)a->kind) {
    case SG_A_SCOPE:
        sg__buf_printf(b, "self.%s", g->scopes[a->u.v].name);
        return true;
    case SG_A_VALUE:
        sg__buf_puts(b, N->name[a->u.v]);
        return true;
    case SG_A_EXPR:
        return put_expr(g, b, a->u.e);
    case SG_A_FLOAT:
        sg__buf_printf(b, "%.17g", a->u.f);
        return true;
    case SG_A_BOOL:
        sg__buf_puts(b, a->u.b ? "True" : "False");
        return true;
    case SG_A_NONE:
        sg__buf_puts(b, "None");
        return true;
    case SG_A_DTYPE:
        sg__buf_puts(b, sg__dtype_name((sg_dtype)a->u.dtype));
        return true;
    case SG_A_MEMFMT:
        sg__buf_puts(b, a->u.dtype == SG_CONTIGUOUS_FORMAT ? "torch.contiguous_format" : "torch.preserve_format");
        return true;
    case SG_A_EXPRS:
    case SG_A_VALUES:
        sg__buf_puts(b, "[");
        for (uint32_t k = 0; k < a->u.list.n; k++) {
            if (k)
                sg__buf_puts(b, ", ");
            if (a->kind == SG_A_VALUES)
                sg__buf_puts(b, N->name[g->ids[a->u.list.off + k]]);
            else if (!put_expr(g, b, g->exprs[a->u.list.off + k]))
                return false;
        }
        sg__buf_puts(b, "]");
        return true;
    }
    return true;
}

static bool put_node(const sg__graph *g, const namer *N, sg__buf *b, const sg__gnode *n, const char *ind)
{
    bool ok = true;
    switch ((sg__nkind)n->kind) {
    case SG_N_PLACEHOLDER:
        return true; /* in the signature */
    case SG_N_COND: {
        const sg__garg *a = &g->args[n->args];
        sg__buf_printf(b, "%s%s = torch.ops.higher_order.cond(", ind, N->name[n->out]);
        ok = put_arg(g, N, b, &a[0]);
        sg__buf_printf(b, ", self.%s, self.%s, (", g->scopes[a[1].u.v].name, g->scopes[a[2].u.v].name);
        for (uint32_t k = 0; k < a[3].u.list.n; k++)
            sg__buf_printf(b, "%s%s", k ? ", " : "", N->name[g->ids[a[3].u.list.off + k]]);
        sg__buf_puts(b, a[3].u.list.n == 1 ? ",))\n" : "))\n");
        const sg__gval *l = &g->vals[n->out];
        for (uint32_t k = 0; k < l->u.list.n && ok; k++) {
            uint32_t e = g->ids[l->u.list.off + k];
            sg__buf_printf(b, "%s%s: \"", ind, N->name[e]);
            ok = put_type(g, b, e);
            sg__buf_printf(b, "\" = %s[%u]\n", N->name[n->out], (unsigned)k);
        }
        return ok;
    }
    case SG_N_FUNCTION: { /* (no value: the outputs are the forward's) */
        const sg__garg *a = &g->args[n->args];
        static const char *const kw[3] = {"outputs", "inputs", "saved"};
        sg__buf_printf(b, "%sautograd_function(self.%s", ind, g->scopes[a[0].u.v].name);
        for (int k = 1; k <= 3; k++) {
            sg__buf_printf(b, ", %s=(", kw[k - 1]);
            for (uint32_t j = 0; j < a[k].u.list.n; j++)
                sg__buf_printf(b, "%s%s", j ? ", " : "", N->name[g->ids[a[k].u.list.off + j]]);
            sg__buf_puts(b, a[k].u.list.n == 1 ? ",)" : ")");
        }
        put_indices(g, b, "gradients_of", &a[4]);
        if (a[5].u.list.n) /* (a functional graph's: the backward's placeholders it writes, by position) */
            put_indices(g, b, "writes", &a[5]);
        sg__buf_puts(b, ")\n");
        return true;
    }
    case SG_N_CALL:
        sg__buf_puts(b, ind);
        if (n->out != SG_NOVAL) {
            sg__buf_printf(b, "%s: \"", N->name[n->out]);
            ok = put_type(g, b, n->out);
            sg__buf_puts(b, "\" = ");
        }
        sg__buf_printf(b, "torch.ops.aten.%s.%s(", n->schema->name,
                       n->schema->overload[0] ? n->schema->overload : "default");
        for (uint32_t i = 0; i < n->nargs && ok; i++) {
            if (i)
                sg__buf_puts(b, ", ");
            ok = put_arg(g, N, b, &g->args[n->args + i]);
        }
        sg__buf_puts(b, ")\n");
        return ok;
    case SG_N_ASSERT:
        sg__buf_printf(b, "%storch._check(", ind);
        ok = put_cond(g, b, n->cond);
        sg__buf_puts(b, ")\n");
        return ok;
    case SG_N_OUTPUT:
        if (g->scopes[n->scope].failed) /* (a custom Function's backward whose tracing failed) */
            sg__buf_printf(b, "%s# raises error %s: %s\n", ind, sg_status_kind(g->scopes[n->scope].failed),
                           g->scopes[n->scope].failed_msg);
        sg__buf_printf(b, "%sreturn (", ind);
        for (uint32_t i = 0; i < n->nargs; i++)
            sg__buf_printf(b, "%s%s", i ? ", " : "", N->name[g->args[n->args + i].u.v]);
        sg__buf_puts(b, n->nargs == 1 ? ",)\n" : ")\n");
        return true;
    }
    return ok;
}

/* Names for the values of one scope (FX names each graph on its own):
 * its placeholders in signature order, then its nodes. */
static void name_scope(const sg__graph *g, namer *N, const by_scope *B, uint32_t scope)
{
    const sg__scope *sc = &g->scopes[scope];
    for (uint32_t k = 0; k < sc->nphs; k++)
        name_value(N, g->nodes[sc->phs[k]].out, base_name(g, &g->nodes[sc->phs[k]]));
    for (uint32_t j = B->start[scope]; j < B->start[scope + 1]; j++) {
        const sg__gnode *n = &g->nodes[B->nodes[j]];
        if (n->out == SG_NOVAL || n->kind == SG_N_PLACEHOLDER)
            continue;
        name_value(N, n->out, n->kind == SG_N_COND ? "cond" : base_name(g, n));
        const sg__gval *v = &g->vals[n->out];
        for (uint32_t k = 0; v->kind == SG_V_LIST && k < v->u.list.n; k++) { /* FX: getitem */
            uint32_t e = g->ids[v->u.list.off + k];
            name_value(N, e, "getitem");
        }
    }
}

/* The qualified name of a scope: its enclosing subgraphs' names first
 * ("cond_false_1.cond_true_0", as FX names nested modules). */
static void put_qualified(const sg__graph *g, sg__buf *b, uint32_t scope)
{
    uint32_t p = g->scopes[scope].parent;
    if (p != SG_NOVAL && p != 0) {
        put_qualified(g, b, p);
        sg__buf_puts(b, ".");
    }
    sg__buf_puts(b, g->scopes[scope].name);
}

/* One scope: its forward (a class of its own for a subgraph). */
static bool print_scope(const sg__graph *g, sg__buf *b, namer *N, const by_scope *B, uint32_t scope)
{
    namer_reset(N);
    name_scope(g, N, B, scope);
    const char *ind = scope ? "        " : "    ";
    if (scope) {
        sg__buf_puts(b, "\nclass ");
        put_qualified(g, b, scope);
        sg__buf_puts(b, "(torch.nn.Module):\n    ");
    }
    bool ok = true;
    sg__buf_puts(b, "def forward(self");
    const sg__scope *sc = &g->scopes[scope];
    for (uint32_t k = 0; k < sc->nphs && ok; k++) {
        uint32_t v = g->nodes[sc->phs[k]].out;
        sg__buf_printf(b, ", %s: \"", N->name[v]);
        ok = put_type(g, b, v);
        sg__buf_puts(b, "\"");
    }
    sg__buf_puts(b, "):\n");
    for (uint32_t j = B->start[scope]; j < B->start[scope + 1] && ok; j++)
        ok = put_node(g, N, b, &g->nodes[B->nodes[j]], ind);
    return ok;
}

sg_status sg__graph_print(const sg__graph *g, char **out)
{
    *out = NULL;
    sg__buf b = {.ctx = g->ctx};
    namer N = {0};
    by_scope B = {0};
    bool ok = naming_init(g, &N, &B);
    for (uint32_t s = 0; s < g->nscopes && ok; s++)
        ok = print_scope(g, &b, &N, &B, s);
    namer_free(&N);
    by_scope_free(&B);
    if (!ok) {
        sg__buf_free(&b);
        return sg_ctx_last_error(g->ctx) ? sg_ctx_last_error(g->ctx) : sg__nomem(g->ctx);
    }
    *out = sg__buf_take(&b);
    return *out ? SG_OK : sg__nomem(g->ctx);
}

/* The calls of scope whose keep[i] is set (keep NULL: all of them). */
static sg_status ops_of(const sg__graph *g, uint32_t scope, const uint8_t *keep, char **out)
{
    sg_ctx *ctx = g->ctx;
    sg__buf b = {.ctx = ctx};
    sg__buf_puts(&b, "");
    for (uint32_t i = 0; i < g->nnodes; i++) {
        if (g->nodes[i].scope != scope || (g->nodes[i].kind != SG_N_CALL && g->nodes[i].kind != SG_N_COND) ||
            (keep && !keep[i]))
            continue;
        char name[2 * SG_SCHEMA_NAME] = "cond";
        if (g->nodes[i].kind == SG_N_CALL)
            sg__schema_full_name(g->nodes[i].schema, name);
        sg__buf_printf(&b, "%s%s", b.n ? " " : "", name);
    }
    *out = sg__buf_take(&b);
    return *out ? SG_OK : sg__nomem(g->ctx);
}

sg_status sg__graph_scope_ops(const sg__graph *g, uint32_t scope, char **out)
{
    return ops_of(g, scope, NULL, out);
}

sg_status sg__graph_ops(const sg__graph *g, char **out)
{
    return ops_of(g, 0, NULL, out);
}

sg_status sg__graph_ops_kept(const sg__graph *g, const uint8_t *keep, char **out)
{
    return ops_of(g, 0, keep, out);
}

sg_status sg__graph_scope_placeholders(const sg__graph *g, uint32_t scope, char **out)
{
    namer N = {0};
    by_scope B = {0};
    if (!naming_init(g, &N, &B))
        return SG_ENOMEM;
    name_scope(g, &N, &B, scope);
    by_scope_free(&B);
    sg__buf b = {.ctx = g->ctx};
    sg__buf_puts(&b, "");
    const sg__scope *sc = &g->scopes[scope];
    for (uint32_t k = 0; k < sc->nphs; k++)
        sg__buf_printf(&b, "%s%s", k ? ", " : "", N.name[g->nodes[sc->phs[k]].out]);
    namer_free(&N);
    *out = sg__buf_take(&b);
    return *out ? SG_OK : sg__nomem(g->ctx);
}

/* ---- Graphviz ---- */

/* Value v's node in the DOT text: the node that gives it (its list's, for
 * an element). */
static void dot_edge(const sg__graph *g, sg__buf *b, uint32_t v, uint32_t to)
{
    if (v < g->nvals && g->vals[v].node != SG_NOVAL)
        sg__buf_printf(b, "  n%u -> n%u;\n", (unsigned)g->vals[v].node, (unsigned)to);
}

static void name_all(const sg__graph *g, namer *N, const by_scope *B)
{
    for (uint32_t s = 0; s < g->nscopes; s++)
        name_scope(g, N, B, s);
}

sg_status sg__graph_dot(const sg__graph *g, char **out)
{
    sg_ctx *ctx = g->ctx;
    *out = NULL;
    namer N = {0};
    by_scope B = {0};
    if (!naming_init(g, &N, &B))
        return SG_ENOMEM;
    name_all(g, &N, &B);
    sg__buf b = {.ctx = ctx};
    bool ok = true;
    sg__buf_puts(&b, "digraph G {\n  node [shape=box, fontname=monospace];\n");
    for (uint32_t sc = 0; sc < g->nscopes && ok; sc++) {
    if (sc) { /* a subgraph: a cluster */
        sg__buf_printf(&b, "  subgraph cluster_%u {\n  label=\"", (unsigned)sc);
        put_qualified(g, &b, sc);
        sg__buf_puts(&b, "\";\n");
    }
    for (uint32_t j = B.start[sc]; j < B.start[sc + 1] && ok; j++) {
        uint32_t i = B.nodes[j];
        const sg__gnode *n = &g->nodes[i];
        sg__buf_printf(&b, "  n%u [label=\"", (unsigned)i);
        switch ((sg__nkind)n->kind) {
        case SG_N_COND: {
            const sg__garg *a = &g->args[n->args];
            sg__buf_printf(&b, "cond\\n%s\", shape=hexagon];\n", N.name[n->out]);
            for (int k = 1; k <= 2; k++) /* to each branch's output */
                sg__buf_printf(&b, "  n%u -> n%u [style=dashed];\n", (unsigned)g->scopes[a[k].u.v].output,
                               (unsigned)i);
            break;
        }
        case SG_N_FUNCTION: {
            const sg__garg *a = &g->args[n->args];
            sg__buf_puts(&b, "autograd_function\", shape=hexagon];\n");
            sg__buf_printf(&b, "  n%u -> n%u [style=dashed];\n", (unsigned)g->scopes[a[0].u.v].output, (unsigned)i);
            break;
        }
        case SG_N_PLACEHOLDER:
            sg__buf_printf(&b, "%s: ", N.name[n->out]);
            ok = put_type(g, &b, n->out);
            sg__buf_puts(&b, "\", shape=ellipse];\n");
            break;
        case SG_N_CALL:
            sg__buf_printf(&b, "%s%s%s", n->schema->name, n->schema->overload[0] ? "." : "", n->schema->overload);
            if (n->out != SG_NOVAL) {
                sg__buf_printf(&b, "\\n%s: ", N.name[n->out]);
                ok = put_type(g, &b, n->out);
            }
            sg__buf_puts(&b, "\"];\n");
            break;
        case SG_N_ASSERT:
            sg__buf_puts(&b, "torch._check(");
            ok = put_cond(g, &b, n->cond);
            sg__buf_puts(&b, ")\", shape=diamond];\n");
            break;
        case SG_N_OUTPUT:
            sg__buf_puts(&b, "output\", shape=ellipse];\n");
            break;
        }
        for (uint32_t k = 0; k < n->nargs && ok; k++) {
            const sg__garg *a = &g->args[n->args + k];
            if (a->kind == SG_A_VALUE)
                dot_edge(g, &b, a->u.v, i);
            for (uint32_t j = 0; a->kind == SG_A_VALUES && j < a->u.list.n; j++)
                dot_edge(g, &b, g->ids[a->u.list.off + j], i);
        }
    }
    if (sc)
        sg__buf_puts(&b, "  }\n");
    }
    sg__buf_puts(&b, "}\n");
    namer_free(&N);
    by_scope_free(&B);
    if (!ok) {
        sg__buf_free(&b);
        return sg_ctx_last_error(g->ctx) ? sg_ctx_last_error(g->ctx) : sg__nomem(g->ctx);
    }
    *out = sg__buf_take(&b);
    return *out ? SG_OK : sg__nomem(g->ctx);
}
