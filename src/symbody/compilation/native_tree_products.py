"""One compiled call: an emitted kernel of per-column factors, then their dot products on a
tree's sparsity pattern.

The derivatives of a kinematic tree's inverse dynamics (``robot.inverse_dynamics_derivatives``)
are dot products of short per-speed vectors (:class:`symbody.robots.rnea_derivatives.RneaFactors`:
Carpentier and Mansard's world-frame form).  Written out as straight-line code they make a
kernel of o² x 3 outputs whose code (1.5 MB for TIAGo dual's 101 speeds) no longer stays in
the caches when the calls alternate with other work.  Here the straight-line kernel, with the
robot's constants folded, gives only the factors (``width`` values per speed, O(n) code), and
this extension does, in plain C loops generic in the numbers, for each column c (tree order)::

    out0[k, c] = -(P_k·γ_c + Q_k·β_c)   out1[k, c] = P_k·ψ_c + Q_k·S_c   out2[k, c] = out2[c, k] = P_k·S_c
                                                                          (k in lo[c]..hi[c])
    out0[a, c] = S_a·dq_c               out1[a, c] = S_a·du_c               (a in above[c])

then adds ``diagonal[c]`` (the joints' damping) to out1[c, c]; every other entry is zero.
Rows and columns are written at ``pos[k]`` (the output's order); out is (3, n, n).

``entry(q, u, u_dot)``: when the three are C-contiguous float64 vectors of their sizes, they
are copied into z (whose tail holds the constants), the kernel runs into a work buffer and the
products into a new array; anything else goes to the careful path given.  The GIL is held
from the copies to the end, so one entry shared by threads stays safe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .c_entry_type import ARGUMENT_SOURCE, entry_type_source
from .python_extension import PythonExtension

__all__ = ["FACTOR_OFFSETS", "TREE_PRODUCTS_SOURCE", "WIDTH", "tree_products_entry"]

#: where the C code reads each factor in a speed's row of ``WIDTH`` values (the layout of
#: ``symbody.robots.rnea_derivatives.FACTOR_FIELDS``, which a test holds equal)
FACTOR_OFFSETS = {"S": 0, "P": 6, "Q": 12, "gamma": 15, "beta": 21, "psi": 24, "dq_up": 30,
                  "du_up": 36}
WIDTH = 42
_C_NAMES = {"S": "S_", "P": "P_", "Q": "Q_", "gamma": "GAMMA", "beta": "BETA", "psi": "PSI",
            "dq_up": "DQ_UP", "du_up": "DU_UP"}

TREE_PRODUCTS_SOURCE = (r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define NGROUPS 3
/* the offsets of one speed's factors (FACTOR_OFFSETS in Python) */
enum { @OFFSETS@ };
typedef void (*kernel_fn)(const double *, double *);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    kernel_fn kernel;
    double *z, *F;
    const double *diagonal;
    const int64_t *lo, *hi, *above_at, *above, *pos;
    Py_ssize_t sizes[NGROUPS], n, width;
    npy_intp dims[3];
    PyObject *owner, *fallback;
} TreeProductsEntry;

"""
    + ARGUMENT_SOURCE
    + r"""

static inline double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline double dot6(const double *a, const double *b)
{
    return dot3(a, b) + dot3(a + 3, b + 3);
}

/* gcc: an AVX2/FMA clone chosen at load time where the CPU has it (the cached library
   stays right on any x86-64) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && __GNUC__ >= 6
#define VECTOR_CLONES __attribute__((target_clones("avx2,fma", "default")))
#else
#define VECTOR_CLONES
#endif

VECTOR_CLONES
static void products(const TreeProductsEntry *s, double *o0)
{
    Py_ssize_t n = s->n, w = s->width, nn = n * n, c, k, t;
    double *o1 = o0 + nn, *o2 = o1 + nn;
    const double *F = s->F;
    memset(o0, 0, (size_t)(3 * nn) * sizeof(double));
    for (c = 0; c < n; ++c) {
        const double *fc = F + c * w;
        const int64_t pc = s->pos[c];
        for (k = s->lo[c]; k <= s->hi[c]; ++k) {
            const double *fk = F + k * w;
            const Py_ssize_t r = s->pos[k] * n + pc;
            const double m = dot6(fk + P_, fc + S_);
            o0[r] = -(dot6(fk + P_, fc + GAMMA) + dot3(fk + Q_, fc + BETA));
            o1[r] = dot6(fk + P_, fc + PSI) + dot3(fk + Q_, fc + S_);
            o2[r] = m;
            o2[pc * n + s->pos[k]] = m;
        }
        for (t = s->above_at[c]; t < s->above_at[c + 1]; ++t) {
            const double *fa = F + s->above[t] * w;
            const Py_ssize_t r = s->pos[s->above[t]] * n + pc;
            o0[r] = dot6(fa + S_, fc + DQ_UP);
            o1[r] = dot6(fa + S_, fc + DU_UP);
        }
    }
    for (c = 0; c < n; ++c) o1[s->pos[c] * (n + 1)] += s->diagonal[c];
}

static PyObject *call(TreeProductsEntry *self, PyObject *const *args, size_t nargsf,
                      PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *out;
    if (nargs != NGROUPS || (kwnames && PyTuple_GET_SIZE(kwnames)))
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    if (copy_groups(self->z, self->sizes, args, nargs))
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    out = PyArray_SimpleNew(3, self->dims, NPY_DOUBLE);
    if (out == NULL) return NULL;
    self->kernel(self->z, self->F);
    products(self, (double *)PyArray_DATA((PyArrayObject *)out));
    return out;
}

"""
    + entry_type_source('TreeProductsEntry', 'symbody_tree_products.TreeProductsEntry',
                        ('owner', 'fallback'),
                        'D = f(q, u, u_dot): a kernel of per-speed factors, then their products')
    + r"""

static PyObject *make(PyObject *module, PyObject *args)
{
    unsigned long long kernel, z, F, diagonal, lo, hi, above_at, above, pos;
    Py_ssize_t nq, nu, nud, n, width;
    PyObject *owner, *fb;
    TreeProductsEntry *self;
    if (!PyArg_ParseTuple(args, "KKKKKKKKKnnnnnOO", &kernel, &z, &F, &diagonal, &lo, &hi,
                          &above_at, &above, &pos, &nq, &nu, &nud, &n, &width, &owner, &fb))
        return NULL;
    self = PyObject_GC_New(TreeProductsEntry, &TreeProductsEntryType);
    if (self == NULL) return NULL;
    self->vectorcall = (vectorcallfunc)call;
    self->kernel = (kernel_fn)(uintptr_t)kernel;
    self->z = (double *)(uintptr_t)z;
    self->F = (double *)(uintptr_t)F;
    self->diagonal = (const double *)(uintptr_t)diagonal;
    self->lo = (const int64_t *)(uintptr_t)lo;
    self->hi = (const int64_t *)(uintptr_t)hi;
    self->above_at = (const int64_t *)(uintptr_t)above_at;
    self->above = (const int64_t *)(uintptr_t)above;
    self->pos = (const int64_t *)(uintptr_t)pos;
    self->sizes[0] = nq; self->sizes[1] = nu; self->sizes[2] = nud;
    self->n = n; self->width = width;
    self->dims[0] = 3; self->dims[1] = n; self->dims[2] = n;
    Py_INCREF(owner); self->owner = owner;
    Py_INCREF(fb); self->fallback = fb;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

static PyMethodDef methods[] = {
    {"make", make, METH_VARARGS, "make(kernel, z, F, diagonal, lo, hi, above_at, above, pos, "
     "nq, nu, nud, n, width, owner, fallback)"},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "symbody_tree_products", NULL, -1,
                                       methods};

PyMODINIT_FUNC PyInit_symbody_tree_products(void)
{
    import_array();
    if (PyType_Ready(&TreeProductsEntryType) < 0) return NULL;
    return PyModule_Create(&moduledef);
}
""").replace("@OFFSETS@", ", ".join(f"{_C_NAMES[k]} = {v}" for k, v in FACTOR_OFFSETS.items()))

_EXTENSION = PythonExtension("symbody_tree_products", TREE_PRODUCTS_SOURCE, "tree-products",
                             numpy=True, opt="-O3")


def tree_products_entry(kernel: Any, sizes: Sequence[int], constants: np.ndarray | None,
                        subtree: Sequence[tuple[int, int]], above: Sequence[Sequence[int]],
                        pos: Sequence[int], diagonal: Sequence[float],
                        careful: Callable) -> Callable | None:
    """``entry(q, u, u_dot)`` -> (3, n, n) (see the module docstring), None when the kernel is
    not generated C or there is no compiler.

    ``kernel``: z = [q, u, u_dot, constants] -> n x ``WIDTH`` factors (speed c's at
    c * WIDTH); ``subtree[c]`` = (lo, hi), ``above[c]``: the speeds whose rows column c
    fills (tree order); ``pos[c]``: the output's row and column of tree speed c;
    ``diagonal[c]``: added to out[1, pos[c], pos[c]].
    """
    from .native_rhs import c_function_address

    n = len(subtree)
    if kernel.nout != n * WIDTH or len(sizes) != 3 or len(above) != n or len(pos) != n \
            or len(diagonal) != n or sorted(pos) != list(range(n)) \
            or any(not 0 <= lo <= hi < n for lo, hi in subtree) \
            or any(not 0 <= a < n for row in above for a in row):
        raise ValueError("tree_products_entry: inconsistent sizes or speeds")
    address = c_function_address(kernel)
    module = _EXTENSION.module() if address is not None else None
    if module is None:
        return None
    z = np.zeros(kernel.nargs)
    given = int(sum(sizes))
    if constants is not None and given < kernel.nargs:
        z[given:] = constants
    F = np.zeros(n * WIDTH)
    at = np.concatenate([[0], np.cumsum([len(row) for row in above])])
    tables = [np.ascontiguousarray(x, dtype=np.int64) for x in (
        [s[0] for s in subtree], [s[1] for s in subtree], at,
        [a for row in above for a in row] or [0], pos)]
    diag = np.ascontiguousarray(diagonal, dtype=float)
    real = kernel.realize()
    # the owner keeps the buffers, the tables and the kernel's library alive as long as the entry
    owner = (z, F, diag, tables, real, getattr(real, "library", None))
    return module.make(address, z.ctypes.data, F.ctypes.data, diag.ctypes.data,
                       *(t.ctypes.data for t in tables), *(int(s) for s in sizes), n, WIDTH,
                       owner, careful)
