"""Batch evaluation: many states of a numeric model at once.

The argument vectors of k states are the rows of ``Z`` (k, nz); each kernel evaluates them
all in one call (``kernel.many(Z)``), and the dependent speeds and u' come from numpy's
stacked solves.  The functions take the model as their first argument
(``model.rhs_many(...)`` calls :func:`rhs_many`) and use only its public evaluation
interface.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError, SingularConstraintError
from .kernel_layout import CompiledModel
from .named_values import InputValues, ParameterValues
from .partition import Partition
from .solves import SingularMassMatrixError

__all__ = ["SampleValues", "rhs_many", "arguments_many", "solve_dependent_speeds_many",
           "rhs_many_at", "speeds_many", "evaluate_samples"]


class SampleValues(NamedTuple):
    """What :meth:`NumericModel.evaluate_samples` returns for k states."""

    speeds: np.ndarray                 #: all speeds u (k, o), model order
    holonomic: np.ndarray              #: f_h (k, M)
    velocity: np.ndarray               #: B u + b (k, m)
    multipliers: np.ndarray | None     #: λ (k, m) of the augmented system, or None


def rhs_many(model: CompiledModel, t: ArrayLike, X: ArrayLike, p: ParameterValues,
             r: InputValues = None) -> np.ndarray:
    """x' for many states at once: X (k, N + p + e) -> (k, N + p + e).

    ``t``: scalar or (k,); ``r``: None, (len(specifieds),) or (k, len(specifieds)).
    """
    Z = arguments_many(model, t, X, p, r)
    forward, lanes = model.kernels.forward, model.kernels.forward_many
    if forward is None:
        return rhs_many_at(model, Z)[0]
    if lanes is not None and lanes.built:
        forward = lanes                              # the same numbers, in SIMD lanes
    L = model.layout
    Xd = np.empty((Z.shape[0], L.nx))
    Xd[:, :L.nxm] = forward.many(Z)[:, :L.nxm]      # [q', u'] written out: no solve
    if L.e:
        Xd[:, L.nxm:] = model.kernels.extra.many(Z)
    return Xd


def _specifieds_many(model: CompiledModel, r: InputValues, Z: np.ndarray, X: np.ndarray) -> np.ndarray:
    k, s = Z.shape[0], model.layout.s
    if callable(r):
        return np.array([model.specifieds_array(r, Z[i, 0], X[i]) for i in range(k)]).reshape(k, s)
    R = np.asarray(r if not isinstance(r, Mapping) else model.specifieds_array(r), dtype=float)
    if R.ndim == 1:
        R = model.specifieds_array(R)
    return np.broadcast_to(R, (k, s))


def arguments_many(model: CompiledModel, t: ArrayLike, X: ArrayLike, p: ParameterValues,
                   r: InputValues = None, U: ArrayLike | None = None,
                   partition: Partition | None = None) -> np.ndarray:
    """Z (k, nz): the argument vectors of the states X (k, N + p + e) at times t (scalar or
    (k,)), the dependent speeds solved unless all speeds ``U`` (k, o) are given."""
    L = model.layout
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != L.nx:
        raise InputError(f"X must have shape (k, {L.nx}), got {X.shape}")
    k = X.shape[0]
    Z = np.zeros((k, L.nz))
    Z[:, 0] = np.broadcast_to(np.asarray(t, dtype=float), (k,))
    nxm = L.nxm
    Z[:, 1:1 + nxm] = X[:, :nxm]
    if L.e:
        Z[:, L.ixe:] = X[:, nxm:]
    Z[:, L.ic:L.iudot] = model.constants_array(p)
    if partition is not None and partition != model.default_partition:
        Z[:, L.iu:L.ir] = 0.0
        Z[:, L.iu + partition.u_ind_index] = X[:, L.N:nxm]
    else:
        partition = None
    if L.s:
        Z[:, L.ir:L.ic] = _specifieds_many(model, r, Z, X)
    if U is not None:
        Z[:, L.iu:L.ir] = U
    elif L.m:
        solve_dependent_speeds_many(model, Z, partition)
    return Z


def solve_dependent_speeds_many(model: CompiledModel, Z: np.ndarray,
                                partition: Partition | None = None) -> None:
    """Write the dependent speeds (of ``partition``, default the model's) into each row of Z
    from B u + b = 0."""
    L = model.layout
    m, o, p = L.m, L.o, L.p
    out = model.kernels.velocity.many(Z)
    B = out[:, L.velocity_B].reshape(-1, m, o)
    if partition is None:
        ind, dep = slice(0, p), slice(p, o)
        names = model.dependent_speeds
    else:
        ind, dep = partition.u_ind_index, partition.u_dep_index
        names = [model.speeds[i] for i in dep]
    U = Z[:, L.iu:L.ir]
    rhs = -(np.einsum("kij,kj->ki", B[:, :, ind], U[:, ind]) + out[:, L.velocity_b])
    try:
        U[:, dep] = np.linalg.solve(B[:, :, dep], rhs[..., None])[..., 0]
    except np.linalg.LinAlgError as exc:
        raise SingularConstraintError(
            "the velocity constraints are singular in the dependent speeds "
            f"{', '.join(map(str, names))} at one of the states") from exc
    Z[:, L.iu:L.ir] = U


def rhs_many_at(model: CompiledModel, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x' (k, nx), solution of S y = s (k, K), main kernel outputs (k, main size)) at the
    filled argument vectors Z (k, nz)."""
    L = model.layout
    N, K, k = L.N, L.K, Z.shape[0]
    out = model.kernels.main.many(Z)
    S = out[:, L.main_system].reshape(k, K, K)
    if L.augmented:
        S = np.swapaxes(S, 1, 2)                    # stored column by column
    try:
        sol = np.linalg.solve(S, out[:, L.main_rhs][..., None])[..., 0]
    except np.linalg.LinAlgError as exc:
        raise SingularMassMatrixError("the dynamic mass matrix is singular at one of the states") from exc
    Xd = np.empty((k, L.nx))
    Xd[:, :N] = out[:, :N]
    Xd[:, N:L.nxm] = sol[:, :L.p]
    if L.e:
        Xd[:, L.nxm:] = model.kernels.extra.many(Z)
    return Xd, sol, out


def speeds_many(model: CompiledModel, t: ArrayLike, X: ArrayLike, p: ParameterValues,
                r: InputValues = None, partition: Partition | None = None) -> np.ndarray:
    """All speeds u (k, o), model order, for states X (k, N + p) in the layout of ``partition``.

    The dependent speeds are solved from B u + b = 0 for each state.
    """
    Z = arguments_many(model, t, X, p, r, partition=partition)
    return Z[:, model.layout.z_u].copy()


#: rows per batch of the kernels in :func:`evaluate_samples`: at least this many, and as
#: many as keep the largest kernel output of a batch within SAMPLE_BUDGET numbers (the main
#: kernel's output is K² + ... numbers a row, 26 000 for the 40-loop four-bar: a few dozen
#: rows stay in the cache, where 400 samples at once fill 80 MB; a small model's 1000
#: samples go in one batch)
SAMPLE_CHUNK = 32
SAMPLE_BUDGET = 1 << 18


def evaluate_samples(model: CompiledModel, t: ArrayLike, X: ArrayLike, p: ParameterValues,
                     r: InputValues = None, *, speeds: ArrayLike | None = None,
                     multipliers: bool | ArrayLike = True) -> SampleValues:
    """Speeds, constraint residuals and multipliers for states X (k, N + p) at times t (k,).

    ``speeds`` (k, o): all speeds when already known (nothing is solved then).
    ``multipliers``: True (λ at every state), False (none), or a boolean mask (k,) of the
    states to solve λ at (NaN at the others: a caller that computes them another way).
    Returns a :class:`SampleValues` (``multipliers`` None without an augmented system or
    with ``multipliers=False``).
    """
    L, kernels = model.layout, model.kernels
    Z = arguments_many(model, t, X, p, r, U=speeds)
    k = Z.shape[0]
    u = Z[:, L.iu:L.ir].copy()
    hol = np.empty((k, L.M))
    vel = np.empty((k, L.m))
    widest = max(kernels.main.nout, kernels.holonomic.nout if L.M else 0,
                 kernels.velocity.nout if L.m else 0, 1)
    chunk_rows = max(SAMPLE_CHUNK, SAMPLE_BUDGET // widest)
    for start in range(0, k, chunk_rows):
        rows = slice(start, start + chunk_rows)
        if L.M:
            hol[rows] = kernels.holonomic.many(Z[rows])[:, :L.M]
        if L.m:
            out = kernels.velocity.many(Z[rows])
            B = out[:, L.velocity_B].reshape(-1, L.m, L.o)
            vel[rows] = np.einsum("kij,kj->ki", B, u[rows]) + out[:, L.velocity_b]
    lam = None
    if isinstance(multipliers, (bool, np.bool_)):
        rows = np.arange(k) if multipliers else None
    else:
        mask = np.asarray(multipliers, dtype=bool)
        if mask.shape != (k,):
            raise InputError(f"multipliers must be True, False or a boolean mask of shape ({k},), "
                             f"got shape {mask.shape}")
        rows = np.flatnonzero(mask)
    if rows is not None and L.augmented and k:
        lam = np.full((k, L.m), np.nan)
        for start in range(0, rows.size, chunk_rows):
            chunk = rows[start:start + chunk_rows]
            lam[chunk] = rhs_many_at(model, Z[chunk])[1][:, L.o:]
    return SampleValues(u, hol, vel, lam)
