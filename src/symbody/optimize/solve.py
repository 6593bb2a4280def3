"""Solving the collocation NLP with IPOPT (the ``cyipopt`` module of the ``cyipopt-wheels``
distribution, which bundles IPOPT: ``pip install symbody[optimize]``)."""

from __future__ import annotations

import time as _time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError, SymbodyError
from ..progress import as_progress

if TYPE_CHECKING:
    from ..analysis.trajectory import Trajectory
    from .statement import ProblemStatement
    from .transcription import NLP

__all__ = ["OptimalControlResult", "solve_nlp", "IPOPT_STATUS", "SOLVERS", "resolve_solver"]

#: IPOPT's ApplicationReturnStatus -> what it means for the user
IPOPT_STATUS = {
    0: "solved: optimal to the requested tolerance",
    1: "solved to an acceptable level (not to the requested tolerance)",
    2: "infeasible: IPOPT converged to a point of locally minimal constraint violation; check "
       "the constraints and bounds for contradictions or try another initial guess",
    3: "search direction became too small (the problem may be badly scaled)",
    4: "iterates diverged: some unknowns grew without bound; add bounds",
    5: "stopped by the user callback",
    6: "feasible point found (stopped at the first feasible point as asked)",
    -1: "maximum number of iterations reached: raise max_iter or improve the initial guess",
    -2: "restoration phase failed: the constraints may be degenerate or the start far off",
    -3: "error in the step computation (singular or badly conditioned KKT system)",
    -4: "maximum CPU time exceeded",
    -5: "maximum wall time exceeded",
    -10: "not enough degrees of freedom: more equality constraints than unknowns",
    -11: "invalid problem definition",
    -12: "invalid option",
    -13: "invalid number: a NaN or Inf was evaluated (check the model and the bounds)",
    -100: "unrecoverable exception",
    -101: "non-IPOPT exception",
    -102: "insufficient memory",
    -199: "internal error",
}


class OptimizationDependencyError(SymbodyError, ImportError):
    """cyipopt (the optional ``symbody[optimize]`` extra) is not installed."""


@dataclass
class OptimalControlResult:
    """What IPOPT found.

    ``trajectory``: a :class:`~symbody.Trajectory` at the nodes (states, speeds, inputs in
    ``specified_values``, multipliers with Hermite–Simpson, the unknown parameters in
    ``constants``); ``objective``; ``parameters`` {Symbol: value} of the unknown parameters;
    ``duration``; ``status`` (IPOPT's code), ``message``; ``success``; ``iterations``;
    ``solve_time`` (s); ``w`` the NLP solution vector; ``constraint_violation`` (max abs(c)
    outside its bounds); ``inputs`` (num_nodes, s).
    """

    trajectory: Trajectory
    objective: float
    parameters: dict
    duration: float
    status: int
    message: str
    iterations: int
    solve_time: float
    w: np.ndarray
    constraint_violation: float
    inputs: np.ndarray
    info: dict = field(default_factory=dict)
    problem: Any = field(default=None, repr=False)

    @property
    def success(self) -> bool:
        return self.status in (0, 1)

    def simulate(self, *, solver: Any = None, t_eval: Any = None,
                 constraints: Any = "auto") -> Any:
        """Replay the optimal inputs through :func:`symbody.simulate`, interpolated between the
        nodes as the transcription assumes them (zero-order hold for backward Euler and
        midpoint, quadratic for Hermite-Simpson, the collocation polynomial for Radau), from
        the optimal initial state; returns a :class:`~.replay.Replay` with the trajectory and
        the maximum state deviation from the optimal path at the nodes and at the end.
        ``solver``: a :class:`~symbody.Solver` (default rtol = atol = 1e-10, max_step h/2)."""
        from .replay import replay
        return replay(self, solver=solver, t_eval=t_eval, constraints=constraints)

    def __repr__(self) -> str:
        return (f"<OptimalControlResult {'success' if self.success else 'FAILED'}: objective "
                f"{self.objective:.8g}, {self.iterations} iterations, {self.solve_time:.3f} s: "
                f"{self.message}>")


def _import_cyipopt():
    try:
        import cyipopt
    except ImportError as exc:
        raise OptimizationDependencyError(
            "trajectory optimization needs IPOPT through cyipopt: pip install 'symbody[optimize]' "
            "(the cyipopt-wheels distribution bundles IPOPT; pip install --pre cyipopt-wheels)"
        ) from exc
    return cyipopt


def initial_vector(problem: ProblemStatement, nlp: NLP, guess: Any) -> np.ndarray:
    """The vector (n,) of ``nlp``, the transcription of ``problem``, from an initial guess
    (see :meth:`~.problem.OptimalControlProblem.solve`)."""
    from ..analysis.trajectory import Trajectory
    n = nlp.n
    if guess is None:
        w = np.zeros(n)
    elif isinstance(guess, np.ndarray) or (isinstance(guess, (list, tuple)) and len(guess) == n):
        w = np.asarray(guess, dtype=float).ravel()
        if w.shape != (n,):
            raise InputError(f"initial_guess: the NLP has {n} unknowns, got an array of shape "
                             f"{np.shape(guess)}")
        return w.copy()
    else:
        w = np.zeros(n)
        T = problem.duration
        if problem.duration_symbol is not None:
            T = None
            if isinstance(guess, Mapping) and problem.duration_symbol in guess:
                T = float(guess[problem.duration_symbol])
            elif isinstance(guess, Mapping) and str(problem.duration_symbol) in guess:
                T = float(guess[str(problem.duration_symbol)])
            elif isinstance(guess, Trajectory):
                T = float(guess.t[-1] - guess.t[0])
            if T is None:
                raise InputError("initial_guess: give the free duration's value, "
                                 f"{{{problem.duration_symbol}: value}}")
            w[nlp.ih] = T / (problem.num_nodes - 1)
        tp = problem.t0 + nlp.point_kappa * (T / (problem.num_nodes - 1))
        if isinstance(guess, Trajectory):
            ts = guess.t - guess.t[0] + problem.t0
            cols = {}
            for j, c in enumerate(guess.coordinates):
                cols[c] = guess.q[:, j]
            for j, c in enumerate(guess.speeds):
                cols[c] = guess.u[:, j]
            for j, c in enumerate(guess.states):
                cols.setdefault(c, guess.x[:, j])
            if guess.specified_values is not None:
                for j, c in enumerate(guess.specifieds):
                    cols[c] = guess.specified_values[:, j]
            for c, v in guess.constants.items():
                if c in problem.unknown_parameters:
                    w[nlp.ip[problem.unknown_parameters.index(c)]] = v
            for j, c in enumerate(problem.states):
                if c in cols:
                    w[nlp.iX[:, j]] = np.interp(tp, ts, cols[c])
            for j, c in enumerate(problem.specifieds):
                if c in cols:
                    w[nlp.iR[:, j]] = np.interp(tp, ts, cols[c])
        elif isinstance(guess, Mapping):
            tn = np.linspace(tp[0], tp[-1], problem.num_nodes)
            for c, v in guess.items():
                if isinstance(c, str):               # a name, as simulate takes it
                    c = problem.symbol(c, "initial_guess")
                if c == problem.duration_symbol:
                    continue
                if c in problem.states or c in problem.specifieds:
                    v = np.asarray(v, dtype=float)
                    if v.ndim == 1 and v.shape[0] == problem.num_nodes:
                        v = np.interp(tp, tn, v)
                    elif v.ndim != 0:
                        raise InputError(f"initial_guess[{c}]: give a number or num_nodes = "
                                         f"{problem.num_nodes} values, got shape {v.shape}")
                    if c in problem.states:
                        w[nlp.iX[:, problem.states.index(c)]] = v
                    else:
                        w[nlp.iR[:, problem.specifieds.index(c)]] = v
                elif c in problem.unknown_parameters:
                    w[nlp.ip[problem.unknown_parameters.index(c)]] = float(v)
                else:
                    raise InputError(f"initial_guess: {c} is not a state, input, unknown parameter "
                                     "or the duration of this problem")
        else:
            raise InputError("initial_guess must be None, a Trajectory, a mapping or an array of "
                             f"{n} values, got {type(guess).__name__}")
        if nlp.layout["separated"] and nlp.iV.size:
            # derivative unknowns from the guessed differential states
            h = w[nlp.ih] if problem.duration_symbol is not None else nlp.w_ext[nlp.n]
            D = w[nlp.iX[:, nlp.model.D]]
            spacing = h / 2.0 if nlp.layout["hs"] else nlp.point_kappa * h
            w[nlp.iV] = np.gradient(D, spacing, axis=0) if len(D) > 1 else 0.0
    return np.clip(w, nlp.lb, nlp.ub)


#: the solvers of :func:`solve_nlp` (``solver=``); "auto" is the first one installed
SOLVERS = ("ipopt-casadi", "ipopt-casadi-sx", "cyipopt")


def resolve_solver(solver: str) -> str:
    """The solver ``solver`` names: "auto" -> "ipopt-casadi" when CasADi is installed (the
    faster one, see docs/optimize.md), else "cyipopt"; InputError for an unknown name and
    OptimizationDependencyError when the one named is not installed."""
    if solver not in ("auto",) + SOLVERS:
        raise InputError(f"solver must be 'auto' or one of {', '.join(map(repr, SOLVERS))}, "
                         f"got {solver!r}")
    if solver == "auto" or solver.startswith("ipopt-casadi"):
        try:
            import casadi  # noqa: F401
        except ImportError as exc:
            if solver != "auto":
                raise OptimizationDependencyError(
                    f"solver={solver!r} needs CasADi: pip install casadi (or "
                    "pip install 'symbody[optimize]')") from exc
            return "cyipopt"
        return "ipopt-casadi" if solver == "auto" else solver
    return solver


def solve_nlp(problem: ProblemStatement, nlp: NLP, initial_guess: Any = None, *,
              progress: Any = None, print_level: int = 0, max_iter: int = 3000, tol: float = 1e-8,
              options: Mapping | None = None, solver: str = "auto",
              warm_start: Mapping | None = None) -> OptimalControlResult:
    """Run IPOPT on ``nlp``, the transcription of ``problem``, from ``initial_guess``:
    CasADi's build of IPOPT on symbody's compiled derivative kernels
    (``solver="ipopt-casadi"``), CasADi's IPOPT with CasADi's own derivatives of the NLP's
    blocks as SX (``"ipopt-casadi-sx"``), or cyipopt-wheels' IPOPT on the kernels
    (``"cyipopt"``); ``"auto"``: "ipopt-casadi" when CasADi is installed, else "cyipopt".

    ``warm_start``: the multipliers to start from, ``{"mult_g": (m,), "mult_x_L": (n,),
    "mult_x_U": (n,)}`` (e.g. a previous result's ``info["ipopt"]``, which every solver
    fills); with it IPOPT's ``warm_start_init_point`` is "yes"."""
    name = resolve_solver(solver)
    w0 = initial_vector(problem, nlp, initial_guess)
    if name.startswith("ipopt-casadi"):
        return _solve_casadi(problem, nlp, w0, progress=progress, print_level=print_level,
                             max_iter=max_iter, tol=tol, options=options,
                             derivatives="sx" if name == "ipopt-casadi-sx" else "kernels",
                             warm_start=warm_start)
    cyipopt = _import_cyipopt()
    bar = as_progress(progress, "IPOPT", total=float(max_iter))
    history: list = []

    class _Callbacks:
        objective = staticmethod(nlp.objective)
        gradient = staticmethod(nlp.gradient)
        constraints = staticmethod(nlp.constraints)
        jacobian = staticmethod(nlp.jacobian)
        jacobianstructure = staticmethod(nlp.jacobianstructure)
        hessianstructure = staticmethod(nlp.hessianstructure)
        hessian = staticmethod(nlp.hessian)

        @staticmethod
        def intermediate(*stats: Any) -> bool:
            # cyipopt passes IPOPT's 11 iteration statistics positionally: alg_mod, iter_count,
            # obj_value, inf_pr, inf_du, mu, d_norm, regularization_size, alpha_du, alpha_pr,
            # ls_trials
            _, iter_count, obj_value, inf_pr, inf_du = stats[:5]
            history.append((iter_count, obj_value, inf_pr, inf_du))
            bar.set(iter_count, f"it {iter_count}: objective {obj_value:.6g}, "
                                f"infeasibility {inf_pr:.2e}")
            return True

    prob = cyipopt.Problem(n=nlp.n, m=nlp.m, problem_obj=_Callbacks(), lb=nlp.lb, ub=nlp.ub,
                           cl=nlp.cl, cu=nlp.cu)
    prob.add_option("print_level", int(print_level))
    prob.add_option("max_iter", int(max_iter))
    prob.add_option("tol", float(tol))
    prob.add_option("sb", "yes")
    if problem.hessian == "limited-memory":
        prob.add_option("hessian_approximation", "limited-memory")
    for k, v in dict(options or {}).items():
        prob.add_option(str(k), v)
    multipliers = {}
    if warm_start is not None:
        prob.add_option("warm_start_init_point", "yes")
        multipliers = dict(lagrange=np.asarray(warm_start["mult_g"], dtype=float),
                           zl=np.asarray(warm_start["mult_x_L"], dtype=float),
                           zu=np.asarray(warm_start["mult_x_U"], dtype=float))
    t_start = _time.perf_counter()
    with bar:
        w, info = prob.solve(w0, **multipliers)
    solve_time = _time.perf_counter() - t_start
    status = int(info["status"])
    message = IPOPT_STATUS.get(status, info.get("status_msg", b"").decode()
                               if isinstance(info.get("status_msg"), bytes) else str(info.get("status_msg")))
    c = nlp.constraints(w)
    viol = float(np.max(np.maximum(nlp.cl - c, c - nlp.cu), initial=0.0))
    iterations = history[-1][0] if history else 0
    run = dict(objective=float(info["obj_val"]), status=status, message=message,
               iterations=int(iterations), solve_time=solve_time, constraint_violation=viol,
               info={"history": history, "ipopt": info, "solver": "cyipopt"})
    return _result(problem, nlp, w, run)


def _solve_casadi(problem: ProblemStatement, nlp: NLP, w0: np.ndarray, *, progress: Any,
                  print_level: int, max_iter: int, tol: float,
                  options: Mapping | None, derivatives: str,
                  warm_start: Mapping | None = None) -> OptimalControlResult:
    """The NLP solved by CasADi's ``nlpsol("ipopt")`` (:mod:`.casadi_nlp`).  IPOPT's bound
    multipliers z_L, z_U are CasADi's ``lam_x = z_U - z_L`` (both ways)."""
    from .casadi_nlp import CASADI_STATUS, casadi_solver

    opts: dict = {"print_time": False, "ipopt.print_level": int(print_level),
                  "ipopt.max_iter": int(max_iter), "ipopt.tol": float(tol), "ipopt.sb": "yes"}
    if problem.hessian == "limited-memory":
        opts["ipopt.hessian_approximation"] = "limited-memory"
    for k, v in dict(options or {}).items():
        k = str(k)
        opts[k if k.startswith("ipopt.") else "ipopt." + k] = v
    start: dict = {}
    if warm_start is not None:
        opts["ipopt.warm_start_init_point"] = "yes"
        start = {"lam_g0": np.asarray(warm_start["mult_g"], dtype=float),
                 "lam_x0": (np.asarray(warm_start["mult_x_U"], dtype=float)
                            - np.asarray(warm_start["mult_x_L"], dtype=float))}
    bar = as_progress(progress, "IPOPT", total=float(max_iter))
    shown = bool(bar.enabled or bar.callback is not None)
    solver, setup_time = casadi_solver(nlp, opts, derivatives, progress=shown)
    count = [0]

    def iteration(f: float, g: np.ndarray) -> None:
        k = count[0]
        count[0] += 1
        viol = float(np.max(np.maximum(nlp.cl - g, g - nlp.cu), initial=0.0))
        bar.set(k, f"it {k}: objective {f:.6g}, infeasibility {viol:.2e}")

    hook = nlp.__dict__["casadi_progress"]
    hook[0] = iteration
    t_start = _time.perf_counter()
    try:
        with bar:
            sol = solver(x0=w0, lbx=nlp.lb, ubx=nlp.ub, lbg=nlp.cl, ubg=nlp.cu, **start)
    finally:
        hook[0] = None
    solve_time = _time.perf_counter() - t_start
    stats = solver.stats()
    it = stats.get("iterations", {})
    history = [(k, float(o), float(p), float(d)) for k, (o, p, d) in
               enumerate(zip(it.get("obj", []), it.get("inf_pr", []), it.get("inf_du", [])))]
    w = np.asarray(sol["x"], dtype=float).ravel()
    lam_x = np.asarray(sol["lam_x"], dtype=float).ravel()
    multipliers = {"mult_g": np.asarray(sol["lam_g"], dtype=float).ravel(),
                   "mult_x_L": np.maximum(-lam_x, 0.0), "mult_x_U": np.maximum(lam_x, 0.0)}
    code = CASADI_STATUS.get(str(stats.get("return_status")), -199)
    message = IPOPT_STATUS.get(code, str(stats.get("return_status")))
    c = nlp.constraints(w)
    viol = float(np.max(np.maximum(nlp.cl - c, c - nlp.cu), initial=0.0))
    run = dict(objective=float(sol["f"]), status=code, message=message,
               iterations=int(stats.get("iter_count", len(history) - 1)), solve_time=solve_time,
               constraint_violation=viol,
               info={"history": history, "casadi": stats,
                     "solver": "ipopt-casadi-sx" if derivatives == "sx" else "ipopt-casadi",
                     "setup_time": setup_time, "ipopt": multipliers,
                     "multipliers": multipliers["mult_g"]})
    return _result(problem, nlp, w, run)


def _result(problem: ProblemStatement, nlp: NLP, w: np.ndarray, run: dict) -> OptimalControlResult:
    """The result of the IPOPT run ``run`` (the fields of :class:`OptimalControlResult` but the
    trajectory, parameters, duration, ``w`` and inputs) that ended at ``w``."""
    from ..analysis.trajectory import ModelInfo, RunReport, SampleArrays, Trajectory
    mdl = nlp.model
    status, message = run["status"], run["message"]
    nodes = nlp.node_points
    X = w[nlp.iX[nodes]]
    Rv = w[nlp.iR[nodes]]
    h = w[nlp.ih] if problem.duration_symbol is not None else nlp.w_ext[nlp.n]
    T = h * (problem.num_nodes - 1)
    t = problem.t0 + h * np.arange(problem.num_nodes)
    N, o, p = mdl.N, mdl.o, mdl.p
    q, u, xe = X[:, :N], X[:, N:N + o], X[:, N + o:]
    x = np.hstack([q, u[:, :p], xe])
    params = {c: float(w[nlp.ip[j]]) for j, c in enumerate(problem.unknown_parameters)}
    constants = dict(problem.known_parameters)
    constants.update(params)
    hol = np.zeros((len(t), mdl.M))
    vel = np.zeros((len(t), mdl.m))
    if nlp.G_block is not None:
        we = nlp.w_ext.copy()
        we[:nlp.n] = w
        G = nlp.G_block.values(we)[nodes]
        hol, vel = G[:, :mdl.M], G[:, mdl.M:]
    mult = w[nlp.iL[nodes]] if (nlp.layout["separated"] and mdl.mm) else None
    xdot = None
    if nlp.layout["separated"] and mdl.M == 0 and mdl.m == 0:
        xdot = w[nlp.iV[nodes]]            # D = all states then
    traj = Trajectory(
        SampleArrays(t, x, q, u, holonomic_residuals=hol, velocity_residuals=vel,
                     multipliers=mult, specified_values=Rv if Rv.size else None, xdot=xdot),
        ModelInfo(coordinates=problem.coordinates, speeds=problem.speeds, constants=constants,
                  states=problem.coordinates + problem.speeds[:p] + problem.extra_states,
                  specifieds=problem.specifieds),
        RunReport(status=0 if status in (0, 1) else -1, message=message,
                  constraints="collocation", method=f"collocation ({problem.transcription})",
                  wall_time=run["solve_time"]))
    return OptimalControlResult(trajectory=traj, parameters=params, duration=float(T), w=w,
                                inputs=Rv, problem=problem, **run)

