"""load_opensim against OpenSim 4.6 on models of opensim-models (tests/data/opensim): M(q)
(SimbodyMatterSubsystem.calcM), the generalized forces of gravity and of the velocity terms,
q' and u' with the forces removed on both sides, marker positions, at random states within
the coordinate ranges; the 4.x format and the older ones OpenSim upgrades.  OpenSim answers
in a process of its own (systems/opensim_worker.py)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from symbody.opensim import ForceContribution, OpenSimImportWarning, load_opensim
from symbody.opensim.forces.muscles import MuscleRecord, path_of
from systems.opensim_oracle import opensim_installed, opensim_terms_of

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"
needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")


def _relative(a, b) -> float:
    return float(np.abs(np.asarray(a) - b).max() / max(np.abs(b).max(), 1e-300))


def _load(name: str, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OpenSimImportWarning)
        return load_opensim(DATA / name, **kw)


def _path_only(element, ctx):
    """A muscle's path without its force (OpenSim's side is compared without forces)."""
    return ForceContribution(record=MuscleRecord(element.tag, path_of(element, ctx)),
                             left_out="not built here: compared without forces")


@needs_opensim
@pytest.mark.parametrize("name", ["double_pendulum.osim", "arm26.osim", "gait10dof18musc.osim",
                                  "double_pendulum_30501.osim", "double_pendulum_20302.osim",
                                  "single_pin_10902.osim", "double_pendulum_3d_20200.osim"])
def test_terms_agree_with_opensim(name):
    model = _load(name, force_builders={"Thelen2003Muscle": _path_only,
                                        "Millard2012EquilibriumMuscle": _path_only})
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    rng = np.random.default_rng(7)
    states = [(model.random_coordinates(rng), rng.uniform(-2, 2, len(model.coordinates)))
              for _ in range(3)]
    refs = opensim_terms_of(model, DATA / name, states, markers=bool(model.markers))
    for (q, u), ref in zip(states, refs):
        M, g_full = model.dynamic_terms(q, u)
        _, g_static = model.dynamic_terms(q, np.zeros_like(u))
        assert _relative(M, ref["M"]) < 1e-9
        assert _relative(-g_static, ref["gravity"]) < 1e-9
        # a single pin has no velocity terms: OpenSim's round-off (~1e-17) against our 0
        scale = max(np.abs(ref["velocity"]).max(), np.abs(ref["gravity"]).max(), 1e-300)
        assert np.abs(g_full - g_static - ref["velocity"]).max() < 1e-9 * scale
        xdot = nm.rhs(0.0, np.concatenate([q, u]), p, np.zeros(len(model.eom.specifieds)))
        assert _relative(xdot[:len(q)], ref["qdot"]) < 1e-9
        assert _relative(xdot[len(q):], ref["udot"]) < 1e-9
        if model.markers:
            assert np.abs(model.marker_positions(q) - ref["markers"]).max() < 1e-12


def test_formats_load_the_same_model():
    """The 4.x, 30501 and 20302 double pendulums are one model (up to the files' digits)."""
    a = _load("double_pendulum.osim")
    q = np.array([0.3, -0.4])
    for other in ("double_pendulum_30501.osim", "double_pendulum_20302.osim"):
        b = _load(other)
        assert b.coordinate_names == a.coordinate_names
        assert b.mass_matrix(q).shape == (2, 2)


def test_unsupported_forces_are_named(tmp_path):
    """A path over a WrapTorus (here Arm26's TRIlong with its ellipsoid as a torus)."""
    text = (DATA / "arm26.osim").read_text()
    i = text.index('<WrapEllipsoid name="TRIlonghh">')
    j = text.index("</WrapEllipsoid>", i) + len("</WrapEllipsoid>")
    path = tmp_path / "arm26_torus.osim"
    path.write_text(text[:i] + text[i:j].replace("WrapEllipsoid", "WrapTorus") + text[j:])
    with pytest.warns(OpenSimImportWarning, match=r"Thelen2003Muscle 'TRIlong' \(line \d+\)"):
        model = load_opensim(path)
    left_out = {x.name for x in model.left_out}
    assert left_out == {"TRIlong"}
    with pytest.raises(Exception, match=r"not supported.*Thelen2003Muscle 'TRIlong' \(line \d+\)"):
        load_opensim(path, unsupported="error")
