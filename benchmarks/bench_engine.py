"""The numeric engine: one rhs call and whole simulations, in CPU time of this process.

Measured (``time.process_time``, best of several repetitions, so that other jobs on a
shared machine count as little as possible):

* the zoo four-bar (symbody.KanesMethod, unreduced: 2 dependent speeds, 2 holonomic
  constraints, multipliers): one ``rhs`` call; 30 s simulations with 600 output samples in
  the modes "none", "project" (rtol = atol = 1e-6 and 1e-10) and "dae" (1e-10); one
  ``linearize`` at its initial state;
* the 20-link pendulum on a cart (formed with symbody.KanesMethod, a specified force):
  one ``rhs`` call and a 10 s simulation;
* the falling n-link chain of ``bench_scale.py`` (no input, 5 degrees off upright, PyDy's
  numbers; ``--steps-links``, default 20): a 10 s simulation at the default options with
  the Runge-Kutta steps in compiled code (what ``simulate`` does when every kernel is
  generated C) and with scipy's Python steps on the same model (``native_rk`` switched
  off), in the same process; steps and right-hand-side evaluations of each.

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


def compiled_steps(n: int) -> dict:
    """10 s of the falling n-link chain: compiled Runge-Kutta steps vs scipy's Python steps."""
    import math

    import symbody.analysis.simulation.native_rk as native_rk
    N, q, u, kd, bodies, loads, constants = n_link_pendulum_on_cart(n, specified=False)
    km = symbody.KanesMethod(N, q, u, kd)
    km.kanes_equations(bodies, loads)
    model = symbody.compile(km.to_eom())
    P = np.array([9.81 if str(c) == "g" else (0.01 / n if str(c).startswith("m") else 1.0 / n)
                  for c in model.constants])
    x0 = np.zeros(len(model.states))
    for i in range(1, n + 1):
        x0[i] = math.pi / 2 + (-1) ** (i + 1) * math.radians(5.0)
    model.rhs(0.0, x0, P)                       # machine code made before timing
    res, original = {}, native_rk.native_solver
    try:
        for name in ("compiled", "python"):
            if name == "python":
                native_rk.native_solver = lambda *args: None
            sol = None

            def run():
                nonlocal sol
                sol = symbody.simulate(model, (0.0, 10.0), x0, P)
            res[f"{n}-link fall 10 s, {name} steps (s)"] = best(run, 1, 3)
            res[f"{n}-link fall 10 s, {name} steps: steps"] = sol.nsteps
            res[f"{n}-link fall 10 s, {name} steps: rhs evaluations"] = sol.nfev
    finally:
        native_rk.native_solver = original
    res[f"{n}-link fall 10 s, python / compiled"] = (res[f"{n}-link fall 10 s, python steps (s)"]
                                                    / res[f"{n}-link fall 10 s, compiled steps (s)"])
    return res


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--links", type=int, default=20)
    ap.add_argument("--steps-links", type=int, nargs="*", default=[20],
                    help="chain sizes for compiled vs Python Runge-Kutta steps")
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
            fb, (0, 30), mdl.initial_state, mdl.constants, constraints=mode, t_eval=ts,
            solver=symbody.Solver(rtol=tol, atol=tol)), 1, 3)
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
    for n in args.steps_links:
        res.update(compiled_steps(n))
    for k, v in res.items():
        print(f"{k:40s} {v:10.4g}")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    main()
