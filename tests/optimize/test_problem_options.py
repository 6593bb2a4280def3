"""OptimalControlProblem's option objects (Collocation, Cost, the examples' SwingUp) and the
former keywords (mayer=, quadrature=, hessian=, backend=, cache=), which still work for one
release with a DeprecationWarning.  Only the NLP is built here (no IPOPT)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
from sympy.physics.vector import dynamicsymbols

import symbody as sb
from symbody.compat.sympy import TIME as t
from symbody.errors import InputError
from symbody.optimize import Collocation, Cost, OptimalControlProblem, examples
from symbody.optimize.examples import SwingUp


def _double_integrator():
    x, v, F = dynamicsymbols("x v F")
    eom = sb.EquationsOfMotion([x], [v], kinematic=[x.diff(t) - v], dynamic=[v.diff(t) - F])
    return eom, x, v, F


def _same_nlp(a, b):
    w = np.linspace(-0.7, 0.9, a.nlp.n)
    lam = np.linspace(1.0, -1.0, a.nlp.m)
    assert (a.nlp.n, a.nlp.m) == (b.nlp.n, b.nlp.m)
    np.testing.assert_array_equal(a.nlp.constraints(w), b.nlp.constraints(w))
    np.testing.assert_array_equal(a.nlp.gradient(w), b.nlp.gradient(w))
    if a.hessian == "exact":          # no Hessian kernels with IPOPT's quasi-Newton
        np.testing.assert_array_equal(a.nlp.hessian(w, lam, 0.5), b.nlp.hessian(w, lam, 0.5))
    assert a.nlp.objective(w) == b.nlp.objective(w)


def test_former_keywords_warn_and_build_the_same_nlp():
    eom, x, v, F = _double_integrator()
    Tf = sm.Symbol("T_f")
    kw = dict(num_nodes=7, duration=Tf, bounds={F: (-1, 1), Tf: (0.5, 5.0)},
              instance_constraints=[x.func(0.0), v.func(0.0), x.func(Tf) - 1, v.func(Tf)])
    new = OptimalControlProblem(eom, objective=Cost(F ** 2, mayer=Tf),
                                transcription=Collocation("midpoint", quadrature="trapezoidal",
                                                          hessian="limited-memory"), **kw)
    with pytest.warns(DeprecationWarning) as caught:
        old = OptimalControlProblem(eom, objective=F ** 2, mayer=Tf, transcription="midpoint",
                                    quadrature="trapezoidal", hessian="limited-memory", **kw)
    messages = " | ".join(str(w.message) for w in caught)
    assert "OptimalControlProblem(mayer=...) is deprecated" in messages
    assert "use objective=Cost(mayer=...)" in messages
    assert "use transcription=Collocation(quadrature=...)" in messages
    assert "use transcription=Collocation(hessian=...)" in messages
    for p in (new, old):
        assert (p.transcription, p.quadrature, p.hessian) == ("midpoint", "trapezoidal",
                                                             "limited-memory")
        assert p.objective == F ** 2 and p.mayer == Tf
    _same_nlp(new, old)


def test_a_name_is_short_for_collocation_and_a_cost_for_its_lagrange_term():
    eom, x, v, F = _double_integrator()
    kw = dict(num_nodes=5, duration=1.0, instance_constraints=[x.func(0.0) - 0.5])
    a = OptimalControlProblem(eom, objective=F ** 2, transcription="hs", **kw)
    b = OptimalControlProblem(eom, objective=Cost(lagrange=F ** 2),
                              transcription=Collocation("hermite-simpson"), **kw)
    assert a.collocation == b.collocation == Collocation()
    _same_nlp(a, b)


def test_option_objects_are_checked_and_old_and_new_together_is_an_error():
    eom, x, v, F = _double_integrator()
    kw = dict(num_nodes=5, duration=1.0)
    with pytest.raises(InputError, match="transcription must be one of"):
        Collocation("rk4")
    with pytest.raises(InputError, match="hessian"):
        Collocation(hessian="bfgs")
    with pytest.raises(InputError, match="quadrature"):
        OptimalControlProblem(eom, transcription=Collocation(quadrature="gauss"), **kw)
    with pytest.raises(InputError, match="transcription= and the old keyword quadrature="):
        OptimalControlProblem(eom, transcription=Collocation(), quadrature="rectangle", **kw)
    with pytest.raises(InputError, match="objective= and the old keyword mayer="):
        OptimalControlProblem(eom, objective=Cost(F ** 2), mayer=F.func(1.0), **kw)
    with pytest.raises(TypeError, match="colour"):
        OptimalControlProblem(eom, colour="red", **kw)
    with pytest.raises(InputError, match=r"transcription=Collocation\('midpoint', \.\.\.\)"):
        OptimalControlProblem(eom, transcription={"method": "midpoint"}, **kw)
    with pytest.raises(InputError, match=r"objective=Cost\(lagrange=L, mayer=M\)"):
        OptimalControlProblem(eom, objective={"lagrange": F ** 2}, **kw)


def test_examples_take_a_collocation_and_the_swing_up_task():
    a, _ = examples.cart_pole_swing_up(num_nodes=7, transcription="hermite-simpson",
                                       hessian="limited-memory")
    b, _ = examples.cart_pole_swing_up(
        num_nodes=7, transcription=Collocation("hermite-simpson", hessian="limited-memory"))
    assert a.collocation == b.collocation == Collocation(
        "hermite-simpson", quadrature="rectangle", hessian="limited-memory")
    _same_nlp(a, b)
    task = SwingUp(distance=0.5, force_limit=10.0)
    c, guess_c = examples.n_link_cart_swing_up(1, num_nodes=7, task=task)
    with pytest.warns(DeprecationWarning) as caught:
        d, guess_d = examples.n_link_cart_swing_up(1, num_nodes=7, distance=0.5, force_limit=10.0)
    assert sorted(str(w.message).split("use ")[1] for w in caught) == [
        "task=SwingUp(distance=...)", "task=SwingUp(force_limit=...)"]
    _same_nlp(c, d)
    F = c.specifieds[0]
    assert c.bounds[F] == (-10.0, 10.0)
    np.testing.assert_array_equal(guess_c[c.coordinates[0]], guess_d[d.coordinates[0]])
    assert guess_c[c.coordinates[0]][-1] == 0.5


def test_initial_vector_of_a_mapping_guess():
    eom, x, v, F = _double_integrator()
    p = OptimalControlProblem(eom, num_nodes=5, duration=2.0, objective=F ** 2,
                              transcription="midpoint", bounds={F: (-1, 1)})
    w = p.initial_vector({x: np.linspace(0.0, 1.0, 5), F: 3.0})
    np.testing.assert_array_equal(w[p.nlp.iX[:, 0]], np.linspace(0.0, 1.0, 5))
    np.testing.assert_array_equal(w[p.nlp.iR[:, 0]], 1.0)      # clipped into the bounds
