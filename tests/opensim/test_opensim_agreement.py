"""load_opensim against OpenSim 4.6 on models of opensim-models (tests/data/opensim): M(q)
(SimbodyMatterSubsystem.calcM), the generalized forces of gravity and of the velocity terms,
q' and u' with the forces removed on both sides, marker positions, at random states within
the coordinate ranges; the 4.x format and the older ones OpenSim upgrades."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from symbody.opensim import OpenSimImportWarning, load_opensim

osim = pytest.importorskip("opensim")
from systems.opensim_oracle import (  # noqa: E402
    opensim_markers,
    opensim_model,
    opensim_terms,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"


def _relative(a, b) -> float:
    return float(np.abs(np.asarray(a) - b).max() / max(np.abs(b).max(), 1e-300))


def _load(name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OpenSimImportWarning)
        return load_opensim(DATA / name)


@pytest.mark.parametrize("name", ["double_pendulum.osim", "arm26.osim", "gait10dof18musc.osim",
                                  "double_pendulum_30501.osim", "double_pendulum_20302.osim"])
def test_terms_agree_with_opensim(name):
    model = _load(name)
    m, s = opensim_model(osim, DATA / name)
    rng = np.random.default_rng(7)
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    for _ in range(3):
        q = model.random_coordinates(rng)
        u = rng.uniform(-2, 2, len(q))
        ref = opensim_terms(osim, model, m, s, q, u)
        M, g_full = model.dynamic_terms(q, u)
        _, g_static = model.dynamic_terms(q, np.zeros_like(u))
        assert _relative(M, ref["M"]) < 1e-9
        assert _relative(-g_static, ref["gravity"]) < 1e-9
        assert _relative(g_full - g_static, ref["velocity"]) < 1e-9
        xdot = nm.rhs(0.0, np.concatenate([q, u]), p)
        assert _relative(xdot[:len(q)], ref["qdot"]) < 1e-9
        assert _relative(xdot[len(q):], ref["udot"]) < 1e-9
        if model.markers:
            assert np.abs(model.marker_positions(q) - opensim_markers(osim, model, m, s, q)).max() \
                < 1e-12


def test_formats_load_the_same_model():
    """The 4.x, 30501 and 20302 double pendulums are one model (up to the files' digits)."""
    a = _load("double_pendulum.osim")
    for other in ("double_pendulum_30501.osim", "double_pendulum_20302.osim"):
        b = _load(other)
        assert b.coordinate_names == a.coordinate_names


def test_unsupported_forces_are_named():
    with pytest.warns(OpenSimImportWarning, match=r"Thelen2003Muscle 'TRIlong' \(line \d+\)"):
        model = load_opensim(DATA / "arm26.osim")
    assert {x.name for x in model.left_out} >= {"TRIlong", "BIClong", "BRA"}
    with pytest.raises(Exception, match=r"not supported.*Thelen2003Muscle 'TRIlong' \(line \d+\)"):
        load_opensim(DATA / "arm26.osim", unsupported="error")
