/* Sources (a small tree printed as PyTorch prints it) and the
 * source-to-symbol cache that lives outside the shape environments. */
#include <stdlib.h>
#include <string.h>

#include "expr/expr_private.h"
#include "shapeguard/source.h"

struct sg_source {
    sg_source_kind kind;
    const sg_source *base;
    size_t index;
    const char *ident; /* LOCAL, NAMED, ATTR */
    const char *name;  /* the printed text */
};

static bool is_ident(const char *s)
{
    if (!s || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
        return false;
    for (s++; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
            return false;
    return true;
}

static sg_status make(sg_ctx *ctx, const sg_source **out, sg_source_kind kind, const sg_source *base, size_t index,
                      const char *ident)
{
    sg__buf b = {.ctx = ctx};
    if (kind == SG_SOURCE_LOCAL)
        sg__buf_printf(&b, "L['%s']", ident);
    else if (kind == SG_SOURCE_NAMED)
        sg__buf_puts(&b, ident);
    else if (kind == SG_SOURCE_ATTR)
        sg__buf_printf(&b, "%s.%s", base->name, ident);
    else if (kind == SG_SOURCE_OFFSET)
        sg__buf_printf(&b, "%s.storage_offset()", base->name);
    else
        sg__buf_printf(&b, "%s.%s()[%zu]", base->name, kind == SG_SOURCE_SIZE ? "size" : "stride", index);
    char *text = sg__buf_take(&b);
    sg_source *s = text ? sg__arena_alloc(ctx, sizeof *s) : NULL;
    const char *name = s ? sg__arena_strdup(ctx, text, strlen(text)) : NULL;
    const char *id = ident && name ? sg__arena_strdup(ctx, ident, strlen(ident)) : NULL;
    sg_free(text);
    if (!name || (ident && !id))
        return sg__nomem(ctx);
    *s = (sg_source){kind, base, index, id, name};
    *out = s;
    return SG_OK;
}

static sg_status named(sg_ctx *ctx, const sg_source **out, const char *name, sg_source_kind kind, const char *fn)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out || !name)
        return sg__err(ctx, SG_EINVAL, "%s: NULL argument", fn);
    if (!is_ident(name))
        return sg__err(ctx, SG_EINVAL, "%s: '%s' is not an identifier", fn, name);
    return make(ctx, out, kind, NULL, 0, name);
}

sg_status sg_source_local(sg_ctx *ctx, const sg_source **out, const char *name)
{
    return named(ctx, out, name, SG_SOURCE_LOCAL, "sg_source_local");
}

sg_status sg_source_named(sg_ctx *ctx, const sg_source **out, const char *name)
{
    return named(ctx, out, name, SG_SOURCE_NAMED, "sg_source_named");
}

static bool is_property(const sg_source *s)
{
    return s->kind == SG_SOURCE_SIZE || s->kind == SG_SOURCE_STRIDE || s->kind == SG_SOURCE_OFFSET;
}

sg_status sg_source_attr(sg_ctx *ctx, const sg_source **out, const sg_source *base, const char *attr)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out || !base || !attr)
        return sg__err(ctx, SG_EINVAL, "sg_source_attr: NULL argument");
    if (!is_ident(attr))
        return sg__err(ctx, SG_EINVAL, "sg_source_attr: '%s' is not an identifier", attr);
    if (is_property(base))
        return sg__err(ctx, SG_EINVAL, "sg_source_attr: %s is an integer, it has no attributes", base->name);
    return make(ctx, out, SG_SOURCE_ATTR, base, 0, attr);
}

sg_status sg_source_property(sg_ctx *ctx, const sg_source **out, const sg_source *base, sg_source_kind kind,
                             size_t i)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out || !base)
        return sg__err(ctx, SG_EINVAL, "sg_source_property: NULL argument");
    if (kind != SG_SOURCE_SIZE && kind != SG_SOURCE_STRIDE && kind != SG_SOURCE_OFFSET)
        return sg__err(ctx, SG_EINVAL, "sg_source_property: kind %d is not a tensor property", (int)kind);
    if (is_property(base))
        return sg__err(ctx, SG_EINVAL, "sg_source_property: %s is an integer, not a tensor", base->name);
    return make(ctx, out, kind, base, kind == SG_SOURCE_OFFSET ? 0 : i, NULL);
}

sg_source_kind sg_source_get_kind(const sg_source *s)
{
    return s->kind;
}

const sg_source *sg_source_base(const sg_source *s)
{
    return s->base;
}

size_t sg_source_index(const sg_source *s)
{
    return s->index;
}

const char *sg_source_ident(const sg_source *s)
{
    return s->ident;
}

const char *sg_source_name(const sg_source *s)
{
    return s->name;
}

/* ---- the source-to-symbol cache ------------------------------------------ */

/* One table per environment: the symbol named by the source (interned, so
 * its id is a key) -> the recorded expression. */
typedef struct envtab {
    uint64_t serial;
    sg__idmap map;
    const sg_expr **vals;
    size_t n, cap;
} envtab;

struct sg_symcache {
    sg_ctx *ctx;
    envtab *t;
    size_t n, cap;
};

sg_status sg_symcache_new(sg_ctx *ctx, sg_symcache **out)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out)
        return sg__err(ctx, SG_EINVAL, "sg_symcache_new: NULL argument");
    *out = sg__calloc(ctx, 1, sizeof **out);
    if (!*out)
        return sg__nomem(ctx);
    (*out)->ctx = ctx;
    return SG_OK;
}

void sg_symcache_free(sg_symcache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        sg__idmap_free(&c->t[i].map);
        sg_free(c->t[i].vals);
    }
    sg_free(c->t);
    sg_free(c);
}

static envtab *table_of(const sg_symcache *c, const sg_env *env)
{
    uint64_t serial = sg_env_serial(env);
    for (size_t i = 0; i < c->n; i++)
        if (c->t[i].serial == serial)
            return &c->t[i];
    return NULL;
}

const sg_expr *sg_symcache_get(const sg_symcache *c, const sg_env *env, const char *source)
{
    if (!c || !env || !source)
        return NULL;
    envtab *t = table_of(c, env);
    const sg_expr *key;
    if (!t || sg_expr_sym(c->ctx, &key, source) != SG_OK)
        return NULL;
    size_t *v = sg__idmap_find(&t->map, key->id);
    return v ? t->vals[*v] : NULL;
}

size_t sg_symcache_size(const sg_symcache *c)
{
    size_t n = 0;
    for (size_t i = 0; c && i < c->n; i++)
        n += c->t[i].n;
    return n;
}

/* Record source -> e for env (the first record of a source stays). */
sg_status sg__symcache_put(sg_symcache *c, const sg_env *env, const char *source, const sg_expr *e)
{
    sg_ctx *ctx = c->ctx;
    envtab *t = table_of(c, env);
    if (!t) {
        if (c->n == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 4;
            envtab *nt = sg__realloc(ctx, c->t, cap * sizeof *nt);
            if (!nt)
                return sg__nomem(c->ctx);
            c->t = nt;
            c->cap = cap;
        }
        t = &c->t[c->n];
        *t = (envtab){.serial = sg_env_serial(env)};
        if (!sg__idmap_init(ctx, &t->map, 16)) {
            sg__idmap_free(&t->map);
            return sg__nomem(c->ctx);
        }
        c->n++;
    }
    const sg_expr *key;
    sg_status s = sg_expr_sym(c->ctx, &key, source);
    if (s)
        return s;
    if (sg__idmap_find(&t->map, key->id))
        return SG_OK;
    if (!sg__grow(ctx, (void **)&t->vals, &t->cap, t->n + 1, sizeof *t->vals))
        return sg__nomem(c->ctx);
    if (!sg__idmap_put(&t->map, key->id, t->n))
        return sg__nomem(c->ctx);
    t->vals[t->n++] = e;
    return SG_OK;
}
