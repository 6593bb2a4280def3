"""IFToMM benchmark A02, the N-four-bar (issue 22): through the flat positions where the
constraint Jacobian loses rank by N, on the parallelogram branch, against the exact
one-degree-of-freedom reduction (symbody.models.n_four_bar.parallelogram_reduction: all
rockers at one angle θ, I θ'' = -g m L ((N + 1)/2 + N) cos θ, integrated by scipy at 1e-12).

Benchmark data (lim.ii.udc.es/mbsbenchmark/dist/A02/A02_specification.xml): N = 40 loops,
links 1 m, 1 kg, g = 9.81, B0 starts along +x at 1 m/s, 20 s, output B0 at 400 steps,
precision 1e-1 (low) and 1e-3 m (high).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import symbody as sb
from symbody.compilation import make_function
from symbody.models.n_four_bar import n_four_bar, parallelogram_reduction

HIGH_PRECISION = 1e-3      # m, the benchmark's high precision on B0


def _check(mdl, model, tr, n, b0_tol, energy_tol):
    assert tr.status == 0, tr.message
    assert "full coordinates" in tr.message           # the flat positions were passed
    theta, _ = parallelogram_reduction(n, tr.t)
    B0 = np.c_[np.cos(tr.q[:, 0]), np.sin(tr.q[:, 0])]
    exact = np.c_[np.cos(theta), np.sin(theta)]
    assert np.abs(B0 - exact).max() < b0_tol
    rockers = tr.q[:, :n + 1]
    assert np.abs(np.angle(np.exp(1j * (rockers - rockers[:, :1])))).max() < 1e-6   # parallel
    couplers = tr.q[:, n + 1:]
    assert np.abs(np.angle(np.exp(1j * couplers))).max() < 1e-6                     # horizontal
    energy = make_function([list(model.coordinates), list(model.speeds), list(model.constants)],
                           mdl.energy)
    E = energy(tr.q, tr.u, model.constants_array(mdl.constants))
    assert np.abs(E - E[0]).max() < energy_tol * abs(E[0])
    assert tr.max_holonomic_residual < 1e-9


def test_two_loops_pass_their_flat_positions_on_the_parallelogram_branch():
    mdl = n_four_bar(2)
    model = sb.compile(mdl.eom)
    tr = sb.simulate(model, (0.0, 20.0), mdl.initial_state, mdl.constants,
                     t_eval=np.linspace(0.0, 20.0, 401), solver=sb.Solver(rtol=1e-8, atol=1e-10))
    _check(mdl, model, tr, 2, HIGH_PRECISION, 1e-6)
    # (the full rotations pass θ = 0 and π: the rockers turn by more than 2 pi in 20 s)
    assert abs(tr.q[-1, 0] - tr.q[0, 0]) > 2 * math.pi


@pytest.mark.slow
def test_a02_forty_loops_high_precision():
    """A02 as specified: N = 40, 20 s, 400 output steps, B0 within the high precision."""
    mdl = sb.models.get("n-four-bar", n=40)
    model = sb.compile(mdl.eom)
    t_eval = np.linspace(0.0, 20.0, 401)           # every 0.05 s
    tr = sb.simulate(model, (0.0, 20.0), mdl.initial_state, mdl.constants, t_eval=t_eval,
                     solver=sb.Solver(rtol=1e-8, atol=1e-10))
    _check(mdl, model, tr, 40, HIGH_PRECISION, 1e-4)
    # loose tolerances give a loose answer, never one on another branch
    loose = sb.simulate(model, (0.0, 20.0), mdl.initial_state, mdl.constants, t_eval=t_eval,
                        solver=sb.Solver(rtol=1e-6, atol=1e-6))
    _check(mdl, model, loose, 40, 1e-1, 1e-2)


@pytest.mark.parametrize("n", [1, 3, 5])
@pytest.mark.parametrize("constraints", ["auto", "dae", "baumgarte"])
def test_loose_tolerances_stay_on_the_branch(n, constraints):
    """rtol = atol = 1e-3 over 20 s: a loose answer, never another branch and never a crash
    (n = 3 once stopped with Brent's method failing on a determinant next to the rank loss)."""
    mdl = n_four_bar(n)
    model = sb.compile(mdl.eom)
    tr = sb.simulate(model, (0.0, 20.0), mdl.initial_state, mdl.constants,
                     solver=sb.Solver(rtol=1e-3, atol=1e-3),
                     t_eval=np.linspace(0.0, 20.0, 201), constraints=constraints)
    assert tr.status == 0, tr.message
    rockers = tr.q[:, :n + 1]
    assert np.abs(np.angle(np.exp(1j * (rockers - rockers[:, :1])))).max() < 1e-4
    assert np.abs(np.angle(np.exp(1j * tr.q[:, n + 1:]))).max() < 1e-4


def test_eight_loops_rhs_by_the_null_space_equals_the_lu_of_the_augmented_system():
    """16 velocity constraints (REDUCED_KKT_MIN): u_ind' by the null space of B_a, in the
    bound right-hand side (default dependent set) and in another dependent set, against
    numpy's LU of the whole augmented system from the same blocks."""
    from symbody.compilation.linear_algebra import REDUCED_KKT_MIN
    from symbody.compilation.numeric_model import Partition

    mdl = n_four_bar(8)
    model = sb.compile(mdl.eom)
    assert model.m >= REDUCED_KKT_MIN
    P = model.constants_array(mdl.constants)
    rng = np.random.default_rng(8)
    # any configuration (the blocks and the solves need no assembly; off the parallelogram
    # branch the acceleration constraints' right-hand side is not zero)
    x = np.r_[0.3 + 0.2 * rng.normal(size=model.N), rng.normal(size=model.p)]
    q = x[:model.N]
    u = model.full_speeds(q, x[model.N:], P)
    blk = model.augmented_blocks(0.0, q, u, P)
    assert np.abs(blk.acc_rest).max() > 0.1
    o, m = model.o, model.m
    S = np.block([[blk.mass, -blk.acc_matrix.T], [blk.acc_matrix, np.zeros((m, m))]])
    exact = np.linalg.solve(S, np.r_[blk.forcing, blk.acc_rest])[:o]
    f = model.rhs_function(P)
    ind = list(model.default_partition.independent_speeds)
    np.testing.assert_allclose(f(0.0, x)[model.N:], exact[ind], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(model.rhs(0.0, x, P)[model.N:], exact[ind], rtol=1e-10, atol=1e-10)
    # another dependent set: the first rocker's speed dependent, the last one's independent
    dep = tuple(sorted(set(model.default_partition.dependent_speeds) - {1} | {0}))
    other = Partition(model.default_partition.dependent_coordinates, dep, model.N, o)
    x_other = np.r_[q, u[list(other.independent_speeds)]]
    np.testing.assert_allclose(model.rhs(0.0, x_other, P, partition=other)[model.N:],
                               exact[list(other.independent_speeds)], rtol=1e-10, atol=1e-10)
