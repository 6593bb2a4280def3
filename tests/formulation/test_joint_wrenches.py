"""The joints' wrenches of a SymPy System by auxiliary speeds: the book's rod tensions, the
zoo's hand-written auxiliary speeds along a trajectory, a URDF robot's Newton-Euler."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import sympy as sm
from sympy.physics.mechanics import (
    Particle,
    PinJoint,
    ReferenceFrame,
    RigidBody,
    System,
    dynamicsymbols,
)

import symbody as sb
from symbody.compat.sympy import TIME
from symbody.errors import InputError

BOOK = json.loads((Path(__file__).parents[1] / "data" / "book_reference.json").read_text())
REF = BOOK["noncontributing_double_pendulum"]


def double_pendulum_system():
    """The chapter's double pendulum written with joints: two particles on massless rods,
    PinJoints at O and at P1 (relative angle q2), no auxiliary speeds written by hand."""
    m1, m2, l1, l2, g = sm.symbols("m1 m2 l1 l2 g")
    q1, q2, u1, u2 = dynamicsymbols("q1 q2 u1 u2")
    ground = RigidBody("ground")
    N = ground.frame
    A, B = ReferenceFrame("A"), ReferenceFrame("B")
    P1, P2 = Particle("P1", mass=m1), Particle("P2", mass=m2)
    rod1 = PinJoint("rod1", ground, P1, q1, u1, child_point=l1 * A.y, child_interframe=A,
                    joint_axis=N.z)
    rod2 = PinJoint("rod2", P1, P2, q2, u2, parent_interframe=A, child_point=l2 * B.y,
                    child_interframe=B, joint_axis=A.z)
    system = System.from_newtonian(ground)
    system.add_joints(rod1, rod2)
    system.apply_uniform_gravity(-g * N.y)
    return system, (m1, m2, l1, l2, g)


def wrench_function(jw, model):
    """The joints' wrenches (n, 6) as a compiled function of (q, u, u', p)."""
    udots = [u.diff(TIME) for u in model.speeds]
    return sb.make_function([list(model.coordinates), list(model.speeds), udots,
                             list(model.constants)], jw.matrix())


@pytest.fixture(scope="module")
def pendulum():
    system, consts = double_pendulum_system()
    jw = sb.joint_wrenches(system)
    system.form_eoms(eom_method=sb.KanesMethod)
    model = sb.compile(system.eom_method.to_eom(), constants=list(consts))
    return system, jw, model


def test_rod_tensions_equal_the_books_auxiliary_speed_values(pendulum):
    system, jw, model = pendulum
    assert jw.joints == ("rod1", "rod2") and len(jw.forces) == len(jw.speeds) == 12
    assert list(jw.outputs())[:2] == ["rod1.fx", "rod1.fy"]
    q_abs, u_abs = np.radians(REF["q0_deg"]), np.radians(REF["u0_deg_s"])
    # the joints' coordinates are relative angles; the book's are absolute
    x = np.array([q_abs[0], q_abs[1] - q_abs[0], u_abs[0], u_abs[1] - u_abs[0]])
    p = np.array(REF["p"])
    ud, _ = model.accelerations(x[:2], x[2:], p)
    np.testing.assert_allclose([ud[0], ud[0] + ud[1]], REF["ud1_ud2_T1_T2"][:2], rtol=1e-8)
    W = wrench_function(jw, model)(x[:2], x[2:], ud, p)
    # the force of rod i on its particle, along the rod (the joint frame's y axis): T_i
    np.testing.assert_allclose(W[:, 1], REF["ud1_ud2_T1_T2"][2:], rtol=1e-8)
    # massless rods, frictionless pins: no force across a rod, no moment
    assert np.abs(W[:, [0, 2, 3, 4, 5]]).max() < 1e-12 * np.abs(W).max()


def test_tensions_along_the_zoo_models_trajectory(pendulum):
    # the zoo's two-particle pendulum writes the auxiliary speeds by hand (absolute angles):
    # its auxiliary forces along a run equal the System's joint wrenches at the same states
    system, jw, model = pendulum
    zoo = sb.models.two_particle_pendulum()
    sol = sb.simulate(sb.compile(zoo.eom), (0.0, 1.0), zoo.initial_state, zoo.constants,
                      t_eval=np.linspace(0, 1, 9), outputs=["auxiliary_forces"])
    T1, T2 = sol.outputs["T1"], sol.outputs["T2"]
    p = np.array([zoo.constants[s] for s in model.constants])
    X = np.column_stack([sol.q[:, 0], sol.q[:, 1] - sol.q[:, 0]])
    U = np.column_stack([sol.u[:, 0], sol.u[:, 1] - sol.u[:, 0]])
    UD = np.array([model.accelerations(x, u, p)[0] for x, u in zip(X, U)])
    W = wrench_function(jw, model)(X, U, UD, p)
    np.testing.assert_allclose(W[:, 0, 1], T1, rtol=1e-9)
    np.testing.assert_allclose(W[:, 1, 1], T2, rtol=1e-9)
    # and as named outputs of a run of the System's own model
    run = sb.simulate(model, (0.0, 0.2), X[0].tolist() + U[0].tolist(), p,
                      t_eval=[0.0, 0.2], outputs=[jw.outputs(), {"W": jw.matrix()}])
    assert run.outputs["W"].shape == (2, 2, 6)
    np.testing.assert_allclose(run.outputs["rod2.fy"], run.outputs["W"][:, 1, 1], rtol=1e-12)
    np.testing.assert_allclose(run.outputs["rod1.fy"][0], T1[0], rtol=1e-9)


def test_a_urdf_robots_system_gives_newton_eulers_wrenches():
    # revolute, prismatic (its reaction point fixed in the parent) and continuous joints, a
    # fixed joint merged, damping and friction: robot.system's wrenches against the tree's
    from robots.test_system import URDF
    robot = sb.load_urdf(URDF, mimic=False)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"\s*Velocity of .* automatically calculated")
        jw = sb.joint_wrenches(robot.system)
    assert jw.joints == robot.joint_wrench_names == ("j1", "j2", "j3", "j4")
    q, u = list(robot.coordinates), list(robot.speeds)
    f = sb.make_function([q, u, [s.diff(TIME) for s in u], [robot.g], list(robot.inputs)],
                         jw.matrix())
    rng = np.random.default_rng(0)
    Q, U, UD = rng.standard_normal((3, 4, 4))
    tau = rng.standard_normal((4, 4))
    Ws = f(Q, U, UD, [9.81], tau)
    Wr = robot.joint_wrenches(Q, U, UD)
    # the System's loads hold the joint inputs, damping and friction: its wrench is the
    # tree's (Pinocchio's data.f, checked in tests/robots) less that actuation along the axis
    for i, name in enumerate(robot.joint_wrench_names):
        joint = next(b.joint for b in robot.tree.moving if b.joint.name == name)
        v = U[:, robot.speed_names.index(name)]
        act = tau[:, robot.input_names.index(name)] - joint.damping * v \
            - joint.friction * np.sign(v)
        part = slice(0, 3) if joint.type == "prismatic" else slice(3, 6)
        Wr[:, i, part] -= np.outer(act, joint.axis)
    np.testing.assert_allclose(Ws, Wr, rtol=0, atol=1e-12 * np.abs(Wr).max())


def test_bad_input():
    system, _ = double_pendulum_system()
    with pytest.raises(InputError, match="no joint 'rod3'"):
        sb.joint_wrenches(system, joints=["rod3"])
    assert sb.joint_wrenches(system, joints="rod2").joints == ("rod2",)
