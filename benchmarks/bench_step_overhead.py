"""Per-step Python overhead of simulate's default mode on small models, without output
samples (``t_eval=None``: the cost of the steps, the projection and the dependent-set
watch alone): CPU time (median of ``--repeat`` runs after a warm-up), right-hand-side
evaluations and steps, and a digest of the trajectory (equal digests: the same numbers to
the last bit).

Cases: IFToMM A04 Bricard (10 s, rtol = atol 1e-3, 1e-4, 1e-5), the seed four-bar (30 s,
default Solver) and A02 (N-four-bar, n = 40, 20 s, rtol = atol 1e-5)::

    .venv/bin/python -W ignore benchmarks/bench_step_overhead.py --backend auto
    .venv/bin/python -W ignore benchmarks/bench_step_overhead.py --backend c --cases A04

To compare two trees in one session, run it in turn with ``PYTHONPATH=<tree>/src``.
"""

from __future__ import annotations

import argparse
import hashlib
import time

import numpy as np

#: name -> (zoo model, options, t_span, rtol = atol or None for the default Solver)
CASES = {
    "A04": ("bricard", {}, (0.0, 10.0), (1e-3, 1e-4, 1e-5)),
    "four-bar": ("four-bar", {}, (0.0, 30.0), (None,)),
    "A02": ("n-four-bar", {"n": 40}, (0.0, 20.0), (1e-5,)),
}


def main() -> None:
    import symbody as sb

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="auto", help="compile backend (auto, c, llvm)")
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    for case in args.cases:
        name, options, span, rtols = CASES[case]
        zoo = sb.models.get(name, **options)
        model = sb.compile(zoo.eom, backend=args.backend)
        for rtol in rtols:
            solver = sb.Solver() if rtol is None else sb.Solver(rtol=rtol, atol=rtol)
            sol = sb.simulate(model, span, zoo.initial_state, zoo.constants, solver=solver)
            times = []
            for _ in range(args.repeat):
                t0 = time.process_time()
                sol = sb.simulate(model, span, zoo.initial_state, zoo.constants, solver=solver)
                times.append(time.process_time() - t0)
            digest = hashlib.sha256(np.asarray(sol.t).tobytes() + np.asarray(sol.x).tobytes())
            print(f"{case:9s} {args.backend:5s} rtol {rtol if rtol else 'default':>7}: "
                  f"{1e3 * float(np.median(times)):8.2f} ms (median of {args.repeat}), "
                  f"nfev {sol.nfev}, steps {sol.nsteps}, status {sol.status}, "
                  f"trajectory {digest.hexdigest()[:12]}", flush=True)


if __name__ == "__main__":
    main()
