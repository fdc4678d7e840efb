/* Explaining a check (guard.h): the first guard that does not hold, in
 * PyTorch's text, with the values involved. A second walk that changes
 * nothing: every guard is evaluated exactly. */
#include <stdlib.h>
#include <string.h>

#include "guard/guard_private.h"
#include "shapeguard/print.h"

typedef struct side {
    const sg_expr *e; /* the side as printed */
    fmpz_t v;         /* its value */
} side;

/* sum over the terms of L with sign sel (+1: positive coefficients, -1:
 * negative ones, negated) plus c0; its value from the term values tv. */
static const sg_expr *make_side(sg_ctx *ctx, const gp_lin *L, int sel, const fmpz_t c0, const fmpz *tv,
                                fmpz_t val)
{
    sg__poly q;
    sg__poly_init(&q);
    fmpz_t k;
    fmpz_init(k);
    bool ok = true;
    fmpz_set(val, c0);
    for (size_t i = 0; i < L->n && ok; i++) {
        const fmpz *ki = sg__gp_lin_k(L, i);
        if (fmpz_sgn(ki) != sel)
            continue;
        fmpz_mul_si(k, ki, sel);
        ok = sg__poly_push(ctx, &q, k, L->m[i]);
        if (sel > 0)
            fmpz_add(val, val, tv + i);
        else
            fmpz_sub(val, val, tv + i);
    }
    fmpz_set(&q.c, c0);
    const sg_expr *r = ok ? sg__poly_get(ctx, &q) : NULL;
    fmpz_clear(k);
    sg__poly_clear(&q);
    return r;
}

static bool simple(const sg_expr *e)
{
    return e->op == SG_OP_SYM || e->op == SG_OP_INT;
}

static bool starts_with(const char *s, const char *pre, const char *op)
{
    size_t n = strlen(pre), m = strlen(op);
    return !strncmp(s, pre, n) && s[n] == ' ' && !strncmp(s + n + 1, op, m) && s[n + 1 + m] == ' ';
}

/* The sides of relation t as the python printer writes them: 1 and the sides
 * set when found, 0 when not (the text has another shape), -1 on failure. */
static int find_sides(sg_ctx *ctx, const sg_guard_prog *p, const sg_expr *t, const char *text, const fmpz *xv,
                      side *lhs, side *rhs, const char **op)
{
    gp_lin L;
    sg__gp_lin(&L, t->args[0]);
    fmpz *tv = sg__malloc(ctx, (L.n ? L.n : 1) * sizeof *tv);
    if (!tv)
        return -1;
    for (size_t i = 0; i < L.n; i++)
        fmpz_init(tv + i);
    int found = 0;
    sg_status s = SG_OK;
    for (size_t i = 0; i < L.n && !s; i++) {
        s = sg__eval_fmpz(tv + i, L.m[i], &p->slotmap, xv, p->max_bits);
        fmpz_mul(tv + i, tv + i, sg__gp_lin_k(&L, i));
    }
    fmpz_t c, negc, zero;
    fmpz_init(c);
    fmpz_init(negc);
    fmpz_init(zero);
    if (L.c)
        fmpz_set(c, L.c);
    fmpz_neg(negc, c);
    size_t npos = 0;
    for (size_t i = 0; i < L.n; i++)
        npos += fmpz_sgn(sg__gp_lin_k(&L, i)) > 0;
    /* candidate orientations: (lhs sign, lhs constant, rhs constant, operator) */
    struct cand {
        int sel;
        const fmpz *lc, *rc;
        const char *op;
    } cands[2];
    size_t nc = 0;
    if (t->op == SG_OP_GE0) {
        if (npos == 0)
            cands[nc++] = (struct cand){-1, zero, c, "<="};
        else
            cands[nc++] = (struct cand){1, zero, negc, ">="};
    } else {
        const char *o = t->op == SG_OP_EQ0 ? "==" : "!=";
        cands[nc++] = (struct cand){1, zero, negc, o};
        cands[nc++] = (struct cand){-1, zero, c, o};
    }
    for (size_t j = 0; j < nc && !s && !found; j++) {
        char *lt = NULL;
        lhs->e = make_side(ctx, &L, cands[j].sel, cands[j].lc, tv, lhs->v);
        if (!lhs->e || (s = sg_print(ctx, &lt, lhs->e, SG_FMT_PYTHON)))
            break;
        if (starts_with(text, lt, cands[j].op)) {
            /* the rhs: the other terms, with the constant on its side */
            if (t->op == SG_OP_GE0 && npos == 0) {
                rhs->e = sg__int_fmpz(ctx, c);
                fmpz_set(rhs->v, c);
            } else {
                rhs->e = make_side(ctx, &L, -cands[j].sel, cands[j].rc, tv, rhs->v);
            }
            *op = cands[j].op;
            found = rhs->e ? 1 : -1;
        }
        sg_free(lt);
    }
    if (!found && (s == SG_ENOMEM || (!lhs->e && ctx->err == SG_ENOMEM)))
        found = -1;
    for (size_t i = 0; i < L.n; i++)
        fmpz_clear(tv + i);
    sg_free(tv);
    fmpz_clear(c);
    fmpz_clear(negc);
    fmpz_clear(zero);
    return found;
}

static const char *negated(const char *op)
{
    return !strcmp(op, ">=") ? "<" : !strcmp(op, "<=") ? ">" : !strcmp(op, "==") ? "!=" : "==";
}

/* "name = value, ..." for the slots of e, in slot order. */
static sg_status put_values(sg_ctx *ctx, sg__buf *b, const sg_guard_prog *p, const sg_expr *e, const fmpz *xv)
{
    const sg_expr **syms = NULL;
    size_t n = 0;
    sg_status s = sg_expr_free_symbols(ctx, &syms, &n, e);
    if (s)
        return s;
    size_t *idx = sg__malloc(ctx, (n ? n : 1) * sizeof *idx);
    if (!idx) {
        sg_free(syms);
        return sg__nomem(ctx);
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = *sg__idmap_find(&p->slotmap, syms[i]->id);
    for (size_t i = 1; i < n; i++) /* insertion sort: guards have few symbols */
        for (size_t j = i; j > 0 && idx[j - 1] > idx[j]; j--) {
            size_t t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    if (n == 0)
        sg__buf_puts(b, "no slots");
    for (size_t i = 0; i < n; i++) {
        sg__buf_printf(b, "%s%s = ", i ? ", " : "", p->slots[idx[i]]->u.name);
        sg__buf_fmpz(b, xv + idx[i]);
    }
    sg_free(idx);
    sg_free(syms);
    return SG_OK;
}

/* The sides said, and their values: 1; 0 when they cannot be evaluated
 * (the generic values then); -1 out of memory. */
static int said_sides(sg_ctx *ctx, const sg_guard_prog *p, const sg__gp_said *said, const fmpz *xv, side *lhs,
                      side *rhs, const char **op)
{
    lhs->e = said->lhs;
    rhs->e = said->rhs;
    *op = said->le ? "<=" : "==";
    sg_status s = sg__eval_fmpz(lhs->v, lhs->e, &p->slotmap, xv, p->max_bits);
    if (!s)
        s = sg__eval_fmpz(rhs->v, rhs->e, &p->slotmap, xv, p->max_bits);
    if (s == SG_ENOMEM) {
        sg__nomem(ctx);
        return -1;
    }
    return s ? 0 : 1;
}

static sg_status explain(sg_ctx *ctx, char **out, size_t *failed, const sg_guard_prog *p, const fmpz *xv,
                         const sg__gp_said *said)
{
    size_t g = 0;
    int res = SG_GUARD_PASS;
    for (; g < p->nguards && res == SG_GUARD_PASS; g++)
        res = sg__gp_eval_exact(p, g, xv);
    if (res == SG_ENOMEM)
        return sg__nomem(ctx);
    if (res == SG_ELIMIT)
        return sg__err(ctx, SG_ELIMIT, "sg_guard_prog_explain: guard %zu needs an integer of more than %zu bits",
                       g - 1, p->max_bits);
    sg__buf b = {.ctx = ctx};
    if (res == SG_GUARD_PASS) {
        if (failed)
            *failed = p->nguards;
        sg__buf_printf(&b, "all %zu guards pass", p->nguards);
    } else {
        g--;
        if (failed)
            *failed = g;
        const sg_expr *t = p->guards[g];
        const sg__gp_said *sd = said && said[g].text ? &said[g] : NULL;
        char *text = NULL;
        sg_status s = sd ? ((text = sg__strdup(ctx, sd->text)) ? SG_OK : sg__nomem(ctx))
                         : sg_print(ctx, &text, t, SG_FMT_PYTHON);
        if (s)
            return s;
        sg__buf_puts(&b, text);
        int found = 0;
        side lhs, rhs;
        fmpz_init(lhs.v);
        fmpz_init(rhs.v);
        lhs.e = rhs.e = NULL;
        const char *op = NULL;
        if (res == SG_GUARD_FAIL && sd && sd->lhs && sd->rhs)
            found = said_sides(ctx, p, sd, xv, &lhs, &rhs, &op);
        else if (res == SG_GUARD_FAIL && (t->op == SG_OP_GE0 || t->op == SG_OP_EQ0 || t->op == SG_OP_NE0))
            found = find_sides(ctx, p, t, text, xv, &lhs, &rhs, &op);
        sg_free(text);
        if (found < 0) {
            s = sg__nomem(ctx);
        } else if (found) {
            sg__buf_puts(&b, " (");
            sg__buf_fmpz(&b, lhs.v);
            sg__buf_printf(&b, " %s ", negated(op));
            sg__buf_fmpz(&b, rhs.v);
            if (!simple(lhs.e) || !simple(rhs.e)) {
                sg__buf_puts(&b, "; ");
                s = put_values(ctx, &b, p, t, xv);
            }
            sg__buf_puts(&b, ")");
        } else {
            if (res == SG_GUARD_FAIL)
                sg__buf_puts(&b, " (values: ");
            else
                sg__buf_printf(&b, " (raises %s; values: ", sg_status_kind((sg_status)res));
            s = put_values(ctx, &b, p, t, xv);
            sg__buf_puts(&b, ")");
        }
        fmpz_clear(lhs.v);
        fmpz_clear(rhs.v);
        if (s) {
            sg__buf_free(&b);
            return s;
        }
    }
    char *r = sg__buf_take(&b);
    if (!r)
        return sg__nomem(ctx);
    *out = r;
    return SG_OK;
}

static sg_status explain_args(sg_ctx *ctx, char **out, const sg_guard_prog *p, size_t nv, bool have_v)
{
    sg_status s = sg__gp_check_ctx(ctx, p, "sg_guard_prog_explain");
    if (s)
        return s;
    if (!out)
        return sg__err(ctx, SG_EINVAL, "sg_guard_prog_explain: out is NULL");
    *out = NULL;
    if (p->nslots && !have_v)
        return sg__err(ctx, SG_EINVAL, "sg_guard_prog_explain: the values are NULL");
    if (nv < p->nslots)
        return sg__err(ctx, SG_EINVAL, "sg_guard_prog_explain: %zu values for %zu slots", nv, p->nslots);
    return SG_OK;
}

static void free_xv(fmpz *xv, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fmpz_clear(xv + i);
    sg_free(xv);
}

sg_status sg_guard_prog_explain(sg_ctx *ctx, char **out, size_t *failed, const sg_guard_prog *p, const int64_t *v,
                                size_t nv)
{
    return sg__gp_explain_said(ctx, out, failed, p, v, nv, NULL);
}

sg_status sg__gp_explain_said(sg_ctx *ctx, char **out, size_t *failed, const sg_guard_prog *p, const int64_t *v,
                              size_t nv, const sg__gp_said *said)
{
    sg_status s = explain_args(ctx, out, p, nv, v != NULL);
    if (s)
        return s;
    fmpz *xv = sg__malloc(ctx, (p->nslots ? p->nslots : 1) * sizeof *xv);
    if (!xv)
        return sg__nomem(ctx);
    for (size_t i = 0; i < p->nslots; i++) {
        fmpz_init(xv + i);
        fmpz_set_si(xv + i, v[i]);
    }
    s = explain(ctx, out, failed, p, xv, said);
    free_xv(xv, p->nslots);
    return s;
}

sg_status sg_guard_prog_explain_exact(sg_ctx *ctx, char **out, size_t *failed, const sg_guard_prog *p,
                                      const sg_expr *const *vals, size_t nv)
{
    sg_status s = explain_args(ctx, out, p, nv, vals != NULL);
    if (s)
        return s;
    for (size_t i = 0; i < p->nslots; i++)
        if (!vals[i] || vals[i]->op != SG_OP_INT)
            return sg__err(ctx, SG_EINVAL, "sg_guard_prog_explain: value %zu is not an integer constant", i);
    fmpz *xv = sg__malloc(ctx, (p->nslots ? p->nslots : 1) * sizeof *xv);
    if (!xv)
        return sg__nomem(ctx);
    for (size_t i = 0; i < p->nslots; i++)
        fmpz_init_set(xv + i, &vals[i]->u.val);
    s = explain(ctx, out, failed, p, xv, NULL);
    free_xv(xv, p->nslots);
    return s;
}
