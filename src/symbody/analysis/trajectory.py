"""Trajectory: the result of :func:`symbody.simulate`.

Plain arrays with the symbols that name their columns, in the shape of
``scipy.integrate.solve_ivp``'s result::

    t (k,)   x (k, N + p + e) = [q, u_ind, extra states]   q (k, N)   u (k, o) (dependent speeds included)
    specified_values (k, s): the specified inputs at the samples (or None)
    holonomic_residuals (k, M)   velocity_residuals (k, m)   multipliers (k, m) or None
    partition_changes: [PartitionChange(t, dependent_coordinates, dependent_speeds), ...]
"""

from __future__ import annotations

import csv
import html
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import sympy as sm
from sympy.physics.vector import dynamicsymbols

from ..errors import InputError
from ..formatting import symbol_name as _short

if TYPE_CHECKING:
    import pandas
    from numpy.typing import ArrayLike

__all__ = ["Trajectory", "PartitionChange"]

_FORMAT = "symbody-trajectory-1"


class PartitionChange(NamedTuple):
    """A switch of the dependent set during a simulation: from time ``t`` on the
    dependent coordinates and speeds (names) were these."""

    t: float
    dependent_coordinates: tuple[str, ...]
    dependent_speeds: tuple[str, ...]


class Trajectory:
    """Samples of a simulation and how it went.

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

    def __init__(self, t: ArrayLike, x: ArrayLike, q: ArrayLike, u: ArrayLike, *,
                 coordinates: Sequence, speeds: Sequence, constants: Mapping,
                 holonomic_residuals: ArrayLike, velocity_residuals: ArrayLike,
                 multipliers: ArrayLike | None = None, status: int = 0, message: str = "",
                 constraints: str = "none", method: str = "", nfev: int = 0, nsteps: int = 0,
                 wall_time: float = 0.0, states: Sequence | None = None,
                 specifieds: Sequence | None = None, partition_changes: Sequence = (),
                 events: Sequence = (), segments: Sequence[tuple[float, float]] | None = None,
                 outputs: Mapping[str, ArrayLike] | None = None, xdot: ArrayLike | None = None,
                 specified_values: ArrayLike | None = None) -> None:
        self.t = np.asarray(t, dtype=float)
        self.x = np.asarray(x, dtype=float)
        self.q = np.asarray(q, dtype=float)
        self.u = np.asarray(u, dtype=float)
        self.coordinates = tuple(coordinates)
        self.speeds = tuple(speeds)
        n_ind = self.x.shape[1] - self.q.shape[1] if self.x.ndim == 2 else 0
        self.states = tuple(states) if states is not None else self.coordinates + self.speeds[:n_ind]
        self.constants = dict(constants)
        self.specifieds = tuple(specifieds or ())
        #: the specified inputs at the samples (k, s), when the simulation recorded them
        self.specified_values = (None if specified_values is None
                                 else np.asarray(specified_values, dtype=float).reshape(len(self.t), -1))
        self.holonomic_residuals = np.asarray(holonomic_residuals, dtype=float)
        self.velocity_residuals = np.asarray(velocity_residuals, dtype=float)
        self.multipliers = None if multipliers is None else np.asarray(multipliers, dtype=float)
        self.status = int(status)
        self.message = str(message)
        self.constraints = str(constraints)
        self.method = str(method)
        self.nfev = int(nfev)
        self.nsteps = int(nsteps)
        self.wall_time = float(wall_time)
        self.partition_changes = [PartitionChange(float(c[0]), tuple(map(str, c[1])),
                                                  tuple(map(str, c[2]) if len(c) > 2 else ()))
                                  for c in partition_changes]
        #: events that happened (records with .name, .t, .x, .x_after), in time order
        self.events = list(events)
        #: (t_start, t_end) of each segment between impacts (one segment without impacts)
        if segments is None:
            segments = [(float(self.t[0]), float(self.t[-1]))] if len(self.t) else []
        self.segments = [(float(a), float(b)) for a, b in segments]
        #: named quantities along the trajectory (simulate(..., outputs=...)), arrays over t
        self.outputs: dict[str, np.ndarray] = dict(outputs or {})
        #: x' at the samples (for the dense output), or None; a simulation's trajectory
        #: evaluates it on first access (see :attr:`xdot`)
        self._xdot = None if xdot is None else np.asarray(xdot, dtype=float)
        self._xdot_source: Callable[[], np.ndarray] | None = None

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
    def success(self) -> bool:
        return self.status == 0

    def __len__(self) -> int:
        return len(self.t)

    # ------------------------------------------------------------ dense output
    def __call__(self, t) -> np.ndarray:
        """The state x (model.states order) at time(s) ``t`` in the span: (N + p,) or (len(t), N + p).

        Piecewise cubic Hermite interpolation between consecutive samples with the state
        derivative at each sample (C1, error O(h^4) in the sample spacing h); never across
        an impact (a time with two samples, before and after, gives the state after).
        """
        ts = np.asarray(t, dtype=float)
        scalar = ts.ndim == 0
        ts = np.atleast_1d(ts)
        T, X = self.t, self.x
        if len(T) == 0:
            raise InputError("the trajectory has no samples")
        lo, hi = min(T[0], T[-1]), max(T[0], T[-1])
        bad = (ts < lo - 1e-12 * max(1.0, abs(lo))) | (ts > hi + 1e-12 * max(1.0, abs(hi)))
        if bad.any():
            raise InputError(f"t = {ts[bad][0]:.6g} is outside the trajectory's span [{lo:.6g}, {hi:.6g}]")
        sign = 1.0 if T[-1] >= T[0] else -1.0
        D = self.xdot if self.xdot is not None else np.full(X.shape, np.nan)
        out = np.empty((ts.size, X.shape[1]))
        for j, tj in enumerate(ts):
            i = int(np.searchsorted(sign * T, sign * tj, side="right")) - 1
            i = min(max(i, 0), len(T) - 1)
            if i == len(T) - 1 or T[i] == tj:
                out[j] = X[i]
                continue
            h = T[i + 1] - T[i]
            if h == 0.0:
                out[j] = X[i + 1]
                continue
            s_ = (tj - T[i]) / h
            d0, d1 = D[i], D[i + 1]
            if not (np.isfinite(d0).all() and np.isfinite(d1).all()):
                out[j] = X[i] + s_ * (X[i + 1] - X[i])          # linear where x' is unknown
                continue
            h00 = (1 + 2 * s_) * (1 - s_) ** 2
            h10 = s_ * (1 - s_) ** 2
            h01 = s_ ** 2 * (3 - 2 * s_)
            h11 = s_ ** 2 * (s_ - 1)
            out[j] = h00 * X[i] + h10 * h * d0 + h01 * X[i + 1] + h11 * h * d1
        return out[0] if scalar else out

    def to_dataframe(self) -> pandas.DataFrame:
        """A pandas DataFrame indexed by t: coordinates, speeds, outputs (one column each;
        vector outputs as name[0], name[1], ...), residuals and multipliers.  Needs pandas."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - optional dependency
            raise InputError("to_dataframe() needs pandas (pip install pandas)") from exc
        cols: dict[str, np.ndarray] = {}
        for syms, arr in ((self.coordinates, self.q), (self.speeds, self.u)):
            for i, s in enumerate(syms):
                cols[_short(s)] = arr[:, i]
        for name, arr in self.outputs.items():
            a = np.asarray(arr)
            if a.ndim == 1:
                cols[name] = a
            else:
                for j in range(a.shape[1]):
                    cols[f"{name}[{j}]"] = a[:, j]
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
        """Save to a ``.npz`` file (arrays plus names; no pickles)."""
        path = Path(path)
        if path.suffix != ".npz":
            path = path.with_suffix(path.suffix + ".npz") if path.suffix else path.with_suffix(".npz")
        meta = {
            "format": _FORMAT,
            "coordinates": [_short(s) for s in self.coordinates],
            "speeds": [_short(s) for s in self.speeds],
            "states": [_short(s) for s in self.states],
            "specifieds": [_short(s) for s in self.specifieds],
            "constants": [[str(k), float(v)] for k, v in self.constants.items()],
            "status": self.status, "message": self.message, "constraints": self.constraints,
            "method": self.method, "nfev": self.nfev, "nsteps": self.nsteps,
            "wall_time": self.wall_time, "has_multipliers": self.multipliers is not None,
            "partition_changes": [[c.t, list(c.dependent_coordinates), list(c.dependent_speeds)]
                                  for c in self.partition_changes],
        }
        arrays = dict(t=self.t, x=self.x, q=self.q, u=self.u,
                      holonomic_residuals=self.holonomic_residuals,
                      velocity_residuals=self.velocity_residuals,
                      meta=np.array(json.dumps(meta)))
        if self.multipliers is not None:
            arrays["multipliers"] = self.multipliers
        np.savez_compressed(path, **arrays)
        return path

    @classmethod
    def load(cls, path: str | Path) -> Trajectory:
        """Load a trajectory written by :meth:`save` (symbols are rebuilt from their names)."""
        with np.load(Path(path), allow_pickle=False) as data:
            try:
                meta = json.loads(str(data["meta"]))
            except KeyError as exc:
                raise InputError(f"{path} is not a symbody trajectory file") from exc
            if meta.get("format") != _FORMAT:
                raise InputError(f"{path}: unknown trajectory format {meta.get('format')!r}")
            return cls(
                t=data["t"], x=data["x"], q=data["q"], u=data["u"],
                coordinates=[dynamicsymbols(n) for n in meta["coordinates"]],
                speeds=[dynamicsymbols(n) for n in meta["speeds"]],
                states=[dynamicsymbols(n) for n in meta["states"]],
                specifieds=[dynamicsymbols(n) for n in meta["specifieds"]],
                constants={sm.Symbol(k): v for k, v in meta["constants"]},
                holonomic_residuals=data["holonomic_residuals"],
                velocity_residuals=data["velocity_residuals"],
                multipliers=data["multipliers"] if meta["has_multipliers"] else None,
                status=meta["status"], message=meta["message"], constraints=meta["constraints"],
                method=meta["method"], nfev=meta["nfev"], nsteps=meta["nsteps"],
                wall_time=meta["wall_time"], partition_changes=meta.get("partition_changes", ()))

    def to_csv(self, path: str | Path) -> Path:
        """Write t, all coordinates, all speeds, residuals (and multipliers) as CSV columns."""
        path = Path(path)
        header = ["t"] + [_short(s) for s in self.coordinates] + [_short(s) for s in self.speeds]
        cols = [self.t[:, None], self.q, self.u]
        header += [f"holonomic_residual_{i}" for i in range(self.holonomic_residuals.shape[1])]
        cols.append(self.holonomic_residuals)
        header += [f"velocity_residual_{i}" for i in range(self.velocity_residuals.shape[1])]
        cols.append(self.velocity_residuals)
        if self.multipliers is not None:
            header += [f"multiplier_{i}" for i in range(self.multipliers.shape[1])]
            cols.append(self.multipliers)
        table = np.hstack([c.reshape(len(self.t), -1) for c in cols])
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(header)
            for row in table:
                w.writerow([repr(float(v)) for v in row])
        return path

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
