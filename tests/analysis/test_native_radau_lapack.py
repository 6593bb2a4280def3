"""The compiled Radau steps above LAPACK_MIN_N states factor (μ/h) I - J with LAPACK's
getrf/getrs: the same steps as scipy's Radau and as the hand-written LU, to round-off."""

from __future__ import annotations

import types

import numpy as np
import pytest
from scipy.integrate import Radau

from symbody.analysis.simulation import native_radau
from symbody.analysis.simulation.native_radau import NativeRadau, radau_solver_for
from symbody.compilation.native_rhs import build_source

# a stiff nonlinear chain (method of lines, heat equation with upwind advection and a cubic
# sink; J not symmetric): y_i' = k (y_{i-1} - 2 y_i + y_{i+1}) + a (y_{i-1} - y_i) - y_i^3
# + sin(t)  (y_0 = y_{n+1} = 0)
CHAIN_SOURCE = r"""
typedef struct { long n; double k, a; } chain;
int symbody_test_chain(chain *C, double t, const double *y, double *f)
{
    long i, n = C->n;
    for (i = 0; i < n; i++) {
        double l = i > 0 ? y[i - 1] : 0.0, r = i < n - 1 ? y[i + 1] : 0.0;
        f[i] = C->k * (l - 2.0 * y[i] + r) + C->a * (l - y[i]) - y[i] * y[i] * y[i] + sin(t);
    }
    return 0;
}
"""
N = 120
A = 2e4


@pytest.fixture(scope="module")
def chain():
    import ctypes

    library = build_source("#include <math.h>\n" + CHAIN_SOURCE, "test-radau-chain")
    if library is None or radau_solver_for(types.SimpleNamespace()) is None:
        pytest.skip("no C compiler")
    class Chain(ctypes.Structure):
        _fields_ = [("n", ctypes.c_long), ("k", ctypes.c_double), ("a", ctypes.c_double)]

    plan = Chain(n=N, k=1e3, a=A)
    native = types.SimpleNamespace(function=ctypes.cast(library.symbody_test_chain, ctypes.c_void_p).value,
                                   plan=ctypes.addressof(plan), keep=plan)
    k = 1e3
    lap = k * (np.diag(-2.0 * np.ones(N)) + np.diag(np.ones(N - 1), 1) + np.diag(np.ones(N - 1), -1))
    lap += A * (np.diag(np.ones(N - 1), -1) - np.eye(N))

    def rhs(t, y):
        return lap @ y - y**3 + np.sin(t)

    y0 = np.sin(np.linspace(0.0, 3.0, N)) + 0.5
    return native, rhs, y0


def _steps(solver, count):
    ts, ys = [], []
    while solver.status == "running" and len(ts) < count:
        solver.step()
        ts.append(solver.t)
        ys.append(solver.y.copy())
    return np.array(ts), np.array(ys)


def _solver(native, rhs, y0):
    cls, extra = radau_solver_for(native)
    assert cls is NativeRadau
    return cls(rhs, 0.0, y0, 2.0, rtol=1e-6, atol=1e-9, **extra)


def test_lapack_steps_are_scipys_and_the_hand_written_ones(chain, monkeypatch):
    native, rhs, y0 = chain
    assert N >= native_radau.LAPACK_MIN_N
    ours = _solver(native, rhs, y0)
    theirs = Radau(rhs, 0.0, y0, 2.0, rtol=1e-6, atol=1e-9, jac=ours._compiled_jacobian)
    t1, y1 = _steps(ours, 25)
    if native_radau._lapack_routines()["zgetrs"] is None:
        pytest.skip("scipy without zgetrs: the hand-written LU only")
    assert ours._radau.nlu_lapack == ours._radau.nlu > 0          # the LAPACK path, throughout
    t2, y2 = _steps(theirs, 25)
    assert t1[0] == pytest.approx(t2[0], rel=1e-14)
    np.testing.assert_allclose(y1[0], y2[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(t1, t2, rtol=1e-8)
    np.testing.assert_allclose(y1, y2, rtol=1e-7, atol=1e-9)
    # the hand-written LU (the threshold above n): the same steps
    monkeypatch.setattr(native_radau, "LAPACK_MIN_N", N + 1)
    hand = _solver(native, rhs, y0)
    t3, y3 = _steps(hand, 25)
    assert hand._radau.nlu > 0 and hand._radau.nlu_lapack == 0
    assert t3[0] == pytest.approx(t1[0], rel=1e-14)
    np.testing.assert_allclose(y3[0], y1[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(t3, t1, rtol=1e-8)
    np.testing.assert_allclose(y3, y1, rtol=1e-7, atol=1e-9)
