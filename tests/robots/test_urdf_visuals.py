"""URDF visual geometry: parsing, mesh file resolution, the scene's poses against a numpy
forward kinematics, and the page's embedded meshes.

The browser side (the page parses and draws the meshes) is in test_urdf_visuals_browser.py.
"""

from __future__ import annotations

import base64
import json
import re
import struct
import warnings
import zlib
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import sympy as sm
from scipy.spatial.transform import Rotation
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols
from visuals_fk import forward_kinematics, numeric_link_poses, robots_folder

from symbody.errors import InputError
from symbody.presentation import Box, Cylinder, Mesh, Sphere, VisualizationFrame, view
from symbody.presentation.viewer import scene_samples
from symbody.robots.visuals import (
    MeshFileWarning,
    read_visuals,
    resolve_mesh,
    rpy_matrix,
    scene_from_urdf,
)

ROBOTS = robots_folder()
needs_robots = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")


def write_stl(path: Path, triangles: np.ndarray) -> Path:
    """A binary STL of triangles (n, 3, 3)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"symbody test".ljust(80, b" ") + struct.pack("<I", len(triangles)))
        for tri in np.asarray(triangles, dtype="<f4"):
            f.write(np.zeros(3, "<f4").tobytes() + tri.tobytes() + b"\0\0")
    return path


TETRAHEDRON = np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 0, 0], [0, 1, 0], [0, 0, 1]],
                        [[0, 0, 0], [0, 0, 1], [1, 0, 0]], [[1, 0, 0], [0, 1, 0], [0, 0, 1]]]) * 0.1

URDF = """<?xml version="1.0"?>
<robot name="sampler">
  <material name="blue"><color rgba="0 0 1 1"/></material>
  <material name="half"><color rgba="1 0.5 0 0.5"/></material>
  <link name="base">
    <visual><origin xyz="0.1 0.2 0.3" rpy="0.3 -0.4 0.5"/>
      <geometry><box size="0.4 0.5 0.6"/></geometry><material name="blue"/></visual>
    <visual><geometry><sphere radius="0.05"/></geometry><material name="half"/></visual>
  </link>
  <link name="arm">
    <visual><origin xyz="0 0 0.25" rpy="0 0 0"/>
      <geometry><cylinder radius="0.03" length="0.5"/></geometry>
      <material name="own"><color rgba="0.2 0.4 0.6 1"/></material></visual>
    <visual><geometry><mesh filename="package://sampler_pkg/meshes/tet.stl" scale="2 2 2"/></geometry></visual>
  </link>
  <link name="hand">
    <inertial><origin xyz="0.01 0 0.02" rpy="0 0 0.3"/><mass value="2.0"/>
      <inertia ixx="0.0410" iyy="0.0250" izz="0.0233" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><mesh filename="package://sampler_pkg/meshes/missing.stl"/></geometry></visual>
    <visual><geometry><mesh filename="../meshes/tet.stl"/></geometry></visual>
  </link>
  <link name="tool">
    <collision><origin xyz="0 0 0.05" rpy="0.2 0 0"/><geometry><box size="0.01 0.02 0.03"/></geometry></collision>
    <visual><geometry><mesh filename="meshes/tool.dae"/></geometry></visual>
  </link>
  <link name="empty"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.1" rpy="0 0 0"/><axis xyz="0 1 0"/></joint>
  <joint name="j2" type="revolute"><parent link="arm"/><child link="hand"/>
    <origin xyz="0 0 0.5" rpy="0.1 0 0"/><axis xyz="1 0 0"/></joint>
  <joint name="j3" type="fixed"><parent link="hand"/><child link="tool"/></joint>
  <joint name="j4" type="fixed"><parent link="base"/><child link="empty"/></joint>
</robot>
"""


@pytest.fixture
def sampler(tmp_path):
    """The URDF in <tmp>/ws/sampler_pkg/urdf/, its package's STL in meshes/ (no tool.dae)."""
    package = tmp_path / "ws" / "sampler_pkg"
    write_stl(package / "meshes" / "tet.stl", TETRAHEDRON)
    urdf = package / "urdf" / "sampler.urdf"
    urdf.parent.mkdir(parents=True)
    urdf.write_text(URDF, encoding="utf-8")
    return urdf


def test_every_geometry_kind_origin_and_material_is_parsed(sampler):
    robot = read_visuals(sampler)
    assert robot.name == "sampler" and robot.links == ("base", "arm", "hand", "tool", "empty")
    assert robot.materials == {"blue": (0.0, 0.0, 1.0, 1.0), "half": (1.0, 0.5, 0.0, 0.5)}
    box, ball = robot.visuals["base"]
    assert (box.geometry.kind, box.geometry.size) == ("box", (0.4, 0.5, 0.6))
    assert box.xyz == (0.1, 0.2, 0.3) and box.rpy == (0.3, -0.4, 0.5)
    assert box.rgba == (0.0, 0.0, 1.0, 1.0)                 # robot-level material by name
    assert (ball.geometry.kind, ball.geometry.size, ball.rgba) == ("sphere", (0.05,), (1.0, 0.5, 0.0, 0.5))
    rod, tet = robot.visuals["arm"]
    assert (rod.geometry.kind, rod.geometry.size) == ("cylinder", (0.03, 0.5))   # (radius, length)
    assert rod.rgba == (0.2, 0.4, 0.6, 1.0)                # inline colour
    assert (tet.geometry.kind, tet.geometry.filename, tet.geometry.scale) == \
        ("mesh", "package://sampler_pkg/meshes/tet.stl", (2.0, 2.0, 2.0))
    assert tet.rgba is None and robot.visuals["empty"] == ()
    assert robot.inertias["hand"][0] == 2.0
    assert robot.collisions["tool"][0].geometry.size == (0.01, 0.02, 0.03)
    # the same from the XML text
    assert read_visuals(URDF).visuals["arm"] == robot.visuals["arm"]


def test_rpy_is_urdfs_fixed_axis_roll_pitch_yaw():
    rpy = (0.3, -0.4, 0.5)
    np.testing.assert_allclose(rpy_matrix(rpy), Rotation.from_euler("xyz", rpy).as_matrix(), atol=1e-15)


def test_mesh_names_resolve_from_package_file_and_relative_paths(sampler, tmp_path, monkeypatch):
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    tet = (sampler.parent.parent / "meshes" / "tet.stl").resolve()
    base = sampler.parent
    # package://: a folder named like the package above the URDF
    assert resolve_mesh("package://sampler_pkg/meshes/tet.stl", base) == tet
    assert resolve_mesh("package:///sampler_pkg/meshes/tet.stl", base) == tet      # as Pinocchio reads it
    assert resolve_mesh("package://sampler_pkg/meshes/none.stl", base) is None
    assert resolve_mesh("package://other_pkg/meshes/tet.stl", base) is None
    # given package folders: a mapping, the package folder itself, or a folder holding it
    elsewhere = tmp_path / "elsewhere"
    assert resolve_mesh("package://other_pkg/meshes/tet.stl", elsewhere,
                        {"other_pkg": sampler.parent.parent}) == tet
    assert resolve_mesh("package://sampler_pkg/meshes/tet.stl", elsewhere, [tmp_path / "ws"]) == tet
    assert resolve_mesh("package://sampler_pkg/meshes/tet.stl", elsewhere, [sampler.parent.parent]) == tet
    assert resolve_mesh("package://sampler_pkg/meshes/tet.stl", base, [elsewhere]) is None   # given: only those
    # ROS_PACKAGE_PATH and AMENT_PREFIX_PATH (share/<pkg>)
    assert resolve_mesh("package://sampler_pkg/meshes/tet.stl", elsewhere) is None
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path / "ws"))
    assert resolve_mesh("package://sampler_pkg/meshes/tet.stl", elsewhere) == tet
    monkeypatch.delenv("ROS_PACKAGE_PATH")
    (tmp_path / "prefix" / "share").mkdir(parents=True)
    (tmp_path / "prefix" / "share" / "sampler_pkg").symlink_to(sampler.parent.parent)
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path / "prefix"))
    assert resolve_mesh("package://sampler_pkg/meshes/tet.stl", elsewhere) == tet
    # file:// and relative paths
    assert resolve_mesh(tet.as_uri(), elsewhere) == tet
    assert resolve_mesh("../meshes/tet.stl", base) == tet
    assert resolve_mesh(str(tet), elsewhere) == tet
    assert resolve_mesh("meshes/tet.stl", base) is None


def test_scene_shapes_poses_and_a_missing_mesh(sampler):
    N, O, frames, points, qs = forward_kinematics(sampler)
    with pytest.warns(MeshFileWarning) as caught:
        scene = scene_from_urdf(sampler, frames, points, N, O)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2, messages
    assert "link 'hand'" in messages[0] and "'package://sampler_pkg/meshes/missing.stl' was not found" in messages[0]
    assert "link 'tool'" in messages[1] and "'meshes/tool.dae' was not found" in messages[1]
    items = {vf.name: vf for vf in scene.visualization_frames}
    assert list(items) == ["base", "base#2", "arm", "arm#2", "hand", "hand#2", "tool"]
    assert items["base"].shape == Box(0.4, 0.5, 0.6, color="#0000ff")
    assert items["base#2"].shape == Sphere(0.05, color="#ff8000", opacity=0.5)
    assert items["arm"].shape == Cylinder(0.5, 0.03, color="#336699")
    tet = items["arm#2"].shape
    assert isinstance(tet, Mesh) and tet.format == "stl" and tet.scale == (2.0, 2.0, 2.0)
    assert tet.filename == (sampler.parent.parent / "meshes" / "tet.stl").resolve()
    assert isinstance(items["hand#2"].shape, Mesh)          # the relative path
    # the boxes drawn instead: from the inertia (a uniform box with those moments: edges
    # a^2 = 6 (Iyy + Izz - Ixx) / m, ...) and from the collision box
    hand = items["hand"].shape
    assert isinstance(hand, Box)
    I, m = np.array([0.0410, 0.0250, 0.0233]), 2.0
    edges = np.sqrt(6 * (I.sum() - 2 * I) / m)
    np.testing.assert_allclose(sorted([hand.width, hand.height, hand.depth]), sorted(edges), rtol=1e-12)
    assert m / 12 * (edges[1] ** 2 + edges[2] ** 2) == pytest.approx(I[0])
    assert items["tool"].shape == Box(0.01, 0.02, 0.03, color="#b2b2b2")
    assert set(scene.points) == {"base", "arm", "hand", "tool", "empty"}
    # poses along a made-up motion against numpy: r = p_L + R_L xyz, R = R_L Rz Ry Rx (Rx(pi/2)
    # for cylinders); the stand-in boxes at the collision's origin and at the centre of mass
    k = 4
    q = np.random.default_rng(1).normal(size=(k, len(qs)))
    traj = SimpleNamespace(t=np.linspace(0, 1, k), q=q, u=np.zeros((k, 0)), coordinates=tuple(qs),
                           speeds=(), constants={})
    samples = scene_samples(traj, scene)
    robot = read_visuals(sampler)
    for i in range(k):
        poses = numeric_link_poses(sampler, dict(zip((str(s.func)[2:] for s in qs), q[i], strict=True)))
        for f, vf in enumerate(scene.visualization_frames):
            link, _, number = vf.name.partition("#")
            visual = robot.visuals[link][int(number or 1) - 1]
            p, R = poses[link]
            xyz, rpy = {"tool": ((0, 0, 0.05), (0.2, 0, 0)),
                        "hand": ((0.01, 0, 0.02), (0, 0, 0.3))}.get(vf.name, (visual.xyz, visual.rpy))
            R_visual = R @ Rotation.from_euler("xyz", rpy).as_matrix()
            if isinstance(vf.shape, Cylinder):
                R_visual = R_visual @ Rotation.from_euler("x", np.pi / 2).as_matrix()
            np.testing.assert_allclose(samples["pose"][i, f, :3], p + R @ np.array(xyz), atol=1e-12)
            got = Rotation.from_quat(samples["pose"][i, f, 3:7]).as_matrix()
            if vf.name == "hand":       # principal axes = the inertial frame's, in some order:
                # the box's edges along the inertial frame's x, y, z are the analytic ones
                sizes = np.array([hand.width, hand.height, hand.depth])
                along = np.abs(R_visual.T @ got) @ sizes
                np.testing.assert_allclose(along, edges, rtol=1e-12)
                assert np.linalg.det(got) == pytest.approx(1.0)
            else:
                np.testing.assert_allclose(got, R_visual, atol=1e-12, err_msg=vf.name)
        for j, name in enumerate(samples["names"]):
            np.testing.assert_allclose(samples["points"][i, j], poses[name][0], atol=1e-12)


def test_page_embeds_each_mesh_file_once_and_compressed(sampler):
    N, O, frames, points, qs = forward_kinematics(sampler)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MeshFileWarning)
        scene = scene_from_urdf(sampler, frames, points, N, O)
    traj = SimpleNamespace(t=np.array([0.0]), q=np.zeros((1, len(qs))), u=np.zeros((1, 0)),
                           coordinates=tuple(qs), speeds=(), constants={})
    page = view(traj, scene)
    text = page.to_html()
    data = json.loads(re.search(r'<script type="application/json" id="symbody-data">(.*?)</script>',
                                text, re.S).group(1))
    assert len(data["meshes"]) == 1                   # arm#2 and hand#2 share tet.stl
    entry = data["meshes"][0]
    raw = (sampler.parent.parent / "meshes" / "tet.stl").read_bytes()
    assert (entry["file"], entry["format"], entry["size"]) == ("tet.stl", "stl", len(raw))
    assert zlib.decompress(base64.b64decode(entry["data"])) == raw
    by_name = {f["name"]: f for f in data["frames"]}
    assert by_name["arm#2"]["mesh"] == by_name["hand#2"]["mesh"] == 0
    assert by_name["arm#2"]["scale"] == [2.0, 2.0, 2.0] and by_name["hand#2"]["scale"] == [1.0, 1.0, 1.0]
    assert "the STL, OBJ and Collada loaders" in text and "fflate (MIT" in text     # the mesh bundle
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:""", text)
    with pytest.raises(InputError, match="max_mesh_bytes"):
        view(traj, scene, max_mesh_bytes=100)


def test_pages_without_meshes_keep_the_small_bundle():
    N, O = ReferenceFrame("N"), Point("O")
    q = dynamicsymbols("q")
    A = N.orientnew("A", "Axis", (q, N.z))
    from symbody.presentation import Scene, VisualizationFrame

    scene = Scene(N, O, VisualizationFrame("a", A, O, Box(1, 1, 1)))
    traj = SimpleNamespace(t=np.array([0.0]), q=np.zeros((1, 1)), u=np.zeros((1, 0)), coordinates=(q,),
                           speeds=(), constants={})
    text = view(traj, scene).to_html()
    assert "the STL, OBJ and Collada loaders" not in text and '"meshes":[]' in text


def test_bad_input_is_refused_naming_the_culprit(sampler, tmp_path):
    N, O, frames, points, _ = forward_kinematics(sampler)
    del frames["arm"]
    with pytest.raises(InputError, match="link 'arm' is not in link_frames"):
        scene_from_urdf(sampler, frames, points, N, O)
    with pytest.raises(InputError, match="does not exist"):
        read_visuals(tmp_path / "nope.urdf")
    with pytest.raises(InputError, match=r"link 'a' <visual> 0: <box size> must be 3 positive"):
        read_visuals('<robot name="r"><link name="a"><visual><geometry><box size="1 -1 1"/></geometry>'
                     "</visual></link></robot>")
    with pytest.raises(InputError, match="unknown geometry <cone>"):
        read_visuals('<robot name="r"><link name="a"><visual><geometry><cone/></geometry>'
                     "</visual></link></robot>")
    # a capsule (not URDF's standard, read for ground contact) needs its radius and length
    with pytest.raises(InputError, match="'length'"):
        read_visuals('<robot name="r"><link name="a"><visual><geometry><capsule radius="1"/></geometry>'
                     "</visual></link></robot>")
    with pytest.raises(InputError, match="not well-formed"):
        read_visuals("<robot><link></robot>")
    with pytest.raises(InputError, match=r"reads \.stl, \.obj, \.dae files, not '\.mesh'"):
        Mesh("arm.mesh")
    with pytest.raises(InputError, match="scale must be 3 finite non-zero"):
        Mesh("arm.stl", (1, 0, 1))
    with pytest.raises(InputError, match="a rotation matrix must be 3x3, got 2x2"):
        VisualizationFrame("a", sm.eye(2), Point("P"), Box(1, 1, 1))


@needs_robots
def test_a_real_robot_scene_matches_numpy_forward_kinematics():
    """so_arm's SO-100: STL meshes through package://, visual origins with rpy."""
    urdf = ROBOTS / "so_arm_description" / "urdf" / "so100.urdf"
    N, O, frames, points, qs = forward_kinematics(urdf)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MeshFileWarning)       # every mesh is found
        scene = scene_from_urdf(urdf, frames, points, N, O)
    robot = read_visuals(urdf)
    meshes = [vf for vf in scene.visualization_frames if isinstance(vf.shape, Mesh)]
    assert len(meshes) == sum(len(v) for v in robot.visuals.values()) and all(m.shape.filename.is_file()
                                                                              for m in meshes)
    k = 2
    q = np.random.default_rng(2).uniform(-1, 1, size=(k, len(qs)))
    traj = SimpleNamespace(t=np.linspace(0, 1, k), q=q, u=np.zeros((k, 0)), coordinates=tuple(qs),
                           speeds=(), constants={})
    samples = scene_samples(traj, scene)
    for i in range(k):
        poses = numeric_link_poses(urdf, dict(zip((str(s.func)[2:] for s in qs), q[i], strict=True)))
        for f, vf in enumerate(scene.visualization_frames):
            link, _, number = vf.name.partition("#")
            visual = robot.visuals[link][int(number or 1) - 1]
            p, R = poses[link]
            np.testing.assert_allclose(samples["pose"][i, f, :3], p + R @ visual.xyz, atol=1e-12)
            R_visual = R @ Rotation.from_euler("xyz", visual.rpy).as_matrix()
            np.testing.assert_allclose(Rotation.from_quat(samples["pose"][i, f, 3:7]).as_matrix(), R_visual,
                                       atol=1e-12, err_msg=vf.name)
