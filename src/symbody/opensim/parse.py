"""Reading an OpenSim 4.x model (``Version`` 40000 and later) into a :class:`ModelSpec`.

OpenSim 4 names every component by its path from the model (``/bodyset/femur_r``,
``/jointset/knee_r/femur_r_offset``); sockets (``socket_parent_frame``, ``socket_parent``)
hold a path, absolute or relative to the component that owns the socket (``..`` its
owner).  :class:`ComponentIndex` gives each named element its path and resolves socket
paths; a ``PhysicalOffsetFrame`` is followed down to its base body, so every frame becomes a
numeric :class:`~.model_spec.Placement` in a body.  Files of the 3.x/2.x formats go through
:mod:`.legacy`.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .functions import ConstantFunction, function_of
from .geometry_spec import geometry_of
from .model_spec import (
    JOINT_DOFS,
    BodySpec,
    ConstraintSpec,
    CoordinateSpec,
    JointSpec,
    LeftOut,
    MarkerSpec,
    ModelSpec,
    Placement,
    TransformAxisSpec,
    body_fixed_xyz,
)
from .xml_tree import OsimDocument, OsimElement

__all__ = ["parse_model", "ComponentIndex", "read_body_inertia", "read_coordinate",
           "read_transform_axes", "CONSTRAINT_TYPES", "point_on_line_data"]

_SET_TAGS = ("BodySet", "JointSet", "ConstraintSet", "ForceSet", "MarkerSet", "ContactGeometrySet",
             "ControllerSet", "ProbeSet", "ComponentSet", "WrapObjectSet", "FrameSet")
#: a socket's older spellings (4.0 development files, 30500-30516): connector names
_ALIASES = {"parent_frame": ("parent_frame", "parent_body"), "child_frame": ("child_frame",
            "child_body"), "body_1": ("body_1",), "body_2": ("body_2",), "frame1": ("frame1",),
            "frame2": ("frame2",), "parent": ("parent",)}
_LISTS = ("objects", "groups", "components", "frames", "coordinates", "attached_geometry")
CONSTRAINT_TYPES = ("CoordinateCouplerConstraint", "PointConstraint", "WeldConstraint",
                    "PointOnLineConstraint")


class ComponentIndex:
    """Paths of the named elements under ``<Model>`` and socket resolution."""

    def __init__(self, model: OsimElement):
        self.by_path: dict[str, OsimElement] = {}
        self.path_of: dict[int, str] = {}
        self.parent_of: dict[int, OsimElement] = {}
        self._index(model, "")

    def _index(self, el: OsimElement, path: str) -> None:
        for c in el.children:
            name = c.name or (c.tag.lower() if c.tag in _SET_TAGS else "")
            if name and c.tag not in _LISTS:
                p = f"{path}/{name}"
                self.by_path.setdefault(p, c)
                self.path_of[id(c)] = p
                self.parent_of[id(c)] = el
                self._index(c, p)
            else:
                self._index(c, path)

    def path(self, el: OsimElement) -> str:
        return self.path_of.get(id(el), "/")

    def resolve(self, owner: OsimElement, path: str, what: str) -> OsimElement:
        """The element a socket of ``owner`` names (absolute, or relative to ``owner``)."""
        path = path.strip()
        if not path:
            raise owner.error(f"the socket {what} is empty")
        own = self.path(owner)
        # relative to the owner; in 4.0 development files, to the owner's owner
        candidates = [path] if path.startswith("/") else [own + "/" + path,
                                                           own.rsplit("/", 1)[0] + "/" + path]
        el = None
        for full in candidates:
            el = self.by_path.get(_normalize(full))
            if el is not None:
                break
        if el is None:
            last = path.rstrip("/").rsplit("/", 1)[-1]
            matches = [e for p, e in self.by_path.items() if p.rsplit("/", 1)[-1] == last]
            if len(matches) == 1:
                el = matches[0]
        if el is None:
            raise owner.error(f"the socket {what} names {path!r}, which is not in the model")
        return el


def _normalize(full: str) -> str:
    parts: list[str] = []
    for word in full.split("/"):
        if word in ("", "."):
            continue
        if word == "..":
            if parts:
                parts.pop()
            continue
        parts.append(word)
    return "/" + "/".join(parts)


def read_body_inertia(el: OsimElement) -> tuple:
    """(mass, com (3), inertia about the com (3x3)) of a 4.x ``<Body>`` (``<inertia>`` = Ixx Iyy
    Izz Ixy Ixz Iyz) or a 3.x one (``<inertia_xx>`` ...)."""
    m = el.number("mass", 0.0)
    com = el.numbers("mass_center", 3, default=(0.0, 0.0, 0.0))
    if el.find("inertia") is not None:
        v = el.numbers("inertia", 6)
        xx, yy, zz, xy, xz, yz = v
    else:
        xx, yy, zz = (el.number(f"inertia_{a}", 0.0) for a in ("xx", "yy", "zz"))
        xy, xz, yz = (el.number(f"inertia_{a}", 0.0) for a in ("xy", "xz", "yz"))
    I = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=float)
    if not (np.isfinite(m) and m >= 0):
        raise el.error(f"<mass> must be a finite number >= 0, got {m}")
    if not (np.all(np.isfinite(com)) and np.all(np.isfinite(I))):
        raise el.error("<mass_center> and <inertia> must be finite")
    return m, com, I


def read_coordinate(el: OsimElement, joint: str) -> CoordinateSpec:
    if not el.name:
        raise el.error("a Coordinate needs a name")
    rng = el.numbers("range", 2, default=(-np.pi / 2, np.pi / 2))
    prescribed_function = function_of(el, "prescribed_function")
    prescribed = el.flag("prescribed", False) and prescribed_function is not None
    if el.find("prescribed") is None and prescribed_function is not None:
        prescribed = True   # 4.x: a prescribed_function given and no flag: OpenSim prescribes
    motion = (el.text_of("motion_type") or "").strip().lower()
    return CoordinateSpec(
        name=el.name, joint=joint, default_value=el.number("default_value", 0.0),
        default_speed=el.number("default_speed_value", 0.0), range=(float(rng[0]), float(rng[1])),
        clamped=el.flag("clamped", False), locked=el.flag("locked", False), prescribed=prescribed,
        prescribed_function=prescribed_function, motion_type=motion, element=el)


_AXIS_NAMES = ("rotation1", "rotation2", "rotation3", "translation1", "translation2", "translation3")
_DEFAULT_AXES = ((1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 0, 0), (0, 1, 0), (0, 0, 1))


def read_transform_axes(joint: OsimElement, coordinate_names: list) -> tuple:
    """The six TransformAxis of a CustomJoint's ``<SpatialTransform>``, in the order rotation1,
    rotation2, rotation3, translation1, translation2, translation3."""
    st = joint.find("SpatialTransform")
    if st is None:
        if joint.find("TransformAxisSet") is not None:
            raise joint.error("a TransformAxisSet (an OpenSim 1.x file) is not supported; open "
                              "and save the model in OpenSim 4 to upgrade it")
        raise joint.error("a CustomJoint needs a <SpatialTransform>")
    by_name = {}
    for ax in st.walk():
        if ax.tag == "TransformAxis":
            if ax.name not in _AXIS_NAMES:
                raise ax.error(f"a TransformAxis must be named one of {', '.join(_AXIS_NAMES)}")
            by_name[ax.name] = ax
    out = []
    for k, name in enumerate(_AXIS_NAMES):
        ax = by_name.get(name)
        if ax is None:
            out.append(TransformAxisSpec(name, (), np.array(_DEFAULT_AXES[k], float),
                                         _constant_zero(joint), None))
            continue
        coords = tuple((ax.text_of("coordinates") or "").split())
        for c in coords:
            if c not in coordinate_names:
                raise ax.error(f"names the coordinate {c!r}, which is not one of the joint's "
                               f"coordinates ({', '.join(coordinate_names) or 'none'})")
        axis = ax.numbers("axis", 3, default=_DEFAULT_AXES[k])
        nrm = float(np.linalg.norm(axis))
        if not nrm > 0:
            raise ax.error("<axis> must not be zero")
        f = function_of(ax, "function")
        if f is None:       # OpenSim's default: Constant(0), whatever the coordinates
            f = _constant_zero(ax)
        if f.nargs not in (0, len(coords)) and not (f.nargs == 1 and len(coords) == 1):
            raise ax.error(f"its {f.kind} takes {f.nargs} argument(s) but {len(coords)} "
                           "coordinate(s) are named")
        out.append(TransformAxisSpec(name, coords, axis / nrm, f, ax))
    for start in (0, 3):
        a = [out[start + i].axis for i in range(3)]
        for i, j in ((0, 1), (0, 2), (1, 2)):
            if np.linalg.norm(np.cross(a[i], a[j])) < 1e-5:
                raise joint.error(f"the {'rotation' if start == 0 else 'translation'} axes "
                                  f"{_AXIS_NAMES[start + i]} and {_AXIS_NAMES[start + j]} are "
                                  "collinear (OpenSim refuses this joint too)")
    return tuple(out)


def _synthetic(owner: OsimElement, tag: str) -> OsimElement:
    return OsimElement(tag, {"name": "function"}, owner.line, owner.where)


def _constant_zero(owner: OsimElement):
    return ConstantFunction(_synthetic(owner, "Constant"))


class _Reader4:
    def __init__(self, doc: OsimDocument):
        self.doc = doc
        self.model = doc.model
        self.index = ComponentIndex(doc.model)
        self.ground = self.model.find("Ground")
        if self.ground is None:     # before 30503 the ground is the body "ground"
            bs = self.model.find("BodySet")
            self.ground = next((b for b in (bs.objects() if bs is not None else [])
                                if b.name == "ground"), None)
        if self.ground is None:     # 30500-30502: an implicit ground
            self.ground = OsimElement("Ground", {"name": "ground"}, self.model.line, doc.where)
            self.index.by_path.setdefault("/ground", self.ground)
        self.ground_name = self.ground.name or "ground"
        self.left_out: list[LeftOut] = []
        self._placements: dict[int, Placement] = {}

    # ---- frames
    def placement(self, el: OsimElement, depth: int = 0) -> Placement:
        """The body and numeric placement of a frame element (Ground, Body, offset frame)."""
        key = id(el)
        if key in self._placements:
            return self._placements[key]
        if depth > 64:
            raise el.error("the chain of offset frames is circular")
        if el.tag == "Ground" or el is self.ground or (el.tag == "Body"
                                                        and el.name == self.ground_name):
            out = Placement(self.ground_name, np.eye(3), np.zeros(3), self.ground_name)
        elif el.tag == "Body":
            out = Placement(el.name, np.eye(3), np.zeros(3), el.name)
        elif el.tag == "PhysicalOffsetFrame":
            sp = self.socket_path(el, "parent")
            parent = self.placement(self.index.resolve(el, sp, "parent"), depth + 1)
            R = body_fixed_xyz(el.numbers("orientation", 3, default=(0, 0, 0)))
            p = el.numbers("translation", 3, default=(0, 0, 0))
            out = parent.compose(R, p, el.name)
        else:
            raise el.error(f"a {el.tag} cannot be used as a physical frame here (supported: "
                           "Ground, Body, PhysicalOffsetFrame)")
        self._placements[key] = out
        return out

    def socket_path(self, owner: OsimElement, name: str) -> str:
        """The path in socket ``name`` (4.x ``socket_<name>``, or an older spelling)."""
        for tag in (f"socket_{name}", f"socket_{name}_connectee_name",
                    f"connector_{name}_connectee_name"):
            text = owner.text_of(tag)
            if text:
                return text
        conns = owner.find("connectors")
        for c in conns.children if conns is not None else []:
            if c.name in _ALIASES.get(name, (name,)):
                text = c.text_of("connectee_name")
                if text:
                    return text
        raise owner.error(f"<socket_{name}> is missing")

    def frame_of(self, owner: OsimElement, socket: str = "parent_frame") -> Placement:
        """The frame a component's socket names (a marker's, a path point's ...): 4.x
        ``socket_<socket>`` or an older spelling, or a ``<body>`` name (before 30501)."""
        if owner.find("body") is not None and owner.text_of("body"):
            return self.placement(self.index.resolve(owner, owner.text_of("body"), "body"))
        return self.socket_frame(owner, f"socket_{socket}")

    def socket_frame(self, owner: OsimElement, tag: str) -> Placement:
        name = tag.replace("socket_", "")
        return self.placement(self.index.resolve(owner, self.socket_path(owner, name), name))

    # ---- parts
    def bodies(self) -> dict:
        out = {}
        bs = self.model.find("BodySet")
        for el in bs.objects() if bs is not None else []:
            if el.tag != "Body":
                raise el.error(f"a {el.tag} in the BodySet is not supported (only Body)")
            if not el.name:
                raise el.error("a Body needs a name")
            if el.name == self.ground_name and el is self.ground:
                continue
            if el.name in out or el.name == self.ground_name:
                raise el.error(f"the body name {el.name!r} is used twice")
            m, com, I = read_body_inertia(el)
            out[el.name] = BodySpec(el.name, m, com, I, el, tuple(geometry_of(el, self)))
        return out

    def joints(self) -> list:
        out = []
        js = self.model.find("JointSet")
        for el in js.objects() if js is not None else []:
            out.append(self.joint(el))
        return out

    def joint(self, el: OsimElement) -> JointSpec:
        if el.tag not in JOINT_DOFS:
            raise el.error(f"the joint type {el.tag} is not supported (supported: "
                           f"{', '.join(JOINT_DOFS)})")
        if not el.name:
            raise el.error("a joint needs a name")
        parent = self.socket_frame(el, "socket_parent_frame")
        child = self.socket_frame(el, "socket_child_frame")
        if el.flag("reverse", False):
            raise el.error("<reverse>true</reverse> (a joint defined child to parent) is not "
                           "supported")
        if el.find("location_in_parent") is not None or el.find("location_in_child") is not None:
            # 4.0 development files before 30505: the offsets on the joint (6 digits, as
            # OpenSim's upgrade writes them)
            from .legacy import upgrade_rounding
            for tag_p, tag_o, which in (("location_in_parent", "orientation_in_parent", "p"),
                                        ("location_in_child", "orientation_in_child", "c")):
                loc = upgrade_rounding(el.numbers(tag_p, 3, default=(0, 0, 0)))
                ori = upgrade_rounding(el.numbers(tag_o, 3, default=(0, 0, 0)))
                if which == "p":
                    parent = parent.compose(body_fixed_xyz(ori), loc)
                else:
                    child = child.compose(body_fixed_xyz(ori), loc)
        cs = el.find("coordinates")
        if cs is None and el.find("CoordinateSet") is not None:
            items = el.find("CoordinateSet").objects()
        else:
            items = cs.children if cs is not None else []
        coords = tuple(read_coordinate(c, el.name) for c in items if c.tag == "Coordinate")
        return finish_joint(el, parent, child, coords)

    def constraints(self) -> list:
        out = []
        cs = self.model.find("ConstraintSet")
        for el in cs.objects() if cs is not None else []:
            enforced = el.flag("isEnforced", True) if el.find("isEnforced") is not None \
                else not el.flag("isDisabled", False)
            if el.tag not in CONSTRAINT_TYPES:
                self.left_out.append(LeftOut(el.tag, el.name, el.line, "constraint type not "
                                             "supported" if enforced else "not enforced"))
                continue
            data: dict = {}
            if el.tag == "CoordinateCouplerConstraint":
                data = coupler_data(el)
            elif el.tag == "PointConstraint":
                b1 = self.socket_frame(el, "socket_body_1")
                b2 = self.socket_frame(el, "socket_body_2")
                data = {"frame1": b1, "frame2": b2,
                        "point1": b1.point(el.numbers("location_body_1", 3, default=(0, 0, 0))),
                        "point2": b2.point(el.numbers("location_body_2", 3, default=(0, 0, 0)))}
            elif el.tag == "PointOnLineConstraint":
                data = point_on_line_data(el, self.socket_frame(el, "socket_line_body"),
                                          self.socket_frame(el, "socket_follower_body"))
            else:
                data = {"frame1": self.socket_frame(el, "socket_frame1"),
                        "frame2": self.socket_frame(el, "socket_frame2")}
            out.append(ConstraintSpec(el.name, el.tag, data, enforced, el))
        return out

    def markers(self) -> list:
        out = []
        ms = self.model.find("MarkerSet")
        for el in ms.objects() if ms is not None else []:
            if el.tag != "Marker":
                self.left_out.append(LeftOut(el.tag, el.name, el.line, "not a Marker"))
                continue
            if el.find("body") is not None:        # before 30501
                frame = self.placement(self.index.resolve(el, el.text_of("body"), "body"))
            else:
                frame = self.socket_frame(el, "socket_parent_frame")
            loc = el.numbers("location", 3, default=(0, 0, 0))
            out.append(MarkerSpec(el.name, frame.body, frame.point(loc), el))
        return out


def coupler_data(el: OsimElement) -> dict:
    indep = tuple((el.text_of("independent_coordinate_names") or "").split())
    dep = (el.text_of("dependent_coordinate_name") or "").strip()
    f = function_of(el, "coupled_coordinates_function")
    if not indep or not dep:
        raise el.error("needs <independent_coordinate_names> and <dependent_coordinate_name>")
    if f is None:
        raise el.error("needs a <coupled_coordinates_function>")
    if f.nargs not in (0, len(indep)):
        raise el.error(f"its {f.kind} takes {f.nargs} argument(s) but {len(indep)} independent "
                       "coordinate(s) are named")
    return {"independent": indep, "dependent": dep, "function": f,
            "scale": el.number("scale_factor", 1.0)}


def point_on_line_data(el: OsimElement, line: Placement, follower: Placement) -> dict:
    """A PointOnLineConstraint's bodies and vectors.  OpenSim hands Simbody the frames'
    bodies and the vectors as written (``line_direction_vec``, normalized, and
    ``point_on_line`` in the line body's frame, ``point_on_follower`` in the follower's),
    also when a socket names an offset frame; so does symbody."""
    direction = el.numbers("line_direction_vec", 3, default=(0, 0, 0))
    norm = float(np.linalg.norm(direction))
    if not norm > 0 or not np.isfinite(norm):
        raise el.error(f"<line_direction_vec> {direction.tolist()} has no direction")
    return {"line_body": line.body, "follower_body": follower.body,
            "direction": direction / norm,
            "point_on_line": el.numbers("point_on_line", 3, default=(0, 0, 0)),
            "point_on_follower": el.numbers("point_on_follower", 3, default=(0, 0, 0))}


def finish_joint(el: OsimElement, parent: Placement, child: Placement, coords: tuple) -> JointSpec:
    """Check the coordinates against the joint type and read a CustomJoint's axes."""
    if el.tag not in JOINT_DOFS:     # a 3.x file's joints come here unchecked
        raise el.error(f"the joint type {el.tag} is not supported (supported: "
                       f"{', '.join(JOINT_DOFS)})")
    n = JOINT_DOFS[el.tag]
    names = [c.name for c in coords]
    if len(set(names)) != len(names):
        raise el.error("two coordinates have the same name")
    axes: tuple = ()
    if el.tag == "CustomJoint":
        if not 1 <= len(coords) <= 6:
            raise el.error(f"a CustomJoint needs 1 to 6 coordinates, it has {len(coords)}")
        axes = read_transform_axes(el, names)
    elif len(coords) != n:
        raise el.error(f"a {el.tag} has {n} coordinate(s); the file gives {len(coords)} "
                       f"({', '.join(names) or 'none'})")
    if parent.body == child.body:
        raise el.error(f"the parent and child frames are on the same body {parent.body!r}")
    return JointSpec(el.name, el.tag, parent, child, coords, axes, el)


def parse_model(doc: OsimDocument) -> ModelSpec:
    """The :class:`ModelSpec` of a parsed document (4.x here; 3.x/2.x through :mod:`.legacy`)."""
    if doc.version < 30500:
        from .legacy import parse_legacy_model
        return parse_legacy_model(doc)
    rd = _Reader4(doc)
    model = doc.model
    gravity = model.numbers("gravity", 3, default=(0.0, -9.80665, 0.0))
    if not np.all(np.isfinite(gravity)):
        raise model.error("<gravity> must be finite")
    bodies = rd.bodies()
    joints = rd.joints()
    constraints = rd.constraints()
    markers = rd.markers()
    fs = model.find("ForceSet")
    forces = list(fs.objects()) if fs is not None else []
    forces += _component_forces(model)
    _left_out_sets(model, rd.left_out)
    ground_geometry = tuple(geometry_of(rd.ground, rd)) if rd.ground.tag == "Ground" else ()
    for j in joints:
        for b in (j.parent.body, j.child.body):
            if b != rd.ground_name and b not in bodies:
                raise InputError(f"{j.element.describe()}: names the body {b!r}, which is not "
                                 "in the BodySet")
    return ModelSpec(name=model.name or "model", version=doc.version, path=doc.path,
                     where=doc.where, gravity=gravity, ground=rd.ground_name, bodies=bodies,
                     joints=joints, constraints=constraints, markers=markers, forces=forces,
                     left_out=rd.left_out, ground_geometry=ground_geometry,
                     credits=model.text_of("credits") or "",
                     publications=model.text_of("publications") or "", element=model,
                     frame_of=rd.frame_of, controllers=controller_elements(model))


#: the endings of the tags of OpenSim's forces (Force, Muscle, Actuator, ...)
FORCE_SUFFIXES = ("Force", "Muscle", "Actuator", "Muscle_Deprecated")


def _component_forces(model: OsimElement) -> list:
    """The forces among the model's ``<components>`` (4.x models may hold forces there, as
    Moco's 2D walking model does its contact forces and muscles), after the ForceSet's."""
    comps = model.find("components")
    return [el for el in (comps.children if comps is not None else [])
            if el.tag.endswith(FORCE_SUFFIXES)]


def controller_elements(model: OsimElement) -> list:
    """The controllers of the ControllerSet, then those among the ``<components>``."""
    s = model.find("ControllerSet")
    out = list(s.objects()) if s is not None else []
    comps = model.find("components")
    return out + [el for el in (comps.children if comps is not None else [])
                  if el.tag.endswith("Controller")]


def _left_out_sets(model: OsimElement, left_out: list) -> None:
    """Probes and loose components are not built: listed with their line (controllers go to
    :mod:`.controllers`)."""
    for tag, reason in (("ProbeSet", "probes are not built"),
                        ("ComponentSet", "components of this type are not built")):
        s = model.find(tag)
        for el in s.objects() if s is not None else []:
            left_out.append(LeftOut(el.tag, el.name, el.line, reason))
    comps = model.find("components")
    for el in comps.children if comps is not None else []:
        # frames and drawings change no equation; forces and controllers go to their builders
        if el.tag.endswith(("Frame", "Geometry", "Controller") + FORCE_SUFFIXES):
            continue
        left_out.append(LeftOut(el.tag, el.name, el.line, "model components of this type are "
                                "not built"))
