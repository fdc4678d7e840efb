/* Guard sets of a trace's inputs: structural checks per input (Dynamo's
 * TENSOR_MATCH and subclass guards) in front of the compiled shape guards. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard/guard_private.h"
#include "shapeguard/env.h"
#include "source/source_private.h"

#define NONE ((size_t)-1)

/* One node of an input's tree, in pre-order: an integer, a tensor, or a
 * subclass (a tensor with inner nodes following it). */
typedef struct gnode {
    bool is_int;
    char *label; /* "x", "x.elem": the source without L[...] */
    char *source;
    size_t slot; /* integers: the slot of the value, or NONE */
    size_t ndim;
    int64_t *want;  /* 2*ndim+1 expected values: sizes, strides, offset */
    bool *fixed;    /* which of them are checked structurally */
    size_t *slots;  /* 2*ndim+1 slots (NONE: not read by the shape guards) */
    const sg_subclass_kind *kind;
    size_t ninner;
    char **names;
    void *meta;
    size_t metalen;
} gnode;

struct sg_guard_set {
    sg_guard_prog *prog;
    char **texts;        /* per shape guard: its text (sg_env_produce_guards_text) */
    sg__gp_said *said;   /* per shape guard: its text and sides, for explaining */
    gnode *nodes;
    size_t nnodes, cap;
    size_t ninputs;
    size_t nslots;
};

static void free_node(gnode *n)
{
    sg_free(n->label);
    sg_free(n->source);
    sg_free(n->want);
    sg_free(n->fixed);
    sg_free(n->slots);
    for (size_t i = 0; i < n->ninner; i++)
        sg_free(n->names[i]);
    sg_free(n->names);
    sg_free(n->meta);
}

void sg_guard_set_free(sg_guard_set *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->nnodes; i++)
        free_node(&g->nodes[i]);
    sg_free(g->nodes);
    sg_env_free_guard_texts(g->texts, g->prog ? sg_guard_prog_nguards(g->prog) : 0);
    sg_free(g->said);
    sg_guard_prog_free(g->prog);
    sg_free(g);
}

const sg_guard_prog *sg_guard_set_program(const sg_guard_set *g)
{
    return g ? g->prog : NULL;
}

/* "L['x'].elem" -> "x.elem" (Dynamo's failure reasons shorten L['x'] to x). */
static char *label_of(sg_ctx *ctx, const char *source)
{
    sg__buf b = {.ctx = ctx};
    if (!strncmp(source, "L['", 3)) {
        const char *q = strchr(source + 3, '\'');
        if (q && q[1] == ']') {
            sg__buf_put(&b, source + 3, (size_t)(q - source - 3));
            sg__buf_puts(&b, q + 2);
            return sg__buf_take(&b);
        }
    }
    sg__buf_puts(&b, source);
    return sg__buf_take(&b);
}

typedef struct builder {
    sg_ctx *ctx;
    sg_guard_set *g;
    sg__idmap slotof; /* slot symbol id -> slot index */
} builder;

/* The slot of the source named name, or NONE. */
static sg_status slot_of(builder *B, const char *name, size_t *out)
{
    const sg_expr *sym;
    sg_status s = sg_expr_sym(B->ctx, &sym, name);
    if (s)
        return s;
    size_t *v = sg__idmap_find(&B->slotof, sym->id);
    *out = v ? *v : NONE;
    return SG_OK;
}

static gnode *new_node(builder *B)
{
    sg_ctx *ctx = B->ctx;
    sg_guard_set *g = B->g;
    if (!sg__grow(ctx, (void **)&g->nodes, &g->cap, g->nnodes + 1, sizeof *g->nodes))
        return NULL;
    gnode *n = &g->nodes[g->nnodes++];
    memset(n, 0, sizeof *n);
    n->slot = NONE;
    return n;
}

static sg_status add_tensor(builder *B, const sg_fake *f)
{
    sg_ctx *ctx = B->ctx;
    gnode *n = new_node(B);
    if (!n)
        return sg__nomem(ctx);
    const sg_source *src = sg__fake_source(f);
    size_t np = 2 * f->ndim + 1;
    n->ndim = f->ndim;
    n->source = sg__strdup(ctx, sg_source_name(src));
    n->label = label_of(ctx, sg_source_name(src));
    n->want = sg__calloc(ctx, np, sizeof *n->want);
    n->fixed = sg__calloc(ctx, np, sizeof *n->fixed);
    n->slots = sg__malloc(ctx, np * sizeof *n->slots);
    n->kind = f->kind;
    if (!n->source || !n->label || !n->want || !n->fixed || !n->slots)
        return sg__nomem(ctx);
    for (size_t k = 0; k < np; k++) {
        const sg_expr *e = k < f->ndim ? f->sizes[k] : k < 2 * f->ndim ? f->strides[k - f->ndim] : f->offset;
        sg_source_kind kind = k < f->ndim ? SG_SOURCE_SIZE : k < 2 * f->ndim ? SG_SOURCE_STRIDE : SG_SOURCE_OFFSET;
        const sg_source *ps;
        sg_status s = sg_source_property(ctx, &ps, src, kind, k < f->ndim ? k : k - f->ndim);
        if (!s)
            s = slot_of(B, sg_source_name(ps), &n->slots[k]);
        if (s)
            return s;
        /* a constant at fakification is checked per tensor (exact: int64 by construction) */
        n->fixed[k] = e->op == SG_OP_INT && sg_expr_get_si(e, &n->want[k]);
    }
    if (f->kind) {
        n->ninner = 0;
        n->names = sg__calloc(ctx, f->ninner ? f->ninner : 1, sizeof *n->names);
        n->meta = sg__malloc(ctx, f->metalen ? f->metalen : 1);
        if (!n->names || !n->meta)
            return sg__nomem(ctx);
        if (f->metalen)
            memcpy(n->meta, f->meta, f->metalen);
        n->metalen = f->metalen;
        for (size_t i = 0; i < f->ninner; i++, n->ninner++)
            if (!(n->names[i] = sg__strdup(ctx, f->names[i])))
                return sg__nomem(ctx);
        for (size_t i = 0; i < f->ninner; i++) {
            sg_status s = add_tensor(B, f->inner[i]); /* may move g->nodes: n is stale after */
            if (s)
                return s;
        }
    }
    return SG_OK;
}

sg_status sg_guard_set_build(sg_inputs *in, unsigned flags, sg_guard_set **out)
{
    if (!in)
        return SG_EINVAL;
    sg_env *env = sg_inputs_env(in);
    sg_ctx *ctx = sg_env_ctx(env);
    if (!out)
        return sg__err(ctx, SG_EINVAL, "sg_guard_set_build: NULL argument");
    *out = NULL;
    const sg_expr **items = NULL, **slots = NULL, **sides = NULL;
    char **texts = NULL;
    size_t nitems = 0, nslots = 0;
    builder B = {ctx, sg__calloc(ctx, 1, sizeof *B.g), {0}};
    sg_status s = B.g && sg__idmap_init(ctx, &B.slotof, 64) ? SG_OK : sg__nomem(ctx);
    if (!s)
        s = sg_env_produce_guards_text(env, flags, &items, &texts, &sides, &nitems);
    /* the slots: every symbol the shape guards read, in order of appearance */
    for (size_t i = 0; i < nitems && !s; i++) {
        const sg_expr **fs;
        size_t nfs;
        if ((s = sg_expr_free_symbols(ctx, &fs, &nfs, items[i])))
            break;
        for (size_t k = 0; k < nfs && !s; k++) {
            if (sg__idmap_find(&B.slotof, fs[k]->id))
                continue;
            const sg_expr **ns = sg__realloc(ctx, slots, (nslots + 1) * sizeof *ns);
            if (!ns || !sg__idmap_put(&B.slotof, fs[k]->id, nslots)) {
                if (ns)
                    slots = ns;
                s = sg__nomem(ctx);
                break;
            }
            slots = ns;
            slots[nslots++] = fs[k];
        }
        sg_free(fs);
    }
    if (!s)
        s = sg_guard_prog_compile(ctx, &B.g->prog, items, nitems, slots, nslots);
    if (!s && !(B.g->said = sg__calloc(ctx, nitems ? nitems : 1, sizeof *B.g->said)))
        s = sg__nomem(ctx);
    if (!s) { /* the failure message names a guard by the text produce_guards gives it */
        B.g->texts = texts;
        texts = NULL;
        for (size_t i = 0; i < nitems; i++)
            B.g->said[i] = (sg__gp_said){B.g->texts[i], sides[2 * i], sides[2 * i + 1],
                                         sides[2 * i] && sg_expr_op(items[i]) == SG_OP_GE0};
    }
    sg_env_free_guard_texts(texts, nitems);
    sg_free(sides);
    if (B.g) /* NULL when it could not be allocated */
        B.g->nslots = nslots;
    for (size_t i = 0; i < sg_inputs_count(in) && !s; i++) {
        const sg_fake *f = sg_inputs_fake(in, i);
        if (f) {
            s = add_tensor(&B, f);
        } else {
            gnode *n = new_node(&B);
            const char *name = sg_source_name(sg_inputs_source(in, i));
            if (!n || !(n->is_int = true) || !(n->source = sg__strdup(ctx, name)) || !(n->label = label_of(ctx, name)))
                s = sg__nomem(ctx);
            else
                s = slot_of(&B, name, &n->slot);
        }
        B.g->ninputs++;
    }
    /* every slot must be filled by an input */
    bool *filled = s ? NULL : sg__calloc(ctx, nslots + 1, sizeof *filled);
    if (!s && !filled)
        s = sg__nomem(ctx);
    for (size_t i = 0; !s && i < B.g->nnodes; i++) {
        const gnode *n = &B.g->nodes[i];
        if (n->is_int && n->slot != NONE)
            filled[n->slot] = true;
        for (size_t p = 0; !n->is_int && p < 2 * n->ndim + 1; p++)
            if (n->slots[p] != NONE)
                filled[n->slots[p]] = true;
    }
    for (size_t i = 0; i < nslots && !s; i++)
        if (!filled[i])
            s = sg__err(ctx, SG_EINVAL, "sg_guard_set_build: the guards read %s, which is not an input",
                        sg_expr_sym_name(slots[i]));
    sg_free(filled);
    sg__idmap_free(&B.slotof);
    sg_free(items);
    sg_free(slots);
    if (s) {
        sg_guard_set_free(B.g);
        return s;
    }
    *out = B.g;
    return SG_OK;
}

/* ---- checking ---------------------------------------------------------------- */

typedef struct walker {
    const sg_guard_set *g;
    int64_t *v; /* slot values */
    sg__buf *why; /* NULL: the hot path, no text */
} walker;

static int fail(walker *W, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int fail(walker *W, const char *fmt, ...)
{
    if (W->why) {
        char text[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        sg__buf_puts(W->why, text);
    }
    return SG_GUARD_FAIL;
}

static const char *prop_name[] = {"size", "stride", "storage offset"};

/* Check the value t against node *k (advanced past the node's subtree). */
static int walk_tensor(walker *W, size_t *k, const sg_tensor_value *t)
{
    const gnode *n = &W->g->nodes[(*k)++];
    if (!t)
        return fail(W, "%s: expected a tensor, got an integer", n->source);
    if (t->ndim != n->ndim)
        return fail(W, "tensor '%s' rank mismatch. expected %zu, actual %zu", n->label, n->ndim, t->ndim);
    int64_t cont[SG_MAX_DIMS];
    const int64_t *strides = t->strides;
    if (!strides) {
        if (!sg__contiguous_strides(n->ndim, t->sizes, cont))
            return fail(W, "tensor '%s' contiguous strides overflow int64", n->label);
        strides = cont;
    }
    size_t np = 2 * n->ndim + 1;
    for (size_t p = 0; p < np; p++) {
        int64_t val = p < n->ndim ? t->sizes[p] : p < 2 * n->ndim ? strides[p - n->ndim] : t->offset;
        size_t kind = p < n->ndim ? 0 : p < 2 * n->ndim ? 1 : 2, idx = kind == 1 ? p - n->ndim : p;
        if (val < 0)
            return fail(W, "tensor '%s' %s %s%zu is negative (%lld)", n->label, prop_name[kind],
                        kind == 2 ? "" : "at index ", kind == 2 ? (size_t)0 : idx, (long long)val);
        if (n->fixed[p] && val != n->want[p]) {
            if (kind == 2)
                return fail(W, "tensor '%s' storage offset mismatch. expected %lld, actual %lld", n->label,
                            (long long)n->want[p], (long long)val);
            return fail(W, "tensor '%s' %s mismatch at index %zu. expected %lld, actual %lld", n->label,
                        prop_name[kind], idx, (long long)n->want[p], (long long)val);
        }
        if (n->slots[p] != NONE)
            W->v[n->slots[p]] = val;
    }
    if (t->kind != n->kind) {
        if (!n->kind)
            return fail(W, "%s: expected a plain tensor, got subclass %s", n->source, t->kind->name);
        if (!t->kind)
            return fail(W, "%s: expected subclass %s, got a plain tensor", n->source, n->kind->name);
        return fail(W, "%s: expected subclass %s, got subclass %s", n->source, n->kind->name, t->kind->name);
    }
    if (!n->kind)
        return SG_GUARD_PASS;
    sg_flat fl = {0};
    sg_status s = n->kind->flatten(n->kind->user, t->obj, &fl);
    if (s != SG_OK)
        return s < 0 ? s : SG_EINVAL;
    bool same = fl.n == n->ninner;
    for (size_t i = 0; same && i < fl.n; i++)
        same = fl.names && fl.names[i] && !strcmp(fl.names[i], n->names[i]);
    if (!same) {
        if (W->why) {
            fail(W, "%s: inner tensors mismatch. expected [", n->source);
            for (size_t i = 0; i < n->ninner; i++)
                sg__buf_printf(W->why, "%s%s", i ? ", " : "", n->names[i]);
            sg__buf_puts(W->why, "], actual [");
            for (size_t i = 0; i < fl.n; i++)
                sg__buf_printf(W->why, "%s%s", i ? ", " : "", fl.names && fl.names[i] ? fl.names[i] : "?");
            sg__buf_puts(W->why, "]");
        }
        return SG_GUARD_FAIL;
    }
    bool meta_ok = n->kind->meta_equal
                       ? n->kind->meta_equal(n->kind->user, n->meta, n->metalen, fl.meta, fl.metalen) != 0
                       : fl.metalen == n->metalen && (!n->metalen || !memcmp(fl.meta, n->meta, n->metalen));
    if (!meta_ok)
        return fail(W, "%s: subclass %s metadata mismatch", n->source, n->kind->name);
    for (size_t i = 0; i < fl.n; i++) {
        int r = walk_tensor(W, k, &fl.inner[i]);
        if (r != SG_GUARD_PASS)
            return r;
    }
    return SG_GUARD_PASS;
}

/* Structural checks of every input; fills the slots. */
static int walk(walker *W, const sg_input_value *vals, size_t n)
{
    if (!W->g || !vals || n != W->g->ninputs)
        return SG_EINVAL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const gnode *node = &W->g->nodes[k];
        if (node->is_int) {
            k++;
            if (vals[i].tensor)
                return fail(W, "%s: expected an integer, got a tensor", node->source);
            if (node->slot != NONE)
                W->v[node->slot] = vals[i].value;
            continue;
        }
        int r = walk_tensor(W, &k, vals[i].tensor);
        if (r != SG_GUARD_PASS)
            return r;
    }
    return SG_GUARD_PASS;
}

#define STACK_SLOTS 256

int sg_guard_set_check(const sg_guard_set *g, const sg_input_value *vals, size_t n)
{
    if (!g)
        return SG_EINVAL;
    int64_t stack[STACK_SLOTS], *v = g->nslots <= STACK_SLOTS ? stack : sg__malloc(sg_guard_prog_ctx(g->prog), g->nslots * sizeof *v);
    if (!v)
        return SG_ENOMEM;
    walker W = {g, v, NULL};
    int r = walk(&W, vals, n);
    if (r == SG_GUARD_PASS)
        r = sg_guard_prog_check(g->prog, v, g->nslots, NULL);
    if (v != stack)
        sg_free(v);
    return r;
}

sg_status sg_guard_set_explain(const sg_guard_set *g, const sg_input_value *vals, size_t n, char **out)
{
    if (!g)
        return SG_EINVAL;
    sg_ctx *ctx = sg_guard_prog_ctx(g->prog);
    if (!out)
        return sg__err(ctx, SG_EINVAL, "sg_guard_set_explain: NULL argument");
    *out = NULL;
    if (!vals || n != g->ninputs)
        return sg__err(ctx, SG_EINVAL, "sg_guard_set_explain: %zu values for %zu inputs", n, g->ninputs);
    int64_t *v = sg__malloc(ctx, (g->nslots ? g->nslots : 1) * sizeof *v);
    sg__buf why = {.ctx = ctx};
    if (!v)
        return sg__nomem(ctx);
    walker W = {g, v, &why};
    int r = walk(&W, vals, n);
    sg_status s = SG_OK;
    if (r < 0) {
        s = sg__err(ctx, (sg_status)r, "sg_guard_set_explain: a subclass's flatten failed");
    } else if (r == SG_GUARD_PASS) {
        size_t failed;
        char *text = NULL;
        r = sg_guard_prog_check(g->prog, v, g->nslots, &failed);
        if (r != SG_GUARD_PASS && !(s = sg__gp_explain_said(ctx, &text, &failed, g->prog, v, g->nslots, g->said)))
            sg__buf_puts(&why, text);
        sg_free(text);
    }
    sg_free(v);
    if (!s && why.oom)
        s = sg__nomem(ctx);
    if (s || !why.n) {
        sg__buf_free(&why);
        return s;
    }
    *out = sg__buf_take(&why);
    return *out ? SG_OK : sg__nomem(ctx);
}
