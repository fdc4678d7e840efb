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

sg_status sg_tracer_graph_ops(const sg_tracer *t, const char *graph, char **out)
{
    if (!t || !out)
        return SG_EINVAL;
    *out = NULL;
    const sg__graph *g = sg__tracer_graph(t);
    uint32_t s = scope_named(g, graph);
    return s == SG_NOVAL ? SG_EINVAL : sg__graph_scope_ops(g, s, out);
}

sg_status sg_tracer_graph_placeholders(const sg_tracer *t, const char *graph, char **out)
{
    if (!t || !out)
        return SG_EINVAL;
    *out = NULL;
    const sg__graph *g = sg__tracer_graph(t);
    uint32_t s = scope_named(g, graph);
    return s == SG_NOVAL ? SG_EINVAL : sg__graph_scope_placeholders(g, s, out);
}

sg_status sg_tracer_lint(const sg_tracer *t)
{
    if (!t)
        return SG_EINVAL;
    return sg__graph_lint(sg__tracer_graph(t));
}
