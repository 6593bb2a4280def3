"""The full-coordinate right-hand side as one C function (through singular configurations).

Where the constraint Jacobian loses rank the simulation integrates all coordinates and
all speeds, y = [q (N), u (o)], with u' from the augmented Lagrangian iteration on the
unreduced equations ``M_d u' = F + B_aᵀ λ``, ``B_a u' = c`` (F = -g_d, c = -b_a;
``symbody.analysis.simulation.augmented``).  When the main kernel is generated C
(``backend="c"``), this module does that evaluation without Python: a small fixed C
routine (compiled once per machine and kept in the kernel cache) fills the argument
vector z with (t, q, u, constant inputs, constants), calls the main kernel, reads
M_d (o, o), F (o), B_a (m, o) and c (m) in place from its output (the system block is
stored column by column: M_d is its leading o x o block and B_a the rows below it, both
with leading dimension K = o + m) and runs ``augmented_solve``'s iteration::

    α = PENALTY max|diag M_d| / max_j |B_a[:, j]|²,   H = M_d + α B_aᵀ B_a = L Lᵀ
    x_0 = H⁻¹ (F + α B_aᵀ c),  r_0 = c - B_a x_0,  λ_0 = α r_0
    x_{k+1} = x_k + H⁻¹ [F - M_d x_k + B_aᵀ (λ_k + α r_k)],  r_{k+1} = c - B_a x_{k+1},
    λ_{k+1} = λ_k + α r_{k+1}

with the same stopping rules (correction below tol |x| and residual below
tol (|c| + |B_a| |x|), or no more decrease of the correction, or ``max_iter``), BLAS
``dsyrk`` / ``dgemv`` and LAPACK ``dpotrf`` / ``dpotrs`` from SciPy (the function pointers
``scipy.linalg.cython_blas`` / ``cython_lapack`` export), and writes y' = [q', u']::

    int symbody_full_rhs(plan *P, double t, const double *y, double *ydot)   (0: done)

So the numbers are those of ``FullCoordinates.rhs`` to round-off.  A nonzero return (H
not positive definite, a non-finite scale) leaves the evaluation to the Python path,
which factors H by LU instead.  :func:`native_full_rhs` returns None for models it cannot
take (LLVM or numpy kernels, no velocity constraints or a reduced dynamic block, extra
states, specified inputs that are not constant, no C compiler).
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING

import numpy as np

from ..compat.scipy import blas_function, lapack_function
from .native_rhs import build_source, c_function_address

if TYPE_CHECKING:
    from .kernel_layout import CompiledModel

__all__ = ["NativeFullRHS", "native_full_rhs", "FULL_RHS_SOURCE"]

FULL_RHS_SOURCE = r"""
#include <string.h>
#include <math.h>
typedef void (*kernel_fn)(const double *, double *);
typedef void (*potrf_fn)(char *, int *, double *, int *, int *);
typedef void (*potrs_fn)(char *, int *, int *, double *, int *, double *, int *, int *);
typedef void (*syrk_fn)(char *, char *, int *, int *, double *, double *, int *, double *,
                        double *, int *);
typedef void (*gemv_fn)(char *, int *, int *, double *, double *, int *, double *, int *,
                        double *, double *, int *);
typedef struct {
    kernel_fn main;
    potrf_fn potrf;
    potrs_fn potrs;
    syrk_fn syrk;
    gemv_fn gemv;
    double *z, *main_out, *H, *x, *dx, *lam, *res, *work;
    long N, o, m, K, s_rhs, s_sys, max_iter;
    double penalty, tol;
    long nfev, iterations, status;
} plan;

static double max_abs(const double *v, long n)
{
    double mx = 0.0;
    long i;
    for (i = 0; i < n; i++) {
        double a = fabs(v[i]);
        if (a > mx || a != a) mx = a;     /* NaN propagates as in numpy's max */
        if (mx != mx) return mx;
    }
    return mx;
}

int symbody_full_rhs(plan *P, double t, const double *y, double *ydot)
{
    int o = (int)P->o, m = (int)P->m, K = (int)P->K, one = 1, info = 0, it;
    long i, j, N = P->N;
    double *out = P->main_out, *H = P->H, *x = P->x, *dx = P->dx, *lam = P->lam;
    double *res = P->res, *work = P->work;
    double *W, *A, *F, *c;
    double w = 0.0, a2 = 0.0, alpha, a_norm, c_max, err, step, size, last = INFINITY;
    double d_one = 1.0, d_minus = -1.0;
    char lower = 'L', trans = 'T', notrans = 'N';
    P->nfev++;
    P->z[0] = t;
    memcpy(P->z + 1, y, (size_t)(N + o) * sizeof(double));
    P->main(P->z, out);
    W = out + P->s_sys;            /* M_d: rows 0..o-1 of the system, leading dimension K */
    A = W + o;                     /* B_a: rows o..K-1 */
    F = out + P->s_rhs;
    c = F + o;
    for (j = 0; j < o; j++) {
        double d = fabs(W[j + j * K]);
        if (d > w) w = d;
        else if (d != d) return 3;
    }
    for (j = 0; j < o; j++) {
        double s = 0.0;
        for (i = 0; i < m; i++) s += A[i + j * K] * A[i + j * K];
        if (s > a2) a2 = s;
        else if (s != s) return 3;
    }
    alpha = P->penalty * (w > 0.0 ? w : 1.0) / (a2 > 0.0 ? a2 : 1.0);
    /* H = M_d + alpha B_a^T B_a (lower triangle) */
    for (j = 0; j < o; j++)
        for (i = j; i < o; i++) H[i + j * o] = W[i + j * K];
    P->syrk(&lower, &trans, &o, &m, &alpha, A, &K, &d_one, H, &o);
    P->potrf(&lower, &o, H, &o, &info);
    if (info) return 1;
    a_norm = sqrt(a2);
    c_max = max_abs(c, m);
    /* x = H^-1 (F + B_a^T (lambda + alpha c)), lambda = 0 */
    for (i = 0; i < m; i++) { lam[i] = 0.0; work[i] = alpha * c[i]; }
    memcpy(x, F, (size_t)o * sizeof(double));
    P->gemv(&trans, &m, &o, &d_one, A, &K, work, &one, &d_one, x, &one);
    P->potrs(&lower, &o, &one, H, &o, x, &o, &info);
    if (info) return 2;
    memcpy(res, c, (size_t)m * sizeof(double));
    P->gemv(&notrans, &m, &o, &d_minus, A, &K, x, &one, &d_one, res, &one);
    for (i = 0; i < m; i++) lam[i] += alpha * res[i];
    err = max_abs(res, m);
    for (it = 0; it < P->max_iter; it++) {
        /* dx = H^-1 [F - M_d x + B_a^T (lambda + alpha r)] */
        for (i = 0; i < m; i++) work[i] = lam[i] + alpha * res[i];
        memcpy(dx, F, (size_t)o * sizeof(double));
        P->gemv(&notrans, &o, &o, &d_minus, W, &K, x, &one, &d_one, dx, &one);
        P->gemv(&trans, &m, &o, &d_one, A, &K, work, &one, &d_one, dx, &one);
        P->potrs(&lower, &o, &one, H, &o, dx, &o, &info);
        if (info) return 2;
        for (i = 0; i < o; i++) x[i] += dx[i];
        memcpy(res, c, (size_t)m * sizeof(double));
        P->gemv(&notrans, &m, &o, &d_minus, A, &K, x, &one, &d_one, res, &one);
        for (i = 0; i < m; i++) lam[i] += alpha * res[i];
        err = max_abs(res, m);
        step = max_abs(dx, o);
        size = max_abs(x, o) + 1e-300;
        P->iterations++;
        if (step <= P->tol * size && err <= P->tol * (c_max + a_norm * size)) break;
        if (step >= last) break;        /* no more progress */
        last = step;
    }
    memcpy(ydot, out, (size_t)N * sizeof(double));
    memcpy(ydot + N, x, (size_t)o * sizeof(double));
    return 0;
}
"""


class _Plan(ctypes.Structure):
    _fields_ = [("main", ctypes.c_void_p), ("potrf", ctypes.c_void_p),
                ("potrs", ctypes.c_void_p), ("syrk", ctypes.c_void_p),
                ("gemv", ctypes.c_void_p),
                ("z", ctypes.c_void_p), ("main_out", ctypes.c_void_p), ("H", ctypes.c_void_p),
                ("x", ctypes.c_void_p), ("dx", ctypes.c_void_p), ("lam", ctypes.c_void_p),
                ("res", ctypes.c_void_p), ("work", ctypes.c_void_p),
                ("N", ctypes.c_long), ("o", ctypes.c_long), ("m", ctypes.c_long),
                ("K", ctypes.c_long), ("s_rhs", ctypes.c_long), ("s_sys", ctypes.c_long),
                ("max_iter", ctypes.c_long),
                ("penalty", ctypes.c_double), ("tol", ctypes.c_double),
                ("nfev", ctypes.c_long), ("iterations", ctypes.c_long),
                ("status", ctypes.c_long)]


class NativeFullRHS:
    """``symbody_full_rhs`` bound to one model, its constants and constant inputs:
    ``function`` and ``plan`` are the addresses a compiled integrator calls
    (``function(plan, t, y, ydot)`` with y = [q (N), u (o)]); the object owns the buffers
    (one per integration: not to be shared by threads).  ``penalty``, ``tol`` and
    ``max_iter`` are those of ``augmented_solve``."""

    def __init__(self, model: CompiledModel, P: np.ndarray, library: ctypes.CDLL, main: int,
                 routines: dict[str, int], R: np.ndarray | None = None, *,
                 penalty: float, tol: float = 1e-13, max_iter: int = 40) -> None:
        L, kernels = model.layout, model.kernels
        o, m = L.o, L.m
        self.z = np.zeros(L.nz)
        self.z[L.z_constants] = P
        if R is not None:                  # constant specified inputs
            self.z[L.z_r] = R
        self.main_out = np.empty(kernels.main.nout)
        self._buffers = {name: np.zeros(size) for name, size in
                         (("H", o * o), ("x", o), ("dx", o), ("lam", m), ("res", m), ("work", m))}
        addresses = {name: buf.ctypes.data for name, buf in self._buffers.items()}
        plan = _Plan(main=main, z=self.z.ctypes.data, main_out=self.main_out.ctypes.data,
                     N=L.N, o=o, m=m, K=L.K, s_rhs=L.main_rhs.start, s_sys=L.main_system.start,
                     max_iter=int(max_iter), penalty=float(penalty), tol=float(tol),
                     nfev=0, iterations=0, status=0, **routines, **addresses)
        self._plan = plan
        self.plan = ctypes.addressof(plan)
        self.library = library
        fn = library.symbody_full_rhs
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p]
        self.function = ctypes.cast(fn, ctypes.c_void_p).value
        self._call = fn
        self.ny = L.N + o

    @property
    def nfev(self) -> int:
        """Evaluations made through this plan so far."""
        return int(self._plan.nfev)

    @property
    def iterations(self) -> int:
        """Augmented Lagrangian iterations (after the first solve) made so far."""
        return int(self._plan.iterations)

    @property
    def multipliers(self) -> np.ndarray:
        """λ (m,) of the last completed evaluation (one of them where B_a loses rank)."""
        return self._buffers["lam"].copy()

    def __call__(self, t: float, y: np.ndarray) -> tuple[np.ndarray, int]:
        """(y' (N + o,), status) at (t, y) (status 0: done; otherwise y' is not valid)."""
        y = np.ascontiguousarray(y, dtype=float)
        if y.shape != (self.ny,):
            raise ValueError(f"y must have {self.ny} values, got shape {y.shape}")
        ydot = np.empty(self.ny)
        status = self._call(self.plan, float(t), y.ctypes.data, ydot.ctypes.data)
        return ydot, int(status)


def native_full_rhs(model: CompiledModel, P: np.ndarray, R: np.ndarray | None = None, *,
                    penalty: float, tol: float = 1e-13,
                    max_iter: int = 40) -> NativeFullRHS | None:
    """The full-coordinate right-hand side y' = [q', u'] in compiled code with the constants
    ``P`` (c,) and the values ``R`` (s,) of constant specified inputs bound, and the
    iteration's ``penalty``, ``tol`` and ``max_iter``; None when the model needs Python on
    that path (see the module docstring)."""
    L, kernels = model.layout, model.kernels
    if L.e or not L.augmented or not L.m:
        return None
    if L.s and (R is None or np.shape(R) != (L.s,)):
        return None
    main = c_function_address(kernels.main)
    if main is None:
        return None
    routines = {"potrf": lapack_function("dpotrf"), "potrs": lapack_function("dpotrs"),
                "syrk": blas_function("dsyrk"), "gemv": blas_function("dgemv")}
    if any(address is None for address in routines.values()):
        return None
    try:
        library = build_source(FULL_RHS_SOURCE, "native-full-rhs")
    except RuntimeError:
        return None
    if library is None:
        return None
    return NativeFullRHS(model, np.asarray(P, dtype=float), library, main, routines, R,
                         penalty=penalty, tol=tol, max_iter=max_iter)
