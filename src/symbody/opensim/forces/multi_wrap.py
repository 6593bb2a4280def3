"""A geometry path over several wrap objects (``WrapCylinder``/``WrapEllipsoid``), OpenSim's way.

OpenSim 4.6 (``GeometryPath::applyWrapObjects``) wraps such a path in passes: each wrap object
in turn takes its tangent points out of the current path and tries every segment of its
``range`` (the other objects' tangent points included): the first that meets it wins, else
the one whose length grows least; the passes stop when the length changes by less than
0.5 mm (at most 8), and the first two objects swap places after the first pass when the
first did not wrap and the second had a point inside it.  A cylinder's tangent points are
slid until the lines to them are tangent to its helix (``_make_spiral_path``, only with
several wrap objects).  All of it runs in C on doubles (``multi_wrap.c``, with the routines
of ``cylinder_wrap.c`` and ``ellipsoid_wrap.c``) from the points' and bodies' poses, which
the model computes from q before every evaluation (``eom.derived_inputs``, as the ellipsoid
path's stations: :mod:`.ellipsoid_path`).  The path enters the equations through 1 + 12 |B|
parameters (B the bodies of its points and wrap objects): its length L and, per body, the
net unit force F_B and its moment M_B about the body's origin of

    J_L u = Σ_B F_B · v_B + M_B · ω_B      (v_B the velocity of B's origin),

for OpenSim's forces (``produceForces``, hence ``computeMomentArm``: -e at a and +e at b
for consecutive points a -> b on two bodies, at the points where the last pass put them)
and, apart, for its lengthening speed (every pair of consecutive points, the two tangent
points of one object included: ``GeometryPathExpressions.speed_jacobian``).  The directions
e are OpenSim's too: from the tangent points' ``getLocationInGround``, a cache filled at the
first call in a state that the later passes' ``setLocation`` does not renew.  The
parameters' derivatives are not in the equations (as for the ellipsoid: ``linearize`` and
optimal control refuse the model by name).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np
from sympy.physics.mechanics import dynamicsymbols

from ...compilation.python_extension import PythonExtension
from ..mobilizers import ZERO, matvec
from .ellipsoid_native import METHODS, WRAP_C_FLAGS
from .geometry_path import ForceNotBuilt, _Kin
from .vector3 import add, cross, dot, sub

__all__ = ["multi_wrapped_length", "MultiWrapPath"]

_ELLIPSOID = resources.files(__package__).joinpath("ellipsoid_wrap.c").read_text()
_SOURCE = (_ELLIPSOID[:_ELLIPSOID.index("static PyObject *py_wrap")]
           + resources.files(__package__).joinpath("cylinder_wrap.c").read_text()
           + resources.files(__package__).joinpath("multi_wrap.c").read_text()
           + resources.files(__package__).joinpath("path_parameters.c").read_text())
_EXTENSION = PythonExtension("symbody_multi_wrap", _SOURCE, "multi-wrap", opt=WRAP_C_FLAGS)
SUPPORTED = ("WrapCylinder", "WrapEllipsoid")


def _module() -> Any:
    return _EXTENSION.module()


def _ident(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)


@dataclass
class _Slot:
    """A path's parameters: the SymPy functions (L, then 12 per body: ``_WRENCH_NAMES``)
    and their symengine symbols."""

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
        self.nbodies = len(bodies)
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
        if not isinstance(x, list):      # (a list of floats is passed as it is)
            x = [float(v) for v in x]
        return _module().path(x[:self.npoints], self.point_bodies, x[self.npoints:],
                              self._spec)

    def values(self, x) -> np.ndarray:
        """The parameters' values from the inputs' values x (``inputs`` order)."""
        out = self._call(x)
        return np.array((out[1],) + out[3], dtype=float)

    def path(self, x) -> tuple:
        """(OpenSim's path length (the C routine's own sum), its nodes: i >= 0 point i,
        -(2j+1), -(2j+2) wrap j's tangent points) from the inputs' values."""
        out = self._call(x)
        return float(out[1]), out[2]


def _body_columns(kin: _Kin, body: str) -> dict:
    """{speed k: (∂v_O/∂u_k, ∂ω/∂u_k)} of body B (v_O its origin's velocity, ground)."""
    K = kin.kin
    _, origin = K.pose(body)
    out = {}
    for j in K.path(body):
        Rj, pj = K.pose(j)
        jt = K.transforms[j]
        for k in range(len(jt.u)):
            w = matvec(Rj, jt.Sw[k])
            v = add(matvec(Rj, jt.Sv[k]), cross(w, sub(origin, pj)))
            out[K.speed_offsets[j] + k] = (v, w)
    return out


def multi_wrapped_length(points: list, wraps: list, kin: _Kin, owner: str) -> tuple:
    """(L, {speed k: J_L,k} of the forces, {speed k: J_L,k} of the lengthening speed) of the
    path through ``points`` (all active) over ``wraps`` [(spec, start, end)] (every
    PathWrap, in PathWrapSet order; inactive objects included, as OpenSim counts them), in
    path parameters (module docstring)."""
    from .ellipsoid_path import ellipsoid_slots

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
    if n > 64 or len(wraps) > 16:           # (the C routine's fixed arrays)
        raise ForceNotBuilt(f"its path over several wrap objects has {n} points and "
                            f"{len(wraps)} wrap objects: at most 64 and 16 are supported")
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
    base = _ident(owner)
    names = [f"{base}.path.L"] + [f"{base}.path.{_ident(b)}.{c}" for b in bodies
                                  for c in _WRENCH_NAMES]
    funcs = tuple(dynamicsymbols(nm) for nm in names)
    x = tuple(kin.ctx.symbol(f) for f in funcs)
    force: dict = {}
    speed: dict = {}
    for i, body in enumerate(bodies):
        wrench = x[1 + 12 * i:13 + 12 * i]
        for k, (v, w) in _body_columns(kin, body).items():
            force[k] = force.get(k, ZERO) + dot(list(wrench[0:3]), v) + dot(list(wrench[3:6]), w)
            speed[k] = speed.get(k, ZERO) + dot(list(wrench[6:9]), v) + dot(list(wrench[9:12]),
                                                                             w)
    inputs = [v for p in points for v in kin.ground(p.body, p.location)]
    for body in bodies:
        R_B, o_B = kin.kin.pose(body)
        inputs += [R_B[a][b] for a in range(3) for b in range(3)] + list(o_B)
    ellipsoid_slots(kin.ctx).append(MultiWrapPath(owner, norm_wraps, points, bodies,
                                                  [_Slot(funcs, x)], inputs))
    return x[0], force, speed


_WRENCH_NAMES = tuple(f"{kind}_{part}_{c}" for kind in ("force", "speed") for part in "FM"
                      for c in "xyz")
