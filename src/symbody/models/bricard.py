"""IFToMM benchmark A04: the Bricard mechanism (6R loop, 1 dof, one redundant constraint).

Five bars of length l, mass m and square section a (uniform bricks) and the ground form a
closed loop of six revolute joints.  At the initial (reference) configuration the corners
are O = (0,0,0), P1 = (l,0,0), P3 = (l,-l,0), P4 = (l,-l,l), P5 = (0,-l,l), G = (0,0,l);
bar k spans corner k -> corner k+1, the ground closes G -> O.  Joint axes there: y at O,
z at P1, x at P3, y at P4, z at P5, x at G (each normal to both bars it joins).

Coordinates: relative joint angles q1..q5 of the open chain O -> G, frames
B1 = N rot_y(q1), B2 = B1 rot_z(q2), B3 = B2 rot_x(q3), B4 = B3 rot_y(q4), B5 = B4 rot_z(q5);
u = q'.  The closing joint at G gives five holonomic equations

    loop_x, loop_y, loop_z = (chain end - G) . N.x, N.y, N.z,
    axis_y, axis_z        = B5.x . N.y, B5.x . N.z          (B5.x stays along N.x)

of rank 4 (Gruebler: 0 dof; Bricard's geometry: 1 dof).  By default the model is formed
with q1 independent, q2..q5 dependent and the four equations loop_x, loop_y, loop_z,
axis_z; ``redundant_constraints`` holds the dropped axis_y, which the motion satisfies too
(the four equations' Jacobian in q2..q5 keeps its smallest singular value above 0.43 over
the benchmark's 10 s).  ``bricard(redundant=True)`` forms it with all five equations (named):
compile and simulate then find the redundant one at the assembled configuration, name it
(:class:`~symbody.RedundantConstraintWarning`) and simulate with an independent four
(:mod:`symbody.compilation.redundant`).  All five residuals are outputs.  Gravity -g N.y;
starts at rest.  The benchmark's output is P3 (x, y, z) over 10 s.
"""

from __future__ import annotations

import sympy as sm
from sympy.physics.mechanics import RigidBody, outer
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from ..compat.sympy import TIME
from ..scene import Scene, Segment, Sphere, VisualizationFrame
from .base import Drawing, KaneSystem, Model, energy_fields, point_coordinates, rotated_frame

__all__ = ["bricard", "bricard_system", "REDUNDANT"]

t = TIME

DESCRIPTION = "IFToMM benchmark A04: Bricard 6R loop, 1 dof, one redundant loop equation"
REFERENCES = ("IFToMM multibody benchmark library, problem A04 "
              "(http://lim.ii.udc.es/mbsbenchmark/dist/A04/A04_specification.xml); geometry as in "
              "the OpenSim port (RehabEngGroup/MBSbenchmarksInOpenSim, A04): bars 1 m, 1 kg, "
              "0.1 m square section, g = 9.81 in -y, at rest, 10 s; output P3 (x, y, z).")

#: the loop equation left out of the formed equations (it depends on the other four)
REDUNDANT = ("axis_y",)


def _brick(frame: ReferenceFrame, axis: str, m: sm.Expr, l: sm.Expr, a: sm.Expr):
    """Inertia dyadic of a uniform l x a x a bar along ``frame``'s ``axis``."""
    it = m * (l ** 2 + a ** 2) / 12
    ia = m * a ** 2 / 6
    units = {"x": frame.x, "y": frame.y, "z": frame.z}
    terms = [(ia if name == axis else it) * outer(v, v) for name, v in units.items()]
    return terms[0] + terms[1] + terms[2]


def bricard_system(redundant: bool = False) -> tuple[KaneSystem, dict]:
    """Kinematics, loads and the five loop equations; returns (KaneSystem, extras dict).

    ``redundant``: give KanesMethod all five loop equations ({name: expression}) instead of
    the four independent ones."""
    q = dynamicsymbols("q1:6")
    u = dynamicsymbols("u1:6")
    m, l, a, g = sm.symbols("m, l, a, g")
    N = ReferenceFrame("N")
    B1 = rotated_frame("B1", N, q[0], "y")
    B2 = rotated_frame("B2", B1, q[1], "z")
    B3 = rotated_frame("B3", B2, q[2], "x")
    B4 = rotated_frame("B4", B3, q[3], "y")
    B5 = rotated_frame("B5", B4, q[4], "z")
    frames = [B1, B2, B3, B4, B5]
    # bar directions (from its first to its second joint) and long axes in the bar frames
    directions = [B1.x, -B2.y, B3.z, -B4.x, B5.y]
    long_axes = ["x", "y", "z", "x", "y"]
    O = Point("O")
    O.set_vel(N, 0)
    joints = [O]
    centres = []
    for k, (F, d) in enumerate(zip(frames, directions, strict=True)):
        c = Point(f"C{k + 1}")
        c.set_pos(joints[-1], l / 2 * d)
        c.v2pt_theory(joints[-1], N, F)
        nxt = Point(f"J{k + 1}")
        nxt.set_pos(joints[-1], l * d)
        nxt.v2pt_theory(joints[-1], N, F)
        centres.append(c)
        joints.append(nxt)
    end = joints[-1]
    loop = end.pos_from(O) - l * N.z
    equations = {"loop_x": loop.dot(N.x), "loop_y": loop.dot(N.y), "loop_z": loop.dot(N.z),
                 "axis_y": B5.x.dot(N.y), "axis_z": B5.x.dot(N.z)}
    kept = [name for name in equations if redundant or name not in REDUNDANT]
    fh = [equations[name] for name in kept]
    qd_u = {qi.diff(t): ui for qi, ui in zip(q, u, strict=True)}
    fhd = [sm.diff(e, t).xreplace(qd_u) for e in fh]
    kd = [qi.diff(t) - ui for qi, ui in zip(q, u, strict=True)]
    bodies = [RigidBody(f"bar{k + 1}", c, F, m, (_brick(F, ax, m, l, a), c))
              for k, (c, F, ax) in enumerate(zip(centres, frames, long_axes, strict=True))]
    loads = [(c, -m * g * N.y) for c in centres]
    system = KaneSystem(frame=N, q_ind=[q[0]], u_ind=[u[0]], kd_eqs=kd, bodies=bodies, loads=loads,
                        q_dep=list(q[1:]),
                        configuration_constraints=dict(zip(kept, fh, strict=True)) if redundant else fh,
                        u_dep=list(u[1:]), velocity_constraints=fhd)
    names = ["O", "P1", "P3", "P4", "P5", "G_end"]
    points = {name: point_coordinates(P, O, N) for name, P in zip(names, joints, strict=True)}
    points["G"] = sm.Matrix([0, 0, l])
    kinetic = sum(b.kinetic_energy(N) for b in bodies).xreplace(qd_u)
    potential = sum(m * g * c.pos_from(O).dot(N.y) for c in centres)
    return system, {"symbols": {"m": m, "l": l, "a": a, "g": g}, "q": q, "u": u,
                    "points": points, "kinetic": kinetic, "potential": potential,
                    "equations": equations, "kept": kept}


def bricard(redundant: bool = False) -> Model:
    """The A04 Bricard mechanism (see the module docstring); ``redundant``: formed with all
    five loop equations."""
    if not isinstance(redundant, bool):
        raise TypeError(f"bricard(redundant=...) takes True or False, got {redundant!r}")
    system, ex = bricard_system(redundant)
    km, eom = system.form(name="bricard")
    s = ex["symbols"]
    constants = {s["m"]: 1.0, s["l"]: 1.0, s["a"]: 0.1, s["g"]: 9.81}
    state = {qi: 0.0 for qi in ex["q"]}
    state[ex["u"][0]] = 0.0
    pts = ex["points"]
    order = ["O", "P1", "P3", "P4", "P5", "G_end"]
    drawing = Drawing(points=pts, lines=[order + ["G", "O"]], traces=("P3",), view="3d")
    bar = 0.05
    scene = Scene(
        ReferenceFrame("N"), None,
        *[Segment(f"bar {k + 1}", a_, b_, radius=bar, color="#1f77b4")
          for k, (a_, b_) in enumerate(zip(order[:-1], order[1:], strict=True))],
        Segment("ground link", "G", "O", radius=bar, color="#9aa0a6"),
        VisualizationFrame("P3", None, "P3", Sphere(0.07, color="#d62728")),
        points=pts, traces=("P3",), up="y", name="bricard")
    residuals = {f"closure_{name}": e for name, e in ex["equations"].items()}
    return Model.create(
        name="bricard", description=DESCRIPTION, eom=eom, method=km, constants=constants,
        initial_state=state, t_span=(0.0, 10.0), drawing=drawing,
        **energy_fields(ex["kinetic"], ex["potential"], x_P3=pts["P3"][0], y_P3=pts["P3"][1],
                        z_P3=pts["P3"][2], **residuals),
        references=REFERENCES, scene=scene,
        redundant_constraints={} if redundant else {name: ex["equations"][name] for name in REDUNDANT})
