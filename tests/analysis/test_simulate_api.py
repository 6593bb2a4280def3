"""simulate(): inputs, specifieds, failure handling, solver variants, Trajectory I/O."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from scipy.integrate import solve_ivp

import symbody
from symbody import Solver
from symbody.analysis import Trajectory, simulate
from symbody.compilation import compile
from symbody.errors import InputError, SimulationError
from systems.seed_eoms import four_bar

t = me.dynamicsymbols._t
P4 = [0.8, 2.0, 1.0, 2.0, 1.0, 9.81]
X4 = [np.deg2rad(10.0), np.deg2rad(10.0), np.deg2rad(-150.0), 0.0]


def _one_dof(mass, rest, kin=None):
    q, u = me.dynamicsymbols("q u")
    eom = symbody.EquationsOfMotion([q], [u], kinematic=[q.diff(t) - (u if kin is None else kin(q, u))],
                                    dynamic=(sm.Matrix([[mass(q, u)]]), sm.Matrix([rest(q, u)])))
    return compile(eom), q, u


@pytest.fixture(scope="module")
def fb():
    return compile(four_bar("reduced")["eom"])


def test_forced_oscillator_matches_solve_ivp():
    q, u, F = me.dynamicsymbols("q u F")
    m, k = sm.symbols("m k")
    eom = symbody.EquationsOfMotion([q], [u], kinematic=[q.diff(t) - u],
                                    dynamic=(sm.Matrix([[m]]), sm.Matrix([k * q - F])))
    model = compile(eom)
    p = {"m": 2.0, "k": 8.0}
    forcing = lambda t, x: [np.sin(3 * t)]  # noqa: E731
    ts = np.linspace(0, 5, 51)
    tr = simulate(model, (0, 5), {"q": 0.1, "u": 0.0}, p, t_eval=ts, specifieds=forcing,
                  solver=Solver(rtol=1e-10, atol=1e-12))
    ref = solve_ivp(lambda t, x: [x[1], (np.sin(3 * t) - 8.0 * x[0]) / 2.0], (0, 5), [0.1, 0.0],
                    t_eval=ts, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(tr.x, ref.y.T, atol=1e-8)
    const = simulate(model, (0, 1), [0.1, 0.0], [2.0, 8.0], specifieds=[0.5])
    assert const.success
    with pytest.raises(InputError, match="specified inputs"):
        simulate(model, (0, 1), [0.1, 0.0], [2.0, 8.0])


def test_input_validation(fb):
    with pytest.raises(InputError, match="constraints="):
        simulate(fb, (0, 1), X4, P4, constraints="magic")
    with pytest.raises(InputError, match="t_span"):
        simulate(fb, (1, 1), X4, P4)
    with pytest.raises(InputError, match="LSODA"):
        simulate(fb, (0, 1), X4, P4, constraints="project", solver=Solver(method="LSODA"))
    with pytest.raises(InputError, match="IDA"):
        simulate(fb, (0, 1), X4, P4, constraints="dae", solver=Solver(method="RK45"))
    with pytest.raises(InputError, match="unknown method"):
        simulate(fb, (0, 1), X4, P4, solver=Solver(method="Euler"))
    with pytest.raises(InputError, match="t_eval"):
        simulate(fb, (0, 1), X4, P4, t_eval=[0.5, 0.2])
    with pytest.raises(InputError, match="missing value for constant l_n"):
        simulate(fb, (0, 1), X4, {"l_a": 0.8, "l_b": 2.0, "l_c": 1.0, "m": 1.0, "g": 9.81})
    with pytest.raises(InputError, match="simulate\\(\\) needs a NumericModel"):
        simulate(four_bar("reduced")["eom"], (0, 1), X4, P4)


def test_dict_inputs_and_initial_projection(fb):
    x0 = {"q1": X4[0], "q2": X4[1], "q3": X4[2], "u1": 0.0}
    p = dict(zip(fb.constants, P4))
    tr = simulate(fb, (0, 0.5), x0, p)
    np.testing.assert_allclose(np.rad2deg(tr.q[0]), [10.0, 6.57526576, -151.3836336], atol=1e-6)
    assert tr.constants[fb.constants[0]] == 0.8


@pytest.mark.parametrize("method", ["RK23", "RK45", "DOP853", "Radau", "BDF"])
def test_project_with_every_solver(fb, method):
    tr = simulate(fb, (0, 3), X4, P4, constraints="project",
                  solver=Solver(method=method, rtol=1e-6, atol=1e-8),
                  t_eval=np.linspace(0, 3, 31))
    assert tr.success, tr.message
    assert tr.max_holonomic_residual < 1e-12
    ref = simulate(fb, (0, 3), X4, P4, constraints="project",
                   solver=Solver(method="DOP853", rtol=1e-11, atol=1e-11),
                   t_eval=np.linspace(0, 3, 31))
    np.testing.assert_allclose(tr.q, ref.q, atol=1e-3)


def test_lsoda_and_backward_integration(fb):
    tr = simulate(fb, (0, 2), X4, P4, constraints="none", solver=Solver(method="LSODA"))
    assert tr.success and tr.method == "LSODA"
    back = simulate(fb, (2, 0), tr.x[-1], P4, solver=Solver(rtol=1e-10, atol=1e-10, backwards=True))
    assert back.success and back.t[-1] == 0.0
    np.testing.assert_allclose(back.x[-1], tr.x[0], atol=1e-3)


def test_failure_returns_partial_trajectory():
    # u' = sqrt(1 - q): defined only for q <= 1, while q' = u >= 1 drives q past 1
    model, q, u = _one_dof(lambda q, u: 1, lambda q, u: -sm.sqrt(1 - q) + 0 * u)
    tr = simulate(model, (0, 5), [0.0, 1.0], [], solver=Solver(max_step=0.05))
    assert not tr.success and tr.status == -2
    assert "non-finite" in tr.message and "u(t)'" in tr.message
    assert 0.5 < tr.t[-1] < 5 and len(tr.t) > 3
    with pytest.raises(SimulationError) as err:
        simulate(model, (0, 5), [0.0, 1.0], [], solver=Solver(max_step=0.05, raise_on_failure=True))
    assert isinstance(err.value.trajectory, Trajectory)
    assert err.value.trajectory.status == -2


def test_singular_mass_matrix_and_step_collapse():
    singular, _, _ = _one_dof(lambda q, u: q, lambda q, u: 1)
    tr = simulate(singular, (0, 1), [0.0, 0.0], [])
    assert tr.status == -3 and "singular" in tr.message and len(tr.t) == 1
    blowup, _, _ = _one_dof(lambda q, u: 1, lambda q, u: -(u**3) - 1)   # u' = u^3 + 1: finite-time blow-up
    tr = simulate(blowup, (0, 10), [0.0, 1.0], [])
    assert tr.status in (-1, -2) and tr.t[-1] < 1.0
    assert tr.message


def test_dae_failure_is_reported():
    model, _, _ = _one_dof(lambda q, u: 1, lambda q, u: -sm.sqrt(1 - q) + 0 * u)
    tr = simulate(model, (0, 5), [0.0, 1.0], [], constraints="dae")
    assert tr.status != 0 and tr.message and tr.t[-1] < 5


def test_trajectory_save_load_csv(fb, tmp_path):
    d = four_bar("unreduced")
    model = compile(d["eom"])
    tr = simulate(model, (0, 1), X4, P4, t_eval=np.linspace(0, 1, 11))
    path = tr.save(tmp_path / "run")
    assert path.suffix == ".npz"
    back = Trajectory.load(path)
    for name in ("t", "x", "q", "u", "holonomic_residuals", "velocity_residuals", "multipliers"):
        np.testing.assert_array_equal(getattr(back, name), getattr(tr, name))
    assert back.coordinates == tr.coordinates and back.speeds == tr.speeds
    assert {str(k): v for k, v in back.constants.items()} == {str(k): v for k, v in tr.constants.items()}
    assert (back.status, back.message, back.constraints) == (tr.status, tr.message, tr.constraints)
    np.testing.assert_array_equal(back.column("u2"), tr.u[:, 1])
    np.testing.assert_array_equal(tr.column(d["q"][1]), tr.q[:, 1])
    with pytest.raises(InputError, match="not a coordinate or speed"):
        tr.column("u9")
    csv_path = tr.to_csv(tmp_path / "run.csv")
    rows = list(csv.reader(open(csv_path)))
    assert rows[0][:7] == ["t", "q1", "q2", "q3", "u1", "u2", "u3"]
    assert len(rows) == 12
    assert float(rows[5][1]) == tr.q[4, 0]
    html = tr._repr_html_()
    assert "Trajectory" in html and "project" in html
    assert "samples" in repr(tr) or "Trajectory" in repr(tr)


def test_progress_callback_is_called(fb):
    calls = []
    simulate(fb, (0, 2), X4, P4,
             solver=Solver(progress=lambda done, total, msg: calls.append((done, total))))
    assert calls and calls[-1][0] == pytest.approx(2.0) and calls[-1][1] == pytest.approx(2.0)
