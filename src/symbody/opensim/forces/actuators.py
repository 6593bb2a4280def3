"""``CoordinateActuator``: a generalized force on one coordinate, τ = optimal_force · c, with
the control c an input (``control_<name>``), as OpenSim applies it (a mobility force on the
coordinate's speed)."""

from __future__ import annotations

import re

from sympy.physics.mechanics import dynamicsymbols

from . import register_force
from .base import ForceContext, ForceContribution
from .system_form import MobilityLoad

__all__ = ["coordinate_actuator"]


@register_force("CoordinateActuator")
def coordinate_actuator(element, ctx: ForceContext) -> ForceContribution:
    """τ = optimal_force · control on the coordinate the element names."""
    path = (element.text_of("coordinate") or "").strip()
    name = path.rstrip("/").rsplit("/", 1)[-1]
    if name not in ctx.coordinate_names:
        raise element.error(f"<coordinate> {path!r} is not a coordinate of the model")
    ident = re.sub(r"\W", "_", element.name or name)
    control = dynamicsymbols(f"control_{ident}")
    tau = element.number("optimal_force", 1.0) * ctx.symbol(control)
    return ForceContribution(generalized=ctx.coordinate_force(name, tau), specifieds=(control,),
                             system_loads=(MobilityLoad(name, tau),),
                             record=("CoordinateActuator", name))
