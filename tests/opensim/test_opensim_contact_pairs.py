"""HuntCrossleyForce on the paths the jumper of opensim-models takes (issue 39): a contact
whose depth holds a CustomJoint's SimmSpline (a Piecewise inside the force law's conditions,
which once overflowed SymPy's recursion while the contact records were built), and sphere on
sphere contact, against OpenSim 4.6: u' at states in contact (and apart) to 1e-9 relative."""

from __future__ import annotations

import numpy as np
import pytest
import symengine as se
import sympy as sm

from symbody.opensim import load_opensim
from systems.opensim_contact_models import spline_leg_model
from systems.opensim_oracle import ask_opensim, opensim_installed

needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")


@pytest.fixture(scope="module")
def leg(tmp_path_factory):
    path = tmp_path_factory.mktemp("leg") / "spline_leg.osim"
    path.write_text(spline_leg_model())
    return path, load_opensim(path)


def _numbers(model, q, u) -> dict:
    """{symengine symbol: value} of the tree's coordinates and speeds at (q, u)."""
    Q, U = model.to_opensim_state(q, u)
    values = dict(zip(model.tree_coordinates, Q[list(model.simbody_q_slots)]))
    values.update(zip(model.tree_speeds, U))
    return {se.Symbol(k): values[a] for k, a in model.sympy_converter.names.items()
            if a in values}


def _lowered(model, q, u, deepest: float) -> np.ndarray:
    """q with ``leg_ty`` set so that the lowest foot sphere is ``deepest`` radii deep."""
    k = model.coordinate_names.index("leg_ty")
    q = q.copy()
    q[k] = 0.0
    rec = model.forces["foot_contact"]
    numbers = _numbers(model, q, u)
    d = np.array([float(e.subs(numbers)) for e in rec.depth])
    radii = np.array([float(r.max_penetration) for r in model.eom.contacts
                      if r.name.startswith("foot_contact")])
    j = int(np.argmax(d))
    q[k] = d[j] - deepest * radii[j]
    return q


def _compare(path, model, states) -> None:
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    queries = []
    for q, u in states:
        Q, U = model.to_opensim_state(q, u)
        queries.append({"kind": "derivatives", "Q": Q.tolist(), "U": U.tolist(),
                        "activations": {}, "excitations": {}})
    answers = ask_opensim(path, queries, without_forces=False)
    perm = list(model.simbody_index)
    n = len(model.coordinates)
    r = np.zeros(len(model.eom.specifieds))
    for (q, u), ans in zip(states, answers):
        udot = np.array(ans["udot"])[perm]
        xdot = nm.rhs(0.0, np.concatenate([q, u]), p, r)
        assert np.abs(xdot[n:] - udot).max() <= 1e-9 * np.abs(udot).max()


def test_spline_in_the_depth_builds_unevaluated_records(leg):
    """The records' SymPy expressions hold the spline's Piecewise inside the law's
    conditions as they are (not folded into an ITE), and equal the equations' numbers."""
    _, model = leg
    rec = model.eom.contacts[0]
    assert rec.gap.has(sm.Piecewise)
    conds = [c for pw in rec.normal_force.atoms(sm.Piecewise) for _, c in pw.args]
    assert any(c.has(sm.Piecewise) for c in conds)
    rng = np.random.default_rng(3)
    q, u = model.random_coordinates(rng), rng.uniform(-0.2, 0.2, 3)
    q = _lowered(model, q, u, 0.3)
    Q, U = model.to_opensim_state(q, u)
    values = dict(zip(model.tree_coordinates, Q[list(model.simbody_q_slots)]))
    values.update(zip(model.tree_speeds, U))
    numbers = _numbers(model, q, u)
    ours = [float(r.normal_force.xreplace(values)) for r in model.eom.contacts]
    theirs = [float(e.subs(numbers)) for e in model.forces["foot_contact"].normal_force]
    assert max(ours) > 1.0
    assert ours == pytest.approx(theirs, rel=1e-12)


@needs_opensim
def test_spline_leg_contacts_agree_with_opensim(leg):
    path, model = leg
    rng = np.random.default_rng(7)
    states = []
    for deepest in (0.3, 0.1, -0.5):           # both spheres in, one in, both apart
        q, u = model.random_coordinates(rng), rng.uniform(-0.3, 0.3, 3)
        states.append((_lowered(model, q, u, deepest), u))
    _compare(path, model, states)


@pytest.fixture(scope="module")
def two_spheres(tmp_path_factory):
    path = tmp_path_factory.mktemp("balls") / "spline_leg_ball.osim"
    path.write_text(spline_leg_model(two_spheres=True))
    return path, load_opensim(path)


def _ball_on_heel(model, q, u, overlap: float, direction) -> np.ndarray:
    """q with the ball moved so that its sphere overlaps the heel's by ``overlap`` (m; < 0:
    apart) along ``direction`` from the heel's centre (markers at the two centres)."""
    names = list(model.markers)
    q = q.copy()
    for _ in range(2):               # the centre is linear in the ball's translations
        heel, ball = model.marker_positions(q)[[names.index("heel_centre"),
                                                 names.index("ball_centre")]]
        target = heel + (0.03 + 0.05 - overlap) * direction / np.linalg.norm(direction)
        for axis, c in enumerate("xyz"):
            q[model.coordinate_names.index(f"ball_t{c}")] += (target - ball)[axis]
    return q


def test_sphere_on_sphere_records(two_spheres):
    """The pair is built (nothing left out), one record with three slip components, its
    penetration limit the smaller radius."""
    _, model = two_spheres
    assert not model.left_out
    rec = {r.name: r for r in model.eom.contacts}["ball_heel"]
    assert len(rec.slip_velocity) == len(rec.friction_force) == 3
    assert float(rec.max_penetration) == pytest.approx(0.03)
    assert [name for name, _ in rec.switching] == ["contact", "damping"]


@needs_opensim
def test_sphere_on_sphere_agrees_with_opensim(two_spheres):
    """u' with the ball pressed into the heel (and the foot on the floor), and apart."""
    path, model = two_spheres
    rng = np.random.default_rng(11)
    n = len(model.coordinates)
    states = []
    for overlap in (0.3 * 0.03, 0.1 * 0.03, -0.01):
        q, u = model.random_coordinates(rng), rng.uniform(-0.3, 0.3, n)
        q = _lowered(model, q, u, 0.2)
        q = _ball_on_heel(model, q, u, overlap, rng.normal(size=3))
        states.append((q, u))
    _compare(path, model, states)
    # the pair pushes at the first state
    numbers = _numbers(model, *states[0])
    force = model.forces["ball_heel"].normal_force[0]
    assert float(force.subs(numbers)) > 1.0
