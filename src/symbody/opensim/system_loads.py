"""The force builders' :mod:`~.forces.system_form` loads as SymPy loads of ``model.system``.

- A :class:`~.forces.system_form.PointLoad` F at station r of body B: ``Force`` on the point
  O_B + r (velocity v_O + ω_B × r, set: a material point of B).
- A :class:`~.forces.system_form.BodyTorque` T: ``Torque`` on B's frame.
- A :class:`~.forces.system_form.MobilityLoad` τ on the speed u_k of a joint between the
  parent P and the child C (M: the joint's child frame, fixed in C): a wrench (force f at M's
  origin, torque t) on C and (-f, -t) on P at its material point there, with power τ u_k.
  With the joint's motion subspace H = [H_v; H_w] (6 x n, M coordinates at M's origin:
  v_FM = H_v u, ω_FM = H_w u), [f; t] = H (HᵀH)⁻¹ e_k τ, so Hᵀ [f; t] = τ e_k: a torque τ
  about the axis of a Pin, a force τ along a Slider.  Ball and Free joints, whose rotational
  speeds are ω_FM in F (and translational ones v_FM in F): t (or f) = τ times F's k-th axis.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import symengine as se
import sympy as sm
from sympy.physics.mechanics import Force, Torque
from sympy.physics.vector import Vector

from .forces.system_form import BodyTorque, MobilityLoad, PointLoad

if TYPE_CHECKING:
    from .forces.base import ForceContribution
    from .model import OpenSimModel

__all__ = ["form_loads", "has_system_form"]


def has_system_form(contribution: ForceContribution) -> bool:
    """Whether a force is on ``model.system``: it has SymPy loads, contact loads or
    :mod:`~.forces.system_form` loads, or no generalized forces at all."""
    if contribution.loads or contribution.contact_loads or contribution.system_loads:
        return True
    return contribution.generalized is None or all(q == 0 for q in contribution.generalized)


class LoadMaker:
    """Turns :mod:`~.forces.system_form` loads into SymPy loads on the System's ``frames`` and
    ``points`` (body name -> frame, origin; the ground ``N``)."""

    def __init__(self, model: OpenSimModel, frames: dict, points: dict, N: Any):
        self.model, self.frames, self.points, self.N = model, frames, points, N
        self.ground = model.spec.ground
        self.conv = model.sympy_converter
        self.nodes = {c.name: node for node in model.tree.nodes[1:]
                      for c in node.joint.coordinates}
        self.count = 0

    def __call__(self, load: Any) -> list:
        self.count += 1
        if isinstance(load, PointLoad):
            return self._force(load.body, self._vector(load.body, load.station),
                               self._ground_vector(load.force))
        if isinstance(load, BodyTorque):
            if load.body == self.ground:
                return []
            return [Torque(self.frames[load.body], self._ground_vector(load.torque))]
        if isinstance(load, MobilityLoad):
            return self._mobility(load)
        raise TypeError(f"not a System load: {load!r}")

    def _sympy(self, x: Any):
        if isinstance(x, sm.Basic):
            return x
        if isinstance(x, (int, float, np.floating, np.integer)):
            return sm.Float(float(x)) if x != 0 else sm.S.Zero
        return self.conv(x)

    def _vector(self, body: str, components: Any) -> Vector:
        B = self.frames[body]
        c = [self._sympy(x) for x in components]
        return sum((ci * e for ci, e in zip(c, (B.x, B.y, B.z)) if ci != 0), Vector(0))

    def _ground_vector(self, components: Any) -> Vector:
        with sm.evaluate(False):
            return Vector([(sm.Matrix([self._sympy(x) for x in components]), self.N)])

    def _force(self, body: str, r: Vector, force: Vector) -> list:
        """``Force`` on the material point of ``body`` at r from its origin."""
        if body == self.ground:
            return []
        B, O = self.frames[body], self.points[body]
        P = O.locatenew(f"{body}_load{self.count}", r)
        P.set_vel(self.N, O.vel(self.N) + B.ang_vel_in(self.N).cross(r))
        return [Force(P, force)]

    def _mobility(self, load: MobilityLoad) -> list:
        node = self.nodes[load.coordinate]
        joint = node.joint
        jt = self.model.joint_transforms[node.index]
        u = self.model.force_context.coordinate(load.coordinate)[1]
        k = list(jt.u).index(u)
        tau = self.conv(load.value)
        child, parent = node.name, joint.parent.body
        C, P = self.frames[child], self.frames[parent]
        if joint.type in ("BallJoint", "FreeJoint"):
            axis = self._vector(parent, np.asarray(joint.parent.R, dtype=float)[:, k % 3])
            force, torque = (axis * tau, Vector(0)) if k >= 3 else (Vector(0), axis * tau)
        else:
            w = [self.conv(x) for x in _mobility_wrench(jt.mob, k, load.value)]
            R_CM = np.asarray(joint.child.R, dtype=float)        # M's axes in C
            force = self._vector(child, [sum(R_CM[a, b] * w[b] for b in range(3)) for a in range(3)])
            torque = self._vector(child, [sum(R_CM[a, b] * w[3 + b] for b in range(3))
                                          for a in range(3)])
        out = []
        if torque != Vector(0):
            out.append(Torque(C, torque))
            if parent != self.ground:
                out.append(Torque(P, -torque))
        if force != Vector(0):
            r = self._vector(child, joint.child.p)             # M's origin from C's
            out += self._force(child, r, force)
            if parent != self.ground:
                Pm = self.points[child].locatenew(f"{child}_M{self.count}", r)
                out += self._force(parent, Pm.pos_from(self.points[parent]), -force)
        return out


def _mobility_wrench(mob: Any, k: int, tau: Any) -> list:
    """[f; t] = H (HᵀH)⁻¹ e_k τ (6, symengine; M coordinates at M's origin), HᵀH solved by
    LU in symengine."""
    n = len(mob.u)
    H = se.DenseMatrix(6, n, [mob.Hv[i][j] if i < 3 else mob.Hw[i - 3][j]
                             for i in range(6) for j in range(n)])
    G = H.T * H
    if n == 1:
        y = se.DenseMatrix([[tau / G[0, 0]]])
    else:
        e = se.DenseMatrix(n, 1, [tau if j == k else 0 for j in range(n)])
        y = G.LUsolve(e)
    return list(H * y)


def form_loads(model: OpenSimModel, contribution: ForceContribution, frames: dict,
               points: dict, N: Any, maker: LoadMaker | None = None) -> list:
    """The SymPy loads of one force's ``system_loads``."""
    maker = maker or LoadMaker(model, frames, points, N)
    return [ld for load in contribution.system_loads for ld in maker(load)]
