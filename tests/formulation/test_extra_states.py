"""Extra first-order states in EquationsOfMotion: declaration, checks, errors naming the culprit."""

from __future__ import annotations

import pytest
import sympy as sm
import sympy.physics.biomechanics as bm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.errors import FormulationError

t = me.dynamicsymbols._t
q, u, a, e, F = me.dynamicsymbols("q u a e F")
m, k, tau = sm.symbols("m k tau")


def eom_with(force, **kw):
    return sb.EquationsOfMotion([q], [u], [q.diff(t) - u], [m * u.diff(t) + force], **kw)


def test_extra_states_follow_q_and_u():
    eom = eom_with(k * q - a, extra_states={a: (e - a) / tau}, specifieds=[e])
    assert eom.states == (q, u, a)
    assert eom.extra_states == (a,) and eom.specifieds == (e,)
    assert eom.extra_derivatives[0] == (e - a) / tau
    assert set(eom.constants) == {m, k, tau}


def test_q_dot_in_an_extra_derivative_becomes_u():
    eom = eom_with(k * q - a, extra_states={a: q.diff(t) - a})
    assert eom.extra_derivatives[0] == u - a


def test_biomechanics_activation_declares_its_state_and_input():
    act = bm.FirstOrderActivationDeGroote2016.with_defaults("m1")
    eom = eom_with(k * q - act.a).with_extra_states(act)
    assert eom.extra_states == (act.a,) and eom.specifieds == (act.e,)
    assert sm.simplify(eom.extra_derivatives[0] - act.rhs()[0]) == 0


@pytest.mark.parametrize("make, culprit", [
    # an undeclared function of time once anything is declared
    (lambda: eom_with(k * q - a + F, extra_states={a: -a}), r"F\(t\)"),
    (lambda: eom_with(k * q - a, specifieds=[]), r"a\(t\)"),
    # the extra state's derivative in the equations
    (lambda: eom_with(k * q - a.diff(t), extra_states={a: -a}), r"Derivative\(a\(t\), t\)"),
    # an acceleration in an extra state's derivative
    (lambda: eom_with(k * q, extra_states={a: u.diff(t)}), r"Derivative\(u\(t\), t\)"),
    # not a function of time / declared twice / both extra state and specified
    (lambda: eom_with(k * q, extra_states={tau: 1}), "tau"),
    (lambda: eom_with(k * q, extra_states=[{a: -a}, {a: a}]), r"a\(t\).*twice"),
    (lambda: eom_with(k * q - a, extra_states={a: -a}, specifieds=[a]), r"a\(t\).*both"),
    # a coordinate declared as an extra state
    (lambda: eom_with(k * q, extra_states={q: -q}), r"q\(t\)"),
])
def test_bad_extra_states_name_the_culprit(make, culprit):
    with pytest.raises(FormulationError, match=culprit):
        make()


def test_extra_state_in_a_constraint_is_refused():
    q2, u2 = me.dynamicsymbols("q2 u2")
    with pytest.raises(FormulationError, match=r"holonomic.*a\(t\)"):
        sb.EquationsOfMotion([q], [u], [q.diff(t) - u, q2.diff(t) - u2],
                             [m * u.diff(t) + k * q, m * u2.diff(t)],
                             constraints=sb.ConstraintEquations(q_dep=[q2], u_dep=[u2],
                                                                holonomic=[q2 - q - a]),
                             extra_states={a: -a})


def test_without_declarations_functions_of_time_stay_specified_inputs():
    """SymPy's convention, kept when nothing is declared: other functions of t are inputs."""
    eom = eom_with(k * q - F)
    assert eom.specifieds == (F,) and eom.states == (q, u)
