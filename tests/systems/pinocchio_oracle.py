"""Pinocchio as the oracle of symbody's URDF robots (tests and benchmarks/bench_robots.py).

``robots_dir()`` finds example-robot-data's robot files (the package has no Python module in
6.x: its files sit under cmeel.prefix/share); ``compare(robot, model, ...)`` evaluates both
at random states and returns the largest relative errors of M, the bias, the forward
dynamics and (with symbolic inertia) the regressor.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import numpy as np

from symbody.robots import dynamic_terms
from symbody.robots.pinocchio import full_speeds, tree_index


def robots_dir() -> Path | None:
    """example-robot-data's robots/ folder, or None when the package is absent."""
    try:
        files = importlib.metadata.files("example-robot-data") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in files:
        parts = Path(str(f)).parts
        if "example-robot-data" in parts and "robots" in parts:
            k = parts.index("robots")
            return Path(str(f.locate())).parents[len(parts) - k - 2]
    return None


def pinocchio_model(pin, path: str, floating_base: bool):
    if floating_base:
        return pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    return pin.buildModelFromUrdf(str(path))


def random_state(pin, pm, rng):
    """q within the joint limits (Pinocchio's randomConfiguration; unbounded joints in
    [-pi, pi], the base position in [-1, 1]^3), v random normal."""
    lo = np.where(np.isfinite(pm.lowerPositionLimit), pm.lowerPositionLimit, -np.pi)
    hi = np.where(np.isfinite(pm.upperPositionLimit), pm.upperPositionLimit, np.pi)
    lo, hi = np.maximum(lo, -1e3), np.minimum(hi, 1e3)
    if pm.joints[1].shortname() == "JointModelFreeFlyer":
        lo[:3], hi[:3] = -1.0, 1.0
    q = pin.randomConfiguration(pm, lo, hi)
    return q, rng.standard_normal(pm.nv)


def _rel(a, b) -> float:
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(1.0, np.abs(b).max()))


def compare(pin, robot, model, pm, rng, states: int = 3) -> dict:
    """Max relative errors against crba, rnea (+ the URDF damping and friction), aba."""
    pd = pm.createData()
    N = robot.nq
    qi, ui = tree_index(robot)
    damp = np.zeros(pm.nv)
    fric = np.zeros(pm.nv)
    if robot.joint_dynamics:        # on each speed of a joint (Pinocchio's v: the tree order)
        for i, b in enumerate(robot.tree.moving):
            sl = robot.tree_layout.u_slices[i + 1]
            damp[sl], fric[sl] = b.joint.damping, b.joint.friction
    err = {"M": 0.0, "bias": 0.0, "aba": 0.0, "cond": 0.0}
    p = robot.constants
    for _ in range(states):
        qp, v = random_state(pin, pm, rng)
        # mimic joints: a consistent state (v of the mimic = a v of its target)
        x = robot.from_pinocchio(qp, v)
        qp, v = robot.to_pinocchio(x)
        u = full_speeds(robot, x[N:])
        tau_model = rng.standard_normal(len(robot.inputs))
        M, gd = dynamic_terms(model, x[:N], u, p, np.zeros(len(robot.inputs)))
        Mp = pin.crba(pm, pd, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        bp = pin.rnea(pm, pd, qp, v, np.zeros(pm.nv)) + damp * v + fric * np.sign(v)
        err["M"] = max(err["M"], _rel(M, Mp[np.ix_(ui, ui)]))
        err["cond"] = max(err["cond"], float(np.linalg.cond(Mp)))
        err["bias"] = max(err["bias"], _rel(gd, bp[ui]))
        # forward dynamics: tau in Pinocchio's order (zero on the base and mimic joints)
        tau = np.zeros(pm.nv)
        speeds_of_inputs = [robot.speeds.index(s) for s in _input_speeds(robot)]
        tau[np.array(ui)[speeds_of_inputs]] = tau_model
        xdot = model.rhs(0.0, x, p, tau_model)
        _, _, dv = robot.to_pinocchio(x, xdot)
        if robot.u_dep:     # mimic constraints: the constrained accelerations from M, b
            dv_ref = _constrained_accelerations(robot, Mp, bp, tau, ui)
        else:
            dv_ref = pin.aba(pm, pd, qp, v, tau - damp * v - fric * np.sign(v))
        err["aba"] = max(err["aba"], _rel(dv, dv_ref))
    return err


def _input_speeds(robot):
    """The speed of each input (same joint)."""
    names = dict(zip(robot.speed_names, robot.speeds))
    return [names[n] for n in robot.input_names]


def _constrained_accelerations(robot, Mp, bp, tau, ui):
    """u' of M u' + b = tau + B^T lambda, B u' = 0 (mimic rows; tree order), by numpy."""
    o = len(robot.speeds)
    B = np.zeros((len(robot.u_dep), o))
    col = {s: k for k, s in enumerate(robot.speeds)}
    ub = 6 if robot.floating_base else 0
    index = {b.joint.name: i for i, b in enumerate(robot.tree.moving)}
    for r, i in enumerate(robot.mimic_bodies):
        target, a, _ = robot.tree.moving[i].joint.mimic
        B[r, ui[col[robot.tree_speeds[ub + i]]]] = 1.0
        B[r, ui[col[robot.tree_speeds[ub + index[target]]]]] = -a
    m = B.shape[0]
    K = np.block([[Mp, B.T], [B, np.zeros((m, m))]])
    sol = np.linalg.solve(K, np.concatenate([tau - bp, np.zeros(m)]))
    return sol[:o]
