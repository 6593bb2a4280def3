"""The compiled kernel objects: :class:`Kernel` (``z (nargs,) -> (nout,)``, or
``(k, nargs) -> (k, nout)``), :class:`LazyKernel` (machine code generated at first use or
in a background thread) and the stored form of a kernel's expressions (framed symengine
serializations).  Built by :mod:`.kernel_backends` through :func:`.codegen.compile_kernel`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import CompilationError

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



class LazyKernel:
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
