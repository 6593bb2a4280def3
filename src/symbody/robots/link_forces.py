"""External forces on the links of a kinematic tree, in symengine: where a point is, how fast
it moves, and the generalized force of a force applied there.

The world pose of body i (rotation R_i: body axes in world coordinates; origin p_i) follows
the tree from the root (the free-flyer's R(Q) and position, or the world)::

    R_i = R_λ R_p Rot(q_i),    p_i = p_λ + R_λ (p_p + R_p d(q_i))

(R_p, p_p the joint placement, Rot the revolute joint's rotation, d = q a the prismatic
joint's offset), and the body velocity (ω_i, v_i) in body coordinates as in Newton-Euler
(:mod:`.dynamics`).  A point at r (3, body coordinates) is at p_i + R_i r and moves with
R_i (v_i + ω_i × r).

A force F and a moment T (world coordinates) at r on body i are the spatial force
(r × f + t, f) with f = R_iᵀ F, t = R_iᵀ T; summed up the tree by the joints' force
transforms (F_λ += X_iᵀ F_i), joint j receives S_jᵀ F_j and the free-flyer (f, n) of the
root: the generalized force Q = Σ J_rᵀ F + J_ωᵀ T of every load (its power is Qᵀ u), which
enters the dynamics as M u' + C u + g - τ - Q = 0 (Featherstone, *Rigid Body Dynamics
Algorithms*, 2008, sec. 5.3, the external forces of RNEA).
"""

from __future__ import annotations

from dataclasses import dataclass

import symengine as se

from .dynamics import ZERO, _add, _cross, _Joint, _mtv, _mv, _scale, quaternion_matrix
from .tree import KinematicTree

__all__ = ["BodyMotion", "LinkLoad", "tree_motion", "generalized_forces"]


def _matmul(A, B) -> list:
    return [[A[i][0] * B[0][k] + A[i][1] * B[1][k] + A[i][2] * B[2][k] for k in range(3)]
            for i in range(3)]


@dataclass(frozen=True)
class BodyMotion:
    """Body i's pose and velocity: ``R`` (3x3 nested: body axes in world coordinates),
    ``p`` (3: origin in the world), ``w``, ``v`` (3 each: angular velocity and origin velocity
    in body coordinates), all symengine."""

    R: list
    p: tuple
    w: tuple
    v: tuple

    def point(self, r) -> tuple:
        """The world position (3) of the point at ``r`` (3, body coordinates)."""
        return _add(self.p, _mv(self.R, r))

    def point_velocity(self, r) -> tuple:
        """The world velocity (3) of the point fixed in the body at ``r`` (body coordinates)."""
        return _mv(self.R, _add(self.v, _cross(self.w, r)))

    def angular_velocity(self) -> tuple:
        """ω in world coordinates (3)."""
        return _mv(self.R, self.w)


@dataclass(frozen=True)
class LinkLoad:
    """A force ``force`` (3, world coordinates) at ``point`` (3, body coordinates) of tree body
    ``body``, and a moment ``moment`` (3, world coordinates; None: no moment)."""

    body: int
    point: tuple
    force: tuple
    moment: tuple | None = None


def _joints(tree: KinematicTree, q: list, floating: bool) -> list:
    qoff = 7 if floating else 0
    return [None] + [_Joint(tree.bodies[i], q[qoff + i - 1]) for i in range(1, len(tree.bodies))]


def tree_motion(tree: KinematicTree, q: list, u: list, floating: bool) -> list[BodyMotion]:
    """Every body's pose and velocity (:class:`BodyMotion`, tree order), from the symbols
    ``q``, ``u`` in tree order (the free-flyer's 7 and 6 first when ``floating``)."""
    bodies = tree.bodies
    joints = _joints(tree, q, floating)
    one = se.Integer(1)
    if floating:
        R0 = quaternion_matrix(*q[3:7])
        root = BodyMotion(R0, tuple(q[0:3]), tuple(u[3:6]), tuple(u[0:3]))
    else:
        eye = [[one if i == k else ZERO for k in range(3)] for i in range(3)]
        root = BodyMotion(eye, (ZERO, ZERO, ZERO), (ZERO, ZERO, ZERO), (ZERO, ZERO, ZERO))
    off = 6 if floating else 0
    out = [root]
    for i in range(1, len(bodies)):
        jt, lam = joints[i], out[bodies[i].parent]
        Rl = _matmul(lam.R, jt.R_p)
        offset = jt.p_p
        if jt.kind in ("revolute", "continuous"):
            R = _matmul(Rl, jt.Rot)
        else:
            R = Rl
            if jt.kind == "prismatic":
                offset = _add(offset, _mv(jt.R_p, jt.d))
        p = _add(lam.p, _mv(lam.R, offset))
        w, v = jt.motion(lam.w, lam.v)
        Sw, Sv = jt.subspace()
        ui = u[off + i - 1]
        out.append(BodyMotion(R, p, _add(w, _scale(ui, Sw)), _add(v, _scale(ui, Sv))))
    return out


def generalized_forces(tree: KinematicTree, q: list, motion: list[BodyMotion],
                       loads: list[LinkLoad], floating: bool) -> list:
    """The generalized force Q (tree order, one per speed) of ``loads`` (see the module
    docstring): Qᵀ u is their power.  ``motion``: :func:`tree_motion`'s output."""
    bodies = tree.bodies
    joints = _joints(tree, q, floating)
    nb = len(bodies)
    F: list = [None] * nb
    for load in loads:
        Rt = motion[load.body].R
        f = _mtv(Rt, load.force)
        n = _cross(load.point, f)
        if load.moment is not None:
            n = _add(n, _mtv(Rt, load.moment))
        old = F[load.body]
        F[load.body] = (n, f) if old is None else (_add(old[0], n), _add(old[1], f))
    off = 6 if floating else 0
    Q = [ZERO] * (off + nb - 1)
    for i in range(nb - 1, 0, -1):
        if F[i] is None:
            continue
        n, f = F[i]
        Sw, Sv = joints[i].subspace()
        Q[off + i - 1] = Sw[0] * n[0] + Sw[1] * n[1] + Sw[2] * n[2] + \
            Sv[0] * f[0] + Sv[1] * f[1] + Sv[2] * f[2]
        pn, pf = joints[i].force(n, f)
        lam = bodies[i].parent
        F[lam] = (pn, pf) if F[lam] is None else (_add(F[lam][0], pn), _add(F[lam][1], pf))
    if floating and F[0] is not None:
        n, f = F[0]
        Q[0:6] = [*f, *n]
    return Q
