"""Kane's minimal-form right-hand side in any dependent set, as one C function.

A model with an unreduced dynamic block (``augmented``) may integrate in another set of
dependent speeds than its own (the simulation switches the set where the model's own one
becomes singular): the state is then x = [q (N), u[ind] (p)] and, as in
``NumericModel.rhs(..., partition=...)``:

1. the dependent speeds from the velocity constraints, ``B[:, dep] u_dep = -(B[:, ind]
   u_ind + b)`` (B (m, o) row by row and b from the velocity kernel; LAPACK dgesv);
2. the main kernel, then u'[ind] from the augmented system ``S [u'; λ] = s``: for many
   constraint rows (m >= ``REDUCED_KKT_MIN``, as ``rhs_at`` does) by the null space of
   B_a (:func:`~.linear_algebra.reduced_kkt_solve`: one LU of B_a[:, dep] (dgetrf/dgetrs;
   the LU of step 1 when B_a[:, dep] equals B[:, dep], as for constraints differentiated once),
   ``C = [I; -B_dep⁻¹ B_ind]``, ``w[dep] = B_dep⁻¹ c``, ``(Cᵀ M C) a = Cᵀ (F - M w)``),
   otherwise by dgesv of the whole (o + m)² system;

and x' = [q', u'[ind]]::

    int symbody_partition_rhs(plan *P, double t, const double *x, double *xdot)   (0: done)

The same numbers as the Python path to round-off (the same factorizations; sums in
another order).  A nonzero return (a singular B_dep, B_a[:, dep], Cᵀ M C or S) leaves the
evaluation to the Python path.  :func:`native_partition_rhs` returns None for the models
it cannot take (a reduced dynamic block, LLVM or numpy kernels, extra states, specified
inputs that are not constant, no C compiler).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..compat.scipy import lapack_function
from .linear_algebra import REDUCED_KKT_MIN
from .native_rhs import build_source, c_function_address

if TYPE_CHECKING:
    from .kernel_layout import CompiledModel

__all__ = ["NativePartitionRHS", "native_partition_rhs", "PARTITION_RHS_SOURCE"]

PARTITION_RHS_SOURCE = r"""
#include <string.h>
#include <math.h>
typedef void (*kernel_fn)(const double *, double *);
typedef void (*gesv_fn)(int *, int *, double *, int *, int *, double *, int *, int *);
typedef void (*getrf_fn)(int *, int *, double *, int *, int *, int *);
typedef void (*getrs_fn)(char *, int *, int *, double *, int *, int *, double *, int *, int *);
typedef struct {
    kernel_fn main, velocity;
    gesv_fn gesv;
    getrf_fn getrf;
    getrs_fn getrs;
    double *z, *main_out, *velocity_out, *G, *R, *C, *MC, *w, *g, *Mr;
    int *pivots;
    const long *ind, *dep;
    long N, o, p, m, K, iu, s_rhs, s_sys, s_B, s_b, reduced;
    long nfev, lu_reused;
} plan;

int symbody_partition_rhs(plan *P, double t, const double *x, double *xdot)
{
    long N = P->N, o = P->o, p = P->p, m = P->m, K = P->K, i, j, k;
    int im = (int)m, ip1 = (int)p + 1, one = 1, info = 0;
    double *z = P->z, *u = P->z + P->iu, *out = P->main_out, *G = P->G, *R = P->R;
    const long *ind = P->ind, *dep = P->dep;
    P->nfev++;
    z[0] = t;
    memcpy(z + 1, x, (size_t)N * sizeof(double));
    for (k = 0; k < p; k++) u[ind[k]] = x[N + k];
    /* dependent speeds: B[:, dep] u_dep = -(B[:, ind] u_ind + b) */
    {
        const double *B = P->velocity_out + P->s_B, *b = P->velocity_out + P->s_b;
        P->velocity(z, P->velocity_out);
        for (i = 0; i < m; i++) {
            double acc = b[i];
            for (k = 0; k < p; k++) acc += B[i * o + ind[k]] * x[N + k];
            R[i] = -acc;
            for (k = 0; k < m; k++) G[i + k * m] = B[i * o + dep[k]];
        }
        P->gesv(&im, &one, G, &im, P->pivots, R, &im, &info);
        if (info) return 1;
        for (k = 0; k < m; k++) u[dep[k]] = R[k];
    }
    P->main(z, out);
    memcpy(xdot, out, (size_t)N * sizeof(double));
    if (P->reduced) {
        /* u'[ind] by the null space of B_a (reduced_kkt_solve) */
        const double *S = out + P->s_sys, *s = out + P->s_rhs, *Ba = S + o;
        double *C = P->C, *MC = P->MC, *w = P->w, *g = P->g, *Mr = P->Mr;
        const double *B = P->velocity_out + P->s_B;
        char notrans = 'N';
        int same = 1;
        /* B_a[:, dep] is B[:, dep] when the acceleration constraints are the derivative of
           the velocity constraints: then G and the pivots already hold its LU (dgesv's is
           dgetrf's), otherwise factor it */
        for (k = 0; k < m && same; k++)
            for (i = 0; i < m; i++)
                if (Ba[i + dep[k] * K] != B[i * o + dep[k]]) { same = 0; break; }
        for (k = 0; k < p; k++)
            for (i = 0; i < m; i++) R[i + k * m] = Ba[i + ind[k] * K];
        for (i = 0; i < m; i++) R[i + p * m] = s[o + i];
        if (!same) {
            for (k = 0; k < m; k++)
                for (i = 0; i < m; i++) G[i + k * m] = Ba[i + dep[k] * K];
            P->getrf(&im, &im, G, &im, P->pivots, &info);
            if (info) return 2;
        }
        P->lu_reused += same;
        P->getrs(&notrans, &im, &ip1, G, &im, P->pivots, R, &im, &info);
        if (info) return 2;
        /* C (o x p): C[ind] = I, C[dep] = -X;  w: w[ind] = 0, w[dep] = X[:, p] */
        memset(C, 0, (size_t)(o * p) * sizeof(double));
        memset(w, 0, (size_t)o * sizeof(double));
        for (k = 0; k < p; k++) {
            C[ind[k] + k * o] = 1.0;
            for (i = 0; i < m; i++) C[dep[i] + k * o] = -R[i + k * m];
        }
        for (i = 0; i < m; i++) w[dep[i]] = R[i + p * m];
        /* MC = M C (o x p), g = C^T (F - M w), Mr = C^T MC (p x p); M = S[:o, :o] */
        for (k = 0; k < p; k++)
            for (i = 0; i < o; i++) MC[i + k * o] = 0.0;
        for (i = 0; i < o; i++) g[p + i] = s[i];      /* (g[p..p+o): F - M w) */
        for (j = 0; j < o; j++) {
            const double *Mj = S + j * K;             /* column j of M */
            double wj = w[j];
            for (k = 0; k < p; k++) {
                double cjk = C[j + k * o];
                if (cjk != 0.0)
                    for (i = 0; i < o; i++) MC[i + k * o] += Mj[i] * cjk;
            }
            if (wj != 0.0)
                for (i = 0; i < o; i++) g[p + i] -= Mj[i] * wj;
        }
        for (k = 0; k < p; k++) {
            double acc = 0.0;
            for (i = 0; i < o; i++) acc += C[i + k * o] * g[p + i];
            g[k] = acc;
            for (j = 0; j < p; j++) {
                double a = 0.0;
                for (i = 0; i < o; i++) a += C[i + k * o] * MC[i + j * o];
                Mr[k + j * p] = a;
            }
        }
        if (p == 1) {
            double d = Mr[0];
            if (d == 0.0 || !isfinite(d)) return 3;
            xdot[N] = g[0] / d;
        } else {
            int ip = (int)p;
            P->gesv(&ip, &one, Mr, &ip, P->pivots, g, &ip, &info);
            if (info) return 3;
            memcpy(xdot + N, g, (size_t)p * sizeof(double));
        }
    } else {
        int iK = (int)K;
        double *S = out + P->s_sys, *s = out + P->s_rhs;
        P->gesv(&iK, &one, S, &iK, P->pivots, s, &iK, &info);
        if (info) return 4;
        for (k = 0; k < p; k++) xdot[N + k] = s[ind[k]];
    }
    return 0;
}
"""


class _Plan(ctypes.Structure):
    _fields_ = ([(name, ctypes.c_void_p) for name in
                 ("main", "velocity", "gesv", "getrf", "getrs", "z", "main_out", "velocity_out",
                  "G", "R", "C", "MC", "w", "g", "Mr", "pivots", "ind", "dep")]
                + [(name, ctypes.c_long) for name in
                   ("N", "o", "p", "m", "K", "iu", "s_rhs", "s_sys", "s_B", "s_b", "reduced",
                    "nfev", "lu_reused")])


class NativePartitionRHS:
    """``symbody_partition_rhs`` bound to one model, its constants (and constant inputs) and
    one set of dependent speeds: ``function`` and ``plan`` are the addresses a compiled
    integrator calls (``function(plan, t, x, xdot)`` with x = [q (N), u[ind] (p)]); the
    object owns the buffers (one per integration: not to be shared by threads)."""

    def __init__(self, model: CompiledModel, P: np.ndarray, library: ctypes.CDLL,
                 kernels: dict[str, int], routines: dict[str, int],
                 independent: Sequence[int], dependent: Sequence[int],
                 R: np.ndarray | None = None) -> None:
        L = model.layout
        N, o, p, m, K = L.N, L.o, L.p, L.m, L.K
        self.z = np.zeros(L.nz)
        self.z[L.z_constants] = P
        if R is not None:
            self.z[L.z_r] = R
        self._index = {"ind": np.ascontiguousarray(independent, dtype=np.int_),
                       "dep": np.ascontiguousarray(dependent, dtype=np.int_)}
        sizes = {"main_out": model.kernels.main.nout, "velocity_out": model.kernels.velocity.nout,
                 "G": m * m, "R": m * (p + 1), "C": o * p, "MC": o * p, "w": o, "g": p + o,
                 "Mr": p * p}
        self._buffers = {name: np.zeros(max(size, 1)) for name, size in sizes.items()}
        self.pivots = np.zeros(max(K, 1), dtype=np.intc)
        addresses = {name: a.ctypes.data for name, a in {**self._buffers, **self._index}.items()}
        plan = _Plan(z=self.z.ctypes.data, pivots=self.pivots.ctypes.data,
                     N=N, o=o, p=p, m=m, K=K, iu=L.iu, s_rhs=L.main_rhs.start,
                     s_sys=L.main_system.start, s_B=L.velocity_B.start, s_b=L.velocity_b.start,
                     reduced=int(m >= REDUCED_KKT_MIN), nfev=0, lu_reused=0,
                     **kernels, **routines, **addresses)
        self._plan = plan
        self.plan = ctypes.addressof(plan)
        self.library = library
        fn = library.symbody_partition_rhs
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p]
        self.function = ctypes.cast(fn, ctypes.c_void_p).value
        self._call = fn
        self.nx = N + p

    @property
    def nfev(self) -> int:
        """Evaluations made through this plan so far."""
        return int(self._plan.nfev)

    @property
    def lu_reused(self) -> int:
        """Evaluations whose B_a[:, dep] equalled B[:, dep], so that the LU of the dependent
        speeds' solve served the null space too."""
        return int(self._plan.lu_reused)

    def __call__(self, t: float, x: np.ndarray) -> tuple[np.ndarray, int]:
        """(x' (N + p,), status) at (t, x) (status 0: done; otherwise x' is not valid)."""
        x = np.ascontiguousarray(x, dtype=float)
        if x.shape != (self.nx,):
            raise ValueError(f"x must have {self.nx} values, got shape {x.shape}")
        xdot = np.empty(self.nx)
        status = self._call(self.plan, float(t), x.ctypes.data, xdot.ctypes.data)
        return xdot, int(status)


def native_partition_rhs(model: CompiledModel, P: np.ndarray, independent_speeds: Sequence[int],
                         R: np.ndarray | None = None) -> NativePartitionRHS | None:
    """Kane's right-hand side with the speeds ``independent_speeds`` (p indices into u, in
    the order of the state) independent, the others dependent, in compiled code with the
    constants ``P`` (and the values ``R`` of constant specified inputs) bound; None when the
    model needs Python on that path (see the module docstring)."""
    L, kernels = model.layout, model.kernels
    if L.e or not L.augmented or not L.m:
        return None
    if L.s and (R is None or np.shape(R) != (L.s,)):
        return None
    ind = [int(i) for i in independent_speeds]
    if len(ind) != L.p or len(set(ind)) != L.p or not all(0 <= i < L.o for i in ind):
        return None
    dep = [i for i in range(L.o) if i not in set(ind)]
    addresses = {"main": c_function_address(kernels.main),
                 "velocity": c_function_address(kernels.velocity)}
    if any(a is None for a in addresses.values()):
        return None
    routines = {name: lapack_function(f"d{name}") for name in ("gesv", "getrf", "getrs")}
    if any(a is None for a in routines.values()):
        return None
    try:
        library = build_source(PARTITION_RHS_SOURCE, "native-partition-rhs")
    except RuntimeError:
        return None
    if library is None:
        return None
    return NativePartitionRHS(model, np.asarray(P, dtype=float), library, addresses, routines,
                              ind, dep, R)
