"""The bridge between SymPy and symengine: conversion of expressions and of functions of time.

SymPy expressions (what users and sympy.physics.mechanics build) are converted to symengine
for the heavy work (derivatives, common subexpressions, code generation) and back.

- :func:`to_symengine`: convert expressions, visiting each shared subexpression once.
- :class:`SymbolTable`: functions of time q(t), u(t) and their derivatives as plain
  symengine symbols, and the way back to SymPy.

This module imports nothing from symbody's layers (only its exceptions), so the
formulation and compilation layers both use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import symengine as se
import sympy as sm
from sympy.core.function import AppliedUndef
from sympy.physics.vector import dynamicsymbols

from .errors import FormulationError

__all__ = ["to_symengine", "SymbolTable"]

t = dynamicsymbols._t

_SE_FUNCTIONS = {name: getattr(se, name) for name in (
    "sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "acot", "asec", "acsc",
    "sinh", "cosh", "tanh", "coth", "sech", "csch", "asinh", "acosh", "atanh", "acoth", "asech",
    "acsch", "exp", "log", "Abs", "sign", "atan2", "floor", "ceiling", "gamma", "erf", "erfc")
    if hasattr(se, name)}


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
    memo: dict[int, tuple] = {}        # id(sympy node) -> (node, symengine object)
    out = []
    for root in exprs:
        root = sm.sympify(root)
        stack = [(root, False)]
        while stack:
            node, ready = stack.pop()
            key = id(node)
            if key in memo:
                continue
            if ready:
                args = [memo[id(a)][1] for a in node.args]
                memo[key] = (node, _build_se(node, args))
                continue
            if leaf is not None and (node.is_Symbol or isinstance(node, (AppliedUndef, sm.Derivative))):
                got = leaf(node)
                if got is not None:
                    memo[key] = (node, got)
                    continue
            if not node.args or isinstance(node, (AppliedUndef, sm.Derivative)) or not (
                    node.is_Add or node.is_Mul or node.is_Pow
                    or type(node).__name__ in _SE_FUNCTIONS):
                try:
                    memo[key] = (node, se.sympify(node))
                except (RuntimeError, NotImplementedError, TypeError, ValueError, AttributeError,
                        se.SympifyError) as exc:
                    raise FormulationError(f"symengine cannot represent {node}: {exc}") from exc
                continue
            stack.append((node, True))
            for a in node.args:
                if id(a) not in memo:
                    stack.append((a, False))
        out.append(memo[id(root)][1])
    return out


def _build_se(node, args):
    if node.is_Add:
        return se.Add(*args)
    if node.is_Mul:
        return se.Mul(*args)
    if node.is_Pow:
        return se.Pow(args[0], args[1])
    return _SE_FUNCTIONS[type(node).__name__](*args)


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
