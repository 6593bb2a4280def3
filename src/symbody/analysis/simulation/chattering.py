"""Chattering: a discontinuous force that flips at every step, stopped with a clear message.

A force such as Coulomb friction ``-mu N sign(v)`` with nothing to model sticking makes the
velocity oscillate about v = 0 after the body stops: each step crosses the discontinuity,
the error estimate rejects all but steps of about atol / |v'| (1e-9 s), and the run would
need billions of them (a 1 s run of a friction block at the default tolerances: 7e8 steps;
one such run reported success after 250 s and 3.9 GB).  The solution slides along v = 0
(Filippov), which no error-controlled integrator of the smooth ODE can follow cheaply.

:class:`ChatterWatch` costs one comparison per accepted step.  Every WINDOW steps it asks
how many more steps the run would need at the rate of the last window; only when that is
more than SUSPECT_STEPS it evaluates the model's *switching functions* -- the arguments of
``sign``, ``Abs``, ``Heaviside``, ``Max``/``Min`` and the conditions of ``Piecewise`` in its
equations (:func:`switching_functions`) -- at the ends of the next WINDOW steps.  When one of
them changes sign at FLIP_FRACTION of those steps or more, the flow pointing back at
s = 0 on both sides (s s' < 0: sliding, as opposed to a vibration through it), the run
stops (status -1)
with a message naming the expression, where it sits and what to do.  Models whose
equations have none of these functions are never inspected.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
import sympy as sm

from ...compat.sympy import TIME
from ...errors import SymbodyError
from ..events import Event, PreparedEvents
from .strategy import StopIntegration

__all__ = ["ChatterWatch", "switching_functions", "WINDOW", "SUSPECT_STEPS", "FLIP_FRACTION"]

#: accepted steps per window of the rate check and of an inspection
WINDOW = 256
#: an inspection starts when the rest of the run would take more steps than this at the rate
#: of the last window
SUSPECT_STEPS = 100_000
#: chattering: a switching function crosses zero towards a flow that points back at it on
#: both sides (sliding) at this fraction of the steps or more
FLIP_FRACTION = 1 / 32
#: a failed step next to a switching surface (|s| below this) is said to be there
NEAR_SWITCH = 1e-6

_NONSMOOTH = ("sign", "Abs", "Heaviside", "Piecewise", "Max", "Min")
_BLOCKS = (("qdot_solution", "the kinematic equations"), ("dynamic_rest", "the dynamic equations"),
           ("dynamic_mass", "the dynamic equations"), ("velocity_rest", "the velocity constraints"),
           ("acceleration_rest", "the acceleration constraints"),
           ("extra_derivatives", "the extra states' derivatives"))
_FOUND: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def switching_functions(model: Any) -> list[tuple[sm.Expr, sm.Expr, str]]:
    """``[(switching function s, the nonsmooth expression, the block it is in)]`` of a
    compiled model: s = v for sign(v), Abs(v), Heaviside(v), s = a - b for a condition a < b of
    a Piecewise and for Max(a, b), Min(a, b); the force changes its form where s changes
    sign.  Only functions of t, q, u, the extra states and the constants (the ones the
    events compile); [] without SymPy equations.  Found once per model."""
    try:
        return _FOUND[model]
    except (KeyError, TypeError):
        pass
    found: list = []
    eom = getattr(model, "eom", None)
    if eom is not None:
        allowed = {TIME, *model.coordinates, *model.speeds, *model.extra_states, *model.constants}
        seen: set = set()
        dynamic = eom.symengine_dynamics()
        for attr, where in _BLOCKS:
            extra_se = (eom.symengine_extra_derivatives() if attr == "extra_derivatives"
                        and hasattr(eom, "symengine_extra_derivatives") else None)
            if dynamic is not None and attr in ("dynamic_rest", "dynamic_mass"):
                exprs = _symengine_nonsmooth(dynamic, attr == "dynamic_mass")
            elif extra_se is not None:
                exprs = _symengine_nonsmooth(dynamic, None, extra_se)
            else:
                matrix = getattr(eom, attr, None)
                exprs = [] if matrix is None else [n for e in matrix for n in _sympy_nonsmooth(e)]
            for node in exprs:
                for s in _switches(node):
                    if s in seen or s.is_number:
                        continue
                    atoms = s.free_symbols | s.atoms(sm.core.function.AppliedUndef)
                    if not all(a in allowed for a in atoms):
                        continue       # (a specified input: its values are not the model's)
                    seen.add(s)
                    found.append((s, node, where))
    try:
        _FOUND[model] = found
    except TypeError:
        pass
    return found


def _sympy_nonsmooth(expr: sm.Expr) -> list:
    return [n for n in sm.preorder_traversal(expr) if type(n).__name__ in _NONSMOOTH]


def _symengine_nonsmooth(dynamic: Any, mass: bool | None, roots: list | None = None) -> list:
    """The nonsmooth nodes of a symengine dynamic block (or of ``roots`` in its names), in
    SymPy (a robot's joint friction F sign(u)); one walk over the DAG."""
    from ...symengine_bridge import StructuredSympyConverter

    convert = StructuredSympyConverter(dynamic.names)
    stack = (list(roots) if roots is not None else
             [e for row in dynamic.mass for e in row] if mass else list(dynamic.rest))
    seen: set = set()
    out = []
    while stack:
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        if type(e).__name__ in _NONSMOOTH:
            out.append(convert(e))
        stack.extend(e.args)
    return out


def _switches(node: sm.Expr) -> list:
    """The switching functions of one nonsmooth node."""
    if isinstance(node, (sm.sign, sm.Abs, sm.Heaviside)):
        return [node.args[0]]
    if isinstance(node, (sm.Max, sm.Min)):
        args = node.args
        return [args[0] - a for a in args[1:]]
    if isinstance(node, sm.Piecewise):
        out = []
        for _, cond in node.args:
            for rel in cond.atoms(sm.core.relational.Relational):
                out.append(rel.lhs - rel.rhs)
        return out
    return []


class ChatterWatch:
    """Watches one run for chattering (see the module doc); :meth:`due` is the cheap test of
    every step, :meth:`check` the rest."""

    def __init__(self, run: Any) -> None:
        self.run = run
        self.next_check = WINDOW        # the step count at which check() is called next
        self._t_window = run.t0         # the time at the start of the rate window
        self._steps_window = 0
        self._backoff = 1
        self._events: PreparedEvents | None = None
        self._functions: list | None = None
        self._inspecting = 0            # steps left in an inspection (0: none)
        self._last: np.ndarray | None = None
        self._flips: np.ndarray | None = None
        self._t_inspect = 0.0

    def check(self, nsteps: int, t: float, state: Any) -> None:
        """At an accepted step ending at t (``state()``: the state there in the model's
        layout): start, continue or finish an inspection; raises StopIntegration when the
        run chatters."""
        if self._inspecting:
            self._inspect(nsteps, t, state())
            return
        run = self.run
        advanced = abs(t - self._t_window)
        steps = nsteps - self._steps_window
        self._t_window, self._steps_window = t, nsteps
        remaining = abs(run.tf - t)
        self.next_check = nsteps + WINDOW * self._backoff
        if steps <= 0 or remaining * steps <= SUSPECT_STEPS * advanced:
            return
        if not self._prepare():
            self.next_check = 1 << 62           # no switching functions: nothing to watch
        else:
            self._inspecting = WINDOW
            self._t_inspect = t
            self._last = None
            self._flips = np.zeros(len(self._functions))
            self.next_check = nsteps + 1
            self._inspect(nsteps, t, state())

    def near_switch(self, t: float, x: np.ndarray) -> str:
        """A note for a failed step-size control at (t, x) next to a switching surface
        (|s| < NEAR_SWITCH): where the force jumps, e.g. Radau and BDF stepping onto a
        sliding friction; "" otherwise."""
        if not self._prepare():
            return ""
        try:
            s = np.abs(self._events.values(t, x))
        except Exception:       # noqa: BLE001 - only a note is lost
            return ""
        i = int(np.argmin(s))
        if not s[i] < NEAR_SWITCH:
            return ""
        fun, node, where = self._functions[i]
        return (f"; next to {fun} = 0 ({fun} = {s[i]:.2g}), where {node} in {where} jumps: a "
                "discontinuous force the solution may slide along (chattering); model what "
                f"happens there (a terminal event on {fun}, a smooth law, symbody.contact's "
                "friction)")

    def _sliding(self, t: float, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(sign of each switching function s at (t, x), whether s s' < 0 there: the flow
        points towards s = 0), s' by a forward difference along x'."""
        run = self.run
        s = self._events.values(t, x)
        try:
            xdot = np.asarray(run.model.rhs(t, x, run.constants, run.specifieds), dtype=float)
        except Exception:       # noqa: BLE001 - no x': nothing counts as attracted
            return np.sign(s), np.zeros(s.shape, dtype=bool)
        h = 1e-7 * max(1.0, abs(t))
        rate = self._events.values(t + h, x + h * xdot) - s
        return np.sign(s), s * rate < 0.0

    def _prepare(self) -> bool:
        """Compile the switching functions (once); False when the model has none."""
        if self._functions is None:
            self._functions = switching_functions(self.run.model)
            if self._functions:
                try:
                    self._events = PreparedEvents(self.run.model, [Event(s) for s, _, _ in self._functions],
                                                  self.run.constants, self.run.specifieds)
                except SymbodyError:
                    self._functions = []
        return bool(self._functions)

    def _inspect(self, nsteps: int, t: float, x: np.ndarray) -> None:
        values, attracted = self._sliding(t, x)
        if self._last is not None:
            last_values, last_attracted = self._last
            # a crossing of s = 0 with the flow pointing back at the surface on both sides
            # (Filippov's sliding condition s s' < 0); a transversal crossing (a vibration
            # through the surface) has s s' > 0 after it and does not count
            self._flips += (values != last_values) & attracted & last_attracted
        self._last = values, attracted
        self._inspecting -= 1
        self.next_check = nsteps + 1
        if self._inspecting:
            return
        self._backoff *= 4                  # not chattering: look again much later
        self.next_check = nsteps + WINDOW * self._backoff
        self._t_window, self._steps_window = t, nsteps
        i = int(np.argmax(self._flips))
        if self._flips[i] < FLIP_FRACTION * WINDOW:
            return
        s, node, where = self._functions[i]
        run = self.run
        span = abs(t - self._t_inspect)
        rate = span / WINDOW
        more = abs(run.tf - t) / rate if rate > 0 else float("inf")
        raise StopIntegration(
            -1, f"chattering: {node} in {where} switched {int(self._flips[i])} times in the last "
                f"{WINDOW} steps (t = {self._t_inspect:.8g} to {t:.8g}, steps of {rate:.2g}): the "
                f"motion slides along {s} = 0, where the force jumps, and the integrator can only "
                f"cross it in steps of that size (about {more:.2g} more to reach t = {run.tf:.6g}). "
                f"Model what happens there: a terminal event on {s} to switch to a model that "
                "sticks, a smooth law (e.g. tanh(v/eps) for sign(v)), or symbody.contact's "
                "friction", None)
