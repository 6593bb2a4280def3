"""Direct collocation (symbody.optimize): derivatives, transcriptions and published optima."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import sympy as sm
from sympy.physics.vector import dynamicsymbols

import symbody as sb
from symbody.errors import InputError
from symbody.optimize import Cost, OptimalControlProblem, examples, periodic

pytest.importorskip("cyipopt", reason="symbody[optimize] (cyipopt-wheels) is not installed")

t = dynamicsymbols._t
DATA = json.loads((Path(__file__).parents[1] / "data" / "optimal_control.json").read_text())


def _fd_check(problem, seed=0):
    """Jacobian, gradient and Hessian of the Lagrangian against central differences."""
    nlp = problem.nlp
    rng = np.random.default_rng(seed)
    w = rng.uniform(-1, 1, nlp.n)
    if problem.duration_symbol is not None:
        w[nlp.ih] = 0.05
    lam = rng.uniform(-1, 1, nlp.m)
    sigma = 0.7
    eps = 1e-6
    rows, cols = nlp.jacobianstructure()
    J = np.zeros((nlp.m, nlp.n))
    np.add.at(J, (rows, cols), nlp.jacobian(w))
    hr, hc = nlp.hessianstructure()
    assert np.all(hr >= hc)
    H = np.zeros((nlp.n, nlp.n))
    np.add.at(H, (hr, hc), nlp.hessian(w, lam, sigma))
    H = H + np.tril(H, -1).T
    g = nlp.gradient(w)
    cols_to_check = rng.choice(nlp.n, size=min(nlp.n, 40), replace=False)
    if problem.duration_symbol is not None:
        cols_to_check = np.r_[cols_to_check, nlp.ih]
    for j in cols_to_check:
        e = np.zeros(nlp.n)
        e[j] = eps
        dc = (nlp.constraints(w + e) - nlp.constraints(w - e)) / (2 * eps)
        np.testing.assert_allclose(J[:, j], dc, atol=2e-6, rtol=1e-6)
        df = (nlp.objective(w + e) - nlp.objective(w - e)) / (2 * eps)
        assert abs(g[j] - df) < 2e-6 * max(1.0, abs(df))

        def lag_grad(x):
            Jx = np.zeros((nlp.m, nlp.n))
            np.add.at(Jx, (rows, cols), nlp.jacobian(x))
            return sigma * nlp.gradient(x) + Jx.T @ lam
        dH = (lag_grad(w + e) - lag_grad(w - e)) / (2 * eps)
        np.testing.assert_allclose(H[:, j], dH, atol=5e-6, rtol=1e-5)


@pytest.mark.parametrize("transcription", ["backward-euler", "midpoint", "hermite-simpson", "radau", "radau4"])
def test_derivatives_constrained_free_time_and_parameters(transcription):
    """The unreduced constrained sleigh with an unknown parameter, free duration, path
    constraint, Mayer term and a time-dependent cost: exact derivatives = differences."""
    eom, constants = examples.sleigh_equations()
    q1, q2, q3 = eom.q
    F, T = eom.specifieds
    a = sm.Symbol("a")
    known = {k: v for k, v in constants.items() if k != a}
    Tf = sm.Symbol("T_f")
    problem = OptimalControlProblem(
        eom, num_nodes=6, duration=Tf,
        objective=Cost(F ** 2 + T ** 2 * sm.cos(t) + a * q2 ** 2, mayer=q1.func(Tf) ** 2 * a + Tf ** 2),
        instance_constraints=[q1.func(0.0), q2.func(Tf) - a],
        path_constraints={q1 * q2 + F: (-1.0, 1.0)}, known_parameters=known,
        transcription=transcription, bounds={Tf: (0.1, 5.0), a: (0.1, 1.0)})
    assert problem.unknown_parameters == (a,)
    _fd_check(problem)


def test_derivatives_reduced_and_extra_constants():
    problem, _ = examples.cart_pole_swing_up(transcription="hermite-simpson", num_nodes=5)
    _fd_check(problem, seed=3)


def test_pendulum_swing_up_matches_opty_gallery():
    """opty's gallery problem, backward Euler, N = 501: objective 15.6416."""
    problem, guess = examples.pendulum_swing_up()
    res = problem.solve(guess, progress=False)
    ref = DATA["pendulum_backward_euler_501"]
    assert res.success, res.message
    assert abs(res.objective - ref["issue"]) < 5e-5
    assert res.objective == pytest.approx(ref["opty_casadi"], rel=1e-6)
    traj = res.trajectory
    assert traj.q[0, 0] == pytest.approx(0.0, abs=1e-9)
    assert traj.q[-1, 0] == pytest.approx(math.pi, abs=1e-8)
    assert np.all(np.abs(res.inputs) <= 2.0 + 1e-8)
    assert res.constraint_violation < 1e-8


def test_cart_pole_matches_kelly_midpoint():
    """Kelly's cart-pole, midpoint, N = 101: objective 59.1907 (same NLP in opty and CasADi)."""
    problem, guess = examples.cart_pole_swing_up()
    res = problem.solve(guess, progress=False)
    ref = DATA["cart_pole_midpoint_101"]
    assert res.success, res.message
    assert abs(res.objective - ref["issue"]) < 5e-5
    assert res.objective == pytest.approx(ref["opty_casadi"], rel=1e-6)
    x = res.trajectory.x
    np.testing.assert_allclose(x[-1], [1.0, math.pi / 2, 0.0, 0.0], atol=1e-8)


def test_cart_pole_hermite_simpson_is_fourth_order_against_simulation():
    """Simulating the model with Hermite–Simpson's optimal force (quadratic on each interval
    through its node and midpoint values, as the transcription assumes) reproduces the optimal
    states with an error falling like h^4; the optimum agrees with the fine midpoint one."""
    model = sb.models.n_link_pendulum_on_cart(1, force=True)
    numeric = sb.compile(model.eom)
    errors, objectives = {}, {}
    for N in (51, 101):
        problem, guess = examples.cart_pole_swing_up(transcription="hermite-simpson", num_nodes=N,
                                                     quadrature="transcription")
        r = problem.solve(guess, progress=False)
        assert r.success, r.message
        objectives[N] = r.objective
        Fp = r.w[problem.nlp.iR[:, 0]]
        h = 2.0 / (N - 1)

        def force(tt, Fp=Fp, h=h, N=N):
            k = min(int(tt // h), N - 2)
            s = tt / h - k
            a, c, b = Fp[2 * k], Fp[2 * k + 1], Fp[2 * k + 2]
            return a * (1 - s) * (1 - 2 * s) + 4 * c * s * (1 - s) + b * s * (2 * s - 1)

        sim = sb.simulate(numeric, (0.0, 2.0), r.trajectory.x[0], dict(problem.known_parameters),
                          specifieds={problem.specifieds[0]: force},
                          solver=sb.Solver(rtol=1e-11, atol=1e-11, max_step=h / 4),
                          t_eval=r.trajectory.t)
        errors[N] = np.abs(sim.x - r.trajectory.x).max()
    assert errors[101] < 1e-3
    assert errors[51] / errors[101] > 10.0            # 16 for fourth order
    mid, g = examples.cart_pole_swing_up(transcription="midpoint", num_nodes=401,
                                         quadrature="transcription")
    m = mid.solve(g, progress=False)
    assert abs(objectives[101] - objectives[51]) < 1e-3 * objectives[101]
    assert abs(m.objective - objectives[101]) < 1e-3 * objectives[101]


@pytest.mark.parametrize("transcription", ["backward-euler", "midpoint", "hermite-simpson", "radau"])
def test_sleigh_parking_constrained_equals_hand_derived_minimal_model(transcription):
    """Nonholonomic: the Kane model with the dependent sideways speed and its multiplier gives
    the optimum of the hand-derived minimal equations m (u1' - a u3²) = F,
    (I + m a²) u3' + m a u1 u3 = T."""
    problem, guess = examples.sleigh_parking(transcription=transcription, num_nodes=31)
    res = problem.solve(guess, progress=False)
    assert res.success, res.message
    q1, q2, q3 = dynamicsymbols("q1, q2, q3")
    u1, u3 = dynamicsymbols("u1, u3")
    F, T = dynamicsymbols("F, T")
    m, I, a = sm.symbols("m, I, a")
    hand = sb.EquationsOfMotion(
        [q1, q2, q3], [u1, u3],
        kinematic=[q1.diff(t) - u1 * sm.cos(q3), q2.diff(t) - u1 * sm.sin(q3), q3.diff(t) - u3],
        dynamic=[m * (u1.diff(t) - a * u3 ** 2) - F,
                 (I + m * a ** 2) * u3.diff(t) + m * a * u1 * u3 - T])
    inst = [q1.func(0.0), q2.func(0.0), q3.func(0.0), q1.func(4.0), q2.func(4.0) - 0.5,
            q3.func(4.0), u1.func(0.0), u3.func(0.0), u1.func(4.0), u3.func(4.0)]
    ref = OptimalControlProblem(hand, num_nodes=31, duration=4.0, objective=F ** 2 + T ** 2,
                                instance_constraints=inst,
                                known_parameters={m: 1.0, I: 0.1, a: 0.3},
                                transcription=transcription)
    r2 = ref.solve({k: v for k, v in guess.items()}, progress=False)
    assert r2.success
    assert res.objective == pytest.approx(r2.objective, rel=1e-6)
    u2 = problem.speeds.index(dynamicsymbols("u2"))
    assert np.max(np.abs(res.trajectory.u[:, u2])) < 1e-9             # no sideways slip
    # (the optimal paths need not coincide: the problem has mirror twins of equal cost)
    # the hand model started from the Kane model's optimum stays there
    r3 = ref.solve(res.trajectory, progress=False)
    assert r3.objective == pytest.approx(res.objective, rel=1e-6)
    np.testing.assert_allclose(r3.trajectory.q, res.trajectory.q, atol=1e-5)


def test_minimum_time_double_integrator_free_duration_and_mayer():
    """Bang-bang minimum time from rest at 0 to rest at 1 with |F| <= 1: T* = 2."""
    x, v, F = dynamicsymbols("x v F")
    eom = sb.EquationsOfMotion([x], [v], kinematic=[x.diff(t) - v], dynamic=[v.diff(t) - F])
    Tf = sm.Symbol("T_f")
    problem = OptimalControlProblem(
        eom, num_nodes=41, duration=Tf, objective=Cost(mayer=Tf),
        instance_constraints=[x.func(0.0), v.func(0.0), x.func(Tf) - 1, v.func(Tf)],
        bounds={F: (-1, 1), Tf: (0.5, 5.0)}, transcription="hermite-simpson")
    res = problem.solve({Tf: 3.0, x: np.linspace(0, 1, 41), v: 0.3}, progress=False)
    assert res.success, res.message
    assert res.duration == pytest.approx(2.0, rel=1e-3)
    assert res.trajectory.t[-1] == pytest.approx(res.duration)


def test_unknown_parameter_identified():
    """A falling particle that must drop 4.905 m in 1 s: the unknown g is 9.81."""
    y, v = dynamicsymbols("y v")
    g = sm.Symbol("g")
    eom = sb.EquationsOfMotion([y], [v], kinematic=[y.diff(t) - v], dynamic=[v.diff(t) + g])
    problem = OptimalControlProblem(
        eom, num_nodes=11, duration=1.0,
        instance_constraints=[y.func(0.0), v.func(0.0), y.func(1.0) + 4.905],
        bounds={g: (0.0, 100.0)})
    assert problem.unknown_parameters == (g,)
    res = problem.solve({g: 1.0}, progress=False)
    assert res.parameters[g] == pytest.approx(9.81, rel=1e-9)   # Simpson is exact here
    assert res.trajectory.constants[g] == pytest.approx(9.81, rel=1e-9)


def test_periodic_helper_and_trajectory_guess():
    problem, guess = examples.cart_pole_swing_up(num_nodes=21)
    res = problem.solve(guess, progress=False)
    # the solution (a Trajectory) as the initial guess: converges in a few iterations
    again, _ = examples.cart_pole_swing_up(num_nodes=21)
    r2 = again.solve(res.trajectory, progress=False)
    assert r2.iterations < res.iterations
    assert r2.objective == pytest.approx(res.objective, rel=1e-8)
    q0 = problem.coordinates[0]
    cons = periodic(q0, end=2.0)
    assert cons == [q0.func(0.0) - q0.func(2.0)]


def test_bad_input_names_the_argument():
    eom, constants = examples.pendulum_equations()
    theta, = eom.q
    T, = eom.specifieds
    kw = dict(num_nodes=11, duration=1.0, known_parameters=constants)
    with pytest.raises(InputError, match="num_nodes"):
        OptimalControlProblem(eom, num_nodes=1, duration=1.0)
    with pytest.raises(InputError, match="transcription"):
        OptimalControlProblem(eom, transcription="rk4", **kw)
    with pytest.raises(InputError, match="duration"):
        OptimalControlProblem(eom, num_nodes=11, duration=-1.0)
    with pytest.raises(InputError, match="bounds"):
        OptimalControlProblem(eom, bounds={sm.Symbol("zz"): (0, 1)}, **kw)
    with pytest.raises(InputError, match="not a node time"):
        OptimalControlProblem(eom, instance_constraints=[theta.func(0.05)], **kw)
    with pytest.raises(InputError, match="objective"):
        OptimalControlProblem(eom, objective=sm.Symbol("zz") * T, **kw)
    with pytest.raises(InputError, match="lower bound"):
        OptimalControlProblem(eom, bounds={T: (1, -1)}, **kw)
    with pytest.raises(InputError, match="known_parameters"):
        OptimalControlProblem(eom, num_nodes=11, duration=1.0, known_parameters={"zz": 1.0})
    with pytest.raises(InputError, match="initial_guess"):
        OptimalControlProblem(eom, **kw).solve(np.zeros(3), progress=False)


def test_limited_memory_hessian_and_progress_reach_the_same_optimum():
    problem, guess = examples.cart_pole_swing_up(hessian="limited-memory")
    calls = []
    res = problem.solve(guess, progress=lambda done, total, message: calls.append(message))
    assert res.success, res.message
    assert res.objective == pytest.approx(DATA["cart_pole_midpoint_101"]["opty_casadi"], rel=1e-6)
    assert calls and "objective" in calls[-1]


def test_infeasible_problem_reports_ipopt_status_in_words():
    """Rest to rest over 1 m in 1 s needs |F| >= 4: with |F| <= 1 IPOPT cannot succeed."""
    x, v, F = dynamicsymbols("x v F")
    eom = sb.EquationsOfMotion([x], [v], kinematic=[x.diff(t) - v], dynamic=[v.diff(t) - F])
    problem = OptimalControlProblem(
        eom, num_nodes=21, duration=1.0, objective=F ** 2,
        instance_constraints=[x.func(0.0), v.func(0.0), x.func(1.0) - 1, v.func(1.0)],
        bounds={F: (-1, 1)}, transcription="midpoint")
    res = problem.solve(progress=False, max_iter=200)
    assert not res.success
    assert res.status in (2, -1, -2)
    assert res.message and res.message[0].isalpha()
    assert "FAILED" in repr(res)


def test_numeric_model_and_zoo_model_inputs_give_the_same_nlp():
    eom, constants = examples.pendulum_equations()
    theta, = eom.q
    T, = eom.specifieds
    kw = dict(num_nodes=11, duration=1.0, objective=T ** 2, known_parameters=constants,
              instance_constraints=[theta.func(0.0) - 0.1])
    a = OptimalControlProblem(eom, **kw)
    b = OptimalControlProblem(sb.compile(eom), **kw)
    w = np.linspace(-1, 1, a.nlp.n)
    np.testing.assert_array_equal(a.nlp.constraints(w), b.nlp.constraints(w))
    assert a.nlp.objective(w) == b.nlp.objective(w)
    zoo = sb.models.n_link_pendulum_on_cart(1, force=True)
    c = OptimalControlProblem(zoo, num_nodes=5, duration=1.0)
    assert c.known_parameters == {k: float(v) for k, v in zoo.constants.items()}
    assert c.unknown_parameters == ()


def test_simulation_as_initial_guess_and_saved_result(tmp_path):
    """A simulation (Trajectory from sb.simulate) seeds the problem; the result saves and loads."""
    problem, _ = examples.cart_pole_swing_up(num_nodes=41)
    model = sb.models.n_link_pendulum_on_cart(1, force=True)
    numeric = sb.compile(model.eom)
    F = problem.specifieds[0]
    sim = sb.simulate(numeric, (0.0, 2.0), [0.0, -math.pi / 2 + 0.3, 0.0, 0.0],
                      dict(problem.known_parameters), specifieds={F: lambda tt: 2.0 * math.sin(3 * tt)},
                      t_eval=np.linspace(0, 2, 81))
    w0 = problem.initial_vector(sim)
    nodes = problem.nlp.node_points
    np.testing.assert_allclose(w0[problem.nlp.iX[nodes]][:, :2], sim.q[::2], atol=1e-12)
    assert sim.specified_values is not None          # the inputs the simulation used
    np.testing.assert_allclose(w0[problem.nlp.iR[nodes, 0]], 2 * np.sin(3 * sim.t[::2]), atol=1e-9)
    res = problem.solve(sim, progress=False)
    assert res.success, res.message          # a local optimum (the swing-up has several)
    path = res.trajectory.save(tmp_path / "swing")
    back = sb.Trajectory.load(path)
    np.testing.assert_array_equal(back.x, res.trajectory.x)
    np.testing.assert_array_equal(back.t, res.trajectory.t)
