"""linearize() says what is wrong with an operating point (issue 34, item 5): a state that is
not an equilibrium warns, a dead centre of the independent coordinate names the coordinate
to choose instead, and a change point is refused instead of returning numbers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.analysis.linearization import NotAnEquilibriumWarning
from symbody.errors import SingularConstraintError

t = me.dynamicsymbols._t


@pytest.fixture(scope="module")
def pendulum_on_rail():
    """A pendulum (angle q) hanging from a cart (x) that rolls freely: x does not enter the
    dynamics, so riding along at constant speed is a steady motion."""
    x, q, v, u = me.dynamicsymbols("x q v u")
    g, l = sm.symbols("g l")
    M = sm.Matrix([[2, l * sm.cos(q)], [l * sm.cos(q), l**2]])
    rest = sm.Matrix([-l * sm.sin(q) * u**2, g * l * sm.sin(q)])
    eom = sb.EquationsOfMotion([x, q], [v, u], kinematic=[x.diff(t) - v, q.diff(t) - u],
                               dynamic=(M, rest), constants=[g, l])
    return sb.compile(eom)


def test_not_an_equilibrium_warns_naming_the_moving_states(pendulum_on_rail):
    model = pendulum_on_rail
    p = {"g": 9.81, "l": 1.0}
    with pytest.warns(NotAnEquilibriumWarning, match=r"not an equilibrium.*\bv' = .*u' = "):
        A, _ = sb.linearize(model, {"x": 0.0, "q": 0.4, "v": 0.0, "u": 0.0}, p)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # hanging still, and riding along at 3 m/s (x moves, but nothing depends on x)
        A0, _ = sb.linearize(model, {"x": 0.0, "q": 0.0, "v": 0.0, "u": 0.0}, p)
        A1, _ = sb.linearize(model, {"x": 5.0, "q": 0.0, "v": 3.0, "u": 0.0}, p)
        sb.linearize(model, {"x": 0.0, "q": 0.4, "v": 0.0, "u": 0.0}, p, check_equilibrium=False)
    np.testing.assert_allclose(A0, A1, rtol=0, atol=1e-14)
    # the analytic small-oscillation frequency of the free cart-pendulum: g (m_c + m) / (m_c l)
    assert np.sort(np.linalg.eigvals(A0).imag)[-1] == pytest.approx(np.sqrt(9.81 * 2), rel=1e-12)


def _four_bar(**lengths):
    zoo = sb.models.four_bar().with_constants(**lengths)
    model = sb.compile(zoo.eom)
    return model, model.constants_array(zoo.constants)


def test_dead_centre_names_the_coordinate_to_choose():
    # l_b + l_c = 2.4 is reached with the crank at cos q1 = -0.35: coupler and rocker in line,
    # the crank q1 at the end of its range (a double rocker)
    model, P = _four_bar(l_b=1.5, l_c=0.9)
    q1 = np.arccos(-0.35)
    P2 = 0.8 * np.array([np.cos(q1), np.sin(q1)])
    q = [q1, np.arctan2(-P2[1], 2.0 - P2[0]) - q1, 0.0]
    assert np.max(np.abs(model.holonomic_residual(q, P))) < 1e-14      # the guess is exact
    with pytest.raises(SingularConstraintError, match=r"independent coordinate q1 cannot be "
                       r"varied there.*dead centre of q1, not a bad guess.*Choose q3 as "
                       r"independent instead \(q1, q2 dependent\)") as info:
        sb.linearize(model, {"q1": q[0], "q2": q[1], "q3": q[2], "u1": 0.0}, P)
    assert "close to the solution" not in str(info.value)


def test_change_point_is_refused_not_linearized():
    # l_b + l_c = l_a + l_n: the fully stretched linkage, where df_h/dq loses rank
    model, P = _four_bar(l_c=0.8)
    with pytest.raises(SingularConstraintError, match=r"has rank 1 < 2 there \(a change point"):
        sb.linearize(model, {"q1": np.pi, "q2": np.pi, "q3": 0.0, "u1": 0.0}, P)
