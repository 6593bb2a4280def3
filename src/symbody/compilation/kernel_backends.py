"""The backends that turn converted expressions into a :class:`.compiled_kernel.Kernel`:
generated C (:mod:`.c_kernels`), symengine's LLVM or interpreter, ``sympy.lambdify`` with
numpy, and ``"auto"``'s choice between C and LLVM; the in-process and on-disk kernel
caches' keys.  Reached through :func:`.codegen.compile_kernel` (the backends are described
in :mod:`.codegen`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy as sm

from ..errors import CompilationError
from ..progress import as_progress
from . import c_kernels as _c
from . import cache as _cache
from . import compiled_kernel as _kernel
from .compiled_kernel import Kernel
from .expression_conversion import _positional

try:  # symengine is a hard dependency, but keep the numpy backend usable without it
    import symengine as se
except ImportError:  # pragma: no cover
    se = None

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

#: In-process cache: key -> Kernel (shared by all models of this process), and make_function's
#: memo of functions under the key _FUNCTIONS.
_MEMORY: dict[str, Any] = {}
#: one lock per C kernel key: two threads building the same kernel (two models with equal
#: expressions, compiled in background threads) take turns, the second finding the first's
_KEY_LOCKS: dict[str, threading.Lock] = {}
_KEY_LOCKS_GUARD = threading.Lock()


def _key_lock(key: str) -> threading.Lock:
    with _KEY_LOCKS_GUARD:
        return _KEY_LOCKS.setdefault(key, threading.Lock())


def _after_fork_in_child() -> None:
    global _KEY_LOCKS_GUARD
    _KEY_LOCKS_GUARD = threading.Lock()      # (one held by a parent's build thread stays held)
    _KEY_LOCKS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)



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
            with _kernel._SYMENGINE_LOCK:  # noqa: SLF001 (the lock a fork renews)         # one code generation at a time (background builds)
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

    nout = len(se_exprs)
    if nout == 0:
        return Kernel(nargs, 0, "c", name, lambda z, out: None, lambda Z: np.empty((len(Z), 0)),
                      {"kind": "symengine", "exprs": [], "serialized": None, "lambdify": None})
    if lanes > 1:
        from . import c_lanes
        digest = f"{digest}:lanes{lanes}:{c_lanes.VERSION}"
    key = _c_key(nargs, nout, digest)
    with _key_lock(key):
        return _c_kernel_locked(key, nargs, se_exprs, name, use_disk, progress, program, lanes)


def _c_kernel_locked(key: str, nargs: int, se_exprs: list, name: str, use_disk: bool,
                     progress: Any, program: _c.StraightLineProgram | None, lanes: int) -> Kernel:
    """:func:`_c_kernel` under the key's lock."""
    import shutil
    import tempfile
    from pathlib import Path

    nout = len(se_exprs)
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

