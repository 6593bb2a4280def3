"""Masses and inertias checked with the run's constants (issue 34, item 5): a negative mass
failed deep in the integrator ("Required step size is less than spacing between numbers");
now simulate and linearize name the body and the constant."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.errors import InputError

t = me.dynamicsymbols._t


@pytest.fixture(scope="module")
def two_particle():
    zoo = sb.models.get("two-particle-pendulum")
    return zoo, sb.compile(zoo.eom)


def test_a_negative_mass_is_named(two_particle):
    zoo, model = two_particle
    p = {str(k): v for k, v in zoo.constants.items()}
    assert sb.simulate(model, (0, 0.2), zoo.initial_state, p).success
    p["m1"] = -1.0
    with pytest.raises(InputError, match=r"body P1: its mass m1 = -1 is not positive"):
        sb.simulate(model, (0, 0.2), zoo.initial_state, p)
    with pytest.raises(InputError, match=r"body P1: its mass m1 = -1"):
        sb.linearize(model, zoo.initial_state, p, check_equilibrium=False)


def test_an_inertia_that_is_not_positive_semidefinite_is_named():
    q, u = me.dynamicsymbols("q u")
    m, g, l, I1, I3 = sm.symbols("m g l I1 I3")
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q, N.z])
    A.set_ang_vel(N, u * N.z)
    O = me.Point("O")
    O.set_vel(N, 0)
    G = O.locatenew("G", -l * A.y)
    G.v2pt_theory(O, N, A)
    rod = me.RigidBody("rod", G, A, m, (me.inertia(A, I1, 0, I3), G))
    km = sb.KanesMethod(N, [q], [u], [q.diff(t) - u])
    km.kanes_equations([rod], [(G, -m * g * N.y)])
    model = sb.compile(km.to_eom())
    assert [str(c) for c in model.constants] == ["I3", "g", "l", "m"]   # I1: not in the equations
    p = {"m": 1.0, "g": 9.81, "l": 0.5, "I3": 0.02}
    assert sb.simulate(model, (0, 0.2), [0.3, 0.0], p).success      # I2 = 0: a thin rod is fine
    with pytest.raises(InputError, match=r"body rod: its central inertia .* diagonal entry "
                                         r"I3 = -0\.1 < 0 with I3 = -0\.1"):
        sb.simulate(model, (0, 0.2), [0.3, 0.0], {**p, "I3": -0.1})
    # the run itself would not have told: I3 + m l^2 = 0.15 > 0 still swings
    assert np.isfinite(model.rhs(0.0, [0.3, 0.0], {**p, "I3": -0.1})).all()


def test_an_indefinite_inertia_is_named():
    # the Whipple bicycle's rear frame: I_Bxx = 9.2, I_Bzz = 2.8, I_Bxz = -2.4 (benchmark);
    # with I_Bxz = -6 every diagonal entry stays positive but the inertia is indefinite
    zoo = sb.models.get("whipple-bicycle")
    model = sb.compile(zoo.eom)
    p = {str(k): v for k, v in zoo.constants.items()}
    x0 = model.state_array(zoo.initial_state)
    sb.linearize(model, x0, p, check_equilibrium=False)                # the benchmark's numbers
    with pytest.raises(InputError, match=r"body frame: its central inertia \(in its frame\) has "
                                         r"the principal moment -0\.\d+ < 0 with .*I_Bxz = -6.*"
                                         r"not positive semidefinite"):
        sb.linearize(model, x0, {**p, "I_Bxz": -6.0}, check_equilibrium=False)
