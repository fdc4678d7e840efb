/* Functionalization (aot_private.h): a replay of the captured graph over
 * functional values, and the analysis of what the program does to its
 * inputs and outputs (PyTorch's run_functionalized_fw_and_collect_metadata).
 *
 * Each tensor value of src knows its storage, the value it views and the
 * view call that made it (its chain up to the storage's root), the object
 * it is a version of (in-place calls give new versions of one object), and
 * the dst value that stands for it as of a generation of its storage; each
 * storage knows its base's current dst value and its generation, bumped by
 * every write. A write stores its functional result through the chain
 * (store_value: view inverses up to the root); a read of a value whose
 * storage moved on makes it again from the base (current).
 *
 * - Metadata changes (t_, as_strided_, resize_) give the object a new
 *   version that views the old one; set_ gives it its source's link.
 * - A synthetic base stands for a storage several inputs view, or whose
 *   positions as_strided or resize_ use: a slot after src's values, the
 *   storage as one dimension (a placeholder of dst for an input's storage,
 *   zeros with the root scattered in for the program's), of which each
 *   input on it, and each as_strided, is an as_strided.
 * - cond: branches are replayed as subgraphs; what a root cond's branches
 *   write of what they take comes out as extra branch outputs, written
 *   back into the operands after the cond (branch_end, cond_done).
 * - At the end (end): the analysis, the in-graph mutations (copy_, set_),
 *   the leading outputs for the epilogue, the user outputs mapped. */
#include <string.h>

#include "aot/aot_private.h"
#include "exec/exec_private.h"
#include "graph/derivatives.h"
#include "graph/ops.h"

typedef struct fval {
    uint32_t parent; /* the src value it views (SG_NOVAL: a storage's root) */
    uint32_t vnode;  /* the view call that made it from parent */
    uint32_t cur;    /* the dst value standing for it at generation gen */
    uint32_t gen;
    uint32_t obj;    /* the object it is a version of: its first version (in-place calls give new versions) */
    uint32_t elem;   /* an element of unbind's list (vnode unbind): that element's value, which says its index */
    uint32_t ver;    /* the input placeholder whose version counter it shares (SG_NOVAL: none) */
    uint32_t bumps;  /* (an input placeholder) how often eager execution bumps its version counter */
    uint32_t writes, writes_no_grad, writes_hidden; /* (an object's first version) data mutations through it */
    uint32_t hist;   /* (a detach's first version, an autograd base of its own) the dst value holding the history
                        a write with grad through it gave it (PyTorch's CopySlices on the detach), laid out as
                        it; (a custom Function's output that views its input) the output as the Function gave
                        it; SG_NOVAL: none (made again from the storage, it is a detach of it: no gradient
                        goes past it). With one, what is made again is a hidden write over it (link_view) */
    bool xhist;      /* hist is x's after x.data = y, or x.set_(y) under no_grad, of the same sizes, x requiring
                        grad: x keeps its history where its values, y's chain, are made again (link_view); a
                        later write keeps it, or with grad gives the write's */
    bool meta;       /* (an object's first version) sizes, strides or offset changed in place */
    bool relaid;     /* (an object's first version) an in-place view call gave it another layout at some
                        point, even where a later one gives the first back (t_ twice) */
    bool nograd;     /* x.set_(y) under no_grad of an x that requires no grad: cur, y's values detached, is
                        good while the storage's generation is gen (made again, it would take y's history);
                        x's later versions by in-place calls likewise (their values x's own) */
    bool dreg;       /* x.data = y, or x.set_(y) under no_grad, of a view x that requires grad: x keeps its view
                        metadata and version counter (its old base's), so once that counter moves (rstale, or
                        the storage of rbase written since rgen) autograd makes x's grad_fn again, when x is
                        read, as an as_strided of its base with x's layout now (y's): current() makes x so */
    bool rstale;     /* (dreg) x's own counter moved (the set_ under no_grad, an in-place call of x) */
    uint32_t rbase;  /* (dreg) the root of x's chain before the set_, which autograd's base of x is */
    uint32_t rgen;   /* (dreg) rbase's storage generation when x's history was last made */
    uint32_t vers;   /* (an as_strided of a view, made over its storage's base or, of an input's view, over that
                        view, and its later versions) 1 + the moves of the storage's version counter (moves())
                        when it was made, 0 where not told: once more have come, PyTorch makes its grad_fn
                        again as an as_strided of its base (all positions), no longer through the view's own
                        history */
} fval;

typedef struct fstore {
    uint32_t base;   /* the dst value holding the storage's contents now */
    uint32_t gen;
    uint32_t input;  /* the src placeholder whose storage it is (SG_NOVAL: none) */
    uint32_t inputs; /* how many placeholders share it */
    uint32_t writes, writes_no_grad, writes_hidden; /* data mutations: all, under no_grad (not through .data:
                                                    each write counted once), through .data */
    uint32_t vbumps; /* in-place view calls (t_, squeeze_ ...) of what is on it that move its version counter
                        (not through .data), counted where an as_strided views it (strided) */
    bool written;    /* some call of src writes it */
    bool strided;    /* some as_strided of src views it */
    bool grad;       /* a write with grad of a value that requires grad gave it a history (CopySlices: every
                        alias requires grad since, whatever its traced flag says) */
    bool synth;      /* a synthetic base stands for it (see the head of the file) */
    bool detached;   /* a write autograd records through a link it does not follow (a detach, .data), or an
                        as_strided made over the storage past one: the detach's history, not the storage's */
    uint32_t root;   /* the first src value that is its root (SG_NOVAL: none yet) */
    uint32_t sph;    /* synth: the dst placeholder of that base, once made */
    uint32_t regen;  /* the new version an as_strided_ with grad gave its root object, a base of views (SG_NOVAL:
                        none), and its node: autograd makes the grad_fn of each view of it made before again as
                        an as_strided of it (its layout now), so their gradient reaches what it takes only */
    uint32_t regen_node;
    bool families;   /* x.set_(y) under no_grad (or x.data = y) put an object that keeps its own history on it:
                        its roots' histories differ, and its contents carry the history of the object last
                        written through (hobj) */
    uint32_t hobj;   /* (families) that object (SG_NOVAL: the storage's first root's) */
} fstore;

typedef struct fz {
    const sg__graph *src;
    sg__graph *dst;
    fval *v;      /* by src value */
    fstore *st;   /* by storage (sid_of) */
    uint32_t *sid;  /* by src tensor value: its storage as functionalization sees it (sid_of) */
    uint32_t *raw;  /* by storage: the src storage it is part of */
    uint32_t nst;   /* storages: src's, then one per input told apart from others on its storage */
    bool keep;    /* keep_input_mutations */
    bool subclass; /* the signature has a tensor subclass (plan_disjoint) */
    sg__aot_meta *meta; /* filled at the end */
    uint32_t *lead;     /* the leading outputs */
    uint32_t *stack, cap; /* the links current() makes again */
    uint32_t top;         /* stack[0 .. top): the links of the current() calls a call of it runs within */
    bool branch_writes;   /* writes of what a root cond's branch takes are functionalized (before_cond) */
    uint32_t *extra, nextra, capextra; /* a branch's extra outputs (branch_end) */
    uint8_t *mk;          /* the root cond being replayed: its operands the branches write; the custom
                             Function: the placeholders its backward writes */
    uint32_t nmk, *bumps; /* (cond_writes, function_writes) */
    uint32_t *written;    /* the placeholders a Function's backward writes, by index (function_written) */
} fz;

static sg_status unsupported(fz *z, const char *what, const char *op)
{
    return sg__err(z->dst->ctx, SG_EUNSUPPORTED, "functionalize: unsupported: %s%s%s", what, op ? ": " : "",
                   op ? op : "");
}

static bool is_tensor(const sg__graph *g, uint32_t v)
{
    return v < g->nvals && g->vals[v].kind == SG_V_TENSOR;
}

/* Is dst value d at src tensor value v's storage offset, with its strides
 * (sg__aot_proved_same), so that an as_strided over d reads v's storage
 * positions? Errors: SG_ENOMEM. */
static sg_status laid_as(const fz *z, uint32_t d, uint32_t v, bool *out)
{
    *out = true;
    if (!is_tensor(z->dst, d))
        return SG_OK;
    CHAIN(sg__aot_proved_same(z->src, z->dst->vals[d].u.t.offset, z->src->vals[v].u.t.offset, out));
    return *out ? sg__aot_same_strides(z->dst, d, z->src, v, out) : SG_OK;
}

/* An as_strided (or as_strided_) over a value the functional graph gives
 * as a copy, whose storage positions are not the ones the trace's call
 * takes (x after x.data = y, ...): refused by name; a shape error of the
 * replay, as the trace's layout fit its storage, says the same. */
static sg_status strided_copy_refused(fz *z, const char *op)
{
    sg_ctx_reset_error(z->dst->ctx);
    return unsupported(z, "an as_strided of storage positions the functional graph does not give what it is "
                          "called on (a copy stands for it: x.data = y of a view, ...)", op);
}

/* The storage of src tensor value v as functionalization sees it: src's,
 * but an input disjoint from the others on its storage (plan_disjoint) has
 * one of its own, with everything viewing it. */
static inline uint32_t sid_of(const fz *z, uint32_t v)
{
    return z->sid[v];
}

/* The storage of v: a src tensor value, or the slot of a synthetic base
 * (nvals + its storage). */
static fstore *store_of(fz *z, uint32_t v)
{
    return v >= z->src->nvals ? &z->st[v - z->src->nvals] : &z->st[sid_of(z, v)];
}

/* Has src value v a version counter of its own, not its storage's: a link of
 * its chain is .data (not where x.data = y made the link x's)? */
static bool own_counter(const fz *z, uint32_t v)
{
    for (uint32_t c = v; z->v[c].parent != SG_NOVAL; c = z->v[c].parent) {
        if (z->v[c].vnode == SG_NOVAL)
            continue;
        const sg__gnode *vn = &z->src->nodes[z->v[c].vnode];
        if ((vn->flags & SG_NODE_DATA) && (z->v[c].obj == SG_NOVAL || z->v[c].obj == vn->out))
            return true;
    }
    return false;
}

/* How often the version counter of storage s moved: writes not through
 * .data, and in-place view calls (fval vers). */
static uint32_t moves(const fstore *s)
{
    return s->writes - s->writes_hidden + s->vbumps;
}

/* Does the view chain of src value v pass a view made under no_grad (whose
 * grad_fn PyTorch leaves empty: an as_strided of v gives nothing to the
 * storage's history)? */
static bool via_no_grad_view(const fz *z, uint32_t v)
{
    for (uint32_t c = v; c < z->src->nvals && z->v[c].parent != SG_NOVAL; c = z->v[c].parent)
        if (z->v[c].vnode != SG_NOVAL && (z->src->nodes[z->v[c].vnode].flags & SG_NODE_NO_GRAD))
            return true;
    return false;
}

static bool is_asstrided(const sg__gnode *nd)
{
    return nd->kind == SG_N_CALL && (nd->schema->op == SG_OP_as_strided || nd->schema->op == SG_OP_as_strided_);
}

/* Does the parent p of a link (a src value, or the slot of a synthetic
 * base) require grad? A synthetic base does where an input on its storage
 * does. */
static bool link_requires_grad(const fz *z, uint32_t p)
{
    if (p < z->src->nvals)
        return is_tensor(z->src, p) && z->src->vals[p].u.t.requires_grad;
    const sg__scope *root = &z->src->scopes[0];
    for (uint32_t k = 0; p != SG_NOVAL && k < root->nphs; k++) {
        uint32_t ph = z->src->nodes[root->phs[k]].out;
        if (is_tensor(z->src, ph) && sid_of(z, ph) == p - (uint32_t)z->src->nvals && z->src->vals[ph].u.t.requires_grad)
            return true;
    }
    return false;
}

/* Is src value v an as_strided made over its storage's base (strided_parent)
 * of what autograd does not follow there from, a .data or detach of it: v
 * requires no grad where its parent, the base, does? Its link hides then
 * what the chain it was called on hid (the link of a .data it skips). */
static bool strided_off_grad(const fz *z, uint32_t v)
{
    uint32_t n = z->v[v].vnode, p = z->v[v].parent;
    if (n == SG_NOVAL || !is_asstrided(&z->src->nodes[n]) || !is_tensor(z->src, v) || z->src->vals[v].u.t.requires_grad)
        return false;
    return link_requires_grad(z, p);
}

/* The layout of src tensor value v under the environment's hints into *l;
 * false where a hint is missing or beyond int64. */
static bool hinted_layout(const sg__graph *src, uint32_t v, sg__xlayout *l)
{
    const sg__fake_tensor *t = &src->vals[v].u.t;
    l->ndim = t->ndim;
    for (uint32_t d = 0; d <= t->ndim; d++) {
        const sg_expr *e[2] = {d < t->ndim ? sg__graph_size(src, v, d) : t->offset,
                               d < t->ndim ? sg__graph_stride(src, v, d) : NULL}, *h;
        for (int k = 0; k < 2; k++) {
            int64_t x;
            if (!e[k])
                continue;
            if (sg_env_hint(src->env, &h, e[k]) || !sg_expr_get_si(h, &x))
                return false;
            if (d == t->ndim)
                l->offset = x;
            else if (k)
                l->strides[d] = x;
            else
                l->sizes[d] = x;
        }
    }
    return true;
}

/* Is src tensor value v laid out with a stride 0 along a dimension of a
 * size other than 1, so that it reaches a position twice? An empty tensor
 * (a size the constant 0) reaches none. */
static bool stride0_repeats(const sg__graph *src, uint32_t v)
{
    if (sg__graph_empty(src, v))
        return false;
    for (uint32_t d = 0; d < src->vals[v].u.t.ndim; d++)
        if (sg__graph_stride(src, v, d) == src->ctx->zero && sg__graph_size(src, v, d) != src->ctx->one)
            return true;
    return false;
}

/* Does src tensor value v, laid out as the hints of its sizes, strides and
 * offset say, reach a storage position twice (*out)? A write carried back
 * into such a layout by a scatter (or the epilogue's copy_) would write
 * that position twice, in the kernel's order. No hint: no. Errors: those
 * of sg__xlayout_repeats but SG_ELIMIT (no). */
static sg_status overlaps_itself(const fz *z, uint32_t v, bool *out)
{
    sg__xlayout l;
    *out = false;
    if (!hinted_layout(z->src, v, &l))
        return SG_OK;
    sg_status s = sg__xlayout_repeats(z->dst->ctx, &l, out);
    if (s == SG_ELIMIT) { /* (a layout beyond int64 at its hints: no question of positions here) */
        *out = false;
        return SG_OK;
    }
    return s;
}

/* Is src tensor value v, for every size, a view of each position of its
 * storage once (its elements are all the storage's)? A chain of views that
 * only reorder (transpose, permute, view, squeeze ...) from a tensor laid
 * out contiguously at offset 0 over a storage of its numel; no otherwise. */
static bool covers_storage(const sg__graph *src, uint32_t v)
{
    for (;;) {
        uint32_t n = src->vals[v].node;
        const sg__gnode *nd = n != SG_NOVAL ? &src->nodes[n] : NULL;
        if (!nd || nd->kind != SG_N_CALL || !(nd->schema->flags & SG_OPF_VIEW) || !nd->nargs ||
            src->args[nd->args].kind != SG_A_VALUE)
            break;
        unsigned op = nd->schema->op;
        if (op != SG_OP_t && op != SG_OP_transpose_int && op != SG_OP_permute && op != SG_OP_view &&
            op != SG_OP_squeeze && op != SG_OP_squeeze_dim && op != SG_OP_unsqueeze && op != SG_OP_alias &&
            op != SG_OP_detach)
            return false;
        v = src->args[nd->args].u.v;
    }
    const sg__fake_tensor *t = &src->vals[v].u.t;
    const sg_expr *acc = src->ctx->one;
    if (t->offset != src->ctx->zero)
        return false;
    for (uint32_t d = t->ndim; d-- > 0;) {
        if (sg__graph_stride(src, v, d) != acc && sg__graph_size(src, v, d) != src->ctx->one)
            return false;
        if (sg_expr_mul(src->ctx, &acc, acc, sg__graph_size(src, v, d)))
            return false;
    }
    return sg__graph_storage_numel(src, t->storage) == acc;
}

/* Dst value v, an as_strided of src value arg made over its storage's base
 * (strided_parent), is flagged SG_NODE_STRIDED_BASE where PyTorch's gradient
 * of it goes through arg's own history, not the base's: arg does not cover
 * its storage (its elements only), is a custom Function's output's view, or
 * passes a view made under no_grad. autograd.c refuses it where the backward
 * reaches it. */
static void strided_base(fz *z, uint32_t arg, uint32_t v)
{
    if (z->dst->vals[v].node != SG_NOVAL &&
        (!covers_storage(z->src, arg) || z->src->vals[arg].u.t.custom_view || via_no_grad_view(z, arg)))
        z->dst->nodes[z->dst->vals[v].node].flags |= SG_NODE_STRIDED_BASE;
}

/* The link below src value c on its chain of views: what its view call
 * was called on (an as_strided's self, which functionalization links to
 * the storage's base instead: its fval parent), else its fval parent. */
static uint32_t called_on(const fz *z, uint32_t c)
{
    uint32_t n = z->v[c].vnode;
    if (n != SG_NOVAL && is_asstrided(&z->src->nodes[n]) && z->src->nodes[n].nargs &&
        z->src->args[z->src->nodes[n].args].kind == SG_A_VALUE)
        return z->src->args[z->src->nodes[n].args].u.v;
    return z->v[c].parent;
}

/* Is src value v, down to its storage's root (or synthetic base), a chain
 * of views autograd follows: slices, selects, narrows, diagonals,
 * transposes, permutes, views, squeezes and unsqueezes of a root laid out
 * over its storage, and as_strided calls on what reaches no position twice
 * by a stride 0 (no expand, detach or .data, nothing made under no_grad, no
 * input placed on a synthetic base by its own layout)? */
static bool plain_view(const fz *z, uint32_t v)
{
    for (uint32_t c = v; c < z->src->nvals && z->v[c].parent != SG_NOVAL; c = called_on(z, c)) {
        if (z->v[c].vnode == SG_NOVAL)
            return false;
        const sg__gnode *vn = &z->src->nodes[z->v[c].vnode];
        unsigned op = vn->schema->op;
        if ((vn->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)) ||
            (op != SG_OP_slice_Tensor && op != SG_OP_select_int && op != SG_OP_narrow && op != SG_OP_diagonal &&
             op != SG_OP_t && op != SG_OP_transpose_int && op != SG_OP_permute && op != SG_OP_view &&
             op != SG_OP_squeeze && op != SG_OP_squeeze_dim && op != SG_OP_unsqueeze && op != SG_OP_alias &&
             op != SG_OP_as_strided))
            return false;
        uint32_t on = called_on(z, c);
        if (op == SG_OP_as_strided && on < z->src->nvals && stride0_repeats(z->src, on))
            return false; /* (as_strided_backward divides by the count of what it was called on there) */
    }
    return true;
}

/* as_strided_scatter(det, as_strided(m, v's layout), v's layout) into *out:
 * det's values (base.detach(), m's values are base's) with m's gradient at
 * v's positions only (view_mask). */
static sg_status mask_layout(fz *z, sg__replay *r, uint32_t det, uint32_t v, uint32_t m, uint32_t *out)
{
    sg__graph *d = z->dst;
    sg__garg a[5];
    uint32_t at;
    CHAIN(sg__aot_layout_args(d, z->src, v, m, a)); /* (m, v's sizes, strides, offset) */
    CHAIN(sg__replay_call(r, sg__opreg_op(d->reg, SG_OP_as_strided), a, 4, &at));
    a[4] = a[3];
    a[3] = a[2];
    a[2] = a[1];
    a[0] = (sg__garg){.kind = SG_A_VALUE, .u.v = det};
    a[1] = (sg__garg){.kind = SG_A_VALUE, .u.v = at};
    return sg__replay_call(r, sg__opreg_op(d->reg, SG_OP_as_strided_scatter), a, 5, out);
}

/* Base, the dst value an as_strided of src view arg is made over (the
 * current value of arg's storage's root p, or its synthetic base), where
 * PyTorch's gradient of the as_strided goes through arg's own history (arg
 * does not cover the storage: as_strided_backward keeps arg's positions):
 * *out becomes base with arg's positions written back through an
 * as_strided of base over base.detach(), so its values are base's and its
 * gradient reaches arg's positions only, then base's history, as arg's own
 * does (arg a plain_view of base, with elements, laid out over its storage
 * from offset 0, that requires grad); so too for the positions of what
 * each as_strided on arg's chain was called on. Left as it is (*out =
 * base) where that does not hold: strided_base flags it then. */
static sg_status view_mask(fz *z, sg__replay *r, uint32_t arg, uint32_t p, uint32_t base, uint32_t *out)
{
    *out = base;
    const sg__graph *src = z->src;
    bool dense = p >= src->nvals ? true : covers_storage(src, p);
    if (dense && p < src->nvals)
        CHAIN(laid_as(z, base, p, &dense));
    if (!dense || !src->vals[arg].u.t.requires_grad || covers_storage(src, arg) || src->vals[arg].u.t.custom_view ||
        via_no_grad_view(z, arg) || !plain_view(z, arg) || stride0_repeats(src, arg) || sg__graph_empty(src, arg))
        return SG_OK; /* (one that requires no grad by the trace's flag, or with no element: flagged, refused only
                         where reached) */
    /* as_strided_scatter(base.detach(), as_strided(base, arg's layout), arg's layout): base's values (arg's
       positions written back as they are), its gradient at arg's positions only, nothing saved for the
       backward (both derivatives take sizes alone) */
    sg__graph *d = z->dst;
    sg__garg x[1] = {{.kind = SG_A_VALUE, .u.v = base}};
    uint32_t det;
    CHAIN(sg__replay_call(r, sg__opreg_op(d->reg, SG_OP_detach), x, 1, &det));
    /* (an as_strided on arg's chain keeps of its gradient the positions of what it was called on, its
       as_strided_backward: a mask of that layout too, under arg's) */
    for (uint32_t c = arg; c < src->nvals && z->v[c].parent != SG_NOVAL; c = called_on(z, c)) {
        uint32_t on = called_on(z, c);
        if (src->nodes[z->v[c].vnode].schema->op == SG_OP_as_strided && on < src->nvals && !covers_storage(src, on))
            CHAIN(mask_layout(z, r, det, on, *out, out));
    }
    return mask_layout(z, r, det, arg, *out, out);
}

/* The base under dst value v where view_mask made v (the as_strided_scatter
 * of base.detach() and an as_strided of base, or of such a mask of it),
 * else v. */
static uint32_t unmasked(const sg__graph *d, uint32_t v)
{
    uint32_t n = d->vals[v].node;
    if (n == SG_NOVAL || d->nodes[n].kind != SG_N_CALL || d->nodes[n].schema->op != SG_OP_as_strided_scatter ||
        d->nodes[n].nargs != 5)
        return v;
    const sg__garg *a = &d->args[d->nodes[n].args];
    uint32_t det = a[0].kind == SG_A_VALUE ? d->vals[a[0].u.v].node : SG_NOVAL;
    uint32_t at = a[1].kind == SG_A_VALUE ? d->vals[a[1].u.v].node : SG_NOVAL;
    if (det == SG_NOVAL || at == SG_NOVAL || d->nodes[det].kind != SG_N_CALL || d->nodes[at].kind != SG_N_CALL ||
        d->nodes[det].schema->op != SG_OP_detach || d->nodes[at].schema->op != SG_OP_as_strided)
        return v;
    uint32_t b = d->args[d->nodes[det].args].u.v, m = d->args[d->nodes[at].args].u.v;
    /* (over the base, or over a mask of it: an as_strided's on the view's chain) */
    return m == b || (m != v && unmasked(d, m) == b) ? b : v;
}

/* The synthetic base of storage st: a placeholder of dst, one dimension
 * over the storage's elements (its numel as src has it), made at its first
 * use. */
static sg_status synth_base(fz *z, uint32_t st, uint32_t *out)
{
    fstore *s = &z->st[st];
    if (s->sph == SG_NOVAL) {
        const sg__graph *src = z->src;
        const sg_expr *numel = sg__graph_storage_numel(src, z->raw[st]), *one = z->dst->ctx->one;
        uint32_t v;
        CHAIN(sg__graph_tensor(z->dst, &v, (sg_dtype)src->vals[s->input].u.t.dtype, 1, &numel, &one, z->dst->ctx->zero,
                               SG_NOVAL));
        sg__graph_set_storage_numel(z->dst, z->dst->vals[v].u.t.storage, numel);
        CHAIN(sg__graph_placeholder(z->dst, v, "base"));
        s->sph = v;
    }
    *out = s->sph;
    return SG_OK;
}

/* View call node of src made again in dst over p (its self). */
/* Autograd's view of the functional graph (graph/derivatives.h): the node
 * that gave dst value v was made under no_grad or through .data (flags:
 * SG_NODE_NO_GRAD, SG_NODE_DATA; 0: nothing to say). A node that gives a
 * value of dst's inputs or an earlier node's is left alone. */
static void hide(fz *z, uint32_t v, uint8_t flags)
{
    uint32_t n = v < z->dst->nvals ? z->dst->vals[v].node : SG_NOVAL;
    if (flags && n != SG_NOVAL && z->dst->nodes[n].kind == SG_N_CALL)
        z->dst->nodes[n].flags |= flags;
}

/* Dst value v is the new version of old by a write autograd does not see
 * (hidden: SG_NODE_NO_GRAD or SG_NODE_DATA): autograd keeps old's history,
 * so the gradient of the new version passes to old unchanged
 * (SG_NODE_WRITE). A scatter into old (its first argument) made for this
 * write (fresh: the last node) says so itself; any other value (an inverse
 * view, the write's own value, a value of the program such as set_'s
 * source) becomes copy(old, v) saying so. Only where old may require grad
 * (a src value that does; *out: v itself otherwise). */
static sg_status hidden_write_as(fz *z, uint32_t old, uint32_t v, uint8_t hidden, bool rg, bool fresh, uint32_t *out)
{
    *out = v;
    if (!hidden || !rg || old == v)
        return SG_OK;
    sg__graph *d = z->dst;
    uint32_t n = d->vals[v].node;
    if (fresh && n != SG_NOVAL && n + 1 == d->nnodes && d->nodes[n].kind == SG_N_CALL && d->nodes[n].nargs &&
        d->args[d->nodes[n].args].kind == SG_A_VALUE && d->args[d->nodes[n].args].u.v == old) {
        d->nodes[n].flags |= hidden | SG_NODE_WRITE;
        return SG_OK;
    }
    sg__garg a[2] = {{.kind = SG_A_VALUE, .u.v = old}, {.kind = SG_A_VALUE, .u.v = v}};
    CHAIN(sg__graph_record(d, sg__opreg_op(d->reg, SG_OP_copy), a, 2, 0, NULL, out));
    d->nodes[d->nnodes - 1].flags |= hidden | SG_NODE_WRITE;
    return SG_OK;
}

/* hidden_write_as of a v the write made (its functional row, a scatter). */
static sg_status hidden_write(fz *z, uint32_t old, uint32_t v, uint8_t hidden, bool rg, uint32_t *out)
{
    return hidden_write_as(z, old, v, hidden, rg, true, out);
}

static sg_status replay_view(fz *z, sg__replay *r, uint32_t node, uint32_t p, uint32_t *out)
{
    (void)r;
    const sg__gnode *nd = &z->src->nodes[node];
    for (uint32_t i = 1; i < nd->nargs; i++)
        if (z->src->args[nd->args + i].kind == SG_A_VALUE || z->src->args[nd->args + i].kind == SG_A_VALUES)
            return unsupported(z, "a view taking values", nd->schema->name);
    CHAIN(sg__aot_view_again(z->dst, z->src, node, p, out));
    hide(z, *out, nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA));
    return SG_OK;
}

/* The as_strided call node of src view arg, made over base (the current
 * value of arg's storage's root p), replayed into *out: over view_mask's
 * masked base where that applies, else flagged by strided_base. */
static sg_status strided_of_view(fz *z, sg__replay *r, uint32_t node, uint32_t arg, uint32_t p, uint32_t base,
                                 uint32_t *out)
{
    uint32_t over;
    CHAIN(view_mask(z, r, arg, p, base, &over));
    CHAIN(replay_view(z, r, node, over, out));
    if (over == base)
        strided_base(z, arg, *out);
    return SG_OK;
}

/* as_strided(base, v's sizes, strides, offset) in dst (base a dst value). */
static sg_status strided_as(fz *z, uint32_t v, uint32_t base, uint32_t *out)
{
    sg__garg a[4];
    CHAIN(sg__aot_layout_args(z->dst, z->src, v, base, a));
    return sg__graph_record(z->dst, sg__opreg_op(z->dst->reg, SG_OP_as_strided), a, 4, 0, NULL, out);
}

/* as_strided_scatter(base, val, v's sizes, strides, offset) in dst. */
static sg_status strided_scatter(fz *z, uint32_t v, uint32_t base, uint32_t val, uint32_t *out)
{
    sg__garg a[5];
    CHAIN(sg__aot_layout_args(z->dst, z->src, v, base, a));
    a[4] = a[3];
    a[3] = a[2];
    a[2] = a[1];
    a[1] = (sg__garg){.kind = SG_A_VALUE, .u.v = val};
    return sg__graph_record(z->dst, sg__opreg_op(z->dst->reg, SG_OP_as_strided_scatter), a, 5, 0, NULL, out);
}

/* Link v of a chain made again over p (the current value of what it views). */
/* Is v an element of the list its view call gave (unbind)? */
static bool element(const fz *z, uint32_t v)
{
    uint32_t n = z->v[v].vnode;
    return n != SG_NOVAL && z->src->vals[z->src->nodes[n].out].kind == SG_V_LIST && z->v[v].elem != SG_NOVAL;
}

/* Is src value v a view made before the in-place layout change of its base
 * that fstore regen says (its grad_fn made again as an as_strided of the
 * base's new version)? */
static bool regenerated(fz *z, uint32_t v)
{
    const fstore *s = store_of(z, v);
    return s->regen != SG_NOVAL && z->v[v].vnode != SG_NOVAL && z->v[v].vnode < s->regen_node &&
           is_tensor(z->src, v) && z->src->vals[v].u.t.base != SG_NOVAL &&
           z->v[z->src->vals[v].u.t.base].obj == z->v[s->regen].obj; /* (its base: any version of that object) */
}

static sg_status link_view(fz *z, sg__replay *r, uint32_t v, uint32_t p, uint32_t *out);
static sg_status current_root(fz *z, sg__replay *r, uint32_t v, uint32_t *out);

static sg_status current(fz *z, sg__replay *r, uint32_t v, uint32_t *out);

/* View v (regenerated) made again: as_strided(the base's version now, v's
 * layout), that version made again (its chain: the versions of the root's
 * object) where the storage moved. */
static sg_status regenerated_view(fz *z, sg__replay *r, uint32_t v, uint32_t *out)
{
    uint32_t x;
    CHAIN(current(z, r, store_of(z, v)->regen, &x));
    sg_status st = strided_as(z, v, x, out);
    if (st == SG_ESHAPE) { /* (the view's layout reaches past the base's storage as it is now: x.data = y of the
                              base since; autograd's own checks of that gradient come first in PyTorch) */
        sg_ctx_reset_error(z->dst->ctx);
        return unsupported(z, "a view made again from its base laid out anew in place, whose layout reaches past "
                              "the base's storage now", z->src->nodes[z->v[v].vnode].schema->name);
    }
    CHAIN(st);
    const sg__gnode *vn = &z->src->nodes[z->v[v].vnode]; /* (a view autograd does not see stays one) */
    if (!(vn->schema->flags & SG_OPF_INPLACE))
        hide(z, *out, vn->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA));
    return SG_OK;
}

/* The object whose own link src value v is, where that link is a detach (or
 * .data: an autograd base of its own, sg__graph_grad_base), else SG_NOVAL
 * (not where set_ gave another object the link). */
static uint32_t detach_obj(const fz *z, uint32_t v)
{
    uint32_t n = z->v[v].vnode;
    if (n == SG_NOVAL || z->src->nodes[n].schema->op != SG_OP_detach || z->v[v].obj != z->src->nodes[n].out)
        return SG_NOVAL;
    return z->v[v].obj;
}

/* What autograd does not see past link v of a chain (SG_NODE_NO_GRAD,
 * SG_NODE_DATA: .data, a detach, an as_strided_off_grad; 0: nothing). An
 * in-place view op under no_grad (x.t_()) hides nothing: the object keeps
 * its history, and a write through it with grad is that history's (its
 * gradient goes back through the link's inverse to what it was called on). */
static uint8_t link_hides(const fz *z, uint32_t v)
{
    uint32_t vn = z->v[v].vnode;
    if (vn == SG_NOVAL)
        return 0;
    const sg__opinfo *info = sg__op_info(z->src->nodes[vn].schema->op);
    uint8_t off = info && (info->tags & SG_T_INPLACE_VIEW) ? SG_NODE_DATA : SG_NODE_NO_GRAD | SG_NODE_DATA;
    return (uint8_t)((z->src->nodes[vn].flags & off) |
                     (z->src->nodes[vn].schema->op == SG_OP_detach || strided_off_grad(z, v) ? SG_NODE_DATA : 0));
}

static sg_status link_view(fz *z, sg__replay *r, uint32_t v, uint32_t p, uint32_t *out)
{
    if (regenerated(z, v))
        return regenerated_view(z, r, v, out);
    if (element(z, v)) { /* (an element of unbind under no_grad made again is still none of autograd's) */
        CHAIN(sg__aot_unbind_element(z->dst, z->src, z->v[v].vnode, z->v[v].elem, p, out));
        hide(z, *out, z->src->nodes[z->v[v].vnode].flags & (SG_NODE_NO_GRAD | SG_NODE_DATA));
        return SG_OK;
    }
    if (z->v[v].vnode != SG_NOVAL && z->src->nodes[z->v[v].vnode].schema->op == SG_OP__unsafe_view) {
        /* over a contiguous copy: p (a functional value) may be laid out otherwise */
        sg__garg c[2] = {{.kind = SG_A_VALUE, .u.v = p},
                         {.kind = SG_A_MEMFMT, .kw = "memory_format", .u.dtype = SG_CONTIGUOUS_FORMAT}};
        CHAIN(sg__graph_record(z->dst, sg__opreg_op(z->dst->reg, SG_OP_clone), c, 2, 0, NULL, &p));
    }
    const sg__gnode *sn = z->v[v].vnode != SG_NOVAL ? &z->src->nodes[z->v[v].vnode] : NULL;
    if (sn && is_asstrided(sn) && z->v[v].vers && moves(store_of(z, v)) + 1 != z->v[v].vers &&
        z->v[v].parent == z->src->args[sn->args].u.v && z->v[z->v[v].parent].parent != SG_NOVAL) {
        /* an as_strided of a view of an input, made again once the version counter moved: PyTorch makes its
           grad_fn again as an as_strided of its base, so its gradient reaches the positions it takes, not only
           the view's (an empty one's: none) */
        uint32_t root = v, x;
        while (z->v[root].parent != SG_NOVAL)
            root = z->v[root].parent;
        CHAIN(current(z, r, root, &x));
        CHAIN(strided_as(z, v, x, out));
        hide(z, *out, sn->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA));
        if (is_tensor(z->src, v) && !z->src->vals[v].u.t.requires_grad && root < z->src->nvals &&
            is_tensor(z->src, root) && z->src->vals[root].u.t.requires_grad)
            hide(z, *out, SG_NODE_DATA); /* (of a detach or .data of it: no grad_fn to make again, none made) */
        return SG_OK;
    }
    if (z->v[v].vnode != SG_NOVAL) {
        const sg__gnode *vn = &z->src->nodes[z->v[v].vnode];
        const sg__opinfo *info = sg__op_info(vn->schema->op);
        /* (made again after a write, as where it was made: an as_strided over the storage's base of a view
           whose own history PyTorch's gradient takes; a write through .data leaves that grad_fn as it was) */
        bool stale = z->v[v].vers && moves(store_of(z, v)) + 1 != z->v[v].vers;
        uint32_t self = z->src->args[vn->args].u.v;
        bool again = (vn->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)) == SG_NODE_NO_GRAD && is_tensor(z->src, self) &&
                     z->src->vals[self].u.t.requires_grad && z->src->vals[self].u.t.base != SG_NOVAL;
        /* (an as_strided_ of a view under no_grad: its grad_fn made again over its base, as the hook's `of`) */
        uint32_t of = again && (info && (info->tags & SG_T_INPLACE_VIEW)) ? z->src->vals[self].u.t.base : self;
        if (is_asstrided(vn) && z->v[v].parent != of && !stale)
            CHAIN(strided_of_view(z, r, z->v[v].vnode, of, z->v[v].parent, p, out));
        else
            CHAIN(replay_view(z, r, z->v[v].vnode, p, out));
        if (strided_off_grad(z, v))
            hide(z, *out, SG_NODE_DATA);
        const fstore *vs = store_of(z, v);
        if (is_asstrided(vn) && z->v[v].parent != z->src->args[vn->args].u.v && stale && vs->regen != SG_NOVAL &&
            !covers_storage(z->src, vs->regen) && z->src->vals[v].u.t.requires_grad)
            /* (its grad_fn made again as an as_strided of the base, whose layout an in-place call changed:
               PyTorch's as_strided_backward keeps the positions that layout covers only) */
            return unsupported(z, "an as_strided of a view, made again from its base after the version counter "
                                  "moved, where an in-place call laid the base out over part of its storage",
                               vn->schema->name);
        /* an in-place view op under no_grad of what requires grad keeps its history, as where it ran: made
           again, its gradient passes to what it was called on (a hidden write, as there); of a view, as where
           it ran (the hook's `again`), its grad_fn is made again from its base: a view as any */
        if (info && (info->tags & SG_T_INPLACE_VIEW) && again && z->dst->vals[*out].node != SG_NOVAL)
            z->dst->nodes[z->dst->vals[*out].node].flags &= (uint8_t)~SG_NODE_NO_GRAD;
        else if (info && (info->tags & SG_T_INPLACE_VIEW) && (vn->flags & SG_NODE_NO_GRAD) && is_tensor(z->src, v) &&
                 z->src->vals[v].u.t.requires_grad)
            CHAIN(hidden_write(z, p, *out, vn->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA), true, out));
        /* a detach a write with grad gave a history: its values the storage's now, its gradient that
           history's (what wrote the storage since, not through it, autograd did not see from it) */
        uint32_t o = detach_obj(z, v);
        if (o == SG_NOVAL && z->v[v].hist != SG_NOVAL) /* (a custom Function's output: before_function) */
            o = v;
        if (o != SG_NOVAL && z->v[o].hist != SG_NOVAL)
            CHAIN(hidden_write(z, z->v[o].hist, *out, SG_NODE_DATA, true, out));
        return SG_OK;
    }
    return strided_as(z, v, p, out);
}

/* Link v of a chain written back: val (its new contents) into base (the
 * current value of what it views). */
static sg_status link_inverse(fz *z, uint32_t v, uint32_t base, uint32_t val, uint32_t *out)
{
    if (element(z, v))
        return sg__aot_unbind_inverse(z->dst, z->src, z->v[v].vnode, z->v[v].elem, base, val, out);
    if (z->v[v].vnode != SG_NOVAL)
        return sg__aot_view_inverse(z->dst, z->src, z->v[v].vnode, base, val, out);
    return strided_scatter(z, v, base, val, out);
}

/* The dst value standing for src tensor value v now: made again from its
 * base where its storage was written since (its view replayed on its
 * parent's current value). */
/* The value of dst standing for root value v now (a storage's root, or a
 * synthetic base). */
static sg_status current_root(fz *z, sg__replay *r, uint32_t v, uint32_t *out)
{
    fval *f = &z->v[v];
    fstore *s = store_of(z, v);
    if (v >= z->src->nvals && !s->gen) /* a synthetic base not written yet: its placeholder */
        CHAIN(synth_base(z, v - (uint32_t)z->src->nvals, &f->cur));
    if (v < z->src->nvals && f->nograd) {
        /* (a detach of y's values, current; where the storage was written since, x requiring no grad (current()
           checked): its contents now, detached, as x has no history of its own to keep) */
        if (f->gen != s->gen) {
            sg__garg a = {.kind = SG_A_VALUE, .u.v = s->base};
            CHAIN(sg__replay_call(r, sg__opreg_op(z->dst->reg, SG_OP_detach), &a, 1, &f->cur));
            f->gen = s->gen;
        }
        *out = f->cur;
        return SG_OK;
    }
    if (v < z->src->nvals && s->families && s->gen && (f->cur != SG_NOVAL || sg__replay_mapped(r, v) != SG_NOVAL)) {
        /* a storage two objects with histories of their own are roots of (x.set_(y) under no_grad): where
           the contents carry the other one's (written through it last), v's values are them, its history
           its own: a hidden write over its last value (PyTorch: one storage, two grad_fns) */
        uint32_t first = s->input != SG_NOVAL ? s->input : s->root;
        uint32_t hobj = s->hobj != SG_NOVAL ? s->hobj : first != SG_NOVAL ? z->v[first].obj : SG_NOVAL;
        if (hobj != f->obj) {
            if (f->gen != s->gen || f->cur == SG_NOVAL) {
                uint32_t old = f->cur != SG_NOVAL ? f->cur : sg__replay_mapped(r, v);
                CHAIN(hidden_write_as(z, old, s->base, SG_NODE_NO_GRAD, true, false, &z->v[v].cur));
                z->v[v].gen = s->gen;
            }
            *out = z->v[v].cur;
            return SG_OK;
        }
    }
    *out = s->gen ? s->base : f->cur != SG_NOVAL ? f->cur : sg__replay_mapped(r, v);
    if (*out == SG_NOVAL)
        return sg__err(z->dst->ctx, SG_EINTERNAL, "functionalize: value %u has no counterpart", v);
    if (s->base == SG_NOVAL)
        s->base = *out;
    return SG_OK;
}

static sg_status current(fz *z, sg__replay *r, uint32_t v, uint32_t *out);

/* Src value v (dreg), current by its storage: where its old base's
 * version counter moved since its history was made, its history made
 * again (PyTorch's view regeneration): a hidden write of its values over
 * as_strided(its base now, v's layout), so the gradient reaches the base's
 * positions v's new layout says. */
static sg_status data_set_regen(fz *z, sg__replay *r, uint32_t v)
{
    fval *f = &z->v[v];
    const fstore *bs = store_of(z, f->rbase);
    if ((!f->rstale && bs->gen == f->rgen) || sg__graph_empty(z->src, v)) /* (no element: no gradient to route, and
                                                                          x keeps its storage's positions) */
        return SG_OK;
    if (f->rbase >= z->src->nvals || bs->synth)
        return unsupported(z, "x.data = y (or x.set_(y) under no_grad) of a view x of an input on a storage other "
                              "inputs share, read after x's version moved (autograd makes x's grad_fn again over "
                              "its base)", NULL);
    uint32_t base, as, cur = f->cur;
    CHAIN(current(z, r, f->rbase, &base));
    sg_status st = strided_as(z, v, base, &as);
    if (st == SG_ESHAPE) { /* (x's layout now reaches past its base's storage: PyTorch's gradient takes the positions
                              that fall inside; a view made under no_grad raises autograd's error first) */
        sg_ctx_reset_error(z->dst->ctx);
        return unsupported(z, "x.data = y (or x.set_(y) under no_grad) of a view x whose layout now reaches past its "
                              "base's storage, read after x's version moved (autograd makes x's grad_fn again as an "
                              "as_strided of its base)", NULL);
    }
    CHAIN(st);
    hide(z, as, SG_NODE_REGEN);
    CHAIN(hidden_write_as(z, as, cur, SG_NODE_DATA, true, false, &cur));
    f = &z->v[v];
    f->cur = cur;
    f->rstale = false;
    f->rgen = store_of(z, f->rbase)->gen;
    return SG_OK;
}

static sg_status current(fz *z, sg__replay *r, uint32_t v, uint32_t *out)
{
    if (v < z->src->nvals && z->v[v].dreg && z->v[v].cur != SG_NOVAL && z->v[v].gen == store_of(z, v)->gen)
        CHAIN(data_set_regen(z, r, v));
    /* up to the first link that is current (or the root), then the links
       below it made again, top down: a loop, for chains of any length; above
       the links of the calls it runs within (a view made again as an
       as_strided of its base's version now makes that version current) */
    uint32_t base = z->top, n = base, u = v, p = SG_NOVAL;
    for (;; u = z->v[u].parent) {
        const fval *f = &z->v[u];
        bool now = f->gen == store_of(z, u)->gen && f->cur != SG_NOVAL;
        /* (its values moved since: made again, a view would take y's history; a root that requires grad now,
           by a write with grad of its own, would keep that history, not made here) */
        if (f->nograd && !now && (f->parent != SG_NOVAL || (u < z->src->nvals && is_tensor(z->src, u) &&
                                                             z->src->vals[u].u.t.requires_grad)))
            return unsupported(z, "a tensor x.set_(y) under no_grad made a detach of y (x requires no grad), read "
                                  "after its storage was written", NULL);
        if (f->parent == SG_NOVAL || now)
            break;
        if (n == z->cap) {
            uint32_t cap = z->cap ? 2 * z->cap : 64, *grown = sg__realloc(z->dst->ctx, z->stack, cap * sizeof *grown);
            if (!grown)
                return sg__nomem(z->dst->ctx);
            z->stack = grown;
            z->cap = cap;
        }
        z->stack[n++] = u;
    }
    sg_status s = SG_OK;
    z->top = n;
    if (z->v[u].parent == SG_NOVAL)
        s = current_root(z, r, u, &p);
    else
        p = z->v[u].cur;
    while (!s && n-- > base) {
        uint32_t w = z->stack[n];
        z->top = n; /* (stack[base .. n) still to make) */
        if ((s = link_view(z, r, w, p, &p)))
            break;
        hide(z, p, SG_NODE_REGEN); /* (its grad_fn made again: a view's own flag) */
        z->v[w].cur = p;
        z->v[w].gen = store_of(z, w)->gen;
    }
    z->top = base;
    *out = p;
    return s;
}

/* The arguments of src node nd as dst values: mapped as the replay maps
 * them, every tensor by its current value. */
static sg_status current_args(fz *z, sg__replay *r, const sg__gnode *nd, const sg__garg *mapped, sg__garg *out)
{
    for (uint32_t i = 0; i < nd->nargs; i++) {
        const sg__garg *a = &z->src->args[nd->args + i];
        out[i] = mapped[i];
        if (a->kind == SG_A_VALUE && is_tensor(z->src, a->u.v)) {
            CHAIN(current(z, r, a->u.v, &out[i].u.v));
        } else if (a->kind == SG_A_VALUES) {
            uint32_t ids[64];
            if (a->u.list.n > 64)
                return unsupported(z, "a list of more than 64 tensors", nd->schema->name);
            for (uint32_t k = 0; k < a->u.list.n; k++) {
                uint32_t e = z->src->ids[a->u.list.off + k];
                if (is_tensor(z->src, e))
                    CHAIN(current(z, r, e, &ids[k]));
                else
                    ids[k] = sg__replay_mapped(r, e);
            }
            CHAIN(sg__graph_ids(z->dst, &out[i].u.list.off, ids, a->u.list.n));
        }
    }
    return SG_OK;
}

/* What an as_strided of src value v (made from parent) views: its
 * positions are its storage's, so the storage's synthetic base, or the root
 * the program made it with (a tensor over its storage from its start, as
 * dst's counterpart is); parent itself for an input's storage without a
 * synthetic base (dst's view of the input reads the caller's storage). */
static uint32_t strided_parent(const fz *z, uint32_t v, uint32_t parent)
{
    const fstore *s = &z->st[sid_of(z, v)];
    if (s->synth)
        return (uint32_t)z->src->nvals + sid_of(z, v);
    return s->input == SG_NOVAL && s->root != SG_NOVAL ? s->root : parent;
}

/* A new value of src made by a call: the root of its storage, or (a view)
 * a link of its parent's chain. */
static void made(fz *z, uint32_t v, uint32_t parent, uint32_t vnode, uint32_t cur)
{
    if (!is_tensor(z->src, v))
        return;
    fstore *s = store_of(z, v);
    if (parent == SG_NOVAL && s->base == SG_NOVAL)
        s->base = cur;
    if (parent == SG_NOVAL && s->root == SG_NOVAL)
        s->root = v;
    /* a view shares its source's version counter, but for .data (a flagged detach) */
    uint32_t ver = parent != SG_NOVAL && !(z->src->nodes[vnode].flags & SG_NODE_DATA) ? z->v[parent].ver : SG_NOVAL;
    if (parent != SG_NOVAL && is_asstrided(&z->src->nodes[vnode])) { /* positions of the storage itself */
        for (uint32_t c = parent; c != SG_NOVAL && !s->detached; c = z->v[c].parent)
            s->detached = (link_hides(z, c) & SG_NODE_DATA) != 0; /* (made over the storage, past a detach) */
        parent = strided_parent(z, v, parent);
    }
    z->v[v] = (fval){.parent = parent, .vnode = vnode, .cur = cur, .gen = s->gen, .obj = v, .ver = ver, .elem = v,
                       .hist = SG_NOVAL};
}

/* Value out of src: the next version of object self, the same link of the
 * same chain, standing as cur. */
static void next_version(fz *z, uint32_t self, uint32_t out, uint32_t cur)
{
    fval *sf = &z->v[self];
    z->v[out] = (fval){.parent = sf->parent, .vnode = sf->vnode, .cur = cur, .gen = store_of(z, self)->gen,
                       .obj = sf->obj, .ver = sf->ver, .elem = sf->elem, .hist = SG_NOVAL, .nograd = sf->nograd,
                       .dreg = sf->dreg, .rstale = sf->rstale, .rbase = sf->rbase, .rgen = sf->rgen, .vers = sf->vers};
}

/* Is value u, a view made before node i, read with grad after it (by a
 * call of the root that gives a floating tensor, or as an output) and
 * written by none after it? */
static bool read_not_written_since(const fz *z, uint32_t i, uint32_t u)
{
    const sg__graph *src = z->src;
    bool read = false;
    for (uint32_t j = i + 1; j < src->nnodes; j++) {
        const sg__gnode *nd = &src->nodes[j];
        uint32_t vals[8];
        size_t nw = sg__graph_node_writes(src, j, vals, 8);
        for (size_t k = 0; k < nw && k < 8; k++)
            if (vals[k] == u)
                return false;
        bool grad = nd->kind == SG_N_OUTPUT ||
                    (nd->kind == SG_N_CALL && !(nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)) && is_tensor(src, nd->out) &&
                     (src->vals[nd->out].u.t.dtype == SG_FLOAT64 || src->vals[nd->out].u.t.dtype == SG_FLOAT32));
        read |= nd->scope == 0 && grad && sg__graph_node_reads(src, nd, u);
    }
    return read;
}

/* An in-place call nd of self that changes its metadata (t_, as_strided_,
 * set_ ...) moves the version counter self shares, not through .data:
 * that makes the grad_fn of an as_strided of a view made before again,
 * from the base, when it is used; those views are made again, out of the
 * view's history (fval vers). Counted only where an as_strided views the
 * storage (the walk of own_counter with it); relaid: the storage's
 * generation moved already. Errors: SG_EUNSUPPORTED where inputs share
 * the storage without a synthetic base, each its own placeholder: an
 * as_strided made before, which requires grad, of one that does not cover
 * the storage would take its gradient from the base's positions then. */
static sg_status moved_counter(fz *z, const sg__gnode *nd, uint32_t self, bool relaid)
{
    fstore *rs = store_of(z, self);
    if (!rs->strided || (nd->flags & SG_NODE_DATA) || !sg__op_bumps_version(nd->schema) || own_counter(z, self))
        return SG_OK;
    rs->vbumps++;
    if (!relaid && !rs->synth && rs->inputs < 2)
        rs->gen++;
    for (uint32_t u = 0; rs->inputs >= 2 && !rs->synth && u < nd->out; u++) {
        const sg__gnode *vn = z->v[u].vnode != SG_NOVAL ? &z->src->nodes[z->v[u].vnode] : NULL;
        if (vn && is_asstrided(vn) && vn->out == u && sid_of(z, u) == sid_of(z, self) &&
            z->src->vals[u].u.t.requires_grad && !covers_storage(z->src, z->src->args[vn->args].u.v))
            return unsupported(z, "a version move of a storage inputs share after an as_strided of one of them that "
                                  "requires grad (autograd makes its grad_fn again over their base)", nd->schema->name);
    }
    return SG_OK;
}

/* Call node nd writes src value v (in place or out=): eager execution bumps
 * the version counter v shares, unless the write is through .data or
 * changes autograd's flags only. */
static void bump(fz *z, const sg__gnode *nd, uint32_t v)
{
    if (z->v[v].ver != SG_NOVAL && !(nd->flags & SG_NODE_DATA) && sg__op_bumps_version(nd->schema))
        z->v[z->v[v].ver].bumps++;
}

/* An in-place call of nd on self (src): its functional row over the current
 * values, carried back to the base through self's chain. */
/* The new contents f (a value of dst, self's sizes and dtype) stored into
 * src value self: carried back to self's base through its chain (PyTorch's
 * apply_update: each view made again from the base's current value, then
 * each written back into the one it views, from self up). what names the
 * writer in messages; flags are its node's (SG_NODE_NO_GRAD counts the
 * write as one under no_grad). */
/* Is dst value f (self's sizes) laid out as src value self is (the strides
 * of its dimensions of size other than 1)? */
static bool laid_out_as(const fz *z, uint32_t f, uint32_t self)
{
    const sg__fake_tensor *t = &z->src->vals[self].u.t;
    if (z->dst->vals[f].u.t.ndim != t->ndim)
        return false;
    for (uint32_t d = 0; d < t->ndim; d++)
        if (sg__graph_size(z->src, self, d) != z->dst->ctx->one &&
            sg__graph_stride(z->dst, f, d) != sg__graph_stride(z->src, self, d))
            return false;
    return true;
}

static sg_status make_synthetic(fz *z, sg__replay *r, uint32_t v);

/* The values of val laid out as dst value like is, in like's dtype
 * (copy: its result is its self's clone). */
static sg_status copy_as(fz *z, sg__replay *r, uint32_t like, uint32_t val, uint32_t *out)
{
    sg__garg a[2] = {{.kind = SG_A_VALUE, .u.v = like}, {.kind = SG_A_VALUE, .u.v = val}};
    return sg__replay_call(r, sg__opreg_op(z->dst->reg, SG_OP_copy), a, 2, out);
}

/* Cur, the current value of src value p, as an as_strided takes storage
 * positions of it (*out): where p is a storage's root the program made (no
 * input's storage, no synthetic base) that the functional graph lays out
 * otherwise than the trace (a result of operands laid out otherwise: eager
 * strided one as its operand, the graph's copy contiguous), its values laid
 * out as the trace's first, the storage's contents from then on; else cur. */
static sg_status strided_over(fz *z, sg__replay *r, uint32_t p, uint32_t cur, uint32_t *out)
{
    *out = cur;
    if (p >= z->src->nvals || !is_tensor(z->src, p) || z->v[p].parent != SG_NOVAL || !is_tensor(z->dst, cur))
        return SG_OK;
    fstore *s = store_of(z, p);
    if (s->input != SG_NOVAL || s->synth || laid_out_as(z, cur, p) || z->src->vals[p].u.t.offset != z->dst->ctx->zero)
        return SG_OK;
    sg__garg a[4];
    uint32_t e;
    CHAIN(sg__aot_layout_args(z->dst, z->src, p, cur, a));
    CHAIN(sg__replay_call(r, sg__opreg_op(z->dst->reg, SG_OP_new_empty_strided), a, 3, &e));
    CHAIN(copy_as(z, r, e, cur, out));
    s->base = *out;
    z->v[p].cur = *out;
    return SG_OK;
}

/* grad: autograd records the write (with grad, its result requiring grad):
 * a detach it passes, with nothing autograd does not see below, gets the
 * new contents for its history (fval hist). */
static sg_status store_value(fz *z, sg__replay *r, const char *what, uint8_t flags, bool grad, uint32_t self,
                             uint32_t f)
{
    fstore *s = store_of(z, self);
    if (s->inputs > 1 && !s->synth)
        return sg__err(z->dst->ctx, SG_EINTERNAL, "functionalize: a write into inputs that share a storage");
    uint32_t n = 0, last = self;
    bool hidden = false, repeats = false, rg = is_tensor(z->src, self) && z->src->vals[self].u.t.requires_grad;
    rg |= s->grad;
    bool stolen = false; /* (a link x.data = y made x's) */
    const uint8_t grad_off = SG_NODE_NO_GRAD | SG_NODE_DATA;
    uint8_t seen = flags & grad_off; /* (what autograd does not see of the write below link c) */
    bool history = false;            /* it gives a detach on the chain a history */
    for (uint32_t c = self; z->v[c].parent != SG_NOVAL; c = z->v[c].parent) {
        uint32_t p = z->v[c].parent;
        if (grad && regenerated(z, c)) /* (its gradient: CopySlices over the base's new layout) */
            return unsupported(z, "a write with grad through a view made before its base was laid out anew in "
                                  "place", what);
        history |= grad && !seen && detach_obj(z, c) != SG_NOVAL;
        seen |= link_hides(z, c);
        if (!grad && strided_off_grad(z, c)) { /* (an as_strided over the base, past a .data or detach, that
                                                   requires no grad: a write through it autograd does not see,
                                                   the base's history kept: t6 = a.data; t6.as_strided_(...)) */
            hidden = true;
            rg = true;
        }
        rg |= link_requires_grad(z, p);
        if (z->v[c].vnode != SG_NOVAL) { /* (else an input on a synthetic base) */
            const sg__gnode *vn = &z->src->nodes[z->v[c].vnode];
            /* a view that may repeat positions (expand, as_strided), written in part: link by
               link, the repeats would not say which one was written (below: by positions) */
            repeats |= c != self && (vn->schema->op == SG_OP_expand || is_asstrided(vn));
            /* through x.data: autograd does not see it (not where x.data = y made the link x's: x's own
               writes after it are autograd's) */
            bool own = z->v[c].obj == SG_NOVAL || z->v[c].obj == vn->out;
            hidden |= (vn->flags & SG_NODE_DATA) != 0 && own;
            stolen |= (vn->flags & SG_NODE_DATA) != 0 && !own;
        } else if (c != self) { /* an input on a synthetic base: the same where its layout repeats (stride 0,
                                   or strides that meet at its hints: [2, 2] at strides [2, 2]) */
            const sg__fake_tensor *t = &z->src->vals[c].u.t;
            for (uint32_t d = 0; d < t->ndim; d++)
                repeats |= sg__graph_stride(z->src, c, d) == z->dst->ctx->zero &&
                           sg__graph_size(z->src, c, d) != z->dst->ctx->one;
            bool meet = false;
            if (!repeats) {
                sg_status st = overlaps_itself(z, c, &meet);
                if (st)
                    return st;
            }
            repeats |= meet;
        }
        last = c;
        n++;
    }
    if (stolen && n > 1 && is_tensor(z->src, self) && z->src->vals[self].u.t.requires_grad &&
        z->src->vals[self].u.t.leaf == false && !(flags & SG_NODE_DATA) &&
        !((flags & SG_NODE_NO_GRAD) && (z->v[self].xhist || z->v[self].dreg)))
        /* x.data = y, y a view (of x's own base too), then x written: x keeps its history while its
           values are y's chain's, which the gradient does not follow through the .data link */
        return unsupported(z, "a write of a tensor that requires grad whose .data was set to a view", what);
    uint32_t root = n ? z->v[last].parent : self;
    if (root < z->src->nvals && z->src->vals[root].node != SG_NOVAL) {
        const sg__gnode *rn = &z->src->nodes[z->src->vals[root].node];
        if (rn->kind == SG_N_PLACEHOLDER && rn->scope != 0 && !(z->branch_writes && z->src->scopes[rn->scope].parent == 0))
            return unsupported(z, "a write of what a cond branch takes, in a nested cond", what);
        if (repeats && rn->kind == SG_N_PLACEHOLDER && rn->scope != 0)
            return unsupported(z, "a write through a view of a view that may repeat elements, in a cond branch", what);
    }
    s->detached |= grad && (seen & SG_NODE_DATA);
    if (repeats && history) /* (by positions below: no detach's new contents to keep) */
        return unsupported(z, "a write with grad through a view that may repeat elements of a detach", what);
    if (repeats) { /* by positions: f stored into the storage as one dimension, by self's own layout */
        uint32_t obj = root < z->src->nvals ? z->v[root].obj : z->v[last].obj, slot, b, flat;
        CHAIN(make_synthetic(z, r, self));
        slot = (uint32_t)z->src->nvals + sid_of(z, self);
        CHAIN(current(z, r, slot, &b));
        CHAIN(strided_scatter(z, self, b, f, &flat));
        /* (what autograd does not see of it past the links of the chain, as link by link below: a write
           through a detach of the view, without grad, keeps the storage's history) */
        CHAIN(hidden_write(z, b, flat, (uint8_t)(seen | (hidden ? SG_NODE_DATA : 0)), rg, &flat));
        s->base = flat;
        s->gen++;
        s->writes++;
        s->hobj = obj;
        s->writes_no_grad += (flags & SG_NODE_NO_GRAD) && !hidden;
        s->writes_hidden += hidden;
        if (obj != SG_NOVAL) {
            z->v[obj].writes++;
            z->v[obj].writes_no_grad += (flags & SG_NODE_NO_GRAD) && !hidden;
            z->v[obj].writes_hidden += hidden;
        }
        return SG_OK;
    }
    /* chain[i]: the links from self up; tmp[i]: chain[i] made again (tmp[n]: the root's current value),
       so tmp[i + 1] is what chain[i] views. tmp[0], self made again, is made only where it is needed */
    uint32_t *chain = sg__malloc(z->dst->ctx, (2 * (size_t)n + 1) * sizeof *chain), *tmp = chain + n;
    if (!chain)
        return sg__nomem(z->dst->ctx);
    n = 0;
    for (uint32_t c = self; z->v[c].parent != SG_NOVAL; c = z->v[c].parent)
        chain[n++] = c;
    sg_status st = current(z, r, root, &tmp[n]);
    for (uint32_t i = n; i-- > 1 && !st;)
        st = link_view(z, r, chain[i], tmp[i + 1], &tmp[i]);
    uint32_t val = f;
    uint8_t hid = flags & grad_off; /* what autograd does not see of the write, link by link */
    for (uint32_t i = 0; i < n && !st; i++) {
        uint32_t np, o = detach_obj(z, chain[i]);
        /* a detach autograd sees the write through: PyTorch's CopySlices gives it a history, the new
           contents (laid out as it: what is made of it later is made from that) */
        bool gives = grad && !hid && o != SG_NOVAL;
        hid |= link_hides(z, chain[i]); /* past a view autograd does not follow (.data, detach, under no_grad) */
        if (!(st = link_inverse(z, chain[i], tmp[i + 1], val, &np)) &&
            !(st = hidden_write(z, tmp[i + 1], np, hid, rg, &np))) {
            /* current once the generation moves, below; made again from the base where the new
               contents are laid out otherwise (an expanded view written: its repeats) */
            z->v[chain[i]].cur = laid_out_as(z, val, chain[i]) ? val : SG_NOVAL;
            /* (a view above the one written, with no element, written with grad or under no_grad (the
               counter moves either way): made again when read, as PyTorch makes its grad_fn again
               (SG_NODE_REGEN: a factory's zeros its gradient, a plain tensor under a TwoTensor loss), not the
               new contents as they are; the view written itself: write_through) */
            bool moved = (!gives && grad && !(flags & grad_off)) || (flags & grad_off) == SG_NODE_NO_GRAD;
            if (i > 0 && moved && z->v[chain[i]].cur != SG_NOVAL && z->src->vals[chain[i]].u.t.requires_grad &&
                sg__graph_empty(z->src, chain[i]))
                z->v[chain[i]].cur = SG_NOVAL;
            if (gives && z->v[chain[i]].cur == SG_NOVAL && i == 0) /* (self a detach: its layout to copy into) */
                st = link_view(z, r, chain[0], tmp[1], &tmp[0]);
            if (gives && z->v[chain[i]].cur == SG_NOVAL && !st)
                st = copy_as(z, r, tmp[i], val, &z->v[chain[i]].cur);
            if (gives && !st)
                z->v[o].hist = z->v[chain[i]].cur;
            val = np;
        }
    }
    if (!st && n && root < z->src->nvals && is_tensor(z->src, root) && !laid_out_as(z, val, root) &&
        z->dst->vals[val].u.t.dtype == z->src->vals[root].u.t.dtype) {
        /* the root's new contents laid out as the root (a slice of an expanded view's zero is not): its
           views are made again from it by their own ops (flatten's view) */
        st = copy_as(z, r, tmp[n], val, &val);
    }
    /* (the storage's first root: an input's placeholder, or the first value a call made) */
    uint32_t first = s->input != SG_NOVAL ? s->input : s->root;
    if (!st && root < z->src->nvals && z->v[root].nograd && first != SG_NOVAL && first != root &&
        is_tensor(z->src, first) && z->src->vals[first].u.t.requires_grad) {
        /* a write through x after x.set_(y) under no_grad (x requires no grad, y's storage root does): the
           new contents are a detach's, but y (and what else is on the storage) keeps its own history, as
           autograd sees no write of it: a write it does not see of the storage's values as y has them */
        uint32_t old;
        st = current(z, r, first, &old);
        if (!st)
            st = hidden_write_as(z, old, val, SG_NODE_NO_GRAD, true, false, &val);
    }
    if (!st) {
        s->base = val;
        s->gen++;
        s->writes++;
        s->writes_no_grad += (flags & SG_NODE_NO_GRAD) && !hidden;
        s->writes_hidden += hidden;
        /* the object written through: the root's, or (a synthetic base) the input's on it */
        uint32_t obj = root < z->src->nvals ? z->v[root].obj : z->v[chain[n - 1]].obj;
        s->hobj = obj;
        if (obj != SG_NOVAL) {
            z->v[obj].writes++;
            z->v[obj].writes_no_grad += (flags & SG_NODE_NO_GRAD) && !hidden;
            z->v[obj].writes_hidden += hidden;
        }
        for (uint32_t i = 0; i < n; i++) /* the values written along the chain are current */
            z->v[chain[i]].gen = s->gen;
    }
    sg_free(chain);
    return st;
}

/* Call node writes f into self (in place or out=): f converted to self's
 * dtype as the kernel writes it, and for out= laid out as self is (the
 * functional row lays its result out from its operands, of which out is
 * none: sub(t0.t(), t3, out=t3) gives t3's values in t0's order, where a
 * later t3.view must see t3's; an in-place row follows self, its first
 * operand), stored; the call's value is self's next version, the same link
 * of the same chain. */
static sg_status write_through(fz *z, sg__replay *r, uint32_t node, const sg__gnode *nd, uint32_t self, uint32_t f)
{
    if (z->dst->vals[f].u.t.dtype != z->src->vals[self].u.t.dtype ||
        ((nd->schema->flags & SG_OPF_OUT) && !laid_out_as(z, f, self))) {
        uint32_t now;
        CHAIN(current(z, r, self, &now));
        CHAIN(copy_as(z, r, now, f, &f));
    }
    uint32_t out = z->src->nodes[node].out;
    bool grad = !(nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)) && is_tensor(z->src, out) &&
                z->src->vals[out].u.t.requires_grad;
    CHAIN(store_value(z, r, nd->schema->name, nd->flags, grad, self, f));
    if (grad)
        store_of(z, self)->grad = true;
    bump(z, nd, self);
    next_version(z, self, out, f);
    if (z->v[self].xhist) { /* (through a write autograd does not see the old history, with grad the write's) */
        z->v[out].hist = !grad ? z->v[self].hist
                          : laid_out_as(z, f, self) || sg__graph_empty(z->src, self) ? f : SG_NOVAL;
        z->v[out].xhist = z->v[out].hist != SG_NOVAL;
    }
    if (z->v[out].dreg && !(nd->flags & SG_NODE_DATA) && sg__op_bumps_version(nd->schema))
        z->v[out].rstale = true; /* (x's own counter moved: its grad_fn made again when read) */
    if (z->v[out].parent != SG_NOVAL && !laid_out_as(z, f, self))
        z->v[out].cur = SG_NOVAL; /* a view: made again from its base when used (a root is its store's) */
    if (z->v[out].parent != SG_NOVAL && (nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)) == SG_NODE_NO_GRAD &&
        is_tensor(z->src, out) && z->src->vals[out].u.t.requires_grad && sg__graph_empty(z->src, out))
        z->v[out].cur = SG_NOVAL; /* (a view with no element written under no_grad: its counter moved, PyTorch makes
                                     its grad_fn again when it is used, whose gradient is a factory's zeros,
                                     SG_NODE_REGEN: a plain tensor under a TwoTensor loss) */
    return sg__replay_map(r, out, f);
}

/* An in-place call of nd on self (its first argument): its functional row
 * over the current values, written through. */
static sg_status write(fz *z, sg__replay *r, uint32_t node, const sg__gnode *nd, const sg__garg *args)
{
    const sg__opinfo *info = sg__op_info(nd->schema->op);
    const sg__schema *fs = info && info->functional != SG_OP_NONE ? sg__opreg_op(z->dst->reg, info->functional) : NULL;
    if (!fs)
        return unsupported(z, "an in-place call without a functional variant", nd->schema->name);
    sg__garg cur[SG_SCHEMA_ARGS];
    uint32_t f;
    CHAIN(current_args(z, r, nd, args, cur));
    uint32_t self = z->src->args[nd->args].u.v;
    const sg__gnode *x = NULL; /* (the as_strided under self's value, through the views made of it since) */
    for (uint32_t v = cur[0].kind == SG_A_VALUE ? cur[0].u.v : SG_NOVAL, n; v != SG_NOVAL && !x;) {
        n = z->dst->vals[v].node;
        const sg__gnode *y = n != SG_NOVAL && z->dst->nodes[n].kind == SG_N_CALL ? &z->dst->nodes[n] : NULL;
        if (y && ((y->flags & SG_NODE_STRIDED_BASE) ||
                  (is_asstrided(y) && z->dst->args[y->args].kind == SG_A_VALUE &&
                   unmasked(z->dst, z->dst->args[y->args].u.v) != z->dst->args[y->args].u.v)))
            x = y;
        else if (y && (y->schema->flags & SG_OPF_VIEW) && !(y->schema->flags & SG_OPF_INPLACE) && y->nargs &&
                 z->dst->args[y->args].kind == SG_A_VALUE)
            v = z->dst->args[y->args].u.v; /* (a squeeze of it, ...) */
        else
            v = SG_NOVAL;
    }
    if (x) {
        /* self an as_strided of a view, over the storage's base, or a view of one: the write's CopySlices
           hands the gradient of what it wrote over to the base's positions, self's layout of the base, not to
           the view's own history as a read would (over the base itself, not view_mask's) */
        CHAIN(strided_as(z, self, unmasked(z->dst, z->dst->args[x->args].u.v), &cur[0].u.v));
    }
    CHAIN(sg__replay_call(r, fs, cur, nd->nargs, &f));
    hide(z, f, nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)); /* (its other arguments may require grad) */
    if (z->v[self].parent != SG_NOVAL) /* a view written: its grad_fn made again (rebase_history) */
        hide(z, f, SG_NODE_REGEN);
    CHAIN(hidden_write(z, cur[0].u.v, f, nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA),
                       z->src->vals[self].u.t.requires_grad || store_of(z, self)->grad, &f));
    return write_through(z, r, node, nd, self, f);
}

/* The storage of src value v gets a synthetic base from now on (a resize
 * of it: its positions are what counts, and it may grow): its contents as
 * one dimension over its final number of elements (an input's: the
 * synthetic placeholder, the program's writes scattered in; a storage the
 * program made: zeros with its root's contents scattered in), and every
 * root it had (its versions) an as_strided of that base by its own layout. */
static sg_status make_synthetic(fz *z, sg__replay *r, uint32_t v)
{
    const sg__graph *src = z->src;
    uint32_t sid = sid_of(z, v), slot = (uint32_t)src->nvals + sid;
    fstore *s = &z->st[sid];
    if (s->synth)
        return SG_OK;
    uint32_t root = s->input != SG_NOVAL ? s->input : s->root, flat, cur;
    if (root == SG_NOVAL)
        return sg__err(z->dst->ctx, SG_EINTERNAL, "functionalize: a storage without a root");
    CHAIN(current(z, r, root, &cur));
    if (s->input != SG_NOVAL) {
        CHAIN(synth_base(z, sid, &flat));
    } else {
        const sg_expr *numel = sg__graph_storage_numel(src, sid);
        uint32_t off;
        CHAIN(sg__graph_exprs(z->dst, &off, &numel, 1));
        sg__garg za[2] = {{.kind = SG_A_EXPRS, .u.list = {off, 1}},
                          {.kind = SG_A_DTYPE, .kw = "dtype", .u.dtype = src->vals[root].u.t.dtype}};
        CHAIN(sg__graph_record(z->dst, sg__opreg_op(z->dst->reg, SG_OP_zeros), za, 2, 0, NULL, &flat));
    }
    if (s->input == SG_NOVAL || s->gen) /* the root's contents in place */
        CHAIN(strided_scatter(z, root, flat, cur, &flat));
    for (uint32_t u = 0; u < src->nvals; u++) /* its roots so far: views of the base */
        if (u != slot && is_tensor(src, u) && sid_of(z, u) == sid && z->v[u].parent == SG_NOVAL &&
            (z->v[u].cur != SG_NOVAL || u == root)) {
            z->v[u].parent = slot;
            z->v[u].vnode = SG_NOVAL;
        }
    s->synth = true;
    s->base = flat;
    s->gen++; /* every view made before is made again from the base */
    return SG_OK;
}

/* src value out: object o's next version laid out anew over o's storage
 * (resize_, an out= resized): on its synthetic base. */
static sg_status resized(fz *z, sg__replay *r, uint32_t o, uint32_t out)
{
    CHAIN(make_synthetic(z, r, o));
    const fval *of = &z->v[o];
    z->v[out] = (fval){.parent = (uint32_t)z->src->nvals + sid_of(z, o), .vnode = SG_NOVAL,
                       .cur = SG_NOVAL, .obj = of->obj, .ver = of->ver, .hist = SG_NOVAL};
    if (of->obj != SG_NOVAL)
        z->v[of->obj].meta = true;
    return SG_OK;
}


/* An out= call: its functional row over the other arguments, written into
 * out (PyTorch's functionalization of out=: the result replaces out's
 * contents; an out of other sizes is resized to the result's, which only
 * a tensor the program made, viewed by nothing, may be here). */
static sg_status write_out(fz *z, sg__replay *r, uint32_t node, const sg__gnode *nd, const sg__garg *args)
{
    const sg__schema *sch = nd->schema;
    const sg__opinfo *info = sg__op_info(sch->op);
    const sg__schema *fs = info && info->functional != SG_OP_NONE ? sg__opreg_op(z->dst->reg, info->functional) : NULL;
    if (!fs)
        return unsupported(z, "an out= call without a functional variant", sch->name);
    sg__garg cur[SG_SCHEMA_ARGS], in[SG_SCHEMA_ARGS];
    CHAIN(current_args(z, r, nd, args, cur));
    uint32_t n = 0, o = SG_NOVAL, f;
    for (uint32_t i = 0; i < nd->nargs; i++) { /* every argument but the one written (out) */
        const sg__garg *a = &z->src->args[nd->args + i];
        int at = (int)i;
        if (a->kw)
            for (at = 0; at < sch->nargs && strcmp(sch->args[at].name, a->kw); at++)
                ;
        if (at < sch->nargs && ((sch->written >> at) & 1u) && a->kind == SG_A_VALUE)
            o = a->u.v;
        else
            in[n++] = cur[i];
    }
    if (o == SG_NOVAL || !is_tensor(z->src, o))
        return unsupported(z, "an out= call without its out", sch->name);
    /* a reduction or a creation into an out of another dtype computes in out's (sum into int64
       truncates each element first): the functional overload's dtype= where it has one, as the
       out= overload's rule computes it (SG_OUT_INTO) */
    bool has_dtype = n && in[0].kind == SG_A_VALUE && is_tensor(z->dst, in[0].u.v) &&
                     z->dst->vals[in[0].u.v].u.t.dtype == z->src->vals[o].u.t.dtype; /* (self's dtype: nothing to say) */
    for (uint32_t i = 0; i < n; i++)
        has_dtype |= in[i].kw && !strcmp(in[i].kw, "dtype");
    for (int i = 0; i < fs->nargs && !has_dtype; i++)
        if (!strcmp(fs->args[i].name, "dtype") && n < SG_SCHEMA_ARGS)
            in[n++] = (sg__garg){.kind = SG_A_DTYPE, .kw = fs->args[i].name, .u.dtype = z->src->vals[o].u.t.dtype};
    CHAIN(sg__replay_call(r, fs, in, n, &f));
    uint8_t hid = nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA);
    hide(z, f, hid);
    /* (a factory's out= into a leaf that required grad: out requires none, its history cut; an out whose
       storage a write with grad gave a history keeps it, whatever its traced flag says) */
    bool keeps = hid && (z->src->vals[o].u.t.requires_grad || store_of(z, o)->grad) && !(nd->flags & SG_NODE_CUT);
    if (sg__aot_same_sizes(z->src, o, nd->out)) {
        const sg__fake_tensor *ft = &z->dst->vals[f].u.t, *ot = &z->src->vals[o].u.t;
        bool fits = ft->ndim == ot->ndim;
        for (uint32_t d = 0; d < ot->ndim && fits; d++)
            fits = sg__graph_size(z->dst, f, d) == sg__graph_size(z->src, o, d);
        if (!fits) { /* an out kept of the result's element count (arange): the result viewed as it */
            uint32_t off;
            CHAIN(sg__graph_exprs(z->dst, &off, z->src->exprs + ot->dims, ot->ndim));
            sg__garg a[2] = {{.kind = SG_A_VALUE, .u.v = f}, {.kind = SG_A_EXPRS, .u.list = {off, ot->ndim}}};
            CHAIN(sg__replay_call(r, sg__opreg_op(z->dst->reg, SG_OP_view), a, 2, &f));
            hide(z, f, hid);
        }
        if (keeps) {
            uint32_t old; /* an out= autograd does not see: o keeps its history */
            CHAIN(current(z, r, o, &old));
            CHAIN(hidden_write(z, old, f, hid, true, &f));
        }
        return write_through(z, r, node, nd, o, f);
    }
    /* resized (resize_output): out takes the result's layout over its
       storage (grown), then the result */
    if (keeps) /* (autograd passes its gradient to its old sizes: summed to them, or validate_outputs raises) */
        return unsupported(z, "an out= autograd does not see that resizes a tensor that requires grad", sch->name);
    CHAIN(resized(z, r, o, nd->out));
    return write_through(z, r, node, nd, nd->out, f);
}

/* requires_grad_ (node nd) of src value self, *cur its current dst value.
 * Clearing the flag of a tensor that requires grad (a leaf: the rule
 * refuses others) cuts its history: *cur becomes a detach of it (stored as
 * its storage's contents where they were written, which current_root
 * reads then). Setting it again on a version of an input that required
 * grad is refused: its gradient would join the input's own. */
static sg_status flag_change(fz *z, const sg__gnode *nd, uint32_t self, uint32_t *cur)
{
    const sg__garg *a = nd->nargs > 1 ? &z->src->args[nd->args + 1] : NULL;
    bool on = !a || a->kind != SG_A_BOOL || a->u.b, rg = z->src->vals[self].u.t.requires_grad;
    if (on == rg)
        return SG_OK;
    if (on) {
        uint32_t obj = z->v[self].obj, n = obj != SG_NOVAL ? z->src->vals[obj].node : SG_NOVAL;
        if (n != SG_NOVAL && z->src->nodes[n].kind == SG_N_PLACEHOLDER && z->src->vals[obj].u.t.requires_grad)
            return unsupported(z, "requires_grad_(True) of an input that required grad, after its flag was cleared",
                               nd->schema->name);
        return SG_OK;
    }
    if (z->v[self].parent != SG_NOVAL)
        return unsupported(z, "requires_grad_(False) of a view", nd->schema->name);
    sg__garg x = {.kind = SG_A_VALUE, .u.v = *cur};
    CHAIN(sg__graph_record(z->dst, sg__opreg_op(z->dst->reg, SG_OP_detach), &x, 1, 0, NULL, cur));
    fstore *s = store_of(z, self);
    if (s->gen)
        s->base = *cur;
    return SG_OK;
}

static sg_status hook(sg__replay *r, void *ud, uint32_t node, const sg__garg *args, size_t nargs)
{
    fz *z = ud;
    const sg__gnode *nd = &z->src->nodes[node];
    const sg__schema *sch = nd->schema;
    const sg__opinfo *info = sg__op_info(sch->op);
    (void)nargs;
    if (sch->flags & SG_OPF_OUT)
        return write_out(z, r, node, nd, args);
    if (sch->flags & SG_OPF_INPLACE) {
        unsigned op = sch->op;
        uint32_t self = z->src->args[nd->args].u.v, cur;
        if (op == SG_OP_detach_ || op == SG_OP_requires_grad_) { /* autograd's flags only: the same value */
            CHAIN(current(z, r, self, &cur));
            if (op == SG_OP_requires_grad_)
                CHAIN(flag_change(z, nd, self, &cur));
            next_version(z, self, nd->out, cur);
            return sg__replay_map(r, nd->out, cur);
        }
        if (info && (info->tags & SG_T_INPLACE_VIEW) && op != SG_OP_resize_) {
            /* a metadata mutation: the new version views the old one (as_strided_: the storage) */
            uint8_t hid = nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA);
            bool rg = z->src->vals[self].u.t.requires_grad;
            uint32_t base = z->src->vals[self].u.t.base;
            bool again = hid == SG_NODE_NO_GRAD && rg && base != SG_NOVAL; /* (its grad_fn made again: below) */
            /* as_strided_ takes positions of the storage: made over its root, or over what autograd takes
               it of (self; a view under no_grad: its base, whose as_strided its grad_fn is made again as) */
            uint32_t of = again ? base : self;
            uint32_t obj = z->v[self].obj, parent = is_asstrided(nd) ? strided_parent(z, self, of) : self, v;
            of = parent == of ? of : self;
            CHAIN(current(z, r, parent, &cur));
            if (is_asstrided(nd))
                CHAIN(strided_over(z, r, parent, cur, &cur));
            bool laid = true;
            if (is_asstrided(nd) && parent == self)
                CHAIN(laid_as(z, cur, self, &laid));
            if (!laid)
                return strided_copy_refused(z, sch->name);
            /* (as_strided_ of a view that does not cover its storage: as the out-of-place one below, its
               gradient reaches the view's own elements only) */
            sg_status vst = is_asstrided(nd) && parent != self ? strided_of_view(z, r, node, of, parent, cur, &v)
                                                               : replay_view(z, r, node, cur, &v);
            if (vst == SG_ESHAPE && is_asstrided(nd)) /* (the trace's as_strided_ fit its storage) */
                return strided_copy_refused(z, sch->name);
            CHAIN(vst);
            if (again) {
                /* a view under no_grad: autograd makes its grad_fn again from its base with the new layout
                   (its version moved), so the gradient goes through this view as through any */
                uint32_t vn = z->dst->vals[v].node;
                if (vn != SG_NOVAL)
                    z->dst->nodes[vn].flags &= (uint8_t)~SG_NODE_NO_GRAD;
            } else {
                /* else the tensor keeps its history: its gradient passes to the old version, summed to its
                   sizes (autograd.c), which an as_strided_ node reads only where it is the storage's root */
                if (hid && rg && parent != self)
                    return unsupported(z, "as_strided_ under no_grad of a tensor that requires grad and is not "
                                          "its storage's first tensor", sch->name);
                CHAIN(hidden_write(z, cur, v, hid, rg, &v));
            }
            fstore *rs = store_of(z, self);
            /* (a layout that changed: squeeze_ of a size other than 1 changes none; a storage of one input
               or none: the roots of inputs sharing one without a synthetic base take their own values, not
               the storage's, which a moved generation would give them) */
            bool relaid = !is_asstrided(nd) && rg && base == SG_NOVAL && !rs->synth && rs->inputs < 2 &&
                          obj != SG_NOVAL && z->v[obj].parent == SG_NOVAL &&
                          !sg__aot_same_layout(z->src, self, nd->out);
            uint32_t proot = parent; /* (through the object's own relaid versions: x.t_() then x.as_strided_) */
            while (is_asstrided(nd) && rg && base == SG_NOVAL && proot < z->src->nvals &&
                   z->v[proot].parent < z->src->nvals && z->v[proot].obj != SG_NOVAL &&
                   z->v[z->v[proot].parent].obj == z->v[proot].obj)
                proot = z->v[proot].parent;
            if (relaid || (is_asstrided(nd) && rg && base == SG_NOVAL && proot < z->src->nvals &&
                           z->v[proot].parent == SG_NOVAL && !rs->synth && rs->inputs < 2)) {
                /* a base of views that requires grad laid out anew in place (t_, squeeze_ ..., under no_grad
                   too; as_strided_ with grad of a storage's root: one the program made, or an input alone on
                   its storage): PyTorch makes the grad_fn of each view made of it before again when it is
                   used (the base's version moved), as an as_strided over the base as it is now, so the
                   gradient reaches the base's new layout. The views made before are made again (its
                   generation moves) as as_strided of its new version (regenerated_view) */
                fstore *s = rs;
                s->regen = nd->out;
                s->regen_node = node;
                s->gen++;
            } else if (is_asstrided(nd) && rg && base == SG_NOVAL && rs->synth && obj != SG_NOVAL) {
                /* (on a synthetic base: a view of the object made before, which requires grad, read after,
                   would be made again from the base's positions, not as PyTorch's as_strided over the
                   object's new layout; one written after meets the write's own checks first) */
                for (uint32_t u = 0; u < nd->out; u++)
                    if (is_tensor(z->src, u) && z->src->vals[u].u.t.requires_grad &&
                        z->src->vals[u].u.t.base != SG_NOVAL && z->v[z->src->vals[u].u.t.base].obj == obj &&
                        !via_no_grad_view(z, u) && read_not_written_since(z, node, u))
                        return unsupported(z, "as_strided_ with grad of a tensor on a synthetic base, with views of "
                                              "it made before (autograd makes their grad_fn again over its new "
                                              "layout)", sch->name);
            }
            CHAIN(moved_counter(z, nd, self, relaid));
            z->v[nd->out] = (fval){.parent = parent, .vnode = node, .cur = v, .gen = store_of(z, self)->gen, .obj = obj,
                                   .ver = z->v[self].ver, .hist = SG_NOVAL};
            if (strided_off_grad(z, nd->out))
                hide(z, v, SG_NODE_DATA);
            if (obj != SG_NOVAL) {
                z->v[obj].meta = true;
                z->v[obj].relaid |= !sg__aot_same_layout(z->src, self, nd->out);
            }
            bump(z, nd, self);
            return sg__replay_map(r, nd->out, v);
        }
        if (op == SG_OP_set__source_Tensor) {
            /* self's object takes source's storage and view: the new version
               is source's link of source's chain (PyTorch: it steals the view chain) */
            uint32_t src_v = z->src->args[nd->args + 1].u.v, old;
            bool dreg = false; /* (fval dreg) */
            CHAIN(current(z, r, src_v, &cur));
            uint8_t hid = nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA);
            if (hid && !z->src->vals[self].u.t.requires_grad && z->src->vals[self].u.t.written_rg &&
                !sg__aot_same_sizes(z->src, self, src_v))
                /* (an input a write with grad through its view gave a history, CopySlices, which its traced flag
                   does not say: x keeps it, and the gradient of y's sizes meets validate_outputs there) */
                return unsupported(z, "x.data = y (or x.set_(y) under no_grad) of other sizes of an input a write "
                                      "with grad through its view gave a history", sch->name);
            bool keeps = hid && z->src->vals[self].u.t.requires_grad;
            if (keeps) {
                /* x.data = y, or x.set_(y) under no_grad: x keeps its autograd history (its gradient passes
                   to its old version, summed to its sizes where they differ, as validate_outputs does) */
                CHAIN(current(z, r, self, &old));
                /* (cur is the source's value, of the program: a copy says it, not the call that made it, whose
                   own result, clamp(x) of x say, keeps no history of x) */
                uint8_t how = (nd->flags & SG_NODE_DATA) ? SG_NODE_DATA : SG_NODE_NO_GRAD;
                if (!sg__aot_same_sizes(z->src, self, src_v)) { /* (other sizes: over an empty tensor of y's layout that
                                                          is a hidden write over old, so the copy has y's sizes) */
                    sg__garg a[4];
                    CHAIN(sg__aot_layout_args(z->dst, z->src, src_v, old, a));
                    CHAIN(sg__replay_call(r, sg__opreg_op(z->dst->reg, SG_OP_new_empty_strided), a, 3, &old));
                    z->dst->nodes[z->dst->vals[old].node].flags |= how | SG_NODE_WRITE;
                }
                CHAIN(hidden_write_as(z, old, cur, how, true, false, &cur));
                dreg = z->src->vals[self].u.t.base != SG_NOVAL || z->v[self].dreg;
            }
            bool nograd = (nd->flags & SG_NODE_NO_GRAD) && !(nd->flags & SG_NODE_DATA) &&
                          !z->src->vals[self].u.t.requires_grad && z->src->vals[src_v].u.t.requires_grad;
            if (nograd) {
                /* x.set_(y) under no_grad of an x that requires no grad: x keeps that (its values y's, not
                   y's history): a detach of them, current while the storage is not written (nograd) */
                sg__garg a = {.kind = SG_A_VALUE, .u.v = cur};
                CHAIN(sg__replay_call(r, sg__opreg_op(z->dst->reg, SG_OP_detach), &a, 1, &cur));
            }
            fval *sv = &z->v[src_v], *sf = &z->v[self];
            z->v[nd->out] = (fval){.parent = sv->parent, .vnode = sv->vnode, .cur = cur, .gen = store_of(z, src_v)->gen,
                                   .obj = sf->obj, .ver = sf->ver, .elem = sv->elem, .hist = SG_NOVAL,
                                   .nograd = nograd, .dreg = dreg};
            if (keeps && !dreg) {
                z->v[nd->out].hist = cur; /* (x made again from y's storage keeps its history: link_view) */
                z->v[nd->out].xhist = true;
            }
            if ((keeps && !dreg) || (!hid && z->v[nd->out].parent == SG_NOVAL)) {
                /* (x a root of y's storage, with a history of its own: that of x.data = y, or of a set_ with
                   grad, y's family seeing none of x's writes: current_root) */
                fstore *ys = store_of(z, src_v);
                uint32_t first = ys->input != SG_NOVAL ? ys->input : ys->root;
                if (!ys->families && (!ys->gen || ys->hobj == SG_NOVAL))
                    ys->hobj = first != SG_NOVAL ? z->v[first].obj : SG_NOVAL;
                if (z->v[nd->out].parent == SG_NOVAL && sf->obj != ys->hobj)
                    ys->families = true;
            }
            if (dreg) {
                /* a view x keeps its view metadata and version counter: its base is its old chain's root (or
                   the one an earlier set_ kept); a set_ under no_grad moves the counter itself */
                uint32_t rb = self;
                if (sf->dreg)
                    rb = sf->rbase;
                else
                    while (z->v[rb].parent != SG_NOVAL)
                        rb = z->v[rb].parent;
                fval *nf = &z->v[nd->out];
                nf->rbase = rb;
                nf->rgen = store_of(z, rb)->gen;
                nf->rstale = !(nd->flags & SG_NODE_DATA) || (sf->dreg && sf->rstale);
            }
            if (sf->obj != SG_NOVAL)
                z->v[sf->obj].meta = true;
            if (nd->flags & SG_NODE_NO_GRAD) /* (with grad: its backward raises, or a check of joint.c refuses,
                                                   before a view's regenerated grad_fn matters) */
                CHAIN(moved_counter(z, nd, self, false));
            bump(z, nd, self);
            return sg__replay_map(r, nd->out, cur);
        }
        if (op == SG_OP_resize_) { /* sizes set in place, the storage grown where they need it */
            CHAIN(resized(z, r, self, nd->out));
            CHAIN(current(z, r, nd->out, &cur));
            return sg__replay_map(r, nd->out, cur);
        }
        return write(z, r, node, nd, args);
    }
    /* _unsafe_view (reshape's copy viewed) is no view for PyTorch, but its value shares the
       copy's storage here: a link of the copy's chain, or a write through one of them would not
       reach the other (an as_strided of it, written, then it returned) */
    bool view = ((sch->flags & SG_OPF_VIEW) || sch->op == SG_OP__unsafe_view) && nd->nargs &&
                z->src->args[nd->args].kind == SG_A_VALUE;
    uint32_t parent = view ? z->src->args[nd->args].u.v : SG_NOVAL, v;
    if (view && is_asstrided(nd) && is_tensor(z->src, nd->out) &&
        (parent = strided_parent(z, nd->out, parent)) != z->src->args[nd->args].u.v) {
        /* as_strided of a storage's positions: made over the storage's base, not the view it was called on */
        uint32_t arg = z->src->args[nd->args].u.v;
        CHAIN(current(z, r, parent, &v));
        CHAIN(strided_over(z, r, parent, v, &v));
        /* (its gradient reaches the view's own elements only, and a view of a custom Function's output
           has that Function between it and the base) */
        CHAIN(strided_of_view(z, r, node, arg, parent, v, &v));
        CHAIN(sg__replay_map(r, nd->out, v));
        made(z, nd->out, z->src->args[nd->args].u.v, node, v); /* (its version counter the view's) */
        z->v[nd->out].vers = moves(store_of(z, nd->out)) + 1;
        if (strided_off_grad(z, nd->out))
            hide(z, v, SG_NODE_DATA);
        return SG_OK;
    }
    sg__garg cur[SG_SCHEMA_ARGS];
    CHAIN(current_args(z, r, nd, args, cur));
    if (view && is_asstrided(nd) && cur[0].kind == SG_A_VALUE)
        CHAIN(strided_over(z, r, z->src->args[nd->args].u.v, cur[0].u.v, &cur[0].u.v));
    bool laid = true;
    if (view && is_asstrided(nd) && cur[0].kind == SG_A_VALUE)
        CHAIN(laid_as(z, cur[0].u.v, z->src->args[nd->args].u.v, &laid));
    if (!laid)
        /* (what stands for self is not at its storage offset, or not laid out as it: a copy of its values, x
           after x.data = y, whose storage positions are not the caller's) */
        return strided_copy_refused(z, sch->name);
    bool strided = true;
    if (view && sch->op == SG_OP_view && cur[0].kind == SG_A_VALUE && is_tensor(z->dst, cur[0].u.v))
        CHAIN(sg__aot_same_strides(z->dst, cur[0].u.v, z->src, z->src->args[nd->args].u.v, &strided));
    if (!strided) {
        /* self laid out otherwise than the traced value (a size-1 dimension's stride, which decides a later
           result's layout): reshape's values, a contiguous copy viewed (sg__aot_view_again likewise) */
        CHAIN(sg__aot_reshape_as(z->dst, z->src, nd->out, cur[0].u.v, nd->line, &v));
        hide(z, v, nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA));
        CHAIN(sg__replay_map(r, nd->out, v));
    } else {
        sg_status st = sg__replay_default(r, node, cur, nd->nargs, &v);
        if (st == SG_ESHAPE && view && is_asstrided(nd)) /* (the trace's as_strided fit its storage) */
            return strided_copy_refused(z, sch->name);
        CHAIN(st);
    }
    if (nd->out == SG_NOVAL)
        return SG_OK;
    const sg__gval *ov = &z->src->vals[nd->out];
    if (ov->kind == SG_V_LIST) /* unbind: each element a view, made again only through the list */
        for (uint32_t k = 0; k < ov->u.list.n; k++) {
            uint32_t e = z->src->ids[ov->u.list.off + k];
            made(z, e, parent, node, z->dst->ids[z->dst->vals[v].u.list.off + k]);
        }
    else
        made(z, nd->out, parent, node, v);
    if (view && is_asstrided(nd) && is_tensor(z->src, nd->out) && z->v[parent].parent != SG_NOVAL)
        z->v[nd->out].vers = moves(store_of(z, nd->out)) + 1; /* (of a view of an input: link_view) */
    return SG_OK;
}
/* The src value at the root of v's chain of views and in-place calls. */
static uint32_t src_root(const sg__graph *src, uint32_t v)
{
    for (;;) {
        const sg__gnode *nd = src->vals[v].node == SG_NOVAL ? NULL : &src->nodes[src->vals[v].node];
        if (!nd || nd->kind != SG_N_CALL || !nd->nargs || src->args[nd->args].kind != SG_A_VALUE ||
            !(nd->schema->flags & (SG_OPF_VIEW | SG_OPF_INPLACE)) || !is_tensor(src, src->args[nd->args].u.v))
            return v;
        v = src->args[nd->args].u.v;
    }
}

/* Which of cond node's operands (the placeholders both branches take, in
 * order) its branches write: mk[k] set, and bumps[2 * k + b] the version
 * bumps of branch b (0 true, 1 false) through it, as eager execution bumps
 * them. Errors: SG_EUNSUPPORTED (a cond nested in a branch that writes what
 * it takes). */
static sg_status cond_writes(fz *z, uint32_t node, uint8_t *mk, uint32_t *bumps)
{
    const sg__graph *src = z->src;
    const sg__garg *a = &src->args[src->nodes[node].args];
    for (uint32_t i = 0; i < src->nnodes; i++) {
        const sg__gnode *nd = &src->nodes[i];
        if (nd->kind != SG_N_CALL || !nd->schema->written || nd->scope == 0 || !nd->nargs)
            continue;
        uint32_t b = nd->scope; /* the branch of this cond it is in, if any */
        while (b != SG_NOVAL && src->scopes[b].parent != src->nodes[node].scope)
            b = src->scopes[b].parent;
        if (b != a[1].u.v && b != a[2].u.v)
            continue;
        const sg__garg *w = &src->args[nd->args];
        if ((nd->schema->flags & SG_OPF_OUT))
            for (uint32_t k = 0; k < nd->nargs; k++)
                if (src->args[nd->args + k].kw && !strcmp(src->args[nd->args + k].kw, "out"))
                    w = &src->args[nd->args + k];
        if (w->kind != SG_A_VALUE || !is_tensor(src, w->u.v))
            continue;
        uint32_t root = src_root(src, w->u.v);
        const sg__gnode *rn = &src->nodes[src->vals[root].node];
        if (rn->kind != SG_N_PLACEHOLDER || rn->scope == 0)
            continue; /* an intermediate of the branch */
        if (rn->scope != nd->scope || (rn->scope != a[1].u.v && rn->scope != a[2].u.v))
            return unsupported(z, "a write of what a cond takes, in a nested cond", nd->schema->name);
        const sg__scope *sc = &src->scopes[rn->scope];
        for (uint32_t k = 0; k < sc->nphs; k++)
            if (sc->phs[k] == src->vals[root].node) {
                mk[k] = 1;
                if (!(nd->flags & SG_NODE_DATA) && sg__op_bumps_version(nd->schema))
                    bumps[2 * k + (rn->scope == a[2].u.v)]++;
            }
    }
    return SG_OK;
}

/* Before a subgraph's output: a branch of a root cond that writes what it
 * takes gives each such operand's new contents after its outputs. */
static sg_status branch_end(sg__replay *r, void *ud, uint32_t scope, const uint32_t **vals, uint32_t *n)
{
    fz *z = ud;
    *vals = NULL;
    *n = 0;
    if (!z->branch_writes || z->src->scopes[scope].parent != 0)
        return SG_OK;
    const sg__scope *sc = &z->src->scopes[scope];
    if (z->capextra < z->nmk) {
        uint32_t *grown = sg__realloc(z->dst->ctx, z->extra, z->nmk * sizeof *grown);
        if (!grown)
            return sg__nomem(z->dst->ctx);
        z->extra = grown;
        z->capextra = z->nmk;
    }
    z->nextra = 0;
    for (uint32_t k = 0; k < z->nmk && k < sc->nphs; k++)
        if (z->mk[k])
            CHAIN(current(z, r, z->src->nodes[sc->phs[k]].out, &z->extra[z->nextra++]));
    *vals = z->extra;
    *n = z->nextra;
    return SG_OK;
}

/* After a root cond whose branches write what they take: each such
 * operand takes the contents the branch that ran gave (the cond's extra
 * outputs), written back through its chain; its version bumps are the
 * branch's, known at run time (meta conds). */
static sg_status cond_done(sg__replay *r, void *ud, uint32_t node, uint32_t list)
{
    fz *z = ud;
    const sg__graph *src = z->src;
    const sg__gval *ol = &src->vals[src->nodes[node].out];
    uint32_t nsrc = ol->kind == SG_V_LIST ? ol->u.list.n : 1, j = 0;
    for (uint32_t i = 0; i < nsrc && ol->kind == SG_V_LIST; i++) { /* its results: each the root of its storage */
        uint32_t e = src->ids[ol->u.list.off + i];
        if (is_tensor(src, e) && z->v[e].obj == SG_NOVAL)
            made(z, e, SG_NOVAL, SG_NOVAL, z->dst->ids[z->dst->vals[list].u.list.off + i]);
    }
    if (!z->branch_writes || z->src->nodes[node].scope != 0)
        return SG_OK;
    const sg__garg *a = &src->args[src->nodes[node].args];
    sg_status s = SG_OK;
    for (uint32_t k = 0; k < z->nmk && !s; k++) {
        if (!z->mk[k])
            continue;
        uint32_t op = src->ids[a[3].u.list.off + k], e = z->dst->ids[z->dst->vals[list].u.list.off + nsrc + j++], old;
        /* (a write under no_grad: autograd keeps the operand's history, its gradient passes to the old
           contents, as through any hidden write) */
        s = current(z, r, op, &old);
        if (!s)
            s = hidden_write(z, old, e, SG_NODE_NO_GRAD,
                             z->src->vals[op].u.t.requires_grad || z->src->vals[op].u.t.written_rg ||
                                 store_of(z, op)->grad, &e); /* (an input a write with grad gave a history too) */
        if (!s)
            s = store_value(z, r, "cond", SG_NODE_NO_GRAD, false, op, e);
        uint32_t owner = z->v[op].ver;
        sg__aot_meta *m = z->meta;
        for (uint32_t i = 0; i < m->nin && !s && owner != SG_NOVAL; i++)
            if (m->in[i].ph == owner && (z->bumps[2 * k] || z->bumps[2 * k + 1])) {
                sg__aot_cond *c = sg__realloc(z->dst->ctx, m->conds, (m->nconds + 1) * sizeof *c);
                if (!c) {
                    s = sg__nomem(z->dst->ctx);
                    break;
                }
                m->conds = c;
                m->conds[m->nconds++] = (sg__aot_cond){.node = z->dst->vals[list].node, .input = i,
                                                       .bumps = {z->bumps[2 * k], z->bumps[2 * k + 1]}};
            }
    }
    z->branch_writes = false;
    return s;
}

/* The tensors subgraph scope lifts of its parent, mapped to their current
 * values (a cond's branches, a custom Function's backward read them as
 * they are when it runs). */
static sg_status lifted_current(fz *z, sg__replay *r, uint32_t scope)
{
    const sg__scope *sc = &z->src->scopes[scope];
    uint32_t now;
    for (uint32_t i = 0; i < sc->nphs; i++) {
        uint32_t v = sc->outer[i];
        if (v == SG_NOVAL || !is_tensor(z->src, v))
            continue;
        CHAIN(current(z, r, v, &now));
        CHAIN(sg__replay_map(r, v, now));
    }
    return SG_OK;
}

/* Which placeholders of the backward of custom Function node (at the
 * root) its calls write (a saved input, a tensor on ctx, a gradient, in
 * place): z->mk, as a root cond's operands are; their writes are
 * functionalized in it and their new contents come out after its
 * gradients (branch_end). Errors: SG_EALIASING (sizes, strides or offset
 * changed in place, which PyTorch's joint asserts against). */
static sg_status function_writes(fz *z, uint32_t node)
{
    const sg__graph *src = z->src;
    uint32_t sc = src->args[src->nodes[node].args].u.v;
    const sg__scope *s = &src->scopes[sc];
    sg_free(z->mk);
    z->nmk = 0;
    if (!(z->mk = sg__calloc(z->dst->ctx, s->nphs ? s->nphs : 1, sizeof *z->mk)))
        return sg__nomem(z->dst->ctx);
    z->nmk = s->nphs;
    for (uint32_t j = 0; j < s->nwrites && !s->failed; j++) { /* (a failed one is replayed empty) */
        const sg__gnode *w = &src->nodes[s->writes[j]];
        const sg__opinfo *info = sg__op_info(w->schema->op);
        bool meta = (info && (info->tags & SG_T_INPLACE_VIEW)) || w->schema->op == SG_OP_resize_ ||
                    w->schema->op == SG_OP_set__source_Tensor;
        uint32_t vals[8];
        size_t nw = sg__graph_node_writes(src, s->writes[j], vals, 8);
        for (size_t q = 0; q < nw; q++) {
            uint32_t root = src_root(src, vals[q]);
            for (uint32_t k = 0; is_tensor(src, root) && k < s->nphs; k++)
                if (s->phs[k] == src->vals[root].node && meta)
                    return sg__err(z->dst->ctx, SG_EALIASING, s->outer[k] == SG_NOVAL
                                   ? "Found an input to the backward that had metadata mutated during the backward "
                                     "pass. This is not supported (%s, line %u)"
                                   : "Found a graph input that had its metadata mutated in the backward. This is not "
                                     "supported (%s, line %u)", w->schema->name, w->line);
                else if (s->phs[k] == src->vals[root].node) {
                    z->mk[k] = 1;
                    z->branch_writes = true;
                }
        }
    }
    return SG_OK;
}

/* Before a custom Function's node: the tensors it names and those its
 * backward lifts, mapped to their current values (the backward reads them
 * as the forward's end left them); at the root, what its backward writes
 * of them (function_writes). */
static sg_status before_function(sg__replay *r, void *ud, uint32_t node)
{
    fz *z = ud;
    const sg__graph *src = z->src;
    const sg__garg *a = &src->args[src->nodes[node].args];
    uint32_t now;
    for (int k = 1; k <= 3; k++)
        for (uint32_t j = 0; j < a[k].u.list.n; j++) {
            uint32_t v = src->ids[a[k].u.list.off + j];
            CHAIN(current(z, r, v, &now));
            CHAIN(sg__replay_map(r, v, now));
            /* an output that views what the Function took (an input returned as it is): made again from
               the storage after a write autograd does not see, it keeps the Function's grad_fn (link_view) */
            if (k == 1 && src->nodes[node].scope == 0 && is_tensor(src, v) && z->v[v].parent != SG_NOVAL &&
                detach_obj(z, v) == SG_NOVAL)
                z->v[v].hist = now;
        }
    CHAIN(lifted_current(z, r, a[0].u.v));
    return src->nodes[node].scope == 0 ? function_writes(z, node) : SG_OK;
}

/* Does a node of scope sc read value v (an argument, or in a list)? */
static bool read_in_scope(const sg__graph *src, const sg__scope *sc, uint32_t v)
{
    uint32_t s = (uint32_t)(sc - src->scopes);
    for (uint32_t i = 0; i < src->nnodes; i++)
        if (src->nodes[i].scope == s && src->nodes[i].kind != SG_N_PLACEHOLDER &&
            sg__graph_node_reads(src, &src->nodes[i], v))
            return true;
    return false;
}

/* After a custom Function's backward was replayed: the placeholders it
 * writes, whose new contents its output gave after the gradients (the
 * node names them: graph.h SG_N_FUNCTION). A tensor it lifts must be a
 * program input as it is (meta->bwrites: the joint copies the new
 * contents into it at the backward's end); a gradient it takes is the
 * joint's to check. Errors: SG_EUNSUPPORTED (a tensor the forward made, a
 * view). */
static sg_status function_written(sg__replay *r, void *ud, uint32_t node, const uint32_t **phs, uint32_t *n)
{
    fz *z = ud;
    const sg__graph *src = z->src;
    const sg__scope *sc = &src->scopes[src->args[src->nodes[node].args].u.v];
    *phs = NULL;
    *n = 0;
    if (src->nodes[node].scope != 0)
        return SG_OK;
    bool any = z->branch_writes;
    z->branch_writes = false;
    if (!any)
        return SG_OK;
    sg_free(z->written);
    if (!(z->written = sg__malloc(z->dst->ctx, z->nmk * sizeof *z->written)))
        return sg__nomem(z->dst->ctx);
    sg__aot_meta *m = z->meta;
    for (uint32_t k = 0; k < z->nmk && k < sc->nphs; k++) {
        if (!z->mk[k])
            continue;
        z->written[(*n)++] = k;
        uint32_t v = sc->outer[k];
        if (v == SG_NOVAL)
            continue;
        uint32_t obj = is_tensor(src, v) ? z->v[v].obj : SG_NOVAL;
        const sg__gnode *on = obj == SG_NOVAL ? NULL : &src->nodes[src->vals[obj].node];
        if (!on || z->v[v].parent != SG_NOVAL || on->kind != SG_N_PLACEHOLDER || on->scope != 0)
            return unsupported(z, "a custom Function's backward that writes a tensor other than a program input "
                                  "as it is (one the forward made, or a view)", sc->name);
        for (uint32_t j = 0; j < sc->nphs; j++) { /* (another tensor it takes on that storage) */
            uint32_t u = sc->outer[j], ph = src->nodes[sc->phs[j]].out;
            if (j != k && u != SG_NOVAL && is_tensor(src, u) && sid_of(z, u) == sid_of(z, v) && read_in_scope(src, sc, ph))
                return unsupported(z, "a custom Function's backward that writes a tensor whose storage another tensor "
                                      "it takes shares (a saved view of it: PyTorch's backward reads the written "
                                      "values)", sc->name);
        }
        sg__aot_bwrite *grown = sg__realloc(z->dst->ctx, m->bwrites, (m->nbwrites + 1) * sizeof *grown);
        if (!grown)
            return sg__nomem(z->dst->ctx);
        m->bwrites = grown;
        m->bwrites[m->nbwrites++] = (sg__aot_bwrite){.value = sg__replay_mapped(r, v), .ph = obj};
    }
    *phs = z->written;
    return SG_OK;
}

/* Before a cond: what it takes (operands, the values its branches lift)
 * mapped to their current values, as any call's arguments are. */
static sg_status before_cond(sg__replay *r, void *ud, uint32_t node)
{
    fz *z = ud;
    const sg__graph *src = z->src;
    const sg__gnode *nd = &src->nodes[node];
    const sg__garg *a = &src->args[nd->args];
    uint32_t now;
    for (uint32_t k = 0; k < a[3].u.list.n; k++) {
        uint32_t v = src->ids[a[3].u.list.off + k];
        if (is_tensor(src, v))
            CHAIN(current(z, r, v, &now));
        if (is_tensor(src, v))
            CHAIN(sg__replay_map(r, v, now));
    }
    for (int b = 1; b <= 2; b++)
        CHAIN(lifted_current(z, r, a[b].u.v));
    if (a[0].kind == SG_A_VALUE && is_tensor(src, a[0].u.v)) {
        CHAIN(current(z, r, a[0].u.v, &now));
        CHAIN(sg__replay_map(r, a[0].u.v, now));
    }
    if (nd->scope != 0)
        return SG_OK;
    /* what its branches write of what they take (accepted under no_grad) */
    uint32_t n = a[3].u.list.n;
    sg_free(z->mk);
    sg_free(z->bumps);
    z->mk = NULL;
    z->nmk = 0;
    z->mk = sg__calloc(z->dst->ctx, n ? n : 1, sizeof *z->mk);
    z->bumps = sg__calloc(z->dst->ctx, 2 * (size_t)n + 1, sizeof *z->bumps);
    if (!z->mk || !z->bumps)
        return sg__nomem(z->dst->ctx);
    CHAIN(cond_writes(z, node, z->mk, z->bumps));
    z->nmk = n;
    for (uint32_t k = 0; k < n; k++)
        z->branch_writes |= z->mk[k] != 0;
    return SG_OK;
}

/* The input (index into meta->in) whose object is the root of v's chain,
 * or SG_NOVAL. */
static uint32_t input_of(const fz *z, const uint32_t *input_idx, uint32_t v)
{
    while (z->v[v].parent != SG_NOVAL) {
        if (z->v[v].parent < z->src->nvals)
            v = z->v[v].parent;
        else if (z->v[v].vnode != SG_NOVAL) /* an as_strided on a synthetic base: what it was called on */
            v = z->src->args[z->src->nodes[z->v[v].vnode].args].u.v;
        else
            break; /* an input on a synthetic base */
    }
    uint32_t obj = z->v[v].obj;
    return obj == SG_NOVAL ? SG_NOVAL : input_idx[obj];
}

/* Per input: what the program did to it, and where each mutation goes
 * (PyTorch's InputAliasInfo and _check_if_mutation_can_be_in_graph). */
static sg_status analyse_inputs(fz *z, sg__aot_meta *m, const uint32_t *last)
{
    const sg__graph *src = z->src;
    for (uint32_t i = 0; i < m->nin; i++) {
        sg__aot_input *in = &m->in[i];
        if (!in->tensor)
            continue;
        uint32_t ph = in->ph;
        const fstore *st = store_of(z, ph);
        in->final = last[ph];
        in->bumps = z->v[ph].bumps;
        /* written through it (on a synthetic base: through it, not through another input of the base) */
        in->data = st->synth ? z->v[ph].writes > 0 : st->writes > 0 && st->input == ph;
        in->stale = st->writes > 0;
        /* set_ to another storage; one back to its own is none */
        in->storage = sid_of(z, in->final) != sid_of(z, ph);
        in->relaid = z->v[ph].relaid;
        in->metadata = in->storage || (z->v[ph].meta && !sg__aot_same_layout(src, ph, in->final));
        /* the counters of the storage it ends on (set_: the new one's) */
        const fstore *fs = store_of(z, in->final);
        in->onto = SG_NOVAL;
        for (uint32_t j = 0; in->storage && j < m->nin; j++)
            if (m->in[j].ph == fs->input)
                in->onto = j;
        in->hidden = fs->writes <= fs->writes_hidden;
        in->no_grad = (in->data || in->storage) && fs->writes <= fs->writes_no_grad + fs->writes_hidden;
        in->requires_grad = src->vals[in->final].u.t.requires_grad;
        in->written_rg = !in->requires_grad && src->vals[in->final].u.t.written_rg;
        in->leaf = src->vals[ph].u.t.leaf;
        in->shared = false; /* (inputs told apart on one storage have stores of their own) */
        for (uint32_t j = 0; j < m->nin && !in->shared; j++)
            in->shared = j != i && m->in[j].tensor &&
                         src->vals[m->in[j].ph].u.t.storage == src->vals[ph].u.t.storage;
        in->cleared = in->leaf && src->vals[ph].u.t.requires_grad && !in->requires_grad;
        in->moved = in->leaf && src->vals[ph].u.t.requires_grad && in->requires_grad && !src->vals[in->final].u.t.leaf;
        bool in_graph = z->keep && (in->data || in->storage) &&
                        ((!in->metadata && !in->requires_grad && !in->written_rg) || in->hidden || in->no_grad);
        if (st->synth) { /* its synthetic base's place (1.9: data only; requires grad if any input on it does) */
            bool rg = false;
            for (uint32_t j = 0; j < m->nin; j++)
                rg |= m->in[j].tensor && sid_of(z, m->in[j].ph) == sid_of(z, ph) &&
                      (src->vals[last[m->in[j].ph]].u.t.requires_grad || src->vals[last[m->in[j].ph]].u.t.written_rg);
            bool no_grad = st->writes <= st->writes_no_grad + st->writes_hidden;
            in_graph = in->data && z->keep && (!rg || no_grad || st->writes <= st->writes_hidden);
            in->no_grad = in->data && no_grad;
        }
        if (!in->data && !in->metadata)
            in->where = SG__AOT_NOT_MUTATED;
        else if (in_graph)
            in->where = SG__AOT_IN_GRAPH;
        else if (in->storage) /* PyTorch's assertion: a set_ must stay in the graph */
            return sg__err(z->dst->ctx, SG_EALIASING,
                           "Encountered a set_ on a graph input (%s), but the input has other mutations that we "
                           "cannot keep in the graph. This is not supported today.",
                           src->vals[ph].name);
        else
            in->where = SG__AOT_OUT_GRAPH;
    }
    return SG_OK;
}

/* Per user output: its alias kind (PyTorch's OutputType, rules R2 to R7 of
 * its ordered classification), then the graph's mode. */
/* The outputs of the custom Functions of src's root (their grad_fn is
 * such a Function: graph.h SG_N_FUNCTION), a flag per value in *out
 * (NULL where src has none). Errors: SG_ENOMEM. */
static sg_status custom_outputs(const sg__graph *src, uint8_t **out)
{
    *out = NULL;
    for (uint32_t i = 0; i < src->nnodes && src->nscopes > 1; i++) { /* (a Function's backward is a scope) */
        const sg__gnode *nd = &src->nodes[i];
        if (nd->kind != SG_N_FUNCTION || nd->scope != 0)
            continue;
        if (!*out && !(*out = sg__calloc(src->ctx, src->nvals ? src->nvals : 1, 1)))
            return sg__nomem(src->ctx);
        const sg__garg *a = &src->args[nd->args + 1];
        for (uint32_t j = 0; j < a->u.list.n; j++)
            (*out)[src->ids[a->u.list.off + j]] = 1;
    }
    return SG_OK;
}

/* Does some tensor input require grad (a backward may run)? */
static bool needs_grad(const sg__graph *src, const sg__aot_meta *m)
{
    for (uint32_t i = 0; i < m->nin; i++)
        if (m->in[i].tensor && src->vals[m->in[i].ph].u.t.requires_grad)
            return true;
    return false;
}

/* Does output o, where it requires grad, need a training graph (its
 * gradient is no input's own: not an input that requires grad, or an
 * alias of one, which takes its history from it)? */
static bool own_history(const sg__aot_meta *m, const sg__aot_output *o)
{
    return !((o->kind == SG_AOT_IS_INPUT || o->kind == SG_AOT_ALIAS_OF_INPUT) && m->in[o->base].requires_grad);
}

static sg_status analyse_outputs(fz *z, sg__aot_meta *m, const sg__gnode *out, const uint32_t *input_idx)
{
    const sg__graph *src = z->src;
    m->nout = out ? out->nargs : 0;
    if (m->nout && !(m->out = sg__calloc(z->dst->ctx, m->nout, sizeof *m->out)))
        return sg__nomem(z->dst->ctx);
    uint32_t bases[64], nbases = 0;
    uint8_t *cfo;
    CHAIN(custom_outputs(src, &cfo));
    sg_status st = SG_OK;
    for (uint32_t k = 0; k < m->nout && !st; k++) {
        sg__aot_output *o = &m->out[k];
        const sg__garg *a = &src->args[out->args + k];
        *o = (sg__aot_output){.kind = SG_AOT_NON_ALIAS, .base = SG_NOVAL, .src = SG_NOVAL, .layout = SG_NOVAL};
        if (a->kind != SG_A_VALUE || !is_tensor(src, a->u.v))
            continue;
        uint32_t v = o->src = a->u.v;
        const sg__fake_tensor *t = &src->vals[v].u.t;
        uint32_t n = 0, multi = 0; /* the tensor outputs on its storage, and those that are elements of unbind */
        for (uint32_t j = 0; j < m->nout; j++) {
            const sg__garg *b = &src->args[out->args + j];
            if (b->kind != SG_A_VALUE || !is_tensor(src, b->u.v) || sid_of(z, b->u.v) != sid_of(z, v))
                continue;
            n++;
            uint32_t vn = z->v[b->u.v].vnode;
            multi += vn != SG_NOVAL && src->vals[src->nodes[vn].out].kind == SG_V_LIST;
        }
        uint32_t obj = z->v[v].obj, i = obj == SG_NOVAL ? SG_NOVAL : input_idx[obj];
        if (cfo && cfo[v] && (i = input_of(z, input_idx, v)) != SG_NOVAL &&
            sid_of(z, m->in[i].ph) == sid_of(z, v)) { /* R1: a custom Function's output on an input's storage */
            o->kind = SG_AOT_CUSTOM_FUNCTION_VIEW;
            continue;
        }
        i = obj == SG_NOVAL ? SG_NOVAL : input_idx[obj];
        if (i != SG_NOVAL && m->in[i].storage) { /* R3: an input given back after a set_ */
            o->kind = SG_AOT_IS_INPUT;
            o->base = i;
            continue;
        }
        if (i != SG_NOVAL && sid_of(z, m->in[i].ph) == sid_of(z, v)) { /* R2b: the input object itself */
            o->kind = SG_AOT_IS_INPUT; /* (even where a set_ onto another input's view made its chain that one's) */
            o->base = i;
            continue;
        }
        i = input_of(z, input_idx, v);
        if (i != SG_NOVAL && sid_of(z, m->in[i].ph) == sid_of(z, v)) { /* R2 */
            if (t->requires_grad && !t->leaf && n == multi)
                continue; /* R2a: aliasing hidden from autograd */
            o->kind = z->v[v].obj == m->in[i].ph ? SG_AOT_IS_INPUT : SG_AOT_ALIAS_OF_INPUT;
            o->base = i;
            continue;
        }
        if (t->base != SG_NOVAL && t->requires_grad && src->vals[t->base].u.t.requires_grad) { /* R4 */
            if (n == 1 || n - multi <= 1) {
                o->kind = SG_AOT_UNSAFE_VIEW_ALIAS;
                continue;
            }
            uint32_t j = 0;
            while (j < m->nout && !(src->args[out->args + j].kind == SG_A_VALUE && src->args[out->args + j].u.v == t->base))
                j++;
            if (j < m->nout) {
                o->kind = SG_AOT_ALIAS_OF_INTERMEDIATE_BASE_IS_USER_OUTPUT;
                o->base = j;
                continue;
            }
            uint32_t b = 0;
            while (b < nbases && bases[b] != t->base)
                b++;
            if (b == nbases && nbases == 64) {
                st = unsupported(z, "more than 64 intermediate bases of outputs", NULL);
                break;
            }
            o->kind = b < nbases ? SG_AOT_ALIAS_OF_INTERMEDIATE : SG_AOT_ALIAS_OF_INTERMEDIATE_SAVE_AS_OUTPUT;
            o->base = b;
            if (b == nbases)
                bases[nbases++] = t->base;
            continue;
        }
        if (n > 1 && !t->requires_grad) /* R5: (out, out.detach()) */
            for (uint32_t j = 0; j < m->nout; j++) {
                const sg__garg *b = &src->args[out->args + j];
                if (j != k && b->kind == SG_A_VALUE && is_tensor(src, b->u.v) &&
                    sid_of(z, b->u.v) == sid_of(z, v) && src->vals[b->u.v].u.t.requires_grad &&
                    sg__aot_same_layout(src, v, b->u.v)) {
                    o->kind = SG_AOT_ALIAS_OF_INTERMEDIATE_BASE_IS_USER_OUTPUT;
                    o->base = j;
                    break;
                }
            }
    }
    sg_free(cfo);
    if (st)
        return st;
    /* training or inference (create_aot_state) */
    bool safe = true;
    for (uint32_t i = 0; i < m->nin; i++) {
        const sg__aot_input *in = &m->in[i];
        safe &= !(in->tensor && in->requires_grad && in->data && !in->no_grad && !in->hidden);
    }
    for (uint32_t k = 0; k < m->nout; k++) {
        if (m->out[k].src != SG_NOVAL && src->vals[m->out[k].src].u.t.requires_grad && own_history(m, &m->out[k]))
            safe = false;
        m->out_rg |= m->out[k].src != SG_NOVAL && sg__graph_rg_now(src, m->out[k].src);
    }
    m->train = needs_grad(src, m) && !safe;
    return SG_OK;
}

/* Training where an output requires grad by the functional graph's flow
 * though not by the trace's flag: a write through a view of what requires
 * no grad, with a value that does, makes the whole storage require grad
 * (PyTorch's CopySlices on the base, the views' grad_fn made again from
 * it), which a value the trace read of another alias of that storage does
 * not show (e * 1 after e.permute(...).mul_(t), e a view input). */
static sg_status train_by_flow(fz *z, sg__replay *r, sg__aot_meta *m, const sg__gnode *out)
{
    const sg__graph *src = z->src;
    if (m->train || !needs_grad(src, m) || !out)
        return SG_OK;
    uint8_t *rg;
    CHAIN(sg__graph_requires_grad(z->dst, &rg));
    for (uint32_t k = 0; k < m->nout && k < out->nargs; k++) {
        const sg__garg *a = &src->args[out->args + k];
        uint32_t dv = a->kind == SG_A_VALUE && is_tensor(src, a->u.v) ? sg__replay_mapped(r, a->u.v) : SG_NOVAL;
        if (dv != SG_NOVAL && dv < z->dst->nvals && rg[dv] && own_history(m, &m->out[k]))
            m->train = true;
    }
    sg_free(rg);
    return SG_OK;
}

/* Before the output: the analysis; copy_ into each input whose data
 * mutation stays in the graph (in input order); the updated values of the
 * others as leading outputs; the user outputs mapped to their current
 * values (a mutated input given back: its copy_). */
static sg_status end(sg__replay *r, void *ud)
{
    fz *z = ud;
    const sg__graph *src = z->src;
    sg__graph *dst = z->dst;
    sg__aot_meta *m = z->meta;
    const sg__schema *copy = sg__opreg_op(dst->reg, SG_OP_copy_);
    if (!copy)
        return sg__err(dst->ctx, SG_EINTERNAL, "functionalize: no copy_");
    const sg__gnode *out = src->scopes[0].output == SG_NOVAL ? NULL : &src->nodes[src->scopes[0].output];
    uint32_t *last = sg__malloc(dst->ctx, (src->nvals ? src->nvals : 1) * sizeof *last);
    uint32_t *input_idx = sg__malloc(dst->ctx, (src->nvals ? src->nvals : 1) * sizeof *input_idx);
    uint32_t *copied = sg__calloc(dst->ctx, src->nvals ? src->nvals : 1, sizeof *copied);
    z->lead = sg__malloc(dst->ctx, (m->nin ? m->nin : 1) * sizeof *z->lead);
    m->bases = sg__malloc(dst->ctx, (m->nin ? m->nin : 1) * sizeof *m->bases);
    sg_status s = last && input_idx && copied && z->lead && m->bases ? SG_OK : sg__nomem(dst->ctx);
    if (!s) {
        memset(input_idx, 0xff, src->nvals * sizeof *input_idx);
        for (uint32_t v = 0; v < src->nvals; v++) {
            last[v] = v;
            if (is_tensor(src, v) && z->v[v].obj != SG_NOVAL)
                last[z->v[v].obj] = v; /* values are numbered in order: the object's last version wins */
        }
        for (uint32_t i = 0; i < m->nin; i++) { /* dst's placeholders: src's, in order (a cond's operand
                                                    mapped since to its current value is not one) */
            m->in[i].dph = i < dst->scopes[0].nphs ? dst->nodes[dst->scopes[0].phs[i]].out : SG_NOVAL;
            input_idx[m->in[i].ph] = i;
        }
        s = analyse_inputs(z, m, last);
        if (!s)
            s = analyse_outputs(z, m, out, input_idx);
    }
    /* an output that is not the input object but whose value is an input's
       placeholder (`t.set_(a); return t`) is another tensor object: an alias
       of it, made before any set_ or metadata change of the input moves it */
    const sg__schema *alias = s ? NULL : sg__opreg_op(dst->reg, SG_OP_alias);
    for (uint32_t k = 0; out && k < out->nargs && !s; k++) {
        const sg__garg *a = &src->args[out->args + k];
        uint32_t now;
        if (a->kind != SG_A_VALUE || !is_tensor(src, a->u.v) || m->out[k].kind == SG_AOT_IS_INPUT ||
            copied[a->u.v] || (s = current(z, r, a->u.v, &now)))
            continue;
        uint32_t i = 0;
        while (i < m->nin && !(m->in[i].tensor && m->in[i].dph == now))
            i++;
        uint32_t c;
        sg__garg arg = {.kind = SG_A_VALUE, .u.v = now};
        if (i < m->nin && !(s = alias ? sg__replay_call(r, alias, &arg, 1, &c)
                                      : sg__err(dst->ctx, SG_EINTERNAL, "functionalize: no alias")))
            copied[a->u.v] = c + 1;
    }
    /* the synthetic bases first (PyTorch's calling convention puts them
       first), each once: copy_ into it in the graph, or its new contents
       given to the epilogue */
    for (uint32_t i = 0; i < m->nin && !s; i++) {
        fstore *st = m->in[i].tensor ? store_of(z, m->in[i].ph) : NULL;
        if (!st || !st->synth || st->input != m->in[i].ph || !st->writes)
            continue;
        bool rg = false, ng = st->writes <= st->writes_no_grad + st->writes_hidden, hid = st->writes <= st->writes_hidden;
        bool wrg = false; /* (a member a write with grad gave a history: its write out of the graph, as analyse_inputs) */
        for (uint32_t j = 0; j < m->nin; j++) {
            rg |= m->in[j].tensor && store_of(z, m->in[j].ph) == st && m->in[j].requires_grad;
            wrg |= m->in[j].tensor && store_of(z, m->in[j].ph) == st && m->in[j].written_rg;
        }
        /* (the joint differentiates with respect to the base where a member requires grad) */
        if (st->sph != SG_NOVAL)
            dst->vals[st->sph].u.t.requires_grad = rg;
        sg__aot_base *b = &m->bases[m->nbases++];
        *b = (sg__aot_base){.dph = st->sph, .member = i, .numel = sg__graph_storage_numel(src, src->vals[m->in[i].ph].u.t.storage),
                            .lead = SG_NOVAL, .hidden = hid, .detached = st->detached};
        b->where = z->keep && ((!rg && !wrg) || ng || hid) ? SG__AOT_IN_GRAPH : SG__AOT_OUT_GRAPH;
        for (uint32_t j = 0; j < m->nin; j++)
            if (m->in[j].tensor && store_of(z, m->in[j].ph) == st)
                m->in[j].base = m->nbases - 1;
        if (b->where == SG__AOT_IN_GRAPH) {
            sg__garg a[2] = {{.kind = SG_A_VALUE, .u.v = st->sph}, {.kind = SG_A_VALUE, .u.v = st->base}};
            size_t at = dst->nnodes;
            uint32_t c;
            if (!(s = sg__replay_call(r, copy, a, 2, &c)))
                dst->nodes[at].flags = hid ? SG_NODE_DATA | SG_NODE_WRITE : ng ? SG_NODE_NO_GRAD | SG_NODE_WRITE : 0;
        } else {
            b->lead = m->nlead;
            z->lead[m->nlead++] = st->base;
        }
    }
    for (uint32_t i = 0; i < m->nin && !s; i++) {
        sg__aot_input *in = &m->in[i];
        if (in->base != SG_NOVAL && !in->storage)
            continue; /* its data went with its synthetic base; its metadata is the runtime's */
        if (in->where == SG__AOT_IN_GRAPH) {
            fstore *st = store_of(z, in->ph);
            uint32_t c = SG_NOVAL;
            if (in->data && in->base == SG_NOVAL) { /* its own storage's contents (before a set_ moves it) */
                sg__garg a[2] = {{.kind = SG_A_VALUE, .u.v = in->dph}, {.kind = SG_A_VALUE, .u.v = st->base}};
                size_t at = dst->nnodes;
                if (!(s = sg__replay_call(r, copy, a, 2, &c)))
                    /* autograd sees it as eager did: through .data not at all (the version counter kept);
                       into an input whose flag was cleared, as a write that keeps no history */
                    dst->nodes[at].flags = in->cleared     ? SG_NODE_NO_GRAD
                                           : in->hidden    ? SG_NODE_DATA | SG_NODE_WRITE
                                           : in->no_grad ? SG_NODE_NO_GRAD | SG_NODE_WRITE
                                                         : 0;
            }
            if (!s && in->storage) { /* set_(input, what it views at the end), under no_grad */
                const sg__schema *set = sg__opreg_op(dst->reg, SG_OP_set__source_Tensor);
                uint32_t now;
                if (!(s = current(z, r, in->final, &now))) {
                    sg__garg a[2] = {{.kind = SG_A_VALUE, .u.v = in->dph}, {.kind = SG_A_VALUE, .u.v = now}};
                    size_t at = dst->nnodes;
                    if (!(s = sg__replay_call(r, set, a, 2, &c))) {
                        dst->nodes[at].flags = SG_NODE_NO_GRAD | SG_NODE_WRITE;
                        in->updated = c; /* a later version of the input: a run keeps it */
                    }
                }
            }
            if (!s && c != SG_NOVAL)
                copied[in->final] = c + 1;
        } else if (in->where == SG__AOT_OUT_GRAPH) { /* data: the contents in the input's own layout */
            s = in->data ? (in->updated = store_of(z, in->ph)->base, SG_OK) : current(z, r, in->final, &in->updated);
            z->lead[m->nlead++] = in->updated;
        }
    }
    sg__replay_lead(r, z->lead, m->nlead);
    for (uint32_t i = 0; out && i < out->nargs && !s; i++) {
        const sg__garg *a = &src->args[out->args + i];
        if (a->kind != SG_A_VALUE || !is_tensor(src, a->u.v))
            continue;
        uint32_t v = a->u.v, now;
        bool other = copied[v] && dst->vals[copied[v] - 1].u.t.ndim != src->vals[v].u.t.ndim;
        for (uint32_t d = 0; copied[v] && !other && d < src->vals[v].u.t.ndim; d++)
            other = sg__graph_size(dst, copied[v] - 1, d) != sg__graph_size(src, v, d);
        if (other && i < m->nout && !(s = current(z, r, v, &now)))
            m->out[i].layout = now; /* (the copy_ has the input's sizes; eager's gradient the output's) */
        if (copied[v] && !s)
            s = sg__replay_map(r, v, copied[v] - 1);
        else if (!s && !(s = current(z, r, v, &now)))
            s = sg__replay_map(r, v, now);
    }
    if (!s)
        s = train_by_flow(z, r, m, out);
    sg_free(last);
    sg_free(input_idx);
    sg_free(copied);
    return s;
}

/* Which input storages get a synthetic base: those a call writes that
 * several inputs view, or that an as_strided reads (its positions are the
 * storage's, which an input with an offset or a gap does not cover); each
 * input on one views it (as_strided by the input's own layout). */
static sg_status plan_synthetic(fz *z)
{
    const sg__graph *src = z->src;
    for (uint32_t i = 0; i < src->nnodes; i++) {
        const sg__gnode *nd = &src->nodes[i];
        if (nd->kind != SG_N_CALL || !nd->nargs)
            continue;
        const sg__garg *a0 = &src->args[nd->args];
        if (is_asstrided(nd) && a0->kind == SG_A_VALUE && is_tensor(src, a0->u.v))
            z->st[sid_of(z, a0->u.v)].strided = true;
        const sg__opinfo *info = sg__op_info(nd->schema->op);
        unsigned op = nd->schema->op;
        bool data = (nd->schema->flags & SG_OPF_OUT) ||
                    ((nd->schema->flags & SG_OPF_INPLACE) && !(info && (info->tags & SG_T_INPLACE_VIEW)) &&
                     op != SG_OP_detach_ && op != SG_OP_requires_grad_ && op != SG_OP_set__source_Tensor);
        for (uint32_t k = 0; data && k < nd->nargs; k++) { /* self, or out */
            const sg__garg *a = &src->args[nd->args + k];
            if (a->kind == SG_A_VALUE && is_tensor(src, a->u.v) &&
                ((nd->schema->flags & SG_OPF_INPLACE) ? k == 0 : a->kw && !strcmp(a->kw, "out")))
                z->st[sid_of(z, a->u.v)].written = true;
        }
    }
    for (uint32_t i = 0; i < src->nnodes; i++) { /* a root cond's branches that write an operand write it */
        const sg__gnode *nd = &src->nodes[i];
        if (nd->kind != SG_N_COND || nd->scope != 0)
            continue;
        const sg__garg *a = &src->args[nd->args];
        uint32_t n = a[3].u.list.n;
        uint8_t *mk = sg__calloc(z->dst->ctx, n ? n : 1, sizeof *mk);
        uint32_t *bumps = sg__calloc(z->dst->ctx, 2 * (size_t)n + 1, sizeof *bumps);
        sg_status s = mk && bumps ? cond_writes(z, i, mk, bumps) : sg__nomem(z->dst->ctx);
        for (uint32_t k = 0; k < n && !s; k++) {
            uint32_t v = src->ids[a[3].u.list.off + k];
            if (mk[k] && is_tensor(src, v))
                z->st[sid_of(z, v)].written = true;
        }
        sg_free(mk);
        sg_free(bumps);
        CHAIN(s);
    }
    const sg__scope *root = &src->scopes[0];
    for (uint32_t i = 0; i < root->nphs; i++) {
        uint32_t ph = src->nodes[root->phs[i]].out;
        if (!is_tensor(src, ph))
            continue;
        uint32_t sid = sid_of(z, ph);
        fstore *st = &z->st[sid];
        bool repeats = stride0_repeats(src, ph); /* a copy_ into it would write positions twice */
        if (!repeats && st->written) { /* or strides that meet (at its hints; a call whose input
                                            does not goes the same way, only longer) */
            bool meet;
            CHAIN(overlaps_itself(z, ph, &meet));
            repeats = meet;
        }
        st->strided |= repeats;
        if (!st->written || (st->inputs < 2 && !st->strided))
            continue;
        if (src->vals[ph].u.t.dtype != src->vals[st->input].u.t.dtype)
            return sg__err(z->dst->ctx, SG_EALIASING,
                           "aot_autograd() does not yet handle input mutations on views with different dtypes.");
        st->synth = true;
        z->v[ph].parent = (uint32_t)src->nvals + sid; /* as_strided of the base, by its own layout */
        z->v[ph].vnode = SG_NOVAL;
    }
    return SG_OK;
}

/* False aliasing (PyTorch's compute_overlapping_inputs): inputs that view
 * one storage but, laid out as the hints say, share no position are told
 * apart: each but the first gets a storage of its own (sid_of), so that no
 * synthetic base joins them, and the runtime checks at each call that they
 * still share none (meta->disjoint). Done only where functionalization
 * can follow every value of the storage to one of its inputs (views and
 * in-place versions of them: no as_strided, no set_ onto it, no cond in the
 * program) and every pair of its inputs is disjoint; else the storage is
 * left whole (a synthetic base, as for overlapping inputs). */
static sg_status plan_disjoint(fz *z)
{
    const sg__graph *src = z->src;
    sg_ctx *ctx = z->dst->ctx;
    uint32_t *root = sg__malloc(ctx, (src->nvals ? src->nvals : 1) * sizeof *root); /* a value's input, or NOVAL */
    uint8_t *bad = sg__calloc(ctx, src->nstorages ? src->nstorages : 1, 1);    /* a storage left whole */
    uint32_t *first = sg__malloc(ctx, (src->nstorages ? src->nstorages : 1) * sizeof *first);
    sg_status s = root && bad && first ? SG_OK : sg__nomem(ctx);
    const sg__scope *sc = &src->scopes[0];
    for (uint32_t v = 0; v < src->nvals && !s; v++) {
        root[v] = SG_NOVAL;
        if (!is_tensor(src, v))
            continue;
        uint32_t node = src->vals[v].node, from;
        if (node == SG_NOVAL) /* of no node (an input's hidden base): it takes no part */
            continue;
        if (src->nodes[node].kind == SG_N_PLACEHOLDER)
            root[v] = v;
        else if ((from = sg__graph_view_of(src, v)) != SG_NOVAL || (from = sg__graph_updates(src, v)) != SG_NOVAL)
            root[v] = from < v && src->vals[from].u.t.storage == src->vals[v].u.t.storage ? root[from] : SG_NOVAL;
        if (root[v] == SG_NOVAL) /* a value no input chain reaches: its storage whole */
            bad[src->vals[v].u.t.storage] = 1;
    }
    for (uint32_t i = 0; i < src->nnodes && !s; i++) { /* as_strided reads positions; set_ moves storages;
                                                        resize_ and out= may grow a tensor onto another */
        const sg__gnode *nd = &src->nodes[i];
        /* (an expand, written through, is stored by positions into a synthetic base of the whole storage,
           as an as_strided is: two split inputs would take two bases of one storage) */
        if (nd->kind != SG_N_CALL || !(is_asstrided(nd) || nd->schema->op == SG_OP_set__source_Tensor ||
                                       nd->schema->op == SG_OP_resize_ || nd->schema->op == SG_OP_expand ||
                                       (nd->schema->flags & SG_OPF_OUT)))
            continue;
        for (uint32_t k = 0; k < nd->nargs; k++)
            if (src->args[nd->args + k].kind == SG_A_VALUE && is_tensor(src, src->args[nd->args + k].u.v))
                bad[src->vals[src->args[nd->args + k].u.v].u.t.storage] = 1;
    }
    for (uint32_t t = 0; t < src->nstorages && !s; t++) {
        first[t] = SG_NOVAL;
        bad[t] |= src->nscopes > 1; /* a cond: every storage whole */
    }
    for (uint32_t i = 0; i < sc->nphs && !s; i++) {
        /* an input that repeats a position (a stride 0, strides that meet) is written through a synthetic base
           of the whole storage (plan_synthetic): a split input beside it would be written back twice */
        uint32_t a = src->nodes[sc->phs[i]].out;
        bool meet = false;
        if (!is_tensor(src, a) || bad[src->vals[a].u.t.storage])
            continue;
        /* (a write with grad through one input gave every input on the storage a history, written_rg: one
           disjoint from the write takes its gradient to the write's history through their base; not with a
           tensor subclass, where PyTorch refuses the base, and keeps disjoint inputs apart) */
        if (!(meet = stride0_repeats(src, a) || (src->vals[a].u.t.written_rg && !z->subclass)))
            s = overlaps_itself(z, a, &meet);
        if (meet)
            bad[src->vals[a].u.t.storage] = 1;
    }
    /* the storages two or more inputs view, pairwise disjoint by the hints */
    for (uint32_t i = 0; i < sc->nphs && !s; i++) {
        uint32_t a = src->nodes[sc->phs[i]].out, sa;
        if (!is_tensor(src, a) || bad[sa = src->vals[a].u.t.storage])
            continue;
        if (first[sa] == SG_NOVAL) {
            first[sa] = i;
            continue;
        }
        sg__xlayout la, lb;
        bool meet = !hinted_layout(src, a, &la);
        for (uint32_t j = first[sa]; j < i && !meet && !s; j++) {
            uint32_t b = src->nodes[sc->phs[j]].out;
            if (!is_tensor(src, b) || src->vals[b].u.t.storage != sa)
                continue;
            meet = !hinted_layout(src, b, &lb);
            if (!meet && (s = sg__xlayouts_meet(ctx, &la, &lb, &meet)) == SG_ELIMIT) {
                s = SG_OK; /* positions beyond int64: taken as meeting */
                meet = true;
            }
        }
        if (meet)
            bad[sa] = 1;
    }
    /* each input after the first on such a storage: a storage of its own */
    sg__aot_meta *m = z->meta;
    size_t cap = 0;
    for (uint32_t i = 0; i < sc->nphs && !s; i++) {
        uint32_t a = src->nodes[sc->phs[i]].out, sa;
        if (!is_tensor(src, a) || bad[sa = src->vals[a].u.t.storage] || first[sa] == i)
            continue;
        z->sid[a] = z->nst;
        z->raw[z->nst++] = sa;
        for (uint32_t j = first[sa]; j < i && !s; j++) { /* the pairs the runtime checks */
            uint32_t b = src->nodes[sc->phs[j]].out;
            if (!is_tensor(src, b) || src->vals[b].u.t.storage != sa)
                continue;
            if (!sg__grow(ctx, (void **)&m->disjoint, &cap, m->ndisjoint + 1, sizeof *m->disjoint))
                s = sg__nomem(ctx);
            else
                memcpy(m->disjoint[m->ndisjoint++], (uint32_t[2]){j, i}, sizeof *m->disjoint);
        }
    }
    for (uint32_t v = 0; v < src->nvals && !s; v++) /* what views an input with a storage of its own */
        if (root[v] != SG_NOVAL && root[v] != v && !bad[src->vals[v].u.t.storage])
            z->sid[v] = z->sid[root[v]];
    sg_free(root);
    sg_free(bad);
    sg_free(first);
    return s;
}

void sg__aot_meta_free(sg__aot_meta *m)
{
    if (!m)
        return;
    sg_free(m->disjoint);
    sg_free(m->in);
    sg_free(m->out);
    sg_free(m->bases);
    sg_free(m->conds);
    sg_free(m->bwrites);
    sg_free(m->in_inner);
    sg_free(m->out_inner);
    *m = (sg__aot_meta){0};
}

/* Refused: a tensor read after a write through another view of its
 * storage made that storage require grad (the written value requires it,
 * the tensor written did not): PyTorch's CopySlices makes every alias
 * require grad then, which the trace's flag of a value made before the
 * write does not show (e.data.mul_ after e.permute(...).mul_(t) of an
 * input e that requires no grad: its history would be lost). */
static sg_status stale_grad_flags(fz *z)
{
    const sg__graph *src = z->src;
    uint32_t *rgw = sg__malloc(src->ctx, ((size_t)src->nstorages + 1) * sizeof *rgw); /* the first such write */
    if (!rgw)
        return sg__nomem(src->ctx);
    bool any = false;
    for (uint32_t st = 0; st < src->nstorages; st++)
        rgw[st] = SG_NOVAL;
    sg_status s = SG_OK;
    for (uint32_t i = 0; i < src->nnodes && !s; i++) {
        const sg__gnode *nd = &src->nodes[i];
        if (nd->kind != SG_N_CALL || nd->scope != 0)
            continue;
        for (uint32_t k = 0; k < nd->nargs && any && !s; k++) { /* what it reads */
            const sg__garg *a = &src->args[nd->args + k];
            uint32_t n = a->kind == SG_A_VALUE ? 1 : a->kind == SG_A_VALUES ? a->u.list.n : 0;
            for (uint32_t j = 0; j < n && !s; j++) {
                uint32_t v = a->kind == SG_A_VALUE ? a->u.v : src->ids[a->u.list.off + j];
                if (!is_tensor(src, v) || src->vals[v].u.t.requires_grad)
                    continue;
                uint32_t w = rgw[src->vals[v].u.t.storage];
                if (w != SG_NOVAL && w < i && src->vals[v].node < w)
                    s = unsupported(z, "a tensor read after a write through another view of its storage gave it a "
                                       "gradient history (its traced requires_grad is stale)", nd->schema->name);
            }
        }
        uint32_t vals[8];
        size_t nw = nd->schema->written && !(nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)) && nd->out != SG_NOVAL &&
                            is_tensor(src, nd->out) && src->vals[nd->out].u.t.requires_grad
                        ? sg__graph_node_writes(src, i, vals, 8)
                        : 0;
        for (size_t k = 0; k < nw; k++)
            if (is_tensor(src, vals[k]) && !src->vals[vals[k]].u.t.requires_grad &&
                rgw[src->vals[vals[k]].u.t.storage] == SG_NOVAL) {
                rgw[src->vals[vals[k]].u.t.storage] = i;
                any = true;
            }
    }
    sg_free(rgw);
    return s;
}

sg_status sg__aot_functionalize_meta(const sg__graph *src, sg__graph *dst, bool keep, bool subclass,
                                     sg__aot_meta *meta)
{
    if (!src || !dst || !meta)
        return SG_EINVAL;
    sg_ctx *ctx = dst->ctx;
    *meta = (sg__aot_meta){.keep = keep};
    fz z = {.src = src, .dst = dst, .keep = keep, .subclass = subclass, .meta = meta};
    const sg__scope *root = &src->scopes[0];
    size_t nst = (size_t)src->nstorages + root->nphs; /* src's storages, and one per input told apart */
    z.v = sg__malloc(ctx, (src->nvals + nst + 1) * sizeof *z.v); /* then a slot per storage's synthetic base */
    z.st = sg__malloc(ctx, (nst ? nst : 1) * sizeof *z.st);
    z.sid = sg__malloc(ctx, (src->nvals ? src->nvals : 1) * sizeof *z.sid);
    z.raw = sg__malloc(ctx, (nst ? nst : 1) * sizeof *z.raw);
    meta->in = sg__calloc(ctx, root->nphs ? root->nphs : 1, sizeof *meta->in);
    sg_status s = z.v && z.st && z.sid && z.raw && meta->in ? SG_OK : sg__nomem(ctx);
    if (!s) {
        for (uint32_t v = 0; v < src->nvals; v++)
            z.sid[v] = is_tensor(src, v) ? src->vals[v].u.t.storage : SG_NOVAL;
        for (uint32_t t = 0; t < src->nstorages; t++)
            z.raw[t] = t;
        z.nst = src->nstorages;
        s = plan_disjoint(&z);
    }
    if (!s) {
        for (size_t i = 0; i < src->nvals + nst; i++)
            z.v[i] = (fval){.parent = SG_NOVAL, .vnode = SG_NOVAL, .cur = SG_NOVAL, .obj = SG_NOVAL, .ver = SG_NOVAL,
                            .elem = SG_NOVAL, .hist = SG_NOVAL};
        for (size_t i = 0; i < nst; i++)
            z.st[i] = (fstore){.base = SG_NOVAL, .input = SG_NOVAL, .sph = SG_NOVAL, .root = SG_NOVAL,
                               .regen = SG_NOVAL, .hobj = SG_NOVAL};
        /* the inputs: each the root of its storage (its dst value, the
           replay's placeholder, is taken by the first current() of it) */
        meta->nin = root->nphs;
        for (uint32_t i = 0; i < root->nphs; i++) {
            uint32_t ph = src->nodes[root->phs[i]].out;
            meta->in[i] = (sg__aot_input){.ph = ph, .dph = SG_NOVAL, .final = ph, .updated = SG_NOVAL,
                                          .base = SG_NOVAL, .tensor = is_tensor(src, ph)};
            if (!is_tensor(src, ph))
                continue;
            z.v[ph].obj = z.v[ph].ver = ph;
            fstore *st = &z.st[sid_of(&z, ph)];
            st->inputs++;
            if (st->input == SG_NOVAL)
                st->input = ph;
        }
    }
    if (!s)
        s = plan_synthetic(&z);
    if (!s)
        s = stale_grad_flags(&z);
    if (!s) {
        const sg__replay_cbs cbs = {.call = hook, .end = end, .cond = before_cond, .branch_end = branch_end,
                                    .cond_done = cond_done, .function = before_function,
                                    .function_written = function_written};
        s = sg__graph_replay_cbs(src, dst, &cbs, &z);
    }
    sg_free(z.v);
    sg_free(z.st);
    sg_free(z.sid);
    sg_free(z.raw);
    sg_free(z.lead);
    sg_free(z.stack);
    sg_free(z.extra);
    sg_free(z.mk);
    sg_free(z.bumps);
    sg_free(z.written);
    return s;
}

sg_status sg__aot_functionalize(const sg__graph *src, sg__graph *dst)
{
    sg__aot_meta m;
    sg_status s = sg__aot_functionalize_meta(src, dst, true, false, &m);
    sg__aot_meta_free(&m);
    return s;
}
