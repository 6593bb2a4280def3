"""Reading a URDF file: the standard library's expat parser, every element with its line.

:func:`parse_urdf` turns the XML into plain frozen records (:class:`UrdfLink`,
:class:`UrdfJoint`) and checks what the dynamics needs: names, parents, numbers, joint
types, inertias.  Every error is an :class:`~symbody.errors.InputError` naming the
element (link or joint name) and its line.  Tags the dynamics does not use (visual,
geometry, transmissions, gazebo) are kept in the element tree only; a link's
``<collision>`` elements are read into :class:`UrdfCollision` records (ground contact).
"""

from __future__ import annotations

import math
import os
import re
import warnings
import xml.parsers.expat
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import InputError

__all__ = ["InvalidInertiaWarning", "PointMassWarning", "XmlElement", "UrdfCollision", "UrdfLink",
           "UrdfJoint", "UrdfModel", "parse_urdf", "rpy_matrix"]

SUPPORTED_TYPES = ("revolute", "continuous", "prismatic", "planar", "floating", "fixed")


@dataclass
class XmlElement:
    """One XML element: ``tag``, ``attrib`` (dict), ``children`` and its ``line`` (1-based)."""

    tag: str
    attrib: dict
    line: int
    children: list = field(default_factory=list)

    def find(self, tag: str) -> XmlElement | None:
        """The first child named ``tag`` (or None)."""
        for c in self.children:
            if c.tag == tag:
                return c
        return None

    def findall(self, tag: str) -> list:
        """Every child named ``tag``."""
        return [c for c in self.children if c.tag == tag]

    def get(self, key: str, default=None):
        return self.attrib.get(key, default)


@dataclass(frozen=True)
class UrdfCollision:
    """A ``<collision>`` of a link: ``kind`` "sphere" (size = (radius,)), "box" (x, y, z
    edges), "cylinder" (radius, length; axis z), "capsule" (radius, length of the segment
    between the two centres; axis z) or "mesh" (``filename``); its frame in the link frame
    (``rotation`` 3x3, ``origin`` 3), ``name`` (or None) and ``line``.  A malformed one is
    kind "invalid" with the ``error`` message (loading the robot does not need collision
    geometry: the error is raised where it is used, by ``Robot.add_ground_contact``)."""

    kind: str
    size: tuple
    rotation: np.ndarray
    origin: np.ndarray
    line: int
    name: str | None = None
    filename: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class UrdfLink:
    """A link: ``mass``, centre of mass ``com`` (3, in the link frame), ``inertia`` (3x3 about
    the centre of mass, in the link frame), ``line``; massless when it has no <inertial>;
    ``collisions``: its ``<collision>`` elements (:class:`UrdfCollision`, file order)."""

    name: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    line: int
    element: XmlElement
    collisions: tuple = ()


@dataclass(frozen=True)
class UrdfJoint:
    """A joint: ``type``, ``parent``/``child`` link names, the joint frame in the parent link
    frame (``rotation`` 3x3, ``origin`` 3), the unit ``axis`` (3, in the joint frame),
    ``lower``/``upper`` limits (None if absent), ``damping``, ``friction``, ``mimic``
    (``(joint, multiplier, offset)`` or None) and the ``line``."""

    name: str
    type: str
    parent: str
    child: str
    rotation: np.ndarray
    origin: np.ndarray
    axis: np.ndarray
    lower: float | None
    upper: float | None
    effort: float | None
    velocity: float | None
    damping: float
    friction: float
    mimic: tuple | None
    line: int
    element: XmlElement


@dataclass(frozen=True)
class UrdfModel:
    """The parsed robot: ``name``, ``links`` and ``joints`` by name (file order), the ``root``
    link, ``path`` (None for a string), the XML ``element`` tree and ``floating_joint``: the
    name of a floating joint from a massless root link (the world) to the base, or None."""

    name: str
    links: dict
    joints: dict
    root: str
    path: str | None
    element: XmlElement
    floating_joint: str | None = None


def _xml_tree(text: str, where: str) -> XmlElement:
    parser = xml.parsers.expat.ParserCreate()
    stack: list[XmlElement] = []
    top: list[XmlElement] = []

    def start(tag, attrib):
        el = XmlElement(tag, dict(attrib), parser.CurrentLineNumber)
        (stack[-1].children if stack else top).append(el)
        stack.append(el)

    def end(tag):
        stack.pop()

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(text, True)
    except xml.parsers.expat.ExpatError as exc:
        raise InputError(f"{where}: malformed XML: {xml.parsers.expat.ErrorString(exc.code)} "
                         f"at line {exc.lineno}, column {exc.offset}") from None
    if not top:
        raise InputError(f"{where}: no XML element")
    return top[0]


def _leading_space_before_declaration(text: str | bytes) -> str | bytes:
    """Blank lines before ``<?xml ...?>`` (not well-formed XML, but read by urdfdom, hence
    Pinocchio): moved after the declaration, so the line numbers stay the file's."""
    pattern = rb"(\s+)(<\?xml[^>]*\?>)" if isinstance(text, bytes) else r"(\s+)(<\?xml[^>]*\?>)"
    m = re.match(pattern, text)
    if m is None:
        return text
    return m.group(2) + m.group(1) + text[m.end():]


def rpy_matrix(rpy) -> np.ndarray:
    """The rotation of URDF's roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll) (3x3)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


class InvalidInertiaWarning(UserWarning):
    """A link's inertia tensor is not positive semi-definite (used as given with
    ``load_urdf(..., invalid_inertia="warn")``), or its principal moments violate the
    triangle inequality I_1 + I_2 >= I_3 (physically impossible; always a warning)."""


#: principal moments I_1 <= I_2 <= I_3 violate the triangle inequality when
#: I_1 + I_2 < I_3 (1 - TRIANGLE_TOLERANCE): a flat plate (I_1 + I_2 = I_3) written with
#: numbers rounded to three or four digits is not warned about
TRIANGLE_TOLERANCE = 1e-3


class PointMassWarning(UserWarning):
    """A link's ``<inertial>`` has a mass and no ``<inertia>``: read as a point mass."""


class _Reader:
    def __init__(self, where: str, invalid_inertia: str = "error", mimic: bool = True):
        self.where = where
        self.invalid_inertia = invalid_inertia
        self.mimic = mimic

    def fail(self, what: str, el: XmlElement, message: str):
        raise InputError(f"{self.where}, {what} (line {el.line}): {message}")

    def numbers(self, what: str, el: XmlElement, key: str, count: int, default=None) -> np.ndarray:
        text = el.get(key)
        if text is None:
            if default is None:
                self.fail(what, el, f"<{el.tag}> has no attribute {key!r}")
            return np.array(default, dtype=float)
        parts = text.split()
        try:
            vals = [float(s) for s in parts]
        except ValueError:
            self.fail(what, el, f"<{el.tag} {key}={text!r}>: not {count} numbers")
        if len(vals) != count or not all(math.isfinite(v) for v in vals):
            self.fail(what, el, f"<{el.tag} {key}={text!r}>: expected {count} finite numbers")
        return np.array(vals, dtype=float)

    def number(self, what: str, el: XmlElement, key: str, default=None) -> float | None:
        if el.get(key) is None and default is None:
            return None
        return float(self.numbers(what, el, key, 1, None if default is None else [default])[0])

    def origin(self, what: str, el: XmlElement | None) -> tuple[np.ndarray, np.ndarray]:
        if el is None:
            return np.eye(3), np.zeros(3)
        xyz = self.numbers(what, el, "xyz", 3, [0.0, 0.0, 0.0])
        rpy = self.numbers(what, el, "rpy", 3, [0.0, 0.0, 0.0])
        return rpy_matrix(rpy), xyz


_COLLISION_SIZES = {"sphere": ("radius",), "box": ("size",), "cylinder": ("radius", "length"),
                    "capsule": ("radius", "length")}


def _collision(rd: _Reader, what: str, el: XmlElement) -> UrdfCollision:
    """One ``<collision>``: its geometry (positive sizes) and origin."""
    R, xyz = rd.origin(what, el.find("origin"))
    geometry = el.find("geometry")
    shape = geometry.children[0] if geometry is not None and geometry.children else None
    if shape is None:
        rd.fail(what, el, "<collision> has no <geometry> (sphere, box, cylinder, capsule or mesh)")
    if shape.tag == "mesh":
        return UrdfCollision("mesh", (), R, xyz, el.line, el.get("name"), shape.get("filename"))
    if shape.tag not in _COLLISION_SIZES:
        rd.fail(what, shape, f"unknown collision geometry <{shape.tag}> (sphere, box, cylinder, "
                "capsule or mesh)")
    if shape.tag == "box":
        size = tuple(rd.numbers(what, shape, "size", 3))
    else:
        size = tuple(float(rd.numbers(what, shape, key, 1)[0]) for key in _COLLISION_SIZES[shape.tag])
    if not all(v > 0 for v in size) and not (shape.tag == "capsule" and size[0] > 0 and size[1] == 0):
        rd.fail(what, shape, f"<{shape.tag}> needs positive sizes, got {size}")
    return UrdfCollision(shape.tag, size, R, xyz, el.line, el.get("name"))


def _link(rd: _Reader, el: XmlElement) -> UrdfLink:
    name = el.get("name")
    what = f"link {name!r}"
    collisions = []
    for i, c in enumerate(el.findall("collision")):
        try:
            collisions.append(_collision(rd, f"{what} <collision> {i}", c))
        except InputError as exc:
            collisions.append(UrdfCollision("invalid", (), np.eye(3), np.zeros(3), c.line,
                                            c.get("name"), error=str(exc)))
    collisions = tuple(collisions)
    inertial = el.find("inertial")
    if inertial is None:
        return UrdfLink(name, 0.0, np.zeros(3), np.zeros((3, 3)), el.line, el, collisions)
    R, xyz = rd.origin(what, inertial.find("origin"))
    mel = inertial.find("mass")
    if mel is None:
        rd.fail(what, inertial, "<inertial> has no <mass>")
    mass = rd.number(what, mel, "value")
    if mass is None:
        rd.fail(what, mel, "<mass> has no attribute 'value'")
    if mass < 0:
        rd.fail(what, mel, f"negative mass {mass}")
    iel = inertial.find("inertia")
    if iel is None:        # urdfdom refuses it, Pinocchio reads a point mass
        warnings.warn(f"{rd.where}, {what} (line {inertial.line}): <inertial> has a <mass> and no "
                      "<inertia>: read as a point mass at its <origin> (zero inertia about the "
                      "centre of mass), as Pinocchio reads it", PointMassWarning, stacklevel=4)
        return UrdfLink(name, mass, xyz, np.zeros((3, 3)), el.line, el, collisions)
    v = {}
    for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):     # all six required (URDF spec)
        v[k] = rd.number(what, iel, k)
        if v[k] is None:
            rd.fail(what, iel, f"<inertia> has no attribute {k!r} (all six are required)")
    Ic = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]],
                   [v["ixz"], v["iyz"], v["izz"]]])
    ev = np.linalg.eigvalsh(Ic)
    tol = 1e-12 * max(1.0, float(np.abs(ev).max()))
    if ev.min() < -tol:
        msg = f"the inertia tensor is not positive semi-definite (eigenvalues {ev})"
        if rd.invalid_inertia != "warn":
            rd.fail(what, iel, msg + "; load_urdf(..., invalid_inertia='warn') uses it as given")
        warnings.warn(f"{rd.where}, {what} (line {iel.line}): {msg}; used as given",
                      InvalidInertiaWarning, stacklevel=4)
    elif ev[0] + ev[1] < ev[2] * (1.0 - TRIANGLE_TOLERANCE):
        warnings.warn(f"{rd.where}, {what} (line {iel.line}): the principal moments of inertia "
                      f"{ev[0]:.6g}, {ev[1]:.6g}, {ev[2]:.6g} violate the triangle inequality "
                      f"({ev[0]:.6g} + {ev[1]:.6g} < {ev[2]:.6g}): no rigid body has them; used as "
                      "given", InvalidInertiaWarning, stacklevel=4)
    return UrdfLink(name, mass, xyz, R @ Ic @ R.T, el.line, el, collisions)


def _joint(rd: _Reader, el: XmlElement, links: dict) -> UrdfJoint:
    name = el.get("name")
    what = f"joint {name!r}"
    jtype = el.get("type")
    if jtype is None:
        rd.fail(what, el, "no type")
    if jtype not in SUPPORTED_TYPES:
        rd.fail(what, el, f"joint type {jtype!r} is not supported (supported: "
                f"{', '.join(SUPPORTED_TYPES)}; a floating base via floating_base=True)")
    ends = {}
    for tag in ("parent", "child"):
        sub = el.find(tag)
        if sub is None or sub.get("link") is None:
            rd.fail(what, el, f"no <{tag} link=...>")
        if sub.get("link") not in links:
            rd.fail(what, sub, f"the {tag} link {sub.get('link')!r} is not a link of the file")
        ends[tag] = sub.get("link")
    R, xyz = rd.origin(what, el.find("origin"))
    axis = np.array([1.0, 0.0, 0.0])
    ael = el.find("axis")
    if ael is not None:
        axis = rd.numbers(what, ael, "xyz", 3, [1.0, 0.0, 0.0])
    norm = float(np.linalg.norm(axis))
    if jtype == "planar" and ael is not None and norm > 0 and \
            not np.allclose(axis / norm, [0.0, 0.0, 1.0]):
        warnings.warn(f"{rd.where}, {what} (line {ael.line}): a planar joint moves in the x-y "
                      f"plane of its joint frame (Pinocchio's reading); its axis {axis} is not "
                      "used (rotate the joint's <origin> to choose the plane)", UserWarning,
                      stacklevel=4)
    if jtype in ("floating", "planar"):
        axis = np.array([0.0, 0.0, 1.0])    # the normal of a planar joint's plane
    elif jtype != "fixed":
        if norm == 0:
            rd.fail(what, ael, "the axis is zero")
        axis = axis / norm
    lower = upper = effort = velocity = None
    lim = el.find("limit")
    if lim is not None:
        lower, upper = rd.number(what, lim, "lower"), rd.number(what, lim, "upper")
        effort, velocity = rd.number(what, lim, "effort"), rd.number(what, lim, "velocity")
    if jtype in ("revolute", "prismatic"):
        lower = 0.0 if lower is None else lower
        upper = 0.0 if upper is None else upper
        if lower > upper:   # Bullet's "no limit"; urdfdom and Pinocchio accept it as given
            warnings.warn(f"{rd.where}, {what} (line {lim.line}): lower limit {lower} > upper "
                          f"limit {upper} (kept as given; the dynamics does not use limits)",
                          UserWarning, stacklevel=4)
    damping = friction = 0.0
    dyn = el.find("dynamics")
    if dyn is not None:
        damping = rd.number(what, dyn, "damping", 0.0)
        friction = rd.number(what, dyn, "friction", 0.0)
        if damping < 0 or friction < 0:
            rd.fail(what, dyn, "negative damping or friction")
    mimic = None
    mel = el.find("mimic")
    if mel is not None and jtype in ("planar", "floating") and rd.mimic:
        rd.fail(what, mel, f"a {jtype} joint cannot mimic another joint (load_urdf(..., "
                "mimic=False) ignores the tag)")
    if mel is not None and jtype != "fixed" and rd.mimic:
        if mel.get("joint") is None:
            rd.fail(what, mel, "<mimic> has no attribute 'joint'")
        mimic = (mel.get("joint"), rd.number(what, mel, "multiplier", 1.0),
                 rd.number(what, mel, "offset", 0.0))
    return UrdfJoint(name, jtype, ends["parent"], ends["child"], R, xyz, axis, lower, upper,
                     effort, velocity, damping, friction, mimic, el.line, el)


def parse_urdf(path_or_xml: str | os.PathLike, invalid_inertia: str = "error",
               mimic: bool = True) -> UrdfModel:
    """Parse a URDF file (a path) or a URDF string (starting with '<').

    Checks: well-formed XML with a <robot> root; unique link and joint names; every joint's
    parent and child links exist; one parent per link; no cycle; one root link; supported
    joint types; finite numbers; positive semi-definite inertias with non-negative masses;
    mimic joints that name an existing moving joint (a chain of mimics is resolved to the
    joint at its end).  ``invalid_inertia``: "error" (default) or "warn" (an
    :class:`InvalidInertiaWarning`, the tensor used as given) for an inertia tensor that is
    not positive semi-definite.  ``mimic=False``: <mimic> tags are
    not read (every joint independent, Pinocchio's default).
    """
    if invalid_inertia not in ("error", "warn"):
        raise InputError(f"invalid_inertia must be 'error' or 'warn', got {invalid_inertia!r}")
    text_in = os.fspath(path_or_xml)
    if text_in.lstrip("\ufeff \t\r\n").startswith("<"):     # a byte-order mark allowed
        text, path, where = text_in, None, "URDF string"
    else:
        path = os.path.abspath(text_in)
        if not os.path.isfile(path):
            raise InputError(f"load_urdf: no such file {text_in!r}")
        with open(path, "rb") as fh:
            text = fh.read()
        where = path
    root = _xml_tree(_leading_space_before_declaration(text), where)
    rd = _Reader(where, invalid_inertia, bool(mimic))
    if root.tag != "robot":
        rd.fail(f"<{root.tag}>", root, "the root element is not <robot>")
    if root.get("name") is None:     # name="" is accepted, as by urdfdom (hence Pinocchio)
        rd.fail("<robot>", root, "the robot has no name (<robot name=...> is required)")
    links: dict[str, UrdfLink] = {}
    for el in root.findall("link"):
        name = el.get("name")
        if not name:
            rd.fail("a link", el, "<link> has no name")
        if name in links:
            rd.fail(f"link {name!r}", el, f"a second link named {name!r} (first at line "
                    f"{links[name].line})")
        links[name] = _link(rd, el)
    if not links:
        rd.fail("<robot>", root, "no <link>")
    joints: dict[str, UrdfJoint] = {}
    parent_of: dict[str, UrdfJoint] = {}
    for el in root.findall("joint"):
        name = el.get("name")
        if not name:
            rd.fail("a joint", el, "<joint> has no name")
        if name in joints:
            rd.fail(f"joint {name!r}", el, f"a second joint named {name!r} (first at line "
                    f"{joints[name].line})")
        j = _joint(rd, el, links)
        if j.child in parent_of:
            rd.fail(f"joint {name!r}", el, f"the link {j.child!r} already has the parent joint "
                    f"{parent_of[j.child].name!r} (line {parent_of[j.child].line}); a link has "
                    "one parent (closed loops are not URDF)")
        if j.child == j.parent:
            rd.fail(f"joint {name!r}", el, f"the link {j.child!r} is its own parent")
        parent_of[j.child] = j
        joints[name] = j
    roots = [n for n in links if n not in parent_of]
    if not roots:
        j = next(iter(joints.values()))
        rd.fail(f"joint {j.name!r}", j.element, "the joints form a loop: no link is without a parent")
    if len(roots) > 1:
        el = links[roots[1]].element
        rd.fail(f"link {roots[1]!r}", el, f"several root links (without a parent joint): "
                f"{roots[:5]}; a URDF tree has one")
    # every link must be reached from the root (else a loop among the others)
    children: dict[str, list] = {}
    for j in joints.values():
        children.setdefault(j.parent, []).append(j.child)
    seen, stack = {roots[0]}, [roots[0]]
    while stack:
        for c in children.get(stack.pop(), []):
            seen.add(c)
            stack.append(c)
    for n in links:
        if n not in seen:
            j = parent_of[n]
            rd.fail(f"joint {j.name!r}", j.element, f"the link {n!r} is in a loop of joints, not "
                    f"below the root link {roots[0]!r}")
    for j in joints.values():
        if j.mimic is not None:
            target = joints.get(j.mimic[0])
            if target is None or target.type == "fixed":
                rd.fail(f"joint {j.name!r}", j.element, f"mimics {j.mimic[0]!r}, which is not a "
                        "moving joint of the file")
            if target.type in ("planar", "floating"):
                rd.fail(f"joint {j.name!r}", j.element, f"mimics {j.mimic[0]!r}, a "
                        f"{target.type} joint (a mimic joint follows a joint of one coordinate)")
    # a chain of mimics (j mimics k, k mimics m): q_j = a_j (a_k q_m + b_k) + b_j, resolved to
    # the joint at its end
    for name, j in list(joints.items()):
        if j.mimic is None:
            continue
        target, a, b = j.mimic
        seen = [name]
        while joints[target].mimic is not None:
            if target in seen:
                rd.fail(f"joint {name!r}", j.element, f"the mimic joints {seen} mimic each other "
                        "in a loop")
            seen.append(target)
            t2, a2, b2 = joints[target].mimic
            target, a, b = t2, a * a2, a * b2 + b
        joints[name] = replace(j, mimic=(target, a, b))
    # a floating joint from a massless root link (the world), its only joint: the free-flyer
    # base (its <origin>: where the base's coordinates are measured from); any other floating
    # joint is a joint of the tree (Pinocchio's free-flyer joint)
    floating = None
    world = links[roots[0]]
    for j in joints.values():
        if (j.type == "floating" and j.parent == roots[0] and world.mass == 0
                and not world.inertia.any() and len(children.get(roots[0], [])) == 1):
            floating = j.name
    return UrdfModel(root.get("name", ""), links, joints, roots[0], path, root, floating)
