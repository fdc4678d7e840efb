/* Value ranges (interval analysis), internal interface. An interval of
 * integers with infinite ends, or a boolean range (lo, hi in {0, 1}:
 * [false, false], [true, true], [false, true]). Every function is sound:
 * each value the expression takes, where the atom ranges hold, lies inside
 * the result. */
#ifndef SG_RANGE_PRIVATE_H
#define SG_RANGE_PRIVATE_H

#include "expr/expr_private.h"

typedef struct sg__iv {
    fmpz lo, hi;     /* meaningful only where the end is finite */
    bool lo_inf;     /* lo is -oo */
    bool hi_inf;     /* hi is +oo */
} sg__iv;

void sg__iv_init(sg__iv *r);   /* [-oo, oo] */
void sg__iv_clear(sg__iv *r);
void sg__iv_set(sg__iv *r, const sg__iv *a);
void sg__iv_set_full(sg__iv *r);                      /* [-oo, oo] */
void sg__iv_set_bool(sg__iv *r, bool can_false, bool can_true); /* [0,0], [1,1] or [0,1] */
void sg__iv_set_point(sg__iv *r, const fmpz_t v);     /* [v, v] */
void sg__iv_set_si(sg__iv *r, bool lo_inf, slong lo, bool hi_inf, slong hi);
/* r = r intersected with a. Returns false if empty (r is then unspecified):
 * an empty range means the atom ranges contradict each other. */
bool sg__iv_meet(sg__iv *r, const sg__iv *a);
bool sg__iv_is_point(const sg__iv *r);
bool sg__iv_contains(const sg__iv *r, const fmpz_t v);
bool sg__iv_equal(const sg__iv *a, const sg__iv *b);

/* The range of an atom known to the caller (a symbol's bounds from the facts,
 * or a bound on any other atom). Return true and set *out to use it (it is
 * intersected with what the structure of the atom gives); false if the
 * caller knows nothing (a symbol is then [-oo, oo]). */
typedef bool (*sg__atom_range_fn)(void *user, const sg_expr *atom, sg__iv *out);

/* A cache of ranges by node id, valid for one atom_range function and one
 * state of what it knows: the owner clears it whenever that changes. */
typedef struct sg__range_cache sg__range_cache;
sg__range_cache *sg__range_cache_new(sg_ctx *ctx);
void sg__range_cache_clear(sg__range_cache *c);
void sg__range_cache_free(sg__range_cache *c);

/* The range of e (integer or boolean). fn may be NULL (every symbol is
 * [-oo, oo]); cache may be NULL. Errors: SG_ENOMEM only (an operation the
 * analysis cannot bound gives [-oo, oo], never an error). */
sg_status sg__range(sg_ctx *ctx, const sg_expr *e, sg__atom_range_fn fn, void *user, sg__range_cache *cache,
                    sg__iv *out);

#endif /* SG_RANGE_PRIVATE_H */
