"""URDF forms Pinocchio loads and symbody used to refuse: planar joints, floating joints in the
tree, a floating joint with an <origin>, an <inertial> with a mass and no <inertia> (a point
mass, with a warning)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import symbody as sb
from symbody.errors import InputError
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
    err = compare_control(pin, robot, pm, np.random.default_rng(1), states=2, frames=3)
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


def _link(name, mass=1.0, com="0 0 0"):
    return (f'<link name="{name}"><inertial><origin xyz="{com}" rpy="0.1 0 0.2"/><mass '
            f'value="{mass}"/><inertia ixx="0.1" ixy="0.01" ixz="0" iyy="0.2" iyz="0" izz="0.3"/>'
            '</inertial></link>')


LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'
MULTI_DOF = f"""<robot name="multi">{_link("base")}{_link("a", com="0.1 0.2 0.3")}
{_link("b", com="0.1 0 0")}{_link("c", 2, "0 0.1 0.1")}{_link("d", 0.5, "0.05 0 0")}
<joint name="pj" type="planar"><parent link="base"/><child link="a"/>
  <origin xyz="0.1 0 0.2" rpy="0.3 0.2 0.1"/><axis xyz="0 0 1"/><dynamics damping="0.2"/></joint>
<joint name="rj" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0.3 0 0"/>
  <axis xyz="0 1 0"/>{LIMIT}</joint>
<joint name="fj" type="floating"><parent link="b"/><child link="c"/>
  <origin xyz="0.1 0.2 0.3" rpy="0.1 0.2 0.3"/></joint>
<joint name="sj" type="prismatic"><parent link="c"/><child link="d"/><origin xyz="0.1 0 0"/>
  <axis xyz="1 0 0"/>{LIMIT}</joint>
</robot>"""


def _unit_quaternion(robot, q, joint):
    k = [robot.joint_names.index(f"{joint}.{c}") for c in ("qx", "qy", "qz", "qw")]
    q[k] /= np.linalg.norm(q[k])
    return q


def test_planar_and_floating_joints_in_the_tree():
    robot = sb.load_urdf(MULTI_DOF)
    # Pinocchio's variables: a planar joint's (x, y, θ) and (vx, vy, ω) in its child's axes,
    # a floating joint's free-flyer (its qw dependent, last); inputs on the planar joint
    assert robot.joint_names == ("pj.x", "pj.y", "pj.theta", "rj", "fj.x", "fj.y", "fj.z",
                                 "fj.qx", "fj.qy", "fj.qz", "sj", "fj.qw")
    assert robot.speed_names == ("pj.vx", "pj.vy", "pj.wz", "rj", "fj.vx", "fj.vy", "fj.vz",
                                 "fj.wx", "fj.wy", "fj.wz", "sj")
    assert robot.input_names == ("pj.vx", "pj.vy", "pj.wz", "rj", "sj")
    assert robot.joint_wrench_names == ("pj", "rj", "fj", "sj")
    assert robot.eom.holonomic_names == ("fj.quaternion_norm",)
    x = robot.default_state()
    assert x[robot.joint_names.index("fj.qw")] == 1.0
    with pytest.raises(InputError, match="planar or floating joints"):
        sb.load_urdf(MULTI_DOF, symbolic_inertia=True).regressor()


def test_planar_and_floating_joints_agree_with_pinocchio():
    pin = pytest.importorskip("pinocchio")
    from systems.pinocchio_control_oracle import compare_control
    from systems.pinocchio_oracle import compare
    robot = sb.load_urdf(MULTI_DOF)
    pm = pin.buildModelFromXML(MULTI_DOF)
    assert [j.shortname() for j in pm.joints][1:] == ["JointModelPlanar", "JointModelRY",
                                                      "JointModelFreeFlyer", "JointModelPX"]
    err = compare(pin, robot, sb.compile(robot.eom), pm, np.random.default_rng(0), states=2)
    assert max(err["M"], err["bias"], err["aba"]) < 1e-9, err
    err = compare_control(pin, robot, pm, np.random.default_rng(1), states=2, frames=2)
    assert max(err.values()) < 1e-9, err
    # Pinocchio's (q, v): the planar angle as (cos, sin), round trip
    qp = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
    v = np.random.default_rng(2).standard_normal(pm.nv)
    q2, v2 = robot.to_pinocchio(robot.from_pinocchio(qp, v))
    np.testing.assert_allclose(q2, qp, atol=1e-15)
    np.testing.assert_allclose(v2, v, atol=0)


def test_the_system_of_planar_and_floating_joints_equals_the_tree():
    # the planar joint and the floating joint below it (the revolute and prismatic joints
    # around them are the System's PinJoint and PrismaticJoint, checked in test_system.py)
    text = re.sub(r'<joint name="(rj|sj)".*?</joint>', "", MULTI_DOF, flags=re.S)
    text = text.replace('<parent link="b"/><child link="c"/>', '<parent link="a"/><child link="c"/>')
    text = re.sub(r'<link name="(b|d)">.*?</link>', "", text, flags=re.S)
    robot = sb.load_urdf(text)
    assert robot.joint_wrench_names == ("pj", "fj")
    m1, m2 = sb.compile(robot.eom), sb.compile(robot.to_eom())
    rng = np.random.default_rng(3)
    q = _unit_quaternion(robot, robot.default_state()[:robot.nq] + 0.2 * rng.standard_normal(10),
                         "fj")
    u, tau = rng.standard_normal(robot.nv), rng.standard_normal(3)
    M1, g1 = dynamic_terms(m1, q, u, robot.constants, tau)
    M2, g2 = dynamic_terms(m2, q, u, robot.constants, tau)
    np.testing.assert_allclose(M2, M1, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g2, g1, rtol=1e-12, atol=1e-12)


def test_a_planar_joint_axis_other_than_z_is_not_used_and_said():
    text = MULTI_DOF.replace('<axis xyz="0 0 1"/><dynamics', '<axis xyz="1 0 0"/><dynamics')
    with pytest.warns(UserWarning, match=r"joint 'pj' \(line 4\).*x-y plane.*not used"):
        sb.load_urdf(text)
