"""model.system (SymPy's System: SymPy's joints where they match Simbody's, the others written
out) gives the same equations as model.eom: its Kane's equations, compiled, give the same
state derivative at random states (an independent formation through SymPy's vector algebra)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

import symbody as sb
from symbody.opensim import ForceContribution, OpenSimImportWarning, load_opensim
from symbody.opensim.forces.muscles import MuscleRecord, path_of
from systems.opensim_synthetic import star_model

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"


def _same_rhs(model) -> None:
    other = sb.compile(model.system_eom(), constants=list(model.constants))
    nm = model.numeric_model
    rng = np.random.default_rng(2)
    for _ in range(2):
        q = model.random_coordinates(rng)
        x = np.concatenate([q, rng.uniform(-1, 1, len(model.u_ind))])
        a = nm.rhs(0.0, x, nm.constants_array(model.constants))
        b = other.rhs(0.0, x, other.constants_array(model.constants))
        assert np.abs(a - b).max() < 1e-10 * max(1.0, np.abs(a).max())


def test_system_matches_eom(tmp_path):
    """A Ball joint written out, a slider as SymPy's PrismaticJoint."""
    path = tmp_path / "star.osim"
    path.write_text(star_model(("BallJoint", "SliderJoint")))
    model = load_opensim(path)
    parts = model.system_parts
    assert parts.written_out == ["j0"]
    assert len(parts.system.bodies) == 3             # the ground too
    _same_rhs(model)


def _path_only(element, ctx):
    return ForceContribution(record=MuscleRecord(element.tag, path_of(element, ctx)),
                             left_out="its path only")


def test_system_of_arm26():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OpenSimImportWarning)
        # its Thelen muscles' paths only (model.system holds no muscle forces)
        model = load_opensim(DATA / "arm26.osim", force_builders={"Thelen2003Muscle": _path_only})
    assert len(model.system.loads) == 2             # gravity (the base body has no mass)
    _same_rhs(model)
