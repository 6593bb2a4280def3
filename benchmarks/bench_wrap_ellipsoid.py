"""OpenSim's WrapEllipsoid program (symbody.opensim.forces.wrap_ellipsoid) on Arm26's BIClong.

1. Agreement: the float program's BIClong length against OpenSim 4.6's ``getLength`` at
   random states (the segment P2-P3 put in the ellipsoid's frame from OpenSim's own path
   points), and how many states would need more unrolled steps (NaN).
2. Size: the symbolic program's operations (symbody's straight-line program) and, with
   ``--cse``, symengine's ``Lambdify(cse=True)`` CPU time at a given Newton step count.

    PYTHONPATH=src:tests python benchmarks/bench_wrap_ellipsoid.py --states 400 [--cse 4 8]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from symbody.opensim import load_opensim  # noqa: E402
from symbody.opensim.forces import wrap_ellipsoid as W  # noqa: E402
from systems.opensim_oracle import ask_opensim  # noqa: E402

ARM26 = ROOT / "tests" / "data" / "opensim" / "arm26.osim"


def agreement(n: int) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "opensim"))
    from test_wrap_ellipsoid import _arm26_parts, _rigid_fit
    Rw, pw, dims, humerus, points = _arm26_parts()
    model = load_opensim(ARM26)
    rng = np.random.default_rng(1)
    qs = [model.random_coordinates(rng) for _ in range(n)]
    queries = []
    for q in qs:
        Q = model.to_opensim_state(q)[0].tolist()
        queries += [{"kind": "points", "Q": Q, "names": list(humerus) + points},
                    {"kind": "muscles", "Q": Q, "names": ["BIClong"], "coordinates": []}]
    answers = ask_opensim(ARM26, queries, without_forces=False)
    o, errs, nan, t_cpu = W.FloatArithmetic(), [], 0, 0.0
    for k in range(n):
        ground = np.array(answers[2 * k])
        R, p = _rigid_fit(np.array(list(humerus.values())), ground[:len(humerus)])
        G = ground[len(humerus):]
        ends = [Rw.T @ (R.T @ (G[i] - p) - pw) for i in (1, 2)]
        t0 = time.process_time()
        wraps, r1, r2, s = W.ellipsoid_wrap(o, dims, 1, -1, "hybrid", *map(list, ends))
        t_cpu += time.process_time() - t0
        L = sum(np.linalg.norm(G[i + 1] - G[i]) for i in range(len(G) - 1))
        if wraps:
            if math.isnan(s):
                nan += 1
                continue
            L += (np.linalg.norm(np.array(r1) - ends[0]) + s
                  + np.linalg.norm(ends[1] - np.array(r2)) - np.linalg.norm(ends[1] - ends[0]))
        L_os = answers[2 * k + 1]["lengths"][0]
        errs.append((abs(L - L_os) / L_os, wraps))
    e = np.array(errs)
    print(f"{n} states: {int(e[:, 1].sum())} wrapping, {nan} NaN (more steps needed); "
          f"max |L - L_OpenSim| / L_OpenSim {e[:, 0].max():.2e}; float program "
          f"{1e3 * t_cpu / n:.1f} ms CPU a state")


def size(newton_steps: list) -> None:
    import symengine as se

    from symbody.compilation.c_kernels import straight_line_program
    for steps in newton_steps:
        W.NEWTON_STEPS = steps
        x = se.symbols("_a0:6")
        wraps, r1, r2, s = W.ellipsoid_wrap(W.SymbolicArithmetic(), (0.025, 0.02, 0.02), 1, -1,
                                            "hybrid", list(x[:3]), list(x[3:]))
        s = s.subs({W.SymbolicArithmetic.nan: se.RealDouble(0.0)})
        ops = len(straight_line_program([s], 6))
        t0 = time.process_time()
        se.cse([s])
        print(f"NEWTON_STEPS {steps}: {ops} operations; symengine cse "
              f"{time.process_time() - t0:.1f} s CPU", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--states", type=int, default=100)
    ap.add_argument("--cse", type=int, nargs="*", default=[])
    args = ap.parse_args()
    agreement(args.states)
    if args.cse:
        size(args.cse)
