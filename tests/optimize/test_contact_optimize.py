"""Issue 37: optimal control through a smooth contact (the planar hopper's hop to an apex).

The optimum of :func:`symbody.optimize.examples.hopper_hop` on a coarse grid is checked
against the physics, not stored numbers: its Hermite-Simpson defects recomputed with the
simulation's right-hand side (``sb.compile``, not the NLP's kernels), the ground force
never pulling and vanishing in the flight, the apex reached with the foot off the ground.
The NLP's exact derivatives through the contact (constraint Jacobian, Hessian of the
Lagrangian) are checked against central finite differences at points in contact.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm

import symbody as sb
from symbody.optimize import examples

pytest.importorskip("cyipopt", reason="symbody[optimize] (cyipopt-wheels) is not installed")

NODES, DURATION, RISE, STRIDE = 21, 0.5, 0.25, 0.0


@pytest.fixture(scope="module")
def hop():
    problem, guess = examples.hopper_hop(num_nodes=NODES, duration=DURATION, rise=RISE,
                                         stride=STRIDE)
    return problem, problem.solve(guess, progress=False)


def _points(problem, w):
    """States (P, 10) and inputs (P, 2) at every collocation point (nodes and midpoints)."""
    nlp = problem.nlp
    return w[nlp.iX], w[nlp.iR]


def test_the_hop_is_feasible_and_reaches_its_apex(hop):
    problem, result = hop
    assert result.success, result.message
    hopper = sb.models.planar_hopper()
    eom = hopper.eom
    X, R = _points(problem, result.w)
    # the Hermite-Simpson defects with the simulation's own right-hand side
    numeric = sb.compile(eom)
    f = np.array([numeric.rhs(0.0, x, hopper.constants, r) for x, r in zip(X, R)])
    h = DURATION / (NODES - 1)
    xk, xc, x1 = X[0:-1:2], X[1::2], X[2::2]
    fk, fc, f1 = f[0:-1:2], f[1::2], f[2::2]
    scale = np.abs(X).max(axis=0) + 1.0
    assert np.abs((xc - (xk + x1) / 2 - h / 8 * (fk - f1)) / scale).max() < 1e-7
    assert np.abs((x1 - xk - h / 6 * (fk + 4 * fc + f1)) / scale).max() < 1e-7
    # the ground force never pulls; it carries the hopper at the start, is gone at the apex
    contact, = eom.contacts
    states = list(eom.q) + list(eom.u)
    normal = sm.lambdify([states], sm.sympify(contact.normal_force).xreplace(hopper.constants))
    Fn = np.array([normal(x) for x in X])
    weight = 11.0 * 9.81
    assert (Fn >= 0.0).all()
    assert Fn[0] == pytest.approx(weight, rel=0.02)
    assert Fn.max() > 1.5 * weight                       # it pushed off
    x, y, theta, phi, l = X[-1, :5]
    foot = y - l * np.cos(theta + phi)
    assert foot > 0.01                                    # in the air at the apex
    assert Fn[-1] < 1e-3 * weight
    height, speed = (sm.lambdify([states], e) for e in examples.hopper_mass_centre(hopper))
    assert height(X[-1]) - height(X[0]) == pytest.approx(RISE, abs=1e-8)
    assert speed(X[-1]) == pytest.approx(0.0, abs=1e-8)
    assert x == pytest.approx(STRIDE, abs=1e-8)


def test_derivatives_through_the_contact_equal_finite_differences(hop):
    problem, result = hop
    nlp = problem.nlp
    rng = np.random.default_rng(37)
    w = result.w + rng.uniform(-1e-3, 1e-3, nlp.n)       # near the optimum, foot in the ground
    lam = rng.uniform(-1.0, 1.0, nlp.m)
    sigma = 0.7
    X, _ = _points(problem, w)
    # columns of the first points (the stance: the contact force is large there)
    cols = np.concatenate([np.concatenate([nlp.iX[k], nlp.iR[k], nlp.iV[k]]) for k in range(6)])
    jr, jc = nlp.jacobianstructure()
    J = np.zeros((nlp.m, nlp.n))
    np.add.at(J, (jr, jc), nlp.jacobian(w))
    hr, hc = nlp.hessianstructure()
    H = np.zeros((nlp.n, nlp.n))
    np.add.at(H, (hr, hc), nlp.hessian(w, lam, sigma))
    H = np.tril(H) + np.tril(H, -1).T

    def lagrangian_gradient(v):              # σ ∇f + Jᵀ λ from the sparse Jacobian
        return sigma * nlp.gradient(v) + np.bincount(jc, nlp.jacobian(v) * lam[jr],
                                                     minlength=nlp.n)

    for c in cols:
        step = 1e-6 * max(1.0, abs(w[c]))
        e = np.zeros(nlp.n)
        e[c] = step
        dc = (nlp.constraints(w + e) - nlp.constraints(w - e)) / (2 * step)
        np.testing.assert_allclose(J[:, c], dc, rtol=1e-5, atol=1e-5 * (1 + np.abs(dc).max()))
        dg = (lagrangian_gradient(w + e) - lagrangian_gradient(w - e)) / (2 * step)
        np.testing.assert_allclose(H[:, c], dg, rtol=1e-5, atol=1e-5 * (1 + np.abs(dg).max()))
    feet = X[:6, 1] - X[:6, 4] * np.cos(X[:6, 2] + X[:6, 3])
    assert (feet < 0).any()                               # the checked points touch the ground


def test_the_nlp_is_the_one_written_by_hand_in_casadi(hop):
    """The hop written by hand in CasADi (Lagrange's equations by CasADi's differentiation,
    the force from its formula; tests/systems/casadi_hopper.py): the same objective,
    constraints, Jacobian and Hessian of the Lagrangian at a point in contact, the same
    bounds, and symbody's optimum feasible there."""
    ca = pytest.importorskip("casadi")
    from systems.casadi_hopper import hand_written, symbody_columns
    problem, result = hop
    nlp = problem.nlp
    _, guess = examples.hopper_hop(num_nodes=NODES, duration=DURATION, rise=RISE, stride=STRIDE)
    w, f, g, lbx, ubx, w0 = hand_written(problem, guess, RISE, STRIDE)
    cols = symbody_columns(problem)
    assert (nlp.n, nlp.m) == (w.shape[0], g.shape[0])
    np.testing.assert_array_equal(np.maximum(lbx, -1e20), np.maximum(nlp.lb[cols], -1e20))
    np.testing.assert_array_equal(np.minimum(ubx, 1e20), np.minimum(nlp.ub[cols], 1e20))
    np.testing.assert_array_equal(w0, problem.initial_vector(guess)[cols])
    rng = np.random.default_rng(3)
    x = result.w + rng.uniform(-1e-2, 1e-2, nlp.n)
    lam = rng.uniform(-1.0, 1.0, nlp.m)
    sigma = 0.6
    hand = ca.Function("hand", [w], [f, g, ca.jacobian(g, w),
                                     ca.hessian(sigma * f + ca.dot(ca.DM(lam), g), w)[0]])
    f_h, g_h, J_h, H_h = (np.asarray(ca.DM(v)) for v in hand(x[cols]))
    assert nlp.objective(x) == pytest.approx(f_h.item(), rel=1e-12)
    np.testing.assert_allclose(nlp.constraints(x), g_h.ravel(), rtol=1e-9, atol=1e-9)
    jr, jc = nlp.jacobianstructure()
    J = np.zeros((nlp.m, nlp.n))
    np.add.at(J, (jr, jc), nlp.jacobian(x))
    np.testing.assert_allclose(J[:, cols], J_h, rtol=1e-9, atol=1e-8)
    hr, hc = nlp.hessianstructure()
    H = np.zeros((nlp.n, nlp.n))
    np.add.at(H, (hr, hc), nlp.hessian(x, lam, sigma))
    H = np.tril(H) + np.tril(H, -1).T
    np.testing.assert_allclose(H[np.ix_(cols, cols)], H_h, rtol=1e-9, atol=1e-7)
    _, g_opt, _, _ = hand(result.w[cols])
    assert np.abs(np.asarray(ca.DM(g_opt))).max() < 1e-8


def test_the_hopper_stands_on_its_leg_force():
    """The zoo's hopper standing with F = M g, τ = 0 (simulated, events at touchdown and
    lift-off): the ground carries the whole weight (M + m_f) g and nothing moves but the
    leg's settling by the smooth force's excess (below 1e-4 m)."""
    hopper = sb.models.planar_hopper()
    F, tau = (next(r for r in hopper.eom.specifieds if r.func.__name__ == n) for n in ("F", "tau"))
    c = {str(k): v for k, v in hopper.constants.items()}
    sol = sb.simulate(sb.compile(hopper.eom), (0.0, 1.0), hopper.initial_state, hopper.constants,
                      specifieds={F: c["M"] * c["g"], tau: 0.0})
    assert sol.success, sol.message
    assert sol.contacts["foot"].normal_force[-1] == pytest.approx((c["M"] + c["m_f"]) * c["g"],
                                                                  rel=1e-6)
    drift = np.abs(sol.q - sol.q[0]).max(axis=0)
    assert drift[:4].max() < 1e-9 and drift[4] < 1e-4
