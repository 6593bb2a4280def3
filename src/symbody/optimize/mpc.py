"""Receding-horizon (model predictive) control on a symbody model.

A :class:`ModelPredictiveController` holds one :class:`~.problem.OptimalControlProblem`, the
*template* over the horizon ``[0, H]`` (its cost, input bounds, path constraints; no initial
conditions), transcribed once.  Each control period ``Δ`` it

1. fixes the NLP's initial state to the measured state ``x`` (lower = upper bounds of the
   independent states ``D = [q_ind, u_ind, x_e]`` at the first point: no rebuild),
2. starts IPOPT from the previous solution shifted by ``Δ`` (``Δ / h`` nodes; the tail
   repeats the last point) with warm-start options (a small initial barrier parameter),
3. returns the input to hold over the period: the mean over ``[0, Δ]`` of the optimal
   input as the transcription interpolates it (:func:`.replay.input_interpolation`).

:meth:`ModelPredictiveController.run` closes the loop with :func:`symbody.simulate` period by
period (the plant; zero-order hold of the controller's input), and reports the solve time of
every step (median, max).
"""

from __future__ import annotations

import time as _time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError

if TYPE_CHECKING:
    from ..analysis.trajectory import Trajectory
    from .problem import OptimalControlProblem

__all__ = ["ModelPredictiveController", "ClosedLoop", "WARM_START_OPTIONS"]

#: IPOPT options of a warm-started re-solve (the shifted previous solution is near the new
#: optimum: start the barrier parameter small and push the start little into the bounds)
WARM_START_OPTIONS: dict[str, Any] = {"mu_init": 1e-4, "bound_push": 1e-6,
                                      "bound_frac": 1e-6, "mu_strategy": "monotone",
                                      "warm_start_bound_push": 1e-6,
                                      "warm_start_mult_bound_push": 1e-6}


@dataclass
class ClosedLoop:
    """A closed-loop run of :meth:`ModelPredictiveController.run`.

    ``trajectory``: the plant (:func:`symbody.simulate`) sampled at the control instants
    ``t_k = t0 + k Δ`` (K + 1 of them), the input held over ``[t_k, t_{k+1})`` in
    ``specified_values`` (the last row repeats the last input); ``inputs`` (K, s);
    ``solve_times`` (K,) the wall time of each re-solve (s); ``iterations`` (K,);
    ``statuses`` (K,) IPOPT's codes; ``cpu_times`` (K,) the process CPU time of each step
    (all threads; less sensitive than wall time to other loads on the machine);
    ``median_solve_time``, ``max_solve_time`` (wall).
    """

    trajectory: Trajectory
    inputs: np.ndarray
    solve_times: np.ndarray
    iterations: np.ndarray
    statuses: np.ndarray
    cpu_times: np.ndarray | None = None
    pieces: list = field(default_factory=list, repr=False)

    @property
    def median_solve_time(self) -> float:
        return float(np.median(self.solve_times))

    @property
    def max_solve_time(self) -> float:
        return float(np.max(self.solve_times))

    def __repr__(self) -> str:
        ok = int(np.isin(self.statuses, (0, 1)).sum())
        return (f"<ClosedLoop {len(self.solve_times)} periods ({ok} solved): re-solve median "
                f"{1e3 * self.median_solve_time:.2f} ms, max {1e3 * self.max_solve_time:.2f} ms, "
                f"median {np.median(self.iterations):.0f} iterations>")


class ModelPredictiveController:
    """Receding-horizon control with the transcribed ``problem`` as the template.

    Parameters
    ----------
    problem : OptimalControlProblem
        The horizon's problem: fixed duration ``H`` (the horizon), ``num_nodes``, the cost
        and the bounds (e.g. ``{F: (-F_max, F_max)}``); its instance constraints stay (give
        none on the initial state: the controller fixes it).
    period : float, optional
        The control period Δ, a whole number of node intervals ``h = H / (num_nodes - 1)``
        (default h).
    max_iter, tol : IPOPT's limits for each re-solve.
    options : mapping, optional
        Further IPOPT options of each re-solve (added to :data:`WARM_START_OPTIONS` after the
        first solve; the first, cold solve uses only these).
    solve_options : mapping, optional
        Further keywords of ``problem.solve`` (e.g. a solver choice).

    The template is time-invariant: every re-solve is the problem on ``[t0, t0 + H]`` from the
    measured state (a cost or constraint in t is read relative to the horizon's start).

    Use: ``u = mpc.step(x)`` each period (``x`` the measured state in the model's state order
    ``[q, u_ind, x_e]``, an array or a dict keyed by symbol or name), or ``mpc.run(x0, T)``.
    """

    def __init__(self, problem: OptimalControlProblem, *, period: float | None = None,
                 max_iter: int = 200, tol: float = 1e-6, options: Mapping | None = None,
                 solve_options: Mapping | None = None) -> None:
        if problem.duration_symbol is not None:
            raise InputError("ModelPredictiveController: the horizon's duration must be a "
                             f"number, not the Symbol {problem.duration_symbol}")
        self.problem = problem
        nlp = problem.nlp
        self.nlp = nlp
        self.h = problem.duration / (problem.num_nodes - 1)
        self.period = self.h if period is None else float(period)
        shift = self.period / self.h
        if not (shift >= 1 - 1e-9 and abs(shift - round(shift)) < 1e-9
                and round(shift) < problem.num_nodes - 1):
            raise InputError(f"period = {period!r} must be a whole number of node intervals "
                             f"h = {self.h:.6g} shorter than the horizon {problem.duration:.6g}")
        self.shift_nodes = int(round(shift))
        self.points_per_interval = (nlp.layout["P"] - 1) // (problem.num_nodes - 1)
        mdl = nlp.model
        self.state_columns = np.array(mdl.D, dtype=np.intp)
        # positions in the simulation state [q (N), u_ind (p), x_e (e)] of the D columns
        self.state_positions = np.array(
            list(range(mdl.n)) + list(range(mdl.N, mdl.N + mdl.p))
            + list(range(mdl.N + mdl.p, mdl.N + mdl.p + mdl.e)), dtype=np.intp)
        self.n_state = mdl.N + mdl.p + mdl.e
        self.states = problem.coordinates + problem.speeds[:mdl.p] + problem.extra_states
        self.max_iter, self.tol = int(max_iter), float(tol)
        self.options = dict(options or {})
        self.solve_options = dict(solve_options or {})
        self._lb0, self._ub0 = nlp.lb.copy(), nlp.ub.copy()
        g, gw = np.polynomial.legendre.leggauss(3)
        starts = problem.t0 + self.h * np.arange(self.shift_nodes)
        self._mean_times = (starts[:, None] + (g + 1.0) / 2.0 * self.h).ravel()
        self._mean_weights = np.tile(gw / 2.0, self.shift_nodes) / self.shift_nodes
        self._input_lo = np.array([problem.bounds.get(r, (-np.inf, np.inf))[0]
                                   for r in problem.specifieds])
        self._input_hi = np.array([problem.bounds.get(r, (-np.inf, np.inf))[1]
                                   for r in problem.specifieds])
        self.w: np.ndarray | None = None
        self.multipliers: dict | None = None
        self.last_result: Any = None

    # ------------------------------------------------------------------ one period
    def state_array(self, x: Any) -> np.ndarray:
        """The state (n_x,) ``[q, u_ind, x_e]`` from an array or a dict keyed by symbol/name."""
        from ..compilation.named_values import values_by_symbol
        return values_by_symbol(x, self.states, "state")

    def shifted(self, w: np.ndarray) -> np.ndarray:
        """``w`` moved ``period`` ahead: every per-point unknown takes the value of the point
        ``Δ / h`` intervals later; the tail repeats the last point."""
        nlp = self.nlp
        k = self.shift_nodes * self.points_per_interval
        out = w.copy()
        for idx in (nlp.iX, nlp.iR, nlp.iV, nlp.iA, nlp.iL):
            if idx.size:
                out[idx[:-k]] = w[idx[k:]]
                out[idx[-k:]] = w[idx[-1]]
        return out

    def step(self, x: Any, guess: Any = None) -> np.ndarray:
        """Re-solve from the measured state ``x``; returns the input (s,) to hold over the
        next period.  ``guess``: the initial guess of the first (cold) solve (as in
        ``problem.solve``); later steps start from the shifted previous solution."""
        from .replay import input_interpolation
        problem, nlp = self.problem, self.nlp
        xs = self.state_array(x)
        nlp.lb[:], nlp.ub[:] = self._lb0, self._ub0
        cols = nlp.iX[0][self.state_columns]
        vals = xs[self.state_positions]
        nlp.lb[cols] = nlp.ub[cols] = vals
        options = dict(self.options)
        warm = None
        if self.w is None:
            start = problem.initial_vector(guess)
        else:
            start = self.shifted(self.w)
            options = {**WARM_START_OPTIONS, **options}
            if self.multipliers is not None:       # the bound multipliers shifted as w
                warm = {"mult_g": self.multipliers["mult_g"],
                        "mult_x_L": self.shifted(self.multipliers["mult_x_L"]),
                        "mult_x_U": self.shifted(self.multipliers["mult_x_U"])}
        start[cols] = vals
        try:
            result = problem.solve(start, progress=False, max_iter=self.max_iter, tol=self.tol,
                                   options=options, warm_start=warm, **self.solve_options)
        finally:
            nlp.lb[:], nlp.ub[:] = self._lb0, self._ub0
        self.last_result = result
        if np.all(np.isfinite(result.w)):
            self.w = result.w
            ipopt = result.info.get("ipopt", {})
            self.multipliers = ({k: np.asarray(ipopt[k], dtype=float)
                                 for k in ("mult_g", "mult_x_L", "mult_x_U")}
                                if all(k in ipopt for k in ("mult_g", "mult_x_L", "mult_x_U"))
                                else None)
        r = input_interpolation(problem, nlp, result.w)
        # the mean of the optimal input over the period (Gauss-Legendre on each interval:
        # exact for the transcriptions' polynomials)
        values = np.array([r(t) for t in self._mean_times])
        u = (self._mean_weights[:, None] * values).sum(axis=0)
        return np.clip(u, self._input_lo, self._input_hi)

    def reset(self) -> None:
        """Forget the previous solution (the next step is a cold solve)."""
        self.w = None
        self.multipliers = None

    # ------------------------------------------------------------------ closed loop
    def run(self, x0: Any, duration: float, p: Any = None, *, guess: Any = None,
            solver: Any = None, model: Any = None) -> ClosedLoop:
        """The closed loop over ``duration``: the plant ``model`` (default: the problem's,
        compiled; constants ``p``, default the problem's known parameters) simulated by
        :func:`symbody.simulate` one period at a time with the controller's input held.

        ``guess``: the first solve's initial guess; ``solver``: simulate's Solver.
        Returns a :class:`ClosedLoop` with the solve time of every step."""
        from ..analysis import simulate
        from ..analysis.trajectory import ModelInfo, RunReport, SampleArrays, Trajectory
        from ..compilation import compile as compile_model
        problem = self.problem
        numeric = model if model is not None else compile_model(problem.eom)
        p = dict(problem.known_parameters) if p is None else p
        K = int(round(float(duration) / self.period))
        if K < 1:
            raise InputError(f"duration = {duration!r} is shorter than one period {self.period}")
        x = self.state_array(x0)
        t = problem.t0
        ts, xs, us, times, iters, stats, pieces, cpu = [t], [x], [], [], [], [], [], []
        self.reset()
        for k in range(K):
            t_start, c_start = _time.perf_counter(), _time.process_time()
            u = self.step(x, guess if k == 0 else None)
            times.append(_time.perf_counter() - t_start)
            cpu.append(_time.process_time() - c_start)
            iters.append(self.last_result.iterations)
            stats.append(self.last_result.status)
            sim = simulate(numeric, (t, t + self.period), x, p,
                           specifieds=u if len(u) else None, solver=solver,
                           t_eval=[t, t + self.period])
            if sim.status != 0:
                raise InputError(f"the plant's simulation failed at t = {t:.6g}: {sim.message}")
            pieces.append(sim)
            t = float(sim.t[-1])
            x = np.asarray(sim.x[-1], dtype=float)
            ts.append(t)
            xs.append(x)
            us.append(u)
        T, X = np.array(ts), np.array(xs)
        U = np.array(us).reshape(K, -1)
        mdl = self.nlp.model
        ends = [(pieces[0], 0)] + [(pc, -1) for pc in pieces]
        u_full = np.array([pc.u[i] for pc, i in ends])
        hol = np.array([pc.holonomic_residuals[i] for pc, i in ends]).reshape(K + 1, mdl.M)
        vel = np.array([pc.velocity_residuals[i] for pc, i in ends]).reshape(K + 1, mdl.m)
        spec = np.vstack([U, U[-1:]]) if U.size else None
        traj = Trajectory(
            SampleArrays(T, X, X[:, :mdl.N], u_full, holonomic_residuals=hol,
                         velocity_residuals=vel, specified_values=spec),
            ModelInfo(coordinates=problem.coordinates, speeds=problem.speeds,
                      constants=dict(problem.known_parameters), states=self.states,
                      specifieds=problem.specifieds),
            RunReport(status=0, message=f"closed loop: {K} periods of {self.period:g} s",
                      constraints="auto", method="model predictive control",
                      wall_time=float(np.sum(times))))
        return ClosedLoop(trajectory=traj, inputs=U, solve_times=np.array(times),
                          iterations=np.array(iters), statuses=np.array(stats),
                          cpu_times=np.array(cpu), pieces=pieces)
