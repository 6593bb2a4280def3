"""Stiffness detection: the default method leaves an explicit Runge-Kutta method for Radau
when the problem turns stiff (contact, stiff springs and controllers).

An explicit method on a stiff problem takes steps at the edge of its stability region
whatever the tolerance: the product h ρ of the step and the spectral radius ρ of ∂f/∂y stays
near the region's boundary (3.3 for RK45, 6.1 for DOP853 along the negative real axis),
where an accuracy-limited step has h ρ of order 1 or less.  Every ``EVERY`` accepted steps
(more in compiled blocks on small models, where a test's stop of the blocks weighs more than
their evaluations: :meth:`StiffnessMonitor.shortest_interval`; up to ``LONGEST`` while the
tests find h ρ below a ``QUIET`` fraction of the boundary: the interval doubles after each
such test and falls back at any other) the monitor estimates ρ by a few power iterations on
Jacobian-vector products taken by forward differences of the right-hand side,
J v ≈ (f(t, y + δ v) - f(t, y)) / δ, the vector kept from one test to the next (``ITERATIONS`` evaluations per test: a few percent of the
run's).  Hairer's cheaper test from two stages at t + h (*Solving ODEs II*, sec. IV.2) sees
only the direction of the step and missed the stiffness of a ball's regularized friction
(h λ ≈ 0.1 to 1.4 steadily while the step was stability-bound); the power iteration does
not.  The problem is stiff when h ρ exceeds ``FRACTION`` of the boundary at ``STIFF`` tests
in a row.  When ``simulate`` chose the method itself (``Solver(method=None)``) the run then
goes on from the step's end with Radau (compiled steps where the model runs in C,
:mod:`.native_radau`); the trajectory's message says where.

A step held at the stability limit says that the explicit method is slowed by stiffness, not
that Radau is faster: on mildly stiff problems (a gait model's damped muscle fibers, ρ ~ 10³
s⁻¹; Arm26's muscles, ρ ~ 260 s⁻¹) Radau's accuracy-limited steps are not much longer than the
explicit ones, and each costs its Newton iterations, a Jacobian's share, LU factorizations of
the two n x n iteration matrices and the solves with them, and a step's Python work (the
explicit steps run in compiled blocks).  So the run compares costs, in evaluations of the
right-hand side of a model of n states, one taken as ~0.05 µs per state (0.04-0.13 µs measured
on compiled multibody and muscle models, 4 to 230 states: the small end, where a step's Python
work weighs most): a pair of LU factorizations of the iteration matrices as n²/90 evaluations
(0.55 ns n³: 5.8 ms at n = 230), the solves of one Newton evaluation as n/28, a Radau step's
Python work (~20 µs) as 400/n and a switch's (the two steppers' constructors, ~0.6 ms) as
12000/n (:meth:`StiffnessMonitor.radau_step_cost`, :meth:`~StiffnessMonitor.switch_cost`;
sizes and counts, not clock time, so a run is reproducible).  The explicit method's cost is
measured over its last test's window: its evaluations (its stages, rejected steps and the
power iterations) and its returns to Python (400/n each: a step each where it steps one at a
time, for events or dense output; a block each in compiled blocks).

- No switch when it cannot pay: when the explicit method's cost to the end of the span (its
  rate times the time left) is not more than a switch's (a 12-state arm at t = 0.66
  of a 1 s run), nor a power iteration (the tests then further apart, up to ``LONGEST``
  steps).
- The switch is a trial: after ``TRIAL`` accepted Radau steps (its step grows tenfold a step at
  most, from the explicit one), or at the first whose proposed next step h_R is less than
  ``SETTLED`` times the one it took (it has settled: accuracy, not stability, limits it),
  Radau's cost per unit time is projected as :meth:`~StiffnessMonitor.radau_step_cost` / h_R
  (``NEWTON`` evaluations and their solves, 1 / ``JACOBIAN_STEPS`` of a Jacobian by
  differences, a pair of LU factorizations and a step's Python work; not measured over the
  trial, whose first steps near a contact's touchdown are short and pay the whole first
  Jacobian), and the run goes back to the explicit method when it is not lower.  Settled after
  its first step (a gait model's muscles), Radau leaves before the Jacobian that step
  recomputes is evaluated (:mod:`.native_radau` owes it to the next step): half the trial's
  cost.  A stiff contact's Radau steps grow orders of magnitude past the explicit ones and
  pass.
- Radau kept is judged on what it does: every ``WATCH`` steps its cost over the last
  ``WINDOWS`` such windows (its evaluations, the solves of the Newton ones, its LU
  factorizations and steps, counted) per unit time is compared with the explicit method's
  rate, and the run goes back when it is higher (a projection flatters Radau when the problem
  changes: a muscle path's kinks; over several windows, so that a touchdown's burst of short
  steps is not taken for the trend).

After a way back the test goes on, and a new trial starts only when the explicit method's rate
has grown ``AGAIN`` times past the lowest cost Radau had (a touchdown, a stiffer phase).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

__all__ = ["StiffnessMonitor"]


class StiffnessMonitor:
    """The stiffness test on the accepted steps of an explicit method (module doc)."""

    #: the stability boundary |h λ| of each method along the negative real axis
    #: (max x with |R(-x)| <= 1 for the stability function R(z) = 1 + z bᵀ(I - zA)⁻¹1:
    #: Tsit5 3.51, Vern6 4.86; tests/analysis/test_explicit_tableaux.py)
    BOUNDARY: ClassVar[dict] = {"RK23": 2.5, "RK45": 3.3, "DOP853": 6.1, "Tsit5": 3.5,
                                "Vern6": 4.8}
    #: the evaluations of an accepted step of each method
    STAGES: ClassVar[dict] = {"RK23": 3, "RK45": 6, "DOP853": 12, "Tsit5": 6, "Vern6": 8}
    #: the method taken over when the problem is stiff
    IMPLICIT = "Radau"
    EVERY = 16
    LONGEST = 128
    QUIET = 0.2
    ITERATIONS = 6
    FRACTION = 0.7
    STIFF = 3
    #: Radau's accepted steps at most before its cost per unit time is compared (earlier when
    #: its step has settled)
    TRIAL = 10
    #: a proposed step less than this factor past the one taken: settled (scipy's Radau keeps
    #: its step below it, unless it recomputes the Jacobian)
    SETTLED = 1.2
    #: the evaluations of a Radau step's Newton iterations (3 stages, 2 to 4 iterations)
    NEWTON = 10
    #: the steps a Jacobian serves (its n evaluations by differences shared among them)
    JACOBIAN_STEPS = 10
    #: after a way back, a new trial when the explicit rate exceeds Radau's by this factor
    AGAIN = 2.0
    #: the cost model (module doc), in evaluations of a model of n states: a Radau step's
    #: Python work (STEP_WORK / n), a switch's (SWITCH_WORK / n), a pair of LU factorizations
    #: (LU_WORK n²) and the solves of one Newton evaluation (SOLVE_WORK n)
    STEP_WORK = 400.0
    SWITCH_WORK = 12000.0
    LU_WORK = 1.0 / 90.0
    SOLVE_WORK = 1.0 / 28.0
    #: a test's stop of the compiled explicit steps and its Python work (~45 µs), as
    #: evaluations times n; the share of the explicit evaluations the tests may cost
    TEST_WORK = 900.0
    TEST_SHARE = 0.1
    #: the longest interval between tests that keeps to TEST_SHARE (a tiny model's)
    SPARSEST = 1024
    #: Radau kept: its steps between two comparisons of its measured cost, and the windows
    #: of WATCH steps the comparison takes together
    WATCH = 16
    WINDOWS = 4

    def __init__(self, method: str) -> None:
        self.method = method
        self.boundary = self.BOUNDARY[method]
        self.steps = 0
        self.every = self.EVERY
        #: the shortest interval between tests for this model (:meth:`shortest_interval`)
        self.shortest = self.EVERY
        self.tested = False
        self.above = 0
        self.vector: np.ndarray | None = None
        self.switched_at: float | None = None
        self.last: float | None = None
        #: (t, evaluations, returns to Python) at the last test: the explicit method's window
        self.mark: tuple[float, int, int] | None = None
        #: the explicit method's returns to Python (calls of :meth:`next_method`)
        self.calls = 0
        self.explicit_rate: float | None = None
        #: (t, evaluations, accepted steps) at the start of a Radau trial, None outside one
        self.trial: list | None = None
        self.kept = False
        #: Radau's cost per unit time when it was last left (None: never left)
        self.radau_rate: float | None = None
        #: (switched at, back at) of each trial Radau lost
        self.returns: list[tuple[float, float]] = []
        #: Radau kept: (t, evaluations, Jacobians, LU factorizations, steps) at its window's
        #: start, and (stepper, Jacobians, LU factorizations) at the last step seen
        self.window: list | None = None
        self.seen: tuple | None = None
        #: Radau kept: the lowest cost per unit time it had over a window,
        #: and (cost, time) of its last windows
        self.best = np.inf
        self.history: list[tuple[float, float]] = []

    @classmethod
    def radau_step_cost(cls, n: int) -> float:
        """A Radau step's projected cost in evaluations of a model of n states: NEWTON
        evaluations and their solves, its share of a Jacobian by differences, a pair of LU
        factorizations and its Python work (module doc)."""
        return (cls.NEWTON * (1.0 + cls.SOLVE_WORK * n) + n / cls.JACOBIAN_STEPS
                + cls.LU_WORK * n * n + cls.STEP_WORK / n)

    def shortest_interval(self, n: int) -> int:
        """The accepted steps between two tests at least, for a model of n states: a test
        (its ITERATIONS evaluations and a stop of the compiled steps, TEST_WORK / n) costs at
        most TEST_SHARE of the explicit method's evaluations between tests (its stages a step),
        from EVERY to SPARSEST."""
        work = self.TEST_WORK / n + self.ITERATIONS
        steps = np.ceil(work / (self.TEST_SHARE * self.STAGES[self.method]))
        return int(min(self.SPARSEST, max(self.EVERY, steps)))

    @classmethod
    def switch_cost(cls, n: int) -> float:
        """The least a trial of Radau costs, in evaluations: the switch and the way back, the
        first Jacobian by differences and its LU factorizations (module doc)."""
        return cls.SWITCH_WORK / n + n + cls.LU_WORK * n * n

    @classmethod
    def measured_cost(cls, n: int, evaluations: int, jacobians: int, factorizations: int,
                      steps: int) -> float:
        """What Radau's ``steps`` cost, in evaluations: their ``evaluations`` (Jacobians by
        differences included), the solves of the Newton ones, the ``factorizations`` (LU,
        counted one by one: two a step that factorizes) and their Python work."""
        newton = max(evaluations - jacobians * n, 0)
        return (evaluations + cls.SOLVE_WORK * n * newton + cls.LU_WORK * n * n * factorizations / 2
                + cls.STEP_WORK / n * steps)

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
            self.every = self.shortest
            return False
        self.last = abs(h) * rho
        quiet = self.last < self.QUIET * self.boundary
        longest = max(self.LONGEST, self.shortest)
        self.every = min(2 * self.every, longest) if quiet else self.shortest
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
            return self._watch(stepper, nfev, steps)
        if self.trial is not None:
            return self._judge(stepper, nfev)
        n = np.size(stepper.y)
        self.calls += 1
        if self.mark is None:
            self.mark = (t, nfev, 0)
        if steps > 1 and self.shortest == self.EVERY:
            # (the steps in compiled blocks: a test stops them)
            self.shortest = self.shortest_interval(n)
            self.every = max(self.every, self.shortest)
        if self.steps + steps >= self.every and not self._could_pay(stepper, nfev):
            # no power iteration while no trial could start: after a way back, the explicit
            # rate not past AGAIN times Radau's; or the explicit method's cost to the end
            # no more than a switch's (the tests then further apart: the time left only shrinks)
            self.steps, self.above, self.mark = 0, 0, (t, nfev, self.calls)
            return None
        if not self.stiff(stepper, steps):
            if self.tested:
                self.mark = (t, nfev, self.calls)
            return None
        rate = self._rate(t, nfev, n)
        self.mark = (t, nfev, self.calls)
        if self.radau_rate is not None and rate <= self.AGAIN * self.radau_rate:
            return None
        self.explicit_rate = rate
        self.trial = [t, nfev, 0]
        self.switched_at = t
        return self.IMPLICIT

    def _rate(self, t: float, nfev: int, n: int) -> float:
        """The explicit method's cost per unit time since the last test, in evaluations: its
        evaluations and its returns to Python (a step each where it steps one at a time, a
        block each in compiled blocks), STEP_WORK / n each."""
        t0, nfev0, calls0 = self.mark
        span = abs(t - t0)
        cost = nfev - nfev0 + (self.calls - calls0) * self.STEP_WORK / n
        return cost / span if span > 0 else np.inf

    def _could_pay(self, stepper: Any, nfev: int) -> bool:
        """Whether a trial of Radau could pay at the stepper's state: the explicit rate since
        the last test past AGAIN times Radau's when it was left, and the explicit method's
        cost at that rate to the end of the span more than a switch's."""
        t, n = float(stepper.t), np.size(stepper.y)
        rate = self._rate(t, nfev, n)
        if self.radau_rate is not None and rate <= self.AGAIN * self.radau_rate:
            return False
        left = abs(float(getattr(stepper, "t_bound", np.inf)) - t)
        if rate * left <= self.switch_cost(n):
            self.every = min(2 * self.every, max(self.LONGEST, self.shortest))
            return False
        return True

    def _judge(self, stepper: Any, nfev: int) -> str | None:
        """A step of Radau's trial: settled, or at its TRIAL-th, Radau kept or left (module doc)."""
        t = float(stepper.t)
        trial = self.trial
        trial[2] += 1
        h = getattr(stepper, "h_abs", None) or stepper.step_size
        rate = self.radau_step_cost(np.size(stepper.y)) / abs(h) if h else np.inf
        taken = stepper.step_size
        # Radau proposing no longer a step than SETTLED times the one it took has settled
        # (accuracy, not stability, limits it): its cost is what it is now, judged at once
        # (after its first step: before its second Jacobian, owed by the compiled steps, never
        # evaluated when it leaves)
        settled = taken is not None and h and abs(h) < self.SETTLED * abs(taken)
        if trial[2] < self.TRIAL and not settled:
            return None
        self.trial = None
        if rate < self.explicit_rate:
            self.kept = True
            self.seen = (stepper, getattr(stepper, "njev", 0), getattr(stepper, "nlu", 0))
            self.window, self.best, self.history = [t, nfev, 0, 0, 0], np.inf, []
            return None
        return self._back(t, nfev, rate)

    def _back(self, t: float, nfev: int, rate: float) -> str:
        """Back to the explicit method at t, Radau's cost per unit time having been ``rate``."""
        self.radau_rate = rate
        self.returns.append((self.switched_at, t))
        self.switched_at, self.steps, self.above, self.mark = None, 0, 0, (t, nfev, self.calls)
        self.every = self.shortest
        self.kept, self.trial, self.window, self.seen, self.history = False, None, None, None, []
        return self.method

    def _watch(self, stepper: Any, nfev: int, steps: int) -> str | None:
        """Radau kept: its measured cost per unit time every WATCH steps, against the explicit
        rate (module doc); the explicit method again when it is higher."""
        window, (seen, njev, nlu) = self.window, self.seen
        jacobians, factorizations = getattr(stepper, "njev", 0), getattr(stepper, "nlu", 0)
        if stepper is not seen:      # (a restart: a new stepper, its counts from its start)
            njev = nlu = 0
        window[2] += jacobians - njev
        window[3] += factorizations - nlu
        window[4] += steps
        self.seen = (stepper, jacobians, factorizations)
        if window[4] < self.WATCH:
            return None
        t = float(stepper.t)
        cost = self.measured_cost(np.size(stepper.y), nfev - window[1], *window[2:])
        span = abs(t - window[0])
        self.window = [t, nfev, 0, 0, 0]
        self.history = [*self.history[1 - self.WINDOWS:], (cost, span)]
        if span > 0:
            self.best = min(cost / span, self.best)
        # (over the last WINDOWS windows: a touchdown's burst of short steps is not the trend)
        spent, spans = (sum(c) for c in zip(*self.history))
        rate = spent / spans if spans > 0 else np.inf
        if rate <= self.explicit_rate:
            return None
        # (a new trial when the explicit rate passes AGAIN times the lowest cost Radau had)
        return self._back(t, nfev, min(rate, self.best))

    def note(self) -> str:
        """What the trajectory's message says about the switches ("" without one)."""
        text = "".join(f"; Radau tried from t = {a:.6g} (steps held at {self.method}'s stability "
                       f"limit) and left at t = {b:.6g}: it costs more per unit time"
                       for a, b in self.returns)
        if self.switched_at is None:
            return text
        return text + f"; stiff from t = {self.switched_at:.6g}: continued with {self.IMPLICIT}"
