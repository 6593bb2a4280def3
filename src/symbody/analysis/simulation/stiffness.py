"""Stiffness detection: the default method leaves an explicit Runge-Kutta method for Radau
when the problem turns stiff (contact, stiff springs and controllers).

An explicit method on a stiff problem takes steps at the edge of its stability region
whatever the tolerance: the product h ρ of the step and the spectral radius ρ of ∂f/∂y stays
near the region's boundary (3.3 for RK45, 6.1 for DOP853 along the negative real axis),
where an accuracy-limited step has h ρ of order 1 or less.  Every ``EVERY`` accepted steps
(up to ``LONGEST`` while the tests find h ρ below a ``QUIET`` fraction of the boundary: the
interval doubles after each such test and falls back at any other) the monitor estimates ρ by a few power iterations on Jacobian-vector products taken by
forward differences of the right-hand side, J v ≈ (f(t, y + δ v) - f(t, y)) / δ, the vector
kept from one test to the next (``ITERATIONS`` evaluations per test: a few percent of the
run's).  Hairer's cheaper test from two stages at t + h (*Solving ODEs II*, sec. IV.2) sees
only the direction of the step and missed the stiffness of a ball's regularized friction
(h λ ≈ 0.1 to 1.4 steadily while the step was stability-bound); the power iteration does
not.  The problem is stiff when h ρ exceeds ``FRACTION`` of the boundary at ``STIFF`` tests
in a row.  When ``simulate`` chose the method itself (``Solver(method=None)``) the run then
goes on from the step's end with Radau (compiled steps where the model runs in C,
:mod:`.native_radau`); the trajectory's message says where.

A step held at the stability limit says that the explicit method is slowed by stiffness, not
that Radau is faster: on mildly stiff problems (a gait model's damped muscle fibers, ρ ~ 10³
s⁻¹) Radau's accuracy-limited steps are no longer than the explicit ones and each costs a
Jacobian's share (n evaluations by differences) and its Newton iterations.  So the switch is
a trial: after ``TRIAL`` accepted Radau steps (its step grows tenfold a step at most, from
the explicit one) the run compares the right-hand-side evaluations per unit of time of the
two methods -- the explicit method's measured over its last test's window (its stages,
rejected steps and the power iterations), Radau's projected from the step it proposes next,
h_R, as (``NEWTON`` + n / ``JACOBIAN_STEPS``) / h_R (a step's Newton iterations and its share
of a Jacobian by differences; not measured over the trial, whose first steps near a contact's
touchdown are short and pay the whole first Jacobian) -- and goes back to the explicit method
when Radau's are not fewer.  Radau goes back after its first step already when it proposes
no longer a step than it took and its rate is not lower (its steps are limited by accuracy,
not stability: a gait model's muscles), before the Jacobian that step recomputes is
evaluated (:mod:`.native_radau` owes it to the next step): half the trial's cost.  Counts,
not clock time, so a run is reproducible; the LU factorizations are not counted (on the
side of keeping Radau).  A stiff contact's Radau steps are orders of magnitude past the
explicit ones and pass at once.  After a way back the test goes on, and a new trial starts
only when the explicit method's rate has grown ``AGAIN`` times past the rate Radau had (a
touchdown, a stiffer phase).
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
    LONGEST = 128
    QUIET = 0.2
    ITERATIONS = 6
    FRACTION = 0.7
    STIFF = 3
    #: Radau's accepted steps before its evaluations per unit time are compared
    TRIAL = 3
    #: the evaluations of a Radau step's Newton iterations (3 stages, 2 to 4 iterations)
    NEWTON = 10
    #: the steps a Jacobian serves (its n evaluations by differences shared among them)
    JACOBIAN_STEPS = 10
    #: after a way back, a new trial when the explicit rate exceeds Radau's by this factor
    AGAIN = 2.0

    def __init__(self, method: str) -> None:
        self.method = method
        self.boundary = self.BOUNDARY[method]
        self.steps = 0
        self.every = self.EVERY
        self.tested = False
        self.above = 0
        self.vector: np.ndarray | None = None
        self.switched_at: float | None = None
        self.last: float | None = None
        #: (t, evaluations) at the last test: the explicit method's window
        self.mark: tuple[float, int] | None = None
        self.explicit_rate: float | None = None
        #: (t, evaluations, accepted steps) at the start of a Radau trial, None outside one
        self.trial: list | None = None
        self.kept = False
        #: Radau's evaluations per unit time in the last trial it lost (None: none lost)
        self.radau_rate: float | None = None
        #: (switched at, back at) of each trial Radau lost
        self.returns: list[tuple[float, float]] = []

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
        scale = 1.4901161193847656e-08 * max(1.0, float(np.abs(y).max()))
        power = getattr(stepper, "power_iteration", None)          # (compiled: in one call)
        if power is not None:
            v = np.array(v, dtype=float)
            rho = power(v, scale, self.ITERATIONS)
            if rho is not None:
                self.vector = v
            return rho
        fun = getattr(stepper, "derivative", None) or stepper.fun     # (compiled: no wrappers)
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

    def steps_to_test(self) -> int:
        """Accepted steps up to and including the next one :meth:`next_method` must see
        (a test, a step of Radau's trial; a large number once Radau is kept)."""
        if self.kept:
            return 1 << 62
        if self.trial is not None:
            return 1
        return max(1, self.every - self.steps)

    def stiff(self, stepper: Any, steps: int = 1) -> bool:
        """Take the test when ``every`` accepted steps have passed since the last (``steps``
        accepted since the last call); True when the problem is stiff (the steps held at the
        stability limit, STIFF tests in a row).  ``tested`` says whether a test was taken."""
        self.steps += steps
        self.tested = False
        if self.steps < self.every:
            return False
        self.steps, self.tested = 0, True
        rho = self.spectral_radius(stepper)
        h = getattr(stepper, "step_size", None)
        if rho is None or not h:
            self.every = self.EVERY
            return False
        self.last = abs(h) * rho
        quiet = self.last < self.QUIET * self.boundary
        self.every = min(2 * self.every, self.LONGEST) if quiet else self.EVERY
        if self.last > self.FRACTION * self.boundary:
            self.above += 1
            if self.above >= self.STIFF:
                self.above = 0
                return True
        else:
            self.above = 0
        return False

    def next_method(self, stepper: Any, nfev: int, steps: int = 1) -> str | None:
        """After ``steps`` accepted steps (the run's evaluations so far ``nfev``): the method
        to go on with from the last one's end, or None to keep the current one (module doc)."""
        t = float(stepper.t)
        if self.kept:
            return None
        if self.trial is not None:
            return self._judge(stepper, nfev)
        if self.mark is None:
            self.mark = (t, nfev)
        if self.radau_rate is not None and self.steps + steps >= self.every:
            # after a way back: no power iteration while the explicit rate is not past
            # AGAIN times Radau's (no trial could start)
            span = abs(t - self.mark[0])
            rate = (nfev - self.mark[1]) / span if span > 0 else np.inf
            if rate <= self.AGAIN * self.radau_rate:
                self.steps, self.above, self.mark = 0, 0, (t, nfev)
                return None
        if not self.stiff(stepper, steps):
            if self.tested:
                self.mark = (t, nfev)
            return None
        span = abs(t - self.mark[0])
        rate = (nfev - self.mark[1]) / span if span > 0 else np.inf
        self.mark = (t, nfev)
        if self.radau_rate is not None and rate <= self.AGAIN * self.radau_rate:
            return None
        self.explicit_rate = rate
        self.trial = [t, nfev, 0]
        self.switched_at = t
        return self.IMPLICIT

    def _judge(self, stepper: Any, nfev: int) -> str | None:
        """A step of Radau's trial: at its TRIAL-th, Radau kept or left (module doc)."""
        t = float(stepper.t)
        trial = self.trial
        trial[2] += 1
        h = getattr(stepper, "h_abs", None) or stepper.step_size
        cost = self.NEWTON + np.size(stepper.y) / self.JACOBIAN_STEPS
        rate = cost / abs(h) if h else np.inf
        taken = stepper.step_size
        # after its first step, Radau proposing no longer a step than it took (accuracy, not
        # stability, limits it) at a rate past the explicit one has lost already: leave before
        # its second Jacobian (owed by the compiled steps, never evaluated then)
        short = trial[2] == 1 and taken is not None and h and abs(h) <= abs(taken)
        if trial[2] < self.TRIAL and not (short and rate >= self.explicit_rate):
            return None
        self.trial = None
        if rate < self.explicit_rate:
            self.kept = True
            return None
        self.radau_rate = rate
        self.returns.append((trial[0], t))
        self.switched_at, self.steps, self.above, self.mark = None, 0, 0, (t, nfev)
        self.every = self.EVERY
        return self.method

    def note(self) -> str:
        """What the trajectory's message says about the switches ("" without one)."""
        text = "".join(f"; Radau tried from t = {a:.6g} (steps held at {self.method}'s stability "
                       f"limit) and left at t = {b:.6g}: it needs more evaluations per unit time"
                       for a, b in self.returns)
        if self.switched_at is None:
            return text
        return text + f"; stiff from t = {self.switched_at:.6g}: continued with {self.IMPLICIT}"
