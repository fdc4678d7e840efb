/* shapeguard: tensor inputs. Sources, symbolic contexts, the
 * source-to-symbol cache, fakification and the tensor-subclass
 * flatten/unflatten protocol.
 *
 * A tracing front end describes each input of a trace once: a tensor (sizes,
 * strides, storage offset, maybe a subclass with inner tensors) or a plain
 * integer, with a symbolic context that says, per dimension, how it becomes
 * symbolic. sg_inputs fakifies it through a shape environment: it creates
 * the symbols of its sizes, strides and offset, named by their sources
 * (L['x'].size()[0], L['x'].stride()[1], L['x'].storage_offset(),
 * L['x'].elem.size()[0]), records the input, and hands back the symbolic
 * metadata (sg_fake). The environment's produce_guards then speaks about
 * these sources; the guard layer (guard.h) compiles the guards for call time.
 *
 * Order of creation, which fixes the names s0, s1, ... and the binding site
 * of a shared symbol (the first source fakified): the outer sizes, strides
 * and offset of a tensor, then its inner tensors in flatten order,
 * recursively; inputs in the order they are added.
 */
#ifndef SG_SOURCE_H
#define SG_SOURCE_H

#include <shapeguard/env.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sources ---------------------------------------------------------- */

/* A source: where a value comes from, as a small tree. */
typedef enum sg_source_kind {
    SG_SOURCE_LOCAL = 0,  /* a local of the traced frame: L['x'] */
    SG_SOURCE_NAMED = 1,  /* a value named as given (a plain integer input of a battery: n) */
    SG_SOURCE_ATTR = 2,   /* an attribute of its base (an inner tensor): L['x'].elem */
    SG_SOURCE_SIZE = 3,   /* base.size()[i] */
    SG_SOURCE_STRIDE = 4, /* base.stride()[i] */
    SG_SOURCE_OFFSET = 5  /* base.storage_offset() */
} sg_source_kind;

typedef struct sg_source sg_source;

/* Make a source. Sources are immutable and live as long as ctx (nothing to
 * free). name (LOCAL, NAMED) and attr (ATTR) are copied; a name or an
 * attribute must be an identifier ([A-Za-z_][A-Za-z0-9_]*). Errors:
 * SG_EINVAL (NULL, an empty name, not an identifier, a property of a
 * property), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_source_local(sg_ctx *ctx, const sg_source **out, const char *name);
SG_WARN_UNUSED sg_status sg_source_named(sg_ctx *ctx, const sg_source **out, const char *name);
SG_WARN_UNUSED sg_status sg_source_attr(sg_ctx *ctx, const sg_source **out, const sg_source *base, const char *attr);
/* kind is SG_SOURCE_SIZE, _STRIDE (index i) or _OFFSET (i ignored). */
SG_WARN_UNUSED sg_status sg_source_property(sg_ctx *ctx, const sg_source **out, const sg_source *base,
                                            sg_source_kind kind, size_t i);

sg_source_kind sg_source_get_kind(const sg_source *s);
/* The base of an ATTR or property source; NULL for LOCAL and NAMED. */
const sg_source *sg_source_base(const sg_source *s);
/* The dimension of SIZE and STRIDE; 0 otherwise. */
size_t sg_source_index(const sg_source *s);
/* The local's name, the attribute's name; NULL for properties. */
const char *sg_source_ident(const sg_source *s);
/* The text, exactly as PyTorch prints the source (L['x'].size()[0]); also its
 * stable name: the key of the source-to-symbol cache and the name of the
 * symbol that stands for the source in guards. Owned by the context. */
const char *sg_source_name(const sg_source *s);

/* ---- symbolic contexts (policies) ---------------------------------------- */

/* How one size or stride becomes symbolic: a policy (sizes: DUCK, DYNAMIC,
 * STATIC, SIZE_LIKE_UNBACKED; strides also INFER_STRIDE) and an optional
 * user range (lo, hi integer constants, NULL for no bound: a constraint).
 * A size with a range is made DYNAMIC when its policy is DUCK or STATIC, as
 * PyTorch's create_symbol does for a constrained dim: it is a symbol in that
 * range that neither reuses nor offers a symbol for duck sizing (a hint of 0
 * or 1 still specializes). INFER_STRIDE follows PyTorch's
 * _compute_symbolic_stride: where several faster dimensions give the same
 * product, the one computed last is used. */
typedef struct sg_dim_spec {
    sg_dim_dynamic dyn;
    const sg_expr *lo, *hi;
} sg_dim_spec;

/* The policy of one tensor, mirroring the flatten tree of a subclass. sizes
 * and strides have the tensor's rank of entries, or are NULL: sizes then all
 * DUCK, strides all INFER_STRIDE. The storage offset is DYNAMIC (so an offset
 * of 0 or 1 specializes). inner_names[i] names the attribute that inner[i]
 * describes; an inner tensor without a context of its own takes the outer
 * size policies when it has the outer's sizes (PyTorch's legacy carry-over
 * of mark_dynamic), else the default. */
typedef struct sg_tensor_context {
    const sg_dim_spec *sizes;
    const sg_dim_spec *strides;
    size_t ninner;
    const char *const *inner_names;
    const struct sg_tensor_context *const *inner;
} sg_tensor_context;

/* ---- example values and the subclass protocol ---------------------------- */

typedef struct sg_subclass_kind sg_subclass_kind;

/* A tensor as the front end sees it (at trace time: the example; at call
 * time: the argument). strides NULL: contiguous. kind NULL: a plain tensor;
 * else a subclass whose inner tensors kind->flatten(obj) describes. */
typedef struct sg_tensor_value {
    size_t ndim;
    const int64_t *sizes;
    const int64_t *strides;
    int64_t offset;
    const sg_subclass_kind *kind;
    const void *obj;
} sg_tensor_value;

/* What flatten gives: the names of the inner tensor attributes, their values,
 * and the opaque metadata (ctx) as bytes. Memory stays the embedder's, valid
 * until its next call on the same object. */
typedef struct sg_flat {
    size_t n;
    const char *const *names;
    const sg_tensor_value *inner;
    const void *meta;
    size_t metalen;
} sg_flat;

/* The symbolic metadata of a fakified tensor, owned by its sg_inputs. For a
 * subclass: its kind, inner[i] the fake of the attribute names[i], and the
 * metadata recorded at fakification. */
typedef struct sg_fake {
    size_t ndim;
    const sg_expr *const *sizes;
    const sg_expr *const *strides;
    const sg_expr *offset;
    const sg_subclass_kind *kind;
    size_t ninner;
    const char *const *names;
    const struct sg_fake *const *inner;
    const void *meta;
    size_t metalen;
} sg_fake;

/* The most dimensions unflatten may give back. */
#define SG_MAX_DIMS 64

/* A tensor-subclass type, registered by the embedder (it outlives every
 * sg_inputs and guard set that uses it; sg_inputs compares kinds by address).
 *
 * flatten: the attributes and metadata of obj (PyTorch's __tensor_flatten__).
 * unflatten: the outer sizes and strides of the subclass rebuilt from its
 *   fake inner tensors, its metadata and the expected outer size and stride
 *   (PyTorch's __tensor_unflatten__); it writes *ndim <= SG_MAX_DIMS and that
 *   many expressions into sizes and strides, built in ctx. The rebuilt metadata
 *   is asserted equal to the outer one, which records the replacements or
 *   guards that tie outer symbols to inner ones.
 * meta_equal: NULL compares the metadata bytes; else 1 when a call-time
 *   metadata is acceptable for the recorded one (PyTorch's __metadata_guard__).
 * A callback that fails returns an error status; it may set the context's
 * message with sg_ctx_set_error. */
struct sg_subclass_kind {
    const char *name;
    sg_status (*flatten)(void *user, const void *obj, sg_flat *out);
    sg_status (*unflatten)(void *user, sg_ctx *ctx, const sg_fake *const *inner, size_t ninner, const void *meta,
                           size_t metalen, const sg_fake *outer, size_t *ndim, const sg_expr **sizes,
                           const sg_expr **strides);
    int (*meta_equal)(void *user, const void *recorded, size_t recordedlen, const void *now, size_t nowlen);
    void *user;
};

/* ---- the source-to-symbol cache ------------------------------------------ */

/* What the first fakification of each source produced, per environment
 * (keyed by sg_env_serial and source name). It lives outside the
 * environments (a tracing context owns it) so that fakifying an input again,
 * in a later pass from fresh metadata, gives back exactly the same symbols. */
typedef struct sg_symcache sg_symcache;

SG_WARN_UNUSED sg_status sg_symcache_new(sg_ctx *ctx, sg_give sg_symcache **out);
void sg_symcache_free(sg_take sg_symcache *c);
/* The expression recorded for (env, source name), or NULL. */
const sg_expr *sg_symcache_get(const sg_symcache *c, const sg_env *env, const char *source);
/* Entries recorded, over every environment. */
size_t sg_symcache_size(const sg_symcache *c);

/* ---- the inputs of a trace ------------------------------------------------ */

/* The inputs fakified for one environment, in order, each with its recorded
 * initial state (example metadata and context, copied at the first
 * fakification). Borrows env and cache (both must outlive it). */
typedef struct sg_inputs sg_inputs;

/* cache may be NULL: no symbols are cached (re-fakification then fails). */
SG_WARN_UNUSED sg_status sg_inputs_new(sg_env *env, sg_symcache *cache, sg_give sg_inputs **out);
void sg_inputs_free(sg_take sg_inputs *in);
sg_env *sg_inputs_env(const sg_inputs *in);

/* Fakify a tensor input from its source (a LOCAL or NAMED source, or any
 * source not yet an input) and example value, under context c (NULL: every
 * size DUCK, every stride INFER_STRIDE). Subclasses are flattened, their
 * inner tensors fakified under their attribute sources, unflattened and tied
 * to the outer metadata. *out (owned by in) is the symbolic metadata.
 * Errors (nothing is recorded, in the environment or here): SG_EINVAL (NULL,
 * a source already an input, a rank above SG_MAX_DIMS, a negative size or
 * stride, sizes and a context of different ranks, a policy that does not
 * apply, a flatten or unflatten that fails or gives a rank that does not
 * match, rebuilt metadata that cannot equal the outer one), SG_ENOMEM, and
 * the environment's errors. */
SG_WARN_UNUSED sg_status sg_inputs_tensor(sg_inputs *in, const sg_source *src, const sg_tensor_value *v,
                                          const sg_tensor_context *c, const sg_fake **out);

/* An integer input with a hint: sg_env_create_backed with the source's
 * name (flags: SG_INPUT_SIZE for a size; 0 for a plain integer). *out is its
 * symbol or constant. Errors: as sg_env_create_backed. */
SG_WARN_UNUSED sg_status sg_inputs_int(sg_inputs *in, const sg_source *src, const sg_expr *hint,
                                       sg_dim_dynamic dyn, unsigned flags, const sg_interval *range,
                                       const sg_expr **out);

/* Fakify input i again from its recorded initial state (not from whatever
 * the tensor became since) through the source-to-symbol cache. *out is the
 * new fake (owned by in) and *same is 1 when it has exactly the symbols of
 * the first fakification and the environment recorded no new guard. Errors:
 * SG_EINVAL (no such input, not a tensor, no cache), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_inputs_refakify(sg_inputs *in, size_t i, const sg_fake **out, int *same);

/* Inputs so far, and the index of the input with source name (or -1). */
size_t sg_inputs_count(const sg_inputs *in);
long sg_inputs_find(const sg_inputs *in, const char *source);
const sg_source *sg_inputs_source(const sg_inputs *in, size_t i);
/* The fake of tensor input i (NULL for an integer input) and the value of
 * integer input i (NULL for a tensor). */
const sg_fake *sg_inputs_fake(const sg_inputs *in, size_t i);
const sg_expr *sg_inputs_int_value(const sg_inputs *in, size_t i);

/* Constraint violations: a size the user marked DYNAMIC (or gave a range)
 * that the trace specialized to a constant or narrowed below the user's
 * range. *report is NULL when there is none; else a text, one violation a
 * line, naming the source, the reason and the guard that caused it (free
 * with sg_free). Errors: SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_inputs_violations(sg_inputs *in, sg_give char **report);

#ifdef __cplusplus
}
#endif
#endif /* SG_SOURCE_H */
