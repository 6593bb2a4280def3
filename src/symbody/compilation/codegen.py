"""Symbolic expressions -> fast numeric functions.

A :class:`Kernel` evaluates a flat list of expressions ``e_j(z)`` at a flat
argument vector ``z`` (shape ``(nargs,)``) into a flat output (``(nout,)``), or
at many argument vectors at once (``(k, nargs) -> (k, nout)``).  Kernels are
built by :func:`compile_kernel` with one of three backends:

``"auto"``    per kernel: small kernels by ``"llvm"`` (milliseconds), kernels
              whose straight-line program has :data:`C_MIN_OPERATIONS` or more
              operations by ``"c"`` (compile time linear in their size); the default.
              The choice follows from the expressions alone (never from what is
              cached), so a model gives the same numbers in every session.  A
              model's own kernels (``model_kernel=True``: ``symbody.compile``) are
              C whatever their size (:data:`MODEL_C_MIN_OPERATIONS`), so default
              runs reach the compiled steps; the constraint kernels are built in
              background threads at once, the dynamics at their first use.
``"c"``       generated C (:mod:`.c_kernels`): linear-time common subexpressions
              and collected sums, compiled in segments by the system's C compiler,
              in parallel; cached on disk.
``"llvm"``    symengine ``Lambdify(backend="llvm", cse=True)``: common
              subexpressions eliminated, compiled to machine code by LLVM as one
              function (its cost grows like size^2.2: fine for small kernels);
              cached on disk (:mod:`.cache`).
``"lambda"``  symengine's interpreted ``Lambdify(backend="lambda")``; used
              when symengine was built without LLVM.
``"numpy"``   ``sympy.lambdify(cse=True)`` with numpy; always available and
              able to evaluate any function sympy can print.

Arguments may be plain Symbols, functions of time (``dynamicsymbols``) or
their derivatives: before compiling, every argument is replaced by a
positional symbol ``_a0, _a1, ...`` (derivatives as a whole, before the
functions inside them), so names never clash and the cache key depends only on
the structure of the expressions.

:func:`make_function` is the convenience wrapper other layers use, e.g. to
evaluate energies or drawing points for all samples of a trajectory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy as sm

from ..errors import CompilationError
from . import c_kernels as _c
from . import kernel_backends as _backends
from .compiled_kernel import (  # noqa: F401 (re-exported: imported from here elsewhere)
    _BACKGROUND,
    _SYMENGINE_LOCK,  # (the lock at import; a forked child's is compiled_kernel's)
    Kernel,
    LazyKernel,
    _after_fork_in_child,
    background_pool,
    deserialize_expressions,
    frame,
    serialize_expressions,
    unframe,
)
from .expression_conversion import (  # noqa: F401 (re-exported)
    _REBUILD,
    _STRUCTURED,
    _check_args,
    _describe,
    _digest,
    _is_symengine,
    _positional,
    _RenameSymengine,
    _to_symengine,
    _to_sympy_positional,
    _ToSymengine,
    _unrename,
    se,
)
from .kernel_backends import (  # noqa: F401 (re-exported)
    _AUTO_CHOICE,
    _MEMORY,
    BACKENDS,
    C_MIN_OPERATIONS,
    CODEGEN_VERSION,
    _auto_kernel,
    _auto_key,
    _c_kernel,
    _c_key,
    _lambdify_kernel,
    _library_kernel,
    _llvm_available,
    _llvm_key,
    _pointer_cache,
    _straight_line,
    _symengine_kernel,
    available_backends,
    kernel_from_lambdify,
    kernel_from_library,
    numpy_kernel,
    resolve_backend,
)

__all__ = ["BACKENDS", "Kernel", "NumericFunction", "available_backends", "compile_kernel",
           "make_function", "resolve_backend"]

#: ``backend="auto"`` for the kernels of a model (``symbody.compile``: the main, velocity,
#: holonomic... kernels): generated C whatever the size, so that the right-hand side is one
#: C function (:mod:`.native_rhs`) and runs reach the compiled steps and the compiled
#: ``model.rhs`` entry (:mod:`.native_entry`).  The compiler runs of the constraint kernels
#: start at once, in background threads, while the rest of the model is assembled (see
#: :class:`LazyKernel`); the dynamics kernels' at their first use (the rhs of a
#: simulation), so that a linearization, which never evaluates them, does not pay for them.
MODEL_C_MIN_OPERATIONS = 0


def _has_heaviside(expr: sm.Basic) -> bool:
    """True when ``expr`` has a Heaviside, each shared subexpression looked at once (SymPy's
    ``has`` walks a DAG as a tree: minutes for the contact conditions of a gait model)."""
    seen: set = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, sm.Heaviside):
            return True
        for a in e.args:
            if a not in seen:
                seen.add(a)
                stack.append(a)
    return False


def compile_kernel(args: Sequence, exprs: Sequence, backend: str = "auto", cache: bool = True,
                   name: str = "kernel", lazy: bool = False, progress: Any = None,
                   symengine_names: dict | None = None, model_kernel: bool = False,
                   background: bool | None = None, lanes: int = 0) -> Kernel:
    """Compile the flat list ``exprs`` as a function of the flat list ``args``.

    ``args``: Symbols, dynamicsymbols or their derivatives (each once);
    ``exprs``: sympy expressions in them, or symengine expressions whose symbol
    names ``symengine_names`` maps to the SymPy atoms they stand for (as
    ``EquationsOfMotion.symengine_dynamics()`` gives them; plain Symbols go by
    their own name).  Returns a :class:`Kernel` mapping
    ``z (len(args),) -> (len(exprs),)``.  Raises CompilationError naming an
    expression that depends on something not in ``args``.  ``lazy``: generate the
    machine code on first use.  ``progress``: as in :func:`symbody.progress.as_progress`
    (shown for C compilations that take longer than half a second).  ``model_kernel``: a
    kernel of a model's right-hand side or constraints: ``"auto"`` builds it as C whatever
    its size (:data:`MODEL_C_MIN_OPERATIONS`) and, when ``lazy``, starts the build at once in
    a background thread (``background=False``: at its first use, e.g. the dynamics, which a
    linearization never evaluates; ``True``: at once whatever ``model_kernel``).
    ``lanes``: generated C's ``many`` evaluates that many rows at once in SIMD lanes
    (:mod:`.c_lanes`; 0 or 1: row by row).
    """
    args = list(args)
    _check_args(args)
    b = resolve_backend(backend)
    if b == "numpy" and any(_is_symengine(e) for e in exprs):
        from ..symengine_bridge import SympyConverter
        to_sympy = SympyConverter(dict(symengine_names or {}))
        exprs = [to_sympy(e) if _is_symengine(e) else e for e in exprs]
    exprs = [e if _is_symengine(e) else sm.sympify(e) for e in exprs]
    if b != "numpy" and any(not _is_symengine(e) and _has_heaviside(e) for e in exprs):
        # symengine has no Heaviside: the Piecewise it is (as in the models' kernels)
        exprs = [e if _is_symengine(e) else e.replace(lambda x: isinstance(x, sm.Heaviside),
                                                      lambda x: x.rewrite(sm.Piecewise))
                 for e in exprs]
    if b in ("auto", "c", "llvm", "lambda"):
        se_exprs, digest = _to_symengine(args, exprs, name, symengine_names)
        nargs, use_disk = len(args), bool(cache)

        threshold = MODEL_C_MIN_OPERATIONS if model_kernel else None

        def build():
            if b == "auto":
                return _auto_kernel(nargs, se_exprs, digest, name, use_disk, progress, threshold,
                                    lanes)
            if b == "c":
                return _c_kernel(nargs, se_exprs, digest, name, use_disk, progress, lanes=lanes)
            return _symengine_kernel(nargs, se_exprs, digest, b, name, use_disk)

        if lazy:
            start = (model_kernel if background is None else background) and b == "auto" \
                and bool(_c.compiler_available())
            return LazyKernel(nargs, len(se_exprs), b, name, build, start)
        return build()
    return numpy_kernel(len(args), _to_sympy_positional(args, exprs, name), name)


# --------------------------------------------------------------- make_function
class NumericFunction:
    """A compiled function of groups of symbols, returned by :func:`make_function`.

    ``f(*values)``: one value per argument group -- an array of the group's
    length (or a number for a group given as a single symbol).  Any value with
    an extra leading dimension ``k`` evaluates ``k`` points at once; the other
    values are broadcast.  The result has the shape of the expressions given
    (a number for a single expression), with a leading ``k`` when batched.
    ``argument_names``: a name per group (None: unnamed), read by the exports
    (``to_casadi``, ``export_c``) and by ``simulate``'s outputs.
    """

    def __init__(self, groups: list[list], scalar_group: list[bool], shape: Any, kernel: Kernel,
                 multi: bool = False, argument_names: Sequence[str] | None = None) -> None:
        self.groups = groups
        self._scalar_group = scalar_group
        self.shape = shape
        self.kernel = kernel
        self.multi = multi
        self._sizes = [len(g) for g in groups]
        self.argument_names = None if argument_names is None else tuple(argument_names)

    def _split(self, out: np.ndarray, lead: tuple):
        if not self.multi:
            if not self.shape and not lead:
                return float(out[0])
            return out.reshape(lead + self.shape)
        parts, i = [], 0
        for shape in self.shape:
            size = int(np.prod(shape)) if shape else 1
            chunk = out[..., i:i + size]
            parts.append(float(chunk[0]) if (not shape and not lead) else chunk.reshape(lead + shape))
            i += size
        return tuple(parts)

    def __call__(self, *values):
        if len(values) != len(self.groups):
            raise CompilationError(f"this function takes {len(self.groups)} argument groups "
                                   f"({', '.join(str(len(g)) for g in self.groups)} values), "
                                   f"got {len(values)}")
        arrays = []
        k = None
        for i, (v, size) in enumerate(zip(values, self._sizes)):
            a = np.asarray(v, dtype=float)
            if self._scalar_group[i]:
                a = a.reshape(a.shape + (1,)) if a.ndim <= 1 else a
                if a.ndim == 2 and a.shape[1] != 1:
                    raise CompilationError(f"argument group {i} is a single symbol; got shape {np.shape(v)}")
            if a.ndim == 0 and size == 1:
                a = a.reshape(1)
            if a.ndim == 1:
                if a.shape[0] != size:
                    raise CompilationError(f"argument group {i} ({', '.join(map(str, self.groups[i]))}) "
                                           f"needs {size} values, got {a.shape[0]}")
            elif a.ndim == 2:
                if a.shape[1] != size:
                    raise CompilationError(f"argument group {i} needs (k, {size}) values, got {a.shape}")
                if k is not None and a.shape[0] != k:
                    raise CompilationError(f"argument group {i} has {a.shape[0]} rows, others have {k}")
                k = a.shape[0]
            else:
                raise CompilationError(f"argument group {i} has too many dimensions: {a.shape}")
            arrays.append(a)
        if k is None:
            z = np.concatenate(arrays) if arrays else np.empty(0)
            return self._split(self.kernel(z), ())
        Z = np.concatenate([a if a.ndim == 2 else np.broadcast_to(a, (k, a.shape[0])) for a in arrays],
                           axis=1) if arrays else np.empty((k, 0))
        return self._split(self.kernel.many(Z), (k,))

    def __repr__(self) -> str:
        return f"<NumericFunction of {len(self.groups)} groups -> shape {self.shape} ({self.kernel.backend})>"


def make_function(args: Sequence, exprs: Any, backend: str = "auto", cache: bool = True,
                  name: str = "function") -> NumericFunction:
    """Compile ``exprs`` as a numeric function of the argument groups ``args``.

    ``args``: list of groups, each a list of Symbols / dynamicsymbols /
    derivatives (or one symbol, taking a number), e.g. ``[q, u, constants]``.
    ``exprs``: one expression, a list of expressions or a Matrix (the result
    has its shape), or a list containing matrices / lists (the result is a
    tuple with one array per item).  Example::

        energy = make_function([eom.q, eom.u, constants], KE + PE)
        energy(q_vals, u_vals, p_vals)            # float
        energy(Q, U, p_vals)                      # Q (k, N), U (k, o) -> (k,)
    """
    groups, scalar = [], []
    for g in args:
        if isinstance(g, sm.Basic) and not isinstance(g, sm.MatrixBase):
            groups.append([g])
            scalar.append(True)
        else:
            groups.append(list(g))
            scalar.append(False)
    flat_args = [a for g in groups for a in g]
    multi = isinstance(exprs, (list, tuple)) and any(
        isinstance(e, (sm.MatrixBase, list, tuple, np.ndarray)) for e in exprs)
    items = list(exprs) if multi else [exprs]
    shapes, flat = [], []
    for item in items:
        shape, values = _shape_and_values(item)
        shapes.append(shape)
        flat += values
    key = _function_key(groups, flat, shapes, (multi, backend, name)) if cache else None
    memo = _backends._MEMORY.setdefault(_FUNCTIONS, {}) if key is not None else None  # noqa: SLF001
    found = memo.get(key) if memo is not None else None
    if found is not None:
        return found
    kernel = compile_kernel(flat_args, flat, backend=backend, cache=cache, name=name)
    function = NumericFunction(groups, scalar, shapes if multi else shapes[0], kernel, multi=multi)
    if memo is not None:
        if len(memo) >= FUNCTION_MEMO_SIZE:
            memo.pop(next(iter(memo)))
        memo[key] = function
    return function


#: make_function keeps this many functions in memory (the oldest dropped first; not with
#: ``cache=False``), so that the same expressions asked for again in a session (every run's
#: contact quantities, events and outputs) are neither converted nor digested again; they
#: live in the kernels' memory cache (``_MEMORY``) under this key, and go with it
FUNCTION_MEMO_SIZE = 256
_FUNCTIONS = "make_function memo"


def _function_key(groups: list, flat: list, shapes: list, options: tuple) -> tuple | None:
    """The memo key of a make_function call (None: not SymPy throughout, not kept)."""
    if not all(isinstance(e, (sm.Basic, int, float)) for e in flat):
        return None
    try:
        key = (tuple(tuple(g) for g in groups), tuple(flat), tuple(shapes), options)
        hash(key)
    except TypeError:
        return None
    return key



def _shape_and_values(exprs) -> tuple[tuple, list]:
    if isinstance(exprs, sm.MatrixBase):
        return tuple(exprs.shape), list(exprs)
    if isinstance(exprs, (list, tuple, np.ndarray)):
        arr = np.array(exprs, dtype=object)
        return arr.shape, list(arr.ravel())
    return (), [exprs]
