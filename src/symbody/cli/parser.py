"""The argparse parser of the ``symbody`` command: its subcommands and options."""

from __future__ import annotations

import argparse

from .arguments import _positive
from .demo import cmd_demo
from .linearize import cmd_linearize
from .models import cmd_list
from .robots import ROBOT_T_FINAL
from .running import VIEW_FPS
from .simulate import cmd_simulate
from .view import cmd_view

CONSTRAINT_MODES = ("auto", "none", "baumgarte", "project", "dae")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``symbody`` command."""
    parser = argparse.ArgumentParser(
        prog="symbody",
        description="Multibody dynamics with constraints: simulate, linearize and animate the model zoo.",
        epilog="Run 'symbody COMMAND --help' for the options of a command.")
    from ..version import __version__

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
