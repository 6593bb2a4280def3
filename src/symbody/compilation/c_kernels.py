"""Kernels as generated C: linear-time common subexpressions, compiled by the system's C compiler.

symengine's ``Lambdify(cse=True)`` finds common subexpressions with an algorithm whose
cost grows like size^2.2 and hands LLVM one function of the whole size; on the 40-link
chain that takes 20 s and on the 80-link chain more than 40 minutes.  This module
does the same job in time linear in the size of the expression DAG:

1. :func:`straight_line_program` walks the symengine DAG once (hash-consing: a node
   met again is the same temporary), giving a list of operations in dependency
   order, each operand an earlier temporary, an argument ``z[k]`` or a literal;
2. :func:`c_source` cuts that list into segments of at most ``segment_size``
   operations, each a C function of its own; temporaries used across segments live
   in a workspace array, the others stay local (so every function the compiler
   optimizes is small, and its cost stays linear in the number of segments);
3. :func:`build_library` compiles the translation units with ``cc -O1`` in
   parallel (one process per core) and links one shared library, loaded with
   :mod:`ctypes`.

The library exports ``void <name>(const double *z, double *out)`` and
``void <name>_many(const double *Z, double *OUT, long k)`` (rows of ``Z``).
Expressions holding something C cannot express (Piecewise, unknown functions)
raise :class:`UnsupportedExpression`; :mod:`.codegen` then uses symengine's LLVM.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["UnsupportedExpression", "StraightLineProgram", "straight_line_program", "c_source",
           "build_library", "compiler_available", "load_library", "install_library"]

#: Version of the generated program (factoring, ordering, C layout): part of the cache key
#: of C kernels, so that a library built by an earlier generator is not reused.
PROGRAM_VERSION = "5"

#: Operations per generated C function: small enough that the compiler's cost per
#: operation stays constant, large enough that calls between segments cost nothing.
SEGMENT_SIZE = 2500

#: Optimisation flags.  The program is already free of common subexpressions and
#: straight-line, so gcc's redundancy elimination (FRE), dead-store elimination (tree and
#: RTL), points-to analysis and dominator optimisations, whose alias walks grow with the
#: number of workspace stores, find nothing to do and are switched off: that halves the
#: compile time of a segment (0.38 -> 0.18 s user for 2 500 operations of the 60-link
#: chain) at no cost in evaluation speed (11.4 vs 11.8 us per call; -O0 compiles as fast
#: but runs 12x slower).
OPT_FLAGS = "-O1 -fno-tree-fre -fno-tree-dse -fno-dse -fno-tree-pta -fno-tree-dominator-opts"

_FUNCTIONS = {  # symengine class name -> C function (math.h)
    "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan",
    "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "acosh": "acosh",
    "atanh": "atanh", "exp": "exp", "log": "log", "Abs": "fabs", "atan2": "atan2",
    "floor": "floor", "ceiling": "ceil", "sqrt": "sqrt",
}
_CONSTANTS = {"Pi": "M_PI", "Exp1": "M_E"}
#: nodes written with C operators (comparisons and logic give 1.0 / 0.0)
_SPECIAL = {"StrictLessThan": "lt", "LessThan": "le", "Equality": "eq", "Unequality": "ne",
            "And": "and", "Or": "or", "Not": "not", "Piecewise": "piecewise", "sign": "sign",
            "Max": "max", "Min": "min"}
_COMPARE = {"lt": "<", "le": "<=", "eq": "==", "ne": "!="}

#: symengine class names of the functions, constants, comparisons and logic that the C code
#: writes directly (:mod:`.function_expansion` expands every other function first)
NATIVE_NODES = frozenset(_FUNCTIONS) | frozenset(_CONSTANTS) | frozenset(_SPECIAL)


class UnsupportedExpression(ValueError):
    """An expression node that the C emitter cannot translate (e.g. Piecewise)."""


class StraightLineProgram:
    """Operations in dependency order: ``ops[i] = (kind, operands)`` defines temporary i.

    ``kind`` is "+", "*", "pow" (operands: base, integer or float exponent), "sqrt",
    "isqrt" (1/sqrt) or a C function name; operands are references: ``("t", i)``
    (temporary), ``("z", k)`` (argument), ``("c", text)`` (C literal).
    ``outputs[j]`` is the reference of output j.
    """

    __slots__ = ("ops", "outputs", "nargs")

    def __init__(self, ops: list, outputs: list, nargs: int):
        self.ops, self.outputs, self.nargs = ops, outputs, nargs

    def __len__(self) -> int:
        return len(self.ops)


def _literal(value: float) -> tuple:
    text = repr(float(value))
    if text in ("inf", "-inf", "nan"):
        raise UnsupportedExpression(f"the constant {text} cannot be compiled")
    return ("c", text if ("." in text or "e" in text) else text + ".0")


def straight_line_program(exprs: Sequence, nargs: int) -> StraightLineProgram:
    """The operations computing symengine ``exprs`` of the symbols ``_a0 .. _a{nargs-1}``.

    :func:`_dag` turns each distinct node of the DAG (symengine's structural hash and
    equality) into one n-ary operation, in one linear pass.  :func:`_binary` rewrites
    sums and products into binary operations, hash-consed: each sum is factored
    greedily (the factor common to the most terms comes out first; a 2-term sum among
    a term's factors is distributed, so ``w_s (sin q_s cos q_r - cos q_s sin q_r)``
    gives up ``cos q_r`` and ``sin q_r`` to the row), the terms of a sum are added in
    the order of how many sums share them, and the factors of a product are
    multiplied most-shared first.  On the n-link chain this turns Kane's forcing rows
    (n terms each, n^2 in all) into nested partial sums shared between the rows
    (O(n) operations: 3 900 instead of 70 900 at n = 100); a sum of more than
    :data:`FACTOR_MAX_TERMS` terms is only collected one level deep
    (``a*b*m1 + a*b*m2 -> a*b*(m1 + m2)``), in linear time.
    """
    ops, outputs = _dag(exprs, nargs)
    return _binary(ops, outputs, nargs)


def _dag(exprs: Sequence, nargs: int) -> tuple[list, list]:
    memo: dict = {}
    ops: list = []

    def leaf(e):
        cls = type(e).__name__
        if cls == "Symbol":
            name = e.name
            if not name.startswith("_a"):
                raise UnsupportedExpression(f"unknown symbol {name}")
            k = int(name[2:])
            if not 0 <= k < nargs:
                raise UnsupportedExpression(f"argument {name} out of range")
            return ("z", k)
        if e.is_Number:
            if cls in ("Integer", "Zero", "One", "NegativeOne"):
                return _literal(int(e))
            if cls in ("Rational", "Half"):
                num, den = e.get_num_den()
                return _literal(int(num) / int(den))
            if cls == "RealDouble":
                return _literal(float(e))
            raise UnsupportedExpression(f"the number {e} ({cls}) cannot be compiled")
        if cls in _CONSTANTS:
            return ("c", _CONSTANTS[cls])
        if cls == "BooleanTrue":
            return ("c", "1.0")
        if cls == "BooleanFalse":
            return ("c", "0.0")
        return None

    def make_op(e, children):
        cls = type(e).__name__
        if cls == "Add":
            return ("+", children)
        if cls == "Mul":
            return ("*", children)
        if cls == "Pow":
            base, expo = children
            ex = e.args[1]
            if type(e.args[0]).__name__ == "Exp1":     # (symengine's exp(x) is E**x)
                return ("exp", [expo])
            if ex.is_Integer:
                return ("pow", [base, int(ex)])
            if ex.is_Number and type(ex).__name__ in ("Rational", "Half"):
                num, den = ex.get_num_den()
                if (int(num), int(den)) == (1, 2):
                    return ("sqrt", [base])
                if (int(num), int(den)) == (-1, 2):
                    return ("isqrt", [base])
            return ("cpow", [base, expo])
        fn = _FUNCTIONS.get(cls)
        if fn is not None:
            return (fn, children)
        special = _SPECIAL.get(cls)
        if special is not None:
            return (special, children)
        raise UnsupportedExpression(f"{cls} ({str(e)[:80]}) cannot be compiled to C")

    outputs = []
    for root in exprs:
        hit = memo.get(root)
        if hit is not None:
            outputs.append(hit)
            continue
        # iterative post-order walk (deep sums would exhaust Python's recursion limit)
        stack = [(root, False)]
        while stack:
            e, expanded = stack.pop()
            if e in memo:
                continue
            ref = leaf(e)
            if ref is not None:
                memo[e] = ref
                continue
            args = e.args
            if not expanded:
                stack.append((e, True))
                stack.extend((a, False) for a in args if a not in memo)
                continue
            ops.append(make_op(e, [memo[a] for a in args]))
            memo[e] = ("t", len(ops) - 1)
        outputs.append(memo[root])
    return ops, outputs


#: A factor is paired with a factor of a 2-term sum it multiplies (see :func:`_binary`)
#: when at least this many products share the pair.
PAIR_MIN_SHARED = 3

#: Sums with more terms than this are not factored (greedy factoring costs
#: O(terms^2 x factors)); their terms are still collected one level deep.
FACTOR_MAX_TERMS = 400


def _binary(ops: list, outputs: list, nargs: int) -> StraightLineProgram:
    """Sums and products as binary operations, factored, ordered for sharing, hash-consed.

    1. Every sum is written as a sum of products over the original values (a product
       with one 2-term sum among its factors, a sum no other operation uses, is
       distributed over it, so that the factors of those two terms can be taken out of
       the sum; a shared one is computed once and stays a factor), then factored greedily:
       the factor common to the most terms is taken out, recursively
       (``l_r cos_r Σ_s S_rs w_s + ... -> l_r (cos_r Σ_s S_rs w_s + ...)``).
    2. The terms of each sum are added in the order of how many sums they appear in
       (most first), so that sums over nested sets of terms (Σ_{s<=r} a_s, Σ_{s>r} b_s
       over the rows r of Kane's equations) share their partial sums.
    3. Products multiply their factors most-shared first, so products with common
       factors share their prefixes.
    4. A product with one 2-term sum among its factors (used nowhere else) is
       distributed over it when its factors pair with the sum's factors into products
       that at least :data:`PAIR_MIN_SHARED` such products share:
       ``S l_r l_s (sin_r sin_s + cos_r cos_s) -> S ((l_r sin_r)(l_s sin_s) + (l_r cos_r)(l_s cos_s))``,
       4 operations per mass-matrix entry of a chain instead of 6.

    Pass 1 (:class:`_SumForest`) gives the factored form of every sum; the products to
    distribute are planned by :func:`_distribution_plans`; pass 2 (:class:`_Emitter`)
    writes the operations in one forward pass; :func:`_live` drops the unused ones.
    """
    factors = _Factors(ops)
    forest = _SumForest(factors.key)
    sum_tree = {i: forest.factored(factors.terms(operands))
                for i, (kind, operands) in enumerate(ops) if kind == "+"}
    plans = _distribution_plans(ops, outputs, factors)
    emitter = _Emitter(factors.freq, forest.trees, forest.sums_holding())
    for i, (kind, operands) in enumerate(ops):
        emitter.define(i, kind, operands, sum_tree, plans)
    return _live(emitter.new, [emitter.mapped(o) for o in outputs], nargs)


class _Factors:
    """The factors of the original operations ``ops``; ``freq``: how many products each
    value is a factor of (the most shared factors sort first, :meth:`key`)."""

    __slots__ = ("ops", "freq", "users")

    def __init__(self, ops: list):
        self.ops = ops
        freq: dict = {}
        users: dict = {}
        for kind, operands in ops:
            for a in operands:
                if isinstance(a, tuple) and a[0] == "t":
                    users[a[1]] = users.get(a[1], 0) + 1
            if kind == "*":
                for a in operands:
                    freq[a] = freq.get(a, 0) + 1
        self.freq, self.users = freq, users

    def key(self, ref: tuple) -> tuple:
        return (-self.freq.get(ref, 0), ref)

    def of(self, ref: tuple) -> list:
        """The factors of the value ``ref`` (itself unless it is a product), most shared first."""
        if ref[0] == "t" and self.ops[ref[1]][0] == "*":
            return sorted(self.ops[ref[1]][1], key=self.key)
        return [ref]

    def is_small_sum(self, ref: tuple) -> bool:
        return ref[0] == "t" and self.ops[ref[1]][0] == "+" and len(self.ops[ref[1]][1]) == 2

    def terms(self, operands: list) -> list[tuple]:
        """Each term of a sum as a tuple of factors; one 2-term sum factor distributed."""
        terms = []
        for a in operands:
            fs = self.of(a)
            # a 2-term sum used by other operations too is computed once anyway: distributing
            # it into every product it is a factor of would repeat its operations in each
            inner = [f for f in fs if self.is_small_sum(f) and self.users.get(f[1], 0) <= 1] \
                if len(operands) > 1 else []
            if len(inner) == 1:
                rest = list(fs)
                rest.remove(inner[0])
                for d in self.ops[inner[0][1]][1]:
                    terms.append(tuple(sorted(rest + self.of(d), key=self.key)))
            else:
                terms.append(tuple(fs))
        return terms


class _SumForest:
    """The factored form of sums as interned trees (pass 1 of :func:`_binary`):
    ``("leaf", factors) | ("mul", factor, tree id) | ("sum", (tree ids ...))``;
    ``factor_key`` orders factors, most shared first."""

    __slots__ = ("factor_key", "trees", "tree_ids")

    def __init__(self, factor_key: Callable[[tuple], tuple]):
        self.factor_key = factor_key
        self.trees: list = []
        self.tree_ids: dict = {}

    def intern(self, node: tuple) -> int:
        tid = self.tree_ids.get(node)
        if tid is None:
            tid = len(self.trees)
            self.tree_ids[node] = tid
            self.trees.append(node)
        return tid

    def sums_holding(self) -> list[int]:
        """How many sums each tree is a term of."""
        in_sums = [0] * len(self.trees)
        for node in self.trees:
            if node[0] == "sum":
                for c in set(node[1]):
                    in_sums[c] += 1
        return in_sums

    def factored(self, terms: list) -> int:
        """The id of a tree computing the sum of the products ``terms``."""
        intern = self.intern
        if len(terms) == 1:
            return intern(("leaf", terms[0]))
        if len(terms) > FACTOR_MAX_TERMS:
            items = self.collect_one_level(terms)
        else:
            items = self.factor_greedily(terms)
        if len(items) == 1:
            return items[0]
        return intern(("sum", tuple(items)))

    def factor_greedily(self, terms: list) -> list[int]:
        """The terms as trees, the factor common to the most of them taken out first."""
        intern, factor_key = self.intern, self.factor_key
        items = []
        remaining = terms
        while remaining:
            counts: dict = {}
            for fs in remaining:
                for f in set(fs):
                    counts[f] = counts.get(f, 0) + 1
            best = min(counts, key=lambda f: (-counts[f], factor_key(f))) if counts else None
            if best is None or counts[best] < 2:
                items.extend(intern(("leaf", fs)) for fs in remaining)
                break
            taken, left = [], []
            for fs in remaining:
                if best in fs:
                    rest = list(fs)
                    rest.remove(best)
                    taken.append(tuple(rest))
                else:
                    left.append(fs)
            items.append(intern(("mul", best, self.factored(taken))))
            remaining = left
        return items

    def collect_one_level(self, terms: list) -> list[int]:
        """a*b*m1 + a*b*m2 -> a*b*(m1 + m2): for each term, take out the factor whose
        removal leaves the most common rest (linear time, for very long sums)."""
        intern = self.intern
        counts: dict = {}
        for fs in terms:
            for j in range(len(fs)):
                if j and fs[j] == fs[j - 1]:
                    continue
                key = fs[:j] + fs[j + 1:]
                counts[key] = counts.get(key, 0) + 1
        groups: dict = {}
        for fs in terms:
            best, best_j = None, 0
            for j in range(len(fs)):
                key = fs[:j] + fs[j + 1:]
                c = counts[key]
                if best is None or c > counts[best] or (c == counts[best] and j > best_j):
                    best, best_j = key, j
            groups.setdefault(best, []).append(fs[best_j])
        items = []
        for key, rest in groups.items():
            inner = (intern(("leaf", (rest[0],))) if len(rest) == 1 else
                     intern(("sum", tuple(intern(("leaf", (f,))) for f in rest))))
            node = inner
            for f in reversed(key):
                node = intern(("mul", f, node))
            items.append(node)
        return items


def _distribution_plans(ops: list, outputs: list, factors: _Factors) -> dict[int, tuple]:
    """Products with one 2-term sum among their factors, f (a b + c d), to distribute over it.

    Distributed when that lets factors pair with the sum's factors into products that many
    such terms share, e.g. a mass-matrix entry S l_r l_s (sin_r sin_s + cos_r cos_s) =
    S ((l_r sin_r)(l_s sin_s) + (l_r cos_r)(l_s cos_s)): 4 operations instead of 6.
    Returns {operation index: (common factors, [(pairs, left, unpaired) per term])}.
    """
    candidates, pair_count = _distribution_candidates(ops, outputs, factors)
    plans: dict[int, tuple] = {}
    for i, (rest, terms) in candidates.items():
        plan = _distribution_plan(rest, terms, pair_count)
        if plan is not None:
            plans[i] = plan
    return plans


def _distribution_candidates(ops: list, outputs: list, factors: _Factors) -> tuple[dict, dict]:
    """({operation index: (other factors, factors of each of the sum's two terms)},
    {(f, g): how many candidate products have the pair f, g}) for the products with one
    2-term sum among their factors that is used nowhere else."""
    users: dict = {}                     # how many operations (and outputs) use each value
    for _, operands in ops:
        for a in operands:
            if isinstance(a, tuple) and a[0] == "t":
                users[a[1]] = users.get(a[1], 0) + 1
    for ref in outputs:
        if ref[0] == "t":
            users[ref[1]] = users.get(ref[1], 0) + 1
    pair_count: dict = {}
    candidates: dict[int, tuple] = {}
    for i, (kind, operands) in enumerate(ops):
        if kind != "*" or len(operands) < 2:
            continue
        inner = [a for a in operands if factors.is_small_sum(a)]
        # a sum used elsewhere too is computed anyway: nothing to gain
        if len(inner) != 1 or users.get(inner[0][1], 0) != 1:
            continue
        rest = list(operands)
        rest.remove(inner[0])
        terms = [factors.of(d) for d in ops[inner[0][1]][1]]
        candidates[i] = (rest, terms)
        for T in terms:
            for f in set(rest):
                for g in set(T):
                    if f[0] == "c" or g[0] == "c":        # numbers pair with anything
                        continue
                    key = (f, g) if f <= g else (g, f)
                    pair_count[key] = pair_count.get(key, 0) + 1
    return candidates, pair_count


def _distribution_plan(rest: list, terms: list, pair_count: dict) -> tuple | None:
    """The plan distributing ``rest`` over the sum of ``terms`` if it saves operations."""
    paired = [_pairing(rest, T, pair_count) for T in terms]
    if not all(pairs for pairs, _ in paired):
        return None
    used = [[f for f, _ in pairs] for pairs, _ in paired]
    common = list(rest)
    for u in used:                       # factors of rest that no term pairs stay outside
        for f in u:
            if f in common:
                common.remove(f)
    # operations: the shared pair products are counted as free
    cost_new = len(common) + len(terms) - 1 + sum(
        len(pairs) + len(left) + (len(rest) - len(common) - len(u)) - 1
        for (pairs, left), u in zip(paired, used))
    cost_old = len(rest) + len(terms) - 1 + sum(len(T) - 1 for T in terms)
    if cost_new >= cost_old:
        return None
    return (common, [(pairs, left, [f for f in rest if f not in common and f not in u])
                     for (pairs, left), u in zip(paired, used)])


def _pairing(rest: list, T: list, pair_count: dict) -> tuple[list, list]:
    """Greedy pairs (f from rest, g from T) shared by at least PAIR_MIN_SHARED products."""
    rest, T, pairs = list(rest), list(T), []
    while rest and T:
        best, best_c = None, PAIR_MIN_SHARED - 1
        for f in rest:
            for g in T:
                c = pair_count.get((f, g) if f <= g else (g, f), 0)
                if c > best_c:
                    best, best_c = (f, g), c
        if best is None:
            break
        pairs.append(best)
        rest.remove(best[0])
        T.remove(best[1])
    return pairs, T


class _Emitter:
    """Pass 2 of :func:`_binary`: the binary operations ``new``, hash-consed, written in
    one forward pass over the original operations (operands are defined before their
    users); ``memo[i]``: the value of original operation i."""

    __slots__ = ("freq", "trees", "in_sums", "new", "cons", "new_freq", "memo", "emitted")

    def __init__(self, freq: dict, trees: list, in_sums: list[int]):
        self.freq, self.trees, self.in_sums = freq, trees, in_sums
        self.new: list = []
        self.cons: dict = {}
        # how many products each new value is a factor of (orders the factors of products)
        self.new_freq: dict = {ref: c for ref, c in freq.items() if ref[0] != "t"}
        self.memo: dict = {}
        self.emitted: dict[int, tuple] = {}

    def define(self, i: int, kind: str, operands: list, sum_tree: dict, plans: dict) -> None:
        """Write the original operation ``i``."""
        if kind == "*":
            plan = plans.get(i)
            r = (self.distributed(plan) if plan is not None
                 else self.product([self.mapped(a) for a in operands]))
        elif kind == "+":
            r = self.emit_tree(sum_tree[i])
        else:
            r = self.emit(kind, tuple(self.mapped(a) if isinstance(a, tuple) else a
                                      for a in operands))
        self.memo[i] = r
        self.new_freq[r] = self.new_freq.get(r, 0) + self.freq.get(("t", i), 0)

    def emit(self, kind: str, operands: tuple) -> tuple:
        key = (kind, *operands)
        ref = self.cons.get(key)
        if ref is None:
            self.new.append((kind, list(operands)))
            ref = ("t", len(self.new) - 1)
            self.cons[key] = ref
        return ref

    def product(self, factors: list) -> tuple:
        """The factors multiplied pairwise, most frequent first (shared prefixes recur)."""
        new_freq = self.new_freq
        ordered = sorted(factors, key=lambda ref: (-new_freq.get(ref, 0), ref))
        acc = ordered[0]
        for f in ordered[1:]:
            acc = self.emit("*", (acc, f))
        return acc

    def mapped(self, ref: tuple) -> tuple:
        return self.memo[ref[1]] if ref[0] == "t" else ref

    def distributed(self, plan: tuple) -> tuple:
        common, terms = plan
        mapped, product = self.mapped, self.product
        refs = []
        for pairs, left, unpaired in terms:
            factors = [product([mapped(f), mapped(g)]) for f, g in pairs]
            refs.append(product(factors + [mapped(x) for x in left + unpaired]))
        acc = refs[0]
        for r in refs[1:]:
            acc = self.emit("+", (acc, r))
        return product([mapped(f) for f in common] + [acc]) if common else acc

    def emit_tree(self, tid: int) -> tuple:
        ref = self.emitted.get(tid)
        if ref is not None:
            return ref
        node = self.trees[tid]
        if node[0] == "leaf":
            ref = self.product([self.mapped(f) for f in node[1]]) if node[1] else ("c", "1.0")
        elif node[0] == "mul":
            ref = self.product([self.mapped(node[1]), self.emit_tree(node[2])])
        else:
            in_sums = self.in_sums
            order = sorted(node[1], key=lambda c: (-in_sums[c], c))
            ref = self.emit_tree(order[0])
            for c in order[1:]:
                ref = self.emit("+", (ref, self.emit_tree(c)))
        self.emitted[tid] = ref
        return ref


def _live(ops: list, outputs: list, nargs: int) -> StraightLineProgram:
    """Drop the operations no output depends on (products absorbed into collected sums)."""
    live = [False] * len(ops)
    for ref in outputs:
        if ref[0] == "t":
            live[ref[1]] = True
    for i in range(len(ops) - 1, -1, -1):
        if live[i]:
            for a in ops[i][1]:
                if isinstance(a, tuple) and a[0] == "t":
                    live[a[1]] = True
    index: dict = {}
    kept = []
    for i, (kind, operands) in enumerate(ops):
        if live[i]:
            index[i] = len(kept)
            kept.append((kind, [("t", index[a[1]]) if isinstance(a, tuple) and a[0] == "t" else a
                                for a in operands]))
    outs = [("t", index[r[1]]) if r[0] == "t" else r for r in outputs]
    return StraightLineProgram(kept, outs, nargs)


# ----------------------------------------------------------------------- C source
def _c_op(kind: str, operands: list, name: Callable[[tuple], str]) -> str:
    if kind == "+":
        return " + ".join(name(a) for a in operands)
    if kind == "*":
        return "*".join(name(a) for a in operands)
    if kind == "pow":
        b, k = name(operands[0]), operands[1]
        if k == 0:
            return "1.0"
        mag = abs(k)
        if mag <= 4:
            prod = "*".join([b] * mag)
        else:
            prod = f"pow({b}, {float(mag)!r})"
        return prod if k > 0 else f"1.0/({prod})"
    if kind == "sqrt":
        return f"sqrt({name(operands[0])})"
    if kind == "isqrt":
        return f"1.0/sqrt({name(operands[0])})"
    if kind == "cpow":
        return f"pow({name(operands[0])}, {name(operands[1])})"
    if kind in _COMPARE:
        return f"(double)({name(operands[0])} {_COMPARE[kind]} {name(operands[1])})"
    if kind in ("and", "or"):
        op = " && " if kind == "and" else " || "
        return "(double)(" + op.join(f"({name(a)} != 0.0)" for a in operands) + ")"
    if kind == "not":
        return f"(double)({name(operands[0])} == 0.0)"
    if kind == "sign":
        x = name(operands[0])
        return f"(double)(({x} > 0.0) - ({x} < 0.0))"
    if kind in ("max", "min"):
        acc = name(operands[0])
        for a in operands[1:]:
            acc = f"f{kind}({acc}, {name(a)})"
        return acc
    if kind == "piecewise":   # (e1, c1, e2, c2, ...): the first true condition's value
        text = "NAN"
        for k in range(len(operands) - 2, -1, -2):
            text = f"({name(operands[k + 1])} != 0.0 ? {name(operands[k])} : {text})"
        return text
    return f"{kind}({', '.join(name(a) for a in operands)})"


#: Outputs that are a literal or an argument (the zeros of a sparse matrix, mostly) beyond
#: this many are written by a loop over a static table rather than one statement each: the
#: augmented system of A02 (161 x 161, 26 000 zeros) took gcc 8.7 s as statements.
TABLE_MIN_OUTPUTS = 32


def _copied_outputs(outputs: list) -> list[str]:
    """C statements storing the outputs that are literals or arguments (not temporaries):
    one statement each when few, else runs of equal literals as ``for`` loops over a table
    of output indices and the argument copies as a loop over (output, argument) pairs."""
    literals: dict[str, list[int]] = {}
    copies: list[tuple[int, int]] = []
    for j, ref in enumerate(outputs):
        if ref[0] == "z":
            copies.append((j, ref[1]))
        elif ref[0] == "c":
            literals.setdefault(ref[1], []).append(j)
    lines = []
    if sum(map(len, literals.values())) + len(copies) < TABLE_MIN_OUTPUTS:
        for text, js in literals.items():
            lines.extend(f"  out[{j}] = {text};" for j in js)
        lines.extend(f"  out[{j}] = z[{k}];" for j, k in copies)
        return lines
    for text, js in literals.items():
        table = ",".join(map(str, js))
        lines.append(f"  {{ static const long idx[{len(js)}] = {{{table}}};\n"
                     f"    for (long i = 0; i < {len(js)}; ++i) out[idx[i]] = {text}; }}")
    if copies:
        table = ",".join(f"{j},{k}" for j, k in copies)
        lines.append(f"  {{ static const long idx[{2 * len(copies)}] = {{{table}}};\n"
                     f"    for (long i = 0; i < {len(copies)}; ++i) out[idx[2 * i]] = z[idx[2 * i + 1]]; }}")
    return lines


def c_source(program: StraightLineProgram, fname: str, segment_size: int | None = None,
             many: bool = True) -> list[str]:
    """C translation units for ``program``: segment functions, then the entry points.

    Returns a list of sources; the last one holds ``fname`` and ``fname_many`` (``many``
    False: ``fname`` alone, :mod:`.c_lanes` writing ``fname_many``).
    Each segment stores the outputs it computes straight into ``out``; temporaries used
    by a later segment are kept in a workspace array ``w``, the rest are local
    ``const double`` values.
    """
    ops, nargs = program.ops, program.nargs
    segment_size = SEGMENT_SIZE if segment_size is None else int(segment_size)
    nseg = max(1, -(-len(ops) // segment_size))
    seg_of = [i // segment_size for i in range(len(ops))]
    # temporaries needed outside their segment go to the workspace
    shared: dict[int, int] = {}
    for i, (_, operands) in enumerate(ops):
        for a in operands:
            if isinstance(a, tuple) and a[0] == "t" and a[1] not in shared and seg_of[a[1]] != seg_of[i]:
                shared[a[1]] = len(shared)
    stores: dict[int, list[int]] = {}          # temporary -> the outputs that take its value
    for j, ref in enumerate(program.outputs):
        if ref[0] == "t":
            stores.setdefault(ref[1], []).append(j)
    header = "#include <math.h>\n#ifndef M_PI\n#define M_PI 3.14159265358979323846\n#endif\n" \
             "#ifndef M_E\n#define M_E 2.7182818284590452354\n#endif\n"
    signature = "(const double *restrict z, double *restrict w, double *restrict out)"
    sources = []
    for s in range(nseg):
        lo, hi = s * segment_size, min(len(ops), (s + 1) * segment_size)

        def name(ref, s=s):
            if ref[0] == "z":
                return f"z[{ref[1]}]"
            if ref[0] == "c":
                return ref[1]
            i = ref[1]
            if i in shared and seg_of[i] != s:
                return f"w[{shared[i]}]"
            return f"t{i}"

        lines = [header, f"void {fname}_s{s}{signature} {{"]
        for i in range(lo, hi):
            kind, operands = ops[i]
            lines.append(f"  const double t{i} = {_c_op(kind, operands, name)};")
            if i in shared:
                lines.append(f"  w[{shared[i]}] = t{i};")
            for j in stores.get(i, ()):
                lines.append(f"  out[{j}] = t{i};")
        lines.append("}\n")
        sources.append("\n".join(lines))
    nw = max(1, len(shared))
    decls = "\n".join(f"void {fname}_s{s}{signature};" for s in range(nseg))
    outs = _copied_outputs(program.outputs)
    calls = "\n".join(f"  {fname}_s{s}(z, w, out);" for s in range(nseg))
    stack_limit = 4096   # doubles: a workspace up to 32 kB lives on the stack
    alloc = (f"  double w[{nw}];" if nw <= stack_limit else
             f"  double *w = (double *)malloc({nw} * sizeof(double));\n  if (!w) return;")
    free = "" if nw <= stack_limit else "  free(w);"
    main = f"""{header}#include <stdlib.h>
{decls}

void {fname}(const double *restrict z, double *restrict out) {{
{alloc}
{calls}
{chr(10).join(outs)}
{free}
}}

""" + (f"""
void {fname}_many(const double *Z, double *OUT, long count) {{
  for (long i = 0; i < count; ++i) {fname}(Z + i * {nargs}, OUT + i * {len(program.outputs)});
}}
""" if many else "")
    sources.append(main)
    return sources


# ----------------------------------------------------------------------- compiling
@functools.cache
def compiler_available() -> str | None:
    """The C compiler command (``$CC``, ``cc`` or ``gcc``) if it builds a shared library."""
    candidates = [os.environ.get("CC", "").strip(), "cc", "gcc", "clang"]
    for cc in candidates:
        if not cc or shutil.which(cc.split()[0]) is None:
            continue
        try:
            with tempfile.TemporaryDirectory() as tmp:
                src = Path(tmp, "probe.c")
                src.write_text("double probe(double x) { return 2.0 * x; }\n")
                lib = Path(tmp, "probe.so")
                r = subprocess.run([*cc.split(), "-shared", "-fPIC", "-O1", str(src), "-o", str(lib)],
                                   capture_output=True, timeout=60)
                if r.returncode != 0:
                    continue
                f = ctypes.CDLL(str(lib)).probe
                f.restype, f.argtypes = ctypes.c_double, [ctypes.c_double]
                if f(1.5) == 3.0:
                    return cc
        except Exception:
            continue
    return None


#: Translation units up to this many (one segment and the entry points) are compiled and
#: linked by one compiler run: a small kernel's build is one process, not three.
SINGLE_UNIT_MAX = 2

@functools.cache
def accepted_flags(cc: str, opt: str) -> str:
    """``opt`` when the compiler ``cc`` takes it, else only its ``-O`` level: the passes
    :data:`OPT_FLAGS` switches off are gcc's, and clang refuses the options that name them
    (``CC=clang`` then builds at ``-O1`` alone)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "probe.c")
        src.write_text("double probe(double x) { return 2.0 * x; }\n")
        r = subprocess.run([*cc.split(), *opt.split(), "-fPIC", "-c", str(src), "-o",
                            str(Path(tmp, "probe.o"))], capture_output=True, timeout=60)
    if r.returncode == 0:
        return opt
    return " ".join(f for f in opt.split() if f.startswith("-O"))


def build_library(sources: list[str], out_path: Path, jobs: int | None = None,
                  opt: str = OPT_FLAGS, on_unit_done: Callable[[int, int], None] | None = None) -> None:
    """Compile ``sources`` (translation units) in parallel and link ``out_path`` (a .so).

    ``-O1`` (see :data:`OPT_FLAGS`): straight-line code gains little from higher
    levels (the operations are already shared), while the compile time grows
    (-O2 took 2.5x longer and ran no faster on the 40-link chain).  Raises
    RuntimeError with the compiler's message on failure.
    """
    cc = compiler_available()
    if cc is None:
        raise RuntimeError("no working C compiler")
    jobs = jobs or max(1, min(len(sources), os.cpu_count() or 1))
    flags = [*accepted_flags(cc, opt).split(), "-fPIC", "-fno-math-errno", "-w"]
    with tempfile.TemporaryDirectory(prefix="symbody-cc-") as tmp:
        tmp_lib = Path(tmp, "kernel.so")
        if len(sources) <= SINGLE_UNIT_MAX:
            # one segment and its entry points: one compiler run compiles and links
            c = Path(tmp, "u.c")
            c.write_text("\n".join(sources))
            r = subprocess.run([*cc.split(), *flags, "-shared", str(c), "-o", str(tmp_lib), "-lm"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"compiling the generated kernel failed: {r.stderr[:2000]}")
            if on_unit_done:
                on_unit_done(len(sources), len(sources))
            install_library(tmp_lib, out_path)
            return
        objs, running, done = [], [], 0
        for i, text in enumerate(sources):
            c = Path(tmp, f"u{i}.c")
            c.write_text(text)
            o = Path(tmp, f"u{i}.o")
            objs.append(str(o))
            while len(running) >= jobs:
                done += _wait_one(running)
                if on_unit_done:
                    on_unit_done(done, len(sources))
            running.append(subprocess.Popen([*cc.split(), *flags, "-c", str(c), "-o", str(o)],
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        while running:
            done += _wait_one(running)
            if on_unit_done:
                on_unit_done(done, len(sources))
        r = subprocess.run([*cc.split(), "-shared", *objs, "-o", str(tmp_lib), "-lm"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"linking the generated kernel failed: {r.stderr[:2000]}")
        install_library(tmp_lib, out_path)


def install_library(built: Path, out_path: Path) -> None:
    """Copy the library ``built`` to ``out_path`` atomically (a staged copy, then a rename)."""
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fd, staged = tempfile.mkstemp(dir=out_path.parent, prefix=".tmp-", suffix=".so")
    os.close(fd)
    shutil.copyfile(built, staged)
    os.replace(staged, out_path)


def _wait_one(running: list) -> int:
    proc = running.pop(0)
    _, err = proc.communicate()
    if proc.returncode != 0:
        for p in running:
            p.kill()
        raise RuntimeError(f"compiling the generated kernel failed: {err.decode(errors='replace')[:2000]}")
    return 1


def load_library(path: Path, fname: str) -> tuple[ctypes.CDLL, Callable, Callable]:
    """(single, many) ctypes functions of the library at ``path``."""
    lib = ctypes.CDLL(str(path))
    single = getattr(lib, fname)
    single.restype = None
    single.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    many = getattr(lib, fname + "_many")
    many.restype = None
    many.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long]
    return lib, single, many
