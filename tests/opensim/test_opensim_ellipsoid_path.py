"""BIClong's force over the WrapEllipsoid 'BIClonghh' in the equations of motion, against
OpenSim 4.6: Arm26 without TRIlong (over three wrap objects, not built) in both tools, at
states with the elbow at 0.05, 0.6, 1.3 and 2.2 rad (BIClong wraps at two, runs straight
at the others), q', u', the activations' and fiber lengths' derivatives to 1e-9 (1e-13
here).  The path's stations (tangent points and surface length) are specified inputs the
model computes from q (``model.specified_values``, ``eom.derived_inputs``); a short
simulation, which computes them at every evaluation, against an independent integration of
the same right-hand side."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import symbody as sb
from symbody.errors import InputError
from symbody.opensim import load_opensim
from systems.opensim_oracle import ask_opensim, muscle_derivative_queries, opensim_installed

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"
needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")


@pytest.fixture(scope="module")
def arm26(tmp_path_factory):
    text = (DATA / "arm26.osim").read_text()
    text, k = re.subn(r'\s*<Thelen2003Muscle name="TRIlong">.*?</Thelen2003Muscle>', "", text,
                      flags=re.S)
    assert k == 1
    path = tmp_path_factory.mktemp("ellipsoid") / "arm26.osim"
    path.write_text(text)
    model = load_opensim(path)
    assert not model.left_out and model.forces["BIClong"].path.wraps == ("BIClonghh",)
    return path, model


@needs_opensim
def test_biclong_force_agrees_with_opensim(arm26):
    path, model = arm26
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    n = len(model.coordinates)
    assert model.coordinate_names == ("r_shoulder_elev", "r_elbow_flex")
    at = [{0: s, 1: el} for s, el in ((0.0, 0.05), (1.2, 0.6), (2.5, 1.3), (1.5, 2.2))]
    queries, states = muscle_derivative_queries(model, np.random.default_rng(5), len(at), at)
    answers = ask_opensim(path, queries, without_forces=False)
    wraps = []
    for (q, u, e), ans in zip(states, answers):
        z = model.extra_states_from_opensim(ans["states"])
        zdot = model.extra_states_from_opensim(ans["derivatives"])
        r = model.specified_values(q, e)
        wraps.append(r[-1] > 0)
        xdot = nm.rhs(0.0, np.concatenate([q, u, z]), p, r)
        udot = np.array(ans["udot"])[list(model.simbody_index)]
        assert np.abs(xdot[n:2 * n] - udot).max() <= 1e-9 * np.abs(udot).max()
        for j in (0, 1):             # activations', fiber velocities
            ref = zdot[j::2]
            assert np.abs(xdot[2 * n + j::2] - ref).max() <= 1e-9 * np.abs(ref).max()
        M, g = model.dynamic_terms(q, u, e, x_e=z)
        np.testing.assert_allclose(np.linalg.solve(M, -g), xdot[n:2 * n], rtol=1e-12, atol=0)
    assert any(wraps) and not all(wraps)


def test_simulation_computes_the_stations_at_every_step(arm26):
    """simulate (the user gives the excitations only) against solve_ivp on rhs with the
    stations computed from q at each call, BIClong wrapping all along (its wrap ends at a
    jump of OpenSim's length -- the quadrant's far side -- that no step size resolves)."""
    _, model = arm26
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    assert model.input_names == ("e_TRIlat", "e_TRImed", "e_BIClong", "e_BICshort", "e_BRA")
    n = len(model.coordinates)
    x0 = np.concatenate([[0.5, 1.0], [3.0, 0.0], np.tile([0.3, 0.1], 5)])
    e = np.array([0.1, 0.1, 0.9, 0.1, 0.1])
    sol = sb.simulate(nm, (0.0, 0.06), x0, p, specifieds=e,
                      solver=sb.Solver(rtol=1e-9, atol=1e-11), t_eval=[0.06])
    assert sol.status == 0

    def f(t, x):
        return nm.rhs(t, x, p, model.specified_values(x[:n], e))
    ref = solve_ivp(f, (0.0, 0.06), x0, method="DOP853", rtol=1e-10, atol=1e-12)
    s = [model.specified_values(x[:n], e)[-1] for x in ref.y.T]
    assert min(s) > 0 and ref.status == 0
    # the stations are OpenSim's iterates (stopped at its tolerances), smooth in q only to
    # about 1e-8: the two integrations agree to that, not to their own tolerances
    assert np.abs(sol.x[-1] - ref.y[:, -1]).max() <= 1e-6 * np.abs(ref.y[:, -1]).max()
    with pytest.raises(InputError, match="12 specified values given but the model has 5"):
        sb.simulate(nm, (0.0, 0.01), x0, p, specifieds=np.zeros(12))


def test_linearization_and_optimal_control_are_refused_by_name(arm26):
    """The equations hold no derivative of the stations: both refuse, saying why."""
    _, model = arm26
    nm = model.numeric_model
    x = np.concatenate([[0.5, 1.0], [0.0, 0.0], np.tile([0.3, 0.1], 5)])
    with pytest.raises(InputError, match="BIClonghh.*linearizing it is not supported"):
        sb.linearize(nm, x, model.constants)
    with pytest.raises(InputError, match="ellipsoid.*optimal control through them"):
        sb.OptimalControlProblem(nm, num_nodes=5, duration=0.1)


def test_saving_or_pickling_is_refused_by_name(arm26, tmp_path):
    """A saved model would keep the kernels but not the stations' computation: numbers
    given for those inputs after loading would give wrong forces, so both refuse."""
    import pickle

    _, model = arm26
    nm = model.numeric_model
    with pytest.raises(InputError, match="cannot be saved.*from the state at run time"):
        nm.save(tmp_path / "arm26.sbm")
    with pytest.raises(InputError, match="cannot be pickled.*eom.derived_inputs"):
        pickle.dumps(nm)
