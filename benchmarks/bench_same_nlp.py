"""Issue 40 §4: does IPOPT take the same path on symbody's NLP as on the one written by hand?

The pendulum swing-up of opty's gallery (backward Euler, N = 501, |T| <= 2) from random
starts (θ uniform in [-π, π], ω in [-1, 1], T in [-2, 2] at every node; seeds 0..K-1),
solved by:

* symbody, ``solver="ipopt-casadi"`` (its compiled kernels in CasADi's IPOPT) and
  ``"ipopt-casadi-sx"`` (CasADi's AD of symbody's blocks);
* the same NLP written directly in CasADi SX, in symbody's order (node by node; the
  defects interval by interval) and in opty's order (all θ, all ω, all T; the kinematic
  defects, then the dynamic ones);
* ``bench_optimize.run_casadi`` (opty's order, the equations through ``sympy.lambdify``:
  the same NLP with a different expression graph, hence other round-off).

All are the same NLP (tests/optimize/test_same_nlp.py checks values, Jacobians and the
Hessian of the Lagrangian after the permutation); the table shows how far IPOPT's path
depends on the order of the unknowns and rows and on round-off.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_same_nlp.py --seeds 20
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import bench_optimize as bo
import numpy as np

from symbody.optimize import examples

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the shared test systems
from systems.casadi_swing_up import swing_up_nlp  # noqa: E402

OPTIONS = {"ipopt.print_level": 0, "print_time": 0, "ipopt.tol": 1e-8, "ipopt.max_iter": 3000,
           "ipopt.sb": "yes"}


def hand_written(num_nodes: int, duration: float, order: str):
    """IPOPT on the swing-up written in CasADi (systems/casadi_swing_up.py): (solver, lbx, ubx)."""
    import casadi as ca
    w, f, g, lbx, ubx = swing_up_nlp(order, num_nodes, duration)
    return ca.nlpsol("hand", "ipopt", {"x": w, "f": f, "g": g}, OPTIONS), lbx, ubx


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--json")
    args = ap.parse_args()
    problem, _ = examples.pendulum_swing_up()
    N, T = problem.num_nodes, problem.duration
    theta, omega = problem.eom.q[0], problem.eom.u[0]
    torque = problem.eom.specifieds[0]
    hand = {order: hand_written(N, T, order) for order in ("symbody", "opty")}
    names = ["symbody ipopt-casadi", "symbody ipopt-casadi-sx", "CasADi, symbody's order",
             "CasADi, opty's order", "CasADi via lambdify"]
    print("seed | " + " | ".join(names) + "   (iterations, objective; * = not solved)")
    rows = []
    for seed in range(args.seeds):
        rng = np.random.default_rng(seed)
        S = np.column_stack([rng.uniform(-np.pi, np.pi, N), rng.uniform(-1, 1, N),
                             rng.uniform(-2, 2, N)])
        start = {theta: S[:, 0], omega: S[:, 1], torque: S[:, 2]}
        out = []
        for solver in ("ipopt-casadi", "ipopt-casadi-sx"):
            r = problem.solve(start, progress=False, solver=solver)
            out.append((r.iterations, r.objective, r.success))
        for order in ("symbody", "opty"):
            s, lb, ub = hand[order]
            sol = s(x0=S.T.ravel() if order == "opty" else S.ravel(), lbx=lb, ubx=ub, lbg=0, ubg=0)
            out.append((s.stats()["iter_count"], float(sol["f"]), bool(s.stats()["success"])))
        row, _ = bo.run_casadi(problem, start)
        out.append((row["iterations"], row["objective"], row["status"] == "Solve_Succeeded"))
        rows.append({"seed": seed, **{n: o for n, o in zip(names, out)}})
        print(f"{seed:4d} | " + " | ".join(f"{i:4d} {f:8.4f}{'' if ok else '*'}" for i, f, ok in out),
              flush=True)
    same = sum(len({r[n][0] for n in names}) == 1 for r in rows)
    print(f"{same} of {len(rows)} starts: the same iterations in all five")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
