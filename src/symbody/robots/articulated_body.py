"""Forward dynamics of a kinematic tree in O(n): the articulated-body algorithm, emitted.

The same conventions as :mod:`.dynamics` (spatial vectors in body coordinates, angular part
first; a body's joint of subspace S_i, axis a_i; gravity as a base acceleration).  An
articulated inertia is a symmetric 6x6 ``[[A, B], [Bᵀ, C]]`` (A, C symmetric 3x3) mapping a
motion (ω, v) to a force (n, f) = (A ω + B v, Bᵀ ω + C v).  Featherstone's three passes
(*Rigid Body Dynamics Algorithms*, 2008, table 7.1)::

    out:  v_i = X_i v_λ + S_i u_i,  c_i = v_i ×ₘ S_i u_i,  I^A_i = I_i,
          p^A_i = v_i ×* I_i v_i - f^ext_i
    in:   U_i = I^A_i S_i,  D_i = S_iᵀ U_i,  u_i = Q_i - S_iᵀ p^A_i,
          I^A_λ += X_iᵀ (I^A_i - U_i U_iᵀ / D_i) X_i,
          p^A_λ += X_iᵀ (p^A_i + I^a_i c_i + U_i u_i / D_i)
    out:  a'_i = X_i a_λ + c_i,  u'_i = (u_i - U_iᵀ a'_i) / D_i,  a_i = a'_i + S_i u'_i

with a_0 = -gravity for a fixed base; a free-flyer base (S = 1) gets
a_0 = -(I^A_0)⁻¹ p^A_0 by an LDLᵀ solve of its 6x6 articulated inertia, and its
u' = a_0 - X_0 a_world.  Q_i is the generalized force of joint i (inputs, damping,
friction), f^ext_i an external force on body i (body coordinates, about its origin).

Coupling constraints B u' = b (mimic joints) act through multipliers: u' = u'_free + G λ with
G = M⁻¹ Bᵀ, whose columns are the same inward and outward passes with only the unit
generalized forces (no velocity, no gravity), and (B G) λ = b - B u'_free (LDLᵀ, m x m).

The recursion is written over an :class:`Algebra` (how constants, sin and cos are made),
so one function emits it for any scalar type: symengine expressions with the robot's
numbers folded in (exact zeros and ones vanish from the products, so an axis-aligned
joint costs what its sparsity costs; :data:`SYMENGINE`), plain floats (:data:`FLOATS`, a
numeric reference), or another symbolic type such as CasADi's SX (its own Algebra).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import symengine as se

from .dynamics import _add, _cross, _dot, _mtv, _mv, _scale, num, quaternion_matrix
from .tree import KinematicTree

__all__ = ["Algebra", "SYMENGINE", "FLOATS", "ArticulatedBody", "ldl_solve",
           "tree_forward_dynamics"]


@dataclass(frozen=True)
class Algebra:
    """How the recursion makes its scalars: ``const(value)`` for a number of the robot
    (placements, axes; exact zeros and ones should fold away), ``sin``, ``cos``."""

    const: Callable[[float], Any]
    sin: Callable[[Any], Any]
    cos: Callable[[Any], Any]
    box: Callable[[Any], Any] = lambda x: x


_ONE = se.RealDouble(1.0)


def _box_symengine(x):
    """A sum kept as one value: symengine merges a sum added to another sum into one flat
    sum, so a quantity used in many places would be summed again in each; 1.0 * (sum) is a
    product and stays one node (and C folds the product by 1.0 away)."""
    return _ONE * x if isinstance(x, se.Add) else x


#: symengine expressions, the robot's numbers folded (:func:`.dynamics.num`)
SYMENGINE = Algebra(num, se.sin, se.cos, _box_symengine)
#: plain floats: the recursion evaluated numerically (a reference for tests)
FLOATS = Algebra(float, math.sin, math.cos)


def algebra_box(alg: Algebra, x):
    return alg.box(x)


def _vbox(box, x) -> tuple:
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


class _Inertia6:
    """A symmetric 6x6 inertia [[A, B], [Bᵀ, C]] (3x3 nested lists; A and C symmetric)."""

    __slots__ = ("A", "B", "C")

    def __init__(self, A, B, C):
        self.A, self.B, self.C = A, B, C

    @classmethod
    def rigid(cls, m, h, I) -> _Inertia6:
        """A rigid body's (m, first moment h = m c, inertia I_o about the origin)."""
        z = m * 0
        return cls([list(r) for r in I], _cross_matrix(h),
                   [[m, z, z], [z, m, z], [z, z, m]])

    def boxed(self, box) -> _Inertia6:
        return _Inertia6(*[[[box(x) for x in row] for row in X] for X in (self.A, self.B, self.C)])

    def times(self, w, v) -> tuple:
        """The force (n, f) of the motion (w, v)."""
        return (_add(_matvec(self.A, w), _matvec(self.B, v)),
                _add(_mtv(self.B, w), _matvec(self.C, v)))

    def plus(self, o: _Inertia6) -> _Inertia6:
        return _Inertia6(*[[[X[i][k] + Y[i][k] for k in range(3)] for i in range(3)]
                           for X, Y in ((self.A, o.A), (self.B, o.B), (self.C, o.C))])

    def minus_outer(self, U: tuple, W: tuple) -> _Inertia6:
        """I - U Wᵀ for 6-vectors U = (U_w, U_v), W (W ∥ U, so the result stays symmetric)."""
        Uw, Uv = U
        Ww, Wv = W
        A = [[self.A[i][k] - Uw[i] * Ww[k] if k >= i else None for k in range(3)] for i in range(3)]
        C = [[self.C[i][k] - Uv[i] * Wv[k] if k >= i else None for k in range(3)] for i in range(3)]
        B = [[self.B[i][k] - Uw[i] * Wv[k] for k in range(3)] for i in range(3)]
        return _Inertia6(_symmetric(A), B, _symmetric(C))

    def rotated(self, R) -> _Inertia6:
        """In a frame whose axes are R's columns in this one's: R I Rᵀ, block by block."""
        def sym(X):
            RX = _matmul(R, X)
            return _symmetric([[sum(RX[i][j] * R[k][j] for j in range(3)) if k >= i else None
                                for k in range(3)] for i in range(3)])
        return _Inertia6(sym(self.A), _matmul(_matmul(R, self.B), _transpose(R)), sym(self.C))

    def turned(self, plane: tuple, c, s, c2, s2) -> _Inertia6:
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
        return _Inertia6(sym(self.A), out, sym(self.C))

    def shifted(self, p) -> _Inertia6:
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
        return _Inertia6(_symmetric(A), B, self.C)

    def matrix(self) -> list:
        """The 6x6 nested list, angular rows and columns first."""
        A, B, C = self.A, self.B, self.C
        return [A[i] + B[i] for i in range(3)] + [[B[k][i] for k in range(3)] + C[i]
                                                  for i in range(3)]


class _JointTransform:
    """Body i's joint: the numeric placement (R_p, p_p) in the parent, then the joint motion
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
                             algebra_box(alg, cq * cq - sk * sk), algebra_box(alg, 2 * sk * cq))
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

    def inertia(self, I: _Inertia6) -> _Inertia6:
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


class ArticulatedBody:
    """The articulated-body recursion of a tree at (q, u): pass 1 and the inward pass of the
    articulated inertias made once (``__init__``), then :meth:`accelerations` (u' under the
    generalized forces Q and the external forces) and :meth:`inverse_mass_times` (M⁻¹ τ)
    from them.

    ``q``, ``u``: the coordinates and speeds in tree order (a free-flyer's 7 and 6 first:
    position, quaternion (x, y, z, w); linear then angular velocity in the base frame);
    ``gravity``: the gravity vector (3, world coordinates); ``inertias``: per body
    (m, h (3), I_o (3x3)); ``external``: {body index: (n (3), f (3))} in body coordinates,
    about the body origin, or None.
    """

    def __init__(self, tree: KinematicTree, q: Sequence, u: Sequence, gravity: Sequence,
                 inertias: Sequence, floating: bool, external: dict | None = None,
                 algebra: Algebra = SYMENGINE) -> None:
        self.tree, self.floating, self.alg = tree, floating, algebra
        box = algebra.box
        bodies = tree.bodies
        nb = len(bodies)
        self.off = off = 6 if floating else 0
        qoff = 7 if floating else 0
        zero = algebra.const(0.0)
        Z3 = (zero, zero, zero)
        self.Z3 = Z3
        self.parent = [b.parent for b in bodies]
        self.joints = [None] + [_JointTransform(bodies[i], q[qoff + i - 1], algebra)
                                for i in range(1, nb)]
        I_body = [_Inertia6.rigid(m, tuple(h), I) for (m, h, I) in inertias]
        g_neg = tuple(-x for x in gravity)
        # ---- pass 1: velocities, velocity-product accelerations, bias forces
        V, c, pA = [None] * nb, [None] * nb, [None] * nb
        if floating:
            R = quaternion_matrix(*q[3:7])
            V[0] = (tuple(u[3:6]), tuple(u[0:3]))
            self.a_world = (Z3, _mtv(R, g_neg))      # gravity as a base acceleration
        else:
            V[0] = (Z3, Z3)
            self.a_world = (Z3, g_neg)
        for i in range(1, nb):
            jt = self.joints[i]
            w, v = jt.motion(*V[self.parent[i]])
            Sw, Sv = jt.along(u[off + i - 1])
            w, v = _vbox(box, _add(w, Sw)), _vbox(box, _add(v, Sv))
            V[i] = (w, v)
            # v ×ₘ S u = (w × Sw, w × Sv + v × Sw)
            c[i] = (_vbox(box, _cross(w, Sw)), _vbox(box, _add(_cross(w, Sv), _cross(v, Sw))))
        for i in range(nb):
            if i == 0 and not floating:
                continue
            w, v = V[i]
            n, f = I_body[i].times(w, v)
            pA[i] = (_add(_cross(w, n), _cross(v, f)), _cross(w, f))
            if external and i in external:
                ne, fe = external[i]
                pA[i] = (_add(pA[i][0], _scale(-1, tuple(ne))), _add(pA[i][1], _scale(-1, tuple(fe))))
        # ---- inward: articulated inertias (they depend on q only)
        IA = list(I_body)
        self.U, self.Dinv, self.W = [None] * nb, [None] * nb, [None] * nb
        self.Ia = [None] * nb
        for i in range(nb - 1, 0, -1):
            jt = self.joints[i]
            IA[i] = IA[i].boxed(box)
            Iw, Iv = IA[i].times(*jt.along(algebra.const(1.0)))
            U = (Iw, Iv)
            Dinv = 1 / jt.subspace_dot(Iw, Iv)
            W = (_scale(Dinv, Iw), _scale(Dinv, Iv))
            self.U[i], self.Dinv[i], self.W[i] = U, Dinv, W
            if self.parent[i] == 0 and not floating:
                continue                      # the fixed root's inertia is never used
            Ia = IA[i].minus_outer(U, W).boxed(box)
            self.Ia[i] = Ia
            lam = self.parent[i]
            IA[lam] = IA[lam].plus(jt.inertia(Ia))
        self.IA0 = IA[0].boxed(box)
        self.c, self.pA = c, pA

    def _inward(self, Q: Sequence, pA: list, with_velocity: bool) -> tuple[list, list]:
        """The joint forces u_i = Q_i - Sᵢᵀ p^A_i and the bias forces propagated inward
        (``pA`` is updated in place; ``with_velocity``: include I^a c_i)."""
        nb, off, floating = len(self.parent), self.off, self.floating
        box = self.alg.box
        uf = [None] * nb
        for i in range(nb - 1, 0, -1):
            jt = self.joints[i]
            n, f = pA[i] if pA[i] is not None else (self.Z3, self.Z3)
            n, f = _vbox(box, n), _vbox(box, f)
            ui = Q[off + i - 1] - jt.subspace_dot(n, f)
            uf[i] = ui
            if self.parent[i] == 0 and not floating:
                continue
            Ww, Wv = self.W[i]
            n, f = _add(n, _scale(ui, Ww)), _add(f, _scale(ui, Wv))
            if with_velocity:
                cn, cf = self.Ia[i].times(*self.c[i])
                n, f = _add(n, cn), _add(f, cf)
            pn, pf = jt.force(n, f)
            lam = self.parent[i]
            if pA[lam] is None:
                pA[lam] = (pn, pf)
            else:
                pA[lam] = (_add(pA[lam][0], pn), _add(pA[lam][1], pf))
        return uf, pA

    def _outward(self, uf: list, pA0: Any, Q: Sequence, bias: bool) -> list:
        """u' (tree order) from the joint forces and the root's bias force (``bias``: with
        gravity and the velocity-product accelerations)."""
        Z3, box = self.Z3, self.alg.box
        a_world = self.a_world if bias else (Z3, Z3)
        nb, off = len(self.parent), self.off
        ud = [None] * (off + nb - 1)
        A = [None] * nb
        if self.floating:
            n, f = pA0 if pA0 is not None else (self.Z3, self.Z3)
            # the base's generalized forces: (force, moment) in the base frame
            n, f = _vbox(box, n), _vbox(box, f)
            a0 = ldl_solve(self.IA0.matrix(), [Q[3 + k] - n[k] for k in range(3)]
                           + [Q[k] - f[k] for k in range(3)])
            A[0] = (tuple(a0[0:3]), tuple(a0[3:6]))
            ud[0:3] = [a0[3 + k] - a_world[1][k] for k in range(3)]
            ud[3:6] = [a0[k] - a_world[0][k] for k in range(3)]
        else:
            A[0] = a_world
        children = [0] * nb
        for i in range(1, nb):
            children[self.parent[i]] += 1
        for i in range(1, nb):
            jt = self.joints[i]
            w, v = jt.motion(*A[self.parent[i]])
            if bias:
                w, v = _add(w, self.c[i][0]), _add(v, self.c[i][1])
            Ww, Wv = self.W[i]
            udi = uf[i] * self.Dinv[i] - _dot(Ww, w) - _dot(Wv, v)
            ud[off + i - 1] = udi
            if children[i]:
                Sw, Sv = jt.along(udi)
                A[i] = (_vbox(box, _add(w, Sw)), _vbox(box, _add(v, Sv)))
        return ud

    def accelerations(self, Q: Sequence) -> list:
        """u' (tree order) under the generalized forces ``Q`` (one per speed, tree order)."""
        uf, pA = self._inward(Q, list(self.pA), True)
        return self._outward(uf, pA[0], Q, True)

    def inverse_mass_times(self, tau: Sequence) -> list:
        """M⁻¹ τ (tree order): the passes with τ alone (no velocity, no gravity)."""
        uf, pA = self._inward(tau, [None] * len(self.parent), False)
        return self._outward(uf, pA[0], tau, False)


def tree_forward_dynamics(body: ArticulatedBody, Q: Sequence, constraints: Sequence = ()) -> list:
    """u' (tree order) of the tree under the generalized forces Q, with the coupling
    constraints B u' = 0 given as ``constraints``: rows {tree speed index: coefficient}
    (mimic joints: {j: 1, k: -a}); the constraint forces are Bᵀ λ.

    λ comes from (B M⁻¹ Bᵀ) λ = -B u'_free, which needs u'_free and the columns M⁻¹ Bᵀ only
    at the constrained speeds (paths to the root: the rest of those passes is never used),
    then u' is the recursion once more under Q + Bᵀ λ (its inward pass equals the first one
    away from the constrained joints: the same expressions)."""
    free = body.accelerations(Q)
    if not constraints:
        return free
    const = body.alg.const
    zero = const(0.0)
    o = len(free)

    def B_times(x):
        return [sum((const(coef) * x[k] for k, coef in row.items()), zero) for row in constraints]

    def Bt_times(lam):
        tau = [zero] * o
        for row, l in zip(constraints, lam):
            for k, coef in row.items():
                tau[k] = tau[k] + const(coef) * l
        return tau

    m = len(constraints)
    G = [body.inverse_mass_times(Bt_times([const(1.0 * (r == j)) for r in range(m)]))
         for j in range(m)]
    S = [B_times(G[j]) for j in range(m)]          # S[j][r] = (B M⁻¹ Bᵀ)_rj, symmetric
    lam = ldl_solve([[S[j][r] for j in range(m)] for r in range(m)],
                    [-e for e in B_times(free)])
    lam = [body.alg.box(x) for x in lam]
    return body.accelerations([q + t for q, t in zip(Q, Bt_times(lam))])
