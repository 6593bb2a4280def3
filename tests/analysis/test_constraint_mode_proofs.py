"""The constraint modes do what they say, proven on the integrator's own states.

* ``project``: the states the integrator itself evaluates (recorded through a callable
  specified input, which ``simulate`` calls with the state at every right-hand-side
  evaluation) stay on f_h = 0 up to the drift of one step, and the run differs from a
  ``none`` run (the projected state is fed back to the solver, not only to the output);
* ``baumgarte``: the residual obeys d/dt f_h = -α f_h + (drift source) exactly;
* ``dae``: IDA's own residual scales with the tolerances; the polished one is round-off.

The drift source for the first two is a deliberately inconsistent hand-written model:
f_h = q2 - q1 - c - k t with the velocity constraint u2 - u1 = 0 (a hand derivation that
forgot the explicit time term), so a plain integration drifts as f_h = -k t, exactly and
at any tolerance, and the closed forms below are exact.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody import Solver
from systems.seed_eoms import four_bar

t = me.dynamicsymbols._t
DATA = Path(__file__).parents[1] / "data"
FB = json.loads((DATA / "book_reference.json").read_text())["four_bar"]

K_DRIFT = 0.3            # d/dt f_h = -K_DRIFT without enforcement (m/s)
P = {"k": K_DRIFT, "c": 0.1, "m": 1.0}


@pytest.fixture(scope="module")
def drifting():
    q1, q2, u1, u2, F = me.dynamicsymbols("q1 q2 u1 u2 F")
    k, c, m = sm.symbols("k c m")
    eom = sb.EquationsOfMotion(
        [q1], [u1], [q1.diff(t) - u1, q2.diff(t) - u2], [m * u1.diff(t) - F, m * u2.diff(t)],
        constraints=sb.ConstraintEquations(q_dep=[q2], u_dep=[u2], holonomic=[q2 - q1 - c - k * t],
                                           velocity=[u2 - u1]))
    return sb.compile(eom, constants=[k, c, m])


def _residual(tt, X):
    """f_h = q2 - q1 - c - k t at times tt (k,) and states X (k, 3)."""
    return X[:, 1] - X[:, 0] - P["c"] - P["k"] * tt


def _recording():
    seen: list = []

    def force(tt, x):
        seen.append(np.concatenate([[tt], np.asarray(x, dtype=float)]))
        return [0.5]
    return seen, force


@pytest.mark.parametrize("method", ["RK45", "DOP853"])
def test_project_keeps_the_integrators_own_states_on_the_constraint(drifting, method):
    tf, h = 2.0, 0.05
    seen, force = _recording()
    tr = sb.simulate(drifting, (0.0, tf), [0.0, 0.1, 0.4], P, constraints="project",
                     solver=sb.Solver(method=method, max_step=h, rtol=1e-8, atol=1e-10),
                     specifieds=force)
    assert tr.success, tr.message
    S = np.array(seen)
    res = np.abs(_residual(S[:, 0], S[:, 1:]))
    # (explicit methods only: this model drifts by K_DRIFT h every step, so the projection
    # restarts the solver after every step, and a restarted BDF begins again at order 1 with
    # a tiny first step: minutes of run time, reported in the notes)
    # each step starts on f_h = 0 and drifts at K_DRIFT within the step (<= h); the implicit
    # methods' first Newton guess extrapolates the previous step's polynomial over the new one,
    # which carries that step's drift too: |f_h| <= 2 K_DRIFT h = 0.03 (measured: RK 0.015,
    # BDF 0.015, Radau 0.03), while without feedback of the projected state it grows to
    # K_DRIFT tf = 0.6
    assert res.max() <= 2 * K_DRIFT * h * (1 + 1e-9), \
        "project mode: the integrator's states drift (projected state not fed back to the solver?)"
    assert np.abs(tr.holonomic_residuals).max() < 1e-13        # outputs: Newton to round-off
    seen_none, force = _recording()
    none = sb.simulate(drifting, (0.0, tf), [0.0, 0.1, 0.4], P, constraints="none",
                       solver=sb.Solver(method=method, max_step=h, rtol=1e-8, atol=1e-10),
                       specifieds=force)
    S = np.array(seen_none)
    # the plain run drifts exactly as f_h = -k t (the integrators are exact on this linear
    # drift) up to the implicit methods' finite-difference Jacobian, which perturbs states by
    # sqrt(eps) |x| ~ 1.5e-8 x 2: atol 1e-7
    np.testing.assert_allclose(_residual(S[:, 0], S[:, 1:]), -K_DRIFT * S[:, 0], atol=1e-7)
    np.testing.assert_allclose(none.holonomic_residuals[:, 0], -K_DRIFT * none.t, atol=1e-8)


@pytest.mark.parametrize("alpha", [2.0, 8.0])
def test_baumgarte_residual_decays_at_the_rate_its_gain_sets(drifting, alpha):
    """q_dep' <- q_dep' - α J_dep^-1 f_h gives d/dt f_h = -k - α f_h: f_h = -(k/α)(1 - e^{-α t})."""
    T = np.linspace(0.0, 2.0, 21)
    tr = sb.simulate(drifting, (0.0, 2.0), [0.0, 0.1, 0.4], P,
                     constraints=sb.Baumgarte(alpha=alpha),
                     solver=sb.Solver(rtol=1e-10, atol=1e-12),
                     specifieds=[0.5], t_eval=T)
    assert tr.success, tr.message
    expected = -(K_DRIFT / alpha) * (1.0 - np.exp(-alpha * T))
    # an O(1) linear ODE integrated at rtol 1e-10: global error ~1e-10; 1e-8 leaves margin
    # and is 1e-6 of the O(0.01-0.1) residual a wrong gain or sign would change
    np.testing.assert_allclose(tr.holonomic_residuals[:, 0], expected, atol=1e-8,
                               err_msg=f"Baumgarte: f_h does not follow the closed form for alpha = {alpha}")


@pytest.fixture(scope="module")
def four_bar_model():
    return sb.compile(four_bar("unreduced")["eom"])


def _x0():
    return np.array([np.deg2rad(10.0), np.deg2rad(10.0), np.deg2rad(-150.0), 0.0])


def test_project_changes_the_motion_of_the_four_bar(four_bar_model):
    """At the book's loose tolerances the projected run's crank angle differs from the plain run
    (about 1 rad apart within 30 s); a projection that only touched the output samples would
    leave q_ind exactly as in the plain run."""
    T = np.linspace(0.0, 30.0, 31)
    loose = dict(solver=Solver(rtol=1e-3, atol=1e-6))
    none = sb.simulate(four_bar_model, (0.0, 30.0), _x0(), FB["p"], constraints="none", t_eval=T, **loose)
    proj = sb.simulate(four_bar_model, (0.0, 30.0), _x0(), FB["p"], constraints="project", t_eval=T, **loose)
    crank = 0
    gap = np.abs(proj.q[:, crank] - none.q[:, crank]).max()
    assert gap > 0.3, f"project mode gives the plain run's crank angle (max difference {gap:.2g} rad)"


@pytest.mark.parametrize("tol", [1e-5, 1e-8])
def test_dae_residual_is_at_the_level_of_the_tolerances(four_bar_model, tol):
    T = np.linspace(0.0, 5.0, 51)
    raw = sb.simulate(four_bar_model, (0.0, 5.0), _x0(), FB["p"],
                      constraints=sb.DAE(polish_algebraic=False), t_eval=T,
                      solver=sb.Solver(rtol=tol, atol=tol))
    assert raw.success, raw.message
    r = raw.max_holonomic_residual
    # IDA's Newton iteration on the algebraic rows stops when the weighted correction is below
    # its tolerance (algebraic atol 0.01 (atol + rtol), weights over all states): measured
    # 1.1-1.5 x tol on this mechanism from tol = 1e-4 to 1e-10; [0.01, 10] x tol says "at the
    # level of the tolerance" with margin either side, and fails for residuals that do not scale
    assert 0.01 * tol < r < 10 * tol, f"dae: IDA's residual {r:.3g} is not at the level of tol = {tol}"
    polished = sb.simulate(four_bar_model, (0.0, 5.0), _x0(), FB["p"], constraints="dae", t_eval=T,
                           solver=sb.Solver(rtol=tol, atol=tol))
    # Newton's method on f_h (lengths ~0.1-1 m) converges to round-off: a few ulp of 1 m
    assert polished.max_holonomic_residual < 1e-14
