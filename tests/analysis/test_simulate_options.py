"""simulate()'s options as objects (issue 23 item 4): Solver, the constraint-mode objects,
sweep's Execution; the old flat keywords kept for one release with a DeprecationWarning and
the same numbers; bad values named in the error."""

from __future__ import annotations

import dataclasses
import inspect
import math
import warnings

import numpy as np
import pytest

import symbody as sb
from symbody import DAE, Baumgarte, Execution, Plain, Projection, Solver
from symbody.errors import InputError


@pytest.fixture(scope="module")
def fb():
    zoo = sb.models.get("four-bar")
    return sb.compile(zoo.eom), zoo.initial_state, zoo.constants


def _same(a, b):
    return (np.array_equal(a.t, b.t) and np.array_equal(a.x, b.x) and np.array_equal(a.u, b.u)
            and a.nfev == b.nfev and a.status == b.status and a.method == b.method
            and a.constraints == b.constraints)


def test_the_signature_has_ten_parameters_and_one_way_to_say_each_thing():
    params = inspect.signature(sb.simulate).parameters
    assert list(params) == ["model", "t_span", "x0", "p", "constraints", "solver", "t_eval",
                            "specifieds", "events", "outputs"]
    fields = {f.name for f in dataclasses.fields(Solver)}
    assert not fields & set(params)          # nothing said twice
    assert {"method", "rtol", "atol", "max_step", "first_step", "max_num_steps", "jacobian",
            "backwards", "raise_on_failure", "progress", "dense_output"} == fields
    for mode in (Projection(), Baumgarte(), DAE(), Plain()):
        assert mode.switch_threshold == 0.1


@pytest.mark.parametrize("bad, field", [
    (dict(rtol=-1e-6), "rtol"), (dict(rtol=math.nan), "rtol"), (dict(rtol="tight"), "rtol"),
    (dict(atol=0.0), "atol"), (dict(atol=[1e-9, -1.0]), "atol"), (dict(atol="x"), "atol"),
    (dict(max_step=0.0), "max_step"), (dict(first_step=-0.1), "first_step"),
    (dict(first_step=math.inf), "first_step"), (dict(max_num_steps=0), "max_num_steps"),
    (dict(max_num_steps=2.5), "max_num_steps"), (dict(jacobian="numeric"), "jacobian"),
    (dict(method="Euler"), "method"), (dict(backwards="yes"), "backwards"),
    (dict(raise_on_failure=1), "raise_on_failure"),
])
def test_solver_names_the_bad_field(bad, field):
    with pytest.raises(InputError, match=rf"Solver\({field}="):
        Solver(**bad)


def test_solver_is_frozen_and_keeps_an_atol_vector():
    s = Solver(rtol=1e-8, atol=np.array([1e-9, 1e-9, 1e-9, 1e-8]))
    assert s.atol == (1e-9, 1e-9, 1e-9, 1e-8)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.rtol = 1e-3        # type: ignore[misc]
    assert dataclasses.replace(s, rtol=1e-9).rtol == 1e-9


@pytest.mark.parametrize("make, field", [
    (lambda: Baumgarte(alpha=-1.0), "alpha"), (lambda: Baumgarte(alpha="big"), "alpha"),
    (lambda: Projection(drift_tolerance=-1.0), "drift_tolerance"),
    (lambda: Projection(switch_threshold=2.0), "switch_threshold"),
    (lambda: DAE(switch_threshold=1e-6), "switch_threshold"),
    (lambda: Plain(switch_threshold="often"), "switch_threshold"),
    (lambda: Execution(processes=0), "processes"), (lambda: Execution(parallel="yes"), "parallel"),
    (lambda: Execution(keep_trajectories=None), "keep_trajectories"),
])
def test_mode_and_execution_objects_name_the_bad_field(make, field):
    with pytest.raises(InputError, match=field):
        make()


def test_solver_must_be_a_solver(fb):
    model, x0, p = fb
    with pytest.raises(InputError, match="solver="):
        sb.simulate(model, (0.0, 0.1), x0, p, solver={"rtol": 1e-8})


@pytest.mark.parametrize("call, message", [
    (dict(solver={"rtol": 1e-8}), r"solver=Solver\(rtol=1e-08\)"),
    (dict(solver=Solver), r"solver=Solver\(\.\.\.\), not the class"),
    (dict(solver="DOP853"), r"solver=Solver\(method='DOP853'\)"),
    (dict(solver=Baumgarte()), "is a constraint mode: it goes in constraints="),
    (dict(constraints=Baumgarte), r"constraints=Baumgarte\(\.\.\.\), not the class"),
    (dict(constraints=Solver()), "it goes in solver="),
    (dict(constraints="projection"), "did you mean 'project'"),
    (dict(solver=Solver(method="IDA")), "needs constraints='dae'"),
])
def test_a_common_mistake_gets_the_right_spelling(fb, call, message):
    model, x0, p = fb
    with pytest.raises(InputError, match=message):
        sb.simulate(model, (0.0, 0.1), x0, p, **call)


@pytest.mark.parametrize("call, message", [
    (dict(rtoll=1e-8), r"'rtoll'; did you mean solver=Solver\(rtol=\.\.\.\)"),
    (dict(mode="project"), "'mode'; did you mean constraints="),
    (dict(constraint="project"), "'constraint'; did you mean constraints="),
])
def test_a_misspelt_keyword_is_a_type_error_with_a_suggestion(fb, call, message):
    model, x0, p = fb
    with pytest.raises(TypeError, match=message):
        sb.simulate(model, (0.0, 0.1), x0, p, **call)


def test_options_given_by_position_are_refused_naming_the_keyword(fb):
    model, x0, p = fb
    with pytest.raises(TypeError, match=r"keyword-only: solver=Solver\(\.\.\.\)"):
        sb.simulate(model, (0.0, 0.1), x0, p, Solver())
    with pytest.raises(TypeError, match="keyword-only: constraints='project'"):
        sb.simulate(model, (0.0, 0.1), x0, p, "project")


@pytest.mark.parametrize("old, new", [
    (dict(rtol=1e-8, atol=1e-10, method="DOP853", max_step=0.05),
     dict(solver=Solver(rtol=1e-8, atol=1e-10, method="DOP853", max_step=0.05))),
    (dict(constraints="baumgarte", baumgarte=30.0, rtol=1e-7),
     dict(constraints=Baumgarte(alpha=30.0), solver=Solver(rtol=1e-7))),
    (dict(constraints="dae", polish_algebraic=False),
     dict(constraints=DAE(polish_algebraic=False))),
    (dict(switch_threshold=0.3, progress=False),
     dict(constraints=Projection(switch_threshold=0.3), solver=Solver(progress=False))),
])
def test_the_old_keywords_warn_and_give_the_same_numbers(fb, old, new):
    model, x0, p = fb
    t_eval = np.linspace(0.0, 1.0, 11)
    ref = sb.simulate(model, (0.0, 1.0), x0, p, t_eval=t_eval, **new)
    with pytest.warns(DeprecationWarning) as caught:
        got = sb.simulate(model, (0.0, 1.0), x0, p, t_eval=t_eval, **old)
    messages = " ".join(str(w.message) for w in caught)
    for key in old:
        if key != "constraints":
            assert f"simulate({key}=...)" in messages
    assert ("solver=Solver(" in messages or "constraints=" in messages)
    assert caught[0].filename == __file__          # the warning points at the caller
    assert _same(ref, got)


def test_the_new_spelling_does_not_warn(fb):
    model, x0, p = fb
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb.simulate(model, (0.0, 0.2), x0, p, constraints=Baumgarte(alpha=5.0),
                    solver=Solver(rtol=1e-7, progress=False))


def test_unknown_keyword_and_both_spellings(fb):
    model, x0, p = fb
    with pytest.raises(TypeError, match="tolerance"):
        sb.simulate(model, (0.0, 0.1), x0, p, tolerance=1e-8)
    with pytest.raises(InputError, match="rtol="), pytest.warns(DeprecationWarning):
        sb.simulate(model, (0.0, 0.1), x0, p, solver=Solver(), rtol=1e-8)
    with pytest.raises(InputError, match="baumgarte="), pytest.warns(DeprecationWarning):
        sb.simulate(model, (0.0, 0.1), x0, p, constraints=Baumgarte(alpha=2.0), baumgarte=3.0)
    with pytest.raises(InputError, match="switch_threshold="), pytest.warns(DeprecationWarning):
        sb.simulate(model, (0.0, 0.1), x0, p, constraints=Projection(), switch_threshold=0.2)


def test_sweep_takes_the_same_objects_and_its_old_keywords_warn(fb):
    model, x0, p = fb
    cases = sb.grid_cases(l_a=[0.8, 0.85])
    new = sb.sweep(model, (0.0, 0.3), cases, p, x0=x0, solver=Solver(rtol=1e-8),
                   execution=Execution(processes=1, progress=False))
    with pytest.warns(DeprecationWarning, match="deprecated") as caught:
        old = sb.sweep(model, (0.0, 0.3), cases, p, x0=x0, rtol=1e-8, processes=1, progress=False)
    messages = " ".join(str(w.message) for w in caught)
    assert "sweep(processes=...)" in messages and "execution=Execution(processes=...)" in messages
    assert "sweep(rtol=...)" in messages and "solver=Solver(rtol=...)" in messages
    assert {w.filename for w in caught} == {__file__}
    assert all(_same(a, b) for a, b in zip(new.trajectories, old.trajectories, strict=True))
    with pytest.raises(InputError, match="raise_on_failure"):
        sb.sweep(model, (0.0, 0.3), cases, p, x0=x0, solver=Solver(raise_on_failure=True))
    with pytest.raises(InputError, match="processes="), pytest.warns(DeprecationWarning):
        sb.sweep(model, (0.0, 0.3), cases, p, x0=x0, execution=Execution(), processes=2)
    with pytest.raises(TypeError, match="tolerance"):
        sb.sweep(model, (0.0, 0.3), cases, p, x0=x0, tolerance=1e-3)


def test_trajectory_is_built_from_three_parts(fb):
    model, x0, p = fb
    tr = sb.simulate(model, (0.0, 0.2), x0, p)
    report = tr.report
    assert isinstance(report, sb.analysis.RunReport)
    assert (report.status, report.nfev, report.message) == (tr.status, tr.nfev, tr.message)
    with pytest.raises(InputError, match="samples"):
        sb.Trajectory(tr.t, sb.analysis.ModelInfo(tr.coordinates, tr.speeds, tr.constants))


def test_an_old_mode_keyword_the_named_mode_ignores_says_so(fb):
    model, x0, p = fb
    with pytest.warns(DeprecationWarning, match=r"no effect with constraints='project'"):
        sb.simulate(model, (0.0, 0.1), x0, p, constraints="project", baumgarte=5.0)


def test_a_method_in_the_wrong_case_gets_its_spelling():
    with pytest.raises(InputError, match="did you mean 'DOP853'"):
        Solver(method="dop853")
