"""Arm26's path parameters (BIClong over its ellipsoid, TRIlong over three wrap objects) in
one C call (:mod:`symbody.opensim.forces.path_parameters`), and the compiled integrators
computing them in C before each evaluation (:mod:`symbody.compilation.native_derived`):
the same values as the routines' Python wrappers fed by symengine's own evaluation of the
inputs (to the wraps' round-off), and the same trajectory as the Python right-hand side."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import symbody as sb
from symbody.opensim import load_opensim

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"


@pytest.fixture(scope="module")
def arm26():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = load_opensim(DATA / "arm26.osim")
    if model.path_parameters.native() is None:
        pytest.skip("no C compiler")
    return model


def test_one_c_call_gives_the_python_wrappers_values(arm26):
    pp = arm26.path_parameters
    native = pp.native()
    rng = np.random.default_rng(11)
    worst, wrapped = 0.0, 0
    for _ in range(40):
        q = np.asarray(arm26.random_coordinates(rng), dtype=float)
        ours = native(q)
        pp._native = False                      # the Python path: Lambdify + the wrappers
        try:
            ref = pp.values(q)
        finally:
            pp._native = native
        assert ours.shape == ref.shape == (len(pp),)
        worst = max(worst, float(np.abs(ours - ref).max() / np.abs(ref).max()))
        wrapped += bool(ref[6] != 0.0)          # (BIClong's s: 0 where it does not wrap)
    assert worst <= 1e-11
    assert wrapped >= 5
    # and the Python path of the model now goes through the same C call
    q = np.asarray(arm26.random_coordinates(rng), dtype=float)
    assert pp.values(q).tobytes() == native(q).tobytes()


def test_the_compiled_right_hand_side_computes_the_paths_in_c(arm26):
    from symbody.analysis.inputs import specified_inputs
    from symbody.compilation.native_derived import with_derived_inputs
    from symbody.compilation.native_rhs import native_rhs

    nm = arm26.numeric_model
    p = nm.constants_array(arm26.constants)
    inputs = specified_inputs(nm, np.full(6, 0.3), p)
    native = with_derived_inputs(native_rhs(nm, p, inputs.user_values), inputs.derived,
                                 nm.layout.ir)
    assert native is not None
    rng = np.random.default_rng(5)
    for _ in range(20):
        q = np.asarray(arm26.random_coordinates(rng), dtype=float)
        x = np.concatenate([q, rng.uniform(-2, 2, 2), np.tile([0.3, 0.1], 6)])
        xdot, status = native(0.0, x)
        ref = nm.rhs(0.0, x, p, inputs(0.0, x))
        assert status == 0
        np.testing.assert_allclose(xdot, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())


def _run(model, method, python: bool):
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    x0 = np.concatenate([[1.0, 1.0], [1.0, 0.0], np.tile([0.3, 0.1], 6)])
    pp = model.path_parameters
    calls = []
    original = type(pp).__call__

    def counted(self, t, x):
        calls.append(t)
        return original(self, t, x)

    entry = pp.native_entry
    type(pp).__call__ = counted
    if python:
        pp.native_entry = lambda: None
    try:
        sol = sb.simulate(nm, (0.0, 0.05), x0, p, specifieds=np.full(6, 0.3),
                          solver=sb.Solver(method=method, rtol=1e-7, atol=1e-9,
                                           dense_output=False), t_eval=[0.0, 0.05])
    finally:
        type(pp).__call__ = original
        pp.native_entry = entry
    assert sol.status == 0, sol.message
    return sol.x[-1], len(calls), sol.nfev


@pytest.mark.parametrize("method", ["DOP853", "Radau"])
def test_compiled_steps_compute_the_paths_in_c(arm26, method):
    """The compiled steps call no Python between evaluations (only scipy's first-step choice
    does), and end where the Python right-hand side's steps end -- to the model's own
    smoothness: OpenSim's stations are iterates stopped at its tolerances, smooth in q only
    to about 1e-8, so round-off in the stepper's sums changes the step sequence.  From this
    start far from equilibrium (fiber lengths 0.1 m) both end ~1e-5 from a run at rtol 1e-12
    (an AMD machine: compiled 7.6e-6, Python 1.7e-5 relative; 2.5e-5 apart; below 1e-5 apart
    on an AVX-512 one), hence 1e-4 here; the right-hand sides agree to 1e-12 (above)."""
    x_c, python_calls_c, nfev_c = _run(arm26, method, python=False)
    x_p, python_calls_p, nfev_p = _run(arm26, method, python=True)
    assert nfev_c > 50 and python_calls_p >= nfev_p - 5
    assert python_calls_c < 0.1 * nfev_c
    assert np.abs(x_c - x_p).max() <= 1e-4 * np.abs(x_p).max()


def test_expression_excitations_run_with_the_paths_in_c(arm26, compiled_steps_taken):
    """Excitations given as SymPy expressions of t are computed in C too, after the paths
    (both sets of inputs written before each evaluation): the steps run in compiled code and
    end where the same excitations as a Python function end."""
    import sympy as sm

    from symbody.compat.sympy import TIME

    nm = arm26.numeric_model
    p = nm.constants_array(arm26.constants)
    x0 = np.concatenate([[1.0, 1.0], [1.0, 0.0], np.tile([0.3, 0.1], 6)])
    used = compiled_steps_taken
    waves = {n: 0.3 + 0.1 * (i + 1) * sm.sin(20 * TIME) for i, n in enumerate(arm26.input_names)}
    kw = dict(solver=sb.Solver(rtol=1e-9, atol=1e-11, dense_output=False), t_eval=[0.0, 0.05])
    expr = sb.simulate(nm, (0.0, 0.05), x0, p, specifieds=waves, **kw)
    assert used == [True]

    def func(tt, x):
        return 0.3 + 0.1 * np.arange(1, 7) * np.sin(20 * tt)

    python = sb.simulate(nm, (0.0, 0.05), x0, p, specifieds=func, **kw)
    assert used == [True]                  # (a Python function: Python steps)
    assert expr.status == 0 and python.status == 0
    free = sb.simulate(nm, (0.0, 0.05), x0, p, specifieds=np.full(6, 0.3), **kw)
    moved = np.abs(free.x[-1] - python.x[-1]).max()
    assert moved > 1e-4                    # (the waves act)
    assert np.abs(expr.x[-1] - python.x[-1]).max() <= 1e-5 * moved
