/* shapeguard: printing expressions.
 *
 * Three formats: SG_FMT_SG, the battery syntax (parsing the text gives the
 * same canonical form back); SG_FMT_PYTHON, Python source in PyTorch's style
 * (exact with Python's integers); SG_FMT_C, a C expression over int64_t that
 * calls the helpers of sg_print_c_prelude(). Terms and arguments are printed
 * in a fixed display order that does not depend on the order of creation. */
#ifndef SG_PRINT_H
#define SG_PRINT_H

#include <shapeguard/expr.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sg_format { SG_FMT_SG = 0, SG_FMT_PYTHON = 1, SG_FMT_C = 2 } sg_format;

/* Maps a symbol to the text printed for it (a source name, say). Return NULL
 * to print the symbol's own name. The text is copied. */
typedef const char *(*sg_symname_fn)(void *user, const sg_expr *sym);

/* The bound on a printed expression. Its text is its tree, in which a
 * subterm shared by several parents appears once per parent: an expression
 * of n distinct subterms can print 2^n (nested floor divisions whose
 * canonical form repeats their operand). sg_print refuses an expression
 * whose tree has more than SG_PRINT_TREE_FACTOR times as many subterms
 * (nodes) as it has distinct ones, plus SG_PRINT_TREE_FREE: its text then
 * has at most that many subterms, each printed with its own operator,
 * numbers and names. The allowance lets a moderate repetition print (a
 * floor division multiplied into a sum of a hundred terms); a doubling per
 * level passes it within a few levels. */
#define SG_PRINT_TREE_FACTOR 16
#define SG_PRINT_TREE_FREE 65536

/* Print e in format fmt. *out is a NUL-terminated string that the caller
 * frees with sg_free. symname may be NULL. Errors: SG_EINVAL (NULL, unknown
 * format), SG_ELIMIT (the text would exceed the bound above; the message
 * gives both counts), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_print(sg_ctx *ctx, sg_give char **out, const sg_expr *e, sg_format fmt);
SG_WARN_UNUSED sg_status sg_print_with(sg_ctx *ctx, sg_give char **out, const sg_expr *e, sg_format fmt,
                                       sg_symname_fn symname, void *user);

/* Name a format: "sg", "python", "c" -> SG_OK and *out. Errors: SG_EINVAL. */
SG_WARN_UNUSED sg_status sg_format_from_name(sg_format *out, const char *name);

/* C definitions (static inline functions over int64_t with Python semantics:
 * sg_floordiv, sg_mod, sg_ceildiv ...) that SG_FMT_C output calls. A static string. */
const char *sg_print_c_prelude(void);

#ifdef __cplusplus
}
#endif
#endif /* SG_PRINT_H */
