"""A geometry path over a ``WrapEllipsoid``: a polyline through stations placed at run time.

OpenSim's ellipsoid wrap (:mod:`.wrap_ellipsoid`) is an iterative program whose result is
its iterate, not a closed form; as one expression it is far too large to compile.  So the
path is built as OpenSim itself moves and differentiates it: each candidate segment
p_i -> p_{i+1} of the path wrap's range gets seven *path parameters*, the tangent points
r1, r2 (wrap frame) and the length s over the surface, and

    L = Σ_straight |p_{j+1} - p_j| + Σ_candidates (|r1_i - p_i| + s_i + |p_{i+1} - r2_i|)

with the parameters computed from q before every evaluation (:class:`EllipsoidParameters`,
the compiled C routine :mod:`.ellipsoid_native`): the segment that wraps (OpenSim's first
mandatory wrap) gets its r1, r2, s; every other candidate r1 = r2 = the chord's midpoint and
s = 0, which gives the straight segment's value and derivative.  The speed and the forces
hold r1, r2 fixed in the wrap object's body and s fixed, L' = J_L u with the rows of the
two straight pieces: what OpenSim computes (its lengthening speed, ``computeMomentArm`` and
the path's body forces all treat the PathWrapPoints as stations of their body).  The
parameters enter the equations as specified inputs that the simulation fills in itself
(``eom.derived_inputs``; :mod:`symbody.analysis.inputs`).  Their derivatives with respect to
q are not part of the equations: ``linearize`` and ``OptimalControlProblem`` refuse such a
model by name (an implicit integrator's Jacobian holds the stations fixed, an approximation
it tolerates).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import symengine as se
from sympy.physics.mechanics import dynamicsymbols

from ..mobilizers import ZERO
from .ellipsoid_native import METHODS, _module, wrap_ellipsoid_native
from .geometry_path import PathPoint, _Kin, _straight
from .path_parameters import NativePathParameters, native_path_parameters
from .vector3 import norm, sub
from .wrapping import read_wrap_pose

__all__ = ["EllipsoidSpec", "read_wrap_ellipsoid", "ellipsoid_length", "EllipsoidParameters",
           "ellipsoid_slots"]


@dataclass(frozen=True)
class EllipsoidSpec:
    """A ``<WrapEllipsoid>`` as a path wrap uses it: ``name``, ``body``, pose ``R``, ``p`` in
    the body, radii ``dims``, quadrant ``axis``/``sign`` (sign 0: all), the path wrap's
    ``method``, ``active``, ``line``."""

    tag: str
    name: str
    body: str
    R: np.ndarray
    p: np.ndarray
    axis: int
    sign: int
    dims: tuple
    method: str
    active: bool
    line: int


def read_wrap_ellipsoid(el, placement, method: str) -> EllipsoidSpec:
    """A ``<WrapEllipsoid>`` element fixed in the frame ``placement``, wrapped by ``method``."""
    R, p, axis, sign = read_wrap_pose(el, placement)
    dims = tuple(float(x) for x in el.numbers("dimensions", 3, default=(0.05, 0.05, 0.05)))
    if not all(d > 0 for d in dims):
        raise el.error(f"<dimensions> must be positive, got {dims}")
    return EllipsoidSpec(el.tag, el.name, placement.body, R, p, axis, sign, dims, method,
                         el.flag("active", True), el.line)


@dataclass
class _Slot:
    """One candidate segment a -> b over an ellipsoid: its ends in the wrap frame
    (expressions), the path parameters (SymPy functions of time and their symengine symbols,
    r1 (3), r2 (3), s) and the wrap."""

    wrap: EllipsoidSpec
    ends: tuple
    sympy: tuple
    symbols: tuple


@dataclass
class _PathWrap:
    """The candidate slots of one path over one ellipsoid, in segment order."""

    wrap: EllipsoidSpec
    slots: list


def ellipsoid_slots(ctx) -> list:
    """The model's [_PathWrap] (on the force context), in the order they were built."""
    slots = getattr(ctx, "_ellipsoid_paths", None)
    if slots is None:
        slots = ctx._ellipsoid_paths = []  # noqa: SLF001 (a record the context carries)
    return slots


def _ident(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)


def _slot(kin: _Kin, w: EllipsoidSpec, a: PathPoint, b: PathPoint) -> _Slot:
    """The slot of segment a -> b over w (one per model: muscles sharing it share it)."""
    from .wrapped_path import _in_wrap_frame, _point_key, _shared

    key = ("ellipsoid", w.name, w.method, _point_key(a), _point_key(b))
    cache = _shared(kin)
    if key not in cache:
        base = f"{_ident(w.name)}.{_ident(a.name)}_{_ident(b.name)}"
        k = sum(1 for c in cache if c[0] == "ellipsoid")
        names = [f"{base}.{n}" + (f"_{k}" if k else "") for n in
                 ("r1_x", "r1_y", "r1_z", "r2_x", "r2_y", "r2_z", "s")]
        funcs = tuple(dynamicsymbols(n) for n in names)
        symbols = tuple(kin.ctx.symbol(f) for f in funcs)
        ends = (_in_wrap_frame(kin, w, a), _in_wrap_frame(kin, w, b))
        cache[key] = _Slot(w, ends, funcs, symbols)
    return cache[key]


def ellipsoid_length(points: list, wrap: tuple, kin: _Kin) -> tuple:
    """(L, {speed k: J_L,k}) of the path through ``points`` (all active) over the ellipsoid
    of ``wrap`` = (EllipsoidSpec, start, end), in the path parameters (module docstring)."""
    from .wrapped_path import _to_body

    w, start, end = wrap
    n = len(points)
    i0 = 0 if start < 1 else min(start - 1, n - 1)
    i1 = n - 1 if end < 1 else min(end - 1, n - 1)
    L, row = _straight(points, kin)
    row = dict(row)
    slots = []
    for i in range(i0, i1):
        a, b = points[i], points[i + 1]
        slot = _slot(kin, w, a, b)
        slots.append(slot)
        pa, pb = slot.ends
        r1, r2, s = list(slot.symbols[:3]), list(slot.symbols[3:6]), slot.symbols[6]
        L = L - norm(sub(pb, pa)) + norm(sub(r1, pa)) + s + norm(sub(pb, r2))
        t1 = PathPoint("wrap1", w.body, _to_body(w, r1))
        t2 = PathPoint("wrap2", w.body, _to_body(w, r2))
        for x, y, sign in ((a, b, -1), (a, t1, 1), (t2, b, 1)):
            for k, v in kin.segment_row(x, y).items():
                row[k] = row.get(k, ZERO) + sign * v
    ellipsoid_slots(kin.ctx).append(_PathWrap(w, slots))
    return L, row


class EllipsoidParameters:
    """The path parameters of a model's ellipsoid-wrapped paths as a function of q.

    ``functions``: the SymPy functions of time they stand for (the order of the values);
    ``symbols``: their symengine symbols; ``values(q)`` (q: the model's coordinates in the
    model's order) -> (7 per slot,): for each path, OpenSim's choice (the first candidate
    segment whose wrap is mandatory) gets the routine's r1, r2, s, the others the chord's
    midpoint and 0; then the parameters of the paths over several wrap objects (L and body
    wrenches, :mod:`.multi_wrap`).  Used as ``eom.derived_inputs``: ``__call__(t, x)`` with
    x = [q, ...]."""

    def __init__(self, paths: list, q_symbols: list):
        #: paths over several wrap objects (:mod:`.multi_wrap`): their slots follow
        self._multi = [pw for pw in paths if hasattr(pw, "inputs")]
        paths = [pw for pw in paths if not hasattr(pw, "inputs")]
        seen: dict = {}
        for pw in paths:
            for s in pw.slots:
                seen.setdefault(id(s), s)
        self._slots = list(seen.values())
        self._index = {id(s): k for k, s in enumerate(self._slots)}
        self._paths = paths
        self._calls = [(pw.wrap, [self._index[id(s)] for s in pw.slots]) for pw in paths]
        multi_slots = [s for pw in self._multi for s in pw.slots]
        self.functions = tuple(f for s in self._slots + multi_slots for f in s.sympy)
        self.symbols = tuple(x for s in self._slots + multi_slots for x in s.symbols)
        self.nq = len(q_symbols)
        self._q_symbols = list(q_symbols)
        stops = np.cumsum([0] + [len(pw.inputs) for pw in self._multi])
        self._multi_split = stops[1:-1]
        #: each multi-wrap path's inputs as (start, stop) in the inputs' values
        self._multi_bounds = list(zip(stops[:-1].tolist(), stops[1:].tolist()))
        #: their positions in ``eom.specifieds`` (the model sets them; () when the equations
        #: do not use them, e.g. paths without forces)
        self.indices: tuple = ()
        self._native: Any = None              # (built at first use: False without a compiler)

    def native(self) -> NativePathParameters | None:
        """The whole computation as one C function (:mod:`.path_parameters`), built at
        first use; None without a C compiler (the Python path below then runs)."""
        if self._native is None:
            self._native = native_path_parameters(self, self._q_symbols) or False
        return self._native or None

    def native_entry(self) -> Any:
        """A plan of the C function for a compiled caller (``function``, ``plan``,
        ``size``; :mod:`symbody.compilation.native_derived`), or None."""
        native = self.native()
        return None if native is None else native.entry()

    @cached_property
    def _ends(self) -> Any:
        ends = [x for s in self._slots for e in s.ends for x in e] or [se.Integer(0)]
        return se.Lambdify(self._q_symbols, ends, cse=True, real=True, backend="lambda")

    @cached_property
    def _multi_inputs(self) -> Any:
        return se.Lambdify(self._q_symbols, [x for pw in self._multi for x in pw.inputs],
                           cse=True, real=True, backend="lambda")

    def __len__(self) -> int:
        return len(self.functions)

    def values(self, q) -> np.ndarray:
        """(7 * slots + the multi-wrap paths' parameters,) at the coordinates q (model
        order)."""
        native = self.native()
        if native is not None:
            return native(q)
        own = self._ellipsoid_values(q) if self._slots else np.zeros(0)
        if not self._multi:
            return own
        x = np.asarray(self._multi_inputs(np.asarray(q, dtype=float)[:self.nq]),
                       dtype=float).ravel().tolist()
        return np.concatenate([own] + [pw.values(x[a:b])
                                       for pw, (a, b) in zip(self._multi, self._multi_bounds)])

    def multi_wrap_paths(self, q) -> dict:
        """{force name: (OpenSim's path length, the names of the wrap objects on its path in
        path order)} of the paths over several wrap objects at coordinates q (model order)."""
        if not self._multi:
            return {}
        native = self.native()
        if native is not None:
            x = native.stage_values(q)[-int(self._multi_bounds[-1][1]):]
        else:
            x = np.asarray(self._multi_inputs(np.asarray(q, dtype=float)[:self.nq]), dtype=float)
        out = {}
        for pw, v in zip(self._multi, np.split(x.ravel(), self._multi_split)):
            L, nodes = pw.path(v)
            out[pw.owner] = (L, tuple(pw.wraps[(-k - 1) // 2][0].name for k in nodes
                                      if k < 0 and (-k - 1) % 2 == 0))
        return out

    def _ellipsoid_values(self, q) -> np.ndarray:
        E = np.asarray(self._ends(np.asarray(q, dtype=float)[:self.nq]),
                       dtype=float).reshape(-1, 6)
        out = np.empty((len(self._slots), 7))
        mid = 0.5 * (E[:, 0:3] + E[:, 3:6])
        out[:, 0:3], out[:, 3:6], out[:, 6] = mid, mid, 0.0
        ends = E.tolist()
        module = _module()
        for w, ks in self._calls:
            for k in ks:
                if module is not None:       # (the common case, without the wrapper's arrays)
                    res = module.wrap(*w.dims, w.axis, w.sign, METHODS[w.method], *ends[k])
                    if res[0]:
                        out[k] = res[1:]
                        break
                    continue
                wraps, r1, r2, length = wrap_ellipsoid_native(w.dims, w.axis, w.sign, w.method,
                                                              ends[k][:3], ends[k][3:])
                if wraps:
                    out[k, 0:3], out[k, 3:6], out[k, 6] = r1, r2, length
                    break
        return out.ravel()

    def __call__(self, t: float, x) -> np.ndarray:
        return self.values(x)
