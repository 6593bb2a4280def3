"""The CPython type of a compiled entry, as C source.

The entries in front of compiled kernels (:mod:`.native_entry`, :mod:`.native_function`,
:mod:`.native_tree_solve`, :mod:`.native_tree_products`) are small extension types: a
garbage-collected object called through vectorcall that holds Python references (its owner,
the Python fallback, shapes) next to raw pointers.  :func:`entry_type_source` writes their
shared part -- ``tp_traverse`` and ``tp_clear`` over those references, ``tp_dealloc``,
``tp_call`` through vectorcall and the type object ``<struct>Type`` -- for a struct whose
``vectorcall`` member is its calling slot.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["entry_type_source", "ARGUMENT_SOURCE"]

#: C: ``is_double_format`` (a buffer's format is float64) and ``copy_groups``, which copies
#: the argument groups -- float64 vectors of ``sizes[i]`` values, numpy arrays read directly
#: where the NumPy C API is included -- one after another into z (0), or answers 1 where an
#: argument is not such a vector (the entry then calls its Python fallback)
ARGUMENT_SOURCE = r"""
static int is_double_format(const char *f)
{
    if (f == NULL) return 1;
    if ((f[0] == '<' || f[0] == '=' || f[0] == '@') && f[1] == 'd' && f[2] == 0) return 1;
    return f[0] == 'd' && f[1] == 0;
}

static int copy_groups(double *z, const Py_ssize_t *sizes, PyObject *const *args,
                       Py_ssize_t nargs)
{
    Py_ssize_t i, at = 0;
    Py_buffer view;
    for (i = 0; i < nargs; i++) {
#ifdef PyArray_CheckExact
        if (PyArray_CheckExact(args[i])) {      /* a float64 vector: its data, no buffer */
            PyArrayObject *a = (PyArrayObject *)args[i];
            if (PyArray_NDIM(a) != 1 || PyArray_DIM(a, 0) != sizes[i]
                || PyArray_TYPE(a) != NPY_DOUBLE || !PyArray_ISCARRAY_RO(a)
                || !PyArray_ISNOTSWAPPED(a))
                return 1;
            memcpy(z + at, PyArray_DATA(a), (size_t)sizes[i] * sizeof(double));
            at += sizes[i];
            continue;
        }
#endif
        if (PyObject_GetBuffer(args[i], &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
            PyErr_Clear();
            return 1;
        }
        if (view.ndim != 1 || view.itemsize != 8 || !is_double_format(view.format)
            || view.shape[0] != sizes[i]) {
            PyBuffer_Release(&view);
            return 1;
        }
        memcpy(z + at, view.buf, (size_t)sizes[i] * sizeof(double));
        at += sizes[i];
        PyBuffer_Release(&view);
    }
    return 0;
}
"""


def entry_type_source(struct: str, qualname: str, references: Sequence[str], doc: str) -> str:
    """C source of the type ``<struct>Type`` (``tp_name`` ``qualname``, ``tp_doc`` ``doc``)
    whose instances own the ``PyObject *`` members ``references`` of ``struct``."""
    visit = "".join(f"    Py_VISIT(self->{m});\n" for m in references)
    clear = "".join(f"    Py_CLEAR(self->{m});\n" for m in references)
    return f"""
static int entry_traverse({struct} *self, visitproc visit, void *arg)
{{
{visit}    return 0;
}}

static int entry_clear({struct} *self)
{{
{clear}    return 0;
}}

static void entry_dealloc({struct} *self)
{{
    PyObject_GC_UnTrack(self);
    entry_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}}

static PyObject *entry_call(PyObject *self, PyObject *args, PyObject *kwargs)
{{
    return PyVectorcall_Call(self, args, kwargs);
}}

static PyTypeObject {struct}Type = {{
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "{qualname}",
    .tp_basicsize = sizeof({struct}),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof({struct}, vectorcall),
    .tp_call = entry_call,
    .tp_traverse = (traverseproc)entry_traverse,
    .tp_clear = (inquiry)entry_clear,
    .tp_dealloc = (destructor)entry_dealloc,
    .tp_doc = "{doc}",
}};
"""
