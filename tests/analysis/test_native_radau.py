"""Radau's steps in C (native_radau) and the default method's switch to it where the problem
turns stiff (stiffness)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import OdeSolver, Radau

import symbody as sb
from symbody.analysis.chain_rule import central_differences
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


def test_a_recomputed_jacobian_is_owed_to_the_next_step(governor):
    """The Jacobian a compiled step recomputes at its end is evaluated when the next step
    starts (a run that leaves Radau there never pays for it), or when Python reads it: the
    same J at the same state, counted once."""
    mdl, model, P = governor
    native = native_rhs(model, P)
    if native is None:
        pytest.skip("no C compiler: the model's kernels are not C")
    cls, extra = radau_solver_for(native)
    x0 = model.state_array(mdl.initial_state)
    ours = cls(lambda t, x: model.rhs(t, x, P), 0.0, x0, 1.0, rtol=1e-6, atol=1e-9, **extra)
    for _ in range(200):
        ours.step()
        if ours._radau.jac_pending:
            break
    assert ours._radau.jac_pending and ours.solver.current_jac
    njev = ours.njev
    expected = ours._compiled_jacobian(ours.t, ours.y.copy())
    assert ours.njev == njev
    J = ours.J                                       # (read: evaluated now, once)
    assert not ours._radau.jac_pending and ours.njev == njev + 1
    np.testing.assert_array_equal(J, expected)


@pytest.fixture(scope="module")
def ball():
    """The contact zoo's bouncing ball (Hunt-Crossley contact: stiff while in contact)."""
    mdl = sb.models.ball_on_plane()
    model = sb.compile(mdl.eom)
    return mdl, model, model.constants_array(mdl.constants)


def _handing_back(solver, every):
    """Make ``solver``'s compiled code hand back every ``every``-th step (status 4,
    "singular"); returns the count of compiled calls."""
    compiled, count = solver._step, [0]

    def step(*args):
        count[0] += 1
        return 4 if count[0] % every == 0 else compiled(*args)

    solver._step = step
    return count


@pytest.mark.parametrize("which", ["governor", "ball"])
def test_steps_handed_back_are_scipys_own(which, governor, ball):
    """NativeRadau is an OdeSolver of its own holding a scipy Radau (no Radau method
    overridden): every step the compiled code hands back (here all of them, then every
    third) is taken by that solver's public ``step()`` from where the compiled steps left
    it.  All handed back: the run is scipy's Radau with the same Jacobian (each step from
    new LU factors), bit for bit (times, states, evaluations, Jacobians, factorizations,
    dense output); every third: within what the tolerance allows of the compiled steps
    alone."""
    mdl, model, P = governor if which == "governor" else ball
    native = native_rhs(model, P)
    if native is None:
        pytest.skip("no C compiler: the model's kernels are not C")
    cls, extra = radau_solver_for(native)
    assert issubclass(cls, OdeSolver) and not issubclass(cls, Radau)
    x0 = model.state_array(mdl.initial_state)
    options = dict(rtol=1e-6, atol=1e-9)

    def fun(t, x):
        return model.rhs(t, x, P)

    def jac(t, x):
        return central_differences(lambda z: model.rhs(t, z, P), x, 1e-7)

    theirs = []

    def theirs_jac(t, x):
        # the held solver's Jacobian evaluates f where (t, x) is not its current state
        # (scipy asks for J at the new state before taking it): so does this one
        if theirs and (t != theirs[0].t or not np.array_equal(x, theirs[0].y)):
            theirs[0].fun(t, x)
        return jac(t, x)

    ours = cls(fun, 0.0, x0, 1.0, jac=jac, **options, **extra)
    assert isinstance(ours.solver, Radau)
    _handing_back(ours, 1)
    theirs.append(Radau(fun, 0.0, x0, 1.0, jac=theirs_jac, **options))
    for _ in range(40):
        ours.step()
        # a step handed back starts from new factorizations (the C attempt may have
        # rewritten J in place)
        theirs[0].LU_real = theirs[0].LU_complex = None
        theirs[0].step()
        other = theirs[0]
        assert (ours.t, ours.t_old, ours.h_abs, ours.nfev, ours.njev, ours.nlu, ours.status) == \
            (other.t, other.t_old, other.h_abs, other.nfev, other.njev, other.nlu, other.status)
        assert np.array_equal(ours.y, other.y) and np.array_equal(ours.J, other.J)
        tm = np.linspace(ours.t_old, ours.t, 5)
        assert np.array_equal(ours.dense_output()(tm), other.dense_output()(tm))
    assert other.nlu > 40

    alone = cls(fun, 0.0, x0, 1.0, jac=jac, **options, **extra)
    _steps(alone, 10_000)
    mixed = cls(fun, 0.0, x0, 1.0, jac=jac, **options, **extra)
    count = _handing_back(mixed, 3)
    _steps(mixed, 10_000)
    assert alone.status == mixed.status == "finished" and count[0] >= 30
    np.testing.assert_allclose(mixed.y, alone.y, rtol=1e-4, atol=1e-6)


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
