"""Formulation layer: Kane's and Lagrange's methods and the canonical EquationsOfMotion."""

from .eom import EquationsOfMotion

__all__ = ["EquationsOfMotion"]
