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

__all__ = ["to_opensim", "from_opensim"]


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
