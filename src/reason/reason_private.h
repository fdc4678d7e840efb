/* The reasoning layer, internal: the fact base and the decision procedure. */
#ifndef SG_REASON_PRIVATE_H
#define SG_REASON_PRIVATE_H

#include "range/range_private.h"
#include "shapeguard/reason.h"

#define SG_DEFAULT_BUDGET 4000

/* A growable list of expressions. */
typedef struct sg__list {
    const sg_expr **v;
    size_t n, cap;
} sg__list;

bool sg__list_push(sg__list *l, const sg_expr *e);
void sg__list_free(sg__list *l);

struct sg_facts {
    sg_ctx *ctx;
    sg__list facts;   /* every fact, as assumed */
    /* what the facts give, derived again whenever a replacement appears */
    sg__list rsym, rval; /* replacements: symbol -> expression without replaced symbols */
    sg__idmap rmap;      /* replaced symbol id -> index in rval */
    sg__nodememo rmemo;  /* expressions with the replacements applied, until they change */
    sg__idmap bidx;      /* atom id -> index in batom/biv */
    sg__list batom;
    sg__iv *biv;
    size_t capbiv;
    sg__list ne;         /* p != 0 facts on one atom, applied to bounds at their ends */
    sg__list touched;    /* atoms whose bounds moved since the last propagation */
    sg__list lin;        /* GE0 / EQ0 facts for the decision procedure */
    sg__idmap occidx;    /* monomial id -> index in occ */
    struct sg__occ *occ; /* for each monomial: the indexes of the linear facts it is in */
    size_t nocc, capocc;
    sg__list axioms;     /* facts matched as they are (after replacements) */
    sg__idmap axidx;     /* axiom id -> 1 */
    sg__list divfact, divsym; /* the fresh symbol made for each divisibility fact: kept
                                 when the facts are derived again, and by copies */
    bool inconsistent;
    size_t budget;
    /* which symbol an equality may replace, and by what (NULL: any) */
    bool (*may_replace)(void *user, const sg_expr *sym, const sg_expr *value);
    void *policy_user;
    /* caches, valid until the facts change */
    sg__range_cache *rcache;
    sg__idmap known_memo; /* query id -> truth | epoch << 2: a decided answer stays
                             right as facts are added; an undecided one only in its epoch */
    size_t epoch;         /* bumped by every fact added */
};

/* A copy of f whose replacements follow the given policy. */
sg_status sg__facts_copy_policy(sg_facts **out, const sg_facts *f,
                                bool (*may_replace)(void *, const sg_expr *, const sg_expr *), void *user);
/* The linear facts (indexes into f->lin) that monomial m appears in. */
typedef struct sg__occ {
    size_t *v;
    size_t n, cap;
} sg__occ;
const sg__occ *sg__facts_occurrences(const sg_facts *f, const sg_expr *m);
/* An axiom of the facts? (hash lookup) */
bool sg__facts_is_axiom(const sg_facts *f, const sg_expr *q);

/* Set the replacement policy (copies keep it, with the same user pointer). */
void sg__facts_set_policy(sg_facts *f, bool (*may_replace)(void *, const sg_expr *, const sg_expr *), void *user);
/* Forget every fact after the first n and derive again. */
bool sg__facts_truncate(sg_facts *f, size_t n);

/* Apply the replacements to e. */
const sg_expr *sg__facts_replace(sg_facts *f, const sg_expr *e);
/* The bounds the facts give an atom, or NULL. */
const sg__iv *sg__facts_bound(const sg_facts *f, const sg_expr *atom);
/* The range callback of the facts (sg__atom_range_fn): an atom's bounds. */
bool sg__facts_atom_range(void *user, const sg_expr *atom, sg__iv *out);
/* The range of e under the facts (cached). */
sg_status sg__facts_range(sg_facts *f, const sg_expr *e, sg__iv *out);
/* The truth of q, spending at most *budget units. */
sg_truth sg__facts_known(sg_facts *f, const sg_expr *q, size_t *budget, int depth);
/* The same for a question whose answer, if provable, can only be `want`
 * (the caller knows a point where the facts hold and q is want): the
 * impossible proof is not tried. Not remembered. */
sg_truth sg__facts_known_want(sg_facts *f, const sg_expr *q, bool want);
/* Forget every cached answer (facts were removed, or the budget changed). */
void sg__facts_invalidate(sg_facts *f);
/* Facts were added: ranges are recomputed, decided answers kept. */
void sg__facts_grown(sg_facts *f);

/* Is p >= 0 (or p == 0 when eq) implied by the facts? Fourier-Motzkin with
 * integer tightening over the atoms of p and of the facts that share atoms
 * with it. SG_TRUE: proved; SG_UNKNOWN otherwise (never SG_FALSE). */
sg_truth sg__fm_implies(sg_facts *f, const sg_expr *p, bool eq, size_t *budget);
/* Are the facts together with p >= 0 (p == 0 when eq) infeasible? */
sg_truth sg__fm_refutes(sg_facts *f, const sg_expr *p, bool eq, size_t *budget);

#endif /* SG_REASON_PRIVATE_H */
