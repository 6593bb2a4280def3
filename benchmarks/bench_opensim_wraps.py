"""Muscle paths over wrap objects (WrapCylinder, WrapSphere) against OpenSim 4.6.

For each model file given (a path, or ``repo:path`` inside a bare git mirror of
opensim-models): the muscles whose paths are built, how many of them wrap, the wrapped paths
left out (and why), the time to load the model and to compile and evaluate the paths
(``musculotendon_lengths``/``moment_arms``, CPU seconds), and the largest error against
OpenSim's ``getLength`` (relative) and ``computeMomentArm`` (|error| over the muscle's largest
moment arm) at random states within the coordinate ranges.  The moment arms about the
coordinates that a kinematic constraint couples (dependent or independent), where OpenSim's
MomentArmSolver lets the coupled coordinates follow (``muscle_views``), are reported apart
(over all muscles: the coupled coordinates are the knees', which few wrapped paths cross).

    PYTHONPATH=src:tests python benchmarks/bench_opensim_wraps.py FILE... [--repo MIRROR]
        [--states 3]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests"))  # the shared oracle helpers


def _row(path: Path, n_states: int) -> dict:
    from symbody.opensim import load_opensim
    from systems.opensim_oracle import ask_opensim

    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = load_opensim(path)
    load = time.process_time() - t0
    names = list(m.muscle_names)
    wrapped = [i for i, n in enumerate(names) if m.forces[n].path.wraps]
    wraps_left = [x for x in m.left_out if "wrap" in x.reason and x.name not in names]
    if not names:
        return {"muscles": 0, "wrapped": 0, "left": len(wraps_left), "why": [], "load": load,
                "paths": 0.0, "L": 0.0, "A": 0.0, "coupled": 0, "C": 0.0}
    rng = np.random.default_rng(3)
    qs = np.array([m.random_coordinates(rng) for _ in range(n_states)])
    t0 = time.process_time()
    L, A = m.musculotendon_lengths(qs), m.moment_arms(qs)
    paths = time.process_time() - t0
    ans = ask_opensim(path, [{"kind": "muscles", "Q": m.to_opensim_state(q)[0].tolist(),
                              "names": names, "coordinates": list(m.coordinate_names)}
                             for q in qs], without_forces=False)
    L_os = np.array([a["lengths"] for a in ans])
    A_os = np.array([a["moment_arms"] for a in ans])
    text = path.read_text()
    coupled = {str(q).split("(")[0].removeprefix("q_") for q in m.q_dep}
    for names_ in re.findall(r"<independent_coordinate_names>(.*?)</", text, flags=re.S):
        coupled |= set(names_.split())
    free = [k for k, c in enumerate(m.coordinate_names) if c not in coupled]
    scale = np.abs(A_os).max(axis=(0, 2)).clip(1e-300)
    err_A = np.abs(A - A_os)[:, :, free].max(axis=(0, 2)) / scale
    tied = [k for k in range(len(m.coordinate_names)) if k not in free]
    err_C = (np.abs(A - A_os)[:, :, tied].max(axis=(0, 2)) / scale).max() if tied else 0.0
    err_L = (np.abs(L - L_os) / np.abs(L_os)).max(axis=0)
    sel = wrapped or list(range(len(names)))
    return {"muscles": len(names), "wrapped": len(wrapped), "left": len(wraps_left),
            "why": sorted({re.sub(r" \(.*", "", x.reason.split(":")[0]) for x in wraps_left}),
            "load": load, "paths": paths, "L": err_L[sel].max(), "A": err_A[sel].max(),
            "coupled": len(m.coordinate_names) - len(free), "C": err_C}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--repo", help="a bare git mirror of opensim-models (files: repo paths)")
    ap.add_argument("--states", type=int, default=3)
    args = ap.parse_args()
    print("| file | muscles built | wrapped paths built | wrapped left out | load s | paths s "
          "| L (wrapped) | moment arms (wrapped) |\n|---|---:|---:|---:|---:|---:|---:|---:|")
    for f in args.files:
        path = Path(f)
        if args.repo:
            path = Path(tempfile.mkdtemp()) / Path(f).name
            path.write_bytes(subprocess.run(["git", "--git-dir", args.repo, "show",
                                             f"HEAD:{f}"], check=True,
                                            capture_output=True).stdout)
        r = _row(path.resolve(), args.states)
        note = f" ({'; '.join(r['why'])})" if r["why"] else ""
        coupled = (f"; {r['coupled']} coupled coordinates, all muscles: {r['C']:.1e}"
                   if r["coupled"] else "")
        print(f"| {f} | {r['muscles']} | {r['wrapped']} | {r['left']}{note} | {r['load']:.1f} "
              f"| {r['paths']:.1f} | {r['L']:.1e} | {r['A']:.1e}{coupled} |", flush=True)


if __name__ == "__main__":
    main()
