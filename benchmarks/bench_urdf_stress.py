"""Any URDF files through symbody.load_urdf, checked against Pinocchio (bench_robots.py's rows).

The stress test of issue 31 on robot files load_urdf was not developed on (Bullet's
pybullet_data, Unitree's unitree_ros, Drake's examples, gym-ignition-models, ...): each file
in a fresh process with a cold kernel cache, as ``bench_robots.py --one`` (formation and
compile time, relative errors of M, the bias and the forward dynamics against pin.crba,
pin.rnea and pin.aba, and with --regressor Y pi against pin.rnea), then one table::

    git clone --depth 1 https://github.com/bulletphysics/bullet3 /tmp/bullet3
    python benchmarks/bench_urdf_stress.py --regressor /tmp/bullet3/data/kuka_iiwa/model.urdf
    python benchmarks/bench_urdf_stress.py --floating /tmp/bullet3/data/quadruped/minitaur.urdf

Needs the `test` extra (pin).  Times are wall-clock on whatever the machine is doing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_robots import table  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="URDF files")
    ap.add_argument("--floating", action="store_true", help="with a free-flyer (the file's "
                    "own floating joint is used either way)")
    ap.add_argument("--states", type=int, default=3)
    ap.add_argument("--regressor", action="store_true")
    ap.add_argument("--regressor-max-dof", type=int, default=20)
    ap.add_argument("--timeout", type=float, default=600)
    a = ap.parse_args()
    files = [Path(f).resolve() for f in a.files]
    rows = []
    for f in files:
        cmd = [sys.executable, str(HERE / "bench_robots.py"), "--one", str(f), "--states",
               str(a.states), "--regressor-max-dof", str(a.regressor_max_dof)]
        cmd += ["--floating"] if a.floating else []
        cmd += ["--regressor"] if a.regressor else []
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "SYMBODY_CACHE_DIR": cache}
            try:
                out = subprocess.run(cmd, capture_output=True, text=True, env=env,
                                     timeout=a.timeout)
                row = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 \
                    else {"refused": "crashed: "
                          + (out.stderr.strip().splitlines() or ["?"])[-1][:100]}
            except subprocess.TimeoutExpired:
                row = {"refused": f"over {a.timeout:.0f} s"}
        row.update(path=str(f), floating=a.floating)
        rows.append(row)
    root = Path(os.path.commonpath([str(f.parent) for f in files]))
    print(table(rows, root))


if __name__ == "__main__":
    main()
