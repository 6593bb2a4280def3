"""Simulating a model with exact Coulomb friction: pieces of constant mode, joined (issue 37).

``simulate`` on a model whose equations hold contacts with ``friction_mode="exact"`` hands
its arguments to :func:`simulate_modes`: the run is a sequence of pieces, each an ordinary
run of the compiled variant of one pattern of stick and slip
(:mod:`symbody.compilation.friction_models`), ended by the switching events of
:mod:`.friction_modes` (terminal events of the piece); at each one the next pattern is
chosen and the next piece starts from the state there, with the stuck contacts' slip
velocities exactly zero (their dependent speeds).  Stuck contacts are still by construction:
their slip speed is solved from the constraint at every evaluation, not integrated.

The pieces are joined into one :class:`~symbody.analysis.trajectory.Trajectory` in the
model's own layout (:mod:`.friction_join`), with ``trajectory.friction[name]`` per contact
(mode, friction force, normal force, slip velocity at the samples), the friction forces as
the values of their placeholders in ``specified_values``, and the mode switches in
``trajectory.events`` (``"<name>: slip -> stick"`` / ``"<name>: stick -> slip"``).
"""

from __future__ import annotations

import contextvars
import dataclasses
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ...compat.sympy import TIME
from ...compilation import NumericModel, make_function
from ...compilation.friction_models import FrictionModels, friction_models
from ...errors import InputError, SimulationError, SimulationFailedWarning
from ..contact_samples import attach_contacts
from ..events import Event, EventRecord
from ..initial_state import InitialStateWarning
from ..inputs import ExpressionInputs, specified_inputs
from ..outputs import attach_outputs
from ..trajectory import Trajectory
from .contact_events import contact_events
from .friction_join import ForceInputs, Piece, join_pieces, stuck_samples
from .friction_modes import STOP_FRACTION, ContactProblem, Pattern, select_pattern
from .friction_watch import PieceWatch
from .options import Solver, time_span

__all__ = ["simulate_modes", "inside", "UserInputs", "MAX_PIECES"]

#: at most this many pieces (mode patterns and slip-direction updates) in one run
MAX_PIECES = 100_000
#: this many pieces in a row that advance time by less than 1e-12 (relative) stop the run:
#: the modes switch back and forth without the motion moving on (status -7)
STALL_PIECES = 50

_INSIDE: contextvars.ContextVar[bool] = contextvars.ContextVar("symbody_friction_piece", default=False)


def inside() -> bool:
    """True while :func:`simulate_modes` runs a piece (simulate then runs it as it is)."""
    return _INSIDE.get()


class UserInputs:
    """The model's specified inputs other than the friction placeholders, as the user gave
    them to ``simulate``, for each variant (whose specifieds are those inputs, in order)."""

    def __init__(self, model: NumericModel, fm: FrictionModels, specifieds: Any) -> None:
        placeholders = {lam for c in fm.contacts for lam in (*c.placeholders, *c.inactive)}
        self.symbols = [s for s in model.specifieds if s not in placeholders]
        self.model, self.fm, self.given = model, fm, specifieds
        if isinstance(specifieds, Mapping):
            for key in specifieds:
                if key in placeholders or any(str(key) == str(p) or str(key) == p.name for p in placeholders
                                              if hasattr(p, "name")):
                    raise InputError(f"specifieds: {key} is an exact friction placeholder; the "
                                     "simulation sets it (stick: the constraint's multiplier, slip: "
                                     "-μ F_n v̂), so it takes no value")
        self._functions: dict[int, Callable | None] = {}

    def for_variant(self, variant: NumericModel, P_v: np.ndarray) -> Any:
        """The ``specifieds`` argument for a run of ``variant``."""
        given = self.given
        if not self.symbols or given is None:
            return given
        if not callable(given) or isinstance(given, Mapping):
            found = specified_inputs(variant, given, P_v)
            if isinstance(found, ExpressionInputs):
                # (a piece's steps stay in Python with inputs that vary in time, as before the
                # compiled steps took expressions: the watch that locates its mode switches
                # evaluates them in Python, and in C the inputs could differ by round-off,
                # so that a switch just located is found again)
                return found.__call__
            return given
        if callable(given) and not isinstance(given, Mapping):
            base, to_base = self.model, [list(self.model.speeds).index(s) for s in variant.speeds]

            def r(t, x):
                q = x[:variant.N]
                u_v = variant.full_speeds(q, x[variant.N:variant.N + variant.p], P_v, t) \
                    if variant.m else x[variant.N:]
                u = np.empty(base.o)
                u[to_base] = u_v
                return given(t, np.concatenate([q, u[:base.p]]))
            return r
        return given

    def function(self, variant: NumericModel, P_v: np.ndarray, span: tuple, x_v: np.ndarray
                 ) -> Callable | None:
        """r_user(t, x_v) for ``variant`` (None without inputs)."""
        key = id(variant)
        if key not in self._functions:
            self._functions[key] = specified_inputs(variant, self.for_variant(variant, P_v), P_v, span, x_v)
        return self._functions[key]



def _record_contact_event(records: list, record: EventRecord, prefix: str) -> None:
    """Append a touchdown or lift-off ``record``, unless the same contact (names starting with
    ``prefix``) already has events at that instant (within round-off of the time: 1e-12
    relative, as a stalled piece counts it).  Then it is the same instant seen twice: a
    repeat of the same event is dropped (a lift-off located again a few ulps after the first,
    where the gap left the contact at -1e-19), and a first one goes before that contact's mode
    changes, at their time (a stick broken a few ulps before the normal force reached 0)."""
    t = record.t
    near = [k for k, r in enumerate(records)
            if r.name.startswith(prefix) and abs(r.t - t) <= 1e-12 * max(1.0, abs(t))]
    if not near:
        records.append(record)
    elif not any(records[k].name == record.name for k in near):
        first = records[near[0]]
        records.insert(near[0], EventRecord(record.name, first.t, first.x))

def simulate_modes(simulate: Callable[..., Trajectory], model: NumericModel, t_span: Any, x0: Any,
                   p: Any, options: dict) -> Trajectory:
    """``simulate(model, t_span, x0, p, **options)`` for a model with exact friction: piece by
    piece (see the module doc), joined.  ``p`` gives the model's constants and the symbols
    only the contacts use (μ, μ_s: ``friction_models(model).parameters``)."""
    t0, tf = time_span(t_span)
    solver = options.get("solver") or Solver()
    fm = friction_models(model)
    P = fm.parameters_array(p)
    P_model = P[:len(model.constants)]
    x = model.state_array(x0)
    if model.M or model.m:
        x = model.consistent_state(x, P_model, t0)
    inputs = UserInputs(model, fm, options.get("specifieds"))
    user_events = options.get("events")
    user_events = [] if user_events is None else (
        [user_events] if isinstance(user_events, Event) else list(user_events))
    breaks = _compiled_breaks(model, contact_events(model, P_model), P_model)   # the contacts' kinks
    t_eval = options.get("t_eval")
    t_eval = None if t_eval is None else np.atleast_1d(np.asarray(t_eval, dtype=float))
    direction = 1.0 if tf >= t0 else -1.0
    t, q, u = t0, x[:model.N], _all_speeds(model, x, P_model, t0)
    pattern = _start_pattern(fm, inputs, t, q, u, P)
    pieces: list[Piece] = []
    records: list[EventRecord] = []
    stalled = 0
    token = _INSIDE.set(True)
    try:
        for _ in range(MAX_PIECES):
            variant = fm.variant(pattern.key)
            P_v = fm.constants_array(P, pattern.direction_map())
            x_v = np.concatenate([q, u[[list(model.speeds).index(s) for s in variant.speeds[:variant.p]]]])
            r_user = inputs.function(variant, P_v, (t, tf), x_v)
            start = _problem(fm, inputs, t, q, u, P)
            slack = {i: start.force_slack(i) for i, n in enumerate(fm.names) if pattern.is_stuck(n)}
            watch = PieceWatch(fm, variant, pattern, P, P_v, r_user, slack, start)
            opts = {k: v for k, v in options.items() if k not in ("outputs", "solver")}
            # (the pieces' own events first: at a tie with a segment break they end the piece)
            opts.update(solver=dataclasses.replace(solver, raise_on_failure=False),
                        events=user_events + watch.events() + watch.breaks(*breaks),
                        specifieds=inputs.for_variant(variant, P_v))
            if t_eval is not None:
                opts["t_eval"] = t_eval[(t_eval - t) * direction > 0] if pieces else t_eval
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SimulationFailedWarning)
                warnings.simplefilter("ignore", InitialStateWarning)
                traj = simulate(variant, (t, tf), x_v, P_v, **opts)
            pieces.append(Piece(traj, variant, pattern, watch))
            last = traj.events[-1] if traj.events else None
            if traj.status != 0 or last is None or not watch.owns(last.name):
                break
            traj.events = traj.events[:-1]
            t_new = float(last.t)
            stalled = stalled + 1 if abs(t_new - t) <= 1e-12 * max(1.0, abs(t)) else 0
            t = t_new
            q, u = watch.full(t, np.asarray(last.x, dtype=float))
            kind, i = watch.kind(last.name)
            if stalled >= STALL_PIECES:
                traj.status = -7
                traj.message = (f"exact friction: the contact modes switched {stalled} times at t = "
                                f"{t:.10g} without the motion moving on (last: {fm.names[i]} {kind}); "
                                "stopped")
                break
            new, stopped = _next_pattern(fm, inputs, watch, last.name, t, q, u, P)
            x_base = np.concatenate([q, u[:model.p]])
            if kind in ("touchdown", "liftoff"):
                label = "touchdown" if kind == "touchdown" else "lift-off"
                _record_contact_event(records, EventRecord(f"{fm.names[i]}: {label}", t, x_base),
                                      f"{fm.names[i]}: ")
            for name, change in _changes(fm.names, pattern, new, (kind, i), stopped):
                records.append(EventRecord(f"{name}: {change}", t, x_base))
            pattern = new
    finally:
        _INSIDE.reset(token)
    joined = join_pieces(model, fm, pieces, records, P)
    forces = ForceInputs(model, fm, pieces)
    attach_outputs(joined, model, P_model, forces, options.get("outputs"))
    attach_contacts(joined, model, P_model, forces)
    for name, stuck in zip(fm.names, stuck_samples(fm, pieces, joined), strict=True):
        joined.outputs[f"{name}.stick"] = stuck
    if joined.status != 0:
        if solver.raise_on_failure:
            raise SimulationError(joined.message, trajectory=joined)
        warnings.warn(SimulationFailedWarning(f"simulate failed (status {joined.status}): "
                                              f"{joined.message}", joined.status), stacklevel=3)
    return joined


def _compiled_breaks(model: NumericModel, events: list, P: np.ndarray) -> tuple[list, Callable | None]:
    """(the contacts' segment-break events, their conditions as one compiled function
    values(t, q, u) of the model's constants P): compiled once, not at every piece."""
    if not events:
        return [], None
    f = make_function([TIME, list(model.coordinates), list(model.speeds), list(model.constants)],
                      [e.condition for e in events], name="contact switching functions")
    return events, lambda t, q, u: f(t, q, u, P)


def _all_speeds(model: NumericModel, x: np.ndarray, P: np.ndarray, t: float) -> np.ndarray:
    if not model.m:
        return np.array(x[model.N:model.N + model.o], dtype=float)
    return model.full_speeds(x[:model.N], x[model.N:model.N + model.p], P, t)


def _problem(fm: FrictionModels, inputs: UserInputs, t: float, q: np.ndarray, u: np.ndarray,
             P: np.ndarray, watch: PieceWatch | None = None) -> ContactProblem:
    """The contact problem at (t, q, u); the user's inputs there through the piece's variant
    (at the start: the variant with every contact slipping)."""
    r_user = None
    if inputs.symbols:
        if watch is not None:
            variant, P_v = watch.variant, watch.P_v
        else:
            variant, P_v = fm.variant(((), ())), fm.constants_array(P, {})
        idx = [list(fm.base.speeds).index(s) for s in variant.speeds[:variant.p]]
        x_v = np.concatenate([q, u[idx]])
        f = inputs.function(variant, P_v, None, None)
        r_user = None if f is None else f(t, x_v)
    return ContactProblem(fm, t, q, u, P, r_user)


def _candidates(problem: ContactProblem, watch: PieceWatch | None, names) -> list[int]:
    """Slipping, touching contacts whose slip speed is zero (below STOP_FRACTION of its scale)."""
    out = []
    for i in range(len(names)):
        speed = float(np.linalg.norm(problem.slip(i)))
        scale = problem.speed_scale(i)
        if watch is not None:
            scale = max(scale, watch.peak[i])
        if speed <= STOP_FRACTION * scale + 1e-14 and problem.touching(i):
            out.append(i)
    return out


def _start_pattern(fm, inputs, t, q, u, P) -> Pattern:
    problem = _problem(fm, inputs, t, q, u, P)
    return select_pattern(problem, [], _candidates(problem, None, fm.names), {})[0]


def _next_pattern(fm, inputs, watch: PieceWatch, name: str, t, q, u, P) -> tuple[Pattern, bool]:
    """(the pattern after the event ``name`` of ``watch``'s piece at (t, q, u), whether the
    event was a stop of the slip it names: False for a slip direction that turned or a
    contact that landed slipping)."""
    kind, i = watch.kind(name)
    pattern = watch.pattern
    problem = _problem(fm, inputs, t, q, u, P, watch)
    if kind == "touchdown":
        problem.landed.add(i)
    elif kind == "liftoff":
        problem.lifted.add(i)
    names = fm.names
    candidates = [j for j in _candidates(problem, watch, names) if not pattern.is_stuck(names[j])]
    if kind in ("slip", "touchdown") and i not in candidates:
        # the slip direction turned (two tangents) or the contact landed slipping: same modes,
        # the slip directions from the velocities now
        dirs = pattern.direction_map()
        v = problem.slip(i)
        if np.linalg.norm(v) > 0.0:
            dirs[names[i]] = v / np.linalg.norm(v)
        return Pattern(pattern.stuck, pattern.dependent, tuple((n, tuple(map(float, dirs[n])))
                                                               for n, _ in pattern.directions)), False
    stuck = [j for j in range(len(names)) if pattern.is_stuck(names[j])]
    return select_pattern(problem, stuck, candidates, pattern.direction_map(), pattern)[0], True


def _changes(names, old: Pattern, new: Pattern, event: tuple[str, int], stopped: bool):
    """(name, "stick -> slip" / "slip -> stick" / "reversal") of the contacts whose mode
    changed; "reversal": the slip that stopped at ``event`` (``stopped``) could not stick and
    goes on (along the direction opposite to the force it would have needed)."""
    for n in names:
        a, b = old.is_stuck(n), new.is_stuck(n)
        if a != b:
            yield n, f"{'stick' if a else 'slip'} -> {'stick' if b else 'slip'}"
        elif not a and stopped and event[0] == "slip" and names[event[1]] == n:
            yield n, "reversal"
