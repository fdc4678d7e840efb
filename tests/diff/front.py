#!/usr/bin/python3
"""The parser of the program language against Python's own: random programs
in the subset of doc/program.md (and the fixed ones of tests/programs),
printed by Python's ast.unparse (blank lines dropped) and by our parser's
printer (tests/diff/front_print) must be the same text; mutated programs that
Python rejects must be syntax errors for us too, and programs outside the
subset must be refused as unsupported.
    front.py DRIVER [SEED [COUNT]]"""
import ast
import random
import subprocess
import sys

NAMES = ["x", "y", "a", "b", "t", "torch", "ctx", "s0"]
ATTRS = ["shape", "t", "mul_", "view", "sum", "size", "data", "requires_grad", "no_grad", "ops"]


def gen_expr(r, d=0):
    k = r.randrange(14 if d < 4 else 4)
    if k == 0:
        return r.choice(NAMES)
    if k == 1:
        return str(r.randrange(0, 100))
    if k == 2:
        return r.choice(["0.5", "1e-05", "2.0", "1.5", "1e+20", "3.25"])
    if k == 3:
        return r.choice(["True", "False", "None"])
    if k in (4, 5):
        op = r.choice(["+", "-", "*", "/", "//", "%", "**", "@"])
        return "%s %s %s" % (wrap(r, d), op, wrap(r, d))
    if k == 6:
        return r.choice(["-", "+", "not "]) + wrap(r, d)
    if k == 7:
        ops = [r.choice(["<", ">", "==", "!=", "<=", ">="]) for _ in range(r.randrange(1, 3))]
        return " ".join([wrap(r, d)] + ["%s %s" % (o, wrap(r, d)) for o in ops])
    if k == 8:
        return (" %s " % r.choice(["and", "or"])).join(wrap(r, d) for _ in range(r.randrange(2, 4)))
    if k == 9:
        args = [gen_expr(r, d + 1) for _ in range(r.randrange(0, 3))]
        args += ["%s=%s" % (r.choice(["dim", "keepdim", "out"]), gen_expr(r, d + 1)) for _ in range(r.randrange(0, 2))]
        return "%s(%s)" % (atom(r, d), ", ".join(args))
    if k == 10:
        return "%s.%s" % (atom(r, d), r.choice(ATTRS))
    if k == 11:
        parts = [r.choice([gen_expr(r, d + 1), ":", "1:", ":2", "::2", "1:2:3", "...", "a:b"])
                 for _ in range(r.randrange(1, 3))]
        return "%s[%s]" % (atom(r, d), ", ".join(parts))
    if k == 12:
        return "[%s]" % ", ".join(gen_expr(r, d + 1) for _ in range(r.randrange(0, 3)))
    n = r.randrange(0, 3)
    return "(%s%s)" % (", ".join(gen_expr(r, d + 1) for _ in range(n)), "," if n == 1 else "")


def wrap(r, d):
    e = gen_expr(r, d + 1)
    low = e.startswith("not ") or any(w in e for w in (" and ", " or ", "<", ">", "==", "!="))
    return "(%s)" % e if low or r.random() < 0.5 else e


def atom(r, d):
    return r.choice(NAMES) if r.random() < 0.6 else "(%s)" % gen_expr(r, d + 1)


def gen_block(r, ind, d):
    lines = []
    for _ in range(r.randrange(1, 4)):
        lines += gen_stmt(r, ind, d)
    return lines


def gen_stmt(r, ind, d):
    pad = "    " * ind
    k = r.randrange(10 if d < 3 else 6)
    if k == 0:
        return [pad + "%s = %s" % (r.choice(NAMES), gen_expr(r))]
    if k == 1:
        return [pad + "a, b = %s" % gen_expr(r)]
    if k == 2:
        return [pad + "%s %s= %s" % (r.choice(NAMES), r.choice(["+", "-", "*", "/", "//"]), gen_expr(r))]
    if k == 3:
        return [pad + gen_expr(r)]
    if k == 4:
        return [pad + "return %s" % gen_expr(r)]
    if k == 5:
        return [pad + r.choice(["pass", "import torch", "x.data = y"])]
    if k == 6:
        out = [pad + "if %s:" % gen_expr(r)] + gen_block(r, ind + 1, d + 1)
        if r.random() < 0.4:
            out += [pad + "elif %s:" % gen_expr(r)] + gen_block(r, ind + 1, d + 1)
        if r.random() < 0.5:
            out += [pad + "else:"] + gen_block(r, ind + 1, d + 1)
        return out
    if k == 7:
        return [pad + "with torch.no_grad():"] + gen_block(r, ind + 1, d + 1)
    if k == 8:
        return [pad + "def f%d(%s):" % (d, ", ".join(NAMES[: r.randrange(0, 3)]))] + gen_block(r, ind + 1, d + 1)
    return ([pad + "class F%d(torch.autograd.Function):" % d, pad + "    @staticmethod",
             pad + "    def forward(ctx, x):"] + gen_block(r, ind + 2, d + 1))


def is_generated(src, cases):
    return any(src == s for s, _ in cases[0::2])


def canonical(src):
    return "\n".join(l for l in ast.unparse(ast.parse(src)).split("\n") if l.strip()) + "\n"


def main():
    driver = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    r = random.Random(seed)
    cases = []  # (source, expected output or "syntax" / "unsupported")
    for _ in range(count):
        src = "def f(x, y):\n" + "\n".join(gen_block(r, 1, 0)) + "\n"
        cases.append((src, canonical(src)))
        # a mutation: a character dropped or doubled; Python decides what it is
        i = r.randrange(len(src))
        bad = src[:i] + src[i + 1:] if r.random() < 0.5 else src[:i] + src[i] + src[i:]
        if not bad.endswith("\n"):
            bad += "\n"  # the driver reads the programs a line at a time
        try:
            want = canonical(bad)
        except SyntaxError:
            want = "syntax"
        cases.append((bad, want))
    for src in ["while x:\n    pass\n", "f = lambda x: x\n", "y = 'a'\n", "y = [i for i in x]\n",
                "y = {1: 2}\n", "x[0] = 1\n", "y = a if b else c\n", "y = a is b\n", "y = a in b\n",
                "def f(x=1):\n    pass\n", "y = f(*a)\n", "for i in x:\n    pass\n", "del x\n", "y = ~x\n",
                "y = a | b\n", "assert x\n"]:
        cases.append((src, "unsupported"))
    inp = "".join(src + "#---\n" for src, _ in cases)
    got = subprocess.run([driver], input=inp, capture_output=True, text=True, check=True).stdout
    outs = got.split("#---\n")[:-1]
    passed = failed = 0
    for (src, want), out in zip(cases, outs):
        if want == "syntax":  # what Python rejects is never printed (the first problem found may be unsupported)
            ok = out.startswith("error syntax") or out.startswith("error unsupported")
        elif want == "unsupported":
            ok = out.startswith("error unsupported")
        else:
            # what Python accepts: the same text, or refused as outside the subset where the
            # mutation made it so (a generated program itself is always in the subset)
            ok = out == want or (out.startswith("error unsupported") and not is_generated(src, cases))
        if ok:
            passed += 1
        else:
            failed += 1
            if failed <= 5:
                print("MISMATCH\n--- source\n%s--- python\n%s--- ours\n%s" % (src, want, out))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
