"""Bad URDF input: each a clear InputError naming the element and its line."""

from __future__ import annotations

import pytest

import symbody as sb
from symbody.errors import InputError
from symbody.robots.urdf_parse import InvalidInertiaWarning

INERTIAL = ('<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" '
            'iyz="0"/></inertial>')


def robot(*parts: str) -> str:
    return '<robot name="r">\n' + "\n".join(parts) + "\n</robot>"


def link(name: str, inertial: str = INERTIAL) -> str:
    return f'<link name="{name}">{inertial}</link>'


def joint(name: str, parent: str, child: str, type_: str = "revolute", extra: str = "") -> str:
    return (f'<joint name="{name}" type="{type_}"><parent link="{parent}"/><child link="{child}"/>'
            f'<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>{extra}</joint>')


GOOD = robot(link("base"), link("a"), joint("j1", "base", "a"))


def test_a_good_string_loads():
    r = sb.load_urdf(GOOD)
    assert r.joint_names == ("j1",) and r.urdf_path is None and r.urdf_root.tag == "robot"


@pytest.mark.parametrize(("text", "pieces"), [
    ('<robot name="r"><link name="a">', ["malformed XML", "line 1"]),
    ("<robt/>", ["root element is not <robot>"]),
    (robot(link("base"), link("a"), joint("j1", "base", "nowhere")),
     ["joint 'j1' (line 4)", "child link 'nowhere'"]),
    (robot(link("base"), link("a"), joint("j1", "base", "a", "ball")),
     ["joint 'j1' (line 4)", "'ball' is not supported"]),
    (robot(link("world", ""), link("a"), joint("j1", "world", "a", "floating")),
     ["joint 'j1' (line 4)", "floating joint from the world; load the robot with floating_base"]),
    (robot(link("base"), link("a"), link("b"), joint("j1", "base", "a", "planar"),
           joint("j2", "a", "b", extra='<mimic joint="j1"/>')),
     ["joint 'j2' (line 6)", "mimics 'j1', a planar joint"]),
    (robot(link("base"), link("a"), link("b"), joint("j1", "a", "b"), joint("j2", "b", "a")),
     ["loop"]),
    (robot(link("base"), link("a"), link("b"), joint("j1", "base", "a"), joint("j2", "base", "a")),
     ["joint 'j2' (line 6)", "already has the parent joint 'j1'"]),
    (robot(link("base"), link("a"), link("b"), joint("j1", "base", "a")),
     ["link 'b' (line 4)", "several root links"]),
    (robot(link("base"), link("a"), link("a"), joint("j1", "base", "a")),
     ["link 'a' (line 4)", "second link named 'a'"]),
    (robot(link("base"), link("a", '<inertial><mass value="-1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>'
                                  '</inertial>'), joint("j1", "base", "a")),
     ["link 'a' (line 3)", "negative mass"]),
    (robot(link("base"), link("a", '<inertial><mass value="1"/><inertia ixx="1" iyy="-1" izz="1" ixy="0" ixz="0" iyz="0"/>'
                                  '</inertial>'), joint("j1", "base", "a")),
     ["link 'a' (line 3)", "not positive semi-definite"]),
    (robot(link("base"), link("a", ""), joint("j1", "base", "a")),
     ["joint 'j1' (line 4)", "no inertia"]),
    (robot(link("base"), link("a"), joint("j1", "base", "a", extra='<origin xyz="0 0 x"/>')),
     ["joint 'j1' (line 4)", "xyz='0 0 x'"]),
    (robot(link("base"), link("a"), link("b"), joint("j1", "base", "a"),
           joint("j2", "a", "b", extra='<mimic joint="j9"/>')),
     ["joint 'j2' (line 6)", "mimics 'j9'"]),
    (robot(link("base"), link("a"), joint("j1", "base", "a", extra='<dynamics damping="-1"/>')),
     ["joint 'j1' (line 4)", "negative damping"]),
])
def test_bad_input_names_element_and_line(text, pieces):
    with pytest.raises(InputError) as info:
        sb.load_urdf(text)
    for piece in pieces:
        assert piece in str(info.value)


def test_missing_file_and_bad_gravity():
    with pytest.raises(InputError, match="no such file"):
        sb.load_urdf("/nonexistent/robot.urdf")
    with pytest.raises(InputError, match="gravity"):
        sb.load_urdf(GOOD, gravity=(0, 0))


def test_invalid_inertia_can_be_accepted_with_a_warning():
    text = robot(link("base"), link("a", '<inertial><mass value="1"/><inertia ixx="1" iyy="1" '
                                        'izz="1" ixy="2" ixz="0" iyz="0"/></inertial>'), joint("j1", "base", "a"))
    with pytest.raises(InputError, match="invalid_inertia='warn'"):
        sb.load_urdf(text)
    with pytest.warns(InvalidInertiaWarning, match="link 'a' \\(line 3\\)"):
        r = sb.load_urdf(text, invalid_inertia="warn")
    assert len(r.coordinates) == 1


def test_inertia_needs_all_six_entries():
    text = robot(link("base"), link("a", '<inertial><mass value="1"/><inertia ixx="1" iyy="1" '
                                        'izz="1"/></inertial>'), joint("j1", "base", "a"))
    with pytest.raises(InputError, match=r"link 'a' \(line 3\): <inertia> has no attribute 'ixy'"):
        sb.load_urdf(text)


def test_robot_needs_a_name():
    with pytest.raises(InputError, match="robot has no name"):
        sb.load_urdf(GOOD.replace(' name="r"', ""))


def test_mimic_tags_can_be_ignored():
    text = robot(link("base"), link("a"), link("b"), joint("j1", "base", "a"),
                 joint("j2", "a", "b", extra='<mimic joint="j1" multiplier="2"/>'))
    assert sb.load_urdf(text).eom.q_dep != ()
    free = sb.load_urdf(text, mimic=False)
    assert free.eom.q_dep == () and free.input_names == ("j1", "j2")


def test_a_robot_without_moving_joints_needs_a_floating_base():
    single = robot(link("base"))
    with pytest.raises(InputError, match="no moving joint"):
        sb.load_urdf(single)
    free = sb.load_urdf(single, floating_base=True)
    assert len(free.coordinates) == 7 and len(free.speeds) == 6 and free.inputs == ()
