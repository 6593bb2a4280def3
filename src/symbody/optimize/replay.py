"""Replaying an optimal control: the optimal inputs, interpolated between the points as the
transcription assumes them, integrated by :func:`symbody.simulate` from the optimal initial
state, and how far the replay ends from the optimal path.

The inputs between the nodes ``t_k`` (``h`` the interval, ``σ = (t - t_k)/h`` in [0, 1]):

- ``backward-euler``: ``R_{k+1}`` on ``(t_k, t_{k+1}]`` (zero-order hold of the interval's end);
- ``midpoint``: ``(R_k + R_{k+1}) / 2`` on ``[t_k, t_{k+1})`` (the value the midpoint rule uses);
- ``hermite-simpson``: the quadratic through ``R_k``, ``R_c`` (midpoint) and ``R_{k+1}``;
- ``radau``: the polynomial of degree s - 1 through the s collocation points ``t_k + c_j h`` on
  ``(t_k, t_{k+1}]`` (the first interval's also at t0).

On each interval the replay is then the exact solution of the ODE the transcription
discretized, so its deviation from the optimal states at the nodes is the transcription's
error (order 1, 2, 4 and 2s - 1); a large deviation at the end also flags open-loop
instability (the replay has no feedback).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..analysis.trajectory import Trajectory
    from .solve import OptimalControlResult

__all__ = ["Replay", "input_interpolation", "replay"]


@dataclass
class Replay:
    """The replay of an optimal control (:meth:`OptimalControlResult.simulate`).

    ``trajectory``: the simulation, sampled at the nodes (and at ``t_eval`` if given);
    ``node_deviation``: ``max_{k, i} |x_sim,i(t_k) - x_opt,i(t_k)|`` over the nodes and the
    states ``[q, u_ind, x_e]``; ``final_deviation``: the same at the last node only;
    ``deviations`` (num_nodes, n_x): ``|x_sim - x_opt|`` at the nodes.
    """

    trajectory: Trajectory
    node_deviation: float
    final_deviation: float
    deviations: np.ndarray

    def __repr__(self) -> str:
        return (f"<Replay: max state deviation {self.node_deviation:.3g} at the nodes, "
                f"{self.final_deviation:.3g} at the end>")


def input_interpolation(problem: Any, nlp: Any, w: np.ndarray):
    """``r(t) -> (s,)``, the inputs of the NLP solution ``w`` between the nodes as the
    transcription assumes them (see the module's docstring); t in [t0, t0 + T]."""
    Nn = problem.num_nodes
    R = w[nlp.iR] if nlp.iR.size else np.zeros((nlp.layout["P"], 0))
    h = float(w[nlp.ih]) if problem.duration_symbol is not None else float(nlp.w_ext[nlp.n])
    t0 = problem.t0
    method = problem.transcription
    if method == "radau":
        from .transcription import radau_points
        S = problem.collocation.points
        c = radau_points(S)[0]
        nodes = c
        values = np.stack([R[np.arange(Nn - 1) * S + 1 + j] for j in range(S)], axis=1)
    elif method == "hermite-simpson":
        nodes = np.array([0.0, 0.5, 1.0])
        values = np.stack([R[0:-1:2], R[1::2], R[2::2]], axis=1)
    elif method == "midpoint":
        nodes = np.array([0.5])
        values = ((R[:-1] + R[1:]) / 2.0)[:, None, :]
    else:                                   # backward Euler: the interval's end value
        nodes = np.array([1.0])
        values = R[1:][:, None, :]
    # Lagrange basis on ``nodes``: (len(nodes), len(nodes)) monomial coefficients
    V = np.vander(nodes, len(nodes), increasing=True)
    coef = np.einsum("ij,kjs->kis", np.linalg.inv(V), values)   # (Nn-1, deg+1, s)
    right = method in ("backward-euler", "radau")       # intervals (t_k, t_{k+1}]

    def r(t: float, x: Any = None) -> np.ndarray:
        z = (t - t0) / h
        k = int(np.ceil(z) - 1) if right else int(np.floor(z))
        k = min(max(k, 0), Nn - 2)
        sigma = z - k
        powers = sigma ** np.arange(coef.shape[1])
        return powers @ coef[k]

    return r


def replay(result: OptimalControlResult, *, solver: Any = None, t_eval: Any = None,
           constraints: Any = "auto") -> Replay:
    """Simulate ``result``'s model with its optimal inputs (``input_interpolation``) from its
    optimal initial state and parameters; see :meth:`OptimalControlResult.simulate`."""
    from ..analysis import simulate
    from ..analysis.simulation import Solver
    from ..compilation import compile as compile_model
    from ..errors import InputError
    problem, nlp = result.problem, getattr(result.problem, "nlp", None)
    if problem is None or nlp is None:
        raise InputError("this result does not know its problem; replay it with the "
                         "OptimalControlProblem that produced it")
    opt = result.trajectory
    numeric = compile_model(problem.eom)
    r = input_interpolation(problem, nlp, result.w)
    h = result.duration / (problem.num_nodes - 1)
    if solver is None:
        solver = Solver(rtol=1e-10, atol=1e-10, max_step=h / 2)
    times = opt.t if t_eval is None else np.union1d(opt.t, np.asarray(t_eval, dtype=float))
    p = {c: v for c, v in opt.constants.items() if c in set(numeric.constants)}
    spec = (lambda t, x: r(t)) if problem.specifieds else None
    sim = simulate(numeric, (float(opt.t[0]), float(opt.t[-1])), opt.x[0], p,
                   specifieds=spec, solver=solver, t_eval=times, constraints=constraints)
    at_nodes = np.searchsorted(sim.t, opt.t)
    at_nodes = np.minimum(at_nodes, len(sim.t) - 1)
    dev = np.abs(sim.x[at_nodes] - opt.x)
    if len(sim.t) < len(times) or not np.allclose(sim.t[at_nodes], opt.t):
        dev = np.full_like(opt.x, np.inf)            # the replay failed before the end
    return Replay(trajectory=sim, node_deviation=float(dev.max()),
                  final_deviation=float(dev[-1].max()), deviations=dev)
