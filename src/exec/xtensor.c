/* exec: concrete tensors. Storages (typed flat arrays), version counters
 * and strided tensors over them, all reference counted; element access by
 * row-major index through the strides; printing as Python prints
 * t.tolist(). Every block comes from the context's allocator and may be
 * given back with sg_free (sg__xver_unref, without a context); storages
 * and tensor headers come from its block cache (sg__malloc_cached) and go
 * back to it when their last reference goes, as every operator call makes
 * and drops a few. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec_private.h"

static size_t elem_size(sg_dtype d)
{
    switch (d) {
    case SG_FLOAT64: return sizeof(double);
    case SG_FLOAT32: return sizeof(float);
    case SG_INT64: return sizeof(int64_t);
    default: return 1;
    }
}

/* The largest element count a storage may have: its bytes fit in a size_t
 * and in an int64 (and a few more for the allocator's header). */
static int64_t max_numel(sg_dtype d)
{
    uint64_t lim = (uint64_t)(SIZE_MAX < INT64_MAX ? SIZE_MAX : INT64_MAX) / 2;
    return (int64_t)(lim / elem_size(d));
}

static void count(sg_ctx *ctx, size_t n)
{
    ctx->xbytes += n;
    if (ctx->xbytes > ctx->xpeak)
        ctx->xpeak = ctx->xbytes;
}

void sg__xmem(const sg_ctx *ctx, size_t *live, size_t *peak)
{
    if (live)
        *live = ctx->xbytes;
    if (peak)
        *peak = ctx->xpeak;
}

void sg__xmem_reset_peak(sg_ctx *ctx)
{
    ctx->xpeak = ctx->xbytes;
}

/* The bytes a storage of numel elements counts (its header and elements). */
static size_t storage_bytes(sg_dtype d, int64_t numel)
{
    return sizeof(sg__xstorage) + (size_t)(numel ? numel : 1) * elem_size(d);
}

/* Where a storage's elements start when they share its block: after the
 * header, rounded up to 16 bytes (malloc's alignment). */
#define INLINE_AT ((sizeof(sg__xstorage) + 15) / 16 * 16)

static bool data_inline(const sg__xstorage *s)
{
    return s->data == (const char *)s + INLINE_AT;
}

sg_status sg__xst_new(sg_ctx *ctx, sg__xstorage **out, sg_dtype dtype, int64_t numel)
{
    *out = NULL;
    if ((unsigned)dtype >= SG_NDTYPE)
        return sg__err(ctx, SG_EINVAL, "storage: bad dtype %d", (int)dtype);
    if (numel < 0 || numel > max_numel(dtype))
        return sg__err(ctx, SG_ELIMIT, "storage: %lld elements are more than memory can hold", (long long)numel);
    /* one block: the header, then the elements (at least one, so an empty
     * storage has a pointer too), zero-filled */
    size_t bytes = (numel ? (size_t)numel : 1) * elem_size(dtype);
    if (bytes > SIZE_MAX - INLINE_AT)
        return sg__err(ctx, SG_ELIMIT, "storage: %lld elements are more than memory can hold", (long long)numel);
    sg__xstorage *s = sg__malloc_cached(ctx, INLINE_AT + bytes);
    if (!s)
        return sg__nomem(ctx);
    s->data = (char *)s + INLINE_AT;
    memset(s->data, 0, bytes);
    s->refs = 1;
    s->ctx = ctx;
    s->dtype = (uint8_t)dtype;
    s->numel = numel;
    count(ctx, storage_bytes(dtype, numel));
    *out = s;
    return SG_OK;
}

sg_status sg__xst_grow(sg_ctx *ctx, sg__xstorage *st, int64_t numel)
{
    if (numel <= st->numel)
        return SG_OK;
    if (numel > max_numel((sg_dtype)st->dtype))
        return sg__err(ctx, SG_ELIMIT, "storage: %lld elements are more than memory can hold", (long long)numel);
    size_t es = elem_size((sg_dtype)st->dtype);
    void *p;
    if (data_inline(st)) { /* the elements move out of the header's block */
        if ((p = sg__malloc(ctx, (size_t)numel * es)))
            memcpy(p, st->data, (size_t)st->numel * es);
    } else {
        p = sg__realloc(ctx, st->data, (size_t)numel * es);
    }
    if (!p)
        return sg__nomem(ctx);
    memset((char *)p + (size_t)st->numel * es, 0, (size_t)(numel - st->numel) * es);
    count(st->ctx, storage_bytes((sg_dtype)st->dtype, numel) - storage_bytes((sg_dtype)st->dtype, st->numel));
    st->data = p;
    st->numel = numel;
    return SG_OK;
}

void sg__xst_unref(sg__xstorage *s)
{
    if (!s || --s->refs)
        return;
    s->ctx->xbytes -= storage_bytes((sg_dtype)s->dtype, s->numel);
    if (!data_inline(s))
        sg_free(s->data);
    sg__free_cached(s->ctx, s);
}

sg__xversion *sg__xver_new(sg_ctx *ctx)
{
    sg__xversion *v = sg__malloc(ctx, sizeof *v);
    if (!v) {
        sg__nomem(ctx);
        return NULL;
    }
    v->refs = 1;
    v->n = 0;
    v->block = NULL;
    return v;
}

void sg__xver_unref(sg__xversion *v)
{
    if (v && !--v->refs)
        sg_free(v->block ? v->block : v);
}

/* sg__xver_unref where the context is known: a tensor's block goes back to
 * its cache. */
static void ver_unref(sg_ctx *ctx, sg__xversion *v)
{
    if (v && !--v->refs) {
        if (v->block)
            sg__free_cached(ctx, v->block);
        else
            sg_free(v);
    }
}

sg_status sg__xlayout_extent(sg_ctx *ctx, size_t ndim, const int64_t *sizes, const int64_t *strides, int64_t offset,
                             int64_t *lo, int64_t *hi)
{
    *lo = *hi = 0;
    for (size_t d = 0; d < ndim; d++) {
        if (sizes[d] < 0)
            return sg__err(ctx, SG_ESHAPE, "a negative size (%lld) in dimension %zu", (long long)sizes[d], d);
        if (sizes[d] == 0)
            return SG_OK;
    }
    int64_t a = offset, b = offset; /* the least and the greatest position reached */
    for (size_t d = 0; d < ndim; d++) {
        int64_t span;
        if (__builtin_mul_overflow(sizes[d] - 1, strides[d], &span) ||
            (span >= 0 ? __builtin_add_overflow(b, span, &b) : __builtin_add_overflow(a, span, &a)))
            return sg__err(ctx, SG_ELIMIT, "a layout whose positions overflow int64");
    }
    if (b == INT64_MAX)
        return sg__err(ctx, SG_ELIMIT, "a layout whose positions overflow int64");
    *lo = a;
    *hi = b + 1;
    return SG_OK;
}

sg_status sg__xt_view(sg_ctx *ctx, sg__xtensor **out, sg__xstorage *st, sg__xversion *ver, size_t ndim,
                      const int64_t *sizes, const int64_t *strides, int64_t offset)
{
    *out = NULL;
    if (ndim > SG_MAX_DIMS)
        return sg__err(ctx, SG_ELIMIT, "a tensor of more than %d dimensions", SG_MAX_DIMS);
    int64_t lo, hi;
    sg_status s = sg__xlayout_extent(ctx, ndim, sizes, strides, offset, &lo, &hi);
    if (s)
        return s;
    return sg__xt_view_reaching(ctx, out, st, ver, ndim, sizes, strides, offset, lo, hi);
}

sg_status sg__xt_view_reaching(sg_ctx *ctx, sg__xtensor **out, sg__xstorage *st, sg__xversion *ver, size_t ndim,
                               const int64_t *sizes, const int64_t *strides, int64_t offset, int64_t lo, int64_t hi)
{
    *out = NULL;
    if (ndim > SG_MAX_DIMS)
        return sg__err(ctx, SG_ELIMIT, "a tensor of more than %d dimensions", SG_MAX_DIMS);
    if (offset < 0 || (hi > lo && (lo < 0 || hi > st->numel)))
        return sg__err(ctx, SG_ESHAPE,
                       "a view reaching positions [%lld, %lld) (offset %lld) of a storage of %lld elements",
                       (long long)lo, (long long)hi, (long long)offset, (long long)st->numel);
    /* one block: the header, ndim sizes and ndim strides, and a fresh
     * version counter (which keeps the block while views share it) */
    size_t dims = 2 * ndim * sizeof(int64_t);
    size_t vat = (sizeof(sg__xtensor) + dims + 15) / 16 * 16;
    sg__xtensor *t = sg__malloc_cached(ctx, ver ? sizeof *t + dims : vat + sizeof *ver);
    if (!t)
        return sg__nomem(ctx);
    if (ver) {
        ver->refs++;
    } else {
        ver = (sg__xversion *)(void *)((char *)t + vat);
        ver->refs = 1;
        ver->n = 0;
        ver->block = t;
    }
    t->refs = 1;
    t->st = st;
    st->refs++;
    count(ctx, sizeof *t);
    t->ver = ver;
    t->dtype = st->dtype;
    t->requires_grad = false;
    t->ndim = t->capdims = (uint32_t)ndim;
    t->offset = offset;
    t->sizes = t->dims;
    t->strides = t->dims + ndim;
    for (size_t d = 0; d < ndim; d++) { /* a few: a loop costs less than two calls of memcpy */
        t->sizes[d] = sizes[d];
        t->strides[d] = strides[d];
    }
    *out = t;
    return SG_OK;
}

sg_status sg__xt_new(sg_ctx *ctx, sg__xtensor **out, sg_dtype dtype, size_t ndim, const int64_t *sizes)
{
    *out = NULL;
    if (ndim > SG_MAX_DIMS)
        return sg__err(ctx, SG_ELIMIT, "a tensor of more than %d dimensions", SG_MAX_DIMS);
    int64_t strides[SG_MAX_DIMS], n = 1;
    for (size_t d = ndim; d-- > 0;) { /* PyTorch's contiguous strides: max(size, 1) */
        if (sizes[d] < 0)
            return sg__err(ctx, SG_ESHAPE, "a negative size (%lld) in dimension %zu", (long long)sizes[d], d);
        strides[d] = n;
        if (__builtin_mul_overflow(n, sizes[d] ? sizes[d] : 1, &n))
            return sg__err(ctx, SG_ELIMIT, "a tensor of more elements than int64 counts");
    }
    int64_t numel = 1;
    for (size_t d = 0; d < ndim; d++)
        numel *= sizes[d]; /* at most n, which did not overflow */
    sg__xstorage *st;
    sg_status s = sg__xst_new(ctx, &st, dtype, numel);
    if (s)
        return s;
    s = sg__xt_view(ctx, out, st, NULL, ndim, sizes, strides, 0);
    sg__xst_unref(st);
    return s;
}

void sg__xt_ref(sg__xtensor *t)
{
    if (t)
        t->refs++;
}

sg_status sg__xt_set_layout(sg_ctx *ctx, sg__xtensor *t, size_t ndim, const int64_t *sizes, const int64_t *strides,
                            int64_t offset)
{
    if (ndim > SG_MAX_DIMS)
        return sg__err(ctx, SG_ELIMIT, "a tensor of more than %d dimensions", SG_MAX_DIMS);
    int64_t *block = t->sizes;
    if (ndim > t->capdims && block == t->dims) {
        if (!(block = sg__malloc(ctx, 2 * SG_MAX_DIMS * sizeof *block)))
            return sg__nomem(ctx);
    }
    t->sizes = block;
    t->strides = block + (block == t->dims ? t->capdims : SG_MAX_DIMS);
    t->ndim = (uint32_t)ndim;
    t->offset = offset;
    memmove(t->sizes, sizes, ndim * sizeof *sizes);
    memmove(t->strides, strides, ndim * sizeof *strides);
    return SG_OK;
}

void sg__xt_set_storage(sg__xtensor *t, sg__xstorage *st)
{
    st->refs++;
    sg__xst_unref(t->st);
    t->st = st;
}

void sg__xt_unref(sg__xtensor *t)
{
    if (!t || --t->refs)
        return;
    sg_ctx *ctx = t->st->ctx;
    ctx->xbytes -= sizeof *t;
    if (t->sizes != t->dims) /* laid out anew with more dimensions than its block holds */
        sg_free(t->sizes);
    sg__xst_unref(t->st);
    bool own = t->ver->block == t; /* its block then goes with the counter's last reference */
    ver_unref(ctx, t->ver);
    if (!own)
        sg__free_cached(ctx, t);
}

int64_t sg__xt_numel(const sg__xtensor *t)
{
    int64_t n = 1;
    for (uint32_t d = 0; d < t->ndim; d++)
        n *= t->sizes[d];
    return n;
}

int64_t sg__xt_pos(const sg__xtensor *t, int64_t i)
{
    int64_t p = t->offset;
    for (uint32_t d = t->ndim; d-- > 0;) {
        int64_t sz = t->sizes[d];
        p += (i % sz) * t->strides[d];
        i /= sz;
    }
    return p;
}

double sg__xt_get_f(const sg__xtensor *t, int64_t i)
{
    return sg__xst_get_f(t->st, sg__xt_pos(t, i));
}

int64_t sg__xt_get_i(const sg__xtensor *t, int64_t i)
{
    return sg__xst_get_i(t->st, sg__xt_pos(t, i));
}

void sg__xt_set_f(sg__xtensor *t, int64_t i, double v)
{
    sg__xst_set_f(t->st, sg__xt_pos(t, i), v);
}

void sg__xt_set_i(sg__xtensor *t, int64_t i, int64_t v)
{
    sg__xst_set_i(t->st, sg__xt_pos(t, i), v);
}

void sg__xpos_init(sg__xpos *it, size_t ndim, const int64_t *sizes, const int64_t *strides, int64_t offset)
{
    it->ndim = ndim;
    it->pos = offset;
    it->sizes = sizes;
    for (size_t d = 0; d < ndim; d++) {
        it->strides[d] = strides[d];
        it->idx[d] = 0;
    }
}

/* ---- printing ---- */


static void put_elem(sg__buf *b, const sg__xtensor *t, int64_t pos)
{
    switch (t->dtype) {
    case SG_FLOAT64:
    case SG_FLOAT32: sg__buf_pyfloat(b, sg__xst_get_f(t->st, pos)); break;
    case SG_INT64: sg__buf_printf(b, "%lld", (long long)sg__xst_get_i(t->st, pos)); break;
    default: sg__buf_puts(b, sg__xst_get_i(t->st, pos) ? "True" : "False"); break;
    }
}

static void put_dims(sg__buf *b, const sg__xtensor *t, uint32_t d, int64_t pos)
{
    if (d == t->ndim) {
        put_elem(b, t, pos);
        return;
    }
    sg__buf_puts(b, "[");
    for (int64_t i = 0; i < t->sizes[d] && !b->oom; i++) {
        if (i)
            sg__buf_puts(b, ", ");
        put_dims(b, t, d + 1, pos + i * t->strides[d]);
    }
    sg__buf_puts(b, "]");
}

sg_status sg__xt_print(sg_ctx *ctx, char **out, const sg__xtensor *t)
{
    sg__buf b = {.ctx = ctx};
    put_dims(&b, t, 0, t->offset);
    *out = sg__buf_take(&b);
    return *out ? SG_OK : sg__nomem(ctx);
}
