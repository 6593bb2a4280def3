"""Formulation layer: Kane's and Lagrange's methods and the canonical EquationsOfMotion."""

from .eom import AuxiliaryEquations, ConstraintEquations, EquationsOfMotion
from .kane import KanesMethod
from .lagrange import LagrangesMethod
from .sympy_system import register_with_sympy  # noqa: F401  (System.form_eoms type checks)

__all__ = ["EquationsOfMotion", "KanesMethod", "LagrangesMethod", "ConstraintEquations",
           "AuxiliaryEquations"]
