"""DeGrooteFregly2016Muscle (rigid tendon, activation dynamics) against OpenSim 4.6: the
state derivatives (q', u', the activations') with given activations and excitations at random
states within the coordinate ranges, on gait10dof18musc with its 18 muscles replaced the
OpenSim way (``DeGrooteFregly2016Muscle.replaceMuscles``, in the OpenSim worker)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from symbody.opensim import OpenSimImportWarning, load_opensim
from systems.opensim_oracle import ask_opensim, opensim_installed

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"
needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")


@pytest.fixture(scope="module")
def degroote_gait(tmp_path_factory):
    out = tmp_path_factory.mktemp("degroote") / "gait10dof18musc_degroote.osim"
    ask_opensim(DATA / "gait10dof18musc.osim", [{"kind": "degroote_model", "out": str(out)}])
    return out


@needs_opensim
def test_degroote_derivatives_agree_with_opensim(degroote_gait):
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenSimImportWarning)     # nothing is left out
        model = load_opensim(degroote_gait)
    names = list(model.muscle_names)
    assert len(names) == 18
    assert [str(s.func) for s in model.eom.specifieds] == [f"e_{n}" for n in names]
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    n = len(model.coordinates)
    rng = np.random.default_rng(5)
    queries, states = [], []
    for _ in range(3):
        q, u = model.random_coordinates(rng), rng.uniform(-2, 2, n)
        a, e = rng.uniform(0.05, 1, 18), rng.uniform(0, 1, 18)
        Q, U = model.to_opensim_state(q, u)
        queries.append({"kind": "derivatives", "Q": Q.tolist(), "U": U.tolist(),
                        "activations": dict(zip(names, a.tolist())),
                        "excitations": dict(zip(names, e.tolist()))})
        states.append((np.concatenate([q, u, a]), e))
    answers = ask_opensim(degroote_gait, queries, without_forces=False)
    perm = list(model.simbody_index)
    for (x, e), ans in zip(states, answers):
        xdot = nm.rhs(0.0, x, p, e)
        udot = np.array(ans["udot"])[perm]
        adot = np.array([ans["adot"][m] for m in names])
        assert np.abs(xdot[n:2 * n] - udot).max() <= 1e-9 * np.abs(udot).max()
        assert np.abs(xdot[2 * n:] - adot).max() <= 1e-9 * np.abs(adot).max()
        assert np.abs(xdot[:n] - x[n:2 * n]).max() == 0.0
        # the muscles' forces matter: half the activations changes u' well beyond round-off
        x_half = x.copy()
        x_half[2 * n:] *= 0.5
        assert np.abs(nm.rhs(0.0, x_half, p, e)[n:2 * n] - udot).max() > 1e-3 * np.abs(udot).max()


@needs_opensim
def test_compliant_tendon_is_left_out_by_name(degroote_gait):
    text = degroote_gait.read_text().replace(
        "<ignore_tendon_compliance>true</ignore_tendon_compliance>",
        "<ignore_tendon_compliance>false</ignore_tendon_compliance>", 1)
    with pytest.warns(OpenSimImportWarning, match="compliant tendon"):
        model = load_opensim(text)
    assert len(model.muscle_names) == 17
    assert any("compliant tendon" in x.reason for x in model.left_out)


@needs_opensim
def test_coordinate_actuators_agree_with_opensim(tmp_path):
    """CoordinateActuators (tau = optimal_force * control) on Arm26's two coordinates."""
    out = tmp_path / "arm26_actuated.osim"
    ask_opensim(DATA / "arm26.osim", [{"kind": "actuated_model", "out": str(out),
                                       "optimal_force": 7.5}])
    model = load_opensim(out)
    assert [str(s.func) for s in model.eom.specifieds] == [
        f"control_act_{c}" for c in model.coordinate_names]
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    rng = np.random.default_rng(2)
    q, u, c = model.random_coordinates(rng), rng.uniform(-2, 2, 2), rng.uniform(-3, 3, 2)
    Q, U = model.to_opensim_state(q, u)
    controls = {f"act_{n}": float(v) for n, v in zip(model.coordinate_names, c)}
    ans = ask_opensim(out, [{"kind": "derivatives", "Q": Q.tolist(), "U": U.tolist(),
                             "activations": {}, "excitations": controls}],
                      without_forces=False)[0]
    udot = np.array(ans["udot"])[list(model.simbody_index)]
    xdot = nm.rhs(0.0, np.concatenate([q, u]), p, c)
    assert np.abs(xdot[2:] - udot).max() <= 1e-9 * np.abs(udot).max()
    assert np.abs(nm.rhs(0.0, np.concatenate([q, u]), p, 0 * c)[2:] - udot).max() > 1e-2


@needs_opensim
def test_without_activation_dynamics_agrees_with_opensim(degroote_gait, tmp_path):
    """ignore_activation_dynamics: the excitation is the activation (no state)."""
    path = tmp_path / "no_activation_dynamics.osim"
    path.write_text(degroote_gait.read_text().replace(
        "<ignore_activation_dynamics>false</ignore_activation_dynamics>",
        "<ignore_activation_dynamics>true</ignore_activation_dynamics>"))
    model = load_opensim(path)
    names = list(model.muscle_names)
    assert model.eom.extra_states == () or not model.eom.extra_states
    nm = model.numeric_model
    rng = np.random.default_rng(8)
    q, u, e = model.random_coordinates(rng), rng.uniform(-2, 2, 10), rng.uniform(0, 1, 18)
    Q, U = model.to_opensim_state(q, u)
    ans = ask_opensim(path, [{"kind": "derivatives", "Q": Q.tolist(), "U": U.tolist(),
                              "activations": {}, "excitations": dict(zip(names, e.tolist()))}],
                      without_forces=False)[0]
    udot = np.array(ans["udot"])[list(model.simbody_index)]
    xdot = nm.rhs(0.0, np.concatenate([q, u]), nm.constants_array(model.constants), e)
    assert np.abs(xdot[10:] - udot).max() <= 1e-9 * np.abs(udot).max()
