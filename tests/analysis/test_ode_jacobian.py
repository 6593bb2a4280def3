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
                            solver=sb.Solver(method=method, rtol=1e-8, atol=1e-10))
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
