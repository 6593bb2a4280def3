"""Radau's steps in C (native_radau) and the default method's switch to it where the problem
turns stiff (stiffness)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import Radau

import symbody as sb
from symbody.analysis.simulation.native_radau import NativeRadau, radau_solver_for
from symbody.compilation.native_rhs import native_rhs


@pytest.fixture(scope="module")
def governor():
    """IFToMM A05, the flyball governor: stiff (a stiff spring and damper)."""
    mdl = sb.models.get("flyball-governor")
    model = sb.compile(mdl.eom)
    return mdl, model, model.constants_array(mdl.constants)


def _steps(solver, count):
    ts, ys = [], []
    while solver.status == "running" and len(ts) < count:
        solver.step()
        ts.append(solver.t)
        ys.append(solver.y.copy())
    return np.array(ts), np.array(ys)


def test_steps_are_scipys_radau_steps(governor):
    """The compiled steps and scipy's Radau with the same Jacobian (the compiled forward
    differences) take the same steps: the first to round-off, the next ones apart only by the
    round-off of the error estimate grown through the step-size control."""
    mdl, model, P = governor
    native = native_rhs(model, P)
    if native is None:
        pytest.skip("no C compiler: the model's kernels are not C")
    cls, extra = radau_solver_for(native)
    assert cls is NativeRadau
    x0 = model.state_array(mdl.initial_state)
    ours = cls(lambda t, x: model.rhs(t, x, P), 0.0, x0, 1.0, rtol=1e-6, atol=1e-9, **extra)
    theirs = Radau(lambda t, x: model.rhs(t, x, P), 0.0, x0, 1.0, rtol=1e-6, atol=1e-9,
                   jac=ours._compiled_jacobian)
    t1, y1 = _steps(ours, 30)
    t2, y2 = _steps(theirs, 30)
    assert len(t1) == len(t2) == 30
    assert t1[0] == pytest.approx(t2[0], rel=1e-14) and np.allclose(y1[0], y2[0], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(t1, t2, rtol=1e-7)
    np.testing.assert_allclose(y1, y2, rtol=1e-6, atol=1e-9)
    # the dense output is scipy's interpolant of the step
    mid = 0.5 * (ours.t_old + ours.t)
    dense = ours.dense_output()
    assert dense(mid).shape == x0.shape and np.isfinite(dense(mid)).all()
    assert ours.nfev > 0 and ours.njev >= 1 and ours.nlu >= 2


def test_simulate_with_radau_in_c_agrees_with_a_tight_reference(governor):
    mdl, model, _ = governor
    t_eval = np.linspace(0.0, 2.0, 11)
    ref = sb.simulate(model, (0.0, 2.0), mdl.initial_state, mdl.constants, t_eval=t_eval,
                      solver=sb.Solver(method="DOP853", rtol=1e-11, atol=1e-12))
    sol = sb.simulate(model, (0.0, 2.0), mdl.initial_state, mdl.constants, t_eval=t_eval,
                      solver=sb.Solver(method="Radau", rtol=1e-8, atol=1e-10))
    assert sol.status == 0
    assert np.abs(sol.x - ref.x).max() < 1e-5


def test_default_method_switches_where_the_problem_is_stiff(governor):
    """Solver() starts explicit and goes on with Radau once the steps are held at the explicit
    method's stability boundary; the answer is the reference's and it takes a fraction of the
    explicit run's evaluations (the flyball governor: about 1/20 at rtol 1e-6)."""
    mdl, model, _ = governor
    t_eval = np.linspace(0.0, 2.0, 11)
    ref = sb.simulate(model, (0.0, 2.0), mdl.initial_state, mdl.constants, t_eval=t_eval,
                      solver=sb.Solver(method="DOP853", rtol=1e-11, atol=1e-12))
    auto = sb.simulate(model, (0.0, 2.0), mdl.initial_state, mdl.constants, t_eval=t_eval)
    explicit = sb.simulate(model, (0.0, 2.0), mdl.initial_state, mdl.constants, t_eval=t_eval,
                           solver=sb.Solver(method="DOP853"))
    assert auto.status == 0 and "continued with Radau" in auto.message
    assert "stiff" not in explicit.message
    assert np.abs(auto.x - ref.x).max() < 1e-4
    assert auto.nfev < explicit.nfev / 5


@pytest.mark.parametrize("rtol", [1e-2, 1e-6, 1e-9])
def test_no_switch_on_a_problem_that_is_not_stiff(rtol):
    mdl = sb.models.get("n-link-pendulum-on-cart")
    model = sb.compile(mdl.eom)
    sol = sb.simulate(model, mdl.t_span, mdl.initial_state, mdl.constants,
                      solver=sb.Solver(rtol=rtol, atol=1e-2 * rtol))
    assert sol.status == 0 and "stiff" not in sol.message
