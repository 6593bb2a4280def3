"""Issue 24: runs that used to return a wrong answer with a success status, or bad input that
was accepted silently -- Zeno impacts, failed runs, string parameters, reversed spans and
event actions with an undeclared constant."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.errors import InputError, SimulationError

G = 9.81


def _ball_eom(declare_e: bool = True) -> sb.EquationsOfMotion:
    """q'' = -g: a ball above a floor at q = 0."""
    t = me.dynamicsymbols._t
    q, u = me.dynamicsymbols("q u")
    g, e = sm.symbols("g e")
    return sb.EquationsOfMotion([q], [u], kinematic=[q.diff(t) - u],
                                dynamic=(sm.Matrix([[1]]), sm.Matrix([g])),
                                constants=[g, e] if declare_e else [g])


@pytest.fixture(scope="module")
def ball():
    model = sb.compile(_ball_eom())
    q, u = model.coordinates[0], model.speeds[0]
    e = sm.Symbol("e")
    return model, sb.Event(q, name="bounce", direction=-1, action={u: -e * u})


@pytest.mark.parametrize("e, kw", [(0.8, {}), (0.8, {"solver": sb.Solver(rtol=1e-12, atol=1e-12)}),
                                   (0.5, {"t_eval": np.linspace(0.0, 6.0, 601)}), (0.3, {})])
def test_zeno_bouncing_ball_stops_at_the_accumulation_time(ball, e, kw):
    """Dropped from 1 m: first impact at t1 = sqrt(2/g), the k-th bounce lasts 2 e^k t1, so the
    impacts accumulate at t* = t1 (1 + 2 e / (1 - e)) = t1 (1 + e) / (1 - e) (4.0637 s for
    e = 0.8).  Today's main returned status 0 at t = 6 with y(6) = -18.39 m."""
    model, bounce = ball
    t_star = np.sqrt(2 / G) * (1 + e) / (1 - e)
    with pytest.warns(sb.SimulationFailedWarning, match="events accumulate"):
        sol = sb.simulate(model, (0.0, 6.0), [1.0, 0.0], {"g": G, "e": e}, events=[bounce], **kw)
    assert sol.status == -7 and not sol.success
    assert "events accumulate (Zeno)" in sol.message and f"{t_star:.6g}"[:6] in sol.message
    assert sol.q.min() > -1e-9                     # never through the floor
    # the last impact is within 1e-6 |tf - t0| of t*, so the samples stop there
    assert sol.events[-1].t == pytest.approx(t_star, abs=1e-5)
    assert sol.t[-1] <= t_star + 1e-9
    if "t_eval" not in kw:
        assert sol.t[-1] == pytest.approx(t_star, abs=1e-5)
    # the segments tile the samples' span, also when the run stopped between output times
    assert sol.segments[0][0] == 0.0 and sol.segments[-1][1] == sol.t[-1]
    assert all(a < b for a, b in sol.segments)
    assert sb.analysis.simulation.driver.STATUS[-7].startswith("events accumulate")


def test_plastic_impact_is_a_resting_contact_not_a_fall_through(ball):
    """e = 0: the impact map leaves the ball at rest on the floor and gravity pulls it through
    at once; the run stops there (status -7) rather than falling for the remaining time."""
    model, bounce = ball
    with pytest.warns(sb.SimulationFailedWarning):
        sol = sb.simulate(model, (0.0, 2.0), [1.0, 0.0], {"g": G, "e": 0.0}, events=[bounce])
    assert sol.status == -7 and "moves through its condition again" in sol.message
    assert sol.t[-1] == pytest.approx(np.sqrt(2 / G), abs=1e-9) and sol.q.min() > -1e-12


def test_bounces_before_the_accumulation_time_still_succeed(ball):
    model, bounce = ball
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = sb.simulate(model, (0.0, 3.0), [1.0, 0.0], {"g": G, "e": 0.8}, events=[bounce])
    t1 = np.sqrt(2 / G)
    expected = [t1 * (1 + 2 * sum(0.8 ** j for j in range(1, k + 1))) for k in range(20)]
    expected = [te for te in expected if te < 3.0]
    assert sol.status == 0 and len(sol.events) == len(expected) == 6
    np.testing.assert_allclose([ev.t for ev in sol.events], expected, atol=1e-6)


@pytest.fixture(scope="module")
def four_bar():
    zoo = sb.models.four_bar()
    return zoo, sb.compile(zoo.eom)


def _singular(zoo, model):
    """A crank of no length: q1 moves nothing, a singular system (massless links, the
    example before, are refused up front since issue 34: test_massless_links_are_refused)."""
    p = {str(k): v for k, v in zoo.constants.items()}
    assert "l_a" in p, sorted(p)
    p["l_a"] = 0.0
    return p


def test_massless_links_are_refused(four_bar):
    zoo, model = four_bar
    p = {str(k): v for k, v in zoo.constants.items()}
    p["m"] = 0.0
    with pytest.raises(InputError, match=r"body P2: its mass m = 0 is not positive"):
        sb.simulate(model, (0.0, 1.0), zoo.initial_state, p)


def test_a_failed_run_warns_or_raises(four_bar):
    zoo, model = four_bar
    p = _singular(zoo, model)
    with pytest.warns(sb.SimulationFailedWarning, match=r"status -3") as rec:
        sol = sb.simulate(model, (0.0, 1.0), zoo.initial_state, p)
    failed = [w for w in rec if w.category is sb.SimulationFailedWarning]
    assert sol.status == -3 and failed[0].message.status == -3
    with pytest.raises(SimulationError) as info:
        sb.simulate(model, (0.0, 1.0), zoo.initial_state, p,
                    solver=sb.Solver(raise_on_failure=True))
    partial = info.value.trajectory
    assert isinstance(partial, sb.Trajectory) and partial.status == -3 and len(partial.t) >= 1
    assert issubclass(sb.SimulationFailedWarning, UserWarning)


def test_string_parameters_are_refused_naming_the_constant(four_bar):
    zoo, model = four_bar
    p = {str(k): v for k, v in zoo.constants.items()}
    name = next(iter(p))
    p[name] = "0.7"
    with pytest.raises(InputError, match=rf"constant {name} = '0.7' is not a number \(strings are not converted"):
        sb.simulate(model, (0.0, 0.1), zoo.initial_state, p)
    with pytest.raises(InputError, match="a string is not a number"):
        sb.simulate(model, (0.0, 0.1), zoo.initial_state, [str(v) for v in zoo.constants.values()])
    x0 = {str(k): v for k, v in zoo.initial_state.items()} if isinstance(zoo.initial_state, dict) \
        else None
    if x0 is not None:
        k = next(iter(x0))
        x0[k] = "0.1"
        with pytest.raises(InputError, match="strings are not converted"):
            sb.simulate(model, (0.0, 0.1), x0, zoo.constants)


def test_reversed_t_span_needs_backwards(ball):
    model, _ = ball
    with pytest.raises(InputError, match="backwards=True"):
        sb.simulate(model, (1.0, 0.0), [0.0, 0.0], {"g": G, "e": 0.8})
    sol = sb.simulate(model, (1.0, 0.0), [0.0, 0.0], {"g": G, "e": 0.8},
                      solver=sb.Solver(backwards=True))
    assert sol.success and sol.t[-1] == 0.0
    assert sol.q[-1, 0] == pytest.approx(-0.5 * G, rel=1e-6)   # q(t) = -g (t - 1)^2 / 2


def test_an_undeclared_constant_in_an_action_says_how_to_declare_it():
    eom = _ball_eom(declare_e=False)
    model = sb.compile(eom)
    q, u = model.coordinates[0], model.speeds[0]
    e = sm.Symbol("e")
    bounce = sb.Event(q, name="bounce", direction=-1, action={u: -e * u})
    with pytest.raises(InputError, match=r"depends on e.*eom\.with_constants\(e\)"):
        sb.simulate(model, (0.0, 1.0), [1.0, 0.0], {"g": G}, events=[bounce])
    declared = sb.compile(eom.with_constants(e))
    assert declared.constants == (sm.Symbol("g"), e)
    sol = sb.simulate(declared, (0.0, 1.0), [1.0, 0.0], {"g": G, "e": 0.8}, events=[bounce])
    assert sol.success and sol.events[0].x_after[1] == pytest.approx(-0.8 * sol.events[0].x[1])
    with pytest.raises(sb.FormulationError, match="not a SymPy Symbol"):
        eom.with_constants("e")
