"""Compilation layer: EquationsOfMotion -> NumericModel (compiled kernels, numeric elimination).

``compile(eom, ...)`` builds a :class:`NumericModel`; ``make_function`` compiles any
expressions of symbols (energies, outputs, drawing points) with the same backends
and on-disk cache.
"""

from .build import compile
from .cache import cache_dir, clear_cache
from .codegen import NumericFunction, available_backends, make_function
from .kernel_layout import KernelLayout
from .numeric_model import NumericModel, SingularMassMatrixError

__all__ = ["compile", "NumericModel", "NumericFunction", "make_function", "available_backends",
           "cache_dir", "clear_cache", "SingularMassMatrixError", "KernelLayout"]
