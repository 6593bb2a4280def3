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

__all__ = ["InitialStateWarning", "AssemblyBranchWarning", "initial_state", "assembly_branch",
           "continue_assembly"]


class InitialStateWarning(UserWarning):
    """A dependent value given in x0 disagreed with the constraints and was replaced."""


class AssemblyBranchWarning(UserWarning):
    """Some initial states (e.g. cases of a sweep) were assembled on another branch of the
    holonomic constraints (another assembly mode) than the base state."""


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
                      InitialStateWarning, stacklevel=5)
    return consistent


# ----------------------------------------------------------------- assembly branches
def assembly_branch(model: NumericModel, q: np.ndarray, P: np.ndarray, t: float = 0.0) -> int:
    """The assembly mode of the configuration ``q`` (N,): ``sign det(∂f_h/∂q_dep)``.

    The holonomic constraints f_h(q_ind, q_dep) = 0 have, for given q_ind, several
    solutions q_dep (a four-bar closes "elbow up" or "elbow down").  Along a branch
    solved continuously in q_ind the Jacobian J_dep = ∂f_h/∂q_dep (M, M) stays regular, so
    the sign of its determinant is constant; the two closures of a four-bar have opposite
    signs (det J_dep = l_b l_c sin q3).  Returns +1 or -1, 0 where J_dep is singular or the
    model has no holonomic constraints.
    """
    if not model.M:
        return 0
    J = model.holonomic_jacobian(np.asarray(q, dtype=float), P, t)[:, model.n:model.N]
    d = float(np.linalg.det(J))
    if not np.isfinite(d) or abs(d) <= 1e-12 * max(1.0, float(np.abs(J).max()) ** model.M):
        return 0
    return 1 if d > 0 else -1


def _newton(model: NumericModel, q: np.ndarray, P: np.ndarray, t: float,
            max_iter: int = 12) -> tuple[np.ndarray, bool, int]:
    """Newton's method on q_dep (q (N,) modified in place): (q, converged, branch sign)."""
    n, N = model.n, model.N
    for _ in range(max_iter):
        f, J = model.holonomic(q, P, t)
        Jd = J[:, n:N]
        try:
            dq = np.linalg.solve(Jd, f)
        except np.linalg.LinAlgError:
            return q, False, 0
        if not np.isfinite(dq).all():
            return q, False, 0
        q[n:N] -= dq
        if float(np.abs(dq).max()) <= 1e-10 * (1.0 + float(np.abs(q[n:N]).max())):
            d = float(np.linalg.det(Jd))
            return q, True, (1 if d > 0 else -1 if d < 0 else 0)
    return q, False, 0


def continue_assembly(model: NumericModel, q_from: np.ndarray, P_from: np.ndarray,
                      q_ind_to: np.ndarray, P_to: np.ndarray, t: float = 0.0, *,
                      max_halvings: int = 12, max_jump: float = 0.5,
                      branch: int | None = None) -> np.ndarray | None:
    """q_dep for (q_ind_to, P_to) on the branch of the solved configuration ``q_from``
    (N,) at constants ``P_from``: continuation in the homotopy parameter s in [0, 1].

    (q_ind, P)(s) = (1 - s) (q_ind_from, P_from) + s (q_ind_to, P_to); each step solves
    f_h = 0 by Newton's method from the previous q_dep and is accepted when Newton
    converges, the branch (sign det ∂f_h/∂q_dep, see :func:`assembly_branch`) is kept
    and q_dep moved by at most ``max_jump (1 + |q_dep|)`` (max norms); otherwise the step
    is halved (at most ``max_halvings`` times in a row: the path then crosses a singular
    configuration and None is returned).  ``branch``: the branch of ``q_from`` when known.
    Returns the configuration q (N,).
    """
    n, N = model.n, model.N
    q = np.array(q_from, dtype=float)
    P0, P1 = np.asarray(P_from, dtype=float), np.asarray(P_to, dtype=float)
    a0, a1 = q[:n].copy(), np.asarray(q_ind_to, dtype=float)
    same_p = P0.shape == P1.shape and bool(np.array_equal(P0, P1))
    if branch is None:
        branch = assembly_branch(model, q, P0, t)
    s, h, halvings = 0.0, 1.0, 0
    while s < 1.0:
        s_new = 1.0 if h >= 1.0 - s else s + h
        trial = q.copy()
        trial[:n] = a0 + s_new * (a1 - a0)
        P = P1 if (same_p or s_new == 1.0) else P0 + s_new * (P1 - P0)
        sol, ok, sign = _newton(model, trial, P, t)
        if ok:
            jump = float(np.abs(sol[n:N] - q[n:N]).max())
            ok = (jump <= max_jump * (1.0 + float(np.abs(q[n:N]).max()))
                  and (branch == 0 or sign == branch))
        if ok:
            q, s, halvings = sol, s_new, 0
            h *= 2.0
        else:
            halvings += 1
            if halvings > max_halvings:
                return None
            h *= 0.5
    return q
