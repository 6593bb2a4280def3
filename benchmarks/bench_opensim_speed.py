"""A 1 s forward simulation of muscle-driven OpenSim models: OpenSim 4.6's ``Manager`` against
``sb.simulate``, same run, same start, same accuracy.

Models (Thelen2003Muscle unless said, compliant tendons, first-order activation):
- ``gait-thelen``: gait10dof18musc (10 dof, no ground: it falls) with its 18 Millard
  muscles rewritten as Thelen2003Muscles (``tests/systems/thelen_transform.py``);
- ``arm26-bicshort``: Arm26 with its one muscle whose path does not wrap (``BICshort``):
  the two muscles over ellipsoids and the three over cylinders are removed on both sides;
- ``gait10-millard``: gait10dof18musc as the file has it (18 Millard2012EquilibriumMuscles,
  compliant damped tendons);
- ``arm26-cylinder``: Arm26 with ``TRIlat``, ``TRImed`` and ``BRA`` over the WrapCylinder
  'TRI' and ``BICshort``; the two over ellipsoids (``TRIlong``, ``BIClong``) are removed on
  both sides;
- ``arm26-biclong``: Arm26 with every muscle whose force symbody builds: the above and
  ``BIClong`` over the WrapEllipsoid 'BIClonghh' (its stations computed at every evaluation,
  :mod:`symbody.opensim.forces.ellipsoid_path`); ``TRIlong`` (three wrap objects) removed;
- ``arm26``: the whole Arm26 file, ``TRIlong`` over its three wrap objects included (OpenSim's
  passes in C at every evaluation, :mod:`symbody.opensim.forces.multi_wrap`);
- with ``--repo`` (a bare git mirror of opensim-models): ``gait2392-thelen`` and
  ``gait2392-millard``, the full gait2392 model (23 dof, 92 muscles: conditional and moving
  path points, no wrap objects) as ``Models/Gait2392_Simbody/gait2392_thelen2003muscle.osim``
  and ``gait2392_millard2012muscle.osim`` have it (Millard: compliant damped tendons), read
  from the mirror as OpenSim reads them.

``--check N`` first compares the state derivatives with OpenSim's at N random states
(coordinates within their ranges, u in [-2, 2], activations and excitations in [0.01, 1],
fiber lengths OpenSim's equilibrium times U(0.97, 1.03)): q', u', a', fiber velocity, each
as max |ours - OpenSim| / max |OpenSim|.  ``--method`` picks the integrator (default: the
library's own choice); ``--models`` a subset of the labels.

Start: OpenSim's default state after ``equilibrateMuscles`` (activations 0.05 in the file,
or OpenSim's default), read into symbody's order through ``from_opensim_state`` and
``extra_states_from_opensim``; constant excitations 0.3 (a PrescribedController in
OpenSim, ``specifieds`` here).  OpenSim integrates to 1 s at accuracy 1e-6 (its default
integrator, RungeKuttaMerson) in a child process that times itself (CPU time,
``time.process_time`` around ``Manager.integrate``); symbody integrates the same ODE at
several tolerances (CPU time, median of repeats, interleaved).  Errors: the largest
difference of q (rad or m) at 1 s from a tight reference (``sb.simulate`` at rtol 1e-12 with
the library's method whatever ``--method`` is,
whose derivatives agree with OpenSim's to 1e-12: ``tests/opensim/test_opensim_thelen.py``);
the row compares OpenSim with the loosest symbody tolerance (half decades) whose error, and
that of every tighter tolerance, is not larger (so a lucky loose tolerance is not taken).

    PYTHONPATH=src:tests python benchmarks/bench_opensim_speed.py [--repeats 5]
        [--repo MIRROR] [--models LABEL...] [--check 3] [--method DOP853]
        [--accuracies 1e-5 1e-7]
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
    try:     # (the steps taken: the Manager stores the state at each; its integrator, with
        # the attempts and realizations, is not wrapped in Python)
        steps = manager.getStatesTable().getNumRows() - 1
    except Exception:
        steps = None
print(json.dumps({"start": start, "end": snapshot(end_state), "cpu": times,
                  "steps": steps}))
"""


def arm26_bicshort(out: Path) -> Path:
    """Arm26 with BICshort its only muscle."""
    return arm26_without(out, ("TRIlong", "TRIlat", "TRImed", "BIClong", "BRA"))


def arm26_cylinder(out: Path) -> Path:
    """Arm26 without its two muscles over ellipsoids."""
    return arm26_without(out, ("TRIlong", "BIClong"))


def arm26_biclong(out: Path) -> Path:
    """Arm26 without TRIlong (over three wrap objects)."""
    return arm26_without(out, ("TRIlong",))


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


GAIT2392 = "Models/Gait2392_Simbody/gait2392_{}.osim"


def from_mirror(repo: str, name: str, out: Path) -> Path:
    """A file of the opensim-models mirror ``repo`` (bare git) written to ``out``."""
    out.write_bytes(subprocess.run(["git", "--git-dir", repo, "show", f"HEAD:{name}"],
                                   check=True, capture_output=True).stdout)
    return out


def derivative_check(model, path: Path, n_states: int) -> dict:
    """max |ours - OpenSim| / max |OpenSim| of q', u', a', the fiber velocities at
    ``n_states`` random states (module docstring)."""
    from systems.opensim_oracle import ask_opensim, muscle_derivative_queries

    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    names = list(model.muscle_names)
    n = len(model.coordinates)
    queries, states = muscle_derivative_queries(model, np.random.default_rng(11), n_states)
    millard = any(el.tag == "Millard2012EquilibriumMuscle" for el in model.spec.forces)
    if millard:              # (not an ActivationFiberLengthMuscle: its own worker query)
        from systems.opensim_millard_worker import ask
        for qy in queries:
            qy.update(kind="millard", fiber_scale=qy.pop("fiber_length_factors"))
        answers = ask(path, queries)
    else:
        answers = ask_opensim(path, queries, without_forces=False)
    worst = {"qdot": 0.0, "udot": 0.0, "adot": 0.0, "fiber_velocity": 0.0}

    def rel(ours, ref):
        return float(np.abs(ours - ref).max() / np.abs(ref).max())

    for (q, u, e), ans in zip(states, answers):
        if millard:
            z = model.extra_states_from_opensim(ans["state_values"])
            zdot = np.ravel([[ans["adot"][m], ans["ldot"][m]] for m in names])
        else:
            z = model.extra_states_from_opensim(ans["states"])
            zdot = model.extra_states_from_opensim(ans["derivatives"])
        xdot = nm.rhs(0.0, np.concatenate([q, u, z]), p, model.specified_values(q, e))
        qdot = np.array(ans["qdot"])[list(model.simbody_q_slots)][list(model.simbody_index)]
        udot = np.array(ans["udot"])[list(model.simbody_index)]
        for key, val in (("qdot", rel(xdot[:n], qdot)), ("udot", rel(xdot[n:2 * n], udot)),
                         ("adot", rel(xdot[2 * n::2], zdot[0::2])),
                         ("fiber_velocity", rel(xdot[2 * n + 1::2], zdot[1::2]))):
            worst[key] = max(worst[key], val)
    return worst


def _note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def matched(rows: list, err_osim: float) -> dict:
    """The loosest of ``rows`` (loosest tolerance first) from which on every tighter one is as
    accurate as OpenSim (error <= ``err_osim``): no lucky loose tolerance is taken; the
    tightest row when none is."""
    best = rows[-1]
    for row in reversed(rows):
        if row["error"] > err_osim:
            break
        best = row
    return best


def one(label: str, path: Path, repeats: int, check: int = 0, method: str | None = None,
        rtols: tuple = (1e-4, 3e-5, 1e-5, 3e-6, 1e-6, 3e-7, 1e-7, 3e-8, 1e-8),
        accuracies: tuple = ()) -> dict:
    import symbody as sb
    from symbody.opensim import load_opensim

    osim = run_opensim(path, repeats)
    _note(f"{label}: OpenSim {np.median(osim['cpu']):.2f} s CPU")
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = load_opensim(path)
    load = time.perf_counter() - t0
    nm = model.numeric_model
    build = time.perf_counter() - t0
    agreement = derivative_check(model, path, check) if check else None
    _note(f"{label}: derivatives {agreement}")
    start = osim["start"]
    q0, u0 = model.from_opensim_state(start["Q"], start["U"])
    x0 = np.concatenate([q0, u0, model.extra_states_from_opensim(start["states"])])
    p = nm.constants_array(model.constants)
    r = np.full(len(model.input_names), EXCITATION)     # (the model computes the others)
    n = len(model.coordinates)

    def ours(rtol, method=method):
        solver = sb.Solver(rtol=rtol, atol=rtol * 1e-3, dense_output=False, method=method)
        sol = sb.simulate(nm, (0.0, TF), x0, p, specifieds=r, solver=solver, t_eval=[0.0, TF])
        assert sol.status == 0, sol.message
        last["nfev"], last["message"] = getattr(sol, "nfev", None), sol.message
        return sol.x[-1]

    last: dict = {}

    nm.rhs(0.0, x0, p, model.specified_values(q0, r))   # (compiles the kernels, counted in build)
    build = time.perf_counter() - t0
    _note(f"{label}: built in {build:.1f} s")
    ref = ours(1e-12, None)     # (the library's method: one reference whatever --method is)
    _note(f"{label}: reference done")
    q_end_osim, _ = model.from_opensim_state(osim["end"]["Q"], osim["end"]["U"])
    err_osim = float(np.abs(q_end_osim - ref[:n]).max())
    rows = []
    for rtol in rtols:
        err = float(np.abs(ours(rtol)[:n] - ref[:n]).max())
        times = []
        for _ in range(repeats):
            c = time.process_time()
            ours(rtol)
            times.append(time.process_time() - c)
        rows.append({"rtol": rtol, "error": err, "cpu": float(np.median(times)),
                     "nfev": last.get("nfev"), "message": last.get("message")})
        _note(f"{label}: {rows[-1]}")
    best = matched(rows, err_osim)
    others = []
    for accuracy in accuracies:         # (OpenSim at other accuracies, against the same rows)
        o = run_opensim(path, repeats, accuracy)
        q_end, _ = model.from_opensim_state(o["end"]["Q"], o["end"]["U"])
        err = float(np.abs(q_end - ref[:n]).max())
        row = matched(rows, err)
        others.append({"accuracy": accuracy, "opensim_cpu": float(np.median(o["cpu"])),
                       "opensim_error": err, "opensim_steps": o["steps"], "chosen": row,
                       "ratio": float(np.median(o["cpu"])) / row["cpu"]})
    return {"model": label, "dof": n, "muscles": len(model.muscle_names),
            "opensim_cpu": float(np.median(osim["cpu"])), "opensim_error": err_osim,
            "opensim_steps": osim["steps"], "load_s": load, "build_s": build,
            "agreement": agreement, "method": method, "ours": rows, "chosen": best,
            "ratio": float(np.median(osim["cpu"])) / best["cpu"], "accuracies": others}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--repo", help="a bare git mirror of opensim-models (adds gait2392)")
    ap.add_argument("--models", nargs="+", help="labels to run (default: all available)")
    ap.add_argument("--check", type=int, default=0, help="random states of the derivative check")
    ap.add_argument("--method", default=None, help="the integrator (default: the library's)")
    ap.add_argument("--rtols", nargs="+", type=float,
                    default=[1e-4, 3e-5, 1e-5, 3e-6, 1e-6, 3e-7, 1e-7, 3e-8, 1e-8],
                    help="the tolerances of symbody's runs, loosest first (default 1e-4 ... "
                         "1e-8, half decades)")
    ap.add_argument("--accuracies", nargs="*", type=float, default=[],
                    help="OpenSim accuracies besides 1e-6 to compare at (each against the "
                         "same symbody runs, by the same rule)")
    args = ap.parse_args()
    from systems.thelen_transform import thelen_model

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        models = [("arm26-bicshort", lambda: arm26_bicshort(tmp / "arm26_bicshort.osim")),
                  ("arm26-cylinder", lambda: arm26_cylinder(tmp / "arm26_cylinder.osim")),
                  ("arm26-biclong", lambda: arm26_biclong(tmp / "arm26_biclong.osim")),
                  ("arm26", lambda: DATA / "arm26.osim"),
                  ("gait-thelen", lambda: thelen_model(DATA / "gait10dof18musc.osim",
                                                       tmp / "gait_thelen.osim")),
                  ("gait10-millard", lambda: DATA / "gait10dof18musc.osim")]
        if args.repo:
            for label, kind in (("gait2392-thelen", "thelen2003muscle"),
                                ("gait2392-millard", "millard2012muscle")):
                models.append((label, lambda kind=kind: from_mirror(
                    args.repo, GAIT2392.format(kind), tmp / f"gait2392_{kind}.osim")))
        for label, make in models:
            if args.models and label not in args.models:
                continue
            res = one(label, make(), args.repeats, args.check, args.method, tuple(args.rtols),
                      tuple(args.accuracies))
            print(json.dumps(res))
            c = res["chosen"]
            if res["agreement"]:
                print(f"{label}: derivatives vs OpenSim at {args.check} states (relative): " +
                      ", ".join(f"{k} {v:.1e}" for k, v in res["agreement"].items()))
            print(f"{label}: load {res['load_s']:.1f} s, load + compile {res['build_s']:.1f} s "
                  "(wall)")
            print(f"| {label} | {res['dof']} | {res['muscles']} | {res['opensim_cpu']*1e3:.1f} ms "
                  f"(err {res['opensim_error']:.1e}) | {c['cpu']*1e3:.2f} ms at rtol {c['rtol']:g} "
                  f"(err {c['error']:.1e}, {c['nfev']} rhs evaluations) | {res['ratio']:.1f}x |",
                  flush=True)
            for a in res["accuracies"]:
                c = a["chosen"]
                print(f"|   at OpenSim accuracy {a['accuracy']:g} | | | {a['opensim_cpu']*1e3:.1f} ms "
                      f"(err {a['opensim_error']:.1e}) | {c['cpu']*1e3:.2f} ms at rtol "
                      f"{c['rtol']:g} (err {c['error']:.1e}) | {a['ratio']:.1f}x |", flush=True)

if __name__ == "__main__":
    main()
