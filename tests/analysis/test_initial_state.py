"""x0: dependent values that disagree with the constraints are reported (by how much, what was
used); an array x0 is read in model.states order, which keeps the order the coordinates were
given in (also with Lagrange's method)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.analysis.initial_state import InitialStateWarning

t = me.dynamicsymbols._t


@pytest.fixture(scope="module")
def four_bar():
    zoo = sb.models.four_bar()
    return zoo, sb.compile(zoo.eom)


def test_consistent_x0_gives_no_warning(four_bar):
    zoo, model = four_bar
    with warnings.catch_warnings():
        warnings.simplefilter("error", InitialStateWarning)
        sb.simulate(model, (0.0, 0.1), zoo.initial_state, zoo.constants)


def test_dependent_coordinate_off_the_constraints_is_reported(four_bar):
    zoo, model = four_bar
    q2 = model.coordinates[1]
    x0 = dict(zoo.initial_state)
    x0[q2] += 0.05
    with pytest.warns(InitialStateWarning, match=r"q2 = .* misses the holonomic constraints \(the dependent "
                                                 r"coordinate differs by 0\.05\); used .*q1 held") as rec:
        sol = sb.simulate(model, (0.0, 0.1), x0, zoo.constants)
    assert sol.q[0, 1] == pytest.approx(zoo.initial_state[q2], abs=1e-9)
    assert len(rec) == 1


def test_dependent_speed_off_the_constraints_is_reported(four_bar):
    zoo, model = four_bar
    u1, u2, u3 = model.speeds
    x0 = {**zoo.initial_state, u1: 1.0}
    u_ok = model.full_speeds(model.state_array(x0)[:3], [1.0], zoo.constants)
    # right values: silent
    with warnings.catch_warnings():
        warnings.simplefilter("error", InitialStateWarning)
        sb.simulate(model, (0.0, 0.05), {**x0, "u2": u_ok[1], "u3": u_ok[2]}, zoo.constants)
    with pytest.warns(InitialStateWarning, match=r"u3 = 0\.5 violates the velocity constraints \(differs by "
                                                 rf"{abs(0.5 - u_ok[2]):.3g}\); used {u_ok[2]:.10g}"):
        sol = sb.simulate(model, (0.0, 0.05), {**x0, "u3": 0.5}, zoo.constants)
    assert sol.u[0, 2] == pytest.approx(u_ok[2], abs=1e-12)
    # an array with all speeds: the dependent ones are checked as well
    arr = np.concatenate([model.state_array(x0)[:3], [1.0, 0.0, 0.0]])
    with pytest.warns(InitialStateWarning, match="u2 = 0 violates"):
        sb.simulate(model, (0.0, 0.05), arr, zoo.constants)


def test_lagrange_keeps_the_coordinates_in_the_given_order():
    q1, q2, q3 = me.dynamicsymbols("q1 q2 q3")
    la, lb, lc, ln, m, g = sm.symbols("l_a l_b l_c l_n m g")
    x2, y2 = la * sm.cos(q1), la * sm.sin(q1)
    x3, y3 = x2 + lb * sm.cos(q1 + q2), y2 + lb * sm.sin(q1 + q2)
    T = m / 2 * (x2.diff(t) ** 2 + y2.diff(t) ** 2 + x3.diff(t) ** 2 + y3.diff(t) ** 2)
    fh = [la * sm.cos(q1) + lb * sm.cos(q1 + q2) + lc * sm.cos(q1 + q2 + q3) - ln,
          la * sm.sin(q1) + lb * sm.sin(q1 + q2) + lc * sm.sin(q1 + q2 + q3)]
    lm = sb.LagrangesMethod(T - m * g * (y2 + y3), [q1, q2, q3], hol_coneqs=fh)
    lm.form_lagranges_equations()
    model = sb.compile(lm.to_eom())
    assert model.coordinates == (q1, q2, q3)
    assert model.states[:3] == (q1, q2, q3)
    zoo = sb.models.four_bar()
    p = {str(k): v for k, v in zoo.constants.items()}
    x_user = [zoo.initial_state[s] for s in zoo.eom.q] + [0.0]      # q1, q2, q3, u_q1
    with warnings.catch_warnings():
        warnings.simplefilter("error", InitialStateWarning)  # read in the given order: consistent
        sol = sb.simulate(model, (0.0, 0.5), x_user, p, solver=sb.Solver(rtol=1e-10, atol=1e-10))
    ref = sb.simulate(sb.compile(zoo.eom), (0.0, 0.5), zoo.initial_state, zoo.constants,
                      solver=sb.Solver(rtol=1e-10, atol=1e-10), t_eval=sol.t)
    # Kane and Lagrange on the same four-bar, both at tolerance 1e-10: agree to ~1e-8
    np.testing.assert_allclose(sol.q, ref.q, atol=1e-7)
