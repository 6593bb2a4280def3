"""Moment arms on coordinates coupled by CoordinateCouplerConstraints against OpenSim 4.6's
``computeMomentArm`` (its MomentArmSolver lets the coupled coordinates follow the one of
interest), on gait10dof18musc with two couplers added: the right ankle a spline of the right
knee angle (gastrocnemius, soleus and tibialis anterior cross both), the left knee a linear
function of the left hip flexion (hamstrings, rectus femoris), and the left ankle locked.
OpenSim answers in a process of its own (systems/opensim_worker.py)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from symbody.opensim import OpenSimImportWarning, load_opensim
from systems.opensim_oracle import ask_opensim, opensim_installed

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"
needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")

COUPLERS = """<objects>
  <CoordinateCouplerConstraint name="ankle_follows_knee_r">
    <isEnforced>true</isEnforced>
    <coupled_coordinates_function>
      <SimmSpline name="f">
        <x>-2.0944 -1.5 -1 -0.5 0 0.17453</x>
        <y>0.4 0.25 0.3 0.1 -0.05 -0.1</y>
      </SimmSpline>
    </coupled_coordinates_function>
    <independent_coordinate_names>knee_angle_r</independent_coordinate_names>
    <dependent_coordinate_name>ankle_angle_r</dependent_coordinate_name>
    <scale_factor>0.9</scale_factor>
  </CoordinateCouplerConstraint>
  <CoordinateCouplerConstraint name="knee_follows_hip_l">
    <isEnforced>true</isEnforced>
    <coupled_coordinates_function>
      <LinearFunction name="g"><coefficients>-0.8 -0.1</coefficients></LinearFunction>
    </coupled_coordinates_function>
    <independent_coordinate_names>hip_flexion_l</independent_coordinate_names>
    <dependent_coordinate_name>knee_angle_l</dependent_coordinate_name>
    <scale_factor>1</scale_factor>
  </CoordinateCouplerConstraint>
</objects>"""


@pytest.fixture(scope="module")
def coupled_model(tmp_path_factory):
    text = (DATA / "gait10dof18musc.osim").read_text()
    i = text.index('<ConstraintSet name="constraintset">')
    j = text.index("<objects />", i)
    text = text[:j] + COUPLERS + text[j + len("<objects />"):]
    k = text.index('<Coordinate name="ankle_angle_l">')
    k = text.index("<locked>false</locked>", k)
    text = text[:k] + "<locked>true</locked>" + text[k + len("<locked>false</locked>"):]
    path = tmp_path_factory.mktemp("coupled") / "gait10dof18musc_coupled.osim"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OpenSimImportWarning)
        model = load_opensim(path)
    return path, model


@needs_opensim
def test_coupled_moment_arms_agree_with_opensim(coupled_model):
    path, model = coupled_model
    assert set(model.q_dep) == {model.coordinates[model.coordinate_names.index(n)]
                                for n in ("ankle_angle_r", "knee_angle_l", "ankle_angle_l")}
    rng = np.random.default_rng(5)
    qs = np.array([model.random_coordinates(rng) for _ in range(4)])
    queries = [{"kind": "muscles", "Q": model.to_opensim_state(q)[0].tolist(),
                "names": list(model.muscle_names), "coordinates": list(model.coordinate_names)}
               for q in qs]
    answers = ask_opensim(path, queries, without_forces=False)
    A = model.moment_arms(qs)
    names = list(model.coordinate_names)
    knee_r, ankle_r = names.index("knee_angle_r"), names.index("ankle_angle_r")
    for k, ans in enumerate(answers):
        A_os = np.array(ans["moment_arms"])
        scale = np.abs(A_os).max()
        assert np.abs(A[k] - A_os).max() <= 1e-9 * scale
        # the coupling matters: the partial derivative about the knee differs from OpenSim's
        partial = model._paths_at(qs[k])[:, 1:]
        gas = model.muscle_names.index("gastroc_r")
        assert abs(partial[gas, knee_r] - A_os[gas, knee_r]) > 1e-3 * scale
        C = model.coupling_matrix(qs[k])
        assert C[knee_r, knee_r] == 1.0 and C[ankle_r, ankle_r] == 1.0
        np.testing.assert_allclose(C[knee_r, ankle_r] * C[ankle_r, knee_r], 1.0, rtol=1e-12)


FLAT = """<objects>
  <CoordinateCouplerConstraint name="ankle_barely_follows_knee_r">
    <isEnforced>true</isEnforced>
    <coupled_coordinates_function>
      <LinearFunction name="f"><coefficients>1e-7 0.05</coefficients></LinearFunction>
    </coupled_coordinates_function>
    <independent_coordinate_names>knee_angle_r</independent_coordinate_names>
    <dependent_coordinate_name>ankle_angle_r</dependent_coordinate_name>
    <scale_factor>1</scale_factor>
  </CoordinateCouplerConstraint>
</objects>"""


def test_a_nearly_flat_coupler_gives_finite_moment_arms(tmp_path):
    """A coupler that barely moves its dependent coordinate (ankle = 1e-7 knee + 0.05, as the
    Jumper's patella splines near full extension): moving the ankle at unit speed takes the
    knee at 1e7, so the moment arm about the ankle is r_ankle + 1e7 r_knee of the partial
    moment arms -- finite, where the projector's 1 - |V_k|² cancelled to ~1e-14 (NaN)."""
    text = (DATA / "gait10dof18musc.osim").read_text()
    i = text.index('<ConstraintSet name="constraintset">')
    j = text.index("<objects />", i)
    path = tmp_path / "flat_coupler.osim"
    path.write_text(text[:j] + FLAT + text[j + len("<objects />"):])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OpenSimImportWarning)
        model = load_opensim(path)
    names = list(model.coordinate_names)
    knee, ankle = names.index("knee_angle_r"), names.index("ankle_angle_r")
    rng = np.random.default_rng(2)
    for _ in range(3):
        q = model.random_coordinates(rng)
        q[ankle] = 1e-7 * q[knee] + 0.05
        A = model.moment_arms(q)
        partial = model._paths_at(q)[:, 1:]
        exact = partial[:, ankle] + 1e7 * partial[:, knee]
        assert np.isfinite(A).all()
        # (the null-space basis's round-off, ~1e-16 on entries of 1e-7, is ~2e-9 of c_k)
        np.testing.assert_allclose(A[:, ankle], exact, rtol=1e-7,
                                   atol=1e-7 * np.abs(exact).max())
        np.testing.assert_allclose(A[:, knee], partial[:, knee] + 1e-7 * partial[:, ankle],
                                   rtol=1e-12, atol=1e-15)
