"""Three-vectors of symengine expressions (lists of 3) and the branch helpers the force
builders use to write OpenSim's algorithms (wrapping, muscle curves) as exact expressions.

``where(c, a, b)`` is OpenSim's ``if (c) a else b``: a ``Piecewise`` whose last piece has the
negated condition (no ``True`` piece, as :mod:`..functions` writes them).
"""

from __future__ import annotations

import symengine as se

from ..mobilizers import ZERO, num

__all__ = ["add", "sub", "scale", "dot", "cross", "norm", "normalize", "where", "where3",
           "sign_is", "num", "ZERO", "F"]


def F(v: float):
    """A double constant (never an Integer: conditions compare doubles, see functions.py)."""
    return se.RealDouble(float(v))


def add(a, b) -> list:
    return [a[0] + b[0], a[1] + b[1], a[2] + b[2]]


def sub(a, b) -> list:
    return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]


def scale(s, a) -> list:
    return [s * a[0], s * a[1], s * a[2]]


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a, b) -> list:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def norm(a):
    return se.sqrt(dot(a, a))


def normalize(a) -> list:
    """a / |a| (OpenSim's NormalizeOrZero away from the zero vector)."""
    n = norm(a)
    return [a[0] / n, a[1] / n, a[2] / n]


def where(cond, a, b):
    """``a`` where ``cond`` holds, else ``b`` (a Piecewise; folded when cond is a constant)."""
    if cond is se.true or cond == se.true:
        return a
    if cond is se.false or cond == se.false:
        return b
    if a == b:
        return a
    return se.Piecewise((a, cond), (b, se.Not(cond)))


def where3(cond, a, b) -> list:
    return [where(cond, x, y) for x, y in zip(a, b)]


def sign_is(value, sign: int):
    """OpenSim's ``DSIGN(value) == sign`` (DSIGN(a) = 1 for a >= 0, else -1)."""
    return se.Ge(value, F(0.0)) if sign > 0 else se.Lt(value, F(0.0))
