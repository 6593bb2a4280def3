"""Small symbolic helpers shared by the formulation layer.

Linear-coefficient extraction, linearity checks with errors that name the
equation at fault, and the cheap solution of kinematic equations.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import sympy as sm
from sympy.physics.mechanics.functions import find_dynamicsymbols

from .._lazy_modules import lazy_module
from ..compat.sympy import TIME
from ..errors import FormulationError, NonlinearityError

se = lazy_module("symengine")        # imported when first used (import time)

t = TIME


def as_column(exprs, name: str = "equations") -> sm.Matrix:
    """Return ``exprs`` (None, a scalar, a list or a Matrix) as a mutable column Matrix."""
    if exprs is None:
        return sm.Matrix(0, 1, [])
    if isinstance(exprs, sm.MatrixBase):
        if exprs.shape[1] != 1 and exprs.shape[0] != 0:
            if exprs.shape[0] == 1:
                return sm.Matrix(exprs).T
            raise FormulationError(f"{name} must be a column, got a matrix of shape {exprs.shape}")
        return sm.Matrix(exprs)
    if isinstance(exprs, sm.Basic):
        return sm.Matrix([exprs])
    try:
        items = list(exprs)
    except TypeError as exc:
        raise FormulationError(f"{name} must be a list of expressions, got {exprs!r}") from exc
    out = []
    for i, e in enumerate(items):
        if isinstance(e, sm.Equality):
            e = e.lhs - e.rhs
        try:
            out.append(sm.sympify(e))
        except (sm.SympifyError, TypeError) as exc:
            raise FormulationError(f"{name}[{i}] is not an expression: {e!r}") from exc
    return sm.Matrix(len(out), 1, out)


def as_symbol_list(seq, name: str) -> list:
    """Return ``seq`` as a list of dynamicsymbols, checking each is a function of time."""
    if seq is None:
        return []
    if isinstance(seq, sm.Basic) and not isinstance(seq, sm.MatrixBase):
        seq = [seq]
    try:
        items = list(seq)
    except TypeError as exc:
        raise FormulationError(f"{name} must be an iterable of dynamicsymbols, got {seq!r}") from exc
    for s in items:
        if not (isinstance(s, sm.core.function.AppliedUndef) and s.args == (t,)):
            raise FormulationError(
                f"{name} must contain functions of time created with dynamicsymbols; "
                f"{s!r} is not one")
    if len(set(items)) != len(items):
        dup = [s for s in items if items.count(s) > 1]
        raise FormulationError(f"{name} lists {dup[0]} more than once")
    return items


def coordinate_and_speed_lists(q_ind, q_dep, u_ind, u_dep, u_aux,
                               names: Sequence[str] = ("q_ind", "q_dep", "u_ind", "u_dep", "u_auxiliary"),
                               ) -> tuple[list, list, list, list, list]:
    """The five lists of variables (independent and dependent coordinates and speeds,
    auxiliary speeds) as lists of dynamicsymbols (:func:`as_symbol_list`, argument
    ``names``), checked to be disjoint: no coordinate is also a speed, no auxiliary speed is
    a generalized speed, no variable is both independent and dependent."""
    q_ind, q_dep, u_ind, u_dep, u_aux = (as_symbol_list(seq, name) for seq, name in
                                         zip((q_ind, q_dep, u_ind, u_dep, u_aux), names))
    for what, a, b in (("is listed both as a coordinate and as a speed", q_ind + q_dep, u_ind + u_dep + u_aux),
                       ("is both an auxiliary and a generalized speed", u_ind + u_dep, u_aux),
                       (f"is listed both in {names[0]} and {names[1]}", q_ind, q_dep),
                       (f"is listed both in {names[2]} and {names[3]}", u_ind, u_dep)):
        both = [x for x in a if x in set(b)]
        if both:
            raise FormulationError(f"{both[0]} {what}")
    return q_ind, q_dep, u_ind, u_dep, u_aux


def linear_coefficients(exprs: sm.Matrix, variables: Sequence, eq_name: str,
                        var_name: str) -> tuple[sm.Matrix, sm.Matrix]:
    """Split ``exprs = A @ variables + b`` and check the linearity.

    Returns ``(A, b)`` with ``A`` of shape ``(len(exprs), len(variables))``.
    Raises NonlinearityError naming the row and variable when ``A`` still
    depends on ``variables``.  The differentiation runs in symengine.
    """
    from ..symengine_bridge import SympyConverter
    from ._symengine_kinematics import SymbolMap

    variables = list(variables)
    rows = exprs.rows if isinstance(exprs, sm.MatrixBase) else len(exprs)
    if not variables:
        return sm.zeros(rows, 0), sm.Matrix(exprs)
    smap = SymbolMap()
    var_se = [smap.add(v) for v in variables]
    vset = set(var_se)
    conv = SympyConverter(smap.names)
    zero = {v: se.Integer(0) for v in var_se}
    A = sm.zeros(rows, len(variables))
    b = sm.zeros(rows, 1)
    for i in range(rows):
        e = sm.sympify(exprs[i])
        if e.is_number:
            b[i] = e
            continue
        ee = smap.to_se(e)
        present = ee.free_symbols & vset
        for j, d in enumerate(var_se):
            if d not in present:
                continue
            a = ee.diff(d)
            bad = a.free_symbols & vset
            if bad:
                culprit = smap.names[str(next(iter(bad)))]
                raise NonlinearityError(
                    f"{eq_name}[{i}] = {e} is nonlinear in {var_name} {variables[j]} (its "
                    f"coefficient depends on {culprit}); {eq_name} must be linear in {var_name}")
            A[i, j] = conv(a)
        if present:
            rest = ee.subs(zero)
            b[i] = conv(rest)
        else:
            b[i] = e
    return A, b


def _contains_any(expr, vset) -> set:
    found = set()
    for v in vset:
        if expr.has(v):
            found.add(v)
    return found


def dynamic_symbols_in(exprs) -> set:
    """All functions of time (and their derivatives) in ``exprs``."""
    if isinstance(exprs, sm.MatrixBase):
        out = set()
        for e in exprs:
            out |= find_dynamicsymbols(e)
        return out
    return find_dynamicsymbols(exprs)


def is_diagonal(M: sm.MatrixBase) -> bool:
    return all(M[i, j] == 0 for i in range(M.rows) for j in range(M.cols) if i != j)


def solve_linear(A: sm.MatrixBase, B: sm.MatrixBase, what: str) -> sm.Matrix:
    """Solve ``A X = B`` symbolically; cheap paths for identity and diagonal ``A``.

    Used only for small matrices that are simple by construction (kinematic
    equations, user-requested reduced forms).
    """
    n = A.rows
    if A == sm.eye(n):
        return sm.Matrix(B)
    if is_diagonal(A):
        for i in range(n):
            if A[i, i] == 0:
                raise FormulationError(f"{what}: the coefficient matrix is singular (row {i} is zero)")
        return sm.Matrix(B.rows, B.cols, lambda i, j: B[i, j] / A[i, i])
    try:
        return A.LUsolve(B)
    except (ValueError, ZeroDivisionError) as exc:
        raise FormulationError(f"{what}: the coefficient matrix is singular") from exc


def check_no_unknown_derivatives(exprs: Iterable, allowed: set, eq_name: str) -> None:
    """Raise if ``exprs`` contains time derivatives other than those in ``allowed``."""
    for i, e in enumerate(exprs):
        for d in e.atoms(sm.Derivative):
            if d not in allowed:
                raise FormulationError(
                    f"{eq_name}[{i}] contains {d}, which is not allowed there")
