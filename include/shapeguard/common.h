/* shapeguard: common definitions shared by every layer.
 *
 * Status codes, ownership annotations, the context handle and its error state.
 * This header includes no GMP or FLINT header; only <shapeguard/flint.h> does.
 */
#ifndef SG_COMMON_H
#define SG_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SG_VERSION_MAJOR 0
#define SG_VERSION_MINOR 1
#define SG_VERSION_PATCH 0
#define SG_VERSION_STRING "0.1.0"

/* Ownership annotations (documentation only, as in isl):
 *   sg_give  the caller receives ownership and must release the object;
 *   sg_take  the callee takes ownership of the argument;
 *   sg_keep  the callee only borrows the argument;
 *   sg_null  the function returns NULL (used on free functions). */
#define sg_give
#define sg_take
#define sg_keep
#define sg_null

#if defined(__GNUC__)
#define SG_WARN_UNUSED __attribute__((warn_unused_result))
#else
#define SG_WARN_UNUSED
#endif

/* Status codes. SG_OK is zero; every error is negative. Each error kind that
 * the battery format names has its own code; sg_status_kind() gives that name. */
typedef enum sg_status {
    SG_OK = 0,
    SG_EINVAL = -1,        /* invalid argument (NULL, wrong size, unknown option) */
    SG_ENOMEM = -2,        /* an allocation failed */
    SG_ESYNTAX = -3,       /* text that does not parse ("syntax") */
    SG_ETYPE = -4,         /* integer where a boolean is needed or the reverse ("type") */
    SG_EZERODIV = -5,      /* a divisor or modulus of zero ("zero-division") */
    SG_ENEGEXP = -6,       /* ** or a shift by a negative amount ("negative-exponent") */
    SG_EINEXACT = -7,      /* CleanDiv where the divisor does not divide ("inexact") */
    SG_EUNBOUND = -8,      /* a symbol with no value where one is needed ("unbound") */
    SG_EDATADEP = -9,      /* needs the value of an unbacked symbol ("data-dependent") */
    SG_EASSERT = -10,      /* a check that is provably false ("assertion") */
    SG_ELIMIT = -11,       /* a size or work limit was reached ("limit") */
    SG_EUNSUPPORTED = -12, /* not implemented ("unsupported") */
    SG_EINTERNAL = -13,    /* an internal invariant failed: a bug ("internal") */
    SG_ESHAPE = -14,       /* sizes that do not fit an operator ("shape") */
    SG_EALIASING = -15,    /* a mutation or alias the pipeline refuses ("aliasing") */
    SG_EAUTOGRAD = -16     /* what autograd refuses, such as a backward through a tensor
                              modified in place ("autograd") */
} sg_status;

/* Three-valued truth, for questions whose answer may be unknown. */
typedef enum sg_truth { SG_FALSE = 0, SG_TRUE = 1, SG_UNKNOWN = 2 } sg_truth;

/* The context: owns every expression, the arena they live in, the intern
 * table and the last error. Contexts share nothing: two threads may each use
 * their own context freely; one context must not be used by two threads at once. */
typedef struct sg_ctx sg_ctx;

/* The one-word name of a status, as the battery format prints error kinds:
 * "ok", "invalid", "nomem", "syntax", "type", "zero-division",
 * "negative-exponent", "inexact", "unbound", "data-dependent", "assertion",
 * "limit", "unsupported", "internal", "shape", "aliasing", "autograd". Never NULL. */
const char *sg_status_kind(sg_status s);

/* Create a context. On success *out owns it (release with sg_ctx_free).
 * Errors: SG_EINVAL (out is NULL), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_ctx_new(sg_give sg_ctx **out);

/* Where a context takes its memory from. malloc and realloc return NULL when
 * memory runs out (realloc then leaves p as it was); free accepts only what
 * they returned. user is passed to each. All three are required. */
typedef struct sg_allocator {
    void *(*malloc)(void *user, size_t size);
    void *(*realloc)(void *user, void *p, size_t size);
    void (*free)(void *user, void *p);
    void *user;
} sg_allocator;

/* Create a context whose memory, and that of every object made in it
 * (environments, facts, guard programs and sets, inputs, tracers, and
 * every string or array handed to the caller), comes from *alloc, which
 * is copied. Each block remembers the allocator it came from, so sg_free and
 * the *_free functions release it correctly even after the context is gone;
 * the allocator must stay usable until the last such block is released.
 * FLINT's own storage for integers beyond 62 bits is not covered (FLINT
 * has one process-wide allocator). Errors: SG_EINVAL (out or alloc is NULL,
 * or a function missing), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_ctx_new_with_allocator(sg_give sg_ctx **out, const sg_allocator *alloc);

/* Release a context and every expression it owns. Accepts NULL. */
void sg_ctx_free(sg_take sg_ctx *ctx);

/* The status of the last failed call on ctx (SG_OK if none since the last
 * reset) and its message. The message is owned by ctx, valid until the next
 * call that fails or resets; never NULL ("" when there is none). */
sg_status sg_ctx_last_error(const sg_ctx *ctx);
const char *sg_ctx_last_error_msg(const sg_ctx *ctx);
void sg_ctx_reset_error(sg_ctx *ctx);

/* Set the context's error (for callbacks and extensions): returns s. The message is
 * formatted as printf does and truncated to 1023 bytes. */
sg_status sg_ctx_set_error(sg_ctx *ctx, sg_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;


/* Bound the work of one call: max_terms, the polynomial terms produced by one
 * product or power; max_bits, the bits of one integer produced by a power
 * or by evaluation, and the bits of the numbers of one polynomial (its
 * coefficients and constant) together. 0 restores the defaults (2**20
 * terms, 2**24 bits). Exceeding a bound is SG_ELIMIT; nothing is left
 * half-built. */
void sg_ctx_set_limits(sg_ctx *ctx, size_t max_terms, size_t max_bits);

/* Memory statistics: number of interned nodes, bytes of arena in use (nodes,
 * names, coefficient payloads), bytes of the intern table. Any pointer may be NULL. */
void sg_ctx_stats(const sg_ctx *ctx, size_t *nodes, size_t *arena_bytes, size_t *table_bytes);

/* Release memory that shapeguard handed to the caller (printed strings,
 * arrays of expressions), through the allocator it came from. Accepts NULL. */
void sg_free(sg_take void *p);

#ifdef __cplusplus
}
#endif
#endif /* SG_COMMON_H */
