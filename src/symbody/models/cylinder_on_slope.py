"""A cylinder rolling down a slope on its two rims: compliant contact with smooth friction.

A solid cylinder (mass m, radius R, half length b = 0.05 m) lies across a slope tilted by θ about
N.y (the slope frame S: S.x down the slope, S.z out of it), its axis along N.y.  Its centre
is at s along S.x and h along S.z, it turns by φ about N.y (speeds u_s, u_h, ω).  The slope
touches it at the deepest point of each rim (``symbody.contact.Cylinder``), each pushing
with a Hunt-Crossley force and smooth Coulomb friction μ F_n against the slip there,
u_s + R ω (regularized by the velocity scale ε).

Rolling without slipping, the centre accelerates at a = g sin θ / (1 + I/(m R²)) = 2/3 g sin θ
(I = m R²/2) when μ >= tan θ / 3.  The smooth friction law carries the needed force
m g sin θ / 3 at a small creep speed (about ε f / sqrt(1 - f²), f = tan θ / (3 μ)), which
settles within a few ε / a of the start and then stays constant: the centre still
accelerates at 2/3 g sin θ.
"""

from __future__ import annotations

import math

import sympy as sm
from sympy.physics.mechanics import RigidBody, inertia
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from ..compat.sympy import TIME
from ..contact import Contact, Cylinder, Friction, Plane
from ..scene import Cylinder as CylinderShape
from ..scene import Scene, VisualizationFrame
from .base import Drawing, KaneSystem, Model, point_coordinates

__all__ = ["cylinder_on_slope", "cylinder_on_slope_system", "rolling_acceleration"]

t = TIME

DESCRIPTION = "cylinder rolling down a slope on its rims: compliant contact, smooth friction, 3 dof"
REFERENCES = ("Rolling without slipping down an incline: a = g sin(theta) / (1 + I/(m R^2)).  "
              "Defaults chosen here: m=1 kg, R=0.1 m, b=0.05 m, theta=20 deg, mu=0.5, "
              "k=1e6 N/m^1.5 per rim, c=1 s/m, eps=1e-3 m/s; starting at rest.")


def rolling_acceleration(g: float, theta: float) -> float:
    """a = 2/3 g sin θ: a solid cylinder rolling without slipping down a slope θ."""
    return 2.0 / 3.0 * g * math.sin(theta)


def cylinder_on_slope_system() -> tuple[KaneSystem, dict]:
    """The cylinder's kinematics, contacts and loads; returns (KaneSystem, extras)."""
    s, h, phi = dynamicsymbols("s h phi")
    us, uh, w = dynamicsymbols("u_s u_h omega")
    m, g, theta, R, k, c, mu, eps = sm.symbols("m g theta R k c mu epsilon")
    b = sm.Rational(1, 20)           # the half length (it does not enter the planar motion)
    N = ReferenceFrame("N")
    S = ReferenceFrame("S")
    S.orient_axis(N, theta, N.y)
    B = ReferenceFrame("B")
    B.orient_axis(S, phi, S.y)
    B.set_ang_vel(S, w * S.y)
    O = Point("O")
    O.set_vel(N, 0)
    C = O.locatenew("C", s * S.x + h * S.z)
    C.set_vel(N, us * S.x + uh * S.z)
    body = RigidBody("cylinder", C, B, m,
                     (inertia(B, m * (3 * R ** 2 + 4 * b ** 2) / 12, m * R ** 2 / 2,
                              m * (3 * R ** 2 + 4 * b ** 2) / 12), C))
    contact = Contact(Plane(O, S.z), Cylinder(body, R, b, axis="y"), stiffness=k, damping=c,
                      friction=Friction(mu, velocity_scale=eps), name="rim")
    system = KaneSystem(frame=N, q_ind=[s, h, phi], u_ind=[us, uh, w],
                        kd_eqs=[s.diff(t) - us, h.diff(t) - uh, phi.diff(t) - w], bodies=[body],
                        loads=contact.to_loads() + [(C, -m * g * N.z)])
    mark = C.locatenew("mark", R * B.z)
    foot = O.locatenew("foot", 3.0 * S.x)
    points = {"O": point_coordinates(O, O, N), "centre": point_coordinates(C, O, N),
              "mark": point_coordinates(mark, O, N), "slope_end": point_coordinates(foot, O, N)}
    symbols = {"m": m, "g": g, "theta": theta, "R": R, "b": b, "k": k, "c": c, "mu": mu, "epsilon": eps}
    return system, {"q": (s, h, phi), "u": (us, uh, w), "symbols": symbols, "points": points,
                    "frames": (N, B), "origin": O, "contact": contact, "kinetic": body.kinetic_energy(N),
                    "potential": m * g * C.pos_from(O).dot(N.z)}


def cylinder_on_slope(theta: float = math.radians(20.0), mu: float = 0.5) -> Model:
    """The cylinder on a slope of ``theta`` (rad) with friction ``mu``, released at rest
    (see the module docstring)."""
    system, ex = cylinder_on_slope_system()
    km, eom = system.form(name="cylinder-on-slope")
    sy = ex["symbols"]
    s, h, phi = ex["q"]
    us, uh, w = ex["u"]
    constants = {sy["m"]: 1.0, sy["g"]: 9.81, sy["theta"]: float(theta), sy["R"]: 0.1,
                 sy["k"]: 1.0e6, sy["c"]: 1.0, sy["mu"]: float(mu), sy["epsilon"]: 1.0e-3}

    def initial_state(values: dict) -> dict:
        per_rim = values[sy["m"]] * values[sy["g"]] * math.cos(values[sy["theta"]]) / 2.0
        depth = (per_rim / values[sy["k"]]) ** (1.0 / 1.5)
        return {s: 0.0, h: values[sy["R"]] - depth, phi: 0.0, us: 0.0, uh: 0.0, w: 0.0}

    N, B = ex["frames"]
    drawing = Drawing(points=ex["points"], lines=[["O", "slope_end"], ["centre", "mark"]],
                      traces=("centre",), view="2d", plane=(0, 2))
    scene = Scene(N, ex["origin"],
                  VisualizationFrame("cylinder", B, "centre",
                                     CylinderShape(2 * sy["b"], sy["R"], color="#55a868")),
                  points=ex["points"], lines=[["O", "slope_end"]], traces=("centre",), up="z",
                  ground=False, name="cylinder-on-slope")
    kinetic = sm.sympify(ex["kinetic"]).xreplace(eom.kindiffdict)
    return Model.create(
        name="cylinder-on-slope", description=DESCRIPTION, eom=eom, method=km, constants=constants,
        initial_state_rule=initial_state, t_span=(0.0, 1.0), drawing=drawing,
        outputs={"kinetic_energy": kinetic, "potential_energy": ex["potential"]},
        references=REFERENCES, scene=scene)
