"""URDF robots on the command line: ``symbody simulate|view ROBOT.urdf`` lets the robot fall
from its zero pose with zero joint torques."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from .arguments import _parse_number, _parse_sets
from .console import Console, UsageError, _Timer
from .output import _fmt, _list_written, _save_figure, _write_trajectory
from .running import MAX_OUTPUT_SAMPLES, VIEW_FPS, _compile, _drift_numbers, _output_times

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
    from ..robots import load_urdf

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

    from ..robots.visuals import MeshFileWarning, scene_from_urdf

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
    from ..analysis import Solver, simulate

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
    from ..presentation.viewer import view

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
    from ..presentation.options import FigureOptions
    from ..presentation.plot import plot

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
