"""Muscles and path actuators: their ``GeometryPath`` (:mod:`.geometry_path`) and, where the
muscle model is built, their force along it.

Every ``<...Muscle>`` and ``<PathActuator>`` of the file gets its path, so that
``model.muscle_names``, ``model.musculotendon_lengths(q)`` and ``model.moment_arms(q)``
cover it.  A path tension T gives the generalized forces Q = -T J_Lᵀ (L' = J_L u), over a
wrap object too (:mod:`.wrapped_path`).  Muscle models whose dynamics is not built
(:data:`PATH_ONLY_MUSCLES`) contribute their path only, and the model names them in
``model.left_out`` and its import warning.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import register_force
from .base import ForceContext, ForceContribution
from .geometry_path import ForceNotBuilt, GeometryPathExpressions, build_geometry_path

__all__ = ["MuscleRecord", "PATH_ONLY_MUSCLES", "path_of", "ForceNotBuilt"]

#: muscle models whose path is built but whose force is not (named in model.left_out)
PATH_ONLY_MUSCLES = ("Millard2012AccelerationMuscle",
                     "Delp1990Muscle_Deprecated", "RigidTendonMuscle", "McKibbenActuator")


@dataclass
class MuscleRecord:
    """What ``model.forces[name]`` holds for a muscle: its ``tag``, ``path``
    (:class:`~.geometry_path.GeometryPathExpressions`) and, when its force is built, the
    SymPy musculotendon object ``musculotendon`` (else None)."""

    tag: str
    path: GeometryPathExpressions
    musculotendon: object = None


def path_of(element, ctx: ForceContext) -> GeometryPathExpressions:
    """The built ``GeometryPath`` (its ``<GeometryPath>`` child, or the 4.x ``<path>``)."""
    gp = element.find("GeometryPath")
    if gp is None:
        path = element.find("path")
        gp = path.find("GeometryPath") if path is not None else None
    if gp is None:
        raise element.error(f"{element.tag} {element.name!r} has no <GeometryPath>")
    return build_geometry_path(gp, ctx, element)


@register_force(*PATH_ONLY_MUSCLES)
def path_only_muscle(element, ctx: ForceContext) -> ForceContribution:
    """The muscle's path; its force is left out (named by the model)."""
    path = path_of(element, ctx)
    return ForceContribution(record=MuscleRecord(element.tag, path),
                             left_out=f"{element.tag} dynamics not built: its path only "
                                      "(lengths and moment arms), no force")
