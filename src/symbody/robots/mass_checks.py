"""Checks of a URDF robot's masses before its equations are formed: every moving joint moves
some inertia, and a floating base is a body with an inertia about every axis (otherwise
the mass matrix is singular and the error would name a speed, not the link and line)."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .tree import KinematicTree
from .urdf_parse import UrdfModel

__all__ = ["check_masses", "check_free_body"]


def check_masses(model: UrdfModel, tree: KinematicTree, floating: bool) -> None:
    """Every moving joint must move some inertia (else a zero row of M): the composite
    inertia of its subtree, seen along the joint axis, must be positive."""
    where = model.path or "URDF string"
    n = len(tree.bodies)
    sub_mass = np.zeros(n)
    sub_rot = np.zeros(n)
    for b in reversed(tree.bodies):
        sub_mass[b.index] += b.mass
        sub_rot[b.index] += np.trace(b.I_o)
        if b.parent >= 0:
            sub_mass[b.parent] += sub_mass[b.index]
            sub_rot[b.parent] += sub_rot[b.index]
    for b in tree.moving:
        j = b.joint
        if j.type in ("prismatic", "planar", "floating") and sub_mass[b.index] <= 0:
            raise InputError(f"{where}, joint {j.name!r} (line {j.line}): the links it moves "
                             "have no mass (a zero row of the mass matrix)")
        if j.type != "prismatic" and sub_rot[b.index] <= 0:
            raise InputError(f"{where}, joint {j.name!r} (line {j.line}): the links it moves "
                             "have no inertia (a zero row of the mass matrix)")
        # a last body turning about an axis through its centre of mass with no inertia about it
        if j.type not in ("prismatic", "floating") and not b.children and \
                j.axis @ b.I_o @ j.axis <= 1e-14 * max(sub_rot[b.index], 1e-300):
            raise InputError(f"{where}, joint {j.name!r} (line {j.line}): the links it moves "
                             "have no inertia about its axis (a zero row of the mass matrix)")
    if floating:
        check_free_body(model, tree)
    root = tree.bodies[0]
    if floating and root.mass <= 0 and not root.I_o.any() and len(root.children) == 1:
        j = tree.bodies[root.children[0]].joint
        raise InputError(f"{where}, joint {j.name!r} (line {j.line}): the floating base link "
                         f"{root.name!r} has no inertia and this is its only moving joint, so "
                         "the base and the joint turn the same body (a singular mass matrix); "
                         "give the base link an <inertial>")


def check_free_body(model: UrdfModel, tree: KinematicTree) -> None:
    """A floating base needs a positive definite spatial inertia of the whole robot (at the
    zero configuration): mass m > 0 and a rotational inertia I_C about the centre of mass C
    with no zero principal moment, I_C = sum_b R_b I_b R_b^T + m_b (|c_b - C|^2 1 - (c_b - C)
    (c_b - C)^T).  Otherwise the base's speeds along the null direction appear in no equation
    (a singular mass matrix); the InputError names the base link and its <inertial> line."""
    base = tree.bodies[0]
    link = model.links[base.name]
    inertial = link.element.find("inertial")
    line = (inertial.find("inertia") or inertial).line if inertial is not None else link.line
    what = (f"{model.path or 'URDF string'}, link {base.name!r} (line {line}): the floating base"
            + (" with the links it carries" if len(tree.bodies) > 1 else ""))
    R = {-1: np.eye(3)}
    p = {-1: np.zeros(3)}
    masses, centres, inertias = [], [], []
    for b in tree.bodies:                       # placements at q = 0 (parents come first)
        R[b.index] = R[b.parent] @ b.R_p
        p[b.index] = R[b.parent] @ b.p_p + p[b.parent]
        if b.mass > 0:
            c = b.h / b.mass
            I_c = b.I_o - b.mass * (c @ c * np.eye(3) - np.outer(c, c))
            masses.append(b.mass)
            centres.append(R[b.index] @ c + p[b.index])
            inertias.append(R[b.index] @ I_c @ R[b.index].T)
        elif b.I_o.any():
            masses.append(0.0)
            centres.append(p[b.index])
            inertias.append(R[b.index] @ b.I_o @ R[b.index].T)
    total = float(sum(masses))
    if total <= 0.0:
        raise InputError(f"{what} has no mass: a free body needs a positive <mass>")
    C = sum(m * c for m, c in zip(masses, centres)) / total
    I_C = sum(I + m * ((c - C) @ (c - C) * np.eye(3) - np.outer(c - C, c - C))
              for m, c, I in zip(masses, centres, inertias))
    moments, axes = np.linalg.eigh(I_C)
    if moments[0] <= 1e-12 * max(float(moments[-1]), 1e-300):
        axis = axes[:, 0] * np.sign(axes[np.argmax(np.abs(axes[:, 0])), 0])
        raise InputError(
            f"{what} has no rotational inertia about the axis "
            f"({', '.join(f'{x:.3g}' for x in axis)}) through its centre of mass (principal "
            f"moments {', '.join(f'{x:.3g}' for x in moments)}): a free body's rotation about "
            "it appears in no equation (a singular mass matrix); give the <inertia> a positive "
            "moment about every axis")
