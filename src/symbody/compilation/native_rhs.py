"""The right-hand side as one C function, for integrators that run in compiled code.

When every kernel the right-hand side needs is generated C (``backend="c"``, or "auto" on
large models), x' = f(t, x) needs no Python at all: a small fixed C routine (compiled
once per machine and kept in the kernel cache) fills the argument vector z, calls the
velocity kernel and an LU solve for the dependent speeds, the main kernel and an LU
(augmented system) or Cholesky (symmetric mass matrix) solve on the kernel's output in
place (or, when the model has one, the forward-dynamics kernel, which writes [q', u']
without a solve), and copies [q', u_ind'] out::

    int symbody_rhs(plan *P, double t, const double *x, double *xdot)   (0: done)

The solves are written out in C up to 64 rows (partial pivoting as LAPACK's dgetrf picks
its pivots), where LAPACK's dgesv / dposv spend more on their set-up than on the work
(3 of 3.4 us per call on UR5's 6 x 6 under load); LAPACK's routines beyond.

LAPACK is scipy's (the function pointers ``scipy.linalg.cython_lapack`` exports); the
numbers are those of :meth:`NumericModel.rhs_function` to round-off.  Every size and
offset in the plan comes from the model's :class:`~.kernel_layout.KernelLayout`.  A nonzero
return (a singular system, a mass matrix that is not positive definite) leaves the case
to the Python path, which raises or solves it the general way.  :func:`native_rhs`
returns None for models it cannot take (LLVM or numpy kernels, specified inputs that are
not constant, a non-symmetric reduced mass matrix, no C compiler).  Extra first-order
states (muscle activations, fiber lengths) go into z after the inputs and constants, as
in the Python path, and their C kernel writes x_e' after [q', u_ind'].
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from ..compat.scipy import lapack_function
from . import c_kernels
from . import cache as kernel_cache

if TYPE_CHECKING:
    from .kernel_layout import CompiledModel

__all__ = ["NativeRHS", "native_rhs", "lapack_function", "RHS_SOURCE", "C_MAX_ABS"]

#: the plan: pointers and sizes, laid out as ctypes' _Plan below
RHS_SOURCE = r"""
#include <string.h>
#include <math.h>
#define SMALL_MAX 64
typedef void (*kernel_fn)(const double *, double *);
typedef void (*many_fn)(const double *, double *, long);
typedef void (*gesv_fn)(int *, int *, double *, int *, int *, double *, int *, int *);
typedef void (*posv_fn)(char *, int *, int *, double *, int *, double *, int *, int *);
typedef struct {
    kernel_fn main, velocity, forward;
    gesv_fn gesv;
    posv_fn posv;
    double *z, *main_out, *velocity_out;
    int *pivots;
    long N, p, m, K, nx, iud, s_bdep, s_vrhs, augmented;
    long nfev;
    /* many states through the forward kernel's many (SIMD lanes): blocks of `block` rows */
    many_fn forward_many;
    double *Zb, *Fb;
    long nz, nf, block, ir, ns;
    /* extra first-order states (e of them, at z[ixe] and x[nxm]): their kernel writes x_e' */
    kernel_fn extra;
    long e, nxm, ixe;
} plan;

/* A y = b for a symmetric positive definite A (k x k, column by column, the lower triangle
   read): Cholesky in place (the lower triangle becomes L), then L w = b and L^T y = w.
   2 when a pivot is not positive (or NaN), as LAPACK's dpotrf reports it. */
static int cholesky_solve(int k, double *A, double *b)
{
    int i, j, l;
    for (j = 0; j < k; j++) {
        double *cj = A + (size_t)j * k;
        double d = cj[j];
        for (l = 0; l < j; l++) d -= A[(size_t)l * k + j] * A[(size_t)l * k + j];
        if (!(d > 0.0)) return 2;
        d = sqrt(d);
        cj[j] = d;
        for (i = j + 1; i < k; i++) {
            double s = cj[i];
            for (l = 0; l < j; l++) s -= A[(size_t)l * k + i] * A[(size_t)l * k + j];
            cj[i] = s / d;
        }
    }
    for (i = 0; i < k; i++) {
        double s = b[i];
        for (l = 0; l < i; l++) s -= A[(size_t)l * k + i] * b[l];
        b[i] = s / A[(size_t)i * k + i];
    }
    for (i = k - 1; i >= 0; i--) {
        double s = b[i];
        for (l = i + 1; l < k; l++) s -= A[(size_t)i * k + l] * b[l];
        b[i] = s / A[(size_t)i * k + i];
    }
    return 0;
}

/* A y = b (k x k, column by column) by LU with partial pivoting in place (the pivot of a
   column its first entry of largest magnitude, as LAPACK's dgetrf picks it; rows swapped
   across the whole matrix and b), then L w = P b and U y = w.  1 when a pivot is exactly
   zero (LAPACK's info > 0). */
static int lu_solve(int k, double *A, double *b)
{
    int i, j, l;
    for (j = 0; j < k; j++) {
        double *cj = A + (size_t)j * k;
        double mx = fabs(cj[j]), d;
        int p = j;
        for (i = j + 1; i < k; i++)
            if (fabs(cj[i]) > mx) { mx = fabs(cj[i]); p = i; }
        if (cj[p] == 0.0) return 1;
        if (p != j) {
            double w;
            for (l = 0; l < k; l++) {
                w = A[(size_t)l * k + j]; A[(size_t)l * k + j] = A[(size_t)l * k + p]; A[(size_t)l * k + p] = w;
            }
            w = b[j]; b[j] = b[p]; b[p] = w;
        }
        d = cj[j];
        for (i = j + 1; i < k; i++) cj[i] /= d;
        for (l = j + 1; l < k; l++) {
            double *cl = A + (size_t)l * k;
            double f = cl[j];
            if (f != 0.0)
                for (i = j + 1; i < k; i++) cl[i] -= cj[i] * f;
        }
    }
    for (j = 0; j < k; j++) {
        double f = b[j];
        if (f != 0.0)
            for (i = j + 1; i < k; i++) b[i] -= A[(size_t)j * k + i] * f;
    }
    for (j = k - 1; j >= 0; j--) {
        double f;
        b[j] /= A[(size_t)j * k + j];
        f = b[j];
        if (f != 0.0)
            for (i = 0; i < j; i++) b[i] -= A[(size_t)j * k + i] * f;
    }
    return 0;
}

int symbody_rhs(plan *P, double t, const double *x, double *xdot)
{
    int one = 1, info = 0, k;
    double *z = P->z;
    P->nfev++;
    z[0] = t;
    memcpy(z + 1, x, (size_t)P->nxm * sizeof(double));
    if (P->e) memcpy(z + P->ixe, x + P->nxm, (size_t)P->e * sizeof(double));
    if (P->m) {
        int m = (int)P->m;
        double *v = P->velocity_out;
        P->velocity(z, v);
        if (m <= SMALL_MAX) {
            if (lu_solve(m, v + P->s_bdep, v + P->s_vrhs)) return 1;
        } else {
            P->gesv(&m, &one, v + P->s_bdep, &m, P->pivots, v + P->s_vrhs, &m, &info);
            if (info) return 1;
        }
        memcpy(z + P->iud, v + P->s_vrhs, (size_t)m * sizeof(double));
    }
    if (P->forward) {
        /* a tree's recursion: [q', u'] written out, nothing to solve */
        P->forward(z, P->main_out);
        memcpy(xdot, P->main_out, (size_t)P->nxm * sizeof(double));
        if (P->e) P->extra(z, xdot + P->nxm);
        return 0;
    }
    P->main(z, P->main_out);
    k = (int)P->K;
    if (P->augmented && k <= SMALL_MAX) {
        /* small: LAPACK's call costs more than the factorization (dgetrf's set-up) */
        if (lu_solve(k, P->main_out + P->N + k, P->main_out + P->N)) return 2;
    } else if (P->augmented) {
        P->gesv(&k, &one, P->main_out + P->N + k, &k, P->pivots, P->main_out + P->N, &k, &info);
    } else if (k <= SMALL_MAX) {
        /* small: LAPACK's call costs more than the factorization (dpotrf's set-up) */
        if (cholesky_solve(k, P->main_out + P->N + k, P->main_out + P->N)) return 2;
    } else {
        char lower = 'L';
        P->posv(&lower, &k, &one, P->main_out + P->N + k, &k, P->main_out + P->N, &k, &info);
    }
    if (info) return 2;
    memcpy(xdot, P->main_out, (size_t)P->nxm * sizeof(double));
    if (P->e) P->extra(z, xdot + P->nxm);
    return 0;
}

/* x' of k states (rows of X, times T or t0, inputs R per row or NULL: those in z) by blocks
   through the forward kernel's many: the rows of z filled (dependent speeds solved), one
   call for the block, [q', u_ind'] copied out.  As symbody_rhs, nonzero when a state's
   dependent speeds cannot be solved. */
int symbody_rhs_block(plan *P, double t0, const double *T, const double *X, const double *R,
                      double *Y, long k)
{
    long s, i, nz = P->nz, nx = P->nx, nf = P->nf;
    for (s = 0; s < k; s += P->block) {
        long b = k - s < P->block ? k - s : P->block;
        for (i = 0; i < b; i++) {
            double *z = P->Zb + i * nz;
            memcpy(z, P->z, (size_t)nz * sizeof(double));
            z[0] = T ? T[s + i] : t0;
            memcpy(z + 1, X + (s + i) * nx, (size_t)nx * sizeof(double));
            if (R) memcpy(z + P->ir, R + (s + i) * P->ns, (size_t)P->ns * sizeof(double));
            if (P->m) {
                int m = (int)P->m, one = 1, info = 0;
                double *v = P->velocity_out;
                P->velocity(z, v);
                if (m <= SMALL_MAX) {
                    if (lu_solve(m, v + P->s_bdep, v + P->s_vrhs)) return 1;
                } else {
                    P->gesv(&m, &one, v + P->s_bdep, &m, P->pivots, v + P->s_vrhs, &m, &info);
                    if (info) return 1;
                }
                memcpy(z + P->iud, v + P->s_vrhs, (size_t)m * sizeof(double));
            }
        }
        P->forward_many(P->Zb, P->Fb, b);
        P->nfev += b;
        for (i = 0; i < b; i++)
            memcpy(Y + (s + i) * nx, P->Fb + i * nf, (size_t)nx * sizeof(double));
    }
    return 0;
}
"""


#: C helpers shared by the fixed routines (native_full, native_constraints): max |v_i| with
#: a NaN entry propagating as in numpy's max of absolute values
C_MAX_ABS = r"""
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
"""


class _Plan(ctypes.Structure):
    _fields_ = [("main", ctypes.c_void_p), ("velocity", ctypes.c_void_p),
                ("forward", ctypes.c_void_p),
                ("gesv", ctypes.c_void_p), ("posv", ctypes.c_void_p),
                ("z", ctypes.c_void_p), ("main_out", ctypes.c_void_p),
                ("velocity_out", ctypes.c_void_p), ("pivots", ctypes.c_void_p),
                ("N", ctypes.c_long), ("p", ctypes.c_long), ("m", ctypes.c_long),
                ("K", ctypes.c_long), ("nx", ctypes.c_long), ("iud", ctypes.c_long),
                ("s_bdep", ctypes.c_long), ("s_vrhs", ctypes.c_long),
                ("augmented", ctypes.c_long), ("nfev", ctypes.c_long),
                ("forward_many", ctypes.c_void_p), ("Zb", ctypes.c_void_p), ("Fb", ctypes.c_void_p),
                ("nz", ctypes.c_long), ("nf", ctypes.c_long), ("block", ctypes.c_long),
                ("ir", ctypes.c_long), ("ns", ctypes.c_long),
                ("extra", ctypes.c_void_p), ("e", ctypes.c_long), ("nxm", ctypes.c_long),
                ("ixe", ctypes.c_long)]


#: states per call of the forward kernel's many in ``symbody_rhs_block``
BLOCK = 64


def _many_address(kernel: Any) -> int | None:
    """The address of a generated-C kernel's ``symbody_kernel_many(Z, OUT, count)``."""
    lib = getattr(kernel.realize(), "library", None)
    return None if lib is None else ctypes.cast(lib.symbody_kernel_many, ctypes.c_void_p).value


def c_function_address(kernel: Any) -> int | None:
    """The address of a generated-C kernel's ``symbody_kernel(z, out)``, None for other backends."""
    real = kernel.realize()
    lib = getattr(real, "library", None)
    if getattr(real, "backend", None) != "c" or lib is None:
        return None
    return ctypes.cast(lib.symbody_kernel, ctypes.c_void_p).value


_LIBRARIES: dict[str, Any] = {}
_BUILD_LOCK = threading.RLock()


def _after_fork_in_child() -> None:
    global _BUILD_LOCK
    _BUILD_LOCK = threading.RLock()      # (one held by a parent's build thread stays held)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def build_source(source: str, name: str) -> ctypes.CDLL | None:
    """A fixed C source compiled once (kernel cache, digest-checked) and loaded; None
    without a C compiler."""
    if source in _LIBRARIES:
        return _LIBRARIES[source]
    with _BUILD_LOCK:                  # (a background thread may be building it)
        return _build_source(source, name)


def _build_source(source: str, name: str) -> ctypes.CDLL | None:
    if source in _LIBRARIES:
        return _LIBRARIES[source]
    cc = c_kernels.compiler_available()
    if cc is None:
        return None
    digest = hashlib.sha256(source.encode()).hexdigest()
    key = kernel_cache.cache_key(name, str(cc), digest)
    path = kernel_cache.verified_library(key)
    if path is None:
        path = kernel_cache.library_path(key)
        c_kernels.build_library([source], path, opt="-O2")
        kernel_cache.seal_library(key)
    lib = ctypes.CDLL(str(path))
    _LIBRARIES[source] = lib
    return lib


class NativeRHS:
    """``symbody_rhs`` bound to one model and its constants: ``function`` and ``plan`` are
    the addresses a compiled integrator calls (``function(plan, t, x, xdot)``); the object
    owns the buffers (one per integration: not to be shared by threads)."""

    def __init__(self, model: CompiledModel, P: np.ndarray, library: ctypes.CDLL, main: int | None,
                 velocity: int | None, gesv: int, posv: int, R: np.ndarray | None = None,
                 forward: int | None = None, extra: int | None = None) -> None:
        L, kernels = model.layout, model.kernels
        self.z = np.zeros(L.nz)
        self.z[L.z_constants] = P
        if R is not None:                  # constant specified inputs
            self.z[L.z_r] = R
        self.main_out = np.empty(kernels.forward.nout if forward else kernels.main.nout)
        self.velocity_out = np.empty(kernels.velocity.nout if L.m else 1)
        self.pivots = np.zeros(max(L.K, L.m, 1), dtype=np.intc)
        # the forward kernel's many, row by row until its SIMD-lane build is there
        forward_many = _many_address(kernels.forward) if forward else None
        nf = kernels.forward.nout if forward else 0
        self.Zb = np.zeros((BLOCK, L.nz) if forward_many else (1,))
        self.Fb = np.empty((BLOCK, nf) if forward_many else (1,))
        plan = _Plan(main=main or 0, velocity=velocity or 0, forward=forward or 0,
                     gesv=gesv, posv=posv,
                     z=self.z.ctypes.data, main_out=self.main_out.ctypes.data,
                     velocity_out=self.velocity_out.ctypes.data, pivots=self.pivots.ctypes.data,
                     N=L.N, p=L.p, m=L.m, K=L.K, nx=L.nx, iud=L.iud,
                     s_bdep=L.velocity_Bdep.start if L.m else 0,
                     s_vrhs=L.velocity_rest.start if L.m else 0,
                     augmented=int(L.augmented), nfev=0,
                     forward_many=forward_many or 0, Zb=self.Zb.ctypes.data,
                     Fb=self.Fb.ctypes.data, nz=L.nz, nf=nf, block=BLOCK, ir=L.ir, ns=L.s,
                     extra=extra or 0, e=L.e, nxm=L.nxm, ixe=L.ixe if L.e else 0)
        self._plan = plan
        self.plan = ctypes.addressof(plan)
        self.library = library
        self.function = ctypes.cast(library.symbody_rhs, ctypes.c_void_p).value
        #: ``symbody_rhs_block`` when the forward kernel's many takes the states by blocks
        self.block = (ctypes.cast(library.symbody_rhs_block, ctypes.c_void_p).value
                      if forward_many else None)
        fn = library.symbody_rhs
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p]
        self._call = fn
        self.nx = L.nx
        lanes = kernels.forward_many
        if forward_many and lanes is not None:
            if hasattr(lanes, "when_built"):
                # (in the build's thread, which holds the GIL, as does every caller of the plan)
                lanes.when_built(self._take_lanes)
            else:                                # a kernel loaded with a saved model
                self._take_lanes(lanes)

    def _take_lanes(self, kernel: Any) -> None:
        """Blocks of states through ``kernel``'s many in SIMD lanes from now on, and single
        states through its AVX2 build (:mod:`.c_lanes`; the same numbers)."""
        address = _many_address(kernel)
        lib = getattr(kernel, "library", None)
        if address and lib is not None and hasattr(lib, "symbody_kernel_fast"):
            self._lanes = kernel                 # (keeps its library loaded)
            self._plan.forward_many = address
            self._plan.forward = ctypes.cast(lib.symbody_kernel_fast, ctypes.c_void_p).value

    @property
    def nfev(self) -> int:
        """Evaluations made through this plan so far."""
        return int(self._plan.nfev)

    def __call__(self, t: float, x: np.ndarray) -> tuple[np.ndarray, int]:
        """(x', status) at (t, x) (status 0: done; otherwise x' is not valid)."""
        x = np.ascontiguousarray(x, dtype=float)
        xdot = np.empty(self.nx)
        status = self._call(self.plan, float(t), x.ctypes.data, xdot.ctypes.data)
        return xdot, int(status)


def native_rhs(model: CompiledModel, P: np.ndarray, R: np.ndarray | None = None) -> NativeRHS | None:
    """The model's right-hand side in compiled code with the constants ``P`` (and the values
    ``R`` of constant specified inputs) bound, or None when the model needs Python on its
    path (see the module docstring)."""
    L, kernels = model.layout, model.kernels
    if not (L.augmented or L.mass_symmetric or kernels.forward is not None):
        return None
    extra = c_function_address(kernels.extra) if L.e else None
    if L.e and (extra is None or kernels.forward is not None):
        return None
    if L.s and (R is None or np.shape(R) != (L.s,)):
        return None
    if not L.contiguous_state_derivative:      # a model saved before the current kernel layout
        return None
    forward = c_function_address(kernels.forward) if kernels.forward is not None else None
    # with a forward-dynamics kernel the main one is not needed (nor built) for x'
    main = c_function_address(kernels.main) if forward is None else None
    velocity = c_function_address(kernels.velocity) if L.m else None
    if (main is None and forward is None) or (L.m and velocity is None):
        return None
    gesv, posv = lapack_function("dgesv"), lapack_function("dposv")
    if gesv is None or posv is None:
        return None
    try:
        library = build_source(RHS_SOURCE, "native-rhs")
    except RuntimeError:
        return None
    if library is None:
        return None
    return NativeRHS(model, np.asarray(P, dtype=float), library, main, velocity, gesv, posv, R,
                     forward, extra)
