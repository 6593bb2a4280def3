"""``symbody.cli.main``: run the command, map errors to exit codes, end quietly on a closed pipe."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from ..errors import InputError, SymbodyError
from .console import Console, UsageError
from .parser import build_parser

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
