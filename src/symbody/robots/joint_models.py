"""The joints of a robot's tree, one model for every type, and where their variables sit.

A body's joint is its numeric placement in the parent body (R_p, p_p) followed by the joint's
motion: the child frame has axes R_J(q) and origin p_J(q) in the joint frame.  Its speeds u
give the child's velocity relative to the parent as S u, S the motion subspace in the child's
axes, constant (so the bias acceleration is v × S u, Featherstone 2008, ch. 4):

=========== ====================== ==================== ========================================
type        coordinates (symbody)  speeds               R_J, p_J; S columns (angular, linear)
=========== ====================== ==================== ========================================
revolute,   θ                      θ'                   Rot(a, θ), 0; (a, 0)
continuous
prismatic   d                      d'                   1, d a; (0, a)
planar      x, y, θ                vx, vy, ω (child     Rz(θ), (x, y, 0); (0, e_x), (0, e_y),
                                   axes: Pinocchio's)   (e_z, 0)
floating    x, y, z, qx, qy, qz, qw  v (3), ω (3)       R(Q), (x, y, z); (0, e_k), then (e_k, 0)
                                   (child axes)
=========== ====================== ==================== ========================================

A planar joint moves in the x-y plane of its joint frame (Pinocchio's reading of URDF's
planar joint), a floating joint is Pinocchio's free-flyer; their coordinates follow
q' = K(q) u (:func:`coordinate_rates`), the quaternion's norm is a holonomic constraint.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import symengine as se

from .dynamics import (
    ZERO,
    Inertia,
    _add,
    _cross,
    _mtv,
    _mv,
    _nmat,
    _rotate_inertia,
    _scale,
    _shift_inertia,
    num,
    quaternion_matrix,
)
from .tree import KinematicTree

__all__ = ["JOINT_SIZES", "COORDINATE_NAMES", "SPEED_NAMES", "JointModel", "TreeLayout",
           "tree_layout", "coordinate_rates", "joint_rates"]

#: (coordinates, speeds) of each moving joint type in symbody's model
JOINT_SIZES = {"revolute": (1, 1), "continuous": (1, 1), "prismatic": (1, 1), "planar": (3, 3),
               "floating": (7, 6)}
#: the names of a multi-dof joint's coordinates and speeds (suffixes of the joint's name)
COORDINATE_NAMES = {"planar": ("x", "y", "theta"),
                    "floating": ("x", "y", "z", "qx", "qy", "qz", "qw")}
SPEED_NAMES = {"planar": ("vx", "vy", "wz"), "floating": ("vx", "vy", "vz", "wx", "wy", "wz")}


@dataclass(frozen=True)
class TreeLayout:
    """Where each body's joint variables sit in the tree order (the free-flyer's 7 and 6
    first): ``q_slices[i]``, ``u_slices[i]`` for body i (None for the root); ``nq``, ``nv``."""

    q_slices: tuple
    u_slices: tuple
    nq: int
    nv: int

    @property
    def multi_dof(self) -> bool:
        """Whether a joint other than the root has more than one speed."""
        return any(s is not None and s.stop - s.start > 1 for s in self.u_slices)


def tree_layout(tree: KinematicTree, floating: bool) -> TreeLayout:
    """The layout of ``tree``'s joint variables."""
    nq, nv = (7, 6) if floating else (0, 0)
    qs, us = [None], [None]
    for b in tree.moving:
        a, c = JOINT_SIZES[b.joint.type]
        qs.append(slice(nq, nq + a))
        us.append(slice(nv, nv + c))
        nq, nv = nq + a, nv + c
    return TreeLayout(tuple(qs), tuple(us), nq, nv)


def _rz(c, s) -> list:
    z, one = ZERO, se.Integer(1)
    return [[c, -s, z], [s, c, z], [z, z, one]]


class JointModel:
    """One body's joint (see the module docstring): ``q`` its coordinates (symengine)."""

    def __init__(self, body, q: list) -> None:
        self.R_p = _nmat(body.R_p)
        self.p_p = tuple(num(x) for x in body.p_p)
        self.kind = body.joint.type
        self.axis = tuple(num(x) for x in body.joint.axis)
        self.q = q
        Z3 = (ZERO,) * 3
        one = _nmat(np.eye(3))
        if self.kind in ("revolute", "continuous"):
            a = body.joint.axis
            c, s = se.cos(q[0]), se.sin(q[0])
            K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
            A = np.outer(a, a)
            self.R_J = [[num(A[i, k]) + (num(1.0 * (i == k)) - num(A[i, k])) * c + num(K[i, k]) * s
                         for k in range(3)] for i in range(3)]
            self.p_J = Z3
            self.S = [(self.axis, Z3)]
        elif self.kind == "prismatic":
            self.R_J, self.p_J = one, _scale(q[0], self.axis)
            self.S = [(Z3, self.axis)]
        elif self.kind == "planar":
            self.R_J = _rz(se.cos(q[2]), se.sin(q[2]))
            self.p_J = (q[0], q[1], ZERO)
            e = _nmat(np.eye(3))
            self.S = [(Z3, tuple(e[0])), (Z3, tuple(e[1])), (tuple(e[2]), Z3)]
        elif self.kind == "floating":
            self.R_J, self.p_J = quaternion_matrix(*q[3:7]), tuple(q[0:3])
            e = _nmat(np.eye(3))
            self.S = [(Z3, tuple(e[k])) for k in range(3)] + [(tuple(e[k]), Z3) for k in range(3)]
        else:
            raise ValueError(f"joint type {self.kind!r}")

    @property
    def rotates(self) -> bool:
        return self.kind != "prismatic"

    def motion(self, w, v) -> tuple:
        """A motion vector (angular, linear at the origin) of the parent's, in the child's."""
        wj = _mtv(self.R_p, w)
        vj = _mtv(self.R_p, _add(v, _cross(w, self.p_p)))
        vj = _add(vj, _cross(wj, self.p_J))
        if not self.rotates:
            return wj, vj
        return _mtv(self.R_J, wj), _mtv(self.R_J, vj)

    def force(self, n, f) -> tuple:
        """A force (moment about the origin, force) of the child's, in the parent's."""
        if self.rotates:
            n, f = _mv(self.R_J, n), _mv(self.R_J, f)
        n = _add(n, _cross(self.p_J, f))
        fp = _mv(self.R_p, f)
        return _add(_mv(self.R_p, n), _cross(self.p_p, fp)), fp

    def inertia_to_parent(self, I: Inertia) -> Inertia:
        if self.rotates:
            I = _rotate_inertia(I, self.R_J)
        I = _shift_inertia(I, self.p_J)
        return _shift_inertia(_rotate_inertia(I, self.R_p), self.p_p)

    def velocity(self, u: list) -> tuple:
        """S u: the joint's motion (angular, linear) at speeds u."""
        w, v = (ZERO,) * 3, (ZERO,) * 3
        for (Sw, Sv), uk in zip(self.S, u):
            w, v = _add(w, _scale(uk, Sw)), _add(v, _scale(uk, Sv))
        return w, v


def coordinate_rates(kind: str, q: list, u: list, lib=se) -> list:
    """q' of a joint's coordinates at its speeds (a list as long as q); ``lib``: symengine
    (default) or sympy, for cos, sin and 1/2."""
    if kind == "planar":
        c, s = lib.cos(q[2]), lib.sin(q[2])
        return [c * u[0] - s * u[1], s * u[0] + c * u[1], u[2]]
    if kind == "floating":
        R = quaternion_matrix(*q[3:7])
        x, y, z, w = q[3:7]
        wx, wy, wz = u[3:6]
        half = lib.Rational(1, 2)
        return [*_mv(R, tuple(u[0:3])),
                half * (w * wx - z * wy + y * wz), half * (z * wx + w * wy - x * wz),
                half * (-y * wx + x * wy + w * wz), half * (-x * wx - y * wy - z * wz)]
    return list(u)


def joint_rates(kind: str, q: list, u: list) -> list:
    """:func:`coordinate_rates` in SymPy (for the kinematic equations)."""
    import sympy as sm
    return coordinate_rates(kind, q, u, sm)
