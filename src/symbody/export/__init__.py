"""Exporting a compiled model: standalone C (:func:`export_c`) and an FMI 2.0 FMU
(:func:`export_fmu`).

This package sits beside the analysis layer: it reads a :class:`~symbody.NumericModel`'s
layout and the expressions its kernels keep (compilation layer) and writes files; it never
changes the model.
"""

from __future__ import annotations

from .c_code import CExport, export_c
from .fmu import export_fmu

__all__ = ["export_c", "export_fmu", "CExport"]
