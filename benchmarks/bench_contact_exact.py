"""Exact Coulomb friction against MuJoCo (issue 37): error against the closed form and CPU time.

Three scenes, each with a closed-form answer, in symbody's exact friction mode (tolerance
swept; DOP853, the default, and Radau with the exact Jacobian) and in MuJoCo (timestep swept; elliptic friction cone, RK4 and implicitfast
integrators where said), in turn in one session, CPU time (``time.process_time``) median
of ``--repeat`` runs after a warm-up, per simulated second:

- **sliding block**: a 1 kg block on a slope of 30 degrees with μ = 0.3 (steeper than its
  friction angle), from rest: s(T) = g (sin θ - μ cos θ) T² / 2 at T = 1 s; error
  |s - s_exact| / s_exact.  (MuJoCo: a box on a plane with the gravity tilted; settled on
  the plane first with the gravity normal to it; symbody: a point on a Hunt-Crossley
  contact at its static penetration.)
- **stuck block**: the same on a slope of 0.2 rad with μ = 0.3 (gentler): the distance
  it creeps in 10 s (exact: 0).
- **sphere**: a 1 kg sphere of radius 0.1 m launched at v0 = 2 m/s without spin, μ = 0.2:
  slides until t* = 2 v0 / (7 μ g), then rolls at 5 v0 / 7; errors |v(1 s) - 5 v0/7| /
  (5 v0/7) and |t* - t*_exact| / t*_exact (MuJoCo's t*: where the slip speed first falls
  below 1e-3 v0, interpolated; symbody's: its slip -> stick event).

::

    .venv/bin/python -W ignore benchmarks/bench_contact_exact.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the shared test systems

G, THETA, MU, MU_SPHERE, V0, R = 9.81, math.radians(30.0), 0.3, 0.2, 2.0, 0.1
#: symbody's integrators: the default (DOP853) and the implicit Radau with the exact Jacobian
METHODS = ("DOP853", "Radau")


# ------------------------------------------------------------------ symbody
def symbody_block():
    """The sliding block: a point on a slope (tests/systems/contact_systems.py), compiled."""
    import symbody as sb
    from systems.contact_systems import kane, point_on_slope

    return sb.compile(kane(point_on_slope())[0].to_eom())


def symbody_sphere():
    import sympy as sm
    import sympy.physics.mechanics as me

    import symbody as sb

    x, y, al, vx, vy, w = me.dynamicsymbols("x y alpha v_x v_y omega")
    m, g, r, k, c, mu = sm.symbols("m g r k c mu")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    B = N.orientnew("B", "Axis", (al, N.z))
    B.set_ang_vel(N, w * N.z)
    G_ = O.locatenew("G", x * N.x + y * N.y)
    G_.set_vel(N, vx * N.x + vy * N.y)
    ball = me.RigidBody("ball", G_, B, m, (me.inertia(B, 0, 0, 2 * m * r**2 / 5), G_))
    ground = sb.contact.Contact(sb.contact.Plane(O, N.y), sb.contact.Sphere(G_, r, frame=B), stiffness=k,
                                damping=c, friction=mu, friction_mode="exact", name="ground")
    km = sb.KanesMethod(N, [x, y, al], [vx, vy, w], kd_eqs=[x.diff() - vx, y.diff() - vy, al.diff() - w])
    km.kanes_equations([ball], ground.to_loads() + [(G_, -m * g * N.y)])
    return sb.compile(km.to_eom())


def run_symbody_block(model, theta, T, rtol, method=None):
    import symbody as sb

    k = 1e6
    p = {"m": 1.0, "g": G, "theta": theta, "k": k, "c": 1.0, "mu": MU}
    x0 = {"s": 0.0, "h": -(G * math.cos(theta) / k) ** (2 / 3), "u_s": 0.0, "u_h": 0.0}
    sol = sb.simulate(model, (0, T), x0, p, solver=sb.Solver(method=method, rtol=rtol, atol=rtol * 1e-3))
    return float(sol.q[-1, 0] - sol.q[0, 0])


def run_symbody_sphere(model, rtol, method=None):
    import symbody as sb

    k = 1e6
    p = {"m": 1.0, "g": G, "r": R, "k": k, "c": 1.0, "mu": MU_SPHERE}
    x0 = {"x": 0, "y": R - (G / k) ** (2 / 3), "alpha": 0, "v_x": V0, "v_y": 0, "omega": 0}
    sol = sb.simulate(model, (0, 1.0), x0, p, solver=sb.Solver(method=method, rtol=rtol, atol=rtol * 1e-3))
    stops = [e.t for e in sol.events if e.name.endswith("slip -> stick")]
    return float(sol.u[-1, 0]), (stops[0] if stops else math.nan)


# ------------------------------------------------------------------ MuJoCo
BLOCK_XML = """
<mujoco>
  <option timestep="{dt}" gravity="0 0 -9.81" cone="elliptic" integrator="{integrator}"/>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1" friction="{mu} 0 0"/>
    <body name="block" pos="0 0 0.05">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="1" friction="{mu} 0 0"/>
    </body>
  </worldbody>
</mujoco>
"""

SPHERE_XML = """
<mujoco>
  <option timestep="{dt}" gravity="0 0 -9.81" cone="elliptic" integrator="{integrator}"/>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1" friction="{mu} 0 0"/>
    <body name="ball" pos="0 0 {r}">
      <freejoint/>
      <geom type="sphere" size="{r}" mass="1" friction="{mu} 0 0"/>
    </body>
  </worldbody>
</mujoco>
"""


def mujoco_block(dt, integrator):
    """(model, data at rest on the plane, settled with the gravity normal to it)."""
    import mujoco

    model = mujoco.MjModel.from_xml_string(BLOCK_XML.format(dt=dt, mu=MU, integrator=integrator))
    data = mujoco.MjData(model)
    for _ in range(int(round(0.5 / dt))):
        mujoco.mj_step(model, data)
    data.qvel[:] = 0.0
    data.time = 0.0
    return model, data


def run_mujoco_block(model, data0, theta, T):
    import mujoco

    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:] = data0.qpos, data0.qvel
    model.opt.gravity[:] = (G * math.sin(theta), 0.0, -G * math.cos(theta))
    x0 = float(data.qpos[0])
    for _ in range(int(round(T / model.opt.timestep))):
        mujoco.mj_step(model, data)
    return float(data.qpos[0] - x0)


def mujoco_sphere(dt, integrator):
    """(model, data at rest on the plane, settled)."""
    import mujoco

    model = mujoco.MjModel.from_xml_string(SPHERE_XML.format(dt=dt, mu=MU_SPHERE, r=R,
                                                             integrator=integrator))
    data = mujoco.MjData(model)
    for _ in range(int(round(0.3 / dt))):
        mujoco.mj_step(model, data)
    data.qvel[:] = 0.0
    data.time = 0.0
    return model, data


def run_mujoco_sphere(model, data0):
    """(v_x at 1 s, t*: where the slip speed first falls below 1e-3 v0, interpolated)."""
    import mujoco

    data = mujoco.MjData(model)
    data.qpos[:] = data0.qpos
    data.qvel[:] = 0.0
    data.qvel[0] = V0
    dt = model.opt.timestep
    t_star, prev = math.nan, None
    for i in range(int(round(1.0 / dt))):
        mujoco.mj_step(model, data)
        slip = abs(data.qvel[0] - R * data.qvel[4])     # v_x - r ω_y at the bottom point
        if math.isnan(t_star) and slip < 1e-3 * V0:
            t_star = (i + 1) * dt if prev is None else i * dt + dt * (prev - 1e-3 * V0) / (prev - slip)
        prev = slip
    return float(data.qvel[0]), t_star


# ------------------------------------------------------------------ the runs
def cpu(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    import mujoco

    block, sphere = symbody_block(), symbody_sphere()
    a = G * (math.sin(THETA) - MU * math.cos(THETA))
    s_exact = 0.5 * a
    v_roll, t_star = 5 * V0 / 7, 2 * V0 / (7 * MU_SPHERE * G)
    tolerances = (1e-4, 1e-6, 1e-8, 1e-10)
    steps = (1e-2, 3e-3, 1e-3, 3e-4, 1e-4)
    integrators = ("RK4", "implicitfast")
    print(f"mujoco {mujoco.__version__}")
    print("\n## sliding block: 30 deg, mu 0.3, 1 s (error |s - s_exact| / s_exact; CPU ms per simulated s)")
    print("| tool | setting | error | CPU ms / s |\n|---|---|---|---|")
    for method in METHODS:
        for rtol in tolerances:
            got = run_symbody_block(block, THETA, 1.0, rtol, method)
            ms = 1e3 * cpu(lambda rtol=rtol, method=method: run_symbody_block(block, THETA, 1.0, rtol, method),
                           args.repeat)
            print(f"| symbody exact {method} | rtol {rtol:g} | {abs(got - s_exact) / s_exact:.1e} | {ms:.2f} |")
    for integrator in integrators:
        for dt in steps:
            m, d = mujoco_block(dt, integrator)
            got_m = run_mujoco_block(m, d, THETA, 1.0)
            ms_m = 1e3 * cpu(lambda m=m, d=d: run_mujoco_block(m, d, THETA, 1.0), args.repeat)
            print(f"| MuJoCo {integrator} | dt {dt:g} | {abs(got_m - s_exact) / s_exact:.1e} | {ms_m:.2f} |")
    print("\n## stuck block: 0.2 rad, mu 0.3, 10 s (distance crept, m; CPU ms per simulated s)")
    print("| tool | setting | creep (m) | CPU ms / s |\n|---|---|---|---|")
    for method in METHODS:
        for rtol in (1e-6, 1e-10):
            got = run_symbody_block(block, 0.2, 10.0, rtol, method)
            ms = 1e3 * cpu(lambda rtol=rtol, method=method: run_symbody_block(block, 0.2, 10.0, rtol, method),
                           args.repeat) / 10
            print(f"| symbody exact {method} | rtol {rtol:g} | {abs(got):.1e} | {ms:.2f} |")
    for integrator in integrators:
        for dt in (1e-2, 1e-3, 1e-4):
            m, d = mujoco_block(dt, integrator)
            got_m = run_mujoco_block(m, d, 0.2, 10.0)
            ms_m = 1e3 * cpu(lambda m=m, d=d: run_mujoco_block(m, d, 0.2, 10.0), max(1, args.repeat // 2)) / 10
            print(f"| MuJoCo {integrator} | dt {dt:g} | {abs(got_m):.1e} | {ms_m:.2f} |")
    print(f"\n## sphere: v0 {V0} m/s, mu {MU_SPHERE}: rolls from t* = {t_star:.6f} s at 5 v0/7 "
          "(errors relative; CPU ms per simulated s)")
    print("| tool | setting | v(1 s) error | t* error | CPU ms / s |\n|---|---|---|---|---|")
    for method in METHODS:
        for rtol in tolerances:
            v, ts = run_symbody_sphere(sphere, rtol, method)
            ms = 1e3 * cpu(lambda rtol=rtol, method=method: run_symbody_sphere(sphere, rtol, method), args.repeat)
            print(f"| symbody exact {method} | rtol {rtol:g} | {abs(v - v_roll) / v_roll:.1e} | "
                  f"{abs(ts - t_star) / t_star:.1e} | {ms:.2f} |")
    for integrator in integrators:
        for dt in steps:
            m, d = mujoco_sphere(dt, integrator)
            v, ts = run_mujoco_sphere(m, d)
            ms = 1e3 * cpu(lambda m=m, d=d: run_mujoco_sphere(m, d), args.repeat)
            print(f"| MuJoCo {integrator} | dt {dt:g} | {abs(v - v_roll) / v_roll:.1e} | "
                  f"{abs(ts - t_star) / t_star:.1e} | {ms:.2f} |")


if __name__ == "__main__":
    main()
