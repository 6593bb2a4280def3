"""Small synthetic OpenSim 4.x models with HuntCrossleyForce contacts, written as XML, for the
contact tests against OpenSim 4.6.

``spline_leg_model``: a leg on a CustomJoint from the ground (a rotation ``leg_angle`` about
z, a height ``leg_ty`` along y and a sideways shift along x that is a SimmSpline of the
angle, as a knee's translations are in gait2392 and the jumper), a foot on a pin joint with
heel and toe spheres on the floor (a ContactHalfSpace with normal +y): the spline puts a
Piecewise into the depth of every contact, the path on which the jumper of opensim-models
once overflowed SymPy's recursion.  ``two_spheres=True`` adds a free ball with a sphere of
its own and a second HuntCrossleyForce between the ball's sphere and the foot's heel (sphere
on sphere, stiffnesses and dissipations unequal), and markers ``heel_centre`` and
``ball_centre`` at the two spheres' centres.
"""

from __future__ import annotations

_KNEE_X = "-2.0944 -1.74533 -1.39626 -1.0472 -0.698132 -0.349066 -0.174533 0.197344 0.337395"
_KNEE_Y = "-0.0032 0.00179 0.00411 0.0041 0.00212 -0.001 -0.0031 -0.005227 -0.005435"


def _body(name: str, mass: float, com: str, inertia: str) -> str:
    return (f'<Body name="{name}"><mass>{mass}</mass><mass_center>{com}</mass_center>'
            f'<inertia>{inertia}</inertia></Body>')


def _frame(name: str, parent: str, translation: str, orientation: str = "0 0 0") -> str:
    return (f'<PhysicalOffsetFrame name="{name}"><socket_parent>{parent}</socket_parent>'
            f'<translation>{translation}</translation><orientation>{orientation}</orientation>'
            '</PhysicalOffsetFrame>')


def _coord(name: str, lo: float, hi: float) -> str:
    return (f'<Coordinate name="{name}"><default_value>0</default_value>'
            f'<range>{lo} {hi}</range></Coordinate>')


def _axis(name: str, coords: str, axis: str, function: str) -> str:
    return (f'<TransformAxis name="{name}"><coordinates>{coords}</coordinates><axis>{axis}</axis>'
            f'{function}</TransformAxis>')


def _linear(a: float, b: float = 0.0) -> str:
    return f'<LinearFunction name="function"><coefficients>{a} {b}</coefficients></LinearFunction>'


_ZERO = '<Constant name="function"><value>0</value></Constant>'


def _leg_joint() -> str:
    spline = f'<SimmSpline name="function"><x>{_KNEE_X}</x><y>{_KNEE_Y}</y></SimmSpline>'
    transform = ("<SpatialTransform>"
                 + _axis("rotation1", "leg_angle", "0 0 1", _linear(1.0))
                 + _axis("rotation2", "", "1 0 0", _ZERO)
                 + _axis("rotation3", "", "0 1 0", _ZERO)
                 + _axis("translation1", "leg_angle", "1 0 0",
                         '<MultiplierFunction name="function"><function>'
                         f'<SimmSpline><x>{_KNEE_X}</x><y>{_KNEE_Y}</y></SimmSpline></function>'
                         "<scale>20</scale></MultiplierFunction>")
                 + _axis("translation2", "leg_ty", "0 1 0", _linear(1.0))
                 + _axis("translation3", "leg_angle", "0 0 1", spline)
                 + "</SpatialTransform>")
    return ('<CustomJoint name="leg_joint"><socket_parent_frame>ground_offset'
            "</socket_parent_frame><socket_child_frame>leg_offset</socket_child_frame>"
            f"<coordinates>{_coord('leg_angle', -1.5, 0.3)}{_coord('leg_ty', -0.5, 1.5)}"
            "</coordinates><frames>"
            + _frame("ground_offset", "/ground", "0 0.6 0")
            + _frame("leg_offset", "/bodyset/leg", "0 0.25 0")
            + f"</frames>{transform}</CustomJoint>")


def _pin(name: str, parent: str, child: str, coordinate: str, at: str) -> str:
    return (f'<PinJoint name="{name}"><socket_parent_frame>{name}_p</socket_parent_frame>'
            f"<socket_child_frame>{name}_c</socket_child_frame><coordinates>"
            f"{_coord(coordinate, -0.8, 0.8)}</coordinates><frames>"
            + _frame(f"{name}_p", parent, at, "0 0 0.1")
            + _frame(f"{name}_c", child, "-0.05 0.02 0")
            + "</frames></PinJoint>")


def _free(name: str, child: str) -> str:
    coords = "".join(_coord(f"ball_{c}", lo, hi) for c, lo, hi in (
        ("rx", -1, 1), ("ry", -1, 1), ("rz", -1, 1), ("tx", -0.5, 0.5), ("ty", -0.2, 1.0),
        ("tz", -0.5, 0.5)))
    return (f'<FreeJoint name="{name}"><socket_parent_frame>/ground</socket_parent_frame>'
            f"<socket_child_frame>{child}</socket_child_frame><coordinates>{coords}"
            "</coordinates></FreeJoint>")


def _sphere(name: str, frame: str, location: str, radius: float) -> str:
    return (f'<ContactSphere name="{name}"><socket_frame>{frame}</socket_frame>'
            f"<location>{location}</location><orientation>0 0 0</orientation>"
            f"<radius>{radius}</radius></ContactSphere>")


def _parameters(geometry: str, stiffness: float, dissipation: float, static: float,
                dynamic: float, viscous: float) -> str:
    return ("<HuntCrossleyForce::ContactParameters>"
            f"<geometry>{geometry}</geometry><stiffness>{stiffness}</stiffness>"
            f"<dissipation>{dissipation}</dissipation><static_friction>{static}"
            f"</static_friction><dynamic_friction>{dynamic}</dynamic_friction>"
            f"<viscous_friction>{viscous}</viscous_friction>"
            "</HuntCrossleyForce::ContactParameters>")


def _hunt_crossley(name: str, parameters: list, transition: float) -> str:
    return (f'<HuntCrossleyForce name="{name}"><contact_parameters>'
            f'<HuntCrossleyForce::ContactParametersSet name="contact_parameters"><objects>'
            + "".join(parameters)
            + "</objects></HuntCrossleyForce::ContactParametersSet></contact_parameters>"
            f"<transition_velocity>{transition}</transition_velocity></HuntCrossleyForce>")


def spline_leg_model(two_spheres: bool = False) -> str:
    """The model's XML text (module docstring)."""
    bodies = (_body("leg", 4.0, "0.01 -0.1 0.005", "0.06 0.01 0.06 0.001 -0.002 0.0005")
              + _body("foot", 1.2, "0.04 -0.02 0.0", "0.002 0.004 0.004 0.0003 0 -0.0001"))
    joints = _leg_joint() + _pin("ankle", "/bodyset/leg", "/bodyset/foot", "foot_angle",
                                 "0 -0.3 0")
    geometry = ('<ContactHalfSpace name="floor"><socket_frame>/ground</socket_frame>'
                "<location>0 0 0</location><orientation>0 0 -1.5707963267948966</orientation>"
                "</ContactHalfSpace>"
                + _sphere("heel", "/bodyset/foot", "-0.06 -0.03 0.01", 0.03)
                + _sphere("toe", "/bodyset/foot", "0.14 -0.035 -0.01", 0.02))
    forces = _hunt_crossley("foot_contact", [
        _parameters("floor", 2e6, 0.8, 0.9, 0.7, 0.3),
        _parameters("heel toe", 5e6, 1.2, 0.8, 0.6, 0.2)], 0.05)
    markers = ""
    if two_spheres:
        markers = ('<MarkerSet name="markerset"><objects>'
                   '<Marker name="heel_centre"><socket_parent_frame>/bodyset/foot'
                   "</socket_parent_frame><location>-0.06 -0.03 0.01</location></Marker>"
                   '<Marker name="ball_centre"><socket_parent_frame>/bodyset/ball'
                   "</socket_parent_frame><location>0.01 -0.005 0.002</location></Marker>"
                   "</objects></MarkerSet>")
        bodies += _body("ball", 0.8, "0 0 0", "0.002 0.002 0.002 0 0 0")
        joints += _free("ball_joint", "/bodyset/ball")
        geometry += _sphere("ball_sphere", "/bodyset/ball", "0.01 -0.005 0.002", 0.05)
        forces += _hunt_crossley("ball_heel", [
            _parameters("ball_sphere", 3e6, 0.5, 0.6, 0.5, 0.1),
            _parameters("heel", 5e6, 1.2, 0.8, 0.6, 0.2)], 0.05)
    return ('<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40000">'
            '<Model name="spline_leg"><Ground name="ground"/><gravity>0 -9.81 0</gravity>'
            f'<BodySet name="bodyset"><objects>{bodies}</objects></BodySet>'
            f'<JointSet name="jointset"><objects>{joints}</objects></JointSet>'
            f'<ForceSet name="forceset"><objects>{forces}</objects></ForceSet>{markers}'
            f'<ContactGeometrySet name="contactgeometryset"><objects>{geometry}</objects>'
            "</ContactGeometrySet></Model></OpenSimDocument>\n")
