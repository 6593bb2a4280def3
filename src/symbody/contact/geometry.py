"""Contact geometry on bodies: a half-space, spheres (a point is a sphere of radius 0), and
boxes, capsules and cylinders against a plane.

Each shape is fixed in a body: given by a point (a ``Point``) and, where the shape turns
with the body, the body's frame (a ``ReferenceFrame``; ``frame=`` or a ``RigidBody`` in
place of the point, whose mass centre and frame are taken).  A shape touches a plane at
its *features*, each a sphere fixed in the body (its centre at ``offset`` from the point,
radius R; a corner or rim point is a sphere of radius 0):

- ``Sphere``: one feature, the sphere itself;
- ``Box``: its 8 corners (the deepest point of a box in a half-space is always a corner;
  a box lying on a face touches at 4 corners, on an edge at 2);
- ``Capsule``: its 2 end spheres (the deepest point of a capsule is on an end sphere; a
  capsule lying parallel to the plane touches at both);
- ``Cylinder``: its 2 rims.  By default each rim's deepest point, the rim point
  c_end - R ŵ with ŵ the unit projection of the plane normal n onto the end face
  (w = n - (n . a) a, a the axis; |w| floored at 1e-12): exact for a rolling or tilted
  cylinder, but a cylinder standing flat touches at one point that jumps across the face
  as it tilts; ``rim_points=k`` puts k points evenly on each rim instead (standing
  cylinders; a polygon when rolling).

The velocity of a contact point is that of the material point of the body at that place,
v = v_O + ω × r (O the shape's point, r from O to the contact point): hence the frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sympy as sm
from sympy.physics.mechanics import Particle, RigidBody
from sympy.physics.vector import Point, ReferenceFrame, Vector

from ..compat.sympy import TIME
from ..errors import InputError

__all__ = ["Shape", "Plane", "Sphere", "Box", "Capsule", "Cylinder", "SphereFeature", "BodyPoint"]

#: the floor under |w| (the sine of a cylinder's tilt) in its deepest rim point c - R w/|w|
RIM_FLOOR = sm.Float(1e-12)


class BodyPoint(Point):
    """A point fixed in a body (frame ``frame``, None for a body that does not turn) at
    ``offset`` from the body's point ``origin``; its velocity in any frame F is the
    two-point theorem's, v = v_origin(F) + ω_frame(F) × offset (the velocity of the
    body's material point there, whatever point of the body happens to be in contact)."""

    def __init__(self, name: str, origin: Point, frame: ReferenceFrame | None, offset: Vector | int):
        super().__init__(name)
        offset = offset if isinstance(offset, Vector) else Vector(0)
        self.contact_origin, self.contact_frame, self.contact_offset = origin, frame, offset
        self.set_pos(origin, offset)

    def vel(self, frame: ReferenceFrame) -> Vector:
        if frame is self.contact_frame:
            return Vector(0)
        v = self.contact_origin.vel(frame)
        if self.contact_frame is not None and self.contact_offset != Vector(0):
            v = v + self.contact_frame.ang_vel_in(frame).cross(self.contact_offset)
        return v


def _placement(where: Any, frame: ReferenceFrame | None, what: str) -> tuple[Point, ReferenceFrame | None]:
    """(point, frame) of a shape given a Point (with ``frame``) or a body."""
    if isinstance(where, RigidBody):
        if frame is not None and frame is not where.frame:
            raise InputError(f"{what}: frame={frame} differs from the frame of the body {where.name}")
        return where.masscenter, where.frame
    if isinstance(where, Particle):
        return where.point, frame
    if isinstance(where, Point):
        if frame is not None and not isinstance(frame, ReferenceFrame):
            raise InputError(f"{what}: frame must be a ReferenceFrame, got {frame!r}")
        return where, frame
    raise InputError(f"{what}: the shape's place must be a Point, a RigidBody or a Particle, got {where!r}")


def _length(value: Any, what: str, allow_zero: bool = True) -> sm.Expr:
    try:
        v = sm.sympify(value)
    except (sm.SympifyError, TypeError) as exc:
        raise InputError(f"{what} must be a number or a SymPy expression, got {value!r}") from exc
    if v.is_number and (not v.is_real or v < 0 or (v == 0 and not allow_zero)):
        raise InputError(f"{what} must be {'>= 0' if allow_zero else '> 0'}, got {value!r}")
    return v


@dataclass(frozen=True, eq=False)
class SphereFeature:
    """A sphere fixed in a body: centre at ``offset`` from ``origin``, radius ``radius``;
    ``frame``: the body's frame (None: it does not turn, or unknown); ``label``: which part
    of the shape (e.g. "corner 3"); ``offset_moves``: the offset is the deepest rim point,
    not a fixed material point (a cylinder's rim); ``max_penetration``: the depth beyond
    which the compliant contact means nothing (None: no limit)."""

    origin: Point
    frame: ReferenceFrame | None
    offset: Vector
    radius: sm.Expr
    label: str = ""
    max_penetration: sm.Expr | None = None


class Shape:
    """Base class of the contact shapes: ``point`` and ``frame`` (the body's frame, or None)."""

    point: Point
    frame: ReferenceFrame | None

    def describe(self) -> str:
        return f"{type(self).__name__} at {self.point}"

    def features(self, normal: Vector | None = None) -> list[SphereFeature]:
        """The spheres through which the shape touches a plane of unit ``normal``."""
        raise NotImplementedError


class Plane(Shape):
    """The half-space below a plane: the plane through ``point`` with unit outward
    ``normal`` (a Vector); points with (x - point) . normal < 0 are inside.

    ``frame``: the frame the plane is fixed in (the ground's N, an inclined or moving
    body's frame); by default the one frame the normal is given in with constant components
    (``Plane(O, N.z)`` is fixed in N).  Needed for friction (the tangent basis and the
    plane's material velocity).
    """

    def __init__(self, point: Any, normal: Vector, frame: ReferenceFrame | None = None):
        self.point, given = _placement(point, frame, "Plane")
        if not isinstance(normal, Vector):
            raise InputError(f"Plane: the normal must be a sympy.physics.vector Vector (e.g. N.z), got "
                             f"{normal!r}")
        if normal == Vector(0):
            raise InputError("Plane: the normal is the zero vector")
        self.normal = normal
        self.frame = given if given is not None else _constant_frame(normal)

    def describe(self) -> str:
        return f"Plane through {self.point} with normal {self.normal}"

    def tangents(self) -> tuple[Vector, Vector]:
        """(t1, t2), unit vectors fixed in the plane's frame with t1 x t2 = n: the other two
        axes of that frame in cyclic order when n is one of its axes, else t1 along
        e x n for the frame axis e least aligned with n (at random numbers for symbols)."""
        F = self.frame
        if F is None:
            raise InputError(f"{self.describe()}: the frame the plane is fixed in is unknown; give "
                             "Plane(point, normal, frame=F)")
        n = self.normal
        axes = (F.x, F.y, F.z)
        for i, e in enumerate(axes):
            if n == e:
                return axes[(i + 1) % 3], axes[(i + 2) % 3]
            if n == -e:
                return axes[(i + 2) % 3], axes[(i + 1) % 3]
        comps = [sm.sympify(n.dot(e)) for e in axes]
        atoms = set().union(*(c.free_symbols | c.atoms(sm.core.function.AppliedUndef) for c in comps))
        trial = {s: 0.3 + 0.1 * k for k, s in enumerate(sorted(atoms, key=str))}
        values = [abs(float(c.xreplace(trial).evalf())) for c in comps]
        e = axes[values.index(min(values))]
        t1 = e.cross(n)
        t1 = t1 / sm.sqrt(sm.simplify(t1.dot(t1)))
        return t1, n.cross(t1)


def _constant_frame(v: Vector) -> ReferenceFrame | None:
    """The one frame ``v`` has components in, when they do not change with time; else None."""
    frames = [frame for _, frame in v.args]
    if len(set(frames)) != 1:
        return None
    comps = v.args[0][0]
    if any(c.has(TIME) or c.atoms(sm.core.function.AppliedUndef) for c in comps):
        return None
    return frames[0]


class Sphere(Shape):
    """A sphere of ``radius`` (>= 0; 0: a point) centred at ``point``.

    ``frame``: the frame of the body it is fixed in, needed when friction acts at its
    surface (radius > 0): the contact point then moves with the body's rotation.  A
    ``RigidBody`` in place of the point gives its mass centre and frame.
    """

    def __init__(self, point: Any, radius: Any = 0, frame: ReferenceFrame | None = None):
        self.point, self.frame = _placement(point, frame, "Sphere")
        self.radius = _length(radius, "Sphere: the radius")

    def describe(self) -> str:
        return f"Sphere at {self.point} (radius {self.radius})"

    def features(self, normal: Vector | None = None) -> list[SphereFeature]:
        limit = None if self.radius == 0 else self.radius
        return [SphereFeature(self.point, self.frame, Vector(0), self.radius, "", limit)]


def _half_extents(values: Any, what: str) -> tuple[sm.Expr, sm.Expr, sm.Expr]:
    try:
        vals = list(values)
    except TypeError:
        vals = [values] * 3
    if len(vals) != 3:
        raise InputError(f"{what}: give three half extents (along the frame's x, y, z), got {values!r}")
    return tuple(_length(v, f"{what}: a half extent", allow_zero=False) for v in vals)  # type: ignore[return-value]


class Box(Shape):
    """A box centred at ``point``, its edges along the axes of ``frame``, with
    ``half_extents`` (a, b, c) along x, y, z.  Touches a plane at its 8 corners."""

    def __init__(self, point: Any, half_extents: Sequence | Any, frame: ReferenceFrame | None = None):
        self.point, self.frame = _placement(point, frame, "Box")
        if self.frame is None:
            raise InputError("Box: give the frame the box is fixed in (frame=B or a RigidBody)")
        self.half_extents = _half_extents(half_extents, "Box")

    def features(self, normal: Vector | None = None) -> list[SphereFeature]:
        F = self.frame
        a, b, c = self.half_extents
        out = []
        for i in range(8):
            sx, sy, sz = (1 if i & 1 else -1), (1 if i & 2 else -1), (1 if i & 4 else -1)
            offset = sx * a * F.x + sy * b * F.y + sz * c * F.z
            out.append(SphereFeature(self.point, F, offset, sm.S.Zero, f"corner {i}"))
        return out


def _unit_axis(axis: Any, frame: ReferenceFrame | None, what: str) -> Vector:
    if frame is None:
        raise InputError(f"{what}: give the frame it is fixed in (frame=B or a RigidBody)")
    if isinstance(axis, str):
        if axis not in ("x", "y", "z"):
            raise InputError(f"{what}: axis must be 'x', 'y', 'z' or a unit Vector, got {axis!r}")
        return getattr(frame, axis)
    if not isinstance(axis, Vector):
        raise InputError(f"{what}: axis must be 'x', 'y', 'z' or a unit Vector fixed in the frame, got {axis!r}")
    return axis


class Capsule(Shape):
    """A capsule: the points within ``radius`` of the segment from point - h a to
    point + h a (``half_length`` h, unit ``axis`` a fixed in ``frame``, default its z).
    Touches a plane through its 2 end spheres."""

    def __init__(self, point: Any, radius: Any, half_length: Any, frame: ReferenceFrame | None = None,
                 axis: Any = "z"):
        self.point, self.frame = _placement(point, frame, "Capsule")
        self.axis = _unit_axis(axis, self.frame, "Capsule")
        self.radius = _length(radius, "Capsule: the radius", allow_zero=False)
        self.half_length = _length(half_length, "Capsule: the half length")

    def features(self, normal: Vector | None = None) -> list[SphereFeature]:
        h, a = self.half_length, self.axis
        return [SphereFeature(self.point, self.frame, s * h * a, self.radius, label, self.radius)
                for s, label in ((1, "end +"), (-1, "end -"))]


class Cylinder(Shape):
    """A solid cylinder of ``radius`` and ``half_length`` h centred at ``point``, its unit
    ``axis`` a fixed in ``frame`` (default its z).  Touches a plane at its two rims: each
    rim's deepest point by default, or ``rim_points`` points evenly on each rim (see the
    module docstring)."""

    def __init__(self, point: Any, radius: Any, half_length: Any, frame: ReferenceFrame | None = None,
                 axis: Any = "z", rim_points: int | None = None):
        self.point, self.frame = _placement(point, frame, "Cylinder")
        self.axis = _unit_axis(axis, self.frame, "Cylinder")
        self.radius = _length(radius, "Cylinder: the radius", allow_zero=False)
        self.half_length = _length(half_length, "Cylinder: the half length", allow_zero=False)
        if rim_points is not None and (not isinstance(rim_points, int) or rim_points < 3):
            raise InputError(f"Cylinder: rim_points must be an integer >= 3 (or None: each rim's deepest "
                             f"point), got {rim_points!r}")
        self.rim_points = rim_points

    def _face_axes(self) -> tuple[Vector, Vector]:
        F, a = self.frame, self.axis
        for e in (F.x, F.y, F.z):
            if a == e or a == -e:
                continue
            u = e - e.dot(a) * a
            if u != Vector(0):
                u = u / sm.sqrt(sm.simplify(u.dot(u)))
                return u, a.cross(u)
        raise InputError("Cylinder: the axis is the zero vector")

    def features(self, normal: Vector | None = None) -> list[SphereFeature]:
        h, a, R = self.half_length, self.axis, self.radius
        out = []
        if self.rim_points is None:
            if normal is None:
                raise InputError("Cylinder: its deepest rim points need the plane's normal")
            w = normal - normal.dot(a) * a
            # |w| = sin of the tilt; the tiny floor keeps a cylinder standing exactly flat finite
            # (its contact then at the face's centre), and changes nothing above 1e-6 rad
            w_hat = w / sm.sqrt(w.dot(w) + RIM_FLOOR ** 2)
            for s, label in ((1, "rim +"), (-1, "rim -")):
                out.append(SphereFeature(self.point, self.frame, s * h * a - R * w_hat, sm.S.Zero, label, R))
            return out
        e1, e2 = self._face_axes()
        k = self.rim_points
        for s, side in ((1, "+"), (-1, "-")):
            for j in range(k):
                phi = 2 * sm.pi * j / k
                offset = s * h * a + R * (sm.cos(phi) * e1 + sm.sin(phi) * e2)
                out.append(SphereFeature(self.point, self.frame, offset, sm.S.Zero, f"rim {side} point {j}", R))
        return out
