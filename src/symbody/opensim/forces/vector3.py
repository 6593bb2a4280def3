"""Three-vectors of symengine expressions (lists of 3) and the branch helpers the force
builders use to write OpenSim's algorithms (wrapping, muscle curves) as exact expressions.

``where(c, a, b)`` is OpenSim's ``if (c) a else b``: a ``Piecewise`` whose last piece has the
negated condition (no ``True`` piece, as :mod:`..functions` writes them).  ``choose(c, a, b)``
is the same for long Boolean conditions (wrapping): ``c`` becomes an arithmetic indicator
(``indicator``: a relation is Piecewise((1, rel), (0, True)), And = p q, Or = 1 - (1-p)(1-q),
Not = 1 - p, Xor = p + q - 2 p q), so the only conditions left are single relations of
expressions that symengine's cse shares (it does not enter And/Or conditions).
"""

from __future__ import annotations

import symengine as se

from ..mobilizers import ZERO, num

__all__ = ["add", "sub", "scale", "dot", "cross", "norm", "normalize", "where", "where3",
           "sign_is", "num", "ZERO", "F", "indicator", "choose", "choose3"]


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


def indicator(cond, _cache: dict | None = None):
    """The 0/1 expression of the Boolean ``cond`` (relations, And, Or, Not, Xor, true/false)."""
    cache = {} if _cache is None else _cache
    hit = cache.get(cond)
    if hit is not None:
        return hit
    kind = type(cond).__name__
    if cond is se.true or cond == se.true:
        out = F(1.0)
    elif cond is se.false or cond == se.false:
        out = F(0.0)
    elif kind in ("StrictLessThan", "LessThan", "Equality", "Unequality"):
        out = se.Piecewise((F(1.0), cond), (F(0.0), se.true))
    else:
        parts = [indicator(a, cache) for a in cond.args]
        if kind == "And":
            out = F(1.0)
            for p in parts:
                out = out * p
        elif kind == "Or":
            rest = F(1.0)
            for p in parts:
                rest = rest * (1 - p)
            out = 1 - rest
        elif kind == "Not":
            out = 1 - parts[0]
        elif kind == "Xor":
            out = parts[0]
            for p in parts[1:]:
                out = out + p - 2 * out * p
        else:
            raise TypeError(f"no indicator for the condition {cond} ({kind})")
    cache[cond] = out
    return out


def choose(cond, a, b, _cache: dict | None = None):
    """``a`` where the Boolean ``cond`` holds, else ``b``: a Piecewise on its indicator, whose
    last piece is ``True`` (a comparison with a NaN of a branch not taken is false, as in C;
    symengine's lambda backend crashes on a Piecewise where no piece holds)."""
    if cond is se.true or cond == se.true:
        return a
    if cond is se.false or cond == se.false:
        return b
    if a == b:
        return a
    ind = indicator(cond, _cache)
    return se.Piecewise((a, se.Gt(ind, F(0.5))), (b, se.true))


def choose3(cond, a, b, _cache: dict | None = None) -> list:
    return [choose(cond, x, y, _cache) for x, y in zip(a, b)]
