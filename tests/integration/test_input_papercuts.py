"""Bad input named where it is given (issue 34, item 5): arrays of the wrong shape are refused,
not flattened; compile() of a method object says what to pass."""

from __future__ import annotations

import numpy as np
import pytest
import sympy.physics.mechanics as me

import symbody as sb
from symbody.errors import CompilationError, InputError
from systems.kane_systems import four_bar


@pytest.fixture(scope="module")
def pendulum():
    zoo = sb.models.four_bar()
    return zoo, sb.compile(zoo.eom)


def test_state_of_shape_1_by_n_is_refused(pendulum):
    zoo, model = pendulum
    x0 = model.state_array(zoo.initial_state)
    p = model.constants_array(zoo.constants)
    with pytest.raises(InputError, match=r"1-D array of 4 numbers, got an array of shape \(1, 4\)"):
        sb.simulate(model, (0, 0.1), x0[None, :], p)
    with pytest.raises(InputError, match=r"constant values must be a 1-D array .* shape \(1, "):
        sb.simulate(model, (0, 0.1), x0, p[None, :])
    sol = sb.simulate(model, (0, 0.1), x0, p)            # the same numbers as 1-D arrays run
    assert sol.success


def test_compile_of_a_method_object_says_what_to_pass():
    ours, _ = four_bar(sb)
    with pytest.raises(CompilationError, match=r"symbody KanesMethod; pass method\.to_eom\(\)"):
        sb.compile(ours)
    theirs, _ = four_bar(me)
    with pytest.raises(CompilationError, match=r"SymPy's own KanesMethod, which has no to_eom\(\)"
                                               r".*symbody\.KanesMethod") as info:
        sb.compile(theirs)
    assert "pass method.to_eom() (a" not in str(info.value)
    np.testing.assert_equal(ours.to_eom().n, 1)
