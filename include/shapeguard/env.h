/* shapeguard: the shape environment.
 *
 * A tracing front end makes one environment per trace and asks it every
 * question about sizes. It creates symbols for inputs (backed: with a hint,
 * the value seen at trace time; unbacked: values known only at run time, such
 * as the result of .item()), answers questions about them, records the guards
 * under which the trace stays valid and the runtime assertions the compiled
 * program must check, and lists them for the guard layer.
 *
 * Everything the environment knows is a fact of its fact base (reason.h):
 * the range of every symbol, every guard, every runtime assertion. So
 * replacements (x == 2*y), divisibility, bounds and implications learned from
 * one guard settle later questions without new guards.
 *
 * Names: backed symbols are s0, s1, ... and unbacked ones u0, u1, ..., in
 * order of creation (an input that reuses a symbol or becomes a constant
 * takes no number). Under the option stable_names, a symbol made for an
 * input is named after its source instead, so that its name does not
 * depend on the order of creation: s_ (backed) or u_ (unbacked) and the
 * source, with every run of characters other than letters, digits and _
 * made one _ and trailing ones dropped (the source L['x'].size()[0] gives
 * s_L_x_size_0, the source n gives s_n); should two sources give the same
 * name, the later symbol gets _2, _3, ... Unbacked symbols without a source
 * keep u<N>.
 *
 * Errors leave the environment as it was: a failed call records nothing.
 */
#ifndef SG_ENV_H
#define SG_ENV_H

#include <shapeguard/reason.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_env sg_env;

/* How an input becomes symbolic (PyTorch's DimDynamic). */
typedef enum sg_dim_dynamic {
    SG_DIM_DUCK = 0,              /* a symbol, reusing the symbol of an equal hint (duck sizing) */
    SG_DIM_DYNAMIC = 1,           /* always a fresh symbol */
    SG_DIM_STATIC = 2,            /* the constant hint */
    SG_DIM_SIZE_LIKE_UNBACKED = 3,/* a fresh unbacked size-like symbol; the hint is not used */
    SG_DIM_OBLIVIOUS_SIZE = 4,    /* as SIZE_LIKE_UNBACKED, but the hint is kept for PyTorch's
                                     counterfactual: a question that only these inputs leave
                                     undecided is answered (and guarded) when its value at the
                                     hints equals its value with each such hint raised to at
                                     least 2 */
    SG_DIM_INFER_STRIDE = 5       /* strides only (source.h): the product of the sizes and strides
                                     of faster dimensions when the hint equals it, else DUCK;
                                     sg_env_create_backed rejects it */
} sg_dim_dynamic;

/* What an input is (flags of sg_env_create_backed and sg_env_add_input). */
#define SG_INPUT_SIZE 1u     /* a tensor size, stride or offset: non-negative, 0/1-specialized */
#define SG_INPUT_PROPERTY 2u /* a tensor property: a constant value is checked per tensor, so
                                produce_guards leaves it out unless asked (SG_GUARDS_STATIC) */

/* What happens to a guard after sg_env_freeze. */
typedef enum sg_freeze_mode {
    SG_FREEZE_ERROR = 0, /* the call fails with SG_EASSERT */
    SG_FREEZE_IGNORE = 1 /* the guard is counted (sg_env_ignored_guards) and not recorded */
} sg_freeze_mode;

/* Options; sg_env_new rejects an unknown freeze_mode with SG_EINVAL. */
typedef struct sg_env_options {
    int duck_shape;               /* 1 (default): equal hints share a symbol under SG_DIM_DUCK */
    int specialize_zero_one;      /* 1 (default): a size hint of 0 or 1 becomes that constant, and
                                     size symbols have the range [2, oo] */
    int assume_static_by_default; /* 0 (default); 1: SG_DIM_DUCK inputs become constants */
    int prefer_runtime_asserts;   /* 0 (default); 1: sg_env_check on backed symbols records a
                                     runtime assertion instead of a guard */
    unsigned guard_limit;         /* 0 (default): none; else a symbol in more guards than this is
                                     specialized to its hint */
    sg_freeze_mode freeze_mode;
    int stable_names;             /* 0 (default): s<N>, u<N>; 1: symbols of inputs are named after
                                     their sources (see Names above) */
} sg_env_options;

/* The defaults above. */
void sg_env_options_default(sg_env_options *o);

/* A new environment over ctx (opts NULL: the defaults). Errors: SG_EINVAL,
 * SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_env_new(sg_ctx *ctx, const sg_env_options *opts, sg_give sg_env **out);
/* A deep copy: independent from then on. Errors: SG_EINVAL, SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_env_copy(sg_give sg_env **out, const sg_env *env);
void sg_env_free(sg_take sg_env *env);

/* The fact base of the environment (owned by it): ranges, known, simplify. */
sg_facts *sg_env_facts(sg_env *env);

/* ---- symbols ------------------------------------------------------------ */

/* An input with source name source (copied) and hint (an integer constant).
 * flags: SG_INPUT_SIZE marks a tensor size: non-negative, 0/1-specialized,
 * range [2, oo] (or [0, oo] without 0/1 specialization); otherwise the range
 * is [-oo, oo]. SG_INPUT_PROPERTY: see above.
 * user_range (NULL: none) narrows the range (either bound may be NULL).
 * *out is the symbol, a reused symbol (duck sizing), or a constant (static,
 * 0/1 specialization). Errors: SG_EINVAL (NULL, a hint that is not an integer
 * constant, a negative size hint, the hint outside the range, an empty range,
 * a source name given twice), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_env_create_backed(sg_env *env, const sg_expr **out, const char *source,
                                              const sg_expr *hint, sg_dim_dynamic dyn, unsigned flags,
                                              const sg_interval *user_range);

/* An input whose value is e, an expression over the environment's symbols
 * (an inferred stride such as s1, or a symbol made for another source):
 * produce_guards states source == e unless source is e's binding site.
 * flags as for sg_env_create_backed (SG_INPUT_SIZE is not used). Errors:
 * SG_EINVAL (NULL, a source name given twice, a symbol that is not the
 * environment's), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_env_add_input(sg_env *env, const char *source, const sg_expr *e, unsigned flags);

/* A number that tells this environment from every other made in its
 * context, even one made at the same address after it was freed (a key for
 * caches that outlive environments, such as the source-to-symbol cache). */
uint64_t sg_env_serial(const sg_env *env);
/* The context of env. */
sg_ctx *sg_env_ctx(const sg_env *env);

/* A fresh unbacked symbol u<N>. size_like: range [0, oo], treated as >= 2 by
 * size-oblivious questions. source may be NULL. It is pending until bound
 * (sg_env_bind_unbacked). Errors: SG_EINVAL, SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_env_create_unbacked(sg_env *env, const sg_expr **out, const char *source,
                                                int size_like, const sg_interval *user_range);

/* The symbol named name (s3, u0), or NULL. A hash lookup (the name is
 * interned in env's context, as sg_expr_sym does). */
const sg_expr *sg_env_symbol(const sg_env *env, const char *name);
/* The hint of an expression: its value at the hints of its symbols. Returns
 * SG_OK with *out an integer constant (or true/false), or SG_EDATADEP when a
 * symbol has no hint. */
SG_WARN_UNUSED sg_status sg_env_hint(sg_env *env, const sg_expr **out, const sg_expr *e);
/* e with the environment's replacements applied. */
SG_WARN_UNUSED sg_status sg_env_replace(sg_env *env, const sg_expr **out, const sg_expr *e);

/* ---- questions ------------------------------------------------------------ */

/* What the trace asks when it branches on cond. Provable from what the
 * environment knows: that answer, no guard. Else, if every symbol has a hint:
 * the hinted answer, recorded as a guard (cond or its negation) with the
 * caller's provenance (copied; may be NULL). Else SG_EDATADEP, with a message
 * that names the expression, its unbacked symbols and the two checks that
 * would settle it. Errors: SG_EINVAL, SG_ETYPE, SG_EDATADEP, SG_EASSERT
 * (frozen, SG_FREEZE_ERROR), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_env_evaluate(sg_env *env, int *out, const sg_expr *cond, const char *provenance);

/* As evaluate for an integer expression: its provable value, or its hinted
 * value with the guard e == value. *out is an integer constant. */
SG_WARN_UNUSED sg_status sg_env_evaluate_int(sg_env *env, const sg_expr **out, const sg_expr *e,
                                             const char *provenance);

/* guard_or_false (fallback 0) and guard_or_true (fallback 1): as evaluate,
 * but where the answer would need an unbacked value, answer the fallback and
 * record nothing. */
SG_WARN_UNUSED sg_status sg_env_guard_or(sg_env *env, int *out, const sg_expr *cond, int fallback,
                                         const char *provenance);

/* As evaluate, but size-like unbacked symbols count as >= 2 when trying to
 * prove cond (PyTorch's guard_size_oblivious). */
SG_WARN_UNUSED sg_status sg_env_guard_size_oblivious(sg_env *env, int *out, const sg_expr *cond,
                                                     const char *provenance);

/* statically_known_true/false: what the environment proves, recording
 * nothing. *out is SG_TRUE, SG_FALSE or SG_UNKNOWN. */
SG_WARN_UNUSED sg_status sg_env_known(sg_env *env, sg_truth *out, const sg_expr *cond);

/* A user's assertion that cond holds (torch._check). Provably false:
 * SG_EASSERT. Provably true: nothing. Backed (every symbol hinted) and not
 * prefer_runtime_asserts: evaluated and guarded as evaluate does, SG_EASSERT
 * if the hinted answer is false. Otherwise kept as a runtime assertion (under
 * its newest unbacked symbol) and used from then on. msg may be NULL. */
SG_WARN_UNUSED sg_status sg_env_check(sg_env *env, const sg_expr *cond, const char *msg);

/* After freeze, new guards are refused or ignored (options.freeze_mode). */
void sg_env_freeze(sg_env *env);
size_t sg_env_ignored_guards(const sg_env *env);

/* ---- unbacked bookkeeping --------------------------------------------- */

/* Unbacked symbols made and not yet bound, oldest first. */
size_t sg_env_npending(const sg_env *env);
const sg_expr *sg_env_pending(const sg_env *env, size_t i);
/* Bind a pending symbol to the output path that produces it (".size()[0]"
 * of an op's result, say; copied). Errors: SG_EINVAL (not a pending
 * unbacked symbol). */
SG_WARN_UNUSED sg_status sg_env_bind_unbacked(sg_env *env, const sg_expr *sym, const char *path);
/* SG_OK if nothing is pending; else SG_EINVAL naming the unbound symbols. */
SG_WARN_UNUSED sg_status sg_env_check_pending(sg_env *env);
/* The unbacked symbol from (made again when an op is traced a second time)
 * is the unbacked symbol to: the two become one value (which one stands for
 * the other follows the replacement policy), and from is no longer pending.
 * Errors: SG_EINVAL (not two distinct unbacked symbols of env, or values that
 * cannot be equal), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_env_rename_unbacked(sg_env *env, const sg_expr *from, const sg_expr *to);

/* ---- snapshots -------------------------------------------------------- */

/* A mark of the current state; restoring it forgets every symbol, guard and
 * assertion made since (speculative tracing of a branch). Taking a mark is
 * O(1); restoring re-derives the facts. Marks taken after the one restored
 * become invalid. restores counts the restores before the mark: two marks
 * with equal fields saw the same knowledge (every change of what the
 * environment knows grows a count, a restore the last), which a memo of
 * answers may test (sg_env_mark_same). */
typedef struct sg_env_mark {
    size_t nsyms, ninputs, nguards, nasserts, nfacts, nbindings;
    uint32_t nbacked, nunbacked;
    size_t ignored;
    int frozen;
    uint64_t restores;
} sg_env_mark;
void sg_env_mark_take(const sg_env *env, sg_env_mark *mark);
SG_WARN_UNUSED sg_status sg_env_mark_restore(sg_env *env, const sg_env_mark *mark);
/* Do marks a and b (taken of one environment) see the same state? 1 if
 * nothing the environment knows changed between them (no symbol, guard,
 * assertion, fact, binding or restore), else 0; 0 where either is NULL. */
int sg_env_mark_same(const sg_env_mark *a, const sg_env_mark *b);

/* ---- what the environment recorded ------------------------------------ */

/* Guards in order of recording: the condition (over symbols) and its
 * provenance (owned by the environment; "" when none was given). */
size_t sg_env_nguards(const sg_env *env);
const sg_expr *sg_env_guard(const sg_env *env, size_t i, const char **provenance);
/* Runtime assertions in order: the condition and its message. */
size_t sg_env_nasserts(const sg_env *env);
const sg_expr *sg_env_assert(const sg_env *env, size_t i, const char **msg);
/* The symbol an assertion is kept under: its unbacked symbol made last (the
 * front end emits the assertion once that symbol is bound), or NULL when it
 * has none (a backed check under prefer_runtime_asserts). */
const sg_expr *sg_env_assert_key(const sg_env *env, size_t i);

/* The guard set over sources: every input source is the symbol named by its
 * source name. It holds: source equalities (an input whose value is another
 * input's symbol, a constant, or an expression of other inputs after
 * replacements), the recorded guards that the ranges alone do not imply,
 * and the finite bounds of every input symbol's range. *out is an array the
 * caller frees with sg_free; each item is a boolean expression. Errors:
 * SG_EINVAL, SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_env_produce_guards(sg_env *env, sg_give const sg_expr ***out, size_t *n);

/* Options of sg_env_produce_guards_flags. */
#define SG_GUARDS_STATIC 1u /* also the constant values of SG_INPUT_PROPERTY inputs */

/* As sg_env_produce_guards, with flags (0 is sg_env_produce_guards). */
SG_WARN_UNUSED sg_status sg_env_produce_guards_flags(sg_env *env, unsigned flags, sg_give const sg_expr ***out,
                                                     size_t *n);

/* As sg_env_produce_guards_flags, and for each item i, when it is an input
 * equality (source == value), its two sides over sources: (*lhs)[i] is the
 * source's symbol and (*rhs)[i] the value (both NULL for other items), so
 * that a printer can state it as PyTorch does, source first. lhs and rhs
 * are arrays of *n entries freed with sg_free (NULL when *n is 0); either
 * may be NULL (not wanted). */
SG_WARN_UNUSED sg_status sg_env_produce_guards_sides(sg_env *env, unsigned flags, sg_give const sg_expr ***out,
                                                     sg_give const sg_expr ***lhs, sg_give const sg_expr ***rhs,
                                                     size_t *n);

/* produce_guards in PyTorch's text: the items of sg_env_produce_guards_flags
 * (*out and *n as there) and the text of each, (*texts)[i]:
 *   an input equality: SOURCE == VALUE, the source first
 *       L['y'].size()[0] == L['x'].size()[1]
 *   a bound of one symbol: LO <= SOURCE, or SOURCE <= HI; a lower bound
 *   followed by the upper bound of the same symbol share one text (both
 *   items have it), PyTorch's And of the two:
 *       2 <= L['x'].size()[0] and L['x'].size()[0] <= 6
 *   any other guard: the python printer's text.
 * Each text once, in order (a text equal to the one before it left out),
 * gives produce_guards' lines; a guard set's failure message names the
 * failing item by its text. When sides is not NULL, (*sides)[2*i] and
 * (*sides)[2*i + 1] are the sides of an equality (==) or a bound (<=) as
 * its text writes them, both NULL for any other item. *out and *sides are
 * freed with sg_free, *texts with sg_env_free_guard_texts(*texts, *n).
 * Errors: SG_EINVAL, SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_env_produce_guards_text(sg_env *env, unsigned flags, sg_give const sg_expr ***out,
                                                    sg_give char ***texts, sg_give const sg_expr ***sides,
                                                    size_t *n);
/* Free the n texts of sg_env_produce_guards_text and their array (NULL: nothing). */
void sg_env_free_guard_texts(sg_take char **texts, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* SG_ENV_H */
