"""The wrist model of opensim-models for kinematics only: load, path lengths, moment arms and
the mass matrix against OpenSim 4.6, and the cost of one state's lengths and moment arms.

``Models/WristModel/wrist.osim`` (Gonzalez, Buchanan, Delp 1997; its file states no licence,
so it is read from a bare git mirror of opensim-models, not copied into tests/data): 28
bodies, none with mass, 14 coordinates (4 of them dependent through CoordinateCouplerConstraints),
25 Schutte1993Muscle_Deprecated muscles (their paths built, their dynamics left out by name).
``load_opensim`` loads it for kinematics only (``KinematicsOnlyWarning``).  At random states
(independent coordinates uniform within their ranges, the dependent ones put on the couplers
through ``kinematic_equations.holonomic``): our lengths and moment arms (``computeMomentArm``:
coupled coordinates follow) against OpenSim's, OpenSim's coordinate values of our state
(the state map), and M = 0 against ``calcM``.  Time: CPU seconds per state of
``musculotendon_lengths`` + ``moment_arms`` (25 x 14) against OpenSim's ``getLength`` +
``computeMomentArm`` loop, interleaved, medians of repeats.

    PYTHONPATH=src python benchmarks/bench_opensim_wrist.py \\
        --repo /work/.mirror/opensim-org+opensim-models/repo [--states 20]
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import sympy as sm
from scipy.optimize import fsolve

FILE = "Models/WristModel/wrist.osim"


def on_couplers(model, q: np.ndarray) -> np.ndarray:
    """q with the dependent coordinates solved from f_h(q) = 0 (the independent ones kept)."""
    kin = model.kinematic_equations
    n_ind = len(model.q_ind)
    x = sm.symbols(f"x0:{len(model.coordinates)}")
    rows = kin.holonomic.xreplace(dict(zip(model.coordinates, x))).subs(kin.t, 0)
    f = sm.lambdify([x], list(rows), "numpy")
    dep = fsolve(lambda d: np.asarray(f(np.concatenate([q[:n_ind], d])), dtype=float),
                 q[n_ind:], xtol=1e-14)
    return np.concatenate([q[:n_ind], dep])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", help="bare git mirror of opensim-models")
    ap.add_argument("--file", default=FILE)
    ap.add_argument("--states", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    import opensim as osim
    from symbody.opensim import KinematicsOnlyError, KinematicsOnlyWarning, load_opensim

    osim.Logger.removeFileSink()
    osim.Logger.setLevelString("error")
    text = (subprocess.run(["git", "--git-dir", args.repo, "show", f"HEAD:{args.file}"],
                           capture_output=True, text=True, check=True).stdout
            if args.repo else Path(args.file).read_text())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "wrist.osim"
        path.write_text(text)
        c = time.process_time()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = load_opensim(path)
        load = time.process_time() - c
        kin = [str(w.message) for w in caught if w.category is KinematicsOnlyWarning]
        print(f"load_opensim {load:.2f} s CPU; {model!r}")
        print(f"kinematics_only {model.kinematics_only}, massless_bodies "
              f"{len(model.massless_bodies)}: {', '.join(model.massless_bodies)}")
        print(f"warning: {kin[0][:160]}...")
        print(f"left out: {len(model.left_out)} ({sorted({x.tag for x in model.left_out})})")
        try:
            _ = model.numeric_model
        except KinematicsOnlyError as err:
            print(f"numeric_model: KinematicsOnlyError: ...{str(err)[len(str(path)):][:90]}...")
        c = time.process_time()
        model.moment_arms(model.random_coordinates(0))      # builds the path functions
        print(f"first lengths and moment arms (path functions built): "
              f"{time.process_time() - c:.2f} s CPU", flush=True)

        om = osim.Model(str(path))
        s = om.initSystem()
        cs, forces = om.getCoordinateSet(), om.getForceSet()
        muscles = [osim.PathActuator.safeDownCast(forces.get(m)) for m in model.muscle_names]
        coords = [cs.get(n) for n in model.coordinate_names]
        m_count, n = len(muscles), len(coords)

        def opensim_paths(Q):
            qv = s.updQ()
            for i, v in enumerate(Q):
                qv.set(i, float(v))
            om.realizePosition(s)
            L = np.array([m.getLength(s) for m in muscles])
            A = np.array([[m.computeMomentArm(s, c) for c in coords] for m in muscles])
            return L, A

        rng = np.random.default_rng(1)
        err_L = err_A = err_q = err_M = 0.0
        nan = 0
        t_ours, t_osim = [], []
        for _ in range(args.states):
            q = on_couplers(model, model.random_coordinates(rng))
            Q = model.to_opensim_state(q)[0]
            L_os, A_os = opensim_paths(Q)
            err_q = max(err_q, max(abs(coords[i].getValue(s) - q[i]) for i in range(n)))
            L, A = model.musculotendon_lengths(q), model.moment_arms(q)
            nan += int(np.isnan(A).sum() + np.isnan(A_os).sum())
            err_L = max(err_L, np.abs(L - L_os).max())
            err_A = max(err_A, np.nanmax(np.abs(A - A_os)) / np.nanmax(np.abs(A_os)))
            om.realizeAcceleration(s)
            M = osim.Matrix()
            om.getMatterSubsystem().calcM(s, M)
            M_os = np.array([[M.get(i, j) for j in range(n)] for i in range(n)])
            err_M = max(err_M, np.abs(model.mass_matrix(q) - M_os).max())
            for _ in range(args.repeats):       # interleaved
                c = time.process_time()
                model.musculotendon_lengths(q)
                model.moment_arms(q)
                t_ours.append(time.process_time() - c)
                c = time.process_time()
                opensim_paths(Q)
                t_osim.append(time.process_time() - c)
        print(f"{args.states} states: lengths max |error| {err_L:.1e} m, moment arms "
              f"{err_A:.1e} relative to the largest, state map {err_q:.1e}, M {err_M:.1e} "
              f"(NaN moment arms {nan})")
        ours, theirs = np.median(t_ours), np.median(t_osim)
        print(f"one state's {m_count} lengths + {m_count}x{n} moment arms: symbody "
              f"{ours * 1e3:.2f} ms, OpenSim {theirs * 1e3:.2f} ms CPU (median), "
              f"ratio {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
