"""Events: zero crossings located on the dense output in every constraint mode, terminal
events, impact maps (actions) and the trajectory's record of them."""

from __future__ import annotations

import numpy as np
import pytest

import symbody as sb
from symbody.errors import InputError
from systems.bouncing_ball import bouncing_ball


@pytest.fixture(scope="module")
def four_bar():
    zoo = sb.models.four_bar()
    return zoo, sb.compile(zoo.eom)


def _crank_events(model):
    q1 = model.coordinates[0]
    return [sb.Event(q1, name="q1 = 0"), sb.Event(q1 + 0.5, name="q1 = -0.5", direction=-1)]


@pytest.fixture(scope="module")
def reference(four_bar):
    zoo, model = four_bar
    ref = sb.simulate(model, (0.0, 1.0), zoo.initial_state, zoo.constants, events=_crank_events(model),
                      solver=sb.Solver(rtol=1e-13, atol=1e-13), constraints="project")
    assert [e.name for e in ref.events] == ["q1 = 0", "q1 = -0.5"]
    return ref


@pytest.mark.parametrize("mode", ["none", "baumgarte", "project", "dae"])
def test_crank_crossings_match_a_tight_reference_in_every_mode(four_bar, reference, mode):
    zoo, model = four_bar
    sol = sb.simulate(model, (0.0, 1.0), zoo.initial_state, zoo.constants, events=_crank_events(model),
                      solver=sb.Solver(rtol=1e-10, atol=1e-10), constraints=mode)
    assert sol.success, sol.message
    assert [e.name for e in sol.events] == [e.name for e in reference.events]
    for e, r in zip(sol.events, reference.events):
        # roots of the dense output, to ~1e-15; the interpolant is accurate to the solver
        # tolerance 1e-10, so the times agree to ~1e-9 s (the acceptance bound is 1e-8 s)
        assert abs(e.t - r.t) < 1e-8
        assert e.x.shape == (len(model.states),)
    # the state at an event is the state there: q1 = 0 at the first one
    assert abs(sol.events[0].x[0]) < 1e-12
    assert sol.segments == [(0.0, sol.t[-1])]


def test_terminal_event_stops_with_success(four_bar):
    zoo, model = four_bar
    q1 = model.coordinates[0]
    stop = sb.Event(q1 + 0.5, name="crank down", terminal=True)
    sol = sb.simulate(model, (0.0, 5.0), zoo.initial_state, zoo.constants, events=[stop],
                      solver=sb.Solver(rtol=1e-10, atol=1e-10))
    assert sol.status == 0 and "terminal event 'crank down'" in sol.message
    assert sol.t[-1] == sol.events[0].t and abs(sol.q[-1, 0] + 0.5) < 1e-9
    # the same condition as a callable g(t, x, p), x in model.states order
    call = sb.Event(lambda t, x, p: x[0] + 0.5, name="callable", terminal=True)
    sol2 = sb.simulate(model, (0.0, 5.0), zoo.initial_state, zoo.constants, events=[call],
                       solver=sb.Solver(rtol=1e-10, atol=1e-10))
    assert abs(sol2.events[0].t - sol.events[0].t) < 1e-12


def test_events_with_output_times(four_bar, reference):
    zoo, model = four_bar
    te = np.linspace(0.0, 1.0, 11)
    sol = sb.simulate(model, (0.0, 1.0), zoo.initial_state, zoo.constants, events=_crank_events(model),
                      solver=sb.Solver(rtol=1e-10, atol=1e-10), t_eval=te)
    assert np.array_equal(sol.t, te)
    assert all(abs(e.t - r.t) < 1e-8 for e, r in zip(sol.events, reference.events))


def test_impact_map_restarts_the_integration():
    """A ball bouncing on the floor: q'' = -g, impact u -> -e u at q = 0 (falling)."""
    ball = bouncing_ball()
    model, bounce = ball.model, ball.bounce
    sol = sb.simulate(model, (0.0, 1.3), [1.0, 0.0], {"g": 9.81, "e": 0.5}, events=[bounce],
                      solver=sb.Solver(rtol=1e-12, atol=1e-12))
    assert sol.success, sol.message
    # closed form: first impact at sqrt(2/g); each bounce lasts e times the previous one,
    # the first 2 e sqrt(2/g)
    t1 = np.sqrt(2 / 9.81)
    expected = [t1, t1 + 2 * 0.5 * t1, t1 + 2 * 0.5 * t1 + 2 * 0.25 * t1]
    got = [ev.t for ev in sol.events[:3]]
    np.testing.assert_allclose(got, expected, atol=1e-9)
    assert sol.events[0].x_after[1] == pytest.approx(-0.5 * sol.events[0].x[1], rel=1e-14)
    assert len(sol.segments) == len(sol.events) + 1
    assert sol.segments[1][0] == sol.events[0].t
    # the dense output does not smear the impact: just after it the ball rises
    assert sol(sol.events[0].t + 1e-6)[1] > 0


def test_bad_events_are_refused(four_bar):
    zoo, model = four_bar
    import sympy as sm
    with pytest.raises(InputError, match=r"events\[0\] is a Add"):
        sb.simulate(model, (0.0, 0.1), zoo.initial_state, zoo.constants, events=[model.coordinates[0] + 1])
    with pytest.raises(InputError, match="depends on a"):
        sb.simulate(model, (0.0, 0.1), zoo.initial_state, zoo.constants,
                    events=[sb.Event(sm.Symbol("a") * model.coordinates[0])])
    with pytest.raises(InputError, match="direction must be"):
        sb.Event(model.coordinates[0], direction=2)
