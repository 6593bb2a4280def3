"""Optimal control problems on symbody models: what is optimized, subject to what.

A problem is stated with the model's own symbols::

    problem = OptimalControlProblem(
        eom, num_nodes=101, duration=2.0,
        objective=F**2,                                  # Lagrange integrand L(x, r, p, t)
        instance_constraints=[q0.func(0.0), q0.func(2.0) - 1, ...],
        bounds={F: (-20, 20), q0: (-2, 2)},
        known_parameters=constants, transcription="midpoint")
    result = problem.solve(initial_guess)

Unknowns: the states ``x = [q (N), u (o), x_e (e)]`` and the specified inputs ``r (s)`` of the
model at the collocation points, the constants not given a value in ``known_parameters``
(unknown parameters, constant in time), and, when ``duration`` is a Symbol, the duration
itself (as the interval ``h = duration / (num_nodes - 1)``).

Minimized: ``J = integral(L dt) + mayer`` with ``mayer`` an expression in instance values
``x_i(t_k)``, the parameters and the duration.  The integral is the transcription's own
quadrature (:mod:`.transcription`).

Constraints, stacked automatically from the model: the kinematic equations
``q_ind' = qdot_solution(q, u, t)``, the dynamic equations in implicit form
``M_d u' + g_d = B_a^T λ`` (no inversion; λ only with constraints in the unreduced form, with
the acceleration constraints ``B_a u' + b_a = 0`` fixing the dependent accelerations), the
extra-state equations ``x_e' = f_e``, and at every point the holonomic ``f_h(q, t) = 0`` and
velocity constraints ``B u + b = 0``.  The differential states are ``D = [q_ind, u_ind, x_e]``;
the dependent coordinates and speeds are fixed pointwise by the constraints.  User's
instance constraints (``f(x(t_k), p, T) = 0`` or within bounds) and path constraints
(``lo <= g(x, r, p, t) <= hi`` at every node) are added.
"""

from __future__ import annotations

import time as _time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import sympy as sm

from ..deprecation import moved_keywords
from .solve import OptimalControlResult, initial_vector, solve_nlp
from .statement import Collocation, Cost, ProblemStatement
from .transcription import build_transcription

__all__ = ["OptimalControlProblem"]


class OptimalControlProblem(ProblemStatement):
    """A direct-collocation optimal control problem on a symbody model, transcribed into a
    sparse NLP (``nlp``) that :meth:`solve` hands to IPOPT.

    Parameters
    ----------
    model : EquationsOfMotion, NumericModel or zoo Model
        The dynamics (a zoo Model's ``constants`` are the default known parameters).
    num_nodes : int (>= 2)
        Number of nodes ``N_n``; the time grid is ``t_k = t0 + k h``, ``h = T / (N_n - 1)``.
    duration : float > 0 or Symbol
        The duration T; a Symbol makes it an unknown (bound it with ``bounds={T: (lo, hi)}``
        and use it in ``instance_constraints`` as the final time, e.g. ``q1.func(T)``).
    objective : SymPy expression or :class:`~.statement.Cost`, optional
        The Lagrange integrand ``L(x, r, p, t)`` (in the model's q(t), u(t), inputs,
        constants), or ``Cost(lagrange=L, mayer=M)`` with a terminal/boundary cost ``M`` in
        instance values ``x(t_k)`` (e.g. ``q1.func(T)``), unknown parameters and the
        duration Symbol.
    instance_constraints : sequence or mapping
        Expressions ``= 0`` in instance values, parameters and the duration, or a mapping
        ``{expression: (lower, upper)}``.  An instance time must be a node time.
    path_constraints : sequence or mapping
        Expressions in x(t), r(t), parameters and t, ``= 0`` or ``{expression: (lo, hi)}``,
        enforced at every node.
    bounds : mapping
        ``{q(t) | u(t) | r(t) | parameter | duration: (lower, upper)}`` (None for unbounded).
    known_parameters : mapping
        ``{constant: value}``; constants without a value are unknowns of the problem.
        Wherever a symbol is taken (here, ``bounds``, the initial guess) its name is too, as
        in ``simulate`` (``"m"``, ``"q1"`` or ``"q1(t)"``); the cost and the constraints may be
        strings in the model's names (``"F**2"``, ``"q1(2.0) - 1"``).
    transcription : "hermite-simpson" (default), "midpoint", "backward-euler", "radau"
        (Legendre-Gauss-Radau, 3 points per interval; "radau4", "radau5") or a
        :class:`~.statement.Collocation`
        The method, or the method with the cost's ``quadrature`` ("transcription",
        "rectangle" or "trapezoidal"), the ``hessian`` ("exact" or "limited-memory") and
        the kernels' ``backend`` and ``cache``, e.g.
        ``Collocation("midpoint", quadrature="rectangle", hessian="limited-memory")``.
    t0 : float
        The initial time.

    Notes
    -----
    The former keywords ``mayer=`` (now ``objective=Cost(mayer=...)``) and ``quadrature=``,
    ``hessian=``, ``backend=``, ``cache=`` (now fields of ``Collocation``) still work for
    one release, with a DeprecationWarning.
    """

    @moved_keywords("OptimalControlProblem", {
        "objective": (Cost, ("mayer",)),
        "transcription": (Collocation, ("quadrature", "hessian", "backend", "cache"))})
    def __init__(self, model: Any, *, num_nodes: int, duration: float | sm.Symbol,
                 objective: Any = 0, instance_constraints: Sequence | Mapping = (),
                 path_constraints: Sequence | Mapping = (), bounds: Mapping | None = None,
                 known_parameters: Mapping | None = None,
                 transcription: str | Collocation = "hermite-simpson", t0: float = 0.0) -> None:
        t_start = _time.perf_counter()
        super().__init__(model, num_nodes=num_nodes, duration=duration, objective=objective,
                         instance_constraints=instance_constraints,
                         path_constraints=path_constraints, bounds=bounds,
                         known_parameters=known_parameters, transcription=transcription, t0=t0)
        self.nlp = build_transcription(self)
        self.build_time = _time.perf_counter() - t_start

    def solve(self, initial_guess: Any = None, *, progress: Any = None, print_level: int = 0,
              max_iter: int = 3000, tol: float = 1e-8,
              options: Mapping | None = None, solver: str = "auto",
              warm_start: Mapping | None = None) -> OptimalControlResult:
        """Solve the NLP with IPOPT from ``initial_guess``; returns an :class:`OptimalControlResult`.

        ``initial_guess``: None (zeros clipped into the bounds), a :class:`~symbody.Trajectory`
        (e.g. a simulation; states and recorded inputs interpolated at the points), a mapping
        ``{function or parameter: value or array over the nodes}``, or the full NLP vector.
        ``progress``: show the iterations (None: on a terminal); ``print_level``: IPOPT's own
        output (0 silent .. 12); ``options``: further IPOPT options.
        ``solver``: "ipopt-casadi" (CasADi's IPOPT on symbody's compiled exact derivatives),
        "ipopt-casadi-sx" (CasADi's IPOPT and CasADi's derivatives of the blocks as SX),
        "cyipopt" (cyipopt-wheels' IPOPT on the compiled derivatives) or "auto" (the
        default: "ipopt-casadi" when CasADi is installed, the fastest, else "cyipopt").
        ``warm_start``: the multipliers to start from (a previous result's
        ``info["ipopt"]``: ``mult_g``, ``mult_x_L``, ``mult_x_U``), for a re-solve near a
        known solution.
        """
        return solve_nlp(self, self.nlp, initial_guess, progress=progress,
                         print_level=print_level, max_iter=max_iter, tol=tol, options=options,
                         solver=solver, warm_start=warm_start)

    def initial_vector(self, initial_guess: Any = None) -> np.ndarray:
        """The NLP vector (n,) that :meth:`solve` starts IPOPT from, for ``initial_guess`` as
        there (clipped into the bounds)."""
        return initial_vector(self, self.nlp, initial_guess)

    def __repr__(self) -> str:
        nlp = self.nlp
        return (f"<OptimalControlProblem {self.transcription}, {self.num_nodes} nodes: "
                f"{nlp.n} unknowns, {nlp.m} constraints, built in {self.build_time:.3f} s>")
