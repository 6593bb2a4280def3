"""The kinematic tree of a URDF robot: moving bodies, with fixed joints merged into their parent.

A *body* is a link reached by a moving joint (revolute, continuous, prismatic), or the root
link, together with every link welded to it by fixed joints (Pinocchio merges them the same
way).  The body frame is the moving joint's frame (the URDF child link's frame).  For each
body the tree keeps the constant placement of its joint frame in the parent body's frame
(rotation R_p (3x3), translation p_p (3)), the joint axis (3, in the joint frame) and the
merged inertia about the body origin: mass m, first moment h = m c (3), rotational inertia
I_o (3x3) = sum over the merged links of (I_c + m (|c|^2 1 - c c^T)).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .urdf_parse import UrdfJoint, UrdfModel

__all__ = ["Body", "KinematicTree", "build_tree"]


@dataclass
class Body:
    """One moving body (see the module docstring); ``joint`` is None for the root."""

    index: int
    name: str
    joint: UrdfJoint | None
    parent: int                     # -1 for the root
    R_p: np.ndarray
    p_p: np.ndarray
    mass: float = 0.0
    h: np.ndarray = field(default_factory=lambda: np.zeros(3))
    I_o: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))
    links: list = field(default_factory=list)     # (link name, R (3x3), p (3)) in the body frame
    children: list = field(default_factory=list)

    @property
    def dynamic_parameters(self) -> np.ndarray:
        """Pinocchio's order: [m, h_x, h_y, h_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz] (10)."""
        I = self.I_o
        return np.array([self.mass, *self.h, I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]])


@dataclass
class KinematicTree:
    """The bodies in depth-first order (a parent before its children) and where each link is."""

    bodies: list
    link_body: dict          # link name -> (body index, R (3x3), p (3)) of the link in the body
    urdf: UrdfModel
    world_link: str | None = None     # the root link of a floating joint (the world)

    @property
    def base_placement(self) -> tuple[np.ndarray, np.ndarray]:
        """(R, p): the frame of a free-flyer's coordinates in the world (a floating joint's
        <origin>; the identity without one)."""
        return self.bodies[0].R_p, self.bodies[0].p_p

    @property
    def moving(self) -> list:
        """The bodies with a moving joint (all but the root), in tree order."""
        return self.bodies[1:]


def build_tree(model: UrdfModel) -> KinematicTree:
    """Walk the links depth first from the root, the child joints of each link in alphabetical
    order of their names (urdfdom's order, hence Pinocchio's), numbering a body when its
    link is visited, and merge fixed joints."""
    by_parent: dict[str, list] = {}
    for j in sorted(model.joints.values(), key=lambda j: j.name):
        by_parent.setdefault(j.parent, []).append(j)
    bodies: list[Body] = []
    link_body: dict = {}
    # (link, its joint from the parent, the parent's body, placement of the link in that body)
    root, world = model.root, None
    if model.floating_joint is not None:    # the world link and its floating joint: the base
        world, root = root, model.joints[model.floating_joint].child
    R0, p0 = np.eye(3), np.zeros(3)
    if model.floating_joint is not None:    # the base's coordinates are in the joint's frame
        fj = model.joints[model.floating_joint]
        R0, p0 = fj.rotation, fj.origin
    stack: list = [(root, None, -1, R0, p0)]
    while stack:
        link, joint, parent, R, p = stack.pop()
        if joint is None or joint.type != "fixed":
            b = len(bodies)
            # the root's (R, p): the frame its free-flyer coordinates are measured in
            bodies.append(Body(b, link, joint, parent, R, p))
            if parent >= 0:
                bodies[parent].children.append(b)
            R, p = np.eye(3), np.zeros(3)
        else:
            b = parent
        link_body[link] = (b, R, p)
        bodies[b].links.append((link, R, p))
        _add_inertia(bodies[b], model.links[link], R, p)
        below = [(j.child, j, b, R @ j.rotation, R @ j.origin + p)
                 for j in by_parent.get(link, [])]
        stack.extend(reversed(below))
    return KinematicTree(bodies, link_body, model, world)


def _add_inertia(body: Body, link, R: np.ndarray, p: np.ndarray) -> None:
    if link.mass == 0 and not link.inertia.any():
        return
    c = R @ link.com + p
    m = link.mass
    body.mass += m
    body.h = body.h + m * c
    body.I_o = body.I_o + R @ link.inertia @ R.T + m * (c @ c * np.eye(3) - np.outer(c, c))
