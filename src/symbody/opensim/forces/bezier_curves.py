"""C2 piecewise quintic Bezier curves y(x), as OpenSim's ``SmoothSegmentedFunction`` builds
them for Millard's muscle curves, written as closed expressions exact to round-off.

Segment i is the quintic Bezier curve (X_i(s), Y_i(s)), s in [0, 1], of control points
(x_i0..x_i5, y_i0..y_i5); X_i is increasing, so y(x) = Y_i(s) with s = X_i^-1(x).  Outside
[x0, x1] the curve is its end tangent: y = y0 + y0' (x - x0), y = y1 + y1' (x - x1).
OpenSim finds s by Newton's method from a spline-interpolated guess to |X(s) - x| < 100 eps.

Here s is found by a fixed program that can be written as one expression (no numeric
callback in the equations, differentiable, compiled with the rest):

1. ``k`` bisection steps on [0, 1]: s <- s ± 2^-(j+2) by the sign of X(s) - x, which
   brackets the root to |s - s*| <= 2^-(k+1) (X is increasing: this cannot fail);
2. ``n`` Newton steps s <- s - (X(s) - x)/X'(s), whose error obeys e' <= M e^2 with
   M = max|X''| / (2 min X') over the bracket; ``n`` is the least count that takes the
   bisection's bound below 1e-17 (:func:`newton_steps`), so the result is the root to
   round-off, and so are its derivatives (ds/dx = 1/X'(s) at the last step).

The segment's coefficients (power basis, Horner) are chosen by a Piecewise on x, and x is
clamped to [x0, x1] inside the solve.  :class:`BezierCurve` holds one curve; its
:meth:`~BezierCurve.expressions` gives (y, dy/dx) in symengine and :meth:`~BezierCurve.__call__`
evaluates them.  The same program solves a monotone combination α Y(s) + β X(s) = r
(:func:`solve_combination`; Millard's damped fiber velocity).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from math import comb

import numpy as np
import symengine as se

__all__ = ["BezierCurve", "corner_control_points", "newton_steps", "solve_combination",
           "power_coefficients", "BISECTION_STEPS"]

#: bisection steps before Newton: the root bracketed to 2^-13 = 1.2e-4 in s
BISECTION_STEPS = 12
_TARGET = 1e-17
_MAX_NEWTON = 8
_ROOT_EPS = float(np.sqrt(np.finfo(float).eps))


def corner_control_points(x0: float, y0: float, dydx0: float, x1: float, y1: float,
                          dydx1: float, curviness: float) -> tuple:
    """The control points ((6,), (6,)) of the quintic Bezier corner from (x0, y0) with slope
    dydx0 to (x1, y1) with slope dydx1 (OpenSim's ``calcQuinticBezierCornerControlPoints``:
    the two tangent lines meet at (xC, yC); the inner points sit a fraction ``curviness``
    (the scaled one, 0.1 + 0.8 c) of the way from each end to that corner)."""
    if not 0.0 <= curviness <= 1.0:
        raise ValueError(f"curviness must be in [0, 1], got {curviness}")
    if abs(dydx0 - dydx1) > _ROOT_EPS:
        xC = (y1 - y0 - x1 * dydx1 + x0 * dydx0) / (dydx0 - dydx1)
    else:
        xC = (x1 + x0) / 2
    yC = (xC - x1) * dydx1 + y1
    a = (xC - x0) ** 2 + (yC - y0) ** 2
    b = (xC - x1) ** 2 + (yC - y1) ** 2
    c = (x1 - x0) ** 2 + (y1 - y0) ** 2
    if not (c > a and c > b):
        raise ValueError("the tangent lines do not form a C-shaped corner "
                         f"(({x0}, {y0}, {dydx0}) to ({x1}, {y1}, {dydx1}))")
    x0m, y0m = x0 + curviness * (xC - x0), y0 + curviness * (yC - y0)
    x1m, y1m = x1 + curviness * (xC - x1), y1 + curviness * (yC - y1)
    return (np.array([x0, x0m, x0m, x1m, x1m, x1]), np.array([y0, y0m, y0m, y1m, y1m, y1]))


def power_coefficients(points) -> np.ndarray:
    """Coefficients c (6,) of a quintic Bezier curve in the power basis, Σ c_k s^k, from its
    6 control points p: c_k = C(5, k) Σ_j (-1)^(k-j) C(k, j) p_j."""
    p = np.asarray(points, dtype=float)
    return np.array([comb(5, k) * sum((-1) ** (k - j) * comb(k, j) * p[j] for j in range(k + 1))
                     for k in range(6)])


def _horner(c, s):
    out = c[5]
    for k in range(4, -1, -1):
        out = out * s + c[k]
    return out


def _horner_d(c, s):
    out = 5 * c[5]
    for k in range(4, 0, -1):
        out = out * s + k * c[k]
    return out


def newton_steps(d1: np.ndarray, d2: np.ndarray, bracket: float) -> int:
    """The number of Newton steps after a bracket |s - s*| <= ``bracket`` that gives an
    error bound below 1e-17: e' <= M e², M = max|g''| / (2 min g') (``d1``, ``d2``: g' and
    |g''| sampled densely over the bracket's reach)."""
    if np.min(d1) <= 0:
        raise ValueError("the curve is not strictly increasing in its parameter")
    M = float(np.max(np.abs(d2)) / (2 * np.min(d1)))
    e = bracket
    for n in range(_MAX_NEWTON + 1):
        if e < _TARGET:
            return max(n, 1)
        if M * e >= 1:
            break
        e = M * e * e
    raise ValueError(f"Newton's method from a bracket of {bracket:g} does not converge fast "
                     f"enough (M = {M:g}): more bisection steps are needed")


def _select(x, bounds: list, values: list):
    """Piecewise over segments: values[i] where x < bounds[i] (the last one otherwise)."""
    if all(v == values[0] for v in values):
        return _num(values[0])
    pairs = [(_num(v), se.Lt(x, _num(b))) for v, b in zip(values[:-1], bounds)]
    return se.Piecewise(*pairs, (_num(values[-1]), se.true))


def _num(v: float):
    v = float(v)
    if v == round(v) and abs(v) < 1e6:
        return se.Integer(int(round(v)))
    return se.RealDouble(v)


def _bracket_and_polish(residual, slope, x_like, steps: int, newton: int):
    """s in [0, 1] with residual(s) = 0 (residual increasing): ``steps`` bisections from
    s = 1/2, then ``newton`` Newton steps."""
    s = se.Rational(1, 2)
    h = se.Rational(1, 4)
    for _ in range(steps):
        s = se.Piecewise((s + h, se.Lt(residual(s), 0)), (s - h, se.true))
        h = h / 2
    for _ in range(newton):
        s = s - residual(s) / slope(s)
    return s


@dataclass(frozen=True)
class BezierCurve:
    """A C2 piecewise quintic Bezier curve y(x) with linear extrapolation.

    ``x_points``, ``y_points``: (segments, 6) control points; ``x0``, ``x1``: the domain;
    ``y0``, ``y1``, ``dydx0``, ``dydx1``: values and slopes of the extrapolation lines;
    ``name``: for messages.
    """

    x_points: np.ndarray
    y_points: np.ndarray
    x0: float
    x1: float
    y0: float
    y1: float
    dydx0: float
    dydx1: float
    name: str = "curve"

    @property
    def segments(self) -> int:
        return len(self.x_points)

    @cached_property
    def coefficients(self) -> tuple:
        """(X, Y): each segment's power-basis coefficients, (segments, 6) each."""
        cx = np.array([power_coefficients(p) for p in self.x_points])
        cy = np.array([power_coefficients(p) for p in self.y_points])
        return cx, cy

    @cached_property
    def newton_count(self) -> int:
        """Newton steps after :data:`BISECTION_STEPS` bisections (:func:`newton_steps`)."""
        cx, _ = self.coefficients
        bracket = 2.0 ** -(BISECTION_STEPS + 1)
        s = np.linspace(-bracket, 1 + bracket, 4001)
        n = 1
        for c in cx:
            d1 = np.polyval(np.polyder(c[::-1]), s)
            d2 = np.polyval(np.polyder(c[::-1], 2), s)
            n = max(n, newton_steps(d1, d2, bracket))
        return n

    def _selected(self, xc) -> tuple:
        cx, cy = self.coefficients
        bounds = [p[5] for p in self.x_points[:-1]]
        CX = [_select(xc, bounds, list(cx[:, k])) for k in range(6)]
        CY = [_select(xc, bounds, list(cy[:, k])) for k in range(6)]
        return CX, CY

    def parameter(self, x) -> tuple:
        """(s, X coefficients, Y coefficients) of the Bezier point above x (symengine; x is
        clamped to the domain)."""
        xc = se.Piecewise((_num(self.x0), se.Lt(x, _num(self.x0))),
                          (_num(self.x1), se.Lt(_num(self.x1), x)), (x, se.true))
        CX, CY = self._selected(xc)
        s = _bracket_and_polish(lambda s: _horner(CX, s) - xc, lambda s: _horner_d(CX, s),
                                xc, BISECTION_STEPS, self.newton_count)
        return s, CX, CY

    def expressions(self, x) -> tuple:
        """(y(x), dy/dx(x)) as symengine expressions of the expression ``x``."""
        s, CX, CY = self.parameter(x)
        inside_y = _horner(CY, s)
        inside_d = _horner_d(CY, s) / _horner_d(CX, s)
        below, above = se.Lt(x, _num(self.x0)), se.Lt(_num(self.x1), x)
        y = se.Piecewise((_num(self.y0) + _num(self.dydx0) * (x - _num(self.x0)), below),
                         (_num(self.y1) + _num(self.dydx1) * (x - _num(self.x1)), above),
                         (inside_y, se.true))
        d = se.Piecewise((_num(self.dydx0), below), (_num(self.dydx1), above),
                         (inside_d, se.true))
        return y, d

    @cached_property
    def _kernel(self):
        import sympy as sm

        from ...compilation.codegen import compile_kernel
        x = se.Symbol("x")
        return compile_kernel([sm.Symbol("x")], list(self.expressions(x)), backend="c",
                              name=f"bezier_{self.segments}")

    def __call__(self, x, derivative: int = 0) -> np.ndarray:
        """y (``derivative`` 0) or dy/dx (1) at the points x (array), from the compiled
        :meth:`expressions`."""
        if derivative not in (0, 1):
            raise ValueError(f"derivative must be 0 or 1, got {derivative}")
        xs = np.asarray(x, dtype=float)
        out = self._kernel.many(xs.reshape(-1, 1))[:, derivative]
        return out.reshape(xs.shape) if xs.ndim else float(out[0])

    def swapped(self, name: str | None = None) -> BezierCurve:
        """The inverse curve x(y) (the same control points, roles swapped; the end slopes
        1/slope)."""
        return BezierCurve(self.y_points, self.x_points, self.y0, self.y1, self.x0, self.x1,
                           1.0 / self.dydx0, 1.0 / self.dydx1, name or self.name + "_inverse")


def solve_combination(curve: BezierCurve, alpha, beta: float, rhs, alpha_max: float = 1.0):
    """(v, y(v)) solving α y(v) + β v = r for the curve y(v) (non-decreasing, its end slopes
    0 or more), β > 0 and 0 <= α <= ``alpha_max`` (symengine expressions α, r): the left side
    is increasing, so the segment is found by comparing r with its values at the knots, the
    end lines are solved in closed form and a segment by bisection and Newton in its
    parameter on α Y(s) + β X(s) - r (the Newton bound taken over α in [0, alpha_max])."""
    if beta <= 0:
        raise ValueError(f"{curve.name}: the damping β must be positive, got {beta}")
    cx, cy = curve.coefficients
    knots_x = [curve.x0] + [p[5] for p in curve.x_points]
    knots_y = [curve.y0] + [p[5] for p in curve.y_points]
    bracket = 2.0 ** -(BISECTION_STEPS + 1)
    grid = np.linspace(-bracket, 1 + bracket, 4001)
    newton = 1
    for kx, ky in zip(cx, cy):
        X1, X2 = np.polyval(np.polyder(kx[::-1]), grid), np.polyval(np.polyder(kx[::-1], 2), grid)
        Y1, Y2 = np.polyval(np.polyder(ky[::-1]), grid), np.polyval(np.polyder(ky[::-1], 2), grid)
        for a in (0.0, alpha_max):
            newton = max(newton, newton_steps(a * Y1 + beta * X1, np.abs(a * Y2) +
                                              beta * np.abs(X2), bracket))
    b = _num(beta)
    h = [alpha * _num(y) + b * _num(x) for x, y in zip(knots_x, knots_y)]
    ends = []
    # below and above the domain: α (y_e + y_e' (v - x_e)) + β v = r, a line
    for xe, ye, de in ((curve.x0, curve.y0, curve.dydx0), (curve.x1, curve.y1, curve.dydx1)):
        v = (rhs - alpha * _num(ye - de * xe)) / (alpha * _num(de) + b)
        ends.append((v, _num(ye) + _num(de) * (v - _num(xe))))
    # inside: the segment's coefficients chosen by r against the knots' values, one solve
    conds = [se.Lt(rhs, hk) for hk in h[1:-1]]

    def pick(values):
        if all(v == values[0] for v in values):
            return _num(values[0])
        return se.Piecewise(*zip([_num(v) for v in values[:-1]], conds),
                            (_num(values[-1]), se.true))

    CX = [pick(list(cx[:, k])) for k in range(6)]
    CY = [pick(list(cy[:, k])) for k in range(6)]
    G = [alpha * CY[k] + b * CX[k] for k in range(6)]
    G[0] = G[0] - rhs
    s = _bracket_and_polish(lambda s: _horner(G, s), lambda s: _horner_d(G, s), rhs,
                            BISECTION_STEPS, newton)
    below, inside = se.Lt(rhs, h[0]), se.Lt(rhs, h[-1])
    v = se.Piecewise((ends[0][0], below), (_horner(CX, s), inside), (ends[1][0], se.true))
    y = se.Piecewise((ends[0][1], below), (_horner(CY, s), inside), (ends[1][1], se.true))
    return v, y
