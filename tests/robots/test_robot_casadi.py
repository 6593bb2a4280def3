"""sb.to_casadi of URDF robots: the rhs is the tree's forward-dynamics recursion (the forward
kernel's expressions, O(n)), not the dense mass-matrix solve.

Oracles: the compiled model's rhs (its forward kernel) and the dense path's mass matrix
(``forward_dynamics="solve"``) at random states, with a mimic joint (dependent speed) and
a free-flyer; Pinocchio's ABA on UR5.
"""

from __future__ import annotations

import numpy as np
import pytest

import symbody as sb
from robots.test_tree_forward_dynamics import URDF
from symbody.robots import dynamic_terms
from symbody.robots.pinocchio import tree_index
from systems.pinocchio_oracle import pinocchio_model, random_state, robots_dir

ca = pytest.importorskip("casadi")


def _state(model, robot, rng):
    """A random consistent state (small angles: the free-flyer's quaternion stays one)."""
    P = model.constants_array(robot.constants)
    x = robot.default_state()
    x[:model.N] += rng.uniform(-0.3, 0.3, model.N)
    x[model.N:] = rng.normal(size=model.p)
    return model.consistent_state(x, P) if model.M else x, P


def _rel(got, ref) -> float:
    got, ref = np.asarray(got, float).ravel(), np.asarray(ref, float).ravel()
    return float(np.abs(got - ref).max() / max(1.0, np.abs(ref).max()))


def test_rhs_is_the_recursion_and_equals_model_rhs():
    robot = sb.load_urdf(URDF, floating_base=True)      # a free-flyer and a mimic joint
    model = sb.compile(robot.eom)
    cm = sb.to_casadi(model)
    assert cm.recursion and model.kernels.forward is not None
    assert cm.rhs.n_instructions() > 0
    via_robot = sb.to_casadi(robot)           # the robot itself: its equations compiled
    mx = sb.to_casadi(model, linear_solver="qr")   # behind CasADi's linear-solver nodes
    assert via_robot.recursion and mx.recursion
    rng = np.random.default_rng(11)
    N, p = model.N, model.p
    for _ in range(4):
        x, P = _state(model, robot, rng)
        r = rng.normal(size=len(robot.inputs))
        ref = model.rhs(0.0, x, P, r)
        assert _rel(cm.rhs(x, P, r), ref) <= 1e-12
        assert _rel(via_robot.rhs(x, P, r), ref) <= 1e-12
        assert _rel(mx.rhs(x, P, r), ref) <= 1e-12
        u = model.full_speeds(x[:N], x[N:N + p], P, 0.0, r)
        assert _rel(cm.speeds(x, P, r), u) <= 1e-12
    # the dense blocks, formed on first use: M_d is the compiled model's
    M, _ = dynamic_terms(model, x[:N], u, P, r)
    o = len(u)
    assert _rel(np.asarray(cm.mass_matrix(x, P, r))[:o, :o], M) <= 1e-12


pin = pytest.importorskip("pinocchio")
ROBOTS = robots_dir()


@pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
def test_ur5_rhs_and_jacobian_agree_with_pinocchio():
    # (fixed base; the free-flyer's recursion is checked against model.rhs above, and
    # model.rhs against pin.aba on free-flyers by test_pinocchio_agreement)
    path, floating = ROBOTS / "ur_description/urdf/ur5_robot.urdf", False
    robot = sb.load_urdf(path, floating_base=floating, joint_dynamics=False)
    cm = sb.to_casadi(robot)
    pm = pinocchio_model(pin, path, floating)
    pd = pm.createData()
    P = np.array([float(robot.constants[c]) for c in cm.constants])
    rng = np.random.default_rng(2)
    _, ui = tree_index(robot)
    inputs = [robot.speed_names.index(n) for n in robot.input_names]
    N, nx = robot.nq, len(cm.states)
    X = ca.SX.sym("x", nx)
    R = ca.SX.sym("r", len(robot.inputs))
    xdot = cm.rhs(X, P, R)
    jac = ca.Function("rhs_jacobian", [X, R], [ca.jacobian(xdot, ca.vertcat(X, R))])
    for _ in range(3):
        qp, v = random_state(pin, pm, rng)
        x = robot.from_pinocchio(qp, v)
        qp, v = robot.to_pinocchio(x)
        r = rng.normal(size=len(robot.inputs))
        tau = np.zeros(pm.nv)                 # Pinocchio's order
        tau[np.array(ui)[inputs]] = r
        xd = np.asarray(cm.rhs(x, P, r)).ravel()
        dv = robot.to_pinocchio(x, xd)[2]
        assert _rel(dv, pin.aba(pm, pd, qp, v, tau)) <= 1e-12
        # CasADi's AD of the recursion against central differences of the function
        J = np.asarray(jac(x, r))
        h = 1e-6
        k = N + 1                                # one speed column
        e = np.zeros(nx)
        e[k] = h
        fd = (np.asarray(cm.rhs(x + e, P, r)) - np.asarray(cm.rhs(x - e, P, r))).ravel() / (2 * h)
        assert _rel(J[:, k], fd) <= 1e-6
