"""The statement of an optimal control problem: what is optimized, subject to what, and how it
is transcribed (:class:`ProblemStatement`, :class:`Collocation`, :class:`Cost`).

This is the data that :mod:`.transcription` turns into an NLP and :mod:`.solve` reads back;
:class:`~.problem.OptimalControlProblem` (the user's entry point, above both) is a statement
with its NLP.  See :mod:`.problem` for the mathematics.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sm
from sympy.core.function import AppliedUndef

from ..compat.sympy import TIME as _TIME
from ..compilation.named_values import SymbolIndex
from ..errors import InputError

__all__ = ["ProblemStatement", "Collocation", "Cost", "TRANSCRIPTIONS", "periodic"]

TRANSCRIPTIONS = ("backward-euler", "midpoint", "hermite-simpson", "radau")
_ALIASES = {"backward euler": "backward-euler", "be": "backward-euler", "backward_euler": "backward-euler",
            "hs": "hermite-simpson", "hermite simpson": "hermite-simpson",
            "hermite_simpson": "hermite-simpson", "trapezoidal-midpoint": "midpoint",
            "lgr": "radau", "legendre-gauss-radau": "radau"}
#: the numbers of Legendre-Gauss-Radau points per interval that ``Collocation`` takes
RADAU_POINTS = (3, 4, 5)
_QUADRATURES = ("transcription", "rectangle", "trapezoidal")
#: how backward Euler and the midpoint rule treat the dependent speeds' derivatives
DEPENDENT_SPEEDS = ("collocated", "differenced")
_INF = 1e20


@dataclass(frozen=True)
class Collocation:
    """How the problem becomes a sparse NLP and how its derivatives are computed.

    ``method``: the transcription, "hermite-simpson" (default), "midpoint",
    "backward-euler" or "radau" (Legendre-Gauss-Radau collocation with ``points`` = 3, 4 or 5
    points per interval, order ``2 points - 1``; "radau5" is short for
    ``Collocation("radau", points=5)``; see :mod:`.transcription`); ``quadrature``: how ``∫ L dt`` is summed,
    "transcription" (default: the method's own rule, backward Euler ``h Σ_{k>=1} L_k``,
    midpoint ``h Σ L(midpoints)``, Simpson), "rectangle" (``h Σ_k L_k`` over all nodes, as
    opty's examples write it) or "trapezoidal"; ``hessian``: "exact" (default) or
    "limited-memory" (IPOPT's quasi-Newton); ``backend``, ``cache``: passed to
    :func:`symbody.compilation.codegen.compile_kernel`.  ``transcription="midpoint"`` is
    short for ``transcription=Collocation("midpoint")``.

    ``dependent_speeds`` (backward Euler and midpoint, models with dependent speeds in the
    unreduced form): "collocated" (default) makes the dependent accelerations unknowns of
    each interval, fixed by the acceleration constraints ``B_a u' + b_a = 0``; "differenced"
    takes them as the difference quotients ``(u_dep,k+1 - u_dep,k)/h`` of the dependent
    speeds (which the velocity constraints fix at every node) and drops the acceleration
    constraints: opty's NLP of the same equations.  Both converge to the same optimum as
    h -> 0; at a given grid their optima differ by O(h) (see :mod:`.transcription`).
    """

    method: str = "hermite-simpson"
    quadrature: str = "transcription"
    hessian: str = "exact"
    backend: str = "auto"
    cache: bool = True
    points: int = 3
    dependent_speeds: str = "collocated"

    def __post_init__(self) -> None:
        method = str(self.method).lower()
        method = _ALIASES.get(method, method)
        radau = re.fullmatch(r"(?:radau|lgr)[-_ ]?(\d+)", method)
        if radau:                              # "radau4": Collocation("radau", points=4)
            method = "radau"
            object.__setattr__(self, "points", int(radau.group(1)))
        if method == "radau" and (isinstance(self.points, bool) or self.points not in RADAU_POINTS):
            raise InputError(f"radau collocation takes points = 3, 4 or 5 Legendre-Gauss-Radau "
                             f"points per interval, got {self.points!r}")
        if method not in TRANSCRIPTIONS:
            raise InputError(f"transcription must be one of {TRANSCRIPTIONS} (or a "
                             f"Collocation(method, ...) object), got {self.method!r}")
        object.__setattr__(self, "method", method)
        if self.hessian not in ("exact", "limited-memory"):
            raise InputError(f"hessian must be 'exact' or 'limited-memory', got {self.hessian!r}")
        if self.quadrature not in _QUADRATURES:
            raise InputError("quadrature must be 'transcription', 'rectangle' or 'trapezoidal', "
                             f"got {self.quadrature!r}")
        if self.dependent_speeds not in DEPENDENT_SPEEDS:
            raise InputError(f"dependent_speeds must be one of {DEPENDENT_SPEEDS}, got "
                             f"{self.dependent_speeds!r}")
        if self.dependent_speeds == "differenced" and method not in ("backward-euler", "midpoint"):
            raise InputError("dependent_speeds='differenced' (opty's form) is a form of the "
                             f"backward-euler and midpoint transcriptions, not of {method!r}")


@dataclass(frozen=True)
class Cost:
    """The cost ``J = ∫ lagrange dt + mayer`` (Bolza form).

    ``lagrange``: the integrand ``L(x, r, p, t)`` in the model's q(t), u(t), inputs and
    constants; ``mayer``: a terminal/boundary cost in instance values ``x(t_k)`` (e.g.
    ``q1.func(T)``), unknown parameters and the duration Symbol.  ``objective=L`` is short
    for ``objective=Cost(L)``; a minimum-time problem is ``objective=Cost(mayer=T)``.
    """

    lagrange: Any = 0
    mayer: Any = 0


def periodic(*functions: Any, start: float = 0.0, end: Any) -> list[sm.Expr]:
    """Instance constraints ``x(start) - x(end) = 0`` for each state or input ``x`` given.

    ``functions``: the model's functions of time (``q1``, ``u1``, ...) or their names
    (``"q1"``, ``"q1(t)"``: the constraint is then a string the problem parses with the model's
    names); ``end``: the final time (a number, or the duration Symbol of a free-time problem).
    Returns a list of expressions to pass in ``instance_constraints``.
    """
    out: list = []
    for f in functions:
        if isinstance(f, str):
            name = re.sub(r"\(\s*t\s*\)$", "", f.strip())
            if not name.isidentifier():
                raise InputError(f"periodic: {f!r} is not the name of a state or input")
            out.append(f"{name}({start}) - {name}({end})")
            continue
        if not isinstance(f, AppliedUndef):
            raise InputError(f"periodic: {f!r} is not a function of time such as q1(t)")
        out.append(f.func(start) - f.func(end))
    return out


def _model_parts(model: Any) -> tuple[Any, dict, tuple | None, tuple | None]:
    """(EquationsOfMotion, default constants, constants order, specifieds order)."""
    from ..compilation.numeric_model import NumericModel
    from ..formulation import EquationsOfMotion
    derived = getattr(model, "derived_inputs", None) or getattr(
        getattr(model, "eom", None), "derived_inputs", None)
    if derived is not None and len(derived.indices):
        raise InputError("the model computes some of its inputs from the state at run time "
                         "(eom.derived_inputs, e.g. the stations of an OpenSim path over an "
                         "ellipsoid); optimal control through them is not supported")
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


class ProblemStatement:
    """The checked statement of a direct-collocation optimal control problem.

    The constructor's arguments are those of :class:`~.problem.OptimalControlProblem`;
    the attributes: ``eom``, ``num_nodes``, ``duration`` (None when free) and
    ``duration_symbol``, ``t0``, ``collocation`` (with ``transcription``, ``quadrature``,
    ``hessian`` its fields), the model's ``coordinates``, ``speeds``, ``extra_states``,
    ``states``, ``specifieds``, ``known_parameters`` {Symbol: value} and
    ``unknown_parameters``, the cost's ``objective`` (L) and ``mayer``, the constraints
    ``instance_constraints`` and ``path_constraints`` as [(expression, lower, upper)] and
    ``bounds`` {symbol: (lower, upper)}.
    """

    def __init__(self, model: Any, *, num_nodes: int, duration: float | sm.Symbol,
                 objective: Any = 0, instance_constraints: Sequence | Mapping = (),
                 path_constraints: Sequence | Mapping = (), bounds: Mapping | None = None,
                 known_parameters: Mapping | None = None,
                 transcription: str | Collocation = "hermite-simpson", t0: float = 0.0) -> None:
        eom, defaults, const_order, spec_order = _model_parts(model)
        self.eom = eom
        if not isinstance(num_nodes, (int, np.integer)) or isinstance(num_nodes, bool) or num_nodes < 2:
            raise InputError(f"num_nodes must be an integer >= 2, got {num_nodes!r}")
        self.num_nodes = int(num_nodes)
        if transcription is Collocation or isinstance(transcription, Mapping):
            raise InputError(f"transcription={transcription!r}: give a method name such as "
                             "'midpoint' or an object, transcription=Collocation('midpoint', ...)")
        self.collocation = (transcription if isinstance(transcription, Collocation)
                            else Collocation(transcription))
        self.transcription = self.collocation.method
        self.hessian = self.collocation.hessian
        self.quadrature = self.collocation.quadrature
        self.t0 = float(t0)
        self.duration_symbol, self.duration = _duration(duration)

        for rec in getattr(eom, "contacts", ()) or ():
            if rec.impact_states:      # set at touchdown events, which a transcription does not have
                raise InputError(f"contact {rec.name!r}: a restitution per impact (no impact_speed) needs "
                                 "the simulation's touchdown events; for optimal control give the "
                                 "contact damping=c or restitution=e with impact_speed=v")

        # symbols of the model
        self.coordinates = tuple(eom.q)
        self.speeds = tuple(eom.u)
        self.extra_states = tuple(getattr(eom, "extra_states", ()))
        self.states = self.coordinates + self.speeds + self.extra_states
        self.specifieds = tuple(spec_order) if spec_order is not None else tuple(eom.specifieds)
        constants = tuple(const_order) if const_order is not None else tuple(eom.constants)
        self.known_parameters = _known_parameters(constants, defaults, known_parameters)
        self.unknown_parameters = tuple(c for c in constants if c not in self.known_parameters)

        self._names = _Names(self)
        objective = self._names.parse(objective, "objective")
        instance_constraints = self._names.parse_all(instance_constraints, "instance_constraints")
        path_constraints = self._names.parse_all(path_constraints, "path_constraints")
        if objective is Cost or isinstance(objective, Mapping):
            raise InputError(f"objective={objective!r}: give the integrand L as an expression or "
                             "objective=Cost(lagrange=L, mayer=M)")
        cost = objective if isinstance(objective, Cost) else Cost(objective)
        cost = Cost(self._names.parse(cost.lagrange, "objective"),
                    self._names.parse(cost.mayer, "mayer"))
        self.objective = sm.sympify(cost.lagrange)
        self.mayer = sm.sympify(cost.mayer)
        self.instance_constraints = _constraint_list(instance_constraints, "instance_constraints")
        self.path_constraints = _constraint_list(path_constraints, "path_constraints")
        self.bounds = self._check_bounds(bounds or {})

    def _check_bounds(self, bounds: Mapping) -> dict:
        allowed = set(self.states) | set(self.specifieds) | set(self.unknown_parameters)
        if self.duration_symbol is not None:
            allowed.add(self.duration_symbol)
        index = SymbolIndex(self.states + self.specifieds + self.unknown_parameters
                            + ((self.duration_symbol,) if self.duration_symbol is not None else ()))
        out = {}
        for k, v in bounds.items():
            i = index.position(k, "bounds:")
            key = index.symbols[i] if i is not None else k
            if key not in allowed:
                raise InputError(f"bounds: {k} is not a state, a specified input, an unknown "
                                 "parameter or the duration Symbol of this problem (they are: "
                                 f"{index.names()})")
            out[key] = _pair(v, f"bounds[{k}]")
        return out

    def symbol(self, key: Any, what: str) -> Any:
        """The state, input, unknown parameter or duration Symbol that ``key`` (the symbol or
        its name: ``"q1"`` or ``"q1(t)"`` for q1(t), ``"m"``) stands for; InputError naming
        ``what`` and the valid names otherwise."""
        return self._names.symbol(key, what)

    def node_times(self, duration: float | None = None) -> np.ndarray:
        """The node times (num_nodes,) for the problem's duration (or ``duration`` if free)."""
        T = self.duration if self.duration is not None else duration
        if T is None:
            raise InputError("the duration is free: give its value")
        return self.t0 + np.linspace(0.0, float(T), self.num_nodes)


def _duration(duration: float | sm.Symbol) -> tuple[sm.Symbol | None, float | None]:
    """(duration Symbol, None) of a free duration, (None, value) of a fixed one."""
    if isinstance(duration, sm.Symbol):
        return duration, None
    try:
        d = float(duration)
    except (TypeError, ValueError) as exc:
        raise InputError(f"duration must be a positive number or a Symbol, got {duration!r}") from exc
    if not d > 0 or not np.isfinite(d):
        raise InputError(f"duration must be a positive number or a Symbol, got {duration!r}")
    return None, d


class _Names:
    """The problem's symbols by name, as ``simulate`` takes them
    (:class:`~symbody.compilation.named_values.SymbolIndex`): ``"m"`` for the constant m,
    ``"q1"`` or ``"q1(t)"`` for q1(t); strings in the cost and constraints are parsed with the
    model's own functions and symbols (``"q1(2.0) - 1"``, ``"F**2"``)."""

    def __init__(self, statement: ProblemStatement) -> None:
        st = statement
        self.statement = st
        consts = tuple(st.known_parameters) + tuple(st.unknown_parameters)
        extra = (st.duration_symbol,) if st.duration_symbol is not None else ()
        self.index = SymbolIndex(st.states + st.specifieds + tuple(st.unknown_parameters) + extra)
        local: dict[str, Any] = {"t": _TIME}
        for c in consts + extra:
            local[str(c)] = c
        self.functions = {f.func.__name__: f for f in st.states + st.specifieds}
        self.at_instants = dict(local, **{k: f.func for k, f in self.functions.items()})
        self.along_path = dict(local, **self.functions)

    def symbol(self, key: Any, what: str) -> Any:
        i = self.index.position(key, what)
        if i is None:
            raise InputError(f"{what}: {key!r} is not a state, input, unknown parameter or the "
                             f"duration of this problem (they are: {self.index.names()})")
        return self.index.symbols[i]

    def parse(self, value: Any, what: str) -> Any:
        """A string expression parsed with the model's names; anything else unchanged.

        In the Lagrange integrand and the path constraints ``q1`` and ``q1(t)`` are q1(t); in
        instance constraints and the Mayer term ``q1(2.0)`` is q1 at t = 2."""
        if not isinstance(value, str):
            return value
        if what in ("objective", "path_constraints"):
            names = "|".join(map(re.escape, self.functions))
            text = re.sub(rf"\b({names})\s*\(\s*t\s*\)", r"\1", value) if names else value
            local = self.along_path
        else:
            text, local = value, self.at_instants
        try:
            return sm.sympify(text, locals=dict(local))
        except (sm.SympifyError, SyntaxError, TypeError) as exc:
            raise InputError(f"{what}: cannot parse {value!r}: {exc}") from exc

    def parse_all(self, cons: Any, what: str) -> Any:
        if isinstance(cons, str):
            return [self.parse(cons, what)]
        if isinstance(cons, Mapping):
            return {self.parse(k, what): v for k, v in cons.items()}
        if isinstance(cons, sm.Basic):
            return cons
        return [self.parse(c, what) for c in cons]


def _known_parameters(constants: tuple, defaults: dict, given: Mapping | None) -> dict:
    """{constant: value} of the constants given a value (``defaults`` overridden by ``given``);
    a constant is keyed by its Symbol or its name, as in ``simulate``."""
    known = dict(defaults)
    index = SymbolIndex(constants)
    for k, v in dict(given or {}).items():
        i = index.position(k, "known_parameters: constant")
        sym = constants[i] if i is not None else k
        if sym not in set(constants):
            raise InputError(f"known_parameters: {sym} is not a constant of the model "
                             f"(constants: {', '.join(map(str, constants))})")
        known[sym] = v
    values: dict[sm.Symbol, float] = {}
    for c in constants:
        if c in known:
            try:
                values[c] = float(known[c])
            except (TypeError, ValueError) as exc:
                raise InputError(f"known_parameters[{c}] must be a number, got {known[c]!r}") from exc
    return values


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
