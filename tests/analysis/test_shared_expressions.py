"""Expressions that share their subexpressions (DAGs) are walked once per node.

The contact conditions of a loaded gait model (ToyLandingModel: 27 coordinates, a platform,
contact spheres) share their subexpressions so deeply that SymPy's ``free_symbols``, ``atoms``
and ``has`` -- which walk an expression as a tree -- took minutes before the first step of
``simulate`` (and its 70 reflex controls another 172 s).  Here a chain x_k = x_(k-1) + x_(k-1) x_(k-1) y of 40 links has ~3^40 tree nodes
and ~80 distinct ones: SymPy's ``free_symbols`` takes 1.2 s at 12 links and 12.7 s at 14 (x10
a link); a tree walk would not finish."""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from symbody.analysis.expression_atoms import expression_atoms as _condition_atoms
from symbody.compilation.codegen import _has_heaviside


def _chain(depth: int = 40):
    q = me.dynamicsymbols("q")
    y, c = sm.symbols("y c")
    x = q
    for _ in range(depth):
        x = sm.Add(x, sm.Mul(x, x, y, evaluate=False), evaluate=False)
    return x - c, q, y, c


def test_event_condition_atoms_on_a_shared_chain():
    expr, q, y, c = _chain()
    atoms, derivatives = _condition_atoms(expr)
    assert atoms == {q, y, c, me.dynamicsymbols._t} and not derivatives
    small = q.diff() * y - sm.Piecewise((q, q > c), (y, True))        # (same as SymPy's walk)
    assert _condition_atoms(small) == (
        frozenset(small.free_symbols | small.atoms(sm.core.function.AppliedUndef)),
        frozenset(small.atoms(sm.Derivative)))


def test_heaviside_search_on_a_shared_chain():
    expr, q, y, c = _chain()
    assert not _has_heaviside(expr)
    assert _has_heaviside(expr + sm.Heaviside(q - c))
    assert _has_heaviside(sm.Heaviside(q))
