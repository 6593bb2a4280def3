"""The derivatives of the inverse dynamics, emitted: ∂τ/∂q, ∂τ/∂u and ∂τ/∂u' = M.

Carpentier and Mansard's world-frame form ("Analytical derivatives of rigid body dynamics
algorithms", RSS 2018; Pinocchio's ``computeRNEADerivatives``), derived again here in the
conventions of :mod:`.dynamics`.  Every spatial quantity is written in one frame fixed at the
root (the free-flyer's frame at this instant, gravity as its acceleration): joint columns
S_j, body motions v_i, a_i, inertias I_i, forces f_i = I_i a_i + v_i ×* I_i v_i, and the
subtree sums (composite) I^C_i, F_i, so that τ_i = S_iᵀ F_i.  A step of coordinate j along
its tangent turns the subtree of j rigidly about S_j, which moves velocities and
accelerations only through the parent's motion (β = S_j ×ₘ v_λ, γ = S_j ×ₘ a_λ + v_λ ×ₘ β)::

    ∂τ_i/∂q_j = -S_iᵀ (I^C_i γ + B^C_i β)                      i in the subtree of j
    ∂τ_i/∂q_j =  S_iᵀ (S_j ×* F_j - I^C_j γ - B^C_j β)         i above j
    ∂τ_i/∂u_j =  S_iᵀ (I^C_k ψ + B^C_k S_j)   (k = i below j, j above)   ψ = (v_j + v_λ) ×ₘ S_j
    M_ij = S_iᵀ I^C_i S_j                                       i in the subtree of j

with B_k = İ_k + (h_k)ₓ*, the inertia's rate plus the cross matrix of the momentum h_k (β ↦
β ×* h_k), which for a rigid body is [[İ_o - [h_n]×, 0], [-2 [h_f]×, 0]]: it reads only
the angular part of what it multiplies.  The tangent of a coordinate is Pinocchio's: a
joint's speed direction in the child's axes (for the free-flyer, q ⊕ δ = q exp(δ) in its
frame), so the columns of ∂τ/∂q are in the speeds' order.  O(n d) for a tree of depth d.
"""

from __future__ import annotations

from dataclasses import dataclass

from .dynamics import (
    ZERO,
    Inertia,
    _add,
    _cross,
    _dot,
    _mtv,
    _mv,
    _rotate_inertia,
    _scale,
    _shift_inertia,
    num,
    quaternion_matrix,
)
from .joint_models import JointModel, tree_layout
from .spatial import SYMENGINE
from .tree import KinematicTree

__all__ = ["RneaDerivatives", "rnea_derivatives"]


@dataclass
class RneaDerivatives:
    """In tree order (o speeds): ``tau`` (o), ``dtau_dq`` (o x o: columns the coordinates'
    tangents, the speeds' order), ``dtau_du`` (o x o), ``mass`` (o x o), nested lists of
    symengine expressions."""

    tau: list
    dtau_dq: list
    dtau_du: list
    mass: list


def _box3(x) -> tuple:
    return tuple(SYMENGINE.box(e) for e in x)


def _mm(A, B) -> list:
    return [[A[i][0] * B[0][k] + A[i][1] * B[1][k] + A[i][2] * B[2][k] for k in range(3)]
            for i in range(3)]


def _mcross(a, b) -> tuple:
    """Motion cross product a ×ₘ b of (angular, linear) pairs."""
    return _cross(a[0], b[0]), _add(_cross(a[0], b[1]), _cross(a[1], b[0]))


def _fcross(a, f) -> tuple:
    """a ×* f: a motion acting on a force (moment, force)."""
    return _add(_cross(a[0], f[0]), _cross(a[1], f[1])), _cross(a[0], f[1])


def _sdot(a, b):
    return _dot(a[0], b[0]) + _dot(a[1], b[1])


def _splus(a, b) -> tuple:
    return _add(a[0], b[0]), _add(a[1], b[1])


def _sbox(a) -> tuple:
    return _box3(a[0]), _box3(a[1])


@dataclass
class _Body:
    """One body's world quantities: placement (R, p), columns S (motions) and their speed
    indices, velocity v, acceleration a, inertia, momentum h, the inertia-rate block
    B_n = İ_o - [h_n]× (3x3)."""

    R: list
    p: tuple
    S: list
    speeds: list
    v: tuple
    a: tuple
    inertia: Inertia | None = None
    h: tuple | None = None
    f: tuple | None = None
    Bn: list | None = None


def _rate_block(I: Inertia, v: tuple, h: tuple) -> list:
    """B_n = İ_o - [h_n]× with İ_o = Y + Yᵀ, Y = [ω]× I_o - h v_oᵀ + (v_o·h) 1 (the rate of a
    rigid body's inertia about the fixed origin under the motion (ω, v_o))."""
    w, vo = v
    cols = [_cross(w, (I.I[0][k], I.I[1][k], I.I[2][k])) for k in range(3)]     # [ω]× I_o
    Y = [[cols[k][i] - I.h[i] * vo[k] for k in range(3)] for i in range(3)]
    s = _dot(vo, I.h)
    for i in range(3):
        Y[i][i] = Y[i][i] + s
    hn = h[0]
    cross_hn = [[ZERO, -hn[2], hn[1]], [hn[2], ZERO, -hn[0]], [-hn[1], hn[0], ZERO]]
    return [[SYMENGINE.box(Y[i][k] + Y[k][i] - cross_hn[i][k]) for k in range(3)]
            for i in range(3)]


def _forward(tree: KinematicTree, q: list, u: list, udot: list, gravity: tuple,
             inertias: list, floating: bool) -> tuple[list, tuple]:
    """Every body's world quantities (root first) and the world's acceleration (-gravity)."""
    bodies = tree.bodies
    lay = tree_layout(tree, floating)
    one = [[num(float(i == k)) for k in range(3)] for i in range(3)]
    Z3 = (ZERO,) * 3
    g = tuple(-x for x in gravity)
    if floating:     # the free-flyer's frame; its speeds (linear, angular) as 6 columns
        a_world = (Z3, _box3(_mtv(quaternion_matrix(*q[3:7]), g)))
        e = [tuple(one[k]) for k in range(3)]
        S = [(Z3, e[k]) for k in range(3)] + [(e[k], Z3) for k in range(3)]
        v = (tuple(u[3:6]), tuple(u[0:3]))
        a = (tuple(udot[3:6]), _add(tuple(udot[0:3]), a_world[1]))
        out = [_Body(one, Z3, S, list(range(6)), v, a)]
    else:
        a_world = (Z3, g)
        out = [_Body(one, Z3, [], [], (Z3, Z3), a_world)]
    for i in range(1, len(bodies)):
        jt = JointModel(bodies[i], q[lay.q_slices[i]])
        lam = out[bodies[i].parent]
        R0 = _mm(lam.R, jt.R_p)
        p = _box3(_add(lam.p, _mv(lam.R, _add(jt.p_p, _mv(jt.R_p, jt.p_J)))))
        R = [list(_box3(r)) for r in (_mm(R0, jt.R_J) if jt.rotates else R0)]
        S = []
        for Sw, Sv in jt.S:
            w = _box3(_mv(R, Sw))
            S.append((w, _box3(_add(_mv(R, Sv), _cross(p, w)))))
        sl = lay.u_slices[i]
        v = lam.v
        for col, k in zip(S, range(sl.start, sl.stop)):
            v = _splus(v, (_scale(u[k], col[0]), _scale(u[k], col[1])))
        v = _sbox(v)
        a = lam.a
        for col, k in zip(S, range(sl.start, sl.stop)):
            vs = _mcross(v, col)
            a = _splus(a, (_add(_scale(udot[k], col[0]), _scale(u[k], vs[0])),
                           _add(_scale(udot[k], col[1]), _scale(u[k], vs[1]))))
        out.append(_Body(R, p, S, list(range(sl.start, sl.stop)), v, _sbox(a)))
    for i, b in enumerate(out):
        if i == 0 and not floating:
            continue
        m, h, I = inertias[i]
        Ib = _shift_inertia(_rotate_inertia(Inertia(m, tuple(h), [list(r) for r in I]), b.R), b.p)
        b.inertia = Inertia(Ib.m, _box3(Ib.h), [list(_box3(r)) for r in Ib.I])
        b.h = _sbox(b.inertia.times(*b.v))
        b.f = _sbox(_splus(b.inertia.times(*b.a), _fcross(b.v, b.h)))
        b.Bn = _rate_block(b.inertia, b.v, b.h)
    return out, a_world


class _Composite:
    """Subtree sums of one body: inertia I^C, force F, rate block B_n and momentum's force
    part h_f (B^C = [[B_n, 0], [-2 [h_f]×, 0]])."""

    def __init__(self, body: _Body):
        self.I, self.F, self.Bn, self.hf = body.inertia, body.f, body.Bn, body.h[1]

    def add(self, o: _Composite) -> None:
        a, b = self.I, o.I
        self.I = Inertia(a.m + b.m, _add(a.h, b.h),
                         [[a.I[i][k] + b.I[i][k] for k in range(3)] for i in range(3)])
        self.F = _splus(self.F, o.F)
        self.Bn = [[self.Bn[i][k] + o.Bn[i][k] for k in range(3)] for i in range(3)]
        self.hf = _add(self.hf, o.hf)

    def boxed(self) -> _Composite:
        box = SYMENGINE.box
        self.I = Inertia(box(self.I.m), _box3(self.I.h), [list(_box3(r)) for r in self.I.I])
        self.F, self.Bn, self.hf = _sbox(self.F), [list(_box3(r)) for r in self.Bn], _box3(self.hf)
        return self

    def B_times(self, w) -> tuple:
        """B^C (w, ·): only the angular part w is read."""
        return tuple(_dot(self.Bn[i], w) for i in range(3)), _scale(-2, _cross(self.hf, w))

    def B_transpose_times(self, s) -> tuple:
        """The angular part of B^Cᵀ s (its linear part is zero)."""
        return _add(_mtv(self.Bn, s[0]), _scale(2, _cross(self.hf, s[1])))


def rnea_derivatives(tree: KinematicTree, q: list, u: list, udot: list, gravity: tuple,
                     inertias: list, floating: bool) -> RneaDerivatives:
    """τ(q, u, u') of the tree and its derivatives (see the module docstring).

    ``q``, ``u``, ``udot``: expressions in tree order (the free-flyer's 7 and 6 first);
    ``gravity``: the gravity vector (3) in the frame of the free-flyer's coordinates or the
    world's; ``inertias``: per body (m, h (3), I_o (3x3)) in body coordinates.
    """
    bodies, a_world = _forward(tree, q, u, udot, gravity, inertias, floating)
    parent = [b.parent for b in tree.bodies]
    nb = len(bodies)
    start = 0 if floating else 1
    comp: list = [None] * nb
    for i in range(nb - 1, start - 1, -1):
        if comp[i] is None:
            comp[i] = _Composite(bodies[i])
        comp[i].boxed()
        lam = parent[i]
        if i > start and lam >= start:       # a fixed root collects nothing
            if comp[lam] is None:
                comp[lam] = _Composite(bodies[lam])
            comp[lam].add(comp[i])
    o = sum(len(b.S) for b in bodies)
    tau = [ZERO] * o
    dq = [[ZERO] * o for _ in range(o)]
    du = [[ZERO] * o for _ in range(o)]
    M = [[ZERO] * o for _ in range(o)]
    # per column of body i: P = I^C_i S, Q = (B^C_i)ᵀ S (angular part)
    P, Q = {}, {}
    for i in range(start, nb):
        for S, k in zip(bodies[i].S, bodies[i].speeds):
            tau[k] = _sdot(S, comp[i].F)
            P[k] = _sbox(comp[i].I.times(*S))
            Q[k] = _box3(comp[i].B_transpose_times(S))
    ancestors = [[] for _ in range(nb)]
    for i in range(1, nb):
        ancestors[i] = [parent[i], *ancestors[parent[i]]]
    subtree = [[i] for i in range(nb)]
    for i in range(nb - 1, 0, -1):
        for b in ancestors[i]:
            subtree[b].append(i)
    for j in range(start, nb):
        bj = bodies[j]
        if j == 0:
            v_lam, a_lam = (ZERO,) * 3, (ZERO,) * 3
            v_lam, a_lam = (v_lam, v_lam), a_world
        else:
            v_lam, a_lam = bodies[parent[j]].v, bodies[parent[j]].a
        above = [b for b in ancestors[j] if b >= start]
        for S, c in zip(bj.S, bj.speeds):
            beta = _sbox(_mcross(S, v_lam))
            gamma = _sbox(_splus(_mcross(S, a_lam), _mcross(v_lam, beta)))
            psi = _sbox(_mcross(_splus(bj.v, v_lam), S))
            for i in subtree[j]:
                for k in bodies[i].speeds:
                    dq[k][c] = -(_sdot(P[k], gamma) + _dot(Q[k], beta[0]))
                    du[k][c] = _sdot(P[k], psi) + _dot(Q[k], S[0])
                    M[k][c] = M[c][k] = _sdot(P[k], S)
            if not above:
                continue
            C = comp[j]
            Bb, BS = C.B_times(beta[0]), C.B_times(S[0])
            Ig, Ip = C.I.times(*gamma), C.I.times(*psi)
            SF = _fcross(S, C.F)
            dq_j = _sbox(((SF[0][0] - Ig[0][0] - Bb[0][0], SF[0][1] - Ig[0][1] - Bb[0][1],
                           SF[0][2] - Ig[0][2] - Bb[0][2]),
                          tuple(SF[1][x] - Ig[1][x] - Bb[1][x] for x in range(3))))
            du_j = _sbox(_splus(Ip, BS))
            for i in above:
                for S_i, k in zip(bodies[i].S, bodies[i].speeds):
                    dq[k][c] = _sdot(S_i, dq_j)
                    du[k][c] = _sdot(S_i, du_j)
    return RneaDerivatives(tau, dq, du, M)
