"""Partitions: which coordinates and speeds of a numeric model are dependent.

Which coordinates and speeds are dependent is a numerical choice, not part of the physics:
a :class:`Partition` names them by index, and ``rhs``, ``full_speeds``, ``accelerations``
and ``project_coordinates`` of a :class:`~symbody.NumericModel` accept one (the state is
then ``[q (N, model order), u at partition.independent_speeds]``).  With the unreduced
dynamic block the augmented system gives u' for all speeds without a partition, so any
partition whose ``B[:, dependent_speeds]`` is regular works; :func:`choose_partition`
picks the best conditioned one by column-pivoted QR of ∂f_h/∂q and of B.  A reduced
(hand-derived) dynamic block is written for the eom's own partition only.

The functions take the model as their first argument (``model.choose_partition(...)``
calls :func:`choose_partition`) and use only its public evaluation interface.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError
from .kernel_layout import CompiledModel
from .linear_algebra import pivoted_columns
from .named_values import InputValues, ParameterValues

__all__ = ["Partition", "check_partition", "choose_partition", "constraint_matrices",
           "constraint_matrices_function",
           "partition_names", "rhs_in_partition"]


@dataclass(frozen=True)
class Partition:
    """Which coordinates and speeds are dependent: indices into ``model.coordinates``
    (``dependent_coordinates``, M of them) and ``model.speeds`` (``dependent_speeds``,
    m), ascending; ``N``, ``o`` are the numbers of coordinates and speeds.

    The ODE state of a partition is ``y = [q (all N, model order), u[independent_speeds]]``.
    ``q_dep_index``, ``q_ind_index`` (M,), (N - M,) and ``u_dep_index``, ``u_ind_index``
    (m,), (o - m,) are the same indices as integer arrays (for fancy indexing).
    """

    dependent_coordinates: tuple[int, ...]
    dependent_speeds: tuple[int, ...]
    N: int
    o: int
    q_dep_index: np.ndarray = field(init=False, repr=False, compare=False)
    q_ind_index: np.ndarray = field(init=False, repr=False, compare=False)
    u_dep_index: np.ndarray = field(init=False, repr=False, compare=False)
    u_ind_index: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        qd = tuple(sorted(int(i) for i in self.dependent_coordinates))
        ud = tuple(sorted(int(i) for i in self.dependent_speeds))
        if len(set(qd)) != len(qd) or any(not 0 <= i < self.N for i in qd):
            raise InputError(f"dependent coordinate indices {qd} are not distinct indices below {self.N}")
        if len(set(ud)) != len(ud) or any(not 0 <= i < self.o for i in ud):
            raise InputError(f"dependent speed indices {ud} are not distinct indices below {self.o}")
        object.__setattr__(self, "dependent_coordinates", qd)
        object.__setattr__(self, "dependent_speeds", ud)
        object.__setattr__(self, "q_dep_index", np.array(qd, dtype=np.intp))
        object.__setattr__(self, "q_ind_index",
                           np.array([i for i in range(self.N) if i not in qd], dtype=np.intp))
        object.__setattr__(self, "u_dep_index", np.array(ud, dtype=np.intp))
        object.__setattr__(self, "u_ind_index",
                           np.array([i for i in range(self.o) if i not in ud], dtype=np.intp))

    @property
    def independent_coordinates(self) -> tuple[int, ...]:
        return tuple(int(i) for i in self.q_ind_index)

    @property
    def independent_speeds(self) -> tuple[int, ...]:
        return tuple(int(i) for i in self.u_ind_index)


def check_partition(model: CompiledModel, partition: Partition) -> None:
    """Raise InputError unless ``partition`` fits ``model`` and its dependent speeds can be used."""
    L = model.layout
    if (partition.N, partition.o) != (L.N, L.o) or len(partition.dependent_coordinates) != L.M \
            or len(partition.dependent_speeds) != L.m:
        raise InputError(f"{partition} does not fit this model (N = {L.N}, o = {L.o}, "
                         f"M = {L.M}, m = {L.m})")
    if partition.dependent_speeds != model.default_partition.dependent_speeds \
            and not L.partition_switchable:
        why = ("the dynamic equations are in reduced form, written for the independent speeds "
               f"{', '.join(map(str, model.independent_speeds))}" if L.dynamic_reduced else
               "the velocity constraints depend on the specified inputs")
        raise InputError(f"this model cannot use the dependent speeds "
                         f"{', '.join(str(model.speeds[i]) for i in partition.dependent_speeds)}: {why}")


def constraint_matrices(model: CompiledModel, q: ArrayLike, p: ParameterValues, t: float = 0.0,
                        r: InputValues = None) -> tuple[np.ndarray, np.ndarray]:
    """(∂f_h/∂q (M, N), B (m, o)) at the configuration q: the matrices whose columns a
    :class:`Partition` splits into independent and dependent ones."""
    L, kernels = model.layout, model.kernels
    z = model.arguments(t, q, None, p, r, need_r=L.velocity_constraints_use_specifieds)

    def matrix(name: str, part: slice, rows: int, cols: int) -> np.ndarray:
        if not rows:
            return np.empty((0, cols))
        kernel = getattr(kernels, name)
        out = np.empty(kernel.nout)
        kernel.into(z, out)
        return out[part].reshape(rows, cols)

    return (matrix("holonomic", L.holonomic_J, L.M, L.N),
            matrix("velocity", L.velocity_B, L.m, L.o))


def constraint_matrices_function(model: CompiledModel, p: ParameterValues
                                 ) -> Callable[[float, np.ndarray], tuple[np.ndarray, np.ndarray]] | None:
    """``f(t, q) -> (∂f_h/∂q (M, N), B (m, o))``: :func:`constraint_matrices` with the
    constants ``p`` bound, for the simulation's per-step checks.

    The same kernels on the same argument vector as ``constraint_matrices(model, q, p, t)``
    (z filled once by ``model.arguments``; each call writes only t and q into it, and the
    kernels write into buffers of their own), so the matrices are the same to the last bit;
    each call returns new arrays.  None when B depends on the specified inputs (then
    ``constraint_matrices`` takes their values).  One function per integration: not to be
    shared by threads.
    """
    L, kernels = model.layout, model.kernels
    if L.velocity_constraints_use_specifieds:
        return None
    M, N, m, o = L.M, L.N, L.m, L.o
    z = model.arguments(0.0, np.zeros(N), None, p, None, need_r=False)
    zq = L.z_q
    hol = vel = None
    if M:
        hol, hout = kernels.holonomic.into, np.empty(kernels.holonomic.nout)
        hpart = L.holonomic_J
    if m:
        vel, vout = kernels.velocity.into, np.empty(kernels.velocity.nout)
        vpart = L.velocity_B

    def matrices(t: float, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        z[0] = t
        z[zq] = q
        if hol is not None:
            hol(z, hout)
            J = hout[hpart].reshape(M, N).copy()
        else:
            J = np.empty((0, N))
        if vel is not None:
            vel(z, vout)
            B = vout[vpart].reshape(m, o).copy()
        else:
            B = np.empty((0, o))
        return J, B

    return matrices


def choose_partition(model: CompiledModel, q: ArrayLike, p: ParameterValues, t: float = 0.0,
                     r: InputValues = None) -> Partition:
    """The best conditioned dependent set at q (a :class:`Partition`).

    Column-pivoted QR of ∂f_h/∂q (M x N) picks the M dependent coordinates and of
    B (m x o) the m dependent speeds (greedily maximizing ``|det|`` of the dependent
    columns).  A model that is not ``partition_switchable`` keeps its dependent speeds.
    """
    J, B = constraint_matrices(model, q, p, t, r)
    qdep = pivoted_columns(J)[0]
    udep = (pivoted_columns(B)[0] if model.layout.partition_switchable
            else model.default_partition.dependent_speeds)
    return Partition(qdep, udep, model.layout.N, model.layout.o)


def partition_names(model: CompiledModel, partition: Partition) -> tuple[tuple, tuple]:
    """(dependent coordinates, dependent speeds) of ``partition`` as symbols."""
    return (tuple(model.coordinates[i] for i in partition.dependent_coordinates),
            tuple(model.speeds[i] for i in partition.dependent_speeds))


def rhs_in_partition(model: CompiledModel, t: float, x: ArrayLike, p: ParameterValues,
                     r: InputValues, partition: Partition) -> np.ndarray:
    """x' (N + p + e,) in the layout of ``partition``: x = [q, u[partition.independent_speeds],
    x_e] (``model.rhs(..., partition=partition)``)."""
    check_partition(model, partition)
    L = model.layout
    N = L.N
    x = np.asarray(x, dtype=float)
    if x.shape != (L.nx,):
        raise InputError(f"the state has {L.nx} values, got shape {x.shape}")
    z = np.zeros(L.nz)
    z[0] = t
    z[1:1 + N] = x[:N]
    z[L.ic:L.iudot] = model.constants_array(p)
    z[L.iu + partition.u_ind_index] = x[N:L.nxm]
    if L.e:
        z[L.ixe:] = x[L.nxm:]
    model.solve_dependent_speeds(z, partition)
    if L.s:
        xm = np.concatenate([x[:N], z[L.iu:L.iud], x[L.nxm:]]) if callable(r) else None
        z[L.ir:L.ic] = model.specifieds_array(r, t, xm)
    return model.rhs_at(z, states=partition.u_ind_index)
