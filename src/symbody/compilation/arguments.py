"""The kernels' argument vector z of one state: filled from (t, q, u, p, r, x_e), and the
dependent speeds solved into it.

``z = [t, q (N), u (o), r (s), constants (c), u' (o), x_e (e)]`` with the offsets of the
model's :class:`~.kernel_layout.KernelLayout`; the dependent speeds follow from the
velocity constraints ``B u + b = 0``: ``B_dep u_dep = -(B_ind u_ind + b)``, with B_dep
and the right-hand side written by the velocity kernel so that LAPACK solves its output
in place.  ``model.arguments`` and ``model.solve_dependent_speeds`` call these.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError, SingularConstraintError
from .kernel_layout import CompiledModel
from .linear_algebra import solve
from .named_values import InputValues, ParameterValues, values_by_symbol
from .solves import solve_dependent

__all__ = ["arguments", "solve_dependent_speeds"]


def arguments(model: CompiledModel, t: float, q: ArrayLike, u: ArrayLike | None,
              p: ParameterValues, r: InputValues = None, need_r: bool = True,
              partition: Any = None, extra: Any = None) -> np.ndarray:
    """z (nz,) with t, q (N,), u, r, constants filled; u' zero.

    ``u``: all o speeds, or the p independent ones (of ``partition`` when given: the
    dependent ones are then solved), or None (left zero).  When ``need_r`` is False and
    ``r`` is None the specifieds are left at zero; the extra states are NaN unless given.
    """
    L = model.layout
    z = np.zeros(L.nz)
    z[0] = t
    if L.e:
        z[L.ixe:] = np.nan if extra is None else values_by_symbol(extra, model.extra_states,
                                                                  "extra state")
    q = np.asarray(q, dtype=float)
    if q.shape != (L.N,):
        raise InputError(f"q must have {L.N} values ({', '.join(map(str, model.coordinates))}), "
                         f"got shape {q.shape}")
    z[L.z_q] = q
    z[L.ic:L.iudot] = model.constants_array(p)
    if L.s and (need_r or r is not None):
        z[L.ir:L.ic] = model.specifieds_array(r, t, None)
    if u is None:
        return z
    u = np.asarray(u, dtype=float)
    if u.shape == (L.o,):
        z[L.iu:L.ir] = u
    elif u.shape == (L.p,):
        if partition is None or partition == model.default_partition:
            z[L.iu:L.iud] = u
            if L.m:
                solve_dependent_speeds(model, z)
        else:
            z[L.iu + partition.u_ind_index] = u
            solve_dependent_speeds(model, z, partition)
    else:
        raise InputError(f"u must have {L.o} values ({', '.join(map(str, model.speeds))}) "
                         f"or the {L.p} independent ones, got shape {u.shape}")
    return z


def solve_dependent_speeds(model: CompiledModel, z: np.ndarray, partition: Any = None,
                           out: np.ndarray | None = None) -> None:
    """Write u_dep = -B_dep^{-1} (B_ind u_ind + b) into z (nz,) (the dependent speeds of
    ``partition``, default the model's); ``out``: a buffer for the velocity kernel."""
    L = model.layout
    m, o = L.m, L.o
    if not m:
        return
    if out is None:
        out = np.empty(model.kernels.velocity.nout)
    model.kernels.velocity.into(z, out)
    if partition is None:
        # B_dep u_dep = -(B_ind u_ind + b), both from the kernel: solved in place
        sol, info = solve(out[L.velocity_Bdep].reshape(m, m, order="F"), out[L.velocity_rest],
                          overwrite_b=True)
        dep_names = model.dependent_speeds
    else:
        ind, dep = partition.u_ind_index, partition.u_dep_index
        B = out[L.velocity_B].reshape(m, o)
        sol, info = solve_dependent(B, out[L.velocity_b], z[L.iu + ind], ind, dep)
        dep_names = [model.speeds[i] for i in dep]
    if info != 0:
        raise SingularConstraintError(
            f"the velocity constraints are singular in the dependent speeds "
            f"{', '.join(map(str, dep_names))} at t = {z[0]:.6g} "
            f"(q = {np.array2string(z[L.z_q], precision=4)})")
    if partition is None:
        z[L.iud:L.ir] = sol
    else:
        z[L.iu + partition.u_dep_index] = sol
