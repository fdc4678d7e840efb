/* The shape rules' results remembered (record.h, "rule memo").
 *
 * Every pass that records a graph again (functionalization, the joint's
 * forward, the derivative formulas, the partitioned backward and tail)
 * runs the same rules over arguments of the same few layouts many times: a
 * long program repeats a handful of layouts, and each pass records it
 * again. What a rule of the families below makes is a function of its
 * schema, of its bound arguments (constants as they are; for a tensor,
 * its dtype, sizes, strides, offset, grad flags, whether it has a _base,
 * its storage's size and which other arguments share its storage), of the
 * graph's flags and of what the environment knows. So the result is
 * remembered per graph with the environment's mark (sg_env_mark_take) and
 * used again only while the mark is the same: no guard, assertion, fact,
 * symbol or rollback since, so the rule would ask the same questions, get
 * the same answers and record nothing. A result is kept only where running
 * the rule changed nothing in the environment and added nothing to the
 * graph but its one tensor value (no node, no unbacked symbol, no runtime
 * assert, no other storage's size changed), on a new storage or on an
 * argument's, its _base none, an argument or an argument's _base; what is
 * kept is relative to the arguments (which storage, which _base), so a hit
 * makes in this graph the very value the rule would make.
 *
 * The families: pointwise, view, reduce, matmul, like and unsafe_view
 * rules, over schemas that write no argument (in-place and out= calls
 * change their arguments' storages and versions: always asked). Not in an
 * eager graph (constant sizes: nothing to fold, every layout its own).
 * Keys of at most SG__RMEMO_KEY_WORDS words (about three tensors of rank 4);
 * results of rank up to MAX_RANK; a table of SLOTS, two places a key (the
 * second taken when the first holds another). */
#include <string.h>

#include "expr/expr_private.h"
#include "graph/record.h"

#define SLOTS 256
#define MAX_RANK 4

typedef struct {
    uint64_t hash; /* 0: empty */
    sg_env_mark mark;
    uint8_t nkey;
    uint8_t dtype, ndim, storage; /* storage: NEW_STORAGE, or the schema position of the argument whose */
    uint8_t base_kind, base_arg;  /* BASE_*: none, the argument itself, or its _base */
    uint32_t run;                 /* where the graph's exprs held dims last (sg__graph_tensor_numel) */
    bool requires_grad, leaf, custom_view, written_rg;
    const sg_expr *dims[2 * MAX_RANK]; /* sizes, then strides */
    const sg_expr *offset, *numel;     /* numel: a new storage's size */
    uint64_t key[SG__RMEMO_KEY_WORDS];
} entry;

enum { NEW_STORAGE = 0xff };
enum { BASE_NONE, BASE_ARG, BASE_ARGS_BASE };

struct sg__rule_memo {
    uint16_t slot[SLOTS]; /* 1 + the entry a place holds, or 0 */
    entry *e;             /* the entries, in the order they were made (at most SLOTS) */
    size_t n, cap;
    bool second;          /* where both places of a key hold others: the second is taken next */
};

void sg__rmemo_free(struct sg__rule_memo *m)
{
    if (m)
        sg_free(m->e);
    sg_free(m);
}

/* The entry place i holds, or NULL. */
static entry *at(const struct sg__rule_memo *m, size_t i)
{
    return m->slot[i % SLOTS] ? &m->e[m->slot[i % SLOTS] - 1] : NULL;
}

bool sg__rmemo_rule(const sg__schema *s, sg__meta_fn r)
{
    if (s->written || (s->flags & (SG_OPF_MUTATES | SG_OPF_INPLACE | SG_OPF_OUT)))
        return false;
    return r == sg__meta_pointwise || r == sg__meta_view || r == sg__meta_reduce || r == sg__meta_matmul ||
           r == sg__meta_like || r == sg__meta_unsafe_view;
}

static inline uint64_t pw(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

/* A word of the key, into the hash as it goes. */
#define PUT(x)                                                                                                     \
    do {                                                                                                           \
        uint64_t x_ = (x);                                                                                         \
        w[nk++] = x_;                                                                                              \
        h = (h ^ x_) * 0x100000001b3ULL;                                                                           \
    } while (0)

bool sg__rmemo_key_of(const sg__graph *g, const sg__schema *s, uint8_t flags, uint16_t rg, const sg__garg *a,
                      const bool *given, size_t n, sg__rmemo_key *k)
{
    if (!s->memo || g->eager || s->nargs > SG_SCHEMA_ARGS)
        return false;
    uint64_t *w = k->key, h = 0x9e3779b97f4a7c15ULL;
    size_t nk = 0;
    uint32_t sto[SG_SCHEMA_ARGS]; /* the storages of the tensor arguments so far, by position */
    PUT(pw(s));
    PUT((uint64_t)flags | (uint64_t)rg << 8 | (uint64_t)g->general_rules << 24 | (uint64_t)g->lint_sizes << 25);
    for (int i = 0; i < s->nargs; i++) {
        sto[i] = SG_NOVAL;
        k->tensor[i] = false;
        if (nk + 2 > SG__RMEMO_KEY_WORDS)
            return false;
        if (given ? !given[i] : (size_t)i >= n) { /* its default, which the schema decides */
            PUT(1);
            continue;
        }
        const sg__garg *x = &a[i];
        uint64_t tag = 2 | (uint64_t)x->kind << 2;
        switch ((sg__akind)x->kind) {
        case SG_A_VALUE: {
            if (x->u.v >= g->nvals || g->vals[x->u.v].node == SG_NOVAL)
                return false;
            const sg__gval *v = &g->vals[x->u.v];
            tag |= (uint64_t)v->kind << 8;
            if (v->kind == SG_V_SYMINT || v->kind == SG_V_SYMBOOL) {
                PUT(tag);
                PUT(pw(v->u.e));
                break;
            }
            if (v->kind == SG_V_FLOAT || v->kind == SG_V_NONE) {
                uint64_t bits = 0;
                if (v->kind == SG_V_FLOAT)
                    memcpy(&bits, &v->u.f, sizeof bits);
                PUT(tag);
                PUT(bits);
                break;
            }
            if (v->kind != SG_V_TENSOR)
                return false;
            const sg__fake_tensor *t = &v->u.t;
            uint32_t nd2 = 2u * t->ndim;
            if (nk + 3 + nd2 > SG__RMEMO_KEY_WORDS)
                return false;
            int same = 0x1f; /* the first argument before it on its storage */
            for (int j = 0; j < i && same == 0x1f; j++)
                if (sto[j] == t->storage)
                    same = j;
            sto[i] = t->storage;
            tag |= (uint64_t)t->dtype << 12 | (uint64_t)t->ndim << 16 | (uint64_t)same << 24 |
                   (uint64_t)t->requires_grad << 29 | (uint64_t)t->leaf << 30 | (uint64_t)t->custom_view << 31 |
                   (uint64_t)t->written_rg << 32 | (uint64_t)(t->base == SG_NOVAL) << 33;
            PUT(tag);
            const sg_expr *const *e = g->exprs + t->dims;
            for (uint32_t d = 0; d < nd2; d += 2) { /* (sizes and strides: two at a time) */
                PUT(pw(e[d]));
                PUT(pw(e[d + 1]));
            }
            PUT(pw(t->offset));
            k->numel[i] = g->storage_numel[t->storage];
            k->tensor[i] = true;
            PUT(pw(k->numel[i]));
            break;
        }
        case SG_A_EXPR:
            if (!x->u.e)
                return false;
            PUT(tag);
            PUT(pw(x->u.e));
            break;
        case SG_A_FLOAT: {
            uint64_t bits;
            memcpy(&bits, &x->u.f, sizeof bits);
            PUT(tag);
            PUT(bits);
            break;
        }
        case SG_A_BOOL:
            PUT(tag | (uint64_t)x->u.b << 8);
            break;
        case SG_A_NONE:
            PUT(tag);
            break;
        case SG_A_DTYPE:
        case SG_A_MEMFMT:
            PUT(tag | (uint64_t)x->u.dtype << 8);
            break;
        case SG_A_EXPRS:
            if (nk + 1 + x->u.list.n > SG__RMEMO_KEY_WORDS || (size_t)x->u.list.off + x->u.list.n > g->nexprs)
                return false;
            PUT(tag | (uint64_t)x->u.list.n << 8);
            for (uint32_t j = 0; j < x->u.list.n; j++)
                PUT(pw(g->exprs[x->u.list.off + j]));
            break;
        default: /* lists of values, subgraphs */
            return false;
        }
    }
    k->hash = h | 1;
    k->nkey = (uint8_t)nk;
    sg_env_mark_take(g->env, &k->mark);
    return true;
}

#undef PUT

/* The first of k's two places (the hash's top bits, which every word of the key reaches). */
static size_t place(uint64_t hash)
{
    return (size_t)(hash >> 56) % SLOTS;
}

static bool is(const entry *e, const sg__rmemo_key *k)
{
    return e && e->hash == k->hash && e->nkey == k->nkey && !memcmp(e->key, k->key, k->nkey * sizeof *k->key);
}

sg_status sg__rmemo_use(sg__graph *g, const sg__rmemo_key *k, const sg__garg *a, uint32_t *out)
{
    *out = SG_NOVAL;
    if (!g->rule_memo)
        return SG_OK;
    size_t i = place(k->hash);
    entry *e = at(g->rule_memo, i);
    if (!is(e, k) && !is(e = at(g->rule_memo, i + 1), k))
        return SG_OK;
    if (!sg_env_mark_same(&e->mark, &k->mark))
        return SG_OK;
    uint32_t storage = e->storage == NEW_STORAGE ? SG_NOVAL : g->vals[a[e->storage].u.v].u.t.storage;
    uint32_t base = e->base_kind == BASE_NONE  ? SG_NOVAL
                    : e->base_kind == BASE_ARG ? a[e->base_arg].u.v
                                               : g->vals[a[e->base_arg].u.v].u.t.base;
    uint32_t v;
    CHAIN(sg__graph_tensor_numel(g, &v, (sg_dtype)e->dtype, e->ndim, e->dims, e->dims + e->ndim, e->offset, storage,
                                 e->numel, &e->run));
    sg__fake_tensor *t = &g->vals[v].u.t;
    t->base = base;
    t->requires_grad = e->requires_grad;
    t->leaf = e->leaf;
    t->custom_view = e->custom_view;
    t->written_rg = e->written_rg;
    *out = v;
    return SG_OK;
}

void sg__rmemo_keep(sg__graph *g, const sg__rmemo_key *k, const sg__garg *a, const sg__graph_mark *before,
                    uint32_t v)
{
    sg_env_mark now;
    sg_env_mark_take(g->env, &now);
    if (!sg_env_mark_same(&now, &k->mark) || v != before->nvals || g->nvals != before->nvals + 1 ||
        g->nnodes != before->nnodes || g->vals[v].kind != SG_V_TENSOR)
        return;
    const sg__fake_tensor *t = &g->vals[v].u.t;
    if (t->ndim > MAX_RANK)
        return;
    const sg__schema *s = (const sg__schema *)(uintptr_t)k->key[0];
    entry n;
    n.storage = NEW_STORAGE;
    n.base_kind = BASE_NONE;
    unsigned bases = 0; /* the arguments that name its _base: exactly one, or it is not kept */
    for (int i = 0; i < s->nargs; i++) {
        if (!k->tensor[i])
            continue;
        const sg__fake_tensor *x = &g->vals[a[i].u.v].u.t;
        if (g->storage_numel[x->storage] != k->numel[i]) /* the rule resized it */
            return;
        if (x->storage == t->storage && n.storage == NEW_STORAGE)
            n.storage = (uint8_t)i;
        if (t->base != SG_NOVAL && a[i].u.v == t->base)
            n.base_kind = BASE_ARG, n.base_arg = (uint8_t)i, bases++;
        if (t->base != SG_NOVAL && x->base == t->base)
            n.base_kind = BASE_ARGS_BASE, n.base_arg = (uint8_t)i, bases++;
    }
    if (t->base != SG_NOVAL && bases != 1) /* a _base the arguments do not name, or name twice */
        return;
    if (n.storage == NEW_STORAGE && (t->storage != before->nstorages || g->nstorages != before->nstorages + 1))
        return; /* a storage of the graph's that no argument views */
    if (n.storage != NEW_STORAGE && g->nstorages != before->nstorages)
        return;
    if (!g->rule_memo && !(g->rule_memo = sg__calloc(g->ctx, 1, sizeof *g->rule_memo)))
        return; /* a cache: without room, asked each time */
    n.hash = k->hash;
    n.mark = k->mark;
    n.nkey = k->nkey;
    n.dtype = t->dtype;
    n.ndim = t->ndim;
    n.requires_grad = t->requires_grad;
    n.leaf = t->leaf;
    n.custom_view = t->custom_view;
    n.written_rg = t->written_rg;
    if (t->ndim) /* (a 0-d result: the graph may hold no exprs yet, and memcpy takes no NULL) */
        memcpy(n.dims, g->exprs + t->dims, 2 * (size_t)t->ndim * sizeof *n.dims);
    n.offset = t->offset;
    n.run = t->dims;
    n.numel = g->storage_numel[t->storage];
    memcpy(n.key, k->key, k->nkey * sizeof *k->key);
    struct sg__rule_memo *m = g->rule_memo;
    size_t i = place(k->hash), p = i % SLOTS;
    entry *e = at(m, i), *f = at(m, i + 1);
    if (e && !is(e, k)) { /* the first place holds another key */
        if (f && !is(f, k)) { /* and the second: each in turn (its entry taken over) */
            e = m->second ? f : e;
            m->second = !m->second;
        } else {
            e = f, p = (i + 1) % SLOTS;
        }
    }
    if (!e) { /* a new entry */
        if (!sg__grow(g->ctx, (void **)&m->e, &m->cap, m->n + 1, sizeof *m->e))
            return; /* a cache: without room, asked each time */
        e = &m->e[m->n++];
        m->slot[p] = (uint16_t)m->n;
    }
    memcpy(e, &n, offsetof(entry, key) + k->nkey * sizeof *k->key);
}
