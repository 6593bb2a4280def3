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

__all__ = ["entry_type_source"]


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
