"""The stiffness monitor's power iteration (``analysis/simulation/stiffness.py``): ρ(∂f/∂y)
of a linear system, and no overflow warning when a trial state overflows the model."""

import warnings
from types import SimpleNamespace

import numpy as np

from symbody.analysis.simulation.stiffness import StiffnessMonitor


def _stepper(fun, y):
    y = np.asarray(y, dtype=float)
    return SimpleNamespace(t=0.0, y=y, f=fun(0.0, y), fun=fun, step_size=1e-3)


def test_spectral_radius_of_a_linear_system():
    a = np.diag([-1.0, -40.0, -3.0])
    monitor = StiffnessMonitor("RK45")
    stepper = _stepper(lambda t, y: a @ y, [1.0, 2.0, 3.0])
    rho = None
    for _ in range(5):                      # the vector is kept from one test to the next
        rho = monitor.spectral_radius(stepper)
    assert abs(rho - 40.0) < 1e-6


def test_a_trial_state_that_overflows_drops_the_estimate_silently():
    def fun(t, y):
        return np.array([1e300, -1e300]) * np.exp(400.0 * y)   # finite at y, inf beside it

    monitor = StiffnessMonitor("DOP853")
    stepper = _stepper(fun, [0.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert monitor.spectral_radius(stepper) is None
