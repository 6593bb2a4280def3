"""NumericModel: compiled, purely numeric evaluation of EquationsOfMotion.

State layout (the ODE state)::

    x = [q_ind (n), q_dep (M), u_ind (p), x_e (e)]          len N + p + e

x_e are the extra first-order states of the equations (e.g. muscle activations),
x_e' = f_e(t, q, u, x_e, r) evaluated after the dependent speeds are known.

Right-hand side, evaluated numerically at each call:

1. dependent speeds from the velocity constraints ``B u + b = 0``:
   ``u_dep = -B_dep^{-1} (B_ind u_ind + b)``                      (m x m solve)
2. ``q' = qdot_solution(q, u, t)``  (the kinematic equations solved for q')
3. accelerations from the dynamic equations ``M_d u' + g_d = 0``:
   unreduced (o rows) with constraints, the augmented system::

       [ M_d  -B_a^T ] [ u' ]   [ -g_d ]
       [ B_a    0    ] [ λ  ] = [ -b_a ]          ((o + m) square solve)

   Sign of λ (the one convention everywhere in symbody): ``B^T λ`` is the generalized
   constraint force, added to the applied forces, ``M_d u' + g_d = B^T λ``.  This is
   the sign of ``sympy.physics.mechanics.LagrangesMethod``'s ``mass_matrix_full``,
   ``forcing_full``, ``rhs()`` and ``linearize()`` (so compiled λ equal the λ of
   ``lm.rhs()``), and for Kane's equations a constraint force exposed by an auxiliary
   speed along B's row equals λ.  (SymPy's ``LagrangesMethod.eom`` expression and
   ``solve_multipliers`` carry the opposite sign; sympy issue #30215.)

   reduced (p rows over u_ind', the hand-derived book form) or unconstrained:
   ``u_ind' = -M_d^{-1} g_d``.

All symbolic blocks are evaluated by a few compiled kernels that share one flat
argument vector ``z = [t, q (N), u (o), r (s), constants (c), u' (o), x_e (e)]``; the
linear algebra is done by LAPACK on small dense matrices.  A NumericModel holds
no sympy state used at run time (``model.eom`` is kept for reference only).

Partitions.  Which coordinates and speeds are dependent is a numerical choice, not
part of the physics: a :class:`Partition` names them by index, and ``rhs``,
``full_speeds``, ``accelerations`` and ``project_coordinates`` accept one (the
state is then ``[q (N, model order), u at partition.independent_speeds]``).  With
the unreduced dynamic block the augmented system gives u' for all speeds without a
partition, so any partition whose ``B[:, dependent_speeds]`` is regular works;
:meth:`NumericModel.choose_partition` picks the best conditioned one by
column-pivoted QR of ∂f_h/∂q and of B.  A reduced (hand-derived) dynamic block
is written for the eom's own partition only.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import sympy as sm
from numpy.typing import ArrayLike
from sympy.physics.vector import dynamicsymbols

from ..errors import CompilationError, InputError, SingularConstraintError, SymbodyError
from ..progress import as_progress
from .codegen import Kernel, compile_kernel, resolve_backend
from .derivative_program import BlockValues, block_program
from .linear_algebra import in_place_solver, pivoted_columns, solve, solve_symmetric
from .named_values import InputValues, ParameterValues, StateValues, symbol_index, values_by_symbol
from .workspace import Workspace

if TYPE_CHECKING:
    from ..formulation import EquationsOfMotion

__all__ = ["NumericModel", "compile", "SingularMassMatrixError", "Partition", "SampleValues",
           "AugmentedBlocks", "solve_dynamics"]

_t = dynamicsymbols._t


class SingularMassMatrixError(SymbodyError, ArithmeticError):
    """The dynamic mass matrix (or the augmented constrained system) is numerically singular."""


@dataclass(frozen=True)
class Partition:
    """Which coordinates and speeds are dependent: indices into ``model.coordinates``
    (``dependent_coordinates``, M of them) and ``model.speeds`` (``dependent_speeds``,
    m), ascending; ``N``, ``o`` are the numbers of coordinates and speeds.

    The ODE state of a partition is ``y = [q (all N, model order), u[independent_speeds]]``.
    """

    dependent_coordinates: tuple[int, ...]
    dependent_speeds: tuple[int, ...]
    N: int
    o: int
    _qdep: np.ndarray = field(init=False, repr=False, compare=False)
    _qind: np.ndarray = field(init=False, repr=False, compare=False)
    _udep: np.ndarray = field(init=False, repr=False, compare=False)
    _uind: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        qd = tuple(sorted(int(i) for i in self.dependent_coordinates))
        ud = tuple(sorted(int(i) for i in self.dependent_speeds))
        if len(set(qd)) != len(qd) or any(not 0 <= i < self.N for i in qd):
            raise InputError(f"dependent coordinate indices {qd} are not distinct indices below {self.N}")
        if len(set(ud)) != len(ud) or any(not 0 <= i < self.o for i in ud):
            raise InputError(f"dependent speed indices {ud} are not distinct indices below {self.o}")
        object.__setattr__(self, "dependent_coordinates", qd)
        object.__setattr__(self, "dependent_speeds", ud)
        object.__setattr__(self, "_qdep", np.array(qd, dtype=np.intp))
        object.__setattr__(self, "_qind", np.array([i for i in range(self.N) if i not in qd], dtype=np.intp))
        object.__setattr__(self, "_udep", np.array(ud, dtype=np.intp))
        object.__setattr__(self, "_uind", np.array([i for i in range(self.o) if i not in ud], dtype=np.intp))

    @property
    def independent_coordinates(self) -> tuple[int, ...]:
        return tuple(int(i) for i in self._qind)

    @property
    def independent_speeds(self) -> tuple[int, ...]:
        return tuple(int(i) for i in self._uind)


class NumericModel:
    """Compiled numeric form of an :class:`~symbody.EquationsOfMotion`.

    Build it with :func:`symbody.compile`.  Immutable after construction.

    Attributes: ``eom``, ``coordinates`` (q, N), ``speeds`` (u, o),
    ``independent_coordinates``, ``dependent_coordinates``,
    ``independent_speeds``, ``dependent_speeds``, ``states`` (q + u_ind),
    ``constants``, ``specifieds``, sizes ``n, M, p, m, o, N``, ``backend``,
    ``dynamic_reduced``, ``noncontributing``.

    Every method takes the constants ``p`` as an array in ``model.constants``
    order or a dict keyed by Symbol or name; arrays are the fast path.
    """

    _frozen = False

    def __init__(self, eom: EquationsOfMotion, constants: Sequence | None = None, specifieds: Sequence | None = None,
                 backend: str = "auto", cache: bool = True, progress: Any = None):
        from ..formulation import EquationsOfMotion

        if not isinstance(eom, EquationsOfMotion):
            raise CompilationError(f"compile() needs an EquationsOfMotion, got {type(eom).__name__}; "
                                   "build one with KanesMethod(...).to_eom() or EquationsOfMotion(...)")
        self.eom = eom
        self.backend = resolve_backend(backend)
        q, u = tuple(eom.q), tuple(eom.u)
        self.coordinates = q
        self.speeds = u
        self.independent_coordinates = tuple(eom.q_ind)
        self.dependent_coordinates = tuple(eom.q_dep)
        self.independent_speeds = tuple(eom.u_ind)
        self.dependent_speeds = tuple(eom.u_dep)
        #: extra first-order states x_e (after q and u_ind in the state), their number e
        self.extra_states = tuple(getattr(eom, "extra_states", ()))
        self.e = len(self.extra_states)
        self.states = q + tuple(eom.u_ind) + self.extra_states
        self.n, self.M = len(eom.q_ind), len(eom.q_dep)
        self.p, self.m = len(eom.u_ind), len(eom.u_dep)
        self.N, self.o = self.n + self.M, self.p + self.m
        self.dynamic_reduced = bool(eom.dynamic_reduced)
        self.noncontributing = tuple(eom.noncontributing)
        self.default_partition = Partition(tuple(range(self.n, self.N)), tuple(range(self.p, self.o)),
                                           self.N, self.o)
        self.constants = self._ordering(constants, eom.constants, "constants")
        self.specifieds = self._ordering(specifieds, eom.specifieds, "specifieds")
        N, o, s, c = self.N, self.o, len(self.specifieds), len(self.constants)

        # flat argument vector z = [t, q, u, r, constants, u']
        self._iq = 1
        self._iu = 1 + N
        self._iud = 1 + N + self.p          # start of u_dep inside z
        self._ir = 1 + N + o
        self._ic = self._ir + s
        self._iudot = self._ic + c
        self._ixe = self._iudot + o          # start of the extra states inside z
        self._nz = self._ixe + self.e
        self._nxm = N + self.p                # the mechanical part [q, u_ind] of the state
        self._nx = N + self.p + self.e
        self._nc = c
        args = [_t, *q, *u, *self.specifieds, *self.constants, *eom.udot, *self.extra_states]
        self._args = args

        spec = tuple(self.specifieds)
        kin_blocks = [eom.qdot_solution, eom.velocity_matrix, eom.velocity_rest]
        self._kin_uses_r = bool(spec) and any(e.has(*spec) for blk in kin_blocks for e in blk)
        vel_blocks = [eom.velocity_matrix, eom.velocity_rest]
        self._vel_uses_r = bool(spec) and any(e.has(*spec) for blk in vel_blocks for e in blk)
        bar = as_progress(progress, "compiling", total=1.0)

        # the dynamic block as the formulation formed it in symengine (no SymPy round trip),
        # else the SymPy one (hand-built equations, the numpy backend)
        dyn = eom.symengine_dynamics() if self.backend != "numpy" else None
        se_names = dyn.names if dyn is not None else None

        def build(name, exprs):
            # big kernels take seconds to compile: say which one is being built
            bar.set(0.5, f"{name}: {len(exprs)} expressions ({self.backend})", force=len(exprs) > 200)
            return compile_kernel(args, exprs, backend=self.backend, cache=cache, name=name, lazy=True,
                                  progress=progress, symengine_names=se_names)

        # main kernel: q', M_d, -g_d (+ B_a, -b_a for the augmented system): the right-hand
        # sides come out of the kernel already negated
        if dyn is not None:
            Md_rows = dyn.mass
            shape = (len(Md_rows), len(Md_rows[0]) if Md_rows else 0)
            if any(len(row) != shape[1] for row in Md_rows):
                raise CompilationError("the dynamic mass matrix's rows differ in length")
            neg_gd = [-e for e in dyn.rest]
        else:
            Md = eom.dynamic_mass
            Md_rows = Md.tolist()
            shape = Md.shape
            neg_gd = [-e for e in eom.dynamic_rest]
        self._nd = shape[0]
        expected = self.p if self.dynamic_reduced else o
        if shape != (expected, expected):
            raise CompilationError(f"the dynamic mass matrix is {shape}; expected "
                                   f"({expected}, {expected})")
        # a symmetric mass matrix (Kane, Lagrange) is solved by Cholesky when definite
        self._Md_symmetric = all(Md_rows[i][j] == Md_rows[j][i] for i in range(shape[0]) for j in range(i))
        self._augmented = (not self.dynamic_reduced) and self.m > 0
        # the system S y = s solved for u' (and λ) at each evaluation, written by the kernel
        # column by column so that one LAPACK call works on the kernel's output in place:
        # [[M_d, -B_a^T], [B_a, 0]] [u'; λ] = [-g_d; -b_a], or M_d u' = -g_d
        # (M_d u' + g_d = B_a^T λ: λ with the sign of SymPy's LagrangesMethod.rhs())
        if self._augmented:
            Ba = eom.acceleration_matrix
            K = self._K = o + self.m

            def S_at(i, j):
                if i < o:
                    return Md_rows[i][j] if j < o else -Ba[j - o, i]
                return Ba[i - o, j] if j < o else sm.S.Zero
            rhs = neg_gd + [-e for e in eom.acceleration_rest]
            entries = [S_at(i, j) for j in range(K) for i in range(K)]
        else:
            K = self._K = shape[0]
            rhs = neg_gd
            # M_d alone row by row as the eom has it (the same numbers when it is symmetric,
            # and then LAPACK reads it in place as well)
            entries = [e for row in Md_rows for e in row]
        # layout [q' (N), right-hand side (K), S (K*K)]: once the right-hand side is solved in
        # place, out[:N + p] is [q', u_ind'], the mechanical part of x' (the independent speeds
        # come first in u)
        main = list(eom.qdot_solution) + rhs + entries
        self._k_main = build("dynamics", main)
        self._s_qdot = slice(0, N)
        self._s_rhs = slice(N, N + K)
        self._s_S = slice(N + K, N + K + K * K)

        # velocity constraints B u + b = 0
        self._k_vel: Kernel | None = None
        self._k_acc: Kernel | None = None
        if self.m:
            # B, b, and for the model's own dependent speeds B_dep (column by column) and
            # -(B_ind u_ind + b): u_dep by one LAPACK call on the kernel's output
            B, b = eom.velocity_matrix, eom.velocity_rest
            p_ = self.p
            Bdep = [B[i, j] for j in range(p_, o) for i in range(self.m)]
            rest = [-(sum((B[i, j] * u[j] for j in range(p_)), sm.S.Zero) + b[i]) for i in range(self.m)]
            self._k_vel = build("velocity constraints", list(B) + list(b) + Bdep + rest)
            mo = self.m * o
            self._s_B, self._s_b = slice(0, mo), slice(mo, mo + self.m)
            self._s_Bdep = slice(mo + self.m, mo + self.m + self.m * self.m)
            self._s_vrhs = slice(mo + self.m + self.m * self.m, mo + 2 * self.m + self.m * self.m)
            if self.dynamic_reduced:
                self._k_acc = build("acceleration constraints",
                                    list(eom.acceleration_matrix) + list(eom.acceleration_rest))
        # extra states' derivatives x_e' = f_e(t, q, u, x_e, r)
        self._k_extra: Kernel | None = None
        if self.e:
            self._k_extra = build("extra states", list(eom.extra_derivatives))
        # holonomic constraints and their Jacobian
        self._k_hol: Kernel | None = None
        if self.M:
            fh = sm.Matrix(eom.holonomic)
            Jh = fh.jacobian(sm.Matrix(q))
            self._k_hol = build("holonomic constraints", list(fh) + list(Jh))
        # auxiliary equations a = A_nc F_nc + c
        self._k_aux: Kernel | None = None
        self._naux = eom.auxiliary.rows
        if self._naux and self.noncontributing:
            aux = sm.Matrix(eom.auxiliary)
            A_nc = aux.jacobian(sm.Matrix(self.noncontributing))
            rest = aux.xreplace(dict.fromkeys(self.noncontributing, 0))
            if any(e.has(*self.noncontributing) for e in A_nc):
                raise CompilationError("the auxiliary equations are not linear in the "
                                       "noncontributing forces " + ", ".join(map(str, self.noncontributing)))
            self._k_aux = build("auxiliary equations", list(A_nc) + list(rest))
        bar.close()
        #: the dependent set can be chosen freely (see choose_partition): the dynamic block is
        #: unreduced (u' of all speeds from the augmented system) and B does not depend on r
        self.partition_switchable = self._augmented and not self._vel_uses_r
        self._local = threading.local()           # per-thread Workspace (see workspace())
        self._derivatives: dict = {}              # the block-derivative program, built on first use
        self._frozen = True

    # ------------------------------------------------------------ work data
    def workspace(self) -> Workspace:
        """This thread's :class:`Workspace` (the model's work buffers), created on first use.

        The model itself is immutable and can be shared; all evaluation writes go here.
        """
        try:
            return self._local.workspace
        except AttributeError:
            sizes = {"main": self._k_main.nout}
            if self._k_vel is not None:
                sizes["velocity"] = self._k_vel.nout
            if self._k_hol is not None:
                sizes["holonomic"] = self._k_hol.nout
            ws = Workspace(self._nz, sizes)
            self._local.workspace = ws
            return ws

    @property
    def has_multipliers(self) -> bool:
        """True when u' comes from the augmented system and the multipliers λ (m,) exist."""
        return self._augmented

    @property
    def velocity_constraints_use_specifieds(self) -> bool:
        """True when B or b of the velocity constraints depend on the specified inputs r."""
        return self._vel_uses_r

    # ----------------------------------------------------------- persistence (persistence.py)
    def __reduce__(self):
        """Pickle the compiled kernels and names, not the SymPy equations (``eom`` -> None);
        ``symbody.compilation.persistence.dumps(model, equations=True)`` keeps them."""
        from .persistence import reduce_model
        return reduce_model(self)

    def save(self, path: str | os.PathLike, machine_code: bool = True) -> Any:
        """Save to ``path`` for :func:`symbody.load_model` (no compilation when loaded on the
        same platform and versions).  The file holds machine code: share it like a shared
        library, and load only files you trust.  Returns the path written."""
        from .persistence import save_model
        return save_model(self, path, machine_code=machine_code)

    # ----------------------------------------------------------- immutability
    def __setattr__(self, name, value):
        if self._frozen:
            raise AttributeError(f"NumericModel is immutable; cannot set {name!r}")
        object.__setattr__(self, name, value)

    # ------------------------------------------------------------ orderings
    @staticmethod
    def _ordering(given, needed, what: str) -> tuple:
        needed = tuple(needed)
        if given is None:
            return needed
        given = tuple(given)
        if len(set(given)) != len(given):
            dup = [g for g in given if given.count(g) > 1][0]
            raise CompilationError(f"{what} lists {dup} more than once")
        missing = [s for s in needed if s not in given]
        if missing:
            raise CompilationError(f"the equations depend on {missing[0]}, which is missing from the "
                                   f"{what} given ({', '.join(map(str, given))})")
        return given

    def __repr__(self) -> str:
        name = f" {self.eom.name!r}" if getattr(self.eom, "name", None) else ""
        return (f"<NumericModel{name}: states {len(self.states)} (q {self.n}+{self.M}, u_ind {self.p}), "
                f"dependent speeds {self.m}, constants {len(self.constants)}, "
                f"specifieds {len(self.specifieds)}, backend {self.backend!r}>")

    # ------------------------------------------------------------ inputs
    def constants_array(self, p: ParameterValues) -> np.ndarray:
        """Constants as a float array in ``model.constants`` order.

        ``p``: dict keyed by Symbol or name, or a sequence in model order.
        Raises InputError naming a missing, unknown or non-finite constant.
        """
        c = len(self.constants)
        if p is None:
            if c:
                raise InputError(f"constants are needed: {', '.join(map(str, self.constants))}")
            return np.empty(0)
        return constants_values(self.constants, p)

    def state_array(self, x0: StateValues) -> np.ndarray:
        """The state x = [q (N), u_ind (p), x_e (e)] as an array.

        ``x0``: dict keyed by symbol or name (values for dependent speeds are
        accepted and ignored: they follow from the constraints), or an array of
        length N + p + e (or N + o + e: the dependent speeds are then dropped).
        """
        if not isinstance(x0, Mapping):
            try:
                x0 = np.array(x0, dtype=float).ravel()
            except (TypeError, ValueError) as exc:
                raise InputError(f"state must be numbers or a dict keyed by symbol: {x0!r}") from exc
            if x0.size == self.N + self.o + self.e and self.m:
                # the dependent speeds follow from the constraints
                x0 = np.concatenate([x0[:self.N + self.p], x0[self.N + self.o:]])
        dep = symbol_index(self.dependent_speeds)
        return values_by_symbol(
            x0, self.states, "state", ignore=lambda key: key in dep,
            wording={"missing": "missing initial value for state {symbol}",
                     "hint": " (for a dependent coordinate give a guess; it is solved by Newton's method)"})

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

    # ------------------------------------------------------------ z assembly
    def _p(self, p) -> np.ndarray:
        if type(p) is np.ndarray and p.shape == (self._nc,) and p.dtype == float:
            return p
        return self.constants_array(p)

    def _z(self, t: float, q, u, p, r, need_r: bool = True, partition: Partition | None = None,
           extra=None) -> np.ndarray:
        """z with t, q, u (o, or p and then u_dep solved), r, constants filled; u' zero.

        When ``need_r`` is False and ``r`` is None the specifieds are left at zero.
        ``partition``: u of length p are the speeds ``partition.independent_speeds``.
        """
        z = np.zeros(self._nz)
        z[0] = t
        if self.e:
            # extra states: NaN unless given (only the dynamics and their own ODE use them)
            z[self._ixe:] = np.nan if extra is None else self._extra_values(extra)
        q = np.asarray(q, dtype=float)
        if q.shape != (self.N,):
            raise InputError(f"q must have {self.N} values ({', '.join(map(str, self.coordinates))}), "
                             f"got shape {q.shape}")
        z[1:1 + self.N] = q
        z[self._ic:self._iudot] = self._p(p)
        if self._ir != self._ic and (need_r or r is not None):
            z[self._ir:self._ic] = self.specifieds_array(r, t, None)
        if u is not None:
            u = np.asarray(u, dtype=float)
            if u.shape == (self.o,):
                z[self._iu:self._ir] = u
            elif u.shape == (self.p,):
                if partition is None or partition == self.default_partition:
                    z[self._iu:self._iud] = u
                    if self.m:
                        self._solve_udep(z)
                else:
                    z[self._iu + partition._uind] = u
                    self._solve_udep(z, partition)
            else:
                raise InputError(f"u must have {self.o} values ({', '.join(map(str, self.speeds))}) "
                                 f"or the {self.p} independent ones, got shape {u.shape}")
        return z

    def _extra_values(self, extra) -> np.ndarray:
        """Extra-state values (e,) from an array or a dict keyed by symbol or name."""
        return values_by_symbol(extra, self.extra_states, "extra state")

    def _need_extra(self, extra, what: str) -> None:
        if self.e and extra is None:
            raise InputError(f"{what} depends on the extra states "
                             f"{', '.join(map(str, self.extra_states))}: pass their values as extra=")

    def _solve_udep(self, z: np.ndarray, partition: Partition | None = None,
                    out: np.ndarray | None = None) -> None:
        """Write u_dep = -B_dep^{-1} (B_ind u_ind + b) into z (dependent speeds of ``partition``)."""
        m, o = self.m, self.o
        if not m:
            return
        if out is None:
            out = np.empty(self._k_vel.nout)
        self._k_vel.into(z, out)
        if partition is None:
            # B_dep u_dep = -(B_ind u_ind + b), both from the kernel: solved in place
            sol, info = solve(out[self._s_Bdep].reshape(m, m, order="F"), out[self._s_vrhs],
                              overwrite_b=True)
            dep_names = self.dependent_speeds
        else:
            ind, dep = partition._uind, partition._udep
            B = out[self._s_B].reshape(m, o)
            sol, info = solve_dependent(B, out[self._s_b], z[self._iu + ind], ind, dep)
            dep_names = [self.speeds[i] for i in dep]
        if info != 0:
            raise SingularConstraintError(
                f"the velocity constraints are singular in the dependent speeds "
                f"{', '.join(map(str, dep_names))} at t = {z[0]:.6g} "
                f"(q = {np.array2string(z[1:1 + self.N], precision=4)})")
        if partition is None:
            z[self._iud:self._ir] = sol
        else:
            z[self._iu + partition._udep] = sol

    # ------------------------------------------------------------ right-hand side
    def rhs(self, t: float, x: ArrayLike, p: ParameterValues, r: InputValues = None, partition: Partition | None = None) -> np.ndarray:
        """x' = f(t, x) for the state x = [q (N), u_ind (p), x_e (e)]; returns shape (N + p + e,).

        ``r``: specified inputs, an array (len(specifieds)) or callable ``r(t, x)``
        (always called with the state in the model's layout [q, u_ind]).
        ``partition``: integrate in another dependent set: x = [q, u[partition.independent_speeds]]
        and x' in the same layout (needs ``partition_switchable`` unless it is the default).
        """
        if partition is not None and partition.dependent_speeds != self.default_partition.dependent_speeds:
            return self._rhs_partition(t, x, p, r, partition)
        if type(x) is not np.ndarray or x.shape != (self._nx,) or x.dtype != float:
            x = np.asarray(x, dtype=float)
            if x.shape != (self._nx,):
                raise InputError(f"the state has {self._nx} values ({', '.join(map(str, self.states))}), "
                                 f"got shape {x.shape}")
        if type(p) is not np.ndarray or p.shape != (self._nc,) or p.dtype != float:
            p = self.constants_array(p)
        # r first: a callable r(t, x) may evaluate this model too (and use the workspace)
        rv = self.specifieds_array(r, t, x) if self._ir != self._ic else None
        ws = self.workspace()
        z = ws.z
        z[0] = t
        nxm = self._nxm
        z[1:1 + nxm] = x[:nxm]
        if self.e:
            z[self._ixe:] = x[nxm:]
        z[self._ic:self._iudot] = p
        if rv is not None:
            z[self._ir:self._ic] = rv
        if self.m:
            self._solve_udep(z, out=ws.velocity)
        return self._rhs_z(z, ws=ws)

    def rhs_function(self, p: ParameterValues) -> Callable[..., np.ndarray]:
        """``f(t, x, r=None)``: :meth:`rhs` with the constants ``p`` bound, for ODE solvers.

        The same numbers as ``rhs(t, x, p, r)`` (model layout: ``x`` a float64 array
        (N + p + e,), ``r`` None or the specified inputs' values), with the per-call work
        cut to the kernels and one in-place LAPACK call per linear system (u_dep from
        B_dep u_dep = -(B_ind u_ind + b), then u' (and λ) from S y = s), on buffers of its
        own: one function per integration, not to be shared by threads.  Anything unusual
        (a singular system, a symmetric mass matrix that is not positive definite) is
        handed to :meth:`rhs`, which raises or solves it the general way.
        """
        P = self.constants_array(p).copy()
        sizes = {"main": self._k_main.nout}
        if self._k_vel is not None:
            sizes["velocity"] = self._k_vel.nout
        ws = Workspace(self._nz, sizes)
        z, out = ws.z, ws.main
        z[self._ic:self._iudot] = P
        N, K, nx, nxm, e, m = self.N, self._K, self._nx, self._nxm, self.e, self.m
        ir, ic, ixe = self._ir, self._ic, self._ixe
        has_r = ir != ic
        main = self._k_main.into
        S = out[self._s_S].reshape(K, K, order="F")       # a view of the kernel's output
        s = out[self._s_rhs]
        if self._augmented:
            system = in_place_solver(S, s)
        elif self._Md_symmetric:
            system = in_place_solver(S, s, positive_definite=True)
        else:          # M_d stored row by row: the general path (a copy, then LU)
            system = None
        if m:
            vel, vout = self._k_vel.into, ws.velocity
            vrhs = vout[self._s_vrhs]
            dependent = in_place_solver(vout[self._s_Bdep].reshape(m, m, order="F"), vrhs)
            iud = self._iud
        extra = self._k_extra.into if e else None
        # after the solve, out[:N + p] is [q', u_ind'] (the layout of models compiled since
        # the kernel wrote the right-hand side before S; a saved older model assembles x')
        contiguous = self._s_rhs.start == N
        specifieds_array, rhs = self.specifieds_array, self.rhs
        shape = (nx,)

        def f(t: float, x: np.ndarray, r: Any = None) -> np.ndarray:
            if system is None or x.shape != shape:
                return rhs(t, x, P, r)                # (rhs checks the state and says what is wrong)
            z[0] = t
            z[1:1 + nxm] = x[:nxm]
            if e:
                z[ixe:] = x[nxm:]
            if has_r:
                z[ir:ic] = specifieds_array(r, t, x)
            if m:
                vel(z, vout)
                if dependent():
                    return rhs(t, x, P, r)            # singular B_dep: rhs raises, naming it
                z[iud:ir] = vrhs
            main(z, out)
            if system():
                return rhs(t, x, P, r)                # singular, or not definite: the general way
            if contiguous and not e:
                return out[:nx].copy()
            xdot = np.empty(nx)
            xdot[:N] = out[:N]
            xdot[N:nxm] = s[:nxm - N]
            if e:
                extra(z, xdot[nxm:])
            return xdot

        return f

    def check_partition(self, partition: Partition) -> None:
        """Raise InputError unless ``partition`` fits this model and its dependent speeds can be used."""
        if (partition.N, partition.o) != (self.N, self.o) or len(partition.dependent_coordinates) != self.M \
                or len(partition.dependent_speeds) != self.m:
            raise InputError(f"{partition} does not fit this model (N = {self.N}, o = {self.o}, "
                             f"M = {self.M}, m = {self.m})")
        if partition.dependent_speeds != self.default_partition.dependent_speeds and not self.partition_switchable:
            why = ("the dynamic equations are in reduced form, written for the independent speeds "
                   f"{', '.join(map(str, self.independent_speeds))}" if self.dynamic_reduced else
                   "the velocity constraints depend on the specified inputs")
            raise InputError(f"this model cannot use the dependent speeds "
                             f"{', '.join(str(self.speeds[i]) for i in partition.dependent_speeds)}: {why}")

    def _rhs_partition(self, t: float, x, p, r, partition: Partition) -> np.ndarray:
        self.check_partition(partition)
        N = self.N
        x = np.asarray(x, dtype=float)
        if x.shape != (self._nx,):
            raise InputError(f"the state has {self._nx} values, got shape {x.shape}")
        z = np.zeros(self._nz)
        z[0] = t
        z[1:1 + N] = x[:N]
        z[self._ic:self._iudot] = self._p(p)
        z[self._iu + partition._uind] = x[N:self._nxm]
        if self.e:
            z[self._ixe:] = x[self._nxm:]
        self._solve_udep(z, partition)
        if self._ir != self._ic:
            xm = np.concatenate([x[:N], z[self._iu:self._iud], x[self._nxm:]]) if callable(r) else None
            z[self._ir:self._ic] = self.specifieds_array(r, t, xm)
        return self._rhs_z(z, ind=partition._uind)

    def _rhs_z(self, z: np.ndarray, want_all: bool = False, ind: np.ndarray | None = None,
               ws: Workspace | None = None):
        """Evaluate q' and u' at a filled z (u_dep already solved); ``ind``: which u' are states."""
        N, K = self.N, self._K
        if ws is None:
            ws = self.workspace()
        out = ws.main
        self._k_main.into(z, out)
        if self._augmented:
            S = out[self._s_S].reshape(K, K, order="F")     # a view: solved in place
            sol, info = solve(S, out[self._s_rhs], overwrite_b=True)
        elif self._Md_symmetric:
            S = out[self._s_S].reshape(K, K, order="F")     # row by row = column by column
            sol, info = solve_symmetric(S, out[self._s_rhs], overwrite=True)
            if info:                                    # not definite: LU of a fresh copy
                self._k_main.into(z, out)
                sol, info = solve(S, out[self._s_rhs], overwrite_b=True)
        else:
            sol, info = solve(out[self._s_S].reshape(K, K).copy(), out[self._s_rhs], overwrite_b=True)
        if info != 0:
            what = "the augmented system [[M_d, -B_a^T], [B_a, 0]]" if self._augmented else "the dynamic mass matrix M_d"
            raise SingularMassMatrixError(
                f"{what} is singular at t = {z[0]:.6g} "
                f"(q = {np.array2string(z[1:1 + N], precision=4)})")
        xdot = np.empty(self._nx)
        xdot[:N] = out[:N]
        xdot[N:self._nxm] = sol[:self.p] if ind is None else sol[ind]
        if self.e:
            self._k_extra.into(z, xdot[self._nxm:])
        if want_all:
            return xdot, sol, out
        return xdot

    @property
    def rhs_batch_outputs(self) -> int:
        """Numbers held per state by :meth:`rhs_many` (its kernels' outputs, mass matrix
        included): k states take about 8 k times this many bytes."""
        return self._k_main.nout + (self._k_vel.nout if self.m else 0)

    def rhs_many(self, t: ArrayLike, X: ArrayLike, p: ParameterValues, r: InputValues = None) -> np.ndarray:
        """x' for many states at once: X (k, N + p) -> (k, N + p).

        ``t``: scalar or (k,); ``r``: None, (len(specifieds),) or (k, len(specifieds)).
        """
        Z = self._Z_many(t, X, p, r)
        return self._rhs_many_Z(Z)[0]

    def _Z_many(self, t, X, p, r, U=None, partition: Partition | None = None) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self._nx:
            raise InputError(f"X must have shape (k, {self._nx}), got {X.shape}")
        k = X.shape[0]
        Z = np.zeros((k, self._nz))
        Z[:, 0] = np.broadcast_to(np.asarray(t, dtype=float), (k,))
        nxm = self._nxm
        Z[:, 1:1 + nxm] = X[:, :nxm]
        if self.e:
            Z[:, self._ixe:] = X[:, nxm:]
        Z[:, self._ic:self._iudot] = self._p(p)
        if partition is not None and partition != self.default_partition:
            Z[:, self._iu:self._ir] = 0.0
            Z[:, self._iu + partition._uind] = X[:, self.N:nxm]
        else:
            partition = None
        s = len(self.specifieds)
        if s:
            if callable(r):
                R = np.array([self.specifieds_array(r, Z[i, 0], X[i]) for i in range(k)]).reshape(k, s)
            else:
                R = np.asarray(r if not isinstance(r, Mapping) else self.specifieds_array(r), dtype=float)
                if R.ndim == 1:
                    R = self.specifieds_array(R)
                R = np.broadcast_to(R, (k, s))
            Z[:, self._ir:self._ic] = R
        if U is not None:
            Z[:, self._iu:self._ir] = U
        elif self.m:
            self._solve_udep_many(Z, partition)
        return Z

    def _solve_udep_many(self, Z: np.ndarray, partition: Partition | None = None) -> None:
        m, o, p = self.m, self.o, self.p
        out = self._k_vel.many(Z)
        B = out[:, self._s_B].reshape(-1, m, o)
        if partition is None:
            ind, dep = slice(0, p), slice(p, o)
            names = self.dependent_speeds
        else:
            ind, dep = partition._uind, partition._udep
            names = [self.speeds[i] for i in dep]
        U = Z[:, self._iu:self._ir]
        rhs = -(np.einsum("kij,kj->ki", B[:, :, ind], U[:, ind]) + out[:, self._s_b])
        try:
            U[:, dep] = np.linalg.solve(B[:, :, dep], rhs[..., None])[..., 0]
        except np.linalg.LinAlgError as exc:
            raise SingularConstraintError(
                "the velocity constraints are singular in the dependent speeds "
                f"{', '.join(map(str, names))} at one of the states") from exc
        Z[:, self._iu:self._ir] = U

    def _rhs_many_Z(self, Z: np.ndarray):
        N, K, k = self.N, self._K, Z.shape[0]
        out = self._k_main.many(Z)
        S = out[:, self._s_S].reshape(k, K, K)
        if self._augmented:
            S = np.swapaxes(S, 1, 2)                    # stored column by column
        try:
            sol = np.linalg.solve(S, out[:, self._s_rhs][..., None])[..., 0]
        except np.linalg.LinAlgError as exc:
            raise SingularMassMatrixError("the dynamic mass matrix is singular at one of the states") from exc
        Xd = np.empty((k, self._nx))
        Xd[:, :N] = out[:, :N]
        Xd[:, N:self._nxm] = sol[:, :self.p]
        if self.e:
            Xd[:, self._nxm:] = self._k_extra.many(Z)
        return Xd, sol, out

    # ------------------------------------------------------------ kinematics
    def full_speeds(self, q: ArrayLike, u_ind: ArrayLike, p: ParameterValues, t: float = 0.0, r: InputValues = None, partition: Partition | None = None) -> np.ndarray:
        """All speeds u (o,) in model order, the dependent ones solved from B u + b = 0.

        ``u_ind``: the p independent speeds (``partition.independent_speeds`` when a
        partition is given, else the model's).
        """
        u_ind = np.asarray(u_ind, dtype=float)
        if u_ind.shape != (self.p,):
            raise InputError(f"u_ind must have {self.p} values, got shape {u_ind.shape}")
        z = self._z(t, q, u_ind, p, r, need_r=self._kin_uses_r, partition=partition)
        return z[self._iu:self._ir].copy()

    def qdot(self, q: ArrayLike, u: ArrayLike, p: ParameterValues, t: float = 0.0, r: InputValues = None) -> np.ndarray:
        """q' (N,) from the kinematic equations; ``u`` all o speeds or the p independent ones."""
        z = self._z(t, q, u, p, r, need_r=self._kin_uses_r)
        out = np.empty(self._k_main.nout)
        self._k_main.into(z, out)
        return out[:self.N].copy()

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
        self._need_extra(extra, "the accelerations")
        z = self._z(t, q, u, p, r, partition=partition, extra=extra)
        _, sol, _ = self._rhs_z(z, want_all=True)
        o, m, p_ = self.o, self.m, self.p
        if self._augmented:
            return sol[:o].copy(), sol[o:o + m].copy()
        if not self.m:
            return sol[:o].copy(), np.empty(0)
        # reduced: u_dep' from the acceleration constraints B_a u' + b_a = 0
        out = np.empty(m * o + m)
        self._k_acc.into(z, out)
        Ba = out[:m * o].reshape(m, o)
        ud_dep, info = solve_dependent(Ba, out[m * o:m * o + m], sol[:p_])
        if info != 0:
            raise SingularConstraintError(f"the acceleration constraints are singular in the dependent "
                                          f"accelerations at t = {t:.6g}")
        return np.concatenate([sol[:p_], ud_dep]), np.full(m, np.nan)

    # ------------------------------------------------------------ constraints
    def holonomic_residual(self, q: ArrayLike, p: ParameterValues, t: float = 0.0) -> np.ndarray:
        """f_h(q, t) (M,)."""
        if not self.M:
            return np.empty(0)
        z = self._z(t, q, None, p, None, need_r=False)
        out = np.empty(self._k_hol.nout)
        self._k_hol.into(z, out)
        return out[:self.M].copy()

    def holonomic(self, q: ArrayLike, p: ParameterValues, t: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """(f_h (M,), ∂f_h/∂q (M, N)) from one kernel evaluation."""
        if not self.M:
            return np.empty(0), np.empty((0, self.N))
        z = self._z(t, q, None, p, None, need_r=False)
        out = np.empty(self._k_hol.nout)
        self._k_hol.into(z, out)
        return out[:self.M], out[self.M:].reshape(self.M, self.N)

    def holonomic_jacobian(self, q: ArrayLike, p: ParameterValues, t: float = 0.0) -> np.ndarray:
        """∂f_h/∂q (M, N)."""
        if not self.M:
            return np.empty((0, self.N))
        z = self._z(t, q, None, p, None, need_r=False)
        out = np.empty(self._k_hol.nout)
        self._k_hol.into(z, out)
        return out[self.M:].reshape(self.M, self.N).copy()

    def velocity_constraint_matrix(self, q: ArrayLike, p: ParameterValues, t: float = 0.0, r: InputValues = None) -> np.ndarray:
        """B(q, t) (m, o) of the velocity constraints B u + b = 0."""
        if not self.m:
            return np.empty((0, self.o))
        z = self._z(t, q, None, p, r, need_r=self._kin_uses_r)
        out = np.empty(self._k_vel.nout)
        self._k_vel.into(z, out)
        return out[self._s_B].reshape(self.m, self.o).copy()

    def velocity_residual(self, q: ArrayLike, u: ArrayLike, p: ParameterValues, t: float = 0.0, r: InputValues = None) -> np.ndarray:
        """B u + b (m,) for all o speeds ``u``."""
        if not self.m:
            return np.empty(0)
        u = np.asarray(u, dtype=float)
        if u.shape != (self.o,):
            raise InputError(f"u must have all {self.o} speeds, got shape {u.shape}")
        z = self._z(t, q, u, p, r, need_r=self._kin_uses_r)
        out = np.empty(self._k_vel.nout)
        self._k_vel.into(z, out)
        return out[self._s_B].reshape(self.m, self.o) @ u + out[self._s_b]

    def project_coordinates(self, q: ArrayLike, p: ParameterValues, t: float = 0.0, tol: float = 1e-10, max_iter: int = 50,
                            r: InputValues = None, partition: Partition | None = None) -> tuple[np.ndarray, bool, float]:
        """q with q_dep solved from f_h(q, t) = 0 by damped Newton's method (q_ind held).

        ``partition``: solve for its dependent coordinates instead of the model's.
        Returns ``(q, converged, residual_norm)``.  Raises SingularConstraintError
        when ∂f_h/∂q_dep is singular.
        """
        q = np.array(q, dtype=float)
        if not self.M:
            return q, True, 0.0
        z = self._z(t, q, None, p, r, need_r=False)
        return self._project_z(z, tol, max_iter, partition)

    def _project_z(self, z: np.ndarray, tol: float = 1e-10, max_iter: int = 50,
                   partition: Partition | None = None):
        """Damped Newton on q_dep (of ``partition``, default the model's) inside z (modified in place).

        Stops when a full Newton step is smaller than ``tol * (1 + |q_dep|)``:
        convergence is quadratic, so the residual after that step is at round-off.
        Returns (q copy, converged, max |f_h| before the last step).
        """
        M, N, n = self.M, self.N, self.n
        hol = self._k_hol
        out = np.empty(hol.nout)
        hol.into(z, out)
        if partition is None or partition == self.default_partition:
            sl, cols = slice(1 + n, 1 + N), slice(n, N)
            dep_names = self.dependent_coordinates
        else:
            sl, cols = 1 + partition._qdep, partition._qdep
            dep_names = [self.coordinates[i] for i in partition._qdep]
        norm = float(np.abs(out[:M]).max())
        converged = norm == 0.0
        it = 0
        while not converged and it < max_iter and norm == norm and norm != np.inf:
            it += 1
            dq, info = solve(out[M:].reshape(M, N)[:, cols].copy(), out[:M].copy())
            if info != 0:
                raise SingularConstraintError(
                    f"the holonomic constraints are singular in the dependent coordinates "
                    f"{', '.join(map(str, dep_names))} at q = "
                    f"{np.array2string(z[1:1 + N], precision=4)}")
            qdep = z[sl].copy()
            small = float(np.abs(dq).max()) <= tol * (1.0 + float(np.abs(qdep).max()))
            scale = 1.0
            while True:
                z[sl] = qdep - scale * dq
                hol.into(z, out)
                new = float(np.abs(out[:M]).max())
                if small or new <= norm or scale < 1e-3:
                    break
                scale *= 0.5
            converged = small
            norm = new
            if norm == 0.0:
                converged = True
        return z[1:1 + N].copy(), converged, norm

    def consistent_state(self, x_guess: StateValues, p: ParameterValues, t: float = 0.0) -> np.ndarray:
        """x with q_dep solved from f_h = 0 by Newton's method from the guess (q_ind held).

        Nothing else changes (u_dep are not states; they follow from the
        velocity constraints).  Raises InputError when Newton's method does not
        converge, SingularConstraintError when ∂f_h/∂q_dep is singular.
        """
        x = self.state_array(x_guess).copy()
        if not self.M:
            return x
        q, ok, norm = self.project_coordinates(x[:self.N], p, t)
        if not ok or norm > 1e-9:
            raise InputError(
                "could not solve the holonomic constraints for the dependent coordinates "
                f"{', '.join(map(str, self.dependent_coordinates))} from the guess "
                f"{np.array2string(x[self.n:self.N], precision=4)} (residual {norm:.3g}); "
                + self._assembly_diagnosis(x[:self.N], p, t))
        x[:self.N] = q
        return x

    def _assembly_diagnosis(self, q0: np.ndarray, p: ParameterValues, t: float) -> str:
        """Why the constraints could not be solved: the least-squares configuration (scipy's
        least_squares over q_dep from q0) and each equation's residual there."""
        from scipy.optimize import least_squares

        n, N = self.n, self.N
        q = np.array(q0, dtype=float)

        def f(qd):
            q[n:N] = qd
            return self.holonomic_residual(q, p, t)

        try:
            sol = least_squares(f, q0[n:N], method="lm", xtol=1e-14, ftol=1e-14, max_nfev=200 * N)
        except (ValueError, SymbodyError):
            return "give a better guess"
        res = f(sol.x)
        if float(np.max(np.abs(res))) < 1e-8:
            return ("a solution exists nearby (least squares found q_dep = "
                    f"{np.array2string(sol.x, precision=6)}): give that as the guess")
        exprs = list(self.eom.holonomic) if self.eom is not None else [None] * self.M
        parts = []
        for i in np.argsort(-np.abs(res))[:6]:
            e = exprs[i]
            text = "" if e is None else " " + (str(e) if len(str(e)) <= 60 else str(e)[:57] + "...")
            parts.append(f"f_h[{i}]{text}: {res[i]:.3g}")
        return ("the configuration cannot be assembled with these constants and independent "
                "coordinates: the smallest residuals least squares reaches over the dependent "
                "coordinates are " + "; ".join(parts))

    # ------------------------------------------------------------ full coordinates
    def augmented_blocks(self, t: float, q: ArrayLike, u: ArrayLike, p: ParameterValues,
                         r: InputValues = None, extra: ArrayLike | None = None) -> AugmentedBlocks:
        """The unreduced equations at (t, q, u) for all o speeds, without solving them.

        ``M_d u' = forcing + B_a^T λ`` (forcing = -g_d) with ``B_a u' = acc_rest``
        (acc_rest = -b_a): q' (N,), M_d (o, o), forcing (o,), B_a (m, o), acc_rest (m,),
        and the extra states' derivatives x_e' (e,) (None without extra states).  Needs an
        unreduced dynamic block (``partition_switchable``); used by the full-coordinate
        integration through singular configurations.
        """
        if not self._augmented:
            raise InputError("the full-coordinate blocks need unreduced dynamic equations with "
                             "velocity constraints (dependent speeds); these equations are "
                             + ("in reduced form" if self.dynamic_reduced else "unconstrained"))
        u = np.asarray(u, dtype=float)
        if u.shape != (self.o,):
            raise InputError(f"u must have all {self.o} speeds, got shape {u.shape}")
        z = self._z(t, q, u, p, r, extra=extra if self.e else None)
        out = np.empty(self._k_main.nout)
        self._k_main.into(z, out)
        K, o, N = self._K, self.o, self.N
        S = out[self._s_S].reshape(K, K, order="F")
        rhs = out[self._s_rhs]
        xe = None
        if self.e:
            xe = np.empty(self.e)
            self._k_extra.into(z, xe)
        return AugmentedBlocks(out[:N], S[:o, :o], rhs[:o], S[o:, :o], rhs[o:], xe)

    def velocity_constraints(self, q: ArrayLike, p: ParameterValues, t: float = 0.0,
                             r: InputValues = None) -> tuple[np.ndarray, np.ndarray]:
        """(B (m, o), b (m,)) of the velocity constraints B u + b = 0 at (t, q)."""
        if not self.m:
            return np.empty((0, self.o)), np.empty(0)
        z = self._z(t, q, None, p, r, need_r=self._kin_uses_r)
        out = np.empty(self._k_vel.nout)
        self._k_vel.into(z, out)
        return out[self._s_B].reshape(self.m, self.o), out[self._s_b]

    # ------------------------------------------------------------ partitions
    def constraint_matrices(self, q: ArrayLike, p: ParameterValues, t: float = 0.0, r: InputValues = None) -> tuple[np.ndarray, np.ndarray]:
        """(∂f_h/∂q (M, N), B (m, o)) at the configuration q: the matrices whose columns a
        :class:`Partition` splits into independent and dependent ones."""
        z = self._z(t, q, None, p, r, need_r=self._vel_uses_r)
        if self.M:
            out = np.empty(self._k_hol.nout)
            self._k_hol.into(z, out)
            J = out[self.M:].reshape(self.M, self.N)
        else:
            J = np.empty((0, self.N))
        if self.m:
            out = np.empty(self._k_vel.nout)
            self._k_vel.into(z, out)
            B = out[self._s_B].reshape(self.m, self.o)
        else:
            B = np.empty((0, self.o))
        return J, B

    def choose_partition(self, q: ArrayLike, p: ParameterValues, t: float = 0.0, r: InputValues = None) -> Partition:
        """The best conditioned dependent set at q (a :class:`Partition`).

        Column-pivoted QR of ∂f_h/∂q (M x N) picks the M dependent coordinates and of
        B (m x o) the m dependent speeds (greedily maximizing ``|det|`` of the dependent
        columns).  A model that is not ``partition_switchable`` keeps its dependent
        speeds.
        """
        J, B = self.constraint_matrices(q, p, t, r)
        qdep = pivoted_columns(J)[0]
        udep = pivoted_columns(B)[0] if self.partition_switchable else self.default_partition.dependent_speeds
        return Partition(qdep, udep, self.N, self.o)

    def partition_names(self, partition: Partition) -> tuple[tuple, tuple]:
        """(dependent coordinates, dependent speeds) of ``partition`` as symbols."""
        return (tuple(self.coordinates[i] for i in partition.dependent_coordinates),
                tuple(self.speeds[i] for i in partition.dependent_speeds))

    # ------------------------------------------------------------ auxiliary
    def auxiliary_forces(self, q: ArrayLike, u: ArrayLike, udot: ArrayLike, p: ParameterValues, t: float = 0.0, r: InputValues = None,
                         extra: ArrayLike | None = None) -> np.ndarray:
        """Values of ``model.noncontributing`` from the auxiliary equations (least squares);
        ``extra``: the extra states' values when the model has any."""
        if self._k_aux is None:
            raise InputError("these equations of motion have no auxiliary equations / "
                             "noncontributing forces (form them with u_auxiliary)")
        self._need_extra(extra, "the auxiliary equations")
        z = self._z(t, q, u, p, r, extra=extra)
        udot = np.asarray(udot, dtype=float)
        if udot.shape != (self.o,):
            raise InputError(f"udot must have {self.o} values, got shape {udot.shape}")
        z[self._iudot:self._iudot + self.o] = udot
        out = self._k_aux(z)
        s, nc = self._naux, len(self.noncontributing)
        A = out[:s * nc].reshape(s, nc)
        c = out[s * nc:]
        if s == nc:
            sol, info = solve(A.copy(), -c)
            if info == 0:
                return sol
        return np.linalg.lstsq(A, -c, rcond=None)[0]

    # ------------------------------------------------------------ batch evaluation
    def speeds_many(self, t: ArrayLike, X: ArrayLike, p: ParameterValues, r: InputValues = None, partition: Partition | None = None) -> np.ndarray:
        """All speeds u (k, o), model order, for states X (k, N + p) in the layout of ``partition``.

        The dependent speeds are solved from B u + b = 0 for each state.
        """
        Z = self._Z_many(t, X, p, r, partition=partition)
        return Z[:, self._iu:self._ir].copy()

    def evaluate_samples(self, t: ArrayLike, X: ArrayLike, p: ParameterValues, r: InputValues = None, *, speeds: ArrayLike | None = None, multipliers: bool = True) -> SampleValues:
        """Speeds, constraint residuals and multipliers for states X (k, N + p) at times t (k,).

        ``speeds`` (k, o): all speeds when already known (nothing is solved then).
        Returns a :class:`SampleValues` (``multipliers`` None without an augmented system).
        """
        Z = self._Z_many(t, X, p, r, U=speeds)
        k = Z.shape[0]
        u = Z[:, self._iu:self._ir].copy()
        hol = self._k_hol.many(Z)[:, :self.M] if self.M else np.empty((k, 0))
        if self.m:
            out = self._k_vel.many(Z)
            B = out[:, self._s_B].reshape(k, self.m, self.o)
            vel = np.einsum("kij,kj->ki", B, u) + out[:, self._s_b]
        else:
            vel = np.empty((k, 0))
        lam = None
        if multipliers and self._augmented and k:
            lam = self._rhs_many_Z(Z)[1][:, self.o:]
        return SampleValues(u, hol, vel, lam)

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
        z = np.zeros(program.nz)
        z[0] = t
        z[program.iq] = np.asarray(q, dtype=float)
        z[program.iu] = np.asarray(u, dtype=float)
        if len(self.specifieds):
            z[program.ir] = np.zeros(len(self.specifieds)) if r is None else np.asarray(r, dtype=float)
        z[program.ic] = self._p(p)
        return program(z)


class AugmentedBlocks(NamedTuple):
    """The unreduced equations at one state (see :meth:`NumericModel.augmented_blocks`)."""

    qdot: np.ndarray          #: q' (N,)
    mass: np.ndarray          #: M_d (o, o)
    forcing: np.ndarray       #: -g_d (o,)
    acc_matrix: np.ndarray    #: B_a (m, o)
    acc_rest: np.ndarray      #: -b_a (m,)
    extra: np.ndarray | None  #: x_e' (e,) or None


class SampleValues(NamedTuple):
    """What :meth:`NumericModel.evaluate_samples` returns for k states."""

    speeds: np.ndarray                 #: all speeds u (k, o), model order
    holonomic: np.ndarray              #: f_h (k, M)
    velocity: np.ndarray               #: B u + b (k, m)
    multipliers: np.ndarray | None     #: λ (k, m) of the augmented system, or None


def solve_dependent(B: np.ndarray, rest: np.ndarray, x_ind: np.ndarray,
                    independent: Sequence[int] | None = None, dependent: Sequence[int] | None = None) -> tuple[np.ndarray, int]:
    """x_dep from the linear constraints B x + rest = 0: B[:, dep] x_dep = -(B[:, ind] x_ind + rest).

    ``B`` (m, o); ``independent`` / ``dependent``: column indices (default: the first
    o - m columns are independent, the last m dependent).  Returns ``(x_dep, info)``
    (info > 0: singular).  Used for the dependent speeds (B u + b = 0) and the dependent
    accelerations of a reduced dynamic block (B_a u' + b_a = 0).
    """
    m, o = B.shape
    if independent is None:
        rhs = -(B[:, :o - m] @ x_ind + rest)
        return solve(B[:, o - m:].copy(), rhs)
    rhs = -(B[:, independent] @ x_ind + rest)
    return solve(B[:, dependent], rhs)


def solve_dynamics(Md: np.ndarray, rhs_d: np.ndarray, Ba: np.ndarray | None = None,
                   rhs_a: np.ndarray | None = None, *, symmetric: bool = False,
                   system: np.ndarray | None = None,
                   system_rhs: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """u' (and λ) from the dynamic block, with the acceleration constraints when given::

        [ M_d  -B_a^T ] [ u' ]   [ rhs_d ]            (rhs_d = -g_d, rhs_a = -b_a)
        [ B_a    0    ] [ λ  ] = [ rhs_a ]      or    M_d u' = rhs_d

    λ has symbody's one sign convention, ``M_d u' + g_d = B_a^T λ`` (B_a^T λ the generalized
    constraint forces; the sign of SymPy's ``LagrangesMethod.rhs()``).

    Returns ``(solution, info)`` (info > 0: singular).  ``system`` ((o + m) square,
    Fortran order) and ``system_rhs`` are optional preallocated buffers (overwritten).
    """
    if Ba is None or Ba.shape[0] == 0:
        if symmetric:
            return solve_symmetric(Md, rhs_d)
        return solve(Md.copy(), rhs_d)
    m, o = Ba.shape
    A = np.zeros((o + m, o + m), order="F") if system is None else system
    b = np.empty(o + m) if system_rhs is None else system_rhs
    A[:o, :o] = Md
    A[:o, o:] = -Ba.T                 # M_d u' - B_a^T λ = -g_d: λ with SymPy's sign
    A[o:, :o] = Ba
    A[o:, o:] = 0.0
    b[:o] = rhs_d
    b[o:] = rhs_a
    return solve(A, b)


def compile(eom: EquationsOfMotion, constants: Sequence | None = None, specifieds: Sequence | None = None,
            backend: str = "auto", cache: bool = True, progress: Any = None) -> NumericModel:
    """Compile EquationsOfMotion into a :class:`NumericModel`.

    ``constants`` / ``specifieds``: optional orderings (default: the eom's, sorted
    by name); every symbol the equations use must be included.  ``backend``:
    "auto" (symengine LLVM when available, else numpy), "llvm", "lambda" or
    "numpy".  ``cache``: reuse compiled kernels from the on-disk cache
    ($SYMBODY_CACHE_DIR or ~/.cache/symbody).
    """
    return NumericModel(eom, constants=constants, specifieds=specifieds, backend=backend,
                        cache=cache, progress=progress)


def constants_values(constants: Sequence, p: Any) -> np.ndarray:
    """Constants ``p`` (dict keyed by Symbol/name, or sequence) as an array in ``constants`` order.

    Raises InputError naming a missing, unknown, ambiguous or non-finite constant.
    """
    if isinstance(p, np.ndarray) and p.dtype == float and p.shape == (len(constants),) \
            and np.isfinite(p).all():
        return p
    return values_by_symbol(p, constants, "constant")
