"""The simulation's loop: :class:`_Segments` integrates segment after segment (one stepper
each; a segment ends at tf, at a switch of the dependent set, at an impact or where the
constraint mode asks for a restart), takes the accepted steps one at a time, locates the
dependent-set and zero-crossing events on each step's dense output (:class:`_Dense`), samples
the outputs and records the steps.  Run by :func:`.driver.simulate`.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from scipy.integrate import DenseOutput

from ...compat.scipy import radau_dense_values
from ...compilation.numeric_model import Partition
from ..dense_output import StepRecorder
from ..events import EventRecord, PreparedEvents
from .augmented import ENTER_RANK, LEAVE_RANK, AugmentedLagrangian, full_partition, is_full
from .chattering import ChatterWatch
from .dependent_set import DependentSetMonitor, near_singular_note, remap
from .nonfinite import NonFinite
from .samples import Samples
from .segment_events import ZENO_IMPACTS, ZENO_TIME_FRACTION, _SegmentEvents, _Terminal  # noqa: F401
from .stiffness import StiffnessMonitor
from .strategy import ConstraintMode, Run, StopIntegration, ode_function

# ---------------------------------------------------------------- the loop
#: output samples waiting for the constraint mode's pass (a projection) are passed through it
#: together once there are this many (see _Segments.emit)
PENDING_ROWS = 4096


def _states(dense: _Dense, times: np.ndarray) -> np.ndarray:
    """The states (k, n) at ``times`` (k,) of a step: at the step's end the stepper's own
    state (not the interpolant there, equal to round-off: DOP853's costs three evaluations
    more), elsewhere the dense output."""
    stepper = dense.stepper
    end = times == stepper.t
    if not end.any():
        return dense.many(times)
    Y = np.empty((times.size, np.size(stepper.y)))
    Y[end] = stepper.y
    if not end.all():
        Y[~end] = dense.many(times[~end])
    return Y


def _inf_if_none(t: float | None, direction: float) -> float:
    """``t``, or the infinity beyond which no output waits (None: no output time left)."""
    return direction * np.inf if t is None else t


def _restart_step(stepper: Any, single: bool) -> float | None:
    """The first step of the stepper that replaces ``stepper`` after a restart: the last step
    taken, or, when ``single`` (the segment took only that one step), the step ``stepper``
    would try next (scipy's solvers keep it in ``h_abs``: grown after a successful step, held
    after a rejection).  From the last step alone, a solver restarted after every step could
    never grow its step, only shrink it at rejections (a ratchet: Bricard at rtol 1e-6 with
    ``Projection(drift_tolerance=0)`` took 3410 steps instead of 28).  The full-coordinate
    spans keep the last step: they restart right after entering next to a rank loss, where
    a grown step loses accuracy (the 2-loop N-four-bar's energy error went from 1e-6 to 3e-6
    relative)."""
    h = getattr(stepper, "h_abs", None)
    if single and isinstance(h, float) and math.isfinite(h) and h > 0.0:
        return h
    return stepper.step_size


class _Dense:
    """The step's dense output, created on first use."""

    def __init__(self, stepper: Any) -> None:
        self.stepper, self._sol = stepper, None

    def __call__(self, t: float) -> np.ndarray:
        if self._sol is None:
            self._sol = self.stepper.dense_output()
        return radau_dense_values(self._sol, float(t))

    def many(self, times: np.ndarray) -> np.ndarray:
        """The states at ``times`` (k,) as rows (k, n): one call of scipy's interpolant."""
        if self._sol is None:
            self._sol = self.stepper.dense_output()
        if isinstance(self._sol, DenseOutput):
            return np.asarray(radau_dense_values(self._sol, times), dtype=float).T.reshape(len(times), -1)
        return np.array([self._sol(t) for t in times])


class _Segments(_SegmentEvents):
    """Integrates segment after segment: a segment is one stepper, and it ends at tf, at a
    switch of the dependent set, or where the constraint mode asks for a restart."""

    def __init__(self, run: Run, mode: ConstraintMode, monitor: DependentSetMonitor,
                 samples: Samples, t_eval: np.ndarray | None, bar: Any,
                 watcher: PreparedEvents | None = None) -> None:
        self.run, self.mode, self.monitor, self.samples = run, mode, monitor, samples
        self.t_eval, self.bar = t_eval, bar
        self.direction = np.sign(run.tf - run.t0)
        self.next_output = 0           # index of the next t_eval sample
        self.nsteps = 0
        self.watcher = watcher         # the user's events, or None
        self.records: list[EventRecord] = []
        self._impact_times: dict[int, list[float]] = {}   # event index -> times of its impacts
        self._resting: int | None = None   # the impact that started this segment left g' = 0
        self.impacts: list[float] = []   # times of the impact maps (segment boundaries)
        self.stopped_by = ""           # message of a terminal event
        #: output samples waiting for the constraint mode's pass (see emit): (times, states,
        #: layout, partition index) per step, and how many samples that is
        self.pending: list[tuple[np.ndarray, np.ndarray, Partition, int]] = []
        self.pending_rows = 0
        #: the accepted steps' dense output (the trajectory's interpolant; None: not kept)
        self.steps: StepRecorder | None = None
        #: how many times the mode's correction after a step was fed back into the solver
        #: (a restart from the corrected state); the other corrections moved the samples only
        self.restarts = 0
        #: the event whose action started this segment (or the contacts' events: a kink)
        self._quiet_event: int | list[int] | None = None
        self._start_rhs: dict = {}      # partition -> x' in its layout (see _check_start)
        self._fresh = True              # the next segment starts from x0 or an impact's state
        self.chatter = ChatterWatch(run)   # a discontinuous force flipping at every step
        # where the constraint Jacobian loses rank the run goes on in full coordinates
        self.full_mode = AugmentedLagrangian() if monitor.active and monitor.switch else None
        self.stiffness: StiffnessMonitor | None = None    # (see simulate)
        if self.full_mode is not None:
            monitor.rank_floor = ENTER_RANK

    def mode_for(self, part: Partition) -> ConstraintMode:
        """The constraint mode of a segment in the layout ``part``."""
        if self.full_mode is not None and is_full(self.run.model, part):
            return self.full_mode
        return self.mode

    def spans(self, samples: Samples) -> list[tuple[float, float]]:
        """(t_start, t_end) of the segments between impacts."""
        if not samples.T:
            return []
        end = samples.T[-1]
        # an impact at or after the last sample (a run stopped there, or between output
        # times) starts no segment
        bounds = [self.run.t0] + [t for t in self.impacts if self.direction * (end - t) > 0] + [end]
        return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]

    def _model_state(self, t: float, y: np.ndarray, part: Partition) -> np.ndarray:
        """y (layout of ``part``) in the model's layout [q, u_ind] (model.states order)."""
        model = self.run.model
        if part.dependent_speeds == model.default_partition.dependent_speeds and \
                not is_full(model, part):
            return np.array(y, dtype=float)
        return remap(model, t, y, self.run.constants, part, model.default_partition)

    def integrate(self, y0: np.ndarray, first_step: float | None) -> tuple[int, str]:
        """Run to tf; returns (status, message) ("" on success)."""
        run, samples, t_eval = self.run, self.samples, self.t_eval
        if t_eval is None or (t_eval.size and t_eval[0] == run.t0):
            samples.add(run.t0, y0)
            self.next_output = 1 if t_eval is not None else 0
        t, y, part, h = run.t0, y0.copy(), samples.part, first_step
        try:
            while True:
                restart = self.segment(t, y, part, h)
                if restart is None:
                    self.flush()
                    return 0, ""
                t, y, part, h = restart
        except StopIntegration as stop:
            stop = self._earlier_stop(stop)
            status, message = stop.status, stop.message
            if self.monitor.active and not message.startswith("singular configuration"):
                status, message = near_singular_note(self.monitor, samples, stop.at, samples.part,
                                                     status, message)
            return status, message
        except _Terminal as stop:
            early = self._earlier_stop(None)
            if early is not None:
                return early.status, early.message
            self.stopped_by = stop.message
            return 0, ""
        except KeyboardInterrupt:
            self.flush(strict=False)
            return -5, f"interrupted at t = {samples.last_t if samples.T else run.t0:.6g}"

    def _earlier_stop(self, stop: StopIntegration | None) -> StopIntegration | None:
        """``stop``, or the failure of a waiting output sample (which comes before it)."""
        try:
            self.flush()
        except StopIntegration as early:
            return early
        return stop

    def segment(self, t: float, y: np.ndarray, part: Partition, h: float | None):
        """One stepper from (t, y); returns None at tf, else (t, y, partition, step) to restart."""
        run, monitor = self.run, self.monitor
        mode = self.mode_for(part)
        full = mode is self.full_mode
        if self._fresh and not full:
            self._check_start(t, y, part)
        self._fresh = False
        stepper = mode.start(run, t, y, part, h)
        locates = hasattr(stepper, "events")       # finds the roots of run.watch itself
        watch = monitor.active and not locates and not full
        t_a, y_a, g_a = t, y, (monitor.gauge(t, y, part) if watch else None)
        # Kane's form: watch the rank by magnitude (to go on in full coordinates, or, with
        # switching off, to stop where the set is stepped over without a sign change)
        rank_watch = monitor.active and not full and (self.full_mode is not None or not locates)
        rank_a = monitor.rank(t, y) if rank_watch else 1.0
        user = self.watcher
        e_a = None
        landed, self._resting = self._resting, None   # an impact that left g' = 0 (or None)
        if user is not None:
            e_a = user.values(t, self._model_state(t, y, part))
            if self._quiet_event is not None:
                # the impact map that started this segment left its condition at its root
                # (up to round-off): that is not a new crossing (a contact's kink: none of the
                # contacts' conditions at their roots, e.g. two corners touching at once)
                for i in np.atleast_1d(self._quiet_event):
                    if abs(e_a[i]) <= 1e-10 * (1.0 + abs(t)):
                        e_a[i] = 0.0
                self._quiet_event = None
        # nothing to look at between steps but the outputs: many steps in one compiled call
        blocks = (hasattr(stepper, "advance") and not (watch or rank_watch or locates or full)
                  and user is None and self.steps is None and self.t_eval is not None
                  and type(mode).accept is ConstraintMode.accept)
        while True:
            # with events, a stepper that outputs by stopping (IDA) steps one internal step at
            # a time, so that its interpolant covers each whole step
            run.next_output = self._next_output_time() if user is None else None
            taken = 1
            try:
                if blocks:
                    message = stepper.advance(self._block(), _inf_if_none(run.next_output,
                                                                          self.direction))
                    taken = stepper.accepted
                else:
                    message = stepper.step()
            except ValueError as exc:       # (BDF's LU of a Jacobian with NaN entries)
                if run.nonfinite is None:
                    raise
                raise StopIntegration(-2, f"{run.nonfinite_message()}; {run.method} stopped at "
                                          f"t = {stepper.t:.6g} ({exc})", (t_a, y_a)) from None
            self.nsteps += taken
            if stepper.status == "failed":
                raise self._failure(stepper, message)
            t_new, y_new = stepper.t, stepper.y
            if not np.isfinite(y_new).all():
                known = run.nonfinite_message()
                raise StopIntegration(-2, f"non-finite state at t = {t_new:.6g}"
                                          + (f" after a {known}" if known else ""), (t_a, y_a))
            dense = _Dense(stepper)
            if rank_watch:
                # the constraint Jacobian loses rank at the step's end or inside it (where it
                # may lose it by an even number of singular values, without a sign change):
                # take the step again in full coordinates
                rank_b = monitor.rank(t_new, y_new)
                if self.full_mode is None:
                    self._stop_if_stepped_over(dense, t_a, y_a, rank_a, t_new, rank_b)
                    rank_a = rank_b
                elif locates and 3 in stepper.events:
                    # IDA stopped where the rank measure fell to the floor: on from there
                    return self.to_full(t_new, y_new, part, t_new - t_a)
                # (IDA interpolates only inside its last internal step: ends only)
                elif rank_b < ENTER_RANK or (min(rank_a, rank_b) < 10 * ENTER_RANK
                                             and not locates
                                             and self._rank_dips(dense, t_a, t_new)):
                    return self.to_full(t_a, y_a, part, t_new - t_a)
                else:
                    rank_a = rank_b
            g_b, event = None, None
            if watch:
                g_b = monitor.gauge(t_new, y_new, part)
                event = monitor.event(dense, part, t_a, g_a, t_new, y_new, g_b)
            elif locates and stepper.events and monitor.active:
                event = monitor.root_event(part, stepper.events, t_a, t_new, y_new)
            e_b, hits = None, []
            if user is not None:
                e_b = user.values(t_new, self._model_state(t_new, y_new, part))
                def state_at(tt, _t_a=t_a, _y_a=y_a, _dense=dense):
                    return self._model_state(tt, _y_a if tt == _t_a else _dense(tt), part)
                hits = user.locate(t_a, t_new, e_a, e_b, state_at)
                if event is not None:        # the dependent-set event first when it is earlier
                    hits = [hit for hit in hits if self.direction * (hit[0] - event.t) < 0]
            if landed is not None:
                self._check_separation(landed, e_b, hits, t_a)
                landed = None
            if hits:
                restart = self.user_events(hits, dense, part, t_new - t_a, (t_a, y_a))
                if restart is not None:
                    return restart
            if event is not None:
                if event.kind == "rank" and self.full_mode is not None:
                    # the whole Jacobian loses rank inside this step: take it again in full
                    # coordinates from its start
                    return self.to_full(t_a, y_a, part, t_new - t_a)
                restart = self.step_events(event, dense, part, t_new - t_a, (t_a, y_a))
                if restart is not None:
                    return restart
            y_kept, again = mode.accept(run, t_new, y_new, part)
            self.record(dense, t_a, t_new)
            self.emit(dense, t_new, part)
            if self.t_eval is None:
                self.samples.add(t_new, y_kept)
            self.bar.set(abs(t_new - run.t0), f"t = {t_new:.4g}, {self.nsteps} steps")
            if stepper.status == "finished":
                return None
            if self.nsteps >= self.chatter.next_check:
                self.chatter.check(self.nsteps, t_new, functools.partial(self._model_state, t_new,
                                                                         y_kept, part))
            if full:
                rank = monitor.rank(t_new, y_kept)
                if full and rank > LEAVE_RANK:
                    return self.to_minimal(t_new, y_kept, stepper.step_size)
            if self.nsteps >= run.max_num_steps:
                raise StopIntegration(-1, f"stopped after max_num_steps = {run.max_num_steps} steps "
                                          f"at t = {t_new:.6g}")
            if again:
                self.restarts += not full
                return t_new, y_kept, part, _restart_step(stepper, single=t_a == t and not full)
            if self.stiffness is not None and not full:
                method = self.stiffness.next_method(stepper, run.nfev, taken)
                if method is not None:   # (to Radau where stiff, back where it was not cheaper)
                    run.method = method
                    return t_new, y_kept, part, stepper.step_size
            t_a, y_a, g_a, e_a = t_new, y_kept, g_b, e_b

    def _block(self) -> int:
        """The accepted steps the next compiled call may take: up to the next stiffness test,
        chattering check or ``max_num_steps``, whichever comes first."""
        k = min(self.run.max_num_steps, self.chatter.next_check) - self.nsteps
        if self.stiffness is not None:
            k = min(k, self.stiffness.steps_to_test())
        return max(1, k)

    def _check_start(self, t: float, y: np.ndarray, part: Partition) -> None:
        """Stop at once (status -2) when x' is not finite at the start of the run or after an
        impact (a state the integrator did not make): no method can step from there (scipy's
        explicit methods chose a NaN first step and never returned, Radau and BDF raised from
        LAPACK); the message names the first non-finite entry of x', its equation and term
        (:mod:`.nonfinite`)."""
        run = self.run
        fun = self._start_rhs.get(part)
        if fun is None:
            fun = self._start_rhs[part] = ode_function(run, part)
        xd = fun(t, y)
        if np.isfinite(xd).all():
            return
        run.nonfinite = NonFinite(t, np.array(y, dtype=float), part, np.array(xd, dtype=float))
        where = "the run" if t == run.t0 else "this segment"
        raise StopIntegration(-2, f"{run.nonfinite_message()}; x' is not finite at the start of "
                                  f"{where}, so no step can be taken", (t, y))

    def _stop_if_stepped_over(self, dense: _Dense, t_a: float, y_a: np.ndarray, rank_a: float,
                              t_b: float, rank_b: float) -> None:
        """Switching off (switch_threshold=0): the constraint Jacobian lost rank inside the
        step and recovered by its end — an even number of singular values through zero, which
        the determinant's sign does not show: stop at the step's start (status -3) rather than
        go on, possibly on another assembly branch."""
        if rank_b < ENTER_RANK or min(rank_a, rank_b) >= 10 * ENTER_RANK:
            return
        if self._rank_dips(dense, t_a, t_b):
            raise StopIntegration(
                -3, f"singular configuration between t = {t_a:.6g} and {t_b:.6g}: the constraint "
                    f"Jacobian loses rank there (rank measure below {ENTER_RANK}) by an even "
                    "number, without a sign change of the dependent determinant; switching is "
                    "disabled (switch_threshold=0), so the run stops at the step's start (the "
                    "default switch_threshold goes on in full coordinates)", at=(t_a, y_a))

    def _rank_dips(self, dense: _Dense, t_a: float, t_b: float, k: int = 4) -> bool:
        """True when the rank measure falls below ENTER_RANK inside the step (k - 1 points)."""
        rank = self.monitor.rank
        times = [t_a + (t_b - t_a) * j / k for j in range(1, k)]
        # (the interpolant at all the points in one call; not remembered: the gauge at the
        # step's end reads the end's matrices next)
        for tt, y in zip(times, dense.many(np.array(times))):
            if rank(tt, y, remember=False) < ENTER_RANK:
                return True
        return False

    def to_full(self, t: float, y: np.ndarray, part: Partition, h: float | None):
        """Restart at (t, y) (layout ``part``) in full coordinates."""
        model = self.run.model
        full = full_partition(model)
        y_full = remap(model, t, y, self.run.constants, part, full)
        y_full = self.full_mode.accept(self.run, t, y_full, full)[0]
        if self.t_eval is None and t != self.samples.last_t:
            self.samples.add(t, y)
        self.samples.switch(t, full)
        return t, y_full, full, None if h is None else max(0.5 * abs(h), 1e-12 * max(1.0, abs(t)))

    def to_minimal(self, t: float, y: np.ndarray, h: float | None):
        """Restart at (t, y) (full coordinates) in Kane's minimal form, best dependent set."""
        run = self.run
        model = run.model
        new = model.choose_partition(y[:model.N], run.constants, t)
        y_new = remap(model, t, y, run.constants, full_partition(model), new)
        self.samples.switch(t, new)
        return t, y_new, new, h

    def _next_output_time(self) -> float | None:
        if self.t_eval is None or self.next_output >= self.t_eval.size:
            return None
        return float(self.t_eval[self.next_output])

    def record(self, dense: _Dense, t_a: float, t_b: float) -> None:
        """Keep the step [t_a, t_b] of the dense output (its states at the recorder's nodes,
        in the current layout) for the trajectory's interpolant."""
        steps = self.steps
        if steps is None or t_b == t_a:
            return
        if hasattr(dense.stepper, "events") and self.run.next_output is not None:
            # IDA stepping to the next output time: its interpolant covers only its last
            # internal step, not the whole step: no steps for this run (trajectory(t) is the
            # samples' Hermite interpolant; without t_eval IDA steps one internal step at a time)
            self.steps = None
            return
        steps.add(t_a, t_b, dense.many(steps.times(t_a, t_b)), len(self.samples.partitions) - 1)

    def emit(self, dense: _Dense, t_end: float, part: Partition, strict: bool = True) -> None:
        """Output samples t_eval[next_output:] up to t_end from the step's dense output.

        The interpolated states are taken now (the interpolant lives for this step only);
        the constraint mode's pass over them (a projection) waits in ``pending`` and runs on
        many steps' samples at once in :meth:`flush` (when many are waiting, and when the
        run ends).  With ``strict=False`` (the run is about to stop) all of them are done
        now, and a sample the mode cannot give ends the samples without an error.
        """
        t_eval = self.t_eval
        if t_eval is None:
            return
        j = self.next_output
        while j < t_eval.size and self.direction * (t_eval[j] - t_end) <= 0:
            j += 1
        times = t_eval[self.next_output:j]
        if not strict:
            self.flush()          # the earlier steps' samples first: a failure there comes first
        if times.size:
            self.pending.append((times, _states(dense, times), part, len(self.samples.partitions) - 1))
            self.pending_rows += times.size
            self.next_output = j
        if not strict:
            self.flush(strict=False)
        elif self.pending_rows >= PENDING_ROWS:
            self.flush()

    def flush(self, strict: bool = True) -> None:
        """The waiting samples through the constraint mode's output, in runs of the same
        layout, into the samples.  A sample the mode cannot give (a projection that fails)
        raises its StopIntegration (``strict``), the samples before it kept, the ones after
        it dropped with the events recorded after it; without ``strict`` the samples just
        end there."""
        pending, self.pending, self.pending_rows = self.pending, [], 0
        k = 0
        while k < len(pending):
            part, pid = pending[k][2], pending[k][3]
            m = k
            while m < len(pending) and pending[m][2] == part and pending[m][3] == pid:
                m += 1
            times = np.concatenate([p[0] for p in pending[k:m]])
            Y = np.concatenate([p[1] for p in pending[k:m]])
            mode = self.mode_for(part)
            try:
                self.samples.add_many(times, mode.output_many(self.run, times, Y, part), pid)
            except StopIntegration:
                for te, y in zip(times, Y):       # one by one: the samples up to the failing one
                    try:
                        ye = mode.output(self.run, te, y, part)
                    except StopIntegration:
                        if not strict:
                            return
                        self.records = [r for r in self.records if self.direction * (r.t - te) <= 0]
                        self.impacts = [t for t in self.impacts if self.direction * (t - te) <= 0]
                        raise
                    self.samples.add_many(np.array([te]), ye[None, :], pid)
            k = m

    def _failure(self, stepper: Any, message: str | None) -> StopIntegration:
        at = (stepper.t, np.array(stepper.y))
        text = f"integration failed at t = {stepper.t:.6g}: {message}"
        if self.run.nonfinite is not None:
            return StopIntegration(-2, f"{self.run.nonfinite_message()}; the step size collapsed at "
                                       f"t = {stepper.t:.6g}", at)
        try:
            text += self.chatter.near_switch(stepper.t, self._model_state(*at, self.samples.part))
        except Exception:       # noqa: BLE001 - only the note is lost
            pass
        return StopIntegration(-1, text, at)
