/* The walker (walk_private.h): values printed as Python prints them. */
#include "front/walk_private.h"

/* Printing a value visits each of its items; lists and tuples can share
 * items (x = (x, x) doubles what prints), so the visits are counted:
 * SG_ELIMIT past MAX_PRINT_ITEMS, or past MAX_NEST levels of nesting. */
#define MAX_PRINT_ITEMS ((size_t)1 << 20)

static sg_status print_value(sg_walk *W, const sg_run *r, sg__buf *b, const wv *v, unsigned depth, size_t *items);

sg_status sg__w_print(sg_walk *W, const sg_run *r, sg__buf *b, const wv *v)
{
    size_t items = 0;
    return print_value(W, r, b, v, 0, &items);
}

static sg_status print_value(sg_walk *W, const sg_run *r, sg__buf *b, const wv *v, unsigned depth, size_t *items)
{
    if (++*items > MAX_PRINT_ITEMS)
        return sg__err(W->ctx, SG_ELIMIT, "output: a value of more than %zu items (lists and tuples count each "
                       "item they hold, shared ones again)", MAX_PRINT_ITEMS);
    if (depth > MAX_NEST)
        return sg__err(W->ctx, SG_ELIMIT, "output: lists and tuples nested more than %d deep", MAX_NEST);
    switch ((wkind)v->kind) {
    case W_NONE:
        sg__buf_puts(b, "None");
        return SG_OK;
    case W_BOOL:
        sg__buf_puts(b, sg_expr_op(v->u.e) == SG_OP_TRUE ? "True" : sg_expr_op(v->u.e) == SG_OP_FALSE ? "False" : "?");
        return SG_OK;
    case W_INT: {
        int64_t i;
        if (r && sg__xrun_eval(sg__run_xrun(r), v->u.e, &i) == SG_OK) {
            sg__buf_printf(b, "%lld", (long long)i);
            return SG_OK;
        }
        char *s = NULL;
        sg_status st = sg_print(W->ctx, &s, v->u.e, SG_FMT_PYTHON);
        if (!st)
            sg__buf_puts(b, s);
        sg_free(s);
        return st;
    }
    case W_FLOAT:
        if (v->known)
            sg__buf_pyfloat(b, v->u.f);
        else
            sg__buf_puts(b, "?");
        return SG_OK;
    case W_TENSOR: {
        sg_value inner[2] = {v->u.t->v, sg__w_twin(W, v->u.t->v)};
        bool two = inner[1] != SG_NOVAL; /* a TwoTensor: two(a=..., b=...) */
        sg_status st = SG_OK;
        for (int j = 0; j < 1 + two && !st; j++) {
            const sg_tensor *xt = r ? sg_run_tensor(r, inner[j]) : NULL;
            if (!xt)
                return sg__err(W->ctx, SG_EINTERNAL, "output: a tensor without a concrete value");
            char *s = NULL;
            if (two)
                sg__buf_puts(b, j ? ", b=" : "two(a=");
            st = sg__xt_print(W->ctx, &s, xt);
            if (!st)
                sg__buf_puts(b, s);
            sg_free(s);
        }
        if (two && !st)
            sg__buf_puts(b, ")");
        return st;
    }
    case W_TUPLE:
    case W_LIST:
        sg__buf_puts(b, v->kind == W_TUPLE ? "(" : "[");
        for (uint32_t i = 0; i < v->u.seq.n; i++) {
            if (i)
                sg__buf_puts(b, ", ");
            CHAIN(print_value(W, r, b, &v->u.seq.items[i], depth + 1, items));
        }
        if (v->kind == W_TUPLE && v->u.seq.n == 1)
            sg__buf_puts(b, ",");
        sg__buf_puts(b, v->kind == W_TUPLE ? ")" : "]");
        return SG_OK;
    default:
        sg__buf_puts(b, "<");
        sg__buf_puts(b, sg__w_kind_name(v));
        sg__buf_puts(b, ">");
        return SG_OK;
    }
}
