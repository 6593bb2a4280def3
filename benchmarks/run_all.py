"""Run every benchmark in a quick mode and print its ratios (``make bench``).

Each benchmark runs in its own Python process (so no compile cache or import state is
shared between them) with small sizes and one repetition; the full runs and their
results are in RESULTS.md.  Every benchmark prints its own table, with ratios against
the anchors (SymPy, sympy.lambdify, PyDy, the book's code) measured in the same run.

Usage::

    .venv/bin/python benchmarks/run_all.py [--only rhs constraints ...] [--full]

``--full`` runs each benchmark with its own default (long) settings instead.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: benchmark name -> (script, arguments of the quick mode)
QUICK: dict[str, tuple[str, list[str]]] = {
    "rhs": ("bench_rhs.py", ["--n", "20", "--no-pydy"]),
    "constraints": ("bench_constraints.py", ["--repeat", "1"]),
    "formation": ("bench_formation.py", ["--sizes", "10", "20", "--repeat", "1", "--warmup", "0"]),
    "lagrange": ("bench_lagrange.py", ["--n", "2", "4", "--sympy-max", "4"]),
    "linearize": ("bench_linearize.py", ["--skip-sympy"]),
    "system": ("bench_system.py", ["--repeat", "1"]),
    "engine": ("bench_engine.py", ["--links", "10"]),
    "conversion": ("bench_conversion.py", ["--links", "10", "--repeat", "1"]),
    "scale": ("bench_scale.py", ["--quick", "--skip-bicycle"]),
    "viewer": ("bench_viewer.py", ["--repeat", "1"]),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", choices=sorted(QUICK), default=None,
                    help="run only these benchmarks")
    ap.add_argument("--full", action="store_true", help="each benchmark's default settings")
    args = ap.parse_args(argv)
    failed = []
    for name in args.only or QUICK:
        script, quick_args = QUICK[name]
        cmd = [sys.executable, str(HERE / script), *([] if args.full else quick_args)]
        print(f"\n=== {name}: {' '.join(cmd[1:])}", flush=True)
        t0 = time.perf_counter()
        rc = subprocess.call(cmd)
        print(f"=== {name}: exit {rc} after {time.perf_counter() - t0:.1f} s", flush=True)
        if rc:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
