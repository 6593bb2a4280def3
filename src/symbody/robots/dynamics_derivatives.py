"""The derivatives of a robot's forward dynamics, from the emitted inverse-dynamics derivatives.

With τ = ID(q, u, u') (``robot.inverse_dynamics``) and M(q) = ∂τ/∂u', the forward dynamics
u' = FD(q, u, τ) satisfies ID(q, u, FD(q, u, τ)) = τ, so by the implicit-function theorem::

    ∂u'/∂τ = M⁻¹,   ∂u'/∂q = -M⁻¹ ∂τ/∂q,   ∂u'/∂u = -M⁻¹ ∂τ/∂u     (at u' = FD(q, u, τ))

(Carpentier and Mansard, RSS 2018, the identity behind Pinocchio's
``computeABADerivatives``).  Everything on the right is compiled and exact
(``robot.mass_matrix``, ``robot.bias``, ``robot.inverse_dynamics_derivatives``); M⁻¹ comes
from LAPACK's Cholesky factor (``dpotrf``/``dpotri``).  Columns along q are derivatives along
the coordinates' tangents (``robot.tangent_map``), rows and other columns ``robot.speeds``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg import lapack

from ..errors import InputError
from .functions import RobotFunction

__all__ = ["ForwardDynamicsDerivatives"]


def _inverse_spd(M: np.ndarray, name: str) -> np.ndarray:
    """M⁻¹ of a symmetric positive definite M (o, o) by Cholesky."""
    c, info = lapack.dpotrf(M, lower=False)
    if info == 0:
        Minv, info = lapack.dpotri(c, lower=False)
    if info != 0:
        raise InputError(f"{name}: the mass matrix is not positive definite at this q "
                         f"(LAPACK info {info})")
    return np.triu(Minv) + np.triu(Minv, 1).T


class ForwardDynamicsDerivatives:
    """``(du'/dq, du'/du, du'/dtau) = f(q, u, tau)``, each (o, o), or (k, o, o) for k states.

    ``u'`` is the inverse of ``robot.inverse_dynamics`` (every speed free: mimic joints as
    ordinary joints, Pinocchio's default model; the URDF damping and friction included when
    the robot has them); ``accelerations(q, u, tau)`` gives it.
    """

    def __init__(self, mass_matrix: RobotFunction, bias: RobotFunction,
                 inverse_derivatives: RobotFunction) -> None:
        self.mass_matrix, self.bias = mass_matrix, bias
        self.inverse_derivatives = inverse_derivatives
        self.size = inverse_derivatives.shape[-1]
        self.name = "forward_dynamics_derivatives"

    def _tau(self, tau: Any) -> np.ndarray:
        t = np.asarray(tau, dtype=float)
        if t.ndim not in (1, 2) or t.shape[-1] != self.size:
            raise InputError(f"{self.name}: tau must have {self.size} values (or shape (k, "
                             f"{self.size}) for k states), got shape {t.shape}")
        return t

    def accelerations(self, q: Any, u: Any, tau: Any) -> np.ndarray:
        """u' = M(q)⁻¹ (τ - b(q, u)): (o,) or (k, o)."""
        M, b = self.mass_matrix(q), self.bias(q, u)
        return np.linalg.solve(M, (self._tau(tau) - b)[..., None])[..., 0]

    def __call__(self, q: Any, u: Any, tau: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        tau = self._tau(tau)
        M, b = self.mass_matrix(q), self.bias(q, u)
        if M.ndim == 2:
            Minv = _inverse_spd(M, self.name)
        else:
            Minv = np.array([_inverse_spd(m, self.name) for m in M])
        udot = (Minv @ (tau - b)[..., None])[..., 0]
        D = self.inverse_derivatives(q, u, udot)
        return -(Minv @ D[..., 0, :, :]), -(Minv @ D[..., 1, :, :]), Minv
