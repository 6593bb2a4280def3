"""A planar one-legged hopper on the ground: smooth contact with friction, for optimal control.

Raibert's hopper reduced to the plane of motion (N.x forward, N.y up): a body B (mass M,
central inertia I) with its hip H at the mass centre (x, y), pitched by θ; a leg L hinged at
the hip, turned by φ from the body (φ = 0: straight down along -B.y), with a prismatic joint
of length l, massless but for the foot P_f (a particle m_f) at its end,

    P_f = H - l L.y,        L = B rotated by φ about N.z.

Two actuators: the hip torque τ (on the leg, its opposite on the body) and the leg force F
along the leg (pushing the foot out, the body back).  The foot touches the ground y = 0
through a smooth Hunt-Crossley force (``symbody.contact.SmoothNormal``: C-infinity, so
collocation and IPOPT's exact Hessians go through touchdown and lift-off) with smooth
Coulomb friction μ, regularized by the velocity scale ε.

The defaults (M = 10 kg, I = 0.5 kg m², m_f = 1 kg, k = 1e5 N/m^1.5, c = 1 s/m, μ = 1,
ε = 0.05 m/s, smoothing scales 1e-3 m and 1e-2) make a hopper of human-leg size whose
static penetration is about 1 cm.  The initial state stands at rest with a 0.6 m leg, the
foot at its static penetration; it stays there with F = M g and τ = 0 (without them the
leg folds): give the inputs in ``simulate(..., specifieds=...)`` or optimize them
(:func:`symbody.optimize.examples.hopper_hop`: a hop to an apex).
"""

from __future__ import annotations

import sympy as sm
from sympy.physics.mechanics import Particle, RigidBody, inertia
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from ..compat.sympy import TIME
from ..contact import Contact, Friction, Plane, SmoothNormal, Sphere
from ..scene import Scene, Segment, VisualizationFrame
from ..scene import Sphere as SphereShape
from .base import Drawing, KaneSystem, Model, point_coordinates

__all__ = ["planar_hopper", "planar_hopper_system"]

t = TIME

DESCRIPTION = "planar one-legged hopper: body, telescopic leg, smooth ground contact, 5 dof"
REFERENCES = ("M. H. Raibert, Legged Robots That Balance (MIT Press, 1986): the one-legged hopper. "
              "Numbers chosen here: M=10 kg, I=0.5 kg m^2, m_f=1 kg, k=1e5 N/m^1.5, c=1 s/m, mu=1, "
              "friction velocity scale 0.05 m/s.")

#: the default numbers (module docstring)
CONSTANTS = {"M": 10.0, "I": 0.5, "m_f": 1.0, "g": 9.81, "k": 1.0e5, "c": 1.0, "mu": 1.0}
#: the smooth contact's scales: the friction's velocity scale (m/s), the normal force's
#: depth (m) and damping-factor scales
VELOCITY_SCALE = 0.05
SMOOTHING = SmoothNormal(depth=1e-3, rate=1e-2)


def planar_hopper_system() -> tuple[KaneSystem, dict]:
    """The hopper's kinematics, contact and loads; returns (KaneSystem, extras)."""
    x, y, theta, phi, l = dynamicsymbols("x y theta phi l")
    ux, uy, uth, uph, ul = dynamicsymbols("u_x u_y u_theta u_phi u_l")
    tau, F = dynamicsymbols("tau F")
    M, I, mf, g, k, c, mu = sm.symbols("M I m_f g k c mu")
    N = ReferenceFrame("N")
    B = N.orientnew("B", "Axis", (theta, N.z))
    L = B.orientnew("L", "Axis", (phi, N.z))
    B.set_ang_vel(N, uth * N.z)
    L.set_ang_vel(B, uph * N.z)
    O = Point("O")
    O.set_vel(N, 0)
    H = O.locatenew("H", x * N.x + y * N.y)
    H.set_vel(N, ux * N.x + uy * N.y)
    Pf = H.locatenew("P_f", -l * L.y)
    Pf.set_vel(L, -ul * L.y)
    Pf.v1pt_theory(H, N, L)
    body = RigidBody("body", H, B, M, (inertia(B, 0, 0, I), H))
    foot = Particle("foot", Pf, mf)
    contact = Contact(Plane(O, N.y), Sphere(Pf, 0), stiffness=k, exponent=1.5, damping=c,
                      friction=Friction(mu, velocity_scale=VELOCITY_SCALE), smoothing=SMOOTHING,
                      name="foot")
    loads = contact.to_loads() + [(H, -M * g * N.y), (Pf, -mf * g * N.y), (B, -tau * N.z),
                                  (L, tau * N.z), (Pf, -F * L.y), (H, F * L.y)]
    q, u = [x, y, theta, phi, l], [ux, uy, uth, uph, ul]
    system = KaneSystem(frame=N, q_ind=q, u_ind=u, kd_eqs=[qi.diff(t) - ui for qi, ui in zip(q, u)],
                        bodies=[body, foot], loads=loads)
    nose = H.locatenew("nose", 0.2 * B.x)
    tail = H.locatenew("tail", -0.2 * B.x)
    points = {name: point_coordinates(P, O, N) for name, P in
              (("hip", H), ("foot", Pf), ("nose", nose), ("tail", tail))}
    symbols = {str(s): s for s in (M, I, mf, g, k, c, mu)}
    kinetic = body.kinetic_energy(N) + foot.kinetic_energy(N)
    potential = g * (M * H.pos_from(O) + mf * Pf.pos_from(O)).dot(N.y)
    return system, {"q": tuple(q), "u": tuple(u), "inputs": (tau, F), "symbols": symbols,
                    "points": points, "frames": (N, B, L), "origin": O, "contact": contact,
                    "kinetic": kinetic, "potential": potential}


def planar_hopper(leg: float = 0.6) -> Model:
    """The hopper standing at rest on a leg of length ``leg`` (m), the foot at its static
    penetration; τ and F are specified inputs (module docstring)."""
    system, ex = planar_hopper_system()
    km, eom = system.form(name="planar-hopper")
    sy = ex["symbols"]
    x, y, theta, phi, l = ex["q"]
    constants = {sy[name]: value for name, value in CONSTANTS.items()}

    def initial_state(values: dict) -> dict:
        weight = (values[sy["M"]] + values[sy["m_f"]]) * values[sy["g"]]
        depth = (weight / values[sy["k"]]) ** (1.0 / 1.5)
        state = {s: 0.0 for s in ex["q"] + ex["u"]}
        state.update({y: float(leg) - depth, l: float(leg)})
        return state

    drawing = Drawing(points=ex["points"], lines=[["tail", "hip", "nose"], ["hip", "foot"]],
                      traces=("hip", "foot"), view="2d")
    N, B, _ = ex["frames"]
    scene = Scene(N, ex["origin"],
                  Segment("body", "tail", "nose", radius=0.06, color="#4c72b0"),
                  Segment("leg", "hip", "foot", radius=0.02, color="#55a868"),
                  VisualizationFrame("foot", None, "foot", SphereShape(0.03, color="#333333")),
                  points=ex["points"], traces=("hip", "foot"), up="y", ground=True,
                  name="planar-hopper")
    kinetic = sm.sympify(ex["kinetic"]).xreplace(eom.kindiffdict)
    contact = ex["contact"]
    return Model.create(
        name="planar-hopper", description=DESCRIPTION, eom=eom, method=km, constants=constants,
        initial_state_rule=initial_state, t_span=(0.0, 1.0), drawing=drawing,
        outputs={"kinetic_energy": kinetic, "potential_energy": ex["potential"],
                 "foot_force": contact.normal_force},
        references=REFERENCES, scene=scene)
