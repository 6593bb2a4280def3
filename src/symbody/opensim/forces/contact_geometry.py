"""OpenSim's contact geometry (``ContactSphere``, ``ContactHalfSpace``) and the kinematics of a
sphere against a half-space or another sphere, in symengine, for the contact forces
(:mod:`.contact_forces`).

A ``ContactGeometry`` sits on a frame (4.x ``socket_frame``, 3.x ``<body_name>``) at
``location`` with ``orientation`` (body-fixed X-Y-Z angles).  Simbody's half-space is the
solid x > 0 of its frame: its outward normal is n = -x_H, and with the sphere's centre c and
the half-space's origin o (ground coordinates) the penetration depth is

    δ = R - n · (c - o),                    (the gap g = -δ)

and both OpenSim laws put the contact point midway through the overlap,
P = c - (R - δ/2) n (Simbody's ``HalfSpaceSphere`` contact and ``SmoothSphereHalfSpaceForce``;
``HuntCrossleyForce`` moves it by δ (1/2 - s₁) n for unequal stiffnesses).  The relative
velocity v = v_S(P) - v_H(P) of the two bodies' material points at P gives the penetration
rate δ' = -n · v and the slip (t₁ · v, t₂ · v) along the plane's tangents t₁ = z_H,
t₂ = y_H (t₁ × t₂ = n).

Two spheres a, b (Simbody's ``SphereSphere`` contact) with centres c_a, c_b and radii r_a, r_b:
n = (c_b - c_a)/|c_b - c_a| (from a to b), δ = r_a + r_b - |c_b - c_a|, the contact point
P = c_a + (r_a - δ/2) n (moved by δ (1/2 - s₁) n in ``HuntCrossleyForce``), δ' = -n · v with
v = v_b(P) - v_a(P) (= -d|c_b - c_a|/dt: the spin of either body moves P's material point
perpendicular to n), and the slip v - (n · v) n given by its three ground components
(t₁, t₂, t₃ = the ground's axes: no tangent basis of n is smooth on the whole sphere).
The force on b at P is F, on a -F.  Simbody picks the pair's order by sorting the
geometries' extents along an axis; the force does not depend on it (the contact point
P = c_a + (r_a - s₁ δ) n is the same from either side).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model_spec import Placement, body_fixed_xyz
from .base import ForceContext
from .point_forces import BodyTag, frame_in_ground, rotate_back
from .vector3 import F, add, dot, norm, scale, sub

__all__ = ["ContactShape", "contact_shape", "ContactKinematics", "sphere_on_half_space",
           "sphere_on_sphere", "ContactLoad", "GEOMETRY_TAGS"]

#: the contact geometry types of OpenSim (only spheres and half-spaces are built)
GEOMETRY_TAGS = ("ContactSphere", "ContactHalfSpace", "ContactMesh", "ContactEllipsoid",
                 "ContactCylinder", "ContactBrick")


@dataclass(frozen=True)
class ContactShape:
    """A contact geometry of the file: ``kind`` (its tag), ``radius`` (a sphere's),
    ``placement`` (its frame P fixed in a body: the geometry's location and orientation
    composed with its frame's), ``element``."""

    name: str
    kind: str
    radius: float
    placement: Placement
    element: Any


def _geometry_elements(ctx: ForceContext) -> dict:
    out: dict = {}
    for el in ctx.spec.element.walk():
        if el.tag in GEOMETRY_TAGS and el.name:
            out.setdefault(el.name, el)
    return out


def contact_shape(ctx: ForceContext, owner: Any, reference: str) -> ContactShape:
    """The contact geometry ``reference`` (a name or a path such as
    ``/contactgeometryset/heel_r``) that the force ``owner`` names."""
    name = reference.strip().rstrip("/").rsplit("/", 1)[-1]
    el = _geometry_elements(ctx).get(name)
    if el is None:
        raise owner.error(f"names the contact geometry {reference!r}, which is not in the model")
    if el.tag not in ("ContactSphere", "ContactHalfSpace"):
        raise owner.error(f"contact geometry {name!r} is a {el.tag}; only ContactSphere and "
                          "ContactHalfSpace are built")
    if el.text_of("body_name"):
        frame = ctx.spec.frame_of(BodyTag(el, "body_name"), "body")
    else:
        frame = ctx.frame(el, "frame")
    R = body_fixed_xyz(el.numbers("orientation", 3, default=(0, 0, 0)))
    placement = frame.compose(R, el.numbers("location", 3, default=(0, 0, 0)), name)
    radius = el.number("radius", 0.0) if el.tag == "ContactSphere" else 0.0
    if not (np.isfinite(radius) and radius >= 0):
        raise el.error(f"<radius> must be >= 0, got {radius}")
    return ContactShape(name, el.tag, radius, placement, el)


@dataclass
class ContactKinematics:
    """The kinematics of a sphere against a half-space or a sphere (module docstring),
    symengine: ``normal`` n, ``tangents`` (t₁, t₂), or the ground's three axes for two
    spheres (3 each, ground); ``depth`` δ and ``depth_rate`` δ'; ``slip`` (t_i · v);
    ``point`` P (3, ground); ``sphere`` the shape b the force F acts on, ``other`` the
    half-space or the sphere a.  :meth:`generalized` gives Q of a force on b at P (its
    opposite on a)."""

    sphere: ContactShape
    other: ContactShape
    normal: list
    tangents: tuple
    depth: Any
    depth_rate: Any
    slip: tuple
    point: list
    ctx: ForceContext

    def generalized(self, force: list) -> list:
        """Q = J_S(P)ᵀ F - J_H(P)ᵀ F of the force F (3, ground) on the sphere's body at P."""
        ctx = self.ctx
        out = [F(0.0)] * ctx.o
        if self.sphere.placement.body != ctx.spec.ground:
            out = ctx.point_force(self.sphere.placement.body, self._station(self.sphere), force)
        if self.other.placement.body != ctx.spec.ground:
            other = ctx.point_force(self.other.placement.body, self._station(self.other), force)
            out = [a - b for a, b in zip(out, other)]
        return out

    def _station(self, shape: ContactShape) -> list:
        R, p = self.ctx.kinematics.pose(shape.placement.body)
        return rotate_back(R, sub(self.point, p))


@dataclass(frozen=True)
class ContactLoad:
    """A contact force for ``model.system``'s loads: the force of ``record`` (its SymPy
    F_n and (F_t1, F_t2)), F = F_n n + F_t1 t₁ + F_t2 t₂, on the sphere's body at the
    contact point P = c - (R - δ/2 - ``shift`` δ) n (module docstring; δ = -gap) and -F on
    the half-space's body there (unless it is the ground).  Two spheres (``other`` a
    ContactSphere): F = F_n n + the three ground components of the friction, on b
    (``sphere``) at P = c_a + (r_a - δ/2 + ``shift`` δ) n, -F on a."""

    sphere: ContactShape
    other: ContactShape
    shift: float
    record: Any


def _speeds(ctx: ForceContext) -> list:
    u = [None] * ctx.o
    for name in ctx.coordinate_names:
        _, us, _, _, k = ctx.coordinate(name)
        u[k] = us
    return u


def _velocity(ctx: ForceContext, body: str, station: list, u: list) -> list:
    if body == ctx.spec.ground:
        return [F(0.0)] * 3
    J = ctx.kinematics.point_jacobian(body, station)
    return [sum((J[a][k] * u[k] for k in range(ctx.o)), F(0.0)) for a in range(3)]


def sphere_on_half_space(ctx: ForceContext, sphere: ContactShape, half_space: ContactShape,
                         shift: float = 0.0) -> ContactKinematics:
    """The kinematics of ``sphere`` against ``half_space``; ``shift``: the contact point
    moved by ``shift`` δ along n (HuntCrossleyForce's δ (1/2 - s₁))."""
    R_H, o = frame_in_ground(ctx, half_space.placement)
    x_H = [R_H[a][0] for a in range(3)]
    n = scale(F(-1.0), x_H)
    t1, t2 = [R_H[a][2] for a in range(3)], [R_H[a][1] for a in range(3)]
    c = ctx.kinematics.point(sphere.placement.body, sphere.placement.p)
    radius = F(sphere.radius)
    depth = radius - dot(n, sub(c, o))
    point = sub(c, scale(radius - depth / 2 - F(shift) * depth, n))
    v = _relative_velocity(ctx, sphere, half_space, point)
    return ContactKinematics(sphere, half_space, n, (t1, t2), depth, -dot(n, v),
                             (dot(t1, v), dot(t2, v)), point, ctx)


def _relative_velocity(ctx: ForceContext, b: ContactShape, a: ContactShape, point: list) -> list:
    """v_b(P) - v_a(P): the velocity of b's material point at P relative to a's (ground)."""
    u = _speeds(ctx)
    stations = []
    for shape in (b, a):
        R, p = ctx.kinematics.pose(shape.placement.body)
        stations.append(rotate_back(R, sub(point, p)))
    return sub(_velocity(ctx, b.placement.body, stations[0], u),
               _velocity(ctx, a.placement.body, stations[1], u))


def sphere_on_sphere(ctx: ForceContext, a: ContactShape, b: ContactShape,
                     shift: float = 0.0) -> ContactKinematics:
    """The kinematics of sphere ``b`` against sphere ``a`` (module docstring); ``shift``: the
    contact point moved by ``shift`` δ along n (HuntCrossleyForce's δ (1/2 - s₁))."""
    _, c_a = frame_in_ground(ctx, a.placement)
    _, c_b = frame_in_ground(ctx, b.placement)
    d = sub(c_b, c_a)
    distance = norm(d)
    n = scale(F(1.0) / distance, d)
    depth = F(a.radius + b.radius) - distance
    point = add(c_a, scale(F(a.radius) - depth / 2 + F(shift) * depth, n))
    v = _relative_velocity(ctx, b, a, point)
    rate = -dot(n, v)
    slip = sub(v, scale(dot(n, v), n))
    axes = tuple([F(float(i == k)) for i in range(3)] for k in range(3))
    return ContactKinematics(b, a, n, axes, depth, rate, tuple(slip), point, ctx)

