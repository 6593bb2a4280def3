"""Velocity constraints must be linear in the speeds: every kind of nonlinearity is refused.

Squares, products (cross terms), quotients and functions of the speeds (smooth and not) are
each caught by every entry point (EquationsOfMotion, KanesMethod, LagrangesMethod's
nonholonomic constraints) with a NonlinearityError naming the equation and the speed.  A check
reduced to cross terms only (the planted bug of issue 16) lets the squares and functions of
one speed through and fails here.
"""

from __future__ import annotations

import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.errors import NonlinearityError

t = me.dynamicsymbols._t
q1, q2, u1, u2 = me.dynamicsymbols("q1 q2 u1 u2")
m = sm.Symbol("m")

#: each is nonlinear in the speed named second; none is a cross term except "product"
CASES = {
    "square": (u2**2 - u1, u2),
    "cube": (u1**3 - u2, u1),
    "product": (u1 * u2 - u1, u1),
    "quotient": (u1 / u2 - 1, u1),
    "sin": (sm.sin(u1) - u2, u1),
    "exp": (sm.exp(u2) - 1 - u1, u2),
    "sqrt": (sm.sqrt(1 + u1**2) - u2, u1),
    "abs": (sm.Abs(u1) - u2, u1),
    "sign": (q1 * sm.sign(u1) - u2, u1),
    "max": (sm.Max(u1, 0) - u2, u1),
    "piecewise": (sm.Piecewise((u1, u1 > 0), (0, True)) - u2, u1),
}


def _eom(vc):
    return sb.EquationsOfMotion([q1, q2], [u1], [q1.diff(t) - u1, q2.diff(t) - u2],
                                [m * u1.diff(t), m * u2.diff(t)],
                                constraints=sb.ConstraintEquations(u_dep=[u2], velocity=[vc]))


def _kane(vc):
    return sb.KanesMethod(me.ReferenceFrame("N"), [q1, q2], [u1], kd_eqs=[q1.diff(t) - u1, q2.diff(t) - u2],
                          u_dependent=[u2], velocity_constraints=[vc])


def _lagrange(vc):
    qd1, qd2 = q1.diff(t), q2.diff(t)
    lm = sb.LagrangesMethod(m * (qd1**2 + qd2**2) / 2, [q1, q2],
                            nonhol_coneqs=[vc.xreplace({u1: qd1, u2: qd2})])
    lm.form_lagranges_equations()
    return lm


@pytest.mark.parametrize("entry", ["EquationsOfMotion", "KanesMethod", "LagrangesMethod"])
@pytest.mark.parametrize("kind", sorted(CASES))
def test_nonlinear_velocity_constraint_is_refused_naming_equation_and_speed(kind, entry):
    vc, speed = CASES[kind]
    build = {"EquationsOfMotion": _eom, "KanesMethod": _kane, "LagrangesMethod": _lagrange}[entry]
    with pytest.raises(NonlinearityError) as err:
        build(vc)
    msg = str(err.value)
    which = "nonhol_coneqs[0]" if entry == "LagrangesMethod" else "velocity_constraints[0]"
    assert which in msg, f"{kind}: the message must name the equation: {msg}"
    name = str(speed.func) if entry != "LagrangesMethod" else f"Derivative({speed.func.__name__.replace('u', 'q')}(t), t)"
    assert name in msg, f"{kind}: the message must name the speed {name}: {msg}"
    assert "linear" in msg


@pytest.mark.parametrize("vc", [q1 * u1 - u2, sm.sin(q1) * u1 + sm.cos(q2) * u2 + q1 * q2])
def test_linear_velocity_constraints_with_configuration_dependent_coefficients_are_accepted(vc):
    eom = _eom(vc)
    B = sm.Matrix(eom.velocity_matrix)
    assert B.shape == (1, 2) and not B.has(u1, u2)
    _kane(vc)
    _lagrange(vc)
