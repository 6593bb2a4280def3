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

    def lagrangian_gradient(v):
        Jv = np.zeros((nlp.m, nlp.n))
        np.add.at(Jv, (jr, jc), nlp.jacobian(v))
        return sigma * nlp.gradient(v) + Jv.T @ lam

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
