"""The regressor through its compiled entry (compilation/native_function.py): one state
straight into the C kernel, k states, lists and bad input on the careful path; against
Pinocchio's computeJointTorqueRegressor and the careful path itself."""

from __future__ import annotations

import numpy as np
import pytest

import symbody as sb
from symbody.errors import InputError
from symbody.robots.pinocchio import tree_index
from systems.pinocchio_oracle import random_state, robots_dir

pin = pytest.importorskip("pinocchio")
ROBOTS = robots_dir()


@pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
def test_regressor_entry_agrees_with_pinocchio_and_the_careful_path():
    path = ROBOTS / "ur_description/urdf/ur5_robot.urdf"
    robot = sb.load_urdf(path, symbolic_inertia=True)
    reg = robot.regressor()
    pm = pin.buildModelFromUrdf(str(path))
    pd = pm.createData()
    rng = np.random.default_rng(8)
    _, ui = tree_index(robot)
    N = robot.nq
    Q, U, A, ref = [], [], [], []
    for _ in range(3):
        qp, v = random_state(pin, pm, rng)
        x = robot.from_pinocchio(qp, v)
        qp, v = robot.to_pinocchio(x)
        a = rng.standard_normal(pm.nv)
        Q.append(x[:N])
        U.append(v[ui])
        A.append(a[ui])
        ref.append(pin.computeJointTorqueRegressor(pm, pd, qp, v, a)[ui])
    f = reg.function
    for q, u, a, Yp in zip(Q, U, A, ref):
        Y = reg(q, u, a)
        assert Y.shape == reg.shape and np.abs(Y - Yp).max() <= 1e-12 * np.abs(Yp).max()
        # the careful path (lists) gives the same numbers; a new array each call
        assert np.array_equal(reg(list(q), list(u), list(a)), Y)
        assert reg(q, u, a) is not reg(q, u, a)
    if getattr(f, "_entry", False):          # built where the machine has a C compiler
        assert np.array_equal(f._entry(Q[0], U[0], A[0]), f._careful((Q[0], U[0], A[0]), None))
    many = reg(np.array(Q), np.array(U), np.array(A))
    assert many.shape == (3, *reg.shape)
    assert np.abs(many - np.array(ref)).max() <= 1e-12 * np.abs(np.array(ref)).max()
    # gravity enters the columns linearly through g alone
    Y0, Y2 = reg(Q[0], U[0], A[0], g=0.0), reg(Q[0], U[0], A[0], g=2 * robot.constants[robot.g])
    assert np.allclose(Y2 - ref[0], ref[0] - Y0, rtol=1e-12, atol=1e-12 * np.abs(ref[0]).max())
    with pytest.raises(InputError, match="u must have 6 values"):
        reg(Q[0], U[0][:5], A[0])
