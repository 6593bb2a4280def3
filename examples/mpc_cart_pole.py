"""Receding-horizon swing-up and stabilization of the cart-pole with an input limit.

The controller (symbody.optimize.ModelPredictiveController) re-solves a 50-node horizon
(20 ms apart, 0.98 s) every 20 ms from the measured state, warm-started from its previous
solution shifted by one period; the plant is symbody.simulate, one period at a time with the
controller's force held.  From hanging at rest the pole is swung up and kept upright with
abs(F) <= 20 N; the script prints the per-step solve times (median, max).

    python examples/mpc_cart_pole.py [--duration 5] [--nodes 50] [--period 0.02] [--limit 20]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from symbody.optimize import ModelPredictiveController, examples


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--period", type=float, default=0.02)
    parser.add_argument("--limit", type=float, default=20.0)
    parser.add_argument("--start", type=float, default=-math.pi / 2,
                        help="the pole's initial angle q1 (upright: pi/2)")
    args = parser.parse_args(argv)
    problem, guess = examples.cart_pole_horizon(num_nodes=args.nodes, period=args.period,
                                                force_limit=args.limit)
    mpc = ModelPredictiveController(problem)
    x0 = {"q0": 0.0, "q1": args.start, "u0": 0.0, "u1": 0.0}
    loop = mpc.run(x0, args.duration, guess=guess)
    print(loop)
    x = loop.trajectory.x
    # the pole's angle from upright, wrapped to (-pi, pi]
    tilt = np.angle(np.exp(1j * (x[:, 1] - math.pi / 2)))
    last = loop.trajectory.t >= loop.trajectory.t[-1] - 1.0
    print(f"max |F| = {np.abs(loop.inputs).max():.3f} N (limit {args.limit} N); in the last "
          f"second: |tilt| <= {np.abs(tilt[last]).max():.4f} rad, |cart| <= "
          f"{np.abs(x[last, 0]).max():.4f} m")
    print(f"re-solve wall time: median {1e3 * loop.median_solve_time:.2f} ms, max "
          f"{1e3 * loop.max_solve_time:.2f} ms; CPU median "
          f"{1e3 * float(np.median(loop.cpu_times)):.2f} ms; IPOPT iterations median "
          f"{np.median(loop.iterations):.0f}, max {loop.iterations.max()}")


if __name__ == "__main__":
    main()
