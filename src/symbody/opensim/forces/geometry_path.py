"""A ``GeometryPath`` (a muscle's or a path actuator's line of action) as exact expressions.

The path runs through its active points in order: fixed ``PathPoint``s, ``ConditionalPathPoint``s
(active while their coordinate is within the range, OpenSim's 1e-5 tolerance included) and
``MovingPathPoint``s (their location in the body a function of coordinates, each clamped to
the coordinate's range as OpenSim does).  A path over one ``WrapCylinder`` or ``WrapSphere``
is built by :mod:`.wrapped_path`, over a ``WrapEllipsoid`` by :mod:`.ellipsoid_path`, over
several cylinders and ellipsoids by :mod:`.multi_wrap`; over other wrap objects it is not
(the force is left out, naming them).  Its length and lengthening speed are OpenSim's,

    L(q) = Σ |p_{i+1} - p_i|
    L'   = J_L(q) u,   J_L = Σ e_i · (J_{i+1} - J_i)   (e_i the unit vector of segment i)

with J_i the velocity Jacobian of point i as fixed in its body (tangent points too) plus, for
a moving point, its own motion R_GB ∂r/∂q_c.  A tension T on the path gives the generalized
forces Q = -T J_Lᵀ: what OpenSim applies (``GeometryPath::produceForces``), and OpenSim's
moment arm of coordinate k is -J_L (:mod:`..muscle_views`).
Only joints between the two bodies of a segment enter its row (the others move both ends
alike).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product

import numpy as np
import symengine as se

from ..functions import function_of
from ..mobilizers import ZERO, matvec, num
from ..model_spec import Placement
from .base import ForceContext
from .vector3 import F, add, cross, dot, norm, scale, sub, where

__all__ = ["PathPoint", "GeometryPathExpressions", "build_geometry_path", "ForceNotBuilt",
           "wrap_objects_of"]

COND_TOL = 1e-5          # ConditionalPathPoint::isActive


class ForceNotBuilt(Exception):  # noqa: N818  (a reason, not an error of the caller)
    """A force element the importer leaves out, with the reason (named in model.left_out)."""


@dataclass
class PathPoint:
    """A point of the path: ``body``, ``location`` (3, body frame, expressions), ``active``
    (a condition, or None: always), ``motion``: [(speed index, ∂r/∂q (3, body frame))] of a
    moving point, ``name``."""

    name: str
    body: str
    location: list
    active: object = None
    motion: list = field(default_factory=list)


@dataclass
class GeometryPathExpressions:
    """``length`` (expression), ``jacobian`` (o expressions: L' = J u, Q = -T Jᵀ),
    ``points``: the ground positions of the points drawn (a list of (3 expressions, active
    condition or None)), ``wraps``: the names of the wrap objects it goes over."""

    length: object
    jacobian: list
    points: list
    wraps: tuple = ()
    #: L' = speed_jacobian u where it is not ``jacobian`` (OpenSim's lengthening speed and
    #: its forces differ over several wrap objects: :mod:`.multi_wrap`)
    speed_jacobian: list | None = None

    @property
    def speed_row(self) -> list:
        """The row of the lengthening speed, L' = row u."""
        return self.jacobian if self.speed_jacobian is None else self.speed_jacobian


def wrap_objects_of(ctx: ForceContext) -> dict:
    """{name: (element, Placement)} of every wrap object of the model (cached on ctx)."""
    cache = getattr(ctx, "_wrap_objects", None)
    if cache is not None:
        return cache
    # a 4.x file resolves frames through its reader; a 3.x file's wrap objects sit in a
    # <Body> (the body's own frame)
    frames = getattr(ctx.spec.frame_of, "__self__", None)
    out: dict = {}

    def visit(el, frame_el):
        for c in el.children:
            f = c if c.tag in ("Body", "Ground", "PhysicalOffsetFrame") else frame_el
            if c.tag == "WrapObjectSet" and frame_el is not None:
                for w in c.objects():
                    out.setdefault(w.name, (w, frame_el))
            else:
                visit(c, f)

    visit(ctx.spec.element, None)
    resolved = {n: (w, frames.placement(f) if frames is not None else
                    Placement(f.name, np.eye(3), np.zeros(3), f.name))
                for n, (w, f) in out.items()}
    ctx._wrap_objects = resolved  # noqa: SLF001 (a cache the context carries for its builders)
    return resolved


def coordinate_range(ctx: ForceContext, name: str) -> tuple:
    """(lower, upper) of a coordinate from the file."""
    for j in ctx.spec.joints:
        for c in j.coordinates:
            if c.name == name:
                return c.range
    raise KeyError(f"no coordinate {name!r} in the model")


def _coordinate_name(path: str) -> str:
    return path.strip().rstrip("/").rsplit("/", 1)[-1]


def _read_point(pp, ctx: ForceContext) -> PathPoint:
    place = ctx.frame(pp)
    if pp.tag in ("PathPoint", "ConditionalPathPoint"):
        loc = [num(x) for x in place.point(pp.numbers("location", 3, default=(0, 0, 0)))]
        active = None
        if pp.tag == "ConditionalPathPoint":
            cname = _coordinate_name(pp.text_of("socket_coordinate") or pp.text_of("coordinate")
                                     or "")
            q = ctx.coordinate(cname)[0]
            lo, hi = pp.numbers("range", 2)
            active = se.And(se.Ge(q, F(lo - COND_TOL)), se.Le(q, F(hi + COND_TOL)))
        return PathPoint(pp.name, place.body, loc, active)
    if pp.tag == "MovingPathPoint":
        local, motion = [], []
        for axis in "xyz":
            f = function_of(pp, f"{axis}_location")
            sock = pp.text_of(f"socket_{axis}_coordinate") or pp.text_of(f"{axis}_coordinate")
            if f is None:
                local.append(ZERO)
                motion.append(None)
                continue
            if not sock:
                local.append(f.expression([F(0.0)]))
                motion.append(None)
                continue
            cname = _coordinate_name(sock)
            q, _u, _qs, _us, k = ctx.coordinate(cname)
            lo, hi = coordinate_range(ctx, cname)
            clamped = se.Max(F(lo), se.Min(q, F(hi)))
            local.append(f.expression([clamped]))
            motion.append((k, f.expression([q]).diff(q)))
        R = [[num(x) for x in row] for row in place.R]
        loc = add(matvec(R, local), [num(x) for x in place.p])
        terms: dict = {}
        for a, m in enumerate(motion):
            if m is None:
                continue
            k, dv = m
            e = [ZERO] * 3
            e[a] = dv
            col = matvec(R, e)
            terms[k] = add(terms[k], col) if k in terms else col
        return PathPoint(pp.name, place.body, loc, None, list(terms.items()))
    raise ForceNotBuilt(f"path points of type {pp.tag} are not supported (line {pp.line})")


class _Kin:
    """Ground positions and segment Jacobian rows on the model's tree (cached per body)."""

    def __init__(self, ctx: ForceContext):
        self.ctx, self.kin = ctx, ctx.kinematics

    def ground(self, body: str, r: list) -> list:
        return self.kin.point(body, r)

    def columns(self, body: str, r: list, skip: set) -> dict:
        """{speed k: v column (3, ground)} of point r of body over the joints not in skip."""
        kin = self.kin
        P = kin.point(body, r)
        out = {}
        for j in kin.path(body):
            if j in skip:
                continue
            Rj, pj = kin.pose(j)
            jt = kin.transforms[j]
            arm = sub(P, pj)
            for k in range(len(jt.u)):
                w = matvec(Rj, jt.Sw[k])
                v = matvec(Rj, jt.Sv[k])
                out[kin.speed_offsets[j] + k] = add(v, cross(w, arm))
        return out

    def segment_row(self, a: PathPoint, b: PathPoint) -> dict:
        """{speed k: e · (∂v_b/∂u_k - ∂v_a/∂u_k)} of the segment a -> b (ground points)."""
        kin = self.kin
        pa, pb = self.ground(a.body, a.location), self.ground(b.body, b.location)
        d = sub(pb, pa)
        e = scale(1 / norm(d), d)
        ia, ib = kin.index(a.body), kin.index(b.body)
        common = set(kin.path(ia)) & set(kin.path(ib))
        row: dict = {}
        for sign, pt in ((1, b), (-1, a)):
            for k, col in self.columns(pt.body, pt.location, common).items():
                row[k] = row.get(k, ZERO) + sign * dot(e, col)
            R, _ = kin.pose(pt.body)
            for k, dv in pt.motion:
                row[k] = row.get(k, ZERO) + sign * dot(e, matvec(R, dv))
        return row


def _straight(points: list, kin: _Kin) -> tuple:
    """Length and Jacobian row of the polyline through ``points`` (all active)."""
    L = ZERO
    row: dict = {}
    for a, b in zip(points[:-1], points[1:]):
        if a.body == b.body and not a.motion and not b.motion:
            # fixed in one body: a constant length, no speed
            L = L + norm(sub(b.location, a.location))
            continue
        L = L + norm(sub(kin.ground(b.body, b.location), kin.ground(a.body, a.location)))
        for k, v in kin.segment_row(a, b).items():
            row[k] = row.get(k, ZERO) + v
    return L, row


def build_geometry_path(gp, ctx: ForceContext, owner) -> GeometryPathExpressions:
    """The expressions of the ``<GeometryPath>`` element ``gp`` of force ``owner``."""
    pps = gp.find("PathPointSet")
    elements = pps.objects() if pps is not None else []
    if len(elements) < 2:
        raise owner.error("a GeometryPath needs at least two path points")
    from .wrapped_path import path_wraps, wrapped_length  # (it builds on this module)

    wraps = path_wraps(gp, ctx)
    points = [_read_point(pp, ctx) for pp in elements]
    kin = _Kin(ctx)
    o = ctx.o
    conditional = [i for i, p in enumerate(points) if p.active is not None]
    if len(wraps) > 1 and conditional:
        raise ForceNotBuilt(f"its path wraps over {len(wraps)} wrap objects and has "
                            "conditional path points: not supported together")
    if len(wraps) > 1:
        from .multi_wrap import multi_wrapped_length

        L, row, speed = multi_wrapped_length(points, wraps, kin, owner.name)
        drawn = [(kin.ground(p.body, p.location), p.active) for p in points]
        return GeometryPathExpressions(L, [row.get(k, ZERO) for k in range(o)], drawn,
                                       tuple(w[0].name for w in wraps if w[0].active),
                                       [speed.get(k, ZERO) for k in range(o)])
    wraps = [w for w in wraps if w[0].active]
    if wraps and conditional:
        raise ForceNotBuilt(f"its path wraps over {wraps[0][0].name!r} and has conditional "
                            "path points: not supported together")
    if wraps:
        L, row = wrapped_length(points, wraps[0], kin)
        drawn = [(kin.ground(p.body, p.location), p.active) for p in points]
        return GeometryPathExpressions(L, [row.get(k, ZERO) for k in range(o)], drawn,
                                       (wraps[0][0].name,))
    if len(conditional) > 4:
        raise ForceNotBuilt(f"{len(conditional)} conditional path points on one path (at most "
                            "4 are supported)")
    drawn = [(kin.ground(p.body, p.location), p.active) for p in points]
    # every combination of the conditional points' states
    cases = []
    for states in product((True, False), repeat=len(conditional)):
        on = dict(zip(conditional, states))
        active = [p for i, p in enumerate(points) if on.get(i, True)]
        cond = [points[i].active if s else se.Not(points[i].active) for i, s in on.items()]
        cases.append((se.And(*cond) if cond else se.true, _straight(active, kin)))
    L, row = cases[-1][1]
    for cond, (Lc, rowc) in reversed(cases[:-1]):
        keys = set(row) | set(rowc)
        L = where(cond, Lc, L)
        row = {k: where(cond, rowc.get(k, ZERO), row.get(k, ZERO)) for k in keys}
    return GeometryPathExpressions(L, [row.get(k, ZERO) for k in range(o)], drawn)
