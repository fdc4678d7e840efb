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
#include <stdlib.h>

#include "reason/reason_private.h"

#define FM_MAX_VARS 32

/* fmpz_sgn without a call for the small values that dominate */
static inline int sgn(const fmpz *x)
{
    return COEFF_IS_MPZ(*x) ? fmpz_sgn(x) : (*x > 0) - (*x < 0);
}

typedef struct {
    sg_facts *f;
    const sg_expr *var[FM_MAX_VARS]; /* NULL for a fresh variable (a quotient) */
    size_t nvar;
    sg__idmap index;                 /* monomial id -> variable */
    fmpz **rows;                     /* nvar coefficients then the constant: sum a_j v_j + c >= 0 */
    size_t nrows, caprows;
    size_t *budget;
    bool overflow;                   /* too many variables or out of memory: give up */
} fm;

static void fm_init(fm *F, sg_facts *f, size_t *budget)
{
    F->f = f;
    F->nvar = 0;
    F->rows = NULL;
    F->nrows = F->caprows = 0;
    F->budget = budget;
    F->overflow = !sg__idmap_init(&F->index, 16);
}

static void row_free(fmpz *r)
{
    for (size_t j = 0; j <= FM_MAX_VARS; j++)
        fmpz_clear(r + j);
    free(r);
}

static void fm_clear(fm *F)
{
    for (size_t i = 0; i < F->nrows; i++)
        row_free(F->rows[i]);
    free(F->rows);
    sg__idmap_free(&F->index);
}

/* A zero row (every row has room for the largest number of variables). */
static fmpz *row_new(fm *F)
{
    fmpz *r = malloc((FM_MAX_VARS + 1) * sizeof *r);
    if (!r) {
        F->overflow = true;
        return NULL;
    }
    for (size_t j = 0; j <= FM_MAX_VARS; j++)
        fmpz_init(r + j);
    return r;
}

#define CONST FM_MAX_VARS /* index of the constant in a row */

static bool row_push(fm *F, fmpz *r)
{
    if (F->nrows == F->caprows) {
        size_t cap = F->caprows ? F->caprows * 2 : 32;
        fmpz **rows = realloc(F->rows, cap * sizeof *rows);
        if (!rows) {
            row_free(r);
            F->overflow = true;
            return false;
        }
        F->rows = rows;
        F->caprows = cap;
    }
    F->rows[F->nrows++] = r;
    return true;
}

/* The variable of monomial m, made if new (-1 when there is no room). */
static int var_of(fm *F, const sg_expr *m)
{
    size_t *i = sg__idmap_find(&F->index, m->id);
    if (i)
        return (int)*i;
    if (F->nvar == FM_MAX_VARS || !sg__idmap_put(&F->index, m->id, F->nvar)) {
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
        row_free(r);
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
            row_free(r);
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
    bool ok = sg__facts_range(F->f, m, &r) == SG_OK;
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
            /* m = A - d*q: rows m - A + d*q >= 0 and A - d*q - m >= 0 */
            int q = fresh_var(F);
            if (q < 0 || !add_quotient_def(F, q, m->args[0], &m->args[1]->u.val))
                return false;
            for (int side = 0; side < 2; side++) {
                fmpz *row = row_new(F);
                if (!row)
                    return false;
                fmpz_t k;
                fmpz_init_set_si(k, side ? 1 : -1);
                ok = row_addmul(F, row, k, m->args[0]);
                fmpz_clear(k);
                if (!ok) {
                    row_free(row);
                    return false;
                }
                /* side 0: m - A + d*q >= 0; side 1: A - m - d*q >= 0 */
                fmpz_add_si(row + v, row + v, side ? -1 : 1);
                if (side)
                    fmpz_sub(row + q, row + q, &m->args[1]->u.val);
                else
                    fmpz_add(row + q, row + q, &m->args[1]->u.val);
                if (!row_push(F, row))
                    return false;
            }
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

static bool row_uses(const fmpz *r, size_t nvar)
{
    for (size_t j = 0; j < nvar; j++)
        if (r[j] != 0) /* a zero fmpz is the word 0 */
            return true;
    return false;
}

/* Monomials of p not yet variables. */
static size_t new_vars(fm *F, const sg_expr *p)
{
    if (p->op == SG_OP_INT)
        return 0;
    if (p->op != SG_OP_ADD)
        return sg__idmap_find(&F->index, p->id) ? 0 : 1;
    size_t k = 0;
    for (size_t i = 0; i < p->nargs; i++)
        k += sg__idmap_find(&F->index, p->args[i]->id) ? 0 : 1;
    return k;
}

#define FM_MAX_FACTS 48

/* Breadth first from the question's variables: for each variable, its
 * bounds and definition, then the linear facts it appears in (through the
 * occurrence index), whose new variables join the queue. A fact that would
 * need more variables than there is room for is left out: fewer facts only
 * make the procedure weaker, never wrong. */
static bool gather(fm *F)
{
    sg_facts *f = F->f;
    bool *used = calloc(f->lin.n ? f->lin.n : 1, sizeof *used);
    if (!used) {
        F->overflow = true;
        return false;
    }
    size_t nfacts = 0;
    bool ok = true;
    for (size_t v = 0; v < F->nvar && ok && !F->overflow; v++) {
        ok = add_var_facts(F, v);
        const sg_expr *m = F->var[v];
        const sg__occ *o = m ? sg__facts_occurrences(f, m) : NULL;
        for (size_t k = 0; o && k < o->n && ok && nfacts < FM_MAX_FACTS; k++) {
            size_t l = o->v[k];
            const sg_expr *p = f->lin.v[l]->args[0];
            if (used[l] || F->nvar + new_vars(F, p) > FM_MAX_VARS - 4) /* keep room for quotients */
                continue;
            used[l] = true;
            nfacts++;
            bool eq = f->lin.v[l]->op == SG_OP_EQ0;
            ok = add_constraint(F, p, 1, NULL, 0, 0) && (!eq || add_constraint(F, p, -1, NULL, 0, 0));
        }
    }
    free(used);
    return ok && !F->overflow;
}

static void tighten(fmpz *r, size_t nvar)
{
    fmpz_t g;
    fmpz_init(g);
    for (size_t j = 0; j < nvar && !fmpz_is_one(g); j++)
        fmpz_gcd(g, g, r + j);
    if (!fmpz_is_zero(g) && !fmpz_is_one(g)) {
        for (size_t j = 0; j < nvar; j++)
            fmpz_divexact(r + j, r + j, g);
        fmpz_fdiv_q(r + CONST, r + CONST, g);
    }
    fmpz_clear(g);
}

/* Are the rows infeasible over the integers? SG_TRUE if proved. */
static sg_truth eliminate(fm *F)
{
    size_t nvar = F->nvar;
    bool *gone = calloc(nvar ? nvar : 1, sizeof *gone);
    if (!gone)
        return SG_UNKNOWN;
    sg_truth result = SG_UNKNOWN;
    for (size_t i = 0; i < F->nrows; i++)
        tighten(F->rows[i], nvar);
    for (;;) {
        /* a row without variables and a negative constant: infeasible */
        for (size_t i = 0; i < F->nrows; i++)
            if (!row_uses(F->rows[i], nvar) && sgn(F->rows[i] + CONST) < 0) {
                result = SG_TRUE;
                goto done;
            }
        /* the variable whose elimination makes the fewest rows */
        size_t best = SIZE_MAX, bestcost = SIZE_MAX;
        for (size_t v = 0; v < nvar; v++) {
            if (gone[v])
                continue;
            size_t p = 0, n = 0;
            for (size_t i = 0; i < F->nrows; i++) {
                int s = sgn(F->rows[i] + v);
                p += s > 0;
                n += s < 0;
            }
            size_t cost = p * n;
            if (cost < bestcost || best == SIZE_MAX)
                best = v, bestcost = cost;
        }
        if (best == SIZE_MAX)
            break;
        gone[best] = true;
        if (bestcost > *F->budget) {
            *F->budget = 0;
            goto done;
        }
        *F->budget -= bestcost;
        /* rows without the variable stay; pairs of opposite signs combine;
         * with one sign only, those rows can always be satisfied: dropped */
        fmpz **out = malloc((F->nrows + bestcost + 1) * sizeof *out);
        if (!out)
            goto done;
        size_t k = 0;
        fmpz_t a, b;
        fmpz_init(a);
        fmpz_init(b);
        bool ok = true;
        for (size_t i = 0; i < F->nrows && ok; i++) {
            if (sgn(F->rows[i] + best) >= 0)
                continue;
            for (size_t j = 0; j < F->nrows && ok; j++) {
                if (sgn(F->rows[j] + best) <= 0)
                    continue;
                /* row_i has -a (a > 0), row_j has b > 0: b*row_i + a*row_j */
                fmpz_neg(a, F->rows[i] + best);
                fmpz_set(b, F->rows[j] + best);
                fmpz *r = row_new(F);
                if (!r) {
                    ok = false;
                    break;
                }
                for (size_t t = 0; t < nvar; t++) {
                    fmpz_mul(r + t, b, F->rows[i] + t);
                    fmpz_addmul(r + t, a, F->rows[j] + t);
                }
                fmpz_mul(r + CONST, b, F->rows[i] + CONST);
                fmpz_addmul(r + CONST, a, F->rows[j] + CONST);
                tighten(r, nvar);
                out[k++] = r;
            }
        }
        fmpz_clear(a);
        fmpz_clear(b);
        for (size_t i = 0; i < F->nrows; i++) {
            if (ok && fmpz_is_zero(F->rows[i] + best))
                out[k++] = F->rows[i];
            else
                row_free(F->rows[i]);
        }
        free(F->rows);
        F->rows = out;
        F->nrows = k;
        F->caprows = k;
        if (!ok)
            goto done;
    }
done:
    free(gone);
    return result;
}

/* Is the set {facts, k*p + c >= 0 (and -(k*p + c) >= 0 when eq)} infeasible? */
static sg_truth infeasible_with(sg_facts *f, const sg_expr *p, slong k, slong c, bool eq, size_t *budget)
{
    if (p->op == SG_OP_INT)
        return SG_UNKNOWN;
    fm F;
    fm_init(&F, f, budget);
    sg_truth t = SG_UNKNOWN;
    if (!F.overflow && add_constraint(&F, p, k, NULL, 0, c) && (!eq || add_constraint(&F, p, -k, NULL, 0, -c)) &&
        gather(&F))
        t = eliminate(&F);
    fm_clear(&F);
    return t;
}

sg_truth sg__fm_implies(sg_facts *f, const sg_expr *p, bool eq, size_t *budget)
{
    /* p >= 0 follows iff facts + (-p - 1 >= 0) is infeasible; for p == 0 also p - 1 >= 0 */
    if (infeasible_with(f, p, -1, -1, false, budget) != SG_TRUE)
        return SG_UNKNOWN;
    if (eq && infeasible_with(f, p, 1, -1, false, budget) != SG_TRUE)
        return SG_UNKNOWN;
    return SG_TRUE;
}

sg_truth sg__fm_refutes(sg_facts *f, const sg_expr *p, bool eq, size_t *budget)
{
    return infeasible_with(f, p, 1, 0, eq, budget);
}
