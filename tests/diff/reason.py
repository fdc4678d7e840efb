#!/usr/bin/env python3
"""Soundness of `assume`, `range`, `known` and `simplify` under facts, by brute force.

Each generated battery case boxes every symbol it uses (facts such as
`assume 0 <= x` and `assume x <= 7`, small boxes, at most a few thousand
points in all), adds a few random extra facts (bounds, linear relations,
divisibility, conjunctions, disjunctions, some non-linear ones) and asks
random questions:

  range EXPR => [LO, HI]      the expectation is the TRUE hull of EXPR over
                              every point where the facts hold;
  known BOOLEXPR => T         T is the truth: true (holds at every point),
                              false (fails at every point) or unknown;
  simplify EXPR => q_sentinel the engine's form of EXPR under the facts is
                              read from the failure line and evaluated here.

The truth is computed in Python by enumerating every point of the box and
keeping the points where the facts hold; nothing is taken from the C code.
Points where an expression raises an error (a zero divisor, CleanDiv that
does not divide, a negative shift) are left out of its hull and truth; the
facts never raise.  `and`/`or`/chains are evaluated eagerly (an error in an
operand makes the whole an error), `Where` evaluates the taken arm only.

A passing `range` line means the engine's range is exactly the hull; a
failing one reports the engine's range, which must contain the hull.  A
passing `known` line means the engine decided exactly; a failing one must
answer `unknown` (always sound).  The form that `simplify` gives must
evaluate, at every point of the domain where EXPR evaluates, to EXPR's
value (forms with symbols the case does not box are not checked).  Unsound
answers are minimised (dropping facts, shrinking the question and the
boxes, re-running the engine) and printed with a counterexample point.

Usage:
  reason.py [--seed N] [--cases N] [--bin PATH] [--keep FILE]
            [--no-minimize] [--verbose]
  reason.py --selftest

The seed is --seed, else $SG_TEST_SEED, else 20240611; the tool is --bin,
else $SG_BIN, else ./shapeguard.  The last line printed is
`N passed, N failed`: failed counts unsound ranges, unsound `known`
answers, inequivalent simplifications, malformed answers and engine
crashes/hangs; everything else passes.  Exit status: 0 when nothing
failed; 1 when something failed; 77 (skip) when nothing failed and the
engine answers every `range` and `known` with `not implemented`; 2 on a
usage error or a failed self-test.
"""

import argparse
import ast
import itertools
import os
import random
import re
import subprocess
import sys
import tempfile
import time

DEFAULT_SEED = 20240611
DEFAULT_CASES = 2000
ALL_SYMS = ('x', 'y', 'z')
MAX_POINTS = 2000
SENTINEL = 'q_sentinel'

# --------------------------------------------------------------------------
# Expressions: plain tuples.
#   ('int', v) ('bool', b) ('sym', name) ('bin', op, a, b) ('un', op, a)
#   ('not', a) ('and', a, b) ('or', a, b) ('cmp', (ops...), (operands...))
#   ('call', name, (args...))

INT, BOOL = 'int', 'bool'
BOOL_CALLS = frozenset(('Eq', 'Ne', 'Lt', 'Le', 'Gt', 'Ge', 'And', 'Or', 'Not'))
CMP_CALLS = {'Eq': '==', 'Ne': '!=', 'Lt': '<', 'Le': '<=', 'Gt': '>', 'Ge': '>='}
INT_CALLS = frozenset(('FloorDiv', 'Mod', 'CeilDiv', 'CleanDiv', 'TruncDiv', 'TruncMod',
                       'ModularIndexing', 'Min', 'Max', 'Abs', 'Pow'))


def kids(n):
    k = n[0]
    if k in ('int', 'bool', 'sym'):
        return ()
    if k == 'bin':
        return (n[2], n[3])
    if k in ('un',):
        return (n[2],)
    if k == 'not':
        return (n[1],)
    if k in ('and', 'or'):
        return (n[1], n[2])
    return tuple(n[2])          # cmp operands, call args


def with_kids(n, ks):
    k = n[0]
    if k == 'bin':
        return ('bin', n[1], ks[0], ks[1])
    if k == 'un':
        return ('un', n[1], ks[0])
    if k == 'not':
        return ('not', ks[0])
    if k in ('and', 'or'):
        return (k, ks[0], ks[1])
    return (k, n[1], tuple(ks))


def sort_of(n):
    k = n[0]
    if k in ('int', 'sym', 'bin', 'un'):
        return INT
    if k in ('bool', 'not', 'and', 'or', 'cmp'):
        return BOOL
    if n[1] == 'Where':
        return sort_of(n[2][1])
    return BOOL if n[1] in BOOL_CALLS else INT


def symbols_in(n, acc=None):
    if acc is None:
        acc = set()
    if n[0] == 'sym':
        acc.add(n[1])
    for c in kids(n):
        symbols_in(c, acc)
    return acc


def size_of(n):
    return 1 + sum(size_of(c) for c in kids(n))


def subterms(n):
    yield n
    for c in kids(n):
        yield from subterms(c)


# ---- reading the battery syntax (through Python's ast: the battery syntax
# is Python's expression syntax)

_AST_BIN = {ast.Add: '+', ast.Sub: '-', ast.Mult: '*', ast.FloorDiv: '//', ast.Mod: '%',
            ast.Pow: '**', ast.LShift: '<<', ast.RShift: '>>', ast.BitAnd: '&',
            ast.BitOr: '|', ast.BitXor: '^'}
_AST_UN = {ast.USub: '-', ast.UAdd: '+', ast.Invert: '~'}
_AST_CMP = {ast.Eq: '==', ast.NotEq: '!=', ast.Lt: '<', ast.LtE: '<=', ast.Gt: '>',
            ast.GtE: '>='}


class ParseError(Exception):
    pass


def _from_py(t):
    if isinstance(t, ast.Constant):
        if isinstance(t.value, bool):
            return ('bool', t.value)
        if isinstance(t.value, int):
            return ('int', t.value)
        raise ParseError('constant %r' % (t.value,))
    if isinstance(t, ast.Name):
        if t.id in ('true', 'True'):
            return ('bool', True)
        if t.id in ('false', 'False'):
            return ('bool', False)
        return ('sym', t.id)
    if isinstance(t, ast.UnaryOp):
        a = _from_py(t.operand)
        if isinstance(t.op, ast.Not):
            return ('not', a)
        if isinstance(t.op, ast.USub) and a[0] == 'int':
            return ('int', -a[1])      # a negative literal
        return ('un', _AST_UN[type(t.op)], a)
    if isinstance(t, ast.BinOp) and type(t.op) in _AST_BIN:
        return ('bin', _AST_BIN[type(t.op)], _from_py(t.left), _from_py(t.right))
    if isinstance(t, ast.BoolOp):
        k = 'and' if isinstance(t.op, ast.And) else 'or'
        acc = _from_py(t.values[0])
        for v in t.values[1:]:
            acc = (k, acc, _from_py(v))
        return acc
    if isinstance(t, ast.Compare):
        return ('cmp', tuple(_AST_CMP[type(o)] for o in t.ops),
                tuple([_from_py(t.left)] + [_from_py(c) for c in t.comparators]))
    if (isinstance(t, ast.Call) and isinstance(t.func, ast.Name) and not t.keywords
            and (t.func.id in INT_CALLS or t.func.id in BOOL_CALLS or t.func.id == 'Where')):
        return ('call', t.func.id, tuple(_from_py(a) for a in t.args))
    raise ParseError('unsupported syntax: %s' % ast.dump(t))


def parse(text):
    try:
        t = ast.parse(text.strip(), mode='eval')
    except SyntaxError as e:
        raise ParseError(str(e))
    return _from_py(t.body)


# ---- printing in the battery syntax

P_OR, P_AND, P_NOT, P_CMP, P_UN, P_POW, P_ATOM = 1, 2, 3, 4, 11, 12, 13
PREC = {'|': 5, '^': 6, '&': 7, '<<': 8, '>>': 8, '+': 9, '-': 9, '*': 10, '//': 10, '%': 10}


def _pr(n):
    """-> (text, precedence)"""
    k = n[0]
    if k == 'int':
        return str(n[1]), (P_ATOM if n[1] >= 0 else P_UN)
    if k == 'bool':
        return ('true' if n[1] else 'false'), P_ATOM
    if k == 'sym':
        return n[1], P_ATOM
    if k == 'bin':
        op = n[1]
        a, pa = _pr(n[2])
        b, pb = _pr(n[3])
        if op == '**':
            if pa <= P_POW:
                a = '(' + a + ')'
            if pb < P_UN:
                b = '(' + b + ')'
            return a + '**' + b, P_POW
        p = PREC[op]
        if pa < p:
            a = '(' + a + ')'
        if pb <= p:
            b = '(' + b + ')'
        sep = '' if op == '*' and n[2][0] == 'int' else ' '
        return a + sep + op + sep + b, p
    if k == 'un':
        a, pa = _pr(n[2])
        if pa <= P_UN:
            a = '(' + a + ')'
        return n[1] + a, P_UN
    if k == 'not':
        a, pa = _pr(n[1])
        if pa < P_NOT:
            a = '(' + a + ')'
        return 'not ' + a, P_NOT
    if k in ('and', 'or'):
        p = P_AND if k == 'and' else P_OR
        a, pa = _pr(n[1])
        b, pb = _pr(n[2])
        if pa < p:
            a = '(' + a + ')'
        if pb <= p:
            b = '(' + b + ')'
        return a + ' ' + k + ' ' + b, p
    if k == 'cmp':
        parts = []
        for i, e in enumerate(n[2]):
            s, ps = _pr(e)
            if ps <= P_CMP:
                s = '(' + s + ')'
            if i:
                parts.append(n[1][i - 1])
            parts.append(s)
        return ' '.join(parts), P_CMP
    return n[1] + '(' + ', '.join(_pr(a)[0] for a in n[2]) + ')', P_ATOM


def pr(n):
    return _pr(n)[0]


# ---- semantics (doc/battery.md) over Python's integers

class SGErr(Exception):
    pass


ERR = object()          # "this expression raises an error at this point"


def _fd(a, b):
    if b == 0:
        raise SGErr('zero-division')
    return a // b


def _md(a, b):
    if b == 0:
        raise SGErr('zero-division')
    return a % b


def _cd(a, b):
    if b == 0:
        raise SGErr('zero-division')
    return -((-a) // b)


def _cl(a, b):
    if b == 0:
        raise SGErr('zero-division')
    if a % b:
        raise SGErr('inexact')
    return a // b


def _td(a, b):
    if b == 0:
        raise SGErr('zero-division')
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _tm(a, b):
    return a - b * _td(a, b)


def _mi(x, d, m):
    return _md(_fd(x, d), m)


def _pw(a, b):
    if b < 0:
        raise SGErr('negative-exponent')
    if b > 4096 and abs(a) > 1:
        raise SGErr('too-big')
    return a ** b


def _shl(a, b):
    if b < 0:
        raise SGErr('negative-exponent')
    if b > 4096 and a:
        raise SGErr('too-big')
    return a << b


def _shr(a, b):
    if b < 0:
        raise SGErr('negative-exponent')
    return a >> b


def _and(*a):
    return all(a)


def _or(*a):
    return any(a)


def _chain(vals, ops):
    return all(CMP_FN[op](vals[i], vals[i + 1]) for i, op in enumerate(ops))


CMP_FN = {'==': lambda a, b: a == b, '!=': lambda a, b: a != b, '<': lambda a, b: a < b,
          '<=': lambda a, b: a <= b, '>': lambda a, b: a > b, '>=': lambda a, b: a >= b}

NS = {'_fd': _fd, '_md': _md, '_cd': _cd, '_cl': _cl, '_td': _td, '_tm': _tm, '_mi': _mi,
      '_pw': _pw, '_shl': _shl, '_shr': _shr, '_and': _and, '_or': _or, '_chain': _chain,
      'SGErr': SGErr, 'ERR': ERR}

_PY_BIN = {'//': '_fd', '%': '_md', '**': '_pw', '<<': '_shl', '>>': '_shr'}
_PY_CALL = {'FloorDiv': '_fd', 'Mod': '_md', 'CeilDiv': '_cd', 'CleanDiv': '_cl',
            'TruncDiv': '_td', 'TruncMod': '_tm', 'ModularIndexing': '_mi', 'Pow': '_pw',
            'Abs': 'abs'}


def to_py(n):
    """Python source computing n (raising SGErr where n fails)."""
    k = n[0]
    if k == 'int':
        return '(%d)' % n[1]
    if k == 'bool':
        return 'True' if n[1] else 'False'
    if k == 'sym':
        return n[1]
    if k == 'bin':
        a, b = to_py(n[2]), to_py(n[3])
        if n[1] in _PY_BIN:
            return '%s(%s, %s)' % (_PY_BIN[n[1]], a, b)
        return '(%s %s %s)' % (a, n[1], b)
    if k == 'un':
        return '(%s%s)' % (n[1], to_py(n[2]))
    if k == 'not':
        return '(not %s)' % to_py(n[1])
    if k in ('and', 'or'):
        return '_%s(%s, %s)' % (k, to_py(n[1]), to_py(n[2]))
    if k == 'cmp':
        if len(n[1]) == 1:
            return '(%s %s %s)' % (to_py(n[2][0]), n[1][0], to_py(n[2][1]))
        return '_chain((%s,), %r)' % (', '.join(to_py(e) for e in n[2]), n[1])
    name, args = n[1], [to_py(a) for a in n[2]]
    if name == 'Where':
        return '(%s if %s else %s)' % (args[1], args[0], args[2])
    if name in ('Min', 'Max'):
        return '%s((%s,))' % (name.lower(), ', '.join(args))
    if name in CMP_CALLS:
        return '(%s %s %s)' % (args[0], CMP_CALLS[name], args[1])
    if name == 'And':
        return '_and(%s)' % ', '.join(args)
    if name == 'Or':
        return '_or(%s)' % ', '.join(args)
    if name == 'Not':
        return '(not %s)' % args[0]
    return '%s(%s)' % (_PY_CALL[name], ', '.join(args))


_compiled = {}


def compile_points(n, syms):
    """A function: list of points (tuples over syms) -> list of values (ERR
    where n fails)."""
    key = (n, tuple(syms))
    f = _compiled.get(key)
    if f is None:
        if len(_compiled) > 20000:
            _compiled.clear()
        src = ('def _f(pts):\n'
               '    out = []\n'
               '    app = out.append\n'
               '    for (%s,) in pts:\n'
               '        try:\n'
               '            app(%s)\n'
               '        except (SGErr, ArithmeticError, TypeError, ValueError):\n'
               '            app(ERR)\n'
               '    return out\n') % (', '.join(syms) or '_unused', to_py(n))
        ns = dict(NS)
        exec(compile(src, '<expr>', 'exec'), ns)
        f = _compiled[key] = ns['_f']
    return f


def values(n, syms, pts):
    if not syms:
        pts = [(0,)] * len(pts)
        syms = ('_unused',)
    return compile_points(n, syms)(pts)


# A slow tree-walking evaluator (for the self-test of the compiler).

def ev(n, env):
    k = n[0]
    if k in ('int', 'bool'):
        return n[1]
    if k == 'sym':
        return env[n[1]]
    if k == 'bin':
        a, b = ev(n[2], env), ev(n[3], env)
        op = n[1]
        return {'+': lambda: a + b, '-': lambda: a - b, '*': lambda: a * b,
                '//': lambda: _fd(a, b), '%': lambda: _md(a, b), '**': lambda: _pw(a, b),
                '<<': lambda: _shl(a, b), '>>': lambda: _shr(a, b), '&': lambda: a & b,
                '|': lambda: a | b, '^': lambda: a ^ b}[op]()
    if k == 'un':
        a = ev(n[2], env)
        return {'-': -a, '+': a, '~': ~a}[n[1]]
    if k == 'not':
        return not ev(n[1], env)
    if k in ('and', 'or'):
        a, b = ev(n[1], env), ev(n[2], env)
        return (a and b) if k == 'and' else (a or b)
    if k == 'cmp':
        vs = [ev(e, env) for e in n[2]]
        return all(CMP_FN[op](vs[i], vs[i + 1]) for i, op in enumerate(n[1]))
    name = n[1]
    if name == 'Where':
        return ev(n[2][1], env) if ev(n[2][0], env) else ev(n[2][2], env)
    vs = [ev(a, env) for a in n[2]]
    if name in CMP_CALLS:
        return CMP_FN[CMP_CALLS[name]](*vs)
    fn = {'FloorDiv': _fd, 'Mod': _md, 'CeilDiv': _cd, 'CleanDiv': _cl, 'TruncDiv': _td,
          'TruncMod': _tm, 'ModularIndexing': _mi, 'Pow': _pw, 'Abs': abs,
          'Min': lambda *a: min(a), 'Max': lambda *a: max(a),
          'And': lambda *a: all(a), 'Or': lambda *a: any(a), 'Not': lambda a: not a}[name]
    return fn(*vs)


# --------------------------------------------------------------------------
# Cases.

class Fact:
    __slots__ = ('ast', 'text', 'box')

    def __init__(self, text, box=None):
        self.ast = parse(text)
        self.text = pr(self.ast)
        self.box = box          # (sym, 'lo' | 'hi' | 'both') for a box fact


class Query:
    __slots__ = ('kind', 'ast', 'text', 'sort', 'expected', 'truth', 'vals', 'pts',
                 'ndefined', 'nfacts', 'origin')

    def __init__(self, kind, n, origin=''):
        self.kind = kind
        self.text = pr(n)
        self.ast = parse(self.text)     # what the engine reads
        self.sort = sort_of(n)
        self.origin = origin


class Case:
    def __init__(self, name, syms, box):
        self.name = name
        self.syms = list(syms)
        self.box = dict(box)
        self.items = []         # Fact or Query, in order
        self.empty = False

    def facts_before(self, q):
        out = []
        for it in self.items:
            if it is q:
                return out
            if isinstance(it, Fact):
                out.append(it)
        raise ValueError('query not in case')


def box_points(syms, box):
    total = 1
    for s in syms:
        total *= box[s][1] - box[s][0] + 1
    if total > 50 * MAX_POINTS:
        raise ValueError('box too large: %d points' % total)
    return list(itertools.product(*[range(box[s][0], box[s][1] + 1) for s in syms]))


def filter_points(pts, fact, syms):
    vs = values(fact.ast, syms, pts)
    return [p for p, v in zip(pts, vs) if v is not ERR and v]


def hull_text(q):
    if q.truth is None:
        return '[0, 0]' if q.sort == INT else '[false, false]'
    lo, hi = q.truth
    if q.sort == BOOL:
        return '[%s, %s]' % ('true' if lo else 'false', 'true' if hi else 'false')
    return '[%d, %d]' % (lo, hi)


def evaluate_case(case):
    """Computes, for every query, the domain (points where the facts so far
    hold), the values there, and the truth: the hull for range, true/false/
    unknown for known.  truth is None where the query takes no value (empty
    domain, or an error at every point)."""
    pts = box_points(case.syms, case.box)
    nfacts = 0
    case.empty = False
    for it in case.items:
        if isinstance(it, Fact):
            pts = filter_points(pts, it, case.syms)
            nfacts += 1
            continue
        q = it
        q.pts = pts
        q.nfacts = nfacts
        vs = values(q.ast, case.syms, pts)
        q.vals = vs
        dv = [v for v in vs if v is not ERR]
        q.ndefined = len(dv)
        if not pts:
            case.empty = True
        if q.kind == 'range':
            q.truth = (min(dv), max(dv)) if dv else None
            q.expected = hull_text(q)
        elif q.kind == 'known':
            if not dv:
                q.truth = None
                q.expected = 'true'
            else:
                t = all(dv)
                f = not any(dv)
                q.truth = 'true' if t else 'false' if f else 'unknown'
                q.expected = q.truth
        else:
            q.truth = None
            q.expected = SENTINEL
    return case


def case_lines(case, upto=None):
    """Battery lines of a case; returns (lines, {index in lines: query})."""
    lines = ['case %s' % case.name]
    where = {}
    for it in case.items:
        if isinstance(it, Fact):
            lines.append('assume %s' % it.text)
        else:
            where[len(lines)] = it
            lines.append('%s %s => %s' % (it.kind, it.text, it.expected))
        if it is upto:
            break
    return lines, where


# --------------------------------------------------------------------------
# Generator.

def S(name):
    return ('sym', name)


def K(v):
    return ('int', v)


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    # ---- boxes
    def gen_box(self):
        r = self.r
        nsym = r.choices((1, 2, 3), (15, 50, 35))[0]
        syms = list(ALL_SYMS[:nsym]) if r.random() < 0.6 else sorted(r.sample(ALL_SYMS, nsym))
        maxw = {1: 40, 2: 30, 3: 12}[nsym]
        while True:
            box = {}
            for s in syms:
                f = r.random()
                if f < 0.45:
                    lo = r.choice((0, 0, 1, 1, 2))
                elif f < 0.96:
                    lo = r.randint(-8, 8)
                else:           # far from zero
                    lo = r.choice((1, -1)) * r.choice((100, 1000, 10**6, 2**31 - 3, 2**63 - 5))
                w = r.randint(0, 3) if r.random() < 0.2 else r.randint(2, maxw)
                box[s] = (lo, lo + w)
            total = 1
            for s in syms:
                total *= box[s][1] - box[s][0] + 1
            if total <= MAX_POINTS:
                return syms, box

    def box_facts(self, s, lo, hi):
        r = self.r
        form = r.random()
        if form < 0.2:
            return [Fact('%d <= %s <= %d' % (lo, s, hi), (s, 'both'))]
        if form < 0.3:
            return [Fact('%s >= %d and %s <= %d' % (s, lo, s, hi), (s, 'both'))]
        return [Fact(self._bound(s, lo, True), (s, 'lo')), Fact(self._bound(s, hi, False), (s, 'hi'))]

    def _bound(self, s, c, lower):
        """A single-symbol fact equivalent to s >= c (lower) or s <= c."""
        r = self.r
        f = r.random()
        if f < 0.35:
            return '%s %s %d' % (s, '>=' if lower else '<=', c)
        if f < 0.5:
            return '%d %s %s' % (c, '<=' if lower else '>=', s)
        if f < 0.65:
            return '%s %s %d' % (s, '>' if lower else '<', c - 1 if lower else c + 1)
        if f < 0.8:
            k = r.randint(2, 4)
            rem = r.randint(0, k - 1)
            if lower:       # k*s >= k*c - rem  <=>  s >= c
                return '%d*%s >= %d' % (k, s, k * c - rem)
            return '%d*%s <= %d' % (k, s, k * c + rem)
        if f < 0.9:
            d = r.randint(1, 5)
            return '%s + %d %s %d' % (s, d, '>=' if lower else '<=', c + d)
        return '-%s %s %d' % (s, '<=' if lower else '>=', -c)

    # ---- extra facts
    def _rand_point(self, syms, box):
        return {s: self.r.randint(*box[s]) for s in syms}

    def _const_for(self, lhs, syms, box, jitter=2):
        env = self._rand_point(syms, box)
        try:
            v = ev(parse(lhs), env)
        except SGErr:
            v = 0
        return int(v) + self.r.randint(-jitter, jitter)

    def simple_fact(self, syms, box):
        r = self.r
        s = r.choice(syms)
        others = [t for t in syms if t != s]
        t = r.choice(others) if others else None
        kind = r.choices(('single', 'rel', 'lin', 'div', 'nonlin', 'eqmix'),
                         (30, 20 if t else 0, 20 if t else 0, 20, 10, 10))[0]
        ops = ('>=', '>', '<=', '<', '==', '!=')
        opw = (25, 15, 25, 15, 3, 12)
        if kind == 'single':
            lhs = r.choice((s, s, '2*%s' % s, '3*%s + 1' % s, '-%s' % s, '%s - 3' % s))
            op = r.choices(ops, opw)[0]
            c = self._const_for(lhs, syms, box)
        elif kind == 'rel':
            f = r.random()
            if f < 0.35:
                return '%s %s %s' % (s, r.choice(('>=', '>', '<=', '<', '!=')), t)
            if f < 0.42:
                return '%s == %d*%s' % (s, r.choice((2, 2, 3)), t)
            if f < 0.5:
                return '%s == %s + %d' % (s, t, r.choice((1, 1, -1, 2, 3)))
            if f < 0.53:
                return '%s == %s' % (s, t)
            lhs = '%s - %s' % (s, t)
            op = r.choices(ops, opw)[0]
            c = self._const_for(lhs, syms, box)
            if r.random() < 0.5:
                return '%s %s %s + %d' % (s, op, t, c) if c >= 0 else '%s %s %s - %d' % (s, op, t, -c)
        elif kind == 'lin':
            lhs = r.choice(('%s + %s' % (s, t), '2*%s + 3*%s' % (s, t), '%s - 2*%s' % (s, t),
                            '%s + %s + %s' % (s, t, (others + [s])[-1])))
            op = r.choices(ops, opw)[0]
            c = self._const_for(lhs, syms, box, 3)
        elif kind == 'div':
            m = r.choice((2, 2, 3, 4, 4, 8, 5))
            f = r.random()
            rr = r.randint(0, m - 1)
            if f < 0.35:
                return '%s %% %d %s %d' % (s, m, r.choice(('==', '==', '!=')), rr)
            if f < 0.5:
                return 'Mod(%s, %d) == %d' % (s, m, rr)
            if f < 0.65:
                return '(%s + %d) %% %d == 0' % (s, rr, m)
            if f < 0.75 and t:
                return '(%s + %s) %% %d == 0' % (s, t, m)
            if f < 0.85:
                return '%s // %d %s %d' % (s, m, r.choice(('==', '>=', '<=')),
                                          self._const_for('%s // %d' % (s, m), syms, box, 0))
            return 'ModularIndexing(%s, %d, %d) == %d' % (s, r.choice((1, 2)), m, rr)
        elif kind == 'eqmix':
            # equalities over floor divisions, remainders and other atoms,
            # where a symbol may also occur outside the atom
            m = r.choice((2, 3, 4))
            k = r.randint(1, 3)
            u = t or s
            cands = ['{s} // {m}', '({s} + {k}) // {m}', '{k}*{s} // {m}', '{s} + {s} // {m}',
                     '{s} - {s} % {m}', 'CeilDiv({s}, {m})', 'TruncDiv({s}, {m})',
                     'Max({s}, {k})', 'Abs({s})', '{s}*{s}', '{s} + {u} // {m}',
                     '{s} - {u} % {m}', '{s}*{u}', 'Min({s}, {u})', '{s} + {s} % {m}',
                     'ModularIndexing({s}, {m}, {k} + 1)']
            lhs = r.choice(cands).format(s=s, u=u, m=m, k=k)
            if t and r.random() < 0.3:
                rhs = r.choice(('{t} // {m}', '{m}*{t} + {k}', '({t} + {k}) // {m}', '{t}*{t}',
                                '{t} - {t} % {m}', 'Max({t}, {k})')).format(t=t, m=m, k=k)
                return '%s == %s' % (r.choice((s, lhs)), rhs)
            return '%s == %d' % (lhs, self._const_for(lhs, syms, box, 0))
        else:
            cands = ['%s*%s' % (s, s), 'Abs(%s)' % s, 'Abs(%s - 3)' % s,
                     'Where(%s > %d, %s, 0)' % (s, r.randint(*box[s]), (t or s))]
            if t:
                cands += ['%s*%s' % (s, t), 'Max(%s, %s)' % (s, t), 'Min(%s, %s)' % (s, t),
                          'Abs(%s - %s)' % (s, t)]
            lhs = r.choice(cands)
            if t and r.random() < 0.15:
                return '%s // 2 == %s' % (s, t)
            op = r.choices(ops, opw)[0]
            c = self._const_for(lhs, syms, box)
        if r.random() < 0.15:
            flip = {'>=': '<=', '>': '<', '<=': '>=', '<': '>', '==': '==', '!=': '!='}
            return '%d %s %s' % (c, flip[op], lhs)
        return '%s %s %d' % (lhs, op, c)

    def extra_fact(self, syms, box):
        r = self.r
        f = r.random()
        if f < 0.7:
            return self.simple_fact(syms, box)
        if f < 0.82:
            return '%s and %s' % (self.simple_fact(syms, box), self.simple_fact(syms, box))
        if f < 0.94:
            s = r.choice(syms)
            if r.random() < 0.5:
                a = r.randint(*box[s])
                b = r.randint(a, box[s][1] + 1)
                return '%s < %d or %s > %d' % (s, a, s, b)
            return '%s or %s' % (self.simple_fact(syms, box), self.simple_fact(syms, box))
        return 'not (%s)' % self.simple_fact(syms, box)

    # ---- integer expressions
    def leaf(self, syms):
        r = self.r
        if r.random() < 0.75:
            return S(r.choice(syms))
        return K(r.choice((0, 1, 2, 3, 4, 5, 7, 8, 10, -1, -2, -3)))

    INT_OPS = (('+', 8), ('-', 6), ('c*', 6), ('*', 2), ('//c', 5), ('%c', 5), ('Min', 4),
               ('Max', 4), ('Abs', 2), ('Where', 3), ('CeilDiv', 2), ('ModIdx', 2),
               ('TruncDiv', 1.5), ('TruncMod', 1.5), ('&c', 1.5), ('|', 1), ('^', 1),
               ('>>c', 1), ('<<c', 1), ('**', 1), ('neg', 1), ('FloorDivF', 1), ('ModF', 1),
               ('/sym', 0.4), ('CleanDiv', 0.6), ('Min3', 0.7))

    def gen_int(self, syms, depth):
        r = self.r
        if depth <= 0 or r.random() < 0.2:
            return self.leaf(syms)
        ops, ws = zip(*self.INT_OPS)
        op = r.choices(ops, ws)[0]
        d = depth - 1
        g = lambda: self.gen_int(syms, d)
        if op in ('+', '-', '*'):
            return ('bin', op, g(), g() if op != '*' else self.leaf(syms))
        if op == 'c*':
            return ('bin', '*', K(r.choice((2, 3, 4, -1, -2, 5))), g())
        if op == '//c':
            return ('bin', '//', g(), K(r.choice((2, 3, 4, 8, -2, 5, 16))))
        if op == '%c':
            return ('bin', '%', g(), K(r.choice((2, 3, 4, 8, -3, 5, 16))))
        if op in ('Min', 'Max'):
            return ('call', op, (g(), g()))
        if op == 'Min3':
            return ('call', r.choice(('Min', 'Max')), (g(), g(), g()))
        if op == 'Abs':
            return ('call', 'Abs', (g(),))
        if op == 'neg':
            a = g()
            return K(-a[1]) if a[0] == 'int' else ('un', '-', a)
        if op == 'Where':
            return ('call', 'Where', (self.gen_cond(syms, d), g(), g()))
        if op == 'CeilDiv':
            return ('call', 'CeilDiv', (g(), K(r.choice((2, 3, 4, 8)))))
        if op == 'ModIdx':
            return ('call', 'ModularIndexing', (g(), K(r.choice((1, 2, 4))),
                                                K(r.choice((2, 3, 4, 8)))))
        if op in ('TruncDiv', 'TruncMod'):
            return ('call', op, (g(), K(r.choice((2, 3, 4, -2, -3)))))
        if op == 'FloorDivF':
            return ('call', 'FloorDiv', (g(), K(r.choice((2, 3, 4)))))
        if op == 'ModF':
            return ('call', 'Mod', (g(), K(r.choice((2, 3, 4)))))
        if op == '&c':
            return ('bin', '&', g(), K(r.choice((1, 3, 6, 7, 15))))
        if op in ('|', '^'):
            return ('bin', op, g(), g())
        if op == '>>c':
            return ('bin', '>>', g(), K(r.choice((1, 2, 3))))
        if op == '<<c':
            return ('bin', '<<', g(), K(r.choice((1, 2))))
        if op == '**':
            return ('bin', '**', self.gen_int(syms, min(d, 1)), K(r.choice((2, 2, 3))))
        if op == '/sym':
            return ('bin', '//', g(), ('bin', '+', S(r.choice(syms)), K(r.randint(1, 4))))
        if op == 'CleanDiv':
            k = r.choice((2, 3, 4))
            a = g()
            if r.random() < 0.6:
                a = ('bin', '*', K(k), a)
            return ('call', 'CleanDiv', (a, K(k)))
        raise AssertionError(op)

    def gen_cond(self, syms, depth):
        r = self.r
        a = self.gen_int(syms, min(depth, 1))
        b = self.leaf(syms) if r.random() < 0.6 else K(r.randint(-2, 8))
        return ('cmp', (r.choice(('<', '<=', '>', '>=', '==', '!=')),), (a, b))

    # ---- questions
    def gen_question(self, syms, pts, facts):
        r = self.r
        f = r.random()
        if f < 0.5:
            return self.hull_question(syms, pts, facts)
        if f < 0.62:
            a = self.gen_int(syms, r.randint(0, 2))
            b = self.gen_int(syms, r.randint(0, 2))
            return ('cmp', (r.choice(('<', '<=', '>', '>=', '==', '!=')),), (a, b))
        if f < 0.72:
            s = self.gen_int(syms, r.randint(0, 1)) if r.random() < 0.5 else S(r.choice(syms))
            m = r.choice((2, 3, 4, 8))
            return ('cmp', (r.choice(('==', '!=')),), (('bin', '%', s, K(m)),
                                                       K(r.randint(0, m - 1))))
        if f < 0.82 and facts:
            n = r.choice(facts).ast
            g = r.random()
            if g < 0.3:
                return n
            if g < 0.5:
                return ('not', n)
            return self.perturb(n)
        if f < 0.87:
            a = self.hull_question(syms, pts)
            b = self.hull_question(syms, pts)
            return (r.choice(('and', 'or')), a, b)
        if f < 0.9:
            return ('not', self.hull_question(syms, pts))
        if f < 0.95:
            a = self.gen_int(syms, r.randint(0, 2))
            vs = [v for v in values(a, syms, pts) if v is not ERR]
            if len(vs) >= 2:
                lo, hi = min(vs), max(vs)
                return ('cmp', ('<=', '<='), (K(lo - r.randint(0, 1)), a, K(hi + r.randint(-1, 1))))
        a = self.hull_question(syms, pts)
        b = self.gen_cond(syms, 1)
        return (r.choice(('and', 'or')), a, b)

    def perturb(self, n):
        """The fact with one integer constant moved by one or two."""
        consts = [t for t in subterms(n) if t[0] == 'int']
        if not consts:
            return n
        target = self.r.choice(consts)
        delta = self.r.choice((-2, -1, 1, 2))
        done = [False]

        def walk(t):
            if t is target and not done[0]:
                done[0] = True
                return K(t[1] + delta)
            ks = kids(t)
            return with_kids(t, [walk(c) for c in ks]) if ks else t
        return walk(n)

    def moduli(self, facts):
        ms = set()
        for f in facts:
            for t in subterms(f.ast):
                if t[0] == 'bin' and t[1] in ('%', '//') and t[3][0] == 'int' and t[3][1] > 1:
                    ms.add(t[3][1])
                if t[0] == 'call' and t[1] in ('Mod', 'ModularIndexing') and t[2][-1][0] == 'int':
                    ms.add(t[2][-1][1])
        return sorted(ms)

    def template_int(self, syms, facts):
        """Expressions that facts often pin down exactly."""
        r = self.r
        s = r.choice(syms)
        t = r.choice([u for u in syms if u != s] or [s])
        ms = self.moduli(facts)
        m = r.choice(ms) if ms and r.random() < 0.8 else r.choice((2, 3, 4, 8))
        m2 = r.choice((m, 2 * m, max(2, m // 2), 2, 4))
        k = r.randint(1, 2 * m)
        tpl = r.choice((
            '{s} // {m} * {m}', '{s} - {s} % {m}', 'CleanDiv({s}, {m})', '{s} % {m2}',
            '({s} + {k}) % {m}', 'ModularIndexing({s}, {m}, {m2})', '{s} - {t}', '{s} + {t}',
            'Max({s}, {t}) - Min({s}, {t})', 'Abs({s} - {t})', '{s}*{t}', '({s} + {t}) // 2',
            'Where({s} >= {t}, {s} - {t}, {t} - {s})', '{s}*{s} - 2*{s}*{t} + {t}*{t}',
            'CeilDiv({s}, {m})*{m} - {s}', '({s}*{m} + {k}) // {m}', '{s} // {m2}',
            '({s} - {t}) % {m}', 'Min({s}, {t})', 'Max({s}, {t}, {k})', '{s} & {m2}',
            '{s} // {m} - {s} // {m2}', 'TruncDiv({s}, {m})', '{s}*{s}', 'Abs({s})'))
        return parse(tpl.format(s=s, t=t, m=m, m2=m2, k=k))

    def hull_question(self, syms, pts, facts=()):
        """e OP c with c near the true hull of e: often decidable."""
        r = self.r
        if facts and r.random() < 0.3:
            e = self.template_int(syms, facts)
        else:
            e = self.gen_int(syms, r.choices((0, 1, 2, 3), (2, 4, 4, 2))[0])
        vs = [v for v in values(e, syms, pts) if v is not ERR]
        if not vs:
            c = r.randint(-3, 8)
        else:
            lo, hi = min(vs), max(vs)
            c = r.choice((lo, hi, lo - 1, hi + 1, lo - r.randint(1, 5), hi + r.randint(1, 5),
                          r.choice(vs), (lo + hi) // 2))
        op = r.choice(('<', '<=', '>', '>=', '==', '!='))
        if r.random() < 0.25:
            return ('cmp', (op,), (K(c), e))
        return ('cmp', (op,), (e, K(c)))

    # ---- cases
    def gen_case(self, name, empty_ok=False):
        r = self.r
        for attempt in range(50):
            syms, box = self.gen_box()
            case = Case(name, syms, box)
            for s in syms:
                case.items.extend(self.box_facts(s, *box[s]))
            pts = box_points(syms, box)
            for f in case.items:
                pts = filter_points(pts, f, syms)
            assert len(pts) == len(box_points(syms, box)), 'box facts do not give the box'
            nextra = r.choices((0, 1, 2, 3, 4), (18, 30, 25, 17, 10))[0]
            stages = [nextra]
            if nextra >= 2 and r.random() < 0.3:
                k = r.randint(1, nextra - 1)
                stages = [k, nextra - k]
            facts = list(case.items)
            for si, nf in enumerate(stages):
                for _ in range(nf):
                    fa = Fact(self.extra_fact(syms, box))
                    case.items.append(fa)
                    facts.append(fa)
                    pts = filter_points(pts, fa, syms)
                nq = r.randint(6, 11) if len(stages) == 1 else r.randint(4, 7)
                extra = [f for f in facts if not f.box]
                for _ in range(nq):
                    kind = r.choices(('range', 'known', 'simplify'), (4, 4, 2))[0]
                    for _ in range(10):     # questions without a symbol are few
                        if kind == 'known':
                            q = self.gen_question(syms, pts, extra or facts)
                        elif r.random() < 0.15:
                            q = self.gen_question(syms, pts, extra or facts)
                        elif r.random() < 0.25:
                            q = self.template_int(syms, extra)
                        else:
                            q = self.gen_int(syms, r.choices((1, 2, 3), (3, 4, 3))[0])
                        if symbols_in(q) or r.random() < 0.02:
                            break
                    case.items.append(Query(kind, q))
            evaluate_case(case)
            if not case.empty or (empty_ok and r.random() < 0.03) or attempt == 49:
                return case
        raise AssertionError('unreachable')


# --------------------------------------------------------------------------
# Running the engine and reading its answers.

SUMMARY_RE = re.compile(r'^(\d+) passed, (\d+) failed\s*$')
LINE_RE = re.compile(r'^(.*?):(\d+): (.*)$')


class EngineFailure(Exception):
    pass


class Runner:
    def __init__(self, binpath, tmpdir):
        self.bin = binpath
        self.tmpdir = tmpdir
        self.nruns = 0
        self.notes = []

    def run_cases(self, cases, timeout=None):
        """Runs the cases in one battery.  Returns (answers, assume_fails):
        answers maps each query (by id) to ('pass',) or ('fail', msg);
        assume_fails lists (fact, msg).  Raises EngineFailure on a crash,
        a hang or output that is not a battery report."""
        self.nruns += 1
        path = os.path.join(self.tmpdir, 'r%d.sg' % self.nruns)
        lines = ['# generated by tests/diff/reason.py']
        where = {}
        for c in cases:
            ls, w = case_lines(c)
            for i, q in w.items():
                where[len(lines) + i + 1] = q
            base = len(lines)
            for i, it in enumerate(c.items):
                if isinstance(it, Fact):
                    where[base + i + 2] = it
            lines.extend(ls)
        with open(path, 'w', encoding='utf-8') as f:
            f.write('\n'.join(lines) + '\n')
        if timeout is None:
            timeout = 10 + 0.01 * len(lines)
        try:
            p = subprocess.run([self.bin, 'run', path], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise EngineFailure('timeout after %.0f s' % timeout)
        except OSError as e:
            raise EngineFailure('cannot run %s: %s' % (self.bin, e))
        out = p.stdout.decode('utf-8', 'replace').splitlines()
        err = p.stderr.decode('utf-8', 'replace')
        summary = None
        for line in out:
            m = SUMMARY_RE.match(line)
            if m:
                summary = (int(m.group(1)), int(m.group(2)))
        if p.returncode not in (0, 1) or summary is None:
            tail = (err.strip().splitlines() or ['(no stderr)'])[-1]
            raise EngineFailure('exit status %d: %s' % (p.returncode, tail[:300]))
        for line in err.splitlines():
            if 'Sanitizer' in line or 'runtime error' in line:
                raise EngineFailure('on stderr: ' + line.strip()[:300])
        answers = {}
        assume_fails = []
        nfail = 0
        for line in out:
            if not line.startswith(path + ':'):
                continue
            m = LINE_RE.match(line)
            if not m:
                continue
            nfail += 1
            it = where.get(int(m.group(2)))
            msg = m.group(3)
            if it is None:
                self.notes.append('failure on a line that is no command: ' + line)
            elif isinstance(it, Fact):
                assume_fails.append((it, msg))
            else:
                answers[id(it)] = ('fail', msg)
        nlines = sum(1 for c in cases for it in c.items if isinstance(it, Query))
        nlines += len(assume_fails)     # assume lines count only when they fail
        if summary[1] != nfail or summary[0] + summary[1] != nlines:
            self.notes.append('engine summary %d passed, %d failed for %d command lines of '
                              'which %d reported failing' % (summary[0], summary[1], nlines, nfail))
        return answers, assume_fails


def engine_got(q, ans):
    """-> ('pass',) | ('ni',) | ('got', Y) | ('other', msg)"""
    if ans is None or ans[0] == 'pass':
        return ('pass',)
    msg = ans[1]
    if msg.rstrip().endswith('not implemented'):
        return ('ni',)
    key = ': expected %s, got ' % q.expected
    pos = msg.find(key)
    if pos >= 0:
        return ('got', msg[pos + len(key):].strip())
    pos = msg.rfind(', got ')
    if pos >= 0 and ': expected ' in msg[:pos]:
        return ('got', msg[pos + len(', got '):].strip())
    return ('other', msg)


BOUND_RE = re.compile(r'^\[\s*(-oo|-?\d+|\+?oo|true|false)\s*,\s*(-oo|-?\d+|\+?oo|true|false)\s*\]$')


def parse_range(text, sort):
    """-> (lo, hi) with None for an infinite end, or None if malformed."""
    m = BOUND_RE.match(text)
    if not m:
        return None
    a, b = m.group(1).lstrip('+'), m.group(2).lstrip('+')
    if sort == BOOL:
        if a not in ('true', 'false') or b not in ('true', 'false'):
            return None
        lo, hi = a == 'true', b == 'true'
        return None if lo > hi else (lo, hi)
    if a in ('true', 'false', 'oo') or b in ('true', 'false', '-oo'):
        return None
    lo = None if a == '-oo' else int(a)
    hi = None if b == 'oo' else int(b)
    if lo is not None and hi is not None and lo > hi:
        return None
    return (lo, hi)


def fmt_point(syms, p):
    return ', '.join('%s=%d' % (s, v) for s, v in zip(syms, p)) or '(no symbols)'


def fmt_val(v):
    if v is ERR:
        return 'error'
    if v is True or v is False:
        return 'true' if v else 'false'
    return str(v)


def judge(case, q, ans):
    """-> (category, detail).  Categories:
    range: exact, loose, UNSOUND, ni, vacuous, other, MALFORMED
    known: decided, undecided, undecidable, UNSOUND, ni, vacuous, other, MALFORMED
    simplify: equivalent, fresh, NOT-EQUIVALENT, vacuous, other, MALFORMED, ni"""
    g = engine_got(q, ans)
    if g[0] == 'ni':
        return 'ni', None
    if g[0] == 'other':
        return 'other', g[1]
    vacuous = q.ndefined == 0
    if q.kind == 'range':
        if g[0] == 'pass':
            return ('vacuous' if vacuous else 'exact'), None
        rg = parse_range(g[1], q.sort)
        if rg is None:
            if g[1].startswith('error'):
                return 'other', g[1]
            return 'MALFORMED', 'range answer %r' % g[1]
        if vacuous:
            return 'vacuous', None
        lo, hi = rg
        for p, v in zip(q.pts, q.vals):
            if v is ERR:
                continue
            if (lo is not None and v < lo) or (hi is not None and v > hi):
                return 'UNSOUND', ('engine says %s; at %s the value is %s (true hull %s)'
                                   % (g[1], fmt_point(case.syms, p), fmt_val(v), q.expected))
        if (lo, hi) == q.truth:
            return 'exact', None        # same bounds, printed another way
        return 'loose', g[1]
    if q.kind == 'known':
        ansv = 'pass' if g[0] == 'pass' else g[1]
        if ansv == 'pass':
            ansv = q.expected
        if ansv not in ('true', 'false', 'unknown'):
            if ansv.startswith('error'):
                return 'other', ansv
            return 'MALFORMED', 'known answer %r' % ansv
        if vacuous:
            return 'vacuous', None
        if ansv in ('true', 'false'):
            want = ansv == 'true'
            for p, v in zip(q.pts, q.vals):
                if v is not ERR and bool(v) != want:
                    return 'UNSOUND', ('engine says %s; at %s it is %s (truth: %s)'
                                       % (ansv, fmt_point(case.syms, p), fmt_val(v), q.truth))
            return 'decided', None
        # decidable: true or false at every point (where the question raises
        # an error at some point, not deciding is no weakness)
        decidable = q.truth in ('true', 'false') and q.ndefined == len(q.pts)
        return ('undecided' if decidable else 'undecidable'), None
    # simplify
    if g[0] == 'pass':
        return 'other', 'simplify answered the sentinel itself'
    y = g[1]
    try:
        yn = parse(y)
    except ParseError as e:
        if y.startswith('error'):
            return 'other', y
        return 'MALFORMED', 'cannot parse the simplified form %r: %s' % (y, e)
    fresh = symbols_in(yn) - set(case.syms)
    if fresh:
        return 'fresh', y
    if not q.pts:
        return 'vacuous', None
    if sort_of(yn) != q.sort:
        return 'NOT-EQUIVALENT', 'simplified to %s, of sort %s for an %s' % (y, sort_of(yn), q.sort)
    yv = values(yn, case.syms, q.pts)
    for p, a, b in zip(q.pts, q.vals, yv):
        if a is ERR:
            continue
        if b is ERR or a != b or isinstance(a, bool) != isinstance(b, bool):
            return 'NOT-EQUIVALENT', ('simplified to %s; at %s the original is %s, the '
                                      'simplified form %s' % (y, fmt_point(case.syms, p),
                                                              fmt_val(a), fmt_val(b)))
    return 'equivalent', y


BAD = ('UNSOUND', 'NOT-EQUIVALENT', 'MALFORMED', 'CRASH')


# --------------------------------------------------------------------------
# Minimisation: one query, its facts, shrunk while the answer stays bad.

def single_case(name, syms, box, facts, q):
    c = Case(name, syms, box)
    c.items = list(facts) + [Query(q.kind, q.ast)]
    return c


def boxed_ok(syms, facts, needed):
    cov = {s: set() for s in syms}
    for f in facts:
        if f.box:
            cov[f.box[0]].add(f.box[1])
    return all(('both' in cov[s]) or ('lo' in cov[s] and 'hi' in cov[s]) for s in needed)


def shrink_expr(n, sort):
    """Smaller expressions of the same sort."""
    out = []
    for c in kids(n):
        if sort_of(c) == sort:
            out.append(c)
    if sort == INT and n[0] != 'int':
        out += [K(0), K(1)]
    if n[0] == 'int' and n[1] not in (0, 1):
        out.append(K(n[1] // 2))
    ks = kids(n)
    for i, c in enumerate(ks):
        for s in shrink_expr(c, sort_of(c)):
            nk = list(ks)
            nk[i] = s
            cand = with_kids(n, nk)
            if n[0] == 'call' and n[1] == 'Where' and sort_of(nk[1]) != sort_of(nk[2]):
                continue
            out.append(cand)
            if len(out) > 60:
                return out
    return out


def candidates(case, q):
    facts = case.facts_before(q)
    syms, box = case.syms, case.box
    out = []

    def used(fs, qn):
        u = set(symbols_in(qn))
        for f in fs:
            if not f.box:
                u |= symbols_in(f.ast)
        return u

    def add(fs, qn, sy=syms, bx=box):
        need = used(fs, qn)
        sy2 = [s for s in sy if s in need]
        fs2 = [f for f in fs if not f.box or f.box[0] in need]
        if not boxed_ok(sy2, fs2, need):
            return
        c = single_case('m%d' % len(out), sy2, {s: bx[s] for s in sy2}, fs2,
                        Query(q.kind, qn))
        out.append(c)

    for i, f in enumerate(facts):
        if not f.box:
            add(facts[:i] + facts[i + 1:], q.ast)
    for s in shrink_expr(q.ast, q.sort):
        add(facts, s)
    for f in facts:
        if not f.box and f.ast[0] in ('and', 'or'):
            for part in (f.ast[1], f.ast[2]):
                nf = Fact(pr(part))
                add([nf if g is f else g for g in facts], q.ast)
    for s in syms:
        lo, hi = box[s]
        for nlo, nhi in ((lo + 1, hi), (lo, hi - 1), (lo, (lo + hi) // 2), ((lo + hi + 1) // 2, hi),
                         (lo, lo + 7), (hi - 7, hi)):
            if lo <= nlo <= nhi <= hi and (nlo, nhi) != (lo, hi):
                bx = dict(box)
                bx[s] = (nlo, nhi)
                fs = [g for g in facts if not (g.box and g.box[0] == s)]
                fs = [Fact('%d <= %s <= %d' % (nlo, s, nhi), (s, 'both'))] + fs
                add(fs, q.ast, syms, bx)
    return out


def minimise(runner, case, q, verdict, deadline, max_rounds=60):
    """-> (case, query, (category, detail)) of a smallest reproduction found,
    or None if the query alone (with its facts) does not reproduce."""
    cur = single_case('repro', case.syms, case.box, case.facts_before(q), q)
    try:
        evaluate_case(cur)
        ans, _ = runner.run_cases([cur])
    except EngineFailure:
        return None
    cq = cur.items[-1]
    v = judge(cur, cq, ans.get(id(cq)))
    if v[0] != verdict:
        return None
    best = (cur, cq, v)
    for _ in range(max_rounds):
        if time.time() > deadline:
            break
        cands = candidates(best[0], best[1])
        ok = []
        for c in cands:
            try:
                evaluate_case(c)
            except ValueError:
                continue
            if c.items[-1].ndefined:
                ok.append(c)
        if not ok:
            break
        try:
            ans, _ = runner.run_cases(ok)
        except EngineFailure:
            break
        for c in ok:
            cq = c.items[-1]
            v = judge(c, cq, ans.get(id(cq)))
            if v[0] == verdict:
                c.name = 'repro'
                best = (c, cq, v)
                break
        else:
            break
    return best


# --------------------------------------------------------------------------
# Driver.

class Stats:
    def __init__(self):
        self.c = {}

    def add(self, kind, cat):
        self.c[(kind, cat)] = self.c.get((kind, cat), 0) + 1

    def get(self, kind, cat):
        return self.c.get((kind, cat), 0)

    def total(self, kind):
        return sum(v for (k, _), v in self.c.items() if k == kind)


def pct(a, b):
    return '%.1f%%' % (100.0 * a / b) if b else 'n/a'


def run_chunk(runner, cases, results):
    """Runs cases, isolating crashing ones; fills results[id(query)] and
    returns the assume failures."""
    try:
        ans, af = runner.run_cases(cases)
    except EngineFailure as e:
        if len(cases) == 1:
            for it in cases[0].items:
                if isinstance(it, Query):
                    results[id(it)] = ('CRASH', str(e))
            return []
        h = len(cases) // 2
        return run_chunk(runner, cases[:h], results) + run_chunk(runner, cases[h:], results)
    for c in cases:
        for it in c.items:
            if isinstance(it, Query):
                results[id(it)] = ans.get(id(it), ('pass',))
    return af


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seed', type=int, default=None)
    ap.add_argument('--cases', type=int, default=DEFAULT_CASES)
    ap.add_argument('--bin', default=None)
    ap.add_argument('--keep', default=None, help='write the generated battery to this file')
    ap.add_argument('--no-minimize', action='store_true')
    ap.add_argument('--min-budget', type=float, default=20.0,
                    help='seconds spent minimising in all (default 20)')
    ap.add_argument('--verbose', action='store_true')
    ap.add_argument('--selftest', action='store_true')
    args = ap.parse_args(argv)
    if args.selftest:
        return selftest()
    seed = args.seed
    if seed is None:
        env = os.environ.get('SG_TEST_SEED', '')
        seed = int(env) if env.strip() else DEFAULT_SEED
    binpath = args.bin or os.environ.get('SG_BIN') or './shapeguard'
    if not os.path.exists(binpath):
        print('reason.py: no engine at %s' % binpath)
        return 2
    t0 = time.time()
    gen = Gen(seed)
    cases = [gen.gen_case('c%d' % i, empty_ok=True) for i in range(args.cases)]
    tgen = time.time() - t0
    if args.keep:
        with open(args.keep, 'w', encoding='utf-8') as f:
            f.write('# tests/diff/reason.py --seed %d --cases %d\n' % (seed, args.cases))
            for c in cases:
                f.write('\n'.join(case_lines(c)[0]) + '\n')
    print('reason.py: seed %d, %d cases, engine %s' % (seed, len(cases), binpath))
    with tempfile.TemporaryDirectory(prefix='sg-reason-') as tmp:
        runner = Runner(binpath, tmp)
        results = {}
        assume_fails = []
        for i in range(0, len(cases), 100):
            assume_fails += run_chunk(runner, cases[i:i + 100], results)
        trun = time.time() - t0 - tgen
        stats = Stats()
        bad = []
        others = []
        ncases_empty = sum(1 for c in cases if c.empty)
        for c in cases:
            for it in c.items:
                if not isinstance(it, Query):
                    continue
                r = results[id(it)]
                if r[0] == 'CRASH':
                    v = ('CRASH', r[1])
                else:
                    v = judge(c, it, r)
                stats.add(it.kind, v[0])
                if v[0] in BAD:
                    bad.append((c, it, v))
                elif v[0] == 'other':
                    others.append((c, it, v))
        # ---- report
        print('generated in %.1f s, engine ran in %.1f s (%d runs)' % (tgen, trun, runner.nruns))
        print('cases: %d (%d with a query over an empty domain), facts: %d, assume lines '
              'the engine failed: %d' % (len(cases), ncases_empty,
                                         sum(1 for c in cases for it in c.items
                                             if isinstance(it, Fact)), len(assume_fails)))
        if assume_fails:
            kinds = {}
            for f, msg in assume_fails:
                key = msg.split(': ', 1)[-1] if 'not implemented' in msg else msg.rsplit(': ', 1)[-1]
                kinds[key] = kinds.get(key, 0) + 1
            for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])[:8]:
                print('    assume failed (%d): %s' % (v, k))
        rt = stats.total('range')
        ex, lo, un = stats.get('range', 'exact'), stats.get('range', 'loose'), stats.get('range', 'UNSOUND')
        print('range: %d queries: exact %d, sound but loose %d, UNSOUND %d, not implemented %d, '
              'vacuous %d, other %d, malformed %d, crash %d; exact %s of answered'
              % (rt, ex, lo, un, stats.get('range', 'ni'), stats.get('range', 'vacuous'),
                 stats.get('range', 'other'), stats.get('range', 'MALFORMED'),
                 stats.get('range', 'CRASH'), pct(ex, ex + lo + un)))
        kt = stats.total('known')
        dd, du = stats.get('known', 'decided'), stats.get('known', 'undecided')
        print('known: %d queries: decidable and decided %d, decidable undecided %d, undecidable %d, '
              'UNSOUND %d, not implemented %d, vacuous %d, other %d, malformed %d, crash %d; '
              'decided %s of decidable answered'
              % (kt, dd, du, stats.get('known', 'undecidable'), stats.get('known', 'UNSOUND'),
                 stats.get('known', 'ni'), stats.get('known', 'vacuous'),
                 stats.get('known', 'other'), stats.get('known', 'MALFORMED'),
                 stats.get('known', 'CRASH'), pct(dd, dd + du)))
        st = stats.total('simplify')
        print('simplify: %d checks: equivalent %d, skipped (fresh symbols) %d, NOT EQUIVALENT %d, '
              'vacuous %d, other %d, malformed %d, crash %d'
              % (st, stats.get('simplify', 'equivalent'), stats.get('simplify', 'fresh'),
                 stats.get('simplify', 'NOT-EQUIVALENT'), stats.get('simplify', 'vacuous'),
                 stats.get('simplify', 'other'), stats.get('simplify', 'MALFORMED'),
                 stats.get('simplify', 'CRASH')))
        if args.verbose:
            for c, q, v in others[:20]:
                print('  other answer: %s %s: %s' % (q.kind, q.text, v[1]))
        elif others:
            kinds = {}
            for c, q, v in others:
                kinds[v[1].split(':')[0][:80]] = 1
            print('  other answers (not judged), e.g.: %s' % '; '.join(
                '%s %s -> %s' % (q.kind, q.text, v[1][:120]) for c, q, v in others[:3]))
        for n in runner.notes[:10]:
            print('note: ' + n)
        # ---- bad answers, minimised
        deadline = time.time() + args.min_budget
        seen = set()
        repros = []
        for c, q, v in bad:
            print('')
            print('%s: %s %s' % (v[0], q.kind, q.text))
            print('  %s' % v[1])
            if v[0] == 'CRASH':
                print('  case:')
                print('    ' + '\n    '.join(case_lines(c)[0]))
                continue
            print('  facts: %s' % ('; '.join(f.text for f in c.facts_before(q)) or 'none'))
            key = (q.kind, v[0], q.text)
            m = None
            why = 'not minimised'
            if not args.no_minimize and time.time() < deadline and key not in seen:
                seen.add(key)
                m = minimise(runner, c, q, v[0], deadline)
                why = 'the query alone after its facts does not reproduce'
            if m is None:
                lines = case_lines(c, upto=q)[0]
                print('  reproduce (the whole case up to the query; %s):' % why)
            else:
                mc, mq, mv = m
                lines = case_lines(mc)[0]
                print('  minimised: %s' % mv[1])
                print('  reproduce:')
                one = '; '.join(lines[1:])
                if one not in repros:
                    repros.append(one)
            print('    ' + '\n    '.join(lines))
        if repros:
            print('')
            print('distinct minimised reproductions (%d):' % len(repros))
            for one in repros:
                print('  ' + one)
    nbad = len(bad)
    nrk = stats.total('range') + stats.total('known')
    all_ni = nrk > 0 and stats.get('range', 'ni') + stats.get('known', 'ni') == nrk
    total = sum(stats.c.values())
    if all_ni:
        print('range and known are not implemented: skipping')
    print('%d passed, %d failed' % (total - nbad, nbad))
    if nbad:
        return 1
    return 77 if all_ni else 0


# --------------------------------------------------------------------------
# Self-test of the oracle itself (no engine).

def selftest():
    fails = []

    def check(cond, what):
        if not cond:
            fails.append(what)

    # 1. Hand-made cases: hulls and truths.
    def mk(syms, box, facts, queries):
        c = Case('t', syms, box)
        for f in facts:
            c.items.append(Fact(f))
        qs = []
        for kind, text in queries:
            q = Query(kind, parse(text))
            c.items.append(q)
            qs.append(q)
        evaluate_case(c)
        return qs

    qs = mk(['x'], {'x': (0, 7)}, ['0 <= x', 'x <= 7', 'x % 4 == 0'],
            [('range', 'x'), ('range', 'x // 3'), ('known', 'x == 0 or x == 4'),
             ('known', 'x % 2 == 1'), ('known', 'x < 4'), ('range', 'x < 5'),
             ('range', 'x > 10'), ('range', 'CleanDiv(x, 8)'), ('range', '12 // (x - 4)')])
    want = [(0, 4), (0, 1), 'true', 'false', 'unknown', (True, True), (False, False),
            (0, 0), (-3, -3)]
    for q, w in zip(qs, want):
        check(q.truth == w, 'hand case 1: %s %s: got %r, want %r' % (q.kind, q.text, q.truth, w))
    check(qs[5].expected == '[true, true]', 'bool hull text')
    check(qs[0].expected == '[0, 4]', 'int hull text')
    qs = mk(['x', 'y'], {'x': (-3, 4), 'y': (0, 5)},
            ['-3 <= x <= 4', 'y >= 0 and y <= 5', 'x >= y', 'x + y <= 5'],
            [('range', 'x'), ('range', 'y'), ('range', 'x - y'), ('known', 'y <= 2'),
             ('known', 'x < y'), ('range', 'Max(x, y) - Min(x, y)'), ('range', 'x*y'),
             ('known', 'x >= 0')])
    want = [(0, 4), (0, 2), (0, 4), 'true', 'false', (0, 4), (0, 6), 'true']
    for q, w in zip(qs, want):
        check(q.truth == w, 'hand case 2: %s %s: got %r, want %r' % (q.kind, q.text, q.truth, w))
    qs = mk(['x'], {'x': (0, 3)}, ['x >= 0', 'x <= 3', 'x > 5'], [('range', 'x'), ('known', 'x == 1')])
    check(qs[0].truth is None and qs[0].ndefined == 0, 'empty domain range')
    check(qs[1].truth is None, 'empty domain known')
    qs = mk(['x', 'y', 'z'], {'x': (0, 5), 'y': (0, 5), 'z': (1, 3)},
            ['0 <= x <= 5', '0 <= y <= 5', '1 <= z <= 3', 'x == 2*y', 'y == z + 1'],
            [('range', 'x'), ('known', 'x % 4 == 0'), ('range', 'TruncDiv(-x - 1, 3)'),
             ('range', 'TruncMod(-x - 1, 3)'), ('range', 'ModularIndexing(x + 1, 2, 3)'),
             ('range', 'CeilDiv(x, 4)'), ('range', '(x ^ 5) & 6 | 1'),
             ('range', 'Where(x > 4, x, -x)'), ('range', '-2**2 + x >> 1'),
             ('known', 'x == 4 < 5 <= y + 3')])
    # x in {4}: y = 2, z = 1 (y <= 5, so z can be 1..3 -> y 2..4 -> x 4..8; x <= 5 -> x = 4)
    want = [(4, 4), 'true', (-1, -1), (-2, -2), (2, 2), (1, 1), (1, 1), (-4, -4), (0, 0), 'true']
    for q, w in zip(qs, want):
        check(q.truth == w, 'hand case 3: %s %s: got %r, want %r' % (q.kind, q.text, q.truth, w))

    # 2. Box facts as generated equal the box exactly.
    g = Gen(1)
    for _ in range(2000):
        lo = g.r.randint(-10, 10)
        hi = lo + g.r.randint(0, 12)
        for f in g.box_facts('x', lo, hi):
            pts = [(v,) for v in range(lo - 3, hi + 4)]
            vs = values(f.ast, ['x'], pts)
            side = f.box[1]
            for (v,), t in zip(pts, vs):
                ok = ((side in ('lo', 'both') and v < lo) or (side in ('hi', 'both') and v > hi))
                if t is ERR or bool(t) == ok:
                    fails.append('box fact %s wrong at x=%d (box [%d, %d])' % (f.text, v, lo, hi))
                    break

    # 3. Printer round trip and compiled evaluator against the tree walker and
    # against Python's own eval of the printed text (where that applies).
    g = Gen(2)
    syms = ['x', 'y', 'z']
    box = {'x': (-5, 6), 'y': (-3, 4), 'z': (0, 3)}
    pts = box_points(syms, box)
    pyns = {'FloorDiv': _fd, 'Mod': _md, 'CeilDiv': _cd, 'CleanDiv': _cl, 'TruncDiv': _td,
            'TruncMod': _tm, 'ModularIndexing': _mi, 'Abs': abs, 'Pow': _pw,
            'Min': lambda *a: min(a), 'Max': lambda *a: max(a)}
    for i in range(600):
        if i % 3 == 0:
            n = g.gen_question(syms, pts[:50], [])
        else:
            n = g.gen_int(syms, 3)
        t = pr(n)
        try:
            back = parse(t)
        except ParseError as e:
            fails.append('printed form does not parse: %s (%s)' % (t, e))
            continue
        if back != n:
            fails.append('print/parse round trip: %s -> %r' % (t, back))
            continue
        vs = values(n, syms, pts)
        has_where = any(s[0] == 'call' and s[1] == 'Where' for s in subterms(n))
        for p, v in list(zip(pts, vs))[::7]:
            env = dict(zip(syms, p))
            try:
                w = ev(n, env)
            except SGErr:
                w = ERR
            if w is not v and w != v:
                fails.append('compiled %s at %r: %r, tree walker %r' % (t, p, v, w))
                break
            if has_where or any(s[0] in ('and', 'or') or (s[0] == 'cmp' and len(s[1]) > 1)
                                for s in subterms(n)):
                continue    # Python's eval short-circuits these
            try:
                pv = eval(t.replace('true', 'True').replace('false', 'False'), dict(pyns), env)
            except (SGErr, ZeroDivisionError, ValueError):
                pv = ERR
            if pv is not v and pv != v:
                fails.append('compiled %s at %r: %r, Python eval %r' % (t, p, v, pv))
                break

    # 4. Judging: hand-made engine answers.
    c = Case('t', ['x'], {'x': (0, 7)})
    c.items = [Fact('0 <= x', ('x', 'lo')), Fact('x <= 7', ('x', 'hi')),
               Query('range', parse('x // 2')), Query('known', parse('x >= 1')),
               Query('simplify', parse('x // 8')), Query('range', parse('x > 3'))]
    evaluate_case(c)
    qr, qk, qs_, qb = c.items[2:]
    J = lambda q, msg: judge(c, q, ('fail', msg) if msg else ('pass',))[0]
    check(J(qr, None) == 'exact', 'judge exact')
    check(J(qr, 'range x // 2: expected [0, 3], got [0, 4]') == 'loose', 'judge loose')
    check(J(qr, 'range x // 2: expected [0, 3], got [-oo, oo]') == 'loose', 'judge loose inf')
    check(J(qr, 'range x // 2: expected [0, 3], got [1, 3]') == 'UNSOUND', 'judge unsound lo')
    check(J(qr, 'range x // 2: expected [0, 3], got [0, 2]') == 'UNSOUND', 'judge unsound hi')
    check(J(qr, 'range x // 2: not implemented') == 'ni', 'judge ni')
    check(J(qr, 'range x // 2: expected [0, 3], got [false, true]') == 'MALFORMED', 'judge malformed')
    check(J(qk, None) == 'undecidable', 'judge undecidable')
    check(J(qk, 'known x >= 1: expected unknown, got true') == 'UNSOUND', 'judge known unsound')
    check(J(qk, 'known x >= 1: expected unknown, got false') == 'UNSOUND', 'judge known unsound f')
    check(J(qs_, 'simplify x // 8: expected q_sentinel, got 0') == 'equivalent', 'judge simplify eq')
    check(J(qs_, 'simplify x // 8: expected q_sentinel, got x') == 'NOT-EQUIVALENT', 'judge simplify ne')
    check(J(qs_, 'simplify x // 8: expected q_sentinel, got k0*8') == 'fresh', 'judge simplify fresh')
    check(J(qs_, 'simplify x // 8: expected q_sentinel, got x > 1') == 'NOT-EQUIVALENT',
          'judge simplify sort')
    check(J(qb, 'range x > 3: expected [false, true], got [false, true]') == 'exact', 'judge bool')
    check(J(qb, 'range x > 3: expected [false, true], got [true, true]') == 'UNSOUND',
          'judge bool unsound')
    check(J(qb, 'range x > 3: expected [false, true], got [0, 1]') == 'MALFORMED', 'judge bool malformed')

    # 5. The generator makes cases (and their batteries parse back).
    g = Gen(3)
    n = 0
    t0 = time.time()
    for i in range(150):
        c = g.gen_case('c%d' % i, empty_ok=True)
        for line in case_lines(c)[0][1:]:
            body = line.split(' ', 1)[1].split(' => ')[0]
            parse(body)
        n += len(c.items)
    dt = time.time() - t0

    for f in fails[:30]:
        print('SELFTEST FAIL: ' + f)
    print('selftest: %d failures (%d generated lines in %.2f s)' % (len(fails), n, dt))
    return 2 if fails else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
