"""Symbolic linearization of constrained equations of motion, in SymPy's conventions.

The method is that of Peterson, Gede and Hubbard (2015), "Symbolic linearization
of equations of motion of constrained multibody systems", Multibody Syst. Dyn.
33:143-161, which SymPy's ``Linearizer`` implements.  The system is written as

    f_c(q) = 0                                  configuration constraints  (l)
    f_v(q, u) = B(q) u + b(q) = 0               velocity constraints       (m)
    f_a(q, u, u') = 0                           acceleration constraints   (m)
    f_0(q, q') + f_1(q, u) = 0                  kinematic equations        (N)
    f_2(q, u') + f_3(q, u, r) + f_4(q, lam) = 0 dynamic equations          (o - m + k)

and perturbed about an operating point.  With the dependent perturbations
eliminated through the constraint Jacobians (C_0, C_1, C_2 below) the result is

    M [dq'; du'; dlam] = A [dq_ind; du_ind] + B dr                      (A_and_B=False)
    [dq_ind'; du_ind'] = A [dq_ind; du_ind] + B dr                      (A_and_B=True)

exactly the matrices SymPy's ``KanesMethod.linearize`` / ``LagrangesMethod.linearize``
return, but computed differently, which makes it one to two orders of magnitude
faster:

* every derivative is taken in symengine and the operating point is substituted
  into each Jacobian block at once, before any linear solve, so the solves act on
  small expressions in the remaining symbols (constants, speeds such as v);
* for Kane's method the reduced dynamic equations D = -[I, A_rs^T] (M_d u' + g_d)
  are never formed symbolically: their Jacobians follow from the unreduced block
  of :meth:`KanesMethod.to_eom` and from A_rs = -B_dep^-1 B_ind evaluated at the
  operating point, with dA_rs/dq_k = -B_dep^-1 (dB_dep/dq_k A_rs + dB_ind/dq_k);
* the linear solves use the structure of M: the constraint Jacobians in the
  dependent variables (at most 4 x 4 in practice) are inverted by Cramer's rule,
  the multipliers and dependent accelerations are eliminated, and the remaining
  reduced mass matrix (definite) is factored without pivoting, so every division is
  by a quantity that is nonzero at any regular operating point, whatever values the
  remaining symbols take; other matrices are eliminated with pivots chosen on a
  numeric shadow (values at random numbers), never on symbolic zero tests.

The named ``linear_solver`` methods of SymPy ('LU', 'CRAMER', 'GJ', ...) all give
the same mathematical result here; a callable ``x = f(A, b)`` is honoured (it is
called with sympy matrices).  Two deliberate differences from SymPy 1.14: a
kinematic remainder f_k (as in q' = u + f_k(q)) is counted once, not twice, in
A_qq, and the velocity-independent part of Fr* is not double counted either; both
coincide with SymPy whenever those terms vanish (the usual case).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import symengine as se
import sympy as sm
from sympy import default_sort_key

from ..compat.sympy import TIME, kanes_method_constraints, lagranges_method_holonomic
from ..errors import FormulationError, SingularConstraintError
from ..symengine_bridge import SymbolTable as _Symbols
from ..symengine_bridge import to_symengine
from .linearization_data import KaneLinearizationData, LagrangeLinearizationData

if TYPE_CHECKING:
    from .eom import EquationsOfMotion


t = TIME

__all__ = ["linearize_kane", "linearize_lagrange", "linearize_eom", "kane_data_from_sympy",
           "lagrange_data_from_sympy", "KaneLinearizationData", "LagrangeLinearizationData",
           "to_symengine"]

_ZERO = se.Integer(0)
_ONE = se.Integer(1)


# --------------------------------------------------------------------------- small matrix algebra
def _zeros(r: int, c: int) -> list[list]:
    return [[_ZERO] * c for _ in range(r)]


def _eye(n: int) -> list[list]:
    out = _zeros(n, n)
    for i in range(n):
        out[i][i] = _ONE
    return out


def _mul(A: list[list], B: list[list], inner: int | None = None) -> list[list]:
    """Matrix product skipping structural zeros."""
    if inner is None:
        inner = len(B)
    cols = len(B[0]) if B else 0
    out = []
    for row in A:
        nz = [(k, a) for k, a in enumerate(row) if a != 0]
        new = []
        for j in range(cols):
            acc = _ZERO
            for k, a in nz:
                b = B[k][j]
                if b != 0:
                    acc = acc + (b if a == 1 else a * b)
            new.append(acc)
        out.append(new)
    return out


def _add(A: list[list], B: list[list], sign: int = 1) -> list[list]:
    return [[a + b if sign > 0 else a - b for a, b in zip(ra, rb)] for ra, rb in zip(A, B)]


def _neg(A: list[list]) -> list[list]:
    return [[-a for a in row] for row in A]


def _T(A: list[list], rows: int | None = None) -> list[list]:
    if not A:
        return [[] for _ in range(rows or 0)]
    return [list(c) for c in zip(*A)]


def _cols(A: list[list], idx: Sequence[int]) -> list[list]:
    return [[row[j] for j in idx] for row in A]


def _rows(A: list[list], idx: Sequence[int]) -> list[list]:
    return [list(A[i]) for i in idx]


def _jac(exprs: Sequence, vars_: Sequence) -> list[list]:
    out = []
    for e in exprs:
        free = e.free_symbols if isinstance(e, se.Basic) else set()
        out.append([e.diff(v) if v in free else _ZERO for v in vars_])
    return out


def _jac_at(exprs: Sequence, vars_: Sequence, op: dict) -> list[list]:
    """The Jacobian d exprs / d vars_ with the operating point ``op`` substituted.

    Equal to substituting after differentiating, but much cheaper on big
    expressions: for each variable the other operating-point values are put in
    first, so only a small expression is differentiated.  Falls back to the plain
    order when an operating-point value contains one of the variables.
    """
    if not op or not vars_:
        return _sub(_jac(exprs, vars_), op)
    varset = set(vars_)
    for val in op.values():
        if isinstance(val, se.Basic) and not val.is_Number and val.free_symbols & varset:
            return _sub(_jac(exprs, vars_), op)
    cols = []
    for v in vars_:
        others = {k: val for k, val in op.items() if k != v}
        reduced = _subv(exprs, others)
        col = []
        for e in reduced:
            if isinstance(e, se.Basic) and not e.is_Number and v in e.free_symbols:
                d = e.diff(v)
                col.append(d.xreplace({v: op[v]}) if v in op else d)
            else:
                col.append(_ZERO)
        cols.append(col)
    return [[cols[j][i] for j in range(len(vars_))] for i in range(len(exprs))]


def _sub(A: list[list], op: dict) -> list[list]:
    if not op:
        return A
    return [[e.xreplace(op) if isinstance(e, se.Basic) and not e.is_Number else e for e in row]
            for row in A]


def _subv(v: Sequence, op: dict) -> list:
    if not op:
        return list(v)
    return [e.xreplace(op) if isinstance(e, se.Basic) and not e.is_Number else e for e in v]


class _Shadow:
    """Numeric values of symbolic expressions at fixed random values of their symbols."""

    def __init__(self, seed: int = 20150212) -> None:
        self._rng = random.Random(seed)
        self._vals: dict = {}

    def value(self, e) -> complex:
        if not isinstance(e, se.Basic):
            return complex(e)
        if e.is_Number:
            return complex(e)
        for s in e.free_symbols:
            if s not in self._vals:
                self._vals[s] = se.RealDouble(self._rng.uniform(0.5, 1.5))
        v = e.xreplace(self._vals)
        try:
            return complex(v)
        except (RuntimeError, TypeError, ValueError):
            return complex(sm.sympify(v._sympy_()).evalf())


def _shadow_matrix(A: list[list], shadow: _Shadow, what: str) -> list[list]:
    An = [[shadow.value(e) if e != 0 else 0j for e in row] for row in A]
    bad = [(i, j) for i, row in enumerate(An) for j, x in enumerate(row) if not np.isfinite(x)]
    if bad:
        i, j = bad[0]
        raise FormulationError(
            f"{what}: entry ({i}, {j}) is undefined at the operating point (a division by an "
            "expression that vanishes there, typically left by a symbolic LU solve when the "
            "equations were formed; form them with constraint_solver='CRAMER' or linearize the "
            f"unreduced equations): {str(A[i][j])[:200]}")
    return An


def _solve(A: list[list], B: list[list], what: str, shadow: _Shadow | None = None,
           pivoting: bool = True) -> list[list]:
    """Solve A X = B (A square, symbolic) by Gaussian elimination, skipping structural zeros.

    ``pivoting=True``: in each column the pivot is the entry of largest magnitude on a
    numeric shadow of the matrix (its values at random values of the symbols), so it is
    never an expression that is identically zero.  ``pivoting=False`` eliminates in the
    natural order, which is safe for definite matrices (mass matrices): every pivot is a
    ratio of leading principal minors and cannot vanish for physical parameter values.
    When a natural pivot vanishes on the shadow, partial pivoting is used instead.
    """
    n = len(A)
    k = len(B[0]) if B else 0
    if n == 0:
        return []
    shadow = shadow or _Shadow()
    A = [list(r) for r in A]
    B = [list(r) for r in B]
    An = _shadow_matrix(A, shadow, what)
    scale = max((abs(x) for row in An for x in row), default=0.0) or 1.0
    if not pivoting:   # check the natural pivots on the shadow first
        W = np.array(An, dtype=complex)
        for j in range(n):
            if A[j][j] == 0 or abs(W[j, j]) <= 1e-10 * scale:
                return _solve(A, B, what, shadow, pivoting=True)
            W[j + 1:, j:] -= np.outer(W[j + 1:, j] / W[j, j], W[j, j:])
    for j in range(n):
        piv = j
        if pivoting:
            best, piv = 0.0, -1
            for i in range(j, n):
                if A[i][j] != 0 and abs(An[i][j]) > best:
                    best, piv = abs(An[i][j]), i
            if piv < 0 or best <= 1e-13 * scale:
                raise SingularConstraintError(
                    f"{what}: the matrix is singular (no usable pivot in column {j})")
        if piv != j:
            A[j], A[piv] = A[piv], A[j]
            B[j], B[piv] = B[piv], B[j]
            An[j], An[piv] = An[piv], An[j]
        pj, pjn = A[j][j], An[j][j]
        for i in range(j + 1, n):
            a = A[i][j]
            if a == 0:
                continue
            f = a / pj if pj != 1 else a
            fn = An[i][j] / pjn
            A[i][j], An[i][j] = _ZERO, 0j
            for c in range(j + 1, n):
                if A[j][c] != 0:
                    A[i][c] = A[i][c] - f * A[j][c]
                    An[i][c] = An[i][c] - fn * An[j][c]
            for c in range(k):
                if B[j][c] != 0:
                    B[i][c] = B[i][c] - f * B[j][c]
    X = _zeros(n, k)
    for i in range(n - 1, -1, -1):
        for c in range(k):
            acc = B[i][c]
            for jj in range(i + 1, n):
                if A[i][jj] != 0 and X[jj][c] != 0:
                    acc = acc - A[i][jj] * X[jj][c]
            X[i][c] = acc if A[i][i] == 1 else acc / A[i][i]
    return X


def _det(A: list[list], rows: tuple, cols: tuple, memo: dict):
    """Determinant of the submatrix (rows, cols) by Laplace expansion (memoized minors)."""
    key = (rows, cols)
    got = memo.get(key)
    if got is not None:
        return got
    if len(rows) == 1:
        out = A[rows[0]][cols[0]]
    else:
        out = _ZERO
        r0, rest = rows[0], rows[1:]
        for jj, c in enumerate(cols):
            a = A[r0][c]
            if a == 0:
                continue
            minor = _det(A, rest, cols[:jj] + cols[jj + 1:], memo)
            if minor == 0:
                continue
            term = a * minor
            out = out + term if jj % 2 == 0 else out - term
    memo[key] = out
    return out


def _solve_small(A: list[list], B: list[list], what: str, shadow: _Shadow | None = None) -> list[list]:
    """Solve A X = B by Cramer's rule (adjugate / determinant) when A is at most 4 x 4.

    The only division is by det(A), which is nonzero wherever A is invertible: the
    result is valid for every parameter value at which the constraint Jacobian (the
    usual A here) is regular.  Larger matrices go to :func:`_solve`.
    """
    n = len(A)
    if n == 0:
        return []
    if n > 4:
        return _solve(A, B, what, shadow)
    shadow = shadow or _Shadow()
    _shadow_matrix(A, shadow, what)
    memo: dict = {}
    idx = tuple(range(n))
    det = _det(A, idx, idx, memo)
    if det == 0 or abs(shadow.value(det)) <= 1e-13 * max(1.0, max(
            abs(shadow.value(e)) for row in A for e in row if e != 0) ** n):
        raise SingularConstraintError(f"{what}: the matrix is singular (zero determinant)")
    k = len(B[0]) if B else 0
    # adj(A)[j][i] = (-1)^(i+j) det(A without row i and column j)
    adj = [[_ZERO] * n for _ in range(n)]
    for i in range(n):
        rows = idx[:i] + idx[i + 1:]
        for j in range(n):
            cols = idx[:j] + idx[j + 1:]
            minor = _det(A, rows, cols, memo) if n > 1 else _ONE
            adj[j][i] = minor if (i + j) % 2 == 0 else -minor
    X = _mul(adj, B) if k else _zeros(n, 0)
    return [[e / det if e != 0 else _ZERO for e in row] for row in X]


# --------------------------------------------------------------------------- the general form
class _Form:
    """Jacobian blocks of the Peterson-Gede-Hubbard general form at the operating point.

    Shapes (N coordinates, o speeds, l configuration and m motion constraints,
    k multipliers, s inputs, d = o - m + k dynamic rows)::

        M_qq (N, N)  A_qq (N, N)  A_qu (N, o)
        fc_q (l, N)  fv_q (m, N)  fv_u (m, o)
        M_uqc (m, N) A_uqc (m, N) M_uuc (m, o) A_uuc (m, o)
        M_uqd (d, N) A_uqd (d, N) M_uud (d, o) A_uud (d, o) M_uld (d, k) B_u (d, s)
    """

    def __init__(self, syms: _Symbols, q, u, lams, r, *, q_split: tuple, u_split: tuple):
        """``q_split`` = (q_i, q_d), ``u_split`` = (u_i, u_d): the independent and dependent parts."""
        self.syms = syms
        self.q, self.u, self.lams, self.r = list(q), list(u), list(lams), list(r)
        self.q_i, self.q_d = (list(v) for v in q_split)
        self.u_i, self.u_d = (list(v) for v in u_split)
        self.blocks: dict[str, list[list]] = {}

    @property
    def dims(self) -> tuple[int, int, int, int, int, int]:
        return (len(self.q_d), len(self.u_d), len(self.q), len(self.u), len(self.r), len(self.lams))


def _solver_for(linear_solver) -> Callable | None:
    """None for the built-in elimination, else a callable x = f(A, b) on sympy matrices."""
    if callable(linear_solver):
        return linear_solver
    if linear_solver is None or isinstance(linear_solver, str):
        return None
    raise FormulationError(f"linear_solver must be a method name such as 'LU' or a callable "
                           f"x = f(A, b); got {linear_solver!r}")


def _linear_solve(form: _Form, A, B, what: str, user_solver, shadow: _Shadow) -> list[list]:
    if user_solver is None:
        return _solve_small(A, B, what, shadow)
    syms = form.syms
    As = syms.to_sympy_matrix(A, (len(A), len(A)))
    Bs = syms.to_sympy_matrix(B, (len(B), len(B[0]) if B else 0))
    X = sm.Matrix(user_solver(As, Bs))
    return syms.matrix(X)


def _solve_lower(L: list[list], R: list[list], m: int, k: int, ui_idx: list, ud_idx: list,
                 shadow: _Shadow) -> list[list]:
    """The independent-speed rows of the solution of the lower block of M.

    Rows of ``L`` ((m + d) x (o + k)): m acceleration-constraint rows ``[C, 0]`` then
    d dynamic rows ``[D, Lam]``; unknowns [u' (o), lam (k)].  The multipliers are
    eliminated with T (T Lam = 0, T = [I, -Lam_i Lam_d^-1] over the speed-ordered rows),
    the dependent accelerations with the constraint rows, leaving the reduced
    p x p system

        (T D)_i - (T D)_d C_d^-1 C_i                                    (definite for mass matrices)

    solved without pivoting.  Only C_d and Lam_d (the constraint Jacobian in the
    dependent speeds) are inverted, by Cramer's rule, so every division is by a
    quantity that is nonzero at any regular operating point.  Other shapes fall
    back to a pivoted elimination of the whole block.
    """
    o = len(ui_idx) + len(ud_idx)
    d = len(L) - m
    p = len(ui_idx)
    Cr, Dr = L[:m], L[m:]
    Rc, Rd = R[:m], R[m:]
    if d != p + k or (k and (k != m or d != o)):
        X = _solve(L, R, "linearized mass matrix", shadow)
        return _rows(X, ui_idx)
    D = [r_[:o] for r_ in Dr]
    if k:
        Lam = [r_[o:] for r_ in Dr]
        Y = _solve_small(_T(_rows(Lam, ud_idx), rows=k), _T(_rows(Lam, ui_idx), rows=k),
                         "constraint Jacobian in the dependent speeds (multipliers)", shadow)
        # T = [I_p on the u_ind rows, -(Lam_i Lam_d^-1) on the u_dep rows] = [I, -Y^T] with
        # Y = Lam_d^-T Lam_i^T
        TD = [list(D[i]) for i in ui_idx]
        TR = [list(Rd[i]) for i in ui_idx]
        for a in range(p):
            for b_, row in enumerate(ud_idx):
                c = Y[b_][a]
                if c != 0:
                    TD[a] = [x - c * y for x, y in zip(TD[a], D[row])]
                    TR[a] = [x - c * y for x, y in zip(TR[a], Rd[row])]
    else:
        TD, TR = D, Rd
    Mi = _cols(TD, ui_idx)
    if m:
        Md_ = _cols(TD, ud_idx)
        rhs = [list(a) + list(b) for a, b in zip(_cols(Cr, ui_idx), Rc)]
        Y = _solve_small(_cols(Cr, ud_idx), rhs,
                         "acceleration constraints (Jacobian in the dependent speeds)", shadow)
        Mred = _add(Mi, _mul(Md_, [r_[:p] for r_ in Y]), -1)
        Rred = _add(TR, _mul(Md_, [r_[p:] for r_ in Y]), -1)
    else:
        Mred, Rred = Mi, TR
    return _solve(Mred, Rred, "reduced linearized mass matrix", shadow, pivoting=False)


def _assemble(form: _Form, A_and_B: bool, linear_solver, simplify: bool):
    """Compose M, A, B (SymPy's Linearizer.linearize) from the blocks at the operating point."""
    l, m, n, o, s, k = form.dims
    blk = form.blocks
    user_solver = _solver_for(linear_solver)
    shadow = _Shadow()
    q_pos = {a: i for i, a in enumerate(form.q)}
    u_pos = {a: i for i, a in enumerate(form.u)}
    qi_idx = [q_pos[a] for a in form.q_i]
    qd_idx = [q_pos[a] for a in form.q_d]
    ui_idx = [u_pos[a] for a in form.u_i]
    ud_idx = [u_pos[a] for a in form.u_d]
    d = o - m + k

    # C_0 (n, n-l): dq = C_0 dq_ind
    C0 = _zeros(n, n - l)
    for c, i in enumerate(qi_idx):
        C0[i][c] = _ONE
    if l:
        fc_q = blk["fc_q"]
        X = _linear_solve(form, _cols(fc_q, qd_idx), _cols(fc_q, qi_idx),
                          "configuration constraints (Jacobian in the dependent coordinates)",
                          user_solver, shadow)
        for r_, i in enumerate(qd_idx):
            C0[i] = [-x for x in X[r_]]
    # C_1 (o, n), C_2 (o, o-m): du = C_1 dq + C_2 du_ind
    C1 = _zeros(o, n)
    C2 = _zeros(o, o - m)
    for c, i in enumerate(ui_idx):
        C2[i][c] = _ONE
    if m:
        fv_u, fv_q = blk["fv_u"], blk["fv_q"]
        rhs = [list(a) + list(b) for a, b in zip(fv_q, _cols(fv_u, ui_idx))]
        X = _linear_solve(form, _cols(fv_u, ud_idx), rhs,
                          "velocity constraints (Jacobian in the dependent speeds)", user_solver, shadow)
        for r_, i in enumerate(ud_idx):
            C1[i] = [-x for x in X[r_][:n]]
            C2[i] = [-x for x in X[r_][n:]]

    # A (n + m + d, n - l + o - m)
    def col1(Aq, Au):
        return _mul(_add(Aq, _mul(Au, C1)) if o else Aq, C0)

    rows_q = col1(blk["A_qq"], blk["A_qu"]) if n else []
    rows_c = col1(blk["A_uqc"], blk["A_uuc"]) if (n and m) else []
    rows_d = col1(blk["A_uqd"], blk["A_uud"]) if (n and d) else []
    if o:
        rq2 = _mul(blk["A_qu"], C2) if n else []
        rc2 = _mul(blk["A_uuc"], C2) if m else []
        rd2 = _mul(blk["A_uud"], C2) if d else []
    else:
        rq2, rc2, rd2 = [[] for _ in range(n)], [[] for _ in range(m)], [[] for _ in range(d)]
    if not n:
        rows_q, rows_c, rows_d = [], [[] for _ in range(m)], [[] for _ in range(d)]
    Amat = ([a + b for a, b in zip(rows_q, rq2)] + [a + b for a, b in zip(rows_c, rc2)]
            + [a + b for a, b in zip(rows_d, rd2)])
    ncols = (n - l) + (o - m)

    # M (n + m + d, n + o + k), block lower triangular
    M_top = [list(r_) + [_ZERO] * (o + k) for r_ in blk["M_qq"]] if n else []
    M_c = [list(a) + list(b) + [_ZERO] * k for a, b in zip(blk["M_uqc"], blk["M_uuc"])] if m else []
    M_d = [list(a) + list(b) + list(c) for a, b, c in
           zip(blk["M_uqd"], blk["M_uud"], blk["M_uld"])] if d else []
    Mmat = M_top + M_c + M_d
    Bmat = None
    if s and d:
        Bmat = _zeros(n + m, s) + blk["B_u"]

    syms = form.syms
    size = n + o + k
    if not A_and_B:
        M_s = syms.to_sympy_matrix(Mmat, (size, size))
        A_s = syms.to_sympy_matrix(Amat, (size, ncols))
        B_s = syms.to_sympy_matrix(Bmat, (size, s)) if Bmat is not None else sm.Matrix()
        if simplify:
            M_s.simplify()
            A_s.simplify()
            B_s.simplify()
        return M_s, A_s, B_s

    # solve M X = [A, B] by blocks; keep the rows of q_ind and u_ind
    rhs = [list(a) + (list(b) if Bmat is not None else []) for a, b in
           zip(Amat, Bmat if Bmat is not None else [[]] * size)]
    if user_solver is not None:
        X = _linear_solve(form, Mmat, rhs, "linearized mass matrix", user_solver, shadow)
        keep = qi_idx + [n + j for j in ui_idx]
    else:
        Xq = rhs[:n]
        if n:
            Mqq = [r_[:n] for r_ in Mmat[:n]]
            if Mqq != _eye(n):
                Xq = _solve(Mqq, rhs[:n], "linearized kinematic mass matrix", shadow)
        lower = Mmat[n:]
        low_rhs = rhs[n:]
        if n and any(e != 0 for r_ in lower for e in r_[:n]):
            coupling = _mul([r_[:n] for r_ in lower], Xq)
            low_rhs = _add(low_rhs, coupling, -1)
        Xui = _solve_lower([r_[n:] for r_ in lower], low_rhs, m, k, ui_idx, ud_idx, shadow)
        X = _rows(Xq, qi_idx) + Xui
        keep = list(range(len(X)))
    Xk = _rows(X, keep)
    A_rows = [r_[:ncols] for r_ in Xk]
    A_s = syms.to_sympy_matrix(A_rows, (len(keep), ncols))
    if Bmat is not None:
        B_s = syms.to_sympy_matrix([r_[ncols:] for r_ in Xk], (len(keep), s))
    else:
        B_s = sm.Matrix()
    if simplify:
        A_s.simplify()
        B_s.simplify()
    return A_s, B_s


# --------------------------------------------------------------------------- operating point
def _op_dict(op_point) -> dict:
    if op_point is None:
        return {}
    if isinstance(op_point, dict):
        return dict(op_point)
    if isinstance(op_point, Iterable):
        out: dict = {}
        for d in op_point:
            if not isinstance(d, dict):
                raise FormulationError(f"op_point must be a dict or an iterable of dicts; got {d!r} inside")
            out.update(d)
        return out
    raise FormulationError(f"op_point must be a dict or an iterable of dicts, got {op_point!r}")


def _op_se(syms: _Symbols, op: dict) -> dict:
    out = {}
    for key, val in op.items():
        key = sm.sympify(key)
        k_se = syms.se_of.get(key)
        if k_se is None:
            k_se = syms.to_se(key)
        out[k_se] = syms.to_se(val)
    return out


# --------------------------------------------------------------------------- Kane
def _kane_form(data: KaneLinearizationData, op: dict, syms: _Symbols | None = None) -> _Form:
    """Blocks for Kane's equations from their data (unreduced or reduced dynamic block)."""
    q, u = list(data.q), list(data.u)
    qd_atoms = [a.diff(t) for a in q]
    ud_atoms = [a.diff(t) for a in u]
    N, o, p, m = len(q), len(u), len(data.u_ind), len(data.u_dep)
    if syms is None:
        syms = _Symbols()
    qs = [syms.add(a) for a in q]
    us = [syms.add(a) for a in u]
    for a in qd_atoms:
        syms.add(a)
    uds = [syms.add(a) for a in ud_atoms]
    uaux = set(data.u_aux) | {a.diff(t) for a in data.u_aux}
    known = set(q) | set(u) | set(qd_atoms) | set(ud_atoms) | uaux
    names = ("qdot", "holonomic", "velocity_matrix", "velocity_rest",
             "acceleration_matrix", "acceleration_rest", "dynamic_mass", "dynamic_rest")
    conv = dict(zip(names, syms.matrices([getattr(data, name) for name in names])))
    for name in ("qdot", "holonomic", "velocity_matrix", "velocity_rest",
                 "acceleration_matrix", "acceleration_rest"):
        extra = [a for a in syms.atoms_in(e for row in conv[name] for e in row) if a not in known]
        if extra:
            raise FormulationError(
                f"cannot linearize: {extra[0]} appears outside the dynamic equations (in the "
                "kinematic or constraint equations); specified inputs may enter only the forcing")
    r_atoms = {a for a in syms.atoms_in(e for name in ("dynamic_mass", "dynamic_rest")
                                        for row in conv[name] for e in row) if a not in known}
    r = sorted(r_atoms, key=default_sort_key)
    for a in r:
        if a.diff(t) in r_atoms:
            raise FormulationError(f"cannot linearize: both {a} and its derivative appear as inputs")
    rs = [syms.add(a) for a in r]
    ops = _op_se(syms, op)

    form = _Form(syms, q, u, [], r, q_split=(data.q_ind, data.q_dep), u_split=(data.u_ind, data.u_dep))
    b = form.blocks
    # kinematic: q' - qdot(q, u, t) = 0 (SymPy's explicit form: M_qq = I)
    qdot = [row[0] for row in conv["qdot"]]
    b["M_qq"] = _eye(N)
    b["A_qq"] = _jac_at(qdot, qs, ops)
    b["A_qu"] = _jac_at(qdot, us, ops)
    # configuration constraints
    if data.holonomic.rows:
        b["fc_q"] = _jac_at([row[0] for row in conv["holonomic"]], qs, ops)
    # velocity and acceleration constraints
    if m:
        Bv = conv["velocity_matrix"]
        bv = [row[0] for row in conv["velocity_rest"]]
        fv = [sum((Bv[i][j] * us[j] for j in range(o) if Bv[i][j] != 0), bv[i]) for i in range(m)]
        b["fv_q"] = _jac_at(fv, qs, ops)
        b["fv_u"] = _sub(Bv, ops)
        Ba = conv["acceleration_matrix"]
        ba = [row[0] for row in conv["acceleration_rest"]]
        fa = [sum((Ba[i][j] * uds[j] for j in range(o) if Ba[i][j] != 0), ba[i]) for i in range(m)]
        b["M_uqc"] = _zeros(m, N)
        b["A_uqc"] = _neg(_jac_at(fa, qs, ops))
        b["M_uuc"] = _sub(Ba, ops)
        b["A_uuc"] = _neg(_jac_at(ba, us, ops))
    # dynamic equations
    Md = conv["dynamic_mass"]
    gd = [row[0] for row in conv["dynamic_rest"]]
    ncol = len(Md[0]) if Md else 0
    E = [sum((Md[i][j] * uds[j] for j in range(ncol) if Md[i][j] != 0), gd[i]) for i in range(len(gd))]
    Md_op = [list(row) + [_ZERO] * (o - ncol) for row in _sub(Md, ops)]
    Eq = _jac_at(E, qs, ops)
    Eu = _jac_at(E, us, ops)
    Er = _jac_at(E, rs, ops) if rs else [[] for _ in E]
    if m and not data.dynamic_reduced:
        # reduced rows D = -T E with T = [I_p, A_rs^T]; A_rs and dA_rs/dq at the operating point
        Bv_op = b["fv_u"]
        Bi = _cols(Bv_op, range(p))
        Bd = _cols(Bv_op, range(p, o))
        shadow = _Shadow(7)
        Ars = _neg(_solve_small(Bd, Bi, "velocity constraints (Jacobian in the dependent speeds)", shadow))
        T = [[_ONE if c == rr else _ZERO for c in range(p)] + [Ars[j][rr] for j in range(m)]
             for rr in range(p)]
        E_dep = _subv(E[p:], ops)
        dB = [[_sub([[e.diff(qk) if qk in e.free_symbols else _ZERO for e in row]], ops)[0]
               for row in Bv] for qk in qs]
        A_qcols = []
        for kq in range(N):
            dBk = dB[kq]
            if all(e == 0 for row in dBk for e in row):
                A_qcols.append([_ZERO] * p)
                continue
            dBi = _cols(dBk, range(p))
            dBd = _cols(dBk, range(p, o))
            rhs = _add(_mul(dBd, Ars), dBi)
            dArs = _neg(_solve_small(Bd, rhs, "velocity constraints (Jacobian in the dependent speeds)",
                                     shadow))
            # column kq of dA_rs^T E_dep (p entries)
            A_qcols.append([sum((dArs[j][rr] * E_dep[j] for j in range(m)
                                 if dArs[j][rr] != 0 and E_dep[j] != 0), _ZERO) for rr in range(p)])
        TEq = _mul(T, Eq)
        b["A_uqd"] = [[TEq[rr][kq] + A_qcols[kq][rr] for kq in range(N)] for rr in range(p)]
        b["M_uud"] = _neg(_mul(T, Md_op))
        b["A_uud"] = _mul(T, Eu)
        b["B_u"] = _mul(T, Er) if rs else [[] for _ in range(p)]
        d = p
    else:
        b["A_uqd"] = Eq
        b["M_uud"] = _neg(Md_op)
        b["A_uud"] = Eu
        b["B_u"] = Er
        d = len(E)
    if d != o - m:
        raise FormulationError(f"the dynamic equations have {d} rows; expected {o - m}")
    b["M_uqd"] = _zeros(d, N)
    b["M_uld"] = [[] for _ in range(d)]
    return form


def kane_data_from_sympy(km: Any) -> KaneLinearizationData:
    """The linearization data of SymPy's own ``KanesMethod`` (after ``kanes_equations``).

    From its public ``q``, ``u``, ``kindiffdict()``, ``mass_matrix`` = [k_d; k_dnh] and
    ``forcing`` = -[f_d; f_dnh], and the constraints it keeps private
    (:func:`symbody.compat.sympy.kanes_method_constraints`).  The dynamic block is SymPy's
    reduced one, k_d u' + f_d = 0 (o - m rows over all o speeds).
    """
    mass, forcing = km.mass_matrix, km.forcing      # ValueError when Fr, Fr* are not formed
    parts = kanes_method_constraints(km)
    q, u = list(km.q), list(km.u)
    q_dep, u_dep, u_aux = parts["q_dep"], parts["u_dep"], parts["u_aux"]
    d = len(u) - len(u_dep)
    qmap = km.kindiffdict()
    qdot = sm.Matrix(len(q), 1, [qmap[a.diff(t)] for a in q])
    k_d, f_d = mass[:d, :], -forcing[:d, :]
    if u_aux:
        aux_zero = dict.fromkeys(u_aux, 0)
        qdot, k_d, f_d = qdot.xreplace(aux_zero), k_d.xreplace(aux_zero), f_d.xreplace(aux_zero)
    return KaneLinearizationData(
        q_ind=tuple(q[:len(q) - len(q_dep)]), q_dep=tuple(q_dep), u_ind=tuple(u[:d]),
        u_dep=tuple(u_dep), u_aux=tuple(u_aux), qdot=qdot, holonomic=parts["f_h"],
        velocity_matrix=parts["k_nh"], velocity_rest=parts["f_nh"],
        acceleration_matrix=mass[d:, :], acceleration_rest=-forcing[d:, :],
        dynamic_mass=k_d, dynamic_rest=f_d, dynamic_reduced=bool(u_dep))


def _linearization_data(method: Any, data_class: type, from_sympy: Any) -> Any:
    """The linearization data of ``method``: given as such, from our method's
    ``to_linearizer_data()``, or read from SymPy's method object by ``from_sympy``."""
    if isinstance(method, data_class):
        return method
    if hasattr(method, "to_linearizer_data"):
        return method.to_linearizer_data()
    return from_sympy(method)


def linearize_kane(km: Any, *, op_point: dict | Sequence[dict] | None = None, A_and_B: bool = False,
                   linear_solver: str | Callable = "LU", simplify: bool = False) -> tuple:
    """Linearize Kane's equations about an operating point, as SymPy's ``KanesMethod.linearize``.

    ``km``: symbody's ``KanesMethod`` (its :class:`KaneLinearizationData` from
    ``to_linearizer_data()``), SymPy's (:func:`kane_data_from_sympy`), or the data itself.
    Returns ``(M, A, B, r)`` for ``M [q'; u'] = A [q_ind; u_ind] + B r`` (M square
    of size N + o, A of shape (N + o, n + p)), or with ``A_and_B=True``
    ``(A, B, r)`` for ``[q_ind'; u_ind'] = A [q_ind; u_ind] + B r`` (A of shape
    (n + p, n + p)).  ``r`` (s x 1) holds the specified inputs, sorted canonically.
    ``op_point``: dict (or iterable of dicts) of values for q, u, u' and any
    constants; what is not given stays symbolic.  B is an empty Matrix when
    there are no inputs.
    """
    data = _linearization_data(km, KaneLinearizationData, kane_data_from_sympy)
    form = _kane_form(data, _op_dict(op_point))
    out = _assemble(form, A_and_B, linear_solver, simplify)
    return out + (sm.Matrix(form.r),)


def linearize_eom(eom: EquationsOfMotion, *, op_point: dict | Sequence[dict] | None = None, A_and_B: bool = False,
                  linear_solver: str | Callable = "LU", simplify: bool = False) -> tuple:
    """Symbolic linearization of a canonical :class:`EquationsOfMotion` (Kane's conventions).

    Same returns as :func:`linearize_kane`, with q = eom.q, u = eom.u and the
    state [q_ind, u_ind].  Works for unreduced and reduced dynamic blocks.
    """
    return linearize_kane(KaneLinearizationData.from_eom(eom), op_point=op_point, A_and_B=A_and_B,
                          linear_solver=linear_solver, simplify=simplify)


# --------------------------------------------------------------------------- Lagrange
def lagrange_data_from_sympy(lm: Any) -> LagrangeLinearizationData:
    """The linearization data of SymPy's own ``LagrangesMethod`` (after ``form_lagranges_equations``).

    From its public ``q``, ``coneqs``, ``lam_vec``, ``lam_coeffs``, ``mass_matrix`` =
    [m_d, lam_coeffs^T], ``forcing`` = f_d, ``mass_matrix_full`` and ``forcing_full`` (whose
    last k rows hold m_cd and f_cd), and the configuration constraints it keeps private
    (:func:`symbody.compat.sympy.lagranges_method_holonomic`).
    """
    mass, f_d = lm.mass_matrix, lm.forcing          # ValueError before the equations are formed
    q = tuple(lm.q)
    n = len(q)
    coneqs = sm.Matrix(lm.coneqs) if lm.coneqs is not None else sm.Matrix()
    k = len(coneqs)
    if k:
        m_cd, f_cd = lm.mass_matrix_full[2 * n:, n:2 * n], lm.forcing_full[2 * n:, :]
        lam_coeffs = sm.Matrix(lm.lam_coeffs)
    else:
        m_cd, f_cd, lam_coeffs = sm.zeros(0, n), sm.zeros(0, 1), sm.zeros(0, n)
    return LagrangeLinearizationData(
        q=q, hol_coneqs=lagranges_method_holonomic(lm), coneqs=coneqs,
        lam_vec=tuple(lm.lam_vec) if lm.lam_vec is not None else (), lam_coeffs=lam_coeffs,
        m_d=mass[:, :n], f_d=sm.Matrix(f_d), m_cd=m_cd, f_cd=f_cd)


def linearize_lagrange(lm: Any, *, q_ind: Sequence | None = None,
                       qd_ind: Sequence | None = None, q_dep: Sequence | None = None,
                       qd_dep: Sequence | None = None, op_point: dict | Sequence[dict] | None = None,
                       A_and_B: bool = False, linear_solver: str | Callable = "LU",
                       simplify: bool = False) -> tuple:
    """Linearize Lagrange's equations, as SymPy's ``LagrangesMethod.linearize``.

    ``lm``: symbody's ``LagrangesMethod`` (its :class:`LagrangeLinearizationData` from
    ``to_linearizer_data()``), SymPy's (:func:`lagrange_data_from_sympy`), or the data.
    The speeds are u = q' (``qd_ind``/``qd_dep`` are derivatives of coordinates)
    and the multipliers lam enter the unknowns: ``M [q'; q''; lam] = A [q_ind; qd_ind] + B r``
    (M square of size 2n + k), or with ``A_and_B=True`` ``[q_ind'; qd_ind'] = A [q_ind; qd_ind] + B r``.
    Returns ``(M, A, B, r)`` or ``(A, B, r)``.  Without constraints ``q_ind`` and
    ``qd_ind`` default to all coordinates and their derivatives.
    """
    data = _linearization_data(lm, LagrangeLinearizationData, lagrange_data_from_sympy)
    q = list(data.q)
    qd_atoms = [a.diff(t) for a in q]
    qdd_atoms = [a.diff(t, 2) for a in q]
    coneqs = sm.Matrix(data.coneqs)
    hol = sm.Matrix(data.hol_coneqs)
    lams = list(data.lam_vec)
    n_c, n_h = len(coneqs), len(hol)
    q_i = list(q_ind) if q_ind is not None else ([] if n_h else list(q))
    q_d = list(q_dep) if q_dep is not None else []
    u_i = list(qd_ind) if qd_ind is not None else ([] if n_c else list(qd_atoms))
    u_d = list(qd_dep) if qd_dep is not None else []
    if len(q_d) != n_h or len(u_d) != n_c:
        raise ValueError(f"Must supply {n_h} dependent coordinates, and {n_c} dependent speeds")
    if set(q_i + q_d) != set(q) or len(q_i) + len(q_d) != len(q):
        raise ValueError("Must partition q into q_ind and q_dep, with no extra or missing symbols.")
    if set(u_i + u_d) != set(qd_atoms) or len(u_i) + len(u_d) != len(q):
        raise ValueError("Must partition qd into qd_ind and qd_dep, with no extra or missing symbols.")

    m_d = sm.Matrix(data.m_d)
    f_d = sm.Matrix(data.f_d)
    lam_coeffs = sm.Matrix(data.lam_coeffs) if n_c else sm.zeros(0, len(q))
    syms = _Symbols()
    qs = [syms.add(a) for a in q]
    us = [syms.add(a) for a in qd_atoms]          # u = q'
    uds = [syms.add(a) for a in qdd_atoms]        # u' = q''
    ls = [syms.add(a) for a in lams]
    insyms = set(q) | set(qd_atoms) | set(qdd_atoms) | set(lams)
    Md = syms.matrix(m_d)
    fd = syms.column(f_d)
    r_atoms = {a for a in syms.atoms_in(fd) if a not in insyms}
    r = sorted(r_atoms, key=default_sort_key)
    for a in r:
        if a.diff(t) in r_atoms:
            raise ValueError("Cannot have derivatives of specified quantities when linearizing forcing terms.")
    rs = [syms.add(a) for a in r]
    ops = _op_se(syms, _op_dict(op_point))
    N, o, k = len(q), len(q), len(lams)
    form = _Form(syms, q, qd_atoms, lams, r, q_split=(q_i, q_d), u_split=(u_i, u_d))
    b = form.blocks
    b["M_qq"] = _eye(N)
    b["A_qq"] = _zeros(N, N)
    b["A_qu"] = _eye(N)
    if n_h:
        b["fc_q"] = _jac_at(syms.column(hol), qs, ops)
    if n_c:
        fv = syms.column(coneqs)
        b["fv_q"] = _jac_at(fv, qs, ops)
        b["fv_u"] = _jac_at(fv, us, ops)
        m_cd = syms.matrix(data.m_cd)
        f_cd = syms.column(data.f_cd)
        fa = [sum((m_cd[i][j] * uds[j] for j in range(o) if m_cd[i][j] != 0), -f_cd[i])
              for i in range(n_c)]
        b["M_uqc"] = _zeros(n_c, N)
        b["A_uqc"] = _neg(_jac_at(fa, qs, ops))
        b["M_uuc"] = _sub(m_cd, ops)
        b["A_uuc"] = _neg(_jac_at(fa, us, ops))
    W = [sum((Md[i][j] * uds[j] for j in range(o) if Md[i][j] != 0), -fd[i]) for i in range(N)]
    if k:
        LcT = _T(syms.matrix(lam_coeffs))
        f4 = [-sum((LcT[i][j] * ls[j] for j in range(k) if LcT[i][j] != 0), _ZERO) for i in range(N)]
        b["M_uld"] = _neg(_sub(LcT, ops))
        full = [w + f for w, f in zip(W, f4)]
    else:
        b["M_uld"] = [[] for _ in range(N)]
        full = W
    b["M_uqd"] = _zeros(N, N)
    b["A_uqd"] = _neg(_jac_at(full, qs, ops))
    b["M_uud"] = _sub(Md, ops)
    b["A_uud"] = _neg(_jac_at(W, us, ops))
    b["B_u"] = _jac_at(fd, rs, ops) if rs else [[] for _ in range(N)]
    out = _assemble(form, A_and_B, linear_solver, simplify)
    return out + (sm.Matrix(r),)
