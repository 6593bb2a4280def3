"""Issue 40 §4: opty's NLP on a model with dependent speeds.

A driven Chaplygin sleigh with its speeds along the ground axes, u1 = q1', u2 = q2',
u3 = q3' (P the knife edge at (q1, q2), heading q3), so that the knife-edge constraint
-sin(q3) u1 + cos(q3) u2 = 0 makes the dependent speed u2 = tan(q3) u1 change along the
path; the thrust F along the blade at P and the yaw torque T drive it one half metre to
the side.  opty gets it as its gallery's nonholonomic examples write it,
``[f_r + f_r*; nonholonomic; kinematic] = 0`` from SymPy's own KanesMethod, backward
Euler.  With ``dependent_speeds="differenced"`` symbody's optimum is opty's: feasible in
opty's NLP to round-off, the same objective, and a KKT point of opty's NLP (its gradient
in the span of opty's constraint Jacobian and the active bounds).  The default
("collocated": the dependent accelerations through the acceleration constraints) is
another NLP of the same problem, whose optimum opty's constraints miss by O(h).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.errors import InputError
from symbody.optimize import Collocation

pytest.importorskip("cyipopt", reason="symbody[optimize] (cyipopt-wheels) is not installed")
opty = pytest.importorskip("opty")

NODES = 41
DURATION = 4.0
CONSTANTS = {"m": 1.0, "I": 0.1, "a": 0.3}


def sleigh(method):
    """(method object formed, fr + fr*, nonholonomic, kinematic, states, inputs) of the
    sleigh with ``method`` (sympy's or symbody's KanesMethod class)."""
    q1, q2, q3 = me.dynamicsymbols("q1, q2, q3")
    u1, u2, u3 = me.dynamicsymbols("u1, u2, u3")
    F, T = me.dynamicsymbols("F, T")
    m, I, a = sm.symbols("m, I, a")
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", (q3, N.z))
    A.set_ang_vel(N, u3 * N.z)
    O, P, G = me.Point("O"), me.Point("P"), me.Point("G")
    O.set_vel(N, 0)
    P.set_pos(O, q1 * N.x + q2 * N.y)
    P.set_vel(N, u1 * N.x + u2 * N.y)
    G.set_pos(P, a * A.x)
    G.v2pt_theory(P, N, A)
    kin = [q1.diff() - u1, q2.diff() - u2, q3.diff() - u3]
    nh = [P.vel(N).dot(A.y)]
    body = me.RigidBody("A", G, A, m, (I * me.outer(A.z, A.z), G))
    km = method(N, [q1, q2, q3], [u1, u3], kd_eqs=kin, u_dependent=[u2], velocity_constraints=nh)
    fr, frstar = km.kanes_equations([body], [(P, F * A.x), (A, T * N.z)])
    return km, fr + frstar, nh, kin, (q1, q2, q3, u1, u2, u3), (F, T)


def conditions(states, inputs):
    """The task: from rest at the origin to rest at (0, 0.5), same heading, min ∫ F² + T²."""
    q1, q2, q3 = states[:3]
    inst = [q1.func(0.0), q2.func(0.0), q3.func(0.0), q1.func(DURATION),
            q2.func(DURATION) - 0.5, q3.func(DURATION)]
    inst += [u.func(0.0) for u in states[3:]] + [u.func(DURATION) for u in states[3:]]
    return inst, {q3: (-1.2, 1.2), inputs[0]: (-10.0, 10.0), inputs[1]: (-10.0, 10.0)}


def opty_problem():
    """opty's Problem of the sleigh, built from SymPy's KanesMethod."""
    _, dyn, nh, kin, states, inputs = sleigh(me.KanesMethod)
    eom = dyn.col_join(sm.Matrix(nh)).col_join(sm.Matrix(kin))
    h = DURATION / (NODES - 1)
    weights = np.r_[0.0, np.ones(NODES - 1)]          # opty's backward-Euler quadrature
    n = len(states) * NODES

    def objective(free):
        return h * np.sum(weights * free[n:].reshape(2, NODES) ** 2)

    def gradient(free):
        g = np.zeros_like(free)
        g[n:] = (2 * h * weights * free[n:].reshape(2, NODES)).ravel()
        return g

    inst, bounds = conditions(states, inputs)
    constants = {s: CONSTANTS[s.name] for s in dyn.free_symbols if s.name in CONSTANTS}
    problem = opty.Problem(objective, gradient, eom, states, NODES, h,
                           known_parameter_map=constants, instance_constraints=tuple(inst),
                           bounds=bounds, time_symbol=me.dynamicsymbols._t,
                           integration_method="backward euler", backend="numpy")
    return problem, states


def symbody_problem(mode):
    km, *_, states, inputs = sleigh(sb.KanesMethod)
    eom = km.to_eom()
    inst, bounds = conditions(states, inputs)
    problem = sb.OptimalControlProblem(
        eom, num_nodes=NODES, duration=DURATION, objective=inputs[0] ** 2 + inputs[1] ** 2,
        instance_constraints=inst, bounds=bounds, known_parameters=CONSTANTS,
        transcription=Collocation("backward-euler", dependent_speeds=mode))
    s = np.linspace(0.0, 1.0, NODES)
    q1, q2, q3 = states[:3]
    guess = {q1: 0.3 * np.sin(2 * np.pi * s), q2: 0.5 * (s - np.sin(2 * np.pi * s) / (2 * np.pi)),
             q3: 0.5 * np.sin(2 * np.pi * s)}
    return problem, guess


@pytest.fixture(scope="module")
def solved():
    out = {}
    for mode in ("differenced", "collocated"):
        problem, guess = symbody_problem(mode)
        result = problem.solve(guess, progress=False)
        assert result.success, (mode, result.message)
        out[mode] = (problem, result)
    return out, opty_problem()


def opty_vector(problem, result, opty_prob, states):
    """symbody's optimum in opty's layout (each state over the nodes, then each input)."""
    names = [str(s) for s in list(problem.eom.q) + list(problem.eom.u)]
    cols = [result.w[problem.nlp.iX[:, names.index(str(s))]] for s in states]
    inputs = [str(s) for s in problem.specifieds]
    cols += [result.w[problem.nlp.iR[:, inputs.index(str(s))]]
             for s in opty_prob.collocator.unknown_input_trajectories]
    return np.concatenate(cols)


def test_differenced_optimum_is_optys(solved):
    results, (prob, states) = solved
    problem, result = results["differenced"]
    w = opty_vector(problem, result, prob, states)
    # feasible in opty's NLP, with the same cost
    assert np.abs(prob.con(w)).max() < 1e-8
    assert prob.obj(w) == pytest.approx(result.objective, rel=1e-12)
    # a KKT point of opty's NLP: grad f = J^T y + (multipliers of the active bounds)
    rows, cols = prob.jacobianstructure()
    J = np.zeros((len(prob.con(w)), len(w)))
    np.add.at(J, (rows, cols), prob.jacobian(w))
    lb, ub = np.asarray(prob.lower_bound), np.asarray(prob.upper_bound)
    active = np.flatnonzero((w - lb < 1e-6) | (ub - w < 1e-6))
    basis = np.hstack([J.T, np.eye(len(w))[:, active]])
    grad = prob.obj_grad(w)
    y, *_ = np.linalg.lstsq(basis, grad, rcond=None)
    assert np.linalg.norm(basis @ y - grad) < 1e-6 * np.linalg.norm(grad)
    # and opty itself, started 1e-3 away, returns to it (IPOPT's limited-memory Hessian
    # in opty: to about 1e-8)
    prob.add_option("print_level", 0)
    prob.add_option("tol", 1e-10)
    _, info = prob.solve(w + 1e-3 * np.random.default_rng(2).standard_normal(len(w)))
    assert info["status"] in (0, 1)
    assert info["obj_val"] == pytest.approx(result.objective, rel=1e-7)


def test_collocated_is_another_nlp_of_the_same_problem(solved):
    """The default collocates the dependent accelerations: its optimum misses opty's
    difference quotients by O(h), and the two optima differ."""
    results, (prob, states) = solved
    problem, result = results["collocated"]
    w = opty_vector(problem, result, prob, states)
    assert np.abs(prob.con(w)).max() > 1e-3
    other = results["differenced"][1].objective
    assert abs(result.objective - other) > 1e-4 * other
    # the unknowns: no dependent accelerations in opty's form
    nlp_c, nlp_d = problem.nlp, results["differenced"][0].nlp
    assert nlp_c.n - nlp_d.n == NODES - 1 and nlp_c.m - nlp_d.m == NODES - 1


def test_differenced_is_refused_where_it_means_nothing():
    with pytest.raises(InputError, match="backward-euler and midpoint"):
        Collocation("hermite-simpson", dependent_speeds="differenced")
    with pytest.raises(InputError, match="dependent_speeds must be one of"):
        Collocation("midpoint", dependent_speeds="finite")
