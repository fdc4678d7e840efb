/* The tracer's insides, shared by the tracer (tracer.c), its scopes and
 * the lifting of values into them (scope.c), and the higher-order
 * operators built on them (src/hop). */
#ifndef SG_GRAPH_TRACER_PRIVATE_H
#define SG_GRAPH_TRACER_PRIVATE_H

#include "graph/meta.h"

/* The composites the operator table names (its COMPOSITE column): the
 * operators the tracer decomposes as PyTorch does, each recording the calls
 * it makes (tracer.c). */
sg_status sg__composite_reshape(sg_tracer *t, sg__mcall *m, sg_value *out, unsigned line);
sg_status sg__composite_flatten(sg_tracer *t, sg__mcall *m, sg_value *out, unsigned line);
sg_status sg__composite_contiguous(sg_tracer *t, sg__mcall *m, sg_value *out, unsigned line);
sg_status sg__composite_matmul(sg_tracer *t, sg__mcall *m, sg_value *out, unsigned line);
sg_status sg__composite_matmul_out(sg_tracer *t, sg__mcall *m, sg_value *out, unsigned line);

/* A tensor value's version counter and view made under no_grad, as the
 * tracer noted them when a call of the root scope made it. */
typedef struct sg__tver {
    uint32_t node; /* the node that gave the value when noted (the entry holds while the value's is it) */
    uint32_t ctr;  /* the key of the counter it counts on: 2 * v + 1 for .data's v (a counter of its own),
                      SG_NOVAL: its storage's (2 * storage) */
    uint32_t ngv;  /* the view made under no_grad, or element of unbind made with grad, or view made with grad
                      of either, it is (or a later version of), or SG_NOVAL */
} sg__tver;

struct sg_tracer {
    sg_ctx *ctx;
    sg_env *env;
    sg__opreg *reg;
    sg__graph *g;
    sg__idmap taken; /* symbol id -> 1: a placeholder of the graph */
    sg__idmap names; /* 1 + value -> 1 + index into pnames: the program name it was given */
    char **pnames;
    size_t npnames, cappnames;
    bool called;     /* a call was recorded: no more inputs */
    bool no_grad;    /* grad mode off (torch.no_grad) */
    bool done;       /* the output was recorded */
    char (*opnames)[2 * SG_SCHEMA_NAME]; /* each operator row's full name once made ("" before; NULL: none yet) */
    /* the program's signature where it is not the graph's (aot.h reads it):
       tensor-subclass inputs and outputs, and the placeholders passed as more than
       one parameter */
    sg__tsub *subin, *subout;
    size_t nsubin, capsubin, nsubout, capsubout;
    uint32_t *dups;
    size_t ndups, capdups;
    /* autograd's version counters as the root scope's calls move them, for the views made under no_grad a
       call with grad reads (tracer.c, moved_no_grad_view): per value (an entry holds where its node is
       the value's: a value the graph dropped and made again has none) */
    sg__tver *ver;
    size_t nver, capver;
    uint32_t *clast; /* per counter key (tver): the last call that wrote through it, or SG_NOVAL */
    size_t nclast, capclast;
};

/* The order of symbol placeholders: backed (s) before unbacked (u), then
 * by number, then by name (qsort's comparison of const sg_expr *). */
int sg__sym_order(const void *a, const void *b);

/* The free symbols of e[0 .. n) that known does not hold (an entry with a
 * bit of ignore set counts as not held), each once, in sg__sym_order.
 * *out (freed with sg_free) may be NULL when *nout is 0. Errors: SG_ENOMEM. */
sg_status sg__tracer_new_symbols(sg_tracer *t, const sg__idmap *known, size_t ignore, const sg_expr *const *e,
                                 size_t n, const sg_expr ***out, size_t *nout);

/* Record that the node just made (giving out) binds syms[0 .. n) in the
 * current scope: a SymInt value that is the symbol carries it; another
 * (nonzero's size) is read by a sym_size node when a subgraph needs it.
 * Errors: SG_ENOMEM. */
sg_status sg__tracer_note_binds(sg_tracer *t, uint32_t out, const sg_expr *const *syms, size_t n);
/* The value of scope s that carries symbol sym, lifting it from the
 * enclosing scopes (parent first) where s has none. Errors: SG_EINTERNAL (a
 * symbol no scope binds), SG_ENOMEM. */
sg_status sg__tracer_lift_sym(sg_tracer *t, uint32_t s, const sg_expr *sym, uint32_t *out);
/* *e with the environment's replacements applied, and every free symbol of
 * it bound in scope s. */
sg_status sg__tracer_lift_expr(sg_tracer *t, uint32_t s, const sg_expr **e);
/* Value v (of s or of an enclosing scope) as a value of scope s: a tensor
 * of an enclosing scope is taken by a placeholder (its basic symbols
 * first, sorted), once per scope, parent first. name: the placeholder's
 * name (NULL: the program name the value was given, else its symbol).
 * Errors: SG_EUNSUPPORTED (a value of another branch, or of a kind that is
 * not lifted), SG_ENOMEM. */
sg_status sg__tracer_lift(sg_tracer *t, uint32_t s, uint32_t v, const char *name, uint32_t *out);

#endif /* SG_GRAPH_TRACER_PRIVATE_H */
