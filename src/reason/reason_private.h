/* The reasoning layer, internal: the fact base (facts.c) and the questions
 * asked of it (query.c), above the decision procedure (fm.h). */
#ifndef SG_REASON_PRIVATE_H
#define SG_REASON_PRIVATE_H

#include "reason/fm.h"
#include "shapeguard/reason.h"

#define SG_DEFAULT_BUDGET 4000

/* A growable list of expressions. */
typedef struct sg__list {
    const sg_expr **v;
    size_t n, cap;
} sg__list;

bool sg__list_push(sg_ctx *ctx, sg__list *l, const sg_expr *e);
void sg__list_free(sg__list *l);

/* A signature of the symbols of an expression: one bit per symbol, chosen
 * by a hash of its id (a clear bit: the symbol does not occur). */
typedef size_t sg__sig;

/* What one fact gave when it was last processed. */
typedef struct sg__fstate {
    const sg_expr *form;   /* the fact with the replacements applied */
    sg__sig sig;           /* the signature of form */
    size_t lin_lo, lin_hi; /* the linear facts it gave: lin[lin_lo .. lin_hi) */
} sg__fstate;

struct sg_facts {
    sg_ctx *ctx;
    sg__list facts;   /* every fact, as assumed */
    /* What the facts give. Facts are processed in order; a new replacement
     * x := v processes again only the facts whose forms mention x (their
     * earlier linear facts are dropped: NULL in lin; the bounds and axioms
     * they gave stay, as they still hold), and forgets only the replaced
     * forms that mention x. A truncation or a copy derives everything again. */
    sg__fstate *fst;     /* per fact processed so far */
    size_t nfst, capfst;
    sg__idmap sigs;      /* node id -> signature (nodes never change) */
    sg__list rsym, rval; /* replacements: symbol -> expression without replaced symbols */
    sg__idmap rmap;      /* replaced symbol id -> index in rval */
    sg__nodememo rmemo;  /* expressions with the replacements applied (NULL: forgotten) */
    sg__sig *rsig;       /* the signature of each value in rmemo */
    size_t caprsig, rdead; /* entries of rmemo forgotten one by one */
    sg__idmap bidx;      /* atom id -> index in batom/biv */
    sg__list batom;
    sg__iv *biv;
    size_t capbiv;
    sg__idmap neidx;     /* atom id -> index in nes */
    sg__list *nes;       /* per atom: its p != 0 facts, applied to bounds at their ends */
    size_t nnes, capnes;
    sg__list touched;    /* atoms whose bounds moved since the last propagation */
    sg__list lin;        /* GE0 / EQ0 facts for the decision procedure (NULL: dropped) */
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
    sg__idmap known_memo; /* query id -> truth | record << 2: a decided answer stays
                             right as facts are added; an undecided one while nothing
                             its work read has changed (see the records below) */
    size_t epoch;         /* bumped by every fact added */
    size_t last_stamp;    /* the latest epoch of a stamp below */
    sg__idmap stamp;      /* symbol id -> the epoch that replaced the symbol */
    sg__idmap nstamp;     /* node id -> the last epoch that changed the bounds of the
                             atom, dropped a linear fact the monomial is in, or made
                             the node an axiom */
    sg__idmap astamp;     /* monomial id -> the last epoch that added a linear fact
                             with it (at the end of its occurrence list) */
    struct sg__undecided *und; /* records of the undecided answers remembered */
    size_t nund, capund;
    sg__list uread;       /* what they read (record: uread[off .. off + n)): monomials
                             whose occurrence lists they read whole, then symbols,
                             atoms, other nodes looked up */
    sg__list reads;       /* expressions the questions under way read (their symbols
                             and atoms, for replacements and ranges) */
    sg__list nreads;      /* nodes they looked up (axioms, first parts of occurrences) */
    sg__list oreads;      /* monomials whose occurrences they read whole */
    size_t kdepth;        /* questions under way, nested */
    sg__fm_scratch *fm;   /* the decision procedure's buffers, kept between its runs
                             (made by the first question that runs it) */
    bool reads_lost;      /* out of memory while recording reads */
    /* The largest lower bound of each symbol among the facts as assumed
     * (x >= c, x == c, alone or in a top-level And): what shifted_sign reads
     * for a symbol replaced since. Kept fact by fact (step), derived again
     * with everything else. alidx: symbol id -> index in alo. */
    sg__idmap alidx;
    fmpz *alo;
    size_t nalo, capalo;
    size_t lower_looks;   /* entries examined by sg__facts_assumed_lower, ever (unit
                             tests check it stays bounded as facts grow) */
};

/* An undecided answer, right while nothing it read has a later stamp. */
typedef struct sg__undecided {
    size_t epoch, off, nwhole, n;
} sg__undecided;

/* Where the reads of a question begin (in reads, nreads, oreads). */
typedef struct sg__readmark {
    size_t r, n, o;
} sg__readmark;

/* A copy of f whose replacements follow the given policy. */
sg_status sg__facts_copy_policy(sg_facts **out, const sg_facts *f,
                                bool (*may_replace)(void *, const sg_expr *, const sg_expr *), void *user);
/* The linear facts (indexes into f->lin) that monomial m appears in; some
 * may have been dropped since (f->lin.v[i] is NULL). */
typedef struct sg__occ {
    size_t *v;
    size_t n, cap;
} sg__occ;
const sg__occ *sg__facts_occurrences(const sg_facts *f, const sg_expr *m);
/* The question under way read the occurrences of m: all of them (whole), or
 * a first part (facts added later at the end cannot change what it read). */
void sg__facts_read_occurrences(sg_facts *f, const sg_expr *m, bool whole);
/* An axiom of the facts? (hash lookup) */
bool sg__facts_is_axiom(sg_facts *f, const sg_expr *q);

/* Set the replacement policy (copies keep it, with the same user pointer). */
void sg__facts_set_policy(sg_facts *f, bool (*may_replace)(void *, const sg_expr *, const sg_expr *), void *user);
/* Forget every fact after the first n and derive again. */
bool sg__facts_truncate(sg_facts *f, size_t n);

/* The largest lower bound of sym among the facts as assumed (x >= c,
 * x == c), into lo; false if there is none. A lookup, not a scan. */
bool sg__facts_assumed_lower(sg_facts *f, const sg_expr *sym, fmpz_t lo);

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
/* Record that the question under way read e: the replacements of its
 * symbols, the bounds of its atoms (nothing outside a question). */
void sg__facts_read(sg_facts *f, const sg_expr *e);
/* Where the reads of a question that begins now begin. */
sg__readmark sg__facts_read_mark(const sg_facts *f);
/* Remember what was read since mark as a record (*rec); false if it cannot
 * be remembered. */
bool sg__facts_remember_reads(sg_facts *f, sg__readmark mark, size_t *rec);
/* The end of a question: at the outermost, the reads are forgotten. */
void sg__facts_read_done(sg_facts *f);
/* Is undecided record rec still right? If so, what it read counts as read
 * by the question under way. */
bool sg__facts_undecided_holds(sg_facts *f, size_t rec);
/* Forget every cached answer (facts were removed, or the budget changed). */
void sg__facts_invalidate(sg_facts *f);
/* Facts were added: ranges are recomputed, decided answers kept. */
void sg__facts_grown(sg_facts *f);

#endif /* SG_REASON_PRIVATE_H */
