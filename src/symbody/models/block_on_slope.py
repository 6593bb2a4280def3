"""A block sliding on a slope: a compliant contact with Coulomb friction.

The block is a particle of mass m at its contact point P on the plane through O tilted by θ
about N.y (the slope frame S: S.x down the slope, S.z out of it; z of N up).  Its
coordinates are s along S.x and h along S.z (h < 0: the contact is pressed in), its speeds
u_s = s', u_h = h'.  The slope pushes with a Hunt-Crossley force k δ^1.5 max(0, 1 + 3/2 c δ')
(δ = max(0, -h)) and friction μ F_n opposes the slip u_s: smooth (regularized by the
velocity scale ε, ``symbody.contact.friction``) or exact (Coulomb's law with stick as a
constraint, ``friction_mode="exact"``: an exact-friction engine fills the placeholder the
loads carry).

The initial state rests on the slope at its static penetration δ0 = (m g cos θ / k)^(2/3),
so the normal motion starts at equilibrium; sliding down at u_s > 0 the block accelerates at

    a = g (sin θ - μ cos θ)      (exact Coulomb friction; the smooth law's error is below
                                  μ g cos θ ε² / (2 u_s²))

when tan θ > μ, and stops when tan θ < μ.
"""

from __future__ import annotations

import math

import sympy as sm
from sympy.physics.mechanics import Particle
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from ..compat.sympy import TIME
from ..contact import Contact, Friction, Plane, Sphere
from ..scene import Box as BoxShape
from ..scene import Plane as PlaneShape
from ..scene import Scene, VisualizationFrame
from .base import Drawing, KaneSystem, Model, point_coordinates

__all__ = ["block_on_slope", "block_on_slope_system", "sliding_acceleration"]

t = TIME

DESCRIPTION = "block sliding down a slope: compliant contact, Coulomb friction (smooth or exact), 2 dof"
REFERENCES = ("The textbook result a = g (sin theta - mu cos theta) for a block sliding on an "
              "incline.  Defaults chosen here: m=1 kg, theta=30 deg, mu=0.3, k=1e6 N/m^1.5, c=1 s/m, "
              "eps=1e-3 m/s; starting at 0.5 m/s down the slope.")


def sliding_acceleration(g: float, theta: float, mu: float) -> float:
    """a = g (sin θ - μ cos θ): a block sliding down a slope θ with Coulomb friction μ."""
    return g * (math.sin(theta) - mu * math.cos(theta))


def block_on_slope_system(friction_mode: str = "smooth") -> tuple[KaneSystem, dict]:
    """The block's kinematics, contact and loads; returns (KaneSystem, extras)."""
    s, h = dynamicsymbols("s h")
    us, uh = dynamicsymbols("u_s u_h")
    m, g, theta, k, c, mu, eps = sm.symbols("m g theta k c mu epsilon")
    N = ReferenceFrame("N")
    S = ReferenceFrame("S")
    S.orient_axis(N, theta, N.y)
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", s * S.x + h * S.z)
    P.set_vel(N, us * S.x + uh * S.z)
    block = Particle("block", P, m)
    contact = Contact(Plane(O, S.z), Sphere(P, 0), stiffness=k, damping=c,
                      friction=Friction(mu, velocity_scale=eps), friction_mode=friction_mode,
                      name="slope")
    system = KaneSystem(frame=N, q_ind=[s, h], u_ind=[us, uh], kd_eqs=[s.diff(t) - us, h.diff(t) - uh],
                        bodies=[block], loads=contact.to_loads() + [(P, -m * g * N.z)])
    top = P.locatenew("top", 0.1 * S.z)
    foot = O.locatenew("foot", 3.0 * S.x)
    points = {"O": point_coordinates(O, O, N), "block": point_coordinates(P, O, N),
              "block_top": point_coordinates(top, O, N), "slope_end": point_coordinates(foot, O, N)}
    symbols = {"m": m, "g": g, "theta": theta, "k": k, "c": c, "mu": mu, "epsilon": eps}
    return system, {"q": (s, h), "u": (us, uh), "symbols": symbols, "points": points, "frames": (N, S),
                    "origin": O, "contact": contact, "kinetic": block.kinetic_energy(N),
                    "potential": m * g * P.pos_from(O).dot(N.z)}


def block_on_slope(friction_mode: str = "smooth", theta: float = math.radians(30.0),
                   mu: float = 0.3, speed: float = 0.5) -> Model:
    """The block on a slope of ``theta`` (rad) with friction ``mu``, starting at ``speed``
    (m/s) down the slope; ``friction_mode`` "smooth" or "exact" (see the module docstring)."""
    system, ex = block_on_slope_system(friction_mode)
    km, eom = system.form(name="block-on-slope")
    sy = ex["symbols"]
    s, h = ex["q"]
    us, uh = ex["u"]
    constants = {sy["m"]: 1.0, sy["g"]: 9.81, sy["theta"]: float(theta), sy["k"]: 1.0e6, sy["c"]: 1.0,
                 sy["mu"]: float(mu), sy["epsilon"]: 1.0e-3}
    if friction_mode == "exact":
        del constants[sy["epsilon"]]     # the smooth law's velocity scale: not in the exact law

    def initial_state(values: dict) -> dict:
        load = values[sy["m"]] * values[sy["g"]] * math.cos(values[sy["theta"]])
        return {s: 0.0, h: -(load / values[sy["k"]]) ** (1.0 / 1.5), us: float(speed), uh: 0.0}

    N, S = ex["frames"]
    drawing = Drawing(points=ex["points"], lines=[["O", "slope_end"], ["block", "block_top"]],
                      traces=("block",), view="2d", plane=(0, 2))
    scene = Scene(N, ex["origin"],
                  VisualizationFrame("block", S, "block_top", BoxShape(0.3, 0.2, 0.2, color="#4c72b0")),
                  VisualizationFrame("slope", S, "O", PlaneShape(6.0, 1.0, color="#999999")),
                  points=ex["points"], traces=("block",), up="z", ground=False, name="block-on-slope")
    kinetic = sm.sympify(ex["kinetic"]).xreplace(eom.kindiffdict)
    contact = eom.contacts[0]                 # q' replaced through the kinematics
    return Model.create(
        name="block-on-slope", description=DESCRIPTION, eom=eom, method=km, constants=constants,
        initial_state_rule=initial_state, t_span=(0.0, 2.0), drawing=drawing,
        outputs={"kinetic_energy": kinetic, "potential_energy": ex["potential"],
                 "normal_force": contact.normal_force},
        references=REFERENCES, scene=scene)
