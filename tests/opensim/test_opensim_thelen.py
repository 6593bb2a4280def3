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
from systems.opensim_oracle import (
    ask_opensim,
    muscle_derivative_errors,
    muscle_derivative_queries,
    opensim_installed,
)
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
    queries, states = muscle_derivative_queries(model, np.random.default_rng(3), 3)
    answers = ask_opensim(path, queries, without_forces=False)
    for ans in answers:
        z = model.extra_states_from_opensim(ans["states"])
        assert model.extra_states_to_opensim(z) == {
            f"/forceset/{m}/{w}": ans["states"][f"/forceset/{m}/{w}"]
            for m in names for w in ("activation", "fiber_length")}
    worst = muscle_derivative_errors(model, states, answers)
    assert worst["qdot"] <= 1e-12, worst
    assert max(worst["udot"], worst["adot"], worst["fiber_velocity"]) <= 1e-9, worst
