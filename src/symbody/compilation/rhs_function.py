"""``model.rhs_function(p)``: the right-hand side with the constants bound, for ODE solvers.

The same numbers as ``model.rhs(t, x, p, r)`` with the per-call work cut to the kernels
and one in-place LAPACK call per linear system, on buffers of its own laid out by the
model's :class:`~.kernel_layout.KernelLayout`:

1. the velocity kernel writes ``B_dep`` (column by column) and ``-(B_ind u_ind + b)``:
   ``u_dep = B_dep^{-1} (-(B_ind u_ind + b))`` solved in place and copied into z;
2. the main kernel writes ``[q', s, S]``: ``S y = s`` solved in place (LU for the
   augmented system, Cholesky for a symmetric mass matrix), after which the output's
   first ``N + p`` numbers are ``[q', u_ind']``; an augmented system with many constraint
   rows (``REDUCED_KKT_MIN``) gives u_ind' by the null space of B_a instead
   (:func:`~.linear_algebra.reduced_kkt_solve`: one LU of its dependent columns).

Anything unusual (a singular system, a symmetric mass matrix that is not positive
definite, a state of the wrong shape) is handed to ``model.rhs``, which raises or solves
it the general way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .kernel_layout import CompiledModel
from .linear_algebra import REDUCED_KKT_MIN, in_place_solver, reduced_kkt_solve
from .named_values import ParameterValues
from .workspace import Workspace

__all__ = ["rhs_function"]


def _system_solver(L: Any, S: np.ndarray, s: np.ndarray) -> Callable[[], int] | None:
    if L.augmented:
        return in_place_solver(S, s)
    if L.mass_symmetric:
        return in_place_solver(S, s, positive_definite=True)
    return None          # M_d stored row by row: the general path (a copy, then LU)


def rhs_function(model: CompiledModel, p: ParameterValues) -> Callable[..., np.ndarray]:
    """``f(t, x, r=None)``: ``model.rhs`` with the constants ``p`` bound (see the module
    docstring); ``x`` a float64 array (N + p + e,), ``r`` None or the specified inputs'
    values.  One function per integration: not to be shared by threads."""
    L, kernels = model.layout, model.kernels
    P = model.constants_array(p).copy()
    if kernels.forward is not None:
        return _forward_function(model, P)
    sizes = {"main": kernels.main.nout}
    if kernels.velocity is not None:
        sizes["velocity"] = kernels.velocity.nout
    ws = Workspace(L.nz, sizes)
    z, out = ws.z, ws.main
    z[L.ic:L.iudot] = P
    N, K, nx, nxm, e, m = L.N, L.K, L.nx, L.nxm, L.e, L.m
    ir, ic, ixe, iud = L.ir, L.ic, L.ixe, L.iud
    has_r = ir != ic
    main = kernels.main.into
    S = out[L.main_system].reshape(K, K, order="F")       # a view of the kernel's output
    s = out[L.main_rhs]
    system = _system_solver(L, S, s)
    vel = vout = vrhs = dependent = None
    if m:
        vel, vout = kernels.velocity.into, ws.velocity
        vrhs = vout[L.velocity_rest]
        dependent = in_place_solver(vout[L.velocity_Bdep].reshape(m, m, order="F"), vrhs)
    reduced = None
    if L.augmented and m >= REDUCED_KKT_MIN:
        part = model.default_partition
        reduced = (L.o, part.u_ind_index, part.u_dep_index)
    extra = kernels.extra.into if e else None
    contiguous = L.contiguous_state_derivative
    specifieds_array, rhs = model.specifieds_array, model.rhs
    shape = (nx,)

    def f(t: float, x: np.ndarray, r: Any = None) -> np.ndarray:
        if system is None or x.shape != shape:
            return rhs(t, x, P, r)                # (rhs checks the state and says what is wrong)
        z[0] = t
        z[1:1 + nxm] = x[:nxm]
        if e:
            z[ixe:] = x[nxm:]
        if has_r:
            z[ir:ic] = specifieds_array(r, t, x)
        if m:
            vel(z, vout)
            if dependent():
                return rhs(t, x, P, r)            # singular B_dep: rhs raises, naming it
            z[iud:ir] = vrhs
        main(z, out)
        if reduced is not None:
            a = reduced_kkt_solve(S, s, *reduced)
            if a is not None:
                xdot = np.empty(nx)
                xdot[:N] = out[:N]
                xdot[N:nxm] = a
                if e:
                    extra(z, xdot[nxm:])
                return xdot
        if system():
            return rhs(t, x, P, r)                # singular, or not definite: the general way
        if contiguous and not e:
            return out[:nx].copy()
        xdot = np.empty(nx)
        xdot[:N] = out[:N]
        xdot[N:nxm] = s[:nxm - N]
        if e:
            extra(z, xdot[nxm:])
        return xdot

    return f


def _forward_function(model: CompiledModel, P: np.ndarray) -> Callable[..., np.ndarray]:
    """``f(t, x, r=None)`` of a model with a forward-dynamics kernel: [q', u'] written out by
    the kernel, the dependent speeds first (step 1 above)."""
    L, kernels = model.layout, model.kernels
    sizes = {"forward": kernels.forward.nout}
    if kernels.velocity is not None:
        sizes["velocity"] = kernels.velocity.nout
    ws = Workspace(L.nz, sizes)
    z, out = ws.z, ws.forward
    z[L.ic:L.iudot] = P
    nx, nxm, e, m = L.nx, L.nxm, L.e, L.m
    ir, ic, ixe, iud = L.ir, L.ic, L.ixe, L.iud
    has_r = ir != ic
    forward = kernels.forward.into
    vel = vout = vrhs = dependent = None
    if m:
        vel, vout = kernels.velocity.into, ws.velocity
        vrhs = vout[L.velocity_rest]
        dependent = in_place_solver(vout[L.velocity_Bdep].reshape(m, m, order="F"), vrhs)
    extra = kernels.extra.into if e else None
    specifieds_array, rhs = model.specifieds_array, model.rhs
    shape = (nx,)

    def f(t: float, x: np.ndarray, r: Any = None) -> np.ndarray:
        if x.shape != shape:
            return rhs(t, x, P, r)                # (rhs checks the state and says what is wrong)
        z[0] = t
        z[1:1 + nxm] = x[:nxm]
        if e:
            z[ixe:] = x[nxm:]
        if has_r:
            z[ir:ic] = specifieds_array(r, t, x)
        if m:
            vel(z, vout)
            if dependent():
                return rhs(t, x, P, r)            # singular B_dep: rhs raises, naming it
            z[iud:ir] = vrhs
        forward(z, out)
        if not e:
            return out[:nx].copy()
        xdot = np.empty(nx)
        xdot[:nxm] = out[:nxm]
        extra(z, xdot[nxm:])
        return xdot

    return f
