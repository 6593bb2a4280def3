"""A geometry path over one wrap object (``WrapCylinder``/``WrapSphere``), OpenSim's way
(over a ``WrapEllipsoid``: :mod:`.ellipsoid_path`).

OpenSim (``GeometryPath::applyWrapObjects``) tries every segment p_i -> p_{i+1} in the path
wrap's ``range`` (1-based point indices, -1: the ends) against the object
(:func:`.wrapping.wrap_line`): the first segment that meets the surface wins (a mandatory
wrap); otherwise, of the segments that wrap, the one whose length grows least,

    ΔL_i = |p_i - r1| + s + |r2 - p_{i+1}| - |p_{i+1} - p_i|,

(the first of equals).  The wrapped path is p_i -> r1 -> (s on the surface) -> r2 -> p_{i+1}
with the tangent points r1, r2 held in the wrap object's body for the speed and the forces:
L' = J_L u with the rows of the two straight pieces, as OpenSim's path forces act
(``computeMomentArm`` and the muscle's generalized forces Q = -T J_Lᵀ).  Every choice is a
Piecewise on an arithmetic indicator (:func:`.vector3.choose`), so the expressions compile.
One active wrap object per path, no conditional path points with it; anything else is left
out naming the reason.

The points enter the wrap frame through the joints between their body and the wrap object's
only (a segment fixed in the wrap object's body is a number), and each point and segment is
built once per model (muscles sharing points share the expressions): equal subtrees held as
separate symengine objects make every later walk over the equations (atoms, conversion,
compile) compare them node by node, minutes for Arm26's three muscles over 'TRI'.
"""

from __future__ import annotations

import symengine as se

from ..mobilizers import ZERO, matvec, num, transpose
from .ellipsoid_path import ellipsoid_length, read_wrap_ellipsoid
from .geometry_path import ForceNotBuilt, PathPoint, _Kin, _straight, wrap_objects_of
from .vector3 import add, choose, norm, sub
from .wrapping import WRAP_TYPES, WrapObjectSpec, read_wrap_object, wrap_line

__all__ = ["path_wraps", "wrapped_length"]


def path_wraps(gp, ctx) -> list:
    """[(WrapObjectSpec, start, end)] of the wrap objects of ``<GeometryPath>`` gp, inactive
    ones included (OpenSim counts them); a wrap object of another type leaves the path out,
    naming it."""
    pws = gp.find("PathWrapSet")
    items = pws.objects() if pws is not None else []
    known = wrap_objects_of(ctx) if items else {}
    out, refused = [], []
    for pw in items:
        name = (pw.text_of("wrap_object") or "").strip()
        if name not in known:
            raise pw.error(f"the wrap object {name!r} is not in the model")
        w_el, place = known[name]
        if w_el.tag not in WRAP_TYPES + ("WrapEllipsoid",):
            refused.append(f"{w_el.tag} {name!r} (line {w_el.line})")
            continue
        method = (pw.text_of("method") or "hybrid").strip().lower()
        if method not in ("hybrid", "axial", "midpoint"):
            raise pw.error(f"unknown wrap <method> {method!r}")
        rng = pw.numbers("range", 2, default=(-1, -1))
        spec = (read_wrap_ellipsoid(w_el, place, method) if w_el.tag == "WrapEllipsoid"
                else read_wrap_object(w_el, place))
        out.append((spec, int(rng[0]), int(rng[1])))
    if refused:
        raise ForceNotBuilt("its path wraps over " + ", ".join(refused) + ": only "
                            + ", ".join(WRAP_TYPES) + " and WrapEllipsoid wrap objects are "
                            "supported")
    return out


def _point_key(p: PathPoint) -> tuple:
    return (p.body, tuple(p.location), tuple((k, tuple(v)) for k, v in p.motion))


def _shared(kin: _Kin) -> dict:
    """The model's cache of wrap expressions (on the force context): a point in a wrap frame
    and a segment's wrap are built once, whichever muscle meets them again (equal subtrees
    as separate objects make every later walk over the expressions compare them deeply)."""
    cache = getattr(kin.ctx, "_wrap_expressions", None)
    if cache is None:
        cache = kin.ctx._wrap_expressions = {}  # noqa: SLF001 (as wrap_objects_of)
    return cache


def _in_wrap_frame(kin: _Kin, w: WrapObjectSpec, p: PathPoint) -> list:
    """Point p in the wrap frame, r_W = R_wᵀ (R_AB r + p_AB - p_w), through the joints between
    its body B and the wrap object's body A only (numbers when B = A)."""
    key = ("point", w.name, _point_key(p))
    cache = _shared(kin)
    if key not in cache:
        R_AB, p_AB = kin.kin.relative_pose(p.body, w.body)
        Rw = [[num(x) for x in row] for row in w.R]
        in_body = sub(add(matvec(R_AB, p.location), p_AB), [num(x) for x in w.p])
        cache[key] = matvec(transpose(Rw), in_body)
    return cache[key]


def _to_body(w: WrapObjectSpec, r: list) -> list:
    """A point of the wrap frame in the coordinates of the wrap object's body."""
    return add(matvec([[num(x) for x in row] for row in w.R], r), [num(x) for x in w.p])


def _segment(kin: _Kin, w: WrapObjectSpec, a: PathPoint, b: PathPoint) -> tuple:
    """(outcome, straight length, |a r1|, |r2 b|, row change) of segment a -> b over w: the
    row change is J_L's for a -> r1 -> r2 -> b minus a -> b (built once per model)."""
    key = ("segment", w.name, _point_key(a), _point_key(b))
    cache = _shared(kin)
    if key in cache:
        return cache[key]
    pa, pb = _in_wrap_frame(kin, w, a), _in_wrap_frame(kin, w, b)
    out = wrap_line(w, pa, pb)
    straight = norm(sub(pb, pa))
    l1 = norm(sub(out.r1, pa))
    l2 = norm(sub(pb, out.r2))
    t1 = PathPoint("wrap1", w.body, _to_body(w, out.r1))
    t2 = PathPoint("wrap2", w.body, _to_body(w, out.r2))
    row: dict = {}
    for x, y, sign in ((a, b, -1), (a, t1, 1), (t2, b, 1)):
        for k, v in kin.segment_row(x, y).items():
            row[k] = row.get(k, ZERO) + sign * v
    cache[key] = (out, straight, l1, l2, row)
    return cache[key]


def wrapped_length(points: list, wrap: tuple, kin: _Kin) -> tuple:
    """(L, {speed k: J_L,k}) of the path through ``points`` (all active) over ``wrap``."""
    w, start, end = wrap
    if w.tag == "WrapEllipsoid":            # stations placed at run time
        return ellipsoid_length(points, wrap, kin)
    n = len(points)
    i0 = 0 if start < 1 else min(start - 1, n - 1)
    i1 = n - 1 if end < 1 else min(end - 1, n - 1)
    base_L, base_row = _straight(points, kin)
    cands = []
    for i in range(i0, i1):
        out, straight, l1, l2, delta = _segment(kin, w, points[i], points[i + 1])
        change = l1 + out.length + l2 - straight
        row = dict(base_row)
        for k, v in delta.items():
            row[k] = row.get(k, ZERO) + v
        cands.append((out, change, base_L - straight + l1 + out.length + l2, row))
    any_mandatory = se.Or(*[c[0].mandatory for c in cands]) if cands else se.false
    cache: dict = {}
    L, row = base_L, dict(base_row)
    for j in reversed(range(len(cands))):
        out, change, Lj, rowj = cands[j]
        first_mandatory = se.And(out.mandatory, *[se.Not(c[0].mandatory) for c in cands[:j]])
        beats = ([se.Lt(change, c[1]) for c in cands[:j]]
                 + [se.Le(change, c[1]) for c in cands[j + 1:]])
        others = cands[:j] + cands[j + 1:]
        least = se.And(se.Not(any_mandatory), out.wrapped,
                       *[se.Or(se.Not(c[0].wrapped), b) for c, b in zip(others, beats)])
        chosen = se.Or(first_mandatory, least)
        keys = set(row) | set(rowj)
        L = choose(chosen, Lj, L, cache)
        row = {k: choose(chosen, rowj.get(k, ZERO), row.get(k, ZERO), cache) for k in keys}
    return L, row
