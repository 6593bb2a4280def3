"""A :class:`~.trajectory.Trajectory` in a file: :meth:`Trajectory.save` writes a ``.npz``
archive (arrays plus a JSON header; no pickles), :meth:`Trajectory.load` reads it back with
every defect reported as a :class:`~symbody.TrajectoryFileError` naming the file
(:class:`_ArchiveReader` and the ``_read_*`` steps, in the order :func:`_load_arrays` calls
them).  Symbols are stored as JSON descriptions (name, assumptions, arguments), never evaluated.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy as sm
from sympy.physics.vector import dynamicsymbols

from ..compat.sympy import function_assumptions, original_assumptions
from ..errors import TrajectoryFileError
from ..formatting import symbol_name as _short
from .dense_output import StepInterpolant
from .trajectory_parts import ModelInfo, RunReport, SampleArrays

if TYPE_CHECKING:
    from .trajectory import Trajectory

_FORMAT = "symbody-trajectory-3"
#: what load() reads (formats 1 and 2 hold no steps: their trajectory(t) is the cubic
#: Hermite interpolant of the samples)
_FORMATS = ("symbody-trajectory-1", "symbody-trajectory-2", _FORMAT)


def save_trajectory(traj: Trajectory, path: str | Path) -> Path:
    """:meth:`Trajectory.save`: ``traj`` written to ``path`` (``.npz`` appended when missing)."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_suffix(path.suffix + ".npz") if path.suffix else path.with_suffix(".npz")
    arrays: dict[str, np.ndarray] = dict(
        t=traj.t, x=traj.x, q=traj.q, u=traj.u, holonomic_residuals=traj.holonomic_residuals,
        velocity_residuals=traj.velocity_residuals)
    for name in ("multipliers", "xdot", "specified_values"):
        value = getattr(traj, name)
        if value is not None:
            arrays[name] = np.asarray(value, dtype=float)
    outputs = list(traj.outputs)
    for i, name in enumerate(outputs):
        arrays[f"output_{i}"] = np.asarray(traj.outputs[name])
    n_x = traj.x.shape[1] if traj.x.ndim == 2 else 0
    ev = traj.events
    if traj.steps is not None:
        st = traj.steps
        arrays["steps_t"] = np.stack([st.t_start, st.t_end], axis=1).reshape(len(st), 2)
        arrays["steps_values"] = st.values
        arrays["steps_partition"] = np.asarray(st.partition, dtype=np.int64)
    arrays["event_t"] = np.array([float(e.t) for e in ev], dtype=float)
    arrays["event_x"] = np.array([np.asarray(e.x, dtype=float) for e in ev]).reshape(len(ev), -1) \
        if ev else np.empty((0, n_x))
    arrays["event_x_after"] = np.array(
        [np.full(np.shape(e.x), np.nan) if e.x_after is None else np.asarray(e.x_after, dtype=float)
         for e in ev]).reshape(len(ev), -1) if ev else np.empty((0, n_x))
    for field, label in (("xdot", "event_xdot"), ("xdot_after", "event_xdot_after")):
        arrays[label] = np.array(
            [np.full(np.shape(e.x), np.nan) if getattr(e, field) is None
             else np.asarray(getattr(e, field), dtype=float) for e in ev]).reshape(len(ev), -1) \
            if ev else np.empty((0, n_x))
    meta = {
        "format": _FORMAT,
        "coordinates": [_symbol_record(s) for s in traj.coordinates],
        "speeds": [_symbol_record(s) for s in traj.speeds],
        "states": [_symbol_record(s) for s in traj.states],
        "specifieds": [_symbol_record(s) for s in traj.specifieds],
        "constants": [[_symbol_record(k), float(v)] for k, v in traj.constants.items()],
        "status": traj.status, "message": traj.message, "constraints": traj.constraints,
        "method": traj.method, "nfev": traj.nfev, "nsteps": traj.nsteps,
        "wall_time": traj.wall_time,
        "partition_changes": [[c.t, list(c.dependent_coordinates), list(c.dependent_speeds)]
                              for c in traj.partition_changes],
        "segments": [[a, b] for a, b in traj.segments],
        "projection_restarts": traj.projection_restarts,
        "steps_partitions": None if traj.steps is None else
        [[list(map(int, qd)), list(map(int, ud))] for qd, ud in traj.steps.partitions],
        "steps_positions": traj.steps is not None and traj.steps.positions,
        "outputs": outputs,
        "events": [[str(e.name), e.x_after is not None, e.xdot is not None,
                    e.xdot_after is not None] for e in ev],
    }
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez_compressed(path, **arrays)
    return path


def write_csv(traj: Trajectory, path: str | Path) -> Path:
    """:meth:`Trajectory.to_csv`: the samples of ``traj`` as CSV columns in ``path``."""
    path = Path(path)
    header = ["t"] + [_short(s) for s in traj.coordinates] + [_short(s) for s in traj.speeds]
    cols = [traj.t[:, None], traj.q, traj.u]
    for name, arr in traj._extra_columns():  # noqa: SLF001 (the Trajectory's own columns)
        header.append(name)
        cols.append(arr)
    header += [f"holonomic_residual_{i}" for i in range(traj.holonomic_residuals.shape[1])]
    cols.append(traj.holonomic_residuals)
    header += [f"velocity_residual_{i}" for i in range(traj.velocity_residuals.shape[1])]
    cols.append(traj.velocity_residuals)
    if traj.multipliers is not None:
        header += [f"multiplier_{i}" for i in range(traj.multipliers.shape[1])]
        cols.append(traj.multipliers)
    table = np.hstack([np.asarray(c, dtype=float).reshape(len(traj.t), -1) for c in cols])
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for row in table:
            w.writerow([repr(float(v)) for v in row])
    return path


def load_trajectory(cls: type, path: str | Path, model: Any = None) -> Trajectory:
    """:meth:`Trajectory.load`: the trajectory (of class ``cls``) in the file ``path``."""
    path = Path(path)
    if not path.exists() and path.suffix != ".npz" and Path(f"{path}.npz").exists():
        path = Path(f"{path}.npz")             # the name given to save()
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except OSError as exc:
        raise TrajectoryFileError(f"{path}: cannot read the trajectory file "
                                  f"({exc.strerror or exc})") from None
    if head != b"PK\x03\x04":
        raise TrajectoryFileError(f"{path} is not a symbody trajectory file (not a .npz archive: "
                                  "Trajectory.save writes one)")
    try:
        with np.load(path, allow_pickle=False) as data:
            traj = _load_arrays(cls, path, data)
    except TrajectoryFileError:
        raise
    except Exception as exc:       # zipfile, zlib, numpy header errors: a damaged file
        raise TrajectoryFileError(f"{path}: damaged trajectory file ({_describe(exc)})") from None
    if model is not None:
        traj.attach_model(model)
    return traj


def _symbol_record(sym) -> dict:
    """A JSON description of a symbol that rebuilds an equal one (no eval): a Symbol's name
    and the assumptions it was made with, or an undefined function's name, assumptions and
    arguments (q1(t))."""
    if isinstance(sym, sm.core.function.AppliedUndef):
        kwargs = function_assumptions(sym.func)
        return {"function": sym.func.__name__, "args": [_symbol_record(a) for a in sym.args],
                "assumptions": {k: bool(v) for k, v in kwargs.items() if v is not None}}
    if isinstance(sym, sm.Symbol):
        try:
            orig = original_assumptions(sym)
        except AttributeError:
            orig = None
        if orig is None:
            orig = {k: v for k, v in sym.assumptions0.items() if k != "commutative"}
        return {"symbol": sym.name, "assumptions": {k: bool(v) for k, v in orig.items() if v is not None}}
    return {"symbol": str(sym), "assumptions": {}}


def _symbol_from(record, what: str):
    """The symbol :func:`_symbol_record` described (or a format-1 name: a dynamic symbol)."""
    if isinstance(record, str):
        return dynamicsymbols(record) if what != "constants" else sm.Symbol(record)
    if not isinstance(record, dict):
        raise ValueError(f"{what}: {record!r} is not a symbol description")
    assumptions = record.get("assumptions", {})
    if not (isinstance(assumptions, dict) and all(isinstance(k, str) and isinstance(v, bool)
                                                  for k, v in assumptions.items())):
        raise ValueError(f"{what}: bad assumptions {assumptions!r}")
    if "function" in record:
        name, args = record["function"], record.get("args", [])
        if not (isinstance(name, str) and name and isinstance(args, list) and args):
            raise ValueError(f"{what}: bad function {record!r}")
        return sm.Function(name, **assumptions)(*[_symbol_from(a, what) for a in args])
    name = record.get("symbol")
    if not (isinstance(name, str) and name):
        raise ValueError(f"{what}: bad symbol {record!r}")
    return sm.Symbol(name, **assumptions)


def _describe(exc: BaseException) -> str:
    """An exception as 'Type: message', without numpy's advice to load pickles."""
    text = str(exc)
    if "pickle" in text:
        text = "an array holds Python objects (pickled data), which a symbody file never does"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _ArchiveReader:
    """An open trajectory .npz archive and its JSON header, read with checks: every defect
    raises TrajectoryFileError naming ``path``."""

    def __init__(self, path: Path, data) -> None:
        self.path, self.data = path, data
        if "meta" not in data.files:
            self.fail("not a symbody trajectory file (no 'meta' header; Trajectory.save writes one)")
        try:
            meta = json.loads(str(data["meta"]))
        except ValueError:
            self.fail("damaged trajectory file (its header is not valid JSON)")
        if not isinstance(meta, dict):
            self.fail("damaged trajectory file (its header is not a JSON object)")
        self.meta = meta
        self.format = meta.get("format")
        if self.format not in _FORMATS:
            self.fail(f"unknown trajectory format {self.format!r} (this symbody reads "
                      f"{', '.join(_FORMATS)})")

    def fail(self, what: str):
        raise TrajectoryFileError(f"{self.path}: {what}")

    def has(self, name: str) -> bool:
        return name in self.data.files

    def array(self, name: str, ndim: int | None = None, required: bool = True):
        """The numeric array ``name`` as floats (None if absent and not ``required``)."""
        if name not in self.data.files:
            if required:
                self.fail(f"damaged trajectory file (the array {name!r} is missing)")
            return None
        a = self.data[name]
        if a.dtype.kind not in "fiub":
            self.fail(f"damaged trajectory file (the array {name!r} is not numeric: {a.dtype})")
        if ndim is not None and a.ndim != ndim:
            self.fail(f"damaged trajectory file (the array {name!r} has {a.ndim} dimensions, "
                      f"expected {ndim})")
        return a.astype(float)

    def field(self, name: str, kind, default=None):
        """The header field ``name``, which must be a ``kind``."""
        value = self.meta.get(name, default)
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            self.fail(f"damaged trajectory file (header field {name!r} = {value!r})")
        return value


def _read_symbols(r: _ArchiveReader) -> tuple[dict[str, list], dict]:
    """The coordinates, speeds, states and specifieds ({kind: [symbol]}) and the constants
    {symbol: value} of the header."""
    try:
        symbols = {k: [_symbol_from(rec, k) for rec in r.field(k, list)]
                   for k in ("coordinates", "speeds", "states", "specifieds")}
        constants = {}
        for item in r.field("constants", list):
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], (int, float))):
                r.fail(f"damaged trajectory file (constant entry {item!r})")
            constants[_symbol_from(item[0], "constants")] = float(item[1])
    except ValueError as exc:
        r.fail(f"damaged trajectory file (header: {exc})")
    return symbols, constants


def _read_samples(r: _ArchiveReader, shapes: dict[str, int], n_specifieds: int):
    """t (k,), the (k, width) sample arrays x, q, u and the residuals, and the optional
    multipliers, xdot and specified_values, shapes checked."""
    t = r.array("t", 1)
    k = len(t)
    arr = {name: r.array(name, 2) for name in ("x", "q", "u", "holonomic_residuals",
                                               "velocity_residuals")}
    for name, a in arr.items():
        if a.shape[0] != k or (name in shapes and a.shape[1] != shapes[name]):
            r.fail(f"damaged trajectory file (the array {name!r} has shape {a.shape}, "
                   f"expected ({k}, {shapes.get(name, '...')}))")
    extra = {}
    for name, width in (("multipliers", None), ("xdot", shapes["x"]),
                        ("specified_values", n_specifieds)):
        a = r.array(name, 2, required=False)
        if a is not None and (a.shape[0] != k or (width is not None and a.shape[1] != width)):
            r.fail(f"damaged trajectory file (the array {name!r} has shape {a.shape})")
        extra[name] = a
    if r.format == _FORMATS[0] and r.meta.get("has_multipliers") and extra["multipliers"] is None:
        r.fail("damaged trajectory file (the array 'multipliers' is missing)")
    return t, arr, extra


def _read_outputs(r: _ArchiveReader, k: int) -> dict[str, np.ndarray]:
    """The outputs {name: (k, ...) array}."""
    outputs = {}
    for i, name in enumerate(r.field("outputs", list, [])):
        a = r.array(f"output_{i}")
        if not isinstance(name, str) or a.ndim == 0 or a.shape[0] != k:
            r.fail(f"damaged trajectory file (output {name!r})")
        outputs[name] = a
    return outputs


def _read_events(r: _ArchiveReader, nx: int) -> list:
    """The EventRecords: name, time, state (nx,) before and, where recorded, after, and the
    rates before and after."""
    from .events import EventRecord

    events = []
    ev_meta = r.field("events", list, [])
    if ev_meta:
        et, ex, ea = r.array("event_t", 1), r.array("event_x", 2), r.array("event_x_after", 2)
        ed, eda = r.array("event_xdot", 2), r.array("event_xdot_after", 2)
        n = len(ev_meta)
        if et.shape != (n,) or ex.shape != (n, nx) or any(
                a.shape != ex.shape for a in (ea, ed, eda)):
            r.fail("damaged trajectory file (the event arrays do not match the event list)")
        for j, item in enumerate(ev_meta):
            if not (isinstance(item, list) and len(item) == 4 and isinstance(item[0], str)
                    and all(isinstance(v, bool) for v in item[1:])):
                r.fail(f"damaged trajectory file (event entry {item!r})")
            events.append(EventRecord(item[0], float(et[j]), ex[j].copy(),
                                      *(a[j].copy() if flag else None
                                        for a, flag in zip((ea, ed, eda), item[1:], strict=True))))
    return events


def _read_segments(r: _ArchiveReader) -> list | None:
    """The [start, end] times of the run's segments, or None."""
    segments = r.field("segments", list, None) if "segments" in r.meta else None
    if segments is not None and not all(
            isinstance(sg, list) and len(sg) == 2 and all(isinstance(v, (int, float))
                                                        and not isinstance(v, bool) for v in sg)
            for sg in segments):
        r.fail("damaged trajectory file (header field 'segments')")
    return segments


def _read_steps(r: _ArchiveReader, symbols: dict[str, list], shapes: dict[str, int]):
    """The integrator's step interpolant (StepInterpolant: S steps, values (S, nodes, width)),
    or None."""
    if not r.has("steps_t"):
        return None
    st_t, st_v = r.array("steps_t", 2), r.array("steps_values", 3)
    st_p = r.array("steps_partition", 1)
    parts = r.field("steps_partitions", list)
    S = st_t.shape[0]
    width = shapes["q"] + shapes["u"] + len(symbols["states"]) - shapes["q"] - \
        sum(1 for s_ in symbols["states"][shapes["q"]:] if s_ in set(symbols["speeds"]))
    if st_t.shape[1] != 2 or st_v.shape[0] != S or st_p.shape != (S,) or \
            st_v.shape[2] != width or st_v.shape[1] < 2 or not all(
                isinstance(pp, list) and len(pp) == 2 and all(isinstance(v, list) for v in pp)
                for pp in parts) or (S and not 0 <= st_p.min() <= st_p.max() < len(parts)):
        r.fail("damaged trajectory file (the step arrays do not match)")
    return StepInterpolant(st_t[:, 0].copy(), st_t[:, 1].copy(), st_v, st_p.astype(np.intp),
                           tuple((tuple(map(int, a)), tuple(map(int, b))) for a, b in parts),
                           positions=r.field("steps_positions", bool, False))


def _read_partition_changes(r: _ArchiveReader) -> list:
    """The [time, independent, dependent] records of the run's changes of dependent set."""
    changes = r.field("partition_changes", list, [])
    if not all(isinstance(c, list) and len(c) == 3 and isinstance(c[0], (int, float))
               and all(isinstance(c[j], list) for j in (1, 2)) for c in changes):
        r.fail("damaged trajectory file (header field 'partition_changes')")
    return changes


def _load_arrays(cls, path: Path, data) -> Trajectory:
    """The Trajectory in an open .npz archive (checked: TrajectoryFileError naming ``path``):
    header, symbols, samples, outputs, events, segments, steps and partition changes, read in
    that order."""
    r = _ArchiveReader(path, data)
    symbols, constants = _read_symbols(r)
    shapes = {"x": len(symbols["states"]), "q": len(symbols["coordinates"]),
              "u": len(symbols["speeds"])}
    t, arr, extra = _read_samples(r, shapes, len(symbols["specifieds"]))
    outputs = _read_outputs(r, len(t))
    events = _read_events(r, shapes["x"])
    segments = _read_segments(r)
    steps = _read_steps(r, symbols, shapes)
    changes = _read_partition_changes(r)
    field = r.field
    return cls(
        SampleArrays(t=t, x=arr["x"], q=arr["q"], u=arr["u"],
                     holonomic_residuals=arr["holonomic_residuals"],
                     velocity_residuals=arr["velocity_residuals"], multipliers=extra["multipliers"],
                     outputs=outputs, xdot=extra["xdot"], specified_values=extra["specified_values"],
                     steps=steps),
        ModelInfo(coordinates=symbols["coordinates"], speeds=symbols["speeds"],
                  states=symbols["states"], specifieds=symbols["specifieds"], constants=constants),
        RunReport(status=field("status", int), message=field("message", str),
                  constraints=field("constraints", str), method=field("method", str),
                  nfev=field("nfev", int), nsteps=field("nsteps", int),
                  wall_time=field("wall_time", (int, float)), partition_changes=changes,
                  events=events, segments=segments,
                  projection_restarts=field("projection_restarts", int, 0)))
