"""A compiled function of a robot's state: ``f(q)``, ``f(q, u)`` or ``f(q, u, u_dot)``.

:class:`RobotFunction` is a :class:`~symbody.compilation.NumericFunction` whose argument
groups are named (``"q"``: the robot's N coordinates, ``"u"``: its o speeds, ``"u_dot"``:
their derivatives, ``"p"``: the constants, filled from ``robot.constants`` unless given), so
it evaluates one state or many at once (an extra leading dimension k on any argument),
goes to CasADi (``sb.to_casadi(f)``) and C (``sb.export_c(f, directory)``), and is a named
output of ``sb.simulate`` (``outputs={"tau": robot.inverse_dynamics}``).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ..compilation.codegen import NumericFunction, compile_kernel
from ..errors import InputError

__all__ = ["RobotFunction"]


class RobotFunction(NumericFunction):
    """``f(q[, u[, u_dot]], p=None)`` -> an array of ``shape`` (with a leading k for k states).

    ``argument_names``: the groups it takes, in order, among "q", "u", "u_dot" and "p";
    ``p`` (when it takes the constants) defaults to the robot's constants.  ``name``: what it
    computes (used in messages and as the exported function's name).
    """

    def __init__(self, name: str, groups: dict, exprs: list, shape: tuple, names: dict,
                 constants: np.ndarray | None = None, backend: str = "auto",
                 always_c: bool = False) -> None:
        flat = [a for g in groups.values() for a in g]
        # always_c: "auto" builds generated C whatever the size (as a model's kernels), so one
        # state of a small robot also goes through the compiled entry
        kernel = compile_kernel(flat, exprs, backend=backend, name=name, symengine_names=names,
                                model_kernel=always_c)
        self._setup(name, groups, shape, constants, kernel)

    def _setup(self, name: str, groups: dict, shape: tuple, constants: np.ndarray | None,
               kernel: Any) -> None:
        super().__init__([list(g) for g in groups.values()], [False] * len(groups), tuple(shape),
                         kernel, argument_names=tuple(groups))
        self.name = name
        self.constants = constants
        # the one-state fast path: argument sizes, the constants' place in z
        self._given = tuple(len(g) for n, g in groups.items() if n != "p")
        self._nargs, self._nout = kernel.nargs, kernel.nout

    def __reduce__(self):
        """Pickled as its kernel's stored expressions and machine code (the compiled entry and
        the per-thread buffers are made again on the first call), so process pools take it."""
        from ..compilation.persistence import pack_kernel

        return _restore, (self.name, dict(zip(self.argument_names, self.groups)), self.shape,
                          self.constants, pack_kernel(self.kernel))

    @property
    def takes_constants(self) -> bool:
        return "p" in self.argument_names

    def __call__(self, *values: Any, p: Any = None) -> np.ndarray:
        if p is None and len(values) == len(self._given):
            entry = self.__dict__.get("_entry")
            if entry is None:
                entry = self._make_entry()
            if entry:
                return entry(*values)
            out = self._one_state(values)
            if out is not None:
                return out
        return self._careful(values, p)

    def _make_entry(self) -> Any:
        """The compiled entry of one state (:mod:`symbody.compilation.native_function`), or
        False when there is none (a kernel neither generated C nor LLVM, no compiler)."""
        from ..compilation.native_function import function_entry

        def careful(*values: Any) -> np.ndarray:
            out = self._one_state(values)
            return out if out is not None else self._careful(values, None)

        entry = function_entry(self.kernel, self._given, self.constants, self.shape, careful)
        self.__dict__["_entry"] = entry = entry or False
        return entry

    def _careful(self, values: tuple, p: Any) -> np.ndarray:
        """The checked and broadcasting path (k states, p given, bad input named)."""
        names = self.argument_names
        given = [n for n in names if n != "p"]
        if self.takes_constants and len(values) == len(names):
            if p is not None:
                raise InputError(f"{self.name}: the constants given twice (as an argument and p=)")
            p, values = values[-1], values[:-1]
        if len(values) != len(given):
            raise InputError(f"{self.name} takes ({', '.join(given)}), got {len(values)} "
                             "argument(s)")
        arrays = []
        for name, v, size in zip(given, values, self._sizes):
            a = np.asarray(v, dtype=float)
            if a.ndim not in (1, 2) or a.shape[-1] != size:
                raise InputError(f"{self.name}: {name} must have {size} values (or shape (k, "
                                 f"{size}) for k states), got shape {a.shape}")
            arrays.append(a)
        if self.takes_constants:
            pv = self.constants if p is None else np.asarray(p, dtype=float)
            if pv.shape[-1:] != (self._sizes[-1],):
                raise InputError(f"{self.name}: p must have the {self._sizes[-1]} constants, got "
                                 f"shape {pv.shape}")
            arrays.append(pv)
        lead = {a.shape[0] for a in arrays if a.ndim == 2}
        if len(lead) > 1:
            raise InputError(f"{self.name}: the batched arguments have different numbers of "
                             f"states: {sorted(lead)}")
        return super().__call__(*arrays)

    def _one_state(self, values: tuple, out: np.ndarray | None = None) -> np.ndarray | None:
        """One state given as float arrays of the right sizes: straight into the kernel
        (None otherwise: the general path checks and broadcasts).  The argument vector z
        (constants filled once) and the output buffer are kept per thread, so the C call
        finds their addresses cached (a new array's address costs about a microsecond);
        the caller gets a copy."""
        for v, n in zip(values, self._given):
            if type(v) is not np.ndarray or v.shape != (n,):
                return None
        buffers = self.__dict__.setdefault("_buffers", {})
        tid = threading.get_ident()
        hit = buffers.get(tid)
        if hit is None or hit[2] is not self.constants:
            z = np.empty(self._nargs)
            given = sum(self._given)
            if given < self._nargs:
                z[given:] = self.constants
            hit = buffers[tid] = (z, np.empty(self._nout), self.constants)
        z, flat, _ = hit
        k = 0
        for v, n in zip(values, self._given):
            z[k:k + n] = v
            k += n
        if out is not None:
            self.kernel.into(z, out if self.kernel.backend == "c" else out.reshape(-1))
            return out
        self.kernel.into(z, flat)
        return flat.reshape(self.shape).copy() if self.shape else float(flat[0])

    def into(self, *values: Any, out: np.ndarray) -> np.ndarray:
        """f(values) written into ``out`` (a writable C-contiguous float64 array of ``shape``;
        one state given as float arrays of the right sizes, the robot's constants) and
        returned: no allocation per call."""
        if (type(out) is not np.ndarray or out.shape != self.shape or out.dtype != np.float64
                or not out.flags.c_contiguous or not out.flags.writeable):
            raise InputError(f"{self.name}: out must be a writable C-contiguous float64 array "
                             f"of shape {self.shape}, got {getattr(out, 'shape', out)!r}")
        if len(values) != len(self._given) or self._one_state(values, out) is None:
            raise InputError(f"{self.name}.into takes one state: "
                             f"{', '.join(n for n in self.argument_names if n != 'p')} as float "
                             f"arrays of sizes {self._given}")
        return out

    def __repr__(self) -> str:
        return (f"<RobotFunction {self.name}({', '.join(self.argument_names)}) -> "
                f"{self.shape} ({self.kernel.backend})>")


def _restore(name: str, groups: dict, shape: tuple, constants: np.ndarray | None,
             kernel_state: dict) -> RobotFunction:
    """A pickled :class:`RobotFunction` (see ``RobotFunction.__reduce__``)."""
    from ..compilation.persistence import unpack_kernel

    f = RobotFunction.__new__(RobotFunction)
    f._setup(name, groups, shape, constants, unpack_kernel(kernel_state))  # noqa: SLF001 (its own class)
    return f
