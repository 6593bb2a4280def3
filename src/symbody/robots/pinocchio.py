"""Pinocchio's conventions for a :class:`~symbody.robots.robot.Robot` (no Pinocchio import).

Pinocchio's model of the same URDF (``pinocchio.buildModelFromUrdf(path)``, with
``pinocchio.JointModelFreeFlyer()`` for a floating base; mimic joints as ordinary joints,
its default) has the joints in the order of the robot's tree (depth first, children in
alphabetical order of their joint names, as urdfdom stores them), and:

* q: a revolute or prismatic joint its value; a continuous joint (cos θ, sin θ); a planar
  joint (x, y, cos θ, sin θ); a floating joint and the free-flyer (x, y, z, qx, qy, qz, qw),
  the free-flyer first;
* v: one speed per joint (a planar joint's (vx, vy, ω) and a floating joint's (v, ω) in the
  child's axes); the free-flyer's (linear, angular) velocity in the base frame.

symbody's state is x = [q (N), u_ind (p)] in the model's order: independent coordinates
(base without qw, non-mimic joints), then the dependent ones (qw, mimic joints).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError

if TYPE_CHECKING:
    from .robot import Robot

__all__ = ["to_pinocchio", "from_pinocchio", "pinocchio_sizes", "full_speeds", "tree_index"]


#: (nq, nv) of Pinocchio's joints, by URDF type
PINOCCHIO_SIZES = {"revolute": (1, 1), "prismatic": (1, 1), "continuous": (2, 1),
                   "planar": (4, 3), "floating": (7, 6)}


def pinocchio_sizes(robot: Robot) -> tuple[int, int]:
    """(nq, nv) of Pinocchio's model of the robot."""
    nq = 7 if robot.floating_base else 0
    nv = 6 if robot.floating_base else 0
    for b in robot.tree.moving:
        a, c = PINOCCHIO_SIZES[b.joint.type]
        nq, nv = nq + a, nv + c
    return nq, nv


def tree_index(robot: Robot) -> tuple[list, list]:
    """For the model's coordinates and speeds, their index in the tree order."""
    qpos = {s: i for i, s in enumerate(robot.tree_coordinates)}
    upos = {s: i for i, s in enumerate(robot.tree_speeds)}
    return [qpos[s] for s in robot.coordinates], [upos[s] for s in robot.speeds]


def full_speeds(robot: Robot, u_ind: np.ndarray) -> np.ndarray:
    """All speeds (model order) from the independent ones: u_mimic = a u_target."""
    p = len(robot.u_ind)
    u = np.concatenate([u_ind, np.zeros(len(robot.u_dep))])
    col = {s: k for k, s in enumerate(robot.speeds)}
    index = {b.joint.name: i for i, b in enumerate(robot.tree.moving)}
    for k, i in enumerate(robot.mimic_bodies):
        target, a, _ = robot.tree.moving[i].joint.mimic
        start = robot.tree_layout.u_slices[index[target] + 1].start
        u[p + k] = a * u[col[robot.tree_speeds[start]]]
    return u


def to_pinocchio(robot: Robot, x: Any, xdot: Any = None) -> tuple:
    """Pinocchio's ``(q, v)`` of the state x = [q, u_ind] (N + p), or ``(q, v, dv)`` with the
    state derivative ``xdot`` (N + p; its last p entries are u_ind')."""
    N, p = len(robot.coordinates), len(robot.u_ind)
    x = np.asarray(x, dtype=float)
    if x.shape != (N + p,):
        raise InputError(f"to_pinocchio: x must have {N + p} entries (q, u_ind), got {x.shape}")
    qi, ui = tree_index(robot)
    q_tree = np.empty(N)
    q_tree[qi] = x[:N]
    u_tree = np.empty(len(robot.speeds))
    u_tree[ui] = full_speeds(robot, x[N:])
    nq, _ = pinocchio_sizes(robot)
    qp = np.empty(nq)
    k = 0
    if robot.floating_base:
        qp[:7] = q_tree[:7]
        k = 7
    for i, b in enumerate(robot.tree.moving):
        qj = q_tree[robot.tree_layout.q_slices[i + 1]]
        if b.joint.type in ("continuous", "planar"):       # an angle as (cos, sin)
            qj = np.concatenate([qj[:-1], [np.cos(qj[-1]), np.sin(qj[-1])]])
        qp[k:k + len(qj)] = qj
        k += len(qj)
    if xdot is None:
        return qp, u_tree
    xdot = np.asarray(xdot, dtype=float)
    if xdot.shape != (N + p,):
        raise InputError(f"to_pinocchio: xdot must have {N + p} entries, got {xdot.shape}")
    dv = np.empty(len(robot.speeds))
    dv[ui] = full_speeds(robot, xdot[N:])
    return qp, u_tree, dv


def from_pinocchio(robot: Robot, q: Any, v: Any) -> np.ndarray:
    """The state x = [q, u_ind] of Pinocchio's configuration q (nq) and velocity v (nv).

    The free-flyer's quaternion is taken as given (normalize it first if needed); a
    continuous joint's angle is atan2(sin, cos); mimic joints' values come from q, and
    their speeds are dropped (dependent)."""
    nq, nv = pinocchio_sizes(robot)
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    if q.shape != (nq,) or v.shape != (nv,):
        raise InputError(f"from_pinocchio: expected q ({nq},) and v ({nv},), got {q.shape} "
                         f"and {v.shape}")
    N = len(robot.coordinates)
    q_tree = np.empty(N)
    k = 0
    if robot.floating_base:
        q_tree[:7] = q[:7]
        k = 7
    for i, b in enumerate(robot.tree.moving):
        sl = robot.tree_layout.q_slices[i + 1]
        size = PINOCCHIO_SIZES[b.joint.type][0]
        qj = q[k:k + size]
        if b.joint.type in ("continuous", "planar"):       # (cos, sin) as an angle
            qj = np.concatenate([qj[:-2], [np.arctan2(qj[-1], qj[-2])]])
        q_tree[sl] = qj
        k += size
    qi, ui = tree_index(robot)
    return np.concatenate([q_tree[qi], v[ui][:len(robot.u_ind)]])
