"""The wrench each joint of a SymPy ``System`` carries, through Kane's auxiliary speeds.

For a joint j (parent P, child C) give the child six auxiliary speeds: a translation
``w_k e_k`` of the joint point J and a rotation ``w_{3+k} e_k`` about it, e_k the axes of the
joint's child frame (``joint.child_interframe``), carried by every body below the joint.  The
auxiliary partial velocities of a point Q and a frame of a body below j are then::

    ∂v_Q/∂w_k = e_k,   ∂v_Q/∂w_{3+k} = e_k × r_{Q/J},   ∂ω/∂w_{3+k} = e_k    (k = 0, 1, 2)

and zero elsewhere.  The joint's wrench (f, n) -- what the parent exerts on the child through
the joint, force at J and moment about J -- does work in these motions only, so Kane's
auxiliary equations F_r + F*_r + (f, n)·e = 0 (the book's chapter on noncontributing forces)
give it: f = Σ (m a - F), n = Σ (r × m a + Ḣ - r × F - T) over the bodies, loads and inertia
forces below the joint (Newton-Euler on the subtree).  Loads are the System's (gravity,
actuators, springs); a load's point or frame belongs to the body whose rigid motion it
shares.  The joint's own actuator torque is such a load, so ``n·axis`` is zero at the real
motion of an ideal joint and the wrench is the joint's constraint wrench.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sm
from sympy.physics.mechanics import Particle, dynamicsymbols
from sympy.physics.vector import Vector

from ..compat.sympy import TIME
from ..errors import InputError

__all__ = ["JointWrenches", "joint_wrenches", "COMPONENTS"]

#: the names of a wrench's components, Pinocchio's order (force, then moment)
COMPONENTS = ("fx", "fy", "fz", "mx", "my", "mz")


@dataclass(frozen=True)
class JointWrenches:
    """The joints' wrenches of a System (see the module docstring).

    ``joints``: the joint names; ``speeds``: the auxiliary speeds (6 per joint);
    ``forces``: the noncontributing unknowns (6 per joint, ``"<joint>_fx"`` ...);
    ``equations``: Kane's auxiliary equations (6 per joint, linear in ``forces``);
    ``wrenches``: per joint the solved wrench, a 6x1 Matrix (force at the joint point,
    moment about it, in the joint's child-frame axes) in q, u, u', the constants and inputs.
    """

    joints: tuple
    speeds: tuple
    forces: tuple
    equations: sm.Matrix
    wrenches: dict

    def matrix(self) -> sm.Matrix:
        """All wrenches as one (n_joints x 6) Matrix, rows in ``joints`` order."""
        return sm.Matrix([list(self.wrenches[j]) for j in self.joints])

    def outputs(self) -> dict:
        """``{"<joint>.fx": expression, ...}``: named outputs for ``simulate(outputs=...)``
        (``outputs={"W": jw.matrix()}`` gives all of them as one (k, n, 6) array)."""
        return {f"{j}.{c}": self.wrenches[j][k] for j in self.joints
                for k, c in enumerate(COMPONENTS)}


def _qdot_map(system: Any) -> dict:
    """q' and q'' in terms of u and u' from the System's kinematic differential equations
    (q'' appears where a point's velocity is the time derivative of its position)."""
    q = list(system.q)
    qd = [c.diff(TIME) for c in q]
    kdes = sm.Matrix(list(system.kdes))
    if not len(kdes):
        return {}
    A = kdes.jacobian(qd)
    rest = kdes.xreplace(dict.fromkeys(qd, 0))
    if A.shape[0] != A.shape[1]:
        raise InputError(f"joint_wrenches: the System has {A.shape[0]} kinematic differential "
                         f"equations for {len(q)} coordinates")
    sol = A.LUsolve(-rest)
    first = dict(zip(qd, sol))
    second = {c.diff(TIME): e.diff(TIME).xreplace(first) for c, e in zip(qd, sol)}
    return {**second, **first}


class _Motion:
    """Numeric samples of the System's symbols, to decide which body a point or frame moves
    with (its velocity equals the body's rigid velocity field at two random states)."""

    def __init__(self, system: Any, seed: int = 0) -> None:
        self.N = system.frame
        self.rng = np.random.default_rng(seed)
        self.draws: list[dict] = [{}, {}]

    def _value(self, expr: Any, draw: dict) -> float:
        """``expr`` with every derivative, function of time and symbol at a random value
        (kept in ``draw``, so that one draw is one state)."""
        for kind in (sm.Derivative, sm.core.function.AppliedUndef):
            atoms = [a for a in expr.atoms(kind) if a not in draw]
            for a in sorted(atoms, key=str):
                draw[a] = float(self.rng.uniform(0.3, 1.3))
            expr = expr.xreplace({a: draw[a] for a in expr.atoms(kind)})
        for a in sorted(expr.free_symbols - {TIME}, key=str):
            draw.setdefault(a, float(self.rng.uniform(0.3, 1.3)))
        expr = expr.xreplace({a: draw[a] for a in expr.free_symbols if a != TIME})
        return float(sm.re(sm.N(expr.xreplace({TIME: 0.7}))))

    def same(self, a: Vector, b: Vector) -> bool:
        """Whether the vectors a and b are equal (at two random states, to 1e-9 relative)."""
        d = a - b
        if d == Vector(0):
            return True
        comps = list(d.to_matrix(self.N))
        size = list(a.to_matrix(self.N)) + list(b.to_matrix(self.N))
        for draw in self.draws:
            scale = max([1.0] + [abs(self._value(c, draw)) for c in size])
            if max(abs(self._value(c, draw)) for c in comps) > 1e-9 * scale:
                return False
        return True


def _body_frame(body: Any, joints: list) -> Any:
    """A frame fixed in the body (a particle's: the one a joint made for it)."""
    if hasattr(body, "frame") and not isinstance(body, Particle):
        return body.frame
    for j in joints:
        if j.child is body:
            return j.child_interframe
        if j.parent is body:
            return j.parent_interframe
    return None


def joint_wrenches(system: Any, joints: Any = None) -> JointWrenches:
    """The wrenches of ``system``'s joints (all, or the ``joints`` given by name), by Kane's
    auxiliary speeds (see the module docstring).

    ``system``: a ``sympy.physics.mechanics.System`` whose joints (PinJoint, PrismaticJoint,
    SphericalJoint, ...) form a tree from its ground; its bodies, loads and kinematic
    differential equations are read.  Returns :class:`JointWrenches`.
    """
    all_joints = list(system.joints)
    if joints is not None:
        names = [joints] if isinstance(joints, str) else list(joints)
        by_name = {j.name: j for j in all_joints}
        missing = [n for n in names if n not in by_name]
        if missing:
            raise InputError(f"joint_wrenches: no joint {missing[0]!r} in the System (joints: "
                             f"{', '.join(by_name)})")
        chosen = [by_name[n] for n in names]
    else:
        chosen = all_joints
    if not chosen:
        raise InputError("joint_wrenches: the System has no joints")
    N = system.frame
    bodies = list(system.bodies)
    below = _subtrees(all_joints, bodies)
    qdot = _qdot_map(system)
    motion = _Motion(system)
    frames = {id(b): _body_frame(b, all_joints) for b in bodies}
    forces, torques = _loads_by_body(system, bodies, frames, motion)
    aux_speeds, unknowns, equations, wrenches = [], [], [], {}
    for j in chosen:
        E, J = j.child_interframe, j.child_point
        w = dynamicsymbols(" ".join(f"w_{_ident(j.name)}_{c}" for c in COMPONENTS))
        F = dynamicsymbols(" ".join(f"{_ident(j.name)}_{c}" for c in COMPONENTS))
        f_total, n_total = Vector(0), Vector(0)
        for b in below[id(j)]:
            mc = b.masscenter
            a = mc.acc(N)
            R_star = -b.mass * a
            r = mc.pos_from(J)
            f_total += R_star
            n_total += r.cross(R_star)
            if not isinstance(b, Particle):
                Fb = frames[id(b)]
                I = b.central_inertia
                om, al = Fb.ang_vel_in(N), Fb.ang_acc_in(N)
                n_total += -(I.dot(al) + om.cross(I.dot(om)))
            for P, vec in forces.get(id(b), []):
                f_total += vec
                n_total += P.pos_from(J).cross(vec)
            for vec in torques.get(id(b), []):
                n_total += vec
        # Kane's auxiliary equations: F_r + F*_r + (f, n)·e_k = 0
        eqs = []
        for k, e in enumerate((E.x, E.y, E.z)):
            eqs.append(F[k] + f_total.dot(e))
        for k, e in enumerate((E.x, E.y, E.z)):
            eqs.append(F[3 + k] + n_total.dot(e))
        second = {k: v for k, v in qdot.items() if k.args[1][1] == 2}
        eqs = [e.xreplace(second).xreplace(qdot) for e in eqs]
        aux_speeds += w
        unknowns += F
        equations += eqs
        wrenches[j.name] = sm.Matrix([F[k] - eqs[k] for k in range(6)])
    return JointWrenches(tuple(j.name for j in chosen), tuple(aux_speeds), tuple(unknowns),
                         sm.Matrix(equations), wrenches)


def _ident(name: str) -> str:
    import re
    s = re.sub(r"\W", "_", name)
    return s if s and not s[0].isdigit() else "_" + s


def _subtrees(joints: list, bodies: list) -> dict:
    """joint id -> the bodies below it (its child and everything hanging from the child)."""
    children: dict = {}
    for j in joints:
        children.setdefault(id(j.parent), []).append(j.child)
    out = {}
    for j in joints:
        seen, stack = [], [j.child]
        while stack:
            b = stack.pop()
            if any(b is s for s in seen):
                raise InputError(f"joint_wrenches: the joints form a loop through {b.name!r}; "
                                 "a joint's wrench is defined for a tree of joints")
            seen.append(b)
            stack.extend(children.get(id(b), []))
        out[id(j)] = seen
    return out


def _loads_by_body(system: Any, bodies: list, frames: dict, motion: _Motion) -> tuple[dict, dict]:
    """The System's forces (point, vector) and torques (vector) by the body they act on."""
    N = system.frame
    forces: dict = {}
    torques: dict = {}
    for load in system.loads:
        where, vec = load[0], load[1]
        if isinstance(where, sm.physics.vector.Point):
            b = _point_body(where, bodies, frames, motion, N)
            if b is not None:
                forces.setdefault(id(b), []).append((where, vec))
        else:
            b = _frame_body(where, bodies, frames, motion, N)
            if b is not None:
                torques.setdefault(id(b), []).append(vec)
    return forces, torques


def _point_body(P: Any, bodies: list, frames: dict, motion: _Motion, N: Any) -> Any:
    for b in bodies:
        if P is b.masscenter:
            return b
    v = P.vel(N)
    if v == Vector(0):
        return None
    for b in bodies:
        F = frames[id(b)]
        mc = b.masscenter
        rigid = mc.vel(N) + (F.ang_vel_in(N).cross(P.pos_from(mc)) if F is not None else Vector(0))
        if motion.same(v, rigid):
            return b
    raise InputError(f"joint_wrenches: the load's point {P.name!r} moves with none of the "
                     "System's bodies (its velocity is no body's rigid velocity there)")


def _frame_body(A: Any, bodies: list, frames: dict, motion: _Motion, N: Any) -> Any:
    for b in bodies:
        if frames[id(b)] is A:
            return b
    w = A.ang_vel_in(N)
    if w == Vector(0):
        return None
    for b in bodies:
        F = frames[id(b)]
        if F is not None and motion.same(w, F.ang_vel_in(N)):
            return b
    raise InputError(f"joint_wrenches: the torque's frame {A.name!r} turns with none of the "
                     "System's bodies")
