"""What each coordinate and speed is (an angle, a length, a rate), for axis units.

Plots label every axis with a unit and never put radians and metres on one axis.  The
kind of each quantity is inferred from the equations by a small dimensional analysis in
powers of length L (angles are dimensionless, time is implicit in the rates):

- a coordinate that appears inside sin, cos, tan, ... is an angle (L^0);
- every term of one equation has the same power of L: the holonomic constraints
  f_h(q) = 0, the velocity constraints B u + b = 0 and, when a drawing is known, each
  component of a drawn point's position (a length, L^1);
- the kinematic equations q' = Σ_j a_j(q) u_j give [u_j] = [q_k] / [a_j].

Unknown powers (of constants such as l, of coordinates not inside trig functions, of
speeds) are solved from these equations by propagation; a coordinate that is never
resolved is taken as a length.  Kinds::

    "angle"     rad, plotted in degrees by default        (coordinate, L^0)
    "length"    m                                          (coordinate, L^1)
    "angular rate"  rad/s, plotted in deg/s by default     (speed, L^0)
    "velocity"  m/s                                        (speed, L^1)
    "other"     anything else (shown without conversion, unit "SI")

``units=`` in :func:`symbody.plot` overrides any of them per symbol or name, with a
unit ("deg", "rad", "m", "deg/s", "rad/s", "m/s") or a kind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sm

from ..errors import InputError

__all__ = ["Unit", "quantity_kinds", "residual_units", "units_for", "UNITS", "KINDS"]

KINDS = ("angle", "length", "angular rate", "velocity", "other")

_TRIG = (sm.sin, sm.cos, sm.tan, sm.cot, sm.sec, sm.csc)


@dataclass(frozen=True)
class Unit:
    """How a quantity is shown: ``kind``, axis ``label`` ("deg") and ``scale`` (SI value
    times ``scale`` = plotted value)."""

    kind: str
    label: str
    scale: float = 1.0


#: Units by name: what ``units=`` accepts besides the kind names.
UNITS = {
    "deg": Unit("angle", "deg", 180.0 / np.pi),
    "rad": Unit("angle", "rad", 1.0),
    "m": Unit("length", "m", 1.0),
    "mm": Unit("length", "mm", 1000.0),
    "deg/s": Unit("angular rate", "deg/s", 180.0 / np.pi),
    "rad/s": Unit("angular rate", "rad/s", 1.0),
    "m/s": Unit("velocity", "m/s", 1.0),
    "SI": Unit("other", "SI units", 1.0),
}


def _name(symbol: Any) -> str:
    text = str(symbol)
    return text[:-3] if text.endswith("(t)") else text


# ----------------------------------------------------------------------------- dimensional analysis
class _Unknown:
    """Sentinel: a power of L that cannot be expressed (a sum of unlike terms)."""


_UNKNOWN = _Unknown()


@dataclass
class _Power:
    """known + Σ coefficient · power(atom): the power of L of one term."""

    known: Fraction
    atoms: dict

    def plus(self, other: _Power, times: Fraction = Fraction(1)) -> _Power:
        atoms = dict(self.atoms)
        for a, c in other.atoms.items():
            atoms[a] = atoms.get(a, Fraction(0)) + times * c
        return _Power(self.known + times * other.known, {a: c for a, c in atoms.items() if c})


class _Dimensions:
    def __init__(self, coordinates: Sequence, speeds: Sequence, angles: Iterable):
        self.t = sm.Symbol("t")
        self.coordinates = list(coordinates)
        self.speeds = list(speeds)
        self.power: dict = {q: Fraction(0) for q in angles}
        self.derivative_of = {q.diff(self._time(q)): q for q in self.coordinates if self._time(q)}

    @staticmethod
    def _time(f):
        args = getattr(f, "args", ())
        return args[0] if len(args) == 1 else None

    def term(self, expr: sm.Expr):
        """_Power of a product term, or _UNKNOWN."""
        if expr.is_number:
            return _Power(Fraction(0), {})
        if isinstance(expr, _TRIG) or isinstance(expr, (sm.exp, sm.log, sm.asin, sm.acos, sm.atan)):
            return _Power(Fraction(0), {})
        if isinstance(expr, sm.Derivative):
            base = self.derivative_of.get(expr)
            return self._atom(base) if base is not None else _UNKNOWN
        if isinstance(expr, sm.Mul):
            total = _Power(Fraction(0), {})
            for factor in expr.args:
                p = self.term(factor)
                if p is _UNKNOWN:
                    return _UNKNOWN
                total = total.plus(p)
            return total
        if isinstance(expr, sm.Pow):
            base, exp = expr.args
            if not exp.is_Rational:
                return _UNKNOWN if base.free_symbols else _Power(Fraction(0), {})
            p = self.term(base)
            return _UNKNOWN if p is _UNKNOWN else _Power(Fraction(0), {}).plus(p, Fraction(str(exp)))
        if isinstance(expr, sm.Add):
            # a sum inside a product, e.g. (l1 + l2) cos(q): usable only when its terms agree
            powers = [self.resolved(self.term(a)) for a in expr.args]
            if all(p is not None for p in powers) and len(set(powers)) == 1:
                return _Power(powers[0], {})
            return _UNKNOWN
        if isinstance(expr, sm.Symbol) or isinstance(expr, sm.Function):
            if expr == self.t:
                return _UNKNOWN
            return self._atom(expr)
        return _UNKNOWN

    def _atom(self, atom) -> _Power:
        if atom in self.power:
            return _Power(self.power[atom], {})
        return _Power(Fraction(0), {atom: Fraction(1)})

    def resolved(self, p) -> Fraction | None:
        if p is _UNKNOWN:
            return None
        value = p.known
        for a, c in p.atoms.items():
            if a not in self.power:
                return None
            value += c * self.power[a]
        return value

    def equate(self, terms: Sequence[sm.Expr]) -> bool:
        """All terms have one power of L: solve one unknown from a known term; True if progress."""
        powers = [self.term(a) for a in terms]
        values = [self.resolved(p) for p in powers]
        known = [v for v in values if v is not None]
        if not known:
            return False
        target = known[0]
        progress = False
        for p, v in zip(powers, values, strict=True):
            if v is not None or p is _UNKNOWN:
                continue
            open_atoms = [(a, c) for a, c in p.atoms.items() if a not in self.power]
            if len(open_atoms) != 1:
                continue
            atom, c = open_atoms[0]
            rest = p.known + sum((cc * self.power[a] for a, cc in p.atoms.items() if a in self.power),
                                 Fraction(0))
            self.power[atom] = (target - rest) / c
            progress = True
        return progress


def _terms(expr: sm.Expr) -> list[sm.Expr]:
    expr = sm.expand(sm.sympify(expr), trig=False) if not isinstance(expr, sm.Add) else expr
    return list(sm.Add.make_args(expr))


def _rows(matrix: Any) -> list[sm.Expr]:
    if matrix is None:
        return []
    try:
        return [e for e in sm.Matrix(matrix) if e != 0]
    except Exception:  # an unusual container: nothing to learn from it
        return []


def _trig_angles(exprs: Iterable[sm.Expr], coordinates: Sequence) -> set:
    """Coordinates appearing inside trigonometric functions of ``exprs``.

    Walks each distinct subexpression once (large equations share many subtrees).
    """
    coords = set(coordinates)
    found: set = set()
    seen: set = set()
    stack = [sm.sympify(e) for e in exprs]
    while stack and found != coords:
        node = stack.pop()
        if node in seen or not node.args:
            continue
        seen.add(node)
        if isinstance(node, _TRIG):
            found |= {a for a in node.args[0].atoms(sm.Function, sm.Symbol) if a in coords}
        stack.extend(node.args)
    return found


def _trig_coefficient(exprs: Sequence[sm.Expr], dims: _Dimensions):
    """An unresolved constant (plain Symbol) multiplying a sin/cos in a term of ``exprs``."""
    for e in exprs:
        for term in _terms(e):
            factors = sm.Mul.make_args(term)
            if not any(isinstance(f, _TRIG) for f in factors):
                continue
            for f in factors:
                if isinstance(f, sm.Symbol) and f not in dims.power and f != dims.t:
                    return f
    return None


def _eom_of(source: Any):
    for attr in ("eom",):
        inner = getattr(source, attr, None)
        if inner is not None and hasattr(inner, "q_ind"):
            return inner
    if hasattr(source, "q_ind") and hasattr(source, "kinematic_qdot"):
        return source
    to_eom = getattr(source, "to_eom", None)
    if callable(to_eom):
        return to_eom()
    return None


def _drawing_points(source: Any) -> list[sm.Expr]:
    drawing = getattr(source, "drawing", None)
    points = getattr(drawing, "points", None) if drawing is not None else None
    out = []
    for vec in (points or {}).values():
        try:
            out.extend(e for e in sm.Matrix(vec) if e != 0)
        except Exception:  # not a matrix: nothing to learn
            continue
    return out


def quantity_kinds(source: Any) -> dict:
    """{symbol: kind} for every coordinate and speed of ``source``.

    ``source``: an EquationsOfMotion, a NumericModel or a zoo Model (whose drawing helps:
    drawn positions are lengths), or anything with ``to_eom()`` (KanesMethod).
    Kinds are among :data:`KINDS`; see the module docstring for the rules.
    """
    kinds = _analyse(source)
    return {s: k for s, k in kinds.items() if s not in _RESIDUALS.values()}


def _analyse(source: Any) -> dict:
    """quantity_kinds plus the sets of powers of L of the constraint equations."""
    eom = _eom_of(source)
    if eom is None:
        raise InputError(f"cannot infer units from {type(source).__name__}: give an EquationsOfMotion, "
                         "a NumericModel or a zoo Model")
    q = list(eom.q_ind) + list(eom.q_dep)
    u = list(eom.u_ind) + list(eom.u_dep)
    t = getattr(eom, "t", sm.Symbol("t"))
    holonomic = _rows(getattr(eom, "holonomic", None))
    B = sm.Matrix(getattr(eom, "velocity_matrix", sm.zeros(0, len(u))))
    velocity = []
    if B.rows:
        rest = sm.Matrix(getattr(eom, "velocity_rest", sm.zeros(B.rows, 1)))
        velocity = [(B[i, :] * sm.Matrix(u))[0] + rest[i] for i in range(B.rows)]
    points = _drawing_points(source)
    qdot = _rows(getattr(eom, "qdot_solution", None))
    dims = _Dimensions(q, u, _trig_angles(holonomic + velocity + points + qdot, q))
    dims.t = t
    marker = sm.Symbol("_unit_length_marker_")
    dims.power[marker] = Fraction(1)
    equations: list[list[sm.Expr]] = [_terms(e) for e in holonomic + velocity]
    equations += [[*_terms(e), marker] for e in points]      # drawn positions are lengths
    # kinematics: q_k' = Σ_j a_kj u_j + c_k  ->  [q_k'] = [a_kj u_j] for every j
    qdot_solution = sm.Matrix(getattr(eom, "qdot_solution", sm.zeros(0, 1)))
    for k, expr in enumerate(qdot_solution):
        if k < len(q) and expr != 0:
            equations.append([q[k], *_terms(expr)])
    scanned_dynamics = False
    for _ in range(4 * (len(q) + len(u)) + 4):
        if any(dims.equate(eq) for eq in equations):
            continue
        open_q = [qi for qi in q if qi not in dims.power]
        if not open_q and _trig_coefficient(holonomic + velocity, dims) is None:
            break
        if not scanned_dynamics:
            # coordinates met nowhere else may still sit in sin/cos of the dynamics (large:
            # searched only when needed)
            scanned_dynamics = True
            dynamic = _rows(getattr(eom, "dynamic_mass", None)) + _rows(getattr(eom, "dynamic_rest", None))
            for qi in _trig_angles(dynamic, open_q):
                dims.power[qi] = Fraction(0)
            continue
        # nothing more follows: take a constant that multiplies a sin/cos in a constraint as a
        # length (the l cos q of a loop or a rolling contact), else a coordinate; then go on
        lever = _trig_coefficient(holonomic + velocity, dims)
        if lever is not None:
            dims.power[lever] = Fraction(1)
        else:
            dims.power[open_q[0]] = Fraction(1)
    kinds: dict = {}
    for name, eqs in (("holonomic", holonomic), ("velocity", velocity)):
        powers = set()
        for e in eqs:
            values = [dims.resolved(dims.term(a)) for a in _terms(e)]
            powers |= {v for v in values[:1] if v is not None}
        kinds[_RESIDUALS[name]] = powers
    for qi in q:
        power = dims.power.get(qi, Fraction(1))
        kinds[qi] = "angle" if power == 0 else "length" if power == 1 else "other"
    for ui in u:
        power = dims.power.get(ui)
        kinds[ui] = "angular rate" if power == 0 else "velocity" if power == 1 else "other"
    return kinds


_RESIDUALS = {"holonomic": "_holonomic_residual_", "velocity": "_velocity_residual_"}


def residual_units(source: Any) -> dict[str, str]:
    """Units of the constraint residuals: {"holonomic": "m", "velocity": "m/s"} (present ones).

    From the power of L of the constraint equations (rad and rad/s for angle constraints;
    "m | rad" when the equations differ).
    """
    kinds = _analyse(source)
    out = {}
    for name, coordinate in (("holonomic", ("rad", "m")), ("velocity", ("rad/s", "m/s"))):
        powers = kinds.get(_RESIDUALS[name], set())
        labels = sorted({coordinate[int(p)] if p in (0, 1) else "SI" for p in powers})
        if labels:
            out[name] = " | ".join(labels)
    return out


def _default_unit(kind: str, angles: str) -> Unit:
    if kind == "angle":
        return UNITS["deg" if angles == "deg" else "rad"]
    if kind == "angular rate":
        return UNITS["deg/s" if angles == "deg" else "rad/s"]
    if kind == "length":
        return UNITS["m"]
    if kind == "velocity":
        return UNITS["m/s"]
    return UNITS["SI"]


def units_for(symbols: Sequence, kinds: Mapping | None = None, overrides: Mapping | None = None,
              angles: str = "deg") -> dict:
    """{symbol: Unit} for ``symbols`` from inferred ``kinds`` and user ``overrides``.

    ``overrides``: {symbol or name: unit name (see :data:`UNITS`) or kind}.  A symbol with
    neither is "other" (SI units).  Unknown names or units raise InputError.
    """
    if angles not in ("deg", "rad"):
        raise InputError(f"angles must be 'deg' or 'rad', not {angles!r}")
    kinds = dict(kinds or {})
    by_name = {_name(s): s for s in symbols}
    chosen: dict = {}
    for key, value in (overrides or {}).items():
        symbol = key if key in kinds or key in set(symbols) else by_name.get(_name(key))
        if symbol is None:
            raise InputError(f"units= names {key!r}, which is not a coordinate or speed here "
                             f"({', '.join(by_name)})")
        if value in UNITS:
            chosen[symbol] = UNITS[value]
        elif value in KINDS:
            chosen[symbol] = _default_unit(value, angles)
        else:
            raise InputError(f"unknown unit {value!r} for {key}; use one of {', '.join(UNITS)} "
                             f"or a kind ({', '.join(KINDS)})")
    return {s: chosen.get(s) or _default_unit(kinds.get(s, "other"), angles) for s in symbols}
