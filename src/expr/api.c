/* The public constructors: argument and sort checks around the internal
 * canonicalizing constructors, and the inspection functions. */
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "shapeguard/flint.h"

static sg_status finish(sg_ctx *ctx, const sg_expr **out, const sg_expr *r)
{
    *out = r;
    return r ? SG_OK : (ctx->err ? ctx->err : SG_EINTERNAL);
}

static sg_status check_args(sg_ctx *ctx, const char *fn, const sg_expr **out, size_t n,
                            const sg_expr *const *args, sg_sort want)
{
    if (!out)
        return sg__err(ctx, SG_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!args[i])
            return sg__err(ctx, SG_EINVAL, "%s: argument %zu is NULL", fn, i + 1);
        if (args[i]->sort != want)
            return sg__err(ctx, SG_ETYPE, "%s: argument %zu is %s, expected %s", fn, i + 1,
                           args[i]->sort == SG_SORT_BOOL ? "a boolean" : "an integer",
                           want == SG_SORT_BOOL ? "a boolean" : "an integer");
    }
    return SG_OK;
}

/* A binary integer operation, remembered: a trace asks the same questions
 * again and again, and a result is a canonical form that never changes. */
#define SG_BINARY(NAME, TAG, CALL)                                                               \
    sg_status sg_expr_##NAME(sg_ctx *ctx, const sg_expr **out, const sg_expr *a, const sg_expr *b) \
    {                                                                                            \
        if (!ctx)                                                                                \
            return SG_EINVAL;                                                                    \
        const sg_expr *args[2] = {a, b};                                                         \
        sg_status s = check_args(ctx, "sg_expr_" #NAME, out, 2, args, SG_SORT_INT);              \
        if (s)                                                                                   \
            return s;                                                                            \
        const sg_expr *r = sg__memo_get(ctx, TAG, a, b);                                         \
        if (r) {                                                                                 \
            *out = r;                                                                            \
            return SG_OK;                                                                        \
        }                                                                                        \
        r = CALL;                                                                                \
        if (r)                                                                                   \
            sg__memo_put(ctx, TAG, a, b, r);                                                     \
        return finish(ctx, out, r);                                                              \
    }

SG_BINARY(add, SG_MEMO_ADD, sg__add(ctx, a, b))
SG_BINARY(sub, SG_MEMO_SUB, sg__sub(ctx, a, b))
SG_BINARY(mul, SG_MEMO_MUL, sg__mul(ctx, a, b))
SG_BINARY(pow, SG_MEMO_POW, sg__pow(ctx, a, b))
SG_BINARY(floordiv, SG_MEMO_FLOORDIV, sg__floordiv(ctx, a, b))
SG_BINARY(mod, SG_MEMO_MOD, sg__mod(ctx, a, b))
SG_BINARY(ceildiv, SG_MEMO_CEILDIV, sg__ceildiv(ctx, a, b))
SG_BINARY(cleandiv, SG_MEMO_CLEANDIV, sg__cleandiv(ctx, a, b))
SG_BINARY(truncdiv, SG_MEMO_TRUNCDIV, sg__truncdiv(ctx, a, b))
SG_BINARY(truncmod, SG_MEMO_TRUNCMOD, sg__truncmod(ctx, a, b))
SG_BINARY(band, SG_MEMO_BAND, sg__bitop(ctx, SG_OP_BAND, a, b))
SG_BINARY(bor, SG_MEMO_BOR, sg__bitop(ctx, SG_OP_BOR, a, b))
SG_BINARY(bxor, SG_MEMO_BXOR, sg__bitop(ctx, SG_OP_BXOR, a, b))

/* a << b = a * 2**b and a >> b = a // 2**b; a negative b gives an
 * unevaluated power whose evaluation raises negative-exponent. */
static const sg_expr *shift(sg_ctx *ctx, const sg_expr *a, const sg_expr *b, bool left)
{
    const sg_expr *two = sg__int_si(ctx, 2), *p = two ? sg__pow(ctx, two, b) : NULL;
    if (!p)
        return NULL;
    return left ? sg__mul(ctx, a, p) : sg__floordiv(ctx, a, p);
}

SG_BINARY(shl, SG_MEMO_SHL, shift(ctx, a, b, true))
SG_BINARY(shr, SG_MEMO_SHR, shift(ctx, a, b, false))

sg_status sg_expr_neg(sg_ctx *ctx, const sg_expr **out, const sg_expr *a)
{
    if (!ctx)
        return SG_EINVAL;
    sg_status s = check_args(ctx, "sg_expr_neg", out, 1, &a, SG_SORT_INT);
    return s ? s : finish(ctx, out, sg__neg(ctx, a));
}

sg_status sg_expr_abs(sg_ctx *ctx, const sg_expr **out, const sg_expr *a)
{
    if (!ctx)
        return SG_EINVAL;
    sg_status s = check_args(ctx, "sg_expr_abs", out, 1, &a, SG_SORT_INT);
    return s ? s : finish(ctx, out, sg__abs(ctx, a));
}

sg_status sg_expr_bnot(sg_ctx *ctx, const sg_expr **out, const sg_expr *a)
{
    if (!ctx)
        return SG_EINVAL;
    sg_status s = check_args(ctx, "sg_expr_bnot", out, 1, &a, SG_SORT_INT);
    if (s)
        return s;
    const sg_expr *n = sg__neg(ctx, a); /* ~a = -a - 1 */
    return finish(ctx, out, n ? sg__add(ctx, n, ctx->minus_one) : NULL);
}

sg_status sg_expr_modular_indexing(sg_ctx *ctx, const sg_expr **out, const sg_expr *x, const sg_expr *d,
                                   const sg_expr *m)
{
    if (!ctx)
        return SG_EINVAL;
    const sg_expr *args[3] = {x, d, m};
    sg_status s = check_args(ctx, "sg_expr_modular_indexing", out, 3, args, SG_SORT_INT);
    if (s)
        return s;
    const sg_expr *q = sg__floordiv(ctx, x, d);
    return finish(ctx, out, q ? sg__mod(ctx, q, m) : NULL);
}

static sg_status nary(sg_ctx *ctx, const char *fn, const sg_expr **out, size_t n, const sg_expr *const *args,
                      sg_sort sort, sg_op op)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out)
        return sg__err(ctx, SG_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    if (n == 0 && (op == SG_OP_MIN || op == SG_OP_MAX))
        return sg__err(ctx, SG_EINVAL, "%s: needs at least one argument", fn);
    if (n && !args)
        return sg__err(ctx, SG_EINVAL, "%s: args is NULL", fn);
    sg_status s = check_args(ctx, fn, out, n, args, sort);
    if (s)
        return s;
    uint32_t tag = op == SG_OP_MIN ? SG_MEMO_MIN : op == SG_OP_MAX ? SG_MEMO_MAX : op == SG_OP_AND ? SG_MEMO_AND : SG_MEMO_OR;
    const sg_expr *r = n == 2 ? sg__memo_get(ctx, tag, args[0], args[1]) : NULL;
    if (r) {
        *out = r;
        return SG_OK;
    }
    if (op == SG_OP_MIN || op == SG_OP_MAX)
        r = sg__minmax(ctx, op, n, args);
    else
        r = sg__andor(ctx, op, n, args);
    if (r && n == 2)
        sg__memo_put(ctx, tag, args[0], args[1], r);
    return finish(ctx, out, r);
}

sg_status sg_expr_min(sg_ctx *ctx, const sg_expr **out, size_t n, const sg_expr *const *args)
{
    return nary(ctx, "sg_expr_min", out, n, args, SG_SORT_INT, SG_OP_MIN);
}

sg_status sg_expr_max(sg_ctx *ctx, const sg_expr **out, size_t n, const sg_expr *const *args)
{
    return nary(ctx, "sg_expr_max", out, n, args, SG_SORT_INT, SG_OP_MAX);
}

sg_status sg_expr_and(sg_ctx *ctx, const sg_expr **out, size_t n, const sg_expr *const *args)
{
    return nary(ctx, "sg_expr_and", out, n, args, SG_SORT_BOOL, SG_OP_AND);
}

sg_status sg_expr_or(sg_ctx *ctx, const sg_expr **out, size_t n, const sg_expr *const *args)
{
    return nary(ctx, "sg_expr_or", out, n, args, SG_SORT_BOOL, SG_OP_OR);
}

sg_status sg_expr_not(sg_ctx *ctx, const sg_expr **out, const sg_expr *a)
{
    if (!ctx)
        return SG_EINVAL;
    sg_status s = check_args(ctx, "sg_expr_not", out, 1, &a, SG_SORT_BOOL);
    return s ? s : finish(ctx, out, sg__not(ctx, a));
}

sg_status sg_expr_where(sg_ctx *ctx, const sg_expr **out, const sg_expr *c, const sg_expr *a, const sg_expr *b)
{
    if (!ctx)
        return SG_EINVAL;
    sg_status s = check_args(ctx, "sg_expr_where", out, 1, &c, SG_SORT_BOOL);
    if (s)
        return s;
    if (!a || !b)
        return sg__err(ctx, SG_EINVAL, "sg_expr_where: argument %d is NULL", a ? 3 : 2);
    if (a->sort != b->sort)
        return sg__err(ctx, SG_ETYPE, "sg_expr_where: the arms are of different sorts");
    return finish(ctx, out, sg__where(ctx, c, a, b));
}

sg_status sg_expr_rel(sg_ctx *ctx, const sg_expr **out, sg_rel rel, const sg_expr *a, const sg_expr *b)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out)
        return sg__err(ctx, SG_EINVAL, "sg_expr_rel: out is NULL");
    *out = NULL;
    if (!a || !b)
        return sg__err(ctx, SG_EINVAL, "sg_expr_rel: argument %d is NULL", a ? 2 : 1);
    if ((unsigned)rel > SG_REL_GE)
        return sg__err(ctx, SG_EINVAL, "sg_expr_rel: unknown relation %d", (int)rel);
    if (a->sort != b->sort)
        return sg__err(ctx, SG_ETYPE, "comparison of an integer with a boolean");
    if (a->sort == SG_SORT_BOOL && rel != SG_REL_EQ && rel != SG_REL_NE)
        return sg__err(ctx, SG_ETYPE, "booleans can only be compared with == and !=");
    const sg_expr *r = sg__memo_get(ctx, SG_MEMO_REL + (uint32_t)rel, a, b);
    if (r) {
        *out = r;
        return SG_OK;
    }
    r = sg__rel(ctx, rel, a, b);
    if (r)
        sg__memo_put(ctx, SG_MEMO_REL + (uint32_t)rel, a, b, r);
    return finish(ctx, out, r);
}

/* ---- leaves ---- */

sg_status sg_expr_int(sg_ctx *ctx, const sg_expr **out, int64_t v)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out)
        return sg__err(ctx, SG_EINVAL, "sg_expr_int: out is NULL");
    return finish(ctx, out, sg__int_si(ctx, (slong)v)); /* small ones from the context's table */
}

sg_status sg_expr_int_fmpz(sg_ctx *ctx, const sg_expr **out, const fmpz_t v)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out || !v)
        return sg__err(ctx, SG_EINVAL, "sg_expr_int_fmpz: NULL argument");
    return finish(ctx, out, sg__int_fmpz(ctx, v));
}

sg_status sg_expr_int_str(sg_ctx *ctx, const sg_expr **out, const char *str)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out || !str)
        return sg__err(ctx, SG_EINVAL, "sg_expr_int_str: NULL argument");
    *out = NULL;
    const char *p = str;
    if (*p == '-' || *p == '+')
        p++;
    if (!*p)
        return sg__err(ctx, SG_ESYNTAX, "not an integer: '%.40s'", str);
    int64_t small = 0;
    size_t ndig = 0;
    for (const char *q = p; *q; q++, ndig++) {
        if (*q < '0' || *q > '9')
            return sg__err(ctx, SG_ESYNTAX, "not an integer: '%.40s'", str);
        small = ndig < 18 ? small * 10 + (*q - '0') : 0;
    }
    if (ndig <= 18) /* |value| < 10**18: no big-number parse */
        return finish(ctx, out, sg__int_si(ctx, *str == '-' ? -small : small));
    fmpz_t z;
    fmpz_init(z);
    fmpz_set_str(z, p, 10);
    if (*str == '-')
        fmpz_neg(z, z);
    sg_status s = finish(ctx, out, sg__int_fmpz(ctx, z));
    fmpz_clear(z);
    return s;
}

sg_status sg_expr_bool(sg_ctx *ctx, const sg_expr **out, int value)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out)
        return sg__err(ctx, SG_EINVAL, "sg_expr_bool: out is NULL");
    *out = value ? ctx->t : ctx->f;
    return SG_OK;
}

sg_status sg_expr_sym(sg_ctx *ctx, const sg_expr **out, const char *name)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out || !name)
        return sg__err(ctx, SG_EINVAL, "sg_expr_sym: NULL argument");
    *out = NULL;
    if (!*name)
        return sg__err(ctx, SG_EINVAL, "sg_expr_sym: empty name");
    return finish(ctx, out, sg__intern(ctx, SG_OP_SYM, SG_SORT_INT, 0, NULL, NULL, NULL, name, strlen(name)));
}

/* ---- inspection ---- */

sg_op sg_expr_op(const sg_expr *e) { return (sg_op)e->op; }
sg_sort sg_expr_sort(const sg_expr *e) { return (sg_sort)e->sort; }
size_t sg_expr_nargs(const sg_expr *e) { return e->nargs; }
const sg_expr *sg_expr_arg(const sg_expr *e, size_t i) { return i < e->nargs ? e->args[i] : NULL; }
uint64_t sg_expr_id(const sg_expr *e) { return e->id; }
uint64_t sg_expr_hash(const sg_expr *e) { return e->hash; }
unsigned sg_expr_depth(const sg_expr *e) { return e->depth; }
const char *sg_expr_sym_name(const sg_expr *e) { return e->op == SG_OP_SYM ? e->u.name : NULL; }
int sg_expr_is_int(const sg_expr *e) { return e->op == SG_OP_INT; }

static const fmpz *num_at(const sg_expr *e, size_t i)
{
    if (i == SIZE_MAX)
        return e->op == SG_OP_INT || e->op == SG_OP_ADD ? &e->u.val : NULL;
    if ((e->op == SG_OP_ADD || e->op == SG_OP_MUL) && i < e->nargs)
        return sg__nums(e) + i;
    return NULL;
}

int sg_expr_get_si(const sg_expr *e, int64_t *v)
{
    if (e->op != SG_OP_INT)
        return 0;
    return sg_expr_num_si(e, SIZE_MAX, v);
}

int sg_expr_num_si(const sg_expr *e, size_t i, int64_t *v)
{
    const fmpz *z = num_at(e, i);
    if (!z || !fmpz_fits_si(z))
        return 0;
    if (v)
        *v = fmpz_get_si(z);
    return 1;
}

int sg_expr_get_fmpz(fmpz_t v, const sg_expr *e, size_t i)
{
    const fmpz *z = num_at(e, i);
    if (!z)
        return 0;
    fmpz_set(v, z);
    return 1;
}

sg_status sg_expr_num_str(sg_ctx *ctx, char **out, const sg_expr *e, size_t i)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out || !e)
        return sg__err(ctx, SG_EINVAL, "sg_expr_num_str: NULL argument");
    *out = NULL;
    const fmpz *z = num_at(e, i);
    if (!z)
        return sg__err(ctx, SG_EINVAL, "sg_expr_num_str: no number %zu in this node", i);
    sg__buf b = {.ctx = ctx};
    sg__buf_fmpz(&b, z);
    *out = sg__buf_take(&b);
    return *out ? SG_OK : sg__nomem(ctx);
}

sg_status sg_expr_eval(sg_ctx *ctx, const sg_expr **out, const sg_expr *e, size_t n,
                       const sg_expr *const *syms, const sg_expr *const *vals)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out)
        return sg__err(ctx, SG_EINVAL, "sg_expr_eval: out is NULL");
    *out = NULL;
    if (!e || (n && (!syms || !vals)))
        return sg__err(ctx, SG_EINVAL, "sg_expr_eval: NULL argument");
    return sg__eval(ctx, e, n, syms, vals, out);
}
