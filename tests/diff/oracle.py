#!/usr/bin/env python3
"""Differential test of `shapeguard run` (eval) against Python's integers.

The generator builds small random expression trees in the battery syntax of
doc/battery.md, prints them, and evaluates them with its own evaluator
written over Python's unbounded integers (no eval() of battery text, no
sympy).  It then writes a battery of `eval EXPR [where ...] => VALUE` lines,
runs `$SG_BIN run FILE`, and judges the failures the engine reports with the
lenient error rule:

  * Python gives a value  -> the engine must give exactly that value;
  * Python gives `error K` -> the engine may give `error K` or any value of
    the right sort (it builds the expression symbolically first and may
    simplify the failing part away: x - x is 0 even where x fails), or
    another error kind that a strictly evaluated part raises
    ("other-error-kind"), or one that some operation in the expression can
    raise once a failing part was replaced by a value ("shifted-error-kind":
    CeilDiv(7, CleanDiv(5, 2) % -1) may become CeilDiv(7, 0)).

`and`/`or`/chained comparisons are computed eagerly by the oracle (an error in
any operand makes the whole an error, judged leniently); `Where(c, a, b)` only
evaluates the taken arm, strictly.  Error kinds outside the spec (such as
`error limit`), crashes and hangs are mismatches.  Mismatches are then
minimised, each in a battery case of its own, and printed with Python's and
the engine's answers.

Usage:
  oracle.py [--seed N] [--count N] [--bin PATH] [--keep FILE]
            [--no-minimize] [--min-budget SECONDS]
  oracle.py --selftest [--count N]      check the evaluator against Python
  oracle.py --eval EXPR [--where x=1,y=2]   print the oracle's answer

The seed is --seed, else $SG_TEST_SEED, else 12345.  Exit status: 0 when
every case agrees, 1 on a mismatch (or an oracle self-test failure), 2 on a
usage error.
"""

import argparse
import ast
import itertools
import math
import operator
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from fractions import Fraction

DEFAULT_SEED = 12345
LIMIT_BITS = 2048          # results beyond this many bits are regenerated
SYMBOLS = ('x', 'y', 'z', 'w')

ZD = 'zero-division'
NE = 'negative-exponent'
IX = 'inexact'

INT = 'int'
BOOL = 'bool'


class SGError(Exception):
    def __init__(self, kind):
        super().__init__(kind)
        self.kind = kind


class TooBig(Exception):
    pass


class Err:
    """An oracle error: every kind that a strictly evaluated part raises,
    the first (left to right) first."""
    __slots__ = ('kinds',)

    def __init__(self, kinds):
        self.kinds = tuple(kinds)

    def __repr__(self):
        return 'Err(%s)' % ', '.join(self.kinds)


def merge_errs(results):
    kinds = []
    for r in results:
        if isinstance(r, Err):
            for k in r.kinds:
                if k not in kinds:
                    kinds.append(k)
    return Err(kinds) if kinds else None


# --------------------------------------------------------------------------
# AST: plain tuples.
#   ('int', v)  ('bool', b, spelling)  ('sym', name)  ('par', e)
#   ('bin', op, a, b)  ('un', op, a)  ('not', a)  ('and', a, b)  ('or', a, b)
#   ('cmp', (op, ...), (e0, e1, ...))  ('call', name, (args...))

def C(v):
    return ('int', v)


def Sym(n):
    return ('sym', n)


def Bool(b, spelling=None):
    return ('bool', b, spelling or ('true' if b else 'false'))


def Bin(op, a, b):
    return ('bin', op, a, b)


def Un(op, a):
    return ('un', op, a)


def Call(name, *args):
    return ('call', name, tuple(args))


def Par(a):
    return ('par', a)


def Not_(a):
    return ('not', a)


def And_(a, b):
    return ('and', a, b)


def Or_(a, b):
    return ('or', a, b)


def Cmp(ops, xs):
    return ('cmp', tuple(ops), tuple(xs))


BOOL_CALLS = frozenset(('Eq', 'Ne', 'Lt', 'Le', 'Gt', 'Ge', 'And', 'Or', 'Not'))


def sort_of(n):
    k = n[0]
    if k in ('int', 'sym', 'bin', 'un'):
        return INT
    if k in ('bool', 'not', 'and', 'or', 'cmp'):
        return BOOL
    if k == 'par':
        return sort_of(n[1])
    if n[1] == 'Where':
        return sort_of(n[2][1])
    return BOOL if n[1] in BOOL_CALLS else INT


def kids(n):
    k = n[0]
    if k in ('int', 'bool', 'sym'):
        return ()
    if k == 'par' or k == 'not':
        return (n[1],)
    if k == 'bin':
        return (n[2], n[3])
    if k == 'un':
        return (n[2],)
    if k in ('and', 'or'):
        return (n[1], n[2])
    return n[2]                 # cmp operands, call args


def with_kids(n, ks):
    k = n[0]
    if k == 'par' or k == 'not':
        return (k, ks[0])
    if k == 'bin':
        return ('bin', n[1], ks[0], ks[1])
    if k == 'un':
        return ('un', n[1], ks[0])
    if k in ('and', 'or'):
        return (k, ks[0], ks[1])
    return (k, n[1], tuple(ks))


def size(n):
    s = 1
    if n[0] == 'int':
        s += len(str(abs(n[1]))) // 6
    for c in kids(n):
        s += size(c)
    return s


def symbols_in(n, acc=None):
    if acc is None:
        acc = []
    if n[0] == 'sym':
        if n[1] not in acc:
            acc.append(n[1])
    else:
        for c in kids(n):
            symbols_in(c, acc)
    return acc


def well_sorted(n):
    """Integer operands for arithmetic and relations, booleans for the
    logic, Where's condition boolean and its arms of one sort."""
    k = n[0]
    ks = kids(n)
    if k in ('bin', 'un', 'cmp'):
        want = [INT] * len(ks)
    elif k in ('not', 'and', 'or'):
        want = [BOOL] * len(ks)
    elif k == 'call':
        name = n[1]
        if name == 'Where':
            if len(ks) != 3 or sort_of(ks[1]) != sort_of(ks[2]):
                return False
            want = [BOOL, sort_of(ks[1]), sort_of(ks[1])]
        elif name in ('And', 'Or', 'Not'):
            want = [BOOL] * len(ks)
        else:
            want = [INT] * len(ks)
    else:
        want = [sort_of(c) for c in ks]
    return all(sort_of(c) == w and well_sorted(c) for c, w in zip(ks, want))


def has_shortcircuit(n):
    if n[0] in ('and', 'or') or (n[0] == 'cmp' and len(n[1]) > 1):
        return True
    return any(has_shortcircuit(c) for c in kids(n))


# --------------------------------------------------------------------------
# Semantics (doc/battery.md), exact over Python ints.

def chk(v):
    if type(v) is int and v.bit_length() > LIMIT_BITS:
        raise TooBig()
    return v


def op_floordiv(a, b):
    if b == 0:
        raise SGError(ZD)
    return a // b


def op_mod(a, b):
    if b == 0:
        raise SGError(ZD)
    return a % b


def op_ceildiv(a, b):
    if b == 0:
        raise SGError(ZD)
    return -((-a) // b)


def op_cleandiv(a, b):
    if b == 0:
        raise SGError(ZD)
    if a % b != 0:
        raise SGError(IX)
    return a // b


def op_truncdiv(a, b):
    if b == 0:
        raise SGError(ZD)
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def op_truncmod(a, b):
    return a - b * op_truncdiv(a, b)


def op_modidx(x, d, m):
    return op_mod(op_floordiv(x, d), m)


def op_pow(a, b):
    if b < 0:
        raise SGError(NE)
    if b > 1 and abs(a) > 1 and (abs(a).bit_length() - 1) * b > LIMIT_BITS:
        raise TooBig()
    return a ** b


def op_shl(a, b):
    if b < 0:
        raise SGError(NE)
    if a != 0 and b > LIMIT_BITS:
        raise TooBig()
    return a << b


def op_shr(a, b):
    if b < 0:
        raise SGError(NE)
    return a >> b


BINOPS = {
    '+': operator.add, '-': operator.sub, '*': operator.mul,
    '//': op_floordiv, '%': op_mod, '**': op_pow,
    '<<': op_shl, '>>': op_shr,
    '&': operator.and_, '|': operator.or_, '^': operator.xor,
}
UNOPS = {'-': operator.neg, '+': operator.pos, '~': operator.invert}
CMPOPS = {'==': operator.eq, '!=': operator.ne, '<': operator.lt,
          '<=': operator.le, '>': operator.gt, '>=': operator.ge}
CMPFNS = {'Eq': '==', 'Ne': '!=', 'Lt': '<', 'Le': '<=', 'Gt': '>', 'Ge': '>='}
FUNCS = {
    'FloorDiv': op_floordiv, 'Mod': op_mod, 'CeilDiv': op_ceildiv,
    'CleanDiv': op_cleandiv, 'TruncDiv': op_truncdiv,
    'TruncMod': op_truncmod, 'ModularIndexing': op_modidx,
    'Min': lambda *a: min(a), 'Max': lambda *a: max(a),
    'Abs': abs, 'Pow': op_pow,
    'And': lambda *a: all(a), 'Or': lambda *a: any(a),
    'Not': lambda c: not c,
}
for _f, _o in CMPFNS.items():
    FUNCS[_f] = CMPOPS[_o]


def ev_lazy(n, env):
    """Python's own evaluation order: `and`/`or`/chains short-circuit,
    Where evaluates the taken arm only, function arguments are eager.
    Raises SGError.  Used by the self-test against eval()."""
    k = n[0]
    if k == 'int' or k == 'bool':
        return n[1]
    if k == 'sym':
        return env[n[1]]
    if k == 'par':
        return ev_lazy(n[1], env)
    if k == 'bin':
        a = ev_lazy(n[2], env)
        b = ev_lazy(n[3], env)
        return chk(BINOPS[n[1]](a, b))
    if k == 'un':
        return chk(UNOPS[n[1]](ev_lazy(n[2], env)))
    if k == 'not':
        return not ev_lazy(n[1], env)
    if k == 'and':
        return ev_lazy(n[1], env) and ev_lazy(n[2], env)
    if k == 'or':
        return ev_lazy(n[1], env) or ev_lazy(n[2], env)
    if k == 'cmp':
        left = ev_lazy(n[2][0], env)
        for op, e in zip(n[1], n[2][1:]):
            right = ev_lazy(e, env)
            if not CMPOPS[op](left, right):
                return False
            left = right
        return True
    name, args = n[1], n[2]
    if name == 'Where':
        c = ev_lazy(args[0], env)
        return ev_lazy(args[1] if c else args[2], env)
    vals = [ev_lazy(a, env) for a in args]
    return chk(FUNCS[name](*vals))


def _apply(f, vals):
    try:
        return chk(f(*vals))
    except SGError as e:
        return Err((e.kind,))


DIVISOR_ARGS = {'//': (1,), '%': (1,), 'FloorDiv': (1,), 'Mod': (1,),
                'CeilDiv': (1,), 'CleanDiv': (1,), 'TruncDiv': (1,),
                'TruncMod': (1,), 'ModularIndexing': (1, 2)}
EXPONENT_ARGS = {'**': 1, 'Pow': 1, '<<': 1, '>>': 1}


def own_errors(op, vals, err):
    """An operand failed: add the errors that the operation itself raises
    whatever the failed operand's value (a zero divisor, a negative
    exponent), since an engine may check those first."""
    kinds = list(err.kinds)
    for i in DIVISOR_ARGS.get(op, ()):
        if not isinstance(vals[i], Err) and vals[i] == 0 and ZD not in kinds:
            kinds.append(ZD)
    i = EXPONENT_ARGS.get(op)
    if i is not None and not isinstance(vals[i], Err) and vals[i] < 0 and NE not in kinds:
        kinds.append(NE)
    return Err(kinds)


def possible_kinds(n, acc=None):
    """Every error kind that some operation in the expression can raise."""
    if acc is None:
        acc = set()
    k = n[0]
    op = n[1] if k in ('bin', 'call') else None
    if op in DIVISOR_ARGS:
        acc.add(ZD)
    if op in EXPONENT_ARGS:
        acc.add(NE)
    if op == 'CleanDiv':
        acc.add(IX)
    for c in kids(n):
        possible_kinds(c, acc)
    return acc


def ev_all(n, env):
    """The oracle for the engine: returns a value or an Err holding every
    error kind a strictly evaluated part raises.  `and`/`or`/chains are
    eager; Where is lazy in its arms (unless its condition fails)."""
    k = n[0]
    if k == 'int' or k == 'bool':
        return n[1]
    if k == 'sym':
        return env[n[1]]
    if k == 'par':
        return ev_all(n[1], env)
    if k == 'bin':
        a = ev_all(n[2], env)
        b = ev_all(n[3], env)
        e = merge_errs((a, b))
        if e:
            return own_errors(n[1], (a, b), e)
        return _apply(BINOPS[n[1]], (a, b))
    if k == 'un':
        a = ev_all(n[2], env)
        return a if isinstance(a, Err) else _apply(UNOPS[n[1]], (a,))
    if k == 'not':
        a = ev_all(n[1], env)
        return a if isinstance(a, Err) else (not a)
    if k == 'and' or k == 'or':
        a = ev_all(n[1], env)
        b = ev_all(n[2], env)
        e = merge_errs((a, b))
        if e:
            return e
        return (a and b) if k == 'and' else (a or b)
    if k == 'cmp':
        vals = [ev_all(e, env) for e in n[2]]
        e = merge_errs(vals)
        if e:
            return e
        return all(CMPOPS[op](vals[i], vals[i + 1]) for i, op in enumerate(n[1]))
    name, args = n[1], n[2]
    if name == 'Where':
        c = ev_all(args[0], env)
        if isinstance(c, Err):
            return merge_errs((c, ev_all(args[1], env), ev_all(args[2], env)))
        return ev_all(args[1] if c else args[2], env)
    vals = [ev_all(a, env) for a in args]
    e = merge_errs(vals)
    if e:
        return own_errors(name, vals, e)
    return _apply(FUNCS[name], vals)


# --------------------------------------------------------------------------
# Printer.  style: 'n' normal, 'c' compact, 'f' fully parenthesised.
# pymode prints Where(c, a, b) as a Python conditional (for the self-test).

PREC = {'|': 4, '^': 5, '&': 6, '<<': 7, '>>': 7, '+': 8, '-': 8,
        '*': 9, '//': 9, '%': 9}
P_OR, P_AND, P_NOT, P_CMP, P_UN, P_POW, P_ATOM = 0, 1, 2, 3, 10, 11, 12


def pr(n, need=0, style='n', pymode=False):
    k = n[0]
    sp = '' if style == 'c' else ' '
    if k == 'int':
        s = str(n[1])
        p = P_ATOM if n[1] >= 0 else P_UN
    elif k == 'bool':
        s, p = n[2], P_ATOM
    elif k == 'sym':
        s, p = n[1], P_ATOM
    elif k == 'par':
        s, p = '(' + pr(n[1], 0, style, pymode) + ')', P_ATOM
    elif k == 'bin':
        op = n[1]
        if op == '**':
            p = P_POW
            s = pr(n[2], P_ATOM, style, pymode) + sp + '**' + sp + pr(n[3], P_UN, style, pymode)
        else:
            p = PREC[op]
            s = pr(n[2], p, style, pymode) + sp + op + sp + pr(n[3], p + 1, style, pymode)
    elif k == 'un':
        s, p = n[1] + pr(n[2], P_UN, style, pymode), P_UN
    elif k == 'not':
        s, p = 'not ' + pr(n[1], P_NOT, style, pymode), P_NOT
    elif k == 'and':
        s, p = pr(n[1], P_AND, style, pymode) + ' and ' + pr(n[2], P_AND + 1, style, pymode), P_AND
    elif k == 'or':
        s, p = pr(n[1], P_OR, style, pymode) + ' or ' + pr(n[2], P_OR + 1, style, pymode), P_OR
    elif k == 'cmp':
        parts = [pr(n[2][0], 4, style, pymode)]
        for op, e in zip(n[1], n[2][1:]):
            parts.append(op)
            parts.append(pr(e, 4, style, pymode))
        s, p = sp.join(parts), P_CMP
    else:
        name, args = n[1], n[2]
        if pymode and name == 'Where':
            s = '((%s) if (%s) else (%s))' % (pr(args[1], 0, style, pymode),
                                               pr(args[0], 0, style, pymode),
                                               pr(args[2], 0, style, pymode))
        else:
            s = name + '(' + (',' + sp).join(pr(a, 0, style, pymode) for a in args) + ')'
        p = P_ATOM
    if p < need or (style == 'f' and k not in ('int', 'bool', 'sym', 'par', 'call')):
        return '(' + s + ')'
    return s


def fmt_value(v):
    if isinstance(v, Err):
        return 'error ' + v.kinds[0]
    if v is True:
        return 'true'
    if v is False:
        return 'false'
    return str(v)


# --------------------------------------------------------------------------
# Reading expressions written in the battery syntax (for templates, fixed
# cases and --eval) through Python's ast module.

_AST_BIN = {ast.Add: '+', ast.Sub: '-', ast.Mult: '*', ast.FloorDiv: '//',
            ast.Mod: '%', ast.Pow: '**', ast.LShift: '<<', ast.RShift: '>>',
            ast.BitAnd: '&', ast.BitOr: '|', ast.BitXor: '^'}
_AST_UN = {ast.USub: '-', ast.UAdd: '+', ast.Invert: '~'}
_AST_CMP = {ast.Eq: '==', ast.NotEq: '!=', ast.Lt: '<', ast.LtE: '<=',
            ast.Gt: '>', ast.GtE: '>='}


def from_pyast(t, holes=None):
    if isinstance(t, ast.Expression):
        return from_pyast(t.body, holes)
    if isinstance(t, ast.Constant):
        if isinstance(t.value, bool):
            return Bool(t.value, str(t.value))
        if isinstance(t.value, int):
            return C(t.value)
        raise ValueError('bad constant %r' % (t.value,))
    if isinstance(t, ast.Name):
        if t.id in ('true', 'false'):
            return Bool(t.id == 'true', t.id)
        if holes and t.id in holes:
            return holes[t.id]
        return Sym(t.id)
    if isinstance(t, ast.UnaryOp):
        a = from_pyast(t.operand, holes)
        if isinstance(t.op, ast.Not):
            return Not_(a)
        return Un(_AST_UN[type(t.op)], a)
    if isinstance(t, ast.BinOp):
        return Bin(_AST_BIN[type(t.op)], from_pyast(t.left, holes), from_pyast(t.right, holes))
    if isinstance(t, ast.BoolOp):
        mk = And_ if isinstance(t.op, ast.And) else Or_
        acc = from_pyast(t.values[0], holes)
        for v in t.values[1:]:
            acc = mk(acc, from_pyast(v, holes))
        return acc
    if isinstance(t, ast.Compare):
        return Cmp([_AST_CMP[type(o)] for o in t.ops],
                   [from_pyast(t.left, holes)] + [from_pyast(c, holes) for c in t.comparators])
    if isinstance(t, ast.Call) and isinstance(t.func, ast.Name) and not t.keywords:
        return Call(t.func.id, *[from_pyast(a, holes) for a in t.args])
    raise ValueError('unsupported syntax: %s' % ast.dump(t))


_parse_cache = {}


def parse_sg(text, holes=None):
    t = _parse_cache.get(text)
    if t is None:
        t = _parse_cache[text] = ast.parse(text.strip(), mode='eval')
    return from_pyast(t, holes)


# --------------------------------------------------------------------------
# Generator.

def _pow_forms():
    forms = {}

    def add(v, node):
        forms.setdefault(v, []).append(node)
    for base, e in ((2, 31), (2, 32), (2, 62), (2, 63), (2, 64), (2, 65),
                    (2, 127), (2, 128), (10, 18), (10, 19), (10, 30)):
        p = Bin('**', C(base), C(e))
        v = base ** e
        add(v, p)
        add(-v, Un('-', p))
        if e % 2:
            add(-v, Bin('**', C(-base), C(e)))
        add(v - 1, Bin('-', p, C(1)))
        add(v + 1, Bin('+', p, C(1)))
        add(-v + 1, Bin('+', Un('-', p), C(1)))
        add(-v - 1, Bin('-', Un('-', p), C(1)))
        add(-v, Un('-', Par(p)))
        if base == 2:
            add(v, Bin('<<', C(1), C(e)))
            add(-v, Bin('<<', C(-1), C(e)))
    return forms


POW_FORMS = _pow_forms()
BOUND = sorted(set(POW_FORMS) | {
    3037000499, 3037000500, -3037000500, 4611686018427387903,
    4611686018427387904, -4611686018427387905, 2**63 // 3, 3 * 2**62,
    6074001000, 2**53 + 1, 12345678901234567890123,
    -(2**63 - 1) * 3, 2**64 * 3, 2**96 - 2**32})

INT_TEMPLATES = [
    "A - A", "2*A - A", "A + A - 2*A", "(2*A + 1)//2", "(6*A + 5) % 3",
    "(A//2)//3", "Mod(Mod(A, 3), 3)", "A*(B + 1) - A*B", "Min(A + 1, A + 3)",
    "Max(A + 1, A + 3)", "Max(A, A)", "Min(A, B, A)", "(A*B)//B", "(A*K)//K",
    "(A*K) % K", "(A + K*B)//K", "(A + K*B) % K", "A - A//K*K - A % K",
    "(A + B) - (B + A)", "A*A - A**2", "(A + 1)**2 - A**2 - 2*A",
    "CeilDiv(A, 1)", "FloorDiv(A*3, 3)", "CleanDiv(A*K, K)",
    "CleanDiv(K*A + K*B, K)", "TruncDiv(A, -1)", "TruncDiv(A*K, K)",
    "TruncMod(A*K, K)", "TruncMod(A, 1)", "Abs(-A) - Abs(A)", "-(-A)", "~~A",
    "~A + A", "A ^ A", "A & A", "A | A", "A | 0", "A & -1", "A << 0",
    "(A << 3) >> 3", "(A >> 2) << 2", "A >> 0",
    "Where(A < B, A, B) - Min(A, B)", "Min(A, B) + Max(A, B) - A - B",
    "ModularIndexing(A, 1, K)", "ModularIndexing(A*K, K, M)",
    "ModularIndexing(A, K, 1)", "A // 1", "A * 0", "0 // A", "A % 1",
    "A % A", "A // A", "A ** 1", "A ** 0", "0 * (1 // A)", "(A // 0) * 0",
    "A - A + B // 0", "(A - A) * CleanDiv(B, 0)", "Where(True, A, B // 0)",
    "Where(false, A // 0, B)", "Where(A == A, B, 1 // 0)",
    "Where(A < B, A, A)", "Abs(Abs(A))", "Abs(A*A)", "Max(Abs(A), 0)",
    "Min(A, A + 1)", "A + B - A", "3*A + 4*B - 2*A - 4*B",
    "(A + B)*(A - B) - (A*A - B*B)", "A*(B + C) - A*B - A*C",
    "Mod(A, K) + K*FloorDiv(A, K)", "CeilDiv(A, K) + FloorDiv(-A, K)",
    "TruncDiv(A, K)*K + TruncMod(A, K)", "Pow(A, 2) - A*A", "(A**2)**2",
    "Min(Max(A, B), B)", "Max(A, Min(A, B))", "-A // K", "-(A // K)",
    "(A*2 + B*2) // 2", "(A*2 + 1) % 2", "(A + 1) - 1", "A + 0", "A * 1",
    "-1 * A + A", "A // -1", "A % -1", "Min(A, 2**63)", "Max(A, -2**63)",
    "A * 2**63 - A * 2**63", "(A + 2**63) - 2**63", "(A - 2**63) // 2**63",
    "A & (2**64 - 1)", "A ^ -1", "(A | B) - (A & B) - (A ^ B)",
    "(A + B) - ((A ^ B) + 2*(A & B))", "A*M - M*A", "(A*M + B*M) // M",
    "CeilDiv(A*K - 1, K)", "TruncDiv(-A, K) + TruncDiv(A, K)",
    "Mod(A, M) - A % M", "FloorDiv(A, M) - A // M", "A % K % K",
    "(A % K) // K", "Min(A, B) - Min(B, A)", "Max(A, B, C) - Max(C, Max(B, A))",
    "Abs(A - B) - Abs(B - A)", "Where(P, A, B) - Where(not P, B, A)",
    "Pow(A, 0) - 1", "Pow(0, 0)", "A*A*A - A**3", "(A*K + K) // K - A",
    "ModularIndexing(A + K*B, 1, K)", "A // K * K + A % K",
    "A*B - B*A", "(A + B)*(A + B) - A*A - 2*A*B - B*B",
    "(A // -2) // 3", "(A // 2) // -3", "(A // K) // L", "Mod(A, -3) % 3",
    "CeilDiv(CeilDiv(A, 2), 3)", "CeilDiv(CeilDiv(A, K), L)",
    "(A*6 + B*4) // 2", "(A*6 + 3) // 6", "Mod(A*4 + 2, 6)",
    "ModularIndexing(A*6 + 2, 2, 3)", "TruncDiv(A*4 + 2, 2)",
    "TruncMod(A*4 + 2, 2)", "(2*A + 1) // -2", "(2*A + 1) % -2",
    "Min(A + 1, B + 1) - Min(A, B)", "Max(A - K, B - K) + K",
    "(A + 1)*(A - 1) - A*A", "(A << 2) // 4", "(A >> 2)*4 + (A & 3)",
    "A // 2**63", "A % 2**63", "CleanDiv(A*6, 3)", "FloorDiv(A*K, L)",
    "Mod(A*K + L, K*L)", "(A*K*L + B*L) // L", "(A*K + L) % K",
    "(A*2**63 + B) // 2**63", "(A*2**62 + B) % 2**62",
    "(A*2**64 + B) // 2**64 - A", "TruncDiv(A*K + L, K)",
    "TruncMod(A*K + L, K)", "CeilDiv(A*K + L, K)", "CeilDiv(A*K, -K)",
    "ModularIndexing(A, K, L) - (A // K) % L",
    "ModularIndexing(A*K + B*K*L, K, L)", "Min(A, B)*Max(A, B) - A*B",
    "Abs(A)*Abs(B) - Abs(A*B)", "Where(A > 0, A, -A) - Abs(A)",
    "Where(A >= B, A - B, B - A)", "Max(A, -A) - Abs(A)",
    "-Min(-A, -B) - Max(A, B)", "(A - B) // (B - A)", "(A - B) % (B - A)",
    "A*K // (A*K)", "(A*A + A) // A - A", "(A*B + A) // A", "(A*B) % A",
    "CleanDiv(A*B, B)", "CleanDiv(A*B + A, A)", "Pow(A, K) // A",
    "Pow(2, K) * A // 2", "A << K >> K", "(A >> K) << K", "A * 2**K // 2**K",
    "~A & A", "~A | A", "(A & B) + (A | B) - A - B", "(A ^ B) ^ B",
    "(A & K) - A % (K + 1)", "-A >> 1", "-(A >> 1)", "(-A) // 2 + A // 2",
]

BOOL_TEMPLATES = [
    "A < B < C", "A < B and B < C", "A <= A", "A != A", "A == A",
    "Or(A < B, A >= B)", "And(A < B, B < A)", "not not P", "P and True",
    "P or False", "P and not P", "P or not P", "Where(P, Q, Q)",
    "Where(True, P, Q)", "Not(Not(P))", "A + 1 > A", "2*A >= A + A",
    "Eq(A - A, 0)", "Mod(A, K) < K", "Mod(A, K) >= 0", "Abs(A) >= 0",
    "Min(A, B) <= Max(A, B)", "A // K <= A", "Ne(A, A + 1)", "Lt(A, A)",
    "Ge(A*A, 0)", "A*A >= 0", "A == A + 0", "A < A + 1 < A + 2",
    "A >= B >= A", "A == B == A", "A != B != A", "And(P)", "Or(P, Q, P)",
    "not (A < B) or A >= B", "Le(Min(A, B), A)",
    "Gt(Max(A, B) + 1, B)", "A % 2 == 0 or A % 2 == 1",
    "(A << 1) == 2*A", "(A >> 1) == A // 2", "A < B or A >= B",
    "A // K * K + A % K == A", "Max(A, B) - Min(A, B) == Abs(A - B)",
    "2*A + 1 != 0", "2*A == 2*B", "A*K < B*K", "A + K <= A + L",
    "Mod(A, K) == Mod(A + K, K)", "A // K < A // K + 1", "A*A + 1 > 0",
    "Abs(A) == A or Abs(A) == -A", "Min(A, B) == A or Min(A, B) == B",
    "CeilDiv(A, K) >= A // K", "Lt(A, B) or Ge(A, B)", "Not(A < B) and B < A",
    "Or(A < B, B < A, A == B)", "And(A <= B, B <= A, A != B)",
    "A*2 < 2*A + 1", "A - B < A - B + 1 < A - B + 2",
]


class Gen:
    INT_FORMS = [('+', 6), ('-', 6), ('*', 5), ('//', 3), ('%', 3),
                 ('**', 2), ('<<', 2), ('>>', 2), ('&', 2), ('|', 2),
                 ('^', 2), ('neg', 3), ('pos', 1), ('inv', 2),
                 ('FloorDiv', 2), ('Mod', 2), ('CeilDiv', 2),
                 ('CleanDiv', 2), ('TruncDiv', 2), ('TruncMod', 2),
                 ('ModularIndexing', 2), ('Min', 2), ('Max', 2), ('Abs', 2),
                 ('Where', 2), ('Pow', 1), ('par', 1)]
    BOOL_FORMS = [('cmp', 5), ('chain', 2), ('cmpfn', 3), ('and', 3),
                  ('or', 3), ('not', 2), ('And', 2), ('Or', 2), ('Not', 1),
                  ('Where', 1), ('par', 1)]
    SHIFTS = [0, 1, 2, 3, 7, 8, 31, 32, 33, 62, 63, 64, 65, 70]

    def __init__(self, seed):
        self.r = random.Random(seed)
        self.syms = list(SYMBOLS)
        self._iforms = [f for f, _ in self.INT_FORMS]
        self._iw = list(self._cum([w for _, w in self.INT_FORMS]))
        self._bforms = [f for f, _ in self.BOOL_FORMS]
        self._bw = list(self._cum([w for _, w in self.BOOL_FORMS]))

    @staticmethod
    def _cum(ws):
        t = 0
        for w in ws:
            t += w
            yield t

    # --- atoms
    def small(self):
        return self.r.randint(-6, 6)

    def const_value(self):
        r = self.r.random()
        if r < 0.45:
            return self.small()
        if r < 0.58:
            return self.r.randint(-1000, 1000)
        if r < 0.64:
            return self.r.randint(-2**70, 2**70)
        return self.r.choice(BOUND)

    def sym_value(self):
        r = self.r.random()
        if r < 0.40:
            return self.r.randint(-5, 5)
        if r < 0.50:
            return self.r.randint(-1000, 1000)
        if r < 0.55:
            return self.r.randint(-2**80, 2**80)
        return self.r.choice(BOUND)

    def const_node(self, v):
        forms = POW_FORMS.get(v)
        if forms and self.r.random() < 0.35:
            return self.r.choice(forms)
        return C(v)

    def nonzero_const(self):
        v = 0
        while v == 0:
            v = self.const_value()
        return self.const_node(v)

    def atom_int(self):
        if self.syms and self.r.random() < 0.55:
            return Sym(self.r.choice(self.syms))
        return self.const_node(self.const_value())

    def atom_bool(self):
        r = self.r
        if r.random() < 0.4:
            b = r.random() < 0.5
            return Bool(b, r.choice(('true', 'True') if b else ('false', 'False')))
        return Cmp([r.choice(list(CMPOPS))], [self.atom_int(), self.atom_int()])

    # --- restricted operands
    def sub(self, d):
        return self.r.randint(0, max(0, d - 1))

    def exponent(self, d):
        r = self.r
        x = r.random()
        if x < 0.60:
            return C(r.randint(0, 4))
        if x < 0.66:
            return C(-r.randint(1, 2))
        e = self.gen_int(self.sub(d))
        if x < 0.86:
            return Call('Mod', e, C(5)) if r.random() < 0.5 else Bin('%', e, C(r.randint(2, 5)))
        if x < 0.93:
            return Bin('-', Call('Mod', e, C(4)), C(1))
        return Bin('%', Call('Abs', e), C(5))

    def shift(self, d, right):
        r = self.r
        x = r.random()
        if x < 0.50:
            return C(r.choice(self.SHIFTS) if r.random() < 0.6 else r.randint(0, 70))
        if x < 0.56:
            return C(-r.randint(1, 3))
        e = self.gen_int(self.sub(d))
        if x < 0.76:
            return Call('Mod', e, C(71)) if r.random() < 0.5 else Bin('%', e, C(65))
        if x < 0.84:
            return Bin('-', Call('Mod', e, C(8)), C(3))
        if right:
            if r.random() < 0.5:
                return self.const_node(r.choice((2**63, 2**64, 10**30, 2**63 - 1)))
            return Call('Abs', e)
        return C(r.randint(0, 70))

    def divisor(self, d):
        if self.r.random() < 0.4:
            return self.nonzero_const()
        return self.gen_int(d - 1)

    # --- trees
    def template(self, texts, d):
        r = self.r
        t = r.choice(texts)
        sd = max(0, d - 2)
        holes = {}
        names = set(re.findall(r'\b[A-Z]\b', t))
        for h in 'ABC':
            if h in names:
                holes[h] = self.gen_int(r.randint(0, sd))
        for h in 'PQ':
            if h in names:
                holes[h] = self.gen_bool(r.randint(0, sd))
        for h in 'KL':
            if h in names:
                holes[h] = C(r.choice((2, 3, 4, 5, 6, 7, 8, 16, -2, -3)))
        if 'M' in names:
            holes['M'] = self.nonzero_const()
        return parse_sg(t, holes)

    def gen_int(self, d):
        r = self.r
        if d <= 0 or r.random() < 0.12:
            return self.atom_int()
        if r.random() < 0.12:
            return self.template(INT_TEMPLATES, d)
        f = r.choices(self._iforms, cum_weights=self._iw)[0]
        g = self.gen_int
        if f in ('+', '-', '*', '&', '|', '^'):
            return Bin(f, g(d - 1), g(d - 1))
        if f in ('//', '%'):
            return Bin(f, g(d - 1), self.divisor(d))
        if f == '**':
            return Bin('**', g(d - 1), self.exponent(d))
        if f == 'Pow':
            return Call('Pow', g(d - 1), self.exponent(d))
        if f == '<<' or f == '>>':
            return Bin(f, g(d - 1), self.shift(d, f == '>>'))
        if f == 'neg':
            return Un('-', g(d - 1))
        if f == 'pos':
            return Un('+', g(d - 1))
        if f == 'inv':
            return Un('~', g(d - 1))
        if f == 'CleanDiv' and r.random() < 0.5:
            k = self.divisor(d)
            a = g(d - 1)
            return Call('CleanDiv', Bin('*', a, k) if r.random() < 0.5 else Bin('*', k, a), k)
        if f in ('FloorDiv', 'Mod', 'CeilDiv', 'CleanDiv', 'TruncDiv', 'TruncMod'):
            return Call(f, g(d - 1), self.divisor(d))
        if f == 'ModularIndexing':
            return Call(f, g(d - 1), self.divisor(d), self.divisor(d))
        if f in ('Min', 'Max'):
            n = r.choice((1, 2, 2, 2, 3, 3, 4))
            return Call(f, *[g(d - 1) for _ in range(n)])
        if f == 'Abs':
            return Call('Abs', g(d - 1))
        if f == 'Where':
            return Call('Where', self.gen_bool(d - 1), g(d - 1), g(d - 1))
        return Par(g(d - 1))

    def gen_bool(self, d):
        r = self.r
        if d <= 0 or r.random() < 0.10:
            return self.atom_bool()
        if r.random() < 0.12:
            return self.template(BOOL_TEMPLATES, d)
        f = r.choices(self._bforms, cum_weights=self._bw)[0]
        gi, gb = self.gen_int, self.gen_bool
        if f == 'cmp':
            return Cmp([r.choice(list(CMPOPS))], [gi(d - 1), gi(d - 1)])
        if f == 'chain':
            n = r.choice((2, 2, 3))
            return Cmp([r.choice(list(CMPOPS)) for _ in range(n)], [gi(d - 1) for _ in range(n + 1)])
        if f == 'cmpfn':
            return Call(r.choice(list(CMPFNS)), gi(d - 1), gi(d - 1))
        if f == 'and':
            return And_(gb(d - 1), gb(d - 1))
        if f == 'or':
            return Or_(gb(d - 1), gb(d - 1))
        if f == 'not':
            return Not_(gb(d - 1))
        if f in ('And', 'Or'):
            return Call(f, *[gb(d - 1) for _ in range(r.choice((1, 2, 2, 3, 4)))])
        if f == 'Not':
            return Call('Not', gb(d - 1))
        if f == 'Where':
            return Call('Where', gb(d - 1), gb(d - 1), gb(d - 1))
        return Par(gb(d - 1))

    def gen_random_case(self, const_only=False):
        r = self.r
        while True:
            if const_only:
                self.syms = []
            else:
                self.syms = r.sample(SYMBOLS, r.choice((1, 2, 2, 3, 3, 4)))
            d = r.choice((1, 2, 3, 3, 4, 4, 5, 5))
            e = self.gen_int(d) if r.random() < 0.7 else self.gen_bool(d)
            case = self.finish(e, 'random' if not const_only else 'const')
            if case:
                return case

    def finish(self, e, origin):
        r = self.r
        used = symbols_in(e)
        if r.random() < 0.3:
            r.shuffle(used)
        env = [(s, self.sym_value()) for s in used]
        style = 'c' if r.random() < 0.1 else 'n'
        return make_case(e, env, style, origin)

    # --- constant folding at the int64 boundary
    def bconst(self):
        r = self.r
        if r.random() < 0.25:
            return self.const_node(r.choice((0, 1, -1, 2, -2, 3, -3, 7)))
        v = r.choice(BOUND)
        return self.const_node(v)

    def gen_boundary_case(self):
        r = self.r
        self.syms = []
        while True:
            x = r.random()
            a, b = self.bconst(), self.bconst()
            if x < 0.40:
                e = Bin(r.choice(('+', '-', '*', '//', '%', '&', '|', '^')), a, b)
            elif x < 0.50:
                op = r.choice(('<<', '>>'))
                amt = [0, 1, 31, 32, 62, 63, 64, 65, 70, -1]
                if op == '>>':
                    amt += [2**63, 2**64, 10**30]
                e = Bin(op, a, self.const_node(r.choice(amt)))
            elif x < 0.56:
                base = r.choice((2, -2, 10, -10, 3, -1, 0, 1, 2**32, -2**31, 3037000500))
                ex = r.choice((0, 1, 2, 3, 4, -1) + ((62, 63, 64) if abs(base) == 2 else ()))
                e = Bin('**', C(base), C(ex)) if r.random() < 0.7 else Call('Pow', C(base), C(ex))
            elif x < 0.76:
                f = r.choice(('FloorDiv', 'Mod', 'CeilDiv', 'CleanDiv', 'TruncDiv', 'TruncMod'))
                e = Call(f, a, b)
            elif x < 0.80:
                e = Call('ModularIndexing', a, b, self.bconst())
            elif x < 0.86:
                e = Call(r.choice(('Min', 'Max')), a, b, *([self.bconst()] if r.random() < 0.4 else []))
            elif x < 0.92:
                e = Un(r.choice(('-', '~', '+')), Par(a)) if r.random() < 0.5 else Call('Abs', a)
            elif x < 0.96:
                e = Cmp([r.choice(list(CMPOPS))], [a, b])
            else:
                inner = Bin(r.choice(('+', '-', '*')), a, b)
                e = Bin(r.choice(('//', '%', '-', '+', '>>')), inner, self.bconst())
            case = make_case(e, [], 'n', 'boundary')
            if case:
                return case


FIXED_CASES = [
    "-2**63 // -1", "(2**62)*2", "9223372036854775807 + 1",
    "-9223372036854775808 % -1", "~(2**63)", "(-2**63) >> 1", "1 << 64",
    "(2**64) & (2**64 - 1)", "-9223372036854775808 // -1",
    "-9223372036854775808 * -1", "Abs(-9223372036854775808)",
    "-(-9223372036854775808)", "TruncDiv(-2**63, -1)", "TruncMod(-2**63, -1)",
    "CeilDiv(-2**63, -1)", "CleanDiv(-2**63, -1)", "Mod(-2**63, -1)",
    "FloorDiv(-2**63, -1)", "-2**63 % 2**63", "2**63 % -2**63",
    "(2**63 - 1) * (2**63 - 1)", "3037000500 * 3037000500",
    "-3037000500 * 3037000500", "2**32 * 2**31", "-2**32 * 2**31",
    "2**63 - 1 + 1", "-2**63 - 1", "9223372036854775807 - -1",
    "-9223372036854775808 - 1", "9223372036854775808", "-9223372036854775809",
    "18446744073709551615 + 1", "~-9223372036854775808", "~9223372036854775807",
    "-1 >> 70", "-2**63 >> 63", "-2**63 >> 64", "2**63 >> 63", "1 << 63",
    "-1 << 63", "1 << 62 << 1", "(1 << 64) - 1", "-2**63 & -1",
    "-2**63 | 2**63", "-2**63 ^ 2**63", "2**64 ^ -1",
    "-(2**64) & (2**64 - 1)", "(-2**64) | 1", "-10**30 & 2**64 - 1",
    "10**30 // 2**63", "-10**30 // 2**63", "10**30 % -(2**63)",
    "ModularIndexing(-2**63, 2**32, 2**31)",
    "ModularIndexing(10**30, 10**15, 2**63 + 1)", "Min(2**63, 2**63 - 1)",
    "Max(-2**63, -2**63 - 1)", "2**63 == 9223372036854775808",
    "-2**63 < -9223372036854775807", "2**64 > 2**63 > 2**62",
    "2**63 - 1 != 9223372036854775807", "Pow(-2, 63)", "(-2)**63", "(-2)**64",
    "-2**64", "2**-1", "0**0", "0**-1", "(-1)**-1", "1 << -1", "1 >> -1",
    "0 << -1", "1 // 0", "0 % 0", "CleanDiv(7, 2)", "CleanDiv(0, 0)",
    "ModularIndexing(5, 0, 3)", "ModularIndexing(5, 1, 0)", "TruncDiv(-7, 2)",
    "TruncMod(-7, 2)", "TruncDiv(7, -2)", "TruncMod(7, -2)", "CeilDiv(-7, 2)",
    "CeilDiv(7, -2)", "-7 // 2", "-7 % 2", "7 % -2", "-2**2", "2**3**2",
    "-2**-1", "(2**63)**0", "(-2**63)**2", "TruncDiv(-10**30, 7)",
    "TruncMod(-10**30, 7)", "CeilDiv(10**30 + 1, 10**15)",
    "Where(2**63 > 2**63 - 1, 2**64, -2**64)", "Where(False, 1 // 0, 7)",
    "Where(True, 7, 1 // 0)", "True and 2**63 > 0", "not 2**63 == -2**63",
    "2**63 >> 2**63", "-2**63 >> 2**64", "5 >> 10**30", "-5 >> 10**30",
    "0 >> 2**64", "0 << 2**64 - 2**64", "2**63 // 2**63", "-2**63 // 2**63",
    "(2**63 - 1) // -1", "(2**63 - 1) % -1", "-2**63 * -2**63",
    "2**63 * 2**63 // 2**63", "(-2**63) * (-1) - 2**63", "Abs(-2**63) - 2**63",
    "2**62 + 2**62", "-2**62 - 2**62", "-2**62 - 2**62 - 1",
    "9223372036854775807 * 2 + 1", "4611686018427387904 * 2",
    "-4611686018427387904 * 2", "-4611686018427387905 * 2",
    "3 * 3074457345618258603", "TruncDiv(2**63, -1)", "TruncDiv(-2**64, 2)",
    "TruncMod(-2**64 - 1, 2**63)", "CeilDiv(2**64, 2**63 + 1)",
    "CeilDiv(-2**64, 2**63 + 1)", "CleanDiv(2**127, 2**63)",
    "CleanDiv(2**127 + 1, 2**63)", "CleanDiv(-2**64, -2**63)",
    "ModularIndexing(-1, 1, 2**63)", "ModularIndexing(-1, 2**64, 7)",
    "ModularIndexing(2**64 + 5, -2**63, 2**64)", "~0", "~-1", "~(2**64)",
    "~(-2**64)", "-2**63 & 2**63 - 1", "(2**63 - 1) ^ (-2**63)",
    "(-1) & (2**64 - 1)", "(-2**64) >> 1", "(-2**64 - 1) >> 1",
    "(-2**64 - 1) >> 64", "(2**64 + 1) >> 64", "3 << 62", "3 << 63",
    "-3 << 62", "(2**63 - 1) << 1", "(-2**63) << 1", "1 << 70", "-1 << 70",
    "2**63 < 2**63 + 1", "-2**63 - 1 < -2**63", "Eq(2**64, 18446744073709551616)",
    "Ne(-2**63, -9223372036854775808)", "Lt(-2**64, -2**63)",
    "Ge(2**63 - 1, 2**63)", "Min(-2**63, 2**63, 0)", "Max(2**64, 2**64 + 1, -1)",
    "Min(2**63)", "Max(-2**63 - 1)", "Abs(-2**64)", "Abs(2**63 - 1)",
    "Pow(2, 63) - 1", "Pow(-2, 64) - 1", "Pow(3, 40)", "Pow(-3, 41)",
    "10**19 - 2**63", "-10**19 // 3", "-10**19 % 3", "10**30 % 2**64",
    "Where(-2**63 < 0, 2**63, -2**63)", "Where(2**64 == 0, 1, 2**64)",
    "And(2**63 > 0, -2**63 < 0)", "Or(2**63 < 0, -2**63 > 0)",
    "Not(2**64 == 2**64)", "1 < 2 < 3", "3 > 2 > 1 > 0", "1 < 3 < 2",
    "True", "False", "true", "false", "not True", "False or True",
    "true and false", "0", "-0", "+5", "- -5", "--5", "~~5", "-+-+5",
]


def make_case(e, env, style, origin):
    try:
        res = ev_all(e, dict(env))
    except TooBig:
        return None
    return {'expr': e, 'env': env, 'style': style, 'origin': origin,
            'sort': sort_of(e), 'res': res}


def case_text(case):
    s = pr(case['expr'], 0, case['style'])
    if case['env']:
        s += ' where ' + ', '.join('%s=%d' % kv for kv in case['env'])
    return s


def case_line(case):
    return 'eval %s => %s' % (case_text(case), fmt_value(case['res']))


def generate(seed, count):
    g = Gen(seed)
    cases = []
    for text in FIXED_CASES:
        c = make_case(parse_sg(text), [], 'n', 'fixed')
        assert c is not None, text
        cases.append(c)
    for _ in range(300):
        cases.append(g.gen_boundary_case())
    for i in range(count):
        cases.append(g.gen_random_case(const_only=(g.r.random() < 0.1)))
    return cases


# --------------------------------------------------------------------------
# Running the engine.

SUMMARY_RE = re.compile(r'^(\d+) passed, (\d+) failed\s*$')


class Runner:
    def __init__(self, binpath, tmpdir, case_size=500):
        self.bin = binpath
        self.tmpdir = tmpdir
        self.n = 0
        self.case_size = case_size      # eval lines per battery `case`
        self.notes = []

    def write(self, path, cases, header='generated by tests/diff/oracle.py'):
        linemap = {}
        with open(path, 'w', encoding='utf-8') as f:
            f.write('# %s\n' % header)
            ln = 1
            for i, c in enumerate(cases):
                if i % self.case_size == 0:
                    f.write('case diff%d\n' % (i // self.case_size))
                    ln += 1
                f.write(case_line(c) + '\n')
                ln += 1
                linemap[ln] = i
        return linemap

    def run_once(self, cases):
        """Returns (results, None) or (None, 'crash ...'/'timeout')."""
        self.n += 1
        path = os.path.join(self.tmpdir, 'batch%d.sg' % self.n)
        linemap = self.write(path, cases)
        timeout = 5 + 0.005 * len(cases)
        try:
            p = subprocess.run([self.bin, 'run', path], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, 'timeout (%.0fs)' % timeout
        out = p.stdout.decode('utf-8', 'replace').splitlines()
        err = p.stderr.decode('utf-8', 'replace')
        summary = None
        for line in out:
            m = SUMMARY_RE.match(line)
            if m:
                summary = (int(m.group(1)), int(m.group(2)))
        if p.returncode < 0 or p.returncode not in (0, 1) or summary is None:
            tail = (err.strip().splitlines() or ['(no stderr)'])[-1]
            return None, 'crash (exit %d): %s' % (p.returncode, tail[:300])
        results = [('pass', None)] * len(cases)
        prefix = path + ':'
        nfail = 0
        for line in out:
            if not line.startswith(prefix):
                continue
            m = re.match(r'(\d+): (.*)$', line[len(prefix):])
            if not m:
                continue
            ln = int(m.group(1))
            i = linemap.get(ln)
            if i is None:
                self.notes.append('failure on a non-eval line: ' + line)
                continue
            nfail += 1
            msg = m.group(2)
            key = 'expected %s, got ' % fmt_value(cases[i]['res'])
            pos = msg.find(key)
            if pos >= 0:
                got = msg[pos + len(key):].strip()
            else:
                mm = re.search(r'expected (.*?), got (.*)$', msg)
                got = mm.group(2).strip() if mm else None
            results[i] = ('fail', got, msg)
        if summary != (len(cases) - nfail, nfail):
            self.notes.append('engine summary %d passed, %d failed, but %d eval lines '
                              'of which %d reported failing'
                              % (summary[0], summary[1], len(cases), nfail))
        if p.returncode != (1 if nfail else 0):
            self.notes.append('exit status %d with %d failures' % (p.returncode, nfail))
        for line in err.splitlines():
            if 'Sanitizer' in line or 'runtime error' in line:
                self.notes.append('on stderr: ' + line.strip()[:300])
                break
        return results, None

    def run(self, cases, budget=2000):
        """Runs the cases; a run that crashes or hangs is split in halves
        until the failing cases are isolated (at most `budget` more runs;
        cases left unisolated get the result 'unknown')."""
        self.budget = budget
        return self._run(cases)

    def _run(self, cases):
        res, why = self.run_once(cases)
        if res is not None:
            return res
        if len(cases) == 1:
            return [('crash', None, why)]
        if self.budget <= 0:
            return [('unknown', None, why + ' (somewhere in a batch of %d)' % len(cases))] * len(cases)
        self.budget -= 2
        h = len(cases) // 2
        return self._run(cases[:h]) + self._run(cases[h:])

    def find_first(self, cases, pred):
        """The index of the first case whose result satisfies pred(case,
        result), running cases in growing chunks; None if there is none."""
        start, step = 0, 16
        while start < len(cases):
            chunk = cases[start:start + step]
            i = self._find_first(chunk, pred)
            if i is not None:
                return start + i
            start += step
            step = min(step * 2, 256)
        return None

    def _find_first(self, cases, pred):
        res, why = self.run_once(cases)
        if res is not None:
            for i, (c, r) in enumerate(zip(cases, res)):
                if pred(c, r):
                    return i
            return None
        if len(cases) == 1:
            return 0 if pred(cases[0], ('crash', None, why)) else None
        h = len(cases) // 2
        i = self._find_first(cases[:h], pred)
        if i is not None:
            return i
        i = self._find_first(cases[h:], pred)
        return None if i is None else h + i


INT_RE = re.compile(r'^-?\d+$')


def judge(case, result):
    """-> 'agree', 'agree-error', 'lenient-value', 'lenient-kind',
    'shifted-kind' or 'mismatch'."""
    if result[0] == 'pass':
        return 'agree-error' if isinstance(case['res'], Err) else 'agree'
    # The engine may simplify a failing part away (x - x is 0 even where x
    # fails), so where Python fails any value of the right sort is fine;
    # and the value it then works with may make another operation fail.
    if result[0] in ('crash', 'unknown'):
        return 'mismatch'
    got = result[1]
    res = case['res']
    if not isinstance(res, Err) or got is None:
        return 'mismatch'
    if case['sort'] == INT and INT_RE.match(got):
        return 'lenient-value'
    if case['sort'] == BOOL and got in ('true', 'false'):
        return 'lenient-value'
    m = re.match(r'^error ([A-Za-z0-9_-]+)', got)
    if m and m.group(1) in res.kinds:
        return 'lenient-kind'
    if m and m.group(1) in possible_kinds(case['expr']):
        return 'shifted-kind'
    return 'mismatch'


def category(result):
    if result[0] in ('crash', 'unknown'):
        return result[0]
    got = result[1]
    if got is None or got.startswith('error syntax') or got.startswith('error type'):
        return 'syntax'
    if got.startswith('error limit'):
        return 'limit'
    return 'wrong'


def engine_answer(result):
    if result[0] == 'pass':
        return None
    if result[0] in ('crash', 'unknown'):
        return result[2]
    if result[1] is None:
        return result[2]
    return result[1]


def python_answer(case):
    res = case['res']
    if isinstance(res, Err):
        s = 'error ' + res.kinds[0]
        if len(res.kinds) > 1:
            s += ' (also acceptable: %s)' % ', '.join('error ' + k for k in res.kinds[1:])
        s += ' or any %s' % ('integer' if case['sort'] == INT else 'boolean')
        more = sorted(possible_kinds(case['expr']) - set(res.kinds))
        if more:
            s += ' (or, after a simplification, %s)' % ', '.join('error ' + k for k in more)
        return s
    return fmt_value(res)


# --------------------------------------------------------------------------
# Minimisation.

def local_shrinks(n, env):
    s = sort_of(n)
    out = [c for c in kids(n) if sort_of(c) == s]
    k = n[0]
    if k == 'int':
        v = n[1]
        cands = [0, 1, -1, 2]
        if abs(v) > 2:
            cands += [v // 2, -v if v < 0 else v - 1]
        for bits in (62, 63, 64):
            if abs(v) > 2**bits:
                cands += [2**bits, -2**bits]
        out += [C(c) for c in cands if c != v and abs(c) <= abs(v)]
    elif k == 'sym':
        out += [C(env[n[1]])] if n[1] in env else []
    elif k == 'bool':
        pass
    elif s == INT:
        out += [C(0), C(1)]
        try:
            v = ev_all(n, env)
        except TooBig:
            v = None
        if type(v) is int:
            out.append(C(v))
    else:
        out += [Bool(True), Bool(False)]
    if k == 'call' and n[1] in ('Min', 'Max', 'And', 'Or') and len(n[2]) > 1:
        for i in range(len(n[2])):
            out.append(Call(n[1], *(n[2][:i] + n[2][i + 1:])))
    if k == 'cmp' and len(n[1]) > 1:
        for i in range(len(n[1])):
            out.append(Cmp(n[1][:i] + n[1][i + 1:], n[2][:i + 1] + n[2][i + 2:]))
            out.append(Cmp(n[1][:i] + n[1][i + 1:], n[2][:i] + n[2][i + 1:]))
    return out


def all_shrinks(n, env):
    yield from local_shrinks(n, env)
    ks = kids(n)
    for i, c in enumerate(ks):
        for v in all_shrinks(c, env):
            nk = list(ks)
            nk[i] = v
            yield with_kids(n, nk)


def env_shrinks(env):
    for i, (s, v) in enumerate(env):
        cands = [0, 1, -1, 2]
        if abs(v) > 2:
            cands += [v // 2, -v if v < 0 else v - 1]
        for bits in (62, 63, 64):
            if abs(v) > 2**bits:
                cands += [2**bits, -2**bits]
        for c in cands:
            if c != v and abs(c) <= abs(v):
                yield env[:i] + [(s, c)] + env[i + 1:]


def minimise(runner, case, result, deadline):
    want = category(result)
    cur, cur_res = case, result
    rounds = 0
    while time.time() < deadline and rounds < 200:
        rounds += 1
        cands = []
        seen = set()
        base = size(cur['expr'])
        envd = dict(cur['env'])
        roots = []
        stack = list(kids(cur['expr']))
        while stack:
            n = stack.pop()
            roots.append(n)
            stack.extend(kids(n))
        for e in itertools.chain(roots, all_shrinks(cur['expr'], envd)):
            used = symbols_in(e)
            env = [(s, v) for s, v in cur['env'] if s in used]
            c = make_case(e, env, 'n', 'min')
            if c is None:
                continue
            t = case_line(c)
            if t in seen:
                continue
            seen.add(t)
            cands.append((size(e), len(t), c))
        for env in env_shrinks(cur['env']):
            c = make_case(cur['expr'], env, 'n', 'min')
            if c is not None:
                t = case_line(c)
                if t not in seen:
                    seen.add(t)
                    cands.append((base, len(t), c))
        cur_len = len(case_line(cur))
        cands = [x for x in cands if (x[0], x[1]) < (base, cur_len)]
        cands.sort(key=lambda x: (x[0], x[1]))
        if not cands:
            break
        cases = [x[2] for x in cands]
        hit = []

        def pred(c, r):
            if judge(c, r) == 'mismatch' and category(r) == want:
                hit.append(r)
                return True
            return False
        i = runner.find_first(cases, pred)
        if i is None:
            break
        cur, cur_res = cases[i], hit[-1]
    return cur, cur_res


def message_class(result):
    """What kind of failure, for grouping: the category and the engine's
    message with numbers and positions taken out."""
    cat = category(result)
    if cat == 'wrong':
        return cat
    return cat + ': ' + re.sub(r'-?\d+', 'N', engine_answer(result))


def minimise_all(runner, cases, results, bad, budget, per_class=4):
    """Minimises the mismatches, smallest first, at most per_class of each
    message class, and prints the distinct minimal cases."""
    deadline = time.time() + budget
    alone = Runner(runner.bin, runner.tmpdir, case_size=1)
    alone.n = runner.n
    order = sorted(bad, key=lambda i: size(cases[i]['expr']))
    classes = {}
    for i in order:
        mc = message_class(results[i])
        classes[mc] = classes.get(mc, 0) + 1
    print('mismatch classes:')
    for mc, n in sorted(classes.items(), key=lambda x: -x[1]):
        print('  %5d  %s' % (n, mc))
    done = {}
    mins = {}
    for i in order:
        if time.time() >= deadline:
            print('(minimisation budget of %ds used up)' % budget)
            break
        mcl = message_class(results[i])
        if mcl != 'wrong' and done.get(mcl, 0) >= per_class:
            continue
        done[mcl] = done.get(mcl, 0) + 1
        r0 = alone.run([cases[i]])[0]
        if judge(cases[i], r0) != 'mismatch' or category(r0) != category(results[i]):
            print('  not reproducible in a case of its own (depends on the lines before it '
                  'in its case): %s' % case_line(cases[i]))
            print('      engine there: %s; alone: %s' % (engine_answer(results[i]),
                                                        engine_answer(r0) or 'as expected'))
            continue
        c, r = minimise(alone, cases[i], r0, deadline)
        key = case_line(c)
        if key in mins:
            mins[key][2] += 1
        else:
            mins[key] = [c, r, 1]
    runner.n = alone.n
    print('minimised mismatches (%d distinct; each checked in a case of its own):' % len(mins))
    for c, r, n in sorted(mins.values(), key=lambda x: (message_class(x[1]), size(x[0]['expr']))):
        print('  %s' % case_line(c))
        print('      python: %s' % python_answer(c))
        print('      engine: %s  [%s]' % (engine_answer(r), category(r)))


# --------------------------------------------------------------------------
# Self-test: the evaluator and the printer against Python's own eval().

class NegExp(Exception):
    pass


class Inexact(Exception):
    pass


class I(int):
    """An int whose ** and shifts refuse negative exponents, so that Python's
    own evaluation follows the spec's error rules."""

    def __pow__(a, b, mod=None):
        if b < 0:
            raise NegExp()
        return I(int.__pow__(a, b))

    def __rpow__(a, b, mod=None):
        if a < 0:
            raise NegExp()
        return I(int.__pow__(b, a))

    def __lshift__(a, b):
        if b < 0:
            raise NegExp()
        return I(int.__lshift__(a, b))

    def __rshift__(a, b):
        if b < 0:
            raise NegExp()
        return I(int.__rshift__(a, b))


def _wrap_int_method(name):
    f = getattr(int, name)

    def g(*args):
        r = f(*args)
        return I(r) if type(r) is int else r
    g.__name__ = name
    setattr(I, name, g)


for _m in ('__add__', '__radd__', '__sub__', '__rsub__', '__mul__', '__rmul__',
           '__floordiv__', '__rfloordiv__', '__mod__', '__rmod__', '__and__',
           '__rand__', '__or__', '__ror__', '__xor__', '__rxor__', '__neg__',
           '__pos__', '__invert__', '__abs__'):
    _wrap_int_method(_m)


def _ref_cleandiv(a, b):
    q = Fraction(a, b)
    if q.denominator != 1:
        raise Inexact()
    return I(q.numerator)


def _ref_truncdiv(a, b):
    return I(math.trunc(Fraction(a, b)))


REF_NS = {
    'I': I, 'true': True, 'false': False,
    'FloorDiv': lambda a, b: a // b,
    'Mod': lambda a, b: a % b,
    'CeilDiv': lambda a, b: I(math.ceil(Fraction(a, b))),
    'CleanDiv': _ref_cleandiv,
    'TruncDiv': _ref_truncdiv,
    'TruncMod': lambda a, b: a - b * _ref_truncdiv(a, b),
    'ModularIndexing': lambda x, d, m: (x // d) % m,
    'Min': lambda *a: min(a), 'Max': lambda *a: max(a),
    'Abs': abs, 'Pow': lambda a, b: a ** b,
    'Eq': lambda a, b: a == b, 'Ne': lambda a, b: a != b,
    'Lt': lambda a, b: a < b, 'Le': lambda a, b: a <= b,
    'Gt': lambda a, b: a > b, 'Ge': lambda a, b: a >= b,
    'And': lambda *a: all(a), 'Or': lambda *a: any(a),
    'Not': lambda c: not c,
}
REF_NS['__builtins__'] = {'min': min, 'max': max, 'abs': abs, 'all': all, 'any': any}


def ref_eval(n, env):
    text = pr(n, 0, 'n', pymode=True)
    text = re.sub(r'\d+', lambda m: 'I(%s)' % m.group(0), text)
    ns = dict(REF_NS)
    for s, v in env:
        ns[s] = I(v)
    try:
        return eval(compile(text, '<selftest>', 'eval'), ns)
    except ZeroDivisionError:
        return Err((ZD,))
    except NegExp:
        return Err((NE,))
    except Inexact:
        return Err((IX,))
    except ValueError as e:
        if 'negative shift' in str(e):
            return Err((NE,))
        raise


def _flatten_boolops(t):
    for node in ast.walk(t):
        if isinstance(node, ast.BoolOp):
            vals = []
            for v in node.values:
                if isinstance(v, ast.BoolOp) and type(v.op) is type(node.op):
                    vals.extend(v.values)
                else:
                    vals.append(v)
            node.values = vals
    return t


def _norm_dump(text):
    t = ast.parse(text, mode='eval')
    for _ in range(8):
        _flatten_boolops(t)
    return ast.dump(t)


def same(a, b):
    if isinstance(a, Err) or isinstance(b, Err):
        return isinstance(a, Err) and isinstance(b, Err) and a.kinds[0] == b.kinds[0]
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def selftest(seed, count):
    g = Gen(seed)
    cases = [make_case(parse_sg(t), [], 'n', 'fixed') for t in FIXED_CASES]
    for i in range(count):
        x = g.r.random()
        if x < 0.15:
            cases.append(g.gen_boundary_case())
        else:
            cases.append(g.gen_random_case(const_only=(x < 0.5)))
    bad = 0
    nerr = 0
    checked = 0
    for c in cases:
        e, env = c['expr'], c['env']
        problems = []
        if not well_sorted(e):
            problems.append('not well sorted')
        sgtext = pr(e, 0, c['style'])
        try:
            if _norm_dump(sgtext) != _norm_dump(pr(e, 0, 'f')):
                problems.append('printed text does not parse back to the same tree')
        except SyntaxError as ex:
            problems.append('printed text is not Python: %s' % ex)
        try:
            mine = ev_lazy(e, dict(env))
        except SGError as ex:
            mine = Err((ex.kind,))
        except TooBig:
            continue
        checked += 1
        ref = ref_eval(e, env)
        if not same(mine, ref):
            problems.append('evaluator %s, Python %s' % (fmt_value(mine), fmt_value(ref)))
        want = BOOL if isinstance(ref, bool) else INT
        if not isinstance(ref, Err) and want != c['sort']:
            problems.append('sort %s but Python gives %r' % (c['sort'], ref))
        eager = c['res']
        if isinstance(mine, Err):
            nerr += 1
            if not isinstance(eager, Err) or mine.kinds[0] not in eager.kinds:
                problems.append('eager oracle %s, lazy %s' % (fmt_value(eager), fmt_value(mine)))
        elif not same(eager, mine) and not (isinstance(eager, Err) and has_shortcircuit(e)):
            problems.append('eager oracle %s, lazy %s' % (fmt_value(eager), fmt_value(mine)))
        if problems:
            bad += 1
            if bad <= 20:
                print('SELFTEST FAIL: %s' % case_text(c))
                for p in problems:
                    print('  ' + p)
    print('selftest: seed=%d cases=%d checked=%d errors=%d failed=%d'
          % (seed, len(cases), checked, nerr, bad))
    print('%d passed, %d failed' % (checked - bad, bad))
    return 1 if bad else 0


# --------------------------------------------------------------------------

def parse_where(text):
    env = []
    if text:
        for item in text.split(','):
            s, v = item.split('=')
            env.append((s.strip(), int(v.strip())))
    return env


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--seed', type=int, default=None)
    ap.add_argument('--count', type=int, default=None)
    ap.add_argument('--bin', default=None, help='the shapeguard tool (default $SG_BIN)')
    ap.add_argument('--keep', default=None, help='also write the battery to FILE')
    ap.add_argument('--selftest', action='store_true')
    ap.add_argument('--no-minimize', action='store_true')
    ap.add_argument('--min-budget', type=float, default=120.0,
                    help='seconds spent minimising mismatches (default 120)')
    ap.add_argument('--max-show', type=int, default=40)
    ap.add_argument('--eval', dest='eval_expr', default=None)
    ap.add_argument('--where', default=None)
    args = ap.parse_args(argv)

    seed = args.seed
    if seed is None:
        seed = int(os.environ.get('SG_TEST_SEED') or DEFAULT_SEED)

    if args.eval_expr is not None:
        e = parse_sg(args.eval_expr)
        c = make_case(e, parse_where(args.where), 'n', 'cli')
        if c is None:
            print('too big')
            return 2
        print(case_line(c))
        print('python: ' + python_answer(c))
        return 0

    if args.selftest:
        return selftest(seed, args.count if args.count is not None else 5000)

    count = args.count if args.count is not None else 20000
    binpath = args.bin or os.environ.get('SG_BIN')
    if not binpath:
        print('oracle.py: no engine: give --bin PATH or set SG_BIN', file=sys.stderr)
        return 2
    if not (os.path.isfile(binpath) and os.access(binpath, os.X_OK)):
        print('oracle.py: %s is not an executable' % binpath, file=sys.stderr)
        return 2

    t0 = time.time()
    cases = generate(seed, count)
    tmpdir = tempfile.mkdtemp(prefix='sg-diff-')
    try:
        runner = Runner(binpath, tmpdir)
        if args.keep:
            runner.write(args.keep, cases, 'tests/diff/oracle.py --seed %d --count %d'
                         ' (expected values before the lenient error rule)' % (seed, count))
        results = runner.run(cases)
        t1 = time.time()
        verdicts = [judge(c, r) for c, r in zip(cases, results)]
        counts = {}
        for v in verdicts:
            counts[v] = counts.get(v, 0) + 1
        bad = [i for i, v in enumerate(verdicts) if v == 'mismatch']
        for i in bad[:args.max_show]:
            c, r = cases[i], results[i]
            print('MISMATCH [%s] %s' % (c['origin'], case_line(c)))
            print('  python: %s' % python_answer(c))
            print('  engine: %s' % engine_answer(r))
        if len(bad) > args.max_show:
            print('... %d more mismatches not shown' % (len(bad) - args.max_show))
        for note in runner.notes:
            print('NOTE: ' + note)

        if bad and not args.no_minimize:
            minimise_all(runner, cases, results, bad, args.min_budget)

        nerr = sum(1 for c in cases if isinstance(c['res'], Err))
        failed = len(bad) + (1 if runner.notes else 0)
        passed = len(cases) - len(bad)
        print('seed=%d cases=%d errors=%d agreed=%d agreed-error=%d simplified-away=%d '
              'other-error-kind=%d shifted-error-kind=%d mismatches=%d engine-runs=%d time=%.1fs+%.1fs'
              % (seed, len(cases), nerr, counts.get('agree', 0),
                 counts.get('agree-error', 0), counts.get('lenient-value', 0),
                 counts.get('lenient-kind', 0), counts.get('shifted-kind', 0),
                 len(bad), runner.n, t1 - t0,
                 time.time() - t1))
        print('%d passed, %d failed' % (passed, failed))
        return 1 if failed else 0
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
