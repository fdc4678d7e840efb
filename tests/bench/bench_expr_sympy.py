#!/usr/bin/python3
"""Expression building benchmark (issue 2): the sympy side.

Reads the corpus written by tests/bench/corpus.py (the file bench_expr.c
reads) and builds the same expressions with sympy, in the same order and
with the same binary operations, as a sympy-based shape engine does:

  symbols   sympy.Symbol("sJ", integer=True, positive=True), created once
            before the clock starts (as bench_expr.c does)
  int C     sympy.Integer(C)
  add, mul  a + b, a * b (sympy canonicalizes at construction)
  floordiv  sympy.floor(a / b)    (PyTorch uses its own FloorDiv class from
                                   torch.utils._sympy.functions; it is not
                                   available here, so the plain sympy spelling)
  mod       sympy.Mod(a, b)
  max N     sympy.Max(*args)

Passes (each run RUNS times; median and best printed):
  cold  sympy.core.cache.clear_cache(), then each distinct expression once;
  warm  after one untimed cold pass (the cache holds what it keeps), the first
        WARM queries of the stream, repeats included. sympy's own cache is
        left as it is configured (SYMPY_CACHE_SIZE, default 1000 entries per
        cached function): it is the incumbent's behaviour.

Checks (outside the clock): every expression, with the symbols replaced by
the values of each check point (xreplace), equals the value the generator
computed. Any failure makes the exit status 1.

Output: "key value" lines, as bench_expr prints them (read by run.sh).
Usage: /usr/bin/python3 bench_expr_sympy.py CORPUS [--runs N] [--warm N]
Use Debian's /usr/bin/python3 (python3-sympy 1.11.1) for the figures of
doc/performance.md.
"""
import argparse
import gc
import statistics
import sys
import time

try:
    import sympy
    from sympy.core.cache import clear_cache
except ImportError:
    print("bench_expr_sympy: sympy is not installed for %s" % sys.executable, file=sys.stderr)
    sys.exit(3)


def load(path):
    nsyms = 0
    points, exprs, stream = [], [], []
    nstream = None
    with open(path) as f:
        for line in f:
            if nstream is not None:
                stream.extend(int(x) for x in line.split())
                continue
            tok = line.split()
            if not tok or tok[0].startswith("#"):
                continue
            kw = tok[0]
            if kw == "corpus":
                for t in tok[2:]:
                    k, _, v = t.partition("=")
                    if k == "syms":
                        nsyms = int(v)
            elif kw == "point":
                points.append([int(x) for x in tok[2:]])
            elif kw == "expr":
                colon = tok.index(":")
                want = [int(x) for x in tok[2:colon]]
                prog = []
                it = iter(tok[colon + 1:])
                for t in it:
                    if t in ("sym", "int", "max"):
                        prog.append((t, int(next(it))))
                    elif t in ("add", "mul", "floordiv", "mod"):
                        prog.append((t, 0))
                    else:
                        raise SystemExit("bench_expr_sympy: unknown token %r" % t)
                exprs.append((prog, want))
            elif kw == "stream":
                nstream = int(tok[1])
            else:
                raise SystemExit("bench_expr_sympy: unknown record %r" % kw)
    if nstream is None or len(stream) != nstream:
        raise SystemExit("bench_expr_sympy: missing or short stream")
    return nsyms, points, exprs, stream


CATS = ("sum", "floordiv", "mod", "max")


def category(prog):
    """As bench_expr.c: Max before FloorDiv before Mod, else a plain sum."""
    ops = {op for op, _ in prog}
    for k in ("max", "floordiv", "mod"):
        if k in ops:
            return k
    return "sum"


def compile_program(prog, syms):
    """Turn a postfix program into a list of (arity, function or value)."""
    floor, Mod, Max = sympy.floor, sympy.Mod, sympy.Max
    out = []
    for op, arg in prog:
        if op == "sym":
            out.append((0, syms[arg]))
        elif op == "int":
            out.append((-1, arg))  # sympy.Integer(arg) at build time
        elif op == "add":
            out.append((2, lambda a, b: a + b))
        elif op == "mul":
            out.append((2, lambda a, b: a * b))
        elif op == "floordiv":
            out.append((2, lambda a, b: floor(a / b)))
        elif op == "mod":
            out.append((2, Mod))
        elif op == "max":
            out.append((arg, lambda *a: Max(*a)))
    return out


def build(code, Integer):
    stack = []
    push, pop = stack.append, stack.pop
    for n, f in code:
        if n == 0:
            push(f)
        elif n == -1:
            push(Integer(f))
        elif n == 2:
            b = pop()
            push(f(pop(), b))
        else:
            args = stack[-n:]
            del stack[-n:]
            push(f(*args))
    return stack[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description="sympy side of the expression building benchmark")
    ap.add_argument("corpus")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warm", type=int, default=5000, help="queries of the stream to time")
    a = ap.parse_args(argv)

    nsyms, points, exprs, stream = load(a.corpus)
    syms = [sympy.Symbol("s%d" % i, integer=True, positive=True) for i in range(nsyms)]
    codes = [compile_program(p, syms) for p, _ in exprs]
    Integer = sympy.Integer
    cats = [category(p) for p, _ in exprs]
    queries = [(codes[i], cats[i]) for i in stream[:a.warm]]
    clock = time.perf_counter_ns

    # The whole pass is timed by one clock around the loop (the headline);
    # each item is also timed alone for the breakdown by category (the clock
    # reads cost about 0.1 us, nothing next to sympy's times).
    cold, warm = [], []
    catt = {(w, k): [] for w in ("cold", "warm") for k in CATS}
    catn = {(w, k): 0 for w in ("cold", "warm") for k in CATS}
    for k in cats:
        catn["cold", k] += 1
    for _, k in queries:
        catn["warm", k] += 1
    for c in codes:  # untimed warm-up: lazy imports and first-call set-up
        build(c, Integer)
    first = None
    for run in range(a.runs):
        clear_cache()
        gc.collect()
        acc = dict.fromkeys(CATS, 0)
        built = []
        t0 = clock()
        for c, k in zip(codes, cats):
            t = clock()
            built.append(build(c, Integer))
            acc[k] += clock() - t
        t1 = clock()
        cold.append((t1 - t0) / len(codes))
        for k in CATS:
            catt["cold", k].append(acc[k] / catn["cold", k] if catn["cold", k] else 0)
        if first is None:
            first = built

        clear_cache()
        for c in codes:  # untimed: fill the cache as a trace's first pass would
            build(c, Integer)
        gc.collect()
        acc = dict.fromkeys(CATS, 0)
        t0 = clock()
        for c, k in queries:
            t = clock()
            build(c, Integer)
            acc[k] += clock() - t
        t1 = clock()
        warm.append((t1 - t0) / max(1, len(queries)))
        for k in CATS:
            catt["warm", k].append(acc[k] / catn["warm", k] if catn["warm", k] else 0)

    errors = 0
    for j, pt in enumerate(points):
        rep = {s: sympy.Integer(v) for s, v in zip(syms, pt)}
        for i, (e, (_, want)) in enumerate(zip(first, exprs)):
            got = e.xreplace(rep)
            if not (got.is_Integer and int(got) == want[j]):
                errors += 1
                if errors <= 10:
                    print("bench_expr_sympy: check failed: expr %d at point %d: %s, expected %d"
                          % (i, j, got, want[j]), file=sys.stderr)
    forms = len(set(first))

    print("engine sympy %s python %s" % (sympy.__version__, sys.version.split()[0]))
    print("runs %d" % a.runs)
    print("distinct %d" % len(codes))
    print("distinct_forms %d" % forms)
    print("stream %d" % len(queries))
    print("cold_ns_median %.1f" % statistics.median(cold))
    print("cold_ns_best %.1f" % min(cold))
    print("warm_ns_median %.1f" % statistics.median(warm))
    print("warm_ns_best %.1f" % min(warm))
    for w in ("cold", "warm"):
        for k in CATS:
            print("%s_n_%s %d" % (w, k, catn[w, k]))
            print("%s_ns_%s %.1f" % (w, k, statistics.median(catt[w, k])))
    print("checks %s" % ("FAILED" if errors else "ok"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
