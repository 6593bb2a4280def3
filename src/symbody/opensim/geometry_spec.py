"""The geometry an OpenSim 4.x file attaches to a frame (``<attached_geometry>``): meshes
(``.vtp``, ``.stl``, ``.obj`` files), spheres, cylinders, bricks, ellipsoids, with their
scale factors and appearance, placed in the frame's body.  Display only: nothing here changes
the equations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .model_spec import GeometrySpec, Placement

if TYPE_CHECKING:
    from .xml_tree import OsimElement

__all__ = ["geometry_of", "read_geometry"]

_SIZES = {"Sphere": ("radius",), "Cylinder": ("radius", "half_height"),
          "Brick": ("half_lengths",), "Ellipsoid": ("radii",), "Cone": ("base_radius", "height")}


def read_geometry(g: OsimElement, placement: Placement) -> GeometrySpec | None:
    """One geometry element on ``placement`` (None for frame axes, lines, arrows)."""
    scale = tuple(g.numbers("scale_factors", 3, default=(1, 1, 1)))
    app = g.find("Appearance")
    color, opacity, visible = (1.0, 1.0, 1.0), 1.0, True
    if app is not None:
        color = tuple(app.numbers("color", 3, default=(1, 1, 1)))
        opacity = app.number("opacity", 1.0)
        visible = app.flag("visible", True)
    if not visible:
        return None
    if g.tag == "Mesh":
        f = (g.text_of("mesh_file") or "").strip()
        if not f:
            return None
        return GeometrySpec(g.name, "mesh", placement, file=f, scale=scale, color=color,
                            opacity=opacity, line=g.line)
    if g.tag in _SIZES:
        size: list = []
        for tag in _SIZES[g.tag]:
            v = g.numbers(tag)
            if v is not None:
                size.extend(float(x) for x in v)
        return GeometrySpec(g.name, g.tag.lower(), placement, size=tuple(size), scale=scale,
                            color=color, opacity=opacity, line=g.line)
    return None


def geometry_of(frame: OsimElement, reader) -> list:
    """The geometry of a Ground or Body element and of the offset frames among its components
    (``reader.placement`` places an offset frame in its body)."""
    out: list = []
    base = reader.placement(frame)

    def attached(el: OsimElement, placement: Placement) -> None:
        ag = el.find("attached_geometry")
        for g in ag.children if ag is not None else []:
            spec = read_geometry(g, placement)
            if spec is not None:
                out.append(spec)

    attached(frame, base)
    comps = frame.find("components")
    for c in comps.children if comps is not None else []:
        if c.tag == "PhysicalOffsetFrame":
            attached(c, reader.placement(c))
    return out

