"""Redundant constraint equations named at an assembled configuration (issue 22, item 2):
Bricard's five closure equations have rank 4 on the mechanism's motion."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm

import symbody as sb
from symbody.errors import FormulationError, InputError
from symbody.models.bricard import REDUNDANT, bricard_system


def _bricard_values():
    system, ex = bricard_system()
    zoo = sb.models.get("bricard")
    values = {**zoo.constants, **{q: zoo.initial_state[q] for q in ex["q"]}}
    return ex, values


def test_bricard_has_one_redundant_closure_equation_by_name():
    ex, values = _bricard_values()
    report = sb.redundant_constraints(ex["equations"], ex["q"], values)
    assert report.rank == 4
    assert len(report.redundant) == 1 and len(report.independent) == 4
    assert report.singular_values[-1] < 1e-12 * report.singular_values[0]
    # the zoo model leaves out axis_y: together with the four it keeps, still rank 4
    kept = {k: e for k, e in ex["equations"].items() if k not in REDUNDANT}
    assert sb.redundant_constraints(kept, ex["q"], values).redundant == ()
    # ... and it is dependent on them
    both = {**kept, REDUNDANT[0]: ex["equations"][REDUNDANT[0]]}
    assert sb.redundant_constraints(both, ex["q"], values).rank == 4


def test_redundant_set_stays_redundant_along_the_motion():
    ex, values = _bricard_values()
    zoo = sb.models.get("bricard")
    model = sb.compile(zoo.eom)
    tr = sb.simulate(model, (0.0, 2.0), zoo.initial_state, zoo.constants,
                     solver=sb.Solver(rtol=1e-10, atol=1e-10),
                     t_eval=np.linspace(0.0, 2.0, 5))
    for qk in tr.q[1:]:
        at = {**values, **dict(zip(ex["q"], qk))}
        report = sb.redundant_constraints(ex["equations"], ex["q"], at, residual_tol=1e-7)
        assert report.rank == 4


def test_a_configuration_off_the_constraints_is_refused_by_name():
    x, y = sm.symbols("x y")
    with pytest.raises(InputError, match="ring: 1"):
        sb.redundant_constraints({"ring": x**2 + y**2 - 1}, [x, y], {x: 1.0, y: 1.0})


def test_kanes_method_takes_redundant_equations_but_not_too_few():
    system, ex = bricard_system()
    q = ex["q"]
    km = sb.KanesMethod(system.frame, q[:1], ex["u"][:1], kd_eqs=system.kd_eqs, q_dependent=q[1:],
                        configuration_constraints=ex["equations"])
    assert km._f_h.rows == 5 and km._f_h_names[3] == "axis_y"
    with pytest.raises(FormulationError, match="4 dependent coordinates but only 3"):
        sb.KanesMethod(system.frame, q[:1], ex["u"][:1], kd_eqs=system.kd_eqs, q_dependent=q[1:],
                       configuration_constraints=list(ex["equations"].values())[:3])
