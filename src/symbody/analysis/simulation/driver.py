"""simulate(): the driver that integrates a NumericModel without constraint drift.

The ODE state is x = [q_ind, q_dep, u_ind] (``model.states``).  Dependent speeds are
never integrated: each evaluation solves them from the velocity constraints, so
nonholonomic constraints (and the velocity form of holonomic ones) hold to round-off by
construction.  What can drift is the position level, f_h(q) = 0, which the constraint
mode handles (one module each, behind :class:`~.strategy.ConstraintMode`):

``"none"``       :class:`~.plain.Plain`: plain ODE; f_h drifts (the books' approach).
``"baumgarte"``  :class:`~.baumgarte.Baumgarte`: q_dep' <- q_dep' - α J_dep^{-1} f_h.
``"project"``    :class:`~.projection.Projection`: Newton's method on q_dep after each step
                 and at each output sample: residuals at round-off at any tolerance; a
                 correction is fed back into the solver (a restart) only above its
                 ``drift_tolerance`` (counted in ``Trajectory.projection_restarts``).
``"dae"``        :class:`~.dae.DAE`: SUNDIALS IDA on the index-1 DAE.
``"auto"``       "project" when the model has holonomic constraints, else "none".

The driver owns the loop (one stepper per segment, accepted steps one at a time), the
output sampling from each step's dense output, the dependent-set monitor
(:mod:`.dependent_set`: switching at singular configurations), progress and failure
handling; the samples become a Trajectory in :mod:`.samples`.

Where later features plug in: a zero-crossing event is located on each accepted step's
dense output exactly as the dependent-set events are (:meth:`_Segments.step_events`); a
terminal event raises StopIntegration(0, ...) at its time; an impact map ends the segment
with a new state (as a switch of the dependent set does), and the next segment restarts
the stepper there.  Extra first-order states are columns of y handled by the model's rhs.
"""

from __future__ import annotations

import functools
import inspect
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from ...compilation import NumericModel
from ...compilation.friction_models import has_exact_friction
from ...compilation.redundant import RedundantModel
from ...errors import InputError, SimulationError, SimulationFailedWarning
from ...progress import as_progress
from ..body_check import check_body_inertias
from ..contact_samples import attach_contacts
from ..dense_output import StepRecorder
from ..events import PreparedEvents, prepare_events
from ..initial_state import initial_state
from ..inputs import specified_inputs
from ..outputs import attach_outputs, parse_outputs
from ..trajectory import RunReport, Trajectory
from . import friction_pieces, redundant
from .augmented import ENTER_RANK, full_partition
from .contact_events import (
    DEPTH_STATUS,
    impact_states_at_rest,
    with_contact_events,
)
from .dependent_set import DependentSetMonitor, remap, switch_note
from .options import (
    MODES,
    Solver,
    constraint_mode,
    legacy_options,
    output_times,
    solver_type_message,
    time_span,
)
from .samples import Samples, build_trajectory
from .segments import (  # noqa: F401 (re-exported: the loop's names lived here)
    PENDING_ROWS,
    ZENO_IMPACTS,
    ZENO_TIME_FRACTION,
    _Dense,
    _restart_step,
    _Segments,
    _Terminal,
)
from .stiffness import StiffnessMonitor
from .strategy import ConstraintMode, Run, StopIntegration

__all__ = ["simulate", "MODES", "STATUS", "deprecated_keywords"]

#: Trajectory.status values.
STATUS = {
    0: "success",
    -1: "integration failed (step size collapsed or too many steps)",
    -2: "non-finite values",
    -3: "singular matrix (constraint Jacobian or mass matrix, singular configuration)",
    -4: "projection onto the constraints did not converge",
    -5: "interrupted",
    -6: "error raised by a user callable (specifieds)",
    -7: "events accumulate (Zeno): impacts ever closer together",
    DEPTH_STATUS: "a contact penetrated deeper than its model allows (a sphere's radius)",
}


def deprecated_keywords(function: Callable[..., Trajectory]) -> Callable[..., Trajectory]:
    """``simulate`` that still takes the keywords of its old flat signature (``rtol=``,
    ``method=``, ``baumgarte=``, ``progress=``, ...) for one release: each is folded into
    ``solver=`` / ``constraints=`` with a DeprecationWarning (see
    :func:`~.options.legacy_options`); an unknown keyword raises TypeError naming it."""
    known = set(inspect.signature(function).parameters)

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Trajectory:
        if len(args) > 4:
            raise TypeError(_positional_options_message(args[4:]))
        legacy = {k: kwargs.pop(k) for k in list(kwargs) if k not in known}
        if legacy:
            model = args[0] if args else kwargs.get("model")
            kwargs["constraints"], kwargs["solver"] = legacy_options(
                model, kwargs.get("constraints", "auto"), kwargs.get("solver"), legacy)
        return function(*args, **kwargs)

    return wrapper


def _positional_options_message(extra: tuple) -> str:
    """The TypeError for options given by position: they are keyword-only; names the keyword
    the first extra argument probably belongs to."""
    first = extra[0]
    if isinstance(first, Solver):
        hint = "solver=Solver(...)"
    elif isinstance(first, ConstraintMode) or isinstance(first, str):
        hint = f"constraints={first!r}"
    else:
        hint = "solver=Solver(...), constraints=..., t_eval=..."
    return (f"simulate() takes 4 positional arguments (model, t_span, x0, p) but {4 + len(extra)} "
            f"were given; the options are keyword-only: {hint}")


@deprecated_keywords
def simulate(model: NumericModel, t_span: Sequence[float], x0: Any, p: Any, *,
             constraints: str | ConstraintMode = "auto", solver: Solver | None = None,
             t_eval: Sequence[float] | None = None, specifieds: Any = None, events: Any = None,
             outputs: Any = None) -> Trajectory:
    """Integrate ``model`` from ``t_span[0]`` to ``t_span[1]``; returns a :class:`Trajectory`.

    The options after the first four (``model``, ``t_span``, ``x0``, ``p``) are keyword-only;
    how to integrate is one :class:`~.options.Solver` object, how to keep the constraints one
    constraint mode::

        sol = simulate(model, (0, 10), x0, p, constraints=Baumgarte(alpha=50.0),
                       solver=Solver(rtol=1e-8, max_step=0.01), t_eval=np.linspace(0, 10, 501))

    Parameters
    ----------
    model : NumericModel (``symbody.compile(eom)``).
    t_span : (t0, tf); tf < t0 (integrating backwards in time) only with
        ``Solver(backwards=True)``.
    x0 : initial state as a dict keyed by symbol or name, or an array in
        ``model.states`` order [q (N), u_ind (p)] (or [q (N), u (o)]).  Dependent
        coordinates are solved from f_h = 0 by Newton's method (q_ind held) and dependent
        speeds from the velocity constraints; a given dependent value that disagrees
        gets an :class:`~symbody.analysis.initial_state.InitialStateWarning` saying by
        how much and what was used.
    p : constants, array in ``model.constants`` order or dict keyed by symbol or name.
    constraints : "auto" (default: drift-free), "none", "baumgarte", "project", "dae", or a
        constraint-mode object with its options, e.g. ``Baumgarte(alpha=50.0)``,
        ``Projection(drift_tolerance=0.0)``, ``DAE(polish_algebraic=False)``; every mode
        object takes ``switch_threshold`` (default 0.1): the dependent coordinates/speeds
        are switched where ``|det|`` of their columns of ∂f_h/∂q or B falls below this
        fraction of the best choice's; 0 disables switching and the full-coordinate spans (the
        run then stops where it sees the set become singular: a sign change of its
        determinant, or the rank measure of the whole Jacobian dipping inside a step (a rank
        drop by an even number); see :mod:`.dependent_set` and docs/guides/hard_mechanisms.md).
    solver : :class:`~.options.Solver`: ``method``, ``rtol``, ``atol``, ``max_step``,
        ``first_step``, ``max_num_steps``, ``jacobian``, ``backwards``, ``raise_on_failure``,
        ``progress`` (default ``Solver()``: DOP853 at rtol 1e-6, atol 1e-9; RK45 when
        rtol >= 1e-5 and no method is given).
    t_eval : output times (default: every accepted step).
    specifieds : values of the specified inputs (see :mod:`symbody.analysis.inputs`):
        numbers (array / dict), a callable ``r(t, x) -> array``, SymPy expressions of t
        (and states, constants; compiled), :class:`~symbody.Tabulated` ``(t, values)``
        data (interpolated), or a dict mixing these per input.
    events : :class:`~symbody.Event` objects (see :mod:`symbody.analysis.events`): zero
        crossings of conditions located on each step's dense output; a terminal event
        stops the run (status 0), an action (impact map) restarts it from the new state.
        The trajectory lists them in ``events`` and its pieces between impacts in
        ``segments``.  Impacts that accumulate (Zeno: a ball bouncing ever lower, the
        intervals shrinking geometrically) stop the run with status -7 at the accumulation
        time; no resting contact is switched to (see docs/guides/events.md).  A model's
        contacts (``model.contacts``) add their touchdown, lift-off and damping switches as
        events that start a new segment (:mod:`.contact_events`), and their quantities go
        into ``trajectory.contacts`` (:mod:`symbody.analysis.contact_samples`).
    outputs : quantities to evaluate along the trajectory into ``trajectory.outputs``:
        ``{name: SymPy expression}`` in t, q, u, u', constants and specified inputs
        (compiled), and/or the built-ins "specifieds", "constraint_forces",
        "auxiliary_forces" (see :mod:`symbody.analysis.outputs`).

    Notes
    -----
    The keywords of the old flat signature (``rtol=``, ``method=``, ``baumgarte=``,
    ``polish_algebraic=``, ``switch_threshold=``, ``progress=``, ...) still work for one
    release with a DeprecationWarning naming the new spelling.

    Returns
    -------
    Trajectory
        ``status`` 0 on success, otherwise one of :data:`STATUS` (-1 step size collapse,
        -2 non-finite values, -3 singular matrix, -4 projection failure, -5 interrupted,
        -6 user callable raised, -7 events accumulate, -8 a contact penetrated deeper than
        its model allows) with a ``message`` saying what
        happened and when.  The
        switches of the dependent set are listed in ``trajectory.partition_changes``; q, u
        and x stay in model order.  Without ``Solver(raise_on_failure=True)`` a failed run
        returns its trajectory and warns with :class:`~symbody.SimulationFailedWarning`.
    """
    options = {k: v for k, v in locals().items() if k not in ("model", "t_span", "x0", "p")}
    if not isinstance(model, NumericModel):
        raise InputError(f"simulate() needs a NumericModel (symbody.compile(eom)), got "
                         f"{type(model).__name__}")
    solver = _checked_solver(solver)
    if isinstance(model, RedundantModel) and not redundant.inside():
        # more configuration constraints than dependent coordinates: assembled by least
        # squares, named, run with an independent subset chosen again where it degrades
        # (simulation/redundant.py), each piece by this function
        return redundant.simulate_pieces(simulate, model, t_span, x0, p, options)
    if has_exact_friction(model) and not friction_pieces.inside():
        # exact Coulomb friction: pieces of constant stick/slip modes, each an ordinary run of
        # its pattern's compiled variant, switched at events (simulation/friction_pieces.py)
        return friction_pieces.simulate_modes(simulate, model, t_span, x0, p, options)
    t0, tf = _checked_span(t_span, solver)
    mode = constraint_mode(model, constraints)
    run, x, watcher = _prepare(model, (t0, tf), x0, p, mode, solver, specifieds, events, outputs)
    t_eval = output_times(t_eval, t0, tf)
    bar = as_progress(solver.progress, f"simulate ({mode.name})", total=abs(tf - t0))
    start = time.perf_counter()
    monitor = DependentSetMonitor(model, run.constants, run.specifieds, mode.switch_threshold,
                                  solver.rtol)
    run.watch = monitor.watch if monitor.active else None
    samples = Samples(model, model.default_partition)
    try:
        y = _initial_partition(run, monitor, x, samples)
    except StopIntegration as stop:
        raise InputError(f"initial state: {stop.message}") from None
    segments = _Segments(run, mode, monitor, samples, t_eval, bar, watcher)
    # the method simulate chose itself gives way to Radau where the problem turns stiff
    segments.stiffness = StiffnessMonitor.for_run(run.method, solver.method is None)
    if solver.dense_output:
        segments.steps = StepRecorder(run.method, model.N + model.o + model.e)
    # the linear algebra here is on small matrices, where BLAS threads only wait for each
    # other (and for other processes on a busy machine): one thread while integrating
    with _one_blas_thread():
        status, message = segments.integrate(y, solver.first_step)
        note = mode.finish(run, samples.T, samples.Y, [samples.partitions[i] for i in samples.pid])
        note += segments.stiffness.note() if segments.stiffness is not None else ""
        if status == 0:
            message = _success_message(segments, note, tf)
        message = switch_note(samples, message)
        wall = time.perf_counter() - start
        bar.close(message if status else "")
        report = RunReport(status=status, message=message, constraints=mode.name,
                           method=run.method, nfev=run.nfev, nsteps=segments.nsteps,
                           wall_time=wall, partition_changes=samples.changes,
                           events=list(segments.records) or (),
                           segments=segments.spans(samples),
                           projection_restarts=segments.restarts)
        traj = build_trajectory(run, samples, report, steps=segments.steps,
                                positions=mode.projects_positions)
        attach_outputs(traj, model, run.constants, run.specifieds, outputs)
        attach_contacts(traj, model, run.constants, run.specifieds)
        if status != 0:
            if solver.raise_on_failure:
                raise SimulationError(message, trajectory=traj)
            warnings.warn(SimulationFailedWarning(f"simulate failed (status {status}): {message}", status),
                          stacklevel=3)
    return traj


#: (number of modules imported, ThreadpoolController) of the last run: finding the BLAS
#: libraries takes about 0.5 ms, as long as a short run; found again once modules were imported
#: since (one of them may have loaded another BLAS)
_BLAS_CONTROLLER: list = [-1, None]


def _one_blas_thread() -> Any:
    """A context in which the BLAS libraries use one thread (``threadpool_limits(limits=1,
    user_api="blas")`` with the libraries found once, not at every run)."""
    import sys

    if _BLAS_CONTROLLER[0] != len(sys.modules):
        _BLAS_CONTROLLER[:] = [len(sys.modules), ThreadpoolController()]
    return _BLAS_CONTROLLER[1].limit(limits=1, user_api="blas")


def _checked_solver(solver: Any) -> Solver:
    """``solver`` (None: the defaults), checked to be a :class:`Solver`."""
    if solver is None:
        return Solver()
    if not isinstance(solver, Solver):
        raise InputError(solver_type_message(solver))
    return solver


def _checked_span(t_span: Any, solver: Solver) -> tuple[float, float]:
    """(t0, tf); a reversed span only with ``Solver(backwards=True)``."""
    t0, tf = time_span(t_span)
    if tf < t0 and not solver.backwards:
        raise InputError(f"t_span = ({t0:g}, {tf:g}) ends before it starts: integrating backwards in "
                         "time needs solver=Solver(backwards=True) (or give t_span in increasing "
                         "order)")
    return t0, tf


def _success_message(segments: Any, note: str, tf: float) -> str:
    """The message of a run that reached tf or was stopped by a terminal event."""
    message = (f"{segments.stopped_by}{note}" if segments.stopped_by
               else f"success: integrated to t = {tf:.6g}{note}")
    if segments.records:
        n = len(segments.records)
        message += f" ({n} event{'s' if n > 1 else ''}: trajectory.events)"
    return message


def _prepare(model: NumericModel, span: tuple[float, float], x0: Any, p: Any,
             mode: ConstraintMode, solver: Solver, specifieds: Any, events: Any,
             outputs: Any) -> tuple[Run, np.ndarray, PreparedEvents | None]:
    """The checked problem: (Run, the consistent initial state, the prepared events)."""
    t0, tf = span
    x0 = impact_states_at_rest(model, x0)
    method = mode.integrator(model, solver.method, solver.rtol)
    n_states = len(model.states)
    atol_arr = np.asarray(solver.atol, dtype=float)
    if atol_arr.ndim == 1 and atol_arr.size != n_states:
        raise InputError(f"atol has {atol_arr.size} values; give one number or one per state "
                         f"({n_states} = N + p + extra states: {', '.join(map(str, model.states))})")
    atol = atol_arr if atol_arr.ndim else float(atol_arr)
    parse_outputs(model, outputs)
    P = model.constants_array(p)
    check_body_inertias(model, P)            # m > 0, inertia >= 0 with these numbers
    x = model.state_array(x0)
    r_fun = specified_inputs(model, specifieds, P, (t0, tf), x)
    x = initial_state(model, x0, P, t0, r_fun)
    watcher = prepare_events(model, with_contact_events(model, events, P), P, r_fun)
    run = Run(model, P, r_fun, t0, tf, solver.rtol, atol, method=method,
              max_step=solver.max_step, max_num_steps=solver.max_num_steps)
    run.options["exact_jacobian"] = solver.jacobian != "finite-differences"
    run.options["jacobian"] = solver.jacobian
    return run, x, watcher


def _initial_partition(run: Run, monitor: DependentSetMonitor, x: np.ndarray,
                       samples: Samples) -> np.ndarray:
    """Switch at t0 when the model's own dependent set is poorly conditioned there."""
    model, t0 = run.model, run.t0
    part = model.default_partition
    if not (monitor.active and monitor.switch):
        return x
    if monitor.rank(t0, x) < ENTER_RANK:
        # the constraint Jacobian has (nearly) lost rank here: start in full coordinates
        full = full_partition(model)
        y = remap(model, t0, x, run.constants, part, full)
        samples.switch(t0, full)
        return y
    if monitor.gauge(t0, x, part).ratio >= monitor.threshold:
        return x
    new = model.choose_partition(x[:model.N], run.constants, t0)
    if new == part:
        return x
    y = remap(model, t0, x, run.constants, part, new)
    samples.switch(t0, new)
    return y
