"""Double-rod pendulum with a sliding particle (seed 002; book values with Q of mass m/4).

Rod A (length l, mass m) turns by q1 about N.z at O; rod B (length l, mass m) is
centred at the tip of A (Bo = O + l A.x) and turns by q2 about A.x; particle Q
(mass m/4) slides along B at Q = Bo + q3 B.y.  Gravity g along +N.x; torsion
springs kt on both joints (T_A = -kt q1 N.z + kt q2 A.x, T_B = -kt q2 A.x), a
linear spring kl between Bo and Q.  Speeds u1 = w_A.N.z, u2 = w_B/A.A.x,
u3 = Q's speed in B; kinematics q' = u.  No constraints: 3 dof.

Energy (conserved): T + V with V = -g (m x_Ao + m x_Bo + m/4 x_Q)
+ kt (q1^2 + q2^2)/2 + kl q3^2/2.
"""

from __future__ import annotations

import math

import sympy as sm
from sympy.physics.mechanics import Particle, RigidBody, outer
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from ..compat.sympy import TIME
from ..scene import Scene, Segment, Sphere, VisualizationFrame
from .base import Drawing, KaneSystem, Model, energy_fields, point_coordinates, rotated_frame

__all__ = ["double_rod_pendulum", "double_rod_pendulum_system"]

t = TIME

DESCRIPTION = "double-rod pendulum with a particle sliding on the second rod, 3 dof (seed 002)"
REFERENCES = ("Moore, Learn Multibody Dynamics, 'Equations of Motion' (seed 002) and the simulation "
              "chapter (particle Q of mass m/4): m=1 kg, g=9.81, kt=0.01 N m/rad, kl=2 N/m, l=0.6 m; "
              "q0=[25 deg, 5 deg, 0.1 m], u0=[0.1, 2.2, 0.3]; t in [0, 2] s.")


def double_rod_pendulum_system() -> tuple[KaneSystem, dict]:
    """Kinematics, bodies and loads; returns (KaneSystem, extras)."""
    m, g, kt, kl, l = sm.symbols("m, g, k_t, k_l, l")
    q1, q2, q3 = dynamicsymbols("q1, q2, q3")
    u1, u2, u3 = dynamicsymbols("u1, u2, u3")

    N = ReferenceFrame("N")
    A = rotated_frame("A", N, q1)
    B = rotated_frame("B", A, q2, "x")
    A.set_ang_vel(N, u1 * N.z)
    B.set_ang_vel(A, u2 * A.x)

    O, Ao, Bo, Q = Point("O"), Point("A_o"), Point("B_o"), Point("Q")
    Ao.set_pos(O, l / 2 * A.x)
    Bo.set_pos(O, l * A.x)
    Q.set_pos(Bo, q3 * B.y)
    O.set_vel(N, 0)
    Ao.v2pt_theory(O, N, A)
    Bo.v2pt_theory(O, N, A)
    Q.set_vel(B, u3 * B.y)
    Q.v1pt_theory(Bo, N, B)

    Irod = m * l**2 / 12
    bodies = [RigidBody("A", Ao, A, m, (Irod * outer(A.y, A.y) + Irod * outer(A.z, A.z), Ao)),
              RigidBody("B", Bo, B, m, (Irod * outer(B.x, B.x) + Irod * outer(B.z, B.z), Bo)),
              Particle("Q", Q, m / 4)]
    loads = [(Ao, m * g * N.x),
             (Bo, m * g * N.x + kl * q3 * B.y),
             (Q, m / 4 * g * N.x - kl * q3 * B.y),
             (A, -kt * q1 * N.z + kt * q2 * A.x),
             (B, -kt * q2 * A.x)]
    kd = [q1.diff(t) - u1, q2.diff(t) - u2, q3.diff(t) - u3]
    system = KaneSystem(frame=N, q_ind=[q1, q2, q3], u_ind=[u1, u2, u3], kd_eqs=kd,
                        bodies=bodies, loads=loads)

    # the ends of rod B (it is centred at Bo and lies along B.y)
    B1, B2 = Point("B_1"), Point("B_2")
    B1.set_pos(Bo, -l / 2 * B.y)
    B2.set_pos(Bo, l / 2 * B.y)
    points = {name: point_coordinates(P, O, N) for name, P in
              (("O", O), ("A_o", Ao), ("B_o", Bo), ("Q", Q), ("B_1", B1), ("B_2", B2))}
    potential = (-g * (m * Ao.pos_from(O).dot(N.x) + m * Bo.pos_from(O).dot(N.x)
                       + m / 4 * Q.pos_from(O).dot(N.x))
                 + kt * (q1**2 + q2**2) / 2 + kl * q3**2 / 2)
    extras = {"symbols": {"m": m, "g": g, "kt": kt, "kl": kl, "l": l}, "q": (q1, q2, q3),
              "u": (u1, u2, u3), "points": points,
              "kinetic": sum(b.kinetic_energy(N) for b in bodies), "potential": potential}
    return system, extras


def double_rod_pendulum() -> Model:
    """The seed-002 double-rod pendulum (see the module docstring)."""
    system, ex = double_rod_pendulum_system()
    km, eom = system.form(name="double-rod-pendulum")
    s = ex["symbols"]
    q1, q2, q3 = ex["q"]
    u1, u2, u3 = ex["u"]
    constants = {s["g"]: 9.81, s["kl"]: 2.0, s["kt"]: 0.01, s["l"]: 0.6, s["m"]: 1.0}
    initial = {q1: math.radians(25.0), q2: math.radians(5.0), q3: 0.1, u1: 0.1, u2: 2.2, u3: 0.3}
    kinetic = sm.sympify(ex["kinetic"]).xreplace(eom.kindiffdict)
    potential = ex["potential"]
    drawing = Drawing(points=ex["points"], lines=[["O", "B_o"], ["B_1", "B_o", "B_2"]],
                      view="3d")
    scene = Scene(
        ReferenceFrame("N"), None,
        Segment("rod A", "O", "B_o", radius=0.015, color="#1f77b4"),
        Segment("rod B", "B_1", "B_2", radius=0.015, color="#2ca02c"),
        VisualizationFrame("slider Q", None, "Q", Sphere(0.04, color="#d62728")),
        VisualizationFrame("pivot O", None, "O", Sphere(0.025, color="#333333")),
        points=ex["points"], traces=("Q",), up="-x", ground=False, name="double-rod-pendulum")
    return Model.create(
        name="double-rod-pendulum", description=DESCRIPTION, eom=eom, method=km,
        constants=constants, initial_state=initial, t_span=(0.0, 2.0), drawing=drawing,
        **energy_fields(kinetic, potential),
        references=REFERENCES, scene=scene)
