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

__all__ = ["project_coordinates", "project_arguments", "consistent_state", "assembly_diagnosis"]


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
