"""The compiled model's public numeric interface (what every analysis uses).

Checked on the zoo four-bar (unreduced Kane equations: holonomic constraints, dependent
speeds, multipliers): per-thread work data, constraint residuals and Jacobians against
finite differences, block derivatives against the kernels, batch evaluation against the
one-state methods, and the shared solves against the right-hand side.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from symbody.compilation import compile
from symbody.compilation.linear_algebra import determinant, pivoted_columns, solve
from symbody.compilation.numeric_model import solve_dependent, solve_dynamics
from symbody.models import four_bar


@pytest.fixture(scope="module")
def fb():
    mdl = four_bar()
    model = compile(mdl.eom)
    P = model.constants_array(mdl.constants)
    x = model.consistent_state(model.state_array(mdl.initial_state), P)
    x[-1] = 0.7                      # a moving state
    return model, P, x


def _fd(f, x, h=1e-6):
    """Central differences of f at x (columns: the entries of x)."""
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.stack(cols, axis=-1)


def test_workspace_is_per_thread_and_results_agree(fb):
    model, P, x = fb
    ws = model.workspace()
    assert model.workspace() is ws                     # one per thread, reused
    ref = model.rhs(0.0, x, P)
    rng = np.random.default_rng(3)
    states = [x + 1e-3 * rng.standard_normal(x.size) for _ in range(50)]
    serial = [model.rhs(0.0, s, P) for s in states]
    others, results = [], {}

    def work(k):
        others.append(model.workspace())
        results[k] = [model.rhs(0.0, s, P) for s in states]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert all(w is not ws for w in others) and len({id(w) for w in others}) == 3
    for k in range(3):
        np.testing.assert_array_equal(np.array(results[k]), np.array(serial))
    np.testing.assert_array_equal(model.rhs(0.0, x, P), ref)   # rhs returns fresh arrays


def test_holonomic_residual_and_jacobian(fb):
    model, P, x = fb
    q = x[:model.N] + 0.01
    fh, J = model.holonomic(q, P)
    np.testing.assert_array_equal(fh, model.holonomic_residual(q, P))
    np.testing.assert_array_equal(J, model.holonomic_jacobian(q, P))
    # central differences with h = 1e-6 on O(1) trigonometric terms: error ~ h^2 ~ 1e-12
    np.testing.assert_allclose(J, _fd(lambda qq: model.holonomic_residual(qq, P), q), atol=1e-8)


def test_block_derivatives_match_the_kernels_and_differences(fb):
    model, P, x = fb
    q = x[:model.N]
    u = model.full_speeds(q, x[model.N:], P)
    blocks = model.block_derivatives(q, u, P)
    np.testing.assert_allclose(blocks.values["holonomic"], model.holonomic_residual(q, P), atol=1e-14)
    np.testing.assert_allclose(blocks.values["velocity_matrix"],
                               model.velocity_constraint_matrix(q, P), rtol=1e-13, atol=1e-14)
    # derivative of the dynamic block's rest g_d along q against central differences
    # (h = 1e-6: truncation ~1e-12, round-off ~1e-10 on O(10) values)
    dq = blocks.derivatives["dynamic_rest"][:, :model.N]
    fd = _fd(lambda qq: model.block_derivatives(qq, u, P).values["dynamic_rest"], q)
    np.testing.assert_allclose(dq, fd, atol=1e-7)


def test_accelerations_come_from_the_shared_dynamic_solve(fb):
    model, P, x = fb
    q = x[:model.N]
    u = model.full_speeds(q, x[model.N:], P)
    assert model.has_multipliers
    ud, lam = model.accelerations(q, u, P)
    v = model.block_derivatives(q, u, P).values
    sol, info = solve_dynamics(v["dynamic_mass"], -v["dynamic_rest"], v["acceleration_matrix"],
                               -v["acceleration_rest"])
    assert info == 0
    # two evaluations of the same expressions by different kernels: round-off only
    np.testing.assert_allclose(sol[:model.o], ud, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sol[model.o:], lam, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model.rhs(0.0, x, P)[model.N:], ud[:model.p], rtol=1e-12)


def test_dependent_speeds_and_batch_evaluation(fb):
    model, P, x = fb
    B = model.velocity_constraint_matrix(x[:model.N], P)
    u = model.full_speeds(x[:model.N], x[model.N:], P)
    ud, info = solve_dependent(B, np.zeros(model.m), x[model.N:])
    assert info == 0
    np.testing.assert_allclose(ud, u[model.p:], rtol=1e-13)
    X = np.stack([x, x + [0.0, 0.0, 0.0, 0.3]])
    X[1] = model.consistent_state(X[1], P)
    values = model.evaluate_samples(np.zeros(2), X, P)
    for i in range(2):
        np.testing.assert_allclose(values.speeds[i], model.full_speeds(X[i, :3], X[i, 3:], P), rtol=1e-13)
        np.testing.assert_allclose(values.multipliers[i], model.accelerations(X[i, :3], values.speeds[i], P)[1],
                                   rtol=1e-10)
    np.testing.assert_allclose(model.speeds_many(np.zeros(2), X, P), values.speeds, rtol=1e-15)
    assert np.abs(values.velocity).max() < 1e-12 and np.abs(values.holonomic).max() < 1e-12


def test_dependent_set_chooser_and_lapack_helpers():
    A = np.array([[1.0, 0.0, 1e-9], [0.0, 1e-9, 1.0]])
    cols, rank = pivoted_columns(A)
    assert cols == (0, 2) and rank > 0.5
    assert pivoted_columns(np.array([[1.0, 2.0], [2.0, 4.0]]))[1] < 1e-12       # rank lost
    M = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]])
    assert determinant(M) == pytest.approx(np.linalg.det(M), rel=1e-14)
    x, info = solve(M.copy(), np.array([1.0, 2.0, 3.0]))
    assert info == 0 and np.allclose(M @ x, [1.0, 2.0, 3.0])
    assert solve(np.zeros((2, 2)), np.ones(2))[1] > 0
