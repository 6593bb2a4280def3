"""The samples a simulation takes, and the Trajectory built from them.

Samples are kept in the layout of the partition (dependent set) active when each was
taken; :func:`build_trajectory` maps them back to the model's layout [q, u_ind], adds
all speeds, the constraint residuals and the multipliers (batch evaluation), and returns
the :class:`~symbody.analysis.trajectory.Trajectory`.
"""

from __future__ import annotations

import numpy as np

from ...compilation import NumericModel
from ...compilation.native_full import native_full_rhs
from ...compilation.numeric_model import Partition, SampleValues
from ...errors import SymbodyError
from ...formatting import symbol_name as _short
from ..dense_output import ConstraintProjection, StepInterpolant, StepRecorder
from ..trajectory import ModelInfo, PartitionChange, RunReport, SampleArrays, Trajectory
from .augmented import PENALTY, augmented_solve, is_full
from .strategy import Run

__all__ = ["Samples", "build_trajectory"]


class Samples:
    """Output samples in the layout of the partition active when each was taken."""

    def __init__(self, model: NumericModel, part: Partition):
        self.model = model
        self.T: list[float] = []
        self.Y: list[np.ndarray] = []
        self.pid: list[int] = []
        self.partitions: list[Partition] = [part]
        self.changes: list[PartitionChange] = []

    @property
    def part(self) -> Partition:
        return self.partitions[-1]

    def add(self, t: float, y: np.ndarray) -> None:
        self.T.append(float(t))
        self.Y.append(np.array(y, dtype=float))
        self.pid.append(len(self.partitions) - 1)

    def add_many(self, times: np.ndarray, Y: np.ndarray, pid: int | None = None) -> None:
        """Samples at ``times`` (k,), the rows of Y (k, n) (kept: not to be changed after),
        taken in the layout ``partitions[pid]`` (default: the current one)."""
        self.T.extend(map(float, times))
        self.Y.extend(np.asarray(Y, dtype=float))
        self.pid.extend([len(self.partitions) - 1 if pid is None else pid] * len(times))

    def switch(self, t: float, new: Partition) -> None:
        self.partitions.append(new)
        qd, ud = self.model.partition_names(new)
        self.changes.append(PartitionChange(float(t), tuple(map(_short, qd)), tuple(map(_short, ud))))

    @property
    def last_t(self) -> float | None:
        return self.T[-1] if self.T else None



def build_trajectory(run: Run, samples: Samples, report: RunReport,
                     steps: StepRecorder | None = None, positions: bool = False) -> Trajectory:
    """The Trajectory of ``samples``: the state in the model's layout (samples taken in other
    dependent sets mapped back), the speeds, residuals and multipliers evaluated at the
    samples, ``report`` (how the run went) and, with ``steps``, the integrator's step
    interpolant (``positions``: the mode projects positions, as the trajectory's own
    projection then does)."""
    model, P, r_fun = run.model, run.constants, run.specifieds
    k = len(samples.T)
    T = np.array(samples.T, dtype=float)
    widths = {len(y) for y in samples.Y}
    Y = np.array(samples.Y) if k and len(widths) == 1 else None
    if not k:
        Y = np.empty((0, len(model.states)))
    U = None
    if k and any(samples.partitions[i] != model.default_partition for i in set(samples.pid)):
        # samples taken in other dependent sets: all speeds from each sample's own set, then
        # the state in the model's layout [q, u_ind]
        U = np.full((k, model.o), np.nan)
        pid = np.array(samples.pid)
        r0 = np.zeros(len(model.specifieds)) if model.specifieds else None
        for j in set(samples.pid):
            rows = np.nonzero(pid == j)[0]
            if not samples.partitions[j].dependent_speeds:
                # full coordinates: the samples hold all speeds
                U[rows] = np.array([samples.Y[i][model.N:model.N + model.o] for i in rows])
                continue
            for chunk in (rows,) + tuple(rows[i:i + 1] for i in range(len(rows))):
                try:
                    Yc = np.array([samples.Y[i] for i in chunk])
                    U[chunk] = model.speeds_many(T[chunk], Yc, P, r0, partition=samples.partitions[j])
                except SymbodyError:
                    continue
                if len(chunk) == len(rows):
                    break
        # (the extra states, after q and the independent speeds, keep their place)
        # (samples of different widths: full coordinates hold all speeds)
        E = np.array([y[len(y) - model.e:] for y in samples.Y]) if model.e else np.empty((k, 0))
        X = np.concatenate([np.array([y[:model.N] for y in samples.Y]), U[:, :model.p], E], axis=1)
    else:
        X = Y
    # samples in full coordinates get their multipliers from the augmented Lagrangian
    # iteration below (_full_span_multipliers), the others from the batch solve
    full = {j: is_full(model, part) for j, part in enumerate(samples.partitions)}
    in_full = np.array([full[j] for j in samples.pid], dtype=bool)
    if k:
        if r_fun is None:
            R = None
        else:
            R = np.array([np.asarray(r_fun(T[i], X[i]), dtype=float).ravel() for i in range(k)])
        try:
            post = model.evaluate_samples(T, X, P, R, speeds=U,
                                          multipliers=~in_full if in_full.any() else True)
        except SymbodyError:
            post = _evaluate_rowwise(model, T, X, P, R, U)
    else:
        R = None
        post = SampleValues(np.empty((0, model.o)), np.empty((0, model.M)), np.empty((0, model.m)), None)
    if k and post.multipliers is not None and in_full.any():
        _full_span_multipliers(model, np.flatnonzero(in_full), T, X, U, P, R, post.multipliers)
    traj = Trajectory(
        SampleArrays(t=T, x=X, q=X[:, :model.N], u=post.speeds, holonomic_residuals=post.holonomic,
                     velocity_residuals=post.velocity, multipliers=post.multipliers,
                     specified_values=R if R is not None and len(model.specifieds) else None,
                     steps=None if steps is None else step_interpolant(
                         model, P, steps, samples.partitions, positions)),
        ModelInfo(coordinates=model.coordinates, speeds=model.speeds, states=model.states,
                  specifieds=model.specifieds,
                  constants=dict(zip(model.constants, (float(v) for v in P)))),
        report)
    if model.M or model.m:
        traj.projection = ConstraintProjection(model, P, positions=positions)
    return traj


def step_interpolant(model: NumericModel, P: np.ndarray, steps: StepRecorder,
                     partitions: list[Partition], positions: bool = False) -> StepInterpolant:
    """The recorded steps as full states [q, u (all o speeds), x_e] in model order: the
    dependent speeds of each node solved in the dependent set its step ran in (nodes where
    that fails: NaN)."""
    N, o, e = model.N, model.o, model.e
    t, pid, Y, widths = steps.arrays()
    S, k = len(pid), steps.k
    W = np.full((S, k, N + o + e), np.nan)
    times = t[:, :1] + (t[:, 1:] - t[:, :1]) * steps.s[None, :]
    r0 = np.zeros(len(model.specifieds)) if model.specifieds else None
    for j in np.unique(pid):
        part = partitions[j]
        rows = np.flatnonzero(pid == j)
        n = int(widths[rows[0]])
        Yj = Y[rows, :, :n].reshape(-1, n)
        if not part.dependent_speeds:        # full coordinates (or no velocity constraints)
            W[rows] = Yj.reshape(len(rows), k, n)
            continue
        Tj = times[rows].ravel()
        U = np.full((len(Tj), o), np.nan)
        try:
            U = model.speeds_many(Tj, Yj, P, r0, partition=part)
        except SymbodyError:
            for i in range(len(Tj)):
                try:
                    U[i] = model.speeds_many(Tj[i:i + 1], Yj[i:i + 1], P, r0, partition=part)[0]
                except SymbodyError:
                    continue
        full = np.concatenate([Yj[:, :N], U, Yj[:, n - e:] if e else np.empty((len(Tj), 0))], axis=1)
        W[rows] = full.reshape(len(rows), k, N + o + e)
    return StepInterpolant(t[:, 0].copy(), t[:, 1].copy(), W, pid.copy(),
                           tuple((p.dependent_coordinates, p.dependent_speeds) for p in partitions),
                           positions=positions)


def _full_span_multipliers(model: NumericModel, rows: np.ndarray, T, X, U, P, R, L) -> None:
    """λ (in place) at the samples ``rows`` taken in full coordinates: from the augmented
    Lagrangian iteration started at λ = 0, which keeps λ in the range of B_a, so it is the
    minimum-norm multiplier vector where B_a loses rank (where the split of the constraint
    forces is not unique)."""
    # the compiled evaluation (native_full; also from λ = 0) when the model has it
    native = native_full_rhs(model, P, penalty=PENALTY) if R is None and not model.e else None
    for i in rows:
        u = U[i] if U is not None else None
        if u is None or not np.isfinite(u).all():
            continue
        if native is not None:
            status = native(T[i], np.concatenate([X[i, :model.N], u]))[1]
            if status == 0:
                L[i] = native.multipliers
                continue
        try:
            blk = model.augmented_blocks(T[i], X[i, :model.N], u, P, None if R is None else R[i],
                                         X[i, model.N + model.p:] if model.e else None)
        except SymbodyError:
            continue
        L[i] = augmented_solve(blk.mass, blk.forcing, blk.acc_matrix, blk.acc_rest)[1]


def _evaluate_rowwise(model: NumericModel, T, X, P, R, U=None) -> SampleValues:
    """Post-processing one sample at a time (a singular sample gets NaN)."""
    k = len(T)
    Uo = np.full((k, model.o), np.nan)
    H = np.full((k, model.M), np.nan)
    V = np.full((k, model.m), np.nan)
    L = np.full((k, model.m), np.nan) if model.has_multipliers else None
    for i in range(k):
        if U is not None and not np.isfinite(U[i]).all():
            continue
        try:
            post = model.evaluate_samples(T[i:i + 1], X[i:i + 1], P, None if R is None else R[i:i + 1],
                                          speeds=None if U is None else U[i:i + 1])
        except SymbodyError:
            continue
        Uo[i], H[i], V[i] = post.speeds[0], post.holonomic[0], post.velocity[0]
        if L is not None and post.multipliers is not None:
            L[i] = post.multipliers[0]
    return SampleValues(Uo, H, V, L)
