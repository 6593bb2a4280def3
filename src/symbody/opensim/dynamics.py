"""M(q) and the bias C(q, u) u + g(q) of an OpenSim model's tree, in symengine.

Spatial vectors in body coordinates, angular part first, about the body origin (as
:mod:`symbody.robots.dynamics`, generalized to joints of several degrees of freedom whose
motion subspace depends on q).  Body i of parent λ is placed by X_i = X_F X_FM(q) X_M⁻¹
(the joint's parent frame F in λ, the mobilizer, the child frame M in i); its joint velocity
is S_i(q) u_i with S_i the mobilizer's (H_w, H_v) moved from M to the body origin.  Then

    v_i = X_i v_λ + S_i u_i,   a_i = X_i a_λ + S_i u_i' + Ṡ_i u_i + v_i ×ₘ S_i u_i
    f_i = I_i a_i + v_i ×* I_i v_i,   τ_i = S_iᵀ f_i,   f_λ += X_iᵀ f_i

with Ṡ_i = Σ_k ∂S_i/∂q_k q_k' (the apparent derivative in body coordinates; q' = N(q) u from
the mobilizer) and a_0 = -gravity; u' = 0 gives the bias.  M(q) comes from composite rigid
bodies (Featherstone, *Rigid Body Dynamics Algorithms*, 2008, ch. 4-6).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .mobilizers import ZERO, Mobilizer, matmul, matvec, num, transpose
from .model_spec import Placement

__all__ = ["BodyInertia", "JointTransform", "TreeDynamics", "form_dynamics", "body_inertia"]


def _cross(a, b) -> list:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _add(a, b) -> list:
    return [a[0] + b[0], a[1] + b[1], a[2] + b[2]]


def _scale(s, a) -> list:
    return [s * a[0], s * a[1], s * a[2]]


def _dot(a, b):
    acc = ZERO
    for x, y in zip(a, b):
        if x == 0 or y == 0:
            continue
        acc = acc + x * y
    return acc


@dataclass
class BodyInertia:
    """(m, h = m c (3), I_o (3x3 nested, about the origin)), symengine entries."""

    m: object
    h: list
    I: list

    def times(self, w, v) -> tuple:
        n = _add(matvec(self.I, w), _cross(self.h, v))
        f = _add(_scale(self.m, v), _cross(w, self.h))
        return n, f


def body_inertia(mass: float, com: np.ndarray, I_c: np.ndarray) -> BodyInertia:
    """The inertia about the body origin from the mass, centre of mass and inertia about it."""
    c = np.asarray(com, dtype=float)
    I_o = np.asarray(I_c, dtype=float) + mass * (c @ c * np.eye(3) - np.outer(c, c))
    scale = max(mass, float(np.abs(I_o).max()), 1e-300)
    def fold(x):
        return (num(x) if abs(x) >= 1e-14 * scale else ZERO)
    return BodyInertia(num(mass), [fold(mass * x) for x in c],
                       [[fold(I_o[i, k]) for k in range(3)] for i in range(3)])


def _rotate_inertia(I: BodyInertia, R) -> BodyInertia:
    RI = matmul(R, I.I)
    J = [[None] * 3 for _ in range(3)]
    RT = transpose(R)
    for i in range(3):
        for k in range(i, 3):
            J[i][k] = J[k][i] = _dot(RI[i], [RT[j][k] for j in range(3)])
    return BodyInertia(I.m, matvec(R, I.h), J)


def _shift_inertia(I: BodyInertia, p) -> BodyInertia:
    """About a new origin from which the old one sits at p (same axes)."""
    if all(x == 0 for x in p):
        return I
    m, h = I.m, I.h
    hp = _dot(h, p)
    pp = _dot(p, p)
    J = [[None] * 3 for _ in range(3)]
    for i in range(3):
        for k in range(i, 3):
            e = I.I[i][k] - m * p[i] * p[k] - h[i] * p[k] - p[i] * h[k]
            if i == k:
                e = e + m * pp + 2 * hp
            J[i][k] = J[k][i] = e
    return BodyInertia(m, _add(h, _scale(m, p)), J)


def _add_inertia(a: BodyInertia, b: BodyInertia) -> BodyInertia:
    return BodyInertia(a.m + b.m, _add(a.h, b.h),
                       [[a.I[i][k] + b.I[i][k] for k in range(3)] for i in range(3)])


def _nmat(A: np.ndarray) -> list:
    return [[num(A[i, k]) for k in range(3)] for i in range(3)]


class JointTransform:
    """X_i of one body (parent -> child: R = R_PB (3x3), p = p_PB (3)) and its motion subspace
    S_i (``Sw``, ``Sv``: 3 rows of n_u, body coordinates at the body origin)."""

    def __init__(self, F: Placement, M: Placement, mob: Mobilizer):
        self.mob = mob
        R_PF, p_PF = _nmat(F.R), [num(x) for x in F.p]
        R_BM, p_BM = _nmat(M.R), [num(x) for x in M.p]
        self.R_BM, self.p_BM = R_BM, p_BM
        R_MB = transpose(R_BM)
        self.R = matmul(matmul(R_PF, mob.R), R_MB)
        o_M = matvec(R_MB, [-x for x in p_BM])            # B's origin from M's, in M
        self.p = _add(p_PF, matvec(R_PF, _add(mob.p, matvec(mob.R, o_M))))
        nu = len(mob.u)
        Sw = [matvec(R_BM, [mob.Hw[i][j] for i in range(3)]) for j in range(nu)]
        Sv = [_add(matvec(R_BM, [mob.Hv[i][j] for i in range(3)]), _cross(p_BM, Sw[j]))
              for j in range(nu)]
        self.Sw, self.Sv = Sw, Sv          # columns: Sw[j] (3)
        self.u = list(mob.u)

    def motion(self, w, v) -> tuple:
        """The parent's motion (w, v) in this body's coordinates at its origin."""
        RT = transpose(self.R)
        return matvec(RT, w), matvec(RT, _add(v, _cross(w, self.p)))

    def force(self, n, f) -> tuple:
        """This body's force (n, f) in the parent's coordinates about its origin."""
        fp = matvec(self.R, f)
        return _add(matvec(self.R, n), _cross(self.p, fp)), fp

    def inertia_to_parent(self, I: BodyInertia) -> BodyInertia:
        return _shift_inertia(_rotate_inertia(I, self.R), self.p)

    def joint_velocity(self) -> tuple:
        """S u: (w, v)."""
        w, v = [ZERO] * 3, [ZERO] * 3
        for j, uj in enumerate(self.u):
            w = _add(w, _scale(uj, self.Sw[j]))
            v = _add(v, _scale(uj, self.Sv[j]))
        return w, v

    def subspace_rate(self) -> tuple:
        """Ṡ u = Σ_k ∂(S u)/∂q_k q_k' (body coordinates), plus the mobilizer's ``hdot_error``
        (an angular acceleration about M's origin) when it has one."""
        w, v = self.joint_velocity()
        dw, dv = [ZERO] * 3, [ZERO] * 3
        for qk, qdk in zip(self.mob.q, self.mob.qdot):
            for i in range(3):
                a, b = w[i].diff(qk), v[i].diff(qk)
                if a != 0:
                    dw[i] = dw[i] + a * qdk
                if b != 0:
                    dv[i] = dv[i] + b * qdk
        if self.mob.hdot_error is not None:
            ew = matvec(self.R_BM, self.mob.hdot_error)
            dw = _add(dw, ew)
            dv = _add(dv, _cross(self.p_BM, ew))
        return dw, dv


@dataclass
class TreeDynamics:
    """``mass`` (o x o nested) and ``bias`` (o) in the tree's speed order, symengine;
    ``transforms``: the JointTransform of each body (index 0: None)."""

    mass: list
    bias: list
    transforms: list


def form_dynamics(parents: list, transforms: list, inertias: list, gravity: list,
                  speed_offsets: list) -> TreeDynamics:
    """M and the bias of the tree: ``parents[i]`` (−1 for the ground, i = 0), ``transforms[i]``
    (JointTransform, None for 0), ``inertias[i]`` (BodyInertia), ``gravity`` (3, ground
    coordinates, symengine), ``speed_offsets[i]``: index of body i's first speed."""
    nb = len(parents)
    Z3 = [ZERO, ZERO, ZERO]
    o = sum(len(t.u) for t in transforms[1:])
    V = [None] * nb
    A = [None] * nb
    V[0], A[0] = (Z3, Z3), (Z3, [-x for x in gravity])
    for i in range(1, nb):
        jt = transforms[i]
        lam = parents[i]
        w, v = jt.motion(*V[lam])
        aw, av = jt.motion(*A[lam])
        sw, sv = jt.joint_velocity()
        w, v = _add(w, sw), _add(v, sv)
        cw, cv = jt.subspace_rate()
        # v_i x_m (S u): (w x sw, w x sv + v x sw)
        aw = _add(_add(aw, cw), _cross(w, sw))
        av = _add(_add(av, cv), _add(_cross(w, sv), _cross(v, sw)))
        V[i], A[i] = (w, v), (aw, av)
    F = [None] * nb
    for i in range(nb):
        Ii = inertias[i]
        na, fa = Ii.times(*A[i])
        nv, fv = Ii.times(*V[i])
        w, v = V[i]
        F[i] = (_add(na, _add(_cross(w, nv), _cross(v, fv))), _add(fa, _cross(w, fv)))
    bias = [ZERO] * o
    for i in range(nb - 1, 0, -1):
        jt = transforms[i]
        n, f = F[i]
        for j in range(len(jt.u)):
            bias[speed_offsets[i] + j] = _dot(jt.Sw[j], n) + _dot(jt.Sv[j], f)
        pn, pf = jt.force(n, f)
        lam = parents[i]
        F[lam] = (_add(F[lam][0], pn), _add(F[lam][1], pf))
    # composite rigid bodies
    Ic = list(inertias)
    for i in range(nb - 1, 0, -1):
        lam = parents[i]
        Ic[lam] = _add_inertia(Ic[lam], transforms[i].inertia_to_parent(Ic[i]))
    Mm = [[ZERO] * o for _ in range(o)]
    for i in range(1, nb):
        jt = transforms[i]
        for a in range(len(jt.u)):
            col = speed_offsets[i] + a
            n, f = Ic[i].times(jt.Sw[a], jt.Sv[a])
            for b in range(a, len(jt.u)):
                Mm[speed_offsets[i] + b][col] = Mm[col][speed_offsets[i] + b] = \
                    _dot(jt.Sw[b], n) + _dot(jt.Sv[b], f)
            j = i
            while True:
                n, f = transforms[j].force(n, f)
                j = parents[j]
                if j == 0:
                    break
                tj = transforms[j]
                for b in range(len(tj.u)):
                    row = speed_offsets[j] + b
                    Mm[row][col] = Mm[col][row] = _dot(tj.Sw[b], n) + _dot(tj.Sv[b], f)
    return TreeDynamics(Mm, bias, transforms)
