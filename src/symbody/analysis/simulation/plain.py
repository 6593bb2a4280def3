"""Constraint mode "none": the plain ODE x' = f(t, x); f_h drifts with the integration error.

This is the books' approach: the dependent speeds are still solved from the velocity
constraints at every evaluation (they hold to round-off), but nothing holds the
coordinates on f_h(q, t) = 0.
"""

from __future__ import annotations

from typing import ClassVar

from .strategy import ConstraintMode

__all__ = ["Plain"]


class Plain(ConstraintMode):
    """``constraints="none"``: integrate x' = f(t, x) with a scipy solver, nothing more."""

    name: ClassVar[str] = "none"
