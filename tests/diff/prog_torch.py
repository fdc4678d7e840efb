#!/usr/bin/python3
"""Real PyTorch as the oracle for programs in batteries (doc/program.md).

For every case of a battery that has a `program` block, this builds the
inputs as program.md's "Values" section says, runs the entry point (the last
top-level def) eagerly in torch, and prints the RESULT text of an `eager`
command; it can also write those results into the battery (--fill) or
compare a battery's `eager` expectations with them (--check).

    prog_torch.py [--items LIST] [FILE...]         print the results
    prog_torch.py [--items LIST] --fill FILE [-o OUT]
    prog_torch.py [--items LIST] --check FILE...   compare, "N passed, N failed"

FILE `-` (or no FILE) reads the battery on stdin.  Without --fill/--check,
each `eager` line of a case with a program prints as
    FILE:LINE: eager ARGS => RESULT
(a case with a program and no `eager` line prints one seed-0 run, LINE being
its `program` line).  --commands LIST (default eager) picks the commands
handled, a comma list of:
    eager     the RESULT of an eager run with the line's seed and overrides
    run       the same: torch has no compiled mode here, and the eager
              result is what a run of the traced graph must give where no
              guard fails (the differential test writes `run` lines only
              without size overrides)
    trace     `ok` where the seed-0 eager run succeeds or fails in the
              backward (no trace meets that error), else its `error KIND`
              (whether a trace must fail as eager does is the writer's
              call: prog_gen.py writes `trace => error shape` only).  An
              expectation `error data-dependent` is kept as written and not
              checked: torch 1.13 has no unbacked symbols to say it (the
              generator knows where its programs branch on such values)
    layouts   NAME=[SIZES]/[STRIDES]/OFFSET for every tensor bound to a name
              of the entry function when it returns (parameters included;
              names of nested defs not), from the seed-0 run: size(),
              stride() and storage_offset(), as
              `t1=[2, 3]/[3, 1]/0; t2=[3]/[1]/1`.  The locals are read from
              the entry function's frame at its 'return' event
              (sys.setprofile).

--fill rewrites every `eager ARGS => ...` line of a case with a program in
FILE (in place; with -o OUT to OUT, `-` is stdout), keeping ARGS (seed, size
overrides) and any trailing comment.  An expectation `error KIND: TEXT`
holds (--check) and is kept as written (--fill) where torch's error has
that kind and its message contains TEXT.

RESULT, items separated by "; " in this order (--items picks which; LIST is
a comma list of outputs,inputs,bw,grad,is,version, or `forward` = all but
grad and bw, or `all`, the default):
    oK=VALUE               each output (a returned tuple gives o0, o1, ...)
    NAME=VALUE             each tensor parameter after the call
    bw NAME=VALUE          each tensor parameter after the backward (where one ran)
    grad NAME=VALUE|None   each input declared requires_grad[=leaf]
    oK is NAME             output K is the very object passed as NAME
    version NAME=same|bumped   each tensor parameter's _version moved or not
VALUE is Python's str() of t.tolist() for a tensor, a Python int/float/bool
as itself, a list/tuple/torch.Size as a list of such.  An exception gives
`error KIND` instead, KIND one of shape, assertion, autograd, aliasing (the
classification is in classify()); an exception that fits none gives
`error unclassified`, its message on stderr, and exit status 1 (torch can
never answer `unsupported` or `data-dependent`, which are the engine's).

Subclass inputs (`subclass NAME kind=two sizes=[...] [strides=[...]]
[offset=K] [dtype=...] [a={...}] [b={...}]`) are built as program.md's Values
say: a TwoTensor (PyTorch's torch/testing/_internal/two_tensor.py, written
here for 1.13 with _make_wrapper_subclass and __torch_dispatch__) whose inner
`a` and `b` (j = 0, 1) take 13*k + 29*j where the formulas take 13*k; an
inner tensor not written takes the outer's sizes, strides and offset; a size
override on an eager/run line gives both inner tensors those sizes.  Every op
runs on both inner tensors; a subclass value prints as two(a=VALUE, b=VALUE).
Other kinds (double, scaled), `.data =` on a TwoTensor and requires_grad on a
subclass input are not built (the case is skipped).

Exit status: 0; 1 if anything was unclassified, skipped (a subclass input of
another kind or a case this oracle cannot run) or, for --check, failed; 2 on
a usage or battery error.

Only the standard library and torch (Debian's python3-torch 1.13, run with
/usr/bin/python3).  Notes on where torch 1.13 differs from today's PyTorch
are marked "1.13:".
"""
import ast
import math
import os
import re
import sys
import textwrap
import warnings

import torch
from torch.utils._mode_utils import no_dispatch
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

torch.set_default_dtype(torch.float64)
# 1.13: out= on a tensor of the wrong size resizes it with a UserWarning
# (still so today); other deprecation warnings differ between versions.
warnings.filterwarnings("ignore")

DTYPES = {"float64": torch.float64, "float32": torch.float32,
          "int64": torch.int64, "bool": torch.bool}
ALL_ITEMS = ("outputs", "inputs", "bw", "grad", "is", "version")


# ---------------------------------------------------------------- prelude
class CheckFailed(Exception):
    """A failing torch._check (today's torch raises RuntimeError with the
    message 'Expected cond to be True, but got False'; we raise our own so
    that it cannot be confused with another RuntimeError)."""


def _check(cond, message=None):
    # 1.13: torch._check does not exist (it appeared in 2.1).
    if not bool(cond):
        raise CheckFailed(message() if callable(message) else
                          (message or "Expected cond to be True, but got False"))


def _cond(pred, true_fn, false_fn, operands=()):
    # 1.13: torch.cond does not exist (torch._higher_order_ops.cond, exposed
    # as torch.cond in 2.4).  Eagerly it calls the branch the predicate picks.
    # Today's torch.cond requires a one-element tensor or a Python/Sym bool
    # and refuses a branch that mutates its inputs or returns an alias of
    # them when compiled; eagerly (torch.compiler.is_compiling() false) it is
    # traced anyway by dynamo in 2.x, so a mutating branch raises there
    # (program.md's `aliasing` while grad is enabled) but not here.
    tensor_pred = isinstance(pred, torch.Tensor)
    if tensor_pred:
        if pred.numel() != 1:
            raise RuntimeError("cond: expected pred to be a one-element tensor")
        pred = bool(pred)
    ops = tuple(operands) if isinstance(operands, (list, tuple)) else (operands,)
    fn = true_fn if pred else false_fn
    # A tensor predicate under grad, where an operand requires grad (what the
    # branches close over counts: dynamo lifts it as an operand): today's
    # torch.cond runs CondAutogradOp (torch/_higher_order_ops/cond.py): every
    # floating output requires grad; the operands are saved
    # (save_for_backward: written since, the backward raises); the backward
    # runs the taken branch's backward, whose gradient of an operand it does
    # not reach is zeros (create_bw_fn), not None.  A Python bool predicate
    # (sizes, eagerly) is today's eager torch.cond calling the branch itself.
    cells = _closure_tensors(true_fn) + _closure_tensors(false_fn)
    tens = [o for o in ops if isinstance(o, torch.Tensor)] + [c.cell_contents for c in cells]
    if tensor_pred and torch.is_grad_enabled() and any(t.requires_grad for t in tens):
        out = _CondAutograd.apply(fn, ops, cells, *tens)
        return out[0] if len(out) == 1 and _COND_SINGLE[0] else out
    return fn(*ops)


_COND_SINGLE = [False]


def _closure_tensors(fn):
    """The closure cells of fn (a branch) that hold tensors, once each."""
    seen, out = set(), []
    for c in getattr(fn, "__closure__", None) or ():
        try:
            v = c.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(v, torch.Tensor) and id(c) not in seen:
            seen.add(id(c))
            out.append(c)
    return out


class _CondAutograd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, fn, ops, cells, *tens):
        ctx.fn, ctx.ops, ctx.cells = fn, ops, cells
        ctx.save_for_backward(*tens)
        out = fn(*ops)
        _COND_SINGLE[0] = isinstance(out, torch.Tensor)
        outs = (out,) if _COND_SINGLE[0] else tuple(out)
        # (a branch may not return an alias of an operand while grad is enabled; torch.cond
        # raises, and so does the engine: `error aliasing`)
        for o in outs:
            for t in tens:
                if isinstance(o, torch.Tensor) and o.storage().data_ptr() == t.storage().data_ptr() and o.numel():
                    raise RuntimeError("torch.cond: a branch may not mutate or alias its inputs while grad "
                                       "is enabled")
        return outs

    @staticmethod
    def backward(ctx, *grads):
        saved = ctx.saved_tensors
        nops = sum(isinstance(o, torch.Tensor) for o in ctx.ops)
        fresh = [t.detach().requires_grad_(t.requires_grad) for t in saved]
        it = iter(fresh[:nops])
        ops = tuple(next(it) if isinstance(o, torch.Tensor) else o for o in ctx.ops)
        old = [c.cell_contents for c in ctx.cells]
        try:
            for c, t in zip(ctx.cells, fresh[nops:]):
                c.cell_contents = t
            with torch.enable_grad():
                out = ctx.fn(*ops)
            outs = (out,) if isinstance(out, torch.Tensor) else tuple(out)
            pairs = [(o, g) for o, g in zip(outs, grads) if isinstance(o, torch.Tensor) and o.requires_grad]
            want = [t for t in fresh if t.requires_grad]
            got = torch.autograd.grad([o for o, _ in pairs], want, [g for _, g in pairs],
                                      allow_unused=True) if pairs and want else [None] * len(want)
        finally:
            for c, v in zip(ctx.cells, old):
                c.cell_contents = v
        it = iter(got)
        res = []
        for t in fresh:
            g = next(it) if t.requires_grad else None
            res.append(torch.zeros_like(t) if t.requires_grad and g is None else g)
        return (None, None, None) + tuple(res)


torch.cond = _cond
torch._check = _check


# ---------------------------------------------------------------- errors
# RuntimeError/IndexError messages (as torch 1.13 words them) -> error kind.
# 1.13: some texts differ from today's: a dense permute with the wrong number
# of dims says 'permute(sparse_coo): number of dimensions in the tensor input
# does not match...'; amax/amin over an empty dim raise IndexError
# ('Expected reduction dim 0 to have non-zero size'); cat says 'Sizes of
# tensors must match except in dimension 0...'.  Where two checks apply,
# torch's order decides the kind (copy_ from an overlapping source of
# another shape is `aliasing`, its overlap check coming first).
# Not classified (no kind in program.md): dtype complaints ('result type
# Double can't be cast to the desired output type Long', 'mean(): could not
# infer output dtype', 'expected scalar type Double but found Float'), bool
# negation/subtraction, Python errors (TypeError for a wrong signature such
# as squeeze((1, 2)) in 1.13, ValueError from unpacking, NameError).
ERROR_PATTERNS = [
    ("autograd", r"a leaf Variable that requires grad|modified by an inplace operation|"
                 r"does not require grad|view was created in no_grad mode|"
                 r"is a view and (its base or another view of its base )?(has been|is being) modified inplace|"
                 r"is a view and is being modified inplace|"
                 r"don't support automatic differentiation|"
                 r"only Tensors of floating point .*can require gradients|"
                 r"can't be resized because it requires grad|"
                 r"derivative for .* is not implemented|"
                 r"Trying to backward through the graph a second time|"
                 r"set_storage is not allowed on a Tensor created from \.data or \.detach|"
                 r"is not allowed on a Tensor created from \.data or \.detach|"
                 r"requires_grad_\(\) ... is only|"
                 r"you can only change requires_grad flags of leaf variables|"
                 r"data set to a tensor that requires gradients must be floating point|"
                 r"cannot resize variables that require grad|"
                 r"leaf variable has been moved into the graph interior|"
                 r"Can't detach views in-place|returned an invalid gradient|"
                 r"view.*is being (used|modified) in an in-?place"),
    ("aliasing", r"more than one element of the written-to tensor refers to a single memory location|"
                 r"some elements of the input tensor and the written-to tensor refer to a single memory location|"
                 r"unsupported operation: .*memory location"),
    ("shape", r"(?i)size|shape|dimension|broadcast|out of (bounds|range)|must match|"
              r"cannot be multiplied|number of dims|only one dimension can be inferred|"
              r"invalid for input|must be a matrix|is not a matrix|"
              r"expects each tensor to be equal size|Expected reduction dim|"
              r"expects a tensor with <= \d+ dimensions|same number of dimensions|"
              r"need to be at least 1D|non-empty|negative dimension|1D tensors expected"),
]


def classify(exc):
    """The error kind of an exception, or None."""
    if isinstance(exc, CheckFailed):
        return "assertion"
    if not isinstance(exc, (RuntimeError, IndexError, ValueError)):
        return None
    msg = str(exc)
    # dtype complaints say 'size' nowhere but might say 'dim'; keep them out
    # of `shape`: program.md has no kind for them.
    if re.search(r"can't be cast to the desired output type|expected scalar type|"
                 r"dtype|Expected object of scalar type|not implemented for '|"
                 r"result type .* can't be cast|could not infer output dtype|"
                 r"must have the same dtype|expected .* to have the same dtype|"
                 r"Boolean value of Tensor with more than one value is ambiguous|"
                 r"Subtraction, the `-` operator, with a bool tensor|"
                 r"Negation, the `-` operator, on a bool tensor|"
                 r"only supports floating-point dtypes|"
                 r"Integers to negative integer powers are not allowed", msg):
        return None
    for kind, pat in ERROR_PATTERNS:
        if re.search(pat, msg):
            return kind
    return None


# ---------------------------------------------------------------- battery
TOKEN = re.compile(r"\w+=\[[^\]]*\]|\w+=\{[^}]*\}|[^\s;]+")


def ilist(text):
    text = text.strip()
    assert text[0] == "[" and text[-1] == "]", text
    inner = text[1:-1].strip()
    return [int(x) for x in inner.split(",")] if inner else []


class BatteryError(Exception):
    pass


class Case:
    def __init__(self, name, line):
        self.name, self.line = name, line
        self.decls = []        # (kind, name, dict) in order: tensor/backed/input/subclass
        self.program = None    # source text (dedented)
        self.program_line = None
        self.commands = []     # (line index, command word, args text)


def strip_comment(line):
    i = line.find("#")
    return (line, "") if i < 0 else (line[:i], line[i:])


def parse_tensor(rest, lineno):
    toks = TOKEN.findall(rest)
    if not toks:
        raise BatteryError("line %d: tensor without a name" % lineno)
    d = tensor_options(toks[1:], lineno)
    if d["sizes"] is None:
        raise BatteryError("line %d: tensor %s without sizes=" % (lineno, toks[0]))
    return toks[0], d


def tensor_options(toks, lineno):
    """The options of a tensor (or of a subclass input or one of its inner
    tensors): sizes, strides, offset, dtype, grad (None, "leaf", "clone"),
    and for a subclass kind and inner ({"a": {...}} as written)."""
    d = {"sizes": None, "strides": None, "offset": None, "dtype": "float64", "grad": None,
         "kind": None, "inner": {}}
    for t in toks:
        key, eq, val = t.partition("=")
        if key == "sizes":
            d["sizes"] = ilist(val)
        elif key == "strides":
            d["strides"] = ilist(val)
        elif key == "offset":
            d["offset"] = int(val)
        elif key == "dtype":
            if val not in DTYPES:
                raise BatteryError("line %d: unknown dtype %s" % (lineno, val))
            d["dtype"] = val
        elif key == "requires_grad":
            if eq and val != "leaf":
                raise BatteryError("line %d: requires_grad=%s" % (lineno, val))
            d["grad"] = "leaf" if eq else "clone"
        elif key == "kind":
            d["kind"] = val
        elif eq and val.startswith("{") and val.endswith("}"):
            d["inner"][key] = val[1:-1]
        # dynamic=, rangeN=, ctx= and the like only matter to the shape environment
    return d


def parse_subclass(rest, lineno):
    """`subclass NAME kind=two sizes=[...] ... a={...} b={...}` (battery.md):
    (name, options); an inner tensor's options are read when it is built."""
    toks = TOKEN.findall(rest)
    if not toks:
        raise BatteryError("line %d: subclass without a name" % lineno)
    d = tensor_options(toks[1:], lineno)
    if d["sizes"] is None:
        raise BatteryError("line %d: subclass %s without sizes=" % (lineno, toks[0]))
    if d["kind"] is None:
        raise BatteryError("line %d: subclass %s without kind=" % (lineno, toks[0]))
    return toks[0], d


def parse_battery(lines):
    cases = [Case(None, 0)]
    i = 0
    while i < len(lines):
        raw = lines[i].rstrip("\n")
        text, _ = strip_comment(raw)
        s = text.strip()
        c = cases[-1]
        if not s:
            i += 1
            continue
        word, _, rest = s.partition(" ")
        rest = rest.strip()
        if word == "case":
            cases.append(Case(rest, i))
        elif word == "program" and not rest:
            if c.program is not None:
                raise BatteryError("line %d: a second program in case %s" % (i + 1, c.name))
            j = i + 1
            block = []
            while j < len(lines) and (lines[j].strip() == "" or lines[j][0] in " \t"):
                block.append(lines[j].rstrip("\n"))
                j += 1
            c.program = textwrap.dedent("\n".join(block)) + "\n"
            c.program_line = i
            i = j
            continue
        elif word == "tensor":
            name, d = parse_tensor(rest, i + 1)
            c.decls.append(("tensor", name, d))
        elif word == "backed":
            m = re.match(r"(\w+)\s*=\s*(-?\d+)", rest)
            if not m:
                raise BatteryError("line %d: backed: %s" % (i + 1, rest))
            c.decls.append(("backed", m.group(1), {"hint": int(m.group(2))}))
        elif word == "input":
            m = re.match(r"(\w+)\s*=\s*(.+)$", rest)
            if not m:
                raise BatteryError("line %d: input: %s" % (i + 1, rest))
            c.decls.append(("input", m.group(1), {"expr": m.group(2).strip()}))
        elif word == "subclass":
            name, d = parse_subclass(rest, i + 1)
            c.decls.append(("subclass", name, d))
        elif "=>" in text:
            c.commands.append((i, word, text[len(word):text.index("=>")].strip()))
        i += 1
    return [c for c in cases if c.program is not None or c.commands]


def parse_args(args, case):
    """`[S] [NAME sizes=[...] [strides=[...]] [offset=N] ...] [NAME=INT ...]`."""
    seed, over = 0, {}
    toks = TOKEN.findall(args)
    cur = None
    backed = {n for k, n, _ in case.decls if k == "backed"}
    for j, t in enumerate(toks):
        if j == 0 and re.fullmatch(r"\d+", t):
            seed = int(t)
            continue
        key, eq, val = t.partition("=")
        if eq and key in ("sizes", "strides", "offset"):
            if cur is None:
                raise BatteryError("%s= without an input name" % key)
            over[cur][key] = int(val) if key == "offset" else ilist(val)
        elif eq and key in backed:
            over[key] = {"hint": int(val)}
            cur = None
        elif not eq and re.fullmatch(r"[A-Za-z_]\w*", t):
            cur = t
            over.setdefault(cur, {})
        else:
            raise BatteryError("cannot read %r in the arguments" % t)
    return seed, over


# ---------------------------------------------------------------- values
def element(dtype, i, k, j=0):
    """Element i of input k (inner tensor j of a subclass input: the formula's
    13*k becomes 13*k + 29*j)."""
    c = 13 * k + 29 * j
    if dtype in ("float64", "float32"):
        return ((7 * i + c) % 17 - 8) / 4
    if dtype == "int64":
        return (7 * i + c) % 17 - 8
    return (7 * i + c) % 3 == 0


def build_tensor(d, k, seed, over, j=0):
    sizes, strides, offset = d["sizes"], d["strides"], d["offset"]
    if over:
        # An override describes the input afresh, as `call` does: strides and
        # offset default to contiguous and 0 unless given with it.
        sizes = over.get("sizes", sizes)
        strides = over.get("strides")
        offset = over.get("offset")
    if strides is None:
        strides, acc = [], 1
        for s in reversed(sizes):
            strides.insert(0, acc)
            acc *= max(s, 1)
    offset = offset or 0
    if len(strides) != len(sizes):
        raise BatteryError("strides and sizes of different lengths")
    if any(s == 0 for s in sizes):
        n = offset
    else:
        n = offset + 1 + sum((s - 1) * st for s, st in zip(sizes, strides))
    vals = [element(d["dtype"], i + 101 * seed, k, j) for i in range(n)]
    dt = DTYPES[d["dtype"]]
    store = torch.tensor(vals, dtype=dt) if n else torch.empty(0, dtype=dt)
    t = torch.empty(0, dtype=dt)
    with torch.no_grad():
        # 1.13: Tensor.storage() is a TypedStorage; today one writes
        # t.set_(store.untyped_storage(), ...) (storage() is deprecated).
        t.set_(store.storage(), offset, sizes, strides)
    return t  # a leaf viewing a storage just large enough


# ---------------------------------------------------------------- TwoTensor
def _alias_source(func, args, kwargs, ret):
    """The argument that the op's return number `ret` is (a written alias in
    the schema, such as add_'s `Tensor(a!) self -> Tensor(a!)` or an out=
    argument), or None."""
    schema = func._schema
    ai = schema.returns[ret].alias_info if ret < len(schema.returns) else None
    if ai is None or not ai.is_write:
        return None
    for i, arg in enumerate(schema.arguments):
        if arg.alias_info is not None and arg.alias_info.is_write and \
                arg.alias_info.before_set == ai.before_set:
            return args[i] if i < len(args) else kwargs.get(arg.name)
    return None


class TwoTensor(torch.Tensor):
    """PyTorch's TwoTensor (torch/testing/_internal/two_tensor.py, 2.1 and
    later), written again for 1.13: a wrapper subclass with inner tensors a
    and b on which every aten op runs; the wrapper has a's sizes, strides and
    offset.  Tensor results are wrapped again (views of a TwoTensor are
    TwoTensor views of it: autograd's view tracking above the Python key
    makes the wrapper a view, and the inner results are real views of the
    inner tensors); a result the schema says is a written argument (in-place
    ops, out=) is that very argument, as today's return_and_correct_aliasing
    does; an in-place view op (Tag.inplace_view: t_, transpose_, unsqueeze_,
    squeeze_, as_strided_, detach_) and set_ also change the wrapper's own
    metadata (run on the wrapper with dispatch off, as that helper does
    under meta TLS).
    1.13: torch.utils._python_dispatch.return_and_correct_aliasing and
    __tensor_flatten__/__tensor_unflatten__ do not exist; nothing here needs
    them (no tracing)."""

    @staticmethod
    def __new__(cls, a, b):
        return torch.Tensor._make_wrapper_subclass(
            cls, a.size(), strides=a.stride(), storage_offset=a.storage_offset(),
            dtype=a.dtype, device=a.device, layout=a.layout, requires_grad=False)

    def __init__(self, a, b):
        super().__init__()
        self.a, self.b = a, b

    def __repr__(self):
        return "two(a=%s, b=%s)" % (fmt(self.a), fmt(self.b))

    __torch_function__ = torch._C._disabled_torch_function_impl

    @property
    def data(self):
        return torch.Tensor.data.__get__(self)

    @data.setter
    def data(self, value):
        # What `.data =` does to a wrapper subclass (its metadata changes,
        # its inner tensors do not) is no contract of PyTorch's; refuse.
        raise NotImplementedError("`.data =` on a TwoTensor is not run by this oracle")

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}

        def inner(j):
            def get(x):
                return (x.a if j == 0 else x.b) if isinstance(x, TwoTensor) else x
            return tree_map(get, args), tree_map(get, kwargs)
        aa, ka = inner(0)
        ab, kb = inner(1)
        out_a = func(*aa, **ka)
        out_b = func(*ab, **kb)
        flat_a, spec = tree_flatten(out_a)
        flat_b, _ = tree_flatten(out_b)
        flat = [cls(x, y) if isinstance(x, torch.Tensor) else x for x, y in zip(flat_a, flat_b)]
        for r in range(len(flat)):
            src = _alias_source(func, args, kwargs, r)
            if isinstance(src, TwoTensor):
                flat[r] = src
        if torch.Tag.inplace_view in func.tags or func.overloadpacket is torch.ops.aten.set_:
            with no_dispatch():
                func(*args, **kwargs)
        return tree_unflatten(flat, spec)


def build_subclass(name, d, k, seed, over):
    """Input k declared `subclass NAME kind=two ...`: TwoTensor(a, b), inner
    tensor j built as build_tensor builds input k with 29*j added."""
    if d["kind"] != "two":
        raise NotImplementedError("subclass input %s: kind %s is not built (only two)" % (name, d["kind"]))
    if d["grad"]:
        raise NotImplementedError("subclass input %s: requires_grad on a subclass is not built" % name)
    unknown = set(d["inner"]) - {"a", "b"}
    if unknown:
        raise BatteryError("subclass %s: kind two has no inner tensor %s" % (name, sorted(unknown)[0]))
    inner = []
    for j, attr in enumerate(("a", "b")):
        di = {"sizes": d["sizes"], "strides": d["strides"], "offset": d["offset"], "dtype": d["dtype"]}
        if attr in d["inner"]:
            di = dict(di, strides=None, offset=None)
            di.update({kk: v for kk, v in tensor_options(TOKEN.findall(d["inner"][attr]), 0).items()
                       if kk in ("sizes", "strides", "offset") and v is not None})
        inner.append(build_tensor(di, k, seed, over, j))
    return TwoTensor(inner[0], inner[1])


def build_inputs(case, params, seed, over):
    """(args by parameter, {name: object}, grad leaves {name: leaf})."""
    unknown = set(over) - {n for _, n, _ in case.decls}
    if unknown:
        raise BatteryError("override of an unknown input %s" % sorted(unknown))
    declared = [n for _, n, _ in case.decls]
    for p in params:
        if p not in declared:
            raise BatteryError("parameter %s has no input" % p)
    # k: 0-based parameter index; inputs that are not parameters (used only
    # by `input` expressions) follow, in declaration order.
    order = list(params) + [n for n in declared if n not in params]
    kof = {n: order.index(n) for n in declared}
    env, leaves = {}, {}
    for kind, name, d in case.decls:
        k = kof[name]
        if kind == "subclass":
            env[name] = build_subclass(name, d, k, seed, over.get(name))
        elif kind == "backed":
            env[name] = over.get(name, d)["hint"]
        elif kind == "tensor":
            t = build_tensor(d, k, seed, over.get(name))
            if d["grad"] == "leaf":
                t.requires_grad_()
                leaves[name] = t
            elif d["grad"] == "clone":
                t.requires_grad_()
                leaves[name] = t
                t = t.clone()
            env[name] = t
        else:
            ns = dict(env)
            ns["torch"] = torch
            env[name] = eval(compile(d["expr"], "<input %s>" % name, "eval"), ns)
    return [env[p] for p in params], env, leaves


# ---------------------------------------------------------------- running
def entry_point(src):
    tree = ast.parse(src)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if not defs:
        raise BatteryError("program without a top-level def")
    f = defs[-1]
    return f.name, [a.arg for a in f.args.args]


def fmt(v):
    if isinstance(v, TwoTensor):
        return "two(a=%s, b=%s)" % (fmt(v.a), fmt(v.b))
    if isinstance(v, torch.Tensor):
        return str(v.tolist())
    if isinstance(v, (list, tuple)):  # torch.Size included
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    return str(v)


def layout(t):
    """`[SIZES]/[STRIDES]/OFFSET` of a tensor, as the layouts command writes it."""
    return "%s/%s/%d" % (list(t.size()), list(t.stride()), t.storage_offset())


def call_watching(fn, args, frames):
    """fn(*args), keeping in frames[0] the locals of fn's own frame at its
    return (the entry function's names: parameters included, nested defs'
    names not, as those live in frames of their own)."""
    code = fn.__code__
    old = sys.getprofile()

    def prof(frame, event, arg):
        if event == "return" and frame.f_code is code:
            frames[0] = dict(frame.f_locals)
    sys.setprofile(prof)
    try:
        return fn(*args)
    finally:
        sys.setprofile(old)


# The message of the last exception a run gave: an expectation `error KIND:
# TEXT` holds where the kind is torch's and TEXT is in torch's message.
LAST_ERROR = [""]
# the line of the program (its `def` line 1) where the last run that failed
# failed, the innermost frame of the program's code (0: not known, or an error
# of the backward, a custom Function's included: no trace meets it)
LAST_ERROR_LINE = [0]


def run_case(case, args_text, items, want="result"):
    """(RESULT text, unclassified message or None).  want="layouts" gives
    instead the text of a `layouts` command: NAME=[SIZES]/[STRIDES]/OFFSET
    for each tensor bound to a name of the entry function at its return
    (an error of the run gives `error KIND`); want="trace" gives `ok` or
    the run's `error KIND` (see --commands in the module doc)."""
    name, params = entry_point(case.program)
    seed, over = parse_args(args_text, case)
    torch.set_grad_enabled(True)
    torch.manual_seed(0)
    frames = [None]
    in_backward = False
    try:
        args, env, leaves = build_inputs(case, params, seed, over)
        ns = {"torch": torch, "__name__": "program"}
        exec(compile(case.program, "<program %s>" % case.name, "exec"), ns)
        before = [a._version if isinstance(a, torch.Tensor) else None for a in args]
        r = call_watching(ns[name], args, frames)
        outs = list(r) if type(r) is tuple else [r]
        after = [a._version if isinstance(a, torch.Tensor) else None for a in args]
        forward_inputs = [fmt(a) if isinstance(a, torch.Tensor) else None for a in args]
        forward_outputs = [fmt(o) for o in outs]  # (as the call left them: a backward may write what they view)
        backward_ran = False
        in_backward = True  # (from here on an error is the backward's: LAST_ERROR_LINE 0)
        losses = [o.sum() for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
        if leaves and losses:
            loss = losses[0]
            for x in losses[1:]:
                loss = loss + x
            loss.backward()
            backward_ran = True
    except (NotImplementedError, BatteryError):
        raise
    except Exception as e:  # noqa: BLE001 - every failure of the program is a result
        LAST_ERROR[0] = str(e)
        LAST_ERROR_LINE[0] = 0
        tb = e.__traceback__
        while tb is not None and not in_backward:  # (a custom Function's backward is program text too)
            if tb.tb_frame.f_code.co_filename.startswith("<program "):
                LAST_ERROR_LINE[0] = tb.tb_lineno
            tb = tb.tb_next
        if want == "trace" and in_backward:  # (the trace is the forward's)
            return "ok", None
        kind = classify(e)
        if kind is None:
            return "error unclassified", "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        return "error " + kind, None
    if want == "trace":
        return "ok", None
    if want == "layouts":
        return "; ".join("%s=%s" % (k, layout(v)) for k, v in (frames[0] or {}).items()
                         if isinstance(v, torch.Tensor)), None
    res = []
    if "outputs" in items:
        res += ["o%d=%s" % (i, v) for i, v in enumerate(forward_outputs)]
    if "inputs" in items:
        res += ["%s=%s" % (p, v) for p, a, v in zip(params, args, forward_inputs) if isinstance(a, torch.Tensor)]
    if "bw" in items and backward_ran:
        res += ["bw %s=%s" % (p, fmt(a)) for p, a in zip(params, args) if isinstance(a, torch.Tensor)]
    if "grad" in items:
        for p in params:
            if p in leaves:
                g = leaves[p].grad
                res.append("grad %s=%s" % (p, "None" if g is None else fmt(g)))
    if "is" in items:
        for i, o in enumerate(outs):
            for p, a in zip(params, args):
                if isinstance(a, torch.Tensor) and o is a:
                    res.append("o%d is %s" % (i, p))
    if "version" in items:
        for p, a, b0, b1 in zip(params, args, before, after):
            if isinstance(a, torch.Tensor):
                res.append("version %s=%s" % (p, "same" if b0 == b1 else "bumped"))
    return "; ".join(res), None


# ---------------------------------------------------------------- comparing
class _Tok(str):
    pass


def parse_value(text):
    """A VALUE as Python data (nan and inf allowed), or None if unreadable."""
    try:
        return eval(text, {"__builtins__": {}}, {"nan": math.nan, "inf": math.inf,
                                                  "True": True, "False": False, "None": None,
                                                  "two": lambda a, b: [_Tok("two"), a, b]})
    except Exception:  # noqa: BLE001
        return _Tok(text)


def same_value(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, _Tok) or isinstance(b, _Tok):
        return str(a) == str(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return abs(a - b) <= max(1e-9 * max(abs(a), abs(b)), 1e-12)
    return a == b


def split_result(text):
    """{key: value text} of a RESULT; an error is {'error': KIND}."""
    text = text.strip()
    if text.startswith("error"):
        return {"error": text[5:].strip()}
    out = {}
    for item in text.split(";"):
        item = item.strip()
        if not item:
            continue
        m = re.fullmatch(r"(o\d+) is (\w+)", item)
        if m:
            out[item] = ""
            continue
        key, _, val = item.partition("=")
        out[key.strip()] = val.strip()
    return out


def compare(expected, got):
    """None when every item written in `expected` holds in `got`, else why not."""
    e, g = split_result(expected), split_result(got)
    if ":" in e.get("error", ""):
        kind, _, text = e["error"].partition(":")
        if g.get("error") == kind.strip() and text.strip() in LAST_ERROR[0]:
            return None
        return "expected %s, got %s (%s)" % (expected.strip(), got, LAST_ERROR[0].splitlines()[0] if LAST_ERROR[0] else "")
    if "error" in e or "error" in g:
        return None if e == g else "expected %s, got %s" % (expected.strip(), got)
    bad = []
    for k, v in e.items():
        if k not in g:
            bad.append("%s missing" % k)
        elif v and not same_value(parse_value(v), parse_value(g[k])):
            bad.append("%s: expected %s, got %s" % (k, v, g[k]))
    return "; ".join(bad) or None


# ---------------------------------------------------------------- main
def read_lines(path):
    if path == "-":
        return sys.stdin.read().splitlines(True)
    with open(path, encoding="utf-8") as fh:
        return fh.read().splitlines(True)


def parse_items(text):
    items = set()
    for w in text.split(","):
        w = w.strip()
        if w == "all":
            items |= set(ALL_ITEMS)
        elif w == "forward":
            items |= set(ALL_ITEMS) - {"grad", "bw"}
        elif w in ALL_ITEMS:
            items.add(w)
        else:
            raise SystemExit("prog_torch: unknown item %r (use %s, forward, all)" % (w, ",".join(ALL_ITEMS)))
    return items


def expected_text(raw):
    body, _ = strip_comment(raw.rstrip("\n"))
    return body[body.index("=>") + 2:].strip()


def results(path, lines, items, commands, status):
    """Yield (line index or None, case, args, RESULT) for every command run."""
    for case in parse_battery(lines):
        if case.program is None:
            for ln, word, _ in case.commands:
                if word in commands:
                    print("%s:%d: %s without a program" % (path, ln + 1, word), file=sys.stderr)
            continue
        todo = [(ln, w, a) for ln, w, a in case.commands if w in commands]
        if not todo:
            todo = [(None, "eager", "")]
        for ln, w, a in todo:
            where = "%s:%d" % (path, (case.program_line if ln is None else ln) + 1)
            if w in ("trace", "layouts") and a:
                print("%s: battery error: %s takes no arguments here" % (where, w), file=sys.stderr)
                status[0] = 2
                continue
            if w == "trace" and expected_text(lines[ln]) == "error data-dependent":
                # torch 1.13 cannot say it (no unbacked symbols): the
                # expectation is the generator's, kept as written.
                yield ln, case, a, None
                continue
            try:
                res, why = run_case(case, a, items, w if w in ("trace", "layouts") else "result")
            except NotImplementedError as e:
                print("%s: skipped: %s" % (where, e), file=sys.stderr)
                status[0] = 1
                continue
            except (BatteryError, SyntaxError, AssertionError, ValueError) as e:
                print("%s: battery error: %s" % (where, e), file=sys.stderr)
                status[0] = 2
                continue
            if why:
                print("%s: case %s: unclassified error: %s" % (where, case.name, why), file=sys.stderr)
                status[0] = max(status[0], 1)
            yield ln, case, a, res


def main(argv):
    items, commands = set(ALL_ITEMS), {"eager"}
    fill = out = None
    check = False
    files = []
    it = iter(argv)
    for a in it:
        if a == "--items":
            items = parse_items(next(it))
        elif a.startswith("--items="):
            items = parse_items(a[8:])
        elif a == "--commands":
            commands = set(next(it).split(","))
        elif a == "--fill":
            fill = next(it)
        elif a == "-o":
            out = next(it)
        elif a == "--check":
            check = True
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif a.startswith("--"):
            print("prog_torch: unknown option %s" % a, file=sys.stderr)
            return 2
        else:
            files.append(a)
    status = [0]
    if fill is not None:
        lines = read_lines(fill)
        new = list(lines)
        for ln, case, args, res in results(fill, lines, items, commands, status):
            if ln is None or res is None:
                continue
            raw = lines[ln]
            nl = "\n" if raw.endswith("\n") else ""
            body, comment = strip_comment(raw.rstrip("\n"))
            head = body[:body.index("=>")].rstrip()
            if res.startswith("error") and compare(body[body.index("=>") + 2:], res) is None:
                res = body[body.index("=>") + 2:].strip()  # `error KIND: TEXT` that torch's message bears out
            new[ln] = "%s => %s%s%s" % (head, res, "  " + comment if comment else "", nl)
        dest = out if out is not None else fill
        if dest == "-":
            sys.stdout.write("".join(new))
        else:
            tmp = dest + ".tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write("".join(new))
            os.replace(tmp, dest)
        return status[0]
    passed = failed = kept = 0
    for path in files or ["-"]:
        lines = read_lines(path)
        for ln, case, args, res in results(path, lines, items, commands, status):
            where = "%s:%d" % (path, (case.program_line if ln is None else ln) + 1)
            word = "eager" if ln is None else lines[ln].split()[0]
            if res is None:  # trace => error data-dependent: not torch's to say
                kept += 1
                if not check:
                    print("%s: %s => error data-dependent (kept: the generator's)" % (where, word))
                continue
            if not check:
                print("%s: %s%s => %s" % (where, word, " " + args if args else "", res))
                continue
            if ln is None:
                continue
            body, _ = strip_comment(lines[ln].rstrip("\n"))
            expected = body[body.index("=>") + 2:].strip()
            why = compare(expected, res)
            if why:
                failed += 1
                print("%s: case %s: %s: %s" % (where, case.name, word, why))
            else:
                passed += 1
    if check:
        print("%d passed, %d failed%s" % (passed, failed,
                                          ", %d not checked (trace => error data-dependent)" % kept
                                          if kept else ""))
        if failed:
            status[0] = max(status[0], 1)
    return status[0]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
