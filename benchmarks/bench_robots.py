"""Every URDF of example-robot-data through symbody.load_urdf, checked against Pinocchio.

For each robot file (fixed base; and with a free-flyer for the legged robots and humanoids),
in a fresh process with a cold kernel cache: formation time (load_urdf), compile time
(symbody.compile and the first model.rhs: the kernels built and loaded), peak memory of the process, and the largest relative error at random
states (q within the joint limits, v and tau random) of M (pin.crba), the bias (pin.rnea
with u' = 0, plus the URDF damping and friction) and the forward dynamics of model.rhs
(pin.aba; with mimic joints the constrained accelerations from Pinocchio's M and bias);
with --regressor, also Y pi against pin.rnea and Y against pin.computeJointTorqueRegressor
(robots up to --regressor-max-dof speeds).  Files that Pinocchio or symbody refuse are
listed with the reason.

    python benchmarks/bench_robots.py                      # all, table to stdout
    python benchmarks/bench_robots.py --match ur5 --regressor
    python benchmarks/bench_robots.py --regressor --out /tmp/robots.md

Needs the `test` extra (pin, example-robot-data).  Times are wall-clock on whatever the
machine is doing; compare rows of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests"))  # the shared oracle helpers

#: robot folders loaded with a free-flyer too (legged robots, humanoids, flying robots)
FLOATING = {"hector_description", "iris_description", "borinot_description",
            "hextilt_description", "a1_description", "alex_description", "alexander_description",
            "anymal_b_simple_description", "anymal_c_simple_description", "b1_description",
            "bolt_description", "centauro_description", "g1_description", "go1_description",
            "go2_description", "human_description", "hyq_description", "icub_description",
            "laikago_description", "quadruped_description", "romeo_description",
            "simple_humanoid_description", "solo_description", "talos_data"}


def one(path: str, floating: bool, states: int, regressor: bool, reg_max: int) -> dict:
    """Run one robot in this process; a dict of the row."""
    import numpy as np
    import pinocchio as pin

    import symbody as sb
    from symbody.errors import SymbodyError
    from symbody.robots.pinocchio import tree_index
    from systems.pinocchio_oracle import compare, pinocchio_model, random_state

    row: dict = {"floating": floating}
    try:
        pm = pinocchio_model(pin, path, floating)
    except Exception as exc:  # noqa: BLE001 (Pinocchio's own refusal, reported as it is)
        text = str(exc).replace(str(path), "the file")
        row["refused"] = f"Pinocchio: {text.splitlines()[0][:100]}"
        return row
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                robot = sb.load_urdf(path, floating_base=floating, invalid_inertia="warn")
            except SymbodyError as exc:
                if "mimics" not in str(exc):
                    raise
                # a broken <mimic> tag: reported, and the robot run without its mimic tags
                row["mimic_refused"] = str(exc).replace(str(path), "the file")
                t0 = time.perf_counter()
                robot = sb.load_urdf(path, floating_base=floating, invalid_inertia="warn",
                                     mimic=False)
    except SymbodyError as exc:
        row["refused"] = "symbody: " + str(exc).replace(str(path), "the file")
        return row
    row["warnings"] = [str(w.message).split(": ", 1)[-1][:60] for w in caught
                       if "InvalidInertia" in type(w.message).__name__]
    t1 = time.perf_counter()
    model = sb.compile(robot.eom)
    # the first right-hand side: the default backend builds C kernels in background threads,
    # so "compile" counts until the model has evaluated once (kernels built and loaded)
    model.rhs(0.0, robot.default_state(), model.constants_array(robot.constants),
              np.zeros(len(robot.inputs)))
    t2 = time.perf_counter()
    row.update(dof=len(robot.speeds), nq=len(robot.coordinates), form=t1 - t0, compile=t2 - t1)
    row.update(compare(pin, robot, model, pm, np.random.default_rng(0), states=states))
    if regressor and len(robot.speeds) <= reg_max:
        t3 = time.perf_counter()
        rs = sb.load_urdf(path, floating_base=floating, symbolic_inertia=True,
                          invalid_inertia="warn", mimic="mimic_refused" not in row)
        reg = rs.regressor()
        pd = pm.createData()
        rng = np.random.default_rng(1)
        _, ui = tree_index(rs)
        N = len(rs.coordinates)
        ey = ep = 0.0
        for _ in range(states):
            qp, v = random_state(pin, pm, rng)
            x = rs.from_pinocchio(qp, v)
            qp, v = rs.to_pinocchio(x)
            a = rng.standard_normal(pm.nv)
            Y = reg(x[:N], v[ui], a[ui])
            Yp = pin.computeJointTorqueRegressor(pm, pd, qp, v, a)[ui]
            tau = pin.rnea(pm, pd, qp, v, a)[ui]
            ey = max(ey, float(np.abs(Y - Yp).max() / max(1.0, np.abs(Yp).max())))
            ep = max(ep, float(np.abs(Y @ reg.values - tau).max() / max(1.0, np.abs(tau).max())))
        row.update(regressor=ep, regressor_matrix=ey, regressor_time=time.perf_counter() - t3)
    row["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


def robot_files() -> list[Path]:
    from systems.pinocchio_oracle import robots_dir
    root = robots_dir()
    if root is None:
        sys.exit("example-robot-data is not installed (pip install example-robot-data)")
    return sorted(root.rglob("*.urdf"))


def _fmt(x, spec=".1e"):
    return "-" if x is None else format(x, spec)


def table(rows: list[dict], root: Path) -> str:
    lines = ["| robot | base | dof | formation s | compile s | peak MB | M | bias | aba | cond(M) "
             "| Y pi | Y |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    refused = []
    for r in rows:
        name = str(Path(r["path"]).relative_to(root))
        base = "free-flyer" if r["floating"] else "fixed"
        if "refused" in r:
            refused.append(f"- {name} ({base}): {r['refused']}")
            continue
        lines.append(f"| {name} | {base} | {r['dof']} | {r['form']:.2f} | {r['compile']:.2f} | "
                     f"{r['rss_mb']:.0f} | {_fmt(r['M'])} | {_fmt(r['bias'])} | {_fmt(r['aba'])} | "
                     f"{_fmt(r['cond'], '.0e')} | "
                     f"{_fmt(r.get('regressor'))} | {_fmt(r.get('regressor_matrix'))} |")
        if r.get("mimic_refused"):
            refused.append(f"- {name} ({base}): refused with its mimic tags ({r['mimic_refused']});"
                           " the row is load_urdf(..., mimic=False)")
        if r.get("warnings"):
            refused.append(f"- {name} ({base}): loaded with invalid_inertia='warn': "
                           + "; ".join(sorted(set(r["warnings"]))))
    return "\n".join(lines) + "\n\nRefused or loaded with a warning:\n\n" + "\n".join(refused) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--match", default="", help="only files whose path contains this")
    ap.add_argument("--states", type=int, default=3)
    ap.add_argument("--regressor", action="store_true")
    ap.add_argument("--regressor-max-dof", type=int, default=40)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out", default=None, help="also write the table here")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--floating", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.one, a.floating, a.states, a.regressor, a.regressor_max_dof)))
        return
    files = [f for f in robot_files() if a.match in str(f)]
    from systems.pinocchio_oracle import robots_dir
    root = robots_dir()
    rows = []
    for f in files:
        folder = f.relative_to(root).parts[0]
        for floating in (False, True) if folder in FLOATING else (False,):
            cmd = [sys.executable, __file__, "--one", str(f), "--states", str(a.states),
                   "--regressor-max-dof", str(a.regressor_max_dof)]
            cmd += ["--floating"] if floating else []
            cmd += ["--regressor"] if a.regressor else []
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
            print(json.dumps({k: v for k, v in row.items() if k != "warnings"}), file=sys.stderr,
                  flush=True)
    text = table(rows, root)
    print(text)
    if a.out:
        Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
