"""Events: zero crossings of g(t, q, u) found during a simulation, with optional impact maps.

An :class:`Event` is a condition ``g`` whose sign change is the event -- a SymPy expression
in t, the coordinates q, all speeds u (dependent ones included), the extra states x_e and
the constants (compiled once), or a callable ``g(t, x, p)`` with x in ``model.states``
order -- plus

- ``direction``: +1 only rising crossings (g from negative to positive), -1 only falling
  ones, 0 both;
- ``terminal``: stop the integration there;
- ``action(t, x, p) -> x_new``: an impact map; the integration continues from x_new
  (made consistent with the constraints) in a new segment.  The action may also be a dict
  ``{state: expression}`` (expressions in t, q, u, x_e and the constants, compiled): the
  states named (extra states included) get the expressions' values at the event, the
  others keep theirs.

The driver evaluates the conditions at the ends of each accepted step; where one changes
sign (in its direction) the crossing is located by Brent's method on the step's dense
output (the solver's own interpolant, accurate to the integration tolerance), to a time
tolerance of ~1e-14 relative.  Several events in one step: the earliest one wins (ties
in list order).  A condition that is exactly zero at the start of a segment (e.g. right
after the impact it triggered) does not fire there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import sympy as sm
from scipy.optimize import brentq

from ..compat.sympy import TIME
from ..compilation import NumericModel, make_function
from ..errors import InputError
from ..formatting import symbol_name as _short
from .expression_atoms import expression_atoms

__all__ = ["Event", "EventRecord", "PreparedEvents", "prepare_events"]

_t = TIME


@dataclass(frozen=True)
class Event:
    """A zero crossing of ``condition`` during a simulation (see the module docstring).

    ``condition``: SymPy expression in t, q, u, the extra states and the constants, or
    ``g(t, x, p) -> float``.
    ``name``: label in ``trajectory.events`` (default "event<i>").
    ``direction``: +1 rising, -1 falling, 0 either.  ``terminal``: stop there.
    ``action``: ``action(t, x, p) -> new x`` (x in ``model.states`` order) applied at the
    event; integration then continues from the new state.
    """

    condition: sm.Expr | Callable
    name: str = ""
    direction: int = 0
    terminal: bool = False
    action: Callable | None = None

    def __post_init__(self):
        if self.direction not in (-1, 0, 1):
            raise InputError(f"Event {self.name!r}: direction must be -1, 0 or +1, got {self.direction!r}")
        if not (callable(self.condition) and not isinstance(self.condition, sm.Basic)):
            try:
                object.__setattr__(self, "condition", sm.sympify(self.condition))
            except (sm.SympifyError, TypeError) as exc:
                raise InputError(f"Event {self.name!r}: the condition must be a SymPy expression or a "
                                 f"callable g(t, x, p), got {self.condition!r}") from exc
        if self.action is not None and not callable(self.action) and not isinstance(self.action, dict):
            raise InputError(f"Event {self.name!r}: action must be a callable action(t, x, p) -> x "
                             "or a dict {state: expression}")


class EventRecord(NamedTuple):
    """One event that happened: its ``name``, time ``t``, state ``x`` (``model.states``
    order) at the crossing and, after an action, ``x_after`` (else None); for an impact
    also x' just before and just after it (``xdot``, ``xdot_after``: the knots of the
    dense output ``trajectory(t)`` at the impact when the samples do not hold it, e.g.
    with ``t_eval``), else None."""

    name: str
    t: float
    x: np.ndarray
    x_after: np.ndarray | None = None
    xdot: np.ndarray | None = None
    xdot_after: np.ndarray | None = None


class PreparedEvents:
    """The events of one simulation, ready to evaluate: ``values(t, x)`` -> g (k,) and
    ``locate(...)`` for one accepted step."""

    def __init__(self, model: NumericModel, events: Sequence[Event], P: np.ndarray,
                 r_fun: Callable[[float, np.ndarray], np.ndarray] | None = None) -> None:
        self.model, self.P, self.r_fun = model, P, r_fun
        self.events = list(events)
        self.names = [e.name or f"event{i}" for i, e in enumerate(self.events)]
        if len(set(self.names)) != len(self.names):
            dup = [n for n in self.names if self.names.count(n) > 1][0]
            raise InputError(f"two events are named {dup!r}")
        self._callables: dict[int, Callable] = {}
        exprs: dict[int, sm.Expr] = {}
        extra = list(model.extra_states)
        allowed = {_t, *model.coordinates, *model.speeds, *extra, *model.constants}
        for i, e in enumerate(self.events):
            if isinstance(e.condition, sm.Basic):
                atoms, derivs = expression_atoms(e.condition)
                bad = [a for a in atoms if a not in allowed]
                derivs = list(derivs)
                if bad or derivs:
                    what = sorted(derivs + bad, key=str)[0]
                    raise InputError(f"event {self.names[i]!r}: the condition {e.condition} depends on "
                                     f"{what}, which is not t, a coordinate, a speed, an extra state "
                                     "or a constant"
                                     f"{_declare_hint(what)}")
                exprs[i] = e.condition
            else:
                self._callables[i] = e.condition
        self._directions: np.ndarray | None = None      # (each event's direction, for crossed)
        self._order = sorted(exprs)
        self._kernel = None
        self._fast: tuple | bool | None = None      # (see _direct; False: not possible)
        self._needs_u = False
        if exprs:
            self._kernel = make_function(_argument_groups(model), [exprs[i] for i in self._order],
                                         name="event conditions")
            speeds = set(model.speeds)
            self._needs_u = any(expression_atoms(e)[0] & speeds for e in exprs.values()) if speeds else False
        self._actions: dict[int, Callable] = {}
        for i, e in enumerate(self.events):
            if isinstance(e.action, dict):
                self._actions[i] = self._compile_action(self.names[i], e.action, allowed)
            elif e.action is not None:
                self._actions[i] = e.action

    def _compile_action(self, name: str, action: dict, allowed: set) -> Callable:
        m = self.model
        index = {}
        for i, s in enumerate(m.states):
            index[s] = i
            index[_short(s)] = i
        idx, exprs = [], []
        for key, expr in action.items():
            k = key.strip() if isinstance(key, str) else key
            if k not in index:
                raise InputError(f"event {name!r}: the action sets {key}, which is not a state "
                                 f"({', '.join(map(_short, m.states))})")
            e = sm.sympify(expr)
            bad = [a for a in e.free_symbols | set(e.atoms(sm.core.function.AppliedUndef)) if a not in allowed]
            if bad or e.atoms(sm.Derivative):
                what = sorted(list(e.atoms(sm.Derivative)) + bad, key=str)[0]
                raise InputError(f"event {name!r}: the action for {key} depends on {what}, which is not "
                                 f"t, a coordinate, a speed, an extra state or a constant"
                                 f"{_declare_hint(what)}")
            idx.append(index[k])
            exprs.append(e)
        f = make_function(_argument_groups(m), exprs, name=f"event {name} action")
        idx_arr = np.array(idx, dtype=np.intp)

        def apply(t, x, p):
            x = np.array(x, dtype=float)
            new = x.copy()
            new[idx_arr] = np.atleast_1d(f(*self._arguments(t, x, p, need_u=True)))
            return new

        return apply

    def apply_action(self, i: int, t: float, x: np.ndarray) -> np.ndarray | None:
        """The state after event ``i``'s action at (t, x), or None when it has none."""
        act = self._actions.get(i)
        if act is None:
            return None
        try:
            new = np.asarray(act(t, np.array(x, dtype=float), self.P), dtype=float).ravel()
        except InputError:
            raise
        except Exception as exc:
            raise InputError(f"the action of event {self.names[i]!r} raised {type(exc).__name__}: {exc}") from exc
        if new.shape != x.shape or not np.isfinite(new).all():
            raise InputError(f"the action of event {self.names[i]!r} returned {new!r}; expected "
                             f"{x.size} finite values in model.states order")
        return new

    def __len__(self) -> int:
        return len(self.events)

    def _arguments(self, t: float, x: np.ndarray, p: np.ndarray, need_u: bool) -> tuple:
        """(t, q, u (all o speeds), p[, x_e]) of the state x = [q, u_ind, x_e]: the argument
        groups of :func:`_argument_groups` (u_dep solved when ``need_u``, else zeros)."""
        m = self.model
        q, u_ind = x[:m.N], x[m.N:m.N + m.p]
        if need_u and m.m:
            r = None if self.r_fun is None else self.r_fun(t, x)
            u = m.full_speeds(q, u_ind, p, t, r)
        else:
            u = np.concatenate([u_ind, np.zeros(m.m)])
        if m.e:
            return t, q, u, p, x[m.N + m.p:]
        return t, q, u, p

    def _direct(self) -> tuple | None:
        """(z, out, into) for evaluating the conditions' kernel in place: its argument vector
        [t, q, u_ind, u_dep = 0, constants, x_e] (the constants written once) and output;
        None when the conditions need the dependent speeds solved (or the constants do not
        fit: the general call then says so)."""
        m = self.model
        if self._needs_u and m.m:
            return None
        P = np.asarray(self.P, dtype=float).ravel()
        if P.size != len(m.constants):
            return None
        kernel = self._kernel.kernel.realize()
        z = np.zeros(kernel.nargs)
        start = 1 + m.N + m.o
        z[start:start + P.size] = P
        return z, np.empty(kernel.nout), kernel.into

    def values(self, t: float, x: np.ndarray) -> np.ndarray:
        """g of every event at (t, x), x = [q (N), u_ind (p), x_e (e)] in ``model.states``
        order."""
        out = np.empty(len(self.events))
        if self._kernel is not None:
            direct = self._fast
            if direct is None:
                direct = self._fast = self._direct() or False
            if direct:
                # (the same kernel on the same arguments as the general call below: the
                # same bits, without its argument checks and concatenations)
                z, vals, into = direct
                m = self.model
                z[0] = t
                z[1:1 + m.N + m.p] = x[:m.N + m.p]
                if m.e:
                    z[1 + m.N + m.o + len(m.constants):] = x[m.N + m.p:]
                into(z, vals)
            else:
                vals = np.atleast_1d(self._kernel(*self._arguments(t, x, self.P, self._needs_u)))
            out[self._order] = vals
        for i, g in self._callables.items():
            out[i] = float(g(t, x, self.P))
        return out

    def crossed(self, g0: np.ndarray, g1: np.ndarray) -> list[int]:
        """Events whose g changes sign from g0 (step start) to g1 (step end) in their direction.

        g0 == 0 is not a crossing (the condition starts a segment at its root); g1 == 0 is.
        """
        a, b = np.asarray(g0, dtype=float), np.asarray(g1, dtype=float)
        if self._directions is None:
            self._directions = np.array([e.direction for e in self.events], dtype=float)
        d = self._directions
        # (no np.errstate: isfinite and the comparisons raise no floating point flag on NaN)
        ok = np.isfinite(a) & np.isfinite(b) & (a != 0.0)
        hit = ok & (((a < 0.0) & (b >= 0.0) & (d >= 0)) | ((a > 0.0) & (b <= 0.0) & (d <= 0)))
        return [int(i) for i in np.flatnonzero(hit)]

    def locate(self, t0: float, t1: float, g0: np.ndarray, g1: np.ndarray,
               state_at: Callable[[float], np.ndarray]) -> list[tuple[float, int]]:
        """The events crossed in the step [t0, t1], as (time, index) in time order.

        ``state_at(t)``: the state in ``model.states`` order from the step's dense output.
        Each crossing is bracketed by the step and refined by Brent's method on
        g(t, state_at(t)) to |Δt| <= 4 eps |t| + 1e-15.  A condition that is zero at t0 is
        judged by its sign just after t0 (10^-6 of the step in).
        """
        # the common step: every condition keeps a strict sign (no NaN), so nothing crossed
        # (the test on Python floats: cheaper than numpy's for a few conditions)
        if all((a > 0.0 and b > 0.0) or (a < 0.0 and b < 0.0)
               for a, b in zip(np.asarray(g0, dtype=float).tolist(),
                               np.asarray(g1, dtype=float).tolist())):
            return []
        found = []
        sign = 1.0 if t1 >= t0 else -1.0
        g0 = np.array(g0, dtype=float)
        starts = np.full(len(g0), t0)
        zero = np.flatnonzero((g0 == 0.0) & (np.asarray(g1) != 0.0)).tolist()
        if zero:
            # a condition at its root at the step start (after the impact it triggered): its
            # sign just after the start decides whether the step crosses it again
            for frac in (1e-6, 1e-3):
                tz = t0 + frac * (t1 - t0)
                gz = self.values(tz, state_at(tz))
                for i in list(zero):
                    if gz[i] != 0.0:
                        g0[i], starts[i] = gz[i], tz
                        zero.remove(i)
                if not zero:
                    break
        for i in self.crossed(g0, g1):
            t0 = starts[i]
            if g1[i] == 0.0:
                tr = t1
            else:
                def f(tt, _i=i):
                    return self.values(tt, state_at(tt))[_i]
                fa = f(t0)
                if fa == 0.0 or np.sign(fa) == np.sign(g1[i]):
                    # the interpolant at t0 differs from the step's start value by round-off
                    tr = _bisect_interpolant(f, t0, t1, g1[i])
                else:
                    tr = brentq(f, t0, t1, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200)
            found.append((float(tr), i))
        found.sort(key=lambda e: (sign * e[0], e[1]))
        return found


def _argument_groups(model: NumericModel) -> list:
    """The compiled conditions' and actions' arguments: [t, q, u, constants(, x_e)]."""
    groups = [_t, list(model.coordinates), list(model.speeds), list(model.constants)]
    if model.extra_states:
        groups.append(list(model.extra_states))
    return groups


def _declare_hint(what) -> str:
    """How to declare an unknown plain symbol used by an event: as a constant of the model."""
    if isinstance(what, sm.Symbol):
        return (f" of the model (its constants are those of the equations of motion).  Declare "
                f"{what} as a constant: model = symbody.compile(eom.with_constants({what})) (or "
                f"EquationsOfMotion(..., constants=[..., {what}])), then give its value in p, "
                f"e.g. {{'{what}': 0.8}}")
    return ""


def _bisect_interpolant(f, a: float, b: float, gb: float) -> float:
    """A root of f in [a, b] when f(a) has no strict sign opposite to f(b) on the interpolant
    (round-off at the step start): shrink from a until a sign change is found, then Brent."""
    for frac in (1e-12, 1e-9, 1e-6, 1e-3, 0.1, 0.5):
        c = a + frac * (b - a)
        fc = f(c)
        if fc != 0.0 and np.sign(fc) != np.sign(gb):
            return brentq(f, c, b, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200)
    return b


def prepare_events(model: NumericModel, events: Event | Sequence[Event] | None, P: np.ndarray,
                   r_fun: Callable[[float, np.ndarray], np.ndarray] | None = None) -> PreparedEvents | None:
    """Check and compile ``events`` (None / empty: None)."""
    if events is None:
        return None
    if isinstance(events, Event):
        events = [events]
    events = list(events)
    for i, e in enumerate(events):
        if not isinstance(e, Event):
            raise InputError(f"events[{i}] is a {type(e).__name__}; wrap conditions in symbody.Event(...)")
    if not events:
        return None
    return PreparedEvents(model, events, P, r_fun)


def state_names(model: NumericModel) -> list[str]:
    return [_short(s) for s in model.states]
