"""The dense output of a simulation: the integrator's own interpolant, step by step.

Every accepted step [t_a, t_b] of a run is kept as the values of the step's interpolant
(scipy's ``DenseOutput`` of the step, IDA's interpolating polynomial, the compiled steps'
scipy interpolant) at k Chebyshev-Lobatto points

    s_j = (1 - cos(pi j / (k - 1))) / 2,   t_j = t_a + s_j (t_b - t_a),   j = 0 .. k-1,

and evaluated by the barycentric formula on them,

    x(t) = sum_j w_j f_j / (s - s_j)  /  sum_j w_j / (s - s_j),   w_j = (-1)^j (halved at the ends),

which reproduces any polynomial of degree < k exactly.  k is one more than the degree of
the method's interpolant (:data:`NODES`: DOP853's 7th-degree polynomial needs 8, RK45's
quartic 5, Radau's collocation cubic 4, BDF's and IDA's of their order <= 5 six), so the
recorded pieces *are* the solver's dense output, to round-off, stored as one array
(S steps, k nodes, w values) rather than one Python object per step.

The values are the full state [q (N), u (o, all speeds, model order), extra states (e)]
in model order, whatever the dependent set of the step; ``partition`` (S,) says which
dependent set each step ran in (-1: full coordinates), so that an evaluation can put the
interpolated state back on the constraints in that set (see
:class:`~symbody.analysis.trajectory.Trajectory`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError

__all__ = ["NODES", "ConstraintProjection", "JoinedProjection", "StepInterpolant", "StepRecorder",
           "join_steps", "lobatto_points"]

#: nodes per step for each integrator: one more than the degree of its dense output (LSODA's
#: Nordsieck polynomial goes up to degree 12)
NODES = {"DOP853": 8, "RK45": 5, "RK23": 4, "Tsit5": 5, "Vern6": 7, "Radau": 4, "BDF": 6,
         "LSODA": 13, "IDA": 6}


def lobatto_points(k: int) -> np.ndarray:
    """The k Chebyshev-Lobatto points of [0, 1] (k,), ascending, 0 and 1 included."""
    return 0.5 * (1.0 - np.cos(np.pi * np.arange(k) / (k - 1)))


def _weights(k: int) -> np.ndarray:
    w = (-1.0) ** np.arange(k)
    w[0] *= 0.5
    w[-1] *= 0.5
    return w


@dataclass(frozen=True, eq=False)
class StepInterpolant:
    """The steps of a run: ``t_start``, ``t_end`` (S,), ``values`` (S, k, w) at the
    Chebyshev-Lobatto points of each step, ``partition`` (S,) an index into
    ``partitions`` (each (dependent coordinate indices, dependent speed indices); -1: the
    step ran in full coordinates).  Steps are in time order and do not overlap (a step
    cut at an event ends there; the next one starts there)."""

    t_start: np.ndarray
    t_end: np.ndarray
    values: np.ndarray
    partition: np.ndarray
    partitions: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = ()
    #: the run's samples are on f_h = 0 (a projecting mode): evaluations project q too
    positions: bool = False

    def __post_init__(self) -> None:
        S = len(self.t_start)
        if self.values.ndim != 3 or self.values.shape[0] != S or len(self.t_end) != S \
                or len(self.partition) != S or (S and self.values.shape[1] < 2):
            raise InputError(f"StepInterpolant: inconsistent shapes (t_start {np.shape(self.t_start)}, "
                             f"t_end {np.shape(self.t_end)}, values {np.shape(self.values)}, "
                             f"partition {np.shape(self.partition)})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StepInterpolant):
            return NotImplemented
        return (self.partitions == other.partitions and self.positions == other.positions
                and all(np.array_equal(getattr(self, f), getattr(other, f), equal_nan=True)
                        for f in ("t_start", "t_end", "values", "partition")))

    __hash__ = None  # type: ignore[assignment]

    @property
    def nodes(self) -> int:
        return int(self.values.shape[1])

    @property
    def width(self) -> int:
        return int(self.values.shape[2])

    def __len__(self) -> int:
        return len(self.t_start)

    def locate(self, times: np.ndarray) -> np.ndarray:
        """The step index (n,) of each time: the last step starting at or before it (at a
        time where one step ends and the next starts, the next: the state after an
        impact)."""
        if not len(self.t_start):
            raise InputError("the trajectory holds no steps")
        sign = 1.0 if self.t_end[-1] >= self.t_start[0] else -1.0
        i = np.searchsorted(sign * self.t_start, sign * np.asarray(times, dtype=float),
                            side="right") - 1
        return np.clip(i, 0, len(self.t_start) - 1)

    def evaluate(self, times: np.ndarray, steps: np.ndarray | None = None) -> np.ndarray:
        """The interpolated values (n, w) at ``times`` (n,) (barycentric formula on the
        step's nodes; ``steps`` (n,): the step of each time, default :meth:`locate`)."""
        times = np.asarray(times, dtype=float)
        steps = self.locate(times) if steps is None else steps
        k = self.nodes
        s_nodes, w = lobatto_points(k), _weights(k)
        a, b = self.t_start[steps], self.t_end[steps]
        h = b - a
        s = np.divide(times - a, h, out=np.zeros_like(times), where=h != 0)
        diff = s[:, None] - s_nodes[None, :]                 # (n, k)
        exact = diff == 0.0
        diff[exact] = 1.0
        c = w[None, :] / diff
        hit = exact.any(axis=1)
        c[hit] = exact[hit].astype(float)                    # at a node: that node's value
        c /= c.sum(axis=1, keepdims=True)
        return np.einsum("nk,nkw->nw", c, self.values[steps])


class StepRecorder:
    """Collects the steps of a run (see :class:`StepInterpolant`) in growing arrays.

    ``add(t_a, t_b, states, pid)`` takes the states (k, n <= width) at the step's nodes
    (:meth:`times`) in the layout of the partition ``pid`` of the run; the driver converts
    them to the full state when the run ends (:meth:`arrays`).
    """

    def __init__(self, method: str, width: int) -> None:
        self.k = NODES.get(method, 8)
        self.s = lobatto_points(self.k)
        self.width = width
        self.size = 0
        self._t = np.empty((64, 2))
        self._pid = np.empty(64, dtype=np.intp)
        self._y = np.empty((64, self.k, width))
        self._n = np.empty(64, dtype=np.intp)        # the width of each step's states

    def times(self, t_a: float, t_b: float) -> np.ndarray:
        """The node times (k,) of the step [t_a, t_b] (its ends exactly)."""
        t = t_a + (t_b - t_a) * self.s
        t[0], t[-1] = t_a, t_b
        return t

    def add(self, t_a: float, t_b: float, states: np.ndarray, pid: int) -> None:
        if t_b == t_a:
            return
        if self.size == len(self._pid):
            grow = 2 * self.size
            self._t = np.resize(self._t, (grow, 2))
            self._pid = np.resize(self._pid, grow)
            self._n = np.resize(self._n, grow)
            y = np.empty((grow, self.k, self.width))
            y[:self.size] = self._y
            self._y = y
        n = states.shape[1]
        i = self.size
        self._t[i] = (t_a, t_b)
        self._pid[i] = pid
        self._n[i] = n
        self._y[i, :, :n] = states
        self.size += 1

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(t (S, 2), pid (S,), states (S, k, width), widths (S,)) of the steps recorded."""
        S = self.size
        return self._t[:S], self._pid[:S], self._y[:S], self._n[:S]


class ConstraintProjection:
    """Puts interpolated full states [q, u, x_e] (n, N + o + e) back on the constraints of
    ``model`` (a NumericModel, constants ``P``): in the dependent set each step ran in, q_dep
    by Newton's method on f_h(q, t) = 0 with q_ind held (the batched projection the
    simulation's samples take; with ``positions``: only for runs whose samples are
    projected, so that "none" and "baumgarte" still show their drift), then u_dep from
    B(q, t) u + b(q, t) = 0 with u_ind held (every mode: dependent speeds are never
    integrated).  Steps in full coordinates (where no dependent set is regular) and rows
    whose Newton iteration does not converge keep the interpolated values."""

    def __init__(self, model, P: np.ndarray, positions: bool = True) -> None:
        self.model, self.P = model, np.asarray(P, dtype=float)
        self.positions = positions

    def __call__(self, times: np.ndarray, W: np.ndarray, pid: np.ndarray,
                 partitions: tuple) -> np.ndarray:
        from ..compilation.numeric_model import Partition
        from ..errors import SymbodyError

        model, P = self.model, self.P
        N, o = model.N, model.o
        W = np.array(W, dtype=float)
        for j in np.unique(pid):
            qd, ud = partitions[j]
            if len(qd) != model.M or len(ud) != model.m or not (model.M or model.m):
                continue        # full coordinates (or nothing to keep)
            part = Partition(tuple(qd), tuple(ud), N, o)
            rows = np.flatnonzero(pid == j)
            t = times[rows]
            Q = W[rows, :N]
            if model.M and self.positions:
                try:
                    Qp, done = model.project_coordinates_many(t, Q, P, partition=part)
                except SymbodyError:
                    Qp, done = Q.copy(), np.zeros(len(rows), dtype=bool)
                for i in np.flatnonzero(~done):
                    try:
                        q, ok, norm = model.project_coordinates(Q[i], P, float(t[i]), partition=part)
                    except SymbodyError:
                        ok, norm = False, np.inf
                    Qp[i] = q if (ok or norm < 1e-10) else Q[i]
                Q = Qp
                W[rows, :N] = Q
            if model.m:
                X = np.concatenate([Q, W[rows][:, N + part.u_ind_index], W[rows, N + o:]], axis=1)
                r = np.zeros(len(model.specifieds)) if model.specifieds else None
                try:
                    W[rows, N:N + o] = model.speeds_many(t, X, P, r, partition=part)
                except SymbodyError:
                    for i, row in enumerate(rows):
                        try:
                            W[row, N:N + o] = model.speeds_many(t[i:i + 1], X[i:i + 1], P, r,
                                                                partition=part)[0]
                        except SymbodyError:
                            continue
        return W


def join_steps(parts: list[StepInterpolant]) -> StepInterpolant:
    """The steps of consecutive runs as one interpolant (their partition lists joined, the
    indices shifted)."""
    offsets = np.cumsum([0] + [len(p.partitions) for p in parts[:-1]])
    width = {p.width for p in parts if len(p)}
    nodes = {p.nodes for p in parts if len(p)}
    if len(width) > 1 or len(nodes) > 1:
        raise InputError("join_steps: the runs' steps have different shapes")
    k, w = (nodes.pop(), width.pop()) if width else (2, parts[0].values.shape[2])
    return StepInterpolant(
        np.concatenate([p.t_start for p in parts]), np.concatenate([p.t_end for p in parts]),
        np.concatenate([p.values.reshape(len(p), k, w) for p in parts]),
        np.concatenate([p.partition + off for p, off in zip(parts, offsets, strict=True)]),
        tuple(pp for p in parts for pp in p.partitions), positions=parts[0].positions)


class JoinedProjection:
    """The projections of consecutive runs (one model each) over their joined steps
    (:func:`join_steps`): the rows of each run's partitions go to that run's projection."""

    def __init__(self, projections: list, sizes: list[int]) -> None:
        self.projections = projections
        self.offsets = np.cumsum([0] + list(sizes))

    def __call__(self, times: np.ndarray, W: np.ndarray, pid: np.ndarray,
                 partitions: tuple) -> np.ndarray:
        W = np.array(W, dtype=float)
        for j, projection in enumerate(self.projections):
            lo, hi = self.offsets[j], self.offsets[j + 1]
            rows = np.flatnonzero((pid >= lo) & (pid < hi))
            if projection is None or not len(rows):
                continue
            W[rows] = projection(times[rows], W[rows], pid[rows] - lo, partitions[lo:hi])
        return W
