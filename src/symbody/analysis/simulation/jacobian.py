"""The exact Jacobian ∂f/∂x of the ODE right-hand side, for implicit integrators.

The state is x = [q (N), u_ind (p)] (the model's layout) and f = [q', u_ind'] with

- u_dep = -B_dep⁻¹ (B_ind u_ind + b)                           (velocity constraints),
- q' from K_qd q' + K_u u + k_r = 0                              (kinematic equations),
- u' from M_d u' + g_d = B_aᵀ λ, B_a u' + b_a = 0 (augmented), or M_d u' + g_d = 0.

Each block's derivative along [q, u, r] comes from the model's forward-mode derivative
program (``NumericModel.block_derivatives``: symbolic differentiation of the equations,
compiled once per model), and the chain rule through the linear solves gives, with every
q a state (the integrator holds q_dep on f_h = 0 by the constraint mode, not by the ODE)::

    ∂u/∂x = [[0, I], [-B_dep⁻¹ (∂(B u + b)/∂q), -B_dep⁻¹ B_ind]],
    ∂q'/∂x = -K_qd⁻¹ (∂(K_qd q' + K_u u + k_r)/∂q [I 0] + K_u ∂u/∂x),
    ∂u'/∂x = -S⁻¹ [∂(M_d u' + g_d - B_aᵀλ)/∂x ; ∂(B_a u' + b_a)/∂x],  S = [[M_d, -B_aᵀ], [B_a, 0]].

Radau, BDF and LSODA then need no finite differences (2 (N + p) right-hand sides per
Jacobian, and their round-off) — what it saves on a stiff model is measured in
benchmarks/bench_iftomm.py (A05, the flyball governor).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...compilation import NumericModel
from ...compilation.linear_algebra import solve
from ...compilation.numeric_model import solve_dynamics
from ...errors import SymbodyError

__all__ = ["ode_jacobian", "jacobian_function"]


def _solve(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    x, info = solve(np.array(A, dtype=float), np.array(B, dtype=float))
    if info != 0:
        raise np.linalg.LinAlgError("singular matrix in the Jacobian")
    return x


def _d(block: np.ndarray, sl: slice, vec: np.ndarray | None = None) -> np.ndarray:
    d = block[..., sl]
    return d if vec is None else np.einsum("ijk,j->ik", d, vec)


def ode_jacobian(model: NumericModel, t: float, x: np.ndarray, P: np.ndarray,
                 r: np.ndarray | None = None) -> np.ndarray:
    """∂f/∂x (N + p, N + p) of ``model.rhs`` at (t, x) in the model's layout [q, u_ind]
    (inputs r held; models without extra states)."""
    N, o, p, m = model.N, model.o, model.p, model.m
    s = len(model.specifieds)
    x = np.asarray(x, dtype=float)
    q = x[:N]
    u = model.full_speeds(q, x[N:N + p], P, t, r) if m else x[N:N + p].copy()
    blk = model.block_derivatives(q, u, P, t, r)
    vals, ders = blk.values, blk.derivatives
    sq, su = slice(0, N), slice(N, N + o)
    nx = N + p
    Kqd, Ku, kr = vals["kinematic_qdot"], vals["kinematic_u"], vals["kinematic_rest"]
    Md, gd, Ba, ba = (vals[k] for k in ("dynamic_mass", "dynamic_rest", "acceleration_matrix",
                                        "acceleration_rest"))
    qd = _solve(Kqd, -(Ku @ u + kr))
    augmented = model.has_multipliers
    if augmented:
        sol, info = solve_dynamics(Md, -gd, Ba, -ba)
        if info != 0:
            raise np.linalg.LinAlgError("singular augmented system")
        ud, lam = sol[:o], sol[o:]
    else:
        sol, info = solve_dynamics(Md, -gd)
        if info != 0:
            raise np.linalg.LinAlgError("singular mass matrix")
        ud = np.zeros(o)
        ud[:Md.shape[1]] = sol
        lam = None
        if m:
            raise np.linalg.LinAlgError("a reduced dynamic block: finite differences are used")
    if s and ders["kinematic_qdot"].shape[-1] != N + o + s:
        raise np.linalg.LinAlgError("unexpected derivative layout")

    def jac(mat, vec, rest, sl):
        out = _d(rest, sl)
        if mat is not None and vec is not None and mat.size:
            out = out + _d(mat, sl, vec)
        return out

    # ∂u/∂x
    Dq = np.zeros((N, nx))
    Dq[:, :N] = np.eye(N)
    Du = np.zeros((o, nx))
    Du[:p, N:] = np.eye(p)
    if m:
        Bv = vals["velocity_matrix"]
        J_vq = jac(ders["velocity_matrix"], u, ders["velocity_rest"], sq)
        rhs = J_vq @ Dq
        rhs[:, N:] += Bv[:, :p]
        Du[p:] = -_solve(Bv[:, p:], rhs)
    J_kq = jac(ders["kinematic_qdot"], qd, ders["kinematic_rest"], sq) + _d(ders["kinematic_u"], sq, u)
    qd_x = -_solve(Kqd, J_kq @ Dq + Ku @ Du)
    J_dq = jac(ders["dynamic_mass"], ud, ders["dynamic_rest"], sq)
    J_du = jac(ders["dynamic_mass"], ud, ders["dynamic_rest"], su)
    dyn = J_dq @ Dq + J_du @ Du
    if augmented:
        dBa = ders["acceleration_matrix"]
        dyn = dyn - np.einsum("jik,j->ik", dBa[..., sq], lam) @ Dq \
            - np.einsum("jik,j->ik", dBa[..., su], lam) @ Du
        J_aq = jac(dBa, ud, ders["acceleration_rest"], sq)
        J_au = jac(dBa, ud, ders["acceleration_rest"], su)
        acc = J_aq @ Dq + J_au @ Du
        S = np.zeros((o + m, o + m))
        S[:o, :o] = Md
        S[:o, o:] = -Ba.T
        S[o:, :o] = Ba
        X = -_solve(S, np.vstack([dyn, acc]))
    else:
        X = -_solve(Md, dyn)
    return np.vstack([qd_x, X[:p]]) + 0.0


def jacobian_function(model: NumericModel, P: np.ndarray, r_fun) -> Callable | None:
    """``jac(t, x)`` for scipy's implicit solvers, or None where finite differences must do
    (extra states, no symbolic equations kept, a reduced dynamic block with constraints, or
    inputs that depend on the state)."""
    from ..inputs import ConstantInputs

    if model.e or model.eom is None or (model.m and not model.has_multipliers):
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
            x = np.asarray(x, dtype=float)
            J = np.empty((len(x), len(x)))
            for k in range(len(x)):
                h = 1e-7 * max(1.0, abs(x[k]))
                xp, xm = x.copy(), x.copy()
                xp[k] += h
                xm[k] -= h
                J[:, k] = (model.rhs(t, xp, P, r) - model.rhs(t, xm, P, r)) / (2 * h)
            return J

    return jac
