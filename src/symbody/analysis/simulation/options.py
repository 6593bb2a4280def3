"""The options of simulate(), checked and turned into what the driver uses.

:class:`Solver` holds how the integration is run (integrator, tolerances, step limits,
Jacobian, direction, failure handling, progress); the constraint mode (a name from MODES or a
:class:`~.strategy.ConstraintMode` object such as ``Baumgarte(alpha=...)``) holds how the
constraints are kept, with the dependent-set ``switch_threshold``.  Each function here takes
what the user gave and returns the checked value, or raises an InputError that names the
argument.  :func:`legacy_options` maps the keywords of the old flat signature
(``rtol=``, ``baumgarte=``, ...) onto these objects, with a DeprecationWarning each.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...compilation import NumericModel
from ...errors import InputError
from .baumgarte import Baumgarte
from .dae import DAE
from .plain import Plain
from .projection import Projection
from .strategy import SCIPY_METHODS, ConstraintMode, switch_threshold_value

__all__ = ["MODES", "Solver", "constraint_mode", "switch_threshold_value", "time_span",
           "output_times", "legacy_options", "solver_type_message", "SOLVER_KEYWORDS", "MODE_KEYWORDS"]

MODES = ("auto", "none", "baumgarte", "project", "dae")


JACOBIANS = ("auto", "exact", "finite-differences")
METHODS = (*SCIPY_METHODS, "IDA")


@dataclass(frozen=True)
class Solver:
    """How :func:`~.driver.simulate` integrates: ``solver=Solver(rtol=1e-8, method="DOP853")``.

    Parameters
    ----------
    method : scipy solver ("RK45", "DOP853", "RK23", "Radau", "BDF", "LSODA"; LSODA not
        with "project"), an explicit pair of :mod:`.explicit_tableaux` ("Tsit5": Tsitouras
        5(4); "Vern6": Verner's 6(5), each with its own interpolant; steps in C like RK45's)
        or "IDA" for the "dae" mode.  None (default): "RK45" when
        rtol >= 1e-5, otherwise "DOP853" ("IDA" for "dae"), continued with "Radau" from where
        the problem turns stiff (contact) and Radau's steps are long enough to need fewer
        evaluations (a trial of three steps, else back: :mod:`.stiffness`).
    rtol, atol : integration tolerances; ``atol`` one number or one per state (N + p + e).
    max_step, first_step : the largest step (default inf) and the first one (default: the
        solver's estimate), positive.
    max_num_steps : the run stops with status -1 after this many accepted steps.
    jacobian : for the implicit methods ("Radau", "BDF", "LSODA"): "exact", the Jacobian
        ∂f/∂x from the compiled derivatives of the equations; "finite-differences", scipy's
        own estimate (forward differences of the compiled right-hand side in C where Radau's
        steps run in C); "auto" (default): forward differences in C where Radau's steps run in
        C (n compiled evaluations: on Solo12 0.11 ms against 2.3 ms for the exact derivative
        program from Python), the exact Jacobian otherwise.
    backwards : allow ``t_span`` with tf < t0 (integrate backwards in time); without it a
        reversed span is refused (InputError), so a swapped pair is not integrated silently.
    raise_on_failure : raise SimulationError (with ``.trajectory``, the samples computed
        so far) instead of returning a trajectory with ``status != 0`` and warning with
        :class:`~symbody.SimulationFailedWarning`.
    progress : None (a progress line on a terminal for long runs; silent when not a TTY or
        SYMBODY_QUIET=1), False, True, or a callable ``f(done, total, message)`` receiving
        ``|t - t0|`` and ``|tf - t0|`` after each step.
    dense_output : keep every step's interpolant for ``trajectory(t)`` (default True: the
        integrator's own dense output, as accurate between the samples as the run; 10-20 %
        more run time for small models).  False: ``trajectory(t)`` is the cubic Hermite
        interpolant of the samples (see :class:`~symbody.analysis.trajectory.Trajectory`).

    Frozen: ``dataclasses.replace(solver, rtol=1e-9)`` makes a changed copy.  A bad value
    raises InputError naming the field.
    """

    method: str | None = None
    rtol: float = 1e-6
    atol: float | tuple[float, ...] = 1e-9
    max_step: float = math.inf
    first_step: float | None = None
    max_num_steps: int = 10_000_000
    jacobian: str = "auto"
    backwards: bool = False
    raise_on_failure: bool = False
    progress: Any = None
    dense_output: bool = True

    def __post_init__(self) -> None:
        if self.method is not None and self.method not in METHODS and self.method != "ida":
            same = [m for m in METHODS if str(self.method).lower() == m.lower()]
            hint = f"did you mean {same[0]!r}? " if same else ""
            raise InputError(f"Solver(method={self.method!r}): unknown method; {hint}choose one of "
                             f"{', '.join(METHODS)} (IDA with constraints='dae')")
        for name in ("rtol", "max_step"):
            _positive(name, getattr(self, name))
        if self.first_step is not None:
            _positive("first_step", self.first_step)
        atol = self.atol
        if not isinstance(atol, (int, float)) or isinstance(atol, bool):
            try:
                atol = tuple(float(a) for a in np.asarray(atol, dtype=float).ravel()) \
                    if np.ndim(atol) == 1 else float(atol)
            except (TypeError, ValueError):
                raise InputError(f"Solver(atol={self.atol!r}): give a positive number or one "
                                 "per state") from None
            object.__setattr__(self, "atol", atol)
        for a in np.atleast_1d(atol):
            _positive("atol", a)
        steps = self.max_num_steps
        if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
            raise InputError(f"Solver(max_num_steps={steps!r}) must be a positive integer")
        if self.jacobian not in JACOBIANS:
            raise InputError(f"Solver(jacobian={self.jacobian!r}); choose 'auto', 'exact' or "
                             "'finite-differences'")
        for name in ("backwards", "raise_on_failure", "dense_output"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise InputError(f"Solver({name}={getattr(self, name)!r}) must be True or False")


def _positive(name: str, value: Any) -> None:
    ok = not isinstance(value, bool)
    try:
        ok = ok and float(value) > 0 and not math.isnan(float(value)) and \
            (name == "max_step" or math.isfinite(float(value)))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        what = "positive" if name == "max_step" else "positive and finite"
        raise InputError(f"Solver({name}={value!r}) must be {what}")


def constraint_mode(model: NumericModel, constraints: Any, **options: Any) -> ConstraintMode:
    """The ConstraintMode object for ``constraints`` (a name or an object); ``options``
    (alpha, polish_algebraic, switch_threshold) go to the object made from a name."""
    if isinstance(constraints, ConstraintMode):
        return constraints
    if not isinstance(constraints, str) or constraints.lower() not in MODES:
        raise InputError(_constraints_type_message(constraints))
    name = constraints.lower()
    if name == "auto":
        name = "project" if model.M else "none"
    threshold = {k: v for k, v in options.items() if k == "switch_threshold"}
    if name == "baumgarte":
        return Baumgarte(options.get("alpha", 10.0), **threshold)
    if name == "dae":
        return DAE(options.get("polish_algebraic", True), **threshold)
    return Projection(**threshold) if name == "project" else Plain(**threshold)


def _constraints_type_message(constraints: Any) -> str:
    """The InputError for a ``constraints=`` that is neither a mode name nor a mode object,
    with the likely intended spelling."""
    choose = (f"choose one of {', '.join(map(repr, MODES))} or pass a constraint-mode object "
              "(e.g. Baumgarte(alpha=20.0))")
    if isinstance(constraints, type) and issubclass(constraints, ConstraintMode):
        return (f"constraints={constraints.__name__}: pass an object, "
                f"constraints={constraints.__name__}(...), not the class")
    if isinstance(constraints, Solver) or constraints is Solver:
        return f"constraints= got a Solver: it goes in solver=Solver(...); constraints= {choose}"
    if isinstance(constraints, str):
        close = difflib.get_close_matches(constraints.lower(), MODES, n=1)
        if close:
            return f"constraints={constraints!r}: did you mean {close[0]!r}? {choose}"
    return f"constraints={constraints!r}; {choose}"


def solver_type_message(solver: Any) -> str:
    """The InputError for a ``solver=`` that is not a :class:`Solver`, with the likely
    intended spelling."""
    if solver is Solver:
        return "solver=Solver: pass an object, solver=Solver(...), not the class"
    if isinstance(solver, Mapping):
        args = ", ".join(f"{k}={v!r}" for k, v in solver.items())
        return f"solver={solver!r}: give a symbody.Solver(...) object, e.g. solver=Solver({args})"
    if isinstance(solver, ConstraintMode) or (isinstance(solver, type)
                                              and issubclass(solver, ConstraintMode)):
        return (f"solver={solver!r} is a constraint mode: it goes in constraints=...; solver= "
                "takes a symbody.Solver(...) object")
    if isinstance(solver, str):
        return (f"solver={solver!r}: give a symbody.Solver(...) object, e.g. "
                f"solver=Solver(method={solver!r})")
    return f"solver={solver!r}: give a symbody.Solver(...) object"


#: the old keywords of simulate() that are now fields of Solver
SOLVER_KEYWORDS = tuple(f.name for f in dataclasses.fields(Solver))
#: the old keywords of simulate() that are now options of the constraint mode:
#: old keyword -> (keyword of the mode object, the new spelling for the warning)
MODE_KEYWORDS = {"baumgarte": ("alpha", "constraints=Baumgarte(alpha=...)"),
                 "polish_algebraic": ("polish_algebraic", "constraints=DAE(polish_algebraic=...)"),
                 "switch_threshold": ("switch_threshold",
                                      "constraints=Projection(switch_threshold=...) (every "
                                      "constraint mode takes switch_threshold=)")}


#: keywords of simulate() besides those of Solver and the constraint modes
_SIMULATE_KEYWORDS = ("constraints", "solver", "t_eval", "specifieds", "events", "outputs")
#: likely misspellings of the constraint keyword that difflib does not find
_ALIASES = {"mode": "constraints", "constraint_mode": "constraints", "method_constraints":
            "constraints", "integrator": "solver", "options": "solver"}


def _keyword_hint(key: str) -> str:
    """ "; did you mean ...?" for a misspelt keyword of simulate/sweep, or ""."""
    if key in _ALIASES:
        return f"; did you mean {_ALIASES[key]}=?"
    known = (*_SIMULATE_KEYWORDS, *SOLVER_KEYWORDS, *MODE_KEYWORDS)
    close = difflib.get_close_matches(key, known, n=1)
    if not close:
        return ""
    new = close[0]
    if new in SOLVER_KEYWORDS:
        return f"; did you mean solver=Solver({new}=...)?"
    if new in MODE_KEYWORDS:
        return f"; did you mean {MODE_KEYWORDS[new][1]}?"
    return f"; did you mean {new}=?"


def _unused_note(key: str, constraints: Any) -> str:
    """ " (it has no effect with constraints='project')" for an old mode keyword that the
    named mode does not use (``baumgarte=`` outside "baumgarte", ``polish_algebraic=``
    outside "dae"), as before; "" otherwise."""
    mode = {"baumgarte": "baumgarte", "polish_algebraic": "dae"}.get(key)
    if mode is None or not isinstance(constraints, str) or constraints.lower() == mode:
        return ""
    return f" (it has no effect with constraints={constraints!r})"


def legacy_options(model: Any, constraints: Any, solver: Solver | None, legacy: Mapping[str, Any],
                   caller: str = "simulate", stacklevel: int = 3) -> tuple[Any, Solver | None]:
    """(constraints, solver) with the old keywords of ``caller`` in ``legacy`` folded in.

    Each old keyword warns (DeprecationWarning naming the new spelling); an unknown one
    raises TypeError; an old keyword together with the object it now belongs to (``rtol=``
    with ``solver=``, ``baumgarte=`` with a mode object) raises InputError.
    """
    unknown = [k for k in legacy if k not in SOLVER_KEYWORDS and k not in MODE_KEYWORDS]
    if unknown:
        raise TypeError(f"{caller}() got an unexpected keyword argument {unknown[0]!r}"
                        + _keyword_hint(unknown[0]))
    for key in legacy:
        new = MODE_KEYWORDS[key][1] if key in MODE_KEYWORDS else f"solver=Solver({key}=...)"
        warnings.warn(f"{caller}({key}=...) is deprecated and will be removed in the next "
                      f"release; use {new}" + _unused_note(key, constraints),
                      DeprecationWarning, stacklevel=stacklevel)
    solver_args = {k: v for k, v in legacy.items() if k in SOLVER_KEYWORDS}
    if solver_args:
        if solver is not None:
            raise InputError(f"{caller}() got solver= and the old keyword "
                             f"{next(iter(solver_args))}=; give it inside Solver(...) only")
        solver = Solver(**solver_args)
    mode_args = {MODE_KEYWORDS[k][0]: v for k, v in legacy.items() if k in MODE_KEYWORDS}
    if mode_args:
        if isinstance(constraints, ConstraintMode):
            old = next(k for k in legacy if k in MODE_KEYWORDS)
            raise InputError(f"{caller}() got a constraint-mode object and the old keyword "
                             f"{old}=; give it to the object only ({MODE_KEYWORDS[old][1]})")
        if model is not None and isinstance(model, NumericModel):
            constraints = constraint_mode(model, constraints, **mode_args)
    return constraints, solver


def time_span(t_span: Any) -> tuple[float, float]:
    try:
        t0, tf = (float(v) for v in t_span)
    except (TypeError, ValueError) as exc:
        raise InputError(f"t_span must be (t0, tf), got {t_span!r}") from exc
    if not (np.isfinite(t0) and np.isfinite(tf)) or t0 == tf:
        raise InputError(f"t_span = ({t0}, {tf}) must be two different finite times")
    return t0, tf


def output_times(t_eval: Any, t0: float, tf: float) -> np.ndarray | None:
    if t_eval is None:
        return None
    t_eval = np.asarray(t_eval, dtype=float).ravel()
    if not np.isfinite(t_eval).all():
        raise InputError(f"t_eval contains a non-finite value ({t_eval[~np.isfinite(t_eval)][0]})")
    d = np.sign(tf - t0)
    if t_eval.size and (np.any(d * np.diff(t_eval) <= 0) or d * (t_eval[0] - t0) < 0
                        or d * (t_eval[-1] - tf) > 0):
        raise InputError("t_eval must be strictly monotonic in the direction of integration "
                         f"and lie within t_span = ({t0}, {tf})")
    return t_eval
