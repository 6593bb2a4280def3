"""Redundant configuration constraints: more holonomic equations than dependent coordinates.

A closed loop's closure equations can be dependent at every configuration the mechanism
reaches while independent almost everywhere else (Bricard's 6R loop: five equations for
four dependent coordinates, of rank four along the motion).  ``KanesMethod`` accepts such a
set (k > M equations f_h(q, t) = 0, their k derivatives as velocity constraints); this
module compiles and checks it:

- ``compile(eom)`` of equations with ``eom.constraint_excess > 0`` returns a
  :class:`RedundantModel`: a :class:`NumericModel` of a *square* subset of M equations
  (``constraint_rows``; at first the ones independent at a generic configuration), plus a
  kernel of all k equations, their Jacobian J = ∂f_h/∂q (k x N) and the acceleration
  constraint matrix B_a of all rows (k_v x o);
- :meth:`RedundantModel.assemble` (called by ``simulate``) solves all k equations for
  q_dep by least squares (Gauss-Newton / Levenberg-Marquardt, q_ind held) and refuses a
  configuration that cannot be assembled, naming each equation and its residual.  There
  it takes the rank r of J (singular values above 1e-8 of the largest; redundancy is a
  property of the configurations the mechanism reaches, so only an assembled
  configuration shows it):

  * r > M: more independent equations than dependent coordinates, the mechanism has
    N - r degrees of freedom (0 when r = N: it cannot move) but n were declared
    independent: :class:`OverconstrainedError` naming the equations;
  * otherwise a maximal independent subset is kept: the model's own rows when J's rows
    for them, restricted to q_dep, are within a factor 10 of the best conditioned choice
    (column-pivoted QR of ∂f_h/∂q_depᵀ, greedy on the rows' remaining norms), else the
    best choice (a model for those rows, compiled once and kept); the other k - M
    equations are redundant: :class:`RedundantConstraintWarning` names them with their
    expressions.

  The run then uses Kane's minimal form of the kept equations: near the assembled
  configuration the redundant equations follow from them; ``simulate`` chooses again where
  the kept ones degrade and watches all residuals along the run
  (:mod:`symbody.analysis.simulation.redundant`).
- Multipliers: with redundant equations the split of the constraint forces among them is
  not unique.  The generalized constraint force F_c = B_a,keptᵀ λ_kept is; the multipliers
  reported for all k_v rows are the minimum-norm solution of B_aᵀ λ = F_c (least squares,
  ``numpy.linalg.lstsq``).

Velocity constraints beyond the dependent speeds must be the derivatives of the redundant
holonomic equations, the holonomic ones first and in their order (then any nonholonomic
ones); the EquationsOfMotion checks the counts.
"""

from __future__ import annotations

import copy
import random
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy as sm

from ..compat.sympy import TIME
from ..errors import CompilationError, InputError
from .codegen import compile_kernel
from .numeric_model import NumericModel

if TYPE_CHECKING:
    from ..formulation import EquationsOfMotion

__all__ = ["RedundantModel", "RedundantConstraintWarning", "OverconstrainedError",
           "RedundancyReport", "restrict", "generic_rows", "minimum_norm_multipliers"]

#: a singular value of J below RANK_TOL times the largest counts as zero
RANK_TOL = 1e-8
#: the model's own rows are kept while their conditioning is within this factor of the best
KEEP_FACTOR = 0.1


class RedundantConstraintWarning(UserWarning):
    """Some configuration constraints depend on the others at the assembled configuration;
    the message names them (the run uses an independent subset)."""


class OverconstrainedError(InputError):
    """More independent configuration constraints than dependent coordinates at the
    assembled configuration (0 degrees of freedom when as many as coordinates)."""


@dataclass(frozen=True)
class RedundancyReport:
    """What :meth:`RedundantModel.assemble` found at the assembled configuration."""

    names: tuple[str, ...]              #: all k holonomic equations' names
    kept: tuple[str, ...]               #: the M equations the run uses
    redundant: tuple[str, ...]          #: the k - M others
    rows: tuple[int, ...]               #: indices of the kept equations
    rank: int                           #: rank of ∂f_h/∂q (k x N) there
    singular_values: np.ndarray         #: of ∂f_h/∂q, descending
    residuals: np.ndarray               #: f_h (k,) at the assembled configuration
    expressions: tuple                  #: the k equations (SymPy)

    def describe(self) -> str:
        """The redundant equations with their expressions, for messages."""
        parts = []
        for name in self.redundant:
            e = str(self.expressions[self.names.index(name)])
            parts.append(f"{name} = {e if len(e) <= 80 else e[:77] + '...'}")
        return "; ".join(parts)


def _velocity_rows(eom: EquationsOfMotion, rows: Sequence[int]) -> list[int]:
    """The velocity-constraint rows that go with holonomic ``rows`` (the derivatives of the
    holonomic equations come first, in their order; nonholonomic rows follow)."""
    k = eom.holonomic.rows
    return list(rows) + list(range(k, eom.velocity_matrix.rows))


def restrict(eom: EquationsOfMotion, rows: Sequence[int]) -> EquationsOfMotion:
    """The equations with only the holonomic equations ``rows`` (and their velocity and
    acceleration rows): a square set, M equations for M dependent coordinates."""
    rows = sorted(int(i) for i in rows)
    if len(rows) != len(eom.q_dep) or len(set(rows)) != len(rows) \
            or any(not 0 <= i < eom.holonomic.rows for i in rows):
        raise InputError(f"rows {rows} must be {len(eom.q_dep)} distinct indices below "
                         f"{eom.holonomic.rows} (one holonomic equation per dependent coordinate)")
    vrows = _velocity_rows(eom, rows)
    new = copy.copy(eom)
    new.holonomic = sm.ImmutableMatrix(eom.holonomic.extract(rows, [0]))
    new.holonomic_names = tuple(eom.holonomic_names[i] for i in rows)
    o = len(eom.u)
    for name in ("velocity_matrix", "acceleration_matrix"):
        mat = getattr(eom, name)
        setattr(new, name, sm.ImmutableMatrix(mat.extract(vrows, list(range(o)))) if mat.rows else mat)
    for name in ("velocity_rest", "acceleration_rest"):
        mat = getattr(eom, name)
        setattr(new, name, sm.ImmutableMatrix(mat.extract(vrows, [0])) if mat.rows else mat)
    return new


def generic_rows(eom: EquationsOfMotion) -> tuple[int, ...]:
    """M holonomic equations independent in q_dep at a generic configuration (random,
    deterministic: symbols in name order), by column-pivoted QR of ∂f_h/∂q_depᵀ."""
    from scipy.linalg import qr

    fh = sm.Matrix(eom.holonomic)
    J = fh.jacobian(sm.Matrix(eom.q_dep))
    syms = set()
    for e in J:
        syms |= e.free_symbols
        syms |= set(e.atoms(sm.core.function.AppliedUndef))
    rng = random.Random(2)
    vals = {s: sm.Float(rng.uniform(0.3, 1.3)) for s in sorted(syms, key=sm.default_sort_key)}
    try:
        num = np.array(J.xreplace(vals).evalf(), dtype=float)
    except TypeError as exc:
        raise CompilationError("could not evaluate the holonomic constraints' Jacobian at a "
                               "random configuration to choose independent equations") from exc
    piv = qr(num.T, mode="economic", pivoting=True)[2]
    return tuple(sorted(int(i) for i in piv[:len(eom.q_dep)]))


def minimum_norm_multipliers(Ba: np.ndarray, rows: Sequence[int], lam_kept: np.ndarray) -> np.ndarray:
    """λ (k_v,) of least norm with B_aᵀ λ = B_a[rows]ᵀ λ_kept (the same constraint force).

    ``Ba``: all rows (k_v, o); ``lam_kept``: the multipliers of ``rows`` (len(rows),)."""
    force = Ba[list(rows)].T @ lam_kept
    return np.linalg.lstsq(Ba.T, force, rcond=None)[0]


class RedundantModel(NumericModel):
    """A NumericModel of equations with redundant configuration constraints (see the module
    docstring).  Everything a NumericModel does it does for the square subset
    ``constraint_rows``; ``full_eom`` holds all equations, ``constraint_names`` their names,
    :meth:`constraints` evaluates all of them, :meth:`assemble` checks and names them at a
    configuration and :meth:`with_rows` gives the model of another subset.

    Under ``backend="auto"`` its kernels keep the size rule (LLVM when small): with C
    kernels the compiled steps switch the dependent set before the kept equations are chosen
    again where they degrade (as with ``backend="c"``), an open issue."""

    _auto_c_kernels = False

    def __init__(self, eom: EquationsOfMotion, constants: Sequence | None = None,
                 specifieds: Sequence | None = None, backend: str = "auto", cache: bool = True,
                 progress: Any = None, rows: Sequence[int] | None = None) -> None:
        from ..formulation import EquationsOfMotion

        if not isinstance(eom, EquationsOfMotion) or eom.constraint_excess <= 0:
            raise CompilationError("RedundantModel needs EquationsOfMotion with more holonomic "
                                   "equations than dependent coordinates")
        if eom.dynamic_reduced:
            raise CompilationError("redundant configuration constraints need the unreduced dynamic "
                                   "equations (KanesMethod.to_eom()); these are in reduced form")
        rows = generic_rows(eom) if rows is None else tuple(sorted(int(i) for i in rows))
        super().__init__(restrict(eom, rows), constants=constants, specifieds=specifieds,
                         backend=backend, cache=cache, progress=progress)
        q, u = list(eom.q), list(eom.u)
        fh = sm.Matrix(eom.holonomic)
        J = fh.jacobian(sm.Matrix(q))
        Ba = eom.acceleration_matrix
        args = [TIME, *q, *u, *self.specifieds, *self.constants]
        kernel = compile_kernel(args, list(fh) + list(J) + list(Ba), backend=self.backend,
                                cache=cache, name="all holonomic constraints", lazy=True)
        extra = {"full_eom": eom, "constraint_rows": rows,
                 "constraint_names": tuple(eom.holonomic_names),
                 "constraint_equations": tuple(fh), "_k_all": kernel,
                 "velocity_rows": tuple(_velocity_rows(eom, rows)),
                 "_settings": (backend, cache), "_variants": {rows: self}}
        for key, value in extra.items():
            object.__setattr__(self, key, value)

    def __repr__(self) -> str:
        return (super().__repr__()[:-1] + f", {len(self.constraint_names)} holonomic equations "
                f"for {self.M} dependent coordinates (kept: "
                f"{', '.join(self.constraint_names[i] for i in self.constraint_rows)})>")

    def __reduce__(self):
        return _rebuild, (self.full_eom, self.constraint_rows, self.constants, self.specifieds,
                          self._settings)

    def save(self, path: Any, machine_code: bool = True) -> Any:
        """Not available: the model file format holds no SymPy equations, and these models
        need all of them (to choose the kept ones at each run).  ``pickle`` works."""
        raise InputError("a model with redundant configuration constraints cannot be saved to a "
                         "model file yet (it keeps all its equations to choose the independent ones "
                         "at each run); pickle it, or compile equations formed without the redundant "
                         "ones")

    # ----------------------------------------------------------------- evaluation
    def _all_args(self, q, u, p, t, r) -> np.ndarray:
        P = self.constants_array(p)
        u = np.zeros(self.o) if u is None else np.asarray(u, dtype=float)
        r = np.zeros(len(self.specifieds)) if r is None else np.asarray(r, dtype=float).ravel()
        return np.concatenate([[float(t)], np.asarray(q, dtype=float), u, r, P])

    def constraints(self, q: Any, p: Any, t: float = 0.0, u: Any = None,
                    r: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """All k holonomic equations at (t, q): (f_h (k,), ∂f_h/∂q (k, N), B_a (k_v, o))."""
        k, N = len(self.constraint_names), self.N
        out = self._k_all(self._all_args(q, u, p, t, r))
        return out[:k], out[k:k + k * N].reshape(k, N), out[k + k * N:].reshape(-1, self.o)

    def constraints_many(self, t: Any, Q: Any, U: Any, p: Any,
                         R: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`constraints` at many samples: (f (s, k), J (s, k, N), B_a (s, k_v, o))."""
        T = np.atleast_1d(np.asarray(t, dtype=float))
        Q, U = np.atleast_2d(Q), np.atleast_2d(U)
        s, k, N = len(T), len(self.constraint_names), self.N
        P = np.broadcast_to(self.constants_array(p), (s, len(self.constants)))
        R = np.zeros((s, len(self.specifieds))) if R is None else np.asarray(R, dtype=float).reshape(s, -1)
        out = self._k_all.many(np.column_stack([T, Q, U, R, P]))
        return (out[:, :k], out[:, k:k + k * N].reshape(s, k, N),
                out[:, k + k * N:].reshape(s, -1, self.o))

    def with_rows(self, rows: Sequence[int]) -> RedundantModel:
        """The model of the same equations with the holonomic ``rows`` kept (compiled once)."""
        rows = tuple(sorted(int(i) for i in rows))
        got = self._variants.get(rows)
        if got is None:
            backend, cache = self._settings
            got = RedundantModel(self.full_eom, self.constants, self.specifieds, backend=backend,
                                 cache=cache, rows=rows)
            object.__setattr__(got, "_variants", self._variants)
            self._variants[rows] = got
        return got

    # ----------------------------------------------------------------- assembly
    def assemble(self, x: np.ndarray, p: Any, t: float = 0.0, tol: float = 1e-10,
                 warn: bool = True) -> tuple[RedundantModel, np.ndarray, RedundancyReport]:
        """Solve all equations for q_dep (least squares, q_ind held), check the rank and
        choose the equations to keep (see the module docstring).

        ``x``: a state array [q (N), u_ind (p), x_e]; returns (the model for the kept rows,
        x with the assembled q_dep, the report), and warns with
        :class:`RedundantConstraintWarning` naming the redundant equations (unless
        ``warn`` is False).  Raises
        InputError (cannot be assembled: each equation's residual) or
        :class:`OverconstrainedError`.
        """
        from scipy.linalg import qr
        from scipy.optimize import least_squares

        P = self.constants_array(p)
        x = np.array(x, dtype=float)
        n, N, M = self.n, self.N, self.M
        names = self.constraint_names
        q = x[:N].copy()

        def residual(qd):
            q[n:N] = qd
            return self.constraints(q, P, t)[0]

        def jac(qd):
            q[n:N] = qd
            return self.constraints(q, P, t)[1][:, n:N]

        scale = 1.0 + float(np.max(np.abs(x[:N]))) if N else 1.0
        if M:
            sol = least_squares(residual, x[n:N], jac=jac, method="lm", xtol=1e-15, ftol=1e-15,
                                gtol=1e-15, max_nfev=200 * (N + 1))
            x[n:N] = sol.x
        f = residual(x[n:N])
        if not float(np.max(np.abs(f))) <= tol * scale:
            worst = np.argsort(-np.abs(f))
            listing = "; ".join(f"{names[i]} = {_short(self.constraint_equations[i])}: {f[i]:.3g}"
                                for i in worst)
            raise InputError(
                f"the initial configuration cannot be assembled: the {len(names)} configuration "
                f"constraints have no solution in the dependent coordinates "
                f"{', '.join(map(str, self.dependent_coordinates))} with "
                f"{', '.join(map(str, self.independent_coordinates))} held; least squares from the "
                f"given guess leaves the residuals {listing}")
        q = x[:N]
        f, J, _ = self.constraints(q, P, t)
        sv = np.linalg.svd(J, compute_uv=False)
        rank = int(np.sum(sv > RANK_TOL * max(float(sv[0]) if sv.size else 0.0, 1e-300)))
        if rank > M:
            indep = qr(J.T, mode="economic", pivoting=True)[2][:rank]
            dof = N - rank
            what = ("the mechanism cannot move (0 degrees of freedom)" if dof <= 0 else
                    f"the mechanism has {dof} degree{'s' if dof != 1 else ''} of freedom, but "
                    f"{n} coordinate{'s are' if n != 1 else ' is'} declared independent")
            raise OverconstrainedError(
                f"over-constrained: at the assembled configuration the {len(names)} configuration "
                f"constraints have rank {rank} (independent: "
                f"{', '.join(names[i] for i in sorted(indep))}) for {M} dependent coordinates "
                f"and {N} coordinates: {what}; equations: "
                + "; ".join(f"{nm} = {_short(e)}" for nm, e in zip(names, self.constraint_equations,
                                                                    strict=True)))
        Jdep = J[:, n:N]
        best = tuple(sorted(int(i) for i in qr(Jdep.T, mode="economic", pivoting=True)[2][:M]))
        own = _smallest_sv(Jdep[list(self.constraint_rows)])
        model = self
        if own < KEEP_FACTOR * _smallest_sv(Jdep[list(best)]):
            model = self.with_rows(best)
        rows = model.constraint_rows
        kept = tuple(names[i] for i in rows)
        redundant = tuple(nm for i, nm in enumerate(names) if i not in rows)
        report = RedundancyReport(tuple(names), kept, redundant, rows, rank, sv, f,
                                  tuple(self.constraint_equations))
        if warn:
            warnings.warn(RedundantConstraintWarning(
                f"redundant configuration constraints: {report.describe()} (at the assembled "
                f"initial configuration the {len(names)} equations have rank {rank}); simulating "
                f"with {', '.join(kept)}; the multipliers are the minimum-norm ones (their split "
                "among redundant equations is not unique)"), stacklevel=3)
        return model, x, report


def _smallest_sv(A: np.ndarray) -> float:
    s = np.linalg.svd(A, compute_uv=False)
    return float(s[-1]) if s.size else 0.0


def _short(e: Any) -> str:
    s = str(e)
    return s if len(s) <= 80 else s[:77] + "..."


def _rebuild(eom, rows, constants, specifieds, settings) -> RedundantModel:
    backend, cache = settings
    return RedundantModel(eom, constants, specifieds, backend=backend, cache=cache, rows=rows)
