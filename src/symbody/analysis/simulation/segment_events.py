"""The events of :class:`.segments._Segments` (its base class :class:`_SegmentEvents`):
the dependent-set events and the user's zero-crossing events located on each accepted
step's dense output, impacts, accumulating impacts (Zeno) and contacts that separate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...compilation.numeric_model import Partition
from ...errors import SymbodyError
from ..events import EventRecord
from .contact_events import break_segment, contact_indices, is_contact_event
from .dependent_set import SetEvent, remap
from .strategy import StopIntegration

if TYPE_CHECKING:
    from .segments import _Dense


#: events accumulate (Zeno) when an impact event's last intervals shrink geometrically and the
#: predicted accumulation time is this fraction of |tf - t0| (or less) away
ZENO_TIME_FRACTION = 1e-6
#: impacts of one event (intervals between them: one fewer) judged for accumulation
ZENO_IMPACTS = 6


class _Terminal(Exception):
    """Internal: a terminal event stopped the integration (status 0)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _SegmentEvents:
    """The event handling of :class:`.segments._Segments` (which derives from it)."""

    def step_events(self, event: SetEvent, dense: _Dense, part: Partition, h: float,
                    start: tuple[float, np.ndarray]):
        """An event inside the step just taken (from ``start`` = (t, y)): stop (raises),
        restart in a new dependent set (returns (t, y, partition, step)), or None to accept
        the step as it is."""
        run, mode, samples = self.run, self.mode_for(part), self.samples
        t_e = event.t
        y_e = start[1] if t_e == start[0] else dense(t_e)
        if event.kind != "switch":
            self.record(dense, start[0], t_e)
            self.emit(dense, t_e, part, strict=False)
            raise StopIntegration(-3, self.monitor.message(event, t_e, y_e, part))
        self.emit(dense, t_e, part)
        y_e = mode.output(run, t_e, y_e, part)
        new = event.partition or run.model.choose_partition(y_e[:run.model.N], run.constants, t_e)
        if new == part:           # no better choice: carry on with this step
            return None
        self.record(dense, start[0], t_e)
        if self.t_eval is None and t_e != samples.last_t:
            samples.add(t_e, y_e)
        y_new = remap(run.model, t_e, y_e, run.constants, part, new)
        samples.switch(t_e, new)
        if self.direction * (run.tf - t_e) <= 0:
            return None
        return t_e, y_new, new, max(0.5 * abs(h), 1e-12 * max(1.0, abs(t_e)))

    def user_events(self, hits: list, dense: _Dense, part: Partition, h: float,
                    start: tuple[float, np.ndarray]):
        """The user's events in the step just taken, in time order: record each; stop at a
        terminal one (raises _Terminal); restart after an action (returns (t, y, partition,
        step)); None when none of them interrupts the step."""
        run, mode, samples, watcher = self.run, self.mode_for(part), self.samples, self.watcher
        model = run.model
        for t_e, i in hits:
            event = watcher.events[i]
            if is_contact_event(event):       # a kink of a contact's force law: a new segment
                restart = break_segment(self, i, t_e, dense, part, h, start, self._model_state)
                if restart is False:
                    continue
                self._quiet_event = contact_indices(watcher) if restart is not None else None
                return restart
            if not (event.terminal or event.action is not None):
                x_e = self._model_state(t_e, mode.output(run, t_e, start[1] if t_e == start[0]
                                                         else dense(t_e), part), part)
                self.records.append(EventRecord(watcher.names[i], t_e, x_e))
                continue
            y_e = start[1] if t_e == start[0] else dense(t_e)
            self.record(dense, start[0], t_e)
            self.emit(dense, t_e, part)
            y_e = mode.output(run, t_e, y_e, part)
            if self.t_eval is None and t_e != samples.last_t:
                samples.add(t_e, y_e)
            x_e = self._model_state(t_e, y_e, part)
            if event.terminal:
                self.records.append(EventRecord(watcher.names[i], t_e, x_e))
                raise _Terminal(f"stopped at t = {t_e:.6g} by the terminal event {watcher.names[i]!r}")
            try:
                x_new = watcher.apply_action(i, t_e, x_e)
                x_new = model.consistent_state(x_new, run.constants, t_e)
            except SymbodyError as exc:
                raise StopIntegration(-6, f"event {watcher.names[i]!r} at t = {t_e:.6g}: {exc}",
                                      (t_e, y_e)) from exc
            xd_before, xd_after = self._derivative(t_e, x_e), self._derivative(t_e, x_new)
            self.records.append(EventRecord(watcher.names[i], t_e, x_e, x_new.copy(), xd_before,
                                            xd_after))
            rate_before = self._condition_rate(i, t_e, x_e, xd_before)
            rate_after = self._condition_rate(i, t_e, x_new, xd_after)
            if rate_before and rate_after is not None and abs(rate_after) <= 1e-6 * abs(rate_before):
                self._resting = i       # the map stopped the approach: g' = 0 after it
            self.impacts.append(t_e)
            y_new = x_new if part == model.default_partition else \
                remap(model, t_e, x_new, run.constants, model.default_partition, part)
            if self.t_eval is None:
                samples.add(t_e, y_new)
            self._check_accumulation(i, t_e, y_new)
            if self.direction * (run.tf - t_e) <= 0:
                return None
            self._quiet_event = i
            self._fresh = True
            return t_e, y_new, part, max(0.5 * abs(h), 1e-12 * max(1.0, abs(t_e)))
        return None

    def _derivative(self, t: float, x: np.ndarray) -> np.ndarray | None:
        """x' at (t, x) in the model's layout (an impact's knot for the dense output), or None."""
        run = self.run
        try:
            d = np.asarray(run.model.rhs(t, x, run.constants, run.specifieds), dtype=float)
        except Exception:       # noqa: BLE001 - only the interpolant's knot is lost
            return None
        return d if d.shape == x.shape and np.isfinite(d).all() else None

    def _check_accumulation(self, i: int, t_e: float, y_e: np.ndarray) -> None:
        """Stop with status -7 when the impacts of event ``i`` accumulate (Zeno).

        With impact times t_k and intervals d_k = t_k - t_{k-1}: when the last
        ZENO_IMPACTS - 1 intervals shrink (ratios r_k = d_k / d_{k-1} < 1), the impacts
        accumulate at about t* = t_n + d_n r / (1 - r) (a geometric series, r the largest
        recent ratio: a bouncing ball's r is its coefficient of restitution e, and
        t* = t_1 (1 + e) / (1 - e) from rest).  Once t* - t_n is below ZENO_TIME_FRACTION
        |tf - t0| the run stops there: integrating on would step through the condition
        (the state falls through the floor) with ever smaller segments.
        """
        times = self._impact_times.setdefault(i, [])
        times.append(t_e)
        if len(times) < ZENO_IMPACTS:
            return
        d = np.abs(np.diff(times[-ZENO_IMPACTS:]))
        if not (d > 0).all():
            r = 0.0
        else:
            ratios = d[1:] / d[:-1]
            if not (ratios < 1.0).all():
                return
            r = float(ratios.max())
        remaining = d[-1] * r / (1.0 - r)
        run = self.run
        if remaining > ZENO_TIME_FRACTION * abs(run.tf - run.t0):
            return
        t_star = t_e + self.direction * remaining
        name = self.watcher.names[i]
        raise StopIntegration(
            -7, f"events accumulate (Zeno): {name!r} fired {len(times)} times at intervals shrinking "
                f"by a factor {r:.3g}, accumulating at t = {t_star:.8g}; stopped at t = {t_e:.8g} "
                "(no resting contact is modelled: end the run there with a terminal event, or "
                "continue from the resting state in a model with the contact as a constraint)",
            (t_e, y_e))

    def _condition_rate(self, i: int, t: float, x: np.ndarray, xdot: np.ndarray | None) -> float | None:
        """g_i' at (t, x) along x' (a forward difference), or None when x' is unknown."""
        if xdot is None:
            return None
        h = 1e-7 * max(1.0, abs(t))
        try:
            g0 = self.watcher.values(t, x)[i]
            g1 = self.watcher.values(t + self.direction * h, x + self.direction * h * xdot)[i]
        except Exception:       # noqa: BLE001 - no rate, no resting-contact check
            return None
        rate = self.direction * (g1 - g0) / h
        return float(rate) if np.isfinite(rate) else None

    def _check_separation(self, i: int, e_b: np.ndarray, hits: list, t_a: float) -> None:
        """Event ``i``'s impact map at t_a left its condition with g' = 0 (the approach
        stopped: a plastic impact, u -> 0): when the first step then finds the state past
        the condition again (crossed in the event's direction without a located event: the
        ball pulled through the floor by gravity), the contact is resting and the impacts
        accumulate at t_a: status -7 rather than falling through.  (An impact that leaves
        g' != 0 towards the far side, like the simplest walker's swing foot scuffing the
        ground just after heelstrike, is the model's business and goes on.)"""
        d = self.watcher.events[i].direction
        if d == 0 or any(j == i for _, j in hits) or not d * e_b[i] > 0:
            return
        name = self.watcher.names[i]
        raise StopIntegration(
            -7, f"events accumulate (Zeno): after the impact of {name!r} at t = {t_a:.6g} the state "
                "moves through its condition again at once (the impact map does not separate "
                f"it: a resting contact); stopped at t = {t_a:.6g} (no resting contact is modelled)",
            None)
