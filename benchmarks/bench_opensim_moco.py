"""Minimum-effort reaching with Arm26: symbody's OptimalControlProblem against OpenSim Moco.

The problem of docs/guides/opensim_reaching.md, solved by both tools in the same run:
Arm26 with straight-line muscle paths (wrap objects removed) and rigid-tendon
DeGrooteFregly2016Muscles (written by OpenSim's API, the one file both tools load), from
rest (shoulder 0, elbow 0.3 rad, activations 0.01) to shoulder 0.3 rad and elbow 1.2 rad at
rest in 1 s, minimising the integral of the squared excitations.  Both transcribe it the
same way: separated Hermite-Simpson on the same mesh, excitations free at the interval
midpoints, Simpson's rule for the cost, the same bounds and initial guess.  IPOPT's
tolerance: 1e-8 for Moco (its limited-memory Hessian gets no further in a few hundred
iterations), 1e-10 for symbody's compared solution (also solved at 1e-8: on this flat
problem, objective 0.018, IPOPT stops there 4e-5 above the optimum).  Moco runs in a process of its own (the opensim wheel's bundled casadi cannot
share a process with the casadi package that symbody's default solver uses).

Reported: both optima, the largest differences of the states and excitations over the
collocation points, the end states, IPOPT's iterations, and the CPU time of each tool's
setup and solve (one run each: Moco's solve takes minutes).  Then two cross-checks in
symbody's discrete equations: the Hermite-Simpson defects and the Simpson cost of Moco's
solution, and symbody's optimum when started from Moco's solution.

    PYTHONPATH=src python benchmarks/bench_opensim_moco.py [--nodes 26] [--small]
        [--moco-hessian limited-memory|exact] [--tol 1e-8] [--moco-json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the shared problem
from systems.moco_reaching import (  # noqa: E402
    SMALL,
    Reach,
    hermite_simpson_check,
    moco_in_symbody_order,
    solve_with_moco,
    symbody_points,
    symbody_problem,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=26)
    ap.add_argument("--small", action="store_true",
                    help="the test's problem instead (3 muscles, 0.5 s, 10 intervals; --nodes ignored)")
    ap.add_argument("--moco-hessian", default="limited-memory",
                    choices=("limited-memory", "exact"))
    ap.add_argument("--tol", type=float, default=1e-8, help="IPOPT's tol, both tools")
    ap.add_argument("--sb-tol", type=float, default=1e-10,
                    help="symbody's tol for the compared solution (the NLP is flat: at 1e-8 "
                         "IPOPT stops 4e-5 above the optimum)")
    ap.add_argument("--moco-json", default="",
                    help="save Moco's answer here, or reuse it if the file exists")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        model_file = Path(tmp) / "arm26_reaching.osim"
        reach = SMALL if args.small else Reach(nodes=args.nodes)
        # Moco first (its own process): it writes the model file both tools load
        wall = time.perf_counter()
        if args.moco_json and Path(args.moco_json).exists():     # a saved Moco answer
            moco = json.loads(Path(args.moco_json).read_text())
            solve_with_moco(reach, model_file, write_only=True)
        else:
            moco = solve_with_moco(reach, model_file, tol=args.tol, hessian=args.moco_hessian)
            if args.moco_json:
                Path(args.moco_json).write_text(json.dumps(moco))
        moco_wall = time.perf_counter() - wall
        c0 = time.process_time()
        arm, problem, guess = symbody_problem(reach, model_file)
        sb_setup = time.process_time() - c0
        c0 = time.process_time()
        result = problem.solve(guess, tol=args.sb_tol)
        sb_solve = time.process_time() - c0
        same_tol = problem.solve(guess, tol=args.tol)     # IPOPT's tolerance as Moco's
        tm, xm, rm = moco_in_symbody_order(arm, moco)
        ts, xs, rs = symbody_points(problem, result)   # every point: nodes and midpoints
        if len(ts) != len(tm) or np.abs(ts - tm).max() > 1e-12:
            raise RuntimeError("the two tools' collocation points differ")
        defect, moco_cost_here, f = hermite_simpson_check(arm, tm, xm, rm)
        nlp = problem.nlp
        w = problem.initial_vector(None)
        w[nlp.iX], w[nlp.iR], w[nlp.iV] = xm, rm, f[:, nlp.model.D]
        from_moco = problem.solve(w, tol=args.sb_tol)

    nq = 2
    rows = [
        ("objective", f"{result.objective:.9f}", f"{moco['objective']:.9f}",
         f"rel. diff {abs(result.objective - moco['objective']) / moco['objective']:.1e}"),
        (f"objective at IPOPT tol {args.tol:g} (both)", f"{same_tol.objective:.9f}",
         f"{moco['objective']:.9f}", f"Moco status {moco['status']}"),
        ("IPOPT iterations", result.iterations, moco["iterations"], ""),
        ("setup CPU s (load, transcription / study)", f"{sb_setup:.2f}", f"{moco['setup']:.2f}", ""),
        ("solve CPU s", f"{sb_solve:.2f}", f"{moco['solve']:.2f}",
         f"Moco / symbody {moco['solve'] / sb_solve:.0f}x"),
        ("max |q| diff (rad)", "", "", f"{np.abs(xs[:, :nq] - xm[:, :nq]).max():.1e}"),
        ("max |u| diff (rad/s)", "", "", f"{np.abs(xs[:, nq:2 * nq] - xm[:, nq:2 * nq]).max():.1e}"),
        ("max |activation| diff", "", "", f"{np.abs(xs[:, 2 * nq:] - xm[:, 2 * nq:]).max():.1e}"),
        ("max |excitation| diff", "", "", f"{np.abs(rs - rm).max():.1e}"),
        ("end state q, u", np.round(xs[-1, :4], 9).tolist(), np.round(xm[-1, :4], 9).tolist(), ""),
    ]
    print(f"Arm26 minimum-effort reach ({len(reach.muscles)} muscles, {reach.T:g} s), "
          f"Hermite-Simpson, {reach.nodes - 1} intervals, "
          f"IPOPT tol: symbody {args.sb_tol:g}, Moco {args.tol:g}; Moco Hessian: {args.moco_hessian}, symbody: exact; "
          f"symbody solver {result.info.get('solver')}; Moco wall {moco_wall:.0f} s")
    print("| | symbody | Moco | |\n|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    print(f"Moco's solution in symbody's discrete equations: largest Hermite-Simpson defect "
          f"{defect:.1e}, Simpson cost {moco_cost_here:.9f}")
    print(f"symbody started from Moco's solution: objective {from_moco.objective:.9f} "
          f"in {from_moco.iterations} iterations ({from_moco.message})")


if __name__ == "__main__":
    main()
