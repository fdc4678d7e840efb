/* The program language: tokens (with Python's INDENT and DEDENT) and a
 * recursive-descent parser of the subset of doc/program.md. Python
 * outside the subset is refused as unsupported with the construct's name;
 * text that is not Python is a syntax error; both carry line and column. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/front_private.h"

/* ---- the AST's arena: its one allocation site ---- */

typedef struct chunk {
    struct chunk *next;
    size_t used, size;
    max_align_t data[];
} chunk;

struct sg__ast {
    sg_ctx *ctx; /* whose allocator */
    chunk *chunks;
    sg__py *module;
    size_t ops; /* calls, operators, subscripts (sg__ast_ops) */
};

static void *arena(sg__ast *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!a->chunks || a->chunks->size - a->chunks->used < n) {
        size_t size = n > 16384 ? n : 16384;
        chunk *c = sg__malloc(a->ctx, sizeof *c + size);
        if (!c)
            return NULL;
        c->next = a->chunks;
        c->used = 0;
        c->size = size;
        a->chunks = c;
    }
    void *p = (char *)a->chunks->data + a->chunks->used;
    a->chunks->used += n;
    return memset(p, 0, n);
}

void sg__ast_free(sg__ast *a)
{
    if (!a)
        return;
    chunk *c = a->chunks;
    while (c) {
        chunk *n = c->next;
        sg_free(c);
        c = n;
    }
    sg_free(a);
}

const sg__py *sg__ast_module(const sg__ast *a)
{
    return a->module;
}

size_t sg__ast_ops(const sg__ast *a)
{
    return a->ops;
}

/* ---- tokens ---- */

typedef enum { T_END, T_NEWLINE, T_INDENT, T_DEDENT, T_NAME, T_INT, T_FLOAT, T_OP } tkind;

typedef struct {
    uint8_t k;
    uint32_t line, col;
    const char *p;
    uint32_t n;
    int64_t i;
    double f;
} tok;

#define MAX_TOKENS 1000000

typedef struct {
    sg_ctx *ctx;
    sg__ast *ast;
    const char *src, *end;
    uint32_t first_line; /* the number of the source's first line */
    tok *t;
    size_t nt, capt, at;
    int depth;
    sg_status st;
} P;

/* The text of a macro's value (SG__STR(SG_PY_MAX_DEPTH) is "100"). */
#define SG__STR2(x) #x
#define SG__STR(x) SG__STR2(x)

static sg_status fail_at(P *p, sg_status s, uint32_t line, uint32_t col, const char *fmt, const char *what)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, what);
    p->st = sg__err(p->ctx, s, "line %u, column %u: %s", (unsigned)line, (unsigned)col, msg);
    return p->st;
}

static bool push_tok(P *p, tok t)
{
    if (p->nt == MAX_TOKENS) {
        fail_at(p, SG_ELIMIT, t.line, t.col, "%s", "more than 1000000 tokens");
        return false;
    }
    if (p->nt == p->capt) {
        size_t cap = p->capt ? 2 * p->capt : 256;
        tok *n = arena(p->ast, cap * sizeof *n); /* the old array stays in the arena: tokens are few */
        if (!n) {
            p->st = sg__nomem(p->ctx);
            return false;
        }
        if (p->nt)
            memcpy(n, p->t, p->nt * sizeof *n);
        p->t = n;
        p->capt = cap;
    }
    p->t[p->nt++] = t;
    return true;
}

static const char *const ops3[] = {"**=", "//=", ">>=", "<<=", "...", NULL};
static const char *const ops2[] = {"**", "//", "==", "!=", "<=", ">=", "->", "+=", "-=", "*=", "/=", "%=",
                                   "@=", "&=", "|=", "^=", ":=", "<<", ">>", NULL};
static const char ops1[] = "+-*/%@<>=()[]{},:.;~&|^";

static size_t op_len(const char *s, const char *end)
{
    for (int w = 3; w >= 2; w--) {
        const char *const *tab = w == 3 ? ops3 : ops2;
        for (int i = 0; tab[i]; i++)
            if (end - s >= w && !strncmp(s, tab[i], (size_t)w))
                return (size_t)w;
    }
    return strchr(ops1, *s) && *s ? 1 : 0;
}

/* Digits with underscores between them, copied into buf without them while
 * fewer than cap are there (*over set when one more is dropped). */
static const char *digits(const char *q, const char *end, char *buf, size_t *n, size_t cap, bool *over)
{
    while (q < end && (isdigit((unsigned char)*q) || (*q == '_' && q + 1 < end && isdigit((unsigned char)q[1])))) {
        if (*q != '_' && *n < cap)
            buf[(*n)++] = *q;
        else if (*q != '_')
            *over = true;
        q++;
    }
    return q;
}

/* number = digits ["." digits] [("e" | "E") ["+" | "-"] digits] (decimal only) */
static bool lex_number(P *p, const char **s, tok *t)
{
    const char *q = *s, *end = p->end;
    char buf[128];
    size_t n = 0, cap = sizeof buf - 8; /* digits; room is left for '.', 'e', '-' and the NUL */
    bool is_float = false, over = false;
    if (q + 1 < end && q[0] == '0' && strchr("xXoObB", q[1])) {
        fail_at(p, SG_EUNSUPPORTED, t->line, t->col, "unsupported: %s", "a number in another base than 10");
        return false;
    }
    q = digits(q, end, buf, &n, cap, &over);
    if (q < end && *q == '.') {
        is_float = true;
        buf[n++] = *q++;
        q = digits(q, end, buf, &n, cap, &over);
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        const char *r = q + 1;
        if (r < end && (*r == '+' || *r == '-'))
            r++;
        if (r < end && isdigit((unsigned char)*r)) {
            is_float = true;
            buf[n++] = 'e';
            if (q[1] == '-')
                buf[n++] = '-';
            q = digits(r, end, buf, &n, cap, &over);
        }
    }
    buf[n] = '\0';
    if (over) {
        fail_at(p, SG_ELIMIT, t->line, t->col, "%s", "a number of more than 120 digits");
        return false;
    }
    if (q < end && (isalnum((unsigned char)*q) || *q == '_')) {
        /* Python lets a keyword follow a number with no space ("1or x"), nothing else */
        static const char *const ok[] = {"and", "else", "for", "if", "in", "is", "not", "or", NULL};
        bool kw = false;
        for (int i = 0; ok[i] && !kw; i++)
            kw = (size_t)(end - q) >= strlen(ok[i]) && !strncmp(q, ok[i], strlen(ok[i]));
        if (!kw) {
            fail_at(p, SG_ESYNTAX, t->line, t->col, "%s", "invalid decimal literal");
            return false;
        }
    }
    char *e;
    errno = 0;
    if (is_float) {
        t->k = T_FLOAT;
        t->f = strtod(buf, &e);
    } else {
        t->k = T_INT;
        if (n > 1 && buf[0] == '0' && strspn(buf, "0") != n) {
            fail_at(p, SG_ESYNTAX, t->line, t->col, "%s", "leading zeros in a decimal integer are not permitted");
            return false;
        }
        t->i = strtoll(buf, &e, 10);
        if (errno == ERANGE) {
            fail_at(p, SG_ELIMIT, t->line, t->col, "the integer %s does not fit 64 bits", buf);
            return false;
        }
    }
    t->n = (uint32_t)(q - *s);
    *s = q;
    return true;
}

static bool tokenize(P *p)
{
    const char *s = p->src, *line_start = s;
    uint32_t line = p->first_line;
    int depth = 0; /* brackets open: no NEWLINE, no indentation */
    uint32_t indents[SG_PY_MAX_DEPTH + 1] = {0};
    int nind = 0;
    bool at_line_start = true, line_has_tokens = false;
    while (s <= p->end) {
        if (at_line_start && depth == 0) {
            /* the indentation of a line that has something on it */
            uint32_t w = 0;
            const char *q = s;
            while (q < p->end && (*q == ' ' || *q == '\t' || *q == '\f'))
                w = *q == '\t' ? (w / 8 + 1) * 8 : *q == ' ' ? w + 1 : 0, q++;
            if (q == p->end || *q == '\n' || *q == '#' || (*q == '\r' && q + 1 < p->end && q[1] == '\n')) {
                while (q < p->end && *q != '\n')
                    q++;
                if (q == p->end)
                    break;
                s = q + 1;
                line++;
                line_start = s;
                continue;
            }
            tok t = {.line = line, .col = (uint32_t)(q - line_start) + 1};
            if (w > indents[nind]) {
                if (nind == SG_PY_MAX_DEPTH) {
                    fail_at(p, SG_ELIMIT, t.line, t.col, "%s",
                            "blocks nested too deeply (the limit: " SG__STR(SG_PY_MAX_DEPTH) " levels)");
                    return false;
                }
                indents[++nind] = w;
                t.k = T_INDENT;
                if (!push_tok(p, t))
                    return false;
            }
            while (w < indents[nind]) {
                nind--;
                t.k = T_DEDENT;
                if (!push_tok(p, t))
                    return false;
            }
            if (w != indents[nind]) {
                fail_at(p, SG_ESYNTAX, t.line, t.col, "%s", "unindent does not match any outer indentation level");
                return false;
            }
            s = q;
            at_line_start = false;
        }
        if (s == p->end)
            break;
        char c = *s;
        tok t = {.line = line, .col = (uint32_t)(s - line_start) + 1, .p = s};
        if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
            s++;
        } else if (c == '#') {
            while (s < p->end && *s != '\n')
                s++;
        } else if (c == '\\') {
            if (s + 1 < p->end && (s[1] == '\n' || (s[1] == '\r' && s + 2 < p->end && s[2] == '\n'))) {
                s += s[1] == '\n' ? 2 : 3;
                line++;
                line_start = s;
            } else {
                fail_at(p, SG_ESYNTAX, t.line, t.col, "%s", "unexpected character after line continuation");
                return false;
            }
        } else if (c == '\n') {
            if (depth == 0 && line_has_tokens) {
                t.k = T_NEWLINE;
                if (!push_tok(p, t))
                    return false;
            }
            s++;
            line++;
            line_start = s;
            at_line_start = depth == 0; /* inside brackets a line goes on */
            line_has_tokens = line_has_tokens && depth > 0;
        } else if (isalpha((unsigned char)c) || c == '_') {
            while (s < p->end && (isalnum((unsigned char)*s) || *s == '_'))
                s++;
            if (s < p->end && (*s == '\'' || *s == '"')) {
                fail_at(p, SG_EUNSUPPORTED, t.line, t.col, "unsupported: %s", "strings");
                return false;
            }
            t.k = T_NAME;
            t.n = (uint32_t)(s - t.p);
            if (!push_tok(p, t))
                return false;
            line_has_tokens = true;
        } else if (isdigit((unsigned char)c) || (c == '.' && s + 1 < p->end && isdigit((unsigned char)s[1]))) {
            if (!lex_number(p, &s, &t) || !push_tok(p, t))
                return false;
            line_has_tokens = true;
        } else if (c == '\'' || c == '"') {
            fail_at(p, SG_EUNSUPPORTED, t.line, t.col, "unsupported: %s", "strings");
            return false;
        } else {
            size_t n = op_len(s, p->end);
            if (!n) {
                char what[8];
                snprintf(what, sizeof what, (unsigned char)c < 32 || (unsigned char)c > 126 ? "\\x%02x" : "%c",
                         (unsigned char)c);
                fail_at(p, SG_ESYNTAX, t.line, t.col, "invalid character '%s'", what);
                return false;
            }
            if (n == 1 && strchr("([{", c))
                depth++;
            if (n == 1 && strchr(")]}", c)) {
                if (depth == 0) {
                    fail_at(p, SG_ESYNTAX, t.line, t.col, "unmatched '%s'", c == ')' ? ")" : c == ']' ? "]" : "}");
                    return false;
                }
                depth--;
            }
            t.k = T_OP;
            t.n = (uint32_t)n;
            s += n;
            if (!push_tok(p, t))
                return false;
            line_has_tokens = true;
        }
    }
    tok t = {.line = line, .col = (uint32_t)(s - line_start) + 1};
    if (depth) {
        fail_at(p, SG_ESYNTAX, t.line, t.col, "%s", "unexpected end of the program: a bracket is not closed");
        return false;
    }
    if (line_has_tokens) {
        t.k = T_NEWLINE;
        if (!push_tok(p, t))
            return false;
    }
    for (t.k = T_DEDENT; nind > 0; nind--)
        if (!push_tok(p, t))
            return false;
    t.k = T_END;
    return push_tok(p, t);
}

/* ---- parser helpers ---- */

static const tok *peek(P *p)
{
    return &p->t[p->at];
}

static bool is_op(const tok *t, const char *op)
{
    return t->k == T_OP && t->n == strlen(op) && !strncmp(t->p, op, t->n);
}

static bool is_name(const tok *t, const char *name)
{
    return t->k == T_NAME && t->n == strlen(name) && !strncmp(t->p, name, t->n);
}

static bool accept_op(P *p, const char *op)
{
    if (!is_op(peek(p), op))
        return false;
    p->at++;
    return true;
}

static bool accept_name(P *p, const char *name)
{
    if (!is_name(peek(p), name))
        return false;
    p->at++;
    return true;
}

static const char *tok_text(const tok *t, char *buf, size_t n)
{
    switch ((tkind)t->k) {
    case T_END: return "the end of the program";
    case T_NEWLINE: return "the end of the line";
    case T_INDENT: return "an indent";
    case T_DEDENT: return "an unindent";
    default:
        snprintf(buf, n, "'%.*s'", (int)(t->n < 40 ? t->n : 40), t->p);
        return buf;
    }
}

static void *syntax(P *p, const char *expected)
{
    char buf[64], msg[160];
    const tok *t = peek(p);
    snprintf(msg, sizeof msg, "expected %s, found %s", expected, tok_text(t, buf, sizeof buf));
    fail_at(p, SG_ESYNTAX, t->line, t->col, "%s", msg);
    return NULL;
}

static void *unsupported(P *p, const tok *t, const char *what)
{
    fail_at(p, SG_EUNSUPPORTED, t->line, t->col, "unsupported: %s", what);
    return NULL;
}

static bool expect_op(P *p, const char *op)
{
    if (accept_op(p, op))
        return true;
    char want[16];
    snprintf(want, sizeof want, "'%s'", op);
    syntax(p, want);
    return false;
}

static sg__py *node(P *p, sg__pyk k, const tok *at)
{
    sg__py *n = arena(p->ast, sizeof *n);
    if (!n) {
        p->st = sg__nomem(p->ctx);
        return NULL;
    }
    n->kind = (uint8_t)k;
    n->line = at->line;
    n->col = at->col;
    p->ast->ops += k == SG_PY_CALL || k == SG_PY_BINOP || k == SG_PY_UNARY || k == SG_PY_SUBSCRIPT ||
                   k == SG_PY_AUGASSIGN;
    return n;
}

static const char *name_of(P *p, const tok *t)
{
    char *s = arena(p->ast, t->n + 1);
    if (!s) {
        p->st = sg__nomem(p->ctx);
        return NULL;
    }
    memcpy(s, t->p, t->n);
    return s;
}

/* A growing list of nodes, copied into the arena when complete. */
typedef struct {
    sg__py *small[8];
    sg__py **v;
    uint32_t n, cap;
} kids;

static bool kids_add(P *p, kids *k, sg__py *x)
{
    if (!x)
        return false;
    if (!k->v) {
        k->v = k->small;
        k->cap = 8;
    }
    if (k->n == k->cap) {
        sg__py **v = arena(p->ast, 2 * k->cap * sizeof *v);
        if (!v) {
            p->st = sg__nomem(p->ctx);
            return false;
        }
        memcpy(v, k->v, k->n * sizeof *v);
        k->v = v;
        k->cap *= 2;
    }
    k->v[k->n++] = x;
    return true;
}

static bool kids_set(P *p, sg__py *n, kids *k)
{
    n->nkids = k->n;
    if (!k->n)
        return true;
    n->kids = arena(p->ast, k->n * sizeof *n->kids);
    if (!n->kids) {
        p->st = sg__nomem(p->ctx);
        return false;
    }
    memcpy(n->kids, k->v, k->n * sizeof *n->kids);
    return true;
}

/* A node with the kid a, and b unless NULL (NULL when a is: its error stands). */
static sg__py *node2(P *p, sg__pyk k, const tok *at, sg__py *a, sg__py *b)
{
    sg__py *n = a && !p->st ? node(p, k, at) : NULL; /* b NULL after an error is no kid */
    kids ks = {0};
    if (!n || !kids_add(p, &ks, a) || (b && !kids_add(p, &ks, b)) || !kids_set(p, n, &ks))
        return NULL;
    return n;
}

/* Nesting: every recursive rule counts itself. */
static bool enter(P *p)
{
    if (++p->depth > SG_PY_MAX_DEPTH) {
        const tok *t = peek(p);
        fail_at(p, SG_ELIMIT, t->line, t->col, "%s",
                "expressions or blocks nested too deeply (the limit: " SG__STR(SG_PY_MAX_DEPTH) " levels)");
        return false;
    }
    return true;
}

/* Keywords of Python outside the subset, refused by name where they start
 * an expression or a statement. */
static const char *const refused[] = {"for", "while", "try", "except", "finally", "raise", "lambda", "yield",
                                      "global", "nonlocal", "del", "assert", "async", "await", "break",
                                      "continue", "match", NULL};

static const char *refused_keyword(const tok *t)
{
    for (int i = 0; refused[i]; i++)
        if (is_name(t, refused[i]))
            return refused[i];
    return NULL;
}

static bool is_keyword(const tok *t)
{
    static const char *const kw[] = {"and", "or", "not", "if", "elif", "else", "def", "class", "return", "with",
                                     "pass", "import", "from", "as", "in", "is", "None", "True", "False", NULL};
    for (int i = 0; kw[i]; i++)
        if (is_name(t, kw[i]))
            return true;
    return refused_keyword(t) != NULL;
}

/* ---- expressions ---- */

static sg__py *parse_test(P *p);
static sg__py *parse_factor(P *p);

/* testlist = test ("," test)* [","]: a TUPLE where there is a comma */
static sg__py *parse_testlist(P *p, bool *tuple)
{
    const tok *at = peek(p);
    sg__py *first = parse_test(p);
    if (!first || !is_op(peek(p), ","))
        return first;
    kids ks = {0};
    if (!kids_add(p, &ks, first))
        return NULL;
    while (accept_op(p, ",")) {
        const tok *t = peek(p);
        if (t->k == T_NEWLINE || is_op(t, "=") || is_op(t, ")") || t->k == T_END)
            break;
        if (!kids_add(p, &ks, parse_test(p)))
            return NULL;
    }
    sg__py *n = node(p, SG_PY_TUPLE, at);
    if (tuple)
        *tuple = true;
    return n && kids_set(p, n, &ks) ? n : NULL;
}

/* subscript = test | [test] ":" [test] [":" [test]] */
static sg__py *parse_subscript(P *p)
{
    const tok *at = peek(p);
    if (is_op(at, "...") && !is_op(&p->t[p->at + 1], ":")) {
        p->at++;
        return node(p, SG_PY_ELLIPSIS, at);
    }
    sg__py *lo = NULL;
    if (!is_op(at, ":") && !(lo = parse_test(p)))
        return NULL;
    if (!accept_op(p, ":"))
        return lo;
    sg__py *part[3] = {lo, NULL, NULL};
    for (int k = 1; k < 3; k++) {
        const tok *t = peek(p);
        if (k == 2 && !accept_op(p, ":"))
            break;
        t = peek(p);
        if (!is_op(t, ":") && !is_op(t, ",") && !is_op(t, "]") && !(part[k] = parse_test(p)))
            return NULL;
    }
    sg__py *n = node(p, SG_PY_SLICE, at);
    kids ks = {0};
    for (int k = 0; k < 3 && n; k++)
        if (!kids_add(p, &ks, part[k] ? part[k] : node(p, SG_PY_NONE, at)))
            return NULL;
    return n && kids_set(p, n, &ks) ? n : NULL;
}

/* arguments = argument ("," argument)* [","]; argument = test | NAME "=" test */
static bool parse_args(P *p, kids *ks)
{
    while (!is_op(peek(p), ")")) {
        const tok *t = peek(p);
        if (is_op(t, "*") || is_op(t, "**"))
            return unsupported(p, t, "star arguments"), false;
        if (t->k == T_NAME && is_op(&p->t[p->at + 1], "=") && !is_keyword(t)) {
            sg__py *kw = node(p, SG_PY_KEYWORD, t);
            p->at += 2;
            if (!kw || !(kw->s = name_of(p, t)))
                return false;
            kids one = {0};
            if (!kids_add(p, &one, parse_test(p)) || !kids_set(p, kw, &one) || !kids_add(p, ks, kw))
                return false;
        } else {
            if (ks->n > 1 && ks->v[ks->n - 1]->kind == SG_PY_KEYWORD)
                return syntax(p, "a keyword argument after keyword arguments"), false;
            if (!kids_add(p, ks, parse_test(p)))
                return false;
        }
        if (!accept_op(p, ","))
            break;
    }
    return expect_op(p, ")");
}

/* atom = "(" [testlist] ")" | "[" [testlist] "]" | NAME | NUMBER | "..." | None | True | False */
static sg__py *parse_atom(P *p)
{
    const tok *t = peek(p);
    const char *no = refused_keyword(t);
    if (no)
        return unsupported(p, t, no);
    if (t->k == T_NAME) {
        p->at++;
        if (is_name(t, "None") || is_name(t, "True") || is_name(t, "False"))
            return node(p, is_name(t, "None") ? SG_PY_NONE : is_name(t, "True") ? SG_PY_TRUE : SG_PY_FALSE, t);
        if (is_keyword(t)) {
            p->at--;
            return syntax(p, "an expression");
        }
        sg__py *n = node(p, SG_PY_NAME, t);
        return n && (n->s = name_of(p, t)) ? n : NULL;
    }
    if (t->k == T_INT || t->k == T_FLOAT) {
        p->at++;
        sg__py *n = node(p, t->k == T_INT ? SG_PY_INT : SG_PY_FLOAT, t);
        if (n) {
            n->i = t->i;
            n->f = t->f;
        }
        return n;
    }
    if (accept_op(p, "...")) 
        return node(p, SG_PY_ELLIPSIS, t);
    if (is_op(t, "(") || is_op(t, "[")) {
        bool list = is_op(t, "[");
        p->at++;
        const char *close = list ? "]" : ")";
        kids ks = {0};
        bool comma = false;
        while (!is_op(peek(p), close)) {
            if (!kids_add(p, &ks, parse_test(p)))
                return NULL;
            if (is_name(peek(p), "for"))
                return unsupported(p, peek(p), "comprehensions");
            if (!accept_op(p, ","))
                break;
            comma = true;
        }
        if (!expect_op(p, close))
            return NULL;
        if (!list && ks.n == 1 && !comma)
            return ks.v[0]; /* parentheses only group */
        sg__py *n = node(p, list ? SG_PY_LIST : SG_PY_TUPLE, t);
        return n && kids_set(p, n, &ks) ? n : NULL;
    }
    if (is_op(t, "{"))
        return unsupported(p, t, "dict and set displays");
    if (is_op(t, "~"))
        return unsupported(p, t, "the operator ~");
    return syntax(p, "an expression");
}

/* atom_expr = atom ("(" arguments ")" | "[" subscripts "]" | "." NAME)* */
static sg__py *parse_atom_expr(P *p)
{
    sg__py *e = parse_atom(p);
    while (e) {
        const tok *t = peek(p);
        if (accept_op(p, "(")) {
            sg__py *call = node(p, SG_PY_CALL, t);
            kids ks = {0};
            if (!call || !kids_add(p, &ks, e) || !parse_args(p, &ks) || !kids_set(p, call, &ks))
                return NULL;
            e = call;
        } else if (accept_op(p, "[")) {
            const tok *at = peek(p);
            kids ks = {0};
            bool comma = false;
            do {
                if (is_op(peek(p), "]") && comma)
                    break;
                if (!kids_add(p, &ks, parse_subscript(p)))
                    return NULL;
            } while (accept_op(p, ",") && (comma = true));
            if (!expect_op(p, "]"))
                return NULL;
            sg__py *index = ks.v[0];
            if (ks.n > 1 || comma) {
                index = node(p, SG_PY_TUPLE, at);
                if (!index || !kids_set(p, index, &ks))
                    return NULL;
            }
            e = node2(p, SG_PY_SUBSCRIPT, t, e, index);
        } else if (accept_op(p, ".")) {
            const tok *n = peek(p);
            if (n->k != T_NAME || is_keyword(n))
                return syntax(p, "an attribute name");
            p->at++;
            sg__py *a = node2(p, SG_PY_ATTR, t, e, NULL);
            if (!a || !(a->s = name_of(p, n)))
                return NULL;
            e = a;
        } else {
            break;
        }
    }
    return e;
}

/* power = atom_expr ["**" factor] */
static sg__py *parse_power(P *p)
{
    sg__py *base = parse_atom_expr(p);
    const tok *t = peek(p);
    if (!base || !accept_op(p, "**"))
        return base;
    if (!enter(p)) /* a ** b ** c nests to the right: it counts as nesting */
        return NULL;
    sg__py *n = node2(p, SG_PY_BINOP, t, base, parse_factor(p));
    p->depth--;
    if (n)
        n->op = SG_PYOP_POW;
    return n;
}

/* factor = ("+" | "-") factor | power */
static sg__py *parse_factor(P *p)
{
    const tok *t = peek(p);
    if (is_op(t, "-") || is_op(t, "+")) {
        p->at++;
        if (!enter(p))
            return NULL;
        sg__py *n = node2(p, SG_PY_UNARY, t, parse_factor(p), NULL);
        p->depth--;
        if (n)
            n->op = (uint8_t)t->p[0];
        return n;
    }
    return parse_power(p);
}

typedef struct {
    const char *text;
    uint8_t code;
} binop;

static const binop term_ops[] = {{"*", '*'}, {"/", '/'}, {"//", SG_PYOP_FLOORDIV}, {"%", '%'}, {"@", '@'}, {NULL, 0}};
static const binop arith_ops[] = {{"+", '+'}, {"-", '-'}, {NULL, 0}};

static const binop *match(const tok *t, const binop *ops)
{
    for (int i = 0; ops[i].text; i++)
        if (is_op(t, ops[i].text))
            return &ops[i];
    return NULL;
}

/* term = factor (("*" | "/" | "//" | "%" | "@") factor)*; arith = term (("+" | "-") term)* */
static sg__py *parse_binary(P *p, const binop *ops, sg__py *(*sub)(P *))
{
    sg__py *e = sub(p);
    const binop *o;
    while (e && (o = match(peek(p), ops))) {
        const tok *t = peek(p);
        p->at++;
        e = node2(p, SG_PY_BINOP, t, e, sub(p));
        if (e)
            e->op = o->code;
    }
    return e;
}

static sg__py *parse_term(P *p)
{
    return parse_binary(p, term_ops, parse_factor);
}

static sg__py *parse_arith(P *p)
{
    sg__py *e = parse_binary(p, arith_ops, parse_term);
    const tok *t = peek(p);
    if (e && (is_op(t, "|") || is_op(t, "&") || is_op(t, "^") || is_op(t, "<<") || is_op(t, ">>")))
        return unsupported(p, t, "bitwise operators");
    return e;
}

/* comparison = arith (("<" | ">" | "==" | ">=" | "<=" | "!=") arith)* */
static sg__py *parse_comparison(P *p)
{
    static const binop cmp[] = {{"<", SG_PYOP_LT}, {">", SG_PYOP_GT}, {"==", SG_PYOP_EQ}, {">=", SG_PYOP_GE},
                                {"<=", SG_PYOP_LE}, {"!=", SG_PYOP_NE}, {NULL, 0}};
    const tok *at = peek(p);
    sg__py *first = parse_arith(p);
    if (!first)
        return NULL;
    if (is_name(peek(p), "in") || is_name(peek(p), "is") ||
        (is_name(peek(p), "not") && is_name(&p->t[p->at + 1], "in")))
        return unsupported(p, peek(p), is_name(peek(p), "is") ? "the operator is" : "the operator in");
    if (!match(peek(p), cmp))
        return first;
    sg__py *n = node(p, SG_PY_COMPARE, at);
    kids ks = {0};
    uint8_t codes[64];
    if (!n || !kids_add(p, &ks, first))
        return NULL;
    const binop *o;
    while ((o = match(peek(p), cmp))) {
        if (ks.n == 64)
            return unsupported(p, peek(p), "a chain of more than 64 comparisons");
        p->at++;
        codes[ks.n - 1] = o->code;
        if (!kids_add(p, &ks, parse_arith(p)))
            return NULL;
    }
    if (!kids_set(p, n, &ks) || !(n->ops = arena(p->ast, ks.n - 1)))
        return p->st ? NULL : (p->st = sg__nomem(p->ctx), NULL);
    memcpy(n->ops, codes, ks.n - 1);
    return n;
}

/* not_test = "not" not_test | comparison */
static sg__py *parse_not(P *p)
{
    const tok *t = peek(p);
    if (!accept_name(p, "not"))
        return parse_comparison(p);
    if (!enter(p))
        return NULL;
    sg__py *n = node2(p, SG_PY_NOT, t, parse_not(p), NULL);
    p->depth--;
    return n;
}

/* and_test = not_test ("and" not_test)*; or_test = and_test ("or" and_test)* */
static sg__py *parse_boolop(P *p, bool is_or)
{
    const tok *at = peek(p);
    sg__py *first = is_or ? parse_boolop(p, false) : parse_not(p);
    const char *word = is_or ? "or" : "and";
    if (!first || !is_name(peek(p), word))
        return first;
    kids ks = {0};
    if (!kids_add(p, &ks, first))
        return NULL;
    while (accept_name(p, word))
        if (!kids_add(p, &ks, is_or ? parse_boolop(p, false) : parse_not(p)))
            return NULL;
    sg__py *n = node(p, SG_PY_BOOLOP, at);
    if (n)
        n->op = is_or ? SG_PYOP_OR : SG_PYOP_AND;
    return n && kids_set(p, n, &ks) ? n : NULL;
}

/* test = or_test (a conditional expression or a lambda is refused) */
static sg__py *parse_test(P *p)
{
    if (!enter(p))
        return NULL;
    const tok *t = peek(p);
    sg__py *e = is_name(t, "lambda") ? unsupported(p, t, "lambda") : parse_boolop(p, true);
    if (e && is_name(peek(p), "if"))
        e = unsupported(p, peek(p), "conditional expressions");
    if (e && is_op(peek(p), ":="))
        e = unsupported(p, peek(p), "assignment expressions (:=)");
    p->depth--;
    return e;
}

/* ---- statements ---- */

static sg__py *parse_stmt(P *p);

/* block = NEWLINE INDENT stmt+ DEDENT | simple statements on the same line */
static sg__py *parse_block(P *p)
{
    const tok *at = peek(p);
    if (!expect_op(p, ":") || !enter(p))
        return NULL;
    sg__py *b = node(p, SG_PY_BLOCK, at);
    kids ks = {0};
    if (!b)
        return NULL;
    if (peek(p)->k != T_NEWLINE) { /* if x: return y (a simple statement only) */
        const tok *t = peek(p);
        if (is_name(t, "def") || is_name(t, "class") || is_name(t, "if") || is_name(t, "with") || is_op(t, "@"))
            return syntax(p, "a simple statement after ':' on the same line");
        if (!kids_add(p, &ks, parse_stmt(p)))
            return NULL;
    } else {
        p->at++;
        if (peek(p)->k != T_INDENT)
            return syntax(p, "an indented block");
        p->at++;
        while (peek(p)->k != T_DEDENT && peek(p)->k != T_END)
            if (!kids_add(p, &ks, parse_stmt(p)))
                return NULL;
        if (peek(p)->k == T_DEDENT)
            p->at++;
    }
    p->depth--;
    return kids_set(p, b, &ks) ? b : NULL;
}

static sg__py *parse_def(P *p, kids *deco)
{
    const tok *at = peek(p);
    p->at++; /* def */
    const tok *name = peek(p);
    if (name->k != T_NAME || is_keyword(name))
        return syntax(p, "a function name");
    p->at++;
    sg__py *n = node(p, SG_PY_DEF, at);
    if (!n || !(n->s = name_of(p, name)) || !expect_op(p, "("))
        return NULL;
    const char *params[256];
    uint32_t np = 0;
    while (!is_op(peek(p), ")")) {
        const tok *t = peek(p);
        if (is_op(t, "*") || is_op(t, "**") || is_op(t, "/"))
            return unsupported(p, t, "star and positional-only parameters");
        if (t->k != T_NAME || is_keyword(t))
            return syntax(p, "a parameter name");
        p->at++;
        if (is_op(peek(p), "=") || is_op(peek(p), ":"))
            return unsupported(p, peek(p), is_op(peek(p), "=") ? "default values" : "annotations");
        if (np == 256)
            return unsupported(p, t, "more than 256 parameters");
        if (!(params[np++] = name_of(p, t)))
            return NULL;
        if (!accept_op(p, ","))
            break;
    }
    if (!expect_op(p, ")"))
        return NULL;
    if (is_op(peek(p), "->"))
        return unsupported(p, peek(p), "annotations");
    n->nnames = np;
    if (np && !(n->names = arena(p->ast, np * sizeof *n->names)))
        return p->st = sg__nomem(p->ctx), NULL;
    if (np)
        memcpy(n->names, params, np * sizeof *params);
    n->ndeco = deco->n;
    if (deco->n && !(n->deco = arena(p->ast, deco->n * sizeof *n->deco)))
        return p->st = sg__nomem(p->ctx), NULL;
    if (deco->n)
        memcpy(n->deco, deco->v, deco->n * sizeof *n->deco);
    sg__py *body = parse_block(p);
    kids ks = {0};
    if (!body || !kids_add(p, &ks, body))
        return NULL;
    return kids_set(p, n, &ks) ? n : NULL;
}

static sg__py *parse_class(P *p)
{
    const tok *at = peek(p);
    p->at++;
    const tok *name = peek(p);
    if (name->k != T_NAME || is_keyword(name))
        return syntax(p, "a class name");
    p->at++;
    sg__py *n = node(p, SG_PY_CLASS, at);
    kids ks = {0};
    if (!n || !(n->s = name_of(p, name)) || !expect_op(p, "("))
        return NULL;
    if (!kids_add(p, &ks, parse_test(p)))
        return NULL;
    if (is_op(peek(p), ","))
        return unsupported(p, peek(p), "classes with several bases");
    if (!expect_op(p, ")") || !kids_add(p, &ks, parse_block(p)))
        return NULL;
    return kids_set(p, n, &ks) ? n : NULL;
}

static sg__py *parse_if(P *p)
{
    const tok *at = peek(p);
    p->at++; /* if, elif */
    sg__py *n = node(p, SG_PY_IF, at);
    kids ks = {0};
    if (!n || !kids_add(p, &ks, parse_test(p)) || !kids_add(p, &ks, parse_block(p)))
        return NULL;
    if (is_name(peek(p), "elif")) {
        if (!kids_add(p, &ks, parse_if(p)))
            return NULL;
    } else if (accept_name(p, "else")) {
        if (!kids_add(p, &ks, parse_block(p)))
            return NULL;
    }
    return kids_set(p, n, &ks) ? n : NULL;
}

static sg__py *parse_with(P *p)
{
    const tok *at = peek(p);
    p->at++;
    sg__py *n = node(p, SG_PY_WITH, at);
    kids ks = {0};
    if (!n)
        return NULL;
    do {
        if (!kids_add(p, &ks, parse_test(p)))
            return NULL;
        if (is_name(peek(p), "as"))
            return unsupported(p, peek(p), "with ... as");
    } while (accept_op(p, ","));
    if (!kids_add(p, &ks, parse_block(p)))
        return NULL;
    return kids_set(p, n, &ks) ? n : NULL;
}

/* import torch | from M import N: kept as their text (tokens joined as
 * Python prints them), for the walker to ignore */
static sg__py *parse_import(P *p)
{
    sg_ctx *ctx = p->ctx;
    const tok *at = peek(p);
    sg__buf b = {.ctx = ctx};
    bool glue = true, from = is_name(at, "from"), want_name = false;
    while (peek(p)->k != T_NEWLINE && peek(p)->k != T_END && !is_op(peek(p), ";")) {
        const tok *t = &p->t[p->at];
        bool dot = is_op(t, "."), comma = is_op(t, ","), word = t->k == T_NAME;
        bool lead = p->at == (size_t)(at - p->t);
        /* import a.b, c | from a.b import c, d: names between dots and commas */
        bool fits = lead || (want_name ? word && !is_keyword(t)
                                       : dot || comma || (from && is_name(t, "import")) || is_name(t, "as"));
        if (!fits) {
            sg__buf_free(&b);
            return syntax(p, want_name ? "a module name" : "the end of the import");
        }
        want_name = lead || dot || comma || is_name(t, "import") || is_name(t, "as");
        p->at++;
        if (!glue && !dot && !comma)
            sg__buf_puts(&b, " ");
        sg__buf_put(&b, t->p, t->n);
        glue = dot;
    }
    if (want_name) {
        sg__buf_free(&b);
        return syntax(p, "a module name");
    }
    char *text = sg__buf_take(&b);
    sg__py *n = text ? node(p, SG_PY_IMPORT, at) : NULL;
    tok span = {.p = text, .n = text ? (uint32_t)strlen(text) : 0};
    if (n && !(n->s = name_of(p, &span)))
        n = NULL;
    sg_free(text);
    if (!text && !p->st)
        p->st = sg__nomem(p->ctx);
    return n;
}

static const binop aug_ops[] = {{"+=", '+'}, {"-=", '-'}, {"*=", '*'}, {"/=", '/'}, {"//=", SG_PYOP_FLOORDIV},
                                {"%=", '%'}, {"**=", SG_PYOP_POW}, {"@=", '@'}, {NULL, 0}};

/* small_stmt = "pass" | "return" [testlist] | import | testlist [("=" | augop) testlist] */
static sg__py *parse_small(P *p)
{
    const tok *t = peek(p);
    const char *no = refused_keyword(t);
    if (no)
        return unsupported(p, t, no);
    if (accept_name(p, "pass"))
        return node(p, SG_PY_PASS, t);
    if (accept_name(p, "return")) {
        sg__py *n = node(p, SG_PY_RETURN, t);
        kids ks = {0};
        if (n && peek(p)->k != T_NEWLINE && !is_op(peek(p), ";") && !kids_add(p, &ks, parse_testlist(p, NULL)))
            return NULL;
        return n && kids_set(p, n, &ks) ? n : NULL;
    }
    if (is_name(t, "import") || is_name(t, "from"))
        return parse_import(p);
    sg__py *lhs = parse_testlist(p, NULL);
    if (!lhs)
        return NULL;
    const tok *op = peek(p);
    const binop *aug = match(op, aug_ops);
    if (is_op(op, ">>=") || is_op(op, "<<=") || is_op(op, "&=") || is_op(op, "|=") || is_op(op, "^="))
        return unsupported(p, op, "bitwise operators");
    if (!accept_op(p, "=") && !aug) {
        return node2(p, SG_PY_EXPR, t, lhs, NULL);
    }
    if (aug)
        p->at++;
    if (lhs->kind != SG_PY_NAME && lhs->kind != SG_PY_ATTR && (aug || lhs->kind != SG_PY_TUPLE))
        return lhs->kind == SG_PY_SUBSCRIPT ? unsupported(p, t, "assignment to a subscript")
                                            : syntax(p, "a name, an attribute or a tuple of names to assign");
    for (uint32_t i = 0; lhs->kind == SG_PY_TUPLE && i < lhs->nkids; i++)
        if (lhs->kids[i]->kind != SG_PY_NAME)
            return unsupported(p, t, "unpacking into something else than names");
    sg__py *n = node2(p, aug ? SG_PY_AUGASSIGN : SG_PY_ASSIGN, t, lhs, parse_testlist(p, NULL));
    if (n && aug)
        n->op = aug->code;
    if (n && is_op(peek(p), "="))
        return unsupported(p, peek(p), "chained assignment");
    return n;
}

/* stmt = def | class | if | with | decorators def | small_stmt (";" small_stmt)* NEWLINE */
static sg__py *parse_stmt(P *p)
{
    const tok *t = peek(p);
    if (t->k == T_INDENT)
        return syntax(p, "a statement (unexpected indent)");
    if (is_op(t, "@")) {
        kids deco = {0};
        while (accept_op(p, "@")) {
            if (!kids_add(p, &deco, parse_test(p)))
                return NULL;
            if (peek(p)->k != T_NEWLINE)
                return syntax(p, "the end of the line after a decorator");
            p->at++;
        }
        if (is_name(peek(p), "class"))
            return unsupported(p, peek(p), "class decorators");
        if (!is_name(peek(p), "def"))
            return syntax(p, "a function or class after the decorators");
        return parse_def(p, &deco);
    }
    if (is_name(t, "def")) {
        kids none = {0};
        return parse_def(p, &none);
    }
    if (is_name(t, "class"))
        return parse_class(p);
    if (is_name(t, "if"))
        return parse_if(p);
    if (is_name(t, "with"))
        return parse_with(p);
    if (is_name(t, "elif") || is_name(t, "else"))
        return syntax(p, "a statement");
    sg__py *s = parse_small(p);
    if (s && is_op(peek(p), ";"))
        return unsupported(p, peek(p), "several statements on one line");
    if (s && peek(p)->k != T_NEWLINE && peek(p)->k != T_END)
        return syntax(p, "the end of the statement");
    if (s && peek(p)->k == T_NEWLINE)
        p->at++;
    return s;
}

sg_status sg__py_parse(sg_ctx *ctx, sg__ast **out, const char *source, size_t len)
{
    return sg__py_parse_at(ctx, out, source, len, 1);
}

sg_status sg__py_parse_at(sg_ctx *ctx, sg__ast **out, const char *source, size_t len, uint32_t first_line)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out || (!source && len))
        return sg__err(ctx, SG_EINVAL, "sg__py_parse: NULL argument");
    *out = NULL;
    if (len > SG_PY_MAX_SOURCE)
        return sg__err(ctx, SG_ELIMIT, "line %u, column 1: a program of more than %zu bytes", (unsigned)first_line,
                       SG_PY_MAX_SOURCE);
    sg__ast *a = sg__calloc(ctx, 1, sizeof *a);
    if (!a)
        return sg__nomem(ctx);
    a->ctx = ctx;
    P p = {.ctx = ctx, .ast = a, .src = source ? source : "", .end = (source ? source : "") + len,
           .first_line = first_line ? first_line : 1};
    if (tokenize(&p)) {
        tok start = {.line = p.first_line, .col = 1};
        sg__py *m = node(&p, SG_PY_MODULE, &start);
        kids ks = {0};
        while (m && peek(&p)->k != T_END && kids_add(&p, &ks, parse_stmt(&p)))
            ;
        if (m && !p.st && kids_set(&p, m, &ks))
            a->module = m;
    }
    if (!a->module) {
        sg__ast_free(a);
        return p.st ? p.st : sg__nomem(ctx);
    }
    *out = a;
    return SG_OK;
}
