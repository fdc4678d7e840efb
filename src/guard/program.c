/* Compiling guards to a guard program (guard.h; the layout is in
 * guard_private.h): validation, batched runs for the common relation shapes,
 * register instructions for the rest with one register per distinct node,
 * then register reuse by last use. Linear in the size of the guards. */
#include <stdlib.h>
#include <string.h>

#include "guard/guard_private.h"

/* ---- shared helpers ---------------------------------------------------- */

void sg__gp_lin(gp_lin *L, const sg_expr *p)
{
    if (p->op == SG_OP_ADD) {
        L->n = p->nargs;
        L->k = sg__nums(p);
        L->m = p->args;
        L->c = &p->u.val;
    } else if (p->op == SG_OP_INT) {
        L->n = 0;
        L->k = NULL;
        L->m = NULL;
        L->c = &p->u.val;
    } else {
        L->n = 1;
        L->k = NULL;
        L->m = (const sg_expr *const *)&L->self;
        L->self = p;
        L->c = NULL;
    }
}

static int big_node(const sg_expr *e)
{
    if (e->op == SG_OP_INT)
        return !fmpz_fits_si(&e->u.val);
    if (e->op == SG_OP_ADD && !fmpz_fits_si(&e->u.val))
        return 1;
    if (e->op == SG_OP_ADD || e->op == SG_OP_MUL)
        for (size_t i = 0; i < e->nargs; i++)
            if (!fmpz_fits_si(sg__nums(e) + i))
                return 1;
    return 0;
}

int sg__gp_has_big(gp_bigscan *S, const sg_expr *e)
{
    size_t *f = sg__idmap_find(&S->seen, e->id);
    if (f)
        return (int)*f;
    int r = big_node(e);
    for (size_t i = 0; i < e->nargs && !r; i++) {
        r = sg__gp_has_big(S, e->args[i]);
        if (r < 0)
            return r;
    }
    if (!sg__idmap_put(&S->seen, e->id, (size_t)r))
        return -1;
    return r;
}

sg_status sg__gp_check_ctx(sg_ctx *ctx, const sg_guard_prog *p, const char *fn)
{
    if (!ctx)
        return SG_EINVAL;
    if (!p)
        return sg__err(ctx, SG_EINVAL, "%s: the program is NULL", fn);
    if (p->ctx != ctx)
        return sg__err(ctx, SG_EINVAL, "%s: the program belongs to another context", fn);
    return SG_OK;
}

/* ---- the compiler ------------------------------------------------------- */

#define NOREG UINT32_MAX

typedef struct comp {
    sg_guard_prog *p;
    sg_ctx *ctx;
    sg__idmap memo;   /* node id -> virtual register */
    uint32_t *owner;  /* per virtual register: the guard that computed it */
    uint8_t *cheap;   /* per virtual register: a load or a constant (never garbage) */
    size_t nvregs, capv;
    size_t capi, capo, capc, cape[GP_NRUNKINDS];
    uint32_t guard;   /* the guard being compiled */
    uint32_t dep1;
    bool oom;
} comp;

static uint32_t new_vreg(comp *C, bool cheap)
{
    sg_ctx *ctx = C->ctx;
    if (!sg__grow(ctx, (void **)&C->owner, &C->capv, C->nvregs + 1, sizeof *C->owner)) {
        C->oom = true;
        return NOREG;
    }
    size_t cap = C->capv;
    void *q = sg__realloc(ctx, C->cheap, cap);
    if (!q) {
        C->oom = true;
        return NOREG;
    }
    C->cheap = q;
    C->owner[C->nvregs] = C->guard;
    C->cheap[C->nvregs] = cheap;
    return (uint32_t)C->nvregs++;
}

static gp_insn *new_insn(comp *C, gp_op op)
{
    sg_ctx *ctx = C->ctx;
    sg_guard_prog *p = C->p;
    if (!sg__grow(ctx, (void **)&p->insns, &C->capi, p->ninsns + 1, sizeof *p->insns)) {
        C->oom = true;
        return NULL;
    }
    gp_insn *I = &p->insns[p->ninsns++];
    memset(I, 0, sizeof *I);
    I->op = (uint8_t)op;
    I->dst = I->a = I->b = I->c = NOREG;
    return I;
}

/* Room for n operands; returns their offset. */
static bool new_opnds(comp *C, size_t n, uint32_t *off)
{
    sg_ctx *ctx = C->ctx;
    sg_guard_prog *p = C->p;
    if (!sg__grow(ctx, (void **)&p->opnd, &C->capo, p->nopnd + n, sizeof *p->opnd) ||
        !sg__grow(ctx, (void **)&p->coef, &C->capc, p->nopnd + n, sizeof *p->coef)) {
        C->oom = true;
        return false;
    }
    *off = (uint32_t)p->nopnd;
    p->nopnd += n;
    return true;
}

static uint8_t rel_mask(sg_op op)
{
    return op == SG_OP_GE0 ? GP_MASK_GE0 : op == SG_OP_EQ0 ? GP_MASK_EQ0 : GP_MASK_NE0;
}

static uint32_t node(comp *C, const sg_expr *e);

/* The operands of e (all of its arguments) as registers at a new offset. */
static bool node_args(comp *C, const sg_expr *e, uint32_t *off)
{
    sg_ctx *ctx = C->ctx;
    uint32_t *regs = sg__malloc(ctx, e->nargs * sizeof *regs);
    if (!regs) {
        C->oom = true;
        return false;
    }
    bool ok = true;
    for (size_t i = 0; i < e->nargs && ok; i++)
        ok = (regs[i] = node(C, e->args[i])) != NOREG;
    if (ok && (ok = new_opnds(C, e->nargs, off))) {
        memcpy(C->p->opnd + *off, regs, e->nargs * sizeof *regs);
        for (size_t i = 0; i < e->nargs; i++)
            C->p->coef[*off + i] = (e->op == SG_OP_ADD || e->op == SG_OP_MUL) ? fmpz_get_si(sg__nums(e) + i) : 0;
    }
    sg_free(regs);
    return ok;
}

static const gp_op node_ops[SG_OP_COUNT_] = {
    [SG_OP_ADD] = GP_ADD,           [SG_OP_MUL] = GP_MUL,           [SG_OP_POW] = GP_POW,
    [SG_OP_FLOORDIV] = GP_FLOORDIV, [SG_OP_MOD] = GP_MOD,           [SG_OP_CLEANDIV] = GP_CLEANDIV,
    [SG_OP_TRUNCDIV] = GP_TRUNCDIV, [SG_OP_TRUNCMOD] = GP_TRUNCMOD, [SG_OP_MIN] = GP_MIN,
    [SG_OP_MAX] = GP_MAX,           [SG_OP_ABS] = GP_ABS,           [SG_OP_WHERE] = GP_WHERE,
    [SG_OP_BAND] = GP_BAND,         [SG_OP_BOR] = GP_BOR,           [SG_OP_BXOR] = GP_BXOR,
    [SG_OP_GE0] = GP_REL,           [SG_OP_EQ0] = GP_REL,           [SG_OP_NE0] = GP_REL,
    [SG_OP_AND] = GP_AND,           [SG_OP_OR] = GP_OR,
};

static uint32_t node_insn(comp *C, const sg_expr *e)
{
    gp_op op = node_ops[e->op];
    uint32_t a = NOREG, b = NOREG, c = NOREG, off = 0;
    switch (op) {
    case GP_ADD: case GP_MUL: case GP_MIN: case GP_MAX:
    case GP_BAND: case GP_BOR: case GP_BXOR: case GP_AND: case GP_OR:
        if (!node_args(C, e, &off))
            return NOREG;
        break;
    default:
        if (e->nargs > 0 && (a = node(C, e->args[0])) == NOREG)
            return NOREG;
        if (e->nargs > 1 && (b = node(C, e->args[1])) == NOREG)
            return NOREG;
        if (e->nargs > 2 && (c = node(C, e->args[2])) == NOREG)
            return NOREG;
    }
    uint32_t dst = new_vreg(C, false);
    gp_insn *I = dst == NOREG ? NULL : new_insn(C, op);
    if (!I)
        return NOREG;
    I->dst = dst;
    I->a = a;
    I->b = b;
    I->c = c;
    I->off = off;
    I->n = e->nargs;
    if (op == GP_ADD)
        I->k = fmpz_get_si(&e->u.val);
    if (op == GP_REL)
        I->mask = rel_mask((sg_op)e->op);
    return dst;
}

static uint32_t node(comp *C, const sg_expr *e)
{
    size_t *m = sg__idmap_find(&C->memo, e->id);
    if (m) {
        uint32_t v = (uint32_t)*m;
        if (!C->cheap[v] && C->owner[v] != C->guard && C->owner[v] + 1 > C->dep1)
            C->dep1 = C->owner[v] + 1;
        return v;
    }
    uint32_t v;
    if (e->op == SG_OP_SYM || e->op == SG_OP_INT || e->op == SG_OP_TRUE || e->op == SG_OP_FALSE) {
        v = new_vreg(C, true);
        gp_insn *I = v == NOREG ? NULL : new_insn(C, e->op == SG_OP_SYM ? GP_LOAD : GP_CONST);
        if (!I)
            return NOREG;
        I->dst = v;
        if (e->op == SG_OP_SYM)
            I->a = (uint32_t)*sg__idmap_find(&C->p->slotmap, e->id);
        else
            I->k = e->op == SG_OP_INT ? fmpz_get_si(&e->u.val) : e->op == SG_OP_TRUE;
    } else {
        v = node_insn(C, e);
        if (v == NOREG)
            return NOREG;
    }
    if (!sg__idmap_put(&C->memo, e->id, v)) {
        C->oom = true;
        return NOREG;
    }
    return v;
}

/* ---- batched runs -------------------------------------------------------- */

static bool fits_i32(const fmpz *k)
{
    return fmpz_cmp_si(k, INT32_MIN) >= 0 && fmpz_cmp_si(k, INT32_MAX) <= 0;
}

/* The set {f in int64 : k*f + c REL 0} (k != 0, REL the relation of mask) as
 * an interval modulo 2**64 (gp_elt: f holds iff (uint64_t)f - lo <= span).
 * False when the set is empty. Exact (fmpz). */
static bool rel_interval(int64_t k, int64_t c, uint32_t mask, uint64_t *lo, uint64_t *span)
{
    fmpz_t nc, q, r, mn, mx;
    fmpz_init(nc);
    fmpz_init(q);
    fmpz_init(r);
    fmpz_init_set_si(mn, INT64_MIN);
    fmpz_init_set_si(mx, INT64_MAX);
    fmpz_set_si(nc, c);
    fmpz_neg(nc, nc);
    fmpz_t kk;
    fmpz_init_set_si(kk, k);
    fmpz_fdiv_qr(q, r, nc, kk);
    bool ok = true, point = fmpz_is_zero(r); /* k*f + c == 0 at f = q */
    if (mask == GP_MASK_GE0) {
        /* k > 0: f >= ceil(-c / k); k < 0: f <= floor(-c / k) */
        if (k > 0) {
            if (!point)
                fmpz_add_ui(q, q, 1);
            fmpz_set(r, mx);
        } else {
            fmpz_set(r, q);
            fmpz_set(q, mn);
        }
        if (fmpz_cmp(q, mn) < 0)
            fmpz_set(q, mn);
        if (fmpz_cmp(r, mx) > 0)
            fmpz_set(r, mx);
        ok = fmpz_cmp(q, r) <= 0;
        if (ok) {
            *lo = (uint64_t)fmpz_get_si(q);
            *span = (uint64_t)fmpz_get_si(r) - *lo;
        }
    } else if (mask == GP_MASK_EQ0) {
        ok = point && fmpz_cmp(q, mn) >= 0 && fmpz_cmp(q, mx) <= 0;
        if (ok) {
            *lo = (uint64_t)fmpz_get_si(q);
            *span = 0;
        }
    } else if (point && fmpz_cmp(q, mn) >= 0 && fmpz_cmp(q, mx) <= 0) {
        /* every f but q: from q + 1 around to q - 1 */
        *lo = (uint64_t)fmpz_get_si(q) + 1;
        *span = UINT64_MAX - 1;
    } else {
        *lo = (uint64_t)INT64_MIN;
        *span = UINT64_MAX;
    }
    fmpz_clear(nc);
    fmpz_clear(q);
    fmpz_clear(r);
    fmpz_clear(mn);
    fmpz_clear(mx);
    fmpz_clear(kk);
    return ok;
}

/* Append guard g to a run of kind op (a new one unless the last instruction
 * is such a run ending at g - 1); returns its element. */
static gp_elt *run_slot(comp *C, gp_op op, uint32_t g)
{
    sg_ctx *ctx = C->ctx;
    sg_guard_prog *p = C->p;
    gp_insn *last = p->ninsns ? &p->insns[p->ninsns - 1] : NULL;
    if (!sg__grow(ctx, (void **)&p->elts[op], &C->cape[op], p->nelts[op] + 1, sizeof *p->elts[op])) {
        C->oom = true;
        return NULL;
    }
    if (!last || last->op != op || last->b + last->n != g) {
        last = new_insn(C, op);
        if (!last)
            return NULL;
        last->b = g;
        last->off = (uint32_t)p->nelts[op];
    }
    last->n++;
    p->nbatched++;
    return &p->elts[op][p->nelts[op]++];
}

static uint32_t slot_of(comp *C, const sg_expr *e)
{
    return (uint32_t)*sg__idmap_find(&C->p->slotmap, e->id);
}

static bool is_pow2(uint64_t m)
{
    return m && !(m & (m - 1));
}

/* The run kind of an atom m (a term that is not a slot) and its operands in
 * E (a, b), or GP_NRUNKINDS when m has none: x % m or x // m with a constant
 * 0 < m < 2**32, x*y, x**2, Max or Min of two slots. */
static gp_op atom_kind(comp *C, const sg_expr *m, gp_elt *E)
{
    const sg_expr *x = m->nargs ? m->args[0] : NULL, *y = m->nargs > 1 ? m->args[1] : NULL;
    if (!x || x->op != SG_OP_SYM)
        return GP_NRUNKINDS;
    E->a = E->b = slot_of(C, x);
    switch ((sg_op)m->op) {
    case SG_OP_MOD:
    case SG_OP_FLOORDIV: {
        if (y->op != SG_OP_INT || fmpz_sgn(&y->u.val) <= 0 || fmpz_cmp_ui(&y->u.val, UINT32_MAX) > 0)
            return GP_NRUNKINDS;
        uint64_t d = fmpz_get_ui(&y->u.val);
        bool mod = m->op == SG_OP_MOD;
        if (!is_pow2(d)) {
            E->b = (uint32_t)d;
            return mod ? GP_RUN_MOD : GP_RUN_DIV;
        }
        E->b = mod ? (uint32_t)(d - 1) : (uint32_t)__builtin_ctzll(d);
        return mod ? GP_RUN_MODP2 : GP_RUN_DIVP2;
    }
    case SG_OP_MUL:
        if (m->nargs == 1 && fmpz_equal_si(sg__nums(m), 2))
            return GP_RUN_MUL;
        if (m->nargs == 2 && y->op == SG_OP_SYM && fmpz_is_one(sg__nums(m)) && fmpz_is_one(sg__nums(m) + 1)) {
            E->b = slot_of(C, y);
            return GP_RUN_MUL;
        }
        return GP_NRUNKINDS;
    case SG_OP_MAX:
    case SG_OP_MIN:
        if (m->nargs != 2 || y->op != SG_OP_SYM)
            return GP_NRUNKINDS;
        E->b = slot_of(C, y);
        return m->op == SG_OP_MAX ? GP_RUN_MAX : GP_RUN_MIN;
    default:
        return GP_NRUNKINDS;
    }
}

/* Guard g as an element of a run if it is a relation p REL 0 of a shape that
 * a run kind covers (guard_private.h): p = c + k0*m0 [+ k1*z] with m0 a slot
 * or an atom, z a slot, |k1| < 2**31, and |k0| < 2**31 (= 1 with a z term);
 * the set of f must not be empty. 1 if done, 0 if not eligible, -1 on
 * failure. */
static int try_run(comp *C, const sg_expr *t, uint32_t g)
{
    if (t->op != SG_OP_GE0 && t->op != SG_OP_EQ0 && t->op != SG_OP_NE0)
        return 0;
    gp_lin L;
    sg__gp_lin(&L, t->args[0]);
    if (L.n < 1 || L.n > 2 || (L.c && !fmpz_fits_si(L.c)))
        return 0;
    for (size_t i = 0; i < L.n; i++)
        if (!fits_i32(sg__gp_lin_k(&L, i)))
            return 0;
    /* m0: the atom if there is one, else a slot with coefficient +-1 if the
     * other term is a slot too; m1: the z term */
    size_t i0 = 0;
    if (L.n == 2 && (L.m[0]->op == SG_OP_SYM && (L.m[1]->op != SG_OP_SYM || !fmpz_is_pm1(sg__gp_lin_k(&L, 0)))))
        i0 = 1;
    const sg_expr *m0 = L.m[i0], *m1 = L.n == 2 ? L.m[1 - i0] : NULL;
    int64_t k0 = fmpz_get_si(sg__gp_lin_k(&L, i0)), k1 = m1 ? fmpz_get_si(sg__gp_lin_k(&L, 1 - i0)) : 0;
    if (m1 && (m1->op != SG_OP_SYM || (k0 != 1 && k0 != -1) || k1 * k0 < INT32_MIN || k1 * k0 > INT32_MAX))
        return 0;
    gp_elt E = {0};
    gp_op kind = GP_RUN_SLOT;
    if (m0->op == SG_OP_SYM)
        E.a = E.b = slot_of(C, m0);
    else if ((kind = atom_kind(C, m0, &E)) == GP_NRUNKINDS)
        return 0;
    if (m1) {
        /* t = k0*(m0 + k0*k1*z) + c, as k0*k0 == 1 */
        E.z = slot_of(C, m1);
        E.k = (int32_t)(k1 * k0);
        kind = kind == GP_RUN_SLOT ? (E.k == -1 ? GP_RUN_DIFF : GP_RUN_LIN) : (gp_op)(kind + GP_RUN_Z);
    } else {
        E.z = E.a;
    }
    if (!rel_interval(k0, L.c ? fmpz_get_si(L.c) : 0, rel_mask((sg_op)t->op), &E.lo, &E.span))
        return 0;
    if (kind == GP_RUN_DIFF && E.lo == 0 && E.span == 0)
        kind = GP_RUN_SAME;
    else if (kind == GP_RUN_DIFF && E.lo == 1 && E.span == UINT64_MAX - 1)
        kind = GP_RUN_NSAME;
    gp_elt *r = run_slot(C, kind, g);
    if (!r)
        return -1;
    *r = E;
    return 1;
}

/* ---- one guard --------------------------------------------------------- */

static bool guard(comp *C, gp_bigscan *big, const sg_expr *t, uint32_t g)
{
    sg_guard_prog *p = C->p;
    C->guard = g;
    C->dep1 = 0;
    if (t->op == SG_OP_TRUE)
        return true;
    if (t->op == SG_OP_FALSE) {
        gp_insn *I = new_insn(C, GP_FALSE);
        if (I)
            I->b = g;
        return I != NULL;
    }
    int r = sg__gp_has_big(big, t);
    if (r < 0) {
        C->oom = true;
        return false;
    }
    if (r) {
        gp_insn *I = new_insn(C, GP_EXACT);
        if (I)
            I->b = g;
        p->nexact++;
        return I != NULL;
    }
    r = try_run(C, t, g);
    if (r)
        return r > 0;
    bool rel = t->op == SG_OP_GE0 || t->op == SG_OP_EQ0 || t->op == SG_OP_NE0;
    uint32_t v = node(C, rel ? t->args[0] : t);
    gp_insn *I = v == NOREG ? NULL : new_insn(C, rel ? GP_TESTREL : GP_TEST);
    if (!I)
        return false;
    I->a = v;
    I->b = g;
    if (rel)
        I->mask = rel_mask((sg_op)t->op);
    p->dep1[g] = C->dep1;
    return true;
}

/* ---- register reuse ------------------------------------------------------ */

/* The register operands of I, in place: up to 3 plain ones and n at off. */
static size_t reads(sg_guard_prog *p, gp_insn *I, uint32_t **out)
{
    size_t n = 0;
    if (I->op < GP_NRUNKINDS)
        return 0;
    switch ((gp_op)I->op) {
    case GP_ADD: case GP_MUL: case GP_MIN: case GP_MAX:
    case GP_BAND: case GP_BOR: case GP_BXOR: case GP_AND: case GP_OR:
        for (size_t j = 0; j < I->n; j++)
            out[n++] = &p->opnd[I->off + j];
        return n;
    case GP_LOAD: case GP_CONST: case GP_EXACT: case GP_FALSE:
        return 0;
    case GP_TEST: case GP_TESTREL:
        out[n++] = &I->a;
        return n;
    default:
        if (I->a != NOREG)
            out[n++] = &I->a;
        if (I->b != NOREG)
            out[n++] = &I->b;
        if (I->c != NOREG)
            out[n++] = &I->c;
        return n;
    }
}

static bool has_dst(const gp_insn *I)
{
    return I->op >= GP_LOAD && I->op <= GP_REL;
}

static bool allocate(comp *C)
{
    sg_ctx *ctx = C->ctx;
    sg_guard_prog *p = C->p;
    size_t nv = C->nvregs, maxn = 3;
    for (size_t i = 0; i < p->ninsns; i++)
        if (p->insns[i].n > maxn && p->insns[i].op >= GP_NRUNKINDS)
            maxn = p->insns[i].n;
    size_t *last = sg__malloc(ctx, (nv + 1) * sizeof *last);
    uint32_t *phys = sg__malloc(ctx, (nv + 1) * sizeof *phys);
    uint32_t *freel = sg__malloc(ctx, (nv + 1) * sizeof *freel);
    uint32_t **rd = sg__malloc(ctx, maxn * sizeof *rd);
    bool ok = last && phys && freel && rd;
    if (ok) {
        for (size_t v = 0; v < nv; v++)
            last[v] = SIZE_MAX;
        for (size_t i = 0; i < p->ninsns; i++) {
            size_t n = reads(p, &p->insns[i], rd);
            for (size_t j = 0; j < n; j++)
                last[*rd[j]] = i;
        }
        size_t nfree = 0, nregs = 0;
        for (size_t i = 0; i < p->ninsns; i++) {
            gp_insn *I = &p->insns[i];
            size_t n = reads(p, I, rd);
            for (size_t j = 0; j < n; j++) {
                uint32_t v = *rd[j];
                *rd[j] = phys[v];
                if (last[v] == i) {
                    last[v] = SIZE_MAX - 1; /* freed once even if read twice here */
                    freel[nfree++] = phys[v];
                }
            }
            if (has_dst(I)) {
                uint32_t v = I->dst;
                phys[v] = nfree ? freel[--nfree] : (uint32_t)nregs++;
                I->dst = phys[v];
                if (last[v] == SIZE_MAX) /* never read */
                    freel[nfree++] = phys[v];
            }
        }
        p->nregs = nregs;
    }
    sg_free(last);
    sg_free(phys);
    sg_free(freel);
    sg_free(rd);
    return ok;
}

/* ---- the layout of the first pass ---------------------------------------- */

/* Move the elements into one array grouped by kind (p->fast; p->elts[k]
 * then point into it) and list the kinds that have any (p->segs, with its
 * end mark; after reg_insns). */
static bool pack_runs(sg_guard_prog *p)
{
    sg_ctx *ctx = p->ctx;
    size_t total = 0, nsegs = 0;
    for (size_t k = 0; k < GP_NRUNKINDS; k++) {
        total += p->nelts[k];
        nsegs += p->nelts[k] > 0;
    }
    gp_elt *fast = sg__malloc(ctx, (total ? total : 1) * sizeof *fast);
    gp_seg *segs = sg__malloc(ctx, (nsegs + 1) * sizeof *segs);
    if (!fast || !segs) {
        sg_free(fast);
        sg_free(segs);
        return false;
    }
    size_t at = 0;
    for (size_t k = 0; k < GP_NRUNKINDS; k++) {
        if (!p->nelts[k])
            continue;
        memcpy(fast + at, p->elts[k], p->nelts[k] * sizeof *fast);
        sg_free(p->elts[k]);
        p->elts[k] = fast + at;
        at += p->nelts[k];
        segs[p->nsegs++] = (gp_seg){fast + at, (uint32_t)k};
    }
    segs[p->nsegs] = (gp_seg){fast + at, GP_SEG_END + (p->nreg_insns > 0)};
    p->fast = fast;
    p->segs = segs;
    return true;
}

/* ---- validation -------------------------------------------------------- */

/* Every symbol of e is a slot. */
static sg_status check_syms(sg_ctx *ctx, sg__idmap *seen, const sg__idmap *slots, const sg_expr *e, size_t g)
{
    if (sg__idmap_find(seen, e->id))
        return SG_OK;
    if (e->op == SG_OP_SYM && !sg__idmap_find(slots, e->id))
        return sg__err(ctx, SG_EINVAL, "sg_guard_prog_compile: guard %zu: symbol '%s' is not a slot", g,
                       e->u.name);
    for (size_t i = 0; i < e->nargs; i++) {
        sg_status s = check_syms(ctx, seen, slots, e->args[i], g);
        if (s)
            return s;
    }
    return sg__idmap_put(seen, e->id, 0) ? SG_OK : sg__nomem(ctx);
}

static sg_status validate(sg_ctx *ctx, sg_guard_prog *p, const sg_expr *const *guards, size_t n,
                          const sg_expr *const *slots, size_t nslots)
{
    const char *fn = "sg_guard_prog_compile";
    if ((n && !guards) || (nslots && !slots))
        return sg__err(ctx, SG_EINVAL, "%s: guards or slots is NULL", fn);
    if (n > UINT32_MAX - 1 || nslots > UINT32_MAX - 1)
        return sg__err(ctx, SG_EINVAL, "%s: too many guards or slots", fn);
    if (!sg__idmap_init(ctx, &p->slotmap, nslots))
        return sg__nomem(ctx);
    for (size_t i = 0; i < nslots; i++) {
        if (!slots[i] || slots[i]->op != SG_OP_SYM)
            return sg__err(ctx, SG_EINVAL, "%s: slot %zu is %s", fn, i, slots[i] ? "not a symbol" : "NULL");
        if (sg__idmap_find(&p->slotmap, slots[i]->id))
            return sg__err(ctx, SG_EINVAL, "%s: slot %zu repeats the symbol '%s'", fn, i, slots[i]->u.name);
        if (!sg__idmap_put(&p->slotmap, slots[i]->id, i))
            return sg__nomem(ctx);
    }
    for (size_t g = 0; g < n; g++) {
        if (!guards[g])
            return sg__err(ctx, SG_EINVAL, "%s: guard %zu is NULL", fn, g);
        if (guards[g]->sort != SG_SORT_BOOL)
            return sg__err(ctx, SG_EINVAL, "%s: guard %zu is an integer expression, not a boolean one", fn, g);
    }
    sg__idmap seen = {0};
    sg_status s = sg__idmap_init(ctx, &seen, 64) ? SG_OK : sg__nomem(ctx);
    for (size_t g = 0; g < n && !s; g++)
        s = check_syms(ctx, &seen, &p->slotmap, guards[g], g);
    sg__idmap_free(&seen);
    return s;
}

/* ---- public API -------------------------------------------------------------- */

void sg_guard_prog_free(sg_guard_prog *p)
{
    if (!p)
        return;
    sg_free(p->guards);
    sg_free(p->slots);
    sg_free(p->dep1);
    sg__idmap_free(&p->slotmap);
    sg_free(p->insns);
    sg_free(p->reg_insns);
    sg_free(p->opnd);
    sg_free(p->coef);
    if (p->fast)
        sg_free(p->fast);
    else
        for (size_t k = 0; k < GP_NRUNKINDS; k++)
            sg_free(p->elts[k]);
    sg_free(p->segs);
    sg__gp_native_free(p);
    sg_free(p);
}

sg_status sg_guard_prog_compile_flags(sg_ctx *ctx, sg_guard_prog **out, const sg_expr *const *guards, size_t n,
                                      const sg_expr *const *slots, size_t nslots, unsigned flags)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out)
        return sg__err(ctx, SG_EINVAL, "sg_guard_prog_compile: out is NULL");
    *out = NULL;
    if (flags & ~SG_GUARD_INTERPRET)
        return sg__err(ctx, SG_EINVAL, "sg_guard_prog_compile: unknown flags 0x%x", flags & ~SG_GUARD_INTERPRET);
    sg_guard_prog *p = sg__calloc(ctx, 1, sizeof *p);
    if (!p)
        return sg__nomem(ctx);
    p->ctx = ctx;
    p->max_bits = ctx->max_bits;
    p->nguards = n;
    p->nslots = nslots;
    sg_status s = validate(ctx, p, guards, n, slots, nslots);
    if (s) {
        sg_guard_prog_free(p);
        return s;
    }
    p->guards = sg__malloc(ctx, (n ? n : 1) * sizeof *p->guards);
    p->slots = sg__malloc(ctx, (nslots ? nslots : 1) * sizeof *p->slots);
    p->dep1 = sg__calloc(ctx, n ? n : 1, sizeof *p->dep1);
    comp C = {.p = p, .ctx = ctx};
    gp_bigscan big = {{0}};
    bool ok = p->guards && p->slots && p->dep1 && sg__idmap_init(ctx, &C.memo, 64) && sg__idmap_init(ctx, &big.seen, 64);
    if (ok) {
        if (n)
            memcpy(p->guards, guards, n * sizeof *guards);
        if (nslots)
            memcpy(p->slots, slots, nslots * sizeof *slots);
        for (size_t g = 0; g < n && ok; g++)
            ok = guard(&C, &big, guards[g], (uint32_t)g);
        ok = ok && allocate(&C);
        if (ok && (ok = (p->reg_insns = sg__malloc(ctx, (p->ninsns ? p->ninsns : 1) * sizeof *p->reg_insns)) != NULL))
            for (size_t i = 0; i < p->ninsns; i++)
                if (p->insns[i].op >= GP_NRUNKINDS)
                    p->reg_insns[p->nreg_insns++] = p->insns[i];
        ok = ok && pack_runs(p) && sg__gp_native_build(p, !(flags & SG_GUARD_INTERPRET));
    }
    sg__idmap_free(&C.memo);
    sg__idmap_free(&big.seen);
    sg_free(C.owner);
    sg_free(C.cheap);
    if (!ok) {
        sg_guard_prog_free(p);
        return sg__nomem(ctx);
    }
    *out = p;
    return SG_OK;
}

sg_status sg_guard_prog_compile(sg_ctx *ctx, sg_guard_prog **out, const sg_expr *const *guards, size_t n,
                                const sg_expr *const *slots, size_t nslots)
{
    return sg_guard_prog_compile_flags(ctx, out, guards, n, slots, nslots, 0);
}

size_t sg_guard_prog_native_size(const sg_guard_prog *p)
{
    return p->native ? p->native_size : 0;
}

size_t sg_guard_prog_nguards(const sg_guard_prog *p)
{
    return p->nguards;
}

size_t sg_guard_prog_nslots(const sg_guard_prog *p)
{
    return p->nslots;
}

const sg_expr *sg_guard_prog_guard(const sg_guard_prog *p, size_t i)
{
    return i < p->nguards ? p->guards[i] : NULL;
}

const sg_expr *sg_guard_prog_slot(const sg_guard_prog *p, size_t i)
{
    return i < p->nslots ? p->slots[i] : NULL;
}

sg_ctx *sg_guard_prog_ctx(const sg_guard_prog *p)
{
    return p->ctx;
}

void sg_guard_prog_stats(const sg_guard_prog *p, size_t *ninsns, size_t *nregs, size_t *nbatched, size_t *nexact)
{
    if (ninsns)
        *ninsns = p->ninsns;
    if (nregs)
        *nregs = p->nregs;
    if (nbatched)
        *nbatched = p->nbatched;
    if (nexact)
        *nexact = p->nexact;
}

size_t sg_guard_prog_nscratch(const sg_guard_prog *p)
{
    return p ? p->nregs : 0;
}
