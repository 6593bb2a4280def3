"""The one chooser of dependent variables (symbody.dependent_columns), used by Lagrange's
method and by the numeric model: checked against a plain column-pivoted Gram-Schmidt."""

from __future__ import annotations

import numpy as np
import pytest

from symbody.compilation.linear_algebra import pivoted_columns
from symbody.dependent_columns import pivot_columns


def gram_schmidt_pivoting(A: np.ndarray, count: int, first=(), ties: str = "first"):
    """The textbook greedy choice: forced columns, then the largest remaining norm."""
    R = np.array(A, dtype=float)
    chosen, norms = [], []

    def take(j):
        v = R[:, j]
        nv = np.linalg.norm(v)
        chosen.append(j)
        norms.append(nv)
        q = v / nv
        for _ in range(2):
            R[:, :] -= np.outer(q, q @ R)

    for j in first:
        take(j)
    while len(chosen) < count:
        n = np.linalg.norm(R, axis=0)
        n[chosen] = -1.0
        best = np.flatnonzero(n >= n.max() * (1 - 1e-12))
        take(int(best.max() if ties == "last" else best.min()))
    return chosen, norms


@pytest.mark.parametrize("seed", range(20))
def test_pivoting_matches_gram_schmidt(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 4))
    l = k + int(rng.integers(0, 4))
    A = rng.normal(size=(k, l))
    first = list(rng.choice(l, size=int(rng.integers(0, k + 1)), replace=False))
    got, norms = pivot_columns(A, k, first=first)
    want, want_norms = gram_schmidt_pivoting(A, k, first)
    assert got == want
    # norms: orthogonalized column lengths, the same up to round-off of O(1) entries
    np.testing.assert_allclose(norms, want_norms, rtol=1e-10, atol=1e-12)


def test_ties_and_rank():
    A = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])        # columns 0 and 2 equal
    assert pivot_columns(A, 2, ties="first")[0] == [0, 1]
    assert pivot_columns(A, 2, ties="last")[0] == [2, 1]
    cols, norms = pivot_columns(np.array([[1.0, 2.0], [2.0, 4.0]]), 2)   # rank 1
    assert norms[1] < 1e-12 * norms[0]
    assert pivoted_columns(np.array([[1.0, 2.0], [2.0, 4.0]]))[1] < 1e-12
    with pytest.raises(ValueError, match="ties"):
        pivot_columns(A, 2, ties="middle")


def test_count_defaults_to_the_smaller_dimension_and_can_be_smaller():
    """count = min(k, l) when not given (k rows or l columns, whichever is fewer); a smaller
    count stops the greedy choice early: the first count columns of the full order."""
    rng = np.random.default_rng(16)      # fixed: the same matrices on every run
    for k, l in ((2, 4), (4, 3), (3, 3)):
        A = rng.normal(size=(k, l))
        want, want_norms = gram_schmidt_pivoting(A, min(k, l))
        got, norms = pivot_columns(A)
        assert got == want, f"default count of a {k} x {l} matrix: columns {got} != {want}"
        # orthogonalized column lengths of O(1) entries: equal up to round-off
        np.testing.assert_allclose(norms, want_norms, rtol=1e-10, atol=1e-12)
        got, norms = pivot_columns(A, 1)
        assert got == want[:1] and len(norms) == 1, f"count = 1 of a {k} x {l} matrix: {got}"
