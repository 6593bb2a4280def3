"""Simulating equations with redundant configuration constraints (the driver's side).

``simulate`` on a :class:`~symbody.compilation.redundant.RedundantModel` first calls
:func:`prepare`: the model assembles the initial configuration with all k equations
(least squares), refuses an unassemblable or over-constrained one, names the redundant
equations (:class:`~symbody.RedundantConstraintWarning`) and picks the independent subset
the run uses.  The run itself is an ordinary run of that square model.  Afterwards
:func:`annotate` evaluates all k equations at the samples and adds to the trajectory:

- ``redundant_constraints``: the names of the equations left out (tuple);
- ``redundancy``: the :class:`~symbody.compilation.redundant.RedundancyReport`;
- ``constraint_residuals``: f_h of all k equations at the samples (s, k), and
  ``constraint_rank``: the rank of ∂f_h/∂q at each sample (s,) — the watch along the run;
- ``multipliers``: for all k_v velocity-constraint rows, the minimum-norm ones (the split of
  the constraint forces among redundant equations is not unique; B_aᵀ λ is);
- a note in ``message`` naming the redundant equations, the largest residual of the
  redundant equations along the run and the rank's range.  A residual above 1e-6 warns
  (the kept equations stopped implying the others: no re-selection along a run yet).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ...compilation.redundant import (
    RANK_TOL,
    RedundancyReport,
    RedundantConstraintWarning,
    RedundantModel,
    minimum_norm_multipliers,
)
from ..initial_state import InitialStateWarning

__all__ = ["prepare", "annotate", "DRIFT_WARNING"]

#: a redundant equation's residual above this along the run warns
DRIFT_WARNING = 1e-6


def prepare(model: RedundantModel, t0: float, x0: Any,
            p: Any) -> tuple[RedundantModel, np.ndarray, RedundancyReport]:
    """(the model of the kept equations, the state with the assembled q_dep, the report)."""
    P = model.constants_array(p)
    x = model.state_array(x0)
    square, assembled, report = model.assemble(x, P, t0)
    n, N = model.n, model.N
    notes = [f"{model.coordinates[i]} = {x[i]:.10g} (used {assembled[i]:.10g})"
             for i in range(n, N) if abs(x[i] - assembled[i]) > 1e-8 * (1.0 + abs(assembled[i]))]
    if notes:
        warnings.warn("x0 gave dependent coordinates that miss the configuration constraints; "
                      "solved by least squares with "
                      f"{', '.join(map(str, model.independent_coordinates))} held: " + "; ".join(notes),
                      InitialStateWarning, stacklevel=3)
    return square, assembled, report


def annotate(traj: Any, report: RedundancyReport, model: RedundantModel, P: np.ndarray) -> None:
    """Add the redundant equations' names, residuals, rank and the minimum-norm multipliers
    to ``traj`` (see the module docstring); appends a note to ``traj.message``."""
    traj.redundant_constraints = report.redundant
    traj.redundancy = report
    k = len(report.names)
    s = len(traj.t)
    R = getattr(traj, "specified_values", None)
    if R is not None and R.shape[1] != len(model.specifieds):
        R = None
    if s:
        f, J, Ba = model.constraints_many(traj.t, traj.q, traj.u, P, R)
    else:
        f, J, Ba = np.empty((0, k)), np.empty((0, k, model.N)), np.empty((0, 0, model.o))
    traj.constraint_residuals = f
    ranks = np.zeros(s, dtype=int)
    for i in range(s):
        if not np.all(np.isfinite(J[i])):
            ranks[i] = -1
            continue
        sv = np.linalg.svd(J[i], compute_uv=False)
        ranks[i] = int(np.sum(sv > RANK_TOL * max(float(sv[0]) if sv.size else 0.0, 1e-300)))
    traj.constraint_rank = ranks
    if traj.multipliers is not None and s:
        vrows = model.velocity_rows
        lam = np.full((s, Ba.shape[1]), np.nan)
        for i in range(s):
            li = traj.multipliers[i]
            if np.all(np.isfinite(li)) and np.all(np.isfinite(Ba[i])):
                lam[i] = minimum_norm_multipliers(Ba[i], vrows, li)
        traj.multipliers = lam
    red_idx = [report.names.index(nm) for nm in report.redundant]
    drift = float(np.nanmax(np.abs(f[:, red_idx]))) if s and red_idx else 0.0
    valid = ranks[ranks >= 0]
    rank_text = (f"rank {valid.min()}" if valid.size and valid.min() == valid.max() else
                 f"rank {valid.min()} to {valid.max()}" if valid.size else "rank unknown")
    note = (f"; redundant configuration constraints {', '.join(report.redundant)} (the "
            f"{k} equations have {rank_text} along the run; simulated with "
            f"{', '.join(report.kept)}; max |residual| of the redundant ones {drift:.2g}; "
            "minimum-norm multipliers)")
    traj.message = traj.message + note
    if drift > DRIFT_WARNING:
        warnings.warn(RedundantConstraintWarning(
            f"the redundant configuration constraints {', '.join(report.redundant)} reach a "
            f"residual of {drift:.3g} along the run: the kept equations {', '.join(report.kept)} "
            "no longer imply them there (the kept set is chosen at the initial configuration only)"),
            stacklevel=3)
