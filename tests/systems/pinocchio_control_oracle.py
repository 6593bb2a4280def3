"""Pinocchio as the oracle of a robot's kinematics, dynamics terms and joint wrenches.

``compare_control(pin, robot, pm, rng)`` evaluates symbody's compiled functions (``robot.
frame_placement``, ``frame_jacobian`` in the three references, ``frame_velocity``,
``frame_acceleration``, ``center_of_mass`` and its Jacobian, ``inverse_dynamics``,
``mass_matrix``, ``bias``, ``gravity_torques``, ``joint_wrenches``) on a batch of random
states at once and returns the largest relative error of each against Pinocchio at the same
states (|a - b|_max / max(1, |b|_max)).  Used by tests/robots and
benchmarks/bench_robot_control.py.
"""

from __future__ import annotations

import numpy as np

from symbody.robots.pinocchio import full_speeds, tree_index
from systems.pinocchio_oracle import random_state


def _rel(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        raise AssertionError(f"shapes {a.shape} and {b.shape}")
    if not b.size:
        return 0.0
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def sample_frames(pin, pm, robot, count: int) -> list[tuple[str, int]]:
    """``count`` frames spread over Pinocchio's frame list, its last frame included (all of
    them when count <= 0): (symbody's name, Pinocchio's frame id).  A joint's frame whose
    name is also a link's is symbody's frame of the joint's child link (the same place)."""
    ids = list(range(len(pm.frames)))
    if 0 < count < len(ids):
        ids = list(np.unique(np.linspace(0, len(ids) - 1, count).round().astype(int)))
    out = []
    for i in ids:
        f = pm.frames[int(i)]
        name = f.name
        if f.type != pin.FrameType.BODY and name in robot.urdf.links and name in robot.urdf.joints:
            name = robot.urdf.joints[name].child
        out.append((name, int(i)))
    return out


def _joint_dynamics(robot, nv: int) -> tuple[np.ndarray, np.ndarray]:
    damp, fric = np.zeros(nv), np.zeros(nv)
    if robot.joint_dynamics:        # on each speed of a joint (Pinocchio's v: the tree order)
        for i, b in enumerate(robot.tree.moving):
            sl = robot.tree_layout.u_slices[i + 1]
            damp[sl], fric[sl] = b.joint.damping, b.joint.friction
    return damp, fric


def compare_control(pin, robot, pm, rng, states: int = 3, frames: int = 8) -> dict:
    """Max relative errors (see the module docstring); ``frames``: how many frames
    (:func:`sample_frames`)."""
    pd = pm.createData()
    N = robot.nq
    _, ui = tree_index(robot)
    damp, fric = _joint_dynamics(robot, pm.nv)
    names = sample_frames(pin, pm, robot, frames)
    refs = (("local", pin.LOCAL), ("world", pin.WORLD),
            ("local_world_aligned", pin.LOCAL_WORLD_ALIGNED))
    Q, U, UD, ref = [], [], [], {}

    def put(key, value):
        ref.setdefault(key, []).append(np.asarray(value))

    off = 2 if robot.floating_base else 1
    joint_names = list(pm.names)[off:]
    order = [joint_names.index(n) for n in robot.joint_wrench_names]
    for _ in range(states):
        qp, v = random_state(pin, pm, rng)
        x = robot.from_pinocchio(qp, v)
        qp, v = robot.to_pinocchio(x)
        a = rng.standard_normal(pm.nv)
        Q.append(x[:N])
        U.append(full_speeds(robot, x[N:]))
        UD.append(a[ui])
        pin.forwardKinematics(pm, pd, qp, v, a)
        pin.updateFramePlacements(pm, pd)
        pin.computeJointJacobians(pm, pd, qp)
        for _, fid in names:
            put(("placement", fid), pd.oMf[fid].homogeneous)
            for key, rf in refs:
                put(("jacobian", fid, key), pin.getFrameJacobian(pm, pd, fid, rf)[:, ui])
                put(("velocity", fid, key), pin.getFrameVelocity(pm, pd, fid, rf).vector)
                put(("acceleration", fid, key), pin.getFrameAcceleration(pm, pd, fid, rf).vector)
        put(("com",), pin.centerOfMass(pm, pd, qp))
        put(("com_jacobian",), pin.jacobianCenterOfMass(pm, pd, qp)[:, ui])
        extra = damp * v + fric * np.sign(v)
        put(("rnea",), (pin.rnea(pm, pd, qp, v, a) + extra)[ui])
        f = np.array([pd.f[i].vector for i in range(off, pm.njoints)]).reshape(-1, 6)
        put(("wrenches",), f[order])
        Mp = pin.crba(pm, pd, qp)
        put(("M",), (np.triu(Mp) + np.triu(Mp, 1).T)[np.ix_(ui, ui)])
        put(("bias",), (pin.nonLinearEffects(pm, pd, qp, v) + extra)[ui])
        put(("gravity",), pin.computeGeneralizedGravity(pm, pd, qp)[ui])
    Q, U, UD = np.array(Q), np.array(U), np.array(UD)
    err: dict = {}

    def check(group, ours, key):
        theirs = np.array(ref[key])
        err[group] = max(err.get(group, 0.0), max(_rel(o, t) for o, t in zip(ours, theirs)))

    for name, fid in names:
        check("placement", robot.frame_placement(name, Q), ("placement", fid))
        for key, _ in refs:
            check(f"J {key}", robot.frame_jacobian(name, Q, key), ("jacobian", fid, key))
            check("velocity", robot.frame_velocity(name, Q, U, key), ("velocity", fid, key))
            check("acceleration", robot.frame_acceleration(name, Q, U, UD, key),
                  ("acceleration", fid, key))
    check("com", robot.center_of_mass(Q), ("com",))
    check("com J", robot.center_of_mass_jacobian(Q), ("com_jacobian",))
    check("rnea", robot.inverse_dynamics(Q, U, UD), ("rnea",))
    check("M", robot.mass_matrix(Q), ("M",))
    check("bias", robot.bias(Q, U), ("bias",))
    check("gravity", robot.gravity_torques(Q), ("gravity",))
    check("wrenches", robot.joint_wrenches(Q, U, UD), ("wrenches",))
    return err
