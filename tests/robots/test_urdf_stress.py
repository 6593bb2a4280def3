"""Stress cases of load_urdf found on files it was not developed on (Bullet's pybullet_data,
adversarial valid URDFs): each a minimal reproduction, checked against Pinocchio."""

from __future__ import annotations

import numpy as np
import pytest

import symbody as sb
from symbody.errors import InputError

pin = pytest.importorskip("pinocchio")

from systems.pinocchio_oracle import compare  # noqa: E402


def inertial(m: float = 1.3, ixx: float = 0.11, iyy: float = 0.23, izz: float = 0.31,
             ixy: float = 0.01, ixz: float = -0.02, iyz: float = 0.015,
             xyz: str = "0.1 -0.05 0.2", rpy: str = "0.3 -0.7 1.1") -> str:
    return (f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{m}"/><inertia ixx="{ixx}" '
            f'iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="{ixz}" iyz="{iyz}"/></inertial>')


def link(name: str, inert: str | None = None) -> str:
    return f'<link name="{name}">{inertial() if inert is None else inert}</link>'


def joint(name: str, parent: str, child: str, type_: str = "revolute", axis: str = "0 0 1",
          limit: str = 'lower="-2" upper="1.5"', xyz: str = "0.1 0.2 0.3",
          rpy: str = "0.4 -0.5 0.6") -> str:
    return (f'<joint name="{name}" type="{type_}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>'
            f'<limit {limit} effort="10" velocity="3"/></joint>')


def urdf(*parts: str, name: str = "stress") -> str:
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n' + "\n".join(parts) + "\n</robot>\n"


def agrees(text: str, floating: bool = False, **kw) -> dict:
    robot = sb.load_urdf(text, floating_base=floating, **kw)
    pm = (pin.buildModelFromXML(text, pin.JointModelFreeFlyer()) if floating
          else pin.buildModelFromXML(text))
    err = compare(pin, robot, sb.compile(robot.eom), pm, np.random.default_rng(11), states=2)
    assert max(err["M"], err["bias"], err["aba"]) < 1e-9, err
    return err


TWO = (link("base"), link("a"), link("b"), joint("j1", "base", "a"),
       joint("j2", "a", "b", axis="0.3 -1.7 2.2"))


def test_blank_lines_before_the_xml_declaration(tmp_path):
    # Bullet's differential/diff_ring.urdf starts with a newline; urdfdom reads it
    f = tmp_path / "r.urdf"
    f.write_text("\n\n" + urdf(*TWO))
    robot = sb.load_urdf(f)
    assert robot.joint_names == ("j1", "j2")
    assert robot.urdf.joints["j1"].line == 8      # line numbers are still the file's
    agrees("\n" + urdf(*TWO))


def test_an_empty_robot_name_is_accepted():
    # Bullet's humanoid.urdf has <robot name="">; urdfdom (hence Pinocchio) reads it
    agrees(urdf(*TWO, name=""))
    with pytest.raises(InputError, match="robot has no name"):
        sb.load_urdf(urdf(*TWO).replace(' name="stress"', ""))


def test_lower_limit_above_upper_is_kept_with_a_warning():
    # Bullet writes lower="1" upper="0" for "no limit"; urdfdom and Pinocchio accept it
    text = urdf(*TWO[:4], joint("j2", "a", "b", limit='lower="1" upper="0"'))
    with pytest.warns(UserWarning, match=r"joint 'j2' \(line 7\): lower limit 1.0 > upper"):
        robot = sb.load_urdf(text)
    assert robot.urdf.joints["j2"].lower == 1.0 and robot.urdf.joints["j2"].upper == 0.0
    agrees(text.replace('lower="1" upper="0"', 'lower="-1" upper="1"'))


def test_a_tiny_body_keeps_its_inertia():
    # a 1 mg sensor link with inertia 1e-14 kg m² on its own joint: not round-off of zero
    # (it was dropped: "the acceleration of u_j2 appears in no dynamic equation")
    tiny = inertial(1e-6, 1e-14, 2e-14, 3e-14, 0, 0, 0, "0 0 0", "0 0 0")
    text = urdf(link("base"), link("a"), link("b", tiny), joint("j1", "base", "a"),
                joint("j2", "a", "b", xyz="0 0 0"))
    robot = sb.load_urdf(text)
    M, _ = sb.robots.dynamic_terms(sb.compile(robot.eom), [0.1, 0.2], [0, 0], robot.constants,
                                   [0, 0])
    assert M[1, 1] == pytest.approx(3e-14, rel=1e-9)
    agrees(text)


@pytest.mark.parametrize(("parts", "line"), [
    ((link("base", ""), link("a"), link("b"), joint("j1", "base", "a"), joint("j2", "a", "b")), 6),
    ((link("world", ""), link("base", ""), link("a"),
      joint("weld", "world", "base", "fixed"), joint("j1", "base", "a")), 7),
], ids=["massless-root", "massless-root-below-a-fixed-joint"])
def test_a_massless_floating_base_with_one_joint_is_refused(parts, line):
    # the free-flyer and j1 move the same body: Pinocchio's M is singular (cond ~ 1e16), aba
    # returns one of many answers; symbody says so instead
    text = urdf(*parts)
    pm = pin.buildModelFromXML(text, pin.JointModelFreeFlyer())
    M = pin.crba(pm, pm.createData(), pin.neutral(pm))
    assert np.linalg.cond(np.triu(M) + np.triu(M, 1).T) > 1e12
    with pytest.raises(InputError, match=rf"joint 'j1' \(line {line}\): the floating base link"):
        sb.load_urdf(text, floating_base=True)
    sb.load_urdf(text)      # a fixed base is fine
    # with a second joint on the massless base the free-flyer is determined
    agrees(urdf(*parts, link("c"), joint("j3", "base", "c", axis="1 0 0", xyz="0.5 0 0")),
           floating=True)


def test_a_chain_of_mimic_joints_is_resolved():
    # j3 mimics j2, which mimics j1: q3 = -0.5 (2 q1 + 0.1) + 0.3 (was refused with the default
    # mimic=True, while Pinocchio reads the file)
    text = urdf(link("base"), link("a"), link("b"), link("c"), joint("j1", "base", "a"),
                joint("j2", "a", "b").replace("</joint>", '<mimic joint="j1" multiplier="2" '
                                              'offset="0.1"/></joint>'),
                joint("j3", "b", "c", "prismatic").replace("</joint>", '<mimic joint="j2" '
                                                           'multiplier="-0.5" offset="0.3"/></joint>'))
    robot = sb.load_urdf(text)
    assert robot.urdf.joints["j3"].mimic == ("j1", -1.0, pytest.approx(0.25))
    assert robot.input_names == ("j1",) and robot.default_state()[2] == pytest.approx(0.25)
    agrees(text)
    loop = text.replace('<mimic joint="j1"', '<mimic joint="j3"')
    with pytest.raises(InputError, match=r"joint 'j2' \(line 8\): the mimic joints .* loop"):
        sb.load_urdf(loop)


def test_symbolic_inertia_of_links_with_the_same_identifier():
    # links "a b", "a_b", "a-b" are all the identifier a_b: they shared one set of parameter
    # symbols (the last body's values for all three: M off by 35%)
    text = urdf(link("base"), link("a b", inertial(1.0)), link("a_b", inertial(2.0, xyz="0.1 0 0")),
                link("a-b", inertial(3.0, 0.3, 0.2, 0.5)), joint("j 1", "base", "a b"),
                joint("j_1", "a b", "a_b"), joint("j-1", "a_b", "a-b", axis="1 0 0"))
    robot = sb.load_urdf(text, symbolic_inertia=True)
    assert len(set(robot.parameters)) == 30
    assert [str(p) for p in robot.parameters[::10]] == ["m_a_b", "m_a_b_2", "m_a_b_3"]
    agrees(text, symbolic_inertia=True)


def test_a_point_mass_on_the_axis_of_a_last_joint_is_refused():
    # Pinocchio's M has a zero row; symbody said "u_j1(t) appears in no dynamic equation"
    # without the joint's line
    text = urdf(link("base"), link("a", inertial(2.0, 0, 0, 0, 0, 0, 0, "0 0 0.5")),
                joint("j1", "base", "a", rpy="0 0 0"))
    with pytest.raises(InputError, match=r"joint 'j1' \(line 5\): .* no inertia about its axis"):
        sb.load_urdf(text)
    agrees(text.replace('xyz="0 0 0.5"', 'xyz="0 0.01 0.5"'))     # off the axis: fine


def test_a_string_with_a_byte_order_mark():
    # text read with encoding="utf-8" keeps the BOM; it was taken for a file name
    text = "\ufeff" + urdf(*TWO)
    assert sb.load_urdf(text).joint_names == ("j1", "j2")
    agrees(text)


def test_mimic_joints_agree_with_pinocchios_mimic_model():
    # a second oracle for mimic joints: Pinocchio 4's own mimic model (mimic=True), whose crba
    # and nonLinearEffects are the reduced G^T M G and G^T b (its aba refuses mimic joints)
    text = urdf(*TWO[:4], joint("j2", "a", "b").replace(
        "</joint>", '<mimic joint="j1" multiplier="-2.5" offset="0.3"/></joint>'),
        link("c"), joint("j3", "b", "c", "prismatic").replace(
        "</joint>", '<mimic joint="j1" multiplier="0.5"/></joint>'))
    try:
        pm = pin.buildModelFromXML(text, mimic=True)
    except TypeError:
        pytest.skip("this Pinocchio has no mimic models")
    pd = pm.createData()
    robot = sb.load_urdf(text)
    model = sb.compile(robot.eom)
    assert pm.nv == 1 and robot.input_names == ("j1",) and robot.joint_names == ("j1", "j2", "j3")
    rng = np.random.default_rng(8)
    for _ in range(3):
        q1, v1, tau = rng.uniform(-1.5, 1.5), rng.standard_normal(), rng.standard_normal()
        M = pin.crba(pm, pd, np.array([q1]))
        dv = (tau - pin.nonLinearEffects(pm, pd, np.array([q1]), np.array([v1]))) / M[0, 0]
        x = np.array([q1, -2.5 * q1 + 0.3, 0.5 * q1, v1])
        xdot = model.rhs(0.0, x, robot.constants, np.array([tau]))
        assert abs(xdot[3] - dv[0]) <= 1e-12 * max(1.0, abs(dv[0]))
        np.testing.assert_allclose(xdot[:3], [v1, -2.5 * v1, 0.5 * v1], rtol=1e-13)


def test_a_massless_base_below_the_files_own_floating_joint_is_refused():
    world = ('<link name="world"/><joint name="fj" type="floating"><parent link="world"/>'
             '<child link="base"/></joint>')
    text = urdf(world, link("base", ""), link("a"), link("b"), joint("j1", "base", "a"),
                joint("j2", "a", "b"))
    with pytest.raises(InputError, match=r"joint 'j1' \(line 7\): the floating base link 'base'"):
        sb.load_urdf(text, floating_base=True)
