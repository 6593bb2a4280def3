"""CasADi functions of humanoids: ``sb.to_casadi(robot)`` against casadi-kin-dyn's ``aba``.

Both sides are CasADi SX functions of the forward dynamics of the same URDF with a
free-flyer: symbody's ``rhs`` (the tree's articulated-body recursion with the robot's
numbers folded, :mod:`symbody.robots.articulated_body`) restricted to u' as a function of
(x, tau) with the constants p fixed, and casadi-kin-dyn's ``CasadiKinDyn.aba()``
(Pinocchio's ABA traced into SX) of (q, v, tau).  casadi-kin-dyn runs in its own venv
(``--ckd-python``, default /work/venvs/ckd/bin/python: its wheel pins an old Pinocchio and
numpy) through ``ckd_worker.py``, which saves its function with ``Function.save``; this
process loads it, so both are timed in the same process and CasADi version, interleaved.

Reported per robot: the graph size (``n_instructions``), the CPU time of one evaluation
and of one evaluation of the Jacobian of u' with respect to all inputs (q, u, tau), both
called from Python with numpy arrays (medians over ``--rounds``), and the agreement
(max relative difference of u') with casadi-kin-dyn's values computed in its own process
and with Pinocchio 4.1's ``pin.aba``.

    .venv/bin/python benchmarks/bench_casadi_robots.py [--rounds 5] [--states 20]

Needs the ``test`` extra (pin, example-robot-data), casadi, and casadi-kin-dyn's venv.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests"))
sys.path.insert(0, str(HERE))

ROBOTS = [("Talos", "talos_data/robots/talos_reduced.urdf"),
          ("iCub", "icub_description/robots/icub_reduced.urdf")]


def cpu_per_call(fn, calls: int) -> float:
    t0 = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - t0) / calls


def row(name: str, path: Path, ckd_python: str, count: int, rounds: int) -> dict:
    import casadi as ca
    import pinocchio as pin
    from bench_robot_speed import states

    import symbody as sb
    from symbody.robots.pinocchio import tree_index
    from systems.pinocchio_oracle import pinocchio_model

    # the equations Pinocchio's ABA solves: the URDF's joint damping and friction left out
    robot = sb.load_urdf(path, floating_base=True, joint_dynamics=False, invalid_inertia="warn")
    t0 = time.process_time()
    model = sb.compile(robot.eom)
    cm = sb.to_casadi(model)
    build = time.process_time() - t0
    pm = pinocchio_model(pin, path, True)
    pd = pm.createData()
    X, Q, V = states(robot, model, pm, count)
    _, ui = tree_index(robot)
    inputs = np.array(ui)[[robot.speed_names.index(n) for n in robot.input_names]]
    rng = np.random.default_rng(3)
    Rr = rng.normal(size=(count, len(robot.inputs)))
    TAU = np.zeros((count, pm.nv))
    TAU[:, inputs] = Rr

    with tempfile.TemporaryDirectory() as tmp:
        np.savez(Path(tmp) / "states.npz", Q=Q, V=V, TAU=TAU)
        out = subprocess.run([ckd_python, str(HERE / "ckd_worker.py"), str(path),
                              str(Path(tmp) / "states.npz"), tmp],
                             capture_output=True, text=True, check=True)
        info = json.loads(out.stdout.strip().splitlines()[-1])
        theirs = ca.Function.load(str(Path(tmp) / "aba.casadi"))
        their_values = np.load(Path(tmp) / "values.npy")

    # ours: u' of (x, tau) with the constants folded
    N, nx = robot.nq, len(cm.states)
    P = ca.DM(model.constants_array(robot.constants))
    x, r = ca.SX.sym("x", nx), ca.SX.sym("tau", len(robot.inputs))
    ud = cm.rhs(x, P, r)[N:]
    ours = ca.Function("symbody_rhs", [x, r], [ud])
    ours_jac = ca.Function("symbody_rhs_jacobian", [x, r], [ca.jacobian(ud, ca.vertcat(x, r))])
    q, v, tau = (ca.SX.sym(s, k) for s, k in (("q", pm.nq), ("v", pm.nv), ("tau", pm.nv)))
    a = theirs(q, v, tau)
    theirs_jac = ca.Function("ckd_aba_jacobian", [q, v, tau],
                             [ca.jacobian(a, ca.vertcat(q, v, tau))])

    # agreement: u' in Pinocchio's order against casadi-kin-dyn (its own process) and pin.aba
    err_ckd = err_pin = err_loaded = 0.0
    for k in range(count):
        xd = np.asarray(cm.rhs(X[k], P, Rr[k])).ravel()
        dv = robot.to_pinocchio(X[k], xd)[2]
        ref = pin.aba(pm, pd, Q[k], V[k], TAU[k])
        scale = max(1.0, np.abs(ref).max())
        err_ckd = max(err_ckd, np.abs(dv - their_values[k]).max() / scale)
        err_pin = max(err_pin, np.abs(dv - ref).max() / scale)
        err_loaded = max(err_loaded, np.abs(np.asarray(theirs(Q[k], V[k], TAU[k])).ravel()
                                            - their_values[k]).max() / scale)

    x0, r0, q0, v0, t0_ = X[0], Rr[0], Q[0], V[0], TAU[0]
    sides = {"ours": lambda: ours(x0, r0), "theirs": lambda: theirs(q0, v0, t0_),
             "ours_jac": lambda: ours_jac(x0, r0),
             "theirs_jac": lambda: theirs_jac(q0, v0, t0_)}
    calls = {k: max(20, int(0.05 / max(cpu_per_call(f, 5), 1e-7))) for k, f in sides.items()}
    times: dict = {k: [] for k in sides}
    for _ in range(rounds):                  # interleaved: a loaded machine's pauses hit all
        for k, f in sides.items():
            times[k].append(cpu_per_call(f, calls[k]))
    med = {k: statistics.median(v) for k, v in times.items()}
    return {
        "robot": name, "nq": pm.nq, "nv": pm.nv, "build_s": build,
        "ours_instr": ours.n_instructions(), "theirs_instr": theirs.n_instructions(),
        "ours_jac_instr": ours_jac.n_instructions(),
        "theirs_jac_instr": theirs_jac.n_instructions(),
        "ours_us": med["ours"] * 1e6, "theirs_us": med["theirs"] * 1e6,
        "ours_jac_ms": med["ours_jac"] * 1e3, "theirs_jac_ms": med["theirs_jac"] * 1e3,
        "err_ckd": err_ckd, "err_pin": err_pin, "err_loaded": err_loaded,
        "ckd_casadi": info["casadi"], "casadi": ca.__version__}


def main() -> None:
    from systems.pinocchio_oracle import robots_dir

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--states", type=int, default=20)
    ap.add_argument("--ckd-python", default="/work/venvs/ckd/bin/python")
    ap.add_argument("--robots", nargs="*", default=[r[0] for r in ROBOTS])
    args = ap.parse_args()
    root = robots_dir()
    rows = [row(name, root / rel, args.ckd_python, args.states, args.rounds)
            for name, rel in ROBOTS if name in args.robots]
    print("| robot | graph (instr.) ours / ckd | eval µs ours / ckd (ratio) | Jacobian ms ours / "
          "ckd (ratio) | Jacobian graph ours / ckd | u' vs ckd, vs pin.aba |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['robot']} (nq {r['nq']}, nv {r['nv']}) | {r['ours_instr']} / "
              f"{r['theirs_instr']} | {r['ours_us']:.1f} / {r['theirs_us']:.1f} "
              f"({r['ours_us'] / r['theirs_us']:.2f}) | {r['ours_jac_ms']:.3f} / "
              f"{r['theirs_jac_ms']:.3f} ({r['ours_jac_ms'] / r['theirs_jac_ms']:.2f}) | "
              f"{r['ours_jac_instr']} / {r['theirs_jac_instr']} | "
              f"{r['err_ckd']:.1e}, {r['err_pin']:.1e} |")
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
