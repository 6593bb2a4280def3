"""Musculoskeletal arm: an elbow driven by two DeGroote (2016) musculotendons.

Built the modern SymPy way -- a ``System`` with a ``PinJoint`` and two
``MusculotendonDeGroote2016`` actuators from ``sympy.physics.biomechanics`` --
and formed with ``system.form_eoms(eom_method=symbody.KanesMethod)``.

The upper arm hangs from the shoulder O along -N.y (fixed: it is the Newtonian
body), the elbow E is a distance l_C below O, and the forearm (mass m_D, length
l_D, a thin rod) turns about N.z through the elbow flexion angle q (q = 0: arm
straight down, q > 0: hand forward, +N.x); u = q'.  Gravity g acts along -N.y.

- Biceps: a straight line (``LinearPathway``) from C_m on the upper arm, 2 l_C/3
  above the elbow, to D_m on the forearm, l_D/3 from the elbow.
- Triceps: from the same two points around the back of the elbow, wrapping a
  circle of radius r about E (:class:`ElbowExtensorPathway`): its length is
  sqrt(d_1^2 - r^2) + sqrt(d_2^2 - r^2) + r (asin(r/d_1) + asin(r/d_2) + q),
  d_1 = |E C_m|, d_2 = |E D_m|, so its moment arm about the elbow is r.

Each muscle has rigid-tendon DeGroote 2016 musculotendon dynamics and first-order
DeGroote 2016 activation dynamics a' = f(a, e): the activations a_biceps(t),
a_triceps(t) are extra first-order states after q and u, the excitations
e_biceps(t), e_triceps(t) specified inputs (zero by default: a passive arm).

The geometry and numbers are those of SymPy's "Biomechanical Model Example"
(upper and lower arm of the steering-arm model; the lever and shoulder are left
out here): l_C = l_D = 0.3 m, m_D = 1.7 kg, r = 0.03 m, g = 9.81 m/s^2,
F_M_max = 500 N, l_M_opt = 0.18 m, l_T_slack = 0.165 m (biceps) and
0.195 m (triceps); initial elbow angle 75 deg at rest, activations 0.
"""

from __future__ import annotations

import math

import sympy as sm
import sympy.physics.biomechanics as bm
import sympy.physics.mechanics as me
from sympy.physics.vector import Point, Vector, dynamicsymbols

from ..compat.sympy import TIME
from ..formulation import KanesMethod
from .base import Drawing, Model, point_coordinates

__all__ = ["musculoskeletal_arm", "musculoskeletal_arm_system", "ElbowExtensorPathway"]

t = TIME

DESCRIPTION = "elbow with biceps and triceps (DeGroote 2016 muscles, activation dynamics), SymPy System"
REFERENCES = ("De Groote, Kinney, Rao, Fregly, Ann. Biomed. Eng. 44 (2016) 2922-2936; geometry and "
              "numbers from SymPy's 'Biomechanical Model Example' tutorial "
              "(docs.sympy.org, tutorials/physics/biomechanics).")


class ElbowExtensorPathway(me.PathwayBase):
    """A muscle path from ``origin`` (on the parent) to ``insertion`` (on the child) that
    wraps the back of a pin joint at ``elbow`` over a circle of radius ``radius``.

    ``parent_axis``/``child_axis``: unit vectors from the elbow towards the origin
    and the insertion; ``parent_back``/``child_back``: unit vectors normal to those
    (in the plane of the motion) on the side the muscle wraps.  ``angle``: the joint
    angle, zero when the two axes are opposite, increasing as the path lengthens.
    Valid for angle >= -(asin(r/d_1) + asin(r/d_2)) (the path touches the circle).
    """

    def __init__(self, origin: Point, insertion: Point, elbow: Point, *, parent_axis: Vector,
                 parent_back: Vector, child_axis: Vector, child_back: Vector, radius: sm.Expr | float,
                 angle: sm.Expr) -> None:
        super().__init__(origin, insertion)
        self.elbow, self.radius, self.angle = elbow, sm.sympify(radius), angle
        self.origin_distance = origin.pos_from(elbow).magnitude()
        self.insertion_distance = insertion.pos_from(elbow).magnitude()
        self.origin_wrap = sm.asin(self.radius / self.origin_distance)
        self.insertion_wrap = sm.asin(self.radius / self.insertion_distance)
        # where the straight segments touch the circle (relative to the elbow)
        self.origin_tangent = self.radius * (sm.sin(self.origin_wrap) * parent_axis
                                             + sm.cos(self.origin_wrap) * parent_back)
        self.insertion_tangent = self.radius * (sm.sin(self.insertion_wrap) * child_axis
                                                + sm.cos(self.insertion_wrap) * child_back)

    @property
    def length(self) -> sm.Expr:
        r, d1, d2 = self.radius, self.origin_distance, self.insertion_distance
        arc = r * (self.origin_wrap + self.insertion_wrap + self.angle)
        return sm.sqrt(d1**2 - r**2) + sm.sqrt(d2**2 - r**2) + arc

    @property
    def extension_velocity(self) -> sm.Expr:
        return self.radius * self.angle.diff(t)

    def to_loads(self, force: sm.Expr) -> list:
        """Loads of a force ``force`` along the path (positive pushes the ends apart):
        along the straight segments on the two attachments, their reaction on the elbow."""
        origin, insertion = self.attachments
        on_origin = force * (origin.pos_from(self.elbow) - self.origin_tangent).normalize()
        on_insertion = force * (insertion.pos_from(self.elbow) - self.insertion_tangent).normalize()
        return [me.Force(origin, on_origin), me.Force(insertion, on_insertion),
                me.Force(self.elbow, -(on_origin + on_insertion))]


def musculoskeletal_arm_system() -> tuple[me.System, dict]:
    """The SymPy ``System`` (not yet formed) and a dict of its symbols and objects."""
    q, u = dynamicsymbols("q, u")
    l_C, l_D, m_D, g, r = sm.symbols("l_C, l_D, m_D, g, r", positive=True)

    upper = me.RigidBody("upper_arm")             # Newtonian body: the upper arm is held still
    N = upper.frame
    O = upper.masscenter                          # the shoulder
    D = me.ReferenceFrame("D")
    D_o = me.Point("D_o")
    forearm = me.RigidBody("forearm", masscenter=D_o, frame=D, mass=m_D,
                           inertia=(me.inertia(D, m_D * l_D**2 / 12, 0, m_D * l_D**2 / 12), D_o))
    system = me.System.from_newtonian(upper)
    elbow = me.PinJoint("elbow", upper, forearm, q, u, parent_point=-l_C * N.y,
                        child_point=l_D / 2 * D.y, joint_axis=N.z)
    system.add_joints(elbow)
    E = elbow.parent_point

    C_m = me.Point("C_m")
    C_m.set_pos(O, -l_C / 3 * N.y)
    C_m.set_vel(N, 0)
    D_m = me.Point("D_m")
    D_m.set_pos(D_o, (l_D / 2 - l_D / 3) * D.y)
    D_m.v2pt_theory(D_o, N, D)
    hand = me.Point("hand")
    hand.set_pos(D_o, -l_D / 2 * D.y)

    biceps = bm.MusculotendonDeGroote2016.with_defaults(
        "biceps", me.LinearPathway(C_m, D_m), bm.FirstOrderActivationDeGroote2016.with_defaults("biceps"))
    triceps_path = ElbowExtensorPathway(C_m, D_m, E, parent_axis=N.y, parent_back=-N.x, child_axis=-D.y,
                                        child_back=-D.x, radius=r, angle=q)
    triceps = bm.MusculotendonDeGroote2016.with_defaults(
        "triceps", triceps_path, bm.FirstOrderActivationDeGroote2016.with_defaults("triceps"))
    system.add_actuators(biceps, triceps)
    system.apply_uniform_gravity(-g * N.y)

    points = {name: point_coordinates(P, O, N)
              for name, P in (("shoulder", O), ("elbow", E), ("hand", hand), ("C_m", C_m), ("D_m", D_m))}
    extras = {"q": q, "u": u, "l_C": l_C, "l_D": l_D, "m_D": m_D, "g": g, "r": r,
              "biceps": biceps, "triceps": triceps, "points": points, "frame": N,
              "triceps_path": triceps_path}
    return system, extras


def default_constants(ex: dict) -> dict:
    """SymPy's tutorial numbers (see the module docstring), keyed by Symbol."""
    b, tr = ex["biceps"], ex["triceps"]
    return {ex["l_C"]: 0.3, ex["l_D"]: 0.3, ex["m_D"]: 1.7, ex["g"]: 9.81, ex["r"]: 0.03,
            b.F_M_max: 500.0, b.l_M_opt: 0.6 * 0.3, b.l_T_slack: 0.55 * 0.3,
            tr.F_M_max: 500.0, tr.l_M_opt: 0.6 * 0.3, tr.l_T_slack: 0.65 * 0.3}


def musculoskeletal_arm() -> Model:
    """The elbow with biceps and triceps (see the module docstring)."""
    system, ex = musculoskeletal_arm_system()
    system.form_eoms(eom_method=KanesMethod)
    km = system.eom_method
    biceps, triceps = ex["biceps"], ex["triceps"]
    eom = km.to_eom(extra_states=[biceps, triceps], name="musculoskeletal-arm")
    q, u = ex["q"], ex["u"]
    a_b, a_t = biceps.a, triceps.a
    initial = {q: math.radians(75.0), u: 0.0, a_b: 0.0, a_t: 0.0}
    drawing = Drawing(points=ex["points"],
                      lines=[["shoulder", "elbow", "hand"], ["C_m", "D_m"]],
                      traces=("hand",), view="2d")
    return Model.create(
        name="musculoskeletal-arm", description=DESCRIPTION, eom=eom, method=km,
        constants=default_constants(ex), initial_state=initial, t_span=(0.0, 3.0), drawing=drawing,
        outputs={"biceps_length": biceps.pathway.length, "triceps_length": ex["triceps_path"].length},
        references=REFERENCES)
