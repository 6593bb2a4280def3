"""Constraint mode "baumgarte": first-order stabilization of the position constraints.

The kinematics of the dependent coordinates are corrected so that the constraint
residual decays instead of drifting::

    q_dep' <- q_dep' - α J_dep^{-1} f_h,        so   d/dt f_h = -α f_h,

with J_dep = ∂f_h/∂q_dep (the dependent coordinates of the active partition).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ...compilation.linear_algebra import solve
from ...compilation.numeric_model import Partition
from ...errors import InputError
from .strategy import ConstraintMode, Run, StopIntegration, ode_function

__all__ = ["Baumgarte"]


class Baumgarte(ConstraintMode):
    """``constraints="baumgarte"`` with the gain ``alpha`` (1/s; 10 by default).

    ``alpha=0`` integrates the plain ODE.  Pass ``Baumgarte(alpha=50.0)`` as
    ``constraints=`` to choose another gain.  ``switch_threshold``: see
    :class:`~.strategy.ConstraintMode`.
    """

    name: ClassVar[str] = "baumgarte"

    def __init__(self, alpha: float = 10.0, *,
                 switch_threshold: float = ConstraintMode.SWITCH_THRESHOLD) -> None:
        super().__init__(switch_threshold=switch_threshold)
        try:
            alpha = float(alpha)
        except (TypeError, ValueError) as exc:
            raise InputError(f"Baumgarte(alpha={alpha!r}) must be a non-negative number") from exc
        if not (np.isfinite(alpha) and alpha >= 0):
            raise InputError(f"Baumgarte(alpha={alpha}) must be a non-negative number")
        self.alpha = alpha

    def plain_rhs(self, run: Run) -> bool:
        return not (run.model.M and self.alpha)

    def rhs(self, run: Run, part: Partition) -> Any:
        model = run.model
        if not (model.M and self.alpha):
            return ode_function(run, part)
        N, alpha, P = model.N, self.alpha, run.constants
        qdep = list(part.dependent_coordinates)

        def correct(t: float, x: np.ndarray, xd: np.ndarray) -> None:
            fh, J = model.holonomic(x[:N], P, t)
            corr, info = solve(J[:, qdep].copy(), fh)
            if info != 0:
                raise StopIntegration(-3, "the holonomic constraint Jacobian is singular in the "
                                          f"dependent coordinates at t = {t:.6g}")
            xd[qdep] -= alpha * corr

        return ode_function(run, part, correct)
