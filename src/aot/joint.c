/* Training (issue 21): the joint graph of the functional forward and its
 * backward (PyTorch's joint function, traced), partitioned into the
 * forward the runtime already runs (and its tail: what the min-cut saves
 * of the backward part that no tangent reaches) and a backward graph over
 * what the forward saves: the values partition.c's min-cut chooses
 * (PyTorch's min_cut_rematerialization_partition, cheap forward nodes
 * recomputed in the backward) or PyTorch's default_partition's (every
 * forward value the backward reads); the backward's run after a call, and
 * the checks eager's backward() makes on the traced graph (saved values
 * written in place since, set_, writes through views that repeat
 * elements). */
#include <stdio.h>
#include <string.h>

#include "aot/aot_private.h"
#include "exec/exec_private.h"
#include "graph/derivatives.h"

struct sg__aot_train {
    sg__graph *joint;  /* the forward's nodes, the tangents, the backward */
    sg__graph *bw;     /* saved values and tangents in, gradients out */
    sg__graph *tail;   /* NULL, or what the forward computes for the backward beyond the functional
                          graph (nodes of the joint's backward part the min-cut saves): forward
                          values in (tail_in), the saved values out */
    uint32_t ntail_in;
    uint32_t *tail_in; /* per input of tail: the forward graph's value */
    uint32_t nsaved;
    uint32_t *saved;   /* per saved value: the forward graph's value, or (SG__TAIL | k) tail's output k */
    uint32_t ntan;
    uint32_t *tan_out; /* per tangent: the forward's output (its index among the graph's outputs) */
    uint8_t *tan_sized; /* per tangent: of its placeholder's sizes, not the output's (m.out's layout) */
    uint32_t ngrad;
    uint32_t *grad_in; /* per output of bw: the input (m.in) whose gradient it is, or (SG__BASE | b) the
                          synthetic base b's (m.bases: the gradient of its storage's positions) */
    uint8_t *grad_inner; /* per output of bw: 0 (the gradient, or inner tensor 0 of one that is a
                            tensor subclass; a synthetic base's), j (its inner tensor j) */
    uint8_t *bw_written; /* per input (m.in): a custom Function's backward writes it (a copy_ at the
                            backward graph's end) */
    uint8_t *fw_keep;  /* per joint node: in the partitioned forward (extract_fw) */
};

#define SG__TAIL 0x80000000u
#define SG__BASE 0x80000000u

void sg__aot_train_free(sg__aot_train *t)
{
    if (!t)
        return;
    sg__graph_free(t->joint);
    sg__graph_free(t->bw);
    sg__graph_free(t->tail);
    sg_free(t->tail_in);
    sg_free(t->saved);
    sg_free(t->tan_out);
    sg_free(t->tan_sized);
    sg_free(t->grad_in);
    sg_free(t->grad_inner);
    sg_free(t->bw_written);
    sg_free(t->fw_keep);
    sg_free(t);
}

/* What the end of the joint's replay works with. */
typedef struct jctx {
    const sg__graph *fw;
    const sg__aot_meta *m;
    sg__aot_train *t;
    uint32_t first;     /* the first node of the joint past the forward's */
    uint32_t *tangents; /* per tangent: its joint value */
    uint32_t *grads;    /* per bw output: its joint value */
    uint32_t *j2f;      /* per joint value before first: the forward's value */
} jctx;

/* A contiguous tensor value of g, v's sizes and dtype, a placeholder named name. */
static sg_status contiguous_placeholder(sg__graph *g, uint32_t v, const char *name, uint32_t *out)
{
    const sg_expr *sizes[SG_MAX_DIMS], *strides[SG_MAX_DIMS];
    size_t n = g->vals[v].u.t.ndim;
    for (size_t k = 0; k < n; k++)
        sizes[k] = sg__graph_size(g, v, k);
    CHAIN(sg__graph_contiguous_strides(g->ctx, n, sizes, strides));
    CHAIN(sg__graph_tensor(g, out, (sg_dtype)g->vals[v].u.t.dtype, n, sizes, strides, g->ctx->zero, SG_NOVAL));
    return sg__graph_placeholder(g, *out, name);
}

/* Does a write of gradient value x of joint g stay unseen but by the
 * custom Function's backward that writes it (nodes first .. end - 1), as
 * the engine's buffer of a gradient no other formula reads? In eager the
 * write reaches every other reader of that tensor (an add's backward gives
 * its gradient to both arguments, a view's to its base), in an order the
 * engine's queue decides. grads: the joint's gradients of the inputs. */
static bool gradient_own(const sg__graph *g, uint32_t x, uint32_t first, uint32_t end, const uint32_t *grads,
                         uint32_t ngrad)
{
    const sg__gnode *p = g->vals[x].node == SG_NOVAL ? NULL : &g->nodes[g->vals[x].node];
    if (!p || p->kind != SG_N_CALL || (p->schema->flags & (SG_OPF_VIEW | SG_OPF_INPLACE | SG_OPF_OUT)))
        return false;
    for (uint32_t k = 0; k < ngrad; k++)
        if (grads[k] == x)
            return false;
    for (uint32_t i = g->vals[x].node + 1; i < g->nnodes; i++) {
        if (i >= first && i < end)
            continue;
        if (sg__graph_node_reads(g, &g->nodes[i], x))
            return false;
    }
    return true;
}

/* The internal-overlap error of a write into eager's gradient of value v
 * (of its sizes), whose dimensions zero are at stride 0: where one of them
 * is provably above 1, more than one element is one memory location. */
static sg_status zero_dims_check(const sg__graph *src, uint32_t v, uint64_t zero, uint32_t line)
{
    sg_ctx *ctx = src->ctx;
    for (uint32_t d = 0; d < src->vals[v].u.t.ndim && d < 64; d++) {
        const sg_expr *gt;
        sg_truth known = SG_UNKNOWN;
        if (!((zero >> d) & 1))
            continue;
        CHAIN(sg_expr_rel(ctx, &gt, SG_REL_GT, sg__graph_size(src, v, d), ctx->one));
        CHAIN(sg_env_known(src->env, &known, gt));
        if (known == SG_TRUE)
            return sg__err(ctx, SG_EALIASING, "unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the tensor before "
                           "performing the operation (a custom Function's backward writes the gradient it is "
                           "given, line %u)", line);
    }
    return SG_OK;
}

/* A custom Function's backward (line) writes in place the gradient it is
 * given, of the sizes of value v: where that gradient repeats an element
 * along a dimension provably above 1 (every dimension of the loss's scalar
 * expanded: all; else a dimension a view made stride 0: view), eager's
 * write raises the internal-overlap error (zero_dims_check). */
static sg_status gradient_write_check(const sg__graph *g, uint32_t v, bool all, bool view, uint32_t line)
{
    uint64_t zero = 0;
    for (uint32_t d = 0; d < g->vals[v].u.t.ndim && d < 64; d++)
        if (all || (view && sg__graph_stride(g, v, d) == g->ctx->zero))
            zero |= (uint64_t)1 << d;
    return zero_dims_check(g, v, zero, line);
}

/* The writes of the custom Functions' backwards (issue 21's mutations in
 * the backward, PyTorch's joint after tracing it): a gradient written in
 * place must be the Function's own (gradient_own; eager's gradient of an
 * output is the loss's scalar expanded, which a write refuses); a program
 * input written gets copy_(input, new contents) at the joint's end, which
 * the partition keeps in the backward graph (must_be_in_backward). Refused
 * as unsupported where PyTorch's joint writes nothing back (an input
 * mutated in the forward outside the graph, or its metadata), or an
 * input written twice. */
static sg_status backward_writes(jctx *J, sg__replay *r, const sg__backward *b)
{
    sg__graph *g = sg__replay_dst(r);
    const sg__aot_meta *m = J->m;
    sg_ctx *ctx = g->ctx;
    const sg__schema *copy = sg__opreg_op(g->reg, SG_OP_copy_);
    if (!copy)
        return sg__err(ctx, SG_EINTERNAL, "aot: no copy_");
    for (size_t k = 0; k < b->nwrites; k++) {
        const sg__bwrite *w = &b->writes[k];
        if (w->now == SG_NOVAL) { /* a gradient */
            bool tangent = false;
            for (uint32_t q = 0; q < J->t->ntan; q++)
                tangent |= J->tangents[q] == w->value;
            const sg__gnode *p = &g->nodes[g->vals[w->value].node];
            bool view = p->kind == SG_N_CALL && (p->schema->flags & SG_OPF_VIEW);
            CHAIN(gradient_write_check(g, w->value, tangent, view, w->line));
            if (tangent || !gradient_own(g, w->value, w->first, w->end, J->grads, J->t->ngrad))
                return sg__err(ctx, SG_EUNSUPPORTED, "unsupported: a custom Function's backward writes the gradient "
                               "it is given (line %u), which other backward formulas read too: eager's result "
                               "depends on the order its engine runs them", w->line);
            continue;
        }
        uint32_t i = SG_NOVAL;
        for (uint32_t q = 0; q < m->nbwrites && i == SG_NOVAL; q++)
            if (sg__replay_mapped(r, m->bwrites[q].value) == w->value)
                for (uint32_t j = 0; j < m->nin; j++)
                    if (m->in[j].ph == m->bwrites[q].ph)
                        i = j;
        if (i == SG_NOVAL)
            return sg__err(ctx, SG_EINTERNAL, "aot: a custom Function's backward writes a tensor of no input");
        const sg__aot_input *in = &m->in[i];
        const char *name = J->fw->vals[in->dph].name;
        if (in->where == SG__AOT_OUT_GRAPH || in->metadata || in->storage || in->base != SG_NOVAL)
            return sg__err(ctx, SG_EUNSUPPORTED, "unsupported: input %s, which a custom Function's backward writes "
                           "(line %u), is mutated in the forward %s: PyTorch's joint writes the backward's contents "
                           "back only where the forward's data mutation stays in the graph", name, w->line,
                           in->base != SG_NOVAL ? "through another input on its storage" : "outside the graph");
        if (J->t->bw_written[i])
            return sg__err(ctx, SG_EUNSUPPORTED, "unsupported: input %s written by two custom Functions' backwards "
                           "(line %u)", name, w->line);
        J->t->bw_written[i] = 1;
        sg__garg a[2] = {{.kind = SG_A_VALUE, .u.v = sg__replay_mapped(r, in->dph)},
                         {.kind = SG_A_VALUE, .u.v = w->now}};
        uint32_t c;
        CHAIN(sg__replay_call(r, copy, a, 2, &c));
    }
    return SG_OK;
}

/* Which values of joint g are tensor subclasses in eager's backward
 * (two[v]): an inner tensor of a subclass input, a tangent where the loss
 * is a subclass (every one: backward()'s ones_like of a TwoTensor loss is
 * one, and so are the gradients it reaches through sums and expands),
 * and every value computed from one (the subclass's dispatch wraps every
 * tensor result of an operator one of whose arguments is one); a factory
 * (zeros of a gradient's sizes, a custom Function's own tensor) is
 * plain. */
static sg_status subclass_values(const jctx *J, const sg__replay *r, uint8_t **out)
{
    const sg__aot_meta *m = J->m;
    const sg__graph *g = sg__replay_dst((sg__replay *)r);
    uint8_t *two = *out = sg__calloc(g->ctx, g->nvals ? g->nvals : 1, 1);
    if (!two)
        return sg__nomem(g->ctx);
    for (uint32_t k = 0; k < J->t->ntan; k++)
        two[J->tangents[k]] = 1;
    for (uint32_t q = 0; q < m->nin; q++) {
        uint32_t jv = m->in_inner && m->in_inner[q] ? sg__replay_mapped(r, m->in[q].dph) : SG_NOVAL;
        if (jv != SG_NOVAL)
            two[jv] = 1;
    }
    for (uint32_t q = 0; q < m->nbases; q++) { /* (a synthetic base of inner tensors: its inputs' views of it) */
        uint32_t mb = m->bases[q].member;
        uint32_t jv = m->in_inner && mb < m->nin && m->in_inner[mb] ? sg__replay_mapped(r, m->bases[q].dph) : SG_NOVAL;
        if (jv != SG_NOVAL)
            two[jv] = 1;
    }
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const sg__gnode *nd = &g->nodes[i];
        if (nd->out == SG_NOVAL || (nd->kind != SG_N_CALL && nd->kind != SG_N_COND))
            continue;
        bool any = false;
        for (uint32_t k = 0; k < nd->nargs && !any; k++) {
            const sg__garg *a = &g->args[nd->args + k];
            any = a->kind == SG_A_VALUE && two[a->u.v];
            for (uint32_t j = 0; a->kind == SG_A_VALUES && j < a->u.list.n && !any; j++)
                any = two[g->ids[a->u.list.off + j]] != 0;
        }
        if (!any)
            continue;
        two[nd->out] = 1;
        const sg__gval *x = &g->vals[nd->out];
        for (uint32_t j = 0; x->kind == SG_V_LIST && j < x->u.list.n; j++)
            two[g->ids[x->u.list.off + j]] = 1;
    }
    return SG_OK;
}

/* What joint g (its forward part, before its backward's nodes) cannot
 * give of a tensor-subclass loss: the empty views whose gradient's type
 * PyTorch's grad_fn made again decides (SG_NODE_REGEN) where the
 * functional graph cannot tell it. rg: which values require grad; outs:
 * the outputs with a tangent. */
static sg_status subclass_refusals(const jctx *J, const sg__graph *g, const uint8_t *rg, const uint32_t *outs)
{
    const sg__aot_meta *m = J->m;
    const sg__graph *fw = J->fw;
    for (uint32_t i = 0; i < m->nin; i++) {
        /* an input view written with grad (PyTorch's inputs on one storage are views of the caller's
           base): its grad_fn made again, as SG_NODE_REGEN says of the program's own views;
           functionalization writes an input itself, no view of it */
        const sg__aot_input *in = &m->in[i];
        if (!in->tensor || !in->data || !sg__graph_empty(fw, in->dph))
            continue;
        if (in->requires_grad && (in->base != SG_NOVAL || in->shared))
            return sg__err(g->ctx, SG_EUNSUPPORTED, "unsupported: an empty input written where other inputs view its "
                           "storage and the loss is a tensor subclass (input %s): the grad_fn PyTorch makes again "
                           "for an input view gives a plain gradient there, and which input views which is the "
                           "caller's", fw->vals[in->dph].name);
        /* (one a write with grad gave a history, on a synthetic base (an expand written through): the graph
           makes it again from the base, an as_strided whose gradient of no element is a factory's zeros,
           plain, where PyTorch's goes through the input's CopySlices, a TwoTensor) */
        if (in->written_rg && in->base != SG_NOVAL)
            return sg__err(g->ctx, SG_EUNSUPPORTED, "unsupported: an empty input on a synthetic base written with "
                           "grad where the loss is a tensor subclass (input %s): its gradient through the base's "
                           "as_strided is plain, PyTorch's through its CopySlices a TwoTensor",
                           fw->vals[in->dph].name);
    }
    for (uint32_t i = 0; i < J->first; i++) {
        /* an empty view written with grad, and read (beyond the write carried back to its base: its
           first reader): PyTorch's gradient through its grad_fn made again is plain, through its base's
           CopySlices a TwoTensor, where ours meet in one value */
        const sg__gnode *nd = &g->nodes[i];
        if (nd->kind != SG_N_CALL || !(nd->flags & SG_NODE_REGEN) || (nd->schema->flags & SG_OPF_VIEW) ||
            nd->out == SG_NOVAL || !rg[nd->out] || !sg__graph_empty(g, nd->out))
            continue;
        uint32_t readers = 0;
        for (uint32_t k = 0; k < J->t->ntan; k++)
            readers += outs[k] == nd->out;
        for (uint32_t j = i + 1; j < J->first && readers < 2; j++)
            readers += sg__graph_node_reads(g, &g->nodes[j], nd->out);
        if (readers > 1)
            return sg__err(g->ctx, SG_EUNSUPPORTED, "unsupported: an empty view written in place with grad (%s, line "
                           "%u), where the loss is a tensor subclass: PyTorch's gradient through the view is a plain "
                           "tensor, through its base a TwoTensor", nd->schema->name, nd->line);
    }
    return SG_OK;
}

/* What joint g's backward part cannot give where the loss is a tensor
 * subclass (two: subclass_values): the gradient of what a write through a
 * view wrote over (a scatter's self: the gradient with the view's part
 * zeroed) where that gradient is plain, a factory's. PyTorch's CopySlices
 * copies the write's gradient, a TwoTensor, into that plain tensor (the
 * inner b's values stay), where ours sums a TwoTensor. */
static sg_status plain_copyslices(const jctx *J, const sg__graph *g, const uint8_t *two)
{
    for (uint32_t i = J->first; i < g->nnodes; i++) {
        const sg__gnode *nd = &g->nodes[i];
        if (nd->kind != SG_N_CALL || nd->nargs < 2 || g->args[nd->args].kind != SG_A_VALUE ||
            g->args[nd->args + 1].kind != SG_A_VALUE || two[g->args[nd->args].u.v] ||
            (nd->schema->op != SG_OP_select_scatter && nd->schema->op != SG_OP_slice_scatter &&
             nd->schema->op != SG_OP_diagonal_scatter && nd->schema->op != SG_OP_as_strided_scatter))
            continue;
        uint32_t z = g->vals[g->args[nd->args + 1].u.v].node; /* (the scatter formula's zeros: a CopySlices) */
        if (z != SG_NOVAL && g->nodes[z].kind == SG_N_CALL && g->nodes[z].schema->op == SG_OP_zeros)
            return sg__err(g->ctx, SG_EUNSUPPORTED, "unsupported: a write with grad through a view whose gradient "
                           "is plain (a factory's zeros), where the loss is a tensor subclass: PyTorch's CopySlices "
                           "copies the write's gradient, a TwoTensor, into a plain tensor");
    }
    return SG_OK;
}

/* What the backward cannot give of inputs the program gave another layout
 * or storage, refused where a backward runs: an output requires grad, by
 * the trace's flags (eager's loss) or the functional graph's flow (ntan
 * tangents). With neither, no backward runs, and every gradient is None. */
static sg_status relaid_refusals(const jctx *J, uint32_t ntan)
{
    const sg__aot_meta *m = J->m;
    const sg__graph *fw = J->fw;
    for (uint32_t i = 0; i < m->nin && (ntan || m->out_rg); i++) {
        const sg__aot_input *in = &m->in[i];
        if (!in->tensor || !in->requires_grad)
            continue;
        /* (a data or layout mutation is the functional graph's: its gradient flows; a leaf's new layout is
           refused in joint_end; a layout changed and changed back is one too: what read it between saw it) */
        if (in->relaid && (in->base != SG_NOVAL || in->shared)) /* (which of them views which, autograd's views
                                                                    made again from their base, the caller knows) */
            return sg__err(fw->ctx, SG_EUNSUPPORTED, "unsupported: gradients of a program that changes the layout of "
                           "an input that requires grad on a storage other inputs view (input %s)",
                           fw->vals[in->dph].name);
        /* (x.data = y, or x.set_(y) under no_grad, of the same sizes onto a storage of the program's: the
           gradient of x's new value is x's, as its history, or AccumulateGrad, takes it; of other sizes a
           leaf's AccumulateGrad checks them, made when first asked and kept while a grad_fn holds it;
           another input on either storage, views of one another, autograd's made again from the base) */
        bool same = in->updated != SG_NOVAL && sg__aot_same_sizes(fw, in->updated, in->dph);
        if (in->storage && ((!same && in->leaf) || in->relaid || in->data || in->base != SG_NOVAL || in->shared ||
                            in->onto != SG_NOVAL))
            return sg__err(fw->ctx, SG_EUNSUPPORTED, "unsupported: gradients of a program that sets the storage of an "
                           "input that requires grad (set_ or .data =; input %s) %s", fw->vals[in->dph].name,
                           !same && in->leaf ? "of a leaf to other sizes"
                           : in->relaid  ? "and changes its layout in place"
                           : in->data    ? "and writes its own storage"
                                         : "where other inputs view its storage or the one it takes");
    }
    return SG_OK;
}

/* The joint's gradient outputs, those that exist (J->grads, t->grad_in and
 * t->grad_inner from 0 on, t->ngrad of them), from the npass backwards'
 * gradients of the nin inputs (or synthetic bases, with one backward) that
 * require grad (backward p's at J->grads[p * nin ...], t->grad_in[0 .. nin)
 * their inputs): per input the first backward's, a plain tensor, or where
 * it reads a subclass value (two, NULL: none does), every backward's, its
 * inner tensors in order. A leaf moved into the graph interior is
 * AccumulateGrad's error. */
static sg_status gradient_outputs(jctx *J, uint32_t nin, uint32_t npass, const uint8_t *two)
{
    sg__aot_train *t = J->t;
    sg_ctx *ctx = J->fw->ctx;
    uint32_t *got = sg__malloc(ctx, (size_t)nin * (npass + 1) * sizeof *got + 1);
    if (!got)
        return sg__nomem(ctx);
    /* (the gradients, then their inputs: the outputs are written over both) */
    memcpy(got, J->grads, (size_t)nin * npass * sizeof *got);
    memcpy(got + (size_t)nin * npass, t->grad_in, (size_t)nin * sizeof *got);
    sg_status s = SG_OK;
    for (uint32_t k = 0; k < nin && !s; k++) {
        uint32_t in = got[(size_t)nin * npass + k], none = 0;
        bool sub = false;
        for (uint32_t p = 0; p < npass; p++) {
            uint32_t v = got[(size_t)p * nin + k];
            none += v == SG_NOVAL;
            sub |= v != SG_NOVAL && two && two[v];
        }
        if (none == npass)
            continue;
        const char *name = J->fw->vals[J->m->in[in & SG__BASE ? J->m->bases[in & ~SG__BASE].member : in].dph].name;
        if (!(in & SG__BASE) && J->m->in[in].moved) /* (AccumulateGrad's check) */
            s = sg__err(ctx, SG_EAUTOGRAD, "leaf variable has been moved into the graph interior (input %s)", name);
        else if (none)
            s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: the gradient of input %s reaches it through some inner "
                        "tensors of a tensor subclass only", name);
        for (uint32_t p = 0; p < (sub ? npass : 1) && !s; p++) {
            J->grads[t->ngrad] = got[(size_t)p * nin + k];
            t->grad_inner[t->ngrad] = (uint8_t)p;
            t->grad_in[t->ngrad++] = in;
        }
    }
    sg_free(got);
    return s;
}

/* Before the joint's output: a tangent per user output that requires grad,
 * the backward to every input that requires grad (the gradients lead the
 * joint's output), and which forward value each joint value stands for.
 * Where an output that requires grad is a tensor subclass (a TwoTensor),
 * so is eager's loss, and its backward runs every formula on each inner
 * tensor of the gradients it is given: the backward is taken once per
 * inner tensor j, from the plain outputs' tangents and the tangents of
 * the inner tensors j of the subclass outputs (the others' formulas are
 * not run: a zero gradient through them could meet an infinity), and an
 * input's gradient is a subclass where it reads a subclass value
 * (subclass_values): one output per inner tensor, else the first
 * backward's alone. */
static sg_status joint_end(sg__replay *r, void *ud)
{
    jctx *J = ud;
    sg__graph *g = sg__replay_dst(r);
    const sg__graph *fw = J->fw;
    const sg__aot_meta *m = J->m;
    sg__aot_train *t = J->t;
    sg_ctx *ctx = g->ctx;
    J->first = (uint32_t)g->nnodes;
    const sg__gnode *fo = &fw->nodes[fw->scopes[0].output];
    uint8_t *rg = NULL;
    CHAIN(sg__graph_requires_grad(g, &rg));
    uint32_t nout = m->nout, *outs = sg__malloc(ctx, (nout ? nout : 1) * sizeof *outs);
    size_t nwant = (size_t)m->nin + m->nbases + 1; /* (an input or a synthetic base each) */
    uint32_t *ins = sg__malloc(ctx, nwant * sizeof *ins);
    uint8_t *tan_inner = sg__calloc(ctx, nout ? nout : 1, 1);
    J->tangents = sg__malloc(ctx, (nout ? nout : 1) * sizeof *J->tangents);
    /* (room for a gradient per input or synthetic base and inner tensor) */
    J->grads = sg__malloc(ctx, nwant * SG__TSUB_MAX * sizeof *J->grads);
    t->tan_out = sg__malloc(ctx, (nout ? nout : 1) * sizeof *t->tan_out);
    t->tan_sized = sg__calloc(ctx, nout ? nout : 1, 1);
    t->grad_in = sg__malloc(ctx, nwant * SG__TSUB_MAX * sizeof *t->grad_in);
    t->grad_inner = sg__calloc(ctx, nwant * SG__TSUB_MAX, 1);
    t->bw_written = sg__calloc(ctx, m->nin ? m->nin : 1, 1);
    sg_status s = outs && ins && tan_inner && J->tangents && J->grads && t->tan_out && t->tan_sized && t->grad_in &&
                  t->grad_inner && t->bw_written ? SG_OK : sg__nomem(ctx);
    /* the tangents: one per user output that requires grad (PyTorch's tangents_1 ...) */
    uint32_t npass = 1; /* the backwards: one, or one per inner tensor of a subclass loss */
    for (uint32_t k = 0; k < nout && !s; k++) {
        const sg__garg *a = &fw->args[fo->args + m->nlead + k];
        uint32_t jv = a->kind == SG_A_VALUE ? sg__replay_mapped(r, a->u.v) : SG_NOVAL;
        const sg__aot_output *o = &m->out[k];
        if (m->out_inner && m->out_inner[k] > npass && (o->kind == SG_AOT_IS_INPUT || o->kind == SG_AOT_ALIAS_OF_INPUT) &&
            m->in[o->base].written_rg) /* (a subclass input given back that requires grad in eager, its value
                                          the graph's input: an empty view of it written with grad) */
            npass = m->out_inner[k];
        if (jv == SG_NOVAL || g->vals[jv].kind != SG_V_TENSOR || !rg[jv])
            continue;
        /* (a mutated input given back whose sizes changed after the write, hidden from autograd: the graph
           gives its copy_, of the input's sizes; eager's gradient is of the output's and enters where the
           graph lays it out so, its history the input's, whose sizes autograd checks it against) */
        uint32_t jl = m->out[k].layout != SG_NOVAL ? sg__replay_mapped(r, m->out[k].layout) : SG_NOVAL;
        t->tan_sized[t->ntan] = jl != SG_NOVAL && g->vals[jl].kind == SG_V_TENSOR && rg[jl];
        if (t->tan_sized[t->ntan])
            jv = jl;
        char name[32];
        snprintf(name, sizeof name, "tangents_%u", t->ntan + 1);
        if (!(s = contiguous_placeholder(g, jv, name, &J->tangents[t->ntan]))) {
            tan_inner[t->ntan] = m->out_inner ? m->out_inner[k] : 0;
            npass = tan_inner[t->ntan] > npass ? tan_inner[t->ntan] : npass;
            outs[t->ntan] = jv;
            t->tan_out[t->ntan++] = m->nlead + k;
        }
    }
    if (!s)
        s = relaid_refusals(J, t->ntan);
    /* the backward, to the inputs that require grad, and to each synthetic base one of its inputs
       requires grad for (the graph reads their data as views of it, but where the storage took its
       base after a read of the input: the input itself): the gradient of its storage's positions */
    uint32_t nin = 0;
    for (uint32_t i = 0; i < m->nin && !s; i++) {
        uint32_t jv = m->in[i].tensor ? sg__replay_mapped(r, m->in[i].dph) : SG_NOVAL;
        if (jv != SG_NOVAL && rg[jv] && !m->in[i].cleared) { /* (cleared: its gradient None) */
            t->grad_in[nin] = i;
            ins[nin++] = jv;
        }
    }
    for (uint32_t b = 0; b < m->nbases && !s; b++) {
        uint32_t jv = sg__replay_mapped(r, m->bases[b].dph);
        if (jv != SG_NOVAL && rg[jv] && npass > 1) /* (PyTorch's AOT refuses aliased inputs mutated there) */
            s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: gradients of inputs on a storage other inputs view "
                        "(input %s), where the loss is a tensor subclass (a TwoTensor output requires grad)",
                        fw->vals[m->in[m->bases[b].member].dph].name);
        else if (jv != SG_NOVAL && rg[jv]) {
            t->grad_in[nin] = SG__BASE | b;
            ins[nin++] = jv;
        }
    }
    uint32_t *pouts = npass > 1 ? sg__malloc(ctx, (nout ? nout : 1) * sizeof *pouts) : outs;
    uint32_t *pseeds = npass > 1 ? sg__malloc(ctx, (nout ? nout : 1) * sizeof *pseeds) : J->tangents;
    if (!s && (!pouts || !pseeds))
        s = sg__nomem(ctx);
    sg__backward b = {.grads = J->grads};
    for (uint32_t p = 1; p <= npass && !s; p++) { /* (the gradients of backward p at J->grads[(p - 1) * nin ...]) */
        uint32_t np = 0;
        for (uint32_t k = 0; k < t->ntan; k++)
            if (npass == 1 || !tan_inner[k] || tan_inner[k] == p) {
                pouts[np] = outs[k];
                pseeds[np++] = J->tangents[k];
            }
        sg_free(b.writes);
        b = (sg__backward){.outs = pouts, .seeds = pseeds, .nout = np, .ins = ins, .nin = nin,
                           .grads = J->grads + (size_t)(p - 1) * nin, .nnodes = J->first};
        s = sg__graph_backward(g, &b);
        if (!s && npass > 1 && b.nwrites)
            s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: a custom Function's backward that writes (line %u), "
                        "where the loss is a tensor subclass (a TwoTensor output requires grad): eager's write "
                        "takes every inner tensor of its gradients", b.writes[0].line);
    }
    if (!s && npass > 1)
        s = subclass_refusals(J, g, rg, outs);
    uint8_t *two = NULL;
    if (!s && npass > 1)
        s = subclass_values(J, r, &two);
    if (!s && two)
        s = plain_copyslices(J, g, two);
    if (!s)
        s = gradient_outputs(J, nin, npass, two);
    for (uint32_t k = 0; k < t->ngrad && !s; k++) {
        /* a leaf whose layout the program changed (under no_grad or through .data: with grad, eager raises
           first): AccumulateGrad checks its gradient against the sizes the leaf had when its accumulator was
           made and then copies it into the leaf's layout now, or keeps it, as the gradient's own strides say */
        const sg__aot_input *in = t->grad_in[k] & SG__BASE ? NULL : &m->in[t->grad_in[k]];
        uint32_t sb = in ? in->base : t->grad_in[k] & ~SG__BASE;
        if (sb != SG_NOVAL && m->bases[sb].detached) /* (the storage's gradient would take that write for its own) */
            s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: gradients of inputs on a storage other inputs view, "
                        "written with grad through a detach of it (input %s)",
                        fw->vals[m->in[in ? t->grad_in[k] : m->bases[sb].member].dph].name);
        else if (in && in->leaf && in->metadata)
            s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: the gradient of a leaf whose layout the program "
                        "changes (input %s): AccumulateGrad lays it out by the leaf's layout now",
                        fw->vals[in->dph].name);
    }
    if (!s)
        s = backward_writes(J, r, &b);
    /* the forward's values, as the joint has them */
    if (!s && !(J->j2f = sg__malloc(ctx, (g->nvals ? g->nvals : 1) * sizeof *J->j2f)))
        s = sg__nomem(ctx);
    if (!s) {
        for (size_t v = 0; v < g->nvals; v++)
            J->j2f[v] = SG_NOVAL;
        for (uint32_t v = 0; v < fw->nvals; v++) {
            uint32_t jv = sg__replay_mapped(r, v);
            if (jv != SG_NOVAL && jv < g->nvals)
                J->j2f[jv] = v;
        }
        sg__replay_lead(r, J->grads, t->ngrad);
    }
    sg_free(b.writes);
    sg_free(two);
    if (pouts != outs)
        sg_free(pouts);
    if (pseeds != J->tangents)
        sg_free(pseeds);
    sg_free(tan_inner);
    sg_free(rg);
    sg_free(outs);
    sg_free(ins);
    return s;
}

static bool gives_needed(const sg__graph *g, const sg__gnode *nd, const uint8_t *need);

/* The default partition (PyTorch's default_partition): saved, the forward
 * values that the nodes of the backward part the gradients need read. */
static sg_status partition_default(jctx *J, const sg__graph *g, uint8_t *saved)
{
    uint8_t *need = sg__calloc(g->ctx, g->nvals ? g->nvals : 1, 1);
    if (!need)
        return sg__nomem(g->ctx);
    for (uint32_t k = 0; k < J->t->ngrad; k++)
        need[J->grads[k]] = 1;
    for (uint32_t i = J->first; i < g->nnodes; i++) /* (a backward's write of an input: its primal saved) */
        if (sg__aot_bw_copy(g, J->first, i))
            need[g->nodes[i].out] = 1;
    for (size_t i = g->nnodes; i-- > J->first;) {
        const sg__gnode *nd = &g->nodes[i];
        if ((nd->kind != SG_N_CALL && nd->kind != SG_N_COND) || nd->scope || nd->out == SG_NOVAL ||
            !gives_needed(g, nd, need))
            continue;
        for (uint32_t k = 0; k < nd->nargs; k++) {
            const sg__garg *a = &g->args[nd->args + k];
            uint32_t n = a->kind == SG_A_VALUE ? 1 : a->kind == SG_A_VALUES ? a->u.list.n : 0;
            for (uint32_t j = 0; j < n; j++) {
                uint32_t v = a->kind == SG_A_VALUE ? a->u.v : g->ids[a->u.list.off + j];
                if (g->vals[v].node != SG_NOVAL && g->vals[v].node < J->first)
                    saved[v] = 1;
                else
                    need[v] = 1;
            }
        }
    }
    sg_free(need);
    return SG_OK;
}

/* Does node nd give a value that is needed (itself, or an element of its
 * list) and not given already (saved: NULL, none is)? */
static bool gives_needed_unsaved(const sg__graph *g, const sg__gnode *nd, const uint8_t *need, const uint8_t *saved)
{
    if (nd->out == SG_NOVAL)
        return false;
    if (need[nd->out] && !(saved && saved[nd->out]))
        return true;
    const sg__gval *x = &g->vals[nd->out];
    for (uint32_t j = 0; x->kind == SG_V_LIST && j < x->u.list.n; j++) {
        uint32_t e = g->ids[x->u.list.off + j];
        if (need[e] && !(saved && saved[e]))
            return true;
    }
    return false;
}

static bool gives_needed(const sg__graph *g, const sg__gnode *nd, const uint8_t *need)
{
    return gives_needed_unsaved(g, nd, need, NULL);
}

/* need[rep[v]] set for every value v node nd reads (a value, each of a list's). */
static void need_args(const sg__graph *g, const sg__gnode *nd, const uint32_t *rep, uint8_t *need)
{
    for (uint32_t k = 0; k < nd->nargs; k++) {
        const sg__garg *a = &g->args[nd->args + k];
        uint32_t n = a->kind == SG_A_VALUE ? 1 : a->kind == SG_A_VALUES ? a->u.list.n : 0;
        for (uint32_t j = 0; j < n; j++)
            need[rep[a->kind == SG_A_VALUE ? a->u.v : g->ids[a->u.list.off + j]]] = 1;
    }
}

/* Node i of g recorded again into d, its value arguments through map
 * (after rep); map[its value] (a list's elements too) what d gives. */
static sg_status record_again(sg__graph *d, const sg__graph *g, const uint32_t *rep, uint32_t *map, uint32_t i)
{
    const sg__gnode *nd = &g->nodes[i];
    sg_ctx *ctx = g->ctx;
    sg__garg a[SG_SCHEMA_ARGS];
    sg_status s = SG_OK;
    for (uint32_t k = 0; k < nd->nargs && !s; k++) {
        const sg__garg *x = &g->args[nd->args + k];
        if (x->kind == SG_A_VALUE) {
            a[k] = *x;
            a[k].u.v = map[rep[x->u.v]];
            if (a[k].u.v == SG_NOVAL)
                s = sg__err(ctx, SG_EINTERNAL, "aot: a partitioned node reads a value it was not given (%s, "
                            "argument %u, a value of %s)", nd->schema->name, k,
                            g->vals[rep[x->u.v]].node == SG_NOVAL ? "no node"
                            : g->nodes[g->vals[rep[x->u.v]].node].kind == SG_N_CALL
                                ? g->nodes[g->vals[rep[x->u.v]].node].schema->name
                                : g->nodes[g->vals[rep[x->u.v]].node].kind == SG_N_COND ? "a cond" : "a placeholder");
        } else if (x->kind == SG_A_VALUES) {
            uint32_t ids[64], n = x->u.list.n;
            if (n > 64)
                return sg__err(ctx, SG_EUNSUPPORTED, "unsupported: a backward node over more than 64 tensors");
            for (uint32_t j = 0; j < n && !s; j++)
                if ((ids[j] = map[rep[g->ids[x->u.list.off + j]]]) == SG_NOVAL)
                    s = sg__err(ctx, SG_EINTERNAL, "aot: a partitioned node reads a value it was not given");
            a[k] = *x;
            if (!s)
                s = sg__graph_ids(d, &a[k].u.list.off, ids, n);
        } else {
            s = sg__aot_arg(d, g, x, &a[k]);
        }
    }
    uint32_t o;
    if (!s && !(s = sg__graph_record(d, nd->schema, a, nd->nargs, nd->line, NULL, &o))) {
        map[nd->out] = o;
        const sg__gval *x = &g->vals[nd->out], *y = &d->vals[o];
        for (uint32_t j = 0; x->kind == SG_V_LIST && y->kind == SG_V_LIST && j < x->u.list.n; j++)
            map[g->ids[x->u.list.off + j]] = d->ids[y->u.list.off + j];
    }
    return s;
}

/* Cond node i of g (the backward of a forward cond: autograd.c) recorded
 * again into d with its branches (a cond nested in one too), its operands
 * through map (after rep); map[its list and elements] what d gives. sto:
 * g's storages to d's. */
static sg_status record_cond_again(sg__graph *d, const sg__graph *g, const uint32_t *rep, uint32_t *map, uint32_t *sto,
                                   uint32_t i)
{
    sg_ctx *ctx = g->ctx;
    const sg__garg *a = &g->args[g->nodes[i].args];
    uint32_t nops = a[3].u.list.n, parent = d->cur, scope[2], list = g->nodes[i].out;
    uint32_t nel = g->vals[list].u.list.n;
    uint32_t *ops = sg__malloc(ctx, ((size_t)nops + nel + 1) * sizeof *ops), *els = ops ? ops + nops : NULL;
    sg__garg pred = a[0];
    sg_status s = ops ? SG_OK : sg__nomem(ctx);
    for (uint32_t k = 0; k < nops && !s; k++)
        if ((ops[k] = map[rep[g->ids[a[3].u.list.off + k]]]) == SG_NOVAL)
            s = sg__err(ctx, SG_EINTERNAL, "aot: a partitioned cond reads a value it was not given");
    if (!s && pred.kind == SG_A_VALUE && (pred.u.v = map[rep[pred.u.v]]) == SG_NOVAL)
        s = sg__err(ctx, SG_EINTERNAL, "aot: a partitioned cond's predicate was not given");
    for (int b = 0; b < 2 && !s; b++) {
        uint32_t br = a[1 + b].u.v;
        const sg__scope *sc = &g->scopes[br];
        if ((s = sg__graph_scope_open(d, &scope[b], sc->name)))
            break;
        for (uint32_t p = 0; p < sc->nphs && !s; p++) {
            uint32_t v = g->nodes[sc->phs[p]].out;
            if (!(s = sg__graph_value_like(d, g, v, sto, &map[v])))
                s = sg__graph_placeholder_of(d, map[v], g->vals[v].name, ops[p]);
        }
        for (uint32_t n = 0; n < g->nnodes && !s; n++) {
            const sg__gnode *nd = &g->nodes[n];
            if (nd->scope != br || nd->kind == SG_N_PLACEHOLDER)
                continue;
            if (nd->kind == SG_N_CALL) {
                s = record_again(d, g, rep, map, n);
            } else if (nd->kind == SG_N_ASSERT) {
                s = sg__graph_assert(d, nd->cond, nd->line);
            } else if (nd->kind == SG_N_OUTPUT) {
                uint32_t *o = sg__malloc(ctx, (nd->nargs ? nd->nargs : 1) * sizeof *o);
                if (!o) {
                    s = sg__nomem(ctx);
                    break;
                }
                for (uint32_t k = 0; k < nd->nargs; k++)
                    o[k] = map[g->args[nd->args + k].u.v];
                s = sg__graph_output(d, o, nd->nargs);
                sg_free(o);
            } else if (nd->kind == SG_N_COND) { /* a nested cond's backward (autograd.c's cond_mapped) */
                s = record_cond_again(d, g, rep, map, sto, n);
            } else {
                s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: a custom Function in a backward's cond");
            }
        }
        d->cur = parent;
    }
    for (uint32_t k = 0; k < nel && !s; k++)
        s = sg__graph_value_like(d, g, g->ids[g->vals[list].u.list.off + k], sto, &els[k]);
    uint32_t l = SG_NOVAL;
    if (!s)
        s = sg__graph_list(d, &l, els, nel);
    if (!s)
        s = sg__graph_cond(d, &pred, scope[0], scope[1], ops, nops, l, g->nodes[i].line);
    if (!s) {
        map[list] = l;
        for (uint32_t k = 0; k < nel; k++)
            map[g->ids[g->vals[list].u.list.off + k]] = els[k];
    }
    sg_free(ops);
    return s;
}

/* The forward's tail (1.13 computes these in its forward graph): the
 * saved values of the joint's backward part (unclaimed by the backward:
 * no tangent reaches them), from the forward values they read; tail's
 * output k is the k-th of them in the joint's order (xidx[v] = k). */
static sg_status extract_tail(jctx *J, const sg__graph *g, const uint32_t *rep, const uint8_t *saved, uint32_t *xidx)
{
    sg__aot_train *t = J->t;
    sg_ctx *ctx = g->ctx;
    size_t nv = g->nvals ? g->nvals : 1;
    uint32_t nx = 0;
    for (uint32_t v = 0; v < g->nvals; v++) {
        xidx[v] = SG_NOVAL;
        if (saved[v] && g->vals[v].node != SG_NOVAL && g->vals[v].node >= J->first)
            xidx[v] = nx++;
    }
    if (!nx)
        return SG_OK;
    uint8_t *need = sg__calloc(ctx, nv, 1);
    uint32_t *map = sg__malloc(ctx, nv * sizeof *map), *sto = sg__malloc(ctx, (g->nstorages ? g->nstorages : 1) * sizeof *sto);
    uint32_t *outs = sg__malloc(ctx, nx * sizeof *outs);
    sg_status s = need && map && sto && outs ? sg__graph_new(g->env, &t->tail) : sg__nomem(ctx);
    if (!s && !(t->tail_in = sg__malloc(ctx, nv * sizeof *t->tail_in)))
        s = sg__nomem(ctx);
    if (!s) {
        t->tail->reg = g->reg;
        for (size_t v = 0; v < g->nvals; v++) {
            map[v] = SG_NOVAL;
            need[v] = xidx[v] != SG_NOVAL;
        }
        for (uint32_t k = 0; k < g->nstorages; k++)
            sto[k] = SG_NOVAL;
        for (size_t i = g->nnodes; i-- > J->first;) { /* what the saved ones read */
            const sg__gnode *nd = &g->nodes[i];
            if (nd->kind == SG_N_CALL && rep[nd->out] == nd->out && gives_needed(g, nd, need))
                need_args(g, nd, rep, need);
        }
    }
    for (uint32_t v = 0; v < g->nvals && !s; v++) { /* its inputs: the forward values it reads */
        if (!need[v] || g->vals[v].node == SG_NOVAL || g->vals[v].node >= J->first)
            continue;
        if (J->j2f[v] == SG_NOVAL)
            s = sg__err(ctx, SG_EINTERNAL, "aot: the forward's tail reads a value that is not the forward's");
        else if (!(s = sg__graph_value_like(t->tail, g, v, sto, &map[v])) &&
                 !(s = sg__graph_placeholder(t->tail, map[v], g->vals[v].name)))
            t->tail_in[t->ntail_in++] = J->j2f[v];
    }
    for (size_t i = J->first; i < g->nnodes && !s; i++)
        if (g->nodes[i].kind == SG_N_CALL && rep[g->nodes[i].out] == g->nodes[i].out &&
            gives_needed(g, &g->nodes[i], need) && map[g->nodes[i].out] == SG_NOVAL)
            s = record_again(t->tail, g, rep, map, (uint32_t)i);
    for (uint32_t v = 0; v < g->nvals && !s; v++)
        if (xidx[v] != SG_NOVAL && (outs[xidx[v]] = map[v]) == SG_NOVAL)
            s = sg__err(ctx, SG_EINTERNAL, "aot: the forward's tail does not give a value the backward saves");
    if (!s)
        s = sg__graph_output(t->tail, outs, nx);
    sg_free(need);
    sg_free(map);
    sg_free(sto);
    sg_free(outs);
    return s;
}

/* The backward graph (PyTorch's _extract_graph_with_inputs_outputs over
 * the saved values and the tangents): the saved values the gradients need
 * and the tangents as its inputs; every node the gradients need, which
 * the saved values and tangents compute (nodes of the forward too: they
 * are recomputed), recorded again over them; the gradients its outputs.
 * rep[v]: the value v stands for (merged subexpressions); saved: per
 * value, left set for those the backward reads only (1.13 drops the
 * others from the forward's outputs). */
static sg_status extract_bw(jctx *J, const sg__graph *g, const uint32_t *rep, uint8_t *saved, const uint32_t *xidx)
{
    sg__aot_train *t = J->t;
    sg__graph *bw = t->bw;
    sg_ctx *ctx = g->ctx;
    size_t nv = g->nvals ? g->nvals : 1;
    uint32_t *map = sg__malloc(ctx, nv * sizeof *map);
    uint32_t *sto = sg__malloc(ctx, (g->nstorages ? g->nstorages : 1) * sizeof *sto);
    uint32_t *outs = sg__malloc(ctx, (t->ngrad ? t->ngrad : 1) * sizeof *outs);
    uint8_t *need = sg__calloc(ctx, nv, 1), *avail = sg__calloc(ctx, nv, 1);
    if (!map || !sto || !outs || !need || !avail || !(t->saved = sg__malloc(ctx, nv * sizeof *t->saved))) {
        sg_free(map);
        sg_free(sto);
        sg_free(outs);
        sg_free(need);
        sg_free(avail);
        return sg__nomem(ctx);
    }
    for (size_t v = 0; v < g->nvals; v++)
        map[v] = SG_NOVAL;
    for (uint32_t s = 0; s < g->nstorages; s++)
        sto[s] = SG_NOVAL;
    /* what the saved values and the tangents compute */
    for (uint32_t k = 0; k < t->ntan; k++)
        avail[J->tangents[k]] = 1;
    for (size_t i = 0; i < g->nnodes; i++) {
        const sg__gnode *nd = &g->nodes[i];
        if (nd->out == SG_NOVAL || rep[nd->out] != nd->out)
            continue;
        /* (a write in the forward part is an input mutation the forward applies: never the backward's) */
        bool ok = (nd->kind == SG_N_CALL &&
                   (i >= J->first || !(nd->schema->flags & (SG_OPF_MUTATES | SG_OPF_INPLACE | SG_OPF_OUT)))) ||
                  (nd->kind == SG_N_COND && i >= J->first && !nd->scope); /* (a backward's cond) */
        for (uint32_t k = 0; k < nd->nargs && ok; k++) {
            const sg__garg *a = &g->args[nd->args + k];
            uint32_t n = a->kind == SG_A_VALUE ? 1 : a->kind == SG_A_VALUES ? a->u.list.n : 0;
            for (uint32_t j = 0; j < n && ok; j++)
                ok = avail[rep[a->kind == SG_A_VALUE ? a->u.v : g->ids[a->u.list.off + j]]];
        }
        const sg__gval *x = &g->vals[nd->out];
        avail[nd->out] |= ok || saved[nd->out];
        for (uint32_t j = 0; x->kind == SG_V_LIST && j < x->u.list.n; j++) {
            uint32_t e = g->ids[x->u.list.off + j];
            avail[e] |= ok || saved[e];
        }
    }
    /* what the gradients need of it, from the last node back */
    sg_status s = SG_OK;
    for (uint32_t k = 0; k < t->ngrad; k++)
        need[rep[J->grads[k]]] = 1;
    for (uint32_t i = J->first; i < g->nnodes; i++) /* the backward's writes of inputs, at its end */
        if (sg__aot_bw_copy(g, J->first, i))
            need[g->nodes[i].out] = 1;
    size_t nrun = 0; /* the nodes it runs (at most): room at once, not grown by copies */
    for (size_t i = g->nnodes; i-- > 0 && !s;) {
        const sg__gnode *nd = &g->nodes[i];
        if ((nd->kind != SG_N_CALL && (nd->kind != SG_N_COND || nd->scope)) || rep[nd->out] != nd->out ||
            !gives_needed_unsaved(g, nd, need, saved))
            continue;
        nrun++;
        bool target = sg__aot_bw_copy(g, J->first, (uint32_t)i); /* (its primal: written, not read: 2) */
        for (uint32_t k = 0; k < nd->nargs && !s; k++) {
            const sg__garg *a = &g->args[nd->args + k];
            uint32_t n = a->kind == SG_A_VALUE ? 1 : a->kind == SG_A_VALUES ? a->u.list.n : 0;
            for (uint32_t j = 0; j < n; j++) {
                uint32_t v = rep[a->kind == SG_A_VALUE ? a->u.v : g->ids[a->u.list.off + j]];
                need[v] |= target && k == 0 ? 2 : 1;
            }
        }
    }
    for (uint32_t v = 0; v < g->nvals && !s; v++)
        if (need[v] && !avail[v])
            s = sg__err(ctx, SG_EINTERNAL, "aot: the backward needs a value that neither the saved values nor "
                                           "the tangents give");
    /* the last forward write of each storage: a saved tensor that one moves after it is made would be read
       written (an in-place call whose formula reads its self before the write, torch's saved original:
       e.permute(...).mul_(t) of an input e mutated in the graph) */
    uint32_t *lastw = s ? NULL : sg__malloc(ctx, ((size_t)g->nstorages + 1) * 2 * sizeof *lastw);
    uint32_t *cls = lastw ? lastw + g->nstorages + 1 : NULL; /* per storage: the caller's storage it is */
    if (!s && !lastw)
        s = sg__nomem(ctx);
    for (uint32_t st = 0; lastw && st < g->nstorages; st++) {
        lastw[st] = SG_NOVAL;
        cls[st] = st;
    }
    for (uint32_t v = 0; cls && v < g->nvals && v < J->first; v++) { /* an input on a synthetic base: the base's */
        uint32_t f = J->j2f[v], b = SG_NOVAL;
        for (uint32_t i = 0; f != SG_NOVAL && i < J->m->nin && b == SG_NOVAL; i++)
            if (J->m->in[i].tensor && J->m->in[i].dph == f)
                b = J->m->in[i].base;
        for (uint32_t w = 0; b != SG_NOVAL && g->vals[v].kind == SG_V_TENSOR && w < g->nvals; w++)
            if (J->j2f[w] == J->m->bases[b].dph && g->vals[w].kind == SG_V_TENSOR)
                cls[g->vals[v].u.t.storage] = g->vals[w].u.t.storage;
    }
    for (uint32_t i = 0; lastw && i < J->first && i < g->nnodes; i++) {
        uint32_t vals[8];
        if (g->nodes[i].kind != SG_N_CALL || !g->nodes[i].schema->written)
            continue;
        size_t nw = sg__graph_node_writes(g, i, vals, 8);
        for (size_t k = 0; k < nw; k++)
            if (g->vals[vals[k]].kind == SG_V_TENSOR)
                lastw[cls[g->vals[vals[k]].u.t.storage]] = i;
    }
    for (uint32_t v = 0; v < g->nvals && !s; v++) { /* the saved values it reads, in the joint's order */
        if (!saved[v] || !need[v]) {
            saved[v] = 0;
            continue;
        }
        uint32_t lw = g->vals[v].kind == SG_V_TENSOR ? lastw[cls[g->vals[v].u.t.storage]] : SG_NOVAL;
        if ((need[v] & 1) && xidx[v] == SG_NOVAL && lw != SG_NOVAL && lw > g->vals[v].node) {
            s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: the backward reads a tensor of the forward that a later "
                        "write in it changes (%s, line %u): an input mutated in the graph whose old values an "
                        "in-place call's derivative reads", g->nodes[lw].schema->name, g->nodes[lw].line);
            break;
        }
        uint32_t from = xidx[v] != SG_NOVAL ? SG__TAIL | xidx[v] : J->j2f[v];
        if (from == SG_NOVAL) {
            s = sg__err(ctx, SG_EINTERNAL, "aot: a saved value that is not the forward's");
            break;
        }
        const char *nm = g->vals[v].name && *g->vals[v].name ? g->vals[v].name : "saved";
        if (!(s = sg__graph_value_like(bw, g, v, sto, &map[v])) && !(s = sg__graph_placeholder(bw, map[v], nm)))
            t->saved[t->nsaved++] = from;
    }
    sg__graph_reserve(bw, nrun + t->nsaved + t->ntan + 1);
    for (uint32_t k = 0; k < t->ntan && !s; k++) {
        uint32_t v = J->tangents[k];
        if (!(s = sg__graph_value_like(bw, g, v, sto, &map[v])))
            s = sg__graph_placeholder(bw, map[v], g->vals[v].name);
    }
    for (size_t i = 0; i < g->nnodes && !s; i++) { /* the nodes it runs: needed, not saved */
        const sg__gnode *nd = &g->nodes[i];
        if ((nd->kind != SG_N_CALL && (nd->kind != SG_N_COND || nd->scope)) || rep[nd->out] != nd->out ||
            !gives_needed_unsaved(g, nd, need, saved) || map[nd->out] != SG_NOVAL)
            continue;
        s = nd->kind == SG_N_COND ? record_cond_again(bw, g, rep, map, sto, (uint32_t)i)
                                  : record_again(bw, g, rep, map, (uint32_t)i);
    }
    for (uint32_t k = 0; k < t->ngrad && !s; k++)
        outs[k] = map[rep[J->grads[k]]];
    if (!s)
        s = sg__graph_output(bw, outs, t->ngrad);
    sg_free(lastw);
    sg_free(map);
    sg_free(sto);
    sg_free(outs);
    sg_free(need);
    sg_free(avail);
    return s;
}

/* The partitioned forward (t->fw_keep), as 1.13's partitions extract it
 * from the joint (_extract_graph_with_inputs_outputs over the primals, for
 * the forward's outputs and the saved values, then dead code eliminated):
 * the calls those need, their subexpressions merged as rep says (min_cut's
 * CSE; the default partition merges none), the tail's nodes of the
 * backward part among them; beyond 1.13's, what has an effect (an input's
 * mutation kept in the graph, a cond, an assert) and what binds a symbol
 * (a guard may read it). A listing: the runtime runs the functional
 * forward and the tail, which compute the same values, and every call of
 * the program, so that a dead call raises where eager raises. */
static sg_status extract_fw(jctx *J, const sg__graph *g, const uint32_t *rep, const uint8_t *saved)
{
    sg_ctx *ctx = g->ctx;
    uint8_t *need = sg__calloc(ctx, g->nvals ? g->nvals : 1, 1);
    if (!need || !(J->t->fw_keep = sg__calloc(ctx, g->nnodes ? g->nnodes : 1, 1))) {
        sg_free(need);
        return sg__nomem(ctx);
    }
    const sg__gnode *on = &g->nodes[g->scopes[0].output];
    for (uint32_t k = J->t->ngrad; k < on->nargs; k++) /* the forward's outputs, after the gradients */
        if (g->args[on->args + k].kind == SG_A_VALUE)
            need[rep[g->args[on->args + k].u.v]] = 1;
    for (uint32_t v = 0; v < g->nvals; v++)
        need[v] |= saved[v];
    for (uint32_t i = (uint32_t)g->nnodes; i-- > 0;) {
        const sg__gnode *nd = &g->nodes[i];
        if (nd->scope != 0 || (nd->out != SG_NOVAL && rep[nd->out] != nd->out))
            continue; /* (a merged call: its users read the one it stands for) */
        bool keep = i < J->first ? (nd->kind != SG_N_PLACEHOLDER && nd->kind != SG_N_OUTPUT &&
                                    (sg__aot_effect(nd) || nd->nbinds || gives_needed(g, nd, need)))
                                 : nd->kind == SG_N_CALL && gives_needed(g, nd, need); /* (the tail's) */
        if (keep) {
            J->t->fw_keep[i] = 1;
            need_args(g, nd, rep, need);
        }
    }
    sg_free(need);
    return SG_OK;
}

sg_status sg__aot_train_build(const sg__graph *fw, const sg__aot_meta *m, bool min_cut, sg__aot_train **out)
{
    *out = NULL;
    sg_ctx *ctx = fw->ctx;
    sg__aot_train *t = sg__calloc(ctx, 1, sizeof *t);
    if (!t)
        return sg__nomem(ctx);
    jctx J = {.fw = fw, .m = m, .t = t};
    sg_status s = sg__graph_new(fw->env, &t->joint);
    if (!s) {
        t->joint->reg = fw->reg;
        sg__graph_reserve(t->joint, 3 * fw->nnodes); /* the forward and its backward (a call's derivative
                                                         is about two): room at once, not grown by copies */
        s = sg__graph_new(fw->env, &t->bw);
    }
    if (!s) {
        t->bw->reg = fw->reg;
        sg__replay_cbs cbs = {.end = joint_end};
        s = sg__graph_replay_cbs(fw, t->joint, &cbs, &J);
    }
    uint8_t *saved = NULL;
    uint32_t *rep = NULL;
    if (!s) {
        size_t n = t->joint->nvals ? t->joint->nvals : 1;
        saved = sg__calloc(ctx, n, 1);
        rep = sg__malloc(ctx, n * sizeof *rep);
        s = saved && rep ? SG_OK : sg__nomem(ctx);
    }
    if (!s && min_cut) {
        s = sg__aot_min_cut(t->joint, J.first, t->ngrad, rep, saved);
        if (s == SG_ELIMIT) /* every cut infinite (the backward reads a tensor the forward then writes, which
                               eager's version check refuses first): the default partition stands */
            min_cut = false, s = SG_OK;
    }
    if (!s && !min_cut) {
        for (size_t v = 0; v < t->joint->nvals; v++)
            rep[v] = (uint32_t)v;
        s = partition_default(&J, t->joint, saved);
    }
    uint32_t *xidx = s ? NULL : sg__malloc(ctx, (t->joint->nvals ? t->joint->nvals : 1) * sizeof *xidx);
    if (!s && !xidx)
        s = sg__nomem(ctx);
    if (!s)
        s = extract_tail(&J, t->joint, rep, saved, xidx);
    if (!s)
        s = extract_bw(&J, t->joint, rep, saved, xidx);
    if (!s)
        s = extract_fw(&J, t->joint, rep, saved);
    sg_free(xidx);
    sg_free(saved);
    sg_free(rep);
    sg_free(J.tangents);
    sg_free(J.grads);
    sg_free(J.j2f);
    if (s) {
        sg__aot_train_free(t);
        return s;
    }
    *out = t;
    return SG_OK;
}

const sg__graph *sg__aot_train_bw(const sg__aot_train *t)
{
    return t->bw;
}

sg_status sg__aot_train_fw_ops(const sg__aot_train *t, char **out)
{
    return sg__graph_ops_kept(t->joint, t->fw_keep, out);
}

bool sg__aot_train_bw_writes(const sg__aot_train *t, uint32_t i)
{
    return t && t->bw_written[i];
}

sg_status sg__aot_train_saved(const sg__aot_train *t, size_t *n, int64_t *bytes)
{
    const sg__graph *bw = t->bw;
    const sg__scope *root = &bw->scopes[0];
    *n = t->nsaved;
    *bytes = 0;
    for (uint32_t k = 0; k < t->nsaved; k++) { /* the saved placeholders' elements at the hints, times their size */
        uint32_t v = bw->nodes[root->phs[k]].out;
        if (bw->vals[v].kind != SG_V_TENSOR) { /* an int or a float: 8 bytes (PyTorch 2's sym_node_size) */
            *bytes += 8;
            continue;
        }
        const sg__fake_tensor *ft = &bw->vals[v].u.t;
        int64_t numel = 1, x;
        for (uint32_t d = 0; d < ft->ndim; d++) {
            const sg_expr *h;
            if (sg_env_hint(bw->env, &h, sg__graph_size(bw, v, d)) || !sg_expr_get_si(h, &x))
                return sg__err(bw->ctx, SG_EUNBOUND, "aot: a saved value's size has no hint");
            numel *= x;
        }
        int64_t size = ft->dtype == SG_FLOAT32 ? 4 : ft->dtype == SG_BOOL ? 1 : 8;
        *bytes += numel * size;
    }
    return SG_OK;
}

sg_status sg__aot_train_pin(const sg__aot_train *t, sg__xrun *fx)
{
    for (uint32_t k = 0; k < t->nsaved; k++)
        if (!(t->saved[k] & SG__TAIL))
            CHAIN(sg__xrun_pin(fx, t->saved[k]));
    for (uint32_t k = 0; k < t->ntail_in; k++)
        CHAIN(sg__xrun_pin(fx, t->tail_in[k]));
    return SG_OK;
}

uint32_t sg__aot_train_ntangents(const sg__aot_train *t)
{
    return t ? t->ntan : 0;
}

uint32_t sg__aot_train_inner(const sg__aot_train *t)
{
    uint32_t n = 1;
    for (uint32_t k = 0; t && k < t->ngrad; k++)
        n = t->grad_inner[k] + 1u > n ? t->grad_inner[k] + 1u : n;
    return n;
}

sg_status sg__aot_train_run(const sg__aot_train *t, sg__xrun *fx, const uint32_t *fw_outs, struct sg_tensor **grads,
                            uint32_t nin, uint32_t ninner, struct sg_tensor **bgrads, uint32_t nbases)
{
    sg_ctx *ctx = t->bw->ctx;
    for (uint32_t i = 0; i < nin * ninner; i++)
        grads[i] = NULL;
    for (uint32_t b = 0; b < nbases; b++)
        bgrads[b] = NULL;
    sg__xrun *bx = NULL, *tx = NULL;
    sg_status s = SG_OK;
    if (t->tail) { /* the forward's tail, over the forward's values */
        const sg__scope *troot = &t->tail->scopes[0];
        s = sg__xrun_new(ctx, t->tail, &tx);
        if (!s)
            s = sg__xrun_bind_all(tx, fx);
        for (uint32_t k = 0; k < t->ntail_in && !s; k++)
            s = sg__xrun_input(tx, t->tail->nodes[troot->phs[k]].out, sg__xrun_value(fx, t->tail_in[k]));
        if (!s)
            s = sg__xrun_rest(tx);
    }
    if (!s)
        s = sg__xrun_new(ctx, t->bw, &bx);
    if (!s)
        s = sg__xrun_bind_all(bx, fx);
    const sg__scope *root = &t->bw->scopes[0];
    for (uint32_t k = 0; k < t->nsaved && !s; k++) { /* the saved values, as the forward made them */
        const sg__xval *x;
        if (t->saved[k] & SG__TAIL) {
            const sg__gnode *to = &t->tail->nodes[t->tail->scopes[0].output];
            x = sg__xrun_value(tx, t->tail->args[to->args + (t->saved[k] & ~SG__TAIL)].u.v);
        } else {
            x = sg__xrun_value(fx, t->saved[k]);
        }
        s = sg__xrun_input(bx, t->bw->nodes[root->phs[k]].out, x);
    }
    for (uint32_t k = 0; k < t->ntan && !s; k++) { /* the tangents: ones (the loss sums every output) */
        const sg__xval *o = sg__xrun_value(fx, fw_outs[t->tan_out[k]]);
        sg__xtensor *one = NULL;
        if (o->kind != SG_XV_TENSOR) {
            s = sg__err(ctx, SG_EINTERNAL, "aot: an output that requires grad is gone");
            break;
        }
        uint32_t tv = t->bw->nodes[root->phs[t->nsaved + k]].out, nd = o->u.t->ndim;
        int64_t sizes[SG_MAX_DIMS];
        if (t->tan_sized[k]) /* (the output as laid out, not the graph's copy_ of it) */
            nd = t->bw->vals[tv].u.t.ndim;
        for (uint32_t d = 0; d < nd && !s; d++)
            if (t->tan_sized[k])
                s = sg__xrun_eval(fx, sg__graph_size(t->bw, tv, d), &sizes[d]);
            else
                sizes[d] = o->u.t->sizes[d];
        if (!s && !(s = sg__xt_new(ctx, &one, (sg_dtype)o->u.t->dtype, nd, sizes))) {
            for (int64_t i = 0; i < sg__xt_numel(one); i++)
                sg__xt_set_f(one, i, 1.0);
            sg__xval xv = {.kind = SG_XV_TENSOR, .u.t = one};
            s = sg__xrun_input(bx, t->bw->nodes[root->phs[t->nsaved + k]].out, &xv);
            sg__xt_unref(one);
        }
    }
    if (!s)
        s = sg__xrun_rest(bx);
    const sg__gnode *bo = &t->bw->nodes[root->output];
    for (uint32_t k = 0; k < t->ngrad && !s; k++) {
        const sg__xval *x = sg__xrun_value(bx, t->bw->args[bo->args + k].u.v);
        uint32_t to = t->grad_in[k];
        if (x->kind != SG_XV_TENSOR || (to & SG__BASE ? (to & ~SG__BASE) >= nbases || t->grad_inner[k]
                                                      : to >= nin || t->grad_inner[k] >= ninner)) {
            s = sg__err(ctx, SG_EINTERNAL, "aot: a gradient that is not a tensor");
            break;
        }
        sg__xt_ref(x->u.t);
        if (to & SG__BASE)
            bgrads[to & ~SG__BASE] = x->u.t;
        else
            grads[(size_t)t->grad_inner[k] * nin + to] = x->u.t;
    }
    if (s) {
        for (uint32_t i = 0; i < nin * ninner; i++) {
            sg__xt_unref(grads[i]);
            grads[i] = NULL;
        }
        for (uint32_t b = 0; b < nbases; b++) {
            sg__xt_unref(bgrads[b]);
            bgrads[b] = NULL;
        }
    }
    sg__xrun_free(bx);
    sg__xrun_free(tx);
    return s;
}

/* ---- the saved values' versions (PyTorch's SavedVariable check) ---- */

/* Which version counter each tensor value of src counts its writes on
 * (out[v]): the `.data` detach its chain of views and versions goes through
 * (a counter of its own), else its storage's (every view and version
 * shares it), numbered nvals + the storage. Values are numbered in order,
 * so what a value views or updates came before it: one pass. */
static void counters(const sg__graph *src, uint32_t *out)
{
    for (uint32_t v = 0; v < src->nvals; v++) {
        if (src->vals[v].kind != SG_V_TENSOR) {
            out[v] = SG_NOVAL;
            continue;
        }
        uint32_t node = src->vals[v].node, up = sg__graph_view_of(src, v);
        if (up == SG_NOVAL)
            up = sg__graph_updates(src, v);
        if (node != SG_NOVAL && (src->nodes[node].flags & SG_NODE_DATA) && src->nodes[node].kind == SG_N_CALL &&
            src->nodes[node].schema->op == SG_OP_detach)
            out[v] = v;
        else if (up != SG_NOVAL && up < v && out[up] != SG_NOVAL)
            out[v] = out[up];
        else
            out[v] = (uint32_t)src->nvals + src->vals[v].u.t.storage;
    }
}

static uint32_t branch_operand(const sg__graph *src, const sg__scope *sc, uint32_t x);

/* The tensors call node j writes (sg__graph_node_writes, at most max into
 * vals; the count); a call in a branch of a torch.cond of the root writes
 * the cond's operand where it writes a branch placeholder, a view or a
 * version of one: that operand stands for it (either branch: the
 * functional graph writes it whichever one a call takes, as a size
 * predicate the guards decide does). The writes' index (wnode) and its
 * readers take them so. */
static size_t writes_of(const sg__graph *src, uint32_t j, uint32_t *vals, size_t max)
{
    size_t n = sg__graph_node_writes(src, j, vals, max);
    uint32_t b = src->nodes[j].scope;
    if (b == 0 || src->scopes[b].parent != 0 || src->scopes[b].grads)
        return n; /* (the root's, a nested cond's, or a custom Function backward's: it runs in the backward) */
    for (size_t k = 0; k < n && k < max; k++) {
        uint32_t o = branch_operand(src, &src->scopes[b], vals[k]);
        if (o != SG_NOVAL && src->vals[o].kind == SG_V_TENSOR)
            vals[k] = o;
    }
    return n;
}

/* The data writes (calls that move a version counter, writes_of) in node
 * order under two kinds of key: each storage st written, and, at
 * nstorages + c, each version counter c (counters) moved, which a set_
 * keeps where the tensor goes to another storage. Key k's writes are
 * (*wnode)[(*wfirst)[k] .. (*wfirst)[k + 1]); both arrays the caller's to
 * free. Errors: SG_ENOMEM (nothing allocated then). */
static sg_status write_index(const sg__graph *src, const uint32_t *cnt, uint32_t **wfirst, uint32_t **wnode)
{
    size_t nkeys = (size_t)src->nstorages + src->nvals + src->nstorages, nwrites = 0;
    uint32_t *first = sg__calloc(src->ctx, nkeys + 1, sizeof *first), *node = NULL;
    if (!first)
        return sg__nomem(src->ctx);
    for (int pass = 0; pass < 2; pass++) { /* count, then place */
        for (uint32_t j = 0; j < src->nnodes; j++) {
            const sg__gnode *w = &src->nodes[j];
            uint32_t vals[8], keys[16];
            size_t nk = 0;
            if (w->kind != SG_N_CALL || !sg__op_bumps_version(w->schema))
                continue;
            size_t nw = writes_of(src, j, vals, 8);
            for (size_t q = 0; q < nw && q < 8; q++) {
                uint32_t k2[2] = {src->vals[vals[q]].u.t.storage, src->nstorages + cnt[vals[q]]};
                for (int t = 0; t < 2; t++) {
                    size_t x = 0;
                    while (x < nk && keys[x] != k2[t])
                        x++;
                    if (x == nk)
                        keys[nk++] = k2[t];
                }
            }
            for (size_t x = 0; x < nk; x++) {
                if (pass == 0)
                    first[keys[x] + 1]++, nwrites++;
                else
                    node[first[keys[x]]++] = j;
            }
        }
        if (pass == 0) {
            for (size_t k = 0; k < nkeys; k++)
                first[k + 1] += first[k];
            if (!(node = sg__malloc(src->ctx, (nwrites ? nwrites : 1) * sizeof *node))) {
                sg_free(first);
                return sg__nomem(src->ctx);
            }
        }
    }
    for (size_t k = nkeys; k > 0; k--) /* (placing moved each start to the next one's) */
        first[k] = first[k - 1];
    first[0] = 0;
    *wfirst = first;
    *wnode = node;
    return SG_OK;
}

/* The first write of key st (write_index's: a storage, or a version
 * counter) after node i: its index into wnode (the writes of each key in
 * node order, wnode[wfirst[st] .. wfirst[st + 1])), or wfirst[st + 1]
 * where there is none. A binary search. */
static uint32_t first_write_after(const uint32_t *wfirst, const uint32_t *wnode, uint32_t st, uint32_t i)
{
    uint32_t lo = wfirst[st], hi = wfirst[st + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (wnode[mid] > i)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Does a write after node i and before node end (SG_NOVAL: any) move
 * version counter c (write_index's key; not through .data), on whatever
 * storage? *at: that node. */
static bool written_after(const sg__graph *src, const uint32_t *wfirst, const uint32_t *wnode, uint32_t c, uint32_t i,
                          uint32_t end, uint32_t *at)
{
    uint32_t key = src->nstorages + c;
    for (uint32_t q = first_write_after(wfirst, wnode, key, i); q < wfirst[key + 1] && wnode[q] < end; q++)
        if (!(src->nodes[wnode[q]].flags & SG_NODE_DATA)) {
            *at = wnode[q];
            return true;
        }
    return false;
}

/* The storages of the tensors the backwards of src's custom Functions
 * write of what they lift (a saved input, a tensor on ctx): out[st] = 1 +
 * the Function's node. */
static void backward_written(const sg__graph *src, uint32_t *out)
{
    for (uint32_t i = 0; i < src->nnodes; i++) {
        const sg__gnode *nd = &src->nodes[i];
        if (nd->kind != SG_N_FUNCTION || nd->scope != 0)
            continue;
        const sg__scope *sc = &src->scopes[src->args[nd->args].u.v];
        for (uint32_t j = 0; j < sc->nwrites; j++) {
            uint32_t vals[8];
            size_t nw = sg__graph_node_writes(src, sc->writes[j], vals, 8);
            for (size_t q = 0; q < nw; q++)
                for (uint32_t p = 0; p < sc->nphs; p++)
                    if (sc->outer[p] != SG_NOVAL && src->vals[sc->outer[p]].kind == SG_V_TENSOR &&
                        src->vals[vals[q]].kind == SG_V_TENSOR &&
                        src->vals[vals[q]].u.t.storage == src->vals[src->nodes[sc->phs[p]].out].u.t.storage)
                        out[src->vals[sc->outer[p]].u.t.storage] = i + 1;
        }
    }
}

/* A tensor x that a backward formula reads (of node i: a call's saved
 * argument, another custom Function's lifted tensor) on a storage a custom
 * Function's backward writes (bwst, backward_written): eager reads it
 * written or not as the engine orders the two; refused. */
static sg_status read_bw_written(const sg__graph *src, const uint32_t *bwst, uint32_t x, uint32_t i)
{
    uint32_t f = bwst[src->vals[x].u.t.storage];
    if (!f || f - 1 == i)
        return SG_OK;
    return sg__err(src->ctx, SG_EUNSUPPORTED, "unsupported: a backward formula (line %u) reads a tensor the backward "
                   "of a custom Function (line %u) writes: eager's engine decides which runs first",
                   src->nodes[i].line, src->nodes[f - 1].line);
}

/* The index among subgraph sc's placeholders of the one whose tensor its
 * value x is (a view or a version of), or sc->nphs. */
static uint32_t scope_placeholder(const sg__graph *src, const sg__scope *sc, uint32_t x)
{
    for (uint32_t up; (up = sg__graph_view_of(src, x)) != SG_NOVAL || (up = sg__graph_updates(src, x)) != SG_NOVAL;)
        x = up;
    uint32_t k = 0;
    while (k < sc->nphs && sc->phs[k] != src->vals[x].node)
        k++;
    return k;
}

/* The value of the enclosing scope that branch scope sc's value x is (a
 * view or a version of) a placeholder of, or SG_NOVAL. */
static uint32_t branch_operand(const sg__graph *src, const sg__scope *sc, uint32_t x)
{
    uint32_t k = scope_placeholder(src, sc, x);
    return k < sc->nphs ? sc->outer[k] : SG_NOVAL;
}

/* The dimensions of a tensor of n of them (a mask of SG_MAX_DIMS bits). */
static uint64_t all_dims(uint32_t n)
{
    return n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
}

/* The int argument at schema position i of call node nd of src (positional,
 * or keyword by name; def where it was not given or is no constant int). */
static int64_t int_arg(const sg__graph *src, const sg__gnode *nd, int i, int64_t def)
{
    for (uint32_t k = 0; k < nd->nargs; k++) {
        const sg__garg *a = &src->args[nd->args + k];
        int at = a->kw ? sg__schema_arg(nd->schema, a->kw) : (int)k;
        int64_t x;
        if (at == i)
            return a->kind == SG_A_EXPR && sg_expr_get_si(a->u.e, &x) ? x : def;
    }
    return def;
}

/* The int-list argument at schema position i of call node nd (SG_A_EXPRS),
 * or NULL where it was not given (*n 0). */
static const sg__garg *list_arg(const sg__graph *src, const sg__gnode *nd, int i)
{
    for (uint32_t k = 0; k < nd->nargs; k++) {
        const sg__garg *a = &src->args[nd->args + k];
        int at = a->kw ? sg__schema_arg(nd->schema, a->kw) : (int)k;
        if (at == i)
            return a->kind == SG_A_EXPRS ? a : NULL;
    }
    return NULL;
}

/* Dimension d of a tensor of n wrapped (-1: the last), or -1 out of range. */
static int wrap_dim(int64_t d, uint32_t n)
{
    if (d < 0)
        d += n;
    return d >= 0 && d < (int64_t)n ? (int)d : -1;
}

/* Have tensor values a and b of src the same sizes and dtype? */
static bool same_layout_kind(const sg__graph *src, uint32_t a, uint32_t b)
{
    return src->vals[a].u.t.dtype == src->vals[b].u.t.dtype && sg__aot_same_sizes(src, a, b);
}

/* The dimensions at stride 0 of eager's gradient of argument k (value x)
 * of call node nd, which autograd records, from zo, those of the gradient
 * of its result o (where that gradient is one formula's, as the engine
 * hands a lone gradient on; the sum of two is a tensor of its own). What
 * PyTorch's formulas give: the gradient as it is (add and sub of self,
 * add of other at alpha 1, clone, alias, expand to the same sizes, copy_'s
 * source of the same sizes), a view
 * of it (t, transpose and permute its dimensions permuted; squeeze,
 * unsqueeze, view, reshape and flatten of a gradient that is the loss's
 * scalar expanded, every dimension at stride 0, the same), or, of sum, the
 * gradient expanded over the dimensions it reduced. Anything else (0) is a
 * tensor of its own, as is what validate_outputs sums to x's sizes or
 * converts to its dtype. */
static uint64_t grad_zero_dims(const sg__graph *src, const sg__gnode *nd, int k, uint32_t x, uint64_t zo)
{
    uint32_t o = nd->out;
    if (o == SG_NOVAL || src->vals[o].kind != SG_V_TENSOR || src->vals[x].kind != SG_V_TENSOR ||
        src->vals[o].u.t.dtype != src->vals[x].u.t.dtype)
        return 0;
    const sg__opinfo *info = sg__op_info(nd->schema->op);
    sg__op op = (nd->schema->flags & SG_OPF_INPLACE) && info && info->functional != SG_OP_NONE ? info->functional
                                                                                                  : nd->schema->op;
    uint32_t nx = src->vals[x].u.t.ndim, no = src->vals[o].u.t.ndim;
    bool same = same_layout_kind(src, o, x);
    switch (op) {
    case SG_OP_add_Tensor:
    case SG_OP_add_Scalar:
        if (k == 1 && op == SG_OP_add_Tensor) { /* (maybe_multiply: alpha 1 gives the gradient itself) */
            for (uint32_t j = 0; j < nd->nargs; j++) {
                const sg__garg *a = &src->args[nd->args + j];
                int at = a->kw ? sg__schema_arg(nd->schema, a->kw) : (int)j;
                if (at == 2 && !(a->kind == SG_A_FLOAT ? a->u.f == 1.0 : int_arg(src, nd, 2, 0) == 1))
                    return 0;
            }
        }
        return (k == 0 || op == SG_OP_add_Tensor) && same ? zo : 0;
    case SG_OP_sub_Tensor:
    case SG_OP_sub_Scalar:
    case SG_OP_clone:
    case SG_OP_alias:
    case SG_OP_expand:
        return k == 0 && same ? zo : 0;
    case SG_OP_copy: /* (copy_'s src: the gradient summed to its sizes, itself where they are the result's) */
        return k == 1 && same ? zo : 0;
    case SG_OP_t:
    case SG_OP_transpose_int: {
        if (k != 0 || nx != no)
            return 0;
        int d0 = op == SG_OP_t ? 0 : wrap_dim(int_arg(src, nd, 1, 0), nx);
        int d1 = op == SG_OP_t ? 1 : wrap_dim(int_arg(src, nd, 2, 1), nx);
        if (nx < 2 && op == SG_OP_t)
            return zo;
        if (d0 < 0 || d1 < 0)
            return 0;
        uint64_t b0 = (zo >> d0) & 1, b1 = (zo >> d1) & 1, r = zo & ~(((uint64_t)1 << d0) | ((uint64_t)1 << d1));
        return r | (b1 << d0) | (b0 << d1);
    }
    case SG_OP_permute: {
        const sg__garg *l = list_arg(src, nd, 1);
        if (k != 0 || !l || l->u.list.n != nx || nx != no)
            return 0;
        uint64_t r = 0;
        for (uint32_t j = 0; j < nx; j++) {
            int64_t p;
            int d = sg_expr_get_si(src->exprs[l->u.list.off + j], &p) ? wrap_dim(p, nx) : -1;
            if (d < 0)
                return 0;
            r |= ((zo >> j) & 1) << d;
        }
        return r;
    }
    case SG_OP_squeeze:
    case SG_OP_squeeze_dim:
    case SG_OP_unsqueeze:
    case SG_OP_view:
    case SG_OP_reshape:
    case SG_OP__unsafe_view:
    case SG_OP_flatten_using_ints:
        return k == 0 && no > 0 && zo == all_dims(no) ? all_dims(nx) : 0;
    case SG_OP_sum:
        return k == 0 && src->vals[nd->out].u.t.dtype == src->vals[x].u.t.dtype ? all_dims(nx) : 0;
    case SG_OP_sum_dim_IntList: {
        const sg__garg *l = list_arg(src, nd, 1);
        if (k != 0)
            return 0;
        if (!l || !l->u.list.n) /* (no dims: all of them) */
            return all_dims(nx);
        uint64_t red = 0;
        for (uint32_t j = 0; j < l->u.list.n; j++) {
            int64_t p;
            int d = sg_expr_get_si(src->exprs[l->u.list.off + j], &p) ? wrap_dim(p, nx) : -1;
            if (d < 0)
                return 0;
            red |= (uint64_t)1 << d;
        }
        if (int_arg(src, nd, 2, 0)) /* keepdim */
            return nx == no ? zo | red : 0;
        uint64_t r = red;
        for (uint32_t d = 0, j = 0; d < nx; d++) /* (the kept dimensions take o's in order) */
            if (!((red >> d) & 1))
                r |= ((zo >> j++) & 1) << d;
        return r;
    }
    default:
        return 0;
    }
}


/* The dimensions at stride 0 of eager's gradient of x, an element of the
 * tensor list of cat or stack node nd, from zo, those of the gradient of
 * its result: 1.13's cat_tensors_backward narrows the gradient along the
 * dimension (the same strides), stack_tensors_backward selects it there
 * (that dimension gone, the others' strides kept). A dtype other than the
 * result's is converted (a tensor of its own, 0), as grad_zero_dims says. */
static uint64_t list_grad_zero_dims(const sg__graph *src, const sg__gnode *nd, uint32_t x, uint64_t zo)
{
    uint32_t o = nd->out;
    if (!zo || o == SG_NOVAL || src->vals[o].kind != SG_V_TENSOR || src->vals[x].kind != SG_V_TENSOR ||
        src->vals[o].u.t.dtype != src->vals[x].u.t.dtype)
        return 0;
    uint32_t nx = src->vals[x].u.t.ndim, no = src->vals[o].u.t.ndim;
    int d = wrap_dim(int_arg(src, nd, 1, 0), no);
    if (d < 0)
        return 0;
    if (nd->schema->op == SG_OP_cat)
        return nx == no ? zo : 0; /* (a legacy empty [0] element takes zeros of its own) */
    if (nd->schema->op != SG_OP_stack || nx + 1 != no)
        return 0;
    uint64_t low = zo & (((uint64_t)1 << d) - 1);
    return low | ((zo >> (d + 1)) << d);
}

/* Custom Function node i, whose outputs the backward reaches (in the
 * engine's order: after the nodes made since, before those made earlier):
 * where its backward writes in place the gradient of an output that one
 * formula alone gave (needed[o] 1: the engine hands it on as the formula
 * made it) at stride 0 in a dimension above 1 (gz, grad_zero_dims: the
 * loss's scalar expanded, a sum's backward), eager's write raises the
 * internal-overlap error as the engine runs this backward, before what the
 * backward of an earlier node would raise (the joint's own check,
 * backward_writes, sees the same where no earlier error comes first). A
 * write through a view of that gradient: where every dimension of it is
 * at stride 0 and the view is no as_strided, of the view's sizes. */
static sg_status function_written_tangent(const sg__graph *src, uint32_t i, const uint8_t *needed, const uint64_t *gz)
{
    const sg__garg *a = &src->args[src->nodes[i].args];
    const sg__scope *sc = &src->scopes[a[0].u.v];
    if (sc->failed)
        return SG_OK;
    for (uint32_t w = 0; w < sc->nwrites; w++) {
        uint32_t vals[8];
        size_t nw = sg__graph_node_writes(src, sc->writes[w], vals, 8);
        for (size_t q = 0; q < nw && q < 8; q++) {
            uint32_t k = scope_placeholder(src, sc, vals[q]), j = 0;
            if (k == sc->nphs || sc->outer[k] != SG_NOVAL)
                continue; /* (no gradient it is given) */
            for (uint32_t p = 0; p < k; p++) /* (the gradients: its placeholders that lift nothing, in order) */
                j += sc->outer[p] == SG_NOVAL;
            if (j >= a[1].u.list.n)
                continue;
            uint32_t o = src->ids[a[1].u.list.off + j], x = vals[q];
            if (needed[o] != 1 || !gz[o])
                continue;
            bool view = false, strided = false; /* (the value written: the gradient, or a view of it) */
            for (uint32_t up; x != SG_NOVAL;) {
                if ((up = sg__graph_updates(src, x)) == SG_NOVAL && (up = sg__graph_view_of(src, x)) != SG_NOVAL) {
                    view = true;
                    strided |= src->nodes[src->vals[x].node].schema->op == SG_OP_as_strided;
                }
                x = up;
            }
            uint32_t line = src->nodes[sc->writes[w]].line;
            if (!view)
                CHAIN(zero_dims_check(src, o, gz[o], line));
            else if (!strided && gz[o] == all_dims(src->vals[o].u.t.ndim))
                CHAIN(zero_dims_check(src, vals[q], all_dims(src->vals[vals[q]].u.t.ndim), line));
        }
    }
    return SG_OK;
}

/* The checks of custom Function node i (graph.h SG_N_FUNCTION) whose
 * outputs the backward reaches: what it saved (save_for_backward) written
 * since is autograd's error; another tensor its backward reads (a ctx
 * attribute, read as the forward left it) written since is refused. */
static sg_status function_saved(const sg__graph *src, uint32_t i, const uint32_t *cnt, const uint32_t *wfirst,
                                const uint32_t *wnode, const uint32_t *bwst)
{
    const sg__garg *a = &src->args[src->nodes[i].args];
    const sg__scope *sc = &src->scopes[a[0].u.v];
    for (uint32_t p = 0; p < sc->nphs; p++) {
        uint32_t x = sc->outer[p], at;
        if (x == SG_NOVAL || src->vals[x].kind != SG_V_TENSOR)
            continue;
        CHAIN(read_bw_written(src, bwst, x, i));
        uint32_t st = src->vals[x].u.t.storage;
        for (uint32_t q = first_write_after(wfirst, wnode, st, i); q < wfirst[st + 1]; q++) {
            uint32_t vals[8];
            size_t nw = writes_of(src, wnode[q], vals, 8);
            for (size_t k = 0; k < nw && k < 8; k++)
                if (src->vals[vals[k]].u.t.storage == st &&
                    ((src->nodes[wnode[q]].flags & SG_NODE_DATA) || cnt[vals[k]] != cnt[x]))
                    return sg__err(src->ctx, SG_EUNSUPPORTED, "unsupported: a tensor %s reads (line %u) was written "
                                   "through .data by %s (line %u): PyTorch's backward reads the written values",
                                   sc->name, src->nodes[i].line, src->nodes[wnode[q]].schema->name,
                                   src->nodes[wnode[q]].line);
        }
        if (!written_after(src, wfirst, wnode, cnt[x], i, SG_NOVAL, &at))
            continue;
        bool saved = false;
        for (uint32_t j = 0; j < a[3].u.list.n; j++)
            saved |= src->ids[a[3].u.list.off + j] == x;
        if (saved)
            return sg__err(src->ctx, SG_EAUTOGRAD, "one of the variables needed for gradient computation has been "
                           "modified by an inplace operation: a tensor %s saved (line %u) was written by %s (line %u)",
                           sc->name, src->nodes[i].line, src->nodes[at].schema->name, src->nodes[at].line);
        return sg__err(src->ctx, SG_EUNSUPPORTED, "unsupported: a tensor %s reads (on ctx or closed over, line %u) was "
                       "written by %s (line %u): PyTorch's backward reads its values then", sc->name,
                       src->nodes[i].line, src->nodes[at].schema->name, src->nodes[at].line);
    }
    return SG_OK;
}

/* Is input placeholder value v a view of another input? Declared so
 * (sg_tracer_input_declare_view), where an input on its storage is; else
 * an earlier input on its storage makes it one. */
static bool input_view(const sg__graph *src, uint32_t v)
{
    if (src->vals[v].u.t.base != SG_NOVAL || src->vals[v].u.t.declared_view)
        return true;
    const sg__scope *root = &src->scopes[0];
    bool earlier = false, declared = false;
    for (uint32_t p = 0; p < root->nphs; p++) {
        uint32_t w = src->nodes[root->phs[p]].out;
        if (src->vals[w].kind != SG_V_TENSOR || src->vals[w].u.t.storage != src->vals[v].u.t.storage)
            continue;
        earlier |= w < v;
        declared |= src->vals[w].u.t.declared_view;
    }
    return earlier && !declared;
}

/* The elements a layout of value v reaches from its offset (0 where a
 * size is provably 0; 1 + the sum of (size - 1) * stride otherwise) into
 * *out; *unknown set where such a size 0 is not known either way. */
static sg_status layout_span(const sg__graph *src, uint32_t v, const sg_expr **out, bool *unknown)
{
    sg_ctx *ctx = src->ctx;
    const sg_expr *acc = ctx->one, *t;
    for (uint32_t d = 0; d < src->vals[v].u.t.ndim; d++) {
        const sg_expr *z = sg__graph_size(src, v, d), *eq;
        sg_truth k = SG_UNKNOWN;
        CHAIN(sg_expr_rel(ctx, &eq, SG_REL_EQ, z, ctx->zero));
        CHAIN(sg_env_known(src->env, &k, eq));
        if (k == SG_TRUE) {
            *out = ctx->zero;
            return SG_OK;
        }
        *unknown |= k == SG_UNKNOWN;
        CHAIN(sg_expr_sub(ctx, &t, z, ctx->one));
        CHAIN(sg_expr_mul(ctx, &t, t, sg__graph_stride(src, v, d)));
        CHAIN(sg_expr_add(ctx, &acc, acc, t));
    }
    *out = acc;
    return SG_OK;
}

static uint32_t version_now(const sg__graph *src, uint32_t b, uint32_t i);

/* Set_ node nd (node i) of view self (with grad: its base takes the
 * grad_fn, CopySlices): where the backward reaches it, PyTorch's
 * CopySlices makes its base's gradient (laid out as the base is when the
 * set_ runs: base_now, an as_strided_ of it before counts) a strided view
 * of self's new layout (nd's result) before it calls set_'s
 * NotImplemented, and setStorage raises where that layout reaches past the
 * base's elements: error shape. SG_OK where it provably fits; error
 * unsupported where the environment cannot tell. */
static sg_status set_view_fits(const sg__graph *src, const sg__gnode *nd, uint32_t i, uint32_t self, bool relayout)
{
    sg_ctx *ctx = src->ctx;
    uint32_t base = sg__graph_grad_base(src, self), v = nd->out;
    if (base == self && src->vals[self].u.t.declared_view) {
        /* (an input declared a view of another: its _base is the input on its storage declared none) */
        const sg__scope *root = &src->scopes[0];
        for (uint32_t p = 0; p < root->nphs && base == self; p++) {
            uint32_t w = src->nodes[root->phs[p]].out;
            if (src->vals[w].kind == SG_V_TENSOR && !src->vals[w].u.t.declared_view &&
                src->vals[w].u.t.storage == src->vals[self].u.t.storage)
                base = w;
        }
    }
    if (relayout && base != self) /* (as_strided_ of the base before the set_: its layout then) */
        base = version_now(src, base, i);
    /* (an input, or one declared a view of another: its base reaches its storage's end, as far as the
       storage's elements from 0, the view's offset too; not a version of it laid out anew in place) */
    bool input = src->vals[base].node != SG_NOVAL && src->nodes[src->vals[base].node].kind == SG_N_PLACEHOLDER;
    const sg_expr *need, *have, *off, *rel;
    bool unknown = false;
    sg_truth k = SG_UNKNOWN;
    CHAIN(layout_span(src, v, &need, &unknown));
    if (input)
        have = sg__graph_storage_numel(src, src->vals[base].u.t.storage);
    else
        CHAIN(layout_span(src, base, &have, &unknown));
    if (need != ctx->zero) {
        off = src->vals[v].u.t.offset;
        if (!input)
            CHAIN(sg_expr_sub(ctx, &off, off, src->vals[base].u.t.offset));
        CHAIN(sg_expr_add(ctx, &need, need, off));
    }
    CHAIN(sg_expr_rel(ctx, &rel, SG_REL_LE, need, have));
    CHAIN(sg_env_known(src->env, &k, rel));
    if (k == SG_TRUE)
        return SG_OK;
    if (k == SG_FALSE && !unknown)
        return sg__err(ctx, SG_ESHAPE, "setStorage: the backward of set_ (line %u) lays its base's gradient out as the "
                       "view's new layout, which reaches past the base's elements", nd->line);
    return sg__err(ctx, SG_EUNSUPPORTED, "unsupported: the backward of set_ of a view (line %u): whether its new "
                   "layout fits its base's gradient (PyTorch's setStorage check before set_'s NotImplemented) is "
                   "not known for every size", nd->line);
}

/* In-place call node nd with grad through view self, whose base is b
 * when it runs (base_now): PyTorch's CopySlices lays the base's gradient
 * out as b (new_empty_strided of b's sizes and strides: the elements from
 * b's offset its layout reaches) and takes self's layout of it at self's
 * offset from b's (as_strided), where setStorage raises when that reaches
 * past those elements: error shape, as the backward runs it. The views
 * view ops make of b stay inside it; only an as_strided on the way, or a
 * layout changed in place (relayout: set_, t_, as_strided_), may not. Where
 * b is an input, or a version of one that views another (its base is the
 * caller's tensor, the storage's elements from 0), the storage's size is
 * the bound. SG_OK where it fits; error unsupported where the environment
 * cannot tell, or where it fits at an offset before b's (as_strided's
 * other error). */
static sg_status copy_slices_fits(const sg__graph *src, const sg__gnode *nd, uint32_t self, uint32_t b, bool relayout)
{
    sg_ctx *ctx = src->ctx;
    bool strided = false;
    for (uint32_t v = self; v != SG_NOVAL && v != b; v = sg__graph_view_of(src, v)) {
        uint32_t n = src->vals[v].node;
        strided |= n != SG_NOVAL && src->nodes[n].kind == SG_N_CALL && src->nodes[n].schema->op == SG_OP_as_strided;
    }
    if (!strided && !relayout)
        return SG_OK;
    uint32_t root = sg__graph_tensor_of(src, b);
    bool ph = src->vals[root].node != SG_NOVAL && src->nodes[src->vals[root].node].kind == SG_N_PLACEHOLDER;
    bool input = ph && (root == b || input_view(src, root) || sg__graph_hidden_base(src, root) != SG_NOVAL);
    const sg_expr *need, *have, *off = src->vals[self].u.t.offset, *rel;
    bool unknown = false;
    sg_truth k = SG_UNKNOWN, before = SG_FALSE; /* (the offset lies before b's) */
    CHAIN(layout_span(src, self, &need, &unknown));
    if (need == ctx->zero)
        return SG_OK;
    if (input) {
        have = sg__graph_storage_numel(src, src->vals[b].u.t.storage);
    } else {
        CHAIN(layout_span(src, b, &have, &unknown));
        CHAIN(sg_expr_sub(ctx, &off, off, src->vals[b].u.t.offset));
        CHAIN(sg_expr_rel(ctx, &rel, SG_REL_LT, off, ctx->zero));
        CHAIN(sg_env_known(src->env, &before, rel));
    }
    /* (setStrided checks the bound before the offset's sign: an offset before b's that reaches
       past b's elements still raises setStorage's error; one that fits raises 'Tensor: invalid
       storage offset', which no error kind of the program format names) */
    CHAIN(sg_expr_add(ctx, &need, need, off));
    CHAIN(sg_expr_rel(ctx, &rel, SG_REL_LE, need, have));
    CHAIN(sg_env_known(src->env, &k, rel));
    if (k == SG_TRUE && before == SG_FALSE)
        return SG_OK;
    if (k == SG_TRUE && before == SG_TRUE && !unknown)
        return sg__err(ctx, SG_EUNSUPPORTED, "unsupported: the backward of %s through a view (line %u, CopySlices) "
                       "takes the view's layout of its base's gradient at an offset before the base's (PyTorch "
                       "raises 'Tensor: invalid storage offset', an error of no kind here)", nd->schema->name,
                       nd->line);
    if (k == SG_FALSE && !unknown)
        return sg__err(ctx, SG_ESHAPE, "setStorage: the backward of %s through a view (line %u, CopySlices) lays its "
                       "base's gradient out as the base and takes the view's layout of it, which reaches past the "
                       "base's elements", nd->schema->name, nd->line);
    return sg__err(ctx, SG_EUNSUPPORTED, "unsupported: the backward of %s through a view (line %u): whether the "
                   "view's layout fits its base's gradient (PyTorch's CopySlices) is not known for every size",
                   nd->schema->name, nd->line);
}

/* Does the chain of src value v (its views and in-place versions, up) pass
 * the result of a set_ with grad enabled of a view (set_view: a tensor that
 * keeps its view meta, so autograd's base of it is still its old base, on
 * another storage now)? */
static bool past_set_view(const sg__graph *src, uint32_t v)
{
    for (uint32_t u = v; u != SG_NOVAL && u < src->nvals && src->vals[u].kind == SG_V_TENSOR;) {
        uint32_t n = src->vals[u].node;
        if (n == SG_NOVAL || src->nodes[n].kind != SG_N_CALL)
            return false;
        const sg__gnode *nd = &src->nodes[n];
        if (nd->schema->op == SG_OP_set__source_Tensor) {
            uint32_t self = nd->nargs && src->args[nd->args].kind == SG_A_VALUE ? src->args[nd->args].u.v : SG_NOVAL;
            return (nd->flags & SG_NODE_GRAD) && self != SG_NOVAL && sg__graph_grad_base(src, self) != self;
        }
        uint32_t up = sg__graph_view_of(src, u);
        u = up != SG_NOVAL ? up : sg__graph_updates(src, u);
    }
    return false;
}

/* Is value v of src a view (of a view ...) of the tensor t is a version of,
 * one autograd sees (no detach or .data on the way)? */
static bool views(const sg__graph *src, uint32_t v, uint32_t t)
{
    uint32_t obj = sg__graph_tensor_of(src, t);
    /* (through the first versions: v.squeeze_() of a view v is a view of the same) */
    uint32_t u = sg__graph_tensor_of(src, v);
    for (uint32_t w = sg__graph_view_of(src, u); w != SG_NOVAL; w = sg__graph_view_of(src, u)) {
        const sg__gnode *un = &src->nodes[src->vals[u].node];
        if (un->schema->op == SG_OP_detach || (un->flags & SG_NODE_DATA)) /* (a history of its own) */
            return false;
        u = sg__graph_tensor_of(src, w);
        if (u == obj)
            return true;
    }
    /* (an input declared a view of the input t is, on its storage: sg_tracer_input_declare_view) */
    const sg__gnode *un = src->vals[u].node != SG_NOVAL ? &src->nodes[src->vals[u].node] : NULL;
    const sg__gnode *on = src->vals[obj].node != SG_NOVAL ? &src->nodes[src->vals[obj].node] : NULL;
    return un && on && un->kind == SG_N_PLACEHOLDER && on->kind == SG_N_PLACEHOLDER && u != obj &&
           src->vals[u].kind == SG_V_TENSOR && src->vals[u].u.t.declared_view && !src->vals[obj].u.t.declared_view &&
           src->vals[u].u.t.storage == src->vals[obj].u.t.storage;
}

/* Is value v, made before value out (a set_'s result), a view of self,
 * the set_'s self, on its storage? */
static bool view_before_set(const sg__graph *src, uint32_t v, uint32_t self, uint32_t out)
{
    return v < out && src->vals[v].kind == SG_V_TENSOR && v != self &&
           src->vals[v].u.t.storage == src->vals[self].u.t.storage && views(src, v, self);
}

/* Does some call of branch scope b read its placeholder k? */
static bool branch_reads(const sg__graph *src, uint32_t b, uint32_t k)
{
    const sg__scope *sc = &src->scopes[b];
    if (k >= sc->nphs)
        return false;
    uint32_t ph = src->nodes[sc->phs[k]].out;
    for (uint32_t i = 0; i < src->nnodes; i++) {
        const sg__gnode *nd = &src->nodes[i];
        if (nd->scope == b && (nd->kind == SG_N_CALL || nd->kind == SG_N_OUTPUT) &&
            sg__graph_node_reads(src, nd, ph))
            return true;
    }
    return false;
}

/* The flags autograd_storages gives each value after the ids */
enum { PAST_LEAF = 1u, HIDDEN_VIEW = 2u };

/* Value v, a tensor that requires grad, is one the backward reaches
 * (needed: the number of formulas that give it a gradient, 2 for two or
 * more); unless it is a leaf (a view made under no_grad among them),
 * which has no history a write of its storage joins, or a view of such a
 * leaf (its history stops there: t10.t() of a t10 made under no_grad is
 * TBackward over nothing), its storage's writes join its history (nsto, by
 * ast's keys; ast[nvals + v]: past a leaf, autograd_storages). */
static void mark_needed(const sg__graph *src, uint8_t *needed, uint8_t *nsto, const uint32_t *ast, uint32_t v)
{
    if (v == SG_NOVAL || src->vals[v].kind != SG_V_TENSOR || !sg__graph_rg_now(src, v))
        return;
    needed[v] += needed[v] < 2;
    /* (an input a write with grad through its view gave a history, written_rg, is no leaf since) */
    const sg__fake_tensor *t = &src->vals[v].u.t;
    nsto[ast[v]] |= (!t->leaf || t->written_rg) && !(ast[src->nvals + v] & PAST_LEAF);
}

/* The checks of torch.cond node i (made with grad) whose outputs the
 * backward reaches: its operands that require grad are needed; with a
 * tensor predicate PyTorch's CondAutogradOp saved every tensor operand, so
 * one written since is autograd's error; with a bool one eager called the
 * branch, whose formulas saved what they read: an operand written since is
 * refused (whether eager raises is the formulas' to say). */
static sg_status cond_saved(const sg__graph *src, uint32_t i, const uint32_t *cnt, const uint32_t *wfirst,
                            const uint32_t *wnode, const uint32_t *bwst, uint8_t *needed, uint8_t *nsto,
                            const uint32_t *ast)
{
    const sg__gnode *nd = &src->nodes[i];
    const sg__garg *a = &src->args[nd->args];
    const sg__gval *l = &src->vals[nd->out];
    bool need = false;
    for (uint32_t j = 0; l->kind == SG_V_LIST && j < l->u.list.n; j++)
        need |= needed[src->ids[l->u.list.off + j]] != 0;
    if (!need)
        return SG_OK;
    sg_truth known = SG_UNKNOWN; /* (a size predicate the guards decide: the branch every call takes) */
    if (a[0].kind == SG_A_EXPR)
        CHAIN(sg_env_known(src->env, &known, a[0].u.e));
    for (uint32_t k = 0; k < a[3].u.list.n; k++) {
        uint32_t x = src->ids[a[3].u.list.off + k], at;
        if (src->vals[x].kind != SG_V_TENSOR)
            continue;
        if (a[0].kind == SG_A_EXPR && !(known != SG_FALSE && branch_reads(src, a[1].u.v, k)) &&
            !(known != SG_TRUE && branch_reads(src, a[2].u.v, k)))
            continue; /* (eager's branch call: an operand no branch it may take reads is none of its backward's) */
        mark_needed(src, needed, nsto, ast, x);
        CHAIN(read_bw_written(src, bwst, x, i));
        uint32_t st = src->vals[x].u.t.storage;
        /* (a write through .data: a size predicate's branch call saved what its formulas read, whose new
           values its backward reads as well) */
        for (uint32_t q = first_write_after(wfirst, wnode, st, i); q < wfirst[st + 1]; q++) {
            uint32_t vals[8];
            size_t nw = writes_of(src, wnode[q], vals, 8);
            bool data = (src->nodes[wnode[q]].flags & SG_NODE_DATA) != 0; /* (.data: a counter of its own) */
            for (size_t k = 0; k < nw; k++)
                data |= src->vals[vals[k]].u.t.storage == st && cnt[vals[k]] != cnt[x];
            if (data) /* (no version moves: the backward reads the new values) */
                return sg__err(src->ctx, SG_EUNSUPPORTED, "unsupported: an operand torch.cond saved (line %u) was "
                               "written through .data by %s (line %u): PyTorch's backward reads the written values",
                               nd->line, src->nodes[wnode[q]].schema->name, src->nodes[wnode[q]].line);
        }
        if (!written_after(src, wfirst, wnode, cnt[x], i, SG_NOVAL, &at))
            continue;
        if (a[0].kind == SG_A_VALUE)
            return sg__err(src->ctx, SG_EAUTOGRAD, "one of the variables needed for gradient computation has been "
                           "modified by an inplace operation: an operand torch.cond saved (line %u) was written by "
                           "%s (line %u)", nd->line, src->nodes[at].schema->name, src->nodes[at].line);
        return sg__err(src->ctx, SG_EUNSUPPORTED, "unsupported: an operand of torch.cond (line %u), differentiated, "
                       "written since by %s (line %u): whether eager's backward raises is what the branch's "
                       "formulas saved", nd->line, src->nodes[at].schema->name, src->nodes[at].line);
    }
    return SG_OK;
}

/* The tensor arguments of a call node by schema position, found once for
 * the node and read as often as its checks ask. */
typedef struct bound_args {
    const sg__gnode *nd; /* the node they are of, or NULL */
    uint32_t v[SG_SCHEMA_ARGS]; /* a tensor value, or SG_NOVAL */
} bound_args;

/* Argument i (schema position) of call node nd of src: a tensor value, or
 * SG_NOVAL. b: nd's tensor arguments, found here first if b holds another's:
 * its positional arguments, then its keyword ones by name (an argument not
 * given is its default, never a tensor: the binding sg__graph_node_args
 * does, without making the defaults). */
static uint32_t arg_of(const sg__graph *src, bound_args *b, const sg__gnode *nd, int i)
{
    if (b->nd != nd) {
        const sg__schema *s = nd->schema;
        b->nd = nd;
        for (int k = 0; k < SG_SCHEMA_ARGS; k++)
            b->v[k] = SG_NOVAL;
        for (uint32_t k = 0; k < nd->nargs; k++) {
            const sg__garg *a = &src->args[nd->args + k];
            int at = a->kw ? sg__schema_arg(s, a->kw) : (int)k;
            if (at >= 0 && at < s->nargs && a->kind == SG_A_VALUE && src->vals[a->u.v].kind == SG_V_TENSOR)
                b->v[at] = a->u.v;
        }
    }
    return i >= 0 && i < SG_SCHEMA_ARGS ? b->v[i] : SG_NOVAL;
}

/* Argument i (schema position) of call node nd of src: a tensor value, or SG_NOVAL. */
static uint32_t arg_value(const sg__graph *src, const sg__gnode *nd, int i)
{
    bound_args b = {.nd = NULL};
    return arg_of(src, &b, nd, i);
}

/* Is call node nd (an out=) a factory's (no tensor argument but what it
 * writes) into a tensor that requires grad? */
static bool factory_out(const sg__graph *src, const sg__gnode *nd)
{
    bool inputs = false, rg = false;
    for (int k = 0; k < nd->schema->nargs; k++) {
        uint32_t v = arg_value(src, nd, k);
        if (v == SG_NOVAL)
            continue;
        if ((nd->schema->written >> k) & 1)
            rg |= src->vals[v].u.t.requires_grad;
        else
            inputs = true;
    }
    return rg && !inputs;
}

/* Does tensor value v of src repeat an element (a stride 0 of a size other
 * than 1, and no size 0: no element)? */
static bool repeats(const sg__graph *src, uint32_t v)
{
    bool rep = false;
    for (uint32_t d = 0; d < src->vals[v].u.t.ndim; d++) {
        if (sg__graph_size(src, v, d) == src->ctx->zero)
            return false;
        rep |= sg__graph_stride(src, v, d) == src->ctx->zero && sg__graph_size(src, v, d) != src->ctx->one;
    }
    return rep;
}

/* The autograd base of view v of src (the tensor its views root at, past
 * no detach) as it is when node i runs: its last version before it (where
 * relayout: some call changes a tensor's layout in place, set_ or t_; else
 * every version has the first one's); or SG_NOVAL where v is no view. */
/* The last version of the tensor b is a version of made before node i. */
static uint32_t version_now(const sg__graph *src, uint32_t b, uint32_t i)
{
    uint32_t obj = sg__graph_tensor_of(src, b), now = b;
    for (uint32_t w = b + 1; w < src->nvals && w < src->nodes[i].out; w++)
        if (src->vals[w].kind == SG_V_TENSOR && src->vals[w].node != SG_NOVAL && src->vals[w].node < i &&
            sg__graph_tensor_of(src, w) == obj)
            now = w;
    return now;
}

static uint32_t base_now(const sg__graph *src, uint32_t v, uint32_t i, bool relayout)
{
    uint32_t b = sg__graph_grad_base(src, v);
    if (b == v || !relayout)
        return b == v ? SG_NOVAL : b;
    return version_now(src, b, i);
}

/* Does autograd's edge to tensor value v of src, an argument of a call
 * when it required grad (rg: the call node's bit), take a gradient? It is
 * no view made under no_grad: such a view of what requires grad
 * (CreationMeta::NO_GRAD_MODE) requires grad with neither a grad_fn nor an
 * accumulator of its own, so a call that reads it computes no gradient for
 * it, and saves nothing only that gradient reads (the should_compute_output
 * guards of PyTorch's generated code). */
static bool gives_edge(const sg__graph *src, uint32_t v, bool rg)
{
    const sg__fake_tensor *t = &src->vals[v].u.t;
    const sg__gnode *n = src->vals[v].node == SG_NOVAL ? NULL : &src->nodes[src->vals[v].node];
    return rg &&
           !(t->leaf && n && n->kind == SG_N_CALL && (n->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)) &&
             (n->schema->flags & SG_OPF_VIEW) && !(n->schema->flags & (SG_OPF_INPLACE | SG_OPF_OUT)));
}

/* Does call node nd give a result autograd may differentiate (a floating
 * tensor, or a list with one, of an operator with derivatives; detach
 * gives none)? Only such a call asks its arguments for their grad_fn
 * (collect_next_edges): a comparison or a detach of a view whose version
 * moved raises nothing. */
static bool differentiable_call(const sg__graph *src, const sg__gnode *nd)
{
    const sg__opinfo *oi = sg__op_info(nd->schema->op);
    if ((oi && (oi->tags & SG_T_NODIFF)) || nd->out == SG_NOVAL || nd->schema->op == SG_OP_detach)
        return false;
    const sg__gval *x = &src->vals[nd->out];
    uint32_t n = x->kind == SG_V_LIST ? x->u.list.n : 1;
    for (uint32_t j = 0; j < n; j++) {
        const sg__gval *e = x->kind == SG_V_LIST ? &src->vals[src->ids[x->u.list.off + j]] : x;
        if (e->kind == SG_V_TENSOR && (e->u.t.dtype == SG_FLOAT64 || e->u.t.dtype == SG_FLOAT32))
            return true;
    }
    return false;
}

/* PyTorch's name of op's backward node, as "TBackward0" for "t" and
 * "AsStridedBackward0" for "as_strided" (the overload's number 0). */
static void backward_name(const char *op, char *out, size_t n)
{
    size_t k = 0;
    bool up = true;
    for (const char *p = op; *p && *p != '.' && k + 11 < n; p++) {
        if (*p == '_') {
            up = true;
            continue;
        }
        out[k++] = up && *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;
        up = false;
    }
    snprintf(out + k, n - k, "Backward0");
}

/* Autograd's error of a view node nd made under no_grad, written by w. */
static sg_status ngv_error(const sg__graph *src, const sg__gnode *w, const sg__gnode *nd)
{
    return sg__err(src->ctx, SG_EAUTOGRAD, "A view was created in no_grad mode and its base or another view of its "
                   "base has been modified inplace (%s, line %u; the view: %s, line %u)", w->schema->name, w->line,
                   nd->schema->name, nd->line);
}

/* View v that call node i made under no_grad (PyTorch's CreationMeta
 * NO_GRAD_MODE; see no_grad_views): autograd's error where a write
 * through its counter comes between it and its last read with grad
 * (lastobj) and its base requires grad. ngv: such views (of such views
 * too), v's flag set here: 1, or 2 where only a write with grad through an
 * alias after v was made raised its base's flag (rg_alias) and v is not
 * read with grad, so its views' reads decide. */
static sg_status no_grad_view(const sg__graph *src, uint32_t i, uint32_t v, const uint32_t *cnt, const uint32_t *wfirst,
                              const uint32_t *wnode, const uint32_t *lastobj, uint8_t *ngv)
{
    const sg__gnode *nd = &src->nodes[i];
    uint32_t self = arg_value(src, nd, 0);
    if (src->vals[v].kind != SG_V_TENSOR || self == SG_NOVAL)
        return SG_OK;
    uint32_t st = src->vals[v].u.t.storage;
    uint8_t dt = src->vals[v].u.t.dtype;
    if (dt != SG_FLOAT64 && dt != SG_FLOAT32) /* (no view meta of other dtypes) */
        return SG_OK;
    bool rg = src->vals[self].u.t.requires_grad || ngv[self];
    if (ngv[self] == 2 || (!ngv[self] && src->vals[self].u.t.rg_alias)) {
        /* (its flag raised after the view was made, by a write with grad through an alias of its storage
           (SG_NODE_GRAD: an argument required grad then): where that comes after the view's last read
           with grad, the base required none when it was read; a view of it not read with grad leaves
           that to its own views' reads (2), from the first of them made) */
        uint32_t made = i;
        for (uint32_t u = self; u != SG_NOVAL && ngv[u] == 2 && src->vals[u].node != SG_NOVAL; u = sg__graph_view_of(src, u))
            made = src->vals[u].node;
        if (lastobj[v] == SG_NOVAL) {
            ngv[v] = 2;
            return SG_OK;
        }
        uint32_t from = SG_NOVAL;
        for (uint32_t q = wfirst[st]; q < wfirst[st + 1] && from == SG_NOVAL; q++)
            if (wnode[q] > made && (src->nodes[wnode[q]].flags & SG_NODE_GRAD))
                from = wnode[q];
        rg = from != SG_NOVAL && from < lastobj[v];
    }
    ngv[v] = rg;
    for (uint32_t q = wfirst[st]; q < wfirst[st + 1]; q++) { /* a write with grad enabled in between */
        uint32_t j = wnode[q], vals[8];
        const sg__gnode *w = &src->nodes[j];
        if (j <= i || lastobj[v] == SG_NOVAL || j >= lastobj[v] || (w->flags & SG_NODE_DATA))
            continue;
        size_t nw = writes_of(src, j, vals, 8);
        /* (asked where the base requires grad when the view is read: since it was made, or by the write) */
        /* (the write makes it require grad where what it writes did not, but by a write through an alias
           (rg_alias: this one's, or one before): a.copy_(t), with grad (a write under no_grad whose result's
           flag a later write with grad raised made none); a tensor that required grad already, reached
           through a detach, is not the view's base) */
        bool base_rg = rg || ((w->flags & SG_NODE_GRAD) && w->out != SG_NOVAL &&
                              src->vals[w->out].kind == SG_V_TENSOR && src->vals[w->out].u.t.requires_grad && nw &&
                              (!src->vals[vals[0]].u.t.requires_grad || src->vals[vals[0]].u.t.rg_alias));
        for (size_t k = 0; k < nw && base_rg; k++)
            if (cnt[vals[k]] == cnt[v])
                return ngv_error(src, w, nd);
    }
    return SG_OK;
}

/* Does an operand of cond node nd require grad (now: or by a write with
 * grad through an alias since, sg__graph_rg_now; else its traced flag)? */
static bool cond_operand_rg(const sg__graph *src, const sg__gnode *nd, bool now)
{
    const sg__garg *ops = &src->args[nd->args + 3];
    for (uint32_t j = 0; j < ops->u.list.n; j++) {
        uint32_t x = src->ids[ops->u.list.off + j];
        if (src->vals[x].kind == SG_V_TENSOR && (now ? sg__graph_rg_now(src, x) : src->vals[x].u.t.requires_grad))
            return true;
    }
    return false;
}

/* Is cond node nd (made with grad enabled) PyTorch's CondAutogradOp: a
 * tensor predicate and an operand that requires grad (a bool over sizes is
 * eager torch.cond calling the branch, whose own calls ask)? */
static bool autograd_cond(const sg__graph *src, const sg__gnode *nd)
{
    return src->args[nd->args].kind == SG_A_VALUE && cond_operand_rg(src, nd, false);
}

/* Is write node n an in-place call whose self is a version of object o
 * (obj: each value's first version)? */
static bool writes_own(const sg__graph *src, const uint32_t *obj, uint32_t n, uint32_t o)
{
    const sg__gnode *w = &src->nodes[n];
    if (w->kind != SG_N_CALL || !(w->schema->flags & SG_OPF_INPLACE) || !w->nargs ||
        src->args[w->args].kind != SG_A_VALUE)
        return false;
    return obj[src->args[w->args].u.v] == o;
}

/* Does the autograd history of src value v reach an input that requires
 * grad: through calls autograd recorded (SG_NODE_GRAD, not hidden), their
 * tensor arguments (lists too), back to a placeholder of the root? *out.
 * A walk with a stack of its own (a long chain of calls is no recursion).
 * Errors: SG_ENOMEM. */
static sg_status history_reaches_input(const sg__graph *src, uint32_t v, bool *out)
{
    *out = false;
    uint8_t *seen = sg__calloc(src->ctx, src->nvals ? src->nvals : 1, 1);
    uint32_t *stack = sg__malloc(src->ctx, (src->nvals ? src->nvals : 1) * sizeof *stack), n = 0;
    if (!seen || !stack) {
        sg_free(seen);
        sg_free(stack);
        return sg__nomem(src->ctx);
    }
    if (v < src->nvals) {
        seen[v] = 1;
        stack[n++] = v;
    }
    while (n && !*out) {
        uint32_t u = stack[--n], node = src->vals[u].node;
        if (src->vals[u].kind != SG_V_TENSOR || node == SG_NOVAL)
            continue;
        const sg__gnode *nd = &src->nodes[node];
        if (nd->kind == SG_N_PLACEHOLDER) {
            *out = nd->scope == 0 && src->vals[u].u.t.requires_grad;
            continue;
        }
        if (nd->kind != SG_N_CALL || !(nd->flags & SG_NODE_GRAD) || (nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)))
            continue;
        for (uint32_t k = 0; k < nd->nargs; k++) { /* (each value pushed once: the stack holds nvals) */
            const sg__garg *a = &src->args[nd->args + k];
            uint32_t m = a->kind == SG_A_VALUES ? a->u.list.n : a->kind == SG_A_VALUE ? 1 : 0;
            for (uint32_t j = 0; j < m; j++) {
                uint32_t x = a->kind == SG_A_VALUES ? src->ids[a->u.list.off + j] : a->u.v;
                if (x < src->nvals && !seen[x]) {
                    seen[x] = 1;
                    stack[n++] = x;
                }
            }
        }
    }
    sg_free(seen);
    sg_free(stack);
    return SG_OK;
}

/* What autograd does of x after x.data = y (or x.set_(y) under no_grad),
 * x keeping its history while its values are y's, that ours cannot give,
 * refused by name: of other sizes, x a view whose counter moved since it
 * was made (a set_ under no_grad moves it), x whose history stops at a
 * view made under no_grad or reaches no input that requires grad, or a
 * leaf x.set_(y) under no_grad (a new AccumulateGrad); of
 * another layout, a view of x made before, read with grad after its
 * version counter moved since (its grad_fn made again from x's new
 * geometry); y's storage written, not by an
 * in-place call of x's own (nor in a cond branch), before x is read. last:
 * each value's last read with grad; obj, lastobj: each value's first
 * version, and the last read with grad of any version of that object; the
 * storages' writes in node order, wnode[wfirst[st] .. wfirst[st + 1]). */
static sg_status data_set_refusals(const sg__graph *src, const uint32_t *cnt, const uint32_t *ast,
                                   const uint32_t *last, const uint32_t *obj, const uint32_t *lastobj,
                                   const uint32_t *wfirst, const uint32_t *wnode)
{
    sg_ctx *ctx = src->ctx;
    sg_status s = SG_OK;
    for (uint32_t i = 0; i < src->nnodes && !s; i++) { /* x.data = y, then x or a view of it read with grad */
        const sg__gnode *nd = &src->nodes[i];
        uint32_t read = nd->out != SG_NOVAL ? lastobj[obj[nd->out]] : SG_NOVAL; /* (of x, any version, after) */
        if (read != SG_NOVAL && read <= i)
            read = SG_NOVAL;
        if (nd->kind != SG_N_CALL || nd->scope != 0 || !(nd->flags & (SG_NODE_DATA | SG_NODE_NO_GRAD)) ||
            nd->schema->op != SG_OP_set__source_Tensor || nd->out == SG_NOVAL)
            continue;
        uint32_t self = arg_value(src, nd, 0), y = arg_value(src, nd, 1);
        /* (a view of x made before, read with grad after its version counter moved since it was made, by
           a write of its storage or of x, which keeps that counter on y's storage: its grad_fn made again
           from x's new geometry) */
        bool view_read = false;
        for (uint32_t v = 0; v < nd->out && self != SG_NOVAL && !view_read; v++) {
            if (src->vals[v].kind != SG_V_TENSOR)
                continue;
            /* (a view whose autograd base is x read in a later version too: a write of it after the set_
               is its CopySlices over x, of x's new sizes) */
            uint32_t vlast = last[v], gb = sg__graph_grad_base(src, v);
            if (gb != SG_NOVAL && obj[gb] == obj[self] && lastobj[obj[v]] != SG_NOVAL &&
                (vlast == SG_NOVAL || lastobj[obj[v]] > vlast))
                vlast = lastobj[obj[v]];
            if (vlast == SG_NOVAL || vlast <= i || obj[v] == obj[self] ||
                src->vals[v].u.t.storage != src->vals[self].u.t.storage)
                continue;
            uint32_t made = src->vals[obj[v]].node, at; /* (its first version) */
            view_read = written_after(src, wfirst, wnode, cnt[v], made == SG_NOVAL ? 0 : made, vlast, &at);
        }
        if (read != SG_NOVAL || view_read) {
            /* (x.set_(y) under no_grad likewise: x keeps its grad_fn, its metadata y's) */
            const char *what = (nd->flags & SG_NODE_DATA) ? "x.data = y" : "x.set_(y) under no_grad";
            bool same = self != SG_NOVAL && y != SG_NOVAL && sg__aot_same_sizes(src, self, y);
            uint32_t made = self != SG_NOVAL ? src->vals[obj[self]].node : SG_NOVAL, at;
            /* (of other sizes, x read with grad after) */
            bool other = read != SG_NOVAL && !same && self != SG_NOVAL && src->vals[self].u.t.requires_grad;
            if (other && (ast[src->nvals + self] & (PAST_LEAF | HIDDEN_VIEW)))
                /* (x's history stops at a view made under no_grad, a leaf: no input's gradient goes through it,
                   so ours computes none there, where the engine checks the gradient's sizes and may raise) */
                s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: gradients through %s of other sizes (line %u) of a "
                            "tensor whose history stops at a view made under no_grad", what, nd->line);
            bool reaches = true;
            if (!s && other && !src->vals[self].u.t.leaf)
                s = history_reaches_input(src, self, &reaches);
            if (!s && !reaches)
                /* (the same where the history reaches no input further up: the engine still checks the
                   gradient's sizes at x's grad_fn) */
                s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: gradients through %s of other sizes (line %u) of a "
                            "tensor whose history reaches no input that requires grad", what, nd->line);
            if (!s && other && src->vals[self].u.t.leaf && !(nd->flags & SG_NODE_DATA))
                /* (a set_ gives a leaf an AccumulateGrad of its new sizes, beside the one a read before made:
                   both add into one .grad) */
                s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: gradients through x.set_(y) under no_grad of other "
                            "sizes (line %u) of a leaf: PyTorch makes its AccumulateGrad again, and the gradients of "
                            "the old and the new one add into one .grad", nd->line);
            /* (a caller's view is one too; a set_ under no_grad moves x's counter itself) */
            bool xview = self != SG_NOVAL && (src->vals[self].u.t.base != SG_NOVAL || src->vals[self].u.t.declared_view);
            bool moved = other && xview && written_after(src, wfirst, wnode, cnt[self], made == SG_NOVAL ? 0 : made, i, &at);
            if (other && xview && !moved && !(nd->flags & SG_NODE_DATA)) {
                moved = true;
                at = i;
            }
            if (!s && moved)
                /* (x a view whose counter moved before: autograd makes x's grad_fn again over its base, with
                   y's sizes, not x's old history: gradient sizes the functional graph does not give) */
                s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: gradients through %s of other sizes (line %u) of a "
                            "view x whose version counter moved since it was made (%s, line %u): autograd makes its "
                            "grad_fn again over its base", what, nd->line, src->nodes[at].schema->name,
                            src->nodes[at].line);
            if (!s && view_read && y != SG_NOVAL && !sg__aot_same_layout(src, self, y) && src->vals[self].u.t.requires_grad)
                s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: gradients through %s of other %s (line %u), where a "
                            "view of x made before is read after its version counter moved: autograd makes its "
                            "grad_fn again over x's new geometry", what, same ? "strides or offset" : "sizes",
                            nd->line);
            /* y's storage written before x (a version of it) is read: x's values move, its history
               (PyTorch's) does not; not by an in-place call of x's own (a new version of x: its write
               hidden or autograd's as any). Given where x, no view, keeps its sizes: functionalization
               makes it again as a write autograd does not see over its history (its fval hist) */
            uint32_t st = src->vals[nd->out].u.t.storage;
            bool kept = same && self != SG_NOVAL && src->vals[self].u.t.base == SG_NOVAL;
            for (uint32_t q = wfirst[st]; q < wfirst[st + 1] && !s && self != SG_NOVAL && read != SG_NOVAL && !kept &&
                                          src->vals[self].u.t.requires_grad; q++)
                if (wnode[q] > i && wnode[q] < read && !writes_own(src, obj, wnode[q], obj[nd->out]))
                    s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: gradients of x after %s (line %u) and a write of "
                                "y's storage (%s, line %u): x's values move, not its history", what, nd->line,
                                src->nodes[wnode[q]].schema->name, src->nodes[wnode[q]].line);
        }
    }
    return s;
}

/* What autograd raises of tensors whose history a hidden call kept (and
 * ours cannot give yet). x.data = y: data_set_refusals. A factory's out= (zeros, arange) into a
 * tensor that requires grad: its grad_fn raises when the backward reaches
 * it. PyTorch's views made in no_grad mode
 * (CreationMeta::NO_GRAD_MODE): a
 * floating view a call under no_grad made requires grad where its base
 * does, without a grad_fn; once a call writes through its version counter
 * (under no_grad too; not through .data, which moves no version), asking
 * for its grad_fn raises where its base requires grad (since the view was
 * made, or by that write: a.copy_(t) of a t that requires grad), which a
 * call with grad enabled that reads it does, and the loss where it is
 * returned.
 * cnt: the values' counters; the writes of each storage in node order,
 * wnode[wfirst[st] .. wfirst[st + 1]). */
static sg_status no_grad_views(const sg__graph *src, const uint32_t *cnt, const uint32_t *ast, const uint32_t *wfirst,
                               const uint32_t *wnode)
{
    sg_ctx *ctx = src->ctx;
    uint32_t *last = sg__malloc(ctx, (src->nvals ? src->nvals : 1) * sizeof *last); /* the last read with grad */
    uint8_t *ngv = sg__calloc(ctx, src->nvals ? src->nvals : 1, 1); /* such a view (of such a view too) */
    if (!last || !ngv) {
        sg_free(last);
        sg_free(ngv);
        return sg__nomem(ctx);
    }
    for (uint32_t v = 0; v < src->nvals; v++)
        last[v] = SG_NOVAL;
    for (uint32_t i = 0; i < src->nnodes; i++) {
        const sg__gnode *nd = &src->nodes[i];
        bool out = nd->kind == SG_N_OUTPUT && nd->scope == 0;
        if (nd->kind == SG_N_COND && nd->scope == 0 && !(nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)) &&
            autograd_cond(src, nd)) { /* CondAutogradOp's apply asks every operand (closures lifted) */
            const sg__garg *ops = &src->args[nd->args + 3];
            for (uint32_t j = 0; j < ops->u.list.n; j++)
                last[src->ids[ops->u.list.off + j]] = i;
            continue;
        }
        if (nd->kind == SG_N_FUNCTION && nd->scope == 0 && !(nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA))) {
            const sg__garg *ins = &src->args[nd->args + 2]; /* (a custom Function's apply asks its inputs) */
            for (uint32_t j = 0; ins->kind == SG_A_VALUES && j < ins->u.list.n; j++)
                last[src->ids[ins->u.list.off + j]] = i;
            continue;
        }
        if (!out && (nd->kind != SG_N_CALL || nd->scope != 0 || (nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA))))
            continue;
        if (!out && !differentiable_call(src, nd)) /* (a comparison asks no grad_fn of what it reads) */
            continue;
        for (uint32_t k = 0; k < nd->nargs; k++) {
            const sg__garg *a = &src->args[nd->args + k];
            /* (the loss reads what is returned that requires grad; no other output) */
            if (a->kind == SG_A_VALUE && (!out || (src->vals[a->u.v].kind == SG_V_TENSOR &&
                                                   sg__graph_rg_now(src, a->u.v))))
                last[a->u.v] = i;
            for (uint32_t j = 0; a->kind == SG_A_VALUES && j < a->u.list.n; j++) /* (cat's, stack's) */
                last[src->ids[a->u.list.off + j]] = i;
        }
    }
    sg_status s = SG_OK;
    /* the first version of each tensor object, and the last read with grad of any of an object's versions
       (an in-place view op gives a new one: x.as_strided_ under no_grad, x returned) */
    uint32_t *obj = s ? NULL : sg__malloc(ctx, (src->nvals ? src->nvals : 1) * sizeof *obj);
    uint32_t *lastobj = s ? NULL : sg__malloc(ctx, (src->nvals ? src->nvals : 1) * sizeof *lastobj);
    if (!s && (!obj || !lastobj))
        s = sg__nomem(ctx);
    for (uint32_t v = 0; obj && lastobj && v < src->nvals; v++) {
        uint32_t up = src->vals[v].kind == SG_V_TENSOR ? sg__graph_updates(src, v) : SG_NOVAL;
        obj[v] = up != SG_NOVAL && up < v ? obj[up] : v;
        lastobj[v] = SG_NOVAL;
        if (last[v] != SG_NOVAL && (lastobj[obj[v]] == SG_NOVAL || last[v] > lastobj[obj[v]]))
            lastobj[obj[v]] = last[v];
    }
    if (!s && obj)
        s = data_set_refusals(src, cnt, ast, last, obj, lastobj, wfirst, wnode);
    for (uint32_t i = 0; i < src->nnodes && !s; i++) {
        const sg__gnode *nd = &src->nodes[i];
        if (nd->kind != SG_N_CALL || nd->scope != 0 || (nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)) != SG_NODE_NO_GRAD ||
            !(nd->schema->flags & SG_OPF_VIEW) || (nd->schema->flags & SG_OPF_INPLACE) || nd->out == SG_NOVAL ||
            nd->schema->op == SG_OP_detach) /* (detach: no grad) */
            continue;
        const sg__gval *ov = &src->vals[nd->out];
        uint32_t nv = ov->kind == SG_V_LIST ? ov->u.list.n : 1; /* (unbind's views, each) */
        for (uint32_t e = 0; e < nv && !s; e++)
            s = no_grad_view(src, i, ov->kind == SG_V_LIST ? src->ids[ov->u.list.off + e] : nd->out, cnt, wfirst,
                             wnode, lastobj, ngv);
    }
    /* an output of unbind made with grad (CreationMeta::MULTI_OUTPUT_NODE), or a view made with grad
       of one (which inherits it), written through its counter since (under no_grad: with grad the
       write itself raises), then read with grad (its grad_fn asked); mov: such views (ngv's block) */
    uint8_t *mov = ngv;
    memset(mov, 0, src->nvals ? src->nvals : 1);
    for (uint32_t i = 0; i < src->nnodes && !s; i++) {
        const sg__gnode *nd = &src->nodes[i];
        if (nd->kind != SG_N_CALL || nd->scope != 0 || nd->out == SG_NOVAL || (nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)))
            continue;
        uint32_t self = arg_value(src, nd, 0);
        bool unbind = nd->schema->op == SG_OP_unbind_int && src->vals[nd->out].kind == SG_V_LIST;
        if (!unbind && (!(nd->schema->flags & SG_OPF_VIEW) || (nd->schema->flags & SG_OPF_INPLACE) ||
                        nd->schema->op == SG_OP_detach || self == SG_NOVAL || !mov[self]))
            continue;
        const sg__gval *l = &src->vals[nd->out];
        for (uint32_t k = 0; k < (l->kind == SG_V_LIST ? l->u.list.n : 1) && !s; k++) {
            uint32_t e = l->kind == SG_V_LIST ? src->ids[l->u.list.off + k] : nd->out, at;
            if (src->vals[e].kind != SG_V_TENSOR)
                continue;
            mov[e] = 1;
            if (!src->vals[e].u.t.requires_grad || lastobj[e] == SG_NOVAL ||
                !written_after(src, wfirst, wnode, cnt[e], i, lastobj[e], &at))
                continue;
            char fn[64]; /* (PyTorch's node name: the op's, camel-cased, as TBackward0 and UnbindBackward0) */
            backward_name(nd->schema->name, fn, sizeof fn);
            s = sg__err(ctx, SG_EAUTOGRAD, "Output %u of %s is a view and its base or another view of its base has "
                        "been modified inplace (%s, line %u). This view is the output of a function that returns "
                        "multiple views. Such functions do not allow the output views to be modified inplace.",
                        k, fn, src->nodes[at].schema->name, src->nodes[at].line);
        }
    }
    /* a view a custom Function returned (or a view of one: CreationMeta::IN_CUSTOM_FUNCTION) that
       requires grad, written through its counter (under no_grad: with grad the tracer refused the
       write), then read with grad (its grad_fn asked) */
    for (uint32_t u = 0; obj && u < src->nvals && !s; u++) {
        const sg__gval *x = &src->vals[u];
        uint32_t at;
        if (x->kind != SG_V_TENSOR || !x->u.t.custom_view || !x->u.t.requires_grad || x->node == SG_NOVAL ||
            !written_after(src, wfirst, wnode, cnt[u], x->node, SG_NOVAL, &at))
            continue;
        for (uint32_t w = u; w < src->nvals && !s; w++)
            if (obj[w] == u && last[w] != SG_NOVAL && last[w] > at)
                s = sg__err(ctx, SG_EAUTOGRAD, "Output of a custom Function is a view and its base or another view "
                            "of its base has been modified inplace (%s, line %u). This view was created inside a "
                            "custom Function (or because an input was returned as-is) and the autograd logic to "
                            "handle view+inplace would override the custom backward associated with the custom "
                            "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this "
                            "by cloning the output of the custom Function.", src->nodes[at].schema->name,
                            src->nodes[at].line);
    }
    sg_free(obj);
    sg_free(lastobj);
    sg_free(last);
    sg_free(ngv);
    return s;
}

/* Is src value v the first version of a view made under no_grad or
 * through .data (autograd gives it no grad_fn: a leaf where it requires
 * grad), an element of unbind's list among them? */
static bool hidden_view(const sg__graph *src, uint32_t v)
{
    const sg__gnode *nd = src->vals[v].node == SG_NOVAL ? NULL : &src->nodes[src->vals[v].node];
    bool made = nd && (nd->out == v || (nd->out != SG_NOVAL && src->vals[nd->out].kind == SG_V_LIST));
    return made && nd->kind == SG_N_CALL && (nd->schema->flags & SG_OPF_VIEW) &&
           !(nd->schema->flags & (SG_OPF_INPLACE | SG_OPF_OUT)) && (nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA));
}

/* Per tensor value of src, the storage as autograd's view rules see it
 * (ast): its storage, but a storage of its own (an id from
 * src->nstorages on) for what a set_ gave, its later versions and its
 * views: set_ (x.data = y too) puts a tensor on another's storage with no
 * view relation to what is there, so a write through it joins its own
 * history, not theirs (no CopySlices). So does a detach (x.data and
 * x.detach() alike: torch 1.13's is no view autograd sees, _is_view()
 * False): a write with grad through it or its views gives it a history
 * of its own and leaves x's grad_fn as it was. Ids of other values:
 * SG_NOVAL. *n: the number of ids. Then, at (*ast)[nvals + v] (one
 * allocation, its words taken as 2 * nvals more): PAST_LEAF where v's
 * chain of views passes a view made under no_grad or through .data that
 * requires grad (a leaf: no grad_fn, so the history of v stops there),
 * HIDDEN_VIEW where v is (a version of) such a view, 0 else; and at
 * (*ast)[2 * nvals + v] the id where only a set_ starts one (a detach
 * keeps what it views': functionalization's view family, whose writes
 * reach every tensor on it, hidden from the gradient through the
 * detach's link). */
static sg_status autograd_storages(const sg__graph *src, uint32_t **ast, uint32_t *n)
{
    *n = src->nstorages;
    if (!(*ast = sg__malloc(src->ctx, (src->nvals ? 3 * (size_t)src->nvals : 1) * sizeof **ast)))
        return sg__nomem(src->ctx);
    uint32_t *past = *ast + src->nvals, *fam = *ast + 2 * (size_t)src->nvals;
    for (uint32_t v = 0; v < src->nvals; v++) {
        const sg__gval *x = &src->vals[v];
        const sg__gnode *nd = x->node == SG_NOVAL ? NULL : &src->nodes[x->node];
        uint32_t up = x->kind == SG_V_TENSOR ? sg__graph_updates(src, v) : SG_NOVAL;
        uint32_t of = x->kind == SG_V_TENSOR && up == SG_NOVAL ? sg__graph_view_of(src, v) : SG_NOVAL;
        past[v] = 0;
        bool made = nd && nd->kind == SG_N_CALL && nd->out == v;
        if (x->kind != SG_V_TENSOR) {
            (*ast)[v] = fam[v] = SG_NOVAL;
        } else if (made && nd->schema->op == SG_OP_set__source_Tensor) {
            (*ast)[v] = fam[v] = (*n)++;
        } else if (up != SG_NOVAL && up < v) {
            (*ast)[v] = (*ast)[up], past[v] = past[up], fam[v] = fam[up];
        } else if (of != SG_NOVAL && of < v) {
            const sg__fake_tensor *ot = &src->vals[of].u.t;
            fam[v] = fam[of];
            (*ast)[v] = made && nd->schema->op == SG_OP_detach ? (*n)++ : (*ast)[of];
            past[v] = (past[of] & PAST_LEAF) |
                      ((past[of] & HIDDEN_VIEW) && ot->requires_grad && ot->leaf ? PAST_LEAF : 0u);
        } else {
            (*ast)[v] = fam[v] = x->u.t.storage;
        }
        if (x->kind == SG_V_TENSOR && hidden_view(src, v))
            past[v] |= HIDDEN_VIEW;
    }
    return SG_OK;
}

/* Does graph src hold what the saved-value check can refuse: a call that
 * writes (in place, out=, set_, a write through a view: every error below
 * is of a write since, or of such a call itself), a torch.cond or a custom
 * Function (their own checks)? Where it holds none, the check finds
 * nothing (no write moves a version; no backward writes) and is not run. */
static bool saved_check_needed(const sg__graph *src)
{
    for (uint32_t i = 0; i < src->nnodes; i++) {
        const sg__gnode *nd = &src->nodes[i];
        if (nd->kind == SG_N_COND || nd->kind == SG_N_FUNCTION ||
            (nd->kind == SG_N_CALL &&
             (nd->schema->written || (nd->schema->flags & (SG_OPF_MUTATES | SG_OPF_INPLACE | SG_OPF_OUT)))))
            return true;
    }
    return false;
}

/* A set_ with grad of an input (or its version) whose storage another
 * input shares, that input read after it: PyTorch makes that input's
 * grad_fn again from the set_'s (a view of it the caller made: its base's
 * version moved), NotImplemented, where the backward reaches the read; the
 * functional graph reads the other input as given. Refused by name. */
static sg_status set_shared_input(const sg__graph *src)
{
    for (uint32_t j = 0; j < src->nnodes; j++) {
        const sg__gnode *nd = &src->nodes[j];
        if (nd->kind != SG_N_CALL || nd->schema->op != SG_OP_set__source_Tensor || !(nd->flags & SG_NODE_GRAD))
            continue;
        uint32_t self = arg_value(src, nd, 0);
        uint32_t p = self == SG_NOVAL ? SG_NOVAL : sg__graph_grad_base(src, self);
        if (p == SG_NOVAL || src->vals[p].node == SG_NOVAL || src->nodes[src->vals[p].node].kind != SG_N_PLACEHOLDER)
            continue;
        for (uint32_t q = 0; q < src->nvals; q++) {
            const sg__gnode *qn = src->vals[q].node == SG_NOVAL ? NULL : &src->nodes[src->vals[q].node];
            if (q == p || !qn || qn->kind != SG_N_PLACEHOLDER || src->vals[q].kind != SG_V_TENSOR ||
                src->vals[q].u.t.storage != src->vals[p].u.t.storage || !src->vals[q].u.t.requires_grad)
                continue;
            for (uint32_t k = j + 1; k < src->nnodes; k++)
                if (sg__graph_node_reads(src, &src->nodes[k], q))
                    return sg__err(src->ctx, SG_EUNSUPPORTED, "unsupported: input %s, which shares the storage of "
                                   "input %s, read after a set_ with grad of it (line %u): PyTorch makes its "
                                   "grad_fn again from the set_'s", src->vals[q].name ? src->vals[q].name : "?",
                                   src->vals[p].name ? src->vals[p].name : "?", nd->line);
        }
    }
    return SG_OK;
}

/* A torch.cond made with grad over a size predicate the guards do not
 * decide, whose branches read other operands (eager calls the branch its
 * sizes pick: what its backward reaches, and the errors it meets, are that
 * branch's), or SG_NOVAL. */
static uint32_t undecided_cond(const sg__graph *src)
{
    for (uint32_t i = 0; i < src->nnodes; i++) {
        const sg__gnode *nd = &src->nodes[i];
        if (nd->kind != SG_N_COND || nd->scope != 0 || (nd->flags & SG_NODE_NO_GRAD))
            continue;
        const sg__garg *a = &src->args[nd->args];
        sg_truth known = SG_UNKNOWN;
        if (a[0].kind != SG_A_EXPR || sg_env_known(src->env, &known, a[0].u.e) || known != SG_UNKNOWN)
            continue;
        for (uint32_t k = 0; k < a[3].u.list.n; k++)
            if (branch_reads(src, a[1].u.v, k) != branch_reads(src, a[2].u.v, k))
                return i;
    }
    return SG_NOVAL;
}

/* The outputs that require grad whose sizes an in-place view op under
 * no_grad changed (t8.unsqueeze_(1) of t8 = t3 * 2): the loss's gradient,
 * of their sizes now, goes to the grad_fn of their first version, whose
 * validate_outputs sums it to that version's sizes, or raises where they do
 * not expand to them; the engine does so first of all, whether or not an
 * input's gradient is reached from there. SG_EAUTOGRAD where they provably
 * do not; SG_EUNSUPPORTED where the environment cannot tell. */
static sg_status relaid_outputs(const sg__graph *src)
{
    const sg__gnode *on = &src->nodes[src->scopes[0].output];
    sg_ctx *ctx = src->ctx;
    for (uint32_t k = 0; k < on->nargs; k++) {
        const sg__garg *a = &src->args[on->args + k];
        if (a->kind != SG_A_VALUE || src->vals[a->u.v].kind != SG_V_TENSOR || !sg__graph_rg_now(src, a->u.v))
            continue;
        uint32_t v = a->u.v, r = v, n;
        while ((n = src->vals[r].node) != SG_NOVAL && src->nodes[n].kind == SG_N_CALL &&
               (src->nodes[n].flags & SG_NODE_NO_GRAD) && sg__op_info(src->nodes[n].schema->op) &&
               (sg__op_info(src->nodes[n].schema->op)->tags & SG_T_INPLACE_VIEW) &&
               sg__graph_updates(src, r) != SG_NOVAL)
            r = sg__graph_updates(src, r);
        n = src->vals[r].node;
        if (r == v || n == SG_NOVAL || src->nodes[n].kind != SG_N_CALL || !(src->nodes[n].flags & SG_NODE_GRAD) ||
            (src->nodes[n].schema->flags & SG_OPF_VIEW) || sg__graph_grad_base(src, r) != r ||
            same_layout_kind(src, r, v))
            continue; /* (a view's grad_fn, a version's of a view too, is made again from its base: its gradient
                         passes as a view op's) */
        /* (expandable: r's sizes, aligned right, each v's or 1) */
        uint32_t nr = src->vals[r].u.t.ndim, nv = src->vals[v].u.t.ndim;
        sg_truth fits = nr <= nv ? SG_TRUE : SG_FALSE;
        for (uint32_t d = 1; d <= nr && fits != SG_FALSE && nr <= nv; d++) {
            const sg_expr *x = sg__graph_size(src, r, nr - d), *y = sg__graph_size(src, v, nv - d), *eq, *one;
            sg_truth same, unit;
            if (x == y || x == ctx->one)
                continue;
            CHAIN(sg_expr_rel(ctx, &eq, SG_REL_EQ, x, y));
            CHAIN(sg_env_known(src->env, &same, eq));
            CHAIN(sg_expr_rel(ctx, &one, SG_REL_EQ, x, ctx->one));
            CHAIN(sg_env_known(src->env, &unit, one));
            if (same == SG_FALSE && unit == SG_FALSE)
                fits = SG_FALSE;
            else if (same != SG_TRUE && unit != SG_TRUE)
                fits = SG_UNKNOWN;
        }
        if (fits == SG_FALSE)
            return sg__err(ctx, SG_EAUTOGRAD, "invalid gradient at index 0 - got a gradient of the sizes of an output "
                           "after %s under no_grad (line %u), not compatible with the tensor's before it (PyTorch's "
                           "validate_outputs)", src->nodes[src->vals[v].node].schema->name,
                           src->nodes[src->vals[v].node].line);
        if (fits == SG_UNKNOWN)
            return sg__err(ctx, SG_EUNSUPPORTED, "unsupported: an output whose sizes %s under no_grad changed (line "
                           "%u): whether the loss's gradient sums to its sizes before is not known for every size",
                           src->nodes[src->vals[v].node].schema->name, src->nodes[src->vals[v].node].line);
    }
    return SG_OK;
}

sg_status sg__aot_saved_check(const sg__graph *src)
{
    sg_ctx *ctx = src->ctx;
    const sg__scope *root = &src->scopes[0];
    if (root->output == SG_NOVAL || !saved_check_needed(src))
        return SG_OK;
    CHAIN(relaid_outputs(src));
    uint32_t *ast, nast;
    CHAIN(autograd_storages(src, &ast, &nast));
    const uint32_t *fam = ast + 2 * (size_t)src->nvals; /* (the unseen writes' families: a detach in them) */
    uint8_t *needed = sg__calloc(ctx, src->nvals ? src->nvals : 1, 1);
    /* per value: the dimensions at stride 0 of eager's gradient where one formula gave it (grad_zero_dims) */
    uint64_t *gz = sg__calloc(ctx, src->nvals ? src->nvals : 1, sizeof *gz);
    uint8_t *nsto = sg__calloc(ctx, nast ? nast : 1, 1); /* a needed value is on it (autograd's storages) */
    uint32_t *cnt = sg__malloc(ctx, (src->nvals ? src->nvals : 1) * sizeof *cnt);
    /* the data writes per storage, in node order: wfirst[st] .. wfirst[st + 1] of wnode (the node) */
    uint32_t *wfirst = NULL, *wnode = NULL; /* (write_index) */
    uint32_t *bwst = sg__calloc(ctx, (size_t)src->nstorages + 1, sizeof *bwst);
    if (!needed || !gz || !nsto || !cnt || !bwst) {
        sg_free(needed);
        sg_free(gz);
        sg_free(nsto);
        sg_free(ast);
        sg_free(cnt);
        sg_free(wfirst);
        sg_free(bwst);
        return sg__nomem(ctx);
    }
    counters(src, cnt);
    backward_written(src, bwst);
    bool relayout = false; /* (base_now) */
    for (uint32_t j = 0; j < src->nnodes && !relayout; j++) {
        const sg__gnode *w = &src->nodes[j];
        const sg__opinfo *oi = w->kind == SG_N_CALL ? sg__op_info(w->schema->op) : NULL;
        relayout = w->kind == SG_N_CALL && (w->schema->op == SG_OP_set__source_Tensor ||
                                            (oi && (oi->tags & SG_T_INPLACE_VIEW)));
    }
    if (write_index(src, cnt, &wfirst, &wnode)) {
        sg_free(needed);
        sg_free(gz);
        sg_free(nsto);
        sg_free(ast);
        sg_free(cnt);
        sg_free(bwst);
        return sg__nomem(ctx);
    }
    sg_status s = no_grad_views(src, cnt, ast, wfirst, wnode);
    const sg__gnode *on = &src->nodes[root->output];
    for (uint32_t k = 0; k < on->nargs; k++) { /* the loss: the outputs that require grad */
        const sg__garg *a = &src->args[on->args + k];
        if (a->kind == SG_A_VALUE && src->vals[a->u.v].kind == SG_V_TENSOR) { /* (sum's gradient: the scalar expanded) */
            mark_needed(src, needed, nsto, ast, a->u.v);
            gz[a->u.v] = all_dims(src->vals[a->u.v].u.t.ndim);
        }
    }
    uint32_t unseen = SG_NOVAL; /* a write with grad the history of what a set_ put on its storage does not see */
    bound_args na = {.nd = NULL}; /* the arguments of the node the checks read */
    /* the nodes the backward runs (from the loss through what requires grad), newest first; each
       one's saved values must not have been written since it ran */
    for (size_t i = src->nnodes; i-- > 0 && !s;) {
        const sg__gnode *nd = &src->nodes[i];
        if (nd->kind == SG_N_FUNCTION && nd->scope == 0) { /* its inputs are needed where its outputs are */
            const sg__garg *a = &src->args[nd->args];
            bool need = false;
            for (uint32_t j = 0; j < a[1].u.list.n; j++)
                need |= needed[src->ids[a[1].u.list.off + j]] != 0;
            for (uint32_t j = 0; j < a[2].u.list.n && need; j++)
                mark_needed(src, needed, nsto, ast, src->ids[a[2].u.list.off + j]);
            if (need)
                s = function_written_tangent(src, (uint32_t)i, needed, gz);
            if (need && !s)
                s = function_saved(src, (uint32_t)i, cnt, wfirst, wnode, bwst);
            const sg__scope *bsc = &src->scopes[src->args[nd->args].u.v];
            if (need && !s && bsc->failed) /* (its body's error, as eager's engine runs it: after what it unpacks) */
                s = sg__err(ctx, bsc->failed, "%s", bsc->failed_msg ? bsc->failed_msg : "a custom Function's backward "
                            "failed");
            continue;
        }
        if (nd->kind == SG_N_COND && nd->scope == 0 && !(nd->flags & SG_NODE_NO_GRAD)) {
            /* (no operand requiring grad, lifted closures among them: autograd records nothing of it) */
            if (cond_operand_rg(src, nd, true))
                s = cond_saved(src, (uint32_t)i, cnt, wfirst, wnode, bwst, needed, nsto, ast);
            continue;
        }
        if (nd->kind != SG_N_CALL || nd->scope != 0 || nd->out == SG_NOVAL)
            continue;
        if (src->vals[nd->out].kind == SG_V_LIST) { /* unbind: self is needed where an element is (it saves nothing) */
            const sg__gval *l = &src->vals[nd->out];
            bool need = false;
            for (uint32_t j = 0; j < l->u.list.n; j++)
                need |= needed[src->ids[l->u.list.off + j]] != 0;
            if (need && !(nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)))
                mark_needed(src, needed, nsto, ast, arg_of(src, &na, nd, 0));
            continue;
        }
        if (src->vals[nd->out].kind != SG_V_TENSOR)
            continue;
        bool hidden = (nd->flags & (SG_NODE_NO_GRAD | SG_NODE_DATA)) != 0, inplace = nd->schema->flags & SG_OPF_INPLACE;
        /* (an in-place write of data into a storage a needed value is on is part of its history: CopySlices) */
        const sg__opinfo *oi = sg__op_info(nd->schema->op);
        bool data = (inplace || (nd->schema->flags & SG_OPF_OUT)) && nd->schema->op != SG_OP_set__source_Tensor &&
                    !(oi && (oi->tags & SG_T_INPLACE_VIEW)); /* (an out= too: into a view of what is needed) */
        /* (a set_ of a view with grad: its NotImplemented grad_fn goes into its base's history, as any
           in-place call's through a view does: CopySlices) */
        uint32_t self0 = nd->schema->op == SG_OP_set__source_Tensor ? arg_of(src, &na, nd, 0) : SG_NOVAL;
        /* (the version an in-place call's write or metadata change came from: e.squeeze_(0) of a view e
           keeps it a view; not past a set_, but for the one of x.data = y, which keeps x's autograd meta,
           a view's among it) */
        uint32_t vself = sg__graph_first_version(src, self0, true);
        uint32_t vnode = vself != SG_NOVAL ? src->vals[vself].node : SG_NOVAL; /* (.data, detach: no view autograd sees) */
        bool set_view = self0 != SG_NOVAL && !hidden && vnode != SG_NOVAL &&
                        ((sg__graph_view_of(src, vself) != SG_NOVAL && src->nodes[vnode].kind == SG_N_CALL &&
                          src->nodes[vnode].schema->op != SG_OP_detach) ||
                         (src->nodes[vnode].kind == SG_N_PLACEHOLDER && input_view(src, vself))) &&
                        (nd->flags & SG_NODE_GRAD);
        /* (the base's storage: a view's after x.data = y is not the one x is on) */
        uint32_t sbase = set_view ? sg__graph_grad_base(src, vself) : SG_NOVAL;
        if (set_view && !nsto[ast[self0]] && !(sbase != SG_NOVAL && nsto[ast[sbase]]) &&
            !needed[nd->out]) { /* (read since with grad: reached) */
            /* (the base takes that grad_fn and requires grad: the trace's flags do not say it, nor
               whether the loss reaches it but through a program output on its storage) */
            bool out = false; /* (one that requires grad: a .data or detach of it carries no history) */
            bool any = false; /* (an output on the storage of self or of the base whose history may reach it) */
            for (uint32_t k = 0; k < on->nargs; k++) {
                const sg__garg *a = &src->args[on->args + k];
                if (a->kind != SG_A_VALUE || src->vals[a->u.v].kind != SG_V_TENSOR)
                    continue;
                uint32_t ost = src->vals[a->u.v].u.t.storage;
                bool on_self = ost == src->vals[self0].u.t.storage;
                /* (not a view made under no_grad, nor a view of one: its history stops there, at a leaf) */
                bool reach = sg__graph_rg_now(src, a->u.v) && gives_edge(src, a->u.v, true) &&
                             !(ast[src->nvals + a->u.v] & PAST_LEAF);
                any |= (on_self || (sbase != SG_NOVAL && ost == src->vals[sbase].u.t.storage)) && reach;
                out |= on_self && reach;
            }
            if (!any) /* (nothing the loss reads is on them, nor read with grad since: the backward cannot reach
                         the base's new grad_fn) */
                continue;
            if (!out) {
                s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: a set_ of a view with grad enabled (line %u), where "
                            "the base takes its grad_fn: whether the backward reaches it is not known here",
                            nd->line);
                break;
            }
        }
        if (self0 != SG_NOVAL && !hidden && !set_view && nsto[ast[self0]] && (nd->flags & SG_NODE_GRAD)) {
            /* (a view of self made before it, read with grad: its grad_fn made again from self's, the
               set_'s NotImplemented) */
            bool view_needed = false;
            for (uint32_t v = 0; v < nd->out && !view_needed; v++)
                view_needed = needed[v] && view_before_set(src, v, self0, nd->out);
            if (view_needed) {
                s = sg__err(ctx, SG_EAUTOGRAD, "derivative for set_ is not implemented (line %u: a view of what it "
                            "sets is read with grad)", nd->line);
                break;
            }
        }
        if (self0 != SG_NOVAL && !hidden && !set_view && (nd->flags & SG_NODE_GRAD) &&
            !src->vals[self0].u.t.requires_grad && src->vals[nd->out].u.t.requires_grad) {
            /* (self took a history by the set_ (its source requires grad): a view of it made before, which
               required none, requires grad since, its grad_fn made again from self's NotImplemented one;
               returned, the loss reaches it) */
            bool returned = false;
            for (uint32_t k = 0; k < on->nargs && !returned; k++) {
                uint32_t v = src->args[on->args + k].kind == SG_A_VALUE ? src->args[on->args + k].u.v : SG_NOVAL;
                returned = v != SG_NOVAL && view_before_set(src, v, self0, nd->out);
            }
            if (returned) {
                s = sg__err(ctx, SG_EAUTOGRAD, "derivative for set_ is not implemented (line %u: a view of what it "
                            "sets, made before it, is returned)", nd->line);
                break;
            }
        }
        if (data && !hidden && unseen == SG_NOVAL) {
            /* a write with grad into what a needed tensor of another view family (set_ put one on
               the other's storage) reads since: PyTorch's history of that tensor stays its own while
               its values move; functionalization's takes the write (refused after the checks: an
               error of autograd's that the backward meets comes first) */
            uint32_t st = src->vals[nd->out].u.t.storage;
            for (uint32_t v = 0; v < src->nvals && unseen == SG_NOVAL; v++)
                /* (or an input returned requiring no grad: the functional graph gives it the contents'
                   history, the write's, and would make a loss eager's has not) */
                if ((needed[v] || (src->vals[v].node != SG_NOVAL &&
                                   src->nodes[src->vals[v].node].kind == SG_N_PLACEHOLDER &&
                                   !sg__graph_rg_now(src, v) && sg__graph_node_reads(src, on, v))) &&
                    fam[v] != SG_NOVAL && src->vals[v].u.t.storage == st && fam[v] != fam[nd->out])
                    unseen = (uint32_t)i;
        }
        /* (a write with grad through a view: its CopySlices goes into the history of the view's autograd base,
           which a set_ may have put on another storage than the one written) */
        uint32_t wself = data && !hidden && (nd->flags & SG_NODE_GRAD) ? arg_of(src, &na, nd, 0) : SG_NOVAL;
        uint32_t wb = wself != SG_NOVAL ? base_now(src, wself, (uint32_t)i, relayout) : SG_NOVAL;
        if (wb != SG_NOVAL && src->vals[wb].u.t.storage != src->vals[wself].u.t.storage) {
            s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: %s (line %u) writes with grad through a view whose base a "
                        "set_ put on another storage since (its CopySlices goes into the base's history, laid out as "
                        "the set_ left it)", nd->schema->name, nd->line);
            break;
        }
        if (wself != SG_NOVAL && !set_view && past_set_view(src, wself)) {
            s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: %s (line %u) writes with grad through a view of a tensor "
                        "that a set_ with grad put on another storage while it stayed a view (its CopySlices goes "
                        "into its old base's history, whose storage is not the one written)", nd->schema->name,
                        nd->line);
            break;
        }
        if (!needed[nd->out] && !set_view &&
            !(data && src->vals[nd->out].u.t.requires_grad && nsto[ast[nd->out]]))
            continue;
        if (nd->schema->op == SG_OP_detach) /* (a view autograd does not see: no edge to what it views) */
            continue;
        for (int k = 0; k < nd->schema->nargs; k++) {
            uint32_t v = arg_of(src, &na, nd, k);
            /* (hidden: the tensor written keeps its history, in place or out=) */
            bool written = inplace ? k == 0 : (nd->schema->flags & SG_OPF_OUT) && ((nd->schema->written >> k) & 1);
            if (!hidden || written)
                mark_needed(src, needed, nsto, ast, v);
            /* (the gradient's layout, where a formula alone gives it: a hidden write hands it on as it is
               where it kept the sizes; else the engine's validate_outputs sums it to those its grad_fn
               took, or raises there, in the node that gave it) */
            uint64_t zo = needed[nd->out] == 1 ? gz[nd->out] : 0;
            if (v != SG_NOVAL && (!hidden || written))
                gz[v] = !hidden ? grad_zero_dims(src, nd, k, v, zo) : same_layout_kind(src, v, nd->out) ? zo : 0;
        }
        for (uint32_t k = 0; k < nd->nargs && !hidden; k++) { /* a list's tensors (cat, stack) */
            const sg__garg *a = &src->args[nd->args + k];
            uint64_t zo = needed[nd->out] == 1 ? gz[nd->out] : 0;
            for (uint32_t j = 0; a->kind == SG_A_VALUES && j < a->u.list.n; j++) {
                uint32_t v = src->ids[a->u.list.off + j];
                mark_needed(src, needed, nsto, ast, v);
                gz[v] = list_grad_zero_dims(src, nd, v, zo);
            }
        }
        if (hidden)
            continue;
        if (nd->schema->op == SG_OP_set__source_Tensor && (nd->flags & SG_NODE_GRAD)) {
            /* with grad enabled, on what required grad then (a flag a write with grad raised since
               does not count: that set_ got no grad_fn) */
            uint32_t vb = set_view ? sg__graph_grad_base(src, vself) : SG_NOVAL;
            for (uint32_t q = vb != SG_NOVAL ? wfirst[src->vals[vb].u.t.storage] : 0;
                 vb != SG_NOVAL && q < wfirst[src->vals[vb].u.t.storage + 1] && !s; q++)
                if (wnode[q] > i && (src->nodes[wnode[q]].flags & SG_NODE_GRAD))
                    /* (the view's grad_fn, made again from its base when read, goes through that write's
                       history first, whose own checks autograd's engine meets before set_'s) */
                    s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: %s (line %u) writes with grad the base of a view "
                                "that a set_ with grad enabled (line %u) put on another storage",
                                src->nodes[wnode[q]].schema->name, src->nodes[wnode[q]].line, nd->line);
            if (!s && (!set_view || !(s = set_view_fits(src, nd, (uint32_t)i, vself, relayout))))
                s = sg__err(ctx, SG_EAUTOGRAD, "derivative for set_ is not implemented (line %u)", nd->line);
            break;
        }
        if ((nd->schema->flags & SG_OPF_OUT) && factory_out(src, nd)) { /* (its grad_fn: NotImplemented) */
            s = sg__err(ctx, SG_EAUTOGRAD, "derivative for %s is not implemented (its out= into a tensor that "
                        "requires grad, line %u)", nd->schema->name, nd->line);
            break;
        }
        bool view_repeats = false; /* (CopySlices' last write, after the formula it wraps: below) */
        if (inplace && !s && !(oi && (oi->tags & SG_T_INPLACE_VIEW))) { /* (t_, unsqueeze_ of a view: its own
                                                                             backward over the view's, no CopySlices) */
            /* its backward (CopySlices, in PyTorch's order) copies the gradient into a tensor laid out as
               the view's base is when the call runs (a set_ may have given it a layout that repeats), takes
               the view's layout of it (as_strided: setStorage's error where that reaches past it), runs the
               call's own formula, and writes its gradient into that view, which may repeat elements */
            uint32_t self = arg_of(src, &na, nd, 0);
            uint32_t b = self != SG_NOVAL && (nd->flags & SG_NODE_GRAD) ? base_now(src, self, (uint32_t)i, relayout)
                                                                        : SG_NOVAL;
            view_repeats = self != SG_NOVAL && b != SG_NOVAL && repeats(src, self);
            if (self != SG_NOVAL && ((b == SG_NOVAL && repeats(src, self)) || (b != SG_NOVAL && repeats(src, b))))
                s = sg__err(ctx, SG_EALIASING, "unsupported operation: more than one element of the written-to "
                                               "tensor refers to a single memory location. Please clone() the "
                                               "tensor before performing the operation (the backward of %s, line "
                                               "%u)", nd->schema->name, nd->line);
            if (!s && b != SG_NOVAL)
                s = copy_slices_fits(src, nd, self, b, relayout);
            if (s)
                break;
        }
        const sg__opinfo *info = sg__op_info(nd->schema->op);
        if (info && inplace && info->functional != SG_OP_NONE) /* an in-place call: its functional row's formula */
            info = sg__op_info(info->functional);
        /* (a call autograd did not record has no grad_fn and saved nothing, though what it read or
           gave requires grad now: a write with grad since raised its flag) */
        uint16_t saves = info && (nd->flags & SG_NODE_GRAD) ? info->deriv->saves : 0;
        /* PyTorch saves what the gradients of the arguments that require grad read: an argument
           read for the others' gradients (x * y saves y for x's), or for its own (the row's own); of
           more than one tensor argument, only where that gradient's edge takes one (gives_edge), but
           for what more than one formula reads (the row's always: saved whatever edges there are) */
        int nt = 0, nrg = 0; /* the schema's tensor arguments; the node's whose edges took a gradient */
        for (int k = 0; k < nd->schema->nargs; k++) {
            uint32_t v = arg_of(src, &na, nd, k);
            nt += nd->schema->args[k].type.base == SG_TY_TENSOR && !nd->schema->args[k].type.list;
            nrg += v != SG_NOVAL && gives_edge(src, v, (nd->rg >> k) & 1);
        }
        for (int k = 0; k < 16 && saves && !s; k++) {
            uint32_t x = k == 15 ? ((saves & SG_DSAVE_RESULT) ? nd->out : SG_NOVAL)
                                 : ((saves >> k) & 1) && k < nd->schema->nargs ? arg_of(src, &na, nd, k) : SG_NOVAL;
            if (x == SG_NOVAL || (inplace && k == 0)) /* (an in-place call saves self before it writes it) */
                continue;
            bool own = (info->deriv->own >> k) & 1, edge = gives_edge(src, x, (nd->rg >> k) & 1);
            if (k != 15 && nt > 1 && !((info->deriv->always >> k) & 1) &&
                !(nrg - (edge ? 1 : 0) > 0 || (own && edge)))
                continue; /* read for no gradient that is wanted: not saved */
            if ((s = read_bw_written(src, bwst, x, (uint32_t)i)))
                break;
            uint32_t cx = cnt[x], st = src->vals[x].u.t.storage, lo;
            uint32_t self = inplace ? arg_of(src, &na, nd, 0) : SG_NOVAL;
            if (self != SG_NOVAL && k != 15 && cnt[self] == cx && sg__op_bumps_version(nd->schema)) {
                /* (the call writes what it saved: a.mul_(a)) */
                s = sg__err(ctx, SG_EAUTOGRAD, "one of the variables needed for gradient computation has been "
                                               "modified by an inplace operation: the argument %s saved (line %u) is "
                                               "the tensor it writes", nd->schema->name, nd->line);
                break;
            }
            if (self != SG_NOVAL && k != 15 && cnt[self] != cx && src->vals[self].u.t.storage == st &&
                sg__op_bumps_version(nd->schema)) {
                /* (it writes the storage of what it saved, whose counter is another: t.data = a; a.mul_(t)) */
                s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: the argument %s saved (line %u) shares its storage, "
                            "through .data, with the tensor it writes: PyTorch's backward reads the written values",
                            nd->schema->name, nd->line);
                break;
            }
            lo = first_write_after(wfirst, wnode, st, (uint32_t)i);
            if (lo < wfirst[st + 1]) {
                const sg__gnode *w = &src->nodes[wnode[lo]];
                uint32_t vals[8];
                size_t nw = writes_of(src, wnode[lo], vals, 8);
                for (size_t q = 0; q < nw && !s; q++) {
                    if (src->vals[vals[q]].u.t.storage != st)
                        continue;
                    if ((w->flags & SG_NODE_DATA) || cnt[vals[q]] != cx) /* through .data */
                        s = sg__err(ctx, SG_EUNSUPPORTED,
                                    "unsupported: the %s %s saved (line %u) was written through .data by %s (line "
                                    "%u): PyTorch's backward reads the written values",
                                    k == 15 ? "result" : "argument", nd->schema->name, nd->line, w->schema->name,
                                    w->line);
                    else
                        s = sg__err(ctx, SG_EAUTOGRAD,
                                    "one of the variables needed for gradient computation has been modified by an "
                                    "inplace operation: the %s %s saved (line %u) was written by %s (line %u)",
                                    k == 15 ? "result" : "argument", nd->schema->name, nd->line, w->schema->name,
                                    w->line);
                }
            }
            uint32_t at; /* (its counter moved by a write of another storage: a set_ kept it for the tensor it moved) */
            if (!s && written_after(src, wfirst, wnode, cx, (uint32_t)i, SG_NOVAL, &at))
                s = sg__err(ctx, SG_EAUTOGRAD,
                            "one of the variables needed for gradient computation has been modified by an inplace "
                            "operation: the %s %s saved (line %u) was written by %s (line %u), through a tensor a "
                            "set_ moved to another storage", k == 15 ? "result" : "argument", nd->schema->name,
                            nd->line, src->nodes[at].schema->name, src->nodes[at].line);
        }
        if (!s && view_repeats)
            s = sg__err(ctx, SG_EALIASING, "unsupported operation: more than one element of the written-to tensor "
                        "refers to a single memory location. Please clone() the tensor before performing the "
                        "operation (the backward of %s, line %u)", nd->schema->name, nd->line);
    }
    if (!s && unseen != SG_NOVAL)
        s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: %s (line %u) writes with grad enabled what a tensor set_ put "
                    "on the same storage (no view of it) reads since: PyTorch's history of that tensor does not "
                    "take the write", src->nodes[unseen].schema->name, src->nodes[unseen].line);
    if (!s) /* (after the errors the backward meets: a set_ it reaches raises first) */
        s = set_shared_input(src);
    uint32_t und = s == SG_EAUTOGRAD || s == SG_EALIASING || s == SG_ESHAPE ? undecided_cond(src) : SG_NOVAL;
    if (und != SG_NOVAL) { /* (the error is the branch's that the call's sizes pick) */
        char msg[240];
        snprintf(msg, sizeof msg, "%s", sg_ctx_last_error_msg(ctx));
        s = sg__err(ctx, SG_EUNSUPPORTED, "unsupported: whether eager's backward raises depends on the branch the "
                    "torch.cond of line %u takes (a predicate over sizes the guards do not decide, its branches "
                    "reading other operands): %s", src->nodes[und].line, msg);
    }
    sg_free(needed);
    sg_free(gz);
    sg_free(nsto);
    sg_free(ast);
    sg_free(cnt);
    sg_free(wfirst);
    sg_free(wnode);
    sg_free(bwst);
    return s;
}
