"""On-disk cache of compiled kernels.

A kernel is stored under a key that is the SHA-256 hash of everything that
determines the machine code: the expressions (after their arguments are renamed
to positional symbols ``_a0, _a1, ...``), the number of arguments, the backend
and the versions of symengine, Python and this cache format.  The second
compilation of the same equations therefore costs only the symbolic conversion
and a file read.

What is stored:

* ``llvm`` backend: the pickled symengine ``LLVMDouble`` object.  symengine
  serialises the optimised LLVM object code, so loading does not recompile.
* ``lambda`` and ``numpy`` backends: nothing on disk (symengine's interpreted
  ``LambdaDouble`` cannot be pickled, and ``sympy.lambdify`` output is cheap
  to rebuild relative to its evaluation cost); they use the in-process cache only.

Location: ``$SYMBODY_CACHE_DIR`` if set, else ``~/.cache/symbody``.  Entries
are written atomically (temporary file + rename), so concurrent processes can
share a cache; an unreadable or corrupt entry is ignored and rebuilt.  The
files are Python pickles: only point ``SYMBODY_CACHE_DIR`` at a directory you
trust.  Remove the directory (or call :func:`clear_cache`) to empty the cache.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import platform
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["cache_dir", "cache_key", "load_cached", "store_cached", "clear_cache"]

#: Bumped whenever the layout of cached objects changes.
CACHE_FORMAT = 1


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


def _path(key: str) -> Path:
    return cache_dir() / "kernels" / key[:2] / f"{key}.pkl"


def load_cached(key: str) -> Any | None:
    """The object stored under ``key``, or None when absent or unreadable."""
    path = _path(key)
    try:
        with open(path, "rb") as fh:
            return pickle.load(fh)
    except FileNotFoundError:
        return None
    except Exception:  # corrupt or incompatible entry: rebuild it
        try:
            path.unlink()
        except OSError:
            pass
        return None


def store_cached(key: str, obj: Any) -> bool:
    """Store ``obj`` under ``key``; return False (silently) if it cannot be written."""
    path = _path(key)
    try:
        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return True
    except Exception:
        return False


def clear_cache() -> None:
    """Delete every cached kernel."""
    shutil.rmtree(cache_dir() / "kernels", ignore_errors=True)
