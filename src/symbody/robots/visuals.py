"""A URDF robot's visual geometry as a :class:`symbody.scene.Scene` for the 3D viewer.

::

    visuals = read_visuals("talos.urdf")                  # every link's <visual> elements
    scene = scene_from_urdf("talos.urdf", link_frames, link_points, N, O)
    symbody.view(trajectory, scene).save("talos.html")

Each ``<visual>`` of a link L is drawn at its ``<origin>``, a fixed offset and rotation in
L's frame: with the link's position p_L(q) and rotation R_L(q) in the world frame N,

    position  r = p_L + R_L xyz                            (3,)
    rotation  R = R_L Rz(yaw) Ry(pitch) Rx(roll)           (3, 3)  (URDF's fixed-axis rpy)

Boxes, spheres, cylinders (URDF: axis along z; the scene's Cylinder: along y, so turned by
Rx(pi/2)) and meshes (STL, OBJ, Collada) are drawn; mesh file names are resolved from
``package://pkg/...`` (through ``package_dirs``, the folders above the URDF and
``ROS_PACKAGE_PATH`` / ``AMENT_PREFIX_PATH``), ``file://`` and paths relative to the URDF.
A mesh that cannot be found or read is drawn as a box with a :class:`MeshFileWarning`
naming the link and the file: the link's collision box (cylinder, sphere: the box around
it) where that is, else the uniform box of the link's mass and principal moments of
inertia at its centre of mass, along its principal axes.
"""

from __future__ import annotations

import math
import os
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import sympy as sm
from sympy.physics.vector import Point, ReferenceFrame

from ..errors import InputError
from ..scene import MESH_FORMATS, Box, Cylinder, Mesh, Scene, Shape, Sphere, VisualizationFrame

__all__ = ["Geometry", "Visual", "RobotVisuals", "MeshFileWarning", "read_visuals",
           "resolve_mesh", "rpy_matrix", "scene_from_urdf"]

DEFAULT_COLOR = (0.7, 0.7, 0.7, 1.0)


class MeshFileWarning(UserWarning):
    """A URDF mesh file could not be found or is not a format the viewer reads: a box is drawn."""


@dataclass(frozen=True)
class Geometry:
    """One URDF geometry: ``kind`` "box" (size = x, y, z edges), "cylinder" (radius, length),
    "sphere" (radius,) or "mesh" (``filename`` as written in the URDF, ``scale`` x, y, z)."""

    kind: str
    size: tuple[float, ...] = ()
    filename: str | None = None
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)


@dataclass(frozen=True)
class Visual:
    """A ``<visual>`` (or ``<collision>``) of ``link``: ``xyz`` (3,) and ``rpy`` (3,) of its
    origin in the link frame, its :class:`Geometry`, and ``rgba`` (None: no colour given)."""

    link: str
    geometry: Geometry
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rgba: tuple[float, float, float, float] | None = None
    name: str | None = None


@dataclass(frozen=True)
class RobotVisuals:
    """The parsed URDF: ``links`` in file order, ``visuals`` and ``collisions`` per link,
    ``inertias`` per link (mass, Ixx, Iyy, Izz, Ixy, Ixz, Iyz about the inertial origin, in
    its axes), ``inertial_origins`` per link (xyz, rpy of that origin in the link frame),
    ``materials`` (name -> rgba at the robot level), ``parents`` (child link -> parent link,
    from the joints) and ``base_dir`` (relative mesh paths)."""

    name: str
    links: tuple[str, ...]
    visuals: Mapping[str, tuple[Visual, ...]] = field(default_factory=dict)
    collisions: Mapping[str, tuple[Visual, ...]] = field(default_factory=dict)
    inertias: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    materials: Mapping[str, tuple[float, float, float, float]] = field(default_factory=dict)
    parents: Mapping[str, str] = field(default_factory=dict)
    base_dir: Path = Path(".")
    inertial_origins: Mapping[str, tuple[tuple, tuple]] = field(default_factory=dict)
    source: str = "<string>"


# ----------------------------------------------------------------------------- parsing
def _numbers(text: str | None, count: int, what: str, default: tuple[float, ...]) -> tuple[float, ...]:
    if text is None:
        return default
    try:
        values = tuple(float(v) for v in text.split())
    except ValueError as exc:
        raise InputError(f"{what}: expected {count} numbers, got {text!r}") from exc
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise InputError(f"{what}: expected {count} finite numbers, got {text!r}")
    return values


def _positive(element: ET.Element, attribute: str, what: str) -> float:
    text = element.get(attribute)
    if text is None:
        raise InputError(f"{what}: <{element.tag}> needs the attribute {attribute!r}")
    value = _numbers(text, 1, f"{what}: <{element.tag} {attribute}>", ())[0]
    if not value > 0:
        raise InputError(f"{what}: <{element.tag} {attribute}> must be positive, got {text!r}")
    return value


def _geometry(element: ET.Element | None, what: str) -> Geometry:
    if element is None or len(element) == 0:
        raise InputError(f"{what}: no <geometry> (box, cylinder, sphere or mesh)")
    shape = element[0]
    if shape.tag == "box":
        size = _numbers(shape.get("size"), 3, f"{what}: <box size>", ())
        if not size or not all(v > 0 for v in size):
            raise InputError(f"{what}: <box size> must be 3 positive numbers, got {shape.get('size')!r}")
        return Geometry("box", size)
    if shape.tag == "cylinder":
        return Geometry("cylinder", (_positive(shape, "radius", what), _positive(shape, "length", what)))
    if shape.tag == "sphere":
        return Geometry("sphere", (_positive(shape, "radius", what),))
    if shape.tag == "capsule":         # (not URDF's standard; drawn as a cylinder with its caps' length)
        return Geometry("capsule", (_positive(shape, "radius", what), _positive(shape, "length", what)))
    if shape.tag == "mesh":
        filename = shape.get("filename")
        if not filename:
            raise InputError(f"{what}: <mesh> needs a filename")
        scale = _numbers(shape.get("scale"), 3, f"{what}: <mesh scale>", (1.0, 1.0, 1.0))
        return Geometry("mesh", (), filename, scale)     # type: ignore[arg-type]
    raise InputError(f"{what}: unknown geometry <{shape.tag}>; URDF has box, cylinder, sphere and mesh "
                     "(and capsule, read for contact)")


def _rgba(material: ET.Element | None, materials: Mapping[str, tuple], what: str):
    """The colour of a <material>: its own <color rgba>, else the robot-level material of that name."""
    if material is None:
        return None
    color = material.find("color")
    if color is not None and color.get("rgba") is not None:
        return _numbers(color.get("rgba"), 4, f"{what}: <color rgba>", ())
    name = material.get("name")
    if name and name in materials:
        return materials[name]
    return None     # a texture-only material, or a name defined nowhere: default colour


def _origin(element: ET.Element, what: str) -> tuple[tuple, tuple]:
    origin = element.find("origin")
    if origin is None:
        return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    return (_numbers(origin.get("xyz"), 3, f"{what}: <origin xyz>", (0.0, 0.0, 0.0)),
            _numbers(origin.get("rpy"), 3, f"{what}: <origin rpy>", (0.0, 0.0, 0.0)))


def read_visuals(urdf: str | Path) -> RobotVisuals:
    """Parse the visual, collision and inertial elements of a URDF (a file path or its XML text).

    Materials defined at the robot level (``<robot><material name=...><color rgba=.../>``)
    are looked up by name from the visuals.  InputError for malformed XML or elements,
    naming the link.
    """
    text, source, base_dir = _urdf_text(urdf)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise InputError(f"URDF {source}: not well-formed XML: {exc}") from exc
    if root.tag != "robot":
        raise InputError(f"URDF {source}: the root element is <{root.tag}>, not <robot>")
    materials: dict[str, tuple] = {}
    for material in root.findall("material"):
        rgba = _rgba(material, {}, f"URDF material {material.get('name')!r}")
        if material.get("name") and rgba is not None:
            materials[material.get("name")] = rgba
    links: list[str] = []
    visuals: dict[str, tuple[Visual, ...]] = {}
    collisions: dict[str, tuple[Visual, ...]] = {}
    inertias: dict[str, tuple[float, ...]] = {}
    inertial_origins: dict[str, tuple[tuple, tuple]] = {}
    for link in root.findall("link"):
        name = link.get("name")
        if not name:
            raise InputError(f"URDF {source}: a <link> has no name")
        links.append(name)
        for tag, store in (("visual", visuals), ("collision", collisions)):
            items = []
            for i, element in enumerate(link.findall(tag)):
                what = f"link {name!r} <{tag}> {i}"
                xyz, rpy = _origin(element, what)
                rgba = _rgba(element.find("material"), materials, what) if tag == "visual" else None
                items.append(Visual(name, _geometry(element.find("geometry"), what), xyz, rpy, rgba,
                                    element.get("name")))
            store[name] = tuple(items)
        inertial = link.find("inertial")
        if inertial is not None and inertial.find("mass") is not None:
            what = f"link {name!r} <inertial>"
            mass = _numbers(inertial.find("mass").get("value"), 1, f"{what} <mass>", (0.0,))[0]
            tensor = inertial.find("inertia")
            keys = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
            moments = tuple(_numbers(tensor.get(k), 1, f"{what} <inertia {k}>", (0.0,))[0] for k in keys) \
                if tensor is not None else (0.0,) * 6
            inertias[name] = (mass, *moments)
            inertial_origins[name] = _origin(inertial, what)
    parents: dict[str, str] = {}
    for joint in root.findall("joint"):
        parent, child = joint.find("parent"), joint.find("child")
        if parent is not None and child is not None and parent.get("link") and child.get("link"):
            parents[child.get("link")] = parent.get("link")
    return RobotVisuals(root.get("name", ""), tuple(links), visuals, collisions, inertias, materials,
                        parents, base_dir, inertial_origins=inertial_origins, source=source)


def _urdf_text(urdf: str | Path) -> tuple[str, str, Path]:
    if isinstance(urdf, str) and urdf.lstrip().startswith("<"):
        return urdf, "<string>", Path.cwd()
    path = Path(urdf).expanduser()
    if not path.is_file():
        raise InputError(f"URDF file {str(urdf)!r} does not exist")
    return path.read_text(encoding="utf-8"), str(path), path.resolve().parent


# ----------------------------------------------------------------------------- mesh files
def _package_roots(package: str, base_dir: Path, package_dirs) -> list[Path]:
    """Candidate folders of ROS package ``package``, in the order they are tried."""
    roots: list[Path] = []
    if isinstance(package_dirs, Mapping):
        if package in package_dirs:
            roots.append(Path(package_dirs[package]).expanduser())
        return roots
    given = [package_dirs] if isinstance(package_dirs, (str, Path)) else package_dirs
    if given is not None:
        for folder in given:
            folder = Path(folder).expanduser()
            roots += [folder] if folder.name == package else [folder / package]
        return roots
    for folder in (base_dir, *base_dir.parents):       # upward from the URDF's folder
        if folder.name == package:
            roots.append(folder)
        roots.append(folder / package)
    for variable, sub in (("ROS_PACKAGE_PATH", ""), ("AMENT_PREFIX_PATH", "share")):
        for entry in filter(None, os.environ.get(variable, "").split(os.pathsep)):
            folder = Path(entry) / sub if sub else Path(entry)
            roots += [folder] if folder.name == package else [folder / package]
    return roots


def resolve_mesh(filename: str, base_dir: str | Path = ".",
                 package_dirs: Sequence[str | Path] | Mapping[str, str | Path] | str | Path | None = None
                 ) -> Path | None:
    """The file a URDF mesh ``filename`` names, or None when it is not found.

    ``package://pkg/rest``: ``rest`` under the folder of package ``pkg``: from
    ``package_dirs`` (a mapping pkg -> folder, or folders that are or contain ``pkg``), by
    default the first of: a folder named ``pkg`` at or above ``base_dir`` (or inside one of
    them), ``$ROS_PACKAGE_PATH/pkg``, ``$AMENT_PREFIX_PATH/share/pkg``.  ``file://path``:
    that path.  Other names: relative to ``base_dir`` (the URDF's folder).
    """
    base_dir = Path(base_dir)
    if filename.startswith("package://"):
        # "package:///pkg/..." (Talos's full_v2 files) is read as "package://pkg/...", as Pinocchio does
        package, _, rest = filename[len("package://"):].lstrip("/").partition("/")
        if not package or not rest:
            return None
        for root in _package_roots(package, base_dir, package_dirs):
            candidate = root / rest
            if candidate.is_file():
                return candidate.resolve()
        return None
    if filename.startswith("file://"):
        filename = filename[len("file://"):]
    path = Path(filename).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    return path.resolve() if path.is_file() else None


# ----------------------------------------------------------------------------- geometry -> shapes
def rpy_matrix(rpy: Sequence[float]) -> np.ndarray:
    """URDF's fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll) (3, 3), child -> parent."""
    r, p, y = (float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


#: Rx(pi/2): turns the scene Cylinder's y axis onto URDF's cylinder axis z
_Y_TO_Z = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])


def _box_edges(geometry: Geometry) -> tuple[float, float, float] | None:
    """Edges (x, y, z) of the box around a primitive geometry, None for meshes."""
    if geometry.kind == "box":
        return geometry.size       # type: ignore[return-value]
    if geometry.kind == "cylinder":
        r, length = geometry.size
        return (2 * r, 2 * r, length)
    if geometry.kind == "sphere":
        return (2 * geometry.size[0],) * 3
    if geometry.kind == "capsule":
        r, length = geometry.size
        return (2 * r, 2 * r, length + 2 * r)
    return None


def _inertia_box(inertia: tuple[float, ...] | None) -> tuple[tuple[float, ...], np.ndarray] | None:
    """The uniform box with the same mass and principal moments I_i: edges a_i^2 =
    6 (I_1 + I_2 + I_3 - 2 I_i) / m along the principal axes, the columns of V (3, 3),
    det V = +1 (in the inertial frame).  None without mass or for impossible moments."""
    if inertia is None:
        return None
    mass, ixx, iyy, izz, ixy, ixz, iyz = inertia
    if not mass > 0:
        return None
    moments, V = np.linalg.eigh(np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]))
    total = float(np.sum(moments))
    squares = [6.0 * (total - 2.0 * m) / mass for m in moments]
    if not all(s > 0 for s in squares):
        return None
    if np.linalg.det(V) < 0:
        V[:, 2] *= -1.0
    return tuple(math.sqrt(s) for s in squares), V


def _stand_in_box(robot: RobotVisuals, link: str, color: str, opacity: float
                  ) -> tuple[Box, tuple[tuple, np.ndarray] | None]:
    """The box drawn for a mesh that cannot be drawn, and where (xyz, rotation in the link
    frame; None: at the visual's origin): the link's collision primitive at its origin, the
    box of its inertia at the centre of mass along the principal axes, or sized from the scene."""
    for collision in robot.collisions.get(link, ()):
        edges = _box_edges(collision.geometry)
        if edges is not None:
            return Box(*edges, color=color, opacity=opacity), (collision.xyz, rpy_matrix(collision.rpy))
    box = _inertia_box(robot.inertias.get(link))
    if box is None:
        return Box(None, None, None, color=color, opacity=opacity), None
    edges, V = box
    xyz, rpy = robot.inertial_origins.get(link, ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)))
    return Box(*edges, color=color, opacity=opacity), (xyz, rpy_matrix(rpy) @ V)


def _hex(rgba: Sequence[float]) -> str:
    return "#" + "".join(f"{round(min(max(float(c), 0.0), 1.0) * 255):02x}" for c in rgba[:3])


def _shape(robot: RobotVisuals, visual: Visual, package_dirs, where: str
           ) -> tuple[Shape, tuple[tuple, np.ndarray] | None]:
    """The shape of a visual and, for a stand-in box, its own placement (else None)."""
    rgba = visual.rgba or DEFAULT_COLOR
    color = _hex(rgba)
    opacity = float(rgba[3])
    if not 0.0 < opacity <= 1.0:
        warnings.warn(f"{where}: colour alpha {opacity:g} is outside (0, 1]; drawn opaque",
                      MeshFileWarning, stacklevel=4)
        opacity = 1.0
    g = visual.geometry
    if g.kind == "box":
        return Box(*g.size, color=color, opacity=opacity), None
    if g.kind == "sphere":
        return Sphere(g.size[0], color=color, opacity=opacity), None
    if g.kind == "cylinder":
        return Cylinder(g.size[1], g.size[0], color=color, opacity=opacity), None
    if g.kind == "capsule":
        return Cylinder(g.size[1] + 2 * g.size[0], g.size[0], color=color, opacity=opacity), None
    path = resolve_mesh(g.filename or "", robot.base_dir, package_dirs)
    suffix = Path(g.filename or "").suffix.lower().lstrip(".")
    if path is None or suffix not in MESH_FORMATS:
        reason = ("was not found" if path is None else
                  f"is a .{suffix} file; the viewer reads {', '.join('.' + f for f in MESH_FORMATS)}")
        box, placement = _stand_in_box(robot, visual.link, color, opacity)
        warnings.warn(f"{where}: mesh file {g.filename!r} {reason}"
                      f"{'' if path is None else f' ({path})'}; drawing a box "
                      f"({', '.join('auto' if v is None else f'{v:.3g}' for v in box.sizes().values())} m) instead",
                      MeshFileWarning, stacklevel=4)
        return box, placement
    return Mesh(path, g.scale, color=color, opacity=opacity), None


def _clean(matrix: np.ndarray) -> sm.Matrix:
    """A constant rotation as a SymPy matrix, round-off (|entry| < 1e-15) set to exact 0 and 1."""
    out = []
    for value in matrix.ravel():
        value = float(value)
        if abs(value) < 1e-15:
            out.append(sm.S.Zero)
        elif abs(abs(value) - 1.0) < 1e-15:
            out.append(sm.S.One if value > 0 else -sm.S.One)
        else:
            out.append(sm.Float(value))
    return sm.Matrix(3, 3, out)


class _LinkPoses:
    """Link poses in the world frame, p_L (3x1) and R_L (3x3), built down the URDF's tree:

        R_L = R_P P.dcm(L),    p_L = p_P + R_P [r_{L/P}]_P       (P: the parent link)

    so that a link's expressions reuse its parent's (SymPy's N.dcm(L) and pos_from walk the
    whole chain again for every link); the root link, or a link whose parent has no frame,
    from ``world_frame`` / ``world_origin`` directly.
    """

    def __init__(self, robot: RobotVisuals, frames: Mapping[str, ReferenceFrame],
                 points: Mapping[str, Point], world_frame: ReferenceFrame, world_origin: Point):
        self.robot, self.frames, self.points = robot, frames, points
        self.N, self.O = world_frame, world_origin
        self.done: dict[str, tuple[sm.Matrix, sm.Matrix]] = {}

    def __call__(self, link: str) -> tuple[sm.Matrix, sm.Matrix]:
        if link in self.done:
            return self.done[link]
        chain = [link]      # up to a link already done or without a parent frame (no recursion limit)
        while True:
            parent = self.robot.parents.get(chain[-1])
            if (parent is None or parent in self.done or parent not in self.frames
                    or parent not in self.points or parent in chain):
                break
            chain.append(parent)
        for item in reversed(chain):
            self.done[item] = self._pose(item)
        return self.done[link]

    def _pose(self, link: str) -> tuple[sm.Matrix, sm.Matrix]:
        frame, point = self.frames[link], self.points[link]
        parent = self.robot.parents.get(link)
        try:
            if parent in self.done and parent in self.points:
                p_parent, R_parent = self.done[parent]
                P = self.frames[parent]
                local = point.pos_from(self.points[parent]).to_matrix(P)
                return p_parent + R_parent * local, R_parent * P.dcm(frame)
            return sm.Matrix(point.pos_from(self.O).to_matrix(self.N)), sm.Matrix(self.N.dcm(frame))
        except ValueError as exc:
            raise InputError(f"scene_from_urdf: link {link!r}: its frame or point is not related to "
                             f"{'its parent link ' + repr(parent) if parent in self.done else 'the world'}: "
                             f"{exc}") from exc


def scene_from_urdf(urdf: str | Path | RobotVisuals, link_frames: Mapping[str, ReferenceFrame],
                    link_points: Mapping[str, Point], world_frame: ReferenceFrame, world_origin: Point,
                    *, package_dirs: Sequence[str | Path] | Mapping[str, str | Path] | None = None,
                    name: str | None = None) -> Scene:
    """The Scene drawing a URDF robot's ``<visual>`` geometry on the model's link frames.

    ``link_frames[L]`` / ``link_points[L]``: the ReferenceFrame and the Point (origin) of
    link L, oriented and located (through the joints) relative to ``world_frame`` /
    ``world_origin``; they are read, not changed.  Each visual becomes a VisualizationFrame
    named L (``L#2``, ``L#3`` for a link's further visuals) at p_L + R_L xyz (3x1 in N),
    turned by R_L rpy_matrix(rpy) (3x3); each link origin is a named point L
    (``window.symbody.position(L)`` in the page).  Missing mesh files: a box (from the
    link's collision geometry or inertia, placed as those are) and a
    :class:`MeshFileWarning`.  ``package_dirs``: see :func:`resolve_mesh`.
    """
    robot = urdf if isinstance(urdf, RobotVisuals) else read_visuals(urdf)
    if not isinstance(world_frame, ReferenceFrame):
        raise InputError(f"scene_from_urdf: world_frame must be a ReferenceFrame, got {type(world_frame).__name__}")
    if not isinstance(world_origin, Point):
        raise InputError(f"scene_from_urdf: world_origin must be a Point, got {type(world_origin).__name__}")
    items: list[VisualizationFrame] = []
    points: dict[str, sm.Matrix] = {}
    pose = _LinkPoses(robot, link_frames, link_points, world_frame, world_origin)
    for link in robot.links:
        visuals = robot.visuals.get(link, ())
        if not visuals and link not in link_points:
            continue
        if link not in link_frames or link not in link_points:
            missing, known = ("link_frames", link_frames) if link not in link_frames else ("link_points", link_points)
            raise InputError(f"scene_from_urdf: URDF link {link!r} is not in {missing} "
                             f"(known: {', '.join(sorted(known))})")
        p, R = pose(link)
        points[link] = p
        for i, visual in enumerate(visuals):
            label = link if i == 0 else f"{link}#{i + 1}"
            where = f"URDF {robot.source}, link {link!r}" + (f" visual {i + 1}" if len(visuals) > 1 else "")
            shape, placement = _shape(robot, visual, package_dirs, where)
            xyz, rotation = placement or (visual.xyz, rpy_matrix(visual.rpy))
            if isinstance(shape, Cylinder):
                rotation = rotation @ _Y_TO_Z
            at = p + R * sm.Matrix([float(c) for c in xyz]) if any(xyz) else p
            turned = R if np.allclose(rotation, np.eye(3), rtol=0, atol=1e-15) else R * _clean(rotation)
            items.append(VisualizationFrame(label, turned, at, shape))
    return Scene(world_frame, world_origin, *items, points=points, up="z",
                 name=name if name is not None else robot.name)
