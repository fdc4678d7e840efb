/* graph: the public questions about a tracer's graph that its printers and
 * linter answer (graph.h): the operators and placeholders of the graph or
 * of a subgraph named by its name, and the check of its invariants. */
#include "graph/graph.h"

/* The scope named name ("" or NULL: the root), or SG_NOVAL with the error
 * set. */
static uint32_t scope_named(const sg__graph *g, const char *name)
{
    uint32_t s = sg__graph_scope_find(g, name ? name : "");
    if (s == SG_NOVAL)
        sg__err(g->ctx, SG_EINVAL, "no graph named '%s'", name);
    return s;
}

/* What text of the graph named graph (ops or placeholders) says. */
static sg_status scope_text(const sg_tracer *t, const char *graph, char **out,
                            sg_status (*text)(const sg__graph *, uint32_t, char **))
{
    if (!t || !out)
        return SG_EINVAL;
    *out = NULL;
    const sg__graph *g = sg__tracer_graph(t);
    uint32_t s = scope_named(g, graph);
    return s == SG_NOVAL ? SG_EINVAL : text(g, s, out);
}

sg_status sg_tracer_graph_ops(const sg_tracer *t, const char *graph, char **out)
{
    return scope_text(t, graph, out, sg__graph_scope_ops);
}

sg_status sg_tracer_graph_placeholders(const sg_tracer *t, const char *graph, char **out)
{
    return scope_text(t, graph, out, sg__graph_scope_placeholders);
}

sg_status sg_tracer_lint(const sg_tracer *t)
{
    if (!t)
        return SG_EINVAL;
    return sg__graph_lint(sg__tracer_graph(t));
}
