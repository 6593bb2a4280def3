"""Hard mechanisms (issue 22): an initial configuration that cannot be assembled is named
equation by equation; the DAE mode passes a parallelogram's flat position without hanging
(it used to spend 1.37 M right-hand sides near t = 0.70 at rtol 1e-10); the augmented
Lagrangian solve is exact to round-off next to a rank loss and gives minimum-norm
multipliers where the constraints are redundant."""

from __future__ import annotations

import numpy as np
import pytest

import symbody as sb
from symbody.analysis.simulation.augmented import augmented_solve
from symbody.errors import InputError
from symbody.models.n_four_bar import n_four_bar, parallelogram_reduction


def test_a_configuration_that_cannot_be_assembled_names_the_equations():
    mdl = sb.models.get("four-bar")
    model = sb.compile(mdl.eom)
    p = dict(mdl.constants)
    p[mdl.constant("l_n")] = 5.0          # longer than la + lb + lc = 3.8: the loop cannot close
    with pytest.raises(InputError, match=r"cannot be assembled.*f_h\[0\].*-1\.2.*f_h\[1\]"):
        sb.simulate(model, (0.0, 1.0), mdl.initial_state, p)


def test_dae_mode_passes_the_flat_position_of_one_loop():
    mdl = n_four_bar(1)
    model = sb.compile(mdl.eom)
    t_eval = np.linspace(0.0, 3.0, 61)
    tr = sb.simulate(model, (0.0, 3.0), mdl.initial_state, mdl.constants, constraints="dae",
                     solver=sb.Solver(rtol=1e-10, atol=1e-10), t_eval=t_eval)
    assert tr.status == 0, tr.message
    assert "full coordinates" in tr.message
    theta, _ = parallelogram_reduction(1, tr.t)
    assert np.abs(np.angle(np.exp(1j * (tr.q[:, 0] - theta)))).max() < 1e-3
    assert np.abs(np.angle(np.exp(1j * (tr.q[:, 1] - tr.q[:, 0])))).max() < 1e-6   # parallel


def test_augmented_solve_is_exact_and_gives_minimum_norm_multipliers():
    rng = np.random.default_rng(3)
    n = 6
    W = rng.normal(size=(n, n))
    W = W @ W.T + n * np.eye(n)
    F = rng.normal(size=n)
    A = rng.normal(size=(2, n))
    A = np.vstack([A, A[0] + 2.0 * A[1]])           # a redundant third row
    x_true = rng.normal(size=n)
    c = A @ x_true                                   # consistent
    x, lam, err = augmented_solve(W, F, A, c)
    assert err < 1e-12
    # the KKT solution restricted to the two independent rows, and its multipliers
    K = np.block([[W, -A[:2].T], [A[:2], np.zeros((2, 2))]])
    ref = np.linalg.solve(K, np.concatenate([F, c[:2]]))
    assert np.abs(x - ref[:n]).max() < 1e-12 * max(1.0, np.abs(ref).max())
    # W x - F = A^T lam: lam is the least-norm vector of that (in the range of A)
    lam_min = np.linalg.lstsq(A.T, W @ x - F, rcond=None)[0]
    assert np.abs(lam - lam_min).max() < 1e-8 * max(1.0, np.abs(lam_min).max())
