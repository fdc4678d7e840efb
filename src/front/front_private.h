/* The program language (doc/program.md): a tokenizer and a parser for its
 * Python subset (pyparse.c) giving an AST, and a printer of the AST back
 * to canonical Python (pyprint.c). The walker that traces or runs a
 * program (shapeguard/front.h) stands on this. */
#ifndef SG_FRONT_PRIVATE_H
#define SG_FRONT_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "util/util_private.h"

typedef enum sg__pyk {
    /* expressions */
    SG_PY_NAME,     /* s */
    SG_PY_INT,      /* i */
    SG_PY_FLOAT,    /* f */
    SG_PY_TRUE,
    SG_PY_FALSE,
    SG_PY_NONE,
    SG_PY_ELLIPSIS, /* ... */
    SG_PY_TUPLE,    /* kids: elements */
    SG_PY_LIST,     /* kids: elements */
    SG_PY_BINOP,    /* op: + - * / // % ** @; kids: left, right */
    SG_PY_UNARY,    /* op: - +; kids: operand */
    SG_PY_NOT,      /* kids: operand */
    SG_PY_BOOLOP,   /* op: and, or; kids: operands (two or more) */
    SG_PY_COMPARE,  /* ops[k]: the comparison between kids k and k + 1 */
    SG_PY_CALL,     /* kids: function, then arguments (SG_PY_KEYWORD for named ones) */
    SG_PY_KEYWORD,  /* s: name; kids: value */
    SG_PY_ATTR,     /* s: attribute; kids: object */
    SG_PY_SUBSCRIPT,/* kids: object, index (a TUPLE for x[a, b]) */
    SG_PY_SLICE,    /* kids: lower, upper, step (SG_PY_NONE where absent) */
    /* statements */
    SG_PY_DEF,      /* s: name; params in names; kids: body; decorators in deco */
    SG_PY_CLASS,    /* s: name; kids: base, then body */
    SG_PY_ASSIGN,   /* kids: target, value */
    SG_PY_AUGASSIGN,/* op: + - * / // % **; kids: target, value */
    SG_PY_EXPR,     /* kids: the expression */
    SG_PY_RETURN,   /* kids: value or nothing */
    SG_PY_IF,       /* kids: test, then a SG_PY_BLOCK, then an else SG_PY_BLOCK or an elif IF (optional) */
    SG_PY_WITH,     /* kids: context expressions, then a SG_PY_BLOCK */
    SG_PY_BLOCK,    /* kids: statements */
    SG_PY_PASS,
    SG_PY_IMPORT,   /* s: the module text ("torch", "from torch import nn") */
    SG_PY_MODULE    /* kids: statements */
} sg__pyk;

typedef struct sg__py sg__py;
struct sg__py {
    uint8_t kind; /* sg__pyk */
    uint8_t op;   /* an operator character code, see below */
    uint32_t line, col;
    const char *s; /* a name (in the AST's arena) */
    int64_t i;
    double f;
    uint32_t nkids;
    sg__py **kids;
    uint8_t *ops;        /* SG_PY_COMPARE: nkids - 1 comparison codes */
    uint32_t nnames;     /* SG_PY_DEF: parameters */
    const char **names;
    uint32_t ndeco;      /* SG_PY_DEF: decorators (expressions) */
    sg__py **deco;
};

/* Operator codes (op): the character for one-character operators; these
 * for the rest. */
enum {
    SG_PYOP_FLOORDIV = 'F', /* // */
    SG_PYOP_POW = 'P',      /* ** */
    SG_PYOP_EQ = 'E',       /* == */
    SG_PYOP_NE = 'N',       /* != */
    SG_PYOP_LE = 'L',       /* <= */
    SG_PYOP_GE = 'G',       /* >= */
    SG_PYOP_LT = '<',
    SG_PYOP_GT = '>',
    SG_PYOP_AND = 'a',
    SG_PYOP_OR = 'o',
};

/* A parsed program: its module node and the arena it lives in. */
typedef struct sg__ast sg__ast;

#define SG_PY_MAX_DEPTH 100            /* nesting of expressions and blocks */
#define SG_PY_MAX_SOURCE ((size_t)4 << 20) /* bytes of source */

/* Parse source (len bytes). Errors (the message says "line L, column C:"):
 * SG_ESYNTAX (not Python), SG_EUNSUPPORTED (Python outside the subset,
 * naming the construct), SG_ELIMIT (nesting beyond SG_PY_MAX_DEPTH, a source
 * beyond SG_PY_MAX_SOURCE, an integer beyond int64), SG_ENOMEM. */
sg_status sg__py_parse(sg_ctx *ctx, sg__ast **out, const char *source, size_t len);
/* The same, the source's first line numbered first_line (a program inside
 * a larger file: its lines in errors and on graph nodes are the file's). */
sg_status sg__py_parse_at(sg_ctx *ctx, sg__ast **out, const char *source, size_t len, uint32_t first_line);
void sg__ast_free(sg__ast *a);
const sg__py *sg__ast_module(const sg__ast *a);
/* The operations the program's text writes (calls, unary and binary
 * operators, subscripts, augmented assignments): about the operator calls
 * one run through it records, a hint for the room reserved ahead. */
size_t sg__ast_ops(const sg__ast *a);

/* The AST as canonical Python: four spaces an indent, one space around
 * binary operators, parentheses exactly where precedence needs them, floats
 * as Python's repr. *out is freed with sg_free. Errors: SG_ENOMEM. */
sg_status sg__py_print(sg_ctx *ctx, char **out, const sg__py *module);

/* The walker that traces or runs a program: shapeguard/front.h (its
 * parts: walk_private.h). */

#endif /* SG_FRONT_PRIVATE_H */
