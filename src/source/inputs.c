/* The inputs of a trace: fakification of tensors (sizes, strides with
 * INFER_STRIDE, storage offset), subclasses through flatten/unflatten, the
 * recorded initial state and re-fakification through the source-to-symbol
 * cache, and constraint violations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "shapeguard/print.h"
#include "source/source_private.h"

/* Subclasses nest; deeper trees than this are refused (a flatten that
 * returns its own object would otherwise recurse forever). */
#define MAX_DEPTH 16

/* A copy of an example value: the recorded initial state. */
typedef struct snap {
    size_t ndim;
    int64_t *sizes, *strides;
    int64_t offset;
    const sg_subclass_kind *kind;
    void *meta;
    size_t metalen;
    size_t ninner;
    char **names;
    struct snap **inner;
} snap;

/* A copy of a context. */
typedef struct csnap {
    size_t ndim;
    sg_dim_spec *sizes, *strides; /* NULL: defaults */
    size_t ninner;
    char **names;
    struct csnap **inner;
} csnap;

/* A fake and what it was made from. */
typedef struct fnode {
    sg_fake pub;
    const sg_source *src;
    const sg_dim_spec *specs; /* the size policies that applied (ndim entries) */
} fnode;

typedef struct inrec {
    const sg_source *src;
    snap *init;      /* tensors: the recorded initial state */
    csnap *ctx;      /* tensors: the recorded context (NULL: defaults) */
    fnode *fake;     /* tensors */
    const sg_expr *value; /* integers */
} inrec;

struct sg_inputs {
    sg_env *env;
    sg_ctx *ctx;
    sg_symcache *cache;
    inrec *v;
    size_t n, cap;
    void **blocks; /* every allocation of fakes, freed with in */
    size_t nblocks, capblocks;
    /* the name of a source interned as a symbol -> its index in v (records
     * only grow); unindexed after a put failed: sg_inputs_find scans */
    sg__idmap byname;
    bool unindexed;
};

/* ---- memory ------------------------------------------------------------ */

static void *pool_alloc(sg_inputs *in, size_t size)
{
    sg_ctx *ctx = in->ctx;
    if (in->nblocks == in->capblocks) {
        size_t cap = in->capblocks ? 2 * in->capblocks : 64;
        void **nb = sg__realloc(ctx, in->blocks, cap * sizeof *nb);
        if (!nb)
            return NULL;
        in->blocks = nb;
        in->capblocks = cap;
    }
    void *p = sg__calloc(ctx, 1, size ? size : 1);
    if (p)
        in->blocks[in->nblocks++] = p;
    return p;
}

/* Free the blocks allocated after the first n (a failed fakification). */
static void pool_truncate(sg_inputs *in, size_t n)
{
    while (in->nblocks > n)
        sg_free(in->blocks[--in->nblocks]);
}

static void snap_free(snap *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->ninner; i++) {
        sg_free(s->names[i]);
        snap_free(s->inner[i]);
    }
    sg_free(s->names);
    sg_free(s->inner);
    sg_free(s->sizes);
    sg_free(s->strides);
    sg_free(s->meta);
    sg_free(s);
}

static void csnap_free(csnap *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->ninner; i++) {
        sg_free(c->names[i]);
        csnap_free(c->inner[i]);
    }
    sg_free(c->names);
    sg_free(c->inner);
    sg_free(c->sizes);
    sg_free(c->strides);
    sg_free(c);
}

/* ---- recording the initial state ------------------------------------------ */

bool sg__contiguous_strides(size_t nd, const int64_t *sizes, int64_t *st)
{
    int64_t acc = 1;
    for (size_t i = nd; i-- > 0;) {
        st[i] = acc;
        if (__builtin_mul_overflow(acc, sizes[i] > 1 ? sizes[i] : 1, &acc))
            return i == 0; /* only the product past the first dimension may overflow */
    }
    return true;
}

static sg_status snap_value(sg_ctx *ctx, snap **out, const sg_tensor_value *v, const char *where, int depth)
{
    *out = NULL;
    if (depth > MAX_DEPTH)
        return sg__err(ctx, SG_EINVAL, "%s: subclasses nest more than %d deep", where, MAX_DEPTH);
    if (v->ndim > SG_MAX_DIMS)
        return sg__err(ctx, SG_EINVAL, "%s: rank %zu is above %d", where, v->ndim, SG_MAX_DIMS);
    if (v->ndim && !v->sizes)
        return sg__err(ctx, SG_EINVAL, "%s: no sizes", where);
    for (size_t i = 0; i < v->ndim; i++) {
        if (v->sizes[i] < 0)
            return sg__err(ctx, SG_EINVAL, "%s: size %zu is negative (%lld)", where, i, (long long)v->sizes[i]);
        if (v->strides && v->strides[i] < 0)
            return sg__err(ctx, SG_EINVAL, "%s: stride %zu is negative (%lld)", where, i, (long long)v->strides[i]);
    }
    if (v->offset < 0)
        return sg__err(ctx, SG_EINVAL, "%s: the storage offset is negative (%lld)", where, (long long)v->offset);
    snap *s = sg__calloc(ctx, 1, sizeof *s);
    if (!s)
        return sg__nomem(ctx);
    s->ndim = v->ndim;
    s->offset = v->offset;
    s->kind = v->kind;
    s->sizes = sg__malloc(ctx, (v->ndim + 1) * sizeof *s->sizes);
    s->strides = sg__malloc(ctx, (v->ndim + 1) * sizeof *s->strides);
    if (!s->sizes || !s->strides) {
        snap_free(s);
        return sg__nomem(ctx);
    }
    if (v->ndim)
        memcpy(s->sizes, v->sizes, v->ndim * sizeof *s->sizes);
    if (v->strides) {
        if (v->ndim)
            memcpy(s->strides, v->strides, v->ndim * sizeof *s->strides);
    } else if (!sg__contiguous_strides(v->ndim, s->sizes, s->strides)) {
        snap_free(s);
        return sg__err(ctx, SG_EINVAL, "%s: the contiguous strides overflow int64", where);
    }
    if (!v->kind) {
        *out = s;
        return SG_OK;
    }
    if (!v->kind->flatten || !v->kind->unflatten) {
        snap_free(s);
        return sg__err(ctx, SG_EINVAL, "%s: subclass kind %s has no flatten or unflatten", where,
                       v->kind->name ? v->kind->name : "?");
    }
    sg_flat fl = {0};
    sg_ctx_reset_error(ctx);
    sg_status st = v->kind->flatten(v->kind->user, v->obj, &fl);
    if (st != SG_OK || (fl.n && (!fl.names || !fl.inner)) || (fl.metalen && !fl.meta)) {
        snap_free(s);
        if (st != SG_OK && sg_ctx_last_error(ctx) == st) {
            char why[512];
            snprintf(why, sizeof why, "%s", sg_ctx_last_error_msg(ctx));
            return sg__err(ctx, SG_EINVAL, "%s: flatten of %s failed: %s", where, v->kind->name, why);
        }
        return sg__err(ctx, SG_EINVAL, "%s: flatten of %s failed", where, v->kind->name);
    }
    s->meta = sg__malloc(ctx, fl.metalen ? fl.metalen : 1);
    s->names = sg__calloc(ctx, fl.n ? fl.n : 1, sizeof *s->names);
    s->inner = sg__calloc(ctx, fl.n ? fl.n : 1, sizeof *s->inner);
    if (!s->meta || !s->names || !s->inner) {
        snap_free(s);
        return sg__nomem(ctx);
    }
    if (fl.metalen)
        memcpy(s->meta, fl.meta, fl.metalen);
    s->metalen = fl.metalen;
    /* copy the names first: the embedder's memory may not outlive the next call */
    for (size_t i = 0; i < fl.n; i++, s->ninner++)
        if (!fl.names[i] || !(s->names[i] = sg__strdup(ctx, fl.names[i]))) {
            snap_free(s);
            return fl.names[i] ? sg__nomem(ctx) : sg__err(ctx, SG_EINVAL, "%s: flatten gave a NULL name", where);
        }
    for (size_t i = 0; i < fl.n; i++) {
        char w[256];
        snprintf(w, sizeof w, "%s.%s", where, s->names[i]);
        st = snap_value(ctx, &s->inner[i], &fl.inner[i], w, depth + 1);
        if (st) {
            snap_free(s);
            return st;
        }
    }
    *out = s;
    return SG_OK;
}

static sg_status snap_context(sg_ctx *ctx, csnap **out, const sg_tensor_context *c, size_t ndim, int depth)
{
    *out = NULL;
    if (!c)
        return SG_OK;
    if (depth > MAX_DEPTH)
        return sg__err(ctx, SG_EINVAL, "sg_inputs_tensor: contexts nest more than %d deep", MAX_DEPTH);
    csnap *s = sg__calloc(ctx, 1, sizeof *s);
    if (!s)
        return sg__nomem(ctx);
    s->ndim = ndim;
    bool ok = true;
    if (c->sizes && (ok = (s->sizes = sg__malloc(ctx, (ndim + 1) * sizeof *s->sizes)) != NULL))
        memcpy(s->sizes, c->sizes, ndim * sizeof *s->sizes);
    if (ok && c->strides && (ok = (s->strides = sg__malloc(ctx, (ndim + 1) * sizeof *s->strides)) != NULL))
        memcpy(s->strides, c->strides, ndim * sizeof *s->strides);
    if (ok && c->ninner) {
        ok = (s->names = sg__calloc(ctx, c->ninner, sizeof *s->names)) && (s->inner = sg__calloc(ctx, c->ninner, sizeof *s->inner));
        for (size_t i = 0; ok && i < c->ninner; i++, s->ninner++) {
            if (!c->inner_names || !c->inner_names[i] || !c->inner) {
                csnap_free(s);
                return sg__err(ctx, SG_EINVAL, "sg_inputs_tensor: inner context %zu has no name", i);
            }
            ok = (s->names[i] = sg__strdup(ctx, c->inner_names[i])) != NULL;
            /* the inner rank is checked when the inner tensor is fakified */
            sg_status st = ok ? snap_context(ctx, &s->inner[i], c->inner[i], SG_MAX_DIMS, depth + 1) : SG_OK;
            if (st) {
                csnap_free(s);
                return st;
            }
        }
    }
    if (!ok) {
        csnap_free(s);
        return sg__nomem(ctx);
    }
    *out = s;
    return SG_OK;
}

/* ---- fakification --------------------------------------------------------- */

static const sg_dim_spec duck_spec = {SG_DIM_DUCK, NULL, NULL};
static const sg_dim_spec infer_spec = {SG_DIM_INFER_STRIDE, NULL, NULL};

/* The expression of a property source: the cache's when it has one (then
 * the environment knows the source already, or learns it now), else made by
 * make_fn. New records go to pend, put in the cache once all went well. */
typedef struct pending {
    const char **names;
    const sg_expr **vals;
    size_t n, cap;
} pending;

static sg_status pend_add(sg_inputs *in, pending *p, const char *name, const sg_expr *e)
{
    sg_ctx *ctx = in->ctx;
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        const char **nn = sg__realloc(ctx, p->names, cap * sizeof *nn);
        if (nn)
            p->names = nn;
        const sg_expr **nv = nn ? sg__realloc(ctx, p->vals, cap * sizeof *nv) : NULL;
        if (!nv)
            return sg__nomem(in->ctx);
        p->vals = nv;
        p->cap = cap;
    }
    p->names[p->n] = name;
    p->vals[p->n++] = e;
    return SG_OK;
}

typedef struct fk {
    sg_inputs *in;
    pending pend;
    bool refake; /* every property must come from the cache */
} fk;

/* The cached expression of source s, or NULL. When found, the environment
 * gets the source as an input if it does not have it yet. */
static sg_status cached(fk *F, const sg_source *s, const sg_expr **out)
{
    *out = F->in->cache ? sg_symcache_get(F->in->cache, F->in->env, sg_source_name(s)) : NULL;
    if (!*out) {
        if (F->refake)
            return sg__err(F->in->ctx, SG_EINVAL, "sg_inputs_refakify: %s is not in the source-to-symbol cache",
                           sg_source_name(s));
        return SG_OK;
    }
    sg_status st = sg_env_add_input(F->in->env, sg_source_name(s), *out, SG_INPUT_PROPERTY);
    if (st == SG_EINVAL) /* the environment has the source already */
        sg_ctx_reset_error(F->in->ctx), st = SG_OK;
    return st;
}

static sg_status backed(fk *F, const sg_source *s, int64_t hint, const sg_dim_spec *spec, const sg_expr **out)
{
    sg_ctx *ctx = F->in->ctx;
    const sg_expr *h;
    sg_status st = cached(F, s, out);
    if (st || *out)
        return st;
    sg_interval r = {spec->lo, spec->hi};
    /* a user range (a constraint) makes the size DYNAMIC, whatever the policy
     * said: PyTorch's create_symbol does so, so that a constrained dim is
     * neither duck-sized nor static */
    sg_dim_dynamic dyn = (spec->lo || spec->hi) && (spec->dyn == SG_DIM_DUCK || spec->dyn == SG_DIM_STATIC)
                             ? SG_DIM_DYNAMIC
                             : spec->dyn;
    if ((st = sg_expr_int(ctx, &h, hint)) ||
        (st = sg_env_create_backed(F->in->env, out, sg_source_name(s), h, dyn,
                                   SG_INPUT_SIZE | SG_INPUT_PROPERTY, spec->lo || spec->hi ? &r : NULL)))
        return st;
    return pend_add(F->in, &F->pend, sg_source_name(s), *out);
}

/* An input bound to an expression already made (an inferred stride). */
static sg_status bound(fk *F, const sg_source *s, const sg_expr *e, const sg_expr **out)
{
    sg_status st = cached(F, s, out);
    if (st || *out)
        return st;
    if ((st = sg_env_add_input(F->in->env, sg_source_name(s), e, SG_INPUT_PROPERTY)))
        return st;
    *out = e;
    return pend_add(F->in, &F->pend, sg_source_name(s), e);
}

static bool spec_ok(const sg_dim_spec *s, bool stride)
{
    return s->dyn == SG_DIM_DUCK || s->dyn == SG_DIM_DYNAMIC || s->dyn == SG_DIM_STATIC ||
           (stride ? s->dyn == SG_DIM_INFER_STRIDE : s->dyn == SG_DIM_SIZE_LIKE_UNBACKED);
}

/* The strides (PyTorch's _compute_symbolic_stride): in order of increasing
 * stride (the last dimension first among equals), a stride of 0 or 1 that
 * is not the contiguous stride of its dimension is that constant; an
 * INFER_STRIDE stride equal to size*stride of a dimension already done is
 * that product; any other becomes a symbol (INFER_STRIDE: STATIC when every
 * size is static, else DUCK). */
static sg_status strides(fk *F, const sg_source *src, const snap *v, fnode *f, const csnap *c, const sg_expr **st)
{
    sg_ctx *ctx = F->in->ctx;
    size_t nd = v->ndim, order[SG_MAX_DIMS];
    int64_t cand_val[SG_MAX_DIMS];
    const sg_expr *cand_expr[SG_MAX_DIMS];
    size_t ncand = 0;
    bool sizes_static = true;
    for (size_t i = 0; i < nd; i++) {
        order[i] = i;
        sizes_static = sizes_static && f->pub.sizes[i]->op == SG_OP_INT;
    }
    /* insertion sort by (stride, -index) */
    for (size_t i = 1; i < nd; i++)
        for (size_t j = i; j > 0; j--) {
            size_t a = order[j - 1], b = order[j];
            if (v->strides[a] < v->strides[b] || (v->strides[a] == v->strides[b] && a > b))
                break;
            order[j - 1] = b;
            order[j] = a;
        }
    for (size_t k = 0; k < nd; k++) {
        size_t i = order[k];
        int64_t val = v->strides[i];
        const sg_dim_spec *spec = c && c->strides ? &c->strides[i] : &infer_spec;
        if (!spec_ok(spec, true))
            return sg__err(ctx, SG_EINVAL, "sg_inputs_tensor: policy %d does not apply to a stride", (int)spec->dyn);
        const sg_source *s;
        sg_status e = sg_source_property(ctx, &s, src, SG_SOURCE_STRIDE, i);
        if (e)
            return e;
        int64_t next;
        bool contig = i + 1 < nd && !__builtin_mul_overflow(v->sizes[i + 1], v->strides[i + 1], &next) &&
                      val == next;
        /* the candidate made last wins, as a later entry of PyTorch's dict
         * `candidates` replaces an earlier one of the same value */
        size_t j = ncand;
        while (j > 0 && cand_val[j - 1] != val)
            j--;
        j = j ? j - 1 : ncand;
        const sg_expr *out;
        if ((val == 0 || val == 1) && !contig) {
            if ((e = sg_expr_int(ctx, &out, val)) || (e = bound(F, s, out, &out)))
                return e;
        } else if (spec->dyn == SG_DIM_INFER_STRIDE && j < ncand) {
            if ((e = bound(F, s, cand_expr[j], &out)))
                return e;
        } else {
            sg_dim_spec sp = *spec;
            if (sp.dyn == SG_DIM_INFER_STRIDE)
                sp.dyn = sizes_static ? SG_DIM_STATIC : SG_DIM_DUCK;
            if ((e = backed(F, s, val, &sp, &out)))
                return e;
        }
        st[i] = out;
        int64_t prod;
        if (ncand < SG_MAX_DIMS && !__builtin_mul_overflow(v->sizes[i], val, &prod)) {
            const sg_expr *pe;
            if ((e = sg_expr_mul(ctx, &pe, f->pub.sizes[i], out)))
                return e;
            cand_val[ncand] = prod;
            cand_expr[ncand++] = pe;
        }
    }
    return SG_OK;
}

static bool same_sizes(const snap *a, const snap *b)
{
    return a->ndim == b->ndim && !memcmp(a->sizes, b->sizes, a->ndim * sizeof *a->sizes);
}

static sg_status fakify(fk *F, const sg_source *src, const snap *v, const csnap *c, const sg_dim_spec *carry,
                        fnode **out);

/* Fakify the inner tensors, unflatten, and tie the rebuilt outer metadata to
 * the outer fake. */
static sg_status subclass(fk *F, const sg_source *src, const snap *v, const csnap *c, fnode *f)
{
    sg_inputs *in = F->in;
    sg_ctx *ctx = in->ctx;
    const sg_subclass_kind *k = v->kind;
    const sg_fake **inner = pool_alloc(in, (v->ninner + 1) * sizeof *inner);
    if (!inner)
        return sg__nomem(ctx);
    f->pub.inner = inner;
    f->pub.names = (const char *const *)v->names;
    f->pub.ninner = v->ninner;
    f->pub.kind = k;
    f->pub.meta = v->meta;
    f->pub.metalen = v->metalen;
    for (size_t i = 0; i < v->ninner; i++) {
        const sg_source *s;
        sg_status st = sg_source_attr(ctx, &s, src, v->names[i]);
        if (st)
            return st;
        const csnap *ic = NULL;
        for (size_t j = 0; c && j < c->ninner && !ic; j++)
            if (!strcmp(c->names[j], v->names[i]))
                ic = c->inner[j];
        /* mark_dynamic on the outer tensor carries over to inner tensors of its sizes */
        const sg_dim_spec *carry = !ic && c && c->sizes && same_sizes(v, v->inner[i]) ? c->sizes : NULL;
        fnode *fi;
        if ((st = fakify(F, s, v->inner[i], ic, carry, &fi)))
            return st;
        inner[i] = &fi->pub;
    }
    const sg_expr *sz[SG_MAX_DIMS], *stv[SG_MAX_DIMS];
    size_t nd = SIZE_MAX;
    const char *kn = k->name ? k->name : "?";
    sg_ctx_reset_error(ctx);
    sg_status st = k->unflatten(k->user, ctx, inner, v->ninner, v->meta, v->metalen, &f->pub, &nd, sz, stv);
    if (st != SG_OK) {
        if (sg_ctx_last_error(ctx) == st) {
            char why[512];
            snprintf(why, sizeof why, "%s", sg_ctx_last_error_msg(ctx));
            return sg__err(ctx, SG_EINVAL, "%s: unflatten of %s failed: %s", sg_source_name(src), kn, why);
        }
        return sg__err(ctx, SG_EINVAL, "%s: unflatten of %s failed (%s)", sg_source_name(src), kn,
                       sg_status_kind(st));
    }
    if (nd != v->ndim)
        return sg__err(ctx, SG_EINVAL, "%s: unflatten of %s gave rank %zu, but the tensor has rank %zu",
                       sg_source_name(src), kn, nd, v->ndim);
    /* rebuilt == outer, as PyTorch asserts after __tensor_unflatten__: a
     * guard or a replacement that ties the outer symbols to the inner ones */
    for (size_t i = 0; i < 2 * nd; i++) {
        const sg_expr *got = i < nd ? sz[i] : stv[i - nd];
        const sg_expr *want = i < nd ? f->pub.sizes[i] : f->pub.strides[i - nd], *eq;
        int holds = 0;
        if (!got)
            return sg__err(ctx, SG_EINVAL, "%s: unflatten of %s gave no %s %zu", sg_source_name(src), kn,
                           i < nd ? "size" : "stride", i % nd);
        if ((st = sg_expr_rel(ctx, &eq, SG_REL_EQ, got, want)))
            return st == SG_ETYPE ? sg__err(ctx, SG_EINVAL, "%s: unflatten of %s gave a boolean",
                                            sg_source_name(src), kn)
                                  : st;
        char prov[512];
        snprintf(prov, sizeof prov, "%s: %s of the unflattened %s", sg_source_name(src), i < nd ? "size" : "stride",
                 kn);
        if ((st = sg_env_evaluate(in->env, &holds, eq, prov)))
            return st;
        if (!holds)
            return sg__err(ctx, SG_EINVAL, "%s: the %s %zu of the unflattened %s is not the outer one",
                           sg_source_name(src), i < nd ? "size" : "stride", i % nd, kn);
    }
    return SG_OK;
}

static sg_status fakify(fk *F, const sg_source *src, const snap *v, const csnap *c, const sg_dim_spec *carry,
                        fnode **out)
{
    sg_inputs *in = F->in;
    sg_ctx *ctx = in->ctx;
    size_t nd = v->ndim;
    fnode *f = pool_alloc(in, sizeof *f);
    const sg_expr **sz = pool_alloc(in, (nd + 1) * sizeof *sz);
    const sg_expr **st = pool_alloc(in, (nd + 1) * sizeof *st);
    sg_dim_spec *specs = pool_alloc(in, (nd + 1) * sizeof *specs);
    if (!f || !sz || !st || !specs)
        return sg__nomem(ctx);
    f->src = src;
    f->specs = specs;
    f->pub.ndim = nd;
    f->pub.sizes = sz;
    f->pub.strides = st;
    if (c && c->ndim != SG_MAX_DIMS && c->ndim != nd)
        return sg__err(ctx, SG_EINVAL, "%s: the context has rank %zu, the tensor %zu", sg_source_name(src), c->ndim, nd);
    sg_status e = SG_OK;
    for (size_t i = 0; i < nd && !e; i++) {
        specs[i] = c && c->sizes ? c->sizes[i] : carry ? carry[i] : duck_spec;
        const sg_source *s;
        if (!spec_ok(&specs[i], false))
            return sg__err(ctx, SG_EINVAL, "%s: policy %d does not apply to a size", sg_source_name(src),
                           (int)specs[i].dyn);
        if (!(e = sg_source_property(ctx, &s, src, SG_SOURCE_SIZE, i)))
            e = backed(F, s, v->sizes[i], &specs[i], &sz[i]);
    }
    if (!e)
        e = strides(F, src, v, f, c, st);
    const sg_source *os;
    static const sg_dim_spec offset_spec = {SG_DIM_DYNAMIC, NULL, NULL};
    if (!e && !(e = sg_source_property(ctx, &os, src, SG_SOURCE_OFFSET, 0)))
        e = backed(F, os, v->offset, &offset_spec, &f->pub.offset);
    if (!e && v->kind)
        e = subclass(F, src, v, c, f);
    if (!e)
        *out = f;
    return e;
}

/* ---- sg_inputs -------------------------------------------------------------- */

sg_status sg_inputs_new(sg_env *env, sg_symcache *cache, sg_inputs **out)
{
    if (!env)
        return SG_EINVAL;
    sg_ctx *ctx = sg_env_ctx(env);
    if (!out)
        return sg__err(ctx, SG_EINVAL, "sg_inputs_new: NULL argument");
    *out = sg__calloc(ctx, 1, sizeof **out);
    if (!*out)
        return sg__nomem(ctx);
    (*out)->env = env;
    (*out)->ctx = ctx;
    (*out)->cache = cache;
    if (!sg__idmap_init(ctx, &(*out)->byname, 16)) {
        sg_free(*out);
        *out = NULL;
        return sg__nomem(ctx);
    }
    return SG_OK;
}

void sg_inputs_free(sg_inputs *in)
{
    if (!in)
        return;
    for (size_t i = 0; i < in->n; i++) {
        snap_free(in->v[i].init);
        csnap_free(in->v[i].ctx);
    }
    pool_truncate(in, 0);
    sg_free(in->blocks);
    sg_free(in->v);
    sg__idmap_free(&in->byname);
    sg_free(in);
}

sg_env *sg_inputs_env(const sg_inputs *in)
{
    return in ? in->env : NULL;
}

/* The key of a source name in byname (the symbol of that name), or NULL
 * (an empty name, or out of memory). */
static const sg_expr *name_key(const sg_inputs *in, const char *name)
{
    const sg_expr *k;
    return *name && sg_expr_sym(in->ctx, &k, name) == SG_OK ? k : NULL;
}

/* Record r as the next input (room was reserved) and index its name. */
static void push_record(sg_inputs *in, inrec r)
{
    const sg_expr *k = name_key(in, sg_source_name(r.src));
    if (!k || !sg__idmap_put(&in->byname, k->id, in->n))
        in->unindexed = true;
    in->v[in->n++] = r;
}

/* Room for one more input (taken before fakifying, so that recording the
 * input cannot fail after the environment changed). */
static sg_status reserve(sg_inputs *in)
{
    sg_ctx *ctx = in->ctx;
    return sg__grow(ctx, (void **)&in->v, &in->cap, in->n + 1, sizeof *in->v) ? SG_OK : sg__nomem(in->ctx);
}

/* Fakify v under c from source src; on failure the environment, the cache
 * and in are as they were. */
static sg_status run_fakify(sg_inputs *in, const sg_source *src, const snap *v, const csnap *c, bool refake,
                            fnode **out)
{
    sg_env_mark m;
    sg_env_mark_take(in->env, &m);
    size_t nblocks = in->nblocks;
    fk F = {in, {0}, refake};
    sg_status s = fakify(&F, src, v, c, NULL, out);
    for (size_t i = 0; i < F.pend.n && in->cache && !s; i++) /* no cache: nothing recorded (source.h) */
        s = sg__symcache_put(in->cache, in->env, F.pend.names[i], F.pend.vals[i]);
    sg_free(F.pend.names);
    sg_free(F.pend.vals);
    if (s) {
        char keep[1024];
        snprintf(keep, sizeof keep, "%s", sg_ctx_last_error_msg(in->ctx));
        if (sg_env_mark_restore(in->env, &m) != SG_OK)
            return sg__err(in->ctx, SG_EINTERNAL, "cannot restore the environment after: %s", keep);
        pool_truncate(in, nblocks);
        return sg__err(in->ctx, s, "%s", keep);
    }
    return SG_OK;
}

static bool is_root(const sg_source *s)
{
    return s && (sg_source_get_kind(s) == SG_SOURCE_LOCAL || sg_source_get_kind(s) == SG_SOURCE_NAMED ||
                 sg_source_get_kind(s) == SG_SOURCE_ATTR);
}

sg_status sg_inputs_tensor(sg_inputs *in, const sg_source *src, const sg_tensor_value *v, const sg_tensor_context *c,
                           const sg_fake **out)
{
    if (!in)
        return SG_EINVAL;
    if (!src || !v || !out)
        return sg__err(in->ctx, SG_EINVAL, "sg_inputs_tensor: NULL argument");
    if (!is_root(src))
        return sg__err(in->ctx, SG_EINVAL, "sg_inputs_tensor: %s is a tensor property, not a tensor",
                       sg_source_name(src));
    if (sg_inputs_find(in, sg_source_name(src)) >= 0)
        return sg__err(in->ctx, SG_EINVAL, "sg_inputs_tensor: %s is an input already", sg_source_name(src));
    inrec r = {src, NULL, NULL, NULL, NULL};
    sg_status s = reserve(in);
    if (!s)
        s = snap_value(in->ctx, &r.init, v, sg_source_name(src), 0);
    if (!s)
        s = snap_context(in->ctx, &r.ctx, c, v->ndim, 0);
    if (!s)
        s = run_fakify(in, src, r.init, r.ctx, false, &r.fake);
    if (s) {
        snap_free(r.init);
        csnap_free(r.ctx);
        return s;
    }
    push_record(in, r);
    *out = &r.fake->pub;
    return SG_OK;
}

sg_status sg_inputs_int(sg_inputs *in, const sg_source *src, const sg_expr *hint, sg_dim_dynamic dyn,
                        unsigned flags, const sg_interval *range, const sg_expr **out)
{
    if (!in)
        return SG_EINVAL;
    if (!src || !hint || !out)
        return sg__err(in->ctx, SG_EINVAL, "sg_inputs_int: NULL argument");
    if (!is_root(src))
        return sg__err(in->ctx, SG_EINVAL, "sg_inputs_int: %s is a tensor property", sg_source_name(src));
    sg_status s = reserve(in);
    if (!s)
        s = sg_env_create_backed(in->env, out, sg_source_name(src), hint, dyn, flags & SG_INPUT_SIZE, range);
    if (s)
        return s;
    push_record(in, (inrec){src, NULL, NULL, NULL, *out});
    return SG_OK;
}

/* 1 if a and b are the same fake trees (the same expressions). */
static bool same_fake(const sg_fake *a, const sg_fake *b)
{
    if (a->ndim != b->ndim || a->offset != b->offset || a->ninner != b->ninner)
        return false;
    for (size_t i = 0; i < a->ndim; i++)
        if (a->sizes[i] != b->sizes[i] || a->strides[i] != b->strides[i])
            return false;
    for (size_t i = 0; i < a->ninner; i++)
        if (!same_fake(a->inner[i], b->inner[i]))
            return false;
    return true;
}

sg_status sg_inputs_refakify(sg_inputs *in, size_t i, const sg_fake **out, int *same)
{
    if (!in)
        return SG_EINVAL;
    if (!out || !same)
        return sg__err(in->ctx, SG_EINVAL, "sg_inputs_refakify: NULL argument");
    if (i >= in->n || !in->v[i].fake)
        return sg__err(in->ctx, SG_EINVAL, "sg_inputs_refakify: input %zu is not a tensor input", i);
    if (!in->cache)
        return sg__err(in->ctx, SG_EINVAL, "sg_inputs_refakify: there is no source-to-symbol cache");
    size_t ng = sg_env_nguards(in->env), na = sg_env_nasserts(in->env);
    fnode *f;
    sg_status s = run_fakify(in, in->v[i].src, in->v[i].init, in->v[i].ctx, true, &f);
    if (s)
        return s;
    *same = same_fake(&f->pub, &in->v[i].fake->pub) && sg_env_nguards(in->env) == ng &&
            sg_env_nasserts(in->env) == na;
    *out = &f->pub;
    return SG_OK;
}

size_t sg_inputs_count(const sg_inputs *in)
{
    return in ? in->n : 0;
}

long sg_inputs_find(const sg_inputs *in, const char *source)
{
    const sg_expr *k = in && source && !in->unindexed ? name_key(in, source) : NULL;
    if (k) {
        size_t *i = sg__idmap_find(&in->byname, k->id);
        return i ? (long)*i : -1;
    }
    for (size_t i = 0; in && source && i < in->n; i++)
        if (!strcmp(sg_source_name(in->v[i].src), source))
            return (long)i;
    return -1;
}

const sg_source *sg_inputs_source(const sg_inputs *in, size_t i)
{
    return in && i < in->n ? in->v[i].src : NULL;
}

const sg_fake *sg_inputs_fake(const sg_inputs *in, size_t i)
{
    return in && i < in->n && in->v[i].fake ? &in->v[i].fake->pub : NULL;
}

const sg_expr *sg_inputs_int_value(const sg_inputs *in, size_t i)
{
    return in && i < in->n ? in->v[i].value : NULL;
}

const sg_source *sg__fake_source(const sg_fake *f)
{
    return ((const fnode *)f)->src;
}

/* ---- constraint violations --------------------------------------------------- */

typedef struct symsrc {
    const sg_expr **syms, **srcs;
    size_t n, cap;
} symsrc;

static sg_status symsrc_add(sg_ctx *ctx, symsrc *m, const sg_expr *e, const char *source)
{
    if (e->op != SG_OP_SYM)
        return SG_OK;
    for (size_t i = 0; i < m->n; i++)
        if (m->syms[i] == e)
            return SG_OK;
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 16;
        const sg_expr **a = sg__realloc(ctx, m->syms, cap * sizeof *a);
        if (a)
            m->syms = a;
        const sg_expr **b = a ? sg__realloc(ctx, m->srcs, cap * sizeof *b) : NULL;
        if (!b)
            return sg__nomem(ctx);
        m->srcs = b;
        m->cap = cap;
    }
    m->syms[m->n] = e;
    sg_status s = sg_expr_sym(ctx, &m->srcs[m->n], source);
    m->n += !s;
    return s;
}

/* Each symbol's binding site: the first source that names it. */
static sg_status map_fake(sg_ctx *ctx, symsrc *m, const sg_fake *f)
{
    const sg_source *src = sg__fake_source(f), *s;
    sg_status st = SG_OK;
    for (size_t i = 0; i < f->ndim && !st; i++)
        if (!(st = sg_source_property(ctx, &s, src, SG_SOURCE_SIZE, i)))
            st = symsrc_add(ctx, m, f->sizes[i], sg_source_name(s));
    for (size_t i = 0; i < f->ndim && !st; i++)
        if (!(st = sg_source_property(ctx, &s, src, SG_SOURCE_STRIDE, i)))
            st = symsrc_add(ctx, m, f->strides[i], sg_source_name(s));
    if (!st && !(st = sg_source_property(ctx, &s, src, SG_SOURCE_OFFSET, 0)))
        st = symsrc_add(ctx, m, f->offset, sg_source_name(s));
    for (size_t i = 0; i < f->ninner && !st; i++)
        st = map_fake(ctx, m, f->inner[i]);
    return st;
}

/* The first guard that mentions sym, printed over sources, with its
 * provenance; "" when there is none. */
static void cause(sg_inputs *in, const symsrc *m, const sg_expr *sym, sg__buf *b)
{
    for (size_t i = 0; i < sg_env_nguards(in->env); i++) {
        const char *prov;
        const sg_expr *g = sg_env_guard(in->env, i, &prov), **fs, *t;
        size_t nfs, k;
        if (sg_expr_free_symbols(in->ctx, &fs, &nfs, g))
            return;
        for (k = 0; k < nfs && fs[k] != sym; k++)
            ;
        sg_free(fs);
        if (k == nfs)
            continue;
        char *text = NULL;
        if (!sg_expr_subs(in->ctx, &t, g, m->n, m->syms, m->srcs) && !sg_print(in->ctx, &text, t, SG_FMT_PYTHON)) {
            sg__buf_printf(b, " (guard: %s", text);
            if (prov && *prov)
                sg__buf_printf(b, ", from '%s'", prov);
            sg__buf_puts(b, ")");
        }
        sg_free(text);
        return;
    }
}

static sg_status violations(sg_inputs *in, const symsrc *m, const sg_fake *f, sg__buf *b)
{
    const fnode *fn = (const fnode *)f;
    sg_ctx *ctx = in->ctx;
    for (size_t i = 0; i < f->ndim; i++) {
        const sg_dim_spec *sp = &fn->specs[i];
        const sg_expr *sym = f->sizes[i], *now;
        if (sym->op != SG_OP_SYM || (sp->dyn != SG_DIM_DYNAMIC && !sp->lo && !sp->hi))
            continue;
        const sg_source *s;
        sg_interval r;
        sg_status st = sg_source_property(ctx, &s, fn->src, SG_SOURCE_SIZE, i);
        if (!st)
            st = sg_env_replace(in->env, &now, sym);
        if (!st)
            st = sg_facts_range(sg_env_facts(in->env), &r, now);
        if (st)
            return st;
        char *v = NULL;
        if (now->op == SG_OP_INT) {
            if (sg_expr_num_str(ctx, &v, now, SIZE_MAX))
                return sg__nomem(ctx);
            sg__buf_printf(b, "%s: marked dynamic, but the trace specialized it to the constant %s", sg_source_name(s),
                           v);
        } else if ((sp->lo && (!r.lo || fmpz_cmp(&r.lo->u.val, &sp->lo->u.val) > 0)) ||
                   (sp->hi && (!r.hi || fmpz_cmp(&r.hi->u.val, &sp->hi->u.val) < 0))) {
            char *lo = NULL, *hi = NULL;
            if ((sp->lo && sg_expr_num_str(ctx, &lo, sp->lo, SIZE_MAX)) ||
                (sp->hi && sg_expr_num_str(ctx, &hi, sp->hi, SIZE_MAX))) {
                sg_free(lo);
                return sg__nomem(ctx);
            }
            sg__buf_printf(b, "%s: not all values in the specified range %s%s%s%s%s satisfy the generated guards",
                           sg_source_name(s), lo ? lo : "", lo ? " <= " : "", sg_source_name(s), hi ? " <= " : "",
                           hi ? hi : "");
            sg_free(lo);
            sg_free(hi);
        } else {
            continue;
        }
        sg_free(v);
        cause(in, m, sym, b);
        sg__buf_puts(b, "\n");
    }
    for (size_t i = 0; i < f->ninner; i++) {
        sg_status st = violations(in, m, f->inner[i], b);
        if (st)
            return st;
    }
    return SG_OK;
}

sg_status sg_inputs_violations(sg_inputs *in, char **report)
{
    sg_ctx *ctx = in ? in->ctx : NULL;
    if (!in)
        return SG_EINVAL;
    if (!report)
        return sg__err(in->ctx, SG_EINVAL, "sg_inputs_violations: NULL argument");
    *report = NULL;
    symsrc m = {0};
    sg__buf b = {.ctx = ctx};
    sg_status s = SG_OK;
    for (size_t i = 0; i < in->n && !s; i++)
        s = in->v[i].fake ? map_fake(in->ctx, &m, &in->v[i].fake->pub)
                          : symsrc_add(in->ctx, &m, in->v[i].value, sg_source_name(in->v[i].src));
    for (size_t i = 0; i < in->n && !s; i++)
        if (in->v[i].fake)
            s = violations(in, &m, &in->v[i].fake->pub, &b);
    sg_free(m.syms);
    sg_free(m.srcs);
    if (!s && b.oom)
        s = sg__nomem(in->ctx);
    if (s || !b.n) {
        sg__buf_free(&b);
        return s;
    }
    b.p[--b.n] = '\0'; /* the last newline */
    *report = sg__buf_take(&b);
    return *report ? SG_OK : sg__nomem(in->ctx);
}
