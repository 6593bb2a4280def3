"""The terms of a compiled robot model at one state: M_d and g_d of M_d u' + g_d = 0."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError

__all__ = ["dynamic_terms"]


def dynamic_terms(model: Any, q: Any, u: Any, p: Any = None, r: Any = None,
                  t: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``(M_d, g_d)`` of a compiled model (``symbody.compile(robot.eom)``) at coordinates q
    (N) and all speeds u (o): the mass matrix (o x o) and the rest of M_d u' + g_d = 0 (o),
    i.e. for a robot ``g_d = C(q, u) u + g(q) + D u + F sign(u) - tau`` with tau = r.
    ``p``: the constants (default: the model's defaults need to be given; use
    ``robot.constants``)."""
    L = model.layout
    u = np.asarray(u, dtype=float)
    if u.shape != (L.o,):
        raise InputError(f"dynamic_terms: u must have all {L.o} speeds, got shape {u.shape}")
    z = model.arguments(t, q, u, p, r)
    out = np.empty(model.kernels.main.nout)
    model.kernels.main.into(z, out)
    K, o = L.K, L.o
    S = out[L.main_system].reshape(K, K, order="F")
    return S[:o, :o].copy(), -out[L.main_rhs][:o]
