"""Constraint mode "project": hold q on f_h(q, t) = 0 by projection after the steps.

After every accepted step the state is moved back onto the constraints by Newton's
method on the dependent coordinates (the independent ones held), and every output sample
(interpolated by the step's dense output) is projected the same way, so the residuals of
the returned trajectory stay at round-off at any tolerance.

The solver is driven through scipy's public interface (and the step size it proposes
next, ``h_abs``): when the correction after a step exceeds ``drift_tolerance``, the solver
is restarted from the projected state with its last step (a restart costs one evaluation,
the same as refreshing the solver's derivative would), or, when it took only that one step
since the last restart, with the step it would have taken next, so that restarts after
every step do not freeze the step size; smaller corrections are applied to the recorded
state only, and the solver continues from its own state, whose drift therefore stays below
the tolerance.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...compilation import NumericModel
from ...compilation.linear_algebra import max_norm
from ...compilation.numeric_model import Partition
from ...errors import InputError
from .strategy import ConstraintMode, Run, project_state, project_states

__all__ = ["Projection"]


class Projection(ConstraintMode):
    """``constraints="project"``.

    ``drift_tolerance``: the largest correction of a coordinate after a step that is
    not fed back into the solver (a larger one restarts it from the projected state);
    default ``None``: 10 x (rtol + atol), a fraction of what the step's own error test
    allows, so the solver never integrates far from the constraints.  ``0`` restarts
    after every step that needs any correction.  ``switch_threshold``: see
    :class:`~.strategy.ConstraintMode`.
    """

    name: ClassVar[str] = "project"
    projects_positions = True

    def __init__(self, drift_tolerance: float | None = None, *,
                 switch_threshold: float = ConstraintMode.SWITCH_THRESHOLD) -> None:
        super().__init__(switch_threshold=switch_threshold)
        if drift_tolerance is not None and not (np.isfinite(drift_tolerance) and drift_tolerance >= 0):
            raise InputError(f"Projection(drift_tolerance={drift_tolerance}) must be a "
                             "non-negative number")
        self.drift_tolerance = drift_tolerance

    def integrator(self, model: NumericModel, method: str | None, rtol: float) -> str:
        method = super().integrator(model, method, rtol)
        if method == "LSODA" and model.M:
            raise InputError("constraints='project' needs to restart the solver from a projected "
                             "state, which LSODA's history makes costly; use 'RK45', 'DOP853', "
                             "'Radau' or 'BDF', or constraints='dae' / 'baumgarte'")
        return method

    def _tolerance(self, run: Run) -> float:
        if self.drift_tolerance is not None:
            return self.drift_tolerance
        atol = run.atol          # (a number, or one per state: the smallest; at every step)
        return 10.0 * (run.rtol + (atol if isinstance(atol, float) else float(np.min(atol))))

    def accept(self, run: Run, t: float, y: np.ndarray, part: Partition) -> tuple[np.ndarray, bool]:
        if not run.model.M:
            return y, False
        projected = project_state(run, t, y, part)
        N = run.model.N
        scale = 1.0 + max_norm(y[:N])
        moved = max_norm(projected[:N] - y[:N])
        return projected, moved > self._tolerance(run) * scale

    def output(self, run: Run, t: float, y: np.ndarray, part: Partition) -> np.ndarray:
        return project_state(run, t, y, part) if run.model.M else y

    def output_many(self, run: Run, times: np.ndarray, Y: np.ndarray, part: Partition) -> np.ndarray:
        return project_states(run, times, Y, part) if run.model.M else Y
