/* A decision procedure for linear facts: Fourier-Motzkin elimination with
 * integer tightening. Monomials (atoms and products) are the variables. To
 * prove p >= 0 it refutes the facts together with -p - 1 >= 0: a nonnegative
 * combination of valid constraints is valid for every integer point, and so
 * is its tightening (dividing by the gcd of the coefficients and flooring the
 * constant), so a derived 0 >= c with c < 0 shows that no integer point
 * satisfies them all. Only the facts connected to the question (sharing
 * variables, transitively) take part. Definitions of atoms add valid
 * constraints: d*q <= A <= d*q + d - 1 for q = A // d, m = A - d*q for
 * m = A % d, M >= a_i for M = Max(...), M <= a_i for Min, t >= a and t >= -a
 * for t = Abs(a); the facts' bounds of every variable are added too. */
#include <flint/ulong_extras.h>
#include <stdlib.h>
#include <string.h>

#include "reason/fm.h"

#define FM_MAX_VARS 32

/* fmpz_sgn without a call for the small values that dominate */
static inline int sgn(const fmpz *x)
{
    return COEFF_IS_MPZ(*x) ? fmpz_sgn(x) : (*x > 0) - (*x < 0);
}

/* A row: FM_MAX_VARS coefficients, the constant, then two words that are
 * not fmpz: the row's hash once eliminate has taken it (0 before), and the
 * mask of its variables with a nonzero coefficient (bit v for variable v).
 * The mask is worked out by eliminate for the rows it starts from and kept
 * exact for the rows it makes; before that it is 0, and a row whose mask is
 * 0 is read whole. */
#define CONST FM_MAX_VARS
#define HASH (FM_MAX_VARS + 1)
#define MASK (FM_MAX_VARS + 2)
#define ROW_WORDS (FM_MAX_VARS + 3)

/* The next variable of the mask m (nonzero), taken out of it. */
static inline size_t next_var(ulong *m)
{
    size_t v = (size_t)__builtin_ctzl(*m);
    *m &= *m - 1;
    return v;
}

/* The buffers of a run, kept in a scratch object for the next run: a run
 * makes and drops rows by the hundred, and malloc was a tenth of its time. */
typedef struct fm_buffers {
    fmpz **spare;                /* rows freed, for reuse (entries small) */
    size_t nspare, capspare;
    fmpz **rows, **next;         /* the rows, and those eliminate_var makes (swapped) */
    size_t caprows, capnext;
    size_t *posrows, capposrows; /* eliminate_var: the rows where the variable is positive */
    size_t *slot, capslot;       /* prune: a hash table of rows */
    sg__idmap index;             /* monomial id -> variable */
} fm_buffers;

struct sg__fm_scratch {
    fm_buffers b;
    bool busy; /* a run has the buffers (a run nested in its gathering makes its own) */
};

typedef struct {
    const sg__fm_source *src;
    fm_buffers b;                /* b.rows[0 .. nrows): nvar coefficients then the
                                        constant, sum a_j v_j + c >= 0 */
    bool borrowed;                   /* b is the scratch's, given back at the end */
    const sg_expr *var[FM_MAX_VARS]; /* NULL for a fresh variable (a quotient) */
    size_t nvar, nrows;
    size_t pos[FM_MAX_VARS], neg[FM_MAX_VARS]; /* eliminate: rows with each sign, per variable */
    size_t *budget;
    bool overflow;                   /* too many variables or out of memory: give up */
} fm;

#define FM_KEEP_SPARE 4096 /* rows kept between runs, at most */

static void fm_init(fm *F, const sg__fm_source *src, size_t *budget)
{
    sg_ctx *ctx = src->ctx;
    memset(F, 0, sizeof *F);
    F->src = src;
    F->budget = budget;
    if (src->scratch && !src->scratch->busy) { /* the scratch's buffers, unless a run has them */
        F->b = src->scratch->b;
        F->borrowed = src->scratch->busy = true;
    }
    if (F->b.index.cap)
        sg__idmap_reset(&F->b.index);
    else
        F->overflow = !sg__idmap_init(ctx, &F->b.index, 16);
}

static void clear_large(fmpz *x)
{
    if (COEFF_IS_MPZ(*x)) {
        fmpz_clear(x);
        *x = 0;
    }
}

/* Release a row: kept for reuse, its large entries cleared (only the first
 * nvar coefficients and the constant are ever set). */
static void row_free(fm *F, fmpz *r)
{
    sg_ctx *ctx = F->src->ctx;
    if (r[MASK])
        for (ulong m = (ulong)r[MASK]; m;)
            clear_large(r + next_var(&m));
    else
        for (size_t j = 0; j < F->nvar; j++)
            clear_large(r + j);
    clear_large(r + CONST);
    if (!sg__grow(ctx, (void **)&F->b.spare, &F->b.capspare, F->b.nspare + 1, sizeof *F->b.spare)) {
        sg_free(r);
        return;
    }
    F->b.spare[F->b.nspare++] = r;
}

static void buffers_free(fm_buffers *b)
{
    for (size_t i = 0; i < b->nspare; i++)
        sg_free(b->spare[i]);
    sg_free(b->spare);
    sg_free(b->rows);
    sg_free(b->next);
    sg_free(b->slot);
    sg_free(b->posrows);
    sg__idmap_free(&b->index);
    memset(b, 0, sizeof *b);
}

/* The end of a run: its rows go back to the spares, and its buffers back
 * to the scratch (or freed, if they were its own). */
static void fm_clear(fm *F)
{
    for (size_t i = 0; i < F->nrows; i++)
        row_free(F, F->b.rows[i]);
    while (F->b.nspare > FM_KEEP_SPARE)
        sg_free(F->b.spare[--F->b.nspare]);
    if (!F->borrowed) {
        buffers_free(&F->b);
        return;
    }
    F->src->scratch->b = F->b;
    F->src->scratch->busy = false;
}

sg__fm_scratch *sg__fm_scratch_new(sg_ctx *ctx)
{
    return sg__calloc(ctx, 1, sizeof(sg__fm_scratch));
}

void sg__fm_scratch_free(sg__fm_scratch *s)
{
    if (!s)
        return;
    buffers_free(&s->b);
    sg_free(s);
}

/* A zero row (every row has room for the largest number of variables; a
 * zero fmpz is the word 0). */
static fmpz *row_new(fm *F)
{
    sg_ctx *ctx = F->src->ctx;
    fmpz *r = F->b.nspare ? F->b.spare[--F->b.nspare] : sg__malloc(ctx, ROW_WORDS * sizeof *r);
    if (!r) {
        F->overflow = true;
        return NULL;
    }
    memset(r, 0, ROW_WORDS * sizeof *r);
    return r;
}

static bool row_push(fm *F, fmpz *r)
{
    sg_ctx *ctx = F->src->ctx;
    if (!sg__grow(ctx, (void **)&F->b.rows, &F->b.caprows, F->nrows + 1, sizeof *F->b.rows)) {
        row_free(F, r);
        F->overflow = true;
        return false;
    }
    F->b.rows[F->nrows++] = r;
    return true;
}

/* The variable of monomial m, made if new (-1 when there is no room). */
static int var_of(fm *F, const sg_expr *m)
{
    size_t *i = sg__idmap_find(&F->b.index, m->id);
    if (i)
        return (int)*i;
    if (F->nvar == FM_MAX_VARS || !sg__idmap_put(&F->b.index, m->id, F->nvar)) {
        F->overflow = true;
        return -1;
    }
    F->var[F->nvar] = m;
    return (int)F->nvar++;
}

static int fresh_var(fm *F)
{
    if (F->nvar == FM_MAX_VARS) {
        F->overflow = true;
        return -1;
    }
    F->var[F->nvar] = NULL;
    return (int)F->nvar++;
}

/* r += k * p (p an integer expression). */
static bool row_addmul(fm *F, fmpz *r, const fmpz_t k, const sg_expr *p)
{
    if (p->op == SG_OP_INT) {
        fmpz_addmul(r + CONST, k, &p->u.val);
        return true;
    }
    if (p->op != SG_OP_ADD) {
        int v = var_of(F, p);
        if (v < 0)
            return false;
        fmpz_add(r + v, r + v, k);
        return true;
    }
    fmpz_addmul(r + CONST, k, &p->u.val);
    for (size_t i = 0; i < p->nargs; i++) {
        int v = var_of(F, p->args[i]);
        if (v < 0)
            return false;
        fmpz_addmul(r + v, k, sg__nums(p) + i);
    }
    return true;
}

/* Add k1*p1 + k2*p2 + c >= 0 (p2 may be NULL). */
static bool add_constraint(fm *F, const sg_expr *p1, slong k1, const sg_expr *p2, slong k2, slong c)
{
    fmpz *r = row_new(F);
    if (!r)
        return false;
    fmpz_t k;
    fmpz_init_set_si(k, k1);
    bool ok = row_addmul(F, r, k, p1);
    if (ok && p2) {
        fmpz_set_si(k, k2);
        ok = row_addmul(F, r, k, p2);
    }
    fmpz_add_si(r + CONST, r + CONST, c);
    fmpz_clear(k);
    if (!ok) {
        row_free(F, r);
        return false;
    }
    return row_push(F, r);
}

/* Rows for fresh-variable definitions: q = A // d as d*q <= A <= d*q + d - 1. */
static bool add_quotient_def(fm *F, int q, const sg_expr *A, const fmpz_t d)
{
    for (int side = 0; side < 2; side++) {
        fmpz *r = row_new(F);
        if (!r)
            return false;
        fmpz_t one;
        fmpz_init_set_si(one, side ? -1 : 1);
        bool ok = row_addmul(F, r, one, A);
        fmpz_clear(one);
        if (!ok) {
            row_free(F, r);
            return false;
        }
        if (side == 0) { /* A - d*q >= 0 */
            fmpz_sub(r + q, r + q, d);
        } else {         /* d*q + d - 1 - A >= 0 */
            fmpz_add(r + q, r + q, d);
            fmpz_add(r + CONST, r + CONST, d);
            fmpz_sub_ui(r + CONST, r + CONST, 1);
        }
        if (!row_push(F, r))
            return false;
    }
    return true;
}

/* Definitions and bounds of variable v (added once per variable). */
static bool add_var_facts(fm *F, size_t v)
{
    const sg_expr *m = F->var[v];
    if (!m)
        return true;
    sg__iv r;
    sg__iv_init(&r);
    bool ok = F->src->range(F->src->user, m, &r) == SG_OK;
    if (ok && !r.lo_inf) { /* m - lo >= 0 */
        fmpz *row = row_new(F);
        ok = row != NULL;
        if (ok) {
            fmpz_one(row + v);
            fmpz_neg(row + CONST, &r.lo);
            ok = row_push(F, row);
        }
    }
    if (ok && !r.hi_inf) { /* hi - m >= 0 */
        fmpz *row = row_new(F);
        ok = row != NULL;
        if (ok) {
            fmpz_set_si(row + v, -1);
            fmpz_set(row + CONST, &r.hi);
            ok = row_push(F, row);
        }
    }
    sg__iv_clear(&r);
    if (!ok)
        return false;
    switch ((sg_op)m->op) {
    case SG_OP_FLOORDIV:
        if (m->args[1]->op == SG_OP_INT && fmpz_sgn(&m->args[1]->u.val) > 0)
            return add_quotient_def(F, (int)v, m->args[0], &m->args[1]->u.val);
        return true;
    case SG_OP_MOD:
        if (m->args[1]->op == SG_OP_INT && fmpz_sgn(&m->args[1]->u.val) > 0) {
            /* m = A - d*(A // d), with A // d in its canonical form E (an atom,
             * or an expression over atoms such as a + b - (a + 7*b + 7) // 8):
             * rows m - A + d*E >= 0 and A - d*E - m >= 0, so what is known of
             * the atoms of E is known of m; a fresh quotient where E cannot be
             * made */
            const sg_expr *E = sg__floordiv(F->src->ctx, m->args[0], m->args[1]);
            int q = -1;
            if (!E && ((q = fresh_var(F)) < 0 || !add_quotient_def(F, q, m->args[0], &m->args[1]->u.val)))
                return false;
            fmpz_t k;
            fmpz_init(k);
            for (int side = 0; side < 2; side++) {
                fmpz *row = row_new(F);
                if (!row) {
                    fmpz_clear(k);
                    return false;
                }
                fmpz_set_si(k, side ? 1 : -1);
                ok = row_addmul(F, row, k, m->args[0]); /* -A (side 0), A (side 1) */
                fmpz_mul(k, k, &m->args[1]->u.val);
                fmpz_neg(k, k);
                if (ok && E)
                    ok = row_addmul(F, row, k, E); /* +d*E (side 0), -d*E (side 1) */
                if (ok && !E)
                    fmpz_add(row + q, row + q, k);
                fmpz_add_si(row + v, row + v, side ? -1 : 1);
                if (!ok) {
                    row_free(F, row);
                    fmpz_clear(k);
                    return false;
                }
                if (!row_push(F, row)) {
                    fmpz_clear(k);
                    return false;
                }
            }
            fmpz_clear(k);
        }
        return true;
    case SG_OP_MAX:
    case SG_OP_MIN:
        for (size_t i = 0; i < m->nargs; i++) /* Max: M - a >= 0; Min: a - M >= 0 */
            if (!add_constraint(F, m, m->op == SG_OP_MAX ? 1 : -1, m->args[i], m->op == SG_OP_MAX ? -1 : 1, 0))
                return false;
        return true;
    case SG_OP_ABS:
        return add_constraint(F, m, 1, m->args[0], -1, 0) && add_constraint(F, m, 1, m->args[0], 1, 0);
    default:
        return true;
    }
}

/* Monomials of p not yet variables. */
static size_t new_vars(fm *F, const sg_expr *p)
{
    if (p->op == SG_OP_INT)
        return 0;
    if (p->op != SG_OP_ADD)
        return sg__idmap_find(&F->b.index, p->id) ? 0 : 1;
    size_t k = 0;
    for (size_t i = 0; i < p->nargs; i++)
        k += sg__idmap_find(&F->b.index, p->args[i]->id) ? 0 : 1;
    return k;
}

#define FM_MAX_FACTS 48

#define FM_TAKEN_SLOTS 128 /* a power of two, more than twice FM_MAX_FACTS */

/* Is linear fact l among the taken (a set of l + 1, 0 for a free slot)?
 * If not and take, it is added. */
static bool taken(size_t *set, size_t l, bool take)
{
    size_t at = (l * 2654435761u) & (FM_TAKEN_SLOTS - 1);
    for (; set[at]; at = (at + 1) & (FM_TAKEN_SLOTS - 1))
        if (set[at] == l + 1)
            return true;
    if (take)
        set[at] = l + 1;
    return false;
}

/* Breadth first from the question's variables: for each variable, its
 * bounds and definition, then the linear facts it appears in (through the
 * occurrence index), whose new variables join the queue. A fact that would
 * need more variables than there is room for is left out: fewer facts only
 * make the procedure weaker, never wrong. */
static bool gather(fm *F)
{
    const sg__fm_source *src = F->src;
    size_t used[FM_TAKEN_SLOTS] = {0};
    size_t nfacts = 0;
    bool ok = true;
    for (size_t v = 0; v < F->nvar && ok && !F->overflow; v++) {
        ok = add_var_facts(F, v);
        const sg_expr *m = F->var[v];
        if (!m || nfacts == FM_MAX_FACTS)
            continue;
        size_t n = 0, k = 0;
        const size_t *occ = src->occurrences(src->user, m, &n);
        for (; k < n && ok && nfacts < FM_MAX_FACTS; k++) {
            size_t l = occ[k];
            const sg_expr *fact = src->linear(src->user, l);
            if (!fact || taken(used, l, false)) /* dropped, or taken */
                continue;
            const sg_expr *p = fact->args[0];
            if (F->nvar + new_vars(F, p) > FM_MAX_VARS - 4) /* keep room for quotients */
                continue;
            taken(used, l, true);
            nfacts++;
            bool eq = fact->op == SG_OP_EQ0;
            ok = add_constraint(F, p, 1, NULL, 0, 0) && (!eq || add_constraint(F, p, -1, NULL, 0, 0));
        }
        src->read_occurrences(src->user, m, k == n);
    }
    return ok && !F->overflow;
}

/* r = b*x + a*y, without calls when every value is small. */
static inline void combine(fmpz *r, const fmpz *b, const fmpz *x, const fmpz *a, const fmpz *y)
{
#if defined(__GNUC__)
    slong p, q, t;
    if (!COEFF_IS_MPZ(*a) && !COEFF_IS_MPZ(*b) && !COEFF_IS_MPZ(*x) && !COEFF_IS_MPZ(*y) && !COEFF_IS_MPZ(*r) &&
        !__builtin_mul_overflow(*b, *x, &p) && !__builtin_mul_overflow(*a, *y, &q) &&
        !__builtin_add_overflow(p, q, &t) && t >= COEFF_MIN && t <= COEFF_MAX) {
        *r = t;
        return;
    }
#endif
    fmpz_mul(r, b, x);
    fmpz_addmul(r, a, y);
}

/* The gcd g of the entries of r's mask, all small: false if one is large. */
static bool small_content(const fmpz *r, ulong *g)
{
    *g = 0;
    for (ulong m = (ulong)r[MASK]; m && *g != 1;) {
        size_t j = next_var(&m);
        if (COEFF_IS_MPZ(r[j]))
            return false;
        *g = n_gcd(*g, (ulong)(r[j] < 0 ? -r[j] : r[j]));
    }
    return true;
}

/* Divide the coefficients by their gcd and floor the constant (the mask is
 * exact: a zero coefficient stays zero). */
static void tighten(fmpz *r)
{
    ulong w;
    if (small_content(r, &w)) {
        if (w <= 1)
            return;
        for (ulong m = (ulong)r[MASK]; m;) {
            size_t j = next_var(&m);
            r[j] /= (slong)w;
        }
        fmpz_fdiv_q_ui(r + CONST, r + CONST, w);
        return;
    }
    fmpz_t g;
    fmpz_init(g);
    for (ulong m = (ulong)r[MASK]; m && !fmpz_is_one(g);)
        fmpz_gcd(g, g, r + next_var(&m));
    if (!fmpz_is_zero(g) && !fmpz_is_one(g)) {
        for (ulong m = (ulong)r[MASK]; m;) {
            size_t j = next_var(&m);
            fmpz_divexact(r + j, r + j, g);
        }
        fmpz_fdiv_q(r + CONST, r + CONST, g);
    }
    fmpz_clear(g);
}

/* Count the signs of row r in F->pos and F->neg: add (d > 0) or remove it. */
static void count_signs(fm *F, const fmpz *r, int d)
{
    for (ulong m = (ulong)r[MASK]; m;) {
        size_t v = next_var(&m);
        size_t *c = sgn(r + v) > 0 ? &F->pos[v] : &F->neg[v];
        *c = d > 0 ? *c + 1 : *c - 1;
    }
}

/* The exact mask of r, from its first nvar coefficients. */
static void set_mask(fmpz *r, size_t nvar)
{
    ulong m = 0;
    for (size_t j = 0; j < nvar; j++)
        if (r[j]) /* a zero fmpz is the word 0 */
            m |= 1ul << j;
    r[MASK] = (slong)m;
}

static void drop_row(fm *F, fmpz *r)
{
    count_signs(F, r, -1);
    row_free(F, r);
}

static bool same_coefficients(const fmpz *r, const fmpz *s)
{
    if (r[HASH] != s[HASH] || r[MASK] != s[MASK])
        return false;
    for (ulong m = (ulong)r[MASK]; m;) {
        size_t j = next_var(&m);
        if (r[j] != s[j] && !fmpz_equal(r + j, s + j)) /* equal small values are equal words */
            return false;
    }
    return true;
}

static slong row_hash(const fmpz *r)
{
    ulong h = 14695981039346656037u ^ (ulong)r[MASK];
    for (ulong m = (ulong)r[MASK]; m;) {
        size_t j = next_var(&m);
        h = (h ^ (COEFF_IS_MPZ(r[j]) ? 1 : (ulong)r[j])) * 1099511628211u;
    }
    return (slong)(h | 1);
}

/* Drop the rows that another row implies: rows without variables that
 * hold (0 + c >= 0 with c >= 0), and each row with the same coefficients as
 * an earlier one, which keeps the smaller (stronger) constant. True if a
 * row without variables fails (c < 0): infeasible. Rows kept from the
 * last round (hashed already) have variables and are not duplicates. */
static bool prune(fm *F)
{
    sg_ctx *ctx = F->src->ctx;
    size_t cap = 16, bits = 4;
    while (cap < 2 * F->nrows)
        cap *= 2, bits++;
    if (cap > F->b.capslot) {
        sg_free(F->b.slot);
        F->b.slot = sg__malloc(ctx, cap * sizeof *F->b.slot);
        F->b.capslot = F->b.slot ? cap : 0;
    }
    size_t *slot = F->b.slot; /* 1 + index into the rows kept; 0: free */
    if (slot)
        memset(slot, 0, cap * sizeof *slot);
    bool infeasible = false;
    size_t k = 0;
    for (size_t i = 0; i < F->nrows; i++) {
        fmpz *r = F->b.rows[i];
        if (!r[HASH]) {
            if (!r[MASK]) { /* exact here: no variable */
                if (sgn(r + CONST) < 0) {
                    infeasible = true;
                    F->b.rows[k++] = r;
                } else {
                    row_free(F, r);
                }
                continue;
            }
            r[HASH] = row_hash(r);
        }
        if (slot) {
            size_t at = (size_t)(((ulong)r[HASH] * (ulong)0x9e3779b97f4a7c15ull) >> (FLINT_BITS - bits)); /* high bits */
            while (slot[at] && !same_coefficients(F->b.rows[slot[at] - 1], r))
                at = (at + 1) & (cap - 1);
            if (slot[at]) {
                fmpz *kept = F->b.rows[slot[at] - 1];
                if (fmpz_cmp(r + CONST, kept + CONST) < 0)
                    fmpz_set(kept + CONST, r + CONST);
                drop_row(F, r);
                continue;
            }
            slot[at] = k + 1;
        }
        F->b.rows[k++] = r;
    }
    F->nrows = k;
    return infeasible;
}

/* The variable whose elimination makes the fewest rows (SIZE_MAX when none
 * is left), and that number. */
static size_t cheapest_var(const fm *F, const bool *gone, size_t *cost)
{
    size_t best = SIZE_MAX;
    for (size_t v = 0; v < F->nvar; v++)
        if (!gone[v] && (best == SIZE_MAX || F->pos[v] * F->neg[v] < *cost)) {
            best = v;
            *cost = F->pos[v] * F->neg[v];
        }
    return best;
}

/* Eliminate variable v: rows without it stay; pairs of opposite signs
 * combine; with one sign only, those rows can always be satisfied: dropped.
 * False when out of memory. */
static bool eliminate_var(fm *F, size_t v, size_t cost)
{
    sg_ctx *ctx = F->src->ctx;
    size_t k = 0, npos = 0;
    if (!sg__grow(ctx, (void **)&F->b.next, &F->b.capnext, F->nrows + cost + 1, sizeof *F->b.next) ||
        !sg__grow(ctx, (void **)&F->b.posrows, &F->b.capposrows, F->pos[v] + 1, sizeof *F->b.posrows))
        return false;
    fmpz **out = F->b.next;
    size_t *pos = F->b.posrows;
    for (size_t j = 0; j < F->nrows && npos < F->pos[v]; j++)
        if (sgn(F->b.rows[j] + v) > 0)
            pos[npos++] = j;
    bool ok = true;
    for (size_t i = 0; i < F->nrows && ok; i++) {
        if (sgn(F->b.rows[i] + v) >= 0)
            continue;
        for (size_t p = 0; p < npos; p++) {
            size_t j = pos[p];
            /* row_i has -a (a > 0), row_j has b > 0: b*row_i + a*row_j */
            fmpz *r = row_new(F);
            if (!r) {
                ok = false;
                break;
            }
            fmpz_t a;
            fmpz_init(a);
            fmpz_neg(a, F->b.rows[i] + v);
            const fmpz *b = F->b.rows[j] + v;
            ulong both = ((ulong)F->b.rows[i][MASK] | (ulong)F->b.rows[j][MASK]) & ~(1ul << v), mask = 0;
            for (ulong m = both; m;) { /* r is 0 elsewhere already */
                size_t t = next_var(&m);
                combine(r + t, b, F->b.rows[i] + t, a, F->b.rows[j] + t);
                if (r[t])
                    mask |= 1ul << t;
            }
            r[MASK] = (slong)mask;
            combine(r + CONST, b, F->b.rows[i] + CONST, a, F->b.rows[j] + CONST);
            fmpz_clear(a);
            tighten(r);
            count_signs(F, r, 1);
            out[k++] = r;
        }
    }
    for (size_t i = 0; i < F->nrows; i++) {
        if (ok && fmpz_is_zero(F->b.rows[i] + v))
            out[k++] = F->b.rows[i];
        else
            drop_row(F, F->b.rows[i]);
    }
    F->b.next = F->b.rows; /* swapped: the old array holds the next step's rows */
    size_t cap = F->b.caprows;
    F->b.caprows = F->b.capnext;
    F->b.capnext = cap;
    F->b.rows = out;
    F->nrows = k;
    return ok;
}

/* Are the rows infeasible over the integers? SG_TRUE if proved. */
static sg_truth eliminate(fm *F)
{
    bool gone[FM_MAX_VARS] = {false};
    for (size_t v = 0; v < F->nvar; v++)
        F->pos[v] = F->neg[v] = 0;
    for (size_t i = 0; i < F->nrows; i++) {
        set_mask(F->b.rows[i], F->nvar);
        tighten(F->b.rows[i]);
        count_signs(F, F->b.rows[i], 1);
    }
    for (;;) {
        if (prune(F))
            return SG_TRUE;
        size_t cost = 0, best = cheapest_var(F, gone, &cost);
        if (best == SIZE_MAX)
            return SG_UNKNOWN;
        gone[best] = true;
        if (cost > *F->budget) {
            *F->budget = 0;
            return SG_UNKNOWN;
        }
        *F->budget -= cost;
        if (!eliminate_var(F, best, cost))
            return SG_UNKNOWN;
    }
}

/* Is the set {facts, k*p + c >= 0 (and -(k*p + c) >= 0 when eq)} infeasible? */
static sg_truth infeasible_with(const sg__fm_source *src, const sg_expr *p, slong k, slong c, bool eq,
                                size_t *budget)
{
    if (p->op == SG_OP_INT)
        return SG_UNKNOWN;
    fm F;
    fm_init(&F, src, budget);
    sg_truth t = SG_UNKNOWN;
    if (!F.overflow && add_constraint(&F, p, k, NULL, 0, c) && (!eq || add_constraint(&F, p, -k, NULL, 0, -c)) &&
        gather(&F))
        t = eliminate(&F);
    fm_clear(&F);
    return t;
}

sg_truth sg__fm_implies(const sg__fm_source *src, const sg_expr *p, bool eq, size_t *budget)
{
    /* p >= 0 follows iff facts + (-p - 1 >= 0) is infeasible; for p == 0 also p - 1 >= 0 */
    if (infeasible_with(src, p, -1, -1, false, budget) != SG_TRUE)
        return SG_UNKNOWN;
    if (eq && infeasible_with(src, p, 1, -1, false, budget) != SG_TRUE)
        return SG_UNKNOWN;
    return SG_TRUE;
}

sg_truth sg__fm_refutes(const sg__fm_source *src, const sg_expr *p, bool eq, size_t *budget)
{
    return infeasible_with(src, p, 1, 0, eq, budget);
}
