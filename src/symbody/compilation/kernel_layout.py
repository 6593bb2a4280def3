"""The kernel layout: where every number sits in a compiled model's kernels.

A :class:`~symbody.NumericModel` evaluates its equations with a few compiled kernels
``kernel(z, out)`` that share one flat argument vector ``z`` and write flat outputs.
:class:`KernelLayout` is the one description of those vectors: the counts, the offsets of
each group inside ``z``, the slices of each kernel's output and the flags that say which
solve the right-hand side takes.  It is frozen and holds only integers, slices and
booleans, so it can be saved, pickled and handed to compiled code as it is.

Who reads it: the numeric model's evaluation (``model.layout``), the batch, projection and
partition helpers of this package, the right-hand side in C (:mod:`.native_rhs`, whose
plan struct is filled from it) and the saved-file format (:mod:`.persistence`, which
stores its fields).  :class:`ModelKernels` holds the kernels, :class:`ModelSymbols` the
names of the numbers, and :class:`CompiledParts` the three together: everything a
NumericModel is made of besides its optional SymPy equations.  :class:`CompiledModel` is
the interface of a NumericModel that the helper modules (partitions, projection, batch
evaluation, multipliers, the fast and the native right-hand side) are written against, so
that they depend on this module and not on the class that calls them.

The argument vector (length ``nz``)::

    z = [t, q (N), u (o), r (s), constants (c), u' (o), x_e (e)]
         0  iq     iu     ir     ic              iudot   ixe

with ``q = [q_ind (n), q_dep (M)]``, ``u = [u_ind (p), u_dep (m)]`` (so ``iud = iu + p``
is where the dependent speeds start) and the ODE state ``x = [q, u_ind, x_e]`` (``nx``
values; its mechanical part ``[q, u_ind]`` has ``nxm = N + p`` and sits contiguously at
``z[1:1 + nxm]``).

The kernels' outputs (flat float64 arrays; matrices row by row unless said otherwise):

* main (``N + K + K*K``): ``[q' (N), s (K), S (K*K, column by column)]`` at
  ``main_qdot``, ``main_rhs`` and ``main_system``; ``S y = s`` is the system solved for
  u': the augmented ``[[M_d, -B_a^T], [B_a, 0]] [u'; λ] = [-g_d; -b_a]`` (``K = o + m``)
  or ``M_d u' = -g_d`` (``K`` = rows of the dynamic block, ``M_d`` row by row, which is
  the same numbers when it is symmetric);
* velocity (m > 0): ``[B (m*o), b (m), B_dep (m*m, column by column), -(B_ind u_ind + b) (m)]``
  at ``velocity_B``, ``velocity_b``, ``velocity_Bdep``, ``velocity_rest``;
* holonomic (M > 0): ``[f_h (M), ∂f_h/∂q (M*N)]`` at ``holonomic_f``, ``holonomic_J``;
* acceleration (reduced dynamics with m > 0): ``[B_a (m*o), b_a (m)]``;
* extra (e > 0): ``x_e' (e)``;
* auxiliary (``naux`` rows, ``nnc`` noncontributing forces): ``[A_nc (naux*nnc), rest (naux)]``;
* forward (tree forward dynamics, when the formulation gives a recursion for u'):
  ``[q' (N), u' (o)]``, the solution of the dynamic block and the acceleration constraints
  written out, so that ``[q', u_ind']`` is its first ``nxm`` numbers (no linear solve);
  ``forward_many`` the same kernel with its ``many`` over SIMD lanes (:mod:`.c_lanes`),
  built in the background after the forward kernel (the batch paths use it once built).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Protocol

import numpy as np

from ..errors import InputError

__all__ = ["KernelLayout", "ModelKernels", "ModelSymbols", "CompiledParts", "CompiledModel"]


@dataclass(frozen=True)
class KernelLayout:
    """Counts, argument-vector offsets, output slices and flags of a compiled model.

    Given (stored): the counts ``n`` (independent coordinates), ``M`` (dependent
    coordinates), ``p`` (independent speeds), ``m`` (dependent speeds), ``e`` (extra
    states), ``s`` (specified inputs), ``c`` (constants), ``K`` (size of the system
    ``S y = s`` solved for u'), ``naux`` (auxiliary equations) and ``nnc`` (noncontributing
    forces); the main kernel's output slices ``main_rhs`` (s) and ``main_system`` (S); and
    the flags ``dynamic_reduced`` (the dynamic block has p rows, for u_ind' only),
    ``augmented`` (u' and λ from the augmented system), ``mass_symmetric`` (M_d symmetric:
    Cholesky first), ``kinematics_use_specifieds`` (q', B or b depend on r) and
    ``velocity_constraints_use_specifieds`` (B or b depend on r).

    Derived (from those, in ``__post_init__``): ``N = n + M``, ``o = p + m``, the offsets
    ``iq, iu, iud, ir, ic, iudot, ixe`` and length ``nz`` of z (see the module docstring),
    ``nxm = N + p`` and ``nx = N + p + e`` (ODE state), the slices ``main_qdot``,
    ``velocity_B, velocity_b, velocity_Bdep, velocity_rest``, ``holonomic_f, holonomic_J``,
    and ``partition_switchable`` (the dependent speeds can be chosen freely: augmented
    and B does not depend on r).
    """

    n: int
    M: int
    p: int
    m: int
    e: int
    s: int
    c: int
    K: int
    naux: int
    nnc: int
    main_rhs: slice
    main_system: slice
    dynamic_reduced: bool
    augmented: bool
    mass_symmetric: bool
    kinematics_use_specifieds: bool
    velocity_constraints_use_specifieds: bool

    N: int = field(init=False)
    o: int = field(init=False)
    iq: int = field(init=False)
    iu: int = field(init=False)
    iud: int = field(init=False)
    ir: int = field(init=False)
    ic: int = field(init=False)
    iudot: int = field(init=False)
    ixe: int = field(init=False)
    nz: int = field(init=False)
    nxm: int = field(init=False)
    nx: int = field(init=False)
    main_qdot: slice = field(init=False)
    velocity_B: slice = field(init=False)
    velocity_b: slice = field(init=False)
    velocity_Bdep: slice = field(init=False)
    velocity_rest: slice = field(init=False)
    holonomic_f: slice = field(init=False)
    holonomic_J: slice = field(init=False)
    partition_switchable: bool = field(init=False)

    def __post_init__(self) -> None:
        for name in ("n", "M", "p", "m", "e", "s", "c", "K", "naux", "nnc"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InputError(f"KernelLayout.{name} must be a non-negative int, got {value!r}")
        for name in ("main_rhs", "main_system"):
            if not isinstance(getattr(self, name), slice):
                raise InputError(f"KernelLayout.{name} must be a slice, got {getattr(self, name)!r}")
        N, o, m = self.n + self.M, self.p + self.m, self.m
        ir = 1 + N + o
        ic = ir + self.s
        iudot = ic + self.c
        mo = m * o
        derived = {
            "N": N, "o": o, "iq": 1, "iu": 1 + N, "iud": 1 + N + self.p, "ir": ir, "ic": ic,
            "iudot": iudot, "ixe": iudot + o, "nz": iudot + o + self.e,
            "nxm": N + self.p, "nx": N + self.p + self.e,
            "main_qdot": slice(0, N),
            "velocity_B": slice(0, mo), "velocity_b": slice(mo, mo + m),
            "velocity_Bdep": slice(mo + m, mo + m + m * m),
            "velocity_rest": slice(mo + m + m * m, mo + 2 * m + m * m),
            "holonomic_f": slice(0, self.M), "holonomic_J": slice(self.M, self.M + self.M * N),
            "partition_switchable": bool(self.augmented and not self.velocity_constraints_use_specifieds),
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    # ------------------------------------------------------------ argument-vector slices
    @property
    def z_q(self) -> slice:
        """Slice of z holding the coordinates q (N)."""
        return slice(self.iq, self.iq + self.N)

    @property
    def z_u(self) -> slice:
        """Slice of z holding all speeds u (o)."""
        return slice(self.iu, self.ir)

    @property
    def z_r(self) -> slice:
        """Slice of z holding the specified inputs r (s)."""
        return slice(self.ir, self.ic)

    @property
    def z_constants(self) -> slice:
        """Slice of z holding the constants (c)."""
        return slice(self.ic, self.iudot)

    @property
    def z_udot(self) -> slice:
        """Slice of z holding the speed derivatives u' (o; zero except for the auxiliary equations)."""
        return slice(self.iudot, self.iudot + self.o)

    @property
    def z_extra(self) -> slice:
        """Slice of z holding the extra states x_e (e)."""
        return slice(self.ixe, self.nz)

    @property
    def main_size(self) -> int:
        """Length of the main kernel's output."""
        return max(self.main_qdot.stop, self.main_rhs.stop, self.main_system.stop)

    @property
    def contiguous_state_derivative(self) -> bool:
        """True when, after ``S y = s`` is solved in place, ``main_out[:nxm]`` is ``[q', u_ind']``
        (the right-hand side right after q'; models saved by early versions put it after S)."""
        return self.main_rhs.start == self.N

    def stored_fields(self) -> dict[str, Any]:
        """The given (init) fields by name: what a saved model stores."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init}


@dataclass(frozen=True)
class ModelKernels:
    """The compiled kernels of a model (each ``kernel(z)`` / ``kernel.into(z, out)`` /
    ``kernel.many(Z)``, outputs as in the module docstring); None when not needed."""

    main: Any
    velocity: Any = None
    acceleration: Any = None
    extra: Any = None
    holonomic: Any = None
    auxiliary: Any = None
    forward: Any = None
    forward_many: Any = None

    def items(self) -> list[tuple[str, Any]]:
        """(slot, kernel) pairs, None included."""
        return [(f.name, getattr(self, f.name)) for f in fields(self)]


@dataclass(frozen=True)
class ModelSymbols:
    """Names of the numbers (SymPy symbols or functions of time), each a tuple in model order:
    ``coordinates`` (q = q_ind + q_dep, N), ``speeds`` (u = u_ind + u_dep, o), their
    independent and dependent parts, ``extra_states`` (e), ``constants`` (c),
    ``specifieds`` (s) and ``noncontributing`` (nnc)."""

    coordinates: tuple
    speeds: tuple
    independent_coordinates: tuple
    dependent_coordinates: tuple
    independent_speeds: tuple
    dependent_speeds: tuple
    extra_states: tuple
    constants: tuple
    specifieds: tuple
    noncontributing: tuple

    def items(self) -> list[tuple[str, tuple]]:
        """(name, symbols) pairs."""
        return [(f.name, getattr(self, f.name)) for f in fields(self)]


@dataclass(frozen=True)
class CompiledParts:
    """Everything a NumericModel is made of besides its SymPy equations: the ``layout``,
    the ``kernels``, the ``symbols``, the ``backend`` name the kernels were built with and
    the ``contacts`` (records) of the equations.
    ``NumericModel.from_parts`` builds a model from it; :mod:`.persistence` saves and
    loads it."""

    layout: KernelLayout
    kernels: ModelKernels
    symbols: ModelSymbols
    backend: str
    #: the contacts of the equations (:class:`~symbody.formulation.contact_record.ContactRecord`)
    contacts: tuple = ()


class CompiledModel(Protocol):
    """What the helper modules use of a :class:`~symbody.NumericModel` (its public interface):
    the layout and kernels, the names, and the evaluation steps on the argument vector z."""

    layout: KernelLayout
    kernels: ModelKernels
    eom: Any
    coordinates: tuple
    speeds: tuple
    dependent_coordinates: tuple
    independent_speeds: tuple
    dependent_speeds: tuple
    extra_states: tuple
    default_partition: Any

    def arguments(self, t: float, q: Any, u: Any, p: Any, r: Any = None, need_r: bool = True,
                  partition: Any = None, extra: Any = None) -> np.ndarray:
        """The argument vector z (nz,) (``NumericModel.arguments``)."""
        ...

    def solve_dependent_speeds(self, z: np.ndarray, partition: Any = None,
                               out: np.ndarray | None = None) -> None:
        """u_dep written into z (``NumericModel.solve_dependent_speeds``)."""
        ...

    def rhs_at(self, z: np.ndarray, states: Any = None, workspace: Any = None,
               full: bool = False) -> Any:
        """x' at a filled z (``NumericModel.rhs_at``)."""
        ...

    def rhs(self, t: float, x: Any, p: Any, r: Any = None, partition: Any = None) -> np.ndarray:
        """x' (``NumericModel.rhs``)."""
        ...

    def constants_array(self, p: Any) -> np.ndarray:
        """The constants as an array (c,)."""
        ...

    def specifieds_array(self, r: Any, t: float = 0.0, x: Any = None) -> np.ndarray:
        """The specified inputs as an array (s,)."""
        ...

    def state_array(self, x0: Any) -> np.ndarray:
        """The state as an array (nx,)."""
        ...

    def holonomic_residual(self, q: Any, p: Any, t: float = 0.0) -> np.ndarray:
        """f_h (M,)."""
        ...

    def require_extra(self, extra: Any, what: str) -> None:
        """InputError when extra states are needed and not given."""
        ...
