"""Markers as simulation outputs: ``simulate(..., outputs=model.marker_outputs())`` on Arm26
(its three markers; the muscles taken out: a double pendulum under gravity) gives, at samples
of the trajectory, the markers' positions that OpenSim 4.6 computes at those states
(``Marker.getLocationInGround``) to 1e-12 m, and those of ``marker_positions``."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import symbody as sb
from symbody.opensim import OpenSimImportWarning, load_opensim
from systems.opensim_oracle import ask_opensim, opensim_installed

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"
needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")


@needs_opensim
def test_marker_outputs_agree_with_opensim(tmp_path):
    text = re.sub(r"<Thelen2003Muscle name=.*?</Thelen2003Muscle>\s*", "",
                  (DATA / "arm26.osim").read_text(), flags=re.S)
    path = tmp_path / "arm26_no_muscles.osim"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenSimImportWarning)       # nothing is left out
        arm = load_opensim(path)
    names = list(arm.markers)
    assert len(names) == 3
    x0 = np.array([0.3, 1.2, 0.5, -1.0])
    sol = sb.simulate(arm.numeric_model, (0.0, 0.3), x0, arm.constants,
                      outputs=arm.marker_outputs())
    assert sol.success
    picks = [0, len(sol.t) // 2, len(sol.t) - 1]
    qs = [np.asarray(sol.q[k], dtype=float) for k in picks]
    answers = ask_opensim(path, [{"kind": "markers", "Q": arm.to_opensim_state(q)[0].tolist(),
                                  "names": names} for q in qs])
    for k, q, ans in zip(picks, qs, answers):
        ours = np.array([[sol.outputs[f"{n}.{a}"][k] for a in "xyz"] for n in names])
        assert np.abs(ours - np.array(ans)).max() < 1e-12
        assert np.abs(ours - arm.marker_positions(q)).max() < 1e-12
    # the markers moved: the samples are different states
    assert np.abs(np.diff([sol.outputs[f"{names[-1]}.y"][k] for k in picks])).min() > 1e-3
