"""Every joint type, function type and constraint of the importer against OpenSim 4.6, on a
synthetic model (tests/systems/opensim_synthetic.py): Free, Ball, Gimbal, Universal,
CustomJoint (Linear, Polynomial, Constant, SimmSpline, Multiplier, PiecewiseLinear
functions), Pin, Slider, Weld, Planar; coupler, point and weld constraints, locked and
prescribed coordinates.  OpenSim answers in a process of its own."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import symbody as sb
from symbody.opensim import OpenSimImportWarning, load_opensim
from systems.opensim_oracle import (
    ask_opensim,
    opensim_installed,
    opensim_terms_of,
    terms_in_our_order,
)
from systems.opensim_synthetic import coupled_model, synthetic_model

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"

pytestmark = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")


def _relative(a, b) -> float:
    return float(np.abs(np.asarray(a) - b).max() / max(np.abs(b).max(), 1e-300))


@pytest.fixture(scope="module")
def free_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("osim") / "synthetic.osim"
    path.write_text(synthetic_model())
    return path, load_opensim(path)


def test_every_joint_type_agrees(free_model):
    path, model = free_model
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    rng = np.random.default_rng(3)
    n = len(model.coordinates)
    states = [(model.random_coordinates(rng), rng.uniform(-2, 2, n)) for _ in range(3)]
    refs = opensim_terms_of(model, path, states, markers=True)
    for (q, u), ref in zip(states, refs):
        M, g_full = model.dynamic_terms(q, u)
        _, g_static = model.dynamic_terms(q, np.zeros(n))
        assert _relative(M, ref["M"]) < 1e-9
        assert _relative(-g_static, ref["gravity"]) < 1e-9
        assert _relative(g_full - g_static, ref["velocity"]) < 1e-9
        xdot = nm.rhs(0.0, np.concatenate([q, u]), p)
        assert _relative(xdot[:n], ref["qdot"]) < 1e-9      # Ball and Free: q' = N(q) u
        assert _relative(xdot[n:], ref["udot"]) < 1e-9
        assert np.abs(model.marker_positions(q) - ref["markers"]).max() < 1e-12


class _SimTKVector:
    def __init__(self, values):
        self.values = list(values)

    def size(self):
        return len(self.values)

    def get(self, i):
        return self.values[i]


class _State:
    """What from_opensim_state reads of an OpenSim State (getQ, getU of SimTK Vectors)."""

    def __init__(self, Q, U):
        self.Q, self.U = Q, U

    def getQ(self):   # noqa: N802 (OpenSim's name)
        return _SimTKVector(self.Q)

    def getU(self):   # noqa: N802
        return _SimTKVector(self.U)


def test_state_maps_round_trip(free_model):
    path, model = free_model
    rng = np.random.default_rng(0)
    q = model.random_coordinates(rng)
    u = rng.uniform(-1, 1, len(q))
    Q, U = model.to_opensim_state(q, u)
    assert Q.size == model.simbody_nq == len(q) + 2     # Free and Ball keep a 4th slot
    q2, u2 = model.from_opensim_state(Q, U)
    assert np.array_equal(q2, q) and np.array_equal(u2, u)
    q3, u3 = model.from_opensim_state(_State(Q, U))
    assert np.array_equal(q3, q) and np.array_equal(u3, u)
    # OpenSim reads every coordinate's value and speed where we put them
    by_name = ask_opensim(path, [{"kind": "state", "Q": Q.tolist(), "U": U.tolist(),
                                  "names": list(model.coordinate_names)}])[0]
    for i, name in enumerate(model.coordinate_names):
        assert by_name[name] == [q[i], u[i]]


def test_constraints_agree(tmp_path):
    """At states on the constraints (q_dep by our projection, dependent speeds from B u = -b),
    OpenSim's u' (its own constraint equations) equals ours."""
    path = tmp_path / "synthetic_constrained.osim"
    path.write_text(synthetic_model(constraints=True))
    model = load_opensim(path)
    assert {str(s)[2:-3] for s in model.q_dep} >= {"lock", "presc", "slide"}
    assert len(model.q_dep) == 12        # locked, prescribed, coupler, point (3), weld (6)
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    rng = np.random.default_rng(5)
    states = []
    for _ in range(2):
        q, ok, _ = nm.project_coordinates(0.3 * model.random_coordinates(rng), p)
        assert ok
        states.append((q, nm.full_speeds(q, rng.uniform(-1, 1, len(model.u_ind)), p)))
    for (q, u), ref in zip(states, opensim_terms_of(model, path, states)):
        assert _relative(model.mass_matrix(q), ref["M"]) < 1e-9
        udot, _ = nm.accelerations(q, u, p)
        assert _relative(udot, ref["udot"]) < 1e-9


def test_coupled_custom_joint_velocity_terms(tmp_path):
    """A CustomJoint whose rotations share one coordinate: our velocity terms are exact (the
    equations of SymPy's Kane's method on model.system, energy conserved), OpenSim 4.6's
    differ by Simbody's approximation of the FunctionBased mobilizer's Ḣ (its energy
    drifts), which the default custom_joint_bias="simbody" reproduces.  Both loads warn and
    name the joint."""
    path = tmp_path / "coupled.osim"
    path.write_text(coupled_model())
    with pytest.warns(OpenSimImportWarning, match=r"CustomJoint\(s\) '.*' have rotations "
                      r"that share a coordinate.*custom_joint_bias='exact' symbody computes"):
        exact = load_opensim(path, custom_joint_bias="exact")
    with pytest.warns(OpenSimImportWarning, match=r"and so does this model, to give OpenSim's "
                      r"numbers.*custom_joint_bias='exact'"):
        simbody = load_opensim(path)
    assert simbody.custom_joint_bias == "simbody"
    assert exact.simbody_bias_joints == simbody.simbody_bias_joints and exact.simbody_bias_joints
    kane = sb.compile(exact.system_eom(), constants=list(exact.constants))
    q, u = np.array([0.7]), np.array([1.3])
    x = np.concatenate([q, u])
    ours = exact.numeric_model.rhs(0.0, x, exact.numeric_model.constants_array(exact.constants))
    assert abs(ours[1] - kane.rhs(0.0, x, kane.constants_array(exact.constants))[1]) \
        < 1e-12 * abs(ours[1])
    sol = sb.simulate(exact.numeric_model, (0.0, 0.5), x, exact.constants,
                      solver=sb.Solver(rtol=1e-10, atol=1e-10))
    Q0, U0 = exact.to_opensim_state(q, u)
    queries = [{"kind": "terms", "Q": Q0.tolist(), "U": U0.tolist()},
               {"kind": "integrate", "Q": Q0.tolist(), "U": U0.tolist(), "t": 0.5,
                "accuracy": 1e-10}]
    for qi, ui in zip(sol.q[::10], sol.u[::10]):
        Q, U = exact.to_opensim_state(qi, ui)
        queries.append({"kind": "energy", "Q": Q.tolist(), "U": U.tolist()})
    terms, run, *energies = ask_opensim(path, queries)
    ref = terms_in_our_order(exact, terms)
    assert abs(ours[1] - ref["udot"][0]) > 1e-3 * abs(ours[1])       # OpenSim differs
    _, g_full = simbody.dynamic_terms(q, u)
    _, g_static = simbody.dynamic_terms(q, np.zeros(1))
    assert _relative(g_full - g_static, ref["velocity"]) < 1e-12
    assert np.ptp(energies) < 1e-7 * abs(energies[0])                # ours: conserved
    assert abs(run["energy"] - energies[0]) > 1e-2 * abs(energies[0])  # OpenSim's: not


def test_usual_custom_joints_do_not_warn_of_simbody_bias():
    """gait10dof18musc's CustomJoints (each rotation a function of its own coordinate; the
    knee's translations splines of the knee angle) agree with Simbody: no warning, no joint
    named.  A planted bias flag on every joint would fail the first assertion."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = load_opensim(DATA / "gait10dof18musc.osim")
    assert model.simbody_bias_joints == ()
    assert not [w for w in caught if "share a coordinate" in str(w.message)]
