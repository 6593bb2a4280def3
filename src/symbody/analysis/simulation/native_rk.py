"""scipy's explicit Runge-Kutta solvers with each step taken in compiled code.

For a model whose right-hand side runs entirely in C (:mod:`symbody.compilation.native_rhs`;
:mod:`~symbody.compilation.native_partition` in another set of dependent speeds or with
many constraint rows; :mod:`~symbody.compilation.native_full` for the full-coordinate
spans, through :func:`native_solver_for`),
the Python left on each evaluation (scipy's wrappers, the argument checks, one LAPACK
wrapper call per linear system) costs more than the kernels on small and medium models.
:func:`native_solver` returns :class:`CompiledRungeKutta`, an ``OdeSolver`` of its own around
scipy's ``RK23`` / ``RK45`` / ``DOP853`` or :mod:`.explicit_tableaux`' ``Tsit5`` / ``Vern6``
(scipy ``RungeKutta`` subclasses; made by the public constructor), whose adaptive
step -- rejected attempts included -- runs in C: the same algorithm and the same coefficient
tables (the scipy solver's ``A``, ``B``, ``C``, ``E`` or ``E3``/``E5`` arrays, read in
place), the same error norm and step-size control (``SAFETY``, ``MIN_FACTOR``,
``MAX_FACTOR``, the error exponent), writing the stages into the scipy solver's own ``K``
so that its dense output (and its first step, options, status) works unchanged.  No method
of scipy's classes is overridden.  The results equal scipy's to round-off (sums in another
order).

When the C right-hand side cannot finish an evaluation (a singular system; a mass matrix
that is not positive definite) the attempt is dropped and the step is taken again by
scipy's Python code (the scipy solver's public ``step()``) with the Python right-hand side,
which raises or solves it the general way.  A non-finite derivative rejects the attempt in C
with scipy's factor for it (the smallest), without the stages after it; the Python function
then evaluates that state once, which records it for the failure message should the step size
collapse.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
from scipy.integrate import DOP853, RK23, RK45, OdeSolver

from ...compat.scipy import runge_kutta_step_control
from ...compilation.linear_algebra import REDUCED_KKT_MIN
from ...compilation.native_derived import with_derived_inputs
from ...compilation.native_partition import native_partition_rhs
from ...compilation.native_rhs import build_source, data_address, native_rhs
from .explicit_tableaux import EXPLICIT_PAIRS

__all__ = ["native_solver", "native_solver_for", "CompiledRungeKutta", "RK_SOURCE"]

RK_SOURCE = r"""
#include <math.h>
#include <string.h>
typedef int (*rhs_fn)(void *, double, const double *, double *);
typedef struct {
    rhs_fn rhs; void *plan;
    const double *A, *B, *C, *E, *E3, *E5, *atol;
    double *K, *dy;
    long n, stages, a_cols, dop853;
    double rtol, max_step, t_bound, direction, error_exponent, safety, min_factor, max_factor;
    /* in: t, h_abs; out: t_new, h, h_abs, failed time */
    double t, h_abs, t_new, h, t_fail;
    long nfev, nonfinite;
    double t_old;
    /* the last evaluation with a non-finite derivative (the first, while none had a finite
       state): time and state, for the Python right-hand side to record (nonfinite.py) */
    double t_nonfinite;
    double *y_nonfinite;
} rk;

/* 1 when x' (n) has a non-finite entry; then (t, x) is kept as the Python rhs keeps it */
static int nonfinite_derivative(rk *R, double t, const double *x, const double *xdot)
{
    long i, n = R->n;
    int finite_state = 1;
    for (i = 0; i < n; i++) if (!isfinite(xdot[i])) break;
    if (i == n) return 0;
    for (i = 0; i < n; i++) if (!isfinite(x[i])) { finite_state = 0; break; }
    if (!R->nonfinite || finite_state) {
        R->t_nonfinite = t;
        memcpy(R->y_nonfinite, x, (size_t)n * sizeof(double));
    }
    R->nonfinite++;
    return 1;
}

/* one adaptive step of scipy's RungeKutta._step_impl; 0 accepted, 1 step too small,
   2 the rhs could not evaluate (at t_fail, state in dy).  A non-finite derivative rejects
   the attempt at once with the smallest factor, as scipy's step does (its error norm is then
   NaN or infinite: h_abs *= max(MIN_FACTOR, NaN or 0)), without the stages after it; the
   evaluation is kept for the Python rhs to record (nonfinite_derivative) */
int symbody_rk_step(rk *R, const double *y, const double *f, double *y_new, double *f_new)
{
    long n = R->n, s, j, i, S = R->stages;
    double t = R->t, h_abs, h, t_new, err, factor;
    double *K = R->K, *dy = R->dy;
    double min_step = 10.0 * fabs(nextafter(t, R->direction * INFINITY) - t);
    int rejected = 0, bad;
    if (R->h_abs > R->max_step) h_abs = R->max_step;
    else if (R->h_abs < min_step) h_abs = min_step;
    else h_abs = R->h_abs;
    for (;;) {
        if (h_abs < min_step) return 1;
        h = h_abs * R->direction;
        t_new = t + h;
        if (R->direction * (t_new - R->t_bound) > 0) t_new = R->t_bound;
        h = t_new - t;
        h_abs = fabs(h);
        memcpy(K, f, (size_t)n * sizeof(double));
        bad = 0;
        for (s = 1; s < S; s++) {
            const double *a = R->A + s * R->a_cols;   /* row s of A */
            for (i = 0; i < n; i++) {
                double acc = 0.0;
                for (j = 0; j < s; j++) acc += K[j * n + i] * a[j];
                dy[i] = y[i] + acc * h;
            }
            R->nfev++;
            if (R->rhs(R->plan, t + R->C[s] * h, dy, K + s * n)) { R->t_fail = t + R->C[s] * h; return 2; }
            if (nonfinite_derivative(R, t + R->C[s] * h, dy, K + s * n)) { bad = 1; break; }
        }
        if (bad) { h_abs *= R->min_factor; rejected = 1; continue; }
        for (i = 0; i < n; i++) {
            double acc = 0.0;
            for (j = 0; j < S; j++) acc += K[j * n + i] * R->B[j];
            y_new[i] = y[i] + h * acc;
        }
        R->nfev++;
        if (R->rhs(R->plan, t + h, y_new, f_new)) {
            memcpy(dy, y_new, (size_t)n * sizeof(double));
            R->t_fail = t + h;
            return 2;
        }
        if (nonfinite_derivative(R, t + h, y_new, f_new)) { h_abs *= R->min_factor; rejected = 1; continue; }
        memcpy(K + S * n, f_new, (size_t)n * sizeof(double));
        if (R->dop853) {
            double e5 = 0.0, e3 = 0.0;
            for (i = 0; i < n; i++) {
                double scale = R->atol[i] + fmax(fabs(y[i]), fabs(y_new[i])) * R->rtol;
                double a5 = 0.0, a3 = 0.0;
                for (j = 0; j <= S; j++) { a5 += K[j * n + i] * R->E5[j]; a3 += K[j * n + i] * R->E3[j]; }
                a5 /= scale; a3 /= scale;
                e5 += a5 * a5; e3 += a3 * a3;
            }
            if (e5 == 0.0 && e3 == 0.0) err = 0.0;
            else err = h_abs * e5 / sqrt((e5 + 0.01 * e3) * (double)n);
        } else {
            double sum = 0.0;
            for (i = 0; i < n; i++) {
                double scale = R->atol[i] + fmax(fabs(y[i]), fabs(y_new[i])) * R->rtol;
                double a = 0.0;
                for (j = 0; j <= S; j++) a += K[j * n + i] * R->E[j];
                a = a * h / scale;
                sum += a * a;
            }
            err = sqrt(sum / (double)n);
        }
        if (err < 1.0) {
            if (err == 0.0) factor = R->max_factor;
            else factor = fmin(R->max_factor, R->safety * pow(err, R->error_exponent));
            if (rejected) factor = fmin(1.0, factor);
            h_abs *= factor;
            break;
        }
        h_abs *= fmax(R->min_factor, R->safety * pow(err, R->error_exponent));
        rejected = 1;
    }
    R->t_new = t_new; R->h = h; R->h_abs = h_abs;
    return 0;
}

/* up to max_steps accepted steps of symbody_rk_step from (R->t, y, f), stopping after the
   step that reaches t_bound or passes t_stop; y, f hold the last accepted state, y_old,
   R->t_old and R->h its step's start and size.  Returns the number of accepted steps; where an attempt fails after
   one was accepted the state is the last accepted one (the attempt is taken again by the
   next call, one step at a time); with none accepted, minus 1 minus the failure status. */
long symbody_rk_steps(rk *R, double *y, double *f, double *y_new, double *f_new,
                      double *y_old, long max_steps, double t_stop)
{
    long k = 0, n = R->n;
    int status;
    while (k < max_steps) {
        double t = R->t;
        status = symbody_rk_step(R, y, f, y_new, f_new);
        if (status) return k ? k : -1 - status;
        memcpy(y_old, y, (size_t)n * sizeof(double));
        memcpy(y, y_new, (size_t)n * sizeof(double));
        memcpy(f, f_new, (size_t)n * sizeof(double));
        R->t_old = t;
        R->t = R->t_new;
        k++;
        if (R->direction * (R->t - R->t_bound) >= 0 || R->direction * (R->t - t_stop) >= 0) break;
    }
    return k;
}

/* the stiffness test's power iteration (stiffness.py): `iterations` times v <- v / |v|,
   w = (f(t, y + scale v) - f) / scale, rho = |w|, v <- w; 0 done (rho, v written), 1 an
   evaluation failed or a value was not finite (the caller takes the Python path) */
int symbody_power_iteration(rk *R, double t, const double *y, const double *f, double *v,
                            double *ytmp, double *w, double scale, long iterations, double *rho)
{
    long n = R->n, i, k;
    for (k = 0; k < iterations; k++) {
        double norm = 0.0, sum = 0.0;
        for (i = 0; i < n; i++) norm += v[i] * v[i];
        norm = sqrt(norm);
        if (!(norm > 0.0 && isfinite(norm))) return 1;
        for (i = 0; i < n; i++) ytmp[i] = y[i] + scale * (v[i] / norm);
        R->nfev++;
        if (R->rhs(R->plan, t, ytmp, w)) return 1;
        for (i = 0; i < n; i++) {
            w[i] = (w[i] - f[i]) / scale;
            if (!isfinite(w[i])) return 1;
            sum += w[i] * w[i];
        }
        *rho = sqrt(sum);
        if (!isfinite(*rho)) return 1;
        memcpy(v, w, (size_t)n * sizeof(double));
    }
    return 0;
}
"""


class _RK(ctypes.Structure):
    _fields_ = [("rhs", ctypes.c_void_p), ("plan", ctypes.c_void_p),
                ("A", ctypes.c_void_p), ("B", ctypes.c_void_p), ("C", ctypes.c_void_p),
                ("E", ctypes.c_void_p), ("E3", ctypes.c_void_p), ("E5", ctypes.c_void_p),
                ("atol", ctypes.c_void_p), ("K", ctypes.c_void_p), ("dy", ctypes.c_void_p),
                ("n", ctypes.c_long), ("stages", ctypes.c_long), ("a_cols", ctypes.c_long),
                ("dop853", ctypes.c_long),
                ("rtol", ctypes.c_double), ("max_step", ctypes.c_double),
                ("t_bound", ctypes.c_double), ("direction", ctypes.c_double),
                ("error_exponent", ctypes.c_double), ("safety", ctypes.c_double),
                ("min_factor", ctypes.c_double), ("max_factor", ctypes.c_double),
                ("t", ctypes.c_double), ("h_abs", ctypes.c_double), ("t_new", ctypes.c_double),
                ("h", ctypes.c_double), ("t_fail", ctypes.c_double),
                ("nfev", ctypes.c_long), ("nonfinite", ctypes.c_long),
                ("t_old", ctypes.c_double), ("t_nonfinite", ctypes.c_double),
                ("y_nonfinite", ctypes.c_void_p)]


_SCIPY = {"RK23": RK23, "RK45": RK45, "DOP853": DOP853, **EXPLICIT_PAIRS}


class CompiledRungeKutta(OdeSolver):
    """scipy's ``RK23`` / ``RK45`` / ``DOP853`` (``method``) with each adaptive step taken in
    compiled code.

    An :class:`~scipy.integrate.OdeSolver` of its own (``_step_impl`` and
    ``_dense_output_impl``, the two methods scipy's documentation asks a solver to
    implement) around an instance of scipy's solver, made by its public constructor: that
    instance validates the options, chooses the first step, holds the coefficient tables and
    the stage array ``K`` the compiled step writes, gives the dense output
    (``dense_output()``) and takes, by its public ``step()``, the steps the compiled code
    hands back (a singular system, a mass matrix that is not positive definite, a
    non-finite derivative).  Its state (``t``, ``y``, ``f``, ``h_abs``, ``t_old``,
    ``y_old``, ``h_previous``: :data:`~symbody.compat.scipy.RUNGE_KUTTA_ATTRIBUTES`) follows
    each compiled step.
    """

    def __init__(self, fun, t0, y0, t_bound, *, method: str, native: Any, library: Any,
                 on_evaluations: Any = None, **options):
        super().__init__(fun, t0, y0, t_bound, options.get("vectorized", False),
                         support_complex=True)
        self.solver = solver = _SCIPY[method](fun, t0, y0, t_bound, **options)
        n = self.n
        self.method = method
        self.nfev = solver.nfev
        self._native, self._library = native, library
        self._on_evaluations = on_evaluations
        self._atol = np.ascontiguousarray(np.broadcast_to(np.asarray(solver.atol, dtype=float), (n,)))
        self._dy = np.empty(n)
        self._y_nonfinite = np.empty(n)

        def table(name):          # (DOP853 has E3 and E5, the others E; the rest unused)
            value = getattr(solver, name, None)
            if not isinstance(value, np.ndarray):
                value = np.zeros(solver.n_stages + 1)
            return np.ascontiguousarray(value, dtype=float)

        self._tables = [table(name) for name in ("A", "B", "C", "E", "E3", "E5")]
        A, B, C, E, E3, E5 = self._tables
        if not solver.K.flags.c_contiguous:             # (DOP853's K is a view of K_extended)
            raise ValueError("the stage array is not contiguous")
        self._rk = _RK(rhs=native.function, plan=native.plan, A=A.ctypes.data, B=B.ctypes.data,
                       C=C.ctypes.data, E=E.ctypes.data, E3=E3.ctypes.data, E5=E5.ctypes.data,
                       atol=self._atol.ctypes.data, K=solver.K.ctypes.data, dy=self._dy.ctypes.data,
                       y_nonfinite=self._y_nonfinite.ctypes.data,
                       n=n, stages=solver.n_stages, a_cols=A.shape[1], dop853=int(method == "DOP853"),
                       rtol=float(solver.rtol), max_step=float(solver.max_step),
                       t_bound=float(solver.t_bound), direction=float(solver.direction),
                       error_exponent=float(solver.error_exponent), **runge_kutta_step_control())
        self._step = library.symbody_rk_step
        self._step.restype = ctypes.c_int
        self._step.argtypes = [ctypes.c_void_p] * 5
        self._steps = library.symbody_rk_steps
        self._steps.restype = ctypes.c_long
        self._steps.argtypes = [ctypes.c_void_p] * 6 + [ctypes.c_long, ctypes.c_double]
        self._power = library.symbody_power_iteration
        self._power.restype = ctypes.c_int
        self._power.argtypes = [ctypes.c_void_p, ctypes.c_double] + [ctypes.c_void_p] * 5 + \
            [ctypes.c_double, ctypes.c_long, ctypes.c_void_p]
        self._rk_address = ctypes.addressof(self._rk)
        #: accepted steps of the last ``advance`` (1 for ``step``)
        self.accepted = 1

    def advance(self, max_steps: int, t_stop: float) -> str | None:
        """Up to ``max_steps`` accepted steps in one compiled call, stopping after the step
        that reaches ``t_bound`` or passes ``t_stop`` (the next output time) -- the steps
        ``step()`` would take, without the Python between them; ``accepted`` says how many.
        The dense output (``dense_output()``) and ``t_old`` are the last step's.  Where no
        step could be accepted in C (a failure, a singular system) this is one ``step()``.
        Returns ``step()``'s message."""
        self.accepted = 1
        if max_steps <= 1 or self.status != "running" or self.t == self.t_bound:
            return self.step()
        solver = self.solver
        y = np.array(solver.y, dtype=float)
        f = np.array(solver.f, dtype=float)
        y_new, f_new, y_old = np.empty(self.n), np.empty(self.n), np.empty(self.n)
        rk = self._rk
        rk.t, rk.h_abs, rk.nfev = float(solver.t), float(solver.h_abs), 0
        k = self._steps(self._rk_address, data_address(y), data_address(f),
                        data_address(y_new), data_address(f_new), data_address(y_old),
                        int(max_steps), float(t_stop))
        solver.nfev += rk.nfev
        if self._on_evaluations is not None:
            self._on_evaluations(rk.nfev)
        self._record_nonfinite()
        self.nfev = solver.nfev
        if k <= 0:          # (nothing accepted: the attempt again, one step the usual way)
            return self.step()
        self.accepted = int(k)
        solver.h_previous = rk.h
        solver.t_old = self.t_old = rk.t_old
        solver.y_old = y_old
        solver.t = self.t = rk.t
        solver.y = self.y = y
        solver.h_abs = rk.h_abs
        solver.f = f
        if self.direction * (self.t - self.t_bound) >= 0:
            self.status = "finished"
        return None

    @property
    def h_abs(self) -> float:
        """The step the solver tries next."""
        return self.solver.h_abs

    @property
    def f(self) -> np.ndarray:
        """f(t, y) at the current state (the held solver's; read by the stiffness test)."""
        return self.solver.f

    def derivative(self, t: float, y: np.ndarray) -> np.ndarray:
        """f(t, y) (n,) from the compiled right-hand side, the Python one where it cannot
        finish (read by the stiffness test: its evaluations without scipy's wrappers)."""
        xdot, status = self._native(t, y)
        if status != 0 or not np.isfinite(xdot).all():
            return np.asarray(self.solver.fun(t, y), dtype=float)
        self.solver.nfev += 1
        if self._on_evaluations is not None:
            self._on_evaluations(1)
        return xdot

    def power_iteration(self, v: np.ndarray, scale: float, iterations: int) -> float | None:
        """The stiffness test's power iteration at the current state in one compiled call
        (:meth:`~.stiffness.StiffnessMonitor.spectral_radius`): ρ, with ``v`` (n,) updated in
        place; None where an evaluation fails or a value is not finite."""
        solver = self.solver
        y = np.ascontiguousarray(solver.y, dtype=float)
        f = np.ascontiguousarray(solver.f, dtype=float)
        ytmp, w, rho = np.empty(self.n), np.empty(self.n), ctypes.c_double(np.nan)
        rk = self._rk
        rk.nfev = 0
        status = self._power(self._rk_address, float(solver.t), data_address(y), data_address(f),
                             data_address(v), data_address(ytmp), data_address(w), float(scale),
                             int(iterations), ctypes.byref(rho))
        solver.nfev += rk.nfev
        self.nfev = solver.nfev
        if self._on_evaluations is not None:
            self._on_evaluations(rk.nfev)
        return float(rho.value) if status == 0 else None

    def _step_impl(self):
        solver = self.solver
        y = np.ascontiguousarray(solver.y, dtype=float)
        f = np.ascontiguousarray(solver.f, dtype=float)
        y_new, f_new = np.empty(self.n), np.empty(self.n)
        rk = self._rk
        rk.t, rk.h_abs, rk.nfev = float(solver.t), float(solver.h_abs), 0
        status = self._step(self._rk_address, data_address(y), data_address(f),
                            data_address(y_new), data_address(f_new))
        solver.nfev += rk.nfev
        if self._on_evaluations is not None:
            self._on_evaluations(rk.nfev)
        self._record_nonfinite()
        if status == 1:
            self.nfev = solver.nfev
            return False, self.TOO_SMALL_STEP
        if status != 0:
            # the Python path raises (singular) or solves (not definite); the step is then
            # taken by scipy's own code
            if status == 2:
                solver.fun(rk.t_fail, self._dy.copy())
            message = solver.step()
            self.t, self.y, self.nfev = solver.t, solver.y, solver.nfev
            return solver.status != "failed", message
        solver.h_previous = rk.h
        solver.y_old = y
        solver.t_old = solver.t
        solver.t = self.t = rk.t_new
        solver.y = self.y = y_new
        solver.h_abs = rk.h_abs
        solver.f = f_new
        self.nfev = solver.nfev
        return True, None

    def _record_nonfinite(self) -> None:
        """Where the compiled steps rejected an attempt for a non-finite derivative, the
        Python right-hand side evaluates the kept state once, which records it (the entry and
        equation named if the step size later collapses: :mod:`.nonfinite`)."""
        rk = self._rk
        if rk.nonfinite:
            rk.nonfinite = 0
            self.solver.fun(rk.t_nonfinite, self._y_nonfinite.copy())

    def _dense_output_impl(self):
        sol = self.solver.dense_output()
        self.nfev = self.solver.nfev
        return sol


def native_solver(model: Any, P: np.ndarray, method: str, R: np.ndarray | None = None,
                  partition: Any = None, derived: Any = None) -> tuple[type, dict] | None:
    """(solver class, extra constructor arguments) for ``method`` with steps in compiled
    code, or None when the model's right-hand side or the method cannot run there.
    ``R``: the values of the specified inputs, when they are constant.  ``partition``: the
    set of dependent speeds the state is in (default the model's own); another set, or many
    constraint rows (where the Python path solves by the null space of B_a), takes
    :mod:`~symbody.compilation.native_partition`'s right-hand side.  ``derived``: the
    model's derived inputs (``R`` then holds zeros at their positions), computed in C before
    each evaluation (:mod:`~symbody.compilation.native_derived`), or a list of such sets
    (each written in turn), or None."""
    if method not in _SCIPY and method != "Radau":
        return None
    L = model.layout
    own = partition is None or partition.dependent_speeds == model.default_partition.dependent_speeds
    if own and not (L.augmented and L.m >= REDUCED_KKT_MIN):
        native = native_rhs(model, P, R)
    else:
        part = model.default_partition if partition is None else partition
        native = native_partition_rhs(model, P, part.u_ind_index, R)
    for one in (derived if isinstance(derived, (list, tuple)) else
                [] if derived is None else [derived]):
        native = with_derived_inputs(native, one, L.ir)
    return native_solver_for(native, method, implicit=True)


def native_solver_for(native: Any, method: str, implicit: bool = False) -> tuple[type, dict] | None:
    """(solver class, extra constructor arguments) for ``method`` with steps in compiled
    code calling the ready compiled right-hand side ``native`` (an object with the
    addresses ``function`` -- ``int f(plan, t, y, ydot)``, 0 when done -- and ``plan``,
    e.g. :class:`~symbody.compilation.native_rhs.NativeRHS`), or None when ``native`` is
    None or the method cannot run there.  ``implicit``: Radau too (:mod:`.native_radau`; the
    full-coordinate spans keep scipy's Radau)."""
    if native is not None and method == "Radau" and implicit:
        from .native_radau import radau_solver_for  # (the implicit method in C)
        return radau_solver_for(native)
    if native is None or method not in _SCIPY:
        return None
    try:
        library = build_source(RK_SOURCE, "native-rk")
    except (RuntimeError, ImportError, AttributeError):
        return None
    if library is None:
        return None
    return CompiledRungeKutta, {"method": method, "native": native, "library": library}
