"""Building and reading a sweep's cases: grid_cases, sample_cases, names -> symbols, merging
a case into the base x0 / p / specifieds."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...compilation import NumericModel
from ...errors import InputError
from ...formatting import symbol_name as _short

_GROUPS = ("x0", "p", "specifieds")


def grid_cases(**values: Sequence[float]) -> list[dict]:
    """The Cartesian product of value lists: ``grid_cases(q1=[0.1, 0.2], m=[1, 2])`` -> 4 cases
    (the last name varies fastest)."""
    if not values:
        raise InputError("grid_cases() needs at least one name=values")
    names = list(values)
    lists = []
    for name, vals in values.items():
        arr = np.atleast_1d(np.asarray(vals, dtype=float))
        if arr.ndim != 1 or arr.size == 0:
            raise InputError(f"grid_cases: {name} must be a non-empty list of numbers")
        lists.append([float(v) for v in arr])
    return [dict(zip(names, combo)) for combo in itertools.product(*lists)]


def sample_cases(n: int, seed: int | None = 0, **ranges: tuple[float, float]) -> list[dict]:
    """``n`` cases drawn uniformly from ``name=(low, high)`` ranges with a seeded generator
    (``numpy.random.default_rng(seed)``), so the same call gives the same cases."""
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError(f"sample_cases: n must be a positive integer, got {n!r}")
    if not ranges:
        raise InputError("sample_cases() needs at least one name=(low, high)")
    rng = np.random.default_rng(seed)
    cols = {}
    for name, rg in ranges.items():
        try:
            lo, hi = (float(v) for v in rg)
        except (TypeError, ValueError):
            raise InputError(f"sample_cases: {name} must be a (low, high) pair, got {rg!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
            raise InputError(f"sample_cases: {name} = ({lo}, {hi}) is not a finite range with low <= high")
        cols[name] = rng.uniform(lo, hi, int(n))
    return [{name: float(cols[name][i]) for name in cols} for i in range(int(n))]


def _case_values(case: Mapping) -> dict:
    out = {}
    for key, val in case.items():
        name = key if isinstance(key, str) else _short(key)
        if name not in _GROUPS:
            out[name] = val
    return out


_NAMES: dict[int, tuple] = {}


def _name_maps(model: NumericModel) -> tuple[dict, dict, dict]:
    """name -> symbol of the states, constants and specified inputs (cached per model)."""
    hit = _NAMES.get(id(model))
    if hit is not None and hit[0] is model:
        return hit[1]
    maps = ({_short(s): s for s in model.states}, {str(s): s for s in model.constants},
            {_short(s): s for s in model.specifieds})
    if len(_NAMES) > 8:
        _NAMES.clear()
    _NAMES[id(model)] = (model, maps)
    return maps


def _split_case(model: NumericModel, case: Mapping) -> tuple[dict, dict, dict, dict]:
    """(state overrides, constant overrides, specified overrides, whole groups) of one case."""
    if not isinstance(case, Mapping):
        raise InputError(f"a case must be a dict of names and values, got {type(case).__name__}")
    states, consts, specs = _name_maps(model)
    xs, ps, rs, groups = {}, {}, {}, {}
    for key, val in case.items():
        name = key if isinstance(key, str) else _short(key)
        if name in _GROUPS:
            groups[name] = val
        elif name in states:
            xs[states[name]] = val
        elif name in consts:
            ps[consts[name]] = val
        elif name in specs:
            rs[specs[name]] = val
        else:
            known = list(states) + list(consts) + list(specs)
            raise InputError(f"case key {key!r} is not a state, constant or specified input of the "
                             f"model ({', '.join(known)}), nor one of {', '.join(_GROUPS)}")
    return xs, ps, rs, groups


def _merge(model: NumericModel, base, over: dict, what: str, names: Sequence):
    """``base`` (array or dict) with the entries ``over`` (symbol -> value) replaced."""
    if not over:
        return base
    if base is None:
        if len(over) == len(names):
            return dict(over)
        missing = [str(n) for n in names if n not in over]
        raise InputError(f"no base {what} given and the case does not set {', '.join(missing)}")
    if isinstance(base, Mapping):
        out = {}
        for k, v in base.items():
            out[k] = v
        by_name = {(_short(s) if not isinstance(s, str) else s): s for s in out}
        for sym, v in over.items():
            key = sym if sym in out else by_name.get(_short(sym), sym)
            out[key] = v
        return out
    arr = np.array(base, dtype=float).ravel().copy()
    for sym, v in over.items():
        arr[list(names).index(sym)] = float(v)
    return arr


def _check_cases(model: NumericModel, cases: Any) -> list:
    if isinstance(cases, Mapping) or not isinstance(cases, Sequence) or isinstance(cases, str):
        raise InputError("cases must be a list of dicts (see grid_cases / sample_cases)")
    cases = [dict(c) if isinstance(c, Mapping) else c for c in cases]
    for i, c in enumerate(cases):
        if not isinstance(c, Mapping):
            raise InputError(f"case {i} is a {type(c).__name__}, not a dict of names and values")
        _split_case(model, c)               # unknown names fail here, before any work
    return cases

