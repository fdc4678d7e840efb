#!/usr/bin/env python3
"""Seeded corpus of shape-like expressions for the expression-building benchmark.

Both benchmark sides (tests/bench/bench_expr.c for shapeguard and
tests/bench/bench_expr_sympy.py for sympy) read the file this script writes,
so both build exactly the same expressions, in the same order, with the same
sequence of binary operations.

Grammar (issue 2):
  term   := coeff * product of 1-3 symbols (drawn with replacement, so squares
            occur), coeff in {1, 1, 1, 2, 4, 8, 16, -1, -2, 3} (1 is not written)
  sum    := 1-4 terms, sometimes plus a constant
  expr   := sum                                         about 70%
          | FloorDiv(sum, k) or Mod(sum, k), k in {2, 4, 8, 16, 128},
            sometimes scaled or plus a term             about 20%
          | Max(sum, sum or constant)                   about 10%
over the symbols s0..s(V-1) (V = 16 by default), all positive integers.

File format (text, one record per line, '#' starts a comment line):
  corpus 1 seed=S syms=V distinct=D stream=N
  point J v0 v1 ... v(V-1)          values of the symbols for check J
  expr I E0 E1 : PROGRAM            expression I, its value at each point,
                                    and its postfix program
  stream N                          then N expression indices, 20 a line

PROGRAM tokens (postfix, a stack machine):
  sym J       push symbol sJ
  int C       push the integer constant C
  add, mul    pop b, pop a, push a + b / a * b
  floordiv    pop b, pop a, push a // b (Python floor division)
  mod         pop b, pop a, push a % b (Python modulo)
  max N       pop N values, push their maximum
Every program leaves exactly one value on the stack.

The query stream draws indices uniformly with replacement: with the
defaults 100,000 queries over 400 distinct expressions (250:1), as a trace
that asks about the same few hundred expressions again and again.
"""
import argparse
import random
import sys

COEFFS = [1, 1, 1, 2, 4, 8, 16, -1, -2, 3]
DIVISORS = [2, 4, 8, 16, 128]
CONSTS = [1, -1, 2, 8, -8, 64]


class Gen:
    def __init__(self, rng, nsyms):
        self.rng = rng
        self.nsyms = nsyms

    # Each generator returns (program tokens, evaluator); the evaluator maps
    # a list of symbol values to the exact (Python-semantics) value.
    def term(self):
        r = self.rng
        c = r.choice(COEFFS)
        syms = [r.randrange(self.nsyms) for _ in range(r.randint(1, 3))]
        prog = []
        if c != 1:
            prog += ["int %d" % c]
        for k, s in enumerate(syms):
            prog.append("sym %d" % s)
            if k > 0 or c != 1:
                prog.append("mul")

        def ev(v, c=c, syms=syms):
            x = c
            for s in syms:
                x *= v[s]
            return x

        return prog, ev

    def sum(self):
        r = self.rng
        parts = [self.term() for _ in range(r.randint(1, 4))]
        if r.random() < 0.3:
            c = r.choice(CONSTS)
            parts.append((["int %d" % c], lambda v, c=c: c))
        prog = list(parts[0][0])
        for p, _ in parts[1:]:
            prog += p + ["add"]
        evs = [e for _, e in parts]
        return prog, lambda v: sum(e(v) for e in evs)

    def expr(self):
        r = self.rng
        x = r.random()
        if x < 0.7:
            return self.sum()
        if x < 0.9:
            sp, se = self.sum()
            k = r.choice(DIVISORS)
            if x < 0.8:
                prog = sp + ["int %d" % k, "floordiv"]
                ev = lambda v: se(v) // k
            else:
                prog = sp + ["int %d" % k, "mod"]
                ev = lambda v: se(v) % k
            y = r.random()
            if y < 0.25:  # c * (a // k), as in a stride computation
                c = r.choice([2, 4, 8, 16])
                prog = ["int %d" % c] + prog + ["mul"]
                ev0 = ev
                ev = lambda v: c * ev0(v)
            elif y < 0.5:  # t + (a // k), as in an offset computation
                tp, te = self.term()
                prog = tp + prog + ["add"]
                ev0 = ev
                ev = lambda v: te(v) + ev0(v)
            return prog, ev
        ap, ae = self.sum()
        if r.random() < 0.5:
            bp, be = self.sum()
        else:
            c = r.choice([1, 2, 8, 64])
            bp, be = ["int %d" % c], (lambda v, c=c: c)
        return ap + bp + ["max 2"], lambda v: max(ae(v), be(v))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--syms", type=int, default=16, help="number of symbols")
    ap.add_argument("--distinct", type=int, default=400, help="distinct expressions")
    ap.add_argument("--stream", type=int, default=100000, help="queries in the stream")
    ap.add_argument("--points", type=int, default=2, help="check points")
    a = ap.parse_args(argv)

    rng = random.Random(a.seed)
    g = Gen(rng, a.syms)
    points = [[rng.randint(1, 100) for _ in range(a.syms)] for _ in range(a.points)]
    seen = set()
    exprs = []
    while len(exprs) < a.distinct:
        prog, ev = g.expr()
        key = " ".join(prog)
        if key in seen:
            continue
        seen.add(key)
        exprs.append((key, [ev(p) for p in points]))
    stream = [rng.randrange(a.distinct) for _ in range(a.stream)]

    out = sys.stdout if a.output == "-" else open(a.output, "w")
    w = out.write
    w("corpus 1 seed=%d syms=%d distinct=%d stream=%d\n" % (a.seed, a.syms, a.distinct, a.stream))
    for j, p in enumerate(points):
        w("point %d %s\n" % (j, " ".join(map(str, p))))
    for i, (key, vals) in enumerate(exprs):
        w("expr %d %s : %s\n" % (i, " ".join(map(str, vals)), key))
    w("stream %d\n" % len(stream))
    for i in range(0, len(stream), 20):
        w(" ".join(map(str, stream[i:i + 20])) + "\n")
    if out is not sys.stdout:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
