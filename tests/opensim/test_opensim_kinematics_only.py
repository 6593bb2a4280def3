"""A model for kinematics only (bodies that move without mass, as in the wrist model of
opensim-models, whose licence does not let us copy it: benchmarks/bench_opensim_wrist.py
measures it from a mirror): it loads with a warning naming the massless bodies, its path
lengths, moment arms, markers and mass matrix (zero rows) agree with OpenSim 4.6, and every
way to its dynamics fails early, naming the bodies."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import symbody as sb
from symbody.opensim import KinematicsOnlyError, KinematicsOnlyWarning, load_opensim
from systems.opensim_oracle import ask_opensim, opensim_installed, terms_in_our_order
from systems.opensim_synthetic import _axis, _body, _coord, _joint

needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")

MASSLESS = ("proximal_row", "hand", "finger")


def _massless(name: str) -> str:
    return (f'<Body name="{name}"><mass>0</mass><mass_center>0 0 0</mass_center>'
            "<inertia>0 0 0 0 0 0</inertia></Body>")


def _linear(slope: float) -> str:
    return (f'<LinearFunction name="function"><coefficients>{slope} 0</coefficients>'
            "</LinearFunction>")


_ZERO = '<Constant name="function"><value>0</value></Constant>'


def _rotations(first: tuple, second: tuple | None = None) -> str:
    """A SpatialTransform: rotation1 (and rotation2) linear in a coordinate, the rest fixed;
    translation1 a spline of the first coordinate (a moving centre of rotation)."""
    spline = ('<SimmSpline name="function"><x>-1.2 -0.4 0.3 1.2</x>'
              "<y>-0.004 0.001 0.003 -0.002</y></SimmSpline>")
    axes = [_axis("rotation1", first[0], first[1], _linear(1.0)),
            _axis("rotation2", second[0], second[1], _linear(1.0)) if second
            else _axis("rotation2", "", "1 0 0", _ZERO),
            _axis("rotation3", "", "0 1 0", _ZERO),
            _axis("translation1", first[0], "1 0 0", spline),
            _axis("translation2", "", "0 1 0", _ZERO),
            _axis("translation3", "", "0 0 1", '<Constant name="function"><value>0.003'
                  "</value></Constant>")]
    return "<SpatialTransform>" + "".join(axes) + "</SpatialTransform>"


def _point(name: str, body: str, loc: str, conditional: str = "") -> str:
    if conditional:
        return (f'<ConditionalPathPoint name="{name}"><socket_parent_frame>/bodyset/{body}'
                f"</socket_parent_frame><location>{loc}</location>{conditional}"
                "</ConditionalPathPoint>")
    return (f'<PathPoint name="{name}"><socket_parent_frame>/bodyset/{body}'
            f"</socket_parent_frame><location>{loc}</location></PathPoint>")


def _muscle(name: str, points: list) -> str:
    return (f'<Schutte1993Muscle_Deprecated name="{name}"><GeometryPath name="geometrypath">'
            f"<PathPointSet><objects>{''.join(points)}</objects></PathPointSet></GeometryPath>"
            "<max_isometric_force>60</max_isometric_force><optimal_fiber_length>0.06"
            "</optimal_fiber_length><tendon_slack_length>0.2</tendon_slack_length>"
            "</Schutte1993Muscle_Deprecated>")


def hand_model() -> str:
    """A forearm with mass on an elbow pin; a massless proximal carpal row (its flexion half
    the wrist's, through a CoordinateCouplerConstraint), hand, welded metacarpal and finger
    on CustomJoints, a welded fingertip; two muscles (one with a conditional path point), three
    markers."""
    bodies = (_body("forearm", 1.2, "0.01 -0.12 0.0") + "".join(map(_massless, MASSLESS))
              + _massless("metacarpal") + _massless("fingertip"))
    joints = [
        _joint("PinJoint", "elbow", "", "", [_coord("elbow_flexion", 0.0, 2.0)], "/ground",
               "/bodyset/forearm"),
        _joint("CustomJoint", "radiocarpal", "", "", [_coord("rc_flexion", -0.6, 0.6)],
               "/bodyset/forearm", "/bodyset/proximal_row", _rotations(("rc_flexion", "0 0 1"))),
        _joint("CustomJoint", "midcarpal", "", "", [_coord("flexion", -1.2, 1.2),
                                                     _coord("deviation", -0.4, 0.4)],
               "/bodyset/proximal_row", "/bodyset/hand",
               _rotations(("flexion", "0 0 1"), ("deviation", "1 0 0"))),
        _joint("WeldJoint", "carpometacarpal", "", "", [], "/bodyset/hand",
               "/bodyset/metacarpal"),
        # a CustomJoint: OpenSim gives Simbody's graph maker its type with no mobilities, so
        # a massless body at the end of a branch passes (a PinJoint there is refused)
        _joint("CustomJoint", "mcp", "", "", [_coord("mcp_flexion", -0.2, 1.5)],
               "/bodyset/metacarpal", "/bodyset/finger", _rotations(("mcp_flexion", "0 0 1"))),
        _joint("WeldJoint", "tip", "", "", [], "/bodyset/finger", "/bodyset/fingertip"),
    ]
    coupler = ('<CoordinateCouplerConstraint name="rc_follows_flexion">'
               "<coupled_coordinates_function><SimmSpline><x>-1.2 1.2</x><y>-0.6 0.6</y>"
               "</SimmSpline></coupled_coordinates_function><independent_coordinate_names>"
               "flexion</independent_coordinate_names><dependent_coordinate_name>rc_flexion"
               "</dependent_coordinate_name><scale_factor>1</scale_factor>"
               "</CoordinateCouplerConstraint>")
    flexing = ("<socket_coordinate>/jointset/midcarpal/flexion</socket_coordinate>"
               "<range>0.3 1.2</range>")
    muscles = [
        _muscle("flexor", [_point("f1", "forearm", "0.02 0.05 0.01"),
                           _point("f2", "forearm", "0.03 -0.25 0.02"),
                           _point("f3", "forearm", "0.025 -0.28 0.015", flexing),
                           _point("f4", "hand", "0.02 0.03 0.01"),
                           _point("f5", "finger", "0.01 -0.03 0.0")]),
        _muscle("extensor", [_point("e1", "forearm", "-0.02 0.02 -0.01"),
                             _point("e2", "proximal_row", "-0.015 0.01 0.0"),
                             _point("e3", "hand", "-0.02 -0.05 0.01"),
                             _point("e4", "finger", "-0.01 -0.04 0.0")]),
    ]
    markers = "".join(
        f'<Marker name="{n}"><socket_parent_frame>/bodyset/{b}</socket_parent_frame>'
        f"<location>{loc}</location></Marker>"
        for n, b, loc in (("elbow_m", "forearm", "0.03 0.01 0.02"),
                          ("wrist_m", "hand", "0.01 0.02 -0.03"),
                          ("tip_m", "fingertip", "0.0 -0.06 0.01")))
    return ('<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40000">'
            '<Model name="kinematic_hand"><Ground name="ground"/>'
            "<gravity>0 -9.80665 0</gravity>"
            f'<BodySet name="bodyset"><objects>{bodies}</objects></BodySet>'
            f'<JointSet name="jointset"><objects>{"".join(joints)}</objects></JointSet>'
            f'<ConstraintSet name="constraintset"><objects>{coupler}</objects></ConstraintSet>'
            f'<ForceSet name="forceset"><objects>{"".join(muscles)}</objects></ForceSet>'
            f'<MarkerSet name="markerset"><objects>{markers}</objects></MarkerSet>'
            "</Model></OpenSimDocument>\n")


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    path = tmp_path_factory.mktemp("kinematic_hand") / "kinematic_hand.osim"
    path.write_text(hand_model())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = load_opensim(path)
    return path, model, caught


def test_loads_with_a_warning_naming_the_massless_bodies(hand):
    _, model, caught = hand
    kin = [w for w in caught if issubclass(w.category, KinematicsOnlyWarning)]
    assert len(kin) == 1
    text = str(kin[0].message)
    assert "'proximal_row', 'hand', 'finger'" in text and "forearm" not in text
    assert "mass matrix has zero rows" in text and "forward dynamics" in text
    assert model.kinematics_only and model.massless_bodies == MASSLESS
    assert model.muscle_names == ("flexor", "extensor")
    assert [str(q) for q in model.q_dep] == ["q_rc_flexion(t)"]


def test_every_dynamics_entry_point_fails_early_naming_the_bodies(hand):
    _, model, _ = hand
    x0 = np.zeros(2 * len(model.coordinates))
    attempts = {
        "eom": lambda: model.eom,
        "numeric_model": lambda: model.numeric_model,
        "dynamic_terms": lambda: model.dynamic_terms(np.zeros(5), np.zeros(5)),
        "system_eom": lambda: model.system_eom(),
        "input_names": lambda: model.input_names,
        "linearize": lambda: sb.linearize(model, x0),
        "simulate": lambda: sb.simulate(model.numeric_model, (0.0, 1.0), x0, model.constants),
        "rhs": lambda: model.numeric_model.rhs(0.0, x0),
        "optimal control": lambda: sb.OptimalControlProblem(
            model.eom, num_nodes=5, duration=1.0, objective=0),
    }
    for what, attempt in attempts.items():
        with pytest.raises(KinematicsOnlyError) as err:
            attempt()
        text = str(err.value)
        assert "kinematics only" in text and "'proximal_row', 'hand', 'finger'" in text, what


def test_kinematic_views_work(hand):
    _, model, _ = hand
    q = model.random_coordinates(0)
    M = model.mass_matrix(q)
    elbow = model.coordinate_names.index("elbow_flexion")
    assert M.shape == (5, 5) and M[elbow, elbow] > 0
    M[elbow, elbow] = 0.0
    assert not M.any()                      # the massless bodies' rows and columns
    Q, U = model.to_opensim_state(q, np.arange(5.0))
    q_back, u_back = model.from_opensim_state(Q, U)
    assert np.array_equal(q_back, q) and np.array_equal(u_back, np.arange(5.0))
    kin = model.kinematic_equations          # (model.eom has them in a model with mass)
    assert kin.holonomic.shape == (1, 1) and kin.velocity_matrix.shape == (1, 5)
    assert set(kin.kindiffdict) == {q.diff(kin.t) for q in model.coordinates}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert len(model.scene.points) == 3     # the markers


def test_the_sympy_system_of_a_kinematics_only_model():
    """``model.system`` takes the kinematic equations from the model, not from ``eom``."""
    joints = [_joint("PinJoint", "j1", "", "", [_coord("a")], "/ground", "/bodyset/b1"),
              _joint("PinJoint", "j2", "", "", [_coord("b")], "/bodyset/b1", "/bodyset/b2")]
    coupler = ('<CoordinateCouplerConstraint name="c"><coupled_coordinates_function>'
               '<LinearFunction name="f"><coefficients>0.5 0</coefficients></LinearFunction>'
               "</coupled_coordinates_function><independent_coordinate_names>a"
               "</independent_coordinate_names><dependent_coordinate_name>b"
               "</dependent_coordinate_name></CoordinateCouplerConstraint>")
    xml = ('<OpenSimDocument Version="40000"><Model name="two"><Ground name="ground"/>'
           f'<BodySet><objects>{_massless("b1")}{_massless("b2")}</objects></BodySet>'
           f"<JointSet><objects>{''.join(joints)}</objects></JointSet>"
           f"<ConstraintSet><objects>{coupler}</objects></ConstraintSet>"
           "</Model></OpenSimDocument>")
    with pytest.warns(KinematicsOnlyWarning, match="'b1', 'b2'"):
        model = load_opensim(xml)
    system = model.system
    assert len(system.bodies) == 3 and len(system.holonomic_constraints) == 1
    assert all(system.holonomic_constraints[0].has(q) for q in model.coordinates)
    with pytest.raises(KinematicsOnlyError, match="system_eom"):
        model.system_eom()


@needs_opensim
def test_lengths_moment_arms_markers_and_mass_matrix_agree_with_opensim(hand):
    path, model, _ = hand
    rng = np.random.default_rng(11)
    qs = np.array([model.random_coordinates(rng) for _ in range(5)])
    names = list(model.coordinate_names)
    queries = []
    for q in qs:
        Q, U = model.to_opensim_state(q)
        queries += [{"kind": "muscles", "Q": Q.tolist(), "names": list(model.muscle_names),
                     "coordinates": names},
                    {"kind": "markers", "Q": Q.tolist(), "names": list(model.markers)},
                    {"kind": "state", "Q": Q.tolist(), "U": U.tolist(), "names": names},
                    {"kind": "terms", "Q": Q.tolist(), "U": U.tolist()}]
    answers = ask_opensim(path, queries, without_forces=False)
    L, A, P = model.musculotendon_lengths(qs), model.moment_arms(qs), None
    for k, q in enumerate(qs):
        muscles, markers, state, terms = answers[4 * k:4 * k + 4]
        assert np.abs(np.array(muscles["lengths"]) - L[k]).max() < 1e-9
        A_os = np.array(muscles["moment_arms"])
        assert np.abs(A_os - A[k]).max() < 1e-9 * max(1.0, np.abs(A_os).max())
        P = model.marker_positions(q)
        assert np.abs(np.array(markers) - P).max() < 1e-12
        assert [state[n][0] for n in names] == pytest.approx(q, abs=1e-15)
        M_os = terms_in_our_order(model, terms)["M"]
        assert np.abs(M_os - model.mass_matrix(q)).max() < 1e-12 * np.abs(M_os).max()
