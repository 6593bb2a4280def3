"""The simulation's per-step constraint checks in compiled code: the rank measure and the
projection onto the holonomic constraints.

After every step the default constraint mode projects q onto f_h(q, t) = 0 (Newton's
method on the dependent coordinates, :func:`.coordinate_projection.project_arguments`) and
the driver watches the rank of the constraint Jacobians (|R_kk| / |R_11| of the
column-pivoted QR of ∂f_h/∂q and of B, :func:`.linear_algebra.rank_measure`), at the step's
end and at points inside it.  On small models the Python around these (argument vectors,
kernel calls, LAPACK wrappers) costs more than the work.  When the holonomic and velocity
kernels are generated C (``backend="c"``) this module does both in one C call each::

    double symbody_rank(plan *P, double t, const double *q)
        min(|R_kk|/|R_11| of ∂f_h/∂q, of B unless B equals it); 1 without constraints,
        0 for a non-finite entry, -1 when it cannot (more rows than columns: Python's case)
    int symbody_project(plan *P, double t, double *q, const long *dep, long nd, double tol,
                        long max_iter, double *norm)
        damped Newton on q[dep] in place, project_arguments' steps and stopping rules;
        returns 1 converged, 0 not converged, -1 singular (the Python path then raises)
    void symbody_project_many(plan *P, long k, const double *T, double *Q, ...)
        the same for k configurations (the output samples of many steps)

with SciPy's LAPACK (``dgeqp3`` with f2py's default workspace 3 (n + 1), ``dgesv``) through
the function pointers ``scipy.linalg.cython_lapack`` exports, on the same matrices in the
same order: the numbers equal the Python functions' to the last bit (tested).
:func:`native_constraints` returns None for models it cannot take (kernels that are not
C, velocity constraints that read the specified inputs, no C compiler).
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING

import numpy as np

from ..compat.scipy import lapack_function
from .native_rhs import C_MAX_ABS, build_source, c_function_address, data_address

if TYPE_CHECKING:
    from .kernel_layout import CompiledModel

__all__ = ["NativeConstraints", "native_constraints", "CONSTRAINTS_SOURCE"]

CONSTRAINTS_SOURCE = r"""
#include <string.h>
#include <math.h>
""" + C_MAX_ABS + r"""
typedef void (*kernel_fn)(const double *, double *);
typedef void (*geqp3_fn)(int *, int *, double *, int *, int *, double *, double *, int *, int *);
typedef void (*gesv_fn)(int *, int *, double *, int *, int *, double *, int *, int *);
typedef struct {
    kernel_fn holonomic, velocity;
    geqp3_fn geqp3;
    gesv_fn gesv;
    double *z, *hout, *vout, *A, *tau, *work, *rhs, *qdep, *dq;
    int *jpvt, *ipiv;
    long N, M, m, o, zq, sJ, sB, nfev;
} plan;

/* |R_kk| / |R_11| of dgeqp3 on the row-major k x l matrix a (k <= l) */
static double measure(plan *P, const double *a, long k, long l)
{
    long i, j;
    int ik = (int)k, il = (int)l, lda = (int)k, lwork = 3 * ((int)l + 1), info = 0;
    double r11;
    if (k == 0) return 1.0;
    if (k > l) return -1.0;
    for (i = 0; i < k * l; i++)
        if (!isfinite(a[i])) return 0.0;
    for (i = 0; i < k; i++)
        for (j = 0; j < l; j++) P->A[i + j * k] = a[i * l + j];
    for (j = 0; j < l; j++) P->jpvt[j] = 0;
    P->geqp3(&ik, &il, P->A, &lda, P->jpvt, P->tau, P->work, &lwork, &info);
    if (info) return -1.0;
    r11 = fabs(P->A[0]);
    return r11 > 0 ? fabs(P->A[(k - 1) + (k - 1) * k]) / r11 : 0.0;
}

static void at(plan *P, double t, const double *q)
{
    P->z[0] = t;
    memcpy(P->z + P->zq, q, (size_t)P->N * sizeof(double));
}

double symbody_rank(plan *P, double t, const double *q)
{
    double value = 1.0, vb;
    const double *J = NULL, *B;
    long i, same;
    at(P, t, q);
    P->nfev++;
    if (P->M) {
        P->holonomic(P->z, P->hout);
        J = P->hout + P->sJ;
        value = measure(P, J, P->M, P->N);
        if (value < 0) return -1.0;
    }
    if (P->m && value > 0.0) {
        P->velocity(P->z, P->vout);
        B = P->vout + P->sB;
        same = 0;
        if (J != NULL && P->M == P->m && P->N == P->o) {
            same = memcmp(J, B, (size_t)(P->M * P->N) * sizeof(double)) == 0;
            if (!same) {          /* np.array_equal: equal values (-0.0 == 0.0, NaN never) */
                same = 1;
                for (i = 0; i < P->M * P->N; i++)
                    if (!(J[i] == B[i])) { same = 0; break; }
            }
        }
        if (!same) {
            vb = measure(P, B, P->m, P->o);
            if (vb < 0) return -1.0;
            if (vb < value) value = vb;
        }
    }
    return value;
}

int symbody_project(plan *P, double t, double *q, const long *dep, long nd, double tol,
                    long max_iter, double *norm_out)
{
    long M = P->M, N = P->N, i, j, it = 0;
    int n = (int)M, one = 1, info = 0;
    double norm, new_norm = 0.0, scale, *z = P->z + P->zq;
    int converged, small;
    at(P, t, q);
    P->holonomic(P->z, P->hout);
    norm = max_abs(P->hout, M);
    converged = norm == 0.0;
    while (!converged && it < max_iter && norm == norm && norm != INFINITY) {
        it++;
        for (i = 0; i < M; i++) {             /* J[:, dep] column-major, and f */
            for (j = 0; j < nd; j++) P->A[i + j * M] = P->hout[P->sJ + i * N + dep[j]];
            P->rhs[i] = P->hout[i];
        }
        P->gesv(&n, &one, P->A, &n, P->ipiv, P->rhs, &n, &info);
        if (info != 0) { *norm_out = norm; return -1; }
        for (j = 0; j < nd; j++) P->qdep[j] = z[dep[j]];
        small = max_abs(P->rhs, nd) <= tol * (1.0 + max_abs(P->qdep, nd));
        scale = 1.0;
        for (;;) {
            for (j = 0; j < nd; j++) z[dep[j]] = P->qdep[j] - scale * P->rhs[j];
            P->holonomic(P->z, P->hout);
            new_norm = max_abs(P->hout, M);
            if (small || new_norm <= norm || scale < 1e-3) break;
            scale *= 0.5;
        }
        converged = small;
        norm = new_norm;
        if (norm == 0.0) converged = 1;
    }
    memcpy(q, z, (size_t)N * sizeof(double));
    *norm_out = norm;
    return converged;
}

/* symbody_project on the k rows of Q (k x N, in place) at the times T: status and norm of each */
void symbody_project_many(plan *P, long k, const double *T, double *Q, const long *dep, long nd,
                          double tol, long max_iter, int *status, double *norms)
{
    long r;
    for (r = 0; r < k; r++)
        status[r] = symbody_project(P, T[r], Q + r * P->N, dep, nd, tol, max_iter, norms + r);
}
"""


class _Plan(ctypes.Structure):
    _fields_ = [("holonomic", ctypes.c_void_p), ("velocity", ctypes.c_void_p),
                ("geqp3", ctypes.c_void_p), ("gesv", ctypes.c_void_p),
                ("z", ctypes.c_void_p), ("hout", ctypes.c_void_p), ("vout", ctypes.c_void_p),
                ("A", ctypes.c_void_p), ("tau", ctypes.c_void_p), ("work", ctypes.c_void_p),
                ("rhs", ctypes.c_void_p), ("qdep", ctypes.c_void_p), ("dq", ctypes.c_void_p),
                ("jpvt", ctypes.c_void_p), ("ipiv", ctypes.c_void_p),
                ("N", ctypes.c_long), ("M", ctypes.c_long), ("m", ctypes.c_long),
                ("o", ctypes.c_long), ("zq", ctypes.c_long), ("sJ", ctypes.c_long),
                ("sB", ctypes.c_long), ("nfev", ctypes.c_long)]


class NativeConstraints:
    """``symbody_rank`` and ``symbody_project`` bound to one model and its constants (the
    object owns the buffers: one per integration, not to be shared by threads)."""

    def __init__(self, model: CompiledModel, P: np.ndarray, library: ctypes.CDLL,
                 kernels: dict[str, int], routines: dict[str, int]) -> None:
        L = model.layout
        N, M, m, o = L.N, L.M, L.m, L.o
        self.N = N
        self.z = model.arguments(0.0, np.zeros(N), None, P, None, need_r=False)
        widest = max(N, o, 1)
        sizes = {"hout": model.kernels.holonomic.nout if M else 1,
                 "vout": model.kernels.velocity.nout if m else 1,
                 "A": max(M, m, 1) * widest, "tau": widest, "work": 3 * (widest + 1),
                 "rhs": max(M, 1), "qdep": widest, "dq": widest}
        self._buffers = {name: np.zeros(size) for name, size in sizes.items()}
        self._buffers["jpvt"] = np.zeros(widest, dtype=np.intc)
        self._buffers["ipiv"] = np.zeros(max(M, 1), dtype=np.intc)
        addresses = {name: buf.ctypes.data for name, buf in self._buffers.items()}
        self._plan = _Plan(holonomic=kernels["holonomic"] or 0, velocity=kernels["velocity"] or 0,
                           z=self.z.ctypes.data, N=N, M=M, m=m, o=o, zq=L.z_q.start,
                           sJ=L.holonomic_J.start if M else 0, sB=L.velocity_B.start if m else 0,
                           nfev=0, **routines, **addresses)
        self.plan = ctypes.addressof(self._plan)
        self.library = library
        rank = library.symbody_rank
        rank.restype = ctypes.c_double
        rank.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_void_p]
        project = library.symbody_project
        project.restype = ctypes.c_int
        project.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_long, ctypes.c_double, ctypes.c_long, ctypes.c_void_p]
        many = library.symbody_project_many
        many.restype = None
        many.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p,
                         ctypes.c_void_p, ctypes.c_long, ctypes.c_double, ctypes.c_long,
                         ctypes.c_void_p, ctypes.c_void_p]
        self._rank, self._project, self._project_many = rank, project, many
        self._norm = ctypes.c_double(0.0)
        self._dep: dict[tuple, np.ndarray] = {}

    def rank(self, t: float, q: np.ndarray) -> float:
        """The smaller rank measure of ∂f_h/∂q and B at (t, q (N,)) (the value of
        ``DependentSetMonitor.rank``); negative when the compiled code cannot tell."""
        q = np.ascontiguousarray(q, dtype=float)
        return float(self._rank(self.plan, float(t), q.ctypes.data))

    def project(self, t: float, q: np.ndarray, dependent: tuple[int, ...], tol: float,
                max_iter: int) -> tuple[np.ndarray, bool, float] | None:
        """``project_arguments``' Newton's method on q[dependent] at (t, q (N,)): (q, converged,
        max |f_h| before the last step), or None when ∂f_h/∂q_dep is singular (the Python
        path then raises with its message)."""
        dep = self._dep.get(dependent)
        if dep is None:
            dep = self._dep[dependent] = np.ascontiguousarray(dependent, dtype=np.int_)
        out = np.array(q, dtype=float)
        status = self._project(self.plan, float(t), data_address(out), data_address(dep), dep.size,
                               float(tol), int(max_iter), ctypes.addressof(self._norm))
        if status < 0:
            return None
        return out, bool(status), float(self._norm.value)


    def project_many(self, times: np.ndarray, Q: np.ndarray, dependent: tuple[int, ...], tol: float,
                     max_iter: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`project` for the rows of Q (k, N) at ``times`` (k,), one C call: (Q projected,
        status (k,): 1 converged, 0 not, -1 singular (that row unchanged), norms (k,))."""
        dep = self._dep.get(dependent)
        if dep is None:
            dep = self._dep[dependent] = np.ascontiguousarray(dependent, dtype=np.int_)
        out = np.array(Q, dtype=float, order="C")
        times = np.ascontiguousarray(times, dtype=float)
        k = out.shape[0]
        status = np.zeros(k, dtype=np.intc)
        norms = np.zeros(k)
        self._project_many(self.plan, k, times.ctypes.data, out.ctypes.data, dep.ctypes.data,
                           dep.size, float(tol), int(max_iter), status.ctypes.data,
                           norms.ctypes.data)
        singular = status < 0
        out[singular] = Q[singular]
        return out, status, norms


def native_constraints(model: CompiledModel, P: np.ndarray) -> NativeConstraints | None:
    """The rank measure and the coordinate projection of ``model`` with the constants ``P``
    in compiled code, or None when the model cannot have them (see the module docstring)."""
    L, kernels = model.layout, model.kernels
    if L.velocity_constraints_use_specifieds or not (L.M or L.m):
        return None
    addresses = {"holonomic": c_function_address(kernels.holonomic) if L.M else None,
                 "velocity": c_function_address(kernels.velocity) if L.m else None}
    if (L.M and addresses["holonomic"] is None) or (L.m and addresses["velocity"] is None):
        return None
    routines = {"geqp3": lapack_function("dgeqp3"), "gesv": lapack_function("dgesv")}
    if any(address is None for address in routines.values()):
        return None
    try:
        library = build_source(CONSTRAINTS_SOURCE, "native-constraints")
    except RuntimeError:
        return None
    if library is None:
        return None
    return NativeConstraints(model, np.asarray(P, dtype=float), library, addresses, routines)
