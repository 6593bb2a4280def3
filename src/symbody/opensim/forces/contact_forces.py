"""OpenSim's ground contact: ``HuntCrossleyForce`` and ``SmoothSphereHalfSpaceForce`` between a
``ContactSphere`` on a body and a ``ContactHalfSpace`` (usually the ground), and
``HuntCrossleyForce`` between two ``ContactSphere``s on different bodies, as Simbody
computes them, with the kinematics of :mod:`.contact_geometry` (depth δ, its rate δ', the
slip v_t along the plane, the contact point P).  Each contact point also gives a
:class:`~symbody.formulation.contact_record.ContactRecord` (``model.eom.contacts``:
touchdown/lift-off events, ``trajectory.contacts[name]``, outputs).

``HuntCrossleyForce`` (Simbody's ``HuntCrossleyForceImpl::calcForce``).  Each surface's
``stiffness`` E (N/m²) enters as E^(2/3); with the half-space's k₁ = E₁^(2/3), the sphere's
k₂ = E₂^(2/3), s₁ = k₂/(k₁ + k₂), k = k₁ s₁ and c = c₁ s₁ + c₂ (1 - s₁),

    F_n = K δ^(3/2) max(0, 1 + 3/2 c δ'),      K = 4/3 k sqrt(R k)  (R the sphere's radius),

(two spheres a, b: k₁ = E_a^(2/3), k₂ = E_b^(2/3), R = r_a r_b/(r_a + r_b), the normal along
the centres; their slip and friction by ground components, :mod:`.contact_geometry`),

which is exactly ``symbody.contact``'s Hunt-Crossley law
(:func:`symbody.contact.normal_law.hunt_crossley`, used here) with stiffness K, exponent 3/2
and damping c.  Friction differs from symbody.contact's smooth Coulomb law
(μ v/sqrt(v² + ε²), Stribeck's exp): with the slip speed v = |v_t|, the transition velocity
v_tr, μ_s, μ_d, μ_v the surfaces' coefficients combined as 2 a b/(a + b) and
A = μ_d + 2 (μ_s - μ_d)/(1 + (v/v_tr)²),

    F_t = -F_n [min(v/v_tr, 1) A + μ_v v] v_t / v,

a linear ramp up to μ_s at v = v_tr (a kink there), then a Stribeck-like decay towards
μ_d; it is written out here (:func:`opensim_friction`).  (Simbody returns from its loop over a
``HuntCrossleyForce``'s contacts at the first one whose damping would pull, so that its
later contacts give no force at that instant; each contact here is computed on its own, which
is what the law means; OpenSim's files give each foot sphere its own force, where the two
agree.)

``SmoothSphereHalfSpaceForce`` (Simbody's ``SmoothSphereHalfSpaceForceImpl::calcForce``,
Falisse et al. 2019) is smooth everywhere, a law of its own, written out here: with
k = E^(2/3)/2, the constant c_f (``constant_contact_force``), b_d (``hertz_smoothing``) and
b_v (``hunt_crossley_smoothing``),

    F_H = 4/3 k sqrt(R k) (δ² + c_f)^(3/4) (1 + tanh(b_d δ))/2,
    F_n = F_H (1 + 3/2 c δ') (1 + tanh(b_v (δ' + 2/(3c))))/2,
    F_t = -F_n [min(v_s/v_tr, 1) A(v_s) + μ_v v_s] v_t / v_s,   v_s = sqrt(|v_t|² + c_f),

(A as above with v_s), so it pushes (a little) even apart and its friction never vanishes.
symbody.contact's smooth normal force (``SmoothNormal``) smooths the same two maxima with
(x + sqrt(x² + ε²))/2 instead, so it is not this law.  (OpenSim 4.6 reads no
``derivative_smoothing``: files written by 4.0 that carry it get the default c_f = 1e-5, as
here.)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import symengine as se
import sympy as sm

from ...contact.normal_law import hunt_crossley
from ...formulation.contact_record import ContactRecord
from ...symengine_bridge import StructuredSympyConverter, to_symengine
from . import register_force
from .base import ForceContext, ForceContribution
from .contact_geometry import (
    ContactKinematics,
    ContactLoad,
    contact_shape,
    sphere_on_half_space,
    sphere_on_sphere,
)
from .vector3 import add, scale

__all__ = ["hunt_crossley_force", "smooth_sphere_half_space_force", "opensim_friction",
           "ContactForceRecord"]


@dataclass(frozen=True)
class ContactForceRecord:
    """What ``model.forces[name]`` holds for a contact force: its ``tag``, the ``spheres``
    and ``half_spaces`` (a half-space or, for two spheres, the other sphere, a: the force on
    ``spheres[i]`` is F, on a -F) of its contact points, and per point the penetration ``depth`` δ and
    the ``normal_force`` F_n as symengine expressions of the tree's coordinates and speeds
    (``model.sympy_converter`` turns them into SymPy)."""

    tag: str
    spheres: tuple
    half_spaces: tuple
    depth: tuple
    normal_force: tuple


def _harmonic(a: float, b: float) -> float:
    """Simbody's combination of two surfaces' friction coefficients: 2 a b/(a + b) (0 if
    both are 0)."""
    return 2 * a * b / (a + b) if (a != 0 or b != 0) else 0.0


#: the placeholders the laws are written in: gap g, its rate g', slip (s₁, s₂, s₃), F_n
_G, _GD, _S1, _S2, _S3, _FN = sm.symbols("_g _gd _s1 _s2 _s3 _fn", real=True)


def opensim_friction(normal: sm.Expr, slip: tuple, speed_squared: sm.Expr, transition: float,
                     static: float, dynamic: float, viscous: float) -> tuple:
    """(F_t1, F_t2) on the sphere (SymPy): -F_n [min(v/v_tr, 1) A(v) + μ_v v] v_t/v with the
    slip speed v = sqrt(``speed_squared``) and A = μ_d + 2 (μ_s - μ_d)/(1 + (v/v_tr)²)."""
    vt2 = sm.Float(transition ** 2)
    A = sm.Float(dynamic) + sm.Float(2 * (static - dynamic)) / (1 + speed_squared / vt2)
    per_speed = sm.Piecewise((A / sm.Float(transition), speed_squared < vt2),
                             (A / sm.sqrt(speed_squared), True)) + sm.Float(viscous)
    return tuple(-normal * per_speed * s for s in slip)


class _Law:
    """A contact law as SymPy templates in the placeholders (g, g', the slip's ``slips``
    (s₁, s₂) or (s₁, s₂, s₃), F_n): ``force`` F_n(g, g'), ``energy``, ``switch`` (the
    damping's, or None), ``friction`` (F_t along each slip component) in (s, F_n), put in
    at the kinematics in symengine (:meth:`at`)."""

    def __init__(self, force: sm.Expr, energy: sm.Expr, switch: sm.Expr | None,
                 friction: tuple, slips: tuple = (_S1, _S2)):
        self.sympy = [force, energy] + list(friction) + ([switch] if switch is not None else [])
        self.has_switch = switch is not None
        self.tangential = len(friction)
        self.symengine = to_symengine(self.sympy)
        self.placeholders = [se.Symbol(str(x)) for x in (_G, _GD, *slips)]
        self.normal = se.Symbol(str(_FN))

    def at(self, kin: ContactKinematics) -> tuple:
        """(F_n, V, (F_t1, F_t2[, F_t3]), switch) in symengine at the contact's kinematics."""
        rule = dict(zip(self.placeholders, [-kin.depth, -kin.depth_rate, *kin.slip]))
        force = self.symengine[0].xreplace(rule)
        rule[self.normal] = force
        values = [force] + [e.xreplace(rule) for e in self.symengine[1:]]
        k = 2 + self.tangential
        return force, values[1], tuple(values[2:k]), (values[k] if self.has_switch else None)


def _hunt_crossley_law(K: float, c: float, transition: float, us: float, ud: float,
                       uv: float, slips: tuple = (_S1, _S2)) -> _Law:
    """symbody.contact's Hunt-Crossley normal force with OpenSim's friction."""
    force, energy, switch = hunt_crossley(sm.Float(K), sm.Rational(3, 2),
                                          sm.Float(c) if c else 0, _G, _GD)
    friction = opensim_friction(_FN, slips, sum(s ** 2 for s in slips), transition, us, ud, uv)
    return _Law(force, energy, switch, friction, slips)


def _smooth_law(K: float, c: float, cf: float, bd: float, bv: float, transition: float,
                us: float, ud: float, uv: float) -> _Law:
    """SmoothSphereHalfSpaceForce's law (module docstring)."""
    d, rate = -_G, -_GD
    hertz = (sm.Float(K) * (d ** 2 + sm.Float(cf)) ** sm.Rational(3, 4)
             * (1 + sm.tanh(sm.Float(bd) * d)) / 2)
    force = hertz * (1 + sm.Float(1.5 * c) * rate)
    if c != 0:
        force = force * (1 + sm.tanh(sm.Float(bv) * (rate + sm.Float(2 / (3 * c))))) / 2
    friction = opensim_friction(_FN, (_S1, _S2), _S1 ** 2 + _S2 ** 2 + sm.Float(cf), transition,
                                us, ud, uv)
    return _Law(force, sm.Float(0.4) * hertz * d, None, friction)


def _max_penetration(kin: ContactKinematics) -> sm.Expr | None:
    """The depth where the compliant law stops meaning anything: the (smaller) radius."""
    radii = [r for r in (kin.sphere.radius, kin.other.radius if kin.other.kind == "ContactSphere"
                         else 0.0) if r > 0]
    return sm.Float(min(radii)) if radii else None


def _contact(ctx: ForceContext, name: str, kin: ContactKinematics, law: _Law, stiffness: float,
             damping: float, mu: float) -> tuple[list, ContactRecord, Any]:
    """(Q, the record, F_n in symengine) of one contact point."""
    normal, energy, friction, switch = law.at(kin)
    force = scale(normal, kin.normal)
    for f, t in zip(friction, kin.tangents):
        force = add(force, scale(f, t))
    # the record's SymPy expressions from the symengine ones, node by node: SymPy's own
    # Piecewise (ExprCondPair) folds any Piecewise inside a condition (a spline of a
    # CustomJoint in the gap) into an ITE and simplifies it, too deep for its recursion
    # unevaluated (SymPy's powers of long sums ask for their real parts)
    conv = StructuredSympyConverter(ctx.names)
    with sm.evaluate(False):
        gap, rate = conv(-kin.depth), conv(-kin.depth_rate)
        slip = tuple(conv(s) for s in kin.slip)
        fn, energy, ft = conv(normal), conv(energy), tuple(conv(f) for f in friction)
        switch = None if switch is None else conv(switch)
    with sm.evaluate(False):          # (long expressions: no SymPy simplification)
        power = sm.Add(sm.Mul(fn, rate), *(sm.Mul(a, b) for a, b in zip(ft, slip)))
    switching = (("contact", gap),) + ((("damping", switch),) if switch is not None else ())
    record = ContactRecord(
        name=name, gap=gap, gap_rate=rate, normal_force=fn, friction_force=ft,
        slip_velocity=slip, friction_coefficient=sm.Float(mu), friction_mode="smooth",
        switching=switching,
        max_penetration=_max_penetration(kin),
        elastic_energy=energy, power=power, stiffness=sm.Float(stiffness),
        exponent=sm.Rational(3, 2), damping=sm.Float(damping))
    return kin.generalized(force), record, normal


def _parameters(element) -> dict:
    """{geometry name: (stiffness, dissipation, static, dynamic, viscous friction)} of a
    HuntCrossleyForce's ContactParameters."""
    out = {}
    for p in element.walk():
        if p.tag.endswith("ContactParameters") and p is not element:
            names = (p.text_of("geometry") or "").split()
            values = tuple(p.number(t, 0.0) for t in ("stiffness", "dissipation",
                                                       "static_friction", "dynamic_friction",
                                                       "viscous_friction"))
            for n in names:
                out[n] = values
    return out


@register_force("HuntCrossleyForce")
def hunt_crossley_force(element, ctx: ForceContext) -> ForceContribution:
    """Every sphere-half-space and sphere-sphere pair of the force's geometry on different
    bodies (module docstring)."""
    params = _parameters(element)
    if not params:
        raise element.error("has no <HuntCrossleyForce::ContactParameters> with <geometry>")
    transition = element.number("transition_velocity", 0.01)
    if not transition > 0:
        raise element.error(f"<transition_velocity> must be > 0, got {transition}")
    shapes = [contact_shape(ctx, element, n) for n in params]
    spheres = [s for s in shapes if s.kind == "ContactSphere"]
    planes = [s for s in shapes if s.kind == "ContactHalfSpace"]
    # (b, a): the force F acts on b, -F on a; a half-space or the first of two spheres
    pairs = [(s, h) for s, h in itertools.product(spheres, planes)
             if s.placement.body != h.placement.body]
    pairs += [(b, a) for a, b in itertools.combinations(spheres, 2)
              if a.placement.body != b.placement.body]
    if not pairs:
        raise element.error("has no ContactSphere and ContactHalfSpace or two ContactSpheres "
                            "on different bodies")
    name = element.name or "HuntCrossleyForce"
    Q = ctx.zeros()
    records, depths, normals, loads = [], [], [], []
    for sphere, other in pairs:
        E1, c1, us1, ud1, uv1 = params[other.name]
        E2, c2, us2, ud2, uv2 = params[sphere.name]
        if not (E1 > 0 and E2 > 0):
            raise element.error(f"the stiffness of {other.name!r} and {sphere.name!r} must be "
                                f"> 0, got {E1} and {E2}")
        k1, k2 = E1 ** (2 / 3), E2 ** (2 / 3)
        s1 = k2 / (k1 + k2)
        k, c = k1 * s1, c1 * s1 + c2 * (1 - s1)
        us, ud, uv = _harmonic(us1, us2), _harmonic(ud1, ud2), _harmonic(uv1, uv2)
        if other.kind == "ContactHalfSpace":
            R, slips = sphere.radius, (_S1, _S2)
            kin = sphere_on_half_space(ctx, sphere, other, shift=0.5 - s1)
            rec_name = f"{name}[{sphere.name}]"
        else:                 # two spheres: the effective radius r_a r_b/(r_a + r_b)
            R = other.radius * sphere.radius / (other.radius + sphere.radius)
            slips = (_S1, _S2, _S3)
            kin = sphere_on_sphere(ctx, other, sphere, shift=0.5 - s1)
            rec_name = f"{name}[{other.name}-{sphere.name}]"
        K = 4 / 3 * k * (R * k) ** 0.5
        law = _hunt_crossley_law(K, c, transition, us, ud, uv, slips)
        q_pair, record, normal = _contact(ctx, name if len(pairs) == 1 else rec_name, kin, law,
                                          K, c, ud)
        Q = [a + b for a, b in zip(Q, q_pair)]
        loads.append(ContactLoad(sphere, other, 0.5 - s1, record))
        records.append(record)
        depths.append(kin.depth)
        normals.append(normal)
    return ForceContribution(generalized=Q, contacts=tuple(records),
                             contact_loads=tuple(loads), record=ContactForceRecord(
                                 "HuntCrossleyForce", tuple(p[0].name for p in pairs),
                                 tuple(p[1].name for p in pairs), tuple(depths), tuple(normals)))


@register_force("SmoothSphereHalfSpaceForce")
def smooth_sphere_half_space_force(element, ctx: ForceContext) -> ForceContribution:
    """Falisse's smooth sphere-half-space law (module docstring)."""
    sphere = contact_shape(ctx, element, _socket(element, "sphere"))
    plane = contact_shape(ctx, element, _socket(element, "half_space"))
    if sphere.kind != "ContactSphere" or plane.kind != "ContactHalfSpace":
        raise element.error(f"needs a ContactSphere and a ContactHalfSpace, got a {sphere.kind} "
                            f"and a {plane.kind}")
    num = {t: element.number(t, d) for t, d in (
        ("stiffness", 1.0), ("dissipation", 0.0), ("static_friction", 0.0),
        ("dynamic_friction", 0.0), ("viscous_friction", 0.0), ("transition_velocity", 0.01),
        ("constant_contact_force", 1e-5), ("hertz_smoothing", 300.0),
        ("hunt_crossley_smoothing", 50.0))}
    if not num["transition_velocity"] > 0 or not num["stiffness"] > 0:
        raise element.error("<stiffness> and <transition_velocity> must be > 0")
    kin = sphere_on_half_space(ctx, sphere, plane)
    k = 0.5 * num["stiffness"] ** (2 / 3)
    K = 4 / 3 * k * (sphere.radius * k) ** 0.5
    c = num["dissipation"]
    law = _smooth_law(K, c, num["constant_contact_force"], num["hertz_smoothing"],
                      num["hunt_crossley_smoothing"], num["transition_velocity"],
                      num["static_friction"], num["dynamic_friction"], num["viscous_friction"])
    Q, record, normal = _contact(ctx, element.name or "SmoothSphereHalfSpaceForce", kin, law,
                                 K, c, num["dynamic_friction"])
    return ForceContribution(generalized=Q, contacts=(record,),
                             contact_loads=(ContactLoad(sphere, plane, 0.0, record),),
                             record=ContactForceRecord(
        "SmoothSphereHalfSpaceForce", (sphere.name,), (plane.name,), (kin.depth,), (normal,)))


def _socket(element, name: str) -> str:
    for tag in (f"socket_{name}", f"socket_{name}_connectee_name"):
        text = element.text_of(tag)
        if text:
            return text
    raise element.error(f"<socket_{name}> is missing")

