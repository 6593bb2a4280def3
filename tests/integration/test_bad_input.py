"""A catalogue of bad inputs for every public entry point, and the errors they get.

Each case asserts the exception type (a symbody.errors class, never a bare
numpy/sympy/scipy error) and that the message names the culprit: the equation,
symbol, argument or value at fault.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.cli import main as cli_main
from symbody.errors import (
    CompilationError,
    FormulationError,
    InputError,
    NonlinearityError,
    SimulationError,
    SingularConstraintError,
)
from symbody.testing import RandomModelOptions, random_model

t = me.dynamicsymbols._t
q1, q2, q3, u1, u2, u3 = me.dynamicsymbols("q1 q2 q3 u1 u2 u3")
w = me.dynamicsymbols("w")
qd1, qd2, qd3 = q1.diff(t), q2.diff(t), q3.diff(t)
ud1, ud2, ud3 = u1.diff(t), u2.diff(t), u3.diff(t)
m, g, l = sm.symbols("m g l")


def names(*parts: str) -> str:
    """A regex matching a message that contains every part, in any order."""
    return "".join(f"(?=[\\s\\S]*{re.escape(p)})" for p in parts)


def pendulum():
    """N, a frame A rotating by q1 with speed u1, and a particle at l A.x."""
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q1, N.z])
    A.set_ang_vel(N, u1 * N.z)
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", l * A.x)
    P.v2pt_theory(O, N, A)
    return N, O, P, me.Particle("pa", P, m)


# =========================================================================== KanesMethod
def _kane(**kw):
    N, *_ = pendulum()
    args = dict(frame=N, q_ind=[q1], u_ind=[u1], kd_eqs=[qd1 - u1])
    args.update(kw)
    return sb.KanesMethod(args.pop("frame"), args.pop("q_ind"), args.pop("u_ind"), **args)


KANE_CASES = {
    "kd_eqs nonlinear in u": (dict(kd_eqs=[qd1 - u1**2]), NonlinearityError, ("kd_eqs[0]", "u1(t)")),
    "kd_eqs nonlinear in q'": (dict(kd_eqs=[qd1**2 - u1]), NonlinearityError, ("kd_eqs[0]", "q1(t)")),
    "kd_eqs count": (dict(q_ind=[q1, q2], u_ind=[u1, u2], kd_eqs=[qd1 - u1]), FormulationError,
                     ("2 coordinates", "1 kinematic")),
    "a coordinate's q' in no kd_eq": (dict(q_ind=[q1, q2], u_ind=[u1, u2], kd_eqs=[qd1 - u1, qd1 - u2]),
                                      FormulationError, ("Derivative(q2(t), t)",)),
    "velocity constraint nonlinear in u": (
        dict(q_ind=[q1, q2], kd_eqs=[qd1 - u1, qd2 - u2], u_dependent=[u2], velocity_constraints=[u1 * u2]),
        NonlinearityError, ("velocity_constraints[0]", "u2(t)")),
    "velocity constraints count": (
        dict(q_ind=[q1, q2], kd_eqs=[qd1 - u1, qd2 - u2], u_dependent=[u2], velocity_constraints=[u1 - u2, u1]),
        FormulationError, ("1 dependent speeds", "2 velocity constraints")),
    "dependent speed absent from the constraints": (
        dict(q_ind=[q1, q2], kd_eqs=[qd1 - u1, qd2 - u2], u_dependent=[u2],
             velocity_constraints=[u1 * sm.cos(q2)]),
        SingularConstraintError, ("dependent speed u2(t)",)),
    "dependent speed without velocity constraints": (
        dict(q_ind=[q1, q2], kd_eqs=[qd1 - u1, qd2 - u2], u_dependent=[u2]),
        FormulationError, ("1 dependent speeds", "0 velocity constraints")),
    "configuration constraints count": (
        dict(u_ind=[u1], kd_eqs=[qd1 - u1, qd2 - u2], q_dependent=[q2], configuration_constraints=[]),
        FormulationError, ("1 dependent coordinates", "0 configuration constraints")),
    "configuration constraint with a speed": (
        dict(u_ind=[u1, u2], kd_eqs=[qd1 - u1, qd2 - u2], q_dependent=[q2],
             configuration_constraints=[q2 - u1]),
        FormulationError, ("configuration_constraints[0]", "u1(t)")),
    "coordinate is a Symbol": (dict(q_ind=[m], kd_eqs=[u1]), FormulationError, ("q_ind", "m")),
    "coordinate listed twice": (dict(q_ind=[q1, q1], u_ind=[u1, u2], kd_eqs=[qd1 - u1, qd1 - u2]),
                                FormulationError, ("q1(t)", "more than once")),
    "coordinate also a speed": (dict(u_ind=[q1], kd_eqs=[qd1 - q1]), FormulationError, ("q1(t)", "speed")),
    "frame is not a ReferenceFrame": (dict(frame="N"), TypeError, ("ReferenceFrame", "'N'")),
}


@pytest.mark.parametrize("label", list(KANE_CASES))
def test_kanes_method_construction(label):
    kw, exc, parts = KANE_CASES[label]
    with pytest.raises(exc, match=names(*parts)):
        _kane(**kw)


def test_kanes_equations_bad_bodies_and_loads():
    N, O, P, pa = pendulum()
    Q = me.Point("Q")                                      # no velocity defined
    for bodies, loads, parts in [
        ([me.Particle("pq", Q, m)], [], ("point Q",)),
        ([pa], [(P, 5)], ("loads[0]", "5")),
        ([pa], [P], ("loads[0]", "P")),
        ([P], [], ("bodies[0]", "P")),
    ]:
        km = sb.KanesMethod(N, [q1], [u1], [qd1 - u1])
        with pytest.raises(FormulationError, match=names(*parts)):
            km.kanes_equations(bodies, loads)


def test_kane_results_before_forming_name_the_missing_step():
    km = _kane()
    for get in (lambda: km.mass_matrix, lambda: km.forcing_full, km.to_eom):
        with pytest.raises(ValueError, match="kanes_equations"):
            get()


def test_speed_that_no_body_depends_on_is_refused_by_name():
    """u2 is in no velocity: the mass matrix has a zero column (fixed in the formulation layer)."""
    N, O, P, pa = pendulum()
    km = sb.KanesMethod(N, [q1, q2], [u1, u2], [qd1 - u1, qd2 - u2])
    km.kanes_equations([pa], [(P, -m * g * N.y)])
    with pytest.raises(FormulationError, match=names("u2(t)", "mass matrix")):
        km.to_eom()


# =========================================================================== LagrangesMethod
L2 = m * (qd1**2 + qd2**2) / 2 - m * g * q2


def _lagrange_to_eom(**kw):
    lm = sb.LagrangesMethod(L2, [q1, q2], hol_coneqs=[q1 - q2])
    lm.form_lagranges_equations()
    return lm.to_eom(**kw)


def _lagrange_nonholonomic(**kw):
    lm = sb.LagrangesMethod(L2, [q1, q2], nonhol_coneqs=[qd1 - 2 * q1])
    lm.form_lagranges_equations()
    return lm.to_eom(**kw)


def _lagrange_with_force(**kw):
    N, O, P, pa = pendulum()
    return sb.LagrangesMethod(L2, [q1, q2], forcelist=kw.pop("forcelist"), **kw)


LAGRANGE_CASES = {
    "Lagrangian not an expression": (lambda: sb.LagrangesMethod("abc def", [q1]), FormulationError,
                                     ("Lagrangian", "abc def")),
    "Lagrangian with q''": (lambda: sb.LagrangesMethod(L2 + q1.diff(t, 2), [q1, q2]), FormulationError,
                            ("Derivative(q1(t), (t, 2))",)),
    "coordinate is a Symbol": (lambda: sb.LagrangesMethod(L2, [m]), FormulationError, ("qs", "m")),
    "no coordinates": (lambda: sb.LagrangesMethod(L2, []), FormulationError, ("qs",)),
    "holonomic constraint with q'": (lambda: sb.LagrangesMethod(L2, [q1, q2], hol_coneqs=[qd1]),
                                     FormulationError, ("hol_coneqs[0]", "Derivative(q1(t), t)")),
    "nonholonomic constraint nonlinear in q'": (
        lambda: sb.LagrangesMethod(L2, [q1, q2], nonhol_coneqs=[qd1 * qd2]), NonlinearityError,
        ("nonhol_coneqs[0]", "Derivative(q1(t), t)")),
    "forcelist without frame": (
        lambda: _lagrange_with_force(forcelist=[(me.Point("P"), me.ReferenceFrame("N").x)]),
        FormulationError, ("forcelist", "frame")),
    "forcelist entry not a pair": (
        lambda: _lagrange_with_force(forcelist=[me.Point("P")], frame=me.ReferenceFrame("N")),
        FormulationError, ("forcelist[0]", "P")),
    "to_eom: wrong number of dependent coordinates": (lambda: _lagrange_to_eom(q_dep=[]), FormulationError,
                                                      ("1 holonomic constraints", "0 dependent coordinates")),
    "to_eom: unknown dependent coordinate": (lambda: _lagrange_to_eom(q_dep=[w]), FormulationError, ("w(t)",)),
    "to_eom: unknown dependent speed": (lambda: _lagrange_to_eom(u_dep=[w]), FormulationError, ("w(t)",)),
    "to_eom: wrong number of dependent speeds": (lambda: _lagrange_to_eom(q_dep=[q2], u_dep=[]),
                                                 FormulationError, ("1 velocity constraints", "0 dependent")),
    "to_eom: dependent speed absent from the constraint": (
        lambda: _lagrange_nonholonomic(u_dep=[qd2]), SingularConstraintError, ("u_q2(t)",)),
    "results before forming": (lambda: sb.LagrangesMethod(L2, [q1, q2]).mass_matrix_full, ValueError,
                               ("equations of motion",)),
}


@pytest.mark.parametrize("label", list(LAGRANGE_CASES))
def test_lagranges_method(label):
    make, exc, parts = LAGRANGE_CASES[label]
    with pytest.raises(exc, match=names(*parts)):
        make()


# =========================================================================== EquationsOfMotion
E = sb.EquationsOfMotion
EOM_CASES = {
    "kinematic count": (lambda: E([q1, q2], [u1, u2], [qd1 - u1], [ud1, ud2]), FormulationError,
                        ("2 coordinates", "1 kinematic")),
    "kinematic nonlinear in u": (lambda: E([q1], [u1], [qd1 - u1**2], [ud1]), NonlinearityError,
                                 ("kinematic[0]", "u1(t)")),
    "kinematic with u'": (lambda: E([q1], [u1], [qd1 - u1 + ud1], [ud1]), FormulationError,
                          ("kinematic[0]", "Derivative(u1(t), t)")),
    "dynamic count": (lambda: E([q1, q2], [u1, u2], [qd1 - u1, qd2 - u2], [ud1, ud2, ud1]), FormulationError,
                      ("3 dynamic equations",)),
    "dynamic nonlinear in u'": (lambda: E([q1], [u1], [qd1 - u1], [ud1**2 + 1]), NonlinearityError,
                                ("dynamic[0]", "Derivative(u1(t), t)")),
    "dynamic with q''": (lambda: E([q1], [u1], [qd1 - u1], [m * ud1 + q1.diff(t, 2)]), FormulationError,
                         ("dynamic[0]", "Derivative(q1(t), (t, 2))")),
    "dynamic (M, g) of the wrong shape": (
        lambda: E([q1], [u1], [qd1 - u1], (sm.Matrix([[1, 2]]), sm.Matrix([1]))), FormulationError,
        ("2 columns",)),
    "dynamic not an expression": (lambda: E([q1], [u1], [qd1 - u1], ["abc def"]), FormulationError,
                                  ("dynamic[0]", "abc def")),
    "velocity constraint nonlinear in u": (
        lambda: E([q1, q2], [u1], [qd1 - u1, qd2 - u2], [ud1, ud2],
                  constraints=sb.ConstraintEquations(u_dep=[u2], velocity=[u1 * u2])),
        NonlinearityError, ("velocity_constraints[0]", "u2(t)")),
    "dependent speed absent from the constraints": (
        lambda: E([q1, q2], [u1], [qd1 - u1, qd2 - u2], [ud1, ud2],
                  constraints=sb.ConstraintEquations(u_dep=[u2], velocity=[u1])),
        FormulationError, ("dependent speed u2(t)",)),
    "holonomic count": (lambda: E([q1], [u1, u2], [qd1 - u1, qd2 - u2], [ud1, ud2],
                                  constraints=sb.ConstraintEquations(q_dep=[q2])),
                        FormulationError, ("1 dependent coordinates", "0 holonomic")),
    "holonomic with a speed": (
        lambda: E([q1], [u1], [qd1 - u1, qd2 - u2], [ud1, ud2],
                  constraints=sb.ConstraintEquations(q_dep=[q2], holonomic=[q2 - u1], u_dep=[u2])),
        FormulationError, ("holonomic[0]", "u1(t)")),
    "unknown constant": (lambda: E([q1], [u1], [qd1 - u1], [m * ud1 + g], constants=[m]), FormulationError,
                         ("symbol g",)),
    "unknown function of time": (lambda: E([q1], [u1], [qd1 - u1], [m * ud1 + w], specifieds=[]),
                                 FormulationError, ("w(t)",)),
    "derivative of a specified not listed": (
        lambda: E([q1], [u1], [qd1 - u1], [m * ud1 + w.diff(t)], specifieds=[w]), FormulationError,
        ("Derivative(w(t), t)",)),
    "coordinate also a speed": (lambda: E([q1], [q1], [qd1 - q1], [ud1]), FormulationError, ("q1(t)",)),
    "coordinate is a Symbol": (lambda: E([m], [u1], [qd1 - u1], [ud1]), FormulationError, ("q_ind", "m")),
    "speed with no equation for its acceleration": (
        lambda: E([q1, q2], [u1, u2], [qd1 - u1, qd2 - u2], [m * ud1 + g, g]), FormulationError,
        ("u2(t)", "mass matrix")),
}


@pytest.mark.parametrize("label", list(EOM_CASES))
def test_equations_of_motion(label):
    make, exc, parts = EOM_CASES[label]
    with pytest.raises(exc, match=names(*parts)):
        make()


def test_derivatives_of_specified_motions_become_specified_inputs():
    """Fixed in the formulation layer: r', r'' of a prescribed r(t) are inputs, not lost."""
    eom = E([q1], [u1], [qd1 - u1], [m * ud1 + w.diff(t, 2) + w])
    assert eom.specifieds == (w, w.diff(t, 2))
    model = sb.compile(eom)
    xd = model.rhs(0.0, [0.0, 0.0], [2.0], [1.0, 3.0])
    assert xd[1] == pytest.approx(-(3.0 + 1.0) / 2.0)


# =========================================================================== compile
@pytest.fixture(scope="module")
def four_bar():
    model = sb.models.get("four-bar")
    return model, sb.compile(model.eom)


@pytest.fixture(scope="module")
def driven():
    """A random tree with one specified input r1(t)."""
    rm = random_model(0, n_bodies=2, kind="tree", options=RandomModelOptions(inputs=1))
    eom = rm.to_eom()
    numeric = sb.compile(eom)
    return rm, eom, numeric, {k: rm.constants[k] for k in numeric.constants}


def test_compile_bad_inputs(four_bar, driven):
    compile_ = sb.compile
    zoo, _ = four_bar
    eom = zoo.eom
    consts = list(eom.constants)
    cases = [
        (lambda: compile_("eom"), CompilationError, ("EquationsOfMotion", "str")),
        (lambda: compile_(zoo.method), CompilationError, ("EquationsOfMotion", "KanesMethod")),
        (lambda: compile_(eom, constants=consts[:-1]), CompilationError, (str(consts[-1]), "constants")),
        (lambda: compile_(eom, constants=consts + consts[:1]), CompilationError,
         (str(consts[0]), "more than once")),
        (lambda: compile_(eom, backend="fortran"), CompilationError, ("fortran", "llvm", "numpy")),
        (lambda: compile_(driven[1], specifieds=[]), CompilationError, ("r1(t)", "specifieds")),
    ]
    for make, exc, parts in cases:
        with pytest.raises(exc, match=names(*parts)):
            make()


# =========================================================================== NumericModel methods
def test_numeric_model_methods_check_their_arrays(four_bar):
    zoo, m = four_bar
    p = zoo.constants
    q = [zoo.initial_state[s] for s in m.coordinates]
    bad_p = _with(p, "l_n", 10.0)
    cases = [
        (lambda: m.rhs(0.0, [1.0, 2.0], p), ("4 values", "q1(t)", "u1(t)")),
        (lambda: m.rhs(0.0, q + [0.0], {}), ("missing", "g")),
        (lambda: m.rhs_many(0.0, np.zeros((3, 2)), p), ("(k, 4)", "(3, 2)")),
        (lambda: m.full_speeds(q, [1.0, 2.0], p), ("u_ind", "1")),
        (lambda: m.velocity_residual(q, [1.0, 2.0], p), ("3 speeds",)),
        (lambda: m.qdot([0.1], [0.0], p), ("q1(t)", "q3(t)")),
        (lambda: m.holonomic_residual([0.1], p), ("q1(t)", "q3(t)")),
        (lambda: m.accelerations(q, [1.0, 2.0], p), ("u1(t)", "u3(t)")),
        (lambda: m.consistent_state(zoo.initial_state, bad_p), ("q2(t)", "q3(t)", "guess")),
    ]
    for make, parts in cases:
        with pytest.raises(InputError, match=names(*parts)):
            make()


# =========================================================================== simulate
def _sim(four_bar, x0=None, p=None, **kw):
    zoo, numeric = four_bar
    kw.setdefault("t_eval", [0.0, 0.05])
    return sb.simulate(numeric, kw.pop("t_span", (0.0, 0.05)), zoo.initial_state if x0 is None else x0,
                            zoo.constants if p is None else p, **kw)


def _without(d: dict, name: str) -> dict:
    return {k: v for k, v in d.items() if str(k) != name}


def _with(d: dict, name: str, value) -> dict:
    return {k: (value if str(k) == name else v) for k, v in d.items()}


SIMULATE_CASES = {
    "missing parameter": (lambda fb: _sim(fb, p=_without(fb[0].constants, "l_b")), ("l_b", "missing")),
    "NaN parameter": (lambda fb: _sim(fb, p=_with(fb[0].constants, "m", float("nan"))), ("m", "nan")),
    "infinite parameter": (lambda fb: _sim(fb, p=_with(fb[0].constants, "g", float("inf"))), ("g", "inf")),
    "non-numeric parameter": (lambda fb: _sim(fb, p=_with(fb[0].constants, "m", "abc")), ("m", "abc")),
    "unknown parameter": (lambda fb: _sim(fb, p=fb[0].constants | {sm.Symbol("zzz"): 1.0}), ("zzz",)),
    "parameter array of the wrong length": (lambda fb: _sim(fb, p=[1.0, 2.0]), ("2 constant", "6")),
    "parameters missing": (lambda fb: sb.simulate(fb[1], (0.0, 0.05), fb[0].initial_state, None),
                           ("constants", "l_a")),
    "missing initial value": (lambda fb: _sim(fb, x0=_without(fb[0].initial_state, "q1(t)")), ("q1(t)",)),
    "NaN initial value": (lambda fb: _sim(fb, x0=_with(fb[0].initial_state, "u1(t)", float("nan"))),
                          ("u1(t)", "nan")),
    "unknown initial value": (lambda fb: _sim(fb, x0=fb[0].initial_state | {me.dynamicsymbols("zz"): 1.0}),
                              ("zz",)),
    "state array of the wrong length": (lambda fb: _sim(fb, x0=[0.1, 0.2]), ("2 state", "4")),
    "unknown constraint mode": (lambda fb: _sim(fb, constraints="strict"), ("strict", "project", "dae")),
    "constraint mode None": (lambda fb: _sim(fb, constraints=None), ("None", "auto")),
    "unknown method": (lambda fb: _sim(fb, solver=sb.Solver(method="Euler")), ("Euler", "RK45")),
    "method that cannot do dae": (lambda fb: _sim(fb, solver=sb.Solver(method="BDF"),
                                                  constraints="dae"), ("BDF", "IDA")),
    "LSODA with projection": (lambda fb: _sim(fb, solver=sb.Solver(method="LSODA"),
                                              constraints="project"), ("LSODA",)),
    "empty time span": (lambda fb: _sim(fb, t_span=(0.0, 0.0), t_eval=None), ("t_span",)),
    "NaN in the time span": (lambda fb: _sim(fb, t_span=(0.0, float("nan")), t_eval=None), ("t_span", "nan")),
    "time span of three values": (lambda fb: _sim(fb, t_span=(0, 1, 2), t_eval=None), ("t_span",)),
    "negative rtol": (lambda fb: _sim(fb, solver=sb.Solver(rtol=-1.0)), ("rtol",)),
    "NaN atol": (lambda fb: _sim(fb, solver=sb.Solver(atol=float("nan"))), ("atol",)),
    "t_eval outside t_span": (lambda fb: _sim(fb, t_eval=[0.0, 5.0]), ("t_eval",)),
    "negative Baumgarte factor": (lambda fb: _sim(fb,
                                                  constraints=sb.Baumgarte(alpha=-1.0)), ("alpha",)),
    "not a NumericModel": (lambda fb: sb.simulate(fb[0].eom, (0, 1), fb[0].initial_state, fb[0].constants),
                           ("NumericModel", "EquationsOfMotion")),
    "specifieds for a model without inputs": (lambda fb: _sim(fb, specifieds=[1.0]), ("specified",)),
    "loop that cannot close (inconsistent parameters)": (
        lambda fb: _sim(fb, p=_with(fb[0].constants, "l_n", 10.0)), ("q2(t)", "q3(t)", "holonomic")),
}


@pytest.mark.parametrize("label", list(SIMULATE_CASES))
def test_simulate_bad_inputs(four_bar, label):
    make, parts = SIMULATE_CASES[label]
    with pytest.raises(InputError, match=names(*parts)):
        make(four_bar)


def test_inconsistent_initial_coordinates_are_assembled(four_bar):
    """A guess for q_dep off the constraints: Newton puts it back, q_ind and u_ind untouched."""
    zoo, numeric = four_bar
    x0 = dict(zoo.initial_state)
    q_dep = numeric.dependent_coordinates
    x0[q_dep[0]] += 0.3
    x0[q_dep[1]] -= 0.2
    tr = _sim(four_bar, x0=x0)
    assert tr.success
    np.testing.assert_allclose(tr.q[0], [zoo.initial_state[s] for s in numeric.coordinates], atol=1e-9)
    assert np.abs(tr.holonomic_residuals[0]).max() < 1e-12


SPECIFIED_CASES = {
    "specifieds missing": (lambda d, S: S(), ("r1(t)",)),
    "specifieds of the wrong length": (lambda d, S: S(specifieds=[1.0, 2.0]), ("2 specified", "r1(t)")),
    "NaN specified": (lambda d, S: S(specifieds=[float("nan")]), ("r1(t)", "nan")),
    "callable returning the wrong length": (lambda d, S: S(specifieds=lambda t_, x: [1.0, 2.0]), ("2 specified",)),
    "callable raising at t0": (lambda d, S: S(specifieds=lambda t_, x: 1 / 0), ("ZeroDivisionError",)),
    "unknown specified name": (lambda d, S: S(specifieds={"zz": 1.0}), ("zz", "r1(t)")),
}


@pytest.mark.parametrize("label", list(SPECIFIED_CASES))
def test_simulate_bad_specifieds(driven, label):
    rm, eom, numeric, p = driven
    make, parts = SPECIFIED_CASES[label]

    def S(**kw):
        return sb.simulate(numeric, (0.0, 0.05), rm.x0(), p, **kw)
    with pytest.raises(InputError, match=names(*parts)):
        make(driven, S)


def test_specified_callable_failing_later_stops_cleanly(driven):
    rm, eom, numeric, p = driven

    def later(t_, x):
        if t_ > 0.02:
            raise RuntimeError("sensor lost")
        return [0.0]
    tr = sb.simulate(numeric, (0.0, 0.05), rm.x0(), p, specifieds=later)
    assert not tr.success and "sensor lost" in tr.message and len(tr.t) >= 1
    with pytest.raises(SimulationError, match="sensor lost") as info:
        sb.simulate(numeric, (0.0, 0.05), rm.x0(), p, specifieds=later,
                    solver=sb.Solver(raise_on_failure=True))
    assert info.value.trajectory is not None


def test_simulate_atol_of_the_wrong_length(four_bar):
    with pytest.raises(InputError, match=names("atol", "4")):
        _sim(four_bar, solver=sb.Solver(atol=[1e-9, 1e-9]))


@pytest.mark.parametrize("option", ["max_step", "first_step"])
def test_simulate_non_positive_step_options(four_bar, option):
    with pytest.raises(InputError, match=option):
        _sim(four_bar, solver=sb.Solver(**{option: -1.0}))


def test_simulate_t_eval_with_nan(four_bar):
    with pytest.raises(InputError, match="t_eval"):
        _sim(four_bar, t_eval=[0.0, float("nan")])


def test_simulate_specifieds_dict_missing_a_value(driven):
    rm, eom, numeric, p = driven
    with pytest.raises(InputError, match=names("r1(t)", "missing")):
        sb.simulate(numeric, (0.0, 0.05), rm.x0(), p, specifieds={})


# =========================================================================== linearize
LINEARIZE_CASES = {
    "missing state": (lambda fb: _lin(fb, x0=_without(fb[0].initial_state, "q1(t)")), ("q1(t)",)),
    "NaN state": (lambda fb: _lin(fb, x0=_with(fb[0].initial_state, "u1(t)", float("nan"))), ("u1(t)",)),
    "unknown state": (lambda fb: _lin(fb, x0=fb[0].initial_state | {me.dynamicsymbols("zz"): 1.0}), ("zz",)),
    "state array of the wrong length": (lambda fb: _lin(fb, x0=[0.1]), ("1 values", "4")),
    "missing parameter": (lambda fb: _lin(fb, p=_without(fb[0].constants, "l_b")), ("l_b",)),
    "NaN parameter": (lambda fb: _lin(fb, p=_with(fb[0].constants, "m", float("nan"))), ("m", "nan")),
    "loop that cannot close": (lambda fb: _lin(fb, p=_with(fb[0].constants, "l_n", 10.0)),
                               ("q2(t)", "q3(t)", "holonomic")),
    "inputs for a model without inputs": (lambda fb: _lin(fb, r=[1.0, 2.0]), ("r", "0 specified")),
    "unknown input name": (lambda fb: _lin(fb, r={"zz": 1.0}), ("zz",)),
    "not a model": (lambda fb: sb.linearize("abc", fb[0].initial_state, fb[0].constants), ("str",)),
}


def _lin(fb, x0=None, p=None, **kw):
    zoo, numeric = fb
    return sb.linearize(numeric, zoo.initial_state if x0 is None else x0,
                             zoo.constants if p is None else p, **kw)


@pytest.mark.parametrize("label", list(LINEARIZE_CASES))
def test_linearize_bad_inputs(four_bar, label):
    make, parts = LINEARIZE_CASES[label]
    with pytest.raises(InputError, match=names(*parts)):
        make(four_bar)


def test_linearize_bad_inputs_with_specifieds(driven):
    rm, eom, numeric, p = driven
    lin = sb.linearize
    with pytest.raises(InputError, match=names("2 values", "1 specified")):
        lin(numeric, rm.x0(), p, r=[1.0, 2.0])
    with pytest.raises(InputError, match="specified inputs"):
        lin(numeric, rm.x0(), p, r=[float("nan")])


def test_linearize_nan_time(four_bar):
    with pytest.raises(InputError, match=r"\bt\b"):
        _lin(four_bar, t=float("nan"))


# =========================================================================== command line
CLI_CASES = {
    "unknown model": (["simulate", "no-such-model"], ("no-such-model", "four-bar")),
    "unknown model (linearize)": (["linearize", "no-such-model"], ("no-such-model",)),
    "unknown parameter": (["simulate", "four-bar", "--set", "zzz=1"], ("zzz", "l_a")),
    "unknown parameter (linearize)": (["linearize", "four-bar", "--set", "zzz=2"], ("zzz",)),
    "non-numeric value": (["simulate", "four-bar", "--set", "m=abc"], ("m=abc",)),
    "non-finite value": (["simulate", "four-bar", "--set", "m=nan"], ("m=nan", "finite")),
    "--set without a value": (["simulate", "four-bar", "--set", "m"], ("'m'",)),
    "non-integer model option": (["simulate", "n-link-pendulum-on-cart", "--set", "n=abc"], ("n=abc",)),
    "model option out of range": (["simulate", "n-link-pendulum-on-cart", "--set", "n=0"], ("n",)),
    "unknown constraint mode": (["simulate", "four-bar", "--constraints", "bogus"], ("bogus", "project")),
    "negative final time": (["simulate", "four-bar", "--tf", "-1", "--no-animation", "-q"], ("--tf",)),
    "NaN final time": (["simulate", "four-bar", "--tf", "nan", "--no-animation", "-q"], ("--tf",)),
    "negative rtol": (["simulate", "four-bar", "--rtol", "-1"], ("--rtol",)),
    "loop that cannot close": (["simulate", "four-bar", "--set", "l_n=10", "--no-animation", "-q"],
                               ("holonomic",)),
    "malformed --speeds": (["linearize", "four-bar", "--speeds", "1:2"], ("--speeds", "1:2")),
    "unknown command": (["bogus-command"], ("bogus-command",)),
    "no command": ([], ("COMMAND",)),
}


@pytest.mark.parametrize("label", list(CLI_CASES))
def test_cli_exit_code_2_names_the_culprit(label, capsys, tmp_path):
    argv, parts = CLI_CASES[label]
    if argv and argv[0] == "simulate":
        argv = argv + ["--out", str(tmp_path)]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    for part in parts:
        assert part in err, (part, err)
    assert "Traceback" not in err
    assert not any(tmp_path.iterdir())                # nothing written
