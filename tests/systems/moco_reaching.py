"""Minimum-effort reaching with Arm26, stated once for OpenSim Moco and for symbody.

The problem of docs/guides/opensim_reaching.md: Arm26 with straight-line muscle paths (wrap
objects removed) and rigid-tendon DeGrooteFregly2016Muscles, written by OpenSim's API to one
file that both tools load; from rest at ``start`` (shoulder, elbow; activations at ``low``)
to rest at ``end`` in ``T`` s, minimising ∫ Σ wᵢ eᵢ² dt over the excitations e (muscles,)
with the bounds Moco gives by default (the coordinates' ranges, |u| <= ``speed``, e and a in
[``low``, 1]).  Both transcribe it as separated Hermite-Simpson on ``nodes`` mesh nodes with
the excitations free at the interval midpoints and Simpson's rule for the cost.

Moco runs in a process of its own (``python -m systems.moco_reaching``, the problem as JSON on
stdin, Moco's solution as JSON on stdout; :func:`solve_with_moco`): the opensim wheel's
bundled casadi cannot share a process with the ``casadi`` package (systems/opensim_worker.py).
Used by tests/opensim/test_opensim_moco_reaching.py and benchmarks/bench_opensim_moco.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

_TESTS = Path(__file__).resolve().parents[1]
ARM26 = _TESTS / "data" / "opensim" / "arm26.osim"
COORDINATES = ("/jointset/r_shoulder/r_shoulder_elev", "/jointset/r_elbow/r_elbow_flex")


@dataclass
class Reach:
    """One minimum-effort reaching problem (the guide's by default)."""

    muscles: tuple = ("TRIlong", "TRIlat", "TRImed", "BIClong", "BICshort", "BRA")
    nodes: int = 26                          # mesh nodes: nodes - 1 Hermite-Simpson intervals
    T: float = 1.0
    start: tuple = (0.0, 0.3)                # (shoulder, elbow), rad, at rest
    end: tuple = (0.3, 1.2)
    q_range: tuple = ((-1.57079633, 3.14159265), (0.0, 2.26892803))
    speed: float = 50.0                      # |u| <= speed, rad/s
    low: float = 0.01                        # e, a in [low, 1]; a(0) = low
    guess: float = 0.05                      # activations and excitations of the guess
    weights: dict = field(default_factory=dict)   # {muscle: w}, default 1


#: the test's problem (tests/opensim/test_opensim_moco_reaching.py), small enough for Moco to
#: solve in seconds: three muscles, 10 intervals, a 0.5 s reach to shoulder 0.1, elbow 0.9 rad
SMALL = Reach(muscles=("TRIlong", "BIClong", "BRA"), nodes=11, T=0.5, end=(0.1, 0.9))


def solve_with_moco(reach: Reach, model_file: Path, *, tol: float = 1e-8,
                    hessian: str = "limited-memory", max_iterations: int = 3000,
                    write_only: bool = False, timeout: float = 3600) -> dict:
    """Write the problem's model file with OpenSim and (unless ``write_only``) solve the
    problem with Moco (MocoCasADiSolver, IPOPT at ``tol``), in a fresh interpreter.

    Returns Moco's solution: ``objective``, ``iterations``, ``success``, ``status``, CPU
    ``setup`` and ``solve`` s, ``t`` (points,), ``state_names``, ``states`` (points, states),
    ``control_names``, ``controls`` (points, muscles), in Moco's order."""
    request = {"reach": asdict(reach), "arm26": str(ARM26), "model": str(model_file),
               "tol": tol, "hessian": hessian, "max_iterations": max_iterations,
               "write_only": write_only}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(_TESTS), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-m", "systems.moco_reaching"], input=json.dumps(request),
                         capture_output=True, text=True, env=env, cwd=str(_TESTS), timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"the Moco worker failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def symbody_problem(reach: Reach, model_file: Path):
    """The problem in symbody on the written file: (arm, problem, guess)."""
    import symbody as sb

    arm = sb.load_opensim(model_file)
    shoulder, elbow = arm.coordinates
    u_shoulder, u_elbow = arm.speeds
    T, (s0, e0), (s1, e1) = reach.T, reach.start, reach.end
    bounds = {shoulder: tuple(reach.q_range[0]), elbow: tuple(reach.q_range[1]),
              u_shoulder: (-reach.speed, reach.speed), u_elbow: (-reach.speed, reach.speed)}
    bounds.update({e: (reach.low, 1.0) for e in arm.eom.specifieds})
    bounds.update({a: (reach.low, 1.0) for a in arm.eom.extra_states})
    weights = [reach.weights.get(m, 1.0) for m in arm.muscle_names]
    problem = sb.OptimalControlProblem(
        arm.eom, num_nodes=reach.nodes, duration=T,
        objective=sum(w * e**2 for w, e in zip(weights, arm.eom.specifieds)),
        instance_constraints=[shoulder.func(0.0) - s0, elbow.func(0.0) - e0,
                              u_shoulder.func(0.0), u_elbow.func(0.0),
                              shoulder.func(T) - s1, elbow.func(T) - e1,
                              u_shoulder.func(T), u_elbow.func(T)]
                             + [a.func(0.0) - reach.low for a in arm.eom.extra_states],
        bounds=bounds, known_parameters=arm.constants, transcription="hermite-simpson")
    t = np.linspace(0.0, T, reach.nodes)
    guess = {shoulder: s0 + (s1 - s0) * t / T, elbow: e0 + (e1 - e0) * t / T}
    guess.update({x: reach.guess for x in tuple(arm.eom.extra_states) + tuple(arm.eom.specifieds)})
    return arm, problem, guess


def moco_in_symbody_order(arm, moco: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Moco's solution in symbody's order: times (points,), states [q, u, a] (points, 2 + 2 +
    muscles) and excitations (points, muscles)."""
    names = moco["state_names"]
    cols = ([names.index(c + "/value") for c in COORDINATES]
            + [names.index(c + "/speed") for c in COORDINATES]
            + [names.index(f"/forceset/{m}/activation") for m in arm.muscle_names])
    ccols = [moco["control_names"].index(f"/forceset/{m}") for m in arm.muscle_names]
    return (np.asarray(moco["t"]), np.asarray(moco["states"])[:, cols],
            np.asarray(moco["controls"])[:, ccols])


def symbody_points(problem, result) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """symbody's solution at every collocation point (nodes and midpoints alternating, as
    Moco's): times (points,), states (points, states) and excitations (points, muscles)."""
    nlp = problem.nlp
    h = problem.duration / (problem.num_nodes - 1)
    return problem.t0 + nlp.point_kappa * h, result.w[nlp.iX], result.w[nlp.iR]


def hermite_simpson_check(arm, t: np.ndarray, x: np.ndarray, r: np.ndarray,
                          weights: dict | None = None) -> tuple[float, float, np.ndarray]:
    """A trajectory (nodes and midpoints alternating: t (points,), x (points, states), r
    (points, muscles)) in symbody's model: its largest Hermite-Simpson defect
    x_c - (x_k + x_k+1)/2 - h/8 (f_k - f_k+1), x_k+1 - x_k - h/6 (f_k + 4 f_c + f_k+1), its
    Simpson cost h/6 Σ (L_k + 4 L_c + L_k+1) with L = Σ wᵢ rᵢ², and f (points, states)."""
    model = arm.numeric_model
    f = np.array([model.rhs(tk, xk, arm.constants, rk) for tk, xk, rk in zip(t, x, r)])
    k, c, k1 = slice(0, -1, 2), slice(1, None, 2), slice(2, None, 2)
    h = (t[k1] - t[k])[:, None]
    d1 = x[c] - (x[k] + x[k1]) / 2 - h / 8 * (f[k] - f[k1])
    d2 = x[k1] - x[k] - h / 6 * (f[k] + 4 * f[c] + f[k1])
    w = np.array([(weights or {}).get(m, 1.0) for m in arm.muscle_names])
    L = (w * r**2).sum(axis=1)
    cost = float((h[:, 0] / 6 * (L[k] + 4 * L[c] + L[k1])).sum())
    return float(max(np.abs(d1).max(), np.abs(d2).max())), cost, f


def _write_model(osim, reach: dict, arm26: str, out: str) -> None:
    """Arm26 with only ``reach["muscles"]``, straight paths, rigid-tendon De Groote muscles."""
    from systems.opensim_worker import rigid_degroote_muscles

    om = osim.Model(arm26)
    forces = om.updForceSet()
    for i in reversed(range(forces.getSize())):
        if osim.Muscle.safeDownCast(forces.get(i)) is not None \
                and forces.get(i).getName() not in reach["muscles"]:
            forces.remove(i)
    muscles = om.updMuscles()
    for i in range(muscles.getSize()):
        osim.GeometryPath.safeDownCast(muscles.get(i).updPath()).updWrapSet().clearAndDestroy()
    rigid_degroote_muscles(osim, om)
    om.printToXML(out)


def _solve(osim, request: dict) -> dict:
    import time

    reach = request["reach"]
    c0 = time.process_time()
    study = osim.MocoStudy()
    problem = study.updProblem()
    problem.setModel(osim.Model(request["model"]))
    T = reach["T"]
    problem.setTimeBounds(0, T)
    for path, rng, a, b in zip(COORDINATES, reach["q_range"], reach["start"], reach["end"]):
        problem.setStateInfo(path + "/value", rng, a, b)
        problem.setStateInfo(path + "/speed", [-reach["speed"], reach["speed"]], 0.0, 0.0)
    for name in reach["muscles"]:
        problem.setStateInfo(f"/forceset/{name}/activation", [reach["low"], 1.0], reach["low"])
        problem.setControlInfo(f"/forceset/{name}", [reach["low"], 1.0])
    goal = osim.MocoControlGoal("effort", 1.0)
    for name, w in reach["weights"].items():
        goal.setWeightForControl(f"/forceset/{name}", w)
    problem.addGoal(goal)
    solver = study.initCasADiSolver()
    solver.set_num_mesh_intervals(reach["nodes"] - 1)
    solver.set_transcription_scheme("hermite-simpson")
    solver.set_interpolate_control_mesh_interior_points(False)
    solver.set_optim_convergence_tolerance(request["tol"])
    solver.set_optim_constraint_tolerance(request["tol"])
    solver.set_optim_hessian_approximation(request["hessian"])
    solver.set_optim_max_iterations(request["max_iterations"])
    solver.set_parallel(0)
    solver.set_verbosity(0)
    guess = solver.createGuess()
    n = guess.getNumTimes()
    t = np.asarray(guess.getTimeMat())
    for path, a, b in zip(COORDINATES, reach["start"], reach["end"]):
        guess.setState(path + "/value", osim.Vector(list(a + (b - a) * t / T)))
        guess.setState(path + "/speed", osim.Vector(n, 0.0))
    for name in reach["muscles"]:
        guess.setState(f"/forceset/{name}/activation", osim.Vector(n, reach["guess"]))
        guess.setControl(f"/forceset/{name}", osim.Vector(n, reach["guess"]))
    solver.setGuess(guess)
    setup = time.process_time() - c0
    c0 = time.process_time()
    sol = study.solve()
    solve = time.process_time() - c0
    sol.unseal()
    return {"objective": sol.getObjective(), "iterations": sol.getNumIterations(),
            "success": sol.success(), "status": sol.getStatus(), "setup": setup, "solve": solve,
            "t": np.asarray(sol.getTimeMat()).tolist(),
            "state_names": list(sol.getStateNames()),
            "states": np.asarray(sol.getStatesTrajectoryMat()).tolist(),
            "control_names": list(sol.getControlNames()),
            "controls": np.asarray(sol.getControlsTrajectoryMat()).tolist()}


if __name__ == "__main__":
    import opensim as osim

    osim.Logger.removeFileSink()
    osim.Logger.setLevelString("error")
    request = json.load(sys.stdin)
    _write_model(osim, request["reach"], request["arm26"], request["model"])
    print(json.dumps({} if request["write_only"] else _solve(osim, request)))
