/* Serializing a guard program and reading it back (guard.h).
 *
 * Format version 1, all integers little-endian:
 *   "SGGP"  u32 version  u64 total length (including the checksum)
 *   u32 nslots  u32 nnodes  u32 nguards
 *   slots:  nslots x (u32 length, that many bytes of the symbol's name)
 *   nodes:  nnodes x (u8 op, u32 nargs, nargs x u32 index of an earlier node,
 *           payload: INT a number; SYM u32 slot index; ADD a number (the
 *           constant) then nargs numbers (coefficients); MUL nargs numbers
 *           (exponents))
 *   guards: nguards x u32 node index
 *   u64 FNV-1a hash of every byte before it
 * A number is u32 length then its decimal digits (an optional '-' first).
 * The nodes are the guards' DAG in post-order, each distinct node once. */
#include <stdlib.h>
#include <string.h>

#include "guard/guard_private.h"

#define MAGIC "SGGP"
#define HEADER 28

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* ---- writing ---- */

typedef struct wbuf {
    sg_ctx *ctx; /* whose allocator */
    uint8_t *p;
    size_t n, cap;
    bool oom;
} wbuf;

static void put(wbuf *b, const void *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->n + n)
            c *= 2;
        uint8_t *q = sg__realloc(b->ctx, b->p, c);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = c;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static void put_le(wbuf *b, uint64_t v, size_t n)
{
    uint8_t t[8];
    for (size_t i = 0; i < n; i++)
        t[i] = (uint8_t)(v >> (8 * i));
    put(b, t, n);
}

static void put_num(wbuf *b, const fmpz *v)
{
    char *s = fmpz_get_str(NULL, 10, v);
    if (!s) {
        b->oom = true;
        return;
    }
    size_t n = strlen(s);
    put_le(b, n, 4);
    put(b, s, n);
    flint_free(s);
}

typedef struct writer {
    wbuf b;
    sg__idmap idx; /* node id -> index */
    uint32_t nnodes;
    const sg_guard_prog *p;
} writer;

static bool put_node(writer *W, const sg_expr *e)
{
    if (sg__idmap_find(&W->idx, e->id))
        return true;
    for (size_t i = 0; i < e->nargs; i++)
        if (!put_node(W, e->args[i]))
            return false;
    put_le(&W->b, e->op, 1);
    put_le(&W->b, e->nargs, 4);
    for (size_t i = 0; i < e->nargs; i++)
        put_le(&W->b, *sg__idmap_find(&W->idx, e->args[i]->id), 4);
    if (e->op == SG_OP_INT || e->op == SG_OP_ADD)
        put_num(&W->b, &e->u.val);
    if (e->op == SG_OP_SYM)
        put_le(&W->b, *sg__idmap_find(&W->p->slotmap, e->id), 4);
    if (e->op == SG_OP_ADD || e->op == SG_OP_MUL)
        for (size_t i = 0; i < e->nargs; i++)
            put_num(&W->b, sg__nums(e) + i);
    return sg__idmap_put(&W->idx, e->id, W->nnodes++);
}

sg_status sg_guard_prog_serialize(sg_ctx *ctx, uint8_t **out, size_t *len, const sg_guard_prog *p)
{
    sg_status s = sg__gp_check_ctx(ctx, p, "sg_guard_prog_serialize");
    if (s)
        return s;
    if (!out || !len)
        return sg__err(ctx, SG_EINVAL, "sg_guard_prog_serialize: out or len is NULL");
    *out = NULL;
    *len = 0;
    writer W = {.b = {.ctx = p->ctx}, .p = p};
    if (!sg__idmap_init(ctx, &W.idx, 64)) {
        sg__idmap_free(&W.idx);
        return sg__nomem(ctx);
    }
    put(&W.b, MAGIC, 4);
    put_le(&W.b, SG_GUARD_BLOB_VERSION, 4);
    put_le(&W.b, 0, 8); /* total length, set below */
    put_le(&W.b, p->nslots, 4);
    put_le(&W.b, 0, 4); /* nnodes, set below */
    put_le(&W.b, p->nguards, 4);
    for (size_t i = 0; i < p->nslots; i++) {
        const char *name = p->slots[i]->u.name;
        put_le(&W.b, strlen(name), 4);
        put(&W.b, name, strlen(name));
    }
    bool ok = true;
    for (size_t g = 0; g < p->nguards && ok; g++)
        ok = put_node(&W, p->guards[g]);
    for (size_t g = 0; g < p->nguards && ok; g++)
        put_le(&W.b, *sg__idmap_find(&W.idx, p->guards[g]->id), 4);
    sg__idmap_free(&W.idx);
    if (!ok || W.b.oom || W.b.n + 8 < HEADER) {
        sg_free(W.b.p);
        return sg__nomem(ctx);
    }
    uint64_t total = W.b.n + 8;
    for (size_t i = 0; i < 8; i++)
        W.b.p[8 + i] = (uint8_t)(total >> (8 * i));
    for (size_t i = 0; i < 4; i++)
        W.b.p[20 + i] = (uint8_t)(W.nnodes >> (8 * i));
    put_le(&W.b, fnv1a(W.b.p, W.b.n), 8);
    if (W.b.oom) {
        sg_free(W.b.p);
        return sg__nomem(ctx);
    }
    *out = W.b.p;
    *len = W.b.n;
    return SG_OK;
}

/* ---- reading ---- */

typedef struct reader {
    sg_ctx *ctx;
    const uint8_t *p, *end;
    const char *what; /* the first problem */
} reader;

static uint64_t get_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static bool get(reader *R, uint64_t *v, size_t n)
{
    if ((size_t)(R->end - R->p) < n) {
        R->what = "truncated encoding";
        return false;
    }
    *v = get_le(R->p, n);
    R->p += n;
    return true;
}

static bool get_u32(reader *R, uint32_t *v)
{
    uint64_t t;
    if (!get(R, &t, 4))
        return false;
    *v = (uint32_t)t;
    return true;
}

/* A decimal number into v. */
static bool get_num(reader *R, fmpz_t v)
{
    sg_ctx *ctx = R->ctx;
    uint32_t n;
    if (!get_u32(R, &n))
        return false;
    if (n == 0 || n > (size_t)(R->end - R->p) || n > (1u << 24)) {
        R->what = "bad number length";
        return false;
    }
    const char *s = (const char *)R->p;
    size_t i = s[0] == '-';
    if (i == n) {
        R->what = "malformed number";
        return false;
    }
    for (size_t j = i; j < n; j++)
        if (s[j] < '0' || s[j] > '9') {
            R->what = "malformed number";
            return false;
        }
    char *t = sg__malloc(ctx, n + 1);
    if (!t) {
        R->what = NULL;
        return false;
    }
    memcpy(t, s, n);
    t[n] = '\0';
    int rc = fmpz_set_str(v, t, 10);
    sg_free(t);
    if (rc) {
        R->what = "malformed number";
        return false;
    }
    R->p += n;
    return true;
}

static size_t arity_min(sg_op op)
{
    switch (op) {
    case SG_OP_INT: case SG_OP_TRUE: case SG_OP_FALSE: case SG_OP_SYM: return 0;
    case SG_OP_ADD: case SG_OP_MUL: case SG_OP_ABS: case SG_OP_GE0: case SG_OP_EQ0: case SG_OP_NE0: return 1;
    case SG_OP_WHERE: return 3;
    default: return 2;
    }
}

static bool arity_ok(sg_op op, size_t n)
{
    switch (op) {
    case SG_OP_ADD: case SG_OP_MUL: case SG_OP_MIN: case SG_OP_MAX:
    case SG_OP_BAND: case SG_OP_BOR: case SG_OP_BXOR: case SG_OP_AND: case SG_OP_OR:
        return n >= arity_min(op);
    default:
        return n == arity_min(op);
    }
}

/* Node op over args a with numbers nums (ADD: constant then coefficients;
 * MUL: exponents). NULL with the context's error on failure. */
static const sg_expr *build(sg_ctx *ctx, sg_op op, size_t n, const sg_expr **a, fmpz *nums)
{
    const sg_expr *r = NULL;
    sg_status s = SG_OK;
    switch (op) {
    case SG_OP_ADD: {
        sg__poly q;
        sg__poly_init(&q);
        bool ok = true;
        for (size_t i = 0; i < n && ok; i++)
            ok = sg__poly_addmul_expr(ctx, &q, nums + 1 + i, a[i]);
        fmpz_set(&q.c, nums);
        r = ok ? sg__poly_get(ctx, &q) : NULL;
        sg__poly_clear(&q);
        return r;
    }
    case SG_OP_MUL:
        r = ctx->one;
        for (size_t i = 0; i < n && r; i++) {
            const sg_expr *k = sg__int_fmpz(ctx, nums + i);
            const sg_expr *f = k ? sg__pow(ctx, a[i], k) : NULL;
            r = f ? sg__mul(ctx, r, f) : NULL;
        }
        return r;
    case SG_OP_POW: s = sg_expr_pow(ctx, &r, a[0], a[1]); break;
    case SG_OP_FLOORDIV: s = sg_expr_floordiv(ctx, &r, a[0], a[1]); break;
    case SG_OP_MOD: s = sg_expr_mod(ctx, &r, a[0], a[1]); break;
    case SG_OP_CLEANDIV: s = sg_expr_cleandiv(ctx, &r, a[0], a[1]); break;
    case SG_OP_TRUNCDIV: s = sg_expr_truncdiv(ctx, &r, a[0], a[1]); break;
    case SG_OP_TRUNCMOD: s = sg_expr_truncmod(ctx, &r, a[0], a[1]); break;
    case SG_OP_MIN: s = sg_expr_min(ctx, &r, n, a); break;
    case SG_OP_MAX: s = sg_expr_max(ctx, &r, n, a); break;
    case SG_OP_ABS: s = sg_expr_abs(ctx, &r, a[0]); break;
    case SG_OP_WHERE: s = sg_expr_where(ctx, &r, a[0], a[1], a[2]); break;
    case SG_OP_BAND:
    case SG_OP_BOR:
    case SG_OP_BXOR:
        r = a[0];
        for (size_t i = 1; i < n && !s; i++)
            s = op == SG_OP_BAND ? sg_expr_band(ctx, &r, r, a[i])
              : op == SG_OP_BOR  ? sg_expr_bor(ctx, &r, r, a[i])
                                 : sg_expr_bxor(ctx, &r, r, a[i]);
        break;
    case SG_OP_GE0:
    case SG_OP_EQ0:
    case SG_OP_NE0:
        s = sg_expr_rel(ctx, &r, op == SG_OP_GE0 ? SG_REL_GE : op == SG_OP_EQ0 ? SG_REL_EQ : SG_REL_NE, a[0],
                        ctx->zero);
        break;
    case SG_OP_AND: s = sg_expr_and(ctx, &r, n, a); break;
    case SG_OP_OR: s = sg_expr_or(ctx, &r, n, a); break;
    default: s = sg__err(ctx, SG_EINTERNAL, "build: node kind %d", op);
    }
    return s ? NULL : r;
}

typedef struct blob {
    uint32_t nslots, nnodes, nguards;
    const sg_expr **slots, **nodes, **guards;
} blob;

static bool read_slots(reader *R, blob *B)
{
    sg_ctx *ctx = R->ctx;
    for (uint32_t i = 0; i < B->nslots; i++) {
        uint32_t n;
        if (!get_u32(R, &n))
            return false;
        if (n == 0 || n > (size_t)(R->end - R->p) || memchr(R->p, 0, n)) {
            R->what = "bad slot name";
            return false;
        }
        char *name = sg__malloc(ctx, n + 1);
        if (!name) {
            R->what = NULL;
            return false;
        }
        memcpy(name, R->p, n);
        name[n] = '\0';
        R->p += n;
        sg_status s = sg_expr_sym(R->ctx, &B->slots[i], name);
        sg_free(name);
        if (s) {
            R->what = s == SG_ENOMEM ? NULL : "bad slot name";
            return false;
        }
    }
    return true;
}

/* One node: its arguments and numbers, validated, then built. */
static bool read_node(reader *R, blob *B, uint32_t i)
{
    sg_ctx *ctx = R->ctx;
    uint64_t op;
    uint32_t n;
    if (!get(R, &op, 1) || !get_u32(R, &n))
        return false;
    if (op >= SG_OP_COUNT_ || !arity_ok((sg_op)op, n) || n > (size_t)(R->end - R->p) / 4) {
        R->what = "bad node kind or number of arguments";
        return false;
    }
    const sg_expr **a = sg__malloc(ctx, (n ? n : 1) * sizeof *a);
    size_t nn = op == SG_OP_ADD ? n + 1 : op == SG_OP_MUL ? n : op == SG_OP_INT ? 1 : 0;
    fmpz *nums = sg__calloc(ctx, nn ? nn : 1, sizeof *nums); /* zeroed fmpz are initialized zeros */
    bool ok = a && nums;
    if (!ok)
        R->what = NULL;
    for (uint32_t j = 0; j < n && ok; j++) {
        uint32_t k;
        ok = get_u32(R, &k);
        if (ok && k >= i) {
            R->what = "argument is not an earlier node";
            ok = false;
        }
        if (ok)
            a[j] = B->nodes[k];
        if (ok && (op == SG_OP_ADD || op == SG_OP_MUL) && a[j]->sort != SG_SORT_INT) {
            R->what = "a term or factor of the wrong sort";
            ok = false;
        }
    }
    for (size_t j = 0; j < nn && ok; j++)
        ok = get_num(R, nums + j);
    if (ok && op == SG_OP_MUL)
        for (size_t j = 0; j < nn && ok; j++)
            /* any positive exponent of an atom (the core keeps x**(2**70) as
             * a factor); a sum's power is expanded, so only a small one */
            if (fmpz_sgn(nums + j) <= 0 || (!sg__is_atom(a[j]) && fmpz_cmp_ui(nums + j, 64) > 0)) {
                R->what = "bad exponent";
                ok = false;
            }
    const sg_expr *r = NULL;
    if (ok) {
        uint32_t slot;
        switch ((sg_op)op) {
        case SG_OP_INT: r = sg__int_fmpz(R->ctx, nums); break;
        case SG_OP_TRUE: r = R->ctx->t; break;
        case SG_OP_FALSE: r = R->ctx->f; break;
        case SG_OP_SYM:
            ok = get_u32(R, &slot);
            if (ok && slot >= B->nslots) {
                R->what = "bad slot index";
                ok = false;
            }
            if (ok)
                r = B->slots[slot];
            break;
        default: r = build(R->ctx, (sg_op)op, n, a, nums);
        }
        if (ok && !r) {
            sg_status s = sg_ctx_last_error(R->ctx);
            R->what = s == SG_ENOMEM ? NULL : s == SG_ELIMIT ? "a node beyond the context's limits" : "malformed node";
            ok = false;
        }
    }
    for (size_t j = 0; nums && j < nn; j++)
        fmpz_clear(nums + j);
    sg_free(nums);
    sg_free(a);
    B->nodes[i] = r;
    return ok;
}

static bool read_body(reader *R, blob *B)
{
    if (!read_slots(R, B))
        return false;
    for (uint32_t i = 0; i < B->nnodes; i++)
        if (!read_node(R, B, i))
            return false;
    for (uint32_t g = 0; g < B->nguards; g++) {
        uint32_t k;
        if (!get_u32(R, &k))
            return false;
        if (k >= B->nnodes) {
            R->what = "bad guard index";
            return false;
        }
        B->guards[g] = B->nodes[k];
    }
    if (R->p != R->end) {
        R->what = "trailing bytes";
        return false;
    }
    return true;
}

static sg_status bad(sg_ctx *ctx, const char *what)
{
    return sg__err(ctx, SG_EINVAL, "sg_guard_prog_deserialize: not a valid guard program blob: %s", what);
}

sg_status sg_guard_prog_deserialize(sg_ctx *ctx, sg_guard_prog **out, const uint8_t *data, size_t len)
{
    if (!ctx)
        return SG_EINVAL;
    if (!out || !data)
        return sg__err(ctx, SG_EINVAL, "sg_guard_prog_deserialize: out or data is NULL");
    *out = NULL;
    if (len < HEADER + 8)
        return bad(ctx, "truncated (shorter than the header)");
    if (memcmp(data, MAGIC, 4))
        return bad(ctx, "bad magic");
    uint32_t version = (uint32_t)get_le(data + 4, 4);
    if (version != SG_GUARD_BLOB_VERSION)
        return sg__err(ctx, SG_EINVAL, "sg_guard_prog_deserialize: format version %u, expected %d", version,
                       SG_GUARD_BLOB_VERSION);
    if (get_le(data + 8, 8) != len)
        return bad(ctx, "the length does not match (truncated or padded)");
    if (fnv1a(data, len - 8) != get_le(data + len - 8, 8))
        return bad(ctx, "checksum mismatch (corrupted)");
    blob B = {0};
    B.nslots = (uint32_t)get_le(data + 16, 4);
    B.nnodes = (uint32_t)get_le(data + 20, 4);
    B.nguards = (uint32_t)get_le(data + 24, 4);
    size_t body = len - 8 - HEADER;
    if (B.nslots > body / 4 || B.nnodes > body / 5 || B.nguards > body / 4)
        return bad(ctx, "counts larger than the blob");
    B.slots = sg__calloc(ctx, B.nslots ? B.nslots : 1, sizeof *B.slots);
    B.nodes = sg__calloc(ctx, B.nnodes ? B.nnodes : 1, sizeof *B.nodes);
    B.guards = sg__calloc(ctx, B.nguards ? B.nguards : 1, sizeof *B.guards);
    sg_status s = SG_OK;
    if (!B.slots || !B.nodes || !B.guards) {
        s = sg__nomem(ctx);
    } else {
        reader R = {.ctx = ctx, .p = data + HEADER, .end = data + len - 8, .what = "?"};
        if (!read_body(&R, &B))
            s = R.what ? bad(ctx, R.what) : sg__nomem(ctx);
        else
            s = sg_guard_prog_compile(ctx, out, B.guards, B.nguards, B.slots, B.nslots);
    }
    sg_free(B.slots);
    sg_free(B.nodes);
    sg_free(B.guards);
    return s;
}
