"""The masses and inertias of a formulation's bodies, kept with its EquationsOfMotion so that
the numbers a run gives them can be checked (``EquationsOfMotion.body_inertias``).

For each body: its name, its mass m (an expression in the constants) and, for a rigid body,
its central inertia I (3 x 3, in the body's frame).  A run needs m > 0 and I positive
semidefinite (zero moments allowed: thin rods, point masses); with m = -1 the integrator
otherwise fails far from the cause ("Required step size is less than spacing between
numbers").  The check is :func:`symbody.compilation.body_check.check_body_inertias`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import sympy as sm

__all__ = ["BodyInertia", "body_inertias"]


@dataclass(frozen=True)
class BodyInertia:
    """``name``; ``mass`` (an expression); ``inertia``: the central inertia (3 x 3 Matrix in
    the body's frame), None for a particle."""

    name: str
    mass: sm.Expr
    inertia: sm.MatrixBase | None = None


def body_inertias(bodies: Iterable | None) -> tuple[BodyInertia, ...]:
    """The :class:`BodyInertia` of each RigidBody or Particle in ``bodies`` (others skipped)."""
    from sympy.physics.mechanics import Particle, RigidBody

    out = []
    for body in bodies or ():
        if isinstance(body, RigidBody):
            try:
                inertia = sm.Matrix(body.central_inertia.to_matrix(body.frame))
            except (AttributeError, TypeError, ValueError):
                inertia = None
            out.append(BodyInertia(str(body.name), sm.sympify(body.mass), inertia))
        elif isinstance(body, Particle):
            out.append(BodyInertia(str(body.name), sm.sympify(body.mass)))
    return tuple(out)
