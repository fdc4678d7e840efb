/* The operator registry: the rows of ops.def (every operator of
 * doc/program.md's list, and those the pipeline's passes produce, as
 * PyTorch 1.13 writes their schemas: tests/diff/schemas.test compares them
 * with the schemas of the installed PyTorch), the graph layer's columns, and
 * the index of Python spellings. Parsed once per registry; each schema must
 * print back exactly as written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "graph/ops.h"
#include "graph/tracer_private.h"

/* The graph layer's columns of every row; a rule, composite or row named
 * none is NULL / SG_OP_NONE. */
#define sg__meta_none NULL
#define sg__composite_none NULL
static const sg__opinfo info[] = {
#define OP(id, schema, rule, variant, kernel, composite, py, pyflags, tags, functional, inverse, derivative) \
    {schema, sg__meta_##rule, variant, sg__composite_##composite, py, pyflags, tags, SG_OP_##functional, \
     SG_OP_##inverse, SG_OP_##derivative},
#include "graph/ops.def"
#undef OP
};

#define NTABLE (sizeof info / sizeof info[0])
_Static_assert(NTABLE == SG_OP_COUNT, "one row per identifier");
_Static_assert(SG_OP_COUNT < SG_OP_NONE, "identifiers fit in 16 bits");

typedef struct {
    const char *name; /* the full name, in names[] */
    uint16_t at;      /* index into s */
} entry;

struct sg__opreg {
    sg__schema s[NTABLE];
    entry sorted[NTABLE]; /* by full name, for lookup */
    char names[NTABLE][2 * SG_SCHEMA_NAME];
    sg__pyop py[NTABLE];  /* by Python spelling, for lookup */
    size_t npy;
};

const sg__opinfo *sg__op_info(unsigned op)
{
    return op < NTABLE ? &info[op] : NULL;
}

bool sg__op_bumps_version(const sg__schema *s)
{
    unsigned op = s->op;
    return (s->flags & SG_OPF_MUTATES) && op != SG_OP_detach_ && op != SG_OP_requires_grad_ && op != SG_OP_resize_;
}

static int pyop_cmp(const void *a, const void *b)
{
    return strcmp(((const sg__pyop *)a)->py, ((const sg__pyop *)b)->py);
}

/* The Python spellings: each with its overloads in the table's order. */
static sg_status index_python(sg_ctx *ctx, sg__opreg *r)
{
    r->npy = 0;
    for (size_t i = 0; i < NTABLE; i++) {
        if (!info[i].py)
            continue;
        sg__pyop *p = NULL;
        for (size_t k = 0; k < r->npy && !p; k++)
            if (!strcmp(r->py[k].py, info[i].py))
                p = &r->py[k];
        if (!p)
            *(p = &r->py[r->npy++]) = (sg__pyop){.py = info[i].py, .flags = info[i].pyflags};
        if (p->n == SG_PYOP_OVERLOADS || p->flags != info[i].pyflags)
            return sg__err(ctx, SG_EINTERNAL, "operator table: Python spelling '%s': %s", info[i].py,
                           p->n == SG_PYOP_OVERLOADS ? "too many overloads" : "overloads with other PYFLAGS");
        p->any_out |= (r->s[i].flags & SG_OPF_OUT) != 0;
        p->s[p->n++] = &r->s[i];
    }
    qsort(r->py, r->npy, sizeof *r->py, pyop_cmp);
    return SG_OK;
}

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

sg_status sg__opreg_new(sg_ctx *ctx, sg__opreg **out)
{
    *out = NULL;
    sg__opreg *r = sg__malloc(ctx, sizeof *r);
    if (!r)
        return sg__nomem(ctx);
    /* every tracer makes one (an eager run too): that each row prints back as its text is checked once,
       by test_graph (test_every_operator_has_a_rule), not here (it took most of this function's time) */
    for (size_t i = 0; i < NTABLE; i++) {
        sg_status st = sg__schema_parse(ctx, &r->s[i], info[i].schema);
        if (st) { /* the table is ours: a schema that does not parse is a bug */
            char why[512];
            snprintf(why, sizeof why, "%s", sg_ctx_last_error_msg(ctx));
            sg_free(r);
            return sg__err(ctx, SG_EINTERNAL, "operator table: %s", why);
        }
        r->s[i].op = (uint16_t)i;
        sg__schema_full_name(&r->s[i], r->names[i]);
        r->sorted[i] = (entry){r->names[i], (uint16_t)i};
    }
    qsort(r->sorted, NTABLE, sizeof *r->sorted, entry_cmp);
    for (size_t i = 1; i < NTABLE; i++)
        if (!strcmp(r->sorted[i - 1].name, r->sorted[i].name)) {
            sg__err(ctx, SG_EINTERNAL, "operator table: '%s' twice", r->sorted[i].name);
            sg_free(r);
            return SG_EINTERNAL;
        }
    if (index_python(ctx, r)) {
        sg_free(r);
        return SG_EINTERNAL;
    }
    *out = r;
    return SG_OK;
}

void sg__opreg_free(sg__opreg *r)
{
    sg_free(r);
}

const sg__schema *sg__opreg_find(const sg__opreg *r, const char *full_name)
{
    entry key = {full_name, 0};
    const entry *e = bsearch(&key, r->sorted, NTABLE, sizeof *r->sorted, entry_cmp);
    return e ? &r->s[e->at] : NULL;
}

size_t sg__opreg_count(const sg__opreg *r)
{
    (void)r;
    return NTABLE;
}

const sg__schema *sg__opreg_at(const sg__opreg *r, size_t i)
{
    return i < NTABLE ? &r->s[i] : NULL;
}

const sg__schema *sg__opreg_op(const sg__opreg *r, unsigned op)
{
    return op < NTABLE ? &r->s[op] : NULL;
}

const sg__pyop *sg__opreg_pyop(const sg__opreg *r, const char *name)
{
    sg__pyop key = {.py = name};
    return bsearch(&key, r->py, r->npy, sizeof *r->py, pyop_cmp);
}
