/* The tool's demo tensor subclasses (for batteries and the demo):
 *   two     inner a and b, each shaped as the outer tensor;
 *   double  inner elem, whose dim 0 is half the outer's;
 *   scaled  inner data shaped as the outer, and an optional scale of its own
 *           shape; an integer ctx.
 * The object behind a value is a cli_tval (battery_tensor.c builds them). */
#include <string.h>

#include "tensor.h"

static sg_status flatten(void *user, const void *obj, sg_flat *out)
{
    const cli_tval *t = obj;
    (void)user;
    out->n = t->nflat;
    out->names = t->flat_names;
    out->inner = t->flat_inner;
    out->meta = t->has_ctx ? &t->ctxv : NULL;
    out->metalen = t->has_ctx ? sizeof t->ctxv : 0;
    return SG_OK;
}

/* two and scaled: the outer metadata is that of the first inner tensor. */
static sg_status unflatten_first(void *user, sg_ctx *ctx, const sg_fake *const *inner, size_t ninner,
                                 const void *meta, size_t metalen, const sg_fake *outer, size_t *ndim,
                                 const sg_expr **sizes, const sg_expr **strides)
{
    (void)user, (void)meta, (void)metalen, (void)outer;
    if (ninner == 0)
        return sg_ctx_set_error(ctx, SG_EINVAL, "no inner tensor");
    *ndim = inner[0]->ndim;
    memcpy(sizes, inner[0]->sizes, inner[0]->ndim * sizeof *sizes);
    memcpy(strides, inner[0]->strides, inner[0]->ndim * sizeof *strides);
    return SG_OK;
}

/* double: dim 0 is twice elem's; the strides are elem's. */
static sg_status unflatten_double(void *user, sg_ctx *ctx, const sg_fake *const *inner, size_t ninner,
                                  const void *meta, size_t metalen, const sg_fake *outer, size_t *ndim,
                                  const sg_expr **sizes, const sg_expr **strides)
{
    sg_status s = unflatten_first(user, ctx, inner, ninner, meta, metalen, outer, ndim, sizes, strides);
    const sg_expr *two;
    if (s)
        return s;
    if (*ndim == 0)
        return sg_ctx_set_error(ctx, SG_EINVAL, "elem has rank 0");
    if ((s = sg_expr_int(ctx, &two, 2)))
        return s;
    return sg_expr_mul(ctx, &sizes[0], two, sizes[0]);
}

static const sg_subclass_kind kinds[] = {
    {"two", flatten, unflatten_first, NULL, NULL},
    {"double", flatten, unflatten_double, NULL, NULL},
    {"scaled", flatten, unflatten_first, NULL, NULL},
};

const sg_subclass_kind *cli_subclass_kind(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (cli_eq(name, n, kinds[i].name))
            return &kinds[i];
    return NULL;
}

/* The inner attributes of a kind, in flatten order; optional ones may be
 * absent from a value. */
static const char *const attrs_two[] = {"a", "b"};
static const char *const attrs_double[] = {"elem"};
static const char *const attrs_scaled[] = {"data", "scale"};

size_t cli_subclass_attrs(const sg_subclass_kind *k, const char *const **names, size_t *nrequired)
{
    if (k == &kinds[0]) {
        *names = attrs_two;
        *nrequired = 2;
        return 2;
    }
    if (k == &kinds[1]) {
        *names = attrs_double;
        *nrequired = 1;
        return 1;
    }
    *names = attrs_scaled;
    *nrequired = 1;
    return 2;
}

int cli_subclass_has_ctx(const sg_subclass_kind *k)
{
    return k == &kinds[2];
}
