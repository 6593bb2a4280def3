"""Stiffness detection: the default method leaves an explicit Runge-Kutta method for Radau
when the problem turns stiff (contact, stiff springs and controllers).

An explicit method on a stiff problem takes steps at the edge of its stability region
whatever the tolerance: the product h ρ of the step and the spectral radius ρ of ∂f/∂y stays
near the region's boundary (3.3 for RK45, 6.1 for DOP853 along the negative real axis),
where an accuracy-limited step has h ρ of order 1 or less.  Every ``EVERY`` accepted steps
the monitor estimates ρ by a few power iterations on Jacobian-vector products taken by
forward differences of the right-hand side, J v ≈ (f(t, y + δ v) - f(t, y)) / δ, the vector
kept from one test to the next (``ITERATIONS`` evaluations per test: a few percent of the
run's).  Hairer's cheaper test from two stages at t + h (*Solving ODEs II*, sec. IV.2) sees
only the direction of the step and missed the stiffness of a ball's regularized friction
(h λ ≈ 0.1 to 1.4 steadily while the step was stability-bound); the power iteration does
not.  The problem is stiff when h ρ exceeds ``FRACTION`` of the boundary at ``STIFF`` tests
in a row.  When ``simulate`` chose the method itself (``Solver(method=None)``) the run then
goes on from the step's end with Radau (compiled steps where the model runs in C,
:mod:`.native_radau`); the trajectory's message says where.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

__all__ = ["StiffnessMonitor"]


class StiffnessMonitor:
    """The stiffness test on the accepted steps of an explicit method (module doc)."""

    #: the stability boundary |h λ| of each method along the negative real axis
    BOUNDARY: ClassVar[dict] = {"RK23": 2.5, "RK45": 3.3, "DOP853": 6.1}
    #: the method taken over when the problem is stiff
    IMPLICIT = "Radau"
    EVERY = 16
    ITERATIONS = 6
    FRACTION = 0.7
    STIFF = 3

    def __init__(self, method: str) -> None:
        self.boundary = self.BOUNDARY[method]
        self.steps = 0
        self.above = 0
        self.vector: np.ndarray | None = None
        self.switched_at: float | None = None
        self.last: float | None = None

    @classmethod
    def for_run(cls, method: str, chosen: bool) -> StiffnessMonitor | None:
        """A monitor when ``simulate`` chose ``method`` itself (``chosen``) and it can be tested."""
        return cls(method) if chosen and method in cls.BOUNDARY else None

    def spectral_radius(self, stepper: Any) -> float | None:
        """ρ(∂f/∂y) at the stepper's state by power iteration (None when it cannot be formed)."""
        t, y, f = stepper.t, np.asarray(stepper.y, dtype=float), getattr(stepper, "f", None)
        if f is None or not np.isfinite(f).all():
            return None
        v = self.vector
        if v is None or v.shape != y.shape:
            v = np.random.default_rng(0).standard_normal(y.size)
        fun = getattr(stepper, "derivative", None) or stepper.fun     # (compiled: no wrappers)
        scale = 1.4901161193847656e-08 * max(1.0, float(np.abs(y).max()))
        rho = None
        # a trial state may overflow the model, or |w|² overflow: that estimate is dropped
        # (None), not warned about
        with np.errstate(over="ignore", invalid="ignore"):
            for _ in range(self.ITERATIONS):
                norm = float(np.linalg.norm(v))
                if not 0.0 < norm < np.inf:
                    return None
                v = v / norm
                w = (np.asarray(fun(t, y + scale * v), dtype=float) - f) / scale
                if not np.isfinite(w).all():
                    return None
                rho = float(np.linalg.norm(w))
                if not rho < np.inf:
                    return None
                v = w
        self.vector = v
        return rho

    def stiff(self, stepper: Any) -> bool:
        """Take the test on every EVERY-th accepted step; True when the problem is stiff (once:
        after the switch the test is off)."""
        if self.switched_at is not None:
            return False
        self.steps += 1
        if self.steps % self.EVERY:
            return False
        rho = self.spectral_radius(stepper)
        h = getattr(stepper, "step_size", None)
        if rho is None or not h:
            return False
        self.last = abs(h) * rho
        if self.last > self.FRACTION * self.boundary:
            self.above += 1
            if self.above >= self.STIFF:
                self.switched_at = float(stepper.t)
                return True
        else:
            self.above = 0
        return False

    def note(self) -> str:
        """What the trajectory's message says about a switch ("" without one)."""
        if self.switched_at is None:
            return ""
        return f"; stiff from t = {self.switched_at:.6g}: continued with {self.IMPLICIT}"
