"""SciPy internals symbody relies on, in one place (checked on the versions in ``CHECKED_ON``).

- The step-size control constants of SciPy's explicit Runge-Kutta solvers
  (``scipy.integrate._ivp.rk``: ``SAFETY``, ``MIN_FACTOR``, ``MAX_FACTOR``), which the
  compiled steps of :mod:`symbody.analysis.simulation.native_rk` repeat so that their steps
  equal SciPy's.  Those steps also read the solver's coefficient tables and state (``A``,
  ``B``, ``C``, ``E``/``E3``/``E5``, ``K``, ``n_stages``, ``error_exponent``, ``h_abs``,
  ``h_previous``, ``y_old``; :data:`RUNGE_KUTTA_ATTRIBUTES`) of a solver they hold (no
  method of SciPy's classes is overridden).
- The tables and constants of SciPy's Radau IIA solver (``scipy.integrate._ivp.radau``: ``C``,
  ``E``, ``T``, ``TI``, ``P``, ``MU_REAL``, ``MU_COMPLEX``, ``NEWTON_MAXITER``,
  ``MIN_FACTOR``, ``MAX_FACTOR``) and the attributes of a ``Radau`` instance
  (:data:`RADAU_ATTRIBUTES`), which :mod:`symbody.analysis.simulation.native_radau`'s
  compiled steps read and write in a solver they hold (no method of SciPy's classes is
  overridden) so that they are SciPy's steps; ``RadauDenseOutput`` makes that solver's
  dense output of a compiled step.
- LAPACK and BLAS function pointers from ``scipy.linalg.cython_lapack`` and
  ``scipy.linalg.cython_blas``: their routines are a public Cython API (``cimport``); from
  Python the addresses are only reachable through the modules' ``__pyx_capi__`` capsules,
  which Cython generates.
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

__all__ = ["CHECKED_ON", "RUNGE_KUTTA_ATTRIBUTES", "RADAU_ATTRIBUTES", "runge_kutta_step_control",
           "runge_kutta_classes",
           "radau_tables", "radau_dense_output", "lapack_function", "blas_function"]

#: SciPy versions these helpers were checked on (tests/compat/test_scipy.py).
CHECKED_ON = ("1.17.1",)

#: Attributes of an RK23/RK45/DOP853 instance that the compiled steps read or write.
RUNGE_KUTTA_ATTRIBUTES = ("A", "B", "C", "K", "n_stages", "error_exponent", "h_abs",
                          "h_previous", "y_old", "rtol", "atol", "max_step", "direction",
                          "t_bound", "f", "TOO_SMALL_STEP")

#: Attributes of a Radau instance that the compiled steps read or write.
RADAU_ATTRIBUTES = ("h_abs", "h_abs_old", "error_norm_old", "newton_tol", "J", "current_jac",
                    "LU_real", "LU_complex", "Z", "sol", "y_old", "t_old", "rtol", "atol",
                    "max_step", "direction", "t_bound", "f", "njev", "nlu", "TOO_SMALL_STEP")


def radau_tables() -> dict:
    """SciPy's Radau IIA (order 5) tables and step-control constants: ``C`` (3), ``E`` (3),
    ``T``, ``TI``, ``P`` (3x3), ``MU_REAL`` (float), ``MU_COMPLEX`` (complex),
    ``NEWTON_MAXITER`` (int), ``MIN_FACTOR``, ``MAX_FACTOR`` (``scipy.integrate._ivp.radau``)."""
    from scipy.integrate._ivp import radau

    return {name: getattr(radau, name) for name in ("C", "E", "T", "TI", "P", "MU_REAL",
                                                     "MU_COMPLEX", "NEWTON_MAXITER",
                                                     "MIN_FACTOR", "MAX_FACTOR")}


def radau_dense_output(t_old: float, t: float, y_old, Q):
    """SciPy's ``RadauDenseOutput`` of one step (``Q``: n x 3, the collocation polynomial's
    coefficients, ``Radau._compute_dense_output``)."""
    from scipy.integrate._ivp.radau import RadauDenseOutput

    return RadauDenseOutput(t_old, t, y_old, Q)


def radau_dense_values(sol, t):
    """``sol(t)`` for scipy's ``RadauDenseOutput`` ``sol`` (n,) or (n, k) at the time t or
    times (k,): y_old + Q [x, x², x³] with x = (t - t_old)/h, the same operations in the same
    order (bit-identical) without the general call's tiles and cumulative products; any
    other interpolant is simply called.  scipy's ``RkDenseOutput`` (RK23, RK45) likewise:
    y_old + h Q [x, x², ...] with the powers as its cumulative product forms them."""
    kind = type(sol)
    if kind is _rk_dense_class():
        return _rk_dense_values(sol, t)
    if kind is not _radau_dense_class() or sol.Q.shape[1] != 3:
        return sol(t)
    if type(t) is float:                     # (Python floats: the same IEEE operations)
        x = (t - sol.t_old) / sol.h
        x2 = x * x
        y = np.dot(sol.Q, np.array((x, x2, x2 * x)))
        y += sol.y_old
        return y
    x = (np.asarray(t) - sol.t_old) / sol.h
    x2 = x * x
    p = np.array([x, x2, x2 * x])            # (cumprod: x, x*x, (x*x)*x)
    y = np.dot(sol.Q, p)
    if y.ndim == 2:
        y += sol.y_old[:, None]
    else:
        y += sol.y_old
    return y


def _rk_dense_values(sol, t):
    """``RkDenseOutput._call_impl`` without its tile: x, x*x, (x*x)*x... (its cumprod's
    products, in its order), the same dot product and sum: the same bits."""
    x = (np.asarray(t) - sol.t_old) / sol.h
    powers = [x]
    for _ in range(sol.order):
        powers.append(powers[-1] * x)
    y = sol.h * np.dot(sol.Q, np.array(powers))
    if y.ndim == 2:
        y += sol.y_old[:, None]
    else:
        y += sol.y_old
    return y


@functools.cache
def _rk_dense_class() -> type:
    """scipy's ``RkDenseOutput`` (imported once)."""
    from scipy.integrate._ivp.rk import RkDenseOutput

    return RkDenseOutput


@functools.cache
def _radau_dense_class() -> type:
    """scipy's ``RadauDenseOutput`` (imported once)."""
    from scipy.integrate._ivp.radau import RadauDenseOutput

    return RadauDenseOutput


def runge_kutta_step_control() -> dict[str, float]:
    """{"safety", "min_factor", "max_factor"} of SciPy's adaptive Runge-Kutta step control.

    The new step is ``h * min(max_factor, max(min_factor, safety * err**(-1/(order+1))))``
    (``scipy.integrate._ivp.rk``).
    """
    from scipy.integrate._ivp import rk

    return {"safety": float(rk.SAFETY), "min_factor": float(rk.MIN_FACTOR),
            "max_factor": float(rk.MAX_FACTOR)}


def lapack_function(name: str) -> int | None:
    """The address of SciPy's LAPACK routine ``name`` (``"dgesv"``, ``"dposv"``...), or None.

    Read from the capsule ``scipy.linalg.cython_lapack.__pyx_capi__[name]``; None when SciPy
    has no such routine or no such table.
    """
    return _capsule_address("cython_lapack", name)


def blas_function(name: str) -> int | None:
    """The address of SciPy's BLAS routine ``name`` (``"dgemv"``, ``"dsyrk"``...), or None.

    Read from the capsule ``scipy.linalg.cython_blas.__pyx_capi__[name]`` (Fortran
    convention: every argument by pointer); None when SciPy has no such routine or table.
    """
    return _capsule_address("cython_blas", name)


@functools.cache
def _capsule_address(module: str, name: str) -> int | None:
    """The pointer in ``scipy.linalg.<module>.__pyx_capi__[name]``, or None (read once: it
    does not move while the process runs)."""
    try:
        import importlib
        table = importlib.import_module(f"scipy.linalg.{module}").__pyx_capi__
        capsule = table[name]
    except (ImportError, AttributeError, KeyError):
        return None
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return get_pointer(capsule, get_name(capsule))


def runge_kutta_classes() -> tuple[type, type]:
    """scipy's ``RungeKutta`` (the base of ``RK23``/``RK45``/``DOP853``, whose class
    attributes ``A``, ``B``, ``C``, ``E``, ``P``, ``order``, ``error_estimator_order``,
    ``n_stages`` define a pair) and ``RkDenseOutput`` (y_old + h Q [x, x², ...])."""
    from scipy.integrate._ivp.rk import RkDenseOutput, RungeKutta

    return RungeKutta, RkDenseOutput
