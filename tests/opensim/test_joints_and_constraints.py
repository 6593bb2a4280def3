"""Every joint type, function type and constraint of the importer against OpenSim 4.6, on a
synthetic model (tests/systems/opensim_synthetic.py): Free, Ball, Gimbal, Universal,
CustomJoint (Linear, Polynomial, Constant, SimmSpline, Multiplier, PiecewiseLinear
functions), Pin, Slider, Weld, Planar; coupler, point and weld constraints, locked and
prescribed coordinates."""

from __future__ import annotations

import numpy as np
import pytest

from symbody.opensim import load_opensim

osim = pytest.importorskip("opensim")
from systems.opensim_oracle import (  # noqa: E402
    opensim_markers,
    opensim_model,
    opensim_terms,
)
from systems.opensim_synthetic import synthetic_model  # noqa: E402


def _relative(a, b) -> float:
    return float(np.abs(np.asarray(a) - b).max() / max(np.abs(b).max(), 1e-300))


@pytest.fixture(scope="module")
def free_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("osim") / "synthetic.osim"
    path.write_text(synthetic_model())
    return path, load_opensim(path)


@pytest.fixture(scope="module")
def constrained_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("osim") / "synthetic_constrained.osim"
    path.write_text(synthetic_model(constraints=True))
    return path, load_opensim(path)


def test_every_joint_type_agrees(free_model):
    path, model = free_model
    m, s = opensim_model(osim, path)
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    rng = np.random.default_rng(3)
    n = len(model.coordinates)
    for _ in range(3):
        q = model.random_coordinates(rng)
        u = rng.uniform(-2, 2, n)
        ref = opensim_terms(osim, model, m, s, q, u)
        M, g_full = model.dynamic_terms(q, u)
        _, g_static = model.dynamic_terms(q, np.zeros(n))
        assert _relative(M, ref["M"]) < 1e-9
        assert _relative(-g_static, ref["gravity"]) < 1e-9
        assert _relative(g_full - g_static, ref["velocity"]) < 1e-9
        xdot = nm.rhs(0.0, np.concatenate([q, u]), p)
        assert _relative(xdot[:n], ref["qdot"]) < 1e-9      # Ball and Free: q' = N(q) u
        assert _relative(xdot[n:], ref["udot"]) < 1e-9
        assert np.abs(model.marker_positions(q) - opensim_markers(osim, model, m, s, q)).max() \
            < 1e-12


def test_state_maps_round_trip(free_model):
    path, model = free_model
    rng = np.random.default_rng(0)
    q = model.random_coordinates(rng)
    u = rng.uniform(-1, 1, len(q))
    Q, U = model.to_opensim_state(q, u)
    assert Q.size == model.simbody_nq == len(q) + 2     # Free and Ball keep a 4th slot
    q2, u2 = model.from_opensim_state(Q, U)
    assert np.array_equal(q2, q) and np.array_equal(u2, u)
    # an OpenSim State, read through its getQ/getU, by coordinate name
    m, s = opensim_model(osim, path)
    opensim_terms(osim, model, m, s, q, u)
    q3, u3 = model.from_opensim_state(s)
    assert np.array_equal(q3, q) and np.array_equal(u3, u)
    cs = m.getCoordinateSet()
    for i, name in enumerate(model.coordinate_names):
        assert cs.get(name).getValue(s) == q[i] and cs.get(name).getSpeedValue(s) == u[i]


def test_constraints_agree(constrained_model):
    """At states on the constraints (q_dep by our projection, dependent speeds from B u = -b),
    OpenSim's u' (its own constraint equations) equals ours."""
    path, model = constrained_model
    assert {str(s)[2:-3] for s in model.q_dep} >= {"lock", "presc", "slide"}
    assert len(model.q_dep) == 12        # locked, prescribed, coupler, point (3), weld (6)
    m, s = opensim_model(osim, path)
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    rng = np.random.default_rng(5)
    for _ in range(2):
        q, ok, _ = nm.project_coordinates(0.3 * model.random_coordinates(rng), p)
        assert ok
        u = nm.full_speeds(q, rng.uniform(-1, 1, len(model.u_ind)), p)
        ref = opensim_terms(osim, model, m, s, q, u)
        assert _relative(model.mass_matrix(q), ref["M"]) < 1e-9
        udot, _ = nm.accelerations(q, u, p)
        assert _relative(udot, ref["udot"]) < 1e-9


def test_coupled_custom_joint_velocity_terms(tmp_path):
    """A CustomJoint whose rotations share one coordinate: our velocity terms are exact (the
    equations of SymPy's Kane's method on model.system, energy conserved); OpenSim 4.6's
    differ by Simbody's approximation of the FunctionBased mobilizer's Ḣ, which
    custom_joint_bias="simbody" reproduces."""
    import symbody as sb
    from systems.opensim_synthetic import coupled_model

    path = tmp_path / "coupled.osim"
    path.write_text(coupled_model())
    exact = load_opensim(path)
    simbody = load_opensim(path, custom_joint_bias="simbody")
    m, s = opensim_model(osim, path)
    kane = sb.compile(exact.system_eom(), constants=list(exact.constants))
    q, u = np.array([0.7]), np.array([1.3])
    ref = opensim_terms(osim, exact, m, s, q, u)
    x = np.concatenate([q, u])
    ours = exact.numeric_model.rhs(0.0, x, exact.numeric_model.constants_array(exact.constants))
    theirs_kane = kane.rhs(0.0, x, kane.constants_array(exact.constants))
    assert abs(ours[1] - theirs_kane[1]) < 1e-12 * abs(ours[1])
    assert abs(ours[1] - ref["udot"][0]) > 1e-3 * abs(ours[1])       # OpenSim differs
    _, g_full = simbody.dynamic_terms(q, u)
    _, g_static = simbody.dynamic_terms(q, np.zeros(1))
    assert _relative(g_full - g_static, ref["velocity"]) < 1e-12
    # energy: conserved by the exact equations over 0.5 s
    sol = sb.simulate(exact.numeric_model, (0.0, 0.5), x, exact.constants,
                      solver=sb.Solver(rtol=1e-10, atol=1e-10))
    energies = []
    for qi, ui in zip(sol.q[::10], sol.u[::10]):
        Q, U = exact.to_opensim_state(qi, ui)
        for i, v in enumerate(Q):
            s.updQ().set(i, float(v))
        for i, v in enumerate(U):
            s.updU().set(i, float(v))
        m.realizeVelocity(s)
        energies.append(m.calcKineticEnergy(s) + m.calcPotentialEnergy(s))
    assert np.ptp(energies) < 1e-7 * abs(energies[0])
