"""The unreduced equations and the constraint forces of a numeric model.

* :func:`augmented_blocks`: the blocks of ``M_d u' = -g_d + B_a^T λ``, ``B_a u' = -b_a`` at
  one state, unsolved (for the full-coordinate integration through singular
  configurations);
* :func:`auxiliary_forces`: the noncontributing forces F_nc from the auxiliary equations
  ``A_nc F_nc + rest = 0`` (least squares when not square).

λ has symbody's one sign convention: ``B^T λ`` is the generalized constraint force added
to the applied forces (the sign of SymPy's ``LagrangesMethod.rhs()``).  The functions take
the model as their first argument and use only its public evaluation interface.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError
from .kernel_layout import CompiledModel
from .linear_algebra import solve
from .named_values import InputValues, ParameterValues

__all__ = ["AugmentedBlocks", "augmented_blocks", "auxiliary_forces"]


class AugmentedBlocks(NamedTuple):
    """The unreduced equations at one state (see :meth:`NumericModel.augmented_blocks`)."""

    qdot: np.ndarray          #: q' (N,)
    mass: np.ndarray          #: M_d (o, o)
    forcing: np.ndarray       #: -g_d (o,)
    acc_matrix: np.ndarray    #: B_a (m, o)
    acc_rest: np.ndarray      #: -b_a (m,)
    extra: np.ndarray | None  #: x_e' (e,) or None


def augmented_blocks(model: CompiledModel, t: float, q: ArrayLike, u: ArrayLike, p: ParameterValues,
                     r: InputValues = None, extra: ArrayLike | None = None) -> AugmentedBlocks:
    """The unreduced equations at (t, q, u) for all o speeds, without solving them.

    ``M_d u' = forcing + B_a^T λ`` (forcing = -g_d) with ``B_a u' = acc_rest``
    (acc_rest = -b_a): q' (N,), M_d (o, o), forcing (o,), B_a (m, o), acc_rest (m,),
    and the extra states' derivatives x_e' (e,) (None without extra states).  Needs an
    unreduced dynamic block (``partition_switchable``).
    """
    L, kernels = model.layout, model.kernels
    if not L.augmented:
        raise InputError("the full-coordinate blocks need unreduced dynamic equations with "
                         "velocity constraints (dependent speeds); these equations are "
                         + ("in reduced form" if L.dynamic_reduced else "unconstrained"))
    u = np.asarray(u, dtype=float)
    if u.shape != (L.o,):
        raise InputError(f"u must have all {L.o} speeds, got shape {u.shape}")
    z = model.arguments(t, q, u, p, r, extra=extra if L.e else None)
    out = np.empty(kernels.main.nout)
    kernels.main.into(z, out)
    K, o, N = L.K, L.o, L.N
    S = out[L.main_system].reshape(K, K, order="F")
    rhs = out[L.main_rhs]
    xe = None
    if L.e:
        xe = np.empty(L.e)
        kernels.extra.into(z, xe)
    return AugmentedBlocks(out[:N], S[:o, :o], rhs[:o], S[o:, :o], rhs[o:], xe)


def auxiliary_forces(model: CompiledModel, q: ArrayLike, u: ArrayLike, udot: ArrayLike,
                     p: ParameterValues, t: float = 0.0, r: InputValues = None,
                     extra: ArrayLike | None = None) -> np.ndarray:
    """Values (nnc,) of ``model.noncontributing`` from the auxiliary equations (least squares);
    ``extra``: the extra states' values when the model has any."""
    L, kernel = model.layout, model.kernels.auxiliary
    if kernel is None:
        raise InputError("these equations of motion have no auxiliary equations / "
                         "noncontributing forces (form them with u_auxiliary)")
    model.require_extra(extra, "the auxiliary equations")
    z = model.arguments(t, q, u, p, r, extra=extra)
    udot = np.asarray(udot, dtype=float)
    if udot.shape != (L.o,):
        raise InputError(f"udot must have {L.o} values, got shape {udot.shape}")
    z[L.z_udot] = udot
    out = kernel(z)
    s, nc = L.naux, L.nnc
    A = out[:s * nc].reshape(s, nc)
    c = out[s * nc:]
    if s == nc:
        sol, info = solve(A.copy(), -c)
        if info == 0:
            return sol
    return np.linalg.lstsq(A, -c, rcond=None)[0]
