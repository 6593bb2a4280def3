"""SymPy's own test modules for KanesMethod, LagrangesMethod and linearize, run against symbody.

Each test function of the installed sympy/physics/mechanics/tests/test_kane*.py,
test_lagrange*.py and test_linearize.py is run with the module-level names
``KanesMethod`` and ``LagrangesMethod`` swapped for symbody's classes (the
modules import them by name from sympy.physics.mechanics).  Used by
tests/formulation/test_sympy_suite.py (a subset) and
benchmarks/bench_sympy_suite.py (all of them, timed against SymPy's own run).
"""

from __future__ import annotations

import importlib
import inspect
import time
from collections.abc import Iterator
from contextlib import contextmanager

import symbody as sb

MODULES = ("test_kane", "test_kane2", "test_kane3", "test_kane4", "test_kane5",
           "test_lagrange", "test_lagrange2", "test_linearize")
PACKAGE = "sympy.physics.mechanics.tests"
SWAPPED = {"KanesMethod": sb.KanesMethod, "LagrangesMethod": sb.LagrangesMethod}


def module(name: str):
    return importlib.import_module(f"{PACKAGE}.{name}")


def test_names(name: str) -> list[str]:
    mod = module(name)
    return [n for n, f in inspect.getmembers(mod, inspect.isfunction)
            if n.startswith("test_") and f.__module__ == mod.__name__]


def all_tests() -> list[tuple[str, str]]:
    return [(m, n) for m in MODULES for n in test_names(m)]


@contextmanager
def swapped(name: str, use_symbody: bool = True) -> Iterator[None]:
    """Within the block, the module's KanesMethod/LagrangesMethod are symbody's."""
    mod = module(name)
    saved = {k: mod.__dict__[k] for k in SWAPPED if k in mod.__dict__}
    try:
        if use_symbody:
            for k in saved:
                setattr(mod, k, SWAPPED[k])
        yield
    finally:
        for k, v in saved.items():
            setattr(mod, k, v)


def run(name: str, test: str, use_symbody: bool = True) -> float:
    """Run one SymPy test function (symbody's classes swapped in); return its wall time [s]."""
    with swapped(name, use_symbody):
        fn = getattr(module(name), test)
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
