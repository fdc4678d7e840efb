/* Schema strings: a parser and a printer that gives the text back exactly
 * (the registry checks both on every schema of its table, as torchgen does).
 *
 *   schema  = name ["." overload] "(" [arg {"," arg}] ")" "->" returns
 *   arg     = "*" | type name ["=" default]
 *   returns = "()" | ret | "(" ret {"," ret} ")"
 *   ret     = type [name]
 *   type    = base [alias] ["?"] ["[" [N] "]" ["?"]]
 *   alias   = "(" set ["!"] [" -> " "*"] ")"       set = a letter or "*"
 *   default = the text up to the next "," or ")" outside brackets */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "expr/expr_private.h"
#include "graph/schema.h"

static const char *const ty_names[SG_TY_COUNT] = {
    [SG_TY_TENSOR] = "Tensor",           [SG_TY_INT] = "int",       [SG_TY_SYMINT] = "SymInt",
    [SG_TY_FLOAT] = "float",             [SG_TY_BOOL] = "bool",     [SG_TY_SCALAR] = "Scalar",
    [SG_TY_SCALARTYPE] = "ScalarType",   [SG_TY_LAYOUT] = "Layout", [SG_TY_DEVICE] = "Device",
    [SG_TY_MEMORYFORMAT] = "MemoryFormat", [SG_TY_STORAGE] = "Storage", [SG_TY_STR] = "str",
};

typedef struct {
    sg_ctx *ctx;
    const char *text, *p;
} cursor;

static sg_status fail(cursor *c, sg_status s, const char *what)
{
    return sg__err(c->ctx, s, "schema '%s', column %d: %s", c->text, (int)(c->p - c->text) + 1, what);
}

static bool eat(cursor *c, const char *tok)
{
    size_t n = strlen(tok);
    if (strncmp(c->p, tok, n))
        return false;
    c->p += n;
    return true;
}

static void skip_spaces(cursor *c)
{
    while (*c->p == ' ')
        c->p++;
}

/* ident = letter or "_", then letters, digits, "_" (into buf of n bytes) */
static sg_status ident(cursor *c, char *buf, size_t n, const char *what)
{
    const char *s = c->p;
    if (!isalpha((unsigned char)*s) && *s != '_')
        return fail(c, SG_ESYNTAX, what);
    while (isalnum((unsigned char)*c->p) || *c->p == '_')
        c->p++;
    size_t len = (size_t)(c->p - s);
    if (len >= n)
        return fail(c, SG_ELIMIT, "name too long");
    memcpy(buf, s, len);
    buf[len] = '\0';
    return SG_OK;
}

/* alias = "(" set ["!"] [" -> " "*"] ")" */
static sg_status alias(cursor *c, sg__sty *t)
{
    if (!eat(c, "("))
        return SG_OK;
    if (!islower((unsigned char)*c->p) && *c->p != '*')
        return fail(c, SG_ESYNTAX, "expected an alias set");
    t->alias = *c->p++;
    t->write = eat(c, "!");
    if (eat(c, " -> ")) {
        if (!eat(c, "*"))
            return fail(c, SG_ESYNTAX, "expected '*' after '->'");
        t->alias_after = '*';
    }
    return eat(c, ")") ? SG_OK : fail(c, SG_ESYNTAX, "expected ')' to close the alias annotation");
}

/* type = base [alias] ["?"] ["[" [N] "]" ["?"]] */
static sg_status type(cursor *c, sg__sty *t)
{
    memset(t, 0, sizeof *t);
    char base[SG_SCHEMA_NAME];
    sg_status s = ident(c, base, sizeof base, "expected a type");
    if (s)
        return s;
    int b = 0;
    while (b < SG_TY_COUNT && strcmp(ty_names[b], base))
        b++;
    if (b == SG_TY_COUNT) {
        c->p -= strlen(base);
        return fail(c, SG_ESYNTAX, "unknown type");
    }
    t->base = (uint8_t)b;
    if ((s = alias(c, t)))
        return s;
    bool q = eat(c, "?");
    if (eat(c, "[")) {
        t->list = true;
        t->elem_optional = q;
        q = false;
        unsigned n = 0;
        while (isdigit((unsigned char)*c->p) && n < 100)
            n = n * 10 + (unsigned)(*c->p++ - '0');
        if (n >= 100)
            return fail(c, SG_ELIMIT, "list size too large");
        t->list_n = (uint8_t)n;
        if (!eat(c, "]"))
            return fail(c, SG_ESYNTAX, "expected ']'");
        q = eat(c, "?");
    }
    t->optional = q;
    return SG_OK;
}

/* default = the text up to the next "," or ")" outside brackets */
static sg_status default_text(cursor *c, sg__sarg *a)
{
    const char *s = c->p;
    int depth = 0;
    while (*c->p && (depth > 0 || (*c->p != ',' && *c->p != ')'))) {
        depth += *c->p == '[' ? 1 : *c->p == ']' ? -1 : 0;
        c->p++;
    }
    size_t len = (size_t)(c->p - s);
    if (len == 0)
        return fail(c, SG_ESYNTAX, "expected a default value");
    if (len >= sizeof a->def)
        return fail(c, SG_ELIMIT, "default too long");
    memcpy(a->def, s, len);
    a->def[len] = '\0';
    a->has_def = true;
    return SG_OK;
}

/* arg = type name ["=" default] (the "*" is handled by the caller) */
static sg_status arg(cursor *c, sg__sarg *a, bool kwonly)
{
    memset(a, 0, sizeof *a);
    a->kwonly = kwonly;
    sg_status s = type(c, &a->type);
    if (s)
        return s;
    if (!eat(c, " "))
        return fail(c, SG_ESYNTAX, "expected ' ' and an argument name");
    if ((s = ident(c, a->name, sizeof a->name, "expected an argument name")))
        return s;
    return eat(c, "=") ? default_text(c, a) : SG_OK;
}

/* ret = type [name] */
static sg_status ret(cursor *c, sg__sarg *r)
{
    memset(r, 0, sizeof *r);
    sg_status s = type(c, &r->type);
    if (s || !eat(c, " "))
        return s;
    return ident(c, r->name, sizeof r->name, "expected a return name");
}

static sg_status args(cursor *c, sg__schema *out)
{
    if (!eat(c, "("))
        return fail(c, SG_ESYNTAX, "expected '('");
    bool kwonly = false;
    if (eat(c, ")"))
        return SG_OK;
    do {
        skip_spaces(c);
        if (eat(c, "*")) {
            if (kwonly)
                return fail(c, SG_ESYNTAX, "a second '*'");
            kwonly = true;
            continue;
        }
        if (out->nargs == SG_SCHEMA_ARGS)
            return fail(c, SG_ELIMIT, "too many arguments");
        sg_status s = arg(c, &out->args[out->nargs], kwonly);
        if (s)
            return s;
        out->nargs++;
    } while (eat(c, ","));
    return eat(c, ")") ? SG_OK : fail(c, SG_ESYNTAX, "expected ',' or ')'");
}

static sg_status rets(cursor *c, sg__schema *out)
{
    if (!eat(c, " -> "))
        return fail(c, SG_ESYNTAX, "expected ' -> '");
    if (!eat(c, "("))
        return ret(c, &out->rets[out->nrets++]);
    out->rets_tuple = true;
    if (eat(c, ")"))
        return SG_OK;
    do {
        skip_spaces(c);
        if (out->nrets == SG_SCHEMA_RETS)
            return fail(c, SG_ELIMIT, "too many returns");
        sg_status s = ret(c, &out->rets[out->nrets]);
        if (s)
            return s;
        out->nrets++;
    } while (eat(c, ","));
    return eat(c, ")") ? SG_OK : fail(c, SG_ESYNTAX, "expected ',' or ')' in the returns");
}

/* What the alias annotations say: which arguments are written, which
 * argument each return aliases, and the flags. */
static void annotate(sg__schema *s)
{
    for (int i = 0; i < s->nargs; i++)
        if (s->args[i].type.alias && s->args[i].type.write) {
            s->written |= 1u << i;
            s->flags |= SG_OPF_MUTATES;
        }
    for (int r = 0; r < s->nrets; r++) {
        s->ret_alias[r] = -1;
        char set = s->rets[r].type.alias;
        for (int i = 0; set && set != '*' && i < s->nargs; i++) {
            if (s->args[i].type.alias != set)
                continue;
            s->ret_alias[r] = (int8_t)i;
            if (!s->args[i].type.write)
                s->flags |= SG_OPF_VIEW;
            else if (i == 0 && !s->args[i].kwonly)
                s->flags |= SG_OPF_INPLACE;
            else if (s->args[i].kwonly)
                s->flags |= SG_OPF_OUT;
        }
    }
}

sg_status sg__schema_parse(sg_ctx *ctx, sg__schema *out, const char *text)
{
    memset(out, 0, sizeof *out);
    cursor c = {ctx, text, text};
    eat(&c, "aten::");
    sg_status s = ident(&c, out->name, sizeof out->name, "expected the operator's name");
    if (!s && eat(&c, "."))
        s = ident(&c, out->overload, sizeof out->overload, "expected the overload name");
    if (!s)
        s = args(&c, out);
    if (!s)
        s = rets(&c, out);
    if (!s && *c.p)
        s = fail(&c, SG_ESYNTAX, "text after the returns");
    if (s) {
        memset(out, 0, sizeof *out);
        return s;
    }
    annotate(out);
    out->op = UINT16_MAX; /* the registry sets its own */
    return SG_OK;
}

/* ---- printing ---- */

typedef struct {
    char *buf;
    size_t n, len;
} out_buf;

static void put(out_buf *o, const char *s)
{
    size_t k = strlen(s);
    if (o->len < o->n)
        snprintf(o->buf + o->len, o->n - o->len, "%s", s);
    o->len += k;
}

static void put_type(out_buf *o, const sg__sty *t)
{
    put(o, ty_names[t->base]);
    if (t->alias) {
        char a[16];
        snprintf(a, sizeof a, "(%c%s%s)", t->alias, t->write ? "!" : "", t->alias_after ? " -> *" : "");
        put(o, a);
    }
    if (t->list) {
        char l[8];
        snprintf(l, sizeof l, "%s[", t->elem_optional ? "?" : "");
        put(o, l);
        if (t->list_n) {
            snprintf(l, sizeof l, "%u", (unsigned)t->list_n);
            put(o, l);
        }
        put(o, "]");
    }
    if (t->optional)
        put(o, "?");
}

static void put_arg(out_buf *o, const sg__sarg *a)
{
    put_type(o, &a->type);
    if (a->name[0]) {
        put(o, " ");
        put(o, a->name);
    }
    if (a->has_def) {
        put(o, "=");
        put(o, a->def);
    }
}

size_t sg__schema_print(const sg__schema *s, char *buf, size_t n)
{
    out_buf o = {buf, n, 0};
    if (n)
        buf[0] = '\0';
    put(&o, s->name);
    if (s->overload[0]) {
        put(&o, ".");
        put(&o, s->overload);
    }
    put(&o, "(");
    bool star = false;
    for (int i = 0; i < s->nargs; i++) {
        if (i)
            put(&o, ", ");
        if (s->args[i].kwonly && !star) {
            put(&o, "*, ");
            star = true;
        }
        put_arg(&o, &s->args[i]);
    }
    put(&o, ") -> ");
    if (s->rets_tuple)
        put(&o, "(");
    for (int r = 0; r < s->nrets; r++) {
        if (r)
            put(&o, ", ");
        put_arg(&o, &s->rets[r]);
    }
    if (s->rets_tuple)
        put(&o, ")");
    return o.len;
}

void sg__schema_full_name(const sg__schema *s, char *buf)
{
    /* every call of an operator asks this, eagerly several times: no snprintf */
    size_t n = strnlen(s->name, SG_SCHEMA_NAME - 1), o = strnlen(s->overload, SG_SCHEMA_NAME - 1);
    memcpy(buf, s->name, n);
    if (o) {
        buf[n++] = '.';
        memcpy(buf + n, s->overload, o);
        n += o;
    }
    buf[n] = '\0';
}

int sg__schema_arg(const sg__schema *s, const char *name)
{
    for (int i = 0; i < s->nargs; i++) /* the first two letters first: most names differ there */
        if (s->args[i].name[0] == name[0] &&
            (!name[0] || (s->args[i].name[1] == name[1] && !strcmp(s->args[i].name, name))))
            return i;
    return -1;
}
