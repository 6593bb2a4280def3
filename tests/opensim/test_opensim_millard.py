"""Millard2012EquilibriumMuscle with a rigid tendon (symbody.opensim.forces.millard) against
OpenSim 4.6: q', u' and the activations' derivatives at random states within the coordinate
ranges with given activations and excitations, on gait10dof18musc with six of its Millard muscles'
tendons made rigid by OpenSim (``ignore_tendon_compliance``, in the worker); the compliant
tendon (the file as it is) is named as left out."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from symbody.opensim import OpenSimImportWarning, load_opensim
from systems.opensim_oracle import ask_opensim, opensim_installed

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"
#: the muscles kept (all 18 agree as well; fewer keep the test's compile short)
KEEP = ("hamstrings_r", "bifemsh_r", "glut_max_r", "vasti_l", "gastroc_l", "soleus_l")
needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")


@needs_opensim
def test_rigid_tendon_millard_derivatives_agree_with_opensim(tmp_path):
    from systems.opensim_millard_worker import ask
    path = tmp_path / "gait10dof18musc_rigid.osim"
    ask(DATA / "gait10dof18musc.osim", [{"kind": "rigid_model", "out": str(path),
                                         "keep": list(KEEP)}])
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenSimImportWarning)     # nothing is left out
        model = load_opensim(path)
    names = list(model.muscle_names)
    assert names == list(KEEP)
    assert [str(s.func) for s in model.eom.extra_states] == [f"a_{n}" for n in names]
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    n = len(model.coordinates)
    rng = np.random.default_rng(7)
    queries, states = [], []
    for _ in range(3):
        q, u = model.random_coordinates(rng), rng.uniform(-2, 2, n)
        a, e = rng.uniform(0.0, 1, 6), rng.uniform(0.01, 1, 6)
        Q, U = model.to_opensim_state(q, u)
        queries.append({"kind": "derivatives", "Q": Q.tolist(), "U": U.tolist(),
                        "activations": dict(zip(names, a.tolist())),
                        "excitations": dict(zip(names, e.tolist()))})
        states.append((np.concatenate([q, u, a]), e))
    answers = ask_opensim(path, queries, without_forces=False)
    perm = list(model.simbody_index)
    for (x, e), ans in zip(states, answers):
        xdot = nm.rhs(0.0, x, p, e)
        udot = np.array(ans["udot"])[perm]
        adot = np.array([ans["adot"][m] for m in names])
        assert np.abs(xdot[n:2 * n] - udot).max() <= 1e-9 * np.abs(udot).max()
        assert np.abs(xdot[2 * n:] - adot).max() <= 1e-9 * np.abs(adot).max()
        # the muscles' forces matter: half the activations changes u' well beyond round-off
        x_half = x.copy()
        x_half[2 * n:] *= 0.5
        assert np.abs(nm.rhs(0.0, x_half, p, e)[n:2 * n] - udot).max() > 1e-3 * np.abs(udot).max()


def test_compliant_millard_is_left_out_by_name():
    with pytest.warns(OpenSimImportWarning, match="compliant tendon"):
        model = load_opensim(DATA / "gait10dof18musc.osim")
    assert len(model.muscle_names) == 18
    assert sum("compliant tendon" in x.reason for x in model.left_out) == 18
