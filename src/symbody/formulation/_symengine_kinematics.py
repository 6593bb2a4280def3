"""Fast symbolic kernels for Kane's method, done in symengine.

sympy.physics.vector objects (frames, points, vectors, dyadics) describe the
kinematics; this module converts the velocities of the bodies to symengine
column vectors, once, and forms the generalized active and inertia forces
there.  Time derivatives use the chain rule

    d/dt f(q, u, t) = sum_i df/dq_i q_i'(q, u, t) + sum_k df/du_k u_k' + df/dt

with q' taken from the kinematic differential equations, so no expression is
ever differentiated with respect to time by sympy.
"""

from __future__ import annotations

from collections.abc import Iterable

import sympy as sm
from sympy.physics.vector import Dyadic, ReferenceFrame, Vector

from .._lazy_modules import lazy_module
from ..compat.sympy import TIME
from ..symengine_bridge import DESCEND, converts_node_by_node, fold_dag, symengine_node

se = lazy_module("symengine")        # imported when first used (import time)

t = TIME


class SymbolMap:
    """A two-way map between functions of time (and derivatives) and plain symbols.

    sympy expressions are made symengine-ready by replacing every
    ``f(t)`` and ``Derivative(f(t), t)`` with a plain Symbol; results are
    mapped back with :meth:`to_sympy`.
    """

    def __init__(self) -> None:
        self.forward: dict = {}     # sympy dynamic atom -> sympy Symbol
        self.se_of: dict = {}       # sympy dynamic atom -> symengine Symbol
        self.back: dict = {}        # sympy Symbol -> sympy dynamic atom
        self.names: dict = {}       # symengine symbol name -> sympy atom
        self._counter = 0
        self._memos: dict = {}      # id(qdot map) or None -> (the map, fold_dag's memo)

    def add(self, atom) -> se.Symbol:
        if atom in self.se_of:
            return self.se_of[atom]
        self._counter += 1
        name = f"_sbdyn{self._counter}"
        s = sm.Symbol(name)
        self.forward[atom] = s
        self.back[s] = atom
        self.se_of[atom] = se.Symbol(name)
        self.names[name] = atom
        return self.se_of[atom]

    def scan(self, expr) -> None:
        """Register every dynamic atom of a sympy expression."""
        for d in expr.atoms(sm.Derivative):
            self.add(d)
        for f in expr.atoms(sm.core.function.AppliedUndef):
            self.add(f)

    def to_se(self, expr, qdot_map: dict | None = None) -> se.Basic:
        """The symengine form of a sympy expression, functions of time as plain symbols and,
        with ``qdot_map``, its keys (q' = Derivative(q, t)) replaced by their values first.

        Converted node by node over the expression's DAG (each shared node once, memoized
        across calls), so that sympy never rebuilds it: a rebuild (``xreplace``) evaluates
        every Piecewise again, and a contact force's conditions hold long expressions."""
        expr = sm.sympify(expr)
        if expr.is_number:
            return se.sympify(expr)
        key = id(qdot_map) if qdot_map else None
        got = self._memos.get(key)
        if got is None:
            got = self._memos[key] = (qdot_map, {})
        return fold_dag([expr], lambda node: self._visit(node, qdot_map), symengine_node,
                        got[1])[0]

    def _visit(self, node, qdot_map):
        if node.is_Add or node.is_Mul or node.is_Pow:
            return DESCEND
        if isinstance(node, (sm.Derivative, sm.core.function.AppliedUndef)):
            value = qdot_map.get(node) if qdot_map else None
            return self.add(node) if value is None else self.to_se(value)
        if node.is_Symbol:
            self.names.setdefault(node.name, node)
            return se.sympify(node)
        if not node.args:
            return se.sympify(node)
        if converts_node_by_node(node):
            return DESCEND
        # anything else as a whole, its functions of time replaced first (as sympy would)
        if qdot_map:
            node = node.xreplace(qdot_map)
        self.scan(node)
        for s in node.free_symbols:
            self.names.setdefault(s.name, s)
        return se.sympify(node.xreplace(self.forward))

    def to_sympy(self, expr) -> sm.Expr:
        return sm.sympify(expr).xreplace(self.back)

    def matrix_to_sympy(self, rows: list[list]) -> sm.Matrix:
        if not rows:
            return sm.Matrix(0, 0, [])
        back = self.back
        out = []
        for row in rows:
            out.append([_se_to_sympy(e, back) for e in row])
        return sm.Matrix(out)


def _se_to_sympy(e, back):
    s = e._sympy_() if hasattr(e, "_sympy_") else sm.sympify(e)
    if s.is_number:
        return s
    return s.xreplace(back)


class FrameTable:
    """Direction cosine matrices of frames relative to the inertial frame, in symengine."""

    def __init__(self, inertial: ReferenceFrame, symmap: SymbolMap, qdot_map: dict):
        self.N = inertial
        self.symmap = symmap
        self.qdot_map = qdot_map
        self._dcm: dict = {}

    def connected(self, frame: ReferenceFrame) -> bool:
        """True if the orientation of ``frame`` relative to the inertial frame is known."""
        if frame is self.N or frame in self._dcm:
            return True
        try:
            self.dcm_N(frame)
        except ValueError:
            return False
        return True

    def dcm_N(self, frame: ReferenceFrame) -> se.DenseMatrix:
        """Matrix C with v_N = C v_frame."""
        if frame is self.N:
            return se.eye(3)
        got = self._dcm.get(frame)
        if got is None:
            C = self.N.dcm(frame)
            got = se.DenseMatrix(3, 3, [self.symmap.to_se(C[i, j]) for i in range(3) for j in range(3)])
            self._dcm[frame] = got
        return got

    def vector_in_N(self, vec) -> list:
        """Components (x, y, z) of a sympy Vector in the inertial frame, as symengine expressions."""
        if vec == 0 or (isinstance(vec, Vector) and not vec.args):
            return [se.Integer(0)] * 3
        if not isinstance(vec, Vector):
            raise TypeError(f"expected a sympy.physics.vector Vector, got {vec!r}")
        out = [se.Integer(0)] * 3
        for comps, frame in vec.args:
            c = [self.symmap.to_se(comps[i], self.qdot_map) for i in range(3)]
            C = self.dcm_N(frame)
            for i in range(3):
                out[i] = out[i] + C[i, 0] * c[0] + C[i, 1] * c[1] + C[i, 2] * c[2]
        return out

    def vector_in(self, vec, frame: ReferenceFrame) -> list:
        """Components of a sympy Vector in ``frame`` (symengine)."""
        if frame is self.N:
            return self.vector_in_N(vec)
        if vec == 0 or (isinstance(vec, Vector) and not vec.args):
            return [se.Integer(0)] * 3
        out = [se.Integer(0)] * 3
        for comps, f in vec.args:
            c = [self.symmap.to_se(comps[i], self.qdot_map) for i in range(3)]
            if f is frame:
                for i in range(3):
                    out[i] = out[i] + c[i]
                continue
            # v_frame = C_frame_N C_N_f v_f = (dcm_N(frame))^T dcm_N(f) v_f
            CF = self.dcm_N(frame)
            Cf = self.dcm_N(f)
            vN = [Cf[i, 0] * c[0] + Cf[i, 1] * c[1] + Cf[i, 2] * c[2] for i in range(3)]
            for i in range(3):
                out[i] = out[i] + CF[0, i] * vN[0] + CF[1, i] * vN[1] + CF[2, i] * vN[2]
        return out

    def dyadic_in(self, dyad, frame: ReferenceFrame) -> list[list]:
        """3x3 components of a sympy Dyadic in ``frame`` (symengine)."""
        if not isinstance(dyad, Dyadic):
            M = sm.Matrix(dyad)
            return [[self.symmap.to_se(M[i, j], self.qdot_map) for j in range(3)]
                    for i in range(3)]
        out = [[se.Integer(0)] * 3 for _ in range(3)]
        for coef, v1, v2 in dyad.args:
            c = self.symmap.to_se(coef, self.qdot_map)
            a = self.vector_in(v1, frame)
            b = self.vector_in(v2, frame)
            for i in range(3):
                if a[i] == 0:
                    continue
                for j in range(3):
                    if b[j] != 0:
                        out[i][j] = out[i][j] + c * a[i] * b[j]
        return out


class ChainRule:
    """Time derivative by the chain rule, with q' given as symengine expressions.

    With ``symmap`` given, functions of time other than the coordinates and the
    ``speeds`` (specified motions r(t) and their derivatives) are differentiated
    too: d/dt r = r', d/dt r' = r'' (their symbols are added to ``symmap``).
    """

    def __init__(self, q_se: list, qdot_se: list, t_se: se.Symbol, symmap: SymbolMap | None = None,
                 speeds: Iterable = ()):
        self.q = q_se
        self.qdot = qdot_se
        self.t = t_se
        self.symmap = symmap
        self._skip = set(q_se) | set(speeds)
        self._rates: dict = {}

    def _rate(self, s):
        """The symbol of d/dt of the specified function of time ``s`` stands for, or None."""
        got = self._rates.get(s, False)
        if got is not False:
            return got
        atom = self.symmap.names.get(str(s)) if s not in self._skip else None
        rate = None
        if isinstance(atom, sm.Derivative) and set(atom.variables) == {t}:
            rate = self.symmap.add(sm.Derivative(atom.expr, (t, atom.derivative_count + 1)))
        elif isinstance(atom, sm.core.function.AppliedUndef) and atom.args == (t,):
            rate = self.symmap.add(atom.diff(t))
        self._rates[s] = rate
        return rate

    def dt_rest(self, expr, extra: Iterable = ()) -> se.Basic:
        """d/dt expr holding the speeds fixed: sum_i d expr/dq_i q_i' + d expr/dt."""
        if expr == 0:
            return se.Integer(0)
        free = expr.free_symbols
        out = se.Integer(0)
        for qi, qdi in zip(self.q, self.qdot):
            if qi in free:
                out = out + expr.diff(qi) * qdi
        if self.t in free:
            out = out + expr.diff(self.t)
        for var, rate in extra:
            if var in free:
                out = out + expr.diff(var) * rate
        if self.symmap is not None:
            for s in free:
                if s in self._skip or s == self.t:
                    continue
                rate = self._rate(s)
                if rate is not None:
                    out = out + expr.diff(s) * rate
        return out


def dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross3(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def matvec3(M, v):
    return [M[i][0] * v[0] + M[i][1] * v[1] + M[i][2] * v[2] for i in range(3)]


def skew_commutator(w, I):
    """[w x] I - I [w x] for a 3-vector w and 3x3 nested list I."""
    W = [[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]]
    out = []
    for i in range(3):
        row = []
        for j in range(3):
            acc = se.Integer(0)
            for k in range(3):
                if W[i][k] != 0 and I[k][j] != 0:
                    acc = acc + W[i][k] * I[k][j]
                if I[i][k] != 0 and W[k][j] != 0:
                    acc = acc - I[i][k] * W[k][j]
            row.append(acc)
        out.append(row)
    return out


def partials(vec3: list, speeds_se: list) -> list[list]:
    """Partial velocities: the coefficients of each speed in a vector linear in the speeds."""
    out = []
    for u in speeds_se:
        out.append([c.diff(u) if u in c.free_symbols else se.Integer(0) for c in vec3])
    return out


def is_zero3(v) -> bool:
    return all(c == 0 for c in v)
