"""A synthetic OpenSim 4.x model with every joint type, function type and constraint the
importer builds, written as XML (bodies with off-centre masses and full inertia tensors,
offset frames with rotations), for the agreement tests against OpenSim."""

from __future__ import annotations

_INERTIA = "0.11 0.09 0.07 0.012 -0.008 0.005"


def _body(name: str, mass: float, com: str) -> str:
    return (f'<Body name="{name}"><mass>{mass}</mass><mass_center>{com}</mass_center>'
            f'<inertia>{_INERTIA}</inertia></Body>')


def _frame(name: str, parent: str, translation: str, orientation: str) -> str:
    return (f'<PhysicalOffsetFrame name="{name}"><socket_parent>{parent}</socket_parent>'
            f'<translation>{translation}</translation><orientation>{orientation}</orientation>'
            '</PhysicalOffsetFrame>')


def _coord(name: str, lo: float = -1.0, hi: float = 1.0, extra: str = "") -> str:
    return (f'<Coordinate name="{name}"><default_value>0.1</default_value>'
            f'<range>{lo} {hi}</range>{extra}</Coordinate>')


def _joint(kind: str, name: str, parent: str, child: str, coords: list, body_parent: str,
           body_child: str, extra: str = "") -> str:
    frames = (_frame(f"{name}_p", body_parent, "0.05 -0.3 0.02", "0.2 -0.1 0.3")
              + _frame(f"{name}_c", body_child, "-0.01 0.12 0.03", "-0.15 0.25 0.05"))
    cs = "".join(coords)
    return (f'<{kind} name="{name}"><socket_parent_frame>{name}_p</socket_parent_frame>'
            f'<socket_child_frame>{name}_c</socket_child_frame><coordinates>{cs}</coordinates>'
            f'<frames>{frames}</frames>{extra}</{kind}>')


def _axis(name: str, coords: str, axis: str, function: str) -> str:
    return (f'<TransformAxis name="{name}"><coordinates>{coords}</coordinates><axis>{axis}</axis>'
            f'{function}</TransformAxis>')


_KNEE_X = "-2.0944 -1.74533 -1.39626 -1.0472 -0.698132 -0.349066 -0.174533 0.197344 0.337395"
_KNEE_Y = "-0.0032 0.00179 0.00411 0.0041 0.00212 -0.001 -0.0031 -0.005227 -0.005435"


def custom_transform() -> str:
    """A SpatialTransform using every function type."""
    spline = f'<SimmSpline name="function"><x>{_KNEE_X}</x><y>{_KNEE_Y}</y></SimmSpline>'
    return ("<SpatialTransform>"
            + _axis("rotation1", "c_a", "0.1 0.2 0.97", '<LinearFunction name="function">'
                    "<coefficients>1.3 0.1</coefficients></LinearFunction>")
            + _axis("rotation2", "c_b", "0 1 0", '<PolynomialFunction name="function">'
                    "<coefficients>0.2 -0.3 1 0.05</coefficients></PolynomialFunction>")
            + _axis("rotation3", "", "1 0 0.1", '<Constant name="function"><value>0.2</value>'
                    "</Constant>")
            + _axis("translation1", "c_a", "1 0 0", spline)
            + _axis("translation2", "c_a", "0 1 0", '<MultiplierFunction name="function">'
                    f"<function><SimmSpline><x>{_KNEE_X}</x><y>{_KNEE_Y}</y></SimmSpline>"
                    "</function><scale>2.5</scale></MultiplierFunction>")
            + _axis("translation3", "c_b", "0 0 1", '<PiecewiseLinearFunction name="function">'
                    "<x>-1 0 0.5 1</x><y>0.01 -0.02 0.03 0.0</y></PiecewiseLinearFunction>")
            + "</SpatialTransform>")


def synthetic_model(constraints: bool = False) -> str:
    """The model's XML text.  ``constraints``: add a coupler, a point and a weld constraint,
    a locked and a prescribed coordinate (a closed loop on a second branch)."""
    bodies = "".join(_body(n, m, c) for n, m, c in (
        ("b_free", 2.0, "0.1 -0.05 0.02"), ("b_ball", 1.5, "0.02 -0.2 0.01"),
        ("b_gimbal", 1.2, "0.03 -0.1 0.05"), ("b_univ", 0.9, "-0.02 -0.15 0.0"),
        ("b_custom", 1.1, "0.0 -0.2 0.02"), ("b_pin", 0.7, "0.05 -0.1 -0.02"),
        ("b_slider", 0.6, "0.01 0.02 0.03"), ("b_weld", 0.4, "0.02 0.01 -0.03"),
        ("b_planar", 0.8, "0.04 -0.03 0.01"))
        + ((("b_arm1", 0.5, "0.0 -0.2 0.0"), ("b_arm2", 0.5, "0.0 -0.2 0.0"),
            ("b_w1", 0.3, "0.01 0.02 0.0"), ("b_w2", 0.6, "0.0 -0.1 0.02"),
            ("b_lock", 0.3, "0.0 0.05 0.0"), ("b_presc", 0.2, "0.02 0.0 0.0")) if constraints
           else ()))
    joints = [
        _joint("FreeJoint", "j_free", "", "", [_coord(f"free_{c}") for c in
               ("rx", "ry", "rz", "tx", "ty", "tz")], "/ground", "/bodyset/b_free"),
        _joint("BallJoint", "j_ball", "", "", [_coord(f"ball_{c}") for c in ("x", "y", "z")],
               "/bodyset/b_free", "/bodyset/b_ball"),
        _joint("GimbalJoint", "j_gimbal", "", "", [_coord(f"gimbal_{c}") for c in ("x", "y", "z")],
               "/bodyset/b_ball", "/bodyset/b_gimbal"),
        _joint("UniversalJoint", "j_univ", "", "", [_coord("univ_x"), _coord("univ_y")],
               "/bodyset/b_gimbal", "/bodyset/b_univ"),
        _joint("CustomJoint", "j_custom", "", "", [_coord("c_a", -2.0, 0.3), _coord("c_b")],
               "/bodyset/b_univ", "/bodyset/b_custom", custom_transform()),
        _joint("PinJoint", "j_pin", "", "", [_coord("pin")], "/bodyset/b_custom",
               "/bodyset/b_pin"),
        _joint("SliderJoint", "j_slider", "", "", [_coord("slide")], "/bodyset/b_pin",
               "/bodyset/b_slider"),
        _joint("WeldJoint", "j_weld", "", "", [], "/bodyset/b_slider", "/bodyset/b_weld"),
        _joint("PlanarJoint", "j_planar", "", "", [_coord(f"planar_{c}") for c in
               ("rz", "tx", "ty")], "/bodyset/b_free", "/bodyset/b_planar"),
    ]
    cons = ""
    if constraints:
        locked = "<locked>true</locked>"
        translations = ("<SpatialTransform>"
                        + "".join(_axis(f"rotation{k}", "", a, '<Constant name="function">'
                                        "<value>0</value></Constant>")
                                  for k, a in ((1, "1 0 0"), (2, "0 1 0"), (3, "0 0 1")))
                        + "".join(_axis(f"translation{k}", f"w_t{k}", a,
                                        '<LinearFunction name="function"><coefficients>1 0'
                                        "</coefficients></LinearFunction>")
                                  for k, a in ((1, "1 0 0"), (2, "0 1 0"), (3, "0 0 1")))
                        + "</SpatialTransform>")
        joints += [
            # a loop closed by a point constraint: gimbal + pin, tip on a ground point
            _joint("GimbalJoint", "j_arm1", "", "", [_coord(f"arm1_{c}") for c in "xyz"],
                   "/ground", "/bodyset/b_arm1"),
            _joint("PinJoint", "j_arm2", "", "", [_coord("arm2")], "/bodyset/b_arm1",
                   "/bodyset/b_arm2"),
            # a loop closed by a weld constraint: three translations, a gimbal, welded to ground
            _joint("CustomJoint", "j_w1", "", "", [_coord(f"w_t{k}") for k in (1, 2, 3)],
                   "/ground", "/bodyset/b_w1", translations),
            _joint("GimbalJoint", "j_w2", "", "", [_coord(f"w_r{c}") for c in "xyz"],
                   "/bodyset/b_w1", "/bodyset/b_w2"),
            # a locked and a prescribed coordinate
            _joint("PinJoint", "j_lock", "", "", [_coord("lock", extra=locked)],
                   "/bodyset/b_slider", "/bodyset/b_lock"),
            _joint("SliderJoint", "j_presc", "", "", [_coord(
                "presc", extra='<prescribed_function><LinearFunction name="function">'
                "<coefficients>0.5 0.1</coefficients></LinearFunction></prescribed_function>"
                "<prescribed>true</prescribed>")], "/bodyset/b_lock", "/bodyset/b_presc"),
        ]
        cons = (
            '<CoordinateCouplerConstraint name="couple"><independent_coordinate_names>pin'
            "</independent_coordinate_names><dependent_coordinate_name>slide"
            '</dependent_coordinate_name><coupled_coordinates_function><LinearFunction '
            'name="function"><coefficients>0.3 0.01</coefficients></LinearFunction>'
            "</coupled_coordinates_function><scale_factor>1.5</scale_factor>"
            "</CoordinateCouplerConstraint>"
            '<PointConstraint name="point"><socket_body_1>/bodyset/b_arm2</socket_body_1>'
            "<socket_body_2>/ground</socket_body_2><location_body_1>0 -0.3 0</location_body_1>"
            "<location_body_2>0.15 -0.55 0.1</location_body_2></PointConstraint>"
            '<WeldConstraint name="weld"><socket_frame1>/bodyset/b_w2</socket_frame1>'
            "<socket_frame2>/jointset/j_w1/j_w1_p</socket_frame2></WeldConstraint>")
    return ('<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40000">'
            '<Model name="synthetic"><Ground name="ground"/><gravity>0.3 -9.81 0.2</gravity>'
            f'<BodySet name="bodyset"><objects>{bodies}</objects></BodySet>'
            f'<JointSet name="jointset"><objects>{"".join(joints)}</objects></JointSet>'
            f'<ConstraintSet name="constraintset"><objects>{cons}</objects></ConstraintSet>'
            '<MarkerSet name="markerset"><objects>'
            '<Marker name="m1"><socket_parent_frame>/bodyset/b_custom</socket_parent_frame>'
            "<location>0.1 -0.2 0.05</location></Marker>"
            '<Marker name="m2"><socket_parent_frame>/jointset/j_pin/j_pin_c'
            "</socket_parent_frame><location>0.02 0.03 -0.04</location></Marker>"
            "</objects></MarkerSet></Model></OpenSimDocument>\n")


def star_model(only: tuple = ()) -> str:
    """Every joint type once (or those in ``only``), each body joined to the ground (short
    expressions: for tests that form the equations with SymPy's vector algebra)."""
    kinds = (("FreeJoint", ["rx", "ry", "rz", "tx", "ty", "tz"], ""),
             ("BallJoint", ["x", "y", "z"], ""), ("GimbalJoint", ["x", "y", "z"], ""),
             ("UniversalJoint", ["x", "y"], ""), ("PlanarJoint", ["rz", "tx", "ty"], ""),
             ("CustomJoint", ["c_a", "c_b"], custom_transform()), ("PinJoint", ["a"], ""),
             ("SliderJoint", ["s"], ""), ("WeldJoint", [], ""))
    bodies, joints = [], []
    kinds = tuple(k for k in kinds if not only or k[0] in only)
    for k, (kind, coords, extra) in enumerate(kinds):
        name = f"s{k}"
        bodies.append(_body(name, 1.0 + 0.1 * k, "0.02 -0.1 0.03"))
        cs = [_coord(c if kind == "CustomJoint" else f"{name}_{c}",
                     -2.0 if c == "c_a" else -1.0, 0.3 if c == "c_a" else 1.0) for c in coords]
        joints.append(_joint(kind, f"j{k}", "", "", cs, "/ground", f"/bodyset/{name}", extra))
    return ('<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40000">'
            '<Model name="star"><Ground name="ground"/><gravity>0.3 -9.81 0.2</gravity>'
            f'<BodySet name="bodyset"><objects>{"".join(bodies)}</objects></BodySet>'
            f'<JointSet name="jointset"><objects>{"".join(joints)}</objects></JointSet>'
            "</Model></OpenSimDocument>\n")


def coupled_model() -> str:
    """One body on a CustomJoint whose three rotations are functions of one coordinate (as
    the knee of Rajagopal et al. 2016): where Simbody's velocity terms are not exact."""
    zero = '<Constant name="function"><value>0</value></Constant>'
    transform = ("<SpatialTransform>"
                 + _axis("rotation1", "k", "1 0 0", '<LinearFunction name="function">'
                         "<coefficients>1 0</coefficients></LinearFunction>")
                 + _axis("rotation2", "k", "0 0 1", '<LinearFunction name="function">'
                         "<coefficients>0.5 0</coefficients></LinearFunction>")
                 + _axis("rotation3", "k", "0 1 0", '<PolynomialFunction name="function">'
                         "<coefficients>0.3 0 0</coefficients></PolynomialFunction>")
                 + "".join(_axis(f"translation{k}", "", a, zero)
                           for k, a in ((1, "1 0 0"), (2, "0 1 0"), (3, "0 0 1")))
                 + "</SpatialTransform>")
    joint = _joint("CustomJoint", "knee", "", "", [_coord("k")], "/ground", "/bodyset/b",
                   transform)
    return ('<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40000">'
            '<Model name="coupled"><Ground name="ground"/>'
            f'<BodySet name="bodyset"><objects>{_body("b", 1.0, "0.1 -0.3 0.05")}</objects>'
            f'</BodySet><JointSet name="jointset"><objects>{joint}</objects></JointSet>'
            "</Model></OpenSimDocument>\n")
