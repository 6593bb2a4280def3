"""The small dense solves of the numeric path against numpy and brute force.

Oracles: ``numpy.linalg.det`` / ``solve`` (LAPACK through another interface), and for the
pivoted column choice the brute-force maximum of |det A[:, columns]| over all column sets.
Written to kill the mutants of ``compilation/linear_algebra.py`` (docs/testing.md).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.linalg import lapack

from symbody.compilation.linear_algebra import (
    determinant,
    max_norm,
    pivoted_columns,
    pivoted_qr,
    rank_measure,
    reduced_kkt_solve,
    solve,
    solve_symmetric,
)

SEED = 3016        # fixed: the same matrices on every run

#: LU / Cholesky of well-conditioned (cond < 1e3) matrices up to 6 x 6: round-off ~1e-15 times
#: the condition number; an error in a formula changes results by O(1)
RTOL = 1e-10


def _spd(rng, k):
    A = rng.normal(size=(k, k))
    return A @ A.T + k * np.eye(k)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_determinant_equals_numpy(k):
    rng = np.random.default_rng(SEED + k)
    for _ in range(5):
        A = rng.normal(size=(k, k))
        assert determinant(A) == pytest.approx(np.linalg.det(A), rel=RTOL), f"det of a {k} x {k} matrix wrong"
    # a permutation needs an odd number of row swaps in LU: the sign must follow
    P = np.eye(k)[::-1] if k > 1 else np.eye(1)
    assert determinant(P) == pytest.approx(np.linalg.det(P), rel=RTOL), f"sign of det of a {k} x {k} permutation"
    assert determinant(np.zeros((k, k))) == 0.0


def test_determinant_of_an_empty_and_a_singular_matrix():
    assert determinant(np.empty((0, 0))) == 1.0, "det of a 0 x 0 matrix is 1 (no constraint)"
    A = np.arange(16.0).reshape(4, 4)          # rank 2
    assert determinant(A) == 0.0 or abs(determinant(A)) < 1e-10


@pytest.mark.parametrize("k", [1, 2, 4])
def test_solve_equals_numpy_and_reports_singularity(k):
    rng = np.random.default_rng(SEED + 10 + k)
    A = rng.normal(size=(k, k)) + 3 * np.eye(k)
    b = rng.normal(size=k)
    A0, b0 = A.copy(), b.copy()
    x, info = solve(A.copy(), b)
    assert info == 0 and x == pytest.approx(np.linalg.solve(A0, b0), rel=RTOL)
    assert (b == b0).all(), "solve overwrote b without overwrite_b"
    x, info = solve(A, b, overwrite_a=False)
    assert (A == A0).all(), "solve overwrote A with overwrite_a=False"
    Af = np.asfortranarray(A0)
    bb = b0.copy()
    x, info = solve(Af, bb, overwrite_b=True)
    assert x == pytest.approx(np.linalg.solve(A0, b0), rel=RTOL)
    assert bb == pytest.approx(x, rel=0), "overwrite_b: the solution is not written into b"
    assert solve(np.zeros((k, k)), b0)[1] > 0, "a singular matrix is not reported (info > 0)"


@pytest.mark.parametrize("shape", [(1, 3), (3, 5), (5, 5), (4, 9), (6, 3), (2, 1)])
def test_pivoted_qr_is_pivoted_columns_to_the_last_bit(shape):
    """The dependent-set monitor takes the best columns and the rank measure from pivoted_qr:
    they must be exactly pivoted_columns' (wide, tall, rank-deficient, nearly so, strided,
    zero, empty and non-finite matrices)."""
    rng = np.random.default_rng(SEED + 7)
    for _ in range(20):
        A = rng.normal(size=shape) * 10.0 ** rng.integers(-4, 4)
        low = A.copy()
        low[-1] = 2.0 * low[0]
        near = A.copy()
        near[-1] = low[-1] + 1e-9 * rng.normal(size=shape[1])
        bad = A.copy()
        bad[0, -1] = np.nan
        inf = A.copy()
        inf[-1, 0] = np.inf
        for M in (A, A.T.copy().T, np.asfortranarray(A), low, near, bad, inf, np.zeros(shape)):
            assert pivoted_qr(M) == pivoted_columns(M)
    assert pivoted_qr(np.empty((0, 4))) == ((), 1.0)


def test_determinant_is_the_lu_product_to_the_last_bit():
    """Beyond 3 x 3 det A is the product of LU's diagonal, left to right, signed by the row
    swaps: exactly numpy's prod over the diagonal (sign changes of the dependent determinant
    are watched, and its ratio to the best set's compared with a threshold)."""
    rng = np.random.default_rng(SEED + 8)
    for k in (4, 5, 9, 17, 40):
        for _ in range(10):
            A = rng.normal(size=(k, k))
            lu, piv, _ = lapack.dgetrf(A)[:3]
            d = float(np.prod(np.diag(lu)))
            expected = -d if np.count_nonzero(piv != np.arange(k)) % 2 else d
            assert determinant(A) == expected
    assert determinant(np.zeros((5, 5))) == 0.0


def test_max_norm_is_numpys():
    rng = np.random.default_rng(SEED + 9)
    for size in (1, 3, 16, 17, 40):
        a = rng.normal(size=size)
        assert max_norm(a) == float(np.abs(a).max())
        assert max_norm(-a[::-1]) == float(np.abs(a).max())
        b = a.copy()
        b[-1] = np.nan
        assert np.isnan(max_norm(b)), "a NaN entry must show (Newton stops on it)"
        b[-1] = -np.inf
        assert max_norm(b) == np.inf
        if size > 1:
            b[0] = np.inf
            assert max_norm(b) == np.inf
    assert max_norm(np.empty(0)) == 0.0


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_solve_symmetric_for_definite_matrices_of_either_sign(sign):
    rng = np.random.default_rng(SEED + 20)
    A = sign * _spd(rng, 4)
    b = rng.normal(size=4)
    A0, b0 = A.copy(), b.copy()
    x, info = solve_symmetric(A, b)
    assert info == 0 and x == pytest.approx(np.linalg.solve(A0, b0), rel=RTOL), \
        f"solve_symmetric of a {'negative' if sign < 0 else 'positive'} definite matrix wrong"
    assert (A == A0).all() and (b == b0).all(), "solve_symmetric modified its inputs without overwrite"
    # C-ordered input is read as its transpose: the same symmetric matrix
    x, info = solve_symmetric(np.ascontiguousarray(A0), b0)
    assert x == pytest.approx(np.linalg.solve(A0, b0), rel=RTOL)
    # in place on a Fortran-ordered matrix
    Af, bb = np.asfortranarray(A0.copy()), b0.copy()
    x, info = solve_symmetric(Af, bb, overwrite=True)
    assert info == 0 and x == pytest.approx(np.linalg.solve(A0, b0), rel=RTOL)


def test_solve_symmetric_solves_in_place_whenever_the_matrix_is_definite():
    """The in-place Cholesky path (what the right-hand side uses) must not depend on the size
    of A[0, 0]: a positive definite matrix with A[0, 0] = 0.5 is solved with info == 0."""
    A = np.array([[0.5, 0.1], [0.1, 2.0]])
    b = np.array([1.0, -1.0])
    for sign in (1.0, -1.0):
        Af, bb = np.asfortranarray(sign * A), b.copy()
        x, info = solve_symmetric(Af, bb, overwrite=True)
        assert info == 0, "a definite matrix was not solved by Cholesky in place"
        assert x == pytest.approx(np.linalg.solve(sign * A, b), rel=RTOL)


def test_solve_symmetric_falls_back_to_lu_for_an_indefinite_matrix():
    A = np.array([[2.0, 1.0, 0.0], [1.0, -3.0, 1.0], [0.0, 1.0, 1.0]])     # indefinite
    b = np.array([1.0, -2.0, 0.5])
    x, info = solve_symmetric(A, b)
    assert info == 0 and x == pytest.approx(np.linalg.solve(A, b), rel=RTOL), \
        "indefinite symmetric matrix: the LU fallback is not taken"
    A2 = -A                                     # A[0, 0] < 0 and still indefinite
    x, info = solve_symmetric(A2, b)
    assert info == 0 and x == pytest.approx(np.linalg.solve(A2, b), rel=RTOL)
    # overwrite: no fallback, the failure is reported for the caller to re-evaluate
    _, info = solve_symmetric(np.asfortranarray(A.copy()), b.copy(), overwrite=True)
    assert info > 0, "overwrite=True must report an indefinite matrix instead of solving"
    assert solve_symmetric(np.zeros((2, 2)), np.ones(2))[1] > 0


def _best_columns(A):
    k, n = A.shape
    return max(itertools.combinations(range(n), k), key=lambda c: abs(np.linalg.det(A[:, c])))


@pytest.mark.parametrize("shape", [(1, 3), (2, 4), (3, 5), (2, 2)])
def test_pivoted_columns_pick_a_well_conditioned_set(shape):
    rng = np.random.default_rng(SEED + 30 + shape[0] * 10 + shape[1])
    for _ in range(4):
        A = rng.normal(size=shape)
        cols, rank = pivoted_columns(A)
        assert cols == tuple(sorted(cols)) and len(set(cols)) == shape[0], "pivot columns not ascending/distinct"
        best = abs(np.linalg.det(A[:, _best_columns(A)]))
        # greedy pivoting is within a modest factor of the best choice (exact for k = 1)
        assert abs(np.linalg.det(A[:, cols])) >= best / (4 if shape[0] > 1 else 1), \
            "pivoted_columns chose a poorly conditioned set"
        r = np.abs(np.diag(np.linalg.qr(A[:, list(_greedy_order(A))])[1]))
        assert rank == pytest.approx(r[shape[0] - 1] / r[0], rel=1e-8), "rank measure |R_kk| / |R_11| wrong"
        assert 0.0 < rank <= 1.0


def _greedy_order(A):
    """Column order of QR with column pivoting (the largest remaining column norm first)."""
    A = A.astype(float).copy()
    k, n = A.shape
    order, rest = [], list(range(n))
    for _ in range(k):
        j = max(rest, key=lambda c: np.linalg.norm(A[:, c]))
        order.append(j)
        rest.remove(j)
        v = A[:, j] / np.linalg.norm(A[:, j])
        A = A - np.outer(v, v @ A)
    return order


def test_pivoted_columns_of_rank_deficient_empty_and_nonfinite_matrices():
    cols, rank = pivoted_columns(np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]))
    assert rank < 1e-12, "rank loss not reported"
    assert pivoted_columns(np.empty((0, 3))) == ((), 1.0)
    A = np.array([[1.0, np.nan, 0.0]])
    cols, rank = pivoted_columns(A)
    assert cols == (2,) and rank == 0.0, "a non-finite matrix gives the last columns and rank 0"
    cols, rank = pivoted_columns(np.zeros((1, 3)))
    assert rank == 0.0
    assert pivoted_columns(np.array([[0.0, 0.0, 5.0]]))[0] == (2,)


@pytest.mark.parametrize("shape", [(1, 3), (3, 5), (5, 5), (4, 9), (6, 3)])
def test_rank_measure_is_pivoted_columns_measure_to_the_last_bit(shape):
    """The simulation's rank watch uses rank_measure; switching decisions compare it with
    thresholds, so it must be exactly pivoted_columns' value (also for wide, tall,
    rank-deficient, empty and non-finite matrices)."""
    rng = np.random.default_rng(SEED)
    A = rng.normal(size=shape)
    low = A.copy()
    low[-1] = 2.0 * low[0]                       # rank lost (when there are two rows)
    near = A.copy()
    near[-1] = low[-1] + 1e-9 * rng.normal(size=shape[1])
    for M in (A, A.T.copy().T, np.asfortranarray(A), low, near):
        assert rank_measure(M) == pivoted_columns(M)[1]
    assert rank_measure(np.empty((0, 4))) == 1.0
    bad = A.copy()
    bad[0, 0] = np.nan
    assert rank_measure(bad) == 0.0
    assert rank_measure(np.zeros(shape)) == 0.0


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("o, m", [(5, 3), (20, 18), (9, 8)])
def test_reduced_kkt_solve_equals_the_lu_of_the_whole_system(o, m, sign):
    """u'[ind] by the null space of B_a against numpy's solve of [[M, sign B_aᵀ], [B_a, 0]],
    for either sign of the multiplier block and any split with a nonsingular B_dep."""
    rng = np.random.default_rng(SEED + o)
    M = _spd(rng, o)
    Ba = rng.normal(size=(m, o))
    K = o + m
    S = np.zeros((K, K), order="F")
    S[:o, :o], S[o:, :o], S[:o, o:] = M, Ba, sign * Ba.T
    s = rng.normal(size=K)
    exact = np.linalg.solve(S, s)
    S0, s0 = S.copy(), s.copy()
    for dep in (np.arange(o - m, o), np.sort(rng.permutation(o)[:m])):
        ind = np.setdiff1d(np.arange(o), dep)
        a = reduced_kkt_solve(S, s, o, ind, dep)
        np.testing.assert_allclose(a, exact[ind], rtol=RTOL, atol=RTOL * np.abs(exact).max())
        assert np.array_equal(S, S0) and np.array_equal(s, s0)        # inputs untouched


def test_reduced_kkt_solve_returns_none_for_singular_dependent_columns():
    rng = np.random.default_rng(SEED)
    o, m = 4, 2
    M = _spd(rng, o)
    Ba = rng.normal(size=(m, o))
    Ba[:, 3] = Ba[:, 2]                     # B_a[:, [2, 3]] singular, B_a itself full rank
    S = np.zeros((o + m, o + m), order="F")
    S[:o, :o], S[o:, :o], S[:o, o:] = M, Ba, -Ba.T
    s = rng.normal(size=o + m)
    assert reduced_kkt_solve(S, s, o, np.array([0, 1]), np.array([2, 3])) is None
    a = reduced_kkt_solve(S, s, o, np.array([1, 3]), np.array([0, 2]))
    np.testing.assert_allclose(a, np.linalg.solve(S, s)[[1, 3]], rtol=RTOL)
