"""The contacts' switching functions as events of a simulation (issue 37).

A compliant contact's force is smooth except where its law switches: at touchdown and
lift-off (the gap g through 0) and, with Hunt-Crossley damping, where the damping would
make the force pull (1 + 3/2 c δ' through 0, while g < 0).  An integrator stepping across
such a kink loses its order there (and an error-controlled one shrinks its steps to find
it); :func:`contact_events` makes each switching function of each record in
``model.contacts`` an event that ends the segment at its zero crossing, located on the
step's dense output like any event, with no action: the next segment starts there (no
step straddles a kink, explicit and implicit methods alike).  They are listed in
``trajectory.events`` as "<contact>: touchdown", "<contact>: lift-off" and
"<contact>: damping zero"; kinks at one instant (a box landing flat on two corners at once)
make one segment break, recorded under the first contact's name.  A restitution given per
impact (a record with ``impact_states``) makes the touchdown set the impact state s = 1/v₀,
v₀ = -g' the approach speed (the record's ``x_after``), before the next segment starts.

A record's ``max_penetration`` (a sphere's radius) gives one more event: a penetration
deeper than it means the compliant model has left its range, and the run stops there with
status -8 and a message naming the contact.

The contacts' parameters that are symbols of the model (k, n, c, μ) are checked with the
run's constants before it starts: an InputError names the contact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy as sm

from ...errors import InputError
from ...formatting import symbol_name
from ..events import Event, EventRecord
from .dependent_set import remap
from .strategy import StopIntegration

if TYPE_CHECKING:
    from ...compilation import NumericModel

__all__ = ["SegmentBreak", "ContactDepth", "contact_events", "break_segment", "DEPTH_STATUS"]

#: Trajectory.status of a run stopped by a penetration deeper than a contact's limit
DEPTH_STATUS = -8


@dataclass(frozen=True)
class SegmentBreak(Event):
    """An event that ends the segment at its crossing (a kink of a force law), with no
    action.  ``requires``: the name of another event (the same contact's touchdown) whose
    condition must be negative at the crossing for it to count (the damping switch matters
    only in contact)."""

    requires: str | None = None


@dataclass(frozen=True)
class ContactDepth(Event):
    """A penetration deeper than a contact's ``max_penetration``: the run stops (status -8)."""

    contact: str = ""
    limit: float = 0.0


def _check_parameters(model: NumericModel, P: np.ndarray) -> None:
    """The contacts' symbolic parameters with the run's constants (InputError naming the contact)."""
    values = dict(zip(model.constants, np.asarray(P, dtype=float)))
    checks = (("stiffness", 0.0, "the stiffness"), ("exponent", 1.0, "the exponent"),
              ("damping", 0.0, "the damping"), ("friction_coefficient", 0.0, "the friction coefficient"),
              ("static_friction_coefficient", 0.0, "the static friction coefficient"))
    for rec in model.contacts:
        for attr, low, what in checks:
            expr = getattr(rec, attr)
            if expr is None:
                continue
            expr = sm.sympify(expr)
            if expr.is_number:
                continue
            try:
                value = float(expr.xreplace(values))
            except (TypeError, ValueError):
                continue            # depends on more than the constants
            if not np.isfinite(value) or value < low:
                raise InputError(f"contact {rec.name!r}: {what} {expr} = {value:g} with these constants; it "
                                 f"must be >= {low:g}")


def contact_events(model: NumericModel, P: np.ndarray) -> list[Event]:
    """The events of ``model.contacts`` (module docstring); their parameters checked with ``P``."""
    contacts = tuple(getattr(model, "contacts", ()) or ())
    if not contacts:
        return []
    _check_parameters(model, P)
    values = dict(zip(model.constants, np.asarray(P, dtype=float)))
    out: list[Event] = []
    for rec in contacts:
        switching = dict(rec.switching)
        gap = switching.get("contact", rec.gap)
        touchdown = f"{rec.name}: touchdown"
        out.append(SegmentBreak(gap, name=touchdown, direction=-1, action=_impact_action(rec)))
        out.append(SegmentBreak(gap, name=f"{rec.name}: lift-off", direction=1))
        damping = switching.get("damping")
        if damping is not None:
            out.append(SegmentBreak(damping, name=f"{rec.name}: damping zero", requires=touchdown))
        if rec.max_penetration is not None:
            try:
                limit = float(sm.sympify(rec.max_penetration).xreplace(values))
            except (TypeError, ValueError):
                continue
            if limit > 0.0:
                out.append(ContactDepth(rec.gap + limit, name=f"{rec.name}: too deep", direction=-1,
                                        contact=rec.name, limit=limit))
    return out


def _impact_action(rec: Any) -> dict | None:
    """A per-impact restitution's touchdown action: the impact state s = 1/v₀, v₀ = -g' the
    approach speed (0, no damping, for a touchdown without approach)."""
    if not rec.impact_states:
        return None
    rate = sm.sympify(rec.gap_rate)
    return {s: sm.Piecewise((-1 / rate, rate < 0), (0, True)) for s in rec.impact_states}


def impact_states_at_rest(model: NumericModel, x0: Any) -> Any:
    """``x0`` with the contacts' impact states (s = 1/v₀ of the last touchdown) set to 0 (no
    impact yet: undamped until the first touchdown) where a dict does not give them."""
    states = [s for rec in getattr(model, "contacts", ()) or () for s in rec.impact_states]
    if not states or not isinstance(x0, dict):
        return x0
    given = {k if isinstance(k, str) else symbol_name(k) for k in x0}
    missing = {s: 0.0 for s in states if symbol_name(s) not in given and s not in x0}
    return {**x0, **missing} if missing else x0


def with_contact_events(model: NumericModel, events: Any, P: np.ndarray) -> Any:
    """``events`` (None, an Event or a list) with the contacts' events appended."""
    extra = contact_events(model, P)
    if not extra:
        return events
    if events is None:
        return extra
    return ([events] if isinstance(events, Event) else list(events)) + extra


def break_segment(segments: Any, i: int, t_e: float, dense: Any, part: Any, h: float,
                  start: tuple[float, np.ndarray],
                  model_state: Callable[[float, np.ndarray, Any], np.ndarray]) -> tuple | None | bool:
    """Handle the crossing of a contact event ``i`` at ``t_e`` inside the step just taken
    (``segments``: the driver's ``_Segments``; ``model_state(t, y, part)``: y in the model's
    layout): False when the crossing is not a kink (the damping switch while apart: the step
    goes on), else the samples up to ``t_e`` and the event's record, then (t, y, partition,
    step) to restart there, or None at the span's end.  A :class:`ContactDepth` stops the
    run (StopIntegration, status -8)."""
    run, watcher, samples = segments.run, segments.watcher, segments.samples
    event = watcher.events[i]
    y_e = start[1] if t_e == start[0] else dense(t_e)
    if isinstance(event, SegmentBreak) and event.requires is not None:
        x_e = model_state(t_e, y_e, part)
        if watcher.values(t_e, x_e)[watcher.names.index(event.requires)] >= 0.0:
            return False
    if isinstance(event, SegmentBreak) and event.direction:
        t_e, y_e = _past_the_root(segments, i, t_e, y_e, dense, part, model_state)
    mode = segments.mode_for(part)
    segments.record(dense, start[0], t_e)
    if isinstance(event, ContactDepth):
        segments.emit(dense, t_e, part, strict=False)
        if segments.t_eval is None and t_e != samples.last_t:
            samples.add(t_e, y_e)          # the run's samples reach the failure
        raise StopIntegration(
            DEPTH_STATUS, f"contact {event.contact!r} penetrated deeper than {event.limit:g} (the "
                          f"sphere's radius) at t = {t_e:.6g}: the compliant contact means nothing "
                          "there (too soft a stiffness for the load, or too fast an impact)",
            (t_e, y_e))
    segments.emit(dense, t_e, part)
    y_e = mode.output(run, t_e, y_e, part)
    if segments.t_eval is None and t_e != samples.last_t:
        samples.add(t_e, y_e)
    x_e = model_state(t_e, y_e, part)
    x_new = watcher.apply_action(i, t_e, x_e) if event.action is not None else None
    if x_new is not None:            # a per-impact restitution's impact state
        segments.records.append(EventRecord(watcher.names[i], t_e, x_e, x_new.copy()))
        model = run.model
        y_e = x_new if part == model.default_partition else \
            remap(model, t_e, x_new, run.constants, model.default_partition, part)
        if segments.t_eval is None:
            samples.add(t_e, y_e)
    else:
        segments.records.append(EventRecord(watcher.names[i], t_e, x_e))
    if segments.direction * (run.tf - t_e) <= 0:
        return None
    return t_e, y_e, part, max(0.5 * abs(h), 1e-12 * max(1.0, abs(t_e)))


def _past_the_root(segments: Any, i: int, t_e: float, y_e: np.ndarray, dense: Any, part: Any,
                   model_state: Callable) -> tuple[float, np.ndarray]:
    """(t, y) at the located root of contact event ``i``, moved on by a few units in the last
    place until the condition has its new sign (a touchdown: g < 0), so that the next segment
    starts on the far side of the kink: a law that jumps there (a linear damper's d δ' at
    touchdown) would otherwise jump inside the next segment's first step, where an implicit
    method's step size collapses.  The time moves by at most 1e-12 relative, within the step."""
    watcher = segments.watcher
    sign = watcher.events[i].direction
    t_end = float(dense.stepper.t)
    direction = segments.direction
    scale = max(1.0, abs(t_e))
    for k in range(40):
        value = watcher.values(t_e, model_state(t_e, y_e, part))[i]
        if sign * value > 0.0:
            return t_e, y_e
        t_next = t_e + direction * np.spacing(scale) * 2.0 ** k
        if direction * (t_next - t_end) > 0 or abs(t_next - t_e) > 1e-12 * scale:
            break
        t_e, y_e = t_next, dense(t_next)
    return t_e, y_e


def is_contact_event(event: Event) -> bool:
    return isinstance(event, (SegmentBreak, ContactDepth))


def contact_indices(watcher: Any) -> list[int]:
    """The indices of the contacts' segment-breaking events among a run's events: after a
    kink, every one of them at its root (up to round-off) starts the next segment quietly
    (two box corners touching at once would otherwise restart the run at the same time
    again and again)."""
    return [i for i, e in enumerate(watcher.events) if isinstance(e, SegmentBreak)]
