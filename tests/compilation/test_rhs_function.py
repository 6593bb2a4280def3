"""``NumericModel.rhs_function``: the simulation's hot path gives exactly what ``rhs`` gives.

The bound function evaluates the kernels into buffers of its own and solves each linear
system by one in-place LAPACK call; it must return the same numbers as ``rhs`` (same
kernels, same LAPACK routines: equal to round-off) on every kind of model, and hand the
unusual cases (singular systems, a mass matrix that is not positive definite, a bad state)
to ``rhs``, which raises or solves them the general way.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody as sb
from symbody.compilation import compile
from symbody.compilation.linear_algebra import in_place_solver
from symbody.errors import InputError, SymbodyError
from symbody.models import four_bar, musculoskeletal_arm, n_link_pendulum_on_cart, snakeboard

# same kernels and the same LAPACK routines on the same numbers: the results agree to a
# few ulps (the LU of a copy and the LU in place may pivot on identical values alike)
RTOL = 1e-12


def _states(model, P, x, k=5, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(k):
        y = x + 0.05 * rng.standard_normal(x.size)
        out.append(model.consistent_state(y, P) if model.M else y)
    return out


@pytest.mark.parametrize("build", [four_bar, snakeboard, musculoskeletal_arm,
                                   lambda: n_link_pendulum_on_cart(4, force=True)],
                         ids=["four-bar", "snakeboard", "arm (extra states)", "chain (input)"])
def test_bound_rhs_equals_rhs(build):
    mdl = build()
    model = compile(mdl.eom)
    P = model.constants_array(mdl.constants)
    x = model.state_array(mdl.initial_state)
    if model.M:
        x = model.consistent_state(x, P)
    f = model.rhs_function(P)
    r = np.linspace(0.1, 0.3, len(model.specifieds)) if model.specifieds else None
    for k, y in enumerate(_states(model, P, x)):
        ref = model.rhs(0.1 * k, y, P, r)
        got = f(0.1 * k, y, r)
        np.testing.assert_allclose(got, ref, rtol=RTOL, atol=RTOL * np.abs(ref).max())
        got[:] = np.nan                                # a fresh array each call
        assert np.isfinite(f(0.1 * k, y, r)).all()
    if model.specifieds:                               # a callable r(t, x) as rhs takes it
        def r_fun(t, xx):
            return np.full(len(model.specifieds), 0.2 + t)
        np.testing.assert_allclose(f(0.3, x, r_fun), model.rhs(0.3, x, P, r_fun), rtol=RTOL,
                                   atol=RTOL * np.abs(model.rhs(0.3, x, P, r_fun)).max())


def test_unusual_cases_go_to_rhs():
    # a negative definite symmetric mass matrix (the dynamic block given as -M u' - F = 0):
    # Cholesky fails in place, rhs solves it (Cholesky of -M)
    q, u = me.dynamicsymbols("q u")
    m, k = sm.symbols("m k")
    t = me.dynamicsymbols._t
    eom = sb.EquationsOfMotion([q], [u], kinematic=[q.diff(t) - u],
                               dynamic=(sm.Matrix([[-m]]), sm.Matrix([k * q])), constants=[m, k])
    model = compile(eom)
    f = model.rhs_function([2.0, 3.0])
    np.testing.assert_allclose(f(0.0, np.array([0.5, 0.1])), [0.1, 0.75], rtol=1e-15)
    # the mass vanishes: singular, and the error is rhs's
    g = model.rhs_function([0.0, 3.0])
    with pytest.raises(SymbodyError, match="singular"):
        g(0.0, np.array([0.5, 0.1]))
    with pytest.raises(InputError, match="state has 2 values"):
        f(0.0, np.array([0.5, 0.1, 0.2]))


def test_singular_dependent_speeds_raise_like_rhs():
    mdl = four_bar()
    model = compile(mdl.eom)
    P = model.constants_array(mdl.constants)
    f = model.rhs_function(P)
    # all links along N.x: the loop is stretched straight, B_dep loses rank
    x = np.zeros(len(model.states))
    with pytest.raises(SymbodyError) as bound_error:
        f(0.0, x)
    with pytest.raises(SymbodyError) as rhs_error:
        model.rhs(0.0, x, P)
    assert str(bound_error.value) == str(rhs_error.value)


def test_in_place_solver_writes_the_solution_into_b():
    rng = np.random.default_rng(1)
    A0 = rng.standard_normal((5, 5))
    A0 = A0 @ A0.T + 5 * np.eye(5)
    b0 = rng.standard_normal(5)
    for definite in (False, True):
        buf = np.empty(30)
        A, b = buf[5:].reshape(5, 5, order="F"), buf[:5]
        A[:], b[:] = A0, b0
        solve = in_place_solver(A, b, positive_definite=definite)
        assert solve() == 0
        np.testing.assert_allclose(A0 @ b, b0, rtol=1e-12)        # the solution is in b
        A[:], b[:] = A0, b0                                        # again, on new contents
        assert solve() == 0
        np.testing.assert_allclose(A0 @ b, b0, rtol=1e-12)
    with pytest.raises(ValueError):
        in_place_solver(np.zeros((3, 3)), np.zeros(3))             # C order: LAPACK would copy


def test_trajectory_derivatives_in_batches(monkeypatch):
    # the samples' x' come from rhs_many in batches sized by rhs_batch_outputs; batches of
    # 3 samples here (and a last, shorter one) give what rhs gives sample by sample
    import symbody.analysis.outputs as outputs
    mdl = four_bar()
    model = compile(mdl.eom)
    monkeypatch.setattr(outputs, "BATCH_NUMBERS", 3 * model.rhs_batch_outputs)
    P = model.constants_array(mdl.constants)
    traj = sb.simulate(model, (0.0, 1.0), mdl.initial_state, P, t_eval=np.linspace(0.0, 1.0, 11))
    ref = np.array([model.rhs(t_i, x_i, P) for t_i, x_i in zip(traj.t, traj.x)])
    # batched (numpy) and single (LAPACK) solves of the same 5 x 5 systems: round-off only
    np.testing.assert_allclose(traj.xdot, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
