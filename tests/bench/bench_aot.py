#!/usr/bin/python3
"""The program of tests/bench/bench_aot.c (its source, written by
`bench_aot --source OPS KIND`) in PyTorch 1.13:
- eager, on the inputs bench_aot.c gives it: the checksums of the three
  outputs and of x afterwards (sum over the row-major elements of
  (k + 1) * element k), for run_aot.sh to compare with shapeguard's
  compiled run;
- make_fx(functionalize(f), tracing_mode="symbolic") RUNS times: the median
  time per program op and per call_function node of its graph (sym_size
  and the int arithmetic on sizes included, as the graph has them), and
  whether that graph run on fresh inputs gives eager's results. When make_fx
  refuses the program (1.13's symbolic mode does not trace slice, narrow,
  select, diagonal, copy_, zero_ or t_: the "full" kind), the line
  make_fx_error says why and only the eager lines are printed.
    bench_aot.py SOURCE OPS [RUNS]"""
import statistics
import sys
import time
import warnings

import torch
from functorch import functionalize
from torch.fx.experimental.proxy_tensor import make_fx

SIDE = 6


def inputs():
    x = torch.tensor([[(SIDE * i + j) / 36.0 - 0.5 for j in range(SIDE)] for i in range(SIDE)],
                     dtype=torch.float64)
    y = torch.tensor([0.25 * j - 0.3 for j in range(SIDE)], dtype=torch.float64)
    return x, y


def checksum(t):
    flat = t.contiguous().reshape(-1)
    return float((flat * torch.arange(1, flat.numel() + 1, dtype=torch.float64)).sum())


def sums(outs, x):
    return [checksum(o) for o in outs] + [checksum(x)]


def main():
    warnings.simplefilter("ignore")
    path, ops = sys.argv[1], int(sys.argv[2])
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    with open(path) as fh:
        src = fh.read()
    scope = {"torch": torch}
    exec(compile(src, path, "exec"), scope)
    f = scope["f"]
    x, y = inputs()
    want = sums(f(x, y), x)
    print("ops %d" % ops)
    for k in range(3):
        print("checksum_o%d %.17g" % (k, want[k]))
    print("checksum_x %.17g" % want[3])
    times, nodes, g = [], 0, None
    for _ in range(runs):
        x, y = inputs()
        t0 = time.perf_counter()
        try:
            g = make_fx(functionalize(f), tracing_mode="symbolic")(x, y)
        except Exception as e:  # 1.13's symbolic mode refuses the op
            print("make_fx_error %s" % str(e).splitlines()[0])
            return
        times.append(time.perf_counter() - t0)
        nodes = sum(1 for n in g.graph.nodes if n.op == "call_function")
    x, y = inputs()
    got = sums(g(x, y), x)
    same = all(abs(a - b) <= 1e-9 * max(1.0, abs(b)) for a, b in zip(got, want))
    med = statistics.median(times)
    print("runs %d\nnodes %d\nmake_fx_ns_per_op_median %.1f\nmake_fx_ns_per_node_median %.1f"
          % (runs, nodes, med / ops * 1e9, med / nodes * 1e9))
    print("make_fx_graph_agrees_with_eager %s" % ("yes" if same else "no"))


if __name__ == "__main__":
    main()
