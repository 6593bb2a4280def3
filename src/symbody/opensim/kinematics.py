"""Where the bodies are: poses in the ground frame and velocity Jacobians, in symengine.

Body i is at R_Gi = R_Gλ R_i, p_Gi = p_Gλ + R_Gλ p_i (the tree's joint transforms X_i).  A
point P fixed in body i at r (body coordinates) is at p_GP = p_Gi + R_Gi r; its velocity is
v_P = J_P(q) u with, for each speed k of a joint j on the path from the ground to i,

    ω column: R_Gj S_w,k,    v column: R_Gj S_v,k + (R_Gj S_w,k) × (p_GP - p_Gj).

Markers, constraints and the force builders (:mod:`.forces`) read the model through this
class; everything is built on first use and cached.
"""

from __future__ import annotations

import numpy as np

from .dynamics import JointTransform
from .mobilizers import ZERO, matmul, matvec, num

__all__ = ["TreeKinematics"]


def _cross(a, b) -> list:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


class TreeKinematics:
    """Poses and Jacobians of the bodies of a tree.

    ``names``: body name -> index; ``parents``, ``transforms`` as in
    :func:`~.dynamics.form_dynamics`; ``speed_offsets[i]``: body i's first speed (tree order);
    ``o``: the number of speeds."""

    def __init__(self, names: dict, parents: list, transforms: list[JointTransform | None],
                 speed_offsets: list, o: int):
        self.names, self.parents, self.transforms = names, parents, transforms
        self.speed_offsets, self.o = speed_offsets, o
        self._pose: dict = {}
        self._relative: dict = {}

    def index(self, body: str) -> int:
        try:
            return self.names[body]
        except KeyError:
            raise KeyError(f"no body {body!r} in the model") from None

    def pose(self, body: str | int) -> tuple:
        """(R_GB (3x3 nested), p_GB (3)) of a body (name or index), symengine."""
        i = self.index(body) if isinstance(body, str) else body
        if i in self._pose:
            return self._pose[i]
        if i == 0:
            out = ([[num(float(a == b)) for b in range(3)] for a in range(3)], [ZERO] * 3)
        else:
            Rl, pl = self.pose(self.parents[i])
            jt = self.transforms[i]
            out = (matmul(Rl, jt.R), [a + b for a, b in zip(pl, matvec(Rl, jt.p))])
        self._pose[i] = out
        return out

    def relative_pose(self, body: str | int, ref: str | int) -> tuple:
        """(R_AB (3x3 nested), p_AB (3)): body B's frame in body A = ``ref``'s, composed along
        the tree from their common ancestor C (R_AB = R_CAᵀ R_CB, p_AB = R_CAᵀ (p_CB - p_CA)):
        only the joints between them enter (numbers when B = A)."""
        b = self.index(body) if isinstance(body, str) else body
        a = self.index(ref) if isinstance(ref, str) else ref
        if (b, a) in self._relative:
            return self._relative[(b, a)]
        chain_a = [a] + self.path(a) + [0]
        c = next(i for i in [b] + self.path(b) + [0] if i in chain_a)
        (R_cb, p_cb), (R_ca, p_ca) = self._down_from(c, b), self._down_from(c, a)
        RT = [[R_ca[j][i] for j in range(3)] for i in range(3)]
        out = (matmul(RT, R_cb), matvec(RT, [x - y for x, y in zip(p_cb, p_ca)]))
        self._relative[(b, a)] = out
        return out

    def _down_from(self, c: int, i: int) -> tuple:
        """(R_CI, p_CI) of body i in its ancestor c (the joint transforms between them)."""
        R = [[num(float(x == y)) for y in range(3)] for x in range(3)]
        p = [ZERO] * 3
        for j in reversed(self.path(i)[:len(self.path(i)) - len(self.path(c))]):
            jt = self.transforms[j]
            p = [x + y for x, y in zip(p, matvec(R, jt.p))]
            R = matmul(R, jt.R)
        return R, p

    def point(self, body: str | int, r) -> list:
        """p_GP (3) of the point at ``r`` (3 numbers or expressions, body coordinates)."""
        R, p = self.pose(body)
        rr = [num(x) if isinstance(x, (int, float, np.floating)) else x for x in r]
        return [a + b for a, b in zip(p, matvec(R, rr))]

    def path(self, body: str | int) -> list:
        """The bodies from the given one down to the ground (ground excluded)."""
        i = self.index(body) if isinstance(body, str) else body
        out = []
        while i > 0:
            out.append(i)
            i = self.parents[i]
        return out

    def angular_jacobian(self, body: str | int) -> list:
        """J_ω (3 x o nested): ω_B = J_ω u in ground coordinates."""
        J = [[ZERO] * self.o for _ in range(3)]
        for j in self.path(body):
            Rj, _ = self.pose(j)
            jt = self.transforms[j]
            for k in range(len(jt.u)):
                col = matvec(Rj, jt.Sw[k])
                for a in range(3):
                    J[a][self.speed_offsets[j] + k] = col[a]
        return J

    def point_jacobian(self, body: str | int, r) -> list:
        """J_P (3 x o nested): v_P = J_P u in ground coordinates (P fixed in the body at r)."""
        P = self.point(body, r)
        J = [[ZERO] * self.o for _ in range(3)]
        for j in self.path(body):
            Rj, pj = self.pose(j)
            jt = self.transforms[j]
            arm = [a - b for a, b in zip(P, pj)]
            for k in range(len(jt.u)):
                w = matvec(Rj, jt.Sw[k])
                v = matvec(Rj, jt.Sv[k])
                col = [a + b for a, b in zip(v, _cross(w, arm))]
                for a in range(3):
                    J[a][self.speed_offsets[j] + k] = col[a]
        return J
