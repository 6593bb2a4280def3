"""Exports of a model's equations to other tools: CasADi SX functions (:func:`to_casadi`)."""

from .casadi_function import CasadiModel, to_casadi

__all__ = ["CasadiModel", "to_casadi"]
