"""The equations of motion of one pattern of exact Coulomb friction modes (issue 37).

Exact friction (``friction_mode="exact"``) switches each contact between two laws, and
each pattern of modes is an ordinary :class:`~.eom.EquationsOfMotion` built here from the
equations that hold the contacts:

- **slip**: the contact's friction placeholders λ_j (the friction force on shape b along the
  tangent t_j, applied by its loads at the contact point) become the sliding force
  λ = -μ F_n v̂, v the slip velocity (:func:`sliding_force`);
- **stick**: the slip velocity v = W(q, t) u + w(q, t) becomes a velocity (nonholonomic)
  constraint v = 0 with dependent speeds of its own, and the placeholders are zero.  The
  loads apply λ_j t_j at the contact point, so their generalized force is W_jᵀ λ_j: the
  constraint force of row j.  The multiplier of row j in ``M_d u' + g_d = B_aᵀ λ`` is
  therefore the friction force λ_j itself.

The slip direction is continued through v = 0 along a reference direction d (constants of
the variant, one per tangent, set by the simulation at the start of each piece):
v̂ = sign(v·d) v / |v|, and v̂ = d where v = 0.  Along a slip that comes to rest,
v(t) ≈ (t* - t) c near the stop, so sign(v·d) v/|v| is smooth through t*: the integrator
steps across the stop without a kink and the stop is found as the zero of v·d on the step's
dense output.  With one tangent the sliding force is just -μ F_n d (d = ±1).

Tangent directions whose slip velocity is identically zero (a planar model's out-of-plane
tangent) are left out: their placeholders are zero in every variant.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import sympy as sm

from ..compat.sympy import TIME
from ..errors import FormulationError
from .eom import ConstraintEquations, EquationsOfMotion

__all__ = ["ExactContact", "exact_contacts", "sliding_force", "friction_variant"]

_t = TIME


@dataclass(frozen=True)
class ExactContact:
    """One contact with exact friction, as the variants need it.

    ``placeholders`` and ``slip`` (k = 1 or 2 each): the active tangents' friction
    placeholders and slip velocities (linear in u); ``inactive``: placeholders of tangents
    whose slip velocity is identically zero; ``normal_force`` F_n (>= 0); ``kinetic`` μ and
    ``static`` μ_s; ``directions``: the constants d_j of the slip direction's continuation.
    """

    name: str
    placeholders: tuple
    slip: tuple
    inactive: tuple
    normal_force: sm.Expr
    kinetic: sm.Expr
    static: sm.Expr
    gap: sm.Expr
    gap_rate: sm.Expr
    directions: tuple

    @property
    def tangents(self) -> int:
        """The number of active tangent directions (1 planar, 2 spatial)."""
        return len(self.placeholders)


def _direction_symbols(name: str, k: int) -> tuple:
    safe = re.sub(r"\W", "_", name)
    return tuple(sm.Symbol(f"slipdir_{safe}_{j + 1}") for j in range(k))


def exact_contacts(eom: EquationsOfMotion) -> tuple[ExactContact, ...]:
    """The contacts of ``eom`` with ``friction_mode="exact"`` (checked: a coefficient, one
    placeholder per tangent, slip velocities linear in the speeds)."""
    out = []
    speeds = set(eom.u)
    for rec in getattr(eom, "contacts", ()):
        if rec.friction_mode != "exact":
            continue
        if rec.friction_coefficient is None:
            raise FormulationError(f"contact {rec.name!r}: exact friction needs a friction coefficient")
        active, inactive = [], []
        for lam, v in zip(rec.friction_placeholders, rec.slip_velocity, strict=True):
            v = sm.sympify(v)
            if v == 0:
                inactive.append(lam)
                continue
            for s in speeds:
                if v.diff(s).has(*speeds):
                    raise FormulationError(f"contact {rec.name!r}: the slip velocity {v} is not linear "
                                           f"in the speeds ({s})")
            active.append((lam, v))
        if not active:
            raise FormulationError(f"contact {rec.name!r}: every slip velocity is identically zero; "
                                   "exact friction has nothing to act on")
        static = rec.static_friction_coefficient
        _check_symbols(eom, rec)
        out.append(ExactContact(
            name=rec.name, placeholders=tuple(a[0] for a in active), slip=tuple(a[1] for a in active),
            inactive=tuple(inactive), normal_force=sm.sympify(rec.normal_force),
            kinetic=sm.sympify(rec.friction_coefficient),
            static=sm.sympify(rec.friction_coefficient if static is None else static),
            gap=sm.sympify(rec.gap), gap_rate=sm.sympify(rec.gap_rate),
            directions=_direction_symbols(rec.name, len(active))))
    return tuple(out)


def _check_symbols(eom: EquationsOfMotion, rec) -> None:
    """The contact's force law and coefficients use only t, q, u and the constants of ``eom``
    (in exact mode μ appears in the record only, not in the equations)."""
    allowed = set(eom.q) | set(eom.u) | set(eom.constants) | {_t}
    exprs = [rec.normal_force, rec.gap, rec.friction_coefficient, *rec.slip_velocity]
    if rec.static_friction_coefficient is not None:
        exprs.append(rec.static_friction_coefficient)
    for e in exprs:
        e = sm.sympify(e)
        bad = sorted((e.free_symbols | set(e.atoms(sm.core.function.AppliedUndef))) - allowed, key=str)
        if bad:
            hint = (f": declare it with eom.with_constants({bad[0]})"
                    if isinstance(bad[0], sm.Symbol) else "")
            raise FormulationError(f"contact {rec.name!r}: {e} depends on {bad[0]}, which is not a "
                                   f"coordinate, a speed or a constant of the equations{hint}")


def sliding_force(contact: ExactContact) -> tuple:
    """λ = -μ F_n v̂ (one expression per active tangent), v̂ continued through v = 0 along the
    direction constants d: sign(v·d) v/|v| (d where v = 0); with one tangent -μ F_n d."""
    mu_fn = contact.kinetic * contact.normal_force
    d = contact.directions
    if contact.tangents == 1:
        return (-mu_fn * d[0],)
    v = contact.slip
    speed2 = sum(vi**2 for vi in v)
    along = sm.sign(sum(vi * di for vi, di in zip(v, d)))
    return tuple(sm.Piecewise((-mu_fn * dj, sm.Eq(speed2, 0)),
                              (-mu_fn * along * vj / sm.sqrt(speed2), True))
                 for vj, dj in zip(v, d))


def friction_variant(eom: EquationsOfMotion, contacts: Sequence[ExactContact],
                     stuck: Mapping[str, Sequence[int]], dependent: Sequence,
                     name: str | None = None) -> EquationsOfMotion:
    """The equations of ``eom`` with the contacts in ``stuck`` sticking and the others slipping.

    ``stuck``: contact name -> the indices of its active tangents whose slip velocity is kept
    as a constraint (an independent subset of all stuck rows: where several contacts hold one
    body, e.g. a box's corners, their rows are dependent); ``dependent``: the speeds (one per
    kept row, among ``eom.u_ind``) that the new constraints make dependent.  The variant's
    velocity constraints are ``eom``'s rows followed by the kept rows (contacts in the order of
    ``contacts``); its constants are ``eom``'s followed by every contact's direction constants;
    its specified inputs are ``eom``'s without the placeholders.
    """
    if eom.dynamic_reduced:
        raise FormulationError("exact friction needs the unreduced dynamic block (every speed's "
                               "equation, as KanesMethod.to_eom() and LagrangesMethod.to_eom() give)")
    if eom.extra_states or eom.u_aux:
        raise FormulationError("exact friction does not take equations with extra states or "
                               "auxiliary speeds")
    names = {c.name for c in contacts}
    unknown = sorted(set(stuck) - names)
    if unknown:
        raise FormulationError(f"friction_variant: no exact contact named {unknown[0]!r}")
    rule: dict = {}
    rows = []
    for c in contacts:
        rule.update(dict.fromkeys(c.inactive, sm.S.Zero))
        if c.name in stuck:
            rule.update(dict.fromkeys(c.placeholders, sm.S.Zero))
            rows += [c.slip[j] for j in stuck[c.name]]
        else:
            rule.update(zip(c.placeholders, sliding_force(c)))
    dependent = list(dependent)
    if len(dependent) != len(rows) or not set(dependent) <= set(eom.u_ind):
        raise FormulationError(f"friction_variant: {len(rows)} kept slip rows need as many dependent "
                               f"speeds among {', '.join(map(str, eom.u_ind))}; got {dependent}")
    u_old = list(eom.u)
    u_ind = [s for s in eom.u_ind if s not in dependent]
    u_dep = list(eom.u_dep) + dependent
    u_new = u_ind + u_dep
    perm = [u_old.index(s) for s in u_new]
    qd = sm.Matrix([qi.diff(_t) for qi in eom.q])
    kinematic = eom.kinematic_qdot * qd + eom.kinematic_u * sm.Matrix(u_old) + eom.kinematic_rest
    qdot_map = eom.kindiffdict
    velocity = list(eom.velocity_matrix * sm.Matrix(u_old) + eom.velocity_rest) + rows
    udot = sm.Matrix([s.diff(_t) for s in u_old])
    acceleration = list(eom.acceleration_matrix * udot + eom.acceleration_rest) + \
        [r.diff(_t).xreplace(qdot_map) for r in rows]
    mass = eom.dynamic_mass.extract(perm, perm)
    rest = eom.dynamic_rest.extract(perm, [0]).xreplace(rule)
    placeholders = set(rule)
    specifieds = [s for s in eom.specifieds if s not in placeholders]
    constants = list(eom.constants) + [d for c in contacts for d in c.directions
                                       if d not in set(eom.constants)]
    constraints = ConstraintEquations(
        q_dep=list(eom.q_dep) or None, holonomic=list(eom.holonomic) or None,
        u_dep=u_dep or None, velocity=velocity or None, acceleration=acceleration or None)
    variant = EquationsOfMotion(list(eom.q_ind), u_ind, kinematic, (mass, rest), constraints=constraints,
                                constants=constants, specifieds=specifieds,
                                name=name or getattr(eom, "name", None))
    variant.body_inertias = eom.body_inertias
    return variant
