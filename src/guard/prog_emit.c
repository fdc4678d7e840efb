/* Emitting a guard program as C source and as a Python lambda (guard.h).
 *
 * The C is what a careful person would write by hand: one local per slot,
 * named after its source (PyTorch's mangling: runs of characters other than
 * [0-9A-Za-z_] become '_'), one local per shared sub-expression, every
 * operation that can overflow or raise checked (GCC/Clang's
 * __builtin_*_overflow, small static helpers for Python's division), and
 * each relation written with its positive terms on the left and the others
 * on the right, as the python printer does (x == y, not x - y == 0), so the
 * common guards need no arithmetic at all. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "guard/guard_private.h"
#include "shapeguard/print.h"

static const char c_prelude[] =
    "#include <stdint.h>\n"
    "#ifndef SGG_PRELUDE\n"
    "#define SGG_PRELUDE\n"
    "/* shapeguard guard helpers: Python's semantics on int64_t; each returns\n"
    " * nonzero when int64 cannot give the exact answer (overflow, a zero\n"
    " * divisor, a negative exponent, an inexact CleanDiv). */\n"
    "#if defined(__GNUC__)\n"
    "#define SGG_UNUSED __attribute__((unused))\n"
    "#else\n"
    "#define SGG_UNUSED\n"
    "#endif\n"
    "static inline SGG_UNUSED int sgg_floordiv(int64_t *r, int64_t a, int64_t b)\n"
    "{\n"
    "    if (b == 0 || (a == INT64_MIN && b == -1))\n"
    "        return 1;\n"
    "    int64_t q = a / b;\n"
    "    if (a % b != 0 && ((a < 0) != (b < 0)))\n"
    "        q--;\n"
    "    *r = q;\n"
    "    return 0;\n"
    "}\n"
    "static inline SGG_UNUSED int sgg_mod(int64_t *r, int64_t a, int64_t b)\n"
    "{\n"
    "    if (b == 0)\n"
    "        return 1;\n"
    "    int64_t m = b == -1 ? 0 : a % b;\n"
    "    if (m != 0 && ((m < 0) != (b < 0)))\n"
    "        m += b;\n"
    "    *r = m;\n"
    "    return 0;\n"
    "}\n"
    "static inline SGG_UNUSED int sgg_cleandiv(int64_t *r, int64_t a, int64_t b)\n"
    "{\n"
    "    if (b == 0 || (a == INT64_MIN && b == -1) || a % b != 0)\n"
    "        return 1;\n"
    "    *r = a / b;\n"
    "    return 0;\n"
    "}\n"
    "static inline SGG_UNUSED int sgg_truncdiv(int64_t *r, int64_t a, int64_t b)\n"
    "{\n"
    "    if (b == 0 || (a == INT64_MIN && b == -1))\n"
    "        return 1;\n"
    "    *r = a / b;\n"
    "    return 0;\n"
    "}\n"
    "static inline SGG_UNUSED int sgg_truncmod(int64_t *r, int64_t a, int64_t b)\n"
    "{\n"
    "    if (b == 0)\n"
    "        return 1;\n"
    "    *r = b == -1 ? 0 : a % b;\n"
    "    return 0;\n"
    "}\n"
    "static inline SGG_UNUSED int sgg_pow(int64_t *r, int64_t b, int64_t e)\n"
    "{\n"
    "    int64_t acc = 1;\n"
    "    if (e < 0)\n"
    "        return 1;\n"
    "    if (b == 0 || b == 1) {\n"
    "        *r = e == 0 ? 1 : b;\n"
    "        return 0;\n"
    "    }\n"
    "    if (b == -1) {\n"
    "        *r = (e & 1) ? -1 : 1;\n"
    "        return 0;\n"
    "    }\n"
    "    if (e >= 64)\n"
    "        return 1;\n"
    "    while (e) {\n"
    "        if ((e & 1) && __builtin_mul_overflow(acc, b, &acc))\n"
    "            return 1;\n"
    "        e >>= 1;\n"
    "        if (e && __builtin_mul_overflow(b, b, &b))\n"
    "            return 1;\n"
    "    }\n"
    "    *r = acc;\n"
    "    return 0;\n"
    "}\n"
    "#endif\n";

typedef struct cem {
    sg_ctx *ctx;
    const sg_guard_prog *p;
    sg__buf body;
    sg__idmap memo; /* node id -> temporary number */
    char **names;   /* per slot: its local's name, NULL while unused */
    uint32_t ntemps;
    bool oom;
} cem;

/* ---- names ---- */

static bool c_keyword(const char *s)
{
    static const char *const kw[] = {"auto", "break", "case", "char", "const", "continue", "default", "do",
                                     "double", "else", "enum", "extern", "float", "for", "goto", "if", "inline",
                                     "int", "long", "register", "restrict", "return", "short", "signed",
                                     "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned",
                                     "void", "volatile", "while", "v", NULL};
    for (size_t i = 0; kw[i]; i++)
        if (!strcmp(s, kw[i]))
            return true;
    return !strncmp(s, "sgt", 3) || !strncmp(s, "sgg_", 4) || !strncmp(s, "SGG_", 4) || !strncmp(s, "__", 2);
}

static bool taken(const cem *E, const char *s)
{
    for (size_t i = 0; i < E->p->nslots; i++)
        if (E->names[i] && !strcmp(E->names[i], s))
            return true;
    return false;
}

static const char *slot_name(cem *E, size_t i)
{
    sg_ctx *ctx = E->ctx;
    if (E->names[i])
        return E->names[i];
    const char *src = E->p->slots[i]->u.name;
    size_t n = strlen(src);
    char *s = sg__malloc(ctx, n + 32);
    if (!s) {
        E->oom = true;
        return "v[0]";
    }
    size_t k = 0;
    for (size_t j = 0; j < n; j++) {
        unsigned char ch = (unsigned char)src[j];
        if (isalnum(ch) || ch == '_')
            s[k++] = (char)ch;
        else if (k == 0 || s[k - 1] != '_')
            s[k++] = '_';
    }
    s[k] = '\0';
    if (k == 0 || isdigit((unsigned char)s[0]) || c_keyword(s)) {
        memmove(s + 2, s, k + 1);
        s[0] = 's';
        s[1] = '_';
        k += 2;
    }
    for (unsigned t = 0; taken(E, s); t++)
        snprintf(s + k, 32, "_%zu%s", i, t ? "_" : "");
    E->names[i] = s;
    return s;
}

/* ---- references to computed values ---- */

static void put_int(sg__buf *b, int64_t v)
{
    if (v == INT64_MIN)
        sg__buf_puts(b, "(-9223372036854775807LL - 1)");
    else
        sg__buf_printf(b, "%lldLL", (long long)v);
}

static void ref(cem *E, const sg_expr *e)
{
    switch ((sg_op)e->op) {
    case SG_OP_SYM:
        sg__buf_puts(&E->body, slot_name(E, *sg__idmap_find(&E->p->slotmap, e->id)));
        return;
    case SG_OP_INT:
        put_int(&E->body, fmpz_get_si(&e->u.val));
        return;
    case SG_OP_TRUE:
    case SG_OP_FALSE:
        sg__buf_puts(&E->body, e->op == SG_OP_TRUE ? "1" : "0");
        return;
    default:
        sg__buf_printf(&E->body, "sgt%zu", *sg__idmap_find(&E->memo, e->id));
    }
}

static void val(cem *E, const sg_expr *e);

/* "if (COND) return -1;" around a checked operation. */
static void chk_begin(cem *E)
{
    sg__buf_puts(&E->body, "    if (");
}

static void chk_end(cem *E)
{
    sg__buf_puts(&E->body, ")\n        return -1;\n");
}

/* t = t OP k*m with overflow checks (OP '+' or the first term: '='). */
static void acc_term(cem *E, uint32_t t, const sg_expr *m, int64_t k, bool first)
{
    sg__buf *b = &E->body;
    if (first && k == 1) {
        sg__buf_printf(b, "    sgt%u = ", t);
        ref(E, m);
        sg__buf_puts(b, ";\n");
        return;
    }
    chk_begin(E);
    if (first) {
        sg__buf_puts(b, "__builtin_mul_overflow(");
        ref(E, m);
        sg__buf_puts(b, ", ");
        put_int(b, k);
        sg__buf_printf(b, ", &sgt%u)", t);
    } else if (k == 1 || k == -1) {
        sg__buf_printf(b, "__builtin_%s_overflow(sgt%u, ", k == 1 ? "add" : "sub", t);
        ref(E, m);
        sg__buf_printf(b, ", &sgt%u)", t);
    } else {
        sg__buf_puts(b, "__builtin_mul_overflow(");
        ref(E, m);
        sg__buf_puts(b, ", ");
        put_int(b, k);
        sg__buf_printf(b, ", &sgtw) || __builtin_add_overflow(sgt%u, sgtw, &sgt%u)", t, t);
    }
    chk_end(E);
}

static uint32_t new_temp(cem *E, const sg_expr *e)
{
    uint32_t t = E->ntemps++;
    if (e && !sg__idmap_put(&E->memo, e->id, t))
        E->oom = true;
    sg__buf_printf(&E->body, "    int64_t sgt%u;\n", t);
    return t;
}

/* A sum of terms with sign sel of L (negated for sel < 0) plus c0 >= 0: the
 * text of a reference to it, computing it first when it needs arithmetic. */
static void side_val(cem *E, const gp_lin *L, int sel, int64_t c0, char *out, size_t outn, uint32_t *tmp)
{
    size_t cnt = 0, one = 0;
    for (size_t i = 0; i < L->n; i++)
        if (fmpz_sgn(sg__gp_lin_k(L, i)) == sel) {
            cnt++;
            one = i;
        }
    *tmp = UINT32_MAX;
    if (cnt == 0) {
        snprintf(out, outn, "%lldLL", (long long)c0);
        return;
    }
    if (cnt == 1 && c0 == 0 && fmpz_get_si(sg__gp_lin_k(L, one)) * sel == 1) {
        val(E, L->m[one]);
        out[0] = '\0';
        *tmp = UINT32_MAX - 1; /* a plain reference to term one */
        return;
    }
    for (size_t i = 0; i < L->n; i++)
        if (fmpz_sgn(sg__gp_lin_k(L, i)) == sel)
            val(E, L->m[i]);
    uint32_t t = new_temp(E, NULL);
    bool first = true;
    for (size_t i = 0; i < L->n; i++)
        if (fmpz_sgn(sg__gp_lin_k(L, i)) == sel) {
            acc_term(E, t, L->m[i], fmpz_get_si(sg__gp_lin_k(L, i)) * sel, first);
            first = false;
        }
    if (c0) {
        chk_begin(E);
        sg__buf_printf(&E->body, "__builtin_add_overflow(sgt%u, %lldLL, &sgt%u)", t, (long long)c0, t);
        chk_end(E);
    }
    *tmp = t;
}

static void put_side(cem *E, const gp_lin *L, int sel, const char *txt, uint32_t tmp)
{
    if (tmp == UINT32_MAX) {
        sg__buf_puts(&E->body, txt);
    } else if (tmp == UINT32_MAX - 1) {
        for (size_t i = 0; i < L->n; i++)
            if (fmpz_sgn(sg__gp_lin_k(L, i)) == sel)
                ref(E, L->m[i]);
    } else {
        sg__buf_printf(&E->body, "sgt%u", tmp);
    }
}

/* The condition of relation t as C text "L OP R" (after computing the sides). */
static void rel_cond(cem *E, const sg_expr *t, sg__buf *cond)
{
    gp_lin L;
    sg__gp_lin(&L, t->args[0]);
    const char *op = t->op == SG_OP_GE0 ? ">=" : t->op == SG_OP_EQ0 ? "==" : "!=";
    bool split = !(L.c && fmpz_equal_si(L.c, INT64_MIN));
    for (size_t i = 0; i < L.n; i++)
        split = split && !fmpz_equal_si(sg__gp_lin_k(&L, i), INT64_MIN);
    sg__buf saved = E->body;
    if (!split) {
        val(E, t->args[0]);
        saved = E->body;
        E->body = *cond;
        ref(E, t->args[0]);
        sg__buf_printf(&E->body, " %s 0", op);
        *cond = E->body;
        E->body = saved;
        return;
    }
    int64_t c = L.c ? fmpz_get_si(L.c) : 0;
    char lt[32], rt[32];
    uint32_t ltmp, rtmp;
    side_val(E, &L, 1, c > 0 ? c : 0, lt, sizeof lt, &ltmp);
    side_val(E, &L, -1, c < 0 ? -c : 0, rt, sizeof rt, &rtmp);
    saved = E->body;
    E->body = *cond;
    put_side(E, &L, 1, lt, ltmp);
    sg__buf_printf(&E->body, " %s ", op);
    put_side(E, &L, -1, rt, rtmp);
    *cond = E->body;
    E->body = saved;
}

/* ---- nodes ---- */

static const char *helper(sg_op op)
{
    switch (op) {
    case SG_OP_POW: return "sgg_pow";
    case SG_OP_FLOORDIV: return "sgg_floordiv";
    case SG_OP_MOD: return "sgg_mod";
    case SG_OP_CLEANDIV: return "sgg_cleandiv";
    case SG_OP_TRUNCDIV: return "sgg_truncdiv";
    default: return "sgg_truncmod";
    }
}

static void node_stmt(cem *E, const sg_expr *e)
{
    sg_ctx *ctx = E->ctx;
    sg__buf *b = &E->body;
    switch ((sg_op)e->op) {
    case SG_OP_ADD: {
        for (size_t i = 0; i < e->nargs; i++)
            val(E, e->args[i]);
        uint32_t t = new_temp(E, e);
        for (size_t i = 0; i < e->nargs; i++)
            acc_term(E, t, e->args[i], fmpz_get_si(sg__nums(e) + i), i == 0);
        chk_begin(E);
        sg__buf_printf(b, "__builtin_add_overflow(sgt%u, ", t);
        put_int(b, fmpz_get_si(&e->u.val));
        sg__buf_printf(b, ", &sgt%u)", t);
        chk_end(E);
        return;
    }
    case SG_OP_MUL: {
        for (size_t i = 0; i < e->nargs; i++)
            val(E, e->args[i]);
        uint32_t t = new_temp(E, e);
        sg__buf_printf(b, "    sgt%u = 1;\n", t);
        for (size_t i = 0; i < e->nargs; i++) {
            int64_t x = fmpz_get_si(sg__nums(e) + i);
            if (x <= 4) {
                for (int64_t j = 0; j < x; j++) {
                    chk_begin(E);
                    sg__buf_printf(b, "__builtin_mul_overflow(sgt%u, ", t);
                    ref(E, e->args[i]);
                    sg__buf_printf(b, ", &sgt%u)", t);
                    chk_end(E);
                }
            } else {
                chk_begin(E);
                sg__buf_puts(b, "sgg_pow(&sgtw, ");
                ref(E, e->args[i]);
                sg__buf_printf(b, ", %lldLL) || __builtin_mul_overflow(sgt%u, sgtw, &sgt%u)", (long long)x, t, t);
                chk_end(E);
            }
        }
        return;
    }
    case SG_OP_POW:
    case SG_OP_FLOORDIV:
    case SG_OP_MOD:
    case SG_OP_CLEANDIV:
    case SG_OP_TRUNCDIV:
    case SG_OP_TRUNCMOD: {
        val(E, e->args[0]);
        val(E, e->args[1]);
        uint32_t t = new_temp(E, e);
        chk_begin(E);
        sg__buf_printf(b, "%s(&sgt%u, ", helper((sg_op)e->op), t);
        ref(E, e->args[0]);
        sg__buf_puts(b, ", ");
        ref(E, e->args[1]);
        sg__buf_puts(b, ")");
        chk_end(E);
        return;
    }
    case SG_OP_ABS: {
        val(E, e->args[0]);
        uint32_t t = new_temp(E, e);
        chk_begin(E);
        ref(E, e->args[0]);
        sg__buf_puts(b, " == INT64_MIN");
        chk_end(E);
        sg__buf_printf(b, "    sgt%u = ", t);
        ref(E, e->args[0]);
        sg__buf_puts(b, " < 0 ? -");
        ref(E, e->args[0]);
        sg__buf_puts(b, " : ");
        ref(E, e->args[0]);
        sg__buf_puts(b, ";\n");
        return;
    }
    case SG_OP_WHERE: {
        for (size_t i = 0; i < 3; i++)
            val(E, e->args[i]);
        uint32_t t = new_temp(E, e);
        sg__buf_printf(b, "    sgt%u = ", t);
        ref(E, e->args[0]);
        sg__buf_puts(b, " ? ");
        ref(E, e->args[1]);
        sg__buf_puts(b, " : ");
        ref(E, e->args[2]);
        sg__buf_puts(b, ";\n");
        return;
    }
    case SG_OP_MIN:
    case SG_OP_MAX: {
        for (size_t i = 0; i < e->nargs; i++)
            val(E, e->args[i]);
        uint32_t t = new_temp(E, e);
        sg__buf_printf(b, "    sgt%u = ", t);
        ref(E, e->args[0]);
        sg__buf_puts(b, ";\n");
        for (size_t i = 1; i < e->nargs; i++) {
            sg__buf_puts(b, "    if (");
            ref(E, e->args[i]);
            sg__buf_printf(b, " %s sgt%u)\n        sgt%u = ", e->op == SG_OP_MIN ? "<" : ">", t, t);
            ref(E, e->args[i]);
            sg__buf_puts(b, ";\n");
        }
        return;
    }
    case SG_OP_BAND:
    case SG_OP_BOR:
    case SG_OP_BXOR:
    case SG_OP_AND:
    case SG_OP_OR: {
        static const char *ops[] = {" & ", " | ", " ^ ", " && ", " || "};
        const char *o = ops[e->op == SG_OP_BAND ? 0 : e->op == SG_OP_BOR ? 1 : e->op == SG_OP_BXOR ? 2
                            : e->op == SG_OP_AND ? 3 : 4];
        for (size_t i = 0; i < e->nargs; i++)
            val(E, e->args[i]);
        uint32_t t = new_temp(E, e);
        sg__buf_printf(b, "    sgt%u = ", t);
        for (size_t i = 0; i < e->nargs; i++) {
            if (i)
                sg__buf_puts(b, o);
            ref(E, e->args[i]);
        }
        sg__buf_puts(b, ";\n");
        return;
    }
    case SG_OP_GE0:
    case SG_OP_EQ0:
    case SG_OP_NE0: {
        sg__buf cond = {.ctx = ctx};
        rel_cond(E, e, &cond);
        char *c = sg__buf_take(&cond);
        if (!c) {
            E->oom = true;
            return;
        }
        uint32_t t = new_temp(E, e);
        sg__buf_printf(b, "    sgt%u = %s;\n", t, c);
        sg_free(c);
        return;
    }
    default:
        return;
    }
}

static void val(cem *E, const sg_expr *e)
{
    if (e->nargs == 0 || sg__idmap_find(&E->memo, e->id))
        return;
    node_stmt(E, e);
}

/* A comment with the guard's python text (no comment end, no line breaks). */
static void comment(cem *E, size_t g)
{
    char *text = NULL;
    if (sg_print(E->ctx, &text, E->p->guards[g], SG_FMT_PYTHON)) {
        E->oom = E->ctx->err == SG_ENOMEM;
        return;
    }
    for (char *q = text; *q; q++) {
        if ((unsigned char)*q < ' ')
            *q = ' ';
        if (q[0] == '*' && q[1] == '/')
            q[1] = ' ';
    }
    sg__buf_printf(&E->body, "    /* guard %zu: %s */\n", g, text);
    sg_free(text);
}

static void guard_stmt(cem *E, size_t g, gp_bigscan *big, bool *stop)
{
    sg_ctx *ctx = E->ctx;
    const sg_expr *t = E->p->guards[g];
    sg__buf *b = &E->body;
    comment(E, g);
    if (t->op == SG_OP_TRUE)
        return;
    if (t->op == SG_OP_FALSE) {
        sg__buf_puts(b, "    return 0;\n");
        *stop = true;
        return;
    }
    int r = sg__gp_has_big(big, t);
    if (r) {
        E->oom = r < 0;
        sg__buf_puts(b, "    return -1; /* a number beyond int64: check exactly */\n");
        *stop = true;
        return;
    }
    sg__buf cond = {.ctx = ctx};
    if (t->op == SG_OP_GE0 || t->op == SG_OP_EQ0 || t->op == SG_OP_NE0) {
        rel_cond(E, t, &cond);
    } else {
        val(E, t);
        sg__buf saved = E->body;
        E->body = cond;
        ref(E, t);
        cond = E->body;
        E->body = saved;
    }
    char *c = sg__buf_take(&cond);
    if (!c) {
        E->oom = true;
        return;
    }
    sg__buf_printf(b, "    if (!(%s))\n        return 0;\n", c);
    sg_free(c);
}

static bool c_ident(const char *s)
{
    if (!s[0] || isdigit((unsigned char)s[0]))
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return false;
    return true;
}

sg_status sg_guard_prog_emit_c(sg_ctx *ctx, char **out, const sg_guard_prog *p, const char *fname)
{
    sg_status s = sg__gp_check_ctx(ctx, p, "sg_guard_prog_emit_c");
    if (s)
        return s;
    if (!out)
        return sg__err(ctx, SG_EINVAL, "sg_guard_prog_emit_c: out is NULL");
    *out = NULL;
    if (!fname)
        fname = "sg_guard";
    if (!c_ident(fname))
        return sg__err(ctx, SG_EINVAL, "sg_guard_prog_emit_c: '%s' is not a C identifier", fname);
    cem E = {.ctx = ctx, .body = {.ctx = ctx}, .p = p};
    gp_bigscan big = {{0}};
    E.names = sg__calloc(ctx, p->nslots ? p->nslots : 1, sizeof *E.names);
    E.oom = !E.names || !sg__idmap_init(ctx, &E.memo, 64) || !sg__idmap_init(ctx, &big.seen, 64);
    bool stop = false;
    for (size_t g = 0; g < p->nguards && !stop && !E.oom; g++)
        guard_stmt(&E, g, &big, &stop);
    sg__buf out_b = {.ctx = ctx};
    sg__buf_puts(&out_b, c_prelude);
    sg__buf_printf(&out_b, "\n/* %zu guards over %zu slots; 1: all hold, 0: one is false, -1: check exactly */\n",
                   p->nguards, p->nslots);
    sg__buf_printf(&out_b, "int %s(const int64_t *v)\n{\n", fname);
    for (size_t i = 0; i < p->nslots && E.names; i++)
        if (E.names[i]) {
            sg__buf_printf(&out_b, "    const int64_t %s = v[%zu];", E.names[i], i);
            const char *src = p->slots[i]->u.name;
            bool plain = !strstr(src, "*/");
            for (const char *q = src; *q && plain; q++)
                plain = (unsigned char)*q >= ' ';
            sg__buf_printf(&out_b, plain ? " /* %s */\n" : "\n", src);
        }
    sg__buf_puts(&out_b, "    int64_t sgtw;\n    (void)sgtw;\n    (void)v;\n");
    if (E.body.p)
        sg__buf_put(&out_b, E.body.p, E.body.n);
    if (!stop)
        sg__buf_puts(&out_b, "    return 1;\n");
    sg__buf_puts(&out_b, "}\n");
    if (E.body.oom)
        E.oom = true;
    sg__buf_free(&E.body);
    sg__idmap_free(&E.memo);
    sg__idmap_free(&big.seen);
    for (size_t i = 0; i < p->nslots && E.names; i++)
        sg_free(E.names[i]);
    sg_free(E.names);
    char *r = sg__buf_take(&out_b);
    if (E.oom || !r) {
        sg_free(r);
        return ctx->err == SG_ENOMEM || !r || E.oom ? sg__nomem(ctx) : ctx->err;
    }
    *out = r;
    return SG_OK;
}

/* ---- Python ---- */

typedef struct pyn {
    const sg_guard_prog *p;
    bool index;               /* slot i as v[i] */
    const char *const *names; /* else as names[i], or its symbol's name when NULL */
    char buf[32];
} pyn;

static const char *py_slot(void *user, const sg_expr *sym)
{
    pyn *N = user;
    size_t *i = sg__idmap_find(&N->p->slotmap, sym->id);
    if (!i)
        return NULL;
    if (!N->index)
        return N->names ? N->names[*i] : NULL;
    snprintf(N->buf, sizeof N->buf, "v[%zu]", *i);
    return N->buf;
}

/* "lambda PARAMS: (G0) and (G1) ..." with the slots as N says. */
static sg_status emit_lambda(sg_ctx *ctx, char **out, const sg_guard_prog *p, const char *params, pyn *N)
{
    sg__buf b = {.ctx = ctx};
    sg__buf_printf(&b, "lambda %s: ", params);
    if (p->nguards == 0)
        sg__buf_puts(&b, "True");
    for (size_t g = 0; g < p->nguards; g++) {
        char *t = NULL;
        sg_status s = sg_print_with(ctx, &t, p->guards[g], SG_FMT_PYTHON, py_slot, N);
        if (s) {
            sg__buf_free(&b);
            return s;
        }
        sg__buf_printf(&b, "%s(%s)", g ? " and " : "", t);
        sg_free(t);
    }
    char *r = sg__buf_take(&b);
    if (!r)
        return sg__nomem(ctx);
    *out = r;
    return SG_OK;
}

sg_status sg_guard_prog_emit_python(sg_ctx *ctx, char **out, const sg_guard_prog *p)
{
    sg_status s = sg__gp_check_ctx(ctx, p, "sg_guard_prog_emit_python");
    if (s)
        return s;
    if (!out)
        return sg__err(ctx, SG_EINVAL, "sg_guard_prog_emit_python: out is NULL");
    *out = NULL;
    pyn N = {.p = p, .index = true};
    return emit_lambda(ctx, out, p, "v", &N);
}

sg_status sg_guard_prog_emit_python_with(sg_ctx *ctx, char **out, const sg_guard_prog *p, const char *params,
                                         const char *const *names)
{
    const char *fn = "sg_guard_prog_emit_python_with";
    sg_status s = sg__gp_check_ctx(ctx, p, fn);
    if (s)
        return s;
    if (!out)
        return sg__err(ctx, SG_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    for (size_t i = 0; names && i < p->nslots; i++)
        if (!names[i] || !names[i][0])
            return sg__err(ctx, SG_EINVAL, "%s: the name of slot %zu is %s", fn, i, names[i] ? "empty" : "NULL");
    pyn N = {.p = p, .names = names};
    return emit_lambda(ctx, out, p, params ? params : "L", &N);
}
