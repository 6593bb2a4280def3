"""Extra first-order states: functions of time outside q and u with their own ODEs.

Muscle activation is the typical example: ``a' = f_a(a, e)`` with the excitation
e(t) a specified input, while a(t) enters the muscle forces of the dynamic
equations.  An extra state x_e is declared with its derivative::

    x_e' = f_e(t, q, u, x_e, r, constants)            (one expression per state)

either as a mapping ``{a: f_a, ...}`` or taken from SymPy biomechanics objects
(``sympy.physics.biomechanics``: activation dynamics and musculotendons), which
carry their states ``x``, inputs ``r`` and ``rhs()`` (``x' = rhs()``); their
inputs are then declared specified inputs as well.  Anything with ``x``,
``r`` and ``rhs()`` works the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sympy as sm

from ..compat.sympy import TIME
from ..errors import FormulationError

t = TIME

__all__ = ["ExtraStates", "parse_extra_states"]


@dataclass(frozen=True)
class ExtraStates:
    """Parsed extra states: ``states`` (functions of t), ``derivatives`` (x_e' for each),
    ``inputs`` (specified inputs declared by the objects they came from)."""

    states: tuple
    derivatives: tuple
    inputs: tuple


def _is_time_function(x) -> bool:
    return isinstance(x, sm.core.function.AppliedUndef) and x.args == (t,)


def _from_object(obj, where: str) -> tuple[list, list, list]:
    """States, derivatives and inputs of a SymPy biomechanics-like object (x, r, rhs())."""
    try:
        x = list(sm.Matrix(obj.x))
        rhs = list(sm.Matrix(obj.rhs()))
        r = list(sm.Matrix(obj.r))
    except Exception as exc:  # a foreign object failing in its own code: say which one
        raise FormulationError(f"{where}: could not take the states x, inputs r and rhs() of "
                               f"{obj!r}: {exc}") from exc
    if len(x) != len(rhs):
        raise FormulationError(f"{where}: {obj!r} has {len(x)} states but rhs() has {len(rhs)} rows")
    return x, rhs, r


def parse_extra_states(spec: Any, where: str = "extra_states") -> ExtraStates:
    """Read ``spec``: a mapping {x_e(t): x_e'}, an object with x, r, rhs(), or a list of these.

    Raises FormulationError naming the entry at fault (not a function of t, declared
    twice, a derivative that is not an expression).
    """
    if spec is None:
        return ExtraStates((), (), ())
    items = [spec] if isinstance(spec, Mapping) or hasattr(spec, "rhs") else None
    if items is None:
        try:
            items = list(spec)
        except TypeError as exc:
            raise FormulationError(f"{where} must be a dict {{x(t): x'}}, an object with x, r and rhs() "
                                   f"(e.g. a SymPy musculotendon), or a list of these; got {spec!r}") from exc
    states: list = []
    derivs: list = []
    inputs: list = []
    for k, item in enumerate(items):
        label = f"{where}[{k}]" if len(items) > 1 else where
        if isinstance(item, Mapping):
            pairs = list(item.items())
            got_inputs: list = []
        elif hasattr(item, "rhs") and hasattr(item, "x"):
            xs, rhs, got_inputs = _from_object(item, label)
            pairs = list(zip(xs, rhs))
        else:
            raise FormulationError(f"{label} = {item!r} is neither a dict {{x(t): x'}} nor an object "
                                   "with x, r and rhs()")
        for x, f in pairs:
            if not _is_time_function(x):
                raise FormulationError(f"{label}: the extra state {x!r} is not a function of time "
                                       "(make it with dynamicsymbols)")
            if x in states:
                raise FormulationError(f"{label}: the extra state {x} is declared twice")
            try:
                f = sm.sympify(f)
            except (sm.SympifyError, TypeError) as exc:
                raise FormulationError(f"{label}: the derivative of {x} is not an expression: {f!r}") from exc
            if isinstance(f, sm.MatrixBase):
                raise FormulationError(f"{label}: the derivative of {x} must be one expression, "
                                       f"got a matrix of shape {f.shape}")
            states.append(x)
            derivs.append(f)
        for r in got_inputs:
            if r not in inputs:
                inputs.append(r)
    return ExtraStates(tuple(states), tuple(derivs), tuple(inputs))
