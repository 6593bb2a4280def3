"""The ``symbody`` command: list, simulate, linearize and demo the model zoo.

::

    symbody list
    symbody simulate MODEL [--tf T] [--constraints MODE] [--set NAME=VALUE ...] [--out DIR]
                           [--fps FPS] [--no-animation] [--quiet]
    symbody linearize MODEL [--set NAME=VALUE ...] [--speeds START:STOP:N] [--out DIR]
    symbody demo [--out DIR] [--tf T] [--no-animation] [--quiet]
    symbody view MODEL [--out PAGE.html] [--tf T] [--fps FPS] [--set NAME=VALUE ...]
                       [--constraints MODE] [--follow NAME] [--quiet]
    symbody view ROBOT.urdf [--floating-base] [--package-dir DIR ...] [--out PAGE.html] [--tf T] ...
    symbody simulate ROBOT.urdf [--floating-base] [--t-final T] [--out DIR] ...

A MODEL ending in ``.urdf`` is a robot file (``symbody.load_urdf``): it falls under gravity
from its zero pose with zero joint torques, drawn with its URDF visual geometry.

Exit codes: 0 success, 1 a run failed (e.g. the integrator stopped), 2 bad arguments
(unknown model or parameter, malformed value), with a message naming the culprit; 141 when
the reader of the output closed the pipe (``symbody list | head -1``), without a message.
"""

from __future__ import annotations

import argparse
import difflib
import inspect
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InputError, SymbodyError

__all__ = ["main", "build_parser"]

CONSTRAINT_MODES = ("auto", "none", "baumgarte", "project", "dae")
DEMO_MODEL = "four-bar"
#: The tolerances seed chapter 001 integrates the four-bar with (solve_ivp's defaults):
#: with them and no enforcement the loop opens by about 8 cm in 30 s.
DEMO_RTOL, DEMO_ATOL = 1e-3, 1e-6
OUTPUT_RATE = 50.0          # trajectory samples per simulated second (CSV, plots)
MAX_OUTPUT_SAMPLES = 20001


class UsageError(Exception):
    """Bad command-line arguments: reported with exit code 2."""


# ----------------------------------------------------------------------------- console output
class Console:
    """Step messages to stdout unless quiet; file lists always."""

    def __init__(self, quiet: bool):
        self.quiet = quiet

    def step(self, text: str) -> None:
        if not self.quiet:
            print(text, flush=True)

    def always(self, text: str) -> None:
        print(text, flush=True)


class _Timer:
    def __enter__(self) -> _Timer:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self.start


# ----------------------------------------------------------------------------- parsing helpers
def _known_models() -> dict[str, str]:
    from . import models

    return models.available()


def _model_key(name: str) -> str:
    known = _known_models()
    key = str(name).strip().lower().replace("_", "-")
    if key not in known:
        close = difflib.get_close_matches(key, list(known), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UsageError(f"unknown model {name!r}{hint}; known models: {', '.join(known)}")
    return key


def _user_model(spec: str) -> tuple[str, Callable] | None:
    """(key, function) of a user's model ``FILE.py:FUNCTION`` (None for any other name): the
    file is imported as a module (its top level runs) and ``FUNCTION(**options)`` must return
    a :class:`symbody.models.Model`."""
    import importlib.util

    path_text, sep, func_name = str(spec).rpartition(":")
    if not sep or not path_text.endswith(".py"):
        return None
    path = Path(path_text)
    if not func_name.isidentifier():
        raise UsageError(f"{spec!r}: expected FILE.py:FUNCTION with a function name after the colon")
    if not path.is_file():
        raise UsageError(f"{spec!r}: no such file {path}")
    module_name = f"symbody_user_model_{abs(hash(str(path.resolve())))}"
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    if module_spec is None or module_spec.loader is None:
        raise UsageError(f"{spec!r}: cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(module_name, None)
        raise UsageError(f"{spec!r}: importing {path} failed: {type(exc).__name__}: {exc}") from exc
    factory = getattr(module, func_name, None)
    if not callable(factory):
        names = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                       and getattr(v, "__module__", None) == module_name)
        raise UsageError(f"{spec!r}: {path} has no function {func_name!r}"
                         + (f"; its functions: {', '.join(names)}" if names else ""))
    return f"{path.stem}-{func_name}".replace("_", "-"), factory


def _model_source(name: str) -> tuple[str, Callable | None]:
    """(key, factory) of the MODEL argument: a user's ``FILE.py:FUNCTION``, or a zoo name
    (factory None: ``symbody.models.get``)."""
    user = _user_model(name)
    if user is not None:
        return user
    return _model_key(name), None


def _factory_parameters(key: str, factory: Callable | None = None) -> dict[str, inspect.Parameter]:
    """Explicit keyword options of the model function (e.g. n for the n-link pendulum)."""
    from . import models

    if factory is None:
        factory = getattr(models, key.replace("-", "_"), None)
    if factory is None:
        return {}
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return {}
    return {name: p for name, p in signature.parameters.items()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _parse_number(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"--set {name}={text}: the value must be a number") from None
    if not math.isfinite(value):
        raise UsageError(f"--set {name}={text}: the value must be finite")
    return value


def _parse_option(name: str, text: str, parameter: inspect.Parameter) -> Any:
    default = parameter.default
    if isinstance(default, bool):
        lowered = text.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise UsageError(f"--set {name}={text}: the value must be true or false")
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            raise UsageError(f"--set {name}={text}: the value must be an integer") from None
    return _parse_number(name, text)


def _parse_sets(items: Sequence[str] | None) -> list[tuple[str, str]]:
    pairs = []
    for item in items or ():
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name or not value.strip():
            raise UsageError(f"--set expects NAME=VALUE, got {item!r}")
        pairs.append((name, value.strip()))
    return pairs


def _build_model(key: str, sets: Sequence[tuple[str, str]], console: Console,
                 factory: Callable | None = None):
    """Form the model (factory options from --set) and apply the other --set values.
    ``factory``: the model function (default: the zoo's ``key``).

    Returns (model, inputs): inputs {name: value} for the specified inputs r(t), held constant.
    """
    from . import models

    parameters = _factory_parameters(key, factory)
    options = {name: _parse_option(name, text, parameters[name]) for name, text in sets
               if name in parameters}
    label = f"{key}" + (f" ({', '.join(f'{k}={v}' for k, v in options.items())})" if options else "")
    console.step(f"forming the equations of motion of {label} ...")
    with _Timer() as timer:
        model = models.get(key, **options) if factory is None else factory(**options)
    if not isinstance(model, models.Model):
        raise UsageError(f"the model function of {key} returned a {type(model).__name__}, not a "
                         "symbody.models.Model (see docs/guides/command_line.md: your own models)")
    values = {name: _parse_number(name, text) for name, text in sets if name not in parameters}
    input_names = [_symbol_name(r) for r in model.eom.specifieds]
    inputs = {name: values.pop(name) for name in list(values) if name in input_names}
    if values:
        known = (sorted(map(str, model.constants)) + sorted(model.op_parameters) + sorted(parameters)
                 + input_names)
        for name in values:
            if name not in known:
                close = difflib.get_close_matches(name, known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise UsageError(f"unknown parameter {name!r} for model {key}{hint}; known parameters: "
                                 f"{', '.join(known)}")
        model = model.with_constants(**values)
    # specified inputs r(t) are held constant: zero unless given with --set
    inputs = {name: inputs.get(name, 0.0) for name in input_names}
    eom = model.eom
    console.step(f"  formed in {timer.seconds:.1f} s: {eom.n + eom.M} coordinates ({eom.M} dependent), "
                 f"{eom.p + eom.m} speeds ({eom.m} dependent), {len(model.constants)} constants"
                 + (f", inputs {', '.join(f'{k} = {v:g}' for k, v in inputs.items())} (held constant)"
                    if inputs else ""))
    return model, inputs


def _parse_speeds(text: str) -> np.ndarray:
    parts = text.split(":")
    if len(parts) != 3:
        raise UsageError(f"--speeds expects START:STOP:N (e.g. 0:10:41), got {text!r}")
    try:
        start, stop, count = float(parts[0]), float(parts[1]), int(parts[2])
    except ValueError:
        raise UsageError(f"--speeds expects START:STOP:N with numbers and an integer N, got {text!r}") from None
    if count < 1 or not (math.isfinite(start) and math.isfinite(stop)):
        raise UsageError(f"--speeds: N must be at least 1 and START, STOP finite, got {text!r}")
    return np.linspace(start, stop, count)


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


# ----------------------------------------------------------------------------- numerics
def _compile(model, console: Console, quiet: bool):
    from .compilation import compile as compile_eom

    console.step("compiling ...")
    with _Timer() as timer:
        numeric = compile_eom(model.eom, progress=False if quiet else None)
    console.step(f"  compiled in {timer.seconds:.1f} s")
    return numeric


def _output_times(t0: float, tf: float) -> np.ndarray:
    count = int(min(max(OUTPUT_RATE * (tf - t0), 100), MAX_OUTPUT_SAMPLES - 1)) + 1
    return np.linspace(t0, tf, count)


def _simulate(model, numeric, tf: float, mode: str, quiet: bool, rtol: float | None = None,
              atol: float | None = None, inputs: dict | None = None):
    from .analysis import Solver, simulate

    t0 = float(model.t_span[0])
    p = numeric.constants_array(model.constants)
    x0 = numeric.state_array(model.initial_state)
    kwargs: dict[str, Any] = {}
    if inputs:
        kwargs["specifieds"] = np.array([inputs[_symbol_name(s)] for s in numeric.specifieds])
    tolerances = {k: v for k, v in (("rtol", rtol), ("atol", atol)) if v is not None}
    return simulate(numeric, (t0, tf), x0, p, constraints=mode, t_eval=_output_times(t0, tf),
                    solver=Solver(progress=False if quiet else None, **tolerances), **kwargs)


def _mode_label(requested: str, trajectory) -> str:
    used = getattr(trajectory, "constraints", None)
    return f"{requested!r}" + (f" ({used})" if used and used != requested else "")


def _drift_numbers(trajectory, energy_values: np.ndarray | None) -> dict[str, float]:
    """max |f_h|, max |B u + b| over the run and max |E - E0| (NaN where not defined)."""
    out = {"holonomic": math.nan, "velocity": math.nan, "energy": math.nan}
    for key, attr in (("holonomic", "holonomic_residuals"), ("velocity", "velocity_residuals")):
        arr = getattr(trajectory, attr, None)
        if arr is not None and np.size(arr):
            out[key] = float(np.max(np.abs(arr)))
    if energy_values is not None and len(energy_values):
        out["energy"] = float(np.max(np.abs(energy_values - energy_values[0])))
    return out


def _energy_values(model, trajectory) -> np.ndarray | None:
    if model.energy is None:
        return None
    from .presentation._trajectory_evaluation import evaluate_along

    return evaluate_along(trajectory, [model.energy], None, "energy")[:, 0]


def _fmt(value: float) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.3g}"


# ----------------------------------------------------------------------------- output files
def _save_figure(fig, path: Path, written: list[Path], dpi: float = 100) -> None:
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    written.append(path)


def _save_animation(trajectory, model, out: Path, stem: str, fps: float | None, written: list[Path],
                    title: str | None = None, max_frames: int = 200) -> None:
    from .presentation.animate import animate
    from .presentation.export import pillow_available, save_gif, save_html
    from .presentation.options import FigureOptions

    anim = animate(trajectory, model.drawing, fps=fps, max_frames=max_frames,
                   figure=FigureOptions(title=title, close=True))
    written.append(save_html(anim, out / f"{stem}.html", title=title or model.name))
    if pillow_available():
        gif = save_gif(anim, out / f"{stem}.gif")
        if gif is not None:
            written.append(gif)


def _write_trajectory(trajectory, out: Path, written: list[Path]) -> None:
    csv_path, npz_path = out / "trajectory.csv", out / "trajectory.npz"
    trajectory.to_csv(csv_path)
    written.append(csv_path)
    trajectory.save(npz_path)
    written.append(npz_path)


def _list_written(console: Console, written: Sequence[Path], heading: str) -> None:
    console.always(heading)
    for path in written:
        console.always(f"  {path}")


# ----------------------------------------------------------------------------- commands
def cmd_list(args: argparse.Namespace, console: Console) -> int:
    known = _known_models()
    width = max(map(len, known))
    for name, description in known.items():
        console.always(f"{name:<{width}}  {description}")
    return 0


def _model_and_time_span(args: argparse.Namespace, console: Console):
    """The model named on the command line, its ``--set`` inputs and the time span (t0, tf):
    ``--tf`` when given (it must come after the model's start time), else the model's own."""
    key, factory = _model_source(args.model)
    model, inputs = _build_model(key, _parse_sets(args.set), console, factory)
    t0 = float(model.t_span[0])
    tf = float(args.tf) if args.tf is not None else float(model.t_span[1])
    if not tf > t0:
        raise UsageError(f"--tf must be greater than the start time {t0:g} s, got {tf:g}")
    return key, model, inputs, t0, tf


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
    from .analysis import Solver, simulate
    from .compilation.numeric_model import load_model
    from .presentation.options import FigureOptions
    from .presentation.plot import plot

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
    from .presentation.options import FigureOptions
    from .presentation.plot import plot

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


def _symbol_name(symbol: Any) -> str:
    """q1(t) -> 'q1', l_a -> 'l_a'."""
    text = str(symbol)
    return text[:-3] if text.endswith("(t)") else text


def _operating_point(model) -> tuple[dict, str]:
    if model.operating_point is not None:
        params = ", ".join(f"{k} = {v:g}" for k, v in model.op_parameters.items())
        return model.operating_point(dict(model.op_parameters)), (
            f"the operating point{f' ({params})' if params else ''}")
    return dict(model.initial_state), "the initial state (the model defines no operating point)"


def _linearize(numeric, point: dict, p: np.ndarray, inputs: dict | None = None):
    from .analysis import linearize

    r = np.array([inputs[_symbol_name(s)] for s in numeric.specifieds]) if inputs else None
    A, _ = linearize(numeric, point, p, r=r, check_equilibrium=False)   # checked below, reported
    return np.asarray(A, dtype=float)


#: |x'_i| below this (relative to the state's scale) counts as zero in the equilibrium check:
#: the rhs at an exact operating point is round-off, ~1e-15 of the terms that cancel.
EQUILIBRIUM_TOL = 1e-8


def _steady_state_check(numeric, point: dict, p: np.ndarray, A: np.ndarray, states: Sequence,
                        inputs: dict | None = None) -> str | None:
    """None if ``point`` is an equilibrium or a steady motion, else what moves.

    Eigenvalues say something about stability only about such a state: every independent
    state's rate x'_i = f_i(x0) must vanish, except for coordinates the dynamics do not depend
    on (zero column of A: position and heading of a vehicle riding steadily).
    """
    r = np.array([inputs[_symbol_name(s)] for s in numeric.specifieds]) if inputs else None
    x = numeric.state_array(point)
    xdot = np.asarray(numeric.rhs(0.0, x, p, r), dtype=float)
    order = list(numeric.states)
    scale = max(1.0, float(np.max(np.abs(x))) if x.size else 1.0)
    column_scale = max(1.0, float(np.max(np.abs(A))) if A.size else 1.0)
    moving = []
    for j, symbol in enumerate(states):
        rate = xdot[order.index(symbol)]
        if abs(rate) > EQUILIBRIUM_TOL * scale and np.any(np.abs(A[:, j]) > 1e-12 * column_scale):
            moving.append(f"{_symbol_name(symbol)}' = {rate:.3g}")
    return ", ".join(moving) if moving else None


def _sorted_eigenvalues(A: np.ndarray) -> np.ndarray:
    ev = np.linalg.eigvals(A)
    return ev[np.lexsort((-ev.imag, -ev.real))]


def _clean(x: float, scale: float = 1.0) -> float:
    """Round-off (|x| < 1e-12 scale) and negative zero shown as 0."""
    return 0.0 if abs(x) < 1e-12 * max(scale, 1.0) else float(x)


def _format_complex(z: complex) -> str:
    scale = abs(z)
    re, im = _clean(z.real, scale), _clean(z.imag, scale)
    if im == 0.0:
        return f"{re:.6g}"
    return f"{re:.6g}{im:+.6g}j"


def cmd_linearize(args: argparse.Namespace, console: Console) -> int:
    key, factory = _model_source(args.model)
    speeds = _parse_speeds(args.speeds) if args.speeds else None
    model, inputs = _build_model(key, _parse_sets(args.set), console, factory)
    if speeds is not None and not model.op_parameters:
        raise UsageError(f"--speeds sweeps an operating-point parameter, but model {key} has none")
    numeric = _compile(model, console, args.quiet)
    p = numeric.constants_array(model.constants)
    states = [*model.eom.q_ind, *model.eom.u_ind, *getattr(model.eom, "extra_states", ())]
    names = [_symbol_name(s) for s in states]

    if speeds is None:
        point, where = _operating_point(model)
        A = _linearize(numeric, point, p, inputs)
        ev = _sorted_eigenvalues(A)
        console.always(f"{key}: A about {where}")
        console.always(f"states x = [{', '.join(names)}]  (x' = A x + B r)")
        width = max(8, max(map(len, names)))
        console.always(" " * width + "".join(f"{n:>13}" for n in names))
        scale = float(np.max(np.abs(A))) if A.size else 1.0
        for name, row in zip(names, A, strict=True):
            console.always(f"{name:>{width}}" + "".join(f"{_clean(v, scale):13.6g}" for v in row))
        console.always("eigenvalues:")
        for z in ev:
            console.always(f"  {_format_complex(complex(z))}")
        largest = f"largest real part {_clean(float(np.max(ev.real)), float(np.max(np.abs(ev)))):.6g}"
        moving = _steady_state_check(numeric, point, p, A, states, inputs)
        if moving is None:
            stable = bool(np.all(ev.real < 1e-9))
            console.always(f"{largest} ({'no growing mode' if stable else 'unstable'})")
        else:
            # about a state that moves the eigenvalues describe nearby motion for an instant
            # only: no stability verdict
            console.always(f"{largest} (not an equilibrium: {moving}; no stability verdict)")
        return 0

    from .presentation.options import FigureOptions
    from .presentation.plot import plot_eigenvalues

    name = next(iter(model.op_parameters))
    table = []
    not_steady: list[str] = []
    for value in speeds:
        op = dict(model.op_parameters)
        op[name] = float(value)
        point = model.operating_point(op)
        A = _linearize(numeric, point, p, inputs)
        moving = _steady_state_check(numeric, point, p, A, states, inputs)
        if moving is not None:
            not_steady.append(f"{name} = {value:g} ({moving})")
        table.append(_sorted_eigenvalues(A))
    table = np.array(table)
    if not_steady:
        console.always(f"note: not an equilibrium at {'; '.join(not_steady[:3])}"
                       + (" ..." if len(not_steady) > 3 else "") + ": no stability shading")
    # zero eigenvalues (ignorable coordinates such as position and heading) are left out
    rest = [row[np.abs(row) >= 1e-9 * max(1.0, float(np.max(np.abs(row))))] for row in table]
    width = max(1, max(len(r) for r in rest))
    zeros = sorted({len(row) - len(r) for row, r in zip(table, rest, strict=True)})
    console.always(f"{key}: eigenvalues of A against the operating-point parameter {name}"
                   + (f" (zero eigenvalues not shown: {'/'.join(map(str, zeros))} per row)"
                      if zeros != [0] else ""))
    console.always(f"{name:>8}  " + "".join(f"{'eigenvalue ' + str(i + 1):>22}" for i in range(width)))
    for value, row in zip(speeds, rest, strict=True):
        console.always(f"{value:8.4g}  " + "".join(f"{_format_complex(complex(z)):>22}" for z in row))
    out = Path(args.out) if args.out else Path("symbody-output") / key
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    fig = plot_eigenvalues(speeds, table, parameter_name=name, unit="m/s" if name == "v" else "",
                           stability=not not_steady,
                           figure=FigureOptions(title=f"{key}: eigenvalues against {name}"))
    _save_figure(fig, out / f"eigenvalues_vs_{name}.png", written)
    csv_path = out / f"eigenvalues_vs_{name}.csv"
    columns = [name] + [f"{part}{i + 1}" for i in range(table.shape[1]) for part in ("re", "im")]
    data = np.column_stack([speeds] + [c for i in range(table.shape[1])
                                       for c in (table[:, i].real, table[:, i].imag)])
    np.savetxt(csv_path, data, delimiter=",", header=",".join(columns), comments="", fmt="%.10g")
    written.append(csv_path)
    _list_written(console, written, f"wrote {len(written)} files to {out}/:")
    return 0


VIEW_FPS = 60.0    # samples per simulated second sent to the 3D viewer page


def cmd_view(args: argparse.Namespace, console: Console) -> int:
    """Simulate a model and write its 3D viewer page (one self-contained HTML file)."""
    from .analysis import Solver, simulate
    from .presentation.viewer import view

    _robot_option_check(args)
    if _is_urdf(args.model):
        return _view_robot_command(args, console)
    key, model, inputs, t0, tf = _model_and_time_span(args, console)
    names = [item.name for item in model.scene.visualization_frames]
    if args.follow and args.follow not in names:
        raise UsageError(f"--follow {args.follow!r} is not a body of the {key} scene; known: {', '.join(names)}")
    fps = float(args.fps) if args.fps is not None else VIEW_FPS
    count = int(np.floor((tf - t0) * fps + 1e-9)) + 1
    if count > MAX_OUTPUT_SAMPLES:
        raise UsageError(f"{count} samples ({tf - t0:g} s at {fps:g} per second) are too many for one page; "
                         f"at most {MAX_OUTPUT_SAMPLES}: lower --fps or --tf")
    times = np.linspace(t0, t0 + (count - 1) / fps, count)
    numeric = _compile(model, console, args.quiet)
    console.step(f"simulating {t0:g} -> {times[-1]:g} s with constraints={args.constraints!r} ...")
    kwargs: dict[str, Any] = {}
    if inputs:
        kwargs["specifieds"] = np.array([inputs[_symbol_name(s)] for s in numeric.specifieds])
    trajectory = simulate(numeric, (t0, float(times[-1])), numeric.state_array(model.initial_state),
                          numeric.constants_array(model.constants), constraints=args.constraints,
                          t_eval=times, solver=Solver(progress=False if args.quiet else None),
                          **kwargs)
    if not trajectory.success:
        console.always(f"symbody view: the simulation stopped at t = {trajectory.t[-1]:g} s: "
                       f"{trajectory.message}; the page shows what was computed")
    if len(trajectory.t) == 0:
        return 1
    page = view(trajectory, model.scene, follow=args.follow, title=f"{key} ({len(trajectory.t)} samples)")
    out = Path(args.out) if args.out else Path(f"{key}.html")
    path = page.save(out)
    size = path.stat().st_size
    console.always(f"wrote {path} ({size / 1e6:.2f} MB): open it in a browser (no network needed)")
    return 0 if trajectory.success else 1


# ----------------------------------------------------------------------------- URDF robots
ROBOT_T_FINAL = 1.0    # s: how long a robot falls from its zero pose unless --tf / --t-final


def _is_urdf(name: str) -> bool:
    return str(name).lower().endswith(".urdf")


def _robot_option_check(args: argparse.Namespace) -> None:
    """--floating-base and --package-dir belong to URDF robots only."""
    if not _is_urdf(args.model) and (args.floating_base or args.package_dir or args.no_joint_dynamics):
        flag = ("--floating-base" if args.floating_base else "--package-dir" if args.package_dir
                else "--no-joint-dynamics")
        raise UsageError(f"{flag} applies to a URDF robot file (ROBOT.urdf), not to the model {args.model!r}")


def _load_robot(args: argparse.Namespace, console: Console):
    """The robot of the URDF file on the command line (``symbody.load_urdf``), its constants
    with the ``--set`` values, and the final time (``--tf``, default ROBOT_T_FINAL)."""
    from .robots import load_urdf

    path = Path(args.model)
    if not path.is_file():
        raise UsageError(f"URDF file {args.model!r} does not exist")
    base = "floating" if args.floating_base else "fixed"
    extra = ", without the URDF's joint damping and friction" if args.no_joint_dynamics else ""
    console.step(f"loading {path} ({base} base{extra}) ...")
    with _Timer() as timer:
        robot = load_urdf(path, floating_base=bool(args.floating_base),
                          joint_dynamics=not args.no_joint_dynamics)
    console.step(f"  {len(robot.coordinates)} coordinates, {len(robot.inputs)} joint torques; "
                 f"equations formed in {timer.seconds:.1f} s")
    constants = dict(robot.constants)
    by_name = {str(c): c for c in constants}
    for name, text in _parse_sets(args.set):
        if name not in by_name:
            raise UsageError(f"--set {name}: the robot's constants are {', '.join(sorted(by_name))}")
        constants[by_name[name]] = _parse_number(name, text)
    tf = float(args.tf) if args.tf is not None else ROBOT_T_FINAL
    if not tf > 0:
        raise UsageError(f"--tf must be positive (the robot starts at t = 0), got {tf:g}")
    return robot, constants, tf


def _robot_scene(robot, args: argparse.Namespace):
    """The robot's URDF visual geometry as a Scene; a missing mesh file is reported on stderr."""
    import warnings

    from .robots.visuals import MeshFileWarning, scene_from_urdf

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MeshFileWarning)
        scene = scene_from_urdf(robot.urdf_path, robot.link_frames, robot.link_points, robot.world_frame,
                                robot.world_origin, package_dirs=args.package_dir or None)
    for warning in caught:
        if issubclass(warning.category, MeshFileWarning):
            print(f"symbody {args.command}: warning: {warning.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return scene


def _fall(robot, constants: dict, times: np.ndarray, args: argparse.Namespace, console: Console):
    """The robot from its zero pose (identity quaternion) at rest, zero joint torques."""
    from .analysis import Solver, simulate

    numeric = _compile(robot, console, args.quiet)
    console.step(f"simulating 0 -> {times[-1]:g} s (zero torques, from the zero pose) ...")
    tolerances = {k: v for k, v in (("rtol", getattr(args, "rtol", None)), ("atol", getattr(args, "atol", None)))
                  if v is not None}
    return simulate(numeric, (0.0, float(times[-1])), robot.default_state(), numeric.constants_array(constants),
                    specifieds=np.zeros(len(numeric.specifieds)), constraints=args.constraints, t_eval=times,
                    solver=Solver(progress=False if args.quiet else None, **tolerances)), numeric


def _check_follow(scene, args: argparse.Namespace) -> None:
    follow = getattr(args, "follow", None)
    names = [item.name for item in scene.visualization_frames]
    if follow and follow not in names:
        raise UsageError(f"--follow {follow!r} is not a link of the robot's scene; known: {', '.join(names)}")


def _robot_page(trajectory, scene, args: argparse.Namespace, title: str):
    from .presentation.viewer import view

    return view(trajectory, scene, follow=getattr(args, "follow", None) or None, title=title)


def _view_robot_command(args: argparse.Namespace, console: Console) -> int:
    robot, constants, tf = _load_robot(args, console)
    scene = _robot_scene(robot, args)
    _check_follow(scene, args)
    fps = float(args.fps) if args.fps is not None else VIEW_FPS
    count = int(np.floor(tf * fps + 1e-9)) + 1
    if count > MAX_OUTPUT_SAMPLES:
        raise UsageError(f"{count} samples ({tf:g} s at {fps:g} per second) are too many for one page; "
                         f"at most {MAX_OUTPUT_SAMPLES}: lower --fps or --tf")
    trajectory, _ = _fall(robot, constants, np.linspace(0.0, (count - 1) / fps, count), args, console)
    if not trajectory.success:
        console.always(f"symbody view: the simulation stopped at t = {trajectory.t[-1]:g} s: "
                       f"{trajectory.message}; the page shows what was computed")
    if len(trajectory.t) == 0:
        return 1
    stem = Path(args.model).stem
    page = _robot_page(trajectory, scene, args, f"{robot.urdf.name or stem} ({len(trajectory.t)} samples)")
    path = page.save(Path(args.out) if args.out else Path(f"{stem}.html"))
    console.always(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB, {len(page.data['meshes'])} mesh files): "
                   "open it in a browser (no network needed)")
    return 0 if trajectory.success else 1


def _simulate_robot_command(args: argparse.Namespace, console: Console) -> int:
    from .presentation.options import FigureOptions
    from .presentation.plot import plot

    robot, constants, tf = _load_robot(args, console)
    stem = Path(args.model).stem
    out = Path(args.out) if args.out else Path("symbody-output") / stem
    out.mkdir(parents=True, exist_ok=True)
    scene = None if args.no_animation else _robot_scene(robot, args)
    trajectory, numeric = _fall(robot, constants, _output_times(0.0, tf), args, console)
    drift = _drift_numbers(trajectory, None)
    status = "ok" if trajectory.success else f"FAILED: {trajectory.message}"
    console.step(f"  {status}; {trajectory.nfev} right-hand-side evaluations in {trajectory.wall_time:.2f} s"
                 + (f"; max |f_h| = {_fmt(drift['holonomic'])}" if robot.floating_base else ""))
    written: list[Path] = []
    console.step("writing plots, the 3D page and data ...")
    title = f"{stem}: falling from the zero pose, zero torques"
    _save_figure(plot(trajectory, numeric, panels=("q", "u"), figure=FigureOptions(title=title)),
                 out / "time_histories.png", written)
    if scene is not None and len(trajectory.t):
        written.append(_robot_page(trajectory, scene, args, stem).save(out / f"{stem}.html"))
    _write_trajectory(trajectory, out, written)
    dynamics = "without" if args.no_joint_dynamics else "with"
    lines = [f"symbody simulate {args.model}", f"robot: {robot.urdf.name} ({'floating' if robot.floating_base else 'fixed'} base), "
             f"{len(robot.coordinates)} coordinates, {len(robot.inputs)} joint torques (all zero), "
             f"{dynamics} the URDF's joint damping and friction",
             "constants: " + ", ".join(f"{c} = {v:g}" for c, v in constants.items()),
             f"time: 0 -> {tf:g} s, {len(trajectory.t)} samples; {status}",
             f"right-hand-side evaluations: {trajectory.nfev}; wall time {trajectory.wall_time:.3f} s"]
    if robot.floating_base:
        lines.append(f"max |f_h| (unit quaternion): {_fmt(drift['holonomic'])}")
    if len(trajectory.t):
        lines.append("final coordinates:")
        lines += [f"  {name:<32} {value: .6g}" for name, value in
                  zip(robot.joint_names, trajectory.q[-1], strict=True)]
    summary = out / "summary.txt"
    summary.write_text("\n".join(lines) + "\n", encoding="utf-8")
    written.append(summary)
    _list_written(console, written, f"wrote {len(written)} files to {out}/:")
    return 0 if trajectory.success else 1


def cmd_demo(args: argparse.Namespace, console: Console) -> int:
    from .presentation.options import FigureOptions
    from .presentation.plot import plot, plot_comparison

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    console.step("symbody demo: the four-bar linkage of seed chapter 001, without and with "
                 "constraint enforcement")
    model, _ = _build_model(DEMO_MODEL, [], console)
    t0 = float(model.t_span[0])
    tf = float(args.tf) if args.tf is not None else float(model.t_span[1])
    if not tf > t0:
        raise UsageError(f"--tf must be greater than the start time {t0:g} s, got {tf:g}")
    numeric = _compile(model, console, args.quiet)
    enforce = args.constraints
    # (file stem, mode, rtol, atol, animated): the book's experiment at the book's tolerances,
    # then the enforced run once more at symbody's default tolerances (energy accuracy)
    specs = [("without_enforcement", "none", DEMO_RTOL, DEMO_ATOL, True),
             ("with_enforcement", enforce, DEMO_RTOL, DEMO_ATOL, True),
             ("with_enforcement_default_tolerances", enforce, None, None, False)]
    runs = []
    for stem, mode, rtol, atol, animated in specs:
        tol = f"rtol={rtol:g}, atol={atol:g} as in the book" if rtol else "symbody's default tolerances"
        console.step(f"simulating {t0:g} -> {tf:g} s with constraints={mode!r} ({tol}) ...")
        trajectory = _simulate(model, numeric, tf, mode, args.quiet, rtol, atol)
        energy = _energy_values(model, trajectory)
        drift = _drift_numbers(trajectory, energy)
        label = f"constraints={_mode_label(mode, trajectory)}, rtol={rtol or _DEFAULT_RTOL:g}"
        runs.append({"stem": stem, "mode": mode, "label": label, "trajectory": trajectory,
                     "energy": energy, "drift": drift, "animated": animated})
        console.step(f"  max loop residual {_fmt(drift['holonomic'])} m, max energy drift "
                     f"{_fmt(drift['energy'])} J, {trajectory.nfev} rhs evaluations")

    written: list[Path] = []
    fig = plot_comparison({r["label"]: r["trajectory"] for r in runs},
                          energy={r["label"]: r["energy"] for r in runs},
                          model=model, figure=FigureOptions(
                              title="four-bar linkage: loop residual |f_h| (top) and energy drift "
                                    "(bottom)"))
    _save_figure(fig, out / "drift_comparison.png", written)
    for r in runs[:2]:
        fig = plot(r["trajectory"], model, energy=r["energy"],
                   figure=FigureOptions(title=f"four-bar, {r['label']}"))
        _save_figure(fig, out / f"time_histories_{r['stem']}.png", written)
    if not args.no_animation:
        for r in runs:
            if r["animated"]:
                _save_animation(r["trajectory"], model, out, f"animation_{r['stem']}", args.fps, written,
                                title=f"four-bar, {r['label']}", max_frames=args.max_frames)
    summary = _demo_summary(runs, t0, tf)
    summary_path = out / "summary.txt"
    summary_path.write_text(summary, encoding="utf-8")
    written.append(summary_path)
    console.always("")
    console.always(summary.rstrip())
    console.always("")
    _list_written(console, written, f"wrote {len(written)} files to {out}/ -- open the .html "
                                    "animations in a browser and look at the .png plots:")
    return 0 if all(r["trajectory"].success for r in runs) else 1


_DEFAULT_RTOL = 1e-6   # symbody.simulate's default, shown in labels


def _demo_summary(runs: list[dict], t0: float, tf: float) -> str:
    width = max(len(r["label"]) for r in runs) + 2
    lines = [f"four-bar linkage (seed chapter 001), {t0:g} -> {tf:g} s",
             f"{'':{width}}{'max |f_h| [m]':>15}{'max |E-E0| [J]':>16}{'rhs evals':>11}"]
    for r in runs:
        lines.append(f"{r['label']:{width}}{_fmt(r['drift']['holonomic']):>15}"
                     f"{_fmt(r['drift']['energy']):>16}{r['trajectory'].nfev:>11}")
    none, enforced, accurate = (r["drift"] for r in runs)
    if math.isfinite(none["holonomic"]) and math.isfinite(enforced["holonomic"]):
        lines += ["",
                  f"Without enforcement the loop opens by {none['holonomic'] * 100:.3g} cm (the book: about "
                  f"8 cm in 30 s); with constraints={runs[1]['mode']!r} it stays closed to "
                  f"{max(enforced['holonomic'], accurate['holonomic']):.2g} m.",
                  f"Energy drift is set by the integration tolerance, not by the constraints: "
                  f"{_fmt(enforced['energy'])} J at rtol={DEMO_RTOL:g}, {_fmt(accurate['energy'])} J at "
                  f"rtol={_DEFAULT_RTOL:g}."]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- parser and main
def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``symbody`` command."""
    parser = argparse.ArgumentParser(
        prog="symbody",
        description="Multibody dynamics with constraints: simulate, linearize and animate the model zoo.",
        epilog="Run 'symbody COMMAND --help' for the options of a command.")
    from .version import __version__

    parser.add_argument("--version", action="version", version=f"symbody {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p_list = sub.add_parser("list", help="the models, one line each")
    p_list.set_defaults(func=cmd_list, quiet=False)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--quiet", "-q", action="store_true",
                       help="no progress or step messages (only the list of files written)")

    def robot_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--floating-base", action="store_true",
                       help="URDF robots: a free-flying root link (default: fixed to the world)")
        p.add_argument("--no-joint-dynamics", action="store_true",
                       help="URDF robots: without the <dynamics damping friction> joint torques "
                            "(Coulomb friction at rest makes a free fall stiff and slow)")
        p.add_argument("--package-dir", action="append", metavar="DIR",
                       help="URDF robots: a folder that is or holds a package named in package:// "
                            "mesh paths (repeatable; default: the folders above the URDF, "
                            "ROS_PACKAGE_PATH)")

    p_sim = sub.add_parser("simulate", help="simulate a model; write plots, an animation and data")
    p_sim.add_argument("model", metavar="MODEL",
                       help="model name (see 'symbody list'), your own FILE.py:FUNCTION, a "
                            "saved model FILE.npz (give its constants and states with --set) "
                            "or a robot's URDF file")
    p_sim.add_argument("--tf", "--t-final", dest="tf", type=float, default=None, metavar="T",
                       help=f"final time in s (default: the model's; robots: {ROBOT_T_FINAL:g})")
    p_sim.add_argument("--constraints", type=str.lower, choices=CONSTRAINT_MODES, default="auto",
                       help="constraint handling (default: auto, drift-free)")
    p_sim.add_argument("--set", action="append", metavar="NAME=VALUE",
                       help="a constant, model option or (constant) specified input, e.g. --set m=2, "
                            "--set n=5, --set F=1 (repeatable)")
    p_sim.add_argument("--out", metavar="DIR", help="output directory (default: symbody-output/MODEL)")
    p_sim.add_argument("--fps", type=_positive, default=None,
                       help="animation frames per simulated second (default 20, at most 200 frames)")
    p_sim.add_argument("--no-animation", action="store_true",
                       help="skip the animation (robots: the 3D viewer page)")
    p_sim.add_argument("--rtol", type=_positive, default=None, help="relative tolerance of the integrator")
    p_sim.add_argument("--atol", type=_positive, default=None, help="absolute tolerance of the integrator")
    robot_options(p_sim)
    common(p_sim)
    p_sim.set_defaults(func=cmd_simulate)

    p_lin = sub.add_parser("linearize", help="print A and its eigenvalues about the operating point")
    p_lin.add_argument("model", metavar="MODEL",
                       help="model name (see 'symbody list') or your own FILE.py:FUNCTION")
    p_lin.add_argument("--set", action="append", metavar="NAME=VALUE",
                       help="a constant or operating-point parameter, e.g. --set v=5 (repeatable)")
    p_lin.add_argument("--speeds", metavar="START:STOP:N",
                       help="sweep the operating-point parameter (bicycle: v): eigenvalue table and plot")
    p_lin.add_argument("--out", metavar="DIR", help="where --speeds saves its plot (default: symbody-output/MODEL)")
    common(p_lin)
    p_lin.set_defaults(func=cmd_linearize)

    p_view = sub.add_parser("view", help="simulate a model and write its 3D viewer page (one HTML file)")
    p_view.add_argument("model", metavar="MODEL",
                        help="model name (see 'symbody list'), your own FILE.py:FUNCTION or a "
                             "robot's URDF file")
    p_view.add_argument("--out", metavar="PAGE", help="the HTML file to write (default: MODEL.html)")
    p_view.add_argument("--tf", "--t-final", dest="tf", type=float, default=None, metavar="T",
                        help=f"final time in s (default: the model's; robots: {ROBOT_T_FINAL:g})")
    p_view.add_argument("--fps", type=_positive, default=None,
                        help=f"samples per simulated second sent to the page (default {VIEW_FPS:g})")
    p_view.add_argument("--constraints", type=str.lower, choices=CONSTRAINT_MODES, default="auto",
                        help="constraint handling (default: auto, drift-free)")
    p_view.add_argument("--set", action="append", metavar="NAME=VALUE",
                        help="a constant, model option or (constant) specified input, e.g. --set v=6 (repeatable)")
    p_view.add_argument("--follow", metavar="NAME", default=None,
                        help="the body the camera follows (default: the model's; '' for a fixed camera)")
    robot_options(p_view)
    common(p_view)
    p_view.set_defaults(func=cmd_view)

    p_demo = sub.add_parser("demo", help="the four-bar linkage with and without constraint enforcement")
    p_demo.add_argument("--out", metavar="DIR", default="demo-output", help="output directory (default: demo-output)")
    p_demo.add_argument("--tf", type=float, default=None, metavar="T",
                        help="final time in s (default: 30, as in the book)")
    p_demo.add_argument("--constraints", type=str.lower, choices=[m for m in CONSTRAINT_MODES if m != "none"], default="auto",
                        help="the enforcing mode compared with 'none' (default: auto)")
    p_demo.add_argument("--fps", type=_positive, default=None,
                        help="animation frames per simulated second (default: 20, at most --max-frames)")
    p_demo.add_argument("--max-frames", type=int, default=300, help="frames per animation (default 300)")
    p_demo.add_argument("--no-animation", action="store_true", help="skip the animations")
    common(p_demo)
    p_demo.set_defaults(func=cmd_demo)
    return parser


#: exit code after the reader of our output went away (`symbody list | head -1`): 128 + SIGPIPE,
#: what a command-line tool killed by the signal reports
EXIT_CLOSED_PIPE = 141


def _closed_pipe() -> int:
    """The reader of stdout closed the pipe: stop quietly, as command-line tools do.  stdout
    is pointed at /dev/null so that flushing it at exit raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):   # no real file descriptor (captured output)
        pass
    return EXIT_CLOSED_PIPE


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``symbody`` command; returns the exit code (0 ok, 1 failed run, 2 bad arguments)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse reports bad syntax with code 2, --help with 0
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    if args.command != "list" and "matplotlib.pyplot" not in sys.modules:
        import matplotlib

        matplotlib.use("Agg")   # files only: never open windows
    console = Console(args.quiet)
    command: Callable[[argparse.Namespace, Console], int] = args.func
    previous_quiet = os.environ.get("SYMBODY_QUIET")
    if args.quiet:
        os.environ["SYMBODY_QUIET"] = "1"   # also silences progress inside formation/compilation
    try:
        return command(args, console)
    except BrokenPipeError:
        return _closed_pipe()
    except (UsageError, InputError) as exc:
        print(f"symbody {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except SymbodyError as exc:
        print(f"symbody {args.command}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("symbody: interrupted", file=sys.stderr)
        return 130
    finally:
        if args.quiet:
            if previous_quiet is None:
                os.environ.pop("SYMBODY_QUIET", None)
            else:
                os.environ["SYMBODY_QUIET"] = previous_quiet


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
