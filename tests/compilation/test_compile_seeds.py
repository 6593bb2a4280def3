"""symbody.compile on the seed chapters' hand-derived equations: numbers against the book."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import sympy as sm

from symbody.compilation import available_backends, compile, make_function
from systems.seed_eoms import double_rod_pendulum, four_bar, snakeboard

REF = json.loads((Path(__file__).parents[1] / "data" / "book_reference.json").read_text())
FB, SB, DR = REF["four_bar"], REF["snakeboard"], REF["double_rod_pendulum"]


def _four_bar_x0():
    q = np.deg2rad(FB["q0_deg"])
    return np.array([*q, FB["u1_0"]])


@pytest.fixture(scope="module")
def fb_reduced():
    return compile(four_bar("reduced")["eom"])


@pytest.fixture(scope="module")
def fb_unreduced():
    return compile(four_bar("unreduced")["eom"])


@pytest.fixture(scope="module")
def snake():
    return compile(snakeboard()["eom"])


@pytest.fixture(scope="module")
def pend():
    return compile(double_rod_pendulum()["eom"])


# ---------------------------------------------------------------- four-bar
def test_four_bar_layout(fb_reduced):
    m = fb_reduced
    assert [str(s) for s in m.states] == ["q1(t)", "q2(t)", "q3(t)", "u1(t)"]
    assert (m.n, m.M, m.p, m.m, m.N, m.o) == (1, 2, 1, 0, 3, 1)
    assert [str(c) for c in m.constants] == ["l_a", "l_b", "l_c", "l_n", "m", "g"]


def test_four_bar_consistent_state_from_guesses(fb_reduced):
    guess = np.array([np.deg2rad(10.0), np.deg2rad(10.0), np.deg2rad(-150.0), 0.0])
    x = fb_reduced.consistent_state(guess, FB["p"])
    np.testing.assert_allclose(np.rad2deg(x[:3]), FB["q0_deg"], atol=1e-6)
    assert np.abs(fb_reduced.holonomic_residual(x[:3], FB["p"])).max() < 1e-13


def test_four_bar_rhs_matches_book(fb_reduced, fb_unreduced):
    x0 = _four_bar_x0()
    np.testing.assert_allclose(fb_reduced.rhs(0.0, x0, FB["p"]), FB["rhs_at_x0"], atol=1e-7)
    np.testing.assert_allclose(fb_unreduced.rhs(0.0, x0, FB["p"]), FB["rhs_at_x0"], atol=1e-7)


def test_four_bar_Md_gd_match_book():
    d = four_bar("reduced")
    eom = d["eom"]
    f = make_function([eom.q, eom.u, d["p"]], [eom.dynamic_mass[0, 0], eom.dynamic_rest[0]])
    x0 = _four_bar_x0()
    np.testing.assert_allclose(f(x0[:3], x0[3:], FB["p"]), FB["Md_gd_at_x0_recomputed"], rtol=1e-7)


def test_four_bar_reduced_and_unreduced_agree_away_from_rest(fb_reduced, fb_unreduced):
    rng = np.random.default_rng(1)
    p = np.array(FB["p"])
    for _ in range(5):
        guess = np.array([rng.uniform(-0.5, 0.5), 0.1, -2.6, rng.normal()])
        x = fb_reduced.consistent_state(guess, p)
        a = fb_reduced.rhs(0.3, x, p)
        b = fb_unreduced.rhs(0.3, x, p)
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


def test_four_bar_unreduced_multipliers_and_constraints(fb_unreduced):
    m = fb_unreduced
    p = np.array(FB["p"])
    x = m.consistent_state(np.array([0.3, 0.1, -2.6, 1.7]), p)
    q, u_ind = x[:3], x[3:]
    u = m.full_speeds(q, u_ind, p)
    assert u.shape == (3,)
    assert np.abs(m.velocity_residual(q, u, p)).max() < 1e-12
    # the velocity constraints of a holonomic system are J_h q' = 0
    assert np.abs(m.holonomic_jacobian(q, p) @ m.qdot(q, u, p)).max() < 1e-12
    udot, lam = m.accelerations(q, u, p)
    assert udot.shape == (3,) and lam.shape == (2,) and np.isfinite(lam).all()
    # acceleration constraints hold: d/dt (J_h u) = 0 by finite differences along the motion
    h = 1e-6
    q2 = q + h * m.qdot(q, u, p)
    u2 = u + h * udot
    assert np.abs(m.velocity_residual(q2, u2, p)).max() < 1e-9
    # the reduced model has no multipliers but the same independent acceleration
    assert np.isclose(udot[0], m.rhs(0.0, x, p)[-1])


# ---------------------------------------------------------------- snakeboard
def test_snakeboard_rhs_matches_book(snake):
    x0 = np.hstack([SB["q0"], SB["us0_u3_u4_u5"]])
    np.testing.assert_allclose(snake.rhs(1.0, x0, SB["p"]), SB["rhs_at_x0_t1_recomputed"], atol=1e-8)
    assert [str(s) for s in snake.dependent_speeds] == ["u1(t)", "u2(t)"]


def test_snakeboard_dependent_speeds_match_book_solution(snake):
    d = snakeboard()
    eval_ur = sm.lambdify((d["q"], d["us"], d["p"]), d["ur_sol"], cse=True)
    rng = np.random.default_rng(2)
    for _ in range(4):
        q = rng.normal(size=5)
        us = rng.normal(size=3)
        u = snake.full_speeds(q, us, SB["p"])
        np.testing.assert_allclose(u[:3], us)
        np.testing.assert_allclose(u[3:], np.squeeze(eval_ur(q, us, SB["p"])), rtol=1e-10, atol=1e-12)


def test_snakeboard_reduced_dependent_accelerations(snake):
    x0 = np.hstack([SB["q0"], SB["us0_u3_u4_u5"]])
    q, us = x0[:5], x0[5:]
    u = snake.full_speeds(q, us, SB["p"])
    udot, lam = snake.accelerations(q, u, SB["p"])
    assert np.isnan(lam).all() and lam.shape == (2,)
    # d/dt of the velocity constraints vanishes along (q', u')
    h = 1e-7
    r1 = snake.velocity_residual(q + h * snake.qdot(q, u, SB["p"]), u + h * udot, SB["p"])
    assert np.abs(r1).max() < 1e-11


# ---------------------------------------------------------------- double-rod pendulum
def test_double_rod_rhs_and_blocks_match_book(pend):
    # book order [g, kl, kt, l, m] (symbols k_l, k_t)
    assert [str(c).replace("_", "") for c in pend.constants] == DR["p_order"]
    q0 = [np.deg2rad(DR["q0_deg_deg_m"][0]), np.deg2rad(DR["q0_deg_deg_m"][1]), DR["q0_deg_deg_m"][2]]
    x0 = np.array([*q0, *DR["u0"]])
    p = DR["p"]
    np.testing.assert_allclose(pend.rhs(DR["t0"], x0, p), DR["rhs_at_x0"], rtol=1e-7, atol=1e-8)
    d = double_rod_pendulum()
    f = make_function([d["q"], d["u"], d["p"]], [d["Md"], d["gd"]])
    Md, gd = f(x0[:3], x0[3:], p)
    np.testing.assert_allclose(Md, DR["Md_at_x0_sign_convention_Frs_jacobian"], atol=1e-7)
    np.testing.assert_allclose(np.ravel(gd), DR["gd_at_x0"], atol=1e-7)
    energy = make_function([d["q"], d["u"], d["p"]], d["KE"] + d["PE"])
    assert abs(energy(x0[:3], x0[3:], p) - DR["initial_energy_J_recomputed"]) < 1e-7


def test_rhs_many_matches_rhs(pend, fb_unreduced, snake):
    rng = np.random.default_rng(3)
    for model, p in ((pend, DR["p"]), (fb_unreduced, FB["p"]), (snake, SB["p"])):
        X = rng.normal(size=(7, len(model.states))) * 0.3
        if model.M:
            X = np.array([model.consistent_state(x + np.r_[0, 0.1, -2.6, 0], p) for x in X])
        t = rng.uniform(size=7)
        many = model.rhs_many(t, X, p)
        single = np.array([model.rhs(ti, xi, p) for ti, xi in zip(t, X)])
        np.testing.assert_allclose(many, single, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("backend", [b for b in ("lambda", "numpy") if b in available_backends()])
def test_backends_agree(backend, fb_unreduced):
    other = compile(four_bar("unreduced")["eom"], backend=backend)
    assert other.backend == backend
    p = np.array(FB["p"])
    x = fb_unreduced.consistent_state(np.array([0.2, 0.1, -2.6, 0.9]), p)
    np.testing.assert_allclose(other.rhs(0.0, x, p), fb_unreduced.rhs(0.0, x, p), rtol=1e-12, atol=1e-12)
    udot, lam = other.accelerations(x[:3], x[3:], p)
    udot2, lam2 = fb_unreduced.accelerations(x[:3], x[3:], p)
    np.testing.assert_allclose(lam, lam2, rtol=1e-10)
    X = np.array([x, x])
    np.testing.assert_allclose(other.rhs_many(0.0, X, p), fb_unreduced.rhs_many(0.0, X, p), rtol=1e-12)
