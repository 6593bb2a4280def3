"""Arm26 with all six muscles against OpenSim 4.6: TRIlong's path over three wrap objects
(the cylinders 'TRI' and 'TRIlongglen', the ellipsoid 'TRIlonghh'; OpenSim's passes run in C
and place the path's stations at run time, :mod:`symbody.opensim.forces.multi_wrap`).  At
states with the shoulder where TRIlong wraps over the glenoid and the humeral head and where
it does not, q', u', the activations' and fiber lengths' derivatives agree to 1e-9; a path
over several objects among which a WrapSphere is refused by name."""

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

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"
needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")


@pytest.fixture(scope="module")
def arm26():
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenSimImportWarning)
        model = load_opensim(DATA / "arm26.osim")
    assert not model.left_out and len(model.muscle_names) == 6
    return model


@needs_opensim
def test_full_arm26_derivatives_agree_with_opensim(arm26):
    model = arm26
    rng = np.random.default_rng(7)
    shoulder = [{0: v} for v in (0.2, 1.9, 2.3, 1.0)]
    queries, states = muscle_derivative_queries(model, rng, 4, shoulder)
    on = [model.path_parameters.multi_wrap_paths(q)["TRIlong"][1] for q, _u, _e in states]
    assert any("TRIlonghh" in x and "TRIlongglen" in x for x in on)
    assert any("TRIlongglen" not in x for x in on)
    answers = ask_opensim(DATA / "arm26.osim", queries, without_forces=False)
    worst = muscle_derivative_errors(model, states, answers)
    assert max(worst.values()) <= 1e-9, worst


def test_a_sphere_among_several_wrap_objects_is_refused_by_name(tmp_path):
    text = (DATA / "arm26.osim").read_text()
    i = text.index('<WrapCylinder name="TRIlongglen">')
    j = text.index("</WrapCylinder>", i)
    block = text[i:j + len("</WrapCylinder>")].replace("WrapCylinder", "WrapSphere")
    path = tmp_path / "arm26_sphere.osim"
    path.write_text(text[:i] + block + text[j + len("</WrapCylinder>"):])
    with pytest.warns(OpenSimImportWarning, match=r"TRIlong.*WrapSphere 'TRIlongglen'"):
        model = load_opensim(path)
    assert [x.name for x in model.left_out] == ["TRIlong"]
