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
from sympy.core.function import AppliedUndef

from ..compat.sympy import TIME
from ..errors import InputError

__all__ = ["OptimalControlProblem", "TRANSCRIPTIONS", "periodic"]

_t = TIME

TRANSCRIPTIONS = ("backward-euler", "midpoint", "hermite-simpson")
_ALIASES = {"backward euler": "backward-euler", "be": "backward-euler", "backward_euler": "backward-euler",
            "hs": "hermite-simpson", "hermite simpson": "hermite-simpson",
            "hermite_simpson": "hermite-simpson", "trapezoidal-midpoint": "midpoint"}
_INF = 1e20


def periodic(*functions: Any, start: float = 0.0, end: Any) -> list[sm.Expr]:
    """Instance constraints ``x(start) - x(end) = 0`` for each state or input ``x`` given.

    ``functions``: the model's functions of time (``q1``, ``u1``, ...); ``end``: the final time
    (a number, or the duration Symbol of a free-time problem).  Returns a list of expressions
    to pass in ``instance_constraints``.
    """
    out = []
    for f in functions:
        if not isinstance(f, AppliedUndef):
            raise InputError(f"periodic: {f!r} is not a function of time such as q1(t)")
        out.append(f.func(start) - f.func(end))
    return out


def _model_parts(model: Any) -> tuple[Any, dict, tuple | None, tuple | None]:
    """(EquationsOfMotion, default constants, constants order, specifieds order)."""
    from ..compilation.numeric_model import NumericModel
    from ..formulation import EquationsOfMotion
    if isinstance(model, EquationsOfMotion):
        return model, {}, None, None
    if isinstance(model, NumericModel):
        return model.eom, {}, tuple(model.constants), tuple(model.specifieds)
    eom = getattr(model, "eom", None)
    if isinstance(eom, EquationsOfMotion):            # a zoo Model
        return eom, dict(getattr(model, "constants", {}) or {}), None, None
    raise InputError(f"model must be an EquationsOfMotion, a NumericModel or a zoo Model, "
                     f"got {type(model).__name__}")


def _pair(value: Any, what: str) -> tuple[float, float]:
    try:
        lo, hi = value
        lo = -_INF if lo is None else float(lo)
        hi = _INF if hi is None else float(hi)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what}: bounds must be a pair (lower, upper), got {value!r}") from exc
    if lo > hi:
        raise InputError(f"{what}: lower bound {lo} is above the upper bound {hi}")
    return max(lo, -_INF), min(hi, _INF)


class OptimalControlProblem:
    """A direct-collocation optimal control problem on a symbody model.

    Parameters
    ----------
    model : EquationsOfMotion, NumericModel or zoo Model
        The dynamics (a zoo Model's ``constants`` are the default known parameters).
    num_nodes : int (>= 2)
        Number of nodes ``N_n``; the time grid is ``t_k = t0 + k h``, ``h = T / (N_n - 1)``.
    duration : float > 0 or Symbol
        The duration T; a Symbol makes it an unknown (bound it with ``bounds={T: (lo, hi)}``
        and use it in ``instance_constraints`` as the final time, e.g. ``q1.func(T)``).
    objective : SymPy expression, optional
        Lagrange integrand ``L(x, r, p, t)`` (in the model's q(t), u(t), inputs, constants).
    mayer : SymPy expression, optional
        Terminal/boundary cost in instance values ``x(t_k)`` (e.g. ``q1.func(T)``), unknown
        parameters and the duration Symbol.
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
    transcription : "hermite-simpson" (default), "midpoint" or "backward-euler"
    t0 : float
        The initial time.
    quadrature : "transcription" (default), "rectangle" or "trapezoidal"
        How ``∫ L dt`` is summed: the transcription's own rule (backward Euler
        ``h Σ_{k>=1} L_k``, midpoint ``h Σ L(midpoints)``, Simpson), the rectangle rule over all
        nodes ``h Σ_k L_k`` (opty's examples), or the trapezoidal rule over the nodes.
    hessian : "exact" (default) or "limited-memory" (IPOPT's quasi-Newton)
    backend, cache : passed to :func:`symbody.compilation.codegen.compile_kernel`.
    """

    def __init__(self, model: Any, *, num_nodes: int, duration: float | sm.Symbol,
                 objective: Any = 0, mayer: Any = 0,
                 instance_constraints: Sequence | Mapping = (),
                 path_constraints: Sequence | Mapping = (),
                 bounds: Mapping | None = None, known_parameters: Mapping | None = None,
                 transcription: str = "hermite-simpson", t0: float = 0.0,
                 quadrature: str = "transcription", hessian: str = "exact", backend: str = "auto",
                 cache: bool = True) -> None:
        from .transcription import build_transcription
        t_start = _time.perf_counter()
        eom, defaults, const_order, spec_order = _model_parts(model)
        self.eom = eom
        if not isinstance(num_nodes, (int, np.integer)) or isinstance(num_nodes, bool) or num_nodes < 2:
            raise InputError(f"num_nodes must be an integer >= 2, got {num_nodes!r}")
        self.num_nodes = int(num_nodes)
        tr = str(transcription).lower()
        tr = _ALIASES.get(tr, tr)
        if tr not in TRANSCRIPTIONS:
            raise InputError(f"transcription must be one of {TRANSCRIPTIONS}, got {transcription!r}")
        self.transcription = tr
        if hessian not in ("exact", "limited-memory"):
            raise InputError(f"hessian must be 'exact' or 'limited-memory', got {hessian!r}")
        self.hessian = hessian
        if quadrature not in ("transcription", "rectangle", "trapezoidal"):
            raise InputError("quadrature must be 'transcription', 'rectangle' or 'trapezoidal', "
                             f"got {quadrature!r}")
        self.quadrature = quadrature
        self.t0 = float(t0)
        if isinstance(duration, sm.Symbol):
            self.duration_symbol: sm.Symbol | None = duration
            self.duration = None
        else:
            try:
                d = float(duration)
            except (TypeError, ValueError) as exc:
                raise InputError(f"duration must be a positive number or a Symbol, got {duration!r}") from exc
            if not d > 0 or not np.isfinite(d):
                raise InputError(f"duration must be a positive number or a Symbol, got {duration!r}")
            self.duration_symbol = None
            self.duration = d

        # symbols of the model
        self.coordinates = tuple(eom.q)
        self.speeds = tuple(eom.u)
        self.extra_states = tuple(getattr(eom, "extra_states", ()))
        self.states = self.coordinates + self.speeds + self.extra_states
        self.specifieds = tuple(spec_order) if spec_order is not None else tuple(eom.specifieds)
        constants = tuple(const_order) if const_order is not None else tuple(eom.constants)
        known = dict(defaults)
        for k, v in dict(known_parameters or {}).items():
            sym = k if isinstance(k, sm.Basic) else sm.Symbol(str(k))
            if sym not in set(constants):
                raise InputError(f"known_parameters: {sym} is not a constant of the model "
                                 f"(constants: {', '.join(map(str, constants))})")
            known[sym] = v
        self.known_parameters: dict[sm.Symbol, float] = {}
        for c in constants:
            if c in known:
                try:
                    self.known_parameters[c] = float(known[c])
                except (TypeError, ValueError) as exc:
                    raise InputError(f"known_parameters[{c}] must be a number, got {known[c]!r}") from exc
        self.unknown_parameters = tuple(c for c in constants if c not in self.known_parameters)

        self.objective = sm.sympify(objective)
        self.mayer = sm.sympify(mayer)
        self.instance_constraints = self._constraint_list(instance_constraints, "instance_constraints")
        self.path_constraints = self._constraint_list(path_constraints, "path_constraints")
        self.bounds = self._check_bounds(bounds or {})

        self.nlp = build_transcription(self, backend=backend, cache=cache)
        self.build_time = _time.perf_counter() - t_start

    # ------------------------------------------------------------------ input checks
    @staticmethod
    def _constraint_list(cons: Sequence | Mapping, what: str) -> list[tuple[sm.Expr, float, float]]:
        out = []
        if isinstance(cons, Mapping):
            items = [(sm.sympify(k), _pair(v, f"{what}[{k}]")) for k, v in cons.items()]
        else:
            if isinstance(cons, sm.Basic):
                cons = [cons]
            items = [(sm.sympify(k), (0.0, 0.0)) for k in cons]
        for e, (lo, hi) in items:
            if isinstance(e, sm.Equality):
                e = e.lhs - e.rhs
            if isinstance(e, sm.core.relational.Relational):
                raise InputError(f"{what}: give {e} as an expression with bounds "
                                 "({expr: (lower, upper)}), not an inequality")
            out.append((e, lo, hi))
        return out

    def _check_bounds(self, bounds: Mapping) -> dict:
        allowed = set(self.states) | set(self.specifieds) | set(self.unknown_parameters)
        if self.duration_symbol is not None:
            allowed.add(self.duration_symbol)
        out = {}
        for k, v in bounds.items():
            if k not in allowed:
                raise InputError(f"bounds: {k} is not a state, a specified input, an unknown "
                                 "parameter or the duration Symbol of this problem")
            out[k] = _pair(v, f"bounds[{k}]")
        return out

    # ------------------------------------------------------------------ solving
    def solve(self, initial_guess: Any = None, *, progress: Any = None, print_level: int = 0,
              max_iter: int = 3000, tol: float = 1e-8, options: Mapping | None = None) -> Any:
        """Solve the NLP with IPOPT from ``initial_guess``; returns an :class:`OptimalControlResult`.

        ``initial_guess``: None (zeros clipped into the bounds), a :class:`~symbody.Trajectory`
        (e.g. a simulation; states and recorded inputs interpolated at the points), a mapping
        ``{function or parameter: value or array over the nodes}``, or the full NLP vector.
        ``progress``: show the iterations (None: on a terminal); ``print_level``: IPOPT's own
        output (0 silent .. 12); ``options``: further IPOPT options.
        """
        from .solve import solve_nlp
        return solve_nlp(self, initial_guess, progress=progress, print_level=print_level,
                         max_iter=max_iter, tol=tol, options=options)

    def node_times(self, duration: float | None = None) -> np.ndarray:
        """The node times (num_nodes,) for the problem's duration (or ``duration`` if free)."""
        T = self.duration if self.duration is not None else duration
        if T is None:
            raise InputError("the duration is free: give its value")
        return self.t0 + np.linspace(0.0, float(T), self.num_nodes)

    def __repr__(self) -> str:
        nlp = self.nlp
        return (f"<OptimalControlProblem {self.transcription}, {self.num_nodes} nodes: "
                f"{nlp.n} unknowns, {nlp.m} constraints, built in {self.build_time:.3f} s>")
