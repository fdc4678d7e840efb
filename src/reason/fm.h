/* The decision procedure for linear facts (fm.c), the bottom of the
 * reasoning layer: it knows expressions and ranges, and reads the facts only
 * through the callbacks of a source, so the fact base (facts.c) and the
 * questions (query.c) sit above it and it never calls them. */
#ifndef SG_REASON_FM_H
#define SG_REASON_FM_H

#include "range/range_private.h"

/* A run's buffers, kept between runs by whoever asks (opaque). */
typedef struct sg__fm_scratch sg__fm_scratch;

/* Empty buffers (NULL when memory runs out: runs then make their own). */
sg__fm_scratch *sg__fm_scratch_new(sg_ctx *ctx);
void sg__fm_scratch_free(sg__fm_scratch *s);

/* What a run reads of the facts. The linear facts are GE0 and EQ0 nodes
 * (p >= 0, p == 0) numbered by the source; a number may name a fact dropped
 * since (linear gives NULL). */
typedef struct sg__fm_source {
    sg_ctx *ctx;
    void *user;
    sg__fm_scratch *scratch; /* may be NULL */
    /* The range of monomial m under the facts: SG_OK, or SG_ENOMEM. */
    sg_status (*range)(void *user, const sg_expr *m, sg__iv *out);
    /* The numbers of the linear facts that monomial m appears in (*n of them). */
    const size_t *(*occurrences)(void *user, const sg_expr *m, size_t *n);
    /* Linear fact number l, or NULL if it was dropped. */
    const sg_expr *(*linear)(void *user, size_t l);
    /* The run read the occurrences of m: all of them (whole), or a first
     * part (facts added later at the end could not change what it read). */
    void (*read_occurrences)(void *user, const sg_expr *m, bool whole);
} sg__fm_source;

/* Is p >= 0 (or p == 0 when eq) implied by the facts? Fourier-Motzkin with
 * integer tightening over the atoms of p and of the facts that share atoms
 * with it. SG_TRUE: proved; SG_UNKNOWN otherwise (never SG_FALSE). */
sg_truth sg__fm_implies(const sg__fm_source *src, const sg_expr *p, bool eq, size_t *budget);
/* Are the facts together with p >= 0 (p == 0 when eq) infeasible? */
sg_truth sg__fm_refutes(const sg__fm_source *src, const sg_expr *p, bool eq, size_t *budget);

#endif /* SG_REASON_FM_H */
