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
                 kinematic rows) with a 100x tighter absolute tolerance; IDA holds f_h to its
                 Newton tolerance (about 5e-10 m on the four-bar at rtol = atol = 1e-10), and
                 the output samples' q_dep are then polished by Newton's method on f_h = 0
                 (``polish_algebraic=False`` returns IDA's values untouched).
``"auto"``       "project" when the model has holonomic constraints, else "none".
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from scipy.integrate import BDF, DOP853, LSODA, RK23, RK45, Radau
from scipy.linalg import lapack

from ..compilation import NumericModel
from ..compilation._progress import ProgressLine
from ..errors import InputError, SimulationError, SymbodyError
from .trajectory import Trajectory

__all__ = ["simulate", "MODES", "STATUS"]

MODES = ("auto", "none", "baumgarte", "project", "dae")

#: Trajectory.status values.
STATUS = {
    0: "success",
    -1: "integration failed (step size collapsed or too many steps)",
    -2: "non-finite values",
    -3: "singular matrix (constraint Jacobian or mass matrix)",
    -4: "projection onto the constraints did not converge",
    -5: "interrupted",
    -6: "error raised by a user callable (specifieds)",
}

_METHODS = {"RK23": RK23, "RK45": RK45, "DOP853": DOP853, "Radau": Radau, "BDF": BDF,
            "LSODA": LSODA}


#: IDA's Newton iteration stops when the weighted correction is small; the algebraic
#: variables (q_dep) get a tighter absolute tolerance so that f_h is resolved well
#: below the tolerance of the differential variables.
_ALGEBRAIC_ATOL_FACTOR = 1e-2


class _Stop(Exception):
    """Internal: stop the integration with a status and message."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def simulate(model: NumericModel, t_span: Sequence[float], x0, p, constraints: str = "auto",
             t_eval: Sequence[float] | None = None, method: str | None = None,
             rtol: float = 1e-6, atol: float = 1e-9, specifieds=None,
             raise_on_failure: bool = False, progress=None, *, max_step: float = math.inf,
             first_step: float | None = None, baumgarte: float = 10.0,
             max_num_steps: int = 10_000_000, polish_algebraic: bool = True) -> Trajectory:
    """Integrate ``model`` from ``t_span[0]`` to ``t_span[1]``; returns a :class:`Trajectory`.

    Parameters
    ----------
    model : NumericModel (``symbody.compile(eom)``).
    t_span : (t0, tf).
    x0 : initial state [q (N), u_ind (p)] as an array or a dict keyed by symbol or
        name.  Dependent coordinates are guesses: they are solved from f_h = 0 by
        Newton's method (q_ind held); dependent speeds follow from the velocity
        constraints.
    p : constants, array in ``model.constants`` order or dict keyed by symbol or name.
    constraints : "auto" (default: drift-free), "none", "baumgarte", "project", "dae".
    t_eval : output times (default: every accepted step).
    method : scipy solver ("RK45", "DOP853", "RK23", "Radau", "BDF", "LSODA"; LSODA
        not with "project") or "IDA" for "dae".  Default: "RK45" when rtol >= 1e-5,
        otherwise "DOP853".
    rtol, atol : integration tolerances.
    specifieds : values of the specified inputs: array / dict (constant), or a
        callable ``r(t, x) -> array``.
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

    P = model.constants_array(p)
    x = model.state_array(x0)
    r_fun = _specifieds_function(model, specifieds, t0, x)
    x = model.consistent_state(x, P, t0)

    if t_eval is not None:
        t_eval = np.asarray(t_eval, dtype=float).ravel()
        d = np.sign(tf - t0)
        if t_eval.size and (np.any(d * np.diff(t_eval) <= 0) or d * (t_eval[0] - t0) < 0
                            or d * (t_eval[-1] - tf) > 0):
            raise InputError("t_eval must be strictly monotonic in the direction of integration "
                             f"and lie within t_span = ({t0}, {tf})")

    bar = ProgressLine(progress, f"simulate ({mode})", abs(tf - t0))
    start = time.perf_counter()
    if mode == "dae":
        T, X, status, message, nfev, nsteps = _run_ida(model, t0, tf, x, P, r_fun, t_eval, rtol,
                                                       atol, max_step, first_step, max_num_steps,
                                                       bar, polish_algebraic)
    else:
        T, X, status, message, nfev, nsteps = _run_ode(model, mode, method, t0, tf, x, P, r_fun,
                                                       t_eval, rtol, atol, max_step, first_step,
                                                       baumgarte, max_num_steps, bar)
    wall = time.perf_counter() - start
    bar.close(message if status else "")
    traj = _trajectory(model, T, X, P, r_fun, status, message, mode, method, nfev, nsteps, wall)
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


def _specifieds_function(model: NumericModel, specifieds, t0: float, x0: np.ndarray):
    """Return r(t, x) -> array (or None when the model has no specifieds)."""
    if not model.specifieds:
        if specifieds is not None and not (isinstance(specifieds, (Mapping, Sequence, np.ndarray))
                                           and len(specifieds) == 0):
            raise InputError("specifieds were given but the model has no specified inputs")
        return None
    if specifieds is None:
        raise InputError("the model has specified inputs "
                         f"{', '.join(map(str, model.specifieds))}; pass specifieds= (array, dict "
                         "or callable r(t, x))")
    if callable(specifieds):
        try:
            model.specifieds_array(specifieds, t0, x0)
        except InputError:
            raise
        except Exception as exc:
            raise InputError(f"specifieds(t0, x0) raised {type(exc).__name__}: {exc}") from exc
        return specifieds
    const = model.specifieds_array(specifieds)
    return lambda t, x, _c=const: _c


def _solve_small(A: np.ndarray, b: np.ndarray):
    _, _, x, info = lapack.dgesv(A, b, overwrite_a=1, overwrite_b=0)
    return x, info


class _Counter:
    """Evaluation count and the last non-finite right-hand side (t, message), if any."""

    __slots__ = ("n", "nonfinite")

    def __init__(self):
        self.n = 0
        self.nonfinite: tuple[float, str] | None = None


def _make_fun(model: NumericModel, mode: str, P: np.ndarray, r_fun, alpha: float, counter: _Counter):
    """The ODE right-hand side f(t, x), raising _Stop on singular or non-finite values."""
    n, N, M = model.n, model.N, model.M
    rhs = model.rhs
    hol = model._k_hol

    def fun(t, x):
        counter.n += 1
        try:
            r = None if r_fun is None else r_fun(t, x)
            xd = rhs(t, x, P, r)
            if mode == "baumgarte" and M and alpha:
                z = model._z(t, x[:N], None, P, None, need_r=False)
                out = np.empty(hol.nout)
                hol.into(z, out)
                corr, info = _solve_small(out[M:].reshape(M, N)[:, n:].copy(), out[:M])
                if info != 0:
                    raise _Stop(-3, f"the holonomic constraint Jacobian is singular in the dependent "
                                    f"coordinates at t = {t:.6g}")
                xd[n:N] -= alpha * corr
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
                counter.nonfinite = (t, f"non-finite value of {model.states[i]}' at t = {t:.6g} "
                                        f"(state {np.array2string(np.asarray(x), precision=4)})")
        return xd

    return fun


def _project_state(model: NumericModel, t: float, y: np.ndarray, P: np.ndarray) -> np.ndarray:
    """y with q projected onto f_h = 0 (Newton on q_dep); raises _Stop on failure."""
    z = model._z(t, y[:model.N], None, P, None, need_r=False)
    try:
        q, ok, norm = model._project_z(z, max_iter=20)
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


def _run_ode(model, mode, method, t0, tf, x0, P, r_fun, t_eval, rtol, atol, max_step, first_step,
             alpha, max_num_steps, bar):
    counter = _Counter()
    fun = _make_fun(model, mode, P, r_fun, alpha, counter)
    project = mode == "project" and model.M > 0
    T: list[float] = [t0]
    X: list[np.ndarray] = [x0.copy()]
    status, message, nsteps = 0, "", 0
    direction = np.sign(tf - t0)
    ti = 1 if (t_eval is not None and t_eval.size and t_eval[0] == t0) else 0
    if t_eval is not None:
        T, X = ([t0], [x0.copy()]) if ti == 1 else ([], [])
    kwargs = dict(rtol=rtol, atol=atol, max_step=max_step)
    if first_step is not None:
        kwargs["first_step"] = first_step
    try:
        solver = _METHODS[method](fun, t0, x0.copy(), tf, **kwargs)
        while True:
            msg = solver.step()
            nsteps += 1
            if solver.status == "failed":
                status = -1
                message = f"integration failed at t = {solver.t:.6g}: {msg}"
                if counter.nonfinite is not None:
                    status = -2
                    message = f"{counter.nonfinite[1]}; the step size collapsed at t = {solver.t:.6g}"
                break
            t_new = solver.t
            y = solver.y
            if not np.isfinite(y).all():
                raise _Stop(-2, f"non-finite state at t = {t_new:.6g}")
            if t_eval is not None:
                j = ti
                while j < t_eval.size and direction * (t_eval[j] - t_new) <= 0:
                    j += 1
                if j > ti:
                    sol = solver.dense_output()
                    for te in t_eval[ti:j]:
                        ye = sol(te) if te != t_new else y.copy()
                        if project:
                            ye = _project_state(model, te, ye, P)
                        T.append(float(te))
                        X.append(ye)
                    ti = j
            if project:
                yp = _project_state(model, t_new, y, P)
                _reset_solver_state(solver, yp, fun)
                y = yp
            if t_eval is None:
                T.append(float(t_new))
                X.append(y.copy())
            bar(abs(t_new - t0), f"t = {t_new:.4g}, {nsteps} steps")
            if solver.status == "finished":
                break
            if nsteps >= max_num_steps:
                status = -1
                message = f"stopped after max_num_steps = {max_num_steps} steps at t = {t_new:.6g}"
                break
    except _Stop as stop:
        status, message = stop.status, stop.message
    except KeyboardInterrupt:
        status, message = -5, f"interrupted at t = {T[-1] if T else t0:.6g}"
    if status == 0:
        message = f"success: integrated to t = {tf:.6g}"
    Xa = np.array(X) if X else np.empty((0, len(x0)))
    return np.array(T, dtype=float), Xa, status, message, counter.n, nsteps


def _reset_solver_state(solver, y: np.ndarray, fun: Callable) -> None:
    """Replace the state of a scipy OdeSolver after a step (projection)."""
    if isinstance(solver, BDF):
        solver.D[0] = y
        solver.y = y
        return
    solver.y = y
    if isinstance(solver, (RK23, RK45, DOP853, Radau)):
        solver.f = fun(solver.t, y)


def _run_ida(model, t0, tf, x0, P, r_fun, t_eval, rtol, atol, max_step, first_step, max_num_steps,
             bar, polish=True):
    """Index-1 DAE: q_dep are algebraic with residual f_h; other rows y' - f(y)."""
    try:
        from sksundae.ida import IDA
    except ImportError as exc:  # pragma: no cover - dependency
        raise InputError("constraints='dae' needs scikit-sundae (pip install scikit-sundae)") from exc
    n, N, M = model.n, model.N, model.M
    counter = _Counter()
    fun = _make_fun(model, "none", P, r_fun, 0.0, counter)
    hol = model._k_hol
    failure: list[_Stop] = []
    hol_out = np.empty(hol.nout) if hol is not None else None

    stall = {"t": None, "count": 0}

    def resfn(t, y, yp, res):
        try:
            xd = fun(t, y)
            res[:] = yp - xd
            if M:
                z = model._z(t, y[:N], None, P, None, need_r=False)
                hol.into(z, hol_out)
                res[n:N] = hol_out[:M]
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

    try:
        yp0 = fun(t0, x0)
    except _Stop as stop:
        return np.array([t0]), x0[None, :].copy(), stop.status, stop.message, counter.n, 0
    options = dict(rtol=rtol, atol=atol, max_num_steps=int(min(max_num_steps, 2**31 - 1)),
                   linsolver="dense")
    if M:
        options["algebraic_idx"] = list(range(n, N))
        atol_vec = np.broadcast_to(np.asarray(atol, dtype=float), (len(x0),)).copy()
        atol_vec[n:N] *= _ALGEBRAIC_ATOL_FACTOR
        options["atol"] = atol_vec
    if np.isfinite(max_step):
        options["max_step"] = float(max_step)
    if first_step is not None:
        options["first_step"] = float(first_step)
    solver = IDA(resfn, **options)
    solver.init_step(t0, x0.copy(), yp0)
    status, message, nsteps = 0, "", 0
    T: list[float] = [t0]
    X: list[np.ndarray] = [x0.copy()]
    direction = np.sign(tf - t0)
    try:
        if t_eval is None:
            t_cur = t0
            while direction * (tf - t_cur) > 0:
                sol = solver.step(tf, method="onestep", tstop=tf)
                nsteps += 1
                if failure:
                    raise failure[0]
                if not sol.success:
                    raise _ida_failure(sol, counter)
                t_cur = float(sol.t)
                T.append(t_cur)
                X.append(np.array(sol.y))
                bar(abs(t_cur - t0), f"t = {t_cur:.4g}, {nsteps} steps")
        else:
            T, X = ([t0], [x0.copy()]) if (t_eval.size and t_eval[0] == t0) else ([], [])
            for te in t_eval:
                if te == t0:
                    continue
                sol = solver.step(float(te), method="normal", tstop=tf)
                nsteps += 1
                if failure:
                    raise failure[0]
                if not sol.success:
                    raise _ida_failure(sol, counter)
                T.append(float(sol.t))
                X.append(np.array(sol.y))
                bar(abs(float(sol.t) - t0), f"t = {float(sol.t):.4g}")
    except _Stop as stop:
        status, message = stop.status, stop.message
    except KeyboardInterrupt:
        status, message = -5, f"interrupted at t = {T[-1] if T else t0:.6g}"
    Xa = np.array(X) if X else np.empty((0, len(x0)))
    raw = _polish_algebraic(model, np.array(T, dtype=float), Xa, P) if (M and polish) else None
    if status == 0:
        message = f"success: integrated to t = {tf:.6g} (IDA, index-1 DAE)"
        if raw is not None:
            message += (f"; IDA's algebraic variables had max |f_h| = {raw:.2g} at the samples, "
                        "polished by Newton's method on q_dep")
    return np.array(T, dtype=float), Xa, status, message, counter.n, nsteps


def _polish_algebraic(model, T, X, P) -> float:
    """Solve f_h(q_ind, q_dep) = 0 for q_dep at each sample (in place); returns max raw |f_h|."""
    raw = 0.0
    for i in range(len(T)):
        z = model._z(T[i], X[i, :model.N], None, P, None, need_r=False)
        try:
            q, ok, _ = model._project_z(z, max_iter=10)
        except SymbodyError:
            continue
        out = np.empty(model._k_hol.nout)
        model._k_hol.into(model._z(T[i], X[i, :model.N], None, P, None, need_r=False), out)
        raw = max(raw, float(np.abs(out[:model.M]).max()))
        if ok:
            X[i, :model.N] = q
    return raw


def _ida_failure(sol, counter: _Counter) -> _Stop:
    if counter.nonfinite is not None:
        return _Stop(-2, f"{counter.nonfinite[1]}; IDA failed at t = {float(sol.t):.6g}: {sol.message}")
    return _Stop(-1, f"IDA failed at t = {float(sol.t):.6g}: {sol.message}")


def _trajectory(model: NumericModel, T, X, P, r_fun, status, message, mode, method, nfev, nsteps,
                wall) -> Trajectory:
    k = len(T)
    if k:
        if r_fun is None:
            R = None
        else:
            R = np.array([np.asarray(r_fun(T[i], X[i]), dtype=float).ravel() for i in range(k)])
        try:
            post = model._evaluate_many(T, X, P, R)
        except SymbodyError:
            post = _evaluate_rowwise(model, T, X, P, R)
    else:
        post = {"u": np.empty((0, model.o)), "holonomic": np.empty((0, model.M)),
                "velocity": np.empty((0, model.m)), "multipliers": None}
    return Trajectory(
        t=T, x=X, q=X[:, :model.N], u=post["u"], coordinates=model.coordinates,
        speeds=model.speeds, states=model.states, specifieds=model.specifieds,
        constants=dict(zip(model.constants, (float(v) for v in P))),
        holonomic_residuals=post["holonomic"], velocity_residuals=post["velocity"],
        multipliers=post["multipliers"], status=status, message=message, constraints=mode,
        method=method, nfev=nfev, nsteps=nsteps, wall_time=wall)


def _evaluate_rowwise(model, T, X, P, R) -> dict:
    """Post-processing one sample at a time (a singular sample gets NaN)."""
    k = len(T)
    U = np.full((k, model.o), np.nan)
    H = np.full((k, model.M), np.nan)
    V = np.full((k, model.m), np.nan)
    L = np.full((k, model.m), np.nan) if model._augmented else None
    for i in range(k):
        try:
            post = model._evaluate_many(T[i:i + 1], X[i:i + 1], P, None if R is None else R[i:i + 1])
        except SymbodyError:
            continue
        U[i], H[i], V[i] = post["u"][0], post["holonomic"][0], post["velocity"][0]
        if L is not None and post["multipliers"] is not None:
            L[i] = post["multipliers"][0]
    return {"u": U, "holonomic": H, "velocity": V, "multipliers": L}
