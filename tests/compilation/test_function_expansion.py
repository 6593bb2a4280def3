"""SymPy functions in the equations: compiled, expanded by doit(), or refused by compile()."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sm
import sympy.physics.biomechanics as bm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.errors import CompilationError

t = me.dynamicsymbols._t
q, u = me.dynamicsymbols("q u")
m, k = sm.symbols("m k")


def one_dof(force) -> sb.EquationsOfMotion:
    """q' = u, m u' = -force."""
    return sb.EquationsOfMotion([q], [u], [q.diff(t) - u], [m * u.diff(t) + force])


@pytest.mark.parametrize("backend", ["auto", "numpy"])
def test_biomechanics_curves_are_expanded_at_compile_time(backend):
    fl = bm.TendonForceLengthDeGroote2016.with_defaults(1 + q)
    fv = bm.FiberForceVelocityDeGroote2016.with_defaults(u)
    eom = one_dof(k * fl * fv)
    model = sb.compile(eom, backend=backend)
    x, p = np.array([0.04, -0.3]), {m: 2.0, k: 30.0}
    expected = -(30.0 * float((fl * fv).doit().xreplace({q: 0.04, u: -0.3}))) / 2.0
    xdot = model.rhs(0.0, x, p)
    # the expansion is exact: only the rounding of two evaluation orders differs
    assert math.isclose(xdot[1], expected, rel_tol=1e-12)
    assert xdot[0] == -0.3


def test_undefined_function_is_refused_at_compile_time():
    f = sm.Function("stiffness")
    with pytest.raises(CompilationError, match=r"stiffness\(q\(t\)\)"):
        sb.compile(one_dof(k * f(q)))


class Opaque(sm.Function):
    """A function with no definition: doit() returns it unchanged."""

    nargs = 1


@pytest.mark.parametrize("backend", ["auto", "numpy"])
def test_function_without_expansion_is_refused_naming_it(backend):
    with pytest.raises(CompilationError, match="Opaque"):
        sb.compile(one_dof(k * Opaque(q)), backend=backend)


def test_elementary_functions_are_kept():
    from symbody.compilation.function_expansion import expand_functions
    e = sm.tanh(q) + sm.atan2(q, u) + sm.Abs(u) + sm.Piecewise((q, q > 0), (0, True))
    assert expand_functions([e])[0] is e
