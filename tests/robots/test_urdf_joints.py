"""URDF forms Pinocchio loads and symbody used to refuse: a floating joint with an <origin>, an
<inertial> with a mass and no <inertia> (a point mass, with a warning)."""

from __future__ import annotations

import numpy as np
import pytest

import symbody as sb
from symbody.robots import dynamic_terms
from symbody.robots.urdf_parse import PointMassWarning

FLOATING_WITH_ORIGIN = """<robot name="placed">
  <link name="world"/>
  <link name="a"><inertial><origin xyz="0.1 0.2 0" rpy="0.1 0 0.2"/><mass value="1"/>
    <inertia ixx="0.1" ixy="0.01" ixz="0" iyy="0.2" iyz="0" izz="0.3"/></inertial></link>
  <link name="b"><inertial><origin xyz="0.2 0.1 0"/><mass value="2"/></inertial></link>
  <joint name="free" type="floating"><parent link="world"/><child link="a"/>
    <origin xyz="0.1 0.2 0.3" rpy="0.1 0.2 0.3"/></joint>
  <joint name="j" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0.3 0 0"/>
    <axis xyz="0 1 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


def load():
    with pytest.warns(PointMassWarning, match=r"link 'b' \(line 5\).*point mass"):
        return sb.load_urdf(FLOATING_WITH_ORIGIN, floating_base=True)


def test_point_mass_and_placed_floating_joint_agree_with_pinocchio():
    pin = pytest.importorskip("pinocchio")
    from systems.pinocchio_control_oracle import compare_control
    from systems.pinocchio_oracle import compare
    robot = load()
    body = robot.tree.bodies[1]
    np.testing.assert_allclose(body.h, [0.4, 0.2, 0.0])       # m c, and no inertia about c
    np.testing.assert_allclose(body.I_o, 2 * (0.05 * np.eye(3) - np.outer([0.2, 0.1, 0], [0.2, 0.1, 0])))
    pm = pin.buildModelFromXML(FLOATING_WITH_ORIGIN)
    assert pm.joints[1].shortname() == "JointModelFreeFlyer"
    err = compare(pin, robot, sb.compile(robot.eom), pm, np.random.default_rng(0), states=2)
    assert max(err["M"], err["bias"], err["aba"]) < 1e-9, err
    err = compare_control(pin, robot, pm, np.random.default_rng(1), states=2, frames=0)
    assert max(err.values()) < 1e-9, err
    # at q = 0 the base sits at the joint's <origin>
    q0 = robot.default_state()[:robot.nq]
    M = robot.frame_placement("a", q0)
    np.testing.assert_allclose(M[:3, 3], [0.1, 0.2, 0.3], atol=1e-15)


def test_the_system_of_a_placed_floating_joint_equals_the_tree():
    robot = load()
    m1, m2 = sb.compile(robot.eom), sb.compile(robot.to_eom())
    rng = np.random.default_rng(2)
    for _ in range(2):
        q = rng.uniform(-1, 1, robot.nq)
        quat = [3, 4, 5, robot.joint_names.index("base.qw")]
        q[quat] /= np.linalg.norm(q[quat])   # a unit quaternion (qw is last: dependent)
        u, tau = rng.standard_normal(robot.nv), rng.standard_normal(1)
        M1, g1 = dynamic_terms(m1, q, u, robot.constants, tau)
        M2, g2 = dynamic_terms(m2, q, u, robot.constants, tau)
        np.testing.assert_allclose(M2, M1, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(g2, g1, rtol=1e-12, atol=1e-12)
