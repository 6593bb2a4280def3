"""The force side of an OpenSim model: one builder per force family, found by XML tag.

A builder takes one element of the model's ``<ForceSet>`` and a :class:`ForceContext` (the
model's coordinates, speeds and body kinematics) and returns a :class:`ForceContribution`:
generalized forces Q (one per speed, added to M u' + C u + g = Q), and whatever the force
brings with it (specified inputs such as excitations, extra states such as activations with
their derivatives, constants, SymPy loads for ``model.system``, scene items).  Builders
register under the element names they build::

    @register_force("CoordinateActuator")
    def coordinate_actuator(element, ctx):
        ...
        return ForceContribution(generalized=ctx.coordinate_force("r_elbow_flex", f * tau))

An element whose tag has no builder is never dropped silently: ``load_opensim`` refuses it
(``unsupported="error"``, naming the element and its line) or loads the model without it with
an :class:`OpenSimImportWarning` that names it (``unsupported="warn"``, the default).  The
modules of this package, one per family, register themselves when imported
(:data:`FAMILIES`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from .base import ForceContext, ForceContribution

__all__ = ["ForceContext", "ForceContribution", "FORCE_BUILDERS", "FAMILIES", "register_force",
           "builder_for"]

#: XML element name -> builder(element, ctx) -> ForceContribution
FORCE_BUILDERS: dict[str, Callable] = {}

#: the modules of this package that register builders (one per force family)
FAMILIES: tuple[str, ...] = ("muscles", "millard", "degroote", "thelen", "schutte", "actuators",
                             "coordinate_forces", "point_forces", "bushing", "contact_forces",
                             "path_forces")


def register_force(*tags: str) -> Callable:
    """Decorator: register ``builder(element, ctx)`` for the XML element names ``tags``."""
    def deco(fn: Callable) -> Callable:
        for t in tags:
            FORCE_BUILDERS[t] = fn
        return fn
    return deco


def builder_for(tag: str) -> Callable | None:
    """The builder of an element name (None: not supported), loading the families first."""
    for fam in FAMILIES:
        importlib.import_module(f"{__name__}.{fam}")
    return FORCE_BUILDERS.get(tag)
