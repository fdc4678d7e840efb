/* Exact evaluation, substitution and free symbols. Each walks the DAG once,
 * remembering the result of every node with arguments in a small map keyed
 * by node id. */
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "num/num.h"

/* ---- evaluation ---- */

typedef struct {
    sg_ctx *ctx;    /* NULL: no messages (sg__eval_fmpz) */
    size_t max_bits;
    sg__idmap syms; /* symbol id -> index into vals (or fvals) */
    const sg_expr *const *vals;
    const fmpz *fvals; /* values as numbers instead of constants, when not NULL */
    sg__idmap memo; /* node id -> index into cache */
    fmpz *cache;
    size_t ncache, capcache;
} evaluator;

static sg_status ev(evaluator *E, const sg_expr *e, fmpz_t out);

/* The first error among operands whose answer another operand may decide. */
typedef struct {
    sg_status s;
    char msg[sizeof ((sg_ctx *)0)->msg];
} first_error;

static void keep_first(evaluator *E, first_error *fe, sg_status s)
{
    if (s && !fe->s) {
        fe->s = s;
        if (E->ctx)
            strcpy(fe->msg, E->ctx->msg);
    }
}

static sg_status raise_first(evaluator *E, const first_error *fe)
{
    if (fe->s && E->ctx) {
        E->ctx->err = fe->s;
        strcpy(E->ctx->msg, fe->msg);
    }
    return fe->s;
}

static bool fatal(sg_status s)
{
    return s == SG_ENOMEM || s == SG_EINTERNAL;
}

static sg_status bits_check(evaluator *E, uint64_t bits)
{
    if (bits > E->max_bits)
        return sg__err(E->ctx, SG_ELIMIT, "evaluation would produce an integer of more than %zu bits",
                       E->max_bits);
    return SG_OK;
}

static sg_status ev_pow(evaluator *E, fmpz_t out, const fmpz_t base, const fmpz_t exp)
{
    if (fmpz_sgn(exp) < 0)
        return sg__err(E->ctx, SG_ENEGEXP, "negative exponent");
    if (fmpz_is_zero(exp)) {
        fmpz_one(out);
        return SG_OK;
    }
    if (fmpz_is_zero(base) || fmpz_is_one(base)) {
        fmpz_set(out, base);
        return SG_OK;
    }
    if (fmpz_equal_si(base, -1)) {
        fmpz_set_si(out, fmpz_is_even(exp) ? 1 : -1);
        return SG_OK;
    }
    sg_status s = bits_check(E, sg__num_pow_bits(base, exp));
    if (s == SG_OK)
        sg__num_pow(out, base, fmpz_get_ui(exp));
    return s;
}

static sg_status ev_mul(evaluator *E, fmpz_t acc, const fmpz_t v)
{
    if (!fmpz_is_zero(acc) && !fmpz_is_zero(v)) {
        sg_status s = bits_check(E, (uint64_t)fmpz_bits(acc) + fmpz_bits(v));
        if (s)
            return s;
    }
    fmpz_mul(acc, acc, v);
    return SG_OK;
}

/* a // 2**k is a shift: computed without 2**k, so a >> k is 0 or -1 for any
 * k beyond the bits of a (as in Python), however large k is. */
static sg_status ev_shift_right(evaluator *E, const sg_expr *e, const fmpz_t a, fmpz_t out)
{
    fmpz_t k;
    fmpz_init(k);
    sg_status s = ev(E, e->args[1]->args[1], k);
    if (!s && fmpz_sgn(k) < 0)
        s = sg__err(E->ctx, SG_ENEGEXP, "negative exponent");
    if (!s) {
        if (fmpz_cmp_ui(k, fmpz_bits(a) + 1) > 0)
            fmpz_set_si(out, fmpz_sgn(a) < 0 ? -1 : 0);
        else
            fmpz_fdiv_q_2exp(out, a, fmpz_get_ui(k));
    }
    fmpz_clear(k);
    return s;
}

static bool is_power_of_two_node(const sg_expr *d)
{
    return d->op == SG_OP_POW && d->args[0]->op == SG_OP_INT && fmpz_equal_ui(&d->args[0]->u.val, 2);
}

static sg_status ev_div(evaluator *E, const sg_expr *e, fmpz_t out)
{
    fmpz_t a, b;
    fmpz_init(a);
    fmpz_init(b);
    sg_status s = ev(E, e->args[0], a);
    if (!s && e->op == SG_OP_FLOORDIV && is_power_of_two_node(e->args[1])) {
        s = ev_shift_right(E, e, a, out);
        fmpz_clear(a);
        fmpz_clear(b);
        return s;
    }
    if (!s)
        s = ev(E, e->args[1], b);
    if (!s && fmpz_is_zero(b))
        s = sg__err(E->ctx, SG_EZERODIV, "%s by zero",
                    e->op == SG_OP_MOD || e->op == SG_OP_TRUNCMOD ? "modulo" : "division");
    if (!s) {
        switch ((sg_op)e->op) {
        case SG_OP_FLOORDIV: sg__num_floordiv(out, a, b); break;
        case SG_OP_MOD: sg__num_mod(out, a, b); break;
        case SG_OP_TRUNCDIV: sg__num_truncdiv(out, a, b); break;
        case SG_OP_TRUNCMOD: sg__num_truncmod(out, a, b); break;
        default: /* CLEANDIV */
            if (!fmpz_divisible(a, b))
                s = sg__err(E->ctx, SG_EINEXACT, "CleanDiv: the divisor does not divide the dividend");
            else
                fmpz_divexact(out, a, b);
        }
    }
    fmpz_clear(a);
    fmpz_clear(b);
    return s;
}

/* Truth value of a boolean node, as 0/1 in out. */
static sg_status ev_node(evaluator *E, const sg_expr *e, fmpz_t out)
{
    sg_ctx *ctx = E->syms.ctx; /* E->ctx is NULL for sg__eval_fmpz */
    sg_status s = SG_OK;
    fmpz_t v;
    fmpz_init(v);
    switch ((sg_op)e->op) {
    case SG_OP_ADD: {
        fmpz_set(out, &e->u.val);
        const fmpz *k = sg__nums(e);
        for (size_t i = 0; i < e->nargs && !s; i++) {
            s = ev(E, e->args[i], v);
            if (!s)
                s = ev_mul(E, v, k + i);
            if (!s)
                fmpz_add(out, out, v);
        }
        break;
    }
    case SG_OP_MUL: {
        /* A zero factor decides the product, even where another factor
         * cannot be evaluated (0 << 2**70 is 0, as in Python). */
        fmpz *f = sg__malloc(ctx, e->nargs * sizeof *f);
        if (!f) {
            s = sg__nomem(E->ctx);
            break;
        }
        for (size_t i = 0; i < e->nargs; i++)
            fmpz_init(f + i);
        first_error fe = {SG_OK, ""};
        bool zero = false;
        for (size_t i = 0; i < e->nargs && !zero && !fatal(fe.s); i++) {
            sg_status si = ev(E, e->args[i], f + i);
            keep_first(E, &fe, si);
            zero = !si && fmpz_is_zero(f + i);
        }
        fmpz_one(out);
        if (zero) {
            fmpz_zero(out);
        } else if (!(s = raise_first(E, &fe))) {
            fmpz_t p;
            fmpz_init(p);
            const fmpz *k = sg__nums(e);
            for (size_t i = 0; i < e->nargs && !s; i++) {
                s = ev_pow(E, p, f + i, k + i);
                if (!s)
                    s = ev_mul(E, out, p);
            }
            fmpz_clear(p);
        }
        for (size_t i = 0; i < e->nargs; i++)
            fmpz_clear(f + i);
        sg_free(f);
        break;
    }
    case SG_OP_POW: {
        fmpz_t x;
        fmpz_init(x);
        s = ev(E, e->args[0], v);
        if (!s)
            s = ev(E, e->args[1], x);
        if (!s)
            s = ev_pow(E, out, v, x);
        fmpz_clear(x);
        break;
    }
    case SG_OP_FLOORDIV:
    case SG_OP_MOD:
    case SG_OP_CLEANDIV:
    case SG_OP_TRUNCDIV:
    case SG_OP_TRUNCMOD:
        s = ev_div(E, e, out);
        break;
    case SG_OP_MIN:
    case SG_OP_MAX:
        for (size_t i = 0; i < e->nargs && !s; i++) {
            s = ev(E, e->args[i], v);
            if (!s && (i == 0 || (e->op == SG_OP_MIN ? fmpz_cmp(v, out) < 0 : fmpz_cmp(v, out) > 0)))
                fmpz_set(out, v);
        }
        break;
    case SG_OP_ABS:
        s = ev(E, e->args[0], v);
        if (!s)
            fmpz_abs(out, v);
        break;
    case SG_OP_WHERE:
        s = ev(E, e->args[0], v);
        if (!s)
            s = ev(E, e->args[fmpz_is_zero(v) ? 2 : 1], out);
        break;
    case SG_OP_BAND:
    case SG_OP_BOR:
    case SG_OP_BXOR:
        for (size_t i = 0; i < e->nargs && !s; i++) {
            s = ev(E, e->args[i], v);
            if (s)
                break;
            if (i == 0)
                fmpz_set(out, v);
            else if (e->op == SG_OP_BAND)
                sg__num_and(out, out, v);
            else if (e->op == SG_OP_BOR)
                sg__num_or(out, out, v);
            else
                sg__num_xor(out, out, v);
        }
        break;
    case SG_OP_GE0:
    case SG_OP_EQ0:
    case SG_OP_NE0:
        s = ev(E, e->args[0], v);
        if (!s) {
            int c = fmpz_sgn(v);
            fmpz_set_ui(out, e->op == SG_OP_GE0 ? c >= 0 : e->op == SG_OP_EQ0 ? c == 0 : c != 0);
        }
        break;
    case SG_OP_AND:
    case SG_OP_OR: {
        /* The answer is decided by any argument that decides it, even where
         * another argument cannot be evaluated; else the first error. */
        bool want = e->op == SG_OP_OR, decided = false;
        first_error fe = {SG_OK, ""};
        for (size_t i = 0; i < e->nargs && !decided && !fatal(fe.s); i++) {
            sg_status si = ev(E, e->args[i], v);
            keep_first(E, &fe, si);
            decided = !si && !fmpz_is_zero(v) == want;
        }
        if (decided)
            fmpz_set_ui(out, want);
        else if (!(s = raise_first(E, &fe)))
            fmpz_set_ui(out, !want);
        break;
    }
    default:
        s = sg__err(E->ctx, SG_EINTERNAL, "eval: unexpected node kind %d", e->op);
    }
    fmpz_clear(v);
    return s;
}

static sg_status ev(evaluator *E, const sg_expr *e, fmpz_t out)
{
    sg_ctx *ctx = E->syms.ctx; /* E->ctx is NULL for sg__eval_fmpz */
    switch ((sg_op)e->op) {
    case SG_OP_INT:
        fmpz_set(out, &e->u.val);
        return SG_OK;
    case SG_OP_TRUE:
        fmpz_one(out);
        return SG_OK;
    case SG_OP_FALSE:
        fmpz_zero(out);
        return SG_OK;
    case SG_OP_SYM: {
        size_t *i = sg__idmap_find(&E->syms, e->id);
        if (!i)
            return sg__err(E->ctx, SG_EUNBOUND, "symbol '%s' has no value", e->u.name);
        fmpz_set(out, E->fvals ? E->fvals + *i : &E->vals[*i]->u.val);
        return SG_OK;
    }
    default:
        break;
    }
    size_t *slot = sg__idmap_find(&E->memo, e->id);
    if (slot) {
        fmpz_set(out, E->cache + *slot);
        return SG_OK;
    }
    sg_status s = ev_node(E, e, out);
    if (s)
        return s;
    if (!sg__grow(ctx, (void **)&E->cache, &E->capcache, E->ncache + 1, sizeof *E->cache))
        return sg__nomem(E->ctx);
    fmpz_init_set(E->cache + E->ncache, out);
    if (!sg__idmap_put(&E->memo, e->id, E->ncache)) {
        fmpz_clear(E->cache + E->ncache);
        return sg__nomem(E->ctx);
    }
    E->ncache++;
    return SG_OK;
}

sg_status sg__eval(sg_ctx *ctx, const sg_expr *e, size_t n, const sg_expr *const *syms,
                   const sg_expr *const *vals, const sg_expr **out)
{
    evaluator E = {.ctx = ctx, .max_bits = ctx->max_bits, .vals = vals};
    sg_status s = SG_OK;
    if (!sg__idmap_init(ctx, &E.syms, n) || !sg__idmap_init(ctx, &E.memo, 16)) {
        s = sg__nomem(ctx);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (!syms[i] || syms[i]->op != SG_OP_SYM) {
            s = sg__err(ctx, SG_EINVAL, "eval: syms[%zu] is not a symbol", i);
            goto done;
        }
        if (!vals[i] || vals[i]->op != SG_OP_INT) {
            s = sg__err(ctx, SG_EINVAL, "eval: vals[%zu] is not an integer constant", i);
            goto done;
        }
        if (!sg__idmap_put(&E.syms, syms[i]->id, i)) {
            s = sg__nomem(ctx);
            goto done;
        }
    }
    /* Errors of operands that did not decide the answer are internal: a
     * successful evaluation leaves the context's last error as it was. */
    sg_status prev = ctx->err;
    char *prev_msg = prev ? sg__strdup(ctx, ctx->msg) : NULL;
    fmpz_t v;
    fmpz_init(v);
    s = ev(&E, e, v);
    if (!s) {
        ctx->err = prev;
        if (prev_msg)
            strcpy(ctx->msg, prev_msg);
        else if (!prev)
            ctx->msg[0] = '\0';
    }
    sg_free(prev_msg);
    if (!s) {
        if (e->sort == SG_SORT_BOOL)
            *out = sg__bool(ctx, !fmpz_is_zero(v));
        else if (!(*out = sg__int_fmpz(ctx, v)))
            s = ctx->err;
    }
    fmpz_clear(v);
done:
    for (size_t i = 0; i < E.ncache; i++)
        fmpz_clear(E.cache + i);
    sg_free(E.cache);
    sg__idmap_free(&E.syms);
    sg__idmap_free(&E.memo);
    return s;
}

sg_status sg__eval_fmpz(fmpz_t out, const sg_expr *e, const sg__idmap *syms, const fmpz *vals, size_t max_bits)
{
    sg_ctx *ctx = syms->ctx;
    evaluator E = {.ctx = NULL, .max_bits = max_bits, .syms = *syms, .fvals = vals};
    sg_status s = sg__idmap_init(ctx, &E.memo, 16) ? ev(&E, e, out) : SG_ENOMEM;
    for (size_t i = 0; i < E.ncache; i++)
        fmpz_clear(E.cache + i);
    sg_free(E.cache);
    sg__idmap_free(&E.memo);
    return s;
}

/* ---- rebuilding a node from new arguments ---- */

const sg_expr *sg__rebuild(sg_ctx *ctx, const sg_expr *p, const sg_expr *const *a)
{
    switch ((sg_op)p->op) {
    case SG_OP_INT:
    case SG_OP_TRUE:
    case SG_OP_FALSE:
    case SG_OP_SYM:
        return p;
    case SG_OP_ADD: {
        sg__poly q;
        sg__poly_init(&q);
        fmpz_set(&q.c, &p->u.val);
        bool ok = true;
        for (size_t i = 0; i < p->nargs && ok; i++)
            ok = sg__poly_addmul_expr(ctx, &q, sg__nums(p) + i, a[i]);
        const sg_expr *r = ok ? sg__poly_get(ctx, &q) : NULL;
        sg__poly_clear(&q);
        return r;
    }
    case SG_OP_MUL: {
        const sg_expr *r = ctx->one;
        for (size_t i = 0; i < p->nargs && r; i++) {
            const sg_expr *k = sg__int_fmpz(ctx, sg__nums(p) + i);
            const sg_expr *f = k ? sg__pow(ctx, a[i], k) : NULL;
            r = f ? sg__mul(ctx, r, f) : NULL;
        }
        return r;
    }
    case SG_OP_POW: return sg__pow(ctx, a[0], a[1]);
    case SG_OP_FLOORDIV: return sg__floordiv(ctx, a[0], a[1]);
    case SG_OP_MOD: return sg__mod(ctx, a[0], a[1]);
    case SG_OP_CLEANDIV: return sg__cleandiv(ctx, a[0], a[1]);
    case SG_OP_TRUNCDIV: return sg__truncdiv(ctx, a[0], a[1]);
    case SG_OP_TRUNCMOD: return sg__truncmod(ctx, a[0], a[1]);
    case SG_OP_MIN:
    case SG_OP_MAX: return sg__minmax(ctx, (sg_op)p->op, p->nargs, a);
    case SG_OP_ABS: return sg__abs(ctx, a[0]);
    case SG_OP_WHERE: return sg__where(ctx, a[0], a[1], a[2]);
    case SG_OP_BAND:
    case SG_OP_BOR:
    case SG_OP_BXOR: {
        const sg_expr *r = a[0];
        for (size_t i = 1; i < p->nargs && r; i++)
            r = sg__bitop(ctx, (sg_op)p->op, r, a[i]);
        return r;
    }
    case SG_OP_GE0:
    case SG_OP_EQ0:
    case SG_OP_NE0: return sg__rel0(ctx, (sg_op)p->op, a[0]);
    case SG_OP_AND:
    case SG_OP_OR: return sg__andor(ctx, (sg_op)p->op, p->nargs, a);
    default: return sg__err(ctx, SG_EINTERNAL, "rebuild: unexpected node kind %d", p->op), NULL;
    }
}

/* ---- rewriting walks ---- */

const sg_expr *sg__nodememo_get(const sg__nodememo *m, const sg_expr *e)
{
    size_t *i = sg__idmap_find(&m->idx, e->id);
    return i ? m->v[*i] : NULL;
}

bool sg__nodememo_put(sg_ctx *ctx, sg__nodememo *m, const sg_expr *e, const sg_expr *r)
{
    if (!m->idx.cap)
        m->idx.ctx = ctx; /* the map allocates on its first put */
    if (!sg__grow(ctx, (void **)&m->v, &m->cap, m->n + 1, sizeof *m->v))
        return false;
    if (!sg__idmap_put(&m->idx, e->id, m->n))
        return false;
    m->v[m->n++] = r;
    return true;
}

void sg__nodememo_reset(sg__nodememo *m)
{
    if (m->idx.cap)
        sg__idmap_reset(&m->idx);
    m->n = 0;
}

void sg__nodememo_free(sg__nodememo *m)
{
    sg__idmap_free(&m->idx);
    sg_free(m->v);
    m->v = NULL;
    m->n = m->cap = 0;
}

const sg_expr *sg__map_args(sg_ctx *ctx, const sg_expr *e, sg__map_fn fn, void *user)
{
    const sg_expr *small[8], **args = small;
    if (e->nargs > 8 && !(args = sg__malloc(ctx, e->nargs * sizeof *args)))
        return sg__nomem(ctx), NULL;
    bool same = true;
    const sg_expr *r = NULL;
    size_t i;
    for (i = 0; i < e->nargs; i++) {
        if (!(args[i] = fn(user, e->args[i])))
            break;
        same = same && args[i] == e->args[i];
    }
    if (i == e->nargs)
        r = same ? e : sg__rebuild(ctx, e, args);
    if (args != small)
        sg_free(args);
    return r;
}

/* ---- substitution ---- */

typedef struct {
    sg_ctx *ctx;
    sg__idmap from; /* symbol id -> index into to */
    const sg_expr *const *to;
    sg__nodememo memo;
} substituter;

static const sg_expr *sub(void *user, const sg_expr *e)
{
    substituter *S = user;
    if (e->op == SG_OP_SYM) {
        size_t *i = sg__idmap_find(&S->from, e->id);
        return i ? S->to[*i] : e;
    }
    if (e->nargs == 0)
        return e;
    const sg_expr *r = sg__nodememo_get(&S->memo, e);
    if (r)
        return r;
    r = sg__map_args(S->ctx, e, sub, S);
    if (r && !sg__nodememo_put(S->ctx, &S->memo, e, r))
        return sg__nomem(S->ctx), NULL;
    return r;
}

sg_status sg_expr_subs(sg_ctx *ctx, const sg_expr **out, const sg_expr *e, size_t n,
                       const sg_expr *const *syms, const sg_expr *const *vals)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out)
        return sg__err(ctx, SG_EINVAL, "sg_expr_subs: out is NULL");
    *out = NULL;
    if (!e || (n && (!syms || !vals)))
        return sg__err(ctx, SG_EINVAL, "sg_expr_subs: NULL argument");
    for (size_t i = 0; i < n; i++) {
        if (!syms[i] || syms[i]->op != SG_OP_SYM)
            return sg__err(ctx, SG_EINVAL, "sg_expr_subs: syms[%zu] is not a symbol", i);
        if (!vals[i] || vals[i]->sort != SG_SORT_INT)
            return sg__err(ctx, !vals[i] ? SG_EINVAL : SG_ETYPE,
                           "sg_expr_subs: vals[%zu] is not an integer expression", i);
    }
    sg__idmap from = {0};
    sg_status s = SG_OK;
    if (!sg__idmap_init(ctx, &from, n))
        s = sg__nomem(ctx);
    for (size_t i = 0; i < n && !s; i++)
        if (!sg__idmap_put(&from, syms[i]->id, i))
            s = sg__nomem(ctx);
    if (!s)
        s = sg__subs_map(ctx, out, e, &from, vals);
    sg__idmap_free(&from);
    return s;
}

sg_status sg__subs_map(sg_ctx *ctx, const sg_expr **out, const sg_expr *e, const sg__idmap *from,
                       const sg_expr *const *vals)
{
    substituter S = {.ctx = ctx, .from = *from, .to = vals};
    *out = sub(&S, e);
    sg__nodememo_free(&S.memo);
    return *out ? SG_OK : ctx->err;
}

/* ---- free symbols ---- */

typedef struct {
    sg__idmap seen;
    const sg_expr **syms;
    size_t n, cap;
    bool oom;
} collector;

static void collect(collector *C, const sg_expr *e)
{
    sg_ctx *ctx = C->seen.ctx;
    if (C->oom || sg__idmap_find(&C->seen, e->id))
        return;
    if (!sg__idmap_put(&C->seen, e->id, 0)) {
        C->oom = true;
        return;
    }
    if (e->op == SG_OP_SYM) {
        if (!sg__grow(ctx, (void **)&C->syms, &C->cap, C->n + 1, sizeof *C->syms)) {
            C->oom = true;
            return;
        }
        C->syms[C->n++] = e;
        return;
    }
    for (size_t i = 0; i < e->nargs; i++)
        collect(C, e->args[i]);
}

sg_status sg_expr_free_symbols(sg_ctx *ctx, const sg_expr ***out, size_t *n, const sg_expr *e)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out || !n || !e)
        return sg__err(ctx, SG_EINVAL, "sg_expr_free_symbols: NULL argument");
    *out = NULL;
    *n = 0;
    collector C = {0};
    if (!sg__idmap_init(ctx, &C.seen, 16)) {
        sg__idmap_free(&C.seen);
        return sg__nomem(ctx);
    }
    collect(&C, e);
    sg__idmap_free(&C.seen);
    if (C.oom) {
        sg_free(C.syms);
        return sg__nomem(ctx);
    }
    sg__sort_by_id(C.syms, C.n);
    *out = C.syms;
    *n = C.n;
    return SG_OK;
}
