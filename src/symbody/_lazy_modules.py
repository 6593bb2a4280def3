"""Modules imported on first attribute access: ``se = lazy_module("symengine")``.

``import symbody`` should cost about what ``import sympy.physics.mechanics`` costs.  The
formulation layer refers to numpy and symengine at module level but uses them only when
equations are formed, and the two take about a third of the import time of
sympy.physics.mechanics.  (The standard library's ``importlib.util.LazyLoader`` does not
help on Python 3.11: any later ``import symengine`` statement touches the module's
``__spec__`` and loads it.)  The proxy imports the real module on first use and copies
its namespace into itself, so later attribute reads cost what a module's do.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class _LazyModule(ModuleType):
    def __init__(self, name: str):
        super().__init__(name)
        self.__dict__["_lazy_target"] = name

    def __getattr__(self, attr: str) -> Any:          # only called for missing attributes
        module = importlib.import_module(self.__dict__["_lazy_target"])
        for key, value in vars(module).items():
            if key not in ("__name__", "__dict__"):
                self.__dict__[key] = value
        try:
            return getattr(module, attr)
        except AttributeError:
            raise AttributeError(f"module {module.__name__!r} has no attribute {attr!r}") from None


def lazy_module(name: str) -> Any:
    """A stand-in for ``import name`` that imports the module when first used."""
    return _LazyModule(name)
