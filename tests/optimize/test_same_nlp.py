"""Issue 40 §4: symbody's collocation NLP is the NLP a CasADi user writes by hand.

The pendulum swing-up of opty's gallery (backward Euler) written directly in CasADi, in
opty's order (all θ, all ω, all T; the kinematic defects, then the dynamic ones) and in
symbody's (node by node; interval by interval): the objective, its gradient, the
constraints, their Jacobian and the Hessian of the Lagrangian equal symbody's at a random
point once the unknowns and rows are permuted; and from one random start IPOPT takes the
same path in symbody's NLP as in the hand-written one in the same order.
"""

from __future__ import annotations

import numpy as np
import pytest

from symbody.optimize import examples
from systems.casadi_swing_up import swing_up_nlp

pytest.importorskip("cyipopt", reason="symbody[optimize] (cyipopt-wheels) is not installed")
ca = pytest.importorskip("casadi")

NODES = 501                # the gallery's grid, for the solve
CHECK_NODES = 41           # the values and derivatives are checked on a smaller one
DURATION = 10.0


def hand_written(order: str, nodes: int = NODES):
    """(w, f, g, lbx, ubx) of the swing-up in CasADi (systems/casadi_swing_up.py)."""
    return swing_up_nlp(order, nodes, DURATION)


def permutations(problem, order: str):
    """(columns of symbody's w for the hand-written unknowns, symbody's rows for the
    hand-written rows)."""
    nlp = problem.nlp
    cols = np.column_stack([nlp.iX[:, 0], nlp.iX[:, 1], nlp.iR[:, 0]])     # (N, 3)
    cols = cols.T.ravel() if order == "opty" else cols.ravel()
    dynamics, _ = nlp.constraint_blocks[0]
    instances, _ = nlp.constraint_blocks[-1]
    rows = dynamics.rows.T.ravel() if order == "opty" else dynamics.rows.ravel()
    return cols, np.concatenate([rows, instances.rows.ravel()])


@pytest.fixture(scope="module")
def pendulum():
    return examples.pendulum_swing_up(num_nodes=NODES, duration=DURATION)


@pytest.mark.parametrize("order", ["opty", "symbody"])
def test_values_and_derivatives_equal_the_hand_written_nlp(order):
    problem, _ = examples.pendulum_swing_up(num_nodes=CHECK_NODES, duration=DURATION)
    nlp = problem.nlp
    w, f, g, lbx, ubx = hand_written(order, CHECK_NODES)
    assert (nlp.n, nlp.m) == (w.shape[0], g.shape[0])
    cols, rows = permutations(problem, order)
    rng = np.random.default_rng(40)
    x = rng.uniform(-2.0, 2.0, nlp.n)
    lam = rng.uniform(-1.0, 1.0, nlp.m)
    sigma = 0.6
    lag = sigma * f + ca.dot(ca.DM(lam[rows]), g)
    F = ca.Function("hand", [w], [f, ca.gradient(f, w), g, ca.jacobian(g, w), ca.hessian(lag, w)[0]])
    f_h, grad_h, g_h, J_h, H_h = (np.asarray(ca.DM(v)) for v in F(x[cols]))
    assert nlp.objective(x) == pytest.approx(f_h.item(), rel=1e-13)
    np.testing.assert_allclose(nlp.gradient(x)[cols], grad_h.ravel(), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(nlp.constraints(x)[rows], g_h.ravel(), rtol=1e-12, atol=1e-12)
    jr, jc = nlp.jacobianstructure()
    J = np.zeros((nlp.m, nlp.n))
    np.add.at(J, (jr, jc), nlp.jacobian(x))
    np.testing.assert_allclose(J[np.ix_(rows, cols)], J_h, rtol=1e-12, atol=1e-12)
    hr, hc = nlp.hessianstructure()
    H = np.zeros((nlp.n, nlp.n))
    np.add.at(H, (hr, hc), nlp.hessian(x, lam, sigma))
    H = H + np.tril(H, -1).T
    np.testing.assert_allclose(H[np.ix_(cols, cols)], H_h, rtol=1e-12, atol=1e-12)
    # the bounds, and the start IPOPT gets (symbody clips the guess into the bounds, which
    # IPOPT's own projection into the interior makes the same start)
    np.testing.assert_array_equal(np.maximum(nlp.lb[cols], -np.inf), np.where(lbx < -1e19, -1e20, lbx))
    np.testing.assert_array_equal(nlp.ub[cols], np.where(ubx > 1e19, 1e20, ubx))
    np.testing.assert_array_equal(nlp.cl, 0.0)
    np.testing.assert_array_equal(nlp.cu, 0.0)


def test_same_start_same_ipopt_path(pendulum):
    """From one random start: the same optimum as CasADi's NLP in either order, and in the
    same order the same IPOPT iterations (the order changes MUMPS's pivots and so the
    round-off; from harder starts that can change the path, see docs/optimize.md)."""
    problem, _ = pendulum
    rng = np.random.default_rng(3)
    start = np.column_stack([rng.uniform(-np.pi, np.pi, NODES), rng.uniform(-1, 1, NODES),
                             rng.uniform(-2, 2, NODES)])
    theta, omega = problem.eom.q[0], problem.eom.u[0]
    torque = problem.eom.specifieds[0]
    ours = problem.solve({theta: start[:, 0], omega: start[:, 1], torque: start[:, 2]},
                         progress=False)
    assert ours.success
    for order in ("symbody", "opty"):
        w, f, g, lbx, ubx = hand_written(order)
        solver = ca.nlpsol("hand", "ipopt", {"x": w, "f": f, "g": g},
                           {"print_time": False, "ipopt.print_level": 0, "ipopt.sb": "yes",
                            "ipopt.tol": 1e-8})
        x0 = start.T.ravel() if order == "opty" else start.ravel()
        sol = solver(x0=x0, lbx=lbx, ubx=ubx, lbg=0.0, ubg=0.0)
        iterations = solver.stats()["iter_count"]
        assert solver.stats()["success"]
        assert float(sol["f"]) == pytest.approx(ours.objective, rel=1e-8), order
        if order == "symbody":
            assert abs(iterations - ours.iterations) <= 2, (iterations, ours.iterations)
