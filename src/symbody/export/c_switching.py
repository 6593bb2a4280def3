"""The dependent set in the exported C: watched in the model's own set, switched in full state.

Any fixed choice of dependent coordinates and speeds is singular somewhere: a slider-crank
whose rod is shorter than its crank, with the crank angle independent, meets
``det ∂f_h/∂q_dep = 0`` at each dead centre of the crank, and an integrator of
``x = [q, u_ind]`` steps across it onto the wrong branch (the solve of ``B_dep u_dep =
-(B_ind u_ind + b)`` stays regular at the points it samples).  The generated C therefore

* measures, at every evaluation in the model's own set, the ratio
  ``ρ = |det A[:, D]| / |det A[:, D*]|`` of the dependent columns D of A = B (and of
  A = ∂f_h/∂q in the projection) to the best-conditioned choice D* (greedy column pivoting,
  the numbers of :func:`symbody.compilation.linear_algebra.pivoted_columns`), as
  ``simulate``'s dependent-set monitor does, and returns the error
  ``NAME_ERR_DEPENDENT_SET`` where ``ρ < NAME_DEPENDENT_SET_RATIO`` (0.01 unless defined
  at compile time): never an answer on a branch it cannot tell apart;
* offers, for models whose dependent set may change (``partition_switchable``, m > 0),
  the full state ``y = [q (N), u (o), x_e (e)]``: ``name_full_rhs`` (u' of all speeds from
  the augmented system, which needs no dependent set) and ``name_full_project`` (q back
  onto f_h = 0 and u onto B u + b = 0 in the dependent set best conditioned at that
  configuration, chosen afresh at each call), so a fixed-step loop of the two passes
  every singular position of one set.  The FMU's co-simulation integrates this state.

The cheap test comes first: by Cauchy-Binet ``|det A[:, D*]| <= sqrt(det(A A^T))``, so
``|det A[:, D]| >= ρ_min sqrt(det(A A^T))`` proves ``ρ >= ρ_min`` without pivoting.
"""

from __future__ import annotations

from typing import Any

__all__ = ["GAUGE_C", "DEFAULT_RATIO", "RANK_FLOOR", "dependent_gauge_check", "full_state_c",
           "full_state_header", "switching_defines", "ERR_DEPENDENT_SET", "ERR_RANK"]

#: below this ratio the exported fixed-set functions refuse (simulate switches earlier, at
#: 0.1, ConstraintMode.SWITCH_THRESHOLD).  A stateless evaluation sees a crossing only where
#: a call lands inside the band; at 0.01 the README's RK4 loop on the slider-crank of the
#: tests stopped at its first dead centre for every step from 1e-5 to 1e-2 s (up to 0.3 rad
#: of the rod per step; at 1e-3 it stepped over one with h = 1e-3), and the zoo's start
#: states run (the snakeboard's own set starts at 0.087)
DEFAULT_RATIO = 0.01
#: rank measure |R_kk| / |R_11| of the whole constraint matrix below which no dependent set
#: is regular (a change point of the mechanism): the full-state projection reports it
RANK_FLOOR = 1e-8
#: status of the fixed-set functions where the model's dependent set is near singular
ERR_DEPENDENT_SET = 5
#: status of the full-state projection where the whole constraint matrix loses rank
ERR_RANK = 6

GAUGE_C = r"""
/* |det A| of a k x k matrix (row by row, overwritten by its LU factors) */
static double abs_det(int k, double *A)
{
    int i, j, c;
    double d = 1.0;
    for (c = 0; c < k; c++) {
        int piv = c;
        double big = fabs(A[c * k + c]);
        for (i = c + 1; i < k; i++)
            if (fabs(A[i * k + c]) > big) { big = fabs(A[i * k + c]); piv = i; }
        if (!(big > 0.0)) return 0.0;
        if (piv != c)
            for (j = 0; j < k; j++) {
                double tmp = A[c * k + j]; A[c * k + j] = A[piv * k + j]; A[piv * k + j] = tmp;
            }
        d *= big;
        for (i = c + 1; i < k; i++) {
            double f = A[i * k + c] / A[c * k + c];
            for (j = c + 1; j < k; j++) A[i * k + j] -= f * A[c * k + j];
        }
    }
    return d;
}

/* greedy column pivoting of A (k x l row by row, k <= l): the k columns a column-pivoted QR
   takes (each time the largest norm orthogonal to those taken; ascending in cols); returns
   prod |R_ii| = |det A[:, cols]|, *rank = |R_kk| / |R_11| (0: A lost rank).
   W: k * l doubles, used: l ints (work space) */
static double pivot_columns(int k, int l, const double *A, double *W, int *used, int *cols,
                            double *rank)
{
    int i, j, s, c, best;
    double prod = 1.0, r11 = 0.0, rkk = 0.0;
    for (j = 0; j < l; j++) {
        used[j] = 0;
        for (i = 0; i < k; i++) W[j * k + i] = A[i * l + j];
    }
    for (s = 0; s < k; s++) {
        double big = -1.0, norm;
        best = -1;
        for (j = 0; j < l; j++) {
            double q = 0.0;
            if (used[j]) continue;
            for (i = 0; i < k; i++) q += W[j * k + i] * W[j * k + i];
            if (q > big) { big = q; best = j; }
        }
        norm = sqrt(big);
        if (!(norm > 0.0)) { *rank = 0.0; for (; s < k; s++) cols[s] = -1; return 0.0; }
        used[best] = 1;
        cols[s] = best;
        prod *= norm;
        if (s == 0) r11 = norm;
        rkk = norm;
        for (i = 0; i < k; i++) W[best * k + i] /= norm;
        for (j = 0; j < l; j++) {
            double d = 0.0;
            if (used[j]) continue;
            for (i = 0; i < k; i++) d += W[best * k + i] * W[j * k + i];
            for (i = 0; i < k; i++) W[j * k + i] -= d * W[best * k + i];
        }
    }
    for (s = 1; s < k; s++)                       /* ascending */
        for (c = s; c > 0 && cols[c - 1] > cols[c]; c--) {
            int tmp = cols[c]; cols[c] = cols[c - 1]; cols[c - 1] = tmp;
        }
    *rank = r11 > 0.0 ? rkk / r11 : 0.0;
    return prod;
}

/* 1 when |det A[:, D]| < ratio |det A[:, D*]| (D* the best-conditioned columns), given
   detD = |det A[:, D]|; A is k x l row by row; W, G, used, cols: work space
   (k * l, k * k doubles, l, k ints) */
static int dependent_set_poor(int k, int l, const double *A, double detD, double ratio,
                              double *W, double *G, int *used, int *cols)
{
    int i, j, c;
    double rank, best;
    if (detD != detD) return 1;
    for (i = 0; i < k; i++)                       /* Cauchy-Binet: |det A_D*|^2 <= det(A A^T) */
        for (j = 0; j < k; j++) {
            double s = 0.0;
            for (c = 0; c < l; c++) s += A[i * l + c] * A[j * l + c];
            G[i * k + j] = s;
        }
    if (detD * detD >= ratio * ratio * abs_det(k, G)) return 0;
    best = pivot_columns(k, l, A, W, used, cols, &rank);
    return detD < ratio * best;
}
"""


def switching_defines(prefix: str) -> str:
    """The header's macros of the dependent-set watch (``prefix``: the upper-case name)."""
    return f"""
/* the model's own dependent set is refused where |det A[:, dependent]| < RATIO |det A[:, best]|
   (A = B in the right-hand side, A = df_h/dq in the projection; best: greedy column
   pivoting); define {prefix}_DEPENDENT_SET_RATIO when compiling to change it (0 turns the
   watch off) */
#ifndef {prefix}_DEPENDENT_SET_RATIO
#define {prefix}_DEPENDENT_SET_RATIO {DEFAULT_RATIO!r}
#endif
#define {prefix}_ERR_DEPENDENT_SET {ERR_DEPENDENT_SET}   /* the model's dependent set is near singular */
#define {prefix}_ERR_RANK {ERR_RANK}   /* the constraint matrix loses rank: no dependent set is regular */
"""


def dependent_gauge_check(w: Any, matrix: str, k: int, l: int, det: str,
                          indent: str = "        ", watch: bool = False) -> list[str]:
    """C lines that return ERR_DEPENDENT_SET when the dependent columns of ``matrix``
    (k x l row by row; ``det``: |det| of its dependent block) are poorly conditioned
    (``watch``: only when the C variable ``watch`` is nonzero)."""
    P = w.P
    return [
        f"{indent}if ({'watch && ' if watch else ''}{P}_DEPENDENT_SET_RATIO > 0.0) {{",
        f"{indent}    double gw[{k * l}], gg[{k * k}];",
        f"{indent}    int gu[{l}], gc[{k}];",
        f"{indent}    if (dependent_set_poor({k}, {l}, {matrix}, {det}, "
        f"{P}_DEPENDENT_SET_RATIO, gw, gg, gu, gc)) return {ERR_DEPENDENT_SET};",
        f"{indent}}}",
    ]


def full_state_header(w: Any) -> str:
    """Declarations of the full-state functions (models whose dependent set may change)."""
    n, P = w.name, w.P
    return f"""
/* ---- full state y = [q (NQ), u (NU), x_e (NE)]: every speed is a state, so no dependent set
   is needed to evaluate y', and the projection picks the best-conditioned one at each call.
   A fixed-step loop of {n}_full_rhs and {n}_full_project (after each step) passes the singular
   positions of any one dependent set (where {n}_rhs returns {P}_ERR_DEPENDENT_SET). */
#define {P}_NY_FULL {w.L.N + w.L.o + w.L.e}

/* y' = [q', u', x_e'] at a consistent y (u' of all speeds from the augmented system); 2: S singular */
int {n}_full_rhs(double t, const double *y, const double *p, const double *r, double *ydot);

/* q onto f_h(q, t) = 0 (damped Newton on the dependent coordinates best conditioned at q,
   the others held), then u onto B u + b = 0 (the dependent speeds best conditioned there,
   solved from the others).  0: done; 1: Newton did not converge; 2: singular;
   {P}_ERR_RANK: the constraint Jacobian loses rank (no dependent set is regular) */
int {n}_full_project(double t, double *y, const double *p, const double *r, double tol,
                     int max_iter);

/* the state y (NY_FULL) from x = [q, u_ind, x_e] of the model's dependent set: u_dep solved
   as {n}_speeds does, without the watch (1: B_dep singular) */
int {n}_full_state(double t, const double *x, const double *p, const double *r, double *y);

/* the outputs y_out (NY) at the full state y (as {n}_outputs) */
int {n}_full_outputs(double t, const double *y, const double *p, const double *r, double *out);
"""


def full_state_c(w: Any) -> str:
    """The full-state functions (see :func:`full_state_header`)."""
    L, n = w.L, w.name
    N, o, e = L.N, L.o, L.e
    K = L.K
    zdecl = f"    double z[{L.nz}];"
    fill = [
        "static void full_fill_z(double *z, double t, const double *y, const double *p, "
        "const double *r)", "{", "    int i;",
        f"    for (i = 0; i < {L.nz}; i++) z[i] = 0.0;",
        "    z[0] = t;",
        f"    for (i = 0; i < {N + o}; i++) z[1 + i] = y[i];"]
    fill.append(f"    for (i = 0; i < {e}; i++) z[{L.ixe} + i] = y[{N + o} + i];" if e else "")
    fill.append(f"    for (i = 0; i < {L.c}; i++) z[{L.ic} + i] = p[i];" if L.c else "    (void)p;")
    fill.append(f"    for (i = 0; i < {L.s}; i++) z[{L.ir} + i] = r[i];" if L.s else "    (void)r;")
    fill += ["}", ""]
    nmain = w.nout["main"]
    size = nmain + K * K
    rhs = [f"int {n}_full_rhs(double t, const double *y, const double *p, const double *r, "
           "double *ydot)", "{", zdecl, f"    double sol[{K}], xd[{L.nx}];", "    int i, st;",
           "    full_fill_z(z, t, y, p, r);"]
    if w.heap(size):
        rhs += [f"    double *work = (double *)malloc({size} * sizeof(double));",
                "    if (!work) return 4;",
                "    st = dynamics_in(z, xd, sol, work, work + " + str(nmain) + ");",
                "    free(work);"]
    else:
        rhs += [f"    double work[{size}];",
                f"    st = dynamics_in(z, xd, sol, work, work + {nmain});"]
    rhs += ["    if (st) return st;",
            f"    for (i = 0; i < {N}; i++) ydot[i] = xd[i];",
            f"    for (i = 0; i < {o}; i++) ydot[{N} + i] = sol[i];"]
    if e:
        rhs.append(f"    for (i = 0; i < {e}; i++) ydot[{N + o} + i] = xd[{L.nxm} + i];")
    rhs += ["    return 0;", "}", ""]
    state = [f"int {n}_full_state(double t, const double *x, const double *p, const double *r, "
             "double *y)", "{", zdecl, "    int i;",
             "    if (fill_z(z, t, x, p, r, 0)) return 1;",
             f"    for (i = 0; i < {N}; i++) y[i] = x[i];",
             f"    for (i = 0; i < {o}; i++) y[{N} + i] = z[{L.iu} + i];"]
    if e:
        state.append(f"    for (i = 0; i < {e}; i++) y[{N + o} + i] = x[{L.nxm} + i];")
    state += ["    return 0;", "}", ""]
    outputs = [f"int {n}_full_outputs(double t, const double *y, const double *p, const double *r, "
               "double *out)", "{"]
    if "outputs" in w.programs:
        outputs += [zdecl, "    full_fill_z(z, t, y, p, r);"]
        if w.outputs_use_udot:
            outputs += [f"    {{ double yd[{N + o + e}]; int i, st = {n}_full_rhs(t, y, p, r, yd);",
                        "      if (st) return st;",
                        f"      for (i = 0; i < {o}; i++) z[{L.iudot} + i] = yd[{N} + i]; }}"]
        outputs += [f"    {w.k('outputs')}(z, out);"]
    else:
        outputs += ["    (void)t; (void)y; (void)p; (void)r; (void)out;"]
    outputs += ["    return 0;", "}", ""]
    return "\n".join(fill + rhs + state + outputs + _full_project(w))


def _full_project(w: Any) -> list[str]:
    L, n = w.L, w.name
    N, o, M, m = L.N, L.o, L.M, L.m
    mo = m * o
    lines = [f"int {n}_full_project(double t, double *y, const double *p, const double *r, "
             "double tol, int max_iter)", "{",
             f"    double z[{L.nz}], v[{w.nout['velocity']}], A[{m * m}], b[{m}], W[{mo}], rank;",
             f"    int used[{o}], dep[{m}], ind[{o}], i, j, k, st = 0;"]
    if M:
        lines += [
            f"    double fh[{M}], J[{M * N}], JW[{M * N}], Aq[{M * M}], dq[{M}], qdep[{M}];",
            "    double norm, scale, fresh;",
            f"    int usedq[{N}], depq[{M}], it = 0, converged, small;",
            f"    {n}_holonomic(t, y, p, fh, J);",
            f"    pivot_columns({M}, {N}, J, JW, usedq, depq, &rank);",
            f"    if (!(rank >= {RANK_FLOOR!r})) return {ERR_RANK};",
            f"    norm = max_abs(fh, {M});",
            "    converged = norm == 0.0;",
            "    while (!converged && it < max_iter && norm == norm && norm != HUGE_VAL) {",
            "        it++;",
            f"        for (i = 0; i < {M}; i++) {{",
            f"            for (j = 0; j < {M}; j++) Aq[i * {M} + j] = J[i * {N} + depq[j]];",
            "            dq[i] = fh[i];",
            "        }",
            f"        if (lu_solve({M}, Aq, dq)) return 2;",
            f"        for (i = 0; i < {M}; i++) qdep[i] = y[depq[i]];",
            f"        small = max_abs(dq, {M}) <= tol * (1.0 + max_abs(qdep, {M}));",
            "        scale = 1.0;",
            "        for (;;) {",
            f"            for (i = 0; i < {M}; i++) y[depq[i]] = qdep[i] - scale * dq[i];",
            f"            {n}_holonomic(t, y, p, fh, J);",
            f"            fresh = max_abs(fh, {M});",
            "            if (small || fresh <= norm || scale < 1e-3) break;",
            "            scale *= 0.5;",
            "        }",
            "        converged = small;",
            "        norm = fresh;",
            "        if (norm == 0.0) converged = 1;",
            "    }",
            "    if (!converged) st = 1;"]
    else:
        lines += ["    (void)tol; (void)max_iter;"]
    lines += [
        "    full_fill_z(z, t, y, p, r);",
        f"    {w.k('velocity')}(z, v);",
        f"    pivot_columns({m}, {o}, v, W, used, dep, &rank);",
        f"    if (!(rank >= {RANK_FLOOR!r})) return {ERR_RANK};",
        f"    for (j = 0; j < {o}; j++) used[j] = 0;",
        f"    for (j = 0; j < {m}; j++) used[dep[j]] = 1;",
        f"    for (j = 0, k = 0; j < {o}; j++) if (!used[j]) ind[k++] = j;",
        f"    for (i = 0; i < {m}; i++) {{            /* B_D u_D = -(B_I u_I + b) */",
        f"        double s = v[{mo} + i];",
        f"        for (j = 0; j < {o - m}; j++) s += v[i * {o} + ind[j]] * y[{N} + ind[j]];",
        "        b[i] = -s;",
        f"        for (j = 0; j < {m}; j++) A[i * {m} + j] = v[i * {o} + dep[j]];",
        "    }",
        f"    if (lu_solve({m}, A, b)) return 2;",
        f"    for (i = 0; i < {m}; i++) y[{N} + dep[i]] = b[i];",
        "    return st;", "}", ""]
    return lines
