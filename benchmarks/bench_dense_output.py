"""What keeping the integrator's dense output costs and buys (issue 34, item 1).

For each case the run with ``Solver(dense_output=True)`` (the default: every step kept for
``trajectory(t)``) and with ``dense_output=False`` (the samples' cubic Hermite interpolant),
in turn in one session: CPU time (median of ``--repeat`` runs after a warm-up, ratio
kept/not kept), the memory of the kept steps, and the accuracy between the samples (three
points inside each interval between samples): the pendulum q'' = -(g/L) sin q against
scipy's DOP853 at rtol = atol = 1e-13, the four-bar and Bricard by their loop residual::

    .venv/bin/python -W ignore benchmarks/bench_dense_output.py --backend auto
    .venv/bin/python -W ignore benchmarks/bench_dense_output.py --backend c
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _pendulum(sb):
    import sympy as sm
    import sympy.physics.mechanics as me

    t = me.dynamicsymbols._t
    q, u = me.dynamicsymbols("q u")
    g, length = sm.symbols("g L")
    eom = sb.EquationsOfMotion([q], [u], kinematic=[q.diff(t) - u],
                               dynamic=(sm.Matrix([[1]]), sm.Matrix([g / length * sm.sin(q)])),
                               constants=[g, length])
    return eom, [1.0, 0.0], {"g": 9.81, "L": 0.5}


def _between(t: np.ndarray) -> np.ndarray:
    return np.concatenate([t[:-1] + f * np.diff(t) for f in (0.25, 0.5, 0.75)])


def _error(sb, name, model, sol, P) -> float:
    tm = _between(sol.t)
    if name == "pendulum":
        from scipy.integrate import solve_ivp

        ref = solve_ivp(lambda t, y: [y[1], -9.81 / 0.5 * np.sin(y[0])], (sol.t[0], sol.t[-1]),
                        [1.0, 0.0], method="DOP853", rtol=1e-13, atol=1e-13, dense_output=True)
        return float(np.abs(sol(tm)[:, 0] - ref.sol(tm)[0]).max())
    x = sol(tm)
    return float(max(np.abs(model.holonomic_residual(xi[:model.N], P, ti)).max()
                     for ti, xi in zip(tm, x)))


def main() -> None:
    import symbody as sb

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    cases = {"pendulum": (_pendulum(sb), (0.0, 5.0), None)}
    for name, key, span, tol in (("four-bar", "four-bar", (0.0, 30.0), None),
                                 ("A04 Bricard", "bricard", (0.0, 10.0), 1e-5)):
        zoo = sb.models.get(key)
        cases[name] = ((zoo.eom, zoo.initial_state, zoo.constants), span, tol)
    print(f"backend={args.backend}; CPU time: median of {args.repeat} (machine shared: ratios only)")
    print(f"{'case':14s} {'steps':>6s} {'kept [ms]':>10s} {'not [ms]':>9s} {'ratio':>6s} "
          f"{'memory':>9s} {'error between samples: kept':>28s} {'Hermite':>9s}")
    for name, ((eom, x0, p), span, tol) in cases.items():
        model = sb.compile(eom, backend=args.backend)
        P = model.constants_array(p)
        solvers = {keep: sb.Solver(dense_output=keep, **({"rtol": tol, "atol": tol} if tol else {}))
                   for keep in (True, False)}
        times = {True: [], False: []}
        sols = {}
        for keep in (True, False):
            sols[keep] = sb.simulate(model, span, x0, p, solver=solvers[keep])   # warm-up
        for _ in range(args.repeat):
            for keep in (True, False):
                start = time.process_time()
                sols[keep] = sb.simulate(model, span, x0, p, solver=solvers[keep])
                times[keep].append(time.process_time() - start)
        kept, plain = (float(np.median(times[k])) for k in (True, False))
        steps = sols[True].steps
        errors = [_error(sb, "pendulum" if name == "pendulum" else name, model, sols[k], P)
                  for k in (True, False)]
        print(f"{name:14s} {len(steps):6d} {1e3 * kept:10.2f} {1e3 * plain:9.2f} {kept / plain:6.2f} "
              f"{steps.values.nbytes / 1024:7.0f} kB {errors[0]:28.2e} {errors[1]:9.2e}")


if __name__ == "__main__":
    main()
