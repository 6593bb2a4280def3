"""Exporting a model to other tools: standalone C (:func:`export_c`), an FMI 2.0 FMU
(:func:`export_fmu`) and CasADi SX functions (:func:`to_casadi`).

This package sits beside the analysis layer: it reads a :class:`~symbody.NumericModel`'s
layout and the expressions its kernels keep (compilation layer) and writes files or builds
functions of another tool; it never changes the model.
"""

from __future__ import annotations

from .c_code import CExport, export_c
from .casadi_function import CasadiModel, to_casadi
from .fmu import export_fmu

__all__ = ["export_c", "export_fmu", "CExport", "CasadiModel", "to_casadi"]
