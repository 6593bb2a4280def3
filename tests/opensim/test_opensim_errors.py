"""Bad or unsupported input: an InputError naming the element and its line, or a warning
naming what was left out -- never a silent change."""

from __future__ import annotations

import pytest

from symbody.errors import InputError
from symbody.opensim import AddedFreeJointWarning, OpenSimImportWarning, load_opensim


def _frame(name, parent):
    return (f'<PhysicalOffsetFrame name="{name}"><socket_parent>{parent}</socket_parent>'
            "<translation>0 0.1 0</translation><orientation>0 0 0</orientation>"
            "</PhysicalOffsetFrame>")


def _model(joints: str, bodies: str = "", extra: str = "") -> str:
    body = ('<Body name="b"><mass>1</mass><mass_center>0 0 0</mass_center>'
            "<inertia>0.1 0.1 0.1 0 0 0</inertia></Body>")
    return ('<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40000">\n'
            '<Model name="m">\n<Ground name="ground"/>\n'
            f'<BodySet name="bodyset"><objects>\n{body}{bodies}\n</objects></BodySet>\n'
            f'<JointSet name="jointset"><objects>\n{joints}\n</objects></JointSet>\n'
            f"{extra}\n</Model>\n</OpenSimDocument>\n")


def _line(xml: str, text: str) -> int:
    """The line of the first occurrence of ``text``."""
    return xml[:xml.index(text)].count("\n") + 1


PIN = ('<PinJoint name="pin"><socket_parent_frame>/ground</socket_parent_frame>'
       "<socket_child_frame>/bodyset/b</socket_child_frame><coordinates>"
       '<Coordinate name="q"><range>-1 1</range></Coordinate></coordinates></PinJoint>')


def test_a_good_model_loads():
    model = load_opensim(_model(PIN))
    assert model.coordinate_names == ("q",)


def test_unsupported_joint_type_named_with_line():
    xml = _model(PIN.replace("PinJoint", "EllipsoidJoint"))
    line = _line(xml, "<EllipsoidJoint")
    with pytest.raises(InputError, match=rf'<EllipsoidJoint name="pin"> \(line {line}\).*not '
                                         "supported"):
        load_opensim(xml)


def test_unknown_frame_named():
    xml = _model(PIN.replace("/bodyset/b<", "/bodyset/nobody<"))
    line = _line(xml, "<PinJoint")
    with pytest.raises(InputError, match=rf"line {line}.*'/bodyset/nobody', which is not in the"):
        load_opensim(xml)


def test_unsupported_function_named_with_line():
    custom = ('<CustomJoint name="c"><socket_parent_frame>/ground</socket_parent_frame>'
              "<socket_child_frame>/bodyset/b</socket_child_frame><coordinates>"
              '<Coordinate name="q"/></coordinates><SpatialTransform>\n'
              '<TransformAxis name="rotation1"><coordinates>q</coordinates><axis>0 0 1</axis>\n'
              '<GCVSpline name="function"><x>0 1</x><y>0 1</y></GCVSpline></TransformAxis>'
              "</SpatialTransform></CustomJoint>")
    xml = _model(custom)
    line = _line(xml, "<GCVSpline")
    with pytest.raises(InputError, match=rf"<GCVSpline name=\"function\"> \(line {line}\).*"
                                         "GCVSpline of half_order 0 .*no exact evaluation"):
        load_opensim(xml)


def test_coordinate_count_checked():
    xml = _model(PIN.replace("PinJoint", "UniversalJoint"))
    with pytest.raises(InputError, match=r"UniversalJoint has 2 coordinate\(s\); the file gives 1"):
        load_opensim(xml)


def test_kinematic_loop_refused():
    second = PIN.replace('name="pin"', 'name="pin2"').replace('name="q"', 'name="q2"')
    with pytest.raises(InputError, match=r"pin2.*closes a kinematic loop"):
        load_opensim(_model(PIN + second))


def test_body_without_joint_gets_a_free_joint():
    extra_body = ('<Body name="loose"><mass>2</mass><mass_center>0 0 0</mass_center>'
                  "<inertia>0.1 0.1 0.1 0 0 0</inertia></Body>")
    with pytest.warns(AddedFreeJointWarning, match="'loose'"):
        model = load_opensim(_model(PIN, extra_body))
    assert len(model.coordinates) == 7


def test_forces_and_constraints_left_out_are_named():
    forces = ('<ForceSet name="forceset"><objects>\n<ElasticFoundationForce name="spring">'
              "</ElasticFoundationForce></objects></ForceSet>\n"
              '<ConstraintSet name="constraintset"><objects>\n<ConstantDistanceConstraint '
              'name="on_line"/></objects></ConstraintSet>')
    xml = _model(PIN, extra=forces)
    with pytest.warns(OpenSimImportWarning) as caught:
        model = load_opensim(xml)
    text = str(caught[0].message)
    spring, on_line = _line(xml, "<ElasticFoundation"), _line(xml, "<ConstantDistance")
    assert f"ElasticFoundationForce 'spring' (line {spring})" in text
    assert f"ConstantDistanceConstraint 'on_line' (line {on_line})" in text
    assert {x.name for x in model.left_out} == {"spring", "on_line"}
    with pytest.raises(InputError, match=rf"'spring' \(line {spring}\)"):
        load_opensim(xml, unsupported="error")


def test_disabled_force_is_listed_not_warned(recwarn):
    forces = ('<ForceSet name="forceset"><objects><Thelen2003Muscle name="off">'
              "<appliesForce>false</appliesForce></Thelen2003Muscle></objects></ForceSet>")
    model = load_opensim(_model(PIN, extra=forces))
    assert not [w for w in recwarn if issubclass(w.category, OpenSimImportWarning)]
    assert model.left_out[0].reason.startswith("disabled")


def test_malformed_xml_and_bad_arguments():
    xml = _model(PIN).replace("<BodySet", "<BodySet <")
    with pytest.raises(InputError, match=rf"malformed XML.*line {_line(xml, '<BodySet')}"):
        load_opensim(xml)
    with pytest.raises(InputError, match="no such file"):
        load_opensim("/nonexistent/model.osim")
    with pytest.raises(InputError, match="unsupported must be"):
        load_opensim(_model(PIN), unsupported="ignore")


def test_reversed_legacy_joint_refused():
    xml = ('<OpenSimDocument Version="30000"><Model name="old"><BodySet><objects>'
           '<Body name="ground"/><Body name="b"><mass>1</mass><Joint>\n<PinJoint name="p">'
           "<parent_body>ground</parent_body><CoordinateSet><objects><Coordinate name=\"q\"/>"
           "</objects></CoordinateSet><reverse>true</reverse></PinJoint></Joint></Body>"
           "</objects></BodySet></Model></OpenSimDocument>")
    with pytest.raises(InputError, match=r'<PinJoint name="p"> \(line 2\).*reverse'):
        load_opensim(xml)


def test_unsupported_legacy_joint_refused_by_name():
    """A 3.x file's joint of a type symbody does not build: an InputError naming it (was a
    KeyError)."""
    xml = ('<OpenSimDocument Version="30000"><Model name="old"><BodySet><objects>'
           '<Body name="ground"/><Body name="b"><mass>1</mass><Joint>\n<EllipsoidJoint name="e">'
           "<parent_body>ground</parent_body><CoordinateSet><objects><Coordinate name=\"q\"/>"
           "</objects></CoordinateSet></EllipsoidJoint></Joint></Body>"
           "</objects></BodySet></Model></OpenSimDocument>")
    with pytest.raises(InputError, match=r'<EllipsoidJoint name="e"> \(line 2\).*EllipsoidJoint is '
                                         "not supported"):
        load_opensim(xml)


def test_too_old_format_refused():
    xml = ('<OpenSimDocument Version="10900"><Model name="old"><BodySet><objects>'
           '<Body name="ground"/></objects></BodySet></Model></OpenSimDocument>')
    with pytest.raises(InputError, match="format version 10900 is older than 10901"):
        load_opensim(xml)


def test_muscles_of_a_pre_23_file_refused():
    xml = ('<OpenSimDocument Version="20001"><Model name="old"><ForceSet><objects>\n'
           '<Thelen2003Muscle name="m"/></objects></ForceSet><BodySet><objects>'
           '<Body name="ground"/></objects></BodySet></Model></OpenSimDocument>')
    with pytest.raises(InputError, match=r'<Thelen2003Muscle name="m"> \(line 2\).*format 20001'):
        load_opensim(xml)


def test_unnamed_redundant_constraint_named_by_type_and_line():
    """A constraint without a name (as in opensim-core's toyLeg.osim) is named in messages by
    its type and line, not by an empty string."""
    extra = ('<ConstraintSet name="constraintset"><objects>\n'
             "<PointConstraint><socket_body_1>/ground</socket_body_1>"
             "<socket_body_2>/bodyset/b</socket_body_2><location_body_1>0 0 0</location_body_1>"
             "<location_body_2>0 0 0</location_body_2></PointConstraint>\n"
             "</objects></ConstraintSet>")
    xml = _model(PIN, extra=extra)
    line = _line(xml, "<PointConstraint>")
    with pytest.raises(InputError, match=rf"PointConstraint \(line {line}\) \(x\)"):
        load_opensim(xml)
