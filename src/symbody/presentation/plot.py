"""Time-history plots of trajectories: coordinates, speeds, constraint residuals, energy.

``plot(trajectory)`` draws one panel per quantity, sharing the time axis::

    q(t)                 every coordinate (k, N)
    u(t)                 every speed (k, o), dependent ones dashed
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
from typing import Any

import numpy as np
import sympy as sm

from ..errors import InputError
from ._trajectory_evaluation import evaluate_along

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


def _plot_residuals(ax, trajectory: Any, t: np.ndarray, per_row: bool = False, label_prefix: str = "") -> bool:
    """Draw |residual| on a log axis (per constraint, or the max over them); True if drawn."""
    k = len(t)
    drawn = False
    styles = {"holonomic_residuals": ("-", r"$|f_h|$"), "velocity_residuals": ("--", r"$|B u + b|$")}
    for attr, (style, name) in styles.items():
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
    if drawn:
        ax.set_ylabel("constraint residual")
        lo, hi = ax.get_ylim()
        ax.set_ylim(max(lo, RESIDUAL_FLOOR / 2), max(hi, 1e-12))
    return drawn


def plot(trajectory: Any, *, energy: Any = None, outputs: Mapping[str, Any] | None = None,
         constants: Mapping | None = None, panels: Sequence[str] | None = None,
         title: str | None = None, figsize: tuple[float, float] | None = None):
    """Time histories of a trajectory as one matplotlib Figure.

    Parameters
    ----------
    trajectory : a :class:`symbody.Trajectory` (t (k,), q (k, N), u (k, o), coordinates,
        speeds, holonomic_residuals (k, M), velocity_residuals (k, m), constants).
    energy : total energy, a sympy expression in q, u and constants (evaluated along the
        trajectory) or an array (k,).  Plotted as E(t) - E(t0), the drift.
    outputs : {name: expression or array (k,)} extra quantities, one shared panel.
    constants : values for constants that are not in ``trajectory.constants`` (or overrides),
        dict keyed by Symbol or name.
    panels : which panels to draw, in order, among "q", "u", "residuals" (log scale of
        |residual|), "energy" and "outputs"; default: every one that has data.

    Returns the matplotlib ``Figure``.
    """
    import matplotlib.pyplot as plt

    t = np.asarray(trajectory.t, dtype=float)
    k = len(t)
    q = _as_array(trajectory, "q", k)
    u = _as_array(trajectory, "u", k)
    coordinates = list(getattr(trajectory, "coordinates", ()) or [f"q{i + 1}" for i in range(q.shape[1])])
    speed_symbols = list(getattr(trajectory, "speeds", ()) or [f"u{i + 1}" for i in range(u.shape[1])])
    known = ("q", "u", "residuals", "energy", "outputs")
    wanted = list(known if panels is None else panels)
    for name in wanted:
        if name not in known:
            raise InputError(f"unknown panel {name!r}; choose among {', '.join(known)}")
    if "energy" in wanted and energy is None and panels is not None:
        raise InputError("the energy panel needs energy= (an expression or an array)")
    if "outputs" in wanted and not outputs and panels is not None:
        raise InputError("the outputs panel needs outputs= ({name: expression or array})")
    energy_values = _energy_values(trajectory, energy, constants) if "energy" in wanted else None
    output_values = None
    if outputs and "outputs" in wanted:
        names = list(outputs)
        output_values = evaluate_along(trajectory, [outputs[n] for n in names], constants, "output")
    available = {"q": q.shape[1] > 0, "u": u.shape[1] > 0, "residuals": bool(residual_norms(trajectory)),
                 "energy": energy_values is not None, "outputs": output_values is not None}
    panels = [name for name in wanted if available[name]]
    if not panels:
        raise InputError(f"nothing to plot: the trajectory has no data for the panels {wanted}")
    fig, axes = plt.subplots(len(panels), 1, sharex=True, squeeze=False,
                             figsize=figsize or (9.0, 1.0 + 2.0 * len(panels)))
    axes = axes[:, 0]
    for ax, panel in zip(axes, panels, strict=True):
        if panel == "q":
            for i, sym in enumerate(coordinates):
                ax.plot(t, q[:, i], label=symbol_label(sym))
            ax.set_ylabel("coordinates")
            _legend(ax, len(coordinates))
        elif panel == "u":
            states = set(getattr(trajectory, "states", ()) or ())
            for i, sym in enumerate(speed_symbols):
                dependent = bool(states) and sym not in states
                ax.plot(t, u[:, i], "--" if dependent else "-", label=symbol_label(sym))
            ax.set_ylabel("speeds")
            _legend(ax, len(speed_symbols))
        elif panel == "residuals":
            _plot_residuals(ax, trajectory, t, per_row=False)
            _legend(ax, len(ax.get_lines()))
        elif panel == "energy":
            ax.plot(t, energy_values - energy_values[0], color="C3")
            ax.set_ylabel(r"$E(t) - E(t_0)$")
            ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 3))
        elif panel == "outputs":
            for j, name in enumerate(names):
                ax.plot(t, output_values[:, j], label=name)
            ax.set_ylabel("outputs")
            _legend(ax, len(names))
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time [s]")
    if title is None:
        mode = getattr(trajectory, "constraints", None)
        title = f"constraints = {mode!r}" if mode else None
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_comparison(trajectories: Mapping[str, Any], *, energy: Any = None,
                    constants: Mapping | None = None, title: str | None = None,
                    figsize: tuple[float, float] | None = None):
    """Residual and energy-drift panels of several runs side by side (one column per run).

    ``trajectories``: {label: Trajectory}, e.g. {"constraints='none'": a, "constraints='project'": b}.
    ``energy``: a sympy expression (evaluated for every run) or {label: array (k,)}.
    Rows share their y axis, so the columns compare directly.  Returns the Figure.
    """
    import matplotlib.pyplot as plt

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
                             figsize=figsize or (5.0 * len(labels), 1.5 + 2.5 * len(rows)))
    for j, label in enumerate(labels):
        traj = trajectories[label]
        t = np.asarray(traj.t, dtype=float)
        axes[0, j].set_title(label)
        for i, row in enumerate(rows):
            ax = axes[i, j]
            if row == "residuals":
                if not _plot_residuals(ax, traj, t, per_row=False):
                    ax.text(0.5, 0.5, "no constraints", ha="center", va="center", transform=ax.transAxes)
                _legend(ax, len(ax.get_lines()))
            else:
                ax.plot(t, energies[label] - energies[label][0], color="C3")
                ax.set_ylabel(r"$E(t) - E(t_0)$")
            ax.grid(True, alpha=0.3)
            if j:
                ax.set_ylabel("")
        axes[-1, j].set_xlabel("time [s]")
    # a shared log axis: show the full range of every column
    lo = min(ax.get_ylim()[0] for ax in axes[0])
    hi = max(ax.get_ylim()[1] for ax in axes[0])
    axes[0, 0].set_ylim(max(lo, RESIDUAL_FLOOR / 2), hi)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_eigenvalues(parameter: Sequence[float], eigenvalues: np.ndarray, *,
                     parameter_name: str = "v", unit: str = "m/s", title: str | None = None,
                     figsize: tuple[float, float] | None = None):
    """Real (dots) and imaginary (small grey dots) parts of eigenvalues against a parameter.

    ``parameter`` (s,), ``eigenvalues`` (s, n) complex.  The zero line separates stable
    (Re < 0) from unstable motion, as in the Whipple-bicycle benchmark figure; parameter
    values where all non-zero eigenvalues have Re < 0 are shaded.  Returns the Figure.
    """
    import matplotlib.pyplot as plt

    x = np.asarray(parameter, dtype=float)
    ev = np.asarray(eigenvalues)
    if ev.ndim != 2 or ev.shape[0] != len(x):
        raise InputError(f"eigenvalues must have shape ({len(x)}, n), not {ev.shape}")
    fig, ax = plt.subplots(figsize=figsize or (8.0, 5.0))
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
    if stable.any() and len(x) > 1:
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
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig
