"""Projection onto the holonomic constraints: q_dep solved from f_h(q, t) = 0 with q_ind held.

Damped Newton's method on the dependent coordinates (of the model's partition or of a
given :class:`~.partition.Partition`), with the Jacobian ∂f_h/∂q_dep (M, M) from the
holonomic kernel; when it fails, :func:`assembly_diagnosis` says why (a least-squares
solution nearby, or the residuals that cannot be closed).  The functions take the model as
their first argument (``model.project_coordinates(...)`` calls
:func:`project_coordinates`) and use only its public evaluation interface.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError, SingularConstraintError, SymbodyError
from .kernel_layout import CompiledModel
from .linear_algebra import max_norm, solve
from .named_values import InputValues, ParameterValues, StateValues
from .partition import Partition

__all__ = ["project_coordinates", "project_arguments", "consistent_state", "assembly_diagnosis",
           "project_coordinates_many", "project_arguments_many"]


def project_coordinates(model: CompiledModel, q: ArrayLike, p: ParameterValues, t: float = 0.0,
                        tol: float = 1e-10, max_iter: int = 50, r: InputValues = None,
                        partition: Partition | None = None) -> tuple[np.ndarray, bool, float]:
    """q (N,) with q_dep solved from f_h(q, t) = 0 by damped Newton's method (q_ind held).

    ``partition``: solve for its dependent coordinates instead of the model's.
    Returns ``(q, converged, residual_norm)``.  Raises SingularConstraintError
    when ∂f_h/∂q_dep is singular.
    """
    q = np.array(q, dtype=float)
    if not model.layout.M:
        return q, True, 0.0
    z = model.arguments(t, q, None, p, r, need_r=False)
    return project_arguments(model, z, tol, max_iter, partition)


def project_arguments(model: CompiledModel, z: np.ndarray, tol: float = 1e-10, max_iter: int = 50,
                      partition: Partition | None = None) -> tuple[np.ndarray, bool, float]:
    """Damped Newton on q_dep (of ``partition``, default the model's) inside the argument
    vector z (nz,), modified in place.

    Stops when a full Newton step is smaller than ``tol * (1 + |q_dep|)``:
    convergence is quadratic, so the residual after that step is at round-off.
    Returns (q copy (N,), converged, max |f_h| before the last step).
    """
    L = model.layout
    M, N, n = L.M, L.N, L.n
    hol = model.kernels.holonomic.into
    out = np.empty(model.kernels.holonomic.nout)
    hol(z, out)
    if partition is None or partition is model.default_partition or \
            partition == model.default_partition:
        sl, cols = slice(1 + n, 1 + N), slice(n, N)
        dep_names = model.dependent_coordinates
    else:
        sl, cols = 1 + partition.q_dep_index, partition.q_dep_index
        dep_names = [model.coordinates[i] for i in partition.q_dep_index]
    J = out[M:].reshape(M, N)
    norm = max_norm(out[:M])
    converged = norm == 0.0
    it = 0
    while not converged and it < max_iter and norm == norm and norm != np.inf:
        it += 1
        # (copies: LAPACK factorizes and solves in them, the kernel's output stays)
        dq, info = solve(np.array(J[:, cols], order="F"), out[:M].copy(), overwrite_b=True)
        if info != 0:
            raise SingularConstraintError(
                f"the holonomic constraints are singular in the dependent coordinates "
                f"{', '.join(map(str, dep_names))} at q = "
                f"{np.array2string(z[1:1 + N], precision=4)}")
        qdep = z[sl].copy()
        small = max_norm(dq) <= tol * (1.0 + max_norm(qdep))
        scale = 1.0
        while True:
            z[sl] = qdep - scale * dq
            hol(z, out)
            new = max_norm(out[:M])
            if small or new <= norm or scale < 1e-3:
                break
            scale *= 0.5
        converged = small
        norm = new
        if norm == 0.0:
            converged = True
    return z[1:1 + N].copy(), converged, norm


def consistent_state(model: CompiledModel, x_guess: StateValues, p: ParameterValues,
                     t: float = 0.0) -> np.ndarray:
    """x (N + p + e,) with q_dep solved from f_h = 0 by Newton's method from the guess (q_ind held).

    Nothing else changes (u_dep are not states; they follow from the
    velocity constraints).  Raises InputError when Newton's method does not
    converge, SingularConstraintError when ∂f_h/∂q_dep is singular.
    """
    L = model.layout
    x = model.state_array(x_guess).copy()
    if not L.M:
        return x
    q, ok, norm = project_coordinates(model, x[:L.N], p, t)
    if not ok or norm > 1e-9:
        raise InputError(
            "could not solve the holonomic constraints for the dependent coordinates "
            f"{', '.join(map(str, model.dependent_coordinates))} from the guess "
            f"{np.array2string(x[L.n:L.N], precision=4)} (residual {norm:.3g}); "
            + assembly_diagnosis(model, x[:L.N], p, t))
    x[:L.N] = q
    return x


def assembly_diagnosis(model: CompiledModel, q0: np.ndarray, p: ParameterValues, t: float) -> str:
    """Why the constraints could not be solved at q0 (N,): the least-squares configuration
    (scipy's least_squares over q_dep from q0) and each equation's residual there."""
    from scipy.optimize import least_squares

    n, N, M = model.layout.n, model.layout.N, model.layout.M
    q = np.array(q0, dtype=float)

    def f(qd):
        q[n:N] = qd
        return model.holonomic_residual(q, p, t)

    try:
        sol = least_squares(f, q0[n:N], method="lm", xtol=1e-14, ftol=1e-14, max_nfev=200 * N)
    except (ValueError, SymbodyError):
        return "give a better guess"
    res = f(sol.x)
    if float(np.max(np.abs(res))) < 1e-8:
        return ("a solution exists nearby (least squares found q_dep = "
                f"{np.array2string(sol.x, precision=6)}): give that as the guess")
    exprs = list(model.eom.holonomic) if model.eom is not None else [None] * M
    parts = []
    for i in np.argsort(-np.abs(res))[:6]:
        e = exprs[i]
        text = "" if e is None else " " + (str(e) if len(str(e)) <= 60 else str(e)[:57] + "...")
        parts.append(f"f_h[{i}]{text}: {res[i]:.3g}")
    return ("the configuration cannot be assembled with these constants and independent "
            "coordinates: the smallest residuals least squares reaches over the dependent "
            "coordinates are " + "; ".join(parts))


def project_arguments_many(model: CompiledModel, Z: np.ndarray, tol: float = 1e-10,
                           max_iter: int = 50, partition: Partition | None = None
                           ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`project_arguments` for k argument vectors at once (the rows of Z (k, nz),
    modified in place): Newton's method on q_dep with one batched kernel evaluation and one
    stacked solve per iteration, ``q_dep <- q_dep - (∂f_h/∂q_dep)⁻¹ f_h``.

    A row is done when its full Newton step is below ``tol * (1 + |q_dep|)`` (the test of
    :func:`project_arguments`, which takes the same steps to round-off).  Rows that would
    need a damped step, a singular or non-finite Jacobian, or more than ``max_iter``
    iterations are left for :func:`project_arguments` (which damps, or raises with its
    message): returns (Q (k, N), done (k,) bool); Q's rows not done are unchanged inputs.
    """
    L = model.layout
    M, N, n = L.M, L.N, L.n
    k = Z.shape[0]
    done = np.zeros(k, dtype=bool)
    if not M:
        done[:] = True
        return Z[:, 1:1 + N].copy(), done
    if partition is None or partition == model.default_partition:
        sl, cols = slice(1 + n, 1 + N), np.arange(n, N)
    else:
        sl, cols = 1 + np.asarray(partition.q_dep_index), np.asarray(partition.q_dep_index)
    hol = model.kernels.holonomic
    out = hol.many(Z)
    norm = np.abs(out[:, :M]).max(axis=1)
    done = norm == 0.0
    active = np.flatnonzero(np.isfinite(norm) & ~done)
    # the rows still iterating, compactly: their arguments, kernel outputs and residual norms
    rows, out, norm = Z[active], out[active], norm[active]
    for _ in range(max_iter):
        if not active.size:
            break
        J = out[:, M:].reshape(active.size, M, N)[:, :, cols]
        try:
            dq = np.linalg.solve(J, out[:, :M, None])[:, :, 0]
        except np.linalg.LinAlgError:         # singular rows: left to the one-by-one path
            regular = np.array([np.linalg.matrix_rank(Ji) == M and np.isfinite(Ji).all() for Ji in J])
            active, rows, out, norm = active[regular], rows[regular], out[regular], norm[regular]
            continue
        qdep = rows[:, sl]
        small = np.abs(dq).max(axis=1) <= tol * (1.0 + np.abs(qdep).max(axis=1))
        rows[:, sl] = qdep - dq
        new_out = hol.many(rows)
        new = np.abs(new_out[:, :M]).max(axis=1)
        good = small | (new <= norm)                  # (NaN: not good)
        finished = good & (small | (new == 0.0))
        if finished.any():
            Z[active[finished]] = rows[finished]
            done[active[finished]] = True
        going = good & ~finished
        if going.all():
            out, norm = new_out, new
        else:
            active, rows, out, norm = active[going], rows[going], new_out[going], new[going]
    return Z[:, 1:1 + N].copy(), done


def project_coordinates_many(model: CompiledModel, t: ArrayLike, Q: ArrayLike, p: ParameterValues,
                             tol: float = 1e-10, max_iter: int = 50,
                             partition: Partition | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`project_coordinates` for k configurations at once: t (k,), Q (k, N) ->
    (Q projected (k, N), done (k,) bool); see :func:`project_arguments_many` for the rows
    not done (they are returned unchanged, for the one-by-one path)."""
    Q = np.array(Q, dtype=float)
    t = np.broadcast_to(np.asarray(t, dtype=float), (Q.shape[0],))
    N = model.layout.N
    if Q.shape[0] == 0 or not model.layout.M:
        return Q, np.ones(Q.shape[0], dtype=bool)
    z = model.arguments(float(t[0]), Q[0], None, p, None, need_r=False)
    Z = np.tile(z, (Q.shape[0], 1))
    Z[:, 0] = t
    Z[:, 1:1 + N] = Q
    # in batches whose kernel output stays within PROJECTION_BUDGET numbers (the Jacobian of
    # the 40-loop four-bar is 6 480 numbers a row)
    rows = max(32, PROJECTION_BUDGET // max(model.kernels.holonomic.nout, 1))
    done = np.empty(Q.shape[0], dtype=bool)
    for start in range(0, Q.shape[0], rows):
        chunk = slice(start, start + rows)
        Q[chunk], done[chunk] = project_arguments_many(model, Z[chunk], tol, max_iter, partition)
    return Q, done


#: numbers of kernel output per batch of :func:`project_coordinates_many`
PROJECTION_BUDGET = 1 << 18
