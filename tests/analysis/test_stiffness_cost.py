"""The default method's switch to Radau compares costs, not evaluation counts
(``analysis/simulation/stiffness.py``): on a mildly stiff small model, where Radau's steps are
a few times the explicit ones and each costs far more than its evaluations (its Python work,
LU factorizations, solves), the run does not switch, or leaves Radau; where Radau's steps are
orders of magnitude longer it is kept.  No timings: counts, messages and a reference."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.analysis.simulation.stiffness import StiffnessMonitor

RHO = 300.0           # the spectral radius of the stand-in problem


class _Explicit:
    """An explicit stepper stand-in held at RK45's stability limit on a model of n states,
    its steps in compiled blocks of ``block`` steps."""

    def __init__(self, n: int, t_bound: float = np.inf) -> None:
        self.t, self.h, self.t_bound = 0.0, 0.9 * StiffnessMonitor.BOUNDARY["RK45"] / RHO, t_bound
        self.y = np.ones(n)
        self.f = -RHO * self.y
        self.fun = lambda t, y: -RHO * np.asarray(y)

    @property
    def step_size(self) -> float:
        return self.h


def _explicit_blocks(monitor, stepper, blocks, nfev=0):
    """Blocks of RK45 steps (6 evaluations each) until the monitor asks for another method."""
    for _ in range(blocks):
        k = min(monitor.steps_to_test(), 10_000)
        stepper.t += k * stepper.h
        nfev += 6 * k
        method = monitor.next_method(stepper, nfev, k)
        if method is not None:
            return nfev, method
    return nfev, None


def _radau(t, n, h, h_next, **counts):
    return SimpleNamespace(t=t, y=np.ones(n), f=-RHO * np.ones(n), step_size=h, h_abs=h_next,
                           **counts)


def test_a_small_model_whose_radau_steps_cost_more_goes_back_at_once():
    """12 states, Radau settled at twice the explicit step: in evaluations alone (10 + n/10 a
    step) Radau would look cheaper than RK45 (6 a step); with its step's work it is not."""
    n = 12
    monitor = StiffnessMonitor("RK45")
    stepper = _Explicit(n)
    nfev, method = _explicit_blocks(monitor, stepper, 100)
    assert method == "Radau"
    h = stepper.h
    assert (monitor.NEWTON + n / monitor.JACOBIAN_STEPS) / (2 * h) < 6 / h    # (the old test)
    nfev += n + 8
    back = monitor.next_method(_radau(stepper.t + 2 * h, n, 2 * h, 2 * h), nfev)
    assert back == "RK45" and not monitor.kept and len(monitor.returns) == 1
    assert "Radau tried from t = " in monitor.note() and "continued with" not in monitor.note()


def test_no_trial_when_the_rest_of_the_run_costs_less_than_a_switch():
    n = 12
    monitor = StiffnessMonitor("RK45")
    stepper = _Explicit(n)
    # (the end 50 explicit steps away: 300 evaluations, less than a switch of a 12-state model)
    assert 6 * 50 < monitor.switch_cost(n)
    nfev, method = 0, None
    for _ in range(200):
        stepper.t_bound = stepper.t + 50 * stepper.h         # always 50 steps from the end
        nfev, method = _explicit_blocks(monitor, stepper, 1, nfev)
        if method is not None:
            break
    assert method is None and monitor.last is None           # no power iteration either
    stepper.t_bound = np.inf                                  # the same problem, a long run
    assert _explicit_blocks(monitor, stepper, 1000, nfev)[1] == "Radau"


def test_radau_kept_goes_back_when_what_it_does_costs_more():
    """Radau kept on a projection, then watched: a touchdown's burst of short steps (one
    window) keeps it, steps that stay short (every window) send the run back."""
    n = 12
    monitor = StiffnessMonitor("RK45")
    stepper = _Explicit(n)
    nfev, method = _explicit_blocks(monitor, stepper, 100)
    assert method == "Radau"
    h, t = stepper.h, stepper.t
    radau = _radau(t, n, h, h, njev=1, nlu=2)
    for taken, proposed in ((h, 10 * h), (10 * h, 100 * h), (100 * h, 100 * h)):
        radau.t += taken                              # its step grows 100-fold and settles
        radau.step_size, radau.h_abs = taken, proposed
        nfev += 7
        assert monitor.next_method(radau, nfev) is None
    assert monitor.kept

    def window(step, evaluations):
        nonlocal nfev
        for _ in range(monitor.WATCH):
            radau.t += step
            radau.nlu += 2
            nfev += evaluations
            method = monitor.next_method(radau, nfev)
            if method is not None:
                return method
        return None

    for _ in range(3):
        assert window(100 * h, 7) is None             # long steps: cheap
    assert window(h / 10, 14) is None                 # a burst of short steps: one window
    assert window(100 * h, 7) is None
    for _ in range(monitor.WINDOWS - 1):              # short steps from now on
        assert window(h, 7) is None
    assert window(h, 7) == "RK45"
    assert "left at t = " in monitor.note() and "continued with" not in monitor.note()


@pytest.fixture(scope="module")
def elastic_pendulum():
    """A point mass on a stiff, heavily damped spring swinging in gravity: radial modes
    -6.9 and -293 s⁻¹ (mildly stiff: RK45's steps held at 11 ms, its swing's accuracy-limited
    steps a few times that), 4 states."""
    q, r = me.dynamicsymbols("q r")
    u, v = me.dynamicsymbols("u v")
    m, L, g, k, c = sm.symbols("m L g k c")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    ground = me.RigidBody("ground", O, N, sm.S(1), (me.inertia(N, 1, 1, 1), O))
    A = N.orientnew("A", "Axis", (q, N.z))
    A.set_ang_vel(N, u * N.z)
    P = O.locatenew("P", r * A.x)
    P.set_vel(N, v * A.x + r * u * A.y)
    system = me.System.from_newtonian(ground)
    system.add_coordinates(q, r)
    system.add_speeds(u, v)
    system.add_kdes(q.diff() - u, r.diff() - v)
    system.add_bodies(me.Particle("bob", P, m))
    system.add_loads((P, -m * g * N.y + (-k * (r - L) - c * v) * A.x))
    system.form_eoms(eom_method=me.KanesMethod)
    model = sb.compile(system)
    return model, {m: 1.0, L: 1.0, g: 9.81, k: 2000.0, c: 300.0}, [0.5, 1.0, 0.0, 0.0]


@pytest.mark.parametrize("tf", [2.0, 20.0])
def test_mildly_stiff_small_model_stays_explicit(elastic_pendulum, tf):
    """Before: the run switched to Radau at t = 0.38 and stayed (397 evaluations for 2 s where
    RK45 takes 1305, but each Radau step's work on 4 states is ~100 evaluations').  Now: no
    switch in 2 s, and over 20 s Radau tried and left; the run's evaluations those of RK45
    (to the stiffness tests') and its answer a tight reference's."""
    model, constants, x0 = elastic_pendulum
    t_eval = [0.0, tf]

    def run(method, rtol):
        return sb.simulate(model, (0.0, tf), x0, constants, t_eval=t_eval,
                           solver=sb.Solver(method=method, rtol=rtol, atol=1e-2 * rtol,
                                            dense_output=False))

    auto, explicit = run(None, 1e-4), run("RK45", 1e-4)
    ref = run("DOP853", 1e-11)
    assert auto.status == 0 and "continued with Radau" not in auto.message
    assert ("Radau tried from" in auto.message) == (tf > 10)
    assert auto.nfev <= 1.05 * explicit.nfev
    assert np.abs(auto.x[-1] - ref.x[-1]).max() < 1e-2
