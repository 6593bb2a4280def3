"""Every force family the importer builds reaches ``model.system``: Kane's equations of the
System with its loads (``model.system_eom()``, SymPy's vector algebra) give model.eom's u'
(which agrees with OpenSim) at random states, with every force at once on the star model
(one body per joint type, each joined to the ground), each force's share far above the
tolerance; the families without a System form (muscles, path forces) are named by a
warning, never dropped silently; and the forces of OpenSim's bouncing block (a
HuntCrossleyForce, a PointToPointSpring, a CoordinateLimitForce and a BushingForce), which
``system_eom`` once left out without a word."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import symengine as se
import sympy as sm
from sympy.physics.mechanics import PinJoint, TorqueActuator

import symbody as sb
from symbody.opensim import OpenSimImportWarning, load_opensim
from symbody.opensim.forces import FORCE_BUILDERS, builder_for
from symbody.opensim.forces.muscles import PATH_ONLY_MUSCLES
from symbody.opensim.system_loads import has_system_form
from systems.opensim_force_models import OFFSET_FRAME, PASSIVE_FORCES, limited_states
from systems.opensim_synthetic import star_model

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"



def _actuator(name: str, coordinate: str, force: float) -> str:
    return (f'<CoordinateActuator name="{name}"><coordinate>{coordinate}</coordinate>'
            f"<optimal_force>{force}</optimal_force></CoordinateActuator>")


def _spring(name: str, coordinate: str) -> str:
    return (f'<SpringGeneralizedForce name="{name}"><coordinate>{coordinate}</coordinate>'
            "<stiffness>12.5</stiffness><rest_length>0.2</rest_length><viscosity>0.7"
            "</viscosity></SpringGeneralizedForce>")


# the star model's bodies: s0 Free, s1 Ball, s2 Gimbal, s3 Universal, s4 Planar, s5 Custom
# (coordinates c_a, c_b), s6 Pin, s7 Slider, s8 Weld; a force of each family, the
# generalized forces on a coordinate of every joint type
FORCES = {
    "CoordinateActuator": "".join(_actuator(f"act_{c}", c, f) for c, f in (
        ("s0_rx", 3.0), ("s0_ty", 20.0), ("s1_y", 2.0), ("s2_z", 2.5), ("s3_x", 1.5),
        ("s4_tx", 7.0), ("c_b", 2.0), ("s6_a", 4.0), ("s7_s", 9.0))),
    "SpringGeneralizedForce": _spring("spring_planar", "s4_rz") + _spring("spring_custom", "c_a"),
    "CoordinateLimitForce": '<CoordinateLimitForce name="limit_a"><coordinate>s6_a</coordinate>'
    "<upper_stiffness>3.0</upper_stiffness><upper_limit>10</upper_limit><lower_stiffness>5.0"
    "</lower_stiffness><lower_limit>-20</lower_limit><damping>0.05</damping><transition>25"
    "</transition></CoordinateLimitForce>"
    '<CoordinateLimitForce name="limit_s"><coordinate>s7_s</coordinate><upper_stiffness>300'
    "</upper_stiffness><upper_limit>0.1</upper_limit><lower_stiffness>200</lower_stiffness>"
    "<lower_limit>-0.2</lower_limit><damping>4</damping><transition>0.5</transition>"
    "</CoordinateLimitForce>",
    "ExpressionBasedCoordinateForce": '<ExpressionBasedCoordinateForce name="expr_g">'
    "<coordinate>s2_y</coordinate><expression>-3.5*q - 0.4*qdot + 2*sin(q)^2</expression>"
    "</ExpressionBasedCoordinateForce>",
    "PointToPointSpring": PASSIVE_FORCES["PointToPointSpring"],
    "PointActuator": '<PointActuator name="push"><body>s5</body><point>0.05 -0.1 0.02</point>'
    "<direction>0.3 1 -0.2</direction><optimal_force>20</optimal_force></PointActuator>"
    '<PointActuator name="push_global"><body>s1</body><point>0.15 -0.3 0.1</point>'
    "<point_is_global>true</point_is_global><direction>1 0.5 0.2</direction>"
    "<force_is_global>true</force_is_global><optimal_force>15</optimal_force></PointActuator>",
    "BushingForce": PASSIVE_FORCES["BushingForce"],
    "ExpressionBasedBushingForce": '<ExpressionBasedBushingForce name="ebush"><socket_frame1>'
    "/ground</socket_frame1><socket_frame2>s7_offset</socket_frame2><frames>"
    + OFFSET_FRAME.format(name="s7_offset", parent="/bodyset/s7", t="0.02 0.1 -0.03", o="0.2 0.1 -0.3")
    + "</frames><Mx_expression>20*theta_x + 3*theta_y^2</Mx_expression><My_expression>"
    "30*sin(theta_y)</My_expression><Fy_expression>600*delta_y + 50*delta_x*delta_z"
    "</Fy_expression><rotational_damping>0.5 0.6 0.7</rotational_damping>"
    "<translational_damping>5 6 7</translational_damping></ExpressionBasedBushingForce>",
    "SmoothSphereHalfSpaceForce": '<SmoothSphereHalfSpaceForce name="ball_floor">'
    "<socket_sphere>/contactgeometryset/ball</socket_sphere><socket_half_space>"
    "/contactgeometryset/floor</socket_half_space><stiffness>1e4</stiffness><dissipation>0.05"
    "</dissipation><static_friction>0.8</static_friction><dynamic_friction>0.7"
    "</dynamic_friction><viscous_friction>0.5</viscous_friction><transition_velocity>0.2"
    "</transition_velocity></SmoothSphereHalfSpaceForce>",
}
_GEOMETRY = ('<ContactGeometrySet name="contactgeometryset"><objects>'
             '<ContactSphere name="ball"><socket_frame>/bodyset/s0</socket_frame><location>'
             "0.02 -0.05 0.01</location><radius>0.6</radius></ContactSphere>"
             '<ContactHalfSpace name="floor"><socket_frame>/ground</socket_frame><location>'
             "0 0.6 0</location><orientation>0 0 -1.5707963267948966</orientation>"
             "</ContactHalfSpace></objects></ContactGeometrySet>")
#: HuntCrossleyForce: tests/opensim/test_opensim_system_contact.py and the bouncing block below
CONTACT_TESTED_ELSEWHERE = {"HuntCrossleyForce"}
#: the families that have no System form: system_eom names them in a warning
NO_SYSTEM_FORM = {"Thelen2003Muscle", "Schutte1993Muscle_Deprecated",
                  "Millard2012EquilibriumMuscle", "DeGrooteFregly2016Muscle",
                  "PathActuator", "PathSpring"}


def _star_with_forces() -> str:
    return star_model().replace("</Model>", '<ForceSet name="forceset"><objects>'
                                + "".join(FORCES.values()) + f"</objects></ForceSet>{_GEOMETRY}"
                                "</Model>")


def _load(path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenSimImportWarning)       # nothing is left out
        return load_opensim(path)


@pytest.fixture(scope="module")
def star(tmp_path_factory):
    path = tmp_path_factory.mktemp("system_forces") / "star_forces.osim"
    path.write_text(_star_with_forces())
    model = _load(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenSimImportWarning)       # every force on the System
        other = sb.compile(model.system_eom(), constants=list(model.constants))
    return model, other


#: the limited coordinates' values, state by state: beyond a limit, within its transition
_LIMITED = {"s6_a": (-0.9, 0.4, -0.5), "s7_s": (0.9, -0.9, 0.3)}


def _states(model, count: int, seed: int) -> list:
    return limited_states(model, count, seed, _LIMITED)


def _same_udot(model, other, states) -> None:
    nm = model.numeric_model
    order = [list(other.eom.specifieds).index(s) for s in model.eom.specifieds]
    n = len(model.coordinates)
    for q, u, c in states:
        x = np.concatenate([q, u])
        r = np.empty(len(c))
        r[order] = c
        a = nm.rhs(0.0, x, nm.constants_array(model.constants), c)
        b = other.rhs(0.0, x, other.constants_array(model.constants), r)
        assert np.abs(a[n:]).max() > 1.0
        assert np.abs(a - b).max() <= 1e-10 * np.abs(a).max()


def test_every_family_is_classified():
    """A new force family must say whether it has a System form (and be tested here)."""
    builder_for("CoordinateActuator")                  # loads the families
    # (PATH_ONLY_MUSCLES: their paths only, no force at all, named by model.left_out)
    assert set(FORCE_BUILDERS) == (set(FORCES) | CONTACT_TESTED_ELSEWHERE | NO_SYSTEM_FORM
                                   | set(PATH_ONLY_MUSCLES))


def test_system_eom_with_every_force_equals_eom(star):
    model, other = star
    assert {r[0] if isinstance(r, tuple) else type(r).__name__ for r in model.forces.values()} \
        >= set(FORCES) - {"SmoothSphereHalfSpaceForce"}
    assert all(has_system_form(c) for c in model.force_contributions)
    _same_udot(model, other, _states(model, 3, 5))


def test_every_force_contributes(star):
    """Each force's generalized forces at the states compared are far above the tolerance
    (so the comparison above checks every one of them)."""
    model, _ = star
    for q, u, c in _states(model, 3, 5):
        Q, U = model.to_opensim_state(q, u)
        values = dict(zip(model.tree_coordinates, Q[list(model.simbody_q_slots)]))
        values.update(zip(model.tree_speeds, U))
        values.update(zip(model.eom.specifieds, c))
        numbers = {se.Symbol(k): values[a] for k, a in model.sympy_converter.names.items()
                   if a in values}
        for contrib in model.force_contributions:
            size = max(abs(float(se.sympify(e).subs(numbers))) for e in contrib.generalized)
            assert size > 1e-2, contrib.source


def test_path_forces_are_named_not_dropped(tmp_path):
    """A PathSpring has no System form: model.system and system_eom say so by name; the
    System's equations are those of the model without the spring."""
    point = ('<PathPoint name="{n}"><socket_parent_frame>/bodyset/{b}</socket_parent_frame>'
             "<location>{x}</location></PathPoint>")
    spring = ('<PathSpring name="band"><GeometryPath name="geometrypath"><PathPointSet><objects>'
              + point.format(n="p1", b="s0", x="0.1 0.05 0") + point.format(n="p2", b="s1",
                                                                            x="0 -0.1 0.02")
              + "</objects></PathPointSet></GeometryPath><resting_length>0.01</resting_length>"
              "<stiffness>100</stiffness><dissipation>0.1</dissipation></PathSpring>")
    path, bare = tmp_path / "path_spring.osim", tmp_path / "bare.osim"
    bare.write_text(star_model(only=("PinJoint", "SliderJoint")))
    path.write_text(bare.read_text().replace(
        "</Model>", f'<ForceSet name="forceset"><objects>{spring}</objects></ForceSet></Model>'))
    model = _load(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenSimImportWarning)
        parts = model.system_parts                   # marker points need no warning
    assert len(parts.left_out) == 1 and parts.left_out[0].startswith("PathSpring 'band' (line ")
    with pytest.warns(OpenSimImportWarning, match=r"model.system leaves out .*PathSpring 'band'"):
        assert model.system is parts.system
    with pytest.warns(OpenSimImportWarning, match=r"system_eom leaves out .*PathSpring 'band'"):
        other = sb.compile(model.system_eom(), constants=list(model.constants))
    without = _load(bare)
    rng = np.random.default_rng(4)
    _same_udot(without, other, [(without.random_coordinates(rng), rng.uniform(-1, 1, 2),
                                 np.zeros(0)) for _ in range(2)])


def test_bouncing_block_forces_reach_the_system():
    """OpenSim's bouncing block (3.x file): contact, spring, limit and bushing, at states on
    its PointOnLineConstraints (q_dep and the dependent speeds by our projection)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OpenSimImportWarning)       # (a 3.x file)
        model = load_opensim(DATA / "bouncing_block_30000.osim")
    assert {r[0] for r in model.forces.values() if isinstance(r, tuple)} == {
        "PointToPointSpring", "CoordinateLimitForce", "BushingForce"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenSimImportWarning)
        other = sb.compile(model.system_eom(), constants=list(model.constants))
    rng = np.random.default_rng(3)
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    k = model.coordinate_names.index("yTranslation")
    states = []
    for _ in range(3):
        q0 = 0.3 * model.random_coordinates(rng)
        q0[k] = 0.05 + 0.1 * rng.uniform()                # (the foot near the ground)
        q, ok, _ = nm.project_coordinates(q0, p)
        assert ok
        states.append((q, rng.uniform(-1, 1, len(model.u_ind)), np.zeros(0)))
    _same_udot(model, other, states)


def test_system_eom_includes_the_systems_actuators(tmp_path):
    """An actuator a user adds to model.system acts as its loads would (it was left out)."""
    path = tmp_path / "pin_slider.osim"
    path.write_text(star_model(only=("PinJoint", "SliderJoint")))
    model = _load(path)
    system = model.system
    pin = next(j for j in model.system_parts.joints if isinstance(j, PinJoint))
    actuator = TorqueActuator(sm.Float(2.5), pin.joint_axis, pin.child_interframe,
                              pin.parent_interframe)
    by_loads = sb.compile(model.system_eom(loads=actuator.to_loads()),
                          constants=list(model.constants))
    system.add_actuators(actuator)
    by_actuator = sb.compile(model.system_eom(), constants=list(model.constants))
    rng = np.random.default_rng(6)
    x = np.concatenate([model.random_coordinates(rng), rng.uniform(-1, 1, 2)])
    a = by_loads.rhs(0.0, x, by_loads.constants_array(model.constants))
    b = by_actuator.rhs(0.0, x, by_actuator.constants_array(model.constants))
    c = model.numeric_model.rhs(0.0, x, model.numeric_model.constants_array(model.constants))
    assert np.abs(a - c).max() > 0.1                 # the actuator moves the model
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-12 * np.abs(a).max())


def test_forces_with_a_constraint(tmp_path):
    """A coupler makes the slider's coordinate dependent; an actuator on it, a limit force
    and a spring reach the System's equations all the same."""
    forces = (_actuator("push_dependent", "s1_s", 5.0)
              + FORCES["CoordinateLimitForce"].split("</CoordinateLimitForce>")[0]
              .replace("s6_a", "s0_a") + "</CoordinateLimitForce>"
              + FORCES["PointToPointSpring"])
    coupler = ('<ConstraintSet name="constraintset"><objects><CoordinateCouplerConstraint '
               'name="couple"><independent_coordinate_names>s0_a</independent_coordinate_names>'
               "<dependent_coordinate_name>s1_s</dependent_coordinate_name>"
               '<coupled_coordinates_function><LinearFunction name="function"><coefficients>'
               "0.3 0.01</coefficients></LinearFunction></coupled_coordinates_function>"
               "</CoordinateCouplerConstraint></objects></ConstraintSet>")
    path = tmp_path / "coupled.osim"
    path.write_text(star_model(only=("PinJoint", "SliderJoint")).replace(
        "</Model>", f'{coupler}<ForceSet name="forceset"><objects>{forces}</objects></ForceSet>'
        "</Model>"))
    model = _load(path)
    assert [str(q) for q in model.q_dep] == ["q_s1_s(t)"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenSimImportWarning)
        other = sb.compile(model.system_eom(), constants=list(model.constants))
    rng = np.random.default_rng(7)
    states = []
    for a in (-0.8, 0.1, 0.6):                        # on the constraint: s = 0.3 a + 0.01
        states.append((np.array([a, 0.3 * a + 0.01]), rng.uniform(-1, 1, 1),
                       rng.uniform(-1, 1, 1)))
    _same_udot(model, other, states)
