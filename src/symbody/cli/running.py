"""Compiling and simulating for the commands, and the numbers they report (constraint drift,
energy)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .arguments import _symbol_name
from .console import Console, _Timer

OUTPUT_RATE = 50.0          # trajectory samples per simulated second (CSV, plots)


MAX_OUTPUT_SAMPLES = 20001


def _compile(model, console: Console, quiet: bool):
    from ..compilation import compile as compile_eom

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
    from ..analysis import Solver, simulate

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
    from ..presentation._trajectory_evaluation import evaluate_along

    return evaluate_along(trajectory, [model.energy], None, "energy")[:, 0]


VIEW_FPS = 60.0    # samples per simulated second sent to the 3D viewer page
