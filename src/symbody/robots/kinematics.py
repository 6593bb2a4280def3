"""Kinematics of a URDF robot's tree in symengine: frames, velocities, Jacobians, centre of mass.

Each body's placement in the world, ``R_i`` (3x3, body axes in world coordinates) and
``p_i`` (3), follows its parent's through the numeric joint placement (R_p, p_p) and the
joint motion::

    R_i = R_λ R_p R_J(q_i),   p_i = p_λ + R_λ (p_p + R_p p_J(q_i))

(the joint's motion R_J, p_J of :mod:`.joint_models`)
with the free-flyer's R_0 = R(Q), p_0 = (x, y, z).  A *frame* is a URDF link, a joint's
frame (the child link's, as URDF puts it: Pinocchio's JOINT and FIXED_JOINT frames) or the
world, at a constant (R_l, p_l) in its body.  Velocities and accelerations are Newton-Euler's
forward pass in body coordinates (:func:`body_motions`); Jacobian columns are each ancestor
joint's motion in the world (:func:`world_columns`), in Pinocchio's three conventions
(:data:`REFERENCES`): ``"world"`` (the spatial velocity at the world origin, world axes),
``"local"`` (the frame origin's velocity and the angular velocity in the frame's axes) and
``"local_world_aligned"`` (the frame origin's velocity, world axes).  Rows (linear, angular),
as Pinocchio's.  Everything is a symengine DAG in the tree-order symbols of
:attr:`Robot.symengine_symbols <symbody.robots.robot.Robot>`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import symengine as se

from ..errors import InputError
from .dynamics import ZERO, _add, _cross, _mtv, _mv, _nmat, _scale, num, quaternion_matrix
from .joint_models import JointModel, tree_layout
from .tree import KinematicTree

__all__ = ["REFERENCES", "FrameSite", "TreeKinematics", "frame_site", "frame_names"]

#: Pinocchio's reference frames, by the names symbody takes
REFERENCES = ("local", "world", "local_world_aligned")


def _mm(A, B) -> list:
    return [[A[i][0] * B[0][k] + A[i][1] * B[1][k] + A[i][2] * B[2][k] for k in range(3)]
            for i in range(3)]


def _column(A, k) -> tuple:
    return (A[0][k], A[1][k], A[2][k])


def _sub(a, b) -> tuple:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@dataclass(frozen=True)
class FrameSite:
    """Where a named frame sits: its ``body`` (tree index; -1 for the world) and its constant
    placement in the body, ``R`` (3x3) and ``p`` (3)."""

    name: str
    body: int
    R: np.ndarray
    p: np.ndarray


def frame_names(tree: KinematicTree, floating: bool = False) -> tuple[str, ...]:
    """Every frame name: "universe", the links, then the joints (URDF file order), and
    "root_joint" (the free-flyer's, Pinocchio's name) with a floating base."""
    names = ["universe", *tree.urdf.links]
    names += [j for j in tree.urdf.joints if j not in tree.urdf.links]
    if floating:
        names.append("root_joint")
    return tuple(dict.fromkeys(names))


def frame_site(tree: KinematicTree, name: str, floating: bool) -> FrameSite:
    """The frame ``name``: a URDF link, a joint (its child link's frame, where URDF puts the
    joint), or "universe" (the world).  A name that is a link and a joint means the link."""
    if not isinstance(name, str):
        raise InputError(f"frame name must be a string, got {name!r}")
    if name == "root_joint" and floating and name not in tree.urdf.joints \
            and name not in tree.link_body:     # Pinocchio's name of the free-flyer's frame
        return FrameSite(name, 0, np.eye(3), np.zeros(3))
    world = name == "universe" or (name == tree.world_link and tree.world_link is not None)
    if not world and name not in tree.link_body and name in tree.urdf.joints:
        joint = tree.urdf.joints[name]
        if joint.type == "floating":
            name = joint.child
        else:
            return _named(frame_site(tree, joint.child, floating), name)
    if world or name not in tree.link_body:
        if world:
            if floating or tree.world_link is not None:
                return FrameSite(name, -1, np.eye(3), np.zeros(3))
            return FrameSite(name, 0, np.eye(3), np.zeros(3))
        close = sorted(frame_names(tree, floating), key=lambda n: _distance(n, name))[:3]
        raise InputError(f"no frame {name!r} in the robot {tree.urdf.name!r} (frames are its links, "
                         f"its joints and 'universe'; closest: {', '.join(map(repr, close))})")
    b, R, p = tree.link_body[name]
    return FrameSite(name, b, np.asarray(R, dtype=float), np.asarray(p, dtype=float))


def _named(site: FrameSite, name: str) -> FrameSite:
    return FrameSite(name, site.body, site.R, site.p)


def _distance(a: str, b: str) -> int:
    """Levenshtein distance (for the suggestions of an unknown name)."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


class TreeKinematics:
    """The symbolic kinematics of a tree (see the module docstring).

    ``q``, ``u``, ``udot``: symengine symbols in tree order (the free-flyer's 7 and 6 first
    when ``floating``); ``inertias``: per body (m, h (3), I_o (3x3)) as the dynamics has them
    (only m and h are read: the centre of mass).  Quantities are formed on first use.
    """

    def __init__(self, tree: KinematicTree, q: list, u: list, udot: list, inertias: list,
                 floating: bool) -> None:
        self.tree, self.q, self.u, self.udot = tree, q, u, udot
        self.inertias, self.floating = inertias, floating
        bodies = tree.bodies
        self.layout = lay = tree_layout(tree, floating)
        self.joints = [None] + [JointModel(bodies[i], q[lay.q_slices[i]])
                                for i in range(1, len(bodies))]
        self._placements = None
        self._columns = None
        self._motions = None

    # ------------------------------------------------------------------ placements
    def placements(self) -> tuple[list, list]:
        """(R_i (3x3), p_i (3)) of every body in the world; also each joint frame's world
        rotation R_λ R_p (``joint_rotations``)."""
        if self._placements is not None:
            return self._placements
        bodies = self.tree.bodies
        one, Z3 = [[num(float(i == k)) for k in range(3)] for i in range(3)], (ZERO,) * 3
        if self.floating:           # the free-flyer's coordinates, in the frame (R_o, p_o)
            R_o, p_o = self.tree.base_placement
            Ro, po = _nmat(R_o), tuple(num(x) for x in p_o)
            R = [_mm(Ro, quaternion_matrix(*self.q[3:7]))]
            p = [_add(po, _mv(Ro, tuple(self.q[0:3])))]
        else:
            R, p = [one], [Z3]
        Rj = [None]
        for i in range(1, len(bodies)):
            jt, lam = self.joints[i], bodies[i].parent
            R0 = _mm(R[lam], jt.R_p)
            pi = _add(_add(p[lam], _mv(R[lam], jt.p_p)), _mv(R0, jt.p_J))
            Ri = _mm(R0, jt.R_J) if jt.rotates else R0
            R.append(Ri)
            p.append(pi)
            Rj.append(R0)
        self._placements = (R, p)
        self.joint_rotations = Rj
        return self._placements

    def frame_placement(self, site: FrameSite) -> tuple[list, tuple]:
        """(R_f (3x3), p_f (3)) of a frame in the world."""
        if site.body < 0:
            return _nmat(np.eye(3)), (ZERO,) * 3
        R, p = self.placements()
        Rb, pb = R[site.body], p[site.body]
        Rl = _nmat(site.R)
        pl = tuple(num(x) for x in site.p)
        return _mm(Rb, Rl), _add(pb, _mv(Rb, pl))

    # ------------------------------------------------------------------ velocities
    def body_motions(self) -> tuple[list, list]:
        """Per body, its spatial velocity (ω, v) and acceleration (ω', a) in body coordinates
        (v, a: of the body origin's spatial motion; no gravity)."""
        if self._motions is not None:
            return self._motions
        bodies, lay = self.tree.bodies, self.layout
        u, ud = self.u, self.udot
        Z3 = (ZERO,) * 3
        if self.floating:
            V, A = [(tuple(u[3:6]), tuple(u[0:3]))], [(tuple(ud[3:6]), tuple(ud[0:3]))]
        else:
            V, A = [(Z3, Z3)], [(Z3, Z3)]
        for i in range(1, len(bodies)):
            jt, lam = self.joints[i], bodies[i].parent
            w, v = jt.motion(*V[lam])
            aw, av = jt.motion(*A[lam])
            Jw, Jv = jt.velocity(u[lay.u_slices[i]])
            Dw, Dv = jt.velocity(ud[lay.u_slices[i]])
            w, v = _add(w, Jw), _add(v, Jv)
            aw = _add(_add(aw, Dw), _cross(w, Jw))
            av = _add(_add(av, Dv), _add(_cross(w, Jv), _cross(v, Jw)))
            V.append((w, v))
            A.append((aw, av))
        self._motions = (V, A)
        return self._motions

    def _local(self, site: FrameSite, motion: tuple) -> tuple:
        """A body's motion vector (angular, linear at the body origin; body axes) as the
        frame's: (linear at the frame origin, angular), frame axes."""
        w, v = motion
        Rl = _nmat(site.R)
        pl = tuple(num(x) for x in site.p)
        return _mtv(Rl, _add(v, _cross(w, pl))), _mtv(Rl, w)

    def _convert(self, site: FrameSite, lin: tuple, ang: tuple, reference: str) -> tuple:
        """A local (linear, angular) motion of the frame in another reference."""
        if reference == "local":
            return lin, ang
        Rf, pf = self.frame_placement(site)
        lin, ang = _mv(Rf, lin), _mv(Rf, ang)
        if reference == "world":        # the same motion at the world origin
            lin = _sub(lin, _cross(ang, pf))
        return lin, ang

    def frame_velocity(self, site: FrameSite, reference: str) -> tuple:
        """(linear (3), angular (3)) of the frame's spatial velocity in ``reference``."""
        if site.body < 0:
            return (ZERO,) * 3, (ZERO,) * 3
        V, _ = self.body_motions()
        lin, ang = self._local(site, V[site.body])
        return self._convert(site, lin, ang, reference)

    def frame_acceleration(self, site: FrameSite, reference: str, classical: bool) -> tuple:
        """(linear, angular) of the frame's spatial acceleration in ``reference`` (Pinocchio's
        getFrameAcceleration); ``classical``: the linear part plus ω × v in the same
        reference (getFrameClassicalAcceleration)."""
        if site.body < 0:
            return (ZERO,) * 3, (ZERO,) * 3
        V, A = self.body_motions()
        lin, ang = self._local(site, A[site.body])
        lin, ang = self._convert(site, lin, ang, reference)
        if classical:
            vl, va = self.frame_velocity(site, reference)
            lin = _add(lin, _cross(va, vl))
        return lin, ang

    # ------------------------------------------------------------------ Jacobians
    def world_columns(self) -> list:
        """Per tree speed, its motion at unit speed: (linear at the world origin, angular),
        world axes, and the body whose subtree it moves (0 for the free-flyer)."""
        if self._columns is not None:
            return self._columns
        R, p = self.placements()
        cols = []
        Z3 = (ZERO,) * 3
        if self.floating:
            for k in range(3):
                cols.append((_column(R[0], k), Z3, 0))
            for k in range(3):
                w = _column(R[0], k)
                cols.append((_cross(p[0], w), w, 0))
        for i in range(1, len(self.tree.bodies)):
            jt = self.joints[i]
            if jt.kind in ("revolute", "continuous", "prismatic"):
                axis = _mv(self.joint_rotations[i], jt.axis)      # = R_i a, shorter
                cols.append((axis, Z3, i) if jt.kind == "prismatic"
                            else (_cross(p[i], axis), axis, i))
                continue
            for Sw, Sv in jt.S:         # the child's axes: R_i S, moved to the world origin
                w = _mv(R[i], Sw)
                cols.append((_add(_mv(R[i], Sv), _cross(p[i], w)), w, i))
        self._columns = cols
        return cols

    def _ancestors(self, body: int) -> set:
        out = set()
        while body > 0:
            out.add(body)
            body = self.tree.bodies[body].parent
        return out

    def frame_jacobian(self, site: FrameSite, reference: str) -> list:
        """6 rows (linear, angular) of o entries (tree order): the frame's velocity in
        ``reference`` is J u."""
        cols = self.world_columns()
        o = len(cols)
        J = [[ZERO] * o for _ in range(6)]
        if site.body < 0:
            return J
        up = self._ancestors(site.body)
        Rf, pf = self.frame_placement(site)
        for k, (lin, ang, body) in enumerate(cols):
            if body > 0 and body not in up:
                continue
            if reference != "world":
                lin = _add(lin, _cross(ang, pf))        # at the frame origin
                if reference == "local":
                    lin, ang = _mtv(Rf, lin), _mtv(Rf, ang)
            for r in range(3):
                J[r][k] = lin[r]
                J[3 + r][k] = ang[r]
        return J

    # ------------------------------------------------------------------ centre of mass
    def center_of_mass(self) -> tuple:
        """The centre of mass of the moving bodies in the world (3): p_0 + R_0 h_0 / M, from
        the root's subtree moments (:meth:`_subtree_moments`)."""
        Ms, hs = self._subtree_moments()
        if Ms[0] == 0:
            raise InputError(f"the robot {self.tree.urdf.name!r} has no moving mass: no centre "
                             "of mass")
        R, p = self.placements()
        return _add(p[0], _scale(1 / Ms[0], _mv(R[0], hs[0])))

    def _subtree_moments(self) -> tuple[list, list]:
        """Per body i, its subtree's mass M_i and first moment h_i about the body origin in
        the body's axes, accumulated from the leaves: h_λ += M_i (p_p + R_p p_J) + R_p R_J h_i.
        In body axes the child's sum enters its parent's through the joint rotation (a
        product), so each subtree sum stays one node of the DAG, computed once (in world
        axes symengine would flatten the nested sums into one sum per subtree: O(n depth))."""
        bodies = self.tree.bodies
        Ms = [ZERO if i == 0 and not self.floating else m
              for i, (m, _, _) in enumerate(self.inertias)]
        hs = [(ZERO,) * 3 if i == 0 and not self.floating else tuple(h)
              for i, (_, h, _) in enumerate(self.inertias)]
        for i in range(len(bodies) - 1, 0, -1):
            jt, lam = self.joints[i], bodies[i].parent
            h = _mv(jt.R_J, hs[i]) if jt.rotates else hs[i]
            origin = _add(jt.p_p, _mv(jt.R_p, jt.p_J))
            hs[lam] = _add(hs[lam], _add(_scale(Ms[i], origin), _mv(jt.R_p, h)))
            Ms[lam] = Ms[lam] + Ms[i]
        return Ms, hs

    def center_of_mass_jacobian(self) -> list:
        """3 rows of o entries (tree order): the centre of mass's velocity (world) is J u.
        Column of a joint of body i with motion (ω, v) = (S_w, S_v) in the body's axes:
        R_i (M_i S_v + S_w × h_i) / M, with M_i, h_i the subtree's mass and first moment about
        the body origin in its axes (:meth:`_subtree_moments`; O(1) per column): a rotation
        about the axis a gives R_λ R_p (a × R_J h_i) / M, a translation (M_i / M) R_λ R_p a."""
        Ms, hs = self._subtree_moments()
        total = Ms[0]
        if total == 0:
            raise InputError(f"the robot {self.tree.urdf.name!r} has no moving mass: no centre "
                             "of mass")
        inv = 1 / total
        R, _ = self.placements()
        cols = []
        if self.floating:                   # the base's linear speeds move everything: R_0
            cols += [_column(R[0], k) for k in range(3)]
            e = _nmat(np.eye(3))
            cols += [_scale(inv, _mv(R[0], _cross(e[k], hs[0]))) for k in range(3)]
        for i in range(1, len(self.tree.bodies)):
            jt = self.joints[i]
            R0 = self.joint_rotations[i]
            if jt.kind == "prismatic":
                cols.append(_scale(Ms[i] * inv, _mv(R0, jt.axis)))
            elif jt.kind in ("revolute", "continuous"):
                cols.append(_scale(inv, _mv(R0, _cross(jt.axis, _mv(jt.R_J, hs[i])))))
            else:
                for Sw, Sv in jt.S:
                    local = _add(_scale(Ms[i], Sv), _cross(Sw, hs[i]))
                    cols.append(_scale(inv, _mv(R[i], local)))
        J = [[ZERO] * len(cols) for _ in range(3)]
        for k, c in enumerate(cols):
            for r in range(3):
                J[r][k] = c[r]
        return J


def flatten(rows: list) -> list:
    """Nested rows -> one list (row-major)."""
    return [e for row in rows for e in row]


def homogeneous(R: list, p: tuple) -> list:
    """The 4x4 placement [[R, p], [0, 1]] as 16 expressions (row-major)."""
    one, z = se.Integer(1), ZERO
    return [*R[0], p[0], *R[1], p[1], *R[2], p[2], z, z, z, one]
