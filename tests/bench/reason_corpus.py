#!/usr/bin/env python3
"""Reasoning benchmark (issue 3): corpus generator and report.

Generate (what run_reason.sh does first):

    reason_corpus.py --seed S --syms V --facts N --queries Q -o CORPUS

writes a seeded fact base of N facts over the integer symbols s0..s(V-1)
and Q queries, each in two spellings: the battery expression syntax (read by
bench_reason through sg_parse) and SMT-LIB2 (read by bench_reason_z3).

Report (what run_reason.sh does last):

    reason_corpus.py --report CORPUS SG_OUT [Z3_OUT]

reads the outputs of both sides, compares every answer of shapeguard with
Z3's verdict (Z3 is the oracle: an answer "true" where Z3 finds the negation
satisfiable, or "false" where Z3 finds the query satisfiable, is UNSOUND),
and prints the figures side by side. Exit status 1 if any answer is unsound
(against Z3, or against the hidden model when Z3 is absent).

Semantics are the same on both sides: unbounded integers; // and % (FloorDiv
and Mod) only by positive constants, where floor division (shapeguard,
Python) and Euclidean division (SMT-LIB div/mod) agree; Max/Min are written
as ite in SMT-LIB. No symbol has an implicit bound: every bound is a fact.

The facts are made true by construction at a hidden model (a value for each
symbol, written to the corpus), so the fact base is consistent; both sides
check every fact and query against the model's value outside their clocks.

Queries, in four kinds (the proportions are targets; Z3 decides the truth):
  range   e >= L or e <= H where L, H come from interval arithmetic over the
          bound facts (with the equalities substituted and the divisibility
          residues used): implied by construction;
  derived consequences of a few facts: chains of <=, equalities,
          divisibility, Max/Min, FloorDiv/Mod identities, product bounds,
          weakened facts, conjunctions: implied by construction;
  negated the opposite of a range or derived query: refuted;
  open    relations around the model's value of a random expression,
          unrelated pairs of symbols, divisibility no fact gives: mostly
          neither implied nor refuted.
"""

import argparse
import math
import random
import sys

# ---- expressions ------------------------------------------------------------
# Tuples: ('sym', i) ('int', c) ('add', [terms]) ('mul', a, b) ('fdiv', a, k)
# ('mod', a, k) ('max', a, b) ('min', a, b) ('rel', op, a, b) ('and', [xs])
# ('or', [xs]) ('not', x). op in ge gt le lt eq ne.


def S(i):
    return ('sym', i)


def I(c):
    return ('int', c)


def add(*xs):
    terms = []
    for x in xs:
        if x[0] == 'add':
            terms.extend(x[1])
        elif x == ('int', 0) and len(xs) > 1:
            continue
        else:
            terms.append(x)
    if not terms:
        return I(0)
    return terms[0] if len(terms) == 1 else ('add', terms)


def mul(a, b):
    if a == ('int', 1):
        return b
    return ('mul', a, b)


def scale(c, x):
    return x if c == 1 else ('mul', I(c), x)


def rel(op, a, b):
    return ('rel', op, a, b)


NEG = {'ge': 'lt', 'gt': 'le', 'le': 'gt', 'lt': 'ge', 'eq': 'ne', 'ne': 'eq'}
SG_OP = {'ge': '>=', 'gt': '>', 'le': '<=', 'lt': '<', 'eq': '==', 'ne': '!='}
SMT_OP = {'ge': '>=', 'gt': '>', 'le': '<=', 'lt': '<', 'eq': '='}


def negate(q):
    if q[0] == 'rel':
        return ('rel', NEG[q[1]], q[2], q[3])
    return ('not', q)


def ev(e, m):
    """Value at the model m (Python semantics: floor division)."""
    t = e[0]
    if t == 'sym':
        return m[e[1]]
    if t == 'int':
        return e[1]
    if t == 'add':
        return sum(ev(x, m) for x in e[1])
    if t == 'mul':
        return ev(e[1], m) * ev(e[2], m)
    if t == 'fdiv':
        return ev(e[1], m) // e[2]
    if t == 'mod':
        return ev(e[1], m) % e[2]
    if t == 'max':
        return max(ev(e[1], m), ev(e[2], m))
    if t == 'min':
        return min(ev(e[1], m), ev(e[2], m))
    if t == 'rel':
        a, b = ev(e[2], m), ev(e[3], m)
        return {'ge': a >= b, 'gt': a > b, 'le': a <= b, 'lt': a < b, 'eq': a == b, 'ne': a != b}[e[1]]
    if t == 'and':
        return all(ev(x, m) for x in e[1])
    if t == 'or':
        return any(ev(x, m) for x in e[1])
    if t == 'not':
        return not ev(e[1], m)
    raise ValueError(t)


def neg_const_term(x):
    """For a term of a sum: (True, positive form) if it prints as '- ...'."""
    if x[0] == 'int' and x[1] < 0:
        return True, I(-x[1])
    if x[0] == 'mul' and x[1][0] == 'int' and x[1][1] < 0:
        return True, scale(-x[1][1], x[2])
    return False, x


def sg(e):
    """The battery expression syntax (Python-like)."""
    t = e[0]
    if t == 'sym':
        return 's%d' % e[1]
    if t == 'int':
        return str(e[1])
    if t == 'add':
        neg, p = neg_const_term(e[1][0])
        # unary minus binds tighter than // and %: -(x // 8), not -x // 8
        out = ('-' + (sgp(p) if p[0] in ('fdiv', 'mod') else sg(p))) if neg else sg(e[1][0])
        for x in e[1][1:]:
            neg, p = neg_const_term(x)
            out += (' - ' if neg else ' + ') + sg(p)
        return out
    if t == 'mul':
        if e[1][0] == 'int' and e[1][1] < 0:
            if e[1][1] == -1:
                return '-%s' % sgp(e[2])
            return '-%d*%s' % (-e[1][1], sgp(e[2]))
        return '%s*%s' % (sgp(e[1]), sgp(e[2]))
    if t == 'fdiv':
        return '%s // %d' % (sgp(e[1]), e[2])
    if t == 'mod':
        return '%s %% %d' % (sgp(e[1]), e[2])
    if t in ('max', 'min'):
        return '%s(%s, %s)' % ('Max' if t == 'max' else 'Min', sg(e[1]), sg(e[2]))
    if t == 'rel':
        return '%s %s %s' % (sg(e[2]), SG_OP[e[1]], sg(e[3]))
    if t in ('and', 'or'):
        return (' %s ' % t).join('(%s)' % sg(x) for x in e[1])
    if t == 'not':
        return 'not (%s)' % sg(e[1])
    raise ValueError(t)


def sgp(e):
    """sg(e), parenthesized unless atomic."""
    if e[0] in ('sym', 'max', 'min') or (e[0] == 'int' and e[1] >= 0):
        return sg(e)
    return '(%s)' % sg(e)


def smt(e):
    """SMT-LIB2 (div/mod only by positive constants: Euclidean = floor)."""
    t = e[0]
    if t == 'sym':
        return 's%d' % e[1]
    if t == 'int':
        return str(e[1]) if e[1] >= 0 else '(- %d)' % -e[1]
    if t == 'add':
        return '(+ %s)' % ' '.join(smt(x) for x in e[1])
    if t == 'mul':
        return '(* %s %s)' % (smt(e[1]), smt(e[2]))
    if t in ('fdiv', 'mod'):
        assert e[2] > 0
        return '(%s %s %d)' % ('div' if t == 'fdiv' else 'mod', smt(e[1]), e[2])
    if t in ('max', 'min'):
        a, b = smt(e[1]), smt(e[2])
        return '(ite (%s %s %s) %s %s)' % ('>=' if t == 'max' else '<=', a, b, a, b)
    if t == 'rel':
        if e[1] == 'ne':
            return '(not (= %s %s))' % (smt(e[2]), smt(e[3]))
        return '(%s %s %s)' % (SMT_OP[e[1]], smt(e[2]), smt(e[3]))
    if t in ('and', 'or'):
        return '(%s %s)' % (t, ' '.join(smt(x) for x in e[1]))
    if t == 'not':
        return '(not %s)' % smt(e[1])
    raise ValueError(t)


# ---- interval arithmetic (sound under the bound facts) -----------------------
# An interval is (lo, hi) with None for an infinite end.


def iv_add(a, b):
    return (None if a[0] is None or b[0] is None else a[0] + b[0],
            None if a[1] is None or b[1] is None else a[1] + b[1])


def iv_mul(a, b):
    """The product of two intervals: exact when both are finite; with an
    infinite end, only the case of two non-negative factors is kept."""
    if a == (0, 0) or b == (0, 0):
        return (0, 0)
    if None in a or None in b:
        if a[0] is not None and b[0] is not None and a[0] >= 0 and b[0] >= 0:
            return (a[0] * b[0], None if (a[1] is None or b[1] is None) else a[1] * b[1])
        return (None, None)
    ends = [x * y for x in a for y in b]
    return (min(ends), max(ends))


def iv_scale(c, a):
    lo = None if a[0] is None else c * a[0]
    hi = None if a[1] is None else c * a[1]
    return (lo, hi) if c >= 0 else (hi, lo)


class Facts:
    """The facts with what the generator knows about them."""

    def __init__(self, nsyms):
        self.n = nsyms
        self.model = [0] * nsyms
        self.items = []           # (kind, expr)
        self.texts = set()
        self.lb = {}              # sym -> best lower bound from bound facts
        self.ub = {}
        self.defs = {}            # sym -> rhs (free symbols only)
        self.div = {}             # sym -> (m, r)
        self.le = []              # (a, b, k): s_a <= s_b + k
        self.lin = []             # (expr, op, const) of linear facts (weakenable)
        self.prod = []            # (a, b, op, c)

    def add(self, kind, e):
        key = sg(e)
        if key in self.texts:
            return False
        assert ev(e, self.model), 'fact false at the model: ' + key
        self.texts.add(key)
        self.items.append((kind, e))
        return True

    def sym_iv(self, i):
        if i in self.defs:
            a = self.iv(self.defs[i])
        else:
            a = (None, None)
        lo, hi = a
        if i in self.lb:
            lo = self.lb[i] if lo is None else max(lo, self.lb[i])
        if i in self.ub:
            hi = self.ub[i] if hi is None else min(hi, self.ub[i])
        if i in self.div:
            m, r = self.div[i]
            if lo is not None:
                lo += (r - lo) % m          # the least value >= lo in r + mZ
            if hi is not None:
                hi -= (hi - r) % m
        return (lo, hi)

    def iv(self, e):
        t = e[0]
        if t == 'sym':
            return self.sym_iv(e[1])
        if t == 'int':
            return (e[1], e[1])
        if t == 'add':
            acc = (0, 0)
            for x in e[1]:
                acc = iv_add(acc, self.iv(x))
            return acc
        if t == 'mul':
            if e[1][0] == 'int':
                return iv_scale(e[1][1], self.iv(e[2]))
            return iv_mul(self.iv(e[1]), self.iv(e[2]))
        if t == 'fdiv':
            a = self.iv(e[1])
            return (None if a[0] is None else a[0] // e[2], None if a[1] is None else a[1] // e[2])
        if t == 'mod':
            k = e[2]
            if e[1][0] == 'sym' and e[1][1] in self.div and self.div[e[1][1]][0] % k == 0:
                r = self.div[e[1][1]][1] % k
                return (r, r)
            a = self.iv(e[1])
            if a[0] is not None and a[1] is not None and a[0] // k == a[1] // k:
                return (a[0] % k, a[1] % k)
            return (0, k - 1)
        if t in ('max', 'min'):
            a, b = self.iv(e[1]), self.iv(e[2])
            if t == 'max':
                lo = a[0] if b[0] is None else b[0] if a[0] is None else max(a[0], b[0])
                hi = None if a[1] is None or b[1] is None else max(a[1], b[1])
            else:
                lo = None if a[0] is None or b[0] is None else min(a[0], b[0])
                hi = a[1] if b[1] is None else b[1] if a[1] is None else min(a[1], b[1])
            return (lo, hi)
        raise ValueError(t)


# ---- facts ------------------------------------------------------------------

SHAPE_VALUES = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 48, 64, 96, 100, 128, 192, 256, 384, 512, 768, 1000, 1024]
DIVISORS = [2, 4, 8, 16, 128]


def pow2_at_least(v):
    p = 1
    while p < v:
        p *= 2
    return p


def make_facts(rng, nsyms, nfacts):
    F = Facts(nsyms)
    syms = list(range(nsyms))
    rng.shuffle(syms)
    ndef = min(max(1, round(0.10 * nfacts)), nsyms // 3)
    ndiv = min(max(1, round(0.08 * nfacts)), nsyms // 4)
    defined = syms[:ndef]
    divisible = syms[ndef:ndef + ndiv]
    free = [i for i in range(nsyms) if i not in defined]

    # the model: free symbols first, then the defined ones from their rhs
    for i in free:
        F.model[i] = rng.choice(SHAPE_VALUES) if rng.random() < 0.7 else rng.randint(1, 1000)
    for i in divisible:
        m = rng.choice([2, 4, 8, 8, 8, 16, 16, 128])
        r = 0 if rng.random() < 0.8 else rng.randint(1, m - 1)
        F.model[i] = m * rng.randint(1, 64) + r
        F.div[i] = (m, r)
    facts_div = [(i, rel('eq', ('mod', S(i), F.div[i][0]), I(F.div[i][1]))) for i in divisible]

    facts_def = []
    for i in defined:
        a, b = rng.sample(free, 2)
        form = rng.randrange(6)
        if form == 0:
            rhs = scale(2, S(a))
        elif form == 1:
            rhs = add(S(a), I(1))
        elif form == 2:
            rhs = add(S(a), S(b))
        elif form == 3:
            rhs = scale(4, S(a))
        elif form == 4:
            rhs = add(scale(8, S(a)), S(b))
        else:
            rhs = add(S(a), I(-1))
        F.defs[i] = rhs
        F.model[i] = ev(rhs, F.model)
        facts_def.append((i, rel('eq', S(i), rhs)))

    # the facts, in an interleaved order (divisibility and equalities first
    # in their share; all of them before the end)
    kinds = (['div'] * len(facts_div) + ['def'] * len(facts_def))
    n_other = nfacts - len(kinds)
    weights = [('lower', 40), ('upper', 13), ('rel', 20), ('prod', 5), ('misc', 8)]
    total = sum(w for _, w in weights)
    plan = []
    for k, w in weights:
        plan += [k] * round(n_other * w / total)
    while len(plan) < n_other:
        plan.append('lower')
    plan = plan[:n_other]
    kinds += plan
    rng.shuffle(kinds)

    di, dd = iter(facts_div), iter(facts_def)
    for kind in kinds:
        for _attempt in range(200):
            if kind == 'div':
                ok = F.add('div', next(di)[1])
            elif kind == 'def':
                ok = F.add('eq', next(dd)[1])
            elif kind == 'lower':
                ok = fact_lower(rng, F)
            elif kind == 'upper':
                ok = fact_upper(rng, F)
            elif kind == 'rel':
                ok = fact_rel(rng, F)
            elif kind == 'prod':
                ok = fact_prod(rng, F)
            else:
                ok = fact_misc(rng, F)
            if ok:
                break
        else:
            raise SystemExit('reason_corpus.py: cannot make %s facts over %d symbols' % (nfacts, nsyms))
    assert len(F.items) == nfacts
    return F


def fact_lower(rng, F):
    i = rng.randrange(F.n)
    v = F.model[i]
    c = rng.choice([0, 1, 1, 2, 2, 2, v // 2, v]) if v >= 0 else v
    c = min(c, v)
    strict = rng.random() < 0.15 and c >= 1
    e = rel('gt', S(i), I(c - 1)) if strict else rel('ge', S(i), I(c))
    if not F.add('lower', e):
        return False
    F.lb[i] = c if i not in F.lb else max(F.lb[i], c)
    return True


def fact_upper(rng, F):
    i = rng.randrange(F.n)
    v = F.model[i]
    c = max(pow2_at_least(v), 64) * rng.choice([1, 1, 2, 4])
    strict = rng.random() < 0.2
    e = rel('lt', S(i), I(c + 1)) if strict else rel('le', S(i), I(c))
    if not F.add('upper', e):
        return False
    F.ub[i] = c if i not in F.ub else min(F.ub[i], c)
    return True


def fact_rel(rng, F):
    m = F.model
    form = rng.randrange(6)
    if form <= 2:
        # s_a <= s_b (+ k), often extending a chain
        if F.le and rng.random() < 0.6:
            a = rng.choice(F.le)[1]
        else:
            a = rng.randrange(F.n)
        cands = [b for b in range(F.n) if b != a and m[b] >= m[a]]
        if not cands:
            return False
        b = rng.choice(cands)
        if form == 0 or m[a] == m[b]:
            k, e = 0, rel('le', S(a), S(b))
        elif form == 1:
            k, e = -1, rel('lt', S(a), S(b))
        else:
            k = rng.choice([0, 2, 8])
            e = rel('le', S(a), add(S(b), I(k))) if k else rel('le', S(a), S(b))
        if not F.add('rel', e):
            return False
        F.le.append((a, b, k))
        return True
    a, b = rng.sample(range(F.n), 2)
    if form == 3:
        c = pow2_at_least(m[a] + m[b]) * rng.choice([1, 2])
        lhs = add(S(a), S(b))
        e = rel('le', lhs, I(c))
        op = 'le'
    elif form == 4:
        k = 2 * m[a] - m[b] + rng.choice([0, 1, 5])
        lhs = add(scale(2, S(a)), scale(-1, S(b)))
        e = rel('le', scale(2, S(a)), add(S(b), I(k)))
        c, op = k, 'le'
    else:
        c = m[a] + m[b] - rng.choice([0, 1, 10])
        lhs = add(S(a), S(b))
        e = rel('ge', lhs, I(c))
        op = 'ge'
    if not F.add('rel', e):
        return False
    F.lin.append((lhs, op, c))
    return True


def fact_prod(rng, F):
    m = F.model
    a, b = rng.sample(range(F.n), 2)
    p = m[a] * m[b]
    if rng.random() < 0.6:
        c = min(p, rng.choice([1, 4, 16, 64]))
        e = rel('ge', mul(S(a), S(b)), I(c))
        op = 'ge'
    else:
        c = pow2_at_least(p) * rng.choice([1, 2])
        e = rel('le', mul(S(a), S(b)), I(c))
        op = 'le'
    if not F.add('prod', e):
        return False
    F.prod.append((a, b, op, c))
    return True


def fact_misc(rng, F):
    m = F.model
    a, b = rng.sample(range(F.n), 2)
    form = rng.randrange(3)
    if form == 0:
        k = rng.choice([2, 4, 8])
        c = min(m[a] // k, rng.choice([1, 2]))
        e = rel('ge', ('fdiv', S(a), k), I(c))
    elif form == 1:
        c = pow2_at_least(max(m[a], m[b])) * rng.choice([1, 2])
        e = rel('le', ('max', S(a), S(b)), I(c))
    else:
        c = min(m[a], m[b], rng.choice([1, 2]))
        e = rel('ge', ('min', S(a), S(b)), I(c))
    return F.add('misc', e)


# ---- queries ----------------------------------------------------------------

def rand_atom(rng, F):
    r = rng.random()
    n = F.n
    if r < 0.74:
        return S(rng.randrange(n))
    if r < 0.80:
        a, b = rng.sample(range(n), 2)
        return mul(S(a), S(b))
    if r < 0.87:
        k = rng.choice(DIVISORS)
        inner = S(rng.randrange(n)) if rng.random() < 0.6 else add(S(rng.randrange(n)), S(rng.randrange(n)))
        return ('fdiv', inner, k)
    if r < 0.92:
        k = rng.choice(DIVISORS)
        inner = S(rng.randrange(n)) if rng.random() < 0.7 else add(S(rng.randrange(n)), I(rng.randint(1, 7)))
        return ('mod', inner, k)
    i, j = rng.sample(range(n), 2)
    a = S(i)
    b = S(j) if rng.random() < 0.7 else I(rng.choice([1, 2, 8, 64]))
    return ('max' if rng.random() < 0.5 else 'min', a, b)


def rand_expr(rng, F):
    terms = []
    for _ in range(rng.choice([1, 1, 2, 2, 2, 3])):
        c = rng.choice([1, 1, 1, 1, 2, 3, 4, 8, -1, -2])
        terms.append(scale(c, rand_atom(rng, F)))
    if rng.random() < 0.2:
        terms.append(I(rng.randint(-10, 10)))
    return add(*terms)


def q_range(rng, F):
    for _ in range(100):
        e = rand_expr(rng, F)
        lo, hi = F.iv(e)
        d = rng.choice([0, 0, 0, 1, 5])
        opts = []
        if lo is not None:
            opts += [rel('ge', e, I(lo - d)), rel('gt', e, I(lo - d - 1)), rel('le', I(lo - d), e)]
        if hi is not None:
            opts += [rel('le', e, I(hi + d)), rel('lt', e, I(hi + d + 1))]
        if opts:
            return rng.choice(opts)
    return None


def q_derived(rng, F):
    form = rng.randrange(11)
    if form == 0 and F.le:
        # a chain of <= facts
        a, b, k = rng.choice(F.le)
        path, total = [a, b], k
        for _ in range(rng.randint(1, 3)):
            nxt = [(y, kk) for (x, y, kk) in F.le if x == path[-1] and y not in path]
            if not nxt:
                break
            y, kk = rng.choice(nxt)
            path.append(y)
            total += kk
        d = rng.choice([0, 0, 1, 3])
        rhs = add(S(path[-1]), I(total + d))
        return rel('le', S(path[0]), rhs) if rng.random() < 0.5 else rel('ge', rhs, S(path[0]))
    if form == 1 and F.defs:
        i = rng.choice(sorted(F.defs))
        rhs = F.defs[i]
        sub = rng.randrange(4)
        if sub == 0:
            terms = rhs[1] if rhs[0] == 'add' else [rhs]
            return rel('eq', add(S(i), *[negate_term(t) for t in terms]), I(0))
        if sub == 1:
            d = rng.choice([0, 1, 2])
            return rel('ge', scale(2, S(i)), add(scale(2, rhs), I(-d)))
        lo, hi = F.iv(S(i))
        if lo is not None:
            return rel('ge', S(i), I(lo - rng.choice([0, 1])))
        return rel('eq', S(i), rhs)
    if form == 2 and F.div:
        i = rng.choice(sorted(F.div))
        mm, r = F.div[i]
        sub = rng.randrange(5)
        ds = [d for d in (2, 4, 8, 16) if mm % d == 0] or [mm]
        d = rng.choice(ds)
        if sub == 0:
            return rel('eq', ('mod', S(i), d), I(r % d))
        if sub == 1:
            return rel('eq', ('mod', add(S(i), I(mm)), mm), I(r))
        if sub == 2:
            return rel('eq', add(scale(mm, ('fdiv', S(i), mm)), I(r)), S(i))
        if sub == 3 and r == 0 and mm >= 4:
            return rel('eq', ('fdiv', S(i), mm // 2), scale(2, ('fdiv', S(i), mm)))
        c = rng.randint(1, mm - 1)
        return rel('eq', ('mod', add(S(i), I(c)), mm), I((r + c) % mm))
    if form == 3:
        a, b = rng.sample(range(F.n), 2)
        sub = rng.randrange(4)
        if sub == 0:
            return rel('ge', ('max', S(a), S(b)), S(a))
        if sub == 1:
            return rel('le', ('min', S(a), S(b)), S(b))
        if sub == 2:
            return rel('eq', add(('max', S(a), S(b)), ('min', S(a), S(b))), add(S(a), S(b)))
        c = rng.randrange(F.n)
        return rel('ge', ('max', S(a), S(b)), ('min', S(a), S(c)))
    if form == 4:
        e = rand_expr(rng, F)
        k = rng.choice(DIVISORS)
        sub = rng.randrange(3)
        if sub == 0:
            return rel('eq', add(scale(k, ('fdiv', e, k)), ('mod', e, k)), e)
        if sub == 1:
            return rel('lt', ('mod', e, k), I(k))
        lo, _ = F.iv(e)
        if lo is not None and lo >= 0:
            return rel('le', ('fdiv', e, k), e)
        return rel('ge', ('mod', e, k), I(0))
    if form == 5 and F.prod:
        a, b, op, c = rng.choice(F.prod)
        d = rng.choice([0, 1, 3])
        if op == 'ge':
            return rel('ge', mul(S(a), S(b)), I(c - d))
        return rel('le', mul(S(a), S(b)), I(c + d))
    if form == 6:
        # monotonicity of products over bounded symbols
        for _ in range(20):
            a, b = rng.sample(range(F.n), 2)
            la, lb = F.iv(S(a))[0], F.iv(S(b))[0]
            if la is not None and lb is not None and la >= 0 and lb >= 1:
                return rel('ge', mul(S(a), S(b)), S(a)) if rng.random() < 0.5 else \
                    rel('ge', mul(S(a), S(b)), I(la * lb))
        return None
    if form == 7 and F.lin:
        lhs, op, c = rng.choice(F.lin)
        d = rng.choice([0, 1, 4])
        return rel(op, lhs, I(c + d if op == 'le' else c - d))
    if form == 8:
        # a weakened bound through a defined or bounded symbol, scaled
        i = rng.randrange(F.n)
        lo, hi = F.iv(S(i))
        k = rng.choice([2, 3, 8])
        if lo is not None:
            return rel('ge', add(scale(k, S(i)), I(5)), I(k * lo + 5 - rng.choice([0, 1])))
        if hi is not None:
            return rel('le', scale(k, S(i)), I(k * hi))
        return None
    if form == 9:
        a, b = q_range(rng, F), q_range(rng, F)
        if a and b:
            return ('and', [a, b])
        return None
    if form == 10:
        a = q_range(rng, F)
        other = rel('eq', ('mod', S(rng.randrange(F.n)), 8), I(0))
        if a:
            return ('or', [other, a]) if rng.random() < 0.5 else ('or', [a, other])
        return None
    return None


def negate_term(t):
    neg, p = neg_const_term(t)
    if neg:
        return p
    if t[0] == 'int':
        return I(-t[1])
    if t[0] == 'mul' and t[1][0] == 'int':
        return scale(-t[1][1], t[2])
    return scale(-1, t)


def q_open(rng, F):
    m = F.model
    form = rng.randrange(6)
    if form <= 2:
        e = rand_expr(rng, F)
        v = ev(e, m)
        return rng.choice([rel('ge', e, I(v + 1)), rel('le', e, I(v - 1)), rel('eq', e, I(v)),
                           rel('ge', e, I(v)), rel('lt', e, I(v))])
    if form == 3:
        a, b = rng.sample(range(F.n), 2)
        return rel(rng.choice(['le', 'lt', 'ge']), S(a), S(b))
    if form == 4:
        i = rng.randrange(F.n)
        return rel('eq', ('mod', S(i), rng.choice([2, 4, 8])), I(0))
    e = rand_expr(rng, F)
    lo, hi = F.iv(e)
    if lo is not None:
        return rel('ge', e, I(lo + rng.choice([1, 2, 8])))
    if hi is not None:
        return rel('le', e, I(hi - rng.choice([1, 2, 8])))
    return None


def linform(e, k=1, acc=None):
    """e as {atom text: coefficient} with the constant under None."""
    acc = {} if acc is None else acc
    if e[0] == 'int':
        acc[None] = acc.get(None, 0) + k * e[1]
    elif e[0] == 'add':
        for x in e[1]:
            linform(x, k, acc)
    elif e[0] == 'mul' and e[1][0] == 'int':
        linform(e[2], k * e[1][1], acc)
    else:
        key = sg(e)
        acc[key] = acc.get(key, 0) + k
    return acc


def query_key(q):
    """A light normal form, so that the corpus does not ask one question
    twice in two spellings (s >= 2, 2*s > 3, 2 <= s): relations over a linear
    form are divided by the gcd of their coefficients and tightened."""
    if q[0] != 'rel':
        if q[0] in ('and', 'or'):
            return (q[0], tuple(sorted(map(str, map(query_key, q[1])))))
        return ('not', query_key(q[1]))
    op, a, b = q[1], q[2], q[3]
    p = linform(a)
    linform(b, -1, p)
    if op in ('le', 'lt'):
        p = {x: -v for x, v in p.items()}
    c = p.pop(None, 0)
    if op in ('gt', 'lt'):
        c -= 1
    p = {x: v for x, v in p.items() if v}
    g = 0
    for v in p.values():
        g = math.gcd(g, v)
    if g == 0:
        return ('const', op, c)
    kind = 'ge' if op in ('ge', 'gt', 'le', 'lt') else op
    if kind == 'ge':
        c = c // g   # sum k_i x_i + c >= 0 with g | k_i  <=>  sum (k_i/g) x_i + floor(c/g) >= 0
    else:
        if c % g:
            return ('const', kind, 1)
        c //= g
        if sorted(p.items())[0][1] < 0:
            p, c = {x: -v for x, v in p.items()}, -c
    return (kind, tuple(sorted((x, v // g) for x, v in p.items())), c)


def make_queries(rng, F, nq):
    out, seen = [], set()
    # targets: 35% range, 35% derived, 12% negated, 18% open
    plan = ['range'] * round(0.35 * nq) + ['derived'] * round(0.35 * nq) + ['negated'] * round(0.12 * nq)
    plan += ['open'] * (nq - len(plan))
    plan = plan[:nq]
    rng.shuffle(plan)
    for kind in plan:
        for _attempt in range(500):
            if kind == 'range':
                q = q_range(rng, F)
            elif kind == 'derived':
                q = q_derived(rng, F)
            elif kind == 'negated':
                base = q_range(rng, F) if rng.random() < 0.5 else q_derived(rng, F)
                q = negate(base) if base else None
            else:
                q = q_open(rng, F)
            if q is None:
                continue
            key = query_key(q)
            if key in seen:
                continue
            val = ev(q, F.model)
            if kind in ('range', 'derived'):
                assert val, 'generator bug: an implied query is false at the model: ' + key
            if kind == 'negated':
                assert not val, 'generator bug: a refuted query is true at the model: ' + key
            seen.add(key)
            out.append((kind, val, q))
            break
        else:
            raise SystemExit('reason_corpus.py: cannot make distinct %s queries' % kind)
    return out


def generate(args):
    rng = random.Random('%d/%d/%d/%d' % (args.seed, args.syms, args.facts, args.queries))
    F = make_facts(rng, args.syms, args.facts)
    qs = make_queries(rng, F, args.queries)
    f = open(args.output, 'w') if args.output != '-' else sys.stdout
    w = f.write
    w('# reasoning benchmark corpus (tests/bench/reason_corpus.py); fields separated by tabs\n')
    w('# fact INDEX KIND SG-TEXT SMT-TEXT / query INDEX KIND MODEL-VALUE SG-TEXT SMT-TEXT\n')
    w('header\tseed=%d\tsyms=%d\tfacts=%d\tqueries=%d\n' % (args.seed, args.syms, args.facts, args.queries))
    w('model\t%s\n' % ' '.join(str(v) for v in F.model))
    for i, (kind, e) in enumerate(F.items):
        w('fact\t%d\t%s\t%s\t%s\n' % (i, kind, sg(e), smt(e)))
    for i, (kind, val, q) in enumerate(qs):
        w('query\t%d\t%s\t%d\t%s\t%s\n' % (i, kind, 1 if val else 0, sg(q), smt(q)))
    if f is not sys.stdout:
        f.close()


# ---- report -----------------------------------------------------------------

def read_corpus(path):
    facts, queries, header = [], [], {}
    for line in open(path):
        p = line.rstrip('\n').split('\t')
        if p[0] == 'header':
            header = dict(x.split('=', 1) for x in p[1:])
        elif p[0] == 'fact':
            facts.append({'kind': p[2], 'sg': p[3]})
        elif p[0] == 'query':
            queries.append({'kind': p[2], 'model': p[3] == '1', 'sg': p[4]})
    return header, facts, queries


def read_out(path):
    """key value lines, and the per-query lines: answer I X / verdict I NOTQ Q T_NS."""
    kv, per = {}, {}
    for line in open(path):
        p = line.split()
        if not p:
            continue
        if p[0] in ('answer', 'verdict'):
            per[int(p[1])] = p[2:]
        else:
            kv[p[0]] = ' '.join(p[1:])
    return kv, per


def fnum(kv, k, default=float('nan')):
    try:
        return float(kv[k])
    except (KeyError, ValueError):
        return default


def report(args):
    corpus, sg_out = args.report[0], args.report[1]
    z3_out = args.report[2] if len(args.report) > 2 else None
    header, facts, queries = read_corpus(corpus)
    sgkv, sgans = read_out(sg_out)
    have_z3 = z3_out is not None
    if have_z3:
        zkv, zver = read_out(z3_out)
    nq = len(queries)
    status = 0
    h = 14695981039346656037
    for byte in open(corpus, 'rb').read():
        h = ((h ^ byte) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    for name, kv in [('shapeguard', sgkv)] + ([('Z3', zkv)] if have_z3 else []):
        if kv.get('corpus_hash') != '%016x' % h:
            print('reason_corpus.py: the %s output is not for %s (corpus_hash %s, expected %016x)'
                  % (name, corpus, kv.get('corpus_hash'), h), file=sys.stderr)
            return 2

    # Z3's truth per query: T (not q unsat), F (q unsat), N (both sat), ? (unknown)
    truth = {}
    if have_z3:
        for i in range(nq):
            notq, q = zver[i][0], zver[i][1]
            truth[i] = 'T' if notq == 'unsat' else 'F' if q == 'unsat' else \
                'N' if notq == 'sat' and q == 'sat' else '?'

    unsound, model_unsound = [], []
    agree = {'T': 0, 'F': 0}
    missed = {'T': 0, 'F': 0}
    for i in range(nq):
        a = sgans[i][0]
        if a == 'true' and not queries[i]['model']:
            model_unsound.append(i)
        if a == 'false' and queries[i]['model']:
            model_unsound.append(i)
        if have_z3:
            notq, q = zver[i][0], zver[i][1]
            if a == 'true' and notq == 'sat':
                unsound.append(i)
            elif a == 'false' and (q == 'sat' or notq == 'unsat'):
                unsound.append(i)
            t = truth[i]
            if t in 'TF':
                if (a == 'true' and t == 'T') or (a == 'false' and t == 'F'):
                    agree[t] += 1
                else:
                    missed[t] += 1

    def cnt(d, x):
        return sum(1 for v in d.values() if v == x)

    sg_true = sum(1 for i in range(nq) if sgans[i][0] == 'true')
    sg_false = sum(1 for i in range(nq) if sgans[i][0] == 'false')
    sg_unk = nq - sg_true - sg_false
    print('Reasoning under facts: %s%s' % (sgkv.get('engine', 'shapeguard'),
                                           ' vs ' + zkv.get('engine', 'Z3') if have_z3 else ''))
    print('corpus: seed %s, %s symbols, %s facts, %s queries (kinds: %s)' % (
        header.get('seed'), header.get('syms'), header.get('facts'), nq,
        ', '.join('%d %s' % (sum(1 for q in queries if q['kind'] == k), k)
                  for k in ('range', 'derived', 'negated', 'open'))))
    if have_z3:
        zt, zf, zn, zu = cnt(truth, 'T'), cnt(truth, 'F'), cnt(truth, 'N'), cnt(truth, '?')
        print('Z3 truth: %d implied, %d refuted, %d neither, %d undecided (timeout or unknown); '
              '%.0f%% not implied' % (zt, zf, zn, zu, 100.0 * (nq - zt) / nq))
    print('runs: shapeguard %s%s; per-query times are medians over the runs of each run\'s median / mean'
          % (sgkv.get('runs', '?'), ', Z3 ' + zkv.get('runs', '?') if have_z3 else ''))
    print()

    def us(ns):
        return '%.2f' % (ns / 1000.0) if ns == ns else '-'

    def row(label, a, b=None, unit=''):
        if have_z3:
            num = isinstance(a, float) and isinstance(b, float)
            r = (b / a) if (num and a and a == a and b == b) else None
            print('%-40s %12s %12s %9s' % (label, a if isinstance(a, str) else us(a),
                                            '' if b is None else (b if isinstance(b, str) else us(b)),
                                            '' if r is None else '%.0fx' % r))
        else:
            print('%-40s %12s' % (label, a if isinstance(a, str) else us(a)))

    if have_z3:
        print('%-40s %12s %12s %9s' % ('(us)', 'shapeguard', 'Z3', 'Z3/sg'))
    else:
        print('%-40s %12s' % ('(us)', 'shapeguard'))
    row('context creation', fnum(sgkv, 'ctx_ns'), fnum(zkv, 'ctx_ns') if have_z3 else None)
    row('parse %s facts (total)' % len(facts), fnum(sgkv, 'parse_facts_ns'),
        fnum(zkv, 'parse_facts_ns') if have_z3 else None)
    row('assume %s facts (total)' % len(facts), fnum(sgkv, 'setup_ns'), fnum(zkv, 'setup_ns') if have_z3 else None)
    if have_z3:
        row('first check of the facts alone', '-', fnum(zkv, 'facts_check_ns'))
    row('copy of the fact base (mean)', fnum(sgkv, 'copy_ns'), '-' if have_z3 else None)
    row('parse one query (mean)', fnum(sgkv, 'parse_query_ns'), fnum(zkv, 'parse_query_ns') if have_z3 else None)
    row('query, cold (first ask): median', fnum(sgkv, 'cold_ns_median'),
        fnum(zkv, 'query_ns_median') if have_z3 else None)
    row('query, cold (first ask): mean', fnum(sgkv, 'cold_ns_mean'), fnum(zkv, 'query_ns_mean') if have_z3 else None)
    row('query, cold: 90th percentile', fnum(sgkv, 'cold_ns_p90'), fnum(zkv, 'query_ns_p90') if have_z3 else None)
    row('query, cold: max', fnum(sgkv, 'cold_ns_max'), fnum(zkv, 'query_ns_max') if have_z3 else None)
    row('query, isolated (fresh copy): median', fnum(sgkv, 'iso_ns_median'),
        fnum(zkv, 'query_ns_median') if have_z3 else None)
    row('query, isolated (fresh copy): mean', fnum(sgkv, 'iso_ns_mean'),
        fnum(zkv, 'query_ns_mean') if have_z3 else None)
    row('query, warm (asked again): median', fnum(sgkv, 'warm_ns_median'),
        fnum(zkv, 'query_ns_median') if have_z3 else None)
    row('query, warm (asked again): mean', fnum(sgkv, 'warm_ns_mean'), fnum(zkv, 'query_ns_mean') if have_z3 else None)
    if have_z3:
        print('  (Z3 keeps no answers: its column repeats its one per-query figure on the isolated and warm rows)')
    for cls in ('true', 'false', 'unknown'):
        n = int(fnum(sgkv, 'cold_n_' + cls, 0))
        print('  shapeguard cold, answers %-8s %5d   median %8s us   mean %8s us' % (
            cls + ':', n, us(fnum(sgkv, 'cold_ns_median_' + cls)), us(fnum(sgkv, 'cold_ns_mean_' + cls))))
    if have_z3:
        for cls in ('true', 'false', 'neither', 'undecided'):
            n = int(fnum(zkv, 'query_n_' + cls, 0))
            print('  Z3, verdict %-21s %5d   median %8s us   mean %8s us' % (
                cls + ':', n, us(fnum(zkv, 'query_ns_median_' + cls)), us(fnum(zkv, 'query_ns_mean_' + cls))))
    print()
    print('answers: shapeguard %d true, %d false, %d unknown: proves %d of %d' % (
        sg_true, sg_false, sg_unk, sg_true + sg_false, nq))
    if have_z3:
        zp = zt + zf
        print('         Z3         %d true, %d false, %d neither, %d undecided: proves %d of %d' % (
            zt, zf, zn, zu, zp, nq))
        print('completeness: shapeguard proves %d of the %d Z3 proves (%.1f%%): %d of %d implied, %d of %d refuted'
              % (agree['T'] + agree['F'], zp, 100.0 * (agree['T'] + agree['F']) / zp if zp else 0,
                 agree['T'], zt, agree['F'], zf))
        by_kind = {}
        for i, q in enumerate(queries):
            k = q['kind']
            d = by_kind.setdefault(k, [0, 0, 0])
            d[0] += 1
            d[1] += truth[i] in 'TF'
            d[2] += sgans[i][0] in ('true', 'false')
        print('  by kind (queries / Z3 proves / shapeguard proves): ' + ', '.join(
            '%s %d/%d/%d' % (k, v[0], v[1], v[2]) for k, v in by_kind.items()))
        if fnum(zkv, 'facts_sat', 1) != 1:
            print('WARNING: Z3 did not find the facts satisfiable (%s)' % zkv.get('facts_check'))
            status = 1
        if int(fnum(zkv, 'model_mismatch', 0)) or int(fnum(sgkv, 'model_mismatch', 0)):
            print('WARNING: a side disagrees with the generator on the model values (see checks)')
            status = 1
    print('unsound answers: %d%s' % (len(unsound) + len(set(model_unsound) - set(unsound)),
                                     ' (against Z3 and the model)' if have_z3 else ' (against the model only: no Z3)'))
    for i in sorted(set(unsound) | set(model_unsound)):
        status = 1
        print('  UNSOUND query %d (%s): %s' % (i, queries[i]['kind'], queries[i]['sg']))
        print('    shapeguard: %s; model value: %s%s' % (
            sgans[i][0], 'true' if queries[i]['model'] else 'false',
            '; Z3: not q %s, q %s' % (zver[i][0], zver[i][1]) if have_z3 else ''))
    if unsound or model_unsound:
        print('  facts (%d):' % len(facts))
        for f in facts:
            print('    %s' % f['sg'])
    print('checks: shapeguard %s%s' % (sgkv.get('checks', '?'), ', Z3 ' + zkv.get('checks', '?') if have_z3 else ''))
    if sgkv.get('checks') != 'ok' or (have_z3 and zkv.get('checks') != 'ok'):
        status = 1
    print()
    cold = fnum(sgkv, 'cold_ns_median')
    print('goal (issue 3): a query against %s facts over %s symbols answers in microseconds' % (
        header.get('facts'), header.get('syms')))
    mean, p90, mx = fnum(sgkv, 'cold_ns_mean'), fnum(sgkv, 'cold_ns_p90'), fnum(sgkv, 'cold_ns_max')
    print('  cold: median %s us, mean %s us, 90th percentile %s us, max %s us: %s' % (
        us(cold), us(mean), us(p90), us(mx),
        'met (median and mean under 100 us)' if mean < 1e5 and cold < 1e5 else 'NOT met'))
    iso, iso_mean = fnum(sgkv, 'iso_ns_median'), fnum(sgkv, 'iso_ns_mean')
    share = 100.0 * (agree['T'] + agree['F']) / (zt + zf) if have_z3 and zt + zf else float('nan')
    if have_z3:
        zmed, zmean = fnum(zkv, 'query_ns_median'), fnum(zkv, 'query_ns_mean')

        def ratio(z, a):
            return '%.0fx' % (z / a) if a and a == a and z == z else '-'
        # like with like: the cold pass keeps what earlier queries computed
        # (ranges, proved answers); the isolated pass asks each query of a
        # fresh copy of the fact base, as Z3 asks each of its solver
        print('Z3 / shapeguard per query, median (mean): cold with the cache of earlier queries %s (%s), '
              'isolated (fresh copy, nothing cached) %s (%s); proof share %.1f%% of Z3\'s' % (
                  ratio(zmed, cold), ratio(zmean, mean), ratio(zmed, iso), ratio(zmean, iso_mean), share))
    if args.summary:
        with open(args.summary, 'a') as s:
            s.write('%s %s %s %s %d %d %s %s %s %s %s %s\n' % (
                header.get('facts'), us(fnum(sgkv, 'setup_ns')), us(cold), us(mean),
                sg_true + sg_false, (zt + zf) if have_z3 else -1,
                us(fnum(zkv, 'query_ns_median')) if have_z3 else '-',
                us(fnum(zkv, 'query_ns_mean')) if have_z3 else '-',
                len(unsound) + len(set(model_unsound) - set(unsound)),
                us(iso), us(iso_mean), '%.1f' % share if share == share else '-'))
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--syms', type=int, default=50)
    ap.add_argument('--facts', type=int, default=100)
    ap.add_argument('--queries', type=int, default=1000)
    ap.add_argument('-o', '--output', default='-')
    ap.add_argument('--report', nargs='+', metavar='FILE', help='CORPUS SG_OUT [Z3_OUT]')
    ap.add_argument('--summary', help='with --report: append one line of figures to this file')
    args = ap.parse_args()
    if args.report:
        if len(args.report) not in (2, 3):
            ap.error('--report CORPUS SG_OUT [Z3_OUT]')
        return report(args)
    if args.syms < 4 or args.facts < 4 or args.queries < 1:
        ap.error('need at least 4 symbols, 4 facts, 1 query')
    generate(args)
    return 0


if __name__ == '__main__':
    sys.exit(main())
