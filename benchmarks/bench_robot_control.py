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

``--speed``: CPU time (time.process_time, median of 7 repeats of 2000 calls, the two sides
interleaved) of one state per call from Python, every function above (the last frame of
Pinocchio's list; velocity and acceleration in LOCAL) against the Pinocchio call a user makes
for the same numbers (``SPEED_FUNCTIONS``: e.g. ``forwardKinematics`` + ``updateFramePlacement``
for a placement, ``rnea`` for the joint wrenches, which it leaves in ``data.f``), with each
function's kernel alone (its batched call on 256 copies of the state, per state) and its
backend, on UR5, Panda, Solo12 (free-flyer), Talos (free-flyer) and TIAGo dual (101 joints);
``--batch``: also 1000 states per call (rnea, crba, LOCAL Jacobian) against a Python loop.

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
                ("talos_data/robots/talos_full_v2.urdf", True),
                ("tiago_description/robots/tiago_dual.urdf", False))

#: the functions ``--speed`` times, in the table's order, with the Pinocchio calls a user
#: makes for the same numbers (a frame's quantities: the kinematics pass, then the frame's)
SPEED_FUNCTIONS = {
    "placement": "forwardKinematics(q) + updateFramePlacement",
    "J local": "computeFrameJacobian(LOCAL)",
    "J world": "computeFrameJacobian(WORLD)",
    "J local_world_aligned": "computeFrameJacobian(LOCAL_WORLD_ALIGNED)",
    "velocity": "forwardKinematics(q, v) + getFrameVelocity(LOCAL)",
    "acceleration": "forwardKinematics(q, v, a) + getFrameAcceleration(LOCAL)",
    "com": "centerOfMass(q)",
    "com J": "jacobianCenterOfMass(q)",
    "rnea": "rnea",
    "crba": "crba",
    "bias": "nonLinearEffects",
    "gravity": "computeGeneralizedGravity",
    "wrenches": "rnea (data.f)",
}


def _timings(pairs: dict, n: int, repeats: int = 7) -> dict:
    """name -> (ours, theirs): median CPU µs per call, the two sides interleaved."""
    import numpy as np

    out = {}
    for name, (ours, theirs) in pairs.items():
        ours(), theirs()
        a_t, b_t = [], []
        for _ in range(repeats):
            for f, acc in ((ours, a_t), (theirs, b_t)):
                t0 = time.process_time()
                for _ in range(n):
                    f()
                acc.append((time.process_time() - t0) / n * 1e6)
        out[name] = (float(np.median(a_t)), float(np.median(b_t)))
    return out


def speed(path: str, floating: bool, batch: bool = False) -> dict:
    """Per-call CPU times (µs) of symbody's functions and Pinocchio's (see the docstring);
    ``kernel``: the time of each function's compiled kernel alone (z in, out written)."""
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
    for _ in range(1000 if batch else 1):
        qp, v = random_state(pin, pm, rng)
        x = robot.from_pinocchio(qp, v)
        qp, v = robot.to_pinocchio(x)
        a = rng.standard_normal(pm.nv)
        Qp.append(qp), V.append(v), A.append(a)
        Q.append(x[:robot.nq]), U.append(full_speeds(robot, x[robot.nq:])), UD.append(a[ui])
    Q, U, UD = np.array(Q), np.array(U), np.array(UD)
    q, u, ud, qp, v, a = Q[0], U[0], UD[0], Qp[0], V[0], A[0]
    t0 = time.perf_counter()
    F = {"placement": robot.frame_function(frame, "placement"),
         "J local": robot.frame_function(frame, "jacobian", "local"),
         "J world": robot.frame_function(frame, "jacobian", "world"),
         "J local_world_aligned": robot.frame_function(frame, "jacobian", "local_world_aligned"),
         "velocity": robot.frame_function(frame, "velocity", "local"),
         "acceleration": robot.frame_function(frame, "acceleration", "local"),
         "com": robot.center_of_mass_function, "com J": robot.center_of_mass_jacobian_function,
         "rnea": robot.inverse_dynamics, "crba": robot.mass_matrix, "bias": robot.bias,
         "gravity": robot.gravity_torques, "wrenches": robot.joint_wrenches}
    args = {"q": q, "u": u, "u_dot": ud}
    calls = {k: (f, tuple(args[n] for n in f.argument_names if n != "p")) for k, f in F.items()}
    for f, x in calls.values():
        f(*x)
    build = time.perf_counter() - t0
    L, W, LWA = pin.LOCAL, pin.WORLD, pin.LOCAL_WORLD_ALIGNED

    def placement():
        pin.forwardKinematics(pm, pd, qp)
        return pin.updateFramePlacement(pm, pd, fid)

    def velocity():
        pin.forwardKinematics(pm, pd, qp, v)
        return pin.getFrameVelocity(pm, pd, fid, L)

    def acceleration():
        pin.forwardKinematics(pm, pd, qp, v, a)
        return pin.getFrameAcceleration(pm, pd, fid, L)

    theirs = {"placement": placement,
              "J local": lambda: pin.computeFrameJacobian(pm, pd, qp, fid, L),
              "J world": lambda: pin.computeFrameJacobian(pm, pd, qp, fid, W),
              "J local_world_aligned": lambda: pin.computeFrameJacobian(pm, pd, qp, fid, LWA),
              "velocity": velocity, "acceleration": acceleration,
              "com": lambda: pin.centerOfMass(pm, pd, qp),
              "com J": lambda: pin.jacobianCenterOfMass(pm, pd, qp),
              "rnea": lambda: pin.rnea(pm, pd, qp, v, a), "crba": lambda: pin.crba(pm, pd, qp),
              "bias": lambda: pin.nonLinearEffects(pm, pd, qp, v),
              "gravity": lambda: pin.computeGeneralizedGravity(pm, pd, qp),
              "wrenches": lambda: pin.rnea(pm, pd, qp, v, a)}
    pairs = {k: ((lambda f=f, x=x: f(*x)), theirs[k]) for k, (f, x) in calls.items()}
    row: dict = {"dof": len(robot.speeds), "frame": frame, "build s": build,
                 "one": _timings(pairs, 2000)}

    def kernel_alone(f, x):     # 256 copies of the state in one batched kernel call
        z = np.concatenate([*x, f.constants] if f.takes_constants else x)
        Z = np.ascontiguousarray(np.broadcast_to(z, (256, len(z))))
        many = f.kernel.realize().many
        return lambda: many(Z)

    kernels = {k: (kernel_alone(f, x), theirs[k]) for k, (f, x) in calls.items()}
    row["kernel"] = {k: t[0] / 256 for k, t in _timings(kernels, 20, 3).items()}
    row["backend"] = {k: f.kernel.realize().backend for k, (f, _) in calls.items()}
    if batch:
        def loop(g):
            def run():
                for i in range(1000):
                    g(i)
            return run

        ID, M = robot.inverse_dynamics, robot.mass_matrix
        J = F["J local"]
        many = {
            "rnea": (lambda: ID(Q, U, UD), loop(lambda i: pin.rnea(pm, pd, Qp[i], V[i], A[i]))),
            "crba": (lambda: M(Q), loop(lambda i: pin.crba(pm, pd, Qp[i]))),
            "J local": (lambda: J(Q), loop(lambda i: pin.computeFrameJacobian(pm, pd, Qp[i], fid,
                                                                              L))),
        }
        row["batch"] = _timings(many, 3)
    return row


def speed_table(rows: list[tuple[str, dict]]) -> str:
    head = ("| robot | dof | what | Pinocchio call | symbody (µs) | Pinocchio (µs) | ratio | "
            "kernel alone (µs) | backend |")
    lines = [head, "|---|---:|---|---|---:|---:|---:|---:|---|"]
    worst = []
    for name, r in rows:
        for what, call in SPEED_FUNCTIONS.items():
            a1, b1 = r["one"][what]
            worst.append(a1 / b1)
            lines.append(f"| {name} | {r['dof']} | {what} | {call} | {a1:.2f} | {b1:.2f} | "
                         f"{a1 / b1:.2f} | {r['kernel'][what]:.2f} | {r['backend'][what]} |")
    text = "\n".join(lines) + "\n"
    if worst:
        text += f"\nOne state: ratio {min(worst):.2f}-{max(worst):.2f} (median " \
                f"{sorted(worst)[len(worst) // 2]:.2f}) over {len(worst)} rows\n"
    frames = ", ".join(f"{name}: {r['frame']} (build {r['build s']:.1f} s)" for name, r in rows)
    text += f"\nFrames timed and the time to build every function: {frames}\n"
    batch = [(name, r) for name, r in rows if "batch" in r]
    if batch:
        text += ("\n| robot | what | symbody, 1000 states (µs) | Pinocchio loop (µs) | ratio |\n"
                 "|---|---|---:|---:|---:|\n")
        for name, r in batch:
            for what, (a2, b2) in r["batch"].items():
                text += f"| {name} | {what} | {a2:.0f} | {b2:.0f} | {a2 / b2:.2f} |\n"
    return text


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
    ap.add_argument("--batch", action="store_true", help="--speed: also 1000 states per call")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--floating", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(speed(a.one, a.floating, a.batch) if a.speed
                         else one(a.one, a.floating, a.states, a.frames)))
        return
    from systems.pinocchio_oracle import robots_dir
    root = robots_dir()
    if a.speed:
        rows = []
        for rel, floating in SPEED_ROBOTS:
            if a.match not in rel:
                continue
            cmd = [sys.executable, __file__, "--one", str(root / rel), "--speed"] \
                + (["--batch"] if a.batch else [])
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
