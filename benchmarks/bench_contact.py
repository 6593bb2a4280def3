"""Contact: error against a converged reference versus CPU time, symbody vs MuJoCo (issue 37).

Three scenes, each run by both tools:

- ball: a solid ball (r = 0.05 m, 1 kg) dropped from 0.5 m onto the ground, bouncing for
  1 s (symbody: Hunt–Crossley k = 1e5 N/m^1.5, restitution 0.8 at the first impact's speed,
  smooth friction μ = 0.5; MuJoCo: its default soft contact).  Error: the largest |z(t) -
  z_ref(t)| on a 1 ms grid, each tool against its own converged run (the two contact models
  differ, so no common reference exists).
- block: a box (0.1 x 0.1 x 0.05 m half extents, 1 kg; symbody: k = 1e8 N/m^1.5 at its corners,
  c = 50 s/m) sliding at 1 m/s on flat ground with
  μ = 0.5, until 0.5 s.  Error: |distance travelled - v²/(2 μ g)| (the exact answer, the same
  for both tools).
- solo12: Solo12 dropped from 0.4 m with a PD controller holding its standing pose
  (systems/quadruped.py, systems/mujoco_scenes.py), 2 s.  Error: the largest base-position
  error on a 10 ms grid against each tool's own converged run.

symbody runs ``simulate`` with its default method (it switches to the compiled Radau where
the contact makes the problem stiff) at rtol 1e-2 ... 1e-8 (atol 1e-2 rtol); MuJoCo its
default Euler integrator with the timestep swept from 2 ms down.  CPU time
(time.process_time) of the runs only (compilation reported separately), median of
``--repeats`` with the two tools interleaved.  The machine is shared: read ratios.

    python benchmarks/bench_contact.py [--repeats 3] [--plot benchmarks/contact_speed.png]
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

RTOLS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)
STEPS = (2e-3, 1e-3, 5e-4, 2e-4, 1e-4, 5e-5, 2e-5)
G = 9.81


# ----------------------------------------------------------------------------- symbody scenes
def symbody_ball():
    import symbody as sb
    from systems.contact_systems import kane, spinning_ball

    s = spinning_ball(friction=0.5, damping=None)
    km, _ = kane(s)
    model = sb.compile(km.to_eom())
    v = np.sqrt(2 * G * 0.45)
    c = float(sb.contact.damping_from_restitution(0.8, v))
    p = {"m": 1.0, "g": G, "r": 0.05, "k": 1e5, "c": c}
    x0 = np.zeros(12)
    x0[2] = 0.5
    x0[6] = 0.3                       # a little sideways speed: friction at the impacts
    times = np.linspace(0.0, 1.0, 1001)

    def error(sol, ref):
        return float(np.abs(sol[:, 2] - ref[:, 2]).max())

    return model, x0, p, None, times, (lambda sol: sol.q), error


def symbody_block():
    import symbody as sb
    from systems.contact_systems import box_on_slope, kane

    s = box_on_slope(friction=0.5, theta=0)
    km, _ = kane(s)
    model = sb.compile(km.to_eom())
    m, k = 1.0, 1e8
    h = 0.05
    sink = (m * G / 4 / k) ** (2 / 3)             # each bottom corner's static penetration
    p = {"m": m, "g": G, "k": k, "c": 50.0, "a": 0.1, "h": h}
    x0 = np.array([0.0, h - sink, 0.0, 1.0, 0.0, 0.0])
    times = np.array([0.0, 0.5])
    exact = 1.0 / (2 * 0.5 * G)

    def error(sol, _ref):
        return float(abs(sol[-1, 0] - sol[0, 0] - exact))

    return model, x0, p, None, times, (lambda sol: sol.q), error


def symbody_solo12():
    from systems.quadruped import solo12_drop

    s = solo12_drop()
    times = np.linspace(0.0, 2.0, 201)

    def error(sol, ref):
        return float(np.abs(sol[:, :3] - ref[:, :3]).max())

    return s.model, s.x0, s.p, s.r, times, (lambda sol: sol.q), error


# ----------------------------------------------------------------------------- MuJoCo scenes
def mujoco_ball(dt):
    import mujoco

    from systems.mujoco_scenes import ball_scene

    model, data = ball_scene(mujoco, radius=0.05, mass=1.0, height=0.5, timestep=dt, friction=0.5)
    data.qvel[0] = 0.3
    return model, data, np.linspace(0.0, 1.0, 1001), (lambda m, d: d.qpos[:3].copy()), \
        (lambda sol, ref: float(np.abs(sol[:, 2] - ref[:, 2]).max()))


def mujoco_block(dt):
    import mujoco

    from systems.mujoco_scenes import block_scene

    model, data = block_scene(mujoco, half_extents=(0.1, 0.1, 0.05), mass=1.0, speed=1.0, timestep=dt,
                              friction=0.5)
    exact = 1.0 / (2 * 0.5 * G)
    return model, data, np.array([0.0, 0.5]), (lambda m, d: d.qpos[:3].copy()), \
        (lambda sol, _ref: float(abs(sol[-1, 0] - sol[0, 0] - exact)))


def mujoco_solo12(dt):
    import mujoco

    from systems.mujoco_scenes import solo12_scene
    from systems.quadruped import FOOT_RADIUS, HEIGHT, KD, KP, SOLO12_POSE, solo12_urdf

    model, data = solo12_scene(mujoco, solo12_urdf(), pose=SOLO12_POSE, kp=KP, kd=KD,
                               foot_radius=FOOT_RADIUS, height=HEIGHT, timestep=dt)
    return model, data, np.linspace(0.0, 2.0, 201), (lambda m, d: d.qpos[:3].copy()), \
        (lambda sol, ref: float(np.abs(sol - ref).max()))


SCENES = {"ball": (symbody_ball, mujoco_ball), "block": (symbody_block, mujoco_block),
          "solo12": (symbody_solo12, mujoco_solo12)}


# ----------------------------------------------------------------------------- runs
def run_symbody(scene, rtol, method=None):
    import symbody as sb

    model, x0, p, r, times, pick, _ = scene
    solver = sb.Solver(rtol=rtol, atol=rtol * 1e-2, method=method, dense_output=False)
    start = time.process_time()
    sol = sb.simulate(model, (times[0], times[-1]), x0, p, specifieds=r, t_eval=times, solver=solver)
    cpu = time.process_time() - start
    if sol.status != 0:
        raise RuntimeError(sol.message)
    return cpu, pick(sol)


def run_mujoco(make, dt):
    import mujoco

    from systems.mujoco_scenes import run

    model, data, times, record, _ = make(dt)
    start = time.process_time()
    out = run(mujoco, model, data, times, record)
    return time.process_time() - start, out


def bench(name, repeats):
    sym_make, mj_make = SCENES[name]
    t0 = time.process_time()
    scene = sym_make()
    model, x0, p, r, times, pick, error = scene
    run_symbody(scene, 1e-3)                               # (kernels built, caches warm)
    build = time.process_time() - t0
    ref = run_symbody(scene, 1e-11, method="Radau")[1]
    mj_ref = run_mujoco(mj_make, 2e-6 if name != "solo12" else 5e-6)[1]
    mj_error = mj_make(1e-3)[4]
    rows = []
    for rtol, dt in zip(RTOLS, STEPS):
        cpu_s, cpu_m = [], []
        for _ in range(repeats):                       # interleaved
            c, sol = run_symbody(scene, rtol)
            cpu_s.append(c)
            c, mj = run_mujoco(mj_make, dt)
            cpu_m.append(c)
        rows.append((rtol, statistics.median(cpu_s), error(sol, ref), dt, statistics.median(cpu_m),
                     mj_error(mj, mj_ref)))
    return build, rows


def default_method(name, repeats):
    """CPU of one run at rtol 1e-6 (atol 1e-8) with simulate's default method, with Radau
    chosen by hand, and with DOP853 (the default before the stiffness switch)."""
    scene = SCENES[name][0]()
    out = {}
    for method in (None, "Radau", "DOP853"):
        run_symbody(scene, 1e-6, method=method)
        out[method or "default"] = statistics.median(run_symbody(scene, 1e-6, method=method)[0]
                                                     for _ in range(repeats if method != "DOP853" else 1))
    return out


def crossing(points, target):
    """The least CPU time from which on every run (the runs sorted by CPU time) has error <=
    target: where the tool has converged to the target, not touched it by luck (None: never)."""
    best = None
    for cpu, err in sorted(points, reverse=True):
        if err > target:
            break
        best = cpu
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--scenes", nargs="*", default=list(SCENES))
    ap.add_argument("--plot", default=None, help="write the error-vs-CPU plot (PNG) here")
    ap.add_argument("--default-only", action="store_true", help="only the default-method table")
    ap.add_argument("--no-default", action="store_true", help="without the default-method table")
    args = ap.parse_args(argv)
    results = {}
    for name in [] if args.default_only else args.scenes:
        build, rows = bench(name, args.repeats)
        results[name] = rows
        span = {"ball": 1.0, "block": 0.5, "solo12": 2.0}[name]
        print(f"\n## {name} (symbody build + first run {build:.2f} s; CPU per run of {span:g} s)")
        print("| symbody rtol | CPU (ms) | error | MuJoCo dt | CPU (ms) | error |")
        print("|---|---|---|---|---|---|")
        for rtol, cs, es, dt, cm, em in rows:
            print(f"| {rtol:.0e} | {cs * 1e3:.2f} | {es:.2e} | {dt:.0e} | {cm * 1e3:.2f} | {em:.2e} |")
        for target in (1e-3, 1e-4, 1e-6):
            s = crossing([(c, e) for _, c, e, *_ in rows], target)
            m = crossing([(c, e) for *_, c, e in rows], target)
            ratio = f"{m / s:.1f}x" if s and m else "-"
            print(f"error <= {target:.0e}: symbody {s * 1e3 if s else float('nan'):.2f} ms, MuJoCo "
                  f"{m * 1e3 if m else float('nan'):.2f} ms (MuJoCo / symbody {ratio})")
    if not args.no_default:
        default_table(args.scenes, args.repeats)
    if args.plot:
        plot(results, args.plot)


def default_table(scenes, repeats):
    print("\n## the default method at rtol 1e-6 (CPU ms of one run)")
    print("| scene | default | Radau | DOP853 | default / Radau |")
    print("|---|---|---|---|---|")
    for name in scenes:
        c = default_method(name, repeats)
        print(f"| {name} | {c['default'] * 1e3:.1f} | {c['Radau'] * 1e3:.1f} | {c['DOP853'] * 1e3:.1f} | "
              f"{c['default'] / c['Radau']:.2f} |")


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(4 * len(results), 3.4))
    axes = np.atleast_1d(axes)
    for ax, (name, rows) in zip(axes, results.items()):
        ax.loglog([r[1] * 1e3 for r in rows], [max(r[2], 1e-16) for r in rows], "o-", label="symbody")
        ax.loglog([r[4] * 1e3 for r in rows], [max(r[5], 1e-16) for r in rows], "s--", label="MuJoCo")
        ax.set_title(name)
        ax.set_xlabel("CPU time (ms)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("error (m)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)


if __name__ == "__main__":
    main()
