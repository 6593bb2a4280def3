"""Specified inputs of every kind: numbers, callables, SymPy expressions of t (compiled),
tabulated data (interpolated), checked against the closed-form forced response."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.analysis.inputs import specified_inputs
from symbody.errors import InputError

t = me.dynamicsymbols._t


@pytest.fixture(scope="module")
def oscillator():
    """m q'' + k q = F(t) with m = 1, k = 4."""
    q, u, F = me.dynamicsymbols("q u F")
    m, k = sm.symbols("m k")
    eom = sb.EquationsOfMotion([q], [u], kinematic=[q.diff(t) - u],
                               dynamic=(sm.Matrix([[m]]), sm.Matrix([k * q - F])))
    return sb.compile(eom), F, k


P = {"m": 1.0, "k": 4.0}
T = np.linspace(0.0, 3.0, 31)


def _exact(tt):
    # q'' + 4 q = cos t, q(0) = q'(0) = 0  ->  q = (cos t - cos 2t) / 3
    return (np.cos(tt) - np.cos(2 * tt)) / 3


def _q(model, specifieds, **kw):
    sol = sb.simulate(model, (0.0, 3.0), [0.0, 0.0], P, specifieds=specifieds, t_eval=T,
                      solver=sb.Solver(rtol=1e-11, atol=1e-12), **kw)
    assert sol.success, sol.message
    return sol.q[:, 0]


def test_expression_callable_and_dict_agree_with_the_closed_form(oscillator):
    model, F, k = oscillator
    # integration at rtol 1e-11: the error stays far below 1e-8
    np.testing.assert_allclose(_q(model, [sm.cos(t)]), _exact(T), atol=1e-8)
    np.testing.assert_allclose(_q(model, sm.cos(t)), _exact(T), atol=1e-8)
    np.testing.assert_allclose(_q(model, {"F": sm.cos(t)}), _exact(T), atol=1e-8)
    np.testing.assert_allclose(_q(model, {F: np.cos}), _exact(T), atol=1e-8)
    np.testing.assert_allclose(_q(model, lambda tt, x: [np.cos(tt)]), _exact(T), atol=1e-8)


def test_expression_in_states_and_constants_is_compiled(oscillator):
    model, F, k = oscillator
    q = model.states[0]
    # F = cos t + k q turns the oscillator into q'' = cos t: q = 1 - cos t
    sol = sb.simulate(model, (0.0, 3.0), [0.0, 0.0], P, specifieds={F: sm.cos(t) + k * q}, t_eval=T,
                      solver=sb.Solver(rtol=1e-11, atol=1e-12))
    np.testing.assert_allclose(sol.q[:, 0], 1 - np.cos(T), atol=1e-8)
    r = specified_inputs(model, {F: sm.cos(t) + k * q}, model.constants_array(P))
    assert r(0.5, np.array([2.0, 0.0]))[0] == pytest.approx(np.cos(0.5) + 8.0, abs=1e-15)


def test_tabulated_data_is_interpolated(oscillator):
    model, F, k = oscillator
    tt = np.linspace(0.0, 3.0, 301)
    # cubic spline on h = 0.01: interpolation error ~ h^4 |f''''| / 384 ~ 3e-11, far below 1e-8
    np.testing.assert_allclose(_q(model, sb.Tabulated(tt, np.cos(tt), kind="cubic")), _exact(T), atol=1e-8)
    # linear interpolation: error h^2/8 |f''| ~ 1.3e-5 in F, so ~1e-5 in q over 3 s
    np.testing.assert_allclose(_q(model, {"F": (tt, np.cos(tt))}), _exact(T), atol=3e-5)
    with pytest.raises(InputError, match=r"tabulated F\(t\) covers t in \[0, 3\] but the simulation spans \[0, 5\]"):
        sb.simulate(model, (0.0, 5.0), [0.0, 0.0], P, specifieds=sb.Tabulated(tt, np.cos(tt)))
    with pytest.raises(InputError, match="strictly increasing"):
        sb.simulate(model, (0.0, 1.0), [0.0, 0.0], P, specifieds=sb.Tabulated([0, 2, 1], [0, 1, 2]))


def test_bad_inputs_name_what_is_wrong(oscillator):
    model, F, k = oscillator
    a = sm.Symbol("a")
    with pytest.raises(InputError, match=r"specified input F\(t\) .*depends on a"):
        sb.simulate(model, (0.0, 1.0), [0.0, 0.0], P, specifieds=[a * sm.sin(t)])
    with pytest.raises(InputError, match="unknown specified input 'G'"):
        sb.simulate(model, (0.0, 1.0), [0.0, 0.0], P, specifieds={"G": 1.0})
    with pytest.raises(InputError, match="is not a number, a SymPy expression"):
        sb.simulate(model, (0.0, 1.0), [0.0, 0.0], P, specifieds={"F": "one"})
    with pytest.raises(InputError, match="raised ZeroDivisionError"):
        sb.simulate(model, (0.0, 1.0), [0.0, 0.0], P, specifieds={"F": lambda tt: 1 / 0})
