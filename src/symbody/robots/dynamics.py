"""The equations of a kinematic tree in symengine: composite rigid bodies and Newton-Euler.

Spatial vectors in body coordinates, angular part first: a motion (ω, v) is the angular
velocity and the velocity of the body-frame origin, a force (n, f) the moment about the
origin and the force.  A body's inertia is (m, h = m c, I_o) about its origin; its momentum
is (I_o ω + h × v, m v + ω × h).  With the joint of body i of motion subspace S_i (the axis,
angular for revolute joints, linear for prismatic ones; the identity for a free-flyer)::

    v_i = X_i v_λ(i) + S_i u_i
    a_i = X_i a_λ(i) + S_i u_i' + v_i ×ₘ S_i u_i        (a_0 = -gravity: gravity for free)
    f_i = I_i a_i + v_i ×* I_i v_i,   f_λ += X_iᵀ f_i,   τ_i = S_iᵀ f_i

(recursive Newton-Euler; with u' = 0 it gives the bias C(q, u) u + g(q)), and the mass
matrix by the composite-rigid-body algorithm: I^c_λ += X_iᵀ I^c_i X_i, M_ii = S_iᵀ I^c_i S_i,
M_ij = S_jᵀ (X_j←i)ᵀ I^c_i S_i up the path to the root (Featherstone, *Rigid Body Dynamics
Algorithms*, 2008, ch. 5-6).  X_i is the joint placement (numeric: folded into the
expressions) times the joint motion (sin q, cos q computed once per joint).  Everything
stays a symengine DAG: intermediate quantities are shared, never expanded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import symengine as se

from .tree import KinematicTree

__all__ = ["TreeDynamics", "form_tree_dynamics", "num"]

ZERO = se.Integer(0)


def num(v: float):
    """A numeric constant for symengine: exact 0 and ±integers as Integers (so products with them
    fold away), round-off of an exact zero (|v| < 1e-13) as 0, anything else as a double."""
    v = float(v)
    if abs(v) < 1e-13:
        return ZERO
    if v == round(v) and abs(v) < 1e6:
        return se.Integer(int(round(v)))
    return se.RealDouble(v)


def _nmat(A: np.ndarray) -> list:
    return [[num(x) for x in row] for row in A]


def _mv(A, x) -> tuple:
    return tuple(A[i][0] * x[0] + A[i][1] * x[1] + A[i][2] * x[2] for i in range(3))


def _mtv(A, x) -> tuple:
    return tuple(A[0][i] * x[0] + A[1][i] * x[1] + A[2][i] * x[2] for i in range(3))


def _cross(a, b) -> tuple:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _add(a, b) -> tuple:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


def _scale(s, a) -> tuple:
    return (s * a[0], s * a[1], s * a[2])


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _is_zero(a) -> bool:
    return all(x == 0 for x in a)


@dataclass
class Inertia:
    """(m, h (3), I (3x3 nested, symmetric)) about a frame origin, symengine entries."""

    m: object
    h: tuple
    I: list

    def times(self, w, v) -> tuple:
        """The spatial inertia times the motion (w, v): the force/momentum (n, f)."""
        n = _add(_mv(self.I, w), _cross(self.h, v))
        f = _add(_scale(self.m, v), _cross(w, self.h))
        return n, f


def _rotate_inertia(I: Inertia, R) -> Inertia:
    """The inertia in a frame rotated by R (child axes in parent coordinates), same origin."""
    RI = [[_dot(R[i], (I.I[0][k], I.I[1][k], I.I[2][k])) for k in range(3)] for i in range(3)]
    J = [[None] * 3 for _ in range(3)]
    for i in range(3):
        for k in range(i, 3):
            J[i][k] = J[k][i] = _dot(RI[i], R[k])
    return Inertia(I.m, _mv(R, I.h), J)


def _shift_inertia(I: Inertia, p) -> Inertia:
    """The inertia about a new origin from which the old origin sits at p (same axes), by the
    parallel-axis theorem: h' = h + m p, I' = I + m(|p|^2 1 - p p^T) + 2(h.p) 1 - h p^T - p h^T."""
    if _is_zero(p):
        return I
    m, h = I.m, I.h
    # I' = I + m(|p|^2 1 - p p^T) + (2 (h.p) 1 - h p^T - p h^T), with h the old first moment
    hp = _dot(h, p)
    pp = _dot(p, p)
    J = [[None] * 3 for _ in range(3)]
    for i in range(3):
        for k in range(i, 3):
            e = I.I[i][k] - m * p[i] * p[k] - h[i] * p[k] - p[i] * h[k]
            if i == k:
                e = e + m * pp + 2 * hp
            J[i][k] = J[k][i] = e
    return Inertia(m, _add(h, _scale(m, p)), J)


def _add_inertia(a: Inertia, b: Inertia) -> Inertia:
    return Inertia(a.m + b.m, _add(a.h, b.h),
                   [[a.I[i][k] + b.I[i][k] for k in range(3)] for i in range(3)])


class _Joint:
    """The transform X of one body's joint: numeric placement (R_p, p_p) then the joint motion."""

    def __init__(self, body, q, rot_of_q=None):
        self.R_p = _nmat(body.R_p)
        self.p_p = tuple(num(x) for x in body.p_p)
        self.kind = body.joint.type if body.joint is not None else "root"
        self.axis = tuple(num(x) for x in (body.joint.axis if body.joint is not None else (0, 0, 0)))
        self.q = q
        if self.kind in ("revolute", "continuous"):
            a = body.joint.axis
            c, s = se.cos(q), se.sin(q)
            K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
            A = np.outer(a, a)
            # Rodrigues: Rot = c 1 + s [a]x + (1 - c) a a^T, numeric coefficients folded
            self.Rot = [[num(A[i, k]) + (num(1.0 * (i == k)) - num(A[i, k])) * c + num(K[i, k]) * s
                         for k in range(3)] for i in range(3)]
        elif self.kind == "prismatic":
            self.d = _scale(q, self.axis)

    # motions parent -> child; forces child -> parent
    def motion(self, w, v) -> tuple:
        wj = _mtv(self.R_p, w)
        vj = _mtv(self.R_p, _add(v, _cross(w, self.p_p)))
        if self.kind in ("revolute", "continuous"):
            return _mtv(self.Rot, wj), _mtv(self.Rot, vj)
        if self.kind == "prismatic":
            return wj, _add(vj, _cross(wj, self.d))
        return wj, vj

    def force(self, n, f) -> tuple:
        if self.kind in ("revolute", "continuous"):
            n, f = _mv(self.Rot, n), _mv(self.Rot, f)
        elif self.kind == "prismatic":
            n = _add(n, _cross(self.d, f))
        fp = _mv(self.R_p, f)
        return _add(_mv(self.R_p, n), _cross(self.p_p, fp)), fp

    def inertia_to_parent(self, I: Inertia) -> Inertia:
        if self.kind in ("revolute", "continuous"):
            I = _rotate_inertia(I, self.Rot)
        elif self.kind == "prismatic":
            I = _shift_inertia(I, self.d)
        return _shift_inertia(_rotate_inertia(I, self.R_p), self.p_p)

    def subspace(self) -> tuple:
        """S as (angular (3), linear (3))."""
        if self.kind == "prismatic":
            return (ZERO, ZERO, ZERO), self.axis
        return self.axis, (ZERO, ZERO, ZERO)


@dataclass
class TreeDynamics:
    """``mass``: the mass matrix (o x o nested lists), ``bias``: C(q, u) u + g(q) (o), both
    symengine, in tree order; ``base_rotation``: the free-flyer's rotation matrix (3x3) or None."""

    mass: list
    bias: list
    base_rotation: list | None


def quaternion_matrix(x, y, z, w) -> list:
    """The rotation of the unit quaternion (x, y, z, w): 1 + 2 w [v]x + 2 [v]x^2."""
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]


def form_tree_dynamics(tree: KinematicTree, q: list, u: list, gravity: tuple, inertias: list,
                       floating: bool) -> TreeDynamics:
    """M(q) and the bias C(q, u) u + g(q) of the tree.

    ``q``, ``u``: symengine symbols, one per moving body (after the free-flyer's 7 and 6
    when ``floating``: position, quaternion (x, y, z, w); linear then angular velocity in
    the base frame, Pinocchio's order); ``gravity``: the gravity vector (3, world
    coordinates); ``inertias``: per body, (m, h (3), I_o (3x3)) as symengine expressions.
    """
    bodies = tree.bodies
    nb = len(bodies)
    Z3 = (ZERO, ZERO, ZERO)
    off = 6 if floating else 0
    qoff = 7 if floating else 0
    joints = [None] + [_Joint(bodies[i], q[qoff + i - 1]) for i in range(1, nb)]
    I_body = [Inertia(m, tuple(h), [list(r) for r in I]) for (m, h, I) in inertias]
    # ---- bias: Newton-Euler with u' = 0, gravity as a base acceleration
    g = tuple(-x for x in gravity)
    base_R = None
    if floating:
        base_R = quaternion_matrix(*q[3:7])
        w0 = tuple(u[3:6])
        v0 = tuple(u[0:3])
        a_w, a_v = Z3, _mtv(base_R, g)
    else:
        w0 = v0 = Z3
        a_w, a_v = Z3, g
    V = [None] * nb
    A = [None] * nb
    V[0], A[0] = (w0, v0), (a_w, a_v)
    for i in range(1, nb):
        jt = joints[i]
        lam = bodies[i].parent
        w, v = jt.motion(*V[lam])
        aw, av = jt.motion(*A[lam])
        Sw, Sv = jt.subspace()
        ui = u[off + i - 1]
        Sw_u, Sv_u = _scale(ui, Sw), _scale(ui, Sv)
        w, v = _add(w, Sw_u), _add(v, Sv_u)
        # v_i x_m (S u): (w x Sw u, w x Sv u + v x Sw u)
        aw = _add(aw, _cross(w, Sw_u))
        av = _add(av, _add(_cross(w, Sv_u), _cross(v, Sw_u)))
        V[i], A[i] = (w, v), (aw, av)
    F = [None] * nb
    for i in range(nb):
        Ii = I_body[i]
        na, fa = Ii.times(*A[i])
        nv, fv = Ii.times(*V[i])
        w, v = V[i]
        # v x* (n, f) = (w x n + v x f, w x f)
        F[i] = (_add(na, _add(_cross(w, nv), _cross(v, fv))), _add(fa, _cross(w, fv)))
    o = off + nb - 1
    bias = [ZERO] * o
    for i in range(nb - 1, 0, -1):
        jt = joints[i]
        Sw, Sv = jt.subspace()
        n, f = F[i]
        bias[off + i - 1] = _dot(Sw, n) + _dot(Sv, f)
        pn, pf = jt.force(n, f)
        lam = bodies[i].parent
        F[lam] = (_add(F[lam][0], pn), _add(F[lam][1], pf))
    if floating:
        n, f = F[0]
        bias[0:6] = [*f, *n]
    # ---- mass matrix: composite rigid bodies
    Ic = list(I_body)
    for i in range(nb - 1, 0, -1):
        lam = bodies[i].parent
        Ic[lam] = _add_inertia(Ic[lam], joints[i].inertia_to_parent(Ic[i]))
    Mm = [[ZERO] * o for _ in range(o)]
    for i in range(1, nb):
        col = off + i - 1
        Sw, Sv = joints[i].subspace()
        n, f = Ic[i].times(Sw, Sv)
        Mm[col][col] = _dot(Sw, n) + _dot(Sv, f)
        j = i
        while True:
            n, f = joints[j].force(n, f)
            j = bodies[j].parent
            if j == 0:
                break
            Sw, Sv = joints[j].subspace()
            row = off + j - 1
            Mm[row][col] = Mm[col][row] = _dot(Sw, n) + _dot(Sv, f)
        if floating:
            for k, e in enumerate((*f, *n)):
                Mm[k][col] = Mm[col][k] = e
    if floating:
        for k in range(6):      # the base: its composite inertia, (linear, angular) order
            ek = [ZERO] * 6
            ek[k] = se.Integer(1)
            n, f = Ic[0].times(tuple(ek[3:6]), tuple(ek[0:3]))
            for r, e in enumerate((*f, *n)):
                Mm[r][k] = e
    return TreeDynamics(Mm, bias, base_R)
