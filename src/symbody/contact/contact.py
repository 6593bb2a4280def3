"""``Contact``: a compliant contact between two shapes, as SymPy loads and a record.

    contact = Contact(Sphere(P, r, frame=B), Plane(O, N.z), stiffness=1e5, damping=0.5,
                      friction=0.6, name="ball")
    system.add_loads(*contact.to_loads())      # or KanesMethod(..., forcelist=...)
    outputs = {"Fn": contact.normal_force}

Normal force: Hunt-Crossley (:mod:`.normal_law`); friction: Coulomb with optional
Stribeck and viscous terms (:mod:`.friction`), smooth (regularized) or exact (Coulomb's
law with stick as a constraint, solved by an exact-friction engine: the loads then carry
placeholder functions of time, see
:class:`~symbody.formulation.contact_record.ContactRecord`).  A shape with several
features (a box's corners) makes one contact point per feature, each with its own record
``name[i]``.
"""

from __future__ import annotations

import re
from typing import Any

import sympy as sm
from sympy.physics.vector import Vector, dynamicsymbols

from ..errors import InputError
from ..formulation.contact_record import ContactRecord
from ..scene import Mesh
from .friction import DEFAULT_VELOCITY_SCALE, Friction, as_friction, smooth_friction
from .geometry import Plane, Shape, Sphere
from .loads import ContactForce, ContactTorque
from .normal_law import damping_from_restitution, hunt_crossley, linear_damper
from .pairs import PointKinematics, sphere_on_plane, sphere_on_sphere
from .smooth_normal import as_smoothing, smooth_hunt_crossley

__all__ = ["Contact", "FRICTION_MODES", "DAMPING_LAWS"]

#: the friction modes of a Contact
FRICTION_MODES = ("smooth", "exact")
#: the damping laws: Hunt-Crossley's k δⁿ (1 + 3/2 c δ'), or a linear damper k δⁿ + d δ'
DAMPING_LAWS = {"hunt-crossley": hunt_crossley, "linear": linear_damper}


def _parameter(value: Any, what: str, name: str, low: float, strict: bool = False) -> sm.Expr:
    try:
        v = sm.sympify(value)
    except (sm.SympifyError, TypeError) as exc:
        raise InputError(f"contact {name!r}: {what} must be a number or a SymPy expression, got "
                         f"{value!r}") from exc
    if v.is_number and (not v.is_real or v < low or (strict and v == low)):
        raise InputError(f"contact {name!r}: {what} must be {'>' if strict else '>='} {low:g}, got "
                         f"{value!r}")
    return v


def _shape_name(shape: Any) -> str:
    point = getattr(shape, "point", None)
    return str(point) if point is not None else type(shape).__name__


def _check_shape(shape: Any, name: str, which: str) -> None:
    if isinstance(shape, Shape):
        return
    kind = type(shape).__name__
    if isinstance(shape, Mesh) or "mesh" in kind.lower():
        raise InputError(f"contact {name!r}: {which} is a mesh ({kind}); contact needs a primitive "
                         "shape: put spheres (symbody.contact.Sphere) where the mesh touches")
    raise InputError(f"contact {name!r}: {which} must be a symbody.contact shape (Plane, Sphere, Box, "
                     f"Capsule, Cylinder), got {kind}")


def _identifier(name: str) -> str:
    ident = re.sub(r"\W", "_", name).strip("_") or "contact"
    return ident if not ident[0].isdigit() else "c_" + ident


class Contact:
    """A compliant contact between shapes ``a`` and ``b`` (see the module docstring).

    Parameters
    ----------
    a, b : shapes (:mod:`.geometry`): a Plane with a Sphere, Box, Capsule or Cylinder (in
        either order), or two Spheres.
    stiffness : k (N/m^n), >= 0.
    exponent : n >= 1 (1: a linear spring; 3/2: Hertz).
    damping : Hunt-Crossley c (s/m), >= 0; or ``restitution`` e in (0, 1]: per impact,
        c = 2 β(e) / (3 v₀) with v₀ the approach speed of the last touchdown (a state of the
        equations the simulation sets there), so that every bounce has coefficient e; or
        with ``impact_speed`` v (m/s) one c for all impacts, such that a bounce at approach
        speed v has coefficient e (:mod:`.normal_law`).
    damping_law : "hunt-crossley" (default: F_n = k δⁿ max(0, 1 + 3/2 c δ')) or "linear"
        (F_n = max(0, k δⁿ + d δ'), ``damping`` d in N s/m: the book's jumper; with n = 1
        a linear spring-damper).  Both never pull.
    friction : None, the Coulomb coefficient μ, or a :class:`~.friction.Friction` (Stribeck,
        viscous, the smooth law's velocity scale).
    friction_mode : "smooth" (regularized, no events) or "exact" (Coulomb's law with stick
        as a constraint; the loads carry placeholders an exact-friction engine fills).
    name : the contact's name (default "<b's point>_on_<a's point>").
    rolling_resistance : optional ρ (m): a torque ρ F_n on b against its rolling relative to
        a, T = -ρ F_n ω_t / sqrt(ω_t·ω_t + (ε/R)²) (ω_t the tangential part of b's angular
        velocity relative to a, R its radius, ε the friction's velocity scale), and its
        opposite on a; for spheres (and capsule ends) against a plane.
    smoothing : None, or a :class:`~.smooth_normal.SmoothNormal` (or its depth scale in m,
        or True for the defaults): the Hunt-Crossley force with its two maxima replaced by
        a smooth positive part, C-infinity, for optimal control (error documented in
        :mod:`.smooth_normal`).

    Parameters may be numbers (checked here) or SymPy symbols (constants of the model;
    their values are checked when a run starts).
    """

    def __init__(self, a: Any, b: Any, *, stiffness: Any, exponent: Any = 1.5, damping: Any = None,
                 restitution: Any = None, impact_speed: Any = None, friction: Any = None,
                 friction_mode: str = "smooth", name: str | None = None,
                 damping_law: str = "hunt-crossley", rolling_resistance: Any = None,
                 smoothing: Any = None) -> None:
        label = name if name is not None else f"{_shape_name(b)}_on_{_shape_name(a)}"
        if not isinstance(label, str) or not label:
            raise InputError(f"Contact: name must be a non-empty string, got {name!r}")
        self.name = label
        _check_shape(a, label, "the first shape")
        _check_shape(b, label, "the second shape")
        self.stiffness = _parameter(stiffness, "the stiffness", label, 0.0)
        self.exponent = _parameter(exponent, "the exponent", label, 1.0)
        if damping_law not in DAMPING_LAWS:
            raise InputError(f"contact {label!r}: damping_law must be one of "
                             f"{', '.join(map(repr, DAMPING_LAWS))}, got {damping_law!r}")
        if damping_law != "hunt-crossley" and restitution is not None:
            raise InputError(f"contact {label!r}: restitution maps to a Hunt-Crossley damping only; "
                             "give damping=d with damping_law='linear'")
        self.damping_law = damping_law
        #: the smooth normal force's scales (None: the exact Hunt-Crossley maxima)
        self.smoothing = as_smoothing(smoothing, label)
        if self.smoothing is not None and damping_law != "hunt-crossley":
            raise InputError(f"contact {label!r}: smoothing applies to the Hunt-Crossley law only "
                             f"(damping_law='hunt-crossley'), got damping_law={damping_law!r}")
        self.damping = self._damping(damping, restitution, impact_speed)
        #: restitution per impact: the damping is 2 β(e) s / 3 with s = 1/v₀ of the last touchdown
        self.per_impact = restitution is not None and impact_speed is None and self.damping != 0
        self.restitution = restitution
        if friction_mode not in FRICTION_MODES:
            raise InputError(f"contact {label!r}: friction_mode must be 'smooth' or 'exact', got "
                             f"{friction_mode!r}")
        self.friction: Friction | None = as_friction(friction, label, exact=friction_mode == "exact")
        self.friction_mode = friction_mode if self.friction is not None else "none"
        if self.per_impact and self.friction_mode == "exact":
            raise InputError(f"contact {label!r}: a restitution per impact (no impact_speed) is not "
                             "available with friction_mode='exact' (its stick/slip engine does not carry "
                             "the impact state); give impact_speed=v or damping=c")
        self.rolling_resistance = (None if rolling_resistance is None else
                                   _parameter(rolling_resistance, "the rolling resistance", label, 0.0))
        if isinstance(b, Plane) and not isinstance(a, Plane):
            a, b = b, a
        self.a, self.b = a, b
        kinematics = self._kinematics(a, b)
        multiple = len(kinematics) > 1
        self._loads: list = []
        records = []
        for i, kin in enumerate(kinematics):
            rec_name = f"{label}[{i}]" if multiple else label
            record, loads = self._point(kin, rec_name)
            records.append(record)
            self._loads += loads
        #: one ContactRecord per contact point (``name`` or ``name[i]``)
        self.records: tuple[ContactRecord, ...] = tuple(records)

    # ------------------------------------------------------------------ construction
    def _damping(self, damping: Any, restitution: Any, impact_speed: Any) -> sm.Expr:
        name = self.name
        if damping is not None and restitution is not None:
            raise InputError(f"contact {name!r}: give damping or restitution, not both")
        if restitution is not None:
            try:
                e = float(restitution)
            except (TypeError, ValueError):
                raise InputError(f"contact {name!r}: restitution must be a number in [0, 1], got "
                                 f"{restitution!r}") from None
            if not 0.0 <= e <= 1.0:
                raise InputError(f"contact {name!r}: restitution must be in [0, 1], got {restitution!r}")
            if impact_speed is None:      # per impact: c = 2 β(e) s / 3, s = 1/v₀ set at touchdown
                return damping_from_restitution(e, 1, name)
            return damping_from_restitution(e, impact_speed, name)
        if impact_speed is not None:
            raise InputError(f"contact {name!r}: impact_speed is used only with restitution")
        if damping is None:
            return sm.S.Zero
        return _parameter(damping, "the damping", name, 0.0)

    def _kinematics(self, a: Any, b: Any) -> list[PointKinematics]:
        name = self.name
        with_slip = self.friction is not None or self.rolling_resistance is not None
        if isinstance(a, Plane) and isinstance(b, Plane):
            raise InputError(f"contact {name!r}: two planes cannot touch at points")
        if isinstance(a, Plane):
            self._check_normal(a)
            if a.frame is None:
                raise InputError(f"contact {name!r}: the frame the plane is fixed in cannot be inferred "
                                 f"from its normal {a.normal}; give Plane(point, normal, frame=F)")
            features = b.features(a.normal)
            out = []
            for i, f in enumerate(features):
                point_name = f"{name}_{i}" if len(features) > 1 else name
                out.append(sphere_on_plane(a, f, name, with_slip, f.label, _identifier(point_name)))
            return out
        if isinstance(a, Sphere) and isinstance(b, Sphere):
            if with_slip:
                raise InputError(f"contact {name!r}: friction and rolling resistance between two spheres "
                                 "are not modelled; give friction=None")
            return [sphere_on_sphere(a, b, name, _identifier(name))]
        raise InputError(f"contact {name!r}: no contact between a {type(a).__name__} and a "
                         f"{type(b).__name__}; supported: a Plane with a Sphere, Box, Capsule or "
                         "Cylinder, and two Spheres")

    def _check_normal(self, plane: Plane) -> None:
        n = plane.normal
        norm2 = sm.sympify(n.dot(n))
        residual = sm.simplify(norm2 - 1)
        if residual == 0:
            return
        atoms = residual.free_symbols | residual.atoms(sm.core.function.AppliedUndef)
        trial = {s: 0.37 + 0.11 * k for k, s in enumerate(sorted(atoms, key=str))}
        value = complex(residual.xreplace(trial).evalf())
        if abs(value) > 1e-12:
            raise InputError(f"contact {self.name!r}: the plane's normal {n} is not a unit vector "
                             f"(|n|^2 = {norm2})")

    def _point(self, kin: PointKinematics, name: str) -> tuple[ContactRecord, list]:
        """The record and the loads of one contact point."""
        damping, impact_states = self.damping, ()
        if self.per_impact:
            slowness = dynamicsymbols(f"{_identifier(name)}_impact_slowness")
            damping, impact_states = damping * slowness, (slowness,)
        switching = [("contact", kin.gap)]
        if self.smoothing is not None:          # no kinks: touchdown and lift-off only reported
            force, energy = smooth_hunt_crossley(self.stiffness, self.exponent, damping,
                                                 kin.gap, kin.gap_rate, self.smoothing)
        else:
            law = DAMPING_LAWS[self.damping_law]
            force, energy, switch = law(self.stiffness, self.exponent, damping, kin.gap,
                                        kin.gap_rate)
            if switch is not None:
                switching.append(("damping", switch))
        n = kin.normal
        force_vec = force * n
        friction, slip, placeholders = (), (), ()
        mu = None
        power = force * kin.gap_rate
        if self.friction is not None:
            # the tangent directions along which b can slip (a planar motion has one)
            pairs = [(t, kin.slip.dot(t)) for t in kin.tangents]
            pairs = [(t, v) for t, v in pairs if sm.sympify(v) != 0] or pairs[:1]
            tangents = [t for t, _ in pairs]
            slip = tuple(v for _, v in pairs)
            mu = self.friction.coefficient
            if self.friction_mode == "exact":
                ident = _identifier(name)
                placeholders = tuple(dynamicsymbols(f"{ident}_friction_{k + 1}") for k in range(len(slip)))
                friction = placeholders
            else:
                friction = smooth_friction(self.friction, force, slip)
            for f, t, v in zip(friction, tangents, slip):
                force_vec = force_vec + f * t
                power = power + f * v
        torque = None
        if self.rolling_resistance is not None:
            torque, rolling_power = self._rolling(kin, force, name)
            power = power + rolling_power
        record = ContactRecord(
            name=name, gap=kin.gap, gap_rate=kin.gap_rate, normal_force=force,
            friction_force=tuple(friction), slip_velocity=tuple(slip), friction_coefficient=mu,
            friction_mode=self.friction_mode, friction_placeholders=placeholders,
            static_friction_coefficient=(self.friction.static if self.friction_mode == "exact"
                                         and self.friction is not None else None),
            switching=tuple(switching), max_penetration=kin.max_penetration, elastic_energy=energy,
            power=power, stiffness=self.stiffness, exponent=self.exponent, damping=damping,
            impact_states=impact_states)
        loads = [ContactForce(kin.point_b, force_vec, (record,)), ContactForce(kin.point_a, -force_vec)]
        if torque is not None:
            loads += [ContactTorque(kin.frame_b, torque), ContactTorque(kin.frame_a, -torque)]
        return record, loads

    def _rolling(self, kin: PointKinematics, force: sm.Expr, name: str) -> tuple:
        """(the rolling-resistance torque on b, its power) at one contact point."""
        if kin.frame_b is None or kin.radius == 0:
            raise InputError(f"contact {name!r}: rolling resistance needs a sphere of radius > 0 that "
                             "turns with a known frame (Sphere(rigid_body, r))")
        omega = kin.frame_b.ang_vel_in(kin.frame_a)
        pairs = [(t, omega.dot(t)) for t in kin.tangents]
        pairs = [(t, w) for t, w in pairs if sm.sympify(w) != 0] or pairs[:1]
        scale = (self.friction.velocity_scale if self.friction is not None else DEFAULT_VELOCITY_SCALE)
        norm = sm.sqrt(sum((w ** 2 for _, w in pairs), sm.S.Zero) + (scale / kin.radius) ** 2)
        torque = sum((-self.rolling_resistance * force * w / norm * t for t, w in pairs), Vector(0))
        power = sum((-self.rolling_resistance * force * w ** 2 / norm for _, w in pairs), sm.S.Zero)
        return torque, power

    # ------------------------------------------------------------------ the public face
    def to_loads(self) -> list:
        """The contact's loads: a :class:`~.loads.ContactForce` on each body at each contact
        point (b's pushed along +n, a's along -n), for ``System.add_loads``,
        ``KanesMethod(forcelist=...)``, ``LagrangesMethod(forcelist=...)``."""
        return list(self._loads)

    def _field(self, attr: str) -> Any:
        values = [getattr(r, attr) for r in self.records]
        if len(values) == 1:
            return values[0]
        if values and isinstance(values[0], tuple):
            return sm.Matrix([list(v) for v in values])
        return sm.Matrix(values)

    @property
    def gap(self) -> Any:
        """g (m): > 0 apart, < 0 penetrating (a column, one row per point, for a shape with
        several contact points)."""
        return self._field("gap")

    @property
    def gap_rate(self) -> Any:
        """g' (m/s), with q' in it (``simulate``'s outputs replace it through the kinematics)."""
        return self._field("gap_rate")

    @property
    def normal_force(self) -> Any:
        """F_n >= 0 (N)."""
        return self._field("normal_force")

    @property
    def friction_force(self) -> Any:
        """(F_t1, F_t2) (N) on b along the tangent basis (a Matrix row per point; () without
        friction)."""
        return self._field("friction_force")

    @property
    def slip_velocity(self) -> Any:
        """(v_t1, v_t2) (m/s) of b relative to a along the tangent basis."""
        return self._field("slip_velocity")

    @property
    def elastic_energy(self) -> Any:
        """V = k δ^(n+1)/(n+1) (J)."""
        return self._field("elastic_energy")

    def __repr__(self) -> str:
        return (f"<Contact {self.name!r}: {type(self.a).__name__}-{type(self.b).__name__}, "
                f"{len(self.records)} point{'s' if len(self.records) > 1 else ''}, friction "
                f"{self.friction_mode}>")
