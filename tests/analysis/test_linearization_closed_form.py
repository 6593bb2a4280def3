"""``linearize`` against central differences of closed forms (never of symbody's own rhs).

* the moving-pivot pendulum (tests/systems/moving_pivot.py): time-dependent f_h and b, an
  input force, y and uy dependent; A and B in [x, ux] by central differences of the closed
  form x'' = ux'(t, x, y(x), ux, uy(x, ux), F) with y, uy on the constraints;
* a cart pushed by a force that is an extra state a (a' = (F - a) / τ):
  A = [[0, 1, 0], [0, 0, 1/m], [0, 0, -1/τ]], B = [0, 0, 1/τ]^T exactly.

Written to kill the mutants of ``linearize`` (docs/testing.md): the default time, the
operating point's dependent values, the return_point dict and the extra-state path.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from systems.moving_pivot import P1, closed_form, hanging_y, pendulum_eom

t = me.dynamicsymbols._t
#: central differences with h = 1e-5 of smooth O(1) functions: truncation ~h^2 |f'''| ~ 1e-9,
#: round-off ~1e-16 / h ~ 1e-11; a missing term changes an entry by O(0.1) or more
FD_TOL = 1e-7


@pytest.fixture(scope="module")
def pendulum():
    return sb.compile(pendulum_eom())


def _f(tt, x, ux, F):
    """[x', ux'] on the constraints (y below the pivot, uy from the velocity constraint)."""
    y = hanging_y(tt, x)
    uy, uxd, _, _ = closed_form(tt, x, y, ux, F)
    return np.array([ux, uxd])


def _jacobians(tt, x, ux, F, h=1e-5):
    A = np.column_stack([(_f(tt, x + h, ux, F) - _f(tt, x - h, ux, F)) / (2 * h),
                         (_f(tt, x, ux + h, F) - _f(tt, x, ux - h, F)) / (2 * h)])
    B = ((_f(tt, x, ux, F + h) - _f(tt, x, ux, F - h)) / (2 * h))[:, None]
    return A, B


@pytest.mark.parametrize("tt", [None, 0.7])
def test_linearization_of_the_moving_pivot_pendulum(pendulum, tt):
    x, ux, F = 0.2, -0.4, 0.6
    when = 0.0 if tt is None else tt
    kw = {} if tt is None else {"t": tt}
    y_guess = hanging_y(when, x) + 0.05                 # off the constraint: projected first
    A, B, point = sb.linearize(pendulum, {"x": x, "y": y_guess, "u_x": ux}, P1, r=[F],
                               return_point=True, **kw)
    A_fd, B_fd = _jacobians(when, x, ux, F)
    assert A == pytest.approx(A_fd, rel=FD_TOL, abs=FD_TOL), f"A at t = {when} != central differences"
    assert B == pytest.approx(B_fd, rel=FD_TOL, abs=FD_TOL), f"B at t = {when} != central differences"
    y = hanging_y(when, x)
    uy, uxd, uyd, lam = closed_form(when, x, y, ux, F)
    assert point["q"] == pytest.approx([x, y], rel=1e-12), "operating point: y not on f_h(q, t) = 0"
    assert point["u"] == pytest.approx([ux, uy], rel=1e-12)
    assert point["qdot"] == pytest.approx([ux, uy], rel=1e-12)
    assert point["udot"] == pytest.approx([uxd, uyd], rel=1e-10)
    assert point["multipliers"] == pytest.approx([lam], rel=1e-10), "operating point λ wrong"
    assert point["r"] == pytest.approx([F])
    # the same from an array [q (N), u_ind (p)]
    A2, B2 = sb.linearize(pendulum, np.array([x, y_guess, ux]), P1, r=[F], **kw)
    assert A2 == pytest.approx(A, rel=1e-12) and B2 == pytest.approx(B, rel=1e-12)


def test_linearization_with_extra_states_is_exact_for_a_linear_system():
    x, ux, a = me.dynamicsymbols("x u_x a")
    F = me.dynamicsymbols("F")
    m, tau = sm.symbols("m tau")
    eom = sb.EquationsOfMotion([x], [ux], [x.diff(t) - ux], [m * ux.diff(t) - a],
                               specifieds=[F], extra_states={a: (F - a) / tau})
    model = sb.compile(eom)
    P = {"m": 2.0, "tau": 0.1}
    A, B = sb.linearize(model, {"x": 0.3, "u_x": 0.1, "a": 0.5}, P, r=[0.2])
    # central differences of a linear rhs: exact up to round-off / h
    assert A == pytest.approx(np.array([[0, 1, 0], [0, 0, 0.5], [0, 0, -10.0]]), abs=1e-6), \
        "A with an extra state (the force's lag) wrong"
    assert B == pytest.approx(np.array([[0], [0], [10.0]]), abs=1e-6), "B with an extra state wrong"
    A, B, point = sb.linearize(model, {"x": 0.3, "u_x": 0.1, "a": 0.5}, P, r=[0.2], t=1.0,
                               return_point=True)
    assert point["xdot"] == pytest.approx([0.1, 0.25, (0.2 - 0.5) / 0.1], rel=1e-12)
