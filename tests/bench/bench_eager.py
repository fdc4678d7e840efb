#!/usr/bin/python3
"""The program of tests/bench/bench_eager.c (its source, written by
`bench_eager --source OPS`) run eagerly by PyTorch 1.13 on the same inputs:
the median over RUNS calls (after one warm-up call) of the time per program
op, and the checksum of the result (the sum of its elements).
    bench_eager.py SOURCE OPS [RUNS]"""
import statistics
import sys
import time

import torch


def main():
    path, ops = sys.argv[1], int(sys.argv[2])
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    with open(path) as fh:
        src = fh.read()
    scope = {"torch": torch}
    exec(compile(src, path, "exec"), scope)  # compiled once, as bench_eager.c parses once
    f = scope["f"]
    x = torch.tensor([[(4 * i + j) / 32.0 - 0.5 for j in range(4)] for i in range(8)], dtype=torch.float64)
    y = torch.tensor([0.25 * j - 0.3 for j in range(4)], dtype=torch.float64)
    out = f(x, y)  # warm-up
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = f(x, y)
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    print("ops %d\nruns %d\neager_ns_per_op_median %.1f\nchecksum %.17g" % (ops, runs, med / ops * 1e9, out.sum().item()))


if __name__ == "__main__":
    main()
