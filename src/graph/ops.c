/* The operator registry: every operator of spec/program.md's list, and
 * those the pipeline's passes produce, as PyTorch 1.13 writes their schemas
 * (tests/diff/schemas.test compares this table with the schemas of the
 * installed PyTorch). Parsed once per registry; each must print back
 * exactly as written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "graph/schema.h"

static const char *const table[] = {
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "mul.Tensor(Tensor self, Tensor other) -> Tensor",
    "mul.Scalar(Tensor self, Scalar other) -> Tensor",
    "div.Tensor(Tensor self, Tensor other) -> Tensor",
    "div.Scalar(Tensor self, Scalar other) -> Tensor",
    "rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "neg(Tensor self) -> Tensor",
    "reciprocal(Tensor self) -> Tensor",
    "abs(Tensor self) -> Tensor",
    "exp(Tensor self) -> Tensor",
    "log(Tensor self) -> Tensor",
    "sin(Tensor self) -> Tensor",
    "cos(Tensor self) -> Tensor",
    "tanh(Tensor self) -> Tensor",
    "relu(Tensor self) -> Tensor",
    "sigmoid(Tensor self) -> Tensor",
    "pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
    "pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
    "pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
    "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
    "clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
    "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
    "eq.Tensor(Tensor self, Tensor other) -> Tensor",
    "eq.Scalar(Tensor self, Scalar other) -> Tensor",
    "ne.Tensor(Tensor self, Tensor other) -> Tensor",
    "ne.Scalar(Tensor self, Scalar other) -> Tensor",
    "lt.Tensor(Tensor self, Tensor other) -> Tensor",
    "lt.Scalar(Tensor self, Scalar other) -> Tensor",
    "le.Tensor(Tensor self, Tensor other) -> Tensor",
    "le.Scalar(Tensor self, Scalar other) -> Tensor",
    "gt.Tensor(Tensor self, Tensor other) -> Tensor",
    "gt.Scalar(Tensor self, Scalar other) -> Tensor",
    "ge.Tensor(Tensor self, Tensor other) -> Tensor",
    "ge.Scalar(Tensor self, Scalar other) -> Tensor",
    "sum(Tensor self, *, ScalarType? dtype=None) -> Tensor",
    "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "mean(Tensor self, *, ScalarType? dtype=None) -> Tensor",
    "mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
    "amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
    "matmul(Tensor self, Tensor other) -> Tensor",
    "mm(Tensor self, Tensor mat2) -> Tensor",
    "bmm(Tensor self, Tensor mat2) -> Tensor",
    "mv(Tensor self, Tensor vec) -> Tensor",
    "dot(Tensor self, Tensor tensor) -> Tensor",
    "cat(Tensor[] tensors, int dim=0) -> Tensor",
    "stack(Tensor[] tensors, int dim=0) -> Tensor",
    "view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
    "expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
    "permute(Tensor(a) self, int[] dims) -> Tensor(a)",
    "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
    "t(Tensor(a) self) -> Tensor(a)",
    "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
    "squeeze(Tensor(a) self) -> Tensor(a)",
    "squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)",
    "select.int(Tensor(a) self, int dim, int index) -> Tensor(a)",
    "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)",
    "narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)",
    "unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
    "diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)",
    "flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
    "as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)",
    "detach(Tensor(a) self) -> Tensor(a)",
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
    "sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
    "mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
    "div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
    "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
    "zero_(Tensor(a!) self) -> Tensor(a!)",
    "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
    "fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)",
    "clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)",
    "sin_(Tensor(a!) self) -> Tensor(a!)",
    "t_(Tensor(a!) self) -> Tensor(a!)",
    "transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)",
    "unsqueeze_(Tensor(a!) self, int dim) -> Tensor(a!)",
    "squeeze_(Tensor(a!) self) -> Tensor(a!)",
    "squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)",
    "as_strided_(Tensor(a!) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a!)",
    "detach_(Tensor(a!) self) -> Tensor(a!)",
    "requires_grad_(Tensor(a!) self, bool requires_grad=True) -> Tensor(a!)",
    "set_.source_Tensor(Tensor(a!) self, Tensor source) -> Tensor(a!)",
    "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    "div.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    "neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    "zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
    "contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)",
    "nonzero(Tensor self) -> Tensor",
    "item(Tensor self) -> Scalar",
    "masked_select(Tensor self, Tensor mask) -> Tensor",
    "_local_scalar_dense(Tensor self) -> Scalar",
    "sym_size.int(Tensor self, int dim) -> SymInt",
    "sym_stride.int(Tensor self, int dim) -> SymInt",
    "sym_storage_offset(Tensor self) -> SymInt",
    "_unsafe_view(Tensor self, SymInt[] size) -> Tensor",
    "alias(Tensor(a) self) -> Tensor(a)",
    "copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor",
    "as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor",
    "slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor",
    "select_scatter(Tensor self, Tensor src, int dim, int index) -> Tensor",
};

#define NTABLE (sizeof table / sizeof table[0])

typedef struct {
    const char *name; /* the full name, in names[] */
    uint16_t at;      /* index into s */
} entry;

struct sg__opreg {
    sg__schema s[NTABLE];
    entry sorted[NTABLE]; /* by full name, for lookup */
    char names[NTABLE][2 * SG_SCHEMA_NAME];
};

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
    for (size_t i = 0; i < NTABLE; i++) {
        char back[1024];
        sg_status st = sg__schema_parse(ctx, &r->s[i], table[i]);
        if (st) { /* the table is ours: a schema that does not parse is a bug */
            char why[512];
            snprintf(why, sizeof why, "%s", sg_ctx_last_error_msg(ctx));
            sg_free(r);
            return sg__err(ctx, SG_EINTERNAL, "operator table: %s", why);
        }
        if (sg__schema_print(&r->s[i], back, sizeof back) >= sizeof back || strcmp(back, table[i])) {
            sg_free(r);
            return sg__err(ctx, SG_EINTERNAL, "operator table: '%s' prints back as '%s'", table[i], back);
        }
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
