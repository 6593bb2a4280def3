"""Rolling disc: a thin uniform disc rolling without slipping on the plane (3D, nonholonomic).

Kane (1985) / SymPy's rolling-disc example, with the contact point's position
as coordinates and its velocity as dependent speeds.  Orientation by body
fixed rotations: yaw q1 about N.z (frame Y), lean q2 about Y.x (frame L),
spin q3 about L.y (disc frame R); the ground contact C is at q4 N.x + q5 N.y and
the centre at Dmc = C + r L.z.  Speeds: u1, u2, u3 the components of R's
angular velocity in L, u4 = q4', u5 = q5'.  Rolling without slip (the disc's
material point at C has zero velocity) gives two horizontal constraints,

    (v_Dmc + w_R x (-r L.z)) . N.x = 0,  (...) . N.y = 0,

solved for u_dep = [u4, u5] (the vertical component vanishes identically).
Energy T + m g r cos(q2) is conserved.  Upright rolling straight ahead at speed
v (u2 = v/r) is the operating point (parameter ``v``).
"""

from __future__ import annotations

import math

import sympy as sm
from sympy.physics.mechanics import RigidBody, inertia
from sympy.physics.vector import Point, ReferenceFrame, cross, dynamicsymbols

from ..compat.sympy import TIME
from ..scene import Cylinder, Scene, Segment, Sphere, Torus, VisualizationFrame
from .base import Drawing, KaneSystem, Model, energy_fields, point_coordinates, rotated_frame

__all__ = ["rolling_disc", "rolling_disc_system"]

t = TIME

DESCRIPTION = "thin disc rolling without slip on a plane, 3D, 3 dof, 2 nonholonomic constraints"
REFERENCES = ("Kane & Levinson (1985) rolling disc; SymPy mechanics rolling-disc examples. Defaults "
              "chosen here: r=0.3 m, m=2 kg, g=9.81; lean 5 deg, spin 7 rad/s (2.1 m/s, above the "
              "critical speed sqrt(g r/3) = 0.99 m/s of the upright steady roll).")

RIM_POINTS = 16


def rolling_disc_system() -> tuple[KaneSystem, dict]:
    """Kinematics, rolling constraints and body; returns (KaneSystem, extras)."""
    q1, q2, q3, q4, q5 = dynamicsymbols("q1:6")
    u1, u2, u3, u4, u5 = dynamicsymbols("u1:6")
    r, m, g = sm.symbols("r, m, g")

    N = ReferenceFrame("N")
    Y = rotated_frame("Y", N, q1)           # yaw
    L = rotated_frame("L", Y, q2, "x")      # lean
    R = rotated_frame("R", L, q3, "y")      # spin
    w_R_qd = R.ang_vel_in(N)
    R.set_ang_vel(N, u1 * L.x + u2 * L.y + u3 * L.z)

    O, C, Dmc = Point("O"), Point("C"), Point("D_mc")
    C.set_pos(O, q4 * N.x + q5 * N.y)
    Dmc.set_pos(C, r * L.z)
    O.set_vel(N, 0)
    C.set_vel(N, q4.diff(t) * N.x + q5.diff(t) * N.y)
    Dmc.set_vel(N, C.vel(N) + cross(L.ang_vel_in(N), r * L.z))

    kd = [(R.ang_vel_in(N) - w_R_qd).dot(uv) for uv in L] + [q4.diff(t) - u4, q5.diff(t) - u5]
    v_contact = Dmc.vel(N) + cross(R.ang_vel_in(N), -r * L.z)
    fn = [v_contact.dot(N.x), v_contact.dot(N.y)]

    I_disc = inertia(L, m * r**2 / 4, m * r**2 / 2, m * r**2 / 4)
    disc = RigidBody("disc", Dmc, R, m, (I_disc, Dmc))
    loads = [(Dmc, -m * g * N.z)]
    system = KaneSystem(frame=N, q_ind=[q1, q2, q3, q4, q5], u_ind=[u1, u2, u3], kd_eqs=kd,
                        bodies=[disc], loads=loads, u_dep=[u4, u5], velocity_constraints=fn)

    points = {"contact": point_coordinates(C, O, N), "center": point_coordinates(Dmc, O, N)}
    for k in range(RIM_POINTS):
        angle = 2 * sm.pi * k / RIM_POINTS
        P = Point(f"rim{k}")
        P.set_pos(Dmc, r * (sm.cos(angle) * R.x + sm.sin(angle) * R.z))
        points[f"rim{k}"] = point_coordinates(P, O, N)
    extras = {"q": (q1, q2, q3, q4, q5), "u": (u1, u2, u3, u4, u5), "r": r, "m": m, "g": g,
              "points": points, "kinetic": disc.kinetic_energy(N),
              "potential": m * g * Dmc.pos_from(O).dot(N.z), "frames": {"N": N, "R": R}}
    return system, extras


def rolling_disc() -> Model:
    """The rolling disc (see the module docstring)."""
    system, ex = rolling_disc_system()
    km, eom = system.form(name="rolling-disc")
    q1, q2, q3, q4, q5 = ex["q"]
    u1, u2, u3, u4, u5 = ex["u"]
    r, m, g = ex["r"], ex["m"], ex["g"]
    constants = {r: 0.3, m: 2.0, g: 9.81}
    initial = {q1: 0.0, q2: math.radians(5.0), q3: 0.0, q4: 0.0, q5: 0.0, u1: 0.0, u2: 7.0, u3: 0.0}

    def steady_roll(op_parameters: dict, values: dict) -> dict:
        v = float(op_parameters.get("v", 2.0))
        return {q1: 0.0, q2: 0.0, q3: 0.0, q4: 0.0, q5: 0.0,
                u1: 0.0, u2: v / values[r], u3: 0.0, u4: v, u5: 0.0}

    kinetic = sm.sympify(ex["kinetic"]).xreplace(eom.kindiffdict)
    potential = ex["potential"]
    rim = [f"rim{k}" for k in range(RIM_POINTS)] + ["rim0"]
    drawing = Drawing(points=ex["points"], lines=[rim, ["center", "rim0"], ["center", "contact"]],
                      traces=("contact",), view="3d")
    N, R = ex["frames"]["N"], ex["frames"]["R"]
    scene = Scene(
        N, None,
        VisualizationFrame("disc", R, "center", Cylinder(0.02, r, color="#1f77b4", opacity=0.85)),
        VisualizationFrame("rim", R, "center", Torus(r, 0.012, color="#222222")),
        Segment("spoke", "center", "rim0", radius=0.008, color="#f2c14e"),
        VisualizationFrame("marker", None, "rim0", Sphere(0.025, color="#d62728")),
        points=ex["points"], traces=("contact",), up="z", follow="disc", name="rolling-disc")
    return Model.create(
        name="rolling-disc", description=DESCRIPTION, eom=eom, method=km, constants=constants,
        initial_state=initial, t_span=(0.0, 10.0), drawing=drawing,
        **energy_fields(kinetic, potential, lean_angle=q2, contact_speed=sm.sqrt(u4**2 + u5**2)),
        op_parameters={"v": 2.0}, operating_point_rule=steady_roll, references=REFERENCES,
        scene=scene)
