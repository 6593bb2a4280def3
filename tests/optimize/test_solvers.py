"""The solver option of symbody.optimize: CasADi's IPOPT on symbody's kernels
("ipopt-casadi", the default with CasADi installed), CasADi's IPOPT with CasADi's own
derivatives of the blocks as SX ("ipopt-casadi-sx") and cyipopt-wheels' IPOPT ("cyipopt").

Oracles: the published cart-pole optimum (Kelly 2017 / opty: 59.1907), the opty gallery's
pendulum optimum (15.6416), one solver against another on the same NLP, and CasADi's
algorithmic differentiation of the SX blocks against symbody's symbolic derivative kernels.
"""

from __future__ import annotations

import numpy as np
import pytest

from symbody.errors import InputError
from symbody.optimize import examples
from symbody.optimize.solve import resolve_solver

pytest.importorskip("cyipopt", reason="symbody[optimize] (cyipopt-wheels) is not installed")
ca = pytest.importorskip("casadi")

SOLVERS = ("ipopt-casadi", "ipopt-casadi-sx", "cyipopt")


@pytest.fixture(scope="module")
def cart_pole():
    return examples.cart_pole_swing_up()


def test_all_solvers_reach_the_cart_pole_optimum(cart_pole):
    problem, guess = cart_pole
    results = {s: problem.solve(guess, progress=False, solver=s) for s in SOLVERS}
    for s, r in results.items():
        assert r.success, (s, r.message)
        assert r.info["solver"] == s
        assert r.iterations > 0 and len(r.info["history"]) >= r.iterations
        assert abs(r.objective - 59.1907) < 1e-4, s
        assert r.constraint_violation < 1e-8
    ref = results["cyipopt"]
    for s in SOLVERS[:2]:
        assert abs(results[s].objective - ref.objective) <= 1e-6 * ref.objective
        np.testing.assert_allclose(results[s].inputs, ref.inputs, atol=1e-5)
    assert problem.solve(guess, progress=False).info["solver"] == "ipopt-casadi"   # default


def test_pendulum_optimum_with_casadis_own_derivatives():
    """opty's gallery pendulum (backward Euler, N = 501) with CasADi's AD of the SX blocks:
    15.64155374 as opty and CasADi give it (test_collocation checks the default solver)."""
    problem, guess = examples.pendulum_swing_up()
    r = problem.solve(guess, progress=False, solver="ipopt-casadi-sx")
    assert r.success and r.info["solver"] == "ipopt-casadi-sx"
    assert r.objective == pytest.approx(15.64155374, rel=1e-6)
    assert abs(r.trajectory.q[-1, 0] - np.pi) < 1e-8 and r.constraint_violation < 1e-8


def test_sx_nlp_is_symbodys_nlp_and_casadi_derivatives_equal_the_kernels():
    """Row for row the same constraints and objective, and CasADi's AD of the SX blocks
    equals symbody's compiled Jacobian and Hessian of the Lagrangian (constrained sleigh,
    Hermite–Simpson: multipliers, several kinds of blocks)."""
    from symbody.optimize.casadi_nlp import CasadiNLP

    problem, _ = examples.sleigh_parking(num_nodes=11)
    nlp = problem.nlp
    sx = CasadiNLP(nlp)
    rng = np.random.default_rng(3)
    w = rng.uniform(-1, 1, nlp.n)
    lam = rng.uniform(-1, 1, nlp.m)
    sigma = 0.7
    lag = sigma * sx.f + ca.dot(ca.DM(lam), sx.g)
    F = ca.Function("nlp_check", [sx.w], [sx.f, sx.g, ca.jacobian(sx.g, sx.w),
                                          ca.gradient(sx.f, sx.w), ca.hessian(lag, sx.w)[0]])
    f, g, J_ad, grad_ad, H_ad = (np.asarray(ca.DM(v)) for v in F(w))
    assert abs(f.item() - nlp.objective(w)) <= 1e-12 * max(1.0, abs(nlp.objective(w)))
    np.testing.assert_allclose(g.ravel(), nlp.constraints(w), atol=1e-12, rtol=1e-12)
    rows, cols = nlp.jacobianstructure()
    J = np.zeros((nlp.m, nlp.n))
    np.add.at(J, (rows, cols), nlp.jacobian(w))
    np.testing.assert_allclose(J_ad, J, atol=1e-11, rtol=1e-11)
    np.testing.assert_allclose(grad_ad.ravel(), nlp.gradient(w), atol=1e-11, rtol=1e-11)
    hr, hc = nlp.hessianstructure()
    H = np.zeros((nlp.n, nlp.n))
    np.add.at(H, (hr, hc), nlp.hessian(w, lam, sigma))
    H = H + np.tril(H, -1).T
    np.testing.assert_allclose(H_ad, H, atol=1e-10, rtol=1e-10)


def test_solver_names_and_statuses(cart_pole):
    problem, guess = cart_pole
    with pytest.raises(InputError, match="solver must be 'auto' or one of"):
        problem.solve(guess, progress=False, solver="snopt")
    assert resolve_solver("auto") == "ipopt-casadi"
    r = problem.solve(guess, progress=False, max_iter=3)
    assert r.status == -1 and not r.success and "maximum number of iterations" in r.message
    calls = []
    r = problem.solve(guess, progress=lambda done, total, message: calls.append(message))
    assert r.success and any("objective" in c for c in calls)
    # IPOPT options pass through (with or without CasADi's "ipopt." prefix)
    r = problem.solve(guess, progress=False, options={"mu_strategy": "adaptive",
                                                      "ipopt.acceptable_tol": 1e-6})
    assert r.success and abs(r.objective - 59.1907) < 1e-4


def test_without_casadi_auto_falls_back_to_cyipopt(monkeypatch):
    import sys

    from symbody.optimize import OptimizationDependencyError

    monkeypatch.setitem(sys.modules, "casadi", None)          # import casadi fails
    assert resolve_solver("auto") == "cyipopt"
    with pytest.raises(OptimizationDependencyError, match="pip install casadi"):
        resolve_solver("ipopt-casadi")
