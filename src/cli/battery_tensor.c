/* Battery commands of tensor inputs: tensor, subclass, refakify, call. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "battery.h"
#include "tensor.h"

/* ---- reading values ---------------------------------------------------------- */

static int read_i64(const char *w, size_t n, int64_t *out)
{
    cli_trim(&w, &n);
    if (!n || n > 24)
        return 0;
    char buf[32], *end;
    memcpy(buf, w, n);
    buf[n] = '\0';
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || *end || end == buf)
        return 0;
    *out = v;
    return 1;
}

/* Why the n bytes at w are no int64, for messages: an integer of more
 * digits than int64 holds, or text that is no integer. */
static const char *not_i64(const char *w, size_t n)
{
    cli_trim(&w, &n);
    size_t sign = n && (w[0] == '-' || w[0] == '+');
    if (n > sign && strspn(w + sign, "0123456789") >= n - sign)
        return "beyond int64";
    return "not an integer";
}

/* "[a, b, ...]" (the brackets included in w): the items between commas. */
static int read_list(const char *w, size_t n, const char **items, size_t *lens, size_t max, size_t *count)
{
    cli_trim(&w, &n);
    if (n < 2 || w[0] != '[' || w[n - 1] != ']')
        return 0;
    const char *s = w + 1, *end = w + n - 1;
    *count = 0;
    size_t inner = (size_t)(end - s);
    const char *q = s;
    cli_trim(&q, &inner);
    if (!inner)
        return 1; /* [] */
    while (s <= end) {
        const char *c = memchr(s, ',', (size_t)(end - s));
        const char *stop = c ? c : end;
        const char *it = s;
        size_t len = (size_t)(stop - s);
        cli_trim(&it, &len);
        if (!len || *count == max)
            return 0;
        items[*count] = it;
        lens[(*count)++] = len;
        if (!c)
            break;
        s = c + 1;
    }
    return 1;
}

static int read_ints(const char *w, size_t n, int64_t *out, size_t *count, const char *what, cli_str *why)
{
    const char *items[SG_MAX_DIMS];
    size_t lens[SG_MAX_DIMS];
    if (!read_list(w, n, items, lens, SG_MAX_DIMS, count)) {
        cli_str_addf(why, "bad %s '%.*s' (a list [N, ...] of at most %d integers)", what, (int)n, w, SG_MAX_DIMS);
        return 0;
    }
    for (size_t i = 0; i < *count; i++)
        if (!read_i64(items[i], lens[i], &out[i])) {
            cli_str_addf(why, "bad integer '%.*s' in %s (%s)", (int)lens[i], items[i], what,
                         not_i64(items[i], lens[i]));
            return 0;
        }
    return 1;
}

static int read_policy(const char *w, size_t n, sg_dim_dynamic *out)
{
    cli_trim(&w, &n);
    if (cli_eq(w, n, "duck"))
        *out = SG_DIM_DUCK;
    else if (cli_eq(w, n, "dynamic"))
        *out = SG_DIM_DYNAMIC;
    else if (cli_eq(w, n, "static"))
        *out = SG_DIM_STATIC;
    else if (cli_eq(w, n, "unbacked"))
        *out = SG_DIM_SIZE_LIKE_UNBACKED;
    else
        return 0;
    return 1;
}

void cli_tval_free(cli_tval *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nflat; i++) /* derived attributes (no name) are the value's own */
        if (!t->flat[i]->name[0])
            cli_tval_free(t->flat[i]);
    for (size_t i = 0; i < t->nattrs; i++)
        cli_tval_free(t->attrs[i]);
    free(t->name);
    free(t);
}

/* 1 if the brackets [] and braces {} of s nest properly; else 0 with why set. */
static int balanced(const char *s, cli_str *why)
{
    char open[64];
    size_t depth = 0;
    for (const char *c = s; *c; c++) {
        if (*c == '[' || *c == '{') {
            if (depth == sizeof open) {
                cli_str_addf(why, "brackets nest more than %zu deep", sizeof open);
                return 0;
            }
            open[depth++] = *c;
        } else if (*c == ']' || *c == '}') {
            if (!depth || open[depth - 1] != (*c == ']' ? '[' : '{')) {
                cli_str_addf(why, "unbalanced '%c' at column %zu of '%.*s%s'", *c, (size_t)(c - s) + 1,
                             (int)(strlen(s) > 80 ? 80 : strlen(s)), s, strlen(s) > 80 ? "..." : "");
                return 0;
            }
            depth--;
        }
    }
    if (depth) {
        cli_str_addf(why, "unclosed '%c' in '%.*s%s'", open[depth - 1], (int)(strlen(s) > 80 ? 80 : strlen(s)), s,
                     strlen(s) > 80 ? "..." : "");
        return 0;
    }
    return 1;
}

static int parse_body(sg_ctx *ctx, cli_tval *t, const char *p, int kinds_allowed, cli_str *why);

/* ATTR={...}: an inner tensor. */
static int parse_attr(sg_ctx *ctx, cli_tval *t, const char *w, size_t kn, const char *v, size_t vn, cli_str *why)
{
    if (vn < 2 || v[0] != '{' || v[vn - 1] != '}') {
        cli_str_addf(why,
                     "unknown key '%.*s' (sizes, strides, offset, dynamic, rangeI; for a subclass also kind, ctx "
                     "and ATTR={...})",
                     (int)kn, w);
        return 0;
    }
    for (size_t i = 0; i < t->nattrs; i++)
        if (cli_eq(w, kn, t->attrs[i]->name)) {
            cli_str_addf(why, "inner tensor '%s' given twice", t->attrs[i]->name);
            return 0;
        }
    if (t->nattrs == CLI_MAX_ATTRS) {
        cli_str_addf(why, "more than %d inner tensors", CLI_MAX_ATTRS);
        return 0;
    }
    cli_tval *a = cli_xmalloc(sizeof *a);
    memset(a, 0, sizeof *a);
    a->name = cli_xstrndup(w, kn);
    t->attrs[t->nattrs++] = a;
    char *body = cli_xstrndup(v + 1, vn - 2);
    int ok = parse_body(ctx, a, body, 1, why);
    free(body);
    return ok;
}

/* A plain requires_grad input is base.clone() (doc/program.md): t takes
 * the clone's layout, as PyTorch's clone (preserve_format, empty_like)
 * lays it out: the same strides where they are dense and do not overlap
 * (an empty tensor's too), else dense strides in the same order of the
 * dimensions (infer_dense_strides: by stride, the smallest innermost, a
 * tie to the smaller size);
 * offset 0. The layout written stays as the base's. */
static void clone_layout(cli_tval *t)
{
    size_t n = t->ndim, order[SG_MAX_DIMS];
    int64_t numel = 1, acc = 1;
    t->has_base = 1;
    t->base_offset = t->offset;
    t->offset = 0;
    for (size_t i = n; i-- > 0;) { /* the base's strides: as written, or contiguous */
        t->base_strides[i] = t->has_strides ? t->strides[i] : acc;
        acc *= t->sizes[i] > 1 ? t->sizes[i] : 1;
        numel *= t->sizes[i];
    }
    if (!t->has_strides) /* a contiguous base: a contiguous clone */
        return;
    for (size_t i = 0; i < n; i++) /* infer_dense_strides' order: the last dimension first, */
        order[i] = n - 1 - i;
    for (size_t i = 1; i < n; i++) { /* then by stride, innermost first; equal strides: the smaller size
                                        first; a stride 0 decides nothing (an insertion sort that stops
                                        where a pair is in order) */
        size_t d1 = i;
        for (size_t d0 = i; d0-- > 0;) {
            int64_t s0 = t->strides[order[d0]], s1 = t->strides[order[d1]];
            int c = s0 == 0 || s1 == 0 ? 0 : s0 < s1 ? -1 : s0 > s1 ? 1 : t->sizes[order[d0]] > t->sizes[order[d1]];
            if (c > 0) {
                size_t x = order[d0];
                order[d0] = order[d1];
                order[d1] = x;
                d1 = d0;
            } else if (c < 0) {
                break;
            }
        }
    }
    int dense = 1;
    int64_t want = 1;
    for (size_t i = 0; i < n && dense && numel > 0; i++) {
        size_t d = order[i];
        if (t->sizes[d] == 1)
            continue;
        dense = t->strides[d] == want;
        want *= t->sizes[d];
    }
    if (dense)
        return;
    acc = 1; /* dense strides in that order */
    for (size_t i = 0; i < n; i++) {
        t->strides[order[i]] = acc;
        acc *= t->sizes[order[i]] > 1 ? t->sizes[order[i]] : 1;
    }
}

static int parse_body(sg_ctx *ctx, cli_tval *t, const char *p, int kinds_allowed, cli_str *why)
{
    const char *w;
    size_t n;
    int have_sizes = 0;
    size_t nstrides = 0, npol = 0;
    sg_dim_dynamic pol[SG_MAX_DIMS], one = SG_DIM_DUCK;
    int pol_list = 0, pol_one = 0;
    struct {
        size_t dim; /* SIZE_MAX: beyond every rank */
        const char *key; /* rangeI as written */
        size_t keyn;
        const sg_expr *lo, *hi;
    } ranges[SG_MAX_DIMS];
    size_t nranges = 0;
    unsigned seen = 0; /* keys given so far, one bit each */
    static const char *const keys[] = {"sizes", "strides", "offset", "ctx", "kind", "dynamic"};
    if (!balanced(p, why))
        return 0;
    while (cli_next_item(&p, &w, &n)) {
        const char *eq = memchr(w, '=', n);
        if (cli_eq(w, n, "requires_grad")) {
            t->requires_grad = 1;
            continue;
        }
        if (!eq) {
            cli_str_addf(why, "'%.*s' is not KEY=VALUE", (int)n, w);
            return 0;
        }
        size_t kn = (size_t)(eq - w), vn = n - kn - 1;
        const char *v = eq + 1;
        for (unsigned k = 0; k < sizeof keys / sizeof keys[0]; k++)
            if (cli_eq(w, kn, keys[k])) {
                if (seen & (1u << k)) {
                    cli_str_addf(why, "%s= given twice", keys[k]);
                    return 0;
                }
                seen |= 1u << k;
            }
        if (cli_eq(w, kn, "kind") && !kinds_allowed) {
            cli_str_adds(why, "kind= is only for subclass inputs (the command subclass)");
            return 0;
        }
        if (cli_eq(w, kn, "requires_grad")) {
            if (!cli_eq(v, vn, "leaf")) {
                cli_str_addf(why, "bad requires_grad '%.*s' (requires_grad or requires_grad=leaf)", (int)vn, v);
                return 0;
            }
            t->requires_grad = 2;
        } else if (cli_eq(w, kn, "dtype")) {
            static const char *const dts[] = {"float64", "float32", "int64", "bool"};
            t->dtype = -1;
            for (int d = 0; d < 4; d++)
                if (cli_eq(v, vn, dts[d]))
                    t->dtype = d;
            if (t->dtype < 0) {
                cli_str_addf(why, "bad dtype '%.*s' (float64, float32, int64 or bool)", (int)vn, v);
                return 0;
            }
        } else if (cli_eq(w, kn, "sizes")) {
            if (!read_ints(v, vn, t->sizes, &t->ndim, "sizes", why))
                return 0;
            have_sizes = 1;
        } else if (cli_eq(w, kn, "strides")) {
            if (!read_ints(v, vn, t->strides, &nstrides, "strides", why))
                return 0;
            t->has_strides = 1;
        } else if (cli_eq(w, kn, "offset")) {
            if (!read_i64(v, vn, &t->offset)) {
                cli_str_addf(why, "bad offset '%.*s' (%s)", (int)vn, v, not_i64(v, vn));
                return 0;
            }
        } else if (cli_eq(w, kn, "ctx")) {
            if (!read_i64(v, vn, &t->ctxv)) {
                cli_str_addf(why, "bad ctx '%.*s' (an integer: %s)", (int)vn, v, not_i64(v, vn));
                return 0;
            }
            t->has_ctx = 1;
        } else if (cli_eq(w, kn, "kind") && kinds_allowed) {
            if (!(t->kind = cli_subclass_kind(v, vn))) {
                cli_str_addf(why, "unknown subclass kind '%.*s' (two, double or scaled)", (int)vn, v);
                return 0;
            }
        } else if (cli_eq(w, kn, "dynamic")) {
            if (vn && v[0] == '[') {
                const char *items[SG_MAX_DIMS];
                size_t lens[SG_MAX_DIMS];
                if (!read_list(v, vn, items, lens, SG_MAX_DIMS, &npol)) {
                    cli_str_addf(why, "bad dynamic '%.*s'", (int)vn, v);
                    return 0;
                }
                for (size_t i = 0; i < npol; i++)
                    if (!read_policy(items[i], lens[i], &pol[i])) {
                        cli_str_addf(why, "unknown policy '%.*s' (duck, dynamic, static or unbacked)", (int)lens[i],
                                     items[i]);
                        return 0;
                    }
                pol_list = 1;
            } else if (!read_policy(v, vn, &one)) {
                cli_str_addf(why, "unknown policy '%.*s' (duck, dynamic, static or unbacked)", (int)vn, v);
                return 0;
            } else {
                pol_one = 1;
            }
        } else if (kn > 5 && !strncmp(w, "range", 5) && strspn(w + 5, "0123456789") == kn - 5) {
            const char *items[2];
            size_t lens[2], cnt;
            if (nranges == SG_MAX_DIMS || !read_list(v, vn, items, lens, 2, &cnt) || cnt != 2 ||
                !cli_read_bound(ctx, items[0], lens[0], &ranges[nranges].lo) ||
                !cli_read_bound(ctx, items[1], lens[1], &ranges[nranges].hi)) {
                cli_str_addf(why, "bad range '%.*s' (rangeI=[LO, HI])", (int)n, w);
                return 0;
            }
            size_t dim = 0; /* the digits of rangeI, exactly (no wrap, no saturation into a rank) */
            for (size_t i = 5; i < kn && dim != SIZE_MAX; i++)
                dim = dim > (SIZE_MAX - 9) / 10 ? SIZE_MAX : dim * 10 + (size_t)(w[i] - '0');
            ranges[nranges].key = w;
            ranges[nranges].keyn = kn;
            ranges[nranges++].dim = dim;
        } else if (!parse_attr(ctx, t, w, kn, v, vn, why)) {
            return 0;
        }
    }
    if (!have_sizes) {
        cli_str_adds(why, "missing sizes=[...]");
        return 0;
    }
    if (t->has_strides && nstrides != t->ndim) {
        cli_str_addf(why, "%zu sizes but %zu strides", t->ndim, nstrides);
        return 0;
    }
    if (pol_list && npol != t->ndim) {
        cli_str_addf(why, "%zu sizes but %zu policies", t->ndim, npol);
        return 0;
    }
    for (size_t i = 0; i < t->ndim; i++)
        t->specs[i] = (sg_dim_spec){pol_list ? pol[i] : one, NULL, NULL};
    for (size_t i = 0; i < nranges; i++) {
        if (ranges[i].dim >= t->ndim) {
            cli_str_addf(why, "%.*s: the tensor has rank %zu", (int)ranges[i].keyn, ranges[i].key, t->ndim);
            return 0;
        }
        for (size_t j = 0; j < i; j++)
            if (ranges[j].dim == ranges[i].dim) {
                cli_str_addf(why, "%.*s= given twice", (int)ranges[i].keyn, ranges[i].key);
                return 0;
            }
        t->specs[ranges[i].dim].lo = ranges[i].lo;
        t->specs[ranges[i].dim].hi = ranges[i].hi;
    }
    t->has_policy = pol_list || pol_one || nranges;
    if (t->requires_grad == 1 && !t->kind && (t->has_strides || t->offset))
        clone_layout(t);
    if (t->nattrs && !t->kind) {
        cli_str_addf(why, "inner tensor '%s' given for a plain tensor (kind=...)", t->attrs[0]->name);
        return 0;
    }
    if (t->has_ctx && !(t->kind && cli_subclass_has_ctx(t->kind))) {
        cli_str_adds(why, "ctx= is only for kind=scaled");
        return 0;
    }
    return 1;
}

/* A required attribute the value did not give: derived from the outer one
 * (laid out as it: its strides and offset too, but for double's elem,
 * whose dim 0 is half the outer's). */
static cli_tval *derived(const cli_tval *outer, const char *attr)
{
    cli_tval *a = cli_xmalloc(sizeof *a);
    memset(a, 0, sizeof *a);
    a->name = cli_xstrndup("", 0);
    a->ndim = outer->ndim;
    memcpy(a->sizes, outer->sizes, outer->ndim * sizeof *a->sizes);
    if (!strcmp(attr, "elem") && a->ndim) {
        a->sizes[0] /= 2;
    } else {
        a->has_strides = outer->has_strides;
        memcpy(a->strides, outer->strides, outer->ndim * sizeof *a->strides);
        a->offset = outer->offset;
    }
    return a;
}

/* Build the value, the flattened attributes and the context. */
static int finish(cli_tval *t, cli_str *why)
{
    t->tv = (sg_tensor_value){t->ndim, t->sizes, t->has_strides ? t->strides : NULL, t->offset, t->kind, t};
    t->tc = (sg_tensor_context){t->has_policy ? t->specs : NULL, NULL, 0, t->ctx_names, t->ctx_inner};
    if (!t->kind)
        return 1;
    const char *const *names;
    size_t nreq, nk = cli_subclass_attrs(t->kind, &names, &nreq);
    for (size_t i = 0; i < t->nattrs; i++) {
        size_t k = 0;
        while (k < nk && strcmp(names[k], t->attrs[i]->name))
            k++;
        if (k == nk) {
            cli_str_addf(why, "kind %s has no inner tensor '%s'", t->kind->name, t->attrs[i]->name);
            return 0;
        }
    }
    for (size_t k = 0; k < nk; k++) {
        cli_tval *a = NULL;
        for (size_t i = 0; i < t->nattrs && !a; i++)
            if (!strcmp(names[k], t->attrs[i]->name))
                a = t->attrs[i];
        if (!a && k < nreq)
            a = derived(t, names[k]);
        if (!a)
            continue;
        if (!finish(a, why))
            return 0;
        t->flat[t->nflat] = a;
        t->flat_names[t->nflat] = names[k];
        t->flat_inner[t->nflat++] = a->tv;
        if (a->has_policy || a->nctx) {
            t->ctx_names[t->nctx] = names[k];
            t->ctx_inner[t->nctx++] = &a->tc;
        }
    }
    t->tc.ninner = t->nctx;
    t->tv.obj = t;
    return 1;
}

cli_tval *cli_tval_parse(sg_ctx *ctx, const char *text, size_t n, int kinds_allowed, cli_str *why)
{
    const char *s = text;
    cli_trim(&s, &n);
    size_t k = 0;
    while (k < n && (s[k] == '_' || (s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z') ||
                     (k && s[k] >= '0' && s[k] <= '9')))
        k++;
    if (!k) {
        if (n)
            cli_str_addf(why, "missing NAME in '%.*s'", (int)n, s);
        else
            cli_str_adds(why, "missing NAME (NAME sizes=[...])");
        return NULL;
    }
    cli_tval *t = cli_xmalloc(sizeof *t);
    memset(t, 0, sizeof *t);
    t->name = cli_xstrndup(s, k);
    const char *rest = s + k;
    size_t rn = n - k;
    cli_trim(&rest, &rn);
    int ok;
    int is_key = 0;
    static const char *const keys[] = {"sizes", "strides", "offset", "dynamic", "kind", "ctx"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        is_key |= cli_eq(s, k, keys[i]);
    if (rn && rest[0] == '=' && is_key && rn > 1 && (rest[1] == '[' || !read_i64(rest + 1, rn - 1, &t->ival))) {
        cli_str_addf(why, "missing NAME before '%.*s'", (int)n, s);
        ok = 0;
    } else if (rn && rest[0] == '=') {
        t->is_int = 1;
        ok = read_i64(rest + 1, rn - 1, &t->ival);
        if (!ok)
            cli_str_addf(why, "bad integer in '%.*s' (%s)", (int)n, s, not_i64(rest + 1, rn - 1));
    } else if (rn && !cli_is_blank(s[k])) {
        cli_str_addf(why, "bad NAME in '%.*s' (an identifier, then sizes=[...])", (int)n, s);
        ok = 0;
    } else {
        char *body = cli_xstrndup(rest, rn);
        ok = parse_body(ctx, t, body, kinds_allowed, why) && finish(t, why);
        free(body);
    }
    if (!ok) {
        cli_tval_free(t);
        return NULL;
    }
    return t;
}

/* ---- commands --------------------------------------------------------------- */

static cmd_result add_tensor(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why, int sub)
{
    sg_inputs *in = case_inputs(cs, why);
    if (!in)
        return CMD_FAIL;
    cli_tval *t = cli_tval_parse(ctx, ln->args, strlen(ln->args), sub, why);
    if (!t)
        return CMD_FAIL;
    cmd_result r = CMD_FAIL;
    const sg_source *src;
    const sg_fake *f;
    sg_status st;
    if (t->is_int)
        cli_str_adds(why, "expected NAME sizes=[...]");
    else if (sub && !t->kind)
        cli_str_adds(why, "missing kind=two|double|scaled");
    else if (sg_inputs_find(in, t->name) >= 0)
        cli_str_addf(why, "'%s' is an integer input already", t->name);
    else if ((st = sg_source_local(ctx, &src, t->name)) || (st = sg_inputs_tensor(in, src, &t->tv, &t->tc, &f)))
        cli_str_add_error(why, ctx, st);
    else if (case_bind_fake(cs, f)) {
        program_note_tensor(cs, t);
        r = CMD_QUIET;
    }
    else
        cli_str_add_error(why, ctx, sg_ctx_last_error(ctx));
    cli_tval_free(t);
    return r;
}

/* tensor NAME sizes=[...] [strides=[...]] [offset=K] [dynamic=...] [rangeI=[LO, HI]] */
cmd_result cmd_tensor(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    return add_tensor(cs, ctx, ln, why, 0);
}

/* subclass NAME kind=K sizes=[...] [dynamic=...] [ctx=INT] ATTR={...} ... */
cmd_result cmd_subclass(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    return add_tensor(cs, ctx, ln, why, 1);
}

/* The input whose source is L['name'] or name: its index, -1 if there is
 * none, -2 if memory ran out (the context's error says so). */
static long find_input(sg_inputs *in, sg_ctx *ctx, const char *name, size_t n)
{
    char *t = cli_xstrndup(name, n);
    long i = sg_inputs_find(in, t);
    if (i < 0) {
        const sg_source *s;
        sg_status st = sg_source_local(ctx, &s, t);
        if (st == SG_OK)
            i = sg_inputs_find(in, sg_source_name(s));
        else if (st == SG_ENOMEM)
            i = -2;
        if (st != SG_ENOMEM)
            sg_ctx_reset_error(ctx);
    }
    free(t);
    return i;
}

/* refakify NAME => same */
cmd_result cmd_refakify(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    sg_inputs *in = case_inputs(cs, why);
    if (!in)
        return CMD_FAIL;
    if (strcmp(ln->expected, "same") && strcmp(ln->expected, "different")) {
        cli_str_addf(why, "bad expected side '%s' (same or different)", ln->expected);
        return CMD_FAIL;
    }
    long i = find_input(in, ctx, ln->args, strlen(ln->args));
    if (i == -2) {
        cli_str_add_error(why, ctx, SG_ENOMEM);
        return CMD_FAIL;
    }
    if (i < 0 || !sg_inputs_fake(in, (size_t)i)) {
        cli_str_addf(why, i < 0 ? "no tensor input '%s'" : "'%s' is an integer input, not a tensor", ln->args);
        return CMD_FAIL;
    }
    const sg_fake *f;
    int same = 0;
    sg_status st = sg_inputs_refakify(in, (size_t)i, &f, &same);
    if (st) {
        cli_str_add_error(why, ctx, st);
        return CMD_FAIL;
    }
    const char *got = same ? "same" : "different";
    if (!strcmp(got, ln->expected))
        return CMD_PASS;
    cli_str_addf(why, "expected %s, got %s", ln->expected, got);
    return CMD_FAIL;
}

/* Check the case's guards, compiled for call time, against the concrete
 * inputs of args ("INPUT; INPUT; ..."). */
int case_call(case_state *cs, const char *args, int *pass, cli_str *reason, cli_str *why)
{
    sg_ctx *ctx = cs->ctx;
    sg_inputs *in = case_inputs(cs, why);
    if (!in)
        return 0;
    size_t ni = sg_inputs_count(in);
    cli_tval **given = cli_xmalloc((ni + 1) * sizeof *given);
    sg_input_value *vals = cli_xmalloc((ni + 1) * sizeof *vals);
    memset(given, 0, (ni + 1) * sizeof *given);
    const char *p = args;
    int ok = 1;
    while (ok && *p) {
        /* split at ';' outside brackets */
        const char *e = p;
        int depth = 0;
        while (*e && (depth || *e != ';')) {
            depth += (*e == '[' || *e == '{') - ((*e == ']' || *e == '}') && depth);
            e++;
        }
        const char *item = p;
        size_t n = (size_t)(e - p);
        cli_trim(&item, &n);
        p = *e ? e + 1 : e;
        if (!n)
            continue;
        cli_tval *t = cli_tval_parse(ctx, item, n, 1, why);
        long i = t ? find_input(in, ctx, t->name, strlen(t->name)) : -1;
        if (!t) {
            ok = 0;
        } else if (i == -2) {
            cli_str_add_error(why, ctx, SG_ENOMEM);
            cli_tval_free(t);
            ok = 0;
        } else if (i < 0 || given[i]) {
            cli_str_addf(why, i < 0 ? "no input '%s'" : "input '%s' given twice", t->name);
            cli_tval_free(t);
            ok = 0;
        } else {
            given[i] = t;
        }
    }
    for (size_t i = 0; ok && i < ni; i++) {
        if (!given[i]) {
            cli_str_addf(why, "no value for input %s", sg_source_name(sg_inputs_source(in, i)));
            ok = 0;
        } else if (given[i]->is_int != (sg_inputs_fake(in, i) == NULL)) {
            cli_str_addf(why, "input '%s' is %s", given[i]->name,
                         given[i]->is_int ? "a tensor, not NAME=INT" : "an integer (NAME=INT)");
            ok = 0;
        } else {
            vals[i] = given[i]->is_int ? (sg_input_value){NULL, given[i]->ival}
                                       : (sg_input_value){&given[i]->tv, 0};
        }
    }
    if (ok)
        ok = cli_check_guards(ctx, in, vals, ni, pass, reason, why);
    for (size_t i = 0; i < ni; i++)
        cli_tval_free(given[i]);
    free(given);
    free(vals);
    return ok;
}

int cli_check_guards(sg_ctx *ctx, sg_inputs *in, const sg_input_value *vals, size_t ni, int *pass,
                     cli_str *reason, cli_str *why)
{
    sg_guard_set *g = NULL;
    sg_status st = sg_guard_set_build(in, 0, &g);
    if (st) {
        cli_str_add_error(why, ctx, st);
        return 0;
    }
    int ok = 1, res = sg_guard_set_check(g, vals, ni);
    char *text = NULL;
    if (res < 0) {
        cli_str_addf(why, "error %s", sg_status_kind((sg_status)res));
        ok = 0;
    } else if (!(*pass = res == SG_GUARD_PASS) && reason) {
        if ((st = sg_guard_set_explain(g, vals, ni, &text))) {
            cli_str_adds(reason, "cannot explain: ");
            cli_str_add_error(reason, ctx, st);
        } else if (text) {
            cli_str_adds(reason, text);
        }
    }
    sg_free(text);
    sg_guard_set_free(g);
    return ok;
}

/* call INPUT; INPUT; ... => pass | fail */
cmd_result cmd_call(case_state *cs, sg_ctx *ctx, const cmd_line *ln, cli_str *why)
{
    (void)ctx;
    if (strcmp(ln->expected, "pass") && strcmp(ln->expected, "fail")) {
        cli_str_addf(why, "bad expected side '%s' (pass or fail)", ln->expected);
        return CMD_FAIL;
    }
    int pass = 0;
    cli_str reason = CLI_STR_INIT;
    cli_str err = CLI_STR_INIT;
    cmd_result r = CMD_FAIL;
    if (!case_call(cs, ln->args, &pass, &reason, &err)) {
        if (!strncmp(cli_str_get(&err), "error ", 6))
            cli_str_addf(why, "expected %s, got %s", ln->expected, cli_str_get(&err));
        else
            cli_str_adds(why, cli_str_get(&err));
    } else if (!strcmp(pass ? "pass" : "fail", ln->expected)) {
        r = CMD_PASS;
    } else {
        cli_str_addf(why, "expected %s, got %s%s%s", ln->expected, pass ? "pass" : "fail", reason.n ? ": " : "",
                     cli_str_get(&reason));
    }
    cli_str_free(&reason);
    cli_str_free(&err);
    return r;
}
