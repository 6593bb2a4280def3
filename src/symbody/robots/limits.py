"""A URDF robot's joint limits acting on the motion, and checked on trajectories.

``load_urdf(..., limits=True)`` adds to the equations of each moving joint j (with the
URDF's ``<limit lower upper effort velocity>``):

- **effort saturation** of its input: the joint torque (force) is
  ``sat(tau_j) = min(max(tau_j, -effort_j), effort_j)`` instead of tau_j (joints with an
  ``effort`` > 0; mimic joints have no input);
- **position limits** as one-sided stiff spring-dampers, which push only::

      tau_limit,j = -max(0, k (q_j - upper_j) + d u_j)   where q_j > upper_j
                  =  max(0, k (lower_j - q_j) - d u_j)   where q_j < lower_j
                  =  0                                    in between

  with k = ``limit_stiffness`` and d = ``limit_damping``, two constants of the robot
  (``robot.constants``; defaults :data:`LIMIT_STIFFNESS`, :data:`LIMIT_DAMPING`, in N m/rad
  and N m s/rad for revolute joints, N/m and N s/m for prismatic ones), so a value in ``p``
  makes the stop stiffer or softer.  The max(0, ...) keeps the damper from pulling the
  joint back into its stop as it leaves.  Joints with lower >= upper (a missing
  ``<limit>``; Bullet's "no limit") and continuous joints get no stop.

Velocity limits are not forces: :func:`check_limits` (``robot.check_limits(trajectory)``)
reports every limit a trajectory exceeds -- positions, speeds above ``velocity``, inputs
above ``effort`` -- with where and by how much, and warns (:class:`JointLimitWarning`)
when asked.  :func:`limit_events` gives the position limits as events instead (terminal,
or any action), for runs without the stiff springs.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import symengine as se
import sympy as sm

from ..errors import InputError
from .dynamics import num

if TYPE_CHECKING:
    from .robot import Robot

__all__ = ["JointLimit", "LimitViolation", "JointLimitWarning", "LIMIT_STIFFNESS",
           "LIMIT_DAMPING", "joint_limits", "add_limit_terms", "check_limits", "limit_events"]

#: default stiffness of the position limits (N m/rad or N/m): 1 mrad of penetration per
#: 10 N m
LIMIT_STIFFNESS = 1e4
#: default damping of the position limits (N m s/rad or N s/m): about critical for 1 kg m^2
LIMIT_DAMPING = 1e2


class JointLimit(NamedTuple):
    """The limits of one moving joint, as they act (None: no such limit): the position range
    ``lower``..``upper`` (None unless lower < upper; continuous joints none), the speed
    ``velocity`` and the ``effort`` (None unless > 0), and the URDF ``line``."""

    joint: str
    lower: float | None
    upper: float | None
    velocity: float | None
    effort: float | None
    line: int


class LimitViolation(NamedTuple):
    """A limit a trajectory exceeds: ``joint``, ``kind`` ("lower", "upper", "velocity",
    "effort"), the ``limit``, the ``worst`` value and when (``t_worst``), when it is first
    exceeded (``t_first``) and for how long in total (``duration``, between samples)."""

    joint: str
    kind: str
    limit: float
    worst: float
    t_worst: float
    t_first: float
    duration: float


class JointLimitWarning(UserWarning):
    """A trajectory exceeds a joint limit of the URDF (see :func:`check_limits`)."""


def joint_limits(robot: Robot) -> tuple[JointLimit, ...]:
    """The limits of every moving joint, in tree order (``robot.tree.moving``)."""
    out = []
    for b in robot.tree.moving:
        j = b.joint
        ranged = j.type != "continuous" and j.lower is not None and j.upper is not None \
            and j.lower < j.upper
        out.append(JointLimit(j.name, j.lower if ranged else None, j.upper if ranged else None,
                              j.velocity if j.velocity and j.velocity > 0 else None,
                              j.effort if j.effort and j.effort > 0 else None, j.line))
    return tuple(out)


def _input_by_speed(robot: Robot, taus: Sequence) -> dict:
    """Tree speed index -> the input acting along it (actuated joints: not mimic, not
    floating; a planar joint has one input per speed)."""
    return dict(zip(robot.input_speed_indices, taus))


def _single_dof(robot: Robot) -> dict:
    """Tree index i of a one-speed moving joint -> (its coordinate index, its speed index)
    (planar and floating joints in the tree have no <limit> stops)."""
    lay = robot.tree_layout
    out = {}
    for i in range(len(robot.tree.moving)):
        qsl, usl = lay.q_slices[i + 1], lay.u_slices[i + 1]
        if qsl.stop - qsl.start == 1 and usl.stop - usl.start == 1:
            out[i] = (qsl.start, usl.start)
    return out


def add_limit_terms(robot: Robot, rest: list, qs: Sequence, us: Sequence, taus: Sequence,
                    names: dict) -> list:
    """``rest`` (g_d in tree order) with the inputs saturated and the position stops added
    (see the module doc); registers ``limit_stiffness``, ``limit_damping`` in ``names`` and
    ``robot.constants``.  ``taus``: the input symbols of the non-mimic joints."""
    k, d = se.Symbol("limit_stiffness"), se.Symbol("limit_damping")
    names["limit_stiffness"], names["limit_damping"] = sm.Symbol("limit_stiffness"), \
        sm.Symbol("limit_damping")
    robot.constants[names["limit_stiffness"]] = LIMIT_STIFFNESS
    robot.constants[names["limit_damping"]] = LIMIT_DAMPING
    index = _single_dof(robot)
    rest = list(rest)
    tau_of = _input_by_speed(robot, taus)
    for i, lim in enumerate(robot.limits):
        if i not in index:
            continue
        iq, iu = index[i]
        q, u = qs[iq], us[iu]
        tau = tau_of.get(iu)
        if tau is not None and lim.effort is not None:
            e = num(lim.effort)
            # the rest holds -tau: exchanged for -sat(tau)
            rest[iu] = rest[iu] + tau - se.Max(-e, se.Min(e, tau))
        if lim.lower is not None:
            lo, hi = num(lim.lower), num(lim.upper)
            stop = se.Piecewise((se.Max(0, k * (q - hi) + d * u), se.Gt(q, hi)),
                                (-se.Max(0, k * (lo - q) - d * u), se.Lt(q, lo)),
                                (se.Integer(0), True))
            rest[iu] = rest[iu] + stop       # g_d holds -tau_limit
    return rest


def check_limits(robot: Robot, trajectory: Any, warn: bool = False,
                 tolerance: float = 0.0) -> list[LimitViolation]:
    """Every joint limit ``trajectory`` (a :class:`~symbody.Trajectory` of the robot's model)
    exceeds by more than ``tolerance``: positions outside lower..upper, |speed| above
    ``velocity``, |input| above ``effort`` (where the trajectory has the inputs' values,
    ``specified_values``).  ``warn``: also a :class:`JointLimitWarning` naming them."""
    t = np.asarray(trajectory.t, dtype=float)
    if not len(t):
        return []
    coords = {c: k for k, c in enumerate(trajectory.coordinates)}
    speeds = {s: k for k, s in enumerate(trajectory.speeds)}
    inputs = {s: k for k, s in enumerate(trajectory.specifieds)}
    if any(c not in coords for c in robot.coordinates):
        raise InputError("check_limits: the trajectory is not of this robot's model (its "
                         "coordinates differ)")
    R = trajectory.specified_values
    index = _single_dof(robot)
    tau_of = _input_by_speed(robot, robot.inputs)
    found = []
    for i, lim in enumerate(robot.limits):
        if i not in index:
            continue
        q = trajectory.q[:, coords[robot.tree_coordinates[index[i][0]]]]
        u = trajectory.u[:, speeds[robot.tree_speeds[index[i][1]]]]
        tau = tau_of.get(index[i][1])
        checks = []
        if lim.lower is not None:
            checks += [("lower", lim.lower, lim.lower - q), ("upper", lim.upper, q - lim.upper)]
        if lim.velocity is not None:
            checks.append(("velocity", lim.velocity, np.abs(u) - lim.velocity))
        if lim.effort is not None and tau is not None and R is not None and tau in inputs:
            checks.append(("effort", lim.effort, np.abs(R[:, inputs[tau]]) - lim.effort))
        for kind, limit, excess in checks:
            over = excess > tolerance
            if not over.any():
                continue
            w = int(np.argmax(excess))
            value = {"lower": q, "upper": q, "velocity": u}.get(kind)
            worst = float(value[w]) if value is not None else float(R[w, inputs[tau]])
            dt = np.diff(t, append=t[-1])
            found.append(LimitViolation(lim.joint, kind, float(limit), worst, float(t[w]),
                                        float(t[np.argmax(over)]), float(np.abs(dt[over]).sum())))
    if warn and found:
        text = "; ".join(f"joint {v.joint!r} {v.kind} limit {v.limit:g}: {v.worst:.4g} at "
                         f"t = {v.t_worst:.4g}" for v in found[:5])
        more = f" (and {len(found) - 5} more)" if len(found) > 5 else ""
        warnings.warn(f"the trajectory exceeds joint limits of {robot.urdf.name!r}: {text}{more}",
                      JointLimitWarning, stacklevel=3)
    return found


def limit_events(robot: Robot, terminal: bool = True, action: Any = None) -> list:
    """The position limits as :class:`~symbody.Event` objects, named "<joint> lower" and
    "<joint> upper": q - lower falling through 0 and q - upper rising through 0;
    ``terminal`` stops the run there, ``action`` (a dict or callable, see
    :class:`~symbody.Event`) applies an impact map instead."""
    from ..analysis.events import Event

    index = _single_dof(robot)
    events = []
    for i, lim in enumerate(robot.limits):
        if lim.lower is None or i not in index:
            continue
        q = robot.tree_coordinates[index[i][0]]
        for kind, cond, direction in (("lower", q - lim.lower, -1), ("upper", q - lim.upper, 1)):
            events.append(Event(cond, name=f"{lim.joint} {kind}", direction=direction,
                                terminal=terminal and action is None, action=action))
    return events
