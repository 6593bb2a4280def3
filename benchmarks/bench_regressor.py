"""The joint-torque regressor Y(q, u, u') against Pinocchio's ``computeJointTorqueRegressor``.

``robot.regressor()`` of a robot loaded with ``symbolic_inertia=True`` (one C kernel of all
o x 10 n_b entries, :mod:`symbody.robots.regressor`, called through its
:class:`~symbody.robots.functions.RobotFunction`), from Python: one state per call, and
1 000 states in one call against a Python loop of Pinocchio.  Agreement: max |Y - Y_pin| /
max |Y_pin| over the states (rows in ``robot.speeds`` order, Pinocchio's rows mapped).
Medians of CPU time over ``--rounds``, the two sides interleaved.

    .venv/bin/python benchmarks/bench_regressor.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests"))

ROBOTS = [("UR5", "ur_description/urdf/ur5_robot.urdf", False),
          ("Panda", "panda_description/urdf/panda.urdf", False),
          ("Solo12", "solo_description/robots/solo12.urdf", True)]


def cpu_per_call(fn, calls: int) -> float:
    t0 = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - t0) / calls


def row(name: str, path: Path, floating: bool, rounds: int, count: int) -> dict:
    import pinocchio as pin

    import symbody as sb
    from symbody.robots.pinocchio import tree_index
    from systems.pinocchio_oracle import pinocchio_model, random_state

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = sb.load_urdf(path, floating_base=floating, symbolic_inertia=True)
    reg = robot.regressor()
    pm = pinocchio_model(pin, path, floating)
    pd = pm.createData()
    rng = np.random.default_rng(0)
    _, ui = tree_index(robot)
    N = robot.nq
    Q, U, A, QP, VP, AP = [], [], [], [], [], []
    for _ in range(count):
        qp, v = random_state(pin, pm, rng)
        x = robot.from_pinocchio(qp, v)
        qp, v = robot.to_pinocchio(x)
        a = rng.standard_normal(pm.nv)
        Q.append(x[:N])
        U.append(v[ui])
        A.append(a[ui])
        QP.append(qp)
        VP.append(v)
        AP.append(a)
    Q, U, A = np.array(Q), np.array(U), np.array(A)
    t0 = time.process_time()
    Ymany = reg(Q, U, A)
    build = time.process_time() - t0
    err = 0.0
    for k in range(count):
        Yp = pin.computeJointTorqueRegressor(pm, pd, QP[k], VP[k], AP[k])[ui]
        err = max(err, float(np.abs(Ymany[k] - Yp).max() / np.abs(Yp).max()))
        if k < 5:
            err = max(err, float(np.abs(reg(Q[k], U[k], A[k]) - Yp).max() / np.abs(Yp).max()))

    def pin_loop():
        for k in range(count):
            pin.computeJointTorqueRegressor(pm, pd, QP[k], VP[k], AP[k])

    q0, u0, a0, qp0, vp0, ap0 = Q[0], U[0], A[0], QP[0], VP[0], AP[0]
    sides = {"ours": lambda: reg(q0, u0, a0),
             "pin": lambda: pin.computeJointTorqueRegressor(pm, pd, qp0, vp0, ap0),
             "ours_many": lambda: reg(Q, U, A), "pin_loop": pin_loop}
    calls = {"ours": 20000, "pin": 20000, "ours_many": 20, "pin_loop": 5}
    times: dict = {k: [] for k in sides}
    for _ in range(rounds):
        for k, f in sides.items():
            times[k].append(cpu_per_call(f, calls[k]))
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"robot": name, "shape": reg.shape, "build_s": build, "err": err,
            "ours_us": med["ours"] * 1e6, "pin_us": med["pin"] * 1e6,
            "many_us": med["ours_many"] * 1e6 / count, "loop_us": med["pin_loop"] * 1e6 / count}


def main() -> None:
    from systems.pinocchio_oracle import robots_dir

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--states", type=int, default=1000)
    args = ap.parse_args()
    root = robots_dir()
    print("| robot | Y shape | one state µs ours / pin (ratio) | per state over 1000, ours / "
          "pin loop (ratio) | max rel. diff |")
    print("|---|---|---|---|---|")
    for name, rel, floating in ROBOTS:
        r = row(name, root / rel, floating, args.rounds, args.states)
        print(f"| {r['robot']} | {r['shape'][0]}x{r['shape'][1]} | {r['ours_us']:.2f} / "
              f"{r['pin_us']:.2f} ({r['ours_us'] / r['pin_us']:.2f}) | {r['many_us']:.2f} / "
              f"{r['loop_us']:.2f} ({r['many_us'] / r['loop_us']:.2f}) | {r['err']:.1e} |",
              flush=True)


if __name__ == "__main__":
    main()
