"""Chaplygin sleigh: a planar rigid body on a knife edge (nonholonomic).

Body A (mass m, central moment of inertia I about the vertical) slides on the
plane on a knife edge at P = (q1, q2), heading q3 about N.z; its mass centre G
lies a distance a ahead of P along the blade, G = P + a A.x.  Speeds in the
body frame: u1 = v_P . A.x (forward), u2 = v_P . A.y (sideways), u3 = q3', so

    q1' = u1 cos q3 - u2 sin q3,  q2' = u1 sin q3 + u2 cos q3,  q3' = u3.

The knife edge does not slide sideways: u2 = 0 (u_dep = [u2]).  No applied
forces: the kinetic energy m (u1^2 + a^2 u3^2)/2 + I u3^2/2 is conserved and
the sleigh ends up moving straight (u3 -> 0) for a > 0.
"""

from __future__ import annotations

import sympy as sm
from sympy.physics.mechanics import RigidBody, outer
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from ..compat.sympy import TIME
from ..scene import Box, Scene, Sphere, VisualizationFrame
from .base import Drawing, KaneSystem, Model, point_coordinates, rotated_frame

__all__ = ["chaplygin_sleigh", "chaplygin_sleigh_system"]

t = TIME

DESCRIPTION = "Chaplygin sleigh: rigid body on a knife edge, 2 dof, 1 nonholonomic constraint"
REFERENCES = ("Chaplygin (1911); Neimark & Fufaev, Dynamics of Nonholonomic Systems (1972). "
              "Defaults chosen here: m=1 kg, I=0.1 kg m^2 (about G), a=0.3 m; u1=1 m/s, u3=2 rad/s.")


def chaplygin_sleigh_system() -> tuple[KaneSystem, dict]:
    """Kinematics, knife-edge constraint and body; returns (KaneSystem, extras)."""
    q1, q2, q3 = dynamicsymbols("q1, q2, q3")
    u1, u2, u3 = dynamicsymbols("u1, u2, u3")
    m, I, a = sm.symbols("m, I, a")

    N = ReferenceFrame("N")
    A = rotated_frame("A", N, q3)
    A.set_ang_vel(N, u3 * N.z)

    O, P, G = Point("O"), Point("P"), Point("G")
    P.set_pos(O, q1 * N.x + q2 * N.y)
    G.set_pos(P, a * A.x)
    O.set_vel(N, 0)
    P.set_vel(N, u1 * A.x + u2 * A.y)
    G.v2pt_theory(P, N, A)

    kd = [q1.diff(t) - (u1 * sm.cos(q3) - u2 * sm.sin(q3)),
          q2.diff(t) - (u1 * sm.sin(q3) + u2 * sm.cos(q3)),
          q3.diff(t) - u3]
    fn = [P.vel(N).dot(A.y)]
    body = RigidBody("A", G, A, m, (I * outer(A.z, A.z), G))
    system = KaneSystem(frame=N, q_ind=[q1, q2, q3], u_ind=[u1, u3], kd_eqs=kd, bodies=[body],
                        loads=[], u_dep=[u2], velocity_constraints=fn)

    width = a / 2
    corners = {}
    for name, along, across in (("front_left", 2 * a, width), ("front_right", 2 * a, -width),
                                ("rear_right", -a / 2, -width), ("rear_left", -a / 2, width)):
        Q = Point(name)
        Q.set_pos(P, along * A.x + across * A.y)
        corners[name] = point_coordinates(Q, O, N)
    points = {"P": point_coordinates(P, O, N), "G": point_coordinates(G, O, N), **corners}
    extras = {"q": (q1, q2, q3), "u": (u1, u2, u3), "m": m, "I": I, "a": a, "points": points,
              "kinetic": body.kinetic_energy(N), "frames": {"N": N, "A": A}}
    return system, extras


def chaplygin_sleigh() -> Model:
    """The Chaplygin sleigh (see the module docstring)."""
    system, ex = chaplygin_sleigh_system()
    km, eom = system.form(name="chaplygin-sleigh")
    q1, q2, q3 = ex["q"]
    u1, u2, u3 = ex["u"]
    constants = {ex["m"]: 1.0, ex["I"]: 0.1, ex["a"]: 0.3}
    initial = {q1: 0.0, q2: 0.0, q3: 0.0, u1: 1.0, u3: 2.0}
    kinetic = sm.sympify(ex["kinetic"]).xreplace(eom.kindiffdict)
    drawing = Drawing(points=ex["points"],
                      lines=[["front_left", "front_right", "rear_right", "rear_left", "front_left"],
                             ["P", "G"]],
                      traces=("P",), view="2d")
    a, pts = ex["a"], ex["points"]
    N, A = ex["frames"]["N"], ex["frames"]["A"]
    scene = Scene(
        N, None,
        VisualizationFrame("sleigh", A, (pts["front_left"] + pts["rear_right"]) / 2,
                           Box(5 * a / 2, a, a / 10, color="#1f77b4", opacity=0.85)),
        VisualizationFrame("knife edge", A, "P", Box(a / 2, a / 30, a / 4, color="#333333")),
        VisualizationFrame("mass centre", None, "G", Sphere(a / 8, color="#d62728")),
        points=pts, traces=("P",), up="z", follow="sleigh", name="chaplygin-sleigh")
    return Model.create(
        name="chaplygin-sleigh", description=DESCRIPTION, eom=eom, method=km, constants=constants,
        initial_state=initial, t_span=(0.0, 10.0), drawing=drawing, energy=kinetic,
        outputs={"kinetic_energy": kinetic, "forward_speed": u1, "yaw_rate": u3,
                 "sideways_speed_of_G": ex["a"] * u3},
        references=REFERENCES, scene=scene)
