"""robot.add_ground_contact and robot.add_pd_control: contact on the URDF's collision
geometry, inside the tree's equations (external forces on the links through their
Jacobians), checked against robot.system's equations (symbody.contact's Contact loads on
SymPy's link frames, formed by Kane's method) at random states; the records, the features
and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import symengine as se
import sympy as sm

import symbody as sb
from symbody.errors import InputError
from symbody.robots.link_forces import LinkLoad, generalized_forces, tree_motion
from symbody.scene import Segment

# a floating torso (a box and a cylinder), a revolute thigh (a capsule), a prismatic shank
# with a welded foot (a sphere): every primitive, origins turned and offset
URDF = """<robot name="walker">
  <link name="torso">
    <inertial><origin xyz="0 0 0.05"/><mass value="2.0"/>
      <inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.03" iyz="0" izz="0.025"/></inertial>
    <collision name="hull"><origin xyz="0.01 0 0.05" rpy="0.1 0 0.2"/><geometry><box size="0.3 0.2 0.1"/></geometry></collision>
    <collision><origin xyz="0 0.1 0" rpy="0.3 0.2 0"/><geometry><cylinder radius="0.03" length="0.1"/></geometry></collision>
  </link>
  <joint name="hip" type="revolute"><parent link="torso"/><child link="thigh"/>
    <origin xyz="0.05 0 -0.02" rpy="0 0.1 0"/><axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="10" velocity="10"/></joint>
  <link name="thigh">
    <inertial><origin xyz="0 0 -0.1"/><mass value="0.5"/>
      <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.0005"/></inertial>
    <collision><origin xyz="0 0.01 -0.1" rpy="0 0.2 0"/><geometry><capsule radius="0.02" length="0.16"/></geometry></collision>
  </link>
  <joint name="knee" type="prismatic"><parent link="thigh"/><child link="shank"/>
    <origin xyz="0 0 -0.2"/><axis xyz="0 0.6 -0.8"/><limit lower="-0.1" upper="0.1" effort="10" velocity="10"/></joint>
  <link name="shank">
    <inertial><origin xyz="0 0 -0.1"/><mass value="0.3"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.0002"/></inertial>
    <collision><origin xyz="0 0 -0.1" rpy="0.3 0 0"/><geometry><cylinder radius="0.015" length="0.18"/></geometry></collision>
  </link>
  <link name="strap"/>
  <joint name="strap_weld" type="fixed"><parent link="thigh"/><child link="strap"/><origin xyz="0 0.02 0"/></joint>
  <joint name="ankle" type="fixed"><parent link="shank"/><child link="foot"/><origin xyz="0 0 -0.2" rpy="0.4 0 0"/></joint>
  <link name="foot">
    <inertial><mass value="0.05"/><inertia ixx="1e-5" ixy="0" ixz="0" iyy="1e-5" iyz="0" izz="1e-5"/></inertial>
    <collision><origin xyz="0.01 0 0"/><geometry><sphere radius="0.025"/></geometry></collision>
    <visual><geometry><mesh filename="foot.stl"/></geometry></visual>
  </link>
  <link name="sensor"><collision><geometry><mesh filename="sensor.stl"/></geometry></collision></link>
  <joint name="mount" type="fixed"><parent link="torso"/><child link="sensor"/><origin xyz="0 0 0.1"/></joint>
</robot>"""

LINKS = ["torso", "thigh", "shank", "foot"]


def _random_state(robot, rng, height=0.05):
    x = np.zeros(len(robot.coordinates) + len(robot.u_ind))
    names = list(robot.joint_names)
    n = len(names)
    x[:n] = rng.uniform(-0.6, 0.6, n)
    quaternion = rng.standard_normal(4)
    quaternion /= np.linalg.norm(quaternion)
    for name, value in zip(("base.qx", "base.qy", "base.qz", "base.qw"), quaternion):
        x[names.index(name)] = value
    x[names.index("base.z")] = height * rng.standard_normal()
    x[n:] = rng.standard_normal(len(robot.u_ind))
    return x


@pytest.fixture(scope="module")
def walker():
    robot = sb.load_urdf(URDF, floating_base=True)
    contact = robot.add_ground_contact(((0.0, 0.0, -0.01), (0.0, 0.6, 0.8)), links=LINKS, stiffness=2e4,
                                       exponent=1.5, damping=0.8, friction=0.7)
    robot.add_pd_control(kp=[20.0, 50.0], kd=[0.5, 2.0], pose=[0.3, 0.02])
    return robot, contact


def test_features_of_every_primitive(walker):
    robot, contact = walker
    names = [f.name for f in contact.features]
    # the box's 8 corners and the cylinder's 2 rims on the torso, the capsule's 2 end spheres,
    # the shank's cylinder's 2 rims, the foot's sphere (welded to the shank: the shank's body)
    assert names == [f"torso[{i}]" for i in range(10)] + ["thigh[0]", "thigh[1]", "shank[0]",
                                                           "shank[1]", "foot"]
    kinds = [f.kind for f in contact.features]
    assert kinds == ["sphere"] * 8 + ["rim"] * 2 + ["sphere"] * 2 + ["rim"] * 2 + ["sphere"]
    assert contact.features[0].label == "hull corner 0" and contact.features[-1].radius == 0.025
    foot = contact.features[-1]
    assert robot.tree.bodies[foot.body].name == "shank"
    assert [r.name for r in robot.eom.contacts] == names
    assert robot.constants[sm.Symbol("ground_friction")] == 0.7


def test_gaps_are_the_features_heights(walker):
    """Each record's gap at random configurations: n · (P - O) with P the feature's lowest
    point from the URDF's numbers (box corners, cylinder rims' deepest points, capsule ends,
    the sphere) placed by the base's quaternion and the joints (numpy)."""
    robot, contact = walker
    rng = np.random.default_rng(7)
    n, O = np.array(contact.normal), np.array(contact.point)
    t = robot.eom.t
    for _ in range(3):
        x = _random_state(robot, rng)
        values = dict(zip([c.subs(t, t) for c in robot.coordinates], x[:len(robot.coordinates)]))
        q = {str(k).split("(")[0]: v for k, v in values.items()}
        R0 = _quaternion_matrix(q["base_qx"], q["base_qy"], q["base_qz"], q["base_qw"])
        p0 = np.array([q["base_x"], q["base_y"], q["base_z"]])
        poses = _link_poses(R0, p0, q["q_hip"], q["q_knee"])
        lowest = []
        for link, (R, p) in poses.items():
            for shape, R_c, o_c in _collisions(link):
                lowest += _lowest(shape, R @ R_c, R @ o_c + p, n)
        gaps = [float(r.gap.xreplace(values)) for r in robot.eom.contacts]
        np.testing.assert_allclose(gaps, [n @ (P - O) for P in lowest], rtol=0, atol=1e-13)


def _quaternion_matrix(x, y, z, w):
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _rpy(r, p, y):
    from symbody.robots.urdf_parse import rpy_matrix
    return rpy_matrix((r, p, y))


def _axis_rotation(axis, angle):
    a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def _link_poses(R0, p0, hip, knee):
    """World (R, p) of torso, thigh, shank, foot from the URDF's joints (numpy)."""
    R1 = R0 @ _rpy(0, 0.1, 0) @ _axis_rotation((0, 1, 0), hip)
    p1 = p0 + R0 @ np.array([0.05, 0, -0.02])
    R2 = R1
    p2 = p1 + R1 @ (np.array([0, 0, -0.2]) + knee * np.array([0, 0.6, -0.8]))
    R3 = R2 @ _rpy(0.4, 0, 0)
    p3 = p2 + R2 @ np.array([0, 0, -0.2])
    return {"torso": (R0, p0), "thigh": (R1, p1), "shank": (R2, p2), "foot": (R3, p3)}


def _collisions(link):
    """(shape, R, origin) of the link's collisions in the URDF above, in the link frame."""
    return {"torso": [(("box", (0.3, 0.2, 0.1)), _rpy(0.1, 0, 0.2), np.array([0.01, 0, 0.05])),
                      (("cylinder", (0.03, 0.1)), _rpy(0.3, 0.2, 0), np.array([0, 0.1, 0]))],
            "thigh": [(("capsule", (0.02, 0.16)), _rpy(0, 0.2, 0), np.array([0, 0.01, -0.1]))],
            "shank": [(("cylinder", (0.015, 0.18)), _rpy(0.3, 0, 0), np.array([0, 0, -0.1]))],
            "foot": [(("sphere", (0.025,)), np.eye(3), np.array([0.01, 0, 0]))]}[link]


def _lowest(shape, R, o, n):
    kind, size = shape
    if kind == "sphere":
        return [o - size[0] * n]
    if kind == "capsule":
        return [o + s * 0.5 * size[1] * R[:, 2] - size[0] * n for s in (1, -1)]
    if kind == "box":
        out = []
        for i in range(8):
            signs = np.array([1 if i & 1 else -1, 1 if i & 2 else -1, 1 if i & 4 else -1])
            out.append(o + R @ (0.5 * signs * np.array(size)))
        return out
    a = R[:, 2]
    w = n - (n @ a) * a
    return [o + s * 0.5 * size[1] * a - size[0] * w / np.linalg.norm(w) for s in (1, -1)]


# a fixed-base arm whose link carries a tilted cylinder (its two rims touch the ground)
ARM = """<robot name="arm">
  <link name="base"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.3" rpy="0.2 0 0"/><axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <link name="arm"><inertial><origin xyz="0 0 -0.1"/><mass value="1"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.001"/></inertial>
    <collision><origin xyz="0.02 0 -0.25" rpy="0.3 0.1 0"/><geometry><cylinder radius="0.04" length="0.1"/></geometry></collision>
  </link>
</robot>"""


@pytest.fixture(scope="module")
def small():
    """The walker with contact on the thigh's capsule and the foot's sphere, and the arm."""
    robot = sb.load_urdf(URDF, floating_base=True)
    robot.add_ground_contact(((0.0, 0.0, -0.01), (0.0, 0.6, 0.8)), links=["thigh", "foot"],
                             stiffness=2e4, damping=0.8, friction=0.7)
    robot.add_pd_control(kp=[20.0, 50.0], kd=[0.5, 2.0], pose=[0.3, 0.02])
    arm = sb.load_urdf(ARM)
    arm.add_ground_contact(stiffness=2e4, damping=0.8, friction=0.7)
    return robot, sb.compile(robot.eom), arm


def test_tree_equations_equal_the_system_equations(small):
    """M u' + g_d of the tree (symengine, contact forces through the link Jacobians) and of
    robot.system (symbody.contact's loads, Kane's method on SymPy's kinematics): the capsule
    on a revolute link and the sphere below a prismatic and a fixed joint of a floating robot,
    the cylinder's rims on the arm (the box and the base's geometry:
    test_gaps_are_the_features_heights; SymPy's Kane is slow with them)."""
    robot, tree, arm = small
    system = sb.compile(robot.to_eom())
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(6):
        x = _random_state(robot, rng)
        r = rng.standard_normal(len(robot.inputs))
        a = tree.rhs(0.0, x, tree.constants_array(robot.constants), r)
        b = system.rhs(0.0, x, system.constants_array(robot.constants), r)
        worst = max(worst, np.abs(a - b).max() / np.abs(a).max())
    assert worst < 1e-11
    tree, system = sb.compile(arm.eom), sb.compile(arm.to_eom())
    for _ in range(4):
        x, r = rng.standard_normal(2), rng.standard_normal(1)
        a = tree.rhs(0.0, x, tree.constants_array(arm.constants), r)
        b = system.rhs(0.0, x, system.constants_array(arm.constants), r)
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-11 * np.abs(a).max())


def test_generalized_force_has_the_power_of_the_force():
    """Qᵀ u = F · v_P + T · ω for a force F at a point P of a link and a moment T (random
    numbers), the velocity of P from its position by central differences along the motion."""
    robot = sb.load_urdf(URDF, floating_base=True)
    q = [se.Symbol(f"q{i}") for i in range(len(robot.tree_coordinates))]
    u = [se.Symbol(f"u{i}") for i in range(len(robot.tree_speeds))]
    motion = tree_motion(robot.tree, q, u, True)
    body = robot.tree.link_body["foot"][0]
    rng = np.random.default_rng(5)
    r, F, T = (tuple(float(v) for v in rng.standard_normal(3)) for _ in range(3))
    Q = generalized_forces(robot.tree, q, motion, [LinkLoad(body, r, F, T)], True)
    qv = rng.standard_normal(len(q))
    qv[3:7] /= np.linalg.norm(qv[3:7])
    uv = rng.standard_normal(len(u))
    subs = dict(zip(q + u, [*qv, *uv]))
    power = sum(float(e.xreplace(subs)) * w for e, w in zip(Q, uv))
    position = se.Lambdify(q, list(motion[body].point(r)))
    omega = np.array([float(e.xreplace(subs)) for e in motion[body].angular_velocity()])
    # q' from the kinematics: the base's position and quaternion, q' = u for the joints
    qdot = np.asarray(robot.eom.kindiffdict and _qdot(robot, qv, uv))
    h = 1e-6
    v = (np.asarray(position(qv + h * qdot)) - np.asarray(position(qv - h * qdot))) / (2 * h)
    assert power == pytest.approx(float(np.dot(F, v) + np.dot(T, omega)), rel=1e-8)


def _qdot(robot, q, u):
    """q' (tree order) at q, u (tree order): p' = R(Q) v, Q' = ½ G(Q) ω, joints q' = u."""
    x, y, z, w = q[3:7]
    R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                  [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                  [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    wx, wy, wz = u[3:6]
    dQ = 0.5 * np.array([w * wx - z * wy + y * wz, z * wx + w * wy - x * wz,
                         -y * wx + x * wy + w * wz, -x * wx - y * wy - z * wz])
    return np.concatenate([R @ u[:3], dQ, u[6:]])


def test_records_hold_the_law(small):
    """The record's normal force is k δ^1.5 max(0, 1 + 3/2 c δ') of its own gap and rate."""
    robot, model, _ = small
    rec = robot.eom.contacts[-1]
    outs = {"gap": rec.gap, "rate": rec.gap_rate, "fn": rec.normal_force}
    rng = np.random.default_rng(1)
    x = _random_state(robot, rng, height=0.0)
    values = dict(zip(robot.coordinates, x))
    x[list(robot.joint_names).index("base.z")] -= (float(rec.gap.xreplace(values)) + 0.004) / 0.8
    sol = sb.simulate(model, (0.0, 1e-3), x, robot.constants, specifieds=np.zeros(2),
                      t_eval=np.linspace(0, 1e-3, 5), outputs=outs, solver=sb.Solver(method="Radau"))
    g, gd, fn = (np.asarray(sol.outputs[k]) for k in ("gap", "rate", "fn"))
    assert (g < 0).any()
    depth = np.maximum(-g, 0)
    expected = 2e4 * depth ** 1.5 * np.maximum(0, 1 - 1.5 * 0.8 * gd)
    np.testing.assert_allclose(fn, expected, rtol=1e-12, atol=1e-12)


def test_bad_input_names_the_link():
    robot = sb.load_urdf(URDF, floating_base=True)
    with pytest.raises(InputError, match=r"link 'sensor' \(line \d+\).*mesh"):
        robot.add_ground_contact(stiffness=1e4)
    with pytest.raises(InputError, match="'sensr', which"):
        robot.add_ground_contact(links=["sensr"], stiffness=1e4)
    with pytest.raises(InputError, match="not a unit vector"):
        robot.add_ground_contact(((0, 0, 0), (0, 0, 2)), links=LINKS, stiffness=1e4)
    with pytest.raises(InputError, match="stiffness"):
        robot.add_ground_contact(links=LINKS, stiffness=-1.0)
    with pytest.raises(InputError, match="exponent"):
        robot.add_ground_contact(links=LINKS, stiffness=1.0, exponent=0.5)
    with pytest.raises(InputError, match="restitution"):
        robot.add_ground_contact(links=LINKS, stiffness=1.0, restitution=1.5, impact_speed=1.0)
    with pytest.raises(InputError, match="no <collision>"):
        robot.add_ground_contact(links=["strap"], stiffness=1.0)
    with pytest.raises(InputError, match="actuated joint"):
        robot.add_pd_control(1.0, 0.1, joints=["ankle"])
    # a sphere where the file has a mesh; the mesh's link named in links
    robot.add_ground_contact(links=["sensor"], spheres={"sensor": (0.02, (0, 0, 0.01))}, stiffness=1e4)
    assert [f.name for f in robot.ground_contacts[0].features] == ["sensor"]
    assert robot.ground_contacts[0].features[0].center == pytest.approx((0, 0, 0.11))
    with pytest.raises(InputError, match="exists already"):
        robot.add_ground_contact(links=["sensor"], spheres={"sensor": 0.02}, stiffness=1e4)


def test_contact_scene_draws_the_plane_and_the_forces(small):
    """robot.contact_scene(): the plane on a frame whose z axis is the plane's normal, a rod per
    contact feature from its contact point along F / scale (F from its record)."""
    robot, _, _ = small
    scene = robot.contact_scene(scale=50.0)
    plane = [vf for vf in scene.visualization_frames if vf.name == "ground plane"][0]
    n = plane.frame.z.to_matrix(robot.world_frame)
    np.testing.assert_allclose(np.array(n, dtype=float).ravel(), (0.0, 0.6, 0.8), atol=1e-15)
    rods = [vf for vf in scene.visualization_frames if isinstance(vf, Segment)]
    assert [r.name for r in rods] == ["thigh[0] force", "thigh[1] force", "foot force"]
    rec = robot.eom.contacts[-1]
    rng = np.random.default_rng(2)
    x = _random_state(robot, rng, height=0.0)
    values = dict(zip(robot.coordinates, x))
    x[list(robot.joint_names).index("base.z")] -= (float(rec.gap.xreplace(values)) + 0.003) / 0.8
    values = {**dict(zip(robot.coordinates, x)), **dict(zip(robot.u_ind, x[len(robot.coordinates):])),
              **{sm.Symbol(str(k)): v for k, v in robot.constants.items()}}
    tip = np.array(scene.points["foot force"].xreplace(values), dtype=float).ravel()
    base = np.array(scene.points["foot contact"].xreplace(values), dtype=float).ravel()
    fn = float(rec.normal_force.xreplace(values))
    assert fn > 0
    assert np.dot(tip - base, (0.0, 0.6, 0.8)) == pytest.approx(fn / 50.0, rel=1e-12)


def test_multi_speed_joints_are_refused_by_name():
    """The link forces' tree path walks joints of one speed: a planar joint is an InputError
    naming it, not wrong contact forces."""
    urdf = """<robot name="slider"><link name="base"/><link name="a"><inertial><mass value="1"/>
      <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
      <collision><geometry><sphere radius="0.05"/></geometry></collision></link>
      <joint name="pj" type="planar"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/></joint>
    </robot>"""
    robot = sb.load_urdf(urdf)
    with pytest.raises(InputError, match="add_ground_contact.*planar"):
        robot.add_ground_contact(stiffness=1e4, damping=0.1)
    with pytest.raises(InputError, match="add_pd_control.*planar"):
        robot.add_pd_control(kp=1.0, kd=0.1)
