"""How a force element acts on ``model.system`` (SymPy's ``System``): loads described in the
builders' symengine, turned into SymPy ``Force``/``Torque`` loads by
:mod:`symbody.opensim.system_loads` once the System's frames and points exist.

- :class:`PointLoad`: a force F (ground coordinates) on the material point of a body at a
  station r (body coordinates); its power is F · (v_O + ω × r).
- :class:`BodyTorque`: a torque T (ground coordinates) on a body; power T · ω.
- :class:`MobilityLoad`: a generalized force τ on one coordinate's speed u_k, as OpenSim
  applies a mobility force: a force and torque on the joint's child at M's origin and their
  opposites on the parent there, whose power is τ u_k.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["PointLoad", "BodyTorque", "MobilityLoad"]


@dataclass(frozen=True)
class PointLoad:
    """F (``force``: 3, ground coordinates, symengine) on ``body`` at ``station`` (3, body
    coordinates: numbers or symengine in q)."""

    body: str
    station: tuple
    force: tuple


@dataclass(frozen=True)
class BodyTorque:
    """T (``torque``: 3, ground coordinates, symengine) on ``body``."""

    body: str
    torque: tuple


@dataclass(frozen=True)
class MobilityLoad:
    """A generalized force ``value`` (symengine) on the speed of ``coordinate``."""

    coordinate: str
    value: Any
