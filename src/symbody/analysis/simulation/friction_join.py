"""The pieces of an exact-friction run joined into one trajectory in the model's layout.

Each piece (:mod:`.friction_pieces`) ran one pattern's variant model, whose speeds are the
model's in another order (the stuck contacts' dependent speeds last) and whose constraints
are the model's followed by the kept slip rows.  :func:`join_pieces` puts every sample back
in the model's order, keeps the model's own residuals and multipliers, and records per
contact (:class:`FrictionHistory`, ``trajectory.friction[name]``) the mode, the friction
force (stick: the constraint's multipliers, split over dependent rows as the switching
does; slip: -μ F_n v̂), the normal force and the slip velocity at each sample.  The friction
forces are also the values of the contacts' placeholders in ``specified_values``, so that
the model's own right-hand side with them reproduces the motion (``trajectory.xdot``, the
outputs).
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

__all__ = ["Piece", "FrictionHistory", "join_pieces"]


@dataclass
class Piece:
    """One piece of the run: its trajectory (in its variant's layout), the variant, the pattern
    and its :class:`~.friction_pieces.PieceWatch`."""

    traj: Trajectory
    variant: NumericModel
    pattern: Pattern
    watch: Any


@dataclass(frozen=True)
class FrictionHistory:
    """One exact-friction contact along a trajectory (k samples, j active tangents):
    ``mode`` (k,) "stick" or "slip"; ``force`` (k, j) the friction force on shape b along the
    tangents (the placeholders' values); ``normal`` (k,) F_n; ``slip`` (k, j) the slip
    velocity; ``switches`` [(t, "slip -> stick"), ...]."""

    mode: np.ndarray
    force: np.ndarray
    normal: np.ndarray
    slip: np.ndarray
    switches: tuple

    @property
    def stuck(self) -> np.ndarray:
        """(k,) True where the contact sticks."""
        return self.mode == "stick"


def _piece_arrays(model: NumericModel, fm: FrictionModels, piece: Piece, P: np.ndarray,
                  keep: np.ndarray) -> dict:
    """The kept samples of one piece in the model's layout, with the contacts' values."""
    tr, w = piece.traj, piece.watch
    T = tr.t[keep]
    k = len(T)
    U = np.empty((k, model.o))
    U[:, w.to_base] = tr.u[keep]
    Q = tr.q[keep]
    X_v = tr.x[keep]
    nc = len(fm.contacts)
    forces = [np.zeros((k, c.tangents)) for c in fm.contacts]
    normal = np.zeros((k, nc))
    slip = [np.zeros((k, c.tangents)) for c in fm.contacts]
    lam = tr.multipliers[keep] if tr.multipliers is not None else None
    for n in range(k):
        s = fm.evaluate(T[n], Q[n], U[n], P)
        normal[n] = s.normal
        for i in range(nc):
            slip[i][n] = s.slip[s.rows[i]]
        if w.stuck:
            mult = lam[n] if lam is not None else None
            for i, f in w.stick_forces(T[n], X_v[n], s, mult).items():
                forces[i][n] = f
        for i in w.slipping:
            v = s.slip[s.rows[i]]
            speed = float(np.linalg.norm(v))
            d = v / speed if speed > 0.0 and len(v) > 1 else w.directions[i]
            forces[i][n] = -s.kinetic[i] * s.normal[i] * d
    R = np.zeros((k, len(model.specifieds)))
    slots = placeholder_slots(fm)
    user = [j for j in range(len(model.specifieds)) if j not in set(slots.values())]
    if user and tr.specified_values is not None:
        R[:, user] = tr.specified_values[keep]
    for (i, j), col in slots.items():
        R[:, col] = forces[i][:, j]
    m = model.m
    mult = None if tr.multipliers is None else tr.multipliers[keep][:, :m]
    return dict(t=T, q=Q, u=U, x=np.concatenate([Q, U[:, :model.p]], axis=1),
                hol=tr.holonomic_residuals[keep], vel=tr.velocity_residuals[keep][:, :m],
                mult=mult, R=R, forces=forces, normal=normal, slip=slip,
                mode=[np.full(k, "stick" if w.pattern.is_stuck(nm) else "slip", dtype=object)
                      for nm in fm.names])


def _base_record(piece: Piece, record: EventRecord) -> EventRecord:
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


def join_pieces(model: NumericModel, fm: FrictionModels, pieces: list[Piece],
                switches: list[EventRecord], P: np.ndarray) -> Trajectory:
    """One trajectory of consecutive pieces (a sample shared by two pieces kept once: the
    earlier piece's, before the switch)."""
    parts = []
    events: list[EventRecord] = []
    for n, piece in enumerate(pieces):
        keep = np.ones(len(piece.traj.t), dtype=bool)
        if n and len(piece.traj.t) and parts and len(parts[-1]["t"]) and \
                piece.traj.t[0] == parts[-1]["t"][-1]:
            keep[0] = False
        parts.append(_piece_arrays(model, fm, piece, P, keep))
        events += [_base_record(piece, e) for e in piece.traj.events]
    events = sorted(events + switches, key=lambda e: e.t)

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
    mult = cat("mult")
    traj = Trajectory(
        SampleArrays(cat("t"), cat("x"), cat("q"), cat("u"), holonomic_residuals=cat("hol"),
                     velocity_residuals=cat("vel"), multipliers=mult if model.m else None,
                     specified_values=cat("R") if len(model.specifieds) else None),
        ModelInfo(coordinates=model.coordinates, speeds=model.speeds, states=model.states,
                  specifieds=model.specifieds,
                  constants=dict(zip(model.constants, (float(v) for v in P)))),
        RunReport(status=last.status, message=_message(last, events, switches), constraints=first.constraints,
                  method=first.method, nfev=sum(p.traj.nfev for p in pieces),
                  nsteps=sum(p.traj.nsteps for p in pieces),
                  wall_time=sum(p.traj.wall_time for p in pieces),
                  partition_changes=[c for p in pieces for c in p.traj.partition_changes],
                  events=events, segments=segments,
                  projection_restarts=sum(p.traj.projection_restarts for p in pieces)))
    steps = [_steps(model, p) for p in pieces]
    if all(s is not None for s in steps):
        traj.steps = join_steps(steps)
    friction = {}
    for i, name in enumerate(fm.names):
        sw = tuple((e.t, e.name.split(": ", 1)[1]) for e in switches if e.name.startswith(f"{name}: "))
        friction[name] = FrictionHistory(
            mode=np.concatenate([p["mode"][i] for p in parts]),
            force=np.concatenate([p["forces"][i] for p in parts]),
            normal=np.concatenate([p["normal"][:, i] for p in parts]),
            slip=np.concatenate([p["slip"][i] for p in parts]), switches=sw)
    #: per exact-friction contact: :class:`FrictionHistory` (mode, force, normal, slip)
    traj.friction = friction
    traj.friction_pieces = len(pieces)
    return traj


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
