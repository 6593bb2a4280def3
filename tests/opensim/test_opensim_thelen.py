"""Thelen2003Muscle (compliant tendon, activation dynamics) against OpenSim 4.6: q', u', the
activations' and fiber lengths' derivatives at random states within the coordinate ranges,
fiber lengths within 3 % of OpenSim's equilibrium, given excitations.  The model:
gait10dof18musc with its 18 muscles rewritten as Thelen2003Muscles (an XML transform,
:mod:`systems.thelen_transform`; three of them pennated), so that OpenSim, loading the same
file, is the oracle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from symbody.opensim import load_opensim
from systems.opensim_oracle import ask_opensim, opensim_installed
from systems.thelen_transform import thelen_model

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"
needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")
PENNATED = {"glut_max_r": 0.2, "soleus_l": 0.3, "vasti_r": 0.1}


@pytest.fixture(scope="module")
def thelen_gait(tmp_path_factory):
    out = thelen_model(DATA / "gait10dof18musc.osim",
                       tmp_path_factory.mktemp("thelen") / "gait_thelen.osim", PENNATED)
    return out, load_opensim(out)


@needs_opensim
def test_thelen_derivatives_agree_with_opensim(thelen_gait):
    path, model = thelen_gait
    names = list(model.muscle_names)
    assert len(names) == 18 and not model.left_out
    assert [str(x.func) for x in model.eom.extra_states] == [
        f"{m}.{w}" for m in names for w in ("activation", "fiber_length")]
    # the derivatives stay in symengine until asked for in SymPy
    assert model.eom.symengine_extra_derivatives() is not None
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    n, k = len(model.coordinates), len(names)
    rng = np.random.default_rng(3)
    queries, states = [], []
    for _ in range(3):
        q, u = model.random_coordinates(rng), rng.uniform(-2, 2, n)
        a, e, c = rng.uniform(0.01, 1, k), rng.uniform(0.01, 1, k), rng.uniform(0.97, 1.03, k)
        Q, U = model.to_opensim_state(q, u)
        queries.append({"kind": "muscle_derivatives", "Q": Q.tolist(), "U": U.tolist(),
                        "activations": dict(zip(names, a.tolist())),
                        "excitations": dict(zip(names, e.tolist())),
                        "fiber_length_factors": dict(zip(names, c.tolist()))})
        states.append((q, u, e))
    answers = ask_opensim(path, queries, without_forces=False)
    for (q, u, e), ans in zip(states, answers):
        z = model.extra_states_from_opensim(ans["states"])
        zdot = model.extra_states_from_opensim(ans["derivatives"])
        assert model.extra_states_to_opensim(z) == {
            f"/forceset/{m}/{w}": ans["states"][f"/forceset/{m}/{w}"]
            for m in names for w in ("activation", "fiber_length")}
        x = np.concatenate([q, u, z])
        xdot = nm.rhs(0.0, x, p, e)
        qdot = np.array(ans["qdot"])[list(model.simbody_q_slots)][list(model.simbody_index)]
        udot = np.array(ans["udot"])[list(model.simbody_index)]
        assert np.abs(xdot[:n] - qdot).max() <= 1e-12 * np.abs(qdot).max()
        assert np.abs(xdot[n:2 * n] - udot).max() <= 1e-9 * np.abs(udot).max()
        for j in (0, 1):             # activations', fiber velocities
            ref = zdot[j::2]
            assert np.abs(xdot[2 * n + j::2] - ref).max() <= 1e-9 * np.abs(ref).max()
