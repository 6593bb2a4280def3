"""An OpenSim model the SymPy way: a ``sympy.physics.mechanics.System``.

One RigidBody per OpenSim body (mass, mass centre, central inertia in the body frame), on the
ground frame ``N``.  Pin, Slider, Weld and Gimbal joints are SymPy's ``PinJoint``,
``PrismaticJoint``, ``WeldJoint`` and ``SphericalJoint`` (body-fixed 1-2-3, u = q') between
the joint's parent frame F and child frame M (fixed intermediate frames at their
placements); the other joints (Ball and Free, whose speeds are the angular velocity in F;
Universal, Planar, CustomJoint with its functions) are written out: the body frame is
oriented by the mobilizer's R_FM(q) (``orient_explicit``) with its angular velocity and its
origin's velocity set from the mobilizer's H(q) u, and the kinematic equations q' = N(q) u
added to the System.  Loads: gravity on every body, the force builders' SymPy loads, their
:mod:`~.forces.system_form` loads (:mod:`.system_loads`: point forces, body torques, mobility
forces as wrenches on the joints) and the contact forces (on the bodies' material points at
the contact points); a force without a System form (muscles and path forces) is named in
``SystemParts.left_out`` and by a warning of ``model.system`` and :func:`system_eom`;
constraints: the model's holonomic rows with their velocity constraints.  The System is for
users who add loads, actuators or constraints; :func:`system_eom` forms its equations with
symbody's KanesMethod (SymPy's vector algebra: for small models).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
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
    SphericalJoint,
    System,
    WeldJoint,
    inertia,
)
from sympy.physics.vector import Vector

from .system_loads import LoadMaker, form_loads, has_system_form

if TYPE_CHECKING:
    from ..formulation.eom import EquationsOfMotion
    from .model import OpenSimModel

__all__ = ["SystemParts", "build_system", "system_eom", "warn_left_out"]

_PATHS = r"\s*Velocity of .* automatically calculated"
_SYMPY_JOINTS = ("PinJoint", "SliderJoint", "WeldJoint", "GimbalJoint")


@dataclass
class SystemParts:
    """The System and where things are: ``frames``/``points`` (body name -> its frame and
    origin; the ground under its OpenSim name), ``bodies`` (name -> RigidBody), ``joints``
    (the SymPy Joint objects), ``written_out`` (names of the joints written out),
    ``left_out`` (the force elements whose generalized forces are not on the System)."""

    system: System
    frames: dict
    points: dict
    bodies: dict
    joints: list
    written_out: list
    left_out: list = field(default_factory=list)


def _num(x: float):
    x = float(x)
    if abs(x) < 1e-15:
        return sm.S.Zero
    return sm.Integer(int(round(x))) if x == round(x) and abs(x) < 1e6 else sm.Float(x)


def _vector(frame: ReferenceFrame, v) -> Any:
    return sum((c * e for c, e in zip(v, (frame.x, frame.y, frame.z)) if c != 0), sm.S.Zero * frame.x)


def _matrix(R) -> sm.Matrix:
    return sm.Matrix(3, 3, [_num(v) for v in np.asarray(R, dtype=float).ravel()])


def build_system(model: OpenSimModel) -> SystemParts:
    """The SymPy System of ``model`` (see the module docstring)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_PATHS)
        return _build(model)


def warn_left_out(model: OpenSimModel, parts: SystemParts, what: str) -> None:
    """An :class:`~.model.OpenSimImportWarning` naming the forces not on the System
    (``parts.left_out``), if any."""
    if not parts.left_out:
        return
    from .model import OpenSimImportWarning
    names = "; ".join(parts.left_out[:8]) + (f"; and {len(parts.left_out) - 8} more"
                                             if len(parts.left_out) > 8 else "")
    warnings.warn(f"{model.spec.where}: {what} leaves out the force(s) {names}: they have no "
                  f"SymPy System form here (their generalized forces are in model.eom only; "
                  f"see model.system_parts.left_out)", OpenSimImportWarning, stacklevel=4)


def _placed(frames: dict, points: dict, placement, label: str) -> tuple:
    """A frame and point fixed in a body at a placement (the body's own when trivial)."""
    B, O = frames[placement.body], points[placement.body]
    if np.allclose(placement.R, np.eye(3), atol=0, rtol=0):
        F = B
    else:
        F = ReferenceFrame(label)
        F.orient_explicit(B, _matrix(placement.R))
    P = O if not np.any(placement.p) else O.locatenew(f"{label}_origin",
                                                       _vector(B, [_num(x) for x in placement.p]))
    return F, P


def _build(model: OpenSimModel) -> SystemParts:
    spec = model.spec
    conv = model.sympy_converter
    N = ReferenceFrame(spec.ground)
    O = Point(f"{spec.ground}_origin")
    O.set_vel(N, 0)
    system = System(N, O)
    frames, points, bodies = {spec.ground: N}, {spec.ground: O}, {}
    ground_body = RigidBody(spec.ground, masscenter=O, frame=N, mass=0,
                            inertia=Inertia(inertia(N, 0, 0, 0), O))
    bodies[spec.ground] = ground_body
    joints, written = [], []
    index = {c: k for k, c in enumerate(model.simbody_coordinate_names)}
    q_of = dict(zip(model.simbody_coordinate_names, model.tree_coordinates))
    u_of = dict(zip(model.simbody_coordinate_names, model.tree_speeds))
    kdes = []
    for node in model.tree.nodes[1:]:
        j = node.joint
        b = spec.bodies[node.name]
        C = ReferenceFrame(node.name)
        Oc = Point(f"{node.name}_origin")
        com = Oc.locatenew(f"{node.name}_com", _vector(C, [_num(x) for x in b.com]))
        I = b.inertia
        body = RigidBody(node.name, masscenter=com, frame=C, mass=_num(b.mass),
                         inertia=Inertia(inertia(C, _num(I[0, 0]), _num(I[1, 1]), _num(I[2, 2]),
                                                 _num(I[0, 1]), _num(I[1, 2]), _num(I[0, 2])),
                                         com))
        bodies[node.name] = body
        frames[node.name], points[node.name] = C, Oc
        F, Pf = _placed(frames, points, j.parent, f"{j.name}_F")
        Mf, Pm = _placed(frames, points, j.child, f"{j.name}_M")
        parent = bodies[j.parent.body]
        qs = [q_of[c.name] for c in j.coordinates]
        us = [u_of[c.name] for c in j.coordinates]
        kw = dict(parent_point=Pf, child_point=Pm, parent_interframe=F, child_interframe=Mf)
        if j.type == "PinJoint":
            joints.append(PinJoint(j.name, parent, body, coordinates=qs[0], speeds=us[0],
                                   joint_axis=F.z, **kw))
        elif j.type == "SliderJoint":
            joints.append(PrismaticJoint(j.name, parent, body, coordinates=qs[0], speeds=us[0],
                                         joint_axis=F.x, **kw))
        elif j.type == "WeldJoint":
            joints.append(WeldJoint(j.name, parent, body, **kw))
        elif j.type == "GimbalJoint":
            joints.append(SphericalJoint(j.name, parent, body, coordinates=qs, speeds=us,
                                         rot_type="BODY", rot_order=123, **kw))
        else:
            _write_out(model, node, conv, frames, points, F, Pf, C, Oc, N)
            written.append(j.name)
            t = model.kinematic_equations.t
            qdot = model.kinematic_equations.kindiffdict
            kdes += [q.diff(t) - qdot[q.diff(t)] for q in qs]
            system.add_coordinates(*qs)
            system.add_speeds(*us)
    system.add_bodies(*[bodies[n.name] for n in model.tree.nodes[1:]])
    system.add_joints(*joints)
    if kdes:
        system.add_kdes(*kdes)
    _order_variables(model, system)
    if model.q_dep:
        kin = model.kinematic_equations
        system.add_holonomic_constraints(*kin.holonomic)
        vel = sm.Matrix(kin.velocity_matrix) * sm.Matrix(model.speeds) \
            + sm.Matrix(kin.velocity_rest)
        system.add_nonholonomic_constraints(*vel)
    gvec = _vector(N, [_num(x) for x in (model.gravity / np.linalg.norm(model.gravity)
                                         if model.gravity.any() else np.zeros(3))]) * model.g
    loads = [Force(bd.masscenter, bd.mass * gvec) for n, bd in bodies.items()
             if n != spec.ground and bd.mass != 0]
    maker = LoadMaker(model, frames, points, N)
    left_out = []
    for c in model.force_contributions:
        loads += list(c.loads)
        for load in c.contact_loads:
            loads += _contact_forces(load, frames, points, N, spec.ground)
        loads += form_loads(model, c, frames, points, N, maker)
        if not has_system_form(c):
            left_out.append(c.source or repr(c.record))
    system.add_loads(*loads)
    del index
    return SystemParts(system, frames, points, bodies, joints, written, left_out)


def _contact_forces(load, frames: dict, points: dict, N: ReferenceFrame, ground: str) -> list:
    """The SymPy ``Force`` loads of a :class:`~.forces.contact_geometry.ContactLoad`: F on
    the sphere's body and -F on the half-space's, at their material points at the contact
    point (velocity v_O + ω × r: the point moves in the bodies).  The force laws' long
    expressions are put in unevaluated (SymPy's assumptions on their Piecewise conditions
    take seconds)."""
    if load.other.kind == "ContactSphere":
        return _sphere_pair_forces(load, frames, points, N, ground)
    rec, sphere, plane = load.record, load.sphere, load.other
    H, _ = _placed(frames, points, plane.placement, f"{rec.name}_half_space")
    fn, (ft1, ft2) = rec.normal_force, rec.friction_force
    C, O = frames[sphere.placement.body], points[sphere.placement.body]
    v_O, w_C = O.vel(N), C.ang_vel_in(N)
    with sm.evaluate(False):
        # n = -x_H, t1 = z_H, t2 = y_H (contact_geometry): F = F_n n + F_t1 t1 + F_t2 t2
        force = Vector([(sm.Matrix([-fn, ft2, ft1]), H)])
        reaction = Vector([(sm.Matrix([fn, -ft2, -ft1]), H)])
    # P = c - (R - δ (1/2 + shift)) n, δ = -gap
    reach = _num(sphere.radius) + rec.gap * (sm.Rational(1, 2) + _num(load.shift))
    r = _vector(C, [_num(x) for x in sphere.placement.p]) + reach * H.x
    P = O.locatenew(f"{rec.name}_P", r)
    P.set_vel(N, v_O + w_C.cross(r))
    out = [Force(P, force)]
    if plane.placement.body != ground:
        B, Ob = frames[plane.placement.body], points[plane.placement.body]
        rb = P.pos_from(Ob)
        Pb = Ob.locatenew(f"{rec.name}_P_on_{plane.placement.body}", rb)
        Pb.set_vel(N, Ob.vel(N) + B.ang_vel_in(N).cross(rb))
        out.append(Force(Pb, reaction))
    return out


def _sphere_pair_forces(load, frames: dict, points: dict, N: ReferenceFrame,
                        ground: str) -> list:
    """The loads of two spheres' contact: F = F_n n + (F_t1, F_t2, F_t3) along the ground's
    axes on b (``load.sphere``) at P = c_a + (r_a + g (1/2 - shift)) n and -F on a
    (``load.other``), n = (c_b - c_a)/|c_b - c_a|, |c_b - c_a| = g + r_a + r_b."""
    rec, a, b = load.record, load.other, load.sphere
    fn, (f1, f2, f3), gap = rec.normal_force, rec.friction_force, rec.gap
    centre = {}
    for shape in (a, b):
        B = frames[shape.placement.body]
        centre[shape.name] = _vector(B, [_num(x) for x in shape.placement.p])
    d = (points[b.placement.body].pos_from(points[a.placement.body])
         + centre[b.name] - centre[a.name])
    n = d / (gap + _num(a.radius) + _num(b.radius))
    reach = _num(a.radius) + gap * (sm.Rational(1, 2) - _num(load.shift))
    with sm.evaluate(False):
        force = Vector([(sm.Matrix([f1, f2, f3]), N)])
    force = force + fn * n
    out = []
    # P from each body's origin: c_a + reach n = c_b - d + reach n
    for shape, r, sign in ((b, centre[b.name] - d + reach * n, 1),
                           (a, centre[a.name] + reach * n, -1)):
        body = shape.placement.body
        if body == ground:
            continue
        B, O = frames[body], points[body]
        P = O.locatenew(f"{rec.name}_P_on_{body}", r)
        P.set_vel(N, O.vel(N) + B.ang_vel_in(N).cross(r))
        out.append(Force(P, sign * force))
    return out


def _rotations(model: OpenSimModel, node, conv) -> list:
    """The joint's rotation as a sequence of (unit axis (3 numbers, in the frame rotated so
    far), angle (SymPy)), R_FM their product."""
    j = node.joint
    q = [conv(e) for e in model.joint_transforms[node.index].mob.q]
    X, Y, Z = np.eye(3)
    if j.type in ("BallJoint", "FreeJoint"):
        return [(X, q[0]), (Y, q[1]), (Z, q[2])]
    if j.type == "UniversalJoint":
        return [(X, q[0]), (Y, q[1])]
    if j.type == "PlanarJoint":
        return [(Z, q[0])]
    out = []
    sym = dict(zip([c.name for c in j.coordinates], model.joint_transforms[node.index].mob.q))
    for ax in j.axes[:3]:
        f = ax.function
        angle = f.expression([sym[c] for c in ax.coordinates] if f.nargs else [])
        if not (angle.is_Number and float(angle) == 0.0):
            out.append((ax.axis, conv(angle)))
    return out


def _write_out(model, node, conv, frames, points, F, Pf, C, Oc, N) -> None:
    """Orient C and place Oc by the mobilizer (R_FM as simple rotations, p_FM, H(q) u) of the
    node's joint."""
    jt = model.joint_transforms[node.index]
    mob = jt.mob
    j = node.joint
    prev = F
    for k, (axis, angle) in enumerate(_rotations(model, node, conv)):
        A = ReferenceFrame(f"{j.name}_r{k + 1}")
        A.orient_axis(prev, _vector(prev, [_num(x) for x in axis]), angle)
        prev = A
    # prev is the child frame M; C's axes are M's turned by the placement of M in C
    C.orient_explicit(prev, _matrix(np.asarray(j.child.R, dtype=float)).T)
    ws = [conv(e) for e in _column_sum(jt.Sw, jt.u)]
    C.set_ang_vel(F, _vector(C, ws))
    p_FM = [conv(e) for e in mob.p]
    # C's origin: F's origin + p_FM (in F) - (M's origin in C)
    Oc.set_pos(Pf, _vector(F, p_FM) - _vector(C, [_num(x) for x in j.child.p]))
    vs = [conv(e) for e in _column_sum(jt.Sv, jt.u)]
    parent_frame, Op = frames[j.parent.body], points[j.parent.body]
    w_P = parent_frame.ang_vel_in(N)
    # velocities from the parent origin's (set, never derived: SymPy's derivation through the
    # frames' direction cosines is slow), v = v_Op + ω_P × r
    v_Pf = Op.vel(N) if Pf is Op else Op.vel(N) + w_P.cross(Pf.pos_from(Op))
    Oc.set_vel(N, v_Pf + w_P.cross(Oc.pos_from(Pf)) + _vector(C, vs))


def _column_sum(cols: list, u: list) -> list:
    out = [0, 0, 0]
    for col, uj in zip(cols, u):
        for i in range(3):
            out[i] = out[i] + col[i] * uj
    return out


def _order_variables(model: OpenSimModel, system: System) -> None:
    """The System's q and u in the model's order (independent first)."""
    system.q_ind, system.q_dep = model.q_ind, model.q_dep
    system.u_ind, system.u_dep = model.u_ind, model.u_dep


def system_eom(model: OpenSimModel, loads: Any = (), name: str | None = None) -> EquationsOfMotion:
    """The equations of ``model.system`` (and ``loads``) by symbody's KanesMethod with the
    model's coordinates, speeds and constraints (SymPy's vector algebra: small models): the
    System's loads and its actuators' loads.  Warns (:class:`~.model.OpenSimImportWarning`)
    naming the model's forces that are not on the System (``model.system_parts.left_out``)."""
    from ..formulation.kane import KanesMethod

    parts = model.system_parts
    warn_left_out(model, parts, "system_eom")
    system = parts.system
    kd = [qd - e for qd, e in model.eom.kindiffdict.items()]
    vel = list(sm.Matrix(model.eom.velocity_matrix) * sm.Matrix(model.speeds)
               + sm.Matrix(model.eom.velocity_rest))
    km = KanesMethod(system.frame, q_ind=list(model.q_ind), u_ind=list(model.u_ind), kd_eqs=kd,
                     q_dependent=list(model.q_dep),
                     configuration_constraints=list(model.eom.holonomic) or None,
                     u_dependent=list(model.u_dep), velocity_constraints=vel or None)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_PATHS)
        actuated = [ld for a in system.actuators for ld in a.to_loads()]
        km.kanes_equations(list(system.bodies), list(system.loads) + actuated + list(loads))
    return km.to_eom(name=name or f"{model.name} (System)")
