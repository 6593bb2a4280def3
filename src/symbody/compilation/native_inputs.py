"""Specified inputs given as expressions of t (and of the state and constants), computed in
C before each evaluation, so that the compiled steps need no Python between evaluations.

``sb.simulate(..., specifieds={"F": sp.sin(t)})`` compiles the expressions as one kernel
r_e = k(t, x, p) (:func:`~symbody.compilation.codegen.make_function`'s arguments
[t, states, constants]).  :func:`expression_inputs_entry` gives the same kernel in generated
C behind the derived-inputs interface of :mod:`.native_derived`::

    int symbody_expression_inputs(eplan *E, double t, const double *x, double *out)

(z = [t, x, p] with p written once; out: the expressions' values, in their inputs' order), so
the compiled right-hand side writes them into its argument vector before each evaluation.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from . import c_kernels
from .codegen import compile_kernel
from .native_rhs import build_source, c_function_address

__all__ = ["EXPRESSION_INPUTS_SOURCE", "ExpressionInputsEntry", "expression_inputs_entry"]

EXPRESSION_INPUTS_SOURCE = r"""
#include <string.h>
typedef void (*kernel_fn)(const double *, double *);
typedef struct { kernel_fn kernel; double *z; long nx; } eplan;

int symbody_expression_inputs(eplan *E, double t, const double *x, double *out)
{
    E->z[0] = t;
    memcpy(E->z + 1, x, (size_t)E->nx * sizeof(double));
    E->kernel(E->z, out);
    return 0;
}
"""


class _EPlan(ctypes.Structure):
    _fields_ = [("kernel", ctypes.c_void_p), ("z", ctypes.c_void_p), ("nx", ctypes.c_long)]


class ExpressionInputsEntry:
    """The C entry of expression inputs (:mod:`.native_derived`'s interface): ``function``
    (``int f(plan, t, x, out)``), ``plan``, ``size`` (the number of expressions) and ``nx``
    (the state's length it reads)."""

    def __init__(self, kernel: Any, address: int, library: ctypes.CDLL, nx: int,
                 constants: np.ndarray) -> None:
        self.kernel, self.library, self.nx = kernel, library, int(nx)
        self.size = int(kernel.nout)
        self.z = np.zeros(1 + self.nx + len(constants))
        self.z[1 + self.nx:] = constants
        self._plan = _EPlan(kernel=address, z=self.z.ctypes.data, nx=self.nx)
        self.plan = ctypes.addressof(self._plan)
        self.function = ctypes.cast(library.symbody_expression_inputs, ctypes.c_void_p).value


def expression_inputs_entry(time: Any, states: list, constants: list, exprs: list,
                            values: np.ndarray) -> ExpressionInputsEntry | None:
    """The C entry computing ``exprs`` (SymPy, in ``time``, the ``states`` and the
    ``constants``, whose values are ``values`` (len(constants),)) from (t, x), or None
    without a C compiler."""
    if not exprs or c_kernels.compiler_available() is None:
        return None
    kernel = compile_kernel([time, *states, *constants], list(exprs), backend="c",
                            name="specified inputs (C)")
    address = c_function_address(kernel)
    if address is None:
        return None
    try:
        library = build_source(EXPRESSION_INPUTS_SOURCE, "native-expression-inputs")
    except RuntimeError:
        return None
    if library is None:
        return None
    return ExpressionInputsEntry(kernel, address, library, len(states),
                                 np.asarray(values, dtype=float).ravel())
