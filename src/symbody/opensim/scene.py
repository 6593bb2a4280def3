"""The scene of an OpenSim model: its bodies' geometry and its markers, y up as in OpenSim.

Each body's (and the ground's) attached geometry is drawn on its frame: meshes found
beside the model file (``.vtp`` through :mod:`.vtp`, ``.stl``, ``.obj``; looked for in
``geometry_dirs``, the model's folder, its ``Geometry`` folder and the ``Geometry`` folders
one and two levels up, as OpenSim does), with the file's scale factors, colour and opacity;
spheres, cylinders, bricks and ellipsoids (an ellipsoid as a sphere of its largest radius).
A mesh file that is not found or cannot be read is drawn as a small sphere, and one
:class:`GeometryFileWarning` names every such file.  Markers are small spheres (the
scene's ``points``, by name); a thin segment joins each joint's parent and child body
origins.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy as sm
from sympy.physics.mechanics import Point, ReferenceFrame

from ..errors import InputError
from ..scene import Box, Cylinder, Mesh, Scene, Segment, Sphere, VisualizationFrame
from .mobilizers import matmul, matvec, num

if TYPE_CHECKING:
    from .model import OpenSimModel
    from .model_spec import GeometrySpec

__all__ = ["build_scene", "GeometryFileWarning", "find_geometry"]


class GeometryFileWarning(UserWarning):
    """Geometry files of an OpenSim model that were not found or not read (drawn as spheres)."""


def _color(rgb) -> str:
    r, g, b = (min(max(float(c), 0.0), 1.0) for c in rgb)
    return f"#{round(255 * r):02x}{round(255 * g):02x}{round(255 * b):02x}"


def find_geometry(name: str, model_path: str | None, geometry_dirs: Any = None) -> Path | None:
    """The mesh file ``name`` in ``geometry_dirs`` or beside the model (None: not found)."""
    dirs: list[Path] = []
    if geometry_dirs is not None:
        dirs += [Path(d) for d in ([geometry_dirs] if isinstance(geometry_dirs, (str, os.PathLike))
                                   else geometry_dirs)]
    if model_path is not None:
        base = Path(model_path).resolve().parent
        dirs += [base, base / "Geometry", base.parent / "Geometry", base.parent.parent / "Geometry"]
    for d in dirs:
        p = d / name
        if p.is_file():
            return p
    return None


def _shape(g: GeometrySpec, model: OpenSimModel, geometry_dirs: Any, missing: list):
    color, opacity = _color(g.color), float(g.opacity)
    if g.kind == "mesh":
        path = find_geometry(g.file, model.spec.path, geometry_dirs)
        scale = tuple(float(s) for s in g.scale)
        if path is not None:
            try:
                if path.suffix.lower() == ".vtp":
                    from .vtp import vtp_as_obj
                    path = vtp_as_obj(path)
                return Mesh(path, scale, color=color, opacity=opacity)
            except (InputError, OSError) as exc:
                missing.append(f"{g.file} ({exc})")
        else:
            missing.append(g.file)
        return Sphere(0.01 * max(abs(s) for s in scale), color=color, opacity=opacity)
    size = list(g.size) or [0.05]
    s = max(abs(v) for v in g.scale)
    if g.kind == "sphere":
        return Sphere(size[0] * s, color=color, opacity=opacity)
    if g.kind == "cylinder":
        radius, half = size[0], size[1] if len(size) > 1 else size[0]
        return Cylinder(2 * half * s, radius * s, color=color, opacity=opacity)
    if g.kind == "brick":
        hl = (size + size[-1:] * 3)[:3]
        return Box(*(2 * v * s for v in hl), color=color, opacity=opacity)
    if g.kind == "ellipsoid":
        return Sphere(max(size) * s, color=color, opacity=opacity)
    return Sphere(0.02 * s, color=color, opacity=opacity)


def build_scene(model: OpenSimModel, geometry_dirs: Any = None) -> Scene:
    """The scene (see the module docstring)."""
    conv = model.sympy_converter
    kin = model.kinematics
    N = ReferenceFrame(model.spec.ground)
    O = Point(f"{model.spec.ground}_origin")
    items: list = []
    missing: list = []
    groups = [(model.spec.ground, model.spec.ground_geometry)]
    groups += [(n.name, model.spec.bodies[n.name].geometry) for n in model.tree.nodes[1:]]
    used: set = set()
    for body, geometry in groups:
        R, p = kin.pose(body)
        for k, g in enumerate(geometry):
            Rg = matmul(R, [[num(v) for v in row] for row in np.asarray(g.placement.R)])
            pg = [a + b for a, b in zip(p, matvec(R, [num(v) for v in g.placement.p]))]
            name = f"{body}/{g.name or g.kind}"
            if name in used:
                name = f"{name}#{k}"
            used.add(name)
            items.append(VisualizationFrame(
                name, sm.Matrix(3, 3, [conv(e) for row in Rg for e in row]),
                sm.Matrix([conv(e) for e in pg]), _shape(g, model, geometry_dirs, missing)))
    points = {}
    for name, (body, loc) in model.markers.items():
        points[name] = sm.Matrix([conv(e) for e in kin.point(body, loc)])
        items.append(VisualizationFrame(f"marker {name}", None, name,
                                        Sphere(0.008, color="#ff69b4")))
    for node in model.tree.nodes[1:]:
        a = kin.pose(node.parent)[1]
        b = kin.pose(node.index)[1]
        items.append(Segment(f"joint {node.joint.name}", sm.Matrix([conv(e) for e in a]),
                             sm.Matrix([conv(e) for e in b]), radius=0.004, color="grey"))
    for c in model.force_contributions:      # what the force builders draw (muscle paths)
        items += list(c.scene)
    if missing:
        shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8
                                          else "")
        warnings.warn(f"{model.spec.where}: geometry files not found or not read (drawn as small "
                      f"spheres): {shown}; give geometry_dirs=... to model.make_scene",
                      GeometryFileWarning, stacklevel=3)
    return Scene(N, O, *items, points=points, up="y", name=model.name)
