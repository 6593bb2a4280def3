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
v̂ = sign(v·d) v / |v|, and v̂ = d where v = 0 (written without branches, see
:func:`sliding_force`).  Along a slip that comes to rest,
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
from ..symengine_bridge import SymbolTable
from .eom import CanonicalBlocks, EquationsOfMotion

__all__ = ["ExactContact", "SlipRows", "exact_contacts", "slip_rows", "sliding_force", "friction_variant",
           "record_constants"]

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
    placeholder per tangent; :func:`slip_rows` checks that the slip velocities are linear in
    the speeds)."""
    out = []
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
    """The contact's force law and coefficients use only t, q, u and constant symbols (in
    exact mode μ may appear in the record only, not in the equations: see
    :func:`record_constants`)."""
    allowed = set(eom.q) | set(eom.u) | {_t}
    exprs = [rec.normal_force, rec.gap, rec.gap_rate, rec.friction_coefficient, *rec.slip_velocity]
    if rec.static_friction_coefficient is not None:
        exprs.append(rec.static_friction_coefficient)
    for e in exprs:
        e = sm.sympify(e)
        bad = sorted(set(e.atoms(sm.core.function.AppliedUndef)) - allowed, key=str)
        bad += sorted(d for d in e.atoms(sm.Derivative))
        if bad:
            raise FormulationError(f"contact {rec.name!r}: {e} depends on {bad[0]}, which is neither a "
                                   "coordinate nor a speed nor a constant")


def record_constants(eom: EquationsOfMotion, contacts: Sequence[ExactContact]) -> tuple:
    """The constant symbols the exact contacts use that the equations do not (μ and μ_s of
    exact friction appear in the records only), sorted by name."""
    known = set(eom.constants)
    found: set = set()
    for c in contacts:
        for e in (c.normal_force, c.gap, c.gap_rate, c.kinetic, c.static, *c.slip):
            found |= {s for s in sm.sympify(e).free_symbols if s not in known and s != _t}
    return tuple(sorted(found, key=str))


#: ε of the continuation's switch to d at v = 0 (see :func:`sliding_force`): exact in double
#: precision for every slip speed above 1e-142 m/s
_ZERO_SLIP = sm.Float("1e-150")


def sliding_force(contact: ExactContact) -> tuple:
    """λ = -μ F_n v̂ (one expression per active tangent), v̂ continued through v = 0 along the
    direction constants d: sign(v·d) v/|v|, and d where v = 0; with one tangent -μ F_n d.

    Written without Piecewise (which the kernels would have to branch on): with s = |v|² and
    ε = 1e-150, v̂ = sign(v·d) v / sqrt(s + ε²) + d (1 - sqrt(s) / sqrt(s + ε²)), which is
    sign(v·d) v/|v| to the last bit for |v| > 1e-142 and d at v = 0."""
    mu_fn = contact.kinetic * contact.normal_force
    d = contact.directions
    if contact.tangents == 1:
        return (-mu_fn * d[0],)
    v = contact.slip
    speed2 = sum(vi**2 for vi in v)
    along = sm.sign(sum(vi * di for vi, di in zip(v, d)))
    root = sm.sqrt(speed2 + _ZERO_SLIP**2)
    at_rest = 1 - sm.sqrt(speed2) / root
    return tuple(-mu_fn * (along * vj / root + dj * at_rest) for vj, dj in zip(v, d))


@dataclass(frozen=True)
class SlipRows:
    """The active tangents' slip velocities of all contacts (r rows, in contact order) as
    v = W u + w, and their rate v' = W u' + c: ``W`` (r x o, over ``eom.u``), ``w`` and ``c``
    (r x 1; c with q' replaced through the kinematic equations)."""

    W: sm.MatrixBase
    w: sm.MatrixBase
    c: sm.MatrixBase


def slip_rows(eom: EquationsOfMotion, contacts: Sequence[ExactContact]) -> SlipRows:
    """The :class:`SlipRows` of ``contacts`` in ``eom`` (formed once per model; the
    derivatives in symengine: ∂v/∂u and d/dt by the chain rule through q')."""
    u = list(eom.u)
    slip = [v for c in contacts for v in c.slip]
    if not slip:
        return SlipRows(sm.zeros(0, len(u)), sm.zeros(0, 1), sm.zeros(0, 1))
    table = SymbolTable()
    q_se = [table.add(qi) for qi in eom.q]
    u_se = [table.add(ui) for ui in u]
    converted = table.to_se_many(slip + list(eom.qdot_solution))
    v_se, qdot_se = converted[:len(slip)], converted[len(slip):]
    zero_u = dict.fromkeys(u_se, 0)
    W, w, c = [], [], []
    u_set = set(u_se)
    for k, v in enumerate(v_se):
        W.append([v.diff(s) for s in u_se])
        if any(e.free_symbols & u_set for e in W[-1]):
            raise FormulationError(f"exact friction: the slip velocity {slip[k]} is not linear in the "
                                   "speeds")
        w.append(v.subs(zero_u))
        rate = sum((v.diff(qi) * qd for qi, qd in zip(q_se, qdot_se)), 0 * v)
        for ts in (s for s in v.free_symbols if str(s) == str(_t)):     # a moving plane
            rate = rate + v.diff(ts)
        c.append(rate)
    return SlipRows(table.to_sympy_matrix(W, (len(slip), len(u))),
                    table.to_sympy_matrix([[e] for e in w], (len(slip), 1)),
                    table.to_sympy_matrix([[e] for e in c], (len(slip), 1)))


def friction_variant(eom: EquationsOfMotion, contacts: Sequence[ExactContact],
                     stuck: Mapping[str, Sequence[int]], dependent: Sequence,
                     rows: SlipRows | None = None, name: str | None = None,
                     constants: Sequence | None = None) -> EquationsOfMotion:
    """The equations of ``eom`` with the contacts in ``stuck`` sticking and the others slipping.

    ``stuck``: contact name -> the indices of its active tangents whose slip velocity is kept
    as a constraint (an independent subset of all stuck rows: where several contacts hold one
    body, e.g. a box's corners, their rows are dependent); ``dependent``: the speeds (one per
    kept row, among ``eom.u_ind``) that the new constraints make dependent; ``rows``: the
    contacts' :class:`SlipRows` (formed here when not given).  The variant's velocity
    constraints are ``eom``'s rows followed by the kept rows (contacts in the order of
    ``contacts``); its constants are ``eom``'s followed by every contact's direction
    constants; its specified inputs are ``eom``'s without the placeholders.  Its blocks are
    ``eom``'s, permuted to the new speed order, with the kept rows added (no parsing).
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
    rows = slip_rows(eom, contacts) if rows is None else rows
    rule: dict = {}
    kept = []
    start = 0
    for c in contacts:
        rule.update(dict.fromkeys(c.inactive, sm.S.Zero))
        if c.name in stuck:
            rule.update(dict.fromkeys(c.placeholders, sm.S.Zero))
            kept += [start + j for j in stuck[c.name]]
        else:
            rule.update(zip(c.placeholders, sliding_force(c)))
        start += c.tangents
    dependent = list(dependent)
    if len(dependent) != len(kept) or not set(dependent) <= set(eom.u_ind):
        raise FormulationError(f"friction_variant: {len(kept)} kept slip rows need as many dependent "
                               f"speeds among {', '.join(map(str, eom.u_ind))}; got {dependent}")
    u_old = list(eom.u)
    u_ind = [s for s in eom.u_ind if s not in dependent]
    u_dep = list(eom.u_dep) + dependent
    perm = [u_old.index(s) for s in u_ind + u_dep]
    cols = list(range(len(u_old)))

    def stack(own, new):
        return sm.Matrix.vstack(sm.Matrix(own), new) if new.rows else sm.Matrix(own)

    W = rows.W.extract(kept, cols) if kept else sm.zeros(0, len(u_old))
    w = rows.w.extract(kept, [0]) if kept else sm.zeros(0, 1)
    c = rows.c.extract(kept, [0]) if kept else sm.zeros(0, 1)
    B = stack(eom.velocity_matrix, W)
    B_a = stack(eom.acceleration_matrix, W)
    blocks = CanonicalBlocks(
        q_ind=list(eom.q_ind), q_dep=list(eom.q_dep), u_ind=u_ind, u_dep=u_dep, u_aux=[],
        K_qd=eom.kinematic_qdot, K_u=eom.kinematic_u.extract(list(range(len(eom.q))), perm),
        k=eom.kinematic_rest, qdot_solution=eom.qdot_solution, f_h=eom.holonomic,
        B=B.extract(list(range(B.rows)), perm) if B.rows else sm.zeros(0, len(u_old)),
        b=stack(eom.velocity_rest, w),
        B_a=B_a.extract(list(range(B_a.rows)), perm) if B_a.rows else sm.zeros(0, len(u_old)),
        b_a=stack(eom.acceleration_rest, c),
        M_d=eom.dynamic_mass.extract(perm, perm),
        g_d=eom.dynamic_rest.extract(perm, [0]).xreplace(rule), reduced=False,
        auxiliary=sm.zeros(0, 1), holonomic_names=eom.holonomic_names)
    placeholders = set(rule)
    specifieds = [s for s in eom.specifieds if s not in placeholders]
    if constants is None:
        constants = list(eom.constants) + list(record_constants(eom, contacts)) + \
            [d for ct in contacts for d in ct.directions]
    variant = EquationsOfMotion.from_blocks(blocks, constants=constants, specifieds=specifieds,
                                            name=name or getattr(eom, "name", None))
    variant.body_inertias = eom.body_inertias
    return variant
