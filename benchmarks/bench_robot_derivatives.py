"""Every URDF of example-robot-data: symbody's dynamics derivatives against Pinocchio's, the
agreement and the CPU time per call, in the same run.

For each robot file (fixed base; and with a free-flyer for the legged robots, humanoids and
drones, the set of benchmarks/bench_robots.py), in a fresh process, one kernel cache shared by
the run (``--cache``: files of the same model, a robot's ``_box`` or ``_joint_limited``
variant, compile once; a second run over the same cache measures calls only):
``robot.inverse_dynamics_derivatives`` and ``robot.forward_dynamics_derivatives`` against
``pin.computeRNEADerivatives`` and ``pin.computeABADerivatives`` at ``--states`` random
states (the largest relative error of any block, |a - b|_max / max(1, |b|_max), the URDF
damping and friction added to Pinocchio's), the wall time to form and compile symbody's
functions (cold unless the cache had them; the inverse derivatives, then what the forward
derivatives add), and the CPU time of one call from Python
(time.process_time, median of 5 repeats of ~5 ms, the two sides interleaved; Pinocchio's
arguments prepared beforehand, as symbody's).  ``--part i/n`` runs the i-th of n interleaved
shares of the files (two halves in two sessions: ``--part 1/2``, ``--part 2/2``).
``--jsonl FILE`` appends each row to FILE as it is measured and skips the (file, base) rows
FILE already holds (except those over the timeout, tried again), so a long run that is stopped resumes where it was; the table printed
at the end is of every row in FILE.

    PYTHONPATH=src:tests python benchmarks/bench_robot_derivatives.py        # all robots
    PYTHONPATH=src:tests python benchmarks/bench_robot_derivatives.py --match talos

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
sys.path.insert(0, str(HERE))


def _load(sb, path: str, floating: bool):
    from symbody.errors import SymbodyError
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return sb.load_urdf(path, floating_base=floating, invalid_inertia="warn")
        except SymbodyError as exc:
            if "mimics" not in str(exc):
                raise
            return sb.load_urdf(path, floating_base=floating, invalid_inertia="warn", mimic=False)


def _median_us(ours, theirs) -> tuple[float, float]:
    """Median CPU µs per call of each, 5 interleaved repeats of n calls (~5 ms each)."""
    import numpy as np
    ours(), theirs()
    t0 = time.process_time()
    for _ in range(20):
        ours()
    n = max(1, int(0.005 / max((time.process_time() - t0) / 20, 1e-7)))
    a_t, b_t = [], []
    for _ in range(5):
        for f, acc in ((ours, a_t), (theirs, b_t)):
            t0 = time.process_time()
            for _ in range(n):
                f()
            acc.append((time.process_time() - t0) / n * 1e6)
    return float(np.median(a_t)), float(np.median(b_t))


def one(path: str, floating: bool, states: int) -> dict:
    import numpy as np
    import pinocchio as pin

    import symbody as sb
    from symbody.errors import SymbodyError
    from symbody.robots.pinocchio import full_speeds, tree_index
    from systems.pinocchio_derivatives_oracle import compare_derivatives
    from systems.pinocchio_oracle import pinocchio_model, random_state

    row: dict = {"floating": floating}
    try:
        pm = pinocchio_model(pin, path, floating)
    except Exception as exc:  # noqa: BLE001 (Pinocchio's own refusal, reported as it is)
        row["refused"] = "Pinocchio: " + str(exc).replace(str(path), "the file").splitlines()[0][:100]
        return row
    try:
        robot = _load(sb, path, floating)
    except SymbodyError as exc:
        row["refused"] = "symbody: " + str(exc).replace(str(path), "the file")
        return row
    t0 = time.perf_counter()      # wall clock: the C compiler runs in a child process
    ID = robot.inverse_dynamics_derivatives
    t1 = time.perf_counter()
    FD = robot.forward_dynamics_derivatives
    row["build"], row["build_fd"] = t1 - t0, time.perf_counter() - t1
    err = compare_derivatives(pin, robot, pm, np.random.default_rng(0), states=states)
    row["error"] = max(err.values())
    pd = pm.createData()
    rng = np.random.default_rng(1)
    qp, v = random_state(pin, pm, rng)
    x = robot.from_pinocchio(qp, v)
    qp, v = robot.to_pinocchio(x)
    a, tau = rng.standard_normal((2, pm.nv))
    _, ui = tree_index(robot)
    q, u = x[:robot.nq], full_speeds(robot, x[robot.nq:])
    ud, tu = a[ui], tau[ui]
    row["rnea"] = _median_us(lambda: ID(q, u, ud),
                             lambda: pin.computeRNEADerivatives(pm, pd, qp, v, a))
    row["aba"] = _median_us(lambda: FD(q, u, tu),
                            lambda: pin.computeABADerivatives(pm, pd, qp, v, tau))
    row["dof"] = len(robot.speeds)
    return row


def table(rows: list[dict], root: Path) -> str:
    head = ("| robot | base | dof | build ID + FD (s) | max rel. error | ID derivs µs | "
            "computeRNEADerivatives µs | ratio | FD derivs µs | computeABADerivatives µs | "
            "ratio |")
    lines = [head, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    refused, worst, ratios = [], 0.0, []
    rows = sorted(rows, key=lambda r: (r["path"], r["floating"]))
    for r in rows:
        name = str(Path(r["path"]).relative_to(root))
        base = "free-flyer" if r["floating"] else "fixed"
        if "refused" in r:
            refused.append(f"- {name} ({base}): {r['refused']}")
            continue
        worst = max(worst, r["error"])
        (a1, b1), (a2, b2) = r["rnea"], r["aba"]
        ratios.append(a2 / b2)
        build = f"{r['build']:.1f}" + (f" + {r['build_fd']:.1f}" if "build_fd" in r else "")
        lines.append(f"| {name} | {base} | {r['dof']} | {build} | {r['error']:.0e} | "
                     f"{a1:.1f} | {b1:.1f} | {a1 / b1:.2f} | {a2:.1f} | {b2:.1f} | "
                     f"{a2 / b2:.2f} |")
    text = "\n".join(lines) + f"\n\nLargest relative error over the table: {worst:.1e}\n"
    if ratios:
        ids = sorted(r["rnea"][0] / r["rnea"][1] for r in rows if "refused" not in r)
        text += (f"Inverse-dynamics derivatives / computeRNEADerivatives: median ratio "
                 f"{ids[len(ids) // 2]:.2f}, worst {ids[-1]:.2f}, "
                 f"{sum(x <= 1 for x in ids)} of {len(ids)} at or below 1\n")
        text += (f"Forward-dynamics derivatives / computeABADerivatives: median ratio "
                 f"{sorted(ratios)[len(ratios) // 2]:.2f}, worst {max(ratios):.2f}, "
                 f"{sum(x <= 1 for x in ratios)} of {len(ratios)} at or below 1\n")
    if refused:
        text += "\nNot run:\n\n" + "\n".join(refused) + "\n"
    return text


def main() -> None:
    from bench_robots import FLOATING, robot_files

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--match", default="", help="only files whose path contains this")
    ap.add_argument("--states", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out", default=None, help="also write the table here")
    ap.add_argument("--part", default="1/1", help="i/n: the i-th of n interleaved shares")
    ap.add_argument("--cache", default=None, help="the kernel cache of the run (default: a "
                    "new temporary directory)")
    ap.add_argument("--jsonl", default=None, help="append each row here as it is measured; "
                    "rows already in it are skipped (resume) and tabulated")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--floating", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.one, a.floating, a.states)))
        return
    from systems.pinocchio_oracle import robots_dir
    root = robots_dir()
    rows = []
    done: set[tuple[str, bool]] = set()
    if a.jsonl and Path(a.jsonl).exists():
        rows = [json.loads(x) for x in Path(a.jsonl).read_text().splitlines() if x.strip()]
        rows = [r for r in rows if not r.get("refused", "").startswith("over ")]  # retried
        done = {(r["path"], r["floating"]) for r in rows}
    i, n = (int(x) for x in a.part.split("/"))
    cache_dir = tempfile.TemporaryDirectory() if a.cache is None else None
    cache = a.cache or cache_dir.name
    for f in [f for f in robot_files() if a.match in str(f)][i - 1::n]:
        folder = f.relative_to(root).parts[0]
        for floating in (False, True) if folder in FLOATING else (False,):
            if (str(f), floating) in done:
                continue
            cmd = [sys.executable, __file__, "--one", str(f), "--states", str(a.states)]
            cmd += ["--floating"] if floating else []
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
            if a.jsonl:
                with open(a.jsonl, "a") as fh:
                    fh.write(json.dumps(row) + "\n")
    text = table(rows, root)
    print(text)
    if a.out:
        Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
