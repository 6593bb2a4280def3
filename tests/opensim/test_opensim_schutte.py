"""Schutte1993Muscle_Deprecated (compliant tendon, Schutte's activation and damped
force-velocity) against OpenSim 4.6: q', u', the activations' and fiber lengths' derivatives
at random states within the coordinate ranges, fiber lengths within 3 % of OpenSim's
equilibrium, given excitations, and the tendon forces.  The model: arm26 with its 6 muscles
rewritten as Schutte1993Muscle_Deprecated (:mod:`systems.schutte_transform`): one pennated,
one with OpenSim's default (exponential) passive curve, one with no curves (OpenSim's default
splines), non-default time_scale, damping and
activation constants; OpenSim, loading the same file, is the oracle."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from symbody.opensim import OpenSimImportWarning, load_opensim
from systems.opensim_oracle import (
    ask_opensim,
    muscle_derivative_errors,
    muscle_derivative_queries,
    opensim_installed,
)
from systems.schutte_transform import schutte_model

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"
needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")
SETTINGS = {"BIClong": {"pennation_angle_at_optimal": 0.3, "damping": 0.05, "time_scale": 0.2},
            "TRIlong": {"activation1": 5.0, "activation2": 2.0}}


@pytest.fixture(scope="module")
def schutte_arm(tmp_path_factory):
    out = schutte_model(DATA / "arm26.osim", tmp_path_factory.mktemp("schutte") / "arm.osim",
                        SETTINGS, no_passive_curve=("BRA",), no_curves=("TRImed",))
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenSimImportWarning)     # nothing is left out
        return out, load_opensim(out)


@needs_opensim
def test_schutte_derivatives_and_forces_agree_with_opensim(schutte_arm):
    path, model = schutte_arm
    names = list(model.muscle_names)
    assert len(names) == 6 and not model.left_out
    assert [str(x.func) for x in model.eom.extra_states] == [
        f"{m}.{w}" for m in names for w in ("activation", "fiber_length")]
    queries, states = muscle_derivative_queries(model, np.random.default_rng(3), 4)
    answers = ask_opensim(path, queries, without_forces=False)
    for ans in answers:
        z = model.extra_states_from_opensim(ans["states"])
        assert model.extra_states_to_opensim(z) == {
            f"/forceset/{m}/{w}": ans["states"][f"/forceset/{m}/{w}"]
            for m in names for w in ("activation", "fiber_length")}
    worst = muscle_derivative_errors(model, states, answers)
    assert worst["qdot"] <= 1e-12, worst
    assert max(worst["udot"], worst["adot"], worst["fiber_velocity"]) <= 1e-9, worst
    # the fiber states matter: moving every fiber length by 1 % changes the fiber velocities
    # far beyond the tolerance (a wrong curve or branch would show)
    worst_off = muscle_derivative_errors(model, states, [_scaled(a, names, 1.01)
                                                           for a in answers])
    assert worst_off["fiber_velocity"] > 1e-3, worst_off


def _scaled(ans: dict, names: list, c: float) -> dict:
    states = dict(ans["states"])
    for m in names:
        states[f"/forceset/{m}/fiber_length"] *= c
    return dict(ans, states=states)
