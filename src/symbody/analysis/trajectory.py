"""Trajectory: the result of :func:`symbody.simulate`.

Plain arrays with the symbols that name their columns, in the shape of
``scipy.integrate.solve_ivp``'s result::

    t (k,)   x (k, N + p + e) = [q, u_ind, extra states]   q (k, N)   u (k, o) (dependent speeds included)
    specified_values (k, s): the specified inputs at the samples (or None)
    holonomic_residuals (k, M)   velocity_residuals (k, m)   multipliers (k, m) or None
    partition_changes: [PartitionChange(t, dependent_coordinates, dependent_speeds), ...]
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import sympy as sm

from ..errors import InputError
from ..formatting import symbol_name as _short
from .dense_output import ConstraintProjection, StepInterpolant
from .trajectory_file import (  # noqa: F401 (re-exported: the file format's names lived here)
    _FORMAT,
    _FORMATS,
    _ArchiveReader,
    _describe,
    _load_arrays,
    _read_events,
    _read_outputs,
    _read_partition_changes,
    _read_samples,
    _read_segments,
    _read_steps,
    _read_symbols,
    _symbol_from,
    _symbol_record,
    load_trajectory,
    save_trajectory,
    write_csv,
)
from .trajectory_parts import ModelInfo, RunReport, SampleArrays

if TYPE_CHECKING:
    import pandas
    from numpy.typing import ArrayLike

__all__ = ["Trajectory", "PartitionChange", "SampleArrays", "ModelInfo", "RunReport"]


class PartitionChange(NamedTuple):
    """A switch of the dependent set during a simulation: from time ``t`` on the
    dependent coordinates and speeds (names) were these."""

    t: float
    dependent_coordinates: tuple[str, ...]
    dependent_speeds: tuple[str, ...]


class Trajectory:
    """Samples of a simulation and how it went, built from three parts:
    ``Trajectory(SampleArrays(t, x, q, u, ...), ModelInfo(coordinates, speeds, constants),
    RunReport(status, message, ...))``.

    Fields: ``t``, ``x``, ``q``, ``u``, ``coordinates``, ``speeds``,
    ``states``, ``constants`` (dict Symbol -> value), ``holonomic_residuals``,
    ``velocity_residuals``, ``multipliers`` (k, m, or None for a reduced dynamic block:
    λ in M_d u' + g_d = B^T λ, B^T λ the generalized constraint forces, the sign of
    SymPy's ``LagrangesMethod.rhs()``), ``status`` (0 success,
    < 0 failure: see :func:`symbody.simulate`), ``message``, ``success``,
    ``constraints`` (the mode used), ``method``, ``nfev``, ``nsteps``,
    ``wall_time`` (s), ``partition_changes`` (list of :class:`PartitionChange`: the
    times the dependent set was switched to pass a singular configuration, and the new
    dependent coordinates and speeds; empty when the model's own set served throughout).
    The columns of ``x``, ``q`` and ``u`` are in model order whatever the dependent set.
    """

    def __init__(self, samples: SampleArrays, model: ModelInfo,
                 report: RunReport | None = None) -> None:
        for name, part, kind in (("samples", samples, SampleArrays), ("model", model, ModelInfo),
                                 ("report", report or RunReport(), RunReport)):
            if not isinstance(part, kind):
                raise InputError(f"Trajectory({name}=...) must be a {kind.__name__}, "
                                 f"got {type(part).__name__}")
        self._set_samples(samples)
        self.coordinates = tuple(model.coordinates)
        self.speeds = tuple(model.speeds)
        n_ind = self.x.shape[1] - self.q.shape[1] if self.x.ndim == 2 else 0
        self.states = tuple(model.states) if model.states is not None else \
            self.coordinates + self.speeds[:n_ind]
        self.constants = dict(model.constants)
        self.specifieds = tuple(model.specifieds or ())
        self._set_report(report or RunReport())

    def _set_samples(self, s: SampleArrays) -> None:
        self.t = np.asarray(s.t, dtype=float)
        self.x = np.asarray(s.x, dtype=float)
        self.q = np.asarray(s.q, dtype=float)
        self.u = np.asarray(s.u, dtype=float)
        #: the specified inputs at the samples (k, s), when the simulation recorded them
        self.specified_values = (None if s.specified_values is None
                                 else np.asarray(s.specified_values, dtype=float).reshape(len(self.t), -1))
        self.holonomic_residuals = np.asarray(s.holonomic_residuals, dtype=float)
        self.velocity_residuals = np.asarray(s.velocity_residuals, dtype=float)
        self.multipliers = None if s.multipliers is None else np.asarray(s.multipliers, dtype=float)
        #: named quantities along the trajectory (simulate(..., outputs=...)), arrays over t
        self.outputs: dict[str, np.ndarray] = dict(s.outputs or {})
        #: x' at the samples (for the dense output), or None; a simulation's trajectory
        #: evaluates it on first access (see :attr:`xdot`)
        self._xdot = None if s.xdot is None else np.asarray(s.xdot, dtype=float)
        self._xdot_source: Callable[[], np.ndarray] | None = None
        #: the integrator's dense output, step by step (what ``trajectory(t)`` evaluates), or
        #: None (a trajectory built from samples only: cubic Hermite between them)
        self.steps: StepInterpolant | None = s.steps
        #: puts interpolated states back on the constraints (a simulation's model), or None
        self.projection: ConstraintProjection | None = None

    def _set_report(self, r: RunReport) -> None:
        self.status = int(r.status)
        self.message = str(r.message)
        self.constraints = str(r.constraints)
        self.method = str(r.method)
        self.nfev = int(r.nfev)
        self.nsteps = int(r.nsteps)
        self.wall_time = float(r.wall_time)
        self.partition_changes = [PartitionChange(float(c[0]), tuple(map(str, c[1])),
                                                  tuple(map(str, c[2]) if len(c) > 2 else ()))
                                  for c in r.partition_changes]
        #: events that happened (records with .name, .t, .x, .x_after), in time order
        self.events = list(r.events)
        #: (t_start, t_end) of each segment between impacts (one segment without impacts)
        segments = r.segments
        if segments is None:
            segments = [(float(self.t[0]), float(self.t[-1]))] if len(self.t) else []
        self.segments = [(float(a), float(b)) for a, b in segments]
        #: corrections of the constraint mode fed back into the integrator (restarts)
        self.projection_restarts = int(r.projection_restarts)

    @property
    def report(self) -> RunReport:
        """How the run went, as one :class:`RunReport` (a copy of the fields)."""
        return RunReport(self.status, self.message, self.constraints, self.method, self.nfev,
                         self.nsteps, self.wall_time, tuple(self.partition_changes),
                         tuple(self.events), tuple(self.segments), self.projection_restarts)

    @property
    def xdot(self) -> np.ndarray | None:
        """x' at the samples (k, N + p) for the dense output ``trajectory(t)``, or None.

        A trajectory from :func:`symbody.simulate` evaluates it from the model at the
        samples on first access (NaN where the model cannot be evaluated), so runs whose
        samples are only read do not pay for it.
        """
        if self._xdot is None and self._xdot_source is not None:
            source, self._xdot_source = self._xdot_source, None
            self._xdot = np.asarray(source(), dtype=float)
        return self._xdot

    def __getstate__(self) -> dict:
        # a pickled trajectory (a sweep's, sent back from a worker) carries x' itself, not
        # the model that would compute it
        state = self.__dict__.copy()
        state["_xdot"], state["_xdot_source"] = self.xdot, None
        state["projection"] = None       # (the model: Trajectory.load(path, model=...) again)
        return state

    @xdot.setter
    def xdot(self, value: ArrayLike | Callable[[], np.ndarray] | None) -> None:
        """An array (k, N + p), None, or a function of no arguments giving the array on first use."""
        if callable(value):
            self._xdot, self._xdot_source = None, value
        else:
            self._xdot = None if value is None else np.asarray(value, dtype=float)
            self._xdot_source = None

    @property
    def contacts(self) -> Any:
        """The contacts' gap, gap rate, normal and friction forces, slip velocity, elastic
        energy, power and dissipated energy at the samples: ``{name: ContactSamples}``, with
        the sums ``.elastic_energy`` and ``.dissipated`` (:mod:`.contact_samples`; the arrays
        are outputs "<name>.<quantity>", saved with the trajectory)."""
        from .contact_samples import contact_views
        return contact_views(self)

    @property
    def success(self) -> bool:
        return self.status == 0

    def __eq__(self, other: object) -> bool:
        """Equal when every field is: the arrays exactly (same shapes, NaN equal to NaN, x'
        evaluated when not yet), the symbols, constants, outputs, events, segments,
        dependent-set switches, status, message, method, counters and wall time.  So
        ``Trajectory.load(sol.save(path)) == sol``.  Trajectories are not hashable."""
        if not isinstance(other, Trajectory):
            return NotImplemented
        return _same_value(self._fields(), other._fields())

    __hash__ = None  # type: ignore[assignment] - compared by value, mutable

    def _fields(self) -> dict:
        fields = {k: v for k, v in vars(self).items() if k not in ("_xdot", "_xdot_source")}
        fields["xdot"] = self.xdot
        return fields

    def __len__(self) -> int:
        return len(self.t)

    # ------------------------------------------------------------ dense output
    def __call__(self, t) -> np.ndarray:
        """The state x (model.states order) at time(s) ``t`` in the span: (N + p,) or (len(t), N + p).

        A simulation's trajectory evaluates the integrator's own dense output of the step
        holding t (:attr:`steps`: DOP853's 7th-degree polynomial, RK45's quartic, Radau's
        and BDF's polynomials, IDA's, those of the compiled steps), so it is as accurate
        between the samples as the run is at them; for a model with constraints the
        interpolated state is put back on them (:attr:`projection`: q_dep by Newton's
        method with q_ind held, the dependent speeds from B u + b = 0), so the residuals
        stay at round-off between the samples too.  A step never crosses an impact; at an
        impact's time the state after it is returned; at a sample's time, the sample.

        Without steps (a trajectory built from samples, a file of formats 1 and 2):
        piecewise cubic Hermite interpolation between consecutive knots with the state
        derivative at each (C1, error O(h^4) in the knot spacing h), segment by segment,
        never across an impact (:meth:`knots`).
        """
        ts = np.asarray(t, dtype=float)
        scalar = ts.ndim == 0
        ts = np.atleast_1d(ts)
        self._check_span(ts)
        if self.steps is None or not len(self.steps):
            out = self._hermite(ts)
        else:
            W = self._full_states(ts)
            N, o, n_x = self.q.shape[1], len(self.speeds), self.x.shape[1]
            p = n_x - N - (W.shape[1] - N - o)
            out = np.concatenate([W[:, :N + p], W[:, N + o:]], axis=1)
        return out[0] if scalar else out

    def interpolate(self, t: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """(q (n, N), u (n, o)): all coordinates and all speeds (dependent ones included) at
        the times ``t`` (n,), from the dense output as ``trajectory(t)`` (see
        :meth:`__call__`).  Without steps: q and the independent speeds from the Hermite
        interpolant, the dependent speeds linear between the samples of each segment."""
        ts = np.atleast_1d(np.asarray(t, dtype=float))
        self._check_span(ts)
        N, o = self.q.shape[1], len(self.speeds)
        if self.steps is not None and len(self.steps):
            W = self._full_states(ts)
            return W[:, :N], W[:, N:N + o]
        x = self._hermite(ts)
        u = np.empty((len(ts), o))
        for c in range(o):
            u[:, c] = np.interp(ts, self.t, self.u[:, c]) if self.t[-1] >= self.t[0] else \
                np.interp(-ts, -self.t, self.u[:, c])
        speeds = list(self.speeds)
        for k, s in enumerate(self.states[N:]):
            if s in speeds:
                u[:, speeds.index(s)] = x[:, N + k]
        return x[:, :N], u

    def _check_span(self, ts: np.ndarray) -> None:
        if len(self.t) == 0:
            raise InputError("the trajectory has no samples")
        lo, hi = min(self.t[0], self.t[-1]), max(self.t[0], self.t[-1])
        bad = (ts < lo - 1e-12 * max(1.0, abs(lo))) | (ts > hi + 1e-12 * max(1.0, abs(hi)))
        if bad.any():
            raise InputError(f"t = {ts[bad][0]:.6g} is outside the trajectory's span [{lo:.6g}, {hi:.6g}]")

    def _full_states(self, ts: np.ndarray) -> np.ndarray:
        """[q, u (all speeds), extra states] (n, N + o + e) at ``ts`` from the steps, put on
        the constraints when the trajectory has its model's projection; the samples where
        ``ts`` is a sample time (the last of a repeated time: after an impact)."""
        steps = self.steps
        idx = steps.locate(ts)
        W = steps.evaluate(ts, idx)
        if self.projection is not None:
            W = self.projection(ts, W, steps.partition[idx], steps.partitions)
        T = self.t
        sign = 1.0 if T[-1] >= T[0] else -1.0
        i = np.clip(np.searchsorted(sign * T, sign * ts, side="right") - 1, 0, len(T) - 1)
        at = T[i] == ts
        if at.any():
            N, o = self.q.shape[1], len(self.speeds)
            e = W.shape[1] - N - o
            rows = i[at]
            W[at, :N] = self.q[rows]
            W[at, N:N + o] = self.u[rows]
            if e:
                W[at, N + o:] = self.x[rows, self.x.shape[1] - e:]
        return W

    def _hermite(self, ts: np.ndarray) -> np.ndarray:
        """The cubic Hermite interpolant of the knots at ``ts`` (n, N + p): at a knot (or
        past the last) its state, after a repeated time the later state, linear where x' is
        unknown at either end of the interval."""
        T, X, D = self.knots()
        ts = np.asarray(ts, dtype=float).reshape(-1)
        sign = 1.0 if T[-1] >= T[0] else -1.0
        i = np.clip(np.searchsorted(sign * T, sign * ts, side="right") - 1, 0, len(T) - 1)
        out = X[i].copy()
        inside = (i < len(T) - 1) & (T[i] != ts)
        j = np.flatnonzero(inside)
        if not j.size:
            return out
        a = i[j]
        h = T[a + 1] - T[a]
        zero = h == 0.0
        out[j[zero]] = X[a[zero] + 1]
        j, a, h = j[~zero], a[~zero], h[~zero]
        s_ = ((ts[j] - T[a]) / h)[:, None]
        d0, d1 = D[a], D[a + 1]
        known = (np.isfinite(d0).all(axis=1) & np.isfinite(d1).all(axis=1))[:, None]
        hh = h[:, None]
        cubic = ((1 + 2 * s_) * (1 - s_) ** 2 * X[a] + s_ * (1 - s_) ** 2 * hh * np.where(known, d0, 0.0)
                 + s_ ** 2 * (3 - 2 * s_) * X[a + 1] + s_ ** 2 * (s_ - 1) * hh * np.where(known, d1, 0.0))
        linear = X[a] + s_ * (X[a + 1] - X[a])
        out[j] = np.where(known, cubic, linear)
        return out

    def knots(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(T (n,), X (n, N + p), X' (n, N + p)): the knots of the dense output ``trajectory(t)``.

        The samples, plus for each impact (an event with ``x_after``) whose time is not a
        repeated sample time the states just before and just after it (a repeated time:
        the interpolation restarts there).  X' is NaN where unknown (linear there).
        """
        T, X = self.t, self.x
        D = self.xdot if self.xdot is not None else np.full(X.shape, np.nan)
        extra = []
        repeated = set(T[1:][np.diff(T) == 0.0].tolist()) if len(T) > 1 else set()
        lo, hi = (min(T[0], T[-1]), max(T[0], T[-1])) if len(T) else (0.0, -1.0)
        for e in self.events:
            if e.x_after is None or e.t in repeated or not lo < e.t < hi:
                continue
            nan = np.full(X.shape[1], np.nan)
            extra.append((e.t, 0, np.asarray(e.x, float), nan if e.xdot is None else e.xdot))
            extra.append((e.t, 1, np.asarray(e.x_after, float),
                          nan if e.xdot_after is None else e.xdot_after))
        if not extra:
            return T, X, D
        sign = 1.0 if T[-1] >= T[0] else -1.0
        rows = [(float(T[i]), -1, i) for i in range(len(T))]
        rows += [(te, side, len(T) + k) for k, (te, side, _, _) in enumerate(extra)]
        # samples at an impact's time: the event's two states around them
        rows.sort(key=lambda r: (sign * r[0], r[1] if r[1] == 0 else (1 if r[1] == 1 else 0.5)))
        XX = np.vstack([X, np.array([e[2] for e in extra])])
        DD = np.vstack([D, np.array([e[3] for e in extra], dtype=float)])
        order = [r[2] for r in rows]
        return np.array([r[0] for r in rows]), XX[order], DD[order]

    def to_dataframe(self) -> pandas.DataFrame:
        """A pandas DataFrame indexed by t: coordinates, speeds, extra states, specified
        inputs, outputs (one column each;
        vector outputs as name[0], name[1], ...), residuals and multipliers.  Needs pandas."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - optional dependency
            raise InputError("to_dataframe() needs pandas (pip install pandas)") from exc
        cols: dict[str, np.ndarray] = {}
        for syms, arr in ((self.coordinates, self.q), (self.speeds, self.u)):
            for i, s in enumerate(syms):
                cols[_short(s)] = arr[:, i]
        for name, arr in self._extra_columns():
            cols[name] = arr
        for j in range(self.holonomic_residuals.shape[1] if self.holonomic_residuals.ndim == 2 else 0):
            cols[f"holonomic_residual[{j}]"] = self.holonomic_residuals[:, j]
        for j in range(self.velocity_residuals.shape[1] if self.velocity_residuals.ndim == 2 else 0):
            cols[f"velocity_residual[{j}]"] = self.velocity_residuals[:, j]
        if self.multipliers is not None:
            for j in range(self.multipliers.shape[1]):
                cols[f"multiplier[{j}]"] = self.multipliers[:, j]
        df = pd.DataFrame(cols, index=pd.Index(self.t, name="t"))
        return df

    # ------------------------------------------------------------ access
    def column(self, name: str | sm.Basic) -> np.ndarray:
        """The samples (k,) of a coordinate, speed, extra state or specified input, given as
        symbol or name (``sol[q1]``, ``sol["q1"]``, ``sol["a_biceps"]`` for a_biceps(t))."""
        key = str(name).strip() if not isinstance(name, sm.Basic) else name
        extra = self.extra_states
        groups = [(self.coordinates, self.q), (self.speeds, self.u),
                  (extra, self.x[:, self.x.shape[1] - len(extra):] if extra else None)]
        if self.specified_values is not None:
            groups.append((self.specifieds, self.specified_values))
        for syms, arr in groups:
            for i, s in enumerate(syms):
                if s == key or str(s) == str(key) or _short(s) == str(key):
                    return arr[:, i]
        known = self.coordinates + self.speeds + tuple(extra)
        if self.specified_values is not None:
            known += self.specifieds
        raise InputError(f"{name!r} is not a coordinate or speed (nor an extra state or specified "
                         f"input) of this trajectory ({', '.join(map(_short, known))})")

    @property
    def extra_states(self) -> tuple:
        """The extra first-order states (the columns of x after q and the independent speeds)."""
        n_mech = self.q.shape[1] + sum(1 for s in self.states[self.q.shape[1]:] if s in set(self.speeds))
        return tuple(self.states[n_mech:])

    def __getitem__(self, name) -> np.ndarray:
        return self.column(name)

    @property
    def max_holonomic_residual(self) -> float:
        r = self.holonomic_residuals
        return float(np.max(np.abs(r))) if r.size else 0.0

    @property
    def max_velocity_residual(self) -> float:
        r = self.velocity_residuals
        return float(np.max(np.abs(r))) if r.size else 0.0

    # ------------------------------------------------------------ persistence
    def save(self, path: str | Path) -> Path:
        """Save everything the trajectory holds to a ``.npz`` file (arrays plus a JSON header;
        no pickles): samples, x' (for the dense output), residuals, multipliers, specified
        inputs, outputs, events (times, states before and after), segments, dependent-set
        switches, the integrator's steps (:attr:`steps`: the dense output), symbols (names
        and assumptions), constants, status, message and counters.  :meth:`load` gives back
        an equal trajectory; ``trajectory(t)`` after loading evaluates the same steps (never
        across an impact), and, given the model (``load(path, model=...)``), puts the states
        back on its constraints as before.  Returns the path written (``.npz`` appended when
        missing).
        """
        return save_trajectory(self, path)

    @classmethod
    def load(cls, path: str | Path, model: Any = None) -> Trajectory:
        """Load a trajectory written by :meth:`save` (this version's files and those of the
        first two formats, which hold no steps: their ``trajectory(t)`` is the cubic Hermite
        interpolant of the samples, less accurate between them).

        ``model``: the NumericModel that made the trajectory (``symbody.compile(eom)``, same
        coordinates and speeds), to put the interpolated states back on its constraints as
        the simulation's own trajectory does; without it ``trajectory(t)`` is the
        integrator's interpolant as it was (within the run's error of the constraints).

        Raises :class:`~symbody.TrajectoryFileError` (an InputError) naming the file and what
        is wrong: missing, not a symbody trajectory file, damaged, or of an unknown format.
        Nothing in the file is executed (no pickles are accepted).
        """
        return load_trajectory(cls, path, model)

    def attach_model(self, model: Any) -> None:
        """Put ``trajectory(t)``'s interpolated states back on the constraints of ``model``
        (the NumericModel that made the trajectory: the same coordinates and speeds), with the
        trajectory's constants.  Raises InputError when the model does not fit."""
        names = [_short(s) for s in getattr(model, "coordinates", ())], \
            [_short(s) for s in getattr(model, "speeds", ())]
        mine = [_short(s) for s in self.coordinates], [_short(s) for s in self.speeds]
        if names != mine or not hasattr(model, "project_coordinates_many"):
            raise InputError(f"model={type(model).__name__} does not fit this trajectory: its "
                             f"coordinates and speeds are {names}, the trajectory's {mine} (give "
                             "the compiled model that made it)")
        P = model.constants_array({str(k): v for k, v in self.constants.items()})
        positions = self.steps is not None and self.steps.positions
        self.projection = ConstraintProjection(model, P, positions) if (model.M or model.m) \
            else None

    def to_csv(self, path: str | Path) -> Path:
        """Write t, all coordinates, all speeds, extra states, specified inputs, outputs
        (vector outputs as name[0], name[1], ...), residuals and multipliers as CSV columns
        (the events and segments are not in a CSV file: :meth:`save` keeps them)."""
        return write_csv(self, path)

    def _extra_columns(self) -> list[tuple[str, np.ndarray]]:
        """(name, samples) of the extra states, the specified inputs and the outputs."""
        cols = []
        extra = self.extra_states
        if extra:
            block = self.x[:, self.x.shape[1] - len(extra):]
            cols += [(_short(s), block[:, i]) for i, s in enumerate(extra)]
        if self.specified_values is not None:
            cols += [(_short(s), self.specified_values[:, i]) for i, s in enumerate(self.specifieds)]
        for name, arr in self.outputs.items():
            a = np.asarray(arr, dtype=float).reshape(len(self.t), -1)
            if np.ndim(arr) == 1:
                cols.append((name, a[:, 0]))
            else:
                cols += [(f"{name}[{j}]", a[:, j]) for j in range(a.shape[1])]
        # an output may repeat a column (the built-in "specifieds" output: the inputs again)
        taken = {_short(s) for s in self.coordinates + self.speeds}
        unique = []
        for name, values in cols:
            if name not in taken:
                taken.add(name)
                unique.append((name, values))
        return unique

    # ------------------------------------------------------------ display
    def summary(self) -> dict[str, Any]:
        return {
            "status": f"{self.status} ({'success' if self.success else 'failed'})",
            "message": self.message,
            "constraints": self.constraints,
            "method": self.method,
            "samples": len(self.t),
            "t": f"{self.t[0]:.6g} .. {self.t[-1]:.6g}" if len(self.t) else "(empty)",
            "states": ", ".join(map(_short, self.states)),
            "max |holonomic residual|": f"{self.max_holonomic_residual:.3g}",
            "max |velocity residual|": f"{self.max_velocity_residual:.3g}",
            "dependent-set switches": len(self.partition_changes),
            "projection restarts": self.projection_restarts,
            "rhs evaluations": self.nfev,
            "steps": self.nsteps,
            "wall time": f"{self.wall_time:.3g} s",
        }

    def __repr__(self) -> str:
        s = self.summary()
        return (f"<Trajectory {s['samples']} samples, t {s['t']}, status {s['status']}, "
                f"constraints {self.constraints!r}, max |f_h| {s['max |holonomic residual|']}>")

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td style='text-align:left'>{html.escape(str(v))}</td></tr>"
                       for k, v in self.summary().items())
        return f"<table><caption>symbody Trajectory</caption>{rows}</table>"


# ---------------------------------------------------------------- file helpers
def _same_value(a: Any, b: Any) -> bool:
    """``a`` and ``b`` equal as a trajectory's fields are: arrays exactly (NaN equal to NaN),
    mappings and sequences item by item (a list equals a tuple of equal items)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if a is None or b is None:
            return False
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        try:
            return bool(np.array_equal(a, b, equal_nan=True))
        except TypeError:                 # not numeric: no NaN to compare
            return bool(np.array_equal(a, b))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True                       # NaN
    return bool(a == b)
