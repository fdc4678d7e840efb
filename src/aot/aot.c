/* The compiled program (shapeguard/aot.h): functionalization with its
 * analysis (functionalize.c), and the runtime wrapper.
 *
 * The wrapper is two graphs run by exec: the functional graph, then the
 * epilogue graph (the wrapper's own work that a graph can say): copy_ of
 * each updated input that the graph gives back into the caller's tensor,
 * then the outputs that alias a data-mutated input made again from it (its
 * view chain replayed). What changes a tensor object itself (sizes,
 * strides and offset set in place) is done here, on the caller's tensors,
 * after both. */
#include <string.h>

#include "aot/aot_private.h"
#include "exec/exec_private.h"
#include "graph/ops.h"

struct sg_aot {
    sg_ctx *ctx;
    const sg_tracer *t;
    const sg__graph *src; /* the traced graph (the tracer's) */
    sg__graph *fw;        /* the functional graph */
    sg__graph *epi;       /* the epilogue (NULL: nothing to do) */
    uint32_t *epi_in;     /* per input of src: epi's placeholder (SG_NOVAL: none) */
    uint32_t *epi_lead;   /* per leading output of fw: epi's placeholder */
    uint32_t *epi_base;   /* per synthetic base: epi's placeholder (SG_NOVAL: the graph wrote it) */
    uint32_t *epi_out;    /* per user output: the index of epi's output making it again, or SG_NOVAL */
    uint32_t *checks;     /* the captured graph's writes whose overlap checks run at each call */
    uint32_t nchecks;
    sg__aot_meta m;
    sg__aot_train *train; /* training: the joint graph and the backward (NULL: none) */
    sg_status train_st;   /* why there is none where the mode is training (SG_OK: inference) */
    char *train_msg;      /* its message */
    /* the program's own signature (aot.h's inputs and outputs): a plain
       input or output is one of the graph's, a tensor subclass several
       (its inner tensors, flattened as PyTorch's subclass desugaring does) */
    struct user {
        uint32_t idx[SG__TSUB_MAX]; /* the graph's inputs (m.in) or outputs (m.out) */
        uint32_t n;
        const char *name;           /* an input's name */
        uint8_t kind;               /* an output's sg_aot_output_kind */
        uint32_t base;              /* an output's base: a user input or output, or SG_NOVAL */
    } *uin, *uout;
    uint32_t nuin, nuout;
    bool eager; /* sg_aot_options.eager */
};

const char *sg_aot_output_kind_name(sg_aot_output_kind k)
{
    static const char *const names[] = {"non_alias",
                                        "is_input",
                                        "alias_of_input",
                                        "alias_of_intermediate",
                                        "alias_of_intermediate_save_as_output",
                                        "alias_of_intermediate_base_is_user_output",
                                        "unsafe_view_alias",
                                        "custom_function_view"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

/* as_strided(self, src value v's sizes, strides, offset) into e: a link
 * that lays a tensor out anew (resize_, an out= that resized). */
static sg_status restrided(sg__graph *e, const sg__graph *src, uint32_t v, uint32_t self, uint32_t *out)
{
    sg__garg a[4];
    CHAIN(sg__aot_layout_args(e, src, v, self, a));
    return sg__graph_record(e, sg__opreg_op(e->reg, SG_OP_as_strided), a, 4, 0, NULL, out);
}

/* The view calls that make src value v from the input object at the root
 * of its chain (its placeholder into *root), outermost first, as the
 * values they give into *chain (a block the caller frees), *n of them;
 * in-place and out= writes and autograd-only calls on the way are the same
 * link, a set_ goes on from its source (so the root may be another input
 * than the one whose object v is). Errors: SG_EUNSUPPORTED (v is not such
 * a chain), SG_ENOMEM. */
static sg_status view_chain(sg_ctx *ctx, const sg__graph *src, uint32_t v, uint32_t **chain, uint32_t *n,
                            uint32_t *root)
{
    *chain = NULL;
    *n = 0;
    for (int pass = 0; pass < 2; pass++) { /* count, then fill from the end */
        uint32_t k = 0;
        for (uint32_t u = v;;) {
            uint32_t node = src->vals[u].node;
            const sg__gnode *nd = node == SG_NOVAL ? NULL : &src->nodes[node];
            if (nd && nd->kind == SG_N_PLACEHOLDER) {
                *root = u;
                break;
            }
            if (!nd || nd->kind != SG_N_CALL || !nd->nargs ||
                (src->args[nd->args].kind != SG_A_VALUE && !(nd->schema->flags & SG_OPF_OUT)))
                return sg__err(ctx, SG_EUNSUPPORTED, "aot: unsupported: an output aliasing an input through %s",
                               nd && nd->kind == SG_N_CALL ? nd->schema->name : "a value that is no view");
            const sg__opinfo *info = sg__op_info(nd->schema->op);
            uint32_t next = src->args[nd->args].u.v; /* self (an out= call: set below) */
            if (nd->schema->op == SG_OP_set__source_Tensor && nd->nargs > 1) {
                next = src->args[nd->args + 1].u.v; /* self becomes an alias of its source */
            } else if (nd->schema->flags & SG_OPF_OUT) { /* the out it wrote */
                next = SG_NOVAL;
                for (uint32_t j = 0; j < nd->nargs; j++)
                    if (src->args[nd->args + j].kw && !strcmp(src->args[nd->args + j].kw, "out") &&
                        src->args[nd->args + j].kind == SG_A_VALUE)
                        next = src->args[nd->args + j].u.v;
                if (next == SG_NOVAL)
                    return sg__err(ctx, SG_EUNSUPPORTED, "aot: unsupported: an output aliasing an input through %s",
                                   nd->schema->name);
                if (!sg__aot_same_layout(src, next, u)) { /* resized: a link, laid out anew */
                    if (pass)
                        (*chain)[*n - 1 - k] = u;
                    k++;
                }
            } else if ((nd->schema->flags & SG_OPF_VIEW) || (info && (info->tags & SG_T_INPLACE_VIEW))) {
                if (pass)
                    (*chain)[*n - 1 - k] = u;
                k++;
            } else if (!(nd->schema->flags & SG_OPF_INPLACE)) {
                return sg__err(ctx, SG_EUNSUPPORTED, "aot: unsupported: an output aliasing an input through %s",
                               nd->schema->name);
            }
            u = next;
        }
        if (!pass) {
            *n = k;
            if (!(*chain = sg__malloc(ctx, (k ? k : 1) * sizeof **chain)))
                return sg__nomem(ctx);
        }
    }
    return SG_OK;
}

/* The epilogue graph: placeholders like src's inputs and like fw's leading
 * outputs; copy_ of each updated input's contents into it; the outputs that
 * alias a data-mutated input made again from it. Not made where there is
 * nothing to do. */
static sg_status build_epilogue(sg_aot *a)
{
    const sg__graph *src = a->src, *fw = a->fw;
    sg__aot_meta *m = &a->m;
    bool need = m->nlead > 0;
    for (uint32_t k = 0; k < m->nout; k++)
        need |= m->out[k].kind == SG_AOT_ALIAS_OF_INPUT && m->in[m->out[k].base].stale;
    if (!need)
        return SG_OK;
    sg_ctx *ctx = a->ctx;
    CHAIN(sg__graph_new(src->env, &a->epi));
    sg__graph *e = a->epi;
    e->reg = src->reg;
    a->epi_in = sg__malloc(ctx, (m->nin ? m->nin : 1) * sizeof *a->epi_in);
    a->epi_lead = sg__malloc(ctx, (m->nlead ? m->nlead : 1) * sizeof *a->epi_lead);
    a->epi_out = sg__malloc(ctx, (m->nout ? m->nout : 1) * sizeof *a->epi_out);
    a->epi_base = sg__malloc(ctx, (m->nbases ? m->nbases : 1) * sizeof *a->epi_base);
    uint32_t *sto = sg__malloc(ctx, ((size_t)src->nstorages + fw->nstorages + 1) * sizeof *sto);
    uint32_t *outs = sg__malloc(ctx, (m->nout ? m->nout : 1) * sizeof *outs);
    sg_status s = a->epi_in && a->epi_lead && a->epi_out && a->epi_base && sto && outs ? SG_OK : sg__nomem(ctx);
    if (s)
        goto done;
    memset(sto, 0xff, ((size_t)src->nstorages + fw->nstorages + 1) * sizeof *sto);
    for (uint32_t i = 0; i < m->nin && !s; i++)
        if (!(s = sg__graph_value_like(e, src, m->in[i].ph, sto, &a->epi_in[i])))
            s = sg__graph_placeholder(e, a->epi_in[i], src->vals[m->in[i].ph].name);
    const sg__gnode *fo = &fw->nodes[fw->scopes[0].output];
    uint32_t *fsto = sto + src->nstorages; /* fw's storages: each lead on its own */
    for (uint32_t j = 0; j < m->nlead && !s; j++)
        if (!(s = sg__graph_value_like(e, fw, fw->args[fo->args + j].u.v, fsto, &a->epi_lead[j])))
            s = sg__graph_placeholder(e, a->epi_lead[j], "updated");
    const sg__schema *copy = sg__opreg_op(e->reg, SG_OP_copy_);
    uint32_t *now = sg__malloc(ctx, (m->nin ? m->nin : 1) * sizeof *now); /* each input's epi value after its copy_ */
    if (!s && !now)
        s = sg__nomem(ctx);
    uint32_t *bsto = sto + src->nstorages; /* (fw's storages: reused, each base on its own) */
    for (uint32_t b = 0; b < m->nbases && !s; b++) { /* the synthetic bases the graph gives back */
        const sg__aot_base *sb = &m->bases[b];
        a->epi_base[b] = SG_NOVAL;
        if (sb->where != SG__AOT_OUT_GRAPH)
            continue;
        uint32_t bv, c;
        if (!(s = sg__graph_value_like(e, fw, sb->dph, bsto, &bv)) && !(s = sg__graph_placeholder(e, bv, "base"))) {
            a->epi_base[b] = bv;
            sg__garg args[2] = {{.kind = SG_A_VALUE, .u.v = bv}, {.kind = SG_A_VALUE, .u.v = a->epi_lead[sb->lead]}};
            size_t at = e->nnodes;
            if (!(s = sg__graph_record(e, copy, args, 2, 0, NULL, &c)))
                e->nodes[at].flags = sb->hidden ? SG_NODE_DATA : 0;
        }
    }
    uint32_t j = 0; /* the inputs' leads come after the bases' */
    for (uint32_t b = 0; b < m->nbases; b++)
        j += m->bases[b].lead != SG_NOVAL;
    for (uint32_t i = 0; i < m->nin && !s; i++) {
        now[i] = a->epi_in[i];
        if (m->in[i].where != SG__AOT_OUT_GRAPH || (m->in[i].base != SG_NOVAL && !m->in[i].storage))
            continue;
        if (m->in[i].data) {
            sg__garg args[2] = {{.kind = SG_A_VALUE, .u.v = a->epi_in[i]}, {.kind = SG_A_VALUE, .u.v = a->epi_lead[j]}};
            size_t at = e->nnodes;
            if (!(s = sg__graph_record(e, copy, args, 2, 0, NULL, &now[i])))
                e->nodes[at].flags = m->in[i].hidden ? SG_NODE_DATA : 0; /* through .data: no version bump */
        }
        j++;
    }
    uint32_t nouts = 0;
    for (uint32_t k = 0; k < m->nout && !s; k++) {
        a->epi_out[k] = SG_NOVAL;
        const sg__aot_output *o = &m->out[k];
        if (o->kind != SG_AOT_ALIAS_OF_INPUT || !m->in[o->base].stale)
            continue;
        uint32_t *chain, n, v = now[o->base], root = SG_NOVAL;
        s = view_chain(ctx, src, o->src, &chain, &n, &root);
        for (uint32_t i = 0; i < m->nin && !s; i++) /* (through a set_, the chain starts at its source's input) */
            if (m->in[i].ph == root)
                v = now[i];
        for (uint32_t c = 0; c < n && !s; c++) {
            uint32_t node = src->vals[chain[c]].node;
            const sg__schema *sc = src->nodes[node].schema;
            if (src->vals[src->nodes[node].out].kind == SG_V_LIST) /* an element of unbind: its select */
                s = sg__aot_unbind_element(e, src, node, chain[c], v, &v);
            else if (sc->op == SG_OP_resize_ || (sc->flags & SG_OPF_OUT)) /* laid out anew */
                s = restrided(e, src, chain[c], v, &v);
            else
                s = sg__aot_view_again(e, src, node, v, &v);
        }
        sg_free(chain);
        a->epi_out[k] = nouts;
        outs[nouts++] = v;
    }
    if (!s)
        s = sg__graph_output(e, outs, nouts);
    sg_free(now);
done:
    sg_free(sto);
    sg_free(outs);
    return s;
}

/* The next link of v's chain that may_repeat follows: the tensor its view
 * or in-place call (a metadata change t_, a write) was called on;
 * SG_NOVAL where the answer is v's own (*own). */
static uint32_t repeat_link(const sg__graph *src, uint32_t v, bool *own)
{
    const sg__gnode *nd = &src->nodes[src->vals[v].node];
    if (nd->kind != SG_N_CALL) {
        *own = nd->kind == SG_N_PLACEHOLDER;
        return SG_NOVAL;
    }
    unsigned op = nd->schema->op;
    if (op == SG_OP_expand || op == SG_OP_as_strided || op == SG_OP_as_strided_) {
        *own = true;
        return SG_NOVAL;
    }
    bool chain = (nd->schema->flags & (SG_OPF_VIEW | SG_OPF_INPLACE)) && nd->nargs &&
                 src->args[nd->args].kind == SG_A_VALUE && src->vals[src->args[nd->args].u.v].kind == SG_V_TENSOR;
    *own = false;
    return chain ? src->args[nd->args].u.v : SG_NOVAL;
}

/* May tensor value v of src reach a storage position twice? Only through
 * an input (laid out as the caller likes), expand or as_strided on its
 * chain: the other views of a tensor that does not never do. memo (per
 * value: 0 not known yet, 1 no, 2 yes) keeps the answers of the chain
 * walked, so the writes of a long chain of in-place calls (x.unsqueeze_
 * then x.squeeze_, a thousand times) cost a walk each, not the chain. */
static bool may_repeat(const sg__graph *src, uint8_t *memo, uint32_t v)
{
    bool own = false;
    uint32_t u = v;
    while (u != SG_NOVAL && !memo[u]) {
        uint32_t next = repeat_link(src, u, &own);
        if (next == SG_NOVAL)
            break;
        u = next;
    }
    bool yes = u != SG_NOVAL && memo[u] ? memo[u] == 2 : own;
    for (uint32_t w = v; w != SG_NOVAL && !memo[w]; w = repeat_link(src, w, &own))
        memo[w] = yes ? 2 : 1;
    return yes;
}

/* The captured graph's writes that functionalization removed but whose
 * memory-overlap refusal (exec/overlap.c: an input sharing positions with
 * the written tensor, a written tensor reaching a position twice) must
 * still be decided at each call, on the concrete layouts, as eager
 * execution decides it: those whose written tensor may repeat a position
 * or shares its storage with another tensor argument. */
static sg_status plan_checks(sg_aot *a)
{
    const sg__graph *src = a->src;
    uint8_t *memo = sg__calloc(a->ctx, src->nvals ? src->nvals : 1, 1);
    if (!memo)
        return sg__nomem(a->ctx);
    for (uint32_t pass = 0; pass < 2; pass++) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < src->nnodes; i++) {
            const sg__gnode *nd = &src->nodes[i];
            if (nd->kind != SG_N_CALL || nd->scope != 0 || !nd->schema->written)
                continue;
            bool need = false;
            for (uint32_t k = 0; k < nd->nargs && !need; k++) {
                const sg__garg *w = &src->args[nd->args + k];
                if (w->kind != SG_A_VALUE || src->vals[w->u.v].kind != SG_V_TENSOR)
                    continue;
                int at = k;
                if (w->kw)
                    for (at = 0; at < nd->schema->nargs && strcmp(nd->schema->args[at].name, w->kw); at++)
                        ;
                if (at >= nd->schema->nargs || !((nd->schema->written >> at) & 1u))
                    continue;
                uint32_t ws = src->vals[w->u.v].u.t.storage;
                need = may_repeat(src, memo, w->u.v);
                for (uint32_t j = 0; j < nd->nargs && !need; j++) {
                    const sg__garg *r = &src->args[nd->args + j];
                    if (j == k)
                        continue;
                    if (r->kind == SG_A_VALUE && src->vals[r->u.v].kind == SG_V_TENSOR)
                        need = src->vals[r->u.v].u.t.storage == ws;
                    for (uint32_t e = 0; r->kind == SG_A_VALUES && e < r->u.list.n && !need; e++) {
                        uint32_t x = src->ids[r->u.list.off + e];
                        need = src->vals[x].kind == SG_V_TENSOR && src->vals[x].u.t.storage == ws;
                    }
                }
            }
            if (need && pass)
                a->checks[n] = i;
            n += need;
        }
        if (!pass) {
            a->nchecks = n;
            if (n && !(a->checks = sg__malloc(a->ctx, n * sizeof *a->checks))) {
                sg_free(memo);
                return sg__nomem(a->ctx);
            }
        }
    }
    sg_free(memo);
    return SG_OK;
}

/* The user inputs and outputs of the program over the graph's (the
 * tracer's signature groups the inner tensors of subclasses), the output
 * kinds and bases carried over, and PyTorch's refusals of mutations with
 * subclasses (3.4 of the reference): a metadata mutation of a subclass
 * input, and aliased or duplicate inputs that are mutated where any input
 * or output is a subclass, SG_EALIASING. An output whose inner tensors
 * alias differently is SG_EUNSUPPORTED. */
static sg_status user_signature(sg_aot *a)
{
    sg_ctx *ctx = a->ctx;
    const sg__aot_meta *m = &a->m;
    sg__tsig sig = sg__tracer_signature(a->t);
    a->uin = sg__calloc(ctx, m->nin ? m->nin : 1, sizeof *a->uin);
    a->uout = sg__calloc(ctx, m->nout ? m->nout : 1, sizeof *a->uout);
    if (!a->uin || !a->uout)
        return sg__nomem(ctx);
    uint32_t *user_of = sg__malloc(ctx, (m->nin ? m->nin : 1) * sizeof *user_of); /* graph input -> user input */
    if (!user_of)
        return sg__nomem(ctx);
    for (uint32_t i = 0; i < m->nin; i++)
        user_of[i] = SG_NOVAL;
    sg_status s = SG_OK;
    for (uint32_t i = 0; i < m->nin && !s; i++) {
        if (user_of[i] != SG_NOVAL)
            continue; /* an inner tensor of a subclass input made already */
        struct user *u = &a->uin[a->nuin];
        const sg__tsub *sub = NULL;
        for (size_t g = 0; g < sig.nin && !sub; g++)
            if (sig.in[g].v[0] == m->in[i].ph)
                sub = &sig.in[g];
        *u = (struct user){.n = 1, .idx = {i}, .name = a->src->vals[m->in[i].ph].name, .base = SG_NOVAL};
        if (sub) {
            u->n = sub->n;
            u->name = sub->name;
            for (uint32_t j = 0; j < sub->n && !s; j++) {
                uint32_t k = 0;
                while (k < m->nin && m->in[k].ph != sub->v[j])
                    k++;
                if (k == m->nin) {
                    s = sg__err(ctx, SG_EINTERNAL, "aot: inner tensor %u of %s is no input", j, sub->name);
                    break;
                }
                u->idx[j] = k;
                user_of[k] = a->nuin;
            }
            for (uint32_t j = 0; j < sub->n && !s && !a->eager; j++)
                if (m->in[u->idx[j]].metadata)
                    s = sg__err(ctx, SG_EALIASING, "aot: input %s: Metadata mutations are currently not allowed on "
                                "tensor subclasses", sub->name);
        }
        user_of[i] = a->nuin++;
    }
    if (!s && (sig.nin || sig.nout) && !a->eager) { /* a subclass somewhere: no aliased or duplicate input mutated */
        for (uint32_t b = 0; b < m->nbases && !s; b++) {
            uint32_t members = 0;
            for (uint32_t i = 0; i < m->nin; i++)
                members += m->in[i].base == b;
            if (members > 1)
                s = sg__err(ctx, SG_EALIASING, "aot: Encountered aliased inputs that are mutated in the graph, but at "
                            "least one input/output to the graph is a tensor subclass. This is not supported today.");
        }
        for (size_t d = 0; d < sig.ndups && !s; d++)
            for (uint32_t i = 0; i < m->nin && !s; i++)
                if (m->in[i].ph == sig.dups[d] && (m->in[i].data || m->in[i].metadata || m->in[i].storage))
                    s = sg__err(ctx, SG_EALIASING, "aot: Encountered duplicate inputs that are mutated in the graph, "
                                "but at least one input/output to the graph is a tensor subclass. This is not "
                                "supported today.");
    }
    uint32_t *uout_of = s ? NULL : sg__malloc(ctx, (m->nout ? m->nout : 1) * sizeof *uout_of);
    if (!s && !uout_of)
        s = sg__nomem(ctx);
    for (uint32_t k = 0; k < m->nout && !s; k++) {
        const sg__tsub *sub = NULL;
        bool inner = false;
        for (size_t g = 0; g < sig.nout && !sub && !inner; g++) {
            if (sig.out[g].v[0] == k)
                sub = &sig.out[g];
            inner = k > sig.out[g].v[0] && k < sig.out[g].v[0] + sig.out[g].n;
        }
        uout_of[k] = inner ? uout_of[k - 1] : a->nuout;
        if (inner)
            continue;
        struct user *u = &a->uout[a->nuout++];
        *u = (struct user){.n = sub ? sub->n : 1, .idx = {k}, .base = SG_NOVAL};
        for (uint32_t j = 1; j < u->n; j++)
            u->idx[j] = k + j;
    }
    for (uint32_t o = 0; o < a->nuout && !s; o++) { /* kinds: the inner tensors' own, alike */
        struct user *u = &a->uout[o];
        const sg__aot_output *first = &m->out[u->idx[0]];
        u->kind = first->kind;
        for (uint32_t j = 0; j < u->n && !s; j++) {
            const sg__aot_output *x = &m->out[u->idx[j]];
            /* (an intermediate's alias names a base of the functional graph, no user input or output) */
            uint32_t base = x->base == SG_NOVAL ? SG_NOVAL
                            : x->kind == SG_AOT_ALIAS_OF_INTERMEDIATE_BASE_IS_USER_OUTPUT ? uout_of[x->base]
                            : x->kind == SG_AOT_IS_INPUT || x->kind == SG_AOT_ALIAS_OF_INPUT ? user_of[x->base]
                                                                                              : SG_NOVAL;
            bool same = x->kind == first->kind && (j == 0 || base == u->base);
            if (same && base != SG_NOVAL && x->kind != SG_AOT_ALIAS_OF_INTERMEDIATE_BASE_IS_USER_OUTPUT)
                same = a->uin[base].n == u->n && a->uin[base].idx[j] == x->base; /* inner j of that input */
            if (!same)
                s = sg__err(ctx, SG_EUNSUPPORTED, "aot: unsupported: output %u is a tensor subclass whose inner "
                            "tensors alias different inputs or outputs", o);
            u->base = base;
        }
    }
    if (!s && (sig.nin || sig.nout)) { /* which graph inputs and outputs are inner tensors (the backward's) */
        a->m.in_inner = sg__calloc(ctx, m->nin ? m->nin : 1, 1);
        a->m.out_inner = sg__calloc(ctx, m->nout ? m->nout : 1, 1);
        if (!a->m.in_inner || !a->m.out_inner)
            s = sg__nomem(ctx);
        for (uint32_t i = 0; i < a->nuin && !s; i++)
            for (uint32_t j = 0; j < a->uin[i].n && a->uin[i].n > 1; j++)
                a->m.in_inner[a->uin[i].idx[j]] = (uint8_t)(j + 1);
        for (uint32_t o = 0; o < a->nuout && !s; o++)
            for (uint32_t j = 0; j < a->uout[o].n && a->uout[o].n > 1; j++)
                a->m.out_inner[a->uout[o].idx[j]] = (uint8_t)(j + 1);
    }
    sg_free(uout_of);
    sg_free(user_of);
    return s;
}

void sg_aot_free(sg_aot *a)
{
    if (!a)
        return;
    sg_free(a->uin);
    sg_free(a->uout);
    sg__graph_free(a->fw);
    sg__graph_free(a->epi);
    sg_free(a->epi_in);
    sg_free(a->epi_lead);
    sg_free(a->epi_out);
    sg_free(a->epi_base);
    sg_free(a->checks);
    sg__aot_train_free(a->train);
    sg_free(a->train_msg);
    sg__aot_meta_free(&a->m);
    sg_free(a);
}

sg_status sg_aot_compile(const sg_tracer *t, int keep_input_mutations, sg_aot **out)
{
    const sg_aot_options o = {.keep_input_mutations = keep_input_mutations, .partition = SG_AOT_MIN_CUT};
    return sg_aot_compile_with(t, &o, out);
}

sg_status sg_aot_compile_with(const sg_tracer *t, const sg_aot_options *o, sg_aot **out)
{
    if (!out)
        return SG_EINVAL;
    *out = NULL;
    if (!t || !o || (o->partition != SG_AOT_MIN_CUT && o->partition != SG_AOT_DEFAULT_PARTITION))
        return SG_EINVAL;
    int keep_input_mutations = o->keep_input_mutations;
    const sg__graph *src = sg__tracer_graph(t);
    sg_ctx *ctx = src->ctx;
    if (src->scopes[0].output == SG_NOVAL)
        return sg__err(ctx, SG_EINVAL, "aot: the traced graph has no output yet");
    sg_aot *a = sg__calloc(ctx, 1, sizeof *a);
    if (!a)
        return sg__nomem(ctx);
    a->ctx = ctx;
    a->t = t;
    a->src = src;
    a->eager = o->eager != 0;
    sg_status s = sg__graph_new(src->env, &a->fw);
    if (!s) {
        a->fw->reg = src->reg;
        sg__graph_reserve(a->fw, src->nnodes); /* about one node a node: room at once, not grown by copies */
        sg__tsig sig = sg__tracer_signature(t);
        s = sg__aot_functionalize_meta(src, a->fw, keep_input_mutations != 0, sig.nin || sig.nout, &a->m);
    }
    if (!s)
        s = build_epilogue(a);
    if (!s)
        s = plan_checks(a);
    if (!s)
        s = user_signature(a);
    bool rg = false; /* the backward, where an input requires grad (an inference graph too: an output
                        that is an input, or its view, carries gradients); the forward runs without it */
    for (uint32_t i = 0; i < a->m.nin; i++)
        rg |= a->m.in[i].tensor && src->vals[a->m.in[i].ph].u.t.requires_grad;
    if (!s && rg) {
        a->train_st = sg__aot_saved_check(src);
        if (!a->train_st)
            a->train_st = sg__aot_train_build(a->fw, &a->m, o->partition == SG_AOT_MIN_CUT, &a->train);
        if (a->train_st == SG_ENOMEM)
            s = SG_ENOMEM;
        else if (a->train_st && !(a->train_msg = sg__strdup(ctx, sg_ctx_last_error_msg(ctx))))
            s = sg__nomem(ctx);
    }
    if (s) {
        sg_aot_free(a);
        return s;
    }
    *out = a;
    return SG_OK;
}

sg_aot_mode sg_aot_get_mode(const sg_aot *a)
{
    return a && a->m.train ? SG_AOT_TRAIN : SG_AOT_INFERENCE;
}

int sg_aot_has_loss(const sg_aot *a)
{
    return a && (a->m.out_rg || sg__aot_train_ntangents(a->train) > 0);
}

size_t sg_aot_ninputs(const sg_aot *a)
{
    return a ? a->nuin : 0;
}

unsigned sg_aot_input_mutation(const sg_aot *a, size_t i)
{
    if (!a || i >= a->nuin)
        return 0;
    unsigned f = 0; /* a subclass input: what any inner tensor's is (1.2) */
    for (uint32_t j = 0; j < a->uin[i].n; j++) {
        const sg__aot_input *in = &a->m.in[a->uin[i].idx[j]];
        if (sg__aot_train_bw_writes(a->train, a->uin[i].idx[j]))
            f |= SG_AOT_DATA | SG_AOT_BACKWARD;
        if (in->where == SG__AOT_NOT_MUTATED)
            continue;
        f |= (in->data ? SG_AOT_DATA : 0) | (in->metadata ? SG_AOT_METADATA : 0) |
             (in->storage ? SG_AOT_STORAGE | SG_AOT_METADATA : 0);
        f |= in->where == SG__AOT_IN_GRAPH ? SG_AOT_IN_GRAPH : SG_AOT_EPILOGUE;
    }
    return f;
}

int sg_aot_input_synthetic(const sg_aot *a, size_t i)
{
    if (!a || i >= sg_aot_ninputs(a))
        return 0;
    return a->uin[i].n == 1 && a->m.in[a->uin[i].idx[0]].tensor && a->m.in[a->uin[i].idx[0]].base != SG_NOVAL;
}

const char *sg_aot_input_name(const sg_aot *a, size_t i)
{
    return a && i < a->nuin ? a->uin[i].name : NULL;
}

size_t sg_aot_noutputs(const sg_aot *a)
{
    return a ? a->nuout : 0;
}

sg_aot_output_kind sg_aot_output(const sg_aot *a, size_t k, size_t *base)
{
    if (!a || k >= a->nuout) {
        if (base)
            *base = SIZE_MAX;
        return SG_AOT_NON_ALIAS;
    }
    const struct user *o = &a->uout[k];
    if (base)
        *base = o->base == SG_NOVAL ? SIZE_MAX : o->base;
    return (sg_aot_output_kind)o->kind;
}

sg_status sg_aot_print(const sg_aot *a, char **out)
{
    if (!a || !out)
        return SG_EINVAL;
    return sg__graph_print(a->fw, out);
}

sg_status sg_aot_ops(const sg_aot *a, char **out)
{
    if (!a || !out)
        return SG_EINVAL;
    *out = NULL;
    /* training: the partitioned forward (joint.c), as 1.13's partition extracts it: its tail among it, merged
       subexpressions and dead code gone; else (inference, or no backward) the functional graph */
    return a->train ? sg__aot_train_fw_ops(a->train, out) : sg__graph_ops(a->fw, out);
}

/* Why a training program has no backward (its error and message again). */
static sg_status no_backward(const sg_aot *a)
{
    if (!a->train_st)
        return sg__err(a->ctx, SG_EINVAL, "aot: no input requires grad: there is no backward");
    return sg__err(a->ctx, a->train_st ? a->train_st : SG_EINTERNAL, "%s",
                   a->train_msg ? a->train_msg : "aot: no backward");
}

sg_status sg_aot_saved(const sg_aot *a, size_t *n, int64_t *bytes)
{
    if (!a || !n || !bytes)
        return SG_EINVAL;
    *n = 0;
    *bytes = 0;
    return a->train ? sg__aot_train_saved(a->train, n, bytes) : no_backward(a);
}

sg_status sg_aot_backward_ops(const sg_aot *a, char **out)
{
    if (!a || !out)
        return SG_EINVAL;
    *out = NULL;
    return a->train ? sg__graph_ops(sg__aot_train_bw(a->train), out) : no_backward(a);
}

/* Tensor x laid out as src value v is (its sizes, strides and offset
 * evaluated under run b): a metadata mutation applied to the caller's
 * tensor, as as_strided_ does it. Errors:
 * SG_EUNBOUND, SG_ELIMIT, SG_ESHAPE (a layout outside x's storage). */
static sg_status restride(sg_ctx *ctx, const sg__graph *src, uint32_t v, sg__xrun *b, sg__xtensor *x)
{
    const sg__fake_tensor *f = &src->vals[v].u.t;
    int64_t sizes[SG_MAX_DIMS], strides[SG_MAX_DIMS], offset, lo, hi;
    for (uint32_t d = 0; d < f->ndim; d++) {
        CHAIN(sg__xrun_eval(b, sg__graph_size(src, v, d), &sizes[d]));
        CHAIN(sg__xrun_eval(b, sg__graph_stride(src, v, d), &strides[d]));
    }
    CHAIN(sg__xrun_eval(b, f->offset, &offset));
    CHAIN(sg__xlayout_extent(ctx, f->ndim, sizes, strides, offset, &lo, &hi));
    if (lo < 0 || offset < 0 || hi > x->st->numel)
        return sg__err(ctx, SG_ESHAPE, "aot: input %s laid out outside its storage", src->vals[v].name);
    return sg__xt_set_layout(ctx, x, f->ndim, sizes, strides, offset);
}

/* Inputs i and j, which the program was compiled for as disjoint views of
 * one storage (their layouts under the hints shared no position: no
 * synthetic base joins them), share no position in the caller's tensors
 * of run rx either: SG_OK, else SG_EALIASING (the compiled program would
 * differ from eager execution; PyTorch recompiles). */
static sg_status still_disjoint(const sg_aot *a, sg__xrun *rx, uint32_t i, uint32_t j)
{
    const sg__xval *x = sg__xrun_value(rx, a->m.in[i].ph), *y = sg__xrun_value(rx, a->m.in[j].ph);
    if (x->kind != SG_XV_TENSOR || y->kind != SG_XV_TENSOR || x->u.t->st != y->u.t->st)
        return SG_OK;
    sg__xlayout l[2];
    for (int k = 0; k < 2; k++) {
        const sg__xtensor *t = k ? y->u.t : x->u.t;
        l[k].ndim = t->ndim;
        memcpy(l[k].sizes, t->sizes, t->ndim * sizeof *t->sizes);
        memcpy(l[k].strides, t->strides, t->ndim * sizeof *t->strides);
        l[k].offset = t->offset;
    }
    bool meet;
    CHAIN(sg__xlayouts_meet(a->ctx, &l[0], &l[1], &meet));
    if (meet)
        return sg__err(a->ctx, SG_EALIASING, "aot: inputs %s and %s overlap in this call, but the program was "
                       "compiled for them as disjoint views of one storage (compile it again for these inputs)",
                       a->src->vals[a->m.in[i].ph].name, a->src->vals[a->m.in[j].ph].name);
    return SG_OK;
}

/* The gradients of the inputs on synthetic base b: the gradient of its
 * storage's positions (g, one dimension over numel positions; NULL: none
 * reached the base) plus what each input on it has of its own (where the
 * storage took its base after reading it), added at the positions its
 * layout in the caller's run rx reaches; then each input on it that
 * requires grad takes that sum gathered by its layout, the gradient it
 * takes as the autograd base of the others, which view it (autograd
 * routes a view's gradient to its base). As the caller gave the inputs:
 * before the epilogue. (An input that reaches a position twice takes the
 * position's gradient at each element there: not autograd's gradient of
 * a tensor whose elements it tells apart, aot.h says so.) */
static sg_status base_grads(const sg_aot *a, sg__xrun *rx, uint32_t b, const sg__xtensor *g, int64_t numel,
                            sg_tensor **grads)
{
    const sg__aot_meta *m = &a->m;
    sg__xtensor *sum = NULL;
    sg_status s = SG_OK;
    for (uint32_t i = 0; i < m->nin && !s; i++) {
        if (m->in[i].base != b || (!g && !grads[i]))
            continue;
        if (!sum && !(s = sg__xt_new(a->ctx, &sum, g ? (sg_dtype)g->dtype : (sg_dtype)grads[i]->dtype, 1, &numel)))
            for (int64_t q = 0; g && q < numel && q < sg__xt_numel(g); q++)
                sg__xt_set_f(sum, q, sg__xt_get_f(g, q));
        const sg__xval *x = sg__xrun_value(rx, m->in[i].ph);
        if (!s && x->kind != SG_XV_TENSOR)
            s = sg__err(a->ctx, SG_EINTERNAL, "aot: an input on a synthetic base that is no tensor");
        for (int64_t e = 0; !s && grads[i] && e < sg__xt_numel(grads[i]); e++) {
            int64_t q = sg__xt_pos(x->u.t, e);
            if (q >= 0 && q < numel)
                sg__xt_set_f(sum, q, sg__xt_get_f(sum, q) + sg__xt_get_f(grads[i], e));
        }
    }
    for (uint32_t i = 0; i < m->nin && sum && !s; i++) {
        if (m->in[i].base != b || !a->fw->vals[m->in[i].dph].u.t.requires_grad)
            continue;
        const sg__xtensor *x = sg__xrun_value(rx, m->in[i].ph)->u.t;
        sg__xtensor *t = NULL;
        if ((s = sg__xt_new(a->ctx, &t, (sg_dtype)sum->dtype, x->ndim, x->sizes)))
            break;
        for (int64_t e = 0; e < sg__xt_numel(t); e++) {
            int64_t q = sg__xt_pos(x, e);
            sg__xt_set_f(t, e, q >= 0 && q < numel ? sg__xt_get_f(sum, q) : 0.0);
        }
        sg__xt_unref(grads[i]);
        grads[i] = t;
    }
    sg__xt_unref(sum);
    return s;
}

/* sg_aot_call, and the backward after it where grads is given: per graph
 * input, ninner entries (its gradient's inner tensor j at grads[j * nin + i]). */
static sg_status call(const sg_aot *a, sg_run *r, sg_tensor **grads, uint32_t ninner);

sg_status sg_aot_call(const sg_aot *a, sg_run *r)
{
    if (!a || !r)
        return SG_EINVAL;
    return call(a, r, NULL, 0);
}

sg_status sg_aot_call_backward(const sg_aot *a, sg_run *r, sg_tensor **grads, size_t n)
{
    if (!a || !r || (n && !grads))
        return SG_EINVAL;
    for (size_t i = 0; i < n; i++)
        grads[i] = NULL;
    if (a->train && sg__aot_train_inner(a->train) > 1)
        return sg__err(a->ctx, SG_EUNSUPPORTED, "unsupported: the gradients are TwoTensors (an output that requires "
                                                "grad is one): sg_aot_call_backward_two gives them");
    return sg_aot_call_backward_two(a, r, grads, NULL, n);
}

sg_status sg_aot_call_backward_two(const sg_aot *a, sg_run *r, sg_tensor **grads, sg_tensor **grads_b, size_t n)
{
    if (!a || !r || (n && !grads))
        return SG_EINVAL;
    for (size_t i = 0; i < n; i++) {
        grads[i] = NULL;
        if (grads_b)
            grads_b[i] = NULL;
    }
    if (n != a->nuin)
        return sg__err(a->ctx, SG_EINVAL, "sg_aot_call_backward: %zu gradients for %u inputs", n, a->nuin);
    if (!a->train)
        return no_backward(a);
    uint32_t ninner = sg__aot_train_inner(a->train), nin = a->m.nin;
    if (ninner > 2 || (ninner > 1 && !grads_b))
        return sg__err(a->ctx, SG_EUNSUPPORTED, "unsupported: gradients that are tensor subclasses of %u inner "
                                                "tensors", ninner);
    sg_tensor **g = sg__calloc(a->ctx, nin ? (size_t)nin * ninner : 1, sizeof *g);
    if (!g)
        return sg__nomem(a->ctx);
    sg_status s = call(a, r, g, ninner);
    for (uint32_t i = 0; i < a->nuin; i++) { /* the program's inputs that take gradients: plain ones, one graph
                                                input each (a subclass input requires no grad) */
        if (a->uin[i].n != 1)
            continue;
        uint32_t x = a->uin[i].idx[0];
        grads[i] = g[x];
        g[x] = NULL;
        if (ninner > 1) {
            grads_b[i] = g[nin + x];
            g[nin + x] = NULL;
        }
    }
    for (uint32_t i = 0; i < nin * ninner; i++)
        sg__xt_unref(g[i]);
    sg_free(g);
    if (s)
        for (size_t i = 0; i < n; i++) {
            sg_tensor_unref(grads[i]);
            grads[i] = NULL;
            if (grads_b) {
                sg_tensor_unref(grads_b[i]);
                grads_b[i] = NULL;
            }
        }
    return s;
}

static sg_status call(const sg_aot *a, sg_run *r, sg_tensor **grads, uint32_t ninner)
{
    sg_ctx *ctx = a->ctx;
    sg__xrun *rx = sg__run_xrun(r);
    if (sg__run_tracer(r) != a->t)
        return sg__err(ctx, SG_EINVAL, "sg_aot_call: a run of another tracer");
    const sg__aot_meta *m = &a->m;
    sg__xrun *fx = NULL, *ex = NULL;
    uint64_t *before = sg__malloc(ctx, (m->nin ? m->nin : 1) * sizeof *before);
    sg_status s = before ? sg__xrun_new(ctx, a->fw, &fx) : sg__nomem(ctx);
    if (!s) /* the caller's run checked its inputs and bound their symbols: fx takes them */
        s = sg__xrun_bind_all(fx, rx);
    for (uint32_t i = 0; i < m->nin && !s; i++) { /* the version counters as the caller gave them */
        const sg__xval *x = sg__xrun_value(rx, m->in[i].ph);
        before[i] = x->kind == SG_XV_TENSOR ? x->u.t->ver->n : 0;
    }
    for (uint32_t i = 0; i < m->nin && !s; i++) { /* the caller's inputs, as r holds them */
        const sg__xval *x = sg__xrun_value(rx, m->in[i].ph);
        if (x->kind == SG_XV_UNSET && m->in[i].tensor)
            s = sg__err(ctx, SG_EINVAL, "aot: input %s has no value", a->src->vals[m->in[i].ph].name);
        else if (x->kind != SG_XV_UNSET && m->in[i].dph != SG_NOVAL) /* a symbol's placeholder takes its binding */
            s = sg__xrun_input_bound(fx, m->in[i].dph, x);
    }
    /* inputs on one storage compiled as disjoint (false aliasing): still so */
    for (uint32_t d = 0; d < m->ndisjoint && !s; d++)
        s = still_disjoint(a, rx, m->disjoint[d][0], m->disjoint[d][1]);
    /* the synthetic bases: each storage as one dimension, viewed from the
       caller's tensor of its first input */
    sg__xtensor **bt = sg__calloc(ctx, m->nbases ? m->nbases : 1, sizeof *bt);
    if (!s && !bt)
        s = sg__nomem(ctx);
    for (uint32_t b = 0; b < m->nbases && !s; b++) {
        const sg__xtensor *x = sg__xrun_value(rx, m->in[m->bases[b].member].ph)->u.t;
        int64_t numel, one = 1;
        /* (what the inputs reach may pass the storage's end where they are empty: grown, as resize_ grows) */
        if (!(s = sg__xrun_eval(fx, m->bases[b].numel, &numel)) && numel > x->st->numel)
            s = sg__xst_grow(ctx, x->st, numel);
        if (!s && !(s = sg__xt_view(ctx, &bt[b], x->st, x->ver, 1, &numel, &one, 0))) {
            sg__xval xv = {.kind = SG_XV_TENSOR, .u.t = bt[b]};
            s = sg__xrun_input(fx, m->bases[b].dph, &xv);
        }
    }
    /* the overlap checks of the captured writes: those over the inputs'
       symbols before the graph runs (nothing written yet), the others
       (over unbacked symbols) once it bound them */
    uint32_t late = 0;
    for (uint32_t i = 0; i < a->nchecks && !s; i++)
        if ((s = sg__xnode_check_overlap(ctx, a->src, a->checks[i], fx)) == SG_EUNBOUND) {
            late++;
            s = SG_OK;
        }
    for (uint32_t c = 0; c < m->nconds && !s; c++) { /* the predicates of conds whose branches bump differently */
        const sg__garg *pred = &a->fw->args[a->fw->nodes[m->conds[c].node].args];
        if (pred->kind == SG_A_VALUE)
            s = sg__xrun_pin(fx, pred->u.v);
    }
    if (!s && grads) /* what the backward reads stays */
        s = sg__aot_train_pin(a->train, fx);
    if (!s)
        s = sg__xrun_plan(fx);
    if (!s)
        s = sg__xrun_rest(fx);
    for (uint32_t i = 0; i < a->nchecks && late && !s; i++)
        s = sg__xnode_check_overlap(ctx, a->src, a->checks[i], fx);
    const sg__gnode *fo = &a->fw->nodes[a->fw->scopes[0].output];
    if (!s && grads) { /* the backward, over what the forward saved: before the epilogue writes the
                          caller's tensors, some of which it saved (an input mutated out of the graph) */
        uint32_t *fouts = sg__malloc(ctx, (fo->nargs ? fo->nargs : 1) * sizeof *fouts);
        if (!fouts)
            s = sg__nomem(ctx);
        for (uint32_t k = 0; fouts && k < fo->nargs; k++)
            fouts[k] = a->fw->args[fo->args + k].kind == SG_A_VALUE ? a->fw->args[fo->args + k].u.v : SG_NOVAL;
        sg__xtensor **bg = sg__calloc(ctx, m->nbases ? m->nbases : 1, sizeof *bg);
        if (!s && !bg)
            s = sg__nomem(ctx);
        if (!s)
            s = sg__aot_train_run(a->train, fx, fouts, grads, m->nin, ninner, bg, m->nbases);
        /* (a base's gradient is plain: where the loss is a tensor subclass, the joint refuses one) */
        for (uint32_t b = 0; b < m->nbases && !s; b++)
            s = base_grads(a, rx, b, bg[b], bt[b]->sizes[0], grads);
        for (uint32_t b = 0; bg && b < m->nbases; b++)
            sg__xt_unref(bg[b]);
        sg_free(bg);
        sg_free(fouts);
    }
    if (!s && a->epi) { /* the epilogue: updated inputs copied in, views of them made again */
        s = sg__xrun_new(ctx, a->epi, &ex);
        if (!s)
            s = sg__xrun_bind_all(ex, fx);
        for (uint32_t i = 0; i < m->nin && !s; i++) /* (ex took fx's bindings: these were checked there) */
            if (m->in[i].tensor)
                s = sg__xrun_input_bound(ex, a->epi_in[i], sg__xrun_value(rx, m->in[i].ph));
        for (uint32_t j = 0; j < m->nlead && !s; j++)
            s = sg__xrun_input_bound(ex, a->epi_lead[j], sg__xrun_value(fx, a->fw->args[fo->args + j].u.v));
        for (uint32_t b = 0; b < m->nbases && !s; b++)
            if (a->epi_base[b] != SG_NOVAL) {
                sg__xval xv = {.kind = SG_XV_TENSOR, .u.t = bt[b]};
                s = sg__xrun_input(ex, a->epi_base[b], &xv);
            }
        if (!s)
            s = sg__xrun_rest(ex);
    }
    /* metadata and storage mutations: the caller's tensor takes the storage
       and layout its object ended with (another input's storage as the
       caller gave it, before that input moved to another in this loop: c.data
       = a; a.set_(t), or one the graph made, as the functional graph's value
       of it lays it out) */
    sg__xstorage **given = s ? NULL : sg__calloc(ctx, m->nin ? m->nin : 1, sizeof *given);
    if (!s && !given)
        s = sg__nomem(ctx);
    for (uint32_t i = 0; i < m->nin && !s; i++)
        if (m->in[i].storage && m->in[i].onto != SG_NOVAL && !given[m->in[i].onto]) {
            uint32_t j = m->in[i].onto;
            given[j] = sg__xrun_value(rx, m->in[j].ph)->u.t->st;
            given[j]->refs++; /* (kept alive while j moves to another storage) */
        }
    for (uint32_t i = 0; i < m->nin && !s; i++) {
        const sg__aot_input *in = &m->in[i];
        sg__xtensor *x = in->metadata ? sg__xrun_value(rx, in->ph)->u.t : NULL;
        if (!x)
            continue;
        if (in->storage && in->onto == SG_NOVAL) {
            const sg__xval *y = sg__xrun_value(fx, in->updated);
            if (y->kind != SG_XV_TENSOR) {
                s = sg__err(ctx, SG_EINTERNAL, "aot: the value input %s was set to is gone", a->src->vals[in->ph].name);
                break;
            }
            sg__xt_set_storage(x, y->u.t->st);
            s = sg__xt_set_layout(ctx, x, y->u.t->ndim, y->u.t->sizes, y->u.t->strides, y->u.t->offset);
            continue;
        }
        if (in->storage)
            sg__xt_set_storage(x, given[in->onto]);
        s = restride(ctx, a->src, in->final, fx, x);
    }
    for (uint32_t i = 0; given && i < m->nin; i++)
        if (given[i])
            sg__xst_unref(given[i]);
    sg_free(given);
    /* what r reports: each input object's last version is the caller's tensor; the outputs */
    for (uint32_t i = 0; i < m->nin && !s; i++)
        if (m->in[i].tensor && m->in[i].final != m->in[i].ph)
            s = sg__xrun_set(rx, m->in[i].final, sg__xrun_value(rx, m->in[i].ph));
    const sg__gnode *so = &a->src->nodes[a->src->scopes[0].output];
    const sg__gnode *eo = a->epi ? &a->epi->nodes[a->epi->scopes[0].output] : NULL;
    for (uint32_t k = 0; k < m->nout && !s; k++) {
        const sg__garg *ga = &a->src->args[so->args + k];
        if (ga->kind != SG_A_VALUE)
            continue;
        const sg__aot_output *o = &m->out[k];
        const sg__xval *x;
        if (o->kind == SG_AOT_IS_INPUT)
            x = sg__xrun_value(rx, m->in[o->base].ph);
        else if (a->epi_out && a->epi_out[k] != SG_NOVAL)
            x = sg__xrun_value(ex, a->epi->args[eo->args + a->epi_out[k]].u.v);
        else
            x = sg__xrun_value(fx, a->fw->args[fo->args + m->nlead + k].u.v);
        s = sg__xrun_set(rx, ga->u.v, x);
    }
    if (!s) /* (the unbacked sizes the graph bound, a cond's or item()'s: an int output may be one) */
        s = sg__xrun_bind_all(rx, fx);
    /* version counters move as eager execution moves them: by every write
       through the input or a view sharing its counter (the graph's own
       copy_ and the epilogue count for nothing); inputs sharing one counter
       add up */
    uint64_t *bumps = s ? NULL : sg__calloc(ctx, m->nin ? m->nin : 1, sizeof *bumps);
    if (!s && !bumps)
        s = sg__nomem(ctx);
    for (uint32_t i = 0; i < m->nin && !s; i++)
        bumps[i] = m->in[i].bumps;
    for (uint32_t c = 0; c < m->nconds && !s; c++) { /* the writes of the branch that ran */
        const sg__gnode *cn = &a->fw->nodes[m->conds[c].node];
        const sg__garg *pred = &a->fw->args[cn->args];
        int64_t taken = 0;
        if (pred->kind == SG_A_EXPR) {
            s = sg__xrun_eval(fx, pred->u.e, &taken);
        } else {
            const sg__xval *pv = sg__xrun_value(fx, pred->u.v);
            if (pv->kind == SG_XV_TENSOR && sg_tensor_numel(pv->u.t) != 1) {
                s = sg__err(ctx, SG_EINTERNAL, "aot: a cond's predicate of %lld elements",
                            (long long)sg_tensor_numel(pv->u.t));
                break;
            }
            taken = pv->kind == SG_XV_TENSOR ? sg_tensor_get_f(pv->u.t, 0) != 0 : pv->kind == SG_XV_BOOL && pv->u.b;
        }
        bumps[m->conds[c].input] += m->conds[c].bumps[taken ? 0 : 1];
    }
    for (uint32_t i = 0; i < m->nin && !s; i++) {
        const sg__xval *x = sg__xrun_value(rx, m->in[i].ph);
        if (x->kind != SG_XV_TENSOR)
            continue;
        sg__xversion *ver = x->u.t->ver;
        uint64_t n = 0;
        for (uint32_t j = 0; j < m->nin; j++) {
            const sg__xval *y = sg__xrun_value(rx, m->in[j].ph);
            n += y->kind == SG_XV_TENSOR && y->u.t->ver == ver ? bumps[j] : 0;
        }
        ver->n = before[i] + n; /* the same for every input sharing ver: it was read before anything ran */
    }
    sg_free(bumps);
    for (uint32_t b = 0; bt && b < m->nbases; b++)
        sg__xt_unref(bt[b]);
    sg_free(bt);
    sg_free(before);
    sg__xrun_free(ex);
    sg__xrun_free(fx);
    return s;
}
