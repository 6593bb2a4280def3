"""IFToMM benchmark A01: the simple planar pendulum.

A particle of mass m on a massless link of length l hinged at O; q is the link's angle
from the downward vertical about N.z, P1 = O + l (sin q N.x - cos q N.y), u = q', gravity
-g N.y.  Released at rest from the horizontal with x(P1) = +l (q = pi/2).  The library
runs 2000 s and compares P1 (x, y) at 4000 output steps with 1e-1 / 1e-3 m precision.
"""

from __future__ import annotations

import math

import sympy as sm
from sympy.physics.mechanics import Particle
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from ..compat.sympy import TIME
from ..scene import Scene, Segment, Sphere, VisualizationFrame
from .base import Drawing, KaneSystem, Model, energy_fields, point_coordinates, rotated_frame

__all__ = ["iftomm_pendulum", "iftomm_pendulum_system"]

t = TIME

DESCRIPTION = "IFToMM benchmark A01: simple pendulum released from the horizontal, 1 dof"
REFERENCES = ("IFToMM multibody benchmark library, problem A01 "
              "(http://lim.ii.udc.es/mbsbenchmark/dist/A01/A01_specification.xml): m = 1 kg, "
              "massless link l = 1 m, g = 9.81 in -y; at rest with x(P1) = +1 m; 2000 s; output "
              "P1 (x, y) at 4000 steps, precision 1e-1 (low) / 1e-3 m (high).")


def iftomm_pendulum_system() -> tuple[KaneSystem, dict]:
    """Kinematics and loads of the A01 pendulum; returns (KaneSystem, extras dict)."""
    q, u = dynamicsymbols("q, u")
    m, l, g = sm.symbols("m, l, g")
    N = ReferenceFrame("N")
    A = rotated_frame("A", N, q)
    O, P1 = Point("O"), Point("P1")
    P1.set_pos(O, -l * A.y)
    O.set_vel(N, 0)
    P1.v2pt_theory(O, N, A)
    bodies = [Particle("P1", P1, m)]
    loads = [(P1, -m * g * N.y)]
    system = KaneSystem(frame=N, q_ind=[q], u_ind=[u], kd_eqs=[q.diff(t) - u], bodies=bodies,
                        loads=loads)
    points = {"O": sm.Matrix([0, 0, 0]), "P1": point_coordinates(P1, O, N)}
    kinetic = bodies[0].kinetic_energy(N).xreplace({q.diff(t): u})
    potential = m * g * points["P1"][1]
    return system, {"symbols": {"m": m, "l": l, "g": g}, "q": q, "u": u, "points": points,
                    "kinetic": kinetic, "potential": potential}


def iftomm_pendulum() -> Model:
    """The A01 simple pendulum (see the module docstring)."""
    system, ex = iftomm_pendulum_system()
    km, eom = system.form(name="iftomm-pendulum")
    s = ex["symbols"]
    constants = {s["m"]: 1.0, s["l"]: 1.0, s["g"]: 9.81}
    pts = ex["points"]
    drawing = Drawing(points=pts, lines=[["O", "P1"]], traces=("P1",), view="2d")
    scene = Scene(
        ReferenceFrame("N"), None,
        Segment("link", "O", "P1", radius=0.02, color="#1f77b4"),
        VisualizationFrame("mass P1", None, "P1", Sphere(0.06, color="#d62728")),
        VisualizationFrame("pivot O", None, "O", Sphere(0.03, color="#333333")),
        points=pts, traces=("P1",), up="y", name="iftomm-pendulum")
    return Model.create(
        name="iftomm-pendulum", description=DESCRIPTION, eom=eom, method=km, constants=constants,
        initial_state={ex["q"]: math.pi / 2, ex["u"]: 0.0}, t_span=(0.0, 2000.0), drawing=drawing,
        **energy_fields(ex["kinetic"], ex["potential"], x_P1=pts["P1"][0], y_P1=pts["P1"][1]),
        references=REFERENCES, scene=scene)
