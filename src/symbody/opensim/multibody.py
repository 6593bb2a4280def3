"""The multibody tree of an OpenSim model, in Simbody's order.

OpenSim hands its bodies and joints to Simbody's ``MultibodyGraphMaker``, which numbers the
mobilized bodies level by level from the ground (a joint joins the tree when its parent is at
the previous level, in JointSet order), after giving every body without a joint a free joint
to the ground (OpenSim warns: "A FreeJoint will be added").  The generalized coordinates and
speeds of the Simbody state follow that order, each joint's coordinates in its own order.
This module reproduces the numbering, so that a symbody state and an OpenSim state map one to
one.  Closed loops of joints (OpenSim cuts them and adds constraints) and joints that would
have to be reversed are refused; bodies that move without mass are named
(``massless_bodies``: the model is then for kinematics only).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from .kinematics_only import massless_moving_bodies
from .model_spec import JOINT_DOFS, CoordinateSpec, JointSpec, ModelSpec, Placement

__all__ = ["TreeNode", "MultibodyTree", "build_multibody", "AddedFreeJointWarning"]


class AddedFreeJointWarning(UserWarning):
    """A body without a joint: connected to the ground by a free joint, as OpenSim does."""




@dataclass
class TreeNode:
    """A mobilized body: ``index`` (0 = ground), ``parent`` index, its ``joint``, ``level``."""

    index: int
    name: str
    parent: int
    joint: JointSpec | None
    level: int
    children: list = field(default_factory=list)


@dataclass
class MultibodyTree:
    """``nodes`` (ground first, then Simbody's mobilizer order) and ``coordinates`` (Simbody's
    q order); ``added_free_joints``: bodies given a free joint to the ground;
    ``massless_bodies``: the bodies that move without mass or inertia on or beyond them (a
    model for kinematics only: :mod:`.kinematics_only`)."""

    nodes: list
    coordinates: list
    added_free_joints: list
    massless_bodies: tuple = ()

    def node(self, name: str) -> TreeNode:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)


def _free_joint(spec: ModelSpec, body: str) -> JointSpec:
    el = spec.bodies[body].element
    coords = tuple(CoordinateSpec(f"free_{body}_{c}", f"free_{body}", 0.0, 0.0,
                                  (-np.pi, np.pi) if c[0] == "r" else (-10.0, 10.0), False, False,
                                  False, None, "rotational" if c[0] == "r" else "translational",
                                  None)
                   for c in ("rx", "ry", "rz", "tx", "ty", "tz"))
    ground = Placement(spec.ground, np.eye(3), np.zeros(3), spec.ground)
    child = Placement(body, np.eye(3), np.zeros(3), body)
    return JointSpec(f"free_{body}", "FreeJoint", ground, child, coords, (), el)


def build_multibody(spec: ModelSpec) -> MultibodyTree:
    """Simbody's tree of ``spec`` (see the module docstring)."""
    joints = list(spec.joints)
    as_child: dict[str, list] = {}
    for j in joints:
        as_child.setdefault(j.child.body, []).append(j)
    added = []
    for name in spec.bodies:
        involved = any(name in (j.parent.body, j.child.body) for j in joints)
        if not involved:
            joints.append(_free_joint(spec, name))
            added.append(name)
            warnings.warn(f"{spec.where}: body {name!r} is not connected by a joint; a "
                          "FreeJoint connects it to the ground (as OpenSim does)",
                          AddedFreeJointWarning, stacklevel=3)
    mass = {n: b.mass for n, b in spec.bodies.items()}
    mass[spec.ground] = 0.0
    nodes = [TreeNode(0, spec.ground, -1, None, 0)]
    where = {spec.ground: 0}
    used: set = set()
    level = 1
    while True:
        added_any = False
        for k, j in enumerate(joints):
            if k in used:
                continue
            p_in, c_in = j.parent.body in where, j.child.body in where
            if p_in and c_in:
                continue
            if c_in and not p_in:
                if nodes[where[j.child.body]].level == level - 1:
                    raise InputError(f"{_describe(j)}: its child body {j.child.body!r} is "
                                     "nearer the ground than its parent; reversed joints are "
                                     "not supported (swap the joint's parent and child)")
                continue
            if not p_in or nodes[where[j.parent.body]].level != level - 1:
                continue
            _add(nodes, where, j, level)
            used.add(k)
            added_any = True
            # a massless body with mobilities: Simbody adds its heaviest child joint at once
            cur = j
            while mass.get(cur.child.body, 0.0) == 0.0 and (JOINT_DOFS.get(cur.type) or 0) > 0:
                nxt = [(i, jj) for i, jj in enumerate(joints) if i not in used
                       and jj.parent.body == cur.child.body and jj.child.body not in where]
                if not nxt:
                    break
                i, jj = max(nxt, key=lambda t: mass.get(t[1].child.body, 0.0))
                _add(nodes, where, jj, nodes[where[cur.child.body]].level + 1)
                used.add(i)
                if mass.get(jj.child.body, 0.0) > 0:
                    break
                cur = jj
        if not added_any and not any(n.level == level for n in nodes):
            break
        level += 1
    missing = [n for n in spec.bodies if n not in where]
    if missing:
        raise InputError(f"{spec.where}: the bodies {', '.join(map(repr, missing))} are not "
                         "connected to the ground by joints")
    for k, j in enumerate(joints):
        if k not in used:
            raise InputError(f"{_describe(j)}: closes a kinematic loop ({j.parent.body!r} and "
                             f"{j.child.body!r} are already joined through other joints); "
                             "joints that close loops are not supported (use a constraint)")
    coords = [c for n in nodes[1:] for c in n.joint.coordinates]
    seen: set = set()
    for c in coords:
        if c.name in seen:
            raise InputError(f"{spec.where}: two coordinates are named {c.name!r}")
        seen.add(c.name)
    return MultibodyTree(nodes, coords, added, massless_moving_bodies(spec, nodes))


def _add(nodes: list, where: dict, j: JointSpec, level: int) -> None:
    idx = len(nodes)
    parent = where[j.parent.body]
    nodes.append(TreeNode(idx, j.child.body, parent, j, level))
    nodes[parent].children.append(idx)
    where[j.child.body] = idx


def _describe(j: JointSpec) -> str:
    if j.element is not None and j.element.tag == j.type:
        return j.element.describe()
    return f"joint {j.name!r}"
