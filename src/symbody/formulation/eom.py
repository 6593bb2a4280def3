"""The canonical form of constrained equations of motion (DESIGN.md section 3).

An :class:`EquationsOfMotion` is an immutable, purely symbolic description of a
multibody system.  Every block is stored as "expression = 0", linear where the
mathematics makes it linear::

    holonomic            f_h(q, t)                              = 0   (M rows, or more)
    velocity             B(q, t) u + b(q, t)                    = 0   (m rows)
    kinematic            K_qd(q, t) q' + K_u(q, t) u + k(q, t)  = 0   (N = n + M rows)
    dynamic              M_d(q, t) u' + g_d(q, u, r, t)         = 0   (o = p + m rows, or p)
    acceleration         B_a(q, t) u' + b_a(q, u, t)            = 0   (m rows)
    auxiliary            a(q, u, u', r, t, F_nc)                = 0   (s rows, linear in F_nc)
    extra states         x_e' = f_e(t, q, u, x_e, r)                  (e rows, optional)

with q = [q_ind (n), q_dep (M)], u = [u_ind (p), u_dep (m)].  The dynamic block
is normally "unreduced" (formed as if every speed were independent, o rows over
all u'); the ideal-constraint dynamics then follow numerically from::

    [ M_d  -B_a^T ] [ u' ]   [ -g_d ]
    [ B_a    0    ] [ λ  ] = [ -b_a ]

where B_a^T λ are the generalized constraint forces (M_d u' + g_d = B_a^T λ: the sign
of the multipliers in SymPy's ``LagrangesMethod.mass_matrix_full`` and ``rhs()``).

A hand-derived, already reduced dynamic block (p rows over u_ind' only, the
seed chapters' Md, gd) is also accepted: ``dynamic_reduced`` is then True and
u_dep' follows from the acceleration constraints.

Extra first-order states x_e (e.g. muscle activations, see
:mod:`symbody.formulation.extra_states`) may appear in the dynamic and auxiliary
blocks; the ODE state is then [q, u_ind, x_e].
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sympy as sm

from ..compat.sympy import TIME
from ..errors import FormulationError
from ._linear_equations import (
    as_column,
    coordinate_and_speed_lists,
    dynamic_symbols_in,
    linear_coefficients,
    solve_linear,
)
from .extra_states import ExtraStates, parse_extra_states

t = TIME

__all__ = ["EquationsOfMotion", "ConstraintEquations", "AuxiliaryEquations", "SymengineDynamics"]


def _imm(M) -> sm.ImmutableMatrix:
    return sm.ImmutableMatrix(M)


class SymengineDynamics:
    """The dynamic block ``M_d u' + g_d = 0`` as the formulation formed it, in symengine.

    ``mass``: o rows of o symengine expressions; ``rest``: o expressions (g_d);
    ``names``: symengine symbol name -> the SymPy atom it stands for (a function of
    time, a derivative or a Symbol); ``to_sympy``: ``() -> (M_d, g_d)``, the SymPy
    matrices of the same expressions.  :class:`EquationsOfMotion` converts it on the
    first access of ``dynamic_mass`` / ``dynamic_rest``; ``compile`` reads the
    symengine expressions directly (DESIGN.md section 5: formation -> to_eom ->
    compile stays in symengine).

    ``forward`` (optional): ``() -> list``, the solution u' of the block (and of the
    acceleration constraints) as o symengine expressions in the same names, in the order
    of the speeds, formed by a recursion that does not go through M_d (a kinematic tree's
    articulated-body algorithm, :mod:`symbody.robots.articulated_body`); called by
    ``compile`` when it builds the tree forward-dynamics kernel, never at formation.

    ``extra`` (optional): ``{x_e: x_e'}``, extra first-order states (SymPy functions of
    time) with their derivatives in symengine (same names; no q' in them): the
    :class:`EquationsOfMotion` built from the block takes them as its extra states,
    converts them to SymPy on the first access of ``extra_derivatives`` only, and
    ``compile`` reads them directly (a muscle's fiber velocity holds its path length).
    """

    __slots__ = ("mass", "rest", "names", "to_sympy", "forward", "extra")

    def __init__(self, mass: list, rest: list, names: dict, to_sympy: Callable[[], tuple],
                 forward: Callable[[], list] | None = None, extra: dict | None = None) -> None:
        self.mass, self.rest, self.names, self.to_sympy = mass, rest, names, to_sympy
        self.forward = forward
        self.extra = dict(extra or {})

    def extra_to_sympy(self) -> list:
        """The extra states' derivatives in SymPy (in the order of ``extra``)."""
        from ..symengine_bridge import StructuredSympyConverter

        conv = StructuredSympyConverter(self.names)
        return [conv(e) for e in self.extra.values()]

    def atoms(self, dynamic: bool = True, extra: bool = True) -> set:
        """The SymPy atoms (symbols, functions of time, derivatives) the block depends on
        (``dynamic``: of M_d and g_d; ``extra``: of the extra states' derivatives)."""
        names: set = set()
        seen: set = set()
        stack = [e for row in self.mass for e in row] + list(self.rest) if dynamic else []
        if extra:
            stack += list(self.extra.values())
        while stack:  # one walk over the symengine DAG (shared subtrees visited once)
            e = stack.pop()
            if e in seen:
                continue
            seen.add(e)
            args = e.args
            if args:
                stack.extend(args)
            elif e.is_Symbol:
                names.add(e.name)
        return {self.names.get(nm) or sm.Symbol(nm) for nm in names}


@dataclass(frozen=True, kw_only=True)
class AuxiliaryEquations:
    """Kane's auxiliary equations, which bring noncontributing (constraint) forces into evidence.

    ``speeds``: the auxiliary speeds u_aux (s; zero in the motion); ``equations``: s
    expressions a(q, u, u', r, t, F_nc) = 0; ``noncontributing``: the unknown forces
    F_nc they determine (symbols the equations are linear in).
    """

    speeds: Sequence | None = None
    equations: sm.MatrixBase | Sequence | None = None
    noncontributing: Sequence | None = None


@dataclass(frozen=True, kw_only=True)
class ConstraintEquations:
    """The constraints of an :class:`EquationsOfMotion`, with the variables they make dependent.

    ``q_dep``: the dependent coordinates (M) and ``holonomic``: the configuration
    constraints f_h(q, t) = 0 (M expressions).  ``u_dep``: the dependent speeds (m) and
    ``velocity``: m expressions = 0 linear in u (q' is replaced through the kinematic
    equations; by default d/dt f_h when ``holonomic`` is given).  ``acceleration``:
    optional m expressions linear in u' (by default d/dt of the velocity constraints).
    ``auxiliary``: optional :class:`AuxiliaryEquations`.
    """

    q_dep: Sequence | None = None
    holonomic: sm.MatrixBase | Sequence | None = None
    u_dep: Sequence | None = None
    velocity: sm.MatrixBase | Sequence | None = None
    acceleration: sm.MatrixBase | Sequence | None = None
    auxiliary: AuxiliaryEquations | None = None


@dataclass(frozen=True, kw_only=True)
class CanonicalBlocks:
    """The variables and blocks of the canonical form as a formulation class extracted them
    (no parsing, no checks): what :meth:`EquationsOfMotion.from_blocks` is built from.

    Variables ``q_ind`` (n), ``q_dep`` (M), ``u_ind`` (p), ``u_dep`` (m), ``u_aux``;
    kinematic ``K_qd q' + K_u u + k = 0`` and its solution ``qdot_solution`` (N);
    holonomic ``f_h`` (M); velocity constraints ``B u + b = 0`` (m x o, m); acceleration
    constraints ``B_a u' + b_a = 0``; dynamic ``M_d u' + g_d = 0`` (o x o, o; ``reduced``:
    already reduced to the independent speeds); ``auxiliary`` rows and the
    ``noncontributing`` forces they expose.  ``dynamic_se``: the dynamic block in
    symengine (:class:`SymengineDynamics`), given instead of ``M_d`` and ``g_d`` (None).
    """

    q_ind: Sequence
    q_dep: Sequence
    u_ind: Sequence
    u_dep: Sequence
    u_aux: Sequence
    K_qd: sm.MatrixBase
    K_u: sm.MatrixBase
    k: sm.MatrixBase
    qdot_solution: sm.MatrixBase
    f_h: sm.MatrixBase
    B: sm.MatrixBase
    b: sm.MatrixBase
    B_a: sm.MatrixBase
    b_a: sm.MatrixBase
    M_d: sm.MatrixBase | None
    g_d: sm.MatrixBase | None
    reduced: bool
    auxiliary: sm.MatrixBase
    noncontributing: Sequence = ()
    dynamic_se: SymengineDynamics | None = None
    holonomic_names: Sequence = ()


def _count(name: str, doc: str) -> property:
    """A read-only property: the length of the attribute ``name``."""
    return property(lambda eom: len(getattr(eom, name)), doc=doc)


class EquationsOfMotion:
    """Constrained equations of motion in canonical form.

    Build it from a formulation object (``KanesMethod.to_eom()``,
    ``LagrangesMethod.to_eom()``) or directly from hand-derived equations::

        eom = EquationsOfMotion(q_ind, u_ind, kinematic=fk, dynamic=Fr + Frs,
                                constraints=ConstraintEquations(u_dep=ur, velocity=fn))

    Parameters
    ----------
    q_ind, u_ind : sequences of dynamicsymbols
        Independent generalized coordinates (n) and speeds (p).
    kinematic : N expressions = 0, linear in q' and u
        The kinematic differential equations f_k.
    dynamic : expressions = 0 linear in u', or a pair ``(M_d, g_d)`` meaning
        ``M_d u' + g_d = 0``.  Either ``o = p + m`` rows over all speeds'
        derivatives (unreduced), or ``p`` rows over u_ind' only (reduced, as the
        seed chapters derive by hand).
    constraints : optional :class:`ConstraintEquations`: the dependent coordinates
        (M) with the configuration constraints f_h(q, t) = 0, the dependent speeds (m)
        with the velocity (and acceleration) constraints, and the auxiliary equations.
        The old flat keywords ``q_dep``, ``holonomic``, ``u_dep``,
        ``velocity_constraints``, ``acceleration_constraints``, ``u_auxiliary``,
        ``auxiliary`` and ``noncontributing`` still work and warn (DeprecationWarning).
    constants, specifieds : optional explicit orderings; by default all free
        symbols (sorted by name) and all functions of time other than q, u.
    extra_states : optional extra first-order states x_e with their derivatives:
        a dict ``{a: f_a}``, a SymPy biomechanics object (its ``x``, ``r``,
        ``rhs()``), or a list of these (:func:`parse_extra_states`).  With
        ``specifieds`` or ``extra_states`` given, every function of time in the
        equations must be declared: one that is neither a coordinate, a speed,
        an extra state nor a specified input is an error naming it.
    name : optional name shown in the repr.
    """

    #: the bodies' masses and inertias (:mod:`.body_inertias`), set by the formulation classes'
    #: ``to_eom``; empty for hand-derived equations
    body_inertias: tuple = ()
    #: events the motion needs (a walker's heelstrike), set by the zoo entry these equations
    #: belong to; the exporters refuse to drop them unless told to (``events=False``)
    events: tuple = ()
    _contacts: tuple = ()

    @property
    def contacts(self) -> tuple:
        """The contacts the equations hold (:class:`~.contact_record.ContactRecord`, one per
        contact point), collected by the formulation classes' ``to_eom`` from their loads;
        hand-derived equations get them from ``with_contacts`` or ``symbody.compile(eom,
        contacts=[...])``.  Setting them appends to ``constants`` the symbols of their
        parameters the equations do not hold (μ and μ_s of exact friction), so that a run
        gives them like any constant."""
        return self._contacts

    @contacts.setter
    def contacts(self, records: Any) -> None:
        self._contacts = tuple(records)
        self.constants = tuple(self.constants) + _contact_constants(self._contacts, self.constants)

    def __init__(self, q_ind: Sequence, u_ind: Sequence, kinematic: sm.MatrixBase | Sequence,
                 dynamic: sm.MatrixBase | Sequence, *, constraints: ConstraintEquations | None = None,
                 constants: Sequence | None = None, specifieds: Sequence | None = None,
                 extra_states: Any = None, name: str | None = None, **old_keywords: Any) -> None:
        c = _constraint_equations(constraints, old_keywords)
        aux = c.auxiliary if c.auxiliary is not None else AuxiliaryEquations()
        self.t = t
        self.name = name
        q_ind, q_dep, u_ind, u_dep, u_aux = coordinate_and_speed_lists(q_ind, c.q_dep, u_ind, c.u_dep,
                                                                       aux.speeds)
        self.q_ind, self.q_dep = tuple(q_ind), tuple(q_dep)
        self.u_ind, self.u_dep = tuple(u_ind), tuple(u_dep)
        self.u_aux = tuple(u_aux)
        q, u = q_ind + q_dep, u_ind + u_dep

        K_qd, K_u, k, qdot_solution = _kinematic_block(kinematic, q, u, u_aux)
        qdot_map = dict(zip([qi.diff(t) for qi in q], qdot_solution))
        fh = _holonomic_block(c.holonomic, q_dep, u)
        vc, B, b = _velocity_block(c.velocity, fh, qdot_map, u_aux, u, len(u_ind), u_dep,
                                   fh.rows - len(q_dep))
        B_a, b_a = _acceleration_block(c.acceleration, vc, B, qdot_map, u, u_dep)
        M_d, g_d, reduced = _dynamic_block(dynamic, qdot_map, q, u, len(u_ind))
        aux_eqs = as_column(aux.equations, "auxiliary").xreplace(qdot_map)
        self.noncontributing = tuple(aux.noncontributing if aux.noncontributing is not None else [])

        self.kinematic_qdot = _imm(K_qd)
        self.kinematic_u = _imm(K_u)
        self.kinematic_rest = _imm(k)
        self.qdot_solution = _imm(qdot_solution)
        self.holonomic = _imm(fh)
        self.holonomic_names = tuple(f"holonomic[{i}]" for i in range(fh.rows))
        self.velocity_matrix = _imm(B)
        self.velocity_rest = _imm(b)
        self.acceleration_matrix = _imm(B_a)
        self.acceleration_rest = _imm(b_a)
        self.dynamic_mass = _imm(M_d)
        self.dynamic_rest = _imm(g_d)
        self.dynamic_reduced = bool(reduced)
        self.auxiliary = _imm(aux_eqs)

        self._attach_extra_states(parse_extra_states(extra_states))
        self._set_symbols(constants, specifieds, declared=self._extra_inputs)
        _check_accelerations_determined(self)

    # ------------------------------------------- the dynamic block, SymPy on first access
    _dynamic_mass = None
    _dynamic_rest = None
    _dynamic_se: SymengineDynamics | None = None

    def _sympy_dynamic_block(self, slot: str) -> Any:
        """The SymPy block in ``slot``, converted from the symengine forms on first access."""
        if getattr(self, slot) is None and self._dynamic_se is not None:
            self._convert_dynamics()
        return getattr(self, slot)

    def _set_dynamic_block(self, slot: str, value: Any) -> None:
        """Replace one SymPy dynamic block (the symengine forms are dropped)."""
        self._drop_symengine_dynamics()
        self.__dict__[slot] = value

    @property
    def dynamic_mass(self) -> Any:
        """M_d of ``M_d u' + g_d = 0`` (o x o, or p x p when reduced)."""
        return self._sympy_dynamic_block("_dynamic_mass")

    @dynamic_mass.setter
    def dynamic_mass(self, value: Any) -> None:
        self._set_dynamic_block("_dynamic_mass", value)

    @property
    def dynamic_rest(self) -> Any:
        """g_d of ``M_d u' + g_d = 0`` (a column)."""
        return self._sympy_dynamic_block("_dynamic_rest")

    @dynamic_rest.setter
    def dynamic_rest(self, value: Any) -> None:
        self._set_dynamic_block("_dynamic_rest", value)

    def _convert_dynamics(self) -> None:
        M_d, g_d = self._dynamic_se.to_sympy()
        self.__dict__["_dynamic_mass"] = _imm(M_d)
        self.__dict__["_dynamic_rest"] = _imm(g_d)

    def _drop_symengine_dynamics(self) -> None:
        """Before a dynamic block is replaced: keep the other one (as SymPy), forget symengine's."""
        if self._dynamic_se is not None:
            if self._dynamic_mass is None:
                self._convert_dynamics()
            self.extra_derivatives = self.extra_derivatives
            self.__dict__["_dynamic_se"] = None

    # ------------------------------------- the extra states' derivatives, SymPy on first access
    _extra_derivatives = None
    #: True while ``extra_derivatives`` are those of the symengine block (``SymengineDynamics.extra``)
    _extra_from_symengine = False

    @property
    def extra_derivatives(self) -> Any:
        """x_e' of the extra states (e x 1)."""
        if self._extra_derivatives is None and self._extra_from_symengine:
            derivs = self._dynamic_se.extra_to_sympy()
            self.__dict__["_extra_derivatives"] = _imm(sm.Matrix(len(derivs), 1, derivs))
        return self._extra_derivatives

    @extra_derivatives.setter
    def extra_derivatives(self, value: Any) -> None:
        self.__dict__["_extra_derivatives"] = value
        self.__dict__["_extra_from_symengine"] = False

    def symengine_extra_derivatives(self) -> list | None:
        """The extra states' derivatives in symengine (names of ``symengine_dynamics()``), as
        the formulation formed them, or None (given in SymPy)."""
        if not self._extra_from_symengine:
            return None
        return [self._dynamic_se.extra[x] for x in self.extra_states]

    def symengine_dynamics(self) -> SymengineDynamics | None:
        """The dynamic block as the formulation formed it in symengine, or None (built from SymPy)."""
        return self._dynamic_se

    def __copy__(self) -> EquationsOfMotion:
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def __getstate__(self) -> dict:
        """Pickled with the SymPy dynamic block (the symengine one holds a converter)."""
        if self._dynamic_se is not None and self._dynamic_mass is None:
            self._convert_dynamics()
        if self._extra_from_symengine:
            self.extra_derivatives = self.extra_derivatives
        state = dict(self.__dict__)
        state.pop("_dynamic_se", None)
        return state

    def __setstate__(self, state: dict) -> None:
        for key in ("dynamic_mass", "dynamic_rest", "contacts", "extra_derivatives"):  # earlier pickles
            if key in state:
                state["_" + key] = state.pop(key)
        self.__dict__.update(state)

    def _set_symbols(self, constants, specifieds, declared: Sequence = ()) -> None:
        """Detect (or check) the constants and specified functions of time.

        ``declared``: specified inputs declared by other means (the inputs of
        extra-state objects).  When ``specifieds`` is given, or extra states or
        ``declared`` inputs exist, every function of time must be declared.
        """
        q, u, u_aux = list(self.q), list(self.u), list(self.u_aux)
        extra = list(self.extra_states)
        lazy_extra = self._extra_from_symengine and self._extra_derivatives is None
        blocks = [self.kinematic_qdot, self.kinematic_u, self.kinematic_rest, self.holonomic,
                  self.velocity_matrix, self.velocity_rest, self.acceleration_matrix,
                  self.acceleration_rest, self.auxiliary]
        if not lazy_extra:
            blocks.append(self.extra_derivatives)
        lazy_dynamic = self._dynamic_se is not None and self._dynamic_mass is None
        if lazy_dynamic or lazy_extra:      # the atoms say it all
            blocks.append(list(self._dynamic_se.atoms(dynamic=lazy_dynamic, extra=lazy_extra)))
        if not lazy_dynamic:
            blocks += [self.dynamic_mass, self.dynamic_rest]
        known = set(q) | set(u) | set(u_aux) | set(self.qdot) | set(self.udot) | set(extra)
        found_dyn: set = set()
        found_sym: set = set()
        seen: set = set()
        stack = [e for blk in blocks for e in blk]
        while stack:  # one walk over the expression DAG (shared subtrees visited once)
            e = stack.pop()
            if id(e) in seen:
                continue
            seen.add(id(e))
            if e.is_Symbol:
                found_sym.add(e)
                continue
            if isinstance(e, sm.core.function.AppliedUndef) and e.args == (t,):
                found_dyn.add(e)
                continue
            if (isinstance(e, sm.Derivative) and set(e.variables) == {t}
                    and isinstance(e.expr, sm.core.function.AppliedUndef) and e.expr.args == (t,)):
                # a derivative of a specified motion r(t) is a specified input of its own
                found_dyn.add(e)
                found_dyn.add(e.expr)
                continue
            stack.extend(e.args)
        found_sym.discard(t)
        extra_set = set(extra)
        for d in sorted(found_dyn, key=_time_order):
            if isinstance(d, sm.Derivative) and d.expr in extra_set:
                raise FormulationError(
                    f"the equations contain {d}, the derivative of the extra state {d.expr}; "
                    "extra states enter the equations only through their values (their "
                    "derivatives are given by extra_states)")
        nc = set(self.noncontributing)
        auto_spec = sorted((d for d in found_dyn if d not in known and d not in nc), key=_time_order)
        auto_const = sorted((s for s in found_sym if s not in nc), key=str)
        declared = list(declared)
        # extra states held constant between events (a contact's impact state) declare no inputs
        derivs = (self._dynamic_se.extra.values() if lazy_extra else self.extra_derivatives)
        strict = specifieds is not None or any(d != 0 for d in derivs) or bool(declared)
        if not strict:
            self.specifieds = tuple(auto_spec)
        else:
            spec = list(specifieds) if specifieds is not None else []
            spec += [r for r in declared if r not in spec and r in set(auto_spec)]
            for r in spec:
                if r in extra_set:
                    raise FormulationError(f"{r} is declared both as an extra state and as a "
                                           "specified input")
            missing = [s for s in auto_spec if s not in spec]
            if missing:
                raise FormulationError(
                    f"the equations depend on {missing[0]}, which is neither a coordinate, a speed, "
                    "an extra state nor a declared specified input; declare it in specifieds=[...] "
                    "(an input you prescribe) or in extra_states={...} (a state with its own ODE)")
            self.specifieds = tuple(spec)
        self._specifieds_declared = strict
        if constants is None:
            self.constants = tuple(auto_const)
            self.constants += _contact_constants(self.contacts, self.constants)
        else:
            cons = list(constants)
            missing = [s for s in auto_const if s not in cons]
            if missing:
                raise FormulationError(f"the equations depend on the symbol {missing[0]}, which is not "
                                       "among the constants given")
            self.constants = tuple(cons)

    def _attach_extra_states(self, parsed: ExtraStates) -> None:
        """Check and store extra states x_e and their derivatives (q' replaced by the kinematics)."""
        q, u = set(self.q), set(self.u) | set(self.u_aux)
        for x in parsed.states:
            if x in q or x in u:
                raise FormulationError(f"the extra state {x} is already a coordinate or a speed")
        qdot_map = dict(zip(self.qdot, self.qdot_solution))
        derivs = []
        for x, f in zip(parsed.states, parsed.derivatives):
            f = f.xreplace(qdot_map)
            for d in f.atoms(sm.Derivative):
                if d.expr in q or d.expr in u or d.expr in set(parsed.states):
                    raise FormulationError(
                        f"the derivative of the extra state {x} contains {d}; it may depend on t, q, "
                        "u, the extra states, constants and specified inputs, not on accelerations "
                        "or derivatives of states")
            derivs.append(f)
        self.extra_states = tuple(parsed.states)
        self.extra_derivatives = _imm(sm.Matrix(len(derivs), 1, derivs))
        self._extra_inputs = tuple(parsed.inputs)
        self._check_extra_states_absent(parsed.states)

    def _attach_symengine_extra_states(self, dyn: SymengineDynamics) -> None:
        """The extra states of the symengine block (``dyn.extra``): checked on their atoms,
        their derivatives converted to SymPy on first access only."""
        q, u = set(self.q), set(self.u) | set(self.u_aux)
        states = tuple(dyn.extra)
        for x in states:
            if not (isinstance(x, sm.core.function.AppliedUndef) and x.args == (t,)):
                raise FormulationError(f"the extra state {x!r} is not a function of time")
            if x in q or x in u:
                raise FormulationError(f"the extra state {x} is already a coordinate or a speed")
        for d in dyn.atoms(dynamic=False):
            if isinstance(d, sm.Derivative):
                raise FormulationError(
                    f"the extra states' derivatives contain {d}; they may depend on t, q, u, "
                    "the extra states, constants and specified inputs, not on derivatives")
        self.extra_states = states
        self.__dict__["_extra_derivatives"] = None
        self.__dict__["_extra_from_symengine"] = True
        self._extra_inputs = ()
        self._check_extra_states_absent(states)

    def _check_extra_states_absent(self, xs: Sequence) -> None:
        """Extra states may enter only the dynamic and auxiliary equations."""
        if xs:
            for label, blk in (("kinematic", self.kinematic_rest), ("kinematic", self.kinematic_u),
                               ("kinematic", self.qdot_solution), ("holonomic", self.holonomic),
                               ("velocity_constraints", self.velocity_matrix),
                               ("velocity_constraints", self.velocity_rest),
                               ("acceleration_constraints", self.acceleration_matrix),
                               ("acceleration_constraints", self.acceleration_rest)):
                for i, e in enumerate(blk):
                    hit = [x for x in xs if e.has(x)]
                    if hit:
                        raise FormulationError(
                            f"the {label} equations (entry {i}) depend on the extra state {hit[0]}; "
                            "extra states may enter only the dynamic and auxiliary equations")

    def with_extra_states(self, extra_states: Any, specifieds: Sequence | None = None) -> EquationsOfMotion:
        """A copy with extra first-order states added (see :mod:`~symbody.formulation.extra_states`).

        ``extra_states``: ``{x_e: x_e'}``, SymPy biomechanics objects (their ``x``,
        ``r``, ``rhs()``), or a list of these.  ``specifieds``: the specified inputs
        (the objects' inputs ``r`` are added); every other function of time in the
        equations is an error naming it.
        """
        parsed = parse_extra_states(extra_states)
        if self.extra_states:
            old = ExtraStates(self.extra_states, tuple(self.extra_derivatives), self._extra_inputs)
            parsed = ExtraStates(old.states + parsed.states, old.derivatives + parsed.derivatives,
                                 old.inputs + tuple(r for r in parsed.inputs if r not in old.inputs))
        if specifieds is None and self._specifieds_declared:
            specifieds = self.specifieds
        new = copy.copy(self)
        EquationsOfMotion._add_extra_states(new, parsed, specifieds)   # the copy: same class
        return new

    def _add_extra_states(self, parsed: ExtraStates, specifieds: Sequence | None) -> None:
        """Attach ``parsed`` extra states and detect the symbols again (on a fresh copy)."""
        self._attach_extra_states(parsed)
        self._set_symbols(None, specifieds, declared=self._extra_inputs)

    def with_constants(self, *constants: sm.Symbol) -> EquationsOfMotion:
        """A copy whose ``constants`` also list ``constants`` (appended, in order; symbols
        already listed are kept where they are).

        For symbols the equations do not contain but an event condition, an impact map or
        an output uses (e.g. a coefficient of restitution ``e``): compile the copy and give
        the new constants' values in ``p`` like the others.
        """
        new_syms = []
        for c in constants:
            if not isinstance(c, sm.Symbol):
                raise FormulationError(f"with_constants: {c!r} is not a SymPy Symbol "
                                       "(constants are plain symbols, e.g. sympy.Symbol('e'))")
            if c not in self.constants and c not in new_syms:
                new_syms.append(c)
        new = copy.copy(self)
        new.constants = tuple(self.constants) + tuple(new_syms)
        return new

    def with_contacts(self, *contacts: Any) -> EquationsOfMotion:
        """A copy that also holds ``contacts`` (``symbody.contact.Contact`` objects or
        :class:`~.contact_record.ContactRecord` records; q' in them replaced through the
        kinematic equations), e.g. for hand-derived equations whose dynamic block contains
        the contacts' generalized forces."""
        from .contact_record import contact_records

        added = contact_records(contacts, self.kindiffdict)
        new = copy.copy(self)
        new.contacts = contact_records(tuple(self.contacts) + added)
        impact = [s for rec in added for s in rec.impact_states if s not in self.extra_states]
        if impact:      # a restitution per impact: its state s = 1/v₀ (s' = 0, set at touchdown)
            declared = [r for r in self.specifieds if r not in impact] if self._specifieds_declared else None
            new = new.with_extra_states({s: sm.S.Zero for s in impact}, specifieds=declared)
        return new

    @classmethod
    def from_blocks(cls, blocks: CanonicalBlocks, *, constants=None, specifieds=None,
                    extra_states=None, name: str | None = None) -> EquationsOfMotion:
        """Build from already-extracted blocks (used by the formulation classes; no parsing).

        With ``blocks.dynamic_se`` the dynamic block stays in symengine and is converted
        to SymPy on first access.
        """
        self = cls.__new__(cls)
        self.t = t
        self.name = name
        bl = blocks
        self.q_ind, self.q_dep = tuple(bl.q_ind), tuple(bl.q_dep)
        self.u_ind, self.u_dep, self.u_aux = tuple(bl.u_ind), tuple(bl.u_dep), tuple(bl.u_aux)
        o = len(self.u)
        self.kinematic_qdot = _imm(bl.K_qd)
        self.kinematic_u = _imm(bl.K_u) if len(bl.K_u) else _imm(sm.zeros(len(self.q), o))
        self.kinematic_rest = _imm(bl.k)
        self.qdot_solution = _imm(bl.qdot_solution)
        self.holonomic = _imm(bl.f_h) if len(bl.f_h) else _imm(sm.zeros(0, 1))
        self.holonomic_names = (tuple(map(str, bl.holonomic_names)) if bl.holonomic_names
                                else tuple(f"holonomic[{i}]" for i in range(self.holonomic.rows)))
        self.velocity_matrix = _imm(bl.B) if len(bl.B) else _imm(sm.zeros(0, o))
        self.velocity_rest = _imm(bl.b) if len(bl.b) else _imm(sm.zeros(0, 1))
        self.acceleration_matrix = _imm(bl.B_a) if len(bl.B_a) else _imm(sm.zeros(0, o))
        self.acceleration_rest = _imm(bl.b_a) if len(bl.b_a) else _imm(sm.zeros(0, 1))
        if bl.dynamic_se is not None:
            self._dynamic_se = bl.dynamic_se
        else:
            self.dynamic_mass = _imm(bl.M_d)
            self.dynamic_rest = _imm(bl.g_d)
        self.dynamic_reduced = bool(bl.reduced)
        self.auxiliary = _imm(bl.auxiliary) if len(bl.auxiliary) else _imm(sm.zeros(0, 1))
        self.noncontributing = tuple(bl.noncontributing)
        if bl.dynamic_se is not None and bl.dynamic_se.extra:
            if extra_states is not None:
                raise FormulationError("extra states are given both in SymPy (extra_states) and "
                                       "in the symengine dynamic block (dynamic_se.extra)")
            self._attach_symengine_extra_states(bl.dynamic_se)
        else:
            self._attach_extra_states(parse_extra_states(extra_states))
        self._set_symbols(constants, specifieds, declared=self._extra_inputs)
        _check_accelerations_determined(self)
        return self

    # ------------------------------------------------------------------ sizes
    @property
    def q(self) -> tuple:
        """All coordinates, q = [q_ind, q_dep] (N)."""
        return self.q_ind + self.q_dep

    @property
    def u(self) -> tuple:
        """All speeds, u = [u_ind, u_dep] (o)."""
        return self.u_ind + self.u_dep

    @property
    def qdot(self) -> tuple:
        return tuple(qi.diff(t) for qi in self.q)

    @property
    def udot(self) -> tuple:
        return tuple(ui.diff(t) for ui in self.u)

    @property
    def states(self) -> tuple:
        """The ODE state: x = [q_ind, q_dep, u_ind, extra states]."""
        return self.q + self.u_ind + tuple(self.extra_states)

    n = _count("q_ind", "n: the number of independent coordinates.")
    M = _count("q_dep", "M: the number of dependent coordinates (holonomic constraints).")
    p = _count("u_ind", "p: the number of independent speeds.")
    m = _count("u_dep", "m: the number of dependent speeds (velocity constraints).")

    @property
    def constraint_excess(self) -> int:
        """The number of configuration constraints beyond the dependent coordinates (0 for a
        square set): redundant equations, named at an assembled configuration when the model
        is simulated (:mod:`symbody.compilation.redundant`)."""
        return self.holonomic.rows - len(self.q_dep)

    @property
    def kindiffdict(self) -> dict:
        """Map q' -> its expression in q, u, t."""
        return dict(zip(self.qdot, self.qdot_solution))

    def __repr__(self) -> str:
        name = f" {self.name!r}" if self.name else ""
        return (f"<EquationsOfMotion{name}: {self.n}+{self.M} coordinates, {self.p}+{self.m} speeds, "
                f"{len(self.constants)} constants, {len(self.specifieds)} specifieds, "
                + (f"{len(self.extra_states)} extra states, " if self.extra_states else "")
                + f"dynamic {'reduced' if self.dynamic_reduced else 'unreduced'}>")

    def _repr_latex_(self) -> str:
        """The equations in LaTeX when small, a summary of the blocks' sizes when large."""
        from . import _display
        return _display.latex(self)

    def _repr_html_(self) -> str | None:
        """A table of the blocks' sizes for large systems (None: Jupyter shows the LaTeX)."""
        from . import _display
        return _display.html_table(self)

    def _repr_markdown_(self) -> str | None:
        """The summary table in Markdown for large systems (None for small ones)."""
        from . import _display
        return _display.markdown(self)


# --------------------------------------------------------------- the constructor's parts
#: the constraint keywords of EquationsOfMotion before ConstraintEquations -> (group, field)
_OLD_KEYWORDS = {"q_dep": ("constraints", "q_dep"), "u_dep": ("constraints", "u_dep"),
                 "holonomic": ("constraints", "holonomic"),
                 "velocity_constraints": ("constraints", "velocity"),
                 "acceleration_constraints": ("constraints", "acceleration"),
                 "u_auxiliary": ("auxiliary", "speeds"), "auxiliary": ("auxiliary", "equations"),
                 "noncontributing": ("auxiliary", "noncontributing")}


def _constraint_equations(constraints: ConstraintEquations | None,
                          old_keywords: dict) -> ConstraintEquations:
    """``constraints``, or the same built from the old flat keywords (with a DeprecationWarning)."""
    unknown = [key for key in old_keywords if key not in _OLD_KEYWORDS]
    if unknown:
        raise TypeError(f"EquationsOfMotion() got an unexpected keyword argument {unknown[0]!r}")
    if constraints is not None and not isinstance(constraints, ConstraintEquations):
        raise FormulationError(f"constraints must be a ConstraintEquations(...), got {constraints!r}")
    if not old_keywords:
        return constraints if constraints is not None else ConstraintEquations()
    if constraints is not None:
        raise FormulationError(
            f"give the constraints either as constraints=ConstraintEquations(...) or with the old "
            f"keywords ({', '.join(old_keywords)}), not both")
    groups: dict = {"constraints": {}, "auxiliary": {}}
    for key, value in old_keywords.items():
        group, field = _OLD_KEYWORDS[key]
        groups[group][field] = value
    new = ", ".join(f"{_OLD_KEYWORDS[key][1]}=..." for key in old_keywords)
    warnings.warn(
        f"EquationsOfMotion({', '.join(f'{key}=...' for key in old_keywords)}) is deprecated: give "
        f"constraints=ConstraintEquations(...) (q_dep, holonomic, u_dep, velocity, acceleration, "
        f"auxiliary=AuxiliaryEquations(speeds, equations, noncontributing)); here: {new}",
        DeprecationWarning, stacklevel=3)
    if groups["auxiliary"]:
        groups["constraints"]["auxiliary"] = AuxiliaryEquations(**groups["auxiliary"])
    return ConstraintEquations(**groups["constraints"])


def _kinematic_block(kinematic: Any, q: list, u: list, u_aux: list) -> tuple:
    """(K_qd, K_u, k, q'): ``kinematic`` = K_qd q' + K_u u + k (N rows) and its solution for q'."""
    qdot = [qi.diff(t) for qi in q]
    udot = [ui.diff(t) for ui in u]
    fk = as_column(kinematic, "kinematic")
    if fk.rows != len(q):
        raise FormulationError(
            f"there are {len(q)} coordinates but {fk.rows} kinematic differential equations; "
            "give one kinematic equation per coordinate (q_ind and q_dep)")
    fk = fk.xreplace(dict.fromkeys(u_aux, 0))
    K_qd, rest = linear_coefficients(fk, qdot, "kinematic", "q'")
    K_u, k = linear_coefficients(rest, u, "kinematic", "u")
    for i, e in enumerate(k):
        bad = [d for d in dynamic_symbols_in(e) if d in set(udot) or isinstance(d, sm.Derivative)]
        if bad:
            raise FormulationError(f"kinematic[{i}] = {fk[i]} contains {bad[0]}; kinematic "
                                   "equations may contain only q, q', u and t")
    qdot_solution = solve_linear(K_qd, -(K_u * sm.Matrix(u) + k), "kinematic equations (solving for q')")
    return K_qd, K_u, k, qdot_solution


def _holonomic_block(holonomic: Any, q_dep: list, u: list) -> sm.Matrix:
    """f_h (M x 1), checked to depend on q and t only."""
    fh = as_column(holonomic, "holonomic")
    # more equations than q_dep: redundant ones (see EquationsOfMotion.constraint_excess)
    _check_constraint_count(len(q_dep), fh.rows, "dependent coordinates (q_dep)",
                            "holonomic constraints")
    for i, e in enumerate(fh):
        derivs = [d for d in dynamic_symbols_in(e) if isinstance(d, sm.Derivative) or d in set(u)]
        if derivs:
            raise FormulationError(f"holonomic[{i}] = {e} depends on {derivs[0]}; configuration "
                                   "constraints may depend only on q and t")
    return fh


def _velocity_block(velocity: Any, fh: sm.Matrix, qdot_map: dict, u_aux: list, u: list, p: int,
                    u_dep: list, excess: int) -> tuple:
    """(the velocity constraints with q' replaced, B, b): B u + b = 0 (m rows); by default
    d/dt f_h when f_h is given."""
    vc = as_column(velocity, "velocity_constraints")
    if vc.rows == 0 and fh.rows and u_dep:
        vc = fh.diff(t)
    vc = vc.xreplace(qdot_map).xreplace(dict.fromkeys(u_aux, 0))
    # extra rows only as the derivatives of the ``excess`` redundant holonomic equations
    _check_constraint_count(len(u_dep), vc.rows, "dependent speeds (u_dep)",
                            "velocity constraints", excess)
    B, b = linear_coefficients(vc, u, "velocity_constraints", "u")
    if u_dep:
        _check_dependent_columns(B, p, u_dep, "velocity_constraints", "dependent speeds")
    return vc, B, b


def _acceleration_block(acceleration: Any, vc: sm.Matrix, B: sm.Matrix, qdot_map: dict, u: list,
                        u_dep: list) -> tuple:
    """(B_a, b_a): B_a u' + b_a = 0, given or by default d/dt of the velocity constraints."""
    udot = [ui.diff(t) for ui in u]
    if acceleration is None:
        if vc.rows:
            vdot = vc.diff(t)
            udot_zero = dict.fromkeys(udot, 0)
            return B, vdot.xreplace(udot_zero).xreplace(qdot_map)
        return sm.zeros(0, len(u)), sm.zeros(0, 1)
    ac = as_column(acceleration, "acceleration_constraints").xreplace(qdot_map)
    if ac.rows != vc.rows:
        raise FormulationError(
            f"there are {vc.rows} velocity constraints but {ac.rows} acceleration "
            "constraints; give one per velocity constraint")
    B_a, b_a = linear_coefficients(ac, udot, "acceleration_constraints", "u'")
    return B_a, b_a.xreplace(qdot_map)


def _dynamic_block(dynamic: Any, qdot_map: dict, q: list, u: list, p: int) -> tuple:
    """(M_d, g_d, reduced): ``dynamic`` as M_d u' + g_d = 0, unreduced (o rows over all u') or
    reduced (p rows over u_ind'), checked to be linear in u' and free of q''."""
    if isinstance(dynamic, tuple) and len(dynamic) == 2:
        M_d, g_d, reduced = _dynamic_pair(dynamic, qdot_map, u, p)
    else:
        M_d, g_d, reduced = _dynamic_expressions(dynamic, qdot_map, u, p)
    if M_d.rows != M_d.cols:
        raise FormulationError(f"the dynamic mass matrix must be square, got {M_d.shape}")
    for i, e in enumerate(g_d):
        for d in e.atoms(sm.Derivative):
            if d.expr in set(u) or d.expr in set(q):
                raise FormulationError(
                    f"dynamic[{i}] contains {d}; the dynamic equations must be linear in u' "
                    "and free of q'' (replace q' and q'' through the kinematic equations)")
    return M_d, g_d, reduced


def _dynamic_pair(dynamic: tuple, qdot_map: dict, u: list, p: int) -> tuple:
    """(M_d, g_d, reduced) of a pair ``(M_d, g_d)`` (o or p columns)."""
    udot = [ui.diff(t) for ui in u]
    M_d = sm.Matrix(dynamic[0])
    g_d = as_column(dynamic[1], "dynamic forcing")
    if M_d.rows != g_d.rows:
        raise FormulationError(f"dynamic mass matrix has {M_d.rows} rows but the forcing has {g_d.rows}")
    g_d = g_d.xreplace(qdot_map)
    if M_d.cols == len(u):
        reduced = M_d.rows == p and len(u) > p
    elif M_d.cols == p:
        reduced = True
    else:
        raise FormulationError(f"dynamic mass matrix has {M_d.cols} columns; expected {len(u)} "
                               f"(all speeds) or {p} (independent speeds)")
    if reduced and M_d.cols == len(u):
        dep_cols = [j for j in range(p, len(u)) if any(M_d[i, j] != 0 for i in range(M_d.rows))]
        if dep_cols:
            raise FormulationError(
                f"the dynamic mass matrix has {M_d.rows} rows (reduced form) but nonzero "
                f"coefficients of the dependent acceleration {udot[dep_cols[0]]}; eliminate "
                f"the dependent accelerations or give all {len(u)} unreduced rows")
        M_d = M_d[:, :p]
    return M_d, g_d, reduced


def _dynamic_expressions(dynamic: Any, qdot_map: dict, u: list, p: int) -> tuple:
    """(M_d, g_d, reduced) of expressions = 0 linear in u' (o or p rows)."""
    udot = [ui.diff(t) for ui in u]
    fd = as_column(dynamic, "dynamic").xreplace(qdot_map)
    if fd.rows == len(u):
        M_d, g_d = linear_coefficients(fd, udot, "dynamic", "u'")
        return M_d, g_d, False
    if fd.rows == p:
        dep_dots = [d for d in udot[p:] if any(e.has(d) for e in fd)]
        if dep_dots:
            raise FormulationError(
                f"the dynamic equations have {fd.rows} rows (reduced form) but contain the "
                f"dependent acceleration {dep_dots[0]}; eliminate it or give {len(u)} rows")
        M_d, g_d = linear_coefficients(fd, udot[:p], "dynamic", "u'")
        return M_d, g_d, True
    raise FormulationError(
        f"there are {fd.rows} dynamic equations; expected {len(u)} (one per speed) or "
        f"{p} (one per independent speed)")


def _check_accelerations_determined(eom: EquationsOfMotion) -> None:
    """Raise if a speed's acceleration appears in no dynamic equation and no constraint.

    A zero column of M_d (and of B_a) makes [[M_d, -B_a^T], [B_a, 0]] singular at
    every state: usually a speed that no velocity or angular velocity depends on.
    """
    B_a = eom.acceleration_matrix
    dyn = eom.symengine_dynamics()
    if dyn is not None:
        rows = dyn.mass
        nonzero_columns = {j for row in rows for j, e in enumerate(row) if e != 0}
    else:
        M_d = eom.dynamic_mass
        nonzero_columns = {j for j in range(M_d.cols) if any(M_d[i, j] != 0 for i in range(M_d.rows))}
    speeds = eom.u_ind if eom.dynamic_reduced else eom.u
    for j, s in enumerate(speeds):
        if j in nonzero_columns:
            continue
        if not eom.dynamic_reduced and any(B_a[i, j] != 0 for i in range(B_a.rows)):
            continue
        raise FormulationError(
            f"the acceleration of the speed {s} appears in no dynamic equation (its column of the "
            "mass matrix is zero) and in no constraint, so the equations cannot determine it; "
            f"does the velocity or angular velocity of any body depend on {s}?")


def _check_constraint_count(dependent: int, rows: int, what: str, eq_name: str,
                            excess: int | None = None) -> None:
    """At least one equation per dependent variable; velocity constraints beyond the dependent
    speeds only as the derivatives of redundant holonomic equations (``excess`` of them)."""
    if rows < dependent:
        raise FormulationError(
            f"there are {dependent} {what} but only {rows} {eq_name}; give (at least) one per "
            "dependent variable")
    if excess is not None and (rows or dependent) and rows - dependent != max(excess, 0):
        raise FormulationError(
            f"there are {dependent} {what} but {rows} {eq_name}: {rows - dependent} more, while "
            f"the holonomic constraints have {max(excess, 0)} more than the dependent coordinates; "
            "extra velocity constraints are accepted only as the derivatives of redundant "
            "holonomic equations (the holonomic ones first, in their order)")


def _time_order(d) -> tuple:
    """Sort key of specified inputs: by function name, then derivative order (r, r', r'')."""
    if isinstance(d, sm.Derivative):
        return (str(d.expr), d.derivative_count)
    return (str(d), 0)


def _check_dependent_columns(B: sm.Matrix, p: int, u_dep: Sequence, eq_name: str, what: str) -> None:
    """Raise if a dependent speed appears in no constraint or the block is structurally singular."""
    Bdep = B[:, p:]
    for j, ud in enumerate(u_dep):
        if all(Bdep[i, j] == 0 for i in range(Bdep.rows)):
            raise FormulationError(
                f"dependent speed {ud} does not appear in any of the {eq_name}; the constraints "
                f"cannot determine it (choose {what} that the constraints contain)")
    for i in range(Bdep.rows):
        if all(Bdep[i, j] == 0 for j in range(Bdep.cols)):
            raise FormulationError(
                f"{eq_name}[{i}] contains none of the dependent speeds {list(map(str, u_dep))}; "
                "the dependent-speed block of the constraint Jacobian is singular")


def _contact_constants(records: Sequence, known: Sequence) -> tuple:
    """The symbols of the contacts' parameters (k, n, c, μ, μ_s, the depth limit) not in
    ``known``, sorted by name: in exact mode μ and μ_s appear in the records only."""
    found: set = set()
    for rec in records:
        for value in (rec.stiffness, rec.exponent, rec.damping, rec.friction_coefficient,
                      rec.static_friction_coefficient, rec.max_penetration):
            if value is not None:
                found |= {s for s in sm.sympify(value).free_symbols if s != t}
    return tuple(sorted(found - set(known), key=str))
