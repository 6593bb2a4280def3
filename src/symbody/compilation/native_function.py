"""A compiled function of argument groups called from Python through one compiled entry.

``f(a_1, ..., a_n)`` of a :class:`~.codegen.NumericFunction` whose kernel is generated C
costs, on the Python path, a few array checks, one copy per group into the argument vector z
and the ctypes call: 4-7 us on a robot's regressor, where the kernel takes about one.  Like
:mod:`.native_entry` for ``model.rhs``, a tiny CPython extension type (built once per machine
and Python with the system's C compiler, cached by the hash of its source and digest-checked
on load like the kernels) puts a vectorcall callable in front of the kernel: when the n
arguments are all C-contiguous float64 buffers of one dimension and of their groups' sizes
(NumPy arrays read through NumPy's C API, other objects through the buffer protocol), they
are copied into z (whose tail holds the constants), ``symbody_kernel(z, out)`` runs into a
new array of the function's shape (``PyArray_SimpleNew``) and that array is returned.
Anything else (batches, lists, other dtypes, keywords) goes to the careful path, the Python
callable given, with the same arguments.  The extension holds the GIL from the copies to
the end of the kernel, so one entry shared by threads stays safe.  Without a C compiler or
Python headers, or for a kernel that is neither generated C nor symengine's LLVM (whose
``LLVMDouble.as_ctypes`` callback the entry calls the same way), :func:`function_entry`
returns None.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .c_entry_type import ARGUMENT_SOURCE, entry_type_source
from .python_extension import PythonExtension

__all__ = ["FUNCTION_ENTRY_SOURCE", "function_entry"]

#: at most this many argument groups go through the entry (more: the careful path)
MAX_GROUPS = 8

#: The extension module: one type, ``FunctionEntry``, made by ``make(kernel, llvm, z, sizes,
#: nout, shape, owner, fallback)`` (``llvm``: 0 for generated C's ``symbody_kernel``,
#: else the address of the symengine ``LLVMDouble`` the callback ``kernel`` takes).
FUNCTION_ENTRY_SOURCE = (r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MAX_GROUPS 8
typedef void (*kernel_fn)(const double *, double *);
/* symengine's LLVM kernels, through LLVMDouble.as_ctypes(): (out, z, the LLVMDouble) */
typedef void (*llvm_fn)(double *, const double *, void *);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    kernel_fn kernel;
    void *llvm;             /* NULL: kernel(z, out); else ((llvm_fn)kernel)(out, z, llvm) */
    double *z;
    Py_ssize_t ngroups, sizes[MAX_GROUPS];
    int nd;
    npy_intp dims[NPY_MAXDIMS];
    PyObject *owner, *fallback, *shape;
} FunctionEntry;

"""
    + ARGUMENT_SOURCE
    + r"""

static PyObject *call(FunctionEntry *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *out;
    if (nargs != self->ngroups || (kwnames && PyTuple_GET_SIZE(kwnames)))
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    if (copy_groups(self->z, self->sizes, args, nargs))
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    out = PyArray_SimpleNew(self->nd, self->dims, NPY_DOUBLE);
    if (out == NULL) return NULL;
    if (self->llvm)
        ((llvm_fn)(void *)self->kernel)((double *)PyArray_DATA((PyArrayObject *)out), self->z,
                                        self->llvm);
    else
        self->kernel(self->z, (double *)PyArray_DATA((PyArrayObject *)out));
    return out;
}

"""
    + entry_type_source('FunctionEntry', 'symbody_function_entry.FunctionEntry',
                        ('owner', 'fallback', 'shape'),
                        'out = f(a_1, ..., a_n) of one compiled function of argument groups')
    + r"""

static PyObject *make(PyObject *module, PyObject *args)
{
    unsigned long long kernel, llvm, z;
    PyObject *sizes, *shape, *owner, *fb;
    Py_ssize_t nout, i, n, nd, total = 1;
    FunctionEntry *self;
    if (!PyArg_ParseTuple(args, "KKKO!nO!OO", &kernel, &llvm, &z, &PyTuple_Type, &sizes, &nout,
                          &PyTuple_Type, &shape, &owner, &fb))
        return NULL;
    n = PyTuple_GET_SIZE(sizes);
    nd = PyTuple_GET_SIZE(shape);
    if (n > MAX_GROUPS || nd < 1 || nd > NPY_MAXDIMS) {
        PyErr_SetString(PyExc_ValueError, "too many argument groups or dimensions");
        return NULL;
    }
    for (i = 0; i < nd; i++) total *= PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
    if (PyErr_Occurred()) return NULL;
    if (total != nout) {
        PyErr_SetString(PyExc_ValueError, "the shape does not hold the kernel's outputs");
        return NULL;
    }
    self = PyObject_GC_New(FunctionEntry, &FunctionEntryType);
    if (self == NULL) return NULL;
    self->vectorcall = (vectorcallfunc)call;
    self->kernel = (kernel_fn)(uintptr_t)kernel;
    self->llvm = (void *)(uintptr_t)llvm;
    self->z = (double *)(uintptr_t)z;
    self->ngroups = n;
    for (i = 0; i < n; i++) self->sizes[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(sizes, i));
    self->nd = (int)nd;
    for (i = 0; i < nd; i++) self->dims[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
    Py_INCREF(owner); self->owner = owner;
    Py_INCREF(fb); self->fallback = fb;
    Py_INCREF(shape); self->shape = shape;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

static PyMethodDef methods[] = {
    {"make", make, METH_VARARGS,
     "make(kernel, llvm, z, sizes, nout, shape, owner, fallback)"},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "symbody_function_entry", NULL, -1,
                                       methods};

PyMODINIT_FUNC PyInit_symbody_function_entry(void)
{
    import_array();
    if (PyType_Ready(&FunctionEntryType) < 0) return NULL;
    return PyModule_Create(&moduledef);
}
""")

_EXTENSION = PythonExtension("symbody_function_entry", FUNCTION_ENTRY_SOURCE, "function-entry",
                             numpy=True)


def extension() -> Any | None:
    """The extension module (built on first use, cached on disk by the hash of its source,
    the compiler and this Python's ABI), None without a working C compiler or Python headers."""
    return _EXTENSION.module()


def function_entry(kernel: Any, sizes: Sequence[int], constants: np.ndarray | None,
                   shape: tuple, careful: Callable) -> Callable | None:
    """``entry(a_1, ..., a_n)``: ``kernel`` (z = [a_1, ..., a_n, constants]) into a new array
    of ``shape`` when every a_i is a float64 vector of ``sizes[i]`` values, else
    ``careful(a_1, ..., a_n)``; None when the kernel is neither generated C nor symengine's
    LLVM (or there is no compiler for the extension)."""
    from .native_rhs import c_function_address

    if len(sizes) > MAX_GROUPS or not shape:
        return None
    real = kernel.realize()
    address, llvm = c_function_address(real), None
    if address is None:
        address, llvm = llvm_function_address(real)
        if address is None:
            return None
    module = extension()
    if module is None:
        return None
    z = np.zeros(kernel.nargs)
    given = int(sum(sizes))
    if constants is not None and given < kernel.nargs:
        z[given:] = constants
    # the owner keeps z and the kernel's library (or LLVMDouble) alive as long as the entry
    owner = (z, real, getattr(real, "library", None), llvm)
    return module.make(address, 0 if llvm is None else llvm[1], z.ctypes.data,
                       tuple(int(s) for s in sizes), int(kernel.nout),
                       tuple(int(s) for s in shape), owner, careful)


def llvm_function_address(kernel: Any) -> tuple[int | None, Any]:
    """``(address, (lambdify, its address))`` of a symengine LLVM kernel's ctypes callback
    ``f(out, z, lambdify)`` (``LLVMDouble.as_ctypes``), ``(None, None)`` for other kernels."""
    lam = getattr(kernel.into, "__self__", None)
    if kernel.backend != "llvm" or type(lam).__name__ != "LLVMDouble" \
            or not hasattr(lam, "as_ctypes"):
        return None, None
    function, user = lam.as_ctypes()
    address = ctypes.cast(function, ctypes.c_void_p).value
    if not address or not user.value:
        return None, None
    return address, (lam, user.value)
