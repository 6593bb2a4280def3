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

import functools
import hashlib
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import sympy as sm

from ..errors import CompilationError
from ..progress import as_progress
from ..symengine_bridge import DESCEND, _se_structured, fold_dag, symengine_node
from . import c_kernels as _c
from . import cache as _cache

try:  # symengine is a hard dependency, but keep the numpy backend usable without it
    import symengine as se
except ImportError:  # pragma: no cover
    se = None

#: SymPy class name -> symengine constructor of the nodes converted one by one although they
#: hold conditions (Piecewise, relations, And/Or/Not, Max/Min; symengine_bridge's table)
_STRUCTURED = _se_structured() if se is not None else {}

__all__ = ["BACKENDS", "Kernel", "NumericFunction", "available_backends", "compile_kernel",
           "make_function", "resolve_backend"]

BACKENDS = ("c", "llvm", "lambda", "numpy")

#: Part of every cache key: bump it whenever the code generated for the same
#: expressions changes.
CODEGEN_VERSION = "2"

#: ``backend="auto"``: kernels with at least this many operations (after
#: :func:`.c_kernels.straight_line_program`) are generated as C, smaller ones by symengine's
#: LLVM.  Measured on the quiet 2-core machine with the factored programs (cold cache, build
#: plus first call): the Whipple bicycle's main kernel (2 825 operations) 0.35 s with LLVM,
#: 0.99 s as C; the 20-link chain's (1 640) 0.26 s and 0.29 s; the 30-link chain's (3 070)
#: 0.94 s and 0.60 s.  LLVM's cost grows like size^2.2, C's linearly (plus ~0.25 s of
#: compiler start-up); the C kernels are also 1.2-1.9x faster per call.
C_MIN_OPERATIONS = 3000

#: ``backend="auto"`` for the kernels of a model (``symbody.compile``: the main, velocity,
#: holonomic... kernels): generated C whatever the size, so that the right-hand side is one
#: C function (:mod:`.native_rhs`) and runs reach the compiled steps and the compiled
#: ``model.rhs`` entry (:mod:`.native_entry`).  The compiler runs of the constraint kernels
#: start at once, in background threads, while the rest of the model is assembled (see
#: :class:`_LazyKernel`); the dynamics kernels' at their first use (the rhs of a
#: simulation), so that a linearization, which never evaluates them, does not pay for them.
MODEL_C_MIN_OPERATIONS = 0

#: In-process cache: key -> Kernel (shared by all models of this process), and make_function's
#: memo of functions under the key _FUNCTIONS.
_MEMORY: dict[str, Any] = {}

#: symengine's code generation is not run by two threads at once
_SYMENGINE_LOCK = threading.RLock()

_BACKGROUND: list = []         # [ThreadPoolExecutor] of the background builds, made on first use


def _after_fork_in_child() -> None:
    # a forked process has none of the parent's threads: fresh locks (one held by a build
    # thread at the fork would never be released) and a pool of its own
    global _SYMENGINE_LOCK
    _SYMENGINE_LOCK = threading.RLock()
    _BACKGROUND.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def background_pool() -> Any:
    """The thread pool of the background builds (a ``ThreadPoolExecutor``, made on first use)."""
    if not _BACKGROUND:
        from concurrent.futures import ThreadPoolExecutor
        _BACKGROUND.append(ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1),
                                              thread_name_prefix="symbody-build"))
    return _BACKGROUND[0]


@functools.cache
def _llvm_available() -> bool:
    if se is None:
        return False
    try:
        x = se.Symbol("x")
        f = se.Lambdify([x], [x * x], backend="llvm")
        return abs(float(f(np.array([3.0]))[0]) - 9.0) < 1e-12
    except Exception:
        return False


def available_backends() -> tuple[str, ...]:
    """The backends usable on this machine (``"auto"`` picks among the compiled ones)."""
    out = []
    if _c.compiler_available():
        out.append("c")
    if _llvm_available():
        out.append("llvm")
    if se is not None:
        out.append("lambda")
    out.append("numpy")
    return tuple(out)


def resolve_backend(backend: str) -> str:
    """Check the backend name; ``"auto"`` stays ``"auto"`` when a compiled backend exists.

    ``"auto"`` chooses per kernel between ``"llvm"`` and ``"c"`` (whichever
    exist) and is ``"numpy"`` when neither does: symengine's interpreted
    ``"lambda"`` backend has the lowest call overhead for small expressions but is
    slower than numpy for large ones (about 1.7x slower on the 20-link chain), so
    it is only used when asked for.
    """
    if not isinstance(backend, str):
        raise CompilationError(f"backend must be a string, got {backend!r}")
    b = backend.lower()
    if b == "auto":
        return "auto" if (_llvm_available() or _c.compiler_available()) else "numpy"
    if b not in BACKENDS:
        raise CompilationError(f"unknown backend {backend!r}; choose one of 'auto', "
                               + ", ".join(repr(x) for x in BACKENDS))
    if b == "llvm" and not _llvm_available():
        raise CompilationError("backend 'llvm' is not available: this symengine was built "
                               "without LLVM; use backend='lambda' or 'numpy'")
    if b == "c" and (se is None or not _c.compiler_available()):
        raise CompilationError("backend 'c' needs a working C compiler (cc, gcc or $CC) and "
                               "symengine; use backend='llvm' or 'numpy'")
    if b == "lambda" and se is None:
        raise CompilationError("backend 'lambda' needs symengine, which is not installed")
    return b


class Kernel:
    """Compiled evaluation of ``nout`` expressions at a flat argument vector.

    ``kernel(z)`` with ``z`` of shape ``(nargs,)`` returns ``(nout,)``;
    ``kernel.into(z, out)`` writes into a preallocated float64 ``out`` (fast
    path; ``z`` must be a C-contiguous float64 array of length ``nargs``);
    ``kernel.many(Z)`` maps ``(k, nargs) -> (k, nout)``.
    """

    __slots__ = ("nargs", "nout", "backend", "name", "into", "_batch", "source", "_library")

    def __init__(self, nargs: int, nout: int, backend: str, name: str,
                 into: Callable[[np.ndarray, np.ndarray], Any],
                 batch: Callable[[np.ndarray], np.ndarray], source: dict | None = None,
                 library: Any = None):
        self.nargs, self.nout, self.backend, self.name = nargs, nout, backend, name
        self.into = into
        self._batch = batch
        #: what the kernel was built from, for saving and pickling (persistence.py):
        #: {"kind": "symengine", "exprs": [...], "lambdify": LLVMDouble or None,
        #:  "serialized": bytes or None}
        self.source = source
        #: the loaded shared library of a "c" kernel (kept alive with the kernel)
        self._library = library

    @property
    def library(self) -> Any:
        """The loaded shared library of a "c" kernel (ctypes.CDLL), None for other backends."""
        return self._library

    def realize(self) -> Kernel:
        """This kernel (a lazy one generates its machine code first)."""
        return self

    @property
    def built(self) -> bool:
        """True: the machine code is there (a lazy kernel's may not be yet)."""
        return True

    def renamed(self, name: str, source: dict | None = None) -> Kernel:
        """The same compiled functions under another name (and ``source``, default this one's)."""
        return Kernel(self.nargs, self.nout, self.backend, name, self.into, self._batch,
                      self.source if source is None else source, library=self._library)

    def __call__(self, z) -> np.ndarray:
        z = np.ascontiguousarray(z, dtype=float)
        if z.shape != (self.nargs,):
            raise CompilationError(f"kernel {self.name!r} takes {self.nargs} arguments, got shape {z.shape}")
        out = np.empty(self.nout)
        if self.nout:
            self.into(z, out)
        return out

    def many(self, Z: np.ndarray) -> np.ndarray:
        Z = np.ascontiguousarray(Z, dtype=float)
        if Z.ndim != 2 or Z.shape[1] != self.nargs:
            raise CompilationError(f"kernel {self.name!r} takes (k, {self.nargs}) arguments, "
                                   f"got shape {Z.shape}")
        if self.nout == 0 or Z.shape[0] == 0:
            return np.empty((Z.shape[0], self.nout))
        return self._batch(Z)

    def __repr__(self) -> str:
        return f"<Kernel {self.name!r}: {self.nargs} -> {self.nout} ({self.backend})>"


# ----------------------------------------------------------------- conversion
def _positional(n: int) -> list[sm.Symbol]:
    return [sm.Symbol(f"_a{i}") for i in range(n)]


def _check_args(args: Sequence) -> None:
    seen = set()
    for a in args:
        if not isinstance(a, (sm.Symbol, sm.Derivative, sm.core.function.AppliedUndef)):
            raise CompilationError(f"argument {a!r} is not a Symbol, a function of time or a "
                                   "derivative of one")
        if a in seen:
            raise CompilationError(f"argument {a} is listed twice")
        seen.add(a)


def _describe(expr, limit: int = 120) -> str:
    s = str(expr)
    return s if len(s) <= limit else s[:limit] + " ..."


class _ToSymengine:
    """Memoized sympy -> symengine conversion with the arguments renamed ``_a0, _a1, ...``.

    sympy expressions built by mechanics share subtrees heavily; converting each unique
    node once (instead of symengine's tree walk) takes milliseconds where
    ``symengine.sympify`` takes seconds (the Whipple bicycle: 2 000 unique nodes, 15 s
    -> 0.02 s).  Each node also gets a structural digest (BLAKE2b of its type and its
    children's digests; arguments by position), which keys the kernel cache without
    printing the expressions.
    """

    def __init__(self, args: Sequence, name: str):
        self.name = name
        self.args = list(args)
        self.pos = [se.Symbol(f"_a{i}") for i in range(len(args))]
        self._arg_values = {a: (self.pos[i], b"a%d" % i) for i, a in enumerate(args)}
        self.memo: dict = {}           # fold_dag's memo: id(node) -> (node, (symengine, digest))
        self._se_mapping = None
        self._argset = set(self.args)
        #: first symbol / function of time met that is not an argument
        self.unknown = None

    def __call__(self, e):
        """(symengine expression, digest) of the sympy expression ``e``."""
        return fold_dag([e], self._visit, self._combine, self.memo)[0]

    def _visit(self, e):
        if e.is_Add or e.is_Mul or e.is_Pow:     # most nodes (arguments are atoms)
            return DESCEND
        hit = self._arg_values.get(e)
        if hit is not None:
            return hit
        if e.is_Symbol:                    # not an argument
            if self.unknown is None:
                self.unknown = e
            return se.Symbol(e.name), b"S" + e.name.encode()
        if e.is_Integer:
            return se.Integer(int(e)), b"I%d" % int(e)
        if e.is_Rational:
            return se.Rational(int(e.p), int(e.q)), b"R%d/%d" % (int(e.p), int(e.q))
        if e.is_Float:
            v = float(e)
            return se.RealDouble(v), b"F" + repr(v).encode()
        if isinstance(e, sm.Function) and not isinstance(e, sm.core.function.AppliedUndef):
            fname = type(e).__name__
            if fname != "Piecewise" and getattr(se, fname, None) is not None:
                return DESCEND
        if e.args and type(e).__name__ in _STRUCTURED:
            # a Piecewise and its conditions node by node (a contact force's: its long gap
            # expression converted and digested once, not printed whole)
            return DESCEND
        return self._whole(e)

    def _combine(self, e, parts):
        tag = b"+" if e.is_Add else b"*" if e.is_Mul else b"^" if e.is_Pow else None
        if tag is not None:
            return symengine_node(e, [p[0] for p in parts]), _digest(tag, parts)
        fname = type(e).__name__
        if fname in _STRUCTURED:
            return _STRUCTURED[fname](*[p[0] for p in parts]), _digest(fname.encode(), parts)
        try:
            return getattr(se, fname)(*[p[0] for p in parts]), _digest(fname.encode(), parts)
        except Exception:
            return self._whole(e)

    def _whole(self, e):
        # anything else (Piecewise, relationals, constants like pi, unknown functions):
        # symengine's own conversion, then the argument renaming
        digest, rest = self._walk_whole(e)
        if self.unknown is None:
            funcs = [a for a in e.atoms(sm.Derivative, sm.core.function.AppliedUndef)
                     if a not in self._argset and not (isinstance(a, sm.core.function.AppliedUndef)
                                                       and any(d.expr == a for d in e.atoms(sm.Derivative)
                                                               if d in self._argset))]
            if funcs:
                self.unknown = sorted(funcs, key=str)[0]
            elif rest:
                self.unknown = sorted(rest, key=str)[0]
        if self._se_mapping is None:
            self._se_mapping = {}
            for a, p in zip(self.args, self.pos):
                try:
                    self._se_mapping[se.sympify(a)] = p
                except Exception as exc:
                    raise CompilationError(f"{self.name}: symengine cannot represent the "
                                           f"argument {a}") from exc
        try:
            E = se.sympify(e).xreplace(self._se_mapping)
        except Exception as exc:
            raise CompilationError(f"{self.name}: symengine cannot convert {_describe(e)} "
                                   f"({exc}); use backend='numpy'") from exc
        return E, b"X" + digest

    def _walk_whole(self, e) -> tuple[bytes, set]:
        """(structural digest, plain symbols outside the arguments) of a node converted whole,
        by one walk over its DAG (the arguments by position; no SymPy rebuild, which for a
        Piecewise re-evaluates every condition: seconds on a contact model's forces)."""
        argpos = {a: i for i, a in enumerate(self.args)}
        memo: dict = {}
        rest: set = set()

        def walk(n):
            got = memo.get(id(n))
            if got is not None:
                return got[1]
            i = argpos.get(n)
            if i is not None:
                out = b"a%d" % i
            elif not n.args:
                if n.is_Symbol:
                    rest.add(n)
                out = b"L" + sm.srepr(n).encode()
            else:
                inner = b",".join(walk(a) for a in n.args)
                out = hashlib.blake2b(type(n).__name__.encode() + b"(" + inner + b")",
                                      digest_size=16).digest()
            memo[id(n)] = (n, out)
            return out

        return walk(e), rest


class _RenameSymengine:
    """Memoized renaming of symengine expressions' symbols to ``_a0, _a1, ...``.

    For expressions the formulation formed in symengine (``EquationsOfMotion.
    symengine_dynamics()``): no SymPy round trip.  ``index``: symengine symbol name ->
    argument position; ``names``: symengine symbol name -> the SymPy atom (for errors).
    Each distinct node is rebuilt once (symengine's own ``xreplace`` walks the tree, not
    the DAG: seconds on the 100-link chain) and gets a structural digest, as in
    :class:`_ToSymengine`.
    """

    def __init__(self, index: dict, names: dict):
        self.index, self.names = index, names
        self.memo: dict = {}
        #: first symbol met that is not an argument (its SymPy atom)
        self.unknown = None

    def __call__(self, e):
        hit = self.memo.get(e)
        if hit is None:
            hit = self._convert(e)
            self.memo[e] = hit
        return hit

    def _convert(self, e):
        args = e.args
        if not args:
            if e.is_Symbol:
                k = self.index.get(e.name)
                if k is None:
                    if self.unknown is None:
                        self.unknown = self.names.get(e.name) or sm.Symbol(e.name)
                    return e, b"S" + e.name.encode()
                return se.Symbol(f"_a{k}"), b"a%d" % k
            text = repr(float(e)) if type(e).__name__ == "RealDouble" else str(e)
            return e, b"N" + type(e).__name__.encode() + b":" + text.encode()
        parts = [self(a) for a in args]
        cls = type(e).__name__
        new = [p[0] for p in parts]
        if cls == "Add":
            out = se.Add(*new)
        elif cls == "Mul":
            out = se.Mul(*new)
        elif cls == "Pow":
            out = se.Pow(*new)
        elif cls in _REBUILD:
            out = _REBUILD[cls](new)
        else:
            # (symengine's relationals, met inside a Piecewise, have no ``func``)
            out = e.func(*new) if hasattr(e, "func") else type(e)(*new)
        return out, _digest(cls.encode(), parts)


#: symengine nodes without a usable ``func``: rebuilt from their (converted) args
#: (a Piecewise's args are flat: value, condition, value, condition, ...)
_REBUILD = {
    "Piecewise": lambda a: se.Piecewise(*zip(a[0::2], a[1::2])),
    "StrictLessThan": lambda a: se.Lt(*a), "LessThan": lambda a: se.Le(*a),
    "And": lambda a: se.And(*a), "Or": lambda a: se.Or(*a), "Not": lambda a: se.Not(*a),
}


def _digest(tag: bytes, parts) -> bytes:
    h = hashlib.blake2b(tag, digest_size=16)
    for p in parts:
        h.update(p[1])
    return h.digest()


def _is_symengine(e) -> bool:
    return se is not None and isinstance(e, se.Basic)


def _to_symengine(args: Sequence, exprs: Sequence, name: str,
                  symengine_names: dict | None = None) -> tuple[list, str]:
    """Convert sympy ``exprs`` to symengine with ``args`` renamed ``_a0, _a1, ...``.

    ``exprs`` may also hold symengine expressions, whose symbol names
    ``symengine_names`` maps to SymPy atoms (plain Symbols go by their own name).
    Returns (expressions, structural key).  Raises CompilationError naming an
    expression that depends on something not in ``args``.
    """
    conv = _ToSymengine(args, name)
    ren = None
    out = []
    key = hashlib.blake2b(b"exprs", digest_size=32)
    for j, e in enumerate(exprs):
        if _is_symengine(e):
            if ren is None:
                names = dict(symengine_names or {})
                name_of = {atom: nm for nm, atom in names.items()}
                index = {}
                for i, a in enumerate(args):
                    nm = name_of.get(a)
                    if nm is None and isinstance(a, sm.Symbol):
                        nm = a.name
                    if nm is not None:
                        index[nm] = i
                ren = _RenameSymengine(index, names)
            E, dig = ren(e)
            unknown = ren.unknown
        else:
            E, dig = conv(e)
            unknown = conv.unknown
        key.update(dig)
        if unknown is not None:
            bad = unknown
            kind = "the symbol" if bad.is_Symbol else ""
            raise CompilationError(f"{name}: expression {j} depends on {kind + ' ' if kind else ''}"
                                   f"{bad}, which is not among the arguments: {_describe(e)}")
        out.append(E)
    return out, key.hexdigest()


def _unrename(text: str, args: Sequence) -> str:
    import re
    return re.sub(r"_a(\d+)", lambda m: str(args[int(m.group(1))]), text)


def _to_sympy_positional(args: Sequence, exprs: Sequence, name: str) -> list:
    pos = _positional(len(args))
    mapping = dict(zip(args, pos))
    allowed = set(pos)
    out = []
    for j, e in enumerate(exprs):
        E = sm.sympify(e).xreplace(mapping)
        bad = [a for a in E.atoms(sm.Derivative, sm.core.function.AppliedUndef)]
        if bad:
            raise CompilationError(f"{name}: expression {j} depends on {bad[0]}, which is not "
                                   f"among the arguments: {_describe(e)}")
        extra = [s for s in E.free_symbols if s not in allowed]
        if extra:
            raise CompilationError(f"{name}: expression {j} depends on the symbol {extra[0]}, "
                                   f"which is not among the arguments: {_describe(e)}")
        out.append(E)
    return out


# ------------------------------------------------------------------- backends
def _symengine_kernel(nargs: int, se_exprs: list, digest: str, backend: str, name: str,
                      use_disk: bool) -> Kernel:
    nout = len(se_exprs)
    key = _llvm_key(backend, nargs, nout, digest)
    hit = _MEMORY.get(key)
    if hit is not None:
        return hit.renamed(name)
    lam = None
    if backend == "llvm" and use_disk and nout:
        lam = _cache.load_cached(key)
        if lam is not None and type(lam).__name__ != "LLVMDouble":
            lam = None
    if lam is None and nout:
        pos = [se.Symbol(f"_a{i}") for i in range(nargs)]
        try:
            with _SYMENGINE_LOCK:         # one code generation at a time (background builds)
                lam = se.Lambdify(pos, se_exprs, backend=backend, cse=True, real=True)
        except Exception as exc:
            raise CompilationError(f"{name}: symengine ({backend}) failed to compile: {exc}") from exc
        if backend == "llvm" and use_disk:
            _cache.store_cached(key, lam)
    if nout == 0:
        kern = Kernel(nargs, 0, backend, name, lambda z, out: None, lambda Z: np.empty((len(Z), 0)))
    else:
        kern = _lambdify_kernel(nargs, nout, backend, name, lam,
                                {"kind": "symengine", "exprs": se_exprs, "serialized": None,
                                 "lambdify": lam if backend == "llvm" else None})
    _MEMORY[key] = kern
    return kern


def _pointer_cache(size: int = 8) -> Callable[[np.ndarray], int]:
    """Data address of an array, remembered for the last ``size`` arrays seen.

    ``a.ctypes.data`` costs about a microsecond; callers that reuse preallocated
    buffers (the simulation's hot path) pay it once.  The cache holds a reference
    to each array, so an id cannot be reused by another array while it is cached.
    """
    cache: dict[int, tuple[np.ndarray, int]] = {}

    def address(a: np.ndarray) -> int:
        hit = cache.get(id(a))
        if hit is not None and hit[0] is a:
            return hit[1]
        if len(cache) >= size:
            cache.pop(next(iter(cache)))
        ptr = a.ctypes.data
        cache[id(a)] = (a, ptr)
        return ptr

    return address


def _c_key(nargs: int, nout: int, digest: str) -> str:
    return _cache.cache_key("c", CODEGEN_VERSION, _c.PROGRAM_VERSION, str(_c.compiler_available()), _c.OPT_FLAGS,
                            str(nargs), str(nout), digest)


def _llvm_key(backend: str, nargs: int, nout: int, digest: str) -> str:
    return _cache.cache_key(backend, CODEGEN_VERSION, str(nargs), str(nout), digest)


def _c_kernel(nargs: int, se_exprs: list, digest: str, name: str, use_disk: bool, progress=None,
              program: _c.StraightLineProgram | None = None, lanes: int = 0) -> Kernel:
    """A kernel of generated C; the library comes from the disk cache when there.  ``lanes``
    > 1: its ``many`` runs that many states at once in SIMD lanes (:mod:`.c_lanes`)."""
    import shutil
    import tempfile
    from pathlib import Path

    nout = len(se_exprs)
    if nout == 0:
        return Kernel(nargs, 0, "c", name, lambda z, out: None, lambda Z: np.empty((len(Z), 0)),
                      {"kind": "symengine", "exprs": [], "serialized": None, "lambdify": None})
    if lanes > 1:
        from . import c_lanes
        digest = f"{digest}:lanes{lanes}:{c_lanes.VERSION}"
    key = _c_key(nargs, nout, digest)
    hit = _MEMORY.get(key)
    if hit is not None:
        return hit.renamed(name, {"kind": "symengine", "exprs": se_exprs, "serialized": None,
                                  "lambdify": None})
    path = _cache.verified_library(key) if use_disk else None
    scratch = None
    if path is None:
        if program is None:
            program = _straight_line(se_exprs, nargs, name)
        opt = _c.OPT_FLAGS
        if lanes > 1:
            from . import c_lanes
            units = _c.c_source(program, "symbody_kernel", many=False)
            sources = units[:-1] + units[-1:] + \
                c_lanes.lane_sources(program, "symbody_kernel", _c.SEGMENT_SIZE, lanes)
            opt = f"{opt} {c_lanes.LANE_FLAGS}"
        else:
            sources = _c.c_source(program, "symbody_kernel")
        if use_disk:
            path = _cache.library_path(key)
        else:
            scratch = tempfile.mkdtemp(prefix="symbody-kernel-")
            path = Path(scratch, "kernel.so")
        bar = as_progress(progress, f"compiling {name} ({len(program)} operations, C)", total=len(sources))
        try:
            with bar:
                _c.build_library(sources, path, opt=opt,
                                 on_unit_done=lambda done, total: bar.set(done))
        except RuntimeError as exc:
            raise CompilationError(f"{name}: {exc}") from exc
        if use_disk:
            _cache.seal_library(key)
    try:
        kern = _library_kernel(nargs, nout, name, path,
                               {"kind": "symengine", "exprs": se_exprs, "serialized": None,
                                "lambdify": None})
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    _MEMORY[key] = kern
    return kern


def _library_kernel(nargs: int, nout: int, name: str, path: Any, source: dict) -> Kernel:
    """A C kernel around the shared library at ``path``."""
    lib, single, many = _c.load_library(path, "symbody_kernel")
    address = _pointer_cache()

    def into(z, out, _f=single, _p=address):
        _f(_p(z), _p(out))

    def batch(Z, _f=many, _n=nout, _lib=lib):
        out = np.empty((Z.shape[0], _n))
        _f(Z.ctypes.data, out.ctypes.data, Z.shape[0])
        return out

    return Kernel(nargs, nout, "c", name, into, batch, source,   # the library lives with the kernel
                  library=lib)


def kernel_from_library(nargs: int, nout: int, name: str, code: bytes, serialized: bytes) -> Kernel:
    """A C kernel of the machine code ``code`` (a shared library saved with a model, already
    checked by :func:`.object_code.check_shared_library`), placed in the kernel cache under
    its SHA-256 and loaded: the saved kernel's numbers to the bit.  Raises OSError when the
    library cannot be loaded here."""
    key = _cache.cache_key("c-saved", hashlib.sha256(code).hexdigest())
    path = _cache.verified_library(key)
    if path is None:
        path = _cache.store_library(key, code)
    return _library_kernel(nargs, nout, name, path,
                           {"kind": "symengine", "exprs": None, "serialized": serialized,
                            "lambdify": None})


def _straight_line(se_exprs: list, nargs: int, name: str) -> _c.StraightLineProgram:
    try:
        return _c.straight_line_program(se_exprs, nargs)
    except _c.UnsupportedExpression as exc:
        raise CompilationError(f"{name}: {exc}; use backend='llvm' or 'numpy'") from exc


#: ``"auto"``'s choice per kernel (digest -> "c" or "llvm") in this process
_AUTO_CHOICE: dict[str, str] = {}


def _auto_key(nargs: int, nout: int, digest: str, threshold: int) -> str:
    return _cache.cache_key("auto-choice", CODEGEN_VERSION, _c.PROGRAM_VERSION, str(threshold),
                            str(nargs), str(nout), digest)


def _auto_kernel(nargs: int, se_exprs: list, digest: str, name: str, use_disk: bool,
                 progress=None, c_min_operations: int | None = None, lanes: int = 0) -> Kernel:
    """``"auto"``: generated C for programs of at least C_MIN_OPERATIONS operations (or
    ``c_min_operations``: 0 for a model's own kernels, see :data:`MODEL_C_MIN_OPERATIONS`),
    symengine's LLVM below that (C when LLVM is missing, LLVM when there is no C compiler
    or the expressions hold something C cannot express).

    The choice depends on the expressions only, never on what happens to be cached (a kernel
    built earlier with an explicit backend is not picked up), so the same model gives the
    same numbers in every session; it is remembered (in memory and in the kernel cache) so
    that a warm start does not build the operation list again.
    """
    nout = len(se_exprs)
    has_c, has_llvm = bool(_c.compiler_available()), _llvm_available()
    if not nout or not has_c:
        return _symengine_kernel(nargs, se_exprs, digest, "llvm" if has_llvm else "lambda", name, use_disk)
    threshold = C_MIN_OPERATIONS if c_min_operations is None else c_min_operations
    key = _auto_key(nargs, nout, digest, threshold)
    choice = _AUTO_CHOICE.get(key)
    if choice is None and use_disk:
        stored = _cache.load_cached(key, "choices")
        choice = stored if stored in ("c", "llvm") else None
    program = None
    if choice is None or (choice == "llvm" and not has_llvm):
        try:
            program = _c.straight_line_program(se_exprs, nargs)
        except _c.UnsupportedExpression:
            program = None
        choice = "c" if program is not None and (len(program) >= threshold or not has_llvm) \
            else "llvm"
        if use_disk:
            _cache.store_cached(key, choice, "choices")
    _AUTO_CHOICE[key] = choice
    if choice == "c":
        return _c_kernel(nargs, se_exprs, digest, name, use_disk, progress, program, lanes)
    return _symengine_kernel(nargs, se_exprs, digest, "llvm" if has_llvm else "lambda", name, use_disk)


def _lambdify_kernel(nargs: int, nout: int, backend: str, name: str, lam, source: dict) -> Kernel:
    return Kernel(nargs, nout, backend, name, lam.unsafe_real,
                  lambda Z, _lam=lam, _n=nout: np.asarray(_lam(Z)).reshape(len(Z), _n), source)


def kernel_from_lambdify(nargs: int, nout: int, backend: str, name: str, lam: Any, serialized: bytes,
                         exprs: Callable[[], list]) -> Kernel:
    """A Kernel around a restored symengine Lambdify ``lam`` (persistence.py), or, when ``lam``
    is None, one compiled again from the expressions ``exprs()`` (symengine objects in the
    positional arguments ``_a0, _a1, ...``; ``serialized``: their stored form)."""
    se_exprs = None
    if lam is None and backend == "c" and _c.compiler_available():
        # generated C keeps no machine code in saved models: rebuilt (or found in the
        # kernel cache, keyed by the stored expressions' bytes)
        se_exprs = exprs()
        digest = "serialized:" + hashlib.sha256(serialized).hexdigest()
        kern = _c_kernel(nargs, se_exprs, digest, name, True)
        kern.source["serialized"] = serialized
        return kern
    if lam is None:
        se_exprs = exprs()
        b = resolve_backend(backend)
        if b in ("auto", "c"):     # no C compiler here: symengine's LLVM, else its interpreter
            b = "llvm" if _llvm_available() else "lambda"
        pos = [se.Symbol(f"_a{i}") for i in range(nargs)]
        try:
            lam = se.Lambdify(pos, se_exprs, backend=b, cse=True, real=True)
        except Exception as exc:
            raise CompilationError(f"{name}: symengine ({b}) failed to compile: {exc}") from exc
    return _lambdify_kernel(nargs, nout, backend, name, lam,
                            {"kind": "symengine", "exprs": se_exprs, "serialized": serialized,
                             "lambdify": lam if backend == "llvm" else None})


def numpy_kernel(nargs: int, sp_exprs: list, name: str) -> Kernel:
    nout = len(sp_exprs)
    pos = _positional(nargs)
    if nout == 0:
        return Kernel(nargs, 0, "numpy", name, lambda z, out: None, lambda Z: np.empty((len(Z), 0)))
    try:
        f = sm.lambdify([pos], sp_exprs, modules="numpy", cse=True, docstring_limit=0)
    except TypeError:  # older sympy without docstring_limit
        f = sm.lambdify([pos], sp_exprs, modules="numpy", cse=True)
    except Exception as exc:
        raise CompilationError(f"{name}: sympy.lambdify failed: {exc}") from exc

    def into(z, out, _f=f):
        out[:] = _f(z)

    def batch(Z, _f=f, _n=nout):
        vals = _f(Z.T)
        out = np.empty((Z.shape[0], _n))
        for j, v in enumerate(vals):
            out[:, j] = v
        return out

    return Kernel(nargs, nout, "numpy", name, into, batch, {"kind": "sympy", "exprs": sp_exprs})


class _LazyKernel:
    """A Kernel whose machine code is generated on first use.

    The expressions are converted and checked at once (so bad input fails at
    compile time); the LLVM code generation, the expensive part, waits until a
    value is needed.  After that, ``into`` and ``many`` are the real kernel's.
    """

    def __init__(self, nargs: int, nout: int, backend: str, name: str, build,
                 background: bool = False):
        self.nargs, self.nout, self.backend, self.name = nargs, nout, backend, name
        self._build = build
        self._kernel = None
        self._future = None
        if background:       # built now in a thread; realize() waits for it
            self._pid = os.getpid()
            self._future = background_pool().submit(build)

    @property
    def built(self) -> bool:
        """True once the machine code is there (:meth:`realize` then does not wait)."""
        future = self._future
        return self._kernel is not None or (
            future is not None and future.done() and future.exception() is None
            and os.getpid() == self._pid)

    def start(self, daemon: bool = False) -> None:
        """Start building the machine code in a background thread, unless it is built or
        being built.  ``daemon``: in a thread of its own that the end of the process does
        not wait for (a kernel that may never be needed; an unfinished build leaves nothing
        in the cache)."""
        if self._kernel is not None or self._future is not None:
            return
        self._pid = os.getpid()
        if not daemon:
            self._future = background_pool().submit(self._build)
            return
        from concurrent.futures import Future
        future: Future = Future()

        def run(build=self._build) -> None:
            try:
                future.set_result(build())
            except BaseException as exc:  # noqa: BLE001 (handed to whoever waits)
                future.set_exception(exc)

        self._future = future
        threading.Thread(target=run, name="symbody-build-daemon", daemon=True).start()

    def when_built(self, callback: Callable[[Kernel], Any]) -> None:
        """``callback(kernel)`` once the machine code is built: now when it is, at the end
        of a background build when one runs (in its thread), else on :meth:`realize`."""
        if self._kernel is not None:
            callback(self._kernel)
            return
        future = self._future
        if future is not None and os.getpid() == self._pid:
            future.add_done_callback(lambda f: f.exception() is None and callback(f.result()))
        else:
            self._callbacks = [*getattr(self, "_callbacks", ()), callback]

    def realize(self) -> Kernel:
        """The real kernel, its machine code generated now if not yet (or, when it is being
        built in the background, once that build is done)."""
        if self._kernel is None:
            future = self._future
            # a forked child has the future but not the thread: it builds the kernel itself
            kernel = future.result() if future is not None and os.getpid() == self._pid \
                else self._build()
            self._future = None
            self._kernel = kernel
            self.backend = kernel.backend
            self.into = kernel.into
            self.many = kernel.many
            for callback in getattr(self, "_callbacks", ()):
                callback(kernel)
            self._callbacks = ()
        return self._kernel

    def __getattr__(self, attr):
        if attr in ("into", "many"):
            return getattr(self.realize(), attr)
        raise AttributeError(attr)

    def __call__(self, z):
        return self.realize()(z)

    def __repr__(self) -> str:
        state = "compiled" if self._kernel is not None else "not yet compiled"
        return f"<Kernel {self.name!r}: {self.nargs} -> {self.nout} ({self.backend}, {state})>"


def frame(b: bytes) -> bytes:
    """``b`` preceded by its length (8 bytes, little-endian): one expression in a kernel's
    stored expressions."""
    return len(b).to_bytes(8, "little") + b


def unframe(data: bytes) -> list[bytes]:
    """The pieces :func:`frame` joined."""
    out, i = [], 0
    while i < len(data):
        n = int.from_bytes(data[i:i + 8], "little")
        out.append(data[i + 8:i + 8 + n])
        i += 8 + n
    return out


def serialize_expressions(se_exprs: Sequence) -> bytes:
    """symengine's own binary serialization of each expression, framed (what a saved model
    stores of a kernel)."""
    from symengine.lib.symengine_wrapper import load_basic

    out = []
    for e in se_exprs:
        red = e.__reduce__()
        if red[0] is not load_basic:           # pragma: no cover - symengine API change
            raise CompilationError("this symengine cannot serialize expressions")
        out.append(frame(red[1][0]))
    return b"".join(out)


def deserialize_expressions(data: bytes) -> list:
    """The expressions :func:`serialize_expressions` stored, read by symengine."""
    from symengine.lib.symengine_wrapper import load_basic

    return [load_basic(b) for b in unframe(data)]


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
    if b != "numpy" and any(not _is_symengine(e) and e.has(sm.Heaviside) for e in exprs):
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
            return _LazyKernel(nargs, len(se_exprs), b, name, build, start)
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
    memo = _MEMORY.setdefault(_FUNCTIONS, {}) if key is not None else None
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
