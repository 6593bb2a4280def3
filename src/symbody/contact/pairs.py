"""The kinematics of one contact point: a body's sphere against a plane, or two spheres.

For a sphere (centre c = O + offset, radius R, fixed in the body of frame B) against the
plane through P with unit normal n, fixed in F::

    g = (c - P) . n - R                     the gap (< 0: penetration)
    r_b = offset - R n                      from O to the contact point C = c - R n
    v_rel = d/dt|F (O - P) + ω_B/F × r_b    b's material point at C relative to the plane's

(the plane's material point at C is fixed in F, so its velocity in F is zero; the relative
velocity of two coincident points is the same in every frame, so F serves as well as the
inertial frame).  For two spheres (centres c_a, c_b, radii R_a, R_b) with d = c_b - c_a::

    g = |d| - R_a - R_b,   n = d / |d|,   C = c_a + (R_a + g/2) n   (the middle of the overlap)

g' = dg/dt is taken as the time derivative of the scalar g (q' in it; the formulation's
kinematic equations replace q' when the equations are formed).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sm
from sympy.physics.vector import ReferenceFrame, Vector

from ..compat.sympy import TIME
from ..errors import InputError
from .geometry import BodyPoint, Plane, Sphere, SphereFeature

__all__ = ["PointKinematics", "sphere_on_plane", "sphere_on_sphere"]


@dataclass(frozen=True, eq=False)
class PointKinematics:
    """One contact point: ``gap`` g, ``gap_rate`` g', unit ``normal`` n (from a to b),
    ``tangents`` (t1, t2) or None, the material points ``point_a``, ``point_b`` where the
    forces act (BodyPoints), the relative velocity ``slip`` (b's point relative to a's, a
    Vector; None when friction is not modelled), ``max_penetration`` (or None), a
    ``label`` of the feature, the frames ``frame_a``, ``frame_b`` the two shapes turn with
    (None: unknown) and the ``radius`` of b's sphere."""

    gap: sm.Expr
    gap_rate: sm.Expr
    normal: Vector
    tangents: tuple | None
    point_a: BodyPoint
    point_b: BodyPoint
    slip: Vector | None
    max_penetration: sm.Expr | None
    label: str = ""
    frame_a: ReferenceFrame | None = None
    frame_b: ReferenceFrame | None = None
    radius: sm.Expr = sm.S.Zero


def _check_moves(gap: sm.Expr, name: str, what: str) -> None:
    """Two shapes whose gap does not change with time are fixed to each other: refused."""
    if not gap.has(TIME) and not gap.atoms(sm.core.function.AppliedUndef):
        raise InputError(f"contact {name!r}: {what} are fixed to each other (the same body, or bodies "
                         "that cannot move relative to each other): their gap never changes")


def sphere_on_plane(plane: Plane, feature: SphereFeature, name: str, with_slip: bool,
                    label: str, point_name: str) -> PointKinematics:
    """The contact point of a body's sphere ``feature`` on ``plane`` (module docstring);
    ``name``: the contact's (for errors), ``point_name``: a prefix for the contact points'
    names; ``with_slip``: form the relative velocity (friction)."""
    P, n, F = plane.point, plane.normal, plane.frame
    O, B, R = feature.origin, feature.frame, feature.radius
    try:
        rel = O.pos_from(P)
    except ValueError as exc:
        raise InputError(f"contact {name!r}: the position of {O} relative to the plane's point {P} is "
                         f"not defined ({exc})") from None
    centre = rel + feature.offset
    gap = centre.dot(n) - R
    _check_moves(gap, name, f"the plane and the {label or 'sphere'}")
    gap_rate = gap.diff(TIME)
    r_b = feature.offset - R * n
    slip, tangents = None, None
    if with_slip:
        if B is None and r_b != Vector(0):
            raise InputError(
                f"contact {name!r}: friction (or rolling resistance) acts at the surface of the sphere at {O} (radius {R}), "
                "whose velocity there depends on the body's rotation: give the frame the sphere is "
                "fixed in, Sphere(point, radius, frame=B), or Sphere(rigid_body, radius)")
        tangents = plane.tangents()
        slip = _relative_velocity(O, P, F, rel)
        if B is not None and r_b != Vector(0):
            slip = slip + B.ang_vel_in(F).cross(r_b)
    point_b = BodyPoint(f"{point_name}_b", O, B, r_b)
    point_a = BodyPoint(f"{point_name}_a", P, F, rel + r_b)
    return PointKinematics(gap, gap_rate, n, tangents, point_a, point_b, slip, feature.max_penetration,
                           label, F, B, R)


def _relative_velocity(O, P, F, rel: Vector) -> Vector:
    """v_O(F) - v_P(F) = d/dt|F (O - P): from the velocities the user gave (compact, in the
    speeds) where both are known in F, else by differentiating the position."""
    try:
        return O.vel(F) - P.vel(F)
    except ValueError:
        return rel.dt(F)


def sphere_on_sphere(a: Sphere, b: Sphere, name: str, point_name: str) -> PointKinematics:
    """The contact point of two spheres (frictionless; module docstring)."""
    try:
        d = b.point.pos_from(a.point)
    except ValueError as exc:
        raise InputError(f"contact {name!r}: the position of {b.point} relative to {a.point} is not "
                         f"defined ({exc})") from None
    Ra, Rb = a.radius, b.radius
    frames = {f for _, f in d.args}
    if not frames:
        raise InputError(f"contact {name!r}: the two spheres have the same centre {a.point}")
    dist = sm.sqrt(d.dot(d))
    gap = dist - Ra - Rb
    _check_moves(gap, name, "the two spheres")
    n = d / dist
    r_a = (Ra + gap / 2) * n
    r_b = -(Rb + gap / 2) * n
    limits = [r for r in (Ra, Rb) if r != 0]
    limit = None if not limits else (limits[0] if len(limits) == 1 else sm.Min(*limits))
    return PointKinematics(gap, gap.diff(TIME), n, None,
                           BodyPoint(f"{point_name}_a", a.point, a.frame, r_a),
                           BodyPoint(f"{point_name}_b", b.point, b.frame, r_b), None, limit)
