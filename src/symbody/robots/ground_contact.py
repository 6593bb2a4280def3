"""Ground contact for URDF robots: the links' collision geometry against a plane.

``robot.add_ground_contact(...)`` turns each collision primitive of the chosen links into
the contact features :mod:`symbody.contact.geometry` uses, spheres fixed in the body that
touch the plane at their lowest point:

- a sphere: itself;  a capsule (URDF ``<capsule radius length>``): its two end spheres;
- a box: its 8 corners (spheres of radius 0);
- a cylinder: the deepest point of each end rim, c - R ŵ with ŵ the unit projection of the
  plane normal onto the end face (|w| floored at 1e-12 as symbody.contact.Cylinder does: a
  cylinder standing exactly flat touches at its faces' centres);
- a mesh: the sphere the user gives (``spheres={link: radius}`` or ``(radius, offset)``),
  else an InputError naming the link and line (a mesh is never skipped silently).

With n the plane's unit normal, O a point of it, P the feature's lowest point and v_P the
velocity of the body's material point there: the gap g = n·(P - O), its rate g' = n·v_P,
the slip v_t = (v_P·t1, v_P·t2) along the plane's tangents, and the force on the body at P
is F_n n + F_t1 t1 + F_t2 t2 with the laws of :mod:`symbody.contact` (Hunt–Crossley
:func:`~symbody.contact.normal_law.hunt_crossley`, smooth Coulomb/Stribeck friction
:func:`~symbody.contact.friction.smooth_friction`, or exact friction's placeholders).

The laws' constants are symbols of the model, their values in ``robot.constants``
(``{name}_stiffness``, ``{name}_damping``, ``{name}_friction``, ``{name}_velocity_scale``),
so they can change per run without compiling again.  The forces enter the tree's
equations as external forces on the links (:mod:`.link_forces`: Q = Σ J_Pᵀ F, all in
symengine), ``robot.eom.contacts`` holds one
:class:`~symbody.formulation.contact_record.ContactRecord` per feature (events, outputs,
``trajectory.contacts``), and ``robot.system`` gets the same contacts as
:class:`symbody.contact.Contact` loads on its link frames (SymPy's kinematics: the oracle
of the tree equations).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import symengine as se
import sympy as sm
from sympy.physics.vector import dynamicsymbols

from ..contact.friction import Friction, as_friction, smooth_friction
from ..contact.geometry import RIM_FLOOR, Shape, SphereFeature
from ..contact.normal_law import damping_from_restitution, hunt_crossley
from ..errors import InputError
from ..formulation.contact_record import ContactRecord
from ..symengine_bridge import SympyConverter, to_symengine
from .dynamics import _add, _dot, _mtv, _scale, num
from .link_forces import LinkLoad, generalized_forces, tree_motion

if TYPE_CHECKING:
    from .robot import Robot

__all__ = ["ContactFeature", "GroundContact", "ground_contact", "contact_generalized_forces",
           "contact_records", "system_contacts"]


@dataclass(frozen=True)
class ContactFeature:
    """One contact feature of a link: ``kind`` "sphere" (``center`` (3, body frame) and
    ``radius``; 0: a point) or "rim" (the deepest point of a disc's rim: ``center``, unit
    ``axis`` (3, body frame), ``radius``); ``name`` (the record's), ``link`` and its tree
    ``body``; ``max_penetration``: None or the depth where the compliant model ends; ``label``:
    which part of the geometry (the collision's name, "corner 3", "end +", "rim -")."""

    name: str
    link: str
    body: int
    kind: str
    center: tuple
    radius: float
    axis: tuple | None = None
    max_penetration: float | None = None
    label: str = ""


@dataclass(frozen=True)
class GroundContact:
    """A group of contact features against one plane (``point``, unit ``normal``, tangents
    ``t1``, ``t2``: 3 numbers each, world coordinates) with its laws: ``stiffness``,
    ``damping`` (SymPy symbols with values in ``robot.constants``; damping None without),
    the numeric ``exponent``, ``friction`` (a checked :class:`~symbody.contact.Friction`
    of symbols, or None) and ``friction_mode`` ("smooth", "exact" or "none")."""

    name: str
    features: tuple
    point: tuple
    normal: tuple
    t1: tuple
    t2: tuple
    exponent: float
    stiffness: sm.Symbol
    damping: sm.Symbol | None
    friction: Friction | None
    friction_mode: str
    placeholders: tuple = ()

    @property
    def inputs(self) -> list:
        """The exact-friction placeholders (specified inputs of the equations), flattened."""
        return [f for pair in self.placeholders for f in pair]


def _number(value: Any, what: str, name: str, low: float = 0.0) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"add_ground_contact ({name!r}): {what} must be a number, got {value!r}") from None
    if not np.isfinite(v) or v < low:
        raise InputError(f"add_ground_contact ({name!r}): {what} must be a finite number >= {low:g}, "
                         f"got {value!r}")
    return v


def _plane(robot: Robot, plane: Any, name: str) -> tuple:
    """(point, unit normal) of the plane in world coordinates; default z = 0 facing against
    gravity (+z without gravity)."""
    if plane is None:
        g = robot.gravity
        normal = -g / np.linalg.norm(g) if g.any() else np.array([0.0, 0.0, 1.0])
        return np.zeros(3), normal
    try:
        point, normal = (np.asarray(v, dtype=float) for v in plane)
    except (TypeError, ValueError):
        raise InputError(f"add_ground_contact ({name!r}): plane must be (point, normal), two "
                         f"vectors of 3 numbers in world coordinates, got {plane!r}") from None
    if point.shape != (3,) or normal.shape != (3,) or not (np.isfinite(point).all()
                                                          and np.isfinite(normal).all()):
        raise InputError(f"add_ground_contact ({name!r}): plane must be (point, normal), two "
                         f"vectors of 3 finite numbers, got {plane!r}")
    if abs(np.linalg.norm(normal) - 1.0) > 1e-12:
        raise InputError(f"add_ground_contact ({name!r}): the plane's normal {tuple(normal)} is "
                         f"not a unit vector (norm {np.linalg.norm(normal):.12g})")
    return point, normal


def tangents(normal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(t1, t2) with t1 x t2 = n, the rule of :meth:`symbody.contact.Plane.tangents` in the
    world frame: the other two axes in cyclic order when n is an axis, else t1 along e x n
    for the axis e least aligned with n."""
    axes = np.eye(3)
    for i in range(3):
        if np.array_equal(normal, axes[i]):
            return axes[(i + 1) % 3], axes[(i + 2) % 3]
        if np.array_equal(normal, -axes[i]):
            return axes[(i + 2) % 3], axes[(i + 1) % 3]
    e = axes[int(np.argmin(np.abs(normal)))]
    t1 = np.cross(e, normal)
    t1 /= np.linalg.norm(t1)
    return t1, np.cross(normal, t1)


def _sphere_spec(link: str, spec: Any, name: str) -> tuple[float, np.ndarray]:
    if isinstance(spec, (tuple, list)) and len(spec) == 2 and np.ndim(spec[1]) == 1:
        radius, offset = spec
    else:
        radius, offset = spec, (0.0, 0.0, 0.0)
    try:
        offset = np.asarray(offset, dtype=float)
    except (TypeError, ValueError):
        offset = np.array([np.nan])
    if offset.shape != (3,) or not np.isfinite(offset).all():
        raise InputError(f"add_ground_contact ({name!r}): spheres[{link!r}]: give a radius or "
                         f"(radius, offset) with the offset 3 finite numbers (link frame), got {spec!r}")
    return _number(radius, f"spheres[{link!r}]'s radius", name), offset


def _collision_features(link: str, body: int, c: Any, R_l: np.ndarray, p_l: np.ndarray,
                        where: str, name: str) -> list[tuple]:
    """(label, kind, centre, radius, axis, max_penetration) of one <collision>."""
    if c.kind == "invalid":
        raise InputError(f"add_ground_contact ({name!r}): {c.error}")
    if c.kind == "mesh":
        raise InputError(f"add_ground_contact ({name!r}): {where}, link {link!r} (line {c.line}): its "
                         f"collision geometry is a mesh ({c.filename}); give a sphere for it: "
                         f"spheres={{{link!r}: radius}} or {{{link!r}: (radius, offset)}}, or "
                         "name the links that touch the ground: links=[...]")
    R = R_l @ c.rotation
    o = R_l @ c.origin + p_l
    if c.kind == "sphere":
        return [("", "sphere", o, c.size[0], None, c.size[0])]
    if c.kind == "capsule":
        half = 0.5 * c.size[1] * R[:, 2]
        return [(f"end {s}", "sphere", o + k * half, c.size[0], None, c.size[0])
                for s, k in (("+", 1), ("-", -1))]
    if c.kind == "box":
        out = []
        for i in range(8):
            signs = np.array([1 if i & 1 else -1, 1 if i & 2 else -1, 1 if i & 4 else -1])
            out.append((f"corner {i}", "sphere", o + R @ (0.5 * signs * np.asarray(c.size)), 0.0, None, None))
        return out
    half = 0.5 * c.size[1] * R[:, 2]          # cylinder: its two rims' deepest points
    return [(f"rim {s}", "rim", o + k * half, c.size[0], R[:, 2], c.size[0]) for s, k in (("+", 1), ("-", -1))]


def _features(robot: Robot, links: Any, spheres: Mapping | None, name: str) -> list[ContactFeature]:
    """The contact features of the chosen links (see the module docstring)."""
    urdf, tree = robot.urdf, robot.tree
    where = urdf.path or "URDF string"
    spheres = dict(spheres or {})
    for link in spheres:
        if link not in urdf.links:
            raise InputError(f"add_ground_contact ({name!r}): spheres names the link {link!r}, which "
                             f"{where} does not have")
    if links is None:
        chosen = [n for n, lk in urdf.links.items() if lk.collisions or n in spheres]
    else:
        chosen = [links] if isinstance(links, str) else list(links)
        for link in chosen:
            if link not in urdf.links:
                raise InputError(f"add_ground_contact ({name!r}): links names {link!r}, which {where} "
                                 "does not have")
        chosen += [n for n in spheres if n not in chosen]
    out: list[ContactFeature] = []
    for link in chosen:
        if link not in tree.link_body:
            raise InputError(f"add_ground_contact ({name!r}): the link {link!r} is the world (it "
                             "cannot touch the ground)")
        body, R_l, p_l = tree.link_body[link]
        if link in spheres:
            radius, offset = _sphere_spec(link, spheres[link], name)
            parts = [("", "sphere", R_l @ offset + p_l, radius, None, radius or None)]
        else:
            collisions = urdf.links[link].collisions
            if not collisions:
                raise InputError(f"add_ground_contact ({name!r}): the link {link!r} has no <collision> "
                                 "geometry; give it a sphere: spheres={link: radius}")
            parts = []
            for k, c in enumerate(collisions):
                for label, *rest in _collision_features(link, body, c, R_l, p_l, where, name):
                    tag = c.name or (str(k) if len(collisions) > 1 else "")
                    parts.append((" ".join(x for x in (tag, label) if x), *rest))
        for i, (label, kind, centre, radius, axis, limit) in enumerate(parts):
            fname = f"{link}[{i}]" if len(parts) > 1 else link
            out.append(ContactFeature(fname, link, body, kind, tuple(float(x) for x in centre),
                                      float(radius), None if axis is None else tuple(map(float, axis)),
                                      limit, label))
    if not out:
        raise InputError(f"add_ground_contact ({name!r}): no collision geometry on the links {chosen}; "
                         "give spheres={link: radius}")
    return out


def ground_contact(robot: Robot, plane: Any = None, *, links: Any = None, spheres: Mapping | None = None,
                   stiffness: float, exponent: float = 1.5, damping: float | None = None,
                   restitution: float | None = None, impact_speed: float | None = None,
                   friction: Any = None, friction_mode: str = "smooth", name: str = "ground") -> GroundContact:
    """The checked :class:`GroundContact` (see :meth:`Robot.add_ground_contact`); puts the values
    of its constants into ``robot.constants``."""
    if not isinstance(name, str) or not name.isidentifier():
        raise InputError(f"add_ground_contact: name must be an identifier, got {name!r}")
    if friction_mode not in ("smooth", "exact"):
        raise InputError(f"add_ground_contact ({name!r}): friction_mode must be 'smooth' or 'exact', "
                         f"got {friction_mode!r}")
    k = _number(stiffness, "stiffness", name)
    e = _number(exponent, "exponent", name)
    if e < 1:
        raise InputError(f"add_ground_contact ({name!r}): exponent must be >= 1, got {exponent!r}")
    if damping is not None and restitution is not None:
        raise InputError(f"add_ground_contact ({name!r}): give damping or restitution, not both")
    if restitution is not None:
        if impact_speed is None:
            raise InputError(f"add_ground_contact ({name!r}): restitution needs impact_speed=v, the "
                             "approach speed at which a bounce has this coefficient "
                             "(see symbody.contact.normal_law)")
        damping = float(damping_from_restitution(restitution, _number(impact_speed, "impact_speed", name),
                                                 name))
    elif impact_speed is not None:
        raise InputError(f"add_ground_contact ({name!r}): impact_speed is used only with restitution")
    point, normal = _plane(robot, plane, name)
    features = tuple(_features(robot, links, spheres, name))
    values: dict = {sm.Symbol(f"{name}_stiffness"): k}
    c_sym = None
    if damping is not None:
        c_sym = sm.Symbol(f"{name}_damping")
        values[c_sym] = _number(damping, "damping", name)
    law = as_friction(friction, name)
    if law is not None:
        for attr, what in (("coefficient", "friction"), ("velocity_scale", "velocity_scale")):
            value = getattr(law, attr)
            if not value.is_number:
                raise InputError(f"add_ground_contact ({name!r}): the friction's {attr} must be a number")
            values[sm.Symbol(f"{name}_{what}")] = float(value)
        law = Friction(sm.Symbol(f"{name}_friction"), law.static, law.stribeck_velocity, law.viscous,
                       sm.Symbol(f"{name}_velocity_scale"))
    taken = {str(s) for s in robot.constants}
    for s in values:
        if str(s) in taken:
            raise InputError(f"add_ground_contact: the constant {s} exists already (a contact group "
                             f"named {name!r} was added before); give another name=")
    mode = "none" if law is None else friction_mode
    placeholders = ()
    if mode == "exact":
        placeholders = tuple(tuple(dynamicsymbols(f"{_ident(f.name)}_friction_{j}") for j in (1, 2))
                             for f in features)
    robot.constants.update(values)
    t1, t2 = tangents(normal)
    return GroundContact(name, features, tuple(point), tuple(normal), tuple(t1), tuple(t2), e,
                         next(iter(values)), c_sym, law, mode, placeholders)


def _ident(name: str) -> str:
    """The identifier symbol.contact gives a contact's name (its placeholders' names)."""
    s = re.sub(r"\W", "_", name).strip("_") or "contact"
    return s if not s[0].isdigit() else "c_" + s


# ----------------------------------------------------------------------------- the tree path
@dataclass(frozen=True)
class _Quantities:
    """One feature's gap, gap rate, normal force, friction (t1, t2), slip (t1, t2), elastic
    energy, damping switch (or None), the point P (body coordinates) and its body: symengine."""

    gap: Any
    gap_rate: Any
    normal_force: Any
    friction: tuple
    slip: tuple
    energy: Any
    switch: Any
    point: tuple
    body: int


class _Laws:
    """The group's laws as symengine expressions of placeholder symbols (g, g', s1, s2, F_n),
    formed once in SymPy by symbody.contact's functions."""

    def __init__(self, contact: GroundContact, symbol: Any):
        g, gd, s1, s2, fn = sm.symbols("_g _gd _s1 _s2 _fn", real=True)
        self.args = [se.Symbol(str(x)) for x in (g, gd, s1, s2, fn)]
        damping = contact.damping if contact.damping is not None else 0
        force, energy, switch = hunt_crossley(contact.stiffness, sm.sympify(contact.exponent), damping, g, gd)
        friction = smooth_friction(contact.friction, fn, (s1, s2)) if contact.friction_mode == "smooth" else ()
        exprs = [force, energy] + ([switch] if switch is not None else []) + list(friction)
        symbols = {str(s) for s in (g, gd, s1, s2, fn)}

        def leaf(node):
            if node.is_Symbol and str(node) not in symbols:
                return symbol(node)
            return None

        out = to_symengine(exprs, leaf)
        self.force, self.energy = out[0], out[1]
        self.switch = out[2] if switch is not None else None
        self.friction = tuple(out[3:] if switch is not None else out[2:])
        self.sympy_args = (g, gd, s1, s2, fn)
        self.sympy = (force, energy, switch, friction)

    def at(self, expr: Any, values: list) -> Any:
        return expr.xreplace(dict(zip(self.args, values)))

    def sympy_at(self, values: list) -> tuple:
        """(F_n, V, switch or None, friction (tuple)) in SymPy at the SymPy ``values`` of
        (g, g', s1, s2): the law's template with them put in unevaluated (a Piecewise's
        condition on a long gap expression is not simplified: SymPy's assumptions on it
        took seconds)."""
        force, energy, switch, friction = self.sympy
        rule = dict(zip(self.sympy_args, values))
        with sm.evaluate(False):
            f = force.xreplace(rule)
            rule[self.sympy_args[4]] = f
            return (f, energy.xreplace(rule), None if switch is None else switch.xreplace(rule),
                    tuple(e.xreplace(rule) for e in friction))


def _lowest_point(f: ContactFeature, motion: Any, n: tuple) -> tuple:
    """The feature's lowest point towards the plane, in body coordinates (symengine)."""
    centre = tuple(num(x) for x in f.center)
    if f.radius == 0:
        return centre
    n_b = _mtv(motion.R, n)                       # the plane's normal in body coordinates
    if f.kind == "sphere":
        return _add(centre, _scale(num(-f.radius), n_b))
    a = tuple(num(x) for x in f.axis)
    w = _add(n_b, _scale(-_dot(n_b, a), a))
    floor = float(RIM_FLOOR) ** 2              # (symbody.contact.Cylinder's floor under |w|)
    return _add(centre, _scale(num(-f.radius) / se.sqrt(_dot(w, w) + se.RealDouble(floor)), w))


def _quantities(contact: GroundContact, motion: list, symbol: Any) -> list[_Quantities]:
    n, O = tuple(num(x) for x in contact.normal), tuple(num(x) for x in contact.point)
    t1, t2 = tuple(num(x) for x in contact.t1), tuple(num(x) for x in contact.t2)
    laws = _Laws(contact, symbol)
    out = []
    for i, f in enumerate(contact.features):
        m = motion[f.body]
        r = _lowest_point(f, m, n)
        v = m.point_velocity(r)
        gap = _dot(n, _add(m.point(r), _scale(se.Integer(-1), O)))
        rate = _dot(n, v)
        slip = (_dot(t1, v), _dot(t2, v)) if contact.friction_mode != "none" else ()
        values = [gap, rate, *(slip or (0, 0))]
        force = laws.at(laws.force, values)
        if contact.friction_mode == "smooth":
            friction = tuple(laws.at(e, values + [force]) for e in laws.friction)
        elif contact.friction_mode == "exact":
            friction = tuple(symbol(p) for p in contact.placeholders[i])
        else:
            friction = ()
        switch = None if laws.switch is None else laws.at(laws.switch, values)
        out.append(_Quantities(gap, rate, force, friction, slip, laws.at(laws.energy, values), switch,
                               r, f.body))
    return out


def contact_generalized_forces(robot: Robot, q: list, u: list, symbol: Any) -> list:
    """Q (tree order) of all of ``robot``'s ground contacts: the external forces of
    :mod:`.link_forces` at each feature's lowest point; ``symbol(sympy atom) -> symengine``."""
    contacts = robot.ground_contacts
    if not contacts:
        return []
    motion = tree_motion(robot.tree, q, u, robot.floating_base)
    loads = []
    for contact in contacts:
        n, t1, t2 = (tuple(num(x) for x in v) for v in (contact.normal, contact.t1, contact.t2))
        for cq in _quantities(contact, motion, symbol):
            F = _scale(cq.normal_force, n)
            if cq.friction:
                F = _add(F, _add(_scale(cq.friction[0], t1), _scale(cq.friction[1], t2)))
            loads.append(LinkLoad(cq.body, cq.point, F))
    return generalized_forces(robot.tree, q, motion, loads, robot.floating_base)


def contact_records(robot: Robot, q: list, u: list, symbol: Any, names: dict) -> tuple:
    """One :class:`ContactRecord` per feature of the robot's ground contacts, its expressions
    (SymPy) converted from the tree path's."""
    if not robot.ground_contacts:
        return ()
    motion = tree_motion(robot.tree, q, u, robot.floating_base)
    conv = SympyConverter(names)
    records = []
    for contact in robot.ground_contacts:
        laws = _Laws(contact, symbol)
        for i, (f, cq) in enumerate(zip(contact.features, _quantities(contact, motion, symbol))):
            gap, rate = conv(cq.gap), conv(cq.gap_rate)
            slip = tuple(conv(e) for e in cq.slip)
            force, energy, switch, friction = laws.sympy_at([gap, rate, *(slip or (0, 0))])
            if contact.friction_mode == "exact":
                friction = contact.placeholders[i]
            switching = [("contact", gap)] + ([("damping", switch)] if switch is not None else [])
            power = force * rate + sum((a * b for a, b in zip(friction, slip)), sm.S.Zero)
            law = contact.friction
            records.append(ContactRecord(
                name=f.name, gap=gap, gap_rate=rate, normal_force=force, friction_force=friction,
                slip_velocity=slip, friction_coefficient=None if law is None else law.coefficient,
                friction_mode=contact.friction_mode,
                friction_placeholders=contact.placeholders[i] if contact.placeholders else (),
                switching=tuple(switching),
                max_penetration=None if f.max_penetration is None else sm.Float(f.max_penetration),
                elastic_energy=energy, power=power, stiffness=contact.stiffness,
                exponent=sm.sympify(contact.exponent),
                damping=contact.damping if contact.damping is not None else sm.S.Zero))
    return tuple(records)


def contact_positions(robot: Robot) -> dict:
    """{feature name: its lowest point P in world coordinates (3 SymPy expressions in the
    robot's coordinates)} of all ground contacts (the points the records' forces act at)."""
    qs = [se.Symbol(f"_sbq{i}") for i in range(len(robot.tree_coordinates))]
    us = [se.Symbol(f"_sbu{i}") for i in range(len(robot.tree_speeds))]
    names = {str(s): a for s, a in zip(qs + us, [*robot.tree_coordinates, *robot.tree_speeds])}
    motion = tree_motion(robot.tree, qs, us, robot.floating_base)
    conv = SympyConverter(names)
    out = {}
    for contact in robot.ground_contacts:
        n = tuple(num(x) for x in contact.normal)
        for f in contact.features:
            m = motion[f.body]
            out[f.name] = tuple(conv(e) for e in m.point(_lowest_point(f, m, n)))
    return out


# ----------------------------------------------------------------------------- the System path
class _Rim(Shape):
    """One rim of a disc (centre ``point``, unit ``axis`` and ``radius`` fixed in ``frame``):
    its deepest point towards a plane, the feature :class:`symbody.contact.Cylinder` gives
    for each of its ends."""

    def __init__(self, point: Any, radius: Any, frame: Any, axis: Any) -> None:
        self.point, self.frame, self.radius, self.axis = point, frame, radius, axis

    def features(self, normal: Any = None) -> list:
        a = self.axis
        w = normal - normal.dot(a) * a
        return [SphereFeature(self.point, self.frame, -self.radius * w / sm.sqrt(w.dot(w) + RIM_FLOOR ** 2),
                              sm.S.Zero,
                              "rim", self.radius)]


def system_contacts(robot: Robot, parts: Any) -> list:
    """The robot's ground contacts as :class:`symbody.contact.Contact` objects on the System's
    link frames (``parts``: :class:`.system.SystemParts`): a sphere (or a rim) at each feature,
    the plane fixed in the world frame."""
    from ..contact import Contact, Plane, Sphere

    def vec(frame: Any, v: tuple) -> Any:
        c = [sm.Integer(int(x)) if x == round(x) else sm.Float(x) for x in v]
        return c[0] * frame.x + c[1] * frame.y + c[2] * frame.z

    N, O = parts.world_frame, parts.world_origin
    out = []
    for contact in robot.ground_contacts:
        point = O.locatenew(f"{contact.name}_plane_point", vec(N, contact.point)) if any(contact.point) else O
        plane = Plane(point, vec(N, contact.normal), frame=N)
        for f in contact.features:
            body = robot.tree.bodies[f.body]
            frame, origin = parts.link_frames[body.name], parts.link_points[body.name]
            centre = origin.locatenew(f"{_ident(f.name)}_centre", vec(frame, f.center)) \
                if any(f.center) else origin
            radius = sm.Float(f.radius) if f.radius else sm.S.Zero
            shape = Sphere(centre, radius, frame=frame) if f.kind == "sphere" else \
                _Rim(centre, radius, frame, vec(frame, f.axis))
            out.append(Contact(plane, shape, stiffness=contact.stiffness,
                               exponent=sm.sympify(contact.exponent),
                               damping=contact.damping if contact.damping is not None else None,
                               friction=contact.friction,
                               friction_mode="exact" if contact.friction_mode == "exact" else "smooth",
                               name=f.name))
    return out
