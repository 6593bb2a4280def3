"""Pinocchio as the oracle of a robot's dynamics derivatives (tests and
benchmarks/bench_robot_derivatives.py).

``compare_derivatives(pin, robot, pm, rng)`` evaluates ``robot.inverse_dynamics_derivatives``
and ``robot.forward_dynamics_derivatives`` at random states and returns the largest relative
error of each block against ``pin.computeRNEADerivatives`` and ``pin.computeABADerivatives``
at the same states (|a - b|_max / max(1, |b|_max)).  The URDF damping D v and friction
F sign(v) that symbody's inverse dynamics include are added to Pinocchio's (∂τ/∂v + D; the
forward dynamics at τ - D v - F sign(v), ∂u'/∂v - M⁻¹ D).
"""

from __future__ import annotations

import numpy as np

from symbody.robots.pinocchio import full_speeds, tree_index
from systems.pinocchio_control_oracle import _joint_dynamics, _rel
from systems.pinocchio_oracle import random_state

BLOCKS = ("dtau/dq", "dtau/du", "dtau/du'", "du'/dq", "du'/du", "du'/dtau", "u'")


def pinocchio_derivatives(pin, pm, pd, qp, v, a, tau, damp, fric) -> dict:
    """Pinocchio's blocks (its v order) with the URDF damping and friction added."""
    dq, dv, da = (np.array(x) for x in pin.computeRNEADerivatives(pm, pd, qp, v, a))
    da = np.triu(da) + np.triu(da, 1).T
    out = {"dtau/dq": dq, "dtau/du": dv + np.diag(damp), "dtau/du'": da}
    pin.computeABADerivatives(pm, pd, qp, v, tau - damp * v - fric * np.sign(v))
    Minv = np.triu(pd.Minv) + np.triu(pd.Minv, 1).T
    out.update({"du'/dq": np.array(pd.ddq_dq), "du'/du": pd.ddq_dv - Minv * damp,
                "du'/dtau": Minv, "u'": np.array(pd.ddq)})
    return out


def compare_derivatives(pin, robot, pm, rng, states: int = 3) -> dict:
    """Max relative errors of each block (see the module docstring) over ``states`` states."""
    pd = pm.createData()
    N = robot.nq
    _, ui = tree_index(robot)
    damp, fric = _joint_dynamics(robot, pm.nv)
    idx = np.ix_(ui, ui)
    err = dict.fromkeys(BLOCKS, 0.0)
    fd = robot.forward_dynamics_derivatives
    for _ in range(states):
        qp, v = random_state(pin, pm, rng)
        x = robot.from_pinocchio(qp, v)
        qp, v = robot.to_pinocchio(x)
        a, tau = rng.standard_normal((2, pm.nv))
        ref = pinocchio_derivatives(pin, pm, pd, qp, v, a, tau, damp, fric)
        q, u = x[:N], full_speeds(robot, x[N:])
        ours = dict(zip(BLOCKS, (*robot.inverse_dynamics_derivatives(q, u, a[ui]),
                                 *fd(q, u, tau[ui]), fd.accelerations(q, u, tau[ui]))))
        for key in BLOCKS:
            theirs = ref[key][ui] if key == "u'" else ref[key][idx]
            err[key] = max(err[key], _rel(ours[key], theirs))
    return err
