"""Legendre-Gauss-Radau collocation (its scheme, its error order against a simulation) and
the replay of an optimal control through simulate (result.simulate())."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sm
from numpy.polynomial import legendre
from sympy.physics.vector import dynamicsymbols

import symbody as sb
from symbody.errors import InputError
from symbody.optimize import Collocation, Cost, OptimalControlProblem, examples
from symbody.optimize.replay import input_interpolation
from symbody.optimize.transcription import radau_points

pytest.importorskip("cyipopt", reason="symbody[optimize] (cyipopt-wheels) is not installed")


@pytest.mark.parametrize("s", [3, 4, 5])
def test_radau_scheme_against_its_definition(s):
    """Radau IIA: c the roots of P_s - P_{s-1} on [0, 1] (c_s = 1, s = 3: (4 ∓ √6)/10); b
    integrates degree 2s - 2 exactly; D differentiates degree s exactly; e0 interpolates
    degree s - 1 at 0."""
    c, b, D, e0 = radau_points(s)
    coef = np.zeros(s + 1)
    coef[s], coef[s - 1] = 1.0, -1.0
    assert np.abs(legendre.legval(2 * c - 1, coef)).max() < 1e-12
    assert c[-1] == 1.0 and np.all(np.diff(c) > 0) and c[0] > 0
    if s == 3:
        np.testing.assert_allclose(c[:2], [(4 - 6 ** 0.5) / 10, (4 + 6 ** 0.5) / 10], rtol=1e-14)
    for k in range(2 * s - 1):
        assert (b * c ** k).sum() == pytest.approx(1.0 / (k + 1), rel=1e-12)
    assert (b * c ** (2 * s - 1)).sum() != pytest.approx(1.0 / (2 * s), rel=1e-6)
    tau = np.concatenate([[0.0], c])
    for k in range(s + 1):
        np.testing.assert_allclose(D @ tau ** k, k * c ** max(k - 1, 0) * (k > 0), atol=1e-11)
    for k in range(s):
        assert e0 @ c ** k == pytest.approx(1.0 if k == 0 else 0.0, abs=1e-12)


def _pendulum(transcription, num_nodes):
    """The torque-driven pendulum swung up in 3 s, |T| <= 8."""
    eom, constants = examples.pendulum_equations()
    theta, = eom.q
    omega, = eom.u
    T, = eom.specifieds
    return OptimalControlProblem(
        eom, num_nodes=num_nodes, duration=3.0, objective=T ** 2,
        instance_constraints=[theta.func(0.0), theta.func(3.0) - math.pi, omega.func(0.0),
                              omega.func(3.0)],
        bounds={T: (-8.0, 8.0)}, known_parameters=constants, transcription=transcription)


@pytest.mark.parametrize("transcription, order", [("radau", 5), (Collocation("radau", points=4), 7),
                                                  ("hermite-simpson", 4)])
def test_error_order_against_the_replay(transcription, order):
    """The optimal states against simulate with the optimal inputs (the transcription's own
    interpolation) at N and 2N intervals: the deviation falls like h^order (checked loosely,
    observed order >= order - 1), and the optimum at 2N agrees with Hermite-Simpson's."""
    dev, obj = {}, {}
    for n in (10, 20):
        problem = _pendulum(transcription, n + 1)
        res = problem.solve({"theta": 0.0}, progress=False, tol=1e-12)
        assert res.success, res.message
        rep = res.simulate()
        assert rep.trajectory.status == 0
        np.testing.assert_allclose(rep.trajectory.t, res.trajectory.t, rtol=0, atol=1e-12)
        dev[n], obj[n] = rep.node_deviation, res.objective
        assert rep.final_deviation <= rep.node_deviation
    observed = math.log2(dev[10] / dev[20])
    assert observed >= order - 1, (dev, observed)
    other = _pendulum("hermite-simpson" if order != 4 else "radau", 21).solve(
        {"theta": 0.0}, progress=False)
    assert abs(obj[20] - other.objective) < 5e-4 * other.objective


def test_replay_interpolation_is_the_transcriptions_own():
    """Zero-order hold for backward Euler and midpoint, the quadratic for Hermite-Simpson,
    Radau's polynomial through its collocation points: at the points each gives the NLP's
    inputs; the Radau input at t0 is its extrapolation."""
    for tr in ("backward-euler", "midpoint", "hermite-simpson", "radau4"):
        problem = _pendulum(tr, 6)
        nlp = problem.nlp
        w = np.random.default_rng(1).uniform(-1, 1, nlp.n)
        R = w[nlp.iR[:, 0]]
        r = input_interpolation(problem, nlp, w)
        h = 3.0 / 5
        tp = nlp.point_kappa * h
        if tr == "backward-euler":
            got = [r(t)[0] for t in tp[1:]]
            np.testing.assert_allclose(got, R[1:], atol=1e-12)
            assert r(0.5 * h)[0] == pytest.approx(R[1])
        elif tr == "midpoint":
            assert r(0.3 * h)[0] == pytest.approx((R[0] + R[1]) / 2)
            assert r(4.9 * h)[0] == pytest.approx((R[4] + R[5]) / 2)
        else:
            got = [r(t)[0] for t in tp[1:]]
            np.testing.assert_allclose(got, R[1:], atol=1e-10)
        if tr == "radau4":
            c, _, _, e0 = radau_points(4)
            assert r(0.0)[0] == pytest.approx(e0 @ R[1:5])


def test_radau_options_are_checked():
    assert Collocation("radau5").points == 5 and Collocation("radau5").method == "radau"
    assert Collocation("lgr").points == 3
    with pytest.raises(InputError, match="points = 3, 4 or 5"):
        Collocation("radau", points=2)
    with pytest.raises(InputError, match="points = 3, 4 or 5"):
        Collocation("radau9")


@pytest.mark.parametrize("transcription", ["backward-euler", "midpoint", "hermite-simpson",
                                           "radau", "radau5"])
def test_double_integrator_analytic_optima_stated_by_name(transcription):
    """x'' = u from rest at 0 to rest at 1: min ∫ u² dt over 1 s is 12 (u = 6 - 12 t; exact for
    Hermite-Simpson and Radau, whose polynomials hold the cubic path: their replay deviates by
    round-off only); the least time with abs(u) <= 1 is 2 s (bang-bang)."""
    t = dynamicsymbols._t
    x, v, u = dynamicsymbols("x v u")
    eom = sb.EquationsOfMotion([x], [v], kinematic=[x.diff(t) - v], dynamic=[v.diff(t) - u])
    energy = OptimalControlProblem(eom, num_nodes=6, duration=1.0, objective="u**2",
                                   instance_constraints=["x(0)", "v(0)", "x(1) - 1", "v(1)"],
                                   transcription=transcription)
    res = energy.solve(progress=False)
    assert res.success, res.message
    rep = res.simulate()
    if transcription in ("hermite-simpson", "radau", "radau5"):
        assert res.objective == pytest.approx(12.0, rel=1e-9)
        assert rep.node_deviation < 1e-9
    else:                      # first/second order: h Σ of the discrete optimum
        assert res.objective == pytest.approx(12.0, rel=0.05)
    Tf = sm.Symbol("T_f")
    fastest = OptimalControlProblem(
        eom, num_nodes=21, duration=Tf, objective=Cost(mayer="T_f"),
        instance_constraints=["x(0)", "v(0)", "x(T_f) - 1", "v(T_f)"],
        bounds={"u": (-1, 1), "T_f": (0.1, 10)}, transcription=transcription)
    res = fastest.solve({"T_f": 1.0}, progress=False)
    assert res.success, res.message
    assert res.duration == pytest.approx(2.0, rel=5e-3)
    assert np.abs(res.inputs).max() <= 1 + 1e-8
