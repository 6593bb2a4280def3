"""load_urdf against Pinocchio (crba, rnea, aba) on example-robot-data's robots."""

from __future__ import annotations

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

import symbody as sb  # noqa: E402
from systems.pinocchio_oracle import compare, pinocchio_model, robots_dir  # noqa: E402

ROBOTS = robots_dir()
pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")

CASES = [
    ("ur_description/urdf/ur5_robot.urdf", False),           # revolute chain
    ("panda_description/urdf/panda.urdf", False),            # prismatic fingers, a mimic joint
    ("solo_description/robots/solo12.urdf", True),           # free-flyer, 4 legs
    ("double_pendulum_description/urdf/double_pendulum_continuous.urdf", False),  # continuous
    ("talos_data/robots/talos_left_arm.urdf", False),        # damping, fixed joints merged
]


@pytest.mark.parametrize(("path", "floating"), CASES, ids=[c[0].split("/")[-1] for c in CASES])
def test_agrees_with_pinocchio(path, floating):
    f = ROBOTS / path
    robot = sb.load_urdf(f, floating_base=floating)
    model = sb.compile(robot.eom)
    pm = pinocchio_model(pin, f, floating)
    err = compare(pin, robot, model, pm, np.random.default_rng(1), states=3)
    assert err["M"] < 1e-9 and err["bias"] < 1e-9 and err["aba"] < 1e-9, err


def test_joint_order_and_names_follow_pinocchio():
    f = ROBOTS / "panda_description/urdf/panda.urdf"
    robot = sb.load_urdf(f)
    pm = pin.buildModelFromUrdf(str(f))
    # the model puts the mimic joint (a dependent coordinate) last; otherwise Pinocchio's order
    assert robot.joint_names[:-1] == tuple(n for n in list(pm.names)[1:]
                                           if n != robot.joint_names[-1])
    assert robot.joint_names[-1] == "panda_finger_joint2"
    assert robot.input_names == robot.joint_names[:-1]
    assert len(robot.eom.specifieds) == 8 and robot.eom.q_dep == robot.coordinates[-1:]


def test_state_conversions_round_trip():
    f = ROBOTS / "solo_description/robots/solo12.urdf"
    robot = sb.load_urdf(f, floating_base=True)
    pm = pinocchio_model(pin, f, True)
    q = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
    v = np.random.default_rng(0).standard_normal(pm.nv)
    x = robot.from_pinocchio(q, v)
    q2, v2 = robot.to_pinocchio(x)
    np.testing.assert_array_equal(q2, q)
    np.testing.assert_array_equal(v2, v)
    # continuous joints: (cos, sin) in Pinocchio, the angle in symbody
    g = ROBOTS / "double_pendulum_description/urdf/double_pendulum_continuous.urdf"
    rob2 = sb.load_urdf(g)
    x = np.array([0.3, -2.0, 0.1, 0.2])
    qp, vp = rob2.to_pinocchio(x)
    np.testing.assert_allclose(qp, [np.cos(0.3), np.sin(0.3), np.cos(-2.0), np.sin(-2.0)])
    np.testing.assert_allclose(rob2.from_pinocchio(qp, vp), x, rtol=0, atol=1e-15)


def test_order_with_fixed_joints_before_moving_ones():
    # the tree's order is depth first with joints by name, numbered when visited: a moving
    # joint below a fixed one whose name sorts first comes before its moving siblings
    f = ROBOTS / "tiago_description/robots/tiago_no_hand.urdf"
    with pytest.warns(UserWarning, match="not positive semi-definite"):
        robot = sb.load_urdf(f, invalid_inertia="warn")
    pm = pin.buildModelFromUrdf(str(f))
    assert robot.joint_names == tuple(pm.names)[1:]
    err = compare(pin, robot, sb.compile(robot.eom), pm, np.random.default_rng(3), states=2)
    assert err["M"] < 1e-9 and err["bias"] < 1e-9 and err["aba"] < 1e-9, err
