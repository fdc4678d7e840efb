/* The source layer's internals shared by its files and the guard layer. */
#ifndef SG_SOURCE_PRIVATE_H
#define SG_SOURCE_PRIVATE_H

#include "shapeguard/source.h"

/* Record source -> e for env in the cache (a source recorded before keeps
 * its first expression). Errors: SG_ENOMEM. */
sg_status sg__symcache_put(sg_symcache *c, const sg_env *env, const char *source, const sg_expr *e);

/* The contiguous strides of nd sizes into st; false if a stride overflows
 * int64 (the product past the first dimension may). */
bool sg__contiguous_strides(size_t nd, const int64_t *sizes, int64_t *st);

/* The source of a fake that in handed out (its tensor's source). */
const sg_source *sg__fake_source(const sg_fake *f);

#endif
