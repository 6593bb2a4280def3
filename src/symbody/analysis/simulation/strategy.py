"""The interface between the simulation driver and the constraint modes.

A constraint mode (``none``, ``baumgarte``, ``project``, ``dae``) is a
:class:`ConstraintMode` object.  The driver (:mod:`.driver`) owns the loop: it starts a
*stepper* for each segment of the integration (a segment ends where the dependent set
switches, or where a mode asks to restart), takes accepted steps one at a time, samples
the output from each step's dense output, watches the dependent set, reports progress and
turns failures into a partial trajectory.  A mode supplies only what differs:

- :meth:`ConstraintMode.integrator`: which integrator it uses (checked against ``method``);
- :meth:`ConstraintMode.start`: a stepper for one segment, from (t, y) in the layout of a
  :class:`~symbody.compilation.numeric_model.Partition`;
- :meth:`ConstraintMode.accept`: what becomes of the state after an accepted step
  (projection), and whether the stepper must restart from the corrected state;
- :meth:`ConstraintMode.output`: an output sample taken inside a step (projection);
- :meth:`ConstraintMode.finish`: a last pass over the samples (IDA's algebraic polish).

A stepper is anything with the public stepping interface of scipy's ``OdeSolver``:
attributes ``t``, ``y``, ``status`` ("running", "finished", "failed"), ``step_size``,
and methods ``step() -> message | None`` and ``dense_output() -> callable(t)``.
scipy's solvers are used as they are; SUNDIALS IDA is wrapped once
(:class:`~.dae.IDAStepper`).  A stepper may also locate roots of event functions itself
(IDA does): it then stops at ``run.next_output`` and at the roots of ``run.watch``'s
functions, and lists the indices of those that fired in its attribute ``events``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np
from scipy.integrate import BDF, DOP853, LSODA, RK23, RK45, Radau

from ...compilation import NumericModel
from ...compilation.native_constraints import native_constraints
from ...compilation.numeric_model import Partition
from ...errors import InputError, SymbodyError
from ..inputs import ConstantInputs, ExpressionInputs, InputsWithDerived
from .explicit_tableaux import EXPLICIT_PAIRS
from .nonfinite import NonFinite

__all__ = ["ConstraintMode", "Stepper", "Run", "StopIntegration", "ode_function", "SCIPY_METHODS",
           "switch_threshold_value"]

#: the integrators by name: scipy's, and the explicit pairs of :mod:`.explicit_tableaux`
#: (scipy ``RungeKutta`` subclasses: "Tsit5", "Vern6")
SCIPY_METHODS = {"RK23": RK23, "RK45": RK45, "DOP853": DOP853, **EXPLICIT_PAIRS, "Radau": Radau,
                 "BDF": BDF, "LSODA": LSODA}


class StopIntegration(Exception):
    """Stop the integration with a :data:`~.driver.STATUS` code and a message.

    ``at``: (t, state) where it happened, when known.
    """

    def __init__(self, status: int, message: str, at: tuple | None = None):
        super().__init__(message)
        self.status, self.message = status, message
        self.at = at


class Stepper(Protocol):
    """The public stepping interface of scipy's OdeSolver (what the driver uses)."""

    t: float
    y: np.ndarray
    status: str
    step_size: float | None

    def step(self) -> str | None: ...

    def dense_output(self) -> Any: ...


@dataclass
class Run:
    """What every part of one simulation shares: the problem, the options and the counters."""

    model: NumericModel
    constants: np.ndarray                  #: P, in model.constants order
    specifieds: Any                        #: r(t, x) -> array, or None
    t0: float
    tf: float
    rtol: float
    atol: Any                              #: float or (N + p,)
    method: str = ""
    max_step: float = math.inf
    max_num_steps: int = 10_000_000
    #: the driver's next output time (None: every step is an output): where a stepper that
    #: outputs by stopping rather than by dense output (IDA) stops next
    next_output: float | None = None
    #: event functions g(t, y) for steppers with their own root finding: a factory
    #: watch(t0, y0, partition) -> g (see DependentSetMonitor.watch), or None
    watch: Any = None
    nfev: int = 0                          #: right-hand-side evaluations
    nonfinite: NonFinite | None = None     #: the last non-finite derivative (see nonfinite_message)
    options: dict = field(default_factory=dict)

    def count_evaluations(self, k: int) -> None:
        """Add ``k`` right-hand-side evaluations made outside :func:`ode_function` (compiled steps)."""
        self.nfev += k

    def nonfinite_message(self) -> str | None:
        """What the last non-finite derivative was: the entry of x', its equation and term
        (:mod:`.nonfinite`); None when there was none."""
        return None if self.nonfinite is None else self.nonfinite.message(self, state_name)


class ConstraintMode:
    """One way of handling the position-level constraints f_h(q, t) = 0 (see the module doc).

    Subclasses set :attr:`name` and override what differs; the defaults integrate the
    plain ODE x' = f(t, x) with a scipy solver.
    """

    name: ClassVar[str] = "none"

    #: the default ``switch_threshold`` (see :meth:`__init__`)
    SWITCH_THRESHOLD: ClassVar[float] = 0.1
    #: (a class default too, for subclasses whose __init__ does not call this one's)
    switch_threshold: float = SWITCH_THRESHOLD
    #: True when the mode's output samples are on f_h = 0 (projected): the trajectory's
    #: interpolant then puts its positions back on f_h = 0 between the samples too (its
    #: dependent speeds are solved from the velocity constraints in every mode)
    projects_positions: bool = False

    def __init__(self, *, switch_threshold: float = SWITCH_THRESHOLD) -> None:
        """``switch_threshold``: the dependent coordinates/speeds are switched where ``|det|``
        of their columns of ∂f_h/∂q or B falls below this fraction of the best choice's
        (column-pivoted QR); 0.1 by default.  0 disables switching: the integration then
        stops where the set becomes singular (see :mod:`.dependent_set`; seen by a sign
        change of the determinant, or by the whole Jacobian's rank measure dipping inside a
        step for a rank drop by an even number).  Every mode takes it, e.g.
        ``Projection(switch_threshold=0.05)``."""
        self.switch_threshold = switch_threshold_value(switch_threshold)

    def integrator(self, model: NumericModel, method: str | None, rtol: float) -> str:
        """The integrator to use: ``method`` checked, or the default for ``rtol``."""
        if method is None:
            return "RK45" if rtol >= 1e-5 else "DOP853"
        if method in ("IDA", "ida"):
            raise InputError(f"Solver(method={method!r}) integrates the DAE: it needs "
                             f"constraints='dae' (or sb.DAE(...)), not the {self.name!r} mode")
        if method not in SCIPY_METHODS:
            raise InputError(f"Solver(method={method!r}): unknown method; choose one of "
                             f"{', '.join(SCIPY_METHODS)} (or constraints='dae' for IDA)")
        floor = getattr(SCIPY_METHODS[method], "ROUNDOFF_FLOOR", 0.0)
        if rtol < floor:
            warnings.warn(f"Solver(method={method!r}, rtol={rtol:g}): below {floor:g} the "
                          f"method's round-off (its large coefficients) exceeds the error it is "
                          f"asked for: its steps shrink without gaining accuracy; 'DOP853' "
                          f"reaches such tolerances", UserWarning, stacklevel=2)
        return method

    def rhs(self, run: Run, part: Partition) -> Any:
        """f(t, y) in the layout of ``part`` (see :func:`ode_function`; one per layout for
        the whole run: a contact's kink restarts the stepper, not its right-hand side)."""
        key = ("ode_function", part)
        fun = run.options.get(key)
        if fun is None:
            fun = run.options[key] = ode_function(run, part)
        return fun

    def plain_rhs(self, run: Run) -> bool:
        """True when :meth:`rhs` is the model's plain right-hand side (no correction), so that
        a solver may evaluate it in compiled code."""
        return type(self).rhs is ConstraintMode.rhs

    def start(self, run: Run, t: float, y: np.ndarray, part: Partition,
              first_step: float | None) -> Stepper:
        """A stepper for one segment from (t, y) towards run.tf."""
        kwargs: dict[str, Any] = dict(rtol=run.rtol, atol=run.atol, max_step=run.max_step)
        if first_step is not None:
            kwargs["first_step"] = min(float(first_step), abs(run.tf - t))
        solver = SCIPY_METHODS[run.method]
        inputs = run.specifieds
        native = self._native_solver(run, part)
        own = part.dependent_speeds == run.model.default_partition.dependent_speeds
        compiled_jacobian = native is not None and run.method == "Radau" and \
            run.options.get("jacobian", "auto") != "exact"
        if native is not None:
            solver, extra = native
            kwargs.update(extra, on_evaluations=run.count_evaluations)
            if run.method == "Radau":        # (its Jacobian carried over a restart)
                kwargs["previous"] = run.options.get("radau_stepper")
        if run.method in ("Radau", "BDF", "LSODA") and own and not compiled_jacobian:
            # implicit solvers: the exact Jacobian from the compiled derivative program (the
            # compiled Radau steps call it too with jacobian="exact")
            if "jac" not in run.options:
                from .jacobian import jacobian_function
                run.options["jac"] = (jacobian_function(run.model, run.constants, inputs)
                                      if run.options.get("exact_jacobian", True) else None)
            if run.options["jac"] is not None:
                kwargs["jac"] = run.options["jac"]
        stepper = solver(self.rhs(run, part), t, y.copy(), run.tf, **kwargs)
        if "previous" in kwargs:
            run.options["radau_stepper"] = stepper
        return stepper

    def _native_solver(self, run: Run, part: Partition) -> tuple[type, dict] | None:
        """The plain right-hand side of a model whose kernels are all generated C (and whose
        inputs, if any, are constant, SymPy expressions of t and the state, or the model's
        derived inputs), in any dependent set: the same scipy solver with its steps taken in
        compiled code (see native_rk, native_radau), or None."""
        inputs = run.specifieds
        derived = None
        if isinstance(inputs, InputsWithDerived) and inputs.user_values is not None:
            # (constant user inputs; the model's derived ones computed in C, where it can)
            derived, values = inputs.derived, inputs.user_values
        elif isinstance(inputs, ExpressionInputs):
            # (expressions of t and the state: computed in C before each evaluation too)
            derived, values = inputs, inputs.values
        elif isinstance(inputs, InputsWithDerived) and isinstance(inputs.r_user, ExpressionInputs):
            # (the model's derived inputs and the user's expressions, both in C)
            expressions = inputs.user_expressions()
            derived, values = [inputs.derived, expressions], expressions.values
        elif inputs is None or isinstance(inputs, ConstantInputs):
            values = None if inputs is None else inputs.values
        else:
            return None
        if not self.plain_rhs(run):
            return None
        # (one per layout and method for the whole run: a contact's kink or a projection
        # restarts the stepper, not the compiled right-hand side and its plan)
        key = ("native_solver", run.method, part)
        if key not in run.options:
            from .native_rk import native_solver
            run.options[key] = native_solver(run.model, run.constants, run.method, values,
                                             part, *([derived] if derived is not None else []))
        return run.options[key]

    def accept(self, run: Run, t: float, y: np.ndarray, part: Partition) -> tuple[np.ndarray, bool]:
        """(the state to keep after an accepted step at t, True to restart the stepper from it)."""
        return y, False

    def output(self, run: Run, t: float, y: np.ndarray, part: Partition) -> np.ndarray:
        """An output sample at t (interpolated inside a step)."""
        return y

    def output_many(self, run: Run, times: np.ndarray, Y: np.ndarray, part: Partition) -> np.ndarray:
        """:meth:`output` for the samples Y (k, n) at ``times`` (k,) of one step."""
        if type(self).output is ConstraintMode.output:
            return Y
        return np.array([self.output(run, t, y, part) for t, y in zip(times, Y)]).reshape(Y.shape)

    def finish(self, run: Run, times: list, states: list, parts: list) -> str:
        """A last pass over the samples (in place); returns a note appended to the success message."""
        return ""

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({opts})"


def switch_threshold_value(value: Any) -> float:
    """``switch_threshold`` checked: 0 or a number in [0.001, 1) (InputError naming it)."""
    if isinstance(value, bool):
        raise InputError(f"switch_threshold={value!r} must be a number in [0, 1)")
    try:
        value = float(value)
    except (TypeError, ValueError) as exc:
        raise InputError(f"switch_threshold={value!r} must be a number in [0, 1)") from exc
    if not (value == 0.0 or 1e-3 <= value < 1.0):
        raise InputError(f"switch_threshold={value} must be 0 (no switching) or in [0.001, 1): "
                         "a smaller value would integrate too close to the singular configuration")
    return value


def ode_function(run: Run, part: Partition | None = None, correction: Any = None) -> Callable[[float, np.ndarray], np.ndarray]:
    """The ODE right-hand side f(t, y) in the layout of ``part`` (default: the model's).

    Singular matrices stop the integration (status -3), floating point errors -2, errors
    raised by a user callable -6; a non-finite derivative is returned to the solver (which
    rejects the step) and remembered in ``run.nonfinite``.  ``correction(t, y, ydot)``,
    when given, modifies ydot in place (Baumgarte's stabilization).
    """
    model, P, r_fun = run.model, run.constants, run.specifieds
    rhs = model.rhs
    own_speeds = part is None or part.dependent_speeds == model.default_partition.dependent_speeds
    bound = model.rhs_function(P) if own_speeds else None      # the hot path: one entry per call
    def fun(t, x):
        run.nfev += 1
        try:
            if bound is not None:
                xd = bound(t, x, None if r_fun is None else r_fun(t, x))
            else:        # the model calls r_fun with the state in its own layout
                xd = rhs(t, x, P, r_fun, partition=part)
            if correction is not None:
                correction(t, x, xd)
        except StopIntegration:
            raise
        except SymbodyError as exc:
            raise StopIntegration(-3, f"{exc}") from exc
        except (FloatingPointError, ZeroDivisionError, OverflowError) as exc:
            raise StopIntegration(-2, f"floating point error at t = {t:.6g}: {exc}") from exc
        except Exception as exc:
            if r_fun is not None:
                raise StopIntegration(-6, f"{type(exc).__name__} at t = {t:.6g}: {exc}") from exc
            raise
        # (not the squared norm: an explicit method's trial stages into a stiff contact give
        # finite derivatives of 1e160 and more, whose squares overflow)
        if not np.isfinite(xd).all():
            # let the solver reject the step and retry with a smaller one; remembered so that
            # a later step-size collapse is reported as what it is (which entry, which equation)
            if run.nonfinite is None or np.isfinite(x).all():
                run.nonfinite = NonFinite(t, np.array(x, dtype=float), part, np.array(xd))
        return xd

    return fun


def state_name(model: NumericModel, part: Partition | None, i: int) -> Any:
    """The symbol of entry i of a state in the layout of ``part``."""
    if part is None or i < model.N or i >= model.N + model.p:
        return model.states[i]
    return model.speeds[part.independent_speeds[i - model.N]]


def project_states(run: Run, times: np.ndarray, Y: np.ndarray, part: Partition,
                   max_iter: int = 20) -> np.ndarray:
    """:func:`project_state` for the states Y (k, n) at ``times`` (k,): Newton's method on all
    of them at once; the ones it leaves (a damped step, a failure) one by one."""
    model = run.model
    native = _native_constraints(run)
    if native is not None:
        # project_arguments' iterations row by row in compiled code: the one-by-one numbers
        Q, status, norms = native.project_many(times, Y[:, :model.N], _dependent(model, part), 1e-10,
                                               max_iter)
        done = (status > 0) | ((status == 0) & (norms < 1e-10))
    else:
        Q, done = model.project_coordinates_many(times, Y[:, :model.N], run.constants,
                                                 max_iter=max_iter, partition=part)
    out = np.array(Y, dtype=float)
    out[:, :model.N] = Q
    for i in np.flatnonzero(~done):
        out[i] = project_state(run, float(times[i]), Y[i], part, max_iter)
    return out


def project_state(run: Run, t: float, y: np.ndarray, part: Partition, max_iter: int = 20) -> np.ndarray:
    """y with q moved onto f_h = 0 by Newton's method on the dependent coordinates of ``part``.

    Raises StopIntegration (-3 singular Jacobian, -4 no convergence).
    """
    model = run.model
    native = _native_constraints(run)
    found = None
    if native is not None and model.M:
        # project_arguments' iterations in compiled code (None: singular, the Python path
        # below says so)
        found = native.project(t, y[:model.N], _dependent(model, part), 1e-10, max_iter)
    try:
        q, ok, norm = found if found is not None else \
            model.project_coordinates(y[:model.N], run.constants, t, max_iter=max_iter, partition=part)
    except SymbodyError as exc:
        raise StopIntegration(-3, f"projection at t = {t:.6g}: {exc}") from exc
    if not ok and norm >= 1e-10:   # (not converged, but at round-off already: fine)
        raise StopIntegration(-4, f"projection onto the holonomic constraints did not converge at t = "
                                  f"{t:.6g} (residual {norm:.3g}); the linkage may be near a singular "
                                  "configuration, or the tolerances are too loose")
    out = y.copy()
    out[:model.N] = q
    return out


def _native_constraints(run: Run) -> Any:
    """The run's compiled rank measure and projection (:mod:`~symbody.compilation.
    native_constraints`), built on first use; None when the model cannot have them."""
    if "native_constraints" not in run.options:
        model = run.model
        plain = type(model).project_coordinates is NumericModel.project_coordinates
        run.options["native_constraints"] = native_constraints(model, run.constants) if plain else None
    return run.options["native_constraints"]


def _dependent(model: NumericModel, part: Partition | None) -> tuple[int, ...]:
    """The dependent coordinates of ``part`` (default: the model's), as indices into q."""
    if part is None or part is model.default_partition or part == model.default_partition:
        return tuple(range(model.n, model.N))
    return tuple(part.q_dep_index)
