"""robot.system (SymPy's System) and robot.to_eom(): the same equations as the tree's,
and loads added the SymPy way enter them."""

from __future__ import annotations

import numpy as np
import sympy as sm
from sympy.physics.mechanics import Torque

import symbody as sb
from symbody.robots import dynamic_terms

URDF = """<robot name="mixed">
  <link name="base"/>
  <link name="a"><inertial><origin xyz="0.1 0.02 0.3" rpy="0.2 0.1 -0.3"/><mass value="1.5"/>
    <inertia ixx="0.02" iyy="0.03" izz="0.025" ixy="0.001" ixz="-0.002" iyz="0.0005"/></inertial></link>
  <link name="a_tip"><inertial><origin xyz="0 0 0.1"/><mass value="0.3"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><origin xyz="0.05 0 0"/><mass value="0.8"/>
    <inertia ixx="0.004" iyy="0.005" izz="0.006" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="c"><inertial><mass value="0.2"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="d"><inertial><mass value="0.2"/><inertia ixx="0.001" iyy="0.002" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><origin xyz="0 0 0.2" rpy="0.3 0 0"/>
    <axis xyz="0 0.6 0.8"/><limit lower="-2" upper="2" effort="1" velocity="1"/>
    <dynamics damping="0.3" friction="0.1"/></joint>
  <joint name="weld" type="fixed"><parent link="a"/><child link="a_tip"/><origin xyz="0 0.1 0.4" rpy="0 1.2 0"/></joint>
  <joint name="j2" type="prismatic"><parent link="a_tip"/><child link="b"/><origin xyz="0.1 0 0"/>
    <axis xyz="1 0 0"/><limit lower="-0.5" upper="0.5" effort="1" velocity="1"/></joint>
  <joint name="j3" type="continuous"><parent link="b"/><child link="c"/><origin xyz="0 0.2 0" rpy="0 0 0.5"/>
    <axis xyz="0 0 1"/></joint>
  <joint name="j4" type="revolute"><parent link="b"/><child link="d"/><origin xyz="0 -0.2 0"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>
    <mimic joint="j3" multiplier="-0.5" offset="0.1"/></joint>
</robot>"""


def test_system_equations_equal_the_tree_equations():
    robot = sb.load_urdf(URDF)
    assert robot.joint_names == ("j1", "j2", "j3", "j4") and robot.input_names == ("j1", "j2", "j3")
    assert set(robot.link_frames) == {"base", "a", "a_tip", "b", "c", "d"}
    eom_sys = robot.to_eom()
    m1, m2 = sb.compile(robot.eom), sb.compile(eom_sys)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, u, tau = rng.uniform(-1, 1, 4), rng.standard_normal(4), rng.standard_normal(3)
        M1, g1 = dynamic_terms(m1, q, u, robot.constants, tau)
        M2, g2 = dynamic_terms(m2, q, u, robot.constants, tau)
        np.testing.assert_allclose(M2, M1, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(g2, g1, rtol=1e-12, atol=1e-14)
    # the constrained forward dynamics agree too (mimic: u_j4 = -0.5 u_j3)
    x = np.concatenate([[0.2, 0.1, -0.4, 0.3], rng.standard_normal(3)])
    np.testing.assert_allclose(m2.rhs(0, x, robot.constants, [1, 2, 3]),
                               m1.rhs(0, x, robot.constants, [1, 2, 3]), rtol=1e-10, atol=1e-12)


def test_a_load_added_to_the_system_enters_to_eom():
    robot = sb.load_urdf(URDF)
    T = sm.Symbol("T")
    frame, parent = robot.link_frames["c"], robot.link_frames["b"]
    # a torque pair about j3's axis: a motor between b and c
    robot.system.add_loads(Torque(frame, T * frame.z), Torque(parent, -T * frame.z))
    eom = robot.to_eom()
    assert T in eom.constants
    model, base = sb.compile(eom), sb.compile(robot.eom)
    p = {**robot.constants, T: 0.7}
    q, u = np.array([0.1, 0.2, 0.3, 0.25]), np.array([0.3, -0.2, 0.5, -0.25])
    _, g = dynamic_terms(model, q, u, p, np.zeros(3))
    _, g0 = dynamic_terms(base, q, u, robot.constants, np.zeros(3))
    np.testing.assert_allclose(g - g0, [0, 0, -0.7, 0], atol=1e-12)


def test_an_actuator_added_to_the_system_enters_to_eom():
    """SymPy's System keeps actuators apart from loads: a TorqueActuator between b and c
    about j3's axis acts as the torque pair of the test above."""
    from sympy.physics.mechanics import TorqueActuator

    robot = sb.load_urdf(URDF)
    T = sm.Symbol("T")
    frame, parent = robot.link_frames["c"], robot.link_frames["b"]
    robot.system.add_actuators(TorqueActuator(T, frame.z, frame, parent))
    model, base = sb.compile(robot.to_eom()), sb.compile(robot.eom)
    q, u = np.array([0.1, 0.2, 0.3, 0.25]), np.array([0.3, -0.2, 0.5, -0.25])
    _, g = dynamic_terms(model, q, u, {**robot.constants, T: 0.7}, np.zeros(3))
    _, g0 = dynamic_terms(base, q, u, robot.constants, np.zeros(3))
    np.testing.assert_allclose(g - g0, [0, 0, -0.7, 0], atol=1e-12)


def test_scene_has_a_segment_per_joint():
    robot = sb.load_urdf(URDF)
    scene = robot.scene
    assert len(scene.visualization_frames) == 5 + 4 and robot.world_frame is scene.reference_frame


def test_floating_base_system_equations_equal_the_tree_equations():
    heavy = URDF.replace('<link name="base"/>', '<link name="base"><inertial><mass value="3"/>'
                         '<inertia ixx="0.1" iyy="0.2" izz="0.15" ixy="0" ixz="0" iyz="0"/>'
                         '</inertial></link>')
    robot = sb.load_urdf(heavy, floating_base=True)
    m1, m2 = sb.compile(robot.eom), sb.compile(robot.to_eom())
    rng = np.random.default_rng(4)
    N = len(robot.coordinates)
    quat = [robot.coordinates.index(s) for s in robot.tree_coordinates[3:7]]
    q = rng.uniform(-1, 1, N)
    q[quat] /= np.linalg.norm(q[quat])
    u = rng.standard_normal(len(robot.speeds))
    tau = rng.standard_normal(3)
    M1, g1 = dynamic_terms(m1, q, u, robot.constants, tau)
    M2, g2 = dynamic_terms(m2, q, u, robot.constants, tau)
    np.testing.assert_allclose(M2, M1, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(g2, g1, rtol=1e-12, atol=1e-13)
