"""The initial state of a simulation: read x0, make it consistent, say what changed.

``x0`` is a dict keyed by symbol or name, or an array in ``model.states`` order
``[q (N), u_ind (p)]`` (or ``[q (N), u (o)]`` with the dependent speeds).  The dependent
coordinates are solved from f_h(q, t) = 0 by Newton's method (the independent ones held)
and the dependent speeds from the velocity constraints B u + b = 0.  Where x0 gave a
dependent value that disagrees with the constraints, an :class:`InitialStateWarning`
says which value, by how much, and what was used instead.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping

import numpy as np

from ..compilation import NumericModel
from ..formatting import symbol_name as _short

__all__ = ["InitialStateWarning", "initial_state"]


class InitialStateWarning(UserWarning):
    """A dependent value given in x0 disagreed with the constraints and was replaced."""


def _tolerance(value: float) -> float:
    # values solved by Newton's method to ~1e-10 (relative): a larger gap is the user's
    return 1e-8 * (1.0 + abs(value))


def _given_dependent_speeds(model: NumericModel, x0) -> dict[int, float]:
    """Values x0 gives for the dependent speeds: index into ``model.speeds`` -> value."""
    out: dict[int, float] = {}
    if not model.m:
        return out
    if isinstance(x0, Mapping):
        names = {}
        for i, s in enumerate(model.speeds[model.p:], start=model.p):
            names[s] = i
            names[str(s)] = i
            names[_short(s)] = i
        for key, val in x0.items():
            k = key.strip() if isinstance(key, str) else key
            if k in names:
                try:
                    out[names[k]] = float(val)
                except (TypeError, ValueError):
                    pass
        return out
    try:
        arr = np.asarray(x0, dtype=float).ravel()
    except (TypeError, ValueError):
        return out
    if arr.size == model.N + model.o:
        for j in range(model.m):
            out[model.p + j] = float(arr[model.N + model.p + j])
    return out


def initial_state(model: NumericModel, x0: np.ndarray | Mapping, P: np.ndarray, t0: float,
                  r_fun: Callable[[float, np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    """The consistent initial state ``[q (N), u_ind (p)]`` for ``x0`` (see the module docstring).

    Warns (:class:`InitialStateWarning`) for each dependent coordinate or speed given in
    x0 that differs from the constrained value by more than 1e-8 (1 + |value|).
    """
    given_u = _given_dependent_speeds(model, x0)
    x = model.state_array(x0)
    consistent = model.consistent_state(x, P, t0)
    N = model.N
    notes = []
    for i in range(model.n, N):
        given, used = x[i], consistent[i]
        if abs(given - used) > _tolerance(used):
            notes.append(f"{_short(model.coordinates[i])} = {given:.10g} misses the holonomic constraints "
                         f"(the dependent coordinate differs by {abs(given - used):.3g}); used "
                         f"{used:.10g}, solved with {', '.join(map(_short, model.independent_coordinates))} held")
    if given_u:
        r = None if r_fun is None else r_fun(t0, consistent)
        u = model.full_speeds(consistent[:N], consistent[N:N + model.p], P, t0, r)   # (extra states after)
        for i, given in sorted(given_u.items()):
            if abs(given - u[i]) > _tolerance(u[i]):
                notes.append(f"{_short(model.speeds[i])} = {given:.10g} violates the velocity constraints "
                             f"(differs by {abs(given - u[i]):.3g}); used {u[i]:.10g}, from the independent "
                             f"speeds {', '.join(map(_short, model.independent_speeds))}")
    if notes:
        warnings.warn("x0 gave dependent values that disagree with the constraints: " + "; ".join(notes),
                      InitialStateWarning, stacklevel=3)
    return consistent
