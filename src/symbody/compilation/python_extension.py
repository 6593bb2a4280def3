"""A tiny CPython extension built from C source with the system's compiler, once per machine.

The compiled entries in front of the kernels (:mod:`.native_entry` for ``model.rhs``,
:mod:`.native_function` for robots' one-state functions) are small extension modules. Each
is built on first use with ``cc -shared -fPIC -O1``, installed in the kernel cache under a
key made of its source's SHA-256, the compiler, this Python's version and ABI tag, and
digest-checked when found again (a damaged copy is rebuilt, like a kernel). Without a
working C compiler or Python's headers the module is None and callers keep their Python
paths.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import sysconfig
import tempfile
import threading
import weakref
from pathlib import Path
from typing import Any

from . import c_kernels
from . import cache as kernel_cache

_ALL: weakref.WeakSet = weakref.WeakSet()


class PythonExtension:
    """The extension module ``name`` (``PyInit_<name>`` in ``source``), built and loaded once
    per process by :meth:`module`; ``cache_tag`` names its kind in the kernel cache's key.
    ``numpy``: it includes NumPy's C API headers (their version joins the key); ``opt``: the
    compiler's optimization flags (loops that should vectorize: ``-O3``)."""

    def __init__(self, name: str, source: str, cache_tag: str, numpy: bool = False,
                 opt: str = "-O1") -> None:
        self.name, self.source, self.cache_tag = name, source, cache_tag
        self.numpy, self.opt = numpy, opt
        self._lock = threading.Lock()
        self._tried: list = []           # [module or None] once tried in this process
        _ALL.add(self)

    def _build(self, path: Path, cc: str) -> None:
        includes = [f"-I{sysconfig.get_paths()['include']}"]
        if self.numpy:
            import numpy
            includes.append(f"-I{numpy.get_include()}")
        with tempfile.TemporaryDirectory(prefix=f"{self.name}-") as tmp:
            src = Path(tmp, f"{self.name}.c")
            src.write_text(self.source)
            lib = Path(tmp, f"{self.name}.so")
            r = subprocess.run([*cc.split(), "-shared", "-fPIC", *self.opt.split(), "-w", *includes,
                                str(src), "-o", str(lib)], capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"building {self.name} failed: {r.stderr[:2000]}")
            c_kernels.install_library(lib, path)

    def module(self) -> Any | None:
        """The extension module (built on first use, cached on disk by the hash of its source,
        the compiler and this Python's ABI), None without a working C compiler or headers."""
        with self._lock:
            if self._tried:
                return self._tried[0]
            module = None
            cc = c_kernels.compiler_available()
            if cc is not None:
                digest = hashlib.sha256(self.source.encode()).hexdigest()
                extra = []
                if self.numpy:
                    import numpy
                    extra.append(f"numpy {numpy.__version__}")
                tag = self.cache_tag if self.opt == "-O1" else f"{self.cache_tag} {self.opt}"
                key = kernel_cache.cache_key(tag, str(cc), sys.version,
                                             str(sysconfig.get_config_var("SOABI")), digest, *extra)
                try:
                    path = kernel_cache.verified_library(key)
                    if path is None:
                        path = kernel_cache.library_path(key)
                        self._build(path, cc)
                        kernel_cache.seal_library(key)
                    loader = importlib.machinery.ExtensionFileLoader(self.name, str(path))
                    spec = importlib.util.spec_from_file_location(self.name, path, loader=loader)
                    module = importlib.util.module_from_spec(spec)
                    loader.exec_module(module)
                except (RuntimeError, OSError, ImportError):
                    module = None
            self._tried.append(module)
            return module

    def after_fork(self) -> None:
        """A new lock in a forked child (one held by a parent's build thread stays held)."""
        self._lock = threading.Lock()

    def forget(self) -> None:
        """Try again at the next :meth:`module` (tests: a new cache directory)."""
        with self._lock:
            self._tried.clear()


def _after_fork_in_child() -> None:
    for extension in list(_ALL):
        extension.after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
