"""A robot's scene with its ground and contact forces, for the 3D viewer.

``robot.contact_scene()`` is ``robot.scene`` (the URDF's visual geometry) with each ground
plane of ``robot.ground_contacts`` drawn as a square in the plane (a :class:`~symbody.scene.Plane`
on a frame whose x-y plane is the ground: axes t1, t2, n) and, with ``forces=True``, each
contact feature's force as a rod (a :class:`~symbody.scene.Segment`) from its contact point P
to P + F / scale, with F = F_n n + F_t1 t1 + F_t2 t2 from the contact's record (zero, hence
not seen, while the feature is off the ground).  The named points ``"<feature> contact"``
and ``"<feature> force"`` are the rods' ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import sympy as sm
from sympy.physics.vector import ReferenceFrame

from ..errors import InputError
from ..scene import Plane, Scene, Segment, VisualizationFrame
from .ground_contact import contact_positions

if TYPE_CHECKING:
    from .robot import Robot

__all__ = ["contact_scene"]


def _matrix(columns: list) -> sm.Matrix:
    return sm.Matrix(3, 3, lambda i, j: sm.Float(columns[j][i]) if abs(columns[j][i]) > 1e-15 else 0)


def contact_scene(robot: Robot, *, forces: bool = True, scale: float | None = None, size: float = 2.0,
                  color: str = "red") -> Scene:
    """The scene (see the module docstring); ``scale`` in N per m (default: the robot's weight
    drawn 0.25 m long), ``size`` the planes' side (m)."""
    if not robot.ground_contacts:
        raise InputError("contact_scene: the robot has no ground contact (robot.add_ground_contact)")
    if not (np.isfinite(size) and size > 0):
        raise InputError(f"contact_scene: size must be a positive number of metres, got {size!r}")
    if scale is None:
        weight = sum(b.mass for b in robot.tree.bodies) * float(np.linalg.norm(robot.gravity))
        scale = weight / 0.25 if weight > 0 else 1.0
    if not (np.isfinite(scale) and scale > 0):
        raise InputError(f"contact_scene: scale must be a positive number (N per m), got {scale!r}")
    base = robot.scene
    N, O = robot.world_frame, robot.world_origin
    items = list(base.visualization_frames)
    points = dict(base.points)
    records = {r.name: r for r in robot.eom.contacts}
    positions = contact_positions(robot) if forces else {}
    for contact in robot.ground_contacts:
        G = ReferenceFrame(f"{contact.name}_plane")
        G.orient_explicit(N, _matrix([contact.t1, contact.t2, contact.normal]))
        where = O.locatenew(f"{contact.name}_plane_point",
                            sum((sm.Float(c) * e for c, e in zip(contact.point, (N.x, N.y, N.z))),
                                0 * N.x))
        items.append(VisualizationFrame(f"{contact.name} plane", G, where,
                                        Plane(size, size, color="lightgrey", opacity=0.6)))
        if not forces:
            continue
        n, t1, t2 = (sm.Matrix([sm.Float(x) for x in v]) for v in (contact.normal, contact.t1, contact.t2))
        for f in contact.features:
            rec = records[f.name]
            F = rec.normal_force * n
            if len(rec.friction_force) == 2:
                F = F + rec.friction_force[0] * t1 + rec.friction_force[1] * t2
            P = sm.Matrix(positions[f.name])
            points[f"{f.name} contact"] = P
            points[f"{f.name} force"] = P + F / sm.Float(scale)
            items.append(Segment(f"{f.name} force", f"{f.name} contact", f"{f.name} force",
                                 radius=0.004, color=color))
    return Scene(N, O, *items, points=points, lines=base.lines, traces=base.traces, up=base.up,
                 follow=base.follow, ground=base.ground, name=base.name)
