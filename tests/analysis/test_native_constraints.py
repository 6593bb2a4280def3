"""The simulation's per-step constraint checks in compiled code (compilation/native_constraints):
the rank measure and the projection onto the holonomic constraints give the Python
functions' numbers to the last bit, and a run with them is the run without them."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import symbody as sb
from symbody.analysis.simulation.dependent_set import DependentSetMonitor
from symbody.compilation import compile
from symbody.compilation.native_constraints import native_constraints
from symbody.models.n_four_bar import n_four_bar

strategy = importlib.import_module("symbody.analysis.simulation.strategy")
dependent_set = importlib.import_module("symbody.analysis.simulation.dependent_set")


@pytest.fixture(scope="module", params=["bricard", "four-bar", "n-four-bar"])
def c_model(request):
    """A zoo model compiled with backend="c" (n-four-bar with 3 loops)."""
    zoo = n_four_bar(3) if request.param == "n-four-bar" else sb.models.get(request.param)
    model = compile(zoo.eom, backend="c")
    return zoo, model, model.constants_array(zoo.constants)


def _states(zoo, model, P, k=12):
    """k configurations along a short run, moved off the constraints a little."""
    sol = sb.simulate(model, (0.0, 1.0), zoo.initial_state, zoo.constants,
                      t_eval=np.linspace(0.0, 1.0, k))
    rng = np.random.default_rng(1)
    Q = np.asarray(sol.q) + 1e-3 * rng.standard_normal(np.shape(sol.q))
    return np.asarray(sol.t), Q


def test_rank_measure_equals_the_monitor_to_the_last_bit(c_model):
    zoo, model, P = c_model
    native = native_constraints(model, P)
    assert native is not None
    monitor = DependentSetMonitor(model, P, None, 0.1, 1e-8)
    plain = DependentSetMonitor(model, P, None, 0.1, 1e-8)
    plain._native = None                       # the Python path, for comparison
    T, Q = _states(zoo, model, P)
    for t, q in zip(T, Q):
        value = native.rank(t, q)
        assert 0.0 < value <= 1.0
        assert value == plain.rank(t, q, remember=False) == monitor.rank(t, q, remember=False)
    # a non-finite configuration: rank lost (as rank_measure says)
    bad = Q[0].copy()
    bad[-1] = np.nan
    assert native.rank(T[0], bad) == plain.rank(T[0], bad, remember=False) == 0.0


def test_flat_position_rank_is_zero():
    zoo = n_four_bar(3)
    model = compile(zoo.eom, backend="c")
    P = model.constants_array(zoo.constants)
    native = native_constraints(model, P)
    plain = DependentSetMonitor(model, P, None, 0.1, 1e-8)
    plain._native = None
    q = np.zeros(model.layout.N)                 # all links on one line
    assert native.rank(0.0, q) == plain.rank(0.0, q, remember=False)
    assert native.rank(0.0, q) < 1e-12


def test_projection_equals_project_coordinates_to_the_last_bit(c_model):
    zoo, model, P = c_model
    native = native_constraints(model, P)
    T, Q = _states(zoo, model, P)
    dep = tuple(range(model.n, model.N))
    for t, q in zip(T, Q):
        for max_iter in (1, 20):
            found = native.project(t, q, dep, 1e-10, max_iter)
            ref = model.project_coordinates(q, zoo.constants, t, max_iter=max_iter)
            assert found is not None
            np.testing.assert_array_equal(found[0], ref[0])
            assert found[1:] == ref[1:]
    # all rows in one call: the same numbers as one by one
    many, status, norms = native.project_many(T, Q, dep, 1e-10, 20)
    for i, (t, q) in enumerate(zip(T, Q)):
        one = native.project(t, q, dep, 1e-10, 20)
        np.testing.assert_array_equal(many[i], one[0])
        assert (status[i] == 1) == one[1] and norms[i] == one[2]
    # another dependent set (the model's partition machinery chooses one at the first state)
    part = model.choose_partition(Q[0], P, T[0])
    found = native.project(T[0], Q[0], tuple(part.q_dep_index), 1e-10, 20)
    ref = model.project_coordinates(Q[0], zoo.constants, T[0], max_iter=20, partition=part)
    np.testing.assert_array_equal(found[0], ref[0])


def test_singular_projection_is_left_to_python():
    zoo = n_four_bar(3)
    model = compile(zoo.eom, backend="c")
    P = model.constants_array(zoo.constants)
    native = native_constraints(model, P)
    q = np.zeros(model.layout.N)
    q[0] = 1e-3                                   # off the constraints at the flat position
    assert native.project(0.0, q, tuple(range(model.n, model.N)), 1e-10, 20) is None
    Q = np.array([q, _states(zoo, model, P, 2)[1][1]])      # singular, regular
    out, status, _ = native.project_many(np.zeros(2), Q, tuple(range(model.n, model.N)), 1e-10, 20)
    assert status.tolist() == [-1, 1]
    np.testing.assert_array_equal(out[0], q)          # the singular row left as it was
    with pytest.raises(sb.SingularConstraintError):
        model.project_coordinates(q, zoo.constants, 0.0)


def test_models_it_cannot_take():
    zoo = sb.models.get("four-bar")
    llvm = compile(zoo.eom, backend="llvm")
    assert native_constraints(llvm, llvm.constants_array(zoo.constants)) is None


def test_a_run_with_the_compiled_checks_is_the_run_without(c_model, monkeypatch):
    zoo, model, P = c_model
    kw = dict(t_eval=np.linspace(0.0, 3.0, 31), solver=sb.Solver(rtol=1e-6, atol=1e-6))
    used = []
    real = strategy.native_constraints

    def spy(*args):
        used.append(real(*args))
        return used[-1]

    monkeypatch.setattr(strategy, "native_constraints", spy)
    fast = sb.simulate(model, (0.0, 3.0), zoo.initial_state, zoo.constants, **kw)
    assert used and used[0] is not None
    monkeypatch.setattr(strategy, "native_constraints", lambda *args: None)
    monkeypatch.setattr(dependent_set, "native_constraints", lambda *args: None)
    slow = sb.simulate(model, (0.0, 3.0), zoo.initial_state, zoo.constants, **kw)
    assert fast.success and slow.success
    assert fast.nfev == slow.nfev and fast.nsteps == slow.nsteps
    np.testing.assert_array_equal(fast.x, slow.x)
