/* The fact base: facts as assumed, and what they give after decomposition:
 * replacements, bounds of atoms, linear facts, axioms. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reason/reason_private.h"
#include "shapeguard/print.h"

bool sg__list_push(sg_ctx *ctx, sg__list *l, const sg_expr *e)
{
    if (!sg__grow(ctx, (void **)&l->v, &l->cap, l->n + 1, sizeof *l->v))
        return false;
    l->v[l->n++] = e;
    return true;
}

void sg__list_free(sg__list *l)
{
    sg_free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static bool list_copy(sg_ctx *ctx, sg__list *dst, const sg__list *src)
{
    for (size_t i = 0; i < src->n; i++)
        if (!sg__list_push(ctx, dst, src->v[i]))
            return false;
    return true;
}

static void forget_replaced(sg_facts *f)
{
    sg__nodememo_reset(&f->rmemo);
    f->rdead = 0;
}

/* The bit of symbol s in signatures. */
static sg__sig sym_bit(const sg_expr *s)
{
    return (sg__sig)1 << ((s->id * 2654435761u) % (sizeof(sg__sig) * CHAR_BIT));
}

/* The signature of e: the bits of its symbols (cached per node). */
static sg__sig signature(sg_facts *f, const sg_expr *e)
{
    if (e->op == SG_OP_SYM)
        return sym_bit(e);
    if (e->nargs == 0)
        return 0;
    size_t *c = sg__idmap_find(&f->sigs, e->id);
    if (c)
        return *c;
    sg__sig g = 0;
    for (size_t i = 0; i < e->nargs; i++)
        g |= signature(f, e->args[i]);
    sg__idmap_put(&f->sigs, e->id, g); /* out of memory: not cached, still right */
    return g;
}

/* Does symbol sym (whose bit is bit) occur in e? */
static bool mentions(sg_facts *f, const sg_expr *e, const sg_expr *sym, sg__sig bit)
{
    if (e == sym)
        return true;
    if (e->nargs == 0 || !(signature(f, e) & bit))
        return false;
    for (size_t i = 0; i < e->nargs; i++)
        if (mentions(f, e->args[i], sym, bit))
            return true;
    return false;
}

/* Forget the replaced forms that mention sym; the others stay right. */
static void forget_replaced_with(sg_facts *f, const sg_expr *sym)
{
    sg__sig bit = sym_bit(sym);
    for (size_t j = 0; j < f->rmemo.n; j++)
        if (f->rmemo.v[j] && (f->rsig[j] & bit) && mentions(f, f->rmemo.v[j], sym, bit)) {
            f->rmemo.v[j] = NULL;
            f->rdead++;
        }
    if (f->rdead > f->rmemo.n / 2 + 1024)
        forget_replaced(f); /* mostly forgotten: start afresh */
}

static void clear_bounds(sg_facts *f)
{
    for (size_t i = 0; i < f->batom.n; i++)
        sg__iv_clear(&f->biv[i]);
    f->batom.n = 0;
    if (f->bidx.cap)
        sg__idmap_reset(&f->bidx);
}

/* ---- which undecided answers stay right ----
 *
 * The work on a question reads: the replacements of the symbols of the
 * question; the bounds of the atoms of the expressions whose ranges it takes
 * (and, for a divisor, the bounds of Mod(a, m) through a); the occurrence
 * lists of monomials; whether nodes are axioms. Each change to what the
 * facts give stamps what it changed with the epoch, and an undecided answer
 * is kept with the list of what its work read: it stays right while none of
 * that has a later stamp, since the work is deterministic. */

/* Out of memory while stamping: every remembered answer is forgotten. */
static void stamp_in(sg_facts *f, sg__idmap *m, const sg_expr *e)
{
    if (!sg__idmap_put(m, e->id, f->epoch))
        sg__facts_invalidate(f);
    f->last_stamp = f->epoch;
}

/* The bounds of atom changed. */
static void stamp_bound(sg_facts *f, const sg_expr *atom)
{
    stamp_in(f, &f->nstamp, atom);
    if (atom->op == SG_OP_MOD)
        stamp_in(f, &f->nstamp, atom->args[0]); /* read through the divisors of its argument */
}

void sg__facts_read(sg_facts *f, const sg_expr *e)
{
    sg_ctx *ctx = f->ctx;
    if (f->kdepth && !sg__list_push(ctx, &f->reads, e))
        f->reads_lost = true;
}

/* The question under way looked node e up (an occurrence list, an axiom). */
static void read_node(sg_facts *f, const sg_expr *e)
{
    sg_ctx *ctx = f->ctx;
    if (f->kdepth && !sg__list_push(ctx, &f->nreads, e))
        f->reads_lost = true;
}

void sg__facts_read_occurrences(sg_facts *f, const sg_expr *m, bool whole)
{
    sg_ctx *ctx = f->ctx;
    if (f->kdepth && !sg__list_push(ctx, whole ? &f->oreads : &f->nreads, m))
        f->reads_lost = true;
}

sg__readmark sg__facts_read_mark(const sg_facts *f)
{
    return (sg__readmark){f->reads.n, f->nreads.n, f->oreads.n};
}

void sg__facts_read_done(sg_facts *f)
{
    if (--f->kdepth == 0) {
        f->reads.n = f->nreads.n = f->oreads.n = 0;
        f->reads_lost = false;
    }
}

/* Mark node e in seen (bits: 1 kept in the record, 2 walked); false if
 * it had the mark already, or on out of memory (*ok false). */
static bool mark_new(sg__idmap *seen, const sg_expr *e, size_t bit, bool *ok)
{
    size_t *v = sg__idmap_find(seen, e->id);
    if (v && (*v & bit))
        return false;
    if (v)
        *v |= bit;
    else
        *ok = sg__idmap_put(seen, e->id, bit);
    return *ok;
}

/* Add node e to the record under way (once). */
static bool record(sg_facts *f, sg__idmap *seen, const sg_expr *e)
{
    sg_ctx *ctx = f->ctx;
    bool ok = true;
    if (mark_new(seen, e, 1, &ok))
        ok = sg__list_push(ctx, &f->uread, e);
    return ok;
}

/* Add the symbols and atoms of e, walking inside atoms too: what a range
 * or a replacement of e reads. */
static bool record_atoms(sg_facts *f, sg__idmap *seen, const sg_expr *e)
{
    bool ok = true;
    if ((e->nargs == 0 && e->op != SG_OP_SYM) || !mark_new(seen, e, 2, &ok))
        return ok;
    if ((e->op == SG_OP_SYM || sg__is_atom(e)) && !record(f, seen, e))
        return false;
    for (size_t i = 0; i < e->nargs; i++)
        if (!record_atoms(f, seen, e->args[i]))
            return false;
    return true;
}

#define SG_MAX_UREAD ((size_t)1 << 22) /* nodes kept for undecided answers */

bool sg__facts_remember_reads(sg_facts *f, sg__readmark mark, size_t *rec)
{
    sg_ctx *ctx = f->ctx;
    if (f->reads_lost)
        return false;
    if (f->uread.n > SG_MAX_UREAD) { /* mostly stale records: start afresh */
        sg__facts_invalidate(f);
        return false;
    }
    if (!sg__grow(ctx, (void **)&f->und, &f->capund, f->nund + 1, sizeof *f->und))
        return false;
    sg__idmap seen;
    size_t off = f->uread.n;
    bool ok = sg__idmap_init(ctx, &seen, 64);
    for (size_t i = mark.o; i < f->oreads.n && ok; i++)
        ok = record(f, &seen, f->oreads.v[i]);
    size_t nwhole = f->uread.n - off;
    for (size_t i = mark.r; i < f->reads.n && ok; i++)
        ok = record_atoms(f, &seen, f->reads.v[i]);
    for (size_t i = mark.n; i < f->nreads.n && ok; i++)
        ok = record(f, &seen, f->nreads.v[i]);
    sg__idmap_free(&seen);
    if (!ok) {
        f->uread.n = off;
        return false;
    }
    f->und[f->nund] = (sg__undecided){f->epoch, off, nwhole, f->uread.n - off};
    *rec = f->nund++;
    return true;
}

static bool stamped_after(const sg__idmap *m, const sg_expr *e, size_t epoch)
{
    size_t *t = sg__idmap_find(m, e->id);
    return t && *t > epoch;
}

bool sg__facts_undecided_holds(sg_facts *f, size_t rec)
{
    sg__undecided *u = &f->und[rec];
    for (size_t i = 0; i < u->n && f->last_stamp > u->epoch; i++) { /* nothing stamped since: it holds */
        const sg_expr *e = f->uread.v[u->off + i];
        if (stamped_after(&f->nstamp, e, u->epoch) || (i < u->nwhole && stamped_after(&f->astamp, e, u->epoch)) ||
            (e->op == SG_OP_SYM && stamped_after(&f->stamp, e, u->epoch)))
            return false;
    }
    /* it holds now: later stamps carry later epochs (a fact bumps the epoch
     * before it stamps anything), so only those can make it stale */
    u->epoch = f->epoch;
    for (size_t i = 0; i < u->n && f->kdepth; i++) /* what it read, the question under way read */
        sg__facts_read_occurrences(f, f->uread.v[u->off + i], i < u->nwhole);
    return true;
}

/* Forget what the facts give (not the facts themselves). */
static void clear_derived(sg_facts *f)
{
    f->nfst = 0;
    f->rsym.n = 0;
    f->rval.n = 0;
    sg__idmap_reset(&f->rmap);
    forget_replaced(f);
    clear_bounds(f);
    for (size_t i = 0; i < f->nnes; i++)
        f->nes[i].n = 0;
    f->nnes = 0;
    if (f->neidx.cap)
        sg__idmap_reset(&f->neidx);
    f->lin.n = 0;
    f->axioms.n = 0;
    f->nalo = 0;
    if (f->alidx.cap)
        sg__idmap_reset(&f->alidx);
    for (size_t i = 0; i < f->nocc; i++)
        f->occ[i].n = 0;
    f->nocc = 0;
    if (f->occidx.cap)
        sg__idmap_reset(&f->occidx);
    if (f->axidx.cap)
        sg__idmap_reset(&f->axidx);
    f->inconsistent = false;
}

const sg__occ *sg__facts_occurrences(const sg_facts *f, const sg_expr *m)
{
    size_t *i = sg__idmap_find(&f->occidx, m->id);
    return i ? &f->occ[*i] : NULL;
}

bool sg__facts_is_axiom(sg_facts *f, const sg_expr *q)
{
    read_node(f, q);
    return sg__idmap_find(&f->axidx, q->id) != NULL;
}

static bool push_axiom(sg_facts *f, const sg_expr *e)
{
    sg_ctx *ctx = f->ctx;
    stamp_in(f, &f->nstamp, e);
    return sg__list_push(ctx, &f->axioms, e) && sg__idmap_put(&f->axidx, e->id, 1);
}

static bool occ_add(sg_facts *f, const sg_expr *m, size_t l)
{
    sg_ctx *ctx = f->ctx;
    size_t *i = sg__idmap_find(&f->occidx, m->id);
    if (!i) {
        if (f->nocc == f->capocc) {
            size_t cap = f->capocc ? f->capocc * 2 : 32;
            sg__occ *o = sg__realloc(ctx, f->occ, cap * sizeof *o);
            if (!o)
                return false;
            for (size_t k = f->capocc; k < cap; k++)
                o[k] = (sg__occ){NULL, 0, 0};
            f->occ = o;
            f->capocc = cap;
        }
        if (!sg__idmap_put(&f->occidx, m->id, f->nocc))
            return false;
        i = sg__idmap_find(&f->occidx, m->id);
        f->occ[f->nocc++].n = 0;
    }
    stamp_in(f, &f->astamp, m);
    sg__occ *o = &f->occ[*i];
    if (!sg__grow(ctx, (void **)&o->v, &o->cap, o->n + 1, sizeof *o->v))
        return false;
    o->v[o->n++] = l;
    return true;
}

/* A linear fact leaves the occurrence lists of its monomials. */
static void drop_lin(sg_facts *f, const sg_expr *e)
{
    const sg_expr *p = e->args[0];
    if (p->op == SG_OP_ADD)
        for (size_t i = 0; i < p->nargs; i++)
            stamp_in(f, &f->nstamp, p->args[i]);
    else if (p->op != SG_OP_INT)
        stamp_in(f, &f->nstamp, p);
}

/* A linear fact: for the decision procedure, indexed by its monomials, and
 * kept as an axiom. */
static bool push_lin(sg_facts *f, const sg_expr *e)
{
    sg_ctx *ctx = f->ctx;
    size_t l = f->lin.n;
    if (!sg__list_push(ctx, &f->lin, e) || !push_axiom(f, e))
        return false;
    const sg_expr *p = e->args[0];
    if (p->op == SG_OP_ADD) {
        for (size_t i = 0; i < p->nargs; i++)
            if (!occ_add(f, p->args[i], l))
                return false;
        return true;
    }
    return p->op == SG_OP_INT || occ_add(f, p, l);
}

void sg__facts_grown(sg_facts *f)
{
    if (f->rcache)
        sg__range_cache_clear(f->rcache);
    f->epoch++;
}

void sg__facts_invalidate(sg_facts *f)
{
    if (f->rcache)
        sg__range_cache_clear(f->rcache);
    if (f->known_memo.cap)
        sg__idmap_reset(&f->known_memo);
    f->nund = 0;
    f->uread.n = 0;
}

sg_status sg_facts_new(sg_ctx *ctx, sg_facts **out)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out)
        return sg__err(ctx, SG_EINVAL, "sg_facts_new: out is NULL");
    *out = NULL;
    sg_facts *f = sg__calloc(ctx, 1, sizeof *f);
    if (!f || !(f->rcache = sg__range_cache_new(ctx)) || !sg__idmap_init(ctx, &f->bidx, 16) ||
        !sg__idmap_init(ctx, &f->known_memo, 16) || !sg__idmap_init(ctx, &f->occidx, 16) || !sg__idmap_init(ctx, &f->axidx, 16) ||
        !sg__idmap_init(ctx, &f->rmap, 16) || !sg__idmap_init(ctx, &f->sigs, 16) || !sg__idmap_init(ctx, &f->stamp, 16) ||
        !sg__idmap_init(ctx, &f->nstamp, 16) || !sg__idmap_init(ctx, &f->astamp, 16) ||
        !sg__idmap_init(ctx, &f->alidx, 16)) {
        sg_facts_free(f);
        return sg__nomem(ctx);
    }
    f->ctx = ctx;
    f->budget = SG_DEFAULT_BUDGET;
    *out = f;
    return SG_OK;
}

void sg_facts_free(sg_facts *f)
{
    if (!f)
        return;
    clear_bounds(f);
    sg_free(f->biv);
    sg__idmap_free(&f->bidx);
    sg__idmap_free(&f->known_memo);
    sg__idmap_free(&f->occidx);
    sg__idmap_free(&f->axidx);
    sg__idmap_free(&f->rmap);
    sg__nodememo_free(&f->rmemo);
    sg_free(f->rsig);
    sg_free(f->fst);
    sg__idmap_free(&f->sigs);
    sg__idmap_free(&f->stamp);
    sg__idmap_free(&f->nstamp);
    sg__idmap_free(&f->astamp);
    sg__idmap_free(&f->alidx);
    for (size_t i = 0; i < f->capalo; i++)
        fmpz_clear(f->alo + i);
    sg_free(f->alo);
    sg__list_free(&f->nreads);
    sg__list_free(&f->oreads);
    sg_free(f->und);
    sg__list_free(&f->uread);
    sg__list_free(&f->reads);
    for (size_t i = 0; i < f->capocc; i++)
        sg_free(f->occ[i].v);
    sg_free(f->occ);
    sg__range_cache_free(f->rcache);
    sg__list_free(&f->facts);
    sg__list_free(&f->rsym);
    sg__list_free(&f->rval);
    sg__list_free(&f->batom);
    for (size_t i = 0; i < f->capnes; i++)
        sg__list_free(&f->nes[i]);
    sg_free(f->nes);
    sg__idmap_free(&f->neidx);
    sg__list_free(&f->touched);
    sg__list_free(&f->lin);
    sg__list_free(&f->axioms);
    sg__list_free(&f->divfact);
    sg__list_free(&f->divsym);
    sg__fm_scratch_free(f->fm);
    sg_free(f);
}

int sg_facts_consistent(const sg_facts *f)
{
    return f && !f->inconsistent;
}

size_t sg_facts_count(const sg_facts *f)
{
    return f ? f->facts.n : 0;
}

void sg_facts_set_budget(sg_facts *f, size_t budget)
{
    if (!f)
        return;
    f->budget = budget ? budget : SG_DEFAULT_BUDGET;
    sg__facts_invalidate(f); /* undecided answers depend on the budget */
}

const sg_expr *sg__facts_replace(sg_facts *f, const sg_expr *e)
{
    sg_ctx *ctx = f->ctx;
    if (!f->rsym.n || (e->nargs == 0 && e->op != SG_OP_SYM))
        return e; /* nothing to replace, or a constant */
    const sg_expr *r = sg__nodememo_get(&f->rmemo, e);
    if (r)
        return r;
    if (sg__subs_map(f->ctx, &r, e, &f->rmap, f->rval.v) != SG_OK)
        return NULL;
    size_t j = f->rmemo.n;
    if (!sg__grow(ctx, (void **)&f->rsig, &f->caprsig, j + 1, sizeof *f->rsig))
        return r; /* out of memory: not remembered, still right */
    f->rsig[j] = signature(f, r);
    if (!sg__nodememo_put(f->ctx, &f->rmemo, e, r))
        forget_replaced(f); /* out of memory: no memo, still right */
    return r;
}

const sg__iv *sg__facts_bound(const sg_facts *f, const sg_expr *atom)
{
    size_t *i = sg__idmap_find(&f->bidx, atom->id);
    return i ? &f->biv[*i] : NULL;
}

bool sg__facts_atom_range(void *user, const sg_expr *atom, sg__iv *out)
{
    const sg__iv *b = sg__facts_bound(user, atom);
    if (b)
        sg__iv_set(out, b);
    return b != NULL;
}

/* Is b within iv? */
static bool iv_within(const sg__iv *b, const sg__iv *iv)
{
    return (iv->lo_inf || (!b->lo_inf && fmpz_cmp(&b->lo, &iv->lo) >= 0)) &&
           (iv->hi_inf || (!b->hi_inf && fmpz_cmp(&b->hi, &iv->hi) <= 0));
}

static bool meet_bound(sg_facts *f, const sg_expr *atom, const sg__iv *iv);

static bool single_atom(const sg_expr *p, const sg_expr **atom, int *k, fmpz_t c);

/* Bounds of q = x // d (d > 0) solved back onto x (PyTorch's try_solve):
 * q >= lo gives x >= d*lo, q <= hi gives x <= d*hi + d - 1; and onto the
 * atom a where x = a + c or x = c - a. */
static bool solve_floordiv(sg_facts *f, const sg_expr *q, const sg__iv *iv)
{
    if (q->op != SG_OP_FLOORDIV)
        return true;
    const sg_expr *x = q->args[0], *d = q->args[1], *a;
    int k;
    fmpz_t c;
    fmpz_init(c);
    if (d->op != SG_OP_INT || fmpz_sgn(&d->u.val) <= 0 || !single_atom(x, &a, &k, c)) {
        fmpz_clear(c);
        return true;
    }
    sg__iv xb; /* bounds of x, then of a = k*(x - c) */
    sg__iv_init(&xb);
    if (!iv->lo_inf) {
        xb.lo_inf = false;
        fmpz_mul(&xb.lo, &iv->lo, &d->u.val);
    }
    if (!iv->hi_inf) {
        xb.hi_inf = false;
        fmpz_mul(&xb.hi, &iv->hi, &d->u.val);
        fmpz_add(&xb.hi, &xb.hi, &d->u.val);
        fmpz_sub_ui(&xb.hi, &xb.hi, 1);
    }
    if (!xb.lo_inf)
        fmpz_sub(&xb.lo, &xb.lo, c);
    if (!xb.hi_inf)
        fmpz_sub(&xb.hi, &xb.hi, c);
    if (k < 0) { /* a = c - x: the bounds swap and change sign */
        bool li = xb.lo_inf;
        fmpz_swap(&xb.lo, &xb.hi);
        xb.lo_inf = xb.hi_inf;
        xb.hi_inf = li;
        fmpz_neg(&xb.lo, &xb.lo);
        fmpz_neg(&xb.hi, &xb.hi);
    }
    bool ok = xb.lo_inf && xb.hi_inf ? true : meet_bound(f, a, &xb);
    sg__iv_clear(&xb);
    fmpz_clear(c);
    return ok;
}

/* Narrow the bounds of atom by iv (and of x, where atom is x // d). */
static bool meet_bound(sg_facts *f, const sg_expr *atom, const sg__iv *iv)
{
    sg_ctx *ctx = f->ctx;
    if (!solve_floordiv(f, atom, iv))
        return false;
    size_t *i = sg__idmap_find(&f->bidx, atom->id);
    if (!sg__list_push(ctx, &f->touched, atom))
        return false;
    if (i) {
        if (iv_within(&f->biv[*i], iv))
            return true; /* nothing new */
        stamp_bound(f, atom);
        if (!sg__iv_meet(&f->biv[*i], iv))
            f->inconsistent = true;
        return true;
    }
    stamp_bound(f, atom);
    if (!sg__grow(ctx, (void **)&f->biv, &f->capbiv, f->batom.n + 1, sizeof *f->biv))
        return false;
    size_t k = f->batom.n;
    if (!sg__list_push(ctx, &f->batom, atom))
        return false;
    sg__iv_init(&f->biv[k]);
    sg__iv_set(&f->biv[k], iv);
    return sg__idmap_put(&f->bidx, atom->id, k);
}

/* p as k*atom + c with k = +-1 and atom an atom; false if it is not. */
static bool single_atom(const sg_expr *p, const sg_expr **atom, int *k, fmpz_t c)
{
    if (sg__is_atom(p)) {
        *atom = p;
        *k = 1;
        fmpz_zero(c);
        return true;
    }
    if (p->op != SG_OP_ADD || p->nargs != 1 || !sg__is_atom(p->args[0]) || !fmpz_is_pm1(sg__nums(p)))
        return false;
    *atom = p->args[0];
    *k = fmpz_sgn(sg__nums(p));
    fmpz_set(c, &p->u.val);
    return true;
}

static bool occurs(sg_ctx *ctx, const sg_expr *sym, const sg_expr *e)
{
    const sg_expr **syms;
    size_t n;
    if (sg_expr_free_symbols(ctx, &syms, &n, e) != SG_OK)
        return true; /* out of memory: do not solve */
    bool found = false;
    for (size_t i = 0; i < n && !found; i++)
        found = syms[i] == sym;
    sg_free(syms);
    return found;
}

/* A new replacement sym := val; the earlier ones are rewritten so that no
 * value mentions a replaced symbol. */
static bool add_replacement(sg_facts *f, const sg_expr *sym, const sg_expr *val)
{
    sg_ctx *ctx = f->ctx;
    for (size_t i = 0; i < f->rval.n; i++) {
        const sg_expr *r;
        if (sg_expr_subs(f->ctx, &r, f->rval.v[i], 1, &sym, &val) != SG_OK)
            return false;
        f->rval.v[i] = r;
    }
    forget_replaced_with(f, sym);
    stamp_in(f, &f->stamp, sym);
    return sg__list_push(ctx, &f->rsym, sym) && sg__list_push(ctx, &f->rval, val) &&
           sg__idmap_put(&f->rmap, sym->id, f->rval.n - 1);
}

/* p == 0 solved for a symbol with coefficient +-1 that occurs nowhere else
 * in p and that the policy lets go; the newest such symbol (largest id) is
 * chosen. */
static const sg_expr *solve_for_symbol(sg_facts *f, const sg_expr *p, const sg_expr **val)
{
    if (p->op != SG_OP_ADD && p->op != SG_OP_SYM)
        return NULL;
    const sg_expr *tried = NULL; /* candidates are tried newest first */
    for (;;) {
        const sg_expr *best = NULL;
        int bestk = 0;
        size_t n = p->op == SG_OP_SYM ? 1 : p->nargs;
        for (size_t i = 0; i < n; i++) {
            const sg_expr *m = p->op == SG_OP_SYM ? p : p->args[i];
            int k = p->op == SG_OP_SYM ? 1 : fmpz_is_pm1(sg__nums(p) + i) ? fmpz_sgn(sg__nums(p) + i) : 0;
            if (m->op != SG_OP_SYM || !k || (tried && m->id >= tried->id) || (best && best->id > m->id))
                continue;
            best = m;
            bestk = k;
        }
        if (!best)
            return NULL;
        tried = best;
        /* p = k*s + rest = 0  =>  s = -k * rest (k = +-1), where rest is p
         * without the term k*s: s must not occur in it (inside x // 4, say) */
        fmpz_t kk;
        fmpz_init_set_si(kk, bestk);
        const sg_expr *ks = sg__scale(f->ctx, best, kk), *rest = ks ? sg__sub(f->ctx, p, ks) : NULL;
        fmpz_clear(kk);
        if (!rest)
            return NULL;
        if (occurs(f->ctx, best, rest))
            continue;
        const sg_expr *v = bestk > 0 ? sg__neg(f->ctx, rest) : rest;
        if (!v)
            return NULL;
        if (f->may_replace && !f->may_replace(f->policy_user, best, v))
            continue;
        *val = v;
        return best;
    }
}

/* The fresh symbol of the divisibility fact p == 0: made once per fact. */
static const sg_expr *fresh_for(sg_facts *f, const sg_expr *p)
{
    sg_ctx *ctx = f->ctx;
    for (size_t i = 0; i < f->divfact.n; i++)
        if (f->divfact.v[i] == p)
            return f->divsym.v[i];
    char name[32];
    const sg_expr *sym;
    snprintf(name, sizeof name, "_k%u", (unsigned)f->ctx->fresh++);
    if (sg_expr_sym(f->ctx, &sym, name) != SG_OK)
        return NULL;
    if (!sg__list_push(ctx, &f->divfact, p) || !sg__list_push(ctx, &f->divsym, sym)) {
        f->divfact.n = f->divsym.n;
        sg__nomem(f->ctx);
        return NULL;
    }
    return sym;
}

/* p == 0 where p = Mod(s, m) + c, s a symbol, m > 0, 0 <= -c < m: s is
 * m*k - c for a fresh symbol k. */
static const sg_expr *solve_divisibility(sg_facts *f, const sg_expr *p, const sg_expr **val)
{
    const sg_expr *atom;
    int k;
    fmpz_t c, r;
    fmpz_init(c);
    fmpz_init(r);
    const sg_expr *sym = NULL;
    if (single_atom(p, &atom, &k, c) && k == 1 && atom->op == SG_OP_MOD && atom->args[0]->op == SG_OP_SYM &&
        atom->args[1]->op == SG_OP_INT && fmpz_sgn(&atom->args[1]->u.val) > 0) {
        fmpz_neg(r, c);
        if (fmpz_sgn(r) >= 0 && fmpz_cmp(r, &atom->args[1]->u.val) < 0) {
            const sg_expr *fresh = fresh_for(f, p), *rv = fresh ? sg__int_fmpz(f->ctx, r) : NULL;
            if (rv) {
                const sg_expr *mk = sg__mul(f->ctx, atom->args[1], fresh);
                *val = mk ? sg__add(f->ctx, mk, rv) : NULL;
                sym = *val ? atom->args[0] : NULL;
                if (sym && f->may_replace && !f->may_replace(f->policy_user, sym, *val))
                    sym = NULL; /* kept as a fact on the Mod atom instead */
            }
        }
    }
    fmpz_clear(c);
    fmpz_clear(r);
    return sym;
}

typedef enum { PROCESS_OK, PROCESS_REPLACED, PROCESS_NOMEM } process_result;

/* p != 0 on one atom: kept with the others on that atom, which is touched. */
static bool push_ne(sg_facts *f, const sg_expr *atom, const sg_expr *e)
{
    sg_ctx *ctx = f->ctx;
    size_t *i = sg__idmap_find(&f->neidx, atom->id);
    if (!i) {
        if (f->nnes == f->capnes) {
            size_t cap = f->capnes ? f->capnes * 2 : 16;
            sg__list *l = sg__realloc(ctx, f->nes, cap * sizeof *l);
            if (!l)
                return false;
            for (size_t k = f->capnes; k < cap; k++)
                l[k] = (sg__list){0};
            f->nes = l;
            f->capnes = cap;
        }
        if (!sg__idmap_put(&f->neidx, atom->id, f->nnes))
            return false;
        i = sg__idmap_find(&f->neidx, atom->id);
        f->nes[f->nnes++].n = 0;
    }
    return sg__list_push(ctx, &f->nes[*i], e) && sg__list_push(ctx, &f->touched, atom);
}

/* Decompose one fact (replacements already applied). */
/* x % d == r where no replacement solves it (the policy keeps x): the
 * linear fact x - d*(x // d) - r == 0 instead, which ties the atom x // d
 * to x (PyTorch's divisibility facts: with 2 | s, 2*(s // 2) is s). */
static bool push_division(sg_facts *f, const sg_expr *atom, const fmpz_t r)
{
    if (atom->op != SG_OP_MOD || atom->args[1]->op != SG_OP_INT || fmpz_sgn(&atom->args[1]->u.val) <= 0)
        return true;
    sg_ctx *ctx = f->ctx;
    const sg_expr *x = atom->args[0], *d = atom->args[1];
    const sg_expr *q = sg__floordiv(ctx, x, d), *dq = q ? sg__mul(ctx, d, q) : NULL;
    const sg_expr *rv = dq ? sg__int_fmpz(ctx, r) : NULL, *diff = rv ? sg__sub(ctx, x, dq) : NULL;
    const sg_expr *p = diff ? sg__sub(ctx, diff, rv) : NULL, *fact = p ? sg__rel0(ctx, SG_OP_EQ0, p) : NULL;
    if (!fact)
        return false;
    return fact->op != SG_OP_EQ0 || push_lin(f, fact);
}

static process_result process(sg_facts *f, const sg_expr *e)
{
    switch ((sg_op)e->op) {
    case SG_OP_TRUE:
        return PROCESS_OK;
    case SG_OP_FALSE:
        f->inconsistent = true;
        return PROCESS_OK;
    case SG_OP_AND:
        for (size_t i = 0; i < e->nargs; i++) {
            process_result r = process(f, e->args[i]);
            if (r != PROCESS_OK)
                return r;
        }
        return PROCESS_OK;
    default:
        break;
    }
    const sg_expr *atom, *val, *sym;
    int k;
    fmpz_t c;
    fmpz_init(c);
    process_result res = PROCESS_OK;
    bool ok = true;
    if (e->op == SG_OP_EQ0 || e->op == SG_OP_GE0 || e->op == SG_OP_NE0) {
        const sg_expr *p = e->args[0];
        if (e->op == SG_OP_EQ0 && ((sym = solve_for_symbol(f, p, &val)) || (sym = solve_divisibility(f, p, &val)))) {
            res = add_replacement(f, sym, val) ? PROCESS_REPLACED : PROCESS_NOMEM;
        } else if (e->op != SG_OP_NE0 && single_atom(p, &atom, &k, c)) {
            /* k*atom + c >= 0 (or == 0), k = +-1 */
            sg__iv iv;
            sg__iv_init(&iv);
            fmpz_neg(c, c);
            if (k < 0)
                fmpz_neg(c, c); /* atom <= c */
            if (e->op == SG_OP_EQ0)
                sg__iv_set_point(&iv, c);
            else if (k > 0)
                iv.lo_inf = false, fmpz_set(&iv.lo, c); /* atom >= -c */
            else
                iv.hi_inf = false, fmpz_set(&iv.hi, c); /* atom <= c */
            ok = meet_bound(f, atom, &iv);
            sg__iv_clear(&iv);
            if (ok && e->op == SG_OP_EQ0)
                ok = push_division(f, atom, c);
        } else if (e->op == SG_OP_NE0 && single_atom(p, &atom, &k, c)) {
            ok = push_ne(f, atom, e) && push_axiom(f, e);
        } else if (e->op == SG_OP_NE0) {
            ok = push_axiom(f, e);
        } else {
            ok = push_lin(f, e);
        }
    } else {
        ok = push_axiom(f, e);
    }
    fmpz_clear(c);
    return ok ? res : PROCESS_NOMEM;
}

/* p != 0 on one atom moves a bound that stands on the excluded value: done
 * for the atoms whose bounds were touched (and those of new such facts). */
static bool apply_ne(sg_facts *f)
{
    fmpz_t c, v;
    fmpz_init(c);
    fmpz_init(v);
    for (size_t a = 0; a < f->touched.n; a++) {
        size_t *i = sg__idmap_find(&f->neidx, f->touched.v[a]->id);
        size_t *j = sg__idmap_find(&f->bidx, f->touched.v[a]->id);
        if (!i || !j)
            continue;
        const sg__list *l = &f->nes[*i];
        sg__iv *b = &f->biv[*j];
        bool changed = true;
        for (size_t round = 0; changed && round <= l->n; round++) {
            changed = false;
            for (size_t e = 0; e < l->n; e++) {
                const sg_expr *atom;
                int k;
                if (!single_atom(l->v[e]->args[0], &atom, &k, c))
                    continue;
                fmpz_neg(v, c);
                if (k < 0)
                    fmpz_neg(v, v); /* the excluded value of atom */
                if (!b->lo_inf && fmpz_equal(&b->lo, v)) {
                    fmpz_add_ui(&b->lo, &b->lo, 1);
                    changed = true;
                }
                if (!b->hi_inf && fmpz_equal(&b->hi, v)) {
                    fmpz_sub_ui(&b->hi, &b->hi, 1);
                    changed = true;
                }
            }
            if (changed)
                stamp_bound(f, f->touched.v[a]);
            if (!b->lo_inf && !b->hi_inf && fmpz_cmp(&b->lo, &b->hi) > 0)
                f->inconsistent = true;
        }
    }
    fmpz_clear(c);
    fmpz_clear(v);
    return true;
}

/* Bounds propagation over one linear fact: for sum a_j*v_j + c >= 0, each
 * atom v_i with a_i > 0 is at least ceil(-(c + sum_{j != i} max(a_j*v_j)) / a_i)
 * (and symmetrically; both ways for an equality). Atoms whose bounds moved
 * are added to *moved. */
static bool propagate_fact(sg_facts *f, const sg_expr *fact, sg__list *moved)
{
    if (!fact)
        return true; /* dropped */
    sg_ctx *ctx = f->ctx;
    const sg_expr *p = fact->args[0];
    bool eq = fact->op == SG_OP_EQ0, ok = true;
    if (p->op != SG_OP_ADD || p->nargs > 8)
        return true;
    fmpz_t rest, t, q;
    fmpz_init(rest);
    fmpz_init(t);
    fmpz_init(q);
    sg__iv r, nb, before;
    sg__iv_init(&r);
    sg__iv_init(&nb);
    sg__iv_init(&before);
    for (int dir = 0; dir < (eq ? 2 : 1) && ok; dir++) { /* p >= 0, and -p >= 0 for equalities */
        for (size_t i = 0; i < p->nargs && ok; i++) {
            if (!sg__is_atom(p->args[i]))
                continue;
            /* max of c + sum_{j != i} a_j v_j (signs flipped for dir 1) */
            fmpz_set(rest, &p->u.val);
            if (dir)
                fmpz_neg(rest, rest);
            bool inf = false;
            for (size_t j = 0; j < p->nargs && !inf && ok; j++) {
                if (j == i)
                    continue;
                if (sg__range(ctx, p->args[j], sg__facts_atom_range, f, NULL, &r) != SG_OK) {
                    ok = false;
                    break;
                }
                int sgn = fmpz_sgn(sg__nums(p) + j) * (dir ? -1 : 1);
                if (sgn > 0 ? r.hi_inf : r.lo_inf) {
                    inf = true;
                    break;
                }
                fmpz_mul(t, sg__nums(p) + j, sgn > 0 ? &r.hi : &r.lo);
                if (dir)
                    fmpz_neg(t, t);
                fmpz_add(rest, rest, t);
            }
            if (inf || !ok)
                continue;
            /* a_i * v_i + rest >= 0 */
            fmpz_set(t, sg__nums(p) + i);
            if (dir)
                fmpz_neg(t, t);
            fmpz_neg(q, rest);
            sg__iv_set_full(&nb);
            if (fmpz_sgn(t) > 0) {
                fmpz_cdiv_q(&nb.lo, q, t); /* v >= ceil(-rest / a) */
                nb.lo_inf = false;
            } else {
                fmpz_fdiv_q(&nb.hi, q, t); /* v <= floor(-rest / a) for a < 0 */
                nb.hi_inf = false;
            }
            const sg__iv *old = sg__facts_bound(f, p->args[i]);
            if (old)
                sg__iv_set(&before, old);
            ok = meet_bound(f, p->args[i], &nb);
            if (ok && (!old || !sg__iv_equal(&before, sg__facts_bound(f, p->args[i]))))
                ok = sg__list_push(ctx, moved, p->args[i]);
        }
    }
    sg__iv_clear(&r);
    sg__iv_clear(&nb);
    sg__iv_clear(&before);
    fmpz_clear(rest);
    fmpz_clear(t);
    fmpz_clear(q);
    return ok;
}

/* Propagate bounds from the linear facts from index `from` on, then from
 * every linear fact that mentions an atom whose bounds moved (a worklist
 * over the occurrence index). The number of steps is bounded, enough for
 * chains and finite for cycles; stopping early only loses precision. */
static bool propagate(sg_facts *f, size_t from)
{
    sg_ctx *ctx = f->ctx;
    size_t n = f->lin.n, steps = 0, limit = 8 * (n - from + f->touched.n) + 64;
    if (!n) {
        f->touched.n = 0;
        return true;
    }
    size_t *queue = sg__malloc(ctx, n * sizeof *queue);
    bool *queued = sg__calloc(ctx, n, sizeof *queued);
    sg__list moved = {0};
    bool ok = queue && queued;
    size_t head = 0, tail = 0; /* a ring over n slots: each fact is queued at most once at a time */
    for (size_t l = from; l < n && ok; l++) {
        queue[tail++ % n] = l;
        queued[l] = true;
    }
    /* and the facts that mention an atom whose bounds moved */
    for (size_t a = 0; a < f->touched.n && ok; a++) {
        const sg__occ *o = sg__facts_occurrences(f, f->touched.v[a]);
        for (size_t k = 0; o && k < o->n; k++)
            if (!queued[o->v[k]]) {
                queued[o->v[k]] = true;
                queue[tail++ % n] = o->v[k];
            }
    }
    f->touched.n = 0;
    while (ok && head != tail && steps++ < limit && !f->inconsistent) {
        size_t l = queue[head++ % n];
        queued[l] = false;
        moved.n = 0;
        ok = propagate_fact(f, f->lin.v[l], &moved);
        for (size_t a = 0; a < moved.n && ok; a++) {
            const sg__occ *o = sg__facts_occurrences(f, moved.v[a]);
            for (size_t k = 0; o && k < o->n; k++)
                if (!queued[o->v[k]]) { /* the fact itself too: its rounding may cascade */
                    queued[o->v[k]] = true;
                    queue[tail++ % n] = o->v[k];
                }
        }
    }
    sg_free(queue);
    sg_free(queued);
    sg__list_free(&moved);
    return ok;
}

/* Process fact j (the next one when j == f->nfst) with the current
 * replacements, unless its form is what was processed last; the linear facts
 * of its earlier form are dropped. */
static process_result process_fact(sg_facts *f, size_t j)
{
    sg_ctx *ctx = f->ctx;
    const sg_expr *e = sg__facts_replace(f, f->facts.v[j]);
    if (!e)
        return PROCESS_NOMEM;
    if (j == f->nfst) {
        if (!sg__grow(ctx, (void **)&f->fst, &f->capfst, f->nfst + 1, sizeof *f->fst))
            return PROCESS_NOMEM;
        f->fst[f->nfst++] = (sg__fstate){NULL, 0, 0, 0};
    }
    sg__fstate *s = &f->fst[j];
    if (s->form == e)
        return PROCESS_OK;
    for (size_t l = s->lin_lo; l < s->lin_hi; l++)
        if (f->lin.v[l]) {
            drop_lin(f, f->lin.v[l]);
            f->lin.v[l] = NULL;
        }
    s->form = e;
    s->sig = signature(f, e);
    s->lin_lo = f->lin.n;
    process_result r = process(f, e);
    f->fst[j].lin_hi = f->lin.n;
    return r;
}

/* Mark the processed facts whose forms mention the newest replaced symbol;
 * returns the smallest index marked, or lo if smaller. */
static size_t mark_mentions(sg_facts *f, bool *pending, size_t lo)
{
    const sg_expr *sym = f->rsym.v[f->rsym.n - 1];
    sg__sig bit = sym_bit(sym);
    for (size_t j = 0; j < f->nfst; j++)
        if ((f->fst[j].sig & bit) && mentions(f, f->fst[j].form, sym, bit)) {
            pending[j] = true;
            lo = j < lo ? j : lo;
        }
    return lo;
}

#define SG_MAX_CASCADE 1000 /* replacements that one fact may set off */

/* Process fact i, the next one, then every fact that a replacement made on
 * the way rewrites, in the order of the facts: each fact ends up processed
 * in its form under the final replacements. */
static bool add_fact(sg_facts *f, size_t i)
{
    sg_ctx *ctx = f->ctx;
    bool *pending = NULL, ok = true;
    size_t next = i, lo = SIZE_MAX, made = 0;
    while (ok && next != SIZE_MAX) {
        process_result r = process_fact(f, next);
        ok = r != PROCESS_NOMEM;
        if (ok && r == PROCESS_REPLACED) {
            if (++made > SG_MAX_CASCADE)
                ok = (sg__err(f->ctx, SG_ELIMIT, "too many replacements"), false);
            else if (!pending && !(pending = sg__calloc(ctx, f->nfst, sizeof *pending)))
                ok = (sg__nomem(f->ctx), false);
            else
                lo = mark_mentions(f, pending, lo);
        }
        for (next = SIZE_MAX; pending && lo < f->nfst; lo++)
            if (pending[lo]) {
                pending[lo] = false;
                next = lo;
                break;
            }
    }
    sg_free(pending);
    return ok;
}

/* ---- lower bounds as assumed ---- */

/* c is x + k >= 0 or x + k == 0 for a symbol x: x >= -k. Record it. */
static bool assumed_bound(sg_facts *f, const sg_expr *c)
{
    sg_ctx *ctx = f->ctx;
    const sg_expr *p;
    if ((c->op != SG_OP_GE0 && c->op != SG_OP_EQ0) || (p = c->args[0])->op != SG_OP_ADD || p->nargs != 1 ||
        p->args[0]->op != SG_OP_SYM || !fmpz_is_one(sg__nums(p)))
        return true;
    size_t *i = sg__idmap_find(&f->alidx, p->args[0]->id);
    if (i) {
        fmpz_t lo;
        fmpz_init(lo);
        fmpz_neg(lo, &p->u.val);
        if (fmpz_cmp(f->alo + *i, lo) < 0)
            fmpz_swap(f->alo + *i, lo);
        fmpz_clear(lo);
        return true;
    }
    if (f->nalo == f->capalo) {
        size_t cap = f->capalo ? 2 * f->capalo : 16;
        fmpz *a = sg__realloc(ctx, f->alo, cap * sizeof *a);
        if (!a)
            return sg__nomem(f->ctx), false;
        for (size_t k = f->capalo; k < cap; k++)
            fmpz_init(a + k);
        f->alo = a;
        f->capalo = cap;
    }
    if (!sg__idmap_put(&f->alidx, p->args[0]->id, f->nalo))
        return sg__nomem(f->ctx), false;
    fmpz_neg(f->alo + f->nalo++, &p->u.val);
    return true;
}

/* The lower bounds that fact e, as assumed, gives its symbols: e itself or
 * each argument of a top-level And. */
static bool assumed_bounds(sg_facts *f, const sg_expr *e)
{
    if (e->op != SG_OP_AND)
        return assumed_bound(f, e);
    for (size_t j = 0; j < e->nargs; j++)
        if (!assumed_bound(f, e->args[j]))
            return false;
    return true;
}

bool sg__facts_assumed_lower(sg_facts *f, const sg_expr *sym, fmpz_t lo)
{
    size_t *i = sg__idmap_find(&f->alidx, sym->id);
    f->lower_looks++;
    if (i)
        fmpz_set(lo, f->alo + *i);
    return i != NULL;
}

/* Add fact i (the next one) and propagate what it changed. */
static bool step(sg_facts *f, size_t i)
{
    size_t nlin = f->lin.n;
    f->touched.n = 0;
    return assumed_bounds(f, f->facts.v[i]) && add_fact(f, i) && apply_ne(f) && propagate(f, nlin) &&
           apply_ne(f);
}

/* Derive everything again from the facts, one step a fact as they were
 * assumed: bounds propagation stops after a bounded number of steps, so
 * deriving all at once could know less than the base that was built
 * fact by fact, and a copy or a restore must know what the original knew. */
static bool derive(sg_facts *f)
{
    clear_derived(f);
    for (size_t i = 0; i < f->facts.n; i++)
        if (!step(f, i))
            return false;
    return true;
}

/* ---- facts that cannot be evaluated ---- */

typedef struct domain_walk {
    sg_ctx *ctx;
    sg__idmap seen;
    const sg_expr *bad; /* the first sub-expression found that always fails */
    sg_status why;
    bool oom;
} domain_walk;

static bool is_division(sg_op op)
{
    return op == SG_OP_FLOORDIV || op == SG_OP_MOD || op == SG_OP_CLEANDIV || op == SG_OP_TRUNCDIV ||
           op == SG_OP_TRUNCMOD;
}

/* Find in e a sub-expression whose evaluation fails whatever values the
 * symbols take: a division or modulo by the constant 0, a power with a
 * negative constant exponent, or an operation of constants that the
 * constructors kept unevaluated because evaluating it fails (CleanDiv(3, 2)).
 * The expression is a DAG: each node is looked at once. */
static void domain_find(domain_walk *W, const sg_expr *e)
{
    if (W->bad || W->oom || e->nargs == 0 || sg__idmap_find(&W->seen, e->id))
        return;
    if (!sg__idmap_put(&W->seen, e->id, 0)) {
        W->oom = true;
        return;
    }
    sg_op op = (sg_op)e->op;
    if (is_division(op) && e->args[1]->op == SG_OP_INT && fmpz_is_zero(&e->args[1]->u.val)) {
        W->bad = e;
        W->why = SG_EZERODIV;
        return;
    }
    if (op == SG_OP_POW && e->args[1]->op == SG_OP_INT && fmpz_sgn(&e->args[1]->u.val) < 0) {
        W->bad = e;
        W->why = SG_ENEGEXP;
        return;
    }
    bool constants = op != SG_OP_ADD && op != SG_OP_MUL; /* their numbers are not arguments */
    for (size_t i = 0; i < e->nargs && constants; i++)
        constants = e->args[i]->op == SG_OP_INT;
    if (constants) {
        const sg_expr *v;
        sg_status s = sg_expr_eval(W->ctx, &v, e, 0, NULL, NULL);
        if (s == SG_EZERODIV || s == SG_ENEGEXP || s == SG_EINEXACT) {
            W->bad = e;
            W->why = s;
            return;
        }
        if (s == SG_ENOMEM) {
            W->oom = true;
            return;
        }
        sg_ctx_reset_error(W->ctx); /* a value beyond the bit limit: evaluation may still not need it */
    }
    for (size_t i = 0; i < e->nargs; i++)
        domain_find(W, e->args[i]);
}

/* SG_OK, or the error that evaluating fact raises whatever the values of its
 * symbols (SG_EZERODIV, SG_ENEGEXP, SG_EINEXACT), set in the context with
 * the sub-expression that raises it; SG_ENOMEM. */
static sg_status domain_check(sg_ctx *ctx, const sg_expr *fact)
{
    domain_walk W = {.ctx = ctx};
    if (!sg__idmap_init(ctx, &W.seen, 16)) {
        sg__idmap_free(&W.seen);
        return sg__nomem(ctx);
    }
    domain_find(&W, fact);
    sg__idmap_free(&W.seen);
    if (W.oom)
        return sg__nomem(ctx);
    if (!W.bad)
        return SG_OK;
    char *text = NULL;
    sg_status ps = sg_print(ctx, &text, W.bad, SG_FMT_SG);
    const char *what = W.why == SG_EZERODIV ? (W.bad->op == SG_OP_MOD || W.bad->op == SG_OP_TRUNCMOD ? "modulo by zero"
                                                                                                  : "division by zero")
                       : W.why == SG_ENEGEXP ? "negative exponent"
                                             : "the divisor does not divide the dividend";
    sg__err(ctx, W.why, "sg_facts_assume: %s: %s (a fact must be defined)", ps ? "a sub-expression" : text, what);
    sg_free(text);
    return W.why;
}

sg_status sg_facts_assume(sg_facts *f, const sg_expr *fact)
{
    if (!f)
        return SG_EINVAL;
    sg_ctx *ctx = f->ctx;
    if (!fact)
        return sg__err(ctx, SG_EINVAL, "sg_facts_assume: fact is NULL");
    if (fact->sort != SG_SORT_BOOL)
        return sg__err(ctx, SG_ETYPE, "sg_facts_assume: a fact must be a boolean expression");
    sg_status ds = domain_check(ctx, fact);
    if (ds)
        return ds;
    bool was_inconsistent = f->inconsistent;
    uint64_t nomem = ctx->nnomem, nerr = ctx->nerr;
    if (!sg__list_push(ctx, &f->facts, fact))
        return sg__nomem(ctx);
    sg__facts_grown(f);
    bool ok = step(f, f->facts.n - 1);
    if (!ok || ctx->nnomem != nomem) {
        /* leave the base as it was: drop the fact and derive again (a failure
         * to allocate that a helper absorbed fails the call too: what a fact
         * gives must not depend on the memory at hand) */
        sg_status s = ctx->nnomem != nomem || ctx->nerr == nerr ? SG_ENOMEM : ctx->err;
        char msg[sizeof ctx->msg];
        strcpy(msg, ctx->nerr == nerr ? "out of memory" : ctx->msg);
        f->facts.n--;
        sg__facts_invalidate(f);
        derive(f);
        return sg__err(ctx, s, "sg_facts_assume: %s", msg);
    }
    if (f->inconsistent && !was_inconsistent)
        return sg__err(ctx, SG_EASSERT, "sg_facts_assume: the facts contradict each other");
    return SG_OK;
}

void sg__facts_set_policy(sg_facts *f, bool (*may_replace)(void *, const sg_expr *, const sg_expr *), void *user)
{
    f->may_replace = may_replace;
    f->policy_user = user;
}

bool sg__facts_truncate(sg_facts *f, size_t n)
{
    if (n >= f->facts.n)
        return true;
    f->facts.n = n;
    sg__facts_invalidate(f);
    return derive(f);
}

sg_status sg__facts_copy_policy(sg_facts **out, const sg_facts *f,
                                bool (*may_replace)(void *, const sg_expr *, const sg_expr *), void *user)
{
    sg_facts *g;
    sg_status s = sg_facts_new(f->ctx, &g);
    if (s)
        return s;
    g->budget = f->budget;
    g->may_replace = may_replace;
    g->policy_user = user;
    if (!list_copy(f->ctx, &g->facts, &f->facts) || !list_copy(f->ctx, &g->divfact, &f->divfact) ||
        !list_copy(f->ctx, &g->divsym, &f->divsym) || !derive(g)) {
        sg_facts_free(g);
        return sg__nomem(f->ctx);
    }
    *out = g;
    return SG_OK;
}

sg_status sg_facts_copy(sg_facts **out, const sg_facts *f)
{
    if (!out || !f)
        return f ? sg__err(f->ctx, SG_EINVAL, "sg_facts_copy: out is NULL") : SG_EINVAL;
    *out = NULL;
    return sg__facts_copy_policy(out, f, f->may_replace, f->policy_user);
}
