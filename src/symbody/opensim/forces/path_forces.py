"""Forces along a geometry path that are not muscles: ``PathActuator`` and ``PathSpring``.

Both pull along their path with a tension T (positive shortens it), applied as a muscle's
is: Q = -T J_Lᵀ with L' = J_L u (:mod:`.muscles`), over wrap objects too.

- ``PathActuator``: T = optimal_force · c, the control c an input ``control_<name>``
  (OpenSim's ``PathActuator::computeActuation``); its path is a muscle path, so the
  actuator is in ``model.muscle_names`` with its length and moment arms, as OpenSim lists
  it with ``getLength``/``computeMomentArm``.
- ``PathSpring``: T = k · max(L - L_rest, 0) · (1 + d · L') (stiffness k, resting length,
  dissipation d; ``PathSpring::getTension``).  Not a muscle: ``model.forces[name]`` holds its
  :class:`PathSpringRecord`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import symengine as se
from sympy.physics.mechanics import dynamicsymbols

from . import register_force
from .base import ForceContext, ForceContribution
from .geometry_path import GeometryPathExpressions
from .muscles import MuscleRecord, path_of

__all__ = ["PathSpringRecord", "path_actuator", "path_spring", "lengthening_speed"]


@dataclass
class PathSpringRecord:
    """What ``model.forces[name]`` holds for a ``PathSpring``: its ``geometry_path`` and
    ``tension`` (symengine, in q and u)."""

    geometry_path: GeometryPathExpressions
    tension: se.Basic


def lengthening_speed(path: GeometryPathExpressions, ctx: ForceContext) -> se.Basic:
    """L' = Σ_k row[k] u_k over the model's speeds (Simbody order k), the row of OpenSim's
    lengthening speed (``path.speed_row``: over several wrap objects not the forces' row)."""
    coords = [ctx.coordinate(n) for n in ctx.coordinate_names]
    return sum((path.speed_row[c[4]] * c[1] for c in coords), se.Integer(0))


@register_force("PathActuator")
def path_actuator(element, ctx: ForceContext) -> ForceContribution:
    """T = optimal_force · control along the actuator's path."""
    path = path_of(element, ctx)
    ident = re.sub(r"\W", "_", element.name)
    control = dynamicsymbols(f"control_{ident}")
    tension = element.number("optimal_force", 1.0) * ctx.symbol(control)
    return ForceContribution(generalized=[-tension * j for j in path.jacobian],
                             specifieds=(control,), record=MuscleRecord(element.tag, path))


@register_force("PathSpring")
def path_spring(element, ctx: ForceContext) -> ForceContribution:
    """T = k · max(L - L_rest, 0) · (1 + d · L') along the spring's path."""
    path = path_of(element, ctx)
    k = element.number("stiffness")
    rest = element.number("resting_length")
    d = element.number("dissipation")
    if k < 0 or rest < 0 or d < 0:
        raise element.error(f"stiffness, resting_length and dissipation must not be negative, "
                            f"got {k}, {rest}, {d}")
    stretch = se.Piecewise((path.length - se.Float(rest), se.Gt(path.length, se.Float(rest))),
                           (se.Integer(0), se.true))
    tension = se.Float(k) * stretch * (1 + se.Float(d) * lengthening_speed(path, ctx))
    return ForceContribution(generalized=[-tension * j for j in path.jacobian],
                             record=PathSpringRecord(path, tension))
