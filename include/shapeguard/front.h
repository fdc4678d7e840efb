/* shapeguard: the front end of the program language (doc/program.md).
 *
 * A program is the source of a Python subset (a torch program: defs,
 * tensor operators, torch.cond, torch._check ...); its entry point is its
 * last top-level def. A walk runs the entry point once with Python's
 * meaning, each tensor operation becoming a call of an aten operator:
 *  - a trace (sg_walk_trace) records the calls into a tracer the caller
 *    owns (graph.h), whose environment holds the inputs' symbols: an `if`
 *    on sizes asks the environment (a guard), torch._check becomes a
 *    runtime assert;
 *  - an eager walk (sg_walk_eager) runs every call at once on concrete
 *    tensors (exec.h), over an environment, tracer and run of its own.
 * Inputs are bound by parameter name before sg_walk_run. Errors of a walk
 * carry "line L, column C:" and the kinds of doc/program.md:
 * SG_EUNSUPPORTED (a construct or operator outside the language, naming
 * it), SG_ESHAPE, SG_EDATADEP (a branch on an unbacked value, naming the
 * expression), SG_EASSERT (a failing torch._check), SG_ETYPE (Python's
 * TypeError), SG_ELIMIT (calls nested beyond 200), SG_ENOMEM. */
#ifndef SG_FRONT_H
#define SG_FRONT_H

#include <shapeguard/exec.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_program sg_program;
typedef struct sg_walk sg_walk;

/* Parse source (len bytes) whose first line is line first_line (1 for a
 * program of its own; errors and graph nodes carry these numbers). Errors
 * (the message says "line L, column C:"): SG_ESYNTAX (not Python, or no
 * function defined), SG_EUNSUPPORTED (Python outside the subset), SG_ELIMIT
 * (nesting beyond 100, a source beyond 4 MB, an integer beyond int64),
 * SG_EINVAL (NULL), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_program_new(sg_ctx *ctx, sg_give sg_program **out, const char *source, size_t len,
                                        uint32_t first_line);
void sg_program_free(sg_take sg_program *p);
/* The entry point's parameters (i < sg_program_nparams). */
size_t sg_program_nparams(const sg_program *p);
const char *sg_program_param(const sg_program *p, size_t i);

/* A walk that traces p through t (borrowed; the inputs already given to
 * t), or that runs p eagerly. p (and t) must outlive the walk. Errors:
 * SG_EINVAL (NULL), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_walk_trace(const sg_program *p, sg_tracer *t, sg_give sg_walk **out);
SG_WARN_UNUSED sg_status sg_walk_eager(const sg_program *p, sg_give sg_walk **out);
void sg_walk_free(sg_take sg_walk *w);

/* The inputs, by parameter name. _value: a value of the tracer (a trace);
 * _tensor: a concrete tensor (eager: the walk's run takes a reference, and
 * writes bump x's version counter; an input viewing the storage of an
 * earlier one aliases it in the graph too; requires_grad as for
 * sg_tracer_input_tensor); _int: an int (eager); _same: the very object of
 * an earlier parameter (`input b = a`). Errors: SG_EINVAL (no parameter of
 * that name, a concrete input in a trace), those of sg_tracer_input_view
 * and sg_run_set_tensor (_tensor), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_walk_input_value(sg_walk *w, const char *name, sg_value v);
SG_WARN_UNUSED sg_status sg_walk_input_tensor(sg_walk *w, const char *name, sg_tensor *x, int requires_grad);
SG_WARN_UNUSED sg_status sg_walk_input_int(sg_walk *w, const char *name, int64_t value);
SG_WARN_UNUSED sg_status sg_walk_input_same(sg_walk *w, const char *name, const char *as);
/* The tensor parameter name, given already, is a view of another input on
 * its storage (its _base set: sg_tracer_input_declare_view, in a trace and
 * eagerly alike; a TwoTensor's inner tensors both). Errors: SG_EINVAL (NULL, no tensor parameter of that
 * name given), those of sg_tracer_input_declare_view. */
SG_WARN_UNUSED sg_status sg_walk_input_declare_view(sg_walk *w, const char *name);
/* A tensor-subclass input of kind kind, given as its inner tensors in
 * flatten order: _subclass the tracer's values (a trace:
 * sg_tracer_input_subclass made them), _subclass_tensors concrete ones
 * (eager: as sg_walk_input_tensor takes each). The kinds: "two" (PyTorch's
 * TwoTensor, inner a and b: every operator runs on both, its tensor
 * results are TwoTensors; the tensor has a's sizes). Errors: SG_EINVAL (no
 * such parameter, n not 2, no tensor), SG_EUNSUPPORTED (another kind),
 * those of the inputs above. */
SG_WARN_UNUSED sg_status sg_walk_input_subclass(sg_walk *w, const char *name, const char *kind, const sg_value *inner,
                                                size_t n);
SG_WARN_UNUSED sg_status sg_walk_input_subclass_tensors(sg_walk *w, const char *name, const char *kind,
                                                        sg_tensor *const *inner, size_t n);

/* Run the entry point, once (SG_EINVAL: it ran already, or a parameter has
 * no input; else the errors of a walk). Then sg_walk_finish records the
 * outputs in the tracer (the tensors returned, and the ints a node gives),
 * as sg_tracer_output. */
SG_WARN_UNUSED sg_status sg_walk_run(sg_walk *w);
SG_WARN_UNUSED sg_status sg_walk_finish(sg_walk *w);

/* After the run. The outputs: a returned tuple is its elements, anything
 * else one output. sg_walk_print_output prints output i as Python prints
 * it (tensors as tolist(), ints evaluated) with the concrete values of run
 * r (NULL: the eager walk's own; a run of the traced graph for a trace);
 * *out is freed with sg_free ("" for i beyond the outputs). Errors:
 * SG_EINTERNAL (a tensor without a concrete value in r), SG_ENOMEM. */
size_t sg_walk_noutputs(const sg_walk *w);
SG_WARN_UNUSED sg_status sg_walk_print_output(sg_walk *w, const sg_run *r, size_t i, sg_give char **out);
/* Is output i the very object of parameter param? */
int sg_walk_output_is(const sg_walk *w, size_t i, const char *param);
/* The graph values of output i, of parameter name (its object's value now:
 * after an in-place write, the written value) and of the entry function's
 * local name; UINT32_MAX where that is no tensor. */
sg_value sg_walk_output_value(const sg_walk *w, size_t i);
sg_value sg_walk_param_value(const sg_walk *w, const char *name);
sg_value sg_walk_local(const sg_walk *w, const char *name);
/* A TwoTensor is given by its inner tensor a wherever a value stands for a
 * tensor above: sg_walk_inner(w, v, j) is inner tensor j of the tensor
 * whose value is v (j = 0: v itself; j = 1: b of a TwoTensor), SG_NOVAL
 * where there is none (a plain tensor has no inner 1). */
sg_value sg_walk_inner(const sg_walk *w, sg_value v, size_t j);
/* The tracer the walk records into (a trace's, or the eager walk's own),
 * and the eager walk's run (NULL for a trace). */
sg_tracer *sg_walk_tracer(const sg_walk *w);
sg_run *sg_walk_eager_run(const sg_walk *w);

#ifdef __cplusplus
}
#endif

#endif /* SG_FRONT_H */
