"""A 1 s forward simulation of muscle-driven OpenSim models: OpenSim 4.6's ``Manager`` against
``sb.simulate``, same run, same start, same accuracy.

Models (Thelen2003Muscle, compliant tendons, first-order activation):
- ``gait-thelen``: gait10dof18musc (10 dof, no ground: it falls) with its 18 Millard
  muscles rewritten as Thelen2003Muscles (``tests/systems/thelen_transform.py``);
- ``arm26-bicshort``: Arm26 with its one muscle whose path does not wrap (``BICshort``):
  the two muscles over ellipsoids and the three over cylinders are removed on both sides;
- ``arm26-cylinder``: Arm26 with every muscle whose force symbody builds: ``TRIlat``,
  ``TRImed`` and ``BRA`` over the WrapCylinder 'TRI' and ``BICshort``; the two over
  ellipsoids (``TRIlong``, ``BIClong``) are removed on both sides.

Start: OpenSim's default state after ``equilibrateMuscles`` (activations 0.05 in the file,
or OpenSim's default), read into symbody's order through ``from_opensim_state`` and
``extra_states_from_opensim``; constant excitations 0.3 (a PrescribedController in
OpenSim, ``specifieds`` here).  OpenSim integrates to 1 s at accuracy 1e-6 (its default
integrator, RungeKuttaMerson) in a child process that times itself (CPU time,
``time.process_time`` around ``Manager.integrate``); symbody integrates the same ODE at
several tolerances (CPU time, median of repeats, interleaved).  Errors: the largest
difference of q (rad or m) at 1 s from a tight reference (``sb.simulate`` at rtol 1e-12,
whose derivatives agree with OpenSim's to 1e-12: ``tests/opensim/test_opensim_thelen.py``);
the row compares OpenSim with the loosest symbody tolerance whose error is not larger.

    PYTHONPATH=src:tests python benchmarks/bench_opensim_speed.py [--repeats 5] [--models ...]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))
DATA = ROOT / "tests" / "data" / "opensim"
EXCITATION = 0.3
TF = 1.0

OPENSIM_CHILD = r"""
import json, sys, time
import opensim as osim
osim.Logger.setLevelString("error")
path, e, tf, accuracy = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
m = osim.Model(path)
ctrl = osim.PrescribedController()
names = []
for i in range(m.getMuscles().getSize()):
    mus = m.getMuscles().get(i)
    names.append(mus.getName())
    ctrl.addActuator(mus)
    ctrl.prescribeControlForActuator(mus.getName(), osim.Constant(e))
m.addController(ctrl)
s = m.initSystem()
m.equilibrateMuscles(s)
def snapshot(s):
    arr = m.getStateVariableNames()
    return {"Q": [s.getQ().get(i) for i in range(s.getNQ())],
            "U": [s.getU().get(i) for i in range(s.getNU())],
            "states": {arr.get(i): m.getStateVariableValue(s, arr.get(i))
                       for i in range(arr.size())}}
start = snapshot(s)
times = []
for _ in range(int(sys.argv[5])):
    s0 = osim.State(s)
    manager = osim.Manager(m)
    manager.setIntegratorAccuracy(accuracy)
    manager.initialize(s0)
    t0 = time.process_time()
    end_state = manager.integrate(tf)
    times.append(time.process_time() - t0)
print(json.dumps({"start": start, "end": snapshot(end_state), "cpu": times,
                  "steps": None}))
"""


def arm26_bicshort(out: Path) -> Path:
    """Arm26 with BICshort its only muscle."""
    return arm26_without(out, ("TRIlong", "TRIlat", "TRImed", "BIClong", "BRA"))


def arm26_cylinder(out: Path) -> Path:
    """Arm26 without its two muscles over ellipsoids."""
    return arm26_without(out, ("TRIlong", "BIClong"))


def arm26_without(out: Path, removed: tuple) -> Path:
    text = (DATA / "arm26.osim").read_text()
    for name in removed:
        text, k = re.subn(rf'\s*<Thelen2003Muscle name="{name}">.*?</Thelen2003Muscle>', "",
                          text, flags=re.S)
        assert k == 1, name
    out.write_text(text)
    return out


def run_opensim(path: Path, repeats: int, accuracy: float = 1e-6) -> dict:
    out = subprocess.run([sys.executable, "-c", OPENSIM_CHILD, str(path), str(EXCITATION),
                          str(TF), str(accuracy), str(repeats)],
                         capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def one(label: str, path: Path, repeats: int) -> dict:
    import symbody as sb
    from symbody.opensim import load_opensim

    osim = run_opensim(path, repeats)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = load_opensim(path)
    nm = model.numeric_model
    build = time.perf_counter() - t0
    start = osim["start"]
    q0, u0 = model.from_opensim_state(start["Q"], start["U"])
    x0 = np.concatenate([q0, u0, model.extra_states_from_opensim(start["states"])])
    p = nm.constants_array(model.constants)
    r = np.full(len(model.eom.specifieds), EXCITATION)
    n = len(model.coordinates)

    def ours(rtol):
        solver = sb.Solver(rtol=rtol, atol=rtol * 1e-3, dense_output=False)
        sol = sb.simulate(nm, (0.0, TF), x0, p, specifieds=r, solver=solver, t_eval=[0.0, TF])
        assert sol.status == 0, sol.message
        return sol.x[-1]

    ref = ours(1e-12)
    q_end_osim, _ = model.from_opensim_state(osim["end"]["Q"], osim["end"]["U"])
    err_osim = float(np.abs(q_end_osim - ref[:n]).max())
    rows = []
    for rtol in (1e-4, 1e-5, 1e-6, 1e-7, 1e-8):
        err = float(np.abs(ours(rtol)[:n] - ref[:n]).max())
        times = []
        for _ in range(repeats):
            c = time.process_time()
            ours(rtol)
            times.append(time.process_time() - c)
        rows.append({"rtol": rtol, "error": err, "cpu": float(np.median(times))})
    fit = [r_ for r_ in rows if r_["error"] <= err_osim]
    best = fit[0] if fit else rows[-1]
    return {"model": label, "dof": n, "muscles": len(model.muscle_names),
            "opensim_cpu": float(np.median(osim["cpu"])), "opensim_error": err_osim,
            "opensim_steps": osim["steps"], "build_s": build, "ours": rows, "chosen": best,
            "ratio": float(np.median(osim["cpu"])) / best["cpu"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--models", nargs="*", default=["arm26-bicshort", "arm26-cylinder",
                                                    "gait-thelen"])
    args = ap.parse_args()
    from systems.thelen_transform import thelen_model

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        makers = {"arm26-bicshort": lambda: arm26_bicshort(tmp / "arm26_bicshort.osim"),
                  "arm26-cylinder": lambda: arm26_cylinder(tmp / "arm26_cylinder.osim"),
                  "gait-thelen": lambda: thelen_model(DATA / "gait10dof18musc.osim",
                                                      tmp / "gait_thelen.osim")}
        models = [(label, makers[label]()) for label in args.models]
        for label, path in models:
            res = one(label, path, args.repeats)
            print(json.dumps(res))
            c = res["chosen"]
            print(f"| {label} | {res['dof']} | {res['muscles']} | {res['opensim_cpu']*1e3:.1f} ms "
                  f"(err {res['opensim_error']:.1e}) | {c['cpu']*1e3:.2f} ms at rtol {c['rtol']:g} "
                  f"(err {c['error']:.1e}) | {res['ratio']:.1f}x |", flush=True)


if __name__ == "__main__":
    main()
