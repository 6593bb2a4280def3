"""Full coordinates through singular configurations: an augmented Lagrangian formulation
with mass-orthogonal projections (Bayo & Ledesma 1996).

Kane's minimal form integrates [q, u_ind] and solves the dependent speeds from
``B_dep u_dep = -(B_ind u_ind + b)``; where the constraint Jacobian loses rank (a
parallelogram linkage lying flat, a redundant loop-closure equation) no choice of
dependent set is regular and that solve fails.  This module integrates all coordinates
and all speeds instead, y = [q (N), u (o), x_e (e)], with

- accelerations by the augmented Lagrangian iteration (Bayo, García de Jalón & Serna
  1988; Bayo & Ledesma 1996) on ``M u' = F + B_aᵀ λ``, ``B_a u' = c``::

      (M + α B_aᵀ B_a) u'_{k+1} = F + B_aᵀ λ_k + α B_aᵀ c,   λ_{k+1} = λ_k + α (c - B_a u'_{k+1}),

  whose matrix stays positive definite when B_a loses rank, so u' is defined at the
  singular configuration itself (the multipliers are then not unique; the iteration
  returns one of them);
- after each accepted step, mass-orthogonal projections onto the constraint manifold:
  positions ``min ||Δq||_W  s.t.  f_h(q + Δq) = 0`` (W = M_d when q' = u, otherwise the
  identity scaled to M_d), then velocities ``min ||Δu||_M  s.t.  B u + b = 0``, each solved
  by the same iteration.  Because the correction is the smallest in the kinetic-energy
  metric, the state keeps the momentum it had and continues on the branch it was moving
  along (a parallelogram stays a parallelogram through its flat positions).

When the model's kernels are generated C (and its inputs, if any, constant), the
right-hand side and the projections run in compiled code
(:mod:`symbody.compilation.native_full`: the same iterations, equal to round-off) and
scipy's explicit Runge-Kutta steps too (:mod:`.native_rk`); anything the compiled code
cannot finish is done by the Python code here.

The driver switches a segment to these coordinates where the constraint Jacobian's
rank measure (column-pivoted QR, |R_kk| / |R_11|) falls below ``ENTER_RANK`` and back to
Kane's minimal form (with the best dependent set) where it exceeds ``LEAVE_RANK``.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from scipy.linalg import LinAlgError, lapack, lu_factor, lu_solve

from ...compilation import NumericModel
from ...compilation.native_full import NativeFullRHS, native_full_rhs
from ...compilation.numeric_model import Partition
from ...errors import SymbodyError
from ..inputs import ConstantInputs
from .strategy import SCIPY_METHODS, ConstraintMode, Run, StopIntegration

__all__ = ["FullCoordinates", "AugmentedLagrangian", "full_partition", "is_full", "augmented_solve",
           "ENTER_RANK", "LEAVE_RANK"]

#: switch to full coordinates below this rank measure of ∂f_h/∂q or B ...
ENTER_RANK = 0.05
#: ... and back to Kane's minimal form above this one
LEAVE_RANK = 0.1
#: penalty α relative to |M| / |B|²
PENALTY = 1e7


def full_partition(model: NumericModel) -> Partition:
    """The layout of a full-coordinate segment: no dependent coordinates or speeds, so
    that y = [q (N), u (all o), x_e]."""
    return Partition((), (), model.N, model.o)


def is_full(model: NumericModel, part: Partition) -> bool:
    """True for the full-coordinate layout of a constrained model."""
    return bool(model.m) and not part.dependent_speeds and not part.dependent_coordinates


class _Factor:
    """A factorization of the SPD matrix W + α AᵀA (LAPACK's Cholesky, LU when that fails)."""

    def __init__(self, A: np.ndarray) -> None:
        c, info = lapack.dpotrf(A, lower=1, clean=0, overwrite_a=0)
        self.chol = info == 0
        if self.chol:
            self.f = c
        else:
            try:
                self.f = lu_factor(A, check_finite=False)
            except LinAlgError as exc:          # pragma: no cover - W is definite
                raise np.linalg.LinAlgError(str(exc)) from exc

    def solve(self, b: np.ndarray) -> np.ndarray:
        if self.chol:
            return lapack.dpotrs(self.f, b, lower=1)[0]
        return lu_solve(self.f, b, check_finite=False)


def augmented_solve(W: np.ndarray, F: np.ndarray, A: np.ndarray, c: np.ndarray, *,
                    penalty: float = PENALTY, tol: float = 1e-13, max_iter: int = 40,
                    lam0: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """x minimizing ½ xᵀ W x - Fᵀ x subject to A x = c, and its multipliers λ.

    ``W x = F + Aᵀ λ``, ``A x = c``, by the augmented Lagrangian iteration in residual form
    (each correction from the residuals of both equations, so that the round-off of the
    ill-conditioned matrix H = W + α AᵀA is corrected as well)::

        x_{k+1} = x_k + H⁻¹ [F + Aᵀ λ_k - W x_k + α Aᵀ (c - A x_k)],
        λ_{k+1} = λ_k + α (c - A x_{k+1}),

    with α = ``penalty`` |W| / |A|²: W (n, n) symmetric positive definite, A (m, n) of any
    rank, c (m,).  Stops when the correction is below tol |x| and |A x - c| below
    tol (|c| + |A| |x|), when it no longer decreases, or after ``max_iter`` iterations.
    ``lam0``: a starting λ (e.g. the last evaluation's: fewer iterations; the result is the
    same to round-off, except that λ is then not the minimum-norm one where A loses rank).
    Returns (x (n,), λ (m,), the final constraint residual max |A x - c|).
    """
    m = A.shape[0]
    lam = np.zeros(m) if lam0 is None or lam0.shape != (m,) else np.array(lam0, dtype=float)
    A = np.asarray(A)
    if m == 0:
        x = _Factor(W).solve(F)
        return x, lam, 0.0
    # (ndarray methods rather than np.max(np.abs(.)): the same reductions without numpy's
    # Python wrappers; this runs at every right-hand side of a full-coordinate span)
    w = float(np.abs(np.diag(W)).max())
    a2 = float(np.einsum("ij,ij->j", A, A).max())
    alpha = penalty * (w if w > 0 else 1.0) / (a2 if a2 > 0 else 1.0)
    At = A.T
    fac = _Factor(W + alpha * (At @ A))
    solve = fac.solve
    a_norm = math.sqrt(a2)
    c_max = float(np.abs(c).max())
    x = solve(F + At @ (lam + alpha * c))
    res = c - A @ x
    lam += alpha * res
    err = float(np.abs(res).max())
    last = math.inf
    for _ in range(max_iter):
        dx = solve(F + At @ lam - W @ x + alpha * (At @ res))
        x += dx
        res = c - A @ x
        lam += alpha * res
        err = float(np.abs(res).max())
        step = float(np.abs(dx).max())
        size = float(np.abs(x).max()) + 1e-300
        if step <= tol * size and err <= tol * (c_max + a_norm * size):
            break
        if step >= last:        # no more progress (round-off, or an inconsistent part)
            break
        last = step
    return x, lam, err


class FullCoordinates:
    """Evaluation and projection in full coordinates y = [q (N), u (o), x_e (e)] for one run."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.model = model = run.model
        #: the compiled rhs (native_full), None where the model cannot have it; False: not built
        self.native: NativeFullRHS | None | bool = False
        self.N, self.o, self.e = model.N, model.o, model.e
        rng = np.random.default_rng(0)
        q = rng.uniform(-1.0, 1.0, model.N)
        u = rng.uniform(-1.0, 1.0, model.o)
        # q' = u (the kinematic map is the identity)?  Then the position metric is M_d.
        self.identity_kinematics = False
        if model.N == model.o:
            try:
                qd = model.augmented_blocks(run.t0, q, u, run.constants, self._r(run.t0, q, u, None)).qdot
                self.identity_kinematics = bool(np.allclose(qd, u, rtol=1e-12, atol=1e-12))
            except (SymbodyError, FloatingPointError, ValueError):
                pass

    def _r(self, t: float, q: np.ndarray, u: np.ndarray, xe: np.ndarray | None) -> Any:
        r_fun = self.run.specifieds
        if r_fun is None:
            return None
        x = np.concatenate([q, u[:self.model.p]] + ([] if xe is None else [xe]))
        return r_fun(t, x)

    def split(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        N, o = self.N, self.o
        return y[:N], y[N:N + o], (y[N + o:] if self.e else None)

    # -- the right-hand side
    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        """y' = [q', u', x_e'] with u' from the augmented Lagrangian iteration."""
        q, u, xe = self.split(y)
        blk = self.model.augmented_blocks(t, q, u, self.run.constants, self._r(t, q, u, xe), xe)
        # (from λ = 0 at every call: a start from the last call's λ saves iterations but
        # makes f depend on the history, and the step-size control then collapses)
        udot, _, _ = augmented_solve(blk.mass, blk.forcing, blk.acc_matrix, blk.acc_rest)
        parts = [blk.qdot, udot] + ([blk.extra] if self.e else [])
        return np.concatenate(parts)

    def accelerations(self, t: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(u' (o,), λ (m,)) at y (λ: one multiplier vector; not unique at a rank loss)."""
        q, u, xe = self.split(y)
        blk = self.model.augmented_blocks(t, q, u, self.run.constants, self._r(t, q, u, xe), xe)
        udot, lam, _ = augmented_solve(blk.mass, blk.forcing, blk.acc_matrix, blk.acc_rest)
        return udot, lam

    # -- projections
    def _mass(self, t: float, q: np.ndarray, u: np.ndarray, xe: np.ndarray | None) -> np.ndarray:
        P = self.run.constants
        return np.array(self.model.augmented_blocks(t, q, u, P, self._r(t, q, u, xe), xe).mass)

    def project(self, t: float, y: np.ndarray, tol: float = 1e-12, max_iter: int = 30) -> np.ndarray:
        """y with q moved onto f_h = 0 and u onto B u + b = 0, both mass-orthogonally
        (in compiled code when the run has the compiled full rhs and the constraint
        kernels are C too; the failures are left to the Python code below, which raises)."""
        if isinstance(self.native, NativeFullRHS):
            projected, status = self.native.project(t, y, self.identity_kinematics, tol, max_iter)
            if status == 0 and np.isfinite(projected).all():
                return projected
        model, P = self.model, self.run.constants
        q, u, xe = (a.copy() if a is not None else None for a in self.split(y))
        Mq = self._mass(t, q, u, xe)
        if model.M:
            W = Mq if self.identity_kinematics else np.eye(self.N) * float(np.mean(np.diag(Mq)))
            scale = 1.0 + float(np.max(np.abs(q)))
            norm = math.inf
            for _ in range(max_iter):
                f, J = model.holonomic(q, P, t)
                norm = float(np.max(np.abs(f)))
                if norm <= tol * scale:
                    break
                dq, _, _ = augmented_solve(W, np.zeros(self.N), J, -f)
                q += dq
                if float(np.max(np.abs(dq))) <= 1e-15 * scale:
                    break
            if not norm <= 1e-9 * scale:
                raise StopIntegration(-4, f"projection onto the holonomic constraints in full coordinates "
                                          f"did not converge at t = {t:.6g} (residual {norm:.3g})",
                                      (t, y))
        r = self._r(t, q, u, xe) if model.velocity_constraints_use_specifieds else None
        B, b = model.velocity_constraints(q, P, t, r)
        M = Mq if model.M == 0 else self._mass(t, q, u, xe)
        u_new, _, _ = augmented_solve(M, M @ u, B, -b)
        return np.concatenate([q, u_new] + ([xe] if self.e else []))


class AugmentedLagrangian(ConstraintMode):
    """The full-coordinate segment mode (see the module doc); the driver uses it where the
    constraint Jacobian loses rank, between segments of the run's own mode."""

    name: ClassVar[str] = "augmented-lagrangian"

    def __init__(self) -> None:
        super().__init__()
        self._full: FullCoordinates | None = None

    def coordinates(self, run: Run) -> FullCoordinates:
        if self._full is None or self._full.run is not run:
            self._full = FullCoordinates(run)
        return self._full

    def start(self, run: Run, t: float, y: np.ndarray, part: Partition, first_step: float | None):
        full = self.coordinates(run)
        method = run.method if run.method in SCIPY_METHODS and run.method != "LSODA" else "DOP853"
        solver = SCIPY_METHODS[method]
        kwargs: dict[str, Any] = dict(rtol=run.rtol, max_step=run.max_step,
                                      atol=_full_atol(run, full))
        if first_step is not None:
            kwargs["first_step"] = min(float(first_step), abs(run.tf - t))

        native = native_full_solver(run, full, method)
        if native is not None:           # the whole step in compiled code (native_full)
            solver, extra = native
            kwargs.update(extra, on_evaluations=run.count_evaluations)

        compiled = full.native if isinstance(full.native, NativeFullRHS) else None

        def fun(tt, yy):
            run.nfev += 1
            if compiled is not None:        # (scipy's first step and DOP853's dense output)
                ydot, status = compiled(tt, yy)
                if status == 0 and np.isfinite(ydot).all():
                    return ydot
            try:
                return full.rhs(tt, yy)
            except SymbodyError as exc:
                raise StopIntegration(-3, f"{exc}") from exc
            except (FloatingPointError, ZeroDivisionError, OverflowError) as exc:
                raise StopIntegration(-2, f"floating point error at t = {tt:.6g}: {exc}") from exc

        return solver(fun, t, y.copy(), run.tf, **kwargs)

    def accept(self, run: Run, t: float, y: np.ndarray, part: Partition) -> tuple[np.ndarray, bool]:
        projected = self.coordinates(run).project(t, y)
        scale = 1.0 + float(np.max(np.abs(y)))
        moved = float(np.max(np.abs(projected - y)))
        return projected, moved > 10.0 * (run.rtol + float(np.min(run.atol))) * scale

    def output(self, run: Run, t: float, y: np.ndarray, part: Partition) -> np.ndarray:
        return self.coordinates(run).project(t, y)


def native_full_solver(run: Run, full: FullCoordinates, method: str) -> tuple[type, dict] | None:
    """(solver class, extra constructor arguments) for ``method`` with the steps and the
    right-hand side :meth:`FullCoordinates.rhs` in compiled code
    (:mod:`symbody.compilation.native_full`, built once per run), or None when the model
    (not all-C kernels, extra states, inputs that are not constant) or the method needs Python."""
    inputs = run.specifieds
    if inputs is not None and not isinstance(inputs, ConstantInputs):
        return None
    if full.native is False:
        full.native = native_full_rhs(run.model, run.constants,
                                      None if inputs is None else inputs.values, penalty=PENALTY)
    if full.native is None:
        return None
    from .native_rk import native_solver_for
    return native_solver_for(full.native, method)


def _full_atol(run: Run, full: FullCoordinates) -> Any:
    """The run's atol for [q, u_ind, x_e] stretched to [q, u, x_e]."""
    atol = np.asarray(run.atol, dtype=float)
    if atol.ndim == 0:
        return float(atol)
    model = run.model
    N, p = model.N, model.p
    u_tol = np.full(model.o, float(np.min(atol[N:N + p])) if p else float(np.min(atol)))
    return np.concatenate([atol[:N], u_tol, atol[N + p:]])
