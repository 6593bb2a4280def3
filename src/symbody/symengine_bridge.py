"""The bridge between SymPy and symengine: conversion of expressions and of functions of time.

SymPy expressions (what users and sympy.physics.mechanics build) are converted to symengine
for the heavy work (derivatives, common subexpressions, code generation) and back.  This is
the one place for both directions:

- :func:`fold_dag`: the walk every conversion shares: a post-order pass over expression
  DAGs that visits each distinct node once (SymPy's trees share subtrees heavily).
- :func:`to_symengine`: SymPy -> symengine, visiting each shared subexpression once
  (code generation folds the same walk with its own leaves and structural digests:
  ``compilation/expression_conversion.py``; Lagrange's method with its symbol table).
- :class:`SympyConverter`: symengine -> SymPy, rebuilding sums and products in SymPy's
  canonical order without re-flattening them.
- :class:`SymbolTable`: functions of time q(t), u(t) and their derivatives as plain
  symengine symbols, and the way back to SymPy.

This module imports nothing from symbody's layers (only its exceptions), so the
formulation and compilation layers both use it; symengine is imported on first use.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import sympy as sm
from sympy.core.basic import Basic, ordering_of_classes
from sympy.core.function import AppliedUndef

from ._lazy_modules import lazy_module
from .compat.sympy import TIME, add_from_args, add_sort, hashable_content, mul_from_args, mul_sort
from .errors import FormulationError

se = lazy_module("symengine")        # imported when first used (import time)

__all__ = ["fold_dag", "DESCEND", "to_symengine", "symengine_node", "converts_node_by_node",
           "SympyConverter",
           "StructuredSympyConverter", "SymbolTable"]

t = TIME

_SE_FUNCTION_NAMES = (
    "sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "acot", "asec", "acsc",
    "sinh", "cosh", "tanh", "coth", "sech", "csch", "asinh", "acosh", "atanh", "acoth", "asech",
    "acsch", "exp", "log", "Abs", "sign", "atan2", "floor", "ceiling", "gamma", "erf", "erfc")


@functools.cache
def _se_functions() -> dict:
    return {name: getattr(se, name) for name in _SE_FUNCTION_NAMES if hasattr(se, name)}


@functools.cache
def _se_structured() -> dict:
    """SymPy class name -> symengine constructor of the nodes that hold conditions (a contact's
    force is a Piecewise): converted node by node, so that the functions of time inside them
    are replaced like everywhere else."""
    return {"StrictLessThan": se.Lt, "LessThan": se.Le, "StrictGreaterThan": se.Gt,
            "GreaterThan": se.Ge, "Equality": se.Eq, "Unequality": se.Ne, "And": se.And,
            "Or": se.Or, "Not": se.Not, "Max": se.Max, "Min": se.Min,
            "ExprCondPair": lambda expr, cond: (expr, cond),
            "Piecewise": lambda *pairs: se.Piecewise(*pairs)}


#: returned by a ``visit`` of :func:`fold_dag`: "not a leaf, combine the arguments' values"
DESCEND = object()


def fold_dag(roots: Iterable, visit: Callable[[Any], Any], combine: Callable[[Any, list], Any],
             memo: dict | None = None) -> list:
    """The value of each root of expression DAGs, computed bottom-up, each distinct node once.

    ``visit(node)`` gives a node's value, or :data:`DESCEND` for a node whose value is
    ``combine(node, [values of node.args])`` (arguments left to right); nodes are told
    apart by identity (SymPy shares equal subtrees), and ``memo`` (id -> (node, value),
    updated; the node is kept so that its id stays its own) carries the values over
    between calls.  Expression trees of equations of motion are DAGs with massive sharing
    (the bicycle's dynamic block: ~1,200 distinct nodes, a ~53,000-node tree), so this is
    one to two orders of magnitude faster than a walk of the tree.  Recursive (the
    fastest walk in Python); an expression nested deeper than the recursion limit is
    walked again with an explicit stack.
    """
    memo = {} if memo is None else memo
    recall = memo.get

    def value(node):
        key = id(node)
        got = recall(key)
        if got is not None:
            return got[1]
        v = visit(node)
        if v is DESCEND:
            v = combine(node, [value(a) for a in node.args])
        memo[key] = (node, v)
        return v

    out = []
    for root in roots:
        try:
            out.append(value(root))
        except RecursionError:
            out.append(_fold_iteratively(root, visit, combine, memo))
    return out


def _fold_iteratively(root, visit, combine, memo: dict):
    """:func:`fold_dag` of one root with an explicit stack (for very deep expressions)."""
    stack = [(root, False)]
    while stack:
        node, ready = stack.pop()
        key = id(node)
        if key in memo:
            continue
        if ready:
            memo[key] = (node, combine(node, [memo[id(a)][1] for a in node.args]))
            continue
        v = visit(node)
        if v is not DESCEND:
            memo[key] = (node, v)
            continue
        stack.append((node, True))
        for a in node.args[::-1]:            # popped first to last: left-to-right order
            if id(a) not in memo:
                stack.append((a, False))
    return memo[id(root)][1]


def to_symengine(exprs: Sequence, leaf: Callable | None = None) -> list:
    """Convert sympy expressions to symengine, visiting each shared subexpression once.

    ``symengine.sympify`` walks the expression *tree*; the equations of motion
    are DAGs with massive sharing (the bicycle's dynamic block has ~1,200
    distinct nodes but a ~53,000-node tree), so this memoized conversion is
    one to two orders of magnitude faster.  Functions of time and their
    derivatives become symengine FunctionSymbol / Derivative objects, or what
    ``leaf(node)`` returns for them when given (e.g. a plain symbol); anything
    without a direct symengine counterpart is converted by ``symengine.sympify``
    as a whole.
    """
    se_functions = _se_functions()
    structured = _se_structured()

    def visit(node):
        if node.is_Add or node.is_Mul or node.is_Pow:       # most nodes
            return DESCEND
        if leaf is not None and (node.is_Symbol or isinstance(node, (AppliedUndef, sm.Derivative))):
            got = leaf(node)
            if got is not None:
                return got
        if node.args and not isinstance(node, (AppliedUndef, sm.Derivative)) and (
                type(node).__name__ in se_functions or type(node).__name__ in structured):
            return DESCEND
        try:
            return se.sympify(node)
        except (RuntimeError, NotImplementedError, TypeError, ValueError, AttributeError,
                se.SympifyError) as exc:
            raise FormulationError(f"symengine cannot represent {node}: {exc}") from exc

    return fold_dag([sm.sympify(e) for e in exprs], visit, symengine_node)


def converts_node_by_node(node: sm.Basic) -> bool:
    """Whether :func:`symengine_node` builds the symengine counterpart of ``node`` (a
    function application or a Piecewise, relation or boolean) from its converted arguments."""
    name = type(node).__name__
    return (bool(node.args) and not isinstance(node, (AppliedUndef, sm.Derivative))
            and (name in _se_functions() or name in _se_structured()))


def symengine_node(node: sm.Basic, args: list) -> se.Basic:
    """The symengine counterpart of the SymPy node ``node`` (a sum, product, power or one of
    the elementary functions symengine has) over the converted arguments ``args``."""
    if node.is_Add:
        return se.Add(*args)
    if node.is_Mul:
        return se.Mul(*args)
    if node.is_Pow:
        return se.Pow(args[0], args[1])
    name = type(node).__name__
    structured = _se_structured().get(name)
    if structured is not None:
        return structured(*args)
    return _se_functions()[name](*args)


# --------------------------------------------------------------------------- symengine -> sympy

_UNKNOWN = len(ordering_of_classes) + 1
_CLASS_INDEX = {name: i for i, name in enumerate(ordering_of_classes)}


def _class_key(cls) -> tuple:
    name = cls.__name__
    i = _CLASS_INDEX.get(name, _UNKNOWN)
    return (i, name if i == _UNKNOWN else "")


class CanonicalKey:
    """A sort key equivalent to ``Basic.compare`` (sympy's canonical argument order).

    Keys are nested tuples computed once per node, so sorting runs at C speed.
    """

    def __init__(self):
        self.memo: dict = {}

    def __call__(self, e):
        memo = self.memo
        k = memo.get(e)
        if k is None:
            hc = hashable_content(e)
            items = []
            for x in hc:
                if isinstance(x, Basic):
                    items.append(self(x))
                elif isinstance(x, frozenset):
                    items.append(self(Basic(*x)))
                else:
                    items.append(x)
            k = (_class_key(type(e)), len(hc), tuple(items))
            memo[e] = k
        return k


def _canonical_sort(args: list, key: CanonicalKey, fallback) -> None:
    try:
        args.sort(key=key)
    except TypeError:
        fallback(args)

_FUNCS = {
    "sin": sm.sin, "cos": sm.cos, "tan": sm.tan, "cot": sm.cot, "sec": sm.sec, "csc": sm.csc,
    "asin": sm.asin, "acos": sm.acos, "atan": sm.atan, "atan2": sm.atan2, "sinh": sm.sinh,
    "cosh": sm.cosh, "tanh": sm.tanh, "log": sm.log, "Abs": sm.Abs, "sign": sm.sign,
}

#: nodes rebuilt from their converted arguments (symengine's Piecewise lists its pieces flat:
#: expr, cond, expr, cond, ...)
_NODES = {
    "Piecewise": lambda a: sm.Piecewise(*zip(a[0::2], a[1::2])),
    "StrictLessThan": lambda a: sm.StrictLessThan(*a), "LessThan": lambda a: sm.LessThan(*a),
    "Equality": lambda a: sm.Eq(*a), "Unequality": lambda a: sm.Ne(*a),
    "And": lambda a: sm.And(*a), "Or": lambda a: sm.Or(*a), "Not": lambda a: sm.Not(*a),
    "Max": lambda a: sm.Max(*a), "Min": lambda a: sm.Min(*a),
}


class SympyConverter:
    """Convert symengine expressions to sympy, memoized on shared subexpressions.

    Add and Mul nodes are rebuilt from their (already canonical) arguments,
    sorted the way sympy sorts them, so the result is the expression sympy
    itself would build, at a fraction of the cost of re-flattening.
    """

    def __init__(self, names: dict):
        self.names = names          # symbol name -> sympy atom (dynamicsymbols, original Symbols)
        self.cache: dict = {}
        self.key = CanonicalKey()
        # True while every symbol converted so far is commutative: sums and products
        # then skip SymPy's commutativity check (a node is converted after its symbols)
        self.commutative = True

    def __call__(self, e):
        cache = self.cache
        r = cache.get(e)
        if r is not None:
            return r
        r = self._convert(e)
        cache[e] = r
        return r

    def _convert(self, e):
        if isinstance(e, se.Symbol):
            name = str(e)
            got = self.names.get(name)
            got = got if got is not None else sm.Symbol(name)
            if got.is_commutative is not True:
                self.commutative = False
            return got
        if isinstance(e, se.Add):
            args = [self(a) for a in e.args]
            if any(a.is_Add for a in args):
                return sm.Add(*args)
            _canonical_sort(args, self.key, add_sort)
            return add_from_args(args, True if self.commutative else None)
        if isinstance(e, se.Mul):
            args = [self(a) for a in e.args]
            nums = [a for a in args if a.is_Number]
            if any(a.is_Mul for a in args):
                return sm.Mul(*args)
            if nums and any(a.is_Add for a in args):
                if len(nums) == 1 and len(args) > 2 and nums[0].is_Rational and nums[0] is not sm.S.One:
                    # c*x*(a + b): sympy keeps the rational coefficient first and distributes
                    # it only over a lone Add (2 arguments), so the rest is just sorted
                    rest = [a for a in args if not a.is_Number]
                    _canonical_sort(rest, self.key, mul_sort)
                    return mul_from_args([nums[0]] + rest, True if self.commutative else None)
                return sm.Mul(*args)
            if len(nums) > 1 or (nums and nums[0] is sm.S.One):
                return sm.Mul(*args)
            _canonical_sort(args, self.key, mul_sort)
            return mul_from_args(args, True if self.commutative else None)
        if isinstance(e, se.Pow):
            b, x = e.args
            bs = self(b)
            if bs.is_Add:
                return sm.Pow(bs, self(x), evaluate=False)
            return sm.Pow(bs, self(x))
        if isinstance(e, se.Number) or e.is_Number:
            return e._sympy_()
        name = type(e).__name__
        f = _FUNCS.get(name)
        if f is not None:
            return f(*[self(a) for a in e.args])
        f = _NODES.get(name)
        if f is not None:      # (their arguments memoized too: shared subtrees once)
            return f([self(a) for a in e.args])
        out = e._sympy_()
        if out.free_symbols:
            out = out.xreplace({s: self.names[s.name] for s in out.free_symbols if s.name in self.names})
        return out

    def matrix(self, rows: Sequence[Sequence]) -> sm.Matrix:
        if not rows:
            return sm.Matrix(0, 0, [])
        return sm.Matrix([[self(e) for e in row] for row in rows])


_RELATIONS = {"StrictLessThan": "StrictLessThan", "LessThan": "LessThan", "Equality": "Equality",
              "Unequality": "Unequality"}


class StructuredSympyConverter(SympyConverter):
    """:class:`SympyConverter` that rebuilds Max/Min, Piecewise, relations and And/Or node by
    node, unevaluated (SymPy's evaluation of them over long expressions in functions of time
    is slow: a muscle's fiber-velocity law, a few thousand nodes, takes minutes); equal
    results are one object, so that later memoized walks meet each once."""

    def __init__(self, names: dict):
        super().__init__(names)
        self.interned: dict = {}

    def __call__(self, e):
        r = self.cache.get(e)
        if r is None:
            r = self._convert(e)
            r = self.cache[e] = self.interned.setdefault(r, r)
        return r

    def _convert(self, e):
        from sympy.functions.elementary.piecewise import ExprCondPair

        kind = type(e).__name__
        if kind in ("Max", "Min", "And", "Or"):
            return getattr(sm, kind)(*[self(x) for x in e.args], evaluate=False)
        if kind == "Piecewise":
            x = e.args
            pairs = [Basic.__new__(ExprCondPair, self(x[i]), self(x[i + 1]))
                     for i in range(0, len(x), 2)]
            return Basic.__new__(sm.Piecewise, *pairs)
        if kind in _RELATIONS:
            return getattr(sm, kind)(*[self(x) for x in e.args], evaluate=False)
        if kind == "BooleanTrue":
            return sm.true
        if kind == "BooleanFalse":
            return sm.false
        return super()._convert(e)


# --------------------------------------------------------------------------- symbols
class SymbolTable:
    """Maps functions of time (and their derivatives) to plain symengine symbols and back.

    sympy expressions are converted to symengine as they are (symengine knows
    ``f(t)`` and ``Derivative(f(t), t)``) and every such atom is then replaced by
    a plain symbol inside symengine, derivatives as a whole.  ``alias`` sends an
    atom to the symbol of another (Lagrange's q' -> u).
    """

    _counter = 0

    def __init__(self) -> None:
        self.se_of: dict = {}      # sympy atom -> se stand-in Symbol
        self._back: dict = {}      # stand-in -> symengine form of the atom (functions of time)
        self._back_sm: dict = {}   # sympy stand-in -> sympy atom (Dummies, symbols with assumptions)

    def _new_symbol(self) -> se.Symbol:
        SymbolTable._counter += 1
        return se.Symbol(f"_sb_lin{SymbolTable._counter}")

    def add(self, atom: sm.Basic) -> se.Symbol:
        got = self.se_of.get(atom)
        if got is not None:
            return got
        sym = self._new_symbol()
        self.se_of[atom] = sym
        back = None
        if not atom.is_Symbol:
            try:
                back = se.sympify(atom)
                if back._sympy_() != atom:
                    back = None
            except (RuntimeError, NotImplementedError, TypeError, ValueError, AttributeError,
                    se.SympifyError):
                back = None
        if back is not None:
            self._back[sym] = back
        else:
            self._back_sm[sm.Symbol(sym.name)] = atom
        return sym

    def alias(self, atom: sm.Basic, other_atom: sm.Basic) -> None:
        self.se_of[atom] = self.add(other_atom)

    def to_se(self, expr: sm.Basic) -> se.Basic:
        return self.to_se_many([expr])[0]

    def to_se_many(self, exprs: Sequence) -> list:
        """Convert sympy expressions (one shared memo), functions of time -> plain symbols."""
        return to_symengine(exprs, self._leaf)

    def _leaf(self, node):
        got = self.se_of.get(node)
        if got is not None:
            return got
        if node.is_Symbol:
            # plain symbols convert as they are; symbols with assumptions and Dummies get a
            # stand-in so that they come back unchanged
            if type(node) is sm.Symbol and node == sm.Symbol(node.name):
                return None
            return self.add(node)
        if isinstance(node, AppliedUndef) and node.args != (t,):
            return None
        if isinstance(node, sm.Derivative) and set(node.variables) != {t}:
            return None
        return self.add(node)

    def atoms_in(self, exprs: Iterable) -> set:
        """The sympy functions of time (and derivatives) that converted expressions contain."""
        found: set = set()
        for e in exprs:
            if isinstance(e, se.Basic) and not e.is_Number:
                found |= {s for s in e.free_symbols
                          if s in self._back or (self._back_sm and sm.Symbol(s.name) in self._back_sm)}
        atoms = {self._back[s]._sympy_() if s in self._back else self._back_sm[sm.Symbol(s.name)]
                 for s in found}
        return {a for a in atoms if not a.is_Symbol}

    def matrix(self, M: sm.MatrixBase | Sequence) -> list[list]:
        M = sm.Matrix(M) if not isinstance(M, sm.MatrixBase) else M
        flat = self.to_se_many(list(M))
        return [flat[i * M.cols:(i + 1) * M.cols] for i in range(M.rows)]

    def column(self, M: sm.MatrixBase | Sequence) -> list:
        M = sm.Matrix(M) if not isinstance(M, sm.MatrixBase) else M
        return self.to_se_many(list(M))

    def matrices(self, mats: Sequence) -> list[list[list]]:
        """Convert several matrices with one shared memo (they share subexpressions)."""
        mats = [sm.Matrix(M) if not isinstance(M, sm.MatrixBase) else M for M in mats]
        flat = self.to_se_many([e for M in mats for e in M])
        out, pos = [], 0
        for M in mats:
            out.append([flat[pos + i * M.cols: pos + (i + 1) * M.cols] for i in range(M.rows)])
            pos += M.rows * M.cols
        return out

    def to_sympy(self, e: se.Basic | float) -> sm.Expr:
        if not isinstance(e, se.Basic):
            return sm.sympify(e)
        if e.is_Number:
            return e._sympy_()
        out = e.xreplace(self._back)._sympy_()
        if self._back_sm and any(s in self._back_sm for s in out.free_symbols):
            out = out.xreplace(self._back_sm)
        return out

    def to_sympy_matrix(self, rows: list[list], shape: tuple[int, int]) -> sm.Matrix:
        if shape[0] == 0 or shape[1] == 0:
            return sm.zeros(*shape)
        return sm.Matrix(shape[0], shape[1], [self.to_sympy(e) for row in rows for e in row])
