#!/usr/bin/python3
"""Random programs for the differential test of `eager` and of the capture
pipeline (`trace`, `run`, `layouts`) against PyTorch.

    prog_gen.py [--seed S] [--count N] [--grad] [--no-requires-grad] [--errors FRACTION]
                [--overrides FRACTION] [--eager-only] [--known-bugs] [--subclass]
                [--subclass-grad] [--cond-mutate] [--functions] [-o FILE]

Writes a battery (doc/battery.md, doc/program.md) of N cases to FILE
(default stdout).  Each case declares 1 to 3 tensor inputs (float64 mostly,
some int64, bool, float32; sizes 0..5 in 1 to 3 dims; some strided with
strides=/offset=; some requires_grad or requires_grad=leaf; now and then
a `backed` int; in 3 cases of 10, one or two aliased inputs `input d =
EXPR`: the very object of another input (`input d = a`, a duplicate) or a
chain of views of one; in 1 of 10, a tensor `w` no parameter takes, whose
views are inputs, `tensor w ...` + `input d = w[1].t()`), has a
`program` whose entry point runs 3 to 15 statements drawn from the
operators, views, reductions, joins, creations and in-place ops of
program.md (with chains of views of views, view/reshape/t/transpose/
permute/select/slice/narrow/diagonal/unsqueeze/squeeze/expand/as_strided,
named or written through at once by add_/mul_/sub_/div_/copy_/zero_/fill_/
clamp_/sin_; in-place writes and metadata mutations, t_/transpose_/
unsqueeze_/squeeze_/as_strided_, aimed at inputs one time in three;
`.data =`, `.data.mul_`, set_ onto inputs and intermediates, out= into
inputs; `with torch.no_grad():` and
`if x.shape[0] > 2:` blocks; diagonals with offsets, strided slices,
sizes made by // and %, and `if x.shape[0] <= k:` bounds, whose sizes the
ranges may decide: the size lint of programs.test checks they are folded),
and is followed by
    eager => RESULT
    eager 1 => RESULT
(and, for --overrides of the cases, `eager S NAME sizes=[...] => RESULT`,
left out where a write of that run would depend on its kernel's order:
OrderWatch)
and returns a local, maybe other tensors, in 3 cases of 10 an input itself,
in 2 of 10 a chain of views of an input (now and then one output twice),
with RESULT computed by torch through prog_torch.py: outputs, inputs after
the call, `oK is NAME` and `version NAME=same|bumped` items; --grad adds
the grad items;
--no-requires-grad declares no input that requires grad (so no backward
runs: the eager runs of shapeguard have no autograd yet).  Then, unless
--eager-only, the capture lines (capture_lines()):
    trace => ok                 where torch ran it (seed 0), followed by
    run => RESULT               the RESULT of `eager` (same items): the
    run 1 => RESULT             traced graph on the same inputs
    layouts => NAME=[SIZES]/[STRIDES]/OFFSET; ...   torch's layouts of the
                                entry function's tensors at its return
    trace => error data-dependent   where an `if` on a data-dependent value
                                runs (a size of a nonzero/masked_select
                                result, a value of .item()/.tolist(), or an
                                int computed from them: the F.dd flag)
    trace => error shape        where eager fails with a shape error (the
                                trace answers the same size questions at
                                the hints); other eager errors get no trace
                                line
--subclass declares some float64 inputs as `subclass NAME kind=two` (a
TwoTensor); --subclass-grad declares two or three inputs, the first a
TwoTensor and the second a tensor of its sizes that requires grad, so that
they meet (gradients that are TwoTensors); --cond-mutate adds torch.cond calls under no_grad whose branches
write their operand; --functions adds custom autograd Functions (a class
Fn(torch.autograd.Function) defined in the program, its backward what a
user might write, not always the derivative) applied to float64 tensors;
--cond-grad adds torch.cond calls with grad enabled whose branches neither
write nor return their operands.  All four are off by default here;
programs.test turns them on.

The constructs this generator once left out because they hit known bugs of
the compiled program (self_set_output_view, view_write_as_strided,
as_strided_view_write, data_set_alias_identity, expanded_input_write,
out_resize_views, out_resize_as_strided, as_strided_overlap_write,
written_view_input_layout, input_offset_as_strided, copy_layout_view,
hidden_base_as_strided, as_strided_gap) are fixed and generated again;
their reproducers are in tests/batteries/aot_found.battery.  Still left
out (marked SKIPPED in the source, note_empty_layout; --known-bugs writes
them): the layouts items of category empty_strides, where the strides of
an empty tensor whose size is data-dependent (nonzero's [0, 2]) differ
between a trace, which answers size questions size-obliviously (as
PyTorch's fake tensors do: a [u0, 2] result laid out for u0 >= 2), and an
eager run at size 0.

How programs are made: statements are drawn one at a time and each one is
run in torch at once (seed-0 inputs), so the generator knows the real
sizes, dtypes and aliasing of every name; a statement torch refuses is
dropped (the state is rebuilt by re-running the program so far) unless the
case was chosen to end in an error (--errors, default 0.1), when a statement
that fails with a cleanly classified error (shape, autograd, aliasing) ends
the body.  A finished program is run again by prog_torch for every RESULT;
a case torch cannot classify is thrown away.

Determinism: the values of program.md are multiples of 0.25 in [-2, 2].
Data-dependent values (b_dd): nonzero and masked_select of exact tensors of
numel >= 2, .item() and .tolist() of exact tensors, ints computed from their
sizes and values (A*u + B), and a few operators on such tensors.  Such names
are kept out of the other builders' operands (a sum over the data-dependent
dimension gives an ordinary tensor again).  An `if` over them compares with
the value at u=1, so that no range reasoning can decide it (u ranges over at
least [0, 2]); after such an `if`, a value is exact only if it is exact
whichever branch ran (seed 1 may take the other one).

Every name carries, structurally (valid at every seed), whether its values
are exact (dyadic rationals that float64, or float32, holds exactly), a
bound on their magnitude and their number of fractional bits.  Comparisons
(and so where's conditions) only take exact operands; divisors are powers
of two or `y.abs() + 1`; exp takes only small operands; float32 values only
go through + - * /, views, comparisons, where, clamp, abs/neg/relu and
amax/amin (no transcendental kernel, no reduction that may sum in another
order); `empty` is always filled in the same statement.  Magnitudes stay
below 1e4 (int64 cannot overflow).

Only the standard library and torch (Debian's python3-torch 1.13 under
/usr/bin/python3).  1.13: squeeze takes one dim (tuples of dims came in
2.0), so only squeeze() and squeeze(d) are generated.
"""
import itertools
import math
import os
import random
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import prog_torch  # noqa: E402

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

# how often a custom Function's backward writes (SG_PROG_BW_WRITES overrides it, for runs that stress them)
BW_WRITES = float(os.environ.get("SG_PROG_BW_WRITES", "0.2"))
BIG = 1e4


class F:
    """Structural facts about the values of a name.  dd: None, or how the
    name is data-dependent in a trace (an unbacked symbol u behind it):
      ("t", MULTS)    a tensor whose size d is MULTS[d]*u (0: a static size);
                      one dd dimension, u ranging over at least [0, 2]
      ("i", A, B)     a Python int A*u + B, u ranging over at least [0, 2]
      ("f",) ("b",)   a Python float / bool from .item()
      ("l", KIND, N)  a list of N numbers from .tolist(), KIND "i", "f" or "b"
    Names with dd are kept out of the operand pool of the other builders."""
    __slots__ = ("exact", "bound", "fbits", "dd")

    def __init__(self, exact=True, bound=2.0, fbits=2, dd=None):
        self.exact, self.bound, self.fbits, self.dd = exact, float(bound), fbits, dd

    def __repr__(self):
        return "F(%s, %g, %d, %s)" % (self.exact, self.bound, self.fbits, self.dd)


def fits(bound, fbits, dtype):
    """A value of this bound and fractional bits is exact in dtype."""
    mant = 22 if dtype == torch.float32 else 50
    return math.log2(max(bound, 1.0)) + fbits <= mant


def combine(a, b):
    return F(a.exact and b.exact, max(a.bound, b.bound), max(a.fbits, b.fbits))


def mk(dtype, exact, bound, fbits):
    if dtype in (torch.int64, torch.bool):
        return F(True, bound, 0)
    return F(exact and fits(bound, fbits, dtype), bound, fbits if exact else 0)


SCALARS = [(2, 0), (0.5, 1), (-1, 0), (3, 0), (0.25, 2), (1.5, 1), (-2, 0), (1, 0)]
DIVISORS = [(2, 1), (4, 2), (0.5, 0), (-2, 1)]


def contiguous_strides(sizes):
    st, acc = [], 1
    for n in reversed(list(sizes)):
        st.insert(0, acc)
        acc *= max(n, 1)
    return st


class Failed(Exception):
    pass


class CaseGen:
    requires_grad_inputs = True  # --no-requires-grad: no input requires grad (no backward runs)

    def __init__(self, rng, want_error, grad_items):
        self.r = rng
        self.want_error = want_error
        self.grad_items = grad_items
        self.decls = []       # battery lines before `program`
        self.params = []
        self.flags = {}       # name -> F
        self.body = []        # rendered lines (indent, text)
        self.snips = []       # code that replays the live state
        self.pool = []        # names usable now
        self.nlocal = 0
        self.errored = None
        self.case = None
        self.dd_if = None     # the first `if` on a data-dependent value: "i", "f" or "b" (its kind)
        self.dd_if_at = None  # its index in body
        self.dd_kind = None
        self.no_layout = set()  # names without a layouts item (note_empty_layout)

    # ------------------------------------------------------------ inputs
    def sizes(self, ndim):
        return [self.r.choice([0, 1, 1, 2, 2, 3, 3, 3, 4, 4, 5, 5, 2, 3, 4]) for _ in range(ndim)]

    def gen_inputs(self):
        r = self.r
        n = r.choice([1, 1, 2, 2, 2, 3] if not SUBCLASS_GRAD else [2, 2, 2, 3])
        names = ["a", "b", "c"][:n]
        tensors = []
        for k, name in enumerate(names):
            dt = r.choices(["float64", "float32", "int64", "bool"], [75, 9, 9, 7])[0]
            ndim = r.choice([1, 2, 2, 2, 3, 3])
            sizes = self.sizes(ndim)
            if SUBCLASS_GRAD and k < 2:  # --subclass-grad: a TwoTensor, then a tensor that requires grad
                dt = "float64"
            if SUBCLASS_GRAD and tensors and (k == 1 or r.random() < 0.5):  # an earlier input's sizes
                _, ndim, sizes = r.choice(tensors)
                sizes = list(sizes)
            words = ["tensor", name, "sizes=%s" % sizes]
            sub = SUBCLASS and dt == "float64" and r.random() < 0.3
            if SUBCLASS_GRAD and k < 2:
                sub = k == 0
            if sub:  # --subclass: a TwoTensor input (program.md "Values")
                words = ["subclass", name, "kind=two", "sizes=%s" % sizes]
            if r.random() < 0.18 and ndim >= 2:
                # a transposed or gapped layout, maybe with an offset
                acc = 1
                order = list(range(ndim))
                if r.random() < 0.6:
                    r.shuffle(order)
                gap = r.choice([1, 1, 2])
                st = [0] * ndim
                for d in reversed(order):
                    st[d] = acc
                    acc *= max(sizes[d], 1) * (gap if d == order[-1] else 1)
                words.append("strides=%s" % st)
                off = r.choice([0, 1, 2, 3])
                if off:
                    words.append("offset=%d" % off)
            elif r.random() < 0.05:
                words.append("offset=%d" % r.choice([1, 2]))
            if dt != "float64":
                words.append("dtype=" + dt)
            if sub:  # contiguous (battery.md's inner tensors of a strided one are another matter)
                words = [w for w in words if not w.startswith(("strides=", "offset="))]
            fl = F(True, 8 if dt == "int64" else (1 if dt == "bool" else 2), 0 if dt in ("int64", "bool") else 2)
            if dt == "float64" and (r.random() < 0.25 or (SUBCLASS_GRAD and k == 1)):
                rg = r.choice(["requires_grad", "requires_grad=leaf"])
                if self.requires_grad_inputs and not sub:  # the same random stream either way
                    words.append(rg)
            self.decls.append(" ".join(words))
            self.flags[name] = fl
            tensors.append((name, ndim, sizes))
        params = list(names)
        # A tensor no parameter takes, whose views are inputs (a storage the
        # caller holds and passes only through views of it).
        hidden = None
        if r.random() < 0.1:
            hidden = "w"
            sizes = self.sizes(r.choice([2, 2, 3]))
            dt = r.choices(["float64", "int64"], [85, 15])[0]
            self.decls.append("tensor w sizes=%s%s" % (sizes, "" if dt == "float64" else " dtype=" + dt))
            self.flags["w"] = F(True, 8 if dt == "int64" else 2, 0 if dt == "int64" else 2)
        # aliased inputs: duplicates (`input d = a`, the very object) and
        # views, of views, of an input or of the hidden tensor
        k = r.choices([0, 1, 2], [70, 20, 10])[0] if hidden is None else r.choice([1, 2, 2])
        if k:
            self.case = self.case_of(self.decls)
            _, env, _ = prog_torch.build_inputs(self.case, [], 0, {})
            self.ns = dict(env, torch=torch)
            bases = names + ([hidden] * 3 if hidden else [])
            for nm in ["d", "e"][:k]:
                base = r.choice(bases)
                if r.random() < 0.2 and base != hidden:
                    expr = base
                else:
                    got = self.view_chain(base, r.choice([1, 1, 1, 2, 2, 3]))
                    if got is None:
                        continue
                    expr = got[0]
                self.decls.append("input %s = %s" % (nm, expr))
                self.flags[nm] = self.flags[base]
                params.append(nm)
                bases.append(nm)
                self.case = self.case_of(self.decls)
                _, env, _ = prog_torch.build_inputs(self.case, [], 0, {})
                self.ns = dict(env, torch=torch)
        if r.random() < 0.08:
            self.decls.append("backed n = %d" % r.choice([1, 2, 3, 4]))
            self.flags["n"] = F(True, 4, 0)
            params.append("n")
        if r.random() < 0.3:
            r.shuffle(params)
        self.params = params
        self.case = self.case_of(self.decls)
        self.pool = [p for p in params]
        self.rebuild()

    @staticmethod
    def case_of(decls):
        """A prog_torch.Case of these declaration lines."""
        case = prog_torch.Case("gen", 0)
        for line in decls:
            w, _, rest = line.partition(" ")
            if w == "tensor":
                nm, d = prog_torch.parse_tensor(rest, 0)
                case.decls.append(("tensor", nm, d))
            elif w == "subclass":
                nm, d = prog_torch.parse_subclass(rest, 0)
                case.decls.append(("subclass", nm, d))
            elif w == "input":
                nm, _, e = rest.partition(" = ")
                case.decls.append(("input", nm, {"expr": e}))
            else:
                case.decls.append(("backed", "n", {"hint": int(rest.split("=")[1])}))
        return case

    # ------------------------------------------------------------ live state
    def rebuild(self):
        torch.set_grad_enabled(True)
        args, _, _ = prog_torch.build_inputs(self.case, self.params, 0, {})
        self.ns = {"torch": torch}
        self.ns.update(zip(self.params, args))
        for s in self.snips:
            exec(s, self.ns)

    def T(self, name):
        v = self.ns.get(name)
        return v if isinstance(v, torch.Tensor) else None

    def tensors(self, pred=None):
        out = []
        for n in self.pool:
            t = self.T(n)
            if t is not None and self.flags[n].dd is None and (pred is None or pred(t, self.flags[n])):
                out.append(n)
        return out

    def dd_names(self, kinds):
        return [n for n in self.pool if self.flags[n].dd is not None and self.flags[n].dd[0] in kinds]

    def new_name(self):
        self.nlocal += 1
        return "t%d" % (self.nlocal - 1)

    def storage_key(self, t):
        if isinstance(t, prog_torch.TwoTensor):  # a TwoTensor's memory is its inner tensors' (a stands for both)
            t = t.a
        try:
            return t.storage().data_ptr() if t.storage().size() else None
        except Exception:  # noqa: BLE001
            return None

    def write_through(self, name, fl, tensor=None):
        """An in-place write of values `fl` into name's storage (or, given
        tensor, into that tensor's: a chain of views written through)."""
        tt = self.T(name) if tensor is None else tensor
        key = self.storage_key(tt)
        for n in list(self.flags):
            t = self.T(n)
            if n == name or (key is not None and t is not None and self.storage_key(t) == key):
                dd = self.flags[n].dd
                self.flags[n] = combine(self.flags[n], fl)
                self.flags[n].dd = dd

    # ------------------------------------------------------------ statements
    def attempt(self, code, post, ctx):
        """Run one statement live; True if it is kept."""
        snip = code if not ctx["nograd"] else "with torch.no_grad():\n    " + code
        if SUBCLASS:  # before it runs: torch 1.13 may crash on what the language leaves out
            two = subclass_names(self.decls)
            lines = [ln for sn in self.snips for ln in sn.split("\n")]  # what ran so far, in order
            if two and (any(subclass_line_left_out(two, line, self.decls) for line in lines) or
                        any(subclass_line_left_out(two, line, self.decls) for line in code.split("\n"))):
                return False
        try:
            exec(snip, self.ns)
        except Exception as e:  # noqa: BLE001
            kind = prog_torch.classify(e)
            self.rebuild()
            if kind in ("shape", "autograd", "aliasing") and self.want_error and self.errored is None \
                    and len(self.body) >= 2:
                self.errored = kind
                self.body.append((ctx["indent"], code))
                return True
            return False
        # The value must be one deterministic tensor (or tuple of them).
        if post and post() is False:  # post refuses the statement
            self.rebuild()
            return False
        self.note_empty_layout(code)
        self.snips.append(snip)
        self.body.append((ctx["indent"], code))
        return True

    def note_empty_layout(self, code):
        """SKIPPED (category empty_strides, not counted as a bug): a new
        tensor with a dimension of size 0 or 1 computed from an operand with
        one too whose strides are not the contiguous ones gets strides that
        are TensorIterator's arbitrary choice for such dimensions, which a
        trace makes size-obliviously where the size is data-dependent (as
        PyTorch's fake tensors do: nonzero's [u0, 2]/[1, u0] is no
        contiguous tensor for it), and torch 1.13's eager run with the size
        it has (nonzero's empty [0, 2]/[1, 0] result plus 1: torch [2, 1],
        shapeguard [1, 0]; its [1, 2]/[1, 1] one negated: torch [2, 1],
        shapeguard [1, 1]): no layouts item for it."""
        m = re.match(r"(t\d+) = (.*)$", code)
        if not m or KNOWN_BUGS:
            return
        t = self.T(m.group(1))
        if t is None or not any(sz <= 1 for sz in t.shape):
            return
        for n in re.findall(r"\b[a-z]\w*\b", m.group(2)):
            o = self.T(n)
            if o is None:
                continue
            # an empty operand, or one of data-dependent size with a size 0 or 1 (or one left out
            # itself: t4 = t3.t() of t3 = -nonzero(...) takes its strides)
            dd = n in self.flags and self.flags[n].dd is not None and self.flags[n].dd[0] == "t"
            odd = (o.numel() == 0 and t.numel() == 0) or (dd and any(sz <= 1 for sz in o.shape))
            if n in self.no_layout or (odd and list(o.stride()) != contiguous_strides(o.shape)):
                self.no_layout.add(m.group(1))
                return

    def scalar(self):
        return self.r.choice(SCALARS)

    def fmt_s(self, s):
        return repr(s)

    def pick(self, names):
        """A name, the later (more recent) ones more likely."""
        if not names:
            return None
        return self.r.choices(names, [1 + i for i in range(len(names))])[0]

    # Each builder returns (code, post) or None.
    def b_binary(self):
        r = self.r
        x = self.pick(self.tensors(lambda t, f: t.dtype != torch.bool))
        if x is None:
            return None
        tx, fx = self.T(x), self.flags[x]
        op = r.choice(["add", "sub", "mul"])
        sym = {"add": "+", "sub": "-", "mul": "*"}[op]
        if r.random() < 0.35:
            s, sb = self.scalar()
            if op == "mul":
                fl = (abs(s) * fx.bound, fx.fbits + sb)
            else:
                fl = (fx.bound + abs(s), max(fx.fbits, sb))
            exact = fx.exact
            other = self.fmt_s(s)
            odt = None
            if tx.dtype == torch.int64 and isinstance(s, float):
                odt = torch.float64
        else:
            def ok(t, f):
                if t.dtype == torch.bool and op != "mul":
                    return False
                try:
                    torch.broadcast_shapes(tx.shape, t.shape)
                except RuntimeError:
                    return False
                return True
            y = self.pick(self.tensors(ok))
            if y is None:
                return None
            fy = self.flags[y]
            if op == "mul":
                fl = (fx.bound * fy.bound, fx.fbits + fy.fbits)
            else:
                fl = (fx.bound + fy.bound, max(fx.fbits, fy.fbits))
            exact = fx.exact and fy.exact
            other = y
            odt = torch.promote_types(tx.dtype, self.T(y).dtype)
        if fl[0] > BIG or ((not exact) and fl[0] > 100):
            return None
        dt = odt or tx.dtype
        if dt == torch.float32 and not (exact and fits(fl[0], fl[1], dt)):
            return None
        form = r.randrange(3)
        if form == 0:
            expr = "%s %s %s" % (x, sym, other)
        elif form == 1:
            expr = "%s.%s(%s)" % (x, op, other)
        else:
            expr = "torch.%s(%s, %s)" % (op, x, other)
        return self.assign(expr, lambda: mk(dt, exact, fl[0], fl[1]))

    def assign(self, expr, flags_fn):
        n = self.new_name()

        def post():
            self.flags[n] = flags_fn()
            self.pool.append(n)
        return "%s = %s" % (n, expr), post

    def b_div(self):
        r = self.r
        x = self.pick(self.tensors(lambda t, f: t.dtype != torch.bool))
        if x is None:
            return None
        tx, fx = self.T(x), self.flags[x]
        if r.random() < 0.7 or tx.dtype == torch.float32:
            s, sb = r.choice(DIVISORS)
            b = fx.bound / abs(s)
            fb = max(fx.fbits + sb, 0)
            expr = r.choice(["%s / %s", "%s.div(%s)", "torch.div(%s, %s)"]) % (x, self.fmt_s(s))
            dt = tx.dtype if tx.is_floating_point() else torch.float64
            return self.assign(expr, lambda: mk(dt, fx.exact, b, fb))
        y = self.pick(self.tensors(lambda t, f: t.dtype == torch.float64 and f.bound <= BIG))
        if y is None or tx.dtype != torch.float64:
            return None
        expr = r.choice(["%s / (%s.abs() + 1)", "torch.div(%s, %s.abs() + 1)", "%s / (%s.abs() + 0.5)"]) % (x, y)
        b = fx.bound * 2
        return self.assign(expr, lambda: F(False, b, 0))

    def b_unary(self):
        r = self.r
        x = self.pick(self.tensors(lambda t, f: t.dtype != torch.bool))
        if x is None:
            return None
        tx, fx = self.T(x), self.flags[x]
        f64 = tx.dtype == torch.float64
        ops = ["neg", "abs", "relu", "clamp", "clamp2", "negop"]
        if f64:
            ops += ["sin", "cos", "tanh", "sigmoid", "exp", "pow"]
        if tx.dtype != torch.float32 or fits(fx.bound ** 2, fx.fbits * 2, torch.float32):
            ops += ["pow"]
        op = r.choice(ops)
        dt = tx.dtype
        if op in ("sin", "cos", "tanh", "sigmoid"):
            expr = r.choice(["torch.%s(%s)", "%s.%s()"])
            expr = expr % ((op, x) if expr.startswith("torch") else (x, op))
            return self.assign(expr, lambda: F(False, 1, 0))
        if op == "exp":
            if fx.bound > 3:
                return None
            b = math.exp(fx.bound)
            return self.assign(r.choice(["torch.exp(%s)", "%s.exp()"]) % x, lambda: F(False, b, 0))
        if op == "pow":
            b = fx.bound ** 2
            if b > BIG:
                return None
            return self.assign(r.choice(["%s.pow(2)", "torch.pow(%s, 2)"]) % x,
                               lambda: mk(dt, fx.exact, b, fx.fbits * 2))
        if op == "clamp":
            lo, hi = r.choice([(-1, 1), (0, None), (None, 1.5), (-0.5, 0.5)])
            if tx.dtype == torch.int64 and (isinstance(lo, float) or isinstance(hi, float)):
                lo, hi = -1, 1
            args = []
            if lo is not None:
                args.append("min=%r" % lo)
            if hi is not None:
                args.append("max=%r" % hi)
            b = fx.bound if hi is None else min(fx.bound, max(abs(hi), abs(lo or 0)))
            form = r.choice(["%s.clamp(%s)", "torch.clamp(%s, %s)"])
            return self.assign(form % (x, ", ".join(args)), lambda: mk(dt, fx.exact, b, fx.fbits))
        if op == "clamp2":
            return self.assign("%s.clamp(-1, 1)" % x, lambda: mk(dt, fx.exact, min(fx.bound, 1), fx.fbits))
        if op == "negop":
            return self.assign("-%s" % x, lambda: fx)
        return self.assign(r.choice(["torch.%s(%s)" % (op, x), "%s.%s()" % (x, op)]), lambda: fx)

    def b_compare(self):
        r = self.r
        x = self.pick(self.tensors(lambda t, f: f.exact and t.dtype != torch.bool))
        if x is None:
            return None
        tx = self.T(x)
        op = r.choice(["eq", "ne", "lt", "le", "gt", "ge"])
        sym = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[op]
        if r.random() < 0.5:
            other = repr(r.choice([0, 0.5, -0.25, 1, 0.0]))
        else:
            def ok(t, f):
                if not f.exact or t.dtype == torch.bool:
                    return False
                try:
                    torch.broadcast_shapes(tx.shape, t.shape)
                except RuntimeError:
                    return False
                return True
            other = self.pick(self.tensors(ok))
            if other is None:
                return None
        form = r.randrange(3)
        expr = ["%s %s %s" % (x, sym, other), "%s.%s(%s)" % (x, op, other),
                "torch.%s(%s, %s)" % (op, x, other)][form]
        return self.assign(expr, lambda: F(True, 1, 0))

    def b_where(self):
        r = self.r
        c = self.pick(self.tensors(lambda t, f: t.dtype == torch.bool))
        if c is None:
            return None
        tc = self.T(c)

        def ok(t, f):
            if t.dtype == torch.bool:
                return False
            try:
                torch.broadcast_shapes(tc.shape, t.shape)
            except RuntimeError:
                return False
            return True
        x = self.pick(self.tensors(ok))
        if x is None:
            return None
        fx = self.flags[x]
        if r.random() < 0.5:
            y = repr(r.choice([0.0, 1.0, -0.5]))
            fy = F(True, 1, 1)
        else:
            y = self.pick(self.tensors(ok))
            fy = self.flags[y]
        dt = torch.promote_types(self.T(x).dtype, self.T(y).dtype) if y in self.ns else self.T(x).dtype
        if dt == torch.int64 and "." in y:
            dt = torch.float64
        fl = combine(fx, fy)
        return self.assign("torch.where(%s, %s, %s)" % (c, x, y), lambda: mk(dt, fl.exact, fl.bound, fl.fbits))

    def b_view(self):
        r = self.r
        x = self.pick(self.tensors())
        if x is None:
            return None
        t = self.T(x)
        sh = list(t.shape)
        nd = len(sh)
        cands = []
        n = t.numel()
        # view / reshape to another factorization
        shapes = [[n], [1, n], [n, 1]]
        for a in range(2, 6):
            if n % a == 0 and n:
                shapes += [[a, n // a], [n // a, a], [a, -1]]
        if n == 0:
            shapes += [[0, 3], [2, 0]]
        ns_ = r.choice(shapes)
        cands.append("%s.reshape(%s)" % (x, ", ".join(map(str, ns_))))
        cands.append("%s.view(%s)" % (x, ", ".join(map(str, ns_))))
        cands.append("%s.reshape(%s)" % (x, ns_))
        cands.append("%s.flatten()" % x)
        cands.append("%s.detach()" % x)
        cands.append("%s.data" % x)
        if nd >= 1:
            d = r.randrange(nd)
            cands.append("%s.unsqueeze(%d)" % (x, r.randrange(-nd - 1, nd + 1)))
            cands.append("%s.squeeze(%d)" % (x, d))
            cands.append("%s.squeeze()" % x)
            if sh[d] > 0:
                i = r.randrange(sh[d])
                cands.append("%s.select(%d, %d)" % (x, d, i))
                cands.append("%s[%d]" % (x, r.randrange(sh[0])) if sh[0] else "%s[0]" % x)
            a = r.randrange(0, sh[d] + 1)
            b = r.randrange(a, sh[d] + 2)
            cands.append("%s.narrow(%d, %d, %d)" % (x, d, a, min(b, sh[d]) - a))
            cands.append("%s[%d:%d]" % (x, a, b))
            cands.append("%s[..., %d:%d:%d]" % (x, a, b, r.choice([1, 2])))
            cands.append("%s[%d:]" % (x, r.randrange(0, 3)))
            # strided slices: sizes (len + step - 1) // step, which a range
            # the guards gave (`if x.shape[0] <= k:`) may decide
            cands.append("%s[%d::%d]" % (x, r.randrange(0, 3), r.choice([2, 3, 4, 6])))
            # expand: a new leading dim, size-1 dims grown
            tgt = [r.choice([s, 3]) if s == 1 else s for s in sh]
            if r.random() < 0.5:
                tgt = [2] + tgt
            cands.append("%s.expand(%s)" % (x, ", ".join(map(str, tgt))))
            if sh[0] > 0:
                cands.append("%s.unbind(0)" % x)
        if nd >= 2:
            d0, d1 = r.sample(range(nd), 2)
            cands.append("%s.transpose(%d, %d)" % (x, d0, d1))
            perm = list(range(nd))
            r.shuffle(perm)
            cands.append("%s.permute(%s)" % (x, ", ".join(map(str, perm))))
            cands.append("torch.permute(%s, %s)" % (x, tuple(perm)))
            cands.append("%s.diagonal()" % x)
            cands.append("%s.diagonal(0, %d, %d)" % (x, d0, d1))
            # offsets: max(min(a, b - offset), 0), folded where the ranges order it
            cands.append("%s.diagonal(%d)" % (x, r.choice([-2, -1, 1, 2])))
            cands.append("%s.diagonal(%d, %d, %d)" % (x, r.choice([-1, 1, 3]), d1, d0))
            cands.append("%s[:, %d]" % (x, r.randrange(max(sh[1], 1))))
            cands.append("%s.flatten(0, 1)" % x)
            if nd == 2:
                cands.append("%s.t()" % x)
                cands.append("torch.t(%s)" % x)
        if nd <= 2:
            cands.append("%s.t()" % x)
        # as_strided within the storage
        ssz = self.storage_size(t)
        if ssz > 0:
            k = r.randrange(1, 3)
            sizes = [r.randrange(1, 4) for _ in range(k)]
            strides = [r.choice([0, 1, 2, 3]) for _ in range(k)]
            span = sum((s - 1) * st for s, st in zip(sizes, strides))
            if span < ssz:
                off = r.randrange(0, ssz - span)
                cands.append("%s.as_strided(%s, %s, %d)" % (x, sizes, strides, off))
                cands.append("torch.as_strided(%s, %s, %s)" % (x, tuple(sizes), tuple(strides)))
        expr = r.choice(cands)
        fx = self.flags[x]
        if expr.endswith(".unbind(0)"):
            k = sh[0]
            if k < 2 or k > 3:
                return None
            names = [self.new_name() for _ in range(k)]

            def post():
                for nm in names:
                    self.flags[nm] = fx
                    self.pool.append(nm)
            return "%s = %s" % (", ".join(names), expr), post
        return self.assign(expr, lambda: fx)

    def b_reduce(self):
        r = self.r
        x = self.pick(self.tensors(lambda t, f: t.dtype != torch.float32 or r.random() < 0.3))
        if x is None:
            return None
        t, fx = self.T(x), self.flags[x]
        op = r.choice(["sum", "sum", "mean", "amax", "amin"])
        if t.dtype == torch.float32 and op in ("sum", "mean"):
            op = r.choice(["amax", "amin"])
        if (t.dtype == torch.bool and op != "sum") or (t.dtype == torch.int64 and op == "mean"):
            op = "sum"
        nd = t.dim()
        args = []
        if nd and (op in ("amax", "amin") or r.random() < 0.7):
            d = r.randrange(-nd, nd)
            if r.random() < 0.2 and nd >= 2:
                args.append("dim=%s" % str([0, nd - 1]) if r.random() < 0.5 else "dim=(0, 1)")
            else:
                args.append(r.choice(["%d", "dim=%d"]) % d)
            if r.random() < 0.4:
                args.append("keepdim=%s" % r.choice(["True", "False"]))
        form = r.randrange(2)
        expr = ("%s.%s(%s)" % (x, op, ", ".join(args)) if form == 0
                else "torch.%s(%s)" % (op, ", ".join([x] + args)))
        if op == "sum":
            b = fx.bound * 125
            dt = torch.int64 if t.dtype == torch.bool else t.dtype
            if b > BIG * 10 or (not fx.exact and b > 1000):
                return None
            return self.assign(expr, lambda: mk(dt, fx.exact, b, fx.fbits))
        if op == "mean":
            return self.assign(expr, lambda: F(False, fx.bound, 0))
        return self.assign(expr, lambda: fx)

    def b_matmul(self):
        r = self.r
        xs = self.tensors(lambda t, f: 1 <= t.dim() <= 2 and t.dtype in (torch.float64, torch.int64) and f.bound <= 50)
        x = self.pick(xs)
        if x is None:
            return None
        tx, fx = self.T(x), self.flags[x]
        k = tx.shape[-1]

        def ok(t, f):
            return (1 <= t.dim() <= 2 and t.dtype == tx.dtype and f.bound <= 50
                    and t.shape[0 if t.dim() == 1 else -2] == k)
        ys = self.tensors(ok)
        if ys and r.random() < 0.7:
            y = self.pick(ys)
            fy = self.flags[y]
            form = r.choice(["torch.matmul(%s, %s)", "%s.matmul(%s)"])
            if tx.dim() == 2 and self.T(y).dim() == 2:
                form = r.choice([form, "torch.mm(%s, %s)", "%s.mm(%s)"])
            expr = form % (x, y)
        elif tx.dim() == 2:
            fy = fx
            expr = r.choice(["torch.mm(%s, %s.t())", "torch.matmul(%s.t(), %s)"]) % (x, x)
        else:
            return None
        b = fx.bound * fy.bound * 5
        dt = tx.dtype
        fl = (fx.exact and fy.exact, b, fx.fbits + fy.fbits)
        if b > BIG:
            return None
        return self.assign(expr, lambda: mk(dt, *fl))

    def b_join(self):
        r = self.r
        x = self.pick(self.tensors(lambda t, f: t.dtype != torch.bool))
        if x is None:
            return None
        tx, fx = self.T(x), self.flags[x]
        nd = tx.dim()
        same = self.tensors(lambda t, f: t.shape == tx.shape and t.dtype == tx.dtype)
        parts = [x] + [self.pick(same) for _ in range(r.randrange(1, 3))]
        if r.random() < 0.3:
            parts[-1] = "%s * 2" % parts[-1]
        fl = fx
        for p in parts:
            fl = combine(fl, self.flags[p.split(" ")[0]])
        if "*" in parts[-1]:
            fl = F(fl.exact, fl.bound * 2, fl.fbits)
        dt = tx.dtype
        if r.random() < 0.5 and nd:
            expr = "torch.cat([%s], %s)" % (", ".join(parts), r.choice([str(r.randrange(nd)), "dim=%d" % r.randrange(-nd, nd)]))
        else:
            expr = "torch.stack([%s], %d)" % (", ".join(parts), r.randrange(nd + 1))
        return self.assign(expr, lambda: mk(dt, fl.exact, fl.bound, fl.fbits))

    def b_create(self):
        r = self.r
        x = self.pick(self.tensors())
        cands = []
        s1, s2 = r.randrange(0, 5), r.randrange(1, 5)
        v = r.choice([0.5, 1.5, -1, 2, -0.25])
        cands += [("torch.zeros(%d, %d)" % (s1, s2), F(True, 0, 0)),
                  ("torch.ones(%d)" % s2, F(True, 1, 0)),
                  ("torch.full((%d, %d), %r)" % (s2, s1, v), F(True, 2, 2)),
                  ("torch.arange(%d)" % (s1 + 1), F(True, 5, 0)),
                  ("torch.arange(%d, %d)" % (-s1, s2), F(True, 5, 0)),
                  ("torch.empty(%d, %d).fill_(%r)" % (s2, s1, v), F(True, 2, 2))]
        if x is not None:
            t, fx = self.T(x), self.flags[x]
            if t.dim():
                cands += [("torch.zeros(%s.shape[0], 2)" % x, F(True, 0, 0)),
                          ("torch.ones(%s.size(%d))" % (x, t.dim() - 1), F(True, 1, 0)),
                          ("torch.arange(%s.shape[0])" % x, F(True, 5, 0)),
                          ("torch.full(%s.shape, %r)" % (x, v), F(True, 2, 2)),
                          # sizes computed by // and %, which ranges may decide
                          ("torch.zeros(%s.shape[0] // %d)" % (x, r.choice([2, 3, 8])), F(True, 0, 0)),
                          ("torch.ones(%s.size(%d) %% %d, 2)" % (x, t.dim() - 1, r.choice([2, 4, 8])), F(True, 1, 0))]
            cands += [("torch.zeros_like(%s)" % x, F(True, 0, 0)),
                      ("torch.ones_like(%s)" % x, F(True, 1, 0)),
                      ("%s.clone()" % x, fx), ("torch.clone(%s)" % x, fx),
                      ("%s.contiguous()" % x, fx),
                      ("torch.empty_like(%s).copy_(%s)" % (x, x), fx),
                      ("torch.zeros(%s.shape)" % x, F(True, 0, 0))]
        expr, fl = r.choice(cands)
        return self.assign(expr, lambda: fl)

    # ------------------------------------------------------------ data-dependent values
    # nonzero / masked_select (a size becomes an unbacked symbol in a trace),
    # .item() / .tolist() (values become unbacked symbols), and what is
    # computed from them.  Every source is exact, so that which elements are
    # nonzero or selected, and the numbers read, are the same in every
    # implementation.  A size source's range must hold 0, 1 and 2 whatever
    # the guards (the tensor it counts has numel >= 2 at the hint: its
    # symbolic numel is then >= 2 too), so that the conditions gen_if writes
    # on them (value at u=1 compared with <, >, ==, ...) are undecidable.
    def b_dd(self):
        r = self.r
        form = r.choice(["nonzero", "nonzero", "masked", "masked", "item", "item", "tolist",
                         "derive", "derive", "ddop", "ddop"])
        if form == "nonzero":
            x = self.pick(self.tensors(lambda t, f: f.exact and t.dim() >= 1 and t.numel() >= 2))
            if x is None:
                return None
            t = self.T(x)
            expr = r.choice(["%s.nonzero()", "torch.nonzero(%s)"]) % x
            if r.random() < 0.3:  # out= of another rank: nothing to ask of its unbacked size
                expr = "torch.nonzero(%s, out=torch.zeros(%s, dtype=torch.int64))" % (x, r.choice(["0", "3"]))
            b = max(list(t.shape) + [1])
            return self.assign(expr, lambda: F(True, b, 0, ("t", (1, 0))))
        if form == "masked":
            x = self.pick(self.tensors(lambda t, f: f.exact and t.numel() >= 2))
            if x is None:
                return None
            tx, fx = self.T(x), self.flags[x]

            def ok(t, f):
                try:
                    return t.dtype == torch.bool and \
                        torch.Size(torch.broadcast_shapes(tx.shape, t.shape)) == tx.shape
                except RuntimeError:
                    return False
            m = self.pick(self.tensors(ok)) if r.random() < 0.5 else None
            if m is None:
                if tx.dtype == torch.bool:
                    m = x
                else:
                    m = "%s %s %s" % (x, r.choice([">", "!=", "<="]), r.choice(["0", "0.5", "-1"]))
            expr = r.choice(["%s.masked_select(%s)", "torch.masked_select(%s, %s)"]) % (x, m)
            if r.random() < 0.3:  # out= 1-d of stride 1: laid out alike, kept or resized
                expr = "torch.masked_select(%s, %s, out=torch.zeros(%s, dtype=%s))" % (
                    x, m, r.choice(["0", "2", "5"]), str(tx.dtype))
            return self.assign(expr, lambda: F(fx.exact, fx.bound, fx.fbits, ("t", (1,))))
        if form == "item":
            x = self.pick(self.tensors(lambda t, f: f.exact and t.dtype != torch.float32 and t.numel() >= 1))
            if x is None:
                return None
            t, fx = self.T(x), self.flags[x]
            if t.numel() == 1:
                src = x
            elif t.dtype == torch.bool:
                src = "%s.any()" % x if r.random() < 0.3 else "%s.sum()" % x
            elif r.random() < 0.5 and fx.bound * t.numel() <= BIG:
                src = "%s.sum()" % x
            else:
                src = "%s.%s()" % (x, r.choice(["amax", "amin"]))
            if src.endswith(".any()"):
                return None  # (any is not in program.md's operator list)
            expr = "%s.item()" % src
            kind = {torch.int64: "i", torch.bool: "b"}.get(t.dtype, "f")
            if src.endswith(".sum()") and t.dtype == torch.bool:
                kind = "i"
            dd = ("i", 1, 0) if kind == "i" else (kind,)
            return self.assign(expr, lambda: F(True, BIG, fx.fbits, dd))
        if form == "tolist":
            x = self.pick(self.tensors(lambda t, f: f.exact and t.dtype != torch.float32 and t.dim() == 1
                                       and 1 <= t.numel() <= 5))
            if x is None:
                return None
            t = self.T(x)
            kind = {torch.int64: "i", torch.bool: "b"}.get(t.dtype, "f")
            n = t.numel()
            return self.assign("%s.tolist()" % x, lambda: F(True, BIG, 0, ("l", kind, n)))
        if form == "derive":
            got = self.dd_int()
            if got is None:
                return None
            text, a, b = got
            m, c = r.choice([(1, 0), (2, 0), (1, 1), (3, -2), (-1, 4)])
            if (m, c) == (1, 0):
                expr = text
            elif m == 1:
                expr = "%s + %d" % (text, c)
            elif m == -1:
                expr = "%d - %s" % (c, text)
            else:
                expr = "%s * %d %s %d" % (text, m, "+" if c >= 0 else "-", abs(c))
            return self.assign(expr, lambda: F(True, BIG, 0, ("i", a * m, b * m + c)))
        # ddop: an operator on a tensor with a data-dependent size
        x = self.pick(self.dd_names("t"))
        if x is None:
            return None
        t, fx = self.T(x), self.flags[x]
        mults = fx.dd[1]
        cands = [("%s * 2", mults, 2), ("%s + 1", mults, 1), ("%s.clone()", mults, 0), ("-%s", mults, 0)]
        if t.dim() == 2:
            cands += [("%s.t()", mults[::-1], 0), ("%s.transpose(0, 1)", mults[::-1], 0),
                      ("%s.reshape(-1)", (sum(mults) * max(t.shape[1 - mults.index(max(mults))], 0),), 0)]
        if t.dtype != torch.bool:
            # a sum over the data-dependent dimension: static sizes again
            d = [i for i, m in enumerate(mults) if m][0]
            if t.dtype != torch.float32 and fx.bound * 25 <= BIG:
                cands += [("%%s.sum(%d)" % d, None, 0), ("%s.sum()", None, 0)]
        expr, nm, grow = r.choice(cands)
        if nm is not None and 0 in nm and len(nm) == 1:
            return None  # a reshape of a tensor with a zero size: numel 0 is static
        if t.dtype == torch.bool and ("*" in expr or "+" in expr or expr.startswith("-")):
            return None
        if t.dtype == torch.float32 and not fits(fx.bound * 2 + 1, fx.fbits, torch.float32):
            return None
        dt = torch.int64 if t.dtype == torch.bool else t.dtype
        if nm is None:
            b = fx.bound * 25
            return self.assign(expr % x, lambda: mk(dt, fx.exact, b, fx.fbits))
        b = fx.bound * 2 + 1
        return self.assign(expr % x, lambda: F(fx.exact, b, fx.fbits, ("t", nm)))

    def dd_int(self):
        """(text, A, B): an int expression A*u + B over a data-dependent value
        (a size of a nonzero/masked_select result, an int from .item() or
        .tolist()), or None."""
        r = self.r
        cands = []
        for n in self.dd_names("til"):
            dd = self.flags[n].dd
            if dd[0] == "t":
                t = self.T(n)
                for d, m in enumerate(dd[1]):
                    if m:
                        cands.append((r.choice(["%s.shape[%d]", "%s.size(%d)"]) % (n, d), m, 0))
                        rest = 1
                        for e, s in enumerate(t.shape):
                            if e != d:
                                rest *= s
                        if rest:
                            cands.append(("%s.numel()" % n, m * rest, 0))
            elif dd[0] == "i":
                cands.append((n, dd[1], dd[2]))
            elif dd[1] == "i":
                cands.append(("%s[%d]" % (n, r.randrange(dd[2])), 1, 0))
        return r.choice(cands) if cands else None

    def dd_cond(self):
        """A condition over a data-dependent value that no range reasoning can
        decide: (text) or None."""
        r = self.r
        if r.random() < 0.3:
            fb = self.dd_names("fbl")
            fb = [n for n in fb if self.flags[n].dd[0] != "l" or self.flags[n].dd[1] != "i"]
            if fb:
                n = r.choice(fb)
                dd = self.flags[n].dd
                v = n if dd[0] != "l" else "%s[%d]" % (n, r.randrange(dd[2]))
                kind = dd[0] if dd[0] != "l" else dd[1]
                self.dd_kind = kind
                if kind == "b":
                    return r.choice(["%s", "not %s"]) % v
                return "%s %s %s" % (v, r.choice([">", "<", ">=", "<=", "==", "!="]), r.choice(["0", "0.5", "-1.25"]))
        got = self.dd_int()
        if got is None:
            return None
        text, a, b = got
        self.dd_kind = "i"
        return "%s %s %d" % (text, r.choice([">", "<", ">=", "<=", "==", "!="]), a + b)

    def overlaps(self, dst, src):
        """src reads memory that dst writes, other than element for element:
        the result would depend on the order the kernel goes in (torch
        refuses only the overlaps it can see, and answers in its own order
        otherwise)."""
        kd = self.storage_key(dst)
        if kd is None or kd != self.storage_key(src):
            return False
        return not (dst.shape == src.shape and dst.stride() == src.stride()
                    and dst.storage_offset() == src.storage_offset())

    @staticmethod
    def unsafe_dest(t):
        """Writing into t hits some memory twice, and torch does not refuse
        it (it refuses stride 0 over a size > 1, not other overlaps): the
        result would depend on the kernel's order."""
        if any(st == 0 and sz > 1 for sz, st in zip(t.shape, t.stride())):
            return False
        offs = set()
        for idx in itertools.product(*[range(n) for n in t.shape]):
            o = sum(i * st for i, st in zip(idx, t.stride()))
            if o in offs:
                return True
            offs.add(o)
        return False

    def value_into(self, t, fl_t):
        """A source for writing into t: (text, F) or None."""
        r = self.r

        def ok(s, f):
            if self.overlaps(t, s):
                return False
            if s.dtype == torch.bool and t.dtype != torch.bool:
                return False
            if s.is_floating_point() and not t.is_floating_point():
                return False
            try:
                return torch.broadcast_shapes(t.shape, s.shape) == t.shape
            except RuntimeError:
                return False
        if r.random() < 0.4:
            s, sb = self.scalar()
            if not t.is_floating_point():
                s, sb = int(s) or 1, 0
            return repr(s), F(True, abs(s), sb)
        y = self.pick(self.tensors(ok))
        if y is None:
            return None
        return y, self.flags[y]

    DATA_OPS = ("add_", "sub_", "mul_", "div_", "copy_", "zero_", "fill_", "clamp_", "sin_")

    def data_write(self, x, t, fx, op):
        """An in-place write of op (one of DATA_OPS) into the tensor t,
        written as the expression x (a name, or a chain of views of one):
        (code, F of the values written) or None."""
        r = self.r
        isf = t.is_floating_point()
        if t.dtype == torch.bool and op in ("add_", "sub_", "mul_", "div_", "clamp_", "sin_"):
            op = "copy_"
        if op in ("add_", "sub_", "mul_"):
            src = self.value_into(t, fx)
            if src is None:
                return None
            y, fy = src
            if op == "mul_":
                fl = (fx.bound * fy.bound, fx.fbits + fy.fbits)
            else:
                fl = (fx.bound + fy.bound, max(fx.fbits, fy.fbits))
            new = mk(t.dtype, fx.exact and fy.exact, *fl)
            if fl[0] > BIG or (not new.exact and fl[0] > 100):
                return None
            if t.dtype == torch.float32 and not new.exact:
                return None
            code = "%s.%s(%s)" % (x, op, y)
        elif op == "div_":
            if not isf:
                return None
            s, sb = r.choice(DIVISORS)
            new = mk(t.dtype, fx.exact, fx.bound / abs(s), fx.fbits + sb)
            code = "%s.div_(%r)" % (x, s)
        elif op == "copy_":
            src = self.value_into(t, fx)
            if src is None or src[0][0].isdigit() or src[0][0] == "-":
                return None
            y, new = src
            if t.dtype == torch.float32 and not (new.exact and fits(new.bound, new.fbits, t.dtype)):
                return None
            code = "%s.copy_(%s)" % (x, y)
        elif op == "zero_":
            new, code = F(True, 0, 0), "%s.zero_()" % x
        elif op == "fill_":
            v = r.choice([0.5, -1.5, 2, 1]) if isf else r.choice([1, -2, 3])
            if t.dtype == torch.bool:
                v = r.choice([True, False])
            new, code = F(True, 2, 1), "%s.fill_(%r)" % (x, v)
        elif op == "clamp_":
            new, code = mk(t.dtype, fx.exact, min(fx.bound, 1), fx.fbits), "%s.clamp_(-1, 1)" % x
        elif op == "sin_":
            if t.dtype != torch.float64:
                return None
            new, code = F(False, 1, 0), "%s.sin_()" % x
        return code, new

    def pick_target(self, pred=None):
        """A tensor to mutate: one of the entry function's tensor inputs
        (aliased ones included) more often than pick() would choose one, as
        the aot pipeline's analysis is about inputs."""
        names = self.tensors(pred)
        ins = [n for n in names if n in self.params]
        if ins and self.r.random() < 0.35:
            return self.r.choice(ins)
        return self.pick(names)

    def view_steps(self, t):
        """Suffixes that make a view of t (`.t()`, `[1:]`, ...): a list of
        text; some may fail in torch (the caller tries them)."""
        r = self.r
        sh = list(t.shape)
        nd = len(sh)
        n = t.numel()
        c = []
        if nd <= 2:
            c.append(".t()")
        if nd >= 2:
            d0, d1 = r.sample(range(nd), 2)
            c.append(".transpose(%d, %d)" % (d0, d1))
            perm = list(range(nd))
            r.shuffle(perm)
            c.append(".permute(%s)" % ", ".join(map(str, perm)))
            c.append(".diagonal(%s)" % r.choice(["", "1", "-1", "0, %d, %d" % (d1, d0)]))
        if nd >= 1:
            d = r.randrange(nd)
            if sh[d] > 0:
                c.append(".select(%d, %d)" % (d, r.randrange(sh[d])))
                if sh[0] > 0:
                    c.append("[%d]" % r.randrange(-sh[0], sh[0]))
            a = r.randrange(0, sh[d] + 1)
            c.append(".narrow(%d, %d, %d)" % (d, a, r.randrange(0, sh[d] - a + 1)))
            c.append("[%d:%d]" % (r.randrange(0, 2), r.randrange(1, max(sh[0], 1) + 2)))
            c.append("[%d::%d]" % (r.randrange(0, 2), r.choice([2, 3])))
            if nd >= 2:
                c.append("[:, %d:]" % r.randrange(0, 2))
            c.append(".squeeze(%d)" % d)
            tgt = [r.choice([s, 2]) if s == 1 else s for s in sh]
            c.append(".expand(%s)" % ", ".join(map(str, ([2] if r.random() < 0.4 else []) + tgt)))
        c.append(".squeeze()")
        c.append(".unsqueeze(%d)" % r.randrange(-nd - 1, nd + 1))
        c.append(".view(-1)")
        shapes = [[1, n], [n, 1]] + [[a, n // a] for a in range(2, 5) if n and n % a == 0]
        c.append(".view(%s)" % ", ".join(map(str, r.choice(shapes))))
        ssz = self.storage_size(t)
        if ssz:
            k = r.randrange(1, 3)
            sizes = [r.randrange(1, 4) for _ in range(k)]
            strides = [r.choice([0, 1, 2, 3]) for _ in range(k)]
            span = sum((z - 1) * st for z, st in zip(sizes, strides))
            off = r.randrange(0, ssz - span) if span < ssz else 0
            if span < ssz:
                c.append(".as_strided(%s, %s, %d)" % (sizes, strides, off))
        return c

    def storage_size(self, t):
        try:
            return t.storage().size()
        except Exception:  # noqa: BLE001 - a subclass has no storage of its own
            return 0

    def view_chain(self, x, steps):
        """x followed by up to `steps` views, each of the previous one (tried
        live): (text, tensor), or None when no view fits."""
        expr, t = x, self.T(x)
        for _ in range(steps):
            for _ in range(6):
                suf = self.r.choice(self.view_steps(t))
                try:
                    v = eval(expr + suf, self.ns)
                except Exception:  # noqa: BLE001
                    continue
                if isinstance(v, torch.Tensor):
                    expr, t = expr + suf, v
                    break
        return (expr, t) if expr != x else None

    def b_chain(self):
        """A chain of views of views (view/reshape/t/transpose/permute/select/
        slice/narrow/diagonal/unsqueeze/squeeze/expand/as_strided), named, or
        written through at once by an in-place operator."""
        r = self.r
        x = self.pick_target()
        if x is None:
            return None
        got = self.view_chain(x, r.choice([2, 2, 3, 3, 4]))
        if got is None:
            return None
        expr, t = got
        fx = self.flags[x]
        if r.random() < 0.4:
            return self.assign(expr, lambda: fx)
        if self.unsafe_dest(t):
            return None
        got = self.data_write(expr, t, fx, r.choice(self.DATA_OPS + ("add_", "mul_", "copy_")))
        if got is None:
            return None
        code, new = got

        def post():
            try:  # the chain again (torch may refuse to make it now: a view made under no_grad whose base
                t2 = eval(expr, self.ns)  # was written since with grad enabled); else x's own storage
            except RuntimeError:
                t2 = None
            self.write_through(x, new, t2)
        return code, post

    def b_cond(self):
        """--cond-mutate: a torch.cond under no_grad whose branches write
        their operand in place (PyTorch functionalizes it).  Both branches
        are traced: the operand has no dimension of stride 0 (mul_ or add_
        into it is refused whichever branch eager takes), and no dimension
        of size 1 where it is not contiguous: the branches' outputs (v * 2)
        then order their strides by a tie at the hint whose symbolic
        strides are no products of the sizes before them, which the merge
        refuses as PyTorch 2's _bound_stride does ("not a simple
        accumulative multiplication of sizes"), where eager runs."""
        r = self.r
        x = self.pick_target(lambda t, f: t.dtype == torch.float64 and t.dim() >= 1 and not self.unsafe_dest(t)
                             and f.bound <= 100
                             and not any(st == 0 and sz > 1 for sz, st in zip(t.shape, t.stride()))
                             and (list(t.stride()) == contiguous_strides(t.shape) or 1 not in t.shape))
        if x is None:
            return None
        t, fx = self.T(x), self.flags[x]
        k = self.nlocal
        # A sum as the predicate only where it is exact: a sum of inexact
        # values that is 0 in exact arithmetic (symmetric inputs) falls on
        # either side of 0 by the order of the additions, and torch's
        # vectorized order is not ours
        forms = ["%s.shape[0] > %d" % (x, r.randrange(0, 4))]
        if fx.exact:
            forms.append("%s.sum() > 0" % x)
        pred = r.choice(forms)
        w1, w2 = r.choice(["add_(1)", "mul_(2)", "zero_()"]), r.choice(["sub_(0.5)", "fill_(1.5)", "div_(2)"])
        n = self.new_name()
        code = ("def tb%d(v):\n    v.%s\n    return v * 2\n"
                "def fb%d(v):\n    v.%s\n    return v + 1\n"
                "with torch.no_grad():\n    %s = torch.cond(%s, tb%d, fb%d, (%s,))") % (
                    k, w1, k, w2, n, pred, k, k, x)
        new = F(fx.exact, fx.bound * 2 + 2, fx.fbits + 1)

        def post():
            self.write_through(x, new)
            self.flags[n] = F(new.exact, new.bound * 2 + 1, new.fbits)
            self.pool.append(n)
        return code, post

    # --cond-grad branch bodies: (expression over a (and b), bound of its
    # values from the operands' bounds); elementwise, so both branches give
    # the operands' shape
    COND_GRAD_FORMS = [("a.sin()", lambda x, y: 1), ("a * 2", lambda x, y: 2 * x), ("a + 1", lambda x, y: x + 1),
                       ("a.tanh() * 3", lambda x, y: 3), ("a * a", lambda x, y: x * x), ("(a * 3).cos()", lambda x, y: 1)]
    # (each reads a: b is of a's shape by value only, its sizes maybe other expressions that no guard
    # makes a's, so a branch of b alone beside one of a alone would merge into unbacked sizes)
    COND_GRAD_FORMS2 = [("a * b", lambda x, y: x * y), ("a + b.sin()", lambda x, y: x + 1),
                        ("a.sin() * b", lambda x, y: y)]

    def b_cond_grad(self):
        """--cond-grad: a torch.cond with grad enabled whose branches neither
        write nor return their operands (PyTorch refuses both while grad is
        enabled), over one or two float64 operands of one shape, a branch
        sometimes closing over a third tensor; the predicate a tensor (today's
        CondAutogradOp: every operand that requires grad takes a gradient,
        zeros where the branch taken does not reach it) or a bool over sizes
        (eager calls the branch: an operand one branch alone reaches is
        refused as unsupported)."""
        r = self.r
        # (contiguous operands with elements: elementwise branches of operands laid out otherwise,
        # or empty, order their outputs' strides differently, which the merge refuses as PyTorch
        # 2's does)
        plain = lambda t: not isinstance(t, prog_torch.TwoTensor) and t.numel() > 0 and \
            list(t.stride()) == contiguous_strides(t.shape)  # noqa: E731
        x = self.pick(self.tensors(lambda t, f: t.dtype == torch.float64 and t.dim() >= 1 and f.bound <= 100
                                   and plain(t)))
        if x is None:
            return None
        tx, fx = self.T(x), self.flags[x]
        same = lambda t, f: t.dtype == torch.float64 and t.shape == tx.shape and f.bound <= 100 and plain(t)  # noqa: E731
        y = self.pick(self.tensors(same)) if r.random() < 0.5 else None
        by = self.flags[y].bound if y is not None else 0
        forms = self.COND_GRAD_FORMS + (self.COND_GRAD_FORMS2 if y is not None else [])
        (e1, b1), (e2, b2) = r.choice(forms), r.choice(forms)
        w = self.pick(self.tensors(same)) if r.random() < 0.25 else None
        if w is not None and w not in (x, y):  # a closure: the true branch reads it too
            e1, b1 = "(%s) * %s" % (e1, w), (lambda f, bw: lambda p, q: f(p, q) * bw)(b1, self.flags[w].bound)
        bound = max(b1(fx.bound, by), b2(fx.bound, by))
        if bound > BIG:
            return None
        forms = ["%s.shape[0] > %d" % (x, r.randrange(0, 4))]
        if fx.exact:  # (a sum of inexact values near 0 falls either side by the order of the additions)
            forms.append("%s.sum() > 0" % x)
        pred = r.choice(forms)
        k = self.nlocal
        params = "a, b" if y is not None else "a"
        n = self.new_name()
        code = ("def tb%d(%s):\n    return %s\n"
                "def fb%d(%s):\n    return %s\n"
                "%s = torch.cond(%s, tb%d, fb%d, (%s,))") % (
                    k, params, e1, k, params, e2, n, pred, k, k, x if y is None else "%s, %s" % (x, y))

        def post():
            self.flags[n] = F(False, bound, 0)
            self.pool.append(n)
        return code, post

    # custom autograd Functions (--functions): (forward's return, backward's
    # return, what forward saves, two inputs, two outputs, the first output's
    # flags from the input's); the backward need not be the derivative (it is
    # what the user wrote, and autograd uses it)
    FUNCTION_FORMS = [
        ("a * ctx.c", "g1 * ctx.c", "", False, False, "scale"),
        ("a.sin()", "g1 * a.cos()", "a", False, False, "unit"),
        ("a * 2, a.sum()", "g1 * 2 + g2", "", False, True, "scale2"),
        ("a", "g1 * 0.5", "", False, False, "same"),
        ("a * b", "g1 * b, g1 * a", "a, b", True, False, "prod"),
        ("a.tanh()", "g1 * (1 - y * y)", "y", False, False, "unit"),
        ("a.clone(), a * 3", "g1 + g2 * 3", "", False, True, "scale3"),
        ("(a * ctx.c).sum(0)", "g1.unsqueeze(0).expand(ctx.shape) * ctx.c", "", False, False, "sum0"),
    ]

    def b_function(self):
        """--functions: a custom autograd Function defined in the program and
        applied to a float64 tensor (two for the forms of two inputs), under
        no_grad now and then."""
        r = self.r
        fwd, bwd, saved, two, twoout, kind = r.choice(self.FUNCTION_FORMS)
        # (a TwoTensor argument of a custom Function: error unsupported, the language leaves it out)
        plain = lambda t: not isinstance(t, prog_torch.TwoTensor)  # noqa: E731
        x = self.pick(self.tensors(lambda t, f: t.dtype == torch.float64 and t.dim() >= 1 and f.bound <= 100
                                   and plain(t)))
        if x is None:
            return None
        tx, fx = self.T(x), self.flags[x]
        if kind == "sum0" and (tx.dim() < 1 or tx.shape[0] == 0):
            return None
        y = None
        if two:
            y = self.pick(self.tensors(lambda t, f: t.dtype == torch.float64 and t.shape == tx.shape and
                                       f.bound <= 100 and plain(t)))
            if y is None:
                return None
        c = r.choice([2, 0.5, -1, 3])
        k = self.nlocal
        params = "ctx, a, b" if two else "ctx, a"
        grads = "ctx, g1, g2" if twoout else "ctx, g1"
        lines = ["class Fn%d(torch.autograd.Function):" % k,
                 "    @staticmethod",
                 "    def forward(%s):" % params,
                 "        ctx.c = %r" % c]
        if kind == "sum0":
            lines.append("        ctx.shape = a.shape")
        if saved == "y":
            lines += ["        y = %s" % fwd, "        ctx.save_for_backward(y)", "        return y"]
        else:
            if saved:
                lines.append("        ctx.save_for_backward(%s)" % saved)
            lines.append("        return %s" % fwd)
        lines += ["", "    @staticmethod", "    def backward(%s):" % grads]
        if saved == "y":
            lines.append("        y, = ctx.saved_tensors")
        elif saved:
            lines.append("        %s = ctx.saved_tensors" % (saved + ("," if "," not in saved else "")))
        # a write in the backward now and then (issue 21's mutations in the backward): of the
        # gradient it is given, or of a float64 input of the program it closes over; its effect
        # shows in the gradients and the bw items only (the live generation runs no backward)
        if r.random() < BW_WRITES:
            ins = [n for n in self.tensors(lambda t, f: t.dtype == torch.float64 and plain(t)) if n in self.params]
            if ins and r.random() < 0.5:
                lines += ["        with torch.no_grad():",
                          "            %s.mul_(%r)" % (r.choice(ins), r.choice([2, 0.5, -1]))]
            else:
                lines.append("        g1.mul_(%r)" % r.choice([2, 0.5]))
        lines.append("        return %s" % bwd)
        outs = [self.new_name()] + ([self.new_name()] if twoout else [])
        call = "%s = Fn%d.apply(%s)" % (", ".join(outs), k, x if not two else "%s, %s" % (x, y))
        if r.random() < 0.15:
            lines += ["with torch.no_grad():", "    " + call]
        else:
            lines.append(call)
        b = fx.bound if not two else fx.bound * self.flags[y].bound
        if kind == "scale":
            first = F(fx.exact, fx.bound * abs(c), fx.fbits + 1)
        elif kind == "unit":
            first = F(False, 1, 0)
        elif kind in ("scale2", "scale3"):
            first = F(fx.exact, fx.bound * 3, fx.fbits)
        elif kind == "prod":
            first = F(False, b, 0)
        elif kind == "sum0":
            first = F(False, fx.bound * abs(c) * max(1, tx.shape[0]), 0)
        else:
            first = fx
        if first.bound > BIG:
            return None

        def post():
            self.flags[outs[0]] = first
            self.pool.append(outs[0])
            if twoout:
                self.flags[outs[1]] = F(False, fx.bound * max(1, tx.numel()) * 3, 0)
                self.pool.append(outs[1])
        return "\n".join(lines), post

    def b_inplace(self):
        r = self.r
        x = self.pick_target(lambda t, f: not self.unsafe_dest(t))
        if x is None:
            return None
        t, fx = self.T(x), self.flags[x]
        isf = t.is_floating_point()
        nd = t.dim()
        op = r.choice(["add_", "sub_", "mul_", "div_", "copy_", "zero_", "fill_", "clamp_", "sin_",
                       "t_", "transpose_", "unsqueeze_", "squeeze_", "set_", "out", "data_set",
                       "data_mut", "add_", "mul_", "copy_", "as_strided_"])
        if t.dtype == torch.bool and op in ("add_", "sub_", "mul_", "div_", "clamp_", "sin_"):
            op = "copy_"
        if op in self.DATA_OPS:
            got = self.data_write(x, t, fx, op)
            if got is None:
                return None
            code, new = got
        elif op in ("t_", "transpose_", "unsqueeze_", "squeeze_", "as_strided_"):
            new = None
            if op == "as_strided_":  # within x's storage, its offset written or kept
                ssz = self.storage_size(t)
                k = r.randrange(1, 3)
                sizes = [r.randrange(1, 4) for _ in range(k)]
                strides = [r.choice([1, 1, 2, 3]) for _ in range(k)]
                span = sum((z - 1) * st for z, st in zip(sizes, strides))
                if span >= ssz:
                    return None
                off = r.randrange(0, ssz - span)
                code = "%s.as_strided_(%s, %s%s)" % (x, sizes, strides, "" if off == t.storage_offset() and
                                                     r.random() < 0.5 else ", %d" % off)
            elif op == "t_":
                code = "%s.t_()" % x
            elif op == "transpose_":
                if nd < 2:
                    return None
                d0, d1 = r.sample(range(nd), 2)
                code = "%s.transpose_(%d, %d)" % (x, d0, d1)
            elif op == "unsqueeze_":
                code = "%s.unsqueeze_(%d)" % (x, r.randrange(nd + 1))
            else:
                code = "%s.squeeze_(%s)" % (x, r.choice(["", str(r.randrange(max(nd, 1)))]))
            return code, None
        elif op in ("set_", "data_set"):  # x takes y's storage (and y's flags)
            y = self.pick(self.tensors(lambda s, f: s.dtype == t.dtype))
            if y is None:
                return None
            fy = self.flags[y]

            def post():
                # every name of the same object takes y's flags (a duplicate
                # input `d = a` is one tensor: `d.data = y` changes a too)
                for q in self.pool:
                    if self.T(q) is t:
                        self.flags[q] = fy
                self.flags[x] = fy
            return ("%s.set_(%s)" if op == "set_" else "%s.data = %s") % (x, y), post
        elif op == "data_mut":
            if not isf:
                return None
            s, sb = r.choice(SCALARS[:4])
            new = mk(t.dtype, fx.exact, fx.bound * abs(s), fx.fbits + sb)
            if new.bound > BIG:
                return None
            code = "%s.data.mul_(%r)" % (x, s)
        else:  # out=: every operator of the list that has an .out overload torch's Python binds
            # (relu has relu.out, but torch.relu takes no out=)
            compare = t.dtype == torch.bool  # a bool out takes a comparison of two other tensors
            src = (lambda s, f: s.dtype != torch.bool and f.exact and not self.overlaps(t, s)) if compare else \
                (lambda s, f: s.dtype == t.dtype and not self.overlaps(t, s))
            y = self.pick(self.tensors(src))
            z = self.pick(self.tensors(src))
            if y is None or z is None:
                return None
            fy, fz = self.flags[y], self.flags[z]
            shape0 = tuple(t.shape)
            forms = ["lt", "le", "gt", "ge", "eq", "ne"] if compare else \
                ["add", "mul", "neg", "abs", "clamp", "pow", "where", "sub", "amax", "amin", "cat", "stack",
                 "mm", "bmm", "matmul", "sum", "zeros", "ones", "full", "arange"] + \
                (["sin", "cos", "tanh", "sigmoid", "exp", "div", "mean", "log", "empty"]
                 if t.dtype == torch.float64 else [])
            op = r.choice(forms)
            unary = op in ("neg", "abs", "clamp", "pow", "sin", "cos", "tanh", "sigmoid", "exp", "amax", "amin",
                           "mean", "sum", "zeros", "ones", "full", "arange", "log", "empty")
            ty, tz = self.T(y), self.T(z)
            if op in ("amax", "amin", "mean", "cat", "stack", "mm", "bmm", "matmul", "sum") and \
                    self.storage_key(t) in (self.storage_key(ty), self.storage_key(tz)):
                return None  # outside TensorIterator any shared storage is read in the kernel's order
            if op in ("amax", "amin", "mean", "cat", "stack", "mm", "bmm", "matmul", "sum") and \
                    any(st == 0 and sz > 1 for sz, st in zip(t.shape, t.stride())):
                return None  # nor is an out with a stride 0 refused there (bmm: the last write wins)
            ops = [self.T(y)] if unary else [self.T(y), self.T(z)]
            exact = fy.exact and (unary or fz.exact)
            if compare:
                code = "torch.%s(%s, %s, out=%s)" % (op, y, z, x)
                fl, exact = (1, 0), True
            elif op in ("add", "sub", "mul"):
                code = "torch.%s(%s, %s, out=%s)" % (op, y, z, x)
                fl = (fy.bound * fz.bound, fy.fbits + fz.fbits) if op == "mul" else \
                    (fy.bound + fz.bound, max(fy.fbits, fz.fbits))
            elif op in ("neg", "abs"):
                code = "torch.%s(%s, out=%s)" % (op, y, x)
                fl = (fy.bound, fy.fbits)
            elif op == "clamp":
                code = "torch.clamp(%s, -1, 1, out=%s)" % (y, x)
                fl = (min(fy.bound, 1), fy.fbits)
            elif op == "pow":
                code = "torch.pow(%s, 2, out=%s)" % (y, x)
                fl = (fy.bound ** 2, fy.fbits * 2)
            elif op == "where":
                code = "torch.where(%s > 0, %s, %s, out=%s)" % (y, y, z, x)
                fl = (max(fy.bound, fz.bound), max(fy.fbits, fz.fbits))
            elif op == "exp":
                if fy.bound > 3:
                    return None
                code = "torch.exp(%s, out=%s)" % (y, x)
                fl, exact = (math.exp(fy.bound), 0), False
            elif op == "div":
                code = "torch.div(%s, 2, out=%s)" % (y, x)
                fl, ops = (fy.bound / 2, fy.fbits + 1), [self.T(y)]
            elif op in ("amax", "amin", "mean"):  # out= outside TensorIterator: resized as the functional result
                if ty.dim() == 0:
                    return None
                code = "torch.%s(%s, %d, out=%s)" % (op, y, r.randrange(-ty.dim(), ty.dim()), x)
                fl, exact = (fy.bound, fy.fbits), fy.exact and op != "mean"
            elif op == "sum":  # computed in out's dtype (here y's)
                if ty.dim() == 0:
                    return None
                code = "torch.sum(%s, %d, %s, out=%s)" % (y, r.randrange(ty.dim()), r.random() < 0.5, x)
                fl = (fy.bound * max(ty.numel(), 1), fy.fbits)
            elif op in ("zeros", "ones", "full"):  # made in out's dtype, resized to the size given
                shape = r.choice([tuple(t.shape), (2, 3), (4,), (1, 2, 2)])
                v = r.choice([1.5, -2, 0.25]) if op == "full" else None
                code = "torch.%s(%s%s, out=%s)" % (op, shape, "" if v is None else ", %r" % v, x)
                fl, ops = (abs(v) if v is not None else 1, 2), []
            elif op == "log":  # of positive values only (1 + |y|)
                code = "torch.log(%s.abs() + 1, out=%s)" % (y, x)
                fl, exact = (math.log(fy.bound + 1), 0), False
            elif op == "empty":  # its values are not defined: filled at once
                shape = r.choice([tuple(t.shape), (2, 3), (4,)])
                code = "torch.empty(%s, out=%s).fill_(0.5)" % (shape, x)
                fl, ops = (0.5, 1), []
            elif op == "arange":  # arange(..., dtype=out's dtype), resized to its length
                lim = r.choice([(5,), (1, 7, 2), (3, 9), (-2, 4, 3)])
                code = "torch.arange(%s, out=%s)" % (", ".join(map(str, lim)), x)
                fl, ops = (9, 0), []
            elif op in ("cat", "stack"):
                if ty.dim() == 0 or ty.shape != tz.shape:
                    return None
                code = "torch.%s([%s, %s], %d, out=%s)" % (op, y, z, r.randrange(ty.dim()), x)
                fl = (max(fy.bound, fz.bound), max(fy.fbits, fz.fbits))
            elif op in ("mm", "bmm", "matmul"):  # matmul: of two matrices (mm.out)
                nd = 3 if op == "bmm" else 2
                if ty.dim() != nd or tz.dim() != nd or ty.shape[-1] != tz.shape[-2] or \
                        (nd == 3 and ty.shape[0] != tz.shape[0]):
                    return None
                code = "torch.%s(%s, %s, out=%s)" % (op, y, z, x)
                fl = (fy.bound * fz.bound * max(ty.shape[-1], 1), fy.fbits + fz.fbits)
            else:  # sin cos tanh sigmoid
                code = "torch.%s(%s, out=%s)" % (op, y, x)
                fl, exact = (1, 0), False
            new = F(True, 1, 0) if compare else mk(t.dtype, exact, *fl)
            if fl[0] > BIG or (t.dtype == torch.float32 and not new.exact):
                return None

            def post():
                tx = self.T(x)
                if tuple(tx.shape) != shape0 and any(self.storage_key(o) is not None and
                                                     self.storage_key(o) == self.storage_key(tx) for o in ops):
                    # a resized out that shares its storage with an operand:
                    # the operand read the same layout before, not after the
                    # resize (the result depends on the kernel's order)
                    return False
                if tuple(tx.shape) != shape0 and self.storage_key(tx) is not None and \
                        sum(self.storage_key(self.T(n)) == self.storage_key(tx)
                            for n in self.tensors(lambda s, f: True)) > 1:
                    # a resized out whose storage others view: the storage
                    # grown in place holds memory no one wrote, which they
                    # may read (seed 15099: an as_strided_ of the input)
                    return False
                # out= may resize x to a new storage: the new values only
                self.flags[x] = new
                self.write_through(x, new)
            return code, post

        def post():
            self.write_through(x, new)
        return code, post

    def b_risky(self):
        """Statements that often fail (for the cases that end in an error)."""
        r = self.r
        x = self.pick(self.tensors(lambda t, f: not self.unsafe_dest(t)))
        if x is None:
            return None
        t = self.T(x)
        y = self.pick(self.tensors(lambda s, f: not self.overlaps(t, s)))
        if y is None:
            return None
        nd = t.dim()
        cands = ["%s + %s" % (x, y), "torch.mm(%s, %s)" % (x, y), "torch.matmul(%s, %s)" % (x, y),
                 "%s.view(-1, 4)" % x, "%s.t().view(%d)" % (x, t.numel()),
                 "%s[%d]" % (x, (t.shape[0] if nd else 0) + r.randrange(0, 2)),
                 "torch.cat([%s, %s], 0)" % (x, y), "torch.stack([%s, %s])" % (x, y),
                 "%s.expand(2, 3)" % x, "%s.amax(0)" % x, "%s.narrow(0, 1, 4)" % x,
                 "%s.squeeze(3)" % x, "%s.permute(1, 0)" % x]
        stmts = ["%s.add_(%s)" % (x, y), "%s.mul_(2)" % x, "%s.expand(2, %s).add_(1)" % (x, ", ".join(map(str, t.shape))),
                 "%s.copy_(%s)" % (x, y), "%s.diagonal().mul_(2)" % x if nd >= 2 else "%s.zero_()" % x,
                 "torch.add(%s, 1, out=%s)" % (y, x)]
        if r.random() < 0.5:
            expr = r.choice(cands)
            if expr.startswith("torch.m") and self.T(y).dtype != t.dtype:
                # mm/matmul of two dtypes: torch 1.13 runs it where the product is
                # empty (or sums over nothing), in self's dtype for mm and the
                # other's for mv and bmm, and refuses it otherwise (unclassified);
                # PyTorch 2's meta functions and shapeguard refuse it (error type)
                return None
            return self.assign(expr, lambda: F(False, BIG, 0))
        code = r.choice(stmts)
        return code, lambda: self.write_through(x, F(False, BIG, 0))

    BUILDERS = [("b_binary", 16), ("b_div", 4), ("b_unary", 10), ("b_compare", 5), ("b_where", 4),
                ("b_view", 18), ("b_reduce", 7), ("b_matmul", 4), ("b_join", 4), ("b_create", 5),
                ("b_inplace", 18), ("b_dd", 6), ("b_chain", 10)]

    def one_stmt(self, ctx, tries=40):
        names = [b for b, _ in self.BUILDERS]
        weights = [w for _, w in self.BUILDERS]
        if COND_MUTATE and not ctx["nograd"] and ctx["indent"] == 1:
            names, weights = names + ["b_cond"], weights + [4]
        if FUNCTIONS and not ctx["nograd"] and ctx["indent"] == 1:
            names, weights = names + ["b_function"], weights + [4]
        if COND_GRAD and not ctx["nograd"] and ctx["indent"] == 1:
            names, weights = names + ["b_cond_grad"], weights + [4]
        if self.want_error and self.errored is None and len(self.body) >= 2:
            names, weights = names + ["b_risky"], weights + [30]
        for _ in range(tries):
            b = self.r.choices(names, weights)[0]
            got = getattr(self, b)()
            if got is None:
                continue
            code, post = got
            if self.attempt(code, post, ctx):
                return True
        return False

    def gen_body(self, n):
        r = self.r
        ctx = {"nograd": False, "indent": 1}
        done = 0
        while done < n and self.errored is None:
            k = r.random()
            if k < 0.08:
                # a no_grad block
                self.body.append((1, "with torch.no_grad():"))
                mark = len(self.body)
                inner = {"nograd": True, "indent": 2}
                for _ in range(r.randint(1, 3)):
                    if self.errored is None:
                        self.one_stmt(inner)
                if len(self.body) == mark:
                    self.body.append((2, "pass"))
                done += 1
            elif k < 0.16:
                if not self.gen_if():
                    continue
                done += 1
            elif k < 0.22 and self.dd_names("tilfb"):
                # an `if` on a data-dependent value: eager takes a branch,
                # a trace cannot (trace => error data-dependent)
                if not self.gen_if(dd=True):
                    continue
                done += 1
            else:
                if self.one_stmt(ctx):
                    done += 1
                else:
                    break

    def gen_if(self, dd=False):
        r = self.r
        if dd:
            cond = self.dd_cond()
            if cond is None:
                return False
            val = bool(eval(cond, self.ns))
        else:
            x = self.pick(self.tensors(lambda t, f: t.dim() > 0))
            if x is None:
                return False
            t = self.T(x)
            form = r.randrange(5)
            if form == 0:
                k = r.randrange(0, 5)
                cond, val = "%s.shape[0] > %d" % (x, k), t.shape[0] > k
            elif form == 4:  # an upper bound: ranges that decide // and % of sizes
                k = r.randrange(1, 7)
                cond, val = "%s.shape[0] <= %d" % (x, k), t.shape[0] <= k
            elif form == 1:
                cond, val = "%s.dim() == 2" % x, t.dim() == 2
            elif form == 2:
                k = r.randrange(0, 12)
                cond, val = "%s.numel() >= %d" % (x, k), t.numel() >= k
            else:
                cond, val = "%s.size(-1) == %d" % (x, t.shape[-1]), True
        # Each branch is generated live from the state before the `if` (the
        # one not taken too, as if it were: it is what a size override may
        # run); then the state follows the branch taken (or stays, where no
        # `else` is written and the condition is false).
        pool0, flags0, snips0 = list(self.pool), dict(self.flags), list(self.snips)
        has_else = r.random() < 0.5
        err0 = self.errored
        branches = {}
        for b in ([True, False] if has_else else [True]):
            self.pool, self.flags, self.snips = list(pool0), dict(flags0), list(snips0)
            self.rebuild()
            save_body, self.body = self.body, []
            if b != val:
                self.errored = "x"  # no failing statement in the branch not taken
            for _ in range(r.randint(1, 3)):
                if self.errored in (None, "x"):
                    self.one_stmt({"nograd": False, "indent": 2})
            if b != val:
                self.errored = err0
            branches[b] = (self.body or [(2, "pass")], list(self.pool), dict(self.flags), list(self.snips))
            self.body = save_body
        if val in branches:
            _, self.pool, self.flags, self.snips = branches[val]
        else:
            self.pool, self.flags, self.snips = pool0, flags0, snips0
        # after the `if`, only names that exist whichever branch runs
        keep = set(pool0)
        if has_else:
            keep |= set(branches[True][1]) & set(branches[False][1])
        self.pool = [n for n in self.pool if n in keep]
        if dd:
            # Another seed may take the other branch: a value is exact after
            # the `if` only if it is exact whichever branch ran.
            other = branches[not val][2] if (not val) in branches else flags0
            for n in self.pool:
                if n in other:
                    m = combine(self.flags[n], other[n])
                    m.dd = self.flags[n].dd
                    self.flags[n] = m
        self.body.append((1, "if %s:" % cond))
        if dd and not self.dd_if:
            self.dd_if = self.dd_kind  # the first one stops the trace
            self.dd_if_at = len(self.body) - 1  # (its index in the body, just appended)
        self.body += branches[True][0]
        if has_else:
            self.body.append((1, "else:"))
            self.body += branches[False][0]
        self.rebuild()
        return True

    def gen_return(self):
        r = self.r
        cands = self.tensors()
        if not cands:
            return None
        locals_ = [n for n in cands if n not in self.params]
        outs = [locals_[-1] if locals_ else cands[-1]]
        for _ in range(r.choice([0, 0, 1, 1, 2])):
            o = self.pick(cands)
            if o not in outs:
                outs.append(o)
        # outputs that are inputs themselves, or views (of views) of them,
        # and now and then one output twice
        ins = [n for n in cands if n in self.params]
        if ins and r.random() < 0.3:
            outs.insert(r.randrange(len(outs) + 1), r.choice(ins))
        if ins and r.random() < 0.2:
            got = self.view_chain(r.choice(ins), r.choice([1, 1, 2]))
            if got is not None:
                outs.append(got[0])
        if r.random() < 0.05:
            outs.append(r.choice(outs))
        ddt = [n for n in self.dd_names("t") if self.T(n) is not None]
        if ddt and r.random() < 0.5:
            outs.append(r.choice(ddt))
        return "return " + ", ".join(outs)

    def program_text(self):
        lines = ["    def f(%s):" % ", ".join(self.params)]
        for ind, code in self.body:
            for k, sub in enumerate(code.split("\n")):
                lines.append("    " * (ind + 1) + sub)
        return lines


def make_case(rng, want_error, grad_items, name):
    g = CaseGen(rng, want_error, grad_items)
    g.gen_inputs()
    g.gen_body(rng.randint(3, 15))
    if g.errored in (None, "x") and want_error:
        return None
    ret = g.gen_return()
    if ret is None:
        return None
    g.body.append((1, ret))
    return g


NAME_RE = re.compile(r"[A-Za-z_]\w*")


def subclass_names(decls):
    """The TwoTensor inputs of decls (`subclass` lines and `input` lines
    over them)."""
    two = {d.split()[1] for d in decls if d.startswith("subclass ")}
    for d in decls:  # `input b = EXPR` over a TwoTensor
        if two and d.startswith("input ") and set(NAME_RE.findall(d.split("=", 1)[1])) & two:
            two.add(d.split()[1])
    return two


def subclass_line_left_out(two, line, decls=()):
    """With --subclass: does statement line use a TwoTensor as the language
    leaves it out (two: the names that are TwoTensors before it; the names
    it assigns from one are added)?  A value computed from a TwoTensor is
    one, as TwoTensor's dispatch wraps every tensor result.  Left out: an
    in-place write or set_ of a plain tensor from a TwoTensor (shapeguard
    refuses it, `error unsupported`; TwoTensor writes the plain tensor
    twice), out= where a TwoTensor is involved (the oracle leaves a resized
    TwoTensor out's outer sizes as they were), `.data` of a TwoTensor and
    `.data =` with one (the oracle does not run it; torch 1.13 crashes on a
    plain tensor given a TwoTensor's data), set_ with one (torch 1.13 crashes
    on the wrapper set_ leaves), nonzero and masked_select of one (its inner
    results may differ in size: shapeguard refuses it, `error unsupported`;
    TwoTensor's outer sizes are a's, and composites over them fail on b), an
    in-place view op (t_, squeeze_ ...) on a TwoTensor other than a declared
    input (the 1.13 oracle applies it to the wrapper, whose storage bounds
    refuse a view with an offset: an artifact), and a torch.cond reaching one (a
    traced cond takes no TwoTensor operand, `error unsupported`)."""
    # (sizes read from a TwoTensor are ints: torch.zeros(t.shape) is plain)
    toks = set(NAME_RE.findall(re.sub(r"\b\w+\.(shape|size|stride|dim|numel)\b", "", line)))
    if not toks & two:
        return False
    if "cond" in toks or ".data" in line or ".set_(" in line or toks & {"nonzero", "masked_select"}:
        return True
    m = re.match(r"\s*(?:[\w, ]+=(?!=))?\s*(\w+)", line)
    if re.search(r"\.\w+_\(", line) and (not m or m.group(1) not in two):
        return True  # an in-place write of a plain tensor (the chain's root)
    if "out=" in line.replace(" ", ""):
        return True
    declared = {d.split()[1] for d in decls if d.startswith("subclass ")}
    for root in re.findall(r"(\w+)\.(?:t_|transpose_|squeeze_|unsqueeze_|as_strided_)\(", line):
        if root in two and root not in declared:
            return True  # an in-place view op on a TwoTensor view (the 1.13 oracle's wrapper storage refuses it)
    m = re.match(r"\s*([\w, ]+?)\s*=(?!=)\s*(.*)$", line)
    if m and "(" not in m.group(1) and "." not in m.group(1):
        for nm in m.group(1).split(","):
            two.add(nm.strip())
    return False


def subclass_left_out(g):
    """Does g's program use a TwoTensor as the language leaves it out
    (subclass_line_left_out)?"""
    two = subclass_names(g.decls)
    return bool(two) and any(subclass_line_left_out(two, line, g.decls) for _, line in g.body)


class OrderWatch(TorchDispatchMode):
    """Sees, while a program runs, whether a write's result depends on the
    order its kernel goes in: an input that shares storage positions with
    the tensor written other than in its very layout, or a written tensor
    that reaches a position twice (fill_ and zero_ apart, which write one
    value everywhere; a stride 0 over a size > 1 apart, which torch
    refuses itself).  Torch runs such a call in its own order where it
    cannot see the overlap cheaply (a view that is not dense); shapeguard
    refuses it (exec/overlap.c).  The statement-level checks (overlaps,
    unsafe_dest) keep such writes out of the seed-0 program, but a size
    override can make them (seed 6017: d.copy_(d.diagonal(0, 2, 0)) where
    d is empty at the seed-0 sizes): such an override line is dropped."""

    def __init__(self):
        super().__init__()
        self.hit = False

    @staticmethod
    def positions(t):
        return [t.storage_offset() + sum(i * st for i, st in zip(idx, t.stride()))
                for idx in itertools.product(*[range(n) for n in t.shape])]

    # calls that write no data (metadata, autograd's flags, the storage)
    META = {"set_", "t_", "transpose_", "squeeze_", "unsqueeze_", "as_strided_", "resize_", "detach_",
            "requires_grad_", "swapaxes_", "swapdims_", "resize_as_"}

    def check(self, func, args, kwargs):
        """Would this call's result depend on its kernel's order?"""
        if func.__name__.split(".")[0] in self.META:
            return False
        written, read = [], []
        for i, a in enumerate(func._schema.arguments):
            v = args[i] if i < len(args) else kwargs.get(a.name)
            vals = v if isinstance(v, (list, tuple)) else [v]
            for x in vals:
                if isinstance(x, torch.Tensor):
                    (written if a.alias_info is not None and a.alias_info.is_write else read).append(x)
        for w in written:
            if w.numel() == 0:
                continue
            wp = self.positions(w)
            if len(set(wp)) < len(wp) and func.__name__.split(".")[0] not in ("fill_", "zero_") and \
                    not any(st == 0 and sz > 1 for sz, st in zip(w.shape, w.stride())):
                return True
            for r in read:
                if r.numel() == 0 or r.storage().data_ptr() != w.storage().data_ptr():
                    continue
                if r.shape == w.shape and r.stride() == w.stride() and r.storage_offset() == w.storage_offset():
                    continue
                if set(self.positions(r)) & set(wp):
                    return True
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        try:
            hit = self.check(func, args, kwargs)
        except Exception:  # noqa: BLE001 - a tensor without storage: nothing to say
            hit = False
        r = func(*args, **kwargs)
        self.hit |= hit  # (a call that fails, for its shapes, writes nothing)
        return r


def fill_case(g, rng, name, grad_items, overrides):
    if SUBCLASS and subclass_left_out(g):
        return None
    items = set(prog_torch.ALL_ITEMS) - (set() if grad_items else {"grad", "bw"})
    text = ["case %s" % name] + g.decls + ["program"] + g.program_text()
    case = prog_torch.Case(name, 0)
    case.decls = g.case.decls
    case.program = "\n".join(l[4:] for l in g.program_text()) + "\n"
    runs = ["", "1"]
    # (no size override where a torch.cond runs with grad: eagerly it is traced, as today's torch traces
    # it, and other sizes (empty, size 1) may lay its branches' outputs out in ways the merge refuses)
    if rng.random() < overrides and not (COND_GRAD and "torch.cond(" in case.program):
        tens = [d for d in g.decls if d.startswith("tensor") and "strides=" not in d and d.split()[1] in g.params]
        if tens:
            d = rng.choice(tens)
            nm = d.split()[1]
            sz = d[d.index("sizes=") + 6:]
            nd = len(prog_torch.ilist(sz[:sz.index("]") + 1]))
            runs.append("%d %s sizes=%s" % (rng.randint(0, 3), nm, [rng.randint(0, 5) for _ in range(nd)]))
    out = []
    for a in runs:
        res, why = prog_torch.run_case(case, a, items)
        if a not in ("", "1") and not why:  # an override: not if its writes depend on the kernel's order
            watch = OrderWatch()
            with watch:
                prog_torch.run_case(case, a, items)
            if watch.hit:
                continue
        if why:
            if a in ("", "1"):
                return None
            continue
        if a == "" and g.errored and not res.startswith("error"):
            return None
        # (an unplanned error is kept: the backward refusing a tensor modified
        # in place is only seen here, the live generation runs no backward)
        out.append("eager%s => %s" % (" " + a if a else "", res))
    # the torch run must be deterministic: a second run gives the same text
    again = prog_torch.run_case(case, "", items)[0]
    if again != out[0].split(" => ", 1)[1]:
        return None
    if CAPTURE:
        out += capture_lines(g, case, items, out[0].split(" => ", 1)[1], out[1].split(" => ", 1)[1])
    return "\n".join(text + out)


# --eager-only: no trace, run and layouts lines (the battery of the first
# version of this test).
CAPTURE = True
# --subclass: some float64 inputs are `subclass NAME kind=two` (TwoTensor)
# inputs (what the language leaves out of them: subclass_left_out).
SUBCLASS = False
# --subclass-grad (with --subclass and --grad): two or three inputs, the
# first a TwoTensor, the second of its sizes requiring grad, so that a TwoTensor
# meets tensors that require grad (a TwoTensor loss: its gradients are
# TwoTensors); the default stream makes few such programs.
SUBCLASS_GRAD = False
# --cond-mutate: torch.cond calls under no_grad whose branches write their
# operand in place (PyTorch functionalizes them; so does shapeguard).
COND_MUTATE = False
# --functions: custom autograd Functions (class Fn(torch.autograd.Function))
# defined in the program and applied (b_function).
FUNCTIONS = False
# --cond-grad: torch.cond calls with grad enabled (b_cond_grad).
COND_GRAD = False
# --known-bugs: write the lines marked SKIPPED in CaseGen
# (note_empty_layout: the empty_strides layouts), left out while they
# differ from PyTorch.  The aot pipeline's bugs the
# generator once skipped are fixed (the module docstring names them; their
# reproducers are in tests/batteries/aot_found.battery).
KNOWN_BUGS = False


def dd_if_line(g):
    """The line of the program (its `def` line 1) of g's first `if` on a
    data-dependent value (0: none)."""
    if not g.dd_if or g.dd_if_at is None:
        return 0
    # program_text: the def, then each body entry's lines
    return 2 + sum(len(code.split("\n")) for _, code in g.body[:g.dd_if_at])


def capture_lines(g, case, items, res0, res1):
    """The trace, run and layouts expectations of a case whose eager results
    (seeds 0 and 1) are res0 and res1."""
    # an `if` on a data-dependent value runs: the trace stops there, unless
    # the seed-0 run failed before it (an error in a branch before it: seed
    # 6048's narrow out of range inside an `if` on a size, then a later `if`
    # on nonzero's size): then the trace fails as eager does, below
    failed_before = res0.startswith("error") and 0 < prog_torch.LAST_ERROR_LINE[0] < dd_if_line(g)
    if g.dd_if and not failed_before:
        return ["trace => error data-dependent"]
    if res0.startswith("error"):
        # A shape error is a question about sizes that the trace answers at
        # the hints (guards), as eager does: the trace fails the same way.
        # Other kinds (aliasing: overlap checks over fake storages; autograd)
        # need not be found by a trace: no expectation; nor a shape error of
        # the backward (no line of the program raised it: seed 603's
        # as_strided_ whose gradient falls out of its storage).
        return ["trace => error shape"] if res0 == "error shape" and prog_torch.LAST_ERROR_LINE[0] > 0 else []
    lay, why = prog_torch.run_case(case, "", items, "layouts")
    lines = ["trace => ok", "run => " + res0, "run 1 => " + res1]
    lay = "; ".join(it for it in lay.split("; ") if it and it.split("=")[0] not in g.no_layout)
    if lay and not why:
        lines.append("layouts => " + lay)
    return lines



def main(argv):
    seed, count, grad, errors, overrides, out = 1, 100, False, 0.1, 0.15, "-"
    it = iter(argv)
    for a in it:
        if a == "--seed":
            seed = int(next(it))
        elif a == "--count":
            count = int(next(it))
        elif a == "--grad":
            grad = True
        elif a == "--eager-only":
            global CAPTURE
            CAPTURE = False
        elif a == "--known-bugs":
            global KNOWN_BUGS
            KNOWN_BUGS = True
        elif a == "--subclass":
            global SUBCLASS
            SUBCLASS = True
        elif a == "--subclass-grad":
            global SUBCLASS_GRAD
            SUBCLASS_GRAD = True
        elif a == "--cond-mutate":
            global COND_MUTATE
            COND_MUTATE = True
        elif a == "--functions":
            global FUNCTIONS
            FUNCTIONS = True
        elif a == "--cond-grad":
            global COND_GRAD
            COND_GRAD = True
        elif a == "--no-requires-grad":
            CaseGen.requires_grad_inputs = False
        elif a == "--errors":
            errors = float(next(it))
        elif a == "--overrides":
            overrides = float(next(it))
        elif a == "-o":
            out = next(it)
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            print("prog_gen: unknown argument %s" % a, file=sys.stderr)
            return 2
    rng = random.Random(seed)
    cases = []
    attempts = 0
    while len(cases) < count:
        attempts += 1
        if attempts > count * 50:
            print("prog_gen: too many rejected candidates", file=sys.stderr)
            return 1
        want_error = rng.random() < errors
        name = "prog_%d_%d" % (seed, len(cases))
        g = make_case(rng, want_error, grad, name)
        if g is None:
            continue
        text = fill_case(g, rng, name, grad, overrides)
        if text is None:
            continue
        cases.append(text)
    head = ["# Generated by tests/diff/prog_gen.py --seed %d --count %d%s%s%s%s%s%s%s%s: random programs" % (
        seed, count, " --grad" if grad else "", "" if CAPTURE else " --eager-only",
        " --known-bugs" if KNOWN_BUGS else "", " --subclass" if SUBCLASS else "",
        " --subclass-grad" if SUBCLASS_GRAD else "",
        " --cond-mutate" if COND_MUTATE else "", " --functions" if FUNCTIONS else "",
        " --cond-grad" if COND_GRAD else ""),
        "# whose eager results (and layouts) were computed by PyTorch %s (tests/diff/prog_torch.py)." % torch.__version__, ""]
    text = "\n".join(head) + "\n" + "\n\n".join(cases) + "\n"
    if out == "-":
        sys.stdout.write(text)
    else:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text)
    print("prog_gen: %d cases from %d candidates" % (count, attempts), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
