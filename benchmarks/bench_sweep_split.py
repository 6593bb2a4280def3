"""sweep() before and after a change of its code, in one run: the old module is loaded from a git
revision next to the current one and both sweep the same cases, alternating.

Usage::

    python benchmarks/bench_sweep_split.py --before 98c65d5 [--runs 40] [--repeat 3]

Cases: bench_sweep.py's (four-bar, t in [0, 2] s, rtol 1e-8, q1 in [0, 60] deg), serial
(``Execution(parallel=False)``) and on two local processes.  The trajectories of both are
checked equal to the last bit before any time is printed; printed: min and median wall
times and the ratios after / before of the minima and of the medians.  Written for issue 34 item 7 (sweep.py
made a package: the same code moved, so the ratio should be 1 within the noise).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import symbody as sb


def _old_sweep(rev: str):
    """The module ``symbody/analysis/sweep.py`` of ``rev``, loaded as ``symbody.analysis._sweep_old``."""
    root = Path(__file__).resolve().parents[1]
    text = subprocess.run(["git", "show", f"{rev}:src/symbody/analysis/sweep.py"], cwd=root,
                          check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "_sweep_old.py"
    path.write_text(text)
    import symbody.analysis  # noqa: F401 - the parent package of the relative imports
    spec = importlib.util.spec_from_file_location("symbody.analysis._sweep_old", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="git revision with the old analysis/sweep.py")
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    old = _old_sweep(args.before)
    from symbody.analysis import sweep as new

    zoo = sb.models.four_bar()
    model = sb.compile(zoo.eom)
    solver = sb.Solver(rtol=1e-8, atol=1e-9, progress=False)
    cases = sb.grid_cases(q1=np.radians(np.linspace(0.0, 60.0, args.runs)))
    print(f"four-bar, {args.runs} runs, t in [0, 2] s, rtol 1e-8; before = {args.before}")
    print("| runner | before min | before median | after min | after median | after / before (min, median) |")
    print("|---|---|---|---|---|---|")
    for runner, kw in (("serial", {"parallel": False}), ("2 processes", {"processes": 2})):
        walls: dict[str, list[float]] = {"before": [], "after": []}
        ref = None
        for _ in range(args.repeat):
            for name, mod in (("before", old), ("after", new)):
                ex = mod.Execution(progress=False, **kw)
                t0 = time.perf_counter()
                res = mod.sweep(model, (0.0, 2.0), cases, zoo.constants, x0=zoo.initial_state,
                                execution=ex, solver=solver)
                walls[name].append(time.perf_counter() - t0)
                ref = ref or res.trajectories
                assert all(np.array_equal(a.t, b.t) and np.array_equal(a.x, b.x)
                           for a, b in zip(ref, res.trajectories)), f"{name}: results differ"
        b, a = walls["before"], walls["after"]
        print(f"| {runner} | {min(b):.2f} s | {statistics.median(b):.2f} s | {min(a):.2f} s | "
              f"{statistics.median(a):.2f} s | {min(a) / min(b):.2f}, "
              f"{statistics.median(a) / statistics.median(b):.2f} |")


if __name__ == "__main__":
    main()
