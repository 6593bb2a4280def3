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
