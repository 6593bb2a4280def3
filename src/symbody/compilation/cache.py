"""On-disk cache of compiled kernels.

A kernel is stored under a key that is the SHA-256 hash of everything that
determines the machine code: the expressions (after their arguments are renamed
to positional symbols ``_a0, _a1, ...``), the number of arguments, the backend
and the versions of symengine, Python and this cache format.  The second
compilation of the same equations therefore costs only the symbolic conversion
and a file read.

What is stored:

* ``c`` kernels (generated C, see :mod:`.c_kernels`): the shared library
  ``<key>.so`` and beside it ``<key>.so.sha256``, the SHA-256 of the library's
  bytes, checked before the library is loaded.
* ``llvm`` kernels: the pickled symengine ``LLVMDouble`` object (symengine
  serialises the optimised LLVM object code, so loading does not recompile),
  stored as its SHA-256 digest followed by the pickle; the digest is checked
  before unpickling.
* ``lambda`` and ``numpy`` backends: nothing on disk (symengine's interpreted
  ``LambdaDouble`` cannot be pickled, and ``sympy.lambdify`` output is cheap
  to rebuild relative to its evaluation cost); they use the in-process cache only.

Location: ``$SYMBODY_CACHE_DIR`` if set, else ``~/.cache/symbody``.  Entries
are written atomically (temporary file + rename), so concurrent processes can
share a cache; an entry whose digest does not match (truncated, corrupt) is
ignored, deleted and rebuilt.  Entries are unpickled by a restricted unpickler that
accepts only symengine's LLVM kernels and plain data, and machine code is parsed
(:mod:`.object_code`: object files and shared libraries well formed, for this machine)
before it is mapped, so a malformed entry is rebuilt rather than aborting the
interpreter.  The digests and checks catch damage, not malice: the entries hold machine
code that runs, so only point ``SYMBODY_CACHE_DIR`` at a directory you trust.  Remove the directory (or call
:func:`clear_cache`) to empty the cache.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import platform
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["cache_dir", "cache_key", "load_cached", "store_cached", "clear_cache", "library_path",
           "verified_library", "seal_library", "store_library"]

#: Bumped whenever the layout of cached objects changes.
CACHE_FORMAT = 2


def cache_dir() -> Path:
    """The cache directory: ``$SYMBODY_CACHE_DIR`` or ``~/.cache/symbody``."""
    env = os.environ.get("SYMBODY_CACHE_DIR", "").strip()
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "symbody"


def _versions() -> str:
    try:
        import symengine
        se_version = symengine.__version__
    except Exception:  # pragma: no cover - symengine is a dependency
        se_version = "none"
    return (f"fmt{CACHE_FORMAT}|py{sys.version_info[0]}.{sys.version_info[1]}|"
            f"se{se_version}|{platform.machine()}|{sys.platform}")


def cache_key(*parts: str) -> str:
    """SHA-256 of the version tag and ``parts`` (strings), as 64 hex digits."""
    h = hashlib.sha256(_versions().encode())
    for part in parts:
        h.update(b"\x00")
        h.update(part.encode())
    return h.hexdigest()


def _path(key: str, folder: str = "kernels") -> Path:
    return cache_dir() / folder / key[:2] / f"{key}.pkl"


def _unlink(*paths: Path) -> None:
    for path in paths:
        try:
            path.unlink()
        except OSError:
            pass


def load_cached(key: str, folder: str = "kernels") -> Any | None:
    """The object stored under ``key`` (in ``folder`` of the cache), or None when absent,
    unreadable or failing its digest."""
    path = _path(key, folder)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError:
        return None
    digest, payload = data[:32], data[32:]
    if len(digest) != 32 or hashlib.sha256(payload).digest() != digest:
        _unlink(path)                      # corrupt or truncated entry: rebuild it
        return None
    try:
        return _EntryUnpickler(io.BytesIO(payload)).load()
    except Exception:  # incompatible, foreign or malformed entry: rebuild it
        _unlink(path)
        return None


def _checked_llvm_loading_func(*args):
    """symengine's ``llvm_loading_func`` after :func:`.object_code.check_object_code` has
    parsed the object code (its last argument): a malformed object is a ModelFileError (the
    entry is rebuilt), not an LLVM abort of the interpreter."""
    from symengine.lib.symengine_wrapper import llvm_loading_func

    from .object_code import check_object_code

    if not args:
        raise pickle.UnpicklingError("an LLVM kernel entry without arguments")
    check_object_code(args[-1], "kernel cache entry")
    return llvm_loading_func(*args)


class _EntryUnpickler(pickle.Unpickler):
    """Unpickles only what the cache stores: symengine LLVM kernels (``LLVMDouble``, whose
    pickle calls ``llvm_loading_func`` with the object code, checked first) and plain
    data (the backend choices are strings).  Any other global is refused."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("symengine.lib.symengine_wrapper", "llvm_loading_func"):
            return _checked_llvm_loading_func
        if (module, name) == ("numpy", "float64"):
            import numpy
            return numpy.float64
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a kernel cache entry")


def store_cached(key: str, obj: Any, folder: str = "kernels") -> bool:
    """Store ``obj`` under ``key`` (in ``folder`` of the cache); return False (silently) if it
    cannot be written."""
    path = _path(key, folder)
    try:
        payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        data = hashlib.sha256(payload).digest() + payload
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, data)
        return True
    except Exception:
        return False


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        _unlink(Path(tmp))
        raise


def library_path(key: str) -> Path:
    """Where the shared library of the kernel ``key`` lives (it may not exist)."""
    return cache_dir() / "kernels" / key[:2] / f"{key}.so"


def verified_library(key: str) -> Path | None:
    """The cached library of ``key`` if present and its bytes match the stored SHA-256, else None.

    A library with a wrong digest is deleted (it is rebuilt).  One without a digest yet is
    left alone: another thread or process may have written it and not sealed it yet (the
    rebuild replaces it atomically).
    """
    lib = library_path(key)
    sig = lib.with_name(lib.name + ".sha256")
    try:
        expected = sig.read_text().strip()
        actual = hashlib.sha256(lib.read_bytes()).hexdigest()
    except OSError:
        return None
    if actual != expected or not _valid_library(lib):
        _unlink(lib, sig)
        return None
    return lib


def _valid_library(lib: Path) -> bool:
    """The library parses as an ELF shared library for this machine (Linux; see
    :func:`.object_code.check_shared_library`)."""
    from ..errors import SymbodyError
    from .object_code import check_shared_library

    try:
        check_shared_library(lib.read_bytes(), str(lib))
    except (SymbodyError, OSError):
        return False
    return True


def store_library(key: str, data: bytes) -> Path:
    """Write the shared library bytes ``data`` as the library of ``key`` (atomically) with
    its SHA-256; returns its path."""
    lib = library_path(key)
    lib.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(lib, data)
    seal_library(key)
    return lib


def seal_library(key: str) -> bool:
    """Record the SHA-256 of the freshly written library of ``key``; False if impossible."""
    lib = library_path(key)
    try:
        digest = hashlib.sha256(lib.read_bytes()).hexdigest()
        _write_atomic(lib.with_name(lib.name + ".sha256"), digest.encode() + b"\n")
        return True
    except OSError:
        return False


def clear_cache() -> None:
    """Delete every cached kernel (and the backend choices of ``backend="auto"``)."""
    shutil.rmtree(cache_dir() / "kernels", ignore_errors=True)
    shutil.rmtree(cache_dir() / "choices", ignore_errors=True)
