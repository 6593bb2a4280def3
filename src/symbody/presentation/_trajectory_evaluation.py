"""Evaluate symbolic quantities (energy, outputs, drawing points) along a trajectory.

An expression in t, q, u and constants is compiled once and evaluated for all k samples
at once: values (k,) per expression.  The compilation layer's ``make_function`` is used
when it exists and vectorises; otherwise ``sympy.lambdify(cse=True)`` with numpy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
        exprs_plain = []
        allowed = set(variables)
        for i, e in enumerate(self.exprs):
            unknown = {s for s in e.free_symbols if s not in allowed and s != _t}
            unknown |= {f for f in e.atoms(AppliedUndef, sm.Derivative) if f not in allowed}
            if unknown:
                name = sorted(map(str, unknown))[0]
                raise InputError(f"{what} {i} ({e}) depends on {name}, which is neither a "
                                 "coordinate, a speed nor a known constant")
            exprs_plain.append(e.xreplace(mapping))
        self._compiled = None
        self._function = None
        if self.exprs and backend != "lambdify":
            self._compiled = _compiled_function(
                [[_t], list(self.coordinates), list(self.speeds), list(self.constant_symbols)],
                self.exprs, backend)
        if self._compiled is None:
            self._function = _make_vector_function(plain, exprs_plain)

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
    found: set = set()
    for e in exprs:
        found |= {s for s in sm.sympify(e).free_symbols if isinstance(s, sm.Symbol) and s != _t}
    return sorted(found, key=str)


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
