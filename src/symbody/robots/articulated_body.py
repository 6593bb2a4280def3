"""Forward dynamics of a kinematic tree in O(n): the articulated-body algorithm, emitted.

The conventions of :mod:`.dynamics` and :mod:`.spatial` (spatial vectors in body
coordinates, angular part first; gravity as a base acceleration).  Featherstone's three
passes (*Rigid Body Dynamics Algorithms*, 2008, table 7.1), with S_i the joint's subspace
and Q_i its generalized force (inputs, damping, friction)::

    out:  v_i = X_i v_λ + S_i u_i,  c_i = v_i ×ₘ S_i u_i,  I^A_i = I_i,
          p^A_i = v_i ×* I_i v_i - f^ext_i
    in:   U_i = I^A_i S_i,  D_i = S_iᵀ U_i,  u_i = Q_i - S_iᵀ p^A_i,
          I^A_λ += X_iᵀ (I^A_i - U_i U_iᵀ / D_i) X_i,
          p^A_λ += X_iᵀ (p^A_i + I^a_i c_i + U_i u_i / D_i)
    out:  a'_i = X_i a_λ + c_i,  u'_i = (u_i - U_iᵀ a'_i) / D_i,  a_i = a'_i + S_i u'_i

with a_0 = -gravity for a fixed base; a free-flyer base (S = 1) gets
a_0 = (I^A_0)⁻¹ (Q_0 - p^A_0) by an LDLᵀ solve of its 6x6 articulated inertia and
u'_0 = a_0 - X_0 a_world.

Coupling constraints B u' = 0 among the joints below a body h (mimic joints: u_j = a u_k)
are condensed into h's articulated inertia, so the recursion stays O(n) plus a small
dense part per group.  A unit generalized force along row r of B, propagated inward from
its joints to h, is a force P_r on h; the rows' joint accelerations respond to a_h as
-Pᵀ a_h (the articulated-body operator is symmetric) and to the unit forces with h held
still as K = B M_h⁻¹ Bᵀ (m x m, definite).  With α the rows' accelerations for a_h = 0 and
λ = 0, the constraint forces are λ = λ_0 + Y a_h with λ_0 = -K⁻¹ B α and Y = K⁻¹ Pᵀ, so
h carries I^A_h + P Y and p^A_h + P λ_0, and the joints below h take Q + Bᵀ λ outward.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import InputError
from .dynamics import quaternion_matrix
from .spatial import (
    SYMENGINE,
    Algebra,
    Inertia6,
    JointTransform,
    add,
    cross,
    dot,
    ldl_solve,
    mtv,
    scale,
    vbox,
)
from .tree import KinematicTree

__all__ = ["ArticulatedBody"]


class _Group:
    """Constraint rows condensed at body ``h``: ``rows`` ({body: coefficient} each), the
    bodies on the paths from their joints up to h (``path``, ascending), and, once the
    inertias are known, P (m x 6), Y = K⁻¹ Pᵀ (m x 6), K's rows and each row's joint
    forces along the path (``du[r][body]``)."""

    def __init__(self, h: int, rows: list, path: list):
        self.h, self.rows, self.path = h, rows, path
        self.joints = sorted({b for row in rows for b in row})
        self.P = self.Y = self.K = self.du = None


def _constraint_groups(parent: list, rows: Sequence) -> dict[int, _Group]:
    """The rows grouped by the body their joints hang below: the lowest common ancestor of
    the joints' parents, groups whose bodies nest merged into the outer one."""
    def ancestors(b):
        out = []
        while b >= 0:
            out.append(b)
            b = parent[b]
        return out

    def below(h, b):        # b a proper descendant of h
        return b != h and h in ancestors(b)

    groups: list[tuple[int, list]] = []
    for row in rows:
        common = None
        for b in row:
            chain = ancestors(parent[b])
            common = chain if common is None else [a for a in common if a in chain]
        groups.append((common[0], [row]))
    merged = True
    while merged:
        merged = False
        for x in range(len(groups)):
            for y in range(len(groups)):
                hx, hy = groups[x][0], groups[y][0]
                if x != y and (hx == hy or below(hx, hy)):
                    groups[x] = (hx, groups[x][1] + groups[y][1])
                    del groups[y]
                    merged = True
                    break
            if merged:
                break
    out = {}
    for h, rs in groups:
        path = sorted({a for row in rs for b in row for a in ancestors(b) if below(h, a)})
        out[h] = _Group(h, rs, path)
    return out


class ArticulatedBody:
    """The articulated-body recursion of a tree at (q, u): pass 1 and the inward pass of the
    articulated inertias made once (``__init__``), then :meth:`accelerations` (u' under the
    generalized forces Q) and :meth:`inverse_mass_times` (the response to τ alone).

    ``q``, ``u``: the coordinates and speeds in tree order (a free-flyer's 7 and 6 first:
    position, quaternion (x, y, z, w); linear then angular velocity in the base frame);
    ``gravity``: the gravity vector (3, world coordinates); ``inertias``: per body
    (m, h (3), I_o (3x3)); ``external``: {body index: (n (3), f (3))} in body coordinates,
    about the body origin, or None; ``constraints``: rows of B u' = 0, each
    {tree speed index: coefficient} of joint speeds (mimic joints: {j: 1, k: -a}).
    """

    def __init__(self, tree: KinematicTree, q: Sequence, u: Sequence, gravity: Sequence,
                 inertias: Sequence, floating: bool, external: dict | None = None,
                 constraints: Sequence = (), algebra: Algebra = SYMENGINE) -> None:
        self.floating, self.alg = floating, algebra
        bodies = tree.bodies
        self.nb = nb = len(bodies)
        self.off = off = 6 if floating else 0
        qoff = 7 if floating else 0
        zero = algebra.const(0.0)
        self.Z3 = (zero, zero, zero)
        self.parent = [b.parent for b in bodies]
        self.children = [len(b.children) for b in bodies]
        self.joints = [None] + [JointTransform(bodies[i], q[qoff + i - 1], algebra)
                                for i in range(1, nb)]
        if any(k < off for row in constraints for k in row):
            raise InputError("ArticulatedBody: constraints act on joint speeds only, not on "
                             "the free-flyer's (indices below 6)")
        self.groups = _constraint_groups(
            self.parent, [{k - off + 1: c for k, c in row.items()} for row in constraints])
        self._velocities(q, u, gravity, [Inertia6.rigid(m, tuple(h), I) for (m, h, I) in inertias],
                         external)
        self._inertias()

    # ------------------------------------------------------------------ pass 1
    def _velocities(self, q, u, gravity, I_body: list, external: dict | None) -> None:
        """v_i, c_i and the bias forces p^A_i; ``a_world``: the base's acceleration from
        gravity alone."""
        box, Z3, nb, off = self.alg.box, self.Z3, self.nb, self.off
        g_neg = tuple(-x for x in gravity)
        V, c, pA = [None] * nb, [None] * nb, [None] * nb
        if self.floating:
            V[0] = (tuple(u[3:6]), tuple(u[0:3]))
            self.a_world = (Z3, mtv(quaternion_matrix(*q[3:7]), g_neg))
        else:
            V[0] = (Z3, Z3)
            self.a_world = (Z3, g_neg)
        for i in range(1, nb):
            jt = self.joints[i]
            w, v = jt.motion(*V[self.parent[i]])
            Sw, Sv = jt.along(u[off + i - 1])
            w, v = vbox(box, add(w, Sw)), vbox(box, add(v, Sv))
            V[i] = (w, v)
            # v ×ₘ S u = (w × Sw, w × Sv + v × Sw)
            c[i] = (vbox(box, cross(w, Sw)), vbox(box, add(cross(w, Sv), cross(v, Sw))))
        for i in range(nb):
            if i == 0 and not self.floating:
                continue
            w, v = V[i]
            n, f = I_body[i].times(w, v)
            pA[i] = (add(cross(w, n), cross(v, f)), cross(w, f))
            if external and i in external:
                ne, fe = external[i]
                pA[i] = (add(pA[i][0], scale(-1, tuple(ne))), add(pA[i][1], scale(-1, tuple(fe))))
        self.I_body, self.c, self.pA = I_body, c, pA

    # ------------------------------------------------------------------ inertias (q only)
    def _inertias(self) -> None:
        """The inward pass of the articulated inertias (U_i, 1/D_i, W_i = U_i / D_i, I^a_i),
        the constraint groups condensed at their bodies."""
        box, alg, nb = self.alg.box, self.alg, self.nb
        IA = list(self.I_body)
        self.U, self.Dinv, self.W, self.Ia = [None] * nb, [None] * nb, [None] * nb, [None] * nb
        for i in range(nb - 1, -1, -1):
            IA[i] = IA[i].boxed(box)
            if i in self.groups:
                IA[i] = self._condense_inertia(self.groups[i], IA[i])
            if i == 0:
                break
            jt = self.joints[i]
            Iw, Iv = IA[i].times(*jt.along(alg.const(1.0)))
            Dinv = 1 / jt.subspace_dot(Iw, Iv)
            self.U[i], self.Dinv[i] = (Iw, Iv), Dinv
            self.W[i] = (scale(Dinv, Iw), scale(Dinv, Iv))
            if self.parent[i] == 0 and not self.floating and 0 not in self.groups:
                continue                      # a fixed root's inertia is never used
            Ia = IA[i].minus_outer(self.U[i], self.W[i]).boxed(box)
            self.Ia[i] = Ia
            lam = self.parent[i]
            IA[lam] = IA[lam].plus(jt.inertia(Ia))
        self.IA0 = IA[0]

    def _up(self, group: _Group, tau: dict, pA: dict | None = None) -> tuple[dict, tuple]:
        """Joint forces u_i = tau_i - Sᵢᵀ p_i along the group's path and the force on h
        (n, f), propagated inward from the bias forces ``pA`` {body: (n, f)} (None: zero)."""
        Z3 = self.Z3
        p = dict(pA or {})
        du = {}
        for i in reversed(group.path):
            jt = self.joints[i]
            n, f = p.get(i, (Z3, Z3))
            ui = tau.get(i, Z3[0]) - jt.subspace_dot(n, f)
            du[i] = ui
            Ww, Wv = self.W[i]
            pn, pf = jt.force(add(n, scale(ui, Ww)), add(f, scale(ui, Wv)))
            lam = self.parent[i]
            n0, f0 = p.get(lam, (Z3, Z3))
            p[lam] = (add(n0, pn), add(f0, pf))
        return du, p.get(group.h, (Z3, Z3))

    def _down(self, group: _Group, uf: dict, a_h: tuple, bias: bool) -> dict:
        """u' along the group's path from the joint forces ``uf`` and h's acceleration."""
        box = self.alg.box
        A = {group.h: a_h}
        ud = {}
        for i in group.path:
            jt = self.joints[i]
            w, v = jt.motion(*A[self.parent[i]])
            if bias:
                w, v = add(w, self.c[i][0]), add(v, self.c[i][1])
            Ww, Wv = self.W[i]
            ud[i] = uf[i] * self.Dinv[i] - dot(Ww, w) - dot(Wv, v)
            Sw, Sv = jt.along(ud[i])
            A[i] = (vbox(box, add(w, Sw)), vbox(box, add(v, Sv)))
        return ud

    def _rows_times(self, group: _Group, x: dict) -> list:
        zero = self.Z3[0]
        return [sum((self.alg.const(c) * x[b] for b, c in row.items()), zero) for row in group.rows]

    def _condense_inertia(self, group: _Group, IA: Inertia6) -> Inertia6:
        """P, K and Y of a group (see the module docstring); h's inertia plus P Y."""
        box, Z3 = self.alg.box, self.Z3
        still = (Z3, Z3)
        P, du, K = [], [], []
        for row in group.rows:
            d, (n, f) = self._up(group, {b: self.alg.const(c) for b, c in row.items()})
            du.append(d)
            P.append([box(x) for x in (*n, *f)])
            K.append(self._rows_times(group, self._down(group, d, still, False)))
        m = len(group.rows)
        Kt = [[K[r][s] for r in range(m)] for s in range(m)]     # K[r]: row r's column
        Y = list(zip(*[ldl_solve(Kt, [P[r][k] for r in range(m)]) for k in range(6)]))
        Y = [[box(x) for x in row] for row in Y]
        group.P, group.Y, group.K, group.du = P, Y, Kt, du
        E = [[None] * 6 for _ in range(6)]
        for a in range(6):
            for b in range(a, 6):
                E[a][b] = E[b][a] = sum((P[r][a] * Y[r][b] for r in range(m)), Z3[0])
        return IA.plus(Inertia6([e[0:3] for e in E[0:3]], [e[3:6] for e in E[0:3]],
                                [e[3:6] for e in E[3:6]]))

    # ------------------------------------------------------------------ forces, accelerations
    def _inward(self, Q: Sequence, pA: list, bias: bool) -> tuple[list, dict]:
        """The joint forces u_i = Q_i - Sᵢᵀ p^A_i with the bias forces propagated inward
        (``pA`` updated in place; ``bias``: with I^a c_i) and each group's λ_0."""
        box, Z3, off, nb = self.alg.box, self.Z3, self.off, self.nb
        uf = [None] * nb
        lam0 = {}
        for i in range(nb - 1, -1, -1):
            if i in self.groups:
                g = self.groups[i]
                alpha = self._down(g, {b: uf[b] for b in g.path}, (Z3, Z3), bias)
                rhs = [-e for e in self._rows_times(g, alpha)]
                lam0[i] = [box(x) for x in ldl_solve(g.K, rhs)]
                n, f = pA[i] if pA[i] is not None else (Z3, Z3)
                extra = [sum((g.P[r][k] * lam0[i][r] for r in range(len(g.rows))), Z3[0])
                         for k in range(6)]
                pA[i] = (add(n, tuple(extra[0:3])), add(f, tuple(extra[3:6])))
            if i == 0:
                break
            jt = self.joints[i]
            n, f = pA[i] if pA[i] is not None else (Z3, Z3)
            n, f = vbox(box, n), vbox(box, f)
            ui = Q[off + i - 1] - jt.subspace_dot(n, f)
            uf[i] = ui
            if self.Ia[i] is None:
                continue                      # below a fixed root: nothing goes further in
            Ww, Wv = self.W[i]
            n, f = add(n, scale(ui, Ww)), add(f, scale(ui, Wv))
            if bias:
                cn, cf = self.Ia[i].times(*self.c[i])
                n, f = add(n, cn), add(f, cf)
            pn, pf = jt.force(n, f)
            lam = self.parent[i]
            pA[lam] = (pn, pf) if pA[lam] is None else (add(pA[lam][0], pn), add(pA[lam][1], pf))
        return uf, lam0

    def _outward(self, uf: list, pA0: Any, Q: Sequence, lam0: dict, bias: bool) -> list:
        """u' (tree order) from the joint forces, the root's bias force and the groups' λ_0
        (``bias``: with gravity and the velocity-product accelerations)."""
        Z3, box, off, nb = self.Z3, self.alg.box, self.off, self.nb
        a_world = self.a_world if bias else (Z3, Z3)
        ud = [None] * (off + nb - 1)
        A = [None] * nb
        if self.floating:
            n, f = vbox(box, pA0) if pA0 is not None else (Z3, Z3)
            # the base's generalized forces: (force, moment) in the base frame
            a0 = ldl_solve(self.IA0.matrix(), [Q[3 + k] - n[k] for k in range(3)]
                           + [Q[k] - f[k] for k in range(3)])
            A[0] = (tuple(box(x) for x in a0[0:3]), tuple(box(x) for x in a0[3:6]))
            ud[0:3] = [A[0][1][k] - a_world[1][k] for k in range(3)]
            ud[3:6] = [A[0][0][k] - a_world[0][k] for k in range(3)]
        else:
            A[0] = a_world
        uf = list(uf)
        for i in range(nb):
            if i:
                jt = self.joints[i]
                w, v = jt.motion(*A[self.parent[i]])
                if bias:
                    w, v = add(w, self.c[i][0]), add(v, self.c[i][1])
                Ww, Wv = self.W[i]
                udi = uf[i] * self.Dinv[i] - dot(Ww, w) - dot(Wv, v)
                ud[off + i - 1] = udi
                if self.children[i]:
                    Sw, Sv = jt.along(udi)
                    A[i] = (vbox(box, add(w, Sw)), vbox(box, add(v, Sv)))
            if i in self.groups:                  # λ = λ_0 + Y a_h: the joints below take Bᵀ λ
                g = self.groups[i]
                a_h = (*A[i][0], *A[i][1])
                lam = [box(lam0[i][r] + sum((g.Y[r][k] * a_h[k] for k in range(6)), Z3[0]))
                       for r in range(len(g.rows))]
                for b in g.path:
                    uf[b] = uf[b] + sum((lam[r] * g.du[r][b] for r in range(len(g.rows))), Z3[0])
        return ud

    def accelerations(self, Q: Sequence) -> list:
        """u' (tree order) under the generalized forces ``Q`` (one per speed, tree order; a
        free-flyer's 6 are the force and moment on the base in its frame)."""
        pA = list(self.pA)
        uf, lam0 = self._inward(Q, pA, True)
        return self._outward(uf, pA[0], Q, lam0, True)

    def inverse_mass_times(self, tau: Sequence) -> list:
        """The accelerations under the generalized forces τ alone (no velocity, no gravity):
        M⁻¹ τ, or with constraints M⁻¹ (τ + Bᵀ λ) with B u' = 0."""
        pA = [None] * self.nb
        uf, lam0 = self._inward(tau, pA, False)
        return self._outward(uf, pA[0], tau, lam0, False)

