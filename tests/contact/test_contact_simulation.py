"""Simulations with contacts against independent references (issue 37): bounce apexes against a
hand-written event-located solve_ivp integration, the recorded normal force against the law,
the coefficient of restitution, a block on a slope against a = g (sin θ - μ cos θ), the energy
balance, a too-deep penetration, symbolic parameters checked with the run's numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from scipy.integrate import solve_ivp

import symbody as sb
from symbody.errors import InputError
from symbody.models.block_on_slope import sliding_acceleration


@pytest.fixture(scope="module")
def ball():
    """The zoo's ball (compiled once): (Model, NumericModel)."""
    model = sb.models.ball_on_plane()
    return model, sb.compile(model.eom)


def _reference_apexes(p: dict, z0: float, t_end: float) -> list[float]:
    """Apex heights of a ball dropped from z0: z'' = -g + F_n / m with the Hunt-Crossley force
    written by hand, integrated by scipy phase by phase (flight; contact with the damping
    pushing; contact with the force clipped at zero), each phase ended by a terminal event at
    the gap's or the damping switch's zero crossing, apexes located as events."""
    m, g, r, k, c = (p[n] for n in ("m", "g", "r", "k", "c"))

    def rhs(t, y):
        z, v = y
        delta, rate = r - z, -v
        force = k * delta ** 1.5 * max(0.0, 1.0 + 1.5 * c * rate) if delta > 0 else 0.0
        return [v, -g + force / m]

    def event(fun, direction, terminal=True):
        def condition(t, y):          # a function object of its own per phase
            return fun(t, y)
        condition.direction, condition.terminal = direction, terminal
        return condition

    def apex(t, y):
        return y[1]

    def gap(t, y):
        return y[0] - r

    def switch(t, y):
        return 1.0 - 1.5 * c * y[1]

    phases = {"flight": [event(gap, -1), event(apex, -1, terminal=False)],
              "pushing": [event(gap, 1), event(switch, -1)],
              "clipped": [event(gap, 1), event(switch, 1)]}
    after = {("flight", 0): "pushing", ("pushing", 0): "flight", ("pushing", 1): "clipped",
             ("clipped", 0): "flight", ("clipped", 1): "pushing"}
    t, y, phase, apexes = 0.0, np.array([z0, 0.0]), "flight", []
    while t < t_end:
        events = phases[phase]
        sol = solve_ivp(rhs, (t, t_end), y, method="DOP853", rtol=1e-12, atol=1e-14, events=events)
        if phase == "flight":
            apexes += [float(s[0]) for ts, s in zip(sol.t_events[1], sol.y_events[1]) if ts > 0.0]
        if sol.status != 1:
            break
        i = next(j for j, te in enumerate(sol.t_events) if len(te) and events[j].terminal)
        t, y, phase = float(sol.t_events[i][0]), sol.y_events[i][0], after[(phase, i)]
    return apexes


def test_bounce_apexes_equal_an_independent_reference(ball):
    """Apex heights of the dropped ball (no horizontal motion: the friction stays zero) equal a
    hand-written, event-located solve_ivp integration to 1e-6 relative."""
    model, numeric = ball
    x0 = dict(model.initial_state)
    x0[model.eom.u[0]] = 0.0
    vz = model.eom.u[1]
    sol = sb.simulate(numeric, (0.0, 2.5), x0, model.constants, solver=sb.Solver(rtol=1e-11, atol=1e-13),
                      events=[sb.Event(vz, name="apex", direction=-1)])
    assert sol.success, sol.message
    z = model.eom.q[1]
    ours = [float(e.x[1]) for e in sol.events if e.name == "apex" and e.x[1] > 0.1]
    p = {str(s): v for s, v in model.constants.items()}
    ref = _reference_apexes(p, x0[z], 2.5)
    assert len(ours) >= 4 and len(ours) == len(ref)
    np.testing.assert_allclose(ours, ref, rtol=1e-6)
    assert ours[0] < x0[z] and np.all(np.diff(ours) < 0)      # each bounce loses energy
    names = {e.name for e in sol.events}
    assert {"ground: touchdown", "ground: lift-off"} <= names


def test_recorded_normal_force_is_the_hunt_crossley_law(ball):
    """trajectory.contacts: F_n = k δ^1.5 max(0, 1 + 3/2 c δ') from the recorded states, the gap
    and its rate, the slip of the lowest point v_x - r ω."""
    model, numeric = ball
    sol = sb.simulate(numeric, (0.0, 1.0), model.initial_state, model.constants,
                      solver=sb.Solver(rtol=1e-9, atol=1e-11),
                      outputs={"Fn": model.outputs["normal_force"], "g": model.outputs["gap"]})
    rec = sol.contacts["ground"]
    # the contact's expressions as outputs give the same numbers
    np.testing.assert_allclose(sol.outputs["Fn"], rec.normal_force, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(sol.outputs["g"], rec.gap, rtol=0, atol=1e-15)
    p = {str(s): v for s, v in model.constants.items()}
    z, vz = sol.q[:, 1], sol.u[:, 1]
    delta = np.maximum(0.0, p["r"] - z)
    law = p["k"] * delta ** 1.5 * np.maximum(0.0, 1.0 - 1.5 * p["c"] * vz)
    assert rec.normal_force.max() > 50.0
    np.testing.assert_allclose(rec.normal_force, law, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(rec.gap, z - p["r"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(rec.gap_rate, vz, rtol=0, atol=1e-15)
    slip = sol.u[:, 0] - p["r"] * sol.u[:, 2]
    np.testing.assert_allclose(rec.slip_velocity[:, 0], slip, atol=1e-14)
    friction = -p["mu"] * law * slip / np.sqrt(slip ** 2 + p["v_s"] ** 2)
    np.testing.assert_allclose(rec.friction_force[:, 0], friction, rtol=1e-10, atol=1e-9)


def test_energy_balance_of_a_bouncing_slipping_ball(ball):
    """E(t) + V(t) + D(t) = E(0) + V(0): kinetic and gravity energy, the contact's spring and the
    energy it dissipated (integrated on the dense output), through bounces, slip and rolling."""
    model, numeric = ball
    sol = sb.simulate(numeric, (0.0, 2.0), model.initial_state, model.constants,
                      solver=sb.Solver(method="Radau", rtol=1e-9, atol=1e-11),
                      outputs={"T": model.outputs["kinetic_energy"], "V": model.outputs["potential_energy"]})
    E = sol.outputs["T"] + sol.outputs["V"]
    contacts = sol.contacts
    balance = E + contacts.elastic_energy + contacts.dissipated - (E[0] + contacts.elastic_energy[0])
    lost = contacts.dissipated[-1]
    assert lost > 0.2 * E[0]
    assert np.abs(balance).max() < 1e-6 * E[0]
    assert np.diff(contacts.dissipated).min() > -1e-7 * E[0]      # dissipation never gives back


def test_measured_restitution_equals_the_given_one():
    """Without gravity, a ball thrown at the plane at the impact speed given with restitution=e
    leaves at e times that speed (the exact Hunt-Crossley relation of symbody.contact.normal_law)."""
    z, w = me.dynamicsymbols("z w")
    m, k = sm.symbols("m k")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", z * N.z)
    P.set_vel(N, w * N.z)
    results = []
    for e, v in ((0.8, 3.0), (0.3, 1.5)):
        con = sb.contact.Contact(sb.contact.Plane(O, N.z), sb.contact.Sphere(P, 0.05), stiffness=k,
                                 restitution=e, impact_speed=v, name="wall")
        km = sb.KanesMethod(N, [z], [w], kd_eqs=[z.diff() - w])
        km.kanes_equations([me.Particle("ball", P, m)], con.to_loads())
        numeric = sb.compile(km.to_eom())
        sol = sb.simulate(numeric, (0.0, 0.2), {z: 0.1, w: -v}, {m: 2.0, k: 1e6},
                          solver=sb.Solver(rtol=1e-12, atol=1e-14))
        assert sol.success and sol.q[-1, 0] > 0.1
        results.append((sol.u[-1, 0] / v, e))
    for measured, e in results:
        assert measured == pytest.approx(e, rel=1e-8)


def test_block_slides_with_the_textbook_acceleration():
    """Smooth friction: the mean acceleration of the sliding block equals g (sin θ - μ cos θ)
    within the regularization's bound μ g cos θ ε² / (2 v²) (v the slowest speed used)."""
    model = sb.models.block_on_slope()
    numeric = sb.compile(model.eom)
    sol = sb.simulate(numeric, model.t_span, model.initial_state, model.constants,
                      solver=sb.Solver(rtol=1e-11, atol=1e-13))
    p = {str(s): v for s, v in model.constants.items()}
    exact = sliding_acceleration(p["g"], p["theta"], p["mu"])
    i = np.searchsorted(sol.t, 0.5)
    a = (sol.u[-1, 0] - sol.u[i, 0]) / (sol.t[-1] - sol.t[i])
    bound = p["mu"] * p["g"] * math.cos(p["theta"]) * p["epsilon"] ** 2 / (2.0 * sol.u[i, 0] ** 2)
    assert abs(a - exact) <= bound
    assert abs(a - exact) > 0.05 * bound             # the regularization's error is what remains
    rec = sol.contacts["slope"]
    assert rec.friction_force.shape == (len(sol.t), 1)   # planar: friction along the slope only
    load = p["m"] * p["g"] * math.cos(p["theta"])
    np.testing.assert_allclose(rec.normal_force, load, rtol=1e-7)


def test_implicit_methods_stop_at_the_kinks_too(ball):
    """Radau locates the same touchdowns and lift-offs as DOP853 (no step straddles a kink)."""
    model, numeric = ball
    runs = [sb.simulate(numeric, (0.0, 1.2), model.initial_state, model.constants,
                        solver=sb.Solver(method=method, rtol=rtol, atol=1e-3 * rtol))
            for method, rtol in (("DOP853", 1e-10), ("Radau", 1e-8))]
    times = [[e.t for e in run.events] for run in runs]
    assert len(times[0]) == len(times[1]) >= 4
    np.testing.assert_allclose(times[0], times[1], rtol=1e-6)


def test_too_deep_a_penetration_fails_naming_the_contact(ball):
    """A ball on too soft a ground sinks deeper than its radius: status -8, the contact named,
    the samples up to there kept."""
    model, numeric = ball
    soft = {**model.constants, model.constant("k"): 30.0}
    with pytest.warns(sb.SimulationFailedWarning):
        sol = sb.simulate(numeric, model.t_span, model.initial_state, soft)
    assert sol.status == -8 and "'ground'" in sol.message and "deeper than 0.1" in sol.message
    assert len(sol.t) > 2 and sol.q[-1, 1] == pytest.approx(0.0, abs=1e-6)


def test_symbolic_parameters_are_checked_with_the_runs_numbers(ball):
    model, numeric = ball
    bad = {**model.constants, model.constant("k"): -1.0}
    with pytest.raises(InputError, match=r"contact 'ground': the stiffness k = -1"):
        sb.simulate(numeric, model.t_span, model.initial_state, bad)
    bad = {**model.constants, model.constant("mu"): -0.5}
    with pytest.raises(InputError, match=r"contact 'ground': the friction coefficient"):
        sb.simulate(numeric, model.t_span, model.initial_state, bad)


def test_a_reloaded_model_simulates_with_its_contacts(ball, tmp_path):
    model, numeric = ball
    loaded = sb.load_model(numeric.save(tmp_path / "ball"))
    a = sb.simulate(numeric, (0.0, 0.6), model.initial_state, model.constants)
    b = sb.simulate(loaded, (0.0, 0.6), model.initial_state, model.constants)
    assert [e.name for e in a.events] == [e.name for e in b.events]
    np.testing.assert_allclose(b.contacts["ground"].normal_force, a.contacts["ground"].normal_force,
                               rtol=1e-9, atol=1e-9)


def test_exact_jacobian_through_the_contact_equals_differences():
    """The implicit methods' exact ODE Jacobian (the derivative program through the contact's
    Piecewise force) equals central differences of the right-hand side, in contact and slipping."""
    from symbody.analysis.chain_rule import central_differences
    from symbody.analysis.simulation.jacobian import ode_jacobian

    model = sb.models.cylinder_on_slope()
    numeric = sb.compile(model.eom)
    P = numeric.constants_array(model.constants)
    x = numeric.state_array(model.initial_state)
    x[3:] = [0.3, -0.05, 1.0]                        # sliding, rolling too slowly, sinking in
    J = ode_jacobian(numeric, 0.0, x, P)
    J_fd = central_differences(lambda xv: numeric.rhs(0.0, xv, P), x, 1e-7)
    assert np.abs(J).max() > 1e4
    np.testing.assert_allclose(J, J_fd, rtol=1e-5, atol=1e-8 * np.abs(J).max())


def test_rolling_resistance_decelerates_a_rolling_ball():
    """A ball rolling on the ground against a rolling-resistance torque ρ F_n decelerates at
    a = 5 ρ g / (7 r) (its kinetic energy 7/10 m v² drained at ρ m g v / r); the smooth
    friction's creep (slip ~ ε) changes that by less than 1e-3."""
    from systems.contact_systems import kane, rolling_ball

    rho = sm.Symbol("rho")
    s = rolling_ball(rho)
    numeric = sb.compile(kane(s)[0].to_eom())
    c = s.constants
    p = {c["m"]: 1.0, c["g"]: 9.81, c["r"]: 0.1, c["k"]: 1e6, c["c"]: 1.0, c["mu"]: 0.5, rho: 0.002}
    depth = (9.81 / 1e6) ** (1 / 1.5)
    x0 = dict(zip(s.q + s.u, [0.0, 0.1 - depth, 0.0, 1.0, 0.0, 10.0]))
    sol = sb.simulate(numeric, (0.0, 1.0), x0, p, solver=sb.Solver(method="Radau", rtol=1e-9, atol=1e-11))
    i = np.searchsorted(sol.t, 0.2)
    a = (sol.u[-1, 0] - sol.u[i, 0]) / (sol.t[-1] - sol.t[i])
    assert a == pytest.approx(-5 * 0.002 * 9.81 / (7 * 0.1), rel=1e-3)
    np.testing.assert_allclose(sol.u[:, 0], 0.1 * sol.u[:, 2], atol=1e-3)      # rolling
    rec = sol.contacts["ground"]
    E = 0.5 * 1.0 * (sol.u[:, 0] ** 2 + sol.u[:, 1] ** 2) + 0.5 * 0.004 * sol.u[:, 2] ** 2 \
        + 9.81 * sol.q[:, 1]
    balance = E + rec.elastic_energy + rec.dissipated - (E[0] + rec.elastic_energy[0])
    assert np.abs(balance).max() < 1e-7 * E[0]


def test_dissipation_at_output_times_inside_steps(ball):
    """With t_eval the samples fall inside the integrator's steps: the dissipated energy there is
    the integral of the step's interpolant up to the sample, and the balance still closes."""
    model, numeric = ball
    x0 = dict(model.initial_state)
    x0[model.eom.u[0]] = 0.0
    t_eval = np.linspace(0.0, 1.2, 241)
    sol = sb.simulate(numeric, (0.0, 1.2), x0, model.constants, t_eval=t_eval,
                      solver=sb.Solver(rtol=1e-10, atol=1e-12))
    np.testing.assert_array_equal(sol.t, t_eval)
    E = 0.5 * sol.u[:, 1] ** 2 + 9.81 * sol.q[:, 1]
    c = sol.contacts["ground"]
    assert c.dissipated[-1] > 1.0
    assert np.abs(E + c.elastic_energy + c.dissipated - E[0]).max() < 1e-7 * E[0]


def test_jumper_loses_the_energy_of_the_books_own_force():
    """The zoo's jumper (the book's Hertzian spring and linear damper as a Contact that never
    pulls) loses the energy the book's own force expression, kf zp^(3/2) - cf u1 below the
    ground (which may pull), makes it lose at landing: within 0.1 % (the difference is that
    pull); Radau at a tight tolerance gets through the damper's jump at touchdown."""
    from symbody.models.jumper import jumper_system

    model = sb.models.jumper()
    E = model.outputs["kinetic_energy"] + model.outputs["potential_energy"]
    system, ex = jumper_system()
    sy, (q1, _, _), (u1, _, _) = ex["symbols"], ex["q"], ex["u"]
    N = ex["frames"][0]
    foot = next(b for b in system.bodies if b.name == "foot").point
    zp = (sm.Abs(q1) - q1) / 2
    book_force = (sy["k_f"] * zp ** sm.Rational(3, 2) + sm.Piecewise((-sy["c_f"] * u1, q1 < 0), (0, True))) * N.y
    system.loads = [ld for ld in system.loads if not isinstance(ld, sb.contact.ContactForce)]
    system.loads.append((foot, book_force))
    book = sb.compile(system.form(name="book jumper")[1])
    losses = []
    for numeric, solver in ((sb.compile(model.eom), sb.Solver(method="Radau", rtol=1e-9, atol=1e-11)),
                            (book, sb.Solver(rtol=1e-10, atol=1e-12))):
        sol = sb.simulate(numeric, model.t_span, model.initial_state, model.constants,
                          specifieds={"T_k": 0.0}, outputs={"E": E}, solver=solver)
        assert sol.success, sol.message
        losses.append(sol.outputs["E"][0] - sol.outputs["E"][-1])
    assert losses[0] > 0.1 * 598.0
    assert losses[0] == pytest.approx(losses[1], rel=1e-3)


def test_dissipation_without_the_dense_output(ball):
    """Solver(dense_output=False): the integral runs on the samples' cubic Hermite interpolant
    (Gauss-Legendre between samples); the balance closes to 1e-4 of the energy."""
    model, numeric = ball
    x0 = dict(model.initial_state)
    x0[model.eom.u[0]] = 0.0
    sol = sb.simulate(numeric, (0.0, 1.2), x0, model.constants,
                      solver=sb.Solver(rtol=1e-10, atol=1e-12, dense_output=False))
    assert sol.steps is None
    E = 0.5 * sol.u[:, 1] ** 2 + 9.81 * sol.q[:, 1]
    c = sol.contacts["ground"]
    assert c.dissipated[-1] > 1.0
    assert np.abs(E + c.elastic_energy + c.dissipated - E[0]).max() < 1e-4 * E[0]
