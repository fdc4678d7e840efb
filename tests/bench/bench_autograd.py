#!/usr/bin/python3
"""PyTorch 1.13's side of tests/bench/bench_autograd.c (run_autograd.sh runs
both in one run).

    bench_autograd.py long SOURCE OPS [RUNS]
The long training program (its source written by `bench_autograd --source
OPS`) on the inputs bench_autograd.c gives it, x and y leaves that require
grad:
- eager: the checksums (sum over the row-major elements of (k + 1) *
  element k) of the two outputs and of the gradients of x and y after
  (t.sum() + m).backward(), for run_autograd.sh to compare with ours;
- functorch's aot_function(f, nop, nop,
  partition_fn=min_cut_rematerialization_partition) RUNS times (default 3),
  a new one each time: the first call traces the joint graph (twice, as
  1.13 does: make_fx, then functionalize), partitions it and compiles the
  forward (nop); that call is timed (the backward's compiler, nop too,
  runs at the first backward, untimed). The nodes counted are the
  call_function nodes of the forward and backward graphs the partition
  gives (what it compiles); the saved values are the backward graph's
  placeholders that are no tangents, their bytes summed as the
  partitioner's _size_of counts them (AOT_PARTITIONER_DEBUG's
  "Theoretical Activations Stored"). The compiled function's gradients are
  checked against eager's.

    bench_autograd.py battery DIR FILE...
The training programs of the batteries FILE...: every case with a
program whose parameters are all tensors (`tensor` lines, no subclass, no
`input` or `backed` parameter) of which at least one requires grad. Its
inputs are built as tests/diff/prog_torch.py builds them (seed 0), its
program is written to DIR/N.py, aot_function with the min-cut partitioner
runs it and the loss (every output that requires grad summed) is
backpropagated. One line a case:
    case N FILE:NAME DECL... torch SAVED_VALUES SAVED_BYTES
or, where torch builds no backward (no output requires grad, an error) or
its compiled program computes other values than its eager run (outputs,
inputs after the call and after the backward, gradients),
    case N FILE:NAME DECL... torch refused REASON
with the DECLs as `bench_autograd --saved` takes them."""
import os
import statistics
import sys
import time
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "diff"))

SIDE = 6


def checksum(t):
    flat = t.detach().contiguous().reshape(-1)
    return float((flat * torch.arange(1, flat.numel() + 1, dtype=flat.dtype)).sum())


def size_of(node):
    """The bytes the 1.13 partitioner counts for a saved value."""
    from functorch._src.partitioners import _size_of
    meta = node.meta.get("tensor_meta")
    return _size_of(meta) if meta is not None else 0


class Watch:
    """A partition_fn: 1.13's min-cut, remembering its graphs' nodes and
    what the forward saves."""

    def __init__(self):
        self.nodes = self.fw_nodes = self.bw_nodes = self.saved = self.saved_bytes = None

    def __call__(self, joint, joint_inputs):
        from functorch.compile import min_cut_rematerialization_partition
        fw, bw = min_cut_rematerialization_partition(joint, joint_inputs)
        self.fw_nodes = sum(1 for n in fw.graph.nodes if n.op == "call_function")
        self.bw_nodes = sum(1 for n in bw.graph.nodes if n.op == "call_function")
        saved = [n for n in bw.graph.nodes if n.op == "placeholder" and "tangents" not in n.target]
        self.saved = len(saved)
        self.saved_bytes = sum(size_of(n) for n in saved)
        return fw, bw


def compiled(f, watch):
    from functorch.compile import aot_function, nop
    return aot_function(f, nop, nop, partition_fn=watch)


# ---------------------------------------------------------------- long
def inputs():
    x = torch.tensor([[(SIDE * i + j) / 36.0 - 0.5 for j in range(SIDE)] for i in range(SIDE)],
                     dtype=torch.float64, requires_grad=True)
    y = torch.tensor([[0.3 - (SIDE * i + j) / 60.0 for j in range(SIDE)] for i in range(SIDE)],
                     dtype=torch.float64, requires_grad=True)
    return x, y


def grads_of(fn):
    x, y = inputs()
    t, m = fn(x, y)
    (t.sum() + m).backward()
    return [checksum(t), checksum(m), checksum(x.grad), checksum(y.grad)]


def long(argv):
    path, ops = argv[0], int(argv[1])
    runs = int(argv[2]) if len(argv) > 2 else 3
    with open(path) as fh:
        src = fh.read()
    scope = {"torch": torch}
    exec(compile(src, path, "exec"), scope)
    f = scope["f"]
    want = grads_of(f)
    print("ops %d" % ops)
    for k, key in enumerate(("checksum_o0", "checksum_o1", "checksum_grad_x", "checksum_grad_y")):
        print("%s %.17g" % (key, want[k]))
    times, watch, g = [], None, None
    for _ in range(runs):
        watch = Watch()
        g = compiled(f, watch)
        x, y = inputs()
        t0 = time.perf_counter()
        g(x, y)
        times.append(time.perf_counter() - t0)
    got = grads_of(g)
    same = all(abs(a - b) <= 1e-9 * max(1.0, abs(b)) for a, b in zip(got, want))
    med = statistics.median(times)
    nodes = watch.fw_nodes + watch.bw_nodes
    print("runs %d" % runs)
    print("forward_nodes %d\nbackward_nodes %d\njoint_nodes %d" % (watch.fw_nodes, watch.bw_nodes, nodes))
    print("saved_values %d\nsaved_bytes %d" % (watch.saved, watch.saved_bytes))
    print("aot_ms_median %.3f" % (med * 1e3))
    print("aot_ns_per_op_median %.1f\naot_ns_per_joint_node_median %.1f" % (med / ops * 1e9, med / nodes * 1e9))
    print("aot_gradients_agree_with_eager %s" % ("yes" if same else "no"))


# ---------------------------------------------------------------- battery
def decl_text(name, d):
    sizes = ",".join(str(s) for s in d["sizes"])
    text = "%s:%s:%s:%s" % (name, d["dtype"], {None: "none", "leaf": "leaf", "clone": "clone"}[d["grad"]], sizes)
    if d["strides"] is not None or d["offset"]:
        text += ":" + ",".join(str(s) for s in (d["strides"] or []))
        if d["offset"]:
            text += ":%d" % d["offset"]
    return text


def torch_saved(case, params):
    import prog_torch
    name, _ = prog_torch.entry_point(case.program)
    ns = {"torch": torch}
    exec(compile(case.program, "<program %s>" % case.name, "exec"), ns)
    def run(fn):
        """What fn computes: its outputs, its tensor arguments after the call and after the
        backward of its loss, the gradients of the leaves behind the inputs; None without a loss."""
        args, _, leaves = prog_torch.build_inputs(case, params, 0, {})
        outs = fn(*args)
        outs = outs if isinstance(outs, (tuple, list)) else (outs,)
        seen = [o.detach().clone() for o in outs if isinstance(o, torch.Tensor)]
        seen += [a.detach().clone() for a in args if isinstance(a, torch.Tensor)]
        loss = [o.sum() for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
        if not loss:
            return None
        sum(loss).backward()
        seen += [a.detach().clone() for a in args if isinstance(a, torch.Tensor)]
        return seen + [leaves[k].grad for k in sorted(leaves)]

    watch = Watch()
    got = run(compiled(ns[name], watch))
    if watch.saved is None or got is None:
        return "refused no output requires grad"
    # 1.13's aot_function mishandles some programs (an input mutated in the backward, written back
    # outside its graphs; a non-leaf input: no backward at all): its partition is compared only
    # where what it computes (outputs, inputs after the call and after the backward, gradients)
    # is its eager run's
    want = run(ns[name])
    if len(got) != len(want) or any(
            (g is None) != (w is None) or
            (g is not None and (g.shape != w.shape or not torch.allclose(g, w, equal_nan=True)))
            for g, w in zip(got, want)):
        return "refused 1.13's compiled program does not compute its eager one's values"
    return "%d %d" % (watch.saved, watch.saved_bytes)


def battery(argv):
    import prog_torch
    out, files = argv[0], argv[1:]
    n = 0
    for path in files:
        with open(path) as fh:
            lines = fh.readlines()
        for case in prog_torch.parse_battery(lines):
            if case.program is None:
                continue
            decls = {name: (kind, d) for kind, name, d in case.decls}
            try:
                _, params = prog_torch.entry_point(case.program)
            except Exception:
                continue
            if any(p not in decls or decls[p][0] != "tensor" or decls[p][1]["kind"] for p in params):
                continue
            if len(decls) != len(params) or not any(decls[p][1]["grad"] for p in params):
                continue
            n += 1
            with open(os.path.join(out, "%d.py" % n), "w") as fh:
                fh.write(case.program)
            try:
                # (1.13 has no torch.cond: the oracle's stand-in calls the branch the inputs take, a
                # graph of that branch alone, not the cond whose backward reads both branches' operands)
                res = ("refused 1.13 has no torch.cond" if "torch.cond(" in case.program else
                       torch_saved(case, params))
            except Exception as e:  # torch's own refusal: a mutated input that requires grad ...
                res = "refused %s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:100])
            print("case %d %s:%s %s torch %s" % (n, os.path.basename(path), case.name,
                                                 " ".join(decl_text(p, decls[p][1]) for p in params), res))


def main():
    warnings.simplefilter("ignore")
    torch.set_default_dtype(torch.float64)
    if len(sys.argv) >= 4 and sys.argv[1] == "long":
        return long(sys.argv[2:])
    if len(sys.argv) >= 4 and sys.argv[1] == "battery":
        return battery(sys.argv[2:])
    sys.stderr.write("usage: bench_autograd.py long SOURCE OPS [RUNS] | bench_autograd.py battery DIR FILE...\n")
    return 2


if __name__ == "__main__":
    sys.exit(main())
