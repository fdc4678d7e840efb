/* The bottom layer (util): the context (its arena, error state and limits,
 * and the fields that the layers above keep in it), error reporting, and the
 * containers every layer uses: growable buffers and arrays, id maps. It
 * uses no other layer: expressions appear here only as an incomplete type,
 * and the expression layer makes and frees the parts of the context that
 * hold them (expr/intern.c: sg_ctx_new, sg_ctx_free). */
#ifndef SG_UTIL_PRIVATE_H
#define SG_UTIL_PRIVATE_H

#include <flint/fmpz.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shapeguard/common.h"

struct sg_expr;
struct sg__memo_ent;

/* Arena: chunks of memory handed out by bumping a pointer. */
typedef struct sg__chunk {
    struct sg__chunk *next;
    size_t size, used;
    max_align_t data[];
} sg__chunk;

/* Return the status of x from the function when it is an error. */
#define CHAIN(x)                                                                                                   \
    do {                                                                                                           \
        sg_status s_ = (x);                                                                                        \
        if (s_)                                                                                                    \
            return s_;                                                                                             \
    } while (0)

#define SG_SMALL_MIN (-64)
#define SG_SMALL_MAX 1023
#define SG_DEFAULT_MAX_TERMS ((size_t)1 << 20)
#define SG_DEFAULT_MAX_BITS ((size_t)1 << 24)
/* The block cache (sg__malloc_cached): classes of SG_CACHE_STEP bytes up to
 * SG_CACHE_CLASSES * SG_CACHE_STEP, and at most SG_CACHE_BYTES kept. */
#define SG_CACHE_STEP 32
#define SG_CACHE_CLASSES 32
#define SG_CACHE_BYTES ((size_t)128 * 1024)

struct sg_ctx {
    /* util: the allocator, the arena, the error, the limits */
    sg_allocator alloc;
    sg__chunk *chunks;
    size_t arena_bytes;
    size_t max_terms, max_bits;
    sg_status err;
    char msg[1024];
    uint64_t nerr;   /* errors set so far: a caller tells a new error from an old one by it */
    uint64_t nnomem; /* of which SG_ENOMEM: a failure to allocate that a helper absorbed shows here */
    /* expr: the intern table and what it owns */
    const struct sg_expr **table; /* open addressing, capacity a power of two */
    size_t table_cap, table_used;
    uint32_t next_id;
    fmpz **bignums; /* fmpz slots in the arena that hold an mpz: cleared at free */
    size_t nbignums, capbignums;
    const struct sg_expr *zero, *one, *minus_one, *t, *f; /* frequent constants */
    const struct sg_expr *small[SG_SMALL_MAX - SG_SMALL_MIN + 1]; /* interned on first use */
    struct sg__memo_ent *memo; /* allocated on first use; NULL if that failed */
    bool memo_failed;
    uint32_t fresh; /* fresh symbols made so far (_k0, _k1, ...) */
    /* env */
    uint64_t envs; /* shape environments made so far (their serial numbers) */
    /* exec: bytes of tensor memory live now (storages with their elements,
       tensors) and the most live since the last reset (sg__xmem) */
    size_t xbytes, xpeak;
    /* util: small blocks given back to sg__free_cached, kept for the next
       sg__malloc_cached of their class (a list per class, linked through
       each block's first word); only with the C library's allocator */
    bool cache_on;
    void *cache[SG_CACHE_CLASSES];
    size_t cache_bytes; /* the bytes the lists hold (at most SG_CACHE_BYTES) */
};

/* The util part of a new context (zeroed, default limits), and its release
 * (the arena): the expression layer calls them from sg_ctx_new and
 * sg_ctx_free. */
void sg__ctx_init_base(sg_ctx *ctx);
void sg__ctx_free_base(sg_ctx *ctx);

/* Memory from the context's allocator (the default one when ctx is NULL),
 * released by sg_free. NULL when memory runs out; the context's error is
 * not set (callers say what failed). sg__calloc zeroes and checks k * n for
 * overflow; sg__realloc of NULL is sg__malloc, and a block keeps the
 * allocator it came from. */
void *sg__malloc(sg_ctx *ctx, size_t n);
/* The allocator of a context made by sg_ctx_new (the C library's). */
void sg__alloc_default(sg_allocator *a);
void *sg__calloc(sg_ctx *ctx, size_t k, size_t n);
void *sg__realloc(sg_ctx *ctx, void *p, size_t n);
/* sg__malloc from a given allocator (for the context itself). */
void *sg__malloc_from(const sg_allocator *a, size_t n);
/* Blocks made and given back at a high rate (the exec layer's tensors and
 * storages, a few per operator call): sg__malloc_cached gives a block of at
 * least n bytes, reusing one that sg__free_cached gave back to ctx when its
 * size class (n rounded up to SG_CACHE_STEP bytes) has one; sg__free_cached
 * keeps a block of a class while the cache holds less than SG_CACHE_BYTES,
 * and gives it to sg_free otherwise. The context's release gives every kept
 * block back to its allocator. A context with the caller's allocator
 * (sg_ctx_new_with_allocator) keeps nothing: each call goes to the
 * allocator, as sg__malloc and sg_free do. p must come from
 * sg__malloc_cached or sg__malloc of the same ctx (or be NULL); a block of
 * sg__malloc_cached may also go to sg_free. NULL when memory runs out (the
 * context's error not set, as sg__malloc). */
void *sg__malloc_cached(sg_ctx *ctx, size_t n);
void sg__free_cached(sg_ctx *ctx, void *p);
/* The cache of ctx on or off (sg_ctx_new: on; with the caller's allocator:
 * off); turning it off gives back what it holds. For tests. */
void sg__cache_enable(sg_ctx *ctx, bool on);

void *sg__arena_alloc(sg_ctx *ctx, size_t size);
char *sg__arena_strdup(sg_ctx *ctx, const char *s, size_t len);
sg_status sg__err(sg_ctx *ctx, sg_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
sg_status sg__verr(sg_ctx *ctx, sg_status s, const char *fmt, va_list ap);
sg_status sg__nomem(sg_ctx *ctx);

/* A growable byte buffer (printers, messages). */
typedef struct sg__buf {
    sg_ctx *ctx; /* whose allocator; NULL: the default */
    char *p;
    size_t n, cap;
    bool oom;
} sg__buf;
void sg__buf_put(sg__buf *b, const char *s, size_t n);
void sg__buf_puts(sg__buf *b, const char *s);
void sg__buf_printf(sg__buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void sg__buf_fmpz(sg__buf *b, const fmpz_t v);
/* v as Python's repr(float): the shortest digits that read back as v,
 * positional for decimal exponents -4 .. 15 (with ".0" when integral), else
 * d.ddde+XX; "inf", "-inf", "nan". */
void sg__buf_pyfloat(sg__buf *b, double v);
/* Takes the buffer's string (NUL-terminated) or NULL if an allocation failed. */
char *sg__buf_take(sg__buf *b);

/* A malloc'd copy of s (NULL: of ""), or NULL when memory runs out. */
char *sg__strdup(sg_ctx *ctx, const char *s);
/* Room for need elements of size elem in the growable array *a of
 * capacity *cap (doubled from 16 as needed); false when memory runs out,
 * *a and *cap then unchanged. */
bool sg__grow(sg_ctx *ctx, void **a, size_t *cap, size_t need, size_t elem);
void sg__buf_free(sg__buf *b);

/* A map from node id to a slot index. Zero-initialized is empty (and
 * unallocated: init allocates). */
typedef struct sg__idmap {
    sg_ctx *ctx; /* set by init: whose allocator */
    uint32_t *keys;
    size_t *vals;
    size_t cap, used;
} sg__idmap;
bool sg__idmap_init(sg_ctx *ctx, sg__idmap *m, size_t hint);
void sg__idmap_free(sg__idmap *m);
void sg__idmap_reset(sg__idmap *m);
size_t *sg__idmap_find(const sg__idmap *m, uint32_t id);
bool sg__idmap_put(sg__idmap *m, uint32_t id, size_t v);

#endif /* SG_UTIL_PRIVATE_H */
