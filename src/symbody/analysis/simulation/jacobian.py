"""The exact Jacobian ∂f/∂x of the ODE right-hand side, for implicit integrators.

The state is x = [q (N), u_ind (p)] (the model's layout) and f = [q', u_ind'] with

- u_dep = -B_dep⁻¹ (B_ind u_ind + b)                           (velocity constraints),
- q' from K_qd q' + K_u u + k_r = 0                              (kinematic equations),
- u' from M_d u' + g_d = B_aᵀ λ, B_a u' + b_a = 0 (augmented), or M_d u' + g_d = 0.

Each block's derivative along [q, u, r] comes from the model's forward-mode derivative
program (``NumericModel.block_derivatives``: symbolic differentiation of the equations,
compiled once per model), and the chain rule through the linear solves
(``symbody.analysis.chain_rule.rate_derivatives``, shared with :func:`symbody.linearize`)
is taken along the basis dq/dx = [I 0], du_ind/dx = [0 I] — every q a state (the
integrator holds q_dep on f_h = 0 by the constraint mode, not by the ODE)::

    ∂u/∂x = [[0, I], [-B_dep⁻¹ (∂(B u + b)/∂q), -B_dep⁻¹ B_ind]],
    ∂q'/∂x = -K_qd⁻¹ (∂(K_qd q' + K_u u + k_r)/∂q [I 0] + K_u ∂u/∂x),
    ∂u'/∂x = -S⁻¹ [∂(M_d u' + g_d - B_aᵀλ)/∂x ; ∂(B_a u' + b_a)/∂x],  S = [[M_d, -B_aᵀ], [B_a, 0]]
    (a reduced block M_d u_ind' + g_d = 0: ∂u_ind'/∂x = -M_d⁻¹ ∂(M_d u_ind' + g_d)/∂x).

Radau, BDF and LSODA then need no finite differences (2 (N + p) right-hand sides per
Jacobian, and their round-off) — what it saves on a stiff model is measured in
benchmarks/bench_iftomm.py (A05, the flyball governor).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...compilation import NumericModel
from ...errors import SymbodyError
from ..chain_rule import central_differences, point_rates, rate_derivatives

__all__ = ["ode_jacobian", "jacobian_function"]


def ode_jacobian(model: NumericModel, t: float, x: np.ndarray, P: np.ndarray,
                 r: np.ndarray | None = None) -> np.ndarray:
    """∂f/∂x (N + p, N + p) of ``model.rhs`` at (t, x) in the model's layout [q, u_ind]
    (inputs r held; models without extra states).

    The chain rule of ``symbody.analysis.chain_rule.rate_derivatives`` along the basis
    dq/dx = [I_N 0] (N, N + p), du_ind/dx = [0 I_p] (p, N + p) (every q a state); a singular
    block raises :class:`~symbody.errors.SingularConstraintError`.
    """
    N, o, p, m = model.N, model.o, model.p, model.m
    s = len(model.specifieds)
    x = np.asarray(x, dtype=float)
    q = x[:N]
    u = model.full_speeds(q, x[N:N + p], P, t, r) if m else x[N:N + p].copy()
    blocks = model.block_derivatives(q, u, P, t, r)
    if s and blocks.derivatives["kinematic_qdot"].shape[-1] != N + o + s:
        raise np.linalg.LinAlgError("unexpected derivative layout")
    rates = point_rates(model, blocks.values, u)
    dq = np.hstack([np.eye(N), np.zeros((N, p))])
    du_ind = np.hstack([np.zeros((p, N)), np.eye(p)])
    qd_x, ud_x = rate_derivatives(model, blocks, rates, dq, du_ind)
    return np.vstack([qd_x, ud_x]) + 0.0


def jacobian_function(model: NumericModel, P: np.ndarray, r_fun) -> Callable | None:
    """``jac(t, x)`` for scipy's implicit solvers, or None where finite differences must do
    (extra states, no symbolic equations kept, or inputs that depend on the state).  A
    reduced, hand-derived dynamic block with constraints gets the exact Jacobian too (tested
    against central differences on the snakeboard)."""
    from ..inputs import ConstantInputs

    if model.e or model.eom is None:
        return None
    if r_fun is not None and not isinstance(r_fun, ConstantInputs):
        return None
    r = None if r_fun is None else np.asarray(r_fun.values, dtype=float)
    try:
        ode_jacobian(model, 0.0, np.zeros(model.N + model.p), P, r)
    except (SymbodyError, np.linalg.LinAlgError, FloatingPointError, ValueError, KeyError):
        pass      # a singular test point says nothing; the derivative program exists now

    def jac(t: float, x: np.ndarray) -> np.ndarray:
        try:
            return ode_jacobian(model, t, x, P, r)
        except (SymbodyError, np.linalg.LinAlgError):
            # (a singular block at this state): central differences of the rhs instead
            return central_differences(lambda xv: model.rhs(t, xv, P, r), x, 1e-7)

    return jac
