"""The contacts' parameters as constants of the model: exact friction's μ in eom.constants,
changed through the run's parameters like any constant, and checked with the run's numbers."""

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.errors import InputError
from systems.contact_systems import kane, point_on_slope


@pytest.fixture(scope="module")
def block():
    """A block (a point) on a slope tilted by θ, Hunt-Crossley normal force, exact friction μ."""
    system = point_on_slope()
    km, _ = kane(system)
    eom = km.to_eom()
    return eom, sb.compile(eom), system.constants["mu"]


def _at_rest(theta, k=1e5, g=9.81):
    return {"s": 0.0, "h": -(g * np.cos(theta) / k) ** (2 / 3), "u_s": 0.0, "u_h": 0.0}


def test_exact_friction_coefficient_is_a_constant_changed_through_the_parameters(block):
    eom, model, mu = block
    assert mu in eom.constants and mu in model.constants
    theta, T = 0.5, 1.0
    p = {"m": 1.0, "g": 9.81, "k": 1e5, "c": 0.5, "theta": theta}
    tight = sb.Solver(rtol=1e-10, atol=1e-12)
    for value, by_array in ((0.3, False), (0.1, True)):
        given = p | {"mu": value}
        if by_array:            # the model's constants in order, μ among them
            given = np.array([given[str(c)] for c in model.constants])
        sol = sb.simulate(model, (0.0, T), _at_rest(theta), given, solver=tight)
        a = 2.0 * (sol.q[-1, 0] - sol.q[0, 0]) / T ** 2
        assert a == pytest.approx(9.81 * (np.sin(theta) - value * np.cos(theta)), rel=1e-9)


def test_exact_friction_coefficient_is_checked_with_the_runs_numbers(block):
    _, model, _ = block
    p = {"m": 1.0, "g": 9.81, "k": 1e5, "c": 0.5, "theta": 0.5, "mu": -0.2}
    with pytest.raises(InputError, match=r"contact 'slope': the friction coefficient mu = -0.2"):
        sb.simulate(model, (0.0, 1.0), _at_rest(0.5), p)


def test_static_friction_coefficient_is_checked_with_the_runs_numbers():
    x, h, ux, uh = me.dynamicsymbols("x h u_x u_h")
    m, g, k, mu, mu_s = sm.symbols("m g k mu mu_s")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + h * N.y)
    P.set_vel(N, ux * N.x + uh * N.y)
    floor = sb.contact.Contact(sb.contact.Plane(O, N.y), sb.contact.Sphere(P, 0), stiffness=k,
                               friction=sb.contact.Friction(mu, static=mu_s), friction_mode="exact",
                               name="floor")
    km = sb.KanesMethod(N, [x, h], [ux, uh], kd_eqs=[x.diff() - ux, h.diff() - uh])
    km.kanes_equations([me.Particle("block", P, m)], floor.to_loads() + [(P, -m * g * N.y)])
    eom = km.to_eom()
    assert {mu, mu_s} <= set(eom.constants)
    model = sb.compile(eom)
    p = {"m": 1.0, "g": 9.81, "k": 1e5, "mu": 0.3, "mu_s": -0.4}
    with pytest.raises(InputError, match=r"contact 'floor': the static friction coefficient mu_s = -0.4"):
        sb.simulate(model, (0.0, 0.1), {"x": 0.0, "h": 0.0, "u_x": 0.0, "u_h": 0.0}, p)


def test_two_points_of_one_body_cannot_touch():
    x, th = me.dynamicsymbols("x theta")
    N = me.ReferenceFrame("N")
    B = N.orientnew("B", "Axis", (th, N.z))
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x)
    Q = P.locatenew("Q", 0.2 * B.x)
    with pytest.raises(InputError, match=r"contact 'points'.*fixed to each other"):
        sb.contact.Contact(sb.contact.Sphere(P, 0, frame=B), sb.contact.Sphere(Q, 0, frame=B),
                           stiffness=1.0, name="points")
