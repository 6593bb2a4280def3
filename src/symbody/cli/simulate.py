"""``symbody simulate``: a zoo or user model, or a saved model file; plots, animation, data,
summary."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from .arguments import _parse_number, _parse_sets, _symbol_name
from .console import Console, UsageError
from .models import _model_and_time_span
from .output import _fmt, _list_written, _save_animation, _save_figure, _write_trajectory
from .robots import _is_urdf, _robot_option_check, _simulate_robot_command
from .running import _compile, _drift_numbers, _energy_values, _mode_label, _output_times, _simulate


def _saved_model_path(spec: str) -> Path | None:
    """The file of a saved model (``model.save``) named on the command line, else None."""
    path = Path(spec)
    for candidate in (path, path.with_name(path.name + ".symbody.npz")):
        if candidate.suffix == ".npz" and candidate.is_file():
            return candidate
    if path.suffix == ".npz":
        raise UsageError(f"no such model file: {path}")
    return None


def _simulate_saved_model(args: argparse.Namespace, console: Console, path: Path) -> int:
    """``symbody simulate FILE.npz``: a model saved with ``model.save`` has the equations but
    not the numbers of a run, so every constant and independent state comes from ``--set``
    (dependent coordinates are optional guesses, 0 when not given; dependent speeds follow),
    and ``--tf`` is needed.  Writes the trajectory (.npz, .csv), the time histories and a
    summary; the file's machine code runs, as with ``sb.load_model``."""
    from ..analysis import Solver, simulate
    from ..compilation.numeric_model import load_model
    from ..presentation.options import FigureOptions
    from ..presentation.plot import plot

    if args.tf is None:
        raise UsageError(f"{path}: a saved model has no time span of its own; give --tf")
    console.step(f"loading {path} ...")
    numeric = load_model(path)
    values = {name: _parse_number(name, text) for name, text in _parse_sets(args.set)}
    constants = {str(c): c for c in numeric.constants}
    states = {_symbol_name(x): x for x in numeric.states}
    inputs = {_symbol_name(r): r for r in numeric.specifieds}
    unknown = [n for n in values if n not in constants and n not in states and n not in inputs]
    if unknown:
        raise UsageError(f"{path}: {unknown[0]!r} is not a constant, state or specified input of "
                         f"the model; its constants: {', '.join(constants)}; its states: "
                         f"{', '.join(states)}; its inputs: {', '.join(inputs) or 'none'}")
    dependent = {_symbol_name(x) for x in numeric.dependent_coordinates}
    missing = [n for n in constants if n not in values] + \
        [n for n in states if n not in values and n not in dependent]
    if missing:
        raise UsageError(f"{path}: give every constant and independent state with --set; missing "
                         f"{', '.join(missing)}")
    p = {n: values[n] for n in constants}
    x0 = {n: values.get(n, 0.0) for n in states}
    r = np.array([values.get(n, 0.0) for n in inputs]) if inputs else None
    t0, tf = 0.0, float(args.tf)
    if not tf > t0:
        raise UsageError(f"--tf must be greater than 0, got {tf:g}")
    tolerances = {k: v for k, v in (("rtol", args.rtol), ("atol", args.atol)) if v is not None}
    console.step(f"simulating {t0:g} -> {tf:g} s with constraints={args.constraints!r} ...")
    trajectory = simulate(numeric, (t0, tf), x0, p, constraints=args.constraints,
                          t_eval=_output_times(t0, tf), specifieds=r,
                          solver=Solver(progress=False if args.quiet else None, **tolerances))
    key = path.name.removesuffix(".npz").removesuffix(".symbody")
    out = Path(args.out) if args.out else Path("symbody-output") / key
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    title = f"{key}, constraints={_mode_label(args.constraints, trajectory)}"
    _save_figure(plot(trajectory, panels=("q", "u"), figure=FigureOptions(title=title)),
                 out / "time_histories.png", written)
    _write_trajectory(trajectory, out, written)
    drift = _drift_numbers(trajectory, None)
    lines = [f"model          {path}", f"time span      {t0:g} -> {tf:g} s, {len(trajectory.t)} samples",
             f"constraints    {_mode_label(args.constraints, trajectory)}",
             f"status         {'success' if trajectory.success else 'FAILED'}: {trajectory.message}",
             f"max |f_h|      {_fmt(drift['holonomic'])}", f"max |B u + b|  {_fmt(drift['velocity'])}",
             "", "constants:", *[f"  {k} = {v:g}" for k, v in p.items()],
             "initial state (dependent coordinates: guesses, solved):",
             *[f"  {k} = {v:.10g}" for k, v in x0.items()]]
    summary_path = out / "summary.txt"
    summary_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    written.append(summary_path)
    _list_written(console, written, f"wrote {len(written)} files to {out}/:")
    return 0 if trajectory.success else 1


def cmd_simulate(args: argparse.Namespace, console: Console) -> int:
    from ..presentation.options import FigureOptions
    from ..presentation.plot import plot

    _robot_option_check(args)
    if _is_urdf(args.model):
        return _simulate_robot_command(args, console)
    saved = _saved_model_path(args.model)
    if saved is not None:
        return _simulate_saved_model(args, console, saved)
    key, model, inputs, t0, tf = _model_and_time_span(args, console)
    out = Path(args.out) if args.out else Path("symbody-output") / key
    out.mkdir(parents=True, exist_ok=True)

    numeric = _compile(model, console, args.quiet)
    console.step(f"simulating {t0:g} -> {tf:g} s with constraints={args.constraints!r} ...")
    trajectory = _simulate(model, numeric, tf, args.constraints, args.quiet, args.rtol, args.atol,
                           inputs=inputs)
    energy = _energy_values(model, trajectory)
    drift = _drift_numbers(trajectory, energy)
    status = "ok" if trajectory.success else f"FAILED: {trajectory.message}"
    console.step(f"  {status}; {trajectory.nfev} right-hand-side evaluations in "
                 f"{trajectory.wall_time:.2f} s; max |f_h| = {_fmt(drift['holonomic'])}, "
                 f"max |B u + b| = {_fmt(drift['velocity'])}, max |E - E0| = {_fmt(drift['energy'])}")

    written: list[Path] = []
    console.step("writing plots, animation and data ...")
    title = f"{key}, constraints={_mode_label(args.constraints, trajectory)}"
    page, strip = FigureOptions(title=title), FigureOptions(title=title, figsize=(9.0, 3.5))
    _save_figure(plot(trajectory, model, panels=("q", "u"), figure=page), out / "time_histories.png",
                 written)
    if getattr(trajectory, "holonomic_residuals", None) is not None and (
            np.size(trajectory.holonomic_residuals) or np.size(trajectory.velocity_residuals)):
        _save_figure(plot(trajectory, model, panels=("residuals",), figure=strip),
                     out / "residuals.png", written)
    if model.energy is not None:
        _save_figure(plot(trajectory, energy=energy, panels=("energy",), figure=strip),
                     out / "energy.png", written)
    if model.outputs:
        _save_figure(plot(trajectory, outputs=model.outputs, panels=("outputs",), figure=strip),
                     out / "outputs.png", written)
    if not args.no_animation:
        _save_animation(trajectory, model, out, "animation", args.fps, written, title=key)
    _write_trajectory(trajectory, out, written)
    summary = _simulation_summary(model, key, trajectory, args.constraints, drift, tf, inputs)
    summary_path = out / "summary.txt"
    summary_path.write_text(summary, encoding="utf-8")
    written.append(summary_path)
    _list_written(console, written, f"wrote {len(written)} files to {out}/:")
    return 0 if trajectory.success else 1


def _simulation_summary(model, key: str, trajectory, mode: str, drift: dict, tf: float,
                        inputs: dict) -> str:
    eom = model.eom
    lines = [
        f"model          {key}: {model.description}",
        f"sizes          {eom.n} independent + {eom.M} dependent coordinates, "
        f"{eom.p} independent + {eom.m} dependent speeds",
        f"time span      {model.t_span[0]:g} -> {tf:g} s, {len(trajectory.t)} samples",
        f"constraints    {_mode_label(mode, trajectory)}",
        f"status         {'success' if trajectory.success else 'FAILED'}: {trajectory.message}",
        f"rhs evals      {trajectory.nfev}",
        f"wall time      {trajectory.wall_time:.3f} s",
        f"max |f_h|      {_fmt(drift['holonomic'])}   (holonomic constraint residual)",
        f"max |B u + b|  {_fmt(drift['velocity'])}   (velocity constraint residual)",
        f"max |E - E0|   {_fmt(drift['energy'])}   (energy drift)",
        "",
        "constants:",
        *[f"  {s} = {v:g}" for s, v in model.constants.items()],
    ]
    if inputs:
        lines += ["specified inputs (held constant):", *[f"  {k} = {v:g}" for k, v in inputs.items()]]
    if model.op_parameters:
        lines += ["operating-point parameters:", *[f"  {k} = {v:g}" for k, v in model.op_parameters.items()]]
    lines += ["initial state:", *[f"  {s} = {v:.10g}" for s, v in _named(model.initial_state).items()]]
    if model.references:
        lines += ["", f"references: {model.references}"]
    return "\n".join(lines) + "\n"


def _named(values: dict) -> dict[str, float]:
    return {_symbol_name(key): float(value) for key, value in values.items()}
