"""Planar double pendulum of two particles; rod tensions exposed by auxiliary speeds.

Massless rods A (length l1) and B (length l2) hang from O with absolute angles
q1, q2 about N.z measured from the downward vertical: P1 = O - l1 A.y,
P2 = P1 - l2 B.y, particle masses m1, m2, gravity -g N.y, u = q'.

Auxiliary speeds u3 (P1 separating from O along A.y) and u4 (P2 separating
from P1 along B.y) bring the rod tensions T1, T2 into evidence: they act as
T1 A.y - T2 B.y on P1 and T2 B.y on P2 (positive when the rods pull), do no
work in the real motion and appear only in the two auxiliary equations, which then give T1 and T2 (the
equations' ``noncontributing`` unknowns).  Energy T + V, V = g (m1 y1 + m2 y2).
"""

from __future__ import annotations

import math

import sympy as sm
from sympy.physics.mechanics import Particle
from sympy.physics.vector import Point, ReferenceFrame, cross, dynamicsymbols

from ..compat.sympy import TIME
from ..scene import Scene, Segment, Sphere, VisualizationFrame
from .base import Drawing, KaneSystem, Model, energy_fields, point_coordinates, rotated_frame

__all__ = ["two_particle_pendulum", "two_particle_pendulum_system"]

t = TIME

DESCRIPTION = "two-particle double pendulum with rod tensions via auxiliary speeds, 2 dof"
REFERENCES = ("Moore, Learn Multibody Dynamics, 'Exposing Noncontributing Forces': m1=1.2, m2=5.6 kg, "
              "l1=1.34, l2=6.7 m, g=9.81; q0=[15, 25] deg, u0=[123, -41] deg/s; there "
              "[u1', u2', T1, T2] = [8.09538007, -2.37332094, 109.88598116, 92.50997719].")


def two_particle_pendulum_system() -> tuple[KaneSystem, dict]:
    """Kinematics (velocities include the auxiliary speeds), bodies, loads; (KaneSystem, extras)."""
    m1, m2, l1, l2, g = sm.symbols("m1, m2, l1, l2, g")
    q1, q2, u1, u2, T1, T2 = dynamicsymbols("q1, q2, u1, u2, T1, T2")
    u3, u4 = dynamicsymbols("u3, u4")

    N = ReferenceFrame("N")
    A = rotated_frame("A", N, q1)
    B = rotated_frame("B", N, q2)
    A.set_ang_vel(N, u1 * N.z)
    B.set_ang_vel(N, u2 * N.z)

    O, P1, P2 = Point("O"), Point("P1"), Point("P2")
    P1.set_pos(O, -l1 * A.y)
    P2.set_pos(P1, -l2 * B.y)
    O.set_vel(N, 0)
    P1.set_vel(N, cross(A.ang_vel_in(N), P1.pos_from(O)) + u3 * A.y)
    P2.set_vel(N, P1.vel(N) + cross(B.ang_vel_in(N), P2.pos_from(P1)) + u4 * B.y)

    bodies = [Particle("P1", P1, m1), Particle("P2", P2, m2)]
    loads = [(P1, -m1 * g * N.y + T1 * A.y - T2 * B.y), (P2, -m2 * g * N.y + T2 * B.y)]
    kd = [q1.diff(t) - u1, q2.diff(t) - u2]
    system = KaneSystem(frame=N, q_ind=[q1, q2], u_ind=[u1, u2], kd_eqs=kd, bodies=bodies,
                        loads=loads, u_aux=[u3, u4], noncontributing=[T1, T2])
    points = {"O": point_coordinates(O, O, N), "P1": point_coordinates(P1, O, N),
              "P2": point_coordinates(P2, O, N)}
    aux_zero = {u3: 0, u4: 0}
    kinetic = sum(b.kinetic_energy(N) for b in bodies).xreplace(aux_zero)
    potential = g * (m1 * P1.pos_from(O).dot(N.y) + m2 * P2.pos_from(O).dot(N.y))
    extras = {"symbols": {"m1": m1, "m2": m2, "l1": l1, "l2": l2, "g": g}, "q": (q1, q2),
              "u": (u1, u2), "tensions": (T1, T2), "points": points,
              "kinetic": kinetic, "potential": potential}
    return system, extras


def two_particle_pendulum() -> Model:
    """The noncontributing-forces chapter's double pendulum (see the module docstring)."""
    system, ex = two_particle_pendulum_system()
    km, eom = system.form(name="two-particle-pendulum")
    s = ex["symbols"]
    q1, q2 = ex["q"]
    u1, u2 = ex["u"]
    constants = {s["m1"]: 1.2, s["m2"]: 5.6, s["l1"]: 1.34, s["l2"]: 6.7, s["g"]: 9.81}
    initial = {q1: math.radians(15.0), q2: math.radians(25.0),
               u1: math.radians(123.0), u2: math.radians(-41.0)}
    kinetic = ex["kinetic"]
    potential = ex["potential"]
    tensions = _tension_expressions(eom)
    drawing = Drawing(points=ex["points"], lines=[["O", "P1", "P2"]], traces=("P2",), view="2d")
    scene = Scene(
        ReferenceFrame("N"), None,
        Segment("rod 1", "O", "P1", radius=0.04, color="#1f77b4"),
        Segment("rod 2", "P1", "P2", radius=0.04, color="#2ca02c"),
        VisualizationFrame("particle 1", None, "P1", Sphere(0.25, color="#d62728")),
        VisualizationFrame("particle 2", None, "P2", Sphere(0.4, color="#d62728")),
        VisualizationFrame("pivot", None, "O", Sphere(0.12, color="#333333")),
        points=ex["points"], traces=("P2",), up="y", ground=False, name="two-particle-pendulum")
    return Model.create(
        name="two-particle-pendulum", description=DESCRIPTION, eom=eom, method=km,
        constants=constants, initial_state=initial, t_span=(0.0, 10.0), drawing=drawing,
        **energy_fields(kinetic, potential, **tensions),
        references=REFERENCES, scene=scene)


def _tension_expressions(eom) -> dict:
    """T1, T2 in q and u: u' = -M_d^-1 g_d (2x2) put into the auxiliary equations."""
    udot = sm.Matrix(eom.udot)
    udot_solution = sm.Matrix(eom.dynamic_mass).LUsolve(-sm.Matrix(eom.dynamic_rest))
    aux = sm.Matrix(eom.auxiliary).xreplace(dict(zip(udot, udot_solution, strict=True)))
    unknowns = list(eom.noncontributing)
    coeff = aux.jacobian(unknowns)
    rest = aux.xreplace(dict.fromkeys(unknowns, 0))
    values = coeff.LUsolve(-rest)
    return {str(f.func): v for f, v in zip(unknowns, values, strict=True)}
