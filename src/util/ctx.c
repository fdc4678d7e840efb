/* The context: arena, error state, limits, statistics (the expression
 * layer makes and frees the rest of it: expr/intern.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_private.h"

const char *sg_status_kind(sg_status s)
{
    switch (s) {
    case SG_OK: return "ok";
    case SG_EINVAL: return "invalid";
    case SG_ENOMEM: return "nomem";
    case SG_ESYNTAX: return "syntax";
    case SG_ETYPE: return "type";
    case SG_EZERODIV: return "zero-division";
    case SG_ENEGEXP: return "negative-exponent";
    case SG_EINEXACT: return "inexact";
    case SG_EUNBOUND: return "unbound";
    case SG_EDATADEP: return "data-dependent";
    case SG_EASSERT: return "assertion";
    case SG_ELIMIT: return "limit";
    case SG_EUNSUPPORTED: return "unsupported";
    case SG_EINTERNAL: return "internal";
    case SG_ESHAPE: return "shape";
    case SG_EALIASING: return "aliasing";
    case SG_EAUTOGRAD: return "autograd";
    }
    return "unknown";
}

sg_status sg__verr(sg_ctx *ctx, sg_status s, const char *fmt, va_list ap)
{
    if (!ctx)
        return s;
    ctx->err = s;
    ctx->nerr++;
    ctx->nnomem += s == SG_ENOMEM;
    vsnprintf(ctx->msg, sizeof ctx->msg, fmt, ap);
    return s;
}

sg_status sg__err(sg_ctx *ctx, sg_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sg__verr(ctx, s, fmt, ap);
    va_end(ap);
    return s;
}

sg_status sg_ctx_set_error(sg_ctx *ctx, sg_status s, const char *fmt, ...)
{
    va_list ap;
    if (!ctx || !fmt)
        return s;
    va_start(ap, fmt);
    sg__verr(ctx, s, fmt, ap);
    va_end(ap);
    return s;
}

sg_status sg__nomem(sg_ctx *ctx)
{
    return sg__err(ctx, SG_ENOMEM, "out of memory");
}

sg_status sg_ctx_last_error(const sg_ctx *ctx)
{
    return ctx ? ctx->err : SG_EINVAL;
}

const char *sg_ctx_last_error_msg(const sg_ctx *ctx)
{
    return ctx ? ctx->msg : "invalid argument: ctx is NULL";
}

void sg_ctx_reset_error(sg_ctx *ctx)
{
    if (ctx) {
        ctx->err = SG_OK;
        ctx->msg[0] = '\0';
    }
}

void sg_ctx_set_limits(sg_ctx *ctx, size_t max_terms, size_t max_bits)
{
    if (!ctx)
        return;
    ctx->max_terms = max_terms ? max_terms : SG_DEFAULT_MAX_TERMS;
    ctx->max_bits = max_bits ? max_bits : SG_DEFAULT_MAX_BITS;
}

void sg_ctx_stats(const sg_ctx *ctx, size_t *nodes, size_t *arena_bytes, size_t *table_bytes)
{
    if (nodes)
        *nodes = ctx ? ctx->table_used : 0;
    if (arena_bytes)
        *arena_bytes = ctx ? ctx->arena_bytes : 0;
    if (table_bytes)
        *table_bytes = ctx ? ctx->table_cap * sizeof(*ctx->table) : 0;
}

/* Each block starts with a header naming the allocator it came from, so
 * that it can be resized and released without its context. */
typedef struct sg__hdr {
    void *(*realloc)(void *user, void *p, size_t size);
    void (*free)(void *user, void *p);
    void *user;
    size_t cls; /* 1 + its class in the block cache (sg__malloc_cached), else 0; keeps the payload aligned
                   as malloc's */
} sg__hdr;
_Static_assert(sizeof(sg__hdr) % _Alignof(max_align_t) == 0, "header breaks alignment");

static void *std_malloc(void *user, size_t n)
{
    (void)user;
    return malloc(n);
}

static void *std_realloc(void *user, void *p, size_t n)
{
    (void)user;
    return realloc(p, n);
}

static void std_free(void *user, void *p)
{
    (void)user;
    free(p);
}

static const sg_allocator std_alloc = {std_malloc, std_realloc, std_free, NULL};

void sg__alloc_default(sg_allocator *a)
{
    *a = std_alloc;
}

void *sg__malloc(sg_ctx *ctx, size_t n)
{
    return sg__malloc_from(ctx ? &ctx->alloc : &std_alloc, n);
}

void *sg__malloc_from(const sg_allocator *a, size_t n)
{
    if (n > SIZE_MAX - sizeof(sg__hdr))
        return NULL;
    sg__hdr *h = a->malloc(a->user, sizeof *h + n);
    if (!h)
        return NULL;
    h->realloc = a->realloc;
    h->free = a->free;
    h->user = a->user;
    h->cls = 0;
    return h + 1;
}

void *sg__calloc(sg_ctx *ctx, size_t k, size_t n)
{
    if (n && k > SIZE_MAX / n)
        return NULL;
    void *p = sg__malloc(ctx, k * n);
    return p ? memset(p, 0, k * n) : NULL;
}

void *sg__realloc(sg_ctx *ctx, void *p, size_t n)
{
    if (!p)
        return sg__malloc(ctx, n);
    if (n > SIZE_MAX - sizeof(sg__hdr))
        return NULL;
    sg__hdr *h = (sg__hdr *)p - 1;
    sg__hdr *q = h->realloc(h->user, h, sizeof *h + n);
    if (!q)
        return NULL;
    q->cls = 0; /* of another size now */
    return q + 1;
}

void sg_free(void *p)
{
    if (p) {
        sg__hdr *h = (sg__hdr *)p - 1;
        h->free(h->user, h);
    }
}

/* ---- the block cache ---- */

#if defined(__SANITIZE_ADDRESS__)
#define SG_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SG_ASAN 1
#endif
#endif
#ifndef SG_ASAN
#define SG_ASAN 0
#endif

void *sg__malloc_cached(sg_ctx *ctx, size_t n)
{
    size_t c = n ? (n - 1) / SG_CACHE_STEP : 0; /* the class: blocks of (c + 1) * SG_CACHE_STEP bytes */
    if (!ctx || !ctx->cache_on || c >= SG_CACHE_CLASSES)
        return sg__malloc(ctx, n);
    void *p = ctx->cache[c];
    if (p) {
        ctx->cache[c] = *(void **)p;
        ctx->cache_bytes -= (c + 1) * SG_CACHE_STEP;
        return p;
    }
    if (!(p = sg__malloc(ctx, (c + 1) * SG_CACHE_STEP)))
        return NULL;
    ((sg__hdr *)p - 1)->cls = c + 1;
    return p;
}

void sg__free_cached(sg_ctx *ctx, void *p)
{
    if (!p)
        return;
    size_t cls = ((sg__hdr *)p - 1)->cls, bytes = cls * SG_CACHE_STEP;
    if (!cls || !ctx->cache_on || ctx->cache_bytes + bytes > SG_CACHE_BYTES) {
        sg_free(p);
        return;
    }
    *(void **)p = ctx->cache[cls - 1];
    ctx->cache[cls - 1] = p;
    ctx->cache_bytes += bytes;
}

/* Give every block the cache holds back to its allocator. */
static void cache_drain(sg_ctx *ctx)
{
    for (size_t c = 0; c < SG_CACHE_CLASSES; c++)
        while (ctx->cache[c]) {
            void *p = ctx->cache[c];
            ctx->cache[c] = *(void **)p;
            sg_free(p);
        }
    ctx->cache_bytes = 0;
}

void sg__cache_enable(sg_ctx *ctx, bool on)
{
    if (!on)
        cache_drain(ctx);
    ctx->cache_on = on;
}

#define SG_CHUNK_MIN ((size_t)64 * 1024)

void *sg__arena_alloc(sg_ctx *ctx, size_t size)
{
    sg__chunk *c = ctx->chunks;
    size = (size + 7) & ~(size_t)7;
    if (!c || c->size - c->used < size) {
        size_t cap = size > SG_CHUNK_MIN ? size : SG_CHUNK_MIN;
        if (c && c->size * 2 > cap && c->size < (size_t)8 << 20)
            cap = c->size * 2;
        c = sg__malloc(ctx, sizeof(sg__chunk) + cap);
        if (!c) {
            sg__nomem(ctx);
            return NULL;
        }
        c->size = cap;
        c->used = 0;
        c->next = ctx->chunks;
        ctx->chunks = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += size;
    ctx->arena_bytes += size;
    return p;
}

char *sg__arena_strdup(sg_ctx *ctx, const char *s, size_t len)
{
    char *p = sg__arena_alloc(ctx, len + 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

void sg__ctx_init_base(sg_ctx *ctx)
{
    ctx->max_terms = SG_DEFAULT_MAX_TERMS;
    ctx->max_bits = SG_DEFAULT_MAX_BITS;
    /* a caller's allocator sees every block; so does AddressSanitizer (a block kept for reuse would hide a
       use after free) */
    ctx->cache_on = ctx->alloc.malloc == std_malloc && !SG_ASAN;
}

void sg__ctx_free_base(sg_ctx *ctx)
{
    cache_drain(ctx);
    sg__chunk *c = ctx->chunks;
    while (c) {
        sg__chunk *n = c->next;
        sg_free(c);
        c = n;
    }
    ctx->chunks = NULL;
}
