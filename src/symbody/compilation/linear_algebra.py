"""Small dense linear algebra on the numeric path, through LAPACK (the one place for it).

Everything here works on small matrices (a mass matrix, a constraint Jacobian) at every
evaluation, so the calls go straight to LAPACK and report singularity by a flag instead
of raising, leaving the error message to the caller who knows what the matrix means.

- :func:`solve`:            A x = b by LU (dgesv).
- :func:`solve_symmetric`:  A x = b for symmetric A, Cholesky of A or -A when definite (dposv).
- :func:`in_place_solver`:  a bound solve of A x = b on preallocated buffers (the hot path).
- :func:`max_norm`:         max |a_i| of a short vector (the projection's convergence tests).
- :func:`determinant`:      det A, closed forms up to 3 x 3.
- :func:`pivoted_columns`:  the best conditioned k columns of a k x l matrix (pivoted QR,
                            dgeqp3) and a rank measure, by :mod:`symbody.dependent_columns`
                            (the one chooser of dependent coordinates and speeds).
- :func:`pivoted_qr`:       both from one dgeqp3 call, without the chooser's copies (the same
                            numbers as :func:`pivoted_columns`, for the simulation's hot path).
- :func:`rank_measure`:     that rank measure alone (the same dgeqp3 call, no column lists).
- :func:`reduced_kkt_solve`: the independent accelerations of a large augmented system
                            [[M, ∓B_aᵀ], [B_a, 0]] by the null space of B_a (one LU of
                            B_a's dependent columns instead of one of the whole system).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.linalg import lapack

from ..dependent_columns import pivot_columns

_getrf, _geqp3 = lapack.dgetrf, lapack.dgeqp3

__all__ = ["solve", "solve_symmetric", "in_place_solver", "max_norm", "determinant", "pivoted_columns",
           "pivoted_qr", "rank_measure", "reduced_kkt_solve", "REDUCED_KKT_MIN"]

#: augmented systems with at least this many constraint rows are solved for the independent
#: accelerations by :func:`reduced_kkt_solve` (below it one LU of the whole system is cheaper
#: than the extra calls)
REDUCED_KKT_MIN = 16


def solve(A: np.ndarray, b: np.ndarray, overwrite_a: bool = True,
          overwrite_b: bool = False) -> tuple[np.ndarray, int]:
    """Solve A x = b (A (k, k), b (k,) or (k, r)) by LU; returns ``(x, info)``, info > 0: singular.

    ``A`` is overwritten unless ``overwrite_a`` is False (pass a copy or a temporary); with
    ``overwrite_b`` the solution is written into ``b`` (no copy when A is Fortran-ordered and
    b contiguous: the hot path of the right-hand side works on the kernels' output buffers).
    """
    _, _, x, info = lapack.dgesv(A, b, overwrite_a=int(overwrite_a), overwrite_b=int(overwrite_b))
    return x, info


def solve_symmetric(A: np.ndarray, b: np.ndarray, overwrite: bool = False) -> tuple[np.ndarray, int]:
    """Solve A x = b for symmetric A: Cholesky of A (or of -A) when definite, else LU.

    Returns ``(x, info)``.  ``A`` and ``b`` are not modified, unless ``overwrite`` (then A
    must be Fortran-ordered, and when info != 0 both are destroyed: evaluate them again).
    """
    At = A if A.flags.f_contiguous else A.T     # the same symmetric matrix, Fortran-ordered
    if At[0, 0] > 0:
        _, x, info = lapack.dposv(At, b, lower=1, overwrite_a=int(overwrite), overwrite_b=int(overwrite))
    else:
        _, x, info = lapack.dposv(-At, b, lower=1, overwrite_a=1, overwrite_b=int(overwrite))
        x = -x
    if info == 0:
        return x, 0
    if overwrite:
        return x, int(info)
    return solve(A.copy(), b)


def in_place_solver(A: np.ndarray, b: np.ndarray, positive_definite: bool = False) -> Callable[[], int]:
    """A function ``solve() -> info`` that solves A x = b in place, x written into ``b``.

    ``A`` (k, k) must be Fortran-contiguous and ``b`` (k,) contiguous, both float64 and
    preallocated (views of a kernel's output buffer): each call factorizes the current
    contents of A (destroying them) by LU (dgesv), or by Cholesky (dposv, lower triangle)
    when ``positive_definite``.  info != 0: singular (LU) or not positive definite
    (Cholesky); A and b are then destroyed.
    """
    if not (A.flags.f_contiguous and b.flags.c_contiguous and A.dtype == b.dtype == np.float64):
        raise ValueError("in_place_solver needs a Fortran-ordered A and a contiguous b (float64)")
    if A.shape[0] == 0:
        return lambda: 0
    if positive_definite:
        posv = lapack.dposv

        def solve_cholesky() -> int:
            # (lower, overwrite_a, overwrite_b by position: f2py parses keywords slowly)
            return posv(A, b, 1, 1, 1)[2]

        return solve_cholesky
    gesv = lapack.dgesv

    def solve_lu() -> int:
        return gesv(A, b, 1, 1)[3]          # (overwrite_a, overwrite_b)

    return solve_lu


def max_norm(a: np.ndarray) -> float:
    """max |a_i| of a 1-D float array (0.0 when empty; NaN when an entry is NaN): the value
    of ``float(np.abs(a).max())``, for short vectors in plain Python floats (faster there
    than numpy's reductions; the maximum of absolute values is exact either way)."""
    if a.size > 16 or a.size == 0:
        return float(np.abs(a).max()) if a.size else 0.0
    values = a.tolist()
    total = sum(values)
    if total != total:          # a NaN entry (or both infinities): numpy says which
        return float(np.abs(a).max())
    return float(max(map(abs, values)))


def determinant(A: np.ndarray) -> float:
    """det A of a small square matrix (closed forms up to 3 x 3; LU beyond); 0.0 when singular."""
    k = A.shape[0]
    if k == 0:
        return 1.0
    if k == 1:
        return float(A[0, 0])
    if k == 2:
        return float(A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0])
    if k == 3:
        return float(A[0, 0] * (A[1, 1] * A[2, 2] - A[1, 2] * A[2, 1])
                     - A[0, 1] * (A[1, 0] * A[2, 2] - A[1, 2] * A[2, 0])
                     + A[0, 2] * (A[1, 0] * A[2, 1] - A[1, 1] * A[2, 0]))
    lu, piv, info = _getrf(A)[:3]
    if info > 0:
        return 0.0
    if k > 16:
        d = float(np.prod(np.diag(lu)))
        return -d if np.count_nonzero(piv != np.arange(k)) % 2 else d
    # small: the product of the LU diagonal left to right (what np.prod of the diagonal
    # computes, to the last bit) and the parity of the row swaps in plain Python numbers,
    # faster there than numpy's reductions
    diagonal = lu.diagonal().tolist()
    d = diagonal[0]
    for v in diagonal[1:]:
        d *= v
    swaps = sum(1 for i, j in enumerate(piv.tolist()) if i != j)
    return -d if swaps % 2 else d


def pivoted_columns(A: np.ndarray) -> tuple[tuple[int, ...], float]:
    """Column-pivoted QR of A (k x l, k <= l): the k pivot columns (ascending) and the
    relative rank measure |R_kk| / |R_11| (0 when A has lost rank).

    The pivot columns greedily maximize |det A[:, columns]|: they are the dependent
    coordinates (A = ∂f_h/∂q) or dependent speeds (A = B) best conditioned at this state.
    The choice itself is :func:`symbody.dependent_columns.pivot_columns` (the one chooser,
    shared with the formulation layer).
    """
    k = A.shape[0]
    if k == 0:
        return (), 1.0
    if not np.isfinite(A).all():
        return tuple(range(A.shape[1] - k, A.shape[1])), 0.0
    columns, norms = pivot_columns(A, k)
    rank = norms[-1] / norms[0] if norms and norms[0] > 0 else 0.0
    return tuple(sorted(columns)), rank


def pivoted_qr(A: np.ndarray) -> tuple[tuple[int, ...], float]:
    """:func:`pivoted_columns` (the k pivot columns, ascending, and the rank measure
    |R_kk| / |R_11|) from one dgeqp3 call, without the chooser's copies and lists.

    The same call on the same Fortran-ordered copy of A (k x l, k <= l) as
    :func:`symbody.dependent_columns.pivot_columns` makes for ``pivoted_columns``, so both
    results are identical to the last bit (other shapes go through ``pivoted_columns``);
    the simulation's dependent-set monitor calls this at every step.
    """
    k, l = A.shape
    if k == 0 or k > l:
        return pivoted_columns(A)
    if not np.isfinite(A).all():
        return tuple(range(l - k, l)), 0.0
    if k == 1:
        # one row: dgeqp3 pivots on the first entry of largest magnitude and |R_11| is that
        # magnitude (the same numbers without the LAPACK call; a quaternion's unit norm)
        j = int(np.argmax(np.abs(A[0])))
        return (j,), (1.0 if A[0, j] != 0.0 else 0.0)
    qr, jpvt, _, _, info = _geqp3(np.array(A, dtype=float, order="F"), overwrite_a=1)
    if info != 0:
        raise ValueError(f"dgeqp3 failed (info = {info}) on a {k} x {l} matrix")
    columns = tuple(sorted(j - 1 for j in jpvt[:k].tolist()))
    r11 = abs(float(qr[0, 0]))
    return columns, (abs(float(qr[k - 1, k - 1])) / r11 if r11 > 0 else 0.0)


def rank_measure(A: np.ndarray) -> float:
    """``pivoted_columns(A)[1]`` without the column lists: |R_kk| / |R_11| of the
    column-pivoted QR of A (k x l, k <= l; 1.0 when k = 0, 0.0 when A has lost rank or
    has a non-finite entry).

    The same dgeqp3 call on the same Fortran-ordered copy of A as
    :func:`symbody.dependent_columns.pivot_columns` makes, so the value is identical to
    the last bit; it skips the copies and Python lists around it (the simulation's rank
    watch calls this after every step).
    """
    k, l = A.shape
    if k == 0:
        return 1.0
    if k > l:
        return pivoted_columns(A)[1]
    if not np.isfinite(A).all():
        return 0.0
    qr = lapack.dgeqp3(np.array(A, dtype=float, order="F"))[0]
    r11 = abs(float(qr[0, 0]))
    return abs(float(qr[k - 1, k - 1])) / r11 if r11 > 0 else 0.0


def reduced_kkt_solve(S: np.ndarray, s: np.ndarray, o: int, ind: np.ndarray,
                      dep: np.ndarray) -> np.ndarray | None:
    """u'[ind] (p,) of the augmented system ``S [u'; λ] = s`` by the null space of B_a.

    S (K, K) = [[M, ∓B_aᵀ], [B_a, 0]] and s = [F (o,); c (m,)] with K = o + m; ``ind`` (p,)
    and ``dep`` (m,) split the o speeds so that B_dep = B_a[:, dep] is nonsingular (the
    active dependent speeds).  Every u' with B_a u' = c is u' = C a + w with::

        C[ind] = I,  C[dep] = -B_dep⁻¹ B_ind,     w[ind] = 0,  w[dep] = B_dep⁻¹ c,

    and the first block row times Cᵀ (B_a C = 0 removes λ, whatever its sign) leaves
    (Cᵀ M C) a = Cᵀ (F - M w), with u'[ind] = a.  The same u' as the LU of S up to
    round-off, for one LU of B_dep (m x m) and a p x p solve instead of the LU of the
    (o + m) x (o + m) system: at m = 80, p = 1 (the 40-loop four-bar) 0.17 M instead of
    2.8 M multiply-adds.  S and s are not modified.  Returns None when B_dep or Cᵀ M C is
    singular (the caller then factorizes S, which says what is singular).
    """
    m = S.shape[0] - o
    p = o - m
    Ba = S[o:, :o]
    lu, piv, info = lapack.dgetrf(Ba[:, dep])
    if info != 0:
        return None
    R = np.empty((m, p + 1), order="F")
    R[:, :p] = Ba[:, ind]
    R[:, p] = s[o:]
    X, info = lapack.dgetrs(lu, piv, R, overwrite_b=1)
    if info != 0:
        return None
    C = np.zeros((o, p))
    C[ind, np.arange(p)] = 1.0
    C[dep] = -X[:, :p]
    w = np.zeros(o)
    w[dep] = X[:, p]
    M = S[:o, :o]
    Ct = C.T
    Mr = Ct @ (M @ C)
    g = Ct @ (s[:o] - M @ w)
    if p == 1:
        d = float(Mr[0, 0])
        return g / d if d != 0.0 and np.isfinite(d) else None
    a, info = solve(Mr, g)
    return a if info == 0 else None
