#!/usr/bin/python3
"""PyTorch 1.13's AOTAutograd as the oracle for the graphs of training programs.

For every case of a battery that has a program and `ops forward =>` or
`ops backward =>` lines, this builds the inputs as tests/diff/prog_torch.py
does (program.md's Values, seed 0), runs functorch's aot_function on the
entry point with the partition the case's `aot` line names (`partition=
min_cut`, the default: min_cut_rematerialization_partition; `partition=
default`: default_partition), and takes the operators of the forward and
backward graphs it compiles: aten overload names without `aten.` and
`.default`, in graph order, as `ops` prints them.

    aot_ops_torch.py FILE...                 print FILE:LINE: ops GRAPH => OPS
    aot_ops_torch.py --fill FILE [-o OUT]    rewrite those lines (in place, or to OUT)
    aot_ops_torch.py --check FILE...         compare, "N passed, N failed"

torch 1.13's aot_function: the forward graph returns the saved values after
the outputs; a case whose program torch does not compile as a training
graph (no input requires grad, an output that requires none) prints
`(no backward)`.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import prog_torch  # noqa: E402

from functorch.compile import aot_function, default_partition, make_boxed_func  # noqa: E402
from functorch.compile import min_cut_rematerialization_partition  # noqa: E402


def op_name(target):
    s = str(target)
    if s.startswith("aten."):
        s = s[5:]
    if s.endswith(".default"):
        s = s[:-8]
    return s


def partition_of(case):
    """The partition function the case's last `aot` line names."""
    part = min_cut_rematerialization_partition
    for _, word, args in case.commands:
        if word == "aot":
            part = default_partition if "partition=default" in args.split() else min_cut_rematerialization_partition
    return part


def graphs(case):
    """{"forward": "OPS", "backward": "OPS"} of torch's aot_function."""
    name, params = prog_torch.entry_point(case.program)
    ns = {"torch": torch}
    exec(compile(case.program, "<program %s>" % case.name, "exec"), ns)
    fn = ns[name]
    got = {}

    def compiler(which):
        def comp(gm, inputs):
            got[which] = " ".join(op_name(n.target) for n in gm.graph.nodes if n.op == "call_function")
            return make_boxed_func(gm)
        return comp

    args, _, _ = prog_torch.build_inputs(case, params, 0, {})
    g = aot_function(fn, compiler("forward"), compiler("backward"), partition_fn=partition_of(case))
    outs = g(*args)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    loss = [o.sum() for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
    if loss:
        sum(loss).backward()
    return got


def main(argv):
    fill = check = False
    out = None
    files = []
    i = 0
    while i < len(argv):
        if argv[i] == "--fill":
            fill = True
        elif argv[i] == "--check":
            check = True
        elif argv[i] == "-o":
            out = argv[i + 1]
            i += 1
        else:
            files.append(argv[i])
        i += 1
    torch.set_default_dtype(torch.float64)
    passed = failed = 0
    for path in files:
        with open(path) as f:
            lines = f.readlines()
        for case in prog_torch.parse_battery(lines):
            todo = [(ln, args) for ln, word, args in case.commands if word == "ops" and args in ("forward", "backward")]
            if not todo:
                continue
            got = graphs(case)
            for ln, which in todo:
                ops = got.get(which, "(no %s)" % which)
                text = "ops %s => %s" % (which, ops)
                if fill:
                    lines[ln] = text + "\n"
                elif check:
                    want = lines[ln].split("=>", 1)[1].strip()
                    if want.split() == ops.split():
                        passed += 1
                    else:
                        failed += 1
                        print("%s:%d: expected %s, torch gives %s" % (path, ln + 1, want, ops))
                else:
                    print("%s:%d: %s" % (path, ln + 1, text))
        if fill:
            with open(out or path, "w") as f:
                f.writelines(lines)
    if check:
        print("%d passed, %d failed" % (passed, failed))
        return 1 if failed else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
