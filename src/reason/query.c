/* Questions to a fact base: ranges, truth, simplification. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reason/reason_private.h"

sg_status sg__facts_range(sg_facts *f, const sg_expr *e, sg__iv *out)
{
    sg__facts_read(f, e);
    return sg__range(f->ctx, e, sg__facts_atom_range, f, f->rcache, out);
}

static sg_truth truth_of_bool_range(const sg__iv *r)
{
    if (!sg__iv_is_point(r))
        return SG_UNKNOWN;
    return fmpz_is_zero(&r->lo) ? SG_FALSE : SG_TRUE;
}

/* ---- replacing one atom by a value (for case splits) ---- */

/* e with the node from replaced by to everywhere. */
typedef struct {
    sg_ctx *ctx;
    const sg_expr *from, *to;
    sg__nodememo memo;
} node_replacer;

static const sg_expr *replace_arg(void *user, const sg_expr *e)
{
    node_replacer *R = user;
    if (e == R->from)
        return R->to;
    if (e->nargs == 0)
        return e;
    const sg_expr *r = sg__nodememo_get(&R->memo, e);
    if (r)
        return r;
    r = sg__map_args(R->ctx, e, replace_arg, R);
    if (r && !sg__nodememo_put(R->ctx, &R->memo, e, r))
        return sg__nomem(R->ctx), NULL;
    return r;
}

static const sg_expr *replace_node(sg_ctx *ctx, const sg_expr *e, const sg_expr *from, const sg_expr *to)
{
    node_replacer R = {.ctx = ctx, .from = from, .to = to};
    const sg_expr *r = replace_arg(&R, e);
    sg__nodememo_free(&R.memo);
    return r;
}

/* The atom of q's integer parts (a symbol or any other atom) with the fewest
 * possible values (2 to max), or NULL. */
static void small_atom(sg_facts *f, const sg_expr *e, const sg_expr **best, slong *bestn, slong max, int depth)
{
    if (depth > 8)
        return;
    if (sg__is_atom(e)) {
        sg__iv r;
        sg__iv_init(&r);
        if (sg__facts_range(f, e, &r) == SG_OK && !r.lo_inf && !r.hi_inf) {
            fmpz_t w;
            fmpz_init(w);
            fmpz_sub(w, &r.hi, &r.lo);
            if (fmpz_cmp_si(w, max) < 0 && fmpz_sgn(w) > 0 && (!*best || fmpz_get_si(w) + 1 < *bestn)) {
                *best = e;
                *bestn = fmpz_get_si(w) + 1;
            }
            fmpz_clear(w);
        }
        sg__iv_clear(&r);
    }
    if (e->op == SG_OP_SYM)
        return;
    for (size_t i = 0; i < e->nargs; i++)
        small_atom(f, e->args[i], best, bestn, max, depth + 1);
}

#define SG_SPLIT_MAX 16

/* Try every value of the atom of q with the fewest values: q holds (fails)
 * if it holds (fails) for each. Sound: at every point the atom takes one of
 * those values, and each case is decided from the facts alone. */
static sg_truth case_split(sg_facts *f, const sg_expr *q, size_t *budget, int depth)
{
    const sg_expr *atom = NULL;
    slong n = 0;
    small_atom(f, q, &atom, &n, SG_SPLIT_MAX, 0);
    if (!atom || (size_t)n > *budget)
        return SG_UNKNOWN;
    sg__iv r;
    sg__iv_init(&r);
    if (sg__facts_range(f, atom, &r) != SG_OK) {
        sg__iv_clear(&r);
        return SG_UNKNOWN;
    }
    sg_truth all = SG_UNKNOWN;
    fmpz_t v;
    fmpz_init_set(v, &r.lo);
    for (bool first = true; fmpz_cmp(v, &r.hi) <= 0; fmpz_add_ui(v, v, 1), first = false) {
        const sg_expr *val = sg__int_fmpz(f->ctx, v), *qv = val ? replace_node(f->ctx, q, atom, val) : NULL;
        if (!qv) {
            all = SG_UNKNOWN;
            break;
        }
        *budget -= *budget ? 1 : 0;
        sg_truth t = sg__facts_known(f, qv, budget, depth + 1);
        if (t == SG_UNKNOWN || (!first && t != all)) {
            all = SG_UNKNOWN;
            break;
        }
        all = t;
    }
    fmpz_clear(v);
    sg__iv_clear(&r);
    return all;
}

/* ---- simplification ---- */

typedef struct {
    sg_facts *f;
    bool use_known;
    size_t *budget;
    sg__nodememo memo;
} simplifier;

static const sg_expr *simp(simplifier *S, const sg_expr *e);

/* Is a >= b under the facts? */
static sg_truth known_ge(simplifier *S, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *d = sg__sub(S->f->ctx, a, b), *ge = d ? sg__rel0(S->f->ctx, SG_OP_GE0, d) : NULL;
    if (!ge)
        return SG_UNKNOWN;
    if (ge->op == SG_OP_TRUE || ge->op == SG_OP_FALSE)
        return ge->op == SG_OP_TRUE ? SG_TRUE : SG_FALSE;
    if (S->use_known)
        return sg__facts_known(S->f, ge, S->budget, 1);
    sg__iv r;
    sg__iv_init(&r);
    sg_truth t = sg__facts_range(S->f, ge, &r) == SG_OK ? truth_of_bool_range(&r) : SG_UNKNOWN;
    sg__iv_clear(&r);
    return t;
}

/* Drop each argument of Max (Min) that a remaining argument provably bounds
 * from above (below): the value does not change. Of equal arguments, the
 * later one stays. */
static const sg_expr *simp_minmax(simplifier *S, const sg_expr *e)
{
    sg_ctx *ctx = S->f->ctx;
    bool *dropped = sg__calloc(ctx, e->nargs, sizeof *dropped);
    if (!dropped)
        return sg__nomem(S->f->ctx), NULL;
    size_t left = e->nargs;
    for (size_t i = 0; i < e->nargs; i++)
        for (size_t j = 0; j < e->nargs && !dropped[i]; j++)
            if (j != i && !dropped[j] &&
                (e->op == SG_OP_MAX ? known_ge(S, e->args[j], e->args[i]) : known_ge(S, e->args[i], e->args[j])) ==
                    SG_TRUE) {
                dropped[i] = true;
                left--;
            }
    const sg_expr *r = e;
    if (left < e->nargs) {
        const sg_expr **keep = sg__malloc(ctx, left * sizeof *keep);
        if (keep) {
            size_t k = 0;
            for (size_t i = 0; i < e->nargs; i++)
                if (!dropped[i])
                    keep[k++] = e->args[i];
            r = sg__minmax(S->f->ctx, (sg_op)e->op, k, keep);
        } else {
            sg__nomem(S->f->ctx);
            r = NULL;
        }
        sg_free(keep);
    }
    sg_free(dropped);
    return r;
}

/* A number that divides atom a wherever the facts hold: the lcm of every m
 * with Mod(a, m) known to be 0 (1 if none). */
static void atom_divisor(sg_facts *f, const sg_expr *a, fmpz_t g)
{
    fmpz_one(g);
    sg__facts_read(f, a); /* the bounds of Mod(a, m) change a's stamp */
    for (size_t i = 0; i < f->batom.n; i++) {
        const sg_expr *m = f->batom.v[i];
        const sg__iv *b = &f->biv[i];
        if (m->op == SG_OP_MOD && m->args[0] == a && m->args[1]->op == SG_OP_INT && sg__iv_is_point(b) &&
            fmpz_is_zero(&b->lo))
            fmpz_lcm(g, g, &m->args[1]->u.val);
    }
}

/* A number dividing every value of p (0 when p is 0): the gcd over its terms
 * of coefficient times the divisors of the term's atoms, and the constant. */
static void poly_divisor(sg_facts *f, const sg_expr *p, fmpz_t g)
{
    fmpz_t t, d;
    fmpz_init(t);
    fmpz_init(d);
    if (p->op == SG_OP_INT) {
        fmpz_abs(g, &p->u.val);
    } else if (p->op != SG_OP_ADD) {
        atom_divisor(f, p, g); /* an atom (a product: left at 1) */
        if (p->op == SG_OP_MUL)
            fmpz_one(g);
    } else {
        fmpz_abs(g, &p->u.val);
        for (size_t i = 0; i < p->nargs; i++) {
            if (p->args[i]->op == SG_OP_MUL)
                fmpz_one(d);
            else
                atom_divisor(f, p->args[i], d);
            fmpz_mul(t, sg__nums(p) + i, d);
            fmpz_gcd(g, g, t);
        }
    }
    fmpz_clear(t);
    fmpz_clear(d);
}

/* Rules that use the facts, on a node whose arguments are simplified. */
/* a // (a // d) is d where d divides a and a // d >= 1 (PyTorch rewrites
 * FloorDiv to exact division under its divisibility facts: a = d*(a // d)). */
static const sg_expr *divided_by_quotient(simplifier *S, const sg_expr *e)
{
    const sg_expr *a = e->args[0], *b = e->args[1];
    if (b->op != SG_OP_FLOORDIV || b->args[0] != a || b->args[1]->op != SG_OP_INT || fmpz_sgn(&b->args[1]->u.val) <= 0)
        return e;
    sg_ctx *ctx = S->f->ctx;
    if (known_ge(S, b, ctx->one) != SG_TRUE)
        return e;
    const sg_expr *db = sg__mul(ctx, b->args[1], b), *diff = db ? sg__sub(ctx, a, db) : NULL;
    const sg_expr *eq = diff ? sg__rel0(ctx, SG_OP_EQ0, diff) : NULL;
    if (!eq)
        return NULL;
    /* a linear question, asked even where the simplifier uses ranges only */
    bool exact = eq->op == SG_OP_TRUE || (eq->op == SG_OP_EQ0 && sg__facts_known(S->f, eq, S->budget, 1) == SG_TRUE);
    return exact ? b->args[1] : e;
}

static const sg_expr *simp_node(simplifier *S, const sg_expr *e)
{
    sg_facts *f = S->f;
    sg_ctx *ctx = f->ctx;
    if (e->nargs == 0)
        return e;
    sg__iv r;
    sg__iv_init(&r);
    if (sg__facts_range(f, e, &r) != SG_OK) {
        sg__iv_clear(&r);
        return NULL;
    }
    const sg_expr *res = e;
    if (e->sort == SG_SORT_INT && sg__iv_is_point(&r)) {
        res = sg__int_fmpz(ctx, &r.lo);
    } else if (e->sort == SG_SORT_BOOL) {
        sg_truth t = truth_of_bool_range(&r);
        if (t == SG_UNKNOWN && S->use_known && (e->op == SG_OP_GE0 || e->op == SG_OP_EQ0 || e->op == SG_OP_NE0))
            t = sg__facts_known(f, e, S->budget, 1);
        if (t != SG_UNKNOWN)
            res = sg__bool(ctx, t == SG_TRUE);
    } else {
        sg__iv a, b;
        sg__iv_init(&a);
        sg__iv_init(&b);
        if (e->op == SG_OP_MOD && e->args[1]->op == SG_OP_INT && !fmpz_is_zero(&e->args[1]->u.val)) {
            /* d divides every value of a: a % d is 0 */
            fmpz_t g;
            fmpz_init(g);
            poly_divisor(f, e->args[0], g);
            bool zero = !fmpz_is_zero(g) && fmpz_divisible(g, &e->args[1]->u.val);
            fmpz_clear(g);
            if (zero) {
                sg__iv_clear(&a);
                sg__iv_clear(&b);
                sg__iv_clear(&r);
                return ctx->zero;
            }
        }
        switch ((sg_op)e->op) {
        case SG_OP_MOD: /* a % d = a - k*d when a stays within [k*d, k*d + d - 1] */
        case SG_OP_FLOORDIV:
            if (e->args[1]->op == SG_OP_INT && fmpz_sgn(&e->args[1]->u.val) > 0 &&
                sg__facts_range(f, e->args[0], &a) == SG_OK && !a.lo_inf && !a.hi_inf) {
                fmpz_t k1, k2;
                fmpz_init(k1);
                fmpz_init(k2);
                fmpz_fdiv_q(k1, &a.lo, &e->args[1]->u.val);
                fmpz_fdiv_q(k2, &a.hi, &e->args[1]->u.val);
                if (fmpz_equal(k1, k2)) {
                    if (e->op == SG_OP_FLOORDIV) {
                        res = sg__int_fmpz(ctx, k1);
                    } else {
                        fmpz_mul(k1, k1, &e->args[1]->u.val);
                        fmpz_neg(k1, k1);
                        const sg_expr *kd = sg__int_fmpz(ctx, k1);
                        res = kd ? sg__add(ctx, e->args[0], kd) : NULL;
                    }
                }
                fmpz_clear(k1);
                fmpz_clear(k2);
            }
            if (res == e && e->op == SG_OP_FLOORDIV)
                res = divided_by_quotient(S, e);
            break;
        case SG_OP_TRUNCDIV: /* C and Python division agree for a >= 0, b > 0 */
        case SG_OP_TRUNCMOD:
            if (sg__facts_range(f, e->args[0], &a) == SG_OK && sg__facts_range(f, e->args[1], &b) == SG_OK &&
                !a.lo_inf && fmpz_sgn(&a.lo) >= 0 && !b.lo_inf && fmpz_sgn(&b.lo) > 0)
                res = e->op == SG_OP_TRUNCDIV ? sg__floordiv(ctx, e->args[0], e->args[1])
                                              : sg__mod(ctx, e->args[0], e->args[1]);
            break;
        case SG_OP_ABS:
            if (sg__facts_range(f, e->args[0], &a) == SG_OK) {
                if (!a.lo_inf && fmpz_sgn(&a.lo) >= 0)
                    res = e->args[0];
                else if (!a.hi_inf && fmpz_sgn(&a.hi) <= 0)
                    res = sg__neg(ctx, e->args[0]);
            }
            break;
        case SG_OP_MIN:
        case SG_OP_MAX:
            res = simp_minmax(S, e);
            break;
        default:
            break;
        }
        sg__iv_clear(&a);
        sg__iv_clear(&b);
    }
    sg__iv_clear(&r);
    return res;
}

static const sg_expr *simp_arg(void *user, const sg_expr *e)
{
    return simp(user, e);
}

static const sg_expr *simp(simplifier *S, const sg_expr *e)
{
    if (e->nargs == 0)
        return e;
    const sg_expr *r = sg__nodememo_get(&S->memo, e);
    if (r)
        return r;
    r = sg__map_args(S->f->ctx, e, simp_arg, S);
    /* the rules may expose more: apply them until the node stops changing */
    for (int round = 0; r && round < 4; round++) {
        const sg_expr *r2 = simp_node(S, r);
        if (r2 == r)
            break;
        r = r2 && r2 != r && r2->nargs ? simp(S, r2) : r2;
    }
    if (r && !sg__nodememo_put(S->f->ctx, &S->memo, e, r))
        return sg__nomem(S->f->ctx), NULL;
    return r;
}

static const sg_expr *simplify(sg_facts *f, const sg_expr *e, bool use_known, size_t *budget)
{
    const sg_expr *r = sg__facts_replace(f, e);
    if (!r)
        return NULL;
    simplifier S = {.f = f, .use_known = use_known, .budget = budget};
    r = simp(&S, r);
    sg__nodememo_free(&S.memo);
    return r;
}

/* ---- truth ---- */

/* ---- positivity after shifting to the lower bounds ---- */

#define SHIFT_MAX_SYMS 8

/* The sign of p over the facts' ranges, found as PyTorch does for sizes:
 * each symbol x with a finite lower bound lo is written y + lo with y >= 0
 * and p expanded; when every coefficient then has one sign, so does p.
 * *sign: 1 (p >= 0), 2 (p > 0), -1 (p <= 0), -2 (p < 0), 0 (nothing shown).
 * Only for polynomials over symbols, of at most SHIFT_MAX_SYMS of them,
 * that have a product (linear ones are the decision procedure's). */
static void shifted_sign(sg_facts *f, const sg_expr *p, int *sign)
{
    sg_ctx *ctx = f->ctx;
    *sign = 0;
    const sg_expr *terms[1] = {p};
    const sg_expr *const *t = p->op == SG_OP_ADD ? p->args : terms;
    size_t n = p->op == SG_OP_ADD ? p->nargs : 1;
    bool product = false;
    for (size_t i = 0; i < n; i++) {
        if (t[i]->op == SG_OP_MUL) {
            product = true;
            for (size_t k = 0; k < t[i]->nargs; k++)
                if (t[i]->args[k]->op != SG_OP_SYM)
                    return;
        } else if (t[i]->op != SG_OP_SYM) {
            return;
        }
    }
    if (!product)
        return;
    const sg_expr **syms;
    size_t ns;
    if (sg_expr_free_symbols(ctx, &syms, &ns, p) != SG_OK)
        return;
    const sg_expr *vals[SHIFT_MAX_SYMS];
    sg__idmap map = {0};
    bool ok = ns <= SHIFT_MAX_SYMS && sg__idmap_init(ctx, &map, ns);
    for (size_t i = 0; i < ns && ok; i++) {
        sg__iv r;
        sg__iv_init(&r);
        fmpz_t alo;
        fmpz_init(alo);
        ok = sg__facts_range(f, syms[i], &r) == SG_OK;
        /* the lower bound as assumed: a symbol replaced since keeps it
           there while its replacement's range may be wider */
        if (ok && sg__facts_assumed_lower(f, syms[i], alo) && (r.lo_inf || fmpz_cmp(alo, &r.lo) > 0)) {
            fmpz_set(&r.lo, alo); /* a bound the replacement's range does not give: not a recorded read */
            r.lo_inf = false;
            f->reads_lost = true;
        }
        fmpz_clear(alo);
        ok = ok && !r.lo_inf;
        char name[32];
        snprintf(name, sizeof name, "~shift%u", (unsigned)syms[i]->id); /* no parsed name has a '~' */
        const sg_expr *y = ok ? sg__intern(ctx, SG_OP_SYM, SG_SORT_INT, 0, NULL, NULL, NULL, name, strlen(name)) : NULL;
        const sg_expr *lo = y ? sg__int_fmpz(ctx, &r.lo) : NULL;
        vals[i] = lo ? sg__add(ctx, y, lo) : NULL;
        ok = vals[i] && sg__idmap_put(&map, syms[i]->id, i);
        sg__iv_clear(&r);
    }
    const sg_expr *q = NULL;
    if (ok && sg__subs_map(ctx, &q, p, &map, vals) == SG_OK && q) {
        const fmpz *c = q->op == SG_OP_ADD ? &q->u.val : q->op == SG_OP_INT ? &q->u.val : NULL;
        int pos = 0, neg = 0;
        if (q->op == SG_OP_ADD)
            for (size_t i = 0; i < q->nargs; i++)
                fmpz_sgn(sg__nums(q) + i) > 0 ? pos++ : neg++;
        else if (q->op != SG_OP_INT)
            pos++; /* a lone monomial of coefficient 1 */
        int cs = c ? fmpz_sgn(c) : 0;
        if (!neg && cs >= 0)
            *sign = cs > 0 ? 2 : 1;
        else if (!pos && cs <= 0)
            *sign = cs < 0 ? -2 : -1;
    }
    sg__idmap_free(&map);
    sg_free(syms);
}

/* What a sign of p (shifted_sign) says of p >= 0, p == 0, p != 0. */
static sg_truth sign_answer(int sign, sg_op op)
{
    if (op == SG_OP_GE0 && (sign > 0 || sign == -2))
        return sign > 0 ? SG_TRUE : SG_FALSE;
    if ((sign == 2 || sign == -2) && op != SG_OP_GE0) /* p is not 0 */
        return op == SG_OP_NE0 ? SG_TRUE : SG_FALSE;
    return SG_UNKNOWN;
}

/* ---- the decision procedure, reading the facts through a source ---- */

static sg_status fm_range(void *user, const sg_expr *m, sg__iv *out)
{
    return sg__facts_range(user, m, out);
}

static const size_t *fm_occurrences(void *user, const sg_expr *m, size_t *n)
{
    const sg__occ *o = sg__facts_occurrences(user, m);
    *n = o ? o->n : 0;
    return o ? o->v : NULL;
}

static const sg_expr *fm_linear(void *user, size_t l)
{
    const sg_facts *f = user;
    return f->lin.v[l];
}

static void fm_read_occurrences(void *user, const sg_expr *m, bool whole)
{
    sg__facts_read_occurrences(user, m, whole);
}

static sg__fm_source fm_source(sg_facts *f)
{
    if (!f->fm)
        f->fm = sg__fm_scratch_new(f->ctx); /* NULL: each run makes its own buffers */
    return (sg__fm_source){.ctx = f->ctx,
                           .user = f,
                           .scratch = f->fm,
                           .range = fm_range,
                           .occurrences = fm_occurrences,
                           .linear = fm_linear,
                           .read_occurrences = fm_read_occurrences};
}

static sg_truth fm_implies(sg_facts *f, const sg_expr *p, bool eq, size_t *budget)
{
    sg__fm_source src = fm_source(f);
    return sg__fm_implies(&src, p, eq, budget);
}

static sg_truth fm_refutes(sg_facts *f, const sg_expr *p, bool eq, size_t *budget)
{
    sg__fm_source src = fm_source(f);
    return sg__fm_refutes(&src, p, eq, budget);
}

/* want: -1 to try both answers, 1 (0) to try to prove only true (false). */
static sg_truth known_relation(sg_facts *f, const sg_expr *q, size_t *budget, int want)
{
    const sg_expr *p = q->args[0];
    if (sg__facts_is_axiom(f, q))
        return SG_TRUE;
    const sg_expr *nq = sg__not(f->ctx, q);
    if (nq && sg__facts_is_axiom(f, nq))
        return SG_FALSE;
    bool try_true = want != 0, try_false = want != 1;
    int sign;
    shifted_sign(f, p, &sign);
    sg_truth st = sign_answer(sign, (sg_op)q->op);
    if (st != SG_UNKNOWN)
        return st;
    switch ((sg_op)q->op) {
    case SG_OP_GE0:
        if (try_true && fm_implies(f, p, false, budget) == SG_TRUE)
            return SG_TRUE;
        if (try_false && fm_refutes(f, p, false, budget) == SG_TRUE)
            return SG_FALSE;
        return SG_UNKNOWN;
    case SG_OP_EQ0:
        if (try_false && fm_refutes(f, p, true, budget) == SG_TRUE)
            return SG_FALSE;
        if (try_true && fm_implies(f, p, true, budget) == SG_TRUE)
            return SG_TRUE;
        return SG_UNKNOWN;
    default: /* NE0 */
        if (try_true && fm_refutes(f, p, true, budget) == SG_TRUE)
            return SG_TRUE;
        if (try_false && fm_implies(f, p, true, budget) == SG_TRUE)
            return SG_FALSE;
        return SG_UNKNOWN;
    }
}

/* ---- divisibility: x = d*(x // d) ---- */

#define DIV_MAX 16 /* floor divisions of a question rewritten, at most */

/* Collect the atoms x // d of e (x a symbol, d > 0 a constant) whose
 * x % d == 0 is known, at most DIV_MAX of them; seen marks visited nodes. */
static bool exact_divisions(sg_facts *f, const sg_expr *e, sg__idmap *seen, const sg_expr **out, size_t *n)
{
    if (e->nargs == 0 || sg__idmap_find(seen, e->id))
        return true;
    if (!sg__idmap_put(seen, e->id, 1))
        return false;
    if (e->op == SG_OP_FLOORDIV && e->args[0]->op == SG_OP_SYM && e->args[1]->op == SG_OP_INT &&
        fmpz_sgn(&e->args[1]->u.val) > 0 && *n < DIV_MAX) {
        const sg_expr *m = sg__mod(f->ctx, e->args[0], e->args[1]);
        const sg__iv *b = m ? sg__facts_bound(f, m) : NULL;
        bool dup = false;
        for (size_t i = 0; i < *n; i++)
            dup |= out[i]->args[0] == e->args[0];
        if (b && sg__iv_is_point(b) && fmpz_is_zero(&b->lo) && !dup)
            out[(*n)++] = e;
    }
    for (size_t i = 0; i < e->nargs; i++)
        if (!exact_divisions(f, e->args[i], seen, out, n))
            return false;
    return true;
}

/* q with x written d*(x // d) for each floor division x // d of q whose
 * x % d == 0 the facts know (the first such d of each symbol x), or NULL
 * when there is none (or out of memory). The two are equal wherever the
 * facts hold. PyTorch's simplify does this under its divisibility facts:
 * x // d becomes an exact division where Mod(x, d) is in its divisible set
 * (only then, and only for that d), so that a product such as x*y meets
 * 2*(x // 2)*y, which the linear procedure sees as another monomial. (The
 * reads: x % d's bounds stamp x, which the question read.) */
static const sg_expr *divisibility_form(sg_facts *f, const sg_expr *q)
{
    sg_ctx *ctx = f->ctx;
    const sg_expr *divs[DIV_MAX], *from[DIV_MAX], *to[DIV_MAX];
    size_t n = 0;
    sg__idmap seen = {0};
    bool ok = sg__idmap_init(ctx, &seen, 32) && exact_divisions(f, q, &seen, divs, &n);
    sg__idmap_free(&seen);
    for (size_t i = 0; i < n && ok; i++) {
        from[i] = divs[i]->args[0];
        ok = (to[i] = sg__mul(ctx, divs[i]->args[1], divs[i])) != NULL;
    }
    const sg_expr *r = NULL;
    if (ok && n && sg_expr_subs(ctx, &r, q, n, from, to) != SG_OK)
        r = NULL;
    return r;
}

static sg_truth known(sg_facts *f, const sg_expr *q, size_t *budget, int depth, int want);

sg_truth sg__facts_known(sg_facts *f, const sg_expr *q, size_t *budget, int depth)
{
    return known(f, q, budget, depth, -1);
}

/* A remembered answer to q, if it still holds: decided ones always (facts
 * only grow until invalidated), undecided ones while nothing their work read
 * has changed (the work is deterministic: it would come to the same answer). */
static bool memo_get(sg_facts *f, const sg_expr *q, sg_truth *t)
{
    size_t *slot = sg__idmap_find(&f->known_memo, q->id);
    if (!slot)
        return false;
    *t = (sg_truth)(*slot & 3);
    return *t != SG_UNKNOWN || sg__facts_undecided_holds(f, *slot >> 2);
}

static void memo_put(sg_facts *f, const sg_expr *q, size_t v)
{
    if (!sg__idmap_put(&f->known_memo, q->id, v))
        sg__facts_invalidate(f);
}

sg_truth sg__facts_known_want(sg_facts *f, const sg_expr *q, bool want)
{
    sg_truth m;
    if (memo_get(f, q, &m))
        return m;
    size_t budget = f->budget;
    return known(f, q, &budget, 0, want);
}

static sg_truth known_uncached(sg_facts *f, const sg_expr *q, size_t *budget, int depth, int want);

static sg_truth known(sg_facts *f, const sg_expr *q, size_t *budget, int depth, int want)
{
    bool top = *budget == f->budget && want < 0; /* a full question, remembered even if undecided */
    if (f->inconsistent)
        return SG_TRUE;
    sg_truth t;
    if (memo_get(f, q, &t))
        return t;
    sg__readmark mark = sg__facts_read_mark(f);
    size_t rec;
    f->kdepth++;
    sg__facts_read(f, q);
    t = known_uncached(f, q, budget, depth, want);
    /* remember the answer: a decided one holds whatever the budget; an
     * undecided one is what a question with the full budget gets (the
     * procedure is deterministic), so only top-level ones are kept */
    if (t != SG_UNKNOWN)
        memo_put(f, q, (size_t)t);
    else if (depth == 0 && top && sg__facts_remember_reads(f, mark, &rec))
        memo_put(f, q, (size_t)t | rec << 2);
    sg__facts_read_done(f);
    return t;
}

static sg_truth sign_answer(int sign, sg_op op);

static sg_truth known_uncached(sg_facts *f, const sg_expr *q, size_t *budget, int depth, int want)
{
    if (q->op == SG_OP_GE0 || q->op == SG_OP_EQ0 || q->op == SG_OP_NE0) {
        /* the sign of q's polynomial before replacements, over the symbols' assumed bounds */
        int sign;
        shifted_sign(f, q->args[0], &sign);
        sg_truth t = sign_answer(sign, (sg_op)q->op);
        if (t != SG_UNKNOWN)
            return t;
    }
    const sg_expr *s = sg__facts_replace(f, q);
    if (!s)
        return SG_UNKNOWN;
    sg__facts_read(f, s);
    if (!(s = simplify(f, q, false, budget)))
        return SG_UNKNOWN;
    sg_truth t = SG_UNKNOWN;
    switch ((sg_op)s->op) {
    case SG_OP_TRUE:
        t = SG_TRUE;
        break;
    case SG_OP_FALSE:
        t = SG_FALSE;
        break;
    case SG_OP_AND:
    case SG_OP_OR: {
        bool is_and = s->op == SG_OP_AND;
        sg_truth all = is_and ? SG_TRUE : SG_FALSE;
        for (size_t i = 0; i < s->nargs; i++) {
            sg_truth ti = sg__facts_known(f, s->args[i], budget, depth);
            if (ti == (is_and ? SG_FALSE : SG_TRUE)) {
                all = ti;
                break;
            }
            if (ti == SG_UNKNOWN)
                all = SG_UNKNOWN;
        }
        t = all;
        if (t == SG_UNKNOWN && sg__facts_is_axiom(f, s))
            t = SG_TRUE;
        break;
    }
    default:
        t = known_relation(f, s, budget, want);
        break;
    }
    if (t == SG_UNKNOWN && depth == 0) {
        /* the same question with the divisibility facts written out */
        const sg_expr *d = divisibility_form(f, s);
        if (d && d != s)
            t = known(f, d, budget, depth + 1, want);
    }
    if (t == SG_UNKNOWN && depth == 0 && *budget > 0)
        t = case_split(f, s, budget, depth);
    return t;
}

/* ---- the public questions ---- */

static void to_interval(sg_ctx *ctx, const sg__iv *r, bool is_bool, sg_interval *out)
{
    if (is_bool) {
        out->lo = sg__bool(ctx, !fmpz_is_zero(&r->lo));
        out->hi = sg__bool(ctx, !fmpz_is_zero(&r->hi));
        return;
    }
    out->lo = r->lo_inf ? NULL : sg__int_fmpz(ctx, &r->lo);
    out->hi = r->hi_inf ? NULL : sg__int_fmpz(ctx, &r->hi);
}

sg_status sg_facts_range(sg_facts *f, sg_interval *out, const sg_expr *e)
{
    if (!f)
        return SG_EINVAL;
    if (!out || !e)
        return sg__err(f->ctx, SG_EINVAL, "sg_facts_range: NULL argument");
    const sg_expr *r = sg__facts_replace(f, e);
    if (!r)
        return f->ctx->err;
    sg__iv iv;
    sg__iv_init(&iv);
    sg_status s = sg__facts_range(f, r, &iv);
    if (!s) {
        to_interval(f->ctx, &iv, e->sort == SG_SORT_BOOL, out);
        if ((!iv.lo_inf && !out->lo) || (!iv.hi_inf && !out->hi))
            s = f->ctx->err;
    }
    sg__iv_clear(&iv);
    return s;
}

sg_status sg_facts_known(sg_facts *f, sg_truth *out, const sg_expr *q)
{
    if (!f)
        return SG_EINVAL;
    if (!out || !q)
        return sg__err(f->ctx, SG_EINVAL, "sg_facts_known: NULL argument");
    if (q->sort != SG_SORT_BOOL)
        return sg__err(f->ctx, SG_ETYPE, "sg_facts_known: the question must be a boolean expression");
    size_t budget = f->budget;
    uint64_t nerr = f->ctx->nerr;
    *out = sg__facts_known(f, q, &budget, 0);
    if (f->ctx->nerr != nerr && f->ctx->err == SG_ENOMEM)
        return SG_ENOMEM;
    return SG_OK;
}

sg_status sg_facts_simplify(sg_facts *f, const sg_expr **out, const sg_expr *e)
{
    if (!f)
        return SG_EINVAL;
    if (!out || !e)
        return sg__err(f->ctx, SG_EINVAL, "sg_facts_simplify: NULL argument");
    *out = NULL;
    size_t budget = f->budget;
    if (f->inconsistent) {
        const sg_expr *r = sg__facts_replace(f, e);
        *out = r;
        return r ? SG_OK : f->ctx->err;
    }
    const sg_expr *r = simplify(f, e, true, &budget);
    *out = r;
    return r ? SG_OK : f->ctx->err;
}
