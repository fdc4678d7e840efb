#!/usr/bin/python3
"""The program of tests/bench/bench_memory.c (its source, written by
`bench_memory --source OPS`) run eagerly by PyTorch 1.13 on the same
inputs, and its peak tensor memory. PyTorch 1.13 keeps no statistics of its
CPU allocator, so the peak is read from the profiler's memory records
(torch.autograd.profiler.profile(profile_memory=True)): every allocation
and free of the CPU allocator is attributed to the event under way; the
events' own bytes summed in the order they start give the bytes live
beyond the inputs, whose greatest value is the peak (within an operator,
its allocations and frees are netted). The process's max RSS growth over
the call (resource.getrusage) is printed beside it (coarse: pages, and
whatever else the interpreter allocates; measured on a first call without
the profiler).
    bench_memory.py SOURCE OPS"""
import resource
import sys

import torch
from torch.autograd import profiler


def main():
    path, ops = sys.argv[1], int(sys.argv[2])
    with open(path) as fh:
        src = fh.read()
    scope = {"torch": torch}
    exec(compile(src, path, "exec"), scope)
    f = scope["f"]
    x = torch.tensor([[((64 * i + j) % 97) / 97.0 - 0.5 for j in range(64)] for i in range(64)], dtype=torch.float32)
    y = torch.tensor([0.01 * j - 0.3 for j in range(64)], dtype=torch.float32)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = f(x, y)  # without the profiler, whose records grow the process too
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    del out
    with profiler.profile(profile_memory=True) as prof:
        out = f(x, y)
    live = peak = 0
    for e in sorted(prof.function_events, key=lambda e: (e.time_range.start, -e.time_range.end)):
        live += e.self_cpu_memory_usage
        peak = max(peak, live)
    print("ops %d\ntorch_peak_bytes %d\ntorch_maxrss_growth_kb %d\nchecksum %.17g"
          % (ops, peak, rss1 - rss0, out.double().sum().item()))


if __name__ == "__main__":
    main()
