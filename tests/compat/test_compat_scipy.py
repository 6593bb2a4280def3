"""symbody.compat.scipy: the SciPy internals symbody relies on still behave as relied on.

Checked on SciPy 1.17.1 (``CHECKED_ON``).  A failure here means a SciPy release changed a
private name or its behaviour: fix ``src/symbody/compat/scipy.py`` and the compiled
Runge-Kutta and Radau steps (``analysis/simulation/native_rk.py``, ``native_radau.py``), then add the version to
``CHECKED_ON``.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
import scipy
from scipy.integrate import DOP853, RK23, RK45, Radau

from symbody.compat import scipy as compat


def _changed(what: str) -> str:
    return (f"SciPy {scipy.__version__} changed {what} (symbody.compat.scipy was checked on "
            f"SciPy {', '.join(compat.CHECKED_ON)})")


def test_checked_versions_are_named():
    assert compat.CHECKED_ON and all(v.count(".") >= 1 for v in compat.CHECKED_ON)


def test_step_control_constants():
    control = compat.runge_kutta_step_control()
    assert control == {"safety": 0.9, "min_factor": 0.2, "max_factor": 10.0}, \
        _changed("the Runge-Kutta step control (scipy.integrate._ivp.rk SAFETY/MIN_FACTOR/MAX_FACTOR)")


@pytest.mark.parametrize("cls", [RK23, RK45, DOP853])
def test_runge_kutta_solvers_have_what_the_compiled_steps_read(cls):
    solver = cls(lambda t, y: -y, 0.0, np.array([1.0, 2.0]), 1.0, rtol=1e-6, atol=1e-9)
    missing = [a for a in compat.RUNGE_KUTTA_ATTRIBUTES if not hasattr(solver, a)]
    if cls is DOP853:
        missing += [a for a in ("E3", "E5") if not hasattr(solver, a)]
    else:
        missing += [a for a in ("E",) if not hasattr(solver, a)]
    assert not missing, _changed(f"{cls.__name__}'s attributes {missing}")
    assert solver.K.shape == (solver.n_stages + 1, 2) and solver.K.flags.c_contiguous, \
        _changed(f"{cls.__name__}.K (stages x n, contiguous)")
    assert solver.A.shape[0] == solver.n_stages and len(solver.C) == solver.n_stages, \
        _changed(f"{cls.__name__}'s tableau shapes")
    solver.step()
    assert solver.status == "running" and solver.y_old is not None and solver.h_previous > 0


def test_radau_has_what_the_compiled_steps_read_and_write():
    """The Radau tables and an instance's attributes the compiled steps of native_radau use;
    the dense output made from a step's Q is the solver's own."""
    tables = compat.radau_tables()
    assert np.shape(tables["T"]) == np.shape(tables["TI"]) == np.shape(tables["P"]) == (3, 3) and \
        np.shape(tables["C"]) == np.shape(tables["E"]) == (3,) and \
        isinstance(tables["MU_COMPLEX"], complex) and tables["NEWTON_MAXITER"] >= 1, \
        _changed("the Radau tables (scipy.integrate._ivp.radau)")
    solver = Radau(lambda t, y: -y, 0.0, np.array([1.0, 2.0]), 1.0, rtol=1e-6, atol=1e-9)
    solver.step()
    missing = [a for a in compat.RADAU_ATTRIBUTES if not hasattr(solver, a)]
    assert not missing, _changed(f"Radau's attributes {missing}")
    assert solver.Z.shape == (3, 2), _changed("Radau.Z (3 x n)")
    Q = solver.Z.T.dot(np.asarray(tables["P"]))
    ours = compat.radau_dense_output(solver.t_old, solver.t, solver.y_old, Q)
    tm = np.linspace(solver.t_old, solver.t, 4)
    assert np.array_equal(ours(tm), solver.dense_output()(tm)), _changed("RadauDenseOutput")


def test_lapack_function_pointers():
    for name in ("dgesv", "dposv"):
        address = compat.lapack_function(name)
        assert isinstance(address, int) and address != 0, \
            _changed(f"scipy.linalg.cython_lapack.__pyx_capi__[{name!r}]")
    assert compat.lapack_function("no_such_routine") is None
    # the pointer is LAPACK's dposv: solve a 2x2 symmetric positive definite system with it
    fn = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 8)(compat.lapack_function("dposv"))
    a = np.array([[4.0, 1.0], [1.0, 3.0]], order="F")
    b = np.array([1.0, 2.0])
    uplo, n, nrhs, lda, ldb, info = (ctypes.c_char(b"L"), ctypes.c_int(2), ctypes.c_int(1),
                                     ctypes.c_int(2), ctypes.c_int(2), ctypes.c_int(-1))
    fn(ctypes.addressof(uplo), ctypes.addressof(n), ctypes.addressof(nrhs), a.ctypes.data,
       ctypes.addressof(lda), b.ctypes.data, ctypes.addressof(ldb), ctypes.addressof(info))
    assert info.value == 0
    np.testing.assert_allclose(b, np.linalg.solve([[4.0, 1.0], [1.0, 3.0]], [1.0, 2.0]), rtol=1e-14)


def test_blas_function_pointers():
    for name in ("dgemv", "dsyrk"):
        address = compat.blas_function(name)
        assert isinstance(address, int) and address != 0, \
            _changed(f"scipy.linalg.cython_blas.__pyx_capi__[{name!r}]")
    assert compat.blas_function("no_such_routine") is None
    # the pointer is BLAS's dgemv: y <- alpha A^T x + beta y with a column-major A
    fn = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 11)(compat.blas_function("dgemv"))
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], order="F")
    x = np.array([1.0, -1.0])
    y = np.array([10.0, 20.0, 30.0])
    trans, m, n, inc = ctypes.c_char(b"T"), ctypes.c_int(2), ctypes.c_int(3), ctypes.c_int(1)
    alpha, beta, lda = ctypes.c_double(2.0), ctypes.c_double(0.5), ctypes.c_int(2)
    fn(ctypes.addressof(trans), ctypes.addressof(m), ctypes.addressof(n), ctypes.addressof(alpha),
       a.ctypes.data, ctypes.addressof(lda), x.ctypes.data, ctypes.addressof(inc),
       ctypes.addressof(beta), y.ctypes.data, ctypes.addressof(inc))
    np.testing.assert_allclose(y, 2.0 * (a.T @ [1.0, -1.0]) + 0.5 * np.array([10.0, 20.0, 30.0]),
                               rtol=1e-14)


@pytest.mark.parametrize("cls", [RK23, RK45, Radau])
def test_dense_values_are_the_interpolants_own_bits(cls):
    """radau_dense_values (scipy's Radau and RK interpolants without their tiles and
    cumulative products) gives scipy's own call's numbers to the last bit, at one time (a
    Python float, a numpy float) and at many."""
    solver = cls(lambda t, y: np.array([y[1], -np.sin(y[0]) - 0.3 * y[1]]), 0.0,
                 np.array([1.0, 0.2]), 10.0, rtol=1e-6)
    for _ in range(4):
        solver.step()
    sol = solver.dense_output()
    t0, t1 = solver.t_old, solver.t
    times = np.linspace(t0, t1, 7)
    assert np.array_equal(compat.radau_dense_values(sol, times), sol(times)), _changed(type(sol).__name__)
    for t in (t0, t1, 0.3 * t0 + 0.7 * t1, np.float64(0.6 * t0 + 0.4 * t1)):
        assert np.array_equal(compat.radau_dense_values(sol, t), sol(t)), _changed(type(sol).__name__)


def test_runge_kutta_classes():
    """The base class the explicit pairs subclass (analysis/simulation/explicit_tableaux.py)
    and the dense output they return are scipy's own: RK45's base and its dense output."""
    RungeKutta, RkDenseOutput = compat.runge_kutta_classes()
    assert RK45.__mro__[1] is RungeKutta and issubclass(DOP853, RungeKutta)
    solver = RK45(lambda t, y: -y, 0.0, np.array([1.0]), 1.0)
    solver.step()
    assert type(solver.dense_output()) is RkDenseOutput
