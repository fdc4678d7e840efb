/* torch.cond over two traced branches (hop.h): the branches' inputs merged
 * into one signature, their outputs merged into the cond node's (PyTorch's
 * _merge_graph_inputs of torch/_dynamo/variables/higher_order_ops.py and
 * _merge_output of torch/_higher_order_ops/cond.py), and the refusal of a
 * branch that writes into its inputs (with grad enabled) or returns an
 * alias of one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "graph/tracer_private.h"
#include "hop/hop_private.h"
#include "shapeguard/reason.h"

/* ---- aliasing ---- */

/* Does argument a of node n write into (or, of an output node, return an
 * alias of) one of scope sc's placeholders? That placeholder's name, or NULL.
 * storages: the storage of each tensor placeholder -> 1 + its index in phs. */
static const char *aliased_input(const sg__graph *g, const sg__scope *sc, const sg__idmap *storages,
                                 const sg__gnode *n, uint32_t k)
{
    const sg__garg *a = &g->args[n->args + k];
    bool written = n->kind == SG_N_CALL && ((n->schema->written >> k) & 1);
    if (a->kind != SG_A_VALUE || (!written && n->kind != SG_N_OUTPUT) || g->vals[a->u.v].kind != SG_V_TENSOR)
        return NULL;
    size_t *p = sg__idmap_find(storages, g->vals[a->u.v].u.t.storage + 1);
    return p ? g->vals[g->nodes[sc->phs[*p - 1]].out].name : NULL;
}

/* Does scope b write into, or give back an alias of, one of its inputs?
 * (What PyTorch's check_aliasing_and_input_mutation finds through version
 * counters and storages: a write is an argument an operator's schema marks
 * as written; an alias is an output viewing an input's storage.) Linear in
 * b's writing calls, outputs and placeholders: the graph keeps the writing
 * calls of each subgraph (sc->writes), and the placeholders' storages are
 * looked up in a map (the first placeholder of a storage names it). */
static sg_status check_aliasing(sg_tracer *t, uint32_t b, bool grad)
{
    const sg__graph *g = t->g;
    const sg__scope *sc = &g->scopes[b];
    sg__idmap storages;
    if (!sg__idmap_init(t->ctx, &storages, sc->nphs))
        return sg__nomem(t->ctx);
    for (uint32_t p = 0; p < sc->nphs; p++) {
        const sg__gval *ph = &g->vals[g->nodes[sc->phs[p]].out];
        if (ph->kind == SG_V_TENSOR && !sg__idmap_find(&storages, ph->u.t.storage + 1) &&
            !sg__idmap_put(&storages, ph->u.t.storage + 1, p + 1)) {
            sg__idmap_free(&storages);
            return sg__nomem(t->ctx);
        }
    }
    const sg__gnode *n = NULL;
    const char *name = NULL;
    for (uint32_t w = 0; w <= sc->nwrites && !name; w++) { /* the writing calls in order, then the output */
        uint32_t i = w < sc->nwrites ? sc->writes[w] : sc->output;
        if (i >= g->nnodes)
            continue;
        n = &g->nodes[i];
        if (n->scope != b || (w < sc->nwrites && (n->kind != SG_N_CALL || !n->schema->written)))
            continue; /* not what was recorded there (a restored graph reused the index) */
        for (uint32_t k = 0; k < n->nargs && !name; k++)
            name = aliased_input(g, sc, &storages, n, k);
    }
    sg__idmap_free(&storages);
    if (!name)
        return SG_OK;
    const char *what = n->kind == SG_N_OUTPUT ? "returns an alias of" : "mutates";
    if (!grad && n->kind != SG_N_OUTPUT) /* PyTorch's supports_input_mutation: the aot pipeline functionalizes it */
        return SG_OK;
    if (!grad)
        return sg__err(t->ctx, SG_EUNSUPPORTED, "unsupported: torch.cond: branch %s %s its input %s "
                                                "under no_grad (not functionalized yet)",
                       sc->name, what, name);
    return sg__err(t->ctx, SG_EALIASING, "torch.cond: branch %s %s its input %s; a branch may not "
                                         "mutate or alias its inputs while grad is enabled",
                   sc->name, what, name);
}

/* ---- inputs ---- */

static sg_status set_name(sg__graph *g, uint32_t v, const char *name)
{
    if (!name || !name[0] || !strcmp(g->vals[v].name, name))
        return SG_OK;
    size_t len = strlen(name) + 1;
    char *copy = sg__malloc(g->ctx, len);
    if (!copy)
        return sg__nomem(g->ctx);
    memcpy(copy, name, len);
    if (g->vals[v].name && g->vals[v].name[0])
        sg_free((char *)g->vals[v].name);
    g->vals[v].name = copy;
    g->name_bytes += len;
    return SG_OK;
}

/* A placeholder of scope b standing for the other branch's placeholder ph
 * (which b does not use): the same kind and layout, its name. */
static sg_status dummy(sg_tracer *t, uint32_t b, uint32_t ph, uint32_t outer, uint32_t *node)
{
    sg__graph *g = t->g;
    uint32_t saved = g->cur, v;
    g->cur = b;
    const sg__gval x = g->vals[g->nodes[ph].out];
    sg_status s;
    if (x.kind == SG_V_TENSOR) {
        const sg_expr *meta[2 * SG_MAX_DIMS];
        for (uint32_t d = 0; d < 2u * x.u.t.ndim; d++)
            meta[d] = g->exprs[x.u.t.dims + d];
        s = sg__graph_tensor(g, &v, (sg_dtype)x.u.t.dtype, x.u.t.ndim, meta, meta + x.u.t.ndim, x.u.t.offset,
                             SG_NOVAL);
        if (!s)
            sg__graph_set_storage_numel(g, g->vals[v].u.t.storage, sg__graph_storage_numel(g, x.u.t.storage));
    } else {
        s = sg__graph_value(g, &v, (sg__vkind)x.kind, x.u.e, 0);
    }
    if (!s)
        s = sg__graph_placeholder_of(g, v, x.name, outer);
    g->cur = saved;
    if (s)
        return s;
    /* a symbol it carries is bound in b from now on (the symbols of a tensor come before it) */
    if (x.kind == SG_V_SYMINT && sg_expr_op(x.u.e) == SG_OP_SYM &&
        !sg__idmap_put(&g->scopes[b].bound, x.u.e->id, v + 1))
        return sg__nomem(t->ctx);
    *node = (uint32_t)g->nnodes - 1;
    return SG_OK;
}

/* Both branches take the same inputs: the true branch's, then those only
 * the false branch takes (each branch given placeholders for what only the
 * other takes); a shared input takes the true branch's name. *ops (freed
 * with sg_free) is what the cond passes, one outer value per input. */
static sg_status merge_inputs(sg_tracer *t, uint32_t tb, uint32_t fb, uint32_t **ops, size_t *nops)
{
    sg__graph *g = t->g;
    sg__scope *T = &g->scopes[tb], *F = &g->scopes[fb];
    uint32_t nt = T->nphs, nf = F->nphs;
    size_t cap = (size_t)nt + nf;
    uint32_t *outer = sg__malloc(t->ctx, (cap + 1) * sizeof *outer);
    uint32_t *tph = sg__malloc(t->ctx, (cap + 1) * sizeof *tph), *fph = sg__malloc(t->ctx, (cap + 1) * sizeof *fph);
    sg__idmap fin = {0}; /* 1 + outer value -> 1 + its first input in F */
    bool *used = sg__calloc(t->ctx, (size_t)nf + 1, sizeof *used); /* the false inputs matched */
    sg_status s = outer && tph && fph && used && sg__idmap_init(t->ctx, &fin, cap) ? SG_OK : sg__nomem(t->ctx);
    for (uint32_t j = 0; j < nf && !s; j++)
        if (!sg__idmap_find(&fin, F->outer[j] + 1) && !sg__idmap_put(&fin, F->outer[j] + 1, (size_t)j + 1))
            s = sg__nomem(t->ctx);
    size_t n = 0;
    for (uint32_t i = 0; i < nt && !s; i++, n++) { /* the true branch's inputs, in its order */
        outer[n] = T->outer[i];
        tph[n] = T->phs[i];
        size_t *j = sg__idmap_find(&fin, T->outer[i] + 1);
        fph[n] = SG_NOVAL;
        /* each false input matches once: an outer value taken twice (an operand, and the same value
           closed over) matches its first unused occurrence */
        for (uint32_t q = j ? (uint32_t)(*j - 1) : nf; q < nf && fph[n] == SG_NOVAL; q++)
            if (F->outer[q] == T->outer[i] && !used[q]) {
                used[q] = true;
                fph[n] = F->phs[q];
            }
        if (fph[n] == SG_NOVAL) {
            s = dummy(t, fb, T->phs[i], T->outer[i], &fph[n]);
            F = &g->scopes[fb];
            T = &g->scopes[tb];
        } else {
            s = set_name(g, g->nodes[fph[n]].out, g->vals[g->nodes[T->phs[i]].out].name);
        }
    }
    for (uint32_t j = 0; j < nf && !s; j++) { /* then what only the false branch takes */
        if (used[j])
            continue;
        outer[n] = F->outer[j];
        fph[n] = F->phs[j];
        s = dummy(t, tb, F->phs[j], F->outer[j], &tph[n]);
        F = &g->scopes[fb];
        T = &g->scopes[tb];
        n++;
    }
    /* the signatures, reordered */
    for (int k = 0; k < 2 && !s; k++) {
        sg__scope *sc = &g->scopes[k ? fb : tb];
        const uint32_t *phs = k ? fph : tph;
        if (n > sc->capphs) {
            size_t c1 = sc->capphs, c2 = sc->capphs;
            if (!sg__grow(t->ctx, (void **)&sc->phs, &c1, n, sizeof *sc->phs) ||
                !sg__grow(t->ctx, (void **)&sc->outer, &c2, n, sizeof *sc->outer)) {
                s = sg__nomem(t->ctx);
                break;
            }
            sc->capphs = (uint32_t)(c1 < c2 ? c1 : c2);
        }
        memcpy(sc->phs, phs, n * sizeof *phs);
        memcpy(sc->outer, outer, n * sizeof *outer);
        sc->nphs = (uint32_t)n;
    }
    sg_free(tph);
    sg_free(fph);
    sg_free(used);
    sg__idmap_free(&fin);
    if (s) {
        sg_free(outer);
        return s;
    }
    *ops = outer;
    *nops = n;
    return SG_OK;
}

/* ---- outputs ---- */

static bool has_unbacked(sg_ctx *ctx, const sg_expr *e, sg_status *st)
{
    const sg_expr **syms = NULL;
    size_t n = 0;
    if ((*st = sg_expr_free_symbols(ctx, &syms, &n, e)))
        return false;
    bool u = false;
    for (size_t i = 0; i < n && !u; i++)
        u = sg_expr_sym_name(syms[i])[0] == 'u';
    sg_free(syms);
    return u;
}

typedef struct merge {
    sg_tracer *t;
    const sg_expr *fresh[64]; /* the unbacked symbols the cond binds */
    size_t nfresh;
    unsigned line;
    bool rg;     /* an operand requires grad (with grad enabled) */
    bool tensor; /* the predicate is a tensor: PyTorch's CondAutogradOp then makes every floating output
                    require grad where rg; a bool over sizes is eager torch.cond's own call of the branch
                    (an output requires grad where the branch's does) */
    sg_truth taken; /* a bool over sizes the guards decide: the branch every call takes (SG_TRUE: the
                       true one), whose outputs' flags are the outputs'; SG_UNKNOWN: either's */
} merge;

/* A fresh unbacked symbol ranging over both a's and b's ranges; a size is
 * size-like (as PyTorch checks a merged size is one), an int is not. */
static sg_status fresh(merge *M, const sg_expr *a, const sg_expr *b, int size_like, const sg_expr **out)
{
    sg_tracer *t = M->t;
    if (M->nfresh == sizeof M->fresh / sizeof *M->fresh)
        return sg__err(t->ctx, SG_ELIMIT, "torch.cond: more than 64 merged sizes");
    sg_interval ra, rb, r;
    sg_facts *f = sg_env_facts(t->env);
    sg_status s = sg_facts_range(f, &ra, a);
    if (!s)
        s = sg_facts_range(f, &rb, b);
    if (s)
        return s;
    const sg_expr *lo[2] = {ra.lo, rb.lo}, *hi[2] = {ra.hi, rb.hi};
    r.lo = ra.lo && rb.lo ? sg__minmax(t->ctx, SG_OP_MIN, 2, lo) : NULL;
    r.hi = ra.hi && rb.hi ? sg__minmax(t->ctx, SG_OP_MAX, 2, hi) : NULL;
    char path[48];
    snprintf(path, sizeof path, "cond output %zu", M->nfresh);
    if ((s = sg_env_create_unbacked(t->env, out, NULL, size_like, &r)) || (s = sg_env_bind_unbacked(t->env, *out, path)))
        return s;
    M->fresh[M->nfresh++] = *out;
    return SG_OK;
}

/* Dimensions of a layout from the smallest stride to the largest, ties
 * broken by descending index (inductor's get_fill_order, asking the
 * environment size-obliviously). */
static sg_status fill_order(merge *M, const sg_expr *const *st, size_t n, size_t *order)
{
    for (size_t i = 0; i < n; i++)
        order[i] = n - 1 - i; /* descending index first: a stable sort keeps it among equals */
    for (size_t i = 1; i < n; i++) { /* insertion sort by stride */
        size_t x = order[i], j = i;
        while (j > 0) {
            int less = 0;
            if (st[x] != st[order[j - 1]]) {
                const sg_expr *q;
                sg_status s = sg_expr_rel(M->t->ctx, &q, SG_REL_LT, st[x], st[order[j - 1]]);
                if (!s)
                    s = sg_env_guard_size_oblivious(M->t->env, &less, q, "torch.cond");
                if (s)
                    return s;
            }
            if (!less)
                break;
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
    return SG_OK;
}

static sg_status shape_error(sg_tracer *t, size_t i, const char *what)
{
    return sg__err(t->ctx, SG_ESHAPE, "torch.cond: when merging the branches' output %zu: %s", i, what);
}

/* The strides of the merged output (PyTorch's _bound_stride): both
 * branches order their dimensions by stride the same way; from the
 * smallest, a stride is 0, 1, or the product of the stride and size of the
 * dimension before it in that order, which the merged layout takes over. */
/* A small map from expressions to expressions (at most two entries a
 * dimension: stride times size, and times Max(1, size)). */
typedef struct stride_map {
    const sg_expr *key[2 * SG_MAX_DIMS], *val[2 * SG_MAX_DIMS];
    size_t n;
} stride_map;

/* The value of key in m: an entry of key itself, else (proved) of an
 * expression the environment proves equal to it (a stride folded under
 * facts recorded after the sizes it is made of: 2 for Max(2*(s1 % 2), 1)
 * once Max(2*(s1 % 2), 1) >= 2 is a guard), asking nothing that records
 * one. */
static sg_status map_get(sg_env *env, const stride_map *m, const sg_expr *key, bool proved, const sg_expr **out)
{
    *out = NULL;
    for (size_t i = 0; i < m->n; i++)
        if (m->key[i] == key) {
            *out = m->val[i];
            return SG_OK;
        }
    for (size_t i = m->n; proved && i-- > 0;) { /* (the latest entry first, as a later one replaces an earlier) */
        const sg_expr *eq;
        sg_truth t;
        sg_status s = sg_expr_rel(sg_env_ctx(env), &eq, SG_REL_EQ, m->key[i], key);
        if (!s)
            s = sg_env_known(env, &t, eq);
        if (s)
            return s;
        if (t == SG_TRUE) {
            *out = m->val[i];
            return SG_OK;
        }
    }
    return SG_OK;
}

static void map_put(stride_map *m, const sg_expr *key, const sg_expr *val)
{
    size_t i = 0;
    while (i < m->n && m->key[i] != key)
        i++;
    if (i == 2 * SG_MAX_DIMS)
        return;
    m->key[i] = key;
    m->val[i] = val;
    if (i == m->n)
        m->n++;
}

/* Whether a stride is 1, as PyTorch's a_val == 1 asks of a SymInt: provably,
 * or at the hint with the guard recorded (a stride (s0 + 3) // 6 of a size-1
 * dimension); one with unbacked symbols is not. */
static sg_status is_one(merge *M, const sg_expr *e, int *out)
{
    *out = e == M->t->ctx->one;
    if (*out || sg_expr_is_int(e))
        return SG_OK;
    const sg_expr *q;
    sg_status s = sg_expr_rel(M->t->ctx, &q, SG_REL_EQ, e, M->t->ctx->one);
    return s ? s : sg_env_guard_or(M->t->env, out, q, 0, "torch.cond");
}

static sg_status merge_strides(merge *M, size_t i, const sg_expr *const *as, const sg_expr *const *bs,
                               const sg_expr *const *asz, const sg_expr *const *bsz, const sg_expr *const *msz,
                               size_t n, const sg_expr **out)
{
    sg_ctx *ctx = M->t->ctx;
    size_t oa[SG_MAX_DIMS], ob[SG_MAX_DIMS];
    int one;
    sg_status s = fill_order(M, as, n, oa);
    if (!s)
        s = fill_order(M, bs, n, ob);
    if (s)
        return s;
    for (size_t r = 0; r < n; r++)
        if (oa[r] != ob[r])
            return shape_error(M->t, i, "the branches order the strides of their output differently (call "
                                        "contiguous() on it)");
    /* per branch, a map from a stride that the next dimension may have (this one's stride times its
       size) to the merged stride that stands for it: a later entry for the same key replaces the
       earlier, as _bound_stride's dicts do */
    stride_map A = {0}, B = {0};
    for (size_t r = 0; r < n; r++) {
        size_t d = oa[r];
        if (as[d] == ctx->zero || bs[d] == ctx->zero) {
            if (as[d] != bs[d])
                return shape_error(M->t, i, "a stride 0 in one branch only");
            out[d] = ctx->zero;
            continue;
        }
        /* (a stride the map has as it is, else 1, else one the environment proves equal to a key) */
        const sg_expr *ea, *eb;
        if ((s = map_get(M->t->env, &A, as[d], false, &ea)))
            return s;
        if (!ea && ((s = is_one(M, as[d], &one)) || one)) {
            if (s || (s = is_one(M, bs[d], &one)))
                return s;
            if (!one)
                return shape_error(M->t, i, "a stride 1 in one branch only");
            out[d] = ctx->one;
        } else {
            if (!ea && (s = map_get(M->t->env, &A, as[d], true, &ea)))
                return s;
            if (!ea)
                return shape_error(M->t, i, "a stride that is no product of sizes (a slice that is not dense: "
                                            "call contiguous() on it)");
            if ((s = map_get(M->t->env, &B, bs[d], true, &eb)))
                return s;
            if (eb != ea)
                return shape_error(M->t, i, "the strides of the branches do not follow the same sizes");
            out[d] = ea;
        }
        const sg_expr *next = sg__mul(ctx, out[d], msz[d]), *ka = sg__mul(ctx, as[d], asz[d]),
                      *kb = sg__mul(ctx, bs[d], bsz[d]);
        if (!next || !ka || !kb)
            return sg_ctx_last_error(ctx);
        map_put(&A, ka, next);
        map_put(&B, kb, next);
        /* contiguous strides of a size that may be 0 are products of Max(1, size) (torch.ones(n % 8, 2)) */
        const sg_expr *pa[2] = {ctx->one, asz[d]}, *pb[2] = {ctx->one, bsz[d]}, *pm[2] = {ctx->one, msz[d]};
        const sg_expr *ma = sg__minmax(ctx, SG_OP_MAX, 2, pa), *mb = sg__minmax(ctx, SG_OP_MAX, 2, pb),
                      *mm = sg__minmax(ctx, SG_OP_MAX, 2, pm);
        const sg_expr *ka1 = ma ? sg__mul(ctx, as[d], ma) : NULL, *kb1 = mb ? sg__mul(ctx, bs[d], mb) : NULL,
                      *next1 = mm ? sg__mul(ctx, out[d], mm) : NULL;
        if (!ka1 || !kb1 || !next1)
            return sg_ctx_last_error(ctx);
        if (ka1 != ka)
            map_put(&A, ka1, next1);
        if (kb1 != kb)
            map_put(&B, kb1, next1);
    }
    return SG_OK;
}

/* Two ints: a where both are the same expression without unbacked
 * symbols, else fresh. */
static sg_status merge_int(merge *M, const sg_expr *a, const sg_expr *b, const sg_expr **out)
{
    sg_status s = sg_env_replace(M->t->env, &a, a);
    if (s || (s = sg_env_replace(M->t->env, &b, b)))
        return s;
    *out = a;
    if (a != b || has_unbacked(M->t->ctx, a, &s) || has_unbacked(M->t->ctx, b, &s))
        if (!s)
            s = fresh(M, a, b, 0, out);
    return s;
}

/* The layout of output i: sizes equal and free of unbacked symbols kept,
 * else fresh; then the strides (hop_private.h). */
static sg_status merge_layout(merge *M, size_t i, size_t n, const sg_expr *const *asz0, const sg_expr *const *ast0,
                              const sg_expr *const *bsz0, const sg_expr *const *bst0, const sg_expr **sizes,
                              const sg_expr **strides)
{
    /* (compared as PyTorch's SymIntEqByExpr does: the expressions with the environment's replacements,
       so a size a guard made a constant in one branch equals that constant in the other) */
    const sg_expr *asz[SG_MAX_DIMS], *ast[SG_MAX_DIMS], *bsz[SG_MAX_DIMS], *bst[SG_MAX_DIMS];
    const sg_expr *const *from[4] = {asz0, ast0, bsz0, bst0};
    const sg_expr **to[4] = {asz, ast, bsz, bst};
    sg_status s = SG_OK;
    for (int k = 0; k < 4 && !s; k++)
        for (size_t d = 0; d < n && !s; d++)
            s = sg_env_replace(M->t->env, &to[k][d], from[k][d]);
    for (size_t d = 0; d < n && !s; d++) { /* equal and free of unbacked symbols: kept; else fresh */
        bool keep = !has_unbacked(M->t->ctx, asz[d], &s) && !s && !has_unbacked(M->t->ctx, bsz[d], &s) && !s;
        if (keep && asz[d] != bsz[d]) {
            /* (or equal as the environment proves: a size one branch's rule folded under a guard,
               (s0 + 3) // 6 to 1 where 3 <= s0 <= 8, which PyTorch's rules keep as they are) */
            const sg_expr *eq;
            sg_truth k = SG_UNKNOWN;
            if (!(s = sg_expr_rel(M->t->ctx, &eq, SG_REL_EQ, asz[d], bsz[d])))
                s = sg_env_known(M->t->env, &k, eq);
            keep = k == SG_TRUE;
        }
        if (!s)
            sizes[d] = asz[d];
        if (!s && !keep)
            s = fresh(M, asz[d], bsz[d], 1, &sizes[d]);
    }
    if (!s)
        s = merge_strides(M, i, ast, bst, asz, bsz, sizes, n, strides);
    return s;
}

sg_status sg__hop_merge_layout(sg_tracer *t, size_t n, const sg_expr *const *asizes, const sg_expr *const *astrides,
                               const sg_expr *const *bsizes, const sg_expr *const *bstrides, const sg_expr **sizes,
                               const sg_expr **strides)
{
    if (!t)
        return SG_EINVAL;
    if (n > SG_MAX_DIMS || (n && (!asizes || !astrides || !bsizes || !bstrides || !sizes || !strides)))
        return sg__err(t->ctx, SG_EINVAL, "sg__hop_merge_layout: a NULL argument or more than %d dimensions",
                       SG_MAX_DIMS);
    for (size_t d = 0; d < n; d++)
        if (!asizes[d] || !astrides[d] || !bsizes[d] || !bstrides[d])
            return sg__err(t->ctx, SG_EINVAL, "sg__hop_merge_layout: a NULL size or stride");
    merge M = {.t = t};
    return merge_layout(&M, 0, n, asizes, astrides, bsizes, bstrides, sizes, strides);
}

sg_status sg__hop_merge_int(sg_tracer *t, const sg_expr *a, const sg_expr *b, const sg_expr **out)
{
    if (!t)
        return SG_EINVAL;
    if (!a || !b || !out)
        return sg__err(t->ctx, SG_EINVAL, "sg__hop_merge_int: NULL argument");
    merge M = {.t = t};
    return merge_int(&M, a, b, out);
}

/* Output i: a of the true branch, b of the false one, as a value of the
 * enclosing scope. */
static sg_status merge_one(merge *M, size_t i, uint32_t a, uint32_t b, uint32_t *out)
{
    sg_tracer *t = M->t;
    sg__graph *g = t->g;
    const sg__gval *va = &g->vals[a], *vb = &g->vals[b];
    sg_status s = SG_OK;
    if (va->kind != vb->kind)
        return shape_error(t, i, "a tensor in one branch, not in the other");
    if (va->kind == SG_V_SYMINT) {
        const sg_expr *e;
        s = merge_int(M, va->u.e, vb->u.e, &e);
        return s ? s : sg__graph_value(g, out, SG_V_SYMINT, e, 0);
    }
    if (va->kind != SG_V_TENSOR)
        return sg__err(t->ctx, SG_EUNSUPPORTED, "unsupported: torch.cond output %zu is neither a tensor nor an int", i);
    const sg__fake_tensor A = va->u.t, B = vb->u.t;
    if (A.dtype != B.dtype)
        return shape_error(t, i, "expected the same dtype");
    if (A.ndim != B.ndim)
        return shape_error(t, i, "expected the same number of dimensions");
    if (A.offset != B.offset)
        return shape_error(t, i, "expected the same storage offset");
    size_t n = A.ndim;
    const sg_expr *asz[SG_MAX_DIMS], *bsz[SG_MAX_DIMS], *ast[SG_MAX_DIMS], *bst[SG_MAX_DIMS];
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
    for (size_t d = 0; d < n; d++) {
        asz[d] = g->exprs[A.dims + d];
        bsz[d] = g->exprs[B.dims + d];
        ast[d] = g->exprs[A.dims + n + d];
        bst[d] = g->exprs[B.dims + n + d];
    }
    s = merge_layout(M, i, n, asz, ast, bsz, bst, sizes, strides);
    if (!s)
        s = sg__graph_tensor(g, out, (sg_dtype)A.dtype, n, sizes, strides, A.offset, SG_NOVAL);
    if (!s) {
        g->vals[*out].u.t.requires_grad =
            M->rg && (M->tensor                ? A.dtype == SG_FLOAT64 || A.dtype == SG_FLOAT32
                      : M->taken == SG_TRUE  ? A.requires_grad
                      : M->taken == SG_FALSE ? B.requires_grad
                                             : A.requires_grad || B.requires_grad);
        g->vals[*out].u.t.leaf = !g->vals[*out].u.t.requires_grad;
    }
    return s;
}

static const sg__gnode *output_of(const sg__graph *g, uint32_t b)
{
    return &g->nodes[g->scopes[b].output];
}

sg_status sg_tracer_cond(sg_tracer *t, sg_value *out, const sg_arg *pred, uint32_t tb, uint32_t fb, unsigned line)
{
    if (!t)
        return SG_EINVAL;
    sg__graph *g = t->g;
    if (!out || !pred)
        return sg__err(t->ctx, SG_EINVAL, "sg_tracer_cond: NULL argument");
    *out = SG_NOVAL;
    uint32_t cur = g->cur;
    for (int k = 0; k < 2; k++) {
        uint32_t b = k ? fb : tb;
        if (b >= g->nscopes || !b || g->scopes[b].parent != cur || g->scopes[b].output == SG_NOVAL)
            return sg__err(t->ctx, SG_EINVAL, "sg_tracer_cond: a branch that is no closed subgraph of the current "
                                              "graph");
        for (uint32_t i = g->scopes[b].output + 1; i < g->nnodes; i++) /* each branch belongs to one cond (after it) */
            if (g->nodes[i].kind == SG_N_COND && g->nodes[i].scope == cur &&
                (g->args[g->nodes[i].args + 1].u.v == b || g->args[g->nodes[i].args + 2].u.v == b))
                return sg__err(t->ctx, SG_EINVAL, "sg_tracer_cond: %s is the branch of another cond",
                               g->scopes[b].name);
    }
    /* the predicate: a one-element bool tensor, or a bool over sizes (symbolic: no guard) */
    sg__garg p = {0};
    sg_status s = SG_OK;
    if (pred->kind == SG_ARG_VALUE && pred->u.v < g->nvals && g->vals[pred->u.v].kind == SG_V_TENSOR) {
        p.kind = SG_A_VALUE;
        s = sg__tracer_lift(t, cur, pred->u.v, NULL, &p.u.v);
        if (!s && g->vals[p.u.v].u.t.dtype != SG_BOOL)
            s = sg__err(t->ctx, SG_ETYPE, "torch.cond: the predicate must be a boolean tensor or a bool");
    } else if (pred->kind == SG_ARG_BOOL || (pred->kind == SG_ARG_INT && pred->u.e &&
                                             sg_expr_sort(pred->u.e) == SG_SORT_BOOL)) {
        p.kind = SG_A_EXPR;
        p.u.e = pred->kind == SG_ARG_BOOL ? (pred->u.b ? t->ctx->t : t->ctx->f) : pred->u.e;
        s = sg__tracer_lift_expr(t, cur, &p.u.e);
    } else {
        s = sg__err(t->ctx, SG_ETYPE, "torch.cond: the predicate must be a boolean tensor or a bool");
    }
    if (s)
        return s;
    if (output_of(g, tb)->nargs != output_of(g, fb)->nargs)
        return sg__err(t->ctx, SG_ESHAPE, "torch.cond: the branches give %u and %u outputs",
                       (unsigned)output_of(g, tb)->nargs, (unsigned)output_of(g, fb)->nargs);
    for (int k = 0; k < 2 && !s; k++)
        s = check_aliasing(t, k ? fb : tb, !t->no_grad);
    uint32_t *ops = NULL;
    size_t nops = 0;
    if (!s)
        s = merge_inputs(t, tb, fb, &ops, &nops);
    merge M = {.t = t, .line = line, .tensor = p.kind == SG_A_VALUE, .taken = SG_UNKNOWN};
    if (!s && p.kind == SG_A_EXPR)
        s = sg_env_known(t->env, &M.taken, p.u.e);
    for (size_t k = 0; k < nops && !s && !t->no_grad; k++)
        M.rg |= g->vals[ops[k]].kind == SG_V_TENSOR && sg__graph_rg_now(g, ops[k]); /* (an input a write through an alias gave a history: written_rg) */
    uint32_t nout = output_of(g, tb)->nargs;
    uint32_t *outs = sg__malloc(t->ctx, (nout + 1) * sizeof *outs);
    if (!s && !outs)
        s = sg__nomem(t->ctx);
    for (uint32_t i = 0; i < nout && !s; i++)
        s = merge_one(&M, i, g->args[output_of(g, tb)->args + i].u.v, g->args[output_of(g, fb)->args + i].u.v,
                      &outs[i]);
    uint32_t list = SG_NOVAL;
    if (!s)
        s = sg__graph_list(g, &list, outs, nout);
    if (!s)
        s = sg__graph_cond(g, &p, tb, fb, ops, nops, list, line);
    if (!s && t->no_grad) /* (autograd sees nothing of it) */
        g->nodes[g->nnodes - 1].flags |= SG_NODE_NO_GRAD;
    if (!s && M.nfresh)
        s = sg__graph_bind(g, (uint32_t)g->nnodes - 1, M.fresh, M.nfresh);
    if (!s && M.nfresh)
        s = sg__tracer_note_binds(t, SG_NOVAL, M.fresh, M.nfresh);
    sg_free(ops);
    sg_free(outs);
    if (!s) {
        t->called = true;
        *out = list;
    }
    return s;
}
