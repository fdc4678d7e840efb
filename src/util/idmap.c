/* A map from node id to a slot index (open addressing, linear probing).
 * Ids start at 1, so 0 marks an empty slot. */
#include <stdlib.h>

#include "util/util_private.h"

bool sg__idmap_init(sg_ctx *ctx, sg__idmap *m, size_t hint)
{
    size_t cap = 64;
    while (cap < hint * 2)
        cap *= 2;
    m->ctx = ctx;
    m->used = 0;
    m->keys = sg__calloc(ctx, cap, sizeof *m->keys);
    m->vals = sg__calloc(ctx, cap, sizeof *m->vals);
    if (!m->keys || !m->vals) { /* empty and unallocated, as zero-initialized */
        sg__idmap_free(m);
        return false;
    }
    m->cap = cap;
    return true;
}

void sg__idmap_free(sg__idmap *m)
{
    sg_free(m->keys);
    sg_free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->used = 0;
}

void sg__idmap_reset(sg__idmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        m->keys[i] = 0;
    m->used = 0;
}

size_t *sg__idmap_find(const sg__idmap *m, uint32_t id)
{
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1;
    for (size_t j = (id * 2654435761u) & mask; m->keys[j]; j = (j + 1) & mask)
        if (m->keys[j] == id)
            return &m->vals[j];
    return NULL;
}

bool sg__idmap_put(sg__idmap *m, uint32_t id, size_t v)
{
    if ((m->used + 1) * 2 > m->cap) {
        sg__idmap big;
        if (!sg__idmap_init(m->ctx, &big, m->cap ? m->cap : 32)) {
            sg__idmap_free(&big);
            return false;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i])
                sg__idmap_put(&big, m->keys[i], m->vals[i]);
        sg__idmap_free(m);
        *m = big;
    }
    size_t mask = m->cap - 1, j = (id * 2654435761u) & mask;
    while (m->keys[j] && m->keys[j] != id)
        j = (j + 1) & mask;
    if (!m->keys[j])
        m->used++;
    m->keys[j] = id;
    m->vals[j] = v;
    return true;
}
