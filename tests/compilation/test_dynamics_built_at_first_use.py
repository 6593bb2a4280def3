"""Issue 40 §6: under the default backend a model's constraint kernels start compiling at
once, its dynamics kernel at first use -- a linearization never evaluates the dynamics (the
bicycle's pipeline paid 1 s of C compilation for it and fell from 83x to 40-47x SymPy)."""

from __future__ import annotations

import numpy as np

import symbody as sb
from symbody.compilation import c_kernels


def test_linearizing_does_not_build_the_dynamics_and_simulating_does():
    zoo = sb.models.four_bar()
    model = sb.compile(zoo.eom)
    main, velocity = model.kernels.main, model.kernels.velocity
    assert main._future is None and main._kernel is None          # not started by compile
    background = bool(c_kernels.compiler_available())
    assert (velocity._future is not None or velocity._kernel is not None) == background
    A, B = sb.linearize(model, zoo.initial_state, zoo.constants, check_equilibrium=False)
    assert np.isfinite(A).all() and main._kernel is None and main._future is None
    sol = sb.simulate(model, (0.0, 0.1), zoo.initial_state, zoo.constants)
    assert sol.success and main._kernel is not None
    assert main.backend == ("c" if background else main.backend)
