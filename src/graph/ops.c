/* The operator registry: the rows of ops.def (every operator of
 * doc/program.md's list, and those the pipeline's passes produce, as
 * PyTorch 1.13 writes their schemas: tests/diff/schemas.test compares them
 * with the schemas of the installed PyTorch), the graph layer's columns, and
 * the index of Python spellings. Parsed once per registry (each schema
 * prints back exactly as written: test_graph checks it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "graph/derivatives.h"
#include "graph/ops.h"
#include "graph/record.h"
#include "graph/tracer_private.h"

/* The graph layer's columns of every row; a rule, composite or row named
 * none is NULL / SG_OP_NONE. */
#define sg__meta_none NULL
#define sg__composite_none NULL
static const sg__deriv sg__d_none = {NULL, 0, 0, 0};
static const sg__opinfo info[] = {
#define OP(id, schema, rule, variant, kernel, composite, py, pyflags, tags, functional, inverse, derivative) \
    {schema, sg__meta_##rule, variant, sg__composite_##composite, py, pyflags, tags, SG_OP_##functional, \
     SG_OP_##inverse, &sg__d_##derivative},
#include "graph/ops.def"
#undef OP
};

#define NTABLE (sizeof info / sizeof info[0])
_Static_assert(NTABLE == SG_OP_COUNT, "one row per identifier");
_Static_assert(SG_OP_COUNT < SG_OP_NONE, "identifiers fit in 16 bits");

/* The lookups by name are open-addressed hash tables (every tracer makes a
 * registry, so every eager run: two sorts of the table cost more than the
 * rest of its making but the parsing): slot -> 1 + an index, 0 empty. */
#define SLOTS 1024
_Static_assert(SLOTS >= 2 * NTABLE && (SLOTS & (SLOTS - 1)) == 0, "the tables stay at most half full");

struct sg__opreg {
    sg__schema s[NTABLE];
    char names[NTABLE][2 * SG_SCHEMA_NAME];
    uint16_t by_name[SLOTS]; /* 1 + the row of a full name */
    sg__pyop py[NTABLE];     /* the Python spellings, in the order of their first rows */
    size_t npy;
    uint16_t by_py[SLOTS];   /* 1 + the index into py of a spelling */
};

/* FNV-1a of name, as the tables' first slot. */
static size_t slot_of(const char *name)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h & (SLOTS - 1);
}

/* The slot of name in the table (slots hold 1 + an index whose name is
 * name_at(r, index)), or the empty slot where it would go. */
static size_t probe(const sg__opreg *r, const uint16_t *table, const char *name,
                    const char *(*name_at)(const sg__opreg *, size_t))
{
    size_t i = slot_of(name);
    while (table[i] && strcmp(name_at(r, table[i] - 1u), name))
        i = (i + 1) & (SLOTS - 1);
    return i;
}

static const char *row_name(const sg__opreg *r, size_t i)
{
    return r->names[i];
}

static const char *py_name(const sg__opreg *r, size_t i)
{
    return r->py[i].py;
}

const sg__opinfo *sg__op_info(unsigned op)
{
    return op < NTABLE ? &info[op] : NULL;
}

bool sg__op_bumps_version(const sg__schema *s)
{
    unsigned op = s->op;
    return (s->flags & SG_OPF_MUTATES) && op != SG_OP_detach_ && op != SG_OP_requires_grad_ && op != SG_OP_resize_;
}

/* The Python spellings: each with its overloads in the table's order. */
static sg_status index_python(sg_ctx *ctx, sg__opreg *r)
{
    r->npy = 0;
    memset(r->by_py, 0, sizeof r->by_py);
    for (size_t i = 0; i < NTABLE; i++) {
        if (!info[i].py)
            continue;
        size_t at = probe(r, r->by_py, info[i].py, py_name);
        if (!r->by_py[at]) {
            r->py[r->npy] = (sg__pyop){.py = info[i].py, .flags = info[i].pyflags};
            r->by_py[at] = (uint16_t)++r->npy;
        }
        sg__pyop *p = &r->py[r->by_py[at] - 1u];
        if (p->n == SG_PYOP_OVERLOADS || p->flags != info[i].pyflags)
            return sg__err(ctx, SG_EINTERNAL, "operator table: Python spelling '%s': %s", info[i].py,
                           p->n == SG_PYOP_OVERLOADS ? "too many overloads" : "overloads with other PYFLAGS");
        p->any_out |= (r->s[i].flags & SG_OPF_OUT) != 0;
        p->s[p->n++] = &r->s[i];
    }
    return SG_OK;
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
        r->s[i].memo = sg__rmemo_rule(&r->s[i], info[i].rule);
        sg__schema_full_name(&r->s[i], r->names[i]);
    }
    memset(r->by_name, 0, sizeof r->by_name);
    for (size_t i = 0; i < NTABLE; i++) {
        size_t at = probe(r, r->by_name, r->names[i], row_name);
        if (r->by_name[at]) {
            sg__err(ctx, SG_EINTERNAL, "operator table: '%s' twice", r->names[i]);
            sg_free(r);
            return SG_EINTERNAL;
        }
        r->by_name[at] = (uint16_t)(i + 1);
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
    size_t at = probe(r, r->by_name, full_name, row_name);
    return r->by_name[at] ? &r->s[r->by_name[at] - 1u] : NULL;
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
    size_t at = probe(r, r->by_py, name, py_name);
    return r->by_py[at] ? &r->py[r->by_py[at] - 1u] : NULL;
}
