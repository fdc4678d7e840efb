#!/usr/bin/python3
"""The program of tests/bench/bench_trace.c traced by PyTorch 1.13's
make_fx(f, tracing_mode="symbolic"): OPS program ops, the median over RUNS
traces of the time per program op and per call_function node.
    bench_trace.py OPS [RUNS]"""
import statistics
import sys
import time

import torch
from torch.fx.experimental.proxy_tensor import make_fx


def program(ops):
    def f(x, y):
        t = x
        for i in range(ops):
            k = i % 6
            if k == 0:
                t = t.add(y)
            elif k == 1:
                t = t.mul(2)
            elif k == 2:
                t = t.view(-1)
            elif k == 3:
                t = t.view(x.shape[0], x.shape[1])
            elif k == 4:
                t.add_(1)
            else:
                t = t.sin()
        return t
    return f


def main():
    ops = int(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    times, nodes = [], 0
    for _ in range(runs):
        x, y = torch.randn(5, 3, dtype=torch.float64), torch.randn(3, dtype=torch.float64)
        t0 = time.perf_counter()
        g = make_fx(program(ops), tracing_mode="symbolic")(x, y)
        times.append(time.perf_counter() - t0)
        nodes = sum(1 for n in g.graph.nodes if n.op == "call_function")
    med = statistics.median(times)
    print("ops %d\nruns %d\nnodes %d\ntrace_ns_per_op_median %.1f\ntrace_ns_per_node_median %.1f"
          % (ops, runs, nodes, med / ops * 1e9, med / nodes * 1e9))


if __name__ == "__main__":
    main()
