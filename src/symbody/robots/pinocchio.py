"""Pinocchio's conventions for a :class:`~symbody.robots.robot.Robot` (no Pinocchio import).

Pinocchio's model of the same URDF (``pinocchio.buildModelFromUrdf(path)``, with
``pinocchio.JointModelFreeFlyer()`` for a floating base; mimic joints as ordinary joints,
its default) has the joints in the order of the robot's tree (depth first, children in
alphabetical order of their joint names, as urdfdom stores them), and:

* q: a revolute or prismatic joint its value; a continuous joint (cos θ, sin θ); the
  free-flyer (x, y, z, qx, qy, qz, qw) first;
* v: one speed per joint; the free-flyer's (linear, angular) velocity in the base frame.

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


def pinocchio_sizes(robot: Robot) -> tuple[int, int]:
    """(nq, nv) of Pinocchio's model of the robot."""
    nq = 7 if robot.floating_base else 0
    nv = 6 if robot.floating_base else 0
    for b in robot.tree.moving:
        nq += 2 if b.joint.type == "continuous" else 1
        nv += 1
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
    ub = 6 if robot.floating_base else 0
    index = {b.joint.name: i for i, b in enumerate(robot.tree.moving)}
    for k, i in enumerate(robot.mimic_bodies):
        target, a, _ = robot.tree.moving[i].joint.mimic
        u[p + k] = a * u[col[robot.tree_speeds[ub + index[target]]]]
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
    nb = k
    for i, b in enumerate(robot.tree.moving):
        th = q_tree[nb + i]
        if b.joint.type == "continuous":
            qp[k:k + 2] = np.cos(th), np.sin(th)
            k += 2
        else:
            qp[k] = th
            k += 1
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
    nb = k
    for i, b in enumerate(robot.tree.moving):
        if b.joint.type == "continuous":
            q_tree[nb + i] = np.arctan2(q[k + 1], q[k])
            k += 2
        else:
            q_tree[nb + i] = q[k]
            k += 1
    qi, ui = tree_index(robot)
    return np.concatenate([q_tree[qi], v[ui][:len(robot.u_ind)]])
