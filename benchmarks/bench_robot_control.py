"""Every URDF of example-robot-data: symbody's kinematics, dynamics terms and joint wrenches
against Pinocchio.

For each robot file (fixed base; and with a free-flyer for the legged robots and humanoids,
the same set as benchmarks/bench_robots.py), in a fresh process: ``--frames`` frames spread
over Pinocchio's frame list (its last one included) with their placement, the three frame
Jacobians (LOCAL, WORLD, LOCAL_WORLD_ALIGNED), velocities and accelerations; the centre of
mass and its Jacobian; ``inverse_dynamics`` (rnea + the URDF damping and friction),
``mass_matrix`` (crba), ``bias`` (nonLinearEffects + damping and friction),
``gravity_torques`` (computeGeneralizedGravity) and ``joint_wrenches`` (data.f after rnea),
all evaluated by symbody on the batch of ``--states`` random states at once; the largest
relative error of each group, and the time to form and compile every function checked.

    python benchmarks/bench_robot_control.py                    # all, table to stdout
    python benchmarks/bench_robot_control.py --match panda --frames 0   # every frame
    python benchmarks/bench_robot_control.py --speed            # per-call times vs Pinocchio

``--speed``: CPU time (time.process_time, median of 7 repeats, the two sides interleaved) of
``inverse_dynamics``, ``mass_matrix`` and the last frame's LOCAL ``frame_jacobian`` against
``pin.rnea``, ``pin.crba`` and ``pin.computeFrameJacobian`` from Python: one state per call,
and 1000 states (symbody's batch call against a Python loop of Pinocchio's).

Needs the `test` extra (pin, example-robot-data).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests"))  # the shared oracle helpers

GROUPS = ("placement", "J local", "J world", "J local_world_aligned", "velocity", "acceleration",
          "com", "com J", "rnea", "M", "bias", "gravity", "wrenches")


def one(path: str, floating: bool, states: int, frames: int) -> dict:
    import numpy as np
    import pinocchio as pin

    import symbody as sb
    from symbody.errors import SymbodyError
    from systems.pinocchio_control_oracle import compare_control
    from systems.pinocchio_oracle import pinocchio_model

    row: dict = {"floating": floating}
    try:
        pm = pinocchio_model(pin, path, floating)
    except Exception as exc:  # noqa: BLE001 (Pinocchio's own refusal, reported as it is)
        row["refused"] = "Pinocchio: " + str(exc).replace(str(path), "the file").splitlines()[0][:100]
        return row
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                robot = sb.load_urdf(path, floating_base=floating, invalid_inertia="warn")
            except SymbodyError as exc:
                if "mimics" not in str(exc):
                    raise
                robot = sb.load_urdf(path, floating_base=floating, invalid_inertia="warn",
                                     mimic=False)
    except SymbodyError as exc:
        row["refused"] = "symbody: " + str(exc).replace(str(path), "the file")
        return row
    t0 = time.perf_counter()
    row.update(compare_control(pin, robot, pm, np.random.default_rng(0), states=states,
                               frames=frames))
    row.update(dof=len(robot.speeds), frames=len(pm.frames), seconds=time.perf_counter() - t0)
    return row


SPEED_ROBOTS = (("ur_description/urdf/ur5_robot.urdf", False),
                ("panda_description/urdf/panda.urdf", False),
                ("solo_description/robots/solo12.urdf", True),
                ("talos_data/robots/talos_full_v2.urdf", True))


def speed(path: str, floating: bool) -> dict:
    """Per-call CPU times (µs) of symbody's functions and Pinocchio's (see the docstring)."""
    import numpy as np
    import pinocchio as pin

    import symbody as sb
    from symbody.robots.pinocchio import full_speeds, tree_index
    from systems.pinocchio_oracle import pinocchio_model, random_state

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = sb.load_urdf(path, floating_base=floating, invalid_inertia="warn", mimic=False)
    pm = pinocchio_model(pin, path, floating)
    pd = pm.createData()
    rng = np.random.default_rng(0)
    _, ui = tree_index(robot)
    frame = pm.frames[len(pm.frames) - 1].name
    fid = pm.getFrameId(frame)
    Qp, V, A, Q, U, UD = [], [], [], [], [], []
    for _ in range(1000):
        qp, v = random_state(pin, pm, rng)
        x = robot.from_pinocchio(qp, v)
        qp, v = robot.to_pinocchio(x)
        a = rng.standard_normal(pm.nv)
        Qp.append(qp), V.append(v), A.append(a)
        Q.append(x[:robot.nq]), U.append(full_speeds(robot, x[robot.nq:])), UD.append(a[ui])
    Q, U, UD = np.array(Q), np.array(U), np.array(UD)
    ID, M = robot.inverse_dynamics, robot.mass_matrix
    J = robot.frame_function(frame, "jacobian", "local")
    pairs = {
        "rnea": (lambda: ID(Q[0], U[0], UD[0]), lambda: pin.rnea(pm, pd, Qp[0], V[0], A[0])),
        "crba": (lambda: M(Q[0]), lambda: pin.crba(pm, pd, Qp[0])),
        "jacobian": (lambda: J(Q[0]),
                     lambda: pin.computeFrameJacobian(pm, pd, Qp[0], fid, pin.LOCAL)),
    }

    def loop(f):
        def run():
            for i in range(1000):
                f(i)
        return run

    batch = {
        "rnea": (lambda: ID(Q, U, UD), loop(lambda i: pin.rnea(pm, pd, Qp[i], V[i], A[i]))),
        "crba": (lambda: M(Q), loop(lambda i: pin.crba(pm, pd, Qp[i]))),
        "jacobian": (lambda: J(Q), loop(lambda i: pin.computeFrameJacobian(pm, pd, Qp[i], fid,
                                                                           pin.LOCAL))),
    }
    row: dict = {"dof": len(robot.speeds)}
    for label, table_, n in (("one", pairs, 2000), ("batch", batch, 3)):
        for name, (ours, theirs) in table_.items():
            ours(), theirs()
            a_t, b_t = [], []
            for _ in range(7):
                for f, acc in ((ours, a_t), (theirs, b_t)):
                    t0 = time.process_time()
                    for _ in range(n):
                        f()
                    acc.append((time.process_time() - t0) / n * 1e6)
            row[f"{label} {name}"] = (float(np.median(a_t)), float(np.median(b_t)))
    return row


def speed_table(rows: list[tuple[str, dict]]) -> str:
    head = ("| robot | dof | what | symbody, 1 state (µs) | Pinocchio (µs) | ratio | "
            "symbody, 1000 states (µs) | Pinocchio loop (µs) | ratio |")
    lines = [head, "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for name, r in rows:
        for what in ("rnea", "crba", "jacobian"):
            a1, b1 = r[f"one {what}"]
            a2, b2 = r[f"batch {what}"]
            lines.append(f"| {name} | {r['dof']} | {what} | {a1:.2f} | {b1:.2f} | {a1 / b1:.2f} | "
                         f"{a2:.0f} | {b2:.0f} | {a2 / b2:.2f} |")
    return "\n".join(lines) + "\n"


def table(rows: list[dict], root: Path) -> str:
    head = "| robot | base | dof | frames | s | " + " | ".join(GROUPS) + " |"
    lines = [head, "|---|---|---:|---:|---:|" + "---:|" * len(GROUPS)]
    refused, worst = [], 0.0
    for r in rows:
        name = str(Path(r["path"]).relative_to(root))
        base = "free-flyer" if r["floating"] else "fixed"
        if "refused" in r:
            refused.append(f"- {name} ({base}): {r['refused']}")
            continue
        worst = max([worst] + [r[g] for g in GROUPS])
        lines.append(f"| {name} | {base} | {r['dof']} | {r['frames']} | {r['seconds']:.1f} | "
                     + " | ".join(f"{r[g]:.0e}" for g in GROUPS) + " |")
    text = "\n".join(lines) + f"\n\nLargest relative error over the table: {worst:.1e}\n"
    if refused:
        text += "\nNot run:\n\n" + "\n".join(refused) + "\n"
    return text


def main() -> None:
    from bench_robots import FLOATING, robot_files

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--match", default="", help="only files whose path contains this")
    ap.add_argument("--states", type=int, default=3)
    ap.add_argument("--frames", type=int, default=8, help="frames per robot (0: all)")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--out", default=None, help="also write the table here")
    ap.add_argument("--speed", action="store_true", help="per-call times against Pinocchio")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--floating", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(speed(a.one, a.floating) if a.speed
                         else one(a.one, a.floating, a.states, a.frames)))
        return
    from systems.pinocchio_oracle import robots_dir
    root = robots_dir()
    if a.speed:
        rows = []
        for rel, floating in SPEED_ROBOTS:
            if a.match not in rel:
                continue
            cmd = [sys.executable, __file__, "--one", str(root / rel), "--speed"]
            out = subprocess.run(cmd + (["--floating"] if floating else []), capture_output=True,
                                 text=True, timeout=a.timeout)
            if out.returncode:
                print(out.stderr[-2000:], file=sys.stderr)
                continue
            rows.append((rel.split("/")[-1] + (" (free-flyer)" if floating else ""),
                         json.loads(out.stdout.strip().splitlines()[-1])))
        print(speed_table(rows))
        return
    rows = []
    for f in [f for f in robot_files() if a.match in str(f)]:
        folder = f.relative_to(root).parts[0]
        for floating in (False, True) if folder in FLOATING else (False,):
            cmd = [sys.executable, __file__, "--one", str(f), "--states", str(a.states),
                   "--frames", str(a.frames)] + (["--floating"] if floating else [])
            with tempfile.TemporaryDirectory() as cache:
                env = {**os.environ, "SYMBODY_CACHE_DIR": cache}
                try:
                    out = subprocess.run(cmd, capture_output=True, text=True, env=env,
                                         timeout=a.timeout)
                    row = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 \
                        else {"floating": floating, "refused": "crashed: "
                              + (out.stderr.strip().splitlines() or ["?"])[-1][:100]}
                except subprocess.TimeoutExpired:
                    row = {"floating": floating, "refused": f"over {a.timeout:.0f} s"}
            row["path"] = str(f)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    text = table(rows, root)
    print(text)
    if a.out:
        Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
