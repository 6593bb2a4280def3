"""The explicit pairs (``Solver(method="Tsit5")``, ``"Vern6"``) against the library's default
methods (RK45 for rtol >= 1e-5, DOP853 below) on seed and IFToMM models, at matched error.

Each case is simulated with the default ``Solver()`` (rtol 1e-6, atol 1e-9: DOP853) and with
every method at tolerances 1e-4 ... 1e-10 (half decades, atol = rtol * 1e-3), output on an
11-point grid (the dense output: DOP853 and Vern6 pay their interpolants' 3 extra
evaluations a step, as a user's run does; dense_output on).  Errors: the largest difference of
the state on the grid from a reference (DOP853 at rtol 1e-13, atol 1e-16).  For each method
the row is the loosest tolerance from which on every tighter one is as accurate as the default
run (benchmarks/bench_opensim_speed.py's ``matched`` rule): CPU time (median of ``--repeat``),
right-hand-side evaluations (``nfev``, the interpolants' included) and steps.

    PYTHONPATH=src:tests python -W ignore benchmarks/bench_explicit_pairs.py [--repeat 5]
        [--cases four-bar ...]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

#: label -> (zoo name, options, t_span)
CASES = {
    "four-bar": ("four-bar", {}, (0.0, 10.0)),
    "double-rod-pendulum": ("double-rod-pendulum", {}, (0.0, 5.0)),
    "whipple-bicycle": ("whipple-bicycle", {}, (0.0, 5.0)),
    "andrews-squeezer": ("andrews-squeezer", {}, (0.0, 0.03)),
    "pendulum-on-cart-5": ("n-link-pendulum-on-cart", {"n": 5}, (0.0, 2.0)),
}
METHODS = ("RK45", "DOP853", "Tsit5", "Vern6")
RTOLS = (1e-4, 3e-5, 1e-5, 3e-6, 1e-6, 3e-7, 1e-7, 3e-8, 1e-8, 3e-9, 1e-9, 3e-10, 1e-10)


def matched(rows: list, target: float) -> dict:
    """The loosest of ``rows`` (loosest first) from which on every tighter one has an error
    <= ``target``; the tightest row when none has."""
    best = rows[-1]
    for row in reversed(rows):
        if row["error"] > target:
            break
        best = row
    return best


def main() -> None:
    import symbody as sb

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    for case in args.cases:
        name, options, span = CASES[case]
        zoo = sb.models.get(name, **options)
        model = sb.compile(zoo.eom)
        grid = np.linspace(*span, 11)

        def run(solver, model=model, zoo=zoo, span=span, grid=grid):
            sol = sb.simulate(model, span, zoo.initial_state, zoo.constants, solver=solver,
                              t_eval=grid)
            assert sol.status == 0, sol.message
            return sol

        def timed(solver):
            times = []
            for _ in range(args.repeat):
                t0 = time.process_time()
                run(solver)
                times.append(time.process_time() - t0)
            return float(np.median(times))

        ref = run(sb.Solver(rtol=1e-13, atol=1e-16, method="DOP853")).x
        default = run(sb.Solver())
        target = float(np.abs(default.x - ref).max())
        base = {"error": target, "cpu": timed(sb.Solver()), "nfev": default.nfev,
                "steps": default.nsteps}
        print(f"{case}: default Solver() (DOP853 rtol 1e-6): error {target:.1e}, "
              f"{base['cpu'] * 1e3:.2f} ms, nfev {base['nfev']}, steps {base['steps']}",
              flush=True)
        for method in METHODS:
            rows = []
            for rtol in RTOLS:
                sol = run(sb.Solver(rtol=rtol, atol=rtol * 1e-3, method=method))
                rows.append({"rtol": rtol, "error": float(np.abs(sol.x - ref).max()),
                             "nfev": sol.nfev, "steps": sol.nsteps})
            row = matched(rows, target)
            cpu = timed(sb.Solver(rtol=row["rtol"], atol=row["rtol"] * 1e-3, method=method))
            print(f"| {case} | {method} | rtol {row['rtol']:g} | {row['error']:.1e} | "
                  f"{cpu * 1e3:.2f} ms | {row['nfev']} | {row['steps']} | "
                  f"{base['cpu'] / cpu:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
