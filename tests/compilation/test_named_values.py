"""The one parser of "an array in model order, or a dict keyed by symbol or name"."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
from sympy.physics.vector import dynamicsymbols

from symbody.compilation.named_values import finite_number, symbol_index, values_by_symbol
from symbody.errors import InputError

q1, u1 = dynamicsymbols("q1 u1")
m, g = sm.symbols("m g")


def test_arrays_and_dicts_by_symbol_or_name():
    syms = (q1, u1, m)
    np.testing.assert_array_equal(values_by_symbol([1, 2, 3], syms, "value"), [1.0, 2.0, 3.0])
    # by Symbol, by printed name, by the function's name ("q1" for q1(t)), spaces stripped
    got = values_by_symbol({q1: 1.0, "u1(t)": 2.0, " m ": 3.0}, syms, "value")
    np.testing.assert_array_equal(got, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(values_by_symbol({"q1": 1.0, "u1": 2, m: 3}, syms, "value"), [1, 2, 3])


def test_optional_ignored_and_worded():
    syms = (q1, u1, m)
    got = values_by_symbol({q1: 1.0, m: 3.0, "extra": 9.0}, syms, "value", optional=[1], default=-1.0,
                           ignore=lambda key: key == "extra")
    np.testing.assert_array_equal(got, [1.0, -1.0, 3.0])
    with pytest.raises(InputError, match="no entry for u1"):
        values_by_symbol({q1: 1.0, m: 3.0}, syms, "value", wording={"missing": "no entry for {symbol}"})
    with pytest.raises(InputError, match="op has 2 values, 3 needed"):
        values_by_symbol([1.0, 2.0], syms, "value", wording={"length": "op has {n} values, {c} needed"})


@pytest.mark.parametrize("given, parts", [
    ({"m": 1.0, "zz": 2.0}, ("unknown constant 'zz'", "constants are m, g")),
    ({"m": 1.0}, ("missing value for constant g", "needed: m, g")),
    ({"m": "heavy", "g": 9.81}, ("constant m = 'heavy' is not a number",)),
    ({"m": 1.0, "g": float("inf")}, ("constant g = inf is not finite",)),
    ([1.0], ("1 constant values given but the model has 2: m, g",)),
    ([1.0, float("nan")], ("constant g = nan is not finite",)),
])
def test_one_style_of_error(given, parts):
    with pytest.raises(InputError) as err:
        values_by_symbol(given, (m, g), "constant")
    for part in parts:
        assert part in str(err.value)


def test_ambiguous_names_and_numbers():
    a1, a2 = sm.Symbol("a"), sm.Symbol("a", positive=True)
    index = symbol_index((a1, a2))
    assert index.position(a2) == 1
    with pytest.raises(InputError, match="ambiguous"):
        values_by_symbol({"a": 1.0, a2: 2.0}, (a1, a2), "constant")
    assert finite_number("2.5", "t") == 2.5
    with pytest.raises(InputError, match="t = nan must be finite"):
        finite_number(float("nan"), "t")
