"""Time-history plots of trajectories: coordinates, speeds, constraint residuals, energy.

``plot(trajectory, model)`` draws panels sharing the time axis, each with its unit::

    q(t)                 every coordinate (k, N), one axis per kind (angles [deg], lengths [m])
    u(t)                 every speed (k, o), one axis per kind, dependent ones dashed
    |f_h|, |B u + b|     largest constraint residuals on a log scale (when there are constraints)
    E(t) - E(t0)         energy drift (when an energy expression or array is given)
    outputs              other named quantities

Also here: ``plot_comparison`` (the same residual/energy panels for several runs side by
side, e.g. without and with constraint enforcement) and ``plot_eigenvalues`` (eigenvalues
against a parameter such as the bicycle's forward speed).

matplotlib is imported when a function is called, not when symbody is imported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy as sm

from ..deprecation import moved_keywords
from ..errors import InputError
from ._trajectory_evaluation import evaluate_along, sample_segments, segment_starts
from .options import FigureOptions, checked_option
from .units import quantity_kinds, residual_units, units_for

if TYPE_CHECKING:
    from matplotlib.figure import Figure


__all__ = ["plot", "plot_comparison", "plot_eigenvalues", "symbol_label", "RESIDUAL_FLOOR"]

#: Residuals below this are drawn at this value (a log axis cannot show zero).
RESIDUAL_FLOOR = 1e-17

_MAX_LEGEND = 12


def symbol_label(symbol: Any) -> str:
    """Matplotlib mathtext for a symbol: q1(t) -> '$q_{1}$', 'E' -> 'E'."""
    if isinstance(symbol, str):
        return symbol
    try:
        from sympy.physics.vector.printing import vlatex

        return f"${vlatex(symbol)}$"
    except Exception:  # pragma: no cover - printing never fails on symbols in practice
        return str(symbol)


def _as_array(trajectory: Any, name: str, k: int) -> np.ndarray:
    value = getattr(trajectory, name, None)
    if value is None:
        return np.zeros((k, 0))
    arr = np.asarray(value, dtype=float)
    return arr.reshape(k, -1) if arr.size else np.zeros((k, 0))


def _legend(ax, n: int) -> None:
    if 0 < n <= _MAX_LEGEND:
        ax.legend(loc="upper left", fontsize="small", ncol=1 if n <= 4 else 2, framealpha=0.7)


def _energy_values(trajectory: Any, energy: Any, constants: Mapping | None) -> np.ndarray | None:
    if energy is None:
        return None
    if isinstance(energy, sm.Basic):
        return evaluate_along(trajectory, [energy], constants, "energy")[:, 0]
    arr = np.asarray(energy, dtype=float).ravel()
    if arr.shape != (len(np.asarray(trajectory.t)),):
        raise InputError(f"energy has {arr.size} values but the trajectory has {len(trajectory.t)} samples")
    return arr


def residual_norms(trajectory: Any) -> dict[str, np.ndarray]:
    """Max-abs constraint residuals per sample: {'holonomic': (k,), 'velocity': (k,)} (present ones)."""
    k = len(np.asarray(trajectory.t))
    out = {}
    for key, attr in (("holonomic", "holonomic_residuals"), ("velocity", "velocity_residuals")):
        arr = _as_array(trajectory, attr, k)
        if arr.shape[1]:
            out[key] = np.max(np.abs(arr), axis=1)
    return out


def _plot_residuals(ax, trajectory: Any, t: np.ndarray, per_row: bool = False, label_prefix: str = "",
                    units: Mapping[str, str] | None = None) -> bool:
    """Draw |residual| on a log axis (per constraint, or the max over them); True if drawn.

    ``units``: {"holonomic": "m", "velocity": "m/s"} shown in the legend and the axis label.
    """
    k = len(t)
    drawn = False
    units = dict(units or {})
    styles = {"holonomic_residuals": ("-", r"$|f_h|$"), "velocity_residuals": ("--", r"$|B u + b|$")}
    shown = []
    for attr, (style, name) in styles.items():
        unit = units.get(attr.split("_")[0])
        if unit:
            name = f"{name} [{unit}]"
        arr = _as_array(trajectory, attr, k)
        if not arr.shape[1]:
            continue
        rows = range(arr.shape[1]) if per_row and arr.shape[1] <= 6 else [None]
        for i in rows:
            values = np.abs(arr[:, i]) if i is not None else np.max(np.abs(arr), axis=1)
            tag = f"{name}[{i}]" if i is not None and arr.shape[1] > 1 else (
                name if i is not None or arr.shape[1] == 1 else f"max {name}")
            ax.semilogy(t, np.maximum(values, RESIDUAL_FLOOR), style, lw=1.0, label=label_prefix + tag)
            drawn = True
            if unit and unit not in shown:
                shown.append(unit)
    if drawn:
        ax.set_ylabel(f"constraint residual [{', '.join(shown) or 'SI units'}]")
        lo, hi = ax.get_ylim()
        ax.set_ylim(max(lo, RESIDUAL_FLOOR / 2), max(hi, 1e-12))
    return drawn


@moved_keywords("plot", {"figure": (FigureOptions, ("title", "figsize"))})
def plot(trajectory: Any, model: Any = None, *, energy: Any = None,
         outputs: Mapping[str, Any] | None = None, constants: Mapping | None = None,
         panels: Sequence[str] | None = None, units: Mapping | None = None, angles: str = "deg",
         smooth: bool | None = None, figure: FigureOptions | None = None) -> Figure:
    """Time histories of a trajectory as one matplotlib Figure, with a unit on every axis.

    Parameters
    ----------
    trajectory : a :class:`symbody.Trajectory` (t (k,), q (k, N), u (k, o), coordinates,
        speeds, holonomic_residuals (k, M), velocity_residuals (k, m), constants).
    model : what the trajectory was simulated from (NumericModel, EquationsOfMotion or zoo
        Model): tells which coordinates are angles and which lengths
        (:func:`symbody.presentation.units.quantity_kinds`).  Without it (and without
        ``units``) coordinates and speeds are plotted unconverted, in "SI units".
    energy : total energy, a sympy expression in q, u and constants (evaluated along the
        trajectory) or an array (k,).  Plotted as E(t) - E(t0), the drift, in J.
    outputs : {name: expression or array (k,)} extra quantities, one shared panel.
    constants : values for constants that are not in ``trajectory.constants`` (or overrides),
        dict keyed by Symbol or name.
    panels : which panels to draw, in order, among "q", "u", "extra" (extra first-order states), "residuals" (log scale of
        the absolute residuals), "energy" and "outputs"; default: every one that has data.  "q" and "u"
        give one axis per kind of quantity (angles in deg, lengths in m; angular rates in
        deg/s, velocities in m/s), never two units on one axis.
    units : {symbol or name: unit or kind} overrides, e.g.
        ``{"q3": "m", "u3": "m/s", "q1": "rad"}`` (see ``symbody.presentation.units.UNITS``).
    angles : "deg" (default) or "rad" for angles and angular rates.
    smooth : draw q and u through a cubic interpolant on a fine grid (True), through the
        samples only (False), or (None, default) interpolate when the samples are the
        solver's own unevenly spaced steps (no ``t_eval``).  Interpolation never crosses a
        repeated time (an impact or a restart).
    figure : a :class:`~symbody.presentation.options.FigureOptions`: ``title`` (default:
        the trajectory's constraint mode), ``figsize`` (default: 9 inches wide, 2 per
        axis), ``dpi``, ``close``.  The former keywords ``title=`` and ``figsize=`` still
        work for one release, with a DeprecationWarning.

    Returns the matplotlib ``Figure``.
    """
    import matplotlib.pyplot as plt

    figure = checked_option(figure, FigureOptions, "figure")
    data = _PlotData(trajectory, model, units, angles)
    shown = data.panels(panels, energy, outputs, constants)
    data.smooth_curves(smooth)
    rows = data.axis_rows(shown)
    fig, axes = plt.subplots(len(rows), 1, sharex=True, squeeze=False,
                             figsize=figure.figsize or (9.0, 1.0 + 2.0 * len(rows)), **_dpi(figure))
    axes = axes[:, 0]
    for ax, (panel, unit, members) in zip(axes, rows, strict=True):
        data.draw(ax, panel, unit, members)
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time [s]")
    if figure.title is None:
        mode = getattr(trajectory, "constraints", None)
        figure = replace(figure, title=f"constraints = {mode!r}" if mode else None)
    return _finish(fig, figure, fig.suptitle)


class _PlotData:
    """What :func:`plot` draws: the samples ``t`` (k,), ``q`` (k, N), ``u`` (k, o), their
    symbols and units, the curves through them, the energy and output values."""

    def __init__(self, trajectory: Any, model: Any, units: Mapping | None, angles: str) -> None:
        self.trajectory, self.model = trajectory, model
        t = self.t = np.asarray(trajectory.t, dtype=float)
        k = len(t)
        q = self.q = _as_array(trajectory, "q", k)
        u = self.u = _as_array(trajectory, "u", k)
        self.coordinates = list(getattr(trajectory, "coordinates", ())
                                or [f"q{i + 1}" for i in range(q.shape[1])])
        self.speed_symbols = list(getattr(trajectory, "speeds", ())
                                  or [f"u{i + 1}" for i in range(u.shape[1])])
        self.extra_states = tuple(getattr(trajectory, "extra_states", ()) or ())
        self.units, self.angles = units, angles
        self.energy_values = self.output_values = None
        self.output_names: list = []

    def panels(self, panels: Sequence[str] | None, energy: Any, outputs: Mapping | None,
               constants: Mapping | None) -> list[str]:
        """The panels asked for that have data (energy and outputs evaluated here)."""
        trajectory = self.trajectory
        known = ("q", "u", "extra", "residuals", "energy", "outputs")
        wanted = list(known if panels is None else panels)
        for name in wanted:
            if name not in known:
                raise InputError(f"unknown panel {name!r}; choose among {', '.join(known)}")
        if "energy" in wanted and energy is None and panels is not None:
            raise InputError("the energy panel needs energy= (an expression or an array)")
        if "outputs" in wanted and not outputs and panels is not None:
            raise InputError("the outputs panel needs outputs= ({name: expression or array})")
        if "energy" in wanted:
            self.energy_values = _energy_values(trajectory, energy, constants)
        if outputs and "outputs" in wanted:
            self.output_names = list(outputs)
            self.output_values = evaluate_along(trajectory, [outputs[n] for n in self.output_names],
                                                constants, "output")
        available = {"q": self.q.shape[1] > 0, "u": self.u.shape[1] > 0,
                     "extra": bool(self.extra_states),
                     "residuals": bool(residual_norms(trajectory)),
                     "energy": self.energy_values is not None,
                     "outputs": self.output_values is not None}
        shown = [name for name in wanted if available[name]]
        if not shown:
            raise InputError(f"nothing to plot: the trajectory has no data for the panels {wanted}")
        return shown

    def smooth_curves(self, smooth: bool | None) -> None:
        """The fine curves of q and u (see :func:`_curves`) and the segment boundaries."""
        self.bounds = segment_starts(self.trajectory)
        self.t_fine, self.q_fine, self.u_fine = _curves(
            self.t, self.q, self.u, smooth, dense=_dense_output(self.trajectory, self.q.shape[1]),
            boundaries=self.bounds)

    def axis_rows(self, panels: list[str]) -> list[tuple[str, Any, list]]:
        """One axis per (panel, unit): [(panel, unit, [(column, symbol, dashed)])]."""
        kinds = _kinds(self.trajectory, self.model)
        unit_of = units_for(self.coordinates + self.speed_symbols, kinds, self.units, self.angles)
        states = set(getattr(self.trajectory, "states", ()) or ())
        rows: list[tuple[str, Any, list]] = []
        for panel in panels:
            if panel in ("q", "u"):
                symbols = self.coordinates if panel == "q" else self.speed_symbols
                groups: dict = {}
                for i, sym in enumerate(symbols):
                    dashed = panel == "u" and bool(states) and sym not in states
                    groups.setdefault(unit_of[sym], []).append((i, sym, dashed))
                rows += [(panel, unit, members) for unit, members in sorted(
                    groups.items(), key=lambda item: _KIND_ORDER.index(item[0].kind))]
            else:
                rows.append((panel, None, []))
        return rows

    def draw(self, ax: Any, panel: str, unit: Any, members: list) -> None:
        """Draw one axis of ``panel`` (its quantities of one ``unit`` for "q" and "u")."""
        t, bounds, trajectory = self.t, self.bounds, self.trajectory
        if panel in ("q", "u"):
            values = self.q_fine if panel == "q" else self.u_fine
            for i, sym, dashed in members:
                ax.plot(self.t_fine, values[:, i] * unit.scale, "--" if dashed else "-",
                        label=symbol_label(sym))
            ax.set_ylabel(f"{_KIND_TITLE[panel, unit.kind]} [{unit.label}]")
            _legend(ax, len(members))
        elif panel == "extra":
            # extra first-order states (e.g. muscle activations), at the samples
            for sym in self.extra_states:
                ax.plot(*_gapped(t, trajectory.column(sym), bounds), label=symbol_label(sym))
            ax.set_ylabel("extra states")
            _legend(ax, len(self.extra_states))
        elif panel == "residuals":
            _plot_residuals(ax, trajectory, t, per_row=False,
                            units=_residual_units(trajectory, self.model))
            _legend(ax, len(ax.get_lines()))
        elif panel == "energy":
            # at the samples (an interpolant would add its own error to a small drift); few
            # samples are marked so that straight segments are not read as the solution
            energy = self.energy_values
            ax.plot(*_gapped(t, energy - energy[0], bounds), ".-" if len(t) < 200 else "-",
                    color="C3")
            ax.set_ylabel(r"$E(t) - E(t_0)$ [J]")
            ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 3))
        elif panel == "outputs":
            for j, name in enumerate(self.output_names):
                ax.plot(*_gapped(t, self.output_values[:, j], bounds), label=name)
            ax.set_ylabel("outputs [SI units]")
            _legend(ax, len(self.output_names))


_KIND_ORDER = ("angle", "length", "angular rate", "velocity", "other")
_KIND_TITLE = {("q", "angle"): "angles", ("q", "length"): "lengths", ("q", "other"): "coordinates",
               ("u", "angular rate"): "angular rates", ("u", "velocity"): "velocities",
               ("u", "other"): "speeds", ("q", "angular rate"): "coordinates",
               ("q", "velocity"): "coordinates", ("u", "angle"): "speeds", ("u", "length"): "speeds"}


def _residual_units(trajectory: Any, model: Any) -> dict:
    source = model if model is not None else (getattr(trajectory, "model", None)
                                               or getattr(trajectory, "eom", None))
    return residual_units(source) if source is not None else {}


def _kinds(trajectory: Any, model: Any) -> dict:
    """Kinds of the trajectory's coordinates and speeds from ``model`` (or one it carries)."""
    source = model
    if source is None:
        source = getattr(trajectory, "model", None) or getattr(trajectory, "eom", None)
    if source is None:
        return {}
    return quantity_kinds(source)


#: Interpolate (smooth=None) when the samples are this much more unevenly spaced.
_UNEVEN = 1.5
_FINE_SAMPLES = 1200


def _dense_output(trajectory: Any, n_coordinates: int):
    """The trajectory's own dense output as f(times) -> (q (k, N), {speed column: (k,)}), or None.

    A simulation's trajectory carries the integrator's own (``trajectory.interpolate``: all
    of q and u, back on the constraints); one built from samples may carry x' at them
    (``trajectory(t)`` returning [q, u_ind] with ``trajectory.xdot`` known): a cubic Hermite
    interpolant with the true slopes, more accurate than a spline through the samples.
    """
    if getattr(trajectory, "steps", None) is not None and hasattr(trajectory, "interpolate"):
        # a simulation's trajectory: the integrator's dense output, on the constraints, for
        # all coordinates and speeds
        def interpolated(times: np.ndarray):
            q, u = trajectory.interpolate(times)
            return q, {i: u[:, i] for i in range(u.shape[1])}

        return interpolated
    if not callable(trajectory) or getattr(trajectory, "xdot", None) is None:
        return None
    speeds = list(getattr(trajectory, "speeds", ()))
    states = list(getattr(trajectory, "states", ()))
    columns = {speeds.index(s): n_coordinates + j for j, s in enumerate(states[n_coordinates:])
               if s in speeds}

    def evaluate(times: np.ndarray):
        x = np.asarray(trajectory(times), dtype=float).reshape(len(times), -1)
        return x[:, :n_coordinates], {i: x[:, col] for i, col in columns.items()}

    return evaluate


def _gapped(t: np.ndarray, values: np.ndarray, bounds: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """(t, values) at the samples with a NaN between samples of different segments, so that
    a line drawn through them is not continued across an impact."""
    if not len(bounds) or len(t) < 2:
        return t, values
    seg = sample_segments(t, bounds)
    cut = np.flatnonzero(np.diff(seg) != 0) + 1
    return (np.insert(np.asarray(t, dtype=float), cut, np.nan),
            np.insert(np.asarray(values, dtype=float), cut, np.nan))


def _segment_curves(t, q, u, dense, boundaries, smooth):
    """One fine curve per segment from the dense output (q, independent speeds) and a spline
    through the segment's own samples (dependent speeds); NaN gaps at the impacts."""
    from scipy.interpolate import CubicSpline

    seg = sample_segments(t, boundaries)
    t0, t1 = float(t[0]), float(t[-1])
    edges = [t0, *boundaries, t1]
    span = max(abs(t1 - t0), 1e-300)
    ts, qs, us = [], [], []
    for j in range(len(edges) - 1):
        a, b = edges[j], edges[j + 1]
        if a == b:
            continue
        mine = np.flatnonzero(seg == j)
        if smooth is False:
            fine = t[mine]
            q_fine, u_fine = q[mine], u[mine]
        else:
            count = max(int(_FINE_SAMPLES * abs(b - a) / span), 4 * len(mine), 8)
            fine = np.linspace(a, b, count)
            if j < len(edges) - 2:
                fine[-1] = np.nextafter(b, a)      # the state before the jump, not after
            q_fine, u_dense = dense(fine)
            u_fine = np.full((count, u.shape[1]), np.nan)
            for i, values in u_dense.items():
                u_fine[:, i] = values
            rest = [i for i in range(u.shape[1]) if i not in u_dense]
            if rest and len(mine):
                ts_j = t[mine]
                keep = np.r_[True, np.diff(ts_j) != 0]
                ts_j, u_j = ts_j[keep], u[mine][keep][:, rest]
                if len(ts_j) >= 4:
                    u_fine[:, rest] = CubicSpline(ts_j, u_j, axis=0)(fine)
                else:
                    u_fine[:, rest] = np.column_stack([np.interp(fine, ts_j, u_j[:, c])
                                                       for c in range(len(rest))])
        ts.append(fine), qs.append(q_fine), us.append(u_fine)
        if j < len(edges) - 2:       # a gap in the line at the jump
            ts.append([np.nan]), qs.append(np.full((1, q.shape[1]), np.nan))
            us.append(np.full((1, u.shape[1]), np.nan))
    return np.concatenate(ts), np.concatenate(qs), np.concatenate(us)


def _curves(t: np.ndarray, q: np.ndarray, u: np.ndarray, smooth: bool | None, dense=None,
            boundaries: Sequence[float] = ()):
    """(t, q, u) to draw: the samples, or interpolants of them on a fine grid.

    Between repeated times (impacts, restarts) each stretch is interpolated on its own;
    with ``boundaries`` (the impact times, :func:`segment_starts`) and ``dense``, each
    segment is drawn from the dense output on its own fine grid however few samples it
    has (a bouncing ball's apexes are the true ones), with a gap at each impact.
    With ``dense`` (see ``_dense_output``) the trajectory's dense output gives q and the
    independent speeds inside each stretch; otherwise, and for dependent speeds, scipy's
    ``CubicSpline`` through the samples (the solver's steps are accurate to its tolerance;
    the spline adds an O(h^4) error between them, far below the line width for the step
    sizes an accurate solver takes).
    """
    if dense is not None and len(boundaries) and len(t) >= 2:
        # segments between impacts, each drawn on its own, whatever their number of samples
        return _segment_curves(t, q, u, dense, list(boundaries), smooth)
    if len(t) < 4 or smooth is False:
        return t, q, u
    dt = np.diff(t)
    if smooth is None:
        positive = dt[dt > 0]
        if positive.size < 3 or positive.max() <= _UNEVEN * positive.min() or len(t) >= _FINE_SAMPLES:
            return t, q, u
    from scipy.interpolate import CubicSpline

    breaks = np.flatnonzero(dt <= 0) + 1
    starts, stops = np.r_[0, breaks], np.r_[breaks, len(t)]
    span = max(float(t[-1] - t[0]), 1e-300)
    ts, qs, us = [], [], []
    for a, b in zip(starts, stops, strict=True):
        seg = slice(a, b)
        if b - a < 4:
            ts.append(t[seg]), qs.append(q[seg]), us.append(u[seg])
        else:
            count = max(int(_FINE_SAMPLES * (t[b - 1] - t[a]) / span), 4 * (b - a))
            fine = np.linspace(t[a], t[b - 1], count)
            ts.append(fine)
            q_fine = CubicSpline(t[seg], q[seg], axis=0)(fine) if q.shape[1] else np.zeros((count, 0))
            u_fine = CubicSpline(t[seg], u[seg], axis=0)(fine) if u.shape[1] else np.zeros((count, 0))
            if dense is not None:
                # inside the stretch only: at a repeated time the dense output gives the state
                # after the jump, the stretch ends with the one before
                q_dense, u_dense = dense(fine[1:-1])
                q_fine[1:-1] = q_dense
                for i, values in u_dense.items():
                    u_fine[1:-1, i] = values
            qs.append(q_fine)
            us.append(u_fine)
        if b < len(t):      # a gap in the line at a repeated time (a jump)
            ts.append([np.nan]), qs.append(np.full((1, q.shape[1]), np.nan))
            us.append(np.full((1, u.shape[1]), np.nan))
    return np.concatenate(ts), np.concatenate(qs), np.concatenate(us)


@moved_keywords("plot_comparison", {"figure": (FigureOptions, ("title", "figsize"))})
def plot_comparison(trajectories: Mapping[str, Any], *, energy: Any = None,
                    constants: Mapping | None = None, model: Any = None,
                    figure: FigureOptions | None = None) -> Figure:
    """Residual and energy-drift panels of several runs side by side (one column per run).

    ``model``: what the runs were simulated from (for the residuals' units, as in :func:`plot`).

    ``trajectories``: {label: Trajectory}, e.g. {"constraints='none'": a, "constraints='project'": b}.
    ``energy``: a sympy expression (evaluated for every run) or {label: array (k,)}.
    ``figure``: :class:`~symbody.presentation.options.FigureOptions` (``title``, ``figsize``,
    ``dpi``, ``close``; the former keywords ``title=``, ``figsize=`` warn).
    Rows share their y axis, so the columns compare directly.  Returns the Figure.
    """
    import matplotlib.pyplot as plt

    figure = checked_option(figure, FigureOptions, "figure")

    labels = list(trajectories)
    if not labels:
        raise InputError("plot_comparison needs at least one trajectory")
    energies = {}
    if energy is not None:
        for label in labels:
            e = energy[label] if isinstance(energy, Mapping) else energy
            energies[label] = _energy_values(trajectories[label], e, constants)
    rows = ["residuals"] + (["energy"] if energies else [])
    fig, axes = plt.subplots(len(rows), len(labels), sharex="col", sharey="row", squeeze=False,
                             figsize=figure.figsize or (5.0 * len(labels), 1.5 + 2.5 * len(rows)),
                             **_dpi(figure))
    for j, label in enumerate(labels):
        traj = trajectories[label]
        t = np.asarray(traj.t, dtype=float)
        axes[0, j].set_title(label)
        for i, row in enumerate(rows):
            ax = axes[i, j]
            if row == "residuals":
                if not _plot_residuals(ax, traj, t, per_row=False, units=_residual_units(traj, model)):
                    ax.text(0.5, 0.5, "no constraints", ha="center", va="center", transform=ax.transAxes)
                _legend(ax, len(ax.get_lines()))
            else:
                ax.plot(t, energies[label] - energies[label][0], color="C3")
                ax.set_ylabel(r"$E(t) - E(t_0)$ [J]")
            ax.grid(True, alpha=0.3)
            if j:
                ax.set_ylabel("")
        axes[-1, j].set_xlabel("time [s]")
    # a shared log axis: show the full range of every column
    lo = min(ax.get_ylim()[0] for ax in axes[0])
    hi = max(ax.get_ylim()[1] for ax in axes[0])
    axes[0, 0].set_ylim(max(lo, RESIDUAL_FLOOR / 2), hi)
    return _finish(fig, figure, fig.suptitle)


@moved_keywords("plot_eigenvalues", {"figure": (FigureOptions, ("title", "figsize"))})
def plot_eigenvalues(parameter: Sequence[float], eigenvalues: np.ndarray, *,
                     parameter_name: str = "v", unit: str = "m/s", stability: bool = True,
                     figure: FigureOptions | None = None) -> Figure:
    """Real (dots) and imaginary (small grey dots) parts of eigenvalues against a parameter.

    ``parameter`` (s,), ``eigenvalues`` (s, n) complex.  The zero line separates stable
    (Re < 0) from unstable motion, as in the Whipple-bicycle benchmark figure; parameter
    values where all non-zero eigenvalues have Re < 0 are shaded and labelled "stable" --
    only with ``stability=True``: pass False unless every linearization point is an
    equilibrium or a steady motion (otherwise eigenvalues say nothing about stability).
    ``figure``: :class:`~symbody.presentation.options.FigureOptions` (``title``, ``figsize``,
    ``dpi``, ``close``; the former keywords ``title=``, ``figsize=`` warn).  Returns the Figure.
    """
    import matplotlib.pyplot as plt

    figure = checked_option(figure, FigureOptions, "figure")

    x = np.asarray(parameter, dtype=float)
    ev = np.asarray(eigenvalues)
    if ev.ndim != 2 or ev.shape[0] != len(x):
        raise InputError(f"eigenvalues must have shape ({len(x)}, n), not {ev.shape}")
    fig, ax = plt.subplots(figsize=figure.figsize or (8.0, 5.0), **_dpi(figure))
    xs = np.repeat(x[:, None], ev.shape[1], axis=1)
    ax.plot(xs.ravel(), ev.real.ravel(), "o", ms=3, color="C0", label="real part")
    imag = np.abs(ev.imag.ravel())
    nonzero = imag > 1e-9
    ax.plot(xs.ravel()[nonzero], imag[nonzero], "o", ms=2, color="0.55", label="|imaginary part|")
    ax.axhline(0.0, color="k", lw=0.8)
    # where every non-zero eigenvalue has a negative real part (zero ones come from
    # ignorable coordinates such as heading), the motion is asymptotically stable
    stable = np.array([np.all(row.real[np.abs(row) > 1e-9 * max(1.0, np.max(np.abs(row)))] < 0)
                       for row in ev])
    if stability and stable.any() and len(x) > 1:
        step = np.min(np.abs(np.diff(x))) / 2 if len(x) > 1 else 0.0
        for i in np.flatnonzero(stable):
            ax.axvspan(x[i] - step, x[i] + step, color="C2", alpha=0.15, lw=0,
                       label="stable" if i == np.flatnonzero(stable)[0] else None)
    finite = ev.real[np.isfinite(ev.real)]
    if finite.size:
        span = np.percentile(np.abs(finite), 95)
        ax.set_ylim(-1.5 * span - 1, 1.5 * span + 1)
    ax.set_xlabel(f"{parameter_name} [{unit}]" if unit else parameter_name)
    ax.set_ylabel("eigenvalue [1/s]")
    ax.legend(fontsize="small")
    ax.grid(True, alpha=0.3)
    return _finish(fig, figure, ax.set_title)


def _dpi(figure: FigureOptions) -> dict:
    """matplotlib's keyword for the figure's dpi when one is given."""
    return {"dpi": figure.dpi} if figure.dpi is not None else {}


def _finish(fig: Figure, figure: FigureOptions, set_title: Any) -> Figure:
    """Title (``set_title(figure.title)`` when given), tight layout, closed if asked."""
    if figure.title:
        set_title(figure.title)
    fig.tight_layout()
    if figure.close:
        import matplotlib.pyplot as plt

        plt.close(fig)
    return fig
