/* Recording a call into a graph (record.c): the one entry the tracer and
 * every pass use, so that a shape rule is written once and every pass gets
 * symbolic shapes from it; and the replay of a graph through a per-node
 * hook (replay.c), the form of a pass: it reads graph G and writes G'. */
#ifndef SG_GRAPH_RECORD_H
#define SG_GRAPH_RECORD_H

#include "graph/meta.h"
#include "graph/ops.h"

/* Where a graph's arrays stood (sg__graph_mark), to drop what a failed
 * call added (sg__graph_restore). */
typedef struct sg__graph_mark {
    size_t nvals, nnodes, nargs, nexprs, nids;
    uint32_t nstorages;
} sg__graph_mark;

static inline sg__graph_mark sg__graph_mark_take(const sg__graph *g)
{
    return (sg__graph_mark){g->nvals, g->nnodes, g->nargs, g->nexprs, g->nids, g->nstorages};
}

static inline void sg__graph_restore(sg__graph *g, sg__graph_mark k)
{
    sg__scope *sc = &g->scopes[g->cur]; /* the writing calls dropped (recorded in the current scope) */
    while (sc->nwrites && sc->writes[sc->nwrites - 1] >= k.nnodes)
        sc->nwrites--;
    g->nvals = k.nvals;
    g->nnodes = k.nnodes;
    g->nargs = k.nargs;
    g->nexprs = k.nexprs;
    g->nids = k.nids;
    g->nstorages = k.nstorages;
}

/* What a recorder adds around the shape rule (the tracer: autograd's checks
 * and flags, the symbols a scope binds); every hook may be NULL. */
typedef struct sg__record_hooks {
    void *ud;
    /* after binding, before the rule; an error refuses the call */
    sg_status (*before)(void *ud, sg__mcall *m);
    /* the rule made value v (not yet recorded) */
    void (*made)(void *ud, const sg__mcall *m, uint32_t v);
    /* node v's node was recorded; an error refuses the call */
    sg_status (*recorded)(void *ud, const sg__mcall *m, uint32_t v);
} sg__record_hooks;

/* Schema argument i of m not given: its default as the schema writes it
 * (None for an optional argument without one). Errors: SG_EINVAL (a
 * required argument missing), SG_EINTERNAL (a default we cannot read),
 * SG_ENOMEM. */
sg_status sg__record_default(sg__mcall *m, int i);

/* f: m's call rebound to schema s (another operator's rule run for m: the
 * functional overload of an out=, the view of a scatter), each argument of
 * s taken from m's of the same name, its default where m has none.
 * Errors: those of sg__record_default. */
sg_status sg__record_rebind(const sg__mcall *m, const sg__schema *s, sg__mcall *f);
/* m takes what a rule run on f (sg__record_rebind) recorded for the node:
 * the unbacked symbols it binds and the runtime asserts it made. */
void sg__record_adopt(sg__mcall *m, const sg__mcall *f);

/* Run the shape rule of m's operator (its row's RULE) over the arguments
 * bound in m (m->a, m->given) and record the node, its unbacked bindings and
 * the runtime asserts the rule made, in m->g's current scope. k is where the
 * graph stood before binding: on an error everything since is dropped.
 * A rule that gives an argument back (x.contiguous() of a contiguous x)
 * records nothing. *out: the value given. Errors: SG_EUNSUPPORTED (no rule:
 * an operator outside the table, or a composite), and the rule's own
 * (SG_ESHAPE, SG_EDATADEP, SG_ENOMEM ...). */
sg_status sg__record_bound(sg__mcall *m, sg__graph_mark k, const sg__record_hooks *h, unsigned line, uint32_t *out);

/* Record a call of s (a schema of the table) into g (asking g's environment) with graph
 * arguments (values of g's current scope and constants, as a node holds
 * them: positional first, then keyword ones with kw set to the schema's
 * name): bind them (defaults filled in), then sg__record_bound. The entry a
 * pass uses. Errors: SG_EINVAL (arguments that do not bind: too many, a
 * name twice or unknown, a value not of g), and those of sg__record_bound. */
sg_status sg__graph_record(sg__graph *g, const sg__schema *s, const sg__garg *args, size_t nargs, unsigned line,
                           const sg__record_hooks *h, uint32_t *out);

/* ---- the rules' results remembered (rule_memo.c) ----
 *
 * sg__record_bound and sg__graph_record ask the graph's memo before running
 * a rule of the families it keeps (pointwise, view, reduce, matmul, like,
 * unsafe_view; no call that writes an argument; no eager graph): a hit
 * makes the value the rule would make, from a result kept under the same
 * environment mark for the same schema and arguments (each tensor's
 * layout, dtype, grad flags, whether it has a _base, its storage's size and
 * which arguments share a storage). See rule_memo.c. */

#define SG__RMEMO_KEY_WORDS 48

/* A call's key: what the rule's result is a function of. */
typedef struct sg__rmemo_key {
    uint64_t hash;
    sg_env_mark mark;
    uint8_t nkey;
    bool tensor[SG_SCHEMA_ARGS];             /* per schema position: a tensor argument */
    const sg_expr *numel[SG_SCHEMA_ARGS];    /* its storage's size then */
    uint64_t key[SG__RMEMO_KEY_WORDS];
} sg__rmemo_key;

/* Whether the results of rule, schema s's, may be remembered: the
 * families above, s writing no argument (the registry sets s->memo). */
bool sg__rmemo_rule(const sg__schema *s, sg__meta_fn rule);
/* The key of a call of s into g with arguments a by schema position (given
 * NULL: the first n given, the others their defaults), the node's flags
 * and rg; false where the call's result is not remembered (not s->memo,
 * an eager graph, a list of values, a key too long) or an argument is no
 * value or list of g's (a value no node gave yet, an index out of range). */
bool sg__rmemo_key_of(const sg__graph *g, const sg__schema *s, uint8_t flags, uint16_t rg, const sg__garg *a,
                      const bool *given, size_t n, sg__rmemo_key *k);
/* The value the rule would make for k (arguments a, as keyed), made in g
 * (*out), or SG_NOVAL in *out where none is remembered for it under the
 * current mark. Errors: SG_ENOMEM, SG_ELIMIT (sg__graph_tensor's). */
sg_status sg__rmemo_use(sg__graph *g, const sg__rmemo_key *k, const sg__garg *a, uint32_t *out);
/* The rule of k's call, run just now from where g stood (before), made
 * value v: remember it if running the rule changed nothing else (the
 * environment, other values, nodes, storages). */
void sg__rmemo_keep(sg__graph *g, const sg__rmemo_key *k, const sg__garg *a, const sg__graph_mark *before,
                    uint32_t v);

/* ---- replay: a pass reads graph src and writes graph dst ---- */

typedef struct sg__replay sg__replay;

/* Called for each call node of src, in order, with its arguments mapped
 * into dst (values of dst; expressions as they are). The hook records what the node becomes (sg__replay_call, any
 * number of calls) and says which dst value stands for the node's value
 * (sg__replay_map). A hook that maps nothing leaves the node's value
 * without a counterpart: an argument of a later node that takes it is an
 * error (SG_EINVAL). */
typedef sg_status (*sg__replay_fn)(sg__replay *r, void *ud, uint32_t node, const sg__garg *args, size_t nargs);

/* Replay src into dst (an empty graph over the same environment):
 * placeholders as src's (same names, layouts, dtypes, grad flags; inputs
 * sharing a storage share one in dst), each call node through hook (NULL:
 * recorded again as it is), runtime asserts as they are, and the output.
 * Unbacked symbols that a node recorded in dst binds anew are renamed to
 * those its src node bound, as PyTorch renames them when it traces again
 * (sg_env_rename_unbacked, and the new node and values take the old
 * names), so expressions mean the same in both graphs. A cond node's
 * branches are replayed as subgraphs of dst (their nodes through hook too),
 * its merged outputs copied with the unbacked symbols it binds. Errors:
 * SG_EINVAL (dst not empty, or over another environment; a value the hook
 * did not map), SG_ENOMEM, and those of the hook and of sg__graph_record. */
sg_status sg__graph_replay(const sg__graph *src, sg__graph *dst, sg__replay_fn hook, void *ud);

/* Called once, before the root scope's output is replayed: it may record
 * calls (an epilogue) and map again the values the output takes. */
typedef sg_status (*sg__replay_end_fn)(sg__replay *r, void *ud);
/* Called before a cond node of src (node, in any scope) is replayed: it
 * may map again the values the cond takes (its operands, what its
 * branches lift). */
typedef sg_status (*sg__replay_cond_fn)(sg__replay *r, void *ud, uint32_t node);

/* What a pass does around the replay (each NULL: nothing). */
typedef struct sg__replay_cbs {
    sg__replay_fn call;          /* each call node (NULL: recorded again as it is) */
    sg__replay_end_fn end;       /* before the root's output */
    sg__replay_cond_fn cond;     /* before each cond node, at any depth */
    sg__replay_cond_fn function; /* before each custom Function's node (SG_N_FUNCTION): it may map
                                    again the values it names and its backward lifts */
    /* before the output of subgraph scope (of src) is replayed: n values of
       dst it gives after src's (*vals: alive until the replay moves on);
       both branches of a cond must give as many, of one layout each */
    sg_status (*branch_end)(sg__replay *r, void *ud, uint32_t scope, const uint32_t **vals, uint32_t *n);
    /* after cond node node was recorded: list, its dst value (src's
       outputs, then the ones branch_end added) */
    sg_status (*cond_done)(sg__replay *r, void *ud, uint32_t node, uint32_t list);
    /* after custom Function node node's backward was replayed, before the
       node is recorded: the placeholders of its scope (indices into phs)
       whose new contents the values branch_end added are, in order (*phs:
       alive until the node is recorded); NULL: src's node's own */
    sg_status (*function_written)(sg__replay *r, void *ud, uint32_t node, const uint32_t **phs, uint32_t *n);
} sg__replay_cbs;

/* sg__graph_replay with callbacks. */
sg_status sg__graph_replay_cbs(const sg__graph *src, sg__graph *dst, const sg__replay_cbs *cbs, void *ud);

/* A new value of d like value of of graph s (not a list): a tensor of the
 * same layout, dtype and grad flags (its _base none) on the storage
 * storages[its storage] (SG_NOVAL there: a new storage, noted there), or
 * an int, bool, float or None of the same expression. Not given by a node
 * yet (sg__graph_placeholder makes it an input). Errors: SG_EUNSUPPORTED (a
 * list), SG_ENOMEM. */
sg_status sg__graph_value_like(sg__graph *d, const sg__graph *s, uint32_t of, uint32_t *storages, uint32_t *out);

/* Inside the end callback: the root's output gives the n values vals of
 * dst first, then src's outputs mapped (AOTAutograd's updated inputs
 * before the user outputs). vals must live until the replay returns. */
void sg__replay_lead(sg__replay *r, const uint32_t *vals, uint32_t n);
/* The dst value that stands for src value of now (SG_NOVAL: none yet). */
uint32_t sg__replay_mapped(const sg__replay *r, uint32_t of);

/* Inside a hook: what a replay without a hook does with call node node of
 * src: the same call recorded (its flags kept), its value mapped to the one
 * given (*out). */
sg_status sg__replay_default(sg__replay *r, uint32_t node, const sg__garg *args, size_t nargs, uint32_t *out);
/* Inside a hook: record a call into dst (sg__graph_record, no hooks). */
sg_status sg__replay_call(sg__replay *r, const sg__schema *s, const sg__garg *args, size_t nargs, uint32_t *out);
/* Inside a hook: dst value v stands for src value of (for a list value: the
 * lists are mapped element by element; they must have one length). */
sg_status sg__replay_map(sg__replay *r, uint32_t of, uint32_t v);
/* The source and destination graphs of a replay. */
const sg__graph *sg__replay_src(const sg__replay *r);
sg__graph *sg__replay_dst(sg__replay *r);

#endif /* SG_GRAPH_RECORD_H */
