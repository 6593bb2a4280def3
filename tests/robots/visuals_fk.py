"""A tiny forward kinematics of a URDF, written for the tests (an oracle independent of the library).

Every joint's child frame is the parent frame turned by the joint origin's rpy (scipy's
extrinsic "xyz" Euler angles) and then, for revolute and continuous joints, by q about the
axis; its origin is the parent's origin moved by the joint's xyz (plus q along the axis for
prismatic joints).  The joint coordinates are dynamicsymbols q_<joint name>(t).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from importlib import metadata
from pathlib import Path

import numpy as np
import sympy as sm
from scipy.spatial.transform import Rotation
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols


def robots_folder() -> Path | None:
    """example-robot-data's robots/ folder (it ships URDFs and meshes, no Python module)."""
    try:
        files = metadata.files("example-robot-data") or []
    except metadata.PackageNotFoundError:
        return None
    for f in files:
        parts = Path(str(f)).parts
        if "example-robot-data" in parts and parts[-1].endswith(".urdf"):
            located = Path(f.locate()).resolve()
            index = len(located.parts) - 1 - located.parts[::-1].index("robots")
            return Path(*located.parts[:index + 1])
    return None


def _floats(text: str | None, default: tuple) -> np.ndarray:
    return np.array([float(v) for v in text.split()]) if text else np.array(default, dtype=float)


def forward_kinematics(urdf: Path):
    """(N, O, link_frames, link_points, joint symbols) of the URDF's tree, the root link at (N, O)."""
    root = ET.parse(urdf).getroot()
    joints = root.findall("joint")
    children = {j.find("child").get("link") for j in joints}
    links = [link.get("name") for link in root.findall("link")]
    base = next(name for name in links if name not in children)
    N, O = ReferenceFrame("N"), Point("O")
    frames, points, symbols = {base: N}, {base: O}, []
    pending = list(joints)
    while pending:
        progress = False
        for joint in list(pending):
            parent, child = joint.find("parent").get("link"), joint.find("child").get("link")
            if parent not in frames:
                continue
            pending.remove(joint)
            progress = True
            origin = joint.find("origin")
            xyz = _floats(origin.get("xyz") if origin is not None else None, (0, 0, 0))
            rpy = _floats(origin.get("rpy") if origin is not None else None, (0, 0, 0))
            P, p = frames[parent], points[parent]
            J = ReferenceFrame(f"J_{child}")
            J.orient_explicit(P, sm.Matrix(Rotation.from_euler("xyz", rpy).as_matrix()))
            point = p.locatenew(f"P_{child}", sum((float(c) * e for c, e in zip(xyz, (P.x, P.y, P.z))),
                                                  start=0 * P.x))
            kind = joint.get("type")
            axis_element = joint.find("axis")
            axis = _floats(axis_element.get("xyz") if axis_element is not None else None, (1, 0, 0))
            frame = J
            if kind in ("revolute", "continuous", "prismatic"):
                axis = axis / np.linalg.norm(axis)
                q = dynamicsymbols(f"q_{joint.get('name')}")
                symbols.append(q)
                direction = sum((float(c) * e for c, e in zip(axis, (J.x, J.y, J.z))), start=0 * J.x)
                if kind == "prismatic":
                    point = point.locatenew(f"S_{child}", q * direction)
                else:
                    frame = ReferenceFrame(f"L_{child}")
                    frame.orient_axis(J, direction, q)
            frames[child], points[child] = frame, point
        assert progress, f"joints without a parent in the tree: {[j.get('name') for j in pending]}"
    return N, O, frames, points, symbols


def numeric_link_poses(urdf: Path, values: dict[str, float]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Link name -> (position (3,), rotation (3, 3)) in the root link's frame, by numpy alone:
    T_child = T_parent Trans(xyz) Rot(rpy) Rot(axis, q) (or Trans(q axis) for prismatic joints);
    ``values``: joint name -> q (missing joints: 0)."""
    root = ET.parse(urdf).getroot()
    joints = {j.find("child").get("link"): j for j in root.findall("joint")}
    links = [link.get("name") for link in root.findall("link")]
    poses: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def pose(link: str):
        if link not in poses:
            joint = joints.get(link)
            if joint is None:
                poses[link] = (np.zeros(3), np.eye(3))
            else:
                p, R = pose(joint.find("parent").get("link"))
                origin = joint.find("origin")
                xyz = _floats(origin.get("xyz") if origin is not None else None, (0, 0, 0))
                rpy = _floats(origin.get("rpy") if origin is not None else None, (0, 0, 0))
                p, R = p + R @ xyz, R @ Rotation.from_euler("xyz", rpy).as_matrix()
                kind, q = joint.get("type"), float(values.get(joint.get("name"), 0.0))
                axis_element = joint.find("axis")
                axis = _floats(axis_element.get("xyz") if axis_element is not None else None, (1, 0, 0))
                if kind in ("revolute", "continuous"):
                    R = R @ Rotation.from_rotvec(q * axis / np.linalg.norm(axis)).as_matrix()
                elif kind == "prismatic":
                    p = p + R @ (q * axis / np.linalg.norm(axis))
                poses[link] = (p, R)
        return poses[link]

    for link in links:
        pose(link)
    return poses
