"""OpenSim's functions of coordinates as symbolic expressions equal to OpenSim's numbers.

A ``TransformAxis`` of a ``CustomJoint``, a ``CoordinateCouplerConstraint`` and a prescribed
coordinate carry an OpenSim ``Function``.  Each class here reads one function type from the
XML and gives its value as a symengine expression of the arguments (and as a float, the same
arithmetic in Python):

- ``Constant``: c;  ``LinearFunction`` (a, b): a x + b;
- ``PolynomialFunction`` (c_n, ..., c_0, highest power first): Horner's form;
- ``SimmSpline`` (and the old name ``NaturalCubicSpline``, which OpenSim reads as SimmSpline):
  the cubic spline of SIMM (Forsythe, Malcolm & Moler's end conditions: third derivatives
  at the ends from divided differences), as a Piecewise (every piece with its own condition: the kernels take
  it as it is) of the cubics
  y_k + d (b_k + d (c_k + d d_k)), d = x - x_k, on [x_k, x_k+1] and straight lines of slope
  b_0, b_(n-1) outside [x_0, x_(n-1)] (OpenSim extrapolates linearly);
- ``PiecewiseLinearFunction``: the polygon, extrapolated with the end slopes;
- ``StepFunction`` (SimTK::Function::Step): y0 + (y1 - y0) s^3 (10 - 15 s + 6 s^2),
  s = (x - x0)/(x1 - x0) clipped to [0, 1];
- ``MultiplierFunction``: scale f(x);
- ``Sine``: amplitude sin(omega x + phase) + offset;
- ``PiecewiseConstantFunction``: y_k on [x_k, x_k+1] (the value at the left end), y_0 at
  and before x_0 and y_(n-1) at and after x_(n-1) (OpenSim's binary search, its ends equal
  within 2e-13);
- ``GCVSpline`` of degree 1 (``half_order`` 1) through its points (``error_variance`` 0): the
  polygon, constant outside [x_0, x_(n-1)] (Simbody's natural spline of degree 1; its own
  evaluation differs in the last bits); smoothing and higher-degree GCVSplines are refused.

Any other function type is refused with its name and line.
"""

from __future__ import annotations

import numpy as np
import symengine as se

from .xml_tree import OsimElement

__all__ = ["OsimFunction", "parse_function", "function_of", "SUPPORTED_FUNCTIONS",
           "simm_spline_coefficients"]

TINY_NUMBER = 1e-7      # OpenSim's TINY_NUMBER (rdMath.h): the smallest knot spacing used


def _knot(v: float):
    """A number in a Piecewise condition: always a double (symengine decides 2.0 <= 2 as
    False when the 2 is an Integer)."""
    return se.RealDouble(float(v))


def _num(v: float):
    v = float(v)
    if v == 0.0:
        return se.Integer(0)
    if v == round(v) and abs(v) < 1e6:
        return se.Integer(int(round(v)))
    return se.RealDouble(v)


class OsimFunction:
    """A function of ``nargs`` arguments read from an OpenSim file (``element``, ``kind``)."""

    kind = ""
    nargs = 1

    def __init__(self, element: OsimElement):
        self.element = element

    def expression(self, args: list):
        """The value as a symengine expression of ``args`` (symengine expressions)."""
        raise NotImplementedError

    def value(self, *x: float) -> float:
        """The value at numbers ``x`` (float arithmetic, OpenSim's formula)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{self.kind} (line {self.element.line})>"


class ConstantFunction(OsimFunction):
    kind = "Constant"
    nargs = 0

    def __init__(self, element: OsimElement):
        super().__init__(element)
        self.c = element.number("value", 0.0)

    def expression(self, args):
        return _num(self.c)

    def value(self, *x):
        return self.c


class LinearFunctionOsim(OsimFunction):
    kind = "LinearFunction"

    def __init__(self, element: OsimElement):
        super().__init__(element)
        c = element.numbers("coefficients", default=(1.0, 0.0))
        if c.size != 2:
            raise element.error(f"<coefficients> must be 2 numbers (slope, intercept), got {c.size}")
        self.a, self.b = float(c[0]), float(c[1])

    def expression(self, args):
        return _num(self.a) * args[0] + _num(self.b)

    def value(self, *x):
        return self.a * x[0] + self.b


class PolynomialFunctionOsim(OsimFunction):
    kind = "PolynomialFunction"

    def __init__(self, element: OsimElement):
        super().__init__(element)
        c = element.numbers("coefficients", default=(1.0,))
        if c.size == 0:
            raise element.error("<coefficients> is empty")
        self.coefficients = [float(v) for v in c]

    def expression(self, args):
        x = args[0]
        acc = _num(self.coefficients[0])
        for c in self.coefficients[1:]:
            acc = acc * x + _num(c)
        return acc

    def value(self, *x):
        acc = self.coefficients[0]
        for c in self.coefficients[1:]:
            acc = acc * x[0] + c
        return acc


def simm_spline_coefficients(x: np.ndarray, y: np.ndarray) -> tuple:
    """(b, c, d) of OpenSim's SimmSpline::calcCoefficients (each n), line for line."""
    n = x.size
    b, c, d = np.zeros(n), np.zeros(n), np.zeros(n)
    if n == 2:
        t = max(TINY_NUMBER, x[1] - x[0])
        b[0] = b[1] = (y[1] - y[0]) / t
        return b, c, d
    nm1, nm2 = n - 1, n - 2
    d[0] = max(TINY_NUMBER, x[1] - x[0])
    c[1] = (y[1] - y[0]) / d[0]
    for i in range(1, nm1):
        d[i] = max(TINY_NUMBER, x[i + 1] - x[i])
        b[i] = 2.0 * (d[i - 1] + d[i])
        c[i + 1] = (y[i + 1] - y[i]) / d[i]
        c[i] = c[i + 1] - c[i]
    b[0] = -d[0]
    b[nm1] = -d[nm2]
    c[0] = 0.0
    c[nm1] = 0.0
    if n > 3:
        d31 = max(TINY_NUMBER, x[3] - x[1])
        d20 = max(TINY_NUMBER, x[2] - x[0])
        d1 = max(TINY_NUMBER, x[nm1] - x[n - 3])
        d2 = max(TINY_NUMBER, x[nm2] - x[n - 4])
        d30 = max(TINY_NUMBER, x[3] - x[0])
        d3 = max(TINY_NUMBER, x[nm1] - x[n - 4])
        c[0] = c[2] / d31 - c[1] / d20
        c[nm1] = c[nm2] / d1 - c[n - 3] / d2
        c[0] = c[0] * d[0] * d[0] / d30
        c[nm1] = -c[nm1] * d[nm2] * d[nm2] / d3
    for i in range(1, n):
        t = d[i - 1] / b[i - 1]
        b[i] -= t * d[i - 1]
        c[i] -= t * c[i - 1]
    c[nm1] /= b[nm1]
    for j in range(nm1):
        i = nm2 - j
        c[i] = (c[i] - d[i] * c[i + 1]) / b[i]
    b[nm1] = (y[nm1] - y[nm2]) / d[nm2] + d[nm2] * (c[nm2] + 2.0 * c[nm1])
    for i in range(nm1):
        b[i] = (y[i + 1] - y[i]) / d[i] - d[i] * (c[i + 1] + 2.0 * c[i])
        d[i] = (c[i + 1] - c[i]) / d[i]
        c[i] *= 3.0
    c[nm1] *= 3.0
    d[nm1] = d[nm2]
    return b, c, d


def _xy(element: OsimElement) -> tuple:
    x = element.numbers("x", default=())
    y = element.numbers("y", default=())
    if x.size != y.size:
        raise element.error(f"<x> has {x.size} values but <y> has {y.size}")
    if x.size < 1:
        raise element.error("no points (<x> and <y> are empty)")
    if np.any(np.diff(x) <= 0):
        raise element.error("<x> must increase strictly")
    if x.size == 1:       # OpenSim: a constant (a second point one unit to the right)
        x, y = np.array([x[0], x[0] + 1.0]), np.array([y[0], y[0]])
    return x, y


class SimmSplineFunction(OsimFunction):
    kind = "SimmSpline"

    def __init__(self, element: OsimElement):
        super().__init__(element)
        self.x, self.y = _xy(element)
        self.b, self.c, self.d = simm_spline_coefficients(self.x, self.y)

    def expression(self, args):
        x = args[0]
        X, Y, b, c, d = self.x, self.y, self.b, self.c, self.d
        n = X.size
        pieces = [(_num(Y[0]) + (x - _num(X[0])) * _num(b[0]), se.Lt(x, _knot(X[0])))]
        for k in range(n - 1):
            dx = x - _num(X[k])
            cubic = _num(Y[k]) + dx * (_num(b[k]) + dx * (_num(c[k]) + dx * _num(d[k])))
            pieces.append((cubic, se.Le(x, _knot(X[k + 1]))))
        pieces.append((_num(Y[n - 1]) + (x - _num(X[n - 1])) * _num(b[n - 1]),
                       se.Lt(_knot(X[n - 1]), x)))
        return se.Piecewise(*pieces)

    def value(self, *xs):
        xv = float(xs[0])
        X, Y, b, c, d = self.x, self.y, self.b, self.c, self.d
        n = X.size
        if xv < X[0]:
            return Y[0] + (xv - X[0]) * b[0]
        if xv > X[n - 1]:
            return Y[n - 1] + (xv - X[n - 1]) * b[n - 1]
        k = min(max(int(np.searchsorted(X, xv, side="left")) - 1, 0), n - 2)
        dx = xv - X[k]
        return Y[k] + dx * (b[k] + dx * (c[k] + dx * d[k]))


class PiecewiseLinearFunctionOsim(OsimFunction):
    kind = "PiecewiseLinearFunction"

    def __init__(self, element: OsimElement):
        super().__init__(element)
        self.x, self.y = _xy(element)
        X, Y = self.x, self.y
        n = X.size
        self.b = np.zeros(n)
        for i in range(n - 1):
            self.b[i] = (Y[i + 1] - Y[i]) / max(TINY_NUMBER, X[i + 1] - X[i])
        self.b[n - 1] = self.b[n - 2]

    def expression(self, args):
        x = args[0]
        X, Y, b = self.x, self.y, self.b
        n = X.size
        pieces = [(_num(Y[0]) + (x - _num(X[0])) * _num(b[0]), se.Lt(x, _knot(X[0])))]
        for k in range(n - 1):
            pieces.append((_num(Y[k]) + (x - _num(X[k])) * _num(b[k]), se.Le(x, _knot(X[k + 1]))))
        pieces.append((_num(Y[n - 1]) + (x - _num(X[n - 1])) * _num(b[n - 1]),
                       se.Lt(_knot(X[n - 1]), x)))
        return se.Piecewise(*pieces)

    def value(self, *xs):
        xv = float(xs[0])
        X, Y, b = self.x, self.y, self.b
        n = X.size
        if xv < X[0]:
            return Y[0] + (xv - X[0]) * b[0]
        if xv > X[n - 1]:
            return Y[n - 1] + (xv - X[n - 1]) * b[n - 1]
        k = min(max(int(np.searchsorted(X, xv, side="left")) - 1, 0), n - 2)
        return Y[k] + (xv - X[k]) * b[k]


class StepFunctionOsim(OsimFunction):
    kind = "StepFunction"

    def __init__(self, element: OsimElement):
        super().__init__(element)
        self.x0 = element.number("transition_start_time", 0.99)
        self.x1 = element.number("transition_end_time", 1.01)
        self.y0 = element.number("start_value", 0.0)
        self.y1 = element.number("end_value", 1.0)
        if not self.x1 > self.x0:
            raise element.error("transition_end_time must be greater than transition_start_time")

    def expression(self, args):
        x = args[0]
        s = (x - _num(self.x0)) / _num(self.x1 - self.x0)
        smooth = s ** 3 * (10 - 15 * s + 6 * s ** 2)
        x0, x1 = _knot(self.x0), _knot(self.x1)
        step = se.Piecewise((se.Integer(0), se.Le(x, x0)), (se.Integer(1), se.Le(x1, x)),
                            (smooth, se.And(se.Lt(x0, x), se.Lt(x, x1))))
        return _num(self.y0) + _num(self.y1 - self.y0) * step

    def value(self, *xs):
        x = float(xs[0])
        if x <= self.x0:
            s = 0.0
        elif x >= self.x1:
            s = 1.0
        else:
            t = (x - self.x0) / (self.x1 - self.x0)
            s = t ** 3 * (10 - 15 * t + 6 * t * t)
        return self.y0 + (self.y1 - self.y0) * s


class MultiplierFunctionOsim(OsimFunction):
    kind = "MultiplierFunction"

    def __init__(self, element: OsimElement):
        super().__init__(element)
        self.scale = element.number("scale", 1.0)
        inner = element.find("function")
        if inner is not None:
            inner_el = inner.children[0] if inner.children else None
        else:
            inner_el = next((c for c in element.children if c.tag in SUPPORTED_FUNCTIONS
                             or c.name == "function"), None)
        if inner_el is None:
            raise element.error("no inner <function>")
        self.inner = parse_function(inner_el)
        self.nargs = self.inner.nargs

    def expression(self, args):
        return _num(self.scale) * self.inner.expression(args)

    def value(self, *x):
        return self.inner.value(*x) * self.scale


class SineFunction(OsimFunction):
    kind = "Sine"

    def __init__(self, element: OsimElement):
        super().__init__(element)
        self.amplitude = element.number("amplitude", 1.0)
        self.omega = element.number("omega", 1.0)
        self.phase = element.number("phase", 0.0)
        self.offset = element.number("offset", 0.0)

    def expression(self, args):
        return (_num(self.amplitude) * se.sin(_num(self.omega) * args[0] + _num(self.phase))
                + _num(self.offset))

    def value(self, *x):
        return self.amplitude * float(np.sin(self.omega * float(x[0]) + self.phase)) \
            + self.offset


ROUNDOFF_ERROR = 2e-13     # OpenSim's ROUNDOFF_ERROR (SimmMacros.h): EQUAL_WITHIN_ERROR


class PiecewiseConstantFunctionOsim(OsimFunction):
    kind = "PiecewiseConstantFunction"

    def __init__(self, element: OsimElement):
        super().__init__(element)
        self.x = element.numbers("x", default=())
        self.y = element.numbers("y", default=())
        if self.x.size != self.y.size:
            raise element.error(f"<x> has {self.x.size} values but <y> has {self.y.size}")
        if self.x.size < 2:
            raise element.error("needs 2 or more points (<x> and <y>)")
        if np.any(np.diff(self.x) <= 0):
            raise element.error("<x> must increase strictly")

    def expression(self, args):
        x = args[0]
        X, Y = self.x, self.y
        n = X.size
        pieces = [(_num(Y[0]), se.Le(x, _knot(X[0] + ROUNDOFF_ERROR))),
                  (_num(Y[n - 1]), se.Le(_knot(X[n - 1] - ROUNDOFF_ERROR), x))]
        # at an inner knot OpenSim's search gives the value of one side or the other
        pieces += [(_num(self.value(X[k])), se.Eq(x, _knot(X[k]))) for k in range(1, n - 1)]
        pieces += [(_num(Y[k]), se.Lt(x, _knot(X[k + 1]))) for k in range(n - 1)]
        pieces.append((_num(Y[n - 1]), se.true))
        return se.Piecewise(*pieces)

    def value(self, *xs):
        x = float(xs[0])
        X, Y = self.x, self.y
        n = X.size
        if x < X[0] or abs(x - X[0]) <= ROUNDOFF_ERROR:
            return float(Y[0])
        if x > X[n - 1] or abs(x - X[n - 1]) <= ROUNDOFF_ERROR:
            return float(Y[n - 1])
        i, j = 0, n                 # OpenSim's binary search, line for line
        while True:
            k = (i + j) // 2
            if x < X[k]:
                j = k
            elif x > X[k + 1]:
                i = k
            else:
                return float(Y[k])

    @classmethod
    def from_points(cls, x: np.ndarray, y: np.ndarray, element: OsimElement) -> OsimFunction:
        """The step function of (x, y) (as OpenSim makes one from a table)."""
        f = cls.__new__(cls)
        OsimFunction.__init__(f, element)
        f.x, f.y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        return f


class GCVSplineOsim(OsimFunction):
    kind = "GCVSpline"

    def __init__(self, element: OsimElement):
        super().__init__(element)
        half = element.number("half_order", 0.0)
        variance = element.number("error_variance", 0.0)
        if half != 1 or variance != 0:
            raise element.error(
                f"a GCVSpline of half_order {half:g} (degree {2 * half - 1:g}) with "
                f"error_variance {variance:g} has no exact evaluation in symbody (supported: "
                "half_order 1 with error_variance 0, the polygon through the points)")
        self.x, self.y = _xy(element)

    def expression(self, args):
        x = args[0]
        X, Y = self.x, self.y
        n = X.size
        pieces = [(_num(Y[0]), se.Lt(x, _knot(X[0])))]
        for k in range(n - 1):
            slope = (Y[k + 1] - Y[k]) / (X[k + 1] - X[k])
            pieces.append((_num(Y[k]) + (x - _num(X[k])) * _num(slope),
                           se.Le(x, _knot(X[k + 1]))))
        pieces.append((_num(Y[n - 1]), se.true))
        return se.Piecewise(*pieces)

    def value(self, *xs):
        return float(np.interp(float(xs[0]), self.x, self.y))

    @classmethod
    def from_points(cls, x: np.ndarray, y: np.ndarray, element: OsimElement) -> OsimFunction:
        """The degree-1 spline through (x, y) (as OpenSim makes one from a table)."""
        f = cls.__new__(cls)
        OsimFunction.__init__(f, element)
        f.x, f.y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        return f


SUPPORTED_FUNCTIONS = {
    "Constant": ConstantFunction,
    "LinearFunction": LinearFunctionOsim,
    "PolynomialFunction": PolynomialFunctionOsim,
    "SimmSpline": SimmSplineFunction,
    "NaturalCubicSpline": SimmSplineFunction,
    "PiecewiseLinearFunction": PiecewiseLinearFunctionOsim,
    "StepFunction": StepFunctionOsim,
    "MultiplierFunction": MultiplierFunctionOsim,
    "Sine": SineFunction,
    "PiecewiseConstantFunction": PiecewiseConstantFunctionOsim,
    "GCVSpline": GCVSplineOsim,
}


def parse_function(element: OsimElement) -> OsimFunction:
    """The function of an XML element whose tag is the function type."""
    cls = SUPPORTED_FUNCTIONS.get(element.tag)
    if cls is None:
        raise element.error(f"the function type {element.tag} is not supported (supported: "
                            f"{', '.join(sorted(SUPPORTED_FUNCTIONS))})")
    return cls(element)


def function_of(owner: OsimElement, tag: str = "function") -> OsimFunction | None:
    """The function held by ``owner``: a 3.x ``<tag><Type>...</Type></tag>`` wrapper or a 4.x
    ``<Type name="tag">`` child; None when there is none (an empty wrapper)."""
    wrapper = owner.find(tag)
    if wrapper is not None and wrapper.tag == tag and tag not in SUPPORTED_FUNCTIONS:
        if not wrapper.children:
            return None
        return parse_function(wrapper.children[0])
    for c in owner.children:
        if c.name == tag and c.tag not in ("Coordinate",):
            return parse_function(c)
    return None
