"""Ground contact for URDF robots: the links' collision geometry against a plane.

``robot.add_ground_contact(...)`` turns each collision primitive of the chosen links into
contact elements fixed in its body, each touching the plane at its lowest point:

- a sphere (radius ρ, centre c): one element, the point c - ρ n;
- a capsule (radius ρ, segment of length L along its z axis): the spheres at both ends
  (the lowest point of a capsule is on one of them; both touch when it lies flat);
- a box: its 8 corners (spheres of radius 0);
- a cylinder (radius ρ, length L along z): the rim of each end disc, touching at its lowest
  point c - ρ s / |s|, s = n - (n·a) a (a the axis); where the disc lies flat (|s| → 0) the
  point moves to the disc's centre, the resultant of a uniform pressure on the face
  (|s| regularized as sqrt(|s|² + 10⁻⁶));
- a mesh: a sphere the user gives (``spheres={link: radius}`` or ``(radius, offset)``), else
  an InputError naming the link (a mesh is never skipped silently).

With n the plane's unit normal, O a point of it, P the element's lowest point and v_P the
velocity of the body's material point there, the gap is g = n·(P - O), its rate ġ = n·v_P,
and the force on the body at P (the plane is the world's, fixed)::

    F_n = k δ⁺ᵉ max(0, 1 + 3/2 c δ')      δ = -g, δ⁺ = max(δ, 0)   (Hunt–Crossley; no pull)
    F_t = -μ F_n v_t / sqrt(|v_t|² + v_s²)   v_t = v_P - (n·v_P) n     (smooth Coulomb)
    F = F_n n + F_t

with the stiffness k, exponent e, damping c, friction coefficient μ and the friction's
velocity scale v_s constants of the model (``robot.constants``; symbols named after the
contact group).  The forces enter the tree's equations as external forces on the links
(:mod:`.link_forces`: Q = Σ J_Pᵀ F) and ``robot.system`` as ``Force`` loads at the same
points.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import symengine as se
import sympy as sm

from ..errors import InputError
from .dynamics import ZERO, _add, _dot, _mtv, _scale, num
from .link_forces import LinkLoad, generalized_forces, tree_motion

if TYPE_CHECKING:
    from .robot import Robot

__all__ = ["ContactElement", "GroundContact", "ground_contact", "contact_generalized_forces"]

#: |s|² regularization of a cylinder rim's lowest point (see the module docstring)
RIM_EPSILON2 = 1e-6


@dataclass(frozen=True)
class ContactElement:
    """One contact element fixed in tree body ``body``: ``kind`` "sphere" (``center`` (3,
    body frame), ``radius``; radius 0: a point) or "rim" (a disc's rim: ``center``, unit
    ``axis`` (3, body frame), ``radius``); ``name`` (link and geometry) and ``link``."""

    name: str
    link: str
    body: int
    kind: str
    center: tuple
    radius: float
    axis: tuple | None = None


@dataclass(frozen=True)
class GroundContact:
    """A group of contact elements against one plane (``point``, unit ``normal``: 3 numbers
    each, world coordinates) with the constants of its force law (SymPy symbols, values in
    ``robot.constants``): ``stiffness``, ``damping``, ``friction``, ``velocity_scale`` (None
    where absent) and the numeric ``exponent``; ``name`` prefixes the symbols."""

    name: str
    elements: tuple
    point: tuple
    normal: tuple
    exponent: float
    stiffness: sm.Symbol
    damping: sm.Symbol | None
    friction: sm.Symbol | None
    velocity_scale: sm.Symbol | None

    @property
    def constants(self) -> list:
        return [s for s in (self.stiffness, self.damping, self.friction, self.velocity_scale)
                if s is not None]


def _nonnegative(value: Any, what: str, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"add_ground_contact ({name!r}): {what} must be a number, got {value!r}") from None
    if not np.isfinite(v) or v < 0:
        raise InputError(f"add_ground_contact ({name!r}): {what} must be a finite number >= 0, got {value!r}")
    return v


def _plane(robot: Robot, plane: Any, name: str) -> tuple:
    """(point, unit normal) of the plane, world coordinates; default z = 0 facing up (against
    gravity, or +z without gravity)."""
    if plane is None:
        g = robot.gravity
        normal = -g / np.linalg.norm(g) if g.any() else np.array([0.0, 0.0, 1.0])
        return (0.0, 0.0, 0.0), tuple(float(x) for x in normal)
    try:
        point, normal = (np.asarray(v, dtype=float) for v in plane)
    except (TypeError, ValueError):
        raise InputError(f"add_ground_contact ({name!r}): plane must be (point, normal), two "
                         f"vectors of 3 numbers in world coordinates, got {plane!r}") from None
    if point.shape != (3,) or normal.shape != (3,) or not (np.isfinite(point).all()
                                                          and np.isfinite(normal).all()):
        raise InputError(f"add_ground_contact ({name!r}): plane must be (point, normal), two "
                         f"vectors of 3 finite numbers, got {plane!r}")
    if abs(np.linalg.norm(normal) - 1.0) > 1e-9:
        raise InputError(f"add_ground_contact ({name!r}): the plane's normal {tuple(normal)} is "
                         f"not a unit vector (norm {np.linalg.norm(normal):.6g})")
    return tuple(float(x) for x in point), tuple(float(x) for x in normal)


def _sphere_spec(link: str, spec: Any, name: str) -> tuple[float, np.ndarray]:
    if isinstance(spec, (tuple, list)) and len(spec) == 2 and np.ndim(spec[1]) == 1:
        radius, offset = spec
    else:
        radius, offset = spec, (0.0, 0.0, 0.0)
    offset = np.asarray(offset, dtype=float)
    if offset.shape != (3,) or not np.isfinite(offset).all():
        raise InputError(f"add_ground_contact ({name!r}): spheres[{link!r}]: the offset must be 3 "
                         f"finite numbers (link frame), got {spec!r}")
    return _nonnegative(radius, f"spheres[{link!r}] radius", name), offset


def _elements(robot: Robot, links: Any, spheres: Mapping | None, name: str) -> list[ContactElement]:
    """The contact elements of the chosen links (see the module docstring)."""
    urdf, tree = robot.urdf, robot.tree
    where = urdf.path or "URDF string"
    spheres = dict(spheres or {})
    for link in spheres:
        if link not in urdf.links:
            raise InputError(f"add_ground_contact ({name!r}): spheres names the link {link!r}, "
                             f"which {where} does not have")
    if links is None:
        chosen = [n for n, lk in urdf.links.items() if lk.collisions or n in spheres]
    else:
        chosen = [links] if isinstance(links, str) else list(links)
        for link in chosen:
            if link not in urdf.links:
                raise InputError(f"add_ground_contact ({name!r}): links names {link!r}, which "
                                 f"{where} does not have")
        chosen += [n for n in spheres if n not in chosen]
    out: list[ContactElement] = []
    for link in chosen:
        if link not in tree.link_body:
            raise InputError(f"add_ground_contact ({name!r}): the link {link!r} is the world "
                             "(it cannot touch the ground)")
        body, R_l, p_l = tree.link_body[link]
        if link in spheres:
            radius, offset = _sphere_spec(link, spheres[link], name)
            out.append(ContactElement(f"{link}.sphere", link, body, "sphere",
                                      tuple(R_l @ offset + p_l), radius))
            continue
        collisions = urdf.links[link].collisions
        if not collisions:
            raise InputError(f"add_ground_contact ({name!r}): the link {link!r} has no "
                             "<collision> geometry; give it a sphere: spheres={link: radius}")
        for k, c in enumerate(collisions):
            label = f"{link}.{c.name or k}"
            if c.kind == "invalid":
                raise InputError(f"add_ground_contact ({name!r}): {c.error}")
            if c.kind == "mesh":
                raise InputError(f"add_ground_contact ({name!r}): {where}, link {link!r} (line "
                                 f"{c.line}): its collision geometry is a mesh "
                                 f"({c.filename}); give a sphere for it: "
                                 f"spheres={{{link!r}: radius}} or (radius, offset)")
            R = R_l @ c.rotation
            o = R_l @ c.origin + p_l
            if c.kind == "sphere":
                out.append(ContactElement(label, link, body, "sphere", tuple(o), c.size[0]))
            elif c.kind == "capsule":
                half = 0.5 * c.size[1] * R[:, 2]
                out += [ContactElement(f"{label}.{end}", link, body, "sphere", tuple(o + s * half),
                                       c.size[0]) for end, s in (("top", 1), ("bottom", -1))]
            elif c.kind == "box":
                for i in range(8):
                    signs = np.array([1 if i & 1 else -1, 1 if i & 2 else -1, 1 if i & 4 else -1])
                    corner = o + R @ (0.5 * signs * np.asarray(c.size))
                    out.append(ContactElement(f"{label}.corner{i}", link, body, "sphere",
                                              tuple(corner), 0.0))
            else:           # cylinder: the rims of its two end discs
                half = 0.5 * c.size[1] * R[:, 2]
                out += [ContactElement(f"{label}.{end}", link, body, "rim", tuple(o + s * half),
                                       c.size[0], tuple(R[:, 2]))
                        for end, s in (("top", 1), ("bottom", -1))]
    if not out:
        raise InputError(f"add_ground_contact ({name!r}): no collision geometry on the links "
                         f"{chosen}; give spheres={{link: radius}}")
    return out


def ground_contact(robot: Robot, plane: Any = None, *, links: Any = None, spheres: Mapping | None = None,
                   stiffness: float, exponent: float = 1.5, damping: float | None = None,
                   friction: float | None = None, velocity_scale: float = 1e-3,
                   name: str = "ground") -> GroundContact:
    """The checked :class:`GroundContact` (see :meth:`Robot.add_ground_contact`); adds its
    constants' values to ``robot.constants``."""
    if not isinstance(name, str) or not name.isidentifier():
        raise InputError(f"add_ground_contact: name must be an identifier, got {name!r}")
    k = _nonnegative(stiffness, "stiffness", name)
    e = _nonnegative(exponent, "exponent", name)
    if e < 1:
        raise InputError(f"add_ground_contact ({name!r}): exponent must be >= 1, got {exponent!r}")
    point, normal = _plane(robot, plane, name)
    elements = tuple(_elements(robot, links, spheres, name))
    values: dict = {sm.Symbol(f"{name}_stiffness"): k}
    c = mu = vs = None
    if damping is not None:
        c = sm.Symbol(f"{name}_damping")
        values[c] = _nonnegative(damping, "damping", name)
    if friction is not None:
        mu = sm.Symbol(f"{name}_friction")
        values[mu] = _nonnegative(friction, "friction", name)
        vs = sm.Symbol(f"{name}_velocity_scale")
        values[vs] = _nonnegative(velocity_scale, "velocity_scale", name)
        if values[vs] == 0:
            raise InputError(f"add_ground_contact ({name!r}): velocity_scale must be > 0 for "
                             "smooth friction")
    taken = {str(s) for s in robot.constants}
    for s in values:
        if str(s) in taken:
            raise InputError(f"add_ground_contact: the constant {s} exists already (a contact "
                             f"group named {name!r} was added before); give another name=")
    robot.constants.update(values)
    return GroundContact(name, elements, point, normal, e, next(iter(values)), c, mu, vs)


def _lowest_point(el: ContactElement, motion: Any, n: tuple) -> tuple:
    """The element's lowest point towards the plane (body coordinates, symengine)."""
    center = tuple(num(x) for x in el.center)
    if el.radius == 0:
        return center
    n_b = _mtv(motion.R, n)                          # the normal in body coordinates
    if el.kind == "sphere":
        return _add(center, _scale(num(-el.radius), n_b))
    a = tuple(num(x) for x in el.axis)
    s = _add(n_b, _scale(-_dot(n_b, a), a))
    scale = num(-el.radius) / se.sqrt(_dot(s, s) + num(RIM_EPSILON2))
    return _add(center, _scale(scale, s))


@dataclass(frozen=True)
class ContactQuantities:
    """Per element (symengine): ``gap`` g, ``gap_rate`` ġ, ``normal_force`` F_n,
    ``friction_force`` F_t (3, world), ``slip_velocity`` v_t (3, world), ``point`` P (3,
    body coordinates) and ``body``."""

    gap: Any
    gap_rate: Any
    normal_force: Any
    friction_force: tuple
    slip_velocity: tuple
    point: tuple
    body: int


def contact_quantities(contact: GroundContact, motion: list, symbol: Any) -> list[ContactQuantities]:
    """The gap, forces and slip of every element of ``contact`` (see the module docstring);
    ``motion``: :func:`.link_forces.tree_motion`; ``symbol(sympy Symbol) -> symengine``."""
    n = tuple(num(x) for x in contact.normal)
    O = tuple(num(x) for x in contact.point)
    k = symbol(contact.stiffness)
    c = symbol(contact.damping) if contact.damping is not None else None
    mu = symbol(contact.friction) if contact.friction is not None else None
    vs = symbol(contact.velocity_scale) if contact.velocity_scale is not None else None
    e = num(contact.exponent)
    out = []
    for el in contact.elements:
        m = motion[el.body]
        r = _lowest_point(el, m, n)
        P = m.point(r)
        v = m.point_velocity(r)
        gap = _dot(n, _add(P, _scale(se.Integer(-1), O)))
        rate = _dot(n, v)
        depth = se.Max(ZERO, -gap)
        Fn = k * depth ** e
        if c is not None:
            Fn = Fn * se.Max(ZERO, 1 + se.Rational(3, 2) * c * (-rate))
        vt = _add(v, _scale(-rate, n))
        if mu is not None:
            Ft = _scale(-mu * Fn / se.sqrt(_dot(vt, vt) + vs * vs), vt)
        else:
            Ft = (ZERO, ZERO, ZERO)
        out.append(ContactQuantities(gap, rate, Fn, Ft, vt, r, el.body))
    return out


def contact_generalized_forces(robot: Robot, q: list, u: list, symbol: Any) -> list:
    """Q (tree order) of all of ``robot``'s ground contacts: the external forces of
    :mod:`.link_forces` at each element's lowest point."""
    contacts = getattr(robot, "ground_contacts", ())
    if not contacts:
        return []
    motion = tree_motion(robot.tree, q, u, robot.floating_base)
    loads = []
    for contact in contacts:
        n = tuple(num(x) for x in contact.normal)
        for cq in contact_quantities(contact, motion, symbol):
            F = _add(_scale(cq.normal_force, n), cq.friction_force)
            loads.append(LinkLoad(cq.body, cq.point, F))
    return generalized_forces(robot.tree, q, motion, loads, robot.floating_base)
