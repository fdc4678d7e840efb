/* The AST printed back as Python, the way Python's ast.unparse prints it
 * (tests/diff/front.test compares the two): operators spaced, parentheses
 * where precedence needs them, tuples parenthesized except as assignment
 * targets and values, floats as repr, four spaces an indent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/front_private.h"

/* ast.unparse's precedences, lowest first. */
enum { PR_TUPLE = 1, PR_TEST, PR_OR, PR_AND, PR_NOT, PR_CMP, PR_EXPR, PR_ARITH = 12, PR_TERM, PR_FACTOR, PR_POWER,
       PR_AWAIT, PR_ATOM };

typedef struct {
    sg__buf b;
} out;

static void expr(out *o, const sg__py *e, int prec);

static int prec_of(const sg__py *e)
{
    switch ((sg__pyk)e->kind) {
    case SG_PY_TUPLE: return PR_TUPLE;
    case SG_PY_BOOLOP: return e->op == SG_PYOP_OR ? PR_OR : PR_AND;
    case SG_PY_NOT: return PR_NOT;
    case SG_PY_COMPARE: return PR_CMP;
    case SG_PY_UNARY: return PR_FACTOR;
    case SG_PY_BINOP:
        switch (e->op) {
        case '+': case '-': return PR_ARITH;
        case SG_PYOP_POW: return PR_POWER;
        default: return PR_TERM;
        }
    default: return PR_ATOM;
    }
}

static const char *op_text(uint8_t op)
{
    switch (op) {
    case SG_PYOP_FLOORDIV: return "//";
    case SG_PYOP_POW: return "**";
    case SG_PYOP_EQ: return "==";
    case SG_PYOP_NE: return "!=";
    case SG_PYOP_LE: return "<=";
    case SG_PYOP_GE: return ">=";
    case SG_PYOP_LT: return "<";
    case SG_PYOP_GT: return ">";
    case SG_PYOP_AND: return "and";
    case SG_PYOP_OR: return "or";
    case '+': return "+";
    case '-': return "-";
    case '*': return "*";
    case '/': return "/";
    case '%': return "%";
    case '@': return "@";
    }
    return "?";
}


static void items(out *o, const sg__py *e, uint32_t from, int prec)
{
    for (uint32_t i = from; i < e->nkids; i++) {
        if (i > from)
            sg__buf_puts(&o->b, ", ");
        expr(o, e->kids[i], prec);
    }
}

static void slice_part(out *o, const sg__py *e)
{
    if (e->kind != SG_PY_NONE)
        expr(o, e, PR_TEST);
}

static void subscript_index(out *o, const sg__py *i)
{
    if (i->kind == SG_PY_SLICE) {
        slice_part(o, i->kids[0]);
        sg__buf_puts(&o->b, ":");
        slice_part(o, i->kids[1]);
        if (i->kids[2]->kind != SG_PY_NONE) {
            sg__buf_puts(&o->b, ":");
            slice_part(o, i->kids[2]);
        }
    } else if (i->kind == SG_PY_TUPLE && i->nkids) { /* x[a, b]: no parentheses, but around a tuple in it */
        for (uint32_t k = 0; k < i->nkids; k++) {
            if (k)
                sg__buf_puts(&o->b, ", ");
            if (i->kids[k]->kind == SG_PY_SLICE)
                subscript_index(o, i->kids[k]);
            else
                expr(o, i->kids[k], PR_TEST);
        }
        if (i->nkids == 1)
            sg__buf_puts(&o->b, ",");
    } else {
        expr(o, i, PR_TUPLE);
    }
}

/* e, not a link (is_link), at precedence prec. */
static void node(out *o, const sg__py *e, int prec)
{
    int mine = prec_of(e);
    bool paren = prec > mine;
    if (paren)
        sg__buf_puts(&o->b, "(");
    switch ((sg__pyk)e->kind) {
    case SG_PY_NAME: sg__buf_puts(&o->b, e->s); break;
    case SG_PY_INT: sg__buf_printf(&o->b, "%lld", (long long)e->i); break;
    case SG_PY_FLOAT: sg__buf_pyfloat(&o->b, e->f); break;
    case SG_PY_TRUE: sg__buf_puts(&o->b, "True"); break;
    case SG_PY_FALSE: sg__buf_puts(&o->b, "False"); break;
    case SG_PY_NONE: sg__buf_puts(&o->b, "None"); break;
    case SG_PY_ELLIPSIS: sg__buf_puts(&o->b, "..."); break;
    case SG_PY_TUPLE:
        if (!paren && e->nkids == 0)
            sg__buf_puts(&o->b, "(");
        items(o, e, 0, PR_TEST);
        if (e->nkids == 1)
            sg__buf_puts(&o->b, ",");
        if (!paren && e->nkids == 0)
            sg__buf_puts(&o->b, ")");
        break;
    case SG_PY_LIST:
        sg__buf_puts(&o->b, "[");
        items(o, e, 0, PR_TEST);
        sg__buf_puts(&o->b, "]");
        break;
    case SG_PY_UNARY:
        sg__buf_printf(&o->b, "%c", e->op);
        expr(o, e->kids[0], PR_FACTOR);
        break;
    case SG_PY_NOT:
        sg__buf_puts(&o->b, "not ");
        expr(o, e->kids[0], PR_NOT);
        break;
    case SG_PY_BOOLOP: /* as unparse does: each operand asks one precedence more than the last */
        for (uint32_t i = 0; i < e->nkids; i++) {
            if (i)
                sg__buf_printf(&o->b, " %s ", op_text(e->op));
            expr(o, e->kids[i], mine + 1 + (int)(i < 8 ? i : 8));
        }
        break;
    case SG_PY_COMPARE:
        for (uint32_t i = 0; i < e->nkids; i++) {
            if (i)
                sg__buf_printf(&o->b, " %s ", op_text(e->ops[i - 1]));
            expr(o, e->kids[i], PR_CMP + 1);
        }
        break;
    case SG_PY_KEYWORD:
        sg__buf_printf(&o->b, "%s=", e->s);
        expr(o, e->kids[0], PR_TEST);
        break;
    case SG_PY_SLICE:
        subscript_index(o, e);
        break;
    default:
        sg__buf_puts(&o->b, "?");
        break;
    }
    if (paren)
        sg__buf_puts(&o->b, ")");
}

/* The expressions whose first child starts their text (a link): a + b + c,
 * x.neg().neg(), x[0][0]. The parser builds such chains in a loop, as long
 * as the source; expr prints them in a loop too. Every other child is
 * nested in the text, its depth bounded by SG_PY_MAX_DEPTH. */
static bool is_link(const sg__py *e)
{
    return e->kind == SG_PY_BINOP || e->kind == SG_PY_CALL || e->kind == SG_PY_ATTR ||
           e->kind == SG_PY_SUBSCRIPT;
}

/* The precedence link e asks of its first child. */
static int first_prec(const sg__py *e)
{
    if (e->kind != SG_PY_BINOP)
        return PR_ATOM;
    return e->op == SG_PYOP_POW ? PR_POWER + 1 : prec_of(e);
}

/* What link e prints after its first child. */
static void link_rest(out *o, const sg__py *e)
{
    switch ((sg__pyk)e->kind) {
    case SG_PY_BINOP: {
        int mine = prec_of(e);
        sg__buf_printf(&o->b, " %s ", op_text(e->op));
        expr(o, e->kids[1], e->op == SG_PYOP_POW ? mine : mine + 1);
        break;
    }
    case SG_PY_CALL:
        sg__buf_puts(&o->b, "(");
        items(o, e, 1, PR_TEST);
        sg__buf_puts(&o->b, ")");
        break;
    case SG_PY_ATTR:
        if (e->kids[0]->kind == SG_PY_INT || e->kids[0]->kind == SG_PY_TRUE ||
            e->kids[0]->kind == SG_PY_FALSE) /* 1 .real: unparse spaces an int (bools are ints) */
            sg__buf_puts(&o->b, " ");
        sg__buf_printf(&o->b, ".%s", e->s);
        break;
    case SG_PY_SUBSCRIPT:
        sg__buf_puts(&o->b, "[");
        subscript_index(o, e->kids[1]);
        sg__buf_puts(&o->b, "]");
        break;
    default:
        break;
    }
}

/* The links of a chain and their parentheses, held on the stack; a longer
 * chain's are allocated. */
#define CHAIN_ON_STACK 16

typedef struct {
    const sg__py *e;
    bool paren;
} link;

static void expr(out *o, const sg__py *e, int prec)
{
    if (!is_link(e)) {
        node(o, e, prec);
        return;
    }
    size_t n = 0;
    for (const sg__py *x = e; is_link(x); x = x->kids[0])
        n++;
    link small[CHAIN_ON_STACK], *links = small;
    if (n > CHAIN_ON_STACK && !(links = sg__malloc(o->b.ctx, n * sizeof *links))) {
        o->b.oom = true;
        return;
    }
    const sg__py *x = e;
    for (size_t i = 0; i < n; i++, x = x->kids[0]) { /* links[0]: the outermost */
        links[i] = (link){x, prec > prec_of(x)};
        if (links[i].paren)
            sg__buf_puts(&o->b, "(");
        prec = first_prec(x);
    }
    node(o, x, prec);
    for (size_t i = n; i-- > 0;) {
        link_rest(o, links[i].e);
        if (links[i].paren)
            sg__buf_puts(&o->b, ")");
    }
    if (links != small)
        sg_free(links);
}

static void block(out *o, const sg__py *b, int indent);

static void stmt(out *o, const sg__py *s, int indent)
{
    int pad = 4 * indent;
    switch ((sg__pyk)s->kind) {
    case SG_PY_DEF:
        for (uint32_t i = 0; i < s->ndeco; i++) {
            sg__buf_printf(&o->b, "%*s@", pad, "");
            expr(o, s->deco[i], PR_TEST);
            sg__buf_puts(&o->b, "\n");
        }
        sg__buf_printf(&o->b, "%*sdef %s(", pad, "", s->s);
        for (uint32_t i = 0; i < s->nnames; i++)
            sg__buf_printf(&o->b, "%s%s", i ? ", " : "", s->names[i]);
        sg__buf_puts(&o->b, "):\n");
        block(o, s->kids[0], indent + 1);
        return;
    case SG_PY_CLASS:
        sg__buf_printf(&o->b, "%*sclass %s(", pad, "", s->s);
        expr(o, s->kids[0], PR_TEST);
        sg__buf_puts(&o->b, "):\n");
        block(o, s->kids[1], indent + 1);
        return;
    case SG_PY_IF: {
        const sg__py *n = s;
        const char *word = "if";
        for (;;) {
            sg__buf_printf(&o->b, "%*s%s ", pad, "", word);
            expr(o, n->kids[0], PR_TEST);
            sg__buf_puts(&o->b, ":\n");
            block(o, n->kids[1], indent + 1);
            if (n->nkids < 3)
                return;
            const sg__py *e = n->kids[2]; /* an else holding one if prints as elif, as unparse does */
            if (e->kind == SG_PY_BLOCK && e->nkids == 1 && e->kids[0]->kind == SG_PY_IF)
                e = e->kids[0];
            if (e->kind == SG_PY_IF) {
                n = e;
                word = "elif";
                continue;
            }
            sg__buf_printf(&o->b, "%*selse:\n", pad, "");
            block(o, n->kids[2], indent + 1);
            return;
        }
    }
    case SG_PY_WITH:
        sg__buf_printf(&o->b, "%*swith ", pad, "");
        for (uint32_t i = 0; i + 1 < s->nkids; i++) {
            if (i)
                sg__buf_puts(&o->b, ", ");
            expr(o, s->kids[i], PR_TEST);
        }
        sg__buf_puts(&o->b, ":\n");
        block(o, s->kids[s->nkids - 1], indent + 1);
        return;
    default:
        break;
    }
    sg__buf_printf(&o->b, "%*s", pad, "");
    switch ((sg__pyk)s->kind) {
    case SG_PY_ASSIGN:
        expr(o, s->kids[0], PR_TUPLE);
        sg__buf_puts(&o->b, " = ");
        expr(o, s->kids[1], PR_TEST);
        break;
    case SG_PY_AUGASSIGN:
        expr(o, s->kids[0], PR_TUPLE);
        sg__buf_printf(&o->b, " %s= ", op_text(s->op));
        expr(o, s->kids[1], PR_TEST);
        break;
    case SG_PY_EXPR:
        expr(o, s->kids[0], PR_TEST);
        break;
    case SG_PY_RETURN:
        sg__buf_puts(&o->b, "return");
        if (s->nkids) {
            sg__buf_puts(&o->b, " ");
            expr(o, s->kids[0], PR_TEST);
        }
        break;
    case SG_PY_PASS:
        sg__buf_puts(&o->b, "pass");
        break;
    case SG_PY_IMPORT:
        sg__buf_puts(&o->b, s->s);
        break;
    default:
        sg__buf_puts(&o->b, "?");
        break;
    }
    sg__buf_puts(&o->b, "\n");
}

static void block(out *o, const sg__py *b, int indent)
{
    for (uint32_t i = 0; i < b->nkids; i++)
        stmt(o, b->kids[i], indent);
}

sg_status sg__py_print(sg_ctx *ctx, char **out_text, const sg__py *module)
{
    out o = {.b = {.ctx = ctx}};
    block(&o, module, 0);
    *out_text = sg__buf_take(&o.b);
    return *out_text ? SG_OK : sg__nomem(ctx);
}
