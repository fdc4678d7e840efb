#!/usr/bin/python3
"""Invariants of traced graphs with torch.cond subgraphs, read from the text
that `shapeguard trace FILE` prints (doc/program.md, "The printed graph"):
the root `def forward(self, ...)`, then each subgraph as
`class cond_true_N(torch.nn.Module):` (nested ones as
`class cond_true_1.cond_false_0(...)`) with its `def forward(self, ...)`.

    cond_check.py --bin SHAPEGUARD FILE...   trace every case of each battery
                                             (one `shapeguard trace` per case)
    cond_check.py --text [FILE]              check one printed trace (stdin)

Checked on every graph (the root and each subgraph):
  lifted-twice   no placeholder name twice, no symbol taken by two
                 placeholders (nothing lifted twice)
  symbol-order   a tensor placeholder's type ("f64[s0, u1]") mentions only
                 symbols taken by placeholders before it in the same signature
                 (its symbols bound before it); a Sym placeholder is one basic
                 symbol (`s3: "Sym(s3)"`, never a compound expression)
  branches       cond_true_N and cond_false_N of the same parent both exist
                 and have identical signatures (names and types)
  arity          every cond call names two subgraphs of its own graph and
                 passes as many operands as they take
  closed         every name a node uses (arguments, cond operands, outputs)
                 is a placeholder or an earlier node of the same graph; every
                 symbol a node mentions is a placeholder of that graph or an
                 unbacked symbol first seen in an earlier node's type there
                 (bound by that node); such a symbol is bound in one graph
                 only (not also in a sibling branch or a parent); no
                 argument prints empty (`mul.Tensor(, 2)`, `clone.default()`)
  unused         every subgraph is called by exactly one cond call
The tool also lints each graph itself after a trace (sg__graph_lint); this
is a second, independent reading of what it prints.

Exit status 0 when every case traced and held every invariant, 1 otherwise
(each failure printed as `FILE: case NAME: CHECK: what`), 2 on usage errors.
Only the standard library.
"""
import os
import re
import subprocess
import sys
import tempfile

SYM = re.compile(r"\b([su]\d+)\b")
IDENT = re.compile(r"[A-Za-z_]\w*")
PARAM = re.compile(r'(\w+): "([^"]*)"')
NOT_NAMES = {"True", "False", "None", "inf", "nan", "torch", "self"}


class Graph:
    def __init__(self, name):
        self.name = name          # "" for the root, else "cond_true_1.cond_false_0"
        self.params = []          # (name, type)
        self.lines = []           # body lines, stripped


def parse_trace(text):
    """[Graph] of a printed trace, the root first; raises ValueError."""
    graphs = []
    pending = None
    for raw in text.splitlines():
        if not raw.strip():
            continue
        m = re.match(r"class ([\w.]+)\(torch\.nn\.Module\):\s*$", raw)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"\s*def forward\(self(?:, (.*))?\):\s*$", raw)
        if m:
            if pending is None and graphs:
                raise ValueError("a second root forward: %r" % raw)
            g = Graph(pending or "")
            pending = None
            sig = m.group(1) or ""
            g.params = PARAM.findall(sig)
            if len(g.params) != (sig.count('"') // 2):
                raise ValueError("cannot read the signature %r" % sig)
            graphs.append(g)
            continue
        if not graphs or not raw.startswith(" "):
            raise ValueError("line outside a forward: %r" % raw)
        graphs[-1].lines.append(raw.strip())
    if not graphs or graphs[0].name:
        raise ValueError("no root forward")
    return graphs


def uses(text):
    """(names, symbols) that an argument text refers to: identifiers not
    next to a '.', not keyword names (`dim=`), not literals."""
    text = re.sub(r'"[^"]*"', "", text)
    names, syms = [], []
    for m in IDENT.finditer(text):
        w = m.group(0)
        a, b = m.start(), m.end()
        if a > 0 and (text[a - 1] == "." or text[a - 1].isdigit()):
            continue
        if b < len(text) and text[b] == ".":
            continue
        rest = text[b:].lstrip()
        if rest.startswith("=") and not rest.startswith("=="):
            continue
        if w in NOT_NAMES:
            continue
        (syms if SYM.fullmatch(w) else names).append(w)
    return names, syms


def check_graphs(graphs):
    """[(check, message)] of the invariants above."""
    bad = []
    by_name = {g.name: g for g in graphs}
    bound_in = {}      # unbacked symbol bound by a node -> graph name
    called = {}
    for g in graphs:
        where = g.name or "forward"
        # placeholders
        seen, taken = set(), set()
        for pname, ptype in g.params:
            if pname in seen:
                bad.append(("lifted-twice", "%s: placeholder %s twice" % (where, pname)))
            seen.add(pname)
            m = re.fullmatch(r"Sym\((.*)\)", ptype)
            if m:
                if not SYM.fullmatch(m.group(1)):
                    bad.append(("symbol-order", "%s: placeholder %s: %s is no basic symbol" % (where, pname, ptype)))
                    continue
                if m.group(1) in taken:
                    bad.append(("lifted-twice", "%s: symbol %s taken twice" % (where, m.group(1))))
                taken.add(m.group(1))
            else:
                for s in SYM.findall(ptype):
                    if s not in taken:
                        bad.append(("symbol-order", "%s: placeholder %s: \"%s\": %s not bound before it" %
                                    (where, pname, ptype, s)))
        # nodes
        defined = set(seen)
        local = set(taken)
        for ln in g.lines:
            m = re.match(r'(\w+)(?:: "([^"]*)")? = (.*)$', ln)
            if m:
                name, typ, call = m.group(1), m.group(2) or "", m.group(3)
            elif ln.startswith("return "):
                name, typ, call = None, "", ln[len("return "):]
            elif ln.startswith("torch._check("):
                name, typ, call = None, "", ln
            else:
                bad.append(("closed", "%s: cannot read %r" % (where, ln)))
                continue
            names, syms = uses(call)
            if re.search(r"\(\s*,|,\s*,|,\s+\)|torch\.ops\.aten\.[\w.]+\(\)", call):
                bad.append(("closed", "%s: %r: an argument without a name" % (where, ln)))
            cm = re.match(r"torch\.ops\.higher_order\.cond\((.*)\)$", call)
            if cm:
                pm = re.match(r"(.*), self\.([\w]+), self\.([\w]+), \((.*)\)$", cm.group(1))
                if not pm:
                    bad.append(("arity", "%s: cannot read the cond call %r" % (where, ln)))
                else:
                    ops = [o.strip() for o in pm.group(4).split(",") if o.strip()]
                    for sub in (pm.group(2), pm.group(3)):
                        full = (g.name + "." if g.name else "") + sub
                        called[full] = called.get(full, 0) + 1
                        sg = by_name.get(full)
                        if sg is None:
                            bad.append(("arity", "%s: %s calls %s, which is not printed" % (where, name, full)))
                        elif len(sg.params) != len(ops):
                            bad.append(("arity", "%s: %s passes %d operands, %s takes %d" %
                                        (where, name, len(ops), full, len(sg.params))))
                    tn, fn = pm.group(2), pm.group(3)
                    if re.sub("true", "false", tn, count=1) != fn:
                        bad.append(("branches", "%s: %s pairs %s with %s" % (where, name, tn, fn)))
            for n in names:
                if n not in defined:
                    bad.append(("closed", "%s: %r uses %s, not a name of this graph" % (where, ln, n)))
            for s in syms:
                if s not in local:
                    bad.append(("closed", "%s: %r uses symbol %s, not bound in this graph" % (where, ln, s)))
            # symbols first seen in this node's type: bound by it (unbacked only)
            for s in SYM.findall(typ):
                if s in local:
                    continue
                if s.startswith("s"):
                    bad.append(("closed", "%s: %r: backed symbol %s not a placeholder" % (where, ln, s)))
                elif s in bound_in:
                    bad.append(("closed", "%s: %r: %s already bound in %s" %
                                (where, ln, s, bound_in[s] or "forward")))
                else:
                    bound_in[s] = g.name
                local.add(s)
            if name:
                defined.add(name)
    # branch pairs
    for g in graphs:
        if not g.name:
            continue
        last = g.name.rsplit(".", 1)[-1]
        m = re.fullmatch(r"cond_(true|false)_(\d+)", last)
        if not m:
            bad.append(("branches", "%s: not a cond branch name" % g.name))
            continue
        if called.get(g.name, 0) != 1:
            bad.append(("unused", "%s: called by %d cond calls" % (g.name, called.get(g.name, 0))))
        if m.group(1) == "false":
            continue
        other = g.name[:len(g.name) - len(last)] + "cond_false_" + m.group(2)
        og = by_name.get(other)
        if og is None:
            bad.append(("branches", "%s without %s" % (g.name, other)))
        elif og.params != g.params:
            bad.append(("branches", "%s and %s differ: (%s) against (%s)" % (
                g.name, other, ", ".join("%s: %s" % p for p in g.params),
                ", ".join("%s: %s" % p for p in og.params))))
    return bad


def check_text(text):
    try:
        graphs = parse_trace(text)
    except ValueError as e:
        return [("parse", str(e))], 0
    return check_graphs(graphs), len(graphs)


def split_cases(lines):
    """(header lines, [(case name, lines)]) of a battery."""
    head, cases = [], []
    for ln in lines:
        if ln.startswith("case "):
            cases.append((ln[5:].strip(), [ln]))
        elif cases:
            cases[-1][1].append(ln)
        else:
            head.append(ln)
    return head, cases


def trace_case(sg, head, case_lines, tmpdir):
    """(returncode, stdout, stderr) of `shapeguard trace` over the case alone
    with only its `trace` expectation (`shapeguard run` checks the rest)."""
    keep = [ln for ln in case_lines
            if not re.match(r"(eager|run|agree|layouts)\b.*=>", ln)]
    path = os.path.join(tmpdir, "case.battery")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("".join(head + keep))
    p = subprocess.run([sg, "trace", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return p.returncode, p.stdout, p.stderr


def main(argv):
    sg, text_mode, files, quiet = None, False, [], False
    it = iter(argv)
    for a in it:
        if a == "--bin":
            sg = next(it)
        elif a == "--text":
            text_mode = True
        elif a == "-q":
            quiet = True
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif a.startswith("-") and a != "-":
            print("cond_check: unknown option %s" % a, file=sys.stderr)
            return 2
        else:
            files.append(a)
    if text_mode:
        text = sys.stdin.read() if not files or files[0] == "-" else open(files[0], encoding="utf-8").read()
        bad, n = check_text(text)
        for check, msg in bad:
            print("%s: %s" % (check, msg))
        if not quiet:
            print("%d graphs, %d violations" % (n, len(bad)))
        return 1 if bad else 0
    if sg is None or not files:
        print("usage: cond_check.py --bin SHAPEGUARD FILE... | --text [FILE]", file=sys.stderr)
        return 2
    ncase = ngraph = nfail = 0
    with tempfile.TemporaryDirectory(prefix="cond_check.") as tmp:
        for path in files:
            with open(path, encoding="utf-8") as fh:
                head, cases = split_cases(fh.read().splitlines(True))
            for name, lines in cases:
                if not any(re.match(r"trace\s*=>\s*ok", ln) for ln in lines):
                    continue
                ncase += 1
                rc, out, err = trace_case(sg, head, lines, tmp)
                if rc != 0:
                    nfail += 1
                    msg = (err.strip().splitlines() or ["exit %d" % rc])[-1]
                    print("%s: case %s: trace: exit %d: %s" % (path, name, rc, msg))
                    continue
                bad, n = check_text(out)
                ngraph += n
                if bad:
                    nfail += 1
                    for check, msg in bad:
                        print("%s: case %s: %s: %s" % (path, name, check, msg))
    if not quiet:
        print("cond_check: %d cases, %d graphs, %d failing" % (ncase, ngraph, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
