"""The one SymPy <-> symengine bridge (symbody.symengine_bridge): the shared DAG walk, both
directions of conversion, and very deep expressions (the walk falls back to a stack)."""

from __future__ import annotations

import symengine as se
import sympy as sm
from sympy.physics.vector import dynamicsymbols

from symbody.formulation._display import tree_size
from symbody.symengine_bridge import DESCEND, SympyConverter, fold_dag, to_symengine


def test_round_trip_and_sharing():
    q1, q2 = dynamicsymbols("q1 q2")
    a, b = sm.symbols("a b")
    shared = sm.sin(q1) * a + sm.cos(q2) ** 2
    exprs = [shared * b + shared ** 2, sm.atan2(q1, q2) - sm.exp(shared), sm.Rational(3, 7) * a]
    stand_in = {q1: se.Symbol("x1"), q2: se.Symbol("x2")}
    converted = to_symengine(exprs, leaf=lambda node: stand_in.get(node))
    back = SympyConverter({"x1": q1, "x2": q2, "a": a, "b": b})
    for e, c in zip(exprs, converted):
        assert sm.simplify(back(c) - e) == 0
    # each distinct node visited once: the shared subexpression is converted once
    visits: list = []
    fold_dag(exprs, lambda n: visits.append(n) or (1 if not n.args else DESCEND),
             lambda n, values: 1 + sum(values))
    assert visits.count(shared) == 1


class Node:
    """A bare expression node (fold_dag needs only ``args``)."""

    def __init__(self, *args):
        self.args = args


def test_deep_expressions_and_tree_size():
    deep = Node()
    for _ in range(5000):                 # deeper than Python's recursion limit (1000)
        deep = Node(deep)
    depth = fold_dag([deep], lambda n: 0 if not n.args else DESCEND, lambda n, values: 1 + values[0])
    assert depth == [5000]
    assert tree_size([deep]) == 5001
    x = sm.Symbol("x")
    assert tree_size([(x + 1) ** 2 + (x + 1) ** 3]) == 11   # shared (x + 1) counted at each use


def test_piecewise_and_conditions_convert_node_by_node():
    """A Piecewise with conditions (a contact force) converts with the functions of time inside
    it replaced by the leaf's symbols, like everywhere else."""
    h, v = dynamicsymbols("h v")
    k = sm.Symbol("k")
    force = sm.Piecewise((k * (-h) ** 1.5 * (1 - v), sm.And(h < 0, v < 1)), (0, True))
    stand_in = {h: se.Symbol("H"), v: se.Symbol("V")}
    (converted,) = to_symengine([force], lambda node: stand_in.get(node))
    assert converted.free_symbols == {se.Symbol("H"), se.Symbol("V"), se.Symbol("k")}
    value = converted.subs({se.Symbol("H"): -0.01, se.Symbol("V"): 0.5, se.Symbol("k"): 2.0})
    assert abs(float(value) - 2.0 * 0.01 ** 1.5 * 0.5) < 1e-15
