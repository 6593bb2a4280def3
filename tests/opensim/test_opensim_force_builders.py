"""The force side's plumbing: a builder's generalized forces, inputs and extra states reach
the equations and the compiled model (a first-order actuator on the double pendulum:
tau = F a, a' = (e - a)/T with the excitation e an input)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from sympy.physics.mechanics import dynamicsymbols

from symbody.opensim import ForceContribution, OpenSimImportWarning, load_opensim
from systems.opensim_oracle import ask_opensim, opensim_installed

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"


def actuator_with_activation(element, ctx):
    coordinate = element.text_of("coordinate")
    gain = element.number("optimal_force", 1.0)
    e = dynamicsymbols(f"e_{element.name}")
    a = dynamicsymbols(f"a_{element.name}")
    Q = ctx.coordinate_force(coordinate, gain * 7.0 * ctx.symbol(a))
    return ForceContribution(generalized=Q, specifieds=(e,), extra_states={a: (e - a) / 0.05},
                             record=("activation", coordinate))


def test_builder_contributions_reach_the_compiled_model():
    model = load_opensim(DATA / "double_pendulum.osim",
                         force_builders={"CoordinateActuator": actuator_with_activation})
    assert not model.left_out
    assert model.forces == {"Torq1": ("activation", "q1"), "Torq2": ("activation", "q2")}
    assert [str(s) for s in model.eom.specifieds] == ["e_Torq1(t)", "e_Torq2(t)"]
    assert len(model.eom.extra_states) == 2
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    q, u, act, exc = np.array([0.3, -0.5]), np.array([0.2, 0.4]), np.array([0.6, -0.2]), \
        np.array([1.0, 0.5])
    xdot = nm.rhs(0.0, np.concatenate([q, u, act]), p, exc)
    # u' = M^-1 (tau - C u - g) with tau = 7 a (optimal_force 1), from the passive model
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OpenSimImportWarning)
        passive = load_opensim(DATA / "double_pendulum.osim")
    M, g0 = passive.dynamic_terms(q, u)
    expected_udot = np.linalg.solve(M, 7.0 * act - g0)
    assert np.allclose(xdot[:2], u, rtol=0, atol=1e-14)
    assert np.allclose(xdot[2:4], expected_udot, rtol=1e-12, atol=1e-12)
    assert np.allclose(xdot[4:], (exc - act) / 0.05, rtol=1e-12)


@pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")
def test_builders_place_path_points_where_opensim_does():
    """ctx.point resolves a force component's frame socket (here Arm26's muscle path points)
    to the same ground positions as OpenSim."""
    points: dict = {}

    def path_points(element, ctx):
        for pp in element.walk():
            if pp.tag == "PathPoint":
                points[pp.name] = ctx.point(pp, pp.numbers("location", 3))
        return ForceContribution()

    model = load_opensim(DATA / "arm26.osim", force_builders={"Thelen2003Muscle": path_points})
    assert len(points) > 10
    q = np.array([0.4, 1.1])
    Q = model.to_opensim_state(q)[0]
    ref = ask_opensim(DATA / "arm26.osim", [{"kind": "points", "Q": Q.tolist(),
                                             "names": list(points)}], without_forces=False)[0]
    subs = dict(zip(model.tree_coordinates, Q[list(model.simbody_q_slots)]))
    conv = model.sympy_converter
    for (name, p), want in zip(points.items(), ref):
        ours = np.array([float(conv(e).subs(subs)) for e in p])
        assert np.abs(ours - want).max() < 1e-12, name
