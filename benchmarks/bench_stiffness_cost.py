"""The default method's switch to Radau, before and after a change of the stiffness monitor, in
one process: the 1 s forward simulations of ``bench_opensim_speed.py`` (OpenSim 4.6's
``Manager`` at accuracy 1e-6 in a child process, CPU; ours ``sb.simulate`` with the DEFAULT
method, ``Solver(rtol, atol=1e-3 rtol, dense_output=False)``, CPU), each tolerance's repeats
interleaved between three sides: the default method with the monitor of ``--before`` (a git
revision: its ``analysis/simulation/stiffness.py`` loaded beside this tree's and put in the
driver's place), with this tree's, and RK45 alone.  The rest of the code is this tree's, so
the two default sides differ in the monitor only.  Rows: median CPU, the ratio to OpenSim's
median, the evaluations and whether Radau was kept ("R kept") or tried and left.

    PYTHONPATH=src:tests python benchmarks/bench_stiffness_cost.py --before main \\
        --models arm26-cylinder gait10-millard --rtols 1e-4 1e-5 1e-6 1e-7 --repeats 7
    ... --repo <opensim-models bare mirror> --models gait2392-millard gait2392-thelen \\
        --rtols 1e-5 1e-6 --repeats 3
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_opensim_speed as speed  # noqa: E402

MONITOR = "src/symbody/analysis/simulation/stiffness.py"


def monitor_of(revision: str, out: Path):
    """The StiffnessMonitor class of ``revision`` (its stiffness.py, loaded as a module)."""
    out.write_bytes(subprocess.run(["git", "-C", str(HERE.parent), "show", f"{revision}:{MONITOR}"],
                                   check=True, capture_output=True).stdout)
    spec = importlib.util.spec_from_file_location("stiffness_before", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.StiffnessMonitor


def model_file(label: str, repo: str | None, tmp: Path) -> Path:
    makers = {"arm26-cylinder": lambda: speed.arm26_cylinder(tmp / "arm26_cylinder.osim"),
              "arm26-bicshort": lambda: speed.arm26_bicshort(tmp / "arm26_bicshort.osim"),
              "gait10-millard": lambda: speed.DATA / "gait10dof18musc.osim"}
    for name, kind in (("gait2392-thelen", "thelen2003muscle"),
                       ("gait2392-millard", "millard2012muscle")):
        makers[name] = lambda kind=kind: speed.from_mirror(repo, speed.GAIT2392.format(kind),
                                                           tmp / f"gait2392_{kind}.osim")
    return makers[label]()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="main", help="the git revision of the monitor to compare")
    ap.add_argument("--repo", help="a bare git mirror of opensim-models (gait2392)")
    ap.add_argument("--models", nargs="+", default=["arm26-cylinder", "gait10-millard"])
    ap.add_argument("--rtols", nargs="+", type=float, default=[1e-4, 1e-5, 1e-6, 1e-7])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    import symbody as sb
    import symbody.analysis.simulation.driver as driver
    from symbody.opensim import load_opensim

    after = driver.StiffnessMonitor
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        before = monitor_of(args.before, tmp / "stiffness_before.py")
        for label in args.models:
            path = model_file(label, args.repo, tmp)
            osim = speed.run_opensim(path, 3)
            t_osim = float(np.median(osim["cpu"]))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = load_opensim(path)
            nm = model.numeric_model
            q0, u0 = model.from_opensim_state(osim["start"]["Q"], osim["start"]["U"])
            x0 = np.concatenate([q0, u0, model.extra_states_from_opensim(osim["start"]["states"])])
            p = nm.constants_array(model.constants)
            r = np.full(len(model.input_names), speed.EXCITATION)

            def run(rtol, side, nm=nm, x0=x0, p=p, r=r):
                driver.StiffnessMonitor = before if side == "before" else after
                solver = sb.Solver(rtol=rtol, atol=rtol * 1e-3, dense_output=False,
                                   method="RK45" if side == "RK45" else None)
                c = time.process_time()
                sol = sb.simulate(nm, (0.0, speed.TF), x0, p, specifieds=r, solver=solver,
                                  t_eval=[0.0, speed.TF])
                return time.process_time() - c, sol

            sides = ("before", "after", "RK45")
            for side in sides:                      # (compiles; warms the caches)
                run(args.rtols[0], side)
            for rtol in args.rtols:
                res = {side: [] for side in sides}
                for _ in range(args.repeats):
                    for side in sides:
                        res[side].append(run(rtol, side))
                cells = []
                for side, runs in res.items():
                    cpu, sol = float(np.median([c for c, _ in runs])), runs[0][1]
                    assert sol.status == 0, sol.message
                    note = (" R kept" if "continued with Radau" in sol.message else
                            " R tried+left" if "Radau tried" in sol.message else "")
                    cells.append(f"{side} {cpu * 1e3:.2f} ms ({t_osim / cpu:.1f}x) {sol.nfev}{note}")
                print(f"| {label} | {rtol:g} | OpenSim {t_osim * 1e3:.1f} ms | " + " | ".join(cells)
                      + " |", flush=True)
            driver.StiffnessMonitor = after


if __name__ == "__main__":
    main()
