"""The robot the SymPy way: a ``sympy.physics.mechanics.System``, link frames, a scene.

One RigidBody per merged body (mass m, mass centre at h/m, inertia I_o about the body
origin, all in the body frame), joined by PinJoint / PrismaticJoint with the URDF origin
(a fixed intermediate frame J in the parent with P.dcm(J) = R_p, at p_p) and axis; a
free-flyer base is oriented by its quaternion (SymPy's ``orient_quaternion``) with the
angular velocity ω and the origin velocity v in the base frame, and the quaternion norm as
the holonomic constraint.  Loads: gravity on every body, the joint inputs tau and the URDF
damping/friction as torque (or force) pairs on the joint.  The System is for users who add
loads, actuators or constraints; :func:`system_eom` forms its equations with symbody's
KanesMethod (SymPy's vector algebra: for small robots).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy as sm
from sympy.physics.mechanics import (
    Force,
    Inertia,
    PinJoint,
    Point,
    PrismaticJoint,
    ReferenceFrame,
    RigidBody,
    System,
    Torque,
    inertia,
)

if TYPE_CHECKING:
    from ..formulation.eom import EquationsOfMotion
    from ..scene import Scene
    from .robot import Robot

__all__ = ["SystemParts", "build_system", "build_scene", "system_eom"]


@dataclass
class SystemParts:
    system: System
    link_frames: dict
    link_points: dict
    world_frame: ReferenceFrame
    world_origin: Point
    bodies: list


def _num(x: float):
    return sm.Integer(int(round(x))) if float(x) == round(x) else sm.Float(x)


def _matrix(A) -> sm.Matrix:
    return sm.Matrix(3, 3, [_num(v) if abs(v) >= 1e-13 else 0 for v in A.ravel()])


def _vector(frame: ReferenceFrame, v) -> Any:
    c = [_num(x) if abs(x) >= 1e-13 else 0 for x in v]
    return c[0] * frame.x + c[1] * frame.y + c[2] * frame.z


def _body_inertia(robot: Robot, b, frame: ReferenceFrame, origin: Point, name: str) -> RigidBody:
    if robot.symbolic_inertia and not (b.index == 0 and not robot.floating_base):
        k = 10 * (b.index if robot.floating_base else b.index - 1)
        m, hx, hy, hz, xx, xy, yy, xz, yz, zz = robot.parameters[k:k + 10]
    else:
        m = _num(b.mass)
        hx, hy, hz = (_num(x) for x in b.h)
        I = b.I_o
        xx, xy, yy, xz, yz, zz = (_num(x) for x in (I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2],
                                                     I[2, 2]))
    if m == 0:
        mc = origin
    else:
        mc = origin.locatenew(f"{name}_com", (hx * frame.x + hy * frame.y + hz * frame.z) / m)
    return RigidBody(name, masscenter=mc, frame=frame, mass=m,
                     inertia=Inertia(inertia(frame, xx, yy, zz, xy, yz, xz), origin))


_PATHS = r"\s*Velocity of .* automatically calculated"


def build_system(robot: Robot) -> SystemParts:
    """The SymPy System of ``robot`` (see the module docstring)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_PATHS)   # see system_eom
        parts = _build_system(robot)
        if robot.ground_contacts:          # the same contacts, by symbody.contact on the link frames
            from .ground_contact import system_contacts
            parts.system.add_loads(*[load for c in system_contacts(robot, parts) for load in c.to_loads()])
        return parts


def _build_system(robot: Robot) -> SystemParts:
    tree = robot.tree
    N = ReferenceFrame("world")
    O = Point("world_origin")
    O.set_vel(N, 0)
    system = System(N, O)
    frames, points, rbodies = [], [], []
    root = tree.bodies[0]
    rname = f"body_{root.name}"
    if robot.floating_base:
        B = ReferenceFrame(rname)
        x, y, z, qx, qy, qz, qw = robot.tree_coordinates[:7]
        vx, vy, vz, wx, wy, wz = robot.tree_speeds[:6]
        R_o, p_o = tree.base_placement     # the frame of the coordinates (a floating joint's)
        F0, O0 = N, O
        if not np.array_equal(R_o, np.eye(3)) or p_o.any():
            F0 = ReferenceFrame(f"{rname}_coordinates")
            F0.orient_explicit(N, _matrix(R_o))
            O0 = O.locatenew(f"{rname}_coordinates_origin", _vector(N, p_o))
        B.orient_quaternion(F0, (qw, qx, qy, qz))
        B.set_ang_vel(N, wx * B.x + wy * B.y + wz * B.z)
        Ob = O0.locatenew(f"{rname}_origin", x * F0.x + y * F0.y + z * F0.z)
        Ob.set_vel(N, vx * B.x + vy * B.y + vz * B.z)
        base = _body_inertia(robot, root, B, Ob, rname)
        system.add_bodies(base)
        system.add_coordinates(*robot.tree_coordinates[:6], independent=True)
        system.add_coordinates(qw, independent=False)
        system.add_speeds(*robot.tree_speeds[:6])
        qd = robot.eom.kindiffdict
        system.add_kdes(*[c.diff(robot.eom.t) - qd[c.diff(robot.eom.t)]
                          for c in robot.tree_coordinates[:7]])
        system.add_holonomic_constraints(qx ** 2 + qy ** 2 + qz ** 2 + qw ** 2 - 1)
    else:
        B, Ob = N, O
        base = RigidBody(rname, masscenter=O, frame=N, mass=0,
                         inertia=Inertia(inertia(N, 0, 0, 0), O))
        system.add_bodies(base)
    frames.append(B)
    points.append(Ob)
    rbodies.append(base)
    lay = robot.tree_layout
    gdir = robot.gravity_direction
    loads = []
    index = {b.joint.name: i for i, b in enumerate(tree.moving)}
    for i, b in enumerate(tree.moving, start=0):
        parent = rbodies[b.parent]
        name = f"body_{b.name}"
        C = ReferenceFrame(name)
        Oc = Point(f"{name}_origin")
        child = _body_inertia(robot, b, C, Oc, name)
        J = ReferenceFrame(f"{name}_joint")
        J.orient_explicit(frames[b.parent], _matrix(b.R_p))
        j = b.joint
        qs = robot.tree_coordinates[lay.q_slices[i + 1]]
        us = robot.tree_speeds[lay.u_slices[i + 1]]
        q, u = qs[0], us[0]
        axis = _vector(J, j.axis)
        Pj = points[b.parent].locatenew(f"{name}_joint_point", _vector(frames[b.parent], b.p_p))
        frames.append(C)
        points.append(Oc)
        rbodies.append(child)
        if j.type in ("planar", "floating"):
            Pj.v2pt_theory(points[b.parent], N, frames[b.parent])
            _free_joint(robot, system, (j, J, Pj, C, Oc), qs, us, N)
            system.add_bodies(child)
            loads += _multi_dof_loads(robot, j, (frames[b.parent], points[b.parent], C, Oc),
                                      us, N)
            continue
        kw = dict(coordinates=q, speeds=u, parent_point=Pj,
                  child_point=Oc, parent_interframe=J, joint_axis=axis)
        if j.type == "prismatic":
            joint = PrismaticJoint(j.name, parent, child, **kw)
        else:
            joint = PinJoint(j.name, parent, child, **kw)
        system.add_joints(joint)
        # joint loads: the input (non-mimic joints), damping, friction along the axis
        gen = 0
        if j.mimic is None:
            gen = gen + robot.inputs[robot.input_names.index(j.name)]
        if robot.joint_dynamics:
            gen = gen - _num(j.damping) * u - _num(j.friction) * sm.sign(u)
        for controller in robot.controllers:       # a PD controller's torque (joint_control)
            if j.name in controller.joints:
                k = controller.joints.index(j.name)
                gen = gen + controller.kp[k] * (controller.reference[k] - q) - controller.kd[k] * u
        if gen != 0:
            a = _vector(C, j.axis)
            if j.type == "prismatic":
                # the reaction on the parent at the same place, a point fixed in the parent
                Pr = points[b.parent].locatenew(f"{name}_reaction", Oc.pos_from(points[b.parent]))
                Pr.v2pt_theory(points[b.parent], N, frames[b.parent])
                loads += [Force(Oc, gen * a), Force(Pr, -gen * a)]
            else:
                loads += [Torque(C, gen * a), Torque(frames[b.parent], -gen * a)]
    system.q_ind, system.q_dep = robot.q_ind, robot.q_dep
    system.u_ind, system.u_dep = robot.u_ind, robot.u_dep
    for i, b in enumerate(tree.moving):
        if b.joint.mimic is not None:
            target, a, off = b.joint.mimic
            k = index[target]
            qi, qk = lay.q_slices[i + 1].start, lay.q_slices[k + 1].start
            ui, uk = lay.u_slices[i + 1].start, lay.u_slices[k + 1].start
            system.add_holonomic_constraints(robot.tree_coordinates[qi]
                                             - a * robot.tree_coordinates[qk] - off)
            system.add_nonholonomic_constraints(robot.tree_speeds[ui]
                                                - a * robot.tree_speeds[uk])
    # gravity on every body with mass
    g = robot.g
    gvec = _vector(N, gdir) * g
    for rb in rbodies:
        if rb.mass != 0 and not (rb is base and not robot.floating_base):
            loads.append(Force(rb.masscenter, rb.mass * gvec))
    system.add_loads(*loads)
    link_frames, link_points = {}, {}
    if tree.world_link is not None:
        link_frames[tree.world_link], link_points[tree.world_link] = N, O
    for link, (bi, R, p) in tree.link_body.items():
        F, P = frames[bi], points[bi]
        if not np.array_equal(R, np.eye(3)):
            L = ReferenceFrame(f"link_{link}")
            L.orient_explicit(F, _matrix(R))
        else:
            L = F
        link_frames[link] = L
        link_points[link] = P if not any(abs(x) >= 1e-13 for x in p) else P.locatenew(
            f"link_{link}_origin", _vector(F, p))
    return SystemParts(system, link_frames, link_points, N, O, rbodies)


def _free_joint(robot: Robot, system: System, where: tuple, qs: list, us: list,
                N: ReferenceFrame) -> None:
    """A planar or floating joint's kinematics (SymPy has no joint with Pinocchio's speeds):
    the child frame C from the joint frame J by Rz(θ) or the quaternion, its origin Oc at
    (x, y[, z]) in J; angular velocity and Oc's velocity relative to J are the speeds, in
    C's axes."""
    j, J, Pj, C, Oc = where
    if j.type == "planar":
        x, y, th = qs
        vx, vy, wz = us
        C.orient_axis(J, J.z, th)
        C.set_ang_vel(J, wz * C.z)
        Oc.set_pos(Pj, x * J.x + y * J.y)
        Oc.set_vel(J, vx * C.x + vy * C.y)
        system.add_coordinates(*qs, independent=True)
    else:
        x, y, z, qx, qy, qz, qw = qs
        vx, vy, vz, wx, wy, wz = us
        C.orient_quaternion(J, (qw, qx, qy, qz))
        C.set_ang_vel(J, wx * C.x + wy * C.y + wz * C.z)
        Oc.set_pos(Pj, x * J.x + y * J.y + z * J.z)
        Oc.set_vel(J, vx * C.x + vy * C.y + vz * C.z)
        system.add_coordinates(*qs[:6], independent=True)
        system.add_coordinates(qw, independent=False)
        system.add_holonomic_constraints(qx ** 2 + qy ** 2 + qz ** 2 + qw ** 2 - 1)
    Oc.v1pt_theory(Pj, N, J)
    system.add_speeds(*us)
    qd = robot.eom.kindiffdict
    system.add_kdes(*[c.diff(robot.eom.t) - qd[c.diff(robot.eom.t)] for c in qs])


def _multi_dof_loads(robot: Robot, j: Any, where: tuple, us: list, N: ReferenceFrame) -> list:
    """The inputs (a planar joint's), damping and friction on each speed of a planar or
    floating joint: a force pair along the child's axis at its origin for a linear speed, a
    torque pair about it for an angular one."""
    P, Op, C, Oc = where
    linear = (C.x, C.y) if j.type == "planar" else (C.x, C.y, C.z)
    angular = (C.z,) if j.type == "planar" else (C.x, C.y, C.z)
    names = robot.speed_names
    loads, Pr = [], None
    for k, (u, e) in enumerate(zip(us, linear + angular)):
        gen = 0
        name = next(n for n, s_ in zip(names, robot.speeds) if s_ == u)
        if name in robot.input_names:
            gen = gen + robot.inputs[robot.input_names.index(name)]
        if robot.joint_dynamics:
            gen = gen - _num(j.damping) * u - _num(j.friction) * sm.sign(u)
        if gen == 0:
            continue
        if k < len(linear):
            if Pr is None:      # the reaction on the parent at the same place
                Pr = Op.locatenew(f"{C.name}_reaction", Oc.pos_from(Op))
                Pr.v2pt_theory(Op, N, P)
            loads += [Force(Oc, gen * e), Force(Pr, -gen * e)]
        else:
            loads += [Torque(C, gen * e), Torque(P, -gen * e)]
    return loads


def system_eom(robot: Robot, loads: Any = (), name: str | None = None) -> EquationsOfMotion:
    """The equations of ``robot.system`` (with whatever the user added to it) and ``loads``,
    formed by symbody's KanesMethod with the coordinates, speeds and constraints of
    ``robot.eom`` (the mimic joints' speeds dependent); its specified inputs are the joint
    inputs and any the user's loads bring, detected and ordered by name (``eom.specifieds``).
    SymPy's vector algebra: meant for small robots (a handful of joints)."""
    from ..formulation.kane import KanesMethod

    parts = robot.system_parts
    system = parts.system
    q_ind, q_dep = list(robot.q_ind), list(robot.q_dep)
    u_ind, u_dep = list(robot.u_ind), list(robot.u_dep)
    kd = [qd - e for qd, e in robot.eom.kindiffdict.items()]
    vel = list(sm.Matrix(robot.eom.velocity_matrix) * sm.Matrix(robot.speeds))
    km = KanesMethod(system.frame, q_ind=q_ind, u_ind=u_ind, kd_eqs=kd, q_dependent=q_dep,
                     configuration_constraints=list(robot.eom.holonomic) or None,
                     u_dependent=u_dep, velocity_constraints=vel or None)
    # (SymPy's System keeps its actuators apart from its loads, as form_eoms adds them)
    actuated = [ld for a in system.actuators for ld in a.to_loads()]
    all_loads = list(system.loads) + actuated + list(loads)
    with warnings.catch_warnings():
        # every point is fixed in a rigid body, so SymPy's velocities along different paths
        # of the point graph agree; its warning that they might not is noise here
        warnings.filterwarnings("ignore", message=_PATHS)
        km.kanes_equations(list(system.bodies), all_loads)
    return km.to_eom(name=name or f"{robot.urdf.name} (System)", specifieds=None)


def build_scene(robot: Robot) -> Scene:
    """A segment from each body's joint to each child joint, a sphere at every joint."""
    from ..scene import Scene, Segment, Sphere, VisualizationFrame

    parts = robot.system_parts
    tree = robot.tree
    items = []
    points = {}
    for b in tree.bodies:
        P = parts.link_points[b.name]
        points[b.name] = P
        items.append(VisualizationFrame(f"joint {b.name}", parts.link_frames[b.name], P,
                                        Sphere(None, color="orange")))
        for c in b.children:
            items.append(Segment(f"{b.name} -> {tree.bodies[c].name}", P,
                                 parts.link_points[tree.bodies[c].name], color="grey"))
    return Scene(parts.world_frame, parts.world_origin, *items, name=robot.urdf.name)
