"""The default method's trial of Radau (``analysis/simulation/stiffness.py``): Radau kept
where its evaluations per unit time are fewer than the explicit method's, left where they
are not, tried again only when the explicit rate has grown past Radau's; and the compiled
blocks of Runge-Kutta steps (``CompiledRungeKutta.advance``), which take exactly the steps
``step()`` takes."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import symbody as sb
import symbody.analysis.simulation.native_rk as native_rk
from symbody.analysis.simulation.stiffness import StiffnessMonitor
from symbody.compilation import compile
from symbody.models import n_link_pendulum_on_cart

RHO = 1000.0          # the spectral radius of the linear test problem y' = -RHO y


class _Explicit:
    """A stepper stand-in on y' = -RHO y (ρ = RHO) with steps of a given size."""

    def __init__(self, h: float) -> None:
        self.t, self.h = 0.0, h
        self.y = np.ones(3)
        self.f = -RHO * self.y
        self.fun = lambda t, y: -RHO * np.asarray(y)

    @property
    def step_size(self) -> float:
        return self.h

    def advance(self, dt: float) -> None:
        self.t += dt


def _explicit_steps(monitor, stepper, steps, evaluations, nfev):
    """``steps`` accepted explicit steps of ``evaluations`` each; returns (nfev, the methods
    next_method asked for)."""
    asked = []
    for _ in range(steps):
        stepper.advance(stepper.h)
        nfev += evaluations
        method = monitor.next_method(stepper, nfev)
        if method is not None:
            asked.append(method)
            break
    return nfev, asked


def _radau_steps(monitor, stepper, h, h_next, nfev):
    """Radau's trial steps of size h, proposing ``h_next``, until next_method decides."""
    for _ in range(monitor.TRIAL):
        stepper.advance(h)
        nfev += 40
        method = monitor.next_method(SimpleNamespace(t=stepper.t, y=stepper.y, f=stepper.f,
                                                     step_size=h, h_abs=h_next), nfev)
        if method is not None:
            return nfev, method
    return nfev, None


def test_radau_left_where_it_is_not_cheaper_and_kept_where_it_is():
    monitor = StiffnessMonitor("DOP853")
    h = 0.9 * monitor.boundary / RHO                  # held at the stability limit
    stepper = _Explicit(h)
    nfev, asked = _explicit_steps(monitor, stepper, 200, 8, 0)
    assert asked == ["Radau"]                         # stiff: the trial starts
    # (its evaluations and, one step at a time, a return to Python a step)
    assert monitor.explicit_rate == pytest.approx((8 + monitor.STEP_WORK / 3) / h, rel=1e-9)
    # Radau's steps no longer than the explicit ones: its projected cost per unit time (a
    # step's evaluations, solves, factorizations and Python work) is above DOP853's: back to
    # DOP853, the message says where
    nfev, back = _radau_steps(monitor, stepper, h, h, nfev)
    assert back == "DOP853" and monitor.radau_rate == pytest.approx(monitor.radau_step_cost(3) / h)
    # (after its first step already: it proposed no longer a step than it took)
    a, b = monitor.returns[-1]
    assert b - a == pytest.approx(h, rel=1e-9)
    assert "Radau tried from t = " in monitor.note() and "continued with" not in monitor.note()
    # still at the stability limit, but no costlier than Radau would be: no new trial
    nfev, asked = _explicit_steps(monitor, stepper, 200, 8, nfev)
    assert asked == []
    # the explicit steps shrink 100-fold (a stiffer phase): the rate passes 2x Radau's, a
    # new trial, whose long steps keep Radau for the rest of the run
    stepper.h = h / 100
    monitor.boundary /= 100         # (the same h ρ against the boundary: still stiff)
    nfev, asked = _explicit_steps(monitor, stepper, 200, 8, nfev)
    assert asked == ["Radau"]
    nfev, kept = _radau_steps(monitor, stepper, h / 100, h, nfev)
    assert kept is None and monitor.kept and monitor.trial is None
    assert monitor.next_method(stepper, nfev + 10_000) is None
    assert "continued with Radau" in monitor.note()


def test_no_trial_below_the_stability_limit():
    monitor = StiffnessMonitor("RK45")
    stepper = _Explicit(0.3 * monitor.boundary / RHO)
    assert _explicit_steps(monitor, stepper, 500, 6, 0)[1] == []
    assert monitor.note() == ""


@pytest.fixture(scope="module")
def chain():
    zoo = n_link_pendulum_on_cart(3)
    model = compile(zoo.eom, backend="c")
    P = model.constants_array(zoo.constants)
    x0 = model.state_array(zoo.initial_state)
    x0[1:3] += [0.3, -0.2]
    if native_rk.native_solver(model, P, "DOP853") is None:
        pytest.skip("no C compiler: no compiled steps")
    return model, P, x0


@pytest.mark.parametrize("method,max_num_steps", [(None, 10_000), ("RK45", 10_000), ("DOP853", 37)])
def test_blocks_of_compiled_steps_are_the_steps_one_at_a_time(chain, monkeypatch, method,
                                                             max_num_steps):
    """With output times only (no events, no dense output) simulate takes many steps per
    compiled call: the same steps, outputs, evaluations (but the stiffness tests') and
    failure as one at a time."""
    model, P, x0 = chain
    solver = sb.Solver(method=method, rtol=1e-7, atol=1e-9, max_num_steps=max_num_steps,
                       dense_output=False)
    t_eval = np.linspace(0.0, 3.0, 7)

    def run():
        return sb.simulate(model, (0.0, 3.0), x0, P, solver=solver, t_eval=t_eval)

    calls = []
    advance = native_rk.CompiledRungeKutta.advance

    def counted(self, max_steps, t_stop):
        calls.append(max_steps)
        return advance(self, max_steps, t_stop)

    monkeypatch.setattr(native_rk.CompiledRungeKutta, "advance", counted)
    with pytest.warns(sb.SimulationFailedWarning) if max_num_steps < 100 else _nothing():
        blocks = run()

    def one_at_a_time(self, max_steps, t_stop):
        self.accepted = 1
        return self.step()

    monkeypatch.setattr(native_rk.CompiledRungeKutta, "advance", one_at_a_time)
    with pytest.warns(sb.SimulationFailedWarning) if max_num_steps < 100 else _nothing():
        single = run()
    assert len(calls) < blocks.nsteps / 3               # many steps per call
    assert (blocks.status, blocks.message) == (single.status, single.message)
    assert blocks.nsteps == single.nsteps
    if method is None:
        # the default method tests for stiffness further apart in blocks (a test stops them:
        # StiffnessMonitor.shortest_interval): fewer power iterations, the same steps
        assert blocks.nfev <= single.nfev
        assert (single.nfev - blocks.nfev) % StiffnessMonitor.ITERATIONS == 0
    else:
        assert blocks.nfev == single.nfev
    np.testing.assert_array_equal(blocks.t, single.t)
    np.testing.assert_array_equal(blocks.x, single.x)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
