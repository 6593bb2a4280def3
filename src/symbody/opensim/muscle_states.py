"""The muscles' own states between symbody and OpenSim.

A muscle with activation dynamics has the state ``<path>/activation`` in OpenSim, one with a
compliant tendon also ``<path>/fiber_length`` (Millard 2012), ``<path>`` being the muscle's
absolute path (``/forceset/<name>``); OpenSim orders them after the coordinates, muscle by
muscle in the force set's order, activation first, which is the order of
``model.eom.extra_states`` (``a_<name>``, ``lM_<name>``).  :func:`opensim_state_names` gives
that correspondence; :func:`extra_to_opensim` and :func:`extra_from_opensim` move the
values (OpenSim's side: ``osim_model.getStateVariableValue(state, name)`` /
``setStateVariableValue``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError

if TYPE_CHECKING:
    from .model import OpenSimModel

__all__ = ["opensim_state_names", "extra_to_opensim", "extra_from_opensim"]


def _states_of(name: str, record: Any) -> dict:
    out = {}
    mt = getattr(record, "musculotendon", None)
    activation = getattr(record, "activation", None) or getattr(mt, "activation", None)
    if activation is not None:
        out[activation] = f"/forceset/{name}/activation"
    fiber = getattr(record, "fiber_length", None)
    if fiber is not None:
        out[fiber] = f"/forceset/{name}/fiber_length"
    return out


def opensim_state_names(model: OpenSimModel) -> tuple:
    """OpenSim's name (path) of each extra state of ``model.eom`` (its order)."""
    names = {}
    for name, record in model.forces.items():
        names.update(_states_of(name, record))
    out = []
    for x in model.eom.extra_states:
        if x not in names:
            raise InputError(f"the extra state {x} belongs to no muscle of the model")
        out.append(names[x])
    return tuple(out)


def extra_to_opensim(model: OpenSimModel, x_e: Any) -> dict:
    """``{OpenSim state name: value}`` of the extra states' values ``x_e`` (eom order)."""
    names = opensim_state_names(model)
    x = np.asarray(x_e, dtype=float).ravel()
    if x.shape != (len(names),):
        raise InputError(f"x_e must have {len(names)} entries, got shape {x.shape}")
    return dict(zip(names, x.tolist()))


def extra_from_opensim(model: OpenSimModel, values: Any) -> np.ndarray:
    """The extra states' values (eom order) from ``{OpenSim state name: value}``, or from an
    OpenSim ``Model`` and ``State`` given as ``(osim_model, state)``."""
    names = opensim_state_names(model)
    if isinstance(values, tuple) and len(values) == 2:
        osim_model, state = values
        return np.array([osim_model.getStateVariableValue(state, n) for n in names])
    missing = [n for n in names if n not in values]
    if missing:
        raise InputError(f"values: no entry for the OpenSim state {missing[0]!r}")
    return np.array([float(values[n]) for n in names])
