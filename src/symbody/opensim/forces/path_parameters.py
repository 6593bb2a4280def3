"""A model's path parameters from the state in one C call (``path_parameters.c``).

:class:`~.ellipsoid_path.EllipsoidParameters` computes, before every evaluation, the
stations of the paths over one ellipsoid (r1, r2, s per candidate segment) and the length
and body wrenches of the paths over several wrap objects, from q.  Here all of it is one C
function, ``int symbody_path_parameters(plan, t, x, out)``: a generated kernel (the wraps'
inputs as expressions of q: the segment ends in the wrap frames, the path points in ground
and their bodies' poses) followed by OpenSim's routines (``ellipsoid_wrap.c``,
``cylinder_wrap.c``, ``multi_wrap.c``) -- so an integrator whose steps run in compiled code
computes the parameters without Python (:meth:`NativePathParameters.entry`, the
``native_entry`` of the model's ``eom.derived_inputs``), and the Python path
(:meth:`NativePathParameters.__call__`) gets the same numbers, bit for bit.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import sympy as sm

from .ellipsoid_native import METHODS

__all__ = ["NativePathParameters", "native_path_parameters"]


class _Plan(ctypes.Structure):
    _fields_ = [("stage", ctypes.c_void_p), ("stage_out", ctypes.c_void_p),
                ("nslots", ctypes.c_long), ("ncalls", ctypes.c_long), ("nmulti", ctypes.c_long),
                ("calls", ctypes.c_void_p), ("multi", ctypes.c_void_p)]


class PathEntry:
    """One plan of ``symbody_path_parameters`` with buffers of its own (one per integration:
    not shared between threads): ``function`` and ``plan`` are the addresses a compiled
    caller uses (``function(plan, t, x, out)``, ``out`` of ``size`` values)."""

    def __init__(self, owner: NativePathParameters) -> None:
        self._owner = owner                    # (keeps the kernel and the tables alive)
        self.stage_out = np.empty(max(owner.stage.nout, 1))
        self._plan = _Plan(stage=owner.stage_address, stage_out=self.stage_out.ctypes.data,
                           nslots=owner.nslots, ncalls=owner.ncalls, nmulti=owner.nmulti,
                           calls=owner.calls.ctypes.data, multi=owner.multi.ctypes.data)
        self.plan = ctypes.addressof(self._plan)
        self.function = owner.function_address
        self.size = owner.size


class NativePathParameters:
    """``values = f(x)`` (x: the state, q first; values in ``EllipsoidParameters`` order) in
    one C call; :meth:`entry` gives a plan for compiled callers."""

    def __init__(self, stage: Any, stage_address: int, module: Any, nslots: int, calls: list,
                 multi: list, size: int) -> None:
        self.stage, self.stage_address = stage, stage_address
        self.nslots, self.size = nslots, size
        self.ncalls = len(calls)
        self.nmulti = len(multi)
        self.calls = np.asarray([v for rec in calls for v in rec] or [0.0], dtype=float)
        self.multi = np.asarray([v for rec in multi for v in rec] or [0.0], dtype=float)
        self.function_address = int(module.entry())
        self._call = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_double,
                                      ctypes.c_void_p, ctypes.c_void_p)(self.function_address)

    def entry(self) -> PathEntry:
        """A fresh plan (own buffers) for one compiled caller."""
        return PathEntry(self)

    def stage_values(self, x: Any) -> np.ndarray:
        """The wraps' inputs at x (the kernel's outputs)."""
        return self.stage(np.ascontiguousarray(np.asarray(x, dtype=float)[:self.stage.nargs]))

    def __call__(self, x: Any) -> np.ndarray:
        """The path parameters (``size``,) at the state (or coordinates) x."""
        x = np.ascontiguousarray(np.asarray(x, dtype=float)[:self.stage.nargs])
        entry = PathEntry(self)                # (own buffers: callers may be threads)
        out = np.empty(self.size)
        if self._call(entry.plan, 0.0, x.ctypes.data, out.ctypes.data):
            raise ValueError("a path over several wrap objects has fields out of range")
        return out


def native_path_parameters(params: Any, q_symbols: list) -> NativePathParameters | None:
    """The C form of ``params`` (an :class:`~.ellipsoid_path.EllipsoidParameters`), or None
    without a C compiler (the Python path then stays)."""
    from ...compilation import c_kernels
    from ...compilation.codegen import compile_kernel
    from ...compilation.native_rhs import c_function_address
    from .multi_wrap import _module

    if c_kernels.compiler_available() is None:
        return None
    module = _module()
    if module is None:
        return None
    slots, multi = params._slots, params._multi        # noqa: SLF001 (its own tables)
    ends = [x for s in slots for e in s.ends for x in e]
    inputs = [x for pw in multi for x in pw.inputs]
    exprs = ends + inputs
    if not exprs:
        return None
    args = [sm.Symbol(str(s)) for s in q_symbols]
    stage = compile_kernel(args, exprs, backend="c", name="opensim path inputs")
    address = c_function_address(stage)
    if address is None:
        return None
    calls = []
    for wrap, ks in params._calls:                     # noqa: SLF001
        calls.append([*map(float, wrap.dims), float(wrap.axis), float(wrap.sign),
                      float(METHODS[wrap.method]), float(len(ks)), *map(float, ks)])
    records, offset = [], len(ends)
    for pw in multi:
        spec = pw._spec                                # noqa: SLF001
        records.append([float(pw.n), float(pw.nbodies),
                        float(len(spec) // 24), float(offset), *pw.point_bodies, *spec])
        offset += len(pw.inputs)
    size = 7 * len(slots) + sum(1 + 12 * pw.nbodies for pw in multi)
    return NativePathParameters(stage, address, module, len(slots), calls, records, size)
