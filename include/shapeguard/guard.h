/* shapeguard: guards at call time.
 *
 * A guard program is a set of boolean guards over input slots, compiled once
 * (no C compiler is involved) and then checked on every call of the compiled
 * code with the call's values: slot i's value is v[i]. A front end produces
 * the guards (sg_env_produce_guards gives them over symbols named by their
 * sources, such as L['x'].size()[0]); the slots are those symbols.
 *
 * Semantics. Guards are checked in the order given (put cheap structural
 * checks first): the answer is the first guard that does not hold. Each guard
 * is evaluated exactly with Python's semantics (sg_expr_eval's: floor
 * division and modulo follow the divisor's sign, Where evaluates the arm it
 * takes, And/Or are decided by any argument that decides them). Values are
 * exact: the int64 fast path detects every overflow and then evaluates that
 * guard with exact integers, so a size near 2**63 is never wrapped. A guard
 * whose evaluation raises (a zero divisor, a negative exponent, an inexact
 * CleanDiv: where Python's guard would raise) stops the check with that
 * error.
 *
 * Threads. A program is immutable after sg_guard_prog_compile: any number of
 * threads may check it at once (sg_guard_prog_check, _check_exact). It reads
 * the guard expressions of its context, which are immutable too, and never
 * touches the context's mutable state; the context must outlive the program.
 * Explaining, emitting and serializing use the context (error messages,
 * printing) and follow the context's one-thread rule.
 */
#ifndef SG_GUARD_H
#define SG_GUARD_H

#include <shapeguard/expr.h>
#include <shapeguard/source.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- compiled guard programs (program.c, prog_*.c) ---- */

typedef struct sg_guard_prog sg_guard_prog;

/* Results of a check (the non-negative returns of sg_guard_prog_check). */
#define SG_GUARD_FAIL 0
#define SG_GUARD_PASS 1

/* Compile n boolean guards over nslots slot symbols (distinct symbols, slot i
 * is v[i] at call time) into a program. Compilation is linear in the size of
 * the guards; a sub-expression shared by several guards (the same node) is
 * computed once per check. The guards and slots are expressions of ctx, which
 * must outlive the program. On success *out owns the program (release with
 * sg_guard_prog_free). n == 0 gives a program that always passes.
 * Errors: SG_EINVAL (ctx or out NULL; guards or slots NULL while n or nslots
 * is not 0; a NULL guard or slot; a slot that is not a symbol or repeats; a
 * guard that is not boolean; a guard with a symbol that is not a slot: the
 * message names the guard and the symbol), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_guard_prog_compile(sg_ctx *ctx, sg_give sg_guard_prog **out,
                                               const sg_expr *const *guards, size_t n,
                                               const sg_expr *const *slots, size_t nslots);

/* sg_guard_prog_compile with flags (0 or SG_GUARD_INTERPRET).
 *
 * Native code. Where the library has a backend for the machine (x86-64 under
 * the System V ABI: Linux, FreeBSD, NetBSD; not in builds configured with
 * --disable-native-guards), the batched guards of a program (see
 * sg_guard_prog_stats) are also written out as machine code,
 * without any compiler, into pages that are never writable and executable
 * at once; a check runs that code first. It gives the same answers as the
 * interpreter, which remains the path for every other guard, for failures
 * (the first failing guard, errors) and when the system refuses executable
 * pages (then the program is interpreted, silently). The code costs a few
 * microseconds to write and holds at least one page of memory until the
 * program is freed. SG_GUARD_INTERPRET asks for no native code (for many
 * rarely checked programs, say). A deserialized program takes the default.
 * Errors: those of sg_guard_prog_compile, and SG_EINVAL for an unknown flag. */
#define SG_GUARD_INTERPRET 1u
SG_WARN_UNUSED sg_status sg_guard_prog_compile_flags(sg_ctx *ctx, sg_give sg_guard_prog **out,
                                                     const sg_expr *const *guards, size_t n,
                                                     const sg_expr *const *slots, size_t nslots, unsigned flags);

/* The bytes of native code of p (never fails; p must not be NULL); 0 when p
 * is interpreted only. */
size_t sg_guard_prog_native_size(const sg_guard_prog *p);

/* Release a program. Accepts NULL. */
void sg_guard_prog_free(sg_take sg_guard_prog *p);

/* Sizes and parts (never fail; p must not be NULL): the number of guards and
 * slots, guard i and slot i (NULL when out of range), the context. */
size_t sg_guard_prog_nguards(const sg_guard_prog *p);
size_t sg_guard_prog_nslots(const sg_guard_prog *p);
const sg_expr *sg_guard_prog_guard(const sg_guard_prog *p, size_t i);
const sg_expr *sg_guard_prog_slot(const sg_guard_prog *p, size_t i);
sg_ctx *sg_guard_prog_ctx(const sg_guard_prog *p);

/* Program statistics: instructions, registers (int64 words of scratch that a
 * check uses), guards checked in batched runs (relations of a common shape
 * that read slots directly: bounds, x == y, a linear relation of two slots,
 * x % c, x // c, x*y, Max or Min of two slots, each atom optionally plus a
 * multiple of a slot; one compare each in int64, where an overflow sends
 * that guard to the exact path), guards that always take the exact path (a
 * constant beyond int64). Any pointer may be NULL. */
void sg_guard_prog_stats(const sg_guard_prog *p, size_t *ninsns, size_t *nregs, size_t *nbatched,
                         size_t *nexact);

/* Check the guards at the values v[0 .. nv-1] (nv >= the number of slots;
 * extra values are ignored). Returns SG_GUARD_PASS (1) when every guard holds,
 * SG_GUARD_FAIL (0) when guard *failed is false and the guards before it hold,
 * or a negative sg_status: SG_EINVAL (p NULL, v NULL with slots, nv too small;
 * *failed untouched), SG_EZERODIV, SG_ENEGEXP or SG_EINEXACT (guard *failed
 * raises that error and the guards before it hold), SG_ELIMIT (an exact value
 * beyond the context's bit limit), SG_ENOMEM (the exact path could not
 * allocate). failed may be NULL; it is set on SG_GUARD_FAIL and on the
 * evaluation errors only. There is no message (no context is touched).
 * The fast path allocates nothing and takes no lock: scratch registers live
 * on the stack (or in the heap when the program needs more than
 * SG_GUARD_STACK_REGS of them; use sg_guard_prog_check_scratch to avoid it).
 * A guard whose int64 evaluation overflows (or raises) is evaluated again
 * exactly with FLINT integers, which allocate. */
#define SG_GUARD_STACK_REGS 2048
int sg_guard_prog_check(const sg_guard_prog *p, const int64_t *v, size_t nv, size_t *failed);

/* The same with caller-provided scratch: nscratch int64 words, at least
 * sg_guard_prog_nscratch(p) (else SG_EINVAL). */
size_t sg_guard_prog_nscratch(const sg_guard_prog *p);
int sg_guard_prog_check_scratch(const sg_guard_prog *p, const int64_t *v, size_t nv, size_t *failed,
                                int64_t *scratch, size_t nscratch);

/* Check at exact values of any size: vals[i] is an integer constant
 * expression (sg_expr_int, sg_expr_int_str; any context). Returns as
 * sg_guard_prog_check; SG_EINVAL also for a NULL value or one that is not an
 * integer constant. Values that all fit int64 take the fast path. */
int sg_guard_prog_check_exact(const sg_guard_prog *p, const sg_expr *const *vals, size_t nv, size_t *failed);

/* Explain a check (changes nothing, counts nothing): *out is the first guard
 * that does not hold, in PyTorch's text (the python printer: a slot whose name
 * is a source prints as that source), followed by the values involved:
 *   a relation whose sides are slots or constants:
 *       L['x'].size()[0] == L['y'].size()[0] (5 != 6)
 *   another relation: the sides' values, then the slots':
 *       2*L['x'].size()[0] >= L['y'].size()[0] + 1 (8 < 10; L['x'].size()[0] = 4, L['y'].size()[0] = 9)
 *   any other guard: L['x'].size()[0] >= 8 or L['x'].size()[0] == 2 (values: L['x'].size()[0] = 5)
 *   a guard that raises: L['x'].size()[0] // L['y'].size()[0] >= 2 (raises zero-division; values: ...)
 * When every guard holds, *out is "all N guards pass". *failed (may be NULL)
 * is the index of the guard explained, or the number of guards when all pass.
 * *out is freed with sg_free. ctx must be the program's context.
 * Errors: SG_EINVAL (NULL, another context, too few values), SG_ELIMIT,
 * SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_guard_prog_explain(sg_ctx *ctx, sg_give char **out, size_t *failed,
                                               const sg_guard_prog *p, const int64_t *v, size_t nv);
/* The same at exact values (integer constant expressions, as _check_exact). */
SG_WARN_UNUSED sg_status sg_guard_prog_explain_exact(sg_ctx *ctx, sg_give char **out, size_t *failed,
                                                     const sg_guard_prog *p, const sg_expr *const *vals,
                                                     size_t nv);

/* Serialize a program: *out is a malloc'd blob of *len bytes (free with
 * sg_free) that holds the slots (names) and the guards (a node encoding of
 * their expressions), with a magic, a format version, lengths and a checksum.
 * It does not depend on the process or the context: a cache of compiled
 * programs may keep it across processes. ctx must be the program's context.
 * Errors: SG_EINVAL, SG_ENOMEM. */
#define SG_GUARD_BLOB_VERSION 1
SG_WARN_UNUSED sg_status sg_guard_prog_serialize(sg_ctx *ctx, sg_give uint8_t **out, size_t *len,
                                                 const sg_guard_prog *p);

/* Rebuild a program from a blob into ctx (any context): the slots are the
 * symbols of the same names, the guards are rebuilt through the constructors,
 * and the program is compiled again; it checks and explains as the original
 * did. Errors: SG_EINVAL for anything that is not an intact blob of this
 * format version (bad magic, other version, a length that does not match, a
 * checksum mismatch, a truncated or malformed encoding), with a message that
 * says which; SG_ELIMIT; SG_ENOMEM. Never reads outside data[0 .. len-1]. */
SG_WARN_UNUSED sg_status sg_guard_prog_deserialize(sg_ctx *ctx, sg_give sg_guard_prog **out,
                                                   const uint8_t *data, size_t len);

/* The guards as C source: a self-contained C11 translation unit (it includes
 * <stdint.h> and uses GCC/Clang's __builtin_*_overflow) that defines
 *     int NAME(const int64_t *v)
 * (NAME is fname, or "sg_guard" when fname is NULL; it must be a C identifier)
 * with slot i at v[i]. It returns 1 when every guard holds, 0 when a guard is
 * false (the guards are tested in order), and -1 when int64 arithmetic cannot
 * decide: an intermediate value overflows int64, an operation would raise
 * (a zero divisor, a negative exponent, an inexact CleanDiv, even in an arm
 * or argument that the exact semantics would not need), or a constant does
 * not fit int64. On -1, check exactly (sg_guard_prog_check). Its helpers are
 * static, so several emitted units may be linked together.
 * Errors: SG_EINVAL (NULL, a bad name), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_guard_prog_emit_c(sg_ctx *ctx, sg_give char **out, const sg_guard_prog *p,
                                              const char *fname);

/* The guards as a Python lambda: "lambda v: (G0) and (G1) and ..." (or
 * "lambda v: True" for no guards), each guard printed by the python printer
 * with slot i as v[i]. Its value follows Python's semantics exactly (unbounded
 * integers; // and % are Python's), so it agrees with the program wherever
 * Python does not raise. Errors: SG_EINVAL, SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_guard_prog_emit_python(sg_ctx *ctx, sg_give char **out, const sg_guard_prog *p);

/* The same over named slots: "lambda PARAMS: (G0) and (G1) and ..." with
 * slot i printed as names[i] or, when names is NULL, as its symbol's name.
 * Slots named by their sources (the symbols of sg_env_produce_guards'
 * guards, the slots of a guard set's program) then print as those sources,
 * and with params "L" (the default when params is NULL) this is PyTorch's
 * guard lambda, evaluated with L the frame's locals:
 *     lambda L: (L['x'].size()[0] == L['y'].size()[0]) and (L['x'].size()[0] >= 2)
 * params is copied verbatim (the lambda's parameter list); names[i] must be
 * a Python primary (a name, an attribute, a subscription or a call) and is
 * copied verbatim too. Errors: SG_EINVAL (NULL ctx, p or out, another
 * context, a NULL or empty name), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_guard_prog_emit_python_with(sg_ctx *ctx, sg_give char **out, const sg_guard_prog *p,
                                                        const char *params, const char *const *names);

/* ---- guard sets of inputs (guardset.c) ---- */

/* The guards of a trace's inputs, ready for call time: per input, the
 * structural checks of its kind (an integer; a tensor's rank and the sizes,
 * strides and offset that were constants at fakification; a subclass's
 * kind, inner attribute list and metadata, then its inner tensors), then the
 * shape guards of the environment (sg_env_produce_guards_flags) compiled into
 * a guard program whose slots are the sources those guards name.
 *
 * Order of checking (fixed): inputs in order, each input's structural checks
 * depth first (rank, sizes, strides, offset, kind, attributes, metadata,
 * inner tensors), then the shape guards in produce_guards order. So every
 * slot a shape guard reads is there and of the right kind. */
typedef struct sg_guard_set sg_guard_set;

/* One argument at call time, for the input of the same index: a tensor
 * (tensor not NULL) or an integer (value). */
typedef struct sg_input_value {
    const sg_tensor_value *tensor;
    int64_t value;
} sg_input_value;

/* Build the guard set of in's inputs and environment. flags as for
 * sg_env_produce_guards_flags (SG_GUARDS_STATIC also puts the constant
 * tensor properties among the shape guards). The set copies what it needs
 * but borrows the subclass kinds and the context (which must outlive it).
 * Errors: SG_EINVAL, SG_ENOMEM, and those of produce_guards and
 * sg_guard_prog_compile. */
SG_WARN_UNUSED sg_status sg_guard_set_build(sg_inputs *in, unsigned flags, sg_give sg_guard_set **out);
void sg_guard_set_free(sg_take sg_guard_set *g);

/* The shape-guard program (owned by the set). */
const sg_guard_prog *sg_guard_set_program(const sg_guard_set *g);

/* Check n arguments (n must be the number of inputs). Returns SG_GUARD_PASS,
 * SG_GUARD_FAIL, or a negative status: SG_EINVAL (NULL, wrong n), the
 * errors of sg_guard_prog_check, and an error status that a subclass's
 * flatten returned. No message, no allocation for plain tensors and
 * integers (a subclass's flatten may allocate). */
int sg_guard_set_check(const sg_guard_set *g, const sg_input_value *vals, size_t n);

/* Why a check fails (a second walk that changes nothing): *out is NULL when
 * every guard holds; else the first failing check, as Dynamo words it:
 *     tensor 'x' size mismatch at index 1. expected 4, actual 5
 *     tensor 'x' rank mismatch. expected 2, actual 3
 * or the first failing shape guard by the text produce_guards gives it
 * (sg_env_produce_guards_text: the same line a listing of the guards
 * prints), followed by the values of its sides as that text writes them:
 *     L['y'].size()[0] == L['x'].size()[0] (6 != 5)
 *     2 <= L['x'].size()[1] (2 > 1)
 *     4 <= L['z'].size()[0] and L['z'].size()[0] <= 6 (7 > 6)
 * Free with sg_free. Errors: SG_EINVAL (NULL, wrong n), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_guard_set_explain(const sg_guard_set *g, const sg_input_value *vals, size_t n,
                                              sg_give char **out);

#ifdef __cplusplus
}
#endif
#endif /* SG_GUARD_H */
