/* Operator schemas: PyTorch's schema strings, parsed into plain structs and
 * printed back (schema.c), and the registry of every operator the pipeline
 * knows (ops.c). What an operator mutates and what its outputs alias is
 * read from the alias annotations of its schema, never written per op:
 *
 *   mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
 *       self is written (a!), and the result is self;
 *   view(Tensor(a) self, SymInt[] size) -> Tensor(a)
 *       the result aliases self (same set a, no write): a view;
 *   unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]
 *       each element of the result aliases self. */
#ifndef SG_GRAPH_SCHEMA_H
#define SG_GRAPH_SCHEMA_H

#include <stdbool.h>
#include <stdint.h>

#include "shapeguard/common.h"

/* The base types of schema arguments and returns. */
typedef enum sg__ty {
    SG_TY_TENSOR,       /* Tensor */
    SG_TY_INT,          /* int */
    SG_TY_SYMINT,       /* SymInt: an int that may be symbolic */
    SG_TY_FLOAT,        /* float */
    SG_TY_BOOL,         /* bool */
    SG_TY_SCALAR,       /* Scalar: int, float or bool */
    SG_TY_SCALARTYPE,   /* ScalarType: a dtype */
    SG_TY_LAYOUT,       /* Layout */
    SG_TY_DEVICE,       /* Device */
    SG_TY_MEMORYFORMAT, /* MemoryFormat */
    SG_TY_STORAGE,      /* Storage */
    SG_TY_STR,          /* str */
    SG_TY_COUNT
} sg__ty;

/* A type with its annotations: base, optionally an alias annotation
 * ("(a)", "(a!)", "(a -> *)"), a list ("[]" or "[N]") whose elements may be
 * optional ("Tensor?[]"), and the whole optional ("int[1]?", "Scalar?"). */
typedef struct sg__sty {
    uint8_t base;       /* sg__ty */
    bool list;          /* T[] or T[N] */
    uint8_t list_n;     /* N of T[N] (0: T[]) */
    bool elem_optional; /* T?[] */
    bool optional;      /* T? (or T[]? for a list) */
    char alias;         /* the alias set: 'a' .. 'z', '*', or 0 for none */
    bool write;         /* the annotation has '!': written through */
    char alias_after;   /* the set after "->" (only '*'), or 0 */
} sg__sty;

#define SG_SCHEMA_NAME 32 /* bytes of a name, with its NUL */
#define SG_SCHEMA_DEF 24  /* bytes of a default's text, with its NUL */
#define SG_SCHEMA_ARGS 12
#define SG_SCHEMA_RETS 4

typedef struct sg__sarg {
    char name[SG_SCHEMA_NAME]; /* "" for an unnamed return */
    sg__sty type;
    bool kwonly;               /* after "*" */
    bool has_def;
    char def[SG_SCHEMA_DEF];   /* the default as written: "1", "None", "[]", "False" */
} sg__sarg;

/* Flags read from the alias annotations. */
enum {
    SG_OPF_MUTATES = 1u << 0, /* some argument is written (a!) */
    SG_OPF_INPLACE = 1u << 1, /* the first argument is written and returned */
    SG_OPF_OUT = 1u << 2,     /* a keyword-only argument is written and returned (out=) */
    SG_OPF_VIEW = 1u << 3,    /* a return aliases an argument that is not written */
};

typedef struct sg__schema {
    char name[SG_SCHEMA_NAME];     /* "mul_" */
    char overload[SG_SCHEMA_NAME]; /* "Tensor", or "" */
    uint8_t nargs, nrets;
    bool rets_tuple;               /* returns written "(...)" */
    sg__sarg args[SG_SCHEMA_ARGS];
    sg__sarg rets[SG_SCHEMA_RETS];
    uint32_t flags;                /* SG_OPF_* */
    uint32_t written;              /* bit i: argument i is written */
    int8_t ret_alias[SG_SCHEMA_RETS]; /* the argument return i aliases, or -1 */
    uint16_t op;                   /* its row of the operator table (graph/ops.h: SG_OP_*); UINT16_MAX
                                      for a schema parsed outside the registry */
    bool memo;                     /* its rule's results may be remembered (graph/rule_memo.c; set by
                                      the registry) */
} sg__schema;

/* Parse a schema string (an optional "aten::" prefix is dropped) into *out
 * and work out its flags. Errors: SG_ESYNTAX with the column of the error,
 * SG_ELIMIT for a name, default or argument list beyond the fixed sizes. */
sg_status sg__schema_parse(sg_ctx *ctx, sg__schema *out, const char *text);
/* Print s as PyTorch does (without "aten::") into buf of size n; the length
 * it needs, as snprintf returns (a printed schema is at most 1024 bytes). */
size_t sg__schema_print(const sg__schema *s, char *buf, size_t n);
/* "name.overload", or "name" without an overload, into buf (SG_SCHEMA_NAME * 2 bytes). */
void sg__schema_full_name(const sg__schema *s, char *buf);
/* The index of the argument named name, or -1. */
int sg__schema_arg(const sg__schema *s, const char *name);

/* The registry: every operator of doc/program.md's list, and the ones the
 * pipeline's passes make (alias, _unsafe_view, the scatters...), parsed once. */
typedef struct sg__opreg sg__opreg;
/* Parse every schema of the table. Errors: SG_ENOMEM; SG_EINTERNAL if a
 * schema of the table does not parse or does not print back as written. */
sg_status sg__opreg_new(sg_ctx *ctx, sg__opreg **out);
void sg__opreg_free(sg__opreg *r);
/* The schema of "name.overload" ("mul_.Tensor", "view"), or NULL. */
const sg__schema *sg__opreg_find(const sg__opreg *r, const char *full_name);
/* The schemas, in the table's order (for tests and listings). */
size_t sg__opreg_count(const sg__opreg *r);
const sg__schema *sg__opreg_at(const sg__opreg *r, size_t i);

#endif /* SG_GRAPH_SCHEMA_H */
