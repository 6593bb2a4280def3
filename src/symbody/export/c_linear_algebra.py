"""Small linear solves of the exported C written out as straight-line code.

The right-hand side solves two small systems per call: ``B_dep u_dep = -(B_ind u_ind + b)``
(m x m) and ``S y = s`` for u' (K x K).  For the sizes of most models (K up to
:data:`UNROLL_MAX`) a loop over a run-time size costs more than the arithmetic, so the
solves are emitted for their sizes, every entry a local variable, and the entries the
kernel writes as literals (the structural zeros of M_d and B_a, known when the C is
generated) are left out of the arithmetic, fill-in included — what CasADi's generated C
gets from its sparse symbolic solve:

* a symmetric M_d (``L D L^T``, no square roots), read straight from the kernel's output;
* the augmented system ``[[M_d, C], [B_a, 0]] [u'; λ] = [f; g]`` with ``C = -B_a^T`` and M_d
  symmetric, by its Schur complement: ``Z = M_d⁻¹ C``, ``W = -B_a Z`` (symmetric positive
  definite when M_d is and B_a has full rank), ``W λ = g - B_a M_d⁻¹ f``,
  ``u' = M_d⁻¹ f - Z λ`` (two Cholesky factorizations);
* any other small system: LU with partial pivoting, rows exchanged by pointer swaps.

A factorization that meets a pivot that is not positive goes to the general LU of the
whole system, as ``model.rhs`` does; one whose pivot is a literal zero (a massless
coordinate: M_d only semidefinite, the augmented system still regular) is not written,
and the caller takes a straight-line LU with partial pivoting instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = ["UNROLL_MAX", "Entry", "cholesky_statements", "kkt_statements", "lu_function"]

#: largest system solved by straight-line code (the code grows like n^3 / 3)
UNROLL_MAX = 16

#: an entry of a matrix: a C expression, or a float for a literal the kernel writes
Entry = str | float


def _product(*factors: Entry) -> Entry:
    value, names = 1.0, []
    for f in factors:
        if isinstance(f, float):
            value *= f
        else:
            names.append(f)
    if value == 0.0:
        return 0.0
    if not names:
        return value
    text = "*".join(names)
    return text if value == 1.0 else (f"(-{text})" if value == -1.0 else f"({value!r}*{text})")


def _sum(terms: Sequence[tuple[float, Entry]]) -> Entry:
    """sum(sign * entry) of the terms, literals folded; a float when all are literals."""
    value, parts = 0.0, []
    for sign, e in terms:
        if isinstance(e, float):
            value += sign * e
        else:
            parts.append(("-" if sign < 0 else "+", e))
    if not parts:
        return value
    text = ""
    for k, (sign, e) in enumerate(parts):
        text += (f"{'-' if sign == '-' else ''}{e}" if k == 0 else f" {sign} {e}")
    if value != 0.0:
        text += f" + {value!r}" if value > 0 else f" - {-value!r}"
    return f"({text})" if len(parts) + (value != 0.0) > 1 else text


class _Locals:
    """Names ``const double`` locals for the entries (a literal stays a literal)."""

    def __init__(self, prefix: str, lines: list[str]) -> None:
        self.prefix, self.lines, self.count = prefix, lines, 0

    def define(self, value: Entry, name: str | None = None) -> Entry:
        if isinstance(value, float):
            return value
        if name is None:
            name = f"{self.prefix}{self.count}"
            self.count += 1
        self.lines.append(f"    const double {name} = {value};")
        return name


def cholesky_statements(n: int, a: Callable[[int, int], Entry], prefix: str, lines: list[str],
                        fail: str, one_solve: bool = False) -> tuple[dict, list[Entry]] | None:
    """Statements factoring the symmetric ``a(i, j)`` (i <= j read) as ``L D L^T`` into
    locals (no square roots: ``D_j = a_jj - Σ_k L_jk² D_k``, ``L_ij = (a_ij - Σ_k L_ik L_jk
    D_k) / D_j``), every pivot D_j checked positive (the matrix is positive definite).

    Returns (``{(j, i): L_ij D_j}`` for j < i and ``{(j, j): D_j}``, the reciprocals
    ``1 / D_j``), or None when a pivot is a literal that is not positive (the factorization
    cannot succeed: the caller takes LU); ``fail``: the statement run when a pivot is not
    positive at run time (e.g. ``return 1;``).  ``one_solve``: one solve follows, so the last
    pivot is divided by there (``("/", D)`` in its place) rather than inverted here."""
    names = _Locals(prefix, lines)
    T: dict = {}                      # T[j, i] = L_ij D_j (row j of D L^T), T[j, j] = D_j
    inv: list[Entry] = []
    for j in range(n):
        d = _sum([(1.0, a(j, j))] + [(-1.0, _product(T[k, j], T[k, j], inv[k]))
                                      for k in range(j)])
        if isinstance(d, float):
            if not d > 0.0:
                return None
            dj, ij = d, 1.0 / d
        else:
            dj = names.define(d, f"{prefix}d{j}")
            lines.append(f"    if (!({dj} > 0.0)) {fail}")
            ij = ("/", dj) if one_solve and j == n - 1 else names.define(f"1.0 / {dj}",
                                                                         f"{prefix}i{j}")
        T[j, j] = dj
        inv.append(ij)
        for i in range(j + 1, n):
            e = _sum([(1.0, a(j, i))] + [(-1.0, _product(T[k, j], T[k, i], inv[k]))
                                          for k in range(j)])
            T[j, i] = 0.0 if e == 0.0 else names.define(e, f"{prefix}u{j}_{i}")
    return T, inv


def cholesky_solve_statements(n: int, U: dict, inv: list[Entry], b: Sequence[Entry], prefix: str,
                              lines: list[str]) -> list[Entry]:
    """Statements solving L D L^T x = b with the factors of :func:`cholesky_statements`
    (``U[j, i] = L_ij D_j``); returns the entries of x."""
    names = _Locals(prefix, lines)
    y: list[Entry] = []               # y = D L^T x:  L y' = b with y'_j = y_j / D_j
    for j in range(n):
        e = _sum([(1.0, b[j])] + [(-1.0, _product(U[k, j], inv[k], y[k])) for k in range(j)])
        y.append(0.0 if e == 0.0 else names.define(e, f"{prefix}y{j}"))
    x: list[Entry] = [0.0] * n        # D L^T x = y
    for i in range(n - 1, -1, -1):
        e = _sum([(1.0, y[i])] + [(-1.0, _product(U[i, k], x[k])) for k in range(i + 1, n)])
        if e == 0.0:
            continue
        if isinstance(inv[i], tuple):           # divide once rather than invert and multiply
            x[i] = names.define(f"{e} / {inv[i][1]}", f"{prefix}x{i}")
        else:
            x[i] = names.define(_product(e, inv[i]), f"{prefix}x{i}")
    return x


def kkt_statements(o: int, m: int, s: Callable[[int, int], Entry], rhs: Sequence[Entry],
                   lines: list[str], fail: str) -> list[Entry] | None:
    """Statements solving ``[[M, C], [B, 0]] y = rhs`` (``s(i, j)``: the entries, M
    symmetric, C = -B^T) by the Schur complement; returns the entries of y = [u' (o); λ (m)].
    ``fail`` runs where M or W = -B M⁻¹ C is not positive definite; None when M has a
    literal pivot that is not positive (the caller takes LU)."""
    factors = cholesky_statements(o, s, "kM", lines, fail)
    if factors is None:
        return None
    U, inv = factors
    f, g = list(rhs[:o]), list(rhs[o:o + m])
    yf = cholesky_solve_statements(o, U, inv, f, "kf", lines)
    Z = [cholesky_solve_statements(o, U, inv, [s(i, o + j) for i in range(o)], f"kz{j}_", lines)
         for j in range(m)]                               # columns of M⁻¹ C
    names = _Locals("kw", lines)
    W: dict = {}
    for i in range(m):
        for j in range(i, m):
            W[i, j] = names.define(_sum([(-1.0, _product(s(o + i, k), Z[j][k])) for k in range(o)]),
                                   f"kW{i}_{j}")
    r = [names.define(_sum([(1.0, g[i])] + [(-1.0, _product(s(o + i, k), yf[k]))
                                            for k in range(o)]), f"kr{i}") for i in range(m)]
    factors = cholesky_statements(m, lambda i, j: W[i, j], "kL", lines, fail, one_solve=True)
    if factors is None:
        return None
    lam = cholesky_solve_statements(m, *factors, r, "kl", lines)
    u = [names.define(_sum([(1.0, yf[k])] + [(-1.0, _product(Z[j][k], lam[j])) for j in range(m)]),
                      f"ku{k}") for k in range(o)]
    return u + lam


def lu_function(n: int, name: str) -> str:
    """``static int name(double *A, double *b, double *absdet)``: A (n x n row by row, its
    rows reordered through pointers and overwritten) y = b in place by LU with partial
    pivoting, |det A| into absdet; 1 where a pivot is zero (or not finite)."""
    rows = ", ".join(f"*r{i} = A + {i * n}" for i in range(n))
    swaps = ", *tp" if n > 1 else ""
    lines = [f"static int {name}(double *A, double *b, double *absdet)", "{",
             f"    double {rows}{swaps};",
             "    double " + ", ".join(f"b{i} = b[{i}]" for i in range(n))
             + (", tb, f" if n > 1 else "") + ", det = 1.0;"]
    for k in range(n):
        for i in range(k + 1, n):
            lines.append(f"    if (fabs(r{i}[{k}]) > fabs(r{k}[{k}])) {{ tp = r{k}; r{k} = r{i}; "
                         f"r{i} = tp; tb = b{k}; b{k} = b{i}; b{i} = tb; }}")
        lines.append(f"    if (!(fabs(r{k}[{k}]) > 0.0)) return 1;")
        lines.append(f"    det *= r{k}[{k}];")
        for i in range(k + 1, n):
            lines.append(f"    f = r{i}[{k}] / r{k}[{k}];")
            for j in range(k + 1, n):
                lines.append(f"    r{i}[{j}] -= f * r{k}[{j}];")
            lines.append(f"    b{i} -= f * b{k};")
    for i in range(n - 1, -1, -1):
        terms = "".join(f" - r{i}[{j}] * b{j}" for j in range(i + 1, n))
        lines.append(f"    b{i} = (b{i}{terms}) / r{i}[{i}];")
    lines += [f"    b[{i}] = b{i};" for i in range(n)]
    lines += ["    *absdet = fabs(det);", "    return 0;", "}", ""]
    return "\n".join(lines)


def solve_statements(shape: tuple[int, int, int], augmented: bool, symmetric: bool,
                     s: Callable[[int, int], Entry], rhs: Sequence[Entry], lines: list[str],
                     fail: str, independent_only: bool = False
                     ) -> tuple[list[Entry], int | None] | None:
    """Statements solving ``S y = rhs`` (``shape`` = (K, o, m); ``s(i, j)``: the entries):
    the null space of the model's dependent set (``independent_only``: only u_ind' is
    wanted) or the Schur complement of an augmented system, ``L D L^T`` of a symmetric one
    where they apply, else a straight-line LU.  Returns (the entries of y, or of u_ind'
    with ``independent_only``; the size of the ``lu_solve_<K>`` function it calls or
    None), or None when the system is too large."""
    K, o, m = shape
    if symmetric:
        body: list[str] = []
        x = None
        if augmented and independent_only and o <= UNROLL_MAX:
            x = nullspace_statements(o, m, s, rhs, body, fail)
            if x is None:
                body = []
        if x is None and augmented and o <= UNROLL_MAX and m <= UNROLL_MAX:
            x = kkt_statements(o, m, s, rhs, body, fail)
        elif not augmented and K <= UNROLL_MAX:
            factors = cholesky_statements(K, s, "c", body, fail, one_solve=True)
            x = None if factors is None else cholesky_solve_statements(K, *factors, rhs, "c", body)
        if x is not None:
            lines += body
            return x, None
    if not 0 < K <= UNROLL_MAX:
        return None

    def c(e: Entry) -> str:
        return repr(e) if isinstance(e, float) else e

    lines.append(f"    double lS[{K * K}], ly[{K}], ldet;")
    lines += [f"    lS[{i * K + j}] = {c(s(i, j))};" for i in range(K) for j in range(K)]
    lines += [f"    ly[{i}] = {c(rhs[i])};" for i in range(K)]
    lines.append(f"    if (lu_solve_{K}(lS, ly, &ldet)) {fail}")
    return [f"ly[{i}]" for i in range(K)], K


def lu_many_statements(m: int, a: Callable[[int, int], Entry], rhs: Sequence[Sequence[Entry]],
                       prefix: str, lines: list[str], fail: str) -> list[list[str]]:
    """Statements solving ``A X = R`` (A m x m: ``a(i, j)``; R: the columns ``rhs``) by LU
    with partial pivoting written out (rows exchanged by swapping local values); returns
    the entries of X by column.  ``fail`` where a pivot is zero."""

    def c(e: Entry) -> str:
        return repr(e) if isinstance(e, float) else e

    k_rhs = len(rhs)
    A = [[f"{prefix}a{i}_{j}" for j in range(m)] for i in range(m)]
    R = [[f"{prefix}r{i}_{c_}" for c_ in range(k_rhs)] for i in range(m)]
    lines += [f"    double {A[i][j]} = {c(a(i, j))};" for i in range(m) for j in range(m)]
    lines += [f"    double {R[i][c_]} = {c(rhs[c_][i])};" for i in range(m) for c_ in range(k_rhs)]
    if m > 1:
        lines.append(f"    double {prefix}sw;")
    for k in range(m):
        for i in range(k + 1, m):
            swaps = " ".join(f"{prefix}sw = {x}; {x} = {y}; {y} = {prefix}sw;"
                             for x, y in zip(A[k][k:] + R[k], A[i][k:] + R[i]))
            lines.append(f"    if (fabs({A[i][k]}) > fabs({A[k][k]})) {{ {swaps} }}")
        lines.append(f"    if (!(fabs({A[k][k]}) > 0.0)) {fail}")
        lines.append(f"    const double {prefix}p{k} = 1.0 / {A[k][k]};")
        for i in range(k + 1, m):
            lines.append(f"    {{ const double f = {A[i][k]} * {prefix}p{k};")
            lines += [f"      {A[i][j]} -= f * {A[k][j]};" for j in range(k + 1, m)]
            lines += [f"      {R[i][c_]} -= f * {R[k][c_]};" for c_ in range(k_rhs)]
            lines.append("    }")
    X = [[""] * m for _ in range(k_rhs)]
    for c_ in range(k_rhs):
        for i in range(m - 1, -1, -1):
            terms = "".join(f" - {A[i][j]}*{X[c_][j]}" for j in range(i + 1, m))
            X[c_][i] = f"{prefix}x{i}_{c_}"
            lines.append(f"    const double {X[c_][i]} = ({R[i][c_]}{terms}) * {prefix}p{i};")
    return X


def nullspace_statements(o: int, m: int, s: Callable[[int, int], Entry], rhs: Sequence[Entry],
                         lines: list[str], fail: str) -> list[Entry] | None:
    """Statements giving u_ind' (p = o - m entries) of ``[[M, -B^T], [B, 0]] [u'; λ] =
    [f; g]`` in the model's own dependent set (the last m speeds), Kane's way:
    ``X = B_dep⁻¹ [B_ind, g]`` (LU with pivoting), ``u' = T v + t0`` with
    ``T = [I; -X_ind]``, ``t0 = [0; X_g]``, and ``(T^T M T) v = T^T (f - M t0)`` by
    L D L^T (p x p).  Cheaper than the Schur complement when the dependent speeds are many
    (closed loops); λ is not formed.  None where T^T M T has a literal pivot that is not
    positive."""
    p = o - m
    X = lu_many_statements(m, lambda i, j: s(o + i, p + j),
                           [[s(o + i, j) for i in range(m)] for j in range(p)]
                           + [list(rhs[o:o + m])], "n", lines, fail)
    Xind, Xg = X[:p], X[p]          # Xind[j][i]: row i of B_dep⁻¹ B_ind, column j

    def T(k: int, j: int) -> Entry:     # column j of the null-space basis, entry k
        if k < p:
            return 1.0 if k == j else 0.0
        return f"(-{Xind[j][k - p]})"

    names = _Locals("nn", lines)
    # M T (o x p) and M t0 (o)
    MT: dict = {}

    def mt(k: int, j: int) -> Entry:        # (M T)[k, j], defined where it is used
        if (k, j) not in MT:
            MT[k, j] = names.define(_sum([(1.0, _product(s(k, i), T(i, j))) for i in range(o)]),
                                    f"nm{k}_{j}")
        return MT[k, j]

    Mt0 = [names.define(_sum([(1.0, _product(s(k, p + i), Xg[i])) for i in range(m)]), f"nt{k}")
           for k in range(o)]
    Mr = {(i, j): names.define(_sum([(1.0, _product(T(k, i), mt(k, j))) for k in range(o)
                                     if not (k < p and k != i)]), f"nM{i}_{j}")
          for i in range(p) for j in range(i, p)}
    fr = [names.define(_sum([(1.0, _product(T(k, i), _sum([(1.0, rhs[k]), (-1.0, Mt0[k])])))
                             for k in range(o)]), f"nf{i}") for i in range(p)]
    factors = cholesky_statements(p, lambda i, j: Mr[i, j], "nL", lines, fail, one_solve=True)
    if factors is None:
        return None
    return cholesky_solve_statements(p, *factors, fr, "nv", lines)
