"""What the 3D viewer draws: a Scene of shapes attached to a model's frames and points.

The vocabulary is PyDy's (``pydy.viz``), without depending on it::

    scene = Scene(N, O,
                  VisualizationFrame("rear wheel", Fr, rear_hub, Torus(0.3, 0.02, color="black")),
                  VisualizationFrame("rider", Fr, frame_cm, Sphere(0.12, color="red")),
                  Segment("fork", "steer_point", "front_hub", radius=0.02),
                  points=drawing.points, traces=["rear_contact"], up="z")

A :class:`VisualizationFrame` places one :class:`Shape` at a point with the orientation of a
reference frame: the pose along a trajectory is

    position  r(t) = p(q(t), c)            (3,)  the point's coordinates in the scene's frame N
    rotation  R(t) = N.dcm(frame)(q(t), c)  (3, 3) frame-fixed coordinates -> N coordinates

A :class:`Segment` is a cylinder from one point to another (links, rods, axles), its length
and direction taken from the two points at every instant.  ``points`` are the named points
(3x1 expressions in N) that the page reports through ``window.symbody.position(name)``;
``lines`` are polylines through them, ``traces`` points whose paths are drawn.

Shapes follow three.js's (and PyDy's) conventions in the frame they are attached to: a Box
has its ``width``, ``height``, ``depth`` along x, y, z; Cylinder, Cone and Torus have their
axis along y (a wheel spinning about its frame's y axis is a Torus or a Cylinder); a Plane
lies in the x-y plane.  Dimensions are numbers or expressions in the model's constants
(evaluated with the trajectory's constant values); ``None`` means "sized from the scene"
(about 1-2 % of its extent).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sympy as sm
from sympy.physics.vector import Point, ReferenceFrame, Vector

from .errors import InputError

__all__ = ["Shape", "Box", "Cylinder", "Cone", "Sphere", "Torus", "Plane",
           "VisualizationFrame", "Segment", "Scene", "UP_AXES"]
__all__ += ["Mesh", "MESH_FORMATS"]

#: Allowed values of Scene.up: the axis of N that points up on screen.
UP_AXES = ("x", "y", "z", "-x", "-y", "-z")

_NAMED_COLORS = {
    "black": "#222222", "white": "#ffffff", "grey": "#8c8c8c", "gray": "#8c8c8c",
    "red": "#d62728", "green": "#2ca02c", "blue": "#1f77b4", "orange": "#ff7f0e",
    "purple": "#9467bd", "brown": "#8c564b", "pink": "#e377c2", "olive": "#bcbd22",
    "cyan": "#17becf", "yellow": "#f2c14e", "silver": "#c0c0c0", "darkgrey": "#555555",
    "darkgray": "#555555", "lightgrey": "#d0d0d0", "lightgray": "#d0d0d0", "navy": "#1b3a6b",
    "teal": "#1b7f79", "maroon": "#7f1d1d",
}


def _color(value: str) -> str:
    """'#rrggbb' from a colour name or a hex string (InputError otherwise)."""
    text = str(value).strip().lower()
    if text in _NAMED_COLORS:
        return _NAMED_COLORS[text]
    digits = text[1:] if text.startswith("#") else text
    if len(digits) == 3:
        digits = "".join(c * 2 for c in digits)
    try:
        int(digits, 16)
    except ValueError:
        digits = ""
    if len(digits) != 6:
        raise InputError(f"unknown colour {value!r}: give '#rrggbb' or one of {', '.join(_NAMED_COLORS)}")
    return "#" + digits


def _dimension(name: str, value: Any) -> sm.Expr | float | None:
    if value is None:
        return None
    if isinstance(value, (int, float)):
        if not value > 0:
            raise InputError(f"shape dimension {name} must be positive, got {value!r}")
        return float(value)
    try:
        return sm.sympify(value)
    except (sm.SympifyError, TypeError) as exc:
        raise InputError(f"shape dimension {name} must be a number or an expression in the "
                         f"constants, got {value!r}") from exc


class Shape:
    """Base of the shapes: ``color`` (name or '#rrggbb') and ``opacity`` in (0, 1].

    Subclasses name their dimensions in ``dimensions``; each is a positive number, an
    expression in the model's constants, or None (sized from the scene).
    """

    kind = "shape"
    dimensions: tuple[str, ...] = ()

    def __init__(self, *sizes: Any, color: str = "grey", opacity: float = 1.0, **named: Any):
        if len(sizes) > len(self.dimensions):
            raise InputError(f"{type(self).__name__} takes {len(self.dimensions)} dimensions "
                             f"({', '.join(self.dimensions)}), got {len(sizes)}")
        values = dict(zip(self.dimensions, sizes))
        for key, value in named.items():
            if key not in self.dimensions:
                raise InputError(f"{type(self).__name__} has no dimension {key!r}; "
                                 f"its dimensions: {', '.join(self.dimensions)}")
            values[key] = value
        for name in self.dimensions:
            setattr(self, name, _dimension(name, values.get(name)))
        self.color = _color(color)
        opacity = float(opacity)
        if not 0.0 < opacity <= 1.0:
            raise InputError(f"opacity must be in (0, 1], got {opacity!r}")
        self.opacity = opacity

    def sizes(self) -> dict[str, Any]:
        """Dimension name -> number, expression or None."""
        return {name: getattr(self, name) for name in self.dimensions}

    def __repr__(self) -> str:
        dims = ", ".join(f"{k}={v}" for k, v in self.sizes().items())
        return f"{type(self).__name__}({dims}, color={self.color!r}, opacity={self.opacity:g})"

    def __eq__(self, other: object) -> bool:
        return (type(other) is type(self) and self.sizes() == other.sizes()
                and (self.color, self.opacity) == (other.color, other.opacity))

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.color, self.opacity))


class Box(Shape):
    """A box with edges ``width``, ``height``, ``depth`` along the frame's x, y, z, centred on the point."""

    kind = "box"
    dimensions = ("width", "height", "depth")


class Cylinder(Shape):
    """A cylinder of ``length`` along the frame's y axis and ``radius``, centred on the point."""

    kind = "cylinder"
    dimensions = ("length", "radius")


class Cone(Shape):
    """A cone of ``length`` along the frame's y axis (apex at +y) and base ``radius``, centred on the point."""

    kind = "cone"
    dimensions = ("length", "radius")


class Sphere(Shape):
    """A sphere of ``radius`` centred on the point."""

    kind = "sphere"
    dimensions = ("radius",)


class Torus(Shape):
    """A ring of ``radius`` (centre line) and ``tube_radius`` around the frame's y axis (a tyre)."""

    kind = "torus"
    dimensions = ("radius", "tube_radius")


class Plane(Shape):
    """A flat rectangle, ``length`` along the frame's x and ``width`` along y, seen from both sides."""

    kind = "plane"
    dimensions = ("length", "width")


#: Mesh file formats the viewer reads (by the file name's suffix, any case).
MESH_FORMATS = ("stl", "obj", "dae")


class Mesh(Shape):
    """A triangle mesh read from a file (STL, OBJ or Collada .dae), in the frame's coordinates.

    ``Mesh(filename, scale=(1, 1, 1), color="grey", opacity=1.0)``: a vertex v of the file is
    drawn at ``diag(scale) v`` in the frame (Collada files also get their ``<unit>``).  STL
    and OBJ meshes take ``color``; Collada meshes keep their own material colours (as RViz
    does) and take ``color`` only where a part has none.  Textures are not drawn.  The
    viewer embeds the file's bytes in the page (compressed, once per file).
    """

    kind = "mesh"
    dimensions = ()

    def __init__(self, filename: str | Path, scale: Any = (1.0, 1.0, 1.0), *, color: str = "grey",
                 opacity: float = 1.0):
        super().__init__(color=color, opacity=opacity)
        path = Path(filename).expanduser()
        fmt = path.suffix.lower().lstrip(".")
        if fmt not in MESH_FORMATS:
            raise InputError(f"mesh file {str(filename)!r}: the viewer reads "
                             f"{', '.join('.' + f for f in MESH_FORMATS)} files, not {path.suffix or 'files without a suffix'!r}")
        if isinstance(scale, (int, float)):
            scale = (scale, scale, scale)
        try:
            factors = tuple(float(v) for v in scale)
        except (TypeError, ValueError) as exc:
            raise InputError(f"mesh {path.name!r}: scale must be a number or 3 numbers, got {scale!r}") from exc
        if len(factors) != 3 or not all(math.isfinite(v) and v != 0 for v in factors):
            raise InputError(f"mesh {path.name!r}: scale must be 3 finite non-zero numbers, got {scale!r}")
        self.filename = path.resolve()
        self.format = fmt
        self.scale = factors

    def __repr__(self) -> str:
        return (f"Mesh({str(self.filename)!r}, scale={self.scale}, color={self.color!r}, "
                f"opacity={self.opacity:g})")

    def __eq__(self, other: object) -> bool:
        return (super().__eq__(other) and isinstance(other, Mesh)
                and (self.filename, self.scale) == (other.filename, other.scale))

    def __hash__(self) -> int:
        return hash((type(self).__name__, str(self.filename), self.scale, self.color, self.opacity))


PointSpec = Point | str | sm.MatrixBase | Vector | Sequence


def check_point_names(lines: Sequence[Sequence[str]], traces: Sequence[str], known: Collection[str],
                      owner: str) -> None:
    """Every point a polyline of ``lines`` goes through and every traced point must be one of
    the ``known`` names; else an InputError naming the ``owner`` ("scene", "drawing"), the
    line or trace and the known points."""
    for line in lines:
        for name in line:
            if name not in known:
                raise InputError(f"{owner} line {list(line)} goes through the unknown point {name!r}; "
                                 f"known points: {sorted(known)}")
    for name in traces:
        if name not in known:
            raise InputError(f"{owner} trace {name!r} is not a named point; known points: {sorted(known)}")


@dataclass(frozen=True)
class VisualizationFrame:
    """A shape placed at a point, turned with a reference frame (PyDy's VisualizationFrame).

    ``VisualizationFrame(name, frame, point, shape)``; also ``(frame, point, shape)``,
    ``(name, body, shape)`` and ``(body, shape)`` with a RigidBody (its frame and mass centre)
    or a Particle (its point; no turning).  ``frame`` is a ReferenceFrame oriented (directly
    or through others) relative to the scene's frame, a 3x3 rotation matrix R (expressions:
    frame-fixed coordinates -> N coordinates, what ``N.dcm(frame)`` would give), or None (the
    shape keeps N's axes).
    ``point`` is a Point (located relative to the scene's origin), the name of one of the
    scene's ``points``, or the 3 coordinates in N (Matrix, sequence or Vector).
    ``axes``: draw the frame's x, y, z axes (red, green, blue) with this length (True: sized
    from the scene).
    """

    name: str
    frame: ReferenceFrame | sm.ImmutableMatrix | None
    point: Any
    shape: Shape
    axes: bool | float = False

    def __init__(self, *args: Any, axes: bool | float = False):
        name, frame, point, shape = _parse_visualization_args(args)
        if not isinstance(shape, Shape):
            raise InputError(f"visualization frame {name!r}: the shape must be a symbody Box, Cylinder, "
                             f"Cone, Sphere, Torus, Plane or Mesh, got {type(shape).__name__}")
        if isinstance(frame, sm.MatrixBase):
            if frame.shape != (3, 3):
                raise InputError(f"visualization frame {name!r}: a rotation matrix must be 3x3, "
                                 f"got {frame.shape[0]}x{frame.shape[1]}")
            frame = sm.ImmutableMatrix(frame)
        elif frame is not None and not isinstance(frame, ReferenceFrame):
            raise InputError(f"visualization frame {name!r}: frame must be a ReferenceFrame, a 3x3 "
                             f"rotation matrix or None, got {type(frame).__name__}")
        object.__setattr__(self, "name", str(name))
        object.__setattr__(self, "frame", frame)
        object.__setattr__(self, "point", point)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "axes", axes)


def _parse_visualization_args(args: tuple) -> tuple[str, Any, Any, Shape]:
    items = list(args)
    name = items.pop(0) if items and isinstance(items[0], str) and len(items) in (3, 4) else None
    if len(items) == 3:
        frame, point, shape = items
        if name is None:
            name = getattr(frame, "name", None) or "frame"
        return name, frame, point, shape
    if len(items) == 2:
        body, shape = items
        masscenter = getattr(body, "masscenter", None) or getattr(body, "point", None)
        if masscenter is None:
            raise InputError("VisualizationFrame(name, body, shape) needs a RigidBody or Particle, "
                             f"got {type(body).__name__}")
        frame = getattr(body, "frame", None)
        return name or str(getattr(body, "name", "body")), frame, masscenter, shape
    raise InputError("VisualizationFrame takes (name, frame, point, shape), (frame, point, shape), "
                     f"(name, body, shape) or (body, shape); got {len(args)} arguments")


@dataclass(frozen=True)
class Segment:
    """A cylinder of ``radius`` from point ``start`` to point ``end`` (a link, rod or axle).

    ``start`` and ``end`` are point specifications as for :class:`VisualizationFrame`;
    the cylinder follows both points (its length is |end - start| at each instant).
    """

    name: str
    start: Any
    end: Any
    radius: Any = None
    color: str = "grey"
    opacity: float = 1.0
    axes: bool | float = False

    def __post_init__(self) -> None:
        shape = Cylinder(1.0, self.radius, color=self.color, opacity=self.opacity)
        object.__setattr__(self, "radius", shape.radius)
        object.__setattr__(self, "color", shape.color)
        object.__setattr__(self, "opacity", shape.opacity)

    @property
    def shape(self) -> Cylinder:
        return Cylinder(1.0, self.radius, color=self.color, opacity=self.opacity)


@dataclass(frozen=True)
class Scene:
    """Shapes on a model's frames and points, seen from the reference frame N (PyDy's Scene).

    ``Scene(N, origin, *visualization_frames, points=..., lines=..., traces=..., up="z")``.
    ``origin``: the Point whose position is (0, 0, 0) (needed only when visualization frames
    are placed at Points).  ``points``: name -> 3x1 coordinates in N (the model's drawing
    points: ``window.symbody.position(name)`` reports them); ``lines``: polylines through
    named points; ``traces``: named points whose paths are drawn; ``up``: the axis of N that
    points up on screen ("z", "y", "-x", ...); ``follow``: the name of the visualization frame
    the camera follows by default (None: a fixed camera showing the whole motion); ``ground``:
    draw a grid under the motion, perpendicular to ``up``.
    """

    reference_frame: ReferenceFrame
    origin: Point | None
    visualization_frames: tuple = ()
    points: Mapping[str, Any] = field(default_factory=dict)
    lines: tuple = ()
    traces: tuple = ()
    up: str = "z"
    follow: str | None = None
    ground: bool = True
    name: str = ""

    def __init__(self, reference_frame: ReferenceFrame, origin: Point | None = None,
                 *visualization_frames: VisualizationFrame | Segment,
                 points: Mapping[str, Any] | None = None, lines: Sequence[Sequence[str]] = (),
                 traces: Sequence[str] = (), up: str = "z", follow: str | None = None,
                 ground: bool = True, name: str = ""):
        if not isinstance(reference_frame, ReferenceFrame):
            raise InputError(f"Scene needs the inertial ReferenceFrame first, got {type(reference_frame).__name__}")
        if origin is not None and not isinstance(origin, Point):
            raise InputError(f"Scene origin must be a Point or None, got {type(origin).__name__}")
        if len(visualization_frames) == 1 and isinstance(visualization_frames[0], (list, tuple)):
            visualization_frames = tuple(visualization_frames[0])
        for vf in visualization_frames:
            if not isinstance(vf, (VisualizationFrame, Segment)):
                raise InputError(f"a Scene holds VisualizationFrames and Segments, got {type(vf).__name__}")
        names = [vf.name for vf in visualization_frames]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise InputError(f"visualization frame names must be unique; repeated: {', '.join(duplicates)}")
        points = dict(points or {})
        check_point_names(lines, traces, points, "scene")
        if up not in UP_AXES:
            raise InputError(f"up must be one of {', '.join(UP_AXES)}, got {up!r}")
        if follow is not None and follow not in names:
            raise InputError(f"follow={follow!r} is not a visualization frame of the scene; "
                             f"known: {', '.join(names) or '(none)'}")
        object.__setattr__(self, "reference_frame", reference_frame)
        object.__setattr__(self, "origin", origin)
        object.__setattr__(self, "visualization_frames", tuple(visualization_frames))
        object.__setattr__(self, "points", points)
        object.__setattr__(self, "lines", tuple(tuple(line) for line in lines))
        object.__setattr__(self, "traces", tuple(traces))
        object.__setattr__(self, "up", up)
        object.__setattr__(self, "follow", follow)
        object.__setattr__(self, "ground", bool(ground))
        object.__setattr__(self, "name", str(name))

    @classmethod
    def from_drawing(cls, drawing: Any, up: str | None = None, name: str = "") -> Scene:
        """A scene of a model's Drawing: a sphere at every point, a rod along every line.

        ``up`` defaults to "z" for 3D drawings and to the second axis of the drawing's
        ``plane`` for 2D ones.
        """
        points = dict(getattr(drawing, "points", {}) or {})
        if not points:
            raise InputError("the drawing has no points to make a scene of")
        lines = [list(line) for line in getattr(drawing, "lines", ()) or ()]
        if up is None:
            plane = tuple(getattr(drawing, "plane", (0, 1)))
            up = "z" if getattr(drawing, "view", "2d") == "3d" else "xyz"[plane[1]]
        items: list = []
        for line in lines:
            for a, b in zip(line[:-1], line[1:]):
                if a != b:
                    items.append(Segment(f"{a}-{b}", a, b, color="#4c72b0"))
        for p in points:
            items.append(VisualizationFrame(p, None, p, Sphere(None, color="#dd8452")))
        seen: set = set()
        unique = []
        for item in items:
            if item.name not in seen:
                seen.add(item.name)
                unique.append(item)
        return cls(ReferenceFrame("N_scene"), None, *unique, points=points, lines=lines,
                   traces=tuple(getattr(drawing, "traces", ()) or ()), up=up, name=name)

    def with_points(self, points: Mapping[str, Any], lines: Sequence[Sequence[str]] | None = None,
                    traces: Sequence[str] | None = None) -> Scene:
        """A copy with other named points (and lines, traces)."""
        return Scene(self.reference_frame, self.origin, *self.visualization_frames, points=points,
                     lines=self.lines if lines is None else lines,
                     traces=self.traces if traces is None else traces, up=self.up,
                     follow=self.follow, ground=self.ground, name=self.name)

    def __repr__(self) -> str:
        return (f"<Scene {self.name!r}: {len(self.visualization_frames)} shapes, "
                f"{len(self.points)} named points, up={self.up}>")
