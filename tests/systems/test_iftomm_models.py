"""IFToMM group A zoo models (A01 pendulum, A04 Bricard, A05 flyball governor) against the
independent references of systems.iftomm_reference and the data in tests/data."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import sympy as sm
from scipy.integrate import quad, solve_ivp

import symbody as sb
from symbody.errors import FormulationError
from systems.iftomm_reference import (
    a01_exact,
    a02_exact,
    a02_parameter,
    a04_reference,
    a05_reference,
)

DATA = json.loads((Path(__file__).resolve().parents[1] / "data" / "iftomm_group_a.json").read_text())


def _numeric(model, expr):
    """expr(q, u) of ``model`` with its constants, as f(q_row, u_row)."""
    e = sm.sympify(expr).xreplace(model.constants)
    return sm.lambdify([list(model.eom.q), list(model.eom.u)], e, "numpy")


def _energy_along(model, sol):
    f = _numeric(model, model.energy)
    q, u = np.asarray(sol.q), np.asarray(sol.u)
    return np.array([float(f(qi, ui)) for qi, ui in zip(q, u, strict=True)])


@pytest.fixture(scope="module")
def pendulum():
    zoo = sb.models.get("iftomm-pendulum")
    return zoo, sb.compile(zoo.eom)


@pytest.fixture(scope="module")
def bricard():
    zoo = sb.models.get("bricard")
    return zoo, sb.compile(zoo.eom)


@pytest.fixture(scope="module")
def flyball():
    zoo = sb.models.get("flyball-governor")
    return zoo, sb.compile(zoo.eom)


def test_the_data_file_names_a_source_and_the_precisions_of_every_problem():
    assert DATA["precision_levels"] == {"low": 0.1, "high": 0.001}
    for key in ("A01", "A02", "A04", "A05"):
        assert "mbsbenchmark" in DATA[key]["source"]
        assert DATA[key]["precision"] == {"low": 0.1, "high": 0.001}
    assert DATA["A01"]["output_steps"] == 4000 and DATA["A02"]["output_steps"] == 400


# ------------------------------------------------------------------ A01
def test_a01_exact_solution_agrees_with_a_tight_numerical_integration():
    t = np.linspace(0.0, 20.0, 41)
    sol = solve_ivp(lambda _t, y: [y[1], -9.81 * math.sin(y[0])], (0.0, 20.0), [math.pi / 2, 0.0],
                    method="DOP853", rtol=1e-12, atol=1e-12, t_eval=t)
    x, y = a01_exact(t)
    assert np.max(np.abs(x - np.sin(sol.y[0]))) < 1e-8
    assert np.max(np.abs(y + np.cos(sol.y[0]))) < 1e-8


def test_a01_pendulum_model_starts_horizontal_and_meets_the_high_precision(pendulum):
    zoo, model = pendulum
    t = np.arange(0.0, 20.0 + 1e-9, 0.5)           # the benchmark's output step (2000 s / 4000)
    x_ref, y_ref = a01_exact(t)
    fx = _numeric(zoo, zoo.outputs["x_P1"])
    fy = _numeric(zoo, zoo.outputs["y_P1"])
    q0 = [zoo.initial_state[c] for c in zoo.eom.q]
    u0 = [zoo.initial_state[c] for c in zoo.eom.u]
    assert (float(fx(q0, u0)), float(fy(q0, u0))) == pytest.approx((1.0, 0.0), abs=1e-15)
    errors = {}
    for rtol in (1e-6, 1e-10):
        sol = sb.simulate(model, (0.0, 20.0), zoo.initial_state, zoo.constants,
                          solver=sb.Solver(rtol=rtol, atol=rtol),
                          t_eval=t)
        assert sol.success, sol.message
        q, u = np.asarray(sol.q), np.asarray(sol.u)
        x = np.array([float(fx(a, b)) for a, b in zip(q, u, strict=True)])
        y = np.array([float(fy(a, b)) for a, b in zip(q, u, strict=True)])
        errors[rtol] = max(np.max(np.abs(x - x_ref)), np.max(np.abs(y - y_ref)))
        energy = _energy_along(zoo, sol)
        assert np.max(np.abs(energy - energy[0])) < 100 * rtol * 9.81
    assert errors[1e-6] < 1e-3          # the benchmark's high precision at the default tolerances
    assert errors[1e-10] < 1e-7


# ------------------------------------------------------------------ A02 (reference only)
def test_a02_reduction_reaches_the_first_flat_position_at_the_quadrature_time():
    """theta' ^2 = 1 + 2 c (1 - sin theta) on the parallelogram branch: the time from the
    vertical start to the flat position theta = 0 is a quadrature of 1/|theta'|."""
    c = a02_parameter(40)
    assert c == pytest.approx(9.81 * 3 * 121 / (2 * 161), rel=1e-15)
    t_flat, _ = quad(lambda th: 1.0 / math.sqrt(1.0 + 2.0 * c * (1.0 - math.sin(th))), 0.0, math.pi / 2,
                     epsabs=1e-13, epsrel=1e-13)
    r = a02_exact(np.array([0.0, t_flat, 20.0]))
    assert abs(r["theta"][1]) < 1e-9
    assert (r["x"][0], r["y"][0], r["vx"][0]) == pytest.approx((0.0, 1.0, 1.0), abs=1e-15)
    full = a02_exact(np.linspace(0.0, 20.0, 401))
    assert np.ptp(full["energy"]) < 1e-9 * np.max(np.abs(full["energy"]))


# ------------------------------------------------------------------ A04
def test_bricard_keeps_the_redundant_loop_equation_out_and_reports_it(bricard):
    zoo, _ = bricard
    assert list(zoo.redundant_constraints) == ["axis_y"]
    assert zoo.eom.M == 4 and len(zoo.eom.q) == 5
    state = [zoo.initial_state[c] for c in zoo.eom.q]
    for name in ("loop_x", "loop_y", "loop_z", "axis_y", "axis_z"):
        value = float(_numeric(zoo, zoo.outputs[f"closure_{name}"])(state, [0.0] * 5))
        assert abs(value) < 1e-15, name


def test_kanes_method_takes_more_loop_equations_than_dependent_coordinates():
    """All five loop equations as a list (named by index); tests/systems/
    test_redundant_constraints.py simulates them."""
    from symbody.models.bricard import bricard_system
    system, ex = bricard_system(redundant=True)
    system.configuration_constraints = list(ex["equations"].values())
    _, eom = system.form()
    assert eom.constraint_excess == 1
    assert eom.holonomic_names[3] == "configuration_constraints[3]"
    system.configuration_constraints = list(ex["equations"].values())[:3]
    with pytest.raises(FormulationError, match="4 dependent coordinates but only 3 configuration"):
        system.form()


def test_bricard_follows_the_independent_reference_and_conserves_energy(bricard):
    zoo, model = bricard
    t = np.linspace(0.0, 1.5, 31)
    ref = a04_reference(t)
    sol = sb.simulate(model, (0.0, 1.5), zoo.initial_state, zoo.constants,
                      solver=sb.Solver(rtol=1e-10, atol=1e-10),
                      t_eval=t)
    assert sol.success, sol.message
    q, u = np.asarray(sol.q), np.asarray(sol.u)
    assert np.max(np.abs(q - ref["q"])) < 1e-7
    p3 = np.column_stack([[float(_numeric(zoo, zoo.outputs[k])(a, b)) for a, b in zip(q, u, strict=True)]
                          for k in ("x_P3", "y_P3", "z_P3")])
    assert np.max(np.abs(p3 - ref["P3"])) < 1e-7
    assert np.max(np.abs(p3[0] - [1.0, -1.0, 0.0])) < 1e-15
    assert np.ptp(p3[:, 0]) > 1.0                   # it moves: x of P3 swings from 1 past -0.7
    energy = _energy_along(zoo, sol)
    assert np.max(np.abs(energy - energy[0])) < 1e-8 * 5 * 9.81
    redundant = _numeric(zoo, zoo.redundant_constraints["axis_y"])
    assert max(abs(float(redundant(a, b))) for a, b in zip(q, u, strict=True)) < 1e-9


# ------------------------------------------------------------------ A05
def test_flyball_governor_starts_with_the_springs_at_rest_length(flyball):
    zoo, _ = flyball
    state = [zoo.initial_state[c] for c in zoo.eom.q]
    speeds = [zoo.initial_state[c] for c in zoo.eom.u]
    for k in ("spring1_length", "spring2_length"):
        assert float(_numeric(zoo, zoo.outputs[k])(state, speeds)) == pytest.approx(0.5, abs=1e-14)
    assert speeds[0] == pytest.approx(2 * math.pi)


def test_flyball_governor_without_damping_conserves_energy(flyball):
    zoo, _ = flyball
    undamped = zoo.with_constants(C=0.0)
    model = sb.compile(undamped.eom)
    sol = sb.simulate(model, (0.0, 0.5), undamped.initial_state, undamped.constants,
                      solver=sb.Solver(method="Radau", rtol=1e-10, atol=1e-10),
                      t_eval=np.linspace(0.0, 0.5, 26))
    assert sol.success, sol.message
    energy = _energy_along(undamped, sol)
    assert np.max(np.abs(energy - energy[0])) < 1e-6 * abs(energy[0])


def test_flyball_governor_matches_the_lagrange_reference_with_an_implicit_integrator(flyball):
    zoo, model = flyball
    t = np.linspace(0.0, 2.0, 41)
    ref = a05_reference(t)
    sol = sb.simulate(model, (0.0, 2.0), zoo.initial_state, zoo.constants,
                      solver=sb.Solver(method="Radau", rtol=1e-9, atol=1e-9), t_eval=t)
    assert sol.success, sol.message
    q = np.asarray(sol.q)
    assert np.max(np.abs(q[:, 1] - ref["s"])) < 1e-7
    assert np.max(np.abs(np.asarray(sol.u)[:, 0] - ref["phi_dot"])) < 1e-6
    assert np.ptp(ref["s"]) > 0.2                   # the slider rises and falls


# ------------------------------------------------------------------ A03
def test_andrews_squeezer_reaches_the_test_set_reference_at_t_003():
    data = DATA["A03"]
    zoo = sb.models.get("andrews-squeezer")
    assert [zoo.initial_state[c] for c in zoo.eom.q] == data["initial_angles"]
    model = sb.compile(zoo.eom)
    sol = sb.simulate(model, (0.0, 0.03), zoo.initial_state, zoo.constants,
                      solver=sb.Solver(rtol=1e-10, atol=1e-10),
                      t_eval=[0.0, 0.03])
    assert sol.success, sol.message
    q_end = np.asarray(sol.q)[-1]
    assert np.max(np.abs(q_end - data["reference_angles_t003"])) < 1e-8
    u_end = np.asarray(sol.u)[-1]
    assert u_end[0] == pytest.approx(data["reference_rates_t003"][0], rel=1e-7)
    assert sol.max_holonomic_residual < 1e-12
