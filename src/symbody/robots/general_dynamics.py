"""M(q) and the bias of a tree with joints of several speeds (planar, floating in the tree).

The composite-rigid-body algorithm with a motion subspace of several columns per joint
(:mod:`.joint_models`): I^c_λ += X_iᵀ I^c_i X_i; for each column s of S_i the force
F = I^c_i s, M[s', s] = s'ᵀ F for the columns s' of S_i, and up the path to the root
M[r, s] = rᵀ X...ᵀ F for the columns r of each ancestor (Featherstone 2008, section 6.2);
the bias C(q, u) u + g(q) by Newton-Euler (:func:`.wrenches.newton_euler` at u' = 0).
Used by ``load_urdf`` when the tree has such a joint; trees of one-speed joints take
:func:`.dynamics.form_tree_dynamics`.
"""

from __future__ import annotations

from .dynamics import ZERO, Inertia, TreeDynamics, _add_inertia, _dot, quaternion_matrix
from .joint_models import JointModel, tree_layout
from .tree import KinematicTree
from .wrenches import newton_euler

__all__ = ["form_general_dynamics"]


def form_general_dynamics(tree: KinematicTree, q: list, u: list, gravity: tuple, inertias: list,
                          floating: bool) -> TreeDynamics:
    """M(q) (nv x nv) and the bias (nv) in tree order; arguments as
    :func:`.dynamics.form_tree_dynamics`, each joint's variables placed by
    :func:`.joint_models.tree_layout`."""
    bodies = tree.bodies
    nb = len(bodies)
    lay = tree_layout(tree, floating)
    joints = [None] + [JointModel(bodies[i], q[lay.q_slices[i]]) for i in range(1, nb)]
    bias = newton_euler(tree, q, u, [ZERO] * lay.nv, gravity, inertias, floating).tau
    Ic = [Inertia(m, tuple(h), [list(r) for r in I]) for (m, h, I) in inertias]
    for i in range(nb - 1, 0, -1):
        lam = bodies[i].parent
        Ic[lam] = _add_inertia(Ic[lam], joints[i].inertia_to_parent(Ic[i]))
    o = lay.nv
    M = [[ZERO] * o for _ in range(o)]
    for i in range(1, nb):
        own = range(lay.u_slices[i].start, lay.u_slices[i].stop)
        for col, (Sw, Sv) in zip(own, joints[i].S):
            n, f = Ic[i].times(Sw, Sv)
            for row, (Rw, Rv) in zip(own, joints[i].S):
                M[row][col] = _dot(Rw, n) + _dot(Rv, f)
            j = i
            while True:
                n, f = joints[j].force(n, f)
                j = bodies[j].parent
                if j == 0:
                    break
                rows = range(lay.u_slices[j].start, lay.u_slices[j].stop)
                for row, (Rw, Rv) in zip(rows, joints[j].S):
                    M[row][col] = M[col][row] = _dot(Rw, n) + _dot(Rv, f)
            if floating:
                for k, e in enumerate((*f, *n)):
                    M[k][col] = M[col][k] = e
    if floating:
        for k in range(6):      # the base: its composite inertia, (linear, angular) order
            ek = [ZERO] * 6
            ek[k] = 1
            n, f = Ic[0].times(tuple(ek[3:6]), tuple(ek[0:3]))
            for r, e in enumerate((*f, *n)):
                M[r][k] = e
    return TreeDynamics(M, bias, quaternion_matrix(*q[3:7]) if floating else None)
