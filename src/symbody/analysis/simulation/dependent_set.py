"""The dependent set along a simulation: when to switch it, and when to stop.

Which coordinates and speeds are dependent is a numerical choice, and any fixed choice
fails somewhere: a four-bar whose rocker angle is independent cannot pass the rocker's
extreme positions, where ∂f_h/∂q_dep (and B_dep) is singular.  After every accepted step
:class:`DependentSetMonitor` tracks, for ∂f_h/∂q and for B, the sign of det A[:, dependent]
and the ratio |det A[:, dependent]| / |det A[:, best]| to the best-conditioned choice
(column-pivoted QR, :func:`~symbody.compilation.linear_algebra.pivoted_columns`):

- switching (models whose ``partition_switchable`` is True): where the ratio falls to the
  threshold (located on the step's dense output) the integration restarts with the
  dependent set chosen at that configuration; the state [q, u_ind] is re-mapped through all
  speeds u (:func:`remap`).  This is exact: the augmented system gives u' of all speeds
  without reference to a partition.
- stopping: a model that cannot switch, or a configuration where the full Jacobian loses
  rank (a change point of the mechanism), stops the integration there (status -3).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from scipy.optimize import brentq

from ...compilation import NumericModel
from ...compilation.linear_algebra import determinant, pivoted_columns, pivoted_qr, rank_measure
from ...compilation.native_constraints import native_constraints
from ...compilation.numeric_model import Partition
from ...compilation.partition import constraint_matrices_function
from ...errors import SymbodyError
from ...formatting import symbol_name as _short
from .strategy import StopIntegration

__all__ = ["DependentSetMonitor", "Gauge", "SetEvent", "locate_root", "remap", "near_singular_note",
           "switch_note"]

#: a failure where |det| of the dependent columns is below this fraction of the best
#: choice's is reported as a singular configuration
NEAR_SINGULAR = 1e-3


class Gauge(NamedTuple):
    """Conditioning of the active dependent set at one state.

    ``dets``: det ∂f_h/∂q[:, q_dep] and det B[:, u_dep] (1.0 when absent), ``signs`` their signs;
    ``ratio``: min over both of |det A[:, dep]| / |det A[:, best]| (best: pivoted QR),
    1.0 when switching is off or no better choice exists.
    """

    signs: tuple[float, float]
    ratio: float
    dets: tuple[float, float]


class SetEvent(NamedTuple):
    kind: str            # "switch", "singular" (cannot switch), "rank" (the full Jacobian lost rank)
    t: float
    which: int = 0       # 0: ∂f_h/∂q, 1: B
    partition: Partition | None = None     # "switch": the dependent set to switch to


class DependentSetMonitor:
    """Watches the dependent set along the integration and decides when to switch or stop.

    For each constraint matrix A (∂f_h/∂q, M x N, and B, m x o) and the active dependent
    columns D it tracks the sign of det A[:, D] (a sign change between two accepted steps
    means A[:, D] passed through a singular matrix) and, when switching is possible, the
    ratio |det A[:, D]| / |det A[:, D*]| to the best-conditioned choice D* (column-pivoted
    QR).  The dependent set is switched where that ratio falls to ``threshold``.
    """

    def __init__(self, model: NumericModel, P: np.ndarray, r_fun: Any, threshold: float, rtol: float):
        self.model, self.P, self.r_fun = model, P, r_fun
        self.threshold = float(threshold)
        self.switch = model.partition_switchable and self.threshold > 0
        self.active = bool(model.M or model.m)
        self.rank_tol = min(1e-2, math.sqrt(rtol))
        #: the driver sets this where it goes on in full coordinates below a rank measure
        self.rank_floor: float | None = None
        self.nevals = 0
        # the matrices with the constants bound (None: B reads the specified inputs, or the
        # model evaluates them its own way), and the last configuration seen with them
        self._matrices = (constraint_matrices_function(model, P)
                          if self.active and type(model).constraint_matrices
                          is NumericModel.constraint_matrices else None)
        self._last: _Configuration | None = None
        # the rank measure in compiled code for the points no other check reads (the
        # same numbers: native_constraints), None when the model cannot have it
        self._native = native_constraints(model, P) if self._matrices is not None else None

    # -- evaluation
    def configuration(self, t: float, y: np.ndarray, remember: bool = True) -> _Configuration:
        """The constraint matrices at (t, q = y[:N]) and what is computed from them.

        The last configuration is remembered (``remember``): the rank measure and the gauge
        at the end of a step read the same matrices and the same pivoted QR, evaluated once.
        """
        N = self.model.N
        fast = self._matrices
        if fast is None:
            r = None
            if self.model.velocity_constraints_use_specifieds and self.r_fun is not None:
                r = self.r_fun(t, y)       # not switchable: y is in the model's layout
            self.nevals += 1
            return _Configuration(*self.model.constraint_matrices(y[:N], self.P, t, r))
        q = y[:N]
        key = q.tobytes()
        last = self._last
        if last is not None and last.t == t and last.key == key:
            return last
        self.nevals += 1
        config = _Configuration(*fast(t, q), t=t, key=key)
        if remember:
            self._last = config
        return config

    def matrices(self, t: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(∂f_h/∂q (M, N), B (m, o)) at (t, q = y[:N])."""
        config = self.configuration(t, y)
        return config.J, config.B

    @staticmethod
    def columns(part: Partition) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return part.dependent_coordinates, part.dependent_speeds

    def gauge(self, t: float, y: np.ndarray, part: Partition) -> Gauge:
        signs, dets, ratio = [], [], 1.0
        config = self.configuration(t, y)
        J, B = config.J, config.B
        D_q, D_u = self.columns(part)
        # B equal to ∂f_h/∂q with the same dependent columns (the velocity constraints are
        # the holonomic ones differentiated, q' = u): the same numbers twice, computed once
        same = D_q == D_u and config.same
        # (the columns as index arrays: numpy takes them faster than tuples)
        for k, (A, D) in enumerate(((J, part.q_dep_index), (B, part.u_dep_index))):
            if A.shape[0] == 0:
                signs.append(1.0)
                dets.append(1.0)
                continue
            if k == 1 and same:
                signs.append(signs[0])
                dets.append(dets[0])
                continue
            det = determinant(A[:, D])
            signs.append(float(np.sign(det)))
            dets.append(det)
            if not self.switch:
                continue
            if det == 0.0 or not math.isfinite(det):
                ratio = 0.0
                continue
            # cheap lower bound first: |det A_best| <= sqrt(det(A A^T)) (Cauchy-Binet)
            gram = determinant(A @ A.T)
            if gram > 0 and abs(det) >= self.threshold * math.sqrt(gram):
                continue
            best = config.pivoted(k)[0]
            det_b = determinant(A[:, best])
            if det_b != 0.0 and math.isfinite(det_b):
                ratio = min(ratio, abs(det) / abs(det_b))
        return Gauge((signs[0], signs[1]), min(ratio, 1.0), (dets[0], dets[1]))

    def det(self, t: float, y: np.ndarray, part: Partition, which: int) -> float:
        A = self.matrices(t, y)[which]
        return determinant(A[:, part.u_dep_index if which else part.q_dep_index])

    def rank(self, t: float, y: np.ndarray, remember: bool = True) -> float:
        """The smaller rank measure |R_kk| / |R_11| of ∂f_h/∂q and B at the state y (any
        layout: only q = y[:N] is read): 0 where either loses rank, by magnitude, whatever
        the number of singular values that vanish.  ``remember``: see :meth:`configuration`
        (False for states no other check reads, such as the points inside a step)."""
        if not remember and self._native is not None:
            value = self._native.rank(t, y[:self.model.N])
            if value >= 0.0:
                return value
        config = self.configuration(t, y, remember)
        value = config.pivoted(0)[1] if config.J.shape[0] else 1.0
        if config.B.shape[0] and value > 0.0 and not config.same:
            # (B equals ∂f_h/∂q when the velocity constraints are the holonomic ones
            # differentiated and q' = u: one factorization then serves both)
            value = min(value, config.pivoted(1)[1])
        return value

    def rank_measure(self, t: float, y: np.ndarray, which: int) -> float:
        """|R_kk| / |R_11| of the pivoted QR of the constraint matrix (0: rank lost)."""
        return rank_measure(self.matrices(t, y)[which])

    # -- decisions
    def event(self, dense: Callable[[float], np.ndarray], part: Partition, t_a: float, g_a: Gauge, t_b: float, y_b: np.ndarray,
              g_b: Gauge) -> SetEvent | None:
        """What happened on the step t_a -> t_b (``dense(t)`` interpolates it), if anything."""
        flips = [k for k in (0, 1) if g_a.signs[k] * g_b.signs[k] < 0]
        if flips:
            # the active dependent columns passed through a singular matrix: where?
            roots = []
            for k in flips:
                f = lambda t, k=k: self.det(t, dense(t), part, k)  # noqa: E731
                roots.append((locate_root(f, t_a, t_b), k))
            t_c, k = min(roots, key=lambda tk: abs(tk[0] - t_a))
            if not self.switch:
                return SetEvent("singular", t_c, k)
            y_c = dense(t_c)
            if self.rank_measure(t_c, y_c, k) < self.rank_tol:
                return SetEvent("rank", t_c, k)
            # a step too long to see the ratio fall: back to its start, and on in the set that
            # is best at the crossing (where the active one is singular)
            new = self.model.choose_partition(y_c[:self.model.N], self.P, t_c)
            return SetEvent("switch", t_a, k, new)
        if self.switch and g_b.ratio < self.threshold <= g_a.ratio:
            g = lambda t: self.gauge(t, dense(t), part).ratio - self.threshold  # noqa: E731
            return SetEvent("switch", locate_root(g, t_a, t_b))
        return None

    # -- for steppers that locate roots themselves (IDA)
    def watch(self, t0: float, y0: np.ndarray, part: Partition) -> Callable[[float, np.ndarray], np.ndarray]:
        """Event functions g(t, y) -> (4,) for a stepper with its own root finding: the ratio
        minus the threshold (falling through 0: switch), det A[:, D] of ∂f_h/∂q and of B,
        scaled by their values at (t0, y0) (through 0: the active set became singular), and
        the rank measure minus ``rank_floor`` (falling through 0: the whole Jacobian is about
        to lose rank, by any number of singular values; 1 when ``rank_floor`` is None)."""
        scale = [abs(d) if d != 0 and np.isfinite(d) else 1.0 for d in self.gauge(t0, y0, part).dets]
        floor = self.rank_floor

        def values(t: float, y: np.ndarray) -> np.ndarray:
            g = self.gauge(t, y, part)
            return np.array([g.ratio - self.threshold if self.switch else 1.0,
                             g.dets[0] / scale[0], g.dets[1] / scale[1],
                             1.0 if floor is None else self.rank(t, y) - floor])

        return values

    def root_event(self, part: Partition, fired: Sequence[int], t_a: float, t_b: float,
                   y_b: np.ndarray) -> SetEvent | None:
        """The event at a root of :meth:`watch`'s functions located by the stepper at t_b
        (``fired``: their indices); t_a: the last state known in the active set."""
        new = self.model.choose_partition(y_b[:self.model.N], self.P, t_b)
        dets = [k - 1 for k in fired if k in (1, 2)]
        if dets:
            # the active set became singular before the ratio event
            which = min(dets)
            if not self.switch:
                return SetEvent("singular", t_b, which)
            if self.rank_measure(t_b, y_b, which) < self.rank_tol or new == part:
                return SetEvent("rank", t_b, which)
            return SetEvent("switch", t_a, which, new)     # back to t_a, on in the new set
        return SetEvent("switch", t_b, 0, new) if new != part else None

    def message(self, event: SetEvent, t: float, y: np.ndarray, part: Partition) -> str:
        """The stop message for a "singular" or "rank" event at (t, y)."""
        model = self.model
        q = ", ".join(f"{_short(s)} = {v:.6g}" for s, v in zip(model.coordinates, y[:model.N]))
        if event.kind == "rank":
            what = ("the holonomic constraint Jacobian ∂f_h/∂q" if event.which == 0 else
                    "the velocity constraint matrix B")
            return (f"singular configuration at t = {t:.6g}: {what} loses rank at q = ({q}), so no "
                    "choice of dependent coordinates and speeds is regular there (a bifurcation or "
                    "change point of the mechanism, where the motion can continue on more than one "
                    "branch); the integration stops here")
        if event.which == 0:
            cols = ", ".join(_short(model.coordinates[i]) for i in part.dependent_coordinates)
            what = f"∂f_h/∂({cols}), the holonomic constraint Jacobian in the dependent coordinates,"
        else:
            cols = ", ".join(_short(model.speeds[i]) for i in part.dependent_speeds)
            what = f"B[:, ({cols})], the velocity constraint matrix in the dependent speeds,"
        if model.partition_switchable and self.switch:
            why = "no better-conditioned choice of dependent coordinates and speeds was found there"
        elif model.partition_switchable:
            why = "switching the dependent set is disabled (switch_threshold=0)"
        elif model.dynamic_reduced:
            why = ("the dependent set cannot be switched because the dynamic equations are in reduced "
                   "form, written for the independent speeds "
                   + ", ".join(_short(s) for s in model.independent_speeds))
        elif model.m == 0:
            why = ("the dependent set cannot be switched because the equations of motion have no "
                   "dependent speeds (the constraints were eliminated symbolically for this choice of "
                   "dependent coordinates)")
        else:
            why = "the dependent set cannot be switched because B depends on the specified inputs"
        return (f"singular configuration at t = {t:.6g}: {what} is singular at q = ({q}); {why}. "
                "Form the equations unreduced (dependent speeds with velocity constraints) to integrate "
                "through it, or choose other dependent coordinates")


class _Configuration:
    """The constraint matrices J = ∂f_h/∂q (M, N) and B (m, o) at one configuration (t, q)
    (``key``: q's bytes), whether they are equal, and their pivoted QR (computed on first
    use: :func:`~symbody.compilation.linear_algebra.pivoted_qr`, the numbers of
    ``pivoted_columns``)."""

    __slots__ = ("J", "B", "t", "key", "_same", "_pivoted")

    def __init__(self, J: np.ndarray, B: np.ndarray, t: float | None = None,
                 key: bytes | None = None) -> None:
        self.J, self.B, self.t, self.key = J, B, t, key
        self._same: bool | None = None
        self._pivoted: list = [None, None]

    @property
    def same(self) -> bool:
        """B has J's shape and entries (np.array_equal).  Equal bytes count as equal even
        with a NaN entry (where np.array_equal says not): every use then computes the same
        numbers from B as from J, so the outcome is the same either way."""
        if self._same is None:
            J, B = self.J, self.B
            self._same = J.shape == B.shape and (J.tobytes() == B.tobytes() or np.array_equal(B, J))
        return self._same

    def pivoted(self, which: int) -> tuple[tuple[int, ...], float]:
        """``pivoted_columns`` of J (``which`` 0) or B (1): (best columns, rank measure)."""
        if which == 1 and self.same:
            which = 0
        hit = self._pivoted[which]
        if hit is None:
            hit = self._pivoted[which] = pivoted_qr(self.B if which else self.J)
        return hit


def locate_root(f: Callable[[float], float], a: float, b: float) -> float:
    """A sign change of f in [a, b] (brentq); b when f does not change sign."""
    fa, fb = f(a), f(b)
    if fa == 0.0:
        return a
    if not (np.isfinite(fa) and np.isfinite(fb)) or fa * fb > 0:
        return b
    # (disp=False: a function that is noisy at round-off near its root, a determinant next to a
    # rank loss, may keep Brent from meeting xtol; its last bracket is then good enough)
    root, _ = brentq(f, a, b, xtol=1e-12 * max(1.0, abs(a), abs(b)), rtol=4e-15, maxiter=100,
                     full_output=True, disp=False)
    return float(root)


def remap(model: NumericModel, t: float, y: np.ndarray, P: np.ndarray, old: Partition,
           new: Partition) -> np.ndarray:
    """The state y (layout of ``old``) in the layout of ``new``: q unchanged, the new
    independent speeds taken from all speeds (the dependent ones solved in ``old``)."""
    N = model.N
    width = len(old.independent_speeds)      # o in full coordinates, p otherwise
    if not old.dependent_speeds:             # full coordinates: all speeds are in y
        u = y[N:N + width]
    else:
        r = np.zeros(len(model.specifieds)) if model.specifieds else None
        try:
            u = model.full_speeds(y[:N], y[N:N + width], P, t, r, partition=old)
        except SymbodyError as exc:
            raise StopIntegration(-3, f"switching the dependent set at t = {t:.6g}: {exc}") from exc
    # the extra states (after the speeds) do not depend on the dependent set
    return np.concatenate([y[:N], u[list(new.independent_speeds)], y[N + width:]])


def near_singular_note(monitor: DependentSetMonitor, samples: Any, at: tuple | None, part: Partition, status: int,
                        message: str) -> tuple[int, str]:
    """A failure next to a singular dependent set is reported as that (status -3, the
    message naming the matrix and the configuration)."""
    if at is not None:
        t, y = at
    elif samples.T:
        t, y, part = samples.T[-1], samples.Y[-1], samples.partitions[samples.pid[-1]]
    else:
        return status, message
    try:
        mats = monitor.matrices(t, np.asarray(y, dtype=float))
    except Exception:        # pragma: no cover - diagnostics only
        return status, message
    for k, (A, D) in enumerate(zip(mats, monitor.columns(part))):
        if A.shape[0] == 0 or not np.isfinite(A).all():
            continue
        if monitor.rank_measure(t, np.asarray(y, dtype=float), k) < monitor.rank_tol:
            # the whole Jacobian loses rank here (a change point): no dependent set is regular
            note = monitor.message(SetEvent("rank", t, k), t, np.asarray(y), part)
            return -3, f"{message.rstrip('.')}; this is next to a {note}"
        det_b = determinant(A[:, pivoted_columns(A)[0]])
        if det_b != 0.0 and abs(determinant(A[:, D])) < NEAR_SINGULAR * abs(det_b):
            note = monitor.message(SetEvent("singular", t, k), t, np.asarray(y), part)
            return -3, f"{message.rstrip('.')}; this is next to a {note}"
    return status, message


def switch_note(samples: Any, message: str) -> str:
    """The message with the switches of the dependent set and the spans integrated in full
    coordinates (a change with no dependent coordinates or speeds starts such a span)."""
    if not samples.changes:
        return message
    full = [c.t for c in samples.changes if not c.dependent_coordinates and not c.dependent_speeds]
    n = len(samples.changes) - len(full)
    notes = []
    if full:
        times = ", ".join(f"{t:.4g}" for t in full[:6]) + (", ..." if len(full) > 6 else "")
        notes.append(f"{len(full)} span{'s' if len(full) > 1 else ''} in full coordinates where the "
                     f"constraint Jacobian loses rank, from t = {times} (augmented Lagrangian with "
                     "mass-orthogonal projections)")
    if n:
        notes.append(f"{n} switch{'es' if n > 1 else ''} of the dependent set")
    return f"{message} ({'; '.join(notes)}: trajectory.partition_changes)"


