"""A ball bouncing on the ground: Hunt-Crossley contact with friction, in the vertical plane.

A ball of mass m and radius r (a solid sphere, I = 2/5 m r²) moves in the x-z plane of N
(z up; coordinates x, z of its centre and its pitch θ about N.y; speeds v_x, v_z, ω) above
the ground z = 0.  The ground pushes with a Hunt-Crossley force (``symbody.contact``)

    F_n = k δ^1.5 max(0, 1 + 3/2 c δ'),   δ = max(0, r - z),

and smooth Coulomb friction μ F_n against the slip of the ball's lowest point,
v_x - r ω, regularized by the velocity scale v_s.  The default c gives the first bounce
(dropped from z = 1 m, 4.4 m/s at touchdown) a coefficient of restitution of 0.8
(:func:`symbody.contact.damping_from_restitution`).  Launched at 1 m/s without spin, the
ball slips at each bounce until it rolls, at 5/7 of its forward speed once friction has
acted long enough.
"""

from __future__ import annotations

import math

import sympy as sm
from sympy.physics.mechanics import RigidBody, inertia
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from ..compat.sympy import TIME
from ..contact import Contact, Friction, Plane, Sphere, damping_from_restitution
from ..scene import Plane as PlaneShape
from ..scene import Scene, VisualizationFrame
from ..scene import Sphere as SphereShape
from .base import Drawing, KaneSystem, Model, point_coordinates

__all__ = ["ball_on_plane", "ball_on_plane_system"]

t = TIME

DESCRIPTION = "ball bouncing on the ground: Hunt-Crossley contact, smooth friction, 3 dof"
REFERENCES = ("Hunt & Crossley, Coefficient of restitution interpreted as damping in vibroimpact, "
              "J. Applied Mechanics 42(2), 1975 (the force law; Simbody's HuntCrossleyForce).  "
              "Defaults chosen here: m=1 kg, r=0.1 m, k=1e6 N/m^1.5, e=0.8 at 4.43 m/s, mu=0.5, "
              "v_s=1e-3 m/s; dropped from z=1 m at 1 m/s forward.")


def ball_on_plane_system() -> tuple[KaneSystem, dict]:
    """The ball's kinematics, contact and loads; returns (KaneSystem, extras)."""
    x, z, theta = dynamicsymbols("x z theta")
    vx, vz, w = dynamicsymbols("v_x v_z omega")
    m, g, r, k, c, mu, vs = sm.symbols("m g r k c mu v_s")
    N = ReferenceFrame("N")
    B = ReferenceFrame("B")
    B.orient_axis(N, theta, N.y)
    B.set_ang_vel(N, w * N.y)
    O = Point("O")
    O.set_vel(N, 0)
    C = O.locatenew("C", x * N.x + z * N.z)
    C.set_vel(N, vx * N.x + vz * N.z)
    ball = RigidBody("ball", C, B, m, (inertia(B, 1, 1, 1) * 2 * m * r ** 2 / 5, C))
    contact = Contact(Plane(O, N.z), Sphere(ball, r), stiffness=k, damping=c,
                      friction=Friction(mu, velocity_scale=vs), name="ground")
    system = KaneSystem(frame=N, q_ind=[x, z, theta], u_ind=[vx, vz, w],
                        kd_eqs=[x.diff(t) - vx, z.diff(t) - vz, theta.diff(t) - w], bodies=[ball],
                        loads=contact.to_loads() + [(C, -m * g * N.z)])
    top = C.locatenew("top", r * B.z)
    points = {"O": point_coordinates(O, O, N), "centre": point_coordinates(C, O, N),
              "mark": point_coordinates(top, O, N)}
    symbols = {"m": m, "g": g, "r": r, "k": k, "c": c, "mu": mu, "v_s": vs}
    return system, {"q": (x, z, theta), "u": (vx, vz, w), "symbols": symbols, "points": points,
                    "frames": (N, B), "origin": O, "ball": ball, "contact": contact,
                    "kinetic": ball.kinetic_energy(N), "potential": m * g * z}


def ball_on_plane(restitution: float = 0.8, height: float = 1.0) -> Model:
    """The bouncing ball dropped from ``height`` (m) with a Hunt-Crossley damping that gives
    its first bounce the coefficient ``restitution``; see the module docstring."""
    system, ex = ball_on_plane_system()
    km, eom = system.form(name="ball-on-plane")
    s = ex["symbols"]
    x, z, theta = ex["q"]
    vx, vz, w = ex["u"]
    g = 9.81
    impact_speed = math.sqrt(2.0 * g * (float(height) - 0.1))
    c = float(damping_from_restitution(restitution, impact_speed, "ground"))
    constants = {s["m"]: 1.0, s["g"]: g, s["r"]: 0.1, s["k"]: 1.0e6, s["c"]: c, s["mu"]: 0.5,
                 s["v_s"]: 1.0e-3}
    initial = {x: 0.0, z: float(height), theta: 0.0, vx: 1.0, vz: 0.0, w: 0.0}
    N, B = ex["frames"]
    drawing = Drawing(points=ex["points"], lines=[["centre", "mark"]], traces=("centre",), view="2d",
                      plane=(0, 2))
    scene = Scene(N, ex["origin"],
                  VisualizationFrame("ball", B, "centre", SphereShape(s["r"], color="#dd8452")),
                  VisualizationFrame("ground", None, "O", PlaneShape(4.0, 1.0, color="#999999")),
                  points=ex["points"], traces=("centre",), up="z", ground=False, name="ball-on-plane")
    kinetic = sm.sympify(ex["kinetic"]).xreplace(eom.kindiffdict)
    contact = eom.contacts[0]                 # q' replaced through the kinematics
    return Model.create(
        name="ball-on-plane", description=DESCRIPTION, eom=eom, method=km, constants=constants,
        initial_state=initial, t_span=(0.0, 3.0), drawing=drawing,
        outputs={"kinetic_energy": kinetic, "potential_energy": ex["potential"],
                 "normal_force": contact.normal_force, "gap": contact.gap},
        references=REFERENCES, scene=scene)
