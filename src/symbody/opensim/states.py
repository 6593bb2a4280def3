"""Moving states between symbody and OpenSim.

OpenSim's state holds Simbody's generalized coordinates Q and speeds U in the order of the
mobilized bodies (:mod:`.multibody`); a symbody model holds the same numbers (the same
coordinates and speeds, Ball and Free joints included) in its own order, the independent
ones first.  The maps are permutations, except that Simbody keeps four slots of Q for the
rotation of a Ball or Free joint even with Euler angles (OpenSim's choice): the fourth is
unused (0 in :func:`to_opensim`, ignored by :func:`from_opensim`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError

if TYPE_CHECKING:
    from .model import OpenSimModel

__all__ = ["to_opensim", "from_opensim", "extra_state_paths", "extra_to_opensim", "extra_from_opensim"]


def _vector(v: Any, n: int, what: str) -> np.ndarray:
    if hasattr(v, "size") and hasattr(v, "get") and not isinstance(v, np.ndarray):
        v = [v.get(i) for i in range(v.size())]        # a SimTK Vector
    a = np.asarray(v, dtype=float).ravel()
    if a.shape != (n,):
        raise InputError(f"{what} must have {n} entries, got shape {a.shape}")
    return a


def to_opensim(model: OpenSimModel, q: Any, u: Any = None) -> tuple:
    """(Q, U) in OpenSim's order from q, u in the model's order."""
    n = len(model.coordinates)
    qa = _vector(q, n, "q")
    ua = np.zeros(n) if u is None else _vector(u, n, "u (all speeds)")
    Qs, U = np.empty(n), np.empty(n)
    Qs[list(model.simbody_index)] = qa
    U[list(model.simbody_index)] = ua
    Q = np.zeros(model.simbody_nq)
    Q[list(model.simbody_q_slots)] = Qs
    return Q, U


def from_opensim(model: OpenSimModel, Q: Any, U: Any = None) -> tuple:
    """(q, u) in the model's order from OpenSim's Q, U (arrays, or a State)."""
    n = len(model.coordinates)
    if U is None and hasattr(Q, "getQ"):
        Q, U = Q.getQ(), Q.getU()
    Qa = _vector(Q, model.simbody_nq, "Q")[list(model.simbody_q_slots)]
    Ua = np.zeros(n) if U is None else _vector(U, n, "U")
    return Qa[list(model.simbody_index)].copy(), Ua[list(model.simbody_index)].copy()


def extra_state_paths(model: OpenSimModel) -> tuple:
    """OpenSim's state-variable path of each extra state (``model.eom.extra_states``, in
    order): ``<muscle>.activation`` is ``/forceset/<muscle>/activation``, and so on."""
    out = []
    for x in model.eom.extra_states:
        owner, _, var = str(x.func).rpartition(".")
        if not owner or owner not in model.forces:
            raise InputError(f"the extra state {x} is not a state variable of an OpenSim force")
        out.append(f"/forceset/{owner}/{var}")
    return tuple(out)


def extra_to_opensim(model: OpenSimModel, z: Any) -> dict:
    """{OpenSim state-variable path: value} of the extra states z (model order)."""
    paths = extra_state_paths(model)
    return dict(zip(paths, _vector(z, len(paths), "z").tolist()))


def extra_from_opensim(model: OpenSimModel, values: Any) -> np.ndarray:
    """The extra states (model order) from {OpenSim state-variable path: value} (or an
    OpenSim ``Model`` and ``State``: ``(osim_model, state)``)."""
    paths = extra_state_paths(model)
    if isinstance(values, tuple) and len(values) == 2:
        osim_model, state = values
        return np.array([osim_model.getStateVariableValue(state, p) for p in paths])
    missing = [p for p in paths if p not in values]
    if missing:
        raise InputError(f"values has no entry {missing[0]!r} (OpenSim's state-variable path)")
    return np.array([float(values[p]) for p in paths])
