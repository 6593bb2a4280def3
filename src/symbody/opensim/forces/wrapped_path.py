"""A geometry path over one wrap object (``WrapCylinder``/``WrapSphere``), OpenSim's way.

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
"""

from __future__ import annotations

import symengine as se

from ..mobilizers import ZERO, matmul, matvec, num, transpose
from .geometry_path import ForceNotBuilt, PathPoint, _Kin, _straight, wrap_objects_of
from .vector3 import add, choose, norm, sub
from .wrapping import WRAP_TYPES, WrapObjectSpec, read_wrap_object, wrap_line

__all__ = ["path_wraps", "wrapped_length"]


def path_wraps(gp, ctx) -> list:
    """[(WrapObjectSpec, start, end)] of the active wrap objects of ``<GeometryPath>`` gp;
    a wrap object of another type leaves the path out, naming it."""
    pws = gp.find("PathWrapSet")
    items = pws.objects() if pws is not None else []
    known = wrap_objects_of(ctx) if items else {}
    out, refused = [], []
    for pw in items:
        name = (pw.text_of("wrap_object") or "").strip()
        if name not in known:
            raise pw.error(f"the wrap object {name!r} is not in the model")
        w_el, place = known[name]
        if w_el.tag not in WRAP_TYPES:
            refused.append(f"{w_el.tag} {name!r} (line {w_el.line})")
            continue
        method = (pw.text_of("method") or "hybrid").strip().lower()
        if method not in ("hybrid", "axial", "midpoint"):
            raise pw.error(f"unknown wrap <method> {method!r}")
        rng = pw.numbers("range", 2, default=(-1, -1))
        spec = read_wrap_object(w_el, place)
        if spec.active:
            out.append((spec, int(rng[0]), int(rng[1])))
    if refused:
        raise ForceNotBuilt("its path wraps over " + ", ".join(refused) + ": only "
                            + " and ".join(WRAP_TYPES) + " wrap objects are supported")
    return out


def _wrap_frame(kin: _Kin, w: WrapObjectSpec) -> tuple:
    """(R_GW, p_GW): the wrap object's frame in ground."""
    Rb, pb = kin.kin.pose(w.body)
    Rw = [[num(x) for x in row] for row in w.R]
    return matmul(Rb, Rw), add(pb, matvec(Rb, [num(x) for x in w.p]))


def _to_body(w: WrapObjectSpec, r: list) -> list:
    """A point of the wrap frame in the coordinates of the wrap object's body."""
    return add(matvec([[num(x) for x in row] for row in w.R], r), [num(x) for x in w.p])


def wrapped_length(points: list, wrap: tuple, kin: _Kin) -> tuple:
    """(L, {speed k: J_L,k}) of the path through ``points`` (all active) over ``wrap``."""
    w, start, end = wrap
    n = len(points)
    i0 = 0 if start < 1 else min(start - 1, n - 1)
    i1 = n - 1 if end < 1 else min(end - 1, n - 1)
    RG, oG = _wrap_frame(kin, w)
    RT = transpose(RG)
    base_L, base_row = _straight(points, kin)
    in_w = [matvec(RT, sub(kin.ground(p.body, p.location), oG)) for p in points]
    cands = []
    for i in range(i0, i1):
        out = wrap_line(w, in_w[i], in_w[i + 1])
        straight = norm(sub(in_w[i + 1], in_w[i]))
        l1 = norm(sub(out.r1, in_w[i]))
        l2 = norm(sub(in_w[i + 1], out.r2))
        change = l1 + out.length + l2 - straight
        t1 = PathPoint("wrap1", w.body, _to_body(w, out.r1))
        t2 = PathPoint("wrap2", w.body, _to_body(w, out.r2))
        row = dict(base_row)
        for a, b, sign in ((points[i], points[i + 1], -1), (points[i], t1, 1),
                           (t2, points[i + 1], 1)):
            for k, v in kin.segment_row(a, b).items():
                row[k] = row.get(k, ZERO) + sign * v
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
