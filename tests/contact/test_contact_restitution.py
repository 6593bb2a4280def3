"""Restitution per impact (``Contact(restitution=e)`` without ``impact_speed``): the damping of
each impact is c = 2 β(e) / (3 v₀) with v₀ that impact's touchdown speed, so every bounce of a
dropped ball has coefficient e.  Checked against an independent event-located integration of the
same law (scipy's solve_ivp, the touchdown speed taken at its touchdown event)."""

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from scipy.integrate import solve_ivp

import symbody as sb
from symbody.contact.normal_law import beta_of

M, G, K, R, N_EXP = 1.0, 9.81, 1e8, 0.1, 1.5
BOUNCES = 3


def _ball(e):
    z, w = me.dynamicsymbols("z w")
    m, g, k, r = sm.symbols("m g k r")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", z * N.z)
    P.set_vel(N, w * N.z)
    contact = sb.contact.Contact(sb.contact.Plane(O, N.z), sb.contact.Sphere(P, r), stiffness=k,
                                 exponent=N_EXP, restitution=e, name="ground")
    km = sb.KanesMethod(N, [z], [w], kd_eqs=[z.diff() - w])
    km.kanes_equations([me.Particle("ball", P, m)], contact.to_loads() + [me.Force(P, -m * g * N.z)])
    return km.to_eom(), {m: M, g: G, k: K, r: R}


def _reference_lift_offs(e, h0):
    """(z, w) at the first lift-offs: flight and contact phases integrated by solve_ivp, each
    ended by its event; c = 2 β(e) / (3 v₀) with v₀ the speed at that touchdown."""
    beta = beta_of(e)
    tight = dict(method="DOP853", rtol=1e-12, atol=1e-14)

    def touchdown(t, y):
        return y[0] - R
    touchdown.terminal, touchdown.direction = True, -1

    def lift_off(t, y):
        return y[0] - R
    lift_off.terminal, lift_off.direction = True, 1

    y, t, out = np.array([h0, 0.0]), 0.0, []
    for _ in range(BOUNCES):
        flight = solve_ivp(lambda t, y: [y[1], -G], (t, t + 10.0), y, events=touchdown, **tight)
        t, y = flight.t_events[0][0], flight.y_events[0][0]
        v0 = -y[1]

        def contact(t, y, v0=v0):
            depth, rate = max(R - y[0], 0.0), -y[1]
            return [y[1], -G + K * depth ** N_EXP * max(0.0, 1.0 + beta * rate / v0) / M]
        press = solve_ivp(contact, (t, t + 10.0), y, events=lift_off, **tight)
        t, y = press.t_events[0][0], press.y_events[0][0]
        out.append(y.copy())
    return np.array(out)


def _apex(z, w):
    return z + w ** 2 / (2 * G)          # the flight after a lift-off is a parabola


@pytest.mark.parametrize("e", [0.7, 0.4])
def test_every_bounce_has_the_coefficient_of_restitution(e):
    eom, p = _ball(e)
    with pytest.raises(sb.errors.InputError, match=r"contact 'ground'.*impact_speed"):
        sb.OptimalControlProblem(eom, num_nodes=5, duration=1.0)    # no touchdown events there
    assert len(eom.extra_states) == 1 and str(eom.extra_states[0]) == "ground_impact_slowness(t)"
    model = sb.compile(eom)
    for h0 in (1.0, 0.3):
        ref = _reference_lift_offs(e, h0)
        # the first three bounces end by t = 0.5 + h0; later on the ball comes to rest in
        # compliant contact, where Radau at these tolerances crawls (see docs/guides/contact.md)
        sol = sb.simulate(model, (0.0, 0.5 + h0), {"z": h0, "w": 0.0}, p,
                          solver=sb.Solver(rtol=1e-11, atol=1e-13))
        lifts = [ev for ev in sol.events if ev.name == "ground: lift-off"][:BOUNCES]
        touch = [ev for ev in sol.events if ev.name == "ground: touchdown"][:BOUNCES]
        got = np.array([_apex(ev.x[0], ev.x[1]) for ev in lifts])
        want = _apex(ref[:, 0], ref[:, 1])
        assert got == pytest.approx(want, rel=1e-6, abs=0)
        # the impact state holds 1/v₀ of each touchdown
        for ev in touch:
            assert ev.x_after[2] == pytest.approx(-1.0 / ev.x[1], rel=1e-12)
        # apex ratios e² (heights above touchdown), up to the gravity acting during the contact
        # (a few percent in the first two bounces, more at slower ones; exact without gravity,
        # below)
        heights = np.concatenate(([h0], got)) - R
        ratios = heights[1:] / heights[:-1]
        assert ratios[:2] == pytest.approx(e ** 2, rel=0.08)
        assert np.all(ratios < e ** 2)          # gravity during the contact takes, never gives
        # and the contact's energy balance closes
        c = sol.contacts["ground"]
        E = 0.5 * M * sol.u[:, 0] ** 2 + M * G * sol.q[:, 0]
        assert np.abs(E + c.elastic_energy + c.dissipated - E[0]).max() < 1e-6 * E[0]
    # without gravity every impact, slow or fast, has coefficient e (a fixed c would not)
    for v in (0.5, 5.0):
        sol = sb.simulate(model, (0.0, 0.2), {"z": R + 0.01, "w": -v}, p | {sm.Symbol("g"): 0.0},
                          solver=sb.Solver(rtol=1e-11, atol=1e-13))
        lift = [ev for ev in sol.events if ev.name == "ground: lift-off"][0]
        assert lift.x[1] / v == pytest.approx(e, rel=1e-8)


def test_hand_derived_equations_take_the_impact_state_with_the_contact():
    """``compile(eom, contacts=[...])`` makes the impact state an extra state (not an input)."""
    z, w = me.dynamicsymbols("z w")
    m, g, k, r = sm.symbols("m g k r")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", z * N.z)
    P.set_vel(N, w * N.z)
    contact = sb.contact.Contact(sb.contact.Plane(O, N.z), sb.contact.Sphere(P, r), stiffness=k,
                                 restitution=0.6, name="ground")
    push = contact.to_loads()[0].force.dot(N.z)
    eom = sb.EquationsOfMotion([z], [w], [z.diff() - w], [m * w.diff() - push + m * g])
    model = sb.compile(eom, contacts=[contact])
    assert model.specifieds == () and str(model.states[-1]) == "ground_impact_slowness(t)"
    sol = sb.simulate(model, (0.0, 0.5), {z: R + 0.01, w: -2.0}, {m: M, g: 0.0, k: K, r: R},
                      solver=sb.Solver(rtol=1e-11, atol=1e-13))
    lift = [ev for ev in sol.events if ev.name == "ground: lift-off"][0]
    assert lift.x[1] / 2.0 == pytest.approx(0.6, rel=1e-8)
