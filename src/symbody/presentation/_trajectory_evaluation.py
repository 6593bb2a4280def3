"""Evaluate symbolic quantities (energy, outputs, drawing points) along a trajectory.

An expression in t, q, u and constants is compiled once and evaluated for all k samples
at once: values (k,) per expression.  The compilation layer's ``make_function`` is used
when it exists and vectorises; otherwise ``sympy.lambdify(cse=True)`` with numpy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import sympy as sm
from sympy.core.function import AppliedUndef

from ..compat.sympy import TIME
from ..errors import InputError

_t = TIME


def constants_by_symbol(trajectory: Any, constants: Mapping | Sequence | None,
                        needed: Sequence[sm.Symbol] = ()) -> dict:
    """Merge the trajectory's constants with ``constants`` (dict keyed by Symbol or name).

    Returns {Symbol: float}.  Unknown names in ``constants`` raise InputError naming them.
    """
    values: dict = {}
    base = getattr(trajectory, "constants", None) or {}
    if isinstance(base, Mapping):
        for key, val in base.items():
            values[key if isinstance(key, sm.Basic) else sm.Symbol(str(key))] = val
    if constants is None:
        return {k: float(v) for k, v in values.items()}
    known = {str(s): s for s in list(values) + list(needed)}
    if isinstance(constants, Mapping):
        for key, val in constants.items():
            if isinstance(key, sm.Basic):
                values[key] = val
            elif str(key) in known:
                values[known[str(key)]] = val
            else:
                raise InputError(f"unknown constant {key!r}; known constants: "
                                 f"{', '.join(sorted(known)) or '(none)'}")
    else:
        order = list(getattr(trajectory, "constant_symbols", None) or list(base) or needed)
        arr = np.asarray(constants, dtype=float).ravel()
        if len(arr) != len(order):
            raise InputError(f"constants has {len(arr)} values but {len(order)} are needed "
                             f"({', '.join(map(str, order))})")
        values.update(zip(order, arr, strict=True))
    out = {}
    for key, val in values.items():
        val = float(val)
        if not np.isfinite(val):
            raise InputError(f"constant {key} = {val} is not finite")
        out[key] = val
    return out


def _plain_symbols(variables: Sequence) -> tuple[list[sm.Symbol], dict]:
    """Replace functions of time (q1(t)) by plain Dummy symbols for fast code generation."""
    plain, mapping = [], {}
    for v in variables:
        if isinstance(v, sm.Symbol):
            plain.append(v)
        else:
            d = sm.Dummy(str(getattr(v, "func", v)))
            mapping[v] = d
            plain.append(d)
    return plain, mapping


def _symbols_and_functions(exprs: Sequence[sm.Basic]) -> tuple[set, set]:
    """The free Symbols and the applied undefined functions and Derivatives in ``exprs``.

    What ``free_symbols`` and ``atoms(AppliedUndef, Derivative)`` give, walking each shared
    subexpression once (by identity): a robot's link poses are products of its parents',
    DAGs whose trees are exponentially larger.  Nodes that bind variables (integrals, sums,
    lambdas) are asked for their free symbols.
    """
    symbols: set = set()
    functions: set = set()
    seen: set[int] = set()
    stack = list(exprs)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, sm.Symbol):
            symbols.add(node)
            continue
        if getattr(node, "bound_symbols", None):
            symbols |= node.free_symbols
            functions |= node.atoms(AppliedUndef, sm.Derivative)
            continue
        if isinstance(node, (AppliedUndef, sm.Derivative)):
            functions.add(node)
        stack.extend(getattr(node, "args", ()))
    return symbols, functions


class TrajectoryEvaluator:
    """Compile expressions in (t, q, u, constants) once; evaluate them along trajectories.

    ``evaluator(trajectory, constants) -> ndarray (k, len(exprs))``.  The expressions are
    compiled with the compilation layer's ``make_function`` (``backend`` as there), or with
    ``sympy.lambdify(cse=True)`` when ``backend="lambdify"`` or compilation fails.
    """

    def __init__(self, exprs: Sequence[sm.Expr], coordinates: Sequence, speeds: Sequence,
                 constant_symbols: Sequence[sm.Symbol], what: str = "expression",
                 backend: str = "auto"):
        self.exprs = [sm.sympify(e) for e in exprs]
        self.coordinates = tuple(coordinates)
        self.speeds = tuple(speeds)
        self.constant_symbols = tuple(constant_symbols)
        variables = [_t, *self.coordinates, *self.speeds, *self.constant_symbols]
        plain, mapping = _plain_symbols(variables)
        allowed = set(variables)
        for i, e in enumerate(self.exprs):
            symbols, functions = _symbols_and_functions([e])
            unknown = {s for s in symbols if s not in allowed and s != _t}
            unknown |= {f for f in functions if f not in allowed}
            if unknown:
                name = sorted(map(str, unknown))[0]
                raise InputError(f"{what} {i} ({e}) depends on {name}, which is neither a "
                                 "coordinate, a speed nor a known constant")
        self._compiled = None
        self._function = None
        if self.exprs and backend != "lambdify":
            self._compiled = _compiled_function(
                [[_t], list(self.coordinates), list(self.speeds), list(self.constant_symbols)],
                self.exprs, backend)
        if self._compiled is None:
            self._function = _make_vector_function(plain, [e.xreplace(mapping) for e in self.exprs])

    def __call__(self, trajectory: Any, constants: Mapping | None = None) -> np.ndarray:
        t = np.asarray(trajectory.t, dtype=float)
        q = np.asarray(trajectory.q, dtype=float).reshape(len(t), -1)
        u = getattr(trajectory, "u", None)
        u = np.zeros((len(t), len(self.speeds))) if u is None else np.asarray(u, float).reshape(len(t), -1)
        values = constants_by_symbol(trajectory, constants, self.constant_symbols)
        by_name = {str(s): v for s, v in values.items()}
        missing = [s for s in self.constant_symbols if s not in values and str(s) not in by_name]
        if missing:
            raise InputError(f"no value for constant {missing[0]}; give it in constants=")
        c = [values[s] if s in values else by_name[str(s)] for s in self.constant_symbols]
        return self.evaluate(t, q, u, c)

    def evaluate(self, t: np.ndarray, q: np.ndarray, u: np.ndarray, c: Sequence[float]) -> np.ndarray:
        """Values (k, len(exprs)) at times t (k,), coordinates q (k, N), speeds u (k, o)."""
        k = len(t)
        if not self.exprs:
            return np.empty((k, 0))
        if self._compiled is not None:
            c_arr = np.asarray(c, dtype=float)
            out = self._compiled(np.reshape(t, (k, 1)), q.reshape(k, -1), u.reshape(k, -1), c_arr)
            return np.asarray(out, dtype=float).reshape(k, len(self.exprs))
        columns = [t, *(q[:, i] for i in range(q.shape[1])), *(u[:, i] for i in range(u.shape[1])),
                   *(np.full(k, ci) for ci in c)]
        out = self._function(*columns)
        result = np.empty((k, len(self.exprs)))
        for j, col in enumerate(out):
            result[:, j] = np.broadcast_to(np.asarray(col, dtype=float), (k,))
        return result


def _compiled_function(groups: list[list], exprs: list[sm.Expr], backend: str):
    """make_function from the compilation layer, or None when unavailable or failing."""
    try:
        from ..compilation import make_function
    except ImportError:
        return None
    try:
        return make_function(groups, list(exprs), backend=backend, name="presentation")
    except Exception:  # fall back to lambdify; the compiled path is an optimisation only
        return None


def _make_vector_function(symbols: list[sm.Symbol], exprs: list[sm.Expr]):
    """A numpy-broadcasting function f(*columns) -> list of len(exprs) arrays or scalars."""
    if not exprs:
        return lambda *columns: []
    return sm.lambdify(symbols, exprs, modules="numpy", cse=True)


def free_constants(exprs: Sequence[sm.Expr]) -> list[sm.Symbol]:
    """The plain Symbols (not t) in ``exprs``, sorted by name: the constants they need."""
    symbols, _ = _symbols_and_functions([sm.sympify(e) for e in exprs])
    return sorted((s for s in symbols if s != _t), key=str)


def evaluate_along(trajectory: Any, exprs: Sequence[sm.Expr], constants: Mapping | None = None,
                   what: str = "expression") -> np.ndarray:
    """Values (k, len(exprs)) of expressions in t, q, u and constants along ``trajectory``.

    Numbers or arrays of length k among ``exprs`` are passed through unchanged.
    """
    k = len(np.asarray(trajectory.t))
    symbolic = [(j, e) for j, e in enumerate(exprs) if isinstance(e, sm.Basic)]
    out = np.empty((k, len(exprs)))
    for j, e in enumerate(exprs):
        if not isinstance(e, sm.Basic):
            arr = np.asarray(e, dtype=float)
            if arr.ndim and arr.shape != (k,):
                raise InputError(f"{what} {j} has shape {arr.shape}; expected ({k},) values, one per sample")
            out[:, j] = arr
    if symbolic:
        evaluator = TrajectoryEvaluator([e for _, e in symbolic], trajectory.coordinates,
                                        getattr(trajectory, "speeds", ()),
                                        free_constants([e for _, e in symbolic]), what)
        values = evaluator(trajectory, constants)
        for col, (j, _) in enumerate(symbolic):
            out[:, j] = values[:, col]
    return out


def segment_starts(trajectory: Any) -> list[float]:
    """The times the trajectory restarts (impacts: the starts of ``trajectory.segments``
    after the first) inside its samples' span, in time order; [] without segments."""
    segments = list(getattr(trajectory, "segments", None) or [])
    t = np.asarray(getattr(trajectory, "t", ()), dtype=float)
    if len(t) < 2:
        return []
    lo, hi = min(t[0], t[-1]), max(t[0], t[-1])
    return [float(a) for a, _ in segments[1:] if lo < a <= hi]


def sample_segments(t: np.ndarray, boundaries: Sequence[float]) -> np.ndarray:
    """The segment index (k,) of each sample: segment j runs from boundaries[j - 1] to
    boundaries[j]; a sample at a boundary belongs to the next segment unless the time is
    repeated (the state before and after the jump), when the first of the pair belongs to
    the segment before."""
    t = np.asarray(t, dtype=float)
    if not len(boundaries):
        return np.zeros(len(t), dtype=int)
    sign = 1.0 if len(t) < 2 or t[-1] >= t[0] else -1.0
    b = sign * np.asarray(boundaries, dtype=float)
    seg = np.searchsorted(b, sign * t, side="right")
    for i in range(len(t) - 1):
        if t[i + 1] == t[i] and seg[i] > 0 and b[seg[i] - 1] == sign * t[i]:
            seg[i] -= 1
    return seg


def resample(trajectory: Any, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(q (n, N), u (n, o)) of ``trajectory`` at ``times`` (n,), segment by segment.

    A frame time belongs to the segment (between impacts, ``trajectory.segments``) it
    falls in (an impact's time: the one after); q and u there come from that segment's
    samples only, never across an impact: a simulation's trajectory gives all of q and u
    from the integrator's dense output put back on the constraints
    (``trajectory.interpolate``); one without steps (built from samples, an old file) its
    cubic Hermite interpolant with x' for q and the independent speeds when it has one,
    linear interpolation of the samples otherwise and for the dependent speeds.
    """
    t = np.asarray(trajectory.t, dtype=float)
    times = np.asarray(times, dtype=float)
    if getattr(trajectory, "steps", None) is not None and len(t) > 1:
        # a simulation's trajectory: the integrator's dense output, on the constraints
        return trajectory.interpolate(times)
    q = np.asarray(trajectory.q, dtype=float).reshape(len(t), -1)
    u = getattr(trajectory, "u", None)
    u = np.zeros((len(t), 0)) if u is None else np.asarray(u, dtype=float).reshape(len(t), -1)
    if len(t) == 1:
        return np.repeat(q[:1], len(times), axis=0), np.repeat(u[:1], len(times), axis=0)
    bounds = segment_starts(trajectory)
    seg = sample_segments(t, bounds)
    sign = 1.0 if t[-1] >= t[0] else -1.0
    frame_seg = (np.searchsorted(sign * np.asarray(bounds, dtype=float), sign * times, side="right")
                 if bounds else np.zeros(len(times), dtype=int))
    q_out = np.full((len(times), q.shape[1]), np.nan)
    u_out = np.full((len(times), u.shape[1]), np.nan)
    for j in np.unique(frame_seg):
        frames = frame_seg == j
        mine = np.flatnonzero(seg == j)
        if not len(mine):
            mine = np.arange(len(t))
        ts = sign * t[mine]
        for a, out in ((q, q_out), (u, u_out)):
            for c in range(a.shape[1]):
                out[frames, c] = np.interp(sign * times[frames], ts, a[mine, c])
    if callable(trajectory) and getattr(trajectory, "xdot", None) is not None:
        x = np.asarray(trajectory(times), dtype=float).reshape(len(times), -1)
        n = q.shape[1]
        q_out = x[:, :n]
        speeds = list(getattr(trajectory, "speeds", ()))
        for k, s in enumerate(list(getattr(trajectory, "states", ()))[n:]):
            if s in speeds:
                u_out[:, speeds.index(s)] = x[:, n + k]
    return q_out, u_out


def resampled(trajectory: Any, times: np.ndarray) -> SimpleNamespace:
    """A trajectory-like object with q and u at ``times``, segment by segment (never
    interpolated across an impact; see :func:`resample`)."""
    q, u = resample(trajectory, times)
    return SimpleNamespace(t=times, q=q, u=u, coordinates=trajectory.coordinates,
                           speeds=getattr(trajectory, "speeds", ()),
                           constants=getattr(trajectory, "constants", None))


def with_impact_times(trajectory: Any, times: np.ndarray) -> np.ndarray:
    """``times`` (sorted in the trajectory's direction) with each impact inside them added
    twice: 1 ulp before it (the state before the jump) and at it (the state after), so that
    a player interpolating linearly between the times never blends across an impact."""
    times = np.asarray(times, dtype=float)
    bounds = segment_starts(trajectory)
    if not bounds or len(times) < 2:
        return times
    t0, t1 = times[0], times[-1]
    sign = 1.0 if t1 >= t0 else -1.0
    extra = []
    for b in bounds:
        if sign * (b - t0) > 0 and sign * (t1 - b) >= 0:
            extra += [np.nextafter(b, t0), b]
    merged = np.concatenate([times, extra])
    merged = sign * np.unique(sign * merged)
    return merged


def position_matrix(expr: Any, what: str) -> sm.Matrix:
    """A point's position as a 3x1 SymPy matrix; (x, y) gets z = 0.

    ``what`` names the point in the error raised for anything else.
    """
    try:
        vec = sm.Matrix(expr)
    except Exception as exc:
        raise InputError(f"{what} is not a 3x1 matrix of expressions: {expr!r}") from exc
    vec = vec.reshape(len(vec), 1)
    if len(vec) == 2:
        vec = vec.col_join(sm.Matrix([0]))
    if len(vec) != 3:
        raise InputError(f"{what} has {len(vec)} components; give (x, y, z)")
    return vec
