"""Muscle forces along wrapped paths against OpenSim 4.6: Arm26's Thelen muscles TRIlat,
TRImed and BRA over the WrapCylinder 'TRI' (and BICshort, unwrapped), with TRIlong and
BIClong (over ellipsoids) removed from the file that both tools load; then the same muscles
as Millard2012EquilibriumMuscles.  At random states
within the coordinate ranges with the elbow at 0.05, 0.6, 1.3 and 2.2 rad (BRA goes over
the cylinder at the first two, TRIlat and TRImed at the last two), q', u', the activations'
and fiber lengths' derivatives agree to 1e-9 (4e-13 here)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from symbody.opensim import load_opensim
from systems.opensim_oracle import (
    ask_opensim,
    muscle_derivative_errors,
    muscle_derivative_queries,
    opensim_installed,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"
needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")
OVER_ELLIPSOIDS = ("TRIlong", "BIClong")


def arm26_without_ellipsoid_muscles(out: Path) -> Path:
    text = (DATA / "arm26.osim").read_text()
    for name in OVER_ELLIPSOIDS:
        text, k = re.subn(rf'\s*<Thelen2003Muscle name="{name}">.*?</Thelen2003Muscle>', "",
                          text, flags=re.S)
        assert k == 1, name
    out.write_text(text)
    return out


@pytest.fixture(scope="module")
def arm26_cylinder(tmp_path_factory):
    path = arm26_without_ellipsoid_muscles(tmp_path_factory.mktemp("wrapforce") / "arm26.osim")
    return path, load_opensim(path)


@needs_opensim
def test_wrapped_thelen_forces_agree_with_opensim(arm26_cylinder):
    path, model = arm26_cylinder
    names = list(model.muscle_names)
    assert names == ["TRIlat", "TRImed", "BICshort", "BRA"] and not model.left_out
    assert {m: model.forces[m].path.wraps for m in names} == {
        "TRIlat": ("TRI",), "TRImed": ("TRI",), "BICshort": (), "BRA": ("TRI",)}
    elbow = model.coordinate_names.index("r_elbow_flex")
    queries, states = muscle_derivative_queries(
        model, np.random.default_rng(5), 4,
        coordinate_values=[{elbow: flex} for flex in (0.05, 0.6, 1.3, 2.2)])
    worst = muscle_derivative_errors(model, states,
                                     ask_opensim(path, queries, without_forces=False))
    assert worst["qdot"] <= 1e-12, worst
    assert max(worst["udot"], worst["adot"], worst["fiber_velocity"]) <= 1e-9, worst


@needs_opensim
def test_wrapped_millard_forces_agree_with_opensim(tmp_path):
    """The same arm with its muscles as Millard2012EquilibriumMuscles (compliant, damped
    tendons, OpenSim's default curves; the Thelen-only curve constants dropped): u' and a' to
    1e-9, fiber velocities within OpenSim's own Newton tolerance (1e-9 l_opt v_max)."""
    from systems.opensim_millard_worker import ask

    text = arm26_without_ellipsoid_muscles(tmp_path / "arm26.osim").read_text()
    text = re.sub(r"\s*<(FmaxTendonStrain|FmaxMuscleStrain|KshapeActive|KshapePassive|Af|Flen)>"
                  r"[^<]*</\1>", "", text.replace("Thelen2003Muscle", "Millard2012EquilibriumMuscle"))
    path = tmp_path / "arm26_millard.osim"
    path.write_text(text)
    model = load_opensim(path)
    names = list(model.muscle_names)
    assert names == ["TRIlat", "TRImed", "BICshort", "BRA"] and not model.left_out
    scale = np.array([el.number("optimal_fiber_length") * el.number("max_contraction_velocity",
                                                                    10.0)
                      for el in model.spec.forces])
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    n, k = len(model.coordinates), len(names)
    elbow = model.coordinate_names.index("r_elbow_flex")
    rng = np.random.default_rng(6)
    queries, states = [], []
    for flex in (0.05, 2.2):            # BRA wraps, then TRIlat and TRImed
        q, u = model.random_coordinates(rng), rng.uniform(-2, 2, n)
        q[elbow] = flex
        a, e = rng.uniform(0.05, 1, k), rng.uniform(0, 1, k)
        Q, U = model.to_opensim_state(q, u)
        queries.append({"kind": "millard", "model": str(path), "Q": Q.tolist(), "U": U.tolist(),
                        "activations": dict(zip(names, a.tolist())),
                        "excitations": dict(zip(names, e.tolist())),
                        "fiber_scale": dict(zip(names, rng.uniform(0.97, 1.03, k).tolist()))})
        states.append((q, u, e))
    for (q, u, e), ans in zip(states, ask(None, queries)):
        xe = model.extra_states_from_opensim(ans["state_values"])
        xdot = nm.rhs(0.0, np.concatenate([q, u, xe]), p, e)
        udot = np.array(ans["udot"])[list(model.simbody_index)]
        adot = np.array([ans["adot"][m] for m in names])
        ldot = np.array([ans["ldot"][m] for m in names])
        ours = xdot[2 * n:].reshape(k, 2)
        assert np.abs(xdot[n:2 * n] - udot).max() <= 1e-9 * np.abs(udot).max()
        assert np.abs(ours[:, 0] - adot).max() <= 1e-9 * np.abs(adot).max()
        assert np.all(np.abs(ours[:, 1] - ldot) <= 1e-9 * scale)
