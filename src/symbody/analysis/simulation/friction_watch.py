"""The switching functions of one piece of an exact-friction run (issue 37).

A piece runs one pattern of stick and slip on its compiled variant
(:mod:`.friction_pieces`); :class:`PieceWatch` gives its terminal events (see
:mod:`.friction_modes` for what each one means), the contacts' segment breaks as
conditions on the piece's states, and the friction forces at its states (stuck contacts
from the variant's multipliers, slipping ones -μ F_n v̂), one state or many at once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from ...compilation import NumericModel
from ...compilation.friction_models import FrictionModels
from ..events import Event
from .friction_modes import STICK_SLACK, ContactProblem, Pattern, distribute

__all__ = ["PieceWatch", "INTERNAL", "GAP_ROUNDOFF"]

#: the prefix of the pieces' own terminal events (never listed in trajectory.events)
INTERNAL = "exact friction: "
#: a gap this small (m) at a piece's start is a touchdown located there (zero to round-off)
GAP_ROUNDOFF = 1e-12


class PieceWatch:
    """The switching functions of one piece: ``pattern`` run on its ``variant``.

    ``values(t, x)`` (x in the variant's states) gives every switching function at once
    (remembered for the last state: the driver asks each event separately); ``events()`` the
    terminal :class:`~symbody.analysis.events.Event` objects; ``full(t, x)`` (q, all speeds in
    the base model's order)."""

    def __init__(self, fm: FrictionModels, variant: NumericModel, pattern: Pattern, P: np.ndarray,
                 P_v: np.ndarray, r_user: Callable | None, slack: dict[int, float],
                 start: ContactProblem) -> None:
        self.fm, self.variant, self.pattern, self.P, self.P_v = fm, variant, pattern, P, P_v
        self.r_user = r_user
        base = fm.base
        self.to_base = np.array([list(base.speeds).index(s) for s in variant.speeds], dtype=np.intp)
        self.stuck = [i for i, n in enumerate(fm.names) if pattern.is_stuck(n)]
        self.slipping = [i for i in range(len(fm.names)) if i not in self.stuck]
        # slipping contacts in the air at the start (no friction): only their touchdown ends the
        # piece (the ones touching at the start may lift off and land again inside it)
        self.sliding = [i for i in self.slipping if start.touching(i)]
        self.slack = slack
        self.peak = np.zeros(len(fm.names))
        self.directions = {i: pattern.direction(fm.names[i]) for i in self.slipping}
        kept = dict(pattern.stuck)
        state_rows = fm.rows
        #: (contact, tangent) of each kept row, in the variant's constraint order
        self.kept = [(i, j) for i in self.stuck for j in kept[fm.names[i]]]
        self.kept_index = [state_rows[i].start + j for i, j in self.kept]
        self.stuck_rows = [(i, j) for i in self.stuck for j in range(fm.contacts[i].tangents)]
        self.stuck_index = [state_rows[i].start + j for i, j in self.stuck_rows]
        names = fm.names
        self.kinds = ([("stick", i) for i in self.stuck] + [("liftoff", i) for i in self.stuck]
                      + [("slip", i) for i in self.sliding] + [("touchdown", i) for i in self.slipping])
        self.names = [f"{INTERNAL}{names[i]} {kind}" for kind, i in self.kinds]
        # a gap at its root at the piece's start (it began at a touchdown) starts the touchdown
        # function at exactly zero, so that the driver judges it by its sign just after
        gaps = start.state.gap
        self.gap_offset = np.where(np.abs(gaps) <= GAP_ROUNDOFF, -gaps, 0.0)
        self._memo: tuple = (None, None)

    def owns(self, name: str) -> bool:
        return name in self.names

    def kind(self, name: str) -> tuple[str, int]:
        return self.kinds[self.names.index(name)]

    def inputs(self, t: float, x: np.ndarray) -> np.ndarray | None:
        return None if self.r_user is None else self.r_user(t, x)

    def full(self, t: float, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(q, all speeds in the base model's order) at the variant state x."""
        v = self.variant
        q = np.asarray(x[:v.N], dtype=float)
        u_ind = np.asarray(x[v.N:v.N + v.p], dtype=float)
        u_v = v.full_speeds(q, u_ind, self.P_v, t, self.inputs(t, x)) if v.m else u_ind
        u = np.empty(self.fm.base.o)
        u[self.to_base] = u_v
        return q, u

    def stick_forces(self, t: float, x: np.ndarray, state=None, multipliers=None) -> dict[int, np.ndarray]:
        """The stuck contacts' friction forces at x: the variant's multipliers of the kept rows,
        their generalized force split over all stuck rows (:func:`.friction_modes.distribute`)."""
        if not self.stuck:
            return {}
        v, fm = self.variant, self.fm
        if state is None:
            q, u = self.full(t, x)
            state = fm.evaluate(t, q, u, self.P)
        if multipliers is None:
            multipliers = v.accelerations(x[:v.N], x[v.N:v.N + v.p], self.P_v, t, self.inputs(t, x))[1]
        lam = np.asarray(multipliers, dtype=float)[fm.base.m:]
        Q = state.jacobian[self.kept_index].T @ lam
        weights = np.array([state.static[i] * state.normal[i] for i, _ in self.stuck_rows])
        F = distribute(state.jacobian[self.stuck_index], Q, weights)
        return {i: np.array([F[k] for k, (ii, _) in enumerate(self.stuck_rows) if ii == i])
                for i in self.stuck}

    def forces(self, t: float, x: np.ndarray, state=None, multipliers=None) -> dict[int, np.ndarray]:
        """Every contact's friction force (active tangents) at the variant state x: stuck ones
        from the multipliers (:meth:`stick_forces`), slipping ones -μ F_n v̂ (v̂ continued
        through v = 0 along the piece's direction d)."""
        if state is None:
            q, u = self.full(t, x)
            state = self.fm.evaluate(t, q, u, self.P)
        out = self.stick_forces(t, x, state, multipliers)
        for i in self.slipping:
            v = state.slip[state.rows[i]]
            d = self.directions[i]
            speed = float(np.linalg.norm(v))
            if len(v) > 1 and speed > 0.0:
                along = np.sign(v @ d)
                direction = v / speed * along if along != 0.0 else d
            else:
                direction = d
            out[i] = -state.kinetic[i] * state.normal[i] * direction
        return out

    def inputs_many(self, T: np.ndarray, X: np.ndarray) -> np.ndarray | None:
        """The user's inputs (k, s) at the variant states X (k, n), or None."""
        if self.r_user is None:
            return None
        values = getattr(self.r_user, "values", None)
        if values is not None:
            return np.broadcast_to(np.asarray(values, dtype=float), (len(T), len(values)))
        return np.array([np.asarray(self.r_user(t, x), dtype=float).ravel() for t, x in zip(T, X)])

    def forces_many(self, T: np.ndarray, X: np.ndarray) -> tuple[dict[int, np.ndarray], np.ndarray]:
        """:meth:`forces` at k variant states X (k, n) at once: ({contact: (k, tangents)},
        all speeds in the base model's order (k, o))."""
        v, fm = self.variant, self.fm
        k = len(T)
        R = self.inputs_many(T, X)
        U_v = v.speeds_many(T, X, self.P_v, R) if v.m else np.asarray(X[:, v.N:v.N + v.p], dtype=float)
        U = np.empty((k, fm.base.o))
        U[:, self.to_base] = U_v
        state = fm.evaluate_many(T, X[:, :v.N], U, self.P)
        out: dict[int, np.ndarray] = {}
        if self.stuck:
            lam = v.evaluate_samples(T, X, self.P_v, R, speeds=U_v).multipliers[:, fm.base.m:]
            F = np.empty((k, len(self.stuck_rows)))
            if self.kept_index == self.stuck_index:        # no dependent rows: F = λ
                F[:] = lam
            else:
                for n in range(k):
                    W = state.jacobian[n]
                    weights = np.array([state.static[n, i] * state.normal[n, i] for i, _ in self.stuck_rows])
                    F[n] = distribute(W[self.stuck_index], W[self.kept_index].T @ lam[n], weights)
            for i in self.stuck:
                out[i] = F[:, [k2 for k2, (ii, _) in enumerate(self.stuck_rows) if ii == i]]
        for i in self.slipping:
            vel = state.slip[:, state.rows[i]]
            d = np.broadcast_to(self.directions[i], vel.shape)
            if vel.shape[1] > 1:
                speed = np.linalg.norm(vel, axis=1, keepdims=True)
                along = np.sign(np.sum(vel * d, axis=1, keepdims=True))
                moving = (speed > 0.0) & (along != 0.0)
                direction = np.where(moving, vel * along / np.where(speed > 0.0, speed, 1.0), d)
            else:
                direction = d
            out[i] = -(state.kinetic[:, i] * state.normal[:, i])[:, None] * direction
        return out, U

    def values(self, t: float, x: np.ndarray) -> np.ndarray:
        key = (t, x.tobytes())
        if self._memo[0] == key:
            return self._memo[1]
        q, u = self.full(t, x)
        s = self.fm.evaluate(t, q, u, self.P)
        out = []
        forces = self.stick_forces(t, x, s)
        for i in self.stuck:
            bound = s.static[i] * s.normal[i] * (1.0 + STICK_SLACK) + self.slack[i]
            out.append(bound - float(np.linalg.norm(forces[i])))
        out += [-float(s.gap[i]) for i in self.stuck]
        for i in self.sliding:
            v = s.slip[s.rows[i]]
            speed = float(np.linalg.norm(v))
            self.peak[i] = max(self.peak[i], speed)
            d = self.directions[i]
            out.append(float(v @ d) if len(v) == 1 else float(v @ d) - 0.5 * speed)
        out += [float(s.gap[i] + self.gap_offset[i]) for i in self.slipping]
        vals = np.array(out)
        self._memo = (key, vals)
        return vals

    def breaks(self, events: list, values: Callable | None) -> list[Event]:
        """The contacts' segment breaks (``events``, conditions in t, q, u; ``values(t, q, u)``
        all of them at once, compiled) as conditions on this piece's states."""
        if not events:
            return []
        memo: list = [None, None]

        def condition(j):
            def g(t, x, p):
                key = (t, np.asarray(x, dtype=float).tobytes())
                if memo[0] != key:
                    q, u = self.full(t, np.asarray(x, dtype=float))
                    memo[:] = [key, np.atleast_1d(values(t, q, u))]
                return float(memo[1][j])
            return g
        return [dataclasses.replace(e, condition=condition(j)) for j, e in enumerate(events)]

    def events(self) -> list[Event]:
        def condition(k):
            return lambda t, x, p: float(self.values(t, np.asarray(x, dtype=float))[k])
        return [Event(condition(k), name=name, direction=-1, terminal=True)
                for k, name in enumerate(self.names)]
