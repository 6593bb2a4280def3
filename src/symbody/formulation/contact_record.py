"""What the equations of motion know about the contacts they hold (issue 37).

A contact (``symbody.contact.Contact``) is a load like any other: its ``to_loads()`` are
SymPy ``Force``/``Torque`` objects that any formulation turns into generalized forces.
What the loads alone do not say -- where the force law has its kinks, how deep the
penetration may go, which specified inputs stand for an exact friction force -- travels
with them as one frozen :class:`ContactRecord` per contact point, which the formulation
classes collect into ``EquationsOfMotion.contacts`` (:func:`contact_records`), the
compiled model keeps (``NumericModel.contacts``, saved with it) and the simulation reads
(events at the kinks, ``trajectory.contacts[name]``, the energy the contacts dissipate).

This module is the formulation layer's half: the record and the collection.  The
geometry and force laws live in :mod:`symbody.contact` (above the formulation, below the
compilation); nothing here imports them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import sympy as sm

from ..errors import FormulationError

__all__ = ["ContactRecord", "FRICTION_MODES", "contact_records", "records_of_loads", "record_of_load",
           "with_placeholders", "with_impact_states"]

#: the friction modes a record can carry ("none": frictionless)
FRICTION_MODES = ("none", "smooth", "exact")


@dataclass(frozen=True, eq=False)
class ContactRecord:
    """One contact point between two shapes (a sphere on a plane, a box corner on a plane, two
    spheres), as the equations hold it.  Every expression is a SymPy expression in t, the
    coordinates q, the speeds u (after ``to_eom``/``compile``: the kinematic equations have
    replaced q'), the constants and, in exact mode, the friction placeholders below.

    Geometry and sign conventions: the contact is between shape ``a`` (the plane, or the
    first sphere) and shape ``b``; the unit normal n points from a to b (out of the plane)
    and (t1, t2) is a right-handed tangent basis, t1 x t2 = n (fixed in a plane's frame).

    Fields
    ------
    name : str
        Unique within a model (``trajectory.contacts[name]``); a shape with several contact
        features (a box's 8 corners) gives ``"name[i]"``.
    gap : expression
        g, the signed distance between the shapes along n (m): > 0 apart, < 0 penetrating;
        the penetration is δ = max(-g, 0).
    gap_rate : expression
        g' = dg/dt = n . (v_b - v_a) at the contact point (m/s).
    normal_force : expression
        F_n >= 0, the magnitude of the normal force pushing b along +n (and a along -n):
        Hunt-Crossley F_n = k δⁿ max(0, 1 + 3/2 c δ'), zero when apart (never pulling).
    friction_force : tuple of expressions
        (F_t1, F_t2), the friction force on b along t1 and t2 (the force on a is opposite);
        a direction along which b cannot slip (its slip velocity is identically 0: a planar
        motion) is left out, so planar contacts have one component.
        Smooth mode: the regularized law; exact mode: the placeholders themselves;
        frictionless: zeros.
    slip_velocity : tuple of expressions
        (v_t1, v_t2), the velocity of b's material point at the contact relative to a's
        material point there, along t1 and t2 (m/s), the same directions as the friction
        force's.  Linear in the speeds u.
    friction_coefficient : expression or None
        The Coulomb coefficient μ (the dynamic one of a Stribeck law); None: frictionless.
    static_friction_coefficient : expression or None
        Exact mode: the static coefficient μ_s >= μ that bounds a stuck contact's friction
        force (``|F_t| <= μ_s F_n``); None: μ_s = μ.
    friction_mode : "none", "smooth" or "exact"
        "smooth": the friction force is a regularized function of the slip velocity (no
        events); "exact": Coulomb's law with stick as a constraint, see placeholders.
    friction_placeholders : tuple of dynamicsymbols
        Exact mode only (else ()): one function of time per tangent direction of
        ``slip_velocity``, λ_i(t).  The
        contact's loads apply the friction force λ_1 t1 + λ_2 t2 on b at the contact point
        (and its opposite on a), so the equations hold them linearly, like specified inputs
        (they are among ``EquationsOfMotion.specifieds``).  An exact-friction engine
        replaces them by -μ F_n v̂_t in slip and by the multipliers of v_t = 0 in stick.
    switching : tuple of (str, expression) pairs
        The switching functions of the force law: the simulation locates their zero
        crossings as events and starts a new segment there, so that no step straddles a
        kink.  ("contact", g): touchdown and lift-off; ("damping", 1 + 3/2 c δ', or
        k δⁿ + d δ' for a linear damper): where the damping would make the force pull
        (only relevant where g < 0).
    max_penetration : expression or None
        The depth beyond which the compliant model means nothing (a sphere's radius); a run
        that goes deeper stops with a failed status naming the contact.  None: no limit.
    elastic_energy : expression
        V = k δ^(n+1) / (n+1), the energy stored in the contact's spring (J).
    power : expression
        P, the rate at which the contact's loads do work on the system (W):
        P = -F_n δ' + F_t . v_t (+ the rolling-resistance torque's).  The contact dissipates
        D(t) = -∫ P dt - (V(t) - V(0)) >= 0, so E(t) + V(t) + D(t) = E(0) + V(0) + the work
        of the inputs, E the mechanical energy without the contacts' springs.
    stiffness, exponent, damping : expressions
        The normal law's k, n and c (damping c in s/m; 0 without damping).
    impact_states : tuple of dynamicsymbols
        A restitution given per impact (``Contact(restitution=e)`` without
        ``impact_speed``): (s,), s(t) = 1/v₀ the slowness of the last touchdown, a state
        of the equations (s' = 0, the formulation classes add it to ``extra_states``) that
        the simulation sets to -1/g' at each touchdown; the damping is c = 2 β(e) s / 3.
        Else ().
    """

    name: str
    gap: sm.Expr
    gap_rate: sm.Expr
    normal_force: sm.Expr
    friction_force: tuple = ()
    slip_velocity: tuple = ()
    friction_coefficient: sm.Expr | None = None
    static_friction_coefficient: sm.Expr | None = None
    friction_mode: str = "none"
    friction_placeholders: tuple = ()
    switching: tuple = ()
    max_penetration: sm.Expr | None = None
    elastic_energy: sm.Expr = field(default=sm.S.Zero)
    power: sm.Expr = field(default=sm.S.Zero)
    stiffness: sm.Expr = field(default=sm.S.Zero)
    exponent: sm.Expr = field(default=sm.S.One)
    damping: sm.Expr = field(default=sm.S.Zero)
    impact_states: tuple = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise FormulationError(f"a contact record needs a non-empty name, got {self.name!r}")
        if self.friction_mode not in FRICTION_MODES:
            raise FormulationError(f"contact {self.name!r}: friction_mode must be one of "
                                   f"{', '.join(map(repr, FRICTION_MODES))}, got {self.friction_mode!r}")
        if self.friction_mode == "exact" and len(self.friction_placeholders) != len(self.slip_velocity):
            raise FormulationError(f"contact {self.name!r}: exact friction needs one placeholder per "
                                   "tangent direction")

    # ----------------------------------------------------------------- expressions
    #: the fields holding one expression each, and those holding a tuple of them
    SCALARS = ("gap", "gap_rate", "normal_force", "friction_coefficient",
               "static_friction_coefficient", "max_penetration",
               "elastic_energy", "power", "stiffness", "exponent", "damping")
    TUPLES = ("friction_force", "slip_velocity", "friction_placeholders", "impact_states")

    def expressions(self) -> dict[str, Any]:
        """Every expression of the record by field name (scalars, tuples, and ``switching``
        as a tuple of its expressions); None where a field is None."""
        out: dict[str, Any] = {k: getattr(self, k) for k in self.SCALARS}
        out.update({k: tuple(getattr(self, k)) for k in self.TUPLES})
        out["switching"] = tuple(e for _, e in self.switching)
        return out

    def xreplace(self, rule: Mapping) -> ContactRecord:
        """The record with ``rule`` applied to every expression (e.g. q' -> the kinematic
        equations' solution)."""
        if not rule:
            return self

        def sub(e):
            return None if e is None else sm.sympify(e).xreplace(rule)

        changes: dict[str, Any] = {k: sub(getattr(self, k)) for k in self.SCALARS}
        changes.update({k: tuple(sub(e) for e in getattr(self, k)) for k in self.TUPLES
                        if k not in ("friction_placeholders", "impact_states")})
        changes["switching"] = tuple((n, sub(e)) for n, e in self.switching)
        return replace(self, **changes)

    def atoms(self) -> set:
        """The symbols and functions of time its expressions use."""
        found: set = set()
        for value in self.expressions().values():
            for e in (value if isinstance(value, tuple) else (value,)):
                if e is not None:
                    e = sm.sympify(e)
                    found |= e.free_symbols | set(e.atoms(sm.core.function.AppliedUndef))
        return found

    def __repr__(self) -> str:
        return (f"<ContactRecord {self.name!r}: friction {self.friction_mode}, "
                f"{len(self.switching)} switching functions>")


def record_of_load(load: Any) -> tuple[ContactRecord, ...]:
    """The records a load carries (a contact's ``Force``/``Torque`` subclass has
    ``contact_records``), else ()."""
    got = getattr(load, "contact_records", None)
    return tuple(got) if got else ()


def records_of_loads(loads: Iterable | None) -> tuple[ContactRecord, ...]:
    """The contact records carried by ``loads`` (each once, in order of first appearance)."""
    out: list[ContactRecord] = []
    seen: set[int] = set()
    for load in loads or ():
        for rec in record_of_load(load):
            if id(rec) not in seen:
                seen.add(id(rec))
                out.append(rec)
    return tuple(out)


def contact_records(items: Iterable | None, qdot_map: Mapping | None = None) -> tuple[ContactRecord, ...]:
    """The :class:`ContactRecord` objects of ``items`` -- records, or objects with a
    ``records`` attribute (``symbody.contact.Contact``), or loads that carry them -- with
    ``qdot_map`` (q' -> its expression in q, u) applied.  The same contact given twice is kept
    once; two different contacts of one name are an error."""
    out: list[ContactRecord] = []
    for item in items or ():
        if isinstance(item, ContactRecord):
            out.append(item)
        elif getattr(item, "records", None) is not None and not isinstance(item, (str, bytes)):
            got = list(item.records)
            if not all(isinstance(r, ContactRecord) for r in got):
                raise FormulationError(f"contacts: {item!r} has records that are not ContactRecords")
            out.extend(got)
        elif record_of_load(item):
            out.extend(r for r in record_of_load(item) if all(r is not o for o in out))
        else:
            raise FormulationError(f"contacts: {item!r} is neither a symbody.contact.Contact nor a "
                                   "ContactRecord")
    if qdot_map:
        out = [r.xreplace(qdot_map) for r in out]
    unique: list[ContactRecord] = []
    for rec in out:              # the same contact given twice (in the loads and in contacts=)
        if not any(u.name == rec.name and u.gap == rec.gap and u.normal_force == rec.normal_force
                   for u in unique):
            unique.append(rec)
    out = unique
    names = [r.name for r in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise FormulationError(f"two contacts are named {dup[0]!r}; give each contact its own name= "
                               "(the trajectory reports them by name)")
    return tuple(out)


def with_placeholders(specifieds: Iterable | None, records: Iterable[ContactRecord]) -> list | None:
    """``specifieds`` (an explicit list of specified inputs, or None: detected) with the exact
    friction placeholders of ``records`` appended where missing: they are inputs the
    contacts declare themselves."""
    if specifieds is None:
        return None
    out = list(specifieds)
    for rec in records:
        out += [f for f in rec.friction_placeholders if f not in out]
    return out


def with_impact_states(extra_states: Any, records: Iterable[ContactRecord]) -> Any:
    """``extra_states`` (as ``to_eom`` takes them) with the records' impact states s (s' = 0,
    set at touchdown by the simulation) added."""
    impact = {s: sm.S.Zero for rec in records for s in rec.impact_states}
    if not impact:
        return extra_states
    if extra_states is None:
        return impact
    if isinstance(extra_states, Mapping):
        return {**extra_states, **impact}
    if isinstance(extra_states, (list, tuple)):
        return [*extra_states, impact]
    return [extra_states, impact]
