"""The two linear solves of the constrained equations, shared by the right-hand side, the
batch evaluation and linearization: the dependent speeds (or accelerations) from linear
constraints, and u' (with the multipliers λ) from the dynamic block.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import SymbodyError
from .linear_algebra import reduced_kkt_solve, solve, solve_symmetric

__all__ = ["SingularMassMatrixError", "reduced_rates", "solve_dependent", "solve_dynamics"]


class SingularMassMatrixError(SymbodyError, ArithmeticError):
    """The dynamic mass matrix (or the augmented constrained system) is numerically singular."""


def solve_dependent(B: np.ndarray, rest: np.ndarray, x_ind: np.ndarray,
                    independent: Sequence[int] | None = None, dependent: Sequence[int] | None = None) -> tuple[np.ndarray, int]:
    """x_dep from the linear constraints B x + rest = 0: B[:, dep] x_dep = -(B[:, ind] x_ind + rest).

    ``B`` (m, o); ``independent`` / ``dependent``: column indices (default: the first
    o - m columns are independent, the last m dependent).  Returns ``(x_dep, info)``
    (info > 0: singular).  Used for the dependent speeds (B u + b = 0) and the dependent
    accelerations of a reduced dynamic block (B_a u' + b_a = 0).
    """
    m, o = B.shape
    if independent is None:
        rhs = -(B[:, :o - m] @ x_ind + rest)
        return solve(B[:, o - m:].copy(), rhs)
    rhs = -(B[:, independent] @ x_ind + rest)
    return solve(B[:, dependent], rhs)


def solve_dynamics(Md: np.ndarray, rhs_d: np.ndarray, Ba: np.ndarray | None = None,
                   rhs_a: np.ndarray | None = None, *, symmetric: bool = False,
                   system: np.ndarray | None = None,
                   system_rhs: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """u' (and λ) from the dynamic block, with the acceleration constraints when given::

        [ M_d  -B_a^T ] [ u' ]   [ rhs_d ]            (rhs_d = -g_d, rhs_a = -b_a)
        [ B_a    0    ] [ λ  ] = [ rhs_a ]      or    M_d u' = rhs_d

    λ has symbody's one sign convention, ``M_d u' + g_d = B_a^T λ`` (B_a^T λ the generalized
    constraint forces; the sign of SymPy's ``LagrangesMethod.rhs()``).

    Returns ``(solution, info)`` (info > 0: singular).  ``system`` ((o + m) square,
    Fortran order) and ``system_rhs`` are optional preallocated buffers (overwritten).
    """
    if Ba is None or Ba.shape[0] == 0:
        if symmetric:
            return solve_symmetric(Md, rhs_d)
        return solve(Md.copy(), rhs_d)
    m, o = Ba.shape
    A = np.zeros((o + m, o + m), order="F") if system is None else system
    b = np.empty(o + m) if system_rhs is None else system_rhs
    A[:o, :o] = Md
    A[:o, o:] = -Ba.T                 # M_d u' - B_a^T λ = -g_d: λ with SymPy's sign
    A[o:, :o] = Ba
    A[o:, o:] = 0.0
    b[:o] = rhs_d
    b[o:] = rhs_a
    return solve(A, b)


def reduced_rates(layout: Any, kernels: Any, z: np.ndarray, out: np.ndarray,
                  states: np.ndarray | None = None) -> np.ndarray | None:
    """x' (nx,) of an augmented system with many constraint rows from the main kernel's
    output ``out`` at z: u_ind' by the null space of B_a (one LU of its dependent columns,
    :func:`~.linear_algebra.reduced_kkt_solve`) instead of the whole (o + m)² system.
    ``states``: the indices of the speeds that are states (default the first p).  None
    when the dependent columns are singular (the caller then solves the whole system)."""
    L = layout
    ind = np.arange(L.p) if states is None else np.asarray(states)
    mask = np.ones(L.o, dtype=bool)
    mask[ind] = False
    dep = np.flatnonzero(mask)
    if dep.size != L.m:
        return None
    a = reduced_kkt_solve(out[L.main_system].reshape(L.K, L.K, order="F"), out[L.main_rhs],
                          L.o, ind, dep)
    if a is None:
        return None
    xdot = np.empty(L.nx)
    xdot[:L.N] = out[:L.N]
    xdot[L.N:L.nxm] = a
    if L.e:
        kernels.extra.into(z, xdot[L.nxm:])
    return xdot
