"""Solo12 dropped from 0.4 m, standing under a PD controller (issue 37): symbody vs MuJoCo.

The scene of tests/systems/quadruped.py (Hunt–Crossley feet, smooth friction, the PD
controller in the equations) and MuJoCo's version (tests/systems/mujoco_scenes.py, its soft
contact at its defaults, Euler at its default 1 ms step), 2 s each.  Printed: the normal
forces' sum against m g, the base's largest speed, the standing height and each foot's
force for both tools; the CPU time (time.process_time) per simulated second of symbody's
default ``simulate`` at rtol 1e-3 (without outputs; and with the foot forces as outputs) (converged to 1e-4 m: tests/robots/test_quadruped.py)
and of MuJoCo at 1 ms, medians of ``--repeats`` runs, the two tools interleaved.  The
machine is shared: read the ratio.  ``--rtol/--atol/--method`` choose symbody's run;
``--error`` also prints each tool's error against its own converged reference (the base's
position on the 10 ms grid: symbody's Radau at rtol 1e-9, MuJoCo at a 0.01 ms step).

    python benchmarks/bench_quadruped_stand.py [--repeats 5] [--rtol 1e-3] [--method DOP853] [--error]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests"))  # the shared scene builders

G = 9.81
SPAN = 2.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--method", default=None, help="symbody's method (default: its automatic choice)")
    ap.add_argument("--error", action="store_true", help="errors against converged references")
    args = ap.parse_args(argv)

    import mujoco

    import symbody as sb
    from systems.mujoco_scenes import normal_forces, run, solo12_scene
    from systems.quadruped import (
        FEET,
        FOOT_RADIUS,
        HEIGHT,
        KD,
        KP,
        SOLO12_POSE,
        solo12_drop,
        solo12_urdf,
    )

    t0 = time.process_time()
    scene = solo12_drop()
    outputs = {r.name: r.normal_force for r in scene.robot.eom.contacts}
    times = np.linspace(0.0, SPAN, 201)
    solver = sb.Solver(rtol=args.rtol, atol=args.atol,
                       **({} if args.method is None else {"method": args.method}))

    def ours(outputs=None):
        start = time.process_time()
        sol = sb.simulate(scene.model, (0.0, SPAN), scene.x0, scene.p, specifieds=scene.r,
                          t_eval=times, outputs=outputs, solver=solver)
        return time.process_time() - start, sol

    def theirs(timestep=1e-3, samples=(SPAN,)):
        model, data = solo12_scene(mujoco, solo12_urdf(), pose=SOLO12_POSE, kp=KP, kd=KD,
                                   foot_radius=FOOT_RADIUS, height=HEIGHT, timestep=timestep)
        start = time.process_time()
        rows = run(mujoco, model, data, samples)
        return time.process_time() - start, (model, data, rows)

    _, sol = ours(outputs)                           # (kernels built, caches warm)
    build = time.process_time() - t0
    cpu_s, cpu_o, cpu_m = [], [], []
    for _ in range(args.repeats):                    # interleaved
        cpu_s.append(ours()[0])
        c, sol = ours(outputs)                       # the foot forces as outputs
        cpu_o.append(c)
        c, (model, data, _) = theirs()
        cpu_m.append(c)
    assert sol.status == 0, sol.message
    names = list(scene.robot.joint_names)
    ours_f = {foot: float(sol.outputs[foot][-1]) for foot in FEET}
    theirs_f = normal_forces(mujoco, model, data)
    weight = scene.mass * G
    print(f"symbody build + first run: {build:.1f} s CPU; message: {sol.message}")
    print(f"m g = {weight:.4f} N")
    print("| | symbody | MuJoCo (1 ms) |")
    print("|---|---|---|")
    total_m = sum(theirs_f.values())
    print(f"| sum of normal forces / m g - 1 | {sum(ours_f.values()) / weight - 1:.2e} | "
          f"{total_m / weight - 1:.2e} |")
    for foot in FEET:
        print(f"| {foot} normal force (N) | {ours_f[foot]:.4f} | {theirs_f[foot.replace('_FOOT', '_foot')]:.4f} |")
    print(f"| base height at 2 s (m) | {sol.q[-1][names.index('base.z')]:.5f} | {data.qpos[2]:.5f} |")
    print(f"| largest base speed at 2 s (m/s, rad/s) | {np.abs(sol.u[-1][:6]).max():.1e} | "
          f"{np.abs(data.qvel[:6]).max():.1e} |")
    s, m = statistics.median(cpu_s), statistics.median(cpu_m)
    print(f"| CPU per simulated second (ms) | {s / SPAN * 1e3:.1f} | {m / SPAN * 1e3:.1f} |")
    print(f"symbody / MuJoCo CPU: {s / m:.2f} (median of {args.repeats}, interleaved); symbody with "
          f"the four normal forces as outputs: {statistics.median(cpu_o) / SPAN * 1e3:.1f} ms per "
          "simulated second")
    print(f"symbody: rtol {args.rtol:g}, atol {args.atol:g}, method {args.method or 'automatic'}, "
          f"{sol.nsteps} steps")
    if args.error:
        grid = times
        ref = sb.simulate(scene.model, (0.0, SPAN), scene.x0, scene.p, specifieds=scene.r,
                          t_eval=grid, solver=sb.Solver(method="Radau", rtol=1e-9, atol=1e-11))
        err_s = np.abs(sol.q[:, :3] - ref.q[:, :3]).max()
        mj = theirs(1e-3, grid)[1][2][:, :3]
        mj_ref = theirs(1e-5, grid)[1][2][:, :3]
        print(f"largest error of the base position on the 10 ms grid vs a converged reference (m): "
              f"symbody {err_s:.2e}, MuJoCo (1 ms vs 0.01 ms) {np.abs(mj - mj_ref).max():.2e}")


if __name__ == "__main__":
    main()
