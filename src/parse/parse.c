/* shapeguard: the parser of the expression syntax (doc/battery.md,
 * "Expression syntax").
 *
 * A hand-written lexer feeds a precedence-climbing parser that builds
 * canonical expressions directly with the sg_expr_* constructors. Recursion
 * is bounded: every construct that nests (parentheses, prefix operators,
 * function calls, the right operand of **) counts against
 * SG_PARSE_MAX_NESTING, and between two such constructs the parser recurses
 * at most once per precedence level.
 *
 * Every error message starts with "line L, column C: " (1-based, columns
 * count bytes). Errors raised by constructors (type errors, limits) get the
 * same prefix, at the operator or function that failed. */
#include <shapeguard/parse.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_private.h"

#if defined(__GNUC__)
#define SG_NOINLINE __attribute__((noinline))
#else
#define SG_NOINLINE
#endif

/* ---- tokens ------------------------------------------------------------ */

typedef enum tok_kind {
    T_EOF,
    T_INT,
    T_IDENT,
    T_SOURCE,
    T_TRUE,
    T_FALSE,
    T_AND,
    T_OR,
    T_NOT,
    T_LPAREN,
    T_RPAREN,
    T_COMMA,
    T_PLUS,
    T_MINUS,
    T_STAR,
    T_POW,
    T_FLOORDIV,
    T_MOD,
    T_TILDE,
    T_SHL,
    T_SHR,
    T_AMP,
    T_PIPE,
    T_CARET,
    T_EQ,
    T_NE,
    T_LT,
    T_LE,
    T_GT,
    T_GE
} tok_kind;

typedef struct token {
    tok_kind kind;
    size_t off; /* byte offset of the first character */
    size_t len; /* bytes */
} token;

/* Spelling of the fixed tokens, for messages. */
static const char *tok_spelling(tok_kind k)
{
    switch (k) {
    case T_TRUE: return "true";
    case T_FALSE: return "false";
    case T_AND: return "and";
    case T_OR: return "or";
    case T_NOT: return "not";
    case T_LPAREN: return "(";
    case T_RPAREN: return ")";
    case T_COMMA: return ",";
    case T_PLUS: return "+";
    case T_MINUS: return "-";
    case T_STAR: return "*";
    case T_POW: return "**";
    case T_FLOORDIV: return "//";
    case T_MOD: return "%";
    case T_TILDE: return "~";
    case T_SHL: return "<<";
    case T_SHR: return ">>";
    case T_AMP: return "&";
    case T_PIPE: return "|";
    case T_CARET: return "^";
    case T_EQ: return "==";
    case T_NE: return "!=";
    case T_LT: return "<";
    case T_LE: return "<=";
    case T_GT: return ">";
    case T_GE: return ">=";
    default: return "?";
    }
}

/* ---- functions ----------------------------------------------------------- */

typedef enum fn_id {
    F_FLOORDIV,
    F_MOD,
    F_CEILDIV,
    F_CLEANDIV,
    F_TRUNCDIV,
    F_TRUNCMOD,
    F_MODIDX,
    F_MIN,
    F_MAX,
    F_ABS,
    F_WHERE,
    F_POW,
    F_EQ,
    F_NE,
    F_LT,
    F_LE,
    F_GT,
    F_GE,
    F_AND,
    F_OR,
    F_NOT
} fn_id;

typedef struct fn_info {
    const char *name;
    fn_id id;
    unsigned min_args;
    unsigned max_args; /* 0: no upper bound */
} fn_info;

static const fn_info fn_table[] = {
    {"FloorDiv", F_FLOORDIV, 2, 2},
    {"Mod", F_MOD, 2, 2},
    {"CeilDiv", F_CEILDIV, 2, 2},
    {"CleanDiv", F_CLEANDIV, 2, 2},
    {"TruncDiv", F_TRUNCDIV, 2, 2},
    {"TruncMod", F_TRUNCMOD, 2, 2},
    {"ModularIndexing", F_MODIDX, 3, 3},
    {"Min", F_MIN, 1, 0},
    {"Max", F_MAX, 1, 0},
    {"Abs", F_ABS, 1, 1},
    {"Where", F_WHERE, 3, 3},
    {"Pow", F_POW, 2, 2},
    {"Eq", F_EQ, 2, 2},
    {"Ne", F_NE, 2, 2},
    {"Lt", F_LT, 2, 2},
    {"Le", F_LE, 2, 2},
    {"Gt", F_GT, 2, 2},
    {"Ge", F_GE, 2, 2},
    {"And", F_AND, 0, 0},
    {"Or", F_OR, 0, 0},
    {"Not", F_NOT, 1, 1},
};

/* Is the n bytes at s the word? One pass, stopping at the first difference. */
static int text_is(const char *s, size_t n, const char *word)
{
    for (size_t i = 0; i < n; i++)
        if (word[i] != s[i] || !word[i])
            return 0;
    return word[n] == '\0';
}

/* The function named by the identifier of n bytes at s, or NULL. Every
 * name begins with an upper-case letter: any other identifier (a symbol,
 * most of them) is refused at its first byte. */
static const fn_info *find_function(const char *s, size_t n)
{
    if (s[0] < 'A' || s[0] > 'Z')
        return NULL;
    for (size_t i = 0; i < sizeof fn_table / sizeof fn_table[0]; i++)
        if (fn_table[i].name[0] == s[0] && text_is(s, n, fn_table[i].name))
            return &fn_table[i];
    return NULL;
}

/* ---- the parser state ------------------------------------------------------ */

typedef struct parser {
    sg_ctx *ctx;
    const char *text;
    size_t len;
    size_t pos; /* where the lexer goes on */
    token tok;  /* the current token */
    sg_resolve_fn resolve;
    void *user;
    int build; /* 0 in syntax-only mode: no constructor, no resolver */
    unsigned depth;
} parser;

static void locate(const parser *p, size_t off, unsigned long *line, unsigned long *col)
{
    unsigned long l = 1;
    size_t line_start = 0;
    if (off > p->len)
        off = p->len;
    for (size_t i = 0; i < off; i++) {
        if (p->text[i] == '\n') {
            l++;
            line_start = i + 1;
        }
    }
    *line = l;
    *col = (unsigned long)(off - line_start) + 1;
}

/* Set the error st with the position of off in front of the formatted text. */
static SG_NOINLINE sg_status perr(parser *p, sg_status st, size_t off, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static SG_NOINLINE sg_status perr(parser *p, sg_status st, size_t off, const char *fmt, ...)
{
    char what[900];
    unsigned long line, col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    locate(p, off, &line, &col);
    return sg_ctx_set_error(p->ctx, st, "line %lu, column %lu: %s", line, col, what);
}

/* A constructor or the resolver failed with st: put the position in front of
 * the message it left (keeping the status). */
static SG_NOINLINE sg_status wrap_err(parser *p, sg_status st, size_t off)
{
    char old[1024];
    unsigned long line, col;
    if (sg_ctx_last_error(p->ctx) == st && sg_ctx_last_error_msg(p->ctx)[0] != '\0')
        snprintf(old, sizeof old, "%s", sg_ctx_last_error_msg(p->ctx));
    else
        snprintf(old, sizeof old, "%s", sg_status_kind(st));
    locate(p, off, &line, &col);
    return sg_ctx_set_error(p->ctx, st, "line %lu, column %lu: %s", line, col, old);
}

static sg_status nomem(parser *p)
{
    return sg_ctx_set_error(p->ctx, SG_ENOMEM, "out of memory while parsing");
}

/* A description of the current token for messages: "end of input", "')'",
 * "identifier 'x'", ... written into buf. */
static SG_NOINLINE const char *describe(const parser *p, const token *t, char *buf, size_t n)
{
    int shown = t->len > 40 ? 40 : (int)t->len;
    const char *more = t->len > 40 ? "..." : "";
    const char *s = p->text + t->off;
    switch (t->kind) {
    case T_EOF: snprintf(buf, n, "end of input"); break;
    case T_INT: snprintf(buf, n, "integer %.*s%s", shown, s, more); break;
    case T_IDENT: snprintf(buf, n, "identifier '%.*s'", shown, s); break;
    case T_SOURCE: snprintf(buf, n, "source %.*s%s", shown, s, more); break;
    default: snprintf(buf, n, "'%s'", tok_spelling(t->kind)); break;
    }
    return buf;
}

/* "unexpected X" (the current token), with a hint after it. */
static SG_NOINLINE sg_status unexpected(parser *p, const char *hint)
{
    char d[96];
    if (p->tok.kind == T_EOF)
        return perr(p, SG_ESYNTAX, p->tok.off, "unexpected end of input%s%s", hint[0] ? " " : "", hint);
    return perr(p, SG_ESYNTAX, p->tok.off, "unexpected %s%s%s", describe(p, &p->tok, d, sizeof d),
                hint[0] ? " " : "", hint);
}

/* "expected X, found Y" at the current token. */
static SG_NOINLINE sg_status expected(parser *p, const char *what)
{
    char d[96];
    return perr(p, SG_ESYNTAX, p->tok.off, "expected %s, found %s", what, describe(p, &p->tok, d, sizeof d));
}

/* ---- the lexer ------------------------------------------------------------- */

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}
static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}
static int is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static int is_ident_char(char c)
{
    return is_ident_start(c) || is_digit(c);
}

/* The rest of a source after its leading identifier: a sequence of
 * ['name'], ["name"], [INT], .ident and (). i is at the first '['. */
static SG_NOINLINE sg_status lex_source(parser *p, size_t *end)
{
    const char *s = p->text;
    size_t n = p->len, i = *end;
    for (;;) {
        if (i < n && s[i] == '[') {
            i++;
            if (i < n && (s[i] == '\'' || s[i] == '"')) {
                char q = s[i];
                size_t name_start = ++i;
                while (i < n && s[i] != q && s[i] != '\n' && s[i] != '\0')
                    i++;
                if (i >= n || s[i] != q)
                    return perr(p, SG_ESYNTAX, name_start - 1, "unterminated string in source");
                if (i == name_start)
                    return perr(p, SG_ESYNTAX, name_start - 1, "empty name in source");
                i++;
            } else if (i < n && is_digit(s[i])) {
                while (i < n && is_digit(s[i]))
                    i++;
            } else {
                return perr(p, SG_ESYNTAX, i, "malformed source: expected a quoted name or an index after '['");
            }
            if (i >= n || s[i] != ']')
                return perr(p, SG_ESYNTAX, i, "malformed source: expected ']'");
            i++;
        } else if (i < n && s[i] == '.') {
            i++;
            if (i >= n || !is_ident_start(s[i]))
                return perr(p, SG_ESYNTAX, i, "malformed source: expected a name after '.'");
            while (i < n && is_ident_char(s[i]))
                i++;
        } else if (i + 1 < n && s[i] == '(' && s[i + 1] == ')') {
            i += 2;
        } else {
            break;
        }
    }
    *end = i;
    return SG_OK;
}

/* Read the next token into p->tok. */
static sg_status lex(parser *p)
{
    const char *s = p->text;
    size_t n = p->len, i = p->pos;
    while (i < n && is_blank(s[i]))
        i++;
    p->tok.off = i;
    if (i >= n) {
        p->tok.kind = T_EOF;
        p->tok.len = 0;
        p->pos = i;
        return SG_OK;
    }
    char c = s[i];
    char c1 = i + 1 < n ? s[i + 1] : '\0';
    size_t start = i;
    tok_kind k;
    if (is_digit(c)) {
        while (i < n && is_digit(s[i]))
            i++;
        if (i < n && (is_ident_char(s[i]) || s[i] == '.'))
            return perr(p, SG_ESYNTAX, start, "invalid integer literal '%.*s'", (int)(i + 1 - start), s + start);
        if (s[start] == '0') {
            for (size_t j = start; j < i; j++)
                if (s[j] != '0')
                    return perr(p, SG_ESYNTAX, start, "leading zeros are not allowed in a nonzero integer literal");
        }
        k = T_INT;
    } else if (is_ident_start(c)) {
        while (i < n && is_ident_char(s[i]))
            i++;
        size_t len = i - start;
        const char *w = s + start;
        k = T_IDENT;
        switch (len == 2 || len == 3 || len == 4 || len == 5 ? c : 0) { /* keywords by their first byte */
        case 'a': k = text_is(w, len, "and") ? T_AND : k; break;
        case 'o': k = text_is(w, len, "or") ? T_OR : k; break;
        case 'n': k = text_is(w, len, "not") ? T_NOT : k; break;
        case 't': k = text_is(w, len, "true") ? T_TRUE : k; break;
        case 'T': k = text_is(w, len, "True") ? T_TRUE : k; break;
        case 'f': k = text_is(w, len, "false") ? T_FALSE : k; break;
        case 'F': k = text_is(w, len, "False") ? T_FALSE : k; break;
        default: break;
        }
        if (k != T_IDENT) {
            /* a keyword */
        } else if (i < n && s[i] == '[') {
            sg_status st = lex_source(p, &i);
            if (st != SG_OK)
                return st;
            k = T_SOURCE;
        }
    } else {
        i++;
        switch (c) {
        case '(': k = T_LPAREN; break;
        case ')': k = T_RPAREN; break;
        case ',': k = T_COMMA; break;
        case '+': k = T_PLUS; break;
        case '-': k = T_MINUS; break;
        case '~': k = T_TILDE; break;
        case '%': k = T_MOD; break;
        case '&': k = T_AMP; break;
        case '|': k = T_PIPE; break;
        case '^': k = T_CARET; break;
        case '*':
            if (c1 == '*') {
                i++;
                k = T_POW;
            } else
                k = T_STAR;
            break;
        case '/':
            if (c1 == '/') {
                i++;
                k = T_FLOORDIV;
                break;
            }
            return perr(p, SG_ESYNTAX, start, "'/' is not supported (integers only): use '//' or CleanDiv");
        case '<':
            if (c1 == '<') {
                i++;
                k = T_SHL;
            } else if (c1 == '=') {
                i++;
                k = T_LE;
            } else
                k = T_LT;
            break;
        case '>':
            if (c1 == '>') {
                i++;
                k = T_SHR;
            } else if (c1 == '=') {
                i++;
                k = T_GE;
            } else
                k = T_GT;
            break;
        case '=':
            if (c1 == '=') {
                i++;
                k = T_EQ;
                break;
            }
            return perr(p, SG_ESYNTAX, start, "unexpected '=' (comparison is '==')");
        case '!':
            if (c1 == '=') {
                i++;
                k = T_NE;
                break;
            }
            return perr(p, SG_ESYNTAX, start, "unexpected '!' (use 'not', or '!=')");
        default:
            if ((unsigned char)c >= 0x21 && (unsigned char)c < 0x7f)
                return perr(p, SG_ESYNTAX, start, "unexpected character '%c'", c);
            return perr(p, SG_ESYNTAX, start, "unexpected character '\\x%02x'", (unsigned)(unsigned char)c);
        }
    }
    p->tok.kind = k;
    p->tok.len = i - start;
    p->pos = i;
    return SG_OK;
}

/* ---- nesting ---------------------------------------------------------------- */

static sg_status enter(parser *p, size_t off)
{
    if (p->depth >= SG_PARSE_MAX_NESTING)
        return perr(p, SG_ELIMIT, off, "expression nests deeper than %d levels", SG_PARSE_MAX_NESTING);
    p->depth++;
    return SG_OK;
}

static void leave(parser *p)
{
    p->depth--;
}

/* ---- building ----------------------------------------------------------------- */

/* A leaf for an integer literal (the current token). */
static SG_NOINLINE sg_status build_int(parser *p, const token *t, const sg_expr **out)
{
    sg_ctx *ctx = p->ctx;
    const char *s = p->text + t->off;
    sg_status st;
    if (t->len <= 18) {
        int64_t v = 0;
        for (size_t i = 0; i < t->len; i++)
            v = v * 10 + (s[i] - '0');
        st = sg_expr_int(p->ctx, out, v);
    } else {
        char *z = sg__malloc(ctx, t->len + 1);
        if (!z)
            return nomem(p);
        memcpy(z, s, t->len);
        z[t->len] = '\0';
        st = sg_expr_int_str(p->ctx, out, z);
        sg_free(z);
    }
    return st == SG_OK ? SG_OK : wrap_err(p, st, t->off);
}

/* An identifier or a source: the resolver first, then the default. */
static SG_NOINLINE sg_status build_name(parser *p, const token *t, const sg_expr **out)
{
    sg_ctx *ctx = p->ctx;
    const char *s = p->text + t->off;
    int is_source = t->kind == T_SOURCE;
    const sg_expr *r = NULL;
    sg_status st;
    *out = NULL;
    if (p->resolve) {
        st = p->resolve(p->user, p->ctx, s, t->len, is_source, &r);
        if (st != SG_OK)
            return wrap_err(p, st, t->off);
        if (r) {
            *out = r;
            return SG_OK;
        }
    }
    if (is_source) {
        int shown = t->len > 200 ? 200 : (int)t->len;
        return perr(p, SG_ESYNTAX, t->off, "unknown source %.*s%s: not an input of a shape environment", shown, s,
                    t->len > 200 ? "..." : "");
    }
    char small[64];
    char *name = small;
    if (t->len >= sizeof small) {
        name = sg__malloc(ctx, t->len + 1);
        if (!name)
            return nomem(p);
    }
    memcpy(name, s, t->len);
    name[t->len] = '\0';
    st = sg_expr_sym(p->ctx, out, name);
    if (name != small)
        sg_free(name);
    return st == SG_OK ? SG_OK : wrap_err(p, st, t->off);
}

static sg_rel rel_of(tok_kind k)
{
    switch (k) {
    case T_EQ: return SG_REL_EQ;
    case T_NE: return SG_REL_NE;
    case T_LT: return SG_REL_LT;
    case T_LE: return SG_REL_LE;
    case T_GT: return SG_REL_GT;
    default: return SG_REL_GE;
    }
}

static SG_NOINLINE sg_status build_binary(parser *p, tok_kind k, size_t off, const sg_expr *a, const sg_expr *b,
                                          const sg_expr **out)
{
    sg_ctx *ctx = p->ctx;
    sg_status st;
    *out = NULL;
    if (!p->build)
        return SG_OK;
    switch (k) {
    case T_PLUS: st = sg_expr_add(ctx, out, a, b); break;
    case T_MINUS: st = sg_expr_sub(ctx, out, a, b); break;
    case T_STAR: st = sg_expr_mul(ctx, out, a, b); break;
    case T_POW: st = sg_expr_pow(ctx, out, a, b); break;
    case T_FLOORDIV: st = sg_expr_floordiv(ctx, out, a, b); break;
    case T_MOD: st = sg_expr_mod(ctx, out, a, b); break;
    case T_SHL: st = sg_expr_shl(ctx, out, a, b); break;
    case T_SHR: st = sg_expr_shr(ctx, out, a, b); break;
    case T_AMP: st = sg_expr_band(ctx, out, a, b); break;
    case T_PIPE: st = sg_expr_bor(ctx, out, a, b); break;
    case T_CARET: st = sg_expr_bxor(ctx, out, a, b); break;
    case T_EQ:
    case T_NE:
    case T_LT:
    case T_LE:
    case T_GT:
    case T_GE: st = sg_expr_rel(ctx, out, rel_of(k), a, b); break;
    case T_AND:
    case T_OR: {
        const sg_expr *args[2] = {a, b};
        st = k == T_AND ? sg_expr_and(ctx, out, 2, args) : sg_expr_or(ctx, out, 2, args);
        break;
    }
    default: return perr(p, SG_EINTERNAL, off, "parser: unknown binary operator");
    }
    if (st != SG_OK) {
        *out = NULL;
        return wrap_err(p, st, off);
    }
    return SG_OK;
}

static SG_NOINLINE sg_status build_unary(parser *p, tok_kind k, size_t off, const sg_expr *a, const sg_expr **out)
{
    sg_status st;
    *out = NULL;
    if (!p->build)
        return SG_OK;
    switch (k) {
    case T_MINUS: st = sg_expr_neg(p->ctx, out, a); break;
    case T_TILDE: st = sg_expr_bnot(p->ctx, out, a); break;
    case T_NOT: st = sg_expr_not(p->ctx, out, a); break;
    case T_PLUS:
        if (sg_expr_sort(a) != SG_SORT_INT)
            return perr(p, SG_ETYPE, off, "unary '+' needs an integer operand, not a boolean");
        *out = a;
        return SG_OK;
    default: return perr(p, SG_EINTERNAL, off, "parser: unknown unary operator");
    }
    if (st != SG_OK) {
        *out = NULL;
        return wrap_err(p, st, off);
    }
    return SG_OK;
}

static SG_NOINLINE sg_status build_call(parser *p, const fn_info *fn, size_t off, size_t n, const sg_expr **a,
                                        const sg_expr **out)
{
    sg_ctx *ctx = p->ctx;
    sg_status st;
    *out = NULL;
    if (!p->build)
        return SG_OK;
    switch (fn->id) {
    case F_FLOORDIV: st = sg_expr_floordiv(ctx, out, a[0], a[1]); break;
    case F_MOD: st = sg_expr_mod(ctx, out, a[0], a[1]); break;
    case F_CEILDIV: st = sg_expr_ceildiv(ctx, out, a[0], a[1]); break;
    case F_CLEANDIV: st = sg_expr_cleandiv(ctx, out, a[0], a[1]); break;
    case F_TRUNCDIV: st = sg_expr_truncdiv(ctx, out, a[0], a[1]); break;
    case F_TRUNCMOD: st = sg_expr_truncmod(ctx, out, a[0], a[1]); break;
    case F_MODIDX: st = sg_expr_modular_indexing(ctx, out, a[0], a[1], a[2]); break;
    case F_MIN: st = sg_expr_min(ctx, out, n, a); break;
    case F_MAX: st = sg_expr_max(ctx, out, n, a); break;
    case F_ABS: st = sg_expr_abs(ctx, out, a[0]); break;
    case F_WHERE: st = sg_expr_where(ctx, out, a[0], a[1], a[2]); break;
    case F_POW: st = sg_expr_pow(ctx, out, a[0], a[1]); break;
    case F_EQ: st = sg_expr_rel(ctx, out, SG_REL_EQ, a[0], a[1]); break;
    case F_NE: st = sg_expr_rel(ctx, out, SG_REL_NE, a[0], a[1]); break;
    case F_LT: st = sg_expr_rel(ctx, out, SG_REL_LT, a[0], a[1]); break;
    case F_LE: st = sg_expr_rel(ctx, out, SG_REL_LE, a[0], a[1]); break;
    case F_GT: st = sg_expr_rel(ctx, out, SG_REL_GT, a[0], a[1]); break;
    case F_GE: st = sg_expr_rel(ctx, out, SG_REL_GE, a[0], a[1]); break;
    case F_AND:
        /* And() is true, Or() is false, as in sympy */
        st = n == 0 ? sg_expr_bool(ctx, out, 1) : sg_expr_and(ctx, out, n, a);
        break;
    case F_OR: st = n == 0 ? sg_expr_bool(ctx, out, 0) : sg_expr_or(ctx, out, n, a); break;
    case F_NOT: st = sg_expr_not(ctx, out, a[0]); break;
    default: return perr(p, SG_EINTERNAL, off, "parser: unknown function");
    }
    if (st != SG_OK) {
        *out = NULL;
        return wrap_err(p, st, off);
    }
    return SG_OK;
}

/* ---- the grammar ------------------------------------------------------------ */

/* Precedence levels, loosest first. */
enum {
    L_OR = 1,
    L_AND = 2,
    L_NOT = 3,
    L_CMP = 4,
    L_BOR = 5,
    L_BXOR = 6,
    L_BAND = 7,
    L_SHIFT = 8,
    L_ADD = 9,
    L_MUL = 10
};

static int binary_level(tok_kind k)
{
    switch (k) {
    case T_OR: return L_OR;
    case T_AND: return L_AND;
    case T_EQ:
    case T_NE:
    case T_LT:
    case T_LE:
    case T_GT:
    case T_GE: return L_CMP;
    case T_PIPE: return L_BOR;
    case T_CARET: return L_BXOR;
    case T_AMP: return L_BAND;
    case T_SHL:
    case T_SHR: return L_SHIFT;
    case T_PLUS:
    case T_MINUS: return L_ADD;
    case T_STAR:
    case T_FLOORDIV:
    case T_MOD: return L_MUL;
    default: return 0;
    }
}

static sg_status parse_expr(parser *p, int min_level, const sg_expr **out);
static sg_status parse_unary(parser *p, const sg_expr **out);

/* A function call; the current token is the function's name. */
static SG_NOINLINE sg_status parse_call(parser *p, const fn_info *fn, const sg_expr **out)
{
    sg_ctx *ctx = p->ctx;
    size_t name_off = p->tok.off;
    const sg_expr **args = NULL;
    size_t n = 0, cap = 0;
    sg_status st;
    *out = NULL;
    if ((st = lex(p)) != SG_OK)
        return st;
    if (p->tok.kind != T_LPAREN) {
        char what[64];
        snprintf(what, sizeof what, "'(' after the function name %s", fn->name);
        return expected(p, what);
    }
    if ((st = enter(p, p->tok.off)) != SG_OK)
        return st;
    if ((st = lex(p)) != SG_OK)
        goto done;
    while (p->tok.kind != T_RPAREN) {
        const sg_expr *arg = NULL;
        if ((st = parse_expr(p, L_OR, &arg)) != SG_OK)
            goto done;
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 4;
            const sg_expr **na = sg__realloc(ctx, args, ncap * sizeof *na);
            if (!na) {
                st = nomem(p);
                goto done;
            }
            args = na;
            cap = ncap;
        }
        args[n++] = arg;
        if (p->tok.kind == T_COMMA) {
            if ((st = lex(p)) != SG_OK)
                goto done;
        } else if (p->tok.kind != T_RPAREN) {
            st = expected(p, "',' or ')'");
            goto done;
        }
    }
    if (n < fn->min_args || (fn->max_args && n > fn->max_args)) {
        if (fn->min_args == fn->max_args)
            st = perr(p, SG_ESYNTAX, name_off, "%s takes %u argument%s (%lu given)", fn->name, fn->min_args,
                      fn->min_args == 1 ? "" : "s", (unsigned long)n);
        else
            st = perr(p, SG_ESYNTAX, name_off, "%s takes at least %u argument%s (%lu given)", fn->name,
                      fn->min_args, fn->min_args == 1 ? "" : "s", (unsigned long)n);
        goto done;
    }
    if ((st = lex(p)) != SG_OK) /* past ')' */
        goto done;
    st = build_call(p, fn, name_off, n, args, out);
done:
    sg_free(args);
    leave(p);
    if (st != SG_OK)
        *out = NULL;
    return st;
}

/* primary: INT | true | false | IDENT | SOURCE | FUNC '(' args ')' | '(' expr ')' */
static sg_status parse_primary(parser *p, const sg_expr **out)
{
    sg_status st;
    token t = p->tok;
    *out = NULL;
    switch (t.kind) {
    case T_INT:
        if ((st = lex(p)) != SG_OK)
            return st;
        return p->build ? build_int(p, &t, out) : SG_OK;
    case T_TRUE:
    case T_FALSE:
        if ((st = lex(p)) != SG_OK)
            return st;
        if (!p->build)
            return SG_OK;
        st = sg_expr_bool(p->ctx, out, t.kind == T_TRUE);
        return st == SG_OK ? SG_OK : wrap_err(p, st, t.off);
    case T_IDENT: {
        const fn_info *fn = find_function(p->text + t.off, t.len);
        if (fn)
            return parse_call(p, fn, out);
    }
        /* fall through */
    case T_SOURCE:
        if ((st = lex(p)) != SG_OK)
            return st;
        return p->build ? build_name(p, &t, out) : SG_OK;
    case T_LPAREN: {
        const sg_expr *v = NULL;
        if ((st = enter(p, t.off)) != SG_OK)
            return st;
        if ((st = lex(p)) == SG_OK && (st = parse_expr(p, L_OR, &v)) == SG_OK) {
            if (p->tok.kind != T_RPAREN)
                st = expected(p, "')'");
            else
                st = lex(p);
        }
        leave(p);
        if (st == SG_OK)
            *out = v;
        return st;
    }
    default: return unexpected(p, "(expected an expression)");
    }
}

/* power: primary ['**' unary] (right-associative through unary) */
static sg_status parse_power(parser *p, const sg_expr **out)
{
    const sg_expr *base = NULL, *ex = NULL;
    sg_status st;
    *out = NULL;
    if ((st = parse_primary(p, &base)) != SG_OK)
        return st;
    if (p->tok.kind != T_POW) {
        *out = base;
        return SG_OK;
    }
    size_t off = p->tok.off;
    if ((st = enter(p, off)) != SG_OK)
        return st;
    if ((st = lex(p)) == SG_OK)
        st = parse_unary(p, &ex);
    leave(p);
    if (st != SG_OK)
        return st;
    return build_binary(p, T_POW, off, base, ex, out);
}

/* unary: ('-' | '+' | '~') unary | power */
static sg_status parse_unary(parser *p, const sg_expr **out)
{
    tok_kind k = p->tok.kind;
    *out = NULL;
    if (k == T_MINUS || k == T_PLUS || k == T_TILDE) {
        const sg_expr *a = NULL;
        size_t off = p->tok.off;
        sg_status st = enter(p, off);
        if (st != SG_OK)
            return st;
        if ((st = lex(p)) == SG_OK)
            st = parse_unary(p, &a);
        leave(p);
        if (st != SG_OK)
            return st;
        return build_unary(p, k, off, a, out);
    }
    return parse_power(p, out);
}

/* A chain of comparisons whose first operand is left; the current token is
 * the first comparison operator. a < b < c is (a < b) and (b < c), b built once. */
static sg_status parse_comparisons(parser *p, const sg_expr *left, const sg_expr **out)
{
    const sg_expr *acc = NULL, *lhs = left;
    int first = 1;
    sg_status st;
    *out = NULL;
    while (binary_level(p->tok.kind) == L_CMP) {
        tok_kind k = p->tok.kind;
        size_t off = p->tok.off;
        const sg_expr *rhs = NULL, *rel = NULL;
        if ((st = lex(p)) != SG_OK)
            return st;
        if ((st = parse_expr(p, L_BOR, &rhs)) != SG_OK)
            return st;
        if ((st = build_binary(p, k, off, lhs, rhs, &rel)) != SG_OK)
            return st;
        if (first)
            acc = rel;
        else if ((st = build_binary(p, T_AND, off, acc, rel, &acc)) != SG_OK)
            return st;
        first = 0;
        lhs = rhs;
    }
    *out = acc;
    return SG_OK;
}

/* Operators of level min_level or tighter (precedence climbing). */
static sg_status parse_expr(parser *p, int min_level, const sg_expr **out)
{
    const sg_expr *left = NULL;
    sg_status st;
    int level;
    *out = NULL;
    if (p->tok.kind == T_NOT && min_level <= L_NOT) {
        const sg_expr *a = NULL;
        size_t off = p->tok.off;
        if ((st = enter(p, off)) != SG_OK)
            return st;
        if ((st = lex(p)) == SG_OK)
            st = parse_expr(p, L_NOT, &a);
        leave(p);
        if (st != SG_OK)
            return st;
        if ((st = build_unary(p, T_NOT, off, a, &left)) != SG_OK)
            return st;
    } else if ((st = parse_unary(p, &left)) != SG_OK) {
        return st;
    }
    while ((level = binary_level(p->tok.kind)) != 0 && level >= min_level) {
        if (level == L_CMP) {
            if ((st = parse_comparisons(p, left, &left)) != SG_OK)
                return st;
            continue;
        }
        tok_kind k = p->tok.kind;
        size_t off = p->tok.off;
        const sg_expr *right = NULL;
        if ((st = lex(p)) != SG_OK)
            return st;
        if ((st = parse_expr(p, level + 1, &right)) != SG_OK)
            return st;
        if ((st = build_binary(p, k, off, left, right, &left)) != SG_OK)
            return st;
    }
    *out = left;
    return SG_OK;
}

/* ---- entry points ------------------------------------------------------------ */

sg_status sg_parse_n(sg_ctx *ctx, const sg_expr **out, const char *text, size_t len, const sg_parse_opts *opts)
{
    parser p;
    const sg_expr *v = NULL;
    sg_status st;
    if (!ctx)
        return SG_EINVAL;
    if (out)
        *out = NULL;
    if (!out || !text)
        return sg_ctx_set_error(ctx, SG_EINVAL, "sg_parse: %s is NULL", !out ? "out" : "text");
    memset(&p, 0, sizeof p);
    p.ctx = ctx;
    p.text = text;
    p.len = len;
    p.build = !(opts && opts->syntax_only);
    p.resolve = opts ? opts->resolve : NULL;
    p.user = opts ? opts->user : NULL;
    if ((st = lex(&p)) != SG_OK)
        return st;
    if (p.tok.kind == T_EOF)
        return perr(&p, SG_ESYNTAX, p.tok.off, "empty expression");
    if ((st = parse_expr(&p, L_OR, &v)) != SG_OK)
        return st;
    if (p.tok.kind != T_EOF)
        return unexpected(&p, "after the end of the expression");
    *out = p.build ? v : NULL;
    return SG_OK;
}

sg_status sg_parse(sg_ctx *ctx, const sg_expr **out, const char *text, const sg_parse_opts *opts)
{
    if (!ctx)
        return SG_EINVAL;
    if (!text) {
        if (out)
            *out = NULL;
        return sg_ctx_set_error(ctx, SG_EINVAL, "sg_parse: text is NULL");
    }
    return sg_parse_n(ctx, out, text, strlen(text), opts);
}
