"""Receding-horizon control (symbody.optimize.mpc) closed with simulate."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sm

import symbody as sb
from symbody.errors import InputError
from symbody.optimize import ModelPredictiveController, OptimalControlProblem

pytest.importorskip("cyipopt", reason="symbody[optimize] (cyipopt-wheels) is not installed")

CONSTANTS = {"g": 9.81, "m0": 1.0, "m1": 0.3, "l0": 0.5}


def _template(num_nodes=16, h=0.05, force_limit=10.0, transcription="backward-euler"):
    """The cart-pole (pole upright at q1 = π/2) over a horizon of num_nodes - 1 intervals h."""
    model = sb.models.n_link_pendulum_on_cart(1, force=True)
    q0, q1 = model.eom.q
    u0, u1 = model.eom.u
    F, = model.eom.specifieds
    cost = 5 * q0 ** 2 + 20 * (1 - sm.sin(q1)) + 0.1 * u0 ** 2 + 0.1 * u1 ** 2 + 0.01 * F ** 2
    return OptimalControlProblem(model, num_nodes=num_nodes, duration=h * (num_nodes - 1),
                                 objective=cost, bounds={"F": (-force_limit, force_limit),
                                                         "q0": (-2.0, 2.0)},
                                 known_parameters=CONSTANTS, transcription=transcription)


def test_cart_pole_kept_upright_from_0_3_rad_within_the_force_limit():
    problem = _template()
    mpc = ModelPredictiveController(problem)
    x0 = {"q0": 0.0, "q1": math.pi / 2 + 0.3, "u0": 0.0, "u1": 0.0}
    loop = mpc.run(x0, 2.0, guess={"q1": math.pi / 2 + 0.3})
    assert np.all(np.isin(loop.statuses, (0, 1)))
    traj = loop.trajectory
    assert len(loop.solve_times) == 40 and traj.t[-1] == pytest.approx(2.0)
    assert np.abs(loop.inputs).max() <= 10.0 + 1e-9
    assert np.abs(loop.inputs).max() > 9.0                 # the limit binds at the start
    err = np.abs(traj.x[:, 1] - math.pi / 2)
    assert err[traj.t >= 1.5].max() < 0.05                 # upright
    assert np.abs(traj.x[-1, 0]) < 0.3                     # the cart back near the origin
    # the plant is simulate's: each period's piece ends where the next one starts
    for a, b in zip(loop.pieces[:-1], loop.pieces[1:]):
        np.testing.assert_array_equal(a.x[-1], b.x[0])
    assert loop.median_solve_time > 0 and loop.max_solve_time >= loop.median_solve_time
    assert "re-solve median" in repr(loop)


def test_a_warm_re_solve_finds_the_cold_optimum_with_the_initial_state_fixed():
    """The controller's re-solve (shifted start, warm-started multipliers, initial state by
    bounds) gives the optimum of the same horizon problem stated with instance constraints
    and solved cold; the input it returns is the first interval's (backward Euler: R_1)."""
    problem = _template(num_nodes=11)
    mpc = ModelPredictiveController(problem)
    x0 = np.array([0.0, math.pi / 2 + 0.2, 0.0, 0.0])
    mpc.step(x0, guess={"q1": math.pi / 2 + 0.2})
    x1 = np.array([0.01, math.pi / 2 + 0.15, 0.1, -0.4])
    F1 = mpc.step(x1)
    warm = mpc.last_result
    q0, q1 = problem.coordinates
    u0, u1 = problem.speeds
    cold_problem = OptimalControlProblem(
        problem.eom, num_nodes=11, duration=0.5, objective=problem.objective,
        instance_constraints=[q0.func(0.0) - x1[0], q1.func(0.0) - x1[1], u0.func(0.0) - x1[2],
                              u1.func(0.0) - x1[3]],
        bounds=problem.bounds, known_parameters=CONSTANTS, transcription="backward-euler")
    cold = cold_problem.solve({"q1": x1[1]}, progress=False)
    assert warm.success and cold.success
    assert warm.objective == pytest.approx(cold.objective, rel=1e-6)
    np.testing.assert_allclose(warm.trajectory.x[0], x1, atol=1e-12)
    assert F1[0] == pytest.approx(cold.inputs[1, 0], abs=1e-4)
    assert warm.iterations < cold.iterations


def test_shift_and_bad_periods():
    problem = _template(num_nodes=6, transcription="hermite-simpson")
    mpc = ModelPredictiveController(problem, period=0.1)
    nlp = problem.nlp
    w = np.arange(nlp.n, dtype=float)
    s = mpc.shifted(w)
    np.testing.assert_array_equal(s[nlp.iX[:-4]], w[nlp.iX[4:]])     # 2 intervals, 4 points
    np.testing.assert_array_equal(s[nlp.iR[-4:]], np.repeat(w[nlp.iR[-1:]], 4, axis=0))
    with pytest.raises(InputError, match="whole number of node intervals"):
        ModelPredictiveController(problem, period=0.07)
    with pytest.raises(InputError, match="whole number of node intervals"):
        ModelPredictiveController(problem, period=0.25)
    with pytest.raises(InputError, match="unknown state"):
        mpc.step({"zz": 1.0})


@pytest.mark.slow
def test_swing_up_example_brings_the_pole_up_and_keeps_it_there(capsys):
    """examples/mpc_cart_pole.py: from hanging at rest, 50 nodes 20 ms apart, abs(F) <= 20 N;
    the pole upright (wrapped tilt) over the last second of 4 s."""
    import importlib.util
    from pathlib import Path
    path = Path(__file__).parents[2] / "examples" / "mpc_cart_pole.py"
    spec = importlib.util.spec_from_file_location("mpc_cart_pole", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(["--duration", "4"])
    out = capsys.readouterr().out
    assert "(200 solved)" in out
    tilt = float(out.split("|tilt| <= ")[1].split(" rad")[0])
    force = float(out.split("max |F| = ")[1].split(" N")[0])
    assert tilt < 0.05 and force <= 20.0 + 1e-6
