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
from .native_rhs import C_MAX_ABS, build_source, c_function_address

if TYPE_CHECKING:
    from .kernel_layout import CompiledModel

__all__ = ["NativeFullRHS", "native_full_rhs", "FULL_RHS_SOURCE"]

FULL_RHS_SOURCE = r"""
#include <string.h>
#include <math.h>
""" + C_MAX_ABS + r"""
typedef void (*kernel_fn)(const double *, double *);
typedef void (*potrf_fn)(char *, int *, double *, int *, int *);
typedef void (*potrs_fn)(char *, int *, int *, double *, int *, double *, int *, int *);
typedef void (*syrk_fn)(char *, char *, int *, int *, double *, double *, int *, double *,
                        double *, int *);
typedef void (*gemv_fn)(char *, int *, int *, double *, double *, int *, double *, int *,
                        double *, double *, int *);
typedef struct {
    kernel_fn main, holonomic, velocity;
    potrf_fn potrf;
    potrs_fn potrs;
    syrk_fn syrk;
    gemv_fn gemv;
    double *z, *main_out, *holonomic_out, *velocity_out;
    double *H, *x, *dx, *lam, *res, *work, *Wq, *F, *c, *A_val, *W_val;
    long *A_row, *A_col, *W_row, *W_col;
    long N, o, m, Mh, K, s_rhs, s_sys, s_B, s_b, max_iter, identity_kinematics;
    double penalty, tol;
    long nfev, iterations, status;
} plan;

/* a matrix's nonzeros (row, column, value), row by row; X(i, j) = X[i * rs + j * cs] */
static long nonzeros(const double *X, long rows, long cols, long rs, long cs, long *r, long *c,
                     double *v)
{
    long i, j, n = 0;
    for (i = 0; i < rows; i++)
        for (j = 0; j < cols; j++) {
            double a = X[i * rs + j * cs];
            if (a != 0.0) { r[n] = i; c[n] = j; v[n] = a; n++; }   /* (NaN kept) */
        }
    return n;
}

/* augmented_solve: x (n) minimizing x'Wx/2 - F'x subject to A x = c, multipliers in lam (m).
   W: n x n column-major, leading dimension ldw.  A (m x n): column-major with leading
   dimension lda (a_rows = 0), or row by row with row length lda (a_rows = 1: the
   column-major n x m matrix A^T).  The products with A and W go through their nonzeros
   when those are fewer than a third of the entries (constraint Jacobians, diagonal mass
   matrices), through BLAS otherwise.  0: done; 1: H not positive definite; 2: dpotrs
   failed; 3: a non-finite scale. */
static int aug_solve(plan *P, int n, int m, const double *W, int ldw, const double *A, int lda,
                     int a_rows, const double *F, const double *c, double tol, long max_iter,
                     double *x)
{
    int one = 1, info = 0, i, j, it, an = n, am = m;
    long k, nA, nW;
    double *H = P->H, *dx = P->dx, *lam = P->lam, *res = P->res, *work = P->work;
    long *Ar = P->A_row, *Ac = P->A_col, *Wr = P->W_row, *Wc = P->W_col;
    double *Av = P->A_val, *Wv = P->W_val;
    double w = 0.0, a2 = 0.0, alpha, a_norm, c_max, err, step, size, last = INFINITY;
    double d_one = 1.0, d_minus = -1.0;
    char lower = 'L', trans = 'T', notrans = 'N';
    /* BLAS views of A: A^T v by gemv(tA) and A x by gemv(nAop) on the stored matrix */
    char *tA = a_rows ? &notrans : &trans, *nAop = a_rows ? &trans : &notrans;
    int *rows = a_rows ? &an : &am, *cols = a_rows ? &am : &an;
    int sparse_A, sparse_W;
    for (j = 0; j < n; j++) {
        double d = fabs(W[j + (long)j * ldw]);
        if (d > w) w = d;
        else if (d != d) return 3;
    }
    for (j = 0; j < n; j++) {
        double s = 0.0;
        for (i = 0; i < m; i++) {
            double a = a_rows ? A[(long)i * lda + j] : A[i + (long)j * lda];
            s += a * a;
        }
        if (s > a2) a2 = s;
        else if (s != s) return 3;
    }
    nA = nonzeros(A, m, n, a_rows ? lda : 1, a_rows ? 1 : lda, Ar, Ac, Av);
    nW = nonzeros(W, n, n, 1, ldw, Wr, Wc, Wv);
    sparse_A = 3 * nA < (long)m * n;
    sparse_W = 3 * nW < (long)n * n;
    alpha = P->penalty * (w > 0.0 ? w : 1.0) / (a2 > 0.0 ? a2 : 1.0);
    /* H = W + alpha A^T A (lower triangle) */
    if (sparse_A) {
        long r0, r1;
        for (j = 0; j < n; j++)
            for (i = j; i < n; i++) H[i + (long)j * n] = 0.0;
        for (r0 = 0; r0 < nA; r0 = r1) {               /* A^T A = sum over rows of a a^T */
            long e1, e2;
            for (r1 = r0; r1 < nA && Ar[r1] == Ar[r0]; r1++) ;
            for (e1 = r0; e1 < r1; e1++)
                for (e2 = r0; e2 < r1; e2++)
                    if (Ac[e1] >= Ac[e2]) H[Ac[e1] + Ac[e2] * n] += Av[e1] * Av[e2];
        }
        for (j = 0; j < n; j++)
            for (i = j; i < n; i++)
                H[i + (long)j * n] = W[i + (long)j * ldw] + alpha * H[i + (long)j * n];
    } else {
        for (j = 0; j < n; j++)
            for (i = j; i < n; i++) H[i + (long)j * n] = W[i + (long)j * ldw];
        P->syrk(&lower, a_rows ? &notrans : &trans, &an, &am, &alpha, (double *)A, &lda,
                &d_one, H, &an);
    }
    P->potrf(&lower, &an, H, &an, &info);
    if (info) return 1;
    a_norm = sqrt(a2);
    c_max = max_abs(c, m);
    /* x = H^-1 (F + A^T (lambda + alpha c)), lambda = 0 */
    for (i = 0; i < m; i++) { lam[i] = 0.0; work[i] = alpha * c[i]; }
    memcpy(x, F, (size_t)n * sizeof(double));
#define AT_WORK_INTO(y) \
    if (sparse_A) { for (k = 0; k < nA; k++) (y)[Ac[k]] += Av[k] * work[Ar[k]]; } \
    else P->gemv(tA, rows, cols, &d_one, (double *)A, &lda, work, &one, &d_one, (y), &one);
#define RESIDUAL() \
    memcpy(res, c, (size_t)m * sizeof(double)); \
    if (sparse_A) { for (k = 0; k < nA; k++) res[Ar[k]] -= Av[k] * x[Ac[k]]; } \
    else P->gemv(nAop, rows, cols, &d_minus, (double *)A, &lda, x, &one, &d_one, res, &one);
    AT_WORK_INTO(x)
    P->potrs(&lower, &an, &one, H, &an, x, &an, &info);
    if (info) return 2;
    RESIDUAL()
    for (i = 0; i < m; i++) lam[i] += alpha * res[i];
    err = max_abs(res, m);
    for (it = 0; it < max_iter; it++) {
        /* dx = H^-1 [F - W x + A^T (lambda + alpha r)] */
        for (i = 0; i < m; i++) work[i] = lam[i] + alpha * res[i];
        memcpy(dx, F, (size_t)n * sizeof(double));
        if (sparse_W) { for (k = 0; k < nW; k++) dx[Wr[k]] -= Wv[k] * x[Wc[k]]; }
        else P->gemv(&notrans, &an, &an, &d_minus, (double *)W, &ldw, x, &one, &d_one, dx, &one);
        AT_WORK_INTO(dx)
        P->potrs(&lower, &an, &one, H, &an, dx, &an, &info);
        if (info) return 2;
        for (i = 0; i < n; i++) x[i] += dx[i];
        RESIDUAL()
        for (i = 0; i < m; i++) lam[i] += alpha * res[i];
        err = max_abs(res, m);
        step = max_abs(dx, n);
        size = max_abs(x, n) + 1e-300;
        P->iterations++;
        if (step <= tol * size && err <= tol * (c_max + a_norm * size)) break;
        if (step >= last) break;        /* no more progress */
        last = step;
    }
#undef AT_WORK_INTO
#undef RESIDUAL
    return 0;
}

/* y' = [q', u'] at (t, y = [q, u]) */
int symbody_full_rhs(plan *P, double t, const double *y, double *ydot)
{
    int status;
    long N = P->N, o = P->o;
    double *out = P->main_out, *W = out + P->s_sys, *F = out + P->s_rhs;
    P->nfev++;
    P->z[0] = t;
    memcpy(P->z + 1, y, (size_t)(N + o) * sizeof(double));
    P->main(P->z, out);
    /* M_d: rows 0..o-1 of the system (leading dimension K); B_a: rows o..K-1; F, c */
    status = aug_solve(P, (int)o, (int)P->m, W, (int)P->K, W + o, (int)P->K, 0, F, F + o,
                       P->tol, P->max_iter, P->x);
    if (status) return status;
    memcpy(ydot, out, (size_t)N * sizeof(double));
    memcpy(ydot + N, P->x, (size_t)o * sizeof(double));
    return 0;
}

/* FullCoordinates.project: q onto f_h = 0 (metric M_d when q' = u, else the identity times
   the mean of diag M_d), then u onto B u + b = 0 (metric M_d), both by aug_solve; 5: the
   positions did not converge */
int symbody_full_project(plan *P, double t, const double *y, double *y_out, double tol,
                         long max_iter)
{
    long N = P->N, o = P->o, m = P->m, Mh = P->Mh, K = P->K, i, j, it;
    int status, ione = 1;
    double *z = P->z, *q = P->z + 1, *u = P->z + 1 + N, *W = P->main_out + P->s_sys;
    double *F = P->F, *c = P->c, *Wq = P->Wq;
    double d_one = 1.0, d_zero = 0.0;
    char notrans = 'N';
    z[0] = t;
    memcpy(z + 1, y, (size_t)(N + o) * sizeof(double));
    P->main(z, P->main_out);
    if (Mh) {
        double scale = 1.0 + max_abs(q, N), norm = INFINITY;
        if (P->identity_kinematics) {
            for (j = 0; j < N; j++)
                for (i = 0; i < N; i++) Wq[i + j * N] = W[i + j * K];
        } else {
            double mean = 0.0;
            for (i = 0; i < o; i++) mean += W[i + i * K];
            mean /= (double)o;
            for (i = 0; i < N * N; i++) Wq[i] = 0.0;
            for (i = 0; i < N; i++) Wq[i + i * N] = mean;
        }
        for (i = 0; i < N; i++) F[i] = 0.0;
        for (it = 0; it < max_iter; it++) {
            double *f = P->holonomic_out, *J = P->holonomic_out + Mh;
            P->holonomic(z, P->holonomic_out);
            norm = max_abs(f, Mh);
            if (norm <= tol * scale) break;
            for (i = 0; i < Mh; i++) c[i] = -f[i];
            status = aug_solve(P, (int)N, (int)Mh, Wq, (int)N, J, (int)N, 1, F, c, 1e-13, 40,
                               P->x);
            if (status) return status;
            for (i = 0; i < N; i++) q[i] += P->x[i];
            if (max_abs(P->x, N) <= 1e-15 * scale) break;
        }
        if (!(norm <= 1e-9 * scale)) return 5;
        P->main(z, P->main_out);           /* the mass matrix at the projected q */
    }
    P->velocity(z, P->velocity_out);
    {
        int io = (int)o, iK = (int)K;
        double *B = P->velocity_out + P->s_B, *b = P->velocity_out + P->s_b;
        for (i = 0; i < m; i++) c[i] = -b[i];
        P->gemv(&notrans, &io, &io, &d_one, W, &iK, u, &ione, &d_zero, F, &ione);   /* M u */
        status = aug_solve(P, io, (int)m, W, iK, B, io, 1, F, c, 1e-13, 40, P->x);
        if (status) return status;
    }
    memcpy(y_out, q, (size_t)N * sizeof(double));
    memcpy(y_out + N, P->x, (size_t)o * sizeof(double));
    return 0;
}
"""


class _Plan(ctypes.Structure):
    _fields_ = ([(name, ctypes.c_void_p) for name in
                 ("main", "holonomic", "velocity", "potrf", "potrs", "syrk", "gemv",
                  "z", "main_out", "holonomic_out", "velocity_out",
                  "H", "x", "dx", "lam", "res", "work", "Wq", "F", "c", "A_val", "W_val",
                  "A_row", "A_col", "W_row", "W_col")]
                + [(name, ctypes.c_long) for name in
                   ("N", "o", "m", "Mh", "K", "s_rhs", "s_sys", "s_B", "s_b", "max_iter",
                    "identity_kinematics")]
                + [("penalty", ctypes.c_double), ("tol", ctypes.c_double)]
                + [(name, ctypes.c_long) for name in ("nfev", "iterations", "status")])


class NativeFullRHS:
    """``symbody_full_rhs`` bound to one model, its constants and constant inputs:
    ``function`` and ``plan`` are the addresses a compiled integrator calls
    (``function(plan, t, y, ydot)`` with y = [q (N), u (o)]); the object owns the buffers
    (one per integration: not to be shared by threads).  ``penalty``, ``tol`` and
    ``max_iter`` are those of ``augmented_solve``.  ``kernels``: the addresses of the C
    kernels "main", "holonomic" and "velocity" (the last two for :meth:`project` only,
    None when not C)."""

    def __init__(self, model: CompiledModel, P: np.ndarray, library: ctypes.CDLL,
                 kernels: dict[str, int | None], routines: dict[str, int],
                 R: np.ndarray | None = None, *, penalty: float, tol: float = 1e-13,
                 max_iter: int = 40) -> None:
        L = model.layout
        N, o, m, Mh = L.N, L.o, L.m, L.M
        self.z = np.zeros(L.nz)
        self.z[L.z_constants] = P
        if R is not None:                  # constant specified inputs
            self.z[L.z_r] = R
        n, k = max(N, o), max(m, Mh, 1)
        outputs = {"main_out": model.kernels.main.nout,
                   "holonomic_out": model.kernels.holonomic.nout if Mh else 1,
                   "velocity_out": model.kernels.velocity.nout}
        sizes = {**outputs, "H": n * n, "x": n, "dx": n, "lam": k, "res": k, "work": k,
                 "Wq": N * N, "F": n, "c": k, "A_val": n * k, "W_val": n * n}
        self._buffers = {name: np.zeros(size) for name, size in sizes.items()}
        self._buffers.update({name: np.zeros(size, dtype=np.int_) for name, size in
                              (("A_row", n * k), ("A_col", n * k), ("W_row", n * n),
                               ("W_col", n * n))})
        self.main_out = self._buffers["main_out"]
        addresses = {name: buf.ctypes.data for name, buf in self._buffers.items()}
        self.can_project = kernels["velocity"] is not None and \
            (not Mh or kernels["holonomic"] is not None)
        plan = _Plan(main=kernels["main"], holonomic=kernels["holonomic"] or 0,
                     velocity=kernels["velocity"] or 0, z=self.z.ctypes.data,
                     N=N, o=o, m=m, Mh=Mh, K=L.K, s_rhs=L.main_rhs.start,
                     s_sys=L.main_system.start, s_B=L.velocity_B.start, s_b=L.velocity_b.start,
                     max_iter=int(max_iter), identity_kinematics=0, penalty=float(penalty),
                     tol=float(tol), nfev=0, iterations=0, status=0, **routines, **addresses)
        self._plan = plan
        self.plan = ctypes.addressof(plan)
        self.library = library
        fn = library.symbody_full_rhs
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p]
        self.function = ctypes.cast(fn, ctypes.c_void_p).value
        self._call = fn
        project = library.symbody_full_project
        project.restype = ctypes.c_int
        project.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_double, ctypes.c_long]
        self._project = project
        self.ny = N + o

    @property
    def nfev(self) -> int:
        """Evaluations made through this plan so far."""
        return int(self._plan.nfev)

    @property
    def iterations(self) -> int:
        """Augmented Lagrangian iterations (after each first solve) made so far, by the
        evaluations and the projections."""
        return int(self._plan.iterations)

    @property
    def multipliers(self) -> np.ndarray:
        """λ (m,) of the last solve, when it was an evaluation (one λ where B_a loses rank;
        after :meth:`project`, the velocity projection's multipliers)."""
        return self._buffers["lam"][:self._plan.m].copy()

    def _state(self, y: np.ndarray) -> np.ndarray:
        y = np.ascontiguousarray(y, dtype=float)
        if y.shape != (self.ny,):
            raise ValueError(f"y must have {self.ny} values, got shape {y.shape}")
        return y

    def __call__(self, t: float, y: np.ndarray) -> tuple[np.ndarray, int]:
        """(y' (N + o,), status) at (t, y) (status 0: done; otherwise y' is not valid)."""
        y = self._state(y)
        ydot = np.empty(self.ny)
        status = self._call(self.plan, float(t), y.ctypes.data, ydot.ctypes.data)
        return ydot, int(status)

    def project(self, t: float, y: np.ndarray, identity_kinematics: bool, tol: float = 1e-12,
                max_iter: int = 30) -> tuple[np.ndarray, int]:
        """(y projected, status): ``FullCoordinates.project``'s mass-orthogonal projections
        of q onto f_h = 0 (``max_iter`` Newton-type steps to |f_h| <= tol (1 + |q|); metric
        M_d when ``identity_kinematics`` (q' = u), else the identity times mean(diag M_d))
        and of u onto B u + b = 0 (metric M_d).  Status 0: done; 5: the positions did not
        reach 1e-9 (1 + |q|); 1-3: a factorization failed; -1: not available (kernels not C).
        Otherwise the result is not valid."""
        if not self.can_project:
            return y, -1
        y = self._state(y)
        out = np.empty(self.ny)
        self._plan.identity_kinematics = int(bool(identity_kinematics))
        status = self._project(self.plan, float(t), y.ctypes.data, out.ctypes.data, float(tol),
                               int(max_iter))
        return out, int(status)


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
    addresses = {"main": main, "velocity": c_function_address(kernels.velocity),
                 "holonomic": c_function_address(kernels.holonomic) if L.M else None}
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
    return NativeFullRHS(model, np.asarray(P, dtype=float), library, addresses, routines, R,
                         penalty=penalty, tol=tol, max_iter=max_iter)
