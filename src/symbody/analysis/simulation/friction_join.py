"""The pieces of an exact-friction run joined into one trajectory in the model's layout.

Each piece (:mod:`.friction_pieces`) ran one pattern's variant model, whose speeds are the
model's in another order (the stuck contacts' dependent speeds last) and whose constraints
are the model's followed by the kept slip rows.  :func:`join_pieces` puts every sample back
in the model's order and keeps the model's own residuals and multipliers.  The friction
forces (stick: the constraint's multipliers, split over dependent rows as the switching
does; slip: -μ F_n v̂) are the values of the contacts' placeholders in
``specified_values``, and :class:`ForceInputs` gives them at any state of the run, so that
the model's own right-hand side with them reproduces the motion: ``trajectory.xdot``, the
outputs and ``trajectory.contacts`` (with the energy balance) are the model's, evaluated
with them.  :func:`stuck_samples` gives each contact's mode at the samples (1.0 stick, 0.0
slip), the output "<name>.stick" behind ``trajectory.contacts[name].mode``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...compilation import NumericModel
from ...compilation.friction_models import FrictionModels
from ..dense_output import StepInterpolant, join_steps
from ..events import EventRecord
from ..trajectory import ModelInfo, RunReport, SampleArrays, Trajectory
from .friction_modes import Pattern, placeholder_slots

__all__ = ["Piece", "ForceInputs", "join_pieces", "stuck_samples"]


@dataclass
class Piece:
    """One piece of the run: its trajectory (in its variant's layout), the variant, the pattern
    and its :class:`~.friction_watch.PieceWatch`."""

    traj: Trajectory
    variant: NumericModel
    pattern: Pattern
    watch: Any


class ForceInputs:
    """r(t, x) of the model (x in its states): the user's inputs and the contacts' friction
    forces, from the piece that ran at t (at a switch: the earlier one)."""

    def __init__(self, model: NumericModel, fm: FrictionModels, pieces: list[Piece]) -> None:
        self.model, self.fm, self.pieces = model, fm, pieces
        self.starts = np.array([p.traj.t[0] if len(p.traj.t) else np.inf for p in pieces])
        self.slots = placeholder_slots(fm)
        self.user = [j for j in range(len(model.specifieds)) if j not in set(self.slots.values())]

    def piece(self, t: float) -> Piece:
        k = int(np.searchsorted(self.starts, t, side="left")) - 1
        return self.pieces[min(max(k, 0), len(self.pieces) - 1)]

    def at_piece(self, piece: Piece, t: float, x_v: np.ndarray, state=None, multipliers=None) -> np.ndarray:
        """The model's inputs at the variant state x_v of ``piece``."""
        w = piece.watch
        R = np.zeros(len(self.model.specifieds))
        if self.user:
            R[self.user] = np.asarray(w.inputs(t, x_v), dtype=float).ravel()
        for i, f in w.forces(t, x_v, state, multipliers).items():
            for j, value in enumerate(f):
                R[self.slots[(i, j)]] = value
        return R

    def inputs_of(self, piece: Piece, T: np.ndarray, X_v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the model's inputs (k, s), all speeds (k, o)) at the variant states X_v of ``piece``."""
        w = piece.watch
        forces, U = w.forces_many(T, X_v)
        R = np.zeros((len(T), len(self.model.specifieds)))
        if self.user:
            R[:, self.user] = w.inputs_many(T, X_v)
        for i, f in forces.items():
            for j in range(f.shape[1]):
                R[:, self.slots[(i, j)]] = f[:, j]
        return R, U

    def many(self, times: np.ndarray, X: np.ndarray) -> np.ndarray:
        """The model's inputs (k, s) at k states X in the model's layout, piece by piece."""
        model = self.model
        times = np.asarray(times, dtype=float)
        X = np.asarray(X, dtype=float)
        R = np.zeros((len(times), len(model.specifieds)))
        which = np.clip(np.searchsorted(self.starts, times, side="left") - 1, 0, len(self.pieces) - 1)
        for k in np.unique(which):
            rows = np.flatnonzero(which == k)
            piece = self.pieces[k]
            w = piece.watch
            Q = X[rows, :model.N]
            if model.m:
                U = model.speeds_many(times[rows], X[rows], w.P[:len(model.constants)])
            else:
                U = X[rows, model.N:model.N + model.o]
            X_v = np.concatenate([Q, U[:, w.to_base[:piece.variant.p]]], axis=1)
            R[rows] = self.inputs_of(piece, times[rows], X_v)[0]
        return R

    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        model = self.model
        piece = self.piece(t)
        w = piece.watch
        q = np.asarray(x[:model.N], dtype=float)
        if model.m:
            u = model.full_speeds(q, x[model.N:model.N + model.p], w.P[:len(model.constants)], t)
        else:
            u = np.asarray(x[model.N:model.N + model.o], dtype=float)
        x_v = np.concatenate([q, u[w.to_base[:piece.variant.p]]])
        return self.at_piece(piece, t, x_v)


def _keep(pieces: list[Piece]) -> list[np.ndarray]:
    """Per piece, the samples kept (a sample shared with the piece before: the earlier's)."""
    out, last = [], None
    for piece in pieces:
        t = piece.traj.t
        keep = np.ones(len(t), dtype=bool)
        if last is not None and len(t) and t[0] == last:
            keep[0] = False
        if len(t):
            last = t[-1]
        out.append(keep)
    return out


def _piece_arrays(model: NumericModel, piece: Piece, keep: np.ndarray, forces: ForceInputs) -> dict:
    """The kept samples of one piece in the model's layout, with the inputs (friction forces)."""
    tr = piece.traj
    T, X_v = tr.t[keep], tr.x[keep]
    R, U = forces.inputs_of(piece, T, X_v)
    Q = tr.q[keep]
    m = model.m
    return dict(t=T, q=Q, u=U, x=np.concatenate([Q, U[:, :model.p]], axis=1),
                hol=tr.holonomic_residuals[keep], vel=tr.velocity_residuals[keep][:, :m],
                mult=None if tr.multipliers is None else tr.multipliers[keep][:, :m], R=R)


def _model_record(piece: Piece, record: EventRecord) -> EventRecord:
    """A user event record of a piece with its states in the model's layout."""
    w = piece.watch
    base = w.fm.base

    def conv(x):
        if x is None:
            return None
        q, u = w.full(record.t, np.asarray(x, dtype=float))
        return np.concatenate([q, u[:base.p]])
    return EventRecord(record.name, record.t, conv(record.x), conv(record.x_after))


def _steps(model: NumericModel, piece: Piece) -> StepInterpolant | None:
    """A piece's steps with the speeds in the model's order (one partition: the model's)."""
    st = piece.traj.steps
    if st is None:
        return None
    N, o = model.N, model.o
    values = np.array(st.values, dtype=float)
    new = values.copy()
    new[:, :, N + piece.watch.to_base] = values[:, :, N:N + o]
    part = (tuple(range(model.n, model.N)), tuple(range(model.p, model.o)))
    return StepInterpolant(st.t_start.copy(), st.t_end.copy(), new, np.zeros(len(st), dtype=np.intp),
                           (part,), positions=st.positions)


def _without_repeats(events: list[EventRecord]) -> list[EventRecord]:
    """``events`` (sorted by time) without an event that repeats one of the same name within
    round-off of its time (1e-12 relative): a lift-off a piece's own contact events locate
    again a few ulps after the one that ended the piece before it."""
    out: list[EventRecord] = []
    for e in events:
        if not any(o.name == e.name and abs(o.t - e.t) <= 1e-12 * max(1.0, abs(e.t))
                   for o in out[-8:]):
            out.append(e)
    return out


def join_pieces(model: NumericModel, fm: FrictionModels, pieces: list[Piece],
                records: list[EventRecord], P: np.ndarray) -> Trajectory:
    """One trajectory of consecutive pieces in the model's layout; ``records``: the switches
    (and the touchdowns and lift-offs that ended pieces), merged with the pieces' events."""
    forces = ForceInputs(model, fm, pieces)
    keeps = _keep(pieces)
    parts = [_piece_arrays(model, piece, keep, forces) for piece, keep in zip(pieces, keeps, strict=True)]
    events = [_model_record(piece, e) for piece in pieces for e in piece.traj.events]
    events = _without_repeats(sorted(events + records, key=lambda e: e.t))

    def cat(key):
        got = [p[key] for p in parts]
        if any(g is None for g in got):
            return None
        return np.concatenate(got)

    first, last = pieces[0].traj, pieces[-1].traj
    segments: list = []
    for piece in pieces:
        for a, b in piece.traj.segments:
            if segments and a == segments[-1][1]:
                segments[-1] = (segments[-1][0], b)
            else:
                segments.append((a, b))
    switches = [e for e in records if e.name.endswith(("stick", "slip", "reversal"))]
    traj = Trajectory(
        SampleArrays(cat("t"), cat("x"), cat("q"), cat("u"), holonomic_residuals=cat("hol"),
                     velocity_residuals=cat("vel"), multipliers=cat("mult") if model.m else None,
                     specified_values=cat("R") if len(model.specifieds) else None),
        ModelInfo(coordinates=model.coordinates, speeds=model.speeds, states=model.states,
                  specifieds=model.specifieds,
                  constants=dict(zip(fm.parameters, (float(v) for v in P)))),
        RunReport(status=last.status, message=_message(last, events, switches),
                  constraints=first.constraints, method=first.method,
                  nfev=sum(p.traj.nfev for p in pieces), nsteps=sum(p.traj.nsteps for p in pieces),
                  wall_time=sum(p.traj.wall_time for p in pieces),
                  partition_changes=[c for p in pieces for c in p.traj.partition_changes],
                  events=events, segments=segments,
                  projection_restarts=sum(p.traj.projection_restarts for p in pieces)))
    steps = [_steps(model, p) for p in pieces]
    if all(s is not None for s in steps):
        traj.steps = join_steps(steps)
    #: how many pieces (constant modes and slip directions) the run took
    traj.friction_pieces = len(pieces)
    return traj


def stuck_samples(fm: FrictionModels, pieces: list[Piece], traj: Trajectory) -> list[np.ndarray]:
    """Per contact, 1.0 where it sticks and 0.0 where it slips, at the joined samples."""
    keeps = _keep(pieces)
    out = []
    for name in fm.names:
        out.append(np.concatenate([np.full(int(keep.sum()), 1.0 if piece.pattern.is_stuck(name) else 0.0)
                                   for piece, keep in zip(pieces, keeps, strict=True)]))
    return out


def _message(last: Trajectory, events: list, switches: list) -> str:
    """The last piece's message, with the number of friction mode switches."""
    base = last.message
    cut = base.find(" (")
    if last.status == 0 and cut > 0 and "trajectory.events" in base[cut:]:
        base = base[:cut]
    n = len(switches)
    note = f"; {n} friction mode switch{'es' if n != 1 else ''}" if n else ""
    if events:
        note += f" ({len(events)} event{'s' if len(events) > 1 else ''}: trajectory.events)"
    return base + note
