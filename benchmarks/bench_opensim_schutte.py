"""Arm26 with its 6 muscles as Schutte1993Muscle_Deprecated (tests/systems/schutte_transform.py:
one pennated, one with default curves): a 1 s forward simulation by symbody and by
OpenSim 4.6's Manager at accuracy 1e-6 and 1e-8, CPU time in the same process (medians of interleaved repeats), and both
final states' errors against a tight symbody reference (DOP853, rtol 1e-12).

Start: the file's default coordinates at rest, activations 0.2 and OpenSim's equilibrium fiber
lengths (``equilibrateMuscles``); constant excitations 0.2 (a PrescribedController in
OpenSim, ``specifieds`` in symbody).  Formation (load_opensim) and compile times are reported
once (compile: wall time, the C compiler runs in other processes).

    python benchmarks/bench_opensim_schutte.py [--repeats 3]

The opensim package must be installed (the ``test`` extra).  OpenSim runs in a child
process of this script (``--opensim``: its bundled libraries cannot share a process with
symbody's simulation stack), which times its own integration.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import symbody as sb
from symbody.opensim import load_opensim

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from systems.schutte_transform import schutte_model  # noqa: E402

PATH = Path(tempfile.gettempdir()) / "symbody_bench_schutte_arm26.osim"
EXCITATION, ACTIVATION, T_END = 0.2, 0.2, 1.0
ACCURACY = 1e-6
N_INPUTS = 0
SETTINGS = {"BIClong": {"pennation_angle_at_optimal": 0.3, "damping": 0.05, "time_scale": 0.2},
            "TRIlong": {"activation1": 5.0, "activation2": 2.0}}


def opensim_setup(osim):
    osim.Logger.removeFileSink()
    osim.Logger.setLevelString("error")
    m = osim.Model(str(PATH))
    ctrl = osim.PrescribedController()
    for mus in m.getMuscles():
        ctrl.addActuator(mus)
        ctrl.prescribeControlForActuator(mus.getName(), osim.Constant(EXCITATION))
    m.addController(ctrl)
    s = m.initSystem()
    for mus in m.getMuscles():
        mus.setActivation(s, ACTIVATION)
    m.equilibrateMuscles(s)
    return m, s


def _state_out(m, s) -> dict:
    muscles = m.getMuscles()
    return {"Q": [s.getQ().get(i) for i in range(s.getNQ())],
            "U": [s.getU().get(i) for i in range(s.getNU())],
            "muscles": {mus.getName(): [mus.getActivation(s), mus.getFiberLength(s)]
                        for mus in muscles}}


def opensim_child(repeats: int) -> None:
    """The OpenSim side (this script with --opensim): the initial state, then ``repeats``
    timed integrations, as JSON on stdout."""
    import opensim as osim
    m, s0 = opensim_setup(osim)
    out = {"initial": _state_out(m, s0), "cpu": [], "final": None}
    for _ in range(repeats):
        s = osim.State(s0)
        s.setTime(0.0)
        t = time.process_time()
        man = osim.Manager(m)
        man.setIntegratorAccuracy(ACCURACY)
        man.initialize(s)
        sf = man.integrate(T_END)
        out["cpu"].append(time.process_time() - t)
        out["final"] = _state_out(m, sf)
    print(json.dumps(out))


def ask_opensim(repeats: int) -> dict:
    res = subprocess.run([sys.executable, __file__, "--opensim", "--repeats", str(repeats),
                          "--accuracy", repr(ACCURACY)],
                         capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def state_of(answer: dict, model) -> np.ndarray:
    """x = [q, u, (a, l_M) per muscle] in symbody's order from an OpenSim state."""
    q, u = model.from_opensim_state(answer["Q"], answer["U"])
    extra = [v for name in model.muscle_names for v in answer["muscles"][name]]
    return np.concatenate([q, u, extra])


def run_symbody(nm, x0, p, rtol: float, atol: float | None = None,
                dense: bool = True) -> tuple:
    r = np.full(N_INPUTS, EXCITATION)
    solver = sb.Solver(rtol=rtol, atol=rtol * 1e-3 if atol is None else atol,
                       method="DOP853", dense_output=dense)
    t = time.process_time()
    traj = sb.simulate(nm, (0.0, T_END), x0, p, specifieds=r, solver=solver,
                       t_eval=None if dense else [0.0, T_END])
    return time.process_time() - t, traj


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rtols", type=float, nargs="+", default=[1e-4, 1e-6, 1e-8])
    ap.add_argument("--dense", action="store_true", help="keep DOP853's dense output")
    ap.add_argument("--accuracy", type=float, default=1e-6, help="OpenSim's accuracy")
    ap.add_argument("--opensim", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    global ACCURACY
    ACCURACY = args.accuracy
    if args.opensim:
        return opensim_child(args.repeats)
    schutte_model(ROOT / "tests" / "data" / "opensim" / "arm26.osim", PATH, SETTINGS,
                  no_passive_curve=("BRA",), no_curves=("TRImed",))
    t = time.process_time()
    model = load_opensim(PATH)
    formation = time.process_time() - t
    if model.left_out:
        raise SystemExit(f"left out: {model.left_out[0]}")
    first = ask_opensim(1)
    x0 = state_of(first["initial"], model)
    t = time.perf_counter()
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    global N_INPUTS
    N_INPUTS = len(model.input_names)         # the excitations (the wrap's inputs are derived)
    run_symbody(nm, x0, p, rtol=1e-3, dense=False)
    compile_wall = time.perf_counter() - t
    ref_time, ref = run_symbody(nm, x0, p, rtol=1e-12, atol=1e-12)
    x_ref = ref.x[-1]
    n = len(model.coordinates)

    def err(x):
        return (float(np.abs(x[:n] - x_ref[:n]).max()), float(np.abs(x - x_ref).max()))

    ours = {rtol: [] for rtol in args.rtols}
    theirs = []
    for _ in range(args.repeats):                     # interleaved
        for rtol in args.rtols:
            ours[rtol].append(run_symbody(nm, x0, p, rtol=rtol, dense=args.dense))
        ans = ask_opensim(1)
        theirs.append((ans["cpu"][0], ans["final"]))
    c_theirs = float(np.median([c for c, _ in theirs]))
    e_theirs = err(state_of(theirs[-1][1], model))
    print(f"arm26, 6 Schutte1993Muscle_Deprecated, 1 s, "
          f"accuracy {ACCURACY:g}; {time.strftime('%Y-%m-%d')}")
    print(f"formation (load_opensim) {formation:.2f} s CPU; compile {compile_wall:.2f} s wall")
    print(f"reference (symbody DOP853 rtol 1e-12): {ref_time:.2f} s CPU, {len(ref.t) - 1} steps")
    print(f"OpenSim  : {c_theirs * 1e3:8.1f} ms CPU  "
          f"max |q err| {e_theirs[0]:.2e}, max |x err| {e_theirs[1]:.2e}")
    chosen = None
    for rtol in args.rtols:
        c = float(np.median([c for c, _ in ours[rtol]]))
        traj = ours[rtol][-1][1]
        e = err(traj.x[-1])
        if e[0] <= e_theirs[0] and (chosen is None or rtol > chosen[0]):
            chosen = (rtol, c)
        print(f"symbody rtol {rtol:g}: {c * 1e3:8.1f} ms CPU  ({traj.nsteps} steps, {traj.nfev} "
              f"rhs)  max |q err| {e[0]:.2e}, max |x err| {e[1]:.2e}  "
              f"ratio {c_theirs / c:.1f}x")
    if chosen is None:
        print("no tolerance reached OpenSim's accuracy")
    else:
        print(f"speed-up at OpenSim's accuracy (rtol {chosen[0]:g}): {c_theirs / chosen[1]:.1f}x "
              f"(medians of {args.repeats} interleaved runs)")

if __name__ == "__main__":
    main()
