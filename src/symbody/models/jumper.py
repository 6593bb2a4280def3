"""The jumper of "Learn Multibody Dynamics" (chapter "Energy and Power"), with its ground contact.

A planar two-segment leg: the foot P_f (a particle of mass m_f) moves vertically (height
q1 above the ground), the calf A (mass m_a, central inertia I_a, length l_a, mass centre
d_a from the foot) turns by q2 from N.x, the thigh B (m_b, I_b, l_b, d_b from the knee) by
q3 from the calf, and the upper body P_u (a particle m_u) sits at the hip, kept vertically
over the foot by the holonomic constraint

    l_a cos q2 + l_b cos(q2 + q3) = 0            (q2, u2 dependent; N.y up).

The ground pushes the foot with the book's force, a Hertzian spring with a linear damper,
here never pulling (``symbody.contact.Contact(..., damping_law="linear")``):

    F_f = max(0, k_f δ^(3/2) - c_f u1),   δ = max(0, -q1),

and the knee carries a passive spring-damper and the muscles' torque T_k (a specified
input): T = (k_k (q3 - π/2) + c_k u3 + T_k) N.z on the calf, its opposite on the thigh.

The defaults are the chapter's numbers and its "nonconservative simulation": dropped from
q1 = 0.2 m with the knee bent by 20 degrees, no knee spring or damping, k_f = 5e7,
c_f = 1e5; the landing dissipates energy (``trajectory.contacts["foot"].dissipated``).

``jumper(smoothing=SmoothNormal(...))`` is the jumper for optimal control: the book's
force has kinks (the maxima), so the foot touches the ground through the smooth
Hunt-Crossley force instead (:mod:`symbody.contact.smooth_normal`),

    F_f = k_f s(-q1, ε_δ)^(3/2) s(1 - 3/2 c_h u1, ε_v),

with the book's k_f and the damping c_h = 2 c_f / (3 m g) (m the jumper's whole mass) that
equals the book's linear damper c_f at the depth the standing jumper rests at, where
3/2 c_h k_f δ^(3/2) = 3/2 c_h m g = c_f.
"""

from __future__ import annotations

import math
from typing import Any

import sympy as sm
from sympy.physics.mechanics import Particle, RigidBody, outer
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from ..compat.sympy import TIME
from ..contact import Contact, Plane, Sphere
from ..scene import Scene, Segment, VisualizationFrame
from ..scene import Sphere as SphereShape
from .base import Drawing, KaneSystem, Model, point_coordinates, solve_dependent_coordinates

__all__ = ["jumper", "jumper_system"]

t = TIME

DESCRIPTION = "the jumper of Learn Multibody Dynamics (energy chapter): leg with ground contact, 2 dof"
REFERENCES = ("J. K. Moore, Learn Multibody Dynamics, chapter 'Energy and Power' "
              "(https://moorepants.github.io/learn-multibody-dynamics/energy.html): the model, its "
              "numbers (I_a=0.101, I_b=0.282, d_a=0.387, d_b=0.193, l_a=0.611, l_b=0.424, m_a=6.769, "
              "m_b=17.01, m_f=3, m_u=32.44, k_f=5e7, c_f=1e5) and the drop from q1=0.2 m, q3=20 deg.")


def jumper_system(smoothing: Any = None) -> tuple[KaneSystem, dict]:
    """The jumper's kinematics, constraint, contact and loads; returns (KaneSystem, extras).
    ``smoothing``: None (the book's force) or the smooth Hunt-Crossley force's scales (a
    :class:`~symbody.contact.SmoothNormal`; its damping is the constant ``c_h``)."""
    g = sm.symbols("g")
    mu, ma, mb, mf = sm.symbols("m_u m_a m_b m_f")
    Ia, Ib = sm.symbols("I_a I_b")
    kf, cf, kk, ck = sm.symbols("k_f c_f k_k c_k")
    ch = sm.Symbol("c_h")
    la, lb, da, db = sm.symbols("l_a l_b d_a d_b")
    q1, q2, q3 = dynamicsymbols("q1 q2 q3")
    u1, u2, u3 = dynamicsymbols("u1 u2 u3")
    Tk = dynamicsymbols("T_k")
    N = ReferenceFrame("N")
    A = ReferenceFrame("A")
    B = ReferenceFrame("B")
    A.orient_axis(N, q2, N.z)
    B.orient_axis(A, q3, N.z)
    A.set_ang_vel(N, u2 * N.z)
    B.set_ang_vel(A, u3 * N.z)
    O = Point("O")
    Pf = O.locatenew("P_f", q1 * N.y)
    Ao = Pf.locatenew("A_o", da * A.x)
    Pk = Pf.locatenew("P_k", la * A.x)
    Bo = Pk.locatenew("B_o", db * B.x)
    Pu = Pk.locatenew("P_u", lb * B.x)
    O.set_vel(N, 0)
    Pf.set_vel(N, u1 * N.y)
    Ao.v2pt_theory(Pf, N, A)
    Pk.v2pt_theory(Pf, N, A)
    Bo.v2pt_theory(Pk, N, B)
    Pu.v2pt_theory(Pk, N, B)
    holonomic = Pu.pos_from(O).dot(N.x)
    qd = {q1.diff(t): u1, q2.diff(t): u2, q3.diff(t): u3}
    velocity = holonomic.diff(t).xreplace(qd)
    foot = Particle("foot", Pf, mf)
    upper = Particle("upper_body", Pu, mu)
    calf = RigidBody("calf", Ao, A, ma, (Ia * outer(N.z, N.z), Ao))
    thigh = RigidBody("thigh", Bo, B, mb, (Ib * outer(N.z, N.z), Bo))
    if smoothing is None:
        contact = Contact(Plane(O, N.y), Sphere(Pf, 0), stiffness=kf, damping=cf,
                          damping_law="linear", name="foot")
    else:
        contact = Contact(Plane(O, N.y), Sphere(Pf, 0), stiffness=kf, damping=ch,
                          smoothing=smoothing, name="foot")
    knee = (kk * (q3 - sm.pi / 2) + ck * u3 + Tk) * N.z
    loads = contact.to_loads() + [(Pf, -mf * g * N.y), (Ao, -ma * g * N.y), (Bo, -mb * g * N.y),
                                  (Pu, -mu * g * N.y), (A, knee), (B, -knee)]
    system = KaneSystem(frame=N, q_ind=[q1, q3], u_ind=[u1, u3],
                        kd_eqs=[q1.diff(t) - u1, q2.diff(t) - u2, q3.diff(t) - u3],
                        bodies=[foot, calf, thigh, upper], loads=loads, q_dep=[q2],
                        configuration_constraints=[holonomic], u_dep=[u2], velocity_constraints=[velocity])
    points = {name: point_coordinates(P, O, N) for name, P in
              (("foot", Pf), ("knee", Pk), ("hip", Pu), ("calf_centre", Ao), ("thigh_centre", Bo))}
    symbols = {str(s): s for s in (g, mu, ma, mb, mf, Ia, Ib, kf, cf if smoothing is None else ch,
                                   kk, ck, la, lb, da, db)}
    potential = (g * (mf * Pf.pos_from(O) + ma * Ao.pos_from(O) + mb * Bo.pos_from(O)
                      + mu * Pu.pos_from(O)).dot(N.y) + kk * (q3 - sm.pi / 2) ** 2 / 2)
    kinetic = sum(body.kinetic_energy(N) for body in (foot, calf, thigh, upper))
    return system, {"q": (q1, q2, q3), "u": (u1, u2, u3), "input": Tk, "symbols": symbols,
                    "points": points, "frames": (N, A, B), "origin": O, "contact": contact,
                    "holonomic": holonomic, "kinetic": kinetic, "potential": potential}


#: the chapter's numbers (its "nonconservative simulation": no knee spring or damping)
BOOK_CONSTANTS = {"I_a": 0.101, "I_b": 0.282, "c_f": 1e5, "c_k": 0.0, "d_a": 0.387, "d_b": 0.193,
                  "g": 9.81, "k_f": 5e7, "k_k": 0.0, "l_a": 0.611, "l_b": 0.424, "m_a": 6.769,
                  "m_b": 17.01, "m_f": 3.0, "m_u": 32.44}


def jumper(height: float = 0.2, knee: float = math.radians(20.0), smoothing: Any = None) -> Model:
    """The jumper dropped with its foot at ``height`` (m) and the knee bent by ``knee`` (rad),
    at rest; T_k is a specified input (give it in ``simulate(..., specifieds=...)``).
    ``smoothing``: None (the book's force) or the smooth force's scales (a
    :class:`~symbody.contact.SmoothNormal`, True for its defaults), for optimal control.
    See the module docstring."""
    system, ex = jumper_system(smoothing)
    km, eom = system.form(name="jumper")
    sy = ex["symbols"]
    q1, q2, q3 = ex["q"]
    u1, u2, u3 = ex["u"]
    book = dict(BOOK_CONSTANTS)
    if smoothing is not None:           # c_h = 2 c_f / (3 m g): the book's damping at rest
        weight = book["g"] * sum(book[m] for m in ("m_a", "m_b", "m_f", "m_u"))
        book["c_h"] = 2.0 * book.pop("c_f") / (3.0 * weight)
    constants = {sy[name]: value for name, value in book.items()}

    def initial_state(values: dict) -> dict:
        known = {**values, q1: float(height), q3: float(knee)}
        q2_value = solve_dependent_coordinates(sm.Matrix([ex["holonomic"]]), [q2], known,
                                               [math.radians(45.0)])[q2]
        return {q1: float(height), q2: q2_value, q3: float(knee), u1: 0.0, u3: 0.0}

    N, A, B = ex["frames"]
    drawing = Drawing(points=ex["points"], lines=[["foot", "knee", "hip"]], traces=("hip",), view="2d")
    scene = Scene(N, ex["origin"],
                  Segment("calf", "foot", "knee", radius=0.04, color="#4c72b0"),
                  Segment("thigh", "knee", "hip", radius=0.05, color="#55a868"),
                  VisualizationFrame("upper body", None, "hip", SphereShape(0.12, color="#dd8452")),
                  VisualizationFrame("foot", None, "foot", SphereShape(0.04, color="#333333")),
                  points=ex["points"], traces=("hip",), up="y", ground=True, name="jumper")
    kinetic = sm.sympify(ex["kinetic"]).xreplace(eom.kindiffdict)
    contact = eom.contacts[0]                 # q' replaced through the kinematics
    return Model.create(
        name="jumper", description=DESCRIPTION, eom=eom, method=km, constants=constants,
        initial_state_rule=initial_state, t_span=(0.0, 0.3), drawing=drawing,
        outputs={"kinetic_energy": kinetic, "potential_energy": ex["potential"],
                 "foot_force": contact.normal_force},
        references=REFERENCES, scene=scene)
