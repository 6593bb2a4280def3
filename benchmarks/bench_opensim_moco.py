"""Minimum-effort reaching with Arm26: symbody's OptimalControlProblem against OpenSim Moco.

The problem of docs/guides/opensim_reaching.md, solved by both tools in the same run:
Arm26 with straight-line muscle paths (wrap objects removed) and rigid-tendon
DeGrooteFregly2016Muscles (written by OpenSim's API, the one file both tools load), from
rest (shoulder 0, elbow 0.3 rad, activations 0.01) to shoulder 0.3 rad and elbow 1.2 rad at
rest in 1 s, minimising the integral of the squared excitations.  Both transcribe it the
same way: separated Hermite-Simpson on the same mesh, excitations free at the interval
midpoints, Simpson's rule for the cost, the same bounds and initial guess.  IPOPT's
tolerance: 1e-8 for Moco (its limited-memory Hessian gets no further in a few hundred
iterations), 1e-10 for symbody's compared solution (also solved at 1e-8: on this flat
problem, objective 0.018, IPOPT stops there 4e-5 above the optimum).  Moco runs in a process of its own (the opensim wheel's bundled casadi cannot
share a process with the casadi package that symbody's default solver uses).

Reported: both optima, the largest differences of the states and excitations over the
collocation points, the end states, IPOPT's iterations, and the CPU time of each tool's
setup and solve (one run each: Moco's solve takes minutes).  Then two cross-checks in
symbody's discrete equations: the Hermite-Simpson defects and the Simpson cost of Moco's
solution, and symbody's optimum when started from Moco's solution.

    PYTHONPATH=src python benchmarks/bench_opensim_moco.py [--nodes 26]
        [--moco-hessian limited-memory|exact] [--tol 1e-8] [--moco-json FILE]
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

ARM26 = Path(__file__).resolve().parents[1] / "tests" / "data" / "opensim" / "arm26.osim"
MUSCLES = ("TRIlong", "TRIlat", "TRImed", "BIClong", "BICshort", "BRA")
T = 1.0
START, END = (0.0, 0.3), (0.3, 1.2)          # (shoulder, elbow), rad
Q_RANGE = ((-1.57079633, 3.14159265), (0.0, 2.26892803))
SPEED, LOW = 50.0, 0.01                      # |u| <= 50 rad/s; e, a in [0.01, 1]
GUESS = 0.05                                 # activations and excitations of the guess

MOCO_WORKER = r"""
import json, sys, time
import numpy as np
import opensim as osim

args = json.loads(sys.argv[1])
osim.Logger.setLevelString("error")
om = osim.Model(args["arm26"])
muscles = om.updMuscles()
for i in range(muscles.getSize()):
    osim.GeometryPath.safeDownCast(muscles.get(i).updPath()).updWrapSet().clearAndDestroy()
osim.DeGrooteFregly2016Muscle.replaceMuscles(om)
for force in om.getForceSet():
    muscle = osim.DeGrooteFregly2016Muscle.safeDownCast(force)
    if muscle is not None:
        muscle.set_ignore_tendon_compliance(True)
om.finalizeConnections()
om.printToXML(args["model"])
if args.get("write_only"):
    sys.exit(0)

c0 = time.process_time()
study = osim.MocoStudy()
problem = study.updProblem()
problem.setModel(osim.Model(args["model"]))
T = args["T"]
problem.setTimeBounds(0, T)
paths = ["/jointset/r_shoulder/r_shoulder_elev", "/jointset/r_elbow/r_elbow_flex"]
for path, rng, a, b in zip(paths, args["q_range"], args["start"], args["end"]):
    problem.setStateInfo(path + "/value", rng, a, b)
    problem.setStateInfo(path + "/speed", [-args["speed"], args["speed"]], 0.0, 0.0)
for name in args["muscles"]:
    problem.setStateInfo(f"/forceset/{name}/activation", [args["low"], 1.0], args["low"])
    problem.setControlInfo(f"/forceset/{name}", [args["low"], 1.0])
problem.addGoal(osim.MocoControlGoal("effort", 1.0))
solver = study.initCasADiSolver()
solver.set_num_mesh_intervals(args["nodes"] - 1)
solver.set_transcription_scheme("hermite-simpson")
solver.set_interpolate_control_mesh_interior_points(False)
solver.set_optim_convergence_tolerance(args["tol"])
solver.set_optim_constraint_tolerance(args["tol"])
solver.set_optim_hessian_approximation(args["hessian"])
solver.set_optim_max_iterations(3000)
solver.set_parallel(0)
solver.set_verbosity(0)
guess = solver.createGuess()
n = guess.getNumTimes()
t = np.asarray(guess.getTimeMat())
for path, a, b in zip(paths, args["start"], args["end"]):
    guess.setState(path + "/value", osim.Vector(list(a + (b - a) * t / T)))
    guess.setState(path + "/speed", osim.Vector(n, 0.0))
for name in args["muscles"]:
    guess.setState(f"/forceset/{name}/activation", osim.Vector(n, args["guess"]))
    guess.setControl(f"/forceset/{name}", osim.Vector(n, args["guess"]))
solver.setGuess(guess)
setup = time.process_time() - c0
c0 = time.process_time()
sol = study.solve()
solve = time.process_time() - c0
sol.unseal()
print(json.dumps({
    "objective": sol.getObjective(), "iterations": sol.getNumIterations(),
    "success": sol.success(), "status": sol.getStatus(), "setup": setup, "solve": solve,
    "t": np.asarray(sol.getTimeMat()).tolist(),
    "state_names": list(sol.getStateNames()),
    "states": np.asarray(sol.getStatesTrajectoryMat()).tolist(),
    "control_names": list(sol.getControlNames()),
    "controls": np.asarray(sol.getControlsTrajectoryMat()).tolist(),
}))
"""


def run_moco(model_file: Path, nodes: int, hessian: str, tol: float,
             write_only: bool = False) -> dict:
    """Write the model file with OpenSim and (unless ``write_only``) solve the problem with
    Moco, in a fresh interpreter; its JSON answer."""
    args = {"arm26": str(ARM26), "model": str(model_file), "nodes": nodes, "T": T,
            "start": START, "end": END, "q_range": Q_RANGE, "speed": SPEED, "low": LOW,
            "muscles": MUSCLES, "guess": GUESS, "hessian": hessian, "tol": tol,
            "write_only": write_only}
    out = subprocess.run([sys.executable, "-c", MOCO_WORKER, json.dumps(args)],
                         capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        raise RuntimeError(f"the Moco worker failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1]) if not write_only else {}


def symbody_problem(model_file: Path, nodes: int):
    """The guide's problem on the file: (arm, problem, guess)."""
    import symbody as sb

    arm = sb.load_opensim(model_file)
    shoulder, elbow = arm.coordinates
    u_shoulder, u_elbow = arm.speeds
    bounds = {shoulder: Q_RANGE[0], elbow: Q_RANGE[1],
              u_shoulder: (-SPEED, SPEED), u_elbow: (-SPEED, SPEED)}
    bounds.update({e: (LOW, 1.0) for e in arm.eom.specifieds})
    bounds.update({a: (LOW, 1.0) for a in arm.eom.extra_states})
    problem = sb.OptimalControlProblem(
        arm.eom, num_nodes=nodes, duration=T,
        objective=sum(e**2 for e in arm.eom.specifieds),
        instance_constraints=[shoulder.func(0.0) - START[0], elbow.func(0.0) - START[1],
                              u_shoulder.func(0.0), u_elbow.func(0.0),
                              shoulder.func(T) - END[0], elbow.func(T) - END[1],
                              u_shoulder.func(T), u_elbow.func(T)]
                             + [a.func(0.0) - LOW for a in arm.eom.extra_states],
        bounds=bounds, known_parameters=arm.constants, transcription="hermite-simpson")
    t = np.linspace(0.0, T, nodes)
    guess = {shoulder: START[0] + (END[0] - START[0]) * t / T,
             elbow: START[1] + (END[1] - START[1]) * t / T}
    guess.update({x: GUESS for x in tuple(arm.eom.extra_states) + tuple(arm.eom.specifieds)})
    return arm, problem, guess


def moco_in_symbody_order(arm, moco: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Moco's solution (times, states [q, u, a], excitations) in symbody's order."""
    names = moco["state_names"]
    coords = ["/jointset/r_shoulder/r_shoulder_elev", "/jointset/r_elbow/r_elbow_flex"]
    cols = ([names.index(c + "/value") for c in coords] + [names.index(c + "/speed") for c in coords]
            + [names.index(f"/forceset/{m}/activation") for m in arm.muscle_names])
    ccols = [moco["control_names"].index(f"/forceset/{m}") for m in arm.muscle_names]
    return (np.asarray(moco["t"]), np.asarray(moco["states"])[:, cols],
            np.asarray(moco["controls"])[:, ccols])


def hermite_simpson_check(arm, t: np.ndarray, x: np.ndarray,
                          r: np.ndarray) -> tuple[float, float, np.ndarray]:
    """The largest Hermite-Simpson defect of a trajectory over the points (nodes and
    midpoints alternating) in symbody's model, its Simpson cost h/6 Σ (L_k + 4 L_c + L_k+1)
    and the state derivatives f (points, states)."""
    model = arm.numeric_model
    f = np.array([model.rhs(tk, xk, arm.constants, rk) for tk, xk, rk in zip(t, x, r)])
    k, c, k1 = slice(0, -1, 2), slice(1, None, 2), slice(2, None, 2)
    h = (t[k1] - t[k])[:, None]
    d1 = x[c] - (x[k] + x[k1]) / 2 - h / 8 * (f[k] - f[k1])
    d2 = x[k1] - x[k] - h / 6 * (f[k] + 4 * f[c] + f[k1])
    L = (r**2).sum(axis=1)
    cost = float((h[:, 0] / 6 * (L[k] + 4 * L[c] + L[k1])).sum())
    return float(max(np.abs(d1).max(), np.abs(d2).max())), cost, f


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=26)
    ap.add_argument("--moco-hessian", default="limited-memory",
                    choices=("limited-memory", "exact"))
    ap.add_argument("--tol", type=float, default=1e-8, help="IPOPT's tol, both tools")
    ap.add_argument("--sb-tol", type=float, default=1e-10,
                    help="symbody's tol for the compared solution (the NLP is flat: at 1e-8 "
                         "IPOPT stops 4e-5 above the optimum)")
    ap.add_argument("--moco-json", default="",
                    help="save Moco's answer here, or reuse it if the file exists")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        model_file = Path(tmp) / "arm26_reaching.osim"
        # Moco first (its own process): it writes the model file both tools load
        wall = time.perf_counter()
        if args.moco_json and Path(args.moco_json).exists():     # a saved Moco answer
            moco = json.loads(Path(args.moco_json).read_text())
            run_moco(model_file, args.nodes, args.moco_hessian, args.tol, write_only=True)
        else:
            moco = run_moco(model_file, args.nodes, args.moco_hessian, args.tol)
            if args.moco_json:
                Path(args.moco_json).write_text(json.dumps(moco))
        moco_wall = time.perf_counter() - wall
        c0 = time.process_time()
        arm, problem, guess = symbody_problem(model_file, args.nodes)
        sb_setup = time.process_time() - c0
        c0 = time.process_time()
        result = problem.solve(guess, tol=args.sb_tol)
        sb_solve = time.process_time() - c0
        same_tol = problem.solve(guess, tol=args.tol)     # IPOPT's tolerance as Moco's
        tm, xm, rm = moco_in_symbody_order(arm, moco)
        nlp = problem.nlp                   # every collocation point: nodes and midpoints
        xs, rs = result.w[nlp.iX], result.w[nlp.iR]
        ts = problem.t0 + nlp.point_kappa * (T / (args.nodes - 1))
        if len(ts) != len(tm) or np.abs(ts - tm).max() > 1e-12:
            raise RuntimeError("the two tools' collocation points differ")
        defect, moco_cost_here, f = hermite_simpson_check(arm, tm, xm, rm)
        w = problem.initial_vector(None)
        w[nlp.iX], w[nlp.iR], w[nlp.iV] = xm, rm, f[:, nlp.model.D]
        from_moco = problem.solve(w, tol=args.sb_tol)

    nq = 2
    rows = [
        ("objective", f"{result.objective:.9f}", f"{moco['objective']:.9f}",
         f"rel. diff {abs(result.objective - moco['objective']) / moco['objective']:.1e}"),
        (f"objective at IPOPT tol {args.tol:g} (both)", f"{same_tol.objective:.9f}",
         f"{moco['objective']:.9f}", f"Moco status {moco['status']}"),
        ("IPOPT iterations", result.iterations, moco["iterations"], ""),
        ("setup CPU s (load, transcription / study)", f"{sb_setup:.2f}", f"{moco['setup']:.2f}", ""),
        ("solve CPU s", f"{sb_solve:.2f}", f"{moco['solve']:.2f}",
         f"Moco / symbody {moco['solve'] / sb_solve:.0f}x"),
        ("max |q| diff (rad)", "", "", f"{np.abs(xs[:, :nq] - xm[:, :nq]).max():.1e}"),
        ("max |u| diff (rad/s)", "", "", f"{np.abs(xs[:, nq:2 * nq] - xm[:, nq:2 * nq]).max():.1e}"),
        ("max |activation| diff", "", "", f"{np.abs(xs[:, 2 * nq:] - xm[:, 2 * nq:]).max():.1e}"),
        ("max |excitation| diff", "", "", f"{np.abs(rs - rm).max():.1e}"),
        ("end state q, u", np.round(xs[-1, :4], 9).tolist(), np.round(xm[-1, :4], 9).tolist(), ""),
    ]
    print(f"Arm26 minimum-effort reach, Hermite-Simpson, {args.nodes - 1} intervals, "
          f"IPOPT tol: symbody {args.sb_tol:g}, Moco {args.tol:g}; Moco Hessian: {args.moco_hessian}, symbody: exact; "
          f"symbody solver {result.info.get('solver')}; Moco wall {moco_wall:.0f} s")
    print("| | symbody | Moco | |\n|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    print(f"Moco's solution in symbody's discrete equations: largest Hermite-Simpson defect "
          f"{defect:.1e}, Simpson cost {moco_cost_here:.9f}")
    print(f"symbody started from Moco's solution: objective {from_moco.objective:.9f} "
          f"in {from_moco.iterations} iterations ({from_moco.message})")


if __name__ == "__main__":
    main()
