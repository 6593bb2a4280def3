"""Exact Coulomb friction (issue 37): stick as a constraint, slip as -μ F_n v̂, switched at events.

Oracles: closed forms (a block on a slope either side of its friction angle, a sphere's
slip-to-roll, a block reversing, a pushed block breaking away with μ_s > μ_k) and, for a box
sliding to rest on two corners, an independent scipy integration of the same compliant box
written out by hand.  The models are hand-written Kane equations (tests/systems/friction_systems.py)
whose contacts apply one placeholder force per tangent, read through ContactRecords.
"""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import symbody as sb
from symbody.compat.sympy import TIME
from symbody.errors import InputError
from systems.friction_systems import (
    block_on_slope,
    planar_box,
    spatial_box,
    sphere_on_ground,
    two_blocks,
)

G = 9.81
TIGHT = sb.Solver(rtol=1e-10, atol=1e-12)


def _rest_depth(weight, k):
    """The static penetration δ with k δ^1.5 = weight."""
    return (weight / k) ** (2.0 / 3.0)


@pytest.fixture(scope="module")
def block():
    eom, consts = block_on_slope()
    return sb.compile(eom), consts


@pytest.fixture(scope="module")
def spatial_block():
    eom, consts = block_on_slope(spatial=True)
    return sb.compile(eom), consts


@pytest.fixture(scope="module")
def pushed_block():
    eom, consts = block_on_slope(static=True, pushed=True)
    return sb.compile(eom), consts


def _block_start(consts, theta):
    """At rest on the slope, its weight's normal part balanced by the contact."""
    d0 = _rest_depth(consts["m"] * G * np.cos(theta), consts["k"])
    return dict(x=0.0, y=-d0, v_x=0.0, v_y=0.0)


@pytest.mark.parametrize("theta, mu, v0", [(0.5, 0.3, 0.0), (0.7, 0.25, 0.4)])
def test_block_steeper_than_friction_angle_slides_with_textbook_acceleration(block, theta, mu, v0):
    model, consts = block
    p = dict(consts, theta=theta, mu=mu)
    t_eval = np.linspace(0.0, 2.0, 21)
    sol = sb.simulate(model, (0, 2), _block_start(consts, theta) | {"v_x": v0}, p,
                      solver=TIGHT, t_eval=t_eval)
    assert sol.success and not sol.events
    a = G * (np.sin(theta) - mu * np.cos(theta))
    expected = v0 * t_eval + 0.5 * a * t_eval**2
    assert np.max(np.abs(sol.q[:, 0] - expected)) <= 1e-6 * expected[-1]
    fitted = 2 * (sol.q[-1, 0] - v0 * 2.0) / 2.0**2
    assert abs(fitted - a) <= 1e-6 * a
    hist = sol.contacts["block"]
    assert (hist.mode == "slip").all()
    np.testing.assert_allclose(hist.friction_force[:, 0], -mu * hist.normal_force, rtol=1e-12)


@pytest.mark.parametrize("theta, mu", [(0.2, 0.3), (0.45, 0.5)])
def test_block_on_gentler_slope_stays_still(block, theta, mu):
    model, consts = block
    p = dict(consts, theta=theta, mu=mu)
    sol = sb.simulate(model, (0, 10), _block_start(consts, theta), p)
    assert sol.success
    assert np.ptp(sol.q[:, 0]) < 1e-9
    hist = sol.contacts["block"]
    assert (hist.mode == "stick").all()
    # the stuck contact's force is the multiplier: it holds the block's weight along the slope
    np.testing.assert_allclose(hist.friction_force[:, 0], -consts["m"] * G * np.sin(theta), rtol=1e-6)
    assert np.all(np.abs(hist.friction_force[:, 0]) <= mu * hist.normal_force)


def test_spatial_block_stays_still_and_slides_in_two_tangents(spatial_block):
    model, consts = spatial_block
    theta = 0.2
    d0 = _rest_depth(consts["m"] * G * np.cos(theta), consts["k"])
    still = sb.simulate(model, (0, 10), dict(x=0, y=-d0, z=0, v_x=0, v_y=0, v_z=0),
                        dict(consts, theta=theta, mu=0.3))
    assert still.success and np.max(np.ptp(still.q[:, [0, 2]], axis=0)) < 1e-9
    # launched across a steep slope (mu < tan theta): slides, turning down the slope
    theta, mu = 0.5, 0.3
    d0 = _rest_depth(consts["m"] * G * np.cos(theta), consts["k"])
    sol = sb.simulate(model, (0, 1), dict(x=0, y=-d0, z=0, v_x=0, v_y=0, v_z=1.0),
                      dict(consts, theta=theta, mu=mu), solver=TIGHT)
    assert sol.success
    hist = sol.contacts["block"]
    assert (hist.mode == "slip").all()
    v = sol.u[:, [2, 0]]            # the tangents (S.z, S.x)
    speed = np.linalg.norm(v, axis=1)
    np.testing.assert_allclose(hist.friction_force, -mu * hist.normal_force[:, None] * v / speed[:, None], rtol=1e-9,
                               atol=1e-12)


def test_block_reverses_when_it_cannot_stick(block):
    model, consts = block
    theta, mu, v0 = 0.5, 0.3, 2.0
    sol = sb.simulate(model, (0, 1), _block_start(consts, theta) | {"v_x": -v0},
                      dict(consts, theta=theta, mu=mu), solver=TIGHT)
    up, down = G * (np.sin(theta) + mu * np.cos(theta)), G * (np.sin(theta) - mu * np.cos(theta))
    t_stop = v0 / up
    assert [e.name for e in sol.events] == ["block: reversal"]
    assert abs(sol.events[0].t - t_stop) <= 1e-9 * t_stop
    x_end = -v0 * t_stop + 0.5 * up * t_stop**2 + 0.5 * down * (1 - t_stop) ** 2
    assert abs(sol.q[-1, 0] - x_end) <= 1e-8


def test_sliding_block_stops_and_sticks_on_gentle_slope(block):
    model, consts = block
    theta, mu, v0 = 0.2, 0.3, 1.0
    sol = sb.simulate(model, (0, 3), _block_start(consts, theta) | {"v_x": v0},
                      dict(consts, theta=theta, mu=mu), solver=TIGHT)
    decel = G * (mu * np.cos(theta) - np.sin(theta))
    t_stop = v0 / decel
    assert [e.name for e in sol.events] == ["block: slip -> stick"]
    assert abs(sol.events[0].t - t_stop) <= 1e-9 * t_stop
    after = sol.t > sol.events[0].t
    np.testing.assert_allclose(sol.q[after, 0], v0**2 / (2 * decel), rtol=1e-9)
    assert np.ptp(sol.q[after, 0]) < 1e-12
    assert (sol.contacts["block"].mode[after] == "stick").all()


@pytest.mark.parametrize("spatial", [False, True])
def test_sphere_launched_without_spin_rolls_from_closed_form_time(spatial):
    eom, consts = sphere_on_ground(spatial)
    model = sb.compile(eom)
    v0, mu, r = 2.0, consts["mu"], consts["r"]
    x0 = {str(s): 0.0 for s in model.states} | {"y": r - _rest_depth(consts["m"] * G, consts["k"])}
    x0["v_x"] = v0
    if spatial:
        x0["v_z"] = -0.75 * v0
    speed0 = v0 * (1.25 if spatial else 1.0)
    sol = sb.simulate(model, (0, 1), x0, consts, solver=TIGHT)
    t_star = 2 * speed0 / (7 * mu * G)
    assert [e.name for e in sol.events] == ["ball: slip -> stick"]
    assert abs(sol.events[0].t - t_star) <= 1e-6 * t_star
    rolling = sol.t > t_star
    np.testing.assert_allclose(sol.u[rolling, 0], 5 * v0 / 7, rtol=1e-6)
    if spatial:
        np.testing.assert_allclose(sol.u[rolling, 2], -0.75 * 5 * v0 / 7, rtol=1e-6)
    assert np.max(np.abs(sol.contacts["ball"].slip_velocity[rolling])) < 1e-12


def _box_reference(p, y0, v0, t_end):
    """The planar box of friction_systems.planar_box as a hand-written ODE, both corners
    slipping forward (friction -μ F_n), from rest on its corners with speed v0, to the first
    stop of a corner (solve_ivp, event-located): (t_stop, state at t_stop)."""
    m, k, c, mu, a, h = (p[s] for s in ("m", "k", "c", "mu", "a", "h"))
    inertia = m * (a**2 + h**2) / 3

    def corners(s):
        x, y, phi, vx, vy, w = s
        out = []
        for sx in (-1.0, 1.0):
            rx = sx * a * np.cos(phi) + h * np.sin(phi)
            ry = sx * a * np.sin(phi) - h * np.cos(phi)
            out.append((rx, ry, y + ry, vx - w * ry, vy + w * rx))
        return out

    def f(t, s):
        fx = fy = tz = 0.0
        for rx, ry, gap, _, vty in corners(s):
            fn = k * (-gap) ** 1.5 * max(0.0, 1 - 1.5 * c * vty) if gap < 0 else 0.0
            ft = -mu * fn
            fx, fy, tz = fx + ft, fy + fn, tz + rx * fn - ry * ft
        return [s[3], s[4], s[5], fx / m, fy / m - G, tz / inertia]

    events = [lambda t, s, i=i: corners(s)[i][3] for i in range(2)]
    for e in events:
        e.terminal, e.direction = True, -1
    ref = solve_ivp(f, (0, t_end), [0, y0, 0, v0, 0, 0], method="DOP853", rtol=1e-12, atol=1e-13,
                    events=events)
    return ref.t[-1], ref.y[:, -1]


def test_box_on_two_corners_slides_to_rest_as_an_independent_integration():
    eom, p = planar_box()
    model = sb.compile(eom)
    y0 = p["h"] - _rest_depth(p["m"] * G / 2, p["k"])
    sol = sb.simulate(model, (0, 1), dict(x=0, y=y0, phi=0, v_x=2.0, v_y=0, omega=0), p, solver=TIGHT)
    t_stop, ref = _box_reference(p, y0, 2.0, 1.0)
    stops = [e for e in sol.events if e.name.endswith("slip -> stick")]
    assert {e.name.split(":")[0] for e in stops} == {"left", "right"}
    assert abs(stops[0].t - t_stop) <= 1e-7 * t_stop
    np.testing.assert_allclose(stops[0].x[:3], ref[:3], atol=1e-8)
    # afterwards both corners stick (the box still rocks on them): the corners stay where they
    # stopped, the forces within the cone
    after = sol.t > stops[-1].t
    x, phi = sol.q[after, 0], sol.q[after, 2]
    # (one corner's slip row is dependent on the other's to first order, and held to that order:
    # it creeps at second order in the rocking; see friction_modes.RANK_TOL)
    for sx in (-1, 1):
        corner = x + sx * p["a"] * np.cos(phi) + p["h"] * np.sin(phi)
        assert np.ptp(corner) < 1e-6
    for name in ("left", "right"):
        hist = sol.contacts[name]
        assert (hist.mode[after] == "stick").all()
        assert np.all(np.abs(hist.friction_force[after, 0]) <= p["mu"] * hist.normal_force[after] * (1 + 1e-8))


def _rotation(angles):
    """N <- B for body-fixed XYZ angles: Rx Ry Rz."""
    a, b, c = angles
    rx = np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])
    ry = np.array([[np.cos(b), 0, np.sin(b)], [0, 1, 0], [-np.sin(b), 0, np.cos(b)]])
    rz = np.array([[np.cos(c), -np.sin(c), 0], [np.sin(c), np.cos(c), 0], [0, 0, 1]])
    return rx @ ry @ rz


def test_spatial_box_spinning_and_sliding_comes_to_rest():
    eom, p = spatial_box()
    model = sb.compile(eom)
    y0 = p["h"] - _rest_depth(p["m"] * G / 4, p["k"])
    x0 = {str(s): 0.0 for s in model.states} | dict(y=y0, v_x=1.5, v_z=0.5, w_2=2.0)
    sol = sb.simulate(model, (0, 1), x0, p, solver=sb.Solver(rtol=1e-8, atol=1e-10))
    assert sol.success
    stuck_at = max(e.t for e in sol.events if e.name.endswith("slip -> stick"))
    after = sol.t > stuck_at
    assert after.sum() > 2
    # once every corner sticks the corners stay where they stopped (the box may rock on them)
    for sx, sz in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
        corner = np.array([_rotation(q[3:6]) @ [sx * p["a"], -p["h"], sz * p["b"]] + q[:3]
                           for q in sol.q[after]])
        assert np.max(np.ptp(corner[:, [0, 2]], axis=0)) < 1e-6
    for i in range(4):
        hist = sol.contacts[f"c{i}"]
        assert (hist.mode[after] == "stick").all()
        assert np.all(np.linalg.norm(hist.friction_force[after], axis=1) <= p["mu"] * hist.normal_force[after] * (1 + 1e-8))
        # (dependent rows are held to first order: they slip at second order while the box
        # rocks on its corners, a transient; see friction_modes.RANK_TOL)
        assert np.max(np.abs(hist.slip_velocity[after])) < 1e-4
        assert np.max(np.abs(hist.slip_velocity[sol.t > stuck_at + 0.3])) < 1e-6


def test_several_contacts_each_in_its_own_mode():
    eom, p = two_blocks()
    model = sb.compile(eom)
    theta = p["theta"]
    d0 = _rest_depth(p["m"] * G * np.cos(theta), p["k"])
    sol = sb.simulate(model, (0, 2), dict(x_1=0, y_1=-d0, x_2=0, y_2=-d0, v_1=0, w_1=0, v_2=0, w_2=0),
                      p, solver=TIGHT)
    a = G * (np.sin(theta) - p["mu_1"] * np.cos(theta))
    assert abs(sol.q[-1, 0] - 2 * a) <= 1e-6 * 2 * a
    assert np.ptp(sol.q[:, 2]) < 1e-9
    assert (sol.contacts["one"].mode == "slip").all() and (sol.contacts["two"].mode == "stick").all()


def test_static_friction_holds_until_mu_s_then_kinetic_friction_slides(pushed_block):
    model, consts = pushed_block
    p = dict(consts, theta=0.0, mu=0.3, mu_s=0.5)
    rate, T = 4.0, 2.0
    sol = sb.simulate(model, (0, T), _block_start(consts, 0.0), p,
                      specifieds={"f_x": rate * TIME, "f_y": 0.0}, solver=TIGHT)
    t_break = p["mu_s"] * G / rate
    assert [e.name for e in sol.events] == ["block: stick -> slip"]
    assert abs(sol.events[0].t - t_break) <= 1e-6 * t_break
    x_end = rate * (T**3 / 6 - t_break**2 * T / 2 + t_break**3 / 3) - p["mu"] * G * (T - t_break) ** 2 / 2
    assert abs(sol.q[-1, 0] - x_end) <= 1e-6 * x_end
    np.testing.assert_allclose(sol.specified_values[:, 0], sol.contacts["block"].friction_force[:, 0])


def test_lift_off_frees_a_stuck_contact(pushed_block):
    model, consts = pushed_block
    p = dict(consts, theta=0.0, mu=0.3, mu_s=0.5)
    sol = sb.simulate(model, (0, 1), _block_start(consts, 0.0), p,
                      specifieds={"f_x": 0.0, "f_y": 20 * TIME}, solver=TIGHT)
    assert [e.name for e in sol.events] == ["block: lift-off", "block: stick -> slip"]
    assert sol.events[0].t == sol.events[1].t
    hist = sol.contacts["block"]
    free = sol.t > sol.events[0].t
    assert np.all(hist.gap[free] > 0.0)
    assert (hist.mode[free] == "slip").all() and np.all(hist.normal_force[free] == 0.0)
    assert np.all(hist.friction_force[free] == 0.0)


def test_ball_landing_without_slip_sticks_and_one_landing_on_a_slope_slides_first(block):
    model, consts = block
    p = dict(consts, theta=0.0, mu=0.3)
    sol = sb.simulate(model, (0, 0.5), dict(x=0, y=0.01, v_x=0, v_y=0), p)
    assert sol.success
    assert np.max(np.abs(sol.q[:, 0])) < 1e-12
    assert sol.contacts["block"].mode[-1] == "stick"


def test_exact_friction_needs_its_coefficient_declared_and_sets_its_placeholders(block):
    import sympy as sm
    import sympy.physics.mechanics as me

    from symbody.formulation.contact_record import ContactRecord

    x, v = me.dynamicsymbols("x v")
    lam = me.dynamicsymbols("F")
    mu = sm.Symbol("mu_undeclared")
    eom = sb.EquationsOfMotion([x], [v], [x.diff() - v], [v.diff() - lam], specifieds=[lam])
    rec = ContactRecord(name="c", gap=-sm.S.One, gap_rate=sm.S.Zero, normal_force=sm.S.One,
                        slip_velocity=(v,), friction_coefficient=mu, friction_mode="exact",
                        friction_placeholders=(lam,))
    # μ appears in the contact only: the run's constants take it (here the only one)
    model = sb.compile(eom.with_contacts(rec))
    with pytest.raises(InputError, match="mu_undeclared"):
        sb.simulate(model, (0, 1), [0, 1], [])
    sol = sb.simulate(model, (0, 1), [0, 1], {"mu_undeclared": 0.25}, solver=TIGHT)
    t_stop = 1 / 0.25
    assert sol.success and abs(sol.q[-1, 0] - (1 - 0.5 * 0.25)) < 1e-9 and t_stop > 1
    model, consts = block
    with pytest.raises(InputError, match="F_1.*placeholder"):
        sb.simulate(model, (0, 1), _block_start(consts, 0.2), consts, specifieds={"F_1": 0.0})


def test_contact_api_sphere_rolls_and_the_energy_balance_closes():
    """The same slip-to-roll through symbody.contact (Contact(..., friction_mode="exact")): the
    trajectory's contacts record the modes, and E + V + D stays E(0) + V(0) with D the energy
    the sliding dissipated, ½v0² - ½(5v0/7)²(1 + 2/5) per unit mass."""
    import sympy as sm
    import sympy.physics.mechanics as me

    x, y, a = me.dynamicsymbols("x y alpha")
    vx, vy, w = me.dynamicsymbols("v_x v_y omega")
    m, g, r, k, c, mu = sm.symbols("m g r k c mu")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    B = N.orientnew("B", "Axis", (a, N.z))
    B.set_ang_vel(N, w * N.z)
    centre = O.locatenew("G", x * N.x + y * N.y)
    centre.set_vel(N, vx * N.x + vy * N.y)
    ball = me.RigidBody("ball", centre, B, m, (me.inertia(B, 0, 0, 2 * m * r**2 / 5), centre))
    contact = sb.contact.Contact(sb.contact.Plane(O, N.y), sb.contact.Sphere(centre, r, frame=B), stiffness=k,
                                 damping=c, friction=mu, friction_mode="exact", name="ground")
    km = sb.KanesMethod(N, [x, y, a], [vx, vy, w], kd_eqs=[x.diff() - vx, y.diff() - vy, a.diff() - w])
    km.kanes_equations([ball], contact.to_loads() + [(centre, -m * g * N.y)])
    model = sb.compile(km.to_eom())
    p = dict(m=1.0, g=G, r=0.1, k=1e6, c=0.5, mu=0.2)
    v0 = 2.0
    x0 = dict(x=0, y=0.1 - _rest_depth(G, 1e6), alpha=0, v_x=v0, v_y=0, omega=0)
    sol = sb.simulate(model, (0, 0.6), x0, p, solver=TIGHT)
    t_star = 2 * v0 / (7 * 0.2 * G)
    assert [e.name for e in sol.events] == ["ground: slip -> stick"]
    assert abs(sol.events[0].t - t_star) <= 1e-6 * t_star
    ground = sol.contacts["ground"]
    assert list(ground.mode[[0, -1]]) == ["slip", "stick"]
    energy = 0.5 * (sol.u[:, 0] ** 2 + sol.u[:, 1] ** 2) + 0.2 * 0.01 * sol.u[:, 2] ** 2 + G * sol.q[:, 1]
    balance = energy + ground.elastic_energy + ground.dissipated
    assert np.ptp(balance) < 1e-8
    lost = 0.5 * v0**2 - 0.5 * (5 * v0 / 7) ** 2 * 1.4
    assert abs(ground.dissipated[-1] - lost) < 1e-8


def test_contact_api_static_coefficient_bounds_the_stick():
    import sympy as sm
    import sympy.physics.mechanics as me

    x, y, vx, vy, f = me.dynamicsymbols("x y v_x v_y f")
    m, g, k, mu_k, mu_s = sm.symbols("m g k mu_k mu_s")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y)
    P.set_vel(N, vx * N.x + vy * N.y)
    friction = sb.contact.Friction(mu_k, static=mu_s)
    contact = sb.contact.Contact(sb.contact.Plane(O, N.y), sb.contact.Sphere(P, 0), stiffness=k,
                                 friction=friction, friction_mode="exact", name="floor")
    km = sb.KanesMethod(N, [x, y], [vx, vy], kd_eqs=[x.diff() - vx, y.diff() - vy])
    km.kanes_equations([me.Particle("block", P, m)], contact.to_loads() + [(P, -m * g * N.y + f * N.x)])
    model = sb.compile(km.to_eom())
    p = dict(m=1.0, g=G, k=1e5, mu_k=0.3, mu_s=0.5)
    rate = 4.0
    sol = sb.simulate(model, (0, 1.5), dict(x=0, y=-_rest_depth(G, 1e5), v_x=0, v_y=0), p,
                      specifieds={"f": rate * TIME}, solver=TIGHT)
    t_break = 0.5 * G / rate
    assert [e.name for e in sol.events] == ["floor: stick -> slip"]
    assert abs(sol.events[0].t - t_break) <= 1e-6 * t_break
    with pytest.raises(InputError, match="exact friction is Coulomb"):
        sb.contact.Contact(sb.contact.Plane(O, N.y), sb.contact.Sphere(P, 0), stiffness=k,
                           friction=sb.contact.Friction(mu_k, viscous=0.1), friction_mode="exact")


def test_zoo_block_on_slope_in_exact_mode():
    import math

    from symbody.models.block_on_slope import sliding_acceleration

    zoo = sb.models.block_on_slope(friction_mode="exact")
    model = sb.compile(zoo.eom)
    sol = sb.simulate(model, zoo.t_span, zoo.initial_state, zoo.constants, solver=TIGHT)
    a = (sol.u[-1, 0] - sol.u[0, 0]) / (sol.t[-1] - sol.t[0])
    assert abs(a / sliding_acceleration(G, math.radians(30), 0.3) - 1) < 1e-6
    still = sb.models.block_on_slope(friction_mode="exact", theta=0.2, mu=0.3, speed=0.0)
    sol = sb.simulate(model, (0, 10), still.initial_state, still.constants)
    assert sol.success and np.ptp(sol.q[:, 0]) < 1e-9


def test_slip_direction_turning_past_ninety_degrees_against_a_reference(spatial_block):
    """Launched up and across a steep slope the slip direction turns by more than 90 degrees
    without stopping (the piece's reference direction is renewed at 60 degrees, nothing is
    recorded): the motion is the particle's with -μ m g cos θ v̂, integrated by solve_ivp."""
    model, consts = spatial_block
    theta, mu = 0.5, 0.3
    d0 = _rest_depth(consts["m"] * G * np.cos(theta), consts["k"])
    v0 = np.array([-1.5, 1.0])                      # (down the slope, across)
    sol = sb.simulate(model, (0, 1.5), dict(x=0, y=-d0, z=0, v_x=v0[0], v_y=0, v_z=v0[1]),
                      dict(consts, theta=theta, mu=mu), solver=TIGHT)
    assert sol.success and sol.events == [] and sol.friction_pieces > 1

    def particle(t, y):
        v = y[2:]
        a = np.array([G * np.sin(theta), 0.0]) - mu * G * np.cos(theta) * v / np.linalg.norm(v)
        return [v[0], v[1], a[0], a[1]]

    ref = solve_ivp(particle, (0, 1.5), [0, 0, *v0], rtol=1e-12, atol=1e-13, dense_output=True)
    assert np.max(np.abs(sol.q[:, [0, 2]] - ref.sol(sol.t)[:2].T)) < 1e-8


def test_events_at_one_instant_seen_twice_are_one():
    """Lift-off and the end of a stick at the instant the normal force reaches 0 are found a
    few ulps apart on some machines (the stick's bound μ_s F_n reaches the round-off of the
    friction it must hold first, or the next piece's contact events find the gap leaving
    again at -1e-19): the lift-off is recorded once, before that contact's mode change, at
    its time (as on the machines where both are found at once)."""
    from symbody.analysis.events import EventRecord
    from symbody.analysis.simulation.friction_join import _without_repeats
    from symbody.analysis.simulation.friction_pieces import _record_contact_event

    t0, x = 0.5007635635683241, np.zeros(2)
    t1 = t0 + 2.2e-16
    records = [EventRecord("block: stick -> slip", t0, x)]
    _record_contact_event(records, EventRecord("block: lift-off", t1, x), "block: ")
    assert [(r.name, r.t) for r in records] == [("block: lift-off", t0), ("block: stick -> slip", t0)]
    _record_contact_event(records, EventRecord("block: lift-off", t1, x), "block: ")   # (again)
    assert len(records) == 2
    _record_contact_event(records, EventRecord("other: touchdown", t1, x), "other: ")
    _record_contact_event(records, EventRecord("block: touchdown", 0.7, x), "block: ")
    assert [r.name for r in records][2:] == ["other: touchdown", "block: touchdown"]
    joined = _without_repeats(sorted(records + [EventRecord("block: lift-off", t1 + 2.2e-16, x),
                                                EventRecord("block: lift-off", 0.9, x)],
                                     key=lambda e: e.t))
    assert [r.name for r in joined] == ["block: lift-off", "block: stick -> slip", "other: touchdown",
                                        "block: touchdown", "block: lift-off"]
