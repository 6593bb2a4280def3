"""``linear_coefficients``: the split exprs = A v + b behind every "must be linear" check.

Oracle: SymPy's own ``Matrix.jacobian`` and substitution v = 0 on expressions whose linear
form is known by construction.  Written to kill the mutants of the linearity check
(docs/testing.md): a coefficient on the wrong row or column, a lost constant term, or a
nonlinear term let through fails here.
"""

from __future__ import annotations

import pytest
import sympy as sm
import sympy.physics.mechanics as me

from symbody.errors import NonlinearityError
from symbody.formulation._linear_equations import linear_coefficients

u1, u2, u3, q = me.dynamicsymbols("u1 u2 u3 q")
a, b = sm.symbols("a b")


def test_coefficients_and_rest_match_the_jacobian():
    exprs = sm.Matrix([2 * u1 + sm.sin(q) * u3 + a * q**2,
                       u2 - 3,
                       sm.cos(q) + b,
                       sm.Integer(5),
                       a * (u1 - u2) * sm.exp(q) + u3 / b])
    v = [u1, u2, u3]
    A, rest = linear_coefficients(exprs, v, "velocity_constraints", "u")
    assert A.shape == (5, 3) and rest.shape == (5, 1)
    assert sm.simplify(A - exprs.jacobian(v)) == sm.zeros(5, 3), "coefficient matrix != the Jacobian"
    assert sm.simplify(rest - exprs.subs({u1: 0, u2: 0, u3: 0})) == sm.zeros(5, 1), \
        "the rest b != exprs at v = 0"
    assert sm.simplify(A * sm.Matrix(v) + rest - exprs) == sm.zeros(5, 1)
    # a plain list works too, and no variables leaves everything in the rest
    A2, rest2 = linear_coefficients(list(exprs), v, "eqs", "u")
    assert A2 == A and rest2 == rest
    A0, rest0 = linear_coefficients(exprs, [], "eqs", "u")
    assert A0.shape == (5, 0) and rest0 == exprs


@pytest.mark.parametrize("expr, culprit", [(u2**2 - u1, "u2"), (u1 * u2 + u3, None),
                                           (sm.sin(u3) + u1, "u3"), (u1 / (1 + u2**2), None)])
def test_nonlinear_rows_are_refused_naming_row_and_variable(expr, culprit):
    exprs = sm.Matrix([u1 + u2, expr])
    with pytest.raises(NonlinearityError) as info:
        linear_coefficients(exprs, [u1, u2, u3], "velocity_constraints", "u")
    msg = str(info.value)
    assert msg.startswith("velocity_constraints[1] = "), f"the row is not named: {msg}"
    assert "is nonlinear in u " in msg and "must be linear in u" in msg
    if culprit:
        assert f"coefficient depends on {culprit}" in msg, f"the culprit {culprit} is not named: {msg}"
