"""A joint-space PD controller inside a robot's equations.

``robot.add_pd_control(kp, kd, pose)`` adds to each chosen joint's input the torque (or
force, prismatic joints)::

    τ_j = kp_j (q_ref,j - q_j) - kd_j u_j

(MuJoCo's ``<position kp kv>`` actuator; with gravity and contact a PD controller settles
where its stiffness balances the load).  The gains and the reference pose are constants of
the model (``robot.constants``: ``kp_<joint>``, ``kd_<joint>``, ``qref_<joint>``), so that the
controller is compiled with the equations (no Python on the right-hand side's path: the
compiled integrators take it) and can be changed per run without compiling again.  The
joint's specified input stays: it adds to the controller's torque (a feed-forward).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy as sm

from ..errors import InputError

if TYPE_CHECKING:
    from .robot import Robot

__all__ = ["JointPD", "joint_pd", "pd_generalized_forces"]


@dataclass(frozen=True)
class JointPD:
    """The controlled joints (names), and per joint the symbols of kp, kd and q_ref."""

    joints: tuple
    kp: tuple
    kd: tuple
    reference: tuple


def _per_joint(value: Any, joints: list, what: str) -> np.ndarray:
    if isinstance(value, dict):
        unknown = [k for k in value if k not in joints]
        if unknown:
            raise InputError(f"add_pd_control: {what} names {unknown[0]!r}, not a controlled joint "
                             f"({', '.join(joints)})")
        missing = [j for j in joints if j not in value]
        if missing:
            raise InputError(f"add_pd_control: {what} has no value for the joint {missing[0]!r}")
        arr = np.array([float(value[j]) for j in joints])
    else:
        arr = np.broadcast_to(np.asarray(value, dtype=float), (len(joints),)).copy() \
            if np.ndim(value) == 0 else np.asarray(value, dtype=float)
    if arr.shape != (len(joints),) or not np.isfinite(arr).all():
        raise InputError(f"add_pd_control: {what} must be one finite number, one per controlled "
                         f"joint ({len(joints)}) or a dict by joint name, got {value!r}")
    return arr


def joint_pd(robot: Robot, kp: Any, kd: Any, pose: Any = None, joints: Any = None) -> JointPD:
    """The checked controller; adds its constants' values to ``robot.constants``."""
    actuated = list(robot.input_names)
    chosen = actuated if joints is None else ([joints] if isinstance(joints, str) else list(joints))
    for j in chosen:
        if j not in actuated:
            raise InputError(f"add_pd_control: {j!r} is not an actuated joint of the robot "
                             f"({', '.join(actuated)})")
    kp_v, kd_v = _per_joint(kp, chosen, "kp"), _per_joint(kd, chosen, "kd")
    if (kp_v < 0).any() or (kd_v < 0).any():
        raise InputError("add_pd_control: the gains kp and kd must be >= 0")
    ref = _per_joint(0.0 if pose is None else pose, chosen, "pose")
    taken = {str(s) for s in robot.constants}
    syms = []
    for prefix, values in (("kp", kp_v), ("kd", kd_v), ("qref", ref)):
        row = []
        for j, v in zip(chosen, values):
            s = sm.Symbol(f"{prefix}_{_ident(j)}")
            if str(s) in taken:
                raise InputError(f"add_pd_control: the joint {j!r} has a controller already")
            robot.constants[s] = float(v)
            row.append(s)
        syms.append(tuple(row))
    return JointPD(tuple(chosen), *syms)


def _ident(name: str) -> str:
    from .robot import _ident as ident
    return ident(name)


def pd_generalized_forces(robot: Robot, controller: JointPD, q: list, u: list, symbol: Any) -> dict:
    """{tree speed index: τ_j} of the controller (symengine), with q, u in tree order."""
    moving = robot.tree.moving
    index = {b.joint.name: i for i, b in enumerate(moving)}
    nb = 7 if robot.floating_base else 0
    ub = 6 if robot.floating_base else 0
    out = {}
    for j, kp, kd, ref in zip(controller.joints, controller.kp, controller.kd, controller.reference):
        i = index[j]
        out[ub + i] = symbol(kp) * (symbol(ref) - q[nb + i]) - symbol(kd) * u[ub + i]
    return out
