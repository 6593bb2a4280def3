"""The inverse- and forward-dynamics derivatives and the tangent map against Pinocchio
(computeRNEADerivatives, computeABADerivatives, integrate) at random states."""

from __future__ import annotations

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

import symbody as sb  # noqa: E402
from symbody.errors import InputError  # noqa: E402
from systems.pinocchio_derivatives_oracle import compare_derivatives  # noqa: E402
from systems.pinocchio_oracle import pinocchio_model, random_state, robots_dir  # noqa: E402

ROBOTS = robots_dir()
pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")

CASES = [     # (file, free-flyer)
    ("ur_description/urdf/ur5_robot.urdf", False),           # revolute chain
    ("panda_description/urdf/panda.urdf", False),            # prismatic fingers, a mimic joint
    ("solo_description/robots/solo12.urdf", False),          # four branches on a fixed root
    ("solo_description/robots/solo12.urdf", True),           # the free-flyer, four branches
]   # every robot of example-robot-data: benchmarks/bench_robot_derivatives.py


@pytest.fixture(scope="module")
def solo():
    path = ROBOTS / CASES[3][0]
    return sb.load_urdf(path, floating_base=True), pinocchio_model(pin, path, True)


@pytest.mark.parametrize(("path", "floating"), CASES, ids=[c[0].split("/")[-1] + "-free" * c[1] for c in CASES])
def test_agrees_with_pinocchio(path, floating):
    robot = sb.load_urdf(ROBOTS / path, floating_base=floating)
    pm = pinocchio_model(pin, ROBOTS / path, floating)
    err = compare_derivatives(pin, robot, pm, np.random.default_rng(3), states=3)
    assert max(err.values()) < 1e-9, err


def test_planar_floating_and_prismatic_joints_in_the_tree():
    # a planar joint (damped), a revolute, a floating joint inside the tree, a prismatic one
    from test_urdf_joints import MULTI_DOF
    robot = sb.load_urdf(MULTI_DOF)
    err = compare_derivatives(pin, robot, pin.buildModelFromXML(MULTI_DOF),
                              np.random.default_rng(4), states=2)
    assert max(err.values()) < 1e-9, err


def test_tangent_map_is_pinocchio_integrate(solo):
    robot, pm = solo
    rng = np.random.default_rng(5)
    qp, v = random_state(pin, pm, rng)
    x = robot.from_pinocchio(qp, v)
    q = x[:robot.nq]
    K = robot.tangent_map(q)
    assert K.shape == (robot.nq, len(robot.speeds))
    eps = 1e-6     # central differences of q ⊕ ±eps v: first order exact to O(eps^2)
    plus = robot.from_pinocchio(pin.integrate(pm, qp, eps * v), v)[:robot.nq]
    minus = robot.from_pinocchio(pin.integrate(pm, qp, -eps * v), v)[:robot.nq]
    np.testing.assert_allclose((plus - minus) / (2 * eps), K @ v, rtol=0, atol=1e-8)


def test_batches_and_bad_input(solo):
    robot, pm = solo
    rng = np.random.default_rng(2)
    o, N = len(robot.speeds), robot.nq
    Q = np.array([robot.from_pinocchio(*random_state(pin, pm, rng))[:N] for _ in range(3)])
    U, T = rng.standard_normal((2, 3, o))
    fd = robot.forward_dynamics_derivatives
    batch = fd(Q, U, T)
    for k in range(3):     # the same numbers but for the order of round-off in the solves
        for a, b in zip(batch, fd(Q[k], U[k], T[k])):
            np.testing.assert_allclose(a[k], b, rtol=1e-10, atol=1e-10 * np.abs(b).max())
    # at u' = FD(q, u, tau) the inverse dynamics give tau back and dtau/du' = M
    ud = fd.accelerations(Q[0], U[0], T[0])
    np.testing.assert_allclose(robot.inverse_dynamics(Q[0], U[0], ud), T[0], atol=1e-10)
    _, _, M = robot.inverse_dynamics_derivatives(Q[0], U[0], ud)
    np.testing.assert_allclose(M, robot.mass_matrix(Q[0]), rtol=1e-13, atol=1e-13)
    with pytest.raises(InputError, match="tau must have 18 values"):
        fd(Q[0], U[0], np.zeros(5))



def test_out_arrays():
    # the emitted kernel writes into out= (views of it returned), the same numbers as without;
    # RobotFunction.into does the same for the inverse-dynamics derivatives
    path = ROBOTS / CASES[0][0]
    robot = sb.load_urdf(path)          # UR5: its kernels compiled by the test above
    fd = robot.forward_dynamics_derivatives
    assert fd.emitted is not None
    rng = np.random.default_rng(7)
    q, u, tau = rng.standard_normal((3, 6))
    out = np.empty((3, 6, 6))
    views = fd(q, u, tau, out=out)
    assert all(np.shares_memory(v, out) for v in views)
    for a, b in zip(views, fd(q, u, tau)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(InputError, match="out must be"):
        fd(q, u, tau, out=np.empty((3, 6)))
    # one state through the compiled entry (where the machine has a C compiler), lists and
    # a batch of one on the careful path: the same bits, a new array each call
    one = fd(q, u, tau)
    if fd._entry:
        assert np.array_equal(fd._entry(q, u, tau), fd.emitted(list(q), list(u), list(tau)))
    for a, b, c in zip(one, fd(list(q), list(u), list(tau)), fd(q[None], u[None], tau[None])):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c[0])
    assert fd(q, u, tau)[0].base is not one[0].base
    K = robot.inverse_dynamics_derivatives
    res = np.empty((3, 6, 6))
    assert K.into(q, u, tau, out=res) is res
    np.testing.assert_array_equal(res, K(q, u, tau))


def test_tree_sparse_solve_path(monkeypatch):
    # above EMITTED_MAX_SPEEDS: one kernel of dtau/dx and M, then M = L^T D L solved along the
    # parent array in the same compiled call; here forced on Solo12's free-flyer (a chain of
    # six above four branches) against Pinocchio, a batch, out= and bad input
    from symbody.robots import control
    monkeypatch.setattr(control, "EMITTED_MAX_SPEEDS", 0)
    path = ROBOTS / CASES[3][0]
    robot = sb.load_urdf(path, floating_base=True)
    fd = robot.forward_dynamics_derivatives
    assert fd.emitted is None and fd.tree_solve is not None
    assert fd.tree_solve[2][:8] == [-1, 0, 1, 2, 3, 4, 5, 6]
    pm = pinocchio_model(pin, path, True)
    err = compare_derivatives(pin, robot, pm, np.random.default_rng(8), states=2)
    assert max(err.values()) < 1e-9, err
    rng = np.random.default_rng(9)
    o, N = len(robot.speeds), robot.nq
    Q = np.array([robot.from_pinocchio(*random_state(pin, pm, rng))[:N] for _ in range(2)])
    U, T = rng.standard_normal((2, 2, o))
    batch = fd(Q, U, T[0])
    out = np.empty((3, o, o))
    views = fd(Q[1], U[1], T[0], out=out)
    assert all(np.shares_memory(v, out) for v in views)
    for a, b, c in zip(batch, fd(list(Q[1]), list(U[1]), list(T[0])), views):
        np.testing.assert_array_equal(a[1], b)
        np.testing.assert_array_equal(b, c)
    with pytest.raises(InputError, match="tau must have 18 values"):
        fd(Q[0], U[0], np.zeros(5))
    with pytest.raises(InputError, match="out must be"):
        fd(Q[0], U[0], T[0], out=np.empty((3, o)))
