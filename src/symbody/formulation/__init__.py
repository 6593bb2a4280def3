"""Formulation layer: Kane's and Lagrange's methods and the canonical EquationsOfMotion."""

from .eom import EquationsOfMotion
from .kane import KanesMethod
from .lagrange import LagrangesMethod

__all__ = ["EquationsOfMotion", "KanesMethod", "LagrangesMethod"]
