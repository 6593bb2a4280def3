"""Constraint mode "dae": SUNDIALS IDA (scikit-sundae) on the index-1 DAE.

    q_ind' = f_q,ind(q, u),    0 = f_h(q, t),    u_ind' = f_u(q, u)

The dependent coordinates are the algebraic variables: the position constraints replace
their kinematic rows.  They get the absolute tolerance 0.01 (atol + rtol), so IDA holds f_h
to its Newton tolerance (about 5e-10 m on the four-bar at rtol = atol = 1e-10); the output
samples' q_dep are then polished by Newton's method on f_h = 0 (``polish_algebraic=False``
returns IDA's values untouched).

IDA is wrapped once, in :class:`IDAStepper`, behind the stepping interface the driver uses
for scipy's solvers: one internal step per ``step()``, and a dense output over the last step
from IDA's own interpolating polynomial (IDASolve in NORMAL mode at a time already passed
interpolates without stepping).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from ...compilation import NumericModel
from ...compilation.numeric_model import Partition
from ...errors import InputError, SymbodyError
from .strategy import ConstraintMode, Run, StopIntegration, ode_function, project_state

__all__ = ["DAE", "IDAStepper"]

#: IDA's Newton iteration stops when the weighted correction is small; the algebraic
#: variables (q_dep) get a tighter absolute tolerance, factor x (atol + rtol), so that f_h
#: is resolved well below the tolerance of the differential variables.  (The rtol term
#: keeps it from collapsing to factor x atol where a dependent coordinate passes zero:
#: IDA's error test on it then stalls the steps at order 1 and dissipates energy.)
ALGEBRAIC_ATOL_FACTOR = 1e-2

#: IDA retries non-finite residuals with ever smaller steps and never gives up: stop after
#: this many at one time
#: the most internal steps IDA takes in one call (between two outputs)
IDA_STEPS_PER_CALL = 50_000
_STALL_LIMIT = 50


class DAE(ConstraintMode):
    """``constraints="dae"``: IDA on the index-1 DAE; ``polish_algebraic`` (default True)
    solves f_h = 0 for q_dep at every output sample (False returns IDA's values unchanged);
    ``switch_threshold``: see :class:`~.strategy.ConstraintMode`."""

    name: ClassVar[str] = "dae"

    def __init__(self, polish_algebraic: bool = True, *,
                 switch_threshold: float = ConstraintMode.SWITCH_THRESHOLD) -> None:
        super().__init__(switch_threshold=switch_threshold)
        self.polish_algebraic = bool(polish_algebraic)
        self.projects_positions = self.polish_algebraic

    def integrator(self, model: NumericModel, method: str | None, rtol: float) -> str:
        if method not in (None, "IDA", "ida"):
            raise InputError(f"constraints='dae' integrates with SUNDIALS IDA; Solver(method={method!r}) "
                             "cannot be used (leave Solver(method=None) or 'IDA')")
        try:
            import sksundae.ida  # noqa: F401
        except ImportError as exc:  # pragma: no cover - dependency
            raise InputError("constraints='dae' needs scikit-sundae (pip install scikit-sundae)") from exc
        return "IDA"

    def start(self, run: Run, t: float, y: np.ndarray, part: Partition,
              first_step: float | None) -> IDAStepper:
        if run.model.M:   # consistent algebraic variables (after a switch of the dependent set)
            y = project_state(run, t, y, part)
        return IDAStepper(run, t, y, part, first_step)

    def finish(self, run: Run, times: list, states: list, parts: list) -> str:
        model = run.model
        if not (model.M and self.polish_algebraic):
            return " (IDA, index-1 DAE)"
        raw = 0.0
        for t, y, part in zip(times, states, parts):
            if not part.dependent_coordinates:
                continue      # full coordinates: already projected (augmented Lagrangian)
            raw = max(raw, float(np.abs(model.holonomic_residual(y[:model.N], run.constants, t)).max()))
            try:
                q, ok, _ = model.project_coordinates(y[:model.N], run.constants, t, max_iter=10,
                                                     partition=part)
            except SymbodyError:
                continue
            if ok:
                y[:model.N] = q
        return (f" (IDA, index-1 DAE); IDA's algebraic variables had max |f_h| = {raw:.2g} at the "
                "samples, polished by Newton's method on q_dep")


class IDAStepper:
    """SUNDIALS IDA behind scipy's OdeSolver stepping interface (t, y, status, step, dense_output).

    Residual: y' - f(t, y) for the differential rows, f_h(q, t) for the rows of the
    dependent coordinates of ``part``.  One ``step()`` goes to the driver's next output
    time (``run.next_output``; IDA interpolates there with its own polynomial) or, without
    output times, one internal step; it stops earlier at a root of the event functions
    ``run.watch`` (IDA's root finding), listing the ones that fired in ``events``.  After
    a root IDA is started again from where it stopped.
    """

    def __init__(self, run: Run, t: float, y: np.ndarray, part: Partition,
                 first_step: float | None) -> None:
        self.run, self.part, self.tf = run, part, run.tf
        self.t, self.y = float(t), np.array(y, dtype=float)
        self.t_old: float | None = None
        self.status = "running"
        self.step_size: float | None = None
        self.events: list[int] = []
        self.failure: list[StopIntegration] = []
        self._direction = np.sign(run.tf - t)
        self._stall: dict[str, Any] = {"t": None, "count": 0}
        self._fun = ode_function(run, part)
        self._first_step = first_step
        self._start()

    def _start(self) -> None:
        """A new IDA instance from (t, y) (at the start and after a root)."""
        from sksundae.ida import IDA

        run, part = self.run, self.part
        # a cap on IDA's internal steps per call: near a singular configuration its Newton
        # iteration can fail step after step without end; the run then stops with a message
        options: dict[str, Any] = dict(rtol=run.rtol, atol=run.atol, linsolver="dense",
                                       max_num_steps=int(min(run.max_num_steps, IDA_STEPS_PER_CALL)))
        qdep = list(part.dependent_coordinates)
        if run.model.M:
            options["algebraic_idx"] = qdep
            atol = np.broadcast_to(np.asarray(run.atol, dtype=float), (len(self.y),)).copy()
            atol[qdep] = ALGEBRAIC_ATOL_FACTOR * (atol[qdep] + run.rtol)
            options["atol"] = atol
        if np.isfinite(run.max_step):
            options["max_step"] = float(run.max_step)
        if self._first_step is not None:
            options["first_step"] = float(self._first_step)
        if run.watch is not None:
            g = run.watch(self.t, self.y, part)

            def eventsfn(t, y, yp, events):
                try:
                    events[:] = g(t, y)
                except Exception:
                    events[:] = 1.0

            eventsfn.terminal = [True, True, True, True]
            eventsfn.direction = [-1, 0, 0, -1]
            options["eventsfn"] = eventsfn
            options["num_events"] = 4
        self._solver = IDA(self._residual_function(qdep), **options)
        self._solver.init_step(self.t, self.y.copy(), self._fun(self.t, self.y))
        self._restart = False

    def _residual_function(self, qdep: list[int]):
        model, P, N, M = self.run.model, self.run.constants, self.run.model.N, self.run.model.M
        fun, failure, stall = self._fun, self.failure, self._stall

        def residual(t, y, yp, res):
            try:
                res[:] = yp - fun(t, y)
                if M:
                    res[qdep] = model.holonomic_residual(y[:N], P, t)
            except StopIntegration as stop:
                if not failure:
                    failure.append(stop)
                res[:] = np.nan
            except KeyboardInterrupt:
                failure.append(StopIntegration(-5, f"interrupted at t = {t:.6g}"))
                res[:] = np.nan
            if failure:
                raise failure[0]          # propagates out of IDA's step() (sksundae re-raises it)
            if not np.isfinite(res).all():
                if stall["t"] is None or abs(t - stall["t"]) > 1e-9 * (1.0 + abs(t)):
                    stall["t"], stall["count"] = t, 0
                stall["count"] += 1
                if stall["count"] > _STALL_LIMIT:
                    msg = self.run.nonfinite_message() or f"non-finite residual at t = {t:.6g}"
                    failure.append(StopIntegration(-2, f"{msg}; the step size collapsed at t = {t:.6g}"))
                    raise failure[0]

        return residual

    def step(self) -> str | None:
        """To the next output time (or one internal step), or to a root of the event functions."""
        if self._restart:
            self._first_step = None
            self._start()
        target = self.run.next_output
        if target is None:
            sol = self._solver.step(self.tf, method="onestep", tstop=self.tf)
        else:
            sol = self._solver.step(float(target), method="normal", tstop=self.tf)
        if self.failure:
            raise self.failure[0]
        if not sol.success:
            self.status = "failed"
            if "mxstep" in str(sol.message).lower() or "max_num_steps" in str(sol.message).lower() \
                    or "too much work" in str(sol.message).lower():
                return (f"IDA took {IDA_STEPS_PER_CALL} internal steps without reaching the next "
                        f"output (near t = {float(sol.t):.6g}): the problem is stiff or singular "
                        f"there ({sol.message})")
            return f"IDA: {sol.message}"
        self.events = []
        if sol.status == 2:            # a root of the event functions: start again from there
            i_ev = np.asarray(sol.i_events)[-1] if sol.i_events is not None else np.zeros(4)
            self.events = [k for k in range(len(i_ev)) if i_ev[k] != 0]
            self._restart = True
        t_new = float(sol.t)
        self.t_old, self.t, self.y = self.t, t_new, np.array(sol.y)
        self.step_size = abs(t_new - self.t_old)
        if self._direction * (self.tf - t_new) <= 0:
            self.status = "finished"
        return None

    def dense_output(self) -> Callable[[float], np.ndarray]:
        """y(t) for t in IDA's last internal step (IDA's interpolating polynomial)."""
        def interpolate(t: float) -> np.ndarray:
            if t == self.t:
                return self.y.copy()
            sol = self._solver.step(float(t), method="normal", tstop=self.tf)
            if not sol.success:
                raise StopIntegration(-1, f"IDA cannot interpolate at t = {t:.6g}: {sol.message}")
            return np.array(sol.y)

        return interpolate
