"""Muscle paths against OpenSim 4.6: musculotendon lengths (``getLength``) and moment arms
(``computeMomentArm``) at random states within the coordinate ranges, on gait10dof18musc
(fixed, conditional and moving path points) and Arm26 (TRIlat, TRImed and BRA wrap over the
cylinder 'TRI', BIClong over the ellipsoid 'BIClonghh' through stations placed at run time,
TRIlong over three wrap objects likewise).  OpenSim answers in a process of its
own (systems/opensim_worker.py)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from symbody.opensim import OpenSimImportWarning, load_opensim
from systems.opensim_oracle import ask_opensim, opensim_installed

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"
needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")


def _load(name):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", OpenSimImportWarning)
        model = load_opensim(DATA / name)
    return model, " ".join(str(w.message) for w in caught)


def _compare(name, n_states: int):
    model, _ = _load(name)
    rng = np.random.default_rng(11)
    qs = np.array([model.random_coordinates(rng) for _ in range(n_states)])
    queries = [{"kind": "muscles", "Q": model.to_opensim_state(q)[0].tolist(),
                "names": list(model.muscle_names), "coordinates": list(model.coordinate_names)}
               for q in qs]
    answers = ask_opensim(DATA / name, queries, without_forces=False)
    L = model.musculotendon_lengths(qs)
    A = model.moment_arms(qs)
    assert L.shape == (n_states, len(model.muscle_names))
    assert A.shape == (n_states, len(model.muscle_names), len(model.coordinates))
    for k, ans in enumerate(answers):
        L_os, A_os = np.array(ans["lengths"]), np.array(ans["moment_arms"])
        np.testing.assert_allclose(L[k], L_os, rtol=1e-9, atol=0)
        scale = np.abs(A_os).max()
        assert np.abs(A[k] - A_os).max() <= 1e-9 * scale
        np.testing.assert_allclose(model.moment_arms(qs[k]), A[k], rtol=0, atol=0)
    return model, qs


@needs_opensim
def test_gait10dof18musc_paths_agree_with_opensim():
    """Conditional (hamstrings, rect_fem, ...) and moving path points (the knee's), 18
    muscles x 10 coordinates."""
    _compare("gait10dof18musc.osim", 5)


@needs_opensim
def test_arm26_paths_agree_with_opensim():
    """Three paths over the WrapCylinder 'TRI', BIClong's over the WrapEllipsoid
    'BIClonghh' (wrapping at most of the states, straight at the others: both are checked),
    BICshort's, and TRIlong's over three wrap objects (the cylinders 'TRI', 'TRIlongglen'
    and the ellipsoid 'TRIlonghh', OpenSim's passes in C: :mod:`.multi_wrap`), each
    wrapping at some of the states and not at others."""
    model, message = _load("arm26.osim")
    assert "TRIlong" not in message and not model.left_out
    assert model.muscle_names == ("TRIlong", "TRIlat", "TRImed", "BIClong", "BICshort", "BRA")
    assert model.forces["BIClong"].path.wraps == ("BIClonghh",)
    assert model.forces["TRIlong"].path.wraps == ("TRI", "TRIlonghh", "TRIlongglen")
    _, qs = _compare("arm26.osim", 40)
    s = np.array([model.path_parameters.values(q)[6] for q in qs])
    assert (s > 0).sum() >= 20 and (s == 0).sum() >= 5
    on = [model.path_parameters.multi_wrap_paths(q)["TRIlong"][1] for q in qs]
    for name in ("TRI", "TRIlonghh", "TRIlongglen"):
        n = sum(name in names for names in on)
        assert 5 <= n <= 35, (name, n)
    assert any(len(names) == 3 for names in on) and any(not names for names in on)


def _quadrant_and_sphere_variant(tmp_path) -> Path:
    """Arm26 with the cylinder 'TRI' wrapping on its -y side only (radius 0.025) and BRA
    over a new WrapSphere (radius 0.016, -y side) in TRI's place."""
    text = (DATA / "arm26.osim").read_text()
    i = text.index('<WrapCylinder name="TRI">')
    j = text.index("</WrapCylinder>", i) + len("</WrapCylinder>")
    cyl = text[i:j].replace("<quadrant>all</quadrant>", "<quadrant>-y</quadrant>")
    cyl = cyl.replace("<radius>0.016</radius>", "<radius>0.025</radius>")
    sphere = re.sub(r"<length>.*?</length>", "", text[i:j]).replace("WrapCylinder", "WrapSphere")
    sphere = sphere.replace('name="TRI"', 'name="BRAsphere"').replace(
        "<quadrant>all</quadrant>", "<quadrant>-y</quadrant>")
    text = text[:i] + cyl + sphere + text[j:]
    k = text.index('<Thelen2003Muscle name="BRA">')
    k = text.index("<wrap_object>TRI</wrap_object>", k)
    text = text[:k] + "<wrap_object>BRAsphere</wrap_object>" + text[k + 30:]
    path = tmp_path / "arm26_wrap_variant.osim"
    path.write_text(text)
    return path


@needs_opensim
def test_quadrants_and_spheres_agree_with_opensim(tmp_path):
    """A constrained cylinder (OpenSim's quadrant: r1/r2 choice, far-side and long wraps)
    (TRIlong's too, among its three wrap objects) and a sphere with a quadrant; at these
    states TRIlat and TRImed wrap the cylinder at
    every state and BRA the sphere at about half (a script comparing with the paths stripped
    of their wraps)."""
    model, _ = _compare(_quadrant_and_sphere_variant(tmp_path), 30)
    assert model.muscle_names == ("TRIlong", "TRIlat", "TRImed", "BIClong", "BICshort", "BRA")


def test_muscle_views_check_their_argument():
    model, _ = _load("gait10dof18musc.osim")
    with pytest.raises(Exception, match="coordinates"):
        model.moment_arms(np.zeros(3))
