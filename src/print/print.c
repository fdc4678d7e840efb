/* Printing expressions in three formats: the battery syntax (SG_FMT_SG,
 * parses back to the same canonical form), Python source (SG_FMT_PYTHON) and
 * a C expression over int64_t (SG_FMT_C, with the helpers of
 * sg_print_c_prelude()).
 *
 * Display order. Canonical nodes keep their arguments in an order that
 * depends on node ids, that is on the order of creation. The printer sorts
 * them with a total structural comparison instead, so the text of an
 * expression is the same whatever was built first:
 *   - an integer expression is seen as a polynomial: its terms in display
 *     order, then its constant. Terms compare by monomial, then coefficient
 *     (positive before negative, then smaller magnitude first); a polynomial
 *     whose term list is a prefix of the other's comes first; a plain
 *     integer comes after every non-constant expression; then constants
 *     compare by value.
 *   - monomials: higher total degree first, then their factor lists
 *     (atom, then higher exponent first) lexicographically.
 *   - atoms: symbols first, by name in natural order (prefix, then numeric
 *     suffix by value: s2 < s10), then compound atoms by operator, then by
 *     their arguments (in display order for commutative operators).
 *   - booleans: relations (by polynomial, then >= / == / !=), then And, then
 *     Or (by arguments), then false, true.
 * Terms of sums, factors of monomials and arguments of Min, Max, &, |, ^,
 * and, or are printed in this order. The sorted orders are memoized per node
 * for the duration of one print call.
 *
 * The argument of Abs, ==, != has no meaningful sign (Abs(-p) = Abs(p)); it
 * compares and prints with its first term in display order positive, so its
 * text does not depend on which sign the core chose by ids either.
 *
 * Sums print as `2*x*y - x + 3` (first term with its sign, constant last).
 * Relations: p >= 0 prints `Q <= k` when every term of p = k - Q is negative,
 * else positive terms on the left, the rest on the right (`x >= y + 1`);
 * p == 0 and p != 0 put the first term in display order on the left with a
 * positive sign (`x == 2*y + 1`).
 *
 * Parentheses follow each format's precedence, adding a few for legibility:
 * operands of & | ^ and of // % are parenthesized unless they are unary or
 * tighter, sides of relations unless they are sums or tighter, and an `and`
 * inside an `or`.
 *
 * Python: exact with Python's integers; TruncDiv and TruncMod, which Python
 * lacks, print as conditional expressions over // and % (operands that are
 * not symbols or constants are bound once through a lambda, so text never
 * grows exponentially). CleanDiv prints as //.
 *
 * C: constants carry LL and must fit in int64_t (INT64_MIN is written
 * (-9223372036854775807LL - 1)); a constant, coefficient or exponent that
 * does not fit is SG_EUNSUPPORTED. x**2 and x**3 of a symbol print as
 * products, other powers and every Python-semantics operation as calls to
 * the prelude's helpers; relations are 0/1 ints. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "shapeguard/print.h"

/* ---- precedence levels ------------------------------------------------ */

typedef struct levels {
    int or_, and_, ge, eq, bor, bxor, band, add, mul, unary, pow, atom;
} levels;

/* Python's order (also the battery syntax's). */
static const levels py_levels = {1, 2, 4, 4, 5, 6, 7, 9, 10, 11, 12, 13};
/* C's: bitwise operators bind looser than comparisons. */
static const levels c_levels = {1, 2, 7, 6, 3, 4, 5, 9, 10, 11, 13, 13};

#define LOWEST 0

/* ---- printer state ----------------------------------------------------- */

typedef struct memo_ent {
    const sg_expr *key;
    uint32_t *perm;
} memo_ent;

typedef struct printer {
    sg_ctx *ctx;
    sg__buf buf;
    sg_format fmt;
    const levels *L;
    sg_symname_fn symname;
    void *user;
    memo_ent *memo;
    size_t memo_cap, memo_used;
    bool oom;
    sg_status err; /* first non-memory error (SG_EUNSUPPORTED) */
} printer;

static const fmpz k_one = 1; /* a small fmpz is its value */

static void fail(printer *P, sg_status s, const char *what)
{
    if (P->err == SG_OK) {
        P->err = s;
        sg__err(P->ctx, s, "sg_print: %s", what);
    }
}

/* ---- memo of display orders -------------------------------------------- */

static bool sortable(const sg_expr *e)
{
    return e->nargs >= 2 && sg__op_args_by_id((sg_op)e->op);
}

static size_t memo_slot(const memo_ent *tab, size_t cap, const sg_expr *key)
{
    uintptr_t h = (uintptr_t)key;
    h ^= h >> 17;
    h *= (uintptr_t)0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    size_t i = (size_t)h & (cap - 1);
    while (tab[i].key && tab[i].key != key)
        i = (i + 1) & (cap - 1);
    return i;
}

static bool memo_insert(printer *P, const sg_expr *key, uint32_t *perm)
{
    sg_ctx *ctx = P->ctx;
    if ((P->memo_used + 1) * 2 > P->memo_cap) {
        size_t ncap = P->memo_cap ? P->memo_cap * 2 : 64;
        memo_ent *nt = sg__calloc(ctx, ncap, sizeof *nt);
        if (!nt)
            return false;
        for (size_t i = 0; i < P->memo_cap; i++)
            if (P->memo[i].key)
                nt[memo_slot(nt, ncap, P->memo[i].key)] = P->memo[i];
        sg_free(P->memo);
        P->memo = nt;
        P->memo_cap = ncap;
    }
    size_t i = memo_slot(P->memo, P->memo_cap, key);
    P->memo[i].key = key;
    P->memo[i].perm = perm;
    P->memo_used++;
    return true;
}

static void memo_free(printer *P)
{
    for (size_t i = 0; i < P->memo_cap; i++)
        sg_free(P->memo[i].perm);
    sg_free(P->memo);
    P->memo = NULL;
    P->memo_cap = P->memo_used = 0;
}

static const uint32_t *get_perm(printer *P, const sg_expr *e);

/* ---- the structural comparison ----------------------------------------- */

static int cmp_expr(printer *P, const sg_expr *a, const sg_expr *b);
static int cmp_atom(printer *P, const sg_expr *a, const sg_expr *b);

static inline uint32_t pidx(const uint32_t *perm, size_t i)
{
    return perm ? perm[i] : (uint32_t)i;
}

static int sign3(int c)
{
    return (c > 0) - (c < 0);
}

/* Natural order of names: the name without its trailing digits by strcmp,
 * then the trailing number by value (none before any), then strcmp. */
static int cmp_name(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t da = la, db = lb;
    while (da > 0 && a[da - 1] >= '0' && a[da - 1] <= '9')
        da--;
    while (db > 0 && b[db - 1] >= '0' && b[db - 1] <= '9')
        db--;
    size_t m = da < db ? da : db;
    int c = memcmp(a, b, m);
    if (c)
        return sign3(c);
    if (da != db)
        return da < db ? -1 : 1;
    int ha = da < la, hb = db < lb;
    if (ha != hb)
        return ha < hb ? -1 : 1;
    if (ha) {
        size_t za = da, zb = db;
        while (za < la - 1 && a[za] == '0')
            za++;
        while (zb < lb - 1 && b[zb] == '0')
            zb++;
        if (la - za != lb - zb)
            return la - za < lb - zb ? -1 : 1;
        c = memcmp(a + za, b + zb, la - za);
        if (c)
            return sign3(c);
    }
    return sign3(strcmp(a, b));
}

/* Factor i of a monomial m (an atom or a MUL node) in display order. */
static size_t mono_nfactors(const sg_expr *m)
{
    return m->op == SG_OP_MUL ? m->nargs : 1;
}

static void mono_factor(const sg_expr *m, const uint32_t *perm, size_t i, const sg_expr **atom, const fmpz **exp)
{
    if (m->op == SG_OP_MUL) {
        uint32_t j = pidx(perm, i);
        *atom = m->args[j];
        *exp = &sg__nums(m)[j];
    } else {
        *atom = m;
        *exp = &k_one;
    }
}

static void mono_degree(fmpz_t d, const sg_expr *m)
{
    if (m->op != SG_OP_MUL) {
        fmpz_one(d);
        return;
    }
    fmpz_zero(d);
    for (size_t i = 0; i < m->nargs; i++)
        fmpz_add(d, d, &sg__nums(m)[i]);
}

static int cmp_mono(printer *P, const sg_expr *a, const sg_expr *b)
{
    if (a == b)
        return 0;
    fmpz_t da, db;
    fmpz_init(da);
    fmpz_init(db);
    mono_degree(da, a);
    mono_degree(db, b);
    int c = fmpz_cmp(db, da); /* higher degree first */
    fmpz_clear(da);
    fmpz_clear(db);
    if (c)
        return sign3(c);
    const uint32_t *pa = get_perm(P, a), *pb = get_perm(P, b);
    size_t na = mono_nfactors(a), nb = mono_nfactors(b);
    for (size_t i = 0; i < na && i < nb; i++) {
        const sg_expr *fa, *fb;
        const fmpz *ea, *eb;
        mono_factor(a, pa, i, &fa, &ea);
        mono_factor(b, pb, i, &fb, &eb);
        if ((c = cmp_atom(P, fa, fb)))
            return c;
        if ((c = fmpz_cmp(eb, ea))) /* higher exponent first */
            return sign3(c);
    }
    return na == nb ? 0 : na < nb ? -1 : 1;
}

/* An integer expression as a polynomial: terms and constant. */
static size_t poly_nterms(const sg_expr *e)
{
    return e->op == SG_OP_ADD ? e->nargs : e->op == SG_OP_INT ? 0 : 1;
}

static void poly_term(const sg_expr *e, const uint32_t *perm, size_t i, const sg_expr **m, const fmpz **k)
{
    if (e->op == SG_OP_ADD) {
        uint32_t j = pidx(perm, i);
        *m = e->args[j];
        *k = &sg__nums(e)[j];
    } else {
        *m = e;
        *k = &k_one;
    }
}

static const fmpz k_zero = 0;

static const fmpz *poly_const(const sg_expr *e)
{
    return e->op == SG_OP_ADD || e->op == SG_OP_INT ? &e->u.val : &k_zero;
}

/* The sign that puts p's first term in display order positive (1 if none). */
static int disp_sign(printer *P, const sg_expr *p)
{
    if (p->op != SG_OP_ADD)
        return 1;
    const uint32_t *perm = get_perm(P, p);
    return fmpz_sgn(&sg__nums(p)[pidx(perm, 0)]) < 0 ? -1 : 1;
}

/* Compare sa*x with sb*y (signs +1 or -1). */
static int cmp_scaled(const fmpz *x, int sa, const fmpz *y, int sb)
{
    if (sa == sb)
        return sign3(fmpz_cmp(x, y)) * sa;
    fmpz_t u, v;
    fmpz_init(u);
    fmpz_init(v);
    fmpz_mul_si(u, x, sa);
    fmpz_mul_si(v, y, sb);
    int c = sign3(fmpz_cmp(u, v));
    fmpz_clear(u);
    fmpz_clear(v);
    return c;
}

/* Compare the integer expressions sa*a and sb*b as polynomials. */
static int cmp_poly_s(printer *P, const sg_expr *a, int sa, const sg_expr *b, int sb)
{
    if (a == b && sa == sb)
        return 0;
    int ia = a->op == SG_OP_INT, ib = b->op == SG_OP_INT;
    if (ia != ib)
        return ia ? 1 : -1; /* integers last */
    if (!ia) {
        const uint32_t *pa = get_perm(P, a), *pb = get_perm(P, b);
        size_t na = poly_nterms(a), nb = poly_nterms(b);
        for (size_t i = 0; i < na && i < nb; i++) {
            const sg_expr *ma, *mb;
            const fmpz *ka, *kb;
            poly_term(a, pa, i, &ma, &ka);
            poly_term(b, pb, i, &mb, &kb);
            int c = cmp_mono(P, ma, mb);
            if (c)
                return c;
            /* coefficients: positive before negative, then smaller magnitude */
            int ga = fmpz_sgn(ka) * sa, gb = fmpz_sgn(kb) * sb;
            if (ga != gb)
                return ga > gb ? -1 : 1;
            if ((c = sign3(fmpz_cmpabs(ka, kb))))
                return c;
        }
        if (na != nb)
            return na < nb ? -1 : 1;
    }
    return cmp_scaled(poly_const(a), sa, poly_const(b), sb);
}

static int cmp_poly(printer *P, const sg_expr *a, const sg_expr *b)
{
    return cmp_poly_s(P, a, 1, b, 1);
}

/* Arguments whose sign does not matter (of Abs, of == and !=) compare with
 * the sign that makes their first term positive, as they print. */
static int cmp_unsigned(printer *P, const sg_expr *a, const sg_expr *b)
{
    return cmp_poly_s(P, a, disp_sign(P, a), b, disp_sign(P, b));
}

/* Argument lists, in display order, lexicographically; shorter first. */
static int cmp_args(printer *P, const sg_expr *a, const sg_expr *b)
{
    const uint32_t *pa = get_perm(P, a), *pb = get_perm(P, b);
    for (size_t i = 0; i < a->nargs && i < b->nargs; i++) {
        int c = cmp_expr(P, a->args[pidx(pa, i)], b->args[pidx(pb, i)]);
        if (c)
            return c;
    }
    return a->nargs == b->nargs ? 0 : a->nargs < b->nargs ? -1 : 1;
}

static int cmp_atom(printer *P, const sg_expr *a, const sg_expr *b)
{
    if (a == b)
        return 0;
    int sa = a->op == SG_OP_SYM, sb = b->op == SG_OP_SYM;
    if (sa != sb)
        return sa ? -1 : 1;
    if (sa)
        return cmp_name(a->u.name, b->u.name);
    if (a->op != b->op)
        return a->op < b->op ? -1 : 1;
    if (a->op == SG_OP_ABS)
        return cmp_unsigned(P, a->args[0], b->args[0]);
    return cmp_args(P, a, b);
}

static int bool_rank(const sg_expr *e)
{
    switch ((sg_op)e->op) {
    case SG_OP_GE0:
    case SG_OP_EQ0:
    case SG_OP_NE0:
        return 0;
    case SG_OP_AND:
        return 1;
    case SG_OP_OR:
        return 2;
    case SG_OP_FALSE:
        return 3;
    default:
        return 4;
    }
}

static int cmp_bool(printer *P, const sg_expr *a, const sg_expr *b)
{
    int ra = bool_rank(a), rb = bool_rank(b);
    if (ra != rb)
        return ra < rb ? -1 : 1;
    if (ra == 0) {
        int c;
        if (a->op == SG_OP_GE0 && b->op == SG_OP_GE0)
            c = cmp_poly(P, a->args[0], b->args[0]);
        else if (a->op != SG_OP_GE0 && b->op != SG_OP_GE0)
            c = cmp_unsigned(P, a->args[0], b->args[0]);
        else /* p >= 0 against q == 0: q as printed, first term positive */
            c = a->op == SG_OP_GE0 ? cmp_poly_s(P, a->args[0], 1, b->args[0], disp_sign(P, b->args[0]))
                                   : cmp_poly_s(P, a->args[0], disp_sign(P, a->args[0]), b->args[0], 1);
        if (c)
            return c;
        return a->op == b->op ? 0 : a->op < b->op ? -1 : 1;
    }
    if (ra <= 2)
        return cmp_args(P, a, b);
    return 0;
}

static int cmp_expr(printer *P, const sg_expr *a, const sg_expr *b)
{
    if (a == b)
        return 0;
    if (a->sort != b->sort)
        return a->sort == SG_SORT_INT ? -1 : 1;
    if (a->sort == SG_SORT_INT)
        return cmp_poly(P, a, b);
    return cmp_bool(P, a, b);
}

/* Compare arguments i and j of e for its display order. */
static int cmp_child(printer *P, const sg_expr *e, uint32_t i, uint32_t j)
{
    switch ((sg_op)e->op) {
    case SG_OP_ADD:
        return cmp_mono(P, e->args[i], e->args[j]);
    case SG_OP_MUL:
        return cmp_atom(P, e->args[i], e->args[j]);
    default:
        return cmp_expr(P, e->args[i], e->args[j]);
    }
}

static void sort_perm(printer *P, const sg_expr *e, uint32_t *a, uint32_t *tmp, size_t n)
{
    if (n <= 8 || !tmp) {
        for (size_t i = 1; i < n; i++) {
            uint32_t x = a[i];
            size_t j = i;
            while (j > 0 && cmp_child(P, e, a[j - 1], x) > 0) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = x;
        }
        return;
    }
    size_t h = n / 2;
    sort_perm(P, e, a, tmp, h);
    sort_perm(P, e, a + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = cmp_child(P, e, a[j], a[i]) < 0 ? a[j++] : a[i++];
    while (i < h)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
}

/* The display order of the arguments of e (NULL: the stored order, for
 * nodes that need no sorting, or after an allocation failure). */
static const uint32_t *get_perm(printer *P, const sg_expr *e)
{
    sg_ctx *ctx = P->ctx;
    if (!sortable(e))
        return NULL;
    if (P->memo_cap) {
        size_t i = memo_slot(P->memo, P->memo_cap, e);
        if (P->memo[i].key)
            return P->memo[i].perm;
    }
    size_t n = e->nargs;
    uint32_t *perm = sg__malloc(ctx, n * sizeof *perm);
    uint32_t *tmp = n > 8 ? sg__malloc(ctx, n * sizeof *tmp) : NULL;
    if (!perm || (n > 8 && !tmp)) {
        sg_free(perm);
        sg_free(tmp);
        P->oom = true;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    sort_perm(P, e, perm, tmp, n);
    sg_free(tmp);
    if (!memo_insert(P, e, perm)) {
        sg_free(perm);
        P->oom = true;
        return NULL;
    }
    return perm;
}

/* ---- emitting text ------------------------------------------------------ */

static void put(printer *P, const char *s)
{
    sg__buf_puts(&P->buf, s);
}

static void open_if(printer *P, bool c)
{
    if (c)
        put(P, "(");
}

static void close_if(printer *P, bool c)
{
    if (c)
        put(P, ")");
}

static void emit(printer *P, const sg_expr *e, int minprec);

/* An integer constant. */
static void emit_int(printer *P, const fmpz *v, int minprec)
{
    if (P->fmt == SG_FMT_C) {
        if (!fmpz_fits_si(v)) { /* slong is 64 bits where FLINT runs */
            fail(P, SG_EUNSUPPORTED, "an integer constant does not fit in int64_t");
            put(P, "0LL");
            return;
        }
        int64_t x = (int64_t)fmpz_get_si(v);
        if (x == INT64_MIN) {
            put(P, "(-9223372036854775807LL - 1)");
            return;
        }
        bool par = x < 0 && P->L->unary < minprec;
        open_if(P, par);
        sg__buf_printf(&P->buf, "%lldLL", (long long)x);
        close_if(P, par);
        return;
    }
    bool par = fmpz_sgn(v) < 0 && P->L->unary < minprec;
    open_if(P, par);
    sg__buf_fmpz(&P->buf, v);
    close_if(P, par);
}

static void emit_sym(printer *P, const sg_expr *e)
{
    const char *s = NULL;
    if (P->symname)
        s = P->symname(P->user, e);
    put(P, s ? s : e->u.name);
}

static bool c_repeat(printer *P, const sg_expr *atom, const fmpz *exp)
{
    return P->fmt == SG_FMT_C && atom->op == SG_OP_SYM && fmpz_cmp_ui(exp, 3) <= 0;
}

/* One factor atom**exp of a monomial, as an operand of '*'. */
static void emit_factor(printer *P, const sg_expr *atom, const fmpz *exp)
{
    if (fmpz_is_one(exp)) {
        emit(P, atom, P->L->unary);
        return;
    }
    if (P->fmt != SG_FMT_C) {
        emit(P, atom, P->L->atom);
        put(P, "**");
        sg__buf_fmpz(&P->buf, exp);
        return;
    }
    if (c_repeat(P, atom, exp)) {
        ulong n = fmpz_get_ui(exp);
        for (ulong i = 0; i < n; i++) {
            if (i)
                put(P, "*");
            emit_sym(P, atom);
        }
        return;
    }
    put(P, "sg_pow(");
    emit(P, atom, LOWEST);
    put(P, ", ");
    emit_int(P, exp, LOWEST);
    put(P, ")");
}

/* The factors of a MUL node joined by '*'. */
static void emit_factors(printer *P, const sg_expr *m)
{
    const uint32_t *perm = get_perm(P, m);
    for (size_t i = 0; i < m->nargs; i++) {
        const sg_expr *a;
        const fmpz *x;
        mono_factor(m, perm, i, &a, &x);
        if (i)
            put(P, "*");
        emit_factor(P, a, x);
    }
}

/* The precedence of a MUL node's text. */
static int mono_prec(printer *P, const sg_expr *m)
{
    if (m->nargs >= 2)
        return P->L->mul;
    const fmpz *x = &sg__nums(m)[0];
    if (P->fmt != SG_FMT_C)
        return P->L->pow;
    return c_repeat(P, m->args[0], x) ? P->L->mul : P->L->atom;
}

static void emit_mono(printer *P, const sg_expr *m, int minprec)
{
    if (m->op != SG_OP_MUL) {
        emit(P, m, minprec);
        return;
    }
    bool par = mono_prec(P, m) < minprec;
    open_if(P, par);
    emit_factors(P, m);
    close_if(P, par);
}

/* k*m for a monomial m and a coefficient k. */
static void emit_term(printer *P, const sg_expr *m, const fmpz *k, int minprec)
{
    if (fmpz_is_one(k)) {
        emit_mono(P, m, minprec);
        return;
    }
    if (fmpz_equal_si(k, -1)) {
        int prec = P->L->unary;
        if (m->op == SG_OP_MUL && mono_prec(P, m) == P->L->mul)
            prec = P->L->mul; /* -x*y is (-x)*y */
        bool par = prec < minprec;
        open_if(P, par);
        put(P, "-");
        if (m->op == SG_OP_MUL)
            emit_factors(P, m);
        else
            emit(P, m, P->L->unary);
        close_if(P, par);
        return;
    }
    bool par = P->L->mul < minprec;
    open_if(P, par);
    emit_int(P, k, P->L->unary);
    put(P, "*");
    if (m->op == SG_OP_MUL)
        emit_factors(P, m);
    else
        emit(P, m, P->L->unary);
    close_if(P, par);
}

/* Which terms of a polynomial to print. */
enum { SEL_ALL, SEL_POS, SEL_NEG, SEL_NONE };

static bool selected(int sel, const fmpz *k)
{
    switch (sel) {
    case SEL_ALL:
        return true;
    case SEL_POS:
        return fmpz_sgn(k) > 0;
    case SEL_NEG:
        return fmpz_sgn(k) < 0;
    default:
        return false;
    }
}

static bool c_is_min(printer *P, const fmpz *v)
{
    return P->fmt == SG_FMT_C && fmpz_fits_si(v) && (int64_t)fmpz_get_si(v) == INT64_MIN;
}

/* s * (the selected terms of e, plus its constant if with_const), as a sum:
 * first term with its sign, then " + t" / " - t", the constant last; "0" if
 * nothing is left. */
static void emit_poly(printer *P, const sg_expr *e, int sel, int s, bool with_const, int minprec)
{
    const uint32_t *perm = get_perm(P, e);
    size_t n = poly_nterms(e), count = 0, first = n;
    for (size_t i = 0; i < n; i++) {
        const sg_expr *m;
        const fmpz *k;
        poly_term(e, perm, i, &m, &k);
        if (selected(sel, k)) {
            if (first == n)
                first = i;
            count++;
        }
    }
    const fmpz *c = poly_const(e);
    bool has_c = with_const && !fmpz_is_zero(c);
    fmpz_t v;
    fmpz_init(v);
    if (count == 0) {
        if (has_c) {
            fmpz_mul_si(v, c, s);
            emit_int(P, v, minprec);
        } else {
            emit_int(P, &k_zero, minprec);
        }
        fmpz_clear(v);
        return;
    }
    bool par = (count + has_c) > 1 && P->L->add < minprec;
    int first_min = (count + has_c) > 1 ? P->L->add : minprec;
    open_if(P, par);
    for (size_t i = first; i < n; i++) {
        const sg_expr *m;
        const fmpz *k;
        poly_term(e, perm, i, &m, &k);
        if (!selected(sel, k))
            continue;
        fmpz_mul_si(v, k, s);
        if (i == first) {
            emit_term(P, m, v, first_min);
        } else if (fmpz_sgn(v) < 0 && !c_is_min(P, v)) {
            put(P, " - ");
            fmpz_neg(v, v);
            emit_term(P, m, v, P->L->mul);
        } else {
            put(P, " + ");
            emit_term(P, m, v, P->L->mul);
        }
    }
    if (has_c) {
        fmpz_mul_si(v, c, s);
        if (fmpz_sgn(v) < 0 && !c_is_min(P, v)) {
            put(P, " - ");
            fmpz_neg(v, v);
        } else {
            put(P, " + ");
        }
        emit_int(P, v, P->L->mul);
    }
    close_if(P, par);
    fmpz_clear(v);
}

/* p >= 0, p == 0, p != 0 in a natural form. */
static void emit_rel(printer *P, const sg_expr *e, int minprec)
{
    const sg_expr *p = e->args[0];
    int prec = e->op == SG_OP_GE0 ? P->L->ge : P->L->eq;
    bool par = prec < minprec;
    const uint32_t *perm = get_perm(P, p);
    size_t n = poly_nterms(p), npos = 0;
    for (size_t i = 0; i < n; i++) {
        const sg_expr *m;
        const fmpz *k;
        poly_term(p, perm, i, &m, &k);
        npos += fmpz_sgn(k) > 0;
    }
    open_if(P, par);
    if (n == 0) { /* not canonical; printed for completeness */
        emit_int(P, poly_const(p), P->L->add);
        put(P, e->op == SG_OP_GE0 ? " >= " : e->op == SG_OP_EQ0 ? " == " : " != ");
        emit_int(P, &k_zero, P->L->add);
    } else if (e->op == SG_OP_GE0) {
        if (npos == 0) { /* k - Q >= 0: Q <= k */
            emit_poly(P, p, SEL_NEG, -1, false, P->L->add);
            put(P, " <= ");
            emit_poly(P, p, SEL_NONE, 1, true, P->L->add);
        } else {
            emit_poly(P, p, SEL_POS, 1, false, P->L->add);
            put(P, " >= ");
            emit_poly(P, p, SEL_NEG, -1, true, P->L->add);
        }
    } else {
        const sg_expr *m;
        const fmpz *k;
        poly_term(p, perm, 0, &m, &k);
        int s = fmpz_sgn(k) > 0 ? 1 : -1;
        emit_poly(P, p, s > 0 ? SEL_POS : SEL_NEG, s, false, P->L->add);
        put(P, e->op == SG_OP_EQ0 ? " == " : " != ");
        emit_poly(P, p, s > 0 ? SEL_NEG : SEL_POS, -s, true, P->L->add);
    }
    close_if(P, par);
}

/* f(a, b, ...) with arguments in stored order (ordered = false) or display order. */
static void emit_call(printer *P, const char *name, const sg_expr *e, bool ordered)
{
    const uint32_t *perm = ordered ? get_perm(P, e) : NULL;
    put(P, name);
    put(P, "(");
    for (size_t i = 0; i < e->nargs; i++) {
        if (i)
            put(P, ", ");
        emit(P, e->args[pidx(perm, i)], LOWEST);
    }
    put(P, ")");
}

/* a OP b, left-associative at the level of '*'. */
static void emit_muldiv(printer *P, const sg_expr *e, const char *op, int minprec)
{
    bool par = P->L->mul < minprec;
    open_if(P, par);
    emit(P, e->args[0], P->L->unary);
    put(P, op);
    emit(P, e->args[1], P->L->pow);
    close_if(P, par);
}

/* n-ary infix operators (& | ^ and or), arguments in display order. */
static void emit_infix(printer *P, const sg_expr *e, const char *op, int prec, int argmin, int minprec)
{
    const uint32_t *perm = get_perm(P, e);
    bool par = prec < minprec;
    open_if(P, par);
    for (size_t i = 0; i < e->nargs; i++) {
        if (i)
            put(P, op);
        emit(P, e->args[pidx(perm, i)], argmin);
    }
    close_if(P, par);
}

static bool is_leaf(const sg_expr *e)
{
    return e->op == SG_OP_SYM || e->op == SG_OP_INT;
}

/* Python: exact TruncDiv / TruncMod with Python's integers. Leaves are
 * repeated; other operands are bound once through a lambda. */
static void emit_py_trunc(printer *P, const sg_expr *e)
{
    const sg_expr *a = e->args[0], *b = e->args[1];
    bool div = e->op == SG_OP_TRUNCDIV;
    if (!is_leaf(a) || !is_leaf(b)) {
        put(P, div ? "(lambda a, b: a // b if (a < 0) == (b < 0) else -(-a // b))("
                   : "(lambda a, b: abs(a) % abs(b) * (-1 if a < 0 else 1))(");
        emit(P, a, LOWEST);
        put(P, ", ");
        emit(P, b, LOWEST);
        put(P, ")");
        return;
    }
    const levels *L = P->L;
    bool a_nat = a->op == SG_OP_INT && fmpz_sgn(&a->u.val) >= 0;
    bool b_pos = b->op == SG_OP_INT && fmpz_sgn(&b->u.val) > 0;
    if (div) {
        /* (a // b if (a < 0) == (b < 0) else -(-a // b)), the test simplified
         * where the sign of a constant operand is known */
        put(P, "(");
        emit(P, a, L->unary);
        put(P, " // ");
        emit(P, b, L->pow);
        if (b_pos) {
            put(P, " if ");
            emit(P, a, L->add);
            put(P, " >= 0 else -(");
        } else if (a_nat) {
            put(P, " if ");
            emit(P, b, L->add);
            put(P, " >= 0 else -(");
        } else {
            put(P, " if (");
            emit(P, a, L->add);
            put(P, " < 0) == (");
            emit(P, b, L->add);
            put(P, " < 0) else -(");
        }
        if (a->op == SG_OP_INT) {
            fmpz_t n;
            fmpz_init(n);
            fmpz_neg(n, &a->u.val);
            emit_int(P, n, L->unary);
            fmpz_clear(n);
        } else {
            put(P, "-");
            emit(P, a, L->pow);
        }
        put(P, " // ");
        emit(P, b, L->pow);
        put(P, "))");
    } else {
        /* abs(a) % abs(b) with the sign of a */
        put(P, "(");
        if (a_nat) {
            emit(P, a, L->unary);
        } else {
            put(P, "abs(");
            emit(P, a, LOWEST);
            put(P, ")");
        }
        put(P, " % ");
        if (b->op == SG_OP_INT) {
            fmpz_t n;
            fmpz_init(n);
            fmpz_abs(n, &b->u.val);
            emit_int(P, n, L->pow);
            fmpz_clear(n);
        } else {
            put(P, "abs(");
            emit(P, b, LOWEST);
            put(P, ")");
        }
        if (!a_nat) {
            put(P, " * (-1 if ");
            emit(P, a, L->add);
            put(P, " < 0 else 1)");
        }
        put(P, ")");
    }
}

/* C: Min/Max of n arguments as nested two-argument calls. */
static void emit_c_minmax(printer *P, const sg_expr *e)
{
    const char *fn = e->op == SG_OP_MIN ? "sg_min(" : "sg_max(";
    const uint32_t *perm = get_perm(P, e);
    for (size_t i = 0; i + 1 < e->nargs; i++) {
        put(P, fn);
        emit(P, e->args[pidx(perm, i)], LOWEST);
        put(P, ", ");
    }
    emit(P, e->args[pidx(perm, e->nargs - 1)], LOWEST);
    for (size_t i = 0; i + 1 < e->nargs; i++)
        put(P, ")");
}

static void emit_c_call(printer *P, const char *name, const sg_expr *e)
{
    emit_call(P, name, e, false);
}

static void emit(printer *P, const sg_expr *e, int minprec)
{
    const levels *L = P->L;
    bool py = P->fmt == SG_FMT_PYTHON, c = P->fmt == SG_FMT_C;
    switch ((sg_op)e->op) {
    case SG_OP_INT:
        emit_int(P, &e->u.val, minprec);
        return;
    case SG_OP_TRUE:
        put(P, c ? "1" : py ? "True" : "true");
        return;
    case SG_OP_FALSE:
        put(P, c ? "0" : py ? "False" : "false");
        return;
    case SG_OP_SYM:
        emit_sym(P, e);
        return;
    case SG_OP_ADD:
        emit_poly(P, e, SEL_ALL, 1, true, minprec);
        return;
    case SG_OP_MUL:
        emit_mono(P, e, minprec);
        return;
    case SG_OP_POW:
        if (c) {
            emit_c_call(P, "sg_pow", e);
        } else {
            bool par = L->pow < minprec;
            open_if(P, par);
            emit(P, e->args[0], L->atom);
            put(P, "**");
            emit(P, e->args[1], L->atom);
            close_if(P, par);
        }
        return;
    case SG_OP_FLOORDIV:
        if (c)
            emit_c_call(P, "sg_floordiv", e);
        else
            emit_muldiv(P, e, " // ", minprec);
        return;
    case SG_OP_MOD:
        if (c)
            emit_c_call(P, "sg_mod", e);
        else
            emit_muldiv(P, e, " % ", minprec);
        return;
    case SG_OP_CLEANDIV:
        if (c)
            emit_c_call(P, "sg_cleandiv", e);
        else if (py)
            emit_muldiv(P, e, " // ", minprec);
        else
            emit_call(P, "CleanDiv", e, false);
        return;
    case SG_OP_TRUNCDIV:
    case SG_OP_TRUNCMOD: {
        bool div = e->op == SG_OP_TRUNCDIV;
        if (c)
            emit_c_call(P, div ? "sg_truncdiv" : "sg_truncmod", e);
        else if (py)
            emit_py_trunc(P, e);
        else
            emit_call(P, div ? "TruncDiv" : "TruncMod", e, false);
        return;
    }
    case SG_OP_MIN:
    case SG_OP_MAX:
        if (c)
            emit_c_minmax(P, e);
        else if (py)
            emit_call(P, e->op == SG_OP_MIN ? "min" : "max", e, true);
        else
            emit_call(P, e->op == SG_OP_MIN ? "Min" : "Max", e, true);
        return;
    case SG_OP_ABS: /* Abs(-p) = Abs(p): printed with the first term positive */
        put(P, c ? "sg_abs(" : py ? "abs(" : "Abs(");
        emit_poly(P, e->args[0], SEL_ALL, disp_sign(P, e->args[0]), true, LOWEST);
        put(P, ")");
        return;
    case SG_OP_WHERE:
        if (c) {
            put(P, "(");
            emit(P, e->args[0], L->or_);
            put(P, " ? ");
            emit(P, e->args[1], L->or_);
            put(P, " : ");
            emit(P, e->args[2], L->or_);
            put(P, ")");
        } else if (py) {
            put(P, "(");
            emit(P, e->args[1], L->or_);
            put(P, " if ");
            emit(P, e->args[0], L->or_);
            put(P, " else ");
            emit(P, e->args[2], L->or_);
            put(P, ")");
        } else {
            emit_call(P, "Where", e, false);
        }
        return;
    case SG_OP_BAND:
        emit_infix(P, e, " & ", L->band, L->unary, minprec);
        return;
    case SG_OP_BOR:
        emit_infix(P, e, " | ", L->bor, L->unary, minprec);
        return;
    case SG_OP_BXOR:
        emit_infix(P, e, " ^ ", L->bxor, L->unary, minprec);
        return;
    case SG_OP_GE0:
    case SG_OP_EQ0:
    case SG_OP_NE0:
        emit_rel(P, e, minprec);
        return;
    case SG_OP_AND:
        emit_infix(P, e, c ? " && " : " and ", L->and_, L->and_ + 1, minprec);
        return;
    case SG_OP_OR:
        /* an `and` inside an `or` is parenthesized */
        emit_infix(P, e, c ? " || " : " or ", L->or_, L->and_ + 1, minprec);
        return;
    default:
        fail(P, SG_EINTERNAL, "unknown node kind");
        return;
    }
}

/* ---- the size of the text ------------------------------------------------ */

/* The text of an expression is its tree: a subterm shared by k parents is
 * printed k times, so a DAG of n nodes can print 2^n of them (nested
 * floor divisions whose canonical form repeats their operand). sg_print
 * refuses with SG_ELIMIT an expression whose tree has more than
 * SG_PRINT_TREE_FACTOR times as many nodes as it has distinct ones, plus
 * SG_PRINT_TREE_FREE (include/shapeguard/print.h). */

/* The nodes of e's tree, counted up to just past cap (recursion bounded by
 * SG_MAX_DEPTH). */
static size_t tree_upto(const sg_expr *e, size_t cap)
{
    size_t n = 1;
    for (uint32_t i = 0; i < e->nargs && n <= cap; i++)
        n += tree_upto(e->args[i], cap - n);
    return n;
}

/* The nodes of e's tree (saturating at SIZE_MAX / 2), each distinct node
 * entered in m with its count. false: out of memory. */
static bool tree_count(sg__idmap *m, const sg_expr *e, size_t *out)
{
    size_t *have = sg__idmap_find(m, e->id);
    if (have) {
        *out = *have;
        return true;
    }
    size_t n = 1;
    for (uint32_t i = 0; i < e->nargs; i++) {
        size_t k;
        if (!tree_count(m, e->args[i], &k))
            return false;
        n = k > SIZE_MAX / 2 - n ? SIZE_MAX / 2 : n + k;
    }
    *out = n;
    return sg__idmap_put(m, e->id, n);
}

/* SG_OK if e's text is within the bound, else SG_ELIMIT (or SG_ENOMEM). */
static sg_status check_size(sg_ctx *ctx, const sg_expr *e)
{
    if (tree_upto(e, SG_PRINT_TREE_FREE) <= SG_PRINT_TREE_FREE)
        return SG_OK;
    sg__idmap m = {0};
    size_t tree;
    if (!sg__idmap_init(ctx, &m, 1024) || !tree_count(&m, e, &tree)) {
        sg__idmap_free(&m);
        return sg__nomem(ctx);
    }
    size_t dag = m.used;
    sg__idmap_free(&m);
    if (tree <= SG_PRINT_TREE_FREE || (tree - SG_PRINT_TREE_FREE) / SG_PRINT_TREE_FACTOR <= dag)
        return SG_OK;
    return sg__err(ctx, SG_ELIMIT,
                   "sg_print: the text would repeat shared subterms: %zu%s subterms for %zu distinct ones (the "
                   "limit: %d times the distinct ones plus %d)",
                   tree, tree == SIZE_MAX / 2 ? " or more" : "", dag, SG_PRINT_TREE_FACTOR, SG_PRINT_TREE_FREE);
}

/* ---- public API ------------------------------------------------------------ */

sg_status sg_print_with(sg_ctx *ctx, char **out, const sg_expr *e, sg_format fmt, sg_symname_fn symname,
                        void *user)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out)
        return sg__err(ctx, SG_EINVAL, "sg_print: out is NULL");
    *out = NULL;
    if (!e)
        return sg__err(ctx, SG_EINVAL, "sg_print: the expression is NULL");
    if (fmt != SG_FMT_SG && fmt != SG_FMT_PYTHON && fmt != SG_FMT_C)
        return sg__err(ctx, SG_EINVAL, "sg_print: unknown format %d", (int)fmt);
    sg_status bound = check_size(ctx, e);
    if (bound)
        return bound;
    printer P;
    memset(&P, 0, sizeof P);
    P.ctx = ctx;
    P.buf.ctx = ctx;
    P.fmt = fmt;
    P.L = fmt == SG_FMT_C ? &c_levels : &py_levels;
    P.symname = symname;
    P.user = user;
    P.err = SG_OK;
    emit(&P, e, LOWEST);
    memo_free(&P);
    if (P.oom || P.buf.oom) {
        sg__buf_free(&P.buf);
        return sg__nomem(ctx);
    }
    if (P.err != SG_OK) {
        sg__buf_free(&P.buf);
        return P.err;
    }
    char *s = sg__buf_take(&P.buf);
    if (!s)
        return sg__nomem(ctx);
    *out = s;
    return SG_OK;
}

sg_status sg_print(sg_ctx *ctx, char **out, const sg_expr *e, sg_format fmt)
{
    return sg_print_with(ctx, out, e, fmt, NULL, NULL);
}

sg_status sg_format_from_name(sg_format *out, const char *name)
{
    if (!out || !name)
        return SG_EINVAL;
    if (!strcmp(name, "sg"))
        *out = SG_FMT_SG;
    else if (!strcmp(name, "python"))
        *out = SG_FMT_PYTHON;
    else if (!strcmp(name, "c"))
        *out = SG_FMT_C;
    else
        return SG_EINVAL;
    return SG_OK;
}

static const char c_prelude[] =
    "#include <stdint.h>\n"
    "/* shapeguard helpers: Python's semantics on int64_t. Division by zero gives 0\n"
    " * (Python raises); results that overflow int64_t are out of scope. */\n"
    "static inline int64_t sg_floordiv(int64_t a, int64_t b)\n"
    "{\n"
    "    if (b == 0)\n"
    "        return 0;\n"
    "    if (b == -1)\n"
    "        return (int64_t)(0 - (uint64_t)a);\n"
    "    int64_t q = a / b, r = a % b;\n"
    "    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;\n"
    "}\n"
    "static inline int64_t sg_mod(int64_t a, int64_t b)\n"
    "{\n"
    "    if (b == 0 || b == -1)\n"
    "        return 0;\n"
    "    int64_t r = a % b;\n"
    "    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n"
    "}\n"
    "static inline int64_t sg_ceildiv(int64_t a, int64_t b)\n"
    "{\n"
    "    if (b == 0)\n"
    "        return 0;\n"
    "    if (b == -1)\n"
    "        return (int64_t)(0 - (uint64_t)a);\n"
    "    int64_t q = a / b, r = a % b;\n"
    "    return (r != 0 && ((r < 0) == (b < 0))) ? q + 1 : q;\n"
    "}\n"
    "static inline int64_t sg_cleandiv(int64_t a, int64_t b)\n"
    "{\n"
    "    return sg_floordiv(a, b);\n"
    "}\n"
    "static inline int64_t sg_truncdiv(int64_t a, int64_t b)\n"
    "{\n"
    "    if (b == 0)\n"
    "        return 0;\n"
    "    if (b == -1)\n"
    "        return (int64_t)(0 - (uint64_t)a);\n"
    "    return a / b;\n"
    "}\n"
    "static inline int64_t sg_truncmod(int64_t a, int64_t b)\n"
    "{\n"
    "    if (b == 0 || b == -1)\n"
    "        return 0;\n"
    "    return a % b;\n"
    "}\n"
    "static inline int64_t sg_min(int64_t a, int64_t b)\n"
    "{\n"
    "    return a < b ? a : b;\n"
    "}\n"
    "static inline int64_t sg_max(int64_t a, int64_t b)\n"
    "{\n"
    "    return a > b ? a : b;\n"
    "}\n"
    "static inline int64_t sg_abs(int64_t a)\n"
    "{\n"
    "    return a < 0 ? (int64_t)(0 - (uint64_t)a) : a;\n"
    "}\n"
    "/* b ** e for e >= 0 (0 for e < 0, where Python's integers have no answer). */\n"
    "static inline int64_t sg_pow(int64_t b, int64_t e)\n"
    "{\n"
    "    uint64_t r = 1, x = (uint64_t)b;\n"
    "    if (e < 0)\n"
    "        return 0;\n"
    "    while (e > 0) {\n"
    "        if (e & 1)\n"
    "            r *= x;\n"
    "        x *= x;\n"
    "        e >>= 1;\n"
    "    }\n"
    "    return (int64_t)r;\n"
    "}\n";

const char *sg_print_c_prelude(void)
{
    return c_prelude;
}
