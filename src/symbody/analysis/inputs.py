"""Specified inputs r(t) of a simulation, from whatever the user has.

``simulate(..., specifieds=...)`` accepts, for the model's specified inputs
``model.specifieds`` (s of them):

- numbers: an array (s,), or a dict keyed by symbol or name -> constant inputs;
- a callable ``r(t, x) -> array (s,)`` (x = [q, u_ind] in ``model.states`` order);
- SymPy expressions: a list / Matrix of s expressions, or dict values, in time ``t``
  (``dynamicsymbols._t``), the coordinates and independent speeds and the constants;
  compiled once (``make_function``), never evaluated with ``subs``;
- tabulated data: :class:`Tabulated` ``(t, values)`` (or a pair of equal-length 1-D
  arrays as a dict value), interpolated by scipy (``kind`` "linear", "cubic" -- a
  not-a-knot cubic spline -- or "previous" for sample-and-hold);
- in a dict, each input may be given by any of the kinds above except the whole-vector
  callable; a per-input callable takes ``f(t)``.

A model whose equations carry ``derived_inputs`` (inputs it computes from the state itself,
such as the stations of an OpenSim path over an ellipsoid) takes values for its other
inputs only; the derived ones are computed at every evaluation.

:func:`specified_inputs` turns these into one function ``r(t, x) -> (s,)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sm

from ..compat.sympy import TIME
from ..compilation import NumericModel, make_function
from ..errors import InputError
from ..formatting import symbol_name as _short
from .expression_atoms import expression_atoms

__all__ = ["Tabulated", "specified_inputs", "derived_inputs"]

_t = TIME


@dataclass(frozen=True)
class Tabulated:
    """Tabulated values of one specified input: ``values[i]`` at ``t[i]`` (t increasing).

    ``kind``: "linear" (default), "cubic" (not-a-knot cubic spline: C2, exact for cubics)
    or "previous" (hold the last value).  Evaluating outside [t[0], t[-1]] is an error
    (checked against the simulated time span before integrating).
    """

    t: Sequence[float]
    values: Sequence[float]
    kind: str = "linear"

    def function(self, name: str = "input") -> Callable[[float], float]:
        """The interpolant ``f(t) -> float`` (scipy)."""
        from scipy.interpolate import CubicSpline, interp1d

        tt = np.asarray(self.t, dtype=float).ravel()
        vv = np.asarray(self.values, dtype=float).ravel()
        if tt.size != vv.size or tt.size < 2:
            raise InputError(f"tabulated {name}: t and values need the same length >= 2 "
                             f"(got {tt.size} and {vv.size})")
        if not (np.isfinite(tt).all() and np.isfinite(vv).all()):
            raise InputError(f"tabulated {name} contains a non-finite number")
        if np.any(np.diff(tt) <= 0):
            raise InputError(f"tabulated {name}: the times must be strictly increasing")
        if self.kind == "cubic":
            if tt.size < 4:
                raise InputError(f"tabulated {name}: a cubic spline needs at least 4 points")
            f = CubicSpline(tt, vv, bc_type="not-a-knot", extrapolate=False)
        elif self.kind in ("linear", "previous"):
            f = interp1d(tt, vv, kind=self.kind, bounds_error=False, fill_value=np.nan,
                         assume_sorted=True)
        else:
            raise InputError(f"tabulated {name}: kind={self.kind!r}; use 'linear', 'cubic' or 'previous'")
        lo, hi = float(tt[0]), float(tt[-1])

        def value(t: float, _f=f) -> float:
            if not lo <= t <= hi:
                raise InputError(f"tabulated {name} covers t in [{lo:g}, {hi:g}]; asked for t = {t:.6g}")
            return float(_f(t))

        value.span = (lo, hi)
        return value


def _is_table(v) -> bool:
    if isinstance(v, Tabulated):
        return True
    if isinstance(v, tuple) and len(v) == 2:
        a, b = (np.asarray(x) for x in v)
        return a.ndim == 1 and b.ndim == 1 and a.size == b.size and a.size >= 2
    return False


class ConstantInputs:
    """Specified inputs that keep one value: ``r(t, x) -> values`` for every t and x
    (a simulation with them may run its steps in compiled code)."""

    __slots__ = ("values",)

    def __init__(self, values: np.ndarray) -> None:
        self.values = np.array(values, dtype=float)
        self.values.setflags(write=False)

    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        return self.values


def specified_inputs(model: NumericModel, specifieds: Any, P: np.ndarray | None = None,
                     t_span: tuple[float, float] | None = None, x0: np.ndarray | None = None,
                     ) -> Callable[[float, np.ndarray], np.ndarray] | None:
    """``r(t, x) -> (s,)`` for the model's specified inputs, or None when it has none.

    ``P``: the constants (array in ``model.constants`` order) compiled expressions use;
    ``t_span`` / ``x0``: checked against tabulated data, and r(t0, x0) evaluated once so that
    a failing user function fails before the integration.

    Raises InputError naming the input at fault (unknown name, missing value, a SymPy
    expression in a symbol that is not t, a state or a constant, tabulated data that does
    not cover ``t_span``).
    """
    derived = derived_inputs(model)
    if derived is not None:
        return _with_derived(model, derived, specifieds, P, t_span, x0)
    s = len(model.specifieds)
    if not s:
        if specifieds is not None and not (isinstance(specifieds, (Mapping, Sequence, np.ndarray))
                                           and len(specifieds) == 0):
            raise InputError("specifieds were given but the model has no specified inputs")
        return None
    if specifieds is None:
        raise InputError("the model has specified inputs "
                         f"{', '.join(map(str, model.specifieds))}; pass specifieds= (numbers, a dict, "
                         "a callable r(t, x), SymPy expressions of t or symbody.Tabulated data)")
    if callable(specifieds) and not isinstance(specifieds, (sm.Basic, Tabulated)):
        return _checked(model, specifieds, t_span, x0)
    per = _per_input(model, specifieds)
    constant, exprs, funcs = _sort_inputs(model, per, t_span)
    kernel = _expression_kernel(model, exprs, P)
    if not funcs and kernel is None:
        return ConstantInputs(constant)
    if not funcs:
        return _checked(model, ExpressionInputs(model, constant, exprs, kernel, P), t_span, x0)
    fidx = sorted(funcs)
    idx = np.array(sorted(exprs), dtype=np.intp)

    def r(t, x):
        out = constant.copy()
        for i in fidx:
            out[i] = funcs[i](t)
        if kernel is not None:
            out[idx] = kernel(t, x)
        return out

    return _checked(model, r, t_span, x0)


def derived_inputs(model: Any) -> Any | None:
    """The model's derived inputs (its equations' ``derived_inputs``), or None: specified
    inputs the model computes itself before each evaluation, ``d(t, x) -> values`` for the
    positions ``d.indices`` of ``model.specifieds`` (e.g. the stations of an OpenSim path
    over an ellipsoid, :mod:`symbody.opensim.forces.ellipsoid_path`)."""
    if isinstance(model, _UserView):
        return None
    found = getattr(model, "derived_inputs", None)
    if found is None:
        found = getattr(getattr(model, "eom", None), "derived_inputs", None)
    return found if found is not None and len(found.indices) else None


class _UserView:
    """The model as the user's inputs see it: its specifieds without the derived ones."""

    derived_inputs = None

    def __init__(self, model: NumericModel, user: list) -> None:
        self._model = model
        self.specifieds = [model.specifieds[i] for i in user]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def specifieds_array(self, r: Any, t: float = 0.0, x: Any = None) -> np.ndarray:
        return NumericModel.specifieds_array(self, r, t, x)


def _with_derived(model: NumericModel, derived: Any, specifieds: Any, P: np.ndarray | None,
                  t_span: tuple[float, float] | None, x0: np.ndarray | None) -> InputsWithDerived:
    """r(t, x): the user's inputs (the model's specifieds but the derived ones, given as
    for any model) and the derived inputs computed from (t, x) at every call."""
    s = len(model.specifieds)
    user = [i for i in range(s) if i not in set(derived.indices)]
    r_user = specified_inputs(_UserView(model, user), specifieds, P, t_span, x0) \
        if user else specified_inputs(_UserView(model, []), specifieds)
    return InputsWithDerived(s, derived, user, r_user)


class ExpressionInputs:
    """``r(t, x) -> (s,)``: constant inputs (``values``, zeros at the expressions' places)
    and inputs given as SymPy expressions of t, the state and the constants (at ``indices``),
    the latter from the compiled ``kernel``.  ``native_entry()``: the same expressions in C
    (:mod:`symbody.compilation.native_inputs`), so that a compiled integrator computes them
    before each evaluation as it does a model's derived inputs."""

    def __init__(self, model: NumericModel, values: np.ndarray, exprs: dict, kernel: Callable,
                 P: np.ndarray | None) -> None:
        self.indices = tuple(sorted(exprs))
        self._idx = np.array(self.indices, dtype=np.intp)
        values = values.copy()
        values[self._idx] = 0.0
        values.setflags(write=False)
        self.values = values
        self._kernel, self._model, self._P = kernel, model, P
        self._exprs = [exprs[i] for i in self.indices]
        self._entry: Any = None

    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        out = self.values.copy()
        out[self._idx] = self._kernel(t, x)
        return out

    def within(self, s: int, positions: np.ndarray) -> ExpressionInputs:
        """These inputs as the inputs at ``positions`` of a model with ``s`` specified
        inputs (the others zero): the same expressions and C entry."""
        out = object.__new__(ExpressionInputs)
        out.__dict__.update(self.__dict__)
        positions = np.asarray(positions, dtype=np.intp)
        out.indices = tuple(int(positions[i]) for i in self.indices)
        out._idx = np.array(out.indices, dtype=np.intp)
        values = np.zeros(s)
        values[positions] = self.values
        values.setflags(write=False)
        out.values = values
        out.native_entry = self.native_entry           # (one C entry for both views)
        return out

    def native_entry(self) -> Any:
        """The expressions' C entry (built once), or None without a C compiler."""
        if self._entry is None:
            from ..compilation.native_inputs import expression_inputs_entry
            model = self._model
            p = model.constants_array(self._P) if model.constants else np.empty(0)
            self._entry = expression_inputs_entry(_t, list(model.states), list(model.constants),
                                                  self._exprs, p) or False
        return self._entry or None


class InputsWithDerived:
    """``r(t, x) -> (s,)``: the user's inputs at the positions ``user`` (``r_user``, None
    when there are none) and the model's ``derived`` inputs (at ``derived.indices``),
    computed from (t, x) at every call.  ``user_values``: the full vector (s,) with the
    user's values and zeros at the derived positions when the user's inputs are constant
    (a compiled integrator then computes the derived ones in C:
    :mod:`symbody.compilation.native_derived`), else None."""

    def __init__(self, s: int, derived: Any, user: list, r_user: Any) -> None:
        self.s, self.derived, self.r_user = s, derived, r_user
        self._idx = np.array(derived.indices, dtype=np.intp)
        self._uidx = np.array(user, dtype=np.intp)
        self.user_values: np.ndarray | None = None
        if r_user is None or isinstance(r_user, ConstantInputs):
            values = np.zeros(s)
            if r_user is not None:
                values[self._uidx] = r_user.values
            values.setflags(write=False)
            self.user_values = values

    def user_expressions(self) -> ExpressionInputs:
        """The user's inputs (an :class:`ExpressionInputs` of the user's inputs only) as one
        of the whole model's: ``indices`` among all specified inputs, ``values`` (s,) with
        the constants at the user's positions, zeros elsewhere."""
        return self.r_user.within(self.s, self._uidx)

    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        out = np.empty(self.s)
        if self.r_user is not None:
            out[self._uidx] = self.r_user(t, x)
        out[self._idx] = self.derived(t, x)
        return out


def _per_input(model: NumericModel, specifieds: Any) -> list:
    """One value per specified input, in model order, from a dict, a Tabulated, one
    expression or a sequence."""
    s = len(model.specifieds)
    if isinstance(specifieds, np.ndarray) and specifieds.size == s:    # the common, fast case
        return list(specifieds.ravel())
    names = [_short(r) for r in model.specifieds]
    listed = ", ".join(map(str, model.specifieds))
    if isinstance(specifieds, Mapping):
        index = {}
        for i, r in enumerate(model.specifieds):
            index[r] = i
            index[names[i]] = i
            index[str(r)] = i
        per: list = [None] * s
        for key, val in specifieds.items():
            i = index.get(key.strip() if isinstance(key, str) else key)
            if i is None:
                raise InputError(f"unknown specified input {key!r}; the model's specifieds are "
                                 f"{listed}")
            per[i] = val
        missing = [names[i] for i in range(s) if per[i] is None]
        if missing:
            raise InputError(f"the value of the specified input {missing[0]} is missing; the model's "
                             f"specifieds are {listed}")
        return per
    if isinstance(specifieds, Tabulated):
        if s != 1:
            raise InputError(f"one Tabulated input given but the model has {s}: {', '.join(names)}; "
                             "pass a dict name -> Tabulated")
        return [specifieds]
    if isinstance(specifieds, sm.Basic) and not isinstance(specifieds, sm.MatrixBase):
        if s != 1:
            raise InputError(f"one expression given but the model has {s} specified inputs: {', '.join(names)}")
        return [specifieds]
    vals = list(specifieds) if not isinstance(specifieds, np.ndarray) else list(specifieds.ravel())
    if len(vals) != s:
        raise InputError(f"{len(vals)} specified values given but the model has {s}: {listed}")
    return vals


def _sort_inputs(model: NumericModel, per: list, t_span: tuple[float, float] | None,
                 ) -> tuple[np.ndarray, dict[int, sm.Expr], dict[int, Callable]]:
    """(constant values (s,), {i: SymPy expression}, {i: f(t)}) from one value per input."""
    constant = np.zeros(len(per))
    exprs: dict[int, sm.Expr] = {}
    funcs: dict[int, Callable] = {}
    for i, v in enumerate(per):
        if isinstance(v, (float, int, np.floating, np.integer)) and not isinstance(v, bool):
            constant[i] = v
            if not np.isfinite(constant[i]):
                raise InputError(f"specified input {model.specifieds[i]} = {v} is not finite")
            continue
        name = str(model.specifieds[i])        # (printing SymPy names costs: only here)
        if _is_table(v):
            table = v if isinstance(v, Tabulated) else Tabulated(*v)
            f = table.function(name)
            if t_span is not None:
                lo, hi = min(t_span), max(t_span)
                if lo < f.span[0] or hi > f.span[1]:
                    raise InputError(f"tabulated {name} covers t in [{f.span[0]:g}, {f.span[1]:g}] but the "
                                     f"simulation spans [{lo:g}, {hi:g}]")
            funcs[i] = f
        elif isinstance(v, sm.Basic):
            e = sm.sympify(v)
            if e.is_number:
                constant[i] = _finite(float(e), name)
            else:
                exprs[i] = e
        elif callable(v):
            funcs[i] = v
        else:
            try:
                value = float(v)
            except (TypeError, ValueError):
                raise InputError(f"specified input {name} = {v!r} is not a number, a SymPy expression, "
                                 "a callable f(t) or tabulated data") from None
            constant[i] = _finite(value, name)
    return constant, exprs, funcs


def _expression_kernel(model: NumericModel, exprs: dict[int, sm.Expr],
                       P: np.ndarray | None) -> Callable[[float, np.ndarray], np.ndarray] | None:
    """The compiled expressions (in the order of their input indices) as k(t, x), or None."""
    if not exprs:
        return None
    allowed = {_t, *model.states, *model.constants}
    for i, e in exprs.items():
        atoms, derivs = expression_atoms(e)       # (one visit per shared subexpression)
        bad = [a for a in atoms if a not in allowed and not (a == _t)]
        if bad or derivs:
            what = sorted(map(str, list(derivs) + bad))[0]
            raise InputError(f"the expression for the specified input {model.specifieds[i]} ({e}) depends on "
                             f"{what}, which is not t, a state ({', '.join(map(_short, model.states))}) "
                             "or a constant")
    order = sorted(exprs)
    kernel = make_function([_t, list(model.states), list(model.constants)],
                           [exprs[i] for i in order], name="specified inputs")
    Pc = model.constants_array(P) if P is not None else None
    if Pc is None and model.constants:
        raise InputError("specified inputs given as expressions need the constants p")
    Pc = np.empty(0) if Pc is None else Pc
    return lambda t, x: kernel(t, x, Pc)


def _checked(model: NumericModel, r, t_span, x0):
    """r after one evaluation at (t0, x0): a failing user function fails here, clearly."""
    if t_span is None or x0 is None:
        return r
    try:
        model.specifieds_array(r, float(t_span[0]), np.asarray(x0, dtype=float))
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"specifieds(t0, x0) raised {type(exc).__name__}: {exc}") from exc
    return r


def _finite(v: float, name: str) -> float:
    if not np.isfinite(v):
        raise InputError(f"specified input {name} = {v} is not finite")
    return v
