"""Four-bar linkage with two holonomic constraints (seed chapter 001).

Links A, B, C of lengths la, lb, lc hinged in a chain from the ground point
P1; the loop closes at P4 = P1 + ln N.x.  Relative angles q1 (A in N), q2 (B in
A), q3 (C in B) about N.z; particles of mass m at P2 and P3; gravity -g N.y.
Kinematics q' = u; q_dep = [q2, q3] from the loop closure

    f_h = [la c1 + lb c12 + lc c123 - ln,  la s1 + lb s12 + lc s123] = 0,

u_dep = [u2, u3] from d/dt f_h = 0.  One degree of freedom.
"""

from __future__ import annotations

import math

import sympy as sm
from sympy.physics.mechanics import Particle
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from ..compat.sympy import TIME
from ..scene import Scene, Segment, Sphere, VisualizationFrame
from .base import (
    Drawing,
    KaneSystem,
    Model,
    energy_fields,
    point_coordinates,
    rotated_frame,
    solve_dependent_coordinates,
)

__all__ = ["four_bar", "four_bar_system"]

t = TIME

DESCRIPTION = "four-bar linkage, 1 dof, 2 holonomic loop constraints (seed 001)"
REFERENCES = ("Moore, Learn Multibody Dynamics, 'Equations of Motion with Holonomic Constraints' "
              "(seed 001): la=0.8, lb=2, lc=1, ln=2 m, m=1 kg, g=9.81; q1=10 deg, q2, q3 "
              "consistent (6.57526576, -151.3836336 deg), u1=0, t in [0, 30] s.")


def four_bar_system() -> tuple[KaneSystem, dict]:
    """Kinematics and loads of the four-bar; returns (KaneSystem, extras dict)."""
    q1, q2, q3 = dynamicsymbols("q1, q2, q3")
    u1, u2, u3 = dynamicsymbols("u1, u2, u3")
    la, lb, lc, ln = sm.symbols("l_a, l_b, l_c, l_n")
    m, g = sm.symbols("m, g")

    N = ReferenceFrame("N")
    A = rotated_frame("A", N, q1)
    B = rotated_frame("B", A, q2)
    C = rotated_frame("C", B, q3)

    P1, P2, P3, P4 = Point("P1"), Point("P2"), Point("P3"), Point("P4")
    P2.set_pos(P1, la * A.x)
    P3.set_pos(P2, lb * B.x)
    P4.set_pos(P3, lc * C.x)
    P1.set_vel(N, 0)
    P2.v2pt_theory(P1, N, A)
    P3.v2pt_theory(P2, N, B)
    P4.v2pt_theory(P3, N, C)

    loop = P4.pos_from(P1) - ln * N.x
    fh = [loop.dot(N.x), loop.dot(N.y)]
    qd_u = {q1.diff(t): u1, q2.diff(t): u2, q3.diff(t): u3}
    fhd = [sm.diff(e, t).xreplace(qd_u) for e in fh]
    kd = [q1.diff(t) - u1, q2.diff(t) - u2, q3.diff(t) - u3]

    bodies = [Particle("P2", P2, m), Particle("P3", P3, m)]
    loads = [(P2, -m * g * N.y), (P3, -m * g * N.y)]
    system = KaneSystem(frame=N, q_ind=[q1], u_ind=[u1], kd_eqs=kd, bodies=bodies, loads=loads,
                        q_dep=[q2, q3], configuration_constraints=fh,
                        u_dep=[u2, u3], velocity_constraints=fhd)
    O = P1
    points = {name: point_coordinates(P, O, N) for name, P in
              (("P1", P1), ("P2", P2), ("P3", P3), ("P4", P4))}
    points["P4_ground"] = sm.Matrix([ln, 0, 0])
    kinetic = sum(b.kinetic_energy(N) for b in bodies)
    potential = m * g * (P2.pos_from(P1).dot(N.y) + P3.pos_from(P1).dot(N.y))
    extras = {
        "symbols": {"la": la, "lb": lb, "lc": lc, "ln": ln, "m": m, "g": g},
        "q": (q1, q2, q3), "u": (u1, u2, u3),
        "points": points, "kinetic": kinetic, "potential": potential, "holonomic": sm.Matrix(fh),
    }
    return system, extras


def four_bar() -> Model:
    """The seed-001 four-bar linkage (see the module docstring)."""
    system, ex = four_bar_system()
    km, eom = system.form(name="four-bar")
    s = ex["symbols"]
    q1, q2, q3 = ex["q"]
    u1 = ex["u"][0]
    constants = {s["la"]: 0.8, s["lb"]: 2.0, s["lc"]: 1.0, s["ln"]: 2.0, s["m"]: 1.0, s["g"]: 9.81}
    fh = ex["holonomic"]

    def initial_state(values: dict) -> dict:
        q1_0 = math.radians(10.0)
        dep = solve_dependent_coordinates(
            fh, [q2, q3], {**values, q1: q1_0}, [math.radians(6.57526576), math.radians(-151.3836336)])
        return {q1: q1_0, q2: dep[q2], q3: dep[q3], u1: 0.0}

    kd = eom.kindiffdict
    kinetic = sm.sympify(ex["kinetic"]).xreplace(kd)
    potential = ex["potential"]
    drawing = Drawing(points=ex["points"], lines=[["P1", "P2", "P3", "P4"]],
                      traces=("P4",), view="2d")
    link = 0.03      # link radius (m)
    scene = Scene(
        ReferenceFrame("N"), None,
        Segment("ground link", "P1", "P4_ground", radius=link, color="#9aa0a6"),
        Segment("link A", "P1", "P2", radius=link, color="#1f77b4"),
        Segment("link B", "P2", "P3", radius=link, color="#2ca02c"),
        Segment("link C", "P3", "P4", radius=link, color="#9467bd"),
        VisualizationFrame("particle P2", None, "P2", Sphere(0.09, color="#d62728")),
        VisualizationFrame("particle P3", None, "P3", Sphere(0.09, color="#d62728")),
        VisualizationFrame("pivot P1", None, "P1", Sphere(0.05, color="#333333")),
        VisualizationFrame("pivot P4", None, "P4_ground", Sphere(0.05, color="#333333")),
        points=ex["points"], traces=("P4",), up="y", name="four-bar")
    return Model.create(
        name="four-bar", description=DESCRIPTION, eom=eom, method=km, constants=constants,
        initial_state_rule=initial_state, t_span=(0.0, 30.0), drawing=drawing,
        **energy_fields(kinetic, potential, loop_gap_x=fh[0], loop_gap_y=fh[1]),
        references=REFERENCES, scene=scene)
