"""IFToMM benchmark A05: the stiff flyball governor (4 dof, spring-dampers instead of couplers).

A vertical shaft (1 x 0.01 x 0.01 m brick, density rho) turns about N.z through the angle
phi at its bottom O; a slider (0.1 m cube) moves along it, s = height of its centre, and
turns with it (frame S = N rot_z(phi)).  Two rods (1 x 0.01 x 0.01 m) hang from the pivots
(+-d, 0, l) at the shaft's top, beta1, beta2 below the horizontal
(R1 = S rot_y(beta1), rod along R1.x; R2 = S rot_y(-beta2), rod along -R2.x); point masses
M at the rods' ends.  The coupler rods of Watt's governor are replaced by spring-dampers
from the slider's sides (+-d, 0, s) to the rod midpoints, force K (L - L0) + C L' along
them.  Gravity -g N.z; u = q'; no driving torque.

Initially s = 0.5, beta = 30 deg (the springs at rest length 0.5: pivot, rod midpoint and
spring foot form an equilateral triangle), shaft rate 2 pi rad/s.  K = 8e5 N/m and
C = 4e4 N s/m make the equations stiff (eigenvalues near -1e4 1/s): the test problem for
implicit integrators.  The benchmark's output is s over 10 s.
"""

from __future__ import annotations

import math

import sympy as sm
from sympy.physics.mechanics import Particle, RigidBody, outer
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from ..compat.sympy import TIME
from ..scene import Scene, Segment, Sphere, VisualizationFrame
from .base import Drawing, KaneSystem, Model, point_coordinates, rotated_frame

__all__ = ["flyball_governor", "flyball_governor_system"]

t = TIME

DESCRIPTION = "IFToMM benchmark A05: stiff flyball governor, 4 dof, spring-damper couplers"
REFERENCES = ("IFToMM multibody benchmark library, problem A05 "
              "(http://lim.ii.udc.es/mbsbenchmark/dist/A05/A05_specification.xml); numbers as in "
              "the OpenSim port (RehabEngGroup/MBSbenchmarksInOpenSim, A05): shaft and rods "
              "1 x 0.01 x 0.01 m, slider 0.1 m cube, rho = 3000 kg/m^3, point masses 5 kg, "
              "K = 8e5 N/m, C = 4e4 N s/m, rest length 0.5 m, s = 0.5 m, alpha = 30 deg, "
              "shaft at 2 pi rad/s; 10 s; output s.")


def _brick(frame: ReferenceFrame, mass: sm.Expr, a: sm.Expr, b: sm.Expr, c: sm.Expr):
    """Inertia dyadic of a uniform brick with edges a, b, c along frame.x, .y, .z."""
    return (mass * (b ** 2 + c ** 2) / 12 * outer(frame.x, frame.x)
            + mass * (a ** 2 + c ** 2) / 12 * outer(frame.y, frame.y)
            + mass * (a ** 2 + b ** 2) / 12 * outer(frame.z, frame.z))


def flyball_governor_system() -> tuple[KaneSystem, dict]:
    """Kinematics, bodies and loads of the flyball governor; returns (KaneSystem, extras)."""
    phi, s, b1, b2 = dynamicsymbols("phi, s, beta1, beta2")
    u_phi, u_s, u_b1, u_b2 = dynamicsymbols("u_phi, u_s, u_beta1, u_beta2")
    q = [phi, s, b1, b2]
    u = [u_phi, u_s, u_b1, u_b2]
    rho, l, w, h, d, M, K, C, L0, g = sm.symbols("rho, l, w, h, d, M, K, C, L0, g")
    N = ReferenceFrame("N")
    S = rotated_frame("S", N, phi, "z")
    R1 = rotated_frame("R1", S, b1, "y")
    R2 = rotated_frame("R2", S, -b2, "y")
    qd_u = {qi.diff(t): ui for qi, ui in zip(q, u, strict=True)}
    O = Point("O")
    O.set_vel(N, 0)

    def point(name, base, offset, frame):
        P = Point(name)
        P.set_pos(base, offset)
        P.v2pt_theory(base, N, frame)
        return P

    shaft_c = point("shaft_centre", O, l / 2 * S.z, S)
    top1 = point("pivot1", O, d * S.x + l * S.z, S)
    top2 = point("pivot2", O, -d * S.x + l * S.z, S)
    mid1 = point("mid1", top1, l / 2 * R1.x, R1)
    mid2 = point("mid2", top2, -l / 2 * R2.x, R2)
    end1 = point("ball1", top1, l * R1.x, R1)
    end2 = point("ball2", top2, -l * R2.x, R2)
    slider = Point("slider")
    slider.set_pos(O, s * S.z)
    slider.set_vel(N, slider.pos_from(O).dt(N))
    foot1 = point("foot1", slider, d * S.x, S)
    foot2 = point("foot2", slider, -d * S.x, S)
    m_rod = rho * l * w * w
    m_sl = rho * h ** 3
    bodies = [RigidBody("shaft", shaft_c, S, m_rod, (_brick(S, m_rod, w, w, l), shaft_c)),
              RigidBody("slider", slider, S, m_sl, (_brick(S, m_sl, h, h, h), slider)),
              RigidBody("rod1", mid1, R1, m_rod, (_brick(R1, m_rod, l, w, w), mid1)),
              RigidBody("rod2", mid2, R2, m_rod, (_brick(R2, m_rod, l, w, w), mid2)),
              Particle("ball1", end1, M), Particle("ball2", end2, M)]
    loads = [(b.masscenter, -b.mass * g * N.z) for b in bodies]
    lengths = []
    for mid, foot in ((mid1, foot1), (mid2, foot2)):
        r = mid.pos_from(foot)
        length = sm.sqrt(r.dot(r))
        rate = ((mid.vel(N) - foot.vel(N)).dot(r) / length).xreplace(qd_u)
        tension = (K * (length - L0) + C * rate) / length     # pulls mid toward foot
        loads += [(mid, -tension * r), (foot, tension * r)]
        lengths.append(length)
    kd = [qi.diff(t) - ui for qi, ui in zip(q, u, strict=True)]
    system = KaneSystem(frame=N, q_ind=q, u_ind=u, kd_eqs=kd, bodies=bodies, loads=loads)
    names = {"O": O, "top": None, "pivot1": top1, "pivot2": top2, "ball1": end1, "ball2": end2,
             "mid1": mid1, "mid2": mid2, "slider": slider, "foot1": foot1, "foot2": foot2}
    points = {k: (point_coordinates(P, O, N) if P is not None else sm.Matrix([0, 0, l]))
              for k, P in names.items()}
    kinetic = sum(b.kinetic_energy(N) for b in bodies).xreplace(qd_u)
    potential = (sum(b.mass * g * b.masscenter.pos_from(O).dot(N.z) for b in bodies)
                 + sum(K / 2 * (length - L0) ** 2 for length in lengths))
    symbols = {"rho": rho, "l": l, "w": w, "h": h, "d": d, "M": M, "K": K, "C": C, "L0": L0, "g": g}
    return system, {"symbols": symbols, "q": q, "u": u, "points": points, "kinetic": kinetic,
                    "potential": potential, "lengths": lengths}


def flyball_governor() -> Model:
    """The A05 stiff flyball governor (see the module docstring)."""
    system, ex = flyball_governor_system()
    km, eom = system.form(name="flyball-governor")
    s = ex["symbols"]
    constants = {s["rho"]: 3000.0, s["l"]: 1.0, s["w"]: 0.01, s["h"]: 0.1, s["d"]: 0.05,
                 s["M"]: 5.0, s["K"]: 8e5, s["C"]: 4e4, s["L0"]: 0.5, s["g"]: 9.81}
    phi, sq, b1, b2 = ex["q"]
    beta0 = math.radians(30.0)
    state = {phi: 0.0, sq: 0.5, b1: beta0, b2: beta0, ex["u"][0]: 2.0 * math.pi,
             ex["u"][1]: 0.0, ex["u"][2]: 0.0, ex["u"][3]: 0.0}
    pts = ex["points"]
    drawing = Drawing(points=pts, lines=[["O", "top"], ["pivot1", "ball1"], ["pivot2", "ball2"],
                                         ["foot1", "mid1"], ["foot2", "mid2"]],
                      traces=("ball1",), view="3d", plane=(0, 2))
    scene = Scene(
        ReferenceFrame("N"), None,
        Segment("shaft", "O", "top", radius=0.01, color="#9aa0a6"),
        Segment("rod 1", "pivot1", "ball1", radius=0.01, color="#1f77b4"),
        Segment("rod 2", "pivot2", "ball2", radius=0.01, color="#1f77b4"),
        Segment("spring 1", "foot1", "mid1", radius=0.006, color="#2ca02c"),
        Segment("spring 2", "foot2", "mid2", radius=0.006, color="#2ca02c"),
        VisualizationFrame("slider", None, "slider", Sphere(0.05, color="#9467bd")),
        VisualizationFrame("ball 1", None, "ball1", Sphere(0.06, color="#d62728")),
        VisualizationFrame("ball 2", None, "ball2", Sphere(0.06, color="#d62728")),
        points=pts, traces=("ball1",), up="z", name="flyball-governor")
    kinetic, potential = ex["kinetic"], ex["potential"]
    outputs = {"kinetic_energy": kinetic, "potential_energy": potential, "s": sq,
               "spring1_length": ex["lengths"][0], "spring2_length": ex["lengths"][1]}
    return Model.create(
        name="flyball-governor", description=DESCRIPTION, eom=eom, method=km, constants=constants,
        initial_state=state, t_span=(0.0, 10.0), drawing=drawing,
        energy=kinetic + potential, outputs=outputs, references=REFERENCES, scene=scene)
