"""simulate(): integrate a NumericModel without constraint drift.

The ODE state is x = [q_ind, q_dep, u_ind] (``model.states``).  Dependent speeds
are never integrated: each evaluation solves them from the velocity constraints,
so nonholonomic constraints (and the velocity form of holonomic ones) hold to
round-off by construction.  What can drift is the position level, f_h(q) = 0,
which the ``constraints`` mode handles:

``"none"``       plain ODE; f_h drifts with the integration error (the books' approach).
``"baumgarte"``  first-order stabilization of the kinematics:
                 q_dep' <- q_dep' - α J_dep^{-1} f_h, so d/dt f_h = -α f_h (``baumgarte=α``).
``"project"``    after every accepted step the solver's own state is moved back onto
                 f_h = 0 by Newton's method on q_dep (q_ind held), and output samples
                 (dense-output interpolants) are projected the same way: residuals stay at
                 round-off at any tolerance.  Works with RK23, RK45, DOP853, Radau and BDF
                 (for BDF the Nordsieck-free difference array D[0] is shifted with y).
``"dae"``        SUNDIALS IDA (scikit-sundae) on the index-1 DAE
                 q_ind' = f_q,ind(q, u),  0 = f_h(q, t),  u_ind' = f_u(q, u):
                 q_dep are the algebraic variables (the position constraints replace their
                 kinematic rows) with the absolute tolerance 0.01 (atol + rtol); IDA holds f_h
                 to its Newton tolerance (about 5e-10 m on the four-bar at rtol = atol = 1e-10),
                 and the output samples' q_dep are then polished by Newton's method on f_h = 0
                 (``polish_algebraic=False`` returns IDA's values untouched).
``"auto"``       "project" when the model has holonomic constraints, else "none".

Singular configurations.  Which coordinates and speeds are dependent is a numerical
choice, and any fixed choice fails somewhere: a four-bar whose rocker angle is
independent cannot pass the rocker's extreme positions, where ∂f_h/∂q_dep (and B_dep)
is singular.  After every accepted step simulate() tracks, for ∂f_h/∂q and for B, the
sign of det A[:, dependent] and the ratio |det A[:, dependent]| / |det A[:, best]| to the
best-conditioned choice (column-pivoted QR):

- Switching (models with the unreduced dynamic block and dependent speeds, the form
  symbody's KanesMethod/LagrangesMethod produce): where the ratio falls to
  ``switch_threshold`` (located on the step's dense output, or as an IDA root) the
  integration restarts with the dependent coordinates and speeds chosen by pivoted QR
  at that configuration; the state [q, u_ind] is re-mapped through all speeds u.  This
  is exact: the augmented system gives u' of all speeds without reference to a
  partition, so only the choice of which speeds are states changes.  (A step that
  jumps over a singular configuration of the active set is discarded and redone from
  its start in the new set.)  The switches are listed in ``trajectory.partition_changes``;
  the columns of q, u and x stay in model order.  Each switch restarts the solver
  (for IDA from order 1, which costs steps and some accuracy in "dae" mode).
- Stopping: a reduced (hand-derived) dynamic block, or kinematics with the dependent
  speeds eliminated symbolically, is written for one partition and cannot switch;
  there, and where the full Jacobian itself loses rank (a change point or bifurcation
  of the mechanism, where no choice of dependent set is regular and the motion can
  continue on more than one branch), the integration stops at the crossing with
  status -3, the samples computed so far, and a message naming the configuration and
  the singular matrix.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
from scipy.integrate import BDF, DOP853, LSODA, RK23, RK45, Radau
from scipy.linalg import lapack
from scipy.optimize import brentq

from ..compilation import NumericModel
from ..compilation._progress import ProgressLine
from ..compilation.numeric_model import Partition, pivoted_columns
from ..errors import InputError, SimulationError, SymbodyError
from .initial_state import initial_state
from .inputs import specified_inputs
from .outputs import attach_outputs, parse_outputs
from .trajectory import PartitionChange, Trajectory, _short

__all__ = ["simulate", "MODES", "STATUS"]

MODES = ("auto", "none", "baumgarte", "project", "dae")

#: Trajectory.status values.
STATUS = {
    0: "success",
    -1: "integration failed (step size collapsed or too many steps)",
    -2: "non-finite values",
    -3: "singular matrix (constraint Jacobian or mass matrix, singular configuration)",
    -4: "projection onto the constraints did not converge",
    -5: "interrupted",
    -6: "error raised by a user callable (specifieds)",
}

_METHODS = {"RK23": RK23, "RK45": RK45, "DOP853": DOP853, "Radau": Radau, "BDF": BDF,
            "LSODA": LSODA}


#: IDA's Newton iteration stops when the weighted correction is small; the algebraic
#: variables (q_dep) get a tighter absolute tolerance, factor x (atol + rtol), so that f_h
#: is resolved well below the tolerance of the differential variables.  (The rtol term
#: keeps it from collapsing to factor x atol where a dependent coordinate passes zero:
#: IDA's error test on it then stalls the steps at order 1 and dissipates energy.)
_ALGEBRAIC_ATOL_FACTOR = 1e-2

#: a failure where |det| of the dependent columns is below this fraction of the best
#: choice's is reported as a singular configuration
_NEAR_SINGULAR = 1e-3


class _Stop(Exception):
    """Internal: stop the integration with a status and message."""

    def __init__(self, status: int, message: str, at: tuple | None = None):
        super().__init__(message)
        self.status, self.message = status, message
        self.at = at              # (t, state) where it happened, when known


def simulate(model: NumericModel, t_span: Sequence[float], x0, p, constraints: str = "auto",
             t_eval: Sequence[float] | None = None, method: str | None = None,
             rtol: float = 1e-6, atol: float = 1e-9, specifieds=None,
             raise_on_failure: bool = False, progress=None, *, max_step: float = math.inf,
             first_step: float | None = None, baumgarte: float = 10.0,
             max_num_steps: int = 10_000_000, polish_algebraic: bool = True,
             switch_threshold: float = 0.1, outputs=None) -> Trajectory:
    """Integrate ``model`` from ``t_span[0]`` to ``t_span[1]``; returns a :class:`Trajectory`.

    Parameters
    ----------
    model : NumericModel (``symbody.compile(eom)``).
    t_span : (t0, tf).
    x0 : initial state as a dict keyed by symbol or name, or an array in
        ``model.states`` order [q (N), u_ind (p)] (or [q (N), u (o)]).  Dependent
        coordinates are solved from f_h = 0 by Newton's method (q_ind held) and dependent
        speeds from the velocity constraints; a given dependent value that disagrees
        gets an :class:`~symbody.analysis.initial_state.InitialStateWarning` saying by
        how much and what was used.
    p : constants, array in ``model.constants`` order or dict keyed by symbol or name.
    constraints : "auto" (default: drift-free), "none", "baumgarte", "project", "dae".
    t_eval : output times (default: every accepted step).
    method : scipy solver ("RK45", "DOP853", "RK23", "Radau", "BDF", "LSODA"; LSODA
        not with "project") or "IDA" for "dae".  Default: "RK45" when rtol >= 1e-5,
        otherwise "DOP853".
    rtol, atol : integration tolerances.
    specifieds : values of the specified inputs (see :mod:`symbody.analysis.inputs`):
        numbers (array / dict), a callable ``r(t, x) -> array``, SymPy expressions of t
        (and states, constants; compiled), :class:`~symbody.Tabulated` ``(t, values)``
        data (interpolated), or a dict mixing these per input.
    raise_on_failure : raise SimulationError (with ``.trajectory``, the samples
        computed so far) instead of returning a trajectory with ``status != 0``.
    progress : None (a progress line on a terminal for long runs; silent when not a
        TTY or SYMBODY_QUIET=1), False, True, or a callable ``f(done, total, message)``
        receiving |t - t0| and |tf - t0| after each step.
    baumgarte : α (1/s) of the "baumgarte" mode.
    polish_algebraic : "dae" only: at each output sample solve f_h = 0 for the
        algebraic variables q_dep (q_ind and u_ind as IDA returned them), so the
        samples satisfy the constraints to round-off; IDA's own residual is reported
        in the message.  False returns IDA's values unchanged (residual of the order of
        the tolerances).
    outputs : quantities to evaluate along the trajectory into ``trajectory.outputs``:
        ``{name: SymPy expression}`` in t, q, u, u', constants and specified inputs
        (compiled), and/or the built-ins "specifieds", "constraint_forces",
        "auxiliary_forces" (see :mod:`symbody.analysis.outputs`).
    switch_threshold : the dependent coordinates/speeds are switched (see the module
        docstring) where |det| of their columns of ∂f_h/∂q or B falls below this
        fraction of the best choice's (column-pivoted QR); 0.1 by default, so a model
        keeps its own dependent set unless it nears a singular configuration.  0
        disables switching: the integration then stops where the set becomes singular.

    Singular configurations (where ∂f_h/∂q_dep or B_dep is singular, e.g. a four-bar's
    rocker at an extreme position while its angle is the independent coordinate):

    - models with the unreduced dynamic block and dependent speeds (symbody's
      KanesMethod/LagrangesMethod) switch the dependent set automatically and go on:
      u' of all speeds comes from [[M_d, B^T], [B, 0]], which needs no partition, so
      any regular choice of dependent speeds gives the same motion.  The switches are
      listed in ``trajectory.partition_changes`` as (t, dependent coordinates,
      dependent speeds); q, u and x stay in model order.
    - a reduced, hand-derived dynamic block (or kinematics with the dependent speeds
      eliminated symbolically) was written for one choice of dependent speeds and
      cannot switch; and where the constraint Jacobian itself loses rank (a change
      point of the mechanism) no choice is regular and the continuation is not unique.
      In both cases the integration stops at the crossing with status -3, the partial
      trajectory, and a message naming the configuration and the singular matrix.

    Returns a Trajectory; ``status`` 0 on success, otherwise one of
    :data:`STATUS` (-1 step size collapse, -2 non-finite values, -3 singular
    matrix, -4 projection failure, -5 interrupted, -6 user callable raised) with a
    ``message`` saying what happened and when.
    """
    if not isinstance(model, NumericModel):
        raise InputError(f"simulate() needs a NumericModel (symbody.compile(eom)), got "
                         f"{type(model).__name__}")
    t0, tf = _t_span(t_span)
    if not isinstance(constraints, str) or constraints.lower() not in MODES:
        raise InputError(f"constraints={constraints!r}; choose one of {', '.join(map(repr, MODES))}")
    mode = constraints.lower()
    if mode == "auto":
        mode = "project" if model.M else "none"
    if not (np.isfinite(rtol) and rtol > 0 and np.all(np.isfinite(atol)) and np.all(np.asarray(atol) > 0)):
        raise InputError(f"rtol and atol must be positive and finite, got rtol={rtol}, atol={atol}")
    if mode == "dae":
        if method not in (None, "IDA", "ida"):
            raise InputError(f"constraints='dae' integrates with SUNDIALS IDA; method={method!r} "
                             "cannot be used (leave method=None or 'IDA')")
        method = "IDA"
    else:
        if method is None:
            method = "RK45" if rtol >= 1e-5 else "DOP853"
        if method not in _METHODS:
            raise InputError(f"unknown method {method!r}; choose one of {', '.join(_METHODS)} "
                             "(or constraints='dae' for IDA)")
        if mode == "project" and method == "LSODA" and model.M:
            raise InputError("constraints='project' needs access to the solver state after each "
                             "step, which LSODA hides; use 'RK45', 'DOP853', 'Radau' or 'BDF', or "
                             "constraints='dae' / 'baumgarte'")
    if not (np.isfinite(baumgarte) and baumgarte >= 0):
        raise InputError(f"baumgarte={baumgarte} must be a non-negative number")
    try:
        switch_threshold = float(switch_threshold)
    except (TypeError, ValueError) as exc:
        raise InputError(f"switch_threshold={switch_threshold!r} must be a number in [0, 1)") from exc
    if not (switch_threshold == 0.0 or 1e-3 <= switch_threshold < 1.0):
        raise InputError(f"switch_threshold={switch_threshold} must be 0 (no switching) or in [0.001, 1): "
                         "a smaller value would integrate too close to the singular configuration")

    n_states = model.N + model.p
    atol_arr = np.asarray(atol, dtype=float)
    if atol_arr.ndim > 1 or (atol_arr.ndim == 1 and atol_arr.size != n_states):
        raise InputError(f"atol has {atol_arr.size} values; give one number or one per state "
                         f"({n_states} = N + p: {', '.join(map(str, model.states))})")
    for name, val in (("max_step", max_step), ("first_step", first_step)):
        if val is not None and not (val > 0):
            raise InputError(f"{name}={val} must be positive")
    parse_outputs(model, outputs)
    P = model.constants_array(p)
    x = model.state_array(x0)
    r_fun = specified_inputs(model, specifieds, P, (t0, tf), x)
    x = initial_state(model, x0, P, t0, r_fun)

    if t_eval is not None:
        t_eval = np.asarray(t_eval, dtype=float).ravel()
        if not np.isfinite(t_eval).all():
            raise InputError(f"t_eval contains a non-finite value ({t_eval[~np.isfinite(t_eval)][0]})")
        d = np.sign(tf - t0)
        if t_eval.size and (np.any(d * np.diff(t_eval) <= 0) or d * (t_eval[0] - t0) < 0
                            or d * (t_eval[-1] - tf) > 0):
            raise InputError("t_eval must be strictly monotonic in the direction of integration "
                             f"and lie within t_span = ({t0}, {tf})")

    bar = ProgressLine(progress, f"simulate ({mode})", abs(tf - t0))
    start = time.perf_counter()
    monitor = _Monitor(model, P, r_fun, switch_threshold, rtol)
    samples = _Samples(model, model.default_partition)
    try:
        y = _initial_partition(model, monitor, t0, x, P, samples)
    except _Stop as stop:
        raise InputError(f"initial state: {stop.message}") from None
    if mode == "dae":
        status, message, nfev, nsteps = _run_ida(model, t0, tf, x, P, r_fun, t_eval, rtol, atol,
                                                 max_step, first_step, max_num_steps, bar,
                                                 polish_algebraic, monitor, samples, y)
    else:
        status, message, nfev, nsteps = _run_ode(model, mode, method, t0, tf, x, P, r_fun, t_eval,
                                                 rtol, atol, max_step, first_step, baumgarte,
                                                 max_num_steps, bar, monitor, samples, y)
    wall = time.perf_counter() - start
    bar.close(message if status else "")
    traj = _trajectory(model, samples, P, r_fun, status, message, mode, method, nfev, nsteps, wall)
    attach_outputs(traj, model, P, r_fun, outputs)
    if status != 0 and raise_on_failure:
        raise SimulationError(message, trajectory=traj)
    return traj


# ---------------------------------------------------------------- helpers
def _t_span(t_span) -> tuple[float, float]:
    try:
        t0, tf = (float(v) for v in t_span)
    except (TypeError, ValueError) as exc:
        raise InputError(f"t_span must be (t0, tf), got {t_span!r}") from exc
    if not (np.isfinite(t0) and np.isfinite(tf)) or t0 == tf:
        raise InputError(f"t_span = ({t0}, {tf}) must be two different finite times")
    return t0, tf


def _solve_small(A: np.ndarray, b: np.ndarray):
    _, _, x, info = lapack.dgesv(A, b, overwrite_a=1, overwrite_b=0)
    return x, info


class _Counter:
    """Evaluation count and the last non-finite right-hand side (t, message), if any."""

    __slots__ = ("n", "nonfinite")

    def __init__(self):
        self.n = 0
        self.nonfinite: tuple[float, str] | None = None


def _make_fun(model: NumericModel, mode: str, P: np.ndarray, r_fun, alpha: float, counter: _Counter,
              part: Partition | None = None):
    """The ODE right-hand side f(t, y) in the layout of ``part``, raising _Stop on singular values."""
    n, N, M = model.n, model.N, model.M
    rhs = model.rhs
    hol = model._k_hol
    default = part is None or part == model.default_partition
    own_speeds = part is None or part.dependent_speeds == model.default_partition.dependent_speeds
    qdep = slice(n, N) if default else list(part.dependent_coordinates)

    def fun(t, x):
        counter.n += 1
        try:
            if own_speeds:
                r = None if r_fun is None else r_fun(t, x)
                xd = rhs(t, x, P, r)
            else:        # the model calls r_fun with the state in its own layout
                xd = rhs(t, x, P, r_fun, partition=part)
            if mode == "baumgarte" and M and alpha:
                z = model._z(t, x[:N], None, P, None, need_r=False)
                out = np.empty(hol.nout)
                hol.into(z, out)
                corr, info = _solve_small(out[M:].reshape(M, N)[:, qdep].copy(), out[:M])
                if info != 0:
                    raise _Stop(-3, f"the holonomic constraint Jacobian is singular in the dependent "
                                    f"coordinates at t = {t:.6g}")
                xd[qdep] -= alpha * corr
        except _Stop:
            raise
        except SymbodyError as exc:
            raise _Stop(-3, f"{exc}") from exc
        except (FloatingPointError, ZeroDivisionError, OverflowError) as exc:
            raise _Stop(-2, f"floating point error at t = {t:.6g}: {exc}") from exc
        except Exception as exc:
            if r_fun is not None:
                raise _Stop(-6, f"{type(exc).__name__} at t = {t:.6g}: {exc}") from exc
            raise
        if not np.isfinite(xd).all():
            # let the solver reject the step and retry with a smaller one; remembered so that
            # a later step-size collapse is reported as what it is
            i = int(np.argmax(~np.isfinite(xd)))
            if counter.nonfinite is None or np.isfinite(x).all():
                counter.nonfinite = (t, f"non-finite value of {_state_name(model, part, i)}' at "
                                        f"t = {t:.6g} (state {np.array2string(np.asarray(x), precision=4)})")
        return xd

    return fun


def _state_name(model: NumericModel, part: Partition | None, i: int):
    if part is None or i < model.N:
        return model.states[i]
    return model.speeds[part.independent_speeds[i - model.N]]


def _project_state(model: NumericModel, t: float, y: np.ndarray, P: np.ndarray,
                   part: Partition | None = None) -> np.ndarray:
    """y with q projected onto f_h = 0 (Newton on the dependent coordinates of ``part``);
    raises _Stop on failure."""
    z = model._z(t, y[:model.N], None, P, None, need_r=False)
    try:
        q, ok, norm = model._project_z(z, max_iter=20, partition=part)
    except SymbodyError as exc:
        raise _Stop(-3, f"projection at t = {t:.6g}: {exc}") from exc
    if not ok:
        if norm < 1e-10:  # converged to round-off already
            pass
        else:
            raise _Stop(-4, f"projection onto the holonomic constraints did not converge at t = "
                            f"{t:.6g} (residual {norm:.3g}); the linkage may be near a singular "
                            "configuration, or the tolerances are too loose")
    out = y.copy()
    out[:model.N] = q
    return out


# ---------------------------------------------------------------- dependent-set monitor
class _Gauge(NamedTuple):
    """Conditioning of the active dependent set at one state.

    ``dets``: det ∂f_h/∂q[:, q_dep] and det B[:, u_dep] (1.0 when absent), ``signs`` their signs;
    ``ratio``: min over both of |det A[:, dep]| / |det A[:, best]| (best: pivoted QR),
    1.0 when switching is off or no better choice exists.
    """

    signs: tuple[float, float]
    ratio: float
    dets: tuple[float, float]


class _Event(NamedTuple):
    kind: str            # "switch", "singular" (cannot switch), "rank" (the full Jacobian lost rank)
    t: float
    which: int = 0       # 0: ∂f_h/∂q, 1: B
    partition: Partition | None = None     # "switch": the dependent set to switch to


class _Monitor:
    """Watches the dependent set along the integration and decides when to switch or stop.

    For each constraint matrix A (∂f_h/∂q, M x N, and B, m x o) and the active dependent
    columns D it tracks the sign of det A[:, D] (a sign change between two accepted steps
    means A[:, D] passed through a singular matrix) and, when switching is possible, the
    ratio |det A[:, D]| / |det A[:, D*]| to the best-conditioned choice D* (column-pivoted
    QR).  The dependent set is switched where that ratio falls to ``threshold``.
    """

    def __init__(self, model: NumericModel, P: np.ndarray, r_fun, threshold: float, rtol: float):
        self.model, self.P, self.r_fun = model, P, r_fun
        self.threshold = float(threshold)
        self.switch = model.partition_switchable and self.threshold > 0
        self.active = bool(model.M or model.m)
        self.rank_tol = min(1e-2, math.sqrt(rtol))
        self.nevals = 0

    # -- evaluation
    def matrices(self, t: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r = None
        if self.model._vel_uses_r and self.r_fun is not None:
            r = self.r_fun(t, y)       # not switchable: y is in the model's layout
        self.nevals += 1
        return self.model.constraint_matrices(y[:self.model.N], self.P, t, r)

    @staticmethod
    def _columns(part: Partition) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return part.dependent_coordinates, part.dependent_speeds

    def gauge(self, t: float, y: np.ndarray, part: Partition) -> _Gauge:
        signs, dets, ratio = [], [], 1.0
        for A, D in zip(self.matrices(t, y), self._columns(part)):
            if A.shape[0] == 0:
                signs.append(1.0)
                dets.append(1.0)
                continue
            det = _det(A[:, D])
            signs.append(float(np.sign(det)))
            dets.append(det)
            if not self.switch:
                continue
            if det == 0.0 or not np.isfinite(det):
                ratio = 0.0
                continue
            # cheap lower bound first: |det A_best| <= sqrt(det(A A^T)) (Cauchy-Binet)
            gram = _det(A @ A.T)
            if gram > 0 and abs(det) >= self.threshold * math.sqrt(gram):
                continue
            best = pivoted_columns(A)[0]
            det_b = _det(A[:, best])
            if det_b != 0.0 and np.isfinite(det_b):
                ratio = min(ratio, abs(det) / abs(det_b))
        return _Gauge((signs[0], signs[1]), min(ratio, 1.0), (dets[0], dets[1]))

    def det(self, t: float, y: np.ndarray, part: Partition, which: int) -> float:
        A = self.matrices(t, y)[which]
        return _det(A[:, self._columns(part)[which]])

    def rank_measure(self, t: float, y: np.ndarray, which: int) -> float:
        """|R_kk| / |R_11| of the pivoted QR of the constraint matrix (0: rank lost)."""
        return pivoted_columns(self.matrices(t, y)[which])[1]

    # -- decisions
    def event(self, dense, part: Partition, t_a: float, g_a: _Gauge, t_b: float, y_b: np.ndarray,
              g_b: _Gauge) -> _Event | None:
        """What happened on the step t_a -> t_b (``dense(t)`` interpolates it), if anything."""
        flips = [k for k in (0, 1) if g_a.signs[k] * g_b.signs[k] < 0]
        if flips:
            # the active dependent columns passed through a singular matrix: where?
            roots = []
            for k in flips:
                f = lambda t, k=k: self.det(t, dense(t), part, k)  # noqa: E731
                roots.append((_root(f, t_a, t_b), k))
            t_c, k = min(roots, key=lambda tk: abs(tk[0] - t_a))
            if not self.switch:
                return _Event("singular", t_c, k)
            y_c = dense(t_c)
            if self.rank_measure(t_c, y_c, k) < self.rank_tol:
                return _Event("rank", t_c, k)
            # a step too long to see the ratio fall: back to its start, and on in the set that
            # is best at the crossing (where the active one is singular)
            new = self.model.choose_partition(y_c[:self.model.N], self.P, t_c)
            return _Event("switch", t_a, k, new)
        if self.switch and g_b.ratio < self.threshold <= g_a.ratio:
            g = lambda t: self.gauge(t, dense(t), part).ratio - self.threshold  # noqa: E731
            return _Event("switch", _root(g, t_a, t_b))
        return None

    def message(self, event: _Event, t: float, y: np.ndarray, part: Partition) -> str:
        """The stop message for a "singular" or "rank" event at (t, y)."""
        model = self.model
        q = ", ".join(f"{_short(s)} = {v:.6g}" for s, v in zip(model.coordinates, y[:model.N]))
        if event.kind == "rank":
            what = ("the holonomic constraint Jacobian ∂f_h/∂q" if event.which == 0 else
                    "the velocity constraint matrix B")
            return (f"singular configuration at t = {t:.6g}: {what} loses rank at q = ({q}), so no "
                    "choice of dependent coordinates and speeds is regular there (a bifurcation or "
                    "change point of the mechanism, where the motion can continue on more than one "
                    "branch); the integration stops here")
        if event.which == 0:
            cols = ", ".join(_short(model.coordinates[i]) for i in part.dependent_coordinates)
            what = f"∂f_h/∂({cols}), the holonomic constraint Jacobian in the dependent coordinates,"
        else:
            cols = ", ".join(_short(model.speeds[i]) for i in part.dependent_speeds)
            what = f"B[:, ({cols})], the velocity constraint matrix in the dependent speeds,"
        if model.partition_switchable and self.switch:
            why = "no better-conditioned choice of dependent coordinates and speeds was found there"
        elif model.partition_switchable:
            why = "switching the dependent set is disabled (switch_threshold=0)"
        elif model.dynamic_reduced:
            why = ("the dependent set cannot be switched because the dynamic equations are in reduced "
                   "form, written for the independent speeds "
                   + ", ".join(_short(s) for s in model.independent_speeds))
        elif model.m == 0:
            why = ("the dependent set cannot be switched because the equations of motion have no "
                   "dependent speeds (the constraints were eliminated symbolically for this choice of "
                   "dependent coordinates)")
        else:
            why = "the dependent set cannot be switched because B depends on the specified inputs"
        return (f"singular configuration at t = {t:.6g}: {what} is singular at q = ({q}); {why}. "
                "Form the equations unreduced (dependent speeds with velocity constraints) to integrate "
                "through it, or choose other dependent coordinates")


def _det(A: np.ndarray) -> float:
    """det A of a small square matrix (closed forms up to 3 x 3: this runs after every step)."""
    k = A.shape[0]
    if k == 1:
        return float(A[0, 0])
    if k == 2:
        return float(A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0])
    if k == 3:
        return float(A[0, 0] * (A[1, 1] * A[2, 2] - A[1, 2] * A[2, 1])
                     - A[0, 1] * (A[1, 0] * A[2, 2] - A[1, 2] * A[2, 0])
                     + A[0, 2] * (A[1, 0] * A[2, 1] - A[1, 1] * A[2, 0]))
    lu, piv, info = lapack.dgetrf(A)[:3]
    if info > 0:
        return 0.0
    d = float(np.prod(np.diag(lu)))
    return -d if np.count_nonzero(piv != np.arange(k)) % 2 else d


def _root(f: Callable[[float], float], a: float, b: float) -> float:
    """A sign change of f in [a, b] (brentq); b when f does not change sign."""
    fa, fb = f(a), f(b)
    if fa == 0.0:
        return a
    if not (np.isfinite(fa) and np.isfinite(fb)) or fa * fb > 0:
        return b
    return float(brentq(f, a, b, xtol=1e-12 * max(1.0, abs(a), abs(b)), rtol=4e-15, maxiter=100))


def _remap(model: NumericModel, t: float, y: np.ndarray, P: np.ndarray, old: Partition,
           new: Partition) -> np.ndarray:
    """The state y (layout of ``old``) in the layout of ``new``: q unchanged, the new
    independent speeds taken from all speeds (the dependent ones solved in ``old``)."""
    r = np.zeros(len(model.specifieds)) if model.specifieds else None
    try:
        u = model.full_speeds(y[:model.N], y[model.N:], P, t, r, partition=old)
    except SymbodyError as exc:
        raise _Stop(-3, f"switching the dependent set at t = {t:.6g}: {exc}") from exc
    return np.concatenate([y[:model.N], u[list(new.independent_speeds)]])


class _Samples:
    """Output samples in the layout of the partition active when each was taken."""

    def __init__(self, model: NumericModel, part: Partition):
        self.model = model
        self.T: list[float] = []
        self.Y: list[np.ndarray] = []
        self.pid: list[int] = []
        self.partitions: list[Partition] = [part]
        self.changes: list[PartitionChange] = []

    @property
    def part(self) -> Partition:
        return self.partitions[-1]

    def add(self, t: float, y: np.ndarray) -> None:
        self.T.append(float(t))
        self.Y.append(np.array(y, dtype=float))
        self.pid.append(len(self.partitions) - 1)

    def switch(self, t: float, new: Partition) -> None:
        self.partitions.append(new)
        qd, ud = self.model.partition_names(new)
        self.changes.append(PartitionChange(float(t), tuple(map(_short, qd)), tuple(map(_short, ud))))

    @property
    def last_t(self) -> float | None:
        return self.T[-1] if self.T else None


def _initial_partition(model: NumericModel, monitor: _Monitor, t0: float, x: np.ndarray,
                       P: np.ndarray, samples: _Samples) -> np.ndarray:
    """Switch at t0 when the model's own dependent set is poorly conditioned there."""
    part = model.default_partition
    if not (monitor.active and monitor.switch):
        return x
    if monitor.gauge(t0, x, part).ratio >= monitor.threshold:
        return x
    new = model.choose_partition(x[:model.N], P, t0)
    if new == part:
        return x
    y = _remap(model, t0, x, P, part, new)
    samples.switch(t0, new)
    return y


# ---------------------------------------------------------------- ODE modes
def _run_ode(model, mode, method, t0, tf, x0, P, r_fun, t_eval, rtol, atol, max_step, first_step,
             alpha, max_num_steps, bar, monitor: _Monitor, samples: _Samples, y0: np.ndarray):
    counter = _Counter()
    project = mode == "project" and model.M > 0
    status, message, nsteps = 0, "", 0
    direction = np.sign(tf - t0)
    ti = 0
    if t_eval is None or (t_eval.size and t_eval[0] == t0):
        samples.add(t0, y0)
        ti = 1 if t_eval is not None else 0
    t_cur, y_cur, step_hint = t0, y0.copy(), first_step
    part = samples.part

    def emit(dense, t_end, part, strict=True):
        """Output samples t_eval[ti:] up to t_end from the step's dense output."""
        nonlocal ti
        j = ti
        while j < t_eval.size and direction * (t_eval[j] - t_end) <= 0:
            j += 1
        for te in t_eval[ti:j]:
            ye = dense(te)
            if project:
                try:
                    ye = _project_state(model, te, ye, P, part)
                except _Stop:
                    if strict:
                        raise
                    break
            samples.add(te, ye)
            ti += 1

    def accept_step(solver, fun, t_new, y, part):
        """Output samples, projection and bookkeeping after an accepted step; returns y."""
        if t_eval is not None and ti < t_eval.size and direction * (t_eval[ti] - t_new) <= 0:
            emit(solver.dense_output(), t_new, part)
        if project:
            y = _project_state(model, t_new, y, P, part)
            _reset_solver_state(solver, y, fun)
        if t_eval is None:
            samples.add(t_new, y)
        bar(abs(t_new - t0), f"t = {t_new:.4g}, {nsteps} steps")
        if solver.status == "finished":
            raise _Finished
        if nsteps >= max_num_steps:
            raise _Stop(-1, f"stopped after max_num_steps = {max_num_steps} steps at t = {t_new:.6g}")
        return y

    try:
        while True:                                   # one solver per dependent set
            fun = _make_fun(model, mode, P, r_fun, alpha, counter, part)
            kwargs = dict(rtol=rtol, atol=atol, max_step=max_step)
            if step_hint is not None:
                kwargs["first_step"] = min(float(step_hint), abs(tf - t_cur))
            solver = _METHODS[method](fun, t_cur, y_cur.copy(), tf, **kwargs)
            t_a = t_cur
            g_a = monitor.gauge(t_cur, y_cur, part) if monitor.active else None
            while True:
                msg = solver.step()
                nsteps += 1
                if solver.status == "failed":
                    status = -1
                    message = f"integration failed at t = {solver.t:.6g}: {msg}"
                    if counter.nonfinite is not None:
                        status = -2
                        message = f"{counter.nonfinite[1]}; the step size collapsed at t = {solver.t:.6g}"
                    raise _Stop(status, message, at=(solver.t, np.array(solver.y)))
                t_new = solver.t
                y = solver.y
                if not np.isfinite(y).all():
                    raise _Stop(-2, f"non-finite state at t = {t_new:.6g}")
                event = None
                if monitor.active:
                    g_b = monitor.gauge(t_new, y, part)
                    dense = _Dense(solver)
                    event = monitor.event(dense, part, t_a, g_a, t_new, y, g_b)
                if event is None:
                    y = accept_step(solver, fun, t_new, y, part)
                    t_a, g_a = t_new, g_b if monitor.active else None
                    continue
                # an event inside the step (t_a, t_new]: the rest of the step is discarded
                t_e = event.t
                y_e = dense(t_e)
                if event.kind != "switch":
                    if t_eval is not None:
                        emit(dense, t_e, part, strict=False)
                    raise _Stop(-3, monitor.message(event, t_e, y_e, part))
                if t_eval is not None:
                    emit(dense, t_e, part)
                if project:
                    y_e = _project_state(model, t_e, y_e, P, part)
                new = event.partition or model.choose_partition(y_e[:model.N], P, t_e)
                if new == part:        # no better choice: carry on with this step
                    y = accept_step(solver, fun, t_new, y, part)
                    t_a, g_a = t_new, g_b
                    continue
                if t_eval is None and t_e != samples.last_t:
                    samples.add(t_e, y_e)
                y_cur = _remap(model, t_e, y_e, P, part, new)
                if project:
                    y_cur = _project_state(model, t_e, y_cur, P, new)
                samples.switch(t_e, new)
                part, t_cur = new, t_e
                step_hint = max(0.5 * abs(t_new - t_a), 1e-12 * max(1.0, abs(t_e)))
                if direction * (tf - t_cur) <= 0:
                    raise _Finished
                break
    except _Finished:
        pass
    except _Stop as stop:
        status, message = stop.status, stop.message
        if monitor.active and not message.startswith("singular configuration"):
            status, message = _near_singular_note(monitor, samples, stop.at, part, status, message)
    except KeyboardInterrupt:
        status, message = -5, f"interrupted at t = {samples.last_t if samples.T else t0:.6g}"
    if status == 0:
        message = f"success: integrated to t = {tf:.6g}"
    message = _switch_note(samples, message)
    return status, message, counter.n, nsteps


class _Finished(Exception):
    """Internal: the integration reached tf."""


class _Dense:
    """The step's dense output, created on first use."""

    def __init__(self, solver):
        self.solver, self._sol = solver, None

    def __call__(self, t: float) -> np.ndarray:
        if self._sol is None:
            self._sol = self.solver.dense_output()
        return self._sol(t)


def _near_singular_note(monitor: _Monitor, samples: _Samples, at, part: Partition, status: int,
                        message: str) -> tuple[int, str]:
    """A failure next to a singular dependent set is reported as that (status -3, the
    message naming the matrix and the configuration)."""
    if at is not None:
        t, y = at
    elif samples.T:
        t, y, part = samples.T[-1], samples.Y[-1], samples.partitions[samples.pid[-1]]
    else:
        return status, message
    try:
        mats = monitor.matrices(t, np.asarray(y, dtype=float))
    except Exception:        # pragma: no cover - diagnostics only
        return status, message
    for k, (A, D) in enumerate(zip(mats, monitor._columns(part))):
        if A.shape[0] == 0 or not np.isfinite(A).all():
            continue
        if monitor.rank_measure(t, np.asarray(y, dtype=float), k) < monitor.rank_tol:
            # the whole Jacobian loses rank here (a change point): no dependent set is regular
            note = monitor.message(_Event("rank", t, k), t, np.asarray(y), part)
            return -3, f"{message.rstrip('.')}; this is next to a {note}"
        det_b = _det(A[:, pivoted_columns(A)[0]])
        if det_b != 0.0 and abs(_det(A[:, D])) < _NEAR_SINGULAR * abs(det_b):
            note = monitor.message(_Event("singular", t, k), t, np.asarray(y), part)
            return -3, f"{message.rstrip('.')}; this is next to a {note}"
    return status, message


def _switch_note(samples: _Samples, message: str) -> str:
    if not samples.changes:
        return message
    n = len(samples.changes)
    return f"{message} ({n} switch{'es' if n > 1 else ''} of the dependent set: trajectory.partition_changes)"


def _reset_solver_state(solver, y: np.ndarray, fun: Callable) -> None:
    """Replace the state of a scipy OdeSolver after a step (projection)."""
    if isinstance(solver, BDF):
        solver.D[0] = y
        solver.y = y
        return
    solver.y = y
    if isinstance(solver, (RK23, RK45, DOP853, Radau)):
        solver.f = fun(solver.t, y)


# ---------------------------------------------------------------- DAE mode
def _run_ida(model, t0, tf, x0, P, r_fun, t_eval, rtol, atol, max_step, first_step, max_num_steps,
             bar, polish, monitor: _Monitor, samples: _Samples, y0: np.ndarray):
    """Index-1 DAE: the dependent coordinates are algebraic with residual f_h; other rows y' - f(y).

    A new IDA instance is started at each switch of the dependent set; the switches and
    singular crossings are IDA root-finding events on the monitor's functions.
    """
    try:
        from sksundae.ida import IDA
    except ImportError as exc:  # pragma: no cover - dependency
        raise InputError("constraints='dae' needs scikit-sundae (pip install scikit-sundae)") from exc
    N, M = model.N, model.M
    counter = _Counter()
    hol = model._k_hol
    hol_out = np.empty(hol.nout) if hol is not None else None
    direction = np.sign(tf - t0)
    status, message, nsteps = 0, "", 0
    if t_eval is None or (t_eval.size and t_eval[0] == t0):
        samples.add(t0, y0)
    t_cur, y_cur = t0, y0.copy()
    part = samples.part

    def build(part, t_start, y_start):
        fun = _make_fun(model, "none", P, r_fun, 0.0, counter, part)
        failure: list[_Stop] = []
        stall = {"t": None, "count": 0}
        qdep = list(part.dependent_coordinates)

        def resfn(t, y, yp, res):
            try:
                xd = fun(t, y)
                res[:] = yp - xd
                if M:
                    z = model._z(t, y[:N], None, P, None, need_r=False)
                    hol.into(z, hol_out)
                    res[qdep] = hol_out[:M]
            except _Stop as stop:
                if not failure:
                    failure.append(stop)
                res[:] = np.nan
            except KeyboardInterrupt:
                failure.append(_Stop(-5, f"interrupted at t = {t:.6g}"))
                res[:] = np.nan
            if failure:
                raise failure[0]          # propagates out of IDA's step() (sksundae re-raises it)
            if not np.isfinite(res).all():
                # IDA retries non-finite residuals with ever smaller steps and never gives up:
                # stop once it is stuck at one time
                if stall["t"] is None or abs(t - stall["t"]) > 1e-9 * (1.0 + abs(t)):
                    stall["t"], stall["count"] = t, 0
                stall["count"] += 1
                if stall["count"] > 50:
                    msg = counter.nonfinite[1] if counter.nonfinite else f"non-finite residual at t = {t:.6g}"
                    failure.append(_Stop(-2, f"{msg}; the step size collapsed at t = {t:.6g}"))
                    raise failure[0]

        yp_start = fun(t_start, y_start)
        options = dict(rtol=rtol, atol=atol, max_num_steps=int(min(max_num_steps, 2**31 - 1)),
                       linsolver="dense")
        if M:
            options["algebraic_idx"] = qdep
            atol_vec = np.broadcast_to(np.asarray(atol, dtype=float), (len(y_start),)).copy()
            atol_vec[qdep] = _ALGEBRAIC_ATOL_FACTOR * (atol_vec[qdep] + rtol)
            options["atol"] = atol_vec
        if np.isfinite(max_step):
            options["max_step"] = float(max_step)
        if first_step is not None:
            options["first_step"] = float(first_step)
        if monitor.active:
            scale = [abs(d) if d != 0 and np.isfinite(d) else 1.0
                     for d in monitor.gauge(t_start, y_start, part).dets]

            def eventsfn(t, y, yp, events):
                try:
                    g = monitor.gauge(t, y, part)
                except Exception:
                    events[:] = 1.0
                    return
                events[0] = g.ratio - monitor.threshold if monitor.switch else 1.0
                events[1] = g.dets[0] / scale[0]
                events[2] = g.dets[1] / scale[1]

            eventsfn.terminal = [True, True, True]
            eventsfn.direction = [-1, 0, 0]
            options["eventsfn"] = eventsfn
            options["num_events"] = 3
        solver = IDA(resfn, **options)
        solver.init_step(t_start, y_start.copy(), yp_start)
        return solver, failure

    def check(sol, failure):
        nonlocal nsteps
        nsteps += 1
        if failure:
            raise failure[0]
        if not sol.success:
            raise _ida_failure(sol, counter)

    try:
        solver, failure = build(part, t_cur, y_cur)
        good = (t_cur, y_cur)         # the last state reached in the active dependent set
        outputs = [None] if t_eval is None else [te for te in t_eval if te != t0]
        k_out = 0
        while k_out < len(outputs):
            target = tf if t_eval is None else float(outputs[k_out])
            if t_eval is None:
                sol = solver.step(tf, method="onestep", tstop=tf)
            else:
                sol = solver.step(target, method="normal", tstop=tf)
            check(sol, failure)
            t_now, y_now = float(sol.t), np.array(sol.y)
            if sol.status != 2:
                good = (t_now, y_now)
            if sol.status == 2:                     # a root of the monitor's event functions
                i_ev = np.asarray(sol.i_events)[-1] if sol.i_events is not None else np.zeros(3)
                fired = [k for k in range(3) if i_ev[k] != 0]
                new = model.choose_partition(y_now[:N], P, t_now)
                if any(k > 0 for k in fired):
                    # the active dependent set became singular before the ratio event
                    which = min(k for k in fired if k > 0) - 1
                    kind = "singular"
                    if monitor.switch:
                        kind = "rank" if monitor.rank_measure(t_now, y_now, which) < monitor.rank_tol else "switch"
                        if new == part:          # no regular choice there after all
                            kind = "rank"
                    if kind != "switch":
                        raise _Stop(-3, monitor.message(_Event(kind, t_now, which), t_now, y_now, part))
                    # back to the last state known in this set, on in the set best at the crossing
                    t_now, y_now = good
                if new != part:
                    if t_eval is None and t_now != samples.last_t:
                        samples.add(t_now, y_now)
                    y_cur = _remap(model, t_now, y_now, P, part, new)
                    if M:
                        y_cur = _project_state(model, t_now, y_cur, P, new)
                    samples.switch(t_now, new)
                    part, t_cur = new, t_now
                else:
                    y_cur, t_cur = y_now, t_now
                if direction * (tf - t_cur) <= 0:
                    break
                solver, failure = build(part, t_cur, y_cur)
                good = (t_cur, y_cur)
                continue
            if t_eval is None:
                samples.add(t_now, y_now)
                bar(abs(t_now - t0), f"t = {t_now:.4g}, {nsteps} steps")
                if direction * (tf - t_now) <= 0:
                    break
            else:
                samples.add(t_now, y_now)
                bar(abs(t_now - t0), f"t = {t_now:.4g}")
                k_out += 1
    except _Stop as stop:
        status, message = stop.status, stop.message
        if monitor.active and not message.startswith("singular configuration"):
            status, message = _near_singular_note(monitor, samples, stop.at, part, status, message)
    except KeyboardInterrupt:
        status, message = -5, f"interrupted at t = {samples.last_t if samples.T else t0:.6g}"
    raw = _polish_algebraic(model, samples, P) if (M and polish) else None
    if status == 0:
        message = f"success: integrated to t = {tf:.6g} (IDA, index-1 DAE)"
        if raw is not None:
            message += (f"; IDA's algebraic variables had max |f_h| = {raw:.2g} at the samples, "
                        "polished by Newton's method on q_dep")
    message = _switch_note(samples, message)
    return status, message, counter.n, nsteps


def _polish_algebraic(model, samples: _Samples, P) -> float:
    """Solve f_h = 0 for the dependent coordinates at each sample (in place); returns max raw |f_h|."""
    raw = 0.0
    out = np.empty(model._k_hol.nout)
    for i in range(len(samples.T)):
        y, part = samples.Y[i], samples.partitions[samples.pid[i]]
        z = model._z(samples.T[i], y[:model.N], None, P, None, need_r=False)
        model._k_hol.into(z, out)
        raw = max(raw, float(np.abs(out[:model.M]).max()))
        try:
            q, ok, _ = model._project_z(z, max_iter=10, partition=part)
        except SymbodyError:
            continue
        if ok:
            y[:model.N] = q
    return raw


def _ida_failure(sol, counter: _Counter) -> _Stop:
    at = (float(sol.t), np.array(sol.y))
    if counter.nonfinite is not None:
        return _Stop(-2, f"{counter.nonfinite[1]}; IDA failed at t = {float(sol.t):.6g}: {sol.message}", at)
    return _Stop(-1, f"IDA failed at t = {float(sol.t):.6g}: {sol.message}", at)


# ---------------------------------------------------------------- result
def _trajectory(model: NumericModel, samples: _Samples, P, r_fun, status, message, mode, method,
                nfev, nsteps, wall) -> Trajectory:
    k = len(samples.T)
    T = np.array(samples.T, dtype=float)
    Y = np.array(samples.Y) if k else np.empty((0, model.N + model.p))
    U = None
    if k and any(samples.partitions[i] != model.default_partition for i in set(samples.pid)):
        # samples taken in other dependent sets: all speeds from each sample's own set, then
        # the state in the model's layout [q, u_ind]
        U = np.full((k, model.o), np.nan)
        pid = np.array(samples.pid)
        r0 = np.zeros(len(model.specifieds)) if model.specifieds else None
        for j in set(samples.pid):
            rows = np.nonzero(pid == j)[0]
            for chunk in (rows,) + tuple(rows[i:i + 1] for i in range(len(rows))):
                try:
                    Z = model._Z_many(T[chunk], Y[chunk], P, r0, partition=samples.partitions[j])
                except SymbodyError:
                    continue
                U[chunk] = Z[:, model._iu:model._ir]
                if len(chunk) == len(rows):
                    break
        X = np.concatenate([Y[:, :model.N], U[:, :model.p]], axis=1)
    else:
        X = Y
    if k:
        if r_fun is None:
            R = None
        else:
            R = np.array([np.asarray(r_fun(T[i], X[i]), dtype=float).ravel() for i in range(k)])
        try:
            post = model._evaluate_many(T, X, P, R, U=U)
        except SymbodyError:
            post = _evaluate_rowwise(model, T, X, P, R, U)
    else:
        post = {"u": np.empty((0, model.o)), "holonomic": np.empty((0, model.M)),
                "velocity": np.empty((0, model.m)), "multipliers": None}
    return Trajectory(
        t=T, x=X, q=X[:, :model.N], u=post["u"], coordinates=model.coordinates,
        speeds=model.speeds, states=model.states, specifieds=model.specifieds,
        constants=dict(zip(model.constants, (float(v) for v in P))),
        holonomic_residuals=post["holonomic"], velocity_residuals=post["velocity"],
        multipliers=post["multipliers"], status=status, message=message, constraints=mode,
        method=method, nfev=nfev, nsteps=nsteps, wall_time=wall,
        partition_changes=samples.changes)


def _evaluate_rowwise(model, T, X, P, R, U=None) -> dict:
    """Post-processing one sample at a time (a singular sample gets NaN)."""
    k = len(T)
    Uo = np.full((k, model.o), np.nan)
    H = np.full((k, model.M), np.nan)
    V = np.full((k, model.m), np.nan)
    L = np.full((k, model.m), np.nan) if model._augmented else None
    for i in range(k):
        if U is not None and not np.isfinite(U[i]).all():
            continue
        try:
            post = model._evaluate_many(T[i:i + 1], X[i:i + 1], P, None if R is None else R[i:i + 1],
                                        U=None if U is None else U[i:i + 1])
        except SymbodyError:
            continue
        Uo[i], H[i], V[i] = post["u"][0], post["holonomic"][0], post["velocity"][0]
        if L is not None and post["multipliers"] is not None:
            L[i] = post["multipliers"][0]
    return {"u": Uo, "holonomic": H, "velocity": V, "multipliers": L}
