/* shapeguard: parsing the expression syntax of the battery format
 * (doc/battery.md, "Expression syntax"): Python-style integer and boolean
 * expressions, built directly into canonical expressions of a context. */
#ifndef SG_PARSE_H
#define SG_PARSE_H

#include <shapeguard/expr.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Resolves an identifier or a source (text such as L['x'].size()[0]) to an
 * expression. text is not NUL-terminated: len bytes. is_source is 1 for a
 * source, 0 for a plain identifier. Return SG_OK with *out set to use it, or
 * SG_OK with *out NULL to fall back to the default (a plain identifier is the
 * integer symbol of that name; a source is a syntax error), or an error,
 * which the parse returns (the resolver sets the message with sg_ctx_set_error). */
typedef sg_status (*sg_resolve_fn)(void *user, sg_ctx *ctx, const char *text, size_t len, int is_source,
                                   const sg_expr **out);

typedef struct sg_parse_opts {
    sg_resolve_fn resolve; /* may be NULL */
    void *user;            /* passed to resolve */
    int syntax_only;       /* check the syntax only: build nothing, *out is NULL */
} sg_parse_opts;

/* Parse the whole of text (NUL-terminated) as one expression. opts may be
 * NULL. Errors: SG_ESYNTAX with "line L, column C: ..." in the message
 * (columns count bytes from 1), SG_ETYPE (sorts that do not fit, with the
 * position), SG_ELIMIT (nesting deeper than SG_PARSE_MAX_NESTING, or a
 * construction limit), SG_EINVAL, SG_ENOMEM. */
#define SG_PARSE_MAX_NESTING 500
SG_WARN_UNUSED sg_status sg_parse(sg_ctx *ctx, const sg_expr **out, const char *text, const sg_parse_opts *opts);

/* The same for len bytes of text (need not be NUL-terminated). */
SG_WARN_UNUSED sg_status sg_parse_n(sg_ctx *ctx, const sg_expr **out, const char *text, size_t len,
                                    const sg_parse_opts *opts);


#ifdef __cplusplus
}
#endif
#endif /* SG_PARSE_H */
