"""``symbody view``: simulate a model and write its 3D viewer page."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from .arguments import _symbol_name
from .console import Console, UsageError
from .models import _model_and_time_span
from .robots import _is_urdf, _robot_option_check, _view_robot_command
from .running import MAX_OUTPUT_SAMPLES, VIEW_FPS, _compile


def cmd_view(args: argparse.Namespace, console: Console) -> int:
    """Simulate a model and write its 3D viewer page (one self-contained HTML file)."""
    from ..analysis import Solver, simulate
    from ..presentation.viewer import view

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
