"""The spatial algebra of the emitted tree recursions (:mod:`.articulated_body`).

Conventions of :mod:`.dynamics`: spatial vectors in body coordinates, angular part first.
An articulated inertia is a symmetric 6x6 ``[[A, B], [Bᵀ, C]]`` (A, C symmetric 3x3)
mapping a motion (ω, v) to a force (n, f) = (A ω + B v, Bᵀ ω + C v); a body's joint is its
numeric placement (R_p, p_p) in the parent followed by the joint motion (a rotation about
the axis, or a translation along it).  Everything is written over an :class:`Algebra` (how
constants, sin and cos are made), so the same code gives symengine expressions with the
robot's numbers folded in (:data:`SYMENGINE`), plain floats (:data:`FLOATS`) or another
symbolic type.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import symengine as se

from .dynamics import _add, _cross, _dot, _mtv, _mv, _scale, num

__all__ = ["Algebra", "SYMENGINE", "FLOATS", "Inertia6", "JointTransform", "ldl_solve",
           "add", "cross", "dot", "mtv", "scale", "vbox"]

#: 3-vector helpers of :mod:`.dynamics`: a + b, a × b, a · b, Aᵀ x, s a
add, cross, dot, mtv, scale = _add, _cross, _dot, _mtv, _scale


@dataclass(frozen=True)
class Algebra:
    """How the recursion makes its scalars: ``const(value)`` for a number of the robot
    (placements, axes; exact zeros and ones should fold away), ``sin``, ``cos``, and
    ``box(x)``: x as one value for the rest of the recursion (symengine merges a sum added
    to another sum into one flat sum, which would repeat a quantity's terms wherever it is
    used)."""

    const: Callable[[float], Any]
    sin: Callable[[Any], Any]
    cos: Callable[[Any], Any]
    box: Callable[[Any], Any] = lambda x: x


_ONE = se.RealDouble(1.0)
_MINUS_ONE = se.RealDouble(-1.0)


#: {sum: sum} of the sums boxed while :func:`interned_sums` is active
_INTERNED: ContextVar[dict | None] = ContextVar("interned_sums", default=None)


@contextmanager
def interned_sums() -> Iterator[None]:
    """Within it, :data:`SYMENGINE`'s box keeps each sum once up to its sign (hash-consing): a
    sum equal to one boxed before, or to its negative, becomes that one (times 1.0 or -1.0).
    Two formations of the same quantities then share their DAGs, and opposite sums formed
    apart (M's entries along a chain of massless links) are one.  symengine compares distinct
    equal DAGs node by node (a tree walk), and it hashes a double by its low 32 bits only (c,
    -c and 2c collide), so without it a kernel holding both copies took minutes to form and
    convert (iCub's and the human's forward-dynamics derivatives)."""
    token = _INTERNED.set({})
    try:
        yield
    finally:
        _INTERNED.reset(token)


def _box_symengine(x):
    """A sum kept as one value: symengine merges a sum added to another sum into one flat
    sum, so a quantity used in many places would be summed again in each; 1.0 * (sum) is a
    product and stays one node (and C folds the product by 1.0 away)."""
    if not isinstance(x, se.Add):
        return x
    table = _INTERNED.get()
    if table is None:
        return _ONE * x
    got = table.get(x)
    if got is not None:
        return _ONE * got
    got = table.get(se.Add(*[-t for t in x.args]))      # -x as a sum (-(x) is a product)
    if got is not None:
        return _MINUS_ONE * got
    table[x] = x
    return _ONE * x


def _sin(x):
    """sin of x as a value of its own (1.0 x: C then loads a joint coordinate once, so the
    compiler merges sin and cos of it into one sincos call)."""
    return se.sin(_ONE * x)


def _cos(x):
    return se.cos(_ONE * x)


#: symengine expressions, the robot's numbers folded (:func:`.dynamics.num`)
SYMENGINE = Algebra(num, _sin, _cos, _box_symengine)
#: plain floats: the recursion evaluated numerically (a reference for tests)
FLOATS = Algebra(float, math.sin, math.cos)


def vbox(box: Callable[[Any], Any], x: Sequence) -> tuple:
    """Each entry of x boxed (see :class:`Algebra`)."""
    return tuple(box(e) for e in x)


def _matvec(M, x) -> tuple:
    return tuple(M[i][0] * x[0] + M[i][1] * x[1] + M[i][2] * x[2] for i in range(3))


def _matmul(X, Y) -> list:
    return [[X[i][0] * Y[0][k] + X[i][1] * Y[1][k] + X[i][2] * Y[2][k] for k in range(3)]
            for i in range(3)]


def _transpose(X) -> list:
    return [[X[k][i] for k in range(3)] for i in range(3)]


def _cross_matrix(p) -> list:
    """[p]x: the matrix of p × ."""
    z = p[0] * 0
    return [[z, -p[2], p[1]], [p[2], z, -p[0]], [-p[1], p[0], z]]


def _symmetric(X) -> list:
    """The upper triangle of X copied to the lower one (X symmetric up to round-off)."""
    return [[X[min(i, k)][max(i, k)] for k in range(3)] for i in range(3)]


class Inertia6:
    """A symmetric 6x6 inertia [[A, B], [Bᵀ, C]] (3x3 nested lists; A and C symmetric),
    angular rows and columns first."""

    __slots__ = ("A", "B", "C")

    def __init__(self, A, B, C):
        self.A, self.B, self.C = A, B, C

    @classmethod
    def rigid(cls, m, h, I) -> Inertia6:
        """A rigid body's (m, first moment h = m c, inertia I_o about the origin)."""
        z = m * 0
        return cls([list(r) for r in I], _cross_matrix(h),
                   [[m, z, z], [z, m, z], [z, z, m]])

    def boxed(self, box) -> Inertia6:
        return Inertia6(*[[[box(x) for x in row] for row in X] for X in (self.A, self.B, self.C)])

    def times(self, w, v) -> tuple:
        """The force (n, f) of the motion (w, v)."""
        return (_add(_matvec(self.A, w), _matvec(self.B, v)),
                _add(_mtv(self.B, w), _matvec(self.C, v)))

    def plus(self, o: Inertia6) -> Inertia6:
        return Inertia6(*[[[X[i][k] + Y[i][k] for k in range(3)] for i in range(3)]
                           for X, Y in ((self.A, o.A), (self.B, o.B), (self.C, o.C))])

    def minus_outer(self, U: tuple, W: tuple) -> Inertia6:
        """I - U Wᵀ for 6-vectors U = (U_w, U_v), W (W ∥ U, so the result stays symmetric)."""
        Uw, Uv = U
        Ww, Wv = W
        A = [[self.A[i][k] - Uw[i] * Ww[k] if k >= i else None for k in range(3)] for i in range(3)]
        C = [[self.C[i][k] - Uv[i] * Wv[k] if k >= i else None for k in range(3)] for i in range(3)]
        B = [[self.B[i][k] - Uw[i] * Wv[k] for k in range(3)] for i in range(3)]
        return Inertia6(_symmetric(A), B, _symmetric(C))

    def rotated(self, R) -> Inertia6:
        """In a frame whose axes are R's columns in this one's: R I Rᵀ, block by block."""
        def sym(X):
            RX = _matmul(R, X)
            return _symmetric([[sum(RX[i][j] * R[k][j] for j in range(3)) if k >= i else None
                                for k in range(3)] for i in range(3)])
        return Inertia6(sym(self.A), _matmul(_matmul(R, self.B), _transpose(R)), sym(self.C))

    def turned(self, plane: tuple, c, s, c2, s2) -> Inertia6:
        """:meth:`rotated` for a rotation by θ about a coordinate axis k, acting on the plane
        (i, j) = (k+1, k+2) mod 3 (c, s: cos θ, sin θ; c2, s2: cos 2θ, sin 2θ): a symmetric
        block's (i, j) corner turns by 2θ (half-sum and half-difference), the rest by θ."""
        i, j = plane
        k = 3 - i - j

        def corner(a, b, d):
            """(a', b', d') of the symmetric 2x2 [[a, b], [b, d]] turned."""
            half_sum, half_diff = (a + d) * 0.5, (a - d) * 0.5
            x = half_diff * c2 - b * s2
            return half_sum + x, half_diff * s2 + b * c2, half_sum - x

        def sym(S):
            out = [row[:] for row in S]
            a, b, d = corner(S[i][i], S[i][j], S[j][j])
            out[i][i], out[j][j] = a, d
            out[i][j] = out[j][i] = b
            out[i][k] = out[k][i] = c * S[i][k] - s * S[j][k]
            out[j][k] = out[k][j] = s * S[i][k] + c * S[j][k]
            return out

        B = self.B
        out = [row[:] for row in B]
        anti = (B[i][j] - B[j][i]) * 0.5
        a, b, d = corner(B[i][i], (B[i][j] + B[j][i]) * 0.5, B[j][j])
        out[i][i], out[j][j], out[i][j], out[j][i] = a, d, b + anti, b - anti
        out[i][k], out[j][k] = c * B[i][k] - s * B[j][k], s * B[i][k] + c * B[j][k]
        out[k][i], out[k][j] = c * B[k][i] - s * B[k][j], s * B[k][i] + c * B[k][j]
        return Inertia6(sym(self.A), out, sym(self.C))

    def shifted(self, p) -> Inertia6:
        """About an origin from which this one's sits at p (same axes): Xᵀ I X with
        X = [[1, 0], [-[p]x, 1]], i.e. A + P Bᵀ - B P - P C P, B + P C, C (P = [p]x)."""
        if all(x == 0 for x in p):
            return self
        P = _cross_matrix(p)
        T = _matmul(P, _transpose(self.B))
        PC = _matmul(P, self.C)
        A = [[self.A[i][k] + T[i][k] + T[k][i]
              - sum(PC[i][j] * P[j][k] for j in range(3)) if k >= i else None
              for k in range(3)] for i in range(3)]
        B = [[self.B[i][k] + PC[i][k] for k in range(3)] for i in range(3)]
        return Inertia6(_symmetric(A), B, self.C)

    def matrix(self) -> list:
        """The 6x6 nested list, angular rows and columns first."""
        A, B, C = self.A, self.B, self.C
        return [A[i] + B[i] for i in range(3)] + [[B[k][i] for k in range(3)] + C[i]
                                                  for i in range(3)]


class JointTransform:
    """A body's joint: the numeric placement (R_p, p_p) in the parent, then the joint motion
    (a rotation Rot(q) about the axis, or a translation d = q a along it)."""

    def __init__(self, body, q, alg: Algebra):
        c = alg.const
        self.R_p = [[c(x) for x in row] for row in body.R_p]
        self.p_p = tuple(c(x) for x in body.p_p)
        self.kind = body.joint.type
        a = body.joint.axis
        self.axis = tuple(c(x) for x in a)
        self.Rot = self.d = self.turn = None
        if self.kind in ("revolute", "continuous"):
            cq, sq = alg.cos(q), alg.sin(q)
            k = [x for x in range(3) if a[x] != 0]
            if len(k) == 1 and abs(a[k[0]]) == 1:     # about a coordinate axis: turned faster
                sk = sq if a[k[0]] > 0 else -sq
                self.turn = (((k[0] + 1) % 3, (k[0] + 2) % 3), cq, sk,
                             alg.box(cq * cq - sk * sk), alg.box(2 * sk * cq))
            K = [[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]]
            # Rodrigues: c 1 + s [a]x + (1 - c) a aᵀ, the numbers folded
            self.Rot = [[c(a[i] * a[k]) + (c(1.0 * (i == k)) - c(a[i] * a[k])) * cq + c(K[i][k]) * sq
                         for k in range(3)] for i in range(3)]
        elif self.kind == "prismatic":
            self.d = _scale(q, self.axis)

    @property
    def revolute(self) -> bool:
        return self.Rot is not None

    def motion(self, w, v) -> tuple:
        """A parent motion in this body's coordinates."""
        wj = _mtv(self.R_p, w)
        vj = _mtv(self.R_p, _add(v, _cross(w, self.p_p)))
        if self.Rot is not None:
            return _mtv(self.Rot, wj), _mtv(self.Rot, vj)
        return wj, _add(vj, _cross(wj, self.d))

    def force(self, n, f) -> tuple:
        """A force on this body in the parent's coordinates (about the parent's origin)."""
        if self.Rot is not None:
            n, f = _mv(self.Rot, n), _mv(self.Rot, f)
        else:
            n = _add(n, _cross(self.d, f))
        fp = _mv(self.R_p, f)
        return _add(_mv(self.R_p, n), _cross(self.p_p, fp)), fp

    def inertia(self, I: Inertia6) -> Inertia6:
        """An articulated inertia of this body in the parent's coordinates."""
        if self.turn is not None:
            I = I.turned(*self.turn)
        else:
            I = I.rotated(self.Rot) if self.Rot is not None else I.shifted(self.d)
        return I.rotated(self.R_p).shifted(self.p_p)

    def subspace_dot(self, w, v):
        """Sᵀ (w, v): the component along the joint's motion."""
        return _dot(self.axis, w) if self.Rot is not None else _dot(self.axis, v)

    def along(self, x) -> tuple:
        """S x as a motion (w, v)."""
        z = x * 0
        s = _scale(x, self.axis)
        return (s, (z, z, z)) if self.Rot is not None else ((z, z, z), s)


def ldl_solve(M: Sequence[Sequence[Any]], b: Sequence[Any]) -> list:
    """x of M x = b for a symmetric positive definite M (k x k nested lists, the lower triangle
    read) by M = L D Lᵀ without pivoting, written out for any scalar type."""
    k = len(b)
    L = [[None] * k for _ in range(k)]
    D, Dinv = [None] * k, [None] * k
    for j in range(k):
        d = M[j][j]
        for s in range(j):
            d = d - L[j][s] * L[j][s] * D[s]
        D[j], Dinv[j] = d, 1 / d
        for i in range(j + 1, k):
            e = M[i][j]
            for s in range(j):
                e = e - L[i][s] * L[j][s] * D[s]
            L[i][j] = e * Dinv[j]
    y = list(b)
    for i in range(k):
        for s in range(i):
            y[i] = y[i] - L[i][s] * y[s]
    x = [y[i] * Dinv[i] for i in range(k)]
    for i in range(k - 1, -1, -1):
        for s in range(i + 1, k):
            x[i] = x[i] - L[s][i] * x[s]
    return x
