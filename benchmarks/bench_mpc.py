"""Receding-horizon control of the cart-pole: the re-solve time per control period.

The controller (:class:`symbody.optimize.ModelPredictiveController`) re-solves the horizon
problem :func:`symbody.optimize.examples.cart_pole_horizon` (50 nodes 20 ms apart, |F| <= 20 N)
every 20 ms, warm-started from its shifted previous solution; the plant is ``sb.simulate``
one period at a time.  Two runs:

* ``stabilize``: from the pole 0.3 rad off upright, 2 s (100 periods);
* ``swing-up``: from hanging at rest, 5 s (250 periods; the first solve is cold).

For each: the re-solve wall time (median, max; the first, cold solve included), the process
CPU time per step (median; all threads: less sensitive than the wall time to other loads on
a shared machine), IPOPT's iterations, |F| max and the pole's tilt over the last second.
The anchors, measured in the same run: a cold solve of the same horizon problem from the same
states (no shifted start, no multipliers, IPOPT's default options), at 10 states of the
closed loop (the ratio cold / warm is what the warm start buys); and IPOPT's floor, a convex
sparse QP of the same size solved through cyipopt (CPU per iteration).

    python benchmarks/bench_mpc.py [--nodes 50] [--period 0.02] [--transcription backward-euler]
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

from symbody.optimize import ModelPredictiveController, examples


def run(nodes: int, period: float, transcription: str, name: str, start: float,
        duration: float, solver: str = "auto") -> dict:
    problem, guess = examples.cart_pole_horizon(num_nodes=nodes, period=period,
                                                force_limit=20.0, transcription=transcription)
    mpc = ModelPredictiveController(problem, solve_options={"solver": solver})
    x0 = {"q0": 0.0, "q1": start, "u0": 0.0, "u1": 0.0}
    loop = mpc.run(x0, duration, guess=guess if start < 0 else {"q1": start})
    x = loop.trajectory.x
    tilt = np.angle(np.exp(1j * (x[:, 1] - math.pi / 2)))
    last = loop.trajectory.t >= loop.trajectory.t[-1] - 1.0
    # the anchor: cold solves from states of the loop
    cold_wall, cold_cpu, cold_iters, warm_wall = [], [], [], []
    picks = np.linspace(1, len(loop.solve_times) - 1, 10).astype(int)
    for k in picks:
        mpc.reset()
        xs = x[k]
        nlp = problem.nlp
        cols = nlp.iX[0][mpc.state_columns]
        lb, ub = nlp.lb.copy(), nlp.ub.copy()
        nlp.lb[cols] = nlp.ub[cols] = xs[mpc.state_positions]
        w0 = problem.initial_vector({"q1": float(xs[1])})
        w0[cols] = xs[mpc.state_positions]
        t0, c0 = time.perf_counter(), time.process_time()
        res = problem.solve(w0, progress=False, max_iter=500, tol=1e-6)
        cold_wall.append(time.perf_counter() - t0)
        cold_cpu.append(time.process_time() - c0)
        cold_iters.append(res.iterations)
        nlp.lb[:], nlp.ub[:] = lb, ub
        warm_wall.append(loop.solve_times[k])
    return {
        "run": name, "transcription": transcription, "nodes": nodes, "period_ms": 1e3 * period,
        "periods": len(loop.solve_times),
        "solved": int(np.isin(loop.statuses, (0, 1)).sum()),
        "median_ms": 1e3 * loop.median_solve_time, "max_ms": 1e3 * loop.max_solve_time,
        "median_after_first_ms": 1e3 * float(np.median(loop.solve_times[1:])),
        "max_after_first_ms": 1e3 * float(np.max(loop.solve_times[1:])),
        "cpu_median_ms": 1e3 * float(np.median(loop.cpu_times)),
        "iterations_median": float(np.median(loop.iterations)),
        "iterations_max": int(loop.iterations.max()),
        "max_abs_F": float(np.abs(loop.inputs).max()),
        "tilt_last_second": float(np.abs(tilt[last]).max()),
        "cold_median_ms": 1e3 * float(np.median(cold_wall)),
        "cold_cpu_median_ms": 1e3 * float(np.median(cold_cpu)),
        "cold_iterations_median": float(np.median(cold_iters)),
        "cold_over_warm": float(np.median(np.array(cold_wall) / np.array(warm_wall))),
    }


def ipopt_floor(n: int, m: int, repeats: int = 20) -> dict:
    """IPOPT's own cost on this machine: a convex sparse QP of the horizon NLP's size
    (``min x·x/2``, banded equality constraints, bounds), solved from zero through cyipopt with
    the same options; CPU time per solve and per iteration."""
    import cyipopt
    rows = np.repeat(np.arange(m), 3)
    cols = np.stack([np.arange(m), np.arange(m) + 1, (np.arange(m) + 3) % n], axis=1).ravel()
    vals = np.tile([1.0, -1.0, 0.5], m)
    b = np.random.default_rng(0).uniform(-1, 1, m)

    class QP:
        def objective(self, x):
            return 0.5 * x @ x

        def gradient(self, x):
            return x

        def constraints(self, x):
            return np.bincount(rows, weights=vals * x[cols], minlength=m)

        def jacobian(self, x):
            return vals

        def jacobianstructure(self):
            return rows, cols

        def hessianstructure(self):
            return np.arange(n), np.arange(n)

        def hessian(self, x, lagrange, obj_factor):
            return np.full(n, obj_factor)

    iterations = []

    class Counted(QP):
        def intermediate(self, *stats):
            iterations.append(stats[1])
            return True

    c0 = time.process_time()
    for _ in range(repeats):
        prob = cyipopt.Problem(n=n, m=m, problem_obj=Counted(), lb=np.full(n, -5.0),
                               ub=np.full(n, 5.0), cl=b, cu=b)
        prob.add_option("print_level", 0)
        prob.add_option("sb", "yes")
        prob.solve(np.zeros(n))
    cpu = (time.process_time() - c0) / repeats
    its = max(iterations[-1], 1)
    return {"qp_cpu_ms": 1e3 * cpu, "qp_iterations": its, "qp_cpu_ms_per_iteration": 1e3 * cpu / its}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--period", type=float, default=0.02)
    parser.add_argument("--transcription", default="backward-euler")
    parser.add_argument("--solver", default="auto",
                        help="auto (CasADi's IPOPT when installed), ipopt-casadi, cyipopt")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    rows = [run(args.nodes, args.period, args.transcription, "stabilize", math.pi / 2 + 0.3, 2.0, args.solver),
            run(args.nodes, args.period, args.transcription, "swing-up", -math.pi / 2, 5.0, args.solver)]
    head = ("run", "periods", "solved", "median_ms", "max_ms", "median_after_first_ms",
            "max_after_first_ms", "cpu_median_ms", "iterations_median", "iterations_max",
            "max_abs_F", "tilt_last_second", "cold_median_ms", "cold_iterations_median",
            "cold_over_warm")
    print(f"cart-pole MPC, {args.transcription}, {args.nodes} nodes, period "
          f"{1e3 * args.period:g} ms")
    print(" | ".join(head))
    for r in rows:
        print(" | ".join(f"{r[h]:.3g}" if isinstance(r[h], float) else str(r[h]) for h in head))
    problem, _ = examples.cart_pole_horizon(num_nodes=args.nodes, period=args.period,
                                            transcription=args.transcription)
    floor = ipopt_floor(problem.nlp.n, problem.nlp.m)
    print(f"IPOPT floor: a sparse QP of the same size ({problem.nlp.n} unknowns, "
          f"{problem.nlp.m} constraints): {floor['qp_cpu_ms']:.3g} ms CPU per solve, "
          f"{floor['qp_iterations']} iterations, {floor['qp_cpu_ms_per_iteration']:.3g} ms each")
    rows.append({"run": "ipopt-floor", **floor})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
