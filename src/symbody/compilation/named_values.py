"""Numbers given for symbols: an array in model order, or a dict keyed by symbol or name.

Wherever numbers go in (constants, initial states, specified inputs, operating points),
symbody accepts an array in the model's order or a dict keyed by the symbols themselves or
by their names ("m", "q1(t)" or "q1" for q1(t)).  :func:`values_by_symbol` is the one parser
of both forms, and every error it raises names the symbol or key at fault:

- ``unknown constant 'zz'; the model's constants are l_a, l_b, ...``
- ``missing value for constant l_b (needed: l_a, l_b, ...)``
- ``constant m = 'abc' is not a number`` / ``constant g = inf is not finite``
- ``2 constant values given but the model has 6: l_a, l_b, ...``
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import sympy as sm
from numpy.typing import ArrayLike

from ..errors import InputError

__all__ = ["SymbolIndex", "symbol_index", "values_by_symbol", "finite_number", "ParameterValues",
           "constants_values", "state_values",
           "StateValues", "InputValues"]

#: constants: an array in model order, or a dict keyed by symbol or name
ParameterValues = ArrayLike | Mapping[Any, float]
#: a state [q, u_ind] (or an operating point): an array in model order, or a dict keyed by symbol or name
StateValues = ArrayLike | Mapping[Any, float]
#: specified inputs: None, an array, a dict keyed by symbol or name, or a callable r(t, x)
InputValues = ArrayLike | Mapping[Any, float] | Callable[..., ArrayLike] | None


class SymbolIndex:
    """Positions of symbols, also by name: "q1(t)" and "q1" for the function of time q1(t).

    A name shared by two symbols is ambiguous: looking it up raises InputError (key those
    by Symbol).
    """

    def __init__(self, symbols: Sequence) -> None:
        self.symbols = tuple(symbols)
        idx: dict[Any, int | None] = {}
        for i, s in enumerate(self.symbols):
            idx[s] = i
        for i, s in enumerate(self.symbols):
            names = {str(s)}
            if isinstance(s, sm.core.function.AppliedUndef):
                names.add(s.func.__name__)          # "q1" for q1(t)
            for name in names:
                if name in idx and idx[name] != i and not isinstance(name, sm.Basic):
                    idx[name] = None                # ambiguous
                else:
                    idx.setdefault(name, i)
        self._index = idx

    def __contains__(self, key: Any) -> bool:
        return _normal(key) in self._index

    def position(self, key: Any, what: str = "symbol") -> int | None:
        """Position of ``key`` (symbol or name), None when unknown; InputError when ambiguous."""
        k = _normal(key)
        try:
            i = self._index.get(k)
        except TypeError:          # unhashable keys are unknown
            return None
        if i is None and k in self._index:
            raise InputError(f"{what} name {key!r} is ambiguous; key it by Symbol")
        return i

    def names(self) -> str:
        return ", ".join(map(str, self.symbols)) or "(none)"


@functools.lru_cache(maxsize=512)
def symbol_index(symbols: tuple) -> SymbolIndex:
    """The (cached) :class:`SymbolIndex` of a tuple of symbols."""
    return SymbolIndex(symbols)


def _normal(key: Any) -> Any:
    return key.strip() if isinstance(key, str) else key


def values_by_symbol(given: Any, symbols: Sequence, what: str, *, optional: Sequence[int] = (),
                     default: float = 0.0, ignore: Callable[[Any], bool] | None = None,
                     wording: Mapping[str, str] | None = None) -> np.ndarray:
    """``given`` (dict keyed by symbol or name, or a sequence in ``symbols`` order) as floats.

    ``what`` names one entry in the messages ("constant", "state", "specified input").
    ``optional``: positions that may be missing from a dict (``default`` then); ``ignore(key)``:
    True for keys outside ``symbols`` that are accepted and skipped.  ``wording`` adjusts
    the messages: "plural" of ``what`` (default ``what + "s"``), "missing" (default
    "missing value for {what} {symbol}"), "hint" appended to it, and "length", the message
    for an array of the wrong length ({n}, {c}, {what}, {names} are filled in).
    Returns an array of shape (len(symbols),); raises InputError naming the key at fault.
    """
    symbols = tuple(symbols)
    c = len(symbols)
    index = symbol_index(symbols)
    words = {"plural": what + "s", "missing": "missing value for {what} {symbol}", "hint": "",
             "length": "{n} {what} values given but the model has {c}: {names}", **(wording or {})}
    if isinstance(given, Mapping):
        arr = np.full(c, np.nan)
        seen = np.zeros(c, bool)
        for key, val in given.items():
            i = index.position(key, what)
            if i is None:
                if ignore is not None and ignore(_normal(key)):
                    continue
                raise InputError(f"unknown {what} {key!r}; the model's {words['plural']} are "
                                 f"{index.names()}")
            if isinstance(val, (str, bytes)):
                raise InputError(f"{what} {symbols[i]} = {val!r} is not a number (strings are not "
                                 "converted: give 0.7, not '0.7')")
            try:
                arr[i] = float(val)
            except (TypeError, ValueError) as exc:
                raise InputError(f"{what} {symbols[i]} = {val!r} is not a number") from exc
            seen[i] = True
        for i in optional:
            if not seen[i]:
                arr[i], seen[i] = default, True
        if not seen.all():
            i = int(np.argmin(seen))
            missing = words["missing"].format(what=what, symbol=symbols[i])
            raise InputError(f"{missing}{words['hint']} (needed: {index.names()})")
        bad = ~np.isfinite(arr)
    else:
        if isinstance(given, (str, bytes)) or (
                isinstance(given, Sequence) and any(isinstance(v, (str, bytes)) for v in given)):
            raise InputError(f"{what} values must be numbers (a string is not a number; strings "
                             f"are not converted): {given!r}")
        if isinstance(given, np.ndarray) and given.dtype.kind in "USO" and any(
                isinstance(v, (str, bytes, np.str_, np.bytes_)) for v in given.ravel()):
            raise InputError(f"{what} values must be numbers (a string is not a number; strings "
                             f"are not converted): {given!r}")
        try:
            arr = np.array(given, dtype=float)
        except (TypeError, ValueError) as exc:
            raise InputError(f"{what} values must be numbers or a dict keyed by symbol: "
                             f"{given!r}") from exc
        if arr.ndim > 1:       # never flattened silently: (1, c) may be a batch of one, or a slip
            raise InputError(f"{what} values must be a 1-D array of {c} numbers, got an array of "
                             f"shape {arr.shape} (pass x[0] or x.ravel() for one row)")
        arr = arr.ravel()
        if arr.shape != (c,):
            raise InputError(words["length"].format(n=arr.size, c=c, what=what, names=index.names()))
        bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"{what} {symbols[i]} = {arr[i]} is not finite (the {what}s must be "
                         "finite numbers)")
    return arr


def finite_number(value: Any, what: str) -> float:
    """``value`` as a finite float; InputError naming ``what`` otherwise."""
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what} = {value!r} must be a number") from exc
    if not np.isfinite(number):
        raise InputError(f"{what} = {value!r} must be finite")
    return number


def constants_values(constants: Sequence, p: Any) -> np.ndarray:
    """Constants ``p`` (dict keyed by Symbol/name, or sequence) as an array in ``constants`` order.

    Raises InputError naming a missing, unknown, ambiguous or non-finite constant.
    """
    if isinstance(p, np.ndarray) and p.dtype == float and p.shape == (len(constants),) \
            and np.isfinite(p).all():
        return p
    return values_by_symbol(p, constants, "constant")


def state_values(x0: Any, states: Sequence, dependent_speeds: Sequence, n_dependent_first: int,
                 n_dependent: int) -> np.ndarray:
    """The ODE state as an array in ``states`` order from ``x0``: a dict keyed by symbol or
    name (values for the ``dependent_speeds`` are accepted and ignored: they follow from the
    constraints), or an array of ``len(states)`` values, or of ``len(states) + n_dependent``
    with the dependent speeds at ``[n_dependent_first, n_dependent_first + n_dependent)``
    (then dropped)."""
    if not isinstance(x0, Mapping):
        try:
            x0 = np.array(x0, dtype=float)
        except (TypeError, ValueError) as exc:
            raise InputError(f"state must be numbers or a dict keyed by symbol: {x0!r}") from exc
        if x0.ndim > 1:        # never flattened silently
            raise InputError(f"the state must be a 1-D array of {len(states)} numbers, got an "
                             f"array of shape {x0.shape} (pass x0[0] or x0.ravel() for one row)")
        x0 = x0.ravel()
        if n_dependent and x0.size == len(states) + n_dependent:
            x0 = np.concatenate([x0[:n_dependent_first], x0[n_dependent_first + n_dependent:]])
    dep = symbol_index(tuple(dependent_speeds))
    return values_by_symbol(
        x0, states, "state", ignore=lambda key: key in dep,
        wording={"missing": "missing initial value for state {symbol}",
                 "hint": " (for a dependent coordinate give a guess; it is solved by Newton's method)"})
