"""One compiled call: an emitted kernel, then a tree-sparse solve with the mass matrix.

For the derivatives of a kinematic tree's forward dynamics (``robot.forward_dynamics_derivatives``
above the size where the products are emitted), the straight-line kernel gives, with the
robot's constants folded, the nonzero entries of ∂τ/∂q, ∂τ/∂u (o x o each) at
u' = FD(q, u, τ) and of the tree-sparse factor M = Lᵀ D L that gave u' (Featherstone, *Rigid
Body Dynamics Algorithms*, §6.5: L unit lower triangular, L_ij ≠ 0 only for j an ancestor of
i along the parent array λ, O(n d²) for a tree of depth d; L below H's diagonal, D on it).
This extension then does, in plain C loops generic in the numbers::

    X = M⁻¹ [∂τ/∂q, ∂τ/∂u, 1] = L⁻¹ D⁻¹ L⁻ᵀ B      (row operations of length 3n along λ)

and returns ``[-X_q, -X_u, X_1]`` (3, o, o) in the model's speed order: ∂u'/∂q, ∂u'/∂u, M⁻¹
(the implicit-function identity of Carpentier and Mansard).  The cost of the solve is
O(n² d) with rows that vectorize; the identity block's rows stay within their subtree's
range (the tree order is depth first) on the way up.

``entry(q, u, tau)``: when the three are C-contiguous float64 vectors of their sizes, they
are copied into z (whose tail holds the constants), the kernel runs into a work buffer, the
solve into a new array; anything else goes to the careful path given.  The GIL is held from
the copies to the end, so one entry shared by threads stays safe.  A mass matrix that is not
positive definite (a D_k that is not positive) raises the error class given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .c_entry_type import ARGUMENT_SOURCE, entry_type_source
from .python_extension import PythonExtension

__all__ = ["TREE_SOLVE_SOURCE", "tree_solve_entry"]

TREE_SOLVE_SOURCE = (r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define NGROUPS 3
typedef void (*kernel_fn)(const double *, double *);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    kernel_fn kernel;
    double *z, *kout, *W;
    const int64_t *dest, *parent, *hi, *perm;
    Py_ssize_t sizes[NGROUPS], n, nout;
    PyObject *owner, *fallback, *empty, *shape, *error;
} TreeSolveEntry;

"""
    + ARGUMENT_SOURCE
    + r"""

/* gcc: an AVX2/FMA clone chosen at load time where the CPU has it (the cached library
   stays right on any x86-64) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && __GNUC__ >= 6
#define VECTOR_CLONES __attribute__((target_clones("avx2,fma", "default")))
#else
#define VECTOR_CLONES
#endif

VECTOR_CLONES
static void axpy(double *restrict y, const double *restrict x, double a, Py_ssize_t len)
{
    for (Py_ssize_t c = 0; c < len; ++c) y[c] -= a * x[c];
}

#define MAX_DEPTH 64

/* y[at:at+len] -= sum_t ls[t] rows[t][at:at+len]: each entry of y loaded and stored once
   (four-double vectors of gcc/clang: AVX in the AVX2 clone, two SSE2 halves elsewhere) */
typedef double v4d __attribute__((vector_size(32), aligned(8)));

VECTOR_CLONES
static void gather(double *restrict y, const double *const *rows, const double *ls, int nd,
                   Py_ssize_t at, Py_ssize_t len)
{
    Py_ssize_t c = 0;
    y += at;
    for (; c + 8 <= len; c += 8) {
        v4d a0 = *(const v4d *)(y + c), a1 = *(const v4d *)(y + c + 4);
        for (int t = 0; t < nd; ++t) {
            const double *x = rows[t] + at + c;
            v4d l = {ls[t], ls[t], ls[t], ls[t]};
            a0 -= l * *(const v4d *)x;
            a1 -= l * *(const v4d *)(x + 4);
        }
        *(v4d *)(y + c) = a0;
        *(v4d *)(y + c + 4) = a1;
    }
    for (; c < len; ++c) {
        double a = y[c];
        for (int t = 0; t < nd; ++t) a -= ls[t] * rows[t][at + c];
        y[c] = a;
    }
}

/* B (n x 3n) <- M^-1 B = L^-1 D^-1 L^-T B, the last n columns the identity.  On the way up
   (L^-T) row i of the first 2n columns is nonzero only on i's ancestors and subtree (the
   columns of tau's derivatives related to i or to a descendant: all within [0, hi[i]]), its
   identity part on its subtree: the contiguous range [i, hi[i]] (depth-first order).  On the way down
   the identity block is made upper triangular only (M^-1 symmetric: the caller mirrors it). */
VECTOR_CLONES
static void solve(const double *H, double *B, const int64_t *par, const int64_t *hi, Py_ssize_t n)
{
    Py_ssize_t m = 3 * n, w = 2 * n;
    for (Py_ssize_t i = n - 1; i > 0; --i) {
        const double *Bi = B + i * m;
        Py_ssize_t len = hi[i] - i + 1;
        for (int64_t j = par[i]; j >= 0; j = par[j]) {
            double l = H[i * n + j];
            if (l == 0.0) continue;
            double *Bj = B + j * m;
            axpy(Bj, Bi, l, hi[i] + 1);
            axpy(Bj + n, Bi + n, l, hi[i] + 1);
            axpy(Bj + w + i, Bi + w + i, l, len);
        }
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        double *Bi = B + i * m, inv = 1.0 / H[i * n + i];
        for (Py_ssize_t c = 0; c < w; ++c) Bi[c] *= inv;
        for (Py_ssize_t c = w + i; c <= w + hi[i]; ++c) Bi[c] *= inv;
    }
    const double *rows[MAX_DEPTH];
    double ls[MAX_DEPTH];
    for (Py_ssize_t i = 1; i < n; ++i) {
        double *Bi = B + i * m;
        int nd = 0;
        for (int64_t j = par[i]; j >= 0; j = par[j]) {
            double l = H[i * n + j];
            if (l == 0.0) continue;
            if (nd == MAX_DEPTH) {      /* deeper than the buffers: flush them */
                gather(Bi, rows, ls, nd, 0, w);
                gather(Bi, rows, ls, nd, w + i, n - i);
                nd = 0;
            }
            rows[nd] = B + j * m;
            ls[nd++] = l;
        }
        gather(Bi, rows, ls, nd, 0, w);
        gather(Bi, rows, ls, nd, w + i, n - i);
    }
}

/* out = [-X_q, -X_u, M^-1] (3, n, n) in the output's order: row and column a of it are
   the tree's perm[a] */
VECTOR_CLONES
static void write_out(double *o0, double *B, const int64_t *perm, Py_ssize_t n)
{
    double *o1 = o0 + n * n, *o2 = o1 + n * n, *I = B + 2 * n;
    Py_ssize_t a, b, m = 3 * n;
    for (a = 1; a < n; ++a)         /* M^-1's lower triangle from its upper one */
        for (b = 0; b < a; ++b) I[a * m + b] = I[b * m + a];
    for (a = 0; a < n; ++a) {
        const double *Xa = B + perm[a] * m;
        for (b = 0; b < n; ++b) {
            int64_t c = perm[b];
            o0[a * n + b] = -Xa[c];
            o1[a * n + b] = -Xa[n + c];
            o2[a * n + b] = Xa[2 * n + c];
        }
    }
}

static PyObject *call(TreeSolveEntry *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), i, n = self->n;
    Py_buffer ov;
    PyObject *out;
    if (nargs != NGROUPS || (kwnames && PyTuple_GET_SIZE(kwnames)))
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    if (copy_groups(self->z, self->sizes, args, nargs))
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    self->kernel(self->z, self->kout);
    /* H (the factor) is written only here, at the kernel's places (its zeros stay zero);
       B is changed by the solve */
    double *H = self->W, *B = self->W + n * n;
    memset(B, 0, (size_t)(3 * n * n) * sizeof(double));
    for (i = 0; i < self->nout; ++i) self->W[self->dest[i]] = self->kout[i];
    for (i = 0; i < n; ++i) {
        B[i * 3 * n + 2 * n + i] = 1.0;
        if (!(H[i * n + i] > 0.0)) {
            PyErr_SetString(self->error, "forward_dynamics_derivatives: the mass matrix is not "
                            "positive definite at this q");
            return NULL;
        }
    }
    solve(H, B, self->parent, self->hi, n);
    out = PyObject_CallOneArg(self->empty, self->shape);
    if (out == NULL) return NULL;
    if (PyObject_GetBuffer(out, &ov, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0) {
        Py_DECREF(out);
        return NULL;
    }
    write_out((double *)ov.buf, B, self->perm, n);
    PyBuffer_Release(&ov);
    return out;
}

"""
    + entry_type_source('TreeSolveEntry', 'symbody_tree_solve.TreeSolveEntry',
                        ('owner', 'fallback', 'empty', 'shape', 'error'),
                        "D = f(q, u, tau): a kernel, then M^-1 [dtau/dq, dtau/du, 1] by the tree's LTDL")
    + r"""

static PyObject *make(PyObject *module, PyObject *args)
{
    unsigned long long kernel, z, kout, W, dest, parent, hi, perm;
    Py_ssize_t nq, nu, nt, n, nout;
    PyObject *owner, *fb, *empty, *shape, *error;
    TreeSolveEntry *self;
    if (!PyArg_ParseTuple(args, "KKKKKKKKnnnnnOOOOO", &kernel, &z, &kout, &W, &dest, &parent,
                          &hi, &perm, &nq, &nu, &nt, &n, &nout, &shape, &owner, &fb, &empty,
                          &error))
        return NULL;
    self = PyObject_GC_New(TreeSolveEntry, &TreeSolveEntryType);
    if (self == NULL) return NULL;
    self->vectorcall = (vectorcallfunc)call;
    self->kernel = (kernel_fn)(uintptr_t)kernel;
    self->z = (double *)(uintptr_t)z;
    self->kout = (double *)(uintptr_t)kout;
    self->W = (double *)(uintptr_t)W;
    self->dest = (const int64_t *)(uintptr_t)dest;
    self->parent = (const int64_t *)(uintptr_t)parent;
    self->hi = (const int64_t *)(uintptr_t)hi;
    self->perm = (const int64_t *)(uintptr_t)perm;
    self->sizes[0] = nq; self->sizes[1] = nu; self->sizes[2] = nt;
    self->n = n; self->nout = nout;
    Py_INCREF(owner); self->owner = owner;
    Py_INCREF(fb); self->fallback = fb;
    Py_INCREF(empty); self->empty = empty;
    Py_INCREF(shape); self->shape = shape;
    Py_INCREF(error); self->error = error;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

static PyMethodDef methods[] = {
    {"make", make, METH_VARARGS, "make(kernel, z, kout, W, dest, parent, hi, perm, nq, nu, nt, "
     "n, nout, shape, owner, fallback, empty, error)"},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "symbody_tree_solve", NULL, -1,
                                       methods};

PyMODINIT_FUNC PyInit_symbody_tree_solve(void)
{
    if (PyType_Ready(&TreeSolveEntryType) < 0) return NULL;
    return PyModule_Create(&moduledef);
}
""")

_EXTENSION = PythonExtension("symbody_tree_solve", TREE_SOLVE_SOURCE, "tree-solve", opt="-O3")


def tree_solve_entry(kernel: Any, sizes: Sequence[int], constants: np.ndarray | None,
                     dest: Sequence[int], parent: Sequence[int], perm: Sequence[int],
                     careful: Callable, error: type) -> Callable | None:
    """``entry(q, u, tau)`` -> (3, n, n) (see the module docstring), None when the kernel is
    not generated C or there is no compiler.

    ``kernel``: z = [q, u, tau, constants] -> its ``nout`` values, value j going to place
    ``dest[j]`` of the work W = [H (n x n, M = Lᵀ D L: L's entries below the diagonal, D on
    it, row-major), B (n x 3n: ∂τ/∂q,
    ∂τ/∂u, the identity added here)]; ``parent``: λ(i) < i of each speed in tree order (-1 at
    the root); ``perm``: the tree index of each speed of the output's order.
    """
    from .native_rhs import c_function_address

    n = len(parent)
    par = np.asarray(parent, dtype=np.int64)
    if len(dest) != kernel.nout or len(sizes) != 3 or len(perm) != n \
            or any(not -1 <= par[i] < i for i in range(n)):
        raise ValueError("tree_solve_entry: inconsistent sizes or a parent after its child")
    address = c_function_address(kernel)
    module = _EXTENSION.module() if address is not None else None
    if module is None:
        return None
    hi = np.arange(n, dtype=np.int64)      # the last index of each speed's subtree
    for i in range(n - 1, 0, -1):
        if par[i] >= 0:
            hi[par[i]] = max(hi[par[i]], hi[i])
    z = np.zeros(kernel.nargs)
    given = int(sum(sizes))
    if constants is not None and given < kernel.nargs:
        z[given:] = constants
    kout, W = np.zeros(max(1, kernel.nout)), np.zeros(4 * n * n)
    tables = [np.ascontiguousarray(x, dtype=np.int64) for x in (dest, par, hi, perm)]
    real = kernel.realize()
    # the owner keeps the buffers, the tables and the kernel's library alive as long as the entry
    owner = (z, kout, W, tables, real, getattr(real, "library", None))
    return module.make(address, z.ctypes.data, kout.ctypes.data, W.ctypes.data,
                       *(t.ctypes.data for t in tables), *(int(s) for s in sizes), n,
                       int(kernel.nout), (3, n, n), owner, careful, np.empty, error)
