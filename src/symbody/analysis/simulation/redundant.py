"""Simulating equations with redundant configuration constraints (the driver's side).

``simulate`` on a :class:`~symbody.compilation.redundant.RedundantModel` first calls
:func:`prepare`: the model assembles the initial configuration with all k equations
(least squares), refuses an unassemblable or over-constrained one, names the redundant
equations (:class:`~symbody.RedundantConstraintWarning`) and picks the independent subset
the run uses.  The run itself is an ordinary run of that square model.  Afterwards
:func:`annotate` evaluates all k equations at the samples and adds to the trajectory:

- ``redundant_constraints``: the names of the equations left out (tuple);
- ``redundancy``: the :class:`~symbody.compilation.redundant.RedundancyReport`;
- ``constraint_residuals``: f_h of all k equations at the samples (s, k), and
  ``constraint_rank``: the rank of ∂f_h/∂q at each sample (s,) — the watch along the run;
- ``multipliers``: for all k_v velocity-constraint rows, the minimum-norm ones (the split of
  the constraint forces among redundant equations is not unique; B_aᵀ λ is);
- a note in ``message`` naming the redundant equations, the largest residual of the
  redundant equations along the run and the rank's range.  A residual above 1e-6 warns.

Re-selection along the run (:func:`simulate_pieces`): a terminal event watches
g = σ_min(∂f_kept/∂q_dep) − 0.05 σ_M(∂f_h/∂q_dep) (all k rows; both continuous in q), the
kept equations' conditioning against the best the whole set offers.  Where it falls
through zero the run stops, the equations are chosen again at that state (without a new
warning) and the run continues from there with the model of the new choice; the pieces
are joined into one trajectory, ``trajectory.constraint_reselections`` lists
(t, kept names).  Where no better choice exists (the whole set loses rank: a singular
position) the run continues without the watch, and the driver's full-coordinate spans take
over as for any model.
"""

from __future__ import annotations

import contextvars
import dataclasses
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ...compilation.redundant import (
    RANK_TOL,
    RedundancyReport,
    RedundantConstraintWarning,
    RedundantModel,
    minimum_norm_multipliers,
)
from ...errors import SimulationError, SimulationFailedWarning, SymbodyError
from ..dense_output import JoinedProjection, join_steps
from ..events import Event
from ..initial_state import InitialStateWarning
from ..trajectory import ModelInfo, RunReport, SampleArrays, Trajectory
from .options import Solver, time_span

__all__ = ["prepare", "annotate", "simulate_pieces", "inside", "DRIFT_WARNING",
           "RESELECT_EVENT", "RESELECT_FACTOR"]

#: a redundant equation's residual above this along the run warns
DRIFT_WARNING = 1e-6
#: the kept equations are chosen again where their conditioning falls below this fraction
#: of the whole set's
RESELECT_FACTOR = 0.05
#: the internal terminal event's name
RESELECT_EVENT = "redundant constraints: the kept equations degrade"
#: at most this many re-selections in one run
MAX_RESELECTIONS = 50

_INSIDE: contextvars.ContextVar[bool] = contextvars.ContextVar("symbody_redundant_piece",
                                                              default=False)


def inside() -> bool:
    """True while :func:`simulate_pieces` runs a piece (simulate then runs it as it is)."""
    return _INSIDE.get()


def degrade_condition(model: RedundantModel) -> Callable[[float, np.ndarray, np.ndarray], float]:
    """g(t, x, p) = σ_min(J_kept,dep) − RESELECT_FACTOR σ_M(J_dep) (see the module doc)."""
    rows = list(model.constraint_rows)
    n, N, M = model.n, model.N, model.M

    def g(t: float, x: np.ndarray, p: np.ndarray) -> float:
        Jd = model.constraints(x[:N], p, t)[1][:, n:N]
        if not np.all(np.isfinite(Jd)):
            return 1.0
        full = np.linalg.svd(Jd, compute_uv=False)
        kept = np.linalg.svd(Jd[rows], compute_uv=False)
        return float(kept[-1] - RESELECT_FACTOR * full[M - 1])
    return g


def simulate_pieces(simulate: Callable[..., Trajectory], model: RedundantModel, t_span: Any,
                    x0: Any, p: Any, options: dict) -> Trajectory:
    """``simulate(model, t_span, x0, p, **options)`` for a model with redundant equations:
    assembled and named (:func:`prepare`), run piece by piece with the kept equations chosen
    again where they degrade, annotated (:func:`annotate`)."""
    t0, tf = time_span(t_span)
    solver = options.get("solver") or Solver()
    P = model.constants_array(p)
    square, x, report = prepare(model, t0, x0, p)
    user_events = options.get("events")
    user_events = [] if user_events is None else (
        [user_events] if isinstance(user_events, Event) else list(user_events))
    t_eval = options.get("t_eval")
    t_eval = None if t_eval is None else np.atleast_1d(np.asarray(t_eval, dtype=float))
    direction = 1.0 if tf >= t0 else -1.0
    pieces: list[tuple[Trajectory, RedundancyReport]] = []
    reselections: list[tuple[float, tuple[str, ...]]] = []
    watch, start = True, t0
    token = _INSIDE.set(True)
    try:
        for _ in range(MAX_RESELECTIONS + 1):
            opts = dict(options, solver=dataclasses.replace(solver, raise_on_failure=False))
            if watch:
                opts["events"] = user_events + [Event(degrade_condition(square), name=RESELECT_EVENT,
                                                      direction=-1, terminal=True)]
            if t_eval is not None and pieces:
                opts["t_eval"] = t_eval[(t_eval - start) * direction > 0]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SimulationFailedWarning)
                traj = simulate(square, (start, tf), x, p, **opts)
            annotate(traj, report, square, P, warn=False)
            pieces.append((traj, report))
            last = traj.events[-1] if traj.events else None
            if traj.status != 0 or last is None or last.name != RESELECT_EVENT:
                break
            traj.events = traj.events[:-1]
            start, x = float(last.t), np.array(last.x, dtype=float)
            try:
                new, x, new_report = square.assemble(x, P, start, warn=False)
            except SymbodyError as exc:     # the part already computed is kept
                traj.status = -4
                traj.message = (f"the kept configuration constraints degrade at t = {start:.6g} "
                                f"and no other choice works there: {exc}" + _note(traj, report))
                break
            if new.constraint_rows == square.constraint_rows:
                watch = False         # no better choice here: go on without the watch
            else:
                reselections.append((start, new_report.kept))
            square, report = new, new_report
    finally:
        _INSIDE.reset(token)
    traj = pieces[0][0] if len(pieces) == 1 else _join([t for t, _ in pieces])
    if len(pieces) > 1:
        _annotate_joined(traj, pieces, reselections)
    traj.constraint_reselections = reselections
    _drift_warning(traj)
    if traj.status != 0:
        if solver.raise_on_failure:
            raise SimulationError(traj.message, trajectory=traj)
        warnings.warn(SimulationFailedWarning(f"simulate failed (status {traj.status}): "
                                              f"{traj.message}", traj.status), stacklevel=3)
    return traj


def _join(trajs: list[Trajectory]) -> Trajectory:
    """One trajectory of consecutive pieces (a sample shared by two pieces kept once)."""
    keep = [np.ones(len(trajs[0].t), dtype=bool)]
    for prev, cur in zip(trajs[:-1], trajs[1:], strict=True):
        k = np.ones(len(cur.t), dtype=bool)
        if len(cur.t) and len(prev.t) and cur.t[0] == prev.t[-1]:
            k[0] = False
        keep.append(k)

    def cat(get):
        parts = [get(tr) for tr in trajs]
        if any(a is None for a in parts):
            return None
        return np.concatenate([np.asarray(a)[k] for a, k in zip(parts, keep, strict=True)])

    first, last = trajs[0], trajs[-1]
    segments = list(first.segments)
    for tr in trajs[1:]:
        if segments and tr.segments:
            segments[-1] = (segments[-1][0], tr.segments[0][1])
            segments += tr.segments[1:]
        else:
            segments += tr.segments
    outputs = {name: cat(lambda tr, name=name: tr.outputs.get(name)) for name in first.outputs}
    joined = Trajectory(
        SampleArrays(
            cat(lambda tr: tr.t), cat(lambda tr: tr.x), cat(lambda tr: tr.q),
            cat(lambda tr: tr.u), holonomic_residuals=cat(lambda tr: tr.holonomic_residuals),
            velocity_residuals=cat(lambda tr: tr.velocity_residuals),
            multipliers=cat(lambda tr: tr.multipliers),
            specified_values=cat(lambda tr: tr.specified_values), xdot=cat(lambda tr: tr.xdot),
            outputs={k: v for k, v in outputs.items() if v is not None}),
        ModelInfo(coordinates=first.coordinates, speeds=first.speeds, constants=first.constants,
                  states=first.states, specifieds=first.specifieds),
        RunReport(status=last.status, message=last.message, constraints=first.constraints,
                  method=first.method, nfev=sum(tr.nfev for tr in trajs),
                  nsteps=sum(tr.nsteps for tr in trajs),
                  wall_time=sum(tr.wall_time for tr in trajs),
                  partition_changes=[c for tr in trajs for c in tr.partition_changes],
                  events=[e for tr in trajs for e in tr.events], segments=segments))
    for name in ("constraint_residuals", "constraint_rank", "redundant_residual"):
        setattr(joined, name, cat(lambda tr, name=name: getattr(tr, name)))
    if all(tr.steps is not None for tr in trajs):
        # trajectory(t): each piece's steps, put on the constraints by its own model
        joined.steps = join_steps([tr.steps for tr in trajs])
        joined.projection = JoinedProjection([tr.projection for tr in trajs],
                                             [len(tr.steps.partitions) for tr in trajs])
    joined.projection_restarts = sum(tr.projection_restarts for tr in trajs)
    return joined


def _annotate_joined(traj: Trajectory, pieces: list, reselections: list) -> None:
    first_report = pieces[0][1]
    traj.redundant_constraints = first_report.redundant
    traj.redundancy = first_report
    base = pieces[-1][0].message
    cut = base.find("; redundant configuration constraints ")
    base = base[:cut] if cut >= 0 else base
    changes = "; ".join(f"t = {t:.6g}: {', '.join(kept)}" for t, kept in reselections)
    traj.message = (base + _note(traj, first_report)
                    + (f"; the kept equations were chosen again where they degraded ({changes})"
                       if changes else ""))


def prepare(model: RedundantModel, t0: float, x0: Any,
            p: Any) -> tuple[RedundantModel, np.ndarray, RedundancyReport]:
    """(the model of the kept equations, the state with the assembled q_dep, the report)."""
    P = model.constants_array(p)
    x = model.state_array(x0)
    square, assembled, report = model.assemble(x, P, t0)
    n, N = model.n, model.N
    notes = [f"{model.coordinates[i]} = {x[i]:.10g} (used {assembled[i]:.10g})"
             for i in range(n, N) if abs(x[i] - assembled[i]) > 1e-8 * (1.0 + abs(assembled[i]))]
    if notes:
        warnings.warn("x0 gave dependent coordinates that miss the configuration constraints; "
                      "solved by least squares with "
                      f"{', '.join(map(str, model.independent_coordinates))} held: " + "; ".join(notes),
                      InitialStateWarning, stacklevel=3)
    return square, assembled, report


def annotate(traj: Any, report: RedundancyReport, model: RedundantModel, P: np.ndarray,
             warn: bool = True) -> None:
    """Add the redundant equations' names, residuals, rank and the minimum-norm multipliers
    to ``traj`` (see the module docstring); appends a note to ``traj.message``; ``warn``:
    warn when a redundant equation drifts."""
    traj.redundant_constraints = report.redundant
    traj.redundancy = report
    k = len(report.names)
    s = len(traj.t)
    R = getattr(traj, "specified_values", None)
    if R is not None and R.shape[1] != len(model.specifieds):
        R = None
    if s:
        f, J, Ba = model.constraints_many(traj.t, traj.q, traj.u, P, R)
    else:
        f, J, Ba = np.empty((0, k)), np.empty((0, k, model.N)), np.empty((0, 0, model.o))
    traj.constraint_residuals = f
    ranks = np.zeros(s, dtype=int)
    for i in range(s):
        if not np.all(np.isfinite(J[i])):
            ranks[i] = -1
            continue
        sv = np.linalg.svd(J[i], compute_uv=False)
        ranks[i] = int(np.sum(sv > RANK_TOL * max(float(sv[0]) if sv.size else 0.0, 1e-300)))
    traj.constraint_rank = ranks
    if traj.multipliers is not None and s:
        vrows = model.velocity_rows
        lam = np.full((s, Ba.shape[1]), np.nan)
        for i in range(s):
            li = traj.multipliers[i]
            if np.all(np.isfinite(li)) and np.all(np.isfinite(Ba[i])):
                lam[i] = minimum_norm_multipliers(Ba[i], vrows, li)
        traj.multipliers = lam
    red = [report.names.index(nm) for nm in report.redundant]
    #: max |f| of the equations left out, at each sample (s,)
    traj.redundant_residual = (np.max(np.abs(f[:, red]), axis=1) if red and s else np.zeros(s))
    traj.message = traj.message + _note(traj, report)
    if warn:
        _drift_warning(traj)


def _drift(traj: Any) -> float:
    """The largest residual, along the run, of the equations left out of it."""
    r = getattr(traj, "redundant_residual", None)
    return float(np.nanmax(r)) if r is not None and len(r) and not np.all(np.isnan(r)) else 0.0


def _note(traj: Any, report: RedundancyReport) -> str:
    ranks = traj.constraint_rank
    valid = ranks[ranks >= 0]
    rank_text = (f"rank {valid.min()}" if valid.size and valid.min() == valid.max() else
                 f"rank {valid.min()} to {valid.max()}" if valid.size else "rank unknown")
    return (f"; redundant configuration constraints {', '.join(report.redundant)} (the "
            f"{len(report.names)} equations have {rank_text} along the run; simulated with "
            f"{', '.join(report.kept)}; max |residual| of the redundant ones {_drift(traj):.2g}; "
            "minimum-norm multipliers)")


def _drift_warning(traj: Any) -> None:
    drift = _drift(traj)
    if drift > DRIFT_WARNING:
        warnings.warn(RedundantConstraintWarning(
            f"configuration constraints left out of the run reach a residual of {drift:.3g} "
            f"(constraint_residuals): the kept equations no longer imply them there"),
            stacklevel=4)
