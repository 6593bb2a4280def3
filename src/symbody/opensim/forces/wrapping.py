"""Wrapping surfaces: OpenSim 4.6's ``WrapCylinder`` and ``WrapSphere`` as exact expressions.

A path segment P1-P2 (both in the wrap object's frame) either passes the surface or wraps
over it between two tangent points r1, r2 with a length s on the surface.  Each function
below follows OpenSim's ``wrapLine`` step by step (WrapCylinder.cpp, WrapSphere.cpp, the
helpers of WrapMath.cpp), every ``if`` a Piecewise, and returns a :class:`WrapOutcome`:

    mandatory   the segment meets the surface (OpenSim's ``mandatoryWrap``)
    wrapped     it wraps without meeting it (``wrapped``: OpenSim keeps the shortest)
    r1, r2, s   tangent points (wrap frame) and the length over the surface

Cylinder (axis z, radius R, length h): the tangent points of the lines from P1 and P2 in
the plane normal to the axis, slid along the axis onto the plane through P1, P2 and the
apex, and a helix between them, s = sqrt((R θ)² + Δz²).  Sphere (radius R at the origin):
tangent points in the plane of P1, P2 and the centre, and the great-circle arc, s = R θ
(OpenSim's far-side wrap gives s = -R (2π - θ): kept as OpenSim computes it).

A path with one wrap object is wrapped as OpenSim does it; see :mod:`.geometry_path` for
paths with several.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import symengine as se

from ...errors import InputError
from ..model_spec import body_fixed_xyz
from .vector3 import ZERO, F, add, cross, dot, norm, normalize, scale, sign_is, sub
from .vector3 import choose as where
from .vector3 import choose3 as where3

__all__ = ["WrapObjectSpec", "WrapOutcome", "read_wrap_object", "wrap_line", "WRAP_TYPES"]

WRAP_TYPES = ("WrapCylinder", "WrapSphere")
_QUADRANTS = {"-x": (0, -1), "x": (0, 1), "+x": (0, 1), "-y": (1, -1), "y": (1, 1),
              "+y": (1, 1), "-z": (2, -1), "z": (2, 1), "+z": (2, 1), "all": (0, 0),
              "unassigned": (0, 0)}
LINE_EPSILON = 1e-5


@dataclass(frozen=True)
class WrapObjectSpec:
    """A wrap object of the file: ``tag``, ``name``, the ``body`` it is fixed in, its pose in
    the body (``R`` (3x3): its axes, ``p`` (3): its origin), ``axis``/``sign`` of its
    quadrant (sign 0: all), ``radius``, ``length`` (cylinders), ``active``, ``line``."""

    tag: str
    name: str
    body: str
    R: np.ndarray
    p: np.ndarray
    axis: int
    sign: int
    radius: float
    length: float
    active: bool
    line: int


def read_quadrant(el) -> tuple:
    """(axis, sign) of a wrap object's ``<quadrant>`` (0, 0) for "all"."""
    q = (el.text_of("quadrant") or "all").strip().lower()
    if q not in _QUADRANTS:
        raise el.error(f"unknown <quadrant> {q!r} (x, -x, y, -y, z, -z or all)")
    return _QUADRANTS[q]


def read_wrap_pose(el, placement) -> tuple:
    """(R (3x3), p (3), quadrant axis, sign) of a wrap object's element fixed in the frame
    ``placement``: its axes and origin in the body, and its ``<quadrant>``."""
    R = body_fixed_xyz(el.numbers("xyz_body_rotation", 3, default=(0, 0, 0)))
    p = el.numbers("translation", 3, default=(0, 0, 0))
    return (placement.R @ R, placement.R @ p + placement.p, *read_quadrant(el))


def read_wrap_object(el, placement) -> WrapObjectSpec:
    """A ``<WrapCylinder>``/``<WrapSphere>`` element fixed in the frame ``placement``."""
    R, p, axis, sign = read_wrap_pose(el, placement)
    radius = el.number("radius", 0.05 if el.tag == "WrapSphere" else 1.0)
    length = el.number("length", 1.0) if el.tag == "WrapCylinder" else 0.0
    if not radius > 0:
        raise el.error(f"<radius> must be positive, got {radius}")
    return WrapObjectSpec(el.tag, el.name, placement.body, R, p, axis, sign, radius, length,
                          el.flag("active", True), el.line)


@dataclass
class WrapOutcome:
    """One segment against one wrap object (expressions; see the module docstring)."""

    mandatory: object
    wrapped: object
    r1: list
    r2: list
    length: object


def wrap_line(obj: WrapObjectSpec, P1: list, P2: list) -> WrapOutcome:
    """The wrap of segment P1-P2 (wrap frame) over ``obj``, as OpenSim's wrapLine."""
    if obj.tag == "WrapCylinder":
        return _cylinder(obj, P1, P2)
    if obj.tag == "WrapSphere":
        return _sphere(obj, P1, P2)
    raise InputError(f"wrap objects of type {obj.tag} are not supported")


def _closest_on_lines(p1, p2, p3, p4) -> tuple:
    """WrapMath::IntersectLines: the point of line p1p2 nearest line p3p4, its parameter s
    along p1->p2 (0..1), and the point of line p3p4 nearest p1p2."""
    v1, v2 = sub(p2, p1), sub(p4, p3)
    mag1, mag2 = norm(v1), norm(v2)
    v1, v2 = scale(1 / mag1, v1), scale(1 / mag2, v2)
    c = cross(v1, v2)
    denom = dot(c, c)
    d = sub(p3, p1)
    t = dot(d, cross(v1, c)) / denom          # det([d; v1; c])
    s = dot(d, cross(v2, c)) / denom          # det([d; v2; c])
    return add(p1, scale(s, v1)), s / mag1, add(p3, scale(t, v2))


def _tangents(P, R) -> tuple:
    """The two tangent points from P to the circle of radius R about the z axis, in the
    plane z = P_z (WrapCylinder::wrapLine), and ρ = distance of P from the axis."""
    rho = se.sqrt(P[0] ** 2 + P[1] ** 2)
    v = [P[0] / rho, P[1] / rho, ZERO]
    d = F(R * R) / rho
    pp = [d * v[0], d * v[1], P[2]]
    h = se.sqrt(F(R * R) - d * d)
    u = [-v[1], v[0], ZERO]
    return add(pp, scale(h, u)), sub(pp, scale(h, u)), rho


def _cylinder(obj: WrapObjectSpec, P1, P2) -> WrapOutcome:
    R, half = obj.radius, 0.5 * obj.length
    r2 = F(R * R)
    inside = se.Or(se.Lt(P1[0] ** 2 + P1[1] ** 2, r2), se.Lt(P2[0] ** 2 + P2[1] ** 2, r2))
    near12, t12, near00 = _closest_on_lines(P1, P2, [ZERO, ZERO, F(-half)],
                                            [ZERO, ZERO, F(half)])
    g = sub(near12, near00)
    meets = se.And(se.Lt(dot(g, g), r2), se.Gt(t12, F(0.0)), se.Lt(t12, F(1.0)))
    p11, p22 = [ZERO, ZERO, P1[2]], [ZERO, ZERO, P2[2]]
    r1a, r1b, rho1 = _tangents(P1, R)
    r2a, r2b, rho2 = _tangents(P2, R)
    ax, sg = obj.axis, obj.sign
    if sg != 0:
        s1, s2 = sign_is(P1[ax], sg), sign_is(P2[ax], sg)
        either = se.Or(s1, s2)
        mandatory = se.And(either, meets)
        opposite = se.Xor(sign_is(P1[ax], 1), sign_is(P2[ax], 1))
        wrapped = se.Or(se.Not(either), se.And(se.Not(meets), opposite,
                                               se.Not(sign_is(near12[ax], sg))))
        c1a, c1b = sign_is(r1a[ax], sg), sign_is(r1b[ax], sg)
        c2a, c2b = sign_is(r2a[ax], sg), sign_is(r2b[ax], sg)
        m1a, m1b, m2a, m2b = sub(r1a, p11), sub(r1b, p11), sub(r2a, p22), sub(r2b, p22)
        # alpha > beta  <=>  cos(alpha) < cos(beta)
        a_gt_b = se.Lt(dot(m1a, m2b) / (norm(m1a) * norm(m2b)),
                       dot(m1b, m2a) / (norm(m1b) * norm(m2a)))
        none2 = se.And(se.Not(c2a), se.Not(c2b))
        pick_ab = se.Or(se.And(c1a, c1b, se.Not(c2a)), se.And(c1a, se.Not(c1b)),
                        se.And(se.Not(c1a), se.Not(c1b), se.Not(c2a), c2b),
                        se.And(se.Not(c1a), se.Not(c1b), none2, a_gt_b))
        w1, w2 = where3(pick_ab, r1a, r1b), where3(pick_ab, r2b, r2a)
        far = se.Or(se.And(pick_ab, a_gt_b), se.And(se.Not(pick_ab), se.Not(a_gt_b)))
        sum_musc = add(sub(w1, P1), sub(w2, P2))
        sum_r = add(sub(w1, p11), sub(w2, p22))
        long_wrap = se.Lt(dot(sum_r, sum_musc), F(0.0))
    else:
        mandatory, wrapped = meets, se.false
        n1a, n1b = normalize(sub(r1a, p11)), normalize(sub(r1b, p11))
        n2a, n2b = normalize(sub(r2a, p22)), normalize(sub(r2b, p22))
        d1, d2, d3, d4 = dot(n1a, n2a), dot(n1a, n2b), dot(n1b, n2a), dot(n1b, n2b)
        c_1 = se.And(se.Gt(d1, d2), se.Gt(d1, d3), se.Gt(d1, d4))
        c_2 = se.And(se.Gt(d2, d3), se.Gt(d2, d4))
        c_3 = se.Gt(d3, d4)
        w1 = where3(c_1, r1a, where3(c_2, r1a, where3(c_3, r1b, r1b)))
        w2 = where3(c_1, r2a, where3(c_2, r2b, where3(c_3, r2a, r2b)))
        far, long_wrap = se.false, se.false
    # the apex: on the cylinder, in the plane through the axis point nearest the segment
    t = rho1 / (rho1 + rho2)
    mpt = add(P1, scale(t, sub(P2, P1)))
    axispt = [ZERO, ZERO, mpt[2]]
    l1, l2 = normalize(sub(P1, axispt)), normalize(sub(P2, axispt))
    pn = normalize(cross(l1, l2))
    vert1 = normalize([-pn[1], pn[0], ZERO])          # dn x pn
    apex1 = add(axispt, scale(F(R), vert1))
    apex2 = sub(axispt, scale(F(R), vert1))
    e1, e2 = sub(mpt, apex1), sub(mpt, apex2)
    first_nearer = se.Lt(dot(e1, e1), dot(e2, e2))
    pick1 = se.Xor(first_nearer, far) if far is not se.false else first_nearer
    apex = where3(pick1, apex1, apex2)
    uu, vv = normalize(sub(P1, apex)), normalize(sub(P2, apex))
    pn2 = normalize(cross(uu, vv))
    d = -dot(P1, pn2)
    w1 = _slide_onto_plane(w1, pn2, d, P1[2], P2[2])
    w2 = _slide_onto_plane(w2, pn2, d, P2[2], P1[2])
    out1 = se.Or(se.Lt(w1[2], F(-half)), se.Gt(w1[2], F(half)))
    out2 = se.Or(se.Lt(w2[2], F(-half)), se.Gt(w2[2], F(half)))
    ok = se.And(se.Not(inside), se.Not(se.And(out1, out2)))
    # the helix from w1 to w2
    axial = w2[2] - w1[2]
    theta = _atan2(w1[0] * w2[1] - w1[1] * w2[0], w1[0] * w2[0] + w1[1] * w2[1])
    theta = where(long_wrap, F(2 * math.pi) - theta, theta)
    s = se.sqrt((F(R) * theta) ** 2 + axial ** 2)
    return WrapOutcome(se.And(ok, mandatory), se.And(ok, wrapped), w1, w2, s)


def _atan2(y, x):
    """atan2, a number when both arguments are (symengine keeps atan2 of doubles unevaluated:
    a segment fixed in the wrap object's body then folds to constants)."""
    if y.is_Number and x.is_Number:
        return F(math.atan2(float(y), float(x)))
    return se.atan2(y, x)


def _slide_onto_plane(w, pn, d, z_own, z_other) -> list:
    """WrapCylinder: move tangent point w along the axis onto the plane pn·x + d = 0 when the
    crossing lies nearer the other end's axis point than this end's does."""
    dotprod = F(20.0) * pn[2]
    start = [w[0], w[1], w[2] - F(10.0)]
    t = (-d - dot(pn, start)) / dotprod
    zp = start[2] + F(20.0) * t
    hits = se.And(se.Ge(se.Abs(dotprod), F(LINE_EPSILON)), se.Ge(t, F(-LINE_EPSILON)),
                  se.Le(t, F(1.0 + LINE_EPSILON)),
                  se.Lt((zp - z_other) ** 2, (z_own - z_other) ** 2))
    return [w[0], w[1], where(hits, zp, w[2])]


def _sphere(obj: WrapObjectSpec, P1, P2) -> WrapOutcome:
    R = obj.radius
    n1, n2 = norm(P1), norm(P2)
    inside = se.Or(se.Lt(n1, F(R)), se.Lt(n2, F(R)))
    ri = sub(P1, P2)
    mp = scale(-1, P2)
    a = dot(ri, ri)
    b = -2 * dot(mp, ri)
    c = dot(mp, mp) - F(R * R)
    disc = b * b - 4 * a * c
    root = se.sqrt(disc)
    l1, l2 = (-b + root) / (2 * a), (-b - root) / (2 * a)
    crosses = se.And(se.Ge(disc, F(0.0)), se.Gt(l1, F(0.0)), se.Lt(l1, F(1.0)),
                     se.Gt(l2, F(0.0)), se.Lt(l2, F(1.0)), se.Ge(l1, l2))
    p1p2 = normalize(ri)
    np2 = scale(1 / n2, P2)
    n = normalize(cross(p1p2, np2))
    r1a, r1b = _sphere_tangents(P1, n1, n, R)
    r2a, r2b = _sphere_tangents(P2, n2, n, R)
    m1a, m1b, m2a, m2b = (normalize(v) for v in (r1a, r1b, r2a, r2b))
    j1, j2, j3, j4 = dot(m1a, m2a), dot(m1a, m2b), dot(m1b, m2a), dot(m1b, m2b)
    c_1 = se.And(se.Gt(j1, j2), se.Gt(j1, j3), se.Gt(j1, j4))
    c_2 = se.And(se.Gt(j2, j3), se.Gt(j2, j4))
    c_3 = se.Gt(j3, j4)
    w1 = where3(c_1, r1a, where3(c_2, r1a, where3(c_3, r1b, r1b)))
    w2 = where3(c_1, r2a, where3(c_2, r2b, where3(c_3, r2a, r2b)))
    ax, sg = obj.axis, obj.sign
    mandatory, wrapped, far = se.false, se.true, se.false
    if sg != 0:
        s1, s2 = sign_is(P1[ax], sg), sign_is(P2[ax], sg)
        either = se.Or(s1, s2)
        # the point of line P1P2 nearest the centre, and its parameter from P1 towards P2
        tt = dot(P1, p1p2)
        mm = sub(P1, scale(tt, p1p2))
        meets = se.And(se.Lt(dot(mm, mm), F(R * R)), se.Gt(tt, F(0.0)), se.Lt(tt, F(1.0)))
        opposite = se.Xor(sign_is(P1[ax], 1), sign_is(P2[ax], 1))
        mandatory = se.And(either, meets)
        wrapped = se.Or(se.Not(either), se.And(se.Not(meets), opposite,
                                               se.Not(sign_is(mm[ax], sg))))
        not_both = se.Not(se.And(s1, s2))
        sm_ = normalize(scale(-1, add(P1, P2)))
        k1 = se.Gt(dot(m1a, sm_), dot(m1b, sm_))
        k2 = se.Gt(dot(m2a, sm_), dot(m2b, sm_))
        q1, q1o = where3(k1, r1a, r1b), where3(k1, r1b, r1a)
        q2, q2o = where3(k2, r2a, r2b), where3(k2, r2b, r2a)
        musc = add(sub(q1, P1), sub(q2, P2))
        flip = se.Lt(musc[ax] * F(sg), F(0.0))
        q1, q2 = where3(flip, q1o, q1), where3(flip, q2o, q2)
        sum_musc = add(sub(q1, P1), sub(q2, P2))
        sum_r = add(q1, q2)
        w1, w2 = where3(not_both, q1, w1), where3(not_both, q2, w2)
        far = se.And(not_both, se.Lt(dot(sum_r, sum_musc), F(0.0)))
    u1, u2 = normalize(w1), normalize(w2)
    angle = se.acos(dot(u1, u2))
    angle = where(far, -(F(2 * math.pi) - angle), angle)
    ok = se.And(se.Not(inside), crosses)
    if sg == 0:        # OpenSim's return code stays "wrapped" for a sphere without quadrant
        return WrapOutcome(se.false, ok, w1, w2, F(R) * angle)
    return WrapOutcome(se.And(ok, mandatory), se.And(ok, wrapped), w1, w2, F(R) * angle)


def _sphere_tangents(P, dist, n, R) -> tuple:
    """WrapSphere: the two tangent points from P to the sphere in the plane normal to n."""
    y = scale(-1 / dist, P)
    z = cross(n, y)
    a1 = se.asin(F(R) / dist)
    ca, sa = se.cos(a1), se.sin(a1)
    k = dist * ca
    # column 1 of [n y z] Rx(a1)^T and of [n y z] Rx(-a1)^T
    ya = [ca * y[i] - sa * z[i] for i in range(3)]
    yb = [ca * y[i] + sa * z[i] for i in range(3)]
    return add(P, scale(k, ya)), add(P, scale(k, yb))
