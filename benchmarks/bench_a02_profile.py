"""A02 (N-four-bar, N = 40, 20 s) on symbody's side only: CPU time, B0 error and counts at
a few rtol = atol, repeated, or a cProfile of one run (the IFToMM benchmark's setting and
reference from ``bench_iftomm.py``).

    .venv/bin/python -W ignore benchmarks/bench_a02_profile.py --rtols 1e-5 1e-6 1e-7 --repeat 3
    .venv/bin/python -W ignore benchmarks/bench_a02_profile.py --rtols 1e-7 --profile 30
    .venv/bin/python -W ignore benchmarks/bench_a02_profile.py --backend c --rtols 1e-5 1e-6

``--backend``: the kernels' backend given to ``sb.compile`` (default: the benchmark's own
model, compiled with "auto"); "c" puts the whole right-hand side (and the Runge-Kutta steps)
in compiled code.

To compare two trees in one session, run it in turn with ``PYTHONPATH=<tree>/src``.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_iftomm as bench  # noqa: E402

_COMPILED: dict[str, object] = {}


def model(backend: str | None) -> tuple[object, object]:
    """(zoo model, compiled model) of A02: the benchmark's own, or compiled with ``backend``
    (once, then a warm-up run)."""
    import symbody as sb
    zoo, compiled, _ = bench._symbody_model("A02")
    if backend is None:
        return zoo, compiled
    if backend not in _COMPILED:
        _COMPILED[backend] = sb.compile(zoo.eom, backend=backend)
        sb.simulate(_COMPILED[backend], (0.0, 1e-3), zoo.initial_state, zoo.constants)
    return zoo, _COMPILED[backend]


def run(rtol: float, backend: str | None = None) -> tuple[float, float, object]:
    """(CPU s of simulate, B0 error in m, trajectory) of one A02 run at rtol = atol."""
    import symbody as sb
    zoo, compiled = model(backend)
    t_ref, _ = bench.reference("A02")
    t0 = time.process_time()
    sol = sb.simulate(compiled, (0.0, float(t_ref[-1])), zoo.initial_state, zoo.constants,
                      solver=sb.Solver(rtol=rtol, atol=rtol), t_eval=t_ref)
    cpu = time.process_time() - t0
    err = bench.output_error("A02", np.asarray(sol.t), bench._symbody_output("A02", zoo, sol))
    return cpu, err, sol


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rtols", nargs="+", type=float, default=[1e-5, 1e-7])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", type=int, default=0, metavar="LINES",
                    help="cProfile one run at each rtol and print this many lines (by own time)")
    ap.add_argument("--backend", default=None,
                    help='kernel backend for sb.compile ("c", "llvm", ...; default: the benchmark\'s)')
    args = ap.parse_args()
    import symbody
    print(f"symbody from {Path(symbody.__file__).parent}, backend {args.backend or 'default'}",
          flush=True)
    model(args.backend)
    for rtol in args.rtols:
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            cpu, err, sol = run(rtol, args.backend)
            prof.disable()
            print(f"rtol {rtol:g}: CPU {cpu:.3f} s (profiled), B0 error {err:.3g}", flush=True)
            pstats.Stats(prof).sort_stats("tottime").print_stats(args.profile)
            continue
        for _ in range(args.repeat):
            cpu, err, sol = run(rtol, args.backend)
            print(f"rtol {rtol:g}: CPU {cpu:.3f} s, B0 error {err:.3g}, {sol.nfev} right-hand sides, "
                  f"{sol.nsteps} steps", flush=True)


if __name__ == "__main__":
    main()
