/* Hash-consing: every node is built through sg__intern, which returns the
 * existing node when an equal one exists. Hashes and orders use ids (the
 * order of creation), never addresses, so every output is deterministic. */
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "num/num.h"

static inline uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 32);
}

static uint64_t hash_fmpz(uint64_t h, const fmpz *v)
{
    if (!COEFF_IS_MPZ(*v))
        return mix(h, (uint64_t)*v);
    __mpz_struct *z = COEFF_TO_PTR(*v);
    h = mix(h, (uint64_t)(int64_t)z->_mp_size);
    int n = z->_mp_size < 0 ? -z->_mp_size : z->_mp_size;
    for (int i = 0; i < n; i++)
        h = mix(h, (uint64_t)z->_mp_d[i]);
    return h;
}

static uint64_t hash_str(uint64_t h, const char *s, size_t n)
{
    uint64_t x = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        x = (x ^ (unsigned char)s[i]) * 1099511628211ULL;
    return mix(h, x);
}

static bool has_nums(sg_op op)
{
    return op == SG_OP_ADD || op == SG_OP_MUL;
}

static bool has_val(sg_op op)
{
    return op == SG_OP_INT || op == SG_OP_ADD;
}

static bool node_equal(const sg_expr *e, sg_op op, sg_sort sort, size_t nargs, const sg_expr *const *args,
                       const fmpz *nums, const fmpz *val, const char *name, size_t namelen)
{
    if (e->op != op || e->sort != sort || e->nargs != nargs)
        return false;
    for (size_t i = 0; i < nargs; i++)
        if (e->args[i] != args[i])
            return false;
    if (has_nums(op)) {
        const fmpz *en = sg__nums(e);
        for (size_t i = 0; i < nargs; i++)
            if (!fmpz_equal(en + i, nums + i))
                return false;
    }
    if (has_val(op) && !fmpz_equal(&e->u.val, val))
        return false;
    if (op == SG_OP_SYM)
        return strlen(e->u.name) == namelen && memcmp(e->u.name, name, namelen) == 0;
    return true;
}

static bool table_grow(sg_ctx *ctx)
{
    size_t cap = ctx->table_cap ? ctx->table_cap * 2 : 1024;
    const sg_expr **t = sg__calloc(ctx, cap, sizeof *t);
    if (!t)
        return false;
    for (size_t i = 0; i < ctx->table_cap; i++) {
        const sg_expr *e = ctx->table[i];
        if (!e)
            continue;
        size_t j = e->hash & (cap - 1);
        while (t[j])
            j = (j + 1) & (cap - 1);
        t[j] = e;
    }
    sg_free(ctx->table);
    ctx->table = t;
    ctx->table_cap = cap;
    return true;
}

static bool reserve_bignums(sg_ctx *ctx, size_t extra)
{
    if (ctx->nbignums + extra <= ctx->capbignums)
        return true;
    size_t cap = ctx->capbignums ? ctx->capbignums : 16;
    while (cap < ctx->nbignums + extra)
        cap *= 2;
    fmpz **p = sg__realloc(ctx, ctx->bignums, cap * sizeof *p);
    if (!p)
        return false;
    ctx->bignums = p;
    ctx->capbignums = cap;
    return true;
}

static void set_num(sg_ctx *ctx, fmpz *slot, const fmpz *v)
{
    fmpz_init(slot);
    fmpz_set(slot, v);
    if (COEFF_IS_MPZ(*slot))
        ctx->bignums[ctx->nbignums++] = slot;
}

static size_t count_big(size_t n, const fmpz *nums, const fmpz *val)
{
    size_t k = val && COEFF_IS_MPZ(*val) ? 1 : 0;
    for (size_t i = 0; nums && i < n; i++)
        k += COEFF_IS_MPZ(nums[i]) ? 1 : 0;
    return k;
}

static bool any_uncanon(size_t n, const fmpz *nums)
{
    for (size_t i = 0; nums && i < n; i++)
        if (sg__fmpz_is_uncanon(nums + i))
            return true;
    return false;
}

/* Intern again with the numbers copied into canonical representation. */
static const sg_expr *intern_canon(sg_ctx *ctx, sg_op op, sg_sort sort, size_t nargs, const sg_expr *const *args,
                                   const fmpz *nums, const fmpz *val)
{
    fmpz_t v;
    fmpz_init(v);
    fmpz *n = NULL;
    if (val) {
        fmpz_set(v, val);
        sg__fmpz_canon(v);
    }
    if (nums && !(n = sg__malloc(ctx, nargs * sizeof *n))) {
        fmpz_clear(v);
        return sg__nomem(ctx), NULL;
    }
    for (size_t i = 0; n && i < nargs; i++) {
        fmpz_init_set(n + i, nums + i);
        sg__fmpz_canon(n + i);
    }
    const sg_expr *e = sg__intern(ctx, op, sort, nargs, args, n, val ? v : NULL, NULL, 0);
    for (size_t i = 0; n && i < nargs; i++)
        fmpz_clear(n + i);
    sg_free(n);
    fmpz_clear(v);
    return e;
}

const sg_expr *sg__intern(sg_ctx *ctx, sg_op op, sg_sort sort, size_t nargs, const sg_expr *const *args,
                          const fmpz *nums, const fmpz *val, const char *name, size_t namelen)
{
    if (nargs > UINT32_MAX)
        return sg__err(ctx, SG_ELIMIT, "too many arguments"), NULL;
    if (!has_nums(op))
        nums = NULL;
    if (!has_val(op))
        val = NULL;
    /* Numbers must be in canonical representation to hash and compare. */
    if ((val && sg__fmpz_is_uncanon(val)) || any_uncanon(nargs, nums))
        return intern_canon(ctx, op, sort, nargs, args, nums, val);
    uint64_t h = mix((uint64_t)op * 31 + sort, nargs);
    unsigned depth = 0;
    for (size_t i = 0; i < nargs; i++)
        if (args[i]->depth + 1u > depth)
            depth = args[i]->depth + 1u;
    if (sg__op_args_by_id(op)) {
        /* The arguments are in the order of their ids, that is of creation:
         * the hash sums theirs (with their numbers), so that it does not
         * depend on that order and the leading term (the smallest hash) is
         * the same in every context. */
        uint64_t acc = 0;
        for (size_t i = 0; i < nargs; i++) {
            uint64_t t = mix(0x51ed270b27, args[i]->hash);
            if (nums)
                t = hash_fmpz(t, nums + i);
            acc += mix(t, 0x2545f4914f6cdd1dULL);
        }
        h = mix(h, acc);
    } else {
        for (size_t i = 0; i < nargs; i++)
            h = mix(h, args[i]->hash); /* structural: independent of creation order */
        for (size_t i = 0; nums && i < nargs; i++)
            h = hash_fmpz(h, nums + i);
    }
    if (val)
        h = hash_fmpz(h, val);
    if (op == SG_OP_SYM)
        h = hash_str(h, name, namelen);
    uint32_t h32 = (uint32_t)(h ^ (h >> 32));

    if (ctx->table_cap) {
        size_t mask = ctx->table_cap - 1;
        for (size_t j = h32 & mask; ctx->table[j]; j = (j + 1) & mask) {
            const sg_expr *e = ctx->table[j];
            if (e->hash == h32 && node_equal(e, op, sort, nargs, args, nums, val, name, namelen))
                return e;
        }
    }
    if (depth > SG_MAX_DEPTH)
        return sg__err(ctx, SG_ELIMIT, "expression nested deeper than %d", SG_MAX_DEPTH), NULL;
    if (ctx->next_id == UINT32_MAX)
        return sg__err(ctx, SG_ELIMIT, "too many expressions in one context"), NULL;
    if ((ctx->table_used + 1) * 2 > ctx->table_cap && !table_grow(ctx))
        return sg__nomem(ctx), NULL;
    if (!reserve_bignums(ctx, count_big(nargs, nums, val)))
        return sg__nomem(ctx), NULL;

    size_t size = sizeof(sg_expr) + nargs * sizeof(sg_expr *) + (nums ? nargs * sizeof(fmpz) : 0);
    sg_expr *e = sg__arena_alloc(ctx, size);
    if (!e)
        return NULL;
    e->op = (uint8_t)op;
    e->sort = (uint8_t)sort;
    e->depth = (uint16_t)depth;
    e->nargs = (uint32_t)nargs;
    e->hash = h32;
    if (nargs)
        memcpy(e->args, args, nargs * sizeof *args);
    if (op == SG_OP_SYM) {
        char *s = sg__arena_strdup(ctx, name, namelen);
        if (!s)
            return NULL;
        e->u.name = s;
    } else if (val) {
        set_num(ctx, &e->u.val, val);
    } else {
        e->u.val = 0;
    }
    for (size_t i = 0; nums && i < nargs; i++)
        set_num(ctx, sg__nums(e) + i, nums + i);
    e->id = ctx->next_id++;

    size_t mask = ctx->table_cap - 1, j = h32 & mask;
    while (ctx->table[j])
        j = (j + 1) & mask;
    ctx->table[j] = e;
    ctx->table_used++;
    return e;
}

/* A small integer from the context's table (interned on first use). */
static const sg_expr *small_int(sg_ctx *ctx, slong v)
{
    const sg_expr **slot = &ctx->small[v - SG_SMALL_MIN];
    if (!*slot) {
        fmpz_t z;
        fmpz_init_set_si(z, v);
        *slot = sg__intern(ctx, SG_OP_INT, SG_SORT_INT, 0, NULL, NULL, z, NULL, 0);
        fmpz_clear(z);
    }
    return *slot;
}

const sg_expr *sg__int_fmpz(sg_ctx *ctx, const fmpz_t v)
{
    if (!COEFF_IS_MPZ(*v) && *v >= SG_SMALL_MIN && *v <= SG_SMALL_MAX) /* sizes and strides, mostly */
        return small_int(ctx, (slong)*v);
    return sg__intern(ctx, SG_OP_INT, SG_SORT_INT, 0, NULL, NULL, v, NULL, 0);
}

const sg_expr *sg__int_si(sg_ctx *ctx, slong v)
{
    if (v >= SG_SMALL_MIN && v <= SG_SMALL_MAX)
        return small_int(ctx, v);
    fmpz_t z;
    fmpz_init_set_si(z, v);
    const sg_expr *e = sg__int_fmpz(ctx, z);
    fmpz_clear(z);
    return e;
}

const sg_expr *sg__bool(sg_ctx *ctx, bool v)
{
    return v ? ctx->t : ctx->f;
}

static int cmp_id(const void *a, const void *b)
{
    uint32_t x = (*(const sg_expr *const *)a)->id, y = (*(const sg_expr *const *)b)->id;
    return (x > y) - (x < y);
}

void sg__sort_by_id(const sg_expr **a, size_t n)
{
    if (n < 2)
        return;
    /* insertion sort for the short lists that dominate */
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            const sg_expr *x = a[i];
            size_t j = i;
            while (j > 0 && a[j - 1]->id > x->id) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = x;
        }
        return;
    }
    qsort(a, n, sizeof *a, cmp_id);
}

/* ---- the context: its expression part ---- */

sg_status sg_ctx_new(sg_ctx **out)
{
    sg_allocator a;
    sg__alloc_default(&a);
    return sg_ctx_new_with_allocator(out, &a);
}

sg_status sg_ctx_new_with_allocator(sg_ctx **out, const sg_allocator *alloc)
{
    if (!out)
        return SG_EINVAL;
    *out = NULL;
    if (!alloc || !alloc->malloc || !alloc->realloc || !alloc->free)
        return SG_EINVAL;
    sg_ctx *ctx = sg__malloc_from(alloc, sizeof *ctx); /* the context itself comes from the allocator */
    if (!ctx)
        return SG_ENOMEM;
    memset(ctx, 0, sizeof *ctx);
    ctx->alloc = *alloc;
    sg__ctx_init_base(ctx);
    ctx->next_id = 1;
    ctx->zero = sg__int_si(ctx, 0);
    ctx->one = ctx->zero ? sg__int_si(ctx, 1) : NULL;
    ctx->minus_one = ctx->one ? sg__int_si(ctx, -1) : NULL;
    ctx->t = ctx->minus_one ? sg__intern(ctx, SG_OP_TRUE, SG_SORT_BOOL, 0, NULL, NULL, NULL, NULL, 0) : NULL;
    ctx->f = ctx->t ? sg__intern(ctx, SG_OP_FALSE, SG_SORT_BOOL, 0, NULL, NULL, NULL, NULL, 0) : NULL;
    if (!ctx->f) {
        sg_ctx_free(ctx);
        return SG_ENOMEM;
    }
    *out = ctx;
    return SG_OK;
}

void sg_ctx_free(sg_ctx *ctx)
{
    if (!ctx)
        return;
    for (size_t i = 0; i < ctx->nbignums; i++)
        fmpz_clear(ctx->bignums[i]);
    sg_free(ctx->bignums);
    sg_free(ctx->table);
    sg_free(ctx->memo);
    sg__ctx_free_base(ctx);
    sg_free(ctx);
}

static size_t memo_slot(uint32_t tag, const sg_expr *a, const sg_expr *b)
{
    uint64_t h = ((uint64_t)a->id << 32 | (b ? b->id : 0)) * 0x9e3779b97f4a7c15ULL;
    h ^= (uint64_t)tag * 0xc2b2ae3d27d4eb4fULL;
    return (size_t)(h >> 40) & (SG_MEMO_SIZE - 1);
}

const sg_expr *sg__memo_get(sg_ctx *ctx, uint32_t tag, const sg_expr *a, const sg_expr *b)
{
    if (!ctx->memo)
        return NULL;
    const sg__memo_ent *m = &ctx->memo[memo_slot(tag, a, b)];
    if (m->r && m->tag == tag && m->a == a->id && m->b == (b ? b->id : 0))
        return m->r;
    return NULL;
}

void sg__memo_put(sg_ctx *ctx, uint32_t tag, const sg_expr *a, const sg_expr *b, const sg_expr *r)
{
    if (!ctx->memo) {
        if (ctx->memo_failed || !(ctx->memo = sg__calloc(ctx, SG_MEMO_SIZE, sizeof *ctx->memo))) {
            ctx->memo_failed = true; /* the memo is an optimization: go on without it */
            return;
        }
    }
    sg__memo_ent *m = &ctx->memo[memo_slot(tag, a, b)];
    m->tag = tag;
    m->a = a->id;
    m->b = b ? b->id : 0;
    m->r = r;
}
