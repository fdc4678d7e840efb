#!/usr/bin/python3
"""Replays the scripts of tests/diff/meta_gen in PyTorch (eagerly, the same
aten overloads on tensors of the hinted sizes) and compares each result's
dtype, sizes, strides and storage offset with the ones traced symbolically
and evaluated at the hints; an operator refused by the tracer must raise.
An operator the tracer refuses as unsupported is counted apart (a refusal
is allowed; a different answer is not). Reads the scripts on stdin; prints
mismatches, the refusals, and "N passed, N failed"."""
import re
import sys

import torch

torch.set_default_dtype(torch.float64)
DT = {"f64": torch.float64, "f32": torch.float32, "i64": torch.int64, "b8": torch.bool}
NAME = {v: k for k, v in DT.items()}


def parse_list(text):
    text = text.strip()[1:-1].strip()
    return [x.strip() for x in text.split(",")] if text else []


def tokens(text):
    return re.findall(r"\[[^\]]*\]|\S+", text)


def value(tok, env):
    if tok.startswith("["):
        items = parse_list(tok)
        return [env[x] if x.startswith("v") else int(x) for x in items]
    if tok.startswith("v"):
        return env[tok]
    if tok in ("True", "False"):
        return tok == "True"
    return float(tok) if "." in tok else int(tok)


def call(op, toks, env):
    args, kwargs = [], {}
    for t in toks:
        m = re.match(r"^(\w+)=(.*)$", t)
        if m and not t.startswith("["):
            kwargs[m.group(1)] = value(m.group(2), env)
        else:
            args.append(value(t, env))
    name, _, overload = op.partition(".")
    fn = getattr(getattr(torch.ops.aten, name), overload or "default")
    return fn(*args, **kwargs)


def meta(t):
    return "%s [%s] [%s] %d" % (NAME[t.dtype], ", ".join(map(str, t.shape)),
                                 ", ".join(map(str, t.stride())), t.storage_offset())


def main():
    passed = failed = refused = 0
    env, script, diverged = {}, [], False
    for line in sys.stdin:
        line = line.rstrip("\n")
        script.append(line)
        if diverged and line != "end":
            continue  # after a refusal where torch went on, the two states differ
        if line.startswith("input "):
            _, name, dt, rest = line.split(" ", 3)
            sizes, strides = [parse_list(x) for x in re.findall(r"\[[^\]]*\]", rest)]
            sizes, strides = [int(x) for x in sizes], [int(x) for x in strides]
            env[name] = torch.empty_strided(sizes, strides, dtype=DT[dt]).fill_(1)
        elif line.startswith("call "):
            head, want = line.split(" -> ")
            toks = tokens(head)
            out, op = toks[1], toks[2]
            try:
                r = call(op, toks[3:], env)
                got = meta(r) if isinstance(r, torch.Tensor) else "other"
            except Exception as e:  # noqa: BLE001 - any refusal counts
                r, got = None, "error (%s)" % str(e).split("\n")[0][:100]
            ok = got == want or (want.startswith("error") and got.startswith("error"))
            if ok:
                passed += 1
            elif want == "error unsupported":
                refused += 1
                diverged = True
            else:
                failed += 1
                diverged = True
                print("MISMATCH: %s\n  torch: %s\n  script:\n    %s" % (line, got, "\n    ".join(script)))
            if isinstance(r, torch.Tensor) and not want.startswith("error"):
                env[out] = r
            elif want.startswith("error") and not got.startswith("error"):
                pass
        elif line == "end":
            env, script, diverged = {}, [], False
    print("refused as unsupported where torch succeeds: %d" % refused)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
