"""Recursive Newton-Euler with accelerations: the inverse dynamics and each joint's wrench.

With the body motions of the forward pass (gravity as the base's acceleration, a_0 = -g)::

    f_i = I_i a_i + v_i ×* I_i v_i + Σ_{children c} X_cᵀ f_c,     τ_i = S_iᵀ f_i

(a joint of several speeds: τ_i has a row per column of S_i; :mod:`.joint_models`)

(Featherstone 2008, section 5.3).  ``f_i`` is the wrench the parent exerts on the subtree of
body i through its joint, at the body origin in body axes: Pinocchio's ``data.f[i]`` after
``rnea``; its component along the joint's motion subspace is the joint torque τ_i.  Returned
as (linear, angular), Pinocchio's order.
"""

from __future__ import annotations

from dataclasses import dataclass

from .dynamics import ZERO, Inertia, _add, _cross, _dot, _mtv, quaternion_matrix
from .joint_models import JointModel, tree_layout
from .tree import KinematicTree

__all__ = ["NewtonEuler", "newton_euler"]


@dataclass
class NewtonEuler:
    """``tau``: the generalized forces (o, tree order) that give the accelerations;
    ``wrenches``: per moving body (tree order, ``tree.moving``), its joint's wrench as 6
    expressions (linear, angular); ``base_wrench``: the free-flyer's (6) or None."""

    tau: list
    wrenches: list
    base_wrench: list | None


def newton_euler(tree: KinematicTree, q: list, u: list, udot: list, gravity: tuple,
                 inertias: list, floating: bool) -> NewtonEuler:
    """The inverse dynamics of the tree at (q, u, u') (symengine; u or u' may be zeros).

    ``q``, ``u``, ``udot``: symbols or expressions in tree order (the free-flyer's 7 and 6
    first when ``floating``; each joint's as :func:`~.joint_models.tree_layout` places them);
    ``gravity``: the gravity vector (3, in the frame of the free-flyer's coordinates, or the
    world's); ``inertias``: per body (m, h (3), I_o (3x3)).
    """
    bodies = tree.bodies
    nb = len(bodies)
    lay = tree_layout(tree, floating)
    joints = [None] + [JointModel(bodies[i], q[lay.q_slices[i]]) for i in range(1, nb)]
    g = tuple(-x for x in gravity)
    Z3 = (ZERO,) * 3
    if floating:
        R = quaternion_matrix(*q[3:7])
        V = [(tuple(u[3:6]), tuple(u[0:3]))]
        A = [(tuple(udot[3:6]), _add(tuple(udot[0:3]), _mtv(R, g)))]
    else:
        V, A = [(Z3, Z3)], [(Z3, g)]
    for i in range(1, nb):
        jt, lam = joints[i], bodies[i].parent
        w, v = jt.motion(*V[lam])
        aw, av = jt.motion(*A[lam])
        sl = lay.u_slices[i]
        Jw, Jv = jt.velocity(u[sl])
        Dw, Dv = jt.velocity(udot[sl])
        w, v = _add(w, Jw), _add(v, Jv)
        aw = _add(_add(aw, Dw), _cross(w, Jw))
        av = _add(_add(av, Dv), _add(_cross(w, Jv), _cross(v, Jw)))
        V.append((w, v))
        A.append((aw, av))
    F = []
    for i in range(nb):
        m, h, I = inertias[i]
        Ii = Inertia(m, tuple(h), [list(r) for r in I])
        na, fa = Ii.times(*A[i])
        nv, fv = Ii.times(*V[i])
        w, v = V[i]
        F.append((_add(na, _add(_cross(w, nv), _cross(v, fv))), _add(fa, _cross(w, fv))))
    tau = [ZERO] * lay.nv
    for i in range(nb - 1, 0, -1):
        jt = joints[i]
        n, f = F[i]
        for k, (Sw, Sv) in zip(range(lay.u_slices[i].start, lay.u_slices[i].stop), jt.S):
            tau[k] = _dot(Sw, n) + _dot(Sv, f)
        pn, pf = jt.force(n, f)
        lam = bodies[i].parent
        F[lam] = (_add(F[lam][0], pn), _add(F[lam][1], pf))
    base = None
    if floating:
        n, f = F[0]
        base = [*f, *n]
        tau[0:6] = base
    wrenches = [[*F[i][1], *F[i][0]] for i in range(1, nb)]
    return NewtonEuler(tau, wrenches, base)
