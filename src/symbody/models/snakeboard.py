"""Snakeboard: three planar bodies, two nonholonomic wheel constraints (seed 000).

Board A (mass center Ao at (q1, q2), heading q3 about N.z) carries the wheel
trucks B and C at Ao +- l/2 A.x, steered by q4, q5 relative to A.  Each body:
mass m, central moment of inertia I about the vertical.  Kinematics (non-identity):

    u1 = q1',  u2 = q2',  u3 = l q3' / 2,  u4 = q4',  u5 = q5'.

The wheels do not slip sideways: v_Bo . B.y = 0, v_Co . C.y = 0, solved for the
dependent speeds u_dep = [u1, u2]; u_ind = [u3, u4, u5].  No applied forces, so
the kinetic energy is conserved.
"""

from __future__ import annotations

import math

import sympy as sm
from sympy.physics.mechanics import RigidBody, outer
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from ..compat.sympy import TIME
from ..scene import Box, Cylinder, Scene, Segment, VisualizationFrame
from .base import Drawing, KaneSystem, Model, point_coordinates, rotated_frame

__all__ = ["snakeboard", "snakeboard_system"]

t = TIME

DESCRIPTION = "snakeboard, 3 dof, 2 nonholonomic wheel constraints, u3 = l q3'/2 (seed 000)"
REFERENCES = ("Moore, Learn Multibody Dynamics, 'Equations of Motion with Nonholonomic Constraints' "
              "(seed 000): l=0.7 m, I=0.1 kg m^2, m=1 kg; q0=[0, 0, 0, 5 deg, -5 deg], "
              "u3=0.1 m/s, u4=0.01 rad/s, u5=-0.01 rad/s; t in [0, 8] s.")


def snakeboard_system() -> tuple[KaneSystem, dict]:
    """Kinematics, constraints and bodies of the snakeboard; returns (KaneSystem, extras)."""
    q1, q2, q3, q4, q5 = dynamicsymbols("q1, q2, q3, q4, q5")
    u1, u2, u3, u4, u5 = dynamicsymbols("u1, u2, u3, u4, u5")
    l, I, m = sm.symbols("l, I, m")

    N = ReferenceFrame("N")
    A = rotated_frame("A", N, q3)
    B = rotated_frame("B", A, q4)
    C = rotated_frame("C", A, q5)

    O, Ao, Bo, Co = Point("O"), Point("A_o"), Point("B_o"), Point("C_o")
    Ao.set_pos(O, q1 * N.x + q2 * N.y)
    Bo.set_pos(Ao, l / 2 * A.x)
    Co.set_pos(Ao, -l / 2 * A.x)
    O.set_vel(N, 0)
    Ao.set_vel(N, q1.diff(t) * N.x + q2.diff(t) * N.y)
    Bo.v2pt_theory(Ao, N, A)
    Co.v2pt_theory(Ao, N, A)

    kd = [u1 - q1.diff(t), u2 - q2.diff(t), u3 - l * q3.diff(t) / 2, u4 - q4.diff(t), u5 - q5.diff(t)]
    fn = [Bo.vel(N).dot(B.y), Co.vel(N).dot(C.y)]

    bodies = [RigidBody("A", Ao, A, m, (I * outer(A.z, A.z), Ao)),
              RigidBody("B", Bo, B, m, (I * outer(B.z, B.z), Bo)),
              RigidBody("C", Co, C, m, (I * outer(C.z, C.z), Co))]
    system = KaneSystem(frame=N, q_ind=[q1, q2, q3, q4, q5], u_ind=[u3, u4, u5], kd_eqs=kd,
                        bodies=bodies, loads=[], u_dep=[u1, u2], velocity_constraints=fn)

    wheels = {}
    for name, P, F, sign in (("B_l", Bo, B, -1), ("B_r", Bo, B, 1), ("C_l", Co, C, -1), ("C_r", Co, C, 1)):
        W = Point(name)
        W.set_pos(P, sign * l / 4 * F.y)
        wheels[name] = W
    points = {"A_o": point_coordinates(Ao, O, N), "B_o": point_coordinates(Bo, O, N),
              "C_o": point_coordinates(Co, O, N)}
    points.update({name: point_coordinates(W, O, N) for name, W in wheels.items()})
    extras = {"symbols": {"l": l, "I": I, "m": m}, "q": (q1, q2, q3, q4, q5), "u": (u1, u2, u3, u4, u5),
              "points": points, "kinetic": sum(b.kinetic_energy(N) for b in bodies),
              "frames": {"N": N, "A": A, "B": B, "C": C}}
    return system, extras


def snakeboard() -> Model:
    """The seed-000 snakeboard (see the module docstring)."""
    system, ex = snakeboard_system()
    km, eom = system.form(name="snakeboard")
    s = ex["symbols"]
    q1, q2, q3, q4, q5 = ex["q"]
    u1, u2, u3, u4, u5 = ex["u"]
    constants = {s["l"]: 0.7, s["I"]: 0.1, s["m"]: 1.0}
    initial = {q1: 0.0, q2: 0.0, q3: 0.0, q4: math.radians(5.0), q5: -math.radians(5.0),
               u3: 0.1, u4: 0.01, u5: -0.01}
    kinetic = sm.sympify(ex["kinetic"]).xreplace(eom.kindiffdict)
    l = s["l"]
    drawing = Drawing(points=ex["points"],
                      lines=[["C_l", "C_o", "C_r"], ["C_o", "A_o", "B_o"], ["B_l", "B_o", "B_r"]],
                      traces=("B_l", "B_r", "C_l", "C_r"), view="2d")
    N, A, B, C = (ex["frames"][k] for k in "NABC")
    wheel = Cylinder(0.025, 0.04, color="#222222")
    scene = Scene(
        N, None,
        VisualizationFrame("coupler", A, "A_o", Box(l, l / 6, 0.02, color="#8c564b")),
        VisualizationFrame("front wheels", B, "B_o", Box(l / 5, l / 2, 0.02, color="#1f77b4")),
        VisualizationFrame("rear wheels", C, "C_o", Box(l / 5, l / 2, 0.02, color="#2ca02c")),
        Segment("front axle", "B_l", "B_r", radius=0.008, color="#555555"),
        Segment("rear axle", "C_l", "C_r", radius=0.008, color="#555555"),
        *(VisualizationFrame(f"wheel {p}", F, p, wheel)
          for p, F in (("B_l", B), ("B_r", B), ("C_l", C), ("C_r", C))),
        points=ex["points"], traces=("B_o", "C_o"), up="z", follow="coupler", name="snakeboard")
    return Model.create(
        name="snakeboard", description=DESCRIPTION, eom=eom, method=km, constants=constants,
        initial_state=initial, t_span=(0.0, 8.0), drawing=drawing, energy=kinetic,
        outputs={"kinetic_energy": kinetic, "omega_B": 2 * u3 / l + u4, "omega_C": 2 * u3 / l + u5,
                 "omega_A": 2 * u3 / l},
        references=REFERENCES, scene=scene)
