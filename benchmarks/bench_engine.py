"""The numeric engine: one rhs call and whole simulations, in CPU time of this process.

Measured (``time.process_time``, best of several repetitions, so that other jobs on a
shared machine count as little as possible):

* the zoo four-bar (symbody.KanesMethod, unreduced: 2 dependent speeds, 2 holonomic
  constraints, multipliers): one ``rhs`` call; 30 s simulations with 600 output samples in
  the modes "none", "project" (rtol = atol = 1e-6 and 1e-10) and "dae" (1e-10); one
  ``linearize`` at its initial state;
* the 20-link pendulum on a cart (formed with symbody.KanesMethod, a specified force):
  one ``rhs`` call and a 10 s simulation.

Compare two versions of symbody by running this script with each on PYTHONPATH in the same
session (the figures are only comparable within one session)::

    PYTHONPATH=<old tree>/src python benchmarks/bench_engine.py
    PYTHONPATH=src python benchmarks/bench_engine.py
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the shared test systems
import symbody  # noqa: E402
from symbody.models import four_bar  # noqa: E402
from systems import n_link_pendulum_on_cart  # noqa: E402


def best(f, n: int, reps: int = 5) -> float:
    """Smallest CPU time per call of f over ``reps`` loops of ``n`` calls."""
    b = float("inf")
    for _ in range(reps):
        t0 = time.process_time()
        for _ in range(n):
            f()
        b = min(b, (time.process_time() - t0) / n)
    return b


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--links", type=int, default=20)
    ap.add_argument("--json", type=str, default=None)
    args = ap.parse_args(argv)
    res: dict[str, float] = {}
    mdl = four_bar()
    fb = symbody.compile(mdl.eom)
    P = fb.constants_array(mdl.constants)
    x = fb.consistent_state(fb.state_array(mdl.initial_state), P)
    x[-1] = 0.5
    res["four-bar rhs (us)"] = 1e6 * best(lambda: fb.rhs(0.0, x, P), 5000)
    ts = np.linspace(0, 30, 600)
    for mode, tol in [("none", 1e-6), ("project", 1e-6), ("project", 1e-10), ("dae", 1e-10)]:
        res[f"four-bar 30 s {mode} tol {tol:g} (s)"] = best(lambda mode=mode, tol=tol: symbody.simulate(
            fb, (0, 30), mdl.initial_state, mdl.constants, constraints=mode, t_eval=ts, rtol=tol,
            atol=tol), 1, 3)
    res["four-bar linearize (ms)"] = 1e3 * best(
        lambda: symbody.linearize(fb, mdl.initial_state, mdl.constants), 20)
    N, q, u, kd, bodies, loads, _ = n_link_pendulum_on_cart(args.links)
    km = symbody.KanesMethod(N, q, u, kd)
    km.kanes_equations(bodies, loads)
    chain = symbody.compile(km.to_eom())
    rng = np.random.default_rng(1)
    xc = rng.uniform(-0.5, 0.5, len(chain.states))
    Pc = rng.uniform(0.5, 1.5, len(chain.constants))
    r = np.array([0.1])
    res[f"{args.links}-link chain rhs (us)"] = 1e6 * best(lambda: chain.rhs(0.0, xc, Pc, r), 3000)
    res[f"{args.links}-link chain 10 s simulate (s)"] = best(
        lambda: symbody.simulate(chain, (0, 10), xc, Pc, specifieds=[0.0]), 1, 3)
    for k, v in res.items():
        print(f"{k:40s} {v:10.4g}")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    main()
