"""NumericModel: compiled, purely numeric evaluation of EquationsOfMotion.

The ODE state is ``x = [q_ind (n), q_dep (M), u_ind (p), x_e (e)]`` (N + p + e values; x_e
are extra first-order states, x_e' = f_e(t, q, u, x_e, r), e.g. muscle activations).  The
right-hand side, at each call:

1. the dependent speeds from ``B u + b = 0``: ``u_dep = -B_dep^{-1} (B_ind u_ind + b)``;
2. ``q' = qdot_solution(q, u, t)`` (the kinematic equations solved for q');
3. u' from the dynamic equations ``M_d u' + g_d = 0``; unreduced (o rows) with
   constraints, the augmented system ``[[M_d, -B_a^T], [B_a, 0]] [u'; λ] = [-g_d; -b_a]``;
   reduced (p rows, the hand-derived book form) or unconstrained, ``u_ind' = -M_d^{-1} g_d``.

Sign of λ (the one convention everywhere in symbody): ``B^T λ`` is the generalized
constraint force, added to the applied forces, ``M_d u' + g_d = B^T λ``: the sign of
``sympy.physics.mechanics.LagrangesMethod``'s ``mass_matrix_full``, ``forcing_full``,
``rhs()`` and ``linearize()``; for Kane's equations a constraint force exposed by an
auxiliary speed along B's row equals λ.  (SymPy's ``LagrangesMethod.eom`` and
``solve_multipliers`` carry the opposite sign; sympy issue #30215.)

A NumericModel is its :class:`~.kernel_layout.KernelLayout` (``model.layout``: where every
number sits in the argument vector ``z = [t, q, u, r, constants, u', x_e]`` and in each
kernel's output), its kernels (``model.kernels``, built by :mod:`.kernel_assembly`) and the
evaluation on top of them, with LAPACK on small dense matrices; ``model.eom`` is kept for
reference only.  Partitions (:mod:`.partition`), projection (:mod:`.coordinate_projection`),
batch evaluation (:mod:`.batch`), the unreduced blocks and auxiliary forces
(:mod:`.multipliers`), the argument vector (:mod:`.arguments`), the fast right-hand side
(:mod:`.rhs_function`) and saving (:mod:`.persistence`) are functions over the model, which
its methods of the same names call.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError, SingularConstraintError
from . import arguments as _arguments
from . import batch, persistence
from . import coordinate_projection as projection
from . import multipliers as forces
from . import partition as partitions
from .derivative_program import BlockValues, block_program
from .kernel_layout import CompiledParts
from .linear_algebra import REDUCED_KKT_MIN, solve, solve_symmetric
from .named_values import (
    InputValues,
    ParameterValues,
    StateValues,
    constants_values,
    state_values,
    values_by_symbol,
)
from .partition import Partition
from .rhs_function import rhs_function
from .solves import SingularMassMatrixError, reduced_rates, solve_dependent, solve_dynamics
from .workspace import Workspace

if TYPE_CHECKING:
    from ..formulation import EquationsOfMotion

SampleValues = batch.SampleValues
AugmentedBlocks = forces.AugmentedBlocks

__all__ = ["NumericModel", "compile", "load_model", "SingularMassMatrixError", "Partition",
           "SampleValues", "AugmentedBlocks", "solve_dependent", "solve_dynamics"]


class NumericModel:
    """Compiled numeric form of an :class:`~symbody.EquationsOfMotion`.

    Build it with :func:`symbody.compile`.  Immutable after construction.

    Attributes: ``eom``, ``layout`` (:class:`~.kernel_layout.KernelLayout`), ``kernels``
    (:class:`~.kernel_layout.ModelKernels`), ``coordinates`` (q, N), ``speeds`` (u, o),
    ``independent_coordinates``, ``dependent_coordinates``, ``independent_speeds``,
    ``dependent_speeds``, ``extra_states``, ``states`` (q + u_ind + x_e), ``constants``,
    ``specifieds``, sizes ``n, M, p, m, o, N, e``, ``backend``, ``dynamic_reduced``,
    ``noncontributing``, ``default_partition``, ``partition_switchable``.

    Every method takes the constants ``p`` as an array in ``model.constants``
    order or a dict keyed by Symbol or name; arrays are the fast path.
    """

    _frozen = False
    #: ``backend="auto"`` builds the model's kernels as C (see :mod:`.codegen`); a subclass
    #: whose runs need Python between the steps can keep the size rule (LLVM when small)
    _auto_c_kernels = True

    def __init__(self, eom: EquationsOfMotion, constants: Sequence | None = None, specifieds: Sequence | None = None,
                 backend: str = "auto", cache: bool = True, progress: Any = None,
                 forward_dynamics: str = "auto"):
        from .kernel_assembly import assemble
        self._set_parts(assemble(eom, constants, specifieds, backend, cache, progress,
                                 model_kernels=self._auto_c_kernels,
                                 forward_dynamics=forward_dynamics), eom)

    @classmethod
    def from_parts(cls, parts: CompiledParts, eom: EquationsOfMotion | None = None) -> NumericModel:
        """A model of compiled ``parts`` (layout, kernels, symbols, backend), e.g. loaded from a
        file; ``eom``: the SymPy equations for reference (None when not at hand)."""
        model = cls.__new__(cls)
        cls._set_parts(model, parts, eom)
        return model

    def _set_parts(self, parts: CompiledParts, eom: EquationsOfMotion | None) -> None:
        L, sy = parts.layout, parts.symbols
        self.eom = eom
        self.parts = parts
        self.layout = L
        self.kernels = parts.kernels
        self.backend = parts.backend
        for name, value in sy.items():
            setattr(self, name, value)
        self.states = sy.coordinates + sy.independent_speeds + sy.extra_states
        #: the contacts the equations hold (ContactRecord, one per contact point; see
        #: symbody.formulation.contact_record), saved with the model
        self.contacts = tuple(parts.contacts)
        self.n, self.M, self.p, self.m, self.e, self.N, self.o = L.n, L.M, L.p, L.m, L.e, L.N, L.o
        self.dynamic_reduced = L.dynamic_reduced
        #: the dependent set can be chosen freely (see choose_partition): the dynamic block is
        #: unreduced (u' of all speeds from the augmented system) and B does not depend on r
        self.partition_switchable = L.partition_switchable
        self.default_partition = Partition(tuple(range(L.n, L.N)), tuple(range(L.p, L.o)), L.N, L.o)
        self._local = threading.local()           # per-thread Workspace (see workspace())
        self._derivatives: dict = {}              # the block-derivative program, built on first use
        self._entries: list = []                  # [True] once the compiled entries were tried
        self._frozen = True

    def _compiled_entries(self) -> bool:
        """Put the compiled entries of :mod:`.native_entry` in front of ``rhs`` and
        ``rhs_many`` (instance attributes that shadow the methods, which stay the careful
        path), once; True when they are there."""
        if self._entries:
            return self._entries[0]
        self._entries.append(False)
        cls = type(self)
        if cls.rhs is not NumericModel.rhs or cls.rhs_many is not NumericModel.rhs_many:
            return False
        from .native_entry import entries
        made = entries(self, NumericModel.rhs.__get__(self), NumericModel.rhs_many.__get__(self))
        if made is None:
            return False
        object.__setattr__(self, "rhs", made[0])
        object.__setattr__(self, "rhs_many", made[1])
        self._entries[0] = True
        return True

    # ------------------------------------------------------------ work data
    def workspace(self) -> Workspace:
        """This thread's :class:`Workspace` (the model's work buffers), created on first use.

        The model itself is immutable and can be shared; all evaluation writes go here.
        """
        try:
            return self._local.workspace
        except AttributeError:
            sizes = {slot: k.nout for slot, k in self.kernels.items()
                     if k is not None and slot in ("main", "velocity", "holonomic", "forward")}
            ws = Workspace(self.layout.nz, sizes)
            self._local.workspace = ws
            return ws

    @property
    def has_multipliers(self) -> bool:
        """True when u' comes from the augmented system and the multipliers λ (m,) exist."""
        return self.layout.augmented

    @property
    def velocity_constraints_use_specifieds(self) -> bool:
        """True when B or b of the velocity constraints depend on the specified inputs r."""
        return self.layout.velocity_constraints_use_specifieds

    @property
    def rhs_batch_outputs(self) -> int:
        """Numbers held per state by :meth:`rhs_many` (its kernels' outputs, mass matrix
        included): k states take about 8 k times this many bytes."""
        return self.kernels.main.nout + (self.kernels.velocity.nout if self.m else 0)

    # ----------------------------------------------------------- persistence (persistence.py)
    def __reduce__(self):
        """Pickle the compiled kernels and names, not the SymPy equations (``eom`` -> None);
        ``symbody.compilation.persistence.dumps(model, equations=True)`` keeps them."""
        self._refuse_derived_inputs("pickled")
        eom = self.eom if persistence.pickling_equations() else None
        return _unpickle_model, (persistence.pack_parts(self.parts, self._name()), eom)

    def save(self, path: str | os.PathLike, machine_code: bool = True) -> Path:
        """Save to ``path`` for :func:`symbody.load_model` (no compilation when loaded on the
        same platform and versions).  The file holds machine code: share it like a shared
        library, and load only files you trust.  Returns the path written."""
        self._refuse_derived_inputs("saved")
        return persistence.write_parts(self.parts, path, machine_code=machine_code, name=self._name())

    def _refuse_derived_inputs(self, what: str) -> None:
        """A model whose equations compute some of its inputs from the state at run time
        (``eom.derived_inputs``, e.g. the stations of an OpenSim path over an ellipsoid) is
        not saved: the file would hold the kernels without that computation, and numbers
        given for those inputs after loading would give wrong forces without a word."""
        derived = getattr(self.eom, "derived_inputs", None)
        if derived is None or not len(getattr(derived, "indices", ())):
            return
        names = ", ".join(str(self.specifieds[i]) for i in list(derived.indices)[:4])
        more = ", ..." if len(derived.indices) > 4 else ""
        raise InputError(f"this model cannot be {what}: it computes its inputs {names}{more} "
                         "from the state at run time (eom.derived_inputs), which a saved model "
                         "would not do; keep the source file (e.g. the .osim) and load it again")

    def _name(self) -> str | None:
        return getattr(self.eom, "name", None)

    def __setattr__(self, name, value):
        if self._frozen:
            raise AttributeError(f"NumericModel is immutable; cannot set {name!r}")
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        name = f" {self._name()!r}" if self._name() else ""
        return (f"<NumericModel{name}: states {len(self.states)} (q {self.n}+{self.M}, u_ind {self.p}), "
                f"dependent speeds {self.m}, constants {len(self.constants)}, "
                f"specifieds {len(self.specifieds)}, backend {self.backend!r}>")

    # ------------------------------------------------------------ inputs
    def constants_array(self, p: ParameterValues) -> np.ndarray:
        """Constants as a float array in ``model.constants`` order.

        ``p``: dict keyed by Symbol or name, or a sequence in model order.
        Raises InputError naming a missing, unknown or non-finite constant.
        """
        if p is None:
            if self.constants:
                raise InputError(f"constants are needed: {', '.join(map(str, self.constants))}")
            return np.empty(0)
        return constants_values(self.constants, p)

    def state_array(self, x0: StateValues) -> np.ndarray:
        """The state x = [q (N), u_ind (p), x_e (e)] as an array from a dict keyed by symbol or
        name (dependent speeds ignored) or an array of N + p + e (or N + o + e) values."""
        return state_values(x0, self.states, self.dependent_speeds, self.N + self.p, self.m)

    def specifieds_array(self, r: InputValues, t: float = 0.0, x: ArrayLike | None = None) -> np.ndarray:
        """Values of the specified inputs: array, dict keyed by symbol/name, or callable r(t, x)."""
        s = len(self.specifieds)
        if callable(r):
            r = r(t, x)
        if r is None:
            if s:
                raise InputError("the model has specified inputs "
                                 f"{', '.join(map(str, self.specifieds))}; pass specifieds=/r= values")
            return np.empty(0)
        if type(r) is np.ndarray and r.shape == (s,) and r.dtype == float and np.isfinite(r).all():
            return r                                    # the fast path: already what is needed
        return values_by_symbol(r, self.specifieds, "specified input", wording={
            "length": "{n} specified values given but the model has {c}: {names}",
            "missing": "the value of the specified input {symbol} is missing"})

    def require_extra(self, extra: Any, what: str) -> None:
        """Raise InputError (naming ``what``) when the model has extra states and ``extra`` is None."""
        if self.e and extra is None:
            raise InputError(f"{what} depends on the extra states "
                             f"{', '.join(map(str, self.extra_states))}: pass their values as extra=")

    # ------------------------------------------------------------ argument vector (arguments.py)
    def arguments(self, t: float, q: ArrayLike, u: ArrayLike | None, p: ParameterValues,
                  r: InputValues = None, need_r: bool = True, partition: Partition | None = None,
                  extra: Any = None) -> np.ndarray:
        """The kernels' argument vector z (nz,) (:func:`.arguments.arguments`)."""
        return _arguments.arguments(self, t, q, u, p, r, need_r, partition, extra)

    def solve_dependent_speeds(self, z: np.ndarray, partition: Partition | None = None,
                               out: np.ndarray | None = None) -> None:
        """u_dep written into z (:func:`.arguments.solve_dependent_speeds`)."""
        _arguments.solve_dependent_speeds(self, z, partition, out)

    # ------------------------------------------------------------ right-hand side
    def rhs(self, t: float, x: ArrayLike, p: ParameterValues, r: InputValues = None, partition: Partition | None = None) -> np.ndarray:
        """x' = f(t, x) for the state x = [q (N), u_ind (p), x_e (e)]; returns shape (N + p + e,).

        ``r``: specified inputs, an array (len(specifieds)) or callable ``r(t, x)``
        (always called with the state in the model's layout [q, u_ind]).
        ``partition``: integrate in another dependent set: x = [q, u[partition.independent_speeds]]
        and x' in the same layout (needs ``partition_switchable`` unless it is the default).
        """
        if not self._entries and self._compiled_entries():
            return self.rhs(t, x, p, r, partition)      # the compiled entry from now on
        if partition is not None and partition.dependent_speeds != self.default_partition.dependent_speeds:
            return partitions.rhs_in_partition(self, t, x, p, r, partition)
        L = self.layout
        if type(x) is not np.ndarray or x.shape != (L.nx,) or x.dtype != float:
            x = np.asarray(x, dtype=float)
            if x.shape != (L.nx,):
                raise InputError(f"the state has {L.nx} values ({', '.join(map(str, self.states))}), "
                                 f"got shape {x.shape}")
        if type(p) is not np.ndarray or p.shape != (L.c,) or p.dtype != float:
            p = self.constants_array(p)
        # r first: a callable r(t, x) may evaluate this model too (and use the workspace)
        rv = self.specifieds_array(r, t, x) if L.s else None
        ws = self.workspace()
        z = ws.z
        z[0] = t
        nxm = L.nxm
        z[1:1 + nxm] = x[:nxm]
        if L.e:
            z[L.ixe:] = x[nxm:]
        z[L.ic:L.iudot] = p
        if rv is not None:
            z[L.ir:L.ic] = rv
        if L.m:
            _arguments.solve_dependent_speeds(self, z, None, ws.velocity)
        return self.rhs_at(z, workspace=ws)

    def rhs_function(self, p: ParameterValues) -> Callable[..., np.ndarray]:
        """``f(t, x, r=None)``: :meth:`rhs` with the constants ``p`` bound, for ODE solvers
        (one function per integration; see :func:`.rhs_function.rhs_function`)."""
        return rhs_function(self, p)

    def rhs_at(self, z: np.ndarray, states: np.ndarray | None = None,
               workspace: Workspace | None = None, full: bool = False):
        """x' (nx,) at a filled argument vector z (u_dep already solved); ``states``: which u'
        are states (default the independent speeds).  ``full``: return ``(x', y, out)`` with
        y the solution of S y = s ([u', λ] for the augmented system) and out the main
        kernel's output."""
        L = self.layout
        N, K = L.N, L.K
        ws = self.workspace() if workspace is None else workspace
        forward = self.kernels.forward
        if forward is not None and not full:      # [q', u'] written out (a tree's recursion)
            out = ws.forward
            forward.into(z, out)
            xdot = np.empty(L.nx)
            xdot[:L.nxm] = out[:L.nxm] if states is None else np.concatenate(
                [out[:N], out[N:][states]])
            if L.e:
                self.kernels.extra.into(z, xdot[L.nxm:])
            return xdot
        out = ws.main
        main = self.kernels.main
        main.into(z, out)
        if L.augmented and not full and L.m >= REDUCED_KKT_MIN:
            xdot = reduced_rates(L, self.kernels, z, out, states)   # None: the general way
            if xdot is not None:
                return xdot
        if L.augmented:
            S = out[L.main_system].reshape(K, K, order="F")     # a view: solved in place
            sol, info = solve(S, out[L.main_rhs], overwrite_b=True)
        elif L.mass_symmetric:
            S = out[L.main_system].reshape(K, K, order="F")     # row by row = column by column
            sol, info = solve_symmetric(S, out[L.main_rhs], overwrite=True)
            if info:                                    # not definite: LU of a fresh copy
                main.into(z, out)
                sol, info = solve(S, out[L.main_rhs], overwrite_b=True)
        else:
            sol, info = solve(out[L.main_system].reshape(K, K).copy(), out[L.main_rhs], overwrite_b=True)
        if info != 0:
            what = ("the augmented system [[M_d, -B_a^T], [B_a, 0]]" if L.augmented
                    else "the dynamic mass matrix M_d")
            raise SingularMassMatrixError(
                f"{what} is singular at t = {z[0]:.6g} (q = {np.array2string(z[1:1 + N], precision=4)})")
        xdot = np.empty(L.nx)
        xdot[:N] = out[:N]
        xdot[N:L.nxm] = sol[:L.p] if states is None else sol[states]
        if L.e:
            self.kernels.extra.into(z, xdot[L.nxm:])
        return (xdot, sol, out) if full else xdot

    # ------------------------------------------------------------ kinematics
    def full_speeds(self, q: ArrayLike, u_ind: ArrayLike, p: ParameterValues, t: float = 0.0, r: InputValues = None, partition: Partition | None = None) -> np.ndarray:
        """All speeds u (o,) in model order, the dependent ones solved from B u + b = 0.

        ``u_ind``: the p independent speeds (``partition.independent_speeds`` when a
        partition is given, else the model's).
        """
        u_ind = np.asarray(u_ind, dtype=float)
        if u_ind.shape != (self.p,):
            raise InputError(f"u_ind must have {self.p} values, got shape {u_ind.shape}")
        z = self.arguments(t, q, u_ind, p, r, need_r=self.layout.kinematics_use_specifieds,
                           partition=partition)
        return z[self.layout.z_u].copy()

    def qdot(self, q: ArrayLike, u: ArrayLike, p: ParameterValues, t: float = 0.0, r: InputValues = None) -> np.ndarray:
        """q' (N,) from the kinematic equations; ``u`` all o speeds or the p independent ones."""
        z = self.arguments(t, q, u, p, r, need_r=self.layout.kinematics_use_specifieds)
        return self.kernels.main(z)[:self.N].copy()

    def accelerations(self, q: ArrayLike, u: ArrayLike, p: ParameterValues, t: float = 0.0, r: InputValues = None, partition: Partition | None = None,
                      extra: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(u' (o,), λ (m,)): all speed derivatives and the constraint multipliers.

        ``u``: all o speeds (or the p independent ones, of ``partition`` when given).
        For an unreduced dynamic block λ are the multipliers of the augmented system,
        ``M_d u' + g_d = B_a^T λ`` (B_a^T λ: the generalized constraint forces; the sign of
        SymPy's ``LagrangesMethod.rhs()``), and no partition is involved; for a
        reduced (hand-derived) block they are not available and returned as NaN.
        ``extra``: the extra states' values (e,) when the model has any.
        """
        if partition is not None:
            self.check_partition(partition)
        self.require_extra(extra, "the accelerations")
        z = self.arguments(t, q, u, p, r, partition=partition, extra=extra)
        _, sol, _ = self.rhs_at(z, full=True)
        o, m, p_ = self.o, self.m, self.p
        if self.layout.augmented:
            return sol[:o].copy(), sol[o:o + m].copy()
        if not m:
            return sol[:o].copy(), np.empty(0)
        # reduced: u_dep' from the acceleration constraints B_a u' + b_a = 0
        out = self.kernels.acceleration(z)
        ud_dep, info = solve_dependent(out[:m * o].reshape(m, o), out[m * o:m * o + m], sol[:p_])
        if info != 0:
            raise SingularConstraintError(f"the acceleration constraints are singular in the dependent "
                                          f"accelerations at t = {t:.6g}")
        return np.concatenate([sol[:p_], ud_dep]), np.full(m, np.nan)

    # ------------------------------------------------------------ constraints
    def holonomic(self, q: ArrayLike, p: ParameterValues, t: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """(f_h (M,), ∂f_h/∂q (M, N)) from one kernel evaluation."""
        if not self.M:
            return np.empty(0), np.empty((0, self.N))
        out = self.kernels.holonomic(self.arguments(t, q, None, p, None, need_r=False))
        return out[self.layout.holonomic_f], out[self.layout.holonomic_J].reshape(self.M, self.N)

    def holonomic_residual(self, q: ArrayLike, p: ParameterValues, t: float = 0.0) -> np.ndarray:
        """f_h(q, t) (M,)."""
        return self.holonomic(q, p, t)[0].copy()

    def holonomic_jacobian(self, q: ArrayLike, p: ParameterValues, t: float = 0.0) -> np.ndarray:
        """∂f_h/∂q (M, N)."""
        return self.holonomic(q, p, t)[1].copy()

    def velocity_constraints(self, q: ArrayLike, p: ParameterValues, t: float = 0.0,
                             r: InputValues = None) -> tuple[np.ndarray, np.ndarray]:
        """(B (m, o), b (m,)) of the velocity constraints B u + b = 0 at (t, q)."""
        if not self.m:
            return np.empty((0, self.o)), np.empty(0)
        z = self.arguments(t, q, None, p, r, need_r=self.layout.kinematics_use_specifieds)
        out = self.kernels.velocity(z)
        return out[self.layout.velocity_B].reshape(self.m, self.o), out[self.layout.velocity_b]

    def velocity_constraint_matrix(self, q: ArrayLike, p: ParameterValues, t: float = 0.0, r: InputValues = None) -> np.ndarray:
        """B(q, t) (m, o) of the velocity constraints B u + b = 0."""
        return self.velocity_constraints(q, p, t, r)[0].copy()

    def velocity_residual(self, q: ArrayLike, u: ArrayLike, p: ParameterValues, t: float = 0.0, r: InputValues = None) -> np.ndarray:
        """B u + b (m,) for all o speeds ``u``."""
        if not self.m:
            return np.empty(0)
        u = np.asarray(u, dtype=float)
        if u.shape != (self.o,):
            raise InputError(f"u must have all {self.o} speeds, got shape {u.shape}")
        B, b = self.velocity_constraints(q, p, t, r)
        return B @ u + b

    # ------------------------------------------------------------ helpers of their own modules
    def project_coordinates(self, q: ArrayLike, p: ParameterValues, t: float = 0.0, tol: float = 1e-10, max_iter: int = 50,
                            r: InputValues = None, partition: Partition | None = None) -> tuple[np.ndarray, bool, float]:
        """q with q_dep solved from f_h = 0 (:func:`.coordinate_projection.project_coordinates`)."""
        return projection.project_coordinates(self, q, p, t, tol, max_iter, r, partition)

    def project_coordinates_many(self, t: ArrayLike, Q: ArrayLike, p: ParameterValues, max_iter: int = 50,
                                 partition: Partition | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Many at once (:func:`.coordinate_projection.project_coordinates_many`)."""
        return projection.project_coordinates_many(self, t, Q, p, 1e-10, max_iter, partition)

    def consistent_state(self, x_guess: StateValues, p: ParameterValues, t: float = 0.0) -> np.ndarray:
        """x with q_dep solved from the guess (:func:`.coordinate_projection.consistent_state`)."""
        return projection.consistent_state(self, x_guess, p, t)

    def check_partition(self, partition: Partition) -> None:
        """Raise InputError unless ``partition`` fits (:func:`.partition.check_partition`)."""
        return partitions.check_partition(self, partition)

    def constraint_matrices(self, q: ArrayLike, p: ParameterValues, t: float = 0.0, r: InputValues = None) -> tuple[np.ndarray, np.ndarray]:
        """(∂f_h/∂q (M, N), B (m, o)) at q (:func:`.partition.constraint_matrices`)."""
        return partitions.constraint_matrices(self, q, p, t, r)

    def choose_partition(self, q: ArrayLike, p: ParameterValues, t: float = 0.0, r: InputValues = None) -> Partition:
        """The best conditioned dependent set at q (:func:`.partition.choose_partition`)."""
        return partitions.choose_partition(self, q, p, t, r)

    def partition_names(self, partition: Partition) -> tuple[tuple, tuple]:
        """(dependent coordinates, dependent speeds) of ``partition`` as symbols."""
        return partitions.partition_names(self, partition)

    def augmented_blocks(self, t: float, q: ArrayLike, u: ArrayLike, p: ParameterValues,
                         r: InputValues = None, extra: ArrayLike | None = None) -> AugmentedBlocks:
        """The unreduced equations at (t, q, u), unsolved (:func:`.multipliers.augmented_blocks`)."""
        return forces.augmented_blocks(self, t, q, u, p, r, extra)

    def auxiliary_forces(self, q: ArrayLike, u: ArrayLike, udot: ArrayLike, p: ParameterValues, t: float = 0.0, r: InputValues = None,
                         extra: ArrayLike | None = None) -> np.ndarray:
        """The noncontributing forces (:func:`.multipliers.auxiliary_forces`)."""
        return forces.auxiliary_forces(self, q, u, udot, p, t, r, extra)

    def rhs_many(self, t: ArrayLike, X: ArrayLike, p: ParameterValues, r: InputValues = None) -> np.ndarray:
        """x' for many states at once: X (k, N + p + e) -> (k, N + p + e) (:func:`.batch.rhs_many`;
        with the compiled entry one C loop over the states, each x' that of :meth:`rhs`)."""
        if not self._entries and self._compiled_entries():
            return self.rhs_many(t, X, p, r)
        return batch.rhs_many(self, t, X, p, r)

    def speeds_many(self, t: ArrayLike, X: ArrayLike, p: ParameterValues, r: InputValues = None, partition: Partition | None = None) -> np.ndarray:
        """All speeds u (k, o) for states X (k, N + p) (:func:`.batch.speeds_many`)."""
        return batch.speeds_many(self, t, X, p, r, partition)

    def evaluate_samples(self, t: ArrayLike, X: ArrayLike, p: ParameterValues, r: InputValues = None, *, speeds: ArrayLike | None = None, multipliers: bool | ArrayLike = True) -> SampleValues:
        """Speeds, constraint residuals and multipliers for states X (:func:`.batch.evaluate_samples`)."""
        return batch.evaluate_samples(self, t, X, p, r, speeds=speeds, multipliers=multipliers)

    # ------------------------------------------------------------ derivatives
    def block_derivatives(self, q: ArrayLike, u: ArrayLike, p: ParameterValues, t: float = 0.0, r: InputValues = None) -> BlockValues:
        """Values of the canonical-form blocks and their first derivatives along [q, u, r].

        ``q`` (N,), ``u`` (all o speeds), ``r`` (s,; zeros when None).  Returns a
        :class:`~symbody.compilation.derivative_program.BlockValues`: for each block
        (holonomic, velocity_matrix, ..., acceleration_rest) its value and its derivative
        with a trailing axis of length N + o + s.  Exact to round-off (forward-mode
        differentiation of the expressions, generated once per model and cached).
        """
        program = self._derivatives.get("program")
        if program is None:
            program = self._derivatives["program"] = block_program(
                self.eom, self.coordinates, self.speeds, self.specifieds, self.constants)
        return program.at(t, q, u, r if self.specifieds else None, self.constants_array(p))



def _unpickle_model(data: bytes, eom: EquationsOfMotion | None = None) -> NumericModel:
    return NumericModel.from_parts(persistence.unpack_parts(data), eom)


def load_model(path: str | os.PathLike, machine_code: bool = True) -> NumericModel:
    """Read a model written by ``model.save(path)``; nothing is compiled (``machine_code=True``).

    The returned model has ``eom = None``.  Raises :class:`~symbody.ModelFileError` naming
    the file and what is wrong (see :func:`.persistence.read_parts`).  The file's machine
    code runs when the model is evaluated: **load only files you trust**;
    ``machine_code=False`` compiles the kernels again from the stored expressions instead.
    """
    return NumericModel.from_parts(persistence.read_parts(path, machine_code=machine_code))


def compile(eom: EquationsOfMotion, constants: Sequence | None = None, specifieds: Sequence | None = None,
            backend: str = "auto", cache: bool = True, progress: Any = None,
            forward_dynamics: str = "auto") -> NumericModel:
    """Compile EquationsOfMotion into a :class:`NumericModel`.

    ``constants`` / ``specifieds``: optional orderings (default: the eom's, sorted
    by name); every symbol the equations use must be included.  ``backend``:
    "auto" (generated C when a C compiler works, else symengine LLVM, else numpy), "c",
    "llvm", "lambda" or "numpy".  ``cache``: reuse compiled kernels from the on-disk cache
    ($SYMBODY_CACHE_DIR or ~/.cache/symbody).  ``forward_dynamics``: see
    :func:`symbody.compilation.build.compile`.
    """
    return NumericModel(eom, constants=constants, specifieds=specifieds, backend=backend,
                        cache=cache, progress=progress, forward_dynamics=forward_dynamics)

