"""The compiled right-hand side of a model with derived inputs, computed in C before each
evaluation.

A model may compute some of its specified inputs itself from the state (``eom.
derived_inputs``, e.g. the stations and wrenches of OpenSim paths over wrap objects); inputs
given as SymPy expressions of t and the state are computed the same way
(:mod:`.native_inputs`).  When
that computation is a C function too -- the derived inputs' ``native_entry()`` gives a plan
with ``function`` (``int f(plan, t, x, out)``, 0 when done), ``plan`` and ``size`` -- the
right-hand side needs no Python between evaluations::

    int symbody_derived_rhs(dplan *D, double t, const double *x, double *xdot)

writes f's ``size`` values into the inner right-hand side's argument vector z (at the
specified inputs' positions ``slots``, offsets into z) and calls it
(:class:`~.native_rhs.NativeRHS` or :class:`~.native_partition.NativePartitionRHS`).  A
nonzero return (the derived function's or the inner one's) leaves the evaluation to the
Python path, as :mod:`.native_rhs` says.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from .native_rhs import build_source

__all__ = ["DERIVED_SOURCE", "NativeDerivedRHS", "with_derived_inputs"]

DERIVED_SOURCE = r"""
typedef int (*fn)(void *, double, const double *, double *);
typedef struct {
    fn rhs; void *inner;
    fn derived; void *dplan;
    double *z, *out;
    const long *slots;
    long k;
} dplan;

int symbody_derived_rhs(dplan *D, double t, const double *x, double *xdot)
{
    long i;
    if (D->derived(D->dplan, t, x, D->out)) return 1;
    for (i = 0; i < D->k; i++) D->z[D->slots[i]] = D->out[i];
    return D->rhs(D->inner, t, x, xdot);
}
"""


class _DPlan(ctypes.Structure):
    _fields_ = [("rhs", ctypes.c_void_p), ("inner", ctypes.c_void_p),
                ("derived", ctypes.c_void_p), ("dplan", ctypes.c_void_p),
                ("z", ctypes.c_void_p), ("out", ctypes.c_void_p),
                ("slots", ctypes.c_void_p), ("k", ctypes.c_long)]


class NativeDerivedRHS:
    """``symbody_derived_rhs`` around a compiled right-hand side ``inner`` (an object with
    ``function``, ``plan``, ``z``, ``nx``) and a derived-inputs plan ``entry``: the same
    interface as :class:`~.native_rhs.NativeRHS` (``function``, ``plan``, ``nfev``, called
    as ``(t, x) -> (x', status)``); one per integration."""

    def __init__(self, inner: Any, entry: Any, slots: np.ndarray, library: ctypes.CDLL) -> None:
        self.inner, self.entry = inner, entry
        self.slots = np.ascontiguousarray(slots, dtype=np.int_)
        self.out = np.empty(max(int(entry.size), 1))
        self._plan = _DPlan(rhs=inner.function, inner=inner.plan, derived=entry.function,
                            dplan=entry.plan, z=inner.z.ctypes.data, out=self.out.ctypes.data,
                            slots=self.slots.ctypes.data, k=len(self.slots))
        self.plan = ctypes.addressof(self._plan)
        self.library = library
        self.function = ctypes.cast(library.symbody_derived_rhs, ctypes.c_void_p).value
        fn = library.symbody_derived_rhs
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p]
        self._call = fn
        self.nx = inner.nx
        #: the inner plan's argument vector (another set of derived inputs may wrap this one)
        self.z = inner.z
        #: (no blocks of states: each needs its own derived inputs)
        self.block = None

    @property
    def nfev(self) -> int:
        """Evaluations made through the inner plan so far."""
        return int(self.inner.nfev)

    def __call__(self, t: float, x: np.ndarray) -> tuple[np.ndarray, int]:
        """(x', status) at (t, x) (status 0: done; otherwise x' is not valid)."""
        x = np.ascontiguousarray(x, dtype=float)
        xdot = np.empty(self.nx)
        status = self._call(self.plan, float(t), x.ctypes.data, xdot.ctypes.data)
        return xdot, int(status)


def with_derived_inputs(inner: Any, derived: Any, z_offset: int) -> NativeDerivedRHS | None:
    """``inner`` (a compiled right-hand side, or None) with the model's derived inputs
    ``derived`` (``indices``: their positions among the specified inputs; ``native_entry()``)
    computed in C before each evaluation; the specified inputs start at ``z_offset`` in the
    inner plan's z.  None where either part cannot run in C."""
    if inner is None or not hasattr(inner, "z"):
        return None
    native_entry = getattr(derived, "native_entry", None)
    entry = native_entry() if callable(native_entry) else None
    if entry is None or int(entry.size) != len(derived.indices):
        return None
    if getattr(entry, "nx", inner.nx) != inner.nx:      # (it reads a state of another length)
        return None
    try:
        library = build_source(DERIVED_SOURCE, "native-derived")
    except RuntimeError:
        return None
    if library is None:
        return None
    slots = z_offset + np.asarray(derived.indices, dtype=np.int_)
    return NativeDerivedRHS(inner, entry, slots, library)
