"""What an ``.osim`` file says, as plain records: bodies, frames, joints, coordinates,
constraints, markers, geometry, and the elements that are left to the force builders.

Both file formats (4.x and the older 3.x/2.x, see :mod:`.parse` and :mod:`.legacy`) are read
into these records, so everything downstream sees one model.  Placements are numeric:
a frame fixed in a body is the rotation ``R`` (3x3: the frame's axes in body coordinates)
and the origin ``p`` (3, body coordinates).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .functions import OsimFunction
from .xml_tree import OsimElement

__all__ = ["Placement", "BodySpec", "CoordinateSpec", "TransformAxisSpec", "JointSpec",
           "ConstraintSpec", "MarkerSpec", "GeometrySpec", "LeftOut", "ModelSpec",
           "JOINT_DOFS", "body_fixed_xyz"]

#: the joint types built, with their number of coordinates (CustomJoint: 1 to 6)
JOINT_DOFS = {"PinJoint": 1, "SliderJoint": 1, "BallJoint": 3, "FreeJoint": 6, "WeldJoint": 0,
              "UniversalJoint": 2, "GimbalJoint": 3, "PlanarJoint": 3, "CustomJoint": None}


def body_fixed_xyz(angles) -> np.ndarray:
    """OpenSim's orientation: body-fixed X-Y-Z Euler angles, R = Rx(a) Ry(b) Rz(c)."""
    a, b, c = (float(v) for v in angles)
    ca, sa, cb, sb, cc, sc = np.cos(a), np.sin(a), np.cos(b), np.sin(b), np.cos(c), np.sin(c)
    Rx = np.array([[1, 0, 0], [0, ca, -sa], [0, sa, ca]])
    Ry = np.array([[cb, 0, sb], [0, 1, 0], [-sb, 0, cb]])
    Rz = np.array([[cc, -sc, 0], [sc, cc, 0], [0, 0, 1]])
    return Rx @ Ry @ Rz


@dataclass(frozen=True)
class Placement:
    """A frame fixed in ``body``: axes ``R`` (3x3) and origin ``p`` (3), body coordinates;
    ``frame``: the OpenSim frame's name or path it came from."""

    body: str
    R: np.ndarray
    p: np.ndarray
    frame: str = ""

    def compose(self, R: np.ndarray, p: np.ndarray, frame: str = "") -> Placement:
        """The frame at (R, p) in this frame's coordinates, placed in the body."""
        return Placement(self.body, self.R @ R, self.R @ p + self.p, frame or self.frame)

    def point(self, p: np.ndarray) -> np.ndarray:
        return self.R @ np.asarray(p, dtype=float) + self.p


@dataclass(frozen=True)
class GeometrySpec:
    """Something drawn on a body: ``kind`` 'mesh' (``file``), 'sphere', 'cylinder', 'brick',
    'ellipsoid', ... with ``size`` (the kind's numbers), ``scale`` (3), on ``placement``."""

    name: str
    kind: str
    placement: Placement
    file: str | None = None
    size: tuple = ()
    scale: tuple = (1.0, 1.0, 1.0)
    color: tuple = (1.0, 1.0, 1.0)
    opacity: float = 1.0
    line: int = 0


@dataclass(frozen=True)
class BodySpec:
    """A body: ``mass``, ``com`` (3, body frame), ``inertia`` (3x3 about the centre of mass,
    body axes), ``element`` (its XML), ``geometry``."""

    name: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    element: OsimElement | None
    geometry: tuple = ()


@dataclass(frozen=True)
class CoordinateSpec:
    """A coordinate of ``joint``: defaults, ``range`` (lower, upper), the flags ``clamped``,
    ``locked``, ``prescribed`` (with ``prescribed_function`` of time), ``motion_type``."""

    name: str
    joint: str
    default_value: float
    default_speed: float
    range: tuple
    clamped: bool
    locked: bool
    prescribed: bool
    prescribed_function: OsimFunction | None
    motion_type: str
    element: OsimElement | None


@dataclass(frozen=True)
class TransformAxisSpec:
    """One of a CustomJoint's six axes: ``name`` (rotation1..3, translation1..3), the
    ``coordinates`` its function takes, the ``axis`` (3) and the ``function``."""

    name: str
    coordinates: tuple
    axis: np.ndarray
    function: OsimFunction
    element: OsimElement | None


@dataclass(frozen=True)
class JointSpec:
    """A joint of ``type`` (a key of :data:`JOINT_DOFS`) between the ``parent`` frame F and the
    ``child`` frame M (placements in their bodies), its ``coordinates`` in order, and for a
    CustomJoint its six ``axes`` (rotation1, rotation2, rotation3, translation1..3)."""

    name: str
    type: str
    parent: Placement
    child: Placement
    coordinates: tuple
    axes: tuple
    element: OsimElement | None


@dataclass(frozen=True)
class ConstraintSpec:
    """A constraint of ``type`` with what it needs in ``data`` (placements, coordinates,
    function), ``enforced`` (False: OpenSim ignores it too)."""

    name: str
    type: str
    data: dict
    enforced: bool
    element: OsimElement


@dataclass(frozen=True)
class MarkerSpec:
    """A marker: a point fixed in ``body`` at ``location`` (3, body frame)."""

    name: str
    body: str
    location: np.ndarray
    element: OsimElement | None


@dataclass(frozen=True)
class LeftOut:
    """An element the model does not build, with the reason."""

    tag: str
    name: str
    line: int
    reason: str

    def __str__(self) -> str:
        label = f"{self.tag} {self.name!r}" if self.name else self.tag
        return f"{label} (line {self.line}): {self.reason}"


@dataclass
class ModelSpec:
    """Everything the importer read from one file."""

    name: str
    version: int
    path: str | None
    where: str
    gravity: np.ndarray
    ground: str
    bodies: dict                       # name -> BodySpec (BodySet order), ground excluded
    joints: list                       # JointSpec, file order
    constraints: list = field(default_factory=list)
    markers: list = field(default_factory=list)
    forces: list = field(default_factory=list)        # OsimElement, ForceSet order
    left_out: list = field(default_factory=list)      # LeftOut
    ground_geometry: tuple = ()
    credits: str = ""
    publications: str = ""
    element: OsimElement | None = None
    #: ``frame_of(element, socket)``: the Placement a component's frame socket names (4.x
    #: ``socket_<socket>``, its older spellings, or a 3.x ``<body>``), for force builders
    frame_of: Any = None
    #: the controllers (OsimElement, ControllerSet then ``<components>`` order; built by
    #: :mod:`..controllers`)
    controllers: list = field(default_factory=list)
