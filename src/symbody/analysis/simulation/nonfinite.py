"""Where a non-finite derivative comes from: the entry of x', the equation, the term.

When x' = f(t, x) has a NaN or an infinite entry, the run stops with status -2 (at once
when it happens at the start of a segment, after the solver's step size collapsed when it
happens inside a step).  :class:`NonFinite` keeps the first such evaluation and
:meth:`NonFinite.message` says, for the user:

- which entry of x' (the first non-finite one, e.g. ``u(t)'``);
- which equation made it: the kernel output that is non-finite at that state -- a row of
  the kinematic equations (q'), of the dynamic equations (g_d or M_d, in M_d u' + g_d = 0),
  of the velocity or acceleration constraints, of the extra states' derivatives -- or, when
  all of them are finite, the linear solve for u' (a singular M_d);
- and, when the model keeps its SymPy equations, the innermost term of that row that is
  non-finite while its arguments are finite, with the values it was evaluated at: the
  book's friction ``-Abs(v)/v mu N`` at v = 0 gives ``1/v(t) is infinite at v(t) = 0``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sm

from ...compat.sympy import TIME
from ...formatting import symbol_name

__all__ = ["NonFinite", "nonfinite_terms"]

#: the symbolic search for the non-finite term skips rows with more nodes than this
MAX_NODES = 20_000


@dataclass(frozen=True)
class NonFinite:
    """One evaluation of x' with a non-finite entry: (t, the state, its layout, x')."""

    t: float
    x: np.ndarray
    part: Any
    xdot: np.ndarray

    def message(self, run: Any, state_name: Any) -> str:
        """"non-finite value of <state>' at t = ...: <equation>: <term>" (see the module
        doc); ``state_name(model, part, i)`` names entry i of the state."""
        model = run.model
        bad = ~np.isfinite(self.xdot)
        i = int(np.argmax(bad))
        text = (f"non-finite value of {state_name(model, self.part, i)}' at t = {self.t:.6g} "
                f"(= {self.xdot[i]}; state {np.array2string(np.asarray(self.x), precision=4)})")
        try:
            where = _source(run, self)
        except Exception:      # noqa: BLE001 - the diagnosis is a courtesy; the entry is named
            where = ""
        return f"{text}{': ' + where if where else ''}"


def _source(run: Any, bad: NonFinite) -> str:
    """The equation (and term) that is non-finite at ``bad``'s state, or ""."""
    model = run.model
    L = model.layout
    x = _model_state(run, bad)
    if x is None:
        return ""
    t = bad.t
    r = None
    if L.s:
        r = run.specifieds(t, x) if run.specifieds is not None else np.zeros(L.s)
    extra = x[L.nxm:] if L.e else None
    z = model.arguments(t, x[:L.N], None, run.constants, r, extra=extra)
    z[L.iu:L.iud] = x[L.N:L.nxm]
    if L.m:
        out = np.empty(model.kernels.velocity.nout)
        model.kernels.velocity.into(z, out)
        rows = _rows(out[L.velocity_B], L.m, L.o) + _rows(out[L.velocity_b], L.m, 1)
        if rows:
            return _row_text(run, "velocity", rows[0], z)
        try:
            model.solve_dependent_speeds(z)
        except Exception:      # noqa: BLE001
            return "the dependent speeds cannot be solved from the velocity constraints there"
    out = np.empty(model.kernels.main.nout)
    model.kernels.main.into(z, out)
    qdot = np.flatnonzero(~np.isfinite(out[L.main_qdot]))
    if qdot.size:
        return _row_text(run, "kinematic", int(qdot[0]), z)
    K, o = L.K, L.o
    rest = np.flatnonzero(~np.isfinite(out[L.main_rhs]))
    if rest.size:
        j = int(rest[0])
        return _row_text(run, "dynamic_rest" if j < o else "acceleration_rest",
                         j if j < o else j - o, z)
    system = np.flatnonzero(~np.isfinite(out[L.main_system]))
    if system.size:
        col, row = divmod(int(system[0]), K)       # column by column
        if row < o and col < o:
            return _row_text(run, "dynamic_mass", (row, col), z)
        return _row_text(run, "acceleration_matrix", (row - o, col) if row >= o else (col - o, row), z)
    if L.e:
        xe = np.empty(L.e)
        model.kernels.extra.into(z, xe)
        bad_e = np.flatnonzero(~np.isfinite(xe))
        if bad_e.size:
            return _row_text(run, "extra", int(bad_e[0]), z)
    return ("every equation is finite there, but solving them for u' is not (the mass matrix "
            "M_d, or the augmented system, is singular or nearly so)")


def _model_state(run: Any, bad: NonFinite) -> np.ndarray | None:
    """The state in the model's layout [q, u_ind, x_e] (None when it cannot be formed)."""
    model = run.model
    part = bad.part
    x = np.asarray(bad.x, dtype=float)
    if part is None or part.dependent_speeds == model.default_partition.dependent_speeds:
        return x if x.shape == (model.layout.nx,) else None
    return None


def _rows(values: np.ndarray, rows: int, cols: int) -> list:
    bad = np.flatnonzero(~np.isfinite(values))
    return [int(k) // cols for k in bad]


_WHAT = {"kinematic": ("the kinematic equations", "q'"),
         "velocity": ("the velocity constraints", "B u + b"),
         "dynamic_rest": ("the dynamic equations", "g_d"),
         "dynamic_mass": ("the dynamic equations", "M_d"),
         "acceleration_rest": ("the acceleration constraints", "b_a"),
         "acceleration_matrix": ("the acceleration constraints", "B_a"),
         "extra": ("the extra states' derivatives", "x_e'")}


def _row_text(run: Any, block: str, index: Any, z: np.ndarray) -> str:
    """"the dynamic equations' row 1 (g_d[0] in M_d u' + g_d = 0): <term>"."""
    what, name = _WHAT[block]
    row = index[0] if isinstance(index, tuple) else index
    entry = f"{name}[{index[0]}, {index[1]}]" if isinstance(index, tuple) else f"{name}[{index}]"
    text = f"{what}' row {row + 1} ({entry}) is not finite there"
    expr = _expression(run.model, block, index)
    if expr is None:
        return text
    values = _values(run.model, z)
    terms = nonfinite_terms(expr, values)
    if terms:
        term, culprit, at = terms[0]
        text += f": {_short(culprit)} is {_kind(at)}"
        names = _atoms_text(culprit, values)
        if names:
            text += f" at {names}"
        if term != culprit:
            text += f", in the term {_short(term)}"
    return text


def _expression(model: Any, block: str, index: Any) -> sm.Expr | None:
    """The SymPy expression of the row (None: not kept, or only in symengine)."""
    eom = getattr(model, "eom", None)
    if eom is None:
        return None
    if block in ("dynamic_rest", "dynamic_mass") and eom.symengine_dynamics() is not None:
        return None           # (a robot's tree equations: converting them all is not worth it)
    matrix = {"kinematic": "qdot_solution", "dynamic_rest": "dynamic_rest",
              "dynamic_mass": "dynamic_mass", "acceleration_rest": "acceleration_rest",
              "acceleration_matrix": "acceleration_matrix", "extra": "extra_derivatives",
              "velocity": "velocity_rest"}[block]
    M = getattr(eom, matrix, None)
    if M is None:
        return None
    try:
        expr = M[index] if isinstance(index, tuple) else M[index, 0] if M.cols == 1 else None
    except IndexError:
        return None
    if block == "velocity" and expr is not None:
        expr = expr + sum(eom.velocity_matrix[index, k] * u
                          for k, u in enumerate(model.speeds))
    return expr


def _values(model: Any, z: np.ndarray) -> dict:
    """{symbol or function of t: its value} of the argument vector z."""
    L = model.layout
    values = {TIME: float(z[0])}
    groups = [(model.coordinates, L.iq), (model.speeds, L.iu), (model.specifieds, L.ir),
              (model.constants, L.ic), (getattr(model, "extra_states", ()), L.ixe)]
    for symbols, start in groups:
        for k, s in enumerate(symbols):
            values[s] = float(z[start + k])
    return values


def nonfinite_terms(expr: sm.Expr, values: dict) -> list[tuple[sm.Expr, sm.Expr, Any]]:
    """The innermost subexpressions of ``expr`` that are not finite (NaN, infinite, or not
    real: a square root of a negative number) at ``values`` while their arguments are:
    ``[(top-level term, subexpression, its value)]`` in the order met; [] when ``expr`` is
    finite there or has more than MAX_NODES nodes."""
    count = 0
    for _ in sm.preorder_traversal(expr):
        count += 1
        if count > MAX_NODES:
            return []
    numbers = {k: sm.Float(v) for k, v in values.items()}
    memo: dict = {}
    found: list = []

    def value(e):
        if e in memo:
            return memo[e]
        if e in numbers:
            v = numbers[e]
        elif not e.args:
            v = e
        else:
            args = [value(a) for a in e.args]
            try:
                v = e.func(*args)
            except Exception:    # noqa: BLE001 - a function that refuses the numbers
                v = sm.nan
            if _bad(v) and not any(_bad(a) for a in args):
                found.append(e)
        memo[e] = v
        return v

    if not _bad(value(expr)):
        return []
    terms = sm.Add.make_args(expr)
    out = []
    for culprit in found:
        term = next((a for a in terms if a.has(culprit)), expr)
        out.append((term, culprit, memo[culprit]))
    return out


def _bad(v: Any) -> bool:
    """True for a number that is NaN, infinite or not real."""
    if isinstance(v, sm.logic.boolalg.Boolean) or not isinstance(v, sm.Basic):
        return False
    if v is sm.nan or v in (sm.zoo, sm.oo, -sm.oo):
        return True
    if v.is_number:
        return v.is_extended_real is False or v.is_finite is False
    return False


def _kind(v: Any) -> str:
    if v is sm.nan:
        return "nan (0/0, inf - inf or 0*inf)"
    if v is sm.zoo:
        return "infinite (a division by zero)"
    if v in (sm.oo, -sm.oo):
        return "infinite"
    return f"not real ({_short(v)}: the kernels give nan)"


def _atoms_text(e: sm.Expr, values: dict) -> str:
    """"u(t) = 0, m = 1": the values of the functions of t and the symbols in e."""
    atoms = e.atoms(sm.core.function.AppliedUndef) | (e.free_symbols - {TIME})
    atoms = {a for a in atoms if a in values}
    return ", ".join(f"{symbol_name(a)} = {values[a]:.6g}" for a in sorted(atoms, key=str))


def _short(e: Any, limit: int = 120) -> str:
    s = str(e)
    return s if len(s) <= limit else s[:limit] + " ..."
