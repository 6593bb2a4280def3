"""``model.rhs`` and ``model.rhs_many`` from Python through one compiled entry.

A call of ``model.rhs(t, x, p)`` on the Python path costs argument checks, several Python
calls and two LAPACK wrappers: 7-15 us on small models, while the work itself (the
kernels and a dense solve, :mod:`.native_rhs`'s ``symbody_rhs``) takes about a microsecond.
When :func:`.native_rhs.native_rhs` can build the model's right-hand side as one C
function, this module puts a tiny CPython extension type in front of it (built once per
machine and Python with the system's C compiler, cached by the hash of its source and
digest-checked on load like the kernels) whose instances are vectorcall callables:

* ``rhs(t, x, p, r=None, partition=None)``: when ``x`` is a C-contiguous float64 buffer
  of ``nx`` values, ``p`` one of ``c`` values (or None without constants), ``t`` a number,
  ``r`` None (no specified inputs) or ``s`` finite float64 values and ``partition`` None,
  the constants and inputs are copied into the plan's argument vector z, ``symbody_rhs``
  runs and a new float array (``numpy.empty(nx)``) gets x';
* ``rhs_many(t, X, p, r=None)``: the same for the rows of a C-contiguous (k, nx) float64
  buffer ``X``, one C loop over the states, ``t`` a number or k values, ``r`` s values or
  (k, s); returns (k, nx).

Anything else (a list, another dtype or shape, a dict of constants or inputs, inputs as a
function r(t, x), a partition, a singular or not positive definite system) goes to the
careful path, the
Python method, with the same arguments: it converts, raises the same errors naming what
is wrong, or solves the case the general way.  The numbers are the Python path's (the
same kernels) to round-off: ``symbody_rhs`` solves systems of up to 64 rows by its own LU
and Cholesky code where the Python path calls LAPACK (to the bit beyond, where both call
scipy's dgesv / dposv on the same inputs).
The extension holds the GIL throughout and calls no Python between filling z and
copying x' out, so a model shared by threads stays safe.  Without a C compiler, or for
models :func:`.native_rhs.native_rhs` does not take (LLVM kernels, extra states, an
augmented system with many constraint rows that the Python path solves by the null
space), :func:`entries` returns None and the Python methods stay.
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any

import numpy as np

from . import c_kernels
from .c_entry_type import ARGUMENT_SOURCE, entry_type_source
from .linear_algebra import REDUCED_KKT_MIN
from .native_rhs import RHS_SOURCE, build_source, native_rhs
from .python_extension import PythonExtension

if TYPE_CHECKING:
    from .kernel_layout import CompiledModel

__all__ = ["ENTRY_SOURCE", "entries", "extension"]

#: The extension module: one type, ``Entry``, made by ``make(kind, function, block, plan, z, nx,
#: ic, nc, ir, ns, owner, fallback, empty)``; kind 0 is rhs, kind 1 rhs_many.
ENTRY_SOURCE = (r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

typedef int (*rhs_fn)(void *plan, double t, const double *x, double *xdot);
typedef int (*block_fn)(void *plan, double t0, const double *T, const double *X, const double *R,
                        double *Y, long k);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int kind;
    rhs_fn rhs;
    block_fn block;
    void *plan;
    double *z;
    Py_ssize_t nx, ic, nc, ir, ns;
    PyObject *owner, *fallback, *empty, *shape;
} Entry;

"""
    + ARGUMENT_SOURCE
    + r"""

/* a C-contiguous float64 buffer of ndim dimensions; 0 when not (error cleared) */
static int get_doubles(PyObject *o, Py_buffer *view, int ndim)
{
    if (PyObject_GetBuffer(o, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
        PyErr_Clear();
        return 0;
    }
    if (view->ndim != ndim || view->itemsize != 8 || !is_double_format(view->format)) {
        PyBuffer_Release(view);
        return 0;
    }
    return 1;
}

static PyObject *fallback(Entry *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

/* t, x, p positional, then r (positional or keyword) and partition= None; *r: r or NULL */
static int plain_call(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, Py_ssize_t most,
                      PyObject **r)
{
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0, i;
    *r = NULL;
    if (nargs < 3 || nargs > most) return 0;
    if (nargs > 3) *r = args[3];
    for (i = 4; i < nargs; i++)
        if (args[i] != Py_None) return 0;
    for (i = 0; i < nkw; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        if (PyUnicode_CompareWithASCIIString(name, "r") == 0 && nargs == 3) {
            *r = args[nargs + i];
            continue;
        }
        if (args[nargs + i] != Py_None) return 0;
        if (most < 5 || PyUnicode_CompareWithASCIIString(name, "partition") != 0) return 0;
    }
    if (*r == Py_None) *r = NULL;
    return 1;
}

/* the specified inputs: k rows (k = 0: one row for all) of ns finite values; the buffer is
   held in *view (released by the caller when the return is 1 and view->obj is set) */
static int get_inputs(Entry *self, PyObject *r, Py_buffer *view, Py_ssize_t k, const double **R,
                      int *per_row)
{
    Py_ssize_t i, n;
    const double *v;
    view->obj = NULL;
    *R = NULL;
    *per_row = 0;
    if (self->ns == 0) {                           /* no inputs: r absent or empty */
        int empty;
        if (r == NULL) return 1;
        if (!get_doubles(r, view, 1)) { view->obj = NULL; return 0; }
        empty = view->shape[0] == 0;
        PyBuffer_Release(view);
        view->obj = NULL;
        return empty;
    }
    if (r == NULL) return 0;                       /* the careful path names what is missing */
    if (get_doubles(r, view, 1)) {
        if (view->shape[0] != self->ns) { PyBuffer_Release(view); view->obj = NULL; return 0; }
    } else if (k > 0 && get_doubles(r, view, 2)) {
        if (view->shape[0] != k || view->shape[1] != self->ns) {
            PyBuffer_Release(view); view->obj = NULL; return 0;
        }
        *per_row = 1;
    } else {
        view->obj = NULL;
        return 0;
    }
    v = (const double *)view->buf;
    n = *per_row ? k * self->ns : self->ns;
    for (i = 0; i < n; i++)
        if (!isfinite(v[i])) { PyBuffer_Release(view); view->obj = NULL; return 0; }
    *R = v;
    return 1;
}

static int set_constants(Entry *self, PyObject *p)
{
    Py_buffer pv;
    if (p == Py_None) return self->nc == 0;
    if (!get_doubles(p, &pv, 1)) return 0;
    if (pv.shape[0] != self->nc) { PyBuffer_Release(&pv); return 0; }
    memcpy(self->z + self->ic, pv.buf, (size_t)self->nc * sizeof(double));
    PyBuffer_Release(&pv);
    return 1;
}

static PyObject *new_array(Entry *self, PyObject *shape, double **data)
{
    Py_buffer ov;
    PyObject *out = PyObject_CallOneArg(self->empty, shape);
    if (out == NULL) return NULL;
    if (PyObject_GetBuffer(out, &ov, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0) {
        Py_DECREF(out);
        return NULL;
    }
    *data = (double *)ov.buf;       /* the array owns its memory: valid while out lives */
    PyBuffer_Release(&ov);
    return out;
}

static PyObject *call_rhs(Entry *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_buffer xv, rv;
    double t, *xdot;
    const double *R;
    PyObject *out, *r;
    int status, per_row;
    if (!plain_call(args, nargs, kwnames, 5, &r)) return fallback(self, args, nargsf, kwnames);
    t = PyFloat_AsDouble(args[0]);
    if (t == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return fallback(self, args, nargsf, kwnames); }
    if (!get_doubles(args[1], &xv, 1)) return fallback(self, args, nargsf, kwnames);
    if (xv.shape[0] != self->nx || !set_constants(self, args[2])) {
        PyBuffer_Release(&xv);
        return fallback(self, args, nargsf, kwnames);
    }
    if (!get_inputs(self, r, &rv, 0, &R, &per_row)) {
        PyBuffer_Release(&xv);
        return fallback(self, args, nargsf, kwnames);
    }
    if (R) {
        memcpy(self->z + self->ir, R, (size_t)self->ns * sizeof(double));
        PyBuffer_Release(&rv);
    }
    out = new_array(self, self->shape, &xdot);
    if (out == NULL) { PyBuffer_Release(&xv); return NULL; }
    status = self->rhs(self->plan, t, (const double *)xv.buf, xdot);
    PyBuffer_Release(&xv);
    if (status) { Py_DECREF(out); return fallback(self, args, nargsf, kwnames); }
    return out;
}

static PyObject *call_rhs_many(Entry *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), k, i;
    Py_buffer Xv, tv, rv;
    int have_tv = 0, status = 0, per_row = 0;
    double t0 = 0.0, *X, *Y, *T = NULL;
    const double *R = NULL;
    PyObject *out, *shape, *r;
    if (!plain_call(args, nargs, kwnames, 4, &r)) return fallback(self, args, nargsf, kwnames);
    if (PyFloat_Check(args[0]) || PyLong_Check(args[0])) {
        t0 = PyFloat_AsDouble(args[0]);
        if (t0 == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return fallback(self, args, nargsf, kwnames); }
    } else if (get_doubles(args[0], &tv, 1)) {
        have_tv = 1;
        T = (double *)tv.buf;
    } else {
        return fallback(self, args, nargsf, kwnames);
    }
    if (!get_doubles(args[1], &Xv, 2)) {
        if (have_tv) PyBuffer_Release(&tv);
        return fallback(self, args, nargsf, kwnames);
    }
    k = Xv.shape[0];
    if (Xv.shape[1] != self->nx || (have_tv && tv.shape[0] != k) || !set_constants(self, args[2])
        || !get_inputs(self, r, &rv, k, &R, &per_row)) {
        PyBuffer_Release(&Xv);
        if (have_tv) PyBuffer_Release(&tv);
        return fallback(self, args, nargsf, kwnames);
    }
    if (R && !per_row) memcpy(self->z + self->ir, R, (size_t)self->ns * sizeof(double));
    shape = Py_BuildValue("(nn)", k, self->nx);
    out = shape ? new_array(self, shape, &Y) : NULL;
    Py_XDECREF(shape);
    if (out != NULL) {
        X = (double *)Xv.buf;
        if (self->block)            /* many states at once through the forward kernel */
            status = self->block(self->plan, t0, have_tv ? T : NULL, X, per_row ? R : NULL, Y, k);
        else for (i = 0; i < k && !status; i++) {
            if (per_row) memcpy(self->z + self->ir, R + i * self->ns, (size_t)self->ns * sizeof(double));
            status = self->rhs(self->plan, have_tv ? T[i] : t0, X + i * self->nx, Y + i * self->nx);
        }
    }
    if (R) PyBuffer_Release(&rv);
    PyBuffer_Release(&Xv);
    if (have_tv) PyBuffer_Release(&tv);
    if (out == NULL) return NULL;
    if (status) { Py_DECREF(out); return fallback(self, args, nargsf, kwnames); }
    return out;
}

"""
    + entry_type_source('Entry', 'symbody_entry.Entry',
                        ('owner', 'fallback', 'empty', 'shape'),
                        "x' = f(t, x) of one model through its compiled right-hand side")
    + r"""

static PyObject *make(PyObject *module, PyObject *args)
{
    int kind;
    unsigned long long function, block, plan, z;
    Py_ssize_t nx, ic, nc, ir, ns;
    PyObject *owner, *fb, *empty;
    Entry *self;
    if (!PyArg_ParseTuple(args, "iKKKKnnnnnOOO", &kind, &function, &block, &plan, &z, &nx, &ic,
                          &nc, &ir, &ns, &owner, &fb, &empty))
        return NULL;
    self = PyObject_GC_New(Entry, &EntryType);
    if (self == NULL) return NULL;
    self->vectorcall = (vectorcallfunc)(kind ? call_rhs_many : call_rhs);
    self->kind = kind;
    self->rhs = (rhs_fn)(uintptr_t)function;
    self->block = (block_fn)(uintptr_t)block;
    self->plan = (void *)(uintptr_t)plan;
    self->z = (double *)(uintptr_t)z;
    self->nx = nx; self->ic = ic; self->nc = nc; self->ir = ir; self->ns = ns;
    Py_INCREF(owner); self->owner = owner;
    Py_INCREF(fb); self->fallback = fb;
    Py_INCREF(empty); self->empty = empty;
    self->shape = PyLong_FromSsize_t(nx);
    if (self->shape == NULL) { Py_DECREF(self); return NULL; }
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

static PyMethodDef methods[] = {
    {"make", make, METH_VARARGS, "make(kind, function, block, plan, z, nx, ic, nc, ir, ns, owner, fallback, empty)"},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "symbody_entry", NULL, -1, methods};

PyMODINIT_FUNC PyInit_symbody_entry(void)
{
    if (PyType_Ready(&EntryType) < 0) return NULL;
    return PyModule_Create(&moduledef);
}
""")

_EXTENSION = PythonExtension("symbody_entry", ENTRY_SOURCE, "rhs-entry")


def extension() -> Any | None:
    """The extension module (built on first use, cached on disk by the hash of its source,
    the compiler and this Python's ABI), None without a working C compiler or Python headers."""
    return _EXTENSION.module()


_PREPARED: list = []


def prepare_in_background() -> None:
    """Build the fixed helpers the compiled entry needs (:mod:`.native_rhs`'s routine and
    the extension; once per machine, then found in the kernel cache) in a background
    thread, once per process: started by ``symbody.compile`` with the model's C kernels, so
    that the first ``model.rhs`` call does not wait for them."""
    if _PREPARED or c_kernels.compiler_available() is None:
        return
    _PREPARED.append(True)
    from .codegen import background_pool

    def prepare() -> None:
        try:
            build_source(RHS_SOURCE, "native-rhs")
        except RuntimeError:
            pass
        extension()

    background_pool().submit(prepare)


def entries(model: CompiledModel, rhs: Any, rhs_many: Any) -> tuple[Any, Any] | None:
    """(rhs, rhs_many) entries of ``model``, whose careful paths are the Python callables
    ``rhs(t, x, p, r=None, partition=None)`` and ``rhs_many(t, X, p, r=None)``; None when the
    model's right-hand side cannot run as one C function (see the module docstring)."""
    L = model.layout
    if L.augmented and L.m >= REDUCED_KKT_MIN:
        return None
    native = native_rhs(model, np.zeros(L.c), np.zeros(L.s) if L.s else None)
    if native is None:
        return None
    module = extension()
    if module is None:
        return None
    function = ctypes.cast(native.library.symbody_rhs, ctypes.c_void_p).value
    z = native.z.ctypes.data
    made = []
    for kind, careful in ((0, rhs), (1, rhs_many)):
        block = native.block or 0 if kind else 0
        made.append(module.make(kind, function, block, native.plan, z, L.nx, L.ic, L.c, L.ir, L.s,
                                native, careful, np.empty))
    return made[0], made[1]

