/* shapeguard/aot.h: the ahead-of-time pipeline over a traced program
 * (PyTorch's AOTAutograd): functionalization, the input-mutation and
 * output-alias analysis, and the runtime wrapper that runs the functional
 * graph and replays the input mutations on the caller's tensors.
 *
 * sg_aot_compile reads the graph a tracer recorded (graph.h) and builds a
 * compiled program: a functional graph (no in-place op but the input
 * mutations kept at its end) and what the analysis found of every input
 * and output. sg_aot_call runs it on an sg_run of the same tracer whose
 * inputs were set (exec.h): the caller's tensors are mutated as eager
 * execution mutates them (data, then metadata), version counters move as
 * eager moves them, and outputs that alias an input are views of it after
 * the call (an output that is the input is that very tensor).
 *
 * Gradients: where an input requires grad, sg_aot_compile also builds the
 * joint graph of the functional forward and its backward (the derivative
 * formulas of the operator table) and partitions it: by default as
 * PyTorch's min_cut_rematerialization_partition (the values the backward
 * reads chosen by a minimum cut, cheap forward ops recomputed in the
 * backward), or as its default_partition (sg_aot_options);
 * sg_aot_call_backward runs the forward then the backward. Where the pipeline refuses the backward (sg_aot_backward_ops
 * says why), the forward still runs. */
#ifndef SHAPEGUARD_AOT_H
#define SHAPEGUARD_AOT_H

#include "shapeguard/exec.h"
#include "shapeguard/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_aot sg_aot;

/* Which graph the pipeline built (PyTorch's create_aot_state). */
typedef enum sg_aot_mode { SG_AOT_INFERENCE, SG_AOT_TRAIN } sg_aot_mode;

/* What a program does to one of its inputs (sg_aot_input_mutation): any of
 * DATA, METADATA (sizes, strides or offset changed in place), STORAGE (a
 * set_ to another storage; METADATA is then set too), and where the
 * mutation is applied: IN_GRAPH (at the end of the functional graph) or
 * EPILOGUE (by the runtime wrapper after the graph) for the forward's, and
 * BACKWARD where a custom Function's backward writes its data (a copy_ at
 * the backward graph's end: PyTorch's must_be_in_backward). 0: not
 * mutated. */
enum {
    SG_AOT_DATA = 1u << 0,
    SG_AOT_METADATA = 1u << 1,
    SG_AOT_STORAGE = 1u << 2,
    SG_AOT_IN_GRAPH = 1u << 3,
    SG_AOT_EPILOGUE = 1u << 4,
    SG_AOT_BACKWARD = 1u << 5
};

/* The alias kind of a user output (PyTorch's OutputType). */
typedef enum sg_aot_output_kind {
    SG_AOT_NON_ALIAS,
    SG_AOT_IS_INPUT,
    SG_AOT_ALIAS_OF_INPUT,
    SG_AOT_ALIAS_OF_INTERMEDIATE,
    SG_AOT_ALIAS_OF_INTERMEDIATE_SAVE_AS_OUTPUT,
    SG_AOT_ALIAS_OF_INTERMEDIATE_BASE_IS_USER_OUTPUT,
    SG_AOT_UNSAFE_VIEW_ALIAS,
    SG_AOT_CUSTOM_FUNCTION_VIEW
} sg_aot_output_kind;

/* PyTorch's name of kind k ("non_alias", "is_input" ...), or "?". */
const char *sg_aot_output_kind_name(sg_aot_output_kind k);

/* Compile the program tracer t recorded (its output given: sg_tracer_output).
 * keep_input_mutations: nonzero (as torch.compile) keeps the data mutations
 * that may stay in the graph there; zero moves every input mutation to the
 * epilogue. t is borrowed: it must outlive *out, and record nothing more.
 * *out: the compiled program (sg_aot_free), NULL on an error. Errors:
 * SG_EINVAL (NULL, a tracer without its output), SG_EUNSUPPORTED (a
 * construct functionalization does not handle yet, named in the message),
 * SG_EALIASING (a mutation PyTorch refuses; with tensor subclasses: a
 * metadata mutation of a subclass input, aliased or duplicate inputs that
 * are mutated), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_aot_compile(const sg_tracer *t, int keep_input_mutations, sg_give sg_aot **out);

/* How a training program's joint graph is split into the forward and the
 * backward: SG_AOT_MIN_CUT (torch.compile's, PyTorch 1.13's
 * min_cut_rematerialization_partition with its default compiler: the
 * joint's dead code eliminated and common subexpressions merged, the
 * values saved for the backward a minimum cut of a network weighted by
 * their bytes, pointwise and other cheap forward ops recomputed in the
 * backward); SG_AOT_DEFAULT_PARTITION (PyTorch's default_partition: the
 * backward recomputes nothing of the forward, which saves every forward
 * value the backward reads). */
typedef enum sg_aot_partition { SG_AOT_MIN_CUT, SG_AOT_DEFAULT_PARTITION } sg_aot_partition;

/* The choices of sg_aot_compile_with; zeroed, they are PyTorch's defaults
 * but keep_input_mutations (sg_aot_compile's argument). */
typedef struct sg_aot_options {
    int keep_input_mutations;   /* as sg_aot_compile's */
    sg_aot_partition partition; /* SG_AOT_MIN_CUT by default */
    int eager;                  /* nonzero: t is an eager run's record (sg_walk_tracer of an eager walk),
                                   compiled for the gradients eager autograd gives: PyTorch's AOT
                                   refusals of mutations with tensor subclasses (SG_EALIASING) are not
                                   made, eager makes none */
} sg_aot_options;

/* As sg_aot_compile, with the choices *o (borrowed, read during the call).
 * Errors: those of sg_aot_compile, SG_EINVAL (o NULL, a partition out of
 * the enumeration). */
SG_WARN_UNUSED sg_status sg_aot_compile_with(const sg_tracer *t, const sg_aot_options *o, sg_give sg_aot **out);
void sg_aot_free(sg_take sg_aot *a);

/* SG_AOT_INFERENCE for a NULL a. */
sg_aot_mode sg_aot_get_mode(const sg_aot *a);
/* Is the loss of program.md not empty: does an output require grad, by the
 * trace's flags (eager's) or the functional graph's flow? 0 for a NULL a.
 * Where it is empty no backward runs: sg_aot_call_backward gives every
 * gradient NULL (PyTorch's None), whatever the program did to the inputs
 * that require grad. */
int sg_aot_has_loss(const sg_aot *a);

/* The inputs are the program's: the traced graph's (sg_run_ninputs,
 * sg_run_input: the same order), except that a tensor-subclass input
 * (sg_tracer_input_subclass) is one input for its inner tensors. SG_AOT_*
 * flags of input i (a subclass input's: any inner tensor's), 0 for an int
 * or an input the program does not mutate; its name. A NULL a has no
 * inputs; i past sg_aot_ninputs gives 0 flags and a NULL name. */
size_t sg_aot_ninputs(const sg_aot *a);
unsigned sg_aot_input_mutation(const sg_aot *a, size_t i);
/* Input i's name (a tensor's program name, a symbol's "s0"; borrowed). */
const char *sg_aot_input_name(const sg_aot *a, size_t i);
/* Is input i on a synthetic base (PyTorch's): a tensor whose storage
 * other inputs view too and the program writes, so that the functional
 * graph takes that storage as one input and views input i on it? 1 or 0
 * (an int, a subclass input: 0). Its gradient (sg_aot_call_backward) is
 * then the storage's, gathered by its layout. 0 for a NULL a or i past
 * sg_aot_ninputs. */
int sg_aot_input_synthetic(const sg_aot *a, size_t i);

/* The user outputs (the traced graph's, in order; a subclass output,
 * sg_tracer_output_subclass, is one for its inner tensors, whose kinds and
 * bases agree): the kind of output k and
 * its base (*base: the input index for IS_INPUT and ALIAS_OF_INPUT, the
 * output index for ALIAS_OF_INTERMEDIATE_BASE_IS_USER_OUTPUT, else
 * SIZE_MAX; base may be NULL). A NULL a has no outputs; k past
 * sg_aot_noutputs gives SG_AOT_NON_ALIAS and SIZE_MAX. */
size_t sg_aot_noutputs(const sg_aot *a);
sg_aot_output_kind sg_aot_output(const sg_aot *a, size_t k, size_t *base);

/* The functional graph as Python text (sg_tracer_print's form), and its
 * operator names separated by blanks (sg_tracer_graph_ops's form); *out
 * freed with sg_free. sg_aot_ops of a training program with a backward
 * names the partitioned forward's instead, as PyTorch 1.13's partition
 * extracts it from the joint graph: no dead code, under the min-cut its
 * common subexpressions merged, and the tail that computes saved values of
 * the backward part (doc/program.md, "Gradients"). Errors: SG_EINVAL
 * (NULL), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_aot_print(const sg_aot *a, sg_give char **out);
SG_WARN_UNUSED sg_status sg_aot_ops(const sg_aot *a, sg_give char **out);
/* The operators of the backward graph of a training program (as
 * sg_aot_ops: PyTorch's `ops backward`), in order. Errors: SG_EINVAL (NULL,
 * an inference program), and for a training program whose backward could
 * not be built, the error that stopped it (SG_EUNSUPPORTED: an operator
 * without a derivative formula, gradients of a mutated input ...). */
SG_WARN_UNUSED sg_status sg_aot_backward_ops(const sg_aot *a, sg_give char **out);
/* What the forward of a training program saves for its backward: *n values
 * and *bytes, their elements at the environment's hints times their
 * dtype's size (PyTorch's partitioner counts them so). Errors: as
 * sg_aot_backward_ops, SG_EUNBOUND (a saved size of no hint). */
SG_WARN_UNUSED sg_status sg_aot_saved(const sg_aot *a, size_t *n, int64_t *bytes);

/* Run the compiled program on r, a run of a's tracer (sg_run_new) whose
 * inputs are set (sg_run_set_tensor, sg_run_set_int) and that was not
 * executed. The caller checks the guards first (sg_guards_check ...). The
 * functional graph runs on the input tensors; then the epilogue mutates
 * them (data copied in, then sizes, strides and offset set as the program
 * left them), their version counters moving as eager execution moves them;
 * then outputs that alias an input are made again from it. Afterwards
 * sg_run_tensor(r, v) gives, for v a user output (sg_run_output), the
 * output, and for v the last value an input object took in the traced
 * graph, that input (the caller's tensor, mutated); sg_run_int the int
 * outputs. Errors: SG_EINVAL (NULL, r of another tracer or already run),
 * those of sg_run_execute (a kernel's, SG_EASSERTION ...), SG_ENOMEM. */
SG_WARN_UNUSED sg_status sg_aot_call(const sg_aot *a, sg_run *r);
/* sg_aot_call, then the backward of a training program with the loss of
 * program.md (every output that requires grad summed: the tangents are
 * ones): grads[i] (n = sg_aot_ninputs) the gradient of input i, a tensor
 * the caller owns (sg_tensor_unref), or NULL where none reaches the input
 * (PyTorch's None). For an input on a synthetic base
 * (sg_aot_input_synthetic) that requires grad, the joint graph
 * differentiates with respect to the storage: grads[i] is the gradient of
 * the storage's positions gathered by input i's layout (as the caller gave
 * it), the gradient i takes as the autograd base of the other inputs on
 * the storage, each a view of it (autograd routes a view's gradient to
 * its base); where input i reaches a position twice, each of its elements
 * there takes the position's gradient (not autograd's gradient of such a
 * tensor, whose elements it tells apart: the caller refuses or sums as its
 * meaning asks). The backward graph reads what the forward saved; the
 * caller's tensors are mutated as by sg_aot_call, and then by the
 * backward where a custom Function's backward writes an input
 * (SG_AOT_BACKWARD: its copy_ ends the backward graph). Errors: those of
 * sg_aot_call, SG_EINVAL (n not the number of inputs, an inference
 * program), SG_EUNSUPPORTED (the error that stopped the backward's making,
 * as sg_aot_backward_ops says; gradients that are TwoTensors, which
 * sg_aot_call_backward_two gives). On an error every grads[i] is NULL. */
SG_WARN_UNUSED sg_status sg_aot_call_backward(const sg_aot *a, sg_run *r, sg_give sg_tensor **grads, size_t n);
/* sg_aot_call_backward where the loss may be a tensor subclass: where an
 * output that requires grad is a TwoTensor (sg_tracer_output_subclass),
 * PyTorch's loss is one, and so is the gradient of an input that reads it
 * or a TwoTensor value on the way (a custom Function's backward may give a
 * plain one): grads[i] is then its inner tensor a and grads_b[i] its inner
 * tensor b; grads_b[i] is NULL where input i's gradient is a plain tensor
 * or None. grads_b (n entries) may be NULL where no gradient is a
 * TwoTensor. Errors: those of sg_aot_call_backward (SG_EUNSUPPORTED: a
 * custom Function's backward that writes, or gradients of inputs on a
 * synthetic base, where the loss is a TwoTensor);
 * on an error every grads[i] and grads_b[i] is NULL. */
SG_WARN_UNUSED sg_status sg_aot_call_backward_two(const sg_aot *a, sg_run *r, sg_give sg_tensor **grads,
                                                  sg_give sg_tensor **grads_b, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* SHAPEGUARD_AOT_H */
