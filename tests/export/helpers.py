"""Shared helpers of the export tests: zoo models compiled once, the C compiler run on the
exported files (``cc -std=c99 -O2 -Wall -Werror``, libm only), the library loaded by ctypes."""

from __future__ import annotations

import ctypes
import functools
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import symbody as sb

CFLAGS = ["-std=c99", "-O2", "-Wall", "-Werror"]


def compiler() -> str:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    return cc


@functools.cache
def zoo_model(name: str, **options):
    zoo = sb.models.get(name, **options)
    return zoo, sb.compile(zoo.eom)


def build_shared(source: Path, out: Path) -> ctypes.CDLL:
    """The exported C compiled alone (strict flags) as a shared library."""
    r = subprocess.run([compiler(), *CFLAGS, "-fPIC", "-shared", str(source), "-o", str(out), "-lm"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return ctypes.CDLL(str(out))


def build_program(sources: list[Path], out: Path) -> Path:
    r = subprocess.run([compiler(), *CFLAGS, "-o", str(out), *map(str, sources), "-lm"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def ptr(a: np.ndarray) -> ctypes.c_void_p:
    return ctypes.c_void_p(a.ctypes.data)
