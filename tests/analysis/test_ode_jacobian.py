"""The exact ODE Jacobian for implicit integrators (issue 22, item 3): ∂f/∂x from the
compiled derivatives of the equations against central differences of the compiled rhs,
and Radau/BDF runs with it against an explicit run at a tight tolerance."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import symbody as sb
from symbody.analysis.simulation.jacobian import ode_jacobian
from symbody.errors import InputError


def _central(model, t, x, P, r):
    J = np.empty((x.size, x.size))
    for k in range(x.size):
        h = 1e-6 * max(1.0, abs(x[k]))
        xp, xm = x.copy(), x.copy()
        xp[k] += h
        xm[k] -= h
        J[:, k] = (model.rhs(t, xp, P, r) - model.rhs(t, xm, P, r)) / (2 * h)
    return J


@pytest.mark.parametrize("name", ["four-bar", "flyball-governor", "rolling-disc",
                                  "n-link-pendulum-on-cart"])
def test_exact_jacobian_equals_central_differences(name):
    mdl = sb.models.get(name)
    model = sb.compile(mdl.eom)
    P = model.constants_array(mdl.constants)
    rng = np.random.default_rng(7)
    r = np.zeros(len(model.specifieds)) if model.specifieds else None
    for _ in range(3):
        x = model.state_array(mdl.initial_state) + 0.1 * rng.normal(size=len(model.states))
        J = ode_jacobian(model, 0.3, x, P, r)
        assert J.shape == (x.size, x.size)
        # central differences with h = 1e-6: truncation and round-off near 1e-9 relative
        assert np.abs(J - _central(model, 0.3, x, P, r)).max() <= 1e-7 * max(1.0, np.abs(J).max())


@pytest.mark.parametrize("method", ["Radau", "BDF"])
def test_implicit_run_with_the_exact_jacobian(method):
    mdl = sb.models.get("flyball-governor")
    model = sb.compile(mdl.eom)
    t_eval = np.linspace(0.0, 2.0, 21)
    ref = sb.simulate(model, (0.0, 2.0), mdl.initial_state, mdl.constants, t_eval=t_eval,
                      solver=sb.Solver(method="DOP853", rtol=1e-11, atol=1e-12))
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # no overflow warnings from finite differences
        exact = sb.simulate(model, (0.0, 2.0), mdl.initial_state, mdl.constants, t_eval=t_eval,
                            solver=sb.Solver(method=method, rtol=1e-8, atol=1e-10, jacobian="exact"))
    fd = sb.simulate(model, (0.0, 2.0), mdl.initial_state, mdl.constants, t_eval=t_eval,
                     solver=sb.Solver(method=method, rtol=1e-8, atol=1e-10, jacobian="finite-differences"))
    assert exact.status == 0 and fd.status == 0
    assert np.abs(exact.x - ref.x).max() < 1e-5
    assert exact.nfev < fd.nfev             # no 2 (N + p) evaluations per Jacobian


def test_jacobian_option_is_checked():
    mdl = sb.models.get("four-bar")
    model = sb.compile(mdl.eom)
    with pytest.raises(InputError, match="jacobian="):
        sb.simulate(model, (0.0, 1.0), mdl.initial_state, mdl.constants,
                    solver=sb.Solver(jacobian="numeric"))


def test_reduced_dynamic_block_with_constraints():
    """The snakeboard seed (a hand-derived reduced block M_d u_ind' + g_d = 0, two nonholonomic
    constraints): ∂u_ind'/∂x = -M_d⁻¹ ∂(M_d u_ind' + g_d)/∂x through u_dep(q, u_ind)."""
    from systems.seed_eoms import snakeboard

    model = sb.compile(snakeboard()["eom"])
    assert model.m == 2 and not model.has_multipliers
    P = model.constants_array({"l": 0.5, "I": 0.3, "m": 2.0})
    rng = np.random.default_rng(11)
    for _ in range(2):
        x = 0.4 * rng.normal(size=model.N + model.p)
        J = ode_jacobian(model, 1.0, x, P)
        assert np.abs(J - _central(model, 1.0, x, P, None)).max() <= 1e-7 * max(1.0, np.abs(J).max())


def test_radau_on_a_reduced_block_with_constraints_uses_the_exact_jacobian():
    """The snakeboard by Radau: the exact Jacobian is handed to the solver (no finite
    differences: fewer rhs calls) and the run agrees with a tight explicit one."""
    from symbody.analysis.inputs import specified_inputs
    from symbody.analysis.simulation.jacobian import jacobian_function
    from systems.seed_eoms import snakeboard

    sys_ = snakeboard()
    model = sb.compile(sys_["eom"])
    p = {"l": 0.5, "I": 0.3, "m": 2.0}
    P = model.constants_array(p)
    assert jacobian_function(model, P, specified_inputs(model, None, P)) is not None
    x0 = 0.4 * np.random.default_rng(1).normal(size=model.N + model.p)   # away from q = 0,
    # where the velocity constraints are singular in u_dep
    t_eval = np.linspace(0.0, 2.0, 11)
    ref = sb.simulate(model, (0.0, 2.0), x0, p, t_eval=t_eval,
                      solver=sb.Solver(method="DOP853", rtol=1e-11, atol=1e-12))
    exact = sb.simulate(model, (0.0, 2.0), x0, p, t_eval=t_eval,
                        solver=sb.Solver(method="Radau", rtol=1e-8, atol=1e-10, jacobian="exact"))
    fd = sb.simulate(model, (0.0, 2.0), x0, p, t_eval=t_eval,
                     solver=sb.Solver(method="Radau", rtol=1e-8, atol=1e-10,
                                      jacobian="finite-differences"))
    assert exact.status == 0 and fd.status == 0
    assert np.abs(exact.x - ref.x).max() < 1e-5
    assert exact.nfev < fd.nfev


def test_linearize_is_the_ode_jacobian_on_the_constraint_manifold():
    """The two bases of the one chain rule: linearize's A = [rows q_ind, u_ind of ∂f/∂x] T with
    T = diag(C_0, I_p), C_0 = [I; -F_dep⁻¹ F_ind] the tangent of f_h = 0 (here from central
    differences of f_h)."""
    mdl = sb.models.get("four-bar")
    model = sb.compile(mdl.eom)
    P = model.constants_array(mdl.constants)
    x = model.state_array(mdl.initial_state)
    x[model.N:] += 0.7                            # moving, not an equilibrium
    A, _, point = sb.linearize(model, x, mdl.constants, return_point=True)
    N, n, p = model.N, model.n, model.p
    x = np.concatenate([point["q"], point["u"][:p]])
    F = np.column_stack([(model.holonomic_residual(x[:N] + h, P) - model.holonomic_residual(x[:N] - h, P))
                         / 2e-7 for h in 1e-7 * np.eye(N)])
    T = np.zeros((N + p, n + p))
    T[:n, :n] = np.eye(n)
    T[n:N, :n] = -np.linalg.solve(F[:, n:], F[:, :n])
    T[N:, n:] = np.eye(p)
    J = ode_jacobian(model, 0.0, x, P)
    rows = np.r_[0:n, N:N + p]
    assert A.shape == (n + p, n + p)
    assert np.abs(A - (J @ T)[rows]).max() <= 1e-7 * max(1.0, np.abs(A).max())
