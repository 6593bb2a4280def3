"""scipy's Radau IIA solver with each step taken in compiled code.

For stiff models (contact, stiff springs, fast actuators) whose right-hand side runs in C
(:mod:`symbody.compilation.native_rhs`), :func:`radau_solver_for` returns
:class:`NativeRadau`, an ``OdeSolver`` of its own around scipy's ``Radau`` (made by its
public constructor), whose adaptive step -- the simplified Newton iterations, the LU
factorizations and the Jacobian updates, rejected attempts included -- runs in C
(:mod:`.radau_source`): the same algorithm, tables (read from scipy) and step control,
writing the state of the scipy solver it holds so that that solver's dense output, first
step and status work unchanged and the results equal scipy's ``Radau`` with the same
Jacobian to round-off.  No method of scipy's classes is overridden.  The Jacobian ∂f/∂x
comes from a compiled function when the model has one (the exact derivatives), else from
forward differences of the compiled right-hand side in C (n evaluations, a few
microseconds each).

Between steps the held solver's attributes are kept in step with the C state, so that a
step the C code cannot finish (the right-hand side reports a singular system or a mass
matrix that is not positive definite) is taken again by that solver's public ``step()``
with the Python right-hand side, which raises or solves it the general way.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

import numpy as np
from scipy.integrate import OdeSolver, Radau

from ...compat.scipy import lapack_function, radau_dense_output, radau_tables
from ...compilation.native_rhs import build_source, data_address
from ..chain_rule import central_differences
from .radau_source import RADAU_SOURCE, WORK_SIZE

__all__ = ["NativeRadau", "radau_solver_for", "LAPACK_MIN_N"]

#: from this many states on the two LU factorizations of (μ/h) I - J and their solves are
#: LAPACK's getrf/getrs (scipy's), below it the hand-written ones (faster there: no call
#: set-up); benchmarks/bench_radau_lu.py measures the crossover
LAPACK_MIN_N = 24


class _Radau(ctypes.Structure):
    _fields_ = [("rhs", ctypes.c_void_p), ("plan", ctypes.c_void_p),
                ("jac", ctypes.c_void_p), ("jplan", ctypes.c_void_p),
                ("n", ctypes.c_long), ("newton_maxiter", ctypes.c_long),
                ("atol", ctypes.c_void_p),
                ("rtol", ctypes.c_double), ("newton_tol", ctypes.c_double),
                ("max_step", ctypes.c_double), ("t_bound", ctypes.c_double),
                ("direction", ctypes.c_double), ("min_factor", ctypes.c_double),
                ("max_factor", ctypes.c_double),
                ("C", ctypes.c_void_p), ("E", ctypes.c_void_p), ("T", ctypes.c_void_p),
                ("TI", ctypes.c_void_p), ("P", ctypes.c_void_p),
                ("mu_real", ctypes.c_double), ("mu_re", ctypes.c_double), ("mu_im", ctypes.c_double),
                ("J", ctypes.c_void_p), ("LUr", ctypes.c_void_p), ("LUc", ctypes.c_void_p),
                ("pr", ctypes.c_void_p), ("pc", ctypes.c_void_p),
                ("Z", ctypes.c_void_p), ("Q", ctypes.c_void_p), ("y_old", ctypes.c_void_p),
                ("work", ctypes.c_void_p), ("yfail", ctypes.c_void_p),
                ("t", ctypes.c_double), ("h_abs", ctypes.c_double), ("h_abs_old", ctypes.c_double),
                ("error_norm_old", ctypes.c_double), ("t_old", ctypes.c_double),
                ("h_sol", ctypes.c_double),
                ("have_h_old", ctypes.c_long), ("have_err_old", ctypes.c_long),
                ("have_sol", ctypes.c_long), ("lu_valid", ctypes.c_long),
                ("current_jac", ctypes.c_long),
                ("nfev", ctypes.c_long), ("njev", ctypes.c_long), ("nlu", ctypes.c_long),
                ("t_fail", ctypes.c_double), ("jac_pending", ctypes.c_long),
                ("dgetrf", ctypes.c_void_p), ("dgetrs", ctypes.c_void_p),
                ("zgetrf", ctypes.c_void_p), ("zgetrs", ctypes.c_void_p),
                ("lapack_min_n", ctypes.c_long), ("nlu_lapack", ctypes.c_long)]


class _FdPlan(ctypes.Structure):
    _fields_ = [("rhs", ctypes.c_void_p), ("plan", ctypes.c_void_p), ("n", ctypes.c_long),
                ("ytmp", ctypes.c_void_p), ("ftmp", ctypes.c_void_p), ("nfev", ctypes.c_long)]


_JAC_TYPE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_double, ctypes.c_void_p,
                             ctypes.c_void_p, ctypes.c_void_p)


class _PythonJacobian:
    """A Python ``jac(t, y) -> (n, n)`` as the C steps' Jacobian (a ctypes callback writing J
    row by row; 1 when it raises, so that the step is taken again by scipy's code)."""

    def __init__(self, jac: Any, n: int) -> None:
        self.jac, self.n = jac, n

        def call(_plan, t, y, _f, J):
            try:
                yv = np.ctypeslib.as_array(ctypes.cast(y, ctypes.POINTER(ctypes.c_double)), (n,)).copy()
                out = np.ctypeslib.as_array(ctypes.cast(J, ctypes.POINTER(ctypes.c_double)), (n * n,))
                out[:] = np.asarray(jac(t, yv), dtype=float).reshape(n * n)
            except Exception:       # noqa: BLE001 - reported by the Python path's retry
                return 1
            return 0

        self._callback = _JAC_TYPE(call)
        self.function = ctypes.cast(self._callback, ctypes.c_void_p).value
        self.plan = 0


class NativeRadau(OdeSolver):
    """scipy's Radau with each adaptive step taken in compiled code (see the module doc).

    An :class:`~scipy.integrate.OdeSolver` of its own (``_step_impl`` and
    ``_dense_output_impl``, the two methods scipy's documentation asks a solver to
    implement) around an instance of scipy's ``Radau`` (``solver``), made by its public
    constructor: that instance validates the options, chooses the first step, evaluates the
    first Jacobian, gives the dense output and takes, by its public ``step()``, the steps
    the compiled code hands back.  Its state (:data:`~symbody.compat.scipy.RADAU_ATTRIBUTES`)
    follows each compiled step; its ``sol`` is written when it is next read (this class's
    dense output, a step handed back).

    ``native``: the compiled right-hand side (``function`` and ``plan`` addresses, e.g.
    :class:`~symbody.compilation.native_rhs.NativeRHS`); ``library``: the compiled
    :data:`.radau_source.RADAU_SOURCE`; ``jacobian``: a compiled Jacobian (``function``:
    ``int jac(plan, t, y, f, J)`` writing J row by row, 0 when done; ``plan``) or None for
    forward differences of the compiled right-hand side; ``on_evaluations(k)``: told of the
    right-hand-side evaluations made in C.  A ``jac`` option (a callable ``jac(t, y)``, e.g.
    the exact Jacobian of :mod:`.jacobian`) is called from the C steps instead.
    ``previous``: the stepper of the segment that ended where this one starts (its Jacobian
    is this one's first, not current).
    """

    def __init__(self, fun: Any, t0: float, y0: Any, t_bound: float, *, native: Any, library: Any,
                 jacobian: Any = None, on_evaluations: Any = None, previous: Any = None,
                 **options: Any) -> None:
        super().__init__(fun, t0, y0, t_bound, options.get("vectorized", False))
        python_jac = options.pop("jac", None)
        if python_jac is not None and callable(python_jac):
            jacobian = _PythonJacobian(python_jac, int(np.size(y0)))
        n = int(np.size(y0))
        self._jacobian = jacobian            # (kept alive: C holds its function's address)
        self._library, self._native, self._on_evaluations = library, native, on_evaluations
        self._ytmp, self._ftmp = np.empty(n), np.empty(n)
        self._fd = _FdPlan(rhs=native.function, plan=native.plan, n=n,
                           ytmp=data_address(self._ytmp), ftmp=data_address(self._ftmp), nfev=0)
        if jacobian is None:
            self._jac_function = ctypes.cast(library.symbody_fd_jacobian, ctypes.c_void_p).value
            self._jac_plan = ctypes.addressof(self._fd)
        else:
            self._jac_function, self._jac_plan = jacobian.function, jacobian.plan
        jac_call = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_double, ctypes.c_void_p,
                                    ctypes.c_void_p, ctypes.c_void_p)(self._jac_function)
        self._jac_call = jac_call
        self._J = np.zeros((n, n))
        self._dense_pending = False
        self._counted = 0
        # a restart (an event, a projection) inside the last step of ``previous`` (the stepper
        # of the segment before, same size): its Jacobian serves as the first one, marked as
        # not current, so that a Newton failure evaluates a fresh one
        self._start_J = None
        if isinstance(previous, NativeRadau) and previous.n == n and previous.t_old is not None and \
                min(previous.t_old, previous.t) <= t0 <= max(previous.t_old, previous.t):
            self._start_J = np.array(previous.J, dtype=float)
        # (created, then initialized: its first Jacobian, evaluated by its constructor, reads
        # the right-hand side value the constructor has just computed)
        self.solver = solver = Radau.__new__(Radau)
        solver.__init__(fun, t0, y0, t_bound, jac=self._compiled_jacobian, **options)
        if self._start_J is not None:
            solver.current_jac = False
            self._start_J = None
        self._follow()
        self._setup(n)

    @property
    def h_abs(self) -> float:
        """The step the solver tries next."""
        return self.solver.h_abs

    @property
    def f(self) -> np.ndarray:
        """f(t, y) at the current state (n)."""
        return self.solver.f

    @property
    def J(self) -> np.ndarray:
        """The Jacobian ∂f/∂y the solver holds (n x n)."""
        self._settle_jacobian()
        return self.solver.J

    def _settle_jacobian(self) -> None:
        """The Jacobian a compiled step recomputes at its end is owed until the next compiled
        step starts (a run that leaves Radau there never evaluates it): evaluate it now, at
        the current state, when Python reads it or takes the next step itself."""
        if getattr(self, "_radau", None) is None or not self._radau.jac_pending:
            return
        solver = self.solver
        self._radau.jac_pending = 0
        self._J[:] = self._compiled_jacobian(solver.t, np.asarray(solver.y, dtype=float))
        solver.J, solver.current_jac = self._J, True
        solver.njev += 1
        self._follow()

    def _follow(self) -> None:
        """This solver's counts are the held solver's."""
        solver = self.solver
        self.nfev, self.njev, self.nlu = solver.nfev, solver.njev, solver.nlu

    # ---------------------------------------------------------------- the compiled Jacobian
    def _compiled_jacobian(self, t: float, y: np.ndarray) -> np.ndarray:
        """∂f/∂y at (t, y) from the compiled Jacobian (scipy's ``jac`` callable); the Python
        right-hand side's J by forward differences where the compiled one cannot evaluate."""
        if self._start_J is not None:
            return self._start_J
        solver = self.solver
        y = np.ascontiguousarray(y, dtype=float)
        f = np.ascontiguousarray(solver.fun(t, y), dtype=float) if getattr(solver, "f", None) is None \
            or getattr(solver, "t", None) != t or not np.array_equal(getattr(solver, "y", None), y) \
            else np.ascontiguousarray(solver.f, dtype=float)
        J = np.empty((self.n, y.size))
        if self._jac_call(self._jac_plan, float(t), y.ctypes.data, f.ctypes.data, J.ctypes.data):
            J = central_differences(lambda x: solver.fun(t, x), y, 1e-7)
        self._count()
        return J

    def _setup(self, n: int) -> None:
        solver = self.solver
        tables, self._tables = _tables()
        C, E, T, TI, P = self._tables
        mu = complex(tables["MU_COMPLEX"])
        self._J[:] = solver.J
        self._LUr, self._LUc = np.empty(n * n), np.empty(2 * n * n)
        self._pr, self._pc = np.zeros(n, dtype=np.intc), np.zeros(n, dtype=np.intc)
        self._Z, self._Q = np.zeros(3 * n), np.zeros(3 * n)
        self._y_old, self._work, self._yfail = np.zeros(n), np.zeros(WORK_SIZE * n), np.zeros(n)
        self._atol = np.ascontiguousarray(np.broadcast_to(np.asarray(solver.atol, dtype=float), (n,)))
        self._radau = _Radau(
            rhs=self._native.function, plan=self._native.plan, jac=self._jac_function,
            jplan=self._jac_plan, n=n, newton_maxiter=int(tables["NEWTON_MAXITER"]),
            atol=data_address(self._atol), rtol=float(solver.rtol), newton_tol=float(solver.newton_tol),
            max_step=float(solver.max_step), t_bound=float(solver.t_bound),
            direction=float(solver.direction), min_factor=float(tables["MIN_FACTOR"]),
            max_factor=float(tables["MAX_FACTOR"]), C=data_address(C), E=data_address(E),
            T=data_address(T), TI=data_address(TI), P=data_address(P),
            mu_real=float(tables["MU_REAL"]), mu_re=mu.real, mu_im=mu.imag,
            J=data_address(self._J), LUr=data_address(self._LUr), LUc=data_address(self._LUc),
            pr=data_address(self._pr), pc=data_address(self._pc), Z=data_address(self._Z),
            Q=data_address(self._Q), y_old=data_address(self._y_old), work=data_address(self._work),
            yfail=data_address(self._yfail), lu_valid=0, current_jac=1,
            lapack_min_n=LAPACK_MIN_N, **_lapack_routines())
        self._address = ctypes.addressof(self._radau)
        step = self._library.symbody_radau_step
        if step.argtypes is None:         # (once per loaded library)
            step.restype = ctypes.c_int
            step.argtypes = [ctypes.c_void_p] * 5
        self._step = step
        self._python_stepped = True       # (the start's state goes into the struct first)

    def _count(self) -> None:
        """Tell ``on_evaluations`` of the compiled evaluations since the last call."""
        total = int(self._radau.nfev) + int(self._fd.nfev) if hasattr(self, "_radau") else int(self._fd.nfev)
        if total > self._counted:
            self.solver.nfev += total - self._counted
            if self._on_evaluations is not None:
                self._on_evaluations(total - self._counted)
        self._counted = total

    # ---------------------------------------------------------------- dense output, lazily
    def _write_dense_output(self) -> None:
        """The held solver's ``sol``: scipy's interpolant of the last compiled step (Q, n x 3,
        from C), written when it is first read."""
        if self._dense_pending:
            solver = self.solver
            Q = self._Q.reshape(self.n, 3).copy()
            solver.sol = radau_dense_output(solver.t_old, solver.t, solver.y_old, Q)
            self._dense_pending = False

    def _dense_output_impl(self) -> Any:
        self._write_dense_output()
        return self.solver.dense_output()

    # ---------------------------------------------------------------- the step
    def _sync_in(self) -> None:
        """The held solver's state (a step taken by scipy's code, or the start) into the C
        struct."""
        solver, R = self.solver, self._radau
        R.h_abs_old = 0.0 if solver.h_abs_old is None else float(solver.h_abs_old)
        R.have_h_old = solver.h_abs_old is not None
        R.error_norm_old = 0.0 if solver.error_norm_old is None else float(solver.error_norm_old)
        R.have_err_old = solver.error_norm_old is not None
        R.current_jac = bool(solver.current_jac)
        if solver.J is not self._J:
            self._J[:] = solver.J
        self._write_dense_output()
        sol = solver.sol
        R.lu_valid = 0
        if sol is None:
            R.have_sol = 0
        else:
            R.have_sol = 1
            self._Q[:] = np.asarray(sol.Q, dtype=float).ravel()
            self._y_old[:] = sol.y_old
            R.t_old, R.h_sol = float(sol.t_old), float(sol.h)
        self._python_stepped = False

    def _step_impl(self) -> tuple[bool, str | None]:
        solver, R = self.solver, self._radau
        if self._python_stepped:
            self._sync_in()
        y = np.ascontiguousarray(solver.y, dtype=float)
        f = np.ascontiguousarray(solver.f, dtype=float)
        y_new, f_new = np.empty(self.n), np.empty(self.n)
        R.t, R.h_abs = float(solver.t), float(solver.h_abs)
        R.t_fail = np.nan
        njev, nlu = R.njev, R.nlu
        status = self._step(self._address, data_address(y), data_address(f), data_address(y_new),
                            data_address(f_new))
        solver.njev += R.njev - njev
        solver.nlu += R.nlu - nlu
        self._count()
        if status == 1:
            if np.isfinite(R.t_fail):     # a non-finite stage value: the Python rhs records it
                solver.fun(R.t_fail, self._yfail.copy())
            self._follow()
            return False, self.TOO_SMALL_STEP
        if status != 0:
            # the Python path raises (singular), solves (not definite), or records the
            # non-finite value; the step is then taken by scipy's own code (the held
            # solver's public step(), from the state the compiled steps left)
            if status in (2, 3):
                solver.fun(R.t_fail, self._yfail.copy())
            self._settle_jacobian()
            solver.LU_real = solver.LU_complex = None
            self._write_dense_output()
            self._python_stepped = True
            message = solver.step()
            self.t, self.y = solver.t, solver.y
            self._follow()
            return solver.status != "failed", message
        solver.h_abs_old, solver.error_norm_old = R.h_abs_old, R.error_norm_old
        solver.h_abs = R.h_abs
        solver.current_jac = bool(R.current_jac)
        solver.J = self._J
        solver.LU_real = solver.LU_complex = None       # (scipy's own code factorizes again)
        solver.y_old = y
        solver.t_old = solver.t
        solver.t = self.t = R.t
        solver.y = self.y = y_new
        solver.f = f_new
        solver.Z = self._Z.reshape(3, self.n)
        self._dense_pending = True
        self._follow()
        return True, None


@functools.cache
def _lapack_routines() -> dict[str, int | None]:
    """The addresses of SciPy's dgetrf, dgetrs, zgetrf, zgetrs (None where missing: the
    compiled steps then keep their own LU)."""
    return {name: lapack_function(name) for name in ("dgetrf", "dgetrs", "zgetrf", "zgetrs")}


@functools.cache
def _tables() -> tuple[dict, tuple[np.ndarray, ...]]:
    """scipy's Radau tables and constants, and (C, E, T, TI, P) as contiguous float arrays
    (read, never written, by the compiled steps: one copy for every solver)."""
    tables = radau_tables()
    return tables, tuple(np.ascontiguousarray(np.asarray(tables[k], dtype=float).ravel())
                         for k in ("C", "E", "T", "TI", "P"))


def radau_solver_for(native: Any, jacobian: Any = None) -> tuple[type, dict] | None:
    """(:class:`NativeRadau`, its extra constructor arguments) for the compiled right-hand
    side ``native``, or None without one (or without a C compiler)."""
    if native is None:
        return None
    try:
        library = build_source(RADAU_SOURCE, "native-radau")
    except RuntimeError:
        return None
    if library is None:
        return None
    return NativeRadau, {"native": native, "library": library, "jacobian": jacobian}
