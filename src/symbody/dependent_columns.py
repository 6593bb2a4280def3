"""The one chooser of dependent variables: the best-conditioned columns of a constraint Jacobian.

Given a constraint Jacobian A (k x l: k constraints, l coordinates or speeds), the
dependent variables are k of its columns that are well conditioned together.  They are
chosen greedily, as a column-pivoted QR factorization does (LAPACK ``dgeqp3``): each
step takes the column with the largest norm orthogonal to the columns already taken,
which keeps |det A[:, chosen]| large.

Both layers use it, so it sits below both (like :mod:`symbody.symengine_bridge`):

- formulation: Lagrange's method picks the dependent coordinates and speeds when the
  user names none (``LagrangesMethod.to_eom``), at a random configuration;
- compilation: a ``NumericModel`` chooses and switches the dependent set at a state
  (``choose_partition``, the simulation's dependent-set monitor), through
  :func:`symbody.compilation.linear_algebra.pivoted_columns`.

numpy and scipy are imported on first use, so that ``import symbody`` stays light.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["pivot_columns"]


def pivot_columns(A: Any, count: int | None = None, *, first: Sequence[int] = (),
                  ties: str = "first") -> tuple[list[int], list[float]]:
    """Greedy column pivoting of A (k x l): ``(columns, norms)``.

    ``columns``: the first ``count`` (default min(k, l)) columns in the order taken, the
    columns ``first`` first (in their order), then each time the column with the largest
    norm orthogonal to those taken (column-pivoted QR, LAPACK dgeqp3); ``norms``: that
    norm for each, |R_ii| of the factorization (about 0 once the rank is exhausted).
    ``ties="last"``: of columns with equal norms the later one is taken (so that, all
    else equal, the trailing variables become the dependent ones); ``"first"``: the
    earlier one.  Never raises for a rank-deficient A: the callers judge the norms.
    """
    import numpy as np
    from scipy.linalg import lapack

    if ties not in ("first", "last"):
        raise ValueError(f"ties must be 'first' or 'last', got {ties!r}")
    R = np.array(A, dtype=float)
    k, l = R.shape
    count = min(k, l) if count is None else int(count)
    first = [int(j) for j in first]
    columns: list[int] = []
    norms: list[float] = []
    if first:
        Q, R_first = np.linalg.qr(R[:, first])
        columns += first
        norms += [float(abs(v)) for v in np.diag(R_first)]
        for _ in range(2):      # the rest orthogonal to the columns taken (twice, for stability)
            R = R - Q @ (Q.T @ R)
    taken = set(first)
    rest = [j for j in range(l) if j not in taken]
    if ties == "last":
        rest.reverse()
    need = min(count - len(columns), len(rest), k)
    if need > 0:
        qr, jpvt, _, _, info = lapack.dgeqp3(np.asfortranarray(R[:, rest]))
        if info != 0:
            raise ValueError(f"dgeqp3 failed (info = {info}) on a {k} x {l} matrix")
        columns += [rest[int(j) - 1] for j in jpvt[:need]]
        norms += [float(abs(v)) for v in np.diag(qr)[:need]]
    return columns[:count], norms[:count]
