"""The bouncing block with its two PointOnLineConstraints on: 1 s of OpenSim 4.6's ``Manager``
against ``sb.simulate``, same run, same start, same accuracy.

Model: opensim-models' ``Models/BouncingBlock/bouncing_block.osim`` (the copy in tests/data):
a block on a FreeJoint with a two-link leg, its origin and foot held on the vertical axis
(4 of 8 coordinates dependent), a HuntCrossleyForce heel (stiffness 1e8) that strikes the
platform, a spring, a bushing and a joint limit.  Start: the state of
``tests/opensim/test_opensim_point_on_line.py``'s run (0.3 of random coordinates, the block
1.2 m up, put on the constraints by ``project_coordinates``/``full_speeds``).

OpenSim integrates to 1 s at ``--accuracy`` (its default integrator, RungeKuttaMerson) in a
child process that times itself (``time.process_time`` around ``Manager.integrate``);
symbody integrates at ``--rtols`` (rtol = atol, its default method and constraint mode),
CPU time, the two sides interleaved, medians of ``--repeats``.  Errors: the largest
difference of q (rad or m) at 1 s from a tight reference (``sb.simulate`` at rtol 1e-11);
the constraint residual: the largest |f_h| over symbody's output samples.

    PYTHONPATH=src:tests python benchmarks/bench_opensim_point_on_line.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MODEL = HERE.parent / "tests" / "data" / "opensim" / "bouncing_block.osim"

OPENSIM_CHILD = r"""
import json, sys, time
import opensim as osim
osim.Logger.removeFileSink()
osim.Logger.setLevelString("error")
path, Q, U, tf, accuracy = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), \
    float(sys.argv[4]), float(sys.argv[5])
m = osim.Model(path)
s = m.initSystem()
s.setQ(osim.Vector(Q))
s.setU(osim.Vector(U))
s.setTime(0.0)
man = osim.Manager(m)
man.setIntegratorAccuracy(accuracy)
man.initialize(s)
t0 = time.process_time()
sf = man.integrate(tf)
cpu = time.process_time() - t0
print(json.dumps({"cpu": cpu, "Q": [sf.getQ().get(i) for i in range(sf.getQ().size())],
                  "steps": man.getStatesTable().getNumRows()}))
"""


def start_state(model):
    """The test's start: (q, u) on the constraints, the block 1.2 m up."""
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    rng = np.random.default_rng(2)
    q0 = 0.3 * model.random_coordinates(rng)
    q0[model.coordinate_names.index("yTranslation")] = 1.2
    q, ok, _ = nm.project_coordinates(q0, p)
    assert ok
    return q, nm.full_speeds(q, rng.uniform(-1, 1, len(model.u_ind)), p)


def run_opensim(model, q, u, tf: float, accuracy: float) -> dict:
    Q, U = model.to_opensim_state(q, u)
    out = subprocess.run([sys.executable, "-c", OPENSIM_CHILD, str(MODEL), json.dumps(Q.tolist()),
                          json.dumps(U.tolist()), str(tf), str(accuracy)],
                         capture_output=True, text=True, check=True)
    ans = json.loads(out.stdout.strip().splitlines()[-1])
    ans["q"] = model.from_opensim_state(np.array(ans["Q"]), np.zeros(len(u)))[0]
    return ans


def main() -> None:
    import symbody as sb
    from symbody.opensim import load_opensim

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tf", type=float, default=1.0)
    ap.add_argument("--accuracy", type=float, default=1e-6)
    ap.add_argument("--rtols", nargs="+", type=float, default=[1e-6, 1e-7, 1e-8])
    args = ap.parse_args()
    model = load_opensim(MODEL)
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    q, u = start_state(model)
    x0 = np.concatenate([q, u[:len(model.u_ind)]])

    def ours(rtol: float):
        c = time.process_time()
        sol = sb.simulate(nm, (0.0, args.tf), x0, model.constants,
                          solver=sb.Solver(rtol=rtol, atol=rtol))
        return time.process_time() - c, sol

    _, ref = ours(1e-11)
    assert ref.success, ref.message
    ours(args.rtols[0])                                  # warm: kernels built and loaded
    times: dict = {r: [] for r in args.rtols}
    osim_times, osim_run = [], None
    for _ in range(args.repeats):
        osim_run = run_opensim(model, q, u, args.tf, args.accuracy)
        osim_times.append(osim_run["cpu"])
        for r in args.rtols:
            cpu, sol = ours(r)
            times[r].append(cpu)
    o_cpu = float(np.median(osim_times))
    o_err = float(np.abs(osim_run["q"] - ref.q[-1]).max())
    print(f"bouncing block, {args.tf} s, heel strikes: {len(ref.events)} events in the "
          f"reference; OpenSim accuracy {args.accuracy}: {o_cpu * 1e3:.1f} ms CPU "
          f"({osim_run['steps']} output rows), q error {o_err:.1e}")
    print("| symbody rtol | CPU ms | OpenSim / symbody | q error at tf | max |f_h| | steps |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in args.rtols:
        cpu, sol = float(np.median(times[r])), ours(r)[1]
        err = float(np.abs(sol.q[-1] - ref.q[-1]).max())
        res = max(float(np.abs(nm.holonomic_residual(qi, p)).max()) for qi in sol.q)
        print(f"| {r:.0e} | {cpu * 1e3:.1f} | {o_cpu / cpu:.2f}x | {err:.1e} | {res:.1e} | "
              f"{sol.nsteps} |")


if __name__ == "__main__":
    main()
