"""A geometry path over several wrap objects (``WrapCylinder``/``WrapEllipsoid``), OpenSim's way.

OpenSim 4.6 (``GeometryPath::applyWrapObjects``) wraps such a path in passes: each wrap object
in turn takes its tangent points out of the current path and tries every segment of its
``range`` (the other objects' tangent points included): the first that meets it wins, else
the one whose length grows least; the passes stop when the length changes by less than
0.5 mm (at most 8), and the first two objects swap places after the first pass when the
first did not wrap and the second had a point inside it.  A cylinder's tangent points are
slid until the lines to them are tangent to its helix (``_make_spiral_path``, only with
several wrap objects).  All of it runs in C on doubles (``multi_wrap.c``, with the ellipsoid
routine of ``ellipsoid_wrap.c``), placing the path's stations at run time as the ellipsoid
path does (:mod:`.ellipsoid_path`; ``eom.derived_inputs``).

Each segment p_i -> p_{i+1} with c candidate wraps on the bodies B_i gets c positions x |B_i|
*slots* (r1, r2 in the body's coordinates, s): the k-th wrap OpenSim puts on the segment
fills slot (k, its body), whatever the order; the stations are p_i, r1, r2, ..., p_{i+1} and

    L = Σ_{consecutive stations, not r1 -> r2 of a slot} |x_{k+1} - x_k| + Σ s .

An empty slot has r1 = r2 on the chord between its neighbouring stations (the chord's length).
OpenSim's tangent points enter its lengths and directions where ``getLocationInGround`` first
cached them in the state (the later passes move them with ``setLocation`` without renewing
that cache), its forces act where they are at the end: each sub-segment x -> y gets the two
points whose velocities count, L' = Σ e_xy · (v_y(y_at) - v_x(x_at)).  Two rows: the forces'
(``produceForces``, also ``computeMomentArm``: nothing between two points of one body, so a
chord between stations of one body gets y_at = x_at) and the lengthening speed's (every
segment counts; ``GeometryPathExpressions.speed_jacobian``).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np
from sympy.physics.mechanics import dynamicsymbols

from ...compilation.python_extension import PythonExtension
from ..mobilizers import ZERO
from .ellipsoid_native import METHODS
from .geometry_path import ForceNotBuilt, PathPoint, _Kin
from .vector3 import dot, norm, sub

__all__ = ["multi_wrapped_length", "MultiWrapPath"]

_ELLIPSOID = resources.files(__package__).joinpath("ellipsoid_wrap.c").read_text()
_SOURCE = (_ELLIPSOID[:_ELLIPSOID.index("static PyObject *py_wrap")]
           + resources.files(__package__).joinpath("cylinder_wrap.c").read_text()
           + resources.files(__package__).joinpath("multi_wrap.c").read_text())
_EXTENSION = PythonExtension("symbody_multi_wrap", _SOURCE, "multi-wrap",
                             opt="-O2 -ffp-contract=off")
SUPPORTED = ("WrapCylinder", "WrapEllipsoid")


def _module() -> Any:
    return _EXTENSION.module()


def _ident(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)


@dataclass
class _Slot:
    """The path parameters of one segment with candidate wraps (SymPy functions and their
    symengine symbols): ``i`` the segment, ``bodies`` its slots' bodies (position-major)."""

    i: int
    bodies: list
    sympy: tuple
    symbols: tuple


class MultiWrapPath:
    """One path over several wrap objects: its segments' parameters (``slots``), and
    ``inputs`` (expressions of q: the points in ground (3 each), then the pose in ground of
    each body of the path, R (9, row-major) and origin (3)) from which :meth:`values`
    computes the parameters in C."""

    def __init__(self, owner: str, wraps: list, points: list, bodies: list, slots: list,
                 inputs: list):
        self.owner, self.wraps, self.slots, self.inputs = owner, wraps, slots, inputs
        self.n, self.npoints = len(points), 3 * len(points)
        self.point_bodies = [float(bodies.index(p.body)) for p in points]
        spec: list = []
        for w, start, end in wraps:
            kind = 0 if w.tag == "WrapCylinder" else 1
            par = (w.radius, w.length, 0.0) if kind == 0 else tuple(w.dims)
            method = METHODS[w.method] if kind == 1 else 0
            spec += [kind, int(w.active), start, end, w.axis, w.sign, method,
                     int(len(wraps) == 1), *par, bodies.index(w.body),
                     *np.asarray(w.R, dtype=float).ravel(), *np.asarray(w.p, dtype=float)]
        self._spec = [float(x) for x in spec]

    def _call(self, x) -> tuple:
        x = [float(v) for v in x]
        return _module().path(x[:self.npoints], self.point_bodies, x[self.npoints:],
                              self._spec)

    def values(self, x) -> np.ndarray:
        """The parameters' values from the inputs' values x (``inputs`` order)."""
        return np.array(self._call(x)[3], dtype=float)

    def path(self, x) -> tuple:
        """(OpenSim's path length (the C routine's own sum), its nodes: i >= 0 point i,
        -(2j+1), -(2j+2) wrap j's tangent points) from the inputs' values."""
        out = self._call(x)
        return float(out[1]), out[2]


def _row(kin: _Kin, a: PathPoint, b: PathPoint, a_at: list, b_at: list) -> dict:
    """{speed k: e · (∂v_b/∂u_k - ∂v_a/∂u_k)}: e the unit vector from station a to b, the
    velocities those of the points a_at, b_at fixed in a's and b's bodies (every joint
    counts: e is not along b_at - a_at)."""
    d = sub(kin.ground(b.body, b.location), kin.ground(a.body, a.location))
    e = [x / norm(d) for x in d]
    row: dict = {}
    for sign, body, at in ((1, b.body, b_at), (-1, a.body, a_at)):
        for k, col in kin.columns(body, at, set()).items():
            row[k] = row.get(k, ZERO) + sign * dot(e, col)
    return row


def multi_wrapped_length(points: list, wraps: list, kin: _Kin, owner: str) -> tuple:
    """(L, {speed k: J_L,k} of the forces, {speed k: J_L,k} of the lengthening speed) of the
    path through ``points`` (all active) over ``wraps`` [(spec, start, end)] (every
    PathWrap, in PathWrapSet order; inactive objects included, as OpenSim counts them), in
    path parameters (module docstring)."""
    from .ellipsoid_path import ellipsoid_slots
    from .geometry_path import _straight

    n = len(points)
    refused = [f"{w.tag} {w.name!r} (line {w.line})" for w, _s, _e in wraps
               if w.tag not in SUPPORTED]
    if refused:
        raise ForceNotBuilt("its path wraps over several objects, among them "
                            + ", ".join(refused) + ": a path over several wrap objects is "
                            "supported over " + " and ".join(SUPPORTED) + " only")
    if any(p.motion for p in points):
        raise ForceNotBuilt("its path wraps over several objects and has moving path points: "
                            "not supported together")
    if _module() is None:
        raise ForceNotBuilt("its path wraps over several objects: that needs a C compiler "
                            "(none found)")
    norm_wraps = []
    for w, start, end in wraps:
        i0 = 0 if start < 1 else start - 1
        i1 = n - 1 if end < 1 else end - 1
        if not 0 <= i0 <= i1 < n:
            raise ForceNotBuilt(f"the <range> {start} {end} of its wrap over {w.name!r} is "
                                f"outside its {n} path points")
        norm_wraps.append((w, i0, i1))
    bodies = list(dict.fromkeys([p.body for p in points] + [w.body for w, _a, _b in norm_wraps]))
    slots: list = []
    L, force, speed = ZERO, {}, {}
    base = _ident(owner)

    def add(row: dict, part: dict):
        for k, v in part.items():
            row[k] = row.get(k, ZERO) + v

    for i in range(n - 1):
        cands = [w for w, i0, i1 in norm_wraps if w.active and i0 <= i < i1]
        if not cands:
            Li, row = _straight(points[i:i + 2], kin)
            L = L + Li
            add(force, row)
            add(speed, row)
            continue
        on = sorted({bodies.index(w.body) for w in cands})
        slot_bodies = [bodies[b] for _k in range(len(cands)) for b in on]
        ns = len(slot_bodies)
        names = [f"{base}.{i}.slot{t}.{c}" for t in range(ns)
                 for c in ("r1_x", "r1_y", "r1_z", "r2_x", "r2_y", "r2_z", "s")]
        names += [f"{base}.{i}.sub{t}.{c}" for t in range(2 * ns + 1) for c in _AT_NAMES]
        funcs = tuple(dynamicsymbols(nm) for nm in names)
        x = tuple(kin.ctx.symbol(f) for f in funcs)
        slots.append(_Slot(i, slot_bodies, funcs, x))
        stations = [points[i]]
        for t, body in enumerate(slot_bodies):
            stations += [PathPoint("r1", body, list(x[7 * t:7 * t + 3])),
                         PathPoint("r2", body, list(x[7 * t + 3:7 * t + 6]))]
            L = L + x[7 * t + 6]
        stations.append(points[i + 1])
        for t in range(2 * ns + 1):
            a, b = stations[t], stations[t + 1]
            at = x[7 * ns + 12 * t:7 * ns + 12 * t + 12]
            if t % 2 == 0:           # (between slots: r1 -> r2 of one slot is its s)
                L = L + norm(sub(kin.ground(b.body, b.location),
                                 kin.ground(a.body, a.location)))
            add(force, _row(kin, a, b, list(at[0:3]), list(at[3:6])))
            add(speed, _row(kin, a, b, list(at[6:9]), list(at[9:12])))
    inputs = [v for p in points for v in kin.ground(p.body, p.location)]
    for body in bodies:
        R_B, o_B = kin.kin.pose(body)
        inputs += [R_B[a][b] for a in range(3) for b in range(3)] + list(o_B)
    ellipsoid_slots(kin.ctx).append(MultiWrapPath(owner, norm_wraps, points, bodies, slots,
                                                  inputs))
    return L, force, speed


_AT_NAMES = tuple(f"{kind}_{end}_{c}" for kind in ("force", "speed") for end in ("a", "b")
                  for c in "xyz")
