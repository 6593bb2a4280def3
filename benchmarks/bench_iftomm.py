"""IFToMM benchmark group A: CPU time to the low (1e-1) and high (1e-3) precision, symbody vs Exudyn.

Problems and references (tests/systems/iftomm_reference.py; data tests/data/iftomm_group_a.json):
A01 pendulum (2000 s, P1 at 4000 steps, exact Jacobi-elliptic solution), A02 N-four-bar
(N = 40, 20 s, B0 at 400 steps, exact 1-dof reduction), A04 Bricard (10 s, P3 every 0.01 s,
joint-coordinate Newton-Euler reference at rtol 1e-12), A05 flyball governor (10 s, s every
0.01 s, SymPy-Lagrange reference by Radau at rtol 1e-12).  Exudyn runs A02 and A04 (the
problems of the issue); A01 and A05 are symbody-only rows.

Exudyn (``pip install exudyn``, the ``bench`` extra) is used as a new user would: rigid
bodies, revolute joints, its default generalized-alpha index-3 solver (spectral radius 0.9),
EigenSparse linear solver for A02 (its docs recommend it above ~50 coordinates), EigenDense
with ``ignoreSingularJacobian`` for A04 (the redundant loop equation).  For each problem the
step size h is lowered until the output error reaches the high precision; for each level the
least CPU time (process time of ``SolveDynamic``) among the runs that reach it is reported.

symbody: :func:`run_symbody` calls ``symbody.simulate`` in the default constraint mode on the
zoo models ("bricard"; "n-four-bar" with n = 40 when the zoo has it, otherwise the row is
skipped) with rtol = atol lowered in the same way; its CPU time excludes formation and
compilation (reported separately).

    .venv/bin/python benchmarks/bench_iftomm.py [--problems A02 A04] [--backend c] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the shared test systems
from systems.iftomm_reference import a01_exact, a02_exact, a04_reference, a05_reference  # noqa: E402

PRECISIONS = (1e-1, 1e-3)
T_A01 = np.linspace(0.0, 2000.0, 4001)
T_A02 = np.linspace(0.0, 20.0, 401)
T_A04 = np.linspace(0.0, 10.0, 1001)
T_A05 = np.linspace(0.0, 10.0, 1001)
#: zoo model, output names, scipy method of the symbody runs
SYMBODY = {"A01": ("iftomm-pendulum", ("x_P1", "y_P1"), None),
           "A02": ("n-four-bar", ("x_B0", "y_B0"), None),
           "A04": ("bricard", ("x_P3", "y_P3", "z_P3"), None),
           "A05": ("flyball-governor", ("s",), "Radau")}
H_STEPS = {"A02": (5e-2, 2e-2, 1e-2, 5e-3, 2e-3, 1e-3, 5e-4),
           "A04": (5e-2, 2e-2, 1e-2, 5e-3, 2e-3, 1e-3, 5e-4)}
#: sb.compile's backend for symbody's models (``--backend``): "auto" (the default) or "c",
#: whose kernels the compiled steps (native right-hand sides and Runge-Kutta steps) can call
BACKEND = {"name": "auto"}
RTOLS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9)


# ------------------------------------------------------------------ references
_REFERENCES: dict = {}


def reference(problem: str) -> tuple[np.ndarray, np.ndarray]:
    """(sample times, reference output (len(t), k)) of ``problem``."""
    if problem not in _REFERENCES:
        if problem == "A01":
            _REFERENCES[problem] = (T_A01, np.column_stack(a01_exact(T_A01)))
        elif problem == "A02":
            r = a02_exact(T_A02, n=40)
            _REFERENCES[problem] = (T_A02, np.column_stack([r["x"], r["y"]]))
        elif problem == "A04":
            _REFERENCES[problem] = (T_A04, a04_reference(T_A04)["P3"])
        else:
            _REFERENCES[problem] = (T_A05, a05_reference(T_A05)["s"][:, None])
    return _REFERENCES[problem]


def output_error(problem: str, t: np.ndarray, y: np.ndarray) -> float:
    """Largest absolute deviation of the output from the reference at the sample times."""
    t_ref, y_ref = reference(problem)
    if len(t) != len(t_ref) or np.max(np.abs(t - t_ref)) > 1e-9:
        y = np.column_stack([np.interp(t_ref, t, y[:, j]) for j in range(y.shape[1])])
    return float(np.max(np.abs(y - y_ref)))


# ------------------------------------------------------------------ Exudyn
def _exudyn_a02(h: float, n: int = 40) -> tuple[np.ndarray, np.ndarray, float]:
    import exudyn as exu
    from exudyn.itemInterface import (
        LoadMassProportional,
        MarkerBodyMass,
        MarkerBodyPosition,
        NodeRigidBody2D,
        ObjectGround,
        ObjectJointRevolute2D,
        ObjectRigidBody2D,
        SensorBody,
    )

    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    inertia = 1.0 / 12.0          # uniform bar, 1 kg, 1 m, about its centre
    rockers, couplers = [], []
    for i in range(n + 1):        # rockers vertical, turning at -1 rad/s (B0 x-velocity 1 m/s)
        nd = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[i, 0.5, math.pi / 2],
                                         initialVelocities=[0.5, 0.0, -1.0]))
        rockers.append(mbs.AddObject(ObjectRigidBody2D(physicsMass=1.0, physicsInertia=inertia,
                                                       nodeNumber=nd)))
    for i in range(n):            # couplers horizontal, translating at 1 m/s
        nd = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[i + 0.5, 1.0, 0.0],
                                         initialVelocities=[1.0, 0.0, 0.0]))
        couplers.append(mbs.AddObject(ObjectRigidBody2D(physicsMass=1.0, physicsInertia=inertia,
                                                        nodeNumber=nd)))
    for i, b in enumerate(rockers):
        mg = mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground, localPosition=[i, 0.0, 0.0]))
        mA = mbs.AddMarker(MarkerBodyPosition(bodyNumber=b, localPosition=[-0.5, 0.0, 0.0]))
        mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[mg, mA]))
    for i, c in enumerate(couplers):
        for side, r in ((-0.5, rockers[i]), (0.5, rockers[i + 1])):
            mB = mbs.AddMarker(MarkerBodyPosition(bodyNumber=r, localPosition=[0.5, 0.0, 0.0]))
            mC = mbs.AddMarker(MarkerBodyPosition(bodyNumber=c, localPosition=[side, 0.0, 0.0]))
            mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[mB, mC]))
    for b in rockers + couplers:
        mm = mbs.AddMarker(MarkerBodyMass(bodyNumber=b))
        mbs.AddLoad(LoadMassProportional(markerNumber=mm, loadVector=[0.0, -9.81, 0.0]))
    sensor = mbs.AddSensor(SensorBody(bodyNumber=rockers[0], localPosition=[0.5, 0.0, 0.0],
                                      storeInternal=True,
                                      outputVariableType=exu.OutputVariableType.Position))
    mbs.Assemble()
    s = exu.SimulationSettings()
    s.timeIntegration.endTime = 20.0
    s.timeIntegration.numberOfSteps = int(round(20.0 / h))
    s.timeIntegration.verboseMode = 0
    s.solutionSettings.writeSolutionToFile = False
    s.solutionSettings.sensorsWritePeriod = 0.05
    s.linearSolverType = exu.LinearSolverType.EigenSparse
    t0 = time.process_time()
    mbs.SolveDynamic(s)
    cpu = time.process_time() - t0
    data = mbs.GetSensorStoredData(sensor)
    return data[:, 0], data[:, 1:3], cpu


def _exudyn_a04(h: float) -> tuple[np.ndarray, np.ndarray, float]:
    import exudyn as exu
    from exudyn.itemInterface import ObjectGround
    from exudyn.utilities import InertiaCuboid, RotationMatrixY, RotationMatrixZ, SensorBody

    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    L, r = 1.0, 0.1
    inertia = InertiaCuboid(density=1.0 / (L * r * r), sideLengths=[L, r, r]).Translated([L / 2, 0, 0])
    corners = [[0, 0, 0], [L, 0, 0], [L, -L, 0], [L, -L, L], [0, -L, L], [0, 0, L]]
    rotations = [np.eye(3), RotationMatrixZ(-0.5 * math.pi), RotationMatrixY(-0.5 * math.pi),
                 RotationMatrixZ(math.pi), RotationMatrixZ(0.5 * math.pi)]
    axes = [[0, 1, 0], [0, 0, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0]]
    ground = mbs.AddObject(ObjectGround())
    bodies = [ground]
    for i, p in enumerate(corners):
        if i < 5:
            b = mbs.CreateRigidBody(inertia=inertia, referencePosition=p,
                                    referenceRotationMatrix=rotations[i], gravity=[0, -9.81, 0])
            mbs.CreateRevoluteJoint(bodyNumbers=[bodies[-1], b], position=p, axis=axes[i])
            bodies.append(b)
        else:                      # the closing joint: a revolute joint as a generic joint
            mbs.CreateGenericJoint(bodyNumbers=[bodies[-1], ground], position=p,
                                   constrainedAxes=[1, 1, 1, 0, 1, 1])
    sensor = mbs.AddSensor(SensorBody(bodyNumber=bodies[3], localPosition=[0, 0, 0],
                                      storeInternal=True,
                                      outputVariableType=exu.OutputVariableType.Position))
    mbs.Assemble()
    s = exu.SimulationSettings()
    s.timeIntegration.endTime = 10.0
    s.timeIntegration.numberOfSteps = int(round(10.0 / h))
    s.timeIntegration.verboseMode = 0
    s.solutionSettings.writeSolutionToFile = False
    s.solutionSettings.sensorsWritePeriod = 0.01
    s.linearSolverType = exu.LinearSolverType.EigenDense
    s.linearSolverSettings.ignoreSingularJacobian = True
    t0 = time.process_time()
    mbs.SolveDynamic(s)
    cpu = time.process_time() - t0
    data = mbs.GetSensorStoredData(sensor)
    return data[:, 0], data[:, 1:4], cpu


def run_exudyn(problem: str, h: float) -> dict:
    """One Exudyn run of ``problem`` ("A02" or "A04") with step ``h``: error, CPU time."""
    try:
        t, y, cpu = (_exudyn_a02 if problem == "A02" else _exudyn_a04)(h)
        err = output_error(problem, t, y)
        ok = bool(np.isfinite(err)) and abs(t[-1] - (20.0 if problem == "A02" else 10.0)) < 1e-6
    except Exception as exc:                     # Exudyn raises on a failed Newton step
        return {"h": h, "error": math.inf, "cpu": math.nan, "message": f"{type(exc).__name__}: {exc}"[:200]}
    return {"h": h, "error": err if ok else math.inf, "cpu": cpu,
            "message": "ok" if ok else f"stopped at t = {t[-1]:.3f}"}


# ------------------------------------------------------------------ symbody
_SYMBODY_MODELS: dict = {}


def _symbody_model(problem: str):
    import symbody as sb
    if problem not in _SYMBODY_MODELS:
        name = SYMBODY[problem][0]
        t0 = time.process_time()
        if name in sb.models.available():
            zoo = sb.models.get(name, n=40) if problem == "A02" else sb.models.get(name)
        elif problem == "A02":
            try:                                     # the model module before its registration
                from symbody.models.n_four_bar import n_four_bar
            except ImportError:
                _SYMBODY_MODELS[problem] = None
                return None
            zoo = n_four_bar(n=40)
        else:
            _SYMBODY_MODELS[problem] = None
            return None
        compiled = sb.compile(zoo.eom, backend=BACKEND["name"])
        setup = time.process_time() - t0
        sb.simulate(compiled, (0.0, 1e-3), zoo.initial_state, zoo.constants)   # warm-up
        _SYMBODY_MODELS[problem] = (zoo, compiled, setup)
    return _SYMBODY_MODELS[problem]


def _symbody_output(problem: str, zoo, sol) -> np.ndarray:
    import sympy as sm
    names = SYMBODY[problem][1]
    if problem == "A02" and "B0_x" in zoo.outputs:
        names = ("B0_x", "B0_y")
    missing = [k for k in names if k not in zoo.outputs]
    if missing:
        raise KeyError(f"the {zoo.name} model has no outputs {missing}; outputs: {sorted(zoo.outputs)}")
    f = sm.lambdify([list(zoo.eom.q)], sm.Matrix([zoo.outputs[k] for k in names]).xreplace(zoo.constants),
                    "numpy")
    return np.array([np.ravel(f(q)) for q in np.asarray(sol.q)])


_SYMBODY_RUNS: dict = {}


def _symbody_run(problem: str, rtol: float) -> dict:
    """One symbody run of ``problem`` at rtol = atol (cached)."""
    import symbody as sb
    key = (problem, rtol)
    if key not in _SYMBODY_RUNS:
        zoo, compiled, setup = _symbody_model(problem)
        t_ref, _ = reference(problem)
        t0 = time.process_time()
        sol = sb.simulate(compiled, (0.0, float(t_ref[-1])), zoo.initial_state, zoo.constants,
                          solver=sb.Solver(rtol=rtol, atol=rtol, method=SYMBODY[problem][2]),
                          t_eval=t_ref)
        cpu = time.process_time() - t0
        err = output_error(problem, np.asarray(sol.t), _symbody_output(problem, zoo, sol)) \
            if sol.success else math.inf
        _SYMBODY_RUNS[key] = {"rtol": rtol, "error": err, "cpu": cpu, "setup": setup,
                              "message": str(sol.message)}
    return _SYMBODY_RUNS[key]


def run_symbody(problem: str, precision: float) -> dict:
    """symbody on ``problem`` in the default constraint mode: rtol (= atol) is lowered through
    RTOLS until the output error is below ``precision``; of the runs made so far for the
    problem (at any precision) that reach it, the one with the least CPU time is returned:
    {"rtol", "error", "cpu", "setup" (formation + compilation), "message"}."""
    if _symbody_model(problem) is None:
        return {"skipped": f"no {SYMBODY[problem][0]!r} model in this symbody"}
    for rtol in RTOLS:
        if _symbody_run(problem, rtol)["error"] <= precision:
            break
    ok = [r for (p, _), r in _SYMBODY_RUNS.items() if p == problem and r["error"] <= precision]
    if not ok:
        return {**_symbody_run(problem, RTOLS[-1]), "failed": f"no rtol in {RTOLS} reached {precision}"}
    return min(ok, key=lambda r: r["cpu"])


# ------------------------------------------------------------------ driver
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", nargs="+", default=["A01", "A02", "A04", "A05"],
                    choices=["A01", "A02", "A04", "A05"])
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--backend", default="auto", choices=["auto", "c", "llvm"],
                    help="sb.compile's backend for symbody's models (default: auto)")
    args = ap.parse_args()
    BACKEND["name"] = args.backend
    import exudyn
    results: dict = {"exudyn_version": exudyn.__version__, "symbody_backend": args.backend}
    for problem in args.problems:
        runs = []
        for h in H_STEPS.get(problem, ()):          # Exudyn runs: A02 and A04
            run = run_exudyn(problem, h)
            runs.append(run)
            print(f"{problem} Exudyn h = {h:g}: error {run['error']:.3g}, CPU {run['cpu']:.3f} s ({run['message']})",
                  flush=True)
            if run["error"] <= PRECISIONS[-1]:
                break
        best = {}
        for prec in PRECISIONS:
            ok = [r for r in runs if r["error"] <= prec]
            best[str(prec)] = min(ok, key=lambda r: r["cpu"]) if ok else None
        sym = {str(prec): run_symbody(problem, prec) for prec in sorted(PRECISIONS)}
        for prec in PRECISIONS:
            e, s = best[str(prec)], sym[str(prec)]
            e_txt = (f"h = {e['h']:g}: {e['cpu']:.3f} s (error {e['error']:.2g})" if e
                     else "not reached" if problem in H_STEPS else "not run")
            s_txt = (f"rtol = {s['rtol']:g}: {s['cpu']:.3f} s (error {s['error']:.2g}, setup {s['setup']:.1f} s)"
                     if "rtol" in s and "failed" not in s else str(s))
            ratio = (f"{e['cpu'] / s['cpu']:.1f}x" if e and "rtol" in s and "failed" not in s and s["cpu"] > 0
                     else "-")
            print(f"{problem} precision {prec:g}: Exudyn {e_txt} | symbody {s_txt} | Exudyn/symbody {ratio}",
                  flush=True)
        results[problem] = {"exudyn_runs": runs, "exudyn_best": best, "symbody": sym,
                            "symbody_runs": [r for (p, _), r in _SYMBODY_RUNS.items() if p == problem]}
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
