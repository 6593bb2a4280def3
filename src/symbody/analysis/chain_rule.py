"""The chain rule through the model's linear solves: derivatives of q' and u_ind' along a basis.

One state of a compiled model is fixed by q (N), u_ind (p) and the inputs r (s); the rest
follows from linear solves with the canonical-form blocks (values and their forward-mode
derivatives along [q (N), u (o), r (s)] from :meth:`NumericModel.block_derivatives`)::

    B u + b = 0                       ->  u_dep = -B_dep⁻¹ (B_ind u_ind + b)   (velocity constraints)
    K_qd q' + K_u u + k_r = 0         ->  q'                                    (kinematic equations)
    M_d u' + g_d - B_aᵀ λ = 0,  B_a u' + b_a = 0    ->  u', λ   (dynamics with multipliers)
    M_d u_ind' + g_d = 0                             ->  u_ind'  (a reduced dynamic block)

Given a direction basis of k columns — dq/dξ (N, k), du_ind/dξ (p, k) and optionally
dr/dξ (s, k) — :func:`rate_derivatives` differentiates the solves (implicit function
theorem; every residual R(q, u, r, unknowns) = 0 gives dR = 0)::

    du_dep/dξ = -B_dep⁻¹ (∂(B u + b)/∂q dq/dξ + B_ind du_ind/dξ + ∂(B u + b)/∂r dr/dξ)
    dq'/dξ    = -K_qd⁻¹ (∂(K_qd q' + K_u u + k_r)/∂q dq/dξ + K_u du/dξ + ∂(...)/∂r dr/dξ)
    [du'/dξ; dλ/dξ] = -S⁻¹ [∂(M_d u' + g_d - B_aᵀλ)/∂[q, u, r] d[q, u, r]/dξ ;
                            ∂(B_a u' + b_a)/∂[q, u, r] d[q, u, r]/dξ],
                      S = [[M_d, -B_aᵀ], [B_a, 0]],
    du_ind'/dξ = -M_d⁻¹ ∂(M_d u_ind' + g_d)/∂[q, u, r] d[q, u, r]/dξ    (a reduced block)

with q', u', λ the values at the point (:func:`point_rates`), and du/dξ = [du_ind/dξ;
du_dep/dξ].  The velocity and kinematic residuals are linear in u by construction (B, b,
K_qd, K_u, k_r do not depend on u), so their u-derivatives are B and K_u.  The two users differ only
in the basis: the ODE Jacobian (``simulation.jacobian.ode_jacobian``) takes every q as a state,
ξ = [q, u_ind], dq/dξ = [I 0], du_ind/dξ = [0 I]; :func:`symbody.linearize` takes
ξ = [q_ind, u_ind, r] with dq/dξ = [C_0 0 0], C_0 = [I; -F_dep⁻¹ F_ind] (F = ∂f_h/∂q),
du_ind/dξ = [0 I 0] and dr/dξ = [0 0 I].
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..compilation.linear_algebra import solve
from ..compilation.numeric_model import solve_dependent, solve_dynamics
from ..errors import SingularConstraintError

__all__ = ["PointRates", "central_differences", "point_rates", "rate_derivatives", "solve_or_raise"]


@dataclass(frozen=True)
class PointRates:
    """The solved quantities at a point: u (o,), q' (N,), u' (o,), λ (m,; NaN for a reduced
    dynamic block) and S = [[M_d, -B_aᵀ], [B_a, 0]] ((o + m) square; None without multipliers)."""

    u: np.ndarray
    qdot: np.ndarray
    udot: np.ndarray
    multipliers: np.ndarray
    augmented_matrix: np.ndarray | None


def solve_or_raise(A: np.ndarray, B: np.ndarray, what: str) -> np.ndarray:
    """A⁻¹ B (A (k, k), B (k,) or (k, l)) by LU; a singular ``A`` raises
    :class:`SingularConstraintError` naming ``what``."""
    x, info = solve(np.array(A, dtype=float), np.asarray(B, dtype=float))
    if info != 0:
        raise SingularConstraintError(f"{what} is singular at the operating point")
    return x


def point_rates(model: Any, vals: Mapping, u: np.ndarray) -> PointRates:
    """q', u', λ and S at a point from the values of the blocks (``blocks.values``) and all
    speeds ``u`` (o,): q' = -K_qd⁻¹ (K_u u + k_r); u', λ from the dynamic block (the engine's
    solve, :func:`solve_dynamics`; a reduced block gives u_ind', and u_dep' follows from the
    acceleration constraints B_a u' + b_a = 0)."""
    o, m, p = model.o, model.m, model.p
    Kqd, Ku, kr = (vals[k] for k in ("kinematic_qdot", "kinematic_u", "kinematic_rest"))
    qd = solve_or_raise(Kqd, -(Ku @ u + kr), "the kinematic coefficient matrix K_qd")
    Md, gd, Ba, ba = (vals[k] for k in ("dynamic_mass", "dynamic_rest", "acceleration_matrix",
                                        "acceleration_rest"))
    if model.has_multipliers:
        sol, info = solve_dynamics(Md, -gd, Ba, -ba)
        if info != 0:
            raise SingularConstraintError("the augmented dynamic matrix [[M_d, -B_a^T], [B_a, 0]] is "
                                          "singular at the operating point")
        S = np.zeros((o + m, o + m))
        S[:o, :o] = Md
        S[:o, o:] = -Ba.T                 # M_d u' + g_d - B_a^T lam = 0 (SymPy's sign of lam)
        S[o:, :o] = Ba
        return PointRates(u, qd, sol[:o], sol[o:], S)
    ncol = Md.shape[1] if Md.ndim == 2 else 0
    ud = np.zeros(o)
    sol, info = solve_dynamics(Md, -gd)
    if info != 0:
        raise SingularConstraintError("the dynamic mass matrix M_d is singular at the operating point")
    ud[:ncol] = sol
    lam = np.full(m, np.nan)      # a reduced block has no multipliers (as model.accelerations)
    if m:  # reduced form: u_dep' from the acceleration constraints
        ud[p:], info = solve_dependent(Ba, ba, ud[:p])
        if info != 0:
            raise SingularConstraintError("the acceleration constraint matrix in the dependent "
                                          "accelerations is singular at the operating point")
    return PointRates(u, qd, ud, lam, None)


def _d(block_der: np.ndarray, sl: slice, vec: np.ndarray | None = None) -> np.ndarray:
    """∂(block)/∂(directions ``sl``) of a vector block, or ∂(Mat @ vec)/∂(sl) of a matrix
    block at fixed ``vec``: ``block_der`` is (rows[, cols], N + o + s)."""
    d = block_der[..., sl]
    return d if vec is None else np.einsum("ijk,j->ik", d, vec)


def _total(parts: list, rest_der: np.ndarray, *terms: tuple) -> np.ndarray:
    """Σ over the parts (slice, D) of ∂R/∂(slice) D for the residual R = rest + Σ Mat vec of
    ``terms`` ((Mat_der, vec) pairs, each at fixed vec): the derivative of R along the basis."""
    out = None
    for sl, D in parts:
        J = _d(rest_der, sl)
        for mat_der, vec in terms:
            if mat_der is not None and vec is not None and mat_der.size:
                J = J + _d(mat_der, sl, vec)
        out = J @ D if out is None else out + J @ D
    return out


def rate_derivatives(model: Any, blocks: Any, rates: PointRates, dq: np.ndarray,
                     du_ind: np.ndarray, dr: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(dq'/dξ (N, k), du_ind'/dξ (p, k)) along the basis dq/dξ = ``dq`` (N, k),
    du_ind/dξ = ``du_ind`` (p, k) and dr/dξ = ``dr`` (s, k; None: the inputs held).

    ``blocks`` from :meth:`NumericModel.block_derivatives` at (q, u, r), ``rates`` from
    :func:`point_rates` there; the formulas are in the module docstring.  Consistency of q
    (f_h = 0) is the caller's: dq must lie in the null space of ∂f_h/∂q if it should.
    """
    N, o, p, m = model.N, model.o, model.p, model.m
    s = len(model.specifieds)
    sq, su, sr = slice(0, N), slice(N, N + o), slice(N + o, N + o + s)
    vals, ders = blocks.values, blocks.derivatives
    u, qd, ud, lam, S = (rates.u, rates.qdot, rates.udot, rates.multipliers,
                         rates.augmented_matrix)
    Bv, Kqd, Ku, Md = (vals[k] for k in ("velocity_matrix", "kinematic_qdot", "kinematic_u",
                                         "dynamic_mass"))
    held = [(sq, dq)] if dr is None else [(sq, dq), (sr, dr)]   # the parts that are not u

    du = np.zeros((o, dq.shape[1]))                 # du/dξ: u_dep from the velocity constraints
    du[:p] = du_ind
    if m:
        rhs = _total(held, ders["velocity_rest"], (ders["velocity_matrix"], u)) + Bv[:, :p] @ du_ind
        du[p:] = -solve_or_raise(Bv[:, p:], rhs, "the velocity constraint matrix in the dependent speeds")

    # kinematics: dq'/dξ (the residual's dependence on u is K_u)
    kin = _total(held, ders["kinematic_rest"], (ders["kinematic_qdot"], qd), (ders["kinematic_u"], u))
    qd_x = -solve_or_raise(Kqd, kin + Ku @ du, "the kinematic coefficient matrix K_qd")

    # dynamics: du_ind'/dξ
    parts = [(sq, dq), (su, du)] + held[1:]
    ncol = Md.shape[1] if Md.ndim == 2 else 0
    dMd, dgd = ders["dynamic_mass"], ders["dynamic_rest"]
    if S is None:
        X = -solve_or_raise(Md, _total(parts, dgd, (dMd, ud[:ncol])), "the dynamic mass matrix M_d")
    else:   # the residual is M_d u' + g_d - B_a^T lam: B_a^T with -lam as one more term
        dBa, dba = ders["acceleration_matrix"], ders["acceleration_rest"]
        dyn = _total(parts, dgd, (dMd, ud[:ncol]), (np.swapaxes(dBa, 0, 1), -lam))
        acc = _total(parts, dba, (dBa, ud))
        X = -solve_or_raise(S, np.vstack([dyn, acc]),
                            "the augmented dynamic matrix [[M_d, -B^T], [B_a, 0]]")
    return qd_x, X[:p]


def central_differences(fun: Callable[[np.ndarray], np.ndarray], x0: np.ndarray,
                        rel_step: float) -> np.ndarray:
    """∂fun/∂x (len(fun(x0)), len(x0)) by central differences, the fallback where the chain
    rule cannot be taken: column j is (fun(x0 + h e_j) - fun(x0 - h e_j)) / (2 h) with
    h = rel_step max(1, |x0_j|) (truncation ~ h² |f⁽³⁾|, rounding ~ 1e-16 / h)."""
    x0 = np.asarray(x0, dtype=float)
    cols = []
    for j in range(x0.size):
        h = rel_step * max(1.0, abs(x0[j]))
        xp, xm = x0.copy(), x0.copy()
        xp[j] += h
        xm[j] -= h
        cols.append((fun(xp) - fun(xm)) / (2 * h))
    return np.column_stack(cols)
